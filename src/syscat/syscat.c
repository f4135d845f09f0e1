/*
 * syscat.c -- the system relations' floor at start and stop, and what it
 * keeps from the floors above (syscat.h).
 *
 *   syscat_create, syscat_destroy  a Syscat: the registry (vrel.c),
 *                                  pg_catalog and information_schema
 *                                  (pgcatalog.c), sys.* (systables.c); the
 *                                  registry and the settings freed
 *   syscat_check_select, syscat_cq_runtime
 *                                  the runtime's hooks, for the producers
 *                                  (syscat_int.h)
 *   syscat_session_set, syscat_session_current, syscat_session_lister,
 *   syscat_session_foreach         the sessions, for the catalog
 *                                  functions and sys.connections
 *
 * The catalog and hooks are what syscat_create was given, kept in the
 * Syscat until syscat_destroy; producers and catalog functions read them
 * on the loop's thread, through the statement's context.  Nothing here
 * calls the runtime or the server: they register.
 */
#include "syscat_int.h"

Syscat *syscat_create(Catalog *cat, const SysHooks *hooks, void *arg)
{
    Syscat *sc = sl_calloc(1, sizeof(Syscat));
    sc->loop_thread = pthread_self();
    sc->cat = cat;
    sc->hooks = hooks;
    sc->hooks_arg = arg;
    pgcat_register(sc);
    sys_register(sc);
    return sc;
}

void syscat_destroy(Syscat *sc)
{
    if (sc == NULL)
        return;
    vrel_shutdown(sc);
    sys_settings_free(sc);
    sl_free(sc);
}

int syscat_check_select(const Syscat *sc, const CatRelation *rel, SlError *err)
{
    if (sc->hooks == NULL || sc->hooks->check_select == NULL)
        return 0;
    return sc->hooks->check_select(sc->hooks_arg, rel, err);
}

struct CqRuntime *syscat_cq_runtime(const Syscat *sc)
{
    if (sc->hooks == NULL || sc->hooks->cq_runtime == NULL)
        return NULL;
    return sc->hooks->cq_runtime(sc->hooks_arg);
}

/* -------------------------------------------------------------- sessions */

void syscat_session_set(Syscat *sc, const RtSession *s)
{
    sc->session = s;
}

/* The loop's current session.  Work on other threads (a continuous
 * query's batch) has no session: it sees NULL, not a session the loop is
 * changing under it. */
const RtSession *syscat_session_current(const Syscat *sc)
{
    return sc != NULL && pthread_equal(pthread_self(), sc->loop_thread) ? sc->session : NULL;
}

void syscat_session_lister(Syscat *sc, rt_session_list_fn list, void *arg)
{
    sc->lister = list;
    sc->lister_arg = arg;
}

void syscat_session_foreach(const Syscat *sc, rt_session_emit_fn emit, void *emit_arg)
{
    if (sc->lister != NULL)
        sc->lister(sc->lister_arg, emit, emit_arg);
}
