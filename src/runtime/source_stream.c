/*
 * source_stream.c -- the source of an internal stream: the stream's own log
 * in RocksDB (relstore.h).  A files stream is one too: its ingester
 * (ingest.c) appends to that log.
 *
 *   source_stream_ops   (source_int.h)
 *
 * One partition of offsets, (-1, 0); its end is a counter in memory
 * (stream_end_offset), so source_lag reads it afresh (without waiting for an
 * append in progress: stream_end_offset_nowait).  A plan fails with
 * the ingestion's error when the stream's ingester has failed.
 */
#include "runtime_int.h"
#include "source_int.h"

#include "sluice/ingest.h"
#include "sluice/relstore.h"

typedef struct StreamReader {
    SourceReader base;
    RelScan     *scan;
} StreamReader;

static int stream_plan(Source *src, const SourceOffsets *pos, int64_t now_us, SourceOffsets *out,
                       SlError *err)
{
    if (ingest_check_readable(src->rt, src->rel, err) < 0)
        return -1;
    return source_plan_one(src, pos, stream_end_offset(src->st, src->rel, err), now_us, out);
}

static void stream_lag(Source *src, const SrcPart *p, SourceLag *l)
{
    (void)p;
    SlError ignore = {0};
    /* sys.source_lag and /metrics, on the loop: never wait for an append
     * in progress (the end of the last durable one) */
    int64_t end = stream_end_offset_nowait(src->st, src->rel, &ignore);
    sl_error_clear(&ignore);
    if (end >= 0)
        source_lag_now(l, end);
}

static SourceReader *stream_reader_open(Source *src, const SourceOffsets *ranges)
{
    StreamReader *r = sl_calloc(1, sizeof(StreamReader));
    r->base.src = src;
    const SrcPart *p = srcoffs_find(ranges, -1, 0);
    r->scan = stream_scan_open(src->st, src->rel, p ? p->start : 0, p ? p->end : 0, false);
    return &r->base;
}

static int stream_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err)
{
    return stream_scan_next(((StreamReader *)r)->scan, a, out, err);
}

static int stream_reader_close(SourceReader *r, DeadLetters *dead, SlError *err)
{
    (void)dead;
    StreamReader *s = (StreamReader *)r;
    int rc = s->scan != NULL ? rel_scan_close(s->scan, err) : 0;
    sl_free(s);
    return rc;
}

const SourceOps source_stream_ops = {
    .plan = stream_plan,
    .lag = stream_lag,
    .one_part = true,
    .reader_open = stream_reader_open,
    .reader_next = stream_reader_next,
    .reader_close = stream_reader_close,
};
