/*
 * eval_bench.c -- expression evaluation and SQL front-end throughput.
 *
 *   build-release/tools/bench/eval_bench [rows] [sql-bytes]
 *
 * 1. Evaluates  a*2+b > c AND s LIKE 'x%'  (a, b, c BIGINT, s TEXT) over
 *    `rows` rows (default 10 million) in batches of 1024 through ex_eval(),
 *    the way an operator does: one arena reset per batch.  The expression
 *    is the analyzer's own (SELECT $1*2+$2 > $3 AND $4 LIKE 'x%', its
 *    parameters turned into column references).  Reports rows/s and input
 *    values/s (4 per row), and the same for the arithmetic/comparison part
 *    alone and for the LIKE alone.
 * 2. Tokenizes, parses and analyzes `sql-bytes` (default 1 MB) of mixed
 *    FROM-less SQL (arithmetic, CASE, casts, string, date/time and jsonb
 *    functions) and reports MB/s and statements/s.
 *
 * Interface: main() only; it reports on stdout.  Built by meson
 * (tools/bench/meson.build) as an executable, not a test.
 */
#include "sluice/exec.h"
#include "sluice/plan.h"
#include "sql/parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The first expression of a FROM-less SELECT's plan. */
static Expr *first_expr(const Query *q)
{
    if (q->targets != NULL && q->ntargets > 0)
        return q->targets[0];
    for (const Plan *p = q->plan; p != NULL; p = p->child) {
        if (p->kind == PLAN_PROJECT)
            return p->u.project.exprs[0];
        if (p->kind == PLAN_VALUES)
            return p->u.values.rows[0][0];
    }
    return NULL;
}

/* $n becomes input column n-1. */
static void params_to_columns(Expr *e)
{
    if (e->kind == EXPR_PARAM)
        e->kind = EXPR_COLUMN;
    for (int i = 0; i < e->nargs; i++)
        params_to_columns(e->args[i]);
}

static Expr *analyze_expr(Arena *a, const char *sql, const SlType *types, int ntypes)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    List *stmts;
    Query *q;
    if (sql_parse(a, sql, (int)strlen(sql), &stmts, &err) < 0 ||
        sql_analyze(a, sql, list_nth(stmts, 0), types, ntypes, &q, &err) < 0) {
        fprintf(stderr, "%s: %s\n", sql, err.message);
        exit(1);
    }
    Expr *e = first_expr(q);
    if (e == NULL) {
        fprintf(stderr, "%s: no expression\n", sql);
        exit(1);
    }
    params_to_columns(e);
    return e;
}

/* Runs e over rows rows of the columns, batch by batch; returns seconds. */
static double run(Expr *e, uint32_t rows, const int64_t *a, const int64_t *b, const int64_t *c,
                  const SlStr *s, uint64_t *ntrue)
{
    Arena arena;
    arena_init(&arena, 256 * 1024);
    SlError err;
    memset(&err, 0, sizeof(err));
    Vector cols[4];
    memset(cols, 0, sizeof(cols));
    cols[0].type = cols[1].type = cols[2].type = sl_type(TYPE_INT8);
    cols[3].type = sl_type(TYPE_TEXT);
    Batch batch = {.ncols = 4, .cols = cols};
    uint64_t t = 0;
    double start = now_s();
    for (uint32_t off = 0; off < rows; off += 1024) {
        uint32_t n = SL_MIN(1024u, rows - off);
        cols[0].v.i64 = (int64_t *)a + off;
        cols[1].v.i64 = (int64_t *)b + off;
        cols[2].v.i64 = (int64_t *)c + off;
        cols[3].v.str = (SlStr *)s + off;
        for (int k = 0; k < 4; k++) {
            cols[k].len = n;
            cols[k].nulls = NULL;
        }
        batch.nrows = n;
        EvalCtx cx = {.arena = &arena, .err = &err};
        Vector out;
        if (ex_eval(&cx, e, &batch, n, &out) < 0) {
            fprintf(stderr, "eval: %s\n", err.message);
            exit(1);
        }
        for (uint32_t i = 0; i < n; i++)
            t += !vector_is_null(&out, i) && out.v.b[i];
        arena_reset(&arena);
    }
    double secs = now_s() - start;
    arena_destroy(&arena);
    *ntrue = t;
    return secs;
}

static void bench_eval(uint32_t rows)
{
    int64_t *a = sl_malloc(sizeof(int64_t) * rows), *b = sl_malloc(sizeof(int64_t) * rows),
            *c = sl_malloc(sizeof(int64_t) * rows);
    SlStr *s = sl_malloc(sizeof(SlStr) * rows);
    static const char *const words[] = {"xylophone", "apple", "xenon", "banana", "x", "zebra",
                                        "xavier", "kiwi"};
    uint64_t seed = 42;
    for (uint32_t i = 0; i < rows; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (int64_t)(seed >> 40) % 1000;
        b[i] = (int64_t)(seed >> 20) % 1000;
        c[i] = (int64_t)(seed >> 30) % 3000;
        const char *w = words[(seed >> 13) & 7];
        s[i].ptr = w;
        s[i].len = (uint32_t)strlen(w);
    }
    Arena qa;
    arena_init(&qa, 0);
    SlType types[4] = {sl_type(TYPE_INT8), sl_type(TYPE_INT8), sl_type(TYPE_INT8),
                       sl_type(TYPE_TEXT)};
    struct {
        const char *name;
        const char *sql;
        int         values;     /* input values per row */
    } cases[] = {
        {"a*2+b > c AND s LIKE 'x%'", "SELECT $1*2+$2 > $3 AND $4 LIKE 'x%'", 4},
        {"a*2+b > c", "SELECT $1*2+$2 > $3", 3},
        {"s LIKE 'x%'", "SELECT $4 LIKE 'x%'", 1},
    };
    printf("expression evaluation: %u rows in batches of 1024\n", rows);
    for (size_t k = 0; k < SL_ARRAY_LEN(cases); k++) {
        Expr *e = analyze_expr(&qa, cases[k].sql, types, 4);
        uint64_t ntrue;
        run(e, SL_MIN(rows, 1000000u), a, b, c, s, &ntrue); /* warm up */
        double secs = run(e, rows, a, b, c, s, &ntrue);
        printf("  %-28s %7.3f s  %8.1f M rows/s  %8.1f M values/s  (%llu true)\n",
               cases[k].name, secs, rows / secs / 1e6, rows * (double)cases[k].values / secs / 1e6,
               (unsigned long long)ntrue);
    }
    arena_destroy(&qa);
    sl_free(a);
    sl_free(b);
    sl_free(c);
    sl_free(s);
}

static void bench_front_end(size_t bytes)
{
    static const char *const stmts[] = {
        "SELECT 1 + 2 * 3 - 4 / 2, 10 % 3, -5, abs(-7), round(2.567, 2), power(2, 10);",
        "SELECT CASE WHEN 1 < 2 THEN 'yes' WHEN 2 < 3 THEN 'maybe' ELSE 'no' END AS answer, "
        "COALESCE(NULL, 'x'), NULLIF(1, 1), GREATEST(1, 5, 3), LEAST(4, 2);",
        "SELECT upper('hello') || ' ' || lower('WORLD'), substr('streaming', 2, 4), "
        "position('am' IN 'stream'), replace('a-b-c', '-', '+'), length('sluice'), "
        "trim(BOTH 'x' FROM 'xxhixx'), split_part('a,b,c', ',', 2);",
        "SELECT DATE '2024-01-02' + 30, TIMESTAMP '2024-01-02 03:04:05' + INTERVAL '1 day 2 hours', "
        "date_trunc('hour', TIMESTAMP '2024-05-06 07:08:09'), extract(epoch FROM "
        "TIMESTAMP '2024-05-06 07:08:09'), now() - INTERVAL '5 minutes';",
        "SELECT '{\"user\": {\"id\": 42, \"tags\": [\"a\", \"b\"]}}'::jsonb -> 'user' ->> 'id', "
        "('{\"n\": 5}'::jsonb -> 'n')::int + 1, '{\"a\": 1}'::jsonb ? 'a';",
        "SELECT 1.5::numeric(10,2) * 3, '42'::int8 + 1, 3.0::float8 / 7, CAST('12' AS integer), "
        "'t'::boolean AND NOT false, 5 BETWEEN 1 AND 10, 'abc' LIKE 'a%', 3 IN (1, 2, 3);",
        "SELECT $1::int + $2::int, $3::text || 'suffix', $4::timestamp - $5::timestamp;",
        "SELECT x FROM (SELECT 1 AS x) AS t WHERE x > 0;",
    };
    StrBuf sql;
    strbuf_init(&sql);
    size_t nstmts = 0;
    while (sql.len < bytes) {
        strbuf_puts(&sql, stmts[nstmts % SL_ARRAY_LEN(stmts)]);
        strbuf_putc(&sql, '\n');
        nstmts++;
    }
    /* split into statements first, as the server gets them one message at
     * a time; parse + analyze each */
    double start = now_s();
    size_t done = 0, failed = 0;
    const char *p = sql.data;
    Arena a;
    arena_init(&a, 64 * 1024);
    while (*p) {
        const char *nl = strchr(p, '\n');
        int len = (int)(nl - p);
        SlError err;
        memset(&err, 0, sizeof(err));
        List *list;
        if (sql_parse(&a, p, len, &list, &err) == 0) {
            for (int k = 0; k < list_len(list); k++) {
                Query *q;
                if (sql_analyze(&a, p, list_nth(list, k), NULL, 0, &q, &err) < 0) {
                    if (failed++ == 0)
                        fprintf(stderr, "refused: %.*s: %s\n", len, p, err.message);
                }
                sl_error_clear(&err);
            }
        } else {
            failed++;
        }
        sl_error_clear(&err);
        arena_reset(&a);
        done++;
        p = nl + 1;
    }
    double secs = now_s() - start;
    arena_destroy(&a);
    printf("tokenize + parse + analyze: %zu bytes, %zu statements (%zu refused): %.3f s, "
           "%.1f MB/s, %.0f statements/s\n",
           sql.len, done, failed, secs, sql.len / secs / 1e6, done / secs);
    strbuf_free(&sql);
}

int main(int argc, char **argv)
{
    uint32_t rows = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000000u;
    size_t bytes = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 1u << 20;
    bench_eval(rows);
    bench_front_end(bytes);
    return 0;
}
