/*
 * inc_join_mem.c -- the in-memory copy of a join side's committed chunks
 * (see inc_join_mem.h).
 *
 *   jmem_clear, jmem_add, jmem_find, jmem_mark, jmem_drop_head, jmem_release, jmem_seek
 *
 * Buckets are an array ascending by start time; new buckets are nearly
 * always the last (event time moves forward), eviction takes them from the
 * front (head moves; the array is compacted when it is full and head is
 * past its start).  A dropped bucket's memory is freed by jmem_release
 * (the next batch's start: not in the batch whose result waits for it),
 * or when the array is compacted or cleared.
 */
#include "inc_join_mem.h"

#include <string.h>

static void bucket_free(JMemBucket *b)
{
    for (uint32_t i = 0; i < b->n; i++) {
        sl_free(b->c[i].val);
        sl_free(b->c[i].mark);
        sl_free(b->c[i].khash);
    }
    sl_free(b->c);
}

void jmem_clear(JMem *m, JMemState state)
{
    for (uint32_t i = m->dropped; i < m->n; i++)
        bucket_free(&m->b[i]);
    sl_free(m->b);
    m->b = NULL;
    m->dropped = m->head = m->n = m->cap = 0;
    m->state = state;
}

uint32_t jmem_seek(const JMem *m, int64_t start)
{
    uint32_t lo = m->head, hi = m->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->b[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

JMemChunk *jmem_add(JMem *m, int64_t bucket, const uint8_t *ckey, uint8_t *val, uint32_t len,
                    uint32_t *khash, uint32_t nkeys)
{
    uint32_t at = m->n > m->head && m->b[m->n - 1].start < bucket ? m->n : jmem_seek(m, bucket);
    if (at == m->n || m->b[at].start != bucket) {
        if (m->n == m->cap) {
            if (m->head > 0) {
                for (; m->dropped < m->head; m->dropped++)
                    bucket_free(&m->b[m->dropped]);
                memmove(m->b, m->b + m->head, sizeof(JMemBucket) * (m->n - m->head));
                m->n -= m->head;
                at -= m->head;
                m->dropped = m->head = 0;
            }
            if (m->n == m->cap) {
                m->cap = m->cap ? m->cap * 2 : 64;
                m->b = sl_realloc(m->b, sizeof(JMemBucket) * m->cap);
            }
        }
        memmove(m->b + at + 1, m->b + at, sizeof(JMemBucket) * (m->n - at));
        m->b[at] = (JMemBucket){.start = bucket};
        m->n++;
    }
    JMemBucket *b = &m->b[at];
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4;
        b->c = sl_realloc(b->c, sizeof(JMemChunk) * b->cap);
    }
    /* A batch's chunks have higher keys than every older batch's: the
     * usual place is the end. */
    uint32_t i = b->n;
    while (i > 0 && memcmp(b->c[i - 1].ckey, ckey, JMEM_KEY) > 0)
        i--;
    memmove(b->c + i + 1, b->c + i, sizeof(JMemChunk) * (b->n - i));
    JMemChunk *c = &b->c[i];
    *c = (JMemChunk){.len = len, .val = val, .khash = khash, .nkeys = khash ? nkeys : 0};
    memcpy(c->ckey, ckey, JMEM_KEY);
    b->n++;
    return c;
}

JMemChunk *jmem_find(JMem *m, int64_t bucket, const uint8_t *ckey)
{
    uint32_t at = jmem_seek(m, bucket);
    if (at == m->n || m->b[at].start != bucket)
        return NULL;
    JMemBucket *b = &m->b[at];
    uint32_t lo = 0, hi = b->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = memcmp(b->c[mid].ckey, ckey, JMEM_KEY);
        if (c == 0)
            return &b->c[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void jmem_mark(JMemChunk *c, uint32_t idx)
{
    uint32_t i = c->nmark;
    while (i > 0 && c->mark[i - 1] > idx)
        i--;
    if (i > 0 && c->mark[i - 1] == idx)
        return;
    if (c->nmark == c->capmark) {
        c->capmark = c->capmark ? c->capmark * 2 : 8;
        c->mark = sl_realloc(c->mark, sizeof(uint32_t) * c->capmark);
    }
    memmove(c->mark + i + 1, c->mark + i, sizeof(uint32_t) * (c->nmark - i));
    c->mark[i] = idx;
    c->nmark++;
}

void jmem_drop_head(JMem *m)
{
    if (m->head < m->n)
        m->head++;
}

void jmem_release(JMem *m)
{
    for (; m->dropped < m->head; m->dropped++)
        bucket_free(&m->b[m->dropped]);
    if (m->head == m->n)
        m->dropped = m->head = m->n = 0;
}
