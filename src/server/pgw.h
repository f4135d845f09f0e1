/*
 * pgw.h -- internals of the server module: the Server, its connections and
 * their protocol sessions.
 *
 * Files:
 *   server.c      listener, connection registry, shutdown
 *   conn.c        one connection's socket I/O: read framing, output queue,
 *                 flush once per loop turn (uv_check), backpressure, close
 *   session.c     the protocol state machine: startup, simple and extended
 *                 query, portals, errors; hands statements to the runtime
 *   auth.c        hba rules, users, password / md5 / SCRAM exchanges
 *   tls.c         TLS through OpenSSL memory BIOs
 *   pgw_proto.c   pure wire-format framing and encoding (pgw_proto.h)
 *   subscribe.c   SUBSCRIBE
 *   names.c       a connection's prepared statements and portals by name
 *
 * Ownership: the Server owns its Conns (a list); a Conn owns its Session,
 * its arenas and its buffers; all freed in the handle's close callback.
 */
#ifndef SLUICE_PGW_H
#define SLUICE_PGW_H

#include <pthread.h>
#include <uv.h>

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/runtime.h"
#include "sluice/server.h"
#include "sluice/strbuf.h"
#include "pgw_proto.h"

typedef struct Conn Conn;
typedef struct HbaRule HbaRule;
typedef struct AuthUser AuthUser;
typedef struct AuthConn AuthConn;
struct ssl_st;
struct ssl_ctx_st;

/* Loop lag probe (ServerConfig.debug_loop_lag): how late a 10 ms timer
 * fires, in milliseconds; hist[i] counts lags in [i, i+1) ms, the last
 * bucket everything beyond. */
#define LAG_BUCKETS 1001
typedef struct LagProbe {
    uv_timer_t timer;
    uint64_t   due_ns;
    uint64_t   ticks;
    uint64_t   max_ns;
    uint64_t   sum_ns;
    uint32_t  *hist;
} LagProbe;

struct Server {
    uv_loop_t   *loop;
    Runtime     *rt;            /* cfg.rt: what statements are prepared in */
    uv_tcp_t     listener;
    uv_check_t   flush_check;   /* flushes output once per loop turn */
    ServerConfig cfg;
    int          port;
    Conn        *conns;         /* all open connections */
    Conn        *dirty;         /* connections with output to flush */
    Conn        *resume;        /* connections to resume (conn_resume_later) */
    uv_idle_t    resume_idle;   /* runs them next turn, before the poll */
    int          nconns;
    int32_t      next_pid;      /* BackendKeyData process ids */
    bool         closing;
    int          pending_closes;
    server_close_cb close_cb;

    /* auth.c */
    HbaRule     *hba;
    int          nhba;
    AuthUser    *users;
    int          nusers;
    uint8_t      mock_key[32];  /* salts of mock SCRAM exchanges */
    /* tls.c: NULL when ssl is off */
    struct ssl_ctx_st *ssl_ctx;
    LagProbe    *lag;
    uv_timer_t   auth_timer;    /* closes connections past authentication_timeout */
    uv_timer_t   shutdown_timer;    /* server_close: cancel, then close, the stragglers */
    int          shutdown_phase;    /* 0 draining, 1 cancelled, 2 closed */
    bool         conns_done;        /* closing and the last connection is gone */
    /* activity.c: guards conns' links and each Conn's act_* fields
     * against the statements' pool (pg_stat_activity's lister) */
    pthread_mutex_t activity_mu;
};

typedef enum ConnPhase {
    PHASE_STARTUP,              /* waiting for StartupMessage / SSLRequest */
    PHASE_AUTH,                 /* password exchange (auth.c) */
    PHASE_READY,                /* normal operation */
    PHASE_CLOSING,              /* uv_close called */
} ConnPhase;

typedef struct PreparedStmt PreparedStmt;
typedef struct Portal Portal;

/* names.c: an entry is the first member of what it names. */
typedef struct NameEntry {
    struct NameEntry *hnext;
    char     *name;             /* owned by the entry's holder */
    uint32_t  hash;
} NameEntry;
typedef struct NameTable {
    NameEntry **buckets;
    uint32_t    nbuckets;       /* 0 or a power of two */
    uint32_t    count;
    uint32_t    named;          /* entries whose name is not "" */
    uint64_t    key[2];         /* the hash's random key (names.c) */
} NameTable;
NameEntry *names_find(const NameTable *t, const char *name);
void names_add(NameTable *t, NameEntry *e);
void names_remove(NameTable *t, NameEntry *e);
void names_clear(NameTable *t, void (*fn)(NameEntry *e));
typedef struct Subscription Subscription;
typedef struct Job Job;
typedef struct SlSettings SlSettings;

struct Conn {
    uv_tcp_t    tcp;
    Server     *server;
    Conn       *next, *prev;    /* in server->conns */
    Conn       *next_dirty;
    bool        in_dirty;
    Conn       *next_resume;    /* in server->resume */
    bool        in_resume;
    ConnPhase   phase;
    char        peer[64];
    struct sockaddr_storage peer_addr;
    uint64_t    accepted_ms;    /* uv_now at accept, for authentication_timeout */

    /* input: bytes read but not yet consumed */
    uint8_t    *in;
    size_t      in_len;
    size_t      in_cap;
    bool        reading;
    bool        close_after_flush;
    bool        lingering;      /* the FATAL is out, FIN sent: input discarded (conn.c) */
    uv_shutdown_t shutdown_req;
    bool        too_many;       /* past max_connections: refuse at startup */

    /* output: whole messages waiting for the next flush */
    StrBuf      out;
    size_t      out_inflight;   /* bytes handed to uv_write, not yet done */

    /* TLS (tls.c): set once SSLRequest was answered 'S'.  Raw reads go to
     * raw_in and through OpenSSL into in; ciphertext waits in tls_out. */
    struct ssl_st *ssl;
    bool        tls_up;         /* handshake done */
    bool        tls_dead;       /* failed, or close_notify sent: no more data */
    uint8_t    *raw_in;
    StrBuf      tls_out;
    bool        tls_busy;       /* a handshake step runs on the thread pool */
    StrBuf      tls_pending;    /* raw bytes that came meanwhile */

    /* session */
    int32_t     pid;
    int32_t     secret;
    char       *user;
    uint32_t    role_oid;       /* the user's role in the catalog (0: none) */
    bool        superuser;
    char       *database;
    char       *application_name;
    int64_t     connected_us;   /* wall clock at authentication (sys.connections) */
    /* activity.c: what pg_stat_activity shows; the loop writes these under
     * Server.activity_mu, the statements' pool reads them under it */
    char       *act_query;      /* the current or last statement, masked */
    bool        act_running;    /* from a statement's message to ReadyForQuery */
    bool        act_ddl;        /* the statement running includes DDL (logged) */
    int64_t     act_query_start;    /* microseconds since the epoch, or 0 */
    int64_t     act_state_change;
    int64_t     act_xact_start;
    const char *act_state;      /* the state last recorded */
    bool        act_copy;       /* a COPY FROM STDIN or TO STDOUT runs (its progress): */
    bool        act_copy_to;    /* TO STDOUT */
    uint32_t    act_copy_relid;
    int64_t     act_copy_bytes, act_copy_rows;
    bool        active;         /* a message is being handled */
    char        xact;           /* 'I', 'T' or 'E' for ReadyForQuery */
    bool        xact_read_only; /* the block is READ ONLY (session.c) */
    bool        xact_queried;   /* a query ran in the block: its modes are fixed */
    int         xact_isolation; /* the block's XactIsolation (ast.h) */
    struct StateTx *tx;         /* the open block's buffered writes (txbuf.h) */
    struct Savepoint *savepoints;   /* the block's, oldest first (session.c) */
    int         nsavepoints, capsavepoints;
    bool        skip_to_sync;   /* extended protocol: after an error */
    struct SimpleQuery *sq;     /* a Query string stopped at a COPY FROM STDIN */
    RtCopy     *copy;           /* copy-in mode: the COPY being fed */
    bool        copy_drop;      /* after a failed copy-in: drop CopyData/Done/Fail */
    struct SessionWait *wait;   /* a deferred append in flight: input waits */
    bool        copy_extended;  /* the copy-in came from an Execute (then Sync) */
    AuthConn   *auth;           /* during PHASE_AUTH */
    NameTable   stmts;          /* prepared statements (PreparedStmt), and "" */
    NameTable   portals;        /* portals (Portal), and "" */
    Subscription *sub;          /* a SUBSCRIBE running (subscribe.c) */
    SlSettings  *settings;      /* SET / SHOW (settings.h) */

    /* A statement running on the thread pool (at most one); while it runs
     * the connection reads but handles no message. */
    Job        *job;
    uv_timer_t  stmt_timer;     /* statement_timeout */
    uv_timer_t  idle_timer;     /* idle_session_timeout and idle in transaction */
    int         open_handles;   /* tcp and timers not yet closed */
    bool        orphaned;       /* handles closed while a job ran: freed by the job */
    bool        auth_busy;      /* a password check (PBKDF2) runs on the thread pool */
    bool        yielded;        /* whole messages wait: the session used its turn */
};

/* Work for c runs on the thread pool: its memory must outlive it. */
static inline bool conn_busy(const Conn *c)
{
    return c->job != NULL || c->tls_busy || c->auth_busy;
}

/* conn.c */
void conn_accept(Server *s);
void conn_close(Conn *c);
/* Frees a closed connection (once its handles and its job are done). */
void conn_free(Conn *c);
/* After a job or a deferred append: handles the messages that waited, and
 * reads again. */
void conn_resume(Conn *c);
/* conn_resume in the next loop turn (an idle handle: after the other
 * clients' I/O of this turn), once the current callback is done. */
void conn_resume_later(Conn *c);
void conn_resume_all(Server *s);
/* A handshake step ended: rc < 0 it failed (the alert in tls_out is sent,
 * then the connection closes); otherwise plaintext may wait in the BIO. */
void conn_tls_step_done(Conn *c, int rc);
/* Marks c as having output; it is written at the end of this loop turn. */
void conn_mark_dirty(Conn *c);
void conn_flush_all(Server *s);
/* Writes c's output now instead of at the end of the turn; c may be closed
 * by it (a write error), so the caller must not touch c's session after. */
void conn_flush_now(Conn *c);
/* Writes what is queued (the 'S' answer) in clear, then switches c to TLS. */
void conn_start_tls(Conn *c);

/* activity.c */
/* A statement message (Query, Parse, Bind, Execute) starts: sql becomes
 * the session's query (masked), the state 'active'. */
void activity_start(Conn *c, const char *sql);
/* A DDL statement of the running message is about to run: the message's
 * text is logged once (log_statement = 'ddl') with its user, masked. */
void activity_log_ddl(Conn *c);
/* ReadyForQuery: the state goes idle (or idle in transaction); a statement
 * that ran at least log_min_duration_statement is logged. */
void activity_idle(Conn *c);
/* c->copy's progress (pg_stat_progress_copy), or none when it is NULL. */
void activity_copy(Conn *c);
/* A COPY TO STDOUT's progress: run's lines so far (rt_run_copy_progress),
 * or none when run is NULL (it ended). */
struct RtRun;
void activity_copy_out(Conn *c, const struct RtRun *run);
/* The session ends: "session ended" with its duration. */
void activity_end(Conn *c);
/* Links c into s->conns / unlinks it, under activity_mu. */
void activity_link(Server *s, Conn *c);
void activity_unlink(Server *s, Conn *c);
/* sys.connections' and pg_stat_activity's lister (runtime.h's
 * rt_session_lister): every session through authentication. */
void activity_list(void *arg, rt_session_emit_fn emit, void *emit_arg);

/* session.c */
void session_init(Conn *c);
void session_free(Conn *c);
/* Consumes whole packets from c->in; returns the bytes consumed. */
size_t session_consume(Conn *c);
/* Sends an ErrorResponse; fatal ones ("FATAL") close after the flush.
 * sql: the text the position refers to (NULL if none). */
void session_send_error(Conn *c, const SlError *e, const char *sql, bool fatal);
/* A FATAL error with a formatted message; the connection closes after it. */
void session_fatal(Conn *c, const char *sqlstate, const char *fmt, ...) SL_PRINTF(3, 4);
/* c as sys.connections and current_user see it; addr (addrsize bytes)
 * holds the client address the result points at. */
void session_describe(Conn *c, RtSession *out, char *addr, size_t addrsize);
/* Authentication succeeded: AuthenticationOk, ParameterStatus,
 * BackendKeyData, ReadyForQuery; the session is ready. */
void session_auth_ok(Conn *c);
/* DataRow messages for the rows of b, every column in text (subscribe.c). */
void session_send_text_rows(Conn *c, const Batch *b);
/* A statement that ran beyond its message (SUBSCRIBE) ended with e: the
 * ErrorResponse, then ReadyForQuery (simple) or skip to Sync (extended). */
void session_statement_failed(Conn *c, const SlError *e, bool extended);

/* subscribe.c */
int  subscribe_start(Conn *c, const char *name, bool snapshot, bool extended, bool copy,
                     SlError *err);
/* A CancelRequest for c: true if it ended c's subscription (57014). */
bool subscribe_cancel(Conn *c);
void subscribe_free(Conn *c);
void subscribe_drained(Conn *c);
/* Cancels the statement c runs, if any (a CancelRequest with c's key):
 * it ends with 57014 "canceling statement due to user request".  Returns
 * whether something was running.  Whatever else runs on behalf of a
 * session (SUBSCRIBE) hooks in here. */
bool session_cancel(Conn *c);
/* The connection is closing: stop what runs for it. */
void session_closing(Conn *c);
/* c's unsent output went down (conn.c, after a write): a statement paused
 * for want of room goes on. */
void session_output_drained(Conn *c);
/* The server is shutting down: an idle session ends now (FATAL 57P01,
 * after a Sync or Flush that waited), a busy one once its statement is
 * answered; a copy-in or a subscription is ended. */
void session_shutdown(Conn *c);
/* Past shutdown_timeout: cancels c's statement (57P01). */
void session_shutdown_cancel(Conn *c);

/* auth.c */
int  auth_init(Server *s, const ServerConfig *cfg, SlError *err);
int  auth_reload(Server *s, const ServerUser *users, int nusers, const char *const *hba,
                 int nhba, SlError *err);
void auth_free(Server *s);
/* Does any hba rule use the md5 method? */
bool auth_md5_rules(const Server *s);
/* After the StartupMessage: accept, refuse, or start a password exchange. */
void auth_start(Conn *c);
/* A message in PHASE_AUTH (whole, framed). */
void auth_message(Conn *c, uint8_t type, const uint8_t *body, size_t len);
void auth_conn_free(Conn *c);

/* tls.c */
int  tls_init(Server *s, const ServerConfig *cfg, SlError *err);
void tls_free(Server *s);
void tls_conn_start(Conn *c);
/* Feeds raw bytes during the handshake: the handshake step (the costly
 * public-key work) runs on the thread pool; conn_tls_step_done is called
 * on the loop when it is over. */
void tls_handshake_feed(Conn *c, const uint8_t *data, size_t n);
/* Feeds n raw bytes; plaintext is appended to c->in, ciphertext to send to
 * out.  Returns 0, or -1 when the TLS session is over or failed. */
int  tls_conn_read(Conn *c, const uint8_t *data, size_t n, StrBuf *out);
/* Encrypts n bytes of data, appending the records to out; -1 on failure. */
int  tls_conn_write(Conn *c, const void *data, size_t n, StrBuf *out);
void tls_conn_shutdown(Conn *c, StrBuf *out);
void tls_conn_free(Conn *c);

#endif /* SLUICE_PGW_H */
