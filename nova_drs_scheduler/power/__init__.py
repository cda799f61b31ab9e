"""Power drivers: switching compute hosts' machines on and off.

:mod:`.base` is the interface, :mod:`.loading` finds the driver that
``[drs] power_driver`` names. This package's ``__init__`` imports nothing,
so that the ``ipmi`` driver's helper process starts quickly.
"""
