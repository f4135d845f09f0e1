#!/usr/bin/env bash
# tools/pg_oracle.sh -- run SQL against a throwaway PostgreSQL 15, to check the
# expected results written in sql-tests/*.slt against the real thing.
#
#   tools/pg_oracle.sh FILE.sql            run FILE with psql, print what PG says
#   echo "SELECT 1::int;" | tools/pg_oracle.sh -
#
# Starts PostgreSQL 15 (Debian's postgresql-15 under /usr/lib/postgresql/15) on a
# free loopback port with a fresh data directory under $TMPDIR, runs the file with
# psql (unaligned, tuples only, errors shown with their SQLSTATE and position, the
# file goes on after an error), then stops the server and removes the directory.
# Run as root, the server runs as the postgres user.  Nothing outside 127.0.0.1.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/postgres" ] || {
    echo "pg_oracle: PostgreSQL 15 not found in $PGBIN (apt-get install -y postgresql-15)" >&2
    exit 2
}
[ $# -eq 1 ] || { echo "usage: $0 FILE.sql | -" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/pg-oracle.XXXXXX")
sql="$dir/input.sql"
if [ "$1" = - ]; then cat >"$sql"; else cp "$1" "$sql"; fi

as_pg() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}
[ "$(id -u)" -eq 0 ] && chown -R postgres "$dir"

# A free port: ask the kernel for one on 127.0.0.1.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cleanup() {
    as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT

as_pg "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >/dev/null

as_pg psql -X -h 127.0.0.1 -p "$port" -U postgres -d postgres -A -t \
    -v VERBOSITY=default -v ON_ERROR_STOP=0 -v SHOW_CONTEXT=never \
    -c '\set VERBOSITY verbose' -f "$sql" 2>&1 || true
