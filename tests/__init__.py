# Nothing Nova here: tests/unit and tests/functional monkey patch and
# register Nova's objects in their own __init__.py.  The simulator tests
# also run in the Watcher virtualenv (tox -e watcher), which has no Nova,
# and import tests.tempfiles through this package.
