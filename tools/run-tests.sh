#!/usr/bin/env bash
# Run lint, unit and functional tests on a fresh machine.
#
# Needs only python3, pip and apt: it bootstraps tox into .tox/bootstrap and
# lets tox build the test virtualenv from constraints.txt.  Extra arguments
# go to tox, e.g. `tools/run-tests.sh -e py3 -- tests.unit.filters`.
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

if [ $# -eq 0 ]; then
    set -- -e pep8,py3,functional
fi
exec "$boot/bin/tox" "$@"
