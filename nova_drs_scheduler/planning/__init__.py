"""The rebalancer's decisions: a snapshot in, a plan with its reasons out.

Pure: no Nova, no database, no clock, no network, no oslo.config.  The
live leader (:mod:`nova_drs_scheduler.rebalance`), the CLI's dry runs and
the simulator build a snapshot their own way and call the same code;
``tests/unit/test_layers.py`` holds this package to it.
"""
