/*
 * vrel.h -- virtual relations: the relations of the schemas pg_catalog,
 * information_schema and sys, whose rows C code produces when a scan
 * opens them (src/syscat/vrel.c; docs/architecture.md, "System
 * relations").
 *
 * A virtual relation is a CatRelation of kind REL_SYSTEM with a fixed oid,
 * made once at start from a VrelDef: its schema, name, columns (a text
 * such as "oid oid, relname name, relkind char") and a producer.  The
 * analyzer finds it by qualified name (pg_catalog is also searched for
 * unqualified names, first, as PostgreSQL's search path does); a scan calls
 * the producer, which appends rows to a VrelRows, and hands the batches out
 * through an ExSource.  Everything a producer allocates lives in the
 * statement's arena.  Producers run on the loop's thread.  The registry
 * is the Syscat's (syscat.h): each call names the Syscat it asks, and a
 * scan finds it in the statement's context (ExCtx.system_arg).
 *
 *   vrel_shutdown                  free the registry (syscat_destroy)
 *   vrel_register                  add relations (pgcatalog.c, systables.c)
 *   vrel_lookup                    a relation by schema and name
 *   vrel_by_oid, vrel_foreach      for pg_class and friends
 *   vrel_namespace, vrel_comment   the schema and comment of one
 *   vrel_open                      a scan (ExCtx.system_scan)
 *   vrel_row, vrel_put_*           a producer's rows
 *   vrel_rows_arena, _err, _state, _syscat   what a producer works with
 *
 * Adding a system table is one VrelDef and one producer function.
 */
#ifndef SLUICE_VREL_H
#define SLUICE_VREL_H

#include "sluice/catalog.h"
#include "sluice/exec.h"
#include "sluice/syscat.h"

typedef struct VrelRows VrelRows;

/* A producer: appends the relation's rows to out; returns 0, or -1 with
 * the error in vrel_rows_err(out). */
typedef int (*vrel_produce_fn)(VrelRows *out);

typedef struct VrelDef {
    const char     *schema;     /* "pg_catalog", "information_schema", "sys" */
    const char     *name;
    uint32_t        oid;        /* PostgreSQL's where it has one */
    const char     *columns;    /* "name type, ..." with pg_type names */
    vrel_produce_fn produce;
    const char     *comment;    /* obj_description() */
} VrelDef;

/* The oids of schemas, as PostgreSQL's. */
#define VREL_NS_PG_CATALOG  11
#define VREL_NS_PUBLIC      2200
#define VREL_NS_INFO_SCHEMA 13000
#define VREL_NS_SYS         14000

void vrel_shutdown(Syscat *sc);
void vrel_register(Syscat *sc, const VrelDef *defs, int n);
/* The relation schema.name (schema NULL: pg_catalog), or NULL (also
 * without a Syscat). */
const CatRelation *vrel_lookup(const Syscat *sc, const char *schema, const char *name);
const CatRelation *vrel_by_oid(const Syscat *sc, uint32_t oid);
/* The schema oid of a system relation (VREL_NS_*). */
uint32_t vrel_namespace(const Syscat *sc, const CatRelation *rel);
const char *vrel_comment(const Syscat *sc, const CatRelation *rel);
/* Every system relation, in registration order. */
void vrel_foreach(const Syscat *sc, void (*fn)(const CatRelation *rel, void *arg), void *arg);

/* The ExSource of a scan of rel: its producer's rows (the
 * ExCtx.system_scan the runtime sets in each statement's context, with
 * the Syscat as ExCtx.system_arg; without one, 55000). */
ExSource *vrel_open(ExCtx *cx, const CatRelation *rel);

/* ------------------------------------------------------ producers' rows */

/* Starts a row; then one vrel_put_* per column, in order. */
void     vrel_row(VrelRows *r);
void     vrel_put_null(VrelRows *r);
/* Any column from its text form (the type's input function). */
void     vrel_put_text(VrelRows *r, const char *s);
void     vrel_put_int(VrelRows *r, int64_t v);
void     vrel_put_bool(VrelRows *r, bool v);
void     vrel_put_float(VrelRows *r, double v);
/* A timestamptz from microseconds since the Unix epoch (0: NULL). */
void     vrel_put_unix_us(VrelRows *r, int64_t us);
/* An event time or watermark as the engine keeps it (microseconds since
 * 2000-01-01; INT64_MAX is 'infinity'). */
void     vrel_put_pg_us(VrelRows *r, int64_t pg_us);
Arena   *vrel_rows_arena(VrelRows *r);
SlError *vrel_rows_err(VrelRows *r);
StateStore *vrel_rows_state(VrelRows *r);
/* The Syscat whose relation is being produced. */
Syscat  *vrel_rows_syscat(VrelRows *r);

#endif /* SLUICE_VREL_H */
