/*
 * server.c -- the listener, the registry of connections, and shutdown.
 *
 *   server_init   load the TLS certificate and the hba rules, bind,
 *                 listen, start the per-turn flush hook (and the loop lag
 *                 probe with debug_loop_lag)
 *   server_port   the bound port
 *   server_md5_rules  whether an hba rule uses md5
 *   server_reload_auth  SIGHUP: new users and hba rules (auth_reload)
 *   server_close  stop accepting; let statements in flight finish and be
 *                 answered, end every session with FATAL 57P01, then close
 *                 the handles
 *
 * Shutdown (SIGTERM, PostgreSQL's fast shutdown that first lets running
 * statements end): the listener closes; idle sessions get FATAL 57P01
 * "terminating connection due to administrator command" at once, busy
 * ones once their statement's answer (and a Sync that waited) is out.
 * A statement still running after shutdown_timeout seconds is cancelled
 * (it ends with 57P01, its effects not committed); two seconds later what
 * remains (a client that does not read its answer) is closed.  The flush
 * hook lives until the last connection is gone.  A statement that cannot
 * be interrupted keeps its connection counted; five seconds after the
 * close the process logs "shutdown: deadline passed" and exits with
 * status 1 without it.
 *
 * A 1 s sweep closes connections that are not through authentication
 * authentication_timeout seconds after they were accepted (PostgreSQL's
 * authentication_timeout): a client that sends half a startup packet, stops
 * in the TLS handshake or the password exchange does not hold a slot for
 * ever.
 *
 * The loop lag probe is a 10 ms timer that records how late each firing
 * is: a statement or a flush that holds the loop shows up as lag.  Its
 * figures (maximum, mean, percentiles) are logged at shutdown.
 */
#include <unistd.h>

#include "pgw.h"
#include "sluice/log.h"
#include "sluice/metrics.h"

#define LAG_PERIOD_MS 10
/* After the connections are closed, how long the jobs they orphaned may
 * still run before the process exits without them. */
#define SHUTDOWN_EXIT_MS 5000

static void on_connection(uv_stream_t *listener, int status)
{
    Server *s = listener->data;
    if (status < 0) {
        sl_log(LOG_WARN, "accept failed", "error=\"%s\"", log_quote(uv_strerror(status)));
        return;
    }
    conn_accept(s);
}

static void on_flush_check(uv_check_t *h)
{
    conn_flush_all(h->data);
}

static void on_auth_sweep(uv_timer_t *t)
{
    Server *s = t->data;
    uint64_t now = uv_now(s->loop), limit = (uint64_t)s->cfg.authentication_timeout * 1000;
    for (Conn *c = s->conns, *next; c != NULL; c = next) {
        next = c->next;
        if ((c->phase != PHASE_STARTUP && c->phase != PHASE_AUTH) || c->close_after_flush ||
            now - c->accepted_ms < limit)
            continue;
        if (c->ssl != NULL && !c->tls_up) {
            sl_log(LOG_INFO, "connection closed", "peer=%s reason=\"%s\"", c->peer,
                   "authentication timeout during the TLS handshake");
            conn_close(c);
        } else {
            session_fatal(c, ERRCODE_QUERY_CANCELED, "canceling authentication due to timeout");
        }
    }
}

/* /metrics: connections by phase, and the limit. */
static void collect_connections(StrBuf *out, void *arg)
{
    Server *s = arg;
    static const char *const phases[] = {"startup", "auth", "ready", "closing"};
    int n[4] = {0};
    for (Conn *c = s->conns; c != NULL; c = c->next)
        if ((int)c->phase >= 0 && (int)c->phase < 4)
            n[c->phase]++;
    metrics_family(out, "sluice_connections", "gauge",
                   "Open client connections by phase (startup, auth, ready, closing).");
    for (int i = 0; i < 4; i++) {
        char labels[32];
        snprintf(labels, sizeof(labels), "phase=\"%s\"", phases[i]);
        metrics_sample(out, "sluice_connections", labels, n[i]);
    }
    metrics_family(out, "sluice_max_connections", "gauge",
                   "Connections accepted at most (max_connections).");
    metrics_sample(out, "sluice_max_connections", "", s->cfg.max_connections);
}

static void on_lag_timer(uv_timer_t *t)
{
    LagProbe *lp = t->data;
    uint64_t now = uv_hrtime();
    uint64_t lag = now > lp->due_ns ? now - lp->due_ns : 0;
    lp->ticks++;
    lp->sum_ns += lag;
    if (lag > lp->max_ns)
        lp->max_ns = lag;
    uint64_t ms = lag / 1000000;
    lp->hist[ms < LAG_BUCKETS - 1 ? ms : LAG_BUCKETS - 1]++;
    lp->due_ns = now + (uint64_t)LAG_PERIOD_MS * 1000000;
    uv_timer_start(t, on_lag_timer, LAG_PERIOD_MS, 0);
}

static void lag_start(Server *s)
{
    LagProbe *lp = sl_calloc(1, sizeof(LagProbe));
    lp->hist = sl_calloc(LAG_BUCKETS, sizeof(uint32_t));
    uv_timer_init(s->loop, &lp->timer);
    lp->timer.data = lp;
    lp->due_ns = uv_hrtime() + (uint64_t)LAG_PERIOD_MS * 1000000;
    uv_timer_start(&lp->timer, on_lag_timer, LAG_PERIOD_MS, 0);
    uv_unref((uv_handle_t *)&lp->timer);
    s->lag = lp;
}

/* The lag below which a fraction q of the samples fall, in ms (bucket top). */
static int lag_quantile(const LagProbe *lp, double q)
{
    uint64_t want = (uint64_t)((double)lp->ticks * q), seen = 0;
    for (int i = 0; i < LAG_BUCKETS; i++) {
        seen += lp->hist[i];
        if (seen > want)
            return i + 1;
    }
    return LAG_BUCKETS;
}

static void lag_report(const LagProbe *lp)
{
    uint64_t over10 = 0, over50 = 0;
    for (int i = 10; i < LAG_BUCKETS; i++)
        over10 += lp->hist[i];
    for (int i = 50; i < LAG_BUCKETS; i++)
        over50 += lp->hist[i];
    sl_log(LOG_INFO, "loop lag",
           "period_ms=%d ticks=%llu max_ms=%.3f mean_ms=%.3f p50_ms<%d p99_ms<%d "
           "p999_ms<%d over_10ms=%llu over_50ms=%llu",
           LAG_PERIOD_MS, (unsigned long long)lp->ticks, (double)lp->max_ns / 1e6,
           lp->ticks ? (double)lp->sum_ns / 1e6 / (double)lp->ticks : 0.0,
           lag_quantile(lp, 0.5), lag_quantile(lp, 0.99), lag_quantile(lp, 0.999),
           (unsigned long long)over10, (unsigned long long)over50);
}

static void on_lag_closed(uv_handle_t *h)
{
    LagProbe *lp = h->data;
    sl_free(lp->hist);
    sl_free(lp);
}

/* Frees what server_init set up before the listener; s itself too. */
static void server_free_config(Server *s)
{
    rt_session_lister(s->rt, NULL, NULL);
    pthread_mutex_destroy(&s->activity_mu);
    auth_free(s);
    tls_free(s);
}

Server *server_init(uv_loop_t *loop, const ServerConfig *cfg, SlError *err)
{
    if (cfg->statements == NULL) {
        sl_error(err, ERRCODE_INTERNAL_ERROR, "no statement pool in the server's configuration");
        return NULL;
    }
    Server *s = sl_calloc(1, sizeof(Server));
    s->loop = loop;
    s->rt = cfg->rt;
    s->cfg = *cfg;
    /* The configuration's strings belong to the caller; what is needed
     * later is copied by auth_init and tls_init. */
    s->cfg.users = NULL;
    s->cfg.hba = NULL;
    s->cfg.ssl_cert_file = s->cfg.ssl_key_file = s->cfg.ssl_ca_file = NULL;
    s->next_pid = 1000;
    pthread_mutex_init(&s->activity_mu, NULL);
    rt_session_lister(s->rt, activity_list, s);
    if (auth_init(s, cfg, err) < 0 || tls_init(s, cfg, err) < 0) {
        server_free_config(s);
        sl_free(s);
        return NULL;
    }

    struct sockaddr_storage addr;
    int rc;
    if (strchr(cfg->listen, ':') != NULL)
        rc = uv_ip6_addr(cfg->listen, cfg->port, (struct sockaddr_in6 *)&addr);
    else
        rc = uv_ip4_addr(cfg->listen, cfg->port, (struct sockaddr_in *)&addr);
    if (rc != 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid listen address \"%s\": %s",
                 cfg->listen, uv_strerror(rc));
        server_free_config(s);
        sl_free(s);
        return NULL;
    }
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    rc = uv_tcp_bind(&s->listener, (struct sockaddr *)&addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection);
    if (rc != 0) {
        sl_error(err, ERRCODE_CONNECTION_EXCEPTION, "cannot listen on %s:%d: %s",
                 cfg->listen, cfg->port, uv_strerror(rc));
        /* The handle is initialized: it must be closed before s is freed. */
        uv_close((uv_handle_t *)&s->listener, NULL);
        uv_run(loop, UV_RUN_NOWAIT);
        server_free_config(s);
        sl_free(s);
        return NULL;
    }
    struct sockaddr_storage bound;
    int namelen = sizeof(bound);
    uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &namelen);
    s->port = ntohs(bound.ss_family == AF_INET6
                        ? ((struct sockaddr_in6 *)&bound)->sin6_port
                        : ((struct sockaddr_in *)&bound)->sin_port);

    uv_idle_init(loop, &s->resume_idle);
    s->resume_idle.data = s;
    uv_check_init(loop, &s->flush_check);
    s->flush_check.data = s;
    uv_check_start(&s->flush_check, on_flush_check);
    /* The check handle must not keep the loop alive on its own. */
    uv_unref((uv_handle_t *)&s->flush_check);
    if (s->cfg.authentication_timeout <= 0)
        s->cfg.authentication_timeout = 60;
    uv_timer_init(loop, &s->auth_timer);
    s->auth_timer.data = s;
    uv_timer_start(&s->auth_timer, on_auth_sweep, 1000, 1000);
    uv_unref((uv_handle_t *)&s->auth_timer);
    if (cfg->debug_loop_lag)
        lag_start(s);
    metrics_register(collect_connections, s);
    return s;
}

int server_port(const Server *s)
{
    return s->port;
}

int server_reload_auth(Server *s, const ServerUser *users, int nusers,
                       const char *const *hba, int nhba, SlError *err)
{
    return auth_reload(s, users, nusers, hba, nhba, err);
}

bool server_md5_rules(const Server *s)
{
    return auth_md5_rules(s);
}

static void on_handle_closed(uv_handle_t *h);

static void maybe_finish_close(Server *s)
{
    if (s->nconns == 0 && !s->conns_done) {
        /* The last answers are out: the hooks that served them go. */
        s->conns_done = true;
        s->pending_closes += 3;
        uv_idle_stop(&s->resume_idle);
        uv_close((uv_handle_t *)&s->resume_idle, on_handle_closed);
        uv_check_stop(&s->flush_check);
        uv_close((uv_handle_t *)&s->flush_check, on_handle_closed);
        uv_timer_stop(&s->shutdown_timer);
        uv_close((uv_handle_t *)&s->shutdown_timer, on_handle_closed);
    }
    if (s->pending_closes == 0 && s->conns_done && s->close_cb != NULL) {
        server_close_cb cb = s->close_cb;
        s->close_cb = NULL;
        server_free_config(s);
        cb(s);
    }
}

static void on_handle_closed(uv_handle_t *h)
{
    Server *s = h->data;
    s->pending_closes--;
    maybe_finish_close(s);
}

/* Called by conn.c when a connection's handle is closed and freed. */
void server_conn_gone(Server *s);
void server_conn_gone(Server *s)
{
    if (s->closing)
        maybe_finish_close(s);
}

/* shutdown_timeout passed: cancel what still runs; two seconds later, close
 * what is still open. */
static void on_shutdown_timer(uv_timer_t *t)
{
    Server *s = t->data;
    s->shutdown_phase++;
    if (s->shutdown_phase == 3) {
        /* A statement that cannot be interrupted (a worker in regexec, a
         * library call) still holds its connection: exit without it. */
        sl_log(LOG_WARN, "shutdown: deadline passed, exiting with statements still running",
               "connections=%d", s->nconns);
        fflush(stdout);
        fflush(stderr);
        _exit(1);
    }
    sl_log(LOG_INFO, s->shutdown_phase == 1 ? "shutdown: cancelling statements"
                                            : "shutdown: closing connections",
           "connections=%d", s->nconns);
    for (Conn *c = s->conns, *next; c != NULL; c = next) {
        next = c->next;
        if (s->shutdown_phase == 1)
            session_shutdown_cancel(c);
        else
            conn_close(c);
    }
    if (!s->conns_done)
        uv_timer_start(&s->shutdown_timer, on_shutdown_timer,
                       s->shutdown_phase == 1 ? 2000 : SHUTDOWN_EXIT_MS, 0);
}

void server_close(Server *s, server_close_cb cb)
{
    s->closing = true;
    s->close_cb = cb;
    metrics_unregister(collect_connections, s);
    s->pending_closes = 2;
    uv_timer_stop(&s->auth_timer);
    uv_close((uv_handle_t *)&s->auth_timer, on_handle_closed);
    uv_close((uv_handle_t *)&s->listener, on_handle_closed);
    uv_timer_init(s->loop, &s->shutdown_timer);
    s->shutdown_timer.data = s;
    uv_timer_start(&s->shutdown_timer, on_shutdown_timer,
                   (uint64_t)(s->cfg.shutdown_timeout > 0 ? s->cfg.shutdown_timeout : 0) * 1000,
                   0);
    if (s->lag != NULL) {
        lag_report(s->lag);
        uv_timer_stop(&s->lag->timer);
        uv_close((uv_handle_t *)&s->lag->timer, on_lag_closed);
        s->lag = NULL;
    }
    /* session_shutdown may close c (conn_close unlinks it), so take the
     * next one first. */
    for (Conn *c = s->conns, *next; c != NULL; c = next) {
        next = c->next;
        session_shutdown(c);
    }
    maybe_finish_close(s);
}
