"""Multi-process end-to-end deployment test of nova-drs-scheduler.

``tools/e2e/run.py`` is the entry point; doc/e2e.md explains it.  Child
processes import ``e2e.compute`` (nova-compute with the fake virt driver
of ``virt/filecpu.py``), ``e2e.noauth`` (paste filter) and ``e2e.fakes``
(fake Glance/Neutron) with ``tools/e2e`` on PYTHONPATH.
"""
