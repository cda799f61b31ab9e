"""``nova-drs demo``: a whole Nova cloud in one process, rebalanced live."""
