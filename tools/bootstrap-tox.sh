#!/usr/bin/env bash
# Install tox into .tox/bootstrap (python3 and pip only; apt for venv).
set -euo pipefail
cd "$(dirname "$0")/.."
boot=.tox/bootstrap
[ -x "$boot/bin/tox" ] && exit 0
if ! python3 -m venv "$boot" 2>/dev/null; then
    rm -rf "$boot"
    echo "python3 venv module missing; installing python3-venv" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv
    python3 -m venv "$boot"
fi
"$boot/bin/pip" install -q --upgrade pip
"$boot/bin/pip" install -q -c constraints.txt tox
