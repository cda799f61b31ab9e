"""The rebalancing benchmark (tools/bench_rebalance.py) on the simulator.

- :mod:`.watcher_grid`: Watcher's rows, by grid;
- :mod:`.runs`: one strategy on one seed, and reusing earlier runs;
- :mod:`.checks`: means over the seeds and the checks against Watcher;
- :mod:`.markdown`: the tables and the verdict as Markdown;
- :mod:`.plot`: unserved demand against migrations, a plot per trace;
- :mod:`.scale`: planning time as the cloud grows.
"""
