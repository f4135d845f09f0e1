/*
 * syscat_int.h -- what the files of src/syscat/ share.  Not for use
 * outside the folder.
 *
 *   syscat_catalog        the catalog syscat_init was given (NULL before
 *                         and after)
 *   syscat_check_select   the runtime's SELECT check (SysHooks)
 *   syscat_cq_runtime     the running continuous queries, or NULL
 *   pgcat_register        pg_catalog and information_schema (pgcatalog.c)
 *   sys_register          sys.* (systables.c), with sys_progress_register
 *                         (sys_progress.c)
 *   sys_settings_foreach, sys_settings_free   the server's settings
 *                         (systables.c)
 */
#ifndef SLUICE_SYSCAT_INT_H
#define SLUICE_SYSCAT_INT_H

#include "sluice/syscat.h"
#include "sluice/vrel.h"

Catalog          *syscat_catalog(void);
int               syscat_check_select(const CatRelation *rel, SlError *err);
struct CqRuntime *syscat_cq_runtime(void);

void pgcat_register(void);
void sys_register(void);
void sys_progress_register(void);
void sys_settings_foreach(void (*fn)(const char *name, const char *value,
                                     const char *description, void *arg),
                          void *arg);
void sys_settings_free(void);

#endif /* SLUICE_SYSCAT_INT_H */
