"""A HostManager that caches rows, not decisions; see ``manager``."""

from nova_drs_scheduler.host_manager.manager import CachingHostManager

__all__ = ['CachingHostManager']
