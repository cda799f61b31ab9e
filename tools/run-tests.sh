#!/usr/bin/env bash
# Run lint, unit, functional and end-to-end tests on a fresh machine.
#
# Needs only python3, pip and apt: it bootstraps tox into .tox/bootstrap and
# lets tox build the test virtualenvs from constraints/ (one tested set per
# Nova release).  By default it runs `tox -e pep8,py3,functional,
# functional-nova33,e2e`: everything on the newest Nova, and the functional
# suite on Nova 33 (2026.1); E2E=0 leaves out the multi-process deployment
# test (about 6 minutes, needs root for its Debian packages).
# Extra arguments go to tox instead, e.g.
# `tools/run-tests.sh -e py3 -- tests.unit.filters`.
# The last line sums the totals of every environment run (stestr's, and the
# deployment test's own): "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

tools/bootstrap-tox.sh
boot=.tox/bootstrap

# Real servers some functional tests start on 127.0.0.1.
tools/install-test-servers.sh

if [ $# -eq 0 ]; then
    envs=pep8,py3,functional,functional-nova33
    [ "${E2E:-1}" != 0 ] && envs=$envs,e2e
    set -- -e "$envs"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$boot/bin/tox" "$@" 2>&1 | tee "$log" || status=$?
passed=$(awk '/^ - Passed: /{n+=$3} /^[0-9]+ passed, [0-9]+ failed/{n+=$1}
              END{print n+0}' "$log")
failed=$(awk '/^ - Failed: /{n+=$3} /^[0-9]+ passed, [0-9]+ failed/{n+=$3}
              END{print n+0}' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1  # tox failed outside the test runner (lint, install, ...)
fi
echo "$passed passed, $failed failed"
exit "$status"
