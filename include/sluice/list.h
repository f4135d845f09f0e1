/*
 * list.h -- a growable array of pointers in an arena.
 */
#ifndef SLUICE_LIST_H
#define SLUICE_LIST_H

#include "sluice/arena.h"

typedef struct List {
    int    n;
    int    cap;
    void **items;
} List;

/* Appends item to l (made in a when l is NULL) and returns the list. */
List *list_append(Arena *a, List *l, void *item);
static inline int list_len(const List *l) { return l ? l->n : 0; }
static inline void *list_nth(const List *l, int i) { return l->items[i]; }

#endif /* SLUICE_LIST_H */
