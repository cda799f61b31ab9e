"""The records of a ``[drs] history_file`` (earlier releases).

The DRS database imports them once (:meth:`.store.Store.import_file`); the
file holds one JSON record per line, each version of a record appended.
"""

import json


def read(path: str) -> list[dict]:
    """The latest version of each record, oldest first.

    A line that is not a JSON object, e.g. one cut by a crash, is skipped.
    """
    records = {}
    with open(path) as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records[record.get('id')] = record
    return list(records.values())
