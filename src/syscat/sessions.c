/*
 * sessions.c -- the client sessions: pg_stat_activity and
 * pg_stat_progress_copy (PostgreSQL 15's columns) and sys.connections.
 *
 *   sessions_register   add the relations to the registry (sys_register)
 *
 * The rows come from the server's registry of sessions, through the lister
 * it set (syscat_session_foreach); the query text it gives is already
 * masked (a secret option, a PASSWORD string show as '********').  As
 * PostgreSQL shows them, a session of another role is listed to a role that
 * is not a superuser with its pid, database, role and application_name
 * only: query is '<insufficient privilege>', the state, times, client
 * columns and backend_type are NULL (pgstatfuncs.c's rule).  sluice has no inet type: client_addr is text.  There
 * are no wait events, transaction ids, query ids or parallel workers:
 * those columns are NULL, backend_type is 'client backend'.
 *
 * pg_stat_progress_copy has a row per COPY FROM STDIN or COPY ... TO
 * STDOUT running (type 'PIPE'; bytes_total is 0, as PostgreSQL's for a
 * pipe): the CopyData bytes received and the rows decoded so far, which
 * the session records after each CopyData message, or the bytes and rows
 * sent so far, which it records after each piece the COPY TO's job made
 * (256 kB, or less when the client is slow to read).  relid is 0 for
 * COPY (query), as in PostgreSQL.  Another role's COPY shows its pid and
 * database only.  A COPY TO of a system relation (or a query over one)
 * runs on the loop in one go, so nobody could read its progress while it
 * runs: it has no row.
 */
#include "syscat_int.h"
#include "pgcatalog_int.h"
#include "sluice/vrel.h"

#define HIDDEN "<insufficient privilege>"

static void put_time(VrelRows *r, int64_t us)
{
    if (us != 0)
        vrel_put_unix_us(r, us);
    else
        vrel_put_null(r);
}

static void put_port(VrelRows *r, int32_t port)
{
    if (port > 0)
        vrel_put_int(r, port);
    else
        vrel_put_null(r);
}

static void activity_cb(const RtSession *s, void *arg)
{
    VrelRows *r = arg;
    bool see = s->visible;
    vrel_row(r);
    vrel_put_int(r, strcmp(s->database, "sluice") == 0 ? PGCAT_DATABASE_OID
                                                       : PGCAT_DATABASE_OID + 1);   /* datid */
    vrel_put_text(r, s->database);                              /* datname */
    vrel_put_int(r, s->pid);                                    /* pid */
    vrel_put_null(r);                                           /* leader_pid */
    vrel_put_int(r, s->role_oid);                               /* usesysid */
    vrel_put_text(r, s->user);                                  /* usename */
    vrel_put_text(r, s->application_name);                      /* application_name */
    if (see && s->client_addr != NULL)
        vrel_put_text(r, s->client_addr);                       /* client_addr */
    else
        vrel_put_null(r);
    vrel_put_null(r);                                           /* client_hostname */
    put_port(r, see ? s->client_port : 0);                      /* client_port */
    put_time(r, see ? s->connected_at : 0);                     /* backend_start */
    put_time(r, see ? s->xact_start : 0);                       /* xact_start */
    put_time(r, see ? s->query_start : 0);                      /* query_start */
    put_time(r, see ? s->state_change : 0);                     /* state_change */
    vrel_put_null(r);                                           /* wait_event_type */
    vrel_put_null(r);                                           /* wait_event */
    if (see)
        vrel_put_text(r, s->state);                             /* state */
    else
        vrel_put_null(r);
    vrel_put_null(r);                                           /* backend_xid */
    vrel_put_null(r);                                           /* backend_xmin */
    vrel_put_null(r);                                           /* query_id */
    vrel_put_text(r, see ? (s->query != NULL ? s->query : "") : HIDDEN);    /* query */
    if (see)
        vrel_put_text(r, "client backend");                     /* backend_type */
    else
        vrel_put_null(r);
}

static int produce_activity(VrelRows *out)
{
    syscat_session_foreach(vrel_rows_syscat(out), activity_cb, out);
    return 0;
}

static void connections_cb(const RtSession *s, void *arg)
{
    VrelRows *r = arg;
    bool see = s->visible;
    vrel_row(r);
    vrel_put_int(r, s->pid);
    vrel_put_text(r, s->user);
    vrel_put_text(r, s->database);
    vrel_put_text(r, s->application_name);
    if (see && s->client_addr != NULL)
        vrel_put_text(r, s->client_addr);
    else
        vrel_put_null(r);
    put_port(r, see ? s->client_port : 0);
    vrel_put_unix_us(r, s->connected_at);
    if (see)
        vrel_put_text(r, s->state);
    else
        vrel_put_null(r);
    vrel_put_text(r, see ? (s->query != NULL ? s->query : "") : HIDDEN);
    put_time(r, see ? s->query_start : 0);
}

static int produce_connections(VrelRows *out)
{
    syscat_session_foreach(vrel_rows_syscat(out), connections_cb, out);
    return 0;
}

static void progress_copy_cb(const RtSession *s, void *arg)
{
    VrelRows *r = arg;
    if (!s->copying)
        return;
    bool see = s->visible;
    vrel_row(r);
    vrel_put_int(r, s->pid);                                    /* pid */
    vrel_put_int(r, strcmp(s->database, "sluice") == 0 ? PGCAT_DATABASE_OID
                                                       : PGCAT_DATABASE_OID + 1);   /* datid */
    vrel_put_text(r, s->database);                              /* datname */
    if (!see) {
        for (int i = 0; i < 7; i++)         /* relid .. tuples_excluded */
            vrel_put_null(r);
        return;
    }
    vrel_put_int(r, s->copy_relid);                             /* relid */
    vrel_put_text(r, s->copy_to ? "COPY TO" : "COPY FROM");     /* command */
    vrel_put_text(r, "PIPE");                                   /* type */
    vrel_put_int(r, s->copy_bytes);                             /* bytes_processed */
    vrel_put_int(r, 0);                                         /* bytes_total */
    vrel_put_int(r, s->copy_tuples);                            /* tuples_processed */
    vrel_put_int(r, 0);                                         /* tuples_excluded */
}

static int produce_progress_copy(VrelRows *out)
{
    syscat_session_foreach(vrel_rows_syscat(out), progress_copy_cb, out);
    return 0;
}

static const VrelDef session_defs[] = {
    {"pg_catalog", "pg_stat_activity", 12010,
     "datid oid, datname name, pid int4, leader_pid int4, usesysid oid, usename name, "
     "application_name text, client_addr text, client_hostname text, client_port int4, "
     "backend_start timestamptz, xact_start timestamptz, query_start timestamptz, "
     "state_change timestamptz, wait_event_type text, wait_event text, state text, "
     "backend_xid xid, backend_xmin xid, query_id int8, query text, backend_type text",
     produce_activity, "one row per client session: its state and current query"},
    {"pg_catalog", "pg_stat_progress_copy", 12011,
     "pid int4, datid oid, datname name, relid oid, command text, type text, "
     "bytes_processed int8, bytes_total int8, tuples_processed int8, tuples_excluded int8",
     produce_progress_copy, "one row per COPY FROM STDIN running: bytes and rows so far"},
    {"sys", "connections", 14007,
     "pid int4, usename text, datname text, application_name text, client_addr text, "
     "client_port int4, connected_at timestamptz, state text, query text, "
     "query_start timestamptz",
     produce_connections, "the client sessions"},
};

void sessions_register(Syscat *sc)
{
    vrel_register(sc, session_defs, (int)SL_ARRAY_LEN(session_defs));
}
