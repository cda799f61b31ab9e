"""Scripts of the repository's ``tools/`` directory, imported by tests."""

import importlib
import os
import sys

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))), 'tools')


def load(name: str):
    """The module ``tools/<name>.py``."""
    sys.path.insert(0, TOOLS)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(TOOLS)
