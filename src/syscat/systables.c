/*
 * systables.c -- the sys schema: sluice's own system tables, real
 * relations (vrel.h) that join, filter and aggregate like any other.
 *
 *   sys_register      add the sys.* relations to the registry
 *   syscat_setting_set  record a server setting (main, at start, through
 *                     rt_setting_set) for sys.settings and pg_settings
 *   sys_settings_foreach   visit them (pgcatalog.c)
 *   sys_settings_free      forget them (syscat_destroy)
 *
 *   sys.streams       streams: columns, options, row count / next offset
 *   sys.tables        tables: columns, primary key, options
 *   sys.sinks         sinks and their options
 *   sys.queries       continuous queries: status, trigger, output mode,
 *                     last batch, last error (NULL to a role without SELECT
 *                     on the query: it can quote data), times
 *   sys.state         per continuous query and operator that keeps state:
 *                     rows, bytes (exact, on disk, in cache), rows
 *                     evicted, the oldest window
 *   sys.source_lag    per running query, source and partition: committed
 *                     and latest offsets, lag, last poll (cq_source_lag)
 *   sys.settings      the server's settings
 *   (sys.connections: sessions.c)
 *
 * The catalog, the running queries (syscat_cq_runtime) and the settings
 * are the Syscat's whose relation is read (vrel_rows_syscat).  A sys table is one VrelDef line and
 * one producer below.  Options and
 * SQL text are shown with their secrets masked (opts_mask_json,
 * sql_redact_secrets), to every role, superusers too.
 */
#include "syscat_int.h"
#include "sluice/cq.h"
#include "sluice/expr.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/vrel.h"

#include <stdio.h>

/* ------------------------------------------------------------- settings */

struct SysSetting {
    char *name, *value, *description;
};

void syscat_setting_set(Syscat *sc, const char *name, const char *value,
                        const char *description)
{
    for (int i = 0; i < sc->nsettings; i++) {
        if (strcmp(sc->settings[i].name, name) == 0) {
            sl_free(sc->settings[i].value);
            sc->settings[i].value = sl_strdup(value ? value : "");
            return;
        }
    }
    sc->settings = sl_realloc(sc->settings,
                              sizeof(struct SysSetting) * (size_t)(sc->nsettings + 1));
    sc->settings[sc->nsettings].name = sl_strdup(name);
    sc->settings[sc->nsettings].value = sl_strdup(value ? value : "");
    sc->settings[sc->nsettings].description = sl_strdup(description ? description : "");
    sc->nsettings++;
}

void sys_settings_free(Syscat *sc)
{
    for (int i = 0; i < sc->nsettings; i++) {
        sl_free(sc->settings[i].name);
        sl_free(sc->settings[i].value);
        sl_free(sc->settings[i].description);
    }
    sl_free(sc->settings);
    sc->settings = NULL;
    sc->nsettings = 0;
}

void sys_settings_foreach(const Syscat *sc,
                          void (*fn)(const char *name, const char *value,
                                     const char *description, void *arg),
                          void *arg)
{
    for (int i = 0; i < sc->nsettings; i++)
        fn(sc->settings[i].name, sc->settings[i].value, sc->settings[i].description, arg);
}

/* ------------------------------------------------------------ relations */

/* "a bigint, b text" in a. */
static const char *columns_text(Arena *a, const CatRelation *rel)
{
    StrBuf b;
    strbuf_init(&b);
    for (int c = 0; c < rel->ncols; c++) {
        char tbuf[64];
        strbuf_printf(&b, "%s%s %s%s", c ? ", " : "", rel->cols[c].name,
                      type_format(rel->cols[c].type, tbuf, sizeof(tbuf)),
                      rel->cols[c].not_null ? " not null" : "");
    }
    const char *s = arena_strndup(a, b.data ? b.data : "", b.len);
    strbuf_free(&b);
    return s;
}

typedef struct RelWalk {
    VrelRows *out;
    RelKind   kind;
    int       rc;
} RelWalk;

static void streams_cb(const CatRelation *rel, void *arg)
{
    RelWalk *w = arg;
    if (rel->kind != w->kind || w->rc < 0)
        return;
    VrelRows *r = w->out;
    int64_t end = -1;
    if (vrel_rows_state(r) != NULL) {
        SlError e = {0};
        end = stream_end_offset(vrel_rows_state(r), rel, &e);
        sl_error_clear(&e);
    }
    vrel_row(r);
    vrel_put_int(r, rel->oid);
    vrel_put_text(r, rel->name);
    vrel_put_text(r, columns_text(vrel_rows_arena(r), rel));
    vrel_put_text(r, opts_mask_json(vrel_rows_arena(r), rel->options));
    vrel_put_unix_us(r, rel->created_at);
    if (end >= 0) {
        vrel_put_int(r, end);
        vrel_put_int(r, end);
    } else {
        vrel_put_null(r);
        vrel_put_null(r);
    }
    vrel_put_text(r, sql_redact_secrets(vrel_rows_arena(r), rel->sql));
}

static int produce_streams(VrelRows *out)
{
    RelWalk w = {out, REL_STREAM, 0};
    cat_foreach(vrel_rows_syscat(out)->cat, streams_cb, &w);
    return w.rc;
}

static void tables_cb(const CatRelation *rel, void *arg)
{
    RelWalk *w = arg;
    if (rel->kind != w->kind)
        return;
    VrelRows *r = w->out;
    vrel_row(r);
    vrel_put_int(r, rel->oid);
    vrel_put_text(r, rel->name);
    if (w->kind == REL_TABLE) {
        vrel_put_text(r, columns_text(vrel_rows_arena(r), rel));
        StrBuf b;
        strbuf_init(&b);
        for (int k = 0; k < rel->npk; k++)
            strbuf_printf(&b, "%s%s", k ? ", " : "", rel->cols[rel->pk[k]].name);
        vrel_put_text(r, rel->npk ? arena_strndup(vrel_rows_arena(r), b.data, b.len) : NULL);
        strbuf_free(&b);
    }
    vrel_put_text(r, opts_mask_json(vrel_rows_arena(r), rel->options));
    vrel_put_unix_us(r, rel->created_at);
    vrel_put_text(r, sql_redact_secrets(vrel_rows_arena(r), rel->sql));
}

static int produce_tables(VrelRows *out)
{
    RelWalk w = {out, REL_TABLE, 0};
    cat_foreach(vrel_rows_syscat(out)->cat, tables_cb, &w);
    return 0;
}

static int produce_sinks(VrelRows *out)
{
    RelWalk w = {out, REL_SINK, 0};
    cat_foreach(vrel_rows_syscat(out)->cat, tables_cb, &w);
    return 0;
}

/* ------------------------------------------------------------- queries */

typedef struct QueryWalk {
    VrelRows *out;
    bool      state;        /* sys.state rather than sys.queries */
} QueryWalk;

/* The running status of a query, if it runs in this server. */
typedef struct FindCq {
    CqStatus st;
    bool     found;
} FindCq;

static void put_watermark(VrelRows *r, bool has, int64_t pg_us)
{
    /* the engine keeps event time as microseconds since 2000-01-01 */
    if (has)
        vrel_put_pg_us(r, pg_us);
    else
        vrel_put_null(r);
}

static void queries_cb(const CatRelation *rel, void *arg)
{
    QueryWalk *w = arg;
    if (rel->kind != REL_QUERY)
        return;
    VrelRows *r = w->out;
    Arena *a = vrel_rows_arena(r);
    FindCq f = {{0}, false};
    Syscat *sc = vrel_rows_syscat(r);
    struct CqRuntime *cqs = syscat_cq_runtime(sc);
    f.found = cqs != NULL && cq_status_of(cqs, rel->name, &f.st);
    const char *status = NULL, *error = NULL;
    SlError e = {0};
    if (!f.found && cat_cq_status_get(sc->cat, rel->oid, a, &status, &error, &e) < 0)
        status = NULL;
    sl_error_clear(&e);
    if (f.found) {
        status = f.st.status;
        error = f.st.error;
    }
    int64_t last = f.found ? f.st.last_batch_id : -1;
    if (!f.found) {
        last = cat_commit_last(sc->cat, rel->oid, &e);
        sl_error_clear(&e);
    }
    Options o = {0};
    if (opts_parse(a, rel->options, &o, &e) < 0)
        sl_error_clear(&e);
    if (w->state) {
        CqOpState ops[CQ_MAX_OPS];
        int n = f.found ? cq_state(cqs, rel->name, ops, &e) : 0;
        sl_error_clear(&e);
        for (int i = 0; i < n; i++) {
            vrel_row(r);
            vrel_put_text(r, rel->name);
            vrel_put_int(r, rel->oid);
            vrel_put_text(r, ops[i].op);
            vrel_put_int(r, ops[i].rows);
            vrel_put_int(r, ops[i].bytes);
            vrel_put_int(r, (int64_t)ops[i].disk_bytes);
            vrel_put_int(r, (int64_t)ops[i].cache_bytes);
            vrel_put_int(r, ops[i].evicted);
            put_watermark(r, ops[i].has_oldest_window, ops[i].oldest_window_us);
            if (last >= 0)
                vrel_put_int(r, last);
            else
                vrel_put_null(r);
            put_watermark(r, f.st.has_watermark, f.st.watermark_us);
        }
        return;
    }
    vrel_row(r);
    vrel_put_int(r, rel->oid);
    vrel_put_text(r, rel->name);
    vrel_put_text(r, status ? status : "stopped");
    vrel_put_text(r, sql_redact_secrets(a, rel->sql));
    const char *trigger = opts_get(&o, "trigger");
    const char *mode = opts_get(&o, "output_mode");
    vrel_put_text(r, trigger ? trigger : "1 second");
    vrel_put_text(r, mode ? mode : "append");
    if (last >= 0)
        vrel_put_int(r, last);
    else
        vrel_put_null(r);
    /* An error can quote the row it failed on: only a role that may read
     * the query's result sees it (the rest get NULL). */
    SlError denied = {0};
    if (error != NULL && syscat_check_select(sc, rel, &denied) < 0)
        error = NULL;
    sl_error_clear(&denied);
    vrel_put_text(r, error);
    vrel_put_bool(r, f.found && f.st.falling_behind);
    vrel_put_unix_us(r, rel->created_at);
    vrel_put_unix_us(r, f.found ? f.st.started_us : 0);
    if (f.found)
        vrel_put_int(r, f.st.input_rows);
    else
        vrel_put_null(r);
    put_watermark(r, f.found && f.st.has_watermark, f.st.watermark_us);
}

static int produce_queries(VrelRows *out)
{
    QueryWalk w = {out, false};
    cat_foreach(vrel_rows_syscat(out)->cat, queries_cb, &w);
    return 0;
}

static int produce_state(VrelRows *out)
{
    QueryWalk w = {out, true};
    cat_foreach(vrel_rows_syscat(out)->cat, queries_cb, &w);
    return 0;
}

/* ---------------------------------------------------------- source lag */

static void source_lag_cb(const CqSourceLag *l, void *arg)
{
    VrelRows *r = arg;
    vrel_row(r);
    vrel_put_text(r, l->query);
    vrel_put_text(r, l->source);
    vrel_put_text(r, l->topic);
    vrel_put_int(r, l->partition);
    vrel_put_int(r, l->committed);
    vrel_put_int(r, l->latest);
    vrel_put_int(r, l->lag);
    vrel_put_unix_us(r, l->last_poll_us);
}

static int produce_source_lag(VrelRows *out)
{
    struct CqRuntime *cqs = syscat_cq_runtime(vrel_rows_syscat(out));
    if (cqs != NULL)
        cq_source_lag(cqs, source_lag_cb, out);
    return 0;
}

/* ------------------------------------------------------------- settings */

static void settings_cb(const char *name, const char *value, const char *description,
                        void *arg)
{
    VrelRows *r = arg;
    vrel_row(r);
    vrel_put_text(r, name);
    vrel_put_text(r, value);
    vrel_put_text(r, description);
}

static int produce_settings(VrelRows *out)
{
    sys_settings_foreach(vrel_rows_syscat(out), settings_cb, out);
    return 0;
}

static const VrelDef sys_defs[] = {
    {"sys", "streams", 14001,
     "oid oid, name text, columns text, options jsonb, created_at timestamptz, "
     "row_count int8, next_offset int8, sql text",
     produce_streams, "streams: columns, options, rows"},
    {"sys", "tables", 14002,
     "oid oid, name text, columns text, primary_key text, options jsonb, "
     "created_at timestamptz, sql text",
     produce_tables, "tables: columns, primary key, options"},
    {"sys", "sinks", 14003, "oid oid, name text, options jsonb, created_at timestamptz, sql text",
     produce_sinks, "sinks and their options"},
    {"sys", "queries", 14004,
     "oid oid, name text, status text, sql text, trigger text, output_mode text, "
     "last_batch_id int8, last_error text, falling_behind bool, created_at timestamptz, "
     "started_at timestamptz, input_rows int8, watermark timestamptz",
     produce_queries, "continuous queries: status, trigger, last batch, last error"},
    {"sys", "state", 14005,
     "query text, query_oid oid, operator text, state_rows int8, state_bytes int8, "
     "bytes_on_disk int8, bytes_in_cache int8, evicted_rows int8, oldest_window timestamptz, "
     "last_batch_id int8, "
     "watermark timestamptz",
     produce_state, "the state each continuous query keeps"},
    {"sys", "settings", 14006, "name text, setting text, description text", produce_settings,
     "the server's settings"},
    {"sys", "source_lag", 14009,
     "query text, source text, topic text, partition int4, committed_offset int8, "
     "latest_offset int8, lag int8, last_poll timestamptz",
     produce_source_lag, "per running query, source and partition: offsets and lag"},
};

void sys_register(Syscat *sc)
{
    vrel_register(sc, sys_defs, (int)SL_ARRAY_LEN(sys_defs));
    sys_progress_register(sc);
    sessions_register(sc);
}
