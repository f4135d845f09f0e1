/*
 * source.c -- rows of a stream, whatever feeds it (see source.h).
 *
 *   source_open, source_close, source_latest
 *   source_reader_open, source_reader_next, source_reader_close
 *   source_parts, source_route
 *
 * The connector is the relation's `connector` option: none (or 'internal')
 * reads the stream's own log in RocksDB, and so does 'files' (its ingester,
 * ingest.c, appends to that log); 'datagen' generates the rows, 'nexmark'
 * the Nexmark events (nexmark.h).
 */
#include "source.h"

#include "sluice/datagen.h"
#include "sluice/ingest.h"
#include "sluice/nexmark.h"
#include "sluice/exec.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

typedef enum SourceKind { SOURCE_INTERNAL, SOURCE_DATAGEN, SOURCE_NEXMARK } SourceKind;

struct Source {
    SourceKind         kind;
    const CatRelation *rel;     /* referenced while the source is open */
    StateStore        *st;
    Datagen           *gen;
    Nexmark           *nexmark;
    Arena              arena;   /* the generator's settings */
};

struct SourceReader {
    Source  *src;
    RelScan *scan;              /* SOURCE_INTERNAL */
    int64_t  next, to;          /* SOURCE_DATAGEN, SOURCE_NEXMARK */
};

int source_open(StateStore *st, const CatRelation *rel, Source **out, SlError *err)
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
    cat_relation_unref(src->rel);
    arena_destroy(&src->arena);
    sl_free(src);
}

int64_t source_latest(Source *src, int64_t now_us, SlError *err)
{
    if (src->kind == SOURCE_DATAGEN)
        return datagen_available(src->gen, now_us);
    if (src->kind == SOURCE_NEXMARK)
        return nexmark_available(src->nexmark, now_us);
    if (ingest_check_readable(src->rel, err) < 0)
        return -1;
    return stream_end_offset(src->st, src->rel, err);
}

SourceReader *source_reader_open(Source *src, int64_t from, int64_t to)
{
    SourceReader *r = sl_calloc(1, sizeof(SourceReader));
    r->src = src;
    r->next = from;
    r->to = to;
    if (src->kind == SOURCE_INTERNAL)
        r->scan = stream_scan_open(src->st, src->rel, from, to);
    return r;
}

int source_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err)
{
    Source *src = r->src;
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
        nexmark_generate(src->nexmark, r->next, n, a, b);
    else
        datagen_generate(src->gen, r->next, n, a, b);
    r->next += n;
    *out = b;
    return (int)n;
}

int source_reader_close(SourceReader *r, SlError *err)
{
    int rc = r->scan ? rel_scan_close(r->scan, err) : 0;
    sl_free(r);
    return rc;
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
