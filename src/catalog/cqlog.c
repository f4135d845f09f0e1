/*
 * cqlog.c -- the offset log, the commit log and the status of continuous
 * queries, in the SQLite catalog (docs/engine.md).
 *
 *   cat_offsets_append, cat_offsets_append_after, cat_offsets_last
 *   cat_commit_append, cat_commit_last
 *   cat_cq_purge
 *   cat_cq_status_set, cat_cq_status_get
 *
 * Every write is its own transaction under synchronous = FULL: when the
 * call returns, the entry survives a power cut.  cat_offsets_append_after
 * writes the commit entry of one batch and the offset entry of the next in
 * one transaction (one fsync instead of two, for back-to-back batches).
 * Each log write passes the fault point log_write_no_space (an I/O error
 * for want of space, docs/development.md).
 */
#include "catalog_int.h"

#include <errno.h>

/* Prepares, binds nothing, returns the statement or NULL with err set. */
static sqlite3_stmt *prepare(Catalog *cat, const char *sql, SlError *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(cat->db, sql, -1, &st, NULL) != SQLITE_OK) {
        cat_db_error(cat, err);
        return NULL;
    }
    return st;
}

/* Steps a statement that returns no rows and finalizes it. */
static int step_done(Catalog *cat, sqlite3_stmt *st, SlError *err)
{
    int rc = sqlite3_step(st);
    int ret = rc == SQLITE_DONE ? 0 : cat_db_error(cat, err);
    sqlite3_finalize(st);
    return ret;
}

/* Fault point log_write_no_space: the log write fails as SQLite's does
 * when the system refuses it for space with an I/O error (SQLITE_IOERR,
 * errno ENOSPC: growing the WAL's shared-memory file, say), which a tmpfs
 * never gives (its writes give SQLITE_FULL).  True when it failed. */
static bool log_write_fault(SlError *err)
{
    if (!SLUICE_FAULT_FAILS("log_write_no_space"))
        return false;
    cat_db_error_as(SQLITE_IOERR_WRITE, ENOSPC,
                    "disk I/O error (fault point log_write_no_space)", err);
    return true;
}

/* Inserts batch o's offset-log entry (in the caller's transaction, if any). */
static int insert_offsets(Catalog *cat, uint32_t query_oid, const CqOffsets *o, SlError *err)
{
    if (log_write_fault(err))
        return -1;
    sqlite3_stmt *st = prepare(cat,
        "INSERT INTO cq_offsets (query_oid, batch_id, sources, watermark_us, batch_ts_us)"
        " VALUES (?, ?, ?, ?, ?)", err);
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, query_oid);
    sqlite3_bind_int64(st, 2, o->batch_id);
    sqlite3_bind_text(st, 3, o->sources, -1, SQLITE_STATIC);
    if (o->has_watermark)
        sqlite3_bind_int64(st, 4, o->watermark_us);
    else
        sqlite3_bind_null(st, 4);
    sqlite3_bind_int64(st, 5, o->batch_ts_us);
    return step_done(cat, st, err);
}

/* Inserts batch_id's commit-log entry (in the caller's transaction, if any);
 * an entry already there is kept. */
static int insert_commit(Catalog *cat, uint32_t query_oid, int64_t batch_id, SlError *err)
{
    if (log_write_fault(err))
        return -1;
    sqlite3_stmt *st = prepare(cat,
        "INSERT OR IGNORE INTO cq_commits (query_oid, batch_id, committed_at_us)"
        " VALUES (?, ?, ?)", err);
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, query_oid);
    sqlite3_bind_int64(st, 2, batch_id);
    sqlite3_bind_int64(st, 3, cat_now_usec());
    return step_done(cat, st, err);
}

int cat_offsets_append(Catalog *cat, uint32_t query_oid, const CqOffsets *o, SlError *err)
{
    SLUICE_FAULT("offsets_before_write");
    int rc = insert_offsets(cat, query_oid, o, err);
    SLUICE_FAULT("offsets_after_write");
    return rc;
}

int cat_offsets_append_after(Catalog *cat, uint32_t query_oid, int64_t committed,
                             const CqOffsets *o, SlError *err)
{
    if (committed < 0)
        return cat_offsets_append(cat, query_oid, o, err);
    /* Both fault points before the transaction: a kill there leaves
     * neither entry, as a kill before each of two separate writes would
     * leave the state the first point describes. */
    SLUICE_FAULT("commit_log_before_write");
    SLUICE_FAULT("offsets_before_write");
    if (cat_exec(cat, "BEGIN IMMEDIATE;", err) < 0)
        return -1;
    if (insert_commit(cat, query_oid, committed, err) < 0 ||
        insert_offsets(cat, query_oid, o, err) < 0 || cat_exec(cat, "COMMIT;", err) < 0) {
        SlError ignore = {0};
        cat_exec(cat, "ROLLBACK;", &ignore);
        sl_error_clear(&ignore);
        return -1;
    }
    SLUICE_FAULT("commit_log_after_write");
    SLUICE_FAULT("offsets_after_write");
    return 0;
}

int cat_offsets_last(Catalog *cat, uint32_t query_oid, Arena *a, CqOffsets *out,
                     SlError *err)
{
    sqlite3_stmt *st = prepare(cat,
        "SELECT batch_id, sources, watermark_us, batch_ts_us FROM cq_offsets"
        " WHERE query_oid = ? ORDER BY batch_id DESC LIMIT 1", err);
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, query_oid);
    int rc = sqlite3_step(st), ret;
    if (rc == SQLITE_ROW) {
        out->batch_id = sqlite3_column_int64(st, 0);
        out->sources = arena_strdup(a, (const char *)sqlite3_column_text(st, 1));
        out->has_watermark = sqlite3_column_type(st, 2) != SQLITE_NULL;
        out->watermark_us = sqlite3_column_int64(st, 2);
        out->batch_ts_us = sqlite3_column_int64(st, 3);
        ret = 1;
    } else {
        ret = rc == SQLITE_DONE ? 0 : cat_db_error(cat, err);
    }
    sqlite3_finalize(st);
    return ret;
}

int cat_commit_append(Catalog *cat, uint32_t query_oid, int64_t batch_id, SlError *err)
{
    SLUICE_FAULT("commit_log_before_write");
    int rc = insert_commit(cat, query_oid, batch_id, err);
    SLUICE_FAULT("commit_log_after_write");
    return rc;
}

int64_t cat_commit_last(Catalog *cat, uint32_t query_oid, SlError *err)
{
    sqlite3_stmt *st = prepare(cat,
        "SELECT max(batch_id) FROM cq_commits WHERE query_oid = ?", err);
    if (st == NULL)
        return -2;
    sqlite3_bind_int64(st, 1, query_oid);
    int64_t last = -2;
    if (sqlite3_step(st) == SQLITE_ROW)
        last = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
    else
        cat_db_error(cat, err);
    sqlite3_finalize(st);
    return last;
}

int cat_cq_purge(Catalog *cat, uint32_t query_oid, int64_t keep_from, SlError *err)
{
    static const char *const sql[] = {
        "DELETE FROM cq_offsets WHERE query_oid = ? AND batch_id < ?",
        "DELETE FROM cq_commits WHERE query_oid = ? AND batch_id < ?",
    };
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = prepare(cat, sql[i], err);
        if (st == NULL)
            return -1;
        sqlite3_bind_int64(st, 1, query_oid);
        sqlite3_bind_int64(st, 2, keep_from);
        if (step_done(cat, st, err) < 0)
            return -1;
    }
    return 0;
}

int cat_cq_status_set(Catalog *cat, uint32_t query_oid, const char *status,
                      const char *error, SlError *err)
{
    sqlite3_stmt *st = prepare(cat,
        "INSERT INTO cq_status (query_oid, status, last_error, updated_at_us)"
        " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (query_oid) DO UPDATE SET"
        " status = ?2, last_error = coalesce(?3, last_error), updated_at_us = ?4", err);
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, query_oid);
    sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
    if (error)
        sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, cat_now_usec());
    return step_done(cat, st, err);
}

int cat_cq_status_get(Catalog *cat, uint32_t query_oid, Arena *a, const char **status,
                      const char **error, SlError *err)
{
    sqlite3_stmt *st = prepare(cat,
        "SELECT status, last_error FROM cq_status WHERE query_oid = ?", err);
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, query_oid);
    int rc = sqlite3_step(st), ret;
    if (rc == SQLITE_ROW) {
        *status = arena_strdup(a, (const char *)sqlite3_column_text(st, 0));
        const char *e = (const char *)sqlite3_column_text(st, 1);
        *error = e ? arena_strdup(a, e) : NULL;
        ret = 1;
    } else {
        ret = rc == SQLITE_DONE ? 0 : cat_db_error(cat, err);
    }
    sqlite3_finalize(st);
    return ret;
}
