/*
 * syscat.h -- the system relations' floor (src/syscat/) as the floors
 * above it see it: one Syscat per server, what the runtime gives it at
 * start, the sessions the server shows it, the settings main records in
 * it.  The relations themselves are in vrel.h.
 *
 *   syscat_create, syscat_destroy  a Syscat over a catalog: pg_catalog,
 *                                  information_schema and sys.* and their
 *                                  functions registered (rt_init); freed
 *                                  with its settings (rt_shutdown)
 *   SysHooks                       what the system relations ask of the
 *                                  floors above, registered by the runtime
 *                                  with its arg
 *   syscat_session_set, syscat_session_current, syscat_session_lister,
 *   syscat_session_foreach
 *                                  the client sessions (the server sets and
 *                                  lists them through runtime.h's
 *                                  rt_session_*) for the catalog functions,
 *                                  sys.connections and the HTTP overview
 *   syscat_setting_set             a server setting for sys.settings and
 *                                  pg_settings (main, at start, through
 *                                  rt_setting_set)
 *
 * A Syscat holds everything the floor keeps (docs/architecture.md,
 * "Process-wide state"): the catalog and hooks, the registry of virtual
 * relations, the settings and the sessions.  Its scans and catalog
 * functions reach it through the statement's context (ExCtx.system_arg,
 * EvalCtx.system_arg), so two in one process do not see each other.
 */
#ifndef SLUICE_SYSCAT_H
#define SLUICE_SYSCAT_H

#include "sluice/catalog.h"

struct CqRuntime;

typedef struct Syscat Syscat;

/* What sys.* reads from above its floor: the runtime installs its answers
 * (syscat_create), so that this floor never calls the runtime.  Each gets
 * the arg given with the hooks. */
typedef struct SysHooks {
    /* SELECT on rel for the current role: 0, or -1 with err set (42501).
     * sys.queries shows a query's last error only to a role that has it. */
    int               (*check_select)(void *arg, const CatRelation *rel, SlError *err);
    /* The running continuous queries (cq.h), or NULL before they start. */
    struct CqRuntime *(*cq_runtime)(void *arg);
    /* The bytes a user relation takes in the state store (relstore.h's
     * rel_disk_bytes), or with rel NULL the whole store's table files:
     * pg_relation_size and friends, pg_database_size. */
    uint64_t          (*relation_bytes)(void *arg, const CatRelation *rel);
} SysHooks;

/* A Syscat over cat (NULL: no user relations), with the runtime's hooks
 * and their arg (both borrowed for the Syscat's life): registers the
 * system relations and the catalog functions.  The calling thread is the
 * loop's (the sessions are its).  syscat_destroy frees the registry and
 * the settings; NULL is ignored. */
Syscat *syscat_create(Catalog *cat, const SysHooks *hooks, void *arg);
void    syscat_destroy(Syscat *sc);

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
    const char *state;          /* "active", "idle", "idle in transaction",
                                 * "idle in transaction (aborted)" */
    uint32_t    role_oid;       /* the session's role (usesysid) */
    /* pg_stat_activity (the lister fills them; 0 / NULL: unknown): */
    bool        visible;        /* the current role may see query, state and
                                 * client (its own session, or a superuser) */
    const char *query;          /* the current or last statement, secrets masked */
    int64_t     xact_start;     /* the transaction's start, or 0 */
    int64_t     query_start;    /* the current or last statement's start, or 0 */
    int64_t     state_change;   /* when state last changed, or 0 */
    /* pg_stat_progress_copy: a COPY FROM STDIN or TO STDOUT running */
    bool        copying;
    bool        copy_to;        /* TO STDOUT (command 'COPY TO') */
    uint32_t    copy_relid;     /* the table's or stream's oid */
    int64_t     copy_bytes;     /* CopyData bytes received (TO: sent) so far */
    int64_t     copy_tuples;    /* rows decoded (TO: sent) so far */
} RtSession;

/* The session whose statements are prepared and run now (the server sets
 * it before it hands over a message; NULL: none).  Borrowed until the next
 * call.  Work on another thread than the loop's (a continuous query's
 * batch) sees NULL. */
void syscat_session_set(Syscat *sc, const RtSession *s);
const RtSession *syscat_session_current(const Syscat *sc);
/* How sys.connections lists the sessions: list calls emit once per
 * session (the server's registry); NULL: none. */
typedef void (*rt_session_emit_fn)(const RtSession *s, void *emit_arg);
typedef void (*rt_session_list_fn)(void *arg, rt_session_emit_fn emit, void *emit_arg);
void syscat_session_lister(Syscat *sc, rt_session_list_fn list, void *arg);
/* Calls emit once per session, through the lister (none without one). */
void syscat_session_foreach(const Syscat *sc, rt_session_emit_fn emit, void *emit_arg);

/* A server setting for sys.settings and pg_settings (main, at start): set,
 * or replaced when name is already there. */
void syscat_setting_set(Syscat *sc, const char *name, const char *value,
                        const char *description);

#endif /* SLUICE_SYSCAT_H */
