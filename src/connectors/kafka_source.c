/*
 * kafka_source.c -- Kafka topics as the rows of a stream (see kafka.h).
 *
 *   kafka_source_validate, kafka_source_open, kafka_source_close
 *   kafka_source_plan, kafka_source_commit, kafka_source_latest
 *   kafka_source_topic, kafka_source_topic_index
 *   kafka_reader_open, kafka_reader_need, kafka_reader_next, kafka_reader_close
 *
 * One consumer handle per query's source.  A poller thread, started by the
 * first plan, owns the handle's life: it creates it, looks at the topics'
 * partitions and watermarks every POLL_MS (one metadata request, one
 * ListOffsets per partition) into a snapshot under a mutex, commits the
 * positions of committed batches to the consumer group, and destroys the
 * handle at close.  Planning reads only the snapshot, so the loop never
 * waits on the network.
 *
 * A batch reads its ranges on the worker thread that runs it, by default
 * with sluice's own Fetch requests (kafka_fetch.h, docs/kafka-fetch.md):
 * to each partition's leader, from the poller's metadata, on a connection
 * the source keeps; the records of each response walked in place, with no
 * allocation per record.  A partition is done when its next offset reaches
 * its range's end (control batches and aborted transactions move it too),
 * or when a response with nothing at all says the log ends at or past it.
 * Whatever that path cannot do (no leader known, the network, a codec, an
 * error code of the broker's) hands the rest of the batch to librdkafka's
 * reader (fall_back), from the offsets reached; so do fetch = 'librdkafka'
 * and the security settings only librdkafka speaks.
 *
 * librdkafka's reader assigns at the range starts (no subscribe,
 * no rebalancing).  A partition
 * is done when a record at or past end - 1 has arrived, or the partition's
 * end-of-file event says the log ends at or past end (control records of
 * transactions take offsets that no record has).  Records at or past end
 * belong to the next batch.
 *
 * The next batch usually starts where this one ended, so a reader that
 * read all its ranges leaves the consumer assigned -- librdkafka goes on
 * fetching while the batch's rows are processed and committed -- and hands
 * the records and end-of-file events it took past its ranges (held, in the
 * order taken) to the next reader through the source.  That reader uses
 * them, and the assignment, only if every one of its ranges starts where
 * the last reader's ended; otherwise (a replay, a retry, a partition that
 * appeared, a failed or cut-short reader) it drops them and assigns at its
 * range starts as before.  Either way a batch reads exactly the records of
 * its logged ranges.
 *
 * Columns named _key, _partition, _offset, _timestamp and _headers are
 * filled from the record's metadata; the others are decoded from its value
 * with the stream's format (JSON, CSV, or raw: the value as the one
 * column).  A value that does not decode is a dead letter: the reader
 * keeps it (raw bytes, topic/partition, offset, reason) with a key that
 * names the record (topic, partition, offset, its place among the values
 * of the record), and hands them to the batch when it closes; the batch
 * appends those not recorded before to <stream>_dead_letters in its own
 * write (deadletter.h).
 *
 * A reader told which columns its query reads (kafka_reader_need) leaves
 * the others NULL: metadata columns are not filled, and the decoder does
 * not copy unread text values, though it still checks them, so the same
 * records are dead letters whatever the query reads (format.h).
 */
#include "kafka_int.h"

#include "format_int.h"
#include "kafka_fetch.h"
#include "sluice/bytes.h"
#include "sluice/deadletter.h"
#include "sluice/expr.h"
#include "sluice/log.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#define POLL_MS         250
#define READ_BATCH      512     /* records taken from librdkafka's queue at once */
#define HOLD_MAX        (1 << 18)   /* records a reader keeps for the next */
#define DESTROY_WAIT_MS 3000    /* close_timeout's default: see destroy_consumer */
#define MAX_TOPICS      256
#define SOURCE_NOT_READY (-2)
#define POOL_MAX        16      /* idle connections of the direct path kept */
#define CONNECT_MS      5000    /* connecting and ApiVersions */
#define FETCH_WAIT_MS   500     /* the broker's wait on a Fetch with nothing yet */
#define FETCH_SLACK_MS  10000   /* a Fetch's answer, past that wait */

typedef enum KFormat { KF_JSON, KF_CSV, KF_RAW } KFormat;
typedef enum KMeta { KM_NONE, KM_KEY, KM_PARTITION, KM_OFFSET, KM_TIMESTAMP, KM_HEADERS } KMeta;
typedef enum KStart { KS_EARLIEST, KS_LATEST, KS_MAP } KStart;

typedef struct SnapPart {
    int32_t topic, part;
    int64_t low, high;
    int32_t leader;         /* broker id, -1 none */
} SnapPart;

typedef struct SnapBroker {
    int32_t id;
    int     port;
    char   *host;
} SnapBroker;

/* A record of a batch's ranges, from either reader: librdkafka's message,
 * or the direct path's record (pointing into its response). */
typedef struct KRec {
    int                 range;          /* in the reader's ranges */
    int64_t             offset;
    const char         *value;          /* NULL: a NULL value */
    size_t              len;
    rd_kafka_message_t *m;              /* librdkafka's, or NULL */
    KfRecord            kf;             /* the direct path's */
} KRec;

typedef struct StartAt {
    int32_t topic, part;
    int64_t offset;         /* -2 earliest, -1 latest */
} StartAt;

struct KafkaSource {
    Arena              arena;           /* options, spec, names */
    const CatRelation *rel;
    const CatRelation *dead;            /* <stream>_dead_letters, or NULL */
    StateStore        *st;
    Options            opts;
    char              *group;
    /* what to read */
    const char        *topics[MAX_TOPICS]; /* the topic table; [0, ntopics) */
    int                ntopics;
    int                nnamed;          /* topics named by topic / topics */
    bool               pattern;
    regex_t            re;
    KStart             start;
    StartAt           *start_map;
    int                nstart_map;
    bool               fail_on_data_loss;
    bool               direct;          /* fetch = 'direct' and nothing that needs librdkafka */
    bool               read_committed;  /* isolation.level */
    int64_t            read_timeout_us;
    int64_t            close_timeout_us;    /* the bound on destroying the consumer */
    /* how to decode */
    KFormat            format;
    FmtSpec            spec;            /* the value's columns */
    KMeta             *meta;            /* per stream column */
    int               *payload_col;     /* per stream column: index in spec, or -1 */
    SlType            *payload_types;
    /* the poller */
    pthread_mutex_t    mu;
    pthread_cond_t     cond;
    pthread_t          thread;
    bool               started, stop;
    bool               made;            /* the poller tried to make rk */
    rd_kafka_t        *rk;
    bool               ready;           /* a snapshot was taken */
    char              *error;           /* the last look's error, or NULL */
    const char        *error_state;
    SnapPart          *snap;
    int                nsnap, capsnap;
    SnapBroker        *brokers;         /* of the last metadata */
    int                nbrokers;
    KfConn            *pool[POOL_MAX];  /* the direct path's idle connections */
    int                npool;
    int64_t            poll_us;
    SourceOffsets      to_commit;       /* pending positions for the group */
    bool               commit_pending;
    /* What a batch's reader leaves to the next (see "Reading a batch"):
     * the consumer stays assigned, fetching on, and kept_at says where
     * each partition's next batch must start for that to be of use;
     * held are the records and end-of-file events it took from the queue
     * past its ranges, in the order taken.  Only readers touch these, one
     * at a time (nreaders counts them). */
    bool                 kept;
    SourceOffsets        kept_at;
    rd_kafka_message_t **held;
    int                  nheld, capheld;
    int                  nreaders;
};

struct KafkaReader {
    KafkaSource   *ks;
    SourceOffsets  ranges;
    bool          *done;
    int64_t       *next;            /* per range: the next offset wanted */
    int            remaining;
    KRec                cur;            /* a record decoded in part, if has_cur */
    bool                has_cur;
    /* The direct path (kafka_fetch.h), while direct */
    bool                direct;
    KfConn             *conn;
    bool                in_response;    /* conn's last response is being walked */
    KfAsk              *asks;           /* of that request */
    int                *ask_range;
    int                 nasks;
    int32_t            *leader;         /* per range */
    int64_t             nfetch;
    rd_kafka_queue_t   *queue;          /* the consumer's queue, or NULL */
    rd_kafka_message_t *msgs[READ_BATCH];   /* taken from it, [imsg, nmsgs) unread */
    int                 imsg, nmsgs;
    rd_kafka_message_t **held;          /* the last reader's, [iheld, nheld) unread */
    int                  iheld, nheld;
    rd_kafka_message_t **keep;          /* past the ranges: for the next reader */
    int                  nkeep, capkeep;
    bool                 can_keep;      /* nothing past the ranges was dropped */
    const rd_kafka_topic_t *last_rkt;   /* range_of's last answer */
    int32_t             last_part;
    int                 last_range;
    FmtResult      res;
    FmtSpec        spec;            /* ks->spec with the reader's need */
    const uint8_t *need;            /* per stream column, NULL: all */
    uint8_t       *spec_need;       /* per value column */
    int64_t        last_progress_us;
    int64_t        wait_us;         /* waiting on an empty queue */
    int64_t        nread;           /* records read in range */
    int64_t        open_us;
    bool           failed;
    /* dead letters, kept until close, and their keys */
    Arena          dead_arena;
    Batch         *dead;
    SlStr         *dead_keys;
    uint32_t       ndead, capdead;
    uint32_t       dead_seq;        /* dead letters of the record r->cur so far */
    char           fallback[160];   /* why the direct path was left, or "" */
};

/* Destroys messages [from, n) of m. */
static void destroy_messages(rd_kafka_message_t **m, int from, int n)
{
    for (int i = from; i < n; i++)
        rd_kafka_message_destroy(m[i]);
}

static int64_t wall_us(void)
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
    const char *f = opts_get(o, "fetch");
    if (f != NULL && strcmp(f, "direct") != 0 && strcmp(f, "librdkafka") != 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid fetch \"%s\"", f);
        sl_error_hint(err, "Use 'direct' (sluice's own Fetch requests, the default) or "
                           "'librdkafka'.");
        return -1;
    }
    ks->direct = f == NULL || strcmp(f, "direct") == 0;
    const char *iso = opts_get(o, "kafka.isolation.level");
    ks->read_committed = iso == NULL || strcmp(iso, "read_uncommitted") != 0;
    for (int i = 0; i < o->n; i++) {
        const char *k = o->keys[i];
        if (strncmp(k, "kafka.ssl.", 10) == 0 || strncmp(k, "kafka.sasl.", 11) == 0 ||
            (strcmp(k, "kafka.security.protocol") == 0 &&
             strcasecmp(o->values[i], "plaintext") != 0))
            ks->direct = false;
    }
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
        char *anchored = arena_printf(&ks->arena, "^(%s)$", pattern);
        if (regcomp(&ks->re, anchored, REG_EXTENDED | REG_NOSUB) != 0)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "invalid topic_pattern \"%s\"", pattern);
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
    if (kafka_conf_build(o, rel->name, defaults, &conf, err) < 0)
        return -1;
    rd_kafka_conf_destroy(conf);
    return 0;
}

int kafka_source_validate(const CatRelation *def, SlError *err)
{
    KafkaSource ks;
    memset(&ks, 0, sizeof(ks));
    arena_init(&ks.arena, 2048);
    int rc = read_options(&ks, def, err);
    if (ks.pattern)
        regfree(&ks.re);
    arena_destroy(&ks.arena);
    return rc;
}

int kafka_source_open(StateStore *st, const CatRelation *rel, const char *owner,
                      const CatRelation *dead, KafkaSource **out, SlError *err)
{
    KafkaSource *ks = sl_calloc(1, sizeof(KafkaSource));
    arena_init(&ks->arena, 4096);
    if (read_options(ks, rel, err) < 0) {
        if (ks->pattern)
            regfree(&ks->re);
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
    if (kafka_conf_build(&ks->opts, ks->rel->name, defaults, &conf, &err) < 0) {
        pthread_mutex_lock(&ks->mu);
        set_error(ks, ERRCODE_INVALID_PARAMETER_VALUE, err.message);
        pthread_mutex_unlock(&ks->mu);
        sl_error_clear(&err);
        return NULL;
    }
    char msg[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, msg, sizeof(msg));
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        pthread_mutex_lock(&ks->mu);
        set_error(ks, ERRCODE_SYSTEM_ERROR, msg);
        pthread_mutex_unlock(&ks->mu);
        return NULL;
    }
    rd_kafka_poll_set_consumer(rk);
    return rk;
}

/* One look at the topics: partitions and watermarks into the snapshot. */
static void look(KafkaSource *ks)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(ks->rk, 1, NULL, &md, 5000);
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
        bool ours = ks->pattern && regexec(&ks->re, md->topics[i].topic, 0, NULL, 0) == 0;
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
            regexec(&ks->re, mt->topic, 0, NULL, 0) == 0)
            ti = add_topic(ks, mt->topic);
        pthread_mutex_unlock(&ks->mu);
        if (ti < 0)
            continue;
        for (int k = 0; k < mt->partition_cnt; k++) {
            int64_t low, high;
            int32_t pid = mt->partitions[k].id;
            pthread_mutex_lock(&ks->mu);
            bool stop = ks->stop;
            pthread_mutex_unlock(&ks->mu);
            if (stop) {
                sl_free(parts);
                rd_kafka_metadata_destroy(md);
                return;
            }
            e = rd_kafka_query_watermark_offsets(ks->rk, mt->topic, pid, &low, &high, 5000);
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
    ks->poll_us = wall_us();
    ks->ready = true;
    pthread_mutex_unlock(&ks->mu);
    sl_free(error);
}

/* Commits pending positions to the consumer group (outside lag tools). */
static void commit_pending(KafkaSource *ks)
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
    if (l->cnt > 0) {
        rd_kafka_resp_err_t e = rd_kafka_commit(ks->rk, l, 0);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
            sl_log(LOG_WARN, "kafka offset commit failed", "stream=%s group=%s error=\"%s\"",
                   log_value(ks->rel->name), log_value(ks->group), log_quote(rd_kafka_err2str(e)));
    }
    rd_kafka_topic_partition_list_destroy(l);
}

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
        commit_pending(ks);
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
            commit_pending(ks);
            break;
        }
    }
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
    int64_t closed_us = wall_us();
    rd_kafka_destroy(d->rk);
    pthread_mutex_lock(&d->mu);
    d->done = true;
    bool left = d->left;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->mu);
    if (left)
        sl_log(LOG_INFO, "kafka consumer left behind has closed",
               "stream=%s close_ms=%" PRId64 " destroy_ms=%" PRId64, log_value(d->stream),
               (closed_us - d->t0) / 1000, (wall_us() - closed_us) / 1000);
    destroyer_unref(d);
    return NULL;
}

static void destroy_consumer(rd_kafka_t *rk, const char *stream, int64_t wait_us)
{
    int64_t t0 = wall_us();
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
               "stream=%s waited_ms=%" PRId64, log_value(stream), (wall_us() - t0) / 1000);
    else
        sl_log(LOG_INFO, "kafka consumer closed", "stream=%s ms=%" PRId64, log_value(stream),
               (wall_us() - t0) / 1000);
    destroyer_unref(d);
}

void kafka_source_close(KafkaSource *ks)
{
    if (ks == NULL)
        return;
    if (ks->started) {
        pthread_mutex_lock(&ks->mu);
        ks->stop = true;
        pthread_cond_broadcast(&ks->cond);
        pthread_mutex_unlock(&ks->mu);
        pthread_join(ks->thread, NULL);
    }
    /* Held records refer to the handle: destroyed before it. */
    destroy_messages(ks->held, 0, ks->nheld);
    sl_free(ks->held);
    srcoffs_free(&ks->kept_at);
    if (ks->rk != NULL)
        destroy_consumer(ks->rk, ks->rel->name, ks->close_timeout_us);
    if (ks->pattern)
        regfree(&ks->re);
    pthread_mutex_destroy(&ks->mu);
    pthread_cond_destroy(&ks->cond);
    cat_relation_unref(ks->rel);
    if (ks->dead)
        cat_relation_unref(ks->dead);
    srcoffs_free(&ks->to_commit);
    for (int i = 0; i < ks->npool; i++)
        kf_conn_close(ks->pool[i]);
    free_brokers(ks);
    sl_free(ks->snap);
    sl_free(ks->error);
    sl_free(ks->group);
    arena_destroy(&ks->arena);
    sl_free(ks);
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
static int start_poller(KafkaSource *ks, SlError *err)
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
    if (start_poller(ks, err) < 0) {
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

/* ---------------------------------------------------------------------- */
/* Reading a batch                                                         */

KafkaReader *kafka_reader_open(KafkaSource *ks, const SourceOffsets *ranges)
{
    KafkaReader *r = sl_calloc(1, sizeof(KafkaReader));
    r->ks = ks;
    srcoffs_copy(&r->ranges, ranges);
    r->done = sl_calloc((size_t)(ranges->n ? ranges->n : 1), sizeof(bool));
    r->next = sl_calloc((size_t)(ranges->n ? ranges->n : 1), sizeof(int64_t));
    r->leader = sl_calloc((size_t)(ranges->n ? ranges->n : 1), sizeof(int32_t));
    for (int i = 0; i < ranges->n; i++)
        r->next[i] = ranges->parts[i].start;
    r->spec = ks->spec;
    arena_init(&r->dead_arena, 4096);
    r->last_progress_us = r->open_us = wall_us();
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(ranges->n);
    pthread_mutex_lock(&ks->mu);
    /* A replayed batch may come before any plan: the consumer is made by
     * the poller thread, so start it and wait for it (a worker thread). */
    SlError ignore = {0};
    start_poller(ks, &ignore);
    sl_error_clear(&ignore);
    while (ks->started && !ks->made)
        pthread_cond_wait(&ks->cond, &ks->mu);
    /* The last batch's assignment serves this one if this one starts, in
     * every partition it had, where that one ended. */
    bool reuse = ks->kept && ks->nreaders == 0 && ranges->n == ks->kept_at.n;
    bool valid = true;
    for (int i = 0; i < ranges->n; i++) {
        const SrcPart *p = &ranges->parts[i];
        if (p->topic < 0 || p->topic >= ks->ntopics) {
            r->done[i] = true;
            valid = false;
            continue;
        }
        const SrcPart *k = reuse ? srcoffs_find(&ks->kept_at, p->topic, p->part) : NULL;
        reuse = k != NULL && k->end == p->start;
        if (p->start >= p->end)
            r->done[i] = true;
        else
            r->remaining++;
        /* Every partition, read this time or not, so that the assignment
         * can serve the next batch too. */
        rd_kafka_topic_partition_list_add(l, ks->topics[p->topic], p->part)->offset = p->start;
    }
    reuse &= valid;
    /* The direct path reads it if every partition to read has a known
     * leader (a replay before the first look has none: librdkafka reads). */
    bool direct = ks->direct && ks->rk != NULL && r->remaining > 0;
    for (int i = 0; i < ranges->n && direct; i++) {
        r->leader[i] = -1;
        for (int k = 0; k < ks->nsnap; k++)
            if (ks->snap[k].topic == ranges->parts[i].topic &&
                ks->snap[k].part == ranges->parts[i].part)
                r->leader[i] = ks->snap[k].leader;
        direct = r->done[i] || r->leader[i] >= 0;
    }
    ks->nreaders++;
    pthread_mutex_unlock(&ks->mu);
    if (direct) {
        /* librdkafka's assignment and held records serve no one now. */
        destroy_messages(ks->held, 0, ks->nheld);
        sl_free(ks->held);
        ks->held = NULL;
        ks->nheld = ks->capheld = 0;
        if (ks->kept)
            rd_kafka_assign(ks->rk, NULL);
        ks->kept = false;
        r->direct = true;
        r->asks = sl_calloc((size_t)ranges->n, sizeof(KfAsk));
        r->ask_range = sl_calloc((size_t)ranges->n, sizeof(int));
    } else if (ks->rk != NULL) {
        if (reuse) {
            r->held = ks->held;
            r->nheld = ks->nheld;
            ks->held = NULL;
            ks->nheld = ks->capheld = 0;
        } else {
            destroy_messages(ks->held, 0, ks->nheld);
            sl_free(ks->held);
            ks->held = NULL;
            ks->nheld = ks->capheld = 0;
            if (r->remaining > 0) {
                rd_kafka_assign(ks->rk, l);
                sl_log(LOG_DEBUG, "kafka consumer assigned", "stream=%s partitions=%d",
                       log_value(ks->rel->name), l->cnt);
            } else if (ks->kept)
                rd_kafka_assign(ks->rk, NULL);
            ks->kept = false;
        }
        r->can_keep = valid && (reuse || r->remaining > 0);
        if (r->remaining > 0)
            r->queue = rd_kafka_queue_get_consumer(ks->rk);
    }
    rd_kafka_topic_partition_list_destroy(l);
    return r;
}

void kafka_reader_need(KafkaReader *r, const uint8_t *need)
{
    KafkaSource *ks = r->ks;
    r->need = need;
    sl_free(r->spec_need);
    r->spec_need = NULL;
    r->spec.need = NULL;
    if (need == NULL)
        return;
    r->spec_need = sl_calloc((size_t)(ks->spec.ncols > 0 ? ks->spec.ncols : 1), 1);
    for (int c = 0; c < ks->rel->ncols; c++)
        if (ks->meta[c] == KM_NONE && need[c])
            r->spec_need[ks->payload_col[c]] = 1;
    r->spec.need = r->spec_need;
}

/* The index of the reader's range for a record's topic and partition. */
static int range_of(KafkaReader *r, rd_kafka_topic_t *rkt, int32_t part)
{
    if (rkt == r->last_rkt && part == r->last_part)
        return r->last_range;
    int found = -1;
    const char *name = rd_kafka_topic_name(rkt);
    for (int i = 0; i < r->ranges.n; i++) {
        const SrcPart *p = &r->ranges.parts[i];
        if (p->part == part && p->topic >= 0 && p->topic < r->ks->ntopics &&
            strcmp(r->ks->topics[p->topic], name) == 0) {
            found = i;
            break;
        }
    }
    r->last_rkt = rkt;
    r->last_part = part;
    r->last_range = found;
    return found;
}

/* The next record or event, waiting up to timeout_ms: taken READ_BATCH at
 * a time from the consumer's queue (one lock for many records).  The read
 * timeout restarts whenever librdkafka hands something over. */
static rd_kafka_message_t *next_message(KafkaReader *r, int timeout_ms)
{
    if (r->iheld < r->nheld)
        return r->held[r->iheld++];
    if (r->imsg < r->nmsgs)
        return r->msgs[r->imsg++];
    r->imsg = r->nmsgs = 0;
    if (r->queue == NULL) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->ks->rk, timeout_ms);
        if (m != NULL)
            r->last_progress_us = wall_us();
        return m;
    }
    /* What the queue holds now, without waiting: a batch call with a
     * timeout waits until it has READ_BATCH or the time is up, even with
     * the batch's last records in hand.  Only an empty queue is waited on,
     * for one record or event. */
    ssize_t n = rd_kafka_consume_batch_queue(r->queue, 0, r->msgs, READ_BATCH);
    if (n <= 0) {
        int64_t t0 = wall_us();
        rd_kafka_message_t *m = rd_kafka_consume_queue(r->queue, timeout_ms);
        r->wait_us += wall_us() - t0;
        if (m == NULL)
            return NULL;
        r->msgs[0] = m;
        n = 1;
    }
    r->last_progress_us = wall_us();
    r->nmsgs = (int)n;
    return r->msgs[r->imsg++];
}

/* Keeps m, a record or end-of-file event past its range, for the next
 * reader; past HOLD_MAX of them, drops it, and the next reader assigns
 * afresh. */
static void hold(KafkaReader *r, rd_kafka_message_t *m)
{
    if (!r->can_keep || r->nkeep == HOLD_MAX) {
        rd_kafka_message_destroy(m);
        r->can_keep = false;
        return;
    }
    if (r->nkeep == r->capkeep) {
        r->capkeep = r->capkeep ? r->capkeep * 2 : 256;
        r->keep = sl_realloc(r->keep, sizeof(*r->keep) * (size_t)r->capkeep);
    }
    r->keep[r->nkeep++] = m;
}

static void mark_done(KafkaReader *r, int i)
{
    if (i >= 0 && !r->done[i]) {
        r->done[i] = true;
        r->remaining--;
    }
}

static void keep_dead(KafkaReader *r, const KRec *rec, const char *reason,
                      const char *raw, size_t rawlen)
{
    KafkaSource *ks = r->ks;
    const char *topic = ks->topics[r->ranges.parts[rec->range].topic];
    int32_t part = r->ranges.parts[rec->range].part;
    Arena *a = &r->dead_arena;
    if (r->ndead == r->capdead) {
        uint32_t cap = r->capdead ? r->capdead * 2 : 16;
        SlType types[5] = {{TYPE_BYTEA, -1}, {TYPE_TEXT, -1}, {TYPE_INT8, -1},
                           {TYPE_TEXT, -1}, {TYPE_TIMESTAMPTZ, -1}};
        Batch *b = batch_alloc(a, types, 5, cap);
        SlStr *keys = ARENA_ARRAY(a, SlStr, cap);
        if (r->dead != NULL) {
            for (uint32_t c = 0; c < 5; c++) {
                memcpy(b->cols[c].nulls, r->dead->cols[c].nulls, r->ndead);
                memcpy(b->cols[c].v.data, r->dead->cols[c].v.data,
                       (size_t)r->ndead * (c == 2 || c == 4 ? 8 : sizeof(SlStr)));
            }
            memcpy(keys, r->dead_keys, sizeof(SlStr) * r->ndead);
        }
        r->dead = b;
        r->dead_keys = keys;
        r->capdead = cap;
    }
    Batch *b = r->dead;
    uint32_t i = r->ndead++;
    b->cols[0].v.str[i] = (SlStr){arena_memdup(a, raw, rawlen), (uint32_t)rawlen};
    const char *src = arena_printf(a, "kafka:%s/%d", topic, part);
    b->cols[1].v.str[i] = (SlStr){src, (uint32_t)strlen(src)};
    b->cols[2].v.i64[i] = rec->offset;
    const char *why = arena_strdup(a, reason);
    b->cols[3].v.str[i] = (SlStr){why, (uint32_t)strlen(why)};
    b->cols[4].v.i64[i] = wall_us() - SL_PG_EPOCH_UNIX_US;
    /* The key: topic, NUL, partition, offset, place in the record. */
    size_t tl = strlen(topic);
    uint8_t *k = arena_alloc(a, tl + 1 + 16);
    memcpy(k, topic, tl + 1);
    put_be32(k + tl + 1, (uint32_t)part);
    put_be64(k + tl + 5, (uint64_t)rec->offset);
    put_be32(k + tl + 13, r->dead_seq++);
    r->dead_keys[i] = (SlStr){(const char *)k, (uint32_t)(tl + 17)};
    for (int c = 0; c < 5; c++)
        b->cols[c].nulls[i] = 0;
    b->nrows = r->ndead;
    for (int c = 0; c < 5; c++)
        b->cols[c].len = r->ndead;
    sl_log(LOG_WARN, "kafka record sent to the dead letters",
           "stream=%s topic=%s partition=%d offset=%" PRId64 " reason=\"%s\"",
           log_value(ks->rel->name), topic, part, rec->offset, log_quote(reason));
}

/* A record's headers as a JSON object into j: 0, or -1 if malformed. */
static int headers_json(const KRec *rec, StrBuf *j)
{
    if (rec->m == NULL)
        return kf_headers_json(&rec->kf, j);
    rd_kafka_headers_t *hdrs = NULL;
    strbuf_putc(j, '{');
    if (rd_kafka_message_headers(rec->m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char *name;
        const void *val;
        size_t size;
        for (size_t h = 0;
             rd_kafka_header_get_all(hdrs, h, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             h++) {
            if (h)
                strbuf_puts(j, ", ");
            strbuf_put_json_string(j, name, strlen(name));
            strbuf_puts(j, ": ");
            if (val == NULL)
                strbuf_puts(j, "null");
            else
                strbuf_put_json_string(j, val, size);
        }
    }
    strbuf_putc(j, '}');
    return 0;
}

/* The metadata columns of rows [from, to) of out, all from record rec. */
static int fill_meta(KafkaReader *r, const KRec *rec, Batch *out, uint32_t from,
                     uint32_t to, Arena *a, SlError *err)
{
    KafkaSource *ks = r->ks;
    const rd_kafka_message_t *m = rec->m;
    const char *key = m ? m->key : rec->kf.key;
    size_t key_len = m ? m->key_len : rec->kf.key_len;
    int32_t partition = r->ranges.parts[rec->range].part;
    for (int c = 0; c < ks->rel->ncols; c++) {
        KMeta k = ks->meta[c];
        if (k == KM_NONE)
            continue;
        Vector *v = &out->cols[c];
        if (r->need != NULL && !r->need[c]) {
            memset(v->nulls + from, 1, to - from);
            continue;
        }
        for (uint32_t i = from; i < to; i++) {
            v->nulls[i] = 0;
            switch (k) {
            case KM_KEY:
                if (key == NULL) {
                    v->nulls[i] = 1;
                    break;
                }
                v->v.str[i] = (SlStr){arena_memdup(a, key, key_len), (uint32_t)key_len};
                break;
            case KM_PARTITION:
                if (v->type.id == TYPE_INT4)
                    v->v.i32[i] = partition;
                else
                    v->v.i64[i] = partition;
                break;
            case KM_OFFSET:
                v->v.i64[i] = rec->offset;
                break;
            case KM_TIMESTAMP: {
                rd_kafka_timestamp_type_t tt;
                int64_t ms = m ? rd_kafka_message_timestamp(m, &tt) : rec->kf.ts_ms;
                if (ms < 0)
                    v->nulls[i] = 1;
                else
                    v->v.i64[i] = ms * 1000 - SL_PG_EPOCH_UNIX_US;
                break;
            }
            case KM_HEADERS: {
                StrBuf j;
                strbuf_init(&j);
                if (headers_json(rec, &j) < 0) {
                    strbuf_free(&j);
                    return sl_error(err, ERRCODE_DATA_CORRUPTED,
                                    "Kafka record %s/%d@%" PRId64 ": malformed headers",
                                    ks->topics[r->ranges.parts[rec->range].topic], partition,
                                    rec->offset);
                }
                int rc = value_parse_text(a, v->type, j.data, j.len, v, i, -1, err);
                strbuf_free(&j);
                if (rc < 0)
                    return -1;
                break;
            }
            case KM_NONE:
                break;
            }
        }
    }
    return 0;
}

/* Handles an error event of the consumer: 0 go on, -1 fail. */
static int on_event(KafkaReader *r, const rd_kafka_message_t *m, SlError *err)
{
    KafkaSource *ks = r->ks;
    int i = m->rkt ? range_of(r, m->rkt, m->partition) : -1;
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "?";
    switch (m->err) {
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
        if (i >= 0 && m->offset >= r->ranges.parts[i].end)
            mark_done(r, i);
        return 0;
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE: {
        if (i >= 0 && r->done[i]) {
            /* Not this batch's: the next one assigns afresh and sees. */
            r->can_keep = false;
            return 0;
        }
        if (ks->fail_on_data_loss) {
            sl_error(err, ERRCODE_DATA_EXCEPTION,
                     "Kafka partition %s/%d of stream \"%s\": the batch's offsets are out of "
                     "range: records were lost", topic, m->partition, ks->rel->name);
            sl_error_hint(err, "Set fail_on_data_loss = false on the stream to skip them.");
            return -1;
        }
        if (i < 0)
            return 0;
        /* Go on from the earliest offset there is, within the range. */
        int64_t low, high;
        const SrcPart *p = &r->ranges.parts[i];
        if (r->has_cur)
            return 0;       /* cannot happen: events come between records */
        if (rd_kafka_query_watermark_offsets(ks->rk, topic, m->partition, &low, &high, 10000) !=
                RD_KAFKA_RESP_ERR_NO_ERROR ||
            low >= p->end) {
            mark_done(r, i);
            return 0;
        }
        sl_log(LOG_WARN, "kafka records lost, skipped",
               "stream=%s topic=%s partition=%d from=%" PRId64 " to=%" PRId64,
               log_value(ks->rel->name), topic, m->partition, r->next[i], low);
        r->next[i] = SL_MAX(low, r->next[i]);
        /* Assign again at the next offsets: a partition that hit the reset
         * error is not fetched again otherwise. */
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->ranges.n);
        pthread_mutex_lock(&ks->mu);
        for (int k = 0; k < r->ranges.n; k++)
            if (!r->done[k])
                rd_kafka_topic_partition_list_add(l, ks->topics[r->ranges.parts[k].topic],
                                                  r->ranges.parts[k].part)->offset = r->next[k];
        pthread_mutex_unlock(&ks->mu);
        rd_kafka_resp_err_t e = rd_kafka_assign(ks->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        r->can_keep = false;    /* the done partitions are no longer assigned */
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
            return kafka_error(err, e, "Kafka: assign");
        return 0;
    }
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
        if (i >= 0 && r->done[i]) {
            r->can_keep = false;
            return 0;
        }
        if (ks->fail_on_data_loss) {
            sl_error(err, ERRCODE_UNDEFINED_OBJECT,
                     "Kafka topic \"%s\" of stream \"%s\" does not exist (was it deleted?)",
                     topic, ks->rel->name);
            return -1;
        }
        mark_done(r, i);
        return 0;
    default:
        sl_log(LOG_DEBUG, "kafka consumer event", "stream=%s error=\"%s\"",
               log_value(ks->rel->name), log_quote(rd_kafka_message_errstr(m)));
        return 0;
    }
}

/* The error of a reader that waited read_timeout for a record. */
static int read_timed_out(KafkaReader *r, SlError *err)
{
    KafkaSource *ks = r->ks;
    sl_error(err, ERRCODE_CONNECTION_FAILURE,
             "stream \"%s\": no records from Kafka for %" PRId64
             " s while %d partition(s) of the batch were unread",
             ks->rel->name, ks->read_timeout_us / 1000000, r->remaining);
    sl_error_hint(err, "Is the broker up?  read_timeout sets the wait.");
    return -1;
}

/* The next record of the ranges from librdkafka into r->cur: 1, 0 none
 * yet (waited up to 100 ms, or took an event), -1 with err. */
static int next_rdk(KafkaReader *r, SlError *err)
{
    KafkaSource *ks = r->ks;
    rd_kafka_message_t *m = next_message(r, 100);
    if (m == NULL)
        return wall_us() - r->last_progress_us > ks->read_timeout_us ? read_timed_out(r, err)
                                                                     : 0;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && m->rkt != NULL) {
        /* The log's end past the range: the next batch may need it to
         * know its range read (control records have offsets no record
         * has). */
        int i = range_of(r, m->rkt, m->partition);
        if (i >= 0 && m->offset > r->ranges.parts[i].end) {
            mark_done(r, i);
            hold(r, m);
            return 0;
        }
    }
    if (m->err) {
        int rc = on_event(r, m, err);
        rd_kafka_message_destroy(m);
        return rc;
    }
    int i = range_of(r, m->rkt, m->partition);
    if (i < 0 || r->done[i] || m->offset < r->next[i] || m->offset >= r->ranges.parts[i].end) {
        if (i >= 0 && m->offset >= r->ranges.parts[i].end) {
            mark_done(r, i);
            hold(r, m);
        } else {
            rd_kafka_message_destroy(m);
        }
        return 0;
    }
    r->cur = (KRec){.range = i, .offset = m->offset, .value = m->payload, .len = m->len, .m = m};
    return 1;
}

/* Leaves the direct path for librdkafka's reader, for the rest of the
 * batch: the partitions not done are assigned at the offsets next wanted,
 * so the batch still reads exactly its ranges. */
static void fall_back(KafkaReader *r, const char *why)
{
    KafkaSource *ks = r->ks;
    snprintf(r->fallback, sizeof(r->fallback), "%s", why);
    sl_log(LOG_WARN, "kafka fetch falls back to librdkafka", "stream=%s reason=\"%s\"",
           log_value(ks->rel->name), log_quote(why));
    kf_conn_close(r->conn);
    r->conn = NULL;
    r->in_response = false;
    r->direct = false;
    r->can_keep = false;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->ranges.n);
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < r->ranges.n; i++)
        if (!r->done[i])
            rd_kafka_topic_partition_list_add(l, ks->topics[r->ranges.parts[i].topic],
                                              r->ranges.parts[i].part)->offset = r->next[i];
    pthread_mutex_unlock(&ks->mu);
    rd_kafka_assign(ks->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    r->queue = rd_kafka_queue_get_consumer(ks->rk);
}

/* A connection to broker id b: an idle one of the source's, or a new one
 * (*fresh); NULL with why. */
static KfConn *take_conn(KafkaSource *ks, int32_t b, char *why, size_t whylen, bool *fresh)
{
    *fresh = false;
    char host[256] = "";
    int port = 0;
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < ks->npool; i++) {
        if (kf_conn_broker(ks->pool[i]) == b) {
            KfConn *c = ks->pool[i];
            ks->pool[i] = ks->pool[--ks->npool];
            pthread_mutex_unlock(&ks->mu);
            return c;
        }
    }
    for (int i = 0; i < ks->nbrokers; i++)
        if (ks->brokers[i].id == b) {
            snprintf(host, sizeof(host), "%s", ks->brokers[i].host);
            port = ks->brokers[i].port;
        }
    pthread_mutex_unlock(&ks->mu);
    if (port == 0) {
        snprintf(why, whylen, "broker %d is not in the metadata", b);
        return NULL;
    }
    *fresh = true;
    KfConn *c = kf_connect(host, port, b, CONNECT_MS, why, whylen);
    if (c != NULL)
        sl_log(LOG_DEBUG, "kafka fetch connected", "stream=%s broker=%d address=%s:%d",
               log_value(ks->rel->name), b, host, port);
    return c;
}

static void put_conn(KafkaSource *ks, KfConn *c)
{
    pthread_mutex_lock(&ks->mu);
    if (ks->npool < POOL_MAX) {
        ks->pool[ks->npool++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&ks->mu);
    kf_conn_close(c);
}

/* One Fetch for the partitions not done that the first of them's leader
 * leads: 0, or -1 with why. */
static int direct_request(KafkaReader *r, char *why, size_t whylen)
{
    KafkaSource *ks = r->ks;
    int32_t leader = -1;
    for (int i = 0; i < r->ranges.n && leader < 0; i++)
        if (!r->done[i])
            leader = r->leader[i];
    if (r->conn != NULL && kf_conn_broker(r->conn) != leader) {
        put_conn(ks, r->conn);
        r->conn = NULL;
    }
    bool fresh = r->conn == NULL;
    if (r->conn == NULL && (r->conn = take_conn(ks, leader, why, whylen, &fresh)) == NULL)
        return -1;
    r->nasks = 0;
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < r->ranges.n; i++) {
        if (r->done[i] || r->leader[i] != leader)
            continue;
        r->ask_range[r->nasks] = i;
        r->asks[r->nasks++] = (KfAsk){ks->topics[r->ranges.parts[i].topic],
                                      r->ranges.parts[i].part, r->next[i]};
    }
    pthread_mutex_unlock(&ks->mu);
    int timeout = FETCH_WAIT_MS + FETCH_SLACK_MS;
    if (kf_fetch(r->conn, r->asks, r->nasks, ks->read_committed, FETCH_WAIT_MS, timeout, why,
                 whylen) < 0) {
        /* An idle connection may have been closed by the broker (restarted,
         * or idle too long): one more try on a new one. */
        kf_conn_close(r->conn);
        r->conn = NULL;
        if (fresh || (r->conn = take_conn(ks, leader, why, whylen, &fresh)) == NULL ||
            kf_fetch(r->conn, r->asks, r->nasks, ks->read_committed, FETCH_WAIT_MS, timeout,
                     why, whylen) < 0)
            return -1;
    }
    r->nfetch++;
    for (int k = 0; k < r->nasks; k++) {
        KfAskInfo info;
        kf_ask_info(r->conn, k, &info);
        if (info.error != 0) {
            /* Not leader, out of range, unknown topic...: librdkafka's
             * reader has the rules for each. */
            snprintf(why, whylen, "the broker answered %s/%d with error %d: %s",
                     r->asks[k].topic, r->asks[k].part, info.error,
                     rd_kafka_err2str((rd_kafka_resp_err_t)info.error));
            return -1;
        }
    }
    return 0;
}

/* The next record of the ranges from the direct path into r->cur: 1, 0
 * none (the ranges are read, or the reader fell back), -1 with err. */
static int next_direct(KafkaReader *r, SlError *err)
{
    KafkaSource *ks = r->ks;
    char why[160];
    for (;;) {
        if (!r->in_response) {
            if (r->remaining == 0)
                return 0;
            if (direct_request(r, why, sizeof(why)) < 0) {
                fall_back(r, why);
                return 0;
            }
            r->in_response = true;
        }
        KfRecord kr;
        int rc = kf_next(r->conn, &kr, why, sizeof(why));
        if (rc < 0) {
            fall_back(r, why);
            return 0;
        }
        if (rc == 0) {
            /* The response is walked.  One with no batch at all for any
             * partition means nothing is at or past the offsets asked:
             * a partition whose log ends at or past its range's end is
             * read (what librdkafka's end-of-file event says). */
            r->in_response = false;
            bool any = false, moved = false;
            for (int k = 0; k < r->nasks; k++) {
                KfAskInfo info;
                kf_ask_info(r->conn, k, &info);
                any |= info.had_batches;
            }
            for (int k = 0; k < r->nasks && !any; k++) {
                KfAskInfo info;
                kf_ask_info(r->conn, k, &info);
                int i = r->ask_range[k];
                int64_t log_end = ks->read_committed && info.stable >= 0 ? info.stable
                                                                          : info.high;
                if (!r->done[i] && log_end >= r->ranges.parts[i].end) {
                    mark_done(r, i);
                    moved = true;
                }
            }
            if (any || moved)
                r->last_progress_us = wall_us();
            else if (wall_us() - r->last_progress_us > ks->read_timeout_us)
                return read_timed_out(r, err);
            continue;
        }
        int i = r->ask_range[kr.ask];
        const SrcPart *p = &r->ranges.parts[i];
        if (rc == 2) {
            /* A batch ended: control records and aborted transactions
             * take offsets too. */
            r->next[i] = SL_MAX(r->next[i], kr.offset);
            if (r->next[i] >= p->end) {
                mark_done(r, i);
                kf_skip(r->conn, kr.ask);
            }
            continue;
        }
        if (r->done[i] || kr.offset >= p->end) {
            mark_done(r, i);
            kf_skip(r->conn, kr.ask);
            continue;
        }
        if (kr.offset < r->next[i])
            continue;
        r->cur = (KRec){.range = i, .offset = kr.offset, .value = kr.value, .len = kr.len,
                        .kf = kr};
        return 1;
    }
}

int kafka_reader_next(KafkaReader *r, Arena *a, Batch **out, SlError *err)
{
    KafkaSource *ks = r->ks;
    const CatRelation *rel = ks->rel;
    uint32_t cap = RELSTORE_BATCH_ROWS;
    Batch *pay = batch_alloc(a, ks->payload_types, (uint32_t)ks->spec.ncols, cap);
    Batch *b = ARENA_NEW(a, Batch);
    b->ncols = (uint32_t)rel->ncols;
    b->cols = ARENA_ARRAY(a, Vector, rel->ncols);
    for (int c = 0; c < rel->ncols; c++)
        if (ks->meta[c] != KM_NONE)
            vector_init(&b->cols[c], a, rel->cols[c].type, cap, true);
    if (ks->rk == NULL && r->remaining > 0) {
        pthread_mutex_lock(&ks->mu);
        sl_error(err, ks->error_state ? ks->error_state : ERRCODE_SYSTEM_ERROR,
                 "stream \"%s\": no Kafka consumer: %s", rel->name,
                 ks->error ? ks->error : "not started");
        pthread_mutex_unlock(&ks->mu);
        r->failed = true;
        return -1;
    }
    while (pay->nrows < cap) {
        if (!r->has_cur) {
            if (r->remaining == 0)
                break;
            int rc = r->direct ? next_direct(r, err) : next_rdk(r, err);
            if (rc < 0) {
                r->failed = true;
                return -1;
            }
            if (rc == 0)
                continue;
            r->has_cur = true;
            r->nread++;
            r->dead_seq = 0;
            r->next[r->cur.range] = r->cur.offset + 1;
            memset(&r->res, 0, sizeof(r->res));
        }
        KRec *m = &r->cur;
        uint32_t before = pay->nrows;
        bool finished = true;
        if (ks->format == KF_RAW) {
            Vector *v = &pay->cols[0];
            if (m->value == NULL || (r->spec.need != NULL && !r->spec.need[0])) {
                v->nulls[before] = 1;
            } else {
                v->nulls[before] = 0;
                v->v.str[before] = (SlStr){arena_memdup(a, m->value, m->len),
                                           (uint32_t)m->len};
            }
            pay->nrows++;
        } else if (m->value != NULL) {
            /* A record with a NULL value (a tombstone) has no row. */
            int rc = ks->format == KF_JSON
                         ? fmt_json_decode(&r->spec, m->value, m->len, true, pay, cap, a,
                                           &r->res, err)
                         : fmt_csv_decode(&r->spec, m->value, m->len, true, pay, cap, a,
                                          &r->res, err);
            if (rc < 0) {
                r->failed = true;
                return -1;
            }
            for (int d = 0; d < r->res.ndead; d++)
                keep_dead(r, m, r->res.dead[d].reason, r->res.dead[d].raw.ptr,
                          r->res.dead[d].raw.len);
            r->res.ndead = r->res.capdead = 0;
            r->res.dead = NULL;
            finished = r->res.consumed >= (int64_t)m->len;
        }
        for (uint32_t c = 0; c < pay->ncols; c++)
            pay->cols[c].len = pay->nrows;
        if (fill_meta(r, m, b, before, pay->nrows, a, err) < 0) {
            r->failed = true;
            return -1;
        }
        if (finished) {
            if (m->offset >= r->ranges.parts[m->range].end - 1)
                mark_done(r, m->range);
            if (m->m != NULL)
                rd_kafka_message_destroy(m->m);
            r->has_cur = false;
        }
    }
    if (pay->nrows == 0)
        return 0;
    b->nrows = pay->nrows;
    for (int c = 0; c < rel->ncols; c++) {
        if (ks->meta[c] == KM_NONE)
            b->cols[c] = pay->cols[ks->payload_col[c]];
        b->cols[c].len = b->nrows;
    }
    *out = b;
    return (int)b->nrows;
}

void kafka_reader_close(KafkaReader *r, DeadSet *dead)
{
    KafkaSource *ks = r->ks;
    pthread_mutex_lock(&ks->mu);
    bool alone = --ks->nreaders == 0;
    pthread_mutex_unlock(&ks->mu);
    if (r->nread > 0)
        sl_log(LOG_DEBUG, "kafka batch read", "stream=%s records=%" PRId64 " ms=%" PRId64
               " waited_ms=%" PRId64 " held=%d path=%s fetches=%" PRId64,
               log_value(ks->rel->name), r->nread, (wall_us() - r->open_us) / 1000,
               r->wait_us / 1000, r->nkeep + (r->nheld - r->iheld) + (r->nmsgs - r->imsg),
               r->direct ? "direct" : r->fallback[0] ? "fallback" : "librdkafka", r->nfetch);
    if (r->can_keep && alone && !r->failed && r->remaining == 0 && !r->has_cur &&
        ks->rk != NULL) {
        /* The next batch starts where this one ended: leave the consumer
         * assigned, and keep what was taken past the ranges, in order --
         * those held past them first, then the last reader's left unread
         * (none were taken from the queue if some are), then the rest of
         * the last take from the queue. */
        int n = r->nkeep + (r->nheld - r->iheld) + (r->nmsgs - r->imsg);
        ks->held = sl_realloc(r->keep, sizeof(*ks->held) * (size_t)(n ? n : 1));
        if (r->nheld > r->iheld)
            memcpy(ks->held + r->nkeep, r->held + r->iheld,
                   sizeof(*ks->held) * (size_t)(r->nheld - r->iheld));
        if (r->nmsgs > r->imsg)
            memcpy(ks->held + r->nkeep + (r->nheld - r->iheld), r->msgs + r->imsg,
                   sizeof(*ks->held) * (size_t)(r->nmsgs - r->imsg));
        ks->nheld = ks->capheld = n;
        r->keep = NULL;
        srcoffs_copy(&ks->kept_at, &r->ranges);
        ks->kept = true;
    } else {
        if (r->has_cur && r->cur.m != NULL)
            rd_kafka_message_destroy(r->cur.m);
        destroy_messages(r->msgs, r->imsg, r->nmsgs);
        destroy_messages(r->held, r->iheld, r->nheld);
        destroy_messages(r->keep, 0, r->nkeep);
        sl_free(r->keep);
        /* A reader that read by the direct path alone assigned nothing. */
        if (ks->rk != NULL && alone && !r->direct)
            rd_kafka_assign(ks->rk, NULL);
        ks->kept = false;
    }
    sl_free(r->held);
    if (r->conn != NULL)
        put_conn(ks, r->conn);
    if (r->queue != NULL)
        rd_kafka_queue_destroy(r->queue);
    if (r->ndead > 0 && !r->failed && dead != NULL) {
        if (ks->dead == NULL) {
            sl_log(LOG_ERROR, "kafka records lost: no dead-letter stream",
                   "stream=%s records=%u", log_value(ks->rel->name), r->ndead);
        } else {
            /* The batch appends them with its state (deadletter.h). */
            cat_relation_ref(ks->dead);
            *dead = (DeadSet){ks->dead, r->dead_arena, r->dead, r->dead_keys};
            arena_init(&r->dead_arena, 64);
        }
    }
    arena_destroy(&r->dead_arena);
    srcoffs_free(&r->ranges);
    sl_free(r->spec_need);
    sl_free(r->done);
    sl_free(r->next);
    sl_free(r->leader);
    sl_free(r->asks);
    sl_free(r->ask_range);
    sl_free(r);
}
