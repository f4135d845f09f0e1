/*
 * deadletter.c -- a batch's dead letters, written once per stream with the
 * batch's own write (see deadletter.h).
 *
 *   dead_letters_take, dead_letters_append, dead_letters_free, dead_set_free
 *
 * A Kafka reader keeps the records it could not decode (kafka_reader.c) and
 * hands them over when it closes; the batch appends them in the RocksDB
 * write that commits its state (incremental.c), so a batch that never
 * committed recorded none of them, and its replay records them once.  The
 * 'D' keys make the append idempotent across replays and queries: the
 * caller's lock (the registry's IncShared.dead_mu, one per state store)
 * makes "is the key there? then append row and key" one step.
 */
#include "sluice/deadletter.h"

#include "sluice/bytes.h"
#include "sluice/log.h"

#include <inttypes.h>

void dead_letters_take(DeadLetters *dl, DeadSet *s)
{
    if (dl->n == dl->cap) {
        dl->cap = dl->cap ? dl->cap * 2 : 2;
        dl->sets = sl_realloc(dl->sets, sizeof(DeadSet) * (size_t)dl->cap);
    }
    dl->sets[dl->n++] = *s;
    memset(s, 0, sizeof(*s));
}

void dead_set_free(DeadSet *s)
{
    if (s->rel == NULL)
        return;
    cat_relation_unref(s->rel);
    arena_destroy(&s->arena);
    memset(s, 0, sizeof(*s));
}

void dead_letters_free(DeadLetters *dl)
{
    for (int i = 0; i < dl->n; i++)
        dead_set_free(&dl->sets[i]);
    sl_free(dl->sets);
    memset(dl, 0, sizeof(*dl));
}

/* 'D' + oid + the record's key, in a. */
static SlStr marker(Arena *a, uint32_t oid, SlStr key)
{
    uint8_t *k = arena_alloc(a, 5 + key.len);
    k[0] = 'D';
    put_be32(k + 1, oid);
    memcpy(k + 5, key.ptr, key.len);
    return (SlStr){(const char *)k, 5 + key.len};
}

/* Keeps the rows of s->rows whose keep[i] is set, in order. */
static void keep_rows(Batch *b, const uint8_t *keep)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->nrows; i++) {
        if (!keep[i])
            continue;
        for (uint32_t c = 0; c < b->ncols; c++) {
            Vector *v = &b->cols[c];
            size_t w = type_width(v->type.id);
            if (k != i) {
                memmove((char *)v->v.data + k * w, (char *)v->v.data + i * w, w);
                if (v->nulls != NULL)
                    v->nulls[k] = v->nulls[i];
            }
        }
        k++;
    }
    b->nrows = k;
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = k;
}

/* mu serializes the calls that carry dead letters: between the look at
 * the 'D' keys and the write that adds them. */
int dead_letters_append(StateStore *st, pthread_mutex_t *mu, DeadLetters *dl,
                        StreamAppend *apps, int napps, StateBatch *wb, SlError *err)
{
    if (dl == NULL || dl->n == 0)
        return stream_append_many(st, apps, napps, wb, err);
    int total = napps + dl->n;
    StreamAppend *all = sl_calloc((size_t)total, sizeof(StreamAppend));
    memcpy(all, apps, sizeof(StreamAppend) * (size_t)napps);
    Arena a;
    arena_init(&a, 4096);
    int rc = -1, n = napps;
    int64_t skipped = 0;
    pthread_mutex_lock(mu);
    for (int s = 0; s < dl->n; s++) {
        DeadSet *ds = &dl->sets[s];
        Batch *b = ds->rows;
        uint8_t *keep = arena_alloc(&a, b->nrows ? b->nrows : 1);
        SlStr *marks = ARENA_ARRAY(&a, SlStr, b->nrows ? b->nrows : 1);
        for (uint32_t i = 0; i < b->nrows; i++) {
            marks[i] = marker(&a, ds->rel->oid, ds->keys[i]);
            void *val;
            size_t vlen;
            int found = state_get(st, marks[i].ptr, marks[i].len, &a, &val, &vlen, err);
            if (found < 0)
                goto out;
            /* The same record twice in one batch (a stream read twice). */
            for (uint32_t j = 0; j < i && !found; j++)
                found = keep[j] && marks[j].len == marks[i].len &&
                        memcmp(marks[j].ptr, marks[i].ptr, marks[i].len) == 0;
            keep[i] = !found;
            if (found)
                skipped++;
            else
                state_batch_put(wb, marks[i].ptr, marks[i].len, "", 0);
        }
        keep_rows(b, keep);
        if (b->nrows > 0)
            all[n++] = (StreamAppend){ds->rel, (const Batch *const *)&ds->rows, 1, NULL, 0};
    }
    if (skipped > 0)
        sl_log(LOG_INFO, "dead letters recorded before, not appended again",
               "records=%" PRId64, skipped);
    rc = stream_append_many(st, all, n, wb, err);
    memcpy(apps, all, sizeof(StreamAppend) * (size_t)napps);
out:
    pthread_mutex_unlock(mu);
    arena_destroy(&a);
    sl_free(all);
    return rc;
}
