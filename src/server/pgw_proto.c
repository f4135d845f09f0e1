/*
 * pgw_proto.c -- framing, decoding and building of wire messages.
 *
 * Pure functions over byte buffers; see pgw_proto.h.
 */
#include "pgw_proto.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

PgwFrame pgw_frame_startup(const uint8_t *buf, size_t len, size_t *total)
{
    if (len < 4)
        return PGW_FRAME_NEED_MORE;
    uint32_t n = be32(buf);
    if (n < 8 || n > PGW_MAX_STARTUP_PACKET)
        return PGW_FRAME_BAD_LENGTH;
    if (len < n)
        return PGW_FRAME_NEED_MORE;
    *total = n;
    return PGW_FRAME_OK;
}

PgwFrame pgw_frame_message(const uint8_t *buf, size_t len, size_t max_len,
                           size_t *total)
{
    if (len < 5)
        return PGW_FRAME_NEED_MORE;
    uint32_t n = be32(buf + 1);
    if (n < 4 || (size_t)n > max_len)
        return PGW_FRAME_BAD_LENGTH;
    if (len < (size_t)n + 1)
        return PGW_FRAME_NEED_MORE;
    *total = (size_t)n + 1;
    return PGW_FRAME_OK;
}

void pgw_reader_init(PgwReader *r, const uint8_t *p, size_t len)
{
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->err = false;
}

static bool need(PgwReader *r, size_t n)
{
    if (r->err || r->len - r->pos < n) {
        r->err = true;
        return false;
    }
    return true;
}

uint8_t pgw_get_byte(PgwReader *r)
{
    if (!need(r, 1))
        return 0;
    return r->p[r->pos++];
}

int16_t pgw_get_int16(PgwReader *r)
{
    if (!need(r, 2))
        return 0;
    uint16_t v = (uint16_t)(r->p[r->pos] << 8 | r->p[r->pos + 1]);
    r->pos += 2;
    return (int16_t)v;
}

int32_t pgw_get_int32(PgwReader *r)
{
    if (!need(r, 4))
        return 0;
    uint32_t v = be32(r->p + r->pos);
    r->pos += 4;
    return (int32_t)v;
}

const char *pgw_get_cstr(PgwReader *r)
{
    if (r->err)
        return NULL;
    const uint8_t *start = r->p + r->pos;
    const uint8_t *nul = memchr(start, 0, r->len - r->pos);
    if (nul == NULL) {
        r->err = true;
        return NULL;
    }
    r->pos += (size_t)(nul - start) + 1;
    return (const char *)start;
}

const uint8_t *pgw_get_bytes(PgwReader *r, size_t n)
{
    if (!need(r, n))
        return NULL;
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

bool pgw_reader_done(const PgwReader *r)
{
    return !r->err && r->pos == r->len;
}

int pgw_parse_startup(const uint8_t *pkt, size_t len, PgwStartup *out, const char **why)
{
    PgwReader r;
    memset(out, 0, sizeof(*out));
    pgw_reader_init(&r, pkt, len);
    pgw_get_int32(&r);                  /* the length, already checked */
    out->code = pgw_get_int32(&r);
    if (r.err) {
        *why = "invalid length of startup packet";
        return -1;
    }
    switch (out->code) {
    case PGW_SSL_REQUEST_CODE:
    case PGW_GSSENC_REQUEST_CODE:
        if (len != 8) {
            *why = "invalid length of startup packet";
            return -1;
        }
        return 0;
    case PGW_CANCEL_REQUEST_CODE:
        out->cancel_pid = pgw_get_int32(&r);
        out->cancel_key = pgw_get_int32(&r);
        if (!pgw_reader_done(&r)) {
            *why = "invalid length of cancel request packet";
            return -1;
        }
        return 0;
    default:
        break;
    }
    if ((out->code >> 16) != 3) {
        *why = "unsupported frontend protocol";
        return -1;
    }
    /* name\0value\0 ... \0 */
    for (;;) {
        const char *name = pgw_get_cstr(&r);
        if (name == NULL) {
            *why = "invalid startup packet layout: expected terminator as last byte";
            return -1;
        }
        if (*name == '\0')
            break;
        const char *value = pgw_get_cstr(&r);
        if (value == NULL) {
            *why = "invalid startup packet layout: expected terminator as last byte";
            return -1;
        }
        if (out->nparams == (int)SL_ARRAY_LEN(out->names)) {
            *why = "too many parameters in startup packet";
            return -1;
        }
        out->names[out->nparams] = name;
        out->values[out->nparams] = value;
        out->nparams++;
    }
    if (!pgw_reader_done(&r)) {
        *why = "invalid startup packet layout: expected terminator as last byte";
        return -1;
    }
    return 0;
}

size_t pgw_begin(StrBuf *b, char type)
{
    strbuf_putc(b, type);
    size_t start = b->len;
    strbuf_append(b, "\0\0\0\0", 4);
    return start;
}

void pgw_put_byte(StrBuf *b, uint8_t v)
{
    strbuf_putc(b, (char)v);
}

void pgw_put_int16(StrBuf *b, int16_t v)
{
    uint8_t p[2] = {(uint8_t)((uint16_t)v >> 8), (uint8_t)v};
    strbuf_append(b, p, 2);
}

void pgw_put_int32(StrBuf *b, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t p[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    strbuf_append(b, p, 4);
}

void pgw_put_cstr(StrBuf *b, const char *s)
{
    strbuf_append(b, s, strlen(s) + 1);
}

void pgw_put_bytes(StrBuf *b, const void *p, size_t n)
{
    strbuf_append(b, p, n);
}

void pgw_end(StrBuf *b, size_t start)
{
    uint32_t n = (uint32_t)(b->len - start);
    uint8_t *p = (uint8_t *)b->data + start;
    p[0] = (uint8_t)(n >> 24);
    p[1] = (uint8_t)(n >> 16);
    p[2] = (uint8_t)(n >> 8);
    p[3] = (uint8_t)n;
}
