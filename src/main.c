/*
 * main.c -- sluiced: options, configuration file, data directory, the loop.
 * (--list-options prints the table of WITH options, src/catalog/relopts.c.)
 *
 * Start-up order: options (command line over config file over defaults),
 * data directory (locked for this process first, lock_data_dir: a second
 * server on it is refused; refused when it holds a state store without its catalog
 * or the reverse: check_data_dir), catalog (SQLite), state store
 * (RocksDB), listener (which refuses a non-loopback address without hba
 * rules), the catalog's md5 hashes kept or dropped (rt_roles_md5: kept
 * only with an md5 rule), malloc's arenas bounded under an address-space
 * limit (bound_malloc_arenas).  One log line says the server is ready and how to connect.  SIGINT or SIGTERM
 * close the listener; statements in flight finish (cancelled past
 * shutdown_timeout) and are answered, every session ends with FATAL 57P01
 * (server.c); then the stores close and the process exits 0.  SIGHUP
 * reads the --config file again: its users and hba rules replace the
 * server's (server_reload_auth; command-line --hba rules stay), each other
 * setting changed is logged as needing a restart (on_sighup).
 *
 * main makes the server's context, the Runtime (runtime.h: rt_create, which
 * owns the loop and the two worker pools; rt_destroy once the loop has
 * ended), opens the catalog and the state store into it and passes it on.
 * The Runtime's two worker pools (pool.h; docs/architecture.md, "Threads"):
 * the engine's (engine_workers threads: continuous-query batches, ingestion
 * rounds, deferred appends) and the statements' (statement_workers threads;
 * statements beyond them wait in its queue), shows them in /metrics
 * (sluice_pool_*), and closes them once the loop has ended.  It sets the
 * state store's commit mode (commit_mode, group_commit_window: each store
 * has its own) and shows that store's appends and writes in /metrics
 * (sluice_stream_appends_total, sluice_stream_writes_total) and in the
 * "sluiced stopped" line, and its version in /metrics (sluice_build_info).
 */
#include "sluice/catalog.h"
#include "sluice/http.h"
#include "sluice/ingest.h"
#include "sluice/log.h"
#include "sluice/memacct.h"
#include "sluice/metrics.h"
#include "sluice/pool.h"
#include "sluice/relstore.h"
#include "sluice/relopts.h"
#include "sluice/runtime.h"
#include "sluice/server.h"
#include "sluice/state.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "version.h"     /* SLUICE_COMMIT, generated (src/meson.build) */

typedef struct Options {
    char  *listen;
    int    port;
    char  *data_dir;
    char  *log_level;
    char  *log_format;
    int    max_connections;
    long   max_message_size;
    long   max_output_buffer;
    long   max_memory;          /* bytes statements may hold together; 0: default */
    int    max_prepared_statements;
    int    shutdown_timeout;
    int    authentication_timeout;
    int    log_min_duration_statement;  /* ms; -1 off, 0 every statement */
    bool   ssl;
    char  *ssl_cert_file;
    char  *ssl_key_file;
    char  *ssl_ca_file;
    bool   debug_loop_lag;
    bool   group_commit;        /* --commit-mode=group */
    long   group_commit_window; /* microseconds */
    int    http_port;           /* -1: no HTTP listener */
    char  *http_listen;         /* its own address, loopback by default */
    char  *http_token;          /* bearer token of the HTTP pages, or NULL */
    int    engine_workers;      /* threads of the engine's pool */
    int    statement_workers;   /* threads of the statements' pool */
    char  *files_root;          /* --files-root: where non-superusers' files live */
    char  *kafka_allowed_hosts; /* the brokers non-superusers may name; NULL: none */
    char **hba;                 /* rules, in order */
    int    nhba;
    bool   hba_from_cli;        /* the command line's rules replace the file's */
    ServerUser *users;          /* user.NAME.password = SECRET */
    int    nusers;
    char  *config;              /* --config's path, read again at SIGHUP */
    char **pairs;               /* the file's "name=value" lines, names normalized,
                                 * but users and hba: what SIGHUP compares */
    int    npairs;
} Options;

/* The settings rt's sys.settings and pg_settings show, and the
 * configuration's users for pg_roles. */
static void publish_settings(Runtime *rt, const Options *o, int port)
{
    char buf[32];
    rt_setting_set(rt, "listen", o->listen, "address the server listens on");
    snprintf(buf, sizeof(buf), "%d", port);
    rt_setting_set(rt, "port", buf, "TCP port the server listens on");
    rt_setting_set(rt, "data_dir", o->data_dir, "data directory (catalog.db, state/)");
    rt_setting_set(rt, "files_root", o->files_root ? o->files_root : "",
                   "directory below which non-superusers may use files connectors and sinks");
    rt_setting_set(rt, "kafka_allowed_hosts", o->kafka_allowed_hosts ? o->kafka_allowed_hosts : "",
                   "Kafka bootstrap servers non-superusers may name (empty: any)");
    rt_setting_set(rt, "log_level", o->log_level, "lowest level of log lines written");
    rt_setting_set(rt, "log_format", o->log_format, "log line format");
    snprintf(buf, sizeof(buf), "%d", o->max_connections);
    rt_setting_set(rt, "max_connections", buf, "most concurrent client connections");
    snprintf(buf, sizeof(buf), "%ld", o->max_message_size);
    rt_setting_set(rt, "max_message_size", buf, "largest protocol message accepted, in bytes");
    snprintf(buf, sizeof(buf), "%ld", o->max_output_buffer);
    rt_setting_set(rt, "max_output_buffer", buf,
                   "bytes of output queued for a client before reading from it pauses");
    snprintf(buf, sizeof(buf), "%zu", sl_mem_server_limit());
    rt_setting_set(rt, "max_memory", buf,
                   "bytes all running statements may hold together (53200 past it)");
    snprintf(buf, sizeof(buf), "%d", o->max_prepared_statements);
    rt_setting_set(rt, "max_prepared_statements", buf,
                   "named prepared statements (and portals) a connection may hold");
    snprintf(buf, sizeof(buf), "%d", o->shutdown_timeout);
    rt_setting_set(rt, "shutdown_timeout", buf,
                   "seconds statements in flight get at shutdown before they are cancelled");
    snprintf(buf, sizeof(buf), "%d", o->authentication_timeout);
    rt_setting_set(rt, "authentication_timeout", buf, "seconds to complete authentication");
    snprintf(buf, sizeof(buf), "%d", o->log_min_duration_statement);
    rt_setting_set(rt, "log_min_duration_statement", buf,
                   "milliseconds past which a statement is logged (-1 off, 0 all); "
                   "each session's default");
    rt_setting_set(rt, "ssl", o->ssl ? "on" : "off", "whether TLS connections are accepted");
    rt_setting_set(rt, "commit_mode", o->group_commit ? "group" : "sync",
                   "how appends to streams share fsyncs (sync, group)");
    snprintf(buf, sizeof(buf), "%ld", o->group_commit_window);
    rt_setting_set(rt, "group_commit_window", buf,
                   "microseconds a group commit waits for more appends");
    rt_setting_set(rt, "debug_loop_lag", o->debug_loop_lag ? "on" : "off",
                   "whether the event loop's lag is measured");
    snprintf(buf, sizeof(buf), "%d", o->engine_workers);
    rt_setting_set(rt, "engine_workers", buf, "worker threads of continuous queries and ingestion");
    snprintf(buf, sizeof(buf), "%d", o->statement_workers);
    rt_setting_set(rt, "statement_workers", buf,
                   "worker threads of client statements; more statements wait in a queue");
}

static void usage(FILE *f)
{
    fputs(
"Usage: sluiced [OPTION]...\n"
"sluice: a SQL-first streaming query server that speaks the PostgreSQL protocol.\n"
"\n"
"Options (each may also be set in the --config file as `name = value`,\n"
"with dashes written as underscores; the command line wins):\n"
"  -l, --listen=ADDR          address to listen on (default 127.0.0.1); an\n"
"                             address that is not loopback needs --hba rules\n"
"  -p, --port=PORT            TCP port (default 7433; 0 picks a free port,\n"
"                             which the ready line reports)\n"
"  -D, --data-dir=DIR         data directory, created when missing: the SQLite\n"
"                             catalog (DIR/catalog.db) and the RocksDB state\n"
"                             store (DIR/state) live there (default ./data)\n"
"      --log-level=LEVEL      debug, info, warn or error (default info)\n"
"      --log-format=FORMAT    text (key=value) or json (default text)\n"
"      --max-connections=N    refuse connections past N (default 1000)\n"
"      --max-message-size=B   largest protocol message accepted, in bytes;\n"
"                             a larger one closes that connection (default 67108864)\n"
"      --max-output-buffer=B  stop reading from a client whose unsent output\n"
"                             passes B bytes (default 8388608)\n"
"      --max-memory=SIZE      memory all running statements may hold together\n"
"                             (bytes, or with kB, MB, GB, TB); a statement\n"
"                             that would pass it ends with 53200 (default:\n"
"                             half the RAM, or a quarter of the address-space\n"
"                             limit, ulimit -v, when that is less)\n"
"      --max-prepared-statements=N  named prepared statements, and portals,\n"
"                             one connection may hold (default 10000)\n"
"      --shutdown-timeout=S   at SIGTERM, seconds statements in flight get to\n"
"                             finish before they are cancelled (default 10)\n"
"      --log-min-duration-statement=MS  log each statement that ran at least MS\n"
"                             milliseconds, with its text (-1 off, the default;\n"
"                             0 every statement); a superuser may SET it\n"
"      --ssl=on|off           accept TLS (SSLRequest); needs the two files below\n"
"      --ssl-cert-file=FILE   server certificate (chain), PEM\n"
"      --ssl-key-file=FILE    its private key, PEM\n"
"      --ssl-ca-file=FILE     CA certificates for client certificates (optional)\n"
"      --hba=RULE             an authentication rule, \"TYPE DATABASE USER ADDRESS\n"
"                             METHOD\" (repeatable; first match wins; given on the\n"
"                             command line, they replace the config file's);\n"
"                             without rules, loopback connections are trusted\n"
"                             and no other address may be listened on; md5\n"
"                             password hashes are kept only while a rule\n"
"                             uses md5\n"
"      --authentication-timeout=S  close a connection not through authentication\n"
"                             S seconds after it was accepted (default 60)\n"
"      --commit-mode=MODE     how appends to streams reach the disk: sync (each\n"
"                             append its own synced write) or group (appends\n"
"                             that arrive together share one fsync; each is\n"
"                             acknowledged only once durable) (default sync)\n"
"      --group-commit-window=US  in group mode, how long the first append of a\n"
"                             group waits for others to join, in microseconds\n"
"                             (default 0: a group is the appends that queued up\n"
"                             behind the write in progress, as PostgreSQL's\n"
"                             commit_delay = 0)\n"
"      --http-port=PORT       serve /metrics (Prometheus), /healthz and the\n"
"                             query pages over HTTP on --http-listen\n"
"                             (default -1: off; 0 picks a free port, which the\n"
"                             ready line reports)\n"
"      --http-listen=ADDR     address of the HTTP listener (default 127.0.0.1,\n"
"                             whatever --listen is); one that is not loopback\n"
"                             needs an HTTP token\n"
"      --http-token=TOKEN     every HTTP page but /healthz then needs\n"
"                             \"Authorization: Bearer TOKEN\" (16 bytes or more;\n"
"                             better set in the config file: http_token)\n"
"      --engine-workers=N     worker threads of continuous-query batches, ingestion\n"
"                             and deferred appends (default: one per core, at\n"
"                             least 4); statements never run on them\n"
"      --statement-workers=N  worker threads of client statements (SELECT, INSERT,\n"
"                             ...); more statements wait in a queue (default 4)\n"
"      --files-root=DIR       the directory below which roles that are not\n"
"                             superusers may use the files connector and files\n"
"                             sinks (default: none, only superusers may)\n"
"      --kafka-allowed-hosts=LIST  host[:port],... the only Kafka bootstrap\n"
"                             servers roles that are not superusers may name\n"
"                             (default: none, only superusers may; '*': any)\n"
"      --debug-loop-lag       measure the event loop's lag (10 ms timer) and log\n"
"                             it at shutdown\n"
"  -c, --config=FILE          read options from FILE; it may also hold users:\n"
"                             user.NAME.password = 'SECRET' (a password, an md5\n"
"                             hash or a SCRAM-SHA-256 verifier), see\n"
"                             docs/operations.md\n"
"  -h, --help                 show this help and exit\n"
"  -V, --version              show the version and exit\n"
"      --list-options         print the WITH options of streams, sinks and\n"
"                             continuous queries (docs/sql-reference.md's\n"
"                             tables) and exit\n"
"\n"
"Connect with: psql -h 127.0.0.1 -p 7433 -U sluice\n", f);
}

/* --list-options: each table of src/catalog/relopts.c as the Markdown
 * table docs/sql-reference.md shows, between markers that
 * tools/options_docs.py replaces and tests/test_options_table.py
 * compares. */
static void list_options(void)
{
    int n;
    const RelOptSet *sets = cat_relopts_sets(&n);
    for (int s = 0; s < n; s++) {
        if (sets[s].n == 0)
            continue;
        printf("<!-- options: %s -->\n", sets[s].name);
        printf("| option | type | default | needs | superuser | meaning |\n");
        printf("|---|---|---|---|---|---|\n");
        for (int i = 0; i < sets[s].n; i++) {
            const RelOpt *o = &sets[s].opts[i];
            printf("| `%s` | ", o->name);
            if (o->type == RELOPT_ENUM)
                printf("one of `%s`", o->values);
            else
                printf("%s", cat_relopts_type_name(o));
            printf(" | %s | %s | %s | %s |\n",
                   o->flags & RELOPT_REQUIRED ? "(required)"
                   : o->flags & RELOPT_SERVER ? "(not for WITH)" : o->dflt,
                   o->needs ? o->needs : "", o->superuser ? o->superuser : "", o->meaning);
        }
        printf("<!-- /options -->\n");
    }
}

static int parse_bool(const char *v, bool *out)
{
    if (strcmp(v, "on") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 ||
        strcmp(v, "1") == 0)
        *out = true;
    else if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0 ||
             strcmp(v, "0") == 0)
        *out = false;
    else
        return -1;
    return 0;
}

/* user.NAME.password = SECRET; a later line for the same user wins. */
static int set_user(Options *o, const char *name, const char *value)
{
    const char *user = name + 5;
    const char *dot = strrchr(user, '.');
    if (dot == NULL || dot == user || strcmp(dot, ".password") != 0)
        return -1;
    char *uname = sl_strndup(user, (size_t)(dot - user));
    for (int i = 0; i < o->nusers; i++) {
        if (strcmp(o->users[i].name, uname) == 0) {
            sl_free(uname);
            sl_free((char *)o->users[i].secret);
            o->users[i].secret = sl_strdup(value);
            return 0;
        }
    }
    o->users = sl_realloc(o->users, sizeof(ServerUser) * (size_t)(o->nusers + 1));
    o->users[o->nusers].name = uname;
    o->users[o->nusers].secret = sl_strdup(value);
    o->nusers++;
    return 0;
}

static void set_string(char **field, const char *value)
{
    sl_free(*field);
    *field = sl_strdup(value);
}

/* Sets one option by name; returns -1 if the name or value is bad. */
static int set_option(Options *o, const char *name, const char *value)
{
    if (strncmp(name, "user.", 5) == 0)
        return set_user(o, name, value);
    char key[64];
    size_t n = strlen(name);
    if (n >= sizeof(key))
        return -1;
    for (size_t i = 0; i <= n; i++)
        key[i] = name[i] == '-' ? '_' : name[i];
    char *end = NULL;
    if (strcmp(key, "listen") == 0) {
        sl_free(o->listen);
        o->listen = sl_strdup(value);
    } else if (strcmp(key, "port") == 0) {
        long p = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || p < 0 || p > 65535)
            return -1;
        o->port = (int)p;
    } else if (strcmp(key, "data_dir") == 0) {
        sl_free(o->data_dir);
        o->data_dir = sl_strdup(value);
    } else if (strcmp(key, "log_level") == 0) {
        if (log_level_parse(value) < 0)
            return -1;
        sl_free(o->log_level);
        o->log_level = sl_strdup(value);
    } else if (strcmp(key, "log_format") == 0) {
        if (strcmp(value, "text") != 0 && strcmp(value, "json") != 0)
            return -1;
        sl_free(o->log_format);
        o->log_format = sl_strdup(value);
    } else if (strcmp(key, "max_connections") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 1 || v > 1000000)
            return -1;
        o->max_connections = (int)v;
    } else if (strcmp(key, "max_message_size") == 0 ||
               strcmp(key, "max_output_buffer") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 1024)
            return -1;
        if (key[4] == 'm')
            o->max_message_size = v;
        else
            o->max_output_buffer = v;
    } else if (strcmp(key, "max_memory") == 0) {
        /* bytes, or with a unit: kB, MB, GB, TB */
        long v = strtol(value, &end, 10);
        static const struct { const char *u; long mult; } units[] = {
            {"", 1}, {"kB", 1L << 10}, {"MB", 1L << 20}, {"GB", 1L << 30}, {"TB", 1L << 40},
        };
        size_t k = 0;
        while (k < SL_ARRAY_LEN(units) && strcmp(end, units[k].u) != 0)
            k++;
        if (end == value || k == SL_ARRAY_LEN(units) || v < 1 || v > (1L << 50) / units[k].mult ||
            v * units[k].mult < (16L << 20))
            return -1;
        o->max_memory = v * units[k].mult;
    } else if (strcmp(key, "max_prepared_statements") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 1 || v > 10000000)
            return -1;
        o->max_prepared_statements = (int)v;
    } else if (strcmp(key, "shutdown_timeout") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 0 || v > 3600)
            return -1;
        o->shutdown_timeout = (int)v;
    } else if (strcmp(key, "authentication_timeout") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 1 || v > 600)
            return -1;
        o->authentication_timeout = (int)v;
    } else if (strcmp(key, "log_min_duration_statement") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < -1 || v > INT_MAX)
            return -1;
        o->log_min_duration_statement = (int)v;
    } else if (strcmp(key, "ssl") == 0) {
        return parse_bool(value, &o->ssl);
    } else if (strcmp(key, "ssl_cert_file") == 0) {
        set_string(&o->ssl_cert_file, value);
    } else if (strcmp(key, "ssl_key_file") == 0) {
        set_string(&o->ssl_key_file, value);
    } else if (strcmp(key, "ssl_ca_file") == 0) {
        set_string(&o->ssl_ca_file, value);
    } else if (strcmp(key, "commit_mode") == 0) {
        if (strcmp(value, "sync") != 0 && strcmp(value, "group") != 0)
            return -1;
        o->group_commit = strcmp(value, "group") == 0;
    } else if (strcmp(key, "group_commit_window") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 0 || v > 1000000)
            return -1;
        o->group_commit_window = v;
    } else if (strcmp(key, "http_port") == 0) {
        long p = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || p < -1 || p > 65535)
            return -1;
        o->http_port = (int)p;
    } else if (strcmp(key, "http_listen") == 0) {
        set_string(&o->http_listen, value);
    } else if (strcmp(key, "http_token") == 0) {
        set_string(&o->http_token, value);
    } else if (strcmp(key, "engine_workers") == 0 ||
               strcmp(key, "statement_workers") == 0) {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || v < 1 || v > 1024)
            return -1;
        if (key[0] == 'e')
            o->engine_workers = (int)v;
        else
            o->statement_workers = (int)v;
    } else if (strcmp(key, "files_root") == 0) {
        set_string(&o->files_root, value);
    } else if (strcmp(key, "kafka_allowed_hosts") == 0) {
        set_string(&o->kafka_allowed_hosts, value);
    } else if (strcmp(key, "debug_loop_lag") == 0) {
        return parse_bool(value, &o->debug_loop_lag);
    } else if (strcmp(key, "hba") == 0) {
        o->hba = sl_realloc(o->hba, sizeof(char *) * (size_t)(o->nhba + 1));
        o->hba[o->nhba++] = sl_strdup(value);
    } else {
        return -1;
    }
    return 0;
}

/* Cuts a line at a # that is not inside quotes. */
static void strip_comment(char *line)
{
    char quote = 0;
    for (char *p = line; *p; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        } else if (*p == '\'' || *p == '"') {
            quote = *p;
        } else if (*p == '#') {
            *p = '\0';
            return;
        }
    }
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Keeps a config line's name (dashes as underscores) and value for
 * SIGHUP's comparison, but users and hba rules, which it reloads. */
static void remember_pair(Options *o, const char *name, const char *value)
{
    if (strncmp(name, "user.", 5) == 0 || strcmp(name, "hba") == 0)
        return;
    size_t n = strlen(name), v = strlen(value);
    char *pair = sl_malloc(n + v + 2);
    for (size_t i = 0; i < n; i++)
        pair[i] = name[i] == '-' ? '_' : name[i];
    pair[n] = '=';
    memcpy(pair + n + 1, value, v + 1);
    o->pairs = sl_realloc(o->pairs, sizeof(char *) * (size_t)(o->npairs + 1));
    o->pairs[o->npairs++] = pair;
}

/* Reads `name = value` lines; # starts a comment; values may be quoted. */
static int read_config(Options *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "sluiced: cannot open config file %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        strip_comment(line);
        char *s = trim(line);
        if (*s == '\0')
            continue;
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            fprintf(stderr, "sluiced: %s:%d: expected name = value\n", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *name = trim(s), *value = trim(eq + 1);
        size_t vl = strlen(value);
        if (vl >= 2 && (value[0] == '\'' || value[0] == '"') && value[vl - 1] == value[0]) {
            value[vl - 1] = '\0';
            value++;
        }
        if (set_option(o, name, value) < 0) {
            fprintf(stderr, "sluiced: %s:%d: bad option %s = %s\n", path, lineno, name, value);
            rc = -1;
            break;
        }
        remember_pair(o, name, value);
    }
    fclose(f);
    return rc;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char *p = sl_strdup(path);
    int rc = 0;
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                rc = -1;
                break;
            }
            *s = c;
            if (c == '\0')
                break;
        }
    }
    sl_free(p);
    return rc;
}

/* The size of a file, or -1 when it does not exist (or cannot be read). */
static long long file_size(const char *dir, const char *name)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Takes the data directory for this process: an exclusive flock on
 * DIR/sluiced.lock, which then holds this process's id (as PostgreSQL's
 * postmaster.pid; the lock, not the file, is what counts, so a file left by
 * a crash is no obstacle).  Taken before anything in the directory is
 * opened, so a second server on it stops here with a clear message rather
 * than at RocksDB's LOCK after opening the catalog.  Returns the open
 * descriptor (kept until exit; the lock goes with the process), or -1
 * after logging why. */
static int lock_data_dir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/sluiced.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        sl_log(LOG_ERROR, "cannot open the data directory's lock file",
               "path=\"%s\" error=\"%s\"", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(fd);
        if (e == EWOULDBLOCK)
            sl_log(LOG_ERROR, "refusing to start: another sluiced is running on this data "
                              "directory",
                   "dir=\"%s\" pid=%s lock=\"%s\" hint=\"stop that server first, or give "
                   "this one another --data-dir\"", dir, pid[0] ? pid : "unknown", path);
        else
            sl_log(LOG_ERROR, "cannot lock the data directory", "path=\"%s\" error=\"%s\"",
                   path, strerror(e));
        return -1;
    }
    char pid[32];
    int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        sl_log(LOG_WARN, "cannot write the process id into the lock file",
               "path=\"%s\" error=\"%s\"", path, strerror(errno));
    return fd;
}

/* Refuses a data directory that has lost half of itself: a state store
 * without its catalog (deleted, or emptied: SQLite would start it afresh as
 * an empty server over the old state), or a catalog without its state
 * store.  0, or -1 after logging why (docs/operations.md, "Damaged data"). */
static int check_data_dir(const char *dir)
{
    long long cat = file_size(dir, "catalog.db");
    bool state = file_size(dir, "state/CURRENT") >= 0;
    if (state && cat <= 0) {
        sl_log(LOG_ERROR, "refusing to start: the catalog is missing or empty but the state "
                          "store exists",
               "dir=\"%s\" catalog_bytes=%lld hint=\"restore catalog.db from a backup, or "
               "move the data directory aside to start an empty server\"", dir, cat);
        return -1;
    }
    if (!state && cat > 0) {
        sl_log(LOG_ERROR, "refusing to start: the state store is missing but the catalog "
                          "exists",
               "dir=\"%s\" hint=\"restore state/ from a backup, or move the data directory "
               "aside to start an empty server\"", dir);
        return -1;
    }
    return 0;
}

static void options_free(Options *o)
{
    sl_free(o->listen);
    sl_free(o->data_dir);
    sl_free(o->log_level);
    sl_free(o->log_format);
    sl_free(o->ssl_cert_file);
    sl_free(o->ssl_key_file);
    sl_free(o->ssl_ca_file);
    sl_free(o->http_listen);
    sl_free(o->http_token);
    sl_free(o->files_root);
    sl_free(o->kafka_allowed_hosts);
    for (int i = 0; i < o->nhba; i++)
        sl_free(o->hba[i]);
    sl_free(o->hba);
    for (int i = 0; i < o->nusers; i++) {
        sl_free((char *)o->users[i].name);
        sl_free((char *)o->users[i].secret);
    }
    sl_free(o->users);
    sl_free(o->config);
    for (int i = 0; i < o->npairs; i++)
        sl_free(o->pairs[i]);
    sl_free(o->pairs);
}

/* Command line over config file: the file is read first, then the options
 * given on the command line are applied again on top of it. */
static int parse_args(int argc, char **argv, Options *o)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"port", required_argument, NULL, 'p'},
        {"data-dir", required_argument, NULL, 'D'},
        {"log-level", required_argument, NULL, 1},
        {"log-format", required_argument, NULL, 2},
        {"max-connections", required_argument, NULL, 3},
        {"max-message-size", required_argument, NULL, 4},
        {"max-output-buffer", required_argument, NULL, 5},
        {"max-prepared-statements", required_argument, NULL, 60},
        {"shutdown-timeout", required_argument, NULL, 61},
        {"ssl", required_argument, NULL, 6},
        {"ssl-cert-file", required_argument, NULL, 7},
        {"ssl-key-file", required_argument, NULL, 8},
        {"ssl-ca-file", required_argument, NULL, 9},
        {"hba", required_argument, NULL, 10},
        {"debug-loop-lag", no_argument, NULL, 11},
        {"authentication-timeout", required_argument, NULL, 12},
        {"commit-mode", required_argument, NULL, 13},
        {"group-commit-window", required_argument, NULL, 14},
        {"http-port", required_argument, NULL, 15},
        {"max-memory", required_argument, NULL, 50},
        {"http-listen", required_argument, NULL, 16},
        {"http-token", required_argument, NULL, 17},
        {"engine-workers", required_argument, NULL, 18},
        {"statement-workers", required_argument, NULL, 19},
        {"files-root", required_argument, NULL, 40},
        {"kafka-allowed-hosts", required_argument, NULL, 41},
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"list-options", no_argument, NULL, 62},
        {"log-min-duration-statement", required_argument, NULL, 64},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    for (int pass = 0; pass < 2; pass++) {
        optind = 1;
        int ch, idx;
        while ((ch = getopt_long(argc, argv, "l:p:D:c:hV", longopts, &idx)) != -1) {
            if (ch == '?')
                return 2;
            if (ch == 'h') {
                usage(stdout);
                return 1;
            }
            if (ch == 'V') {
                printf("sluiced %s (commit %s)\n", SLUICE_VERSION, SLUICE_COMMIT);
                return 1;
            }
            if (ch == 62) {
                list_options();
                return 1;
            }
            if (ch == 'c') {
                config = optarg;
                continue;
            }
            if (pass == 0)
                continue;
            const char *name = NULL;
            for (const struct option *lo = longopts; lo->name; lo++)
                if (lo->val == ch)
                    name = lo->name;
            if (ch == 10 && !o->hba_from_cli) {
                /* The first --hba drops the config file's rules. */
                for (int i = 0; i < o->nhba; i++)
                    sl_free(o->hba[i]);
                o->nhba = 0;
                o->hba_from_cli = true;
            }
            if (set_option(o, name, optarg ? optarg : "on") < 0) {
                fprintf(stderr, "sluiced: bad value for --%s: %s\n", name, optarg);
                return 2;
            }
        }
        if (optind < argc) {
            fprintf(stderr, "sluiced: unexpected argument: %s\n", argv[optind]);
            return 2;
        }
        if (pass == 0 && config != NULL && read_config(o, config) < 0)
            return 2;
        if (pass == 0 && config != NULL)
            o->config = sl_strdup(config);
    }
    return 0;
}

/* --max-memory's default: half of the physical memory, or a quarter of
 * the address-space limit (ulimit -v, prlimit --as) when that is smaller:
 * address space also holds the libraries, thread stacks, malloc's
 * per-thread reserves, RocksDB and the connections' buffers. */
static long default_max_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double bytes = pages > 0 && page > 0 ? (double)pages * (double)page / 2 : 4.0 * (1L << 30);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (double)rl.rlim_cur / 4 < bytes)
        bytes = (double)rl.rlim_cur / 4;
    return (long)SL_MAX(bytes, 16.0 * (1L << 20));
}

/* Under an address-space limit (ulimit -v, prlimit --as), bound glibc's
 * malloc arenas: each thread that allocates may get an arena of its own,
 * and each arena reserves 64 MiB of address space (up to eight per core),
 * so a server with a few dozen threads would exhaust a 2 GiB limit with
 * reservations alone.  One arena per 1 GiB of the limit, 1 to 8. */
static void bound_malloc_arenas(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return;
    long arenas = (long)(rl.rlim_cur >> 30);
    arenas = SL_MAX(1, SL_MIN(arenas, 8));
    if (mallopt(M_ARENA_MAX, (int)arenas) == 1)
        sl_log(LOG_INFO, "malloc arenas bounded under the address-space limit",
               "arenas=%ld limit=%llu", arenas, (unsigned long long)rl.rlim_cur);
}

/* ---------------------------------------------------------------------- */

typedef struct App {
    Runtime     *rt;            /* the server's context (runtime.h) */
    uv_signal_t  sigint, sigterm, sighup;
    Server      *server;
    Options     *opts;          /* what the server started with */
    bool         stopping;
} App;

/* sluice_pool_threads, _running and _queued per pool (engine, statement),
 * read when /metrics is scraped. */
static void collect_pools(StrBuf *out, void *arg)
{
    App *app = arg;
    Pool *pools[2] = {app->rt->engine, app->rt->statements};
    static const char *const pool_names[2] = {"engine", "statement"};
    static const char *const families[3][2] = {
        {"sluice_pool_threads", "Worker threads of the pool."},
        {"sluice_pool_running", "Work items running on the pool's threads now."},
        {"sluice_pool_queued", "Work items waiting for a thread of the pool (statements "
                               "beyond statement_workers)."},
    };
    int v[2][3];
    for (int i = 0; i < 2; i++)
        pool_stats(pools[i], &v[i][0], &v[i][1], &v[i][2]);
    for (int f = 0; f < 3; f++) {
        metrics_family(out, families[f][0], "gauge", families[f][1]);
        for (int i = 0; i < 2; i++) {
            char labels[32];
            snprintf(labels, sizeof(labels), "pool=\"%s\"", pool_names[i]);
            metrics_sample(out, families[f][0], labels, v[i][f]);
        }
    }
}

/* sluice_stream_appends_total and sluice_stream_writes_total: the appends
 * to streams of the state store given as arg and the synced writes they
 * took (stream_commit_stats), read when /metrics is scraped. */
static void collect_commit(StrBuf *out, void *arg)
{
    int64_t appends, writes;
    stream_commit_stats(arg, &appends, &writes);
    metrics_family(out, "sluice_stream_appends_total", "counter",
                   "Appends to streams made durable since the server started.");
    metrics_sample(out, "sluice_stream_appends_total", "", (double)appends);
    metrics_family(out, "sluice_stream_writes_total", "counter",
                   "Synced state store writes those appends took (fewer under group commit).");
    metrics_sample(out, "sluice_stream_writes_total", "", (double)writes);
}

/* sluice_build_info: 1, labelled with the version and the git commit
 * (version.h: "unknown" when built outside a git checkout). */
static void collect_build(StrBuf *out, void *arg)
{
    SL_UNUSED(arg);
    metrics_family(out, "sluice_build_info", "gauge",
                   "1, labelled with the version and git commit of the running sluiced.");
    StrBuf labels;
    strbuf_init(&labels);
    metrics_label(&labels, "version", SLUICE_VERSION);
    metrics_label(&labels, "commit", SLUICE_COMMIT);
    metrics_sample(out, "sluice_build_info", labels.data, 1);
    strbuf_free(&labels);
}

static void on_server_closed(Server *s)
{
    sl_free(s);
}

/* The index of the first of o's config lines with pair's name. */
static int first_pair(const Options *o, const char *pair)
{
    size_t klen = (size_t)(strchr(pair, '=') - pair) + 1;
    for (int i = 0; i < o->npairs; i++)
        if (strncmp(o->pairs[i], pair, klen) == 0)
            return i;
    return -1;
}

/* The value of o's last config line with pair's name, or NULL. */
static const char *pair_value(const Options *o, const char *pair)
{
    size_t klen = (size_t)(strchr(pair, '=') - pair) + 1;
    const char *found = NULL;
    for (int i = 0; i < o->npairs; i++)
        if (strncmp(o->pairs[i], pair, klen) == 0)
            found = o->pairs[i] + klen;
    return found;
}

/* Logs a WARNING for each setting whose value differs between the config
 * file as the server read it (from) and as it reads now (to), one added
 * or removed included: what SIGHUP does not apply. */
static void warn_changed(const Options *from, const Options *to)
{
    const Options *sides[2] = {from, to};
    for (int side = 0; side < 2; side++) {
        for (int i = 0; i < sides[side]->npairs; i++) {
            const char *pair = sides[side]->pairs[i];
            if (first_pair(sides[side], pair) != i || (side == 1 && first_pair(from, pair) >= 0))
                continue;                   /* a name once */
            const char *was = pair_value(from, pair), *now = pair_value(to, pair);
            if (was == NULL || now == NULL || strcmp(was, now) != 0)
                sl_log(LOG_WARN, "setting changed in the config file needs a restart",
                       "parameter=%.*s", (int)(strchr(pair, '=') - pair), pair);
        }
    }
}

/* SIGHUP: reads the config file again and gives the server its users and
 * hba rules (unless --hba on the command line set the rules: those stay);
 * on any error the old ones stay.  Other settings need a restart: each
 * one changed is logged.  The md5 hashes follow the new rules
 * (rt_roles_md5: dropped when no rule uses md5; once dropped they are not
 * made again, as the passwords are not kept). */
static void on_sighup(uv_signal_t *h, int signum)
{
    (void)signum;
    App *app = h->data;
    Options *o = app->opts;
    if (app->stopping)
        return;
    if (o->config == NULL) {
        sl_log(LOG_INFO, "SIGHUP: nothing to reload", "reason=\"no --config file\"");
        return;
    }
    Options n = {0};
    SlError err = {0};
    if (read_config(&n, o->config) < 0) {
        sl_log(LOG_ERROR, "configuration not reloaded: the config file has an error",
               "path=\"%s\"", o->config);
        options_free(&n);
        return;
    }
    char **hba = o->hba_from_cli ? o->hba : n.hba;
    int nhba = o->hba_from_cli ? o->nhba : n.nhba;
    if (server_reload_auth(app->server, n.users, n.nusers, (const char *const *)hba, nhba,
                           &err) < 0) {
        sl_log(LOG_ERROR, "configuration not reloaded", "path=\"%s\" error=\"%s\"", o->config,
               log_quote(err.message));
    } else if (rt_roles_md5(app->rt, server_md5_rules(app->server), &err) < 0) {
        sl_log(LOG_ERROR, "cannot drop the md5 password hashes", "error=\"%s\"",
               log_quote(err.message));
    } else {
        warn_changed(o, &n);
        sl_log(LOG_INFO, "configuration reloaded", "path=\"%s\" hba_rules=%d hba_from=%s users=%d",
               o->config, nhba, o->hba_from_cli ? "command-line" : "config", n.nusers);
    }
    sl_error_clear(&err);
    options_free(&n);
}

static void on_signal(uv_signal_t *h, int signum)
{
    App *app = h->data;
    if (app->stopping)
        return;
    app->stopping = true;
    sl_log(LOG_INFO, "shutting down", "signal=%d", signum);
    uv_close((uv_handle_t *)&app->sigint, NULL);
    uv_close((uv_handle_t *)&app->sigterm, NULL);
    uv_close((uv_handle_t *)&app->sighup, NULL);
    server_close(app->server, on_server_closed);
    ingest_close(app->rt);
    http_pages_close(app->rt, NULL);
    rt_cq_close(app->rt->cq, NULL, NULL);
}

int main(int argc, char **argv)
{
    Options o = {0};
    o.listen = sl_strdup("127.0.0.1");
    o.port = 7433;
    o.data_dir = sl_strdup("./data");
    o.log_level = sl_strdup("info");
    o.log_format = sl_strdup("text");
    o.max_connections = 1000;
    o.max_message_size = 64L << 20;
    o.max_output_buffer = 8L << 20;
    o.max_prepared_statements = 10000;
    o.shutdown_timeout = 10;
    o.authentication_timeout = 60;
    o.log_min_duration_statement = -1;
    o.group_commit_window = 0;
    o.http_port = -1;
    o.http_listen = sl_strdup("127.0.0.1");
    o.engine_workers = (int)SL_MAX(4u, uv_available_parallelism());
    o.statement_workers = 4;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        options_free(&o);
        return rc == 1 ? 0 : 2;
    }
    sl_mem_server_limit_set((size_t)(o.max_memory ? o.max_memory : default_max_memory()));
    bound_malloc_arenas();
    log_set_level((LogLevel)log_level_parse(o.log_level));
    log_set_json(strcmp(o.log_format, "json") == 0);
    signal(SIGPIPE, SIG_IGN);

    int exit_code = 1;
    int lock_fd = -1;       /* the data directory's, held until exit */
    SlError err = {0};
    char path[4096];
    App app;
    memset(&app, 0, sizeof(app));
    RuntimeOptions ro = {.engine_workers = o.engine_workers,
                         .statement_workers = o.statement_workers};
    Runtime *rt = app.rt = rt_create(&ro);
    metrics_register(collect_pools, &app);

    if (make_dirs(o.data_dir) < 0) {
        sl_log(LOG_ERROR, "cannot create data directory", "dir=\"%s\" error=\"%s\"",
               o.data_dir, strerror(errno));
        goto out;
    }
    lock_fd = lock_data_dir(o.data_dir);
    if (lock_fd < 0 || check_data_dir(o.data_dir) < 0)
        goto out;
    snprintf(path, sizeof(path), "%s/catalog.db", o.data_dir);
    if (cat_open(path, &rt->cat, &err) < 0) {
        sl_log(LOG_ERROR, "cannot open catalog", "error=\"%s\"", err.message);
        goto out;
    }
    snprintf(path, sizeof(path), "%s/state", o.data_dir);
    if (state_open(path, &rt->st, &err) < 0) {
        sl_log(LOG_ERROR, "cannot open state store", "error=\"%s\"", err.message);
        goto out;
    }
    /* Statements reach the stores through the runtime, and the system
     * catalog it makes takes the server's sessions (server_init). */
    rt_init(rt);

    ServerConfig cfg = {
        .listen = o.listen,
        .port = o.port,
        .max_connections = o.max_connections,
        .max_message_size = (size_t)o.max_message_size,
        .max_output_buffer = (size_t)o.max_output_buffer,
        .max_prepared_statements = o.max_prepared_statements,
        .shutdown_timeout = o.shutdown_timeout,
        .authentication_timeout = o.authentication_timeout,
        .log_min_duration_statement = o.log_min_duration_statement,
        .users = o.users,
        .nusers = o.nusers,
        .hba = (const char *const *)o.hba,
        .nhba = o.nhba,
        .ssl = o.ssl,
        .ssl_cert_file = o.ssl_cert_file,
        .ssl_key_file = o.ssl_key_file,
        .ssl_ca_file = o.ssl_ca_file,
        .debug_loop_lag = o.debug_loop_lag,
        .statements = rt->statements,
        .rt = rt,
    };
    app.server = server_init(&rt->loop, &cfg, &err);
    if (app.server == NULL) {
        sl_log(LOG_ERROR, "cannot start the server", "error=\"%s\" hint=\"%s\"",
               log_quote(err.message), log_quote(err.hint ? err.hint : ""));
        goto out;
    }
    /* Continuous queries resume after their last committed batch. */
    stream_commit_mode_set(rt->st, o.group_commit ? STREAM_COMMIT_GROUP : STREAM_COMMIT_SYNC,
                           o.group_commit_window);
    metrics_register(collect_commit, rt->st);
    metrics_register(collect_build, NULL);
    if (rt_host_init(rt, o.files_root, o.data_dir, o.kafka_allowed_hosts, &err) < 0) {
        sl_log(LOG_ERROR, "cannot set up host access", "error=\"%s\"", log_quote(err.message));
        server_close(app.server, on_server_closed);
        goto out;
    }
    if (rt_roles_md5(rt, server_md5_rules(app.server), &err) < 0) {
        sl_log(LOG_ERROR, "cannot drop the md5 password hashes", "error=\"%s\"",
               log_quote(err.message));
        server_close(app.server, on_server_closed);
        goto out;
    }
    publish_settings(rt, &o, server_port(app.server));
    rt->cq = rt_cq_init(rt);
    ingest_init(rt);
    if (o.http_port >= 0 &&
        http_pages_start(rt, o.http_listen, o.http_port, o.http_token,
                         SLUICE_VERSION " (" SLUICE_COMMIT ")", &err) < 0) {
        sl_log(LOG_ERROR, "cannot start the HTTP listener", "error=\"%s\" hint=\"%s\"",
               log_quote(err.message), log_quote(err.hint ? err.hint : ""));
        server_close(app.server, on_server_closed);
        goto out;
    }
    uv_signal_init(&rt->loop, &app.sigint);
    uv_signal_init(&rt->loop, &app.sigterm);
    uv_signal_init(&rt->loop, &app.sighup);
    app.sigint.data = app.sigterm.data = app.sighup.data = &app;
    app.opts = &o;
    uv_signal_start(&app.sigint, on_signal, SIGINT);
    uv_signal_start(&app.sigterm, on_signal, SIGTERM);
    uv_signal_start(&app.sighup, on_sighup, SIGHUP);

    /* The HTTP line comes first: the ready line is the last of start-up. */
    char http_port[16];
    snprintf(http_port, sizeof(http_port), "%d", http_pages_port(rt));
    rt_setting_set(rt, "http_port", http_port,
                   "HTTP port of /metrics and the query pages (-1: off)");
    rt_setting_set(rt, "http_listen", o.http_listen, "address of the HTTP listener");
    if (http_pages_port(rt) >= 0)
        sl_log(LOG_INFO, "http ready", "listen=%s:%d auth=%s metrics=\"http://%s:%d/metrics\"",
               o.http_listen, http_pages_port(rt), o.http_token && *o.http_token ? "token" : "none",
               o.http_listen, http_pages_port(rt));
    int port = server_port(app.server);
    sl_log(LOG_INFO, "sluiced ready",
           "version=%s commit=%s listen=%s:%d data_dir=\"%s\" ssl=%s hba_rules=%d users=%d "
           "commit_mode=%s connect=\"psql -h %s -p %d -U sluice\"",
           SLUICE_VERSION, SLUICE_COMMIT, o.listen, port, o.data_dir, o.ssl ? "on" : "off", o.nhba,
           o.nusers, o.group_commit ? "group" : "sync", o.listen, port);
    uv_run(&rt->loop, UV_RUN_DEFAULT);
    exit_code = 0;
    int64_t appends, writes;
    stream_commit_stats(rt->st, &appends, &writes);
    sl_log(LOG_INFO, "sluiced stopped", "appends=%lld writes=%lld", (long long)appends,
           (long long)writes);

out:
    /* Stop queries still running (a no-op after a signal), run the close
     * callbacks still pending, and the loop is empty. */
    ingest_close(rt);
    rt_cq_close(rt->cq, NULL, NULL);
    http_pages_close(rt, NULL);
    uv_run(&rt->loop, UV_RUN_DEFAULT);
    /* Nothing is outstanding on the pools now: the loop ended.  The
     * registry of continuous queries and the system catalog go once the
     * pools have stopped: a statement on a worker may read them until then. */
    metrics_unregister(collect_pools, &app);
    metrics_unregister(collect_commit, rt->st);
    metrics_unregister(collect_build, NULL);
    pool_close(rt->engine);
    pool_close(rt->statements);
    rt->engine = rt->statements = NULL;
    uv_run(&rt->loop, UV_RUN_DEFAULT);
    rt_cq_free(rt->cq);
    rt->cq = NULL;
    rt_shutdown(rt);
    rt_host_free(rt);
    StateStore *state = rt->st;
    Catalog *cat = rt->cat;
    rt_destroy(rt);
    state_close(state);
    cat_close(cat);
    if (lock_fd >= 0)
        close(lock_fd);     /* the stores are closed: another server may start */
    sl_error_clear(&err);
    options_free(&o);
    return exit_code;
}
