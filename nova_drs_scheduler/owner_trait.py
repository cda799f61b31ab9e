"""Nova's ``OWNER_NOVA`` request filter, answered from cached rows.

Nova 34's ``owner_nova_filter`` asks every cell database for the minimum
nova-compute service version on every scheduling request, to require the
``OWNER_NOVA`` trait once every compute is new enough. The caching host
manager holds those service rows already. When they say every compute is
new enough, the trait is required up front and Nova's filter, finding it,
returns early as it does for reschedules. In every other case (stale or
missing rows, older computes, a rebuild, PCI requests, whose request
groups the filter also marks) Nova's filter runs unchanged.  Nova 31-33
have no such filter, and nothing is added there.
"""

from typing import Any

import os_traits
from nova.scheduler import utils

from nova_drs_scheduler import compat


def require_if_all_upgraded(spec_obj: Any, host_manager: Any) -> bool:
    """Add ``OWNER_NOVA`` to the root traits; True if it did."""
    threshold = compat.owner_trait_min_compute_version()
    if threshold is None:
        return False  # This Nova has no OWNER_NOVA request filter.
    if utils.request_is_rebuild(spec_obj):
        return False  # Nova runs no request filter for a rebuild.
    if ('pci_requests' in spec_obj and spec_obj.pci_requests and
            spec_obj.pci_requests.requests):
        return False
    min_version = getattr(host_manager, 'min_compute_version', None)
    version = min_version() if min_version else None
    if version is None or version < threshold:
        return False
    spec_obj.root_required.add(os_traits.OWNER_NOVA)
    return True
