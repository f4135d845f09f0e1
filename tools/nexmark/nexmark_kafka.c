/*
 * nexmark_kafka.c -- nexmark_gen's Kafka writer: each event's JSON object
 * as one record of a topic (nexmark_kafka.h).
 *
 *   nexmark_kafka_open, nexmark_kafka_send, nexmark_kafka_close
 *
 * An idempotent librdkafka producer (acks=all), so a retried batch is not
 * written twice and each partition keeps the order the events were sent
 * in.  librdkafka batches the records (up to 10,000 a request, lingering
 * 20 ms, or 1 ms when nexmark_gen paces them); send only queues, and waits (serving delivery reports) while the
 * local queue is full.  The topic is made with the Admin API when it is
 * missing.  A tool, not the server: it uses librdkafka directly, where
 * the server keeps it behind src/connectors/kafka_*.c.
 */
#include "nexmark_kafka.h"

#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT_MS 60000

struct NexmarkKafka {
    rd_kafka_t *rk;
    char       *topic;
    int         partitions;
    int64_t     sent, delivered, failed;
    char        first_error[256];
};

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    NexmarkKafka *k = opaque;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        k->delivered++;
        return;
    }
    if (k->failed++ == 0)
        snprintf(k->first_error, sizeof(k->first_error), "%s", rd_kafka_err2str(m->err));
}

static int set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
    char err[256];
    if (rd_kafka_conf_set(conf, name, value, err, sizeof(err)) == RD_KAFKA_CONF_OK)
        return 0;
    fprintf(stderr, "nexmark_gen: %s = %s: %s\n", name, value, err);
    return -1;
}

/* The topic's partitions with a leader, 0 when it does not exist, -1 on an
 * error. */
static int topic_partitions(NexmarkKafka *k)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(k->rk, k->topic, NULL);
    const struct rd_kafka_metadata *md;
    rd_kafka_resp_err_t err = rd_kafka_metadata(k->rk, 0, rkt, &md, 10000);
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "nexmark_gen: metadata of %s: %s\n", k->topic, rd_kafka_err2str(err));
        return -1;
    }
    int n = 0;
    if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        n = md->topics[0].partition_cnt;
        for (int i = 0; i < md->topics[0].partition_cnt; i++)
            if (md->topics[0].partitions[i].leader < 0)
                n = 0;      /* not ready yet */
    }
    rd_kafka_metadata_destroy(md);
    return n;
}

static int create_topic(NexmarkKafka *k, int partitions)
{
    char errstr[256];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(k->topic, partitions, 1, errstr,
                                                    sizeof(errstr));
    if (nt == NULL) {
        fprintf(stderr, "nexmark_gen: topic %s: %s\n", k->topic, errstr);
        return -1;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(k->rk);
    rd_kafka_CreateTopics(k->rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, TIMEOUT_MS);
    int rc = -1;
    if (ev == NULL) {
        fprintf(stderr, "nexmark_gen: creating topic %s timed out\n", k->topic);
    } else {
        const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
        size_t n = 0;
        const rd_kafka_topic_result_t **tr = res ? rd_kafka_CreateTopics_result_topics(res, &n)
                                                 : NULL;
        rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && n == 1)
            err = rd_kafka_topic_result_error(tr[0]);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
            rc = 0;
        else
            fprintf(stderr, "nexmark_gen: creating topic %s: %s\n", k->topic,
                    rd_kafka_err2str(err));
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return rc;
}

int nexmark_kafka_open(const char *bootstrap, const char *topic, int partitions, int linger_ms,
                       NexmarkKafka **out)
{
    NexmarkKafka *k = calloc(1, sizeof(*k));
    if (k == NULL)
        abort();
    k->topic = strdup(topic);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char err[512], linger[16];
    snprintf(linger, sizeof(linger), "%d", linger_ms);
    if (set(conf, "bootstrap.servers", bootstrap) < 0 ||
        set(conf, "enable.idempotence", "true") < 0 || set(conf, "acks", "all") < 0 ||
        set(conf, "linger.ms", linger) < 0 || set(conf, "batch.num.messages", "10000") < 0 ||
        set(conf, "queue.buffering.max.messages", "1000000") < 0 ||
        set(conf, "queue.buffering.max.kbytes", "1048576") < 0) {
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_conf_set_opaque(conf, k);
    k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (k->rk == NULL) {
        fprintf(stderr, "nexmark_gen: producer: %s\n", err);
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    int have = topic_partitions(k);
    if (have < 0)
        goto fail;
    if (have == 0) {
        if (create_topic(k, partitions > 0 ? partitions : 1) < 0)
            goto fail;
        struct timespec pause = {0, 100 * 1000 * 1000};
        for (int tries = 0; have == 0 && tries < TIMEOUT_MS / 100; tries++) {
            nanosleep(&pause, NULL);
            if ((have = topic_partitions(k)) < 0)
                goto fail;
        }
        if (have == 0) {
            fprintf(stderr, "nexmark_gen: topic %s has no leaders\n", topic);
            goto fail;
        }
    }
    if (partitions > have) {
        fprintf(stderr, "nexmark_gen: topic %s has %d partitions, fewer than --partitions %d\n",
                topic, have, partitions);
        goto fail;
    }
    k->partitions = partitions > 0 ? partitions : have;
    *out = k;
    return 0;
fail:
    if (k->rk != NULL)
        rd_kafka_destroy(k->rk);
    free(k->topic);
    free(k);
    return -1;
}

int nexmark_kafka_send(NexmarkKafka *k, int64_t n, int64_t ts_ms, const char *json, size_t len)
{
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            k->rk, RD_KAFKA_V_TOPIC(k->topic), RD_KAFKA_V_PARTITION((int32_t)(n % k->partitions)),
            RD_KAFKA_V_VALUE((void *)json, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_TIMESTAMP(ts_ms), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
            break;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            fprintf(stderr, "nexmark_gen: produce to %s: %s\n", k->topic, rd_kafka_err2str(err));
            return -1;
        }
        rd_kafka_poll(k->rk, 100);      /* the queue is full: let it drain */
    }
    if (++k->sent % 10000 == 0)
        rd_kafka_poll(k->rk, 0);
    if (k->failed > 0) {
        fprintf(stderr, "nexmark_gen: delivery to %s failed: %s\n", k->topic, k->first_error);
        return -1;
    }
    return 0;
}

int nexmark_kafka_close(NexmarkKafka *k)
{
    rd_kafka_resp_err_t err = rd_kafka_flush(k->rk, TIMEOUT_MS);
    int rc = 0;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "nexmark_gen: flush to %s: %s (%d records unacknowledged)\n", k->topic,
                rd_kafka_err2str(err), rd_kafka_outq_len(k->rk));
        rc = -1;
    } else if (k->failed > 0 || k->delivered != k->sent) {
        fprintf(stderr, "nexmark_gen: %" PRId64 " of %" PRId64 " records to %s failed: %s\n",
                k->sent - k->delivered, k->sent, k->topic, k->first_error);
        rc = -1;
    } else {
        fprintf(stderr, "nexmark_gen: %" PRId64 " records to %s (%d partitions)\n", k->sent,
                k->topic, k->partitions);
    }
    rd_kafka_destroy(k->rk);
    free(k->topic);
    free(k);
    return rc;
}
