/*
 * test_pool.c -- the worker pool (pool.h): work runs off the loop thread and
 * its after on it; with one worker, items run in submission order; a
 * queued item can be cancelled (its after still comes, its work never
 * runs), a running one cannot; an idle pool does not keep the loop alive;
 * pool_close joins the workers and frees everything (ASan's leak check).
 */
#include "sluice/pool.h"
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

typedef struct Item {
    PoolWork       w;
    int            id;
    bool           ran;         /* work ran */
    bool           after;       /* after ran */
    pthread_t      thread;      /* where work ran */
    atomic_int    *gate;        /* work waits until *gate != 0 (NULL: no wait) */
} Item;

static int order[16];
static int norder;
static pthread_t loop_thread;

static void work_cb(PoolWork *w)
{
    Item *it = w->data;
    while (it->gate != NULL && atomic_load(it->gate) == 0) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    it->thread = pthread_self();
    it->ran = true;
}

static void after_cb(PoolWork *w)
{
    Item *it = w->data;
    CHECK(pthread_equal(pthread_self(), loop_thread), "after runs on the loop thread");
    it->after = true;
    if (norder < 16)
        order[norder++] = it->id;
}

int main(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    loop_thread = pthread_self();
    Pool *p = pool_new(&loop, "test", 1);

    /* An idle pool does not keep the loop running. */
    CHECK(uv_run(&loop, UV_RUN_DEFAULT) == 0);

    atomic_int gate = 0;
    Item items[4] = {{.id = 0, .gate = &gate}, {.id = 1}, {.id = 2}, {.id = 3}};
    for (int i = 0; i < 4; i++) {
        items[i].w.data = &items[i];
        pool_submit(p, &items[i].w, work_cb, after_cb);
    }
    /* Item 0 holds the one worker; 1..3 wait.  Wait until 0 is running. */
    int threads, running, queued;
    for (int i = 0; i < 5000; i++) {
        pool_stats(p, &threads, &running, &queued);
        if (running == 1)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK(threads == 1 && running == 1 && queued == 3, "%d %d %d", threads, running, queued);
    CHECK(pool_cancel(p, &items[0].w) == UV_EBUSY, "a running item is not cancelled");
    CHECK(pool_cancel(p, &items[2].w) == 0, "a queued item is cancelled");
    CHECK(pool_cancel(p, &items[2].w) == UV_EBUSY, "only once");
    atomic_store(&gate, 1);
    /* The loop runs until every after ran: outstanding work keeps it alive. */
    uv_run(&loop, UV_RUN_DEFAULT);
    for (int i = 0; i < 4; i++)
        CHECK(items[i].after, "item %d's after ran", i);
    CHECK(items[0].ran && items[1].ran && items[3].ran);
    CHECK(!items[2].ran, "the cancelled item's work never ran");
    CHECK(!pthread_equal(items[0].thread, loop_thread), "work runs on a worker");
    CHECK(norder == 4);
    /* The cancelled item ends first (it was taken out while 0 ran); the
     * others in submission order. */
    CHECK(order[0] == 2 && order[1] == 0 && order[2] == 1 && order[3] == 3,
          "%d %d %d %d", order[0], order[1], order[2], order[3]);

    pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0, "no handle left");
    return unit_done("pool");
}
