/*
 * names.c -- a connection's named things (prepared statements, portals):
 * a hash table of intrusive entries, so that finding one costs the same
 * with 20,000 as with one (issue 19: a list searched on the loop made
 * 20,000 Parses take 38 s and held every other client).
 *
 *   names_find     the entry of a name, or NULL
 *   names_add      insert an entry whose name is set and not present
 *   names_remove   take an entry out (the caller frees it)
 *   names_clear    take every entry out, handing each to a function
 *                  (which may free it); the table is empty and reusable
 *
 * Chained buckets, doubled when the entries outnumber them; the table
 * keeps only pointers, so an entry stays where it was allocated.  Names
 * are hashed with SipHash-2-4 under a random key of the table's own
 * (getrandom, when its first bucket array is made): a client that picks
 * names cannot pile them into one chain (hash flooding).  The
 * count of named entries (name not "") is what max_prepared_statements
 * bounds (session.c).
 */
#include "pgw.h"

#include <openssl/rand.h>
#include <string.h>
#include <sys/random.h>

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static void sipround(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = rotl(v[1], 13) ^ v[0];
    v[0] = rotl(v[0], 32);
    v[2] += v[3];
    v[3] = rotl(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = rotl(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = rotl(v[1], 17) ^ v[2];
    v[2] = rotl(v[2], 32);
}

/* SipHash-2-4 (Aumasson and Bernstein) of a name under the table's key,
 * folded to 32 bits: the names are the client's, so their buckets must not
 * be predictable (an unkeyed hash lets a client fill one chain and make
 * each look-up a walk of all of them). */
static uint32_t name_hash(const NameTable *t, const char *s)
{
    size_t len = strlen(s);
    uint64_t v[4] = {0x736f6d6570736575ULL ^ t->key[0], 0x646f72616e646f6dULL ^ t->key[1],
                     0x6c7967656e657261ULL ^ t->key[0], 0x7465646279746573ULL ^ t->key[1]};
    const uint8_t *p = (const uint8_t *)s, *end = p + (len & ~(size_t)7);
    uint64_t m;
    for (; p != end; p += 8) {
        m = 0;
        for (int i = 7; i >= 0; i--)
            m = (m << 8) | p[i];
        v[3] ^= m;
        sipround(v);
        sipround(v);
        v[0] ^= m;
    }
    m = (uint64_t)len << 56;
    for (int i = (int)(len & 7) - 1; i >= 0; i--)
        m |= (uint64_t)p[i] << (8 * i);
    v[3] ^= m;
    sipround(v);
    sipround(v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for (int i = 0; i < 4; i++)
        sipround(v);
    uint64_t h = v[0] ^ v[1] ^ v[2] ^ v[3];
    return (uint32_t)(h ^ (h >> 32));
}

/* A fresh random key for a table about to get its first entry. */
static void new_key(NameTable *t)
{
    if (getrandom(t->key, sizeof(t->key), 0) != (ssize_t)sizeof(t->key) &&
        RAND_bytes((unsigned char *)t->key, sizeof(t->key)) != 1)
        sl_panic("no random bytes for a name table's key");
}

static void grow(NameTable *t)
{
    if (t->nbuckets == 0)
        new_key(t);
    uint32_t n = t->nbuckets ? t->nbuckets * 2 : 16;
    NameEntry **b = sl_calloc(n, sizeof(NameEntry *));
    for (uint32_t i = 0; i < t->nbuckets; i++)
        for (NameEntry *e = t->buckets[i], *next; e != NULL; e = next) {
            next = e->hnext;
            e->hnext = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    sl_free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

NameEntry *names_find(const NameTable *t, const char *name)
{
    if (t->nbuckets == 0)
        return NULL;
    uint32_t h = name_hash(t, name);
    for (NameEntry *e = t->buckets[h & (t->nbuckets - 1)]; e != NULL; e = e->hnext)
        if (e->hash == h && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

void names_add(NameTable *t, NameEntry *e)
{
    if (t->count >= t->nbuckets)
        grow(t);
    e->hash = name_hash(t, e->name);
    NameEntry **b = &t->buckets[e->hash & (t->nbuckets - 1)];
    e->hnext = *b;
    *b = e;
    t->count++;
    if (e->name[0] != '\0')
        t->named++;
}

void names_remove(NameTable *t, NameEntry *e)
{
    NameEntry **pp = &t->buckets[e->hash & (t->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->hnext = NULL;
    t->count--;
    if (e->name[0] != '\0')
        t->named--;
}

void names_clear(NameTable *t, void (*fn)(NameEntry *e))
{
    NameEntry **b = t->buckets;
    uint32_t n = t->nbuckets;
    *t = (NameTable){0};
    for (uint32_t i = 0; i < n; i++)
        for (NameEntry *e = b[i], *next; e != NULL; e = next) {
            next = e->hnext;
            e->hnext = NULL;
            fn(e);
        }
    sl_free(b);
}
