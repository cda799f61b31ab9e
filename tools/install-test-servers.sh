#!/usr/bin/env bash
# The real servers some functional tests start on 127.0.0.1: Prometheus
# (the Prometheus metric source) and Redis (tooz leader election), from
# Debian. The tests start and stop their own instances.
set -euo pipefail
exec "$(dirname "$0")/apt-ensure.sh" prometheus:prometheus \
    redis-server:redis-server
