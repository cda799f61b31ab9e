"""Each branch of ``compat``, including the older releases' CI never installs.

CI runs on Nova 33 and 34 only, so the Nova 31-32 branches are checked here
against stand-ins with those releases' signatures: a branch that passes an
argument the older release lacks fails with a TypeError, as it would there.
"""

import sys
import types

import fixtures
import testtools
from nova import monkey_patch

from nova_drs_scheduler import compat

ARGV = ['nova-drs', '--config-file', '/etc/nova/nova.conf']
#: Nova 32-33's two executors, destroyed one by one.
DESTROY = ('destroy_scatter_gather_executor', 'destroy_default_executor')


class StandInTest(testtools.TestCase):
    """Replaces Nova's ``TARGET`` with a stand-in of one release's
    signature."""

    TARGET = ''

    def use(self, stand_in):
        self.useFixture(fixtures.MonkeyPatch(self.TARGET, stand_in))


class ParseArgsTest(StandInTest):

    TARGET = 'nova.config.parse_args'

    def test_prog_is_passed_where_nova_takes_it(self):
        """Nova 33-34: oslo.config looks for ``nova-drs.conf`` by name."""
        calls = []

        def parse_args(argv, default_config_files=None, configure_db=True,
                       init_rpc=True, prog=None):
            calls.append((argv, prog))

        self.use(parse_args)
        compat.parse_args(ARGV, prog='nova-drs')
        self.assertEqual([(ARGV, 'nova-drs')], calls)

    def test_no_prog_where_nova_has_none(self):
        """Nova 31-32's signature: passing ``prog`` is a TypeError there."""
        calls = []

        def parse_args(argv, default_config_files=None, configure_db=True,
                       init_rpc=True):
            calls.append(argv)

        self.use(parse_args)
        compat.parse_args(ARGV, prog='nova-drs')
        self.assertEqual([ARGV], calls)


class MonkeyPatchTest(StandInTest):

    TARGET = 'nova.monkey_patch.patch'

    def test_backend_is_the_default_where_nova_takes_one(self):
        """Nova 33-34: our default backend, the operator's override wins."""
        calls = []
        self.use(lambda backend='eventlet': calls.append(backend))
        compat.monkey_patch(backend='threading')
        self.assertEqual(['threading'], calls)

    def test_no_backend_where_nova_has_none(self):
        """Nova 32's ``patch()`` takes no argument."""
        calls = []
        self.use(lambda: calls.append('patched'))
        compat.monkey_patch(backend='threading')
        self.assertEqual(['patched'], calls)

    def test_nothing_to_call_where_importing_patched(self):
        """Nova 31 has no ``patch()``: importing the module was the patch."""
        self.use(fixtures.MonkeyPatch.delete)
        self.assertFalse(hasattr(monkey_patch, 'patch'))
        compat.monkey_patch(backend='threading')  # no AttributeError


class ResetExecutorsTest(testtools.TestCase):

    def test_nova_34_resets_every_executor(self):
        calls = []
        factory = types.ModuleType('nova.thread_pool_factory')
        factory.reset_all_executors = lambda: calls.append('all')
        self.use_thread_pool_factory(factory)
        compat.reset_executors_before_fork()
        self.assertEqual(['all'], calls)

    def test_nova_32_33_destroy_their_two_executors(self):
        calls = []
        self.use_thread_pool_factory(None)
        for name in DESTROY:
            self.useFixture(fixtures.MonkeyPatch(
                f'nova.utils.{name}', lambda name=name: calls.append(name)))
        compat.reset_executors_before_fork()
        self.assertEqual(list(DESTROY), calls)

    def test_nova_31_has_nothing_to_reset(self):
        self.use_thread_pool_factory(None)
        for name in DESTROY:
            self.useFixture(fixtures.MonkeyPatch(
                f'nova.utils.{name}', fixtures.MonkeyPatch.delete))
        compat.reset_executors_before_fork()  # no AttributeError

    def use_thread_pool_factory(self, module):
        """Nova 34's module as ``module``; None: no such module (before 34)."""
        name = 'nova.thread_pool_factory'
        self.useFixture(fixtures.MonkeyPatch(
            name, module or fixtures.MonkeyPatch.delete))
        # None in sys.modules makes importing it raise ImportError.
        if name in sys.modules:
            self.addCleanup(sys.modules.__setitem__, name, sys.modules[name])
        else:
            self.addCleanup(sys.modules.pop, name)
        sys.modules[name] = module
