/*
 * test_util.c -- unit tests of src/util: arenas (alignment, big blocks,
 * reset), memory accounts (arenas charge and credit them; the statement's
 * and the server's bounds), string buffers, lists, error records, CRC-32C,
 * the masking of secret options, base64 (PostgreSQL's decoding: white
 * space, padding, each error and where it is, the room), UTF-8 validation
 * (every boundary of RFC 3629, section 4, at every offset of the eight-byte
 * ASCII path) and, in fault-injection
 * builds, the modes of fault points that fail.  Run under LSan, it also proves each
 * frees what it holds.
 */
#include "unit.h"
#include "sluice/arena.h"
#include "sluice/base64.h"
#include "sluice/crc32c.h"
#include "sluice/error.h"
#include "sluice/list.h"
#include "sluice/memacct.h"
#include "sluice/options.h"
#include "sluice/strbuf.h"
#include "sluice/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>


static void test_arena(void)
{
    Arena a;
    arena_init(&a, 1024);
    for (int i = 1; i < 200; i++) {
        unsigned char *p = arena_alloc(&a, (size_t)i);
        CHECK(((uintptr_t)p & 15) == 0);
        memset(p, 0xAB, (size_t)i);
    }
    char *big = arena_alloc(&a, 100000);     /* a block of its own */
    memset(big, 1, 100000);
    char *s = arena_printf(&a, "%s-%d", "x", 42);
    CHECK(strcmp(s, "x-42") == 0);
    CHECK(strcmp(arena_strndup(&a, "hello", 4), "hell") == 0);
    int *z = arena_zalloc(&a, sizeof(int) * 10);
    CHECK(z[9] == 0);
    arena_reset(&a);
    CHECK(a.total <= 1024);
    CHECK(arena_alloc(&a, 16) != NULL);
    arena_destroy(&a);
}

/* arena_rewind keeps the blocks (up to its bound) and hands them out again
 * before asking malloc: the same total, the same memory, nothing leaked. */
static void test_arena_rewind(void)
{
    Arena a;
    arena_init(&a, 1024);
    char *first = arena_alloc(&a, 100);
    for (int i = 0; i < 50; i++)
        memset(arena_alloc(&a, 200), 1, 200);
    char *big = arena_alloc(&a, 5000);
    size_t held = a.total;
    CHECK(held > 10 * 1024);
    arena_rewind(&a, SIZE_MAX);
    CHECK(a.total == held);
    for (int round = 0; round < 3; round++) {
        bool reused = false, big_reused = false;
        for (int i = 0; i < 51; i++)
            reused |= arena_alloc(&a, 200) == first;
        char *b2 = arena_alloc(&a, 4000);     /* fits the spare 5000 */
        big_reused = b2 == big;
        memset(b2, 2, 4000);
        CHECK(reused);
        CHECK(big_reused);
        CHECK(a.total == held);
        arena_rewind(&a, SIZE_MAX);
    }
    /* a bound frees what does not fit under it */
    arena_rewind(&a, 2048);
    for (int i = 0; i < 51; i++)
        arena_alloc(&a, 200);
    arena_rewind(&a, 2048);
    CHECK(a.total <= 2048);
    arena_reset(&a);        /* frees the spares too */
    CHECK(a.total <= 1024);
    arena_destroy(&a);
}

static void test_memacct(void)
{
    /* an arena made while an account is current charges it, block by block */
    SlMemAccount *acct = sl_mem_account_new(1 << 20);
    SlMemAccount *old = sl_mem_account_enter(acct);
    Arena a;
    arena_init(&a, 64 * 1024);
    sl_mem_account_enter(old);
    CHECK(sl_mem_account_used(acct) == 0);
    arena_alloc(&a, 100);
    size_t one = sl_mem_account_used(acct);
    CHECK(one >= 64 * 1024 && one < 65 * 1024);
    CHECK(sl_mem_server_used() >= one);
    CHECK(sl_mem_exceeded(acct) == SL_MEM_OK);
    /* a request that would pass the bound is refused before it is made */
    CHECK(arena_alloc_budget(&a, 2 << 20) == NULL);
    CHECK(sl_mem_exceeded(acct) == SL_MEM_OVER_STATEMENT);
    CHECK(sl_mem_account_used(acct) == one);
    /* reset gives the blocks back, and the account is credited */
    arena_alloc(&a, 300 * 1024);
    CHECK(sl_mem_account_used(acct) > one);
    arena_reset(&a);
    CHECK(sl_mem_account_used(acct) == one);
    /* arena_set_account moves what the arena holds to another account */
    SlMemAccount *other = sl_mem_account_new(0);
    arena_set_account(&a, other);
    CHECK(sl_mem_account_used(acct) == 0 && sl_mem_account_used(other) == one);
    arena_destroy(&a);
    CHECK(sl_mem_account_used(other) == 0);
    sl_mem_account_unref(other);
    sl_mem_account_unref(acct);

    /* the server's bound: only an account holding the floor or more passes it */
    size_t base = sl_mem_server_used();
    sl_mem_server_limit_set(base + SL_MEM_SERVER_FLOOR * 2);
    SlMemAccount *big = sl_mem_account_new(0), *small = sl_mem_account_new(0);
    sl_mem_charge(big, SL_MEM_SERVER_FLOOR * 3);
    CHECK(sl_mem_exceeded(big) == SL_MEM_OVER_SERVER);
    sl_mem_charge(small, 4096);
    CHECK(sl_mem_exceeded(small) == SL_MEM_OK);
    sl_mem_credit(big, SL_MEM_SERVER_FLOOR * 3);
    sl_mem_credit(small, 4096);
    sl_mem_account_unref(big);
    sl_mem_account_unref(small);
    sl_mem_server_limit_set(0);
    CHECK(sl_mem_server_used() == base);
}

static void test_strbuf(void)
{
    StrBuf b;
    strbuf_init(&b);
    for (int i = 0; i < 1000; i++)
        strbuf_printf(&b, "%d,", i);
    CHECK(strncmp(b.data, "0,1,2,", 6) == 0);
    CHECK(b.data[b.len] == '\0');
    size_t len;
    char *p = strbuf_steal(&b, &len);
    CHECK(len > 3000 && b.data == NULL);
    sl_free(p);
    strbuf_putc(&b, 'x');
    CHECK(b.len == 1 && strcmp(b.data, "x") == 0);
    strbuf_free(&b);
}

static void test_list(void)
{
    Arena a;
    arena_init(&a, 512);
    List *l = NULL;
    static int v[100];
    for (int i = 0; i < 100; i++)
        l = list_append(&a, l, &v[i]);
    CHECK(list_len(l) == 100 && list_nth(l, 57) == &v[57]);
    arena_destroy(&a);
}

static void test_error(void)
{
    SlError e = {0};
    CHECK(!sl_error_set(&e));
    CHECK(sl_error_at(&e, ERRCODE_SYNTAX_ERROR, 6, "syntax error at or near \"%s\"", "x") == -1);
    CHECK(strcmp(e.sqlstate, "42601") == 0 && e.position == 7);
    /* The first error wins. */
    sl_error(&e, ERRCODE_INTERNAL_ERROR, "later");
    CHECK(strcmp(e.sqlstate, "42601") == 0);
    sl_error_hint(&e, "try %s", "this");
    SlError moved = {0};
    sl_error_move(&moved, &e);
    CHECK(!sl_error_set(&e) && strcmp(moved.hint, "try this") == 0);
    CHECK(strcmp(errcode_condition_name("22012"), "division_by_zero") == 0);
    CHECK(errcode_condition_name("ZZZZZ") == NULL);
    sl_error_clear(&moved);
}

/* CRC-32C: the standard check values, and the CPU's instruction (where
 * it is used) equal to the portable loop at every length and alignment,
 * and when a CRC is continued piece by piece. */
static void test_crc32c(void)
{
    CHECK(sl_crc32c(0, "123456789", 9) == 0xE3069283u);
    CHECK(sl_crc32c_sw(0, "123456789", 9) == 0xE3069283u);
    unsigned char zeros[32] = {0}, ones[32];
    memset(ones, 0xFF, sizeof(ones));
    CHECK(sl_crc32c(0, zeros, 32) == 0x8A9136AAu);     /* RFC 3720 B.4 */
    CHECK(sl_crc32c(0, ones, 32) == 0x62A8AB43u);
    CHECK(sl_crc32c(0, "", 0) == 0);
    unsigned char buf[600];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof(buf); i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    for (size_t off = 0; off < 9; off++) {
        for (size_t n = 0; n + off <= sizeof(buf); n += 1 + n / 16) {
            uint32_t sw = sl_crc32c_sw(0, buf + off, n);
            CHECK(sl_crc32c(0, buf + off, n) == sw, "off %zu n %zu", off, n);
            size_t cut = n / 3;
            CHECK(sl_crc32c(sl_crc32c(0, buf + off, cut), buf + off + cut, n - cut) == sw);
        }
    }
    printf("crc32c: %s\n", sl_crc32c_hw() ? "SSE4.2 instruction" : "portable loop");
}

static void test_utf8(void)
{
    static const struct {
        const char *s;
        size_t      bad;        /* where the first invalid sequence starts; SIZE_MAX: valid */
    } cases[] = {
        {"", SIZE_MAX}, {"plain ascii", SIZE_MAX}, {"\xc3\xa9t\xc3\xa9", SIZE_MAX},
        {"\xe2\x82\xac", SIZE_MAX}, {"\xf0\x9f\x98\x80", SIZE_MAX},
        {"\xed\x9f\xbf", SIZE_MAX},                  /* U+D7FF */
        {"\xee\x80\x80", SIZE_MAX},                  /* U+E000 */
        {"\xf4\x8f\xbf\xbf", SIZE_MAX},              /* U+10FFFF */
        {"\xc2\x80", SIZE_MAX}, {"\xe0\xa0\x80", SIZE_MAX}, {"\xf0\x90\x80\x80", SIZE_MAX},
        {"a\xff", 1}, {"\x80", 0}, {"ab\xbf", 2},      /* a continuation byte alone */
        {"\xc0\xaf", 0}, {"\xc1\xbf", 0},              /* overlong two bytes */
        {"\xe0\x9f\xbf", 0},                          /* overlong three */
        {"\xf0\x8f\xbf\xbf", 0},                      /* overlong four */
        {"\xed\xa0\x80", 0}, {"x\xed\xbf\xbf", 1},    /* surrogates */
        {"\xf4\x90\x80\x80", 0}, {"\xf5\x80\x80\x80", 0}, /* past U+10FFFF */
        {"\xc3", 0}, {"\xe2\x82", 0}, {"\xf0\x9f\x98", 0}, /* cut short */
        {"\xe2\x28\xa1", 0}, {"\xc3(", 0},             /* a bad continuation */
    };
    char buf[64];
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        size_t n = strlen(cases[i].s);
        /* at every offset behind ASCII, so the eight-byte path meets it */
        for (size_t pad = 0; pad < 17; pad++) {
            memset(buf, 'a', pad);
            memcpy(buf + pad, cases[i].s, n);
            size_t want = cases[i].bad == SIZE_MAX ? pad + n : pad + cases[i].bad;
            CHECK(sl_utf8_invalid(buf, pad + n) == want, "case %zu pad %zu", i, pad);
        }
    }
    /* NUL is refused wherever it is, also inside an ASCII word */
    for (size_t at = 0; at < 20; at++) {
        memset(buf, 'a', 20);
        buf[at] = '\0';
        CHECK(sl_utf8_invalid(buf, 20) == at, "NUL at %zu", at);
    }
    char msg[96];
    sl_utf8_message("\xff\xfe", 2, msg, sizeof(msg));
    CHECK(strcmp(msg, "invalid byte sequence for encoding \"UTF8\": 0xff") == 0, "%s", msg);
    sl_utf8_message("\xed\xa0\x80", 3, msg, sizeof(msg));
    CHECK(strcmp(msg, "invalid byte sequence for encoding \"UTF8\": 0xed 0xa0 0x80") == 0);
    sl_utf8_message("\xe2\x82", 2, msg, sizeof(msg));
    CHECK(strcmp(msg, "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82") == 0);
    SlError err = {0};
    CHECK(sl_utf8_check("ok", 2, -1, &err) == 0 && !sl_error_set(&err));
    CHECK(sl_utf8_check("o\x00k", 3, 4, &err) == -1);
    CHECK(strcmp(err.sqlstate, "22021") == 0 && err.position == 5);
    sl_error_clear(&err);
}

#ifdef SLUICE_FAULT_INJECTION
/* SLUICE_FAULT=name[:N]:fail|failall (mem.c): which arrivals fail.  The
 * count of arrivals is the process's, never reset, so the cases follow on. */
static void test_fault_fails(void)
{
    setenv("SLUICE_FAULT", "pt_x:fail", 1);
    CHECK(!SLUICE_FAULT_FAILS("pt"));         /* a longer name is another point */
    CHECK(!SLUICE_FAULT_FAILS("pt_y"));
    setenv("SLUICE_FAULT", "pt:3:fail", 1);
    SLUICE_FAULT("pt");                       /* armed to fail: a kill point goes on */
    bool got[5];
    for (int i = 0; i < 5; i++) {
        errno = 0;
        got[i] = SLUICE_FAULT_FAILS("pt");
        CHECK(!got[i] || errno == EIO, "arrival %d", i + 1);
    }
    CHECK(!got[0] && !got[1] && got[2] && !got[3] && !got[4]);    /* the 3rd only */
    setenv("SLUICE_FAULT", "pt:7:failall", 1);                     /* arrivals 6, 7, 8 */
    CHECK(!SLUICE_FAULT_FAILS("pt"));
    CHECK(SLUICE_FAULT_FAILS("pt"));
    CHECK(SLUICE_FAULT_FAILS("pt"));
    CHECK(!SLUICE_FAULT_FAILS("other"));
    setenv("SLUICE_FAULT", "pt:hold", 1);     /* no SLUICE_FAULT_HOLD: goes on */
    unsetenv("SLUICE_FAULT_HOLD");
    CHECK(!SLUICE_FAULT_FAILS("pt"));
    unsetenv("SLUICE_FAULT");
    CHECK(!SLUICE_FAULT_FAILS("pt"));
}
#endif

/* Secret options: named by their key, masked in the JSON, nothing else
 * touched; text that is not an options object shows nothing. */
static void test_opts_mask(void)
{
    Arena a;
    arena_init(&a, 256);
    CHECK(opts_is_secret("kafka.sasl.password") && opts_is_secret("KAFKA.SSL.KEY.PEM") &&
          opts_is_secret("kafka.sasl.oauthbearer.client.secret") && opts_is_secret("token"),
          "secret names");
    CHECK(!opts_is_secret("kafka.sasl.username") && !opts_is_secret("path") &&
          !opts_is_secret("bootstrap_servers"), "names that are not secrets");
    const char *plain = "{\"topic\": \"t\", \"partitions\": 4}";
    CHECK(opts_mask_json(&a, plain) == plain, "no secret: the text itself");
    const char *got = opts_mask_json(
        &a, "{\"a\": \"x\", \"kafka.sasl.password\": \"p\\\"w,}\", \"n\": 1, \"x.token\": 42}");
    CHECK(strcmp(got, "{\"a\": \"x\", \"kafka.sasl.password\": \"********\", \"n\": 1, "
                      "\"x.token\": \"********\"}") == 0,
          "masked: %s", got);
    CHECK(strcmp(opts_mask_json(&a, "{\"password\": \"unterminated}"), "{}") == 0, "bad JSON");
    CHECK(opts_mask_json(&a, NULL) == NULL, "NULL");
    arena_destroy(&a);
}

/* Decodes s, skipping white space or not; the length, or the code with
 * *bad the offset refused. */
static int64_t b64(const char *s, bool skip, uint8_t *out, size_t cap, size_t *bad)
{
    *bad = 99;
    return b64_decode(s, strlen(s), skip, out, cap, bad);
}

/* base64 as PostgreSQL decodes it (sql-tests/bytea.slt checks decode()'s
 * messages against PostgreSQL 15). */
static void test_base64(void)
{
    uint8_t out[16];
    size_t bad;
    StrBuf e;
    strbuf_init(&e);
    b64_encode((const uint8_t *)"hello", 5, &e);
    CHECK(e.len == 8 && memcmp(e.data, "aGVsbG8=", 8) == 0);
    CHECK(b64(e.data, false, out, sizeof(out), &bad) == 5 && memcmp(out, "hello", 5) == 0);
    strbuf_free(&e);
    CHECK(b64("", false, out, sizeof(out), &bad) == 0);
    CHECK(b64("YWJj", false, out, 3, &bad) == 3 && memcmp(out, "abc", 3) == 0);
    CHECK(b64("YWJj", false, out, 2, &bad) == B64_NO_ROOM);
    CHECK(b64("YWI=", false, out, 2, &bad) == 2 && memcmp(out, "ab", 2) == 0);
    /* white space: skipped by decode(), refused by SCRAM */
    CHECK(b64(" aGVs\nbG8=\r\n\t", true, out, sizeof(out), &bad) == 5 &&
          memcmp(out, "hello", 5) == 0);
    CHECK(b64("aGVs bG8=", false, out, sizeof(out), &bad) == B64_BAD_SYMBOL && bad == 4);
    /* after the padding, each group one byte short per "=" */
    CHECK(b64("YQ==YQ==", false, out, sizeof(out), &bad) == 2 && memcmp(out, "aa", 2) == 0);
    CHECK(b64("YQ=a", false, out, sizeof(out), &bad) == 1 && out[0] == 'a');
    CHECK(b64("Y===", false, out, sizeof(out), &bad) == B64_BAD_PAD && bad == 1);
    CHECK(b64("YWJj=", false, out, sizeof(out), &bad) == B64_BAD_PAD && bad == 4);
    CHECK(b64("Y!==", false, out, sizeof(out), &bad) == B64_BAD_SYMBOL && bad == 1);
    CHECK(b64("YQ=", false, out, sizeof(out), &bad) == B64_BAD_END);
    CHECK(b64("YW Jj Y", true, out, sizeof(out), &bad) == B64_BAD_END);
}

int main(void)
{
    test_arena();
    test_opts_mask();
    test_arena_rewind();
    test_memacct();
    test_strbuf();
    test_list();
    test_error();
    test_crc32c();
    test_base64();
    test_utf8();
#ifdef SLUICE_FAULT_INJECTION
    test_fault_fails();
#endif
    return unit_done("test_util");
}
