"""The [drs_host_cache] options."""

from nova import test
from oslo_config import cfg

from nova_drs_scheduler import conf
from nova_drs_scheduler.conf import host_cache
from tests import tempfiles


class HostCacheOptionsTest(test.NoDBTestCase):

    def test_registered_with_defaults(self):
        group = conf.CONF.drs_host_cache
        self.assertEqual(5.0, group.max_staleness)
        self.assertEqual(10, group.timestamp_margin)
        self.assertEqual(600, group.full_refresh_interval)
        self.assertEqual(0.5, group.background_refresh_max_share)

    def test_listed_for_the_sample_config(self):
        groups = {getattr(group, 'name', group): [opt.name for opt in opts]
                  for group, opts in conf.list_opts()}
        self.assertEqual(
            ['max_staleness', 'timestamp_margin', 'full_refresh_interval',
             'background_refresh_interval', 'background_refresh_max_share',
             'gc_collect_interval'],
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
                            ('background_refresh_interval', 301),
                            ('background_refresh_max_share', 0),
                            ('background_refresh_max_share', 1.5)):
            self.assertRaises(ValueError, local.set_override, name, value,
                              group='drs_host_cache')


class MaxShareValidationTest(test.NoDBTestCase):

    def test_zero_share_stops_the_service_naming_the_option(self):
        path = tempfiles.write(
            self, '[drs_host_cache]\nbackground_refresh_max_share = 0\n',
            '.conf')
        parsed = cfg.ConfigOpts()
        conf.register_opts(parsed)
        parsed(['--config-file', path], project='nova',
               default_config_files=[])
        error = self.assertRaises(conf.ConfigError, conf.validate, parsed)
        self.assertIn('[drs_host_cache] background_refresh_max_share',
                      str(error))
