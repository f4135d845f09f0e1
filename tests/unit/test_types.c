/*
 * test_types.c -- the date/time, jsonb, string and bytea types below SQL:
 * text input and output round trips, the vectorized kernels over batches
 * with NULLs and selections (what the one-row slt tests cannot reach), the
 * LIKE fast paths against the general matcher, now() being one value per
 * EvalCtx, named time zones across daylight saving changes, and the
 * timestamp and integer text fast paths against the general code; arrays'
 * bytes against array_send's layout, their order and equality keys; the
 * transaction modes among a session's settings.
 *
 *   main()    runs every test_*; LeakSanitizer checks that the arenas own
 *             everything
 */
#include "unit.h"
#include "types/datetime.h"
#include "functions/kernels.h"
#include "sql/parser.h"
#include "sluice/exec.h"
#include "sluice/plan.h"
#include "sluice/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Parses text as t and prints it back. */
static void expect_io(SlTypeId t, const char *in, const char *want)
{
    Arena a;
    arena_init(&a, 0);
    SlError err;
    memset(&err, 0, sizeof(err));
    Vector v;
    vector_init(&v, &a, sl_type(t), 1, false);
    StrBuf b;
    strbuf_init(&b);
    if (value_parse_text(&a, sl_type(t), in, strlen(in), &v, 0, -1, &err) < 0)
        strbuf_printf(&b, "ERROR %s %s", err.sqlstate, err.message);
    else
        value_format_text(&v, 0, &b);
    CHECK(strcmp(b.data ? b.data : "", want) == 0, "%s '%s': got '%s', want '%s'", type_name(t),
          in, b.data ? b.data : "", want);
    strbuf_free(&b);
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void test_io(void)
{
    expect_io(TYPE_DATE, "2020-02-29", "2020-02-29");
    expect_io(TYPE_DATE, "Jan 8 44 BC", "0044-01-08 BC");
    expect_io(TYPE_DATE, "2020-02-30", "ERROR 22008 date/time field value out of range: \"2020-02-30\"");
    expect_io(TYPE_TIMESTAMP, "2020-01-02T03:04:05.1234565", "2020-01-02 03:04:05.123456");
    expect_io(TYPE_TIMESTAMPTZ, "2020-01-02 03:04:05-05:30", "2020-01-02 08:34:05+00");
    expect_io(TYPE_TIMESTAMPTZ, "2020-07-01 12:00 America/New_York", "2020-07-01 16:00:00+00");
    expect_io(TYPE_TIMESTAMPTZ, "2020-01-01 12:00 america/new_york", "2020-01-01 17:00:00+00");
    expect_io(TYPE_TIMESTAMP, "infinity", "infinity");
    expect_io(TYPE_INTERVAL, "1 day -02:03:04.5", "1 day -02:03:04.5");
    expect_io(TYPE_INTERVAL, "P1Y2M3DT4H5M6.5S", "1 year 2 mons 3 days 04:05:06.5");
    expect_io(TYPE_INTERVAL, "-1 days +02:00", "-1 days +02:00:00");
    expect_io(TYPE_INTERVAL, "x", "ERROR 22007 invalid input syntax for type interval: \"x\"");
    expect_io(TYPE_JSONB, "{\"b\":1,\"a\":[true,null,1.50e1],\"a\":\"\\u00e9\"}",
              "{\"a\": \"é\", \"b\": 1}");
    expect_io(TYPE_JSONB, "[1,", "ERROR 22P02 invalid input syntax for type json");
    expect_io(TYPE_BYTEA, "\\x00ff", "\\x00ff");
    expect_io(TYPE_BYTEA, "a\\\\b\\001", "\\x615c6201");
}

/* A batch of n rows of text, every third NULL. */
static void text_column(Arena *a, Vector *v, uint32_t n, const char *const *vals, int nvals)
{
    vector_init(v, a, sl_type(TYPE_TEXT), n, true);
    for (uint32_t i = 0; i < n; i++) {
        v->nulls[i] = i % 3 == 2;
        v->v.str[i].ptr = vals[i % (uint32_t)nvals];
        v->v.str[i].len = (uint32_t)strlen(vals[i % (uint32_t)nvals]);
    }
}

/* Analyzes SELECT sql over parameters of the given types and returns its
 * expression with $n turned into input column n-1. */
static void params_to_columns(Expr *e)
{
    if (e->kind == EXPR_PARAM)
        e->kind = EXPR_COLUMN;
    for (int i = 0; i < e->nargs; i++)
        params_to_columns(e->args[i]);
}

static Expr *expr_of(Arena *a, const char *sql, const SlType *types, int ntypes)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    List *stmts;
    Query *q;
    if (sql_parse(a, sql, (int)strlen(sql), &stmts, &err) < 0 ||
        sql_analyze(a, sql, list_nth(stmts, 0), types, ntypes, &q, &err) < 0) {
        CHECK(false, "%s: %s", sql, err.message);
        sl_error_clear(&err);
        return NULL;
    }
    Expr *e = NULL;
    if (q->targets != NULL)
        e = q->targets[0];
    for (const Plan *p = q->plan; e == NULL && p != NULL; p = p->child) {
        if (p->kind == PLAN_PROJECT)
            e = p->u.project.exprs[0];
        else if (p->kind == PLAN_VALUES)
            e = p->u.values.rows[0][0];
    }
    if (e != NULL)
        params_to_columns(e);
    return e;
}

static void test_batches(void)
{
    Arena a;
    arena_init(&a, 0);
    SlError err;
    memset(&err, 0, sizeof(err));
    static const char *const vals[] = {"{\"k\": 1, \"s\": \"x\"}", "{\"k\": [2]}", "[3]", "{}"};
    Vector cols[2];
    const uint32_t n = 3000;
    text_column(&a, &cols[0], n, vals, 4);
    text_column(&a, &cols[1], n, (const char *const[]){"a", "bc", ""}, 3);
    Batch batch = {.nrows = n, .ncols = 2, .cols = cols};
    SlType types[2] = {sl_type(TYPE_TEXT), sl_type(TYPE_TEXT)};
    EvalCtx cx = {.arena = &a, .err = &err};

    /* concat skips NULLs and is never NULL itself */
    Expr *e = expr_of(&a, "SELECT concat($1::jsonb -> 'k', '-', $2)", types, 2);
    Vector out;
    CHECK(e != NULL && ex_eval(&cx, e, &batch, n, &out) == 0);
    for (uint32_t i = 0; e && i < n; i++) {
        char want[64];
        const char *k = i % 3 == 2 ? "" : (i % 4 == 0 ? "1" : i % 4 == 1 ? "[2]" : "");
        const char *s2 = i % 3 == 2 ? "" : (i % 3 == 0 ? "a" : "bc");
        snprintf(want, sizeof(want), "%s-%s", k, s2);
        CHECK(!vector_is_null(&out, i) && out.v.str[i].len == strlen(want) &&
                  memcmp(out.v.str[i].ptr, want, strlen(want)) == 0,
              "row %u: '%.*s', want '%s'", i, (int)out.v.str[i].len, out.v.str[i].ptr, want);
    }

    /* ->> over a batch: NULL for NULL input, a missing key or a non-object */
    e = expr_of(&a, "SELECT ($1::jsonb ->> 's') || $2", types, 2);
    CHECK(e != NULL && ex_eval(&cx, e, &batch, n, &out) == 0);
    for (uint32_t i = 0; e && i < n; i++) {
        bool want_null = i % 3 == 2 || i % 4 != 0;
        CHECK(vector_is_null(&out, i) == want_null, "row %u", i);
    }

    /* only the selected rows are computed; others stay untouched */
    uint32_t sel[3] = {3, 4, 2999};
    e = expr_of(&a, "SELECT length($2) + 1", types, 2);
    CHECK(e != NULL && ex_eval_sel(&cx, e, &batch, n, sel, 3, &out) == 0);
    CHECK(e == NULL || (out.v.i32[3] == 2 && out.v.i32[4] == 3 && vector_is_null(&out, 2999)));
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* The LIKE fast paths agree with the matcher on every shape. */
static void test_like(void)
{
    static const char *const texts[] = {"", "x", "xy", "yx", "axb", "xyz", "%", "a%b", "xx"};
    static const char *const pats[] = {"x%", "%x%", "x", "%", "", "xy%", "%%", "x%%", "%y"};
    Arena a;
    arena_init(&a, 0);
    SlError err;
    memset(&err, 0, sizeof(err));
    EvalCtx cx = {.arena = &a, .err = &err};
    uint32_t nt = SL_ARRAY_LEN(texts);
    for (size_t p = 0; p < SL_ARRAY_LEN(pats); p++) {
        Vector args[3], fast, slow;
        vector_init(&args[0], &a, sl_type(TYPE_TEXT), nt, true);
        vector_init(&args[1], &a, sl_type(TYPE_TEXT), nt, true);
        vector_init(&args[2], &a, sl_type(TYPE_TEXT), nt, true);
        for (uint32_t i = 0; i < nt; i++) {
            args[0].v.str[i] = (SlStr){texts[i], (uint32_t)strlen(texts[i])};
            args[1].v.str[i] = (SlStr){pats[p], (uint32_t)strlen(pats[p])};
            args[2].v.str[i] = (SlStr){"\\", 1};
        }
        vector_init(&fast, &a, sl_type(TYPE_BOOL), nt, true);
        vector_init(&slow, &a, sl_type(TYPE_BOOL), nt, true);
        Expr e;
        memset(&e, 0, sizeof(e));
        CHECK(k_like(&cx, &e, args, &fast, NULL, nt) == 0);
        CHECK(k_like_esc(&cx, &e, args, &slow, NULL, nt) == 0);   /* the matcher */
        for (uint32_t i = 0; i < nt; i++)
            CHECK(fast.v.b[i] == slow.v.b[i], "'%s' LIKE '%s'", texts[i], pats[p]);
    }
    arena_destroy(&a);
}

/* now() is one value in an EvalCtx, however many evaluations ask. */
static void test_now(void)
{
    Arena a;
    arena_init(&a, 0);
    SlError err;
    memset(&err, 0, sizeof(err));
    Expr *e = expr_of(&a, "SELECT now()", NULL, 0);
    EvalCtx cx = {.arena = &a, .err = &err};
    Vector v1, v2;
    CHECK(e != NULL && ex_eval(&cx, e, NULL, 4, &v1) == 0);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    CHECK(e != NULL && ex_eval(&cx, e, NULL, 1, &v2) == 0);
    CHECK(e == NULL || (v1.v.i64[0] == v2.v.i64[0] && v1.v.i64[3] == v1.v.i64[0]));
    CHECK(e == NULL || v1.v.i64[0] == cx.now);
    arena_destroy(&a);
}

static void test_zones(void)
{
    const DtTz *ny = dt_tz_find("America/New_York", 16);
    CHECK(ny != NULL);
    CHECK(dt_tz_find("america/NEW_york", 16) == ny, "lookups are case-insensitive and cached");
    CHECK(dt_tz_find("../../etc/passwd", 16) == NULL);
    CHECK(dt_tz_find("Nowhere/Special", 15) == NULL);
    if (ny == NULL)
        return;
    int64_t t;
    DtTm tm = {2020, 3, 8, 2, 30, 0, 0};    /* in the spring-forward gap */
    CHECK(dt_tm2ts(&tm, &t) == 0);
    CHECK(dt_tz_local_offset(ny, t) == -5 * 3600, "the gap reads as standard time");
    DtTm tm2 = {2020, 11, 1, 1, 30, 0, 0};  /* in the fall-back overlap */
    CHECK(dt_tm2ts(&tm2, &t) == 0);
    CHECK(dt_tz_local_offset(ny, t) == -5 * 3600, "the overlap reads as the later offset");
    DtTm tm3 = {2070, 7, 1, 12, 0, 0, 0};   /* past the file's transitions: the rule */
    CHECK(dt_tm2ts(&tm3, &t) == 0);
    CHECK(dt_tz_utc_offset(ny, t) == -4 * 3600);
}

/* jsonb keys for the executor: PostgreSQL's order, equality by value. */
static void test_jsonb_keys(void)
{
    /* PostgreSQL's order, quirk included: a top-level scalar is a
     * one-element array, so it sorts after [] and before [1, 2] */
    static const char *const ordered[] = {"[]", "null", "\"a\"", "1", "2.5", "false", "true",
                                          "[1, 2]", "{}", "{\"a\": 1}", "{\"b\": 0}",
                                          "{\"a\": 1, \"b\": 2}"};
    for (size_t i = 0; i < SL_ARRAY_LEN(ordered); i++) {
        for (size_t j = 0; j < SL_ARRAY_LEN(ordered); j++) {
            SlStr x = {ordered[i], (uint32_t)strlen(ordered[i])};
            SlStr y = {ordered[j], (uint32_t)strlen(ordered[j])};
            int c = jsonb_cmp(&x, &y), want = i < j ? -1 : i > j;
            CHECK(c == want, "%s vs %s: %d", ordered[i], ordered[j], c);
        }
    }
    StrBuf k1, k2;
    strbuf_init(&k1);
    strbuf_init(&k2);
    SlStr a = {"{\"a\": 1.50, \"b\": [0.0]}", 24}, b = {"{\"a\": 1.5, \"b\": [0]}", 21};
    jsonb_key(&a, &k1);
    jsonb_key(&b, &k2);
    CHECK(k1.len == k2.len && memcmp(k1.data, k2.data, k1.len) == 0, "'%s' vs '%s'", k1.data,
          k2.data);
    CHECK(jsonb_cmp(&a, &b) == 0);
    strbuf_free(&k1);
    strbuf_free(&k2);
}

/* dt_parse_timestamp's ISO fast path ("YYYY-MM-DD HH:MM:SS[.f]") against
 * PostgreSQL's general parser (reached by a leading space), and the
 * formatting without printf against printf's, over random timestamps. */
static void test_timestamp_fast_paths(void)
{
    srand(42);
    for (int n = 0; n < 20000; n++) {
        int y = 1 + rand() % 9999, mo = 1 + rand() % 12, d = 1 + rand() % 31;
        int h = rand() % 24, mi = rand() % 60, sec = rand() % 60, nf = rand() % 7;
        int f = rand() % 1000000;
        char fast[64], slow[80], frac[16] = "";
        if (nf > 0) {
            int mod = 1;
            for (int k = 0; k < nf; k++)
                mod *= 10;
            snprintf(frac, sizeof(frac), ".%0*d", nf, f % mod);
        }
        snprintf(fast, sizeof(fast), "%04d-%02d-%02d%c%02d:%02d:%02d%s", y, mo, d,
                 n % 2 ? 'T' : ' ', h, mi, sec, frac);
        snprintf(slow, sizeof(slow), " %s", fast);
        for (int tz = 0; tz < 2; tz++) {
            SlError e1, e2;
            memset(&e1, 0, sizeof(e1));
            memset(&e2, 0, sizeof(e2));
            int64_t t1 = 0, t2 = 0;
            int r1 = dt_parse_timestamp(fast, strlen(fast), tz, &t1, -1, &e1);
            int r2 = dt_parse_timestamp(slow, strlen(slow), tz, &t2, -1, &e2);
            CHECK(r1 == r2 && (r1 < 0 || t1 == t2), "'%s': %d %lld vs %d %lld", fast, r1,
                  (long long)t1, r2, (long long)t2);
            CHECK(r1 < 0 || strcmp(e1.sqlstate, "") == 0);
            sl_error_clear(&e1);
            sl_error_clear(&e2);
            if (r1 < 0 || tz)
                continue;
            /* Printed back: printf's form of the same fields. */
            StrBuf out;
            strbuf_init(&out);
            dt_format_timestamp(t1, false, &out);
            char want[80];
            int fs = 0;
            if (nf > 0) {
                fs = atoi(frac + 1);
                for (int k = nf; k < 6; k++)
                    fs *= 10;
            }
            snprintf(want, sizeof(want), "%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, sec);
            if (fs != 0) {
                char f6[16];
                snprintf(f6, sizeof(f6), "%06d", fs);
                int k = 6;
                while (f6[k - 1] == '0')
                    k--;
                snprintf(want + strlen(want), sizeof(want) - strlen(want), ".%.*s", k, f6);
            }
            CHECK(strcmp(out.data, want) == 0, "'%s' printed '%s', want '%s'", fast, out.data,
                  want);
            strbuf_free(&out);
        }
    }
    /* Integers without printf. */
    static const int64_t ints[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN,
                                   INT32_MIN, INT16_MAX};
    for (size_t i = 0; i < SL_ARRAY_LEN(ints); i++) {
        StrBuf b;
        strbuf_init(&b);
        strbuf_put_int(&b, ints[i]);
        char want[32];
        snprintf(want, sizeof(want), "%lld", (long long)ints[i]);
        CHECK(strcmp(b.data, want) == 0, "%s vs %s", b.data, want);
        strbuf_free(&b);
    }
}

/* Parses text as an array of elem into a one-row vector in a. */
static Vector array_of(Arena *a, SlTypeId elem, const char *text)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    Vector v;
    vector_init(&v, a, sl_array_type(elem, -1), 1, false);
    CHECK(value_parse_text(a, v.type, text, strlen(text), &v, 0, -1, &err) == 0, "%s: %s", text,
          err.message ? err.message : "");
    sl_error_clear(&err);
    return v;
}

/* Arrays: the value is array_send's layout byte for byte (PostgreSQL's
 * documented binary form, written out here by hand), the order is
 * array_cmp's (element by element, NULL last, then length), and equality
 * keys follow "=" (1.0 and 1.00 are one numeric). */
static void test_arrays(void)
{
    Arena a;
    arena_init(&a, 0);
    Vector v = array_of(&a, TYPE_INT4, "{7, NULL}");
    static const uint8_t want[] = {0, 0, 0, 1,  0, 0, 0, 1,  0, 0, 0, 23,   /* ndim, nulls, int4 */
                                   0, 0, 0, 2,  0, 0, 0, 1,                 /* 2 elements from 1 */
                                   0, 0, 0, 4,  0, 0, 0, 7,                 /* 7 */
                                   0xFF, 0xFF, 0xFF, 0xFF};                 /* NULL */
    CHECK(v.v.str[0].len == sizeof(want) && memcmp(v.v.str[0].ptr, want, sizeof(want)) == 0,
          "int4[] '{7,NULL}' is not array_send's layout");
    Vector e = array_of(&a, TYPE_TEXT, "{}");
    static const uint8_t empty[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25};
    CHECK(e.v.str[0].len == sizeof(empty) && memcmp(e.v.str[0].ptr, empty, sizeof(empty)) == 0,
          "text[] '{}' is not array_send's empty array");
    /* binary in: the same bytes read back, a bad OID is 22P03 */
    SlStr back;
    SlError err;
    memset(&err, 0, sizeof(err));
    CHECK(array_recv(&a, sl_type(TYPE_INT4), (const char *)want, sizeof(want), &back, 1, &err) ==
              0 && back.len == sizeof(want) && memcmp(back.ptr, want, sizeof(want)) == 0,
          "array_recv of int4[] {7,NULL}");
    CHECK(array_recv(&a, sl_type(TYPE_TEXT), (const char *)want, sizeof(want), &back, 1, &err) <
              0 && strcmp(err.sqlstate, ERRCODE_INVALID_BINARY_REPRESENTATION) == 0,
          "an int4 array read as text[] must be 22P03");
    sl_error_clear(&err);
    /* order */
    static const char *const sorted[] = {"{}", "{1}", "{1,2}", "{1,NULL}", "{2}", "{NULL}"};
    for (size_t i = 0; i + 1 < SL_ARRAY_LEN(sorted); i++) {
        Vector x = array_of(&a, TYPE_INT4, sorted[i]), y = array_of(&a, TYPE_INT4, sorted[i + 1]);
        CHECK(value_cmp(&x, 0, &y, 0) < 0 && value_cmp(&y, 0, &x, 0) > 0,
              "%s must sort before %s", sorted[i], sorted[i + 1]);
    }
    /* equality keys */
    Vector n1 = array_of(&a, TYPE_NUMERIC, "{1.0,NULL}"), n2 = array_of(&a, TYPE_NUMERIC, "{1.00,NULL}");
    Vector n3 = array_of(&a, TYPE_NUMERIC, "{1.0}");
    StrBuf k1, k2, k3;
    strbuf_init(&k1);
    strbuf_init(&k2);
    strbuf_init(&k3);
    ex_key_encode(&n1, 1, 0, &k1);
    ex_key_encode(&n2, 1, 0, &k2);
    ex_key_encode(&n3, 1, 0, &k3);
    CHECK(k1.len == k2.len && memcmp(k1.data, k2.data, k1.len) == 0,
          "{1.0,NULL} and {1.00,NULL} must be one key");
    CHECK(k1.len != k3.len || memcmp(k1.data, k3.data, k1.len) != 0,
          "{1.0,NULL} and {1.0} must be two keys");
    strbuf_free(&k1);
    strbuf_free(&k2);
    strbuf_free(&k3);
    arena_destroy(&a);
}

/* The transaction modes among the settings: SET of them is the server's
 * (55P02 here), their values are what the server sets; the defaults'
 * enums take what sluice gives and refuse the rest with 0A000. */
static void test_xact_settings(void)
{
    SlSettings *s = settings_new("u");
    SlError err = {0};
    CHECK(strcmp(settings_get(s, "transaction_isolation", NULL, &err), "read committed") == 0,
          "transaction_isolation default");
    CHECK(strcmp(settings_get(s, "TRANSACTION_READ_ONLY", NULL, &err), "off") == 0,
          "transaction_read_only default");
    uint64_t before = settings_changes(s);
    CHECK(settings_set(s, "transaction_isolation", "read committed", SET_SESSION, false, NULL,
                       &err) < 0 && strcmp(err.sqlstate, "55P02") == 0,
          "SET transaction_isolation is the server's");
    sl_error_clear(&err);
    CHECK(settings_set(s, "default_transaction_isolation", "Serializable", SET_SESSION, false,
                       NULL, &err) < 0 && strcmp(err.sqlstate, "0A000") == 0,
          "serializable refused");
    sl_error_clear(&err);
    CHECK(settings_set(s, "default_transaction_isolation", "nonsense", SET_SESSION, false, NULL,
                       &err) < 0 && strcmp(err.sqlstate, "22023") == 0,
          "an unknown level");
    sl_error_clear(&err);
    CHECK(settings_changes(s) == before, "failed SETs change nothing");
    CHECK(settings_set(s, "default_transaction_isolation", "READ UNCOMMITTED", SET_SESSION,
                       false, NULL, &err) == 0 &&
              strcmp(settings_get(s, "default_transaction_isolation", NULL, &err),
                     "read uncommitted") == 0 && settings_changes(s) == before + 1,
          "read uncommitted, canonical");
    CHECK(settings_xact_value("transaction_isolation", "serializable", &err) == 0 &&
              settings_xact_value("transaction_isolation", "Read Committed", &err) == 2 &&
              settings_xact_value("transaction_read_only", "yes", &err) == 1 &&
              settings_xact_value("transaction_read_only", "off", &err) == 0,
          "settings_xact_value");
    CHECK(settings_xact_value("transaction_isolation", "snapshot", &err) < 0 &&
              strcmp(err.sqlstate, "22023") == 0,
          "settings_xact_value: no such level");
    sl_error_clear(&err);
    settings_set_fixed(s, "transaction_isolation", "read uncommitted");
    CHECK(strcmp(settings_get(s, "transaction_isolation", NULL, &err), "read uncommitted") == 0,
          "the server sets the block's level");
    settings_free(s);
}

int main(void)
{
    test_xact_settings();
    test_arrays();
    test_timestamp_fast_paths();
    test_jsonb_keys();
    test_io();
    test_batches();
    test_like();
    test_now();
    test_zones();
    return unit_done("types");
}
