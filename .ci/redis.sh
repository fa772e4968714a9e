#!/usr/bin/env bash
# Starts or stops a throwaway Redis server on loopback for tests (the optional scale-out rate-limit store).
#   .ci/redis.sh start DIR PORT   -> prints the server URL
#   .ci/redis.sh stop DIR
# Installs Debian's redis-server when it is missing and we are root. No persistence: the data is throwaway.
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?directory}
case "$cmd" in
  start)
    port=${3:?port}
    if ! command -v redis-server >/dev/null; then
      if [ "$(id -u)" != 0 ]; then echo "redis-server missing; install Debian's redis-server" >&2; exit 1; fi
      echo "installing Redis (Debian package)…" >&2
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
    fi
    mkdir -p "$dir"
    redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
      --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" >/dev/null
    for _ in $(seq 1 100); do
      if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then echo "redis://127.0.0.1:$port"; exit 0; fi
      sleep 0.1
    done
    echo "Redis did not answer on port $port" >&2; exit 1
    ;;
  stop)
    if [ -f "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
    ;;
esac
