"""Test fixtures that feed real compute-monitor metrics (now installed)."""

from nova_drs_scheduler.testing.fixtures import CPULoadFixture

__all__ = ['CPULoadFixture']
