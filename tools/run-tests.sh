#!/usr/bin/env bash
# Run lint, unit and functional tests on a fresh machine.
#
# Needs only python3, pip and apt: it bootstraps tox into .tox/bootstrap and
# lets tox build the test virtualenv from constraints.txt.  Extra arguments
# go to tox, e.g. `tools/run-tests.sh -e py3 -- tests.unit.filters`.
# The last line sums the stestr totals of every environment run:
# "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

tools/bootstrap-tox.sh
boot=.tox/bootstrap

# Real servers some functional tests start on 127.0.0.1.
tools/install-test-servers.sh

if [ $# -eq 0 ]; then
    set -- -e pep8,py3,functional
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$boot/bin/tox" "$@" 2>&1 | tee "$log" || status=$?
passed=$(awk '/^ - Passed: /{n+=$3} END{print n+0}' "$log")
failed=$(awk '/^ - Failed: /{n+=$3} END{print n+0}' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1  # tox failed outside the test runner (lint, install, ...)
fi
echo "$passed passed, $failed failed"
exit "$status"
