/*
 * pool.c -- worker threads with a FIFO queue; completions back on the loop
 * through a uv_async (see pool.h).
 *
 *   pool_new, pool_submit, pool_cancel, pool_stats, pool_close
 *
 * The queue and the list of finished items are under one mutex; a worker
 * that finishes an item puts it on the finished list and wakes the loop
 * (uv_async_send coalesces), whose callback runs every finished item's
 * after in the order they finished.  The async handle is referenced only
 * while work is outstanding (submitted, after not yet run), so an idle pool
 * does not keep the loop running, as libuv's own pool does not.
 */
#include "sluice/pool.h"
#include "sluice/common.h"

#include <pthread.h>
#include <stdio.h>

struct Pool {
    uv_loop_t      *loop;
    uv_async_t      async;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    PoolWork       *head, *tail;    /* queued, oldest first (mu) */
    PoolWork       *done;           /* finished, newest first (mu) */
    int             queued, running;    /* (mu) */
    bool            stopping;       /* (mu) the workers exit once the queue is empty */
    pthread_t      *threads;
    int             nthreads;
    int             outstanding;    /* loop thread: submitted, after not yet run */
    char            name[16];
};

static void *worker_main(void *arg)
{
    Pool *p = arg;
#ifdef __linux__
    pthread_setname_np(pthread_self(), p->name);
#endif
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == NULL && !p->stopping)
            pthread_cond_wait(&p->cv, &p->mu);
        PoolWork *w = p->head;
        if (w == NULL)
            break;
        p->head = w->next;
        if (p->head == NULL)
            p->tail = NULL;
        p->queued--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        w->work(w);
        pthread_mutex_lock(&p->mu);
        p->running--;
        w->next = p->done;
        p->done = w;
        uv_async_send(&p->async);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Runs the after callbacks of the items finished so far, oldest first. */
static void run_finished(Pool *p)
{
    pthread_mutex_lock(&p->mu);
    PoolWork *w = p->done;
    p->done = NULL;
    pthread_mutex_unlock(&p->mu);
    PoolWork *fifo = NULL;
    while (w != NULL) {
        PoolWork *next = w->next;
        w->next = fifo;
        fifo = w;
        w = next;
    }
    while (fifo != NULL) {
        PoolWork *next = fifo->next;
        p->outstanding--;
        fifo->next = NULL;
        fifo->after(fifo);      /* may submit again, or free fifo */
        fifo = next;
    }
    if (p->outstanding == 0)
        uv_unref((uv_handle_t *)&p->async);
}

static void async_cb(uv_async_t *h)
{
    run_finished(h->data);
}

Pool *pool_new(uv_loop_t *loop, const char *name, int nthreads)
{
    Pool *p = sl_calloc(1, sizeof(Pool));
    p->loop = loop;
    snprintf(p->name, sizeof(p->name), "%s", name);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (uv_async_init(loop, &p->async, async_cb) != 0)
        sl_panic("pool %s: uv_async_init failed", name);
    p->async.data = p;
    uv_unref((uv_handle_t *)&p->async);
    p->nthreads = nthreads < 1 ? 1 : nthreads;
    p->threads = sl_calloc((size_t)p->nthreads, sizeof(pthread_t));
    for (int i = 0; i < p->nthreads; i++)
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            sl_panic("pool %s: cannot start worker thread %d", name, i);
    return p;
}

void pool_submit(Pool *p, PoolWork *w, pool_work_cb work, pool_after_cb after)
{
    w->work = work;
    w->after = after;
    w->next = NULL;
    if (p->outstanding++ == 0)
        uv_ref((uv_handle_t *)&p->async);
    pthread_mutex_lock(&p->mu);
    if (p->tail != NULL)
        p->tail->next = w;
    else
        p->head = w;
    p->tail = w;
    p->queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int pool_cancel(Pool *p, PoolWork *w)
{
    int rc = UV_EBUSY;
    pthread_mutex_lock(&p->mu);
    PoolWork *prev = NULL;
    for (PoolWork *q = p->head; q != NULL; prev = q, q = q->next) {
        if (q != w)
            continue;
        if (prev != NULL)
            prev->next = w->next;
        else
            p->head = w->next;
        if (p->tail == w)
            p->tail = prev;
        p->queued--;
        w->next = p->done;
        p->done = w;
        uv_async_send(&p->async);
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void pool_stats(Pool *p, int *threads, int *running, int *queued)
{
    pthread_mutex_lock(&p->mu);
    *threads = p->nthreads;
    *running = p->running;
    *queued = p->queued;
    pthread_mutex_unlock(&p->mu);
}

static void closed_cb(uv_handle_t *h)
{
    Pool *p = h->data;
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    sl_free(p->threads);
    sl_free(p);
}

void pool_close(Pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    /* The workers run what is queued, then exit. */
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    run_finished(p);
    uv_close((uv_handle_t *)&p->async, closed_cb);
}
