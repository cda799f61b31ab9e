"""The line operators put in nova.conf loads the package's weighers."""

import testtools
from nova.scheduler import weights as nova_weights

from nova_drs_scheduler import weighers


class AllWeighersTest(testtools.TestCase):

    def test_weight_classes_line_loads_the_weigher(self):
        classes = nova_weights.HostWeightHandler().get_matching_classes(
            ['nova_drs_scheduler.weighers.all_weighers'])
        self.assertEqual([weighers.UtilizationWeigher], classes)
