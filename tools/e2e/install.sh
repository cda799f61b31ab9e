#!/usr/bin/env bash
# System packages of the end-to-end test (tools/e2e/run.py): MariaDB,
# RabbitMQ and Redis from Debian. The test starts its own private
# instances on 127.0.0.1 and stops them. Python packages (nova, placement,
# gunicorn, ...) come from tox -e e2e.
set -euo pipefail
exec "$(dirname "$0")/../apt-ensure.sh" \
    mariadb-server:/usr/sbin/mariadbd:mariadb \
    rabbitmq-server:/usr/lib/rabbitmq/bin/rabbitmq-server \
    redis-server:redis-server
