"""nova-compute, with ``tools/e2e/e2e/virt`` on ``nova.virt``'s path.

Nova loads ``compute_driver`` as ``nova.virt.<compute_driver>`` and
nothing else, so an out-of-tree driver must live inside ``nova.virt``.
Rather than copy a file into the installed Nova, this launcher appends
our directory to the package's search path and runs Nova's own
``nova-compute`` main: ``compute_driver = filecpu.FileCPUDriver``.
"""

import os

VIRT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'virt')


def main():
    # nova.cmd.compute monkey-patches first thing, as nova-compute does,
    # so it must be imported before anything else of Nova.
    from nova.cmd import compute  # noqa: I001
    import nova.virt
    nova.virt.__path__.append(VIRT_DIR)
    compute.main()


if __name__ == '__main__':
    main()
