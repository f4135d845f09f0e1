/*
 * list.c -- arena-backed pointer arrays (see list.h).
 */
#include "sluice/list.h"

List *list_append(Arena *a, List *l, void *item)
{
    if (l == NULL)
        l = ARENA_NEW(a, List);
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        void **items = ARENA_ARRAY(a, void *, cap);
        if (l->n)
            memcpy(items, l->items, sizeof(void *) * (size_t)l->n);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = item;
    return l;
}
