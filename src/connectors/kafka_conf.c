/*
 * kafka_conf.c -- the librdkafka configuration of a Kafka stream or sink
 * (see kafka_int.h).
 *
 *   kafka_conf_build, kafka_error, kafka_transient, kafka_fetch_choice
 *
 * bootstrap_servers is required (or "kafka.bootstrap.servers").  Every
 * option whose name starts with "kafka." goes to librdkafka without the
 * prefix, after sluice's defaults, so a user may override them; librdkafka
 * refuses unknown names and bad values, and that refusal is the error.
 * Building a configuration does no I/O, so CREATE checks it on the loop.
 */
#include "kafka_int.h"

#include "sluice/log.h"

#include <stdio.h>
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

int kafka_conf_build(const Options *o, const char *relname, const char *const *defaults,
                     rd_kafka_conf_t **out, SlError *err)
{
    char msg[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, log_cb);
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
