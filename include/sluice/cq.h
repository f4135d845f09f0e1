/*
 * cq.h -- running continuous queries: triggers, micro-batches on worker
 * threads, the offset and commit logs, recovery (docs/engine.md).
 *
 *   cq_runtime_init    the registry, on the server's loop
 *   cq_runtime_close   stop every query; cb once no batch is in flight, after
 *                      which the runtime's memory is freed
 *   cq_start           start (or resume after a restart) a query relation
 *   cq_pause, cq_resume
 *   cq_stop            stop a query that is being dropped
 *   cq_foreach         visit each query's status (sys.queries)
 *   cq_dependent       a query that reads or writes a relation
 *   cq_subscribe       be called with each committed batch's changes of a
 *                      query's result (SUBSCRIBE), until cq_unsubscribe
 *   cq_subscribe_go    start delivering (the snapshot first)
 *
 * Everything here runs on the loop thread except the body of a batch.
 */
#ifndef SLUICE_CQ_H
#define SLUICE_CQ_H

#include <uv.h>

#include "sluice/catalog.h"
#include "sluice/state.h"

typedef struct CqRuntime CqRuntime;

typedef struct CqStatus {
    const char *name;
    const char *status;         /* running, paused, failed, finished */
    const char *error;          /* NULL unless failed */
    int64_t     last_batch_id;  /* -1: none yet */
    int64_t     input_rows;     /* over the life of this process */
    bool        has_watermark;
    int64_t     watermark_us;
} CqStatus;

typedef void (*cq_close_cb)(CqRuntime *rt);

/* A subscriber's callback, on the loop, after batch batch_id committed:
 * rows (the query's result columns) and kinds[i] ('I' insert, 'U' update,
 * 'D' delete) of each.  batch_id -1 (rows NULL): the query was dropped or the server
 * is stopping; the subscription is over and must not be unsubscribed. */
typedef void (*cq_changes_fn)(void *arg, int64_t batch_id, const char *kinds,
                              const Batch *rows);
typedef struct CqSub CqSub;

CqRuntime *cq_runtime_init(uv_loop_t *loop, Catalog *cat, StateStore *st);
void cq_runtime_close(CqRuntime *rt, cq_close_cb cb);
int  cq_start(CqRuntime *rt, const CatRelation *query, SlError *err);
int  cq_pause(CqRuntime *rt, const char *name, SlError *err);
int  cq_resume(CqRuntime *rt, const char *name, SlError *err);
int  cq_stop(CqRuntime *rt, const char *name, SlError *err);
void cq_foreach(CqRuntime *rt, void (*fn)(const CqStatus *s, void *arg), void *arg);
/* The name of a query that reads or writes relation oid, or NULL. */
const char *cq_dependent(CqRuntime *rt, uint32_t oid);
/* Subscribes to the changes of query `name` from its next batch; with
 * snapshot, the rows of its result table come first (as inserts of the
 * last committed batch), read once no batch is in flight.  Nothing is
 * delivered before cq_subscribe_go. */
CqSub *cq_subscribe(CqRuntime *rt, const char *name, bool snapshot, cq_changes_fn fn,
                    void *arg, SlError *err);
void   cq_subscribe_go(CqSub *s);
void cq_unsubscribe(CqSub *s);

#endif /* SLUICE_CQ_H */
