/*
 * resfile.c -- result files: segment files of large result-log batches
 * (see resfile.h for the layout, docs/engine.md "Result logs" for the
 * invariants).
 *
 *   resfile_chain_start, resfile_frame_seal
 *   resfile_open, resfile_append, resfile_finish, resfile_close
 *   resfile_read_init, resfile_read_begin, resfile_read_chunk, resfile_read_end
 *   resfile_remove_all, resfile_link_all
 *   resfile_pad, resfile_direct_io, resfile_use_direct_io, resfile_written
 *   resfile_shared_new, resfile_shared_free
 *                      what each StateStore holds for this file (state_int.h)
 *
 * Writes are pwrite at the region's own offsets, so a region's bytes do
 * not depend on what a crashed attempt left behind: the attempt that
 * commits truncates the file back to the last committed end first.  Every
 * checksum is CRC-32C (sl_crc32c: the SSE4.2 instruction where the CPU has
 * it), computed once per byte as a chunk is cut and once per byte read.
 *
 * Direct I/O: a region starts at a RESFILE_ALIGN-aligned offset and is
 * padded with zeros to a multiple of RESFILE_ALIGN (the reference holds
 * its exact length; the tail is the padded end), so a batch never writes
 * into a block of a committed region.  The segment is opened with
 * O_DIRECT and the region goes through an aligned staging buffer of
 * RESFILE_STAGE_BYTES (kept in a small pool, so it stays warm across
 * batches): the device reads it, and no result byte is copied into the
 * page cache.  Where the filesystem refuses O_DIRECT (open or a write
 * gives EINVAL) the file is written through the page cache instead, with
 * the same bytes; SLUICE_RESULT_DIRECT_IO=off forces that everywhere.
 * Readers read through the page cache: Linux keeps it coherent with
 * O_DIRECT writes (a direct write invalidates the pages it covers).
 *
 * The switch, the log lines said, the bytes counted and the staging pool
 * are the store's (ResfileShared, held by the StateStore; a ResFile keeps
 * its store's): this file keeps no state of its own.
 */
#include "resfile.h"
#include "state_int.h"

#include "sluice/bytes.h"
#include "sluice/crc32c.h"
#include "sluice/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESFILE_MAGIC   0x31524c53u     /* "SLR1" */
#define RESFILE_VERSION 1

struct ResFile {
    ResfileShared *sh;          /* its store's */
    int        fd;
    bool       direct;          /* fd is O_DIRECT: writes go through stage */
    uint32_t   oid;
    int64_t    batch;
    uint64_t   seg;
    uint64_t   start, pos;      /* the region's first byte; the next byte */
    uint64_t   written;         /* the file holds the region up to here;
                                 * direct: stage holds [written, pos) */
    uint8_t   *stage;           /* RESFILE_STAGE_BYTES, RESFILE_ALIGN-aligned */
    char       path[PATH_MAX];
};

/* ---------------------------------------------------------------------- */
/* Direct I/O: the switch, the staging buffers                             */

/* -1: not decided yet (SLUICE_RESULT_DIRECT_IO read at the first open);
 * 0 off, 1 on; in fault-injection builds also DIRECT_REFUSE_OPEN and
 * DIRECT_REFUSE_WRITE: on, but every O_DIRECT open, or the first direct
 * write of each file, fails with EINVAL as on a filesystem that refuses
 * them (the fallback's tests). */
enum { DIRECT_REFUSE_OPEN = 2, DIRECT_REFUSE_WRITE = 3 };

/* Staging buffers no writer holds (a writer holds one from resfile_open to
 * resfile_close): reused, so the pages the device reads are warm. */
#define STAGE_POOL 4

/* A store's switch, log lines, byte counts and staging buffers
 * (state_resfile): each store has its own. */
struct ResfileShared {
    _Atomic int      direct_mode;   /* -1 until decided, or the mode */
    _Atomic bool     said_direct, said_buffered;
    _Atomic uint64_t bytes_direct, bytes_buffered;
    pthread_mutex_t  mu;            /* guards stage and nstage */
    uint8_t         *stage[STAGE_POOL];
    int              nstage;
};

ResfileShared *resfile_shared_new(void)
{
    ResfileShared *sh = sl_calloc(1, sizeof(ResfileShared));
    atomic_init(&sh->direct_mode, -1);
    pthread_mutex_init(&sh->mu, NULL);
    return sh;
}

void resfile_shared_free(ResfileShared *sh)
{
    if (sh == NULL)
        return;
    for (int i = 0; i < sh->nstage; i++)
        free(sh->stage[i]);
    pthread_mutex_destroy(&sh->mu);
    sl_free(sh);
}

static int mode(ResfileShared *sh)
{
    int m = atomic_load(&sh->direct_mode);
    if (m < 0) {
        const char *v = getenv("SLUICE_RESULT_DIRECT_IO");
        m = 1;
        if (v != NULL && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 ||
                          strcmp(v, "false") == 0))
            m = 0;
#ifdef SLUICE_FAULT_INJECTION
        if (v != NULL && strcmp(v, "refuse-open") == 0)
            m = DIRECT_REFUSE_OPEN;
        if (v != NULL && strcmp(v, "refuse-write") == 0)
            m = DIRECT_REFUSE_WRITE;
#endif
        atomic_store(&sh->direct_mode, m);
    }
    return m;
}

void resfile_use_direct_io(StateStore *st, int m)
{
    atomic_store(&state_resfile(st)->direct_mode, m);
}

bool resfile_direct_io(StateStore *st)
{
    return mode(state_resfile(st)) != 0;
}

void resfile_written(StateStore *st, uint64_t *direct, uint64_t *buffered)
{
    ResfileShared *sh = state_resfile(st);
    *direct = atomic_load(&sh->bytes_direct);
    *buffered = atomic_load(&sh->bytes_buffered);
}

uint64_t resfile_pad(uint64_t n)
{
    return (n + RESFILE_ALIGN - 1) & ~(uint64_t)(RESFILE_ALIGN - 1);
}

/* Says once per store how result files are written. */
static void say_mode(ResfileShared *sh, bool direct, const char *path, const char *why)
{
    _Atomic bool *said = direct ? &sh->said_direct : &sh->said_buffered;
    if (atomic_exchange(said, true))
        return;
    if (direct)
        sl_log(LOG_INFO, "result files written with direct I/O", "path=%s",
               log_value(path));
    else
        sl_log(why != NULL ? LOG_WARN : LOG_INFO,
               "result files written through the page cache", "path=%s reason=\"%s\"",
               log_value(path), log_quote(why != NULL ? why : "SLUICE_RESULT_DIRECT_IO=off"));
}

static uint8_t *stage_get(ResfileShared *sh)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&sh->mu);
    if (sh->nstage > 0)
        b = sh->stage[--sh->nstage];
    pthread_mutex_unlock(&sh->mu);
    if (b == NULL) {
        void *p;
        if (posix_memalign(&p, RESFILE_ALIGN, RESFILE_STAGE_BYTES) != 0)
            sl_panic("out of memory allocating %u bytes", (unsigned)RESFILE_STAGE_BYTES);
        b = p;
    }
    return b;
}

static void stage_put(ResfileShared *sh, uint8_t *b)
{
    if (b == NULL)
        return;
    pthread_mutex_lock(&sh->mu);
    if (sh->nstage < STAGE_POOL) {
        sh->stage[sh->nstage++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&sh->mu);
    free(b);
}

static void seg_path(StateStore *st, uint32_t oid, uint64_t seg, char *out, size_t n)
{
    snprintf(out, n, "%s/results/%08" PRIx32 "-%016" PRIx64 ".seg", state_dir(st), oid, seg);
}

static void tail_key(uint32_t oid, uint8_t *k)
{
    k[0] = 'M';
    put_be32(k + 1, oid);
    k[5] = 'F';
}

static int sys_error(SlError *err, const char *what, const char *path)
{
    /* A full disk is 53100: the continuous query retries until space is
     * freed (docs/operations.md, "Disk full"). */
    return sl_error(err, errno == ENOSPC || errno == EDQUOT ? ERRCODE_DISK_FULL : ERRCODE_IO_ERROR,
                    "result file \"%s\": %s: %s", path, what, strerror(errno));
}

static int corrupt_at(SlError *err, uint32_t oid, uint64_t seg, uint64_t off, int64_t batch,
                      const char *what)
{
    sl_error(err, ERRCODE_DATA_CORRUPTED,
             "the result file of relation %" PRIu32 " is corrupt: %s", oid, what);
    sl_error_detail(err, "Segment %016" PRIx64 ", offset %" PRIu64 ", batch %" PRId64 ".", seg,
                    off, batch);
    return -1;
}

/* A segment a committed reference names is not there.  DROP deletes the
 * relation's keys (its tail key among them) before it unlinks the files, so
 * a scan that reads from an older snapshot finds the files gone once the
 * tail key is: the relation was dropped under it (42P01).  With the tail
 * key still there the file was lost: XX001. */
static int missing(StateStore *st, uint32_t oid, uint64_t seg, uint64_t off, int64_t batch,
                   SlError *err)
{
    uint8_t k[6];
    tail_key(oid, k);
    Arena a;
    arena_init(&a, 256);
    void *v;
    size_t vlen;
    int got = state_get(st, k, sizeof(k), &a, &v, &vlen, err);
    arena_destroy(&a);
    if (got < 0)
        return -1;
    if (got == 0)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE,
                        "relation %" PRIu32 " was dropped while it was being read", oid);
    return corrupt_at(err, oid, seg, off, batch, "a segment file is missing");
}

/* fsyncs a directory, so that a file created or removed in it stays so. */
static int sync_dir(const char *dir, SlError *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sys_error(err, "open directory", dir);
    int rc = fsync(fd);
    close(fd);
    return rc < 0 ? sys_error(err, "fsync directory", dir) : 0;
}

static int write_all(int fd, const void *p, size_t n, uint64_t off)
{
    const char *s = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, s, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        s += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Reads exactly n bytes at off: 0, 1 when the file ends first, -1 on error. */
static int read_all(int fd, void *p, size_t n, uint64_t off)
{
    char *s = p;
    while (n > 0) {
        ssize_t r = pread(fd, s, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return 1;
        s += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

static void region_header(int64_t batch_id, uint8_t *h)
{
    put_le32(h, RESFILE_MAGIC);
    put_le32(h + 4, 0);
    put_le64(h + 8, (uint64_t)batch_id);
}

uint32_t resfile_chain_start(int64_t batch_id)
{
    uint8_t h[RESFILE_REGION_HEADER];
    region_header(batch_id, h);
    return sl_crc32c(0, h, sizeof(h));
}

void resfile_frame_seal(uint8_t *hdr, uint32_t len, uint32_t *chain)
{
    put_le32(hdr, len);
    put_le32(hdr + 4, sl_crc32c(0, hdr + RESFILE_FRAME_HEADER, len));
    *chain = sl_crc32c(*chain, hdr, RESFILE_FRAME_HEADER);
}

/* ---------------------------------------------------------------------- */
/* Writer                                                                  */

int resfile_open(StateStore *st, uint32_t oid, int64_t batch_id, ResFile **out, SlError *err)
{
    uint8_t tk[6];
    tail_key(oid, tk);
    Arena a;
    arena_init(&a, 128);
    void *val;
    size_t vlen;
    int got = state_get(st, tk, sizeof(tk), &a, &val, &vlen, err);
    uint64_t seg = 0, end = 0;
    if (got == 1 && vlen == 16) {
        seg = get_le64(val);
        end = get_le64((const uint8_t *)val + 8);
    } else if (got == 1) {
        arena_destroy(&a);
        return sl_error(err, ERRCODE_DATA_CORRUPTED,
                        "the result file tail of relation %" PRIu32 " is corrupt", oid);
    }
    arena_destroy(&a);
    if (got < 0)
        return -1;

    ResFile *f = sl_calloc(1, sizeof(ResFile));
    f->sh = state_resfile(st);
    f->oid = oid;
    f->batch = batch_id;
    bool fresh = got == 0 || end >= RESFILE_SEGMENT_BYTES;
    if (fresh) {
        seg = (uint64_t)batch_id;
        end = 0;
    }
    f->seg = seg;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/results", state_dir(st));
    seg_path(st, oid, seg, f->path, sizeof(f->path));
    SLUICE_FAULT("result_file_before_write");
    /* A region starts on a block of its own: after an older, unpadded
     * region (a segment written before direct I/O) the bytes up to the
     * boundary are a hole nothing refers to. */
    f->start = f->pos = f->written = resfile_pad(end);
    bool direct = mode(f->sh) != 0;
    int flags = O_WRONLY | O_CLOEXEC | (fresh ? O_CREAT | O_TRUNC : 0);
    bool made = false;
    if (fresh) {
        /* A new segment, named by this batch: a replay of the batch opens
         * the same name and overwrites what an earlier attempt wrote. */
        made = mkdir(dir, 0755) == 0;
        if (!made && errno != EEXIST) {
            sys_error(err, "mkdir", dir);
            sl_free(f);
            return -1;
        }
    }
    f->fd = direct ? open(f->path, flags | O_DIRECT, 0644) : -1;
#ifdef SLUICE_FAULT_INJECTION
    if (f->fd >= 0 && mode(f->sh) == DIRECT_REFUSE_OPEN) {
        close(f->fd);
        f->fd = -1;
        errno = EINVAL;
    }
#endif
    if (direct && f->fd < 0 && errno == EINVAL) {
        say_mode(f->sh, false, f->path, "the filesystem refuses O_DIRECT");
        direct = false;
    }
    if (!direct)
        f->fd = open(f->path, flags, 0644);
    else if (f->fd >= 0)
        say_mode(f->sh, true, f->path, NULL);
    if (f->fd < 0) {
        if (!fresh && errno == ENOENT)
            corrupt_at(err, oid, seg, end, batch_id, "its last segment file is missing");
        else
            sys_error(err, fresh ? "create" : "open", f->path);
        resfile_close(f);
        return -1;
    }
    if (direct) {
        f->direct = true;
        f->stage = stage_get(f->sh);
    } else if (mode(f->sh) == 0) {
        say_mode(f->sh, false, f->path, NULL);
    }
    if (fresh) {
        if ((made && sync_dir(state_dir(st), err) < 0) || sync_dir(dir, err) < 0) {
            resfile_close(f);
            return -1;
        }
    } else if (ftruncate(f->fd, (off_t)end) < 0) {
        /* What a crashed or failed attempt left past the committed end. */
        sys_error(err, "truncate", f->path);
        resfile_close(f);
        return -1;
    }
    uint8_t h[RESFILE_REGION_HEADER];
    region_header(batch_id, h);
    if (resfile_append(f, h, sizeof(h), err) < 0) {
        resfile_close(f);
        return -1;
    }
    *out = f;
    return 0;
}

/* Writes n bytes (a multiple of RESFILE_ALIGN) of the stage at f->written.
 * Where the file takes no direct write (EINVAL: alignment the filesystem
 * wants larger), it drops O_DIRECT and writes them through the page cache:
 * the region goes on buffered. */
static int stage_write(ResFile *f, size_t n, SlError *err)
{
    int rc = 0;
#ifdef SLUICE_FAULT_INJECTION
    if (mode(f->sh) == DIRECT_REFUSE_WRITE) {
        rc = -1;
        errno = EINVAL;
    }
#endif
    if (rc < 0 || write_all(f->fd, f->stage, n, f->written) < 0) {
        int fl;
        if (errno != EINVAL || (fl = fcntl(f->fd, F_GETFL)) < 0 ||
            fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) < 0)
            return sys_error(err, "write", f->path);
        say_mode(f->sh, false, f->path, "a direct write was refused (EINVAL)");
        f->direct = false;
        if (write_all(f->fd, f->stage, n, f->written) < 0)
            return sys_error(err, "write", f->path);
    }
    atomic_fetch_add(f->direct ? &f->sh->bytes_direct : &f->sh->bytes_buffered, n);
    f->written += n;
    return 0;
}

int resfile_append(ResFile *f, const void *p, size_t n, SlError *err)
{
    const uint8_t *s = p;
    while (f->direct && n > 0) {
        size_t used = (size_t)(f->pos - f->written);
        size_t take = RESFILE_STAGE_BYTES - used < n ? RESFILE_STAGE_BYTES - used : n;
        memcpy(f->stage + used, s, take);
        f->pos += take;
        s += take;
        n -= take;
        if (used + take == RESFILE_STAGE_BYTES && stage_write(f, RESFILE_STAGE_BYTES, err) < 0)
            return -1;
    }
    if (n == 0)
        return 0;
    /* Buffered (the stage is empty: a refused direct write wrote it). */
    if (write_all(f->fd, s, n, f->pos) < 0)
        return sys_error(err, "write", f->path);
    atomic_fetch_add(&f->sh->bytes_buffered, n);
    f->pos += n;
    f->written = f->pos;
    return 0;
}

int resfile_finish(ResFile *f, StateBatch *wb, uint32_t frames, uint64_t rows, uint32_t chain,
                   SlError *err)
{
    /* The padding: zeros up to the next block, never read. */
    uint64_t end = f->start + resfile_pad(f->pos - f->start);
    if (f->direct) {
        size_t used = (size_t)(f->pos - f->written), n = (size_t)(end - f->written);
        memset(f->stage + used, 0, n - used);
        if (n > 0 && stage_write(f, n, err) < 0)
            return -1;
    } else if (end > f->pos) {
        static const uint8_t zeros[RESFILE_ALIGN];
        if (write_all(f->fd, zeros, (size_t)(end - f->pos), f->pos) < 0)
            return sys_error(err, "write", f->path);
        atomic_fetch_add(&f->sh->bytes_buffered, end - f->pos);
    }
    if (SLUICE_FAULT_FAILS("result_file_sync") || fdatasync(f->fd) < 0)
        return sys_error(err, "fdatasync", f->path);
    SLUICE_FAULT("result_file_after_sync");
    uint8_t key[13], ref[RESFILE_REF_BYTES], tk[6], tail[16];
    key[0] = 'A';
    put_be32(key + 1, f->oid);
    put_be64(key + 5, (uint64_t)f->batch);
    memset(ref, 0, sizeof(ref));
    ref[0] = RESFILE_VERSION;
    put_le32(ref + 4, frames);
    put_le64(ref + 8, f->seg);
    put_le64(ref + 16, f->start);
    put_le64(ref + 24, f->pos - f->start);
    put_le64(ref + 32, rows);
    put_le32(ref + 40, chain);
    put_le32(ref + 44, sl_crc32c(0, ref, 44));
    state_batch_put(wb, key, sizeof(key), ref, sizeof(ref));
    tail_key(f->oid, tk);
    put_le64(tail, f->seg);
    put_le64(tail + 8, end);
    state_batch_put(wb, tk, sizeof(tk), tail, sizeof(tail));
    return 0;
}

void resfile_close(ResFile *f)
{
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    stage_put(f->sh, f->stage);
    sl_free(f);
}

/* ---------------------------------------------------------------------- */
/* Reader                                                                  */

void resfile_read_init(ResFileRead *r)
{
    memset(r, 0, sizeof(*r));
    r->fd = -1;
}

int resfile_read_begin(ResFileRead *r, StateStore *st, uint32_t oid, int64_t batch_id,
                       const void *refp, size_t reflen, SlError *err)
{
    const uint8_t *ref = refp;
    if (reflen != RESFILE_REF_BYTES || ref[0] != RESFILE_VERSION ||
        get_le32(ref + 44) != sl_crc32c(0, ref, 44))
        return corrupt_at(err, oid, 0, 0, batch_id, "a reference to it is damaged");
    uint64_t seg = get_le64(ref + 8), off = get_le64(ref + 16), len = get_le64(ref + 24);
    if (r->fd < 0 || r->oid != oid || r->seg != seg) {
        if (r->fd >= 0)
            close(r->fd);
        char path[PATH_MAX];
        seg_path(st, oid, seg, path, sizeof(path));
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0) {
            if (errno == ENOENT)
                return missing(st, oid, seg, off, batch_id, err);
            return sys_error(err, "open", path);
        }
        r->oid = oid;
        r->seg = seg;
    }
    uint8_t h[RESFILE_REGION_HEADER], want[RESFILE_REGION_HEADER];
    int rc = len < sizeof(h) ? 1 : read_all(r->fd, h, sizeof(h), off);
    if (rc < 0)
        return sl_error(err, ERRCODE_IO_ERROR, "result file: read: %s", strerror(errno));
    region_header(batch_id, want);
    if (rc == 1 || memcmp(h, want, sizeof(h)) != 0)
        return corrupt_at(err, oid, seg, off, batch_id, "a region header does not match");
    r->batch = batch_id;
    r->pos = off + sizeof(h);
    r->end = off + len;
    r->frames_left = get_le32(ref + 4);
    r->want_chain = get_le32(ref + 40);
    r->chain = sl_crc32c(0, h, sizeof(h));
    return 0;
}

int resfile_read_chunk(ResFileRead *r, Arena *a, const uint8_t **chunk, size_t *len,
                       SlError *err)
{
    if (r->frames_left == 0) {
        if (r->pos != r->end || r->chain != r->want_chain)
            return corrupt_at(err, r->oid, r->seg, r->pos, r->batch,
                              "a region's frame headers do not match its reference");
        return 0;
    }
    uint8_t h[RESFILE_FRAME_HEADER];
    if (r->end - r->pos < sizeof(h))
        return corrupt_at(err, r->oid, r->seg, r->pos, r->batch, "a region is short");
    int rc = read_all(r->fd, h, sizeof(h), r->pos);
    if (rc < 0)
        return sl_error(err, ERRCODE_IO_ERROR, "result file: read: %s", strerror(errno));
    uint32_t n = get_le32(h);
    if (rc == 1 || n > r->end - r->pos - sizeof(h))
        return corrupt_at(err, r->oid, r->seg, r->pos, r->batch,
                          "a chunk runs past its region (torn or damaged)");
    uint8_t *c = arena_alloc(a, n ? n : 1);
    rc = read_all(r->fd, c, n, r->pos + sizeof(h));
    if (rc < 0)
        return sl_error(err, ERRCODE_IO_ERROR, "result file: read: %s", strerror(errno));
    if (rc == 1 || sl_crc32c(0, c, n) != get_le32(h + 4))
        return corrupt_at(err, r->oid, r->seg, r->pos, r->batch,
                          "a chunk's checksum does not match");
    r->chain = sl_crc32c(r->chain, h, sizeof(h));
    r->pos += sizeof(h) + n;
    r->frames_left--;
    *chunk = c;
    *len = n;
    return 1;
}

void resfile_read_end(ResFileRead *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

/* ---------------------------------------------------------------------- */
/* Removal                                                                 */

int resfile_remove_all(StateStore *st, uint32_t oid, SlError *err)
{
    char dir[PATH_MAX], prefix[16], path[PATH_MAX + 256];
    snprintf(dir, sizeof(dir), "%s/results", state_dir(st));
    snprintf(prefix, sizeof(prefix), "%08" PRIx32 "-", oid);
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT ? 0 : sys_error(err, "open directory", dir);
    int rc = 0, removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, 9) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (unlink(path) < 0 && errno != ENOENT) {
            rc = sys_error(err, "unlink", path);
            break;
        }
        removed++;
    }
    closedir(d);
    if (rc == 0 && removed > 0)
        rc = sync_dir(dir, err);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Checkpoints                                                             */

/* A checkpoint taken after the state's: a segment a committed reference
 * names was written in full before that reference's write, so its link
 * holds the region (what a later batch appends past the committed end,
 * or a later commit truncates away past it, is never read through the
 * copy's references).  The caller copies the links' bytes before anything
 * may write through them (src/runtime/backup.c). */
int resfile_link_all(StateStore *st, const char *dir, SlError *err)
{
    char src_dir[PATH_MAX], dst_dir[PATH_MAX], src[PATH_MAX + 256], dst[PATH_MAX + 256];
    snprintf(src_dir, sizeof(src_dir), "%s/results", state_dir(st));
    snprintf(dst_dir, sizeof(dst_dir), "%s/results", dir);
    DIR *d = opendir(src_dir);
    if (d == NULL)
        return errno == ENOENT ? 0 : sys_error(err, "open directory", src_dir);
    int rc = 0;
    if (mkdir(dst_dir, 0700) < 0 && errno != EEXIST)
        rc = sys_error(err, "mkdir", dst_dir);
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".seg") != 0)
            continue;
        snprintf(src, sizeof(src), "%s/%s", src_dir, e->d_name);
        snprintf(dst, sizeof(dst), "%s/%s", dst_dir, e->d_name);
        /* a segment unlinked meanwhile (DROP) belongs to no relation of
         * the copied catalog */
        if (link(src, dst) < 0 && errno != ENOENT)
            rc = sys_error(err, "link", dst);
    }
    closedir(d);
    return rc;
}
