/*
 * pages.h -- the HTML pages of sluiced's HTTP listener (pages.c), for
 * observe.c, which routes them.  Internal to src/server/.
 *
 *   pages_new      the pages' context on rt's loop: the version line and
 *                  a sampler of the streams' row counts (a one-second
 *                  timer, unreferenced, for the ingest rates)
 *   pages_close    stops the sampler; cb(arg) once its timer is closed
 *                  and the context freed (no page may be served after)
 *   pages_overview  "/": the server, its queries, streams, sinks and
 *                  connections
 *   pages_query     "/queries/NAME": one query's figures, plots, SQL and
 *                  plan
 *
 * The handlers take the context as their arg and run on the loop.
 */
#ifndef SLUICE_SERVER_PAGES_H
#define SLUICE_SERVER_PAGES_H

#include "sluice/cq.h"
#include "sluice/http.h"
#include "sluice/ingest.h"

struct Runtime;
typedef struct Pages Pages;

Pages *pages_new(struct Runtime *rt, const char *version);
void   pages_close(Pages *p, void (*cb)(void *arg), void *arg);
void   pages_overview(const HttpRequest *req, HttpResponse *resp, void *arg);
void   pages_query(const HttpRequest *req, HttpResponse *resp, void *arg);

/* Every query of cq in registry order, appended to out (st: sl_free it);
 * their strings stay valid until the loop runs on. */
typedef struct QueryList {
    CqStatus *st;
    int       n, cap;
} QueryList;
void pages_queries(CqRuntime *cq, QueryList *out);

/* Every stream's figures (ingest.h) in catalog order, appended to out,
 * their strings copied; pages_streams_free frees them. */
typedef struct StreamList {
    IngestFigures *f;
    int            n, cap;
} StreamList;
void pages_streams(struct Runtime *rt, StreamList *out);
void pages_streams_free(StreamList *l);

#endif /* SLUICE_SERVER_PAGES_H */
