/*
 * syscat_int.h -- what the files of src/syscat/ share.  Not for use
 * outside the folder.
 *
 *   struct Syscat         what the floor keeps, one per server (syscat.c
 *                         makes it; vrel.c keeps the registry in it,
 *                         systables.c the settings)
 *   syscat_check_select   the runtime's SELECT check (SysHooks)
 *   syscat_cq_runtime     the running continuous queries, or NULL
 *   pgcat_register        pg_catalog and information_schema (pgcatalog.c)
 *   sys_register          sys.* (systables.c), with sys_progress_register
 *                         (sys_progress.c) and sessions_register
 *                         (sessions.c: pg_stat_activity, sys.connections)
 *   sys_settings_foreach, sys_settings_free   the server's settings
 *                         (systables.c)
 */
#ifndef SLUICE_SYSCAT_INT_H
#define SLUICE_SYSCAT_INT_H

#include "sluice/syscat.h"
#include "sluice/vrel.h"

#include <pthread.h>

struct Vrel;
struct SysSetting;

struct Syscat {
    Catalog            *cat;            /* NULL: no user relations */
    const SysHooks     *hooks;          /* the runtime's, with hooks_arg */
    void               *hooks_arg;
    pthread_t           loop_thread;    /* syscat_create's: sessions are the loop's */
    const RtSession    *session;        /* the statement's on the loop, or NULL */
    rt_session_list_fn  lister;         /* the server's registry of sessions */
    void               *lister_arg;
    struct SysSetting  *settings;       /* the server's settings (systables.c) */
    int                 nsettings;
    struct Vrel        *vrels;          /* the registry (vrel.c) */
    int                 nvrels, capvrels;
};

int               syscat_check_select(const Syscat *sc, const CatRelation *rel, SlError *err);
struct CqRuntime *syscat_cq_runtime(const Syscat *sc);

void pgcat_register(Syscat *sc);
void sys_register(Syscat *sc);
void sys_progress_register(Syscat *sc);
void sessions_register(Syscat *sc);
void sys_settings_foreach(const Syscat *sc,
                          void (*fn)(const char *name, const char *value,
                                     const char *description, void *arg),
                          void *arg);
void sys_settings_free(Syscat *sc);

#endif /* SLUICE_SYSCAT_INT_H */
