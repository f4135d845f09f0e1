/*
 * unit_data.h -- the data directory of a C unit test that needs a catalog
 * or a state store: made fresh under /tmp, opened, closed and removed.
 *
 *   unit_tmpdir(name, dir)      a fresh /tmp/sluice-test-<name>-XXXXXX
 *   unit_rmdir(dir)             remove it and all it holds (a failure counts)
 *   unit_data_open(d, name, st) the directory, its catalog (<dir>/catalog.db)
 *                               and, with st, its state store (<dir>/state)
 *   unit_data_close(d)          close what is open, remove the directory
 *
 * A failure to open counts (CHECK) with the store's message; a directory
 * that cannot be made ends the test with exit status 2.
 */
#ifndef SLUICE_TESTS_UNIT_DATA_H
#define SLUICE_TESTS_UNIT_DATA_H

#include "unit.h"
#include "sluice/catalog.h"
#include "sluice/state.h"

#include <stdlib.h>
#include <string.h>

#define UNIT_DIR_MAX  128    /* the directory's name */
#define UNIT_PATH_MAX 256    /* a file's in it */

typedef struct UnitData {
    char        dir[UNIT_DIR_MAX];
    char        catalog[UNIT_PATH_MAX];    /* <dir>/catalog.db: to open it again */
    Catalog    *cat;
    StateStore *st;                         /* NULL unless asked for */
} UnitData;

__attribute__((unused))
static void unit_tmpdir(const char *name, char dir[UNIT_DIR_MAX])
{
    snprintf(dir, UNIT_DIR_MAX, "/tmp/sluice-test-%s-XXXXXX", name);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "%s: cannot make %s\n", name, dir);
        exit(2);
    }
}

__attribute__((unused))
static void unit_rmdir(const char *dir)
{
    char cmd[UNIT_DIR_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "could not remove %s\n", dir);
        unit_failures++;
    }
}

__attribute__((unused))
static void unit_data_open(UnitData *d, const char *name, bool with_state)
{
    memset(d, 0, sizeof(*d));
    unit_tmpdir(name, d->dir);
    snprintf(d->catalog, sizeof(d->catalog), "%s/catalog.db", d->dir);
    SlError err = {0};
    CHECK(cat_open(d->catalog, &d->cat, &err) == 0, "%s", err.message);
    sl_error_clear(&err);
    if (!with_state)
        return;
    char path[UNIT_PATH_MAX];
    snprintf(path, sizeof(path), "%s/state", d->dir);
    CHECK(state_open(path, &d->st, &err) == 0, "%s", err.message);
    sl_error_clear(&err);
}

__attribute__((unused))
static void unit_data_close(UnitData *d)
{
    state_close(d->st);
    cat_close(d->cat);
    d->st = NULL;
    d->cat = NULL;
    unit_rmdir(d->dir);
}

#endif /* SLUICE_TESTS_UNIT_DATA_H */
