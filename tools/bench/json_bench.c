/*
 * json_bench.c -- record decoding speed: sluice's schema-directed JSON
 * decoder (src/connectors/format_json.c) against json-c building an object
 * per line and reading the fields out of it, both filling the same column
 * vectors; and ours again reading only 4 of the 7 columns (FmtSpec.need, as
 * for a query that reads auction, bidder, price and date_time).  The
 * figures go to docs/benchmarks.md ("Record decoding").
 *
 *   json_bench [records]     default 1,000,000 Nexmark-bid-like records
 *
 * Times are the process's CPU time (the program has one thread), so that
 * other work on a shared machine does not count.
 */
#include "sluice/expr.h"
#include "sluice/format.h"
#include "sluice/rowcodec.h"
#include "sluice/strbuf.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *names[] = {"auction", "bidder", "price", "channel", "url", "date_time", "extra"};
static SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN},
                         {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};

static int64_t run_ours(const StrBuf *in, const uint8_t *need, int64_t *checksum)
{
    Arena a;
    arena_init(&a, 1 << 20);
    FmtSpec spec;
    fmt_spec_init(&spec, &a, 7, names, types, NULL);
    spec.need = need;
    FmtResult res = {0};
    SlError err = {0};
    int64_t rows = 0;
    Arena batch_arena;
    arena_init(&batch_arena, 1 << 20);
    while (res.consumed < (int64_t)in->len) {
        Batch *b = batch_alloc(&batch_arena, types, 7, 1024);
        fmt_json_decode(&spec, in->data, in->len, true, b, 1024, &batch_arena, &res, &err);
        rows += b->nrows;
        for (uint32_t r = 0; r < b->nrows; r++)
            *checksum += b->cols[2].v.i64[r];
        arena_reset(&batch_arena);
    }
    arena_destroy(&batch_arena);
    arena_destroy(&a);
    return rows;
}

static int64_t run_jsonc(const StrBuf *in, int64_t *checksum)
{
    Arena batch_arena;
    arena_init(&batch_arena, 1 << 20);
    int64_t rows = 0;
    const char *p = in->data, *end = in->data + in->len;
    json_tokener *tok = json_tokener_new();
    Batch *b = batch_alloc(&batch_arena, types, 7, 1024);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, p, (int)n);
        if (o != NULL) {
            uint32_t r = b->nrows;
            for (int c = 0; c < 7; c++) {
                json_object *f;
                Vector *v = &b->cols[c];
                v->nulls[r] = 1;
                if (!json_object_object_get_ex(o, names[c], &f) || f == NULL)
                    continue;
                v->nulls[r] = 0;
                if (types[c].id == TYPE_INT8) {
                    v->v.i64[r] = json_object_get_int64(f);
                } else {
                    const char *s = json_object_get_string(f);
                    v->v.str[r].ptr = arena_strdup(&batch_arena, s);
                    v->v.str[r].len = (uint32_t)json_object_get_string_len(f);
                }
            }
            *checksum += b->cols[2].v.i64[r];
            json_object_put(o);
            rows++;
            if (++b->nrows == 1024) {
                arena_reset(&batch_arena);
                b = batch_alloc(&batch_arena, types, 7, 1024);
            }
        }
        p += n + 1;
    }
    json_tokener_free(tok);
    arena_destroy(&batch_arena);
    return rows;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    StrBuf in;
    strbuf_init(&in);
    srand(42);
    for (long i = 0; i < n; i++)
        strbuf_printf(&in,
            "{\"auction\": %ld, \"bidder\": %d, \"price\": %d, \"channel\": \"channel-%d\", "
            "\"url\": \"https://www.nexmark.com/item/%d/bid?q=%d\", \"date_time\": %ld, "
            "\"extra\": \"%08x%08x\"}\n",
            1000 + i / 50, rand() % 100000, rand() % 1000000, rand() % 10000, rand(), rand(),
            1700000000000L + i, rand(), rand());
    double mb = (double)in.len / 1e6;
    for (int round = 0; round < 2; round++) {
        static const uint8_t four[] = {1, 1, 1, 0, 0, 1, 0};
        int64_t c1 = 0, c2 = 0, c3 = 0;
        double t0 = now_s();
        int64_t r1 = run_ours(&in, NULL, &c1);
        double t1 = now_s();
        int64_t r2 = run_jsonc(&in, &c2);
        double t2 = now_s();
        /* The best of 3 each, alternating, against the noise of a shared machine. */
        double all7 = t1 - t0, some = 1e9;
        int64_t r3 = 0;
        for (int k = 0; k < 3; k++) {
            double u0 = now_s();
            c3 = 0;
            r3 = run_ours(&in, four, &c3);
            double u1 = now_s();
            int64_t c4 = 0;
            run_ours(&in, NULL, &c4);
            double u2 = now_s();
            some = u1 - u0 < some ? u1 - u0 : some;
            all7 = u2 - u1 < all7 ? u2 - u1 : all7;
        }
        if (r1 != n || r2 != n || r3 != n || c1 != c2 || c1 != c3) {
            fprintf(stderr, "mismatch: %lld/%lld rows, checksums %lld/%lld\n", (long long)r1,
                    (long long)r2, (long long)c1, (long long)c2);
            return 1;
        }
        printf("round %d: %ld records, %.1f MB\n", round, n, mb);
        printf("  sluice schema-directed: %.3f s  %.2f M records/s  %.0f MB/s\n", t1 - t0,
               (double)n / (t1 - t0) / 1e6, mb / (t1 - t0));
        printf("  json-c object per line: %.3f s  %.2f M records/s  %.0f MB/s\n", t2 - t1,
               (double)n / (t2 - t1) / 1e6, mb / (t2 - t1));
        printf("  speedup: %.2fx\n", (t2 - t1) / (t1 - t0));
        printf("  sluice, all 7 columns, best of 4: %.3f s  %.2f M records/s\n", all7,
               (double)n / all7 / 1e6);
        printf("  sluice, 4 of 7 columns, best of 3: %.3f s  %.2f M records/s  (%.2fx)\n",
               some, (double)n / some / 1e6, all7 / some);
    }
    strbuf_free(&in);
    return 0;
}
