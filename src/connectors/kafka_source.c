/*
 * kafka_source.c -- Kafka topics as the rows of a stream (see kafka.h).
 *
 *   kafka_source_validate, kafka_source_open, kafka_source_close
 *   kafka_source_plan, kafka_source_commit, kafka_source_latest
 *   kafka_source_topic, kafka_source_topic_index
 *   kafka_poller_start, kafka_messages_destroy, kafka_wall_us (kafka_source_int.h)
 *
 * One consumer handle per query's source.  A poller thread, started by the
 * first plan, owns the handle's life: it creates it, looks at the topics'
 * partitions and watermarks every POLL_MS (one metadata request, one
 * ListOffsets per partition; the request waits 1 s until a first one was
 * answered, then 5 s) into a snapshot under a mutex, and commits the
 * positions of committed batches to the consumer group.  Close never waits
 * on the broker: it waits for the poller only when it is not inside a
 * request (begin_call/end_call); otherwise the poller is left to end when
 * its request returns and frees the source itself (source_free, which
 * destroys the handle within close_timeout).  Planning reads only the
 * snapshot, so the loop never waits on the network.
 *
 * A batch's reader (kafka_reader.c) reads the records of its ranges with
 * sluice's own Fetch requests or, as the fallback, with this handle; the
 * source keeps for it the direct path's idle connections and what the
 * librdkafka reader leaves to the next one.
 */
#include "kafka_source_int.h"

#include "sluice/exec.h"
#include "sluice/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Destroys messages [from, n) of m. */
void kafka_messages_destroy(rd_kafka_message_t **m, int from, int n)
{
    for (int i = from; i < n; i++)
        rd_kafka_message_destroy(m[i]);
}

int64_t kafka_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */

static KMeta meta_kind(const char *name)
{
    if (strcmp(name, KAFKA_META_KEY) == 0)
        return KM_KEY;
    if (strcmp(name, KAFKA_META_PARTITION) == 0)
        return KM_PARTITION;
    if (strcmp(name, KAFKA_META_OFFSET) == 0)
        return KM_OFFSET;
    if (strcmp(name, KAFKA_META_TIMESTAMP) == 0)
        return KM_TIMESTAMP;
    if (strcmp(name, KAFKA_META_HEADERS) == 0)
        return KM_HEADERS;
    return KM_NONE;
}

static bool meta_type_ok(KMeta m, SlTypeId t)
{
    switch (m) {
    case KM_KEY:       return t == TYPE_TEXT || t == TYPE_VARCHAR || t == TYPE_BYTEA;
    case KM_PARTITION: return t == TYPE_INT4 || t == TYPE_INT8;
    case KM_OFFSET:    return t == TYPE_INT8;
    case KM_TIMESTAMP: return t == TYPE_TIMESTAMPTZ || t == TYPE_TIMESTAMP;
    case KM_HEADERS:   return t == TYPE_JSONB || t == TYPE_TEXT;
    case KM_NONE:      return true;
    }
    return false;
}

static const char *const meta_types[] = {
    [KM_KEY] = "text or bytea", [KM_PARTITION] = "integer or bigint",
    [KM_OFFSET] = "bigint", [KM_TIMESTAMP] = "timestamp with time zone or timestamp",
    [KM_HEADERS] = "jsonb or text",
};

static bool valid_topic(const char *t)
{
    if (*t == '\0' || strlen(t) > 249)
        return false;
    for (const char *p = t; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

static int add_topic(KafkaSource *ks, const char *name)
{
    for (int i = 0; i < ks->ntopics; i++)
        if (strcmp(ks->topics[i], name) == 0)
            return i;
    if (ks->ntopics == MAX_TOPICS)
        return -1;
    ks->topics[ks->ntopics] = arena_strdup(&ks->arena, name);
    return ks->ntopics++;
}

/* starting_offsets as a JSON map {"topic": {"0": 23, "1": -2}, ...}. */
static int parse_start_map(KafkaSource *ks, const char *json, SlError *err)
{
    const char *p = json;
    int cap = 16;
    ks->start_map = ARENA_ARRAY(&ks->arena, StartAt, cap);
    while (*p == ' ' || *p == '{')
        p++;
    while (*p != '\0' && *p != '}') {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p != '"')
            goto bad;
        const char *t = ++p;
        while (*p && *p != '"')
            p++;
        if (*p != '"')
            goto bad;
        char *topic = arena_strndup(&ks->arena, t, (size_t)(p - t));
        p++;
        while (*p == ' ' || *p == ':')
            p++;
        if (*p != '{')
            goto bad;
        p++;
        for (;;) {
            while (*p == ' ' || *p == ',')
                p++;
            if (*p == '}') {
                p++;
                break;
            }
            if (*p != '"')
                goto bad;
            char *e;
            long part = strtol(p + 1, &e, 10);
            if (e == p + 1 || *e != '"')
                goto bad;
            p = e + 1;
            while (*p == ' ' || *p == ':')
                p++;
            long long off = strtoll(p, &e, 10);
            if (e == p || off < -2)
                goto bad;
            p = e;
            if (ks->nstart_map == cap) {
                StartAt *more = ARENA_ARRAY(&ks->arena, StartAt, cap * 2);
                memcpy(more, ks->start_map, sizeof(StartAt) * (size_t)cap);
                ks->start_map = more;
                cap *= 2;
            }
            int ti = add_topic(ks, topic);
            if (ti < 0)
                goto bad;
            ks->start_map[ks->nstart_map++] = (StartAt){ti, (int32_t)part, off};
        }
        while (*p == ' ')
            p++;
    }
    return 0;
bad:
    sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid starting_offsets: %s", json);
    sl_error_hint(err, "Use 'earliest', 'latest' or a JSON map such as "
                       "'{\"bids\": {\"0\": 42, \"1\": -2}}' (-2 earliest, -1 latest).");
    return -1;
}

/* fetch = 'direct' (the default) or 'librdkafka', and whether the direct
 * path can serve: not with security settings (TLS, SASL), which only
 * librdkafka speaks.  isolation.level as librdkafka reads it. */
static int read_fetch_options(KafkaSource *ks, SlError *err)
{
    const Options *o = &ks->opts;
    if (kafka_fetch_choice(o, &ks->direct, err) < 0)
        return -1;
    const char *iso = opts_get(o, "kafka.isolation.level");
    ks->read_committed = iso == NULL || strcmp(iso, "read_uncommitted") != 0;
    return 0;
}

/* Reads the options of rel into ks (no I/O).  ks->arena must be set up. */
static int read_options(KafkaSource *ks, const CatRelation *rel, SlError *err)
{
    Options *o = &ks->opts;
    if (opts_parse(&ks->arena, rel->options, o, err) < 0)
        return -1;
    const char *topic = opts_get(o, "topic"), *topics = opts_get(o, "topics"),
               *pattern = opts_get(o, "topic_pattern");
    int given = (topic != NULL) + (topics != NULL) + (pattern != NULL);
    if (given != 1) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 given ? "a Kafka stream takes only one of topic, topics and topic_pattern"
                       : "Kafka stream \"%s\" needs a topic", rel->name);
        sl_error_hint(err, "Add topic = 'name', topics = 'a,b' or topic_pattern = 'regex'.");
        return -1;
    }
    if (pattern != NULL) {
        if (ex_regex_has_backref(pattern, strlen(pattern))) {
            /* they may backtrack exponentially, in the poller's thread,
             * beyond any statement's interrupt */
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "invalid topic_pattern \"%s\": back references are not supported",
                     pattern);
            sl_error_hint(err, "Name the topics with topics = 'a,b' or a pattern without "
                               "\\1 to \\9.");
            return -1;
        }
        SlError why = {0};
        ks->re = ex_regex_compile(&why, pattern, strlen(pattern), NULL, 0, false, true);
        if (ks->re == NULL) {
            sl_error(err, why.sqlstate, "invalid topic_pattern \"%s\": %s", pattern,
                     why.message);
            sl_error_clear(&why);
            return -1;
        }
        ks->pattern = true;
    } else {
        char *list = arena_strdup(&ks->arena, topic ? topic : topics);
        for (char *save = NULL, *t = strtok_r(list, ", ", &save); t;
             t = strtok_r(NULL, ", ", &save)) {
            if (!valid_topic(t))
                return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                                "invalid Kafka topic name \"%s\"", t);
            if (add_topic(ks, t) < 0)
                return sl_error(err, ERRCODE_PROGRAM_LIMIT_EXCEEDED, "too many topics");
        }
        ks->nnamed = ks->ntopics;
        if (ks->nnamed == 0)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "no topic given");
    }
    const char *fmt = opts_get(o, "format");
    if (fmt == NULL || strcmp(fmt, "json") == 0)
        ks->format = KF_JSON;
    else if (strcmp(fmt, "csv") == 0)
        ks->format = KF_CSV;
    else if (strcmp(fmt, "raw") == 0)
        ks->format = KF_RAW;
    else {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid format \"%s\" for Kafka", fmt);
        sl_error_hint(err, "Use 'json', 'csv' or 'raw'.");
        return -1;
    }
    const char *so = opts_get(o, "starting_offsets");
    if (so == NULL || strcmp(so, "earliest") == 0)
        ks->start = KS_EARLIEST;
    else if (strcmp(so, "latest") == 0)
        ks->start = KS_LATEST;
    else {
        ks->start = KS_MAP;
        if (parse_start_map(ks, so, err) < 0)
            return -1;
    }
    int64_t mo;
    if (opts_get_bool(o, "fail_on_data_loss", true, &ks->fail_on_data_loss, err) < 0 ||
        opts_get_interval_us(o, "read_timeout", 60000000, &ks->read_timeout_us, err) < 0 ||
        opts_get_interval_us(o, "close_timeout", DESTROY_WAIT_MS * 1000, &ks->close_timeout_us,
                             err) < 0 ||
        opts_get_int(o, "max_offsets_per_trigger", 0, &mo, err) < 0)
        return -1;
    if (mo < 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "max_offsets_per_trigger must not be negative");
    if (ks->read_timeout_us <= 0 || ks->close_timeout_us < 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        ks->read_timeout_us <= 0 ? "read_timeout must be positive"
                                                 : "close_timeout must not be negative");
    if (read_fetch_options(ks, err) < 0)
        return -1;
    /* Columns: metadata by name, the rest from the value. */
    int n = rel->ncols;
    ks->meta = ARENA_ARRAY(&ks->arena, KMeta, n);
    ks->payload_col = ARENA_ARRAY(&ks->arena, int, n);
    ks->payload_types = ARENA_ARRAY(&ks->arena, SlType, n);
    const char **names = ARENA_ARRAY(&ks->arena, const char *, n);
    int np = 0;
    for (int c = 0; c < n; c++) {
        const CatColumn *col = &rel->cols[c];
        ks->meta[c] = meta_kind(col->name);
        ks->payload_col[c] = -1;
        if (ks->meta[c] != KM_NONE) {
            if (!meta_type_ok(ks->meta[c], col->type.id))
                return sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                                "metadata column \"%s\" must be of type %s, not %s", col->name,
                                meta_types[ks->meta[c]], type_name(col->type.id));
            continue;
        }
        ks->payload_col[c] = np;
        ks->payload_types[np] = col->type;
        names[np++] = col->name;
    }
    if (ks->format == KF_RAW && (np != 1 || (ks->payload_types[0].id != TYPE_TEXT &&
                                             ks->payload_types[0].id != TYPE_BYTEA &&
                                             ks->payload_types[0].id != TYPE_VARCHAR)))
        return sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                        "format 'raw' needs exactly one column of type text or bytea besides "
                        "the metadata columns");
    fmt_spec_init(&ks->spec, &ks->arena, np, names, ks->payload_types, NULL);
    const char *delim = opts_get(o, "delimiter");
    if (delim != NULL) {
        if (strlen(delim) != 1)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "delimiter must be a single character");
        ks->spec.delimiter = delim[0];
    }
    const char *defaults[] = {NULL};
    rd_kafka_conf_t *conf;
    if (kafka_conf_build(ks->pol, o, rel->name, rel->owner, defaults, &conf, err) < 0)
        return -1;
    kafka_conf_discard(conf, ks->pol);
    return 0;
}

int kafka_source_validate(const KafkaPolicy *pol, const CatRelation *def, SlError *err)
{
    KafkaSource ks;
    memset(&ks, 0, sizeof(ks));
    ks.pol = pol;
    arena_init(&ks.arena, 2048);
    int rc = read_options(&ks, def, err);
    ex_regex_free(ks.re);
    arena_destroy(&ks.arena);
    return rc;
}

int kafka_source_open(const KafkaPolicy *pol, StateStore *st, const CatRelation *rel,
                      const char *owner, const CatRelation *dead, KafkaSource **out,
                      SlError *err)
{
    KafkaSource *ks = sl_calloc(1, sizeof(KafkaSource));
    ks->pol = pol;
    arena_init(&ks->arena, 4096);
    if (read_options(ks, rel, err) < 0) {
        ex_regex_free(ks->re);
        arena_destroy(&ks->arena);
        sl_free(ks);
        return -1;
    }
    ks->rel = rel;
    ks->st = st;
    ks->dead = dead;
    cat_relation_ref(rel);
    if (dead != NULL)
        cat_relation_ref(dead);
    const char *g = opts_get(&ks->opts, "kafka.group.id");
    ks->group = g ? sl_strdup(g) : sl_strdup(arena_printf(&ks->arena, "sluice-%s", owner));
    pthread_mutex_init(&ks->mu, NULL);
    pthread_cond_init(&ks->cond, NULL);
    *out = ks;
    return 0;
}

const char *kafka_source_topic(KafkaSource *ks, int32_t topic)
{
    pthread_mutex_lock(&ks->mu);
    const char *t = topic >= 0 && topic < ks->ntopics ? ks->topics[topic] : NULL;
    pthread_mutex_unlock(&ks->mu);
    return t;
}

int32_t kafka_source_topic_index(KafkaSource *ks, const char *name)
{
    pthread_mutex_lock(&ks->mu);
    int i = add_topic(ks, name);
    pthread_mutex_unlock(&ks->mu);
    return i;
}

/* ---------------------------------------------------------------------- */
/* The poller                                                              */

static void set_error(KafkaSource *ks, const char *state, const char *msg)
{
    sl_free(ks->error);
    ks->error = msg ? sl_strdup(msg) : NULL;
    ks->error_state = state;
}

static void free_brokers(KafkaSource *ks)
{
    for (int b = 0; b < ks->nbrokers; b++)
        sl_free(ks->brokers[b].host);
    sl_free(ks->brokers);
    ks->brokers = NULL;
    ks->nbrokers = 0;
}

/* A fresh consumer handle, or NULL with the reason in ks->error. */
static rd_kafka_t *make_consumer(KafkaSource *ks)
{
    SlError err = {0};
    const char *defaults[] = {
        "group.id", ks->group, "enable.auto.commit", "false",
        "enable.auto.offset.store", "false", "enable.partition.eof", "true",
        "auto.offset.reset", "error", "client.id", "sluice", NULL,
    };
    rd_kafka_conf_t *conf;
    if (kafka_conf_build(ks->pol, &ks->opts, ks->rel->name, ks->rel->owner, defaults, &conf,
                         &err) < 0) {
        pthread_mutex_lock(&ks->mu);
        set_error(ks,
                  strcmp(err.sqlstate, ERRCODE_INSUFFICIENT_PRIVILEGE) == 0
                      ? ERRCODE_INSUFFICIENT_PRIVILEGE
                      : ERRCODE_INVALID_PARAMETER_VALUE,
                  err.message);
        pthread_mutex_unlock(&ks->mu);
        sl_error_clear(&err);
        return NULL;
    }
    char msg[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, msg, sizeof(msg));
    if (rk == NULL) {
        kafka_conf_discard(conf, ks->pol);
        pthread_mutex_lock(&ks->mu);
        set_error(ks, ERRCODE_SYSTEM_ERROR, msg);
        pthread_mutex_unlock(&ks->mu);
        return NULL;
    }
    rd_kafka_poll_set_consumer(rk);
    return rk;
}

/* One look at the topics: partitions and watermarks into the snapshot.
 * Until one look has succeeded, the metadata request waits FIRST_LOOK_MS
 * rather than METADATA_MS (and is asked again POLL_MS later): a SELECT's
 * close joins this thread, so a cancelled SELECT against a broker that does
 * not answer would wait out the whole request. */
/* Whether topic matches topic_pattern (a match past PCRE2's bound does
 * not). */
static bool topic_matches(KafkaSource *ks, const char *topic)
{
    SlError err = {0};
    bool yes = ex_regex_test(&err, ks->re, topic, strlen(topic)) == 1;
    sl_error_clear(&err);
    return yes;
}

/* The poller enters (begin_call) and leaves (end_call) each request that
 * waits on the broker.  Neither lets it go on once the source is stopping:
 * close does not wait for a poller inside a request (see
 * kafka_source_close), so a request is never started after close and the
 * poller ends as soon as the one it is in returns. */
static bool begin_call(KafkaSource *ks)
{
    pthread_mutex_lock(&ks->mu);
    bool go = !ks->stop;
    ks->busy = go;
    if (go)
        pthread_cond_broadcast(&ks->cond);
    pthread_mutex_unlock(&ks->mu);
    return go;
}

static bool end_call(KafkaSource *ks)
{
    pthread_mutex_lock(&ks->mu);
    ks->busy = false;
    bool go = !ks->stop;
    pthread_mutex_unlock(&ks->mu);
    return go;
}

static void look(KafkaSource *ks)
{
    const struct rd_kafka_metadata *md = NULL;
    if (!begin_call(ks))
        return;
    rd_kafka_resp_err_t e = rd_kafka_metadata(ks->rk, 1, NULL, &md,
                                              ks->poll_us > 0 ? METADATA_MS : FIRST_LOOK_MS);
    if (!end_call(ks)) {
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
            rd_kafka_metadata_destroy(md);
        return;
    }
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        /* The broker is away: keep the last snapshot, say why. */
        sl_log(LOG_WARN, "kafka metadata request failed", "stream=%s error=\"%s\"",
               log_value(ks->rel->name), log_quote(rd_kafka_err2str(e)));
        return;
    }
    SnapPart *parts = NULL;
    int n = 0, cap = 0;
    char *error = NULL;
    const char *state = NULL;
    /* Named topics must exist; a pattern takes what matches now. */
    for (int i = 0; i < md->topic_cnt; i++) {
        rd_kafka_resp_err_t te = md->topics[i].err;
        bool ours = ks->pattern && topic_matches(ks, md->topics[i].topic);
        for (int t = 0; t < ks->nnamed; t++)
            ours |= strcmp(md->topics[i].topic, ks->topics[t]) == 0;
        if (ours && te != RD_KAFKA_RESP_ERR_NO_ERROR &&
            te != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
            /* A topic being created or moved (no leader yet): look again later. */
            rd_kafka_metadata_destroy(md);
            return;
        }
    }
    for (int t = 0; t < ks->nnamed && error == NULL; t++) {
        bool found = false;
        for (int i = 0; i < md->topic_cnt; i++)
            found |= strcmp(md->topics[i].topic, ks->topics[t]) == 0 &&
                     md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR;
        if (!found && ks->fail_on_data_loss) {
            StrBuf b;
            strbuf_init(&b);
            strbuf_printf(&b, "Kafka topic \"%s\" of stream \"%s\" does not exist (was it "
                          "deleted?)", ks->topics[t], ks->rel->name);
            error = strbuf_steal(&b, NULL);
            state = ERRCODE_UNDEFINED_OBJECT;
        }
    }
    for (int i = 0; i < md->topic_cnt && error == NULL; i++) {
        const struct rd_kafka_metadata_topic *mt = &md->topics[i];
        if (mt->err != RD_KAFKA_RESP_ERR_NO_ERROR)
            continue;
        int ti = -1;
        pthread_mutex_lock(&ks->mu);
        for (int t = 0; t < ks->ntopics; t++)
            if (strcmp(ks->topics[t], mt->topic) == 0 && (t < ks->nnamed || ks->pattern))
                ti = t;
        if (ti < 0 && ks->pattern && mt->topic[0] != '_' &&
            topic_matches(ks, mt->topic))
            ti = add_topic(ks, mt->topic);
        pthread_mutex_unlock(&ks->mu);
        if (ti < 0)
            continue;
        for (int k = 0; k < mt->partition_cnt; k++) {
            int64_t low, high;
            int32_t pid = mt->partitions[k].id;
            if (!begin_call(ks)) {
                sl_free(parts);
                rd_kafka_metadata_destroy(md);
                return;
            }
            e = rd_kafka_query_watermark_offsets(ks->rk, mt->topic, pid, &low, &high, 5000);
            if (!end_call(ks)) {
                sl_free(parts);
                rd_kafka_metadata_destroy(md);
                return;
            }
            if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
                sl_log(LOG_WARN, "kafka watermark request failed",
                       "stream=%s topic=%s partition=%d error=\"%s\"", log_value(ks->rel->name),
                       mt->topic, pid, log_quote(rd_kafka_err2str(e)));
                sl_free(parts);
                rd_kafka_metadata_destroy(md);
                return;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                parts = sl_realloc(parts, sizeof(SnapPart) * (size_t)cap);
            }
            parts[n++] = (SnapPart){ti, pid, low, high, mt->partitions[k].leader};
        }
    }
    SnapBroker *brokers = sl_calloc((size_t)(md->broker_cnt ? md->broker_cnt : 1),
                                    sizeof(SnapBroker));
    for (int b = 0; b < md->broker_cnt; b++)
        brokers[b] = (SnapBroker){md->brokers[b].id, md->brokers[b].port,
                                  sl_strdup(md->brokers[b].host)};
    int nbrokers = md->broker_cnt;
    rd_kafka_metadata_destroy(md);
    pthread_mutex_lock(&ks->mu);
    sl_free(ks->snap);
    ks->snap = parts;
    ks->nsnap = n;
    ks->capsnap = cap;
    free_brokers(ks);
    ks->brokers = brokers;
    ks->nbrokers = nbrokers;
    set_error(ks, state, error);
    ks->poll_us = kafka_wall_us();
    ks->ready = true;
    pthread_mutex_unlock(&ks->mu);
    sl_free(error);
}

/* Commits pending positions to the consumer group (for lag tools only:
 * sluice's offsets are its own logs).  The commit's answer is awaited in
 * steps of COMMIT_STEP_MS while the source is not stopping; at stop (last),
 * the commit is sent and not awaited: the consumer's close, bounded by
 * close_timeout, may still deliver it. */
#define COMMIT_STEP_MS 100

static void commit_pending(KafkaSource *ks, bool last)
{
    pthread_mutex_lock(&ks->mu);
    if (!ks->commit_pending) {
        pthread_mutex_unlock(&ks->mu);
        return;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(ks->to_commit.n);
    for (int i = 0; i < ks->to_commit.n; i++) {
        const SrcPart *p = &ks->to_commit.parts[i];
        if (p->topic < 0 || p->topic >= ks->ntopics)
            continue;
        rd_kafka_topic_partition_list_add(l, ks->topics[p->topic], p->part)->offset = p->end;
    }
    ks->commit_pending = false;
    pthread_mutex_unlock(&ks->mu);
    if (l->cnt > 0 && last) {
        rd_kafka_commit(ks->rk, l, 1);
    } else if (l->cnt > 0 && begin_call(ks)) {
        rd_kafka_queue_t *q = rd_kafka_queue_new(ks->rk);
        rd_kafka_resp_err_t e = rd_kafka_commit_queue(ks->rk, l, q, NULL, NULL);
        rd_kafka_event_t *ev = NULL;
        /* its answer, unless the source stops first (the queue then drops it) */
        while (e == RD_KAFKA_RESP_ERR_NO_ERROR && ev == NULL && end_call(ks) && begin_call(ks))
            ev = rd_kafka_queue_poll(q, COMMIT_STEP_MS);
        end_call(ks);
        if (ev != NULL)
            e = rd_kafka_event_error(ev);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
            sl_log(LOG_WARN, "kafka offset commit failed", "stream=%s group=%s error=\"%s\"",
                   log_value(ks->rel->name), log_value(ks->group), log_quote(rd_kafka_err2str(e)));
        if (ev != NULL)
            rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
    }
    rd_kafka_topic_partition_list_destroy(l);
}

static void source_free(KafkaSource *ks);

static void *poller_main(void *arg)
{
    KafkaSource *ks = arg;
    rd_kafka_t *rk = make_consumer(ks);
    pthread_mutex_lock(&ks->mu);
    ks->rk = rk;
    ks->made = true;
    if (rk == NULL)
        ks->ready = true;       /* the error is the answer */
    pthread_cond_broadcast(&ks->cond);
    pthread_mutex_unlock(&ks->mu);
    while (rk != NULL) {
        look(ks);
        commit_pending(ks, false);
        pthread_mutex_lock(&ks->mu);
        if (!ks->stop && !ks->commit_pending) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += POLL_MS * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&ks->cond, &ks->mu, &ts);
        }
        bool stop = ks->stop;
        pthread_mutex_unlock(&ks->mu);
        if (stop) {
            commit_pending(ks, true);
            break;
        }
    }
    pthread_mutex_lock(&ks->mu);
    ks->ended = true;
    bool left = ks->left;
    pthread_cond_broadcast(&ks->cond);
    pthread_mutex_unlock(&ks->mu);
    if (left)
        source_free(ks);
    return NULL;
}

/* librdkafka 2.0's rd_kafka_destroy can wait for ever on a broker thread
 * after a partition it read was deleted.  The handle is destroyed on a
 * thread of its own; close waits close_timeout (default DESTROY_WAIT_MS)
 * for it and then goes on, leaving that thread (and the handle) to finish
 * or to end with the process.  Whichever side is last frees the shared
 * record.  Either outcome is logged with the time it took. */

typedef struct Destroyer {
    pthread_mutex_t mu;
    pthread_cond_t  cond;
    rd_kafka_t     *rk;
    bool            done;
    bool            left;           /* close went on without waiting for it */
    int             refs;
    int64_t         t0;
    char            stream[64];
} Destroyer;

static void destroyer_unref(Destroyer *d)
{
    pthread_mutex_lock(&d->mu);
    bool last = --d->refs == 0;
    pthread_mutex_unlock(&d->mu);
    if (last) {
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cond);
        sl_free(d);
    }
}

static void *destroyer_main(void *arg)
{
    Destroyer *d = arg;
    rd_kafka_consumer_close(d->rk);
    int64_t closed_us = kafka_wall_us();
    kafka_handle_destroy(d->rk);
    pthread_mutex_lock(&d->mu);
    d->done = true;
    bool left = d->left;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->mu);
    if (left)
        sl_log(LOG_INFO, "kafka consumer left behind has closed",
               "stream=%s close_ms=%" PRId64 " destroy_ms=%" PRId64, log_value(d->stream),
               (closed_us - d->t0) / 1000, (kafka_wall_us() - closed_us) / 1000);
    destroyer_unref(d);
    return NULL;
}

static void destroy_consumer(rd_kafka_t *rk, const char *stream, int64_t wait_us)
{
    int64_t t0 = kafka_wall_us();
    Destroyer *d = sl_calloc(1, sizeof(Destroyer));
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cond, NULL);
    d->rk = rk;
    d->refs = 2;
    d->t0 = t0;
    snprintf(d->stream, sizeof(d->stream), "%s", stream);
    pthread_t t;
    if (pthread_create(&t, NULL, destroyer_main, d) != 0) {
        d->refs = 1;
        destroyer_main(d);
        return;
    }
    pthread_detach(t);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(wait_us / 1000000);
    ts.tv_nsec += (long)(wait_us % 1000000) * 1000;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&d->mu);
    while (!d->done)
        if (pthread_cond_timedwait(&d->cond, &d->mu, &ts) == ETIMEDOUT)
            break;
    bool done = d->done;
    d->left = !done;
    pthread_mutex_unlock(&d->mu);
    if (!done)
        sl_log(LOG_WARN, "kafka consumer still closing, left behind",
               "stream=%s waited_ms=%" PRId64, log_value(stream), (kafka_wall_us() - t0) / 1000);
    else
        sl_log(LOG_INFO, "kafka consumer closed", "stream=%s ms=%" PRId64, log_value(stream),
               (kafka_wall_us() - t0) / 1000);
    destroyer_unref(d);
}

/* What the poller uses: freed by close, or by a poller left behind when
 * its request returns (it destroys the consumer then). */
static void source_free(KafkaSource *ks)
{
    if (ks->rk != NULL)
        destroy_consumer(ks->rk, ks->rel->name, ks->close_timeout_us);
    ex_regex_free(ks->re);
    pthread_mutex_destroy(&ks->mu);
    pthread_cond_destroy(&ks->cond);
    cat_relation_unref(ks->rel);
    if (ks->dead)
        cat_relation_unref(ks->dead);
    srcoffs_free(&ks->to_commit);
    free_brokers(ks);
    sl_free(ks->snap);
    sl_free(ks->error);
    sl_free(ks->group);
    arena_destroy(&ks->arena);
    sl_free(ks);
}

/* Stops the poller and frees the source.  A poller inside a request to the
 * broker (a metadata or watermark request, an offset commit: seconds when
 * the broker is away) is not waited for: it is left to end on its own and
 * free the source, so closing -- and the server's shutdown -- never waits
 * on a broker; the consumer's destruction is bounded by close_timeout. */
void kafka_source_close(KafkaSource *ks)
{
    if (ks == NULL)
        return;
    /* a test holds here: the close of a SELECT's scan blocks its thread */
    SLUICE_FAULT("kafka_source_close");
    /* Held records refer to the handle: destroyed before it. */
    kafka_messages_destroy(ks->held, 0, ks->nheld);
    sl_free(ks->held);
    ks->held = NULL;
    ks->nheld = 0;
    srcoffs_free(&ks->kept_at);
    for (int i = 0; i < ks->npool; i++)
        kf_conn_close(ks->pool[i]);
    ks->npool = 0;
    if (ks->started) {
        pthread_mutex_lock(&ks->mu);
        ks->stop = true;
        pthread_cond_broadcast(&ks->cond);
        while (!ks->ended && !ks->busy)
            pthread_cond_wait(&ks->cond, &ks->mu);
        bool behind = ks->left = !ks->ended;
        pthread_mutex_unlock(&ks->mu);
        if (behind) {
            sl_log(LOG_INFO, "kafka poller left behind in a request to the broker",
                   "stream=%s", log_value(ks->rel->name));
            pthread_detach(ks->thread);
            return;
        }
        pthread_join(ks->thread, NULL);
    }
    source_free(ks);
}

/* ---------------------------------------------------------------------- */
/* Planning                                                                */

static int64_t start_of(KafkaSource *ks, const SnapPart *s, bool first)
{
    if (!first)
        return s->low;          /* a partition that appeared later: all of it */
    if (ks->start == KS_LATEST)
        return s->high;
    if (ks->start == KS_MAP) {
        for (int i = 0; i < ks->nstart_map; i++) {
            const StartAt *m = &ks->start_map[i];
            if (m->topic == s->topic && m->part == s->part)
                return m->offset == -2 ? s->low : m->offset == -1 ? s->high
                                                  : SL_MIN(SL_MAX(m->offset, s->low), s->high);
        }
    }
    return s->low;
}

/* Starts the poller thread unless it runs; called with ks->mu held. */
int kafka_poller_start(KafkaSource *ks, SlError *err)
{
    if (ks->started)
        return 0;
    ks->started = true;
    if (pthread_create(&ks->thread, NULL, poller_main, ks) != 0) {
        ks->started = false;
        return sl_error(err, ERRCODE_SYSTEM_ERROR, "cannot start the Kafka poller thread");
    }
    return 0;
}

int kafka_source_plan(KafkaSource *ks, const SourceOffsets *pos, bool from_earliest,
                      SourceOffsets *out, SlError *err)
{
    pthread_mutex_lock(&ks->mu);
    if (kafka_poller_start(ks, err) < 0) {
        pthread_mutex_unlock(&ks->mu);
        return -1;
    }
    if (!ks->ready) {
        pthread_mutex_unlock(&ks->mu);
        return SOURCE_NOT_READY;
    }
    if (ks->error != NULL) {
        sl_error(err, ks->error_state ? ks->error_state : ERRCODE_SYSTEM_ERROR, "%s",
                 ks->error);
        pthread_mutex_unlock(&ks->mu);
        return -1;
    }
    bool first = pos == NULL || pos->n == 0;
    int rc = 0;
    for (int i = 0; i < ks->nsnap; i++) {
        const SnapPart *s = &ks->snap[i];
        const SrcPart *p = pos ? srcoffs_find(pos, s->topic, s->part) : NULL;
        int64_t start = p ? p->end : from_earliest ? s->low : start_of(ks, s, first);
        if (start < s->low || start > s->high) {
            if (ks->fail_on_data_loss) {
                sl_error(err, ERRCODE_DATA_EXCEPTION,
                         "Kafka partition %s/%d of stream \"%s\": offset %" PRId64
                         " is out of range [%" PRId64 ", %" PRId64 "]: records were lost",
                         ks->topics[s->topic], s->part, ks->rel->name, start, s->low, s->high);
                sl_error_detail(err, "Retention deleted them, or the topic was recreated.");
                sl_error_hint(err, "Set fail_on_data_loss = false on the stream to skip to "
                                   "the earliest available offset.");
                rc = -1;
                break;
            }
            sl_log(LOG_WARN, "kafka records lost, skipped",
                   "stream=%s topic=%s partition=%d from=%" PRId64 " to=%" PRId64,
                   log_value(ks->rel->name), ks->topics[s->topic], s->part, start, s->low);
            start = s->low;
        }
        srcoffs_add(out, s->topic, s->part, start, SL_MAX(start, s->high));
    }
    pthread_mutex_unlock(&ks->mu);
    return rc;
}

void kafka_source_commit(KafkaSource *ks, const SourceOffsets *pos)
{
    pthread_mutex_lock(&ks->mu);
    srcoffs_copy(&ks->to_commit, pos);
    ks->commit_pending = true;
    pthread_cond_broadcast(&ks->cond);
    pthread_mutex_unlock(&ks->mu);
}

bool kafka_source_latest(KafkaSource *ks, int32_t topic, int32_t part, int64_t *latest,
                         int64_t *poll_us)
{
    bool found = false;
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < ks->nsnap; i++) {
        if (ks->snap[i].topic == topic && ks->snap[i].part == part) {
            *latest = ks->snap[i].high;
            found = true;
        }
    }
    *poll_us = ks->poll_us;
    pthread_mutex_unlock(&ks->mu);
    return found;
}
