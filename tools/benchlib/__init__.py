"""Building blocks of the benchmarks in tools/.

Nova in process (tools/bench_host_manager.py, bench_rebalance_period.py,
bench_instance_read.py); a script imports :mod:`.patching` and patches
first, then the others:

- :mod:`.patching`: eventlet or native threads, before Nova is imported;
- :mod:`.options`: the command-line options those scripts share;
- :mod:`.cloud`: Nova's databases holding N compute hosts and instances;
- :mod:`.placement_service`: placement with a provider per host;
- :mod:`.row_writer`: the rows a real cloud changes, at its pace;
- :mod:`.scheduling`: one request through a scheduler, its claim undone;
- :mod:`.clocks`, :mod:`.timeline`, :mod:`.census`: what to time and how;
- :mod:`.tables`: Markdown output;
- :mod:`.host_manager`: the five ``--measure`` modes of the host manager
  benchmark, one module each.

The rebalancing benchmark (tools/bench_rebalance.py, the simulator, no
Nova): :mod:`.rebalance`.
"""
