/*
 * syscat.h -- the system relations' floor (src/syscat/) as the floors
 * above it see it: what the runtime gives it at start, the sessions the
 * server shows it, the settings main records in it.  The relations
 * themselves are in vrel.h.
 *
 *   syscat_init, syscat_shutdown   register pg_catalog, information_schema
 *                                  and sys.* and their functions (rt_init),
 *                                  free them and the settings (rt_shutdown)
 *   SysHooks                       what the system relations ask of the
 *                                  floors above, registered by the runtime
 *   rt_session_set, rt_session_current, rt_session_lister,
 *   rt_session_foreach             the client sessions (the server sets and
 *                                  lists them) for the catalog functions and
 *                                  sys.connections
 *   rt_setting_set                 a server setting for sys.settings and
 *                                  pg_settings (main, at start)
 *
 * The session and setting routines keep the rt_ names of runtime.h, which
 * includes this header: the server and main call them as before.
 */
#ifndef SLUICE_SYSCAT_H
#define SLUICE_SYSCAT_H

#include "sluice/catalog.h"

struct CqRuntime;

/* What sys.* reads from above its floor: the runtime installs its answers
 * (syscat_init), so that this floor never calls the runtime. */
typedef struct SysHooks {
    /* SELECT on rel for the current role: 0, or -1 with err set (42501).
     * sys.queries shows a query's last error only to a role that has it. */
    int               (*check_select)(const CatRelation *rel, SlError *err);
    /* The running continuous queries (cq.h), or NULL before they start. */
    struct CqRuntime *(*cq_runtime)(void);
} SysHooks;

/* Registers the system relations and the catalog functions over cat, with
 * the runtime's hooks (borrowed for the server's life); syscat_shutdown
 * frees the registry and the settings.  Both on the loop's thread. */
void syscat_init(Catalog *cat, const SysHooks *hooks);
void syscat_shutdown(void);

/* A client session as the catalog functions (current_user,
 * current_database) and sys.connections see it.  Strings are borrowed. */
typedef struct RtSession {
    int32_t     pid;            /* BackendKeyData process id */
    const char *user;
    const char *database;
    const char *application_name;
    const char *client_addr;    /* "127.0.0.1", or NULL */
    int32_t     client_port;
    int64_t     connected_at;   /* microseconds since the Unix epoch */
    const char *state;          /* "active", "idle", "idle in transaction" */
} RtSession;

/* The session whose statements are prepared and run now (the server sets
 * it before it hands over a message; NULL: none).  Borrowed until the next
 * call. */
void rt_session_set(const RtSession *s);
const RtSession *rt_session_current(void);
/* How sys.connections lists the sessions: list calls emit once per
 * session (the server's registry). */
typedef void (*rt_session_emit_fn)(const RtSession *s, void *emit_arg);
void rt_session_lister(void (*list)(void *arg, rt_session_emit_fn emit, void *emit_arg),
                       void *arg);
void rt_session_foreach(rt_session_emit_fn emit, void *emit_arg);

/* A server setting for sys.settings and pg_settings (main, at start). */
void rt_setting_set(const char *name, const char *value, const char *description);

#endif /* SLUICE_SYSCAT_H */
