/*
 * catalog_int.h -- what the files of src/catalog/ share.  Not for use
 * outside the module.
 */
#ifndef SLUICE_CATALOG_INT_H
#define SLUICE_CATALOG_INT_H

#include "sluice/catalog.h"

#include <pthread.h>
#include <sqlite3.h>

struct Catalog {
    sqlite3      *db;
    /* Held for writing around every change of the in-memory entries below
     * (on the loop thread); readers on other threads hold it for reading
     * (cat_read_lock).  Readers on the loop thread need not lock. */
    pthread_rwlock_t lock;
    CatRelation **rels;         /* live relations, in oid order */
    int           nrels;
    int           caprels;
    uint32_t      next_oid;     /* shared by relations and roles */
    /* roles.c */
    CatRole     **roles;        /* in oid order */
    int           nroles;
    int           caproles;
    struct CatAcl *acls;        /* every grant, unordered */
    int           nacls;
    int           capacls;
};

/* roles.c: load roles and grants at open, free them at close; forget the
 * grants of a dropped relation (the file's go with ON DELETE CASCADE). */
int     cat_roles_load(Catalog *cat, SlError *err);
void    cat_roles_free(Catalog *cat);
void    cat_acl_forget(Catalog *cat, uint32_t rel_oid);

#define CAT_WRITE_BEGIN(cat) pthread_rwlock_wrlock(&(cat)->lock)
#define CAT_WRITE_END(cat)   pthread_rwlock_unlock(&(cat)->lock)

/* Runs SQL with no result; -1 with err set (58030) on failure. */
int     cat_exec(Catalog *cat, const char *sql, SlError *err);
/* Records SQLite's last error in err; returns -1. */
int     cat_db_error(Catalog *cat, SlError *err);
/* Records an error of SQLite's result code code, with errno sys and
 * message msg, in err, as cat_db_error does: SQLITE_FULL, and SQLITE_IOERR
 * with ENOSPC or EDQUOT, are 53100 disk_full; SQLITE_CORRUPT and
 * SQLITE_NOTADB XX001; the rest 58030.  Returns -1. */
int     cat_db_error_as(int code, int sys, const char *msg, SlError *err);
int64_t cat_now_usec(void);

#endif /* SLUICE_CATALOG_INT_H */
