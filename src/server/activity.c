/*
 * activity.c -- what each session is doing, for pg_stat_activity,
 * sys.connections and the log.
 *
 *   activity_link, activity_unlink   a connection joins / leaves s->conns
 *   activity_start     a statement message (Query, Parse, Execute) starts:
 *                      its text, masked, is the session's query; 'active'
 *   activity_log_ddl   log_statement = 'ddl': the message's text, once
 *   activity_idle      ReadyForQuery: idle (or idle in transaction); a
 *                      statement that ran log_min_duration_statement or
 *                      longer is logged with its duration
 *   activity_copy      a COPY FROM STDIN's progress (pg_stat_progress_copy)
 *   activity_copy_out  a COPY TO STDOUT's, after each piece its job made
 *   activity_end       "session ended", with its duration
 *   activity_list      the lister of sys.connections and pg_stat_activity
 *
 * The loop writes a Conn's act_* fields and the links of s->conns under
 * s->activity_mu; activity_list runs on the statements' pool (a SELECT
 * from pg_stat_activity) and reads them under it, so a session that ends
 * or starts a statement meanwhile is seen whole or not at all.
 *
 * Texts are masked with sql_redact_secrets (a secret option of WITH (...),
 * the string after PASSWORD) before they are kept: the unmasked text is
 * never in pg_stat_activity nor the log.  A text that does not lex is kept
 * as NULL (it cannot be masked).  As PostgreSQL does, the query is the
 * whole Query string of the simple protocol, the prepared statement's text
 * of the extended one; it stays after the statement ends, with state idle.
 * log_min_duration_statement's duration runs from the message that started
 * the work to its ReadyForQuery (a Query string, or Parse/Execute up to
 * Sync), and the text logged is the last statement's.
 */
#include <time.h>

#include "pgw.h"
#include "sluice/expr.h"
#include "sluice/log.h"
#include "sluice/settings.h"

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void activity_link(Server *s, Conn *c)
{
    pthread_mutex_lock(&s->activity_mu);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    pthread_mutex_unlock(&s->activity_mu);
}

void activity_unlink(Server *s, Conn *c)
{
    pthread_mutex_lock(&s->activity_mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next = c->prev = NULL;
    pthread_mutex_unlock(&s->activity_mu);
}

/* The state c is in now, as pg_stat_activity names it. */
static const char *state_of(const Conn *c)
{
    return c->act_running ? "active" : c->xact == 'T' ? "idle in transaction"
         : c->xact == 'E' ? "idle in transaction (aborted)" : "idle";
}

/* Records the state c is in now (under the lock), at t. */
static void note_state(Conn *c, int64_t t)
{
    const char *st = state_of(c);
    if (c->act_state == NULL || strcmp(c->act_state, st) != 0) {
        c->act_state = st;
        c->act_state_change = t;
    }
}

/* sql masked and cut to ACTIVITY_QUERY_MAX bytes (at a character's
 * start), in malloc'd memory; NULL when it does not lex.  Only the tokens
 * that start in the first ACTIVITY_QUERY_MAX bytes are read: a
 * multi-megabyte INSERT costs the loop no more than that. */
#define ACTIVITY_QUERY_MAX 1024     /* PostgreSQL's track_activity_query_size */

static char *masked_text(const char *sql)
{
    if (sql == NULL)
        return NULL;
    Arena a;
    arena_init(&a, 256);
    const char *masked = sql_redact_secrets_prefix(&a, sql, ACTIVITY_QUERY_MAX);
    char *out = NULL;
    if (masked != NULL) {
        size_t n = strlen(masked);
        if (n > ACTIVITY_QUERY_MAX) {
            n = ACTIVITY_QUERY_MAX;
            while (n > 0 && ((unsigned char)masked[n] & 0xC0) == 0x80)
                n--;
        }
        out = sl_malloc(n + 1);
        memcpy(out, masked, n);
        out[n] = '\0';
    }
    arena_destroy(&a);
    return out;
}

void activity_start(Conn *c, const char *sql)
{
    char *copy = masked_text(sql);
    int64_t t = now_us();
    pthread_mutex_lock(&c->server->activity_mu);
    char *old = c->act_query;
    c->act_query = copy;
    c->act_ddl = false;         /* a new text: its DDL is logged once */
    if (!c->act_running) {
        c->act_running = true;
        c->act_query_start = t;
        if (c->act_xact_start == 0)
            c->act_xact_start = t;
    }
    note_state(c, t);
    pthread_mutex_unlock(&c->server->activity_mu);
    sl_free(old);
}

void activity_log_ddl(Conn *c)
{
    if (c->act_ddl)
        return;
    c->act_ddl = true;
    sl_log(LOG_INFO, "statement",
           "kind=ddl pid=%d user=\"%s\" database=\"%s\" statement=\"%s\"", (int)c->pid,
           log_quote(c->user ? c->user : ""), log_quote(c->database ? c->database : ""),
           log_quote(c->act_query ? c->act_query : "(text not shown)"));
}

void activity_copy(Conn *c)
{
    uint32_t relid = 0;
    int64_t bytes = 0, rows = 0;
    if (c->copy != NULL)
        rt_copy_progress(c->copy, &relid, &bytes, &rows);
    pthread_mutex_lock(&c->server->activity_mu);
    c->act_copy = c->copy != NULL;
    c->act_copy_to = false;
    c->act_copy_relid = relid;
    c->act_copy_bytes = bytes;
    c->act_copy_rows = rows;
    pthread_mutex_unlock(&c->server->activity_mu);
}

void activity_copy_out(Conn *c, const RtRun *run)
{
    uint32_t relid = 0;
    int64_t bytes = 0, rows = 0;
    if (run != NULL)
        rt_run_copy_progress(run, &relid, &bytes, &rows);
    pthread_mutex_lock(&c->server->activity_mu);
    c->act_copy = run != NULL;
    c->act_copy_to = true;
    c->act_copy_relid = relid;
    c->act_copy_bytes = bytes;
    c->act_copy_rows = rows;
    pthread_mutex_unlock(&c->server->activity_mu);
}

void activity_idle(Conn *c)
{
    if (c->act_copy)
        activity_copy(c);
    if (!c->act_running)
        return;
    int64_t t = now_us();
    int64_t started = c->act_query_start;
    pthread_mutex_lock(&c->server->activity_mu);
    c->act_running = false;
    if (c->xact == 'I')
        c->act_xact_start = 0;
    note_state(c, t);
    pthread_mutex_unlock(&c->server->activity_mu);
    int min_ms = settings_log_min_duration_ms(c->settings);
    double ms = (double)(t - started) / 1000.0;
    if (min_ms >= 0 && ms >= (double)min_ms)
        sl_log(LOG_INFO, "duration",
               "duration_ms=%.3f pid=%d user=\"%s\" database=\"%s\" statement=\"%s\"", ms,
               (int)c->pid, log_quote(c->user ? c->user : ""),
               log_quote(c->database ? c->database : ""),
               log_quote(c->act_query ? c->act_query : "(text not shown)"));
}

void activity_end(Conn *c)
{
    if (c->connected_us == 0)
        return;         /* never through authentication */
    int64_t us = now_us() - c->connected_us;
    if (us < 0)
        us = 0;
    int64_t ms = us / 1000;
    sl_log(LOG_INFO, "session ended",
           "pid=%d user=\"%s\" database=\"%s\" peer=%s duration=%d:%02d:%02d.%03d",
           (int)c->pid, log_quote(c->user ? c->user : ""),
           log_quote(c->database ? c->database : ""), c->peer, (int)(ms / 3600000),
           (int)(ms / 60000 % 60), (int)(ms / 1000 % 60), (int)(ms % 1000));
}

void activity_list(void *arg, rt_session_emit_fn emit, void *emit_arg)
{
    Server *s = arg;
    pthread_mutex_lock(&s->activity_mu);
    for (Conn *c = s->conns; c != NULL; c = c->next) {
        if (c->phase != PHASE_READY)
            continue;
        RtSession rs;
        char addr[64];
        session_describe(c, &rs, addr, sizeof(addr));
        rs.visible = rt_role_sees_session(s->rt, c->role_oid);
        rs.query = c->act_query;
        rs.xact_start = c->act_xact_start;
        rs.query_start = c->act_query_start;
        rs.state_change = c->act_state_change != 0 ? c->act_state_change : c->connected_us;
        rs.copying = c->act_copy;
        rs.copy_to = c->act_copy_to;
        rs.copy_relid = c->act_copy_relid;
        rs.copy_bytes = c->act_copy_bytes;
        rs.copy_tuples = c->act_copy_rows;
        emit(&rs, emit_arg);
    }
    pthread_mutex_unlock(&s->activity_mu);
}
