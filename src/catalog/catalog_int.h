/*
 * catalog_int.h -- what the files of src/catalog/ share.  Not for use
 * outside the module.
 */
#ifndef SLUICE_CATALOG_INT_H
#define SLUICE_CATALOG_INT_H

#include "sluice/catalog.h"

#include <sqlite3.h>

struct Catalog {
    sqlite3      *db;
    CatRelation **rels;         /* live relations, in oid order */
    int           nrels;
    int           caprels;
    uint32_t      next_oid;
};

/* Runs SQL with no result; -1 with err set (58030) on failure. */
int     cat_exec(Catalog *cat, const char *sql, SlError *err);
/* Records SQLite's last error in err; returns -1. */
int     cat_db_error(Catalog *cat, SlError *err);
int64_t cat_now_usec(void);

#endif /* SLUICE_CATALOG_INT_H */
