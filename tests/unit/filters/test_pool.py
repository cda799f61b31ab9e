"""DRSPoolFilter and the drs_pool: extra-spec validator."""

from nova import exception
from nova import test
from nova.api.validation.extra_specs import validators

from nova_drs_scheduler.filters import pool
from tests.unit import fakes


class DRSPoolFilterTest(fakes.LeanTestCase):

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

    def test_metadata_the_matcher_cannot_compare_is_no_match(self):
        # Fail closed: a host whose pool metadata cannot be compared with
        # the flavor's requirement must not take the flavor's servers.
        cases = [('>= 4', 'abc'), ('<= 4', 'many'), ('== 4', 'x'),
                 ('<or>', 'gold')]
        for requirement, value in cases:
            fakes.forget_logged()
            with self.assertLogs('nova_drs_scheduler.filters.pool',
                                 level='WARNING') as logs:
                for _ in range(2):
                    self.assertFalse(self.passes(
                        {'drs_pool:tier': requirement}, {'tier': value}),
                        (requirement, value))
            self.assertEqual(1, len(logs.output), logs.output)
            self.assertIn('host1', logs.output[0])
            self.assertIn('treated as no match', logs.output[0])

    def test_uncomparable_value_does_not_hide_a_matching_one(self):
        self.assertTrue(self.passes({'drs_pool:tier': '>= 4'},
                                    {'tier': 'abc, 8'}))

    def test_flavor_without_loaded_extra_specs_is_not_confined(self):
        # Like Nova's AggregateInstanceExtraSpecsFilter: a flavor whose
        # extra_specs are not loaded carries no pool requirement, and the
        # filter must not try to lazy-load them (no context here).
        request = fakes.spec()
        del request.flavor.extra_specs
        self.assertNotIn('extra_specs', request.flavor)
        state = fakes.host(aggregates=[{'tier': 'gold'}])
        self.assertTrue(pool.DRSPoolFilter().host_passes(state, request))

    def test_rebuild_is_not_refused(self):
        # A rebuild keeps the server on its host; Nova asks the filters
        # only whether the new image fits, never for pool membership.
        request = fakes.spec(extra_specs={'drs_pool:tier': 'gold'})
        request.scheduler_hints = {'_nova_check_type': ['rebuild']}
        state = fakes.host(aggregates=[{'tier': 'silver'}])
        self.assertEqual([state], list(pool.DRSPoolFilter().filter_all(
            [state], request)))
        del request.scheduler_hints
        self.assertEqual([], list(pool.DRSPoolFilter().filter_all(
            [state], request)))


class PoolExtraSpecValidatorTest(test.NoDBTestCase):

    def test_drs_pool_keys_are_accepted(self):
        validators.validate('drs_pool:tier', 'gold')
        validators.validate('drs_pool:tier', '<or> gold <or> silver')

    def test_malformed_drs_pool_key_is_rejected(self):
        self.assertRaises(exception.ValidationError,
                          validators.validate, 'drs_pool:', 'gold')
        self.assertRaises(exception.ValidationError,
                          validators.validate, 'drs_pool:a b', 'gold')
