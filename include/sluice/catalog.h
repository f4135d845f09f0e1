/*
 * catalog.h -- the SQLite catalog: relations, and later the offset and
 * commit logs.
 *
 *   cat_open            open (creating and migrating) the catalog file and
 *                       load every relation into memory
 *   cat_close           close it
 *   cat_schema_version  the schema version the file is at
 *   cat_backup          a consistent copy of the whole file (BACKUP TO)
 *   cat_lookup          a relation by name (borrowed pointer)
 *   cat_create_relation create a relation durably (one SQLite transaction)
 *   cat_create_relations  several in one transaction
 *   cat_replace_relation  a new definition under the same oid (OR REPLACE)
 *   cat_rename_relation   a new name, the same oid and definition
 *   cat_recreate_relation drop and create in one transaction (... reset)
 *   cat_drop_relation   drop one durably
 *   cat_relation_ref / cat_relation_unref   keep an entry alive while in use
 *   cat_foreach         visit every relation (for sys.* and pg_catalog)
 *   cat_offsets_*       the offset log of a continuous query
 *   cat_commit_*        its commit log
 *   cat_cq_status_*     its status and last error
 *   cat_role_*          roles: lookup, create, alter, rename, drop, foreach
 *   cat_acl_*           privileges granted on relations (GRANT / REVOKE)
 *
 * src/catalog/ is the only module that includes sqlite3.h.  All calls are
 * made on the libuv loop's thread; a CatRelation is immutable once made, and
 * work on other threads holds a reference (cat_relation_ref) instead of
 * looking it up again.
 */
#ifndef SLUICE_CATALOG_H
#define SLUICE_CATALOG_H

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/types.h"

typedef struct Catalog Catalog;

typedef enum RelKind {
    REL_TABLE,      /* keyed, mutable (CREATE TABLE) */
    REL_STREAM,     /* append-only log (CREATE STREAM) */
    REL_SINK,       /* CREATE SINK */
    REL_QUERY,      /* a continuous query and its result table */
    REL_VIEW,       /* CREATE VIEW: a stored query, inlined where it is read */
    REL_SYSTEM,     /* pg_catalog, information_schema, sys: rows made at scan
                       time by C code (vrel.h); never in the catalog file */
} RelKind;

typedef struct CatColumn {
    const char *name;
    SlType      type;
    bool        not_null;
} CatColumn;

typedef struct CatRelation {
    _Atomic int refs;       /* the catalog's own plus users' */
    uint32_t    oid;        /* 16384 and up, as PostgreSQL's user objects */
    const char *name;
    RelKind     kind;
    int         ncols;
    CatColumn  *cols;
    int         npk;        /* primary key columns, in key order */
    int        *pk;         /* indexes into cols */
    const char *sql;        /* the statement that created it */
    const char *options;    /* WITH options as a JSON object text */
    int64_t     created_at; /* microseconds since the Unix epoch */
    uint32_t    owner;      /* the oid of the role that created it */
    Arena       arena;      /* owns everything above */
} CatRelation;

int  cat_open(const char *path, Catalog **out, SlError *err);
void cat_close(Catalog *cat);
int  cat_schema_version(Catalog *cat);
/* Copies the whole catalog -- relations, roles, the offset and commit
 * logs -- as it is now into a new file at path (SQLite's online backup,
 * in one step, so the copy is one committed state of the file), synced to
 * disk.  On the loop, like every catalog call: no write can come between.
 * 0, or -1 with err (58030) and nothing left at path. */
int  cat_backup(Catalog *cat, const char *path, SlError *err);

const CatRelation *cat_lookup(Catalog *cat, const char *name);
/* Creates a relation from def (name, kind, columns, pk, sql, options are
 * copied; oid, refs and created_at are assigned).  Fails with 42P07 when
 * the name is taken.  *out is borrowed, like cat_lookup's. */
int  cat_create_relation(Catalog *cat, const CatRelation *def,
                         const CatRelation **out, SlError *err);
/* Drops the relation named def->name (its logs with it) and creates def
 * under a new oid, in one SQLite transaction (OR REPLACE ... reset). */
int  cat_recreate_relation(Catalog *cat, const CatRelation *def,
                           const CatRelation **out, SlError *err);
/* Replaces the definition (sql, options, columns) of relation def->name,
 * keeping its oid, kind and creation time (one SQLite transaction); the old
 * entry lives on while references to it remain.  *out is borrowed. */
int  cat_replace_relation(Catalog *cat, const CatRelation *def,
                          const CatRelation **out, SlError *err);
/* Renames relation name to new_name (42P07 when taken), keeping its oid
 * and definition, in one SQLite transaction; the old entry lives on while
 * references to it remain.  *out is borrowed. */
int  cat_rename_relation(Catalog *cat, const char *name, const char *new_name,
                         const CatRelation **out, SlError *err);
/* Removes the relation from the catalog file and the name space; the entry
 * itself lives on while references to it remain. */
/* Creates n relations in one SQLite transaction: all of them or none
 * (a stream and its dead-letter stream).  out[i] is borrowed. */
int  cat_create_relations(Catalog *cat, const CatRelation *const *defs, int n,
                          const CatRelation **out, SlError *err);
int  cat_drop_relation(Catalog *cat, const char *name, SlError *err);
/* Drops n relations in one SQLite transaction. */
int  cat_drop_relations(Catalog *cat, const char *const *names, int n, SlError *err);
void cat_relation_ref(const CatRelation *rel);
void cat_relation_unref(const CatRelation *rel);
/* Calls fn for every relation in oid order. */
void cat_foreach(Catalog *cat, void (*fn)(const CatRelation *rel, void *arg), void *arg);

/* ---- continuous queries: offset log, commit log, status (cqlog.c) ---- */

/* One entry of the offset log: what batch N reads, fixed before it runs. */
typedef struct CqOffsets {
    int64_t     batch_id;
    const char *sources;        /* JSON: [{"oid":N,"part":P,"start":S,"end":E}, ...] */
    bool        has_watermark;
    int64_t     watermark_us;   /* event time, microseconds since 2000-01-01 */
    int64_t     batch_ts_us;    /* wall clock, microseconds since the Unix epoch */
} CqOffsets;

/* Appends batch N's entry durably (synchronous = FULL). */
int  cat_offsets_append(Catalog *cat, uint32_t query_oid, const CqOffsets *o, SlError *err);
/* The same, with the commit entry of batch `committed` (none if < 0) in the
 * same transaction: one fsync for both. */
int  cat_offsets_append_after(Catalog *cat, uint32_t query_oid, int64_t committed,
                              const CqOffsets *o, SlError *err);
/* The newest entry: 1 found (strings in a), 0 none, -1 error. */
int  cat_offsets_last(Catalog *cat, uint32_t query_oid, Arena *a, CqOffsets *out,
                      SlError *err);
int  cat_commit_append(Catalog *cat, uint32_t query_oid, int64_t batch_id, SlError *err);
/* The newest committed batch id, -1 if none, -2 on error. */
int64_t cat_commit_last(Catalog *cat, uint32_t query_oid, SlError *err);
/* Drops offset and commit entries of batches before keep_from. */
int  cat_cq_purge(Catalog *cat, uint32_t query_oid, int64_t keep_from, SlError *err);
/* The status: "running", "paused", "failed", "finished"; error may be NULL. */
int  cat_cq_status_set(Catalog *cat, uint32_t query_oid, const char *status,
                       const char *error, SlError *err);
/* 1 found (strings in a), 0 none, -1 error. */
int  cat_cq_status_get(Catalog *cat, uint32_t query_oid, Arena *a, const char **status,
                       const char **error, SlError *err);

/* ---- roles and privileges (roles.c) ---- */

/* The bootstrap superuser's oid, as PostgreSQL's BOOTSTRAP_SUPERUSERID. */
#define CAT_BOOTSTRAP_ROLE_OID 10
/* The bootstrap superuser's name in a fresh catalog. */
#define CAT_BOOTSTRAP_ROLE_NAME "sluice"

/* A role, as pg_authid holds it.  Passwords are never kept in clear:
 * password is a SCRAM verifier ("SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:
 * <ServerKey>") and password_md5 "md5" + md5(password || name), either
 * NULL.  Entries are owned by the catalog and change only through the
 * cat_role_* calls below (on the loop thread); a pointer stays valid until
 * the role is dropped. */
typedef struct CatRole {
    uint32_t    oid;
    const char *name;
    bool        superuser;
    bool        login;
    bool        createrole;
    bool        createdb;
    bool        inherit;
    const char *password;       /* SCRAM verifier or NULL */
    const char *password_md5;   /* "md5..." or NULL */
    bool        has_valid_until;
    int64_t     valid_until;    /* timestamptz: usec since 2000-01-01 */
    int64_t     created_at;     /* microseconds since the Unix epoch */
} CatRole;

/* Privileges on a relation (PostgreSQL's ACL_* bits that sluice has). */
#define CAT_ACL_SELECT 1u
#define CAT_ACL_INSERT 2u
#define CAT_ACL_UPDATE 4u
#define CAT_ACL_DELETE 8u
#define CAT_ACL_ALL    15u
/* The grantee that stands for PUBLIC (every role). */
#define CAT_ROLE_PUBLIC 0u

const CatRole *cat_role_lookup(Catalog *cat, const char *name);
const CatRole *cat_role_by_oid(Catalog *cat, uint32_t oid);
/* Calls fn for every role in oid order; returns the number visited. */
int  cat_role_foreach(Catalog *cat, void (*fn)(const CatRole *role, void *arg), void *arg);
/* Creates a role from def (oid and created_at are assigned); 42710 when
 * the name is taken.  *out may be NULL. */
int  cat_role_create(Catalog *cat, const CatRole *def, const CatRole **out, SlError *err);
/* Replaces the attributes of role oid with def's (name, oid and
 * created_at are kept). */
int  cat_role_update(Catalog *cat, uint32_t oid, const CatRole *def, SlError *err);
/* Renames a role (42710 when the new name is taken); its md5 password,
 * which is salted with the name, is cleared as PostgreSQL does. */
int  cat_role_rename(Catalog *cat, uint32_t oid, const char *new_name, SlError *err);
int  cat_role_drop(Catalog *cat, uint32_t oid, SlError *err);

/* The privileges granted to grantee (a role oid or CAT_ROLE_PUBLIC) on a
 * relation, as CAT_ACL_* bits (ownership not counted). */
unsigned cat_acl_get(Catalog *cat, uint32_t rel_oid, uint32_t grantee);
/* Sets them (0 removes the entry), durably. */
int  cat_acl_set(Catalog *cat, uint32_t rel_oid, uint32_t grantee, unsigned privs,
                 uint32_t grantor, SlError *err);
/* Calls fn for every grant to grantee (for DROP ROLE's dependency check);
 * returns how many there are. */
int  cat_acl_foreach_grantee(Catalog *cat, uint32_t grantee,
                             void (*fn)(uint32_t rel_oid, unsigned privs, void *arg),
                             void *arg);

/* A thread other than the loop's that reads relations, roles or grants
 * (the privilege functions of a statement on a worker) holds the read lock
 * meanwhile; every in-memory change takes it for writing.  On the loop
 * thread, where all changes happen, no lock is needed.  Pointers read under
 * the lock are not to be kept after it. */
void cat_read_lock(Catalog *cat);
void cat_read_unlock(Catalog *cat);

#endif /* SLUICE_CATALOG_H */
