"""Decision records: what each period saw, chose, rejected and achieved.

One record per period, built from the planner's :class:`~.model.Plan`, so
the periodic task, ``nova-drs explain`` and the logs show the same thing.
Each record is logged as one JSON line (``nova-drs decision: {...}``); a
migration's outcome, known only later, is written into the same record and
logged again (``nova-drs outcome: {...}``).  The recent records are kept in
memory, bounded, and optionally in a JSON-lines file for other processes.
"""

import collections
import json
import os
import threading
import uuid

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler.rebalance import model

LOG = logging.getLogger(__name__)


def new_record(automation: str, config: model.PlannerConfig) -> dict:
    """An empty record for a period that starts now."""
    return {
        'id': str(uuid.uuid4()),
        'time': timeutils.utcnow().isoformat(),
        'automation': automation,
        'policy': config.policy,
        'mode': config.mode,
        'skipped': None,
        'hosts': [],
        'moves': [],
        'notes': [],
    }


def add_plan(record: dict, snapshot: model.Snapshot,
             plan: model.Plan) -> None:
    """Copy the plan (verdicts, moves with alternatives and rejections)."""
    record.update(plan.to_dict())
    record['notes'] = list(record['notes'])
    record['inflight'] = {'total': snapshot.inflight_total,
                          'by_host': dict(snapshot.inflight_by_host)}
    record['blocked'] = {inst.uuid: inst.blocked
                         for inst in snapshot.instances if inst.blocked}
    for move in record['moves']:
        move['outcome'] = {'status': 'planned'}


def set_outcome(record: dict, instance: str, outcome: dict) -> bool:
    """Write ``outcome`` into the record's move of ``instance``."""
    for move in record['moves']:
        if move['instance'] == instance:
            move['outcome'] = dict(outcome,
                                   time=timeutils.utcnow().isoformat())
            return True
    return False


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def unfinished(records: list[dict]) -> list[tuple[str, str, str, str]]:
    """``(record id, instance, migration uuid, started at)`` of the moves
    whose outcome is still ``started``."""
    return [(rec['id'], move['instance'], move['outcome']['migration'],
             move['outcome'].get('time') or rec['time'])
            for rec in records for move in rec.get('moves', ())
            if move.get('outcome', {}).get('status') == 'started' and
            move['outcome'].get('migration')]


class History:
    """The recent records, newest last, bounded; thread-safe.

    With a file, a new History starts from the records it holds, so that a
    restarted scheduler can still complete them.
    """

    def __init__(self, size: int, path: str | None = None):
        self._records = collections.OrderedDict()
        self._size = size
        self._path = path
        self._lock = threading.Lock()
        if path and os.path.exists(path):
            try:
                kept = read_file(path)[-size:]
            except OSError as exc:
                LOG.warning('Cannot read the DRS history file %s: %s',
                            path, exc)
                kept = []
            for record in kept:
                self._records[record['id']] = record

    def add(self, record: dict) -> None:
        LOG.info('nova-drs decision: %s', _dumps(record))
        with self._lock:
            self._records[record['id']] = record
            while len(self._records) > self._size:
                self._records.popitem(last=False)
            self._persist(record)

    def set_outcome(self, record_id: str, instance: str,
                    outcome: dict) -> dict | None:
        """Record a move's outcome; returns the updated record, if kept."""
        with self._lock:
            record = self._records.get(record_id)
            if record is None or not set_outcome(record, instance, outcome):
                return None
            LOG.info('nova-drs outcome: %s', _dumps(
                {'record': record_id, 'instance': instance,
                 'outcome': outcome}))
            self._persist(record)
            return record

    def recent(self, limit: int | None = None) -> list[dict]:
        with self._lock:
            records = list(self._records.values())
        return records[-limit:] if limit else records

    def get(self, record_id: str) -> dict | None:
        with self._lock:
            return self._records.get(record_id)

    def _persist(self, record: dict) -> None:
        """Append to the file; rewrite it from memory when it doubles."""
        if not self._path:
            return
        try:
            with open(self._path, 'a') as handle:
                handle.write(_dumps(record) + '\n')
            with open(self._path) as handle:
                lines = sum(1 for _ in handle)
            if lines > 2 * self._size:
                tmp = self._path + '.tmp'
                with open(tmp, 'w') as handle:
                    for kept in self._records.values():
                        handle.write(_dumps(kept) + '\n')
                os.replace(tmp, self._path)
        except OSError as exc:
            LOG.warning('Cannot write the DRS history file %s: %s',
                        self._path, exc)


def read_file(path: str) -> list[dict]:
    """Records from a history file, the latest version of each, oldest first.

    For tools in another process (the CLI); a line that is not valid JSON,
    e.g. one cut by a crash, is skipped.
    """
    records = {}
    with open(path) as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            records[record.get('id')] = record
    return list(records.values())
