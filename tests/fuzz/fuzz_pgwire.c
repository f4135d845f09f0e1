/*
 * fuzz_pgwire.c -- libFuzzer target for the wire-format decoder
 * (src/server/pgw_proto.c).
 *
 * The input is treated as a client's byte stream: first startup-phase
 * packets, then typed messages, framed exactly as the server frames them;
 * every framed body is decoded with the same readers the session uses.
 * The bodies of PasswordMessages ('p') also go through the SCRAM-SHA-256
 * parsers (src/util/scram.c) as the authentication exchange would use
 * them: the first as a SASLInitialResponse's client-first-message, the next
 * as a client-final-message, and each as a stored verifier and as base64
 * (src/util/base64.c: white space refused or skipped, by the length's parity).
 * Nothing may crash, overrun, leak or loop.
 */
#include "server/pgw_proto.h"
#include "sluice/base64.h"
#include "sluice/scram.h"

#include <stdlib.h>

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

/* A SASL exchange over the 'p' messages of one input. */
typedef struct Sasl {
    int        step;        /* 0: expect client-first, 1: client-final, 2: done */
    ScramState st;
} Sasl;

static void read_password(Sasl *sasl, const uint8_t *body, size_t len)
{
    static const uint8_t key[SCRAM_KEY_LEN] = {1, 2, 3};
    char *s = malloc(len + 1);
    memcpy(s, body, len);
    s[len] = '\0';
    ScramSecret secret;
    (void)scram_secret_parse(s, &secret);
    uint8_t raw[256];
    (void)b64_decode(s, strlen(s), (len & 1) != 0, raw, sizeof(raw), NULL);
    free(s);

    StrBuf out;
    strbuf_init(&out);
    const char *why = NULL;
    if (sasl->step == 0) {
        /* SASLInitialResponse: mechanism, int32 length, bytes */
        PgwReader r;
        pgw_reader_init(&r, body, len);
        (void)pgw_get_cstr(&r);
        int32_t n = pgw_get_int32(&r);
        const uint8_t *msg = n >= 0 ? pgw_get_bytes(&r, (size_t)n) : NULL;
        if (msg != NULL) {
            static ScramSecret fixed;
            if (fixed.iterations == 0)
                scram_secret_make("pw", 2, (const uint8_t *)"salt", 4, 1, &fixed);
            if (scram_server_first(&sasl->st, (len & 1) ? &fixed : NULL, key, "u",
                                   (const char *)msg, (size_t)n, &out, &why) == 0)
                sasl->step = 1;
            else
                scram_state_free(&sasl->st);
        }
    } else if (sasl->step == 1) {
        (void)scram_server_final(&sasl->st, (const char *)body, len, &out, &why);
        scram_state_free(&sasl->st);
        sasl->step = 2;
    }
    strbuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 0, total = 0;
    bool startup = true;
    Sasl sasl = {0};
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
            if (data[pos] == 'p')
                read_password(&sasl, data + pos + 5, total - 5);
        }
        pos += total;
    }
    if (sasl.step == 1)
        scram_state_free(&sasl.st);
    return 0;
}
