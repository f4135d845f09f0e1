/*
 * kafka_sink.c -- the exactly-once Kafka sink (see kafka.h; Materialize's
 * design, docs/operations.md "Exactly-once into Kafka").
 *
 *   kafka_sink_validate, kafka_sink_open, kafka_sink_write, kafka_sink_key,
 *   kafka_sink_close
 *
 * One transactional producer per query, transactional.id
 * "sluice-<query>-<oid>-<created_at>" unless the sink names one.  Batch N is one Kafka transaction: its rows,
 * then a progress record (key: the transactional.id, value:
 * {"batch": N}) on the compacted progress topic, then commit.  The state
 * of batch N commits to RocksDB only after that (incremental.c), so:
 *
 *   - at the first write after a (re)start, init_transactions fences any
 *     older producer with the same id and aborts its open transaction; the
 *     progress topic is then read to its high watermark read_uncommitted
 *     by kafka_fetch.c's Fetch path, each transaction resolved by its COMMIT or ABORT marker, which gives the last batch
 *     whose transaction committed.  read_committed would stop at the last
 *     stable offset, which another producer's open transaction on the
 *     shared topic holds back (another query's, a server killed mid-batch): the last commits
 *     would be missed and their batches written twice.  Where that path
 *     cannot serve (TLS, SASL, fetch = 'librdkafka', a codec it does not
 *     read), librdkafka reads read_committed and waits until the stable
 *     offset reaches the high watermark.  Before any of it the topic's
 *     leader (from the metadata) is checked against --kafka-allowed-hosts
 *     (kafka_broker_allowed): a sink not owned by a superuser whose
 *     progress topic is led by a broker off the list fails 42501 naming
 *     that broker, not later with whatever librdkafka's refused
 *     connection turns into;
 *   - a replayed batch at or below that id is skipped (its rows are in);
 *     one above it is written once.
 *
 * Rows are JSON objects (or CSV lines) of the query's columns; with
 * key = 'a,b' the record key is those columns (JSON object or CSV), and a
 * group that leaves the result (update mode, HAVING; a session merged away
 * or whose bounds in the key moved) is a tombstone: its key with a NULL
 * value, written before the batch's rows.  Everything here runs on the batch's worker
 * thread; opening does no I/O.
 */
#include "kafka_fetch.h"
#include "kafka_int.h"

#include "sluice/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* transaction.timeout.ms unless the sink sets "kafka.transaction.timeout.ms";
 * also the longest wait of init_transactions and commit_transaction. */
#define TXN_TIMEOUT_MS 60000

typedef enum SinkFormat { SF_JSON, SF_CSV } SinkFormat;

struct KafkaSink {
    const KafkaPolicy *pol;         /* the caller's: who may reach which broker */
    Arena              arena;
    Options            opts;
    const CatRelation *sink;
    const CatRelation *query;
    const char        *topic;
    const char        *progress_topic;
    const char        *txn_id;
    SinkFormat         format;
    int               *key_cols;
    int                nkey;
    SlStr             *json_names;      /* per output column: "\"name\": " */
    int                txn_timeout_ms;
    bool               direct;          /* the progress topic read by kafka_fetch.c */
    rd_kafka_t        *rk;              /* made at the first write */
    rd_kafka_topic_t  *rkt, *prkt;      /* its handles of topic and progress_topic */
    int64_t            committed;       /* last batch known committed, -1 none */
    rd_kafka_resp_err_t undelivered;    /* the transaction's first delivery failure
                                         * that is not a broker away or a timeout */
};

/* Reads a sink's options; with query, also checks its key columns. */
static int read_options(KafkaSink *k, const CatRelation *sink, const CatRelation *query,
                        SlError *err)
{
    Options *o = &k->opts;
    if (opts_parse(&k->arena, sink->options, o, err) < 0)
        return -1;
    const char *connector = opts_get(o, "connector");
    if (connector == NULL || strcmp(connector, "kafka") != 0) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "sink \"%s\": connector \"%s\" is not "
                 "supported", sink->name, connector ? connector : "");
        sl_error_hint(err, "Use connector = 'kafka'.");
        return -1;
    }
    k->topic = opts_get(o, "topic");
    if (k->topic == NULL)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "Kafka sink \"%s\" needs a topic",
                        sink->name);
    /* Another sink's id (visible in sys.queries) would fence its producer
     * and read its progress: only a superuser may name one. */
    if (opts_get(o, "transactional_id") != NULL && !kafka_owner_trusted(k->pol, sink->owner)) {
        sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                 "permission denied to set transactional_id of sink \"%s\": only a superuser "
                 "may", sink->name);
        sl_error_hint(err, "Leave it out: the default id is the sink's own.");
        return -1;
    }
    k->progress_topic = opts_get(o, "progress_topic");
    if (k->progress_topic == NULL)
        k->progress_topic = "sluice_progress";
    const char *fmt = opts_get(o, "format");
    if (fmt == NULL || strcmp(fmt, "json") == 0)
        k->format = SF_JSON;
    else if (strcmp(fmt, "csv") == 0)
        k->format = SF_CSV;
    else {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid format \"%s\" for a Kafka sink",
                 fmt);
        sl_error_hint(err, "Use 'json' or 'csv'.");
        return -1;
    }
    if (kafka_fetch_choice(o, &k->direct, err) < 0)
        return -1;
    const char *defaults[] = {NULL};
    rd_kafka_conf_t *conf;
    if (kafka_conf_build(k->pol, o, sink->name, sink->owner, defaults, &conf, err) < 0)
        return -1;
    kafka_conf_discard(conf, k->pol);
    const char *key = opts_get(o, "key");
    if (key == NULL || query == NULL)
        return 0;
    char *list = arena_strdup(&k->arena, key);
    k->key_cols = ARENA_ARRAY(&k->arena, int, query->ncols > 0 ? query->ncols : 1);
    for (char *save = NULL, *c = strtok_r(list, ", ", &save); c;
         c = strtok_r(NULL, ", ", &save)) {
        int found = -1;
        for (int i = 0; i < query->ncols; i++)
            if (strcmp(query->cols[i].name, c) == 0)
                found = i;
        if (found < 0)
            return sl_error(err, ERRCODE_UNDEFINED_COLUMN,
                            "key column \"%s\" of sink \"%s\" is not a column of the query", c,
                            sink->name);
        if (k->nkey == query->ncols)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "too many key columns");
        k->key_cols[k->nkey++] = found;
    }
    return 0;
}

int kafka_sink_validate(const KafkaPolicy *pol, const CatRelation *def, SlError *err)
{
    KafkaSink k;
    memset(&k, 0, sizeof(k));
    k.pol = pol;
    arena_init(&k.arena, 1024);
    int rc = read_options(&k, def, NULL, err);
    arena_destroy(&k.arena);
    return rc;
}

int kafka_sink_open(const KafkaPolicy *pol, const CatRelation *sink, const CatRelation *query,
                    KafkaSink **out, SlError *err)
{
    KafkaSink *k = sl_calloc(1, sizeof(KafkaSink));
    k->pol = pol;
    arena_init(&k->arena, 2048);
    if (read_options(k, sink, query, err) < 0) {
        arena_destroy(&k->arena);
        sl_free(k);
        return -1;
    }
    const char *id = opts_get(&k->opts, "transactional_id");
    /* The query's name, oid and creation time: a query dropped and created
     * again under the same name starts a new progress history. */
    k->txn_id = id ? id : arena_printf(&k->arena, "sluice-%s-%u-%lld", query->name, query->oid,
                                       (long long)query->created_at);
    k->sink = sink;
    k->query = query;
    k->committed = -1;
    const char *tt = opts_get(&k->opts, "kafka.transaction.timeout.ms");
    k->txn_timeout_ms = tt != NULL && atoi(tt) > 0 ? atoi(tt) : TXN_TIMEOUT_MS;
    /* Each column's JSON key, quoted once here rather than per row. */
    k->json_names = ARENA_ARRAY(&k->arena, SlStr, query->ncols > 0 ? query->ncols : 1);
    for (int c = 0; c < query->ncols; c++) {
        StrBuf b;
        strbuf_init(&b);
        strbuf_put_json_string(&b, query->cols[c].name, strlen(query->cols[c].name));
        strbuf_puts(&b, ": ");
        k->json_names[c] = (SlStr){arena_memdup(&k->arena, b.data, b.len), (uint32_t)b.len};
        strbuf_free(&b);
    }
    cat_relation_ref(sink);
    cat_relation_ref(query);
    *out = k;
    return 0;
}

/* Destroys the producer and its topic handles. */
static void drop_producer(KafkaSink *k)
{
    if (k->rkt != NULL)
        rd_kafka_topic_destroy(k->rkt);
    if (k->prkt != NULL)
        rd_kafka_topic_destroy(k->prkt);
    if (k->rk != NULL)
        kafka_handle_destroy(k->rk);
    k->rkt = k->prkt = NULL;
    k->rk = NULL;
}

int kafka_sink_key(const KafkaSink *k, const int **cols)
{
    *cols = k->key_cols;
    return k->nkey;
}

void kafka_sink_close(KafkaSink *k)
{
    if (k == NULL)
        return;
    drop_producer(k);
    cat_relation_unref(k->sink);
    cat_relation_unref(k->query);
    arena_destroy(&k->arena);
    sl_free(k);
}

/* ---------------------------------------------------------------------- */
/* Recovery: fence, then read the progress topic back                      */

/* A transaction call's error: transient (08006, the batch is run again
 * with a new producer) when librdkafka calls it retriable or its code is a
 * broker away or a timeout; fatal ones (fenced: another producer took the
 * transactional.id) and the rest fail the query. */
static int txn_error(KafkaSink *k, SlError *err, rd_kafka_error_t *e, const char *what)
{
    /* A commit refused because records failed delivery (an abortable
     * error) is transient when every failure was: the records timed out
     * while the broker was away. */
    bool undelivered_transient = rd_kafka_error_txn_requires_abort(e) &&
                                 k->undelivered == RD_KAFKA_RESP_ERR_NO_ERROR;
    bool again = !rd_kafka_error_is_fatal(e) &&
                 (rd_kafka_error_is_retriable(e) || kafka_transient(rd_kafka_error_code(e)) ||
                  undelivered_transient);
    if (k->undelivered != RD_KAFKA_RESP_ERR_NO_ERROR)
        sl_error(err, ERRCODE_SYSTEM_ERROR, "Kafka sink: %s: %s (a record: %s)", what,
                 rd_kafka_error_string(e), rd_kafka_err2str(k->undelivered));
    else
        sl_error(err, again ? ERRCODE_CONNECTION_FAILURE : ERRCODE_SYSTEM_ERROR,
                 "Kafka sink: %s: %s", what, rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
    return -1;
}

/* A failed delivery (only failures are reported: delivery.report.only.error),
 * served by the flush inside commit_transaction on the batch's thread: the
 * first one that is not transient is kept for txn_error. */
static void delivery_failed(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    KafkaSink *k = m->_private;
    if (k == NULL || m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
        return;
    if (k->undelivered == RD_KAFKA_RESP_ERR_NO_ERROR && !kafka_transient(m->err))
        k->undelivered = m->err;
}

/* Whether the cluster's metadata (every topic's: asking for one topic by
 * name may have the broker create it, uncompacted) lists the progress
 * topic; false when the metadata cannot be read too. */
static bool progress_topic_listed(KafkaSink *k)
{
    const struct rd_kafka_metadata *md = NULL;
    if (rd_kafka_metadata(k->rk, 1, NULL, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return false;
    bool found = false;
    for (int t = 0; t < md->topic_cnt && !found; t++)
        found = md->topics[t].err == 0 && strcmp(md->topics[t].topic, k->progress_topic) == 0;
    rd_kafka_metadata_destroy(md);
    return found;
}

/* Creates the progress topic (compacted, one partition) if it is missing.
 * One the metadata lists is not asked for again: CreateTopics goes to the
 * broker the metadata names as controller, which for a sink not owned by
 * a superuser may be a broker off --kafka-allowed-hosts (resolve_cb
 * refuses it and the request gets no answer). */
static int ensure_progress_topic(KafkaSink *k, SlError *err)
{
    if (progress_topic_listed(k))
        return 0;
    char msg[256];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(k->progress_topic, 1, -1, msg, sizeof(msg));
    if (nt == NULL)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "progress topic: %s", msg);
    rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "compact");
    rd_kafka_queue_t *q = rd_kafka_queue_new(k->rk);
    rd_kafka_CreateTopics(k->rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    int rc = 0;
    if (ev == NULL) {
        rc = sl_error(err, ERRCODE_CONNECTION_FAILURE,
                      "Kafka sink: no answer creating the progress topic \"%s\"",
                      k->progress_topic);
    } else {
        const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
        size_t n = 0;
        const rd_kafka_topic_result_t **trs = res ? rd_kafka_CreateTopics_result_topics(res, &n)
                                                  : NULL;
        rd_kafka_resp_err_t e = rd_kafka_event_error(ev);
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR && n == 1)
            e = rd_kafka_topic_result_error(trs[0]);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
            rc = kafka_error(err, e, "Kafka sink: creating the progress topic");
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return rc;
}

/* The batch a progress record of ours names: true and *batch, or false
 * (another sink's record, a tombstone, a value without a batch). */
static bool our_progress(const KafkaSink *k, const void *key, size_t klen, const void *val,
                         size_t len, int64_t *batch)
{
    if (key == NULL || val == NULL || klen != strlen(k->txn_id) ||
        memcmp(key, k->txn_id, klen) != 0)
        return false;
    char buf[64];
    size_t n = SL_MIN(len, sizeof(buf) - 1);
    memcpy(buf, val, n);
    buf[n] = '\0';
    const char *b = strstr(buf, "\"batch\":");
    if (b == NULL)
        return false;
    *batch = strtoll(b + 8, NULL, 10);
    return true;
}

/* The direct read's view of the transactions: per producer id, the batch
 * its open transaction carries a progress record of ours for. */
typedef struct OpenTxns {
    int64_t *pid, *batch;
    int      n, cap;
} OpenTxns;

static void txn_record(OpenTxns *t, int64_t pid, int64_t batch)
{
    for (int i = 0; i < t->n; i++)
        if (t->pid[i] == pid) {
            t->batch[i] = batch;
            return;
        }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4;
        t->pid = sl_realloc(t->pid, sizeof(int64_t) * (size_t)t->cap);
        t->batch = sl_realloc(t->batch, sizeof(int64_t) * (size_t)t->cap);
    }
    t->pid[t->n] = pid;
    t->batch[t->n++] = batch;
}

/* A marker of pid: a COMMIT makes its batch the committed one. */
static void txn_end(OpenTxns *t, int64_t pid, bool commit, int64_t *committed)
{
    for (int i = 0; i < t->n; i++)
        if (t->pid[i] == pid) {
            if (commit)
                *committed = t->batch[i];
            t->pid[i] = t->pid[t->n - 1];
            t->batch[i] = t->batch[--t->n];
            return;
        }
}

/* Partition 0 of the progress topic: its leader's address (a topic just
 * created may have none for a moment).  0, or -1 with err. */
static int progress_leader(KafkaSink *k, char *host, size_t hostlen, int *port, int32_t *id,
                           SlError *err)
{
    *port = 0;
    for (int tries = 0;; tries++) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t e = rd_kafka_metadata(k->rk, 0, k->prkt, &md, 10000);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
            return kafka_error(err, e, "Kafka sink: the progress topic's metadata");
        *id = -1;
        for (int t = 0; t < md->topic_cnt; t++)
            for (int p = 0; p < md->topics[t].partition_cnt; p++)
                if (md->topics[t].err == 0 && md->topics[t].partitions[p].id == 0)
                    *id = md->topics[t].partitions[p].leader;
        for (int b = 0; b < md->broker_cnt && *id >= 0; b++)
            if (md->brokers[b].id == *id) {
                snprintf(host, hostlen, "%s", md->brokers[b].host);
                *port = md->brokers[b].port;
            }
        rd_kafka_metadata_destroy(md);
        if (*port > 0)
            return 0;
        if (tries == 50)
            return sl_error(err, ERRCODE_CONNECTION_FAILURE,
                            "Kafka sink: the progress topic \"%s\" has no leader",
                            k->progress_topic);
        usleep(200000);
    }
}

/* Reads the progress topic from low to high (its high watermark after the
 * fencing) read_uncommitted with sluice's own Fetch path from its leader
 * (broker at host:port, already checked by read_progress), resolving each
 * transaction by its COMMIT or ABORT marker: a transaction another
 * producer left open does not hold the read back, as it holds back the
 * last stable offset that read_committed stops at.  Every transaction of
 * ours ended before high (init_transactions waits for the markers of the
 * one it aborts), so one still open at high is read on until it ends.
 * 0; -1 with err (08006, the batch is retried); 1 with why: this path
 * cannot read the topic, librdkafka's read is to be used. */
static int read_progress_direct(KafkaSink *k, const char *host, int port, int32_t broker,
                                int64_t low, int64_t high, int64_t *batch, char *why,
                                size_t whylen, SlError *err)
{
    if (high <= low)
        return 0;                           /* nothing on it */
    KfConn *c = kf_connect(host, port, broker, 10000, why, whylen);
    if (c == NULL)
        return 1;
    kf_report_markers(c, true);
    OpenTxns open = {0};
    KfAsk ask = {k->progress_topic, 0, low};
    time_t deadline = time(NULL) + 60;
    int rc = 0;
    while (rc == 0 && (ask.offset < high || open.n > 0)) {
        if (time(NULL) > deadline) {
            rc = sl_error(err, ERRCODE_CONNECTION_FAILURE,
                          "Kafka sink: timed out reading the progress topic \"%s\"",
                          k->progress_topic);
            break;
        }
        if (kf_fetch(c, &ask, 1, false, 200, 30000, why, whylen) < 0) {
            rc = 1;
            break;
        }
        KfAskInfo info;
        kf_ask_info(c, 0, &info);
        if (info.error != 0) {
            rc = kafka_error(err, (rd_kafka_resp_err_t)info.error,
                             "Kafka sink: reading the progress topic");
            break;
        }
        /* No batch at or past the offset asked for below the high
         * watermark: compaction removed what was there. */
        if (!info.had_batches && ask.offset < info.high)
            ask.offset = info.high;
        KfRecord r;
        int n;
        while ((n = kf_next(c, &r, why, whylen)) > 0) {
            int64_t b;
            if (n == 2)
                ask.offset = r.offset;
            else if (n == 3)
                txn_end(&open, r.pid, r.commit, batch);
            else if (our_progress(k, r.key, r.key_len, r.value, r.len, &b)) {
                if (r.transactional)
                    txn_record(&open, r.pid, b);
                else
                    *batch = b;
            }
        }
        if (n < 0)
            rc = 1;
    }
    kf_conn_close(c);
    sl_free(open.pid);
    sl_free(open.batch);
    return rc;
}

/* A consumer of the progress topic with the sink's settings: read_committed
 * to read it, read_uncommitted to ask for its high watermark (a
 * read_committed ListOffsets answers with the last stable offset). */
static rd_kafka_t *progress_consumer(KafkaSink *k, bool committed, SlError *err)
{
    const char *defaults[] = {
        "group.id", "sluice-progress-reader",
        "isolation.level", committed ? "read_committed" : "read_uncommitted",
        "enable.auto.commit", "false", "enable.partition.eof", "true",
        "auto.offset.reset", "earliest", NULL,
    };
    rd_kafka_conf_t *conf;
    if (kafka_conf_build(k->pol, &k->opts, k->sink->name, k->sink->owner, defaults, &conf,
                         err) < 0)
        return NULL;
    /* The user's transactional.id is not a consumer's setting. */
    char msg[512];
    rd_kafka_t *c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, msg, sizeof(msg));
    if (c == NULL) {
        kafka_conf_discard(conf, k->pol);
        sl_error(err, ERRCODE_SYSTEM_ERROR, "Kafka sink: %s", msg);
    }
    return c;
}

/* The progress topic's log start and high watermark. */
static int progress_watermarks(KafkaSink *k, int64_t *low, int64_t *high, SlError *err)
{
    rd_kafka_t *c = progress_consumer(k, false, err);
    if (c == NULL)
        return -1;
    rd_kafka_resp_err_t e =
        rd_kafka_query_watermark_offsets(c, k->progress_topic, 0, low, high, 30000);
    kafka_handle_destroy(c);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
        return kafka_error(err, e, "Kafka sink: reading the progress topic");
    return 0;
}

/* The same with librdkafka's consumer (TLS, SASL, fetch = 'librdkafka', or
 * a topic the direct path cannot read), read_committed: it stops at the
 * last stable offset, which an open transaction of any producer holds
 * back, so the read goes on until that offset reaches high (the open
 * transactions end: committed, aborted, or timed out by the broker). */
static int read_progress_rdk(KafkaSink *k, int64_t low, int64_t high, int64_t *batch,
                             SlError *err)
{
    rd_kafka_t *c = progress_consumer(k, true, err);
    if (c == NULL)
        return -1;
    int rc = 0;
    if (high > low) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, k->progress_topic, 0)->offset = low;
        rd_kafka_assign(c, l);
        rd_kafka_topic_partition_list_destroy(l);
        /* The longest wait: a foreign transaction open at the fence lasts
         * at most its transaction.timeout.ms (60 s unless set). */
        time_t deadline = time(NULL) + SL_MAX(60, 2 * k->txn_timeout_ms / 1000);
        bool held = false;
        for (;;) {
            if (time(NULL) > deadline) {
                rc = sl_error(err, ERRCODE_CONNECTION_FAILURE,
                              "Kafka sink: timed out reading the progress topic \"%s\"",
                              k->progress_topic);
                if (held)
                    sl_error_hint(err, "A transaction another producer left open holds "
                                       "read_committed back; it ends when that producer "
                                       "commits or its transaction.timeout.ms passes.");
                break;
            }
            rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 200);
            if (m == NULL)
                continue;
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                int64_t at = m->offset;
                rd_kafka_message_destroy(m);
                if (at >= high)
                    break;
                if (!held)
                    sl_log(LOG_INFO, "kafka sink: progress topic held back by an open "
                           "transaction, waiting", "sink=%s stable=%" PRId64
                           " high=%" PRId64, log_value(k->sink->name), at, high);
                held = true;
                continue;
            }
            if (m->err) {
                rc = kafka_error(err, m->err, "Kafka sink: reading the progress topic");
                rd_kafka_message_destroy(m);
                break;
            }
            our_progress(k, m->key, m->key_len, m->payload, m->len, batch);
            rd_kafka_message_destroy(m);
        }
    }
    kafka_handle_destroy(c);
    return rc;
}

/* The batch id of the last progress record of ours whose transaction
 * committed: -1 when there is none. */
static int read_progress(KafkaSink *k, int64_t *batch, SlError *err)
{
    *batch = -1;
    /* The leader as the metadata names it, checked first, as librdkafka's
     * resolve_cb checks every broker its clients connect to: the
     * watermarks' request and either read go to it, and a refusal by
     * resolve_cb would surface as some other error, or as none. */
    char host[256];
    int port = 0;
    int32_t broker = -1;
    if (progress_leader(k, host, sizeof(host), &port, &broker, err) < 0)
        return -1;
    if (!kafka_broker_allowed(k->pol, k->sink->owner, host, port)) {
        sl_log(LOG_WARN, "kafka broker refused", "address=\"%s:%d\" reason=\"%s\"",
               log_quote(host), port, "not on --kafka-allowed-hosts");
        sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                 "permission denied to connect \"%s\" to Kafka broker \"%s:%d\"",
                 k->sink->name, host, port);
        sl_error_hint(err, "That broker leads the progress topic \"%s\" and is not on "
                           "--kafka-allowed-hosts, which a sink not owned by a superuser "
                           "must reach its brokers through.", k->progress_topic);
        return -1;
    }
    int64_t low, high;
    if (progress_watermarks(k, &low, &high, err) < 0)
        return -1;
    if (k->direct) {
        char why[256] = "";
        int rc = read_progress_direct(k, host, port, broker, low, high, batch, why,
                                      sizeof(why), err);
        if (rc <= 0)
            return rc;
        sl_log(LOG_WARN, "kafka sink: the progress topic is read by librdkafka",
               "sink=%s reason=\"%s\"", log_value(k->sink->name), log_quote(why));
        *batch = -1;
    }
    return read_progress_rdk(k, low, high, batch, err);
}

/* The producer, fenced and with the committed batch known. */
static int ensure_producer(KafkaSink *k, SlError *err)
{
    if (k->rk != NULL)
        return 0;
    const char *defaults[] = {
        "transactional.id", k->txn_id, "enable.idempotence", "true",
        "transaction.timeout.ms", "60000", "linger.ms", "5", "client.id", "sluice",
        "delivery.report.only.error", "true", NULL,
    };
    rd_kafka_conf_t *conf;
    if (kafka_conf_build(k->pol, &k->opts, k->sink->name, k->sink->owner, defaults, &conf,
                         err) < 0)
        return -1;
    rd_kafka_conf_set_dr_msg_cb(conf, delivery_failed);
    char msg[512];
    k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, msg, sizeof(msg));
    if (k->rk == NULL) {
        kafka_conf_discard(conf, k->pol);
        return sl_error(err, ERRCODE_SYSTEM_ERROR, "Kafka sink: %s", msg);
    }
    rd_kafka_error_t *e = rd_kafka_init_transactions(k->rk, k->txn_timeout_ms);
    int rc = 0;
    if (e != NULL)
        rc = txn_error(k, err, e, "init_transactions");
    if (rc == 0)
        rc = ensure_progress_topic(k, err);
    /* Topic handles: a record names its topic by handle, not by a name
     * looked up under librdkafka's handle lock. */
    if (rc == 0 && ((k->rkt = rd_kafka_topic_new(k->rk, k->topic, NULL)) == NULL ||
                    (k->prkt = rd_kafka_topic_new(k->rk, k->progress_topic, NULL)) == NULL))
        rc = kafka_error(err, rd_kafka_last_error(), "Kafka sink: topic handle");
    if (rc == 0)
        rc = read_progress(k, &k->committed, err);
    if (rc < 0) {
        drop_producer(k);
        return -1;
    }
    sl_log(LOG_INFO, "kafka sink ready", "sink=%s transactional_id=%s committed_batch=%" PRId64,
           log_value(k->sink->name), k->txn_id, k->committed);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Encoding                                                                */

static void json_value(StrBuf *b, const Vector *v, uint32_t i, StrBuf *tmp)
{
    if (vector_is_null(v, i)) {
        strbuf_puts(b, "null");
        return;
    }
    switch (v->type.id) {
    case TYPE_BOOL:
        strbuf_puts(b, v->v.b[i] ? "true" : "false");
        return;
    case TYPE_INT2:
        strbuf_put_int(b, v->v.i16[i]);
        return;
    case TYPE_INT4:
        strbuf_put_int(b, v->v.i32[i]);
        return;
    case TYPE_INT8:
        strbuf_put_int(b, v->v.i64[i]);
        return;
    case TYPE_TEXT:
    case TYPE_VARCHAR:
        strbuf_put_json_string(b, v->v.str[i].ptr, v->v.str[i].len);
        return;
    case TYPE_DATE:
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        /* digits, '-', ':', '.', '+', ' ', "BC", "infinity": nothing to escape */
        strbuf_putc(b, '"');
        value_format_text(v, i, b);
        strbuf_putc(b, '"');
        return;
    case TYPE_NUMERIC:
    case TYPE_FLOAT4:
    case TYPE_FLOAT8:
        strbuf_reset(tmp);
        value_format_text(v, i, tmp);
        if (tmp->len > 0 && (tmp->data[0] == '-' || (tmp->data[0] >= '0' && tmp->data[0] <= '9')))
            strbuf_append(b, tmp->data, tmp->len);
        else
            strbuf_put_json_string(b, tmp->data, tmp->len);      /* NaN, Infinity */
        return;
    case TYPE_JSONB:
        strbuf_append(b, v->v.str[i].ptr, v->v.str[i].len);
        return;
    default:
        strbuf_reset(tmp);
        value_format_text(v, i, tmp);
        strbuf_put_json_string(b, tmp->data, tmp->len);
        return;
    }
}

static void csv_value(StrBuf *b, const Vector *v, uint32_t i, StrBuf *tmp)
{
    if (vector_is_null(v, i))
        return;
    strbuf_reset(tmp);
    value_format_text(v, i, tmp);
    bool quote = tmp->len == 0 || memchr(tmp->data, ',', tmp->len) ||
                 memchr(tmp->data, '"', tmp->len) || memchr(tmp->data, '\n', tmp->len) ||
                 memchr(tmp->data, '\r', tmp->len);
    if (!quote) {
        strbuf_append(b, tmp->data, tmp->len);
        return;
    }
    strbuf_putc(b, '"');
    for (size_t k = 0; k < tmp->len; k++) {
        if (tmp->data[k] == '"')
            strbuf_putc(b, '"');
        strbuf_putc(b, tmp->data[k]);
    }
    strbuf_putc(b, '"');
}

/* Row i of batch as a record value (all columns) or key (cols). */
static void encode(KafkaSink *k, const Batch *batch, uint32_t i, const int *cols, int ncols,
                   StrBuf *out, StrBuf *tmp)
{
    strbuf_reset(out);
    if (k->format == SF_JSON)
        strbuf_putc(out, '{');
    for (int n = 0; n < ncols; n++) {
        int c = cols ? cols[n] : n;
        if (n > 0)
            strbuf_puts(out, k->format == SF_JSON ? ", " : ",");
        if (k->format == SF_JSON) {
            strbuf_append(out, k->json_names[c].ptr, k->json_names[c].len);
            json_value(out, &batch->cols[c], i, tmp);
        } else {
            csv_value(out, &batch->cols[c], i, tmp);
        }
    }
    if (k->format == SF_JSON)
        strbuf_putc(out, '}');
}

/* Produces one record, waiting while librdkafka's queue is full. */
static int produce(KafkaSink *k, rd_kafka_topic_t *rkt, const StrBuf *key, const StrBuf *val,
                   SlError *err)
{
    for (;;) {
        rd_kafka_resp_err_t e = rd_kafka_producev(
            k->rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_KEY(key ? key->data : NULL, key ? key->len : 0),
            RD_KAFKA_V_VALUE(val ? val->data : NULL, val ? val->len : 0), RD_KAFKA_V_OPAQUE(k),
            RD_KAFKA_V_END);
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
            return 0;
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            return kafka_error(err, e, "Kafka sink: produce");
        rd_kafka_poll(k->rk, 50);
    }
}

int kafka_sink_write(KafkaSink *k, int64_t batch_id, const Batch *const *rows, int nb,
                     const Batch *const *dels, int ndel, SlError *err)
{
    if (ensure_producer(k, err) < 0)
        return -1;
    if (batch_id <= k->committed) {
        sl_log(LOG_INFO, "kafka sink: batch already committed, skipped",
               "sink=%s batch=%" PRId64, log_value(k->sink->name), batch_id);
        return 0;
    }
    k->undelivered = RD_KAFKA_RESP_ERR_NO_ERROR;
    rd_kafka_error_t *e = rd_kafka_begin_transaction(k->rk);
    if (e != NULL) {
        txn_error(k, err, e, "begin_transaction");
        goto fail;
    }
    StrBuf key, val, tmp;
    strbuf_init(&key);
    strbuf_init(&val);
    strbuf_init(&tmp);
    int rc = 0;
    /* Tombstones first: a key that also has a new row (a session whose
     * other end moved) ends with that row, in the partition's order. */
    for (int n = 0; n < ndel && rc == 0 && k->nkey > 0; n++) {
        for (uint32_t i = 0; i < dels[n]->nrows && rc == 0; i++) {
            encode(k, dels[n], i, k->key_cols, k->nkey, &key, &tmp);
            rc = produce(k, k->rkt, &key, NULL, err);
        }
    }
    for (int n = 0; n < nb && rc == 0; n++) {
        for (uint32_t i = 0; i < rows[n]->nrows && rc == 0; i++) {
            if (k->nkey > 0)
                encode(k, rows[n], i, k->key_cols, k->nkey, &key, &tmp);
            encode(k, rows[n], i, NULL, k->query->ncols, &val, &tmp);
            rc = produce(k, k->rkt, k->nkey > 0 ? &key : NULL, &val, err);
        }
    }
    if (rc == 0) {
        strbuf_reset(&key);
        strbuf_puts(&key, k->txn_id);
        strbuf_reset(&val);
        strbuf_printf(&val, "{\"batch\": %" PRId64 ", \"topic\": \"%s\"}", batch_id, k->topic);
        rc = produce(k, k->prkt, &key, &val, err);
    }
    strbuf_free(&key);
    strbuf_free(&val);
    strbuf_free(&tmp);
    if (rc < 0)
        goto fail;
    SLUICE_FAULT("kafka_sink_before_commit");
    e = rd_kafka_commit_transaction(k->rk, k->txn_timeout_ms);
    if (e != NULL) {
        txn_error(k, err, e, "commit_transaction");
        goto fail;
    }
    SLUICE_FAULT("kafka_sink_after_commit");
    k->committed = batch_id;
    return 1;
fail:
    /* Start over at the next try: a new producer fences this one, aborts
     * what it left open, and reads the progress topic again. */
    drop_producer(k);
    return -1;
}
