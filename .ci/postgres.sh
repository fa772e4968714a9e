#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL server on loopback for tests.
#   .ci/postgres.sh start DIR PORT   -> prints the server URL
#   .ci/postgres.sh stop DIR
# Installs Debian's postgresql when no server binaries are present. Runs the server as the `postgres` user when
# invoked as root (PostgreSQL refuses to run as root), else as the current user. fsync is off: the data is
# throwaway and the tests should not wait on the disk.
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?directory}
pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
as_owner() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
case "$cmd" in
  start)
    port=${3:?port}
    if [ -z "$(pgbin)" ] || [ ! -x "$(pgbin)/initdb" ]; then
      if [ "$(id -u)" != 0 ]; then echo "PostgreSQL server binaries missing; install Debian's postgresql" >&2; exit 1; fi
      echo "installing PostgreSQL (Debian package)…" >&2
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    bin=$(pgbin)
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; fi
    as_owner "'$bin/initdb' -D '$dir/data' -U postgres --auth=trust -E UTF8 --no-locale >'$dir/initdb.log' 2>&1"
    as_owner "'$bin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 -o \"-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200\" start >/dev/null"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    bin=$(pgbin)
    as_owner "'$bin/pg_ctl' -D '$dir/data' -m fast -w stop >/dev/null" || true
    ;;
esac
