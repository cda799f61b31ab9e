#!/usr/bin/env bash
# Run the nova-drs demo on a fresh machine: an in-process Nova cloud (API,
# conductor, placement, 10 fake computes, our DRS scheduler), 40 servers,
# CPU load over time, live migrations, a summary and a PNG plot.
# Needs only python3, pip and apt; extra arguments go to `nova-drs demo`
# (e.g. --trace FILE --scale 6 --periods 30, --short, --json).
#
# tox only prepares the demo's virtualenv (its messages go to stderr); the
# demo then runs in it directly, so stdout carries nothing but the demo's
# own output (pure JSON with --json) and the exit code is the demo's.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap-tox.sh >&2
# One preparation at a time (parallel runs, e.g. the tests of this demo).
flock .tox/demo.lock .tox/bootstrap/bin/tox -qq -e demo --notest >&2
exec .tox/demo/bin/nova-drs demo "$@"
