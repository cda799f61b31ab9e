"""Shared settings and strategies of the fuzz tests.

Each property runs at most 100 examples with no deadline, so the unit suite
stays fast and never fails because the machine is busy.
"""

import hypothesis
from hypothesis import strategies as st
from nova import test

from tests.unit import fakes

FUZZ = hypothesis.settings(max_examples=100, deadline=None)

#: Anything JSON can hold, kept small.
JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers()
    | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)

#: Strings an operator or a broken exporter might write where a number is
#: expected, plus arbitrary text.
NUMBERISH = st.one_of(
    st.sampled_from(['', ' ', 'nan', 'NaN', 'inf', '-inf', '1e309', '0',
                     '-1', '0.5', '100', '101', 'true', 'false', '1,2',
                     '<or>', '>= 3', 's== a', '<in>', '<all-in> a']),
    st.floats().map(repr), st.integers().map(str), st.text(max_size=12))


class FuzzTestCase(test.NoDBTestCase):
    """Forget log-once keys per test, so warnings are not hidden."""

    def setUp(self):
        super().setUp()
        fakes.forget_logged()
