#!/usr/bin/env bash
# System packages of the end-to-end test (tools/e2e/run.py): MariaDB,
# RabbitMQ and Redis from Debian. Only installed here; the test starts its
# own private instances on 127.0.0.1 and stops them. The system instances
# the packages may start are stopped again. Safe to run again.
# Python packages (nova, placement, gunicorn, ...) come from tox -e e2e.
set -euo pipefail

need=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] \
    || need+=(mariadb-server)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || need+=(rabbitmq-server)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "e2e/install.sh: need root to apt-get install ${need[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for service in mariadb rabbitmq-server redis-server; do
    if command -v service >/dev/null 2>&1; then
        service "$service" stop >/dev/null 2>&1 || true
    fi
done
echo "e2e/install.sh: installed ${need[*]}"
