/*
 * kvsort.c -- an external sort of key/value pairs in bounded memory (see
 * kvsort.h).
 *
 *   kvsort_new, kvsort_add, kvsort_count, kvsort_in_memory, kvsort_merge_step, kvsort_next,
 *   kvsort_free
 *
 * In memory the pairs are records in one buffer (data) and an index of
 * them (ents: the 8 key bytes after the shared prefix, for a quick compare,
 * and the record).  A run file holds the records in key order, each
 * [key length (4), value length (4), CRC-32C of the lengths, key and value
 * (4)] then the key and the value (little-endian).  Run files are made
 * with mkstemp under state_bulk_dir and unlinked at once: only their open
 * descriptor keeps them, so they go with the sort or the process.
 * Reading merges the runs through a binary heap of readers, each with a
 * buffer of KV_IO_BYTES (grown for a record that does not fit).
 */
#include "sluice/kvsort.h"
#include "sluice/bytes.h"
#include "sluice/crc32c.h"
#include "sluice/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KV_HDR 12u                  /* key length, value length, CRC */
#define KV_IO_BYTES ((size_t)32 << 10)
#define KV_MIN_FANIN 4
#define KV_MAX_FANIN 96

typedef struct KvEnt {
    uint64_t pfx;               /* key bytes [skip, skip + 8), big-endian, 0-padded */
    union {
        size_t      off;        /* while adding: the record's offset in data */
        const char *rec;        /* once sorted */
    } u;
} KvEnt;

typedef struct KvRun {
    int      fd;
    uint64_t bytes;
} KvRun;

typedef struct KvReader {
    int      fd;
    uint64_t pos, end;          /* next file offset to read, the file's size */
    char    *buf;
    size_t   cap, len, at;      /* bytes in buf, the next record's start */
    SlStr    key, val;          /* the current record */
} KvReader;

struct KvSort {
    StateStore   *st;
    SlMemAccount *mem;
    size_t        charged;
    size_t        run_bytes, skip;
    int           fanin;
    uint64_t      count;
    /* in memory */
    StrBuf        data;
    KvEnt        *ents;
    size_t        nents, capents;
    /* on disk, oldest first */
    KvRun        *runs;
    int           nruns, capruns;
    StrBuf        wbuf;         /* a run being written */
    /* reading */
    int           reading;      /* 0 not yet, 1 from memory, 2 from the runs */
    size_t        next;         /* from memory: the next entry */
    KvReader     *rd;           /* from the runs: a reader each, and */
    int           nrd;
    int          *heap;         /* ... a min-heap of them by key */
    int           nheap;
    bool          popped;       /* heap[0]'s record was handed out */
};

/* Charges mem for the buffers held now. */
static void charge(KvSort *s)
{
    size_t held = s->data.cap + s->capents * sizeof(KvEnt) + s->wbuf.cap +
                  (size_t)s->capruns * sizeof(KvRun) + (size_t)s->nrd * (sizeof(KvReader) + sizeof(int));
    for (int i = 0; i < s->nrd; i++)
        held += s->rd[i].cap;
    if (held > s->charged)
        sl_mem_charge(s->mem, held - s->charged);
    else
        sl_mem_credit(s->mem, s->charged - held);
    s->charged = held;
}

KvSort *kvsort_new(StateStore *st, SlMemAccount *mem, size_t run_bytes, size_t skip)
{
    KvSort *s = sl_calloc(1, sizeof(KvSort));
    s->st = st;
    s->mem = mem;
    sl_mem_account_ref(mem);
    s->run_bytes = run_bytes;
    s->skip = skip;
    size_t f = run_bytes / KV_IO_BYTES;
    s->fanin = (int)SL_MAX(KV_MIN_FANIN, SL_MIN(KV_MAX_FANIN, f));
    strbuf_init(&s->data);
    strbuf_init(&s->wbuf);
    return s;
}

static void readers_close(KvSort *s)
{
    for (int i = 0; i < s->nrd; i++)
        sl_free(s->rd[i].buf);
    sl_free(s->rd);
    sl_free(s->heap);
    s->rd = NULL;
    s->heap = NULL;
    s->nrd = s->nheap = 0;
}

void kvsort_free(KvSort *s)
{
    if (s == NULL)
        return;
    readers_close(s);
    for (int i = 0; i < s->nruns; i++)
        close(s->runs[i].fd);
    sl_free(s->runs);
    sl_free(s->ents);
    strbuf_free(&s->data);
    strbuf_free(&s->wbuf);
    sl_mem_credit(s->mem, s->charged);
    sl_mem_account_unref(s->mem);
    sl_free(s);
}

uint64_t kvsort_count(const KvSort *s)
{
    return s->count;
}

bool kvsort_in_memory(const KvSort *s)
{
    return s->nruns == 0;
}

static int key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, SL_MIN(alen, blen));
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int ent_cmp(const void *pa, const void *pb)
{
    const KvEnt *a = pa, *b = pb;
    if (a->pfx != b->pfx)
        return a->pfx < b->pfx ? -1 : 1;
    const uint8_t *ra = (const uint8_t *)a->u.rec, *rb = (const uint8_t *)b->u.rec;
    return key_cmp((const char *)ra + KV_HDR, get_le32(ra), (const char *)rb + KV_HDR,
                   get_le32(rb));
}

static uint64_t key_prefix(const KvSort *s, const uint8_t *key, size_t klen)
{
    uint64_t p = 0;
    for (size_t i = 0; i < 8; i++)
        p = p << 8 | (s->skip + i < klen ? key[s->skip + i] : 0);
    return p;
}

static uint32_t rec_crc(const uint8_t *rec)
{
    uint32_t crc = sl_crc32c(0, rec, 8);
    return sl_crc32c(crc, rec + KV_HDR, (size_t)get_le32(rec) + get_le32(rec + 4));
}

/* Sorts the records held: ents point at them, in key order. */
static void sort_held(KvSort *s)
{
    for (size_t i = 0; i < s->nents; i++)
        s->ents[i].u.rec = s->data.data + s->ents[i].u.off;
    if (s->nents > 1)
        qsort(s->ents, s->nents, sizeof(KvEnt), ent_cmp);
}

static int write_error(SlError *err, int e)
{
    if (e == ENOSPC || e == EDQUOT) {
        sl_error(err, ERRCODE_DISK_FULL, "could not write a COPY spill file: %s", strerror(e));
        sl_error_hint(err, "Free space on the filesystem of the data directory "
                           "(docs/operations.md, \"Disk full\").");
        return -1;
    }
    return sl_error(err, ERRCODE_IO_ERROR, "could not write a COPY spill file: %s",
                    strerror(e));
}

static int write_all(int fd, const char *p, size_t n, SlError *err)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return write_error(err, errno);
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A new run file, already unlinked: its descriptor, or -1 with err. */
static int run_create(KvSort *s, SlError *err)
{
    if (state_check_room(s->st, err) < 0)
        return -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/run-XXXXXX", state_bulk_dir(s->st));
    int fd = mkstemp(path);
    if (fd < 0)
        return write_error(err, errno);
    unlink(path);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

/* Appends one record to the run being written through wbuf. */
static int run_put(KvSort *s, int fd, const uint8_t *rec, uint64_t *bytes, SlError *err)
{
    size_t n = KV_HDR + (size_t)get_le32(rec) + get_le32(rec + 4);
    *bytes += n;
    if (s->wbuf.len + n > KV_IO_BYTES && s->wbuf.len > 0) {
        if (write_all(fd, s->wbuf.data, s->wbuf.len, err) < 0)
            return -1;
        strbuf_reset(&s->wbuf);
    }
    if (n >= KV_IO_BYTES)
        return write_all(fd, (const char *)rec, n, err);
    strbuf_append(&s->wbuf, rec, n);
    return 0;
}

static int run_end(KvSort *s, int fd, uint64_t bytes, SlError *err)
{
    if (s->wbuf.len > 0 && write_all(fd, s->wbuf.data, s->wbuf.len, err) < 0)
        return -1;
    strbuf_reset(&s->wbuf);
    if (s->nruns == s->capruns) {
        s->capruns = s->capruns ? s->capruns * 2 : 16;
        s->runs = sl_realloc(s->runs, sizeof(KvRun) * (size_t)s->capruns);
    }
    s->runs[s->nruns++] = (KvRun){fd, bytes};
    charge(s);
    return 0;
}

/* Writes the records held as a run, in key order, and drops them. */
static int spill(KvSort *s, SlError *err)
{
    sort_held(s);
    int fd = run_create(s, err);
    if (fd < 0)
        return -1;
    uint64_t bytes = 0;
    for (size_t i = 0; i < s->nents; i++) {
        if (run_put(s, fd, (const uint8_t *)s->ents[i].u.rec, &bytes, err) < 0) {
            close(fd);
            return -1;
        }
    }
    if (run_end(s, fd, bytes, err) < 0) {
        close(fd);
        return -1;
    }
    strbuf_reset(&s->data);
    s->nents = 0;
    return 0;
}

int kvsort_add(KvSort *s, const void *key, size_t klen, const void *val, size_t vlen,
               SlError *err)
{
    size_t n = KV_HDR + klen + vlen;
    if (s->nents > 0 && s->data.len + n + s->nents * sizeof(KvEnt) > s->run_bytes &&
        spill(s, err) < 0)
        return -1;
    if (s->nents == s->capents) {
        s->capents = s->capents ? s->capents * 2 : 1024;
        s->ents = sl_realloc(s->ents, sizeof(KvEnt) * s->capents);
    }
    if (s->data.cap < s->run_bytes && s->data.len + n <= s->run_bytes)
        strbuf_reserve(&s->data, s->run_bytes - s->data.len);
    size_t off = s->data.len;
    uint8_t h[KV_HDR];
    put_le32(h, (uint32_t)klen);
    put_le32(h + 4, (uint32_t)vlen);
    strbuf_append(&s->data, h, sizeof(h));
    strbuf_append(&s->data, key, klen);
    strbuf_append(&s->data, val, vlen);
    uint8_t *rec = (uint8_t *)s->data.data + off;
    put_le32(rec + 8, rec_crc(rec));
    s->ents[s->nents].pfx = key_prefix(s, key, klen);
    s->ents[s->nents].u.off = off;
    s->nents++;
    s->count++;
    charge(s);
    return 0;
}

/* ------------------------------------------------------------- merging */

static int read_error(SlError *err, int e)
{
    return sl_error(err, ERRCODE_IO_ERROR, "could not read a COPY spill file: %s", strerror(e));
}

/* Reads the reader's next record: 1, 0 at the end of its run, -1. */
static int reader_next(KvSort *s, KvReader *r, SlError *err)
{
    for (;;) {
        size_t have = r->len - r->at;
        const uint8_t *p = (const uint8_t *)r->buf + r->at;
        size_t need = KV_HDR;
        if (have >= KV_HDR)
            need += (size_t)get_le32(p) + get_le32(p + 4);
        if (have >= KV_HDR && have >= need) {
            if (rec_crc(p) != get_le32(p + 8))
                return sl_error(err, ERRCODE_DATA_CORRUPTED,
                                "a COPY spill file is corrupt (checksum mismatch)");
            r->key = (SlStr){(const char *)p + KV_HDR, get_le32(p)};
            r->val = (SlStr){(const char *)p + KV_HDR + r->key.len, get_le32(p + 4)};
            r->at += need;
            return 1;
        }
        if (r->pos >= r->end) {
            if (have > 0)
                return sl_error(err, ERRCODE_DATA_CORRUPTED,
                                "a COPY spill file is corrupt (a record cut short)");
            return 0;
        }
        /* refill: keep the partial record, read up to the buffer's end */
        memmove(r->buf, r->buf + r->at, have);
        r->len = have;
        r->at = 0;
        if (need > r->cap) {
            r->cap = need;
            r->buf = sl_realloc(r->buf, r->cap);
            charge(s);
        }
        size_t want = (size_t)SL_MIN((uint64_t)(r->cap - r->len), r->end - r->pos);
        ssize_t got = pread(r->fd, r->buf + r->len, want, (off_t)r->pos);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return read_error(err, errno);
        if (got == 0)
            return sl_error(err, ERRCODE_DATA_CORRUPTED, "a COPY spill file is shorter than written");
        r->len += (size_t)got;
        r->pos += (uint64_t)got;
    }
}

static int heap_cmp(KvSort *s, int a, int b)
{
    const KvReader *x = &s->rd[a], *y = &s->rd[b];
    return key_cmp(x->key.ptr, x->key.len, y->key.ptr, y->key.len);
}

static void sift_down(KvSort *s, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && heap_cmp(s, s->heap[l], s->heap[m]) < 0)
            m = l;
        if (r < s->nheap && heap_cmp(s, s->heap[r], s->heap[m]) < 0)
            m = r;
        if (m == i)
            return;
        int t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* Readers over runs [0, n), each at its first record, in a heap. */
static int readers_open(KvSort *s, int n, SlError *err)
{
    s->rd = sl_calloc((size_t)(n ? n : 1), sizeof(KvReader));
    s->heap = sl_calloc((size_t)(n ? n : 1), sizeof(int));
    s->nrd = n;
    for (int i = 0; i < n; i++) {
        KvReader *r = &s->rd[i];
        r->fd = s->runs[i].fd;
        r->end = s->runs[i].bytes;
        r->cap = KV_IO_BYTES;
        r->buf = sl_malloc(r->cap);
    }
    charge(s);
    s->nheap = 0;
    for (int i = 0; i < n; i++) {
        int rc = reader_next(s, &s->rd[i], err);
        if (rc < 0)
            return -1;
        if (rc == 1)
            s->heap[s->nheap++] = i;
    }
    for (int i = s->nheap / 2 - 1; i >= 0; i--)
        sift_down(s, i);
    s->popped = false;
    return 0;
}

/* The smallest record of the readers: 1 with *r its reader, 0, -1. */
static int heap_next(KvSort *s, KvReader **r, SlError *err)
{
    if (s->popped && s->nheap > 0) {
        int rc = reader_next(s, &s->rd[s->heap[0]], err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            s->heap[0] = s->heap[--s->nheap];
        sift_down(s, 0);
    }
    s->popped = true;
    if (s->nheap == 0)
        return 0;
    *r = &s->rd[s->heap[0]];
    return 1;
}

/* Merges the oldest fan-in of runs into one new run, last in the list. */
static int merge_runs(KvSort *s, SlError *err)
{
    int n = s->fanin;
    if (readers_open(s, n, err) < 0)
        return -1;
    int fd = run_create(s, err);
    if (fd < 0)
        return -1;
    uint64_t bytes = 0;
    KvReader *r;
    int rc;
    while ((rc = heap_next(s, &r, err)) > 0)
        if (run_put(s, fd, (const uint8_t *)r->key.ptr - KV_HDR, &bytes, err) < 0) {
            rc = -1;
            break;
        }
    readers_close(s);
    if (rc == 0)
        rc = run_end(s, fd, bytes, err);
    if (rc < 0) {
        close(fd);
        return -1;
    }
    for (int i = 0; i < n; i++)
        close(s->runs[i].fd);
    memmove(s->runs, s->runs + n, sizeof(KvRun) * (size_t)(s->nruns - n));
    s->nruns -= n;
    charge(s);
    return 0;
}

int kvsort_merge_step(KvSort *s, SlError *err)
{
    if (s->reading != 0)
        return 0;
    if (s->nruns == 0) {
        sort_held(s);
        s->reading = 1;
        return 0;
    }
    if (s->nents > 0) {
        if (spill(s, err) < 0)
            return -1;
        /* the pairs are on disk: their buffer goes */
        strbuf_free(&s->data);
        strbuf_init(&s->data);
        sl_free(s->ents);
        s->ents = NULL;
        s->capents = 0;
        charge(s);
        return 1;
    }
    if (s->nruns > s->fanin)
        return merge_runs(s, err) < 0 ? -1 : 1;
    strbuf_free(&s->wbuf);
    strbuf_init(&s->wbuf);
    if (readers_open(s, s->nruns, err) < 0)
        return -1;
    s->reading = 2;
    return 0;
}

int kvsort_next(KvSort *s, SlStr *key, SlStr *val, SlError *err)
{
    if (s->reading == 1) {
        if (s->next >= s->nents)
            return 0;
        const uint8_t *rec = (const uint8_t *)s->ents[s->next++].u.rec;
        *key = (SlStr){(const char *)rec + KV_HDR, get_le32(rec)};
        *val = (SlStr){(const char *)rec + KV_HDR + key->len, get_le32(rec + 4)};
        return 1;
    }
    if (s->reading != 2)
        return sl_error(err, ERRCODE_INTERNAL_ERROR, "kvsort_next before the merge ended");
    KvReader *r;
    int rc = heap_next(s, &r, err);
    if (rc <= 0)
        return rc;
    *key = r->key;
    *val = r->val;
    return 1;
}
