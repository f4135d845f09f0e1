/*
 * pgcatalog_int.h -- what pgcatalog.c (pg_catalog and information_schema
 * relations) and pgfuncs.c (the catalog functions) share.  Not for use
 * outside src/syscat/.
 */
#ifndef SLUICE_SYSCAT_PGCATALOG_INT_H
#define SLUICE_SYSCAT_PGCATALOG_INT_H

#include "syscat_int.h"

#define SERVER_VERSION_TEXT "PostgreSQL 15.0 (sluice 0.1.0) on x86_64-pc-linux-gnu, 64-bit"
#define BOOTSTRAP_ROLE_OID  10
/* A table's primary key: an index and a constraint, with oids of their own. */
#define INDEX_OID(rel_oid)      ((int64_t)(rel_oid) + INT64_C(1000000000))
#define CONSTRAINT_OID(rel_oid) ((int64_t)(rel_oid) + INT64_C(2000000000))

typedef struct PgRole {
    uint32_t    oid;
    const char *name;
    bool        superuser;
    bool        login;
} PgRole;

/* The roles the server knows (the one function to switch to the catalog's
 * roles); a role's name by oid, or NULL. */
void        pgcat_roles_foreach(const Syscat *sc, void (*fn)(const PgRole *r, void *arg),
                                void *arg);
const char *pgcat_role_name(const Syscat *sc, int64_t oid);
/* pg_database's oid of "sluice"; the session's other name is the next. */
#define PGCAT_DATABASE_OID 16383

/* The current session's database name ("sluice" without a session). */
const char *pgcat_database_name(const Syscat *sc);
/* A user or system relation by oid, or NULL; the table whose primary key
 * index has this oid, or NULL.  sc may be NULL (a context without the
 * system catalog): nothing is found. */
const CatRelation *pgcat_relation_by_oid(const Syscat *sc, int64_t oid);
const CatRelation *pgcat_table_of_index(const Syscat *sc, int64_t oid);
uint32_t    pgcat_namespace_of(const Syscat *sc, const CatRelation *rel);
const char *pgcat_namespace_name(uint32_t oid);
/* The type of a pg_type oid (TYPE_UNKNOWN: none); a type's array type oid. */
SlTypeId    pgcat_type_by_oid(int64_t oid);
uint32_t    pgcat_array_oid(SlTypeId id);
/* "(a, b)": a table's primary key columns, in a. */
const char *pgcat_pk_columns(Arena *a, const CatRelation *rel);
void        pgcat_register_functions(void);
/* The input functions of the types, as pg_type.typinput names them
 * (regproc): "array_in" for every array type, "<typname>in" for the others
 * (int4in, textin, ...).  They are no functions a query can call. */
#define PGCAT_ARRAY_IN_OID      INT64_C(29999)
#define PGCAT_TYPE_IN_OID(id)   (INT64_C(29000) + (int64_t)(id))

/* pg_proc.provolatile of a function: 'i', 's' or 'v' (pgfuncs.c). */
char        pgcat_func_volatility(const FuncDesc *f);

#endif /* SLUICE_SYSCAT_PGCATALOG_INT_H */
