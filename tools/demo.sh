#!/usr/bin/env bash
# Run the nova-drs demo on a fresh machine: an in-process Nova cloud (API,
# conductor, placement, 10 fake computes, our DRS scheduler), 40 servers,
# CPU load over time, live migrations, a summary and a PNG plot.
# Needs only python3, pip and apt; extra arguments go to `nova-drs demo`
# (e.g. --trace FILE --scale 4, --short, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap-tox.sh
exec .tox/bootstrap/bin/tox -q -e demo -- "$@"
