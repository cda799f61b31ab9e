#!/usr/bin/env bash
# Run lint, unit, functional and end-to-end tests on a fresh machine.
#
# Needs only python3, pip and apt: it bootstraps tox into .tox/bootstrap and
# lets tox build the test virtualenvs from constraints/ (one tested set per
# Nova release).  By default it runs `tox -e pep8,py3`, the functional
# suite on Nova 33 (2026.1) but the demo tests, which run the newest Nova
# whatever the env (tests/functional/nova33-exclude.txt says why), the
# whole functional suite on the newest Nova, Nova's own scheduling tests
# with our scheduler in place of Nova's (`tox -e nova-functional`,
# doc/testing.md), then `tox -e e2e`.  E2E=0
# leaves out the multi-process deployment test (about 7 minutes, needs
# root for its Debian packages).  Extra arguments go to one tox run
# instead, e.g. `tools/run-tests.sh -e py3 -- tests.unit.filters`.
# Failed tests are listed again at the end, then the last line sums the totals of every environment run (stestr's, and the
# deployment test's own): "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

tools/bootstrap-tox.sh
boot=.tox/bootstrap

# Real servers some functional tests start on 127.0.0.1.
tools/install-test-servers.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
tox() {
    "$boot/bin/tox" "$@" 2>&1 | tee -a "$log" || status=$?
}
if [ $# -eq 0 ]; then
    envs=pep8,py3,functional,functional-nova33,nova-functional,demo
    if [ "${E2E:-1}" != 0 ]; then
        envs=$envs,e2e
    fi
    # Every virtualenv first, two at a time (pip's work is partly I/O, so
    # the two cores overlap it), the demo's included: the functional suite's
    # demo test runs tools/demo.sh, which would otherwise build it inside
    # one test.  Nothing is run here, and its status is not the run's: an
    # env that failed to build is built again, and reported, below.
    "$boot/bin/tox" run-parallel --notest -p 2 -e "$envs" || true
    tox -e pep8,py3
    # Nova 33 before Nova 34: a fresh clone has no test times, so stestr
    # deals the tests out round robin, which splits a suite whose tests
    # are all short evenly over the two workers, but not one with the
    # long demo tests.  The Nova 33 run (no demo) records every test's
    # time in .stestr; the Nova 34 run then balances its workers on them.
    tox -e functional-nova33 -- --exclude-list tests/functional/nova33-exclude.txt
    tox -e functional
    tox -e nova-functional
    if [ "${E2E:-1}" != 0 ]; then
        tox -e e2e
    fi
else
    tox "$@"
fi
passed=$(awk '/^ - Passed: /{n+=$3} /^[0-9]+ passed, [0-9]+ failed/{n+=$1}
              END{print n+0}' "$log")
failed=$(awk '/^ - Failed: /{n+=$3} /^[0-9]+ passed, [0-9]+ failed/{n+=$3}
              END{print n+0}' "$log")
# The failures again, last, so that the tail of a long log names them:
# stestr's "... FAILED" lines, the deployment test's "FAIL" checks, and
# tox environments that failed outside a test runner.
if [ "$status" -ne 0 ]; then
    echo "Failures:"
    grep -E '\.\.\. FAILED|^\[[0-9:]+\] +FAIL |^ +[a-z0-9-]+: FAIL' "$log" \
        | sed 's/^/  /' | sort -u | head -50 || true
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1  # tox failed outside the test runner (lint, install, ...)
fi
echo "$passed passed, $failed failed"
exit "$status"
