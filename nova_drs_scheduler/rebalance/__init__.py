"""The live rebalancer: reads the cloud, runs the plan, records it.

The decisions are :mod:`nova_drs_scheduler.planning`'s; this package talks
to Nova, the DRS database, the metric sources and the power drivers.
"""
