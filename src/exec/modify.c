/*
 * modify.c -- INSERT, UPDATE and DELETE over tables and streams.
 *
 *   ex_modify(cx, plan, emit, arg, &count)
 *   ex_check_not_null, ex_duplicate_key   a row's 23502 and 23505, which
 *                                         COPY into a table gives too
 *
 * A table's CHECK constraints (ModifyPlan.checks) are evaluated over each
 * batch of new rows, and a row that makes one false fails the statement
 * with 23514, after its NOT NULL columns are checked.
 *
 * A statement is atomic: its writes are collected in one StateBatch and
 * committed once (synced) at the end, so a failing row -- a duplicate key,
 * a NULL in a NOT NULL column -- leaves nothing behind.  An INSERT into a
 * stream is one stream_append of all its rows.  RETURNING rows are kept
 * until the commit and only then handed to emit.
 *
 * Inside a transaction block (ExCtx.tx, txbuf.h) the statement's writes go
 * to the block's buffer instead, once the statement succeeded, and an
 * INSERT into a stream adds one chunk to it; key checks read the block's
 * writes over the committed rows, and the buffer's size is held to
 * statement_mem (53200).  The block's COMMIT writes them (runtime.h's
 * rt_xact_commit).
 *
 * Keys: the statement's own writes are tracked per storage key (puts,
 * deletes, in-place updates), so a key inserted twice is a duplicate, a
 * row inserted and then met again by ON CONFLICT DO UPDATE is PostgreSQL's
 * 21000, and UPDATE may move keys around (SET id = id + 1, or swapping
 * two keys): deletes are applied before puts, and the uniqueness of the
 * new keys is checked against the table as it will be after the statement
 * (PostgreSQL checks each row as it goes, so it refuses some such updates
 * that sluice accepts).
 */
#include "exec/op.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/settings.h"
#include "sluice/txbuf.h"

#include <stdio.h>

typedef struct KeyInfo {
    uint32_t puts;
    bool     deleted;
    bool     inplace;
    bool     conflict_updated;  /* ON CONFLICT DO UPDATE touched it */
} KeyInfo;

typedef struct Pending {
    SlStr key;
    SlStr val;          /* NULL ptr: a delete */
} Pending;

typedef struct Modify {
    ExCtx             *cx;
    const ModifyPlan  *m;
    const CatRelation *rel;
    Arena             *a;
    ExHashTab         *keys;
    KeyInfo           *info;
    uint32_t           infocap;
    Pending           *puts, *dels;
    uint32_t           nputs, ndels, capputs, capdels;
    RowBuf             ret;         /* RETURNING rows, emitted after the commit */
    uint64_t           count;
    StrBuf             key;
} Modify;

static KeyInfo *key_info(Modify *md, const StrBuf *key)
{
    bool inserted;
    uint32_t id = ex_ht_insert(md->keys, key->data, (uint32_t)key->len, &inserted);
    if (id >= md->infocap) {
        uint32_t cap = md->infocap ? md->infocap * 2 : 256;
        KeyInfo *more = ARENA_ARRAY(md->a, KeyInfo, cap);
        if (md->infocap)
            memcpy(more, md->info, sizeof(KeyInfo) * md->infocap);
        md->info = more;
        md->infocap = cap;
    }
    if (inserted)
        memset(&md->info[id], 0, sizeof(KeyInfo));
    return &md->info[id];
}

static void add_pending(Modify *md, bool del, const StrBuf *key, const StrBuf *val)
{
    Pending **arr = del ? &md->dels : &md->puts;
    uint32_t *n = del ? &md->ndels : &md->nputs, *cap = del ? &md->capdels : &md->capputs;
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 256;
        Pending *more = ARENA_ARRAY(md->a, Pending, c);
        if (*n)
            memcpy(more, *arr, sizeof(Pending) * *n);
        *arr = more;
        *cap = c;
    }
    Pending *p = &(*arr)[(*n)++];
    p->key.ptr = arena_memdup(md->a, key->data, key->len);
    p->key.len = (uint32_t)key->len;
    p->val.ptr = val ? arena_memdup(md->a, val->data ? val->data : "", val->len) : NULL;
    p->val.len = val ? (uint32_t)val->len : 0;
}

static void put_row(Modify *md, const StrBuf *key, const Batch *b, uint32_t row)
{
    StrBuf val;
    strbuf_init(&val);
    row_encode(b, row, &val);
    add_pending(md, false, key, &val);
    strbuf_free(&val);
}

/* "(1, null, 1.5)": a row as PostgreSQL's error details print it. */
static void row_text(const Batch *b, uint32_t row, const int *cols, int ncols, StrBuf *out)
{
    for (int k = 0; k < ncols; k++) {
        int c = cols ? cols[k] : k;
        if (k > 0)
            strbuf_puts(out, ", ");
        if (vector_is_null(&b->cols[c], row))
            strbuf_puts(out, "null");
        else
            value_format_text(&b->cols[c], row, out);
    }
}

int ex_check_not_null(const CatRelation *rel, const Batch *b, uint32_t row, SlError *err)
{
    for (int c = 0; c < rel->ncols; c++) {
        if (!rel->cols[c].not_null || !vector_is_null(&b->cols[c], row))
            continue;
        sl_error(err, ERRCODE_NOT_NULL_VIOLATION,
                 "null value in column \"%s\" of relation \"%s\" violates not-null constraint",
                 rel->cols[c].name, rel->name);
        StrBuf t;
        strbuf_init(&t);
        row_text(b, row, NULL, rel->ncols, &t);
        sl_error_detail(err, "Failing row contains (%s).", t.data ? t.data : "");
        strbuf_free(&t);
        return -1;
    }
    return 0;
}

static int check_not_null(Modify *md, const Batch *b, uint32_t row)
{
    return ex_check_not_null(md->rel, b, row, md->cx->err);
}

static EvalCtx eval_ctx(Modify *md, Arena *scratch)
{
    return (EvalCtx){.arena = scratch, .err = md->cx->err, .params = md->cx->params,
                     .nparams = md->cx->nparams, .subplans = md->cx->subplans,
                     .nsubplans = md->cx->nsubplans, .exec = md->cx, .now = md->cx->now,
                     .system_arg = md->cx->system_arg, .hooks = &md->cx->hooks};
}

/* The table's CHECK constraints over the n new rows of b (the relation's
 * columns), or only the nsel rows sel lists (sel NULL: all): one vector
 * each, in scratch; *out NULL when there are none. */
static int eval_checks(Modify *md, Arena *scratch, const Batch *b, uint32_t n,
                       const uint32_t *sel, uint32_t nsel, Vector **out)
{
    const ModifyPlan *m = md->m;
    *out = NULL;
    if (m->nchecks == 0 || n == 0)
        return 0;
    Vector *v = ARENA_ARRAY(scratch, Vector, m->nchecks);
    EvalCtx ecx = eval_ctx(md, scratch);
    for (int k = 0; k < m->nchecks; k++)
        if ((sel ? ex_eval_sel(&ecx, m->checks[k], b, n, sel, nsel, &v[k])
                 : ex_eval(&ecx, m->checks[k], b, n, &v[k])) < 0)
            return -1;
    *out = v;
    return 0;
}

/* New row r of b: its NOT NULL columns (23502), then the CHECK
 * constraints evaluated into checks (23514 for the first that is false;
 * NULL passes, as in PostgreSQL). */
static int check_row(Modify *md, const Batch *b, uint32_t r, const Vector *checks)
{
    if (check_not_null(md, b, r) < 0)
        return -1;
    for (int k = 0; checks != NULL && k < md->m->nchecks; k++) {
        if (vector_is_null(&checks[k], r) || checks[k].v.b[r])
            continue;
        const CatRelation *rel = md->rel;
        sl_error(md->cx->err, ERRCODE_CHECK_VIOLATION,
                 "new row for relation \"%s\" violates check constraint \"%s\"", rel->name,
                 md->m->check_names[k]);
        StrBuf t;
        strbuf_init(&t);
        row_text(b, r, NULL, rel->ncols, &t);
        sl_error_detail(md->cx->err, "Failing row contains (%s).", t.data ? t.data : "");
        strbuf_free(&t);
        return -1;
    }
    return 0;
}

int ex_duplicate_key(const CatRelation *rel, const Batch *b, uint32_t row, SlError *err)
{
    sl_error(err, ERRCODE_UNIQUE_VIOLATION,
             "duplicate key value violates unique constraint \"%s_pkey\"", rel->name);
    StrBuf names, vals;
    strbuf_init(&names);
    strbuf_init(&vals);
    for (int k = 0; k < rel->npk; k++)
        strbuf_printf(&names, "%s%s", k ? ", " : "", rel->cols[rel->pk[k]].name);
    row_text(b, row, rel->pk, rel->npk, &vals);
    sl_error_detail(err, "Key (%s)=(%s) already exists.", names.data, vals.data);
    strbuf_free(&names);
    strbuf_free(&vals);
    return -1;
}

static int duplicate_key(Modify *md, const Batch *b, uint32_t row)
{
    return ex_duplicate_key(md->rel, b, row, md->cx->err);
}

/* Is key in the table (before this statement, with the writes of the
 * transaction block laid over it)?  1, 0, -1. */
static int stored(Modify *md, const StrBuf *key, Arena *a, Batch *into, uint32_t row)
{
    const void *tval;
    size_t tlen;
    int t = state_tx_lookup(md->cx->tx, key->data, key->len, &tval, &tlen);
    if (t == 0)
        return 0;
    if (t == 1) {
        if (into != NULL && row_decode(tval, tlen, into, row, a) < 0)
            return sl_error(md->cx->err, ERRCODE_INTERNAL_ERROR, "cannot decode a row");
        return 1;
    }
    if (into != NULL)
        return tbl_get(md->cx->st, md->rel, key, a, into, row, md->cx->err);
    void *val;
    size_t vlen;
    return state_get(md->cx->st, key->data, key->len, a, &val, &vlen, md->cx->err);
}

static SlType *rel_types(Arena *a, const CatRelation *rel)
{
    SlType *t = ARENA_ARRAY(a, SlType, rel->ncols ? rel->ncols : 1);
    for (int c = 0; c < rel->ncols; c++)
        t[c] = rel->cols[c].type;
    return t;
}

/* RETURNING over rows of b (laid out as the table's columns). */
static int returning(Modify *md, Arena *scratch, const Batch *b, const uint32_t *sel,
                     uint32_t n)
{
    const ModifyPlan *m = md->m;
    if (m->nreturning == 0 || n == 0)
        return 0;
    EvalCtx ecx = {.arena = scratch, .err = md->cx->err, .params = md->cx->params,
                   .nparams = md->cx->nparams, .subplans = md->cx->subplans,
                   .nsubplans = md->cx->nsubplans, .exec = md->cx, .now = md->cx->now,
                   .system_arg = md->cx->system_arg, .hooks = &md->cx->hooks};
    ExBatch out = {.b = {b->nrows, (uint32_t)m->nreturning, NULL}, .sel = (uint32_t *)sel, .n = n};
    out.b.cols = ARENA_ARRAY(scratch, Vector, m->nreturning);
    for (int k = 0; k < m->nreturning; k++)
        if (ex_eval_sel(&ecx, m->returning[k], b, b->nrows, sel, n, &out.b.cols[k]) < 0)
            return -1;
    rowbuf_append(&md->ret, &out);
    return 0;
}

/* The writes a transaction block holds count against statement_mem: past
 * it the statement fails with 53200 (and so the block). */
static int tx_check_memory(Modify *md)
{
    return state_tx_check_budget(md->cx->tx, settings_statement_mem(settings_current()),
                                 md->cx->err);
}

/* ---------------------------------------------------------------- INSERT */

/* ON CONFLICT DO UPDATE of the rows listed: existing rows are in ex, the
 * proposed ones at rows src[] of b. */
static int conflict_update(Modify *md, Arena *scratch, const Batch *b, const uint32_t *src,
                           Batch *ex, SlStr *keys, uint32_t n)
{
    const ModifyPlan *m = md->m;
    const CatRelation *rel = md->rel;
    int nc = rel->ncols;
    Batch both = {n, (uint32_t)(2 * nc), ARENA_ARRAY(scratch, Vector, 2 * nc)};
    for (int c = 0; c < nc; c++) {
        both.cols[c] = ex->cols[c];
        both.cols[c].len = n;
        Vector *v = &both.cols[nc + c];
        vector_init(v, scratch, rel->cols[c].type, n, true);
        for (uint32_t r = 0; r < n; r++)
            ex_copy_value(v, r, &b->cols[c], src[r], NULL);
    }
    EvalCtx ecx = eval_ctx(md, scratch);
    uint32_t *sel = ARENA_ARRAY(scratch, uint32_t, n);
    uint32_t k = 0;
    if (m->conflict_where != NULL) {
        Vector w;
        if (ex_eval(&ecx, m->conflict_where, &both, n, &w) < 0)
            return -1;
        for (uint32_t r = 0; r < n; r++)
            if (!vector_is_null(&w, r) && w.v.b[r])
                sel[k++] = r;
    } else {
        for (uint32_t r = 0; r < n; r++)
            sel[k++] = r;
    }
    if (k == 0)
        return 0;
    Batch upd = {n, (uint32_t)nc, ARENA_ARRAY(scratch, Vector, nc)};
    for (int c = 0; c < nc; c++) {
        if (m->conflict_set[c] == NULL) {
            upd.cols[c] = both.cols[c];
        } else if (ex_eval_sel(&ecx, m->conflict_set[c], &both, n, sel, k, &upd.cols[c]) < 0) {
            return -1;
        }
    }
    Vector *checks;
    if (eval_checks(md, scratch, &upd, n, sel, k, &checks) < 0)
        return -1;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t r = sel[j];
        if (check_row(md, &upd, r, checks) < 0)
            return -1;
        StrBuf key = {(char *)keys[r].ptr, keys[r].len, keys[r].len};
        put_row(md, &key, &upd, r);
        md->count++;
    }
    return returning(md, scratch, &upd, sel, k);
}

static int insert_table_batch(Modify *md, Arena *scratch, const Batch *b)
{
    const ModifyPlan *m = md->m;
    const CatRelation *rel = md->rel;
    uint32_t n = b->nrows;
    Batch *ex = NULL;
    uint32_t *csrc = NULL, nconf = 0;
    SlStr *ckeys = NULL;
    uint32_t *ins = ARENA_ARRAY(scratch, uint32_t, n ? n : 1);
    uint32_t nins = 0;
    if (m->conflict == ONCONFLICT_UPDATE) {
        ex = batch_alloc(scratch, rel_types(scratch, rel), (uint32_t)rel->ncols, n ? n : 1);
        csrc = ARENA_ARRAY(scratch, uint32_t, n ? n : 1);
        ckeys = ARENA_ARRAY(scratch, SlStr, n ? n : 1);
    }
    Vector *checks;
    if (eval_checks(md, scratch, b, n, NULL, 0, &checks) < 0)
        return -1;
    for (uint32_t r = 0; r < n; r++) {
        if (check_row(md, b, r, checks) < 0)
            return -1;
        if (rel->npk == 0) {
            uint64_t id = tbl_next_rowid(md->cx->st, rel, md->cx->err);
            if (id == UINT64_MAX)
                return -1;
            tbl_rowid_key(rel, id, &md->key);
            put_row(md, &md->key, b, r);
            ins[nins++] = r;
            md->count++;
            continue;
        }
        tbl_key(rel, b, r, &md->key);
        KeyInfo *ki = key_info(md, &md->key);
        bool exists;
        if (ki->puts > 0 || ki->conflict_updated) {
            exists = true;
        } else if (ki->deleted) {
            exists = false;
        } else {
            int rc = stored(md, &md->key, scratch, ex, nconf);
            if (rc < 0)
                return -1;
            exists = rc == 1;
        }
        if (!exists) {
            ki->puts++;
            put_row(md, &md->key, b, r);
            ins[nins++] = r;
            md->count++;
            continue;
        }
        if (m->conflict == ONCONFLICT_NOTHING)
            continue;
        if (m->conflict == ONCONFLICT_NONE)
            return duplicate_key(md, b, r);
        if (ki->puts > 0 || ki->conflict_updated) {
            sl_error(md->cx->err, ERRCODE_CARDINALITY_VIOLATION,
                     "ON CONFLICT DO UPDATE command cannot affect row a second time");
            sl_error_hint(md->cx->err, "Ensure that no rows proposed for insertion within the "
                                       "same command have duplicate constrained values.");
            return -1;
        }
        ki->conflict_updated = true;
        csrc[nconf] = r;
        ckeys[nconf].ptr = arena_memdup(scratch, md->key.data, md->key.len);
        ckeys[nconf].len = (uint32_t)md->key.len;
        nconf++;
    }
    if (returning(md, scratch, b, ins, nins) < 0)
        return -1;
    if (nconf > 0)
        return conflict_update(md, scratch, b, csrc, ex, ckeys, nconf);
    return 0;
}

static const char *stream_connector(const CatRelation *rel, char *buf, size_t size)
{
    const char *p = strstr(rel->options ? rel->options : "", "\"connector\"");
    if (p == NULL)
        return NULL;
    p = strchr(p + 11, '"');
    if (p == NULL)
        return NULL;
    const char *e = strchr(p + 1, '"');
    if (e == NULL)
        return NULL;
    snprintf(buf, size, "%.*s", (int)(e - p - 1), p + 1);
    return buf;
}

static int insert_stream(Modify *md, ExOp *src)
{
    const CatRelation *rel = md->rel;
    char conn[64];
    const char *c = stream_connector(rel, conn, sizeof(conn));
    if (c != NULL && strcmp(c, "internal") != 0)
        return sl_error(md->cx->err, ERRCODE_WRONG_OBJECT_TYPE,
                        "cannot insert into stream \"%s\": its rows come from its connector "
                        "\"%s\"",
                        rel->name, c);
    RowBuf rb;
    ColumnDesc *cols = ARENA_ARRAY(md->a, ColumnDesc, rel->ncols);
    for (int k = 0; k < rel->ncols; k++)
        cols[k] = (ColumnDesc){rel->cols[k].name, rel->cols[k].type};
    rowbuf_init(&rb, md->a, cols, rel->ncols);
    ExBatch *in;
    int rc;
    while ((rc = op_pull(src, &in)) > 0)
        rowbuf_append(&rb, in);
    if (rc < 0 || ex_check_memory(md->cx->err) < 0)
        return -1;
    /* one batch of all the rows: one append, one chunk */
    uint32_t total = (uint32_t)rb.nrows;
    Batch *all = batch_alloc(md->a, rb.types, (uint32_t)rel->ncols, total ? total : 1);
    if (ex_check_memory(md->cx->err) < 0)
        return -1;
    uint32_t r = 0;
    for (int bi = 0; bi < rb.nbatches; bi++) {
        const Batch *b = rb.batches[bi];
        for (uint32_t i = 0; i < b->nrows; i++, r++) {
            for (int k = 0; k < rel->ncols; k++)
                ex_copy_value(&all->cols[k], r, &b->cols[k], i, NULL);
            if (check_not_null(md, b, i) < 0)
                return -1;
        }
    }
    all->nrows = total;
    for (int k = 0; k < rel->ncols; k++)
        all->cols[k].len = total;
    if (total > 0 && md->cx->tx != NULL) {
        /* inside a transaction block: appended at its COMMIT */
        state_tx_append(md->cx->tx, rel, all);
        if (tx_check_memory(md) < 0)
            return -1;
    } else if (total > 0 && md->cx->defer_chunk != NULL && md->m->nreturning == 0) {
        stream_chunk_add(md->cx->defer_chunk, all);
        md->cx->defer_rel = rel;
    } else if (total > 0) {
        int64_t first;
        if (stream_append(md->cx->st, rel, all, &first, md->cx->err) < 0)
            return -1;
    }
    md->count = total;
    return returning(md, md->a, all, NULL, total);
}

/* ------------------------------------------------------- UPDATE, DELETE */

/* A batch of the table's columns from a source batch [key, cols...]. */
static Batch *row_part(Arena *a, const Batch *b, int ncols)
{
    Batch *r = ARENA_NEW(a, Batch);
    r->nrows = b->nrows;
    r->ncols = (uint32_t)ncols;
    r->cols = b->cols + 1;
    return r;
}

static int update_batch(Modify *md, Arena *scratch, const Batch *b)
{
    const CatRelation *rel = md->rel;
    Batch *row = row_part(scratch, b, rel->ncols);
    Vector *checks;
    if (eval_checks(md, scratch, row, b->nrows, NULL, 0, &checks) < 0)
        return -1;
    for (uint32_t r = 0; r < b->nrows; r++) {
        if (check_row(md, row, r, checks) < 0)
            return -1;
        const SlStr *old = &b->cols[0].v.str[r];
        StrBuf oldkey = {(char *)old->ptr, old->len, old->len};
        if (rel->npk == 0) {
            put_row(md, &oldkey, row, r);
            md->count++;
            continue;
        }
        tbl_key(rel, row, r, &md->key);
        bool same = md->key.len == old->len && memcmp(md->key.data, old->ptr, old->len) == 0;
        if (!same) {
            key_info(md, &oldkey)->deleted = true;
            add_pending(md, true, &oldkey, NULL);
        }
        KeyInfo *ki = key_info(md, &md->key);
        ki->puts++;
        ki->inplace |= same;
        if (ki->puts > 1)
            return duplicate_key(md, row, r);
        put_row(md, &md->key, row, r);
        md->count++;
    }
    return returning(md, scratch, row, NULL, b->nrows);
}

/* The new keys of an UPDATE that are neither in place nor freed by it must
 * not exist yet. */
static int check_moved_keys(Modify *md, Arena *scratch)
{
    if (md->m->kind != MODIFY_UPDATE || md->rel->npk == 0)
        return 0;
    Batch *one = batch_alloc(scratch, rel_types(scratch, md->rel), (uint32_t)md->rel->ncols, 1);
    for (uint32_t i = 0; i < md->nputs; i++) {
        StrBuf key = {(char *)md->puts[i].key.ptr, md->puts[i].key.len, md->puts[i].key.len};
        KeyInfo *ki = key_info(md, &key);
        if (ki->inplace || ki->deleted)
            continue;
        int rc = stored(md, &key, scratch, NULL, 0);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            if (row_decode(md->puts[i].val.ptr, md->puts[i].val.len, one, 0, scratch) < 0)
                return sl_error(md->cx->err, ERRCODE_INTERNAL_ERROR, "cannot decode a new row");
            one->nrows = 1;
            return duplicate_key(md, one, 0);
        }
    }
    return 0;
}

static int delete_batch(Modify *md, Arena *scratch, const Batch *b)
{
    for (uint32_t r = 0; r < b->nrows; r++) {
        const SlStr *old = &b->cols[0].v.str[r];
        StrBuf key = {(char *)old->ptr, old->len, old->len};
        add_pending(md, true, &key, NULL);
        md->count++;
    }
    return returning(md, scratch, row_part(scratch, b, md->rel->ncols), NULL, b->nrows);
}

/* ---------------------------------------------------------------- driver */

static int commit(Modify *md)
{
    StateTx *tx = md->cx->tx;
    if (tx != NULL) {
        /* inside a transaction block: kept for its COMMIT, deletes first */
        for (uint32_t i = 0; i < md->ndels; i++)
            if (state_tx_write(tx, md->cx->st, md->rel, md->dels[i].key.ptr,
                               md->dels[i].key.len, NULL, 0, md->cx->err) < 0)
                return -1;
        for (uint32_t i = 0; i < md->nputs; i++)
            if (state_tx_write(tx, md->cx->st, md->rel, md->puts[i].key.ptr,
                               md->puts[i].key.len, md->puts[i].val.ptr, md->puts[i].val.len,
                               md->cx->err) < 0)
                return -1;
        return tx_check_memory(md);
    }
    StateBatch *wb = state_batch_new();
    for (uint32_t i = 0; i < md->ndels; i++)
        state_batch_delete(wb, md->dels[i].key.ptr, md->dels[i].key.len);
    for (uint32_t i = 0; i < md->nputs; i++)
        state_batch_put(wb, md->puts[i].key.ptr, md->puts[i].key.len, md->puts[i].val.ptr,
                        md->puts[i].val.len);
    int rc = 0;
    if (md->ndels + md->nputs > 0)
        rc = state_batch_commit(md->cx->st, wb, true, md->cx->err);
    state_batch_free(wb);
    return rc;
}

int ex_modify(ExCtx *cx, const ModifyPlan *m, ex_emit_fn emit, void *arg, uint64_t *count)
{
    if (cx->st == NULL)
        return sl_error(cx->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no state store is open: cannot write \"%s\"", m->rel->name);
    Modify md = {.cx = cx, .m = m, .rel = m->rel, .a = cx->arena};
    md.keys = ex_ht_new(cx->arena);
    strbuf_init(&md.key);
    rowbuf_init(&md.ret, cx->arena, m->returning_cols, m->nreturning);
    ExOp *src = ex_op_build(cx, m->source);
    int rc = src == NULL ? -1 : 0;
    Arena scratch;
    arena_init(&scratch, 64 * 1024);
    if (rc == 0 && m->kind == MODIFY_INSERT && m->rel->kind == REL_STREAM) {
        rc = insert_stream(&md, src);
    } else if (rc == 0) {
        ExBatch *in;
        while ((rc = op_pull(src, &in)) > 0) {
            arena_reset(&scratch);
            const Batch *b = ex_batch_compact(&scratch, in);
            if (m->kind == MODIFY_INSERT)
                rc = insert_table_batch(&md, &scratch, b);
            else if (m->kind == MODIFY_UPDATE)
                rc = update_batch(&md, &scratch, b);
            else
                rc = delete_batch(&md, &scratch, b);
            if (rc < 0)
                break;
        }
        if (rc == 0)
            rc = check_moved_keys(&md, &scratch);
        if (rc == 0) {
            SLUICE_FAULT("modify_before_commit");
            rc = commit(&md);
        }
    }
    arena_destroy(&scratch);
    ex_op_close(src);
    /* RETURNING rows once the statement is durable */
    for (int i = 0; rc == 0 && emit != NULL && i < md.ret.nbatches; i++)
        if (emit(arg, md.ret.batches[i]) < 0)
            rc = -1;
    ex_ht_free(md.keys);
    strbuf_free(&md.key);
    *count = md.count;
    return rc < 0 ? -1 : 0;
}
