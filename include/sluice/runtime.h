/*
 * runtime.h -- what the server hands statements to.
 *
 * The server module (src/server/) never reaches into sql/, plan/ or exec/:
 * it parses a query string into statements with rt_parse(), prepares each
 * with rt_prepare(), asks rt_describe() for the shape of its result, and runs
 * it with rt_execute(), which streams the result to a ResultSink.
 *
 * Lifetimes: everything rt_parse() and rt_prepare() return lives in the
 * arena the caller passes (the statement's or the prepared statement's).
 * rt_execute() allocates its working memory in an arena of its own and
 * frees it before returning; batches handed to the sink are valid only
 * during the callback.
 */
#ifndef SLUICE_RUNTIME_H
#define SLUICE_RUNTIME_H

#include <uv.h>

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/list.h"
#include "sluice/types.h"

typedef struct RawStmt RawStmt;
typedef struct Prepared Prepared;
typedef struct Catalog Catalog;
typedef struct StateStore StateStore;

/* One column of a result. */
typedef struct ColumnDesc {
    const char *name;
    SlType      type;
} ColumnDesc;

/* A parameter value as it came off the wire (Bind). */
typedef struct ParamValue {
    const char *data;   /* NULL for SQL NULL */
    int32_t     len;
    int16_t     format; /* 0 text, 1 binary */
} ParamValue;

/* Where rt_execute() sends a statement's result. */
typedef struct ResultSink ResultSink;
struct ResultSink {
    void *ctx;
    /* Called once per batch of rows, in order; returns 0 to go on or a
     * negative value to stop the statement (the client went away). */
    int  (*batch_cb)(ResultSink *sink, const Batch *batch);
};

/* Gives the runtime the catalog and the state store that statements use
 * (main: after cat_open and state_open succeed; rt_shutdown before
 * state_close and cat_close).  Without it, statements that touch a
 * relation fail with 55000. */
int  rt_init(Catalog *cat, StateStore *st);
void rt_shutdown(void);

/* Starts the continuous queries of the catalog on the loop (after rt_init);
 * rt_cq_close stops them and calls cb once no micro-batch is in flight
 * (before rt_shutdown). */
int  rt_cq_init(uv_loop_t *loop);
void rt_cq_close(void (*cb)(void));

/* Parses a query string into RawStmts (a List of RawStmt *) in arena a.
 * An empty string gives an empty list.  On a syntax error returns -1 with
 * err set (42601 and the byte offset of the bad token). */
int rt_parse(Arena *a, const char *sql, size_t len, List **stmts, SlError *err);

/* Analyzes one statement.  param_types may give the types of $1..$n
 * (TYPE_UNKNOWN to infer).  The result lives in arena a. */
int rt_prepare(Arena *a, const char *sql, const RawStmt *raw,
               const SlType *param_types, int nparam_types,
               Prepared **out, SlError *err);

/* The result columns (ncols = 0: the statement returns no rows) and the
 * parameter types, after inference. */
void rt_describe(const Prepared *p, int *ncols, const ColumnDesc **cols,
                 int *nparams, const SlType **param_types);

/* Runs a prepared statement with its parameters.  Rows go to sink; on
 * success tag receives the CommandComplete tag ("SELECT 3").  Returns 0,
 * or -1 with err set. */
int rt_execute(const Prepared *p, const ParamValue *params, int nparams,
               ResultSink *sink, char *tag, size_t tagsize, SlError *err);

/* SUBSCRIBE (cq_ddl.c, runtime.c).  rt_subscribe_name: the continuous query a
 * prepared SUBSCRIBE names, or NULL when p is not a SUBSCRIBE (its
 * rt_describe columns are rt_subscribe_columns': batch_id, kind, then the
 * query's result columns).  rt_subscribe: fn is called on the loop after
 * each committed batch of the query (cq.h's cq_changes_fn) until
 * rt_unsubscribe, or once with batch id -1 when the query goes away. */
typedef void (*rt_changes_fn)(void *arg, int64_t batch_id, const char *kinds,
                              const Batch *rows);
typedef struct RtSub RtSub;
const char *rt_subscribe_name(const Prepared *p);
/* WITH (snapshot): the result table's rows first, as inserts. */
bool rt_subscribe_snapshot(const Prepared *p);
int  rt_subscribe_columns(const char *name, Arena *a, int *ncols, ColumnDesc **cols,
                          SlError *err);
int  rt_subscribe(const char *name, bool snapshot, rt_changes_fn fn, void *arg, RtSub **out,
                  SlError *err);
/* Starts delivering (the snapshot first, once no batch is in flight); fn
 * may be called before it returns, and may end the subscription. */
void rt_subscribe_go(RtSub *s);
void rt_unsubscribe(RtSub *s);

/* COPY (copy.c).  A prepared COPY is not run by rt_execute: the server
 * asks rt_copy_kind which way it goes and the number of its columns, then
 * for FROM STDIN feeds the CopyData bytes to rt_copy_data between
 * rt_copy_begin and rt_copy_end (which writes everything, or nothing, and
 * frees the RtCopy) or rt_copy_abort; for TO STDOUT, rt_copy_out calls cb
 * with each line of the output. */
typedef struct RtCopy RtCopy;
typedef enum RtCopyKind { RT_COPY_NONE, RT_COPY_IN, RT_COPY_OUT } RtCopyKind;
typedef int (*rt_copy_out_cb)(void *ctx, const char *data, size_t len);
RtCopyKind rt_copy_kind(const Prepared *p);
int  rt_copy_ncols(const Prepared *p);
int  rt_copy_begin(const Prepared *p, RtCopy **out, SlError *err);
int  rt_copy_data(RtCopy *cp, const char *data, size_t len, SlError *err);
int  rt_copy_end(RtCopy *cp, char *tag, size_t tagsize, SlError *err);
void rt_copy_abort(RtCopy *cp);
int  rt_copy_out(const Prepared *p, rt_copy_out_cb cb, void *ctx, char *tag, size_t tagsize,
                 SlError *err);

#endif /* SLUICE_RUNTIME_H */
