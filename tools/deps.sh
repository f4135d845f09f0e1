# tools/deps.sh — install what sluice needs to build and test, if it is missing.
#
# Sourced, never run: `. tools/deps.sh` from the repository root defines
#
#   deps_debian       the Debian packages building and running the server need
#                     (DEPS_DEBIAN_PACKAGES: the compiler, meson, lemon, the libraries,
#                     and psql to connect with; apt-get, as root; `apt-get update`
#                     runs once, and only when a package is missing).  This is all
#                     that tools/run installs.
#   deps_test_debian  the Debian packages only the tests need (DEPS_TEST_DEBIAN_PACKAGES:
#                     clang, kcat, python3-venv, Java and Maven for pgJDBC and the
#                     Kafka broker, Chromium for the HTTP pages' test, postgresql-15,
#                     the PostgreSQL that tools/pg_check_slt.py checks the
#                     PostgreSQL-derived .slt expectations against, and systemd
#                     for systemd-analyze, which checks tools/systemd's unit)
#   deps_test_tools   the pinned test tools: a Python venv at .venv from
#                     tests/requirements.txt (rebuilt only when that file changes)
#                     and sqllogictest-rs (cargo install, only when the installed
#                     one is not the pinned version), after deps_test_debian
#   deps_all          deps_debian and deps_test_tools
#   deps_clients      the driver programs of tests/clients/: node-postgres (npm ci
#                     from package-lock.json, only when node_modules is missing or
#                     older than the lock), pgx (go mod download), pgJDBC
#                     (mvn compile, which fills ~/.m2) and tokio-postgres (cargo
#                     fetch --locked into ~/.cargo); the driver tests also do
#                     this themselves when it has not been done
#   deps_client_tools the programs those tests run: node and npm (Debian's nodejs
#                     and npm when node is missing), go (at least the version of
#                     tests/clients/go/go.mod: Debian's golang-go is older, so a
#                     missing go is reported, not installed), java, mvn and cargo
#                     (which sqllogictest-rs needs too); a test skipped for want
#                     of one fails ./tools/test
#
# Each returns 0 when everything is in place and non-zero, with a message on stderr,
# when it could not install something. Nothing is installed that is already there,
# so a second run costs a few dpkg look-ups.

# What building and running the server needs (tools/run): nothing of the tests'.
DEPS_DEBIAN_PACKAGES="build-essential pkg-config meson ninja-build lemon libuv1-dev
librocksdb-dev libsqlite3-dev librdkafka-dev libssl-dev libjson-c-dev zlib1g-dev liblz4-dev
libzstd-dev libpcre2-dev postgresql-client"

# The tests' own Debian packages (deps_test_debian), beside the build's above.
DEPS_TEST_DEBIAN_PACKAGES="clang kcat python3-venv openjdk-17-jre-headless maven chromium
postgresql-15 systemd"

DEPS_SQLLOGICTEST_VERSION=0.29.1
DEPS_VENV=.venv
DEPS_REQUIREMENTS=tests/requirements.txt

# cargo installs into ~/.cargo/bin, which a CI shell may not have on its PATH.
case ":$PATH:" in
*":$HOME/.cargo/bin:"*) ;;
*) PATH="$HOME/.cargo/bin:$PATH"; export PATH ;;
esac

# Go installed from its own archive lives in /usr/local/go/bin.
if [ -x /usr/local/go/bin/go ]; then
    case ":$PATH:" in
    *":/usr/local/go/bin:"*) ;;
    *) PATH="$PATH:/usr/local/go/bin"; export PATH ;;
    esac
fi

deps_log() {
    echo "deps: $*" >&2
}

# deps_debian: install the Debian packages that dpkg does not report as installed.
deps_debian() {
    local pkg missing=""
    for pkg in $DEPS_DEBIAN_PACKAGES; do
        if ! dpkg -s "$pkg" >/dev/null 2>&1; then
            missing="$missing $pkg"
        fi
    done
    [ -z "$missing" ] && return 0

    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo"
        else
            deps_log "missing Debian packages:$missing"
            deps_log "install them as root: apt-get install -y --no-install-recommends$missing"
            return 1
        fi
    fi
    deps_log "installing Debian packages:$missing"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || return 1
    # $missing is a list of words on purpose.
    # shellcheck disable=SC2086
    $sudo env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends $missing >&2 || return 1
}

# deps_python: print the Python that makes the venv. Debian's python3 has the venv
# module from python3-venv; another python3 on the PATH (pyenv) is the fallback.
deps_python() {
    local py
    for py in /usr/bin/python3 python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import venv, ensurepip' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    deps_log "no python3 with the venv module (install python3-venv)"
    return 1
}

# deps_venv: make .venv from tests/requirements.txt unless the stamp in .venv says
# it already was made from this exact file.
deps_venv() {
    local stamp="$DEPS_VENV/.requirements.sha256" want have="" py
    want=$(sha256sum "$DEPS_REQUIREMENTS" | cut -d' ' -f1) || return 1
    [ -f "$stamp" ] && have=$(cat "$stamp")
    if [ "$want" = "$have" ] && "$DEPS_VENV/bin/python" -c 'pass' 2>/dev/null; then
        return 0
    fi
    py=$(deps_python) || return 1
    deps_log "making $DEPS_VENV from $DEPS_REQUIREMENTS with $py"
    rm -rf "$DEPS_VENV"
    "$py" -m venv "$DEPS_VENV" || return 1
    "$DEPS_VENV/bin/python" -m pip install -q --disable-pip-version-check \
        -r "$DEPS_REQUIREMENTS" >&2 || return 1
    echo "$want" >"$stamp"
}

# deps_sqllogictest_ok: true when the sqllogictest on the PATH is the pinned version.
deps_sqllogictest_ok() {
    command -v sqllogictest >/dev/null 2>&1 &&
        sqllogictest --version 2>/dev/null | grep -qF "$DEPS_SQLLOGICTEST_VERSION"
}

# deps_sqllogictest: cargo install the pinned sqllogictest-rs unless it is there.
# A `cargo install` already running (another shell installing the same thing) is
# waited for rather than raced.
deps_sqllogictest() {
    deps_sqllogictest_ok && return 0
    local waited=0
    while pgrep -f 'cargo install' >/dev/null 2>&1; do
        [ $waited -eq 0 ] && deps_log "waiting for a running 'cargo install' to finish"
        sleep 5
        waited=$((waited + 5))
        if [ $waited -ge 1800 ]; then
            deps_log "gave up waiting for 'cargo install' after ${waited}s"
            return 1
        fi
    done
    deps_sqllogictest_ok && return 0
    if ! command -v cargo >/dev/null 2>&1; then
        deps_log "cargo not found: cannot install sqllogictest $DEPS_SQLLOGICTEST_VERSION"
        return 1
    fi
    deps_log "installing sqllogictest $DEPS_SQLLOGICTEST_VERSION (cargo install, a few minutes)"
    cargo install --locked sqllogictest-bin --version "$DEPS_SQLLOGICTEST_VERSION" >&2 ||
        return 1
    deps_sqllogictest_ok
}

# deps_test_debian: install the tests' Debian packages that dpkg does not report.
deps_test_debian() {
    DEPS_DEBIAN_PACKAGES="$DEPS_TEST_DEBIAN_PACKAGES" deps_debian
}

deps_test_tools() {
    deps_test_debian && deps_venv && deps_sqllogictest
}

deps_all() {
    deps_debian && deps_test_tools
}

# deps_client_tools: node, npm, go, java, mvn and cargo on the PATH; node and
# npm from Debian when node is missing; true when all six are there.
deps_client_tools() {
    local tool rc=0 want
    if ! command -v node >/dev/null 2>&1; then
        DEPS_DEBIAN_PACKAGES="nodejs npm" deps_debian || rc=1
    fi
    for tool in node npm go java mvn cargo; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            deps_log "no $tool on the PATH: the driver tests that need it fail (tests/clients/)"
            rc=1
        fi
    done
    if command -v go >/dev/null 2>&1; then
        want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' tests/clients/go/go.mod)
        if ! printf '%s\n' "$want" "$(go env GOVERSION | sed 's/^go//')" | sort -V -C; then
            deps_log "go $(go env GOVERSION) is older than tests/clients/go/go.mod's $want"
            rc=1
        fi
    fi
    return $rc
}

# deps_clients: fetch what the driver tests under tests/clients/ need (see above).
deps_clients() {
    local rc=0 dir=tests/clients
    if command -v npm >/dev/null 2>&1; then
        if [ ! -d "$dir/node/node_modules/pg" ] ||
            [ "$dir/node/package-lock.json" -nt "$dir/node/node_modules/.package-lock.json" ]; then
            deps_log "npm ci in $dir/node"
            (cd "$dir/node" && npm ci --no-audit --no-fund --loglevel=error) >&2 || rc=1
        fi
    else
        deps_log "no npm: the node-postgres tests cannot run"
        rc=1
    fi
    if command -v go >/dev/null 2>&1; then
        (cd "$dir/go" && go mod download) >&2 || rc=1
    else
        deps_log "no go: the pgx tests cannot run"
        rc=1
    fi
    if command -v mvn >/dev/null 2>&1; then
        (cd "$dir/jdbc" && mvn -B -q compile dependency:build-classpath \
            -Dmdep.outputFile=target/classpath.txt) >&2 || rc=1
    fi
    if command -v cargo >/dev/null 2>&1; then
        (cd "$dir/rust" && cargo fetch --locked) >&2 || rc=1
    else
        deps_log "no cargo: the tokio-postgres tests cannot run"
        rc=1
    fi
    return $rc
}
