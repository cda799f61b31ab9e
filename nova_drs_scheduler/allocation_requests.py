"""Allocation requests that are cheap to deep-copy.

For every request, Nova's scheduler deep-copies the allocation requests of
every candidate host before filtering, so that filters may prune a host's
candidates without touching the others'. ``copy.deepcopy`` keeps a memo of
every container it visits, which makes it the single largest cost of a
request at 1000 hosts once host states are cached. Allocation requests
are JSON from placement: trees of dicts, lists and immutable scalars that
share no parts, so a plain recursive copy yields the same result.
"""

import copy
from typing import Any

_IMMUTABLE = (str, int, float, bool, type(None))


def _copy_tree(value: Any, memo: dict) -> Any:
    if isinstance(value, _IMMUTABLE):
        return value
    if type(value) is dict:
        return {key: _copy_tree(item, memo) for key, item in value.items()}
    if type(value) is list:
        return [_copy_tree(item, memo) for item in value]
    # Not JSON after all: let the generic copy deal with it.
    return copy.deepcopy(value, memo)


class AllocationRequest(dict):
    """A placement allocation request whose deep copy skips the memo."""

    def __deepcopy__(self, memo: dict) -> 'AllocationRequest':
        return AllocationRequest(
            {key: _copy_tree(item, memo) for key, item in self.items()})


class ReportClient:
    """Nova's report client, returning :class:`AllocationRequest` objects.

    Everything else is delegated to the wrapped client.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get_allocation_candidates(self, context: Any, resources: Any) -> Any:
        result = self._client.get_allocation_candidates(context, resources)
        if not result or not result[0]:
            return result
        requests, summaries, version = result
        return ([AllocationRequest(r) for r in requests], summaries,
                version)
