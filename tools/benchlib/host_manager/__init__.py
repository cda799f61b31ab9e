"""The ``--measure`` modes of tools/bench_host_manager.py, one module each."""
