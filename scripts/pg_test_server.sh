#!/usr/bin/env bash
# Start or stop a throwaway PostgreSQL cluster on 127.0.0.1 for the database tests.
#   eval "$(bash scripts/pg_test_server.sh start DIR)"   # exports RANKSCOPE_TEST_PG_URL
#   bash scripts/pg_test_server.sh stop DIR
# Uses Debian's server binaries (package postgresql); the cluster runs as the `postgres`
# user when started by root (the server refuses to run as root), with trust authentication
# on the loopback address only, and lives entirely in DIR.
set -euo pipefail
action=${1:?start|stop}
dir=${2:?directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "echo 'note: PostgreSQL server binaries not found; PostgreSQL tests will be skipped' >&2"
  exit 0
fi
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$action" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >/dev/null
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres rankscope_test
    echo "export RANKSCOPE_TEST_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$port/rankscope_test"
    ;;
  stop)
    [ -d "$dir/data" ] && as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null || true
    ;;
esac
