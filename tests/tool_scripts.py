"""Importing a script of tools/ in a test (they are not a package)."""

import importlib
import os
import sys

TOOLS = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'tools')


def load(name: str):
    """The module of ``tools/<name>.py``."""
    sys.path.insert(0, TOOLS)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(TOOLS)
