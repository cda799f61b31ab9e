#!/usr/bin/env bash
# Install the real servers some tests start on 127.0.0.1: Prometheus (the
# Prometheus metric source) and Redis (tooz leader election). Debian
# packages only; nothing is started here, the tests start and stop their
# own instances. Safe to run again.
set -euo pipefail

need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-test-servers: need root to apt-get install ${need[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The packages may start system instances; the tests use their own.
for service in prometheus redis-server; do
    if command -v service >/dev/null 2>&1; then
        service "$service" stop >/dev/null 2>&1 || true
    fi
done
echo "install-test-servers: installed ${need[*]}"
