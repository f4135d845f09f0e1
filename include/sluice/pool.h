/*
 * pool.h -- a pool of worker threads with a queue, completions on the loop.
 *
 *   pool_new       nthreads workers for work submitted from one loop
 *   pool_submit    queue work: work runs on a worker, then after on the loop
 *   pool_cancel    take work that has not started out of the queue
 *   pool_stats     how many items run and wait now (any thread)
 *   pool_close     after the loop ended: stop and join the workers, free
 *
 * sluiced keeps two (docs/architecture.md, "Threads"): the engine's
 * (continuous-query batches, ingestion rounds, deferred appends) and the
 * statements' (SELECT, INSERT, ... of the clients), so that a slow
 * statement never holds a worker a continuous query needs.  Each pool has
 * a fixed number of threads; work beyond them waits in a FIFO queue.
 *
 * Like uv_queue_work: work runs on a worker thread, after on the loop
 * thread once work returned; a pool with work outstanding keeps its loop
 * alive, an idle one does not.  pool_submit and pool_close are called on
 * the loop thread only.
 */
#ifndef SLUICE_POOL_H
#define SLUICE_POOL_H

#include <uv.h>

typedef struct Pool Pool;
typedef struct PoolWork PoolWork;

typedef void (*pool_work_cb)(PoolWork *w);
typedef void (*pool_after_cb)(PoolWork *w);

/* Owned by the caller (often a field of its job) from pool_submit until
 * after returns; data is the caller's. */
struct PoolWork {
    void         *data;
    /* the pool's */
    PoolWork     *next;
    pool_work_cb  work;
    pool_after_cb after;
};

/* A pool of nthreads (>= 1) workers; name goes into the threads' names
 * (at most 15 bytes shown).  Out of threads is fatal. */
Pool *pool_new(uv_loop_t *loop, const char *name, int nthreads);
void  pool_submit(Pool *p, PoolWork *w, pool_work_cb work, pool_after_cb after);
/* 0 when w was still queued: it will not run, and its after is called (on
 * a later loop turn, never from inside pool_cancel); UV_EBUSY when it
 * started already (or finished): its after comes when work returns. */
int   pool_cancel(Pool *p, PoolWork *w);
void  pool_stats(Pool *p, int *threads, int *running, int *queued);
/* Once no work is outstanding (the loop ended): joins the workers and
 * closes the loop handle; the pool is freed when the loop runs that close. */
void  pool_close(Pool *p);

#endif
