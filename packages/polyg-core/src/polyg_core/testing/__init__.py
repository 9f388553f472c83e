"""Test support shipped with polyg-core: pytest fixtures for a real embedded FalkorDB.

Import the fixtures into a conftest with `from polyg_core.testing.fixtures import *`.
"""
