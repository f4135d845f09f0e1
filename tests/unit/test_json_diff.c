/*
 * test_json_diff.c -- the JSON decoder (src/connectors/format_json.c)
 * against the decoder of main f57dc53 (json_ref.c, its oracle): for many
 * generated and mutated records, the same decision -- the same rows with
 * the same values, the same dead letters with the same reasons (byte
 * positions included), the same records and bytes consumed.
 *
 * The records: members in every order (all permutations of four columns)
 * and with unknown keys between them, white space everywhere it may be,
 * repeated keys, values at the edges of each type (integers around 2^63,
 * 2^31 and 2^15 and with leading zeros, doubles at 1e308, 1e-400, 2^53 and
 * with 10^22 and 10^23, -0, booleans and near-misses), strings with every
 * escape, unicode escapes, surrogate pairs and lone surrogates, \u0000, raw
 * control bytes and invalid UTF-8, keys written with escapes; each record
 * also truncated at every byte, and mutated (a byte replaced, inserted or
 * deleted) at random places; and structural characters (quote, backslash,
 * colon, comma, braces) at every offset across the 16-byte blocks the
 * decoder compares at once; timestamps sharing a date (the decoder
 * remembers the last date) with every form of time of day and near misses.  Every record is decoded from its own buffer
 * of exactly its length (so under ASan a read past the end is caught),
 * with every column read and with only some (FmtSpec.need), and the
 * records are also decoded all together as lines.
 */
#include "unit.h"
#include "json_ref.h"
#include "sluice/expr.h"
#include "sluice/format.h"
#include "sluice/rowcodec.h"
#include "sluice/strbuf.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int64_t compared, differed;

/* Decodes buf with both decoders and checks that they decide the same. */
static void diff(const FmtSpec *spec, const SlType *types, const char *buf, size_t len)
{
    Arena a;
    arena_init(&a, 1 << 16);
    /* A copy of exactly len bytes, so that ASan sees any read past it. */
    char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    Batch *bx = batch_alloc(&a, types, (uint32_t)spec->ncols, 64);
    Batch *by = batch_alloc(&a, types, (uint32_t)spec->ncols, 64);
    FmtResult rx = {0}, ry = {0};
    SlError err = {0};
    fmt_json_decode_ref(spec, copy, len, true, bx, 64, &a, &rx, &err);
    fmt_json_decode(spec, copy, len, true, by, 64, &a, &ry, &err);
    compared++;
    bool same = json_ref_same(spec->ncols, bx, &rx, by, &ry);
    if (!same && differed++ < 10) {
        fprintf(stderr, "differs: [%.*s] rows %u/%u dead %d/%d: %s / %s\n", (int)SL_MIN(len, 300),
                buf, bx->nrows, by->nrows, rx.ndead, ry.ndead, rx.ndead ? rx.dead[0].reason : "-",
                ry.ndead ? ry.dead[0].reason : "-");
    }
    free(copy);
    arena_destroy(&a);
}

/* Every record alone, then all of them as lines of one buffer. */
static void diff_all(const FmtSpec *spec, const SlType *types, StrBuf *recs, const uint32_t *starts,
                     int n)
{
    for (int i = 0; i < n; i++)
        diff(spec, types, recs->data + starts[i], starts[i + 1] - starts[i] - 1);
    /* As lines: in pieces of at most 64 records (the batch's capacity). */
    for (int i = 0; i < n; i += 64) {
        int j = i + 64 < n ? i + 64 : n;
        diff(spec, types, recs->data + starts[i], starts[j] - starts[i]);
    }
}

/* The columns of the generated records: one of each kind. */
static const char *const col_names[] = {"i8", "i4", "i2", "f8", "b", "t", "ts", "j", "v"};
static SlType col_types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT4, -1, TYPE_UNKNOWN}, {TYPE_INT2, -1, TYPE_UNKNOWN},
                             {TYPE_FLOAT8, -1, TYPE_UNKNOWN}, {TYPE_BOOL, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN},
                             {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, {TYPE_JSONB, -1, TYPE_UNKNOWN}, {TYPE_VARCHAR, 5, TYPE_UNKNOWN}};
#define NCOLS 9

static const char *const ints[] = {
    "0", "-0", "7", "-7", "007", "-007", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "123456789012345678", "1234567890123456789",
    "999999999999999999", "-999999999999999999", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "32767", "32768", "-32768", "-32769", "1e3", "1.0", "1.5", "-", "--1", "1-",
    "12a", "1x", "1E", "0x10", "\"12\"", "\"1 2\"", "\" 12\"", "null", "nul", "nullx", "true",
    "[1]", "{}", "{\"a\":1}", "1 2", "00000000000000000001", "+1",
};
static const char *const doubles[] = {
    "0", "-0", "0.0", "-0.0", "1", "-1", "0.1", "0.5", "3.14159", "1e308", "1.7976931348623157e308",
    "1.8e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1e-320",
    "9007199254740992", "9007199254740993", "9007199254740993.0", "1e22", "1e23", "1e-22",
    "1e-23", "1.5e-22", "123456789012345678901234567890", "0.30000000000000004", "-1.25E+2",
    "1E5", "1e+05", "1e-05", "1.", "1.e5", "1e", "1e+", "01.5", "00", "-.5", "1..2", "1e5.5",
    "1.2.3", "12345678901234567", "1234567890123456789.5", "0.000000000000000000001",
    "99999999999999999999e-5", "5e-324", "2e-324", "1e-7", "100000000000000000000000",
    "\"1.5\"", "\"nan\"", "\"Infinity\"", "\"1e999\"", "null", "true", "[]", "1e0000005",
    "1e99999", "7e-22", "8.5e+22", "-9.999e-3",
};
static const char *const bools[] = {
    "true", "false", "tru", "fals", "truex", "falsey", "\"true\"", "\"yes\"", "\"t\"", "1", "0",
    "2", "null", "TRUE", "[true]", "\"off\"",
};
static const char *const strings[] = {
    "\"\"", "\"a\"", "\"plain text\"", "\"q\\\"uote\"", "\"back\\\\slash\"", "\"sl\\/ash\"",
    "\"\\b\\f\\n\\r\\t\"", "\"\\u00e9t\\u00E9\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"",
    "\"\\ude00x\"", "\"\\ud83d\\u0041\"", "\"\\u0000\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\q\"",
    "\"\\\"", "\"tab\there\"", "\"ctl\x01\"", "\"\xff\xfe\"", "\"\xc3\"", "\"\xc3\xa9\"",
    "\"\xe2\x82\xac\"", "\"\xf0\x9f\x98\x80\"", "\"\xed\xa0\x80\"", "\"unterminated",
    "\"0123456789abcdef0123456789abcdef\"", "\"0123456789abcde\\\"0123456789\"", "12", "-3.5",
    "true", "null", "[1, \"x\", {\"k\": [null]}]", "{\"a\": {\"b\": \"c\"}}", "\"abcdef\"",
    "\"abc  \"", "\"\\u0041\\u0042\"", "[1,", "{\"a\" 1}", "{,}", "[1 2]", "\"a\"\"b\"",
};
static const char *const stamps[] = {
    "\"2026-01-01 00:00:00.000\"", "\"2026-01-01 00:00:00\"", "\"2026-01-01T12:34:56.789012\"",
    "\"2024-02-29 23:59:59\"", "\"2023-02-29 00:00:00\"", "\"2026-01-01 24:00:00\"",
    "\"2026-01-01 00:00:00+02\"", "\"2026-01-01\"", "\"2026-01-01\\u002000:00:00\"",
    "\"Jan 1 2026\"", "\"epoch\"", "\"infinity\"", "\"2026-13-01 00:00:00\"", "\"x\"",
    "\"2026-01-01 00:00:00.1234567\"", "1767225600", "null", "\"0001-01-01 00:00:00 BC\"",
};

/* A value for column c (its kind's edge cases, or now and then another
 * kind's, which the column must refuse or read the same either way). */
static const char *value_for(int c)
{
    int k = rnd(8) == 0 ? (int)rnd(NCOLS) : c;
    switch (k) {
    case 0: case 1: case 2: return ints[rnd(SL_ARRAY_LEN(ints))];
    case 3: return doubles[rnd(SL_ARRAY_LEN(doubles))];
    case 4: return bools[rnd(SL_ARRAY_LEN(bools))];
    case 6: return stamps[rnd(SL_ARRAY_LEN(stamps))];
    default: return strings[rnd(SL_ARRAY_LEN(strings))];
    }
}

static void put_ws(StrBuf *b, int wide)
{
    static const char ws[] = " \t\r";
    int n = wide ? (int)rnd(3) : 0;
    for (int i = 0; i < n; i++)
        strbuf_putc(b, ws[rnd(3)]);
}

/* A key: the column's name, now and then with an escape in it, or an
 * unknown key. */
static void put_key(StrBuf *b, int c)
{
    if (c < 0) {
        static const char *const other[] = {"\"event_type\"", "\"x\"", "\"i8x\"", "\"I8\"",
                                            "\"\"", "\"t\\u00e9\"", "\"long_unknown_key_name\""};
        strbuf_puts(b, other[rnd(SL_ARRAY_LEN(other))]);
        return;
    }
    const char *name = col_names[c];
    if (rnd(10) == 0) {     /* the first letter as a \u escape */
        strbuf_printf(b, "\"\\u%04x%s\"", (unsigned)name[0], name + 1);
        return;
    }
    strbuf_printf(b, "\"%s\"", name);
}

/* A record of the members cols[0..n) (-1: an unknown key). */
static void put_record(StrBuf *b, const int *cols, int n, int wide)
{
    put_ws(b, wide);
    strbuf_putc(b, '{');
    for (int i = 0; i < n; i++) {
        put_ws(b, wide);
        put_key(b, cols[i]);
        put_ws(b, wide);
        strbuf_putc(b, ':');
        put_ws(b, wide);
        strbuf_puts(b, cols[i] < 0 ? strings[rnd(SL_ARRAY_LEN(strings))] : value_for(cols[i]));
        put_ws(b, wide);
        if (i + 1 < n)
            strbuf_putc(b, ',');
    }
    put_ws(b, wide);
    strbuf_putc(b, '}');
    put_ws(b, wide);
}

static void end_record(StrBuf *b, uint32_t *starts, int *n)
{
    strbuf_putc(b, '\n');
    starts[++*n] = (uint32_t)b->len;
}

/* The records the tests mutate: generated ones of every kind of value. */
static int gen_records(StrBuf *b, uint32_t *starts, int max)
{
    int n = 0;
    starts[0] = (uint32_t)b->len;
    while (n < max) {
        int cols[12], m = 0;
        int want = 1 + (int)rnd(NCOLS + 2);
        for (int i = 0; i < want && m < 12; i++) {
            int c = rnd(6) == 0 ? -1 : (int)rnd(NCOLS);
            cols[m++] = c;
            if (rnd(15) == 0 && m < 12)
                cols[m++] = c;      /* a repeated key */
        }
        put_record(b, cols, m, (int)rnd(3) == 0);
        end_record(b, starts, &n);
    }
    return n;
}

static void make_spec(FmtSpec *spec, Arena *a, const uint8_t *need)
{
    fmt_spec_init(spec, a, NCOLS, col_names, col_types, NULL);
    spec->need = need;
}

/* Generated records, all columns and some. */
static void test_generated(void)
{
    Arena a;
    arena_init(&a, 65536);
    static const uint8_t some[NCOLS] = {1, 0, 1, 0, 1, 0, 1, 0, 0};
    FmtSpec all, part;
    make_spec(&all, &a, NULL);
    make_spec(&part, &a, some);
    CHECK(all.flat_keys);
    StrBuf b;
    strbuf_init(&b);
    static uint32_t starts[20001];
    int n = gen_records(&b, starts, 20000);
    diff_all(&all, col_types, &b, starts, n);
    diff_all(&part, col_types, &b, starts, n);
    strbuf_free(&b);
    arena_destroy(&a);
}

/* Members in every order: all 24 orders of four columns, with and without
 * an unknown key in front (as Nexmark's event_type). */
static void test_orders(void)
{
    Arena a;
    arena_init(&a, 65536);
    FmtSpec spec;
    make_spec(&spec, &a, NULL);
    StrBuf b;
    strbuf_init(&b);
    static uint32_t starts[4000];
    int n = 0;
    starts[0] = 0;
    static const int four[] = {0, 3, 5, 6};
    for (int rep = 0; rep < 40; rep++)
        for (int perm = 0; perm < 24; perm++) {
            int pool[4] = {four[0], four[1], four[2], four[3]}, cols[5], m = 0;
            if (rep % 2)
                cols[m++] = -1;
            int x = perm;
            for (int k = 4; k > 0; k--) {
                int pick = x % k;
                x /= k;
                cols[m++] = pool[pick];
                pool[pick] = pool[k - 1];
            }
            put_record(&b, cols, m, rep % 4 == 3);
            end_record(&b, starts, &n);
        }
    diff_all(&spec, col_types, &b, starts, n);
    strbuf_free(&b);
    arena_destroy(&a);
}

/* Each record cut at every byte, and mutated at random places. */
static void test_mutations(void)
{
    Arena a;
    arena_init(&a, 65536);
    FmtSpec spec;
    make_spec(&spec, &a, NULL);
    StrBuf b;
    strbuf_init(&b);
    static uint32_t starts[601];
    int n = gen_records(&b, starts, 600);
    static const char bytes[] = "\"\\{}[]:, \t0-9e.atfnu\x01\xff\xc3";
    StrBuf m;
    strbuf_init(&m);
    for (int i = 0; i < n; i++) {
        const char *r = b.data + starts[i];
        size_t len = starts[i + 1] - starts[i] - 1;
        for (size_t cut = 0; cut < len; cut++)
            diff(&spec, col_types, r, cut);
        for (int k = 0; k < 30; k++) {
            strbuf_reset(&m);
            strbuf_append(&m, r, len);
            size_t at = rnd((uint32_t)len);
            char ch = bytes[rnd(sizeof(bytes) - 1)];
            int op = (int)rnd(3);
            if (op == 0) {
                m.data[at] = ch;
            } else if (op == 1) {
                strbuf_putc(&m, 0);
                memmove(m.data + at + 1, m.data + at, len - at);
                m.data[at] = ch;
            } else {
                memmove(m.data + at, m.data + at + 1, len - at - 1);
                m.len--;
            }
            diff(&spec, col_types, m.data, m.len);
        }
    }
    strbuf_free(&m);
    strbuf_free(&b);
    arena_destroy(&a);
}

/* Structural characters at every offset: padding of 0..63 bytes (white
 * space, or a string's length) before each of them moves the key, the
 * colon, the comma, quotes and escapes across every 16-byte step. */
static void test_boundaries(void)
{
    Arena a;
    arena_init(&a, 65536);
    FmtSpec spec;
    make_spec(&spec, &a, NULL);
    static const char *const tails[] = {
        "\"", "\\\"\"", "\\\\\"", "\\u0041\"", "\\\"", "\\", "", "\\n\"", "\" ", "\"}"
    };
    StrBuf r;
    strbuf_init(&r);
    for (int pad = 0; pad < 64; pad++) {
        for (int t = 0; t < (int)SL_ARRAY_LEN(tails); t++) {
            for (int form = 0; form < 4; form++) {
                strbuf_reset(&r);
                if (form == 0)          /* the padding inside a text value */
                    strbuf_printf(&r, "{\"i8\":1,\"t\":\"%*s%s,\"i4\":2}", pad, "", tails[t]);
                else if (form == 1)     /* white space before the key */
                    strbuf_printf(&r, "{%*s\"t\":\"x%s,%*s\"i8\":-12}", pad, "", tails[t], pad % 7,
                                  "");
                else if (form == 2)     /* the record ends in the string */
                    strbuf_printf(&r, "{\"i8\":3,\"t\":\"%.*s%s", pad,
                                  "0123456789012345678901234567890123456789012345678901234567890123",
                                  tails[t]);
                else                    /* an unknown key of that length */
                    strbuf_printf(&r, "{\"%.*s%s:1,\"f8\":2.5,\"ts\":\"2026-01-01 00:00:00\"}",
                                  pad, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
                                  tails[t]);
                diff(&spec, col_types, r.data, r.len);
                for (size_t cut = r.len > 20 ? r.len - 20 : 0; cut < r.len; cut++)
                    diff(&spec, col_types, r.data, cut);
            }
        }
    }
    strbuf_free(&r);
    arena_destroy(&a);
}

/* Keys that cannot be compared in place (a quote or a backslash in the
 * name, longer than 15 bytes) and a spec whose keys are not flat. */
static void test_odd_keys(void)
{
    Arena a;
    arena_init(&a, 65536);
    const char *names[] = {"a\"b", "c\\d", "a_very_long_column_name", "n"};
    SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
    FmtSpec spec;
    fmt_spec_init(&spec, &a, 4, names, types, NULL);
    CHECK(spec.flat_keys && spec.cols[0].keyq_len == 0 && spec.cols[1].keyq_len == 0 &&
          spec.cols[2].keyq_len == 0 && spec.cols[3].keyq_len == 2);
    static const char *const recs[] = {
        "{\"a\\\"b\": 1, \"c\\\\d\": 2, \"a_very_long_column_name\": \"x\", \"n\": 3}",
        "{\"a\"b\": 1}", "{\"c\\d\": 2}", "{\"n\": 1, \"n\": 2}",
        "{\"a_very_long_column_name\": \"y\", \"a_very_long_column_name\": 5}",
    };
    for (int i = 0; i < (int)SL_ARRAY_LEN(recs); i++)
        diff(&spec, types, recs[i], strlen(recs[i]));
    const char *paths[] = {"m.a", "m.b", "t", "n"};
    fmt_spec_init(&spec, &a, 4, names, types, paths);
    CHECK(!spec.flat_keys);
    static const char deep[] = "{\"m\": {\"b\": 2, \"a\": 1}, \"t\": \"z\", \"n\": 4}";
    diff(&spec, types, deep, sizeof(deep) - 1);
    arena_destroy(&a);
}

/* Timestamps that share their date (the decoder remembers the last date's
 * midnight): every time of day form dt_parse_iso_fast takes and near
 * misses, after dates valid and not, so a remembered date meets them all. */
static void test_same_date(void)
{
    Arena a;
    arena_init(&a, 65536);
    FmtSpec spec;
    make_spec(&spec, &a, NULL);
    static const char *const dates[] = {"2026-01-01", "2024-02-29", "2023-02-29", "0001-01-01",
                                        "2026-1-01 ", "9999-12-31"};
    static const char *const times[] = {
        " 00:00:00", " 23:59:59", "T12:34:56", " 24:00:00", " 23:60:00", " 23:59:60",
        " 12:00:00.5", " 12:00:00.123456", " 12:00:00.1234567", " 12:00:00.", " 1:00:00",
        " 12:00:0x", " 12-00:00", " 12:00:00+02", " 12:00:00 BC", "x12:00:00", " 12:00",
        " 09:08:07.000", " 12:00:00.12a", " 00:00:00.000001",
    };
    StrBuf r;
    strbuf_init(&r);
    for (int rep = 0; rep < 3; rep++)
        for (int d = 0; d < (int)SL_ARRAY_LEN(dates); d++)
            for (int t = 0; t < (int)SL_ARRAY_LEN(times); t++) {
                strbuf_reset(&r);
                strbuf_printf(&r, "{\"ts\":\"%s%s\",\"i8\":%d}", dates[rep == 1 ? 0 : d],
                              times[rep == 2 ? (t * 7) % (int)SL_ARRAY_LEN(times) : t], t);
                diff(&spec, col_types, r.data, r.len);
            }
    strbuf_free(&r);
    arena_destroy(&a);
}

int main(void)
{
    test_generated();
    test_orders();
    test_mutations();
    test_boundaries();
    test_odd_keys();
    test_same_date();
    printf("test_json_diff: %lld decodes compared, %lld differed\n", (long long)compared,
           (long long)differed);
    CHECK(differed == 0);
    CHECK(compared > 100000);
    return unit_done("test_json_diff");
}
