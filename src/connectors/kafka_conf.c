/*
 * kafka_conf.c -- the librdkafka configuration of a Kafka stream or sink
 * (see kafka_int.h).
 *
 *   kafka_conf_build, kafka_error, kafka_transient, kafka_fetch_choice
 *   kafka_policy_new, kafka_policy_unref, kafka_property_allowed,
 *   kafka_broker_allowed, kafka_owner_trusted, kafka_conf_discard,
 *   kafka_handle_destroy
 *
 * bootstrap_servers is required (or "kafka.bootstrap.servers").  Every
 * option whose name starts with "kafka." goes to librdkafka without the
 * prefix, after sluice's defaults, so a user may override them; librdkafka
 * refuses unknown names and bad values, and that refusal is the error.
 * Building a configuration does no I/O, so CREATE checks it on the loop.
 *
 * Who may set what (docs/sql-reference.md "Kafka properties"): a relation
 * whose owner is not a superuser may set only the properties of
 * any_role[] below -- protocol, tuning and credentials, none that names a
 * file, a directory, a command, a plugin, an engine or a certificate or
 * key location on the server host -- and with security.protocol SASL_*
 * only the mechanisms PLAIN and SCRAM-SHA-256/512 (GSSAPI runs kinit,
 * OAUTHBEARER's OIDC fetches tokens).  Every other name, librdkafka's
 * unknown ones too, is refused with 42501 before anything reaches
 * librdkafka (plugin.library.paths is dlopen()ed at the very set).  The
 * check runs wherever a configuration is built: at CREATE and again at
 * each open, against the owner's role as it is then (the runtime answers
 * through its KafkaPolicy's owner_is_superuser; without an answer nobody
 * is trusted).  Such an owner's bootstrap servers must each be on
 * --kafka-allowed-hosts too (the policy's hosts; names compared as
 * written, no DNS; without the option the list is empty and such an owner
 * names no broker at all),
 * and so must every broker its clients connect to: the brokers the
 * metadata names go through resolve_cb (librdkafka) and
 * kafka_broker_allowed (the direct Fetch paths of the source and of the
 * sink's progress read) before any address is looked up.
 *
 * The policy is the caller's (kafka.h's KafkaPolicy, which the runtime
 * holds in its Runtime and hands to each source and sink it opens, and to
 * each check): nothing here is global.  A configuration built with a
 * policy carries it, with a reference, as librdkafka's opaque (for
 * resolve_cb); kafka_conf_discard (a configuration not handed to
 * rd_kafka_new) and kafka_handle_destroy (a handle made from one) drop
 * that reference, so a consumer whose close is left behind past the
 * Runtime's end still reads a live host list (resolve_cb checks hosts
 * only).  The owner check (kafka_owner_trusted, kafka_broker_allowed)
 * calls back into the runtime with the policy's arg, so it is asked only
 * from sluice's own threads while the Runtime lives (a source or sink
 * validated or opened, a sink's progress read), never from librdkafka's.
 */
#include "kafka_int.h"

#include "sluice/log.h"

#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

bool kafka_transient(rd_kafka_resp_err_t code)
{
    switch (code) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__NODE_UPDATE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS:
        return true;
    default:
        return false;
    }
}

int kafka_error(SlError *err, rd_kafka_resp_err_t code, const char *what)
{
    const char *state = ERRCODE_SYSTEM_ERROR;
    if (kafka_transient(code))
        state = ERRCODE_CONNECTION_FAILURE;
    switch (code) {
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
        state = ERRCODE_UNDEFINED_OBJECT;
        break;
    default:
        break;
    }
    return sl_error(err, state, "%s: %s", what, rd_kafka_err2str(code));
}

/* librdkafka's log lines go to sluice's log (syslog levels). */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    LogLevel l = level <= 3 ? LOG_ERROR : level == 4 ? LOG_WARN : level <= 6 ? LOG_INFO
                                                                          : LOG_DEBUG;
    sl_log(l, "librdkafka", "client=%s facility=%s message=\"%s\"", rd_kafka_name(rk), fac,
           log_quote(buf));
}

/* ---------------------------------------------------------------------- */
/* Who may set what                                                        */


/* The librdkafka properties (2.x CONFIGURATION.md) any role may set, in
 * strcmp order: they change how sluice talks to the brokers, never what
 * the server host reads, writes, loads or runs.  Left out on purpose:
 * anything *.location / *.path / store, sasl.kerberos.* (kinit.cmd is a
 * shell command), sasl.oauthbearer.* (token endpoints, the unsecure JWT
 * builder), plugin.library.paths, interceptors, ssl.engine.*,
 * ssl.providers, ssl.ca.certificate.stores, the callbacks, debug and the
 * log settings (the server's log), enable.random.seed (process-wide),
 * offset.store.*, transactional.id (sluice's exactly-once owns it) and
 * internal.termination.signal. */
static const char *const any_role[] = {
    "acks",
    "allow.auto.create.topics",
    "api.version.fallback.ms",
    "api.version.request",
    "api.version.request.timeout.ms",
    "auto.commit.enable",
    "auto.commit.interval.ms",
    "auto.offset.reset",
    "batch.num.messages",
    "batch.size",
    "bootstrap.servers",
    "broker.address.family",
    "broker.address.ttl",
    "broker.version.fallback",
    "check.crcs",
    "client.id",
    "client.rack",
    "compression.codec",
    "compression.level",
    "compression.type",
    "connections.max.idle.ms",
    "consume.callback.max.messages",
    "coordinator.query.interval.ms",
    "delivery.report.only.error",
    "delivery.timeout.ms",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "enable.gapless.guarantee",
    "enable.idempotence",
    "enable.partition.eof",
    "enable.ssl.certificate.verification",
    "fetch.error.backoff.ms",
    "fetch.max.bytes",
    "fetch.message.max.bytes",
    "fetch.min.bytes",
    "fetch.wait.max.ms",
    "group.id",
    "group.instance.id",
    "group.protocol.type",
    "heartbeat.interval.ms",
    "isolation.level",
    "linger.ms",
    "max.in.flight",
    "max.in.flight.requests.per.connection",
    "max.partition.fetch.bytes",
    "max.poll.interval.ms",
    "message.copy.max.bytes",
    "message.max.bytes",
    "message.send.max.retries",
    "message.timeout.ms",
    "metadata.broker.list",
    "metadata.max.age.ms",
    "partition.assignment.strategy",
    "partitioner",
    "produce.offset.report",
    "queue.buffering.backpressure.threshold",
    "queue.buffering.max.kbytes",
    "queue.buffering.max.messages",
    "queue.buffering.max.ms",
    "queued.max.messages.kbytes",
    "queued.min.messages",
    "queuing.strategy",
    "receive.message.max.bytes",
    "reconnect.backoff.jitter.ms",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "request.required.acks",
    "request.timeout.ms",
    "retries",
    "retry.backoff.max.ms",
    "retry.backoff.ms",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.password",
    "sasl.username",
    "security.protocol",
    "session.timeout.ms",
    "socket.blocking.max.ms",
    "socket.connection.setup.timeout.ms",
    "socket.keepalive.enable",
    "socket.max.fails",
    "socket.nagle.disable",
    "socket.receive.buffer.bytes",
    "socket.send.buffer.bytes",
    "socket.timeout.ms",
    "ssl.ca.pem",
    "ssl.certificate.pem",
    "ssl.cipher.suites",
    "ssl.curves.list",
    "ssl.endpoint.identification.algorithm",
    "ssl.key.password",
    "ssl.key.pem",
    "ssl.sigalgs.list",
    "statistics.interval.ms",
    "sticky.partitioning.linger.ms",
    "topic.blacklist",
    "topic.metadata.propagation.max.ms",
    "topic.metadata.refresh.fast.cnt",
    "topic.metadata.refresh.fast.interval.ms",
    "topic.metadata.refresh.interval.ms",
    "topic.metadata.refresh.sparse",
    "transaction.timeout.ms",
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

bool kafka_property_allowed(const char *name)
{
    return bsearch(name, any_role, sizeof(any_role) / sizeof(any_role[0]), sizeof(any_role[0]),
                   cmp_name) != NULL;
}

/* Splits "a, b,c" into trimmed, non-empty pieces (sl_malloc'ed). */
static int split_list(const char *list, char ***out)
{
    int n = 0;
    char **v = NULL;
    for (const char *p = list; *p != '\0';) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        const char *e = p;
        while (*e != '\0' && *e != ',')
            e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (t > p) {
            v = sl_realloc(v, sizeof(char *) * (size_t)(n + 1));
            v[n] = sl_malloc((size_t)(t - p) + 1);
            memcpy(v[n], p, (size_t)(t - p));
            v[n][t - p] = '\0';
            n++;
        }
        p = e;
    }
    *out = v;
    return n;
}

struct KafkaPolicy {
    _Atomic int refs;
    char      **hosts;          /* --kafka-allowed-hosts, split */
    int         nhosts;
    bool      (*owner_is_superuser)(void *arg, uint32_t owner);
    void       *arg;
};

KafkaPolicy *kafka_policy_new(const char *hosts,
                              bool (*owner_is_superuser)(void *arg, uint32_t owner), void *arg)
{
    KafkaPolicy *p = sl_calloc(1, sizeof(KafkaPolicy));
    atomic_init(&p->refs, 1);
    if (hosts != NULL && hosts[0] != '\0')
        p->nhosts = split_list(hosts, &p->hosts);
    p->owner_is_superuser = owner_is_superuser;
    p->arg = arg;
    return p;
}

void kafka_policy_unref(KafkaPolicy *p)
{
    if (p == NULL || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    for (int i = 0; i < p->nhosts; i++)
        sl_free(p->hosts[i]);
    sl_free(p->hosts);
    sl_free(p);
}

void kafka_conf_discard(rd_kafka_conf_t *conf, const KafkaPolicy *pol)
{
    rd_kafka_conf_destroy(conf);
    kafka_policy_unref((KafkaPolicy *)pol);
}

void kafka_handle_destroy(rd_kafka_t *rk)
{
    KafkaPolicy *pol = rd_kafka_opaque(rk);
    rd_kafka_destroy(rk);
    kafka_policy_unref(pol);
}

/* The length of the host part of "host[:port]" or "[v6]:port"; *port gets
 * the ":port" that follows, or NULL. */
static size_t host_part(const char *s, const char **port)
{
    const char *colon = s[0] == '[' ? strstr(s, "]:") : strrchr(s, ':');
    if (colon != NULL && s[0] == '[')
        colon++;
    *port = colon;
    return colon ? (size_t)(colon - s) : strlen(s);
}

/* Is one bootstrap server ("[proto://]host:port") on the list?  A port
 * given on the list must match; a host alone allows every port. */
static bool host_allowed(const KafkaPolicy *pol, const char *server)
{
    const char *s = strstr(server, "://");
    s = s ? s + 3 : server;
    const char *port, *aport;
    size_t hostlen = host_part(s, &port);
    for (int i = 0; i < pol->nhosts; i++) {
        const char *a = pol->hosts[i];
        if (strcmp(a, "*") == 0)
            return true;
        if (host_part(a, &aport) != hostlen || strncasecmp(a, s, hostlen) != 0)
            continue;
        if (aport == NULL || (port != NULL && strcmp(aport, port) == 0))
            return true;
    }
    return false;
}

/* Every bootstrap server of the options on the allow-list. */
static int check_hosts(const KafkaPolicy *pol, const Options *o, const char *relname,
                       SlError *err)
{
    static const char *const keys[] = {"bootstrap_servers", "kafka.bootstrap.servers",
                                       "kafka.metadata.broker.list"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const char *list = opts_get(o, keys[k]);
        if (list == NULL)
            continue;
        char **v;
        int n = split_list(list, &v), bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (!host_allowed(pol, v[i]))
                bad = i;
        if (bad >= 0) {
            sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                     "permission denied to connect \"%s\" to Kafka broker \"%s\"", relname,
                     v[bad]);
            if (pol->nhosts == 0)
                sl_error_hint(err, "The server was started without --kafka-allowed-hosts, so a "
                                   "non-superuser may name no Kafka broker; a superuser may "
                                   "list the brokers roles may use with --kafka-allowed-hosts "
                                   "'host:port,...' (docs/operations.md).");
            else
                sl_error_hint(err, "A non-superuser may name only the brokers that the "
                                   "server's --kafka-allowed-hosts lists.");
        }
        for (int i = 0; i < n; i++)
            sl_free(v[i]);
        sl_free(v);
        if (bad >= 0)
            return -1;
    }
    return 0;
}

/* The SASL mechanisms that only exchange credentials with the broker. */
static bool plain_mechanism(const char *m)
{
    return strcasecmp(m, "PLAIN") == 0 || strcasecmp(m, "SCRAM-SHA-256") == 0 ||
           strcasecmp(m, "SCRAM-SHA-512") == 0;
}

static int refuse(SlError *err, const char *relname, const char *what, const char *hint)
{
    sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
             "permission denied to set %s of \"%s\": only a superuser may", what, relname);
    sl_error_hint(err, "%s", hint);
    return -1;
}

static bool trusted(const KafkaPolicy *pol, uint32_t owner)
{
    return pol != NULL && pol->owner_is_superuser != NULL &&
           pol->owner_is_superuser(pol->arg, owner);
}

/* host (an IPv6 address without brackets too) and port on the list? */
static bool address_allowed(const KafkaPolicy *pol, const char *host, const char *port)
{
    char name[300];
    snprintf(name, sizeof(name), strchr(host, ':') ? "[%.256s]:%.16s" : "%.256s:%.16s", host,
             port);
    return host_allowed(pol, name);
}

bool kafka_owner_trusted(const KafkaPolicy *pol, uint32_t owner)
{
    return trusted(pol, owner);
}

bool kafka_broker_allowed(const KafkaPolicy *pol, uint32_t owner, const char *host, int port)
{
    if (trusted(pol, owner))
        return true;
    char p[16];
    snprintf(p, sizeof(p), "%d", port);
    return pol != NULL && address_allowed(pol, host, p);
}

/* librdkafka's resolver for an owner limited to --kafka-allowed-hosts:
 * every broker it is about to connect to (the bootstrap servers and those
 * the metadata names), by name, before any address is looked up. */
static int resolve_cb(const char *node, const char *service, const struct addrinfo *hints,
                      struct addrinfo **res, void *opaque)
{
    const KafkaPolicy *pol = opaque;
    if (node == NULL && service == NULL && hints == NULL) {
        /* librdkafka frees what a lookup returned */
        freeaddrinfo(*res);
        return 0;
    }
    if (node == NULL || pol == NULL || !address_allowed(pol, node, service ? service : "")) {
        sl_log(LOG_WARN, "kafka broker refused", "address=\"%s:%s\" reason=\"%s\"",
               log_quote(node ? node : ""), log_quote(service ? service : ""),
               "not on --kafka-allowed-hosts");
        return EAI_FAIL;
    }
    return getaddrinfo(node, service, hints, res);
}

/* The check described at the top, before anything reaches librdkafka. */
static int check_properties(const KafkaPolicy *pol, const Options *o, const char *relname,
                            uint32_t owner, SlError *err)
{
    if (trusted(pol, owner))
        return 0;
    const char *protocol = NULL, *mechanism = NULL;
    char what[300];
    for (int i = 0; i < o->n; i++) {
        if (strncmp(o->keys[i], "kafka.", 6) != 0)
            continue;
        const char *name = o->keys[i] + 6;
        if (!kafka_property_allowed(name)) {
            snprintf(what, sizeof(what), "option \"%.200s\"", o->keys[i]);
            return refuse(err, relname, what,
                          "A non-superuser may set the librdkafka properties of protocol, "
                          "tuning and credentials; properties that name files, commands, "
                          "plugins, engines or certificate locations on the server host need "
                          "a superuser (docs/sql-reference.md, \"Kafka properties\").");
        }
        if (strcmp(name, "security.protocol") == 0)
            protocol = o->values[i];
        else if (strcmp(name, "sasl.mechanism") == 0 || strcmp(name, "sasl.mechanisms") == 0)
            mechanism = o->values[i];
    }
    if (protocol != NULL && strncasecmp(protocol, "sasl", 4) == 0 &&
        (mechanism == NULL || !plain_mechanism(mechanism))) {
        snprintf(what, sizeof(what), "SASL mechanism %.100s", mechanism ? mechanism : "GSSAPI");
        return refuse(err, relname, what,
                      "A non-superuser may use \"kafka.sasl.mechanism\" PLAIN, SCRAM-SHA-256 "
                      "or SCRAM-SHA-512 (GSSAPI, the default, runs kinit on the server host).");
    }
    return check_hosts(pol, o, relname, err);
}

int kafka_conf_build(const KafkaPolicy *pol, const Options *o, const char *relname,
                     uint32_t owner, const char *const *defaults, rd_kafka_conf_t **out,
                     SlError *err)
{
    char msg[512];
    static const KafkaPolicy none;
    const KafkaPolicy *given = pol;
    if (pol == NULL)
        pol = &none;
    if (check_properties(pol, o, relname, owner, err) < 0)
        return -1;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, log_cb);
    if (!trusted(pol, owner))
        rd_kafka_conf_set_resolve_cb(conf, resolve_cb);
    for (int i = 0; defaults != NULL && defaults[i] != NULL; i += 2) {
        if (rd_kafka_conf_set(conf, defaults[i], defaults[i + 1], msg, sizeof(msg)) !=
            RD_KAFKA_CONF_OK) {
            rd_kafka_conf_destroy(conf);
            return sl_error(err, ERRCODE_INTERNAL_ERROR, "kafka default %s: %s", defaults[i],
                            msg);
        }
    }
    const char *servers = opts_get(o, "bootstrap_servers");
    bool have_servers = servers != NULL;
    if (servers != NULL &&
        rd_kafka_conf_set(conf, "bootstrap.servers", servers, msg, sizeof(msg)) !=
            RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid bootstrap_servers: %s",
                        msg);
    }
    for (int i = 0; i < o->n; i++) {
        if (strncmp(o->keys[i], "kafka.", 6) != 0)
            continue;
        const char *name = o->keys[i] + 6;
        if (rd_kafka_conf_set(conf, name, o->values[i], msg, sizeof(msg)) !=
            RD_KAFKA_CONF_OK) {
            rd_kafka_conf_destroy(conf);
            sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid option \"%s\" of \"%s\": %s",
                     o->keys[i], relname, msg);
            sl_error_hint(err, "Options named kafka.<property> go to librdkafka as "
                               "<property>; see librdkafka's CONFIGURATION.md.");
            return -1;
        }
        have_servers |= strcmp(name, "bootstrap.servers") == 0 ||
                        strcmp(name, "metadata.broker.list") == 0;
    }
    if (!have_servers) {
        rd_kafka_conf_destroy(conf);
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "\"%s\" needs the option bootstrap_servers",
                 relname);
        sl_error_hint(err, "Add bootstrap_servers = 'host:port[,host:port]' to WITH (...).");
        return -1;
    }
    /* the handle made from conf holds the policy (kafka_handle_destroy) */
    if (given != NULL) {
        atomic_fetch_add(&((KafkaPolicy *)given)->refs, 1);
        rd_kafka_conf_set_opaque(conf, (void *)given);
    }
    *out = conf;
    return 0;
}

int kafka_fetch_choice(const Options *o, bool *direct, SlError *err)
{
    const char *f = opts_get(o, "fetch");
    if (f != NULL && strcmp(f, "direct") != 0 && strcmp(f, "librdkafka") != 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid fetch \"%s\"", f);
        sl_error_hint(err, "Use 'direct' (sluice's own Fetch requests, the default) or "
                           "'librdkafka'.");
        return -1;
    }
    *direct = f == NULL || strcmp(f, "direct") == 0;
    for (int i = 0; i < o->n; i++) {
        const char *k = o->keys[i];
        if (strncmp(k, "kafka.ssl.", 10) == 0 || strncmp(k, "kafka.sasl.", 11) == 0 ||
            (strcmp(k, "kafka.security.protocol") == 0 &&
             strcasecmp(o->values[i], "plaintext") != 0))
            *direct = false;
    }
    return 0;
}
