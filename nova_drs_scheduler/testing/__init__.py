"""Test DRS inside Nova's functional harness.

Installed with the package; ``pip install nova-drs-scheduler[testing]``
pulls the harness's own dependencies.

Import the submodules, not this package's names, and only after Nova's
monkey patch, as Nova's own functional tests do: the first lines of your
test package's ``__init__.py`` must be::

    from nova_drs_scheduler import compat ; compat.monkey_patch()

- :mod:`.base`: ``DRSTestCase``, Nova's ``ProviderUsageBaseTestCase``
  (real API, conductor, in-process placement, fake-driver computes) with
  our scheduler started in it, loads fed, periods run and migrations
  waited for;
- :mod:`.fixtures`: the pieces on their own, for a base class of your own;
- :mod:`.records`: reading decision records (schema in doc/testing.md).
"""
