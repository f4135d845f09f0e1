/*
 * syscat.c -- the system relations' floor at start and stop, and what it
 * keeps from the floors above (syscat.h).
 *
 *   syscat_init, syscat_shutdown   the registry (vrel.c), pg_catalog and
 *                                  information_schema (pgcatalog.c), sys.*
 *                                  (systables.c); the settings freed
 *   syscat_catalog, syscat_check_select, syscat_cq_runtime
 *                                  the catalog and the runtime's hooks, for
 *                                  the producers (syscat_int.h)
 *   rt_session_set, rt_session_current, rt_session_lister,
 *   rt_session_foreach             the sessions (syscat.h), for the catalog
 *                                  functions and sys.connections
 *
 * The catalog and hooks are what rt_init gives syscat_init, kept until
 * syscat_shutdown; producers and catalog functions read them on the loop's
 * thread.  Nothing here calls the runtime or the server: they register.
 */
#include "syscat_int.h"

#include <pthread.h>

static Catalog        *g_cat;
static const SysHooks *g_hooks;
static pthread_t       g_loop_thread;   /* syscat_init's: sessions are the loop's */

void syscat_init(Catalog *cat, const SysHooks *hooks)
{
    g_loop_thread = pthread_self();
    g_cat = cat;
    g_hooks = hooks;
    pgcat_register();
    sys_register();
}

void syscat_shutdown(void)
{
    g_cat = NULL;
    g_hooks = NULL;
    vrel_shutdown();
    sys_settings_free();
}

Catalog *syscat_catalog(void)
{
    return g_cat;
}

int syscat_check_select(const CatRelation *rel, SlError *err)
{
    if (g_hooks == NULL || g_hooks->check_select == NULL)
        return 0;
    return g_hooks->check_select(rel, err);
}

struct CqRuntime *syscat_cq_runtime(void)
{
    if (g_hooks == NULL || g_hooks->cq_runtime == NULL)
        return NULL;
    return g_hooks->cq_runtime();
}

/* -------------------------------------------------------------- sessions */

static const RtSession *g_session;
static void (*g_lister)(void *arg, rt_session_emit_fn emit, void *emit_arg);
static void *g_lister_arg;

void rt_session_set(const RtSession *s)
{
    g_session = s;
}

/* The loop's current session.  Work on other threads (a continuous
 * query's batch) has no session: it sees NULL, not a session the loop is
 * changing under it. */
const RtSession *rt_session_current(void)
{
    return pthread_equal(pthread_self(), g_loop_thread) ? g_session : NULL;
}

void rt_session_lister(void (*list)(void *arg, rt_session_emit_fn emit, void *emit_arg),
                       void *arg)
{
    g_lister = list;
    g_lister_arg = arg;
}

void rt_session_foreach(rt_session_emit_fn emit, void *emit_arg)
{
    if (g_lister != NULL)
        g_lister(g_lister_arg, emit, emit_arg);
}
