/*
 * utf8.h -- checking text for valid UTF-8, the server's only encoding.
 *
 *   sl_utf8_invalid    where the first invalid sequence (or NUL) starts
 *   sl_utf8_message    PostgreSQL's message for it
 *   sl_utf8_check      both, as a 22021 character_not_in_repertoire error
 *   sl_utf8_len        the length of the character a byte starts
 *
 * Valid means RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF),
 * nothing past U+10FFFF; and no NUL byte, which text cannot hold
 * (PostgreSQL's rule).  Every place where text enters the server checks it
 * (docs/sql-reference.md, "Text and encodings").
 */
#ifndef SLUICE_UTF8_H
#define SLUICE_UTF8_H

#include "sluice/error.h"

/* How sl_utf8_message's text starts: a dead letter's reason that holds it
 * is an encoding error (COPY reports it as 22021). */
#define SL_UTF8_MESSAGE_PREFIX "invalid byte sequence for encoding"

/* The offset of the first byte of s[0, len) that does not start a valid
 * sequence (or is NUL); len when all of it is valid. */
size_t sl_utf8_invalid(const char *s, size_t len);
/* Writes 'invalid byte sequence for encoding "UTF8": 0xed 0xa0 0x80' for
 * the sequence at s (len bytes left from it) into buf (at most cap bytes,
 * NUL-terminated). */
void sl_utf8_message(const char *s, size_t len, char *buf, size_t cap);
/* 0 when s[0, len) is valid; otherwise -1 with err set to 22021 and that
 * message (at position loc when loc >= 0). */
int sl_utf8_check(const char *s, size_t len, int loc, SlError *err);
/* Bytes of the UTF-8 character that starts with c (1 for a stray byte). */
static inline int sl_utf8_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0)
        return 2;
    if ((c & 0xF0) == 0xE0)
        return 3;
    if ((c & 0xF8) == 0xF0)
        return 4;
    return 1;
}

#endif /* SLUICE_UTF8_H */
