/*
 * append.c -- appends to streams made durable off the loop, so that the
 * appends of concurrent clients share fsyncs (group commit; runtime.h).
 *
 *   rt_append_init     the engine's pool the appends run on
 *   rt_append_can_defer, rt_append_can_run   whether there is one (and
 *                      group commit mode, for statements' last appends)
 *   rt_append_new      an append of chunks encoded already (runtime_int.h)
 *   rt_append_start    run it on that pool, then call done on the loop
 *
 * In group commit mode a COPY into a stream (rt_copy_end_deferred) encodes
 * its rows on the loop as they arrive, but hands the durable write back to
 * the server instead of blocking the loop on it; the server answers the
 * client in done.  The parts a COPY into a stream writes before its end
 * (copy.c) go the same way in either commit mode, the session reading no
 * more of that client's input until each is written.  (INSERT needs none of this: it runs on a worker thread
 * like every SELECT and DML statement, session.c.)  What runs concurrently
 * is the writes, and stream_append_many (relstore.h) lets the writes that
 * meet share one.
 */
#include "runtime_int.h"
#include "sluice/relstore.h"

struct RtAppend {
    PoolWork           work;
    const CatRelation *rel;         /* referenced */
    StrBuf            *chunks;
    int                nchunks;
    int                rc;
    SlError            err;
    rt_append_done_cb  done;
    void              *arg;
};

static Pool *g_pool;

void rt_append_init(Pool *engine)
{
    g_pool = engine;
}

bool rt_append_can_defer(void)
{
    return g_pool != NULL && stream_commit_mode() == STREAM_COMMIT_GROUP;
}

bool rt_append_can_run(void)
{
    return g_pool != NULL;
}

RtAppend *rt_append_new(const CatRelation *rel, StrBuf *chunks, int nchunks)
{
    RtAppend *ap = sl_calloc(1, sizeof(RtAppend));
    cat_relation_ref(rel);
    ap->rel = rel;
    ap->chunks = chunks;
    ap->nchunks = nchunks;
    return ap;
}

static void work_cb(PoolWork *w)
{
    RtAppend *ap = w->data;
    StreamAppend app = {ap->rel, NULL, ap->nchunks, ap->chunks, 0};
    ap->rc = stream_append_many(rt_state(), &app, 1, NULL, &ap->err);
}

static void after_cb(PoolWork *w)
{
    RtAppend *ap = w->data;
    ap->done(ap->arg, ap->rc, &ap->err);
    for (int i = 0; i < ap->nchunks; i++)
        strbuf_free(&ap->chunks[i]);
    sl_free(ap->chunks);
    sl_error_clear(&ap->err);
    cat_relation_unref(ap->rel);
    sl_free(ap);
}

void rt_append_start(RtAppend *ap, rt_append_done_cb done, void *arg)
{
    ap->done = done;
    ap->arg = arg;
    ap->work.data = ap;
    pool_submit(g_pool, &ap->work, work_cb, after_cb);
}
