/*
 * source.c -- rows of a stream, whatever feeds it (see source.h).
 *
 *   source_open, source_close, source_latest
 *   source_reader_open, source_reader_next, source_reader_close
 *
 * The connector is the relation's `connector` option: none (or 'internal')
 * reads the stream's own log in RocksDB, and so does 'files' (its ingester,
 * ingest.c, appends to that log); 'datagen' generates the rows.
 */
#include "source.h"

#include "sluice/datagen.h"
#include "sluice/ingest.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

typedef enum SourceKind { SOURCE_INTERNAL, SOURCE_DATAGEN } SourceKind;

struct Source {
    SourceKind         kind;
    const CatRelation *rel;     /* referenced while the source is open */
    StateStore        *st;
    Datagen           *gen;
    Arena              arena;   /* the generator's settings */
};

struct SourceReader {
    Source  *src;
    RelScan *scan;              /* SOURCE_INTERNAL */
    int64_t  next, to;          /* SOURCE_DATAGEN */
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
