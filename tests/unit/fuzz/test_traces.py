"""Trace files: any bytes give a Trace or a TraceError, nothing else."""

import csv
import io

import fixtures
import hypothesis
from hypothesis import strategies as st

from nova_drs_scheduler.simulate import traces
from tests.unit.fuzz import base

CELL = st.one_of(base.NUMBERISH, st.sampled_from(['vm', 't000', 'time']))
#: CSV text shaped like a trace often enough to reach the parsers.
CSV_TEXT = st.lists(st.lists(CELL, min_size=1, max_size=4), max_size=5).map(
    lambda rows: _csv(rows))


def _csv(rows):
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode('utf-8', 'surrogatepass')


class TraceFuzzTest(base.FuzzTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.useFixture(fixtures.TempDir()).join('trace.csv')

    @base.FUZZ
    @hypothesis.given(st.one_of(st.binary(max_size=200), CSV_TEXT),
                      st.sampled_from(traces.FORMATS))
    def test_load(self, content, fmt):
        with open(self.path, 'wb') as handle:
            handle.write(content)
        try:
            trace = traces.load(self.path, fmt)
        except traces.TraceError as error:
            self.assertIn(self.path, str(error))
            return
        self.assertTrue(trace.names and trace.steps)
        for step in trace.steps:
            self.assertEqual(len(trace.names), len(step))
            self.assertTrue(all(0 <= value <= 100 for value in step))
