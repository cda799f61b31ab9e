#!/usr/bin/env bash
# Install Debian packages whose program is missing; nothing is started.
#
# Usage: tools/apt-ensure.sh PACKAGE:PROBE[:SERVICE] ...
#   PROBE   a command name, or an absolute path to an executable;
#   SERVICE the init script the package may start (stopped again: tests
#           run their own private instances on 127.0.0.1).
# Safe to run again: with every probe present it does nothing.
set -euo pipefail

need=()
services=()
for spec in "$@"; do
    IFS=: read -r package probe service <<<"$spec"
    if [[ "$probe" == /* ]]; then
        [ -x "$probe" ] && continue
    else
        command -v "$probe" >/dev/null 2>&1 && continue
    fi
    need+=("$package")
    services+=("${service:-$package}")
done
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "apt-ensure: need root to apt-get install ${need[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
if command -v service >/dev/null 2>&1; then
    for service in "${services[@]}"; do
        service "$service" stop >/dev/null 2>&1 || true
    done
fi
echo "apt-ensure: installed ${need[*]}"
