/*
 * append.c -- appends to streams made durable off the loop, so that the
 * appends of concurrent clients share fsyncs (group commit; runtime.h).
 *
 *   rt_append_can_defer, rt_append_can_run   whether the Runtime has a
 *                      pool to run them on (and group commit mode, for
 *                      statements' last appends): its engine's for
 *                      appends, its statements' for a COPY into a table
 *   rt_append_new      an append of chunks encoded already (runtime_int.h)
 *   rt_append_new_copy, rt_append_has_pool   a COPY into a table, written
 *                      off the loop under the modify lock (copy.c)
 *   rt_append_new_copy_part   a COPY into a table: a full part of its rows
 *                      sorted into a run file off the loop (copy.c)
 *   rt_xact_new, rt_xact_free, rt_xact_empty, rt_xact_writes   a block's buffer, for the
 *                      server (txbuf.h's StateTx)
 *   rt_xact_check_relations   on the loop, before a COMMIT: 40001 when a
 *                      relation the block wrote was dropped meanwhile
 *   rt_append_new_xact, rt_xact_commit, rt_xact_commit_async   a
 *                      transaction block's COMMIT: under the modify lock,
 *                      its keys checked against what others committed
 *                      meanwhile (23505 / 40001), then one durable write
 *                      (txbuf.h), run on the statements' pool
 *   rt_append_start    run it on that pool, then call done on the loop
 *   rt_append_is_copy  does it use a COPY into a table
 *   rt_append_interrupt  cancel a COPY into a table waiting for its lock
 *                      (or, still queued, for a worker: it never runs),
 *                      or a stream append still queued for a worker
 *
 * In group commit mode a COPY into a stream (rt_copy_end_deferred) encodes
 * its rows on the loop as they arrive, but hands the durable write back to
 * the server instead of blocking the loop on it; the server answers the
 * client in done.  The parts a COPY into a stream writes before its end
 * (copy.c) go the same way in either commit mode, the session reading no
 * more of that client's input until each is written.  A COPY into a table
 * goes to a worker too, in either mode: its write waits for the lock that
 * makes table writes one at a time, which the loop must never wait for.
 * (INSERT needs none of this: it runs on a worker thread like every
 * SELECT and DML statement, session.c.)  What runs concurrently is the
 * writes, and stream_append_many (relstore.h) lets the writes that meet
 * share one.  Each RtAppend carries the Runtime it was made for (its
 * pools and state store): nothing here is global.
 */
#include "runtime_int.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/txbuf.h"

#include <stdatomic.h>

struct RtAppend {
    PoolWork           work;
    Runtime           *rt;          /* its pools and state store */
    RtCopy            *copy;        /* a COPY into a table, or NULL */
    bool               copy_part;   /* ... a part of it to sort (not freed) */
    StateTx           *tx;          /* a transaction block's COMMIT, or NULL */
    _Atomic int        interrupt;   /* its cancel (ex_interrupt_enter) */
    const CatRelation *rel;         /* referenced */
    StrBuf            *chunks;
    int                nchunks;
    int                rc;
    SlError            err;
    rt_append_done_cb  done;
    void              *arg;
};

bool rt_append_can_defer(const Runtime *rt)
{
    return rt->engine != NULL && stream_commit_mode(rt->st) == STREAM_COMMIT_GROUP;
}

bool rt_append_can_run(const Runtime *rt)
{
    return rt->engine != NULL;
}

RtAppend *rt_append_new(Runtime *rt, const CatRelation *rel, StrBuf *chunks, int nchunks)
{
    RtAppend *ap = sl_calloc(1, sizeof(RtAppend));
    ap->rt = rt;
    cat_relation_ref(rel);
    ap->rel = rel;
    ap->chunks = chunks;
    ap->nchunks = nchunks;
    return ap;
}

bool rt_append_has_pool(const Runtime *rt)
{
    return rt->statements != NULL;
}

RtAppend *rt_append_new_copy(Runtime *rt, RtCopy *cp)
{
    RtAppend *ap = sl_calloc(1, sizeof(RtAppend));
    ap->rt = rt;
    ap->copy = cp;
    return ap;
}

RtAppend *rt_append_new_copy_part(Runtime *rt, RtCopy *cp)
{
    RtAppend *ap = rt_append_new_copy(rt, cp);
    ap->copy_part = true;
    return ap;
}

StateTx *rt_xact_new(void)
{
    return state_tx_new();
}

void rt_xact_free(StateTx *tx)
{
    state_tx_free(tx);
}

uint64_t rt_xact_writes(const StateTx *tx)
{
    return state_tx_writes(tx);
}

bool rt_xact_empty(const StateTx *tx)
{
    return state_tx_empty(tx);
}

int rt_xact_check_relations(Runtime *rt, const StateTx *tx, SlError *err)
{
    const CatRelation *rel;
    for (int i = 0; (rel = state_tx_relation(tx, i)) != NULL; i++) {
        if (rt->cat != NULL && cat_lookup(rt->cat, rel->name) == rel)
            continue;
        sl_error(err, ERRCODE_T_R_SERIALIZATION_FAILURE,
                 "could not serialize access due to concurrent DROP of \"%s\"", rel->name);
        sl_error_detail(err, "Another session dropped or replaced \"%s\" after the "
                             "transaction block wrote it.", rel->name);
        sl_error_hint(err, "The transaction block was rolled back.");
        return -1;
    }
    return 0;
}

bool rt_xact_commit_async(const Runtime *rt)
{
    return rt_append_has_pool(rt);
}

RtAppend *rt_append_new_xact(Runtime *rt, StateTx *tx)
{
    RtAppend *ap = sl_calloc(1, sizeof(RtAppend));
    ap->rt = rt;
    ap->tx = tx;
    return ap;
}

/* The error of a COMMIT that another session's writes refused. */
static void conflict_error(const StateTxConflict *conf, SlError *err)
{
    const CatRelation *rel = conf->rel;
    if (conf->row != NULL && rel != NULL) {
        Arena a;
        arena_init(&a, 4096);
        SlType *types = ARENA_ARRAY(&a, SlType, rel->ncols ? rel->ncols : 1);
        for (int c = 0; c < rel->ncols; c++)
            types[c] = rel->cols[c].type;
        Batch *b = batch_alloc(&a, types, (uint32_t)rel->ncols, 1);
        if (row_decode(conf->row, conf->rowlen, b, 0, &a) == 0) {
            b->nrows = 1;
            ex_duplicate_key(rel, b, 0, err);
            sl_error_hint(err, "Another session committed a row with this key after the "
                               "transaction block inserted it; the block was rolled back.");
            arena_destroy(&a);
            return;
        }
        arena_destroy(&a);
    }
    sl_error(err, ERRCODE_T_R_SERIALIZATION_FAILURE,
             "could not serialize access due to concurrent update");
    if (rel != NULL)
        sl_error_detail(err, "Another session changed a row of \"%s\" that the transaction "
                             "block wrote, and committed first.", rel->name);
    sl_error_hint(err, "The transaction block was rolled back; run it again.");
}

int rt_xact_commit(Runtime *rt, StateTx *tx, SlError *err)
{
    if (state_tx_empty(tx))
        return 0;
    if (rt->st == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no state store is open: cannot commit the transaction block");
    if (rt_modify_lock(rt, err) < 0)
        return -1;
    StateTxConflict conf = {0};
    int rc = state_tx_commit(tx, rt->st, &conf, err);
    rt_modify_unlock(rt);
    if (rc == -2)
        conflict_error(&conf, err);
    return rc < 0 ? -1 : 0;
}

static void work_cb(PoolWork *w)
{
    RtAppend *ap = w->data;
    if (ap->tx != NULL) {
        const _Atomic int *old = ex_interrupt_enter(&ap->interrupt);
        ap->rc = rt_xact_commit(ap->rt, ap->tx, &ap->err);
        ex_interrupt_enter(old);
        return;
    }
    if (ap->copy != NULL) {
        uint64_t rows;
        const _Atomic int *old = ex_interrupt_enter(&ap->interrupt);
        ap->rc = ap->copy_part ? rt_copy_sort_part(ap->copy, &ap->err)
                               : rt_copy_insert(ap->copy, &rows, &ap->err);
        ex_interrupt_enter(old);
        return;
    }
    StreamAppend app = {ap->rel, NULL, ap->nchunks, ap->chunks, 0};
    ap->rc = stream_append_many(ap->rt->st, &app, 1, NULL, &ap->err);
}

static void after_cb(PoolWork *w)
{
    RtAppend *ap = w->data;
    ap->done(ap->arg, ap->rc, &ap->err);
    for (int i = 0; i < ap->nchunks; i++)
        strbuf_free(&ap->chunks[i]);
    sl_free(ap->chunks);
    sl_error_clear(&ap->err);
    if (ap->copy != NULL) {
        if (!ap->copy_part)
            rt_copy_abort(ap->copy);
    } else if (ap->tx != NULL)
        state_tx_free(ap->tx);
    else
        cat_relation_unref(ap->rel);
    sl_free(ap);
}

/* Sets ap's error to what an interrupt for why says (57014, 57P01). */
static void interrupted(RtAppend *ap, int why)
{
    atomic_store(&ap->interrupt, why);
    const _Atomic int *old = ex_interrupt_enter(&ap->interrupt);
    ap->rc = ex_check_interrupt(&ap->err);
    ex_interrupt_enter(old);
}

bool rt_append_interrupt(RtAppend *ap, int why)
{
    if (ap->copy == NULL && ap->tx == NULL) {
        /* A stream append still queued for a worker never runs: it ends
         * with the interrupt's error (after_cb, on a later loop turn).
         * One that started is written whole: it ends as its write does. */
        if (pool_cancel(ap->rt->engine, &ap->work) != 0)
            return false;
        interrupted(ap, why);
        return true;
    }
    atomic_store(&ap->interrupt, why);
    /* still queued for a worker: it never runs, and ends as the lock's
     * wait would have (after_cb, on a later loop turn) */
    if (pool_cancel(ap->rt->statements, &ap->work) == 0)
        interrupted(ap, why);
    return true;
}

bool rt_append_is_copy(const RtAppend *ap)
{
    return ap->copy != NULL;
}

void rt_append_start(RtAppend *ap, rt_append_done_cb done, void *arg)
{
    ap->done = done;
    ap->arg = arg;
    ap->work.data = ap;
    pool_submit(ap->copy != NULL || ap->tx != NULL ? ap->rt->statements : ap->rt->engine,
                &ap->work, work_cb, after_cb);
}
