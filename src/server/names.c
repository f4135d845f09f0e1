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
 * keeps only pointers, so an entry stays where it was allocated.  The
 * count of named entries (name not "") is what max_prepared_statements
 * bounds (session.c).
 */
#include "pgw.h"

#include <string.h>

/* FNV-1a, 32 bits: names are short, and a client picks them. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void grow(NameTable *t)
{
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
    uint32_t h = name_hash(name);
    for (NameEntry *e = t->buckets[h & (t->nbuckets - 1)]; e != NULL; e = e->hnext)
        if (e->hash == h && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

void names_add(NameTable *t, NameEntry *e)
{
    if (t->count >= t->nbuckets)
        grow(t);
    e->hash = name_hash(e->name);
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
