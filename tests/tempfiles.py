"""Throw-away files for tests, removed at the test's cleanup."""

import os
import tempfile


def write(test, text: str, suffix: str = '') -> str:
    """Write ``text`` to a new temporary file; returns its path."""
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, 'w') as handle:
        handle.write(text)
    test.addCleanup(os.unlink, path)
    return path
