/*
 * test_pgw_proto.c -- unit tests of the wire-format framing and decoding
 * (src/server/pgw_proto.c): lengths at and past every limit, startup packets
 * of every kind, and readers that overrun.
 */
#include "unit.h"
#include "server/pgw_proto.h"

#include <stdio.h>
#include <stdlib.h>


static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void test_frame_startup(void)
{
    uint8_t buf[16] = {0};
    size_t total = 0;
    CHECK(pgw_frame_startup(buf, 3, &total) == PGW_FRAME_NEED_MORE);
    put32(buf, 7);
    CHECK(pgw_frame_startup(buf, 8, &total) == PGW_FRAME_BAD_LENGTH);
    put32(buf, PGW_MAX_STARTUP_PACKET + 1);
    CHECK(pgw_frame_startup(buf, 8, &total) == PGW_FRAME_BAD_LENGTH);
    put32(buf, 0xFFFFFFF0u);
    CHECK(pgw_frame_startup(buf, 8, &total) == PGW_FRAME_BAD_LENGTH);
    put32(buf, 8);
    CHECK(pgw_frame_startup(buf, 7, &total) == PGW_FRAME_NEED_MORE);
    CHECK(pgw_frame_startup(buf, 8, &total) == PGW_FRAME_OK && total == 8);
}

static void test_frame_message(void)
{
    uint8_t buf[16] = {'Q'};
    size_t total = 0;
    CHECK(pgw_frame_message(buf, 4, 1024, &total) == PGW_FRAME_NEED_MORE);
    put32(buf + 1, 3);
    CHECK(pgw_frame_message(buf, 5, 1024, &total) == PGW_FRAME_BAD_LENGTH);
    put32(buf + 1, 1025);
    CHECK(pgw_frame_message(buf, 5, 1024, &total) == PGW_FRAME_BAD_LENGTH);
    put32(buf + 1, 0x7FFFFFFF);
    CHECK(pgw_frame_message(buf, 5, (size_t)1 << 40, &total) == PGW_FRAME_NEED_MORE);
    put32(buf + 1, 4);
    CHECK(pgw_frame_message(buf, 5, 1024, &total) == PGW_FRAME_OK && total == 5);
    put32(buf + 1, 6);
    CHECK(pgw_frame_message(buf, 6, 1024, &total) == PGW_FRAME_NEED_MORE);
    CHECK(pgw_frame_message(buf, 7, 1024, &total) == PGW_FRAME_OK && total == 7);
}

static void test_parse_startup(void)
{
    PgwStartup st;
    const char *why = NULL;
    uint8_t ssl[8];
    put32(ssl, 8);
    put32(ssl + 4, PGW_SSL_REQUEST_CODE);
    CHECK(pgw_parse_startup(ssl, 8, &st, &why) == 0 && st.code == PGW_SSL_REQUEST_CODE);

    uint8_t cancel[16];
    put32(cancel, 16);
    put32(cancel + 4, PGW_CANCEL_REQUEST_CODE);
    put32(cancel + 8, 1234);
    put32(cancel + 12, 0xCAFEBABE);
    CHECK(pgw_parse_startup(cancel, 16, &st, &why) == 0);
    CHECK(st.cancel_pid == 1234 && (uint32_t)st.cancel_key == 0xCAFEBABE);
    CHECK(pgw_parse_startup(cancel, 12, &st, &why) < 0);

    static const char params[] = "user\0alice\0database\0db\0";
    uint8_t pkt[64];
    size_t n = 8 + sizeof(params);   /* sizeof counts the final NUL */
    put32(pkt, (uint32_t)n);
    put32(pkt + 4, PGW_PROTOCOL_V3);
    memcpy(pkt + 8, params, sizeof(params));
    CHECK(pgw_parse_startup(pkt, n, &st, &why) == 0);
    CHECK(st.nparams == 2 && strcmp(st.names[0], "user") == 0 &&
          strcmp(st.values[0], "alice") == 0 && strcmp(st.values[1], "db") == 0);
    /* Missing final terminator. */
    CHECK(pgw_parse_startup(pkt, n - 1, &st, &why) < 0);
    /* Protocol 2.0 is refused. */
    put32(pkt + 4, 2u << 16);
    CHECK(pgw_parse_startup(pkt, n, &st, &why) < 0 && strstr(why, "protocol") != NULL);
}

static void test_reader(void)
{
    static const uint8_t body[] = {0, 5, 0, 0, 0, 7, 'h', 'i', 0};
    PgwReader r;
    pgw_reader_init(&r, body, sizeof(body));
    CHECK(pgw_get_int16(&r) == 5);
    CHECK(pgw_get_int32(&r) == 7);
    CHECK(strcmp(pgw_get_cstr(&r), "hi") == 0);
    CHECK(pgw_reader_done(&r));
    CHECK(pgw_get_byte(&r) == 0 && r.err);

    /* A string without its NUL is an error, not an overrun. */
    pgw_reader_init(&r, body + 6, 2);
    CHECK(pgw_get_cstr(&r) == NULL && r.err);
    pgw_reader_init(&r, body, 3);
    CHECK(pgw_get_bytes(&r, 4) == NULL && r.err);
}

static void test_build(void)
{
    StrBuf b;
    strbuf_init(&b);
    size_t m = pgw_begin(&b, 'Z');
    pgw_put_byte(&b, 'I');
    pgw_end(&b, m);
    static const uint8_t want[] = {'Z', 0, 0, 0, 5, 'I'};
    CHECK(b.len == sizeof(want) && memcmp(b.data, want, sizeof(want)) == 0);
    strbuf_free(&b);
}

int main(void)
{
    test_frame_startup();
    test_frame_message();
    test_parse_startup();
    test_reader();
    test_build();
    return unit_done("test_pgw_proto");
}
