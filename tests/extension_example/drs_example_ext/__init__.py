"""An example third-party extension of nova-drs-scheduler."""
