"""The line operators put in nova.conf loads every filter of the package."""

import testtools
from nova.scheduler import filters as nova_filters

from nova_drs_scheduler import filters


class AllFiltersTest(testtools.TestCase):

    def test_available_filters_line_loads_every_filter(self):
        classes = nova_filters.HostFilterHandler().get_matching_classes(
            ['nova_drs_scheduler.filters.all_filters'])
        self.assertEqual(
            ['AggregateCoreFilter', 'AggregateDiskFilter',
             'AggregateRamFilter', 'CoreFilter', 'DRSPoolFilter',
             'DiskFilter', 'RamFilter', 'UtilizationFilter'],
            sorted(cls.__name__ for cls in classes))
        self.assertIn(filters.DRSPoolFilter, classes)
