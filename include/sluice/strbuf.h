/*
 * strbuf.h -- a growable byte buffer on the heap.
 *
 * Used for outgoing protocol messages and for text formatting.  The buffer
 * is always NUL-terminated after its len bytes, so it can be used as a
 * C string when it holds text.
 *
 * Also sl_edit_distance, the Levenshtein distance the "did you mean"
 * hints use (column names, WITH options).
 */
#ifndef SLUICE_STRBUF_H
#define SLUICE_STRBUF_H

#include "sluice/common.h"

typedef struct StrBuf {
    char  *data;
    size_t len;
    size_t cap;
} StrBuf;

void strbuf_init(StrBuf *b);
void strbuf_free(StrBuf *b);
void strbuf_reset(StrBuf *b);
void strbuf_reserve(StrBuf *b, size_t extra);
void strbuf_append(StrBuf *b, const void *p, size_t n);
void strbuf_puts(StrBuf *b, const char *s);
void strbuf_putc(StrBuf *b, char c);
void strbuf_printf(StrBuf *b, const char *fmt, ...) SL_PRINTF(2, 3);
/* Appends s[0..n) as a JSON string literal, quotes and escapes included. */
void strbuf_put_json_string(StrBuf *b, const char *s, size_t n);
/* Appends v in decimal (what printf's %lld gives, without printf). */
void strbuf_put_int(StrBuf *b, int64_t v);
/* Takes the buffer's memory; the StrBuf is empty afterwards. */
char *strbuf_steal(StrBuf *b, size_t *len);

/* The Levenshtein distance between a and b, or max + 1 when it is more
 * than max (or b is 127 bytes or longer). */
int  sl_edit_distance(const char *a, const char *b, int max);

#endif /* SLUICE_STRBUF_H */
