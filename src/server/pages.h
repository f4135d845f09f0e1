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

#include "sluice/http.h"

struct Runtime;
typedef struct Pages Pages;

Pages *pages_new(struct Runtime *rt, const char *version);
void   pages_close(Pages *p, void (*cb)(void *arg), void *arg);
void   pages_overview(const HttpRequest *req, HttpResponse *resp, void *arg);
void   pages_query(const HttpRequest *req, HttpResponse *resp, void *arg);

#endif /* SLUICE_SERVER_PAGES_H */
