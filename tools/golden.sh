#!/usr/bin/env bash
# tools/golden.sh — rewrite the golden files: expected output written from
# sluice's own output, not from PostgreSQL's (each says so in its header).
#
#   tools/golden.sh explain    sql-tests/explain.slt (sqllogictest --override
#                              against a fresh sluiced)
#   tools/golden.sh psql       tests/expected/psql/*.out (tests/test_psql_catalog.py
#                              with SLUICE_UPDATE_EXPECTED=1)
#   tools/golden.sh all        both
#
# The only way they change: ./tools/test never rewrites them (it unsets
# SLUICE_UPDATE_EXPECTED), and tools/pg_check_slt.py does not run them.  Uses
# the build in $SLUICE_BUILD_DIR (default build-asan), which must be built.
# Review the diff (git diff) before committing it: what changed is what sluice
# now answers.  Expectations derived from PostgreSQL are filled by
# tools/pg_slt.py instead.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${SLUICE_BUILD_DIR:-build-asan}
BIN=$BUILD/src/sluiced
[ $# -eq 1 ] || { sed -n '2,16s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[ -x "$BIN" ] || { echo "golden: no $BIN (meson compile -C $BUILD)" >&2; exit 2; }

# explain: sql-tests/explain.slt rewritten by sqllogictest-rs from a fresh
# server's answers (comments and records kept).
golden_explain() {
    local dir port="" pid i rc=0
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-golden.XXXXXX")
    "$BIN" --listen 127.0.0.1 --port 0 --data-dir "$dir/data" >"$dir/sluiced.log" 2>&1 &
    pid=$!
    # shellcheck disable=SC2064
    trap "kill -KILL $pid 2>/dev/null; rm -rf '$dir'" EXIT
    for ((i = 0; i < 300; i++)); do
        port=$(sed -n 's/.*ready.*psql -h [^ ]* -p \([0-9][0-9]*\).*/\1/p' "$dir/sluiced.log" |
            head -n1)
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        echo "golden: sluiced did not start:" >&2
        cat "$dir/sluiced.log" >&2
        return 1
    fi
    sqllogictest --color never --host 127.0.0.1 --port "$port" --user sluice --db sluice \
        --override sql-tests/explain.slt || rc=$?
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    trap - EXIT
    rm -rf "$dir"
    return $rc
}

# psql: the expected files of tests/test_psql_catalog.py, from its own run.
golden_psql() {
    SLUICE_UPDATE_EXPECTED=1 SLUICE_BIN=$BIN .venv/bin/python -m pytest \
        tests/test_psql_catalog.py -q -p no:cacheprovider -p no:xdist
}

case $1 in
explain) golden_explain ;;
psql) golden_psql ;;
all) golden_explain && golden_psql ;;
*) echo "golden: unknown set '$1' (explain, psql or all)" >&2; exit 2 ;;
esac
git status --short sql-tests/explain.slt tests/expected/psql
