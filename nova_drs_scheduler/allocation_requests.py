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

#: Exact types returned as they are; subclasses take the generic path.
_IMMUTABLE = frozenset((str, int, float, bool, type(None)))


def _copy_tree(value: Any, memo: dict) -> Any:
    # Leaves are tested inline: most values are, and a call costs more.
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _IMMUTABLE
                else _copy_tree(item, memo) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _IMMUTABLE else _copy_tree(item, memo)
                for item in value]
    if kind in _IMMUTABLE:
        return value
    # Not JSON after all: let the generic copy deal with it.
    return copy.deepcopy(value, memo)


class AllocationRequest(dict):
    """A placement allocation request whose deep copy skips the memo."""

    def __deepcopy__(self, memo: dict) -> 'AllocationRequest':
        copied = AllocationRequest(self)
        for key, item in copied.items():
            if type(item) not in _IMMUTABLE:
                copied[key] = _copy_tree(item, memo)
        return copied


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
