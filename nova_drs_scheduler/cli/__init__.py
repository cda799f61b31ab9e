"""The ``nova-drs`` command line.

:mod:`.main` parses the arguments and dispatches to one module per
subcommand group; :mod:`.errors` holds the exit codes.  This package
module imports nothing, so the simulator's own command (which uses
:mod:`.errors`) does not load the whole command line.
"""
