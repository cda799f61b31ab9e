"""Any string in any of our options: valid, or a ConfigError naming it.

Each value is written into a real config file and parsed as the service
does (a fresh ``ConfigOpts``, our options registered, ``conf.validate``),
so oslo.config's own parsing and substitution are part of the test.
"""

import math
import os

import fixtures
import hypothesis
from hypothesis import strategies as st
from oslo_config import cfg

from nova_drs_scheduler import conf
from tests.unit.fuzz import base

GROUPS = ('drs', 'drs_prometheus', 'drs_host_cache')
OPTIONS = sorted((group, opt.name) for group, opts in
                 ((g.name, opts) for g, opts in conf.list_opts()
                  if g is not None and g.name in GROUPS)
                 for opt in opts)
#: One line of an ini file: no line breaks; may hold ``$``, ``%``, ``#``.
VALUE = st.one_of(
    base.NUMBERISH,
    st.text(st.characters(blacklist_categories=('Cc', 'Cs', 'Zl', 'Zp')),
            max_size=20),
    st.sampled_from(['$', '$drs', '${nope}', '$$', '%(x)s', 'http://',
                     'ftp://h', '(', '[a-', 'off', 'manual', 'automatic',
                     'static', 'prometheus', 'seed', 'reject'])).filter(
    lambda value: len((value + '.').splitlines()) == 1)


class ConfigFuzzTest(base.FuzzTestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'nova.conf')

    @base.FUZZ
    @hypothesis.given(st.sampled_from(OPTIONS), VALUE)
    def test_any_value_of_any_option(self, option, value):
        group, name = option
        with open(self.path, 'w', encoding='utf-8') as handle:
            handle.write(f'[{group}]\n{name} = {value}\n')
        parsed = cfg.ConfigOpts()
        conf.register_opts(parsed)
        parsed(['--config-file', self.path], project='nova',
               default_config_files=[])
        try:
            conf.validate(parsed)
        except conf.ConfigError as error:
            self.assertIn(f'[{group}]', str(error))
            self.assertIn(name, str(error))
            return
        # Accepted: then usable (``nan`` would pass oslo's bounds).
        accepted = parsed[group][name]
        if isinstance(accepted, float):
            self.assertTrue(math.isfinite(accepted), accepted)
