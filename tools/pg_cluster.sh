#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a temp dir on a free loopback port (Debian's postgresql).
#
#   tools/pg_cluster.sh start DIR          initdb + pg_ctl start; prints the database URL
#   tools/pg_cluster.sh stop DIR           pg_ctl stop and remove DIR
#   tools/pg_cluster.sh run -- CMD ARGS    start, run CMD with WHILEAI_DATABASE_URL set, always stop
#
# As root, initdb and pg_ctl run as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail

bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$found" ]; then
    echo "pg_cluster: no /usr/lib/postgresql/*/bin; apt-get install -y postgresql" >&2
    exit 1
  fi
  echo "$found"
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local dir=$1 bin port
  bin=$(bindir)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" \
    start >/dev/null
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

stop() {
  local dir=$1
  if [ -d "$dir/data" ]; then
    as_pg "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start "$2" ;;
  stop) stop "$2" ;;
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    dir=$(mktemp -d)
    trap 'stop "$dir"' EXIT
    url=$(start "$dir")
    echo "pg_cluster: $url" >&2
    WHILEAI_DATABASE_URL=$url "$@"
    ;;
  *) echo "usage: $0 start DIR | stop DIR | run -- CMD [ARGS...]" >&2; exit 2 ;;
esac
