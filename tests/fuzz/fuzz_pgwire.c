/*
 * fuzz_pgwire.c -- libFuzzer target for the wire-format decoder
 * (src/server/pgw_proto.c).
 *
 * The input is treated as a client's byte stream: first startup-phase
 * packets, then typed messages, framed exactly as the server frames them;
 * every framed body is decoded with the same readers the session uses.
 * Nothing may crash, overrun, leak or loop.
 */
#include "server/pgw_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_fields(const uint8_t *body, size_t len)
{
    /* Decode the body as each message kind would, one reader each. */
    PgwReader r;
    pgw_reader_init(&r, body, len);
    while (!r.err && r.pos < r.len)
        (void)pgw_get_cstr(&r);
    pgw_reader_init(&r, body, len);
    int16_t n = pgw_get_int16(&r);
    for (int i = 0; i < n && !r.err; i++) {
        int32_t l = pgw_get_int32(&r);
        if (l > 0)
            (void)pgw_get_bytes(&r, (size_t)l);
    }
    (void)pgw_reader_done(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 0, total = 0;
    bool startup = true;
    while (pos < size) {
        if (startup) {
            if (pgw_frame_startup(data + pos, size - pos, &total) != PGW_FRAME_OK)
                break;
            PgwStartup st;
            const char *why;
            if (pgw_parse_startup(data + pos, total, &st, &why) == 0 &&
                st.code != PGW_SSL_REQUEST_CODE && st.code != PGW_GSSENC_REQUEST_CODE)
                startup = false;
        } else {
            if (pgw_frame_message(data + pos, size - pos, 1 << 20, &total) != PGW_FRAME_OK)
                break;
            read_fields(data + pos + 5, total - 5);
        }
        pos += total;
    }
    return 0;
}
