/*
 * runtime_int.h -- what the files of src/runtime/ share for running
 * ordinary (non-continuous) statements.  Not for use outside the module.
 *
 *   rt_catalog, rt_state          what rt_init() was given (NULL before)
 *   rt_recv_binary                a value in PostgreSQL's binary format
 *   rt_run_select                 a query's plan, rows to a sink (statement.c)
 *   rt_run_explain                EXPLAIN's lines as rows (statement.c)
 *   rt_run_modify                 INSERT / UPDATE / DELETE (statement.c)
 *   rt_run_create, rt_run_drop    DDL (ddl.c)
 *   rt_cq_create, rt_cq_stop, rt_cq_alter   continuous queries (cq_ddl.c)
 */
#ifndef SLUICE_RUNTIME_INT_H
#define SLUICE_RUNTIME_INT_H

#include "sluice/catalog.h"
#include "sluice/exec.h"
#include "sluice/runtime.h"
#include "sluice/state.h"

Catalog    *rt_catalog(void);
StateStore *rt_state(void);
/* A value in binary (send/recv) format into row `row` of v (runtime.c). */
int rt_recv_binary(Arena *a, SlType t, const char *data, int32_t len, Vector *v, uint32_t row,
                   int param, SlError *err);
/* The analyzed statement of a prepared one. */
const Query *rt_prepared_query(const Prepared *p);

int rt_run_select(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows);
int rt_run_explain(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows);
int rt_run_modify(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows);
int rt_run_create(const Query *q, SlError *err);
int rt_run_drop(const Query *q, SlError *err);
int rt_cq_create(const Query *q, SlError *err);
int rt_cq_stop(const char *name, SlError *err);
int rt_cq_alter(const char *name, bool pause, SlError *err);
int rt_cq_check_drop(const CatRelation *rel, SlError *err);

#endif /* SLUICE_RUNTIME_INT_H */
