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

boot=.tox/bootstrap
if [ ! -x "$boot/bin/tox" ]; then
    if ! python3 -m venv "$boot" 2>/dev/null; then
        rm -rf "$boot"
        echo "python3 venv module missing; installing python3-venv" >&2
        apt-get update -qq && apt-get install -y -qq python3-venv
        python3 -m venv "$boot"
    fi
    "$boot/bin/pip" install -q --upgrade pip
    "$boot/bin/pip" install -q -c constraints.txt tox
fi

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
