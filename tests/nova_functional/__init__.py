"""Nova's own scheduling tests, with our scheduler in place of Nova's.

Discovered by stestr like our other suites (``tox -e nova-functional``);
``load_tests`` hands it Nova's test modules that ``selection`` picks, and
``fixtures.install`` swaps the scheduler in every Nova test case of the
process. ``DRS_NOVA_TESTS_SCHEDULER=stock`` runs the same tests with
Nova's stock scheduler, to compare.
"""

# Nova's functional harness requires the monkey patch before any import.
from nova_drs_scheduler import compat ; compat.monkey_patch()  # noqa: E702,I001

from nova import objects  # noqa: E402

from tests.nova_functional import fixtures  # noqa: E402
from tests.nova_functional import selection  # noqa: E402

objects.register_all()


def load_tests(loader, standard_tests, pattern):
    fixtures.install(fixtures.mode())
    standard_tests.addTests(
        loader.loadTestsFromName('tests.nova_functional.test_harness'))
    for name in selection.modules():
        standard_tests.addTests(loader.loadTestsFromName(name))
    return standard_tests
