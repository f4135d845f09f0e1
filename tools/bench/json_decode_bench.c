/*
 * json_decode_bench.c -- the JSON decoder's cost per record, before and
 * after: the decoder of main f57dc53 (tests/unit/json_ref.c, kept as the
 * differential test's oracle) against today's (src/connectors/format_json.c),
 * in the same process over the same bytes, alternated, best of several
 * rounds each.  Both must give the same rows (a checksum over every column)
 * and the same number of dead letters.  Figures go to docs/benchmarks.md
 * ("Record decoding: JSON lines").
 *
 *   json_decode_bench [records [rounds [bid|q2|wide]]]
 *                       default 500,000 records, 5 rounds, every workload
 *
 * Workloads:
 *   bid      Nexmark bids as tools/nexmark/nexmark_gen writes them to Kafka
 *            (event_type first, compact, date_time a timestamp string),
 *            the bid stream's 7 columns (tools/nexmark/queries/streams.sql)
 *   bid q2   the same, reading only auction and price (FmtSpec.need)
 *   wide     a flat object of 24 members: bigints, doubles, booleans, text,
 *            timestamps, a null, with a space after ':' and ','
 * each decoded two ways: many records per call (a file, COPY) and one
 * record per call (how the Kafka source calls it: one value at a time).
 *
 * Times are the process's CPU time (one thread), so other work on a shared
 * machine counts as little as possible.
 */
#include "../../tests/unit/json_ref.h"

#include "sluice/expr.h"
#include "sluice/format.h"
#include "sluice/nexmark.h"
#include "sluice/rowcodec.h"
#include "sluice/strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*decode_fn)(const FmtSpec *spec, const char *buf, size_t len, bool final,
                         Batch *b, uint32_t cap, Arena *a, FmtResult *res, SlError *err);

typedef struct Work {
    const char   *name;
    int           ncols;
    const char  **names;
    SlType       *types;
    const uint8_t *need;
    StrBuf        in;
    uint32_t     *starts;   /* record k is [starts[k], starts[k + 1] - 1) */
    long          n;
} Work;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A checksum of every value of the batch's rows. */
static uint64_t sum_batch(const Batch *b)
{
    uint64_t h = 0;
    for (uint32_t c = 0; c < b->ncols; c++) {
        const Vector *v = &b->cols[c];
        for (uint32_t r = 0; r < b->nrows; r++) {
            if (vector_is_null(v, r)) {
                h = h * 31 + 7;
                continue;
            }
            switch (v->type.id) {
            case TYPE_TEXT:
                for (uint32_t i = 0; i < v->v.str[r].len; i++)
                    h = h * 131 + (unsigned char)v->v.str[r].ptr[i];
                break;
            case TYPE_BOOL:
                h = h * 31 + v->v.b[r];
                break;
            default:    /* the 8-byte types */
                h = h * 31 + (uint64_t)v->v.i64[r];
                break;
            }
        }
    }
    return h;
}

/* Decodes all of w's records; per_record: one call per record.  Returns the
 * CPU seconds; *rows, *dead and (with check) *sum what came out. */
static double run(const Work *w, decode_fn fn, bool per_record, bool check, int64_t *rows,
                  int64_t *dead, uint64_t *sum)
{
    Arena a, ba;
    arena_init(&a, 1 << 16);
    arena_init(&ba, 1 << 20);
    FmtSpec spec;
    fmt_spec_init(&spec, &a, w->ncols, w->names, w->types, NULL);
    spec.need = w->need;
    SlError err = {0};
    *rows = *dead = 0;
    *sum = 0;
    double t0 = cpu_s();
    if (!per_record) {
        FmtResult res = {0};
        while (res.consumed < (int64_t)w->in.len) {
            Batch *b = batch_alloc(&ba, w->types, (uint32_t)w->ncols, 1024);
            fn(&spec, w->in.data, w->in.len, true, b, 1024, &ba, &res, &err);
            *rows += b->nrows;
            *sum += check ? sum_batch(b) : 0;
            arena_reset(&ba);
            res.ndead = res.capdead = 0;
        }
        *dead = res.records - *rows;
    } else {
        long k = 0;
        while (k < w->n) {
            Batch *b = batch_alloc(&ba, w->types, (uint32_t)w->ncols, 1024);
            for (; k < w->n && b->nrows < 1024; k++) {
                FmtResult res = {0};
                const char *p = w->in.data + w->starts[k];
                size_t len = w->starts[k + 1] - 1 - w->starts[k];
                fn(&spec, p, len, true, b, 1024, &ba, &res, &err);
                *dead += res.ndead;
            }
            *rows += b->nrows;
            *sum += check ? sum_batch(b) : 0;
            arena_reset(&ba);
        }
    }
    double t = cpu_s() - t0;
    arena_destroy(&ba);
    arena_destroy(&a);
    return t;
}

static void end_record(Work *w, long k)
{
    strbuf_putc(&w->in, '\n');
    w->starts[k + 1] = (uint32_t)w->in.len;
}

static void make_bids(Work *w, long n)
{
    static const char *names[] = {"auction", "bidder", "price", "channel", "url", "date_time",
                                  "extra"};
    static SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN},
                             {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN},
                             {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    w->ncols = 7;
    w->names = names;
    w->types = types;
    w->n = n;
    w->starts = calloc((size_t)n + 1, sizeof(uint32_t));
    strbuf_init(&w->in);
    NexmarkConfig c;
    nexmark_config_default(&c);
    c.base_time_ms = 1767225600000;     /* 2026-01-01 */
    NexmarkEvent ev;
    for (long k = 0; k < n; k++) {
        nexmark_event(&c, nexmark_kind_event(NEXMARK_BID, k), &ev);
        time_t secs = (time_t)(ev.date_time_ms / 1000);
        struct tm tm;
        gmtime_r(&secs, &tm);
        /* As nexmark_gen.c's put_event writes a bid. */
        strbuf_printf(&w->in, "{\"event_type\":\"bid\",\"auction\":%" PRId64 ",\"bidder\":%" PRId64
                      ",\"price\":%" PRId64 ",\"channel\":", ev.auction, ev.bidder, ev.price);
        strbuf_put_json_string(&w->in, ev.channel, strlen(ev.channel));
        strbuf_puts(&w->in, ",\"url\":");
        strbuf_put_json_string(&w->in, ev.url, strlen(ev.url));
        strbuf_printf(&w->in, ",\"date_time\":\"%04d-%02d-%02d %02d:%02d:%02d.%03d\",\"extra\":",
                      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                      tm.tm_sec, (int)(ev.date_time_ms % 1000));
        strbuf_put_json_string(&w->in, ev.extra, strlen(ev.extra));
        strbuf_putc(&w->in, '}');
        end_record(w, k);
    }
}

static void make_wide(Work *w, long n)
{
    static const char *names[24];
    static SlType types[24];
    static char namebuf[24][16];
    /* i: bigint, d: double, b: boolean, s: text, t: timestamp */
    static const char kinds[] = "iiisdtbisdiisbtisdiisiin";
    w->ncols = 24;
    for (int c = 0; c < 24; c++) {
        snprintf(namebuf[c], sizeof(namebuf[c]), "%s_%d",
                 kinds[c] == 'i' ? "count" : kinds[c] == 'd' ? "amount" : kinds[c] == 'b' ? "flag"
                 : kinds[c] == 't' ? "ts" : "label", c);
        names[c] = namebuf[c];
        SlTypeId t = kinds[c] == 'i' || kinds[c] == 'n' ? TYPE_INT8
                   : kinds[c] == 'd' ? TYPE_FLOAT8 : kinds[c] == 'b' ? TYPE_BOOL
                   : kinds[c] == 't' ? TYPE_TIMESTAMP : TYPE_TEXT;
        types[c] = sl_type(t);
    }
    w->names = names;
    w->types = types;
    w->n = n;
    w->starts = calloc((size_t)n + 1, sizeof(uint32_t));
    strbuf_init(&w->in);
    uint64_t x = 88172645463325252ULL;
    for (long k = 0; k < n; k++) {
        strbuf_putc(&w->in, '{');
        for (int c = 0; c < 24; c++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            strbuf_printf(&w->in, "%s\"%s\": ", c ? ", " : "", names[c]);
            switch (kinds[c]) {
            case 'i': strbuf_printf(&w->in, "%" PRId64, (int64_t)(x % 10000000000ULL) - 5000); break;
            case 'n': strbuf_puts(&w->in, "null"); break;
            case 'd': strbuf_printf(&w->in, "%.2f", (double)(x % 1000000) / 100.0); break;
            case 'b': strbuf_puts(&w->in, x & 1 ? "true" : "false"); break;
            case 't':
                strbuf_printf(&w->in, "\"2026-%02d-%02d %02d:%02d:%02d.%06d\"", (int)(x % 12) + 1,
                              (int)(x >> 8 & 0xffff) % 28 + 1, (int)(x >> 16 & 0xffff) % 24,
                              (int)(x >> 24 & 0xffff) % 60, (int)(x >> 32 & 0xffff) % 60,
                              (int)(x >> 40 & 0xfffff) % 1000000);
                break;
            default:
                strbuf_printf(&w->in, "\"user-%" PRIu64 "@example.com\"", x % 100000);
                break;
            }
        }
        strbuf_putc(&w->in, '}');
        end_record(w, k);
    }
}

/* JSON_BENCH_AFTER_ONLY=1: time only today's decoder (for a profile). */
static int after_only;

static void bench(const Work *w, int rounds)
{
    for (int per = 0; per < 2; per++) {
        /* First the values, once (the checksum is not cheap), untimed. */
        int64_t rows[2], dead[2];
        uint64_t sum[2];
        for (int k = 0; k < 2; k++)
            run(w, k == 0 ? fmt_json_decode_ref : fmt_json_decode, per == 1, true, &rows[k],
                &dead[k], &sum[k]);
        if (rows[0] != rows[1] || dead[0] != dead[1] || sum[0] != sum[1] || rows[0] != w->n) {
            fprintf(stderr, "%s: MISMATCH rows %" PRId64 "/%" PRId64 " dead %" PRId64 "/%" PRId64
                    " sums %" PRIx64 "/%" PRIx64 "\n", w->name, rows[0], rows[1], dead[0], dead[1],
                    sum[0], sum[1]);
            exit(1);
        }
        double best[2] = {1e9, 1e9};
        for (int r = 0; r < rounds; r++)
            for (int k = after_only; k < 2; k++) {
                double t = run(w, k == 0 ? fmt_json_decode_ref : fmt_json_decode, per == 1,
                               false, &rows[k], &dead[k], &sum[k]);
                best[k] = t < best[k] ? t : best[k];
            }
        printf("%-8s %-10s  before %6.1f ns/record %5.2f M/s   after %6.1f ns/record %5.2f M/s"
               "   %.2fx   (%.0f bytes/record)\n",
               w->name, per ? "per record" : "lines", best[0] * 1e9 / (double)w->n,
               (double)w->n / best[0] / 1e6, best[1] * 1e9 / (double)w->n,
               (double)w->n / best[1] / 1e6, best[0] / best[1], (double)w->in.len / (double)w->n);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 500000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    const char *only = argc > 3 ? argv[3] : NULL;
    after_only = getenv("JSON_BENCH_AFTER_ONLY") != NULL;
    static const uint8_t q2[] = {1, 0, 1, 0, 0, 0, 0};
    Work bid = {.name = "bid"}, wide = {.name = "wide"};
    bool bids = !only || strcmp(only, "wide") != 0, wides = !only || strcmp(only, "wide") == 0;
    if (bids)
        make_bids(&bid, n);
    if (wides)
        make_wide(&wide, n);
    Work bidq2 = bid;
    bidq2.name = "bid q2";
    bidq2.need = q2;
    printf("%ld records a workload, best of %d rounds, before (f57dc53) and after alternated\n",
           n, rounds);
    if (!only || strcmp(only, "bid") == 0)
        bench(&bid, rounds);
    if (!only || strcmp(only, "q2") == 0)
        bench(&bidq2, rounds);
    if (!only || strcmp(only, "wide") == 0)
        bench(&wide, rounds);
    if (bids)
        strbuf_free(&bid.in);
    if (wides)
        strbuf_free(&wide.in);
    free(bid.starts);
    free(wide.starts);
    return 0;
}
