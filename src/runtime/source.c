/*
 * source.c -- rows of a stream, whatever feeds it (see source.h).
 *
 *   source_open, source_close, source_plan, source_committed, source_lag
 *   source_ended         a bounded source read to its end (final watermark)
 *   source_reader_open, source_reader_next, source_reader_need, source_reader_close
 *   srcoffs_to_json, srcoffs_from_json   (the rest of offsets.h: util/offsets.c)
 *   source_plan_one      the plan of a one-partition source (source_int.h)
 *   source_lag_now       a lag row's latest offset, read now (source_int.h)
 *   source_parts, source_route
 *
 * The connector is the relation's `connector` option, and source_open
 * picks its table of functions (SourceOps, source_int.h) once: none (or
 * 'internal') and 'files' read the stream's own log in RocksDB
 * (source_stream.c; a files stream's ingester, ingest.c, appends to that
 * log); 'datagen' generates the rows and 'nexmark' the Nexmark events
 * (source_gen.c); 'kafka' reads topics (source_kafka.c, over
 * src/connectors/kafka_source.c).  The relation of a continuous query is
 * read as its result table's changelog (changelog.c).  Everything else here goes through the
 * table: the cap of a plan by max_offsets_per_trigger, the offsets' JSON
 * and the lag rows are the same for every connector.  Internal and
 * generated streams have one partition of offsets, 0, without a topic
 * (WITH (partitions = N) only routes their rows to watermark partitions).
 */
#include "source_int.h"

#include "sluice/exec.h"
#include "sluice/options.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The connectors, by their name in the connector option (NULL: none). */
static const struct {
    const char      *connector;
    const SourceOps *ops;
} source_connectors[] = {
    {"internal", &source_stream_ops},
    {"files", &source_stream_ops},      /* an internal stream its ingester fills */
    {"datagen", &source_datagen_ops},
    {"nexmark", &source_nexmark_ops},
    {"kafka", &source_kafka_ops},
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
        if (p->topic >= 0 && src->ops->topic != NULL)
            /* Kafka topic names are [a-zA-Z0-9._-]: nothing to escape. */
            strbuf_printf(out, ",\"topic\":\"%s\"", src->ops->topic(src, p->topic));
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
            if (q == NULL || q > end || src->ops->topic_index == NULL)
                return sl_error(err, ERRCODE_DATA_CORRUPTED,
                                "offset log entry is unreadable: %s", json);
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)(q - t), t);
            topic = src->ops->topic_index(src, name);
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

int source_open(struct Runtime *rt, StateStore *st, const CatRelation *rel, const char *owner,
                Source **out, SlError *err)
{
    Source *src = sl_calloc(1, sizeof(Source));
    arena_init(&src->arena, 4096);
    src->rt = rt;
    src->st = st;
    src->rel = rel;
    Options o;
    const char *connector = NULL;
    if (opts_parse(&src->arena, rel->options, &o, err) < 0)
        goto fail;
    connector = opts_get(&o, "connector");
    if (rel->kind == REL_QUERY)
        src->ops = &source_changelog_ops;   /* a result table's changes */
    else if (connector == NULL)
        src->ops = &source_stream_ops;
    for (size_t i = 0; src->ops == NULL && i < SL_ARRAY_LEN(source_connectors); i++)
        if (strcmp(connector, source_connectors[i].connector) == 0)
            src->ops = source_connectors[i].ops;
    if (src->ops == NULL) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "connector \"%s\" of stream \"%s\" is not supported yet", connector,
                 rel->name);
        goto fail;
    }
    if (src->ops->open != NULL && src->ops->open(src, owner, err) < 0)
        goto fail;
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
    if (src->ops->close != NULL)
        src->ops->close(src);
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
    int rc = src->ops->plan(src, pos, now_us, out, err);
    if (rc < 0)
        return rc;
    /* A changelog's batches are read whole, its snapshot with the first:
     * max_offsets_per_trigger does not cut them (changelog.c). */
    if (src->ops == &source_changelog_ops)
        max_offsets = 0;
    return cap_ranges(out, limit, max_offsets, backlog);
}

int source_plan_one(Source *src, const SourceOffsets *pos, int64_t latest, int64_t now_us,
                    SourceOffsets *out)
{
    if (latest < 0)
        return -1;
    src->latest = latest;
    src->latest_us = now_us;
    const SrcPart *p = pos ? srcoffs_find(pos, -1, 0) : NULL;
    int64_t start = p ? p->end : 0;
    srcoffs_add(out, -1, 0, start, SL_MAX(start, latest));
    return 0;
}

void source_lag_now(SourceLag *l, int64_t latest)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    l->latest = latest;
    l->last_poll_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool source_ended(const Source *src, const SourceOffsets *ranges)
{
    return src->ops->ended != NULL && src->ops->ended(src, ranges);
}

void source_committed(Source *src, const SourceOffsets *pos)
{
    if (src->ops->committed != NULL)
        src->ops->committed(src, pos);
}

void source_lag(Source *src, const SourceOffsets *pos,
                void (*fn)(const SourceLag *l, void *arg), void *arg)
{
    /* A one-partition source's partition is known before the query's
     * first batch: its position is then 0. */
    SrcPart first = {-1, 0, 0, 0};
    SourceOffsets none = {1, 1, &first};
    if (pos->n == 0 && src->ops->one_part)
        pos = &none;
    for (int i = 0; i < pos->n; i++) {
        const SrcPart *p = &pos->parts[i];
        SourceLag l = {NULL, p->part, p->end, src->latest, src->latest_us};
        if (src->ops->lag != NULL)
            src->ops->lag(src, p, &l);
        fn(&l, arg);
    }
}

/* ---------------------------------------------------------------------- */
/* Readers                                                                 */

SourceReader *source_reader_open(Source *src, const SourceOffsets *ranges)
{
    return src->ops->reader_open(src, ranges);
}

int source_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err)
{
    return r->src->ops->reader_next(r, a, out, err);
}

void source_reader_need(SourceReader *r, const uint8_t *need)
{
    if (r->src->ops->reader_need != NULL)
        r->src->ops->reader_need(r, need);
}

int source_reader_close(SourceReader *r, DeadLetters *dead, SlError *err)
{
    return r->src->ops->reader_close(r, dead, err);
}

/* ---------------------------------------------------------------------- */
/* Watermark partitions                                                    */

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
