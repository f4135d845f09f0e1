/*
 * base64.h -- base64 (RFC 4648's alphabet, with padding), decoded the way
 * PostgreSQL decodes it.
 *
 *   b64_encode     bytes to base64, padded, in one line
 *   b64_decode     base64 to bytes: decode(..., 'base64') skipping white
 *                  space, SCRAM's messages and verifiers refusing it
 *
 * One decoder for both, PostgreSQL's (src/backend/utils/adt/encode.c's
 * pg_base64_decode and src/common/base64.c's pg_b64_decode, which differ
 * only in white space): groups of four characters; "=" may stand only as
 * the third or fourth character of a group and marks the end of the data
 * -- the groups after it give one byte less per "=" as PostgreSQL's do;
 * a last group of fewer than four characters is an error.
 */
#ifndef SLUICE_BASE64_H
#define SLUICE_BASE64_H

#include "sluice/common.h"
#include "sluice/strbuf.h"

/* Why b64_decode refused its input (negative, as it returns them). */
enum {
    B64_BAD_SYMBOL = -1,    /* a character outside the alphabet (or white space) */
    B64_BAD_PAD    = -2,    /* "=" as the first or second character of a group */
    B64_BAD_END    = -3,    /* the input ends inside a group */
    B64_NO_ROOM    = -4,    /* more than cap bytes */
};

/* Appends data's base64 to out, padded with "=", without line breaks. */
void    b64_encode(const uint8_t *data, size_t len, StrBuf *out);
/* Decodes s[0, len) into out (at most cap bytes; len * 3 / 4 always fit);
 * space, tab, newline and carriage return are skipped when skip_space,
 * else refused (B64_BAD_SYMBOL).  Returns the length written, or one of
 * the codes above with *bad (when not NULL) set to the offset in s of
 * the character refused (B64_BAD_SYMBOL, B64_BAD_PAD). */
int64_t b64_decode(const char *s, size_t len, bool skip_space, uint8_t *out, size_t cap,
                   size_t *bad);

#endif /* SLUICE_BASE64_H */
