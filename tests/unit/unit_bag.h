/*
 * unit_bag.h -- a multiset of text lines with weights, for the operator
 * graph's tests that sum an operator's output (test_engine_join.c,
 * unit_set.h).
 *
 *   Bag, Line      the lines and their weights (a line of weight 0 is gone)
 *   bag_add        add a weight to a line
 *   bag_get        a line's weight
 *   bag_equal      two bags equal (the differences printed when not)
 *   bag_clear      free a bag
 */
#ifndef SLUICE_TESTS_UNIT_BAG_H
#define SLUICE_TESTS_UNIT_BAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Line {
    char    *text;
    int64_t  w;
} Line;

typedef struct Bag {
    Line *l;
    int   n, cap;
} Bag;

__attribute__((unused))
static void bag_add(Bag *b, const char *text, int64_t w)
{
    if (w == 0)
        return;
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->l[i].text, text) == 0) {
            b->l[i].w += w;
            if (b->l[i].w == 0) {
                free(b->l[i].text);
                b->l[i] = b->l[--b->n];
            }
            return;
        }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->l = realloc(b->l, sizeof(Line) * (size_t)b->cap);
    }
    b->l[b->n].text = strdup(text);
    b->l[b->n].w = w;
    b->n++;
}

__attribute__((unused))
static void bag_clear(Bag *b)
{
    for (int i = 0; i < b->n; i++)
        free(b->l[i].text);
    free(b->l);
    memset(b, 0, sizeof(*b));
}

__attribute__((unused))
static int64_t bag_get(const Bag *b, const char *text)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->l[i].text, text) == 0)
            return b->l[i].w;
    return 0;
}

/* Are a and b equal?  Prints the differences when not. */
__attribute__((unused))
static bool bag_equal(const Bag *a, const Bag *b, const char *what)
{
    bool ok = true;
    for (int i = 0; i < a->n; i++)
        if (bag_get(b, a->l[i].text) != a->l[i].w) {
            fprintf(stderr, "%s: %s: got %lld, want %lld\n", what, a->l[i].text,
                    (long long)a->l[i].w, (long long)bag_get(b, a->l[i].text));
            ok = false;
        }
    for (int i = 0; i < b->n; i++)
        if (bag_get(a, b->l[i].text) == 0) {
            fprintf(stderr, "%s: %s: got 0, want %lld\n", what, b->l[i].text,
                    (long long)b->l[i].w);
            ok = false;
        }
    return ok;
}

#endif /* SLUICE_TESTS_UNIT_BAG_H */
