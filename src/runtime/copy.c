/*
 * copy.c -- COPY FROM STDIN and COPY TO STDOUT (see runtime.h).
 *
 *   rt_copy_kind, rt_copy_binary  is a prepared statement a COPY, which way,
 *                                 in binary format
 *   rt_copy_begin, rt_copy_data, rt_copy_data_deferred, rt_copy_end,
 *   rt_copy_end_deferred, rt_copy_abort, rt_copy_abort_with    COPY FROM
 *   rt_copy_progress              how far a COPY FROM got
 *   rt_copy_set_xact              a stream's COPY inside a transaction
 *                                 block: its parts go to the block's
 *                                 buffer, written at COMMIT (a table's
 *                                 is refused, 0A000)
 *   rt_copy_insert                a table COPY's merge, key checks and
 *                                 write, off the loop (runtime_int.h)
 *   rt_copy_out                   COPY TO on the loop: one line of text per row
 *   rt_copy_out_new, _set_cb, _query, _sink, _header, _progress, _free
 *                                 COPY TO a piece at a time (RtRun, on a
 *                                 worker: runtime_int.h)
 *   rt_copy_text_line             one row in COPY's text format (COPY (SUBSCRIBE))
 *   rt_csv_field                  one CSV field, quoted as COPY CSV quotes it
 *
 * COPY FROM keeps the partial last line of the input between chunks and
 * decodes whole lines (FORMAT binary: whole rows) into batches in the
 * copy's rows arena.
 *
 * Into a table, nothing is written before the input ended well, and the
 * copy holds about one part (part_bytes) of its rows whatever the input's
 * size.  Each row is decoded on its own (one a decoder call), so that its
 * input line is known, and checked as INSERT checks a row (NOT NULL: 23502
 * with PostgreSQL's context, "COPY t, line N: \"<the line>\"").  Each full
 * batch of decoded rows is turned into storage keys (the primary key, or a
 * hidden row id taken now) and encoded rows, each followed by its line,
 * and added to a KvSort (kvsort.h),
 * which writes each part's worth, sorted, to a run file under
 * <state>/bulk/ (unlinked at once).  At the end (table_write) the runs are
 * merged; then, under the modify lock that INSERT, UPDATE and DELETE take
 * (so the key checks and the write do not interleave with theirs), the
 * sorted rows are read once: a key met twice in a row or stored already
 * (state_ingest_exists) is 23505 (context "COPY t, line N": the later
 * line of a pair, the first line of a stored key), and the rows go to RocksDB table files
 * that state_ingest_commit adds to the store in one atomic step (a copy
 * that never filled a part: one synced write batch, as INSERT's).  So a bad
 * row, a duplicate key, a cancel, statement_timeout or a lost client leave
 * the table as it was, readers see it before or after, and a crash leaves
 * it before (the files left in <state>/bulk/ go at the next start) or
 * complete.  The server's COPY never sorts on the loop: a full part
 * (rt_copy_data_deferred) goes to a statements' worker (rt_copy_sort_part,
 * append.c's rt_append_new_copy_part) while the session reads no more input,
 * and the end (rt_copy_end_deferred: the last rows' sort, the merge, the
 * lock and the write) too.  Without a statements' pool (rt_copy_data, the
 * unit tests) parts are sorted where they are decoded.
 *
 * Into a stream, the copy writes in parts: once the rows it holds come to
 * part_bytes (COPY_PART_BYTES, less under a small statement_mem) they are
 * appended (one durable append each, write_part) and dropped, so a copy of
 * any size holds about one part.  The last part is written by
 * rt_copy_end.  On the fast path, rt_copy_data_deferred hands a full part
 * to the server, which has the engine's pool write it (append.c), reads
 * no more of the client's input meanwhile, and then calls it again with no
 * data for the rest of the input it holds: the loop never waits on a part.  A copy that fails half-way keeps the parts written before
 * (the error's detail counts their rows); one that fits in one part is
 * all or nothing (docs/sql-reference.md, COPY).  Inside a transaction
 * block (rt_copy_set_xact) the parts go to the block instead, none is
 * deferred, and the whole COPY is written at COMMIT or not at all.
 *
 * The fast path (a stream without NOT NULL columns, every column copied in
 * order): each full batch is encoded at once into the stream's chunk format
 * (stream_chunk_add) and its decoded values dropped, so a part is one
 * encoded chunk, appended as it is.  Other streams' parts go through
 * ex_modify as an INSERT each.
 *
 * Memory: the input is decoded as it comes, so the copy keeps only the
 * partial last line of it, plus the rows it has not written yet (one part;
 * a table's sort and its merge buffers, about as much).  All of that (the
 * arenas, the encoded chunks, the sort, the line buffer) is charged to the
 * copy's memory account (memacct.h) with the session's statement_mem and
 * the server's max_memory: a copy that would pass either ends with 53200
 * (writing nothing more), and the server goes on.
 * COPY TO runs on the loop and cannot pause for a slow client: its query's
 * memory and its whole output count against statement_mem (53200).
 */
#include "runtime_int.h"
#include "sluice/format.h"
#include "sluice/kvsort.h"
#include "sluice/log.h"
#include "sluice/memacct.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/settings.h"
#include "sluice/txbuf.h"
#include "sluice/utf8.h"

#include <stdio.h>

#define COPY_MAX_BYTES ((size_t)1 << 30)  /* a line (a binary row) */
/* A stream's rows held at most: with a batch crossing it (its chunk is
 * reserved a power of two: 4 MiB), the line buffer and the arenas, a copy
 * stays under SL_MEM_SERVER_FLOOR, so max_memory never refuses it. */
#define COPY_PART_BYTES ((size_t)3 << 20)

struct RtCopy {
    Runtime    *rt;             /* the Prepared's: its stores and modify lock */
    Arena       arena;
    const CopySpec *spec;
    FmtSpec     fmt;
    SlType     *types;          /* of the copied columns */
    char       *buf;            /* input not yet decoded */
    size_t      len, cap;
    size_t      total;          /* bytes received */
    int64_t     line;           /* lines consumed before buf */
    int64_t     decoded;        /* rows decoded (rt_copy_progress) */
    FmtResult   res;
    Batch     **batches;        /* decoded rows, in rows (not the fast path) */
    int         nbatches, capbatches;
    bool        parts;          /* a stream: written part by part */
    bool        defer;          /* the caller writes full parts (the fast path) */
    size_t      part_bytes;     /* rows held before a part is written */
    uint64_t    written;        /* rows of the parts written */
    Plan       *scan;           /* parts of a stream off the fast path: */
    ModifyPlan *modify;         /* ... the INSERT of each (in arena) */
    Arena       rows;           /* decoded rows, reset after each write */
    /* the fast path */
    bool        direct;
    Batch      *cur;
    StrBuf     *chunks;         /* encoded rows */
    int         nchunks, capchunks;
    bool        bin_header;     /* FORMAT binary: the header was read */
    bool        bin_trailer;    /* ... and the trailer */
    SlMemAccount *mem;          /* the budget: statement_mem, max_memory */
    size_t      charged;        /* bytes of buf and chunks charged to mem */
    /* a table: the rows' keys and encodings, sorted in bounded memory */
    KvSort     *sort;
    StrBuf      key, val;
    int64_t    *lines;          /* the input line of each held row: row r of
                                 * batch i at i * EX_BATCH_ROWS + r */
    size_t      caplines;
    StateTx    *tx;             /* a stream's copy in a transaction block:
                                 * its parts go to the block (txbuf.h) */
};

/* Charges mem for what buf and the chunks hold now. */
static void charge_buffers(RtCopy *cp)
{
    size_t held = cp->cap + sizeof(StrBuf) * (size_t)cp->capchunks;
    for (int i = 0; i < cp->nchunks; i++)
        held += cp->chunks[i].cap;
    if (held > cp->charged)
        sl_mem_charge(cp->mem, held - cp->charged);
    else
        sl_mem_credit(cp->mem, cp->charged - held);
    cp->charged = held;
}

/* 53200 once the copy passed its budget, with how to load that much. */
static int check_budget(RtCopy *cp, SlError *err)
{
    if (sl_mem_exceeded(cp->mem) == SL_MEM_OK)
        return 0;
    ex_out_of_memory(err, cp->mem);
    if (cp->parts)
        sl_error_hint(err, "A COPY into a stream holds one part of its rows and the "
                           "CopyData message being read: send smaller messages, or raise "
                           "statement_mem.");
    else
        sl_error_hint(err, "A COPY into a table holds one part of its rows (the rest waits "
                           "in files under the data directory) and the CopyData message "
                           "being read: send smaller messages, or raise statement_mem.");
    return -1;
}

bool rt_copy_binary(const Prepared *p)
{
    const Query *q = rt_prepared_query(p);
    return q->kind == QUERY_COPY && q->copy->binary;
}

RtCopyKind rt_copy_kind(const Prepared *p)
{
    const Query *q = rt_prepared_query(p);
    if (q->kind != QUERY_COPY)
        return RT_COPY_NONE;
    return q->copy->to ? RT_COPY_OUT : RT_COPY_IN;
}

int rt_copy_ncols(const Prepared *p)
{
    const CopySpec *c = rt_prepared_query(p)->copy;
    return c->query ? c->query->ntargets : c->ncols;
}

/* The INSERT that writes decoded batches (copy_open_scan hands them out),
 * in cp's arena: a stream's parts off the fast path. */
static void make_insert(RtCopy *cp)
{
    const CatRelation *rel = cp->spec->rel;
    Plan *scan = plan_new(&cp->arena, PLAN_SCAN, NULL, rel->ncols);
    for (int k = 0; k < rel->ncols; k++)
        plan_set_col(scan, k, rel->cols[k].name, rel->cols[k].type, NULL);
    scan->u.scan.rel = rel;
    scan->u.scan.oid = rel->oid;
    ModifyPlan *m = ARENA_NEW(&cp->arena, ModifyPlan);
    m->kind = MODIFY_INSERT;
    m->rel = rel;
    m->oid = rel->oid;
    m->source = scan;
    cp->scan = scan;
    cp->modify = m;
}

/* The copy's own CopySpec, in its arena, its relation referenced: a worker
 * sorting or writing the copy's rows may outlive the session's statement
 * (a client gone meanwhile). */
static const CopySpec *copy_spec(RtCopy *cp, const CopySpec *c)
{
    CopySpec *s = ARENA_NEW(&cp->arena, CopySpec);
    *s = *c;
    s->query = NULL;
    s->attnums = ARENA_ARRAY(&cp->arena, int, c->ncols ? c->ncols : 1);
    memcpy(s->attnums, c->attnums, sizeof(int) * (size_t)c->ncols);
    s->null_string = c->null_string ? arena_strdup(&cp->arena, c->null_string) : NULL;
    if (s->rel != NULL)
        cat_relation_ref(s->rel);
    return s;
}

int rt_copy_begin(const Prepared *p, RtCopy **out, SlError *err)
{
    const Query *q = rt_prepared_query(p);
    Runtime *rt = rt_prepared_runtime(p);
    if (rt == NULL || rt->cat == NULL || rt->st == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no catalog is open: the runtime was not initialized (rt_init)");
    if (rt_check_query(rt, q, err) < 0)
        return -1;
    const CopySpec *c = q->copy;
    RtCopy *cp = sl_calloc(1, sizeof(RtCopy));
    cp->rt = rt;
    arena_init(&cp->arena, 256 * 1024);
    size_t limit = settings_statement_mem(settings_current());
    cp->mem = sl_mem_account_new(limit);
    arena_set_account(&cp->arena, cp->mem);
    cp->spec = copy_spec(cp, c);
    c = cp->spec;
    const char **names = ARENA_ARRAY(&cp->arena, const char *, c->ncols ? c->ncols : 1);
    cp->types = ARENA_ARRAY(&cp->arena, SlType, c->ncols ? c->ncols : 1);
    for (int i = 0; i < c->ncols; i++) {
        names[i] = c->rel->cols[c->attnums[i]].name;
        cp->types[i] = c->rel->cols[c->attnums[i]].type;
    }
    fmt_spec_init(&cp->fmt, &cp->arena, c->ncols, names, cp->types, NULL);
    cp->fmt.max_record_bytes = COPY_MAX_BYTES;
    cp->fmt.delimiter = c->delimiter;
    cp->fmt.quote = '"';
    cp->fmt.header = c->header;
    cp->fmt.null_string = c->null_string;
    /* (a stream with a connector takes no rows: ex_modify says so) */
    Options o;
    const char *conn = NULL;
    if (c->rel->kind == REL_STREAM && opts_parse(&cp->arena, c->rel->options, &o, err) == 0)
        conn = opts_get(&o, "connector");
    sl_error_clear(err);
    cp->direct = c->rel->kind == REL_STREAM && c->ncols == c->rel->ncols && !c->binary &&
                 (conn == NULL || strcmp(conn, "internal") == 0);
    for (int i = 0; i < c->ncols && cp->direct; i++)
        cp->direct = c->attnums[i] == i && !c->rel->cols[i].not_null;
    cp->parts = c->rel->kind == REL_STREAM;
    cp->part_bytes = limit != 0 ? SL_MIN(COPY_PART_BYTES, limit / 8) : COPY_PART_BYTES;
    if (!cp->direct && cp->parts)
        make_insert(cp);
    if (!cp->parts)
        cp->sort = kvsort_new(cp->rt->st, cp->mem, cp->part_bytes, TBL_KEY_PREFIX_BYTES);
    strbuf_init(&cp->key);
    strbuf_init(&cp->val);
    arena_init(&cp->rows, 256 * 1024);
    arena_set_account(&cp->rows, cp->mem);
    *out = cp;
    return 0;
}

int rt_copy_set_xact(RtCopy *cp, StateTx *tx, SlError *err)
{
    if (!cp->parts) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "COPY FROM into a table cannot run inside a transaction block");
        sl_error_hint(err, "Use INSERT inside the block, or COPY outside it.");
        return -1;
    }
    cp->tx = tx;
    return 0;
}

/* A part of a copy in a transaction block goes to the block, held to
 * statement_mem (53200) with the block's other writes. */
static int part_to_block(RtCopy *cp, SlError *err)
{
    for (int i = 0; i < cp->nchunks; i++)
        state_tx_append_chunk(cp->tx, cp->spec->rel, &cp->chunks[i]);
    cp->nchunks = 0;
    return state_tx_check_budget(cp->tx, settings_statement_mem(settings_current()), err);
}

void rt_copy_abort(RtCopy *cp)
{
    if (cp == NULL)
        return;
    sl_free(cp->buf);
    for (int i = 0; i < cp->nchunks; i++)
        strbuf_free(&cp->chunks[i]);
    sl_free(cp->chunks);
    kvsort_free(cp->sort);
    sl_free(cp->lines);
    strbuf_free(&cp->key);
    strbuf_free(&cp->val);
    arena_destroy(&cp->rows);
    if (cp->spec != NULL && cp->spec->rel != NULL)
        cat_relation_unref(cp->spec->rel);
    arena_destroy(&cp->arena);
    sl_mem_credit(cp->mem, cp->charged);
    sl_mem_account_unref(cp->mem);
    sl_free(cp);
}

/* The fast path: the decoded batch into the last chunk, its values dropped. */
static void flush_direct(RtCopy *cp)
{
    Batch *b = cp->cur;
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = b->nrows;
    if (cp->nchunks == 0 || cp->chunks[cp->nchunks - 1].len >= cp->part_bytes) {
        if (cp->nchunks == cp->capchunks) {
            cp->capchunks = cp->capchunks ? cp->capchunks * 2 : 16;
            cp->chunks = sl_realloc(cp->chunks, sizeof(StrBuf) * (size_t)cp->capchunks);
        }
        strbuf_init(&cp->chunks[cp->nchunks++]);
        strbuf_reserve(&cp->chunks[cp->nchunks - 1], cp->part_bytes + (64 << 10));
    }
    stream_chunk_add(&cp->chunks[cp->nchunks - 1], b);
    arena_reset(&cp->rows);
    cp->cur = NULL;
}

static ExSource *copy_open_scan(ExCtx *cx, const Plan *scan)
{
    SL_UNUSED(scan);
    RtCopy *cp = cx->open_scan_arg;
    return ex_source_batches(cx->arena, cp->batches, cp->nbatches);
}

/* A decoded batch as the relation's rows (the columns not copied are
 * NULL; the copied ones shared with in), in the rows arena. */
static Batch *widen(RtCopy *cp, const Batch *in)
{
    const CopySpec *c = cp->spec;
    const CatRelation *rel = c->rel;
    SlType *types = ARENA_ARRAY(&cp->rows, SlType, rel->ncols);
    for (int k = 0; k < rel->ncols; k++)
        types[k] = rel->cols[k].type;
    Batch *b = batch_alloc(&cp->rows, types, (uint32_t)rel->ncols, in->nrows ? in->nrows : 1);
    for (int k = 0; k < rel->ncols; k++) {
        b->cols[k].len = in->nrows;
        memset(b->cols[k].nulls, 1, in->nrows);
    }
    for (int j = 0; j < c->ncols; j++)
        b->cols[c->attnums[j]] = in->cols[j];
    b->nrows = in->nrows;
    return b;
}

/* The decoded batches as the relation's rows (widen). */
static void widen_batches(RtCopy *cp)
{
    for (int i = 0; i < cp->nbatches; i++)
        cp->batches[i] = widen(cp, cp->batches[i]);
}

/* A sorted row's value is its encoding followed by its input line (8
 * bytes, host order: the run files live as long as the copy). */
static void put_line(StrBuf *val, int64_t line)
{
    strbuf_append(val, (const char *)&line, sizeof(line));
}

/* Takes the line off a sorted row's value v and returns it. */
static int64_t take_line(SlStr *v)
{
    int64_t line;
    v->len -= (uint32_t)sizeof(line);
    memcpy(&line, v->ptr + v->len, sizeof(line));
    return line;
}

/* A table's copy: the decoded batches' rows (NOT NULL checked as each was
 * decoded: check_row) go to the sort as (storage key, encoded row and its
 * input line: put_line) -- a hidden row id taken now for a table without a
 * primary key -- and are dropped. */
static int sort_rows(RtCopy *cp, SlError *err)
{
    const CatRelation *rel = cp->spec->rel;
    widen_batches(cp);
    for (int i = 0; i < cp->nbatches; i++) {
        const Batch *b = cp->batches[i];
        for (uint32_t r = 0; r < b->nrows; r++) {
            if (rel->npk == 0) {
                uint64_t id = tbl_next_rowid(cp->rt->st, rel, err);
                if (id == UINT64_MAX)
                    return -1;
                tbl_rowid_key(rel, id, &cp->key);
            } else {
                tbl_key(rel, b, r, &cp->key);
            }
            strbuf_reset(&cp->val);
            row_encode(b, r, &cp->val);
            put_line(&cp->val, cp->lines[(size_t)i * EX_BATCH_ROWS + r]);
            if (kvsort_add(cp->sort, cp->key.data, cp->key.len, cp->val.data, cp->val.len,
                           err) < 0)
                return -1;
        }
    }
    return 0;
}

/* 23505 for the row encoded in val, whose key is stored already or comes
 * twice in the input, with PostgreSQL's context: the line of the row whose
 * insert failed (no text: PostgreSQL checks keys when its buffered rows
 * are flushed, where the line's text is gone too). */
static int copy_duplicate(RtCopy *cp, SlStr val, int64_t line, SlError *err)
{
    const CatRelation *rel = cp->spec->rel;
    SlType *types = ARENA_ARRAY(&cp->rows, SlType, rel->ncols);
    for (int k = 0; k < rel->ncols; k++)
        types[k] = rel->cols[k].type;
    Batch *b = batch_alloc(&cp->rows, types, (uint32_t)rel->ncols, 1);
    if (row_decode(val.ptr, val.len, b, 0, &cp->rows) < 0)
        return sl_error(err, ERRCODE_DATA_CORRUPTED, "cannot decode a copied row");
    b->nrows = 1;
    for (int k = 0; k < rel->ncols; k++)
        b->cols[k].len = 1;
    ex_duplicate_key(rel, b, 0, err);
    sl_error_context(err, "COPY %s, line %lld", rel->name, (long long)line);
    return -1;
}

/* 23505 for a key stored already: the first line of the input that has
 * it (the rows of equal keys after v are read for it). */
static int copy_stored_duplicate(RtCopy *cp, SlStr k, SlStr v, int64_t line, SlError *err)
{
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    strbuf_append(&key, k.ptr, k.len);
    strbuf_append(&val, v.ptr, v.len);
    SlStr k2, v2;
    int rc;
    while ((rc = kvsort_next(cp->sort, &k2, &v2, err)) > 0 && k2.len == key.len &&
           memcmp(k2.ptr, key.data, key.len) == 0) {
        int64_t l2 = take_line(&v2);
        if (l2 < line) {
            line = l2;
            strbuf_reset(&val);
            strbuf_append(&val, v2.ptr, v2.len);
        }
    }
    if (rc >= 0)
        copy_duplicate(cp, (SlStr){val.data, (uint32_t)val.len}, line, err);
    strbuf_free(&key);
    strbuf_free(&val);
    return -1;
}

/* A table's write, once the input ended: the sorted rows, their keys
 * checked, go into the table in one atomic step (state_ingest_commit).
 * The sort's merge runs first; then, under the modify lock (runtime_int.h:
 * the checks and the write do not interleave with INSERT, UPDATE and
 * DELETE), a key met twice in a row of the sorted input or stored already
 * is 23505 and the rows go to table files.  A cancel or statement_timeout
 * is checked between steps, every 4096 rows and once the keys are checked
 * (fault point copy_table_checked, just before).  Nothing is written
 * before the ingest, which is all or nothing. */
static int write_part(RtCopy *cp, SlError *err);

static int table_write(RtCopy *cp, uint64_t *rows, SlError *err)
{
    const CatRelation *rel = cp->spec->rel;
    uint64_t t0 = uv_hrtime();
    int rc;
    if (cp->nbatches > 0 && write_part(cp, err) < 0)
        return -1;          /* the last rows, not yet in the sort */
    while ((rc = kvsort_merge_step(cp->sort, err)) > 0)
        if (ex_check_interrupt(err) < 0)
            return -1;
    if (rc < 0)
        return -1;
    if (kvsort_count(cp->sort) == 0)
        return 0;
    uint64_t t1 = uv_hrtime();
    if (rt_modify_lock(cp->rt, err) < 0)
        return -1;
    tbl_key_prefix(rel, &cp->key);
    /* a copy of one part or less: one synced write (state.h) */
    StateIngest *ig = state_ingest_new(cp->rt->st, cp->key.data, cp->key.len,
                                       kvsort_in_memory(cp->sort));
    StrBuf *prev = &cp->key;
    strbuf_reset(prev);
    int64_t prev_line = 0;
    uint64_t n = 0;
    SlStr k, v;
    while ((rc = kvsort_next(cp->sort, &k, &v, err)) > 0) {
        if ((n & 4095) == 0 && ex_check_interrupt(err) < 0) {
            rc = -1;
            break;
        }
        int64_t line = take_line(&v);
        if (rel->npk > 0) {
            /* the sort keeps no input order among equal keys: the row that
             * fails is the later one of a pair, the first one of a stored key */
            if (n > 0 && prev->len == k.len && memcmp(prev->data, k.ptr, k.len) == 0) {
                rc = copy_duplicate(cp, v, SL_MAX(line, prev_line), err);
                break;
            }
            int dup = state_ingest_exists(ig, k.ptr, k.len, err);
            if (dup != 0) {
                rc = dup < 0 ? -1 : copy_stored_duplicate(cp, k, v, line, err);
                break;
            }
            strbuf_reset(prev);
            strbuf_append(prev, k.ptr, k.len);
            prev_line = line;
        }
        if (state_ingest_put(ig, k.ptr, k.len, v.ptr, v.len, err) < 0) {
            rc = -1;
            break;
        }
        n++;
    }
    if (rc == 0) {
        SLUICE_FAULT("copy_table_checked");
        rc = ex_check_interrupt(err);
    }
    if (rc == 0)
        rc = state_ingest_commit(ig, err);
    rt_modify_unlock(cp->rt);
    state_ingest_free(ig);
    if (rc < 0)
        return -1;
    *rows = n;
    sl_log(LOG_DEBUG, "copy loaded", "table=%s rows=%llu merge_ms=%.1f write_ms=%.1f",
           log_value(rel->name), (unsigned long long)n, (double)(t1 - t0) / 1e6,
           (double)(uv_hrtime() - t1) / 1e6);
    return 0;
}

/* Writes what the copy holds: into a table (table_write), or a stream's
 * part of decoded batches with the INSERT of make_insert (widened to the
 * relation's columns).  *rows gets the rows written.  Runs on a worker
 * (append.c) or, for a stream's part or without a pool, on the caller's
 * thread. */
int rt_copy_insert(RtCopy *cp, uint64_t *rows, SlError *err)
{
    *rows = 0;
    if (!cp->parts)
        return table_write(cp, rows, err);
    widen_batches(cp);
    ExCtx cx = {.arena = &cp->rows, .err = err, .st = cp->rt->st,
                .open_scan = copy_open_scan, .open_scan_arg = cp, .tx = cp->tx};
    rt_ctx_hooks(cp->rt, &cx);
    return ex_modify(&cx, cp->modify, NULL, NULL, rows);
}

/* A stream's copy: writes the rows it holds as one append (the fast path's
 * chunks, or the decoded batches through the INSERT) and drops them. */
static int write_part(RtCopy *cp, SlError *err)
{
    uint64_t rows = 0;
    int rc = 0;
    if (!cp->parts) {
        /* a table's: its rows go to the sort (a test holds here: the
         * server's COPY sorts on a worker, never on the loop) */
        SLUICE_FAULT("copy_table_part");
        rc = sort_rows(cp, err);
        arena_reset(&cp->rows);
        cp->batches = NULL;
        cp->nbatches = cp->capbatches = 0;
        charge_buffers(cp);
        return rc;
    }
    if (cp->direct && cp->nchunks > 0) {
        for (int i = 0; i < cp->nchunks; i++)
            rows += stream_chunk_rows(&cp->chunks[i]);
        StreamAppend app = {cp->spec->rel, NULL, cp->nchunks, cp->chunks, 0};
        rc = cp->tx != NULL ? part_to_block(cp, err)
                            : stream_append_many(cp->rt->st, &app, 1, NULL, err);
        for (int i = 0; i < cp->nchunks; i++)
            strbuf_free(&cp->chunks[i]);
        cp->nchunks = 0;
    } else if (!cp->direct && cp->nbatches > 0) {
        rc = rt_copy_insert(cp, &rows, err);
        arena_reset(&cp->rows);
        cp->batches = NULL;
        cp->nbatches = cp->capbatches = 0;
    }
    charge_buffers(cp);
    if (rc == 0)
        cp->written += rows;
    return rc;
}

int rt_copy_sort_part(RtCopy *cp, SlError *err)
{
    if (write_part(cp, err) < 0)
        return -1;
    return ex_check_interrupt(err);     /* a cancel meanwhile ends the copy */
}

/* Whether a stream's copy holds a part's worth of rows: its chunks' bytes
 * on the fast path, else what its arenas hold; a table's, a full batch of
 * decoded rows (for the sort, which holds the part). */
static bool part_full(RtCopy *cp)
{
    if (!cp->parts)
        return cp->nbatches > 1 ||
               (cp->nbatches == 1 && cp->batches[0]->nrows >= EX_BATCH_ROWS);
    charge_buffers(cp);
    size_t held = 0;
    if (cp->direct)
        for (int i = 0; i < cp->nchunks; i++)
            held += cp->chunks[i].len;
    else
        held = sl_mem_account_used(cp->mem) - cp->charged;
    return held >= cp->part_bytes;
}

static int64_t count_lines(const char *p, size_t n)
{
    int64_t k = 0;
    const char *e = p + n;
    while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
        k++;
        p++;
    }
    return k;
}

/* Whether a decoder's reason is about bytes that are not UTF-8
 * (sl_utf8_message's text): 22021, as PostgreSQL's COPY. */
static bool encoding_error(const char *why)
{
    return strncmp(why, SL_UTF8_MESSAGE_PREFIX, strlen(SL_UTF8_MESSAGE_PREFIX)) == 0;
}

/* The first bad record as PostgreSQL reports it: the message, and the
 * line in the context. */

static int bad_record(RtCopy *cp, const char *in, const DeadLetter *d, SlError *err)
{
    int64_t line = cp->line + count_lines(in, (size_t)d->offset) + 1;
    const char *rel = cp->spec->rel->name;
    const char *why = d->reason;
    if (strncmp(why, "column ", 7) == 0 && strstr(why, ": ") != NULL) {
        const char *colon = strstr(why, ": ");
        const char *msg = colon + 2;
        const char *q = strstr(msg, ": \"");
        sl_error(err, encoding_error(msg) ? ERRCODE_CHARACTER_NOT_IN_REPERTOIRE
                                          : ERRCODE_INVALID_TEXT_REPRESENTATION, "%s", msg);
        if (q != NULL)
            sl_error_context(err, "COPY %s, line %lld, %.*s%s", rel, (long long)line,
                             (int)(colon - why), why, q);
        else
            sl_error_context(err, "COPY %s, line %lld, %.*s", rel, (long long)line,
                             (int)(colon - why), why);
        return -1;
    }
    sl_error(err, encoding_error(why) ? ERRCODE_CHARACTER_NOT_IN_REPERTOIRE
                                      : ERRCODE_BAD_COPY_FILE_FORMAT, "%s", why);
    sl_error_context(err, "COPY %s, line %lld: \"%.*s\"", rel, (long long)line,
                     (int)SL_MIN(d->raw.len, 200), d->raw.ptr);
    return -1;
}

/* The text of the one row a table's decode call took from the first used
 * bytes of in (after the header line and, in CSV, empty lines, which the
 * decoder skips), without its line end: what PostgreSQL's context shows. */
static SlStr line_text(const RtCopy *cp, const char *in, size_t used, int64_t records)
{
    const char *p = in, *e = in + used;
    if (cp->fmt.header && records == 0) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl != NULL ? nl + 1 : e;
    }
    while (cp->spec->csv && p < e && (*p == '\n' || (*p == '\r' && p + 1 < e && p[1] == '\n')))
        p += *p == '\n' ? 1 : 2;
    if (e > p && e[-1] == '\n')
        e--;
    if (e > p && e[-1] == '\r')
        e--;
    return (SlStr){p, (uint32_t)(e - p)};
}

/* A table's row r of b, just decoded from input line line: keeps the
 * line for the sort, and checks the row as INSERT does (NOT NULL), with
 * PostgreSQL's context: the line and, in text formats, its text. */
static int check_row(RtCopy *cp, const Batch *b, uint32_t r, int64_t line, SlStr text,
                     SlError *err)
{
    size_t at = (size_t)(cp->nbatches - 1) * EX_BATCH_ROWS + r;
    if (at >= cp->caplines) {
        cp->caplines = SL_MAX(at + 1, cp->caplines * 2);
        cp->lines = sl_realloc(cp->lines, sizeof(int64_t) * cp->caplines);
    }
    cp->lines[at] = line;
    const CopySpec *c = cp->spec;
    const CatRelation *rel = c->rel;
    bool null = false;
    for (int k = 0; k < rel->ncols && !null; k++) {
        if (!rel->cols[k].not_null)
            continue;
        int j = 0;
        while (j < c->ncols && c->attnums[j] != k)
            j++;
        null = j == c->ncols || vector_is_null(&b->cols[j], r);
    }
    if (!null)
        return 0;
    /* the row as the relation's, for INSERT's message and detail */
    ex_check_not_null(rel, widen(cp, b), r, err);
    if (text.ptr != NULL)
        sl_error_context(err, "COPY %s, line %lld: \"%.*s\"", rel->name, (long long)line,
                         (int)SL_MIN(text.len, 200), text.ptr);
    else
        sl_error_context(err, "COPY %s, line %lld", rel->name, (long long)line);
    return -1;
}

/* The batch the next rows go to: the last one, or a new one when it is full. */
static Batch *current_batch(RtCopy *cp)
{
    Batch *b = cp->nbatches ? cp->batches[cp->nbatches - 1] : NULL;
    if (b != NULL && b->nrows < EX_BATCH_ROWS)
        return b;
    if (cp->nbatches == cp->capbatches) {
        int cap = cp->capbatches ? cp->capbatches * 2 : 64;
        Batch **more = ARENA_ARRAY(&cp->rows, Batch *, cap);
        if (cp->nbatches)
            memcpy(more, cp->batches, sizeof(Batch *) * (size_t)cp->nbatches);
        cp->batches = more;
        cp->capbatches = cap;
    }
    b = batch_alloc(&cp->rows, cp->types, (uint32_t)cp->spec->ncols, EX_BATCH_ROWS);
    b->nrows = 0;
    cp->batches[cp->nbatches++] = b;
    return b;
}

static uint32_t get_be32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static int bad_binary_copy(RtCopy *cp, SlError *err, const char *msg)
{
    sl_error(err, ERRCODE_BAD_COPY_FILE_FORMAT, "%s", msg);
    sl_error_context(err, "COPY %s, line %lld", cp->spec->rel->name, (long long)cp->line + 1);
    return -1;
}

/* FORMAT binary (PostgreSQL's CopyReadBinaryTuple): the signature, flags and
 * extension header, then per row an int16 field count (-1: the trailer) and
 * per field an int32 length (-1: NULL) and the value in its binary (recv)
 * format; the trailer may be left out.  Decodes the whole rows of the buffer; a row cut short waits for
 * more data, or is an error when final.  "line" counts rows. */
static int decode_binary(RtCopy *cp, bool final, SlError *err)
{
    static const char sig[11] = "PGCOPY\n\377\r\n";
    size_t pos = 0;
    int rc = 0;
    if (!cp->bin_header) {
        if (cp->len < 19) {
            if (final)
                rc = bad_binary_copy(cp, err, "COPY file signature not recognized");
            return rc;
        }
        if (memcmp(cp->buf, sig, 11) != 0)
            return bad_binary_copy(cp, err, "COPY file signature not recognized");
        uint32_t flags = get_be32(cp->buf + 11), ext = get_be32(cp->buf + 15);
        if (flags & 0x10000)
            return bad_binary_copy(cp, err, "invalid COPY file header (WITH OIDS)");
        if (ext > COPY_MAX_BYTES)
            return bad_binary_copy(cp, err, "invalid COPY file header (wrong length)");
        if (cp->len < 19 + (size_t)ext) {
            if (final)
                rc = bad_binary_copy(cp, err, "invalid COPY file header (wrong length)");
            return rc;
        }
        pos = 19 + ext;
        cp->bin_header = true;
    }
    int ncols = cp->spec->ncols;
    while (rc == 0 && pos + 2 <= cp->len) {
        if (cp->bin_trailer)
            return bad_binary_copy(cp, err, "received copy data after EOF marker");
        const unsigned char *u = (const unsigned char *)cp->buf + pos;
        int16_t nf = (int16_t)(u[0] << 8 | u[1]);
        if (nf == -1) {
            cp->bin_trailer = true;
            pos += 2;
            continue;
        }
        if (nf != ncols) {
            char msg[64];
            snprintf(msg, sizeof(msg), "row field count is %d, expected %d", nf, ncols);
            return bad_binary_copy(cp, err, msg);
        }
        /* the whole row must be in */
        size_t q = pos + 2;
        bool whole = true;
        for (int k = 0; k < ncols && whole; k++) {
            if (q + 4 > cp->len) {
                whole = false;
                break;
            }
            int32_t flen = (int32_t)get_be32(cp->buf + q);
            q += 4;
            if (flen < -1)
                return bad_binary_copy(cp, err, "invalid field size");
            if (flen > 0) {
                if (q + (size_t)flen > cp->len)
                    whole = false;
                else
                    q += (size_t)flen;
            }
        }
        if (!whole)
            break;
        if (part_full(cp) && cp->defer)
            break;          /* the caller has the part sorted, then decodes on */
        if (part_full(cp) && write_part(cp, err) < 0)
            return -1;
        Batch *b = current_batch(cp);
        uint32_t r = b->nrows;
        q = pos + 2;
        for (int k = 0; k < ncols && rc == 0; k++) {
            int32_t flen = (int32_t)get_be32(cp->buf + q);
            q += 4;
            if (flen == -1) {
                b->cols[k].nulls[r] = 1;
                continue;
            }
            b->cols[k].nulls[r] = 0;
            rc = value_recv_binary(&cp->rows, cp->types[k], cp->buf + q, flen, &b->cols[k], r, 0,
                                err);
            if (rc < 0)
                sl_error_context(err, "COPY %s, line %lld, column %s", cp->spec->rel->name,
                                 (long long)cp->line + 1,
                                 cp->spec->rel->cols[cp->spec->attnums[k]].name);
            q += (size_t)flen;
        }
        if (rc < 0)
            return -1;
        b->nrows++;
        for (int k = 0; k < ncols; k++)
            b->cols[k].len = b->nrows;
        if (!cp->parts && check_row(cp, b, r, cp->line + 1, (SlStr){NULL, 0}, err) < 0)
            return -1;
        cp->line++;
        cp->decoded++;
        pos = q;
    }
    memmove(cp->buf, cp->buf + pos, cp->len - pos);
    cp->len -= pos;
    /* The end of the data at a row boundary ends it too, trailer or not
     * (pgx sends none), as in PostgreSQL. */
    if (final && rc == 0 && (cp->len > 0 || !cp->bin_header))
        return bad_binary_copy(cp, err, "unexpected EOF in COPY data");
    return rc;
}

/* Decodes the whole lines of the buffer (all of it when final). */
static int decode_text(RtCopy *cp, bool final, size_t *pos, SlError *err);

static int decode(RtCopy *cp, bool final, SlError *err)
{
    if (cp->spec->binary)
        return decode_binary(cp, final, err);
    size_t pos = 0;
    int rc = decode_text(cp, final, &pos, err);
    memmove(cp->buf, cp->buf + pos, cp->len - pos);
    cp->len -= pos;
    return rc;
}

/* The text formats' decode: the whole lines from buf + *pos on, *pos moved
 * past them (the caller drops them from buf once: a table's rows come one
 * a call). */
static int decode_text(RtCopy *cp, bool final, size_t *pos, SlError *err)
{
    Arena *da = &cp->rows;
    for (;;) {
        const char *in = cp->buf + *pos;
        size_t inlen = cp->len - *pos;
        Batch *b = cp->direct ? cp->cur : cp->nbatches ? cp->batches[cp->nbatches - 1] : NULL;
        if (cp->direct && b == NULL) {
            b = cp->cur = batch_alloc(da, cp->types, (uint32_t)cp->spec->ncols, EX_BATCH_ROWS);
            b->nrows = 0;
        } else if (!cp->direct) {
            b = current_batch(cp);
        }
        cp->res.consumed = 0;
        cp->res.ndead = 0;
        /* a table's rows one a call, so that each has its line (check_row) */
        uint32_t before = b->nrows;
        uint32_t cap = cp->parts ? EX_BATCH_ROWS : before + 1;
        int64_t records = cp->res.records;
        int rc = cp->spec->csv
                     ? fmt_csv_decode(&cp->fmt, in, inlen, final, b, cap, da, &cp->res, err)
                     : fmt_text_decode(&cp->fmt, in, inlen, final, b, cap, da, &cp->res, err);
        if (rc < 0)
            return -1;
        if (cp->res.ndead > 0)
            return bad_record(cp, in, &cp->res.dead[0], err);
        size_t used = (size_t)cp->res.consumed;
        if (!cp->parts && b->nrows > before) {
            SlStr text = line_text(cp, in, used, records);
            if (check_row(cp, b, before, cp->line + 1 + count_lines(in, (size_t)(text.ptr - in)),
                          text, err) < 0)
                return -1;
        }
        cp->line += count_lines(in, used);
        *pos += used;
        /* flush_direct frees b (the rows arena): read its count first */
        uint32_t nrows = b->nrows;
        cp->decoded += nrows - before;
        if (cp->direct && (nrows == EX_BATCH_ROWS || (final && nrows > 0)))
            flush_direct(cp);
        if (cp->defer && part_full(cp))
            return 0;       /* the caller writes it, then decodes the rest */
        if (part_full(cp) && write_part(cp, err) < 0)
            return -1;
        if (cp->parts ? nrows < EX_BATCH_ROWS : nrows == before)
            return 0;
    }
}

/* A stream's copy that failed after writing parts: says so in the detail
 * (unless the error has one), since those rows stay. */
static int failed(RtCopy *cp, SlError *err)
{
    if (cp->written > 0 && cp->tx == NULL && err->detail == NULL)
        sl_error_detail(err, "%llu rows of this COPY were appended to stream \"%s\" before "
                             "the error and stay there: a COPY into a stream writes its rows "
                             "in parts of %zu kB.",
                        (unsigned long long)cp->written, cp->spec->rel->name,
                        cp->part_bytes / 1024);
    return -1;
}

void rt_copy_progress(const RtCopy *cp, uint32_t *relid, int64_t *bytes, int64_t *rows)
{
    *relid = cp->spec->rel->oid;
    *bytes = (int64_t)cp->total;
    *rows = cp->decoded;
}

void rt_copy_abort_with(RtCopy *cp, SlError *err)
{
    failed(cp, err);
    rt_copy_abort(cp);
}

int rt_copy_data(RtCopy *cp, const char *data, size_t len, SlError *err)
{
    cp->total += len;
    if (cp->len + len > cp->cap) {
        size_t cap = SL_MAX(cp->len + len, cp->cap * 2);
        if (sl_mem_would_exceed(cp->mem, cap - cp->cap) != SL_MEM_OK) {
            check_budget(cp, err);
            return failed(cp, err);
        }
        cp->cap = cap;
        cp->buf = sl_realloc(cp->buf, cp->cap);
    }
    if (len > 0)
        memcpy(cp->buf + cp->len, data, len);
    cp->len += len;
    int rc = decode(cp, false, err);
    charge_buffers(cp);
    if (rc == 0)
        rc = check_budget(cp, err);
    return rc < 0 ? failed(cp, err) : 0;
}

int rt_copy_data_deferred(RtCopy *cp, const char *data, size_t len, RtAppend **part,
                          SlError *err)
{
    *part = NULL;
    bool table = !cp->parts && rt_append_has_pool(cp->rt);
    cp->defer = table || (cp->direct && cp->parts && cp->tx == NULL && rt_append_can_run(cp->rt));
    int rc = rt_copy_data(cp, data, len, err);
    cp->defer = false;
    if (rc == 0 && table && part_full(cp)) {
        /* a table's full part is sorted on a worker, never on the loop */
        *part = rt_append_new_copy_part(cp->rt, cp);
        return 0;
    }
    if (rc < 0 || !cp->direct || cp->tx != NULL || !part_full(cp))
        return rc;
    uint64_t rows = 0;
    for (int i = 0; i < cp->nchunks; i++)
        rows += stream_chunk_rows(&cp->chunks[i]);
    *part = rt_append_new(cp->rt, cp->spec->rel, cp->chunks, cp->nchunks);
    cp->chunks = NULL;
    cp->nchunks = cp->capchunks = 0;
    cp->written += rows;
    charge_buffers(cp);
    return 0;
}

int rt_copy_end(RtCopy *cp, char *tag, size_t tagsize, SlError *err)
{
    return rt_copy_end_deferred(cp, tag, tagsize, NULL, err);
}

int rt_copy_end_deferred(RtCopy *cp, char *tag, size_t tagsize, RtAppend **deferred,
                         SlError *err)
{
    if (deferred != NULL)
        *deferred = NULL;
    int rc = decode(cp, true, err);
    charge_buffers(cp);
    if (rc == 0)
        rc = check_budget(cp, err);
    uint64_t rows = 0;
    if (rc == 0 && cp->direct && deferred != NULL && cp->nchunks > 0 && cp->tx == NULL &&
        rt_append_can_defer(cp->rt)) {
        /* the last part: the server has it written off the loop */
        for (int i = 0; i < cp->nchunks; i++)
            rows += stream_chunk_rows(&cp->chunks[i]);
        *deferred = rt_append_new(cp->rt, cp->spec->rel, cp->chunks, cp->nchunks);
        cp->chunks = NULL;
        cp->nchunks = 0;
        rows += cp->written;
    } else if (rc == 0 && cp->parts) {
        uint64_t t0 = uv_hrtime();
        rc = write_part(cp, err);
        rows = cp->written;
        sl_log(LOG_DEBUG, "copy appended", "stream=%s rows=%llu append_ms=%.1f",
               log_value(cp->spec->rel->name), (unsigned long long)rows,
               (double)(uv_hrtime() - t0) / 1e6);
    } else if (rc == 0 && deferred != NULL && rt_append_has_pool(cp->rt)) {
        /* a table's last rows' sort, its merge, key checks and write (which
         * waits for the modify lock): on a worker, never the loop; the copy
         * goes with it */
        rows = kvsort_count(cp->sort);
        for (int i = 0; i < cp->nbatches; i++)
            rows += cp->batches[i]->nrows;
        *deferred = rt_append_new_copy(cp->rt, cp);
        snprintf(tag, tagsize, "COPY %llu", (unsigned long long)rows);
        return 0;
    } else if (rc == 0) {
        rc = rt_copy_insert(cp, &rows, err);
    }
    if (rc == 0)
        snprintf(tag, tagsize, "COPY %llu", (unsigned long long)rows);
    else
        failed(cp, err);
    rt_copy_abort(cp);
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------- COPY TO */

static void put_text(StrBuf *o, const char *s, size_t n, char delim)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        switch (ch) {
        case '\\': strbuf_append(o, "\\\\", 2); break;
        case '\n': strbuf_append(o, "\\n", 2); break;
        case '\r': strbuf_append(o, "\\r", 2); break;
        case '\t': strbuf_append(o, "\\t", 2); break;
        case '\b': strbuf_append(o, "\\b", 2); break;
        case '\f': strbuf_append(o, "\\f", 2); break;
        case '\v': strbuf_append(o, "\\v", 2); break;
        default:
            if (ch == delim) {
                strbuf_putc(o, '\\');
            }
            strbuf_putc(o, ch);
            break;
        }
    }
}

void rt_csv_field(StrBuf *o, const char *s, size_t n, char delimiter, const char *null_string)
{
    bool quote = n == 0 && null_string[0] == '\0';
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == delimiter || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (!quote && strlen(null_string) == n && memcmp(s, null_string, n) == 0)
        quote = true;
    if (!quote) {
        strbuf_append(o, s, n);
        return;
    }
    strbuf_putc(o, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            strbuf_putc(o, '"');
        strbuf_putc(o, s[i]);
    }
    strbuf_putc(o, '"');
}

static void put_field(StrBuf *o, const char *s, size_t n, const CopySpec *c)
{
    if (c->csv)
        rt_csv_field(o, s, n, c->delimiter, c->null_string);
    else
        put_text(o, s, n, c->delimiter);
}

struct CopyOut {
    ResultSink      base;
    const CopySpec *spec;
    const int      *attnums;    /* NULL: every column in order */
    int             ncols;
    const char *const *names;   /* the header's */
    Query           sub;        /* the SELECT that makes the rows */
    uint32_t        relid;      /* COPY table: its oid; COPY (query): 0 */
    rt_copy_out_cb  cb;
    void           *ctx;
    StrBuf          line, val;
    bool            header_done;
    bool            pause;      /* cb asked for a pause */
    uint64_t        rows;
    uint64_t        bytes;      /* output so far (the header's included) */
    SlError        *err;
    size_t          max_bytes;  /* on the loop: statement_mem; else 0 (none) */
};

/* Appends row r of b (columns attnums, or the first ncols in order) to
 * line in spec's format, newline included. */
static void copy_line(StrBuf *line, StrBuf *val, const Batch *b, uint32_t r, const int *attnums,
                      int ncols, const CopySpec *spec)
{
    for (int k = 0; k < ncols; k++) {
        const Vector *v = &b->cols[attnums ? attnums[k] : k];
        if (k > 0)
            strbuf_putc(line, spec->delimiter);
        if (vector_is_null(v, r)) {
            strbuf_puts(line, spec->null_string);
            continue;
        }
        strbuf_reset(val);
        value_format_text(v, r, val);
        put_field(line, val->data, val->len, spec);
    }
    strbuf_putc(line, '\n');
}

void rt_copy_text_line(StrBuf *line, StrBuf *val, const Batch *b, uint32_t r)
{
    static const CopySpec text = {.delimiter = '\t', .null_string = "\\N"};
    copy_line(line, val, b, r, NULL, (int)b->ncols, &text);
}

static int copy_out_batch_cb(ResultSink *sink, const Batch *b)
{
    CopyOut *co = (CopyOut *)sink;
    for (uint32_t r = 0; r < b->nrows; r++) {
        strbuf_reset(&co->line);
        copy_line(&co->line, &co->val, b, r, co->attnums, co->ncols, co->spec);
        int rc = co->cb(co->ctx, co->line.data, co->line.len);
        if (rc < 0)
            return -1;
        co->pause |= rc > 0;
        co->rows++;
        co->bytes += co->line.len;
    }
    if (co->max_bytes > 0 && co->bytes > co->max_bytes) {
        sl_error(co->err, ERRCODE_OUT_OF_MEMORY, "out of memory");
        sl_error_detail(co->err, "COPY TO runs on the server's loop and holds its whole output, "
                                 "which passed statement_mem (%zu kB).", co->max_bytes / 1024);
        sl_error_hint(co->err, "Copy fewer rows at once (a WHERE or LIMIT in COPY (query)), "
                               "or raise statement_mem.");
        return -1;
    }
    bool pause = co->pause;
    co->pause = false;
    return pause ? 1 : 0;
}

CopyOut *rt_copy_out_new(Runtime *rt, const Query *q, Arena *a, SlError *err)
{
    const CopySpec *c = q->copy;
    if ((rt == NULL || rt->st == NULL) && c->query == NULL) {
        sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                 "no catalog is open: the runtime was not initialized (rt_init)");
        return NULL;
    }
    CopyOut *co = ARENA_NEW(a, CopyOut);
    co->base.batch_cb = copy_out_batch_cb;
    co->spec = c;
    co->err = err;
    strbuf_init(&co->line);
    strbuf_init(&co->val);
    if (c->query != NULL) {
        co->sub = *c->query;
        co->sub.init = q->init;
        co->sub.ninit = q->ninit;
        co->ncols = co->sub.ntargets;
        co->names = co->sub.names;
    } else {
        co->sub.kind = QUERY_SELECT;
        Plan *scan = plan_new(a, PLAN_SCAN, NULL, c->rel->ncols);
        for (int k = 0; k < c->rel->ncols; k++)
            plan_set_col(scan, k, c->rel->cols[k].name, c->rel->cols[k].type, NULL);
        scan->u.scan.rel = c->rel;
        scan->u.scan.oid = c->rel->oid;
        co->sub.plan = scan;
        co->attnums = c->attnums;
        co->ncols = c->ncols;
        co->relid = c->rel->oid;
        const char **n = ARENA_ARRAY(a, const char *, c->ncols ? c->ncols : 1);
        for (int k = 0; k < c->ncols; k++)
            n[k] = c->rel->cols[c->attnums[k]].name;
        co->names = n;
    }
    return co;
}

void rt_copy_out_set_cb(CopyOut *co, rt_copy_out_cb cb, void *ctx)
{
    co->cb = cb;
    co->ctx = ctx;
}

const Query *rt_copy_out_query(const CopyOut *co)
{
    return &co->sub;
}

ResultSink *rt_copy_out_sink(CopyOut *co)
{
    return &co->base;
}

int rt_copy_out_header(CopyOut *co)
{
    if (co->header_done || !co->spec->header)
        return 0;
    co->header_done = true;
    strbuf_reset(&co->line);
    for (int k = 0; k < co->ncols; k++) {
        if (k > 0)
            strbuf_putc(&co->line, co->spec->delimiter);
        put_field(&co->line, co->names[k], strlen(co->names[k]), co->spec);
    }
    strbuf_putc(&co->line, '\n');
    co->bytes += co->line.len;
    return co->cb(co->ctx, co->line.data, co->line.len) < 0 ? -1 : 0;
}

void rt_copy_out_progress(const CopyOut *co, uint32_t *relid, int64_t *bytes, int64_t *rows)
{
    *relid = co->relid;
    *bytes = (int64_t)co->bytes;
    *rows = (int64_t)co->rows;
}

void rt_copy_out_free(CopyOut *co)
{
    if (co == NULL)
        return;
    strbuf_free(&co->line);
    strbuf_free(&co->val);
}

int rt_copy_out(const Prepared *p, rt_copy_out_cb cb, void *ctx, char *tag, size_t tagsize,
                SlError *err)
{
    const Query *q = rt_prepared_query(p);
    Runtime *rt = rt_prepared_runtime(p);
    if ((rt == NULL || rt->st == NULL) && q->copy->query == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no catalog is open: the runtime was not initialized (rt_init)");
    if (rt_check_query(rt, q, err) < 0)
        return -1;
    /* the budget: statement_mem for the query's memory and the output */
    size_t limit = settings_statement_mem(settings_current());
    SlMemAccount *mem = sl_mem_account_new(limit);
    SlMemAccount *old_mem = sl_mem_account_enter(mem);
    Arena work;
    arena_init(&work, 64 * 1024);
    CopyOut *co = rt_copy_out_new(rt, q, &work, err);
    int rc = co != NULL ? 0 : -1;
    uint64_t rows = 0;
    if (rc == 0) {
        rt_copy_out_set_cb(co, cb, ctx);
        co->max_bytes = limit;
        ExCtx cx = {.arena = &work, .err = err, .st = rt != NULL ? rt->st : NULL,
                    .endable_scans = true};
        rt_ctx_hooks(rt, &cx);
        rc = rt_copy_out_header(co);
        if (rc == 0)
            rc = rt_run_select(rt, &co->sub, &cx, &co->base, &rows);
        if (rc == 0)
            snprintf(tag, tagsize, "COPY %llu", (unsigned long long)co->rows);
        rt_copy_out_free(co);
    }
    arena_destroy(&work);
    sl_mem_account_enter(old_mem);
    sl_mem_account_unref(mem);
    return rc < 0 ? -1 : 0;
}
