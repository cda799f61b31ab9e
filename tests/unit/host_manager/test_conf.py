"""The [drs_host_cache] options."""

from nova import test
from oslo_config import cfg

from nova_drs_scheduler import conf
from nova_drs_scheduler.conf import host_cache


class HostCacheOptionsTest(test.NoDBTestCase):

    def test_registered_with_defaults(self):
        group = conf.CONF.drs_host_cache
        self.assertEqual(5.0, group.max_staleness)
        self.assertEqual(10, group.timestamp_margin)
        self.assertEqual(600, group.full_refresh_interval)

    def test_listed_for_the_sample_config(self):
        groups = {getattr(group, 'name', group): [opt.name for opt in opts]
                  for group, opts in conf.list_opts()}
        self.assertEqual(
            ['max_staleness', 'timestamp_margin', 'full_refresh_interval',
             'background_refresh_interval', 'gc_collect_interval'],
            groups['drs_host_cache'])

    def test_bounds(self):
        local = cfg.ConfigOpts()
        for group, opts in host_cache.list_opts().items():
            local.register_opts(opts, group=group)
        for name, value in (('max_staleness', -1),
                            ('max_staleness', 301),
                            ('timestamp_margin', -1),
                            ('full_refresh_interval', -1),
                            ('gc_collect_interval', -1),
                            ('background_refresh_interval', -1),
                            ('background_refresh_interval', 301)):
            self.assertRaises(ValueError, local.set_override, name, value,
                              group='drs_host_cache')
