/*
 * source.c -- rows of a stream, whatever feeds it (see source.h).
 *
 *   source_open, source_close, source_plan, source_committed, source_lag
 *   source_ended         a bounded source read to its end (final watermark)
 *   source_reader_open, source_reader_next, source_reader_need, source_reader_close
 *   srcoffs_to_json, srcoffs_from_json   (the rest of offsets.h: util/offsets.c)
 *   source_scan_kafka    a plain SELECT's scan of a Kafka stream (its wait
 *                        for a first answer ends at a cancel or timeout)
 *   source_parts, source_route
 *
 * The connector is the relation's `connector` option: none (or 'internal')
 * reads the stream's own log in RocksDB, and so does 'files' (its ingester,
 * ingest.c, appends to that log); 'datagen' generates the rows, 'nexmark'
 * the Nexmark events (nexmark.h); 'kafka' reads topics
 * (src/connectors/kafka_source.c).  Internal and generated streams have one
 * partition of offsets, 0, without a topic (WITH (partitions = N) only
 * routes their rows to watermark partitions).
 */
#include "source.h"

#include "runtime_int.h"
#include "sluice/datagen.h"
#include "sluice/ingest.h"
#include "sluice/nexmark.h"
#include "sluice/exec.h"
#include "sluice/kafka.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

typedef enum SourceKind { SOURCE_INTERNAL, SOURCE_DATAGEN, SOURCE_NEXMARK,
                         SOURCE_KAFKA } SourceKind;

struct Source {
    SourceKind         kind;
    const CatRelation *rel;     /* referenced while the source is open */
    StateStore        *st;
    Datagen           *gen;
    KafkaSource       *kafka;
    Nexmark           *nexmark;
    Arena              arena;   /* the generator's settings */
    int64_t            latest;  /* internal, datagen: the end last planned to */
    int64_t            latest_us;
};

struct SourceReader {
    Source      *src;
    RelScan     *scan;          /* SOURCE_INTERNAL */
    int64_t      next, to;      /* SOURCE_DATAGEN, SOURCE_NEXMARK */
    const uint8_t *need;        /* SOURCE_NEXMARK, SOURCE_KAFKA: the columns read, NULL: all */
    KafkaReader *kafka;
};

/* ---------------------------------------------------------------------- */
/* Offsets                                                                 */

void srcoffs_to_json(Source *src, uint32_t oid, int input, const SourceOffsets *o, StrBuf *out)
{
    for (int i = 0; i < o->n; i++) {
        const SrcPart *p = &o->parts[i];
        if (out->len > 0 && out->data[out->len - 1] != '[')
            strbuf_putc(out, ',');
        strbuf_putc(out, '{');
        if (input >= 0)
            strbuf_printf(out, "\"input\":%d,", input);
        strbuf_printf(out, "\"oid\":%u", oid);
        if (p->topic >= 0 && src->kafka != NULL)
            /* Kafka topic names are [a-zA-Z0-9._-]: nothing to escape. */
            strbuf_printf(out, ",\"topic\":\"%s\"", kafka_source_topic(src->kafka, p->topic));
        strbuf_printf(out, ",\"part\":%d,\"start\":%" PRId64 ",\"end\":%" PRId64 "}", p->part,
                      p->start, p->end);
    }
}

/* The integer after "name": inside [obj, end), or -1 if absent. */
static int member_int(const char *obj, const char *end, const char *name, int64_t *out)
{
    size_t n = strlen(name);
    for (const char *s = obj; s + n + 3 <= end; s++) {
        if (s[0] == '"' && memcmp(s + 1, name, n) == 0 && s[n + 1] == '"' && s[n + 2] == ':') {
            char *e;
            *out = strtoll(s + n + 3, &e, 10);
            return e == s + n + 3 ? -1 : 0;
        }
    }
    return -1;
}

int srcoffs_from_json(Source *src, const char *json, int input, SourceOffsets *out, SlError *err)
{
    out->n = 0;
    /* Objects name their input, or (one object per input, no "input")
     * count in input order; a single input takes every object. */
    bool named = strstr(json, "\"input\":") != NULL;
    int k = 0;
    const char *p = json;
    while ((p = strchr(p, '{')) != NULL) {
        const char *end = strchr(p, '}');
        if (end == NULL)
            break;
        int64_t part, start, stop, in = 0;
        if (member_int(p, end, "part", &part) < 0 || member_int(p, end, "start", &start) < 0 ||
            member_int(p, end, "end", &stop) < 0)
            return sl_error(err, ERRCODE_DATA_CORRUPTED, "offset log entry is unreadable: %s",
                            json);
        if (named && member_int(p, end, "input", &in) < 0)
            in = 0;
        else if (!named)
            in = input < 0 ? input : k;
        k++;
        if (input >= 0 && in != input) {
            p = end + 1;
            continue;
        }
        int32_t topic = -1;
        const char *t = strstr(p, "\"topic\":\"");
        if (t != NULL && t < end) {
            t += 9;
            const char *q = strchr(t, '"');
            if (q == NULL || q > end || src->kafka == NULL)
                return sl_error(err, ERRCODE_DATA_CORRUPTED,
                                "offset log entry is unreadable: %s", json);
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)(q - t), t);
            topic = kafka_source_topic_index(src->kafka, name);
        }
        srcoffs_add(out, topic, (int32_t)part, start, stop);
        p = end + 1;
    }
    if (out->n == 0)
        return sl_error(err, ERRCODE_DATA_CORRUPTED, "offset log entry is unreadable: %s", json);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Sources                                                                 */

int source_open(StateStore *st, const CatRelation *rel, const char *owner, Source **out,
                SlError *err)
{
    Source *src = sl_calloc(1, sizeof(Source));
    arena_init(&src->arena, 4096);
    src->st = st;
    src->rel = rel;
    Options o;
    const char *connector = NULL;
    if (opts_parse(&src->arena, rel->options, &o, err) < 0)
        goto fail;
    connector = opts_get(&o, "connector");
    if (connector == NULL || strcmp(connector, "internal") == 0 ||
        strcmp(connector, "files") == 0) {
        /* a files stream is an internal stream its ingester fills */
        src->kind = SOURCE_INTERNAL;
    } else if (strcmp(connector, "datagen") == 0) {
        src->kind = SOURCE_DATAGEN;
        if (datagen_open(&src->arena, rel, &src->gen, err) < 0)
            goto fail;
    } else if (strcmp(connector, "kafka") == 0) {
        src->kind = SOURCE_KAFKA;
        const char *dname = arena_printf(&src->arena, "%s_dead_letters", rel->name);
        const CatRelation *dead = rt_catalog() ? cat_lookup(rt_catalog(), dname) : NULL;
        if (kafka_source_open(st, rel, owner, dead, &src->kafka, err) < 0)
            goto fail;
    } else if (strcmp(connector, "nexmark") == 0) {
        src->kind = SOURCE_NEXMARK;
        if (nexmark_open(&src->arena, rel, &src->nexmark, err) < 0)
            goto fail;
    } else {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "connector \"%s\" of stream \"%s\" is not supported yet", connector,
                 rel->name);
        goto fail;
    }
    cat_relation_ref(rel);
    *out = src;
    return 0;
fail:
    arena_destroy(&src->arena);
    sl_free(src);
    return -1;
}

void source_close(Source *src)
{
    if (src == NULL)
        return;
    kafka_source_close(src->kafka);
    cat_relation_unref(src->rel);
    arena_destroy(&src->arena);
    sl_free(src);
}

/* Caps the ranges of out at limit, then shares max_offsets out over the
 * partitions in proportion to their backlog (Spark's rule), the remainder
 * one by one in partition order.  Returns the rows left in the ranges. */
static int64_t cap_ranges(SourceOffsets *out, const SourceOffsets *limit, int64_t max_offsets,
                          int64_t *backlog)
{
    int64_t total = 0;
    for (int i = 0; i < out->n; i++) {
        SrcPart *p = &out->parts[i];
        const SrcPart *l = limit ? srcoffs_find(limit, p->topic, p->part) : NULL;
        if (limit != NULL)
            p->end = l == NULL ? p->start : SL_MIN(p->end, SL_MAX(l->end, p->start));
        total += p->end - p->start;
    }
    if (backlog != NULL)
        *backlog = max_offsets > 0 && total > max_offsets ? total - max_offsets : 0;
    if (max_offsets <= 0 || total <= max_offsets)
        return total;
    int64_t given = 0;
    int64_t *avail = sl_malloc(sizeof(int64_t) * (size_t)out->n);
    for (int i = 0; i < out->n; i++) {
        SrcPart *p = &out->parts[i];
        avail[i] = p->end - p->start;
        int64_t share = (int64_t)((__int128)avail[i] * max_offsets / total);
        p->end = p->start + share;
        given += share;
    }
    /* The remainder: one more each for partitions with rows left. */
    for (int i = 0; i < out->n && given < max_offsets; i++) {
        SrcPart *p = &out->parts[i];
        if (p->end - p->start < avail[i]) {
            p->end++;
            given++;
        }
    }
    sl_free(avail);
    return given;
}

int64_t source_plan(Source *src, const SourceOffsets *pos, const SourceOffsets *limit,
                    int64_t max_offsets, int64_t now_us, SourceOffsets *out, int64_t *backlog,
                    SlError *err)
{
    out->n = 0;
    if (backlog != NULL)
        *backlog = 0;
    if (src->kind == SOURCE_KAFKA) {
        int rc = kafka_source_plan(src->kafka, pos, false, out, err);
        if (rc < 0)
            return rc;
    } else {
        if (src->kind == SOURCE_INTERNAL && ingest_check_readable(src->rel, err) < 0)
            return -1;
        int64_t latest = src->kind == SOURCE_DATAGEN ? datagen_available(src->gen, now_us)
                         : src->kind == SOURCE_NEXMARK ? nexmark_available(src->nexmark, now_us)
                                                       : stream_end_offset(src->st, src->rel, err);
        if (latest < 0)
            return -1;
        src->latest = latest;
        src->latest_us = now_us;
        const SrcPart *p = pos ? srcoffs_find(pos, -1, 0) : NULL;
        int64_t start = p ? p->end : 0;
        srcoffs_add(out, -1, 0, start, SL_MAX(start, latest));
    }
    return cap_ranges(out, limit, max_offsets, backlog);
}

bool source_ended(const Source *src, const SourceOffsets *ranges)
{
    if (src->kind != SOURCE_NEXMARK)
        return false;
    int64_t total = nexmark_total(src->nexmark);
    const SrcPart *p = srcoffs_find(ranges, -1, 0);
    return total >= 0 && p != NULL && p->end >= total;
}

void source_committed(Source *src, const SourceOffsets *pos)
{
    if (src->kind == SOURCE_KAFKA)
        kafka_source_commit(src->kafka, pos);
}

void source_lag(Source *src, const SourceOffsets *pos,
                void (*fn)(const SourceLag *l, void *arg), void *arg)
{
    /* An internal or generated stream's one partition is known before the
     * query's first batch: its position is then 0. */
    SrcPart first = {-1, 0, 0, 0};
    SourceOffsets none = {1, 1, &first};
    if (pos->n == 0 && src->kind != SOURCE_KAFKA)
        pos = &none;
    for (int i = 0; i < pos->n; i++) {
        const SrcPart *p = &pos->parts[i];
        SourceLag l = {NULL, p->part, p->end, src->latest, src->latest_us};
        if (src->kind == SOURCE_INTERNAL) {
            /* The end of an internal stream is a counter in memory. */
            SlError ignore = {0};
            int64_t end = stream_end_offset(src->st, src->rel, &ignore);
            sl_error_clear(&ignore);
            if (end >= 0) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                l.latest = end;
                l.last_poll_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
            }
        } else if (src->kind == SOURCE_KAFKA) {
            l.topic = kafka_source_topic(src->kafka, p->topic);
            if (!kafka_source_latest(src->kafka, p->topic, p->part, &l.latest,
                                     &l.last_poll_us))
                l.latest = p->end;
        }
        fn(&l, arg);
    }
}

/* ---------------------------------------------------------------------- */
/* Readers                                                                 */

SourceReader *source_reader_open(Source *src, const SourceOffsets *ranges)
{
    SourceReader *r = sl_calloc(1, sizeof(SourceReader));
    r->src = src;
    if (src->kind == SOURCE_KAFKA) {
        r->kafka = kafka_reader_open(src->kafka, ranges);
        return r;
    }
    const SrcPart *p = srcoffs_find(ranges, -1, 0);
    r->next = p ? p->start : 0;
    r->to = p ? p->end : 0;
    if (src->kind == SOURCE_INTERNAL)
        r->scan = stream_scan_open(src->st, src->rel, r->next, r->to);
    return r;
}

int source_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err)
{
    Source *src = r->src;
    if (src->kind == SOURCE_KAFKA)
        return kafka_reader_next(r->kafka, a, out, err);
    if (src->kind == SOURCE_INTERNAL)
        return stream_scan_next(r->scan, a, out, err);
    if (r->next >= r->to)
        return 0;
    uint32_t n = (uint32_t)SL_MIN((int64_t)RELSTORE_BATCH_ROWS, r->to - r->next);
    SlType types[src->rel->ncols > 0 ? src->rel->ncols : 1];
    for (int c = 0; c < src->rel->ncols; c++)
        types[c] = src->rel->cols[c].type;
    Batch *b = batch_alloc(a, types, (uint32_t)src->rel->ncols, n);
    if (src->kind == SOURCE_NEXMARK)
        nexmark_generate_cols(src->nexmark, r->next, n, r->need, a, b);
    else
        datagen_generate(src->gen, r->next, n, a, b);
    r->next += n;
    *out = b;
    return (int)n;
}

void source_reader_need(SourceReader *r, const uint8_t *need)
{
    r->need = need;
    if (r->kafka != NULL)
        kafka_reader_need(r->kafka, need);
}

int source_reader_close(SourceReader *r, DeadLetters *dead, SlError *err)
{
    int rc = 0;
    if (r->kafka != NULL) {
        DeadSet s = {0};
        kafka_reader_close(r->kafka, dead != NULL ? &s : NULL);
        if (s.rel != NULL)
            dead_letters_take(dead, &s);
    } else if (r->scan != NULL)
        rc = rel_scan_close(r->scan, err);
    sl_free(r);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* A plain SELECT over a Kafka stream                                      */

typedef struct KafkaScan {
    ExSource       base;
    Source        *src;
    SourceReader  *reader;
    SourceOffsets  ranges;
} KafkaScan;

static int kscan_next(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    KafkaScan *k = (KafkaScan *)s;
    if (keys)
        *keys = NULL;
    return source_reader_next(k->reader, a, out, err);
}

static void kscan_close(ExSource *s)
{
    KafkaScan *k = (KafkaScan *)s;
    /* A plain SELECT records no dead letters: it writes nothing. */
    if (k->reader)
        source_reader_close(k->reader, NULL, NULL);
    source_close(k->src);
    srcoffs_free(&k->ranges);
    sl_free(k);
}

ExSource *source_scan_kafka(StateStore *st, const CatRelation *rel, SlError *err)
{
    KafkaScan *k = sl_calloc(1, sizeof(KafkaScan));
    k->base.next = kscan_next;
    k->base.close = kscan_close;
    if (source_open(st, rel, "select", &k->src, err) < 0) {
        sl_free(k);
        return NULL;
    }
    /* The poller's first look: wait for it (30 s at most, and no longer
     * than the statement may run: a cancel or statement_timeout ends the
     * wait with 57014). */
    for (int i = 0; i < 1500; i++) {
        int rc = kafka_source_plan(k->src->kafka, NULL, true, &k->ranges, err);
        if (rc == 0)
            break;
        if (rc == SOURCE_NOT_READY && ex_check_interrupt(err) < 0) {
            kscan_close(&k->base);
            return NULL;
        }
        if (rc != SOURCE_NOT_READY || i == 1499) {
            if (rc == SOURCE_NOT_READY)
                sl_error(err, ERRCODE_CONNECTION_FAILURE,
                         "stream \"%s\": no answer from Kafka within 30 s", rel->name);
            kscan_close(&k->base);
            return NULL;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    k->reader = source_reader_open(k->src, &k->ranges);
    return &k->base;
}

int source_parts(const CatRelation *rel, SourceParts *out, SlError *err)
{
    Arena a;
    arena_init(&a, 1024);
    Options o;
    int rc = -1;
    int64_t n = 1;
    out->n = 1;
    out->key_col = -1;
    out->idle_us = 0;
    if (opts_parse(&a, rel->options, &o, err) < 0 ||
        opts_get_int(&o, "partitions", 1, &n, err) < 0 ||
        opts_get_interval_us(&o, "idle_timeout", 0, &out->idle_us, err) < 0)
        goto out;
    if (n < 1 || n > SOURCE_MAX_PARTS) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "partitions must be between 1 and %d", SOURCE_MAX_PARTS);
        goto out;
    }
    if (out->idle_us < 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "idle_timeout must not be negative");
        goto out;
    }
    out->n = (int)n;
    const char *key = opts_get(&o, "partition_key");
    if (key != NULL) {
        for (int c = 0; c < rel->ncols; c++)
            if (strcmp(rel->cols[c].name, key) == 0)
                out->key_col = c;
        if (out->key_col < 0) {
            sl_error(err, ERRCODE_UNDEFINED_COLUMN, "partition_key \"%s\" is not a column of "
                     "stream \"%s\"", key, rel->name);
            goto out;
        }
    }
    if (out->n > 1 && out->key_col < 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "a stream with partitions = %d needs a partition_key", out->n);
        sl_error_hint(err, "Add partition_key = 'column' to WITH (...): the column whose value "
                           "picks each row's partition.");
        goto out;
    }
    if (out->n == 1)
        out->key_col = -1;
    rc = 0;
out:
    arena_destroy(&a);
    return rc;
}

void source_route(const SourceParts *sp, const Batch *b, uint32_t *part)
{
    if (sp->n <= 1) {
        memset(part, 0, sizeof(uint32_t) * b->nrows);
        return;
    }
    const Vector *v = &b->cols[sp->key_col];
    int64_t n = sp->n;
    StrBuf key;
    strbuf_init(&key);
    for (uint32_t i = 0; i < b->nrows; i++) {
        if (vector_is_null(v, i)) {
            part[i] = 0;
            continue;
        }
        int64_t k;
        switch (v->type.id) {
        case TYPE_INT2: k = v->v.i16[i]; break;
        case TYPE_INT4: k = v->v.i32[i]; break;
        case TYPE_INT8: k = v->v.i64[i]; break;
        default:
            strbuf_reset(&key);
            ex_key_encode(v, 1, i, &key);
            part[i] = (uint32_t)(ex_hash(key.data, key.len) % (uint64_t)n);
            continue;
        }
        part[i] = (uint32_t)(((k % n) + n) % n);
    }
    strbuf_free(&key);
}
