/*
 * metrics.h -- figures for Prometheus: a registry of collectors.
 *
 *   metrics_register    add a collector (loop thread, at start-up)
 *   metrics_unregister  remove it
 *   metrics_render      every collector's families in the Prometheus text
 *                       exposition format (version 0.0.4)
 *   metrics_family      write a family's # HELP and # TYPE lines
 *   metrics_sample      write one sample: name{labels} value
 *   metrics_label       append one label pair, escaped, to a label list
 *
 * Figures are not kept here: a collector reads them from the module that
 * owns them when /metrics is scraped, so nothing is counted twice and a
 * scrape shows the live state.  A collector writes whole families (all
 * samples of a name together, after its HELP and TYPE lines), as the
 * format asks.  Everything runs on the loop thread.
 */
#ifndef SLUICE_METRICS_H
#define SLUICE_METRICS_H

#include "sluice/strbuf.h"

typedef void (*metrics_collect_fn)(StrBuf *out, void *arg);

void metrics_register(metrics_collect_fn fn, void *arg);
void metrics_unregister(metrics_collect_fn fn, void *arg);
void metrics_render(StrBuf *out);

/* type: "counter", "gauge" or "untyped". */
void metrics_family(StrBuf *out, const char *name, const char *type, const char *help);
/* labels: "" or a list made by metrics_label, e.g. query="q1",kind="x". */
void metrics_sample(StrBuf *out, const char *name, const char *labels, double value);
void metrics_label(StrBuf *labels, const char *name, const char *value);

#endif /* SLUICE_METRICS_H */
