"""DRSPoolFilter and the drs_pool: extra-spec validator."""

from nova import exception
from nova import test
from nova.api.validation.extra_specs import validators

from nova_drs_scheduler.filters import pool
from tests.unit import fakes


class DRSPoolFilterTest(test.NoDBTestCase):

    def passes(self, extra_specs, *metadata):
        return pool.DRSPoolFilter().host_passes(
            fakes.host(aggregates=metadata), fakes.spec(
                extra_specs=extra_specs))

    def test_flavor_without_pool_specs_passes_anywhere(self):
        self.assertTrue(self.passes({}))
        self.assertTrue(self.passes({'hw:cpu_policy': 'dedicated',
                                     'aggregate_instance_extra_specs:x': 'y'},
                                    {'pool': 'gold'}))

    def test_missing_metadata_fails(self):
        self.assertFalse(self.passes({'drs_pool:pool': 'gold'}))
        self.assertFalse(self.passes({'drs_pool:pool': 'gold'},
                                     {'other': 'gold'}))

    def test_literal_match(self):
        self.assertTrue(self.passes({'drs_pool:pool': 'gold'},
                                    {'pool': 'gold'}))
        self.assertFalse(self.passes({'drs_pool:pool': 'gold'},
                                     {'pool': 'silver'}))

    def test_comma_separated_metadata_values(self):
        self.assertTrue(self.passes({'drs_pool:pool': 'gold'},
                                    {'pool': 'silver, gold'}))

    def test_any_aggregate_of_the_host_may_match(self):
        self.assertTrue(self.passes({'drs_pool:pool': 'gold'},
                                    {'pool': 'silver'}, {'pool': 'gold'}))

    def test_operators(self):
        cases = [
            ('s== gold', 'gold', True), ('s== gold', 'golden', False),
            ('s!= gold', 'silver', True),
            ('<in> old', 'gold', True), ('<in> xyz', 'gold', False),
            ('<or> gold <or> silver', 'silver', True),
            ('<or> gold <or> silver', 'bronze', False),
            ('>= 4', '8', True), ('>= 4', '2', False),
            ('== 4', '4', True),
        ]
        for requirement, value, expected in cases:
            self.assertEqual(
                expected, self.passes({'drs_pool:tier': requirement},
                                      {'tier': value}),
                (requirement, value))

    def test_every_requirement_must_match(self):
        specs = {'drs_pool:tier': 'gold', 'drs_pool:zone': 'a'}
        self.assertTrue(self.passes(specs, {'tier': 'gold', 'zone': 'a'}))
        self.assertFalse(self.passes(specs, {'tier': 'gold', 'zone': 'b'}))

    def test_runs_once_per_request(self):
        self.assertTrue(pool.DRSPoolFilter.run_filter_once_per_request)


class PoolExtraSpecValidatorTest(test.NoDBTestCase):

    def test_drs_pool_keys_are_accepted(self):
        validators.validate('drs_pool:tier', 'gold')
        validators.validate('drs_pool:tier', '<or> gold <or> silver')

    def test_malformed_drs_pool_key_is_rejected(self):
        self.assertRaises(exception.ValidationError,
                          validators.validate, 'drs_pool:', 'gold')
        self.assertRaises(exception.ValidationError,
                          validators.validate, 'drs_pool:a b', 'gold')
