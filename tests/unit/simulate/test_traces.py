"""Trace parsing: both formats, detection, and clear errors."""


import testtools

from nova_drs_scheduler.simulate import traces
from tests import tempfiles


class LoadTest(testtools.TestCase):

    def _file(self, text):
        return tempfiles.write(self, text, '.csv')

    def test_planetlab_with_header(self):
        path = self._file('vm,t000,t001,t002\na,10,20,30\nb,0,5,100\n')
        trace = traces.load(path)
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 0), (20, 5), (30, 100)), trace.steps)
        self.assertEqual(300, trace.step_seconds)

    def test_planetlab_without_header(self):
        trace = traces.load(self._file('a,10,20\nb,1,2\n'))
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 1), (20, 2)), trace.steps)

    def test_generic_with_index_column(self):
        path = self._file('time,a,b\n0,10,1\n300,20,2\n600,30,3\n')
        trace = traces.load(path, step_seconds=60)
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 1), (20, 2), (30, 3)), trace.steps)
        self.assertEqual(60, trace.step_seconds)

    def test_generic_without_index_column(self):
        trace = traces.load(self._file('a,b\n10,1\n20,2\n'))
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 1), (20, 2)), trace.steps)

    def test_forced_format_overrides_detection(self):
        # VM names that look like numbers: only the user can tell.
        path = self._file('1,2\n10,20\n')
        self.assertEqual(('1', '2'),
                         traces.load(path, fmt='generic').names)
        self.assertEqual(('1', '10'), traces.load(path).names)

    def test_head(self):
        trace = traces.load(self._file('a,1,2,3\n'))
        self.assertEqual(((1,), (2,)), trace.head(2).steps)

    def _error(self, text, fmt='auto'):
        return str(self.assertRaises(traces.TraceError, traces.load,
                                     self._file(text), fmt))

    def test_not_a_number(self):
        message = self._error('vm,t0,t1\na,10,x\n')
        self.assertIn(":2: 'x' is not a number", message)

    def test_out_of_range(self):
        self.assertIn("'101' is not a percentage",
                      self._error('vm,t0\na,101\n'))
        self.assertIn("'-1' is not a percentage",
                      self._error('a,b\n1,-1\n'))
        self.assertIn("'nan' is not a percentage", self._error('a,nan\n'))

    def test_ragged_rows(self):
        self.assertIn(':3: 1 samples, expected 2',
                      self._error('vm,t0,t1\na,1,2\nb,1\n'))
        self.assertIn(':3: 3 columns, the header has 2',
                      self._error('a,b\n1,2\n1,2,3\n'))

    def test_duplicate_vm(self):
        self.assertIn("VM 'a' appears twice", self._error('a,1\na,2\n'))

    def test_empty_inputs(self):
        self.assertIn('empty file', self._error(''))
        self.assertIn('no sample rows', self._error('a,b\n'))
        self.assertIn('no VM rows', self._error('vm,t0\n', 'planetlab'))
        self.assertIn('one-column', self._error('a\n1\n'))

    def test_missing_file_and_bad_format(self):
        error = self.assertRaises(traces.TraceError, traces.load,
                                  '/nonexistent/trace.csv')
        self.assertIn('/nonexistent/trace.csv', str(error))
        error = self.assertRaises(traces.TraceError, traces.load,
                                  '/dev/null', 'xml')
        self.assertIn("unknown trace format 'xml'", str(error))


class SyntheticTest(testtools.TestCase):

    def test_reproducible_and_in_range(self):
        first = traces.synthetic(20, 50, seed=3)
        self.assertEqual(first, traces.synthetic(20, 50, seed=3))
        self.assertNotEqual(first, traces.synthetic(20, 50, seed=4))
        self.assertEqual(50, len(first.steps))
        self.assertEqual(20, len(first.names))
        values = [v for step in first.steps for v in step]
        self.assertTrue(all(0 <= v <= 100 for v in values))

    def test_rejects_empty(self):
        self.assertRaises(traces.TraceError, traces.synthetic, 0, 5, 1)
