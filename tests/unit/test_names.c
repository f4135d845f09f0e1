/*
 * test_names.c -- a connection's name table (src/server/names.c) against
 * hash flooding: names chosen so that an unkeyed FNV-1a would put every one
 * in the same bucket are spread like any others, and every one is still
 * found, removed and cleared (ASan's leak check at exit).
 */
#include "server/pgw.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

typedef struct Named {
    NameEntry e;                /* first member, as in session.c */
    char      buf[24];
} Named;

/* The hash an attacker can compute offline: FNV-1a, 32 bits, unkeyed. */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static uint32_t longest_chain(const NameTable *t)
{
    uint32_t most = 0;
    for (uint32_t i = 0; i < t->nbuckets; i++) {
        uint32_t n = 0;
        for (const NameEntry *e = t->buckets[i]; e != NULL; e = e->hnext)
            n++;
        if (n > most)
            most = n;
    }
    return most;
}

static void forget(NameEntry *e)
{
    (void)e;
}

/* N names whose unkeyed hashes share their low 10 bits: one bucket of
 * 1,024 for all of them, were the hash predictable. */
static void test_flooding_names_spread(Named *v)
{
    int n = 0;
    for (unsigned i = 0; n < N; i++) {
        char name[24];
        snprintf(name, sizeof(name), "s%u", i);
        if ((fnv1a(name) & 1023u) == 0) {
            memcpy(v[n].buf, name, sizeof(name));
            v[n].e = (NameEntry){.name = v[n].buf};
            n++;
        }
    }
    for (int round = 0; round < 2; round++) {
        NameTable t = {0};
        for (int i = 0; i < N; i++)
            names_add(&t, &v[i].e);
        CHECK(t.count == N && t.named == N && t.nbuckets == 1024, "count %u buckets %u",
              t.count, t.nbuckets);
        uint32_t most = longest_chain(&t);
        CHECK(most <= 16, "round %d: %u of %d chosen names in one bucket", round, most, N);
        for (int i = 0; i < N; i++)
            CHECK(names_find(&t, v[i].buf) == &v[i].e, "%s not found", v[i].buf);
        CHECK(names_find(&t, "s-none") == NULL);
        for (int i = 0; i < N; i += 2)
            names_remove(&t, &v[i].e);
        for (int i = 0; i < N; i++)
            CHECK(names_find(&t, v[i].buf) == (i % 2 ? &v[i].e : NULL), "%s", v[i].buf);
        CHECK(t.count == N / 2);
        names_clear(&t, forget);
        CHECK(t.count == 0 && t.nbuckets == 0 && names_find(&t, v[1].buf) == NULL);
    }
}

int main(void)
{
    Named *v = calloc(N, sizeof(Named));
    test_flooding_names_spread(v);
    free(v);
    return unit_done("names");
}
