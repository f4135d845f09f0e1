/*
 * streamfuncs.c -- SQL functions over the counters of stream ingestion
 * (IngestStats, include/sluice/functions.h), until the sys.streams table lists them.
 *
 *   sluice_stream_stat(stream text, counter text) -> bigint
 *   sluice_stream_status(stream text) -> text     running | failed
 *   sluice_stream_error(stream text) -> text      why ingestion failed
 *
 * exec/ does not call the runtime: the evaluation context carries its
 * answer (EvalCtx.hooks->stream_stats, the runtime's ingest_stats_by_name,
 * with stream_arg).  Without one, or for a stream without background work
 * (no connector, no retention), each function returns NULL.
 */
#include "functions/kernels.h"

#include "sluice/functions.h"

static bool lookup(EvalCtx *cx, const SlStr *name, IngestStats *s)
{
    const ExFnHooks *h = cx->hooks;
    return h != NULL && h->stream_stats != NULL &&
           h->stream_stats(h->stream_arg, name->ptr, name->len, s, cx->arena) == 1;
}

KERNEL(k_stream_stat)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        IngestStats s;
        const SlStr *c = &args[1].v.str[i];
        if (!lookup(cx, &args[0].v.str[i], &s)) {
            out->nulls[i] = 1;
            continue;
        }
        static const struct { const char *name; size_t off; } counters[] = {
            {"files", offsetof(IngestStats, files)},
            {"bytes", offsetof(IngestStats, bytes)},
            {"records", offsetof(IngestStats, records)},
            {"rows", offsetof(IngestStats, rows)},
            {"dead_letters", offsetof(IngestStats, dead_letters)},
            {"skipped", offsetof(IngestStats, skipped)},
            {"retained_chunks", offsetof(IngestStats, retained_chunks)},
            {"retained_rows", offsetof(IngestStats, retained_rows)},
            {"retained_bytes", offsetof(IngestStats, retained_bytes)},
        };
        int k = -1;
        for (int j = 0; j < (int)SL_ARRAY_LEN(counters) && k < 0; j++)
            if (strlen(counters[j].name) == c->len &&
                memcmp(counters[j].name, c->ptr, c->len) == 0)
                k = j;
        if (k < 0)
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "unknown stream counter \"%.*s\"", (int)c->len, c->ptr);
        out->v.i64[i] = *(const int64_t *)((const char *)&s + counters[k].off);
    });
    return 0;
}

static void put_text(EvalCtx *cx, Vector *out, uint32_t i, const char *s)
{
    if (s == NULL) {
        out->nulls[i] = 1;
        return;
    }
    size_t len = strlen(s);
    out->v.str[i].ptr = arena_strndup(cx->arena, s, len);
    out->v.str[i].len = (uint32_t)len;
}

/* status or error of each row's stream, as text (NULL when there is none) */
static int text_of(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                   uint32_t n, bool error)
{
    FOR_SEL(sel, n, {
        IngestStats s;
        bool found = lookup(cx, &args[0].v.str[i], &s);
        put_text(cx, out, i, !found ? NULL : error ? s.error : s.status);
    });
    return 0;
}

KERNEL(k_stream_status)
{
    SL_UNUSED(e);
    return text_of(cx, args, out, sel, n, false);
}

KERNEL(k_stream_error)
{
    SL_UNUSED(e);
    return text_of(cx, args, out, sel, n, true);
}
