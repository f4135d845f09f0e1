/*
 * ingest.c -- background work on streams: the files connector, dead
 * letters, retention (see ingest.h, docs/architecture.md "Ingestion").
 *
 *   ingest_init, ingest_close, ingest_start, ingest_stop
 *   ingest_validate, ingest_has_dead_letters, ingest_dead_letter_def,
 *   ingest_dead_letters_of
 *   ingest_check_readable, ingest_stats, ingest_foreach
 *   ingest_stats_by_name   the answer the runtime hands each evaluation
 *                          context for sluice_stream_stat() (ExFnHooks)
 *   ingest_stream_figures  per stream: rows, dead letters, bytes (/metrics)
 *
 * One Ingester per stream that needs background work: a files stream, or
 * a stream with a retention.  Each has a timer on the loop; when it fires
 * and no round is in flight, a round runs on the engine's pool (pool.h):
 *
 *   files: list the directory (names matching `pattern`, in name order);
 *   for each file with bytes past its recorded position, read (up to a
 *   budget for the whole round) and decode the whole records (a partial
 *   last line waits for its newline); then append in ONE durable RocksDB
 *   write the rows of all these files to the stream, their bad records to
 *   <stream>_dead_letters, and each file's new position ('F' + oid + file
 *   name -> position and counts).  A crash therefore never reads a record
 *   twice nor loses one: the rows and the positions that say they were
 *   read commit together.
 *
 *   retention: at most once a second, stream_retain deletes whole chunks
 *   older than `retention` or past `retention_bytes`.
 *
 * The directory is resolved and checked for the stream's owner at CREATE
 * and at each round (rt_files_resolve: no "..", never the data directory,
 * inside the files root for a non-superuser), and each file where its
 * open really landed (rt_files_check_fd), so a symlink leads nowhere else.
 *
 * The worker owns the file positions while a round is in flight; the
 * counters readers see are copied under a mutex at the end of each round.
 * The registry is the Runtime's (runtime.h: Runtime.ingest, its list of
 * ingesters and that mutex); each Ingester carries its Runtime (its loop,
 * engine pool and stores), so nothing here is global.
 */
#include "runtime_int.h"

#include "sluice/bytes.h"
#include "sluice/exec.h"
#include "sluice/expr.h"
#include "sluice/format.h"
#include "sluice/ingest.h"
#include "sluice/log.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_BUDGET          ((int64_t)16 << 20)   /* bytes per round, all files */
#define DEFAULT_RECORD_BYTES ((int64_t)1 << 20)
#define RETENTION_EVERY_US   1000000

typedef enum OnError { ON_ERROR_DEAD_LETTER, ON_ERROR_FAIL, ON_ERROR_SKIP } OnError;

typedef struct FileProg {
    char    *name;
    int64_t  pos, records, rows, dead, skipped;
    bool     refused;       /* its refusal logged (once, until it is read) */
} FileProg;

typedef struct Ingester Ingester;
struct Ingester {
    Ingester          *next;
    Runtime           *rt;          /* its loop, pool, stores, registry */
    const CatRelation *rel;         /* referenced */
    const CatRelation *dead;        /* its dead-letter stream, referenced; or NULL */
    Arena              arena;       /* options, spec */
    bool               files;       /* connector = 'files' */
    const char        *dir, *pattern;
    bool               csv;
    OnError            on_error;
    FmtSpec            spec;
    bool               header;
    int64_t            poll_ms;
    int64_t            retention_us, retention_bytes;
    uv_timer_t         timer;
    PoolWork           work;
    bool               in_flight, stopping, more, failure_logged;
    /* the worker's */
    bool               loaded;
    FileProg          *fp;
    int                nfp, capfp;
    int64_t            last_retention_us;
    /* under rt->ingest.mu: what readers see */
    IngestStats        stats;
    char              *error;
};


static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */

static int bad_option(SlError *err, const char *rel, const char *key, const char *why)
{
    return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "invalid value for option \"%s\" of stream \"%s\": %s", key, rel, why);
}

/* Reads rel's options into g (in g->arena); also the check at CREATE. */
static int read_options(Ingester *g, const CatRelation *rel, SlError *err)
{
    Options o;
    Arena *a = &g->arena;
    if (opts_parse(a, rel->options, &o, err) < 0)
        return -1;
    const char *connector = opts_get(&o, "connector");
    const char *format = opts_get(&o, "format");
    g->files = connector != NULL && strcmp(connector, "files") == 0;
    if (g->files) {
        g->dir = opts_get(&o, "path");
        if (g->dir == NULL || g->dir[0] == '\0')
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "a stream with connector = 'files' needs the option path "
                            "(the directory to read)");
        if (format == NULL)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "a stream with connector = 'files' needs the option format "
                            "('json' or 'csv')");
    }
    if (format != NULL) {
        if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0)
            return bad_option(err, rel->name, "format", "expected 'json' or 'csv'");
        if (connector == NULL || strcmp(connector, "internal") == 0)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "option format needs a connector that reads bytes "
                            "(connector = 'files')");
    }
    g->csv = format != NULL && strcmp(format, "csv") == 0;
    g->pattern = opts_get(&o, "pattern");
    if (g->pattern == NULL)
        g->pattern = "*";
    const char *on_error = opts_get(&o, "on_error");
    if (on_error == NULL || strcmp(on_error, "dead_letter") == 0)
        g->on_error = ON_ERROR_DEAD_LETTER;
    else if (strcmp(on_error, "fail") == 0)
        g->on_error = ON_ERROR_FAIL;
    else if (strcmp(on_error, "skip") == 0)
        g->on_error = ON_ERROR_SKIP;
    else
        return bad_option(err, rel->name, "on_error",
                          "expected 'dead_letter', 'fail' or 'skip'");
    int64_t us;
    if (opts_get_interval_us(&o, "poll_interval", 500000, &us, err) < 0)
        return -1;
    if (us < 1000)
        return bad_option(err, rel->name, "poll_interval", "must be at least 1 ms");
    g->poll_ms = us / 1000;
    if (opts_get_interval_us(&o, "retention", 0, &g->retention_us, err) < 0)
        return -1;
    if (g->retention_us < 0)
        return bad_option(err, rel->name, "retention", "must not be negative");
    if (opts_get_int(&o, "retention_bytes", 0, &g->retention_bytes, err) < 0)
        return -1;
    if (g->retention_bytes < 0)
        return bad_option(err, rel->name, "retention_bytes", "must not be negative");
    int64_t maxrec;
    if (opts_get_int(&o, "max_record_bytes", DEFAULT_RECORD_BYTES, &maxrec, err) < 0)
        return -1;
    if (maxrec < 16 || maxrec > READ_BUDGET / 2)
        return bad_option(err, rel->name, "max_record_bytes",
                          "must be between 16 and 8388608");
    if (opts_get_bool(&o, "header", false, &g->header, err) < 0)
        return -1;
    /* the decoder's view of the columns */
    const char **names = ARENA_ARRAY(a, const char *, rel->ncols);
    const char **paths = ARENA_ARRAY(a, const char *, rel->ncols);
    SlType *types = ARENA_ARRAY(a, SlType, rel->ncols);
    for (int i = 0; i < rel->ncols; i++) {
        names[i] = rel->cols[i].name;
        types[i] = rel->cols[i].type;
        char key[256];
        snprintf(key, sizeof(key), "fields.%s.path", rel->cols[i].name);
        paths[i] = opts_get(&o, key);
    }
    fmt_spec_init(&g->spec, a, rel->ncols, names, types, paths);
    g->spec.max_record_bytes = (size_t)maxrec;
    g->spec.delimiter = ',';
    g->spec.quote = '"';
    g->spec.null_string = "";
    const char *delim = opts_get(&o, "delimiter");
    if (delim != NULL) {
        if (strlen(delim) != 1 || delim[0] == '\n' || delim[0] == '\r' || delim[0] == '"')
            return bad_option(err, rel->name, "delimiter", "must be one character");
        g->spec.delimiter = delim[0];
    }
    const char *null_string = opts_get(&o, "null_string");
    if (null_string != NULL)
        g->spec.null_string = null_string;
    return 0;
}

bool rt_connector_is(const CatRelation *rel, const char *name)
{
    Arena a;
    arena_init(&a, 512);
    Options o;
    SlError err = {0};
    bool is = opts_parse(&a, rel->options, &o, &err) == 0 && opts_get(&o, "connector") != NULL &&
              strcmp(opts_get(&o, "connector"), name) == 0;
    sl_error_clear(&err);
    arena_destroy(&a);
    return is;
}

/* A Kafka stream: its connector (kafka_source.c) checks and reads it. */
static bool reads_kafka(const CatRelation *rel)
{
    return rt_connector_is(rel, "kafka");
}

int ingest_validate(Runtime *rt, const CatRelation *def, SlError *err)
{
    if (reads_kafka(def))
        return 0;
    Ingester g;
    memset(&g, 0, sizeof(g));
    arena_init(&g.arena, 1024);
    int rc = read_options(&g, def, err);
    if (rc == 0 && g.files) {
        struct stat sb;
        char real[PATH_MAX];
        bool exists;
        rc = rt_files_resolve(rt, g.dir, "files connector path", def->owner, real, &exists, err);
        if (rc == 0 && (!exists || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode)))
            rc = sl_error(err, ERRCODE_UNDEFINED_FILE,
                          "directory \"%s\" of stream \"%s\" does not exist", g.dir,
                          def->name);
    }
    arena_destroy(&g.arena);
    return rc;
}

bool ingest_has_dead_letters(const CatRelation *def)
{
    Arena a;
    arena_init(&a, 512);
    Options o;
    SlError err = {0};
    /* a Kafka stream decodes records even without a format (JSON) */
    bool has = def->kind == REL_STREAM &&
               ((opts_parse(&a, def->options, &o, &err) == 0 && opts_get(&o, "format") != NULL) ||
                reads_kafka(def));
    sl_error_clear(&err);
    arena_destroy(&a);
    return has;
}

CatRelation *ingest_dead_letter_def(Arena *a, const CatRelation *def)
{
    static const struct { const char *name; SlTypeId type; } cols[] = {
        {"raw", TYPE_BYTEA}, {"source", TYPE_TEXT}, {"byte_offset", TYPE_INT8},
        {"reason", TYPE_TEXT}, {"received_at", TYPE_TIMESTAMPTZ},
    };
    CatRelation *d = ARENA_NEW(a, CatRelation);
    d->name = arena_printf(a, "%s_dead_letters", def->name);
    d->kind = REL_STREAM;
    d->ncols = (int)SL_ARRAY_LEN(cols);
    d->cols = ARENA_ARRAY(a, CatColumn, d->ncols);
    for (int i = 0; i < d->ncols; i++) {
        d->cols[i].name = cols[i].name;
        d->cols[i].type = sl_type(cols[i].type);
        d->cols[i].not_null = false;
    }
    d->sql = arena_printf(a, "CREATE STREAM %s (" INGEST_DEAD_LETTER_COLUMNS ")", d->name);
    StrBuf b;
    strbuf_init(&b);
    strbuf_puts(&b, "{\"dead_letters_of\": \"");
    for (const char *p = def->name; *p; p++) {
        if (*p == '"' || *p == '\\')
            strbuf_putc(&b, '\\');
        strbuf_putc(&b, *p);
    }
    strbuf_puts(&b, "\"}");
    d->options = arena_strndup(a, b.data, b.len);
    strbuf_free(&b);
    return d;
}

const char *ingest_dead_letters_of(Arena *a, const CatRelation *rel)
{
    Options o;
    SlError err = {0};
    const char *of = NULL;
    if (rel->kind == REL_STREAM && opts_parse(a, rel->options, &o, &err) == 0)
        of = opts_get(&o, "dead_letters_of");
    sl_error_clear(&err);
    return of;
}

/* ---------------------------------------------------------------------- */
/* A round of the files connector (worker thread)                          */

/* 'F' + oid + file name */
static void prog_key(const Ingester *g, const char *name, StrBuf *key)
{
    uint8_t p[5] = {'F'};
    put_be32(p + 1, g->rel->oid);
    strbuf_reset(key);
    strbuf_append(key, p, sizeof(p));
    strbuf_puts(key, name);
}

/* The file's entry (kept sorted by name: a directory of many files costs
 * a binary search per file and round), added when add is set.  The pointer
 * is valid until the next addition. */
static FileProg *prog_find(Ingester *g, const char *name, bool add)
{
    int lo = 0, hi = g->nfp;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(g->fp[mid].name, name);
        if (c == 0)
            return &g->fp[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!add)
        return NULL;
    if (g->nfp == g->capfp) {
        g->capfp = g->capfp ? g->capfp * 2 : 16;
        g->fp = sl_realloc(g->fp, sizeof(FileProg) * (size_t)g->capfp);
    }
    memmove(&g->fp[lo + 1], &g->fp[lo], sizeof(FileProg) * (size_t)(g->nfp - lo));
    g->nfp++;
    FileProg *f = &g->fp[lo];
    memset(f, 0, sizeof(*f));
    f->name = sl_strdup(name);
    return f;
}

/* The positions recorded with the rows, read once per server start. */
static int prog_load(Ingester *g, SlError *err)
{
    uint8_t p[5] = {'F'};
    put_be32(p + 1, g->rel->oid);
    StateScan *s = state_scan_open(g->rt->st, p, sizeof(p));
    const void *key, *val;
    size_t klen, vlen;
    while (state_scan_next(s, &key, &klen, &val, &vlen)) {
        if (vlen != 40 || klen <= 5)
            continue;
        char *name = sl_strndup((const char *)key + 5, klen - 5);
        FileProg *f = prog_find(g, name, true);
        sl_free(name);
        const uint8_t *v = val;
        f->pos = (int64_t)get_le64(v);
        f->records = (int64_t)get_le64(v + 8);
        f->rows = (int64_t)get_le64(v + 16);
        f->dead = (int64_t)get_le64(v + 24);
        f->skipped = (int64_t)get_le64(v + 32);
    }
    return state_scan_close(s, err);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of the directory whose names match the pattern, in
 * name order (sl_malloc'ed strings). */
static int list_files(Ingester *g, char ***out, int *n, SlError *err)
{
    /* checked again each round: a symlink on the way may have changed */
    char real[PATH_MAX];
    bool exists;
    if (rt_files_resolve(g->rt, g->dir, "files connector path", g->rel->owner, real, &exists,
                         err) < 0)
        return -1;
    DIR *d = opendir(real);
    if (d == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_FILE, "cannot read directory \"%s\": %s",
                        g->dir, strerror(errno));
    char **names = NULL;
    int k = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || fnmatch(g->pattern, e->d_name, 0) != 0)
            continue;
        if (k == cap) {
            cap = cap ? cap * 2 : 32;
            names = sl_realloc(names, sizeof(char *) * (size_t)cap);
        }
        names[k++] = sl_strdup(e->d_name);
    }
    closedir(d);
    if (k > 1)
        qsort(names, (size_t)k, sizeof(char *), cmp_names);
    *out = names;
    *n = k;
    return 0;
}

typedef struct Decoded {
    Batch  **bs;
    int      nb, cap;
    int64_t  rows;
    FmtResult res;
} Decoded;

/* Decodes the whole records of buf[0, len) into batches in a. */
static int decode_all(Ingester *g, const FmtSpec *spec, const char *buf, size_t len, bool final,
                      Arena *a, Decoded *d, SlError *err)
{
    memset(d, 0, sizeof(*d));
    SlType *types = ARENA_ARRAY(a, SlType, g->rel->ncols);
    for (int i = 0; i < g->rel->ncols; i++)
        types[i] = g->rel->cols[i].type;
    for (;;) {
        Batch *b = batch_alloc(a, types, (uint32_t)g->rel->ncols, EX_BATCH_ROWS);
        int rc = g->csv ? fmt_csv_decode(spec, buf, len, final, b, EX_BATCH_ROWS, a, &d->res, err)
                        : fmt_json_decode(spec, buf, len, final, b, EX_BATCH_ROWS, a, &d->res, err);
        if (rc < 0)
            return -1;
        for (uint32_t c = 0; c < b->ncols; c++)
            b->cols[c].len = b->nrows;
        if (b->nrows > 0) {
            if (d->nb == d->cap) {
                d->cap = d->cap ? d->cap * 2 : 16;
                Batch **more = ARENA_ARRAY(a, Batch *, d->cap);
                if (d->nb)
                    memcpy(more, d->bs, sizeof(Batch *) * (size_t)d->nb);
                d->bs = more;
            }
            d->bs[d->nb++] = b;
            d->rows += b->nrows;
        }
        if (b->nrows < EX_BATCH_ROWS)
            return 0;
    }
}

/* The dead letters of a round as rows of the dead-letter stream. */
static Batch *dead_batch(const Ingester *g, const FileProg *f, const FmtResult *res, Arena *a)
{
    SlType types[5];
    for (int i = 0; i < 5; i++)
        types[i] = g->dead->cols[i].type;
    Batch *b = batch_alloc(a, types, 5, (uint32_t)res->ndead);
    int64_t now = ex_clock_now();
    size_t nlen = strlen(f->name);
    for (int i = 0; i < res->ndead; i++) {
        const DeadLetter *d = &res->dead[i];
        b->cols[0].v.str[i] = (SlStr){d->raw.ptr, d->raw.len};
        b->cols[1].v.str[i] = (SlStr){f->name, (uint32_t)nlen};
        b->cols[2].v.i64[i] = f->pos + d->offset;
        b->cols[3].v.str[i] = (SlStr){d->reason, (uint32_t)strlen(d->reason)};
        b->cols[4].v.i64[i] = now;
        for (int c = 0; c < 5; c++)
            b->cols[c].nulls[i] = 0;
    }
    b->nrows = (uint32_t)res->ndead;
    for (int c = 0; c < 5; c++)
        b->cols[c].len = b->nrows;
    return b;
}

/* What a round read from all its files, committed in ONE durable write at
 * its end: the rows, the dead letters and each file's new 'F' entry. */
typedef struct RoundBuf {
    Arena       a;          /* decoded rows, dead letters */
    Batch     **rows;
    int         nrows, caprows;
    Batch     **dead;
    int         ndead, capdead;
    StateBatch *with;       /* the files' new 'F' entries */
    FileProg   *next;       /* ... and the same in memory, applied after the write */
    int         nnext, capnext;
    char      **bufs;       /* the bytes read (dead letters point into them) */
    int         nbufs, capbufs;
} RoundBuf;

static void *grow(void *p, int n, int *cap, size_t size)
{
    if (n < *cap)
        return p;
    *cap = *cap ? *cap * 2 : 16;
    return sl_realloc(p, size * (size_t)*cap);
}

static void round_init(RoundBuf *rb)
{
    memset(rb, 0, sizeof(*rb));
    arena_init(&rb->a, 256 * 1024);
    rb->with = state_batch_new();
}

static void round_free(RoundBuf *rb)
{
    for (int i = 0; i < rb->nbufs; i++)
        sl_free(rb->bufs[i]);
    sl_free(rb->bufs);
    sl_free(rb->rows);
    sl_free(rb->dead);
    sl_free(rb->next);
    state_batch_free(rb->with);
    arena_destroy(&rb->a);
}

/* Adds one file's part to the round: its rows, its dead letters, and its
 * entry moved on by consumed bytes. */
static void stage_file(Ingester *g, RoundBuf *rb, const FileProg *f, const Decoded *d,
                       Batch *dead, int64_t consumed, int64_t records, int64_t skipped)
{
    for (int i = 0; i < d->nb; i++) {
        rb->rows = grow(rb->rows, rb->nrows, &rb->caprows, sizeof(Batch *));
        rb->rows[rb->nrows++] = d->bs[i];
    }
    if (dead != NULL && dead->nrows > 0) {
        rb->dead = grow(rb->dead, rb->ndead, &rb->capdead, sizeof(Batch *));
        rb->dead[rb->ndead++] = dead;
    }
    FileProg next = *f;
    next.pos += consumed;
    next.records += records;
    next.rows += d->rows;
    next.dead += dead ? dead->nrows : 0;
    next.skipped += skipped;
    rb->next = grow(rb->next, rb->nnext, &rb->capnext, sizeof(FileProg));
    rb->next[rb->nnext++] = next;
    StrBuf key;
    strbuf_init(&key);
    prog_key(g, f->name, &key);
    uint8_t v[40];
    put_le64(v, (uint64_t)next.pos);
    put_le64(v + 8, (uint64_t)next.records);
    put_le64(v + 16, (uint64_t)next.rows);
    put_le64(v + 24, (uint64_t)next.dead);
    put_le64(v + 32, (uint64_t)next.skipped);
    state_batch_put(rb->with, key.data, key.len, v, sizeof(v));
    strbuf_free(&key);
}

/* Commits the round staged so far in one durable write; on success the
 * files' entries move on.  The round is empty afterwards either way (what
 * failed to commit is read again next round). */
static int flush_round(Ingester *g, RoundBuf *rb, SlError *err)
{
    int rc = 0;
    if (rb->nnext > 0) {
        StreamAppend apps[2] = {{g->rel, (const Batch *const *)rb->rows, rb->nrows, NULL, 0}};
        int napps = 1;
        if (rb->ndead > 0)
            apps[napps++] = (StreamAppend){g->dead, (const Batch *const *)rb->dead, rb->ndead,
                                           NULL, 0};
        SLUICE_FAULT("ingest_before_commit");
        rc = stream_append_many(g->rt->st, apps, napps, rb->with, err);
        for (int i = 0; rc == 0 && i < rb->nnext; i++) {
            FileProg *f = prog_find(g, rb->next[i].name, false);
            if (f != NULL)
                *f = rb->next[i];
        }
    }
    round_free(rb);
    round_init(rb);
    return rc;
}

/* The position of the first newline at or after from, or -1 (none yet). */
static int64_t next_newline(const Ingester *g, const char *path, int64_t from)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -1;
    SlError err = {0};
    if (rt_files_check_fd(g->rt, fd, "files connector file", path, g->rel->owner, &err) < 0) {
        sl_error_clear(&err);
        close(fd);
        return -1;
    }
    char buf[65536];
    int64_t found = -1;
    for (;;) {
        ssize_t r = pread(fd, buf, sizeof(buf), from);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        const char *nl = memchr(buf, '\n', (size_t)r);
        if (nl != NULL) {
            found = from + (nl - buf);
            break;
        }
        from += r;
    }
    close(fd);
    return found;
}

/* A file the owner may not read: logged once (not every poll) until it
 * is read again; the others go on.  Clears why. */
static void refuse_file(const Ingester *g, FileProg *f, SlError *why)
{
    if (!f->refused)
        sl_log(LOG_WARN, "files connector file refused", "stream=%s error=\"%s\"",
               log_value(g->rel->name), log_quote(why->message));
    f->refused = true;
    sl_error_clear(why);
}

/* Reads and ingests new bytes of one file.  Returns the bytes read (0:
 * nothing new), -1 on an error, -2 when the stream failed (on_error =
 * 'fail'; g->error says why). */
static int64_t ingest_file(Ingester *g, RoundBuf *rb, FileProg *f, int64_t budget, bool *more,
                           SlError *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g->dir, f->name);
    struct stat sb;
    /* a file with nothing new costs a stat, not an open */
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= f->pos)
        return 0;
    /* not through a symlink in the directory; a FIFO swapped in since the
     * stat does not block the open (fstat below skips it) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno == ELOOP) {
        SlError why = {0};
        sl_error(&why, ERRCODE_INSUFFICIENT_PRIVILEGE,
                 "permission denied for files connector file \"%s\": a symlink is not followed",
                 path);
        refuse_file(g, f, &why);
        return 0;
    }
    if (fd < 0)
        return errno == ENOENT ? 0 : sl_error(err, ERRCODE_IO_ERROR, "cannot open \"%s\": %s",
                                              path, strerror(errno));
    /* where the open landed: the directory may have been swapped for a
     * symlink leading out of the allowed place */
    SlError denied = {0};
    if (rt_files_check_fd(g->rt, fd, "files connector file", path, g->rel->owner, &denied) < 0) {
        close(fd);
        refuse_file(g, f, &denied);
        return 0;
    }
    f->refused = false;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= f->pos) {
        close(fd);
        return 0;
    }
    int64_t want = SL_MIN(sb.st_size - f->pos, budget);
    char *buf = sl_malloc((size_t)want);
    int64_t got = 0;
    while (got < want) {
        ssize_t r = pread(fd, buf + got, (size_t)(want - got), f->pos + got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += r;
    }
    close(fd);
    if (sb.st_size - f->pos > got)
        *more = true;
    rb->bufs = grow(rb->bufs, rb->nbufs, &rb->capbufs, sizeof(char *));
    rb->bufs[rb->nbufs++] = buf;
    Arena *a = &rb->a;
    FmtSpec spec = g->spec;
    spec.header = g->header && f->pos == 0;
    Decoded d;
    int64_t rc = decode_all(g, &spec, buf, (size_t)got, false, a, &d, err);
    DeadLetter huge;
    if (rc == 0 && d.res.consumed == 0 && d.res.ndead == 0 && got == want && *more &&
        (size_t)got > g->spec.max_record_bytes) {
        /* No end of record within the whole read: a record far larger than
         * max_record_bytes.  Once its end is in the file, it is one bad
         * record (its first max_record_bytes bytes kept); until then, wait. */
        int64_t nl = next_newline(g, path, f->pos + got);
        if (nl < 0) {
            *more = false;
        } else {
            huge = (DeadLetter){0, 0, arena_printf(a, "record of %" PRId64 " bytes exceeds "
                                                       "max_record_bytes (%zu)",
                                                   nl - f->pos, g->spec.max_record_bytes),
                                {buf, (uint32_t)g->spec.max_record_bytes}};
            d.res.dead = &huge;
            d.res.ndead = 1;
            d.res.records = 1;
            d.res.consumed = nl + 1 - f->pos;
        }
    }
    if (rc == 0 && d.res.ndead > 0 && g->on_error == ON_ERROR_FAIL) {
        /* Keep the records before the first bad one, then stop. */
        const DeadLetter *bad = &d.res.dead[0];
        char *why = sl_strdup(arena_printf(a, "file \"%s\", position %" PRId64 ": %s", f->name,
                                           f->pos + bad->offset, bad->reason));
        Decoded good;
        rc = decode_all(g, &spec, buf, (size_t)bad->offset, true, a, &good, err);
        if (rc == 0 && (good.rows > 0 || good.res.consumed > 0))
            stage_file(g, rb, f, &good, NULL, good.res.consumed, good.res.records, 0);
        if (rc == 0)
            rc = flush_round(g, rb, err);
        if (rc == 0) {
            pthread_mutex_lock(&g->rt->ingest.mu);
            sl_free(g->error);
            g->error = why;
            pthread_mutex_unlock(&g->rt->ingest.mu);
            why = NULL;
            rc = -2;
        }
        sl_free(why);
    } else if (rc == 0 && (d.res.consumed > 0 || d.res.ndead > 0)) {
        Batch *dead = NULL;
        int64_t skipped = 0;
        if (g->on_error == ON_ERROR_DEAD_LETTER && d.res.ndead > 0 && g->dead != NULL)
            dead = dead_batch(g, f, &d.res, a);
        else
            skipped = d.res.ndead;
        stage_file(g, rb, f, &d, dead, d.res.consumed, d.res.records, skipped);
    }
    return rc < 0 ? rc : got;
}

static void files_round(Ingester *g, SlError *err)
{
    if (!g->loaded) {
        if (prog_load(g, err) < 0)
            return;
        g->loaded = true;
    }
    char **names = NULL;
    int n = 0;
    if (list_files(g, &names, &n, err) < 0)
        return;
    int64_t budget = READ_BUDGET;
    bool failed = false;
    RoundBuf rb;
    round_init(&rb);
    for (int i = 0; i < n && budget > 0 && !failed; i++) {
        FileProg *f = prog_find(g, names[i], true);
        int64_t got = ingest_file(g, &rb, f, budget, &g->more, err);
        if (got == -2)
            failed = true;
        else if (got > 0)
            budget -= got;
        /* a file that cannot be read (err keeps the first error, which the
         * loop logs) does not hold up the others */
    }
    bool flushed = failed || flush_round(g, &rb, err) == 0;
    round_free(&rb);
    if (budget <= 0)
        g->more = true;
    if (!flushed)
        g->more = false;        /* a failed write: the next tick tries again */
    for (int i = 0; i < n; i++)
        sl_free(names[i]);
    sl_free(names);
}

static void retention_round(Ingester *g, SlError *err)
{
    int64_t now = wall_us();
    if (now - g->last_retention_us < RETENTION_EVERY_US)
        return;
    g->last_retention_us = now;
    StreamRetained r;
    int64_t keep_after = g->retention_us > 0 ? now - g->retention_us : 0;
    if (stream_retain(g->rt->st, g->rel, keep_after, g->retention_bytes, &r, err) < 0)
        return;
    if (r.chunks == 0)
        return;
    SLUICE_FAULT("retention_after_delete");
    pthread_mutex_lock(&g->rt->ingest.mu);
    g->stats.retained_chunks += r.chunks;
    g->stats.retained_rows += r.rows;
    g->stats.retained_bytes += r.bytes;
    pthread_mutex_unlock(&g->rt->ingest.mu);
}

typedef struct Round {
    Ingester *g;
    SlError   err;
} Round;

static void work_cb(PoolWork *w)
{
    Round *r = w->data;
    Ingester *g = r->g;
    g->more = false;
    bool failed;
    pthread_mutex_lock(&g->rt->ingest.mu);
    failed = g->error != NULL;
    pthread_mutex_unlock(&g->rt->ingest.mu);
    if (g->files && !failed)
        files_round(g, &r->err);
    if ((g->retention_us > 0 || g->retention_bytes > 0) && r->err.message == NULL)
        retention_round(g, &r->err);
    /* the counters readers see */
    IngestStats s = {0};
    for (int i = 0; i < g->nfp; i++) {
        s.bytes += g->fp[i].pos;
        s.records += g->fp[i].records;
        s.rows += g->fp[i].rows;
        s.dead_letters += g->fp[i].dead;
        s.skipped += g->fp[i].skipped;
    }
    pthread_mutex_lock(&g->rt->ingest.mu);
    g->stats.files = g->nfp;
    g->stats.bytes = s.bytes;
    g->stats.records = s.records;
    g->stats.rows = s.rows;
    g->stats.dead_letters = s.dead_letters;
    g->stats.skipped = s.skipped;
    pthread_mutex_unlock(&g->rt->ingest.mu);
}

/* ---------------------------------------------------------------------- */
/* The registry (loop thread)                                              */

static void free_ingester(Ingester *g)
{
    cat_relation_unref(g->rel);
    if (g->dead)
        cat_relation_unref(g->dead);
    for (int i = 0; i < g->nfp; i++)
        sl_free(g->fp[i].name);
    sl_free(g->fp);
    sl_free(g->error);
    arena_destroy(&g->arena);
    sl_free(g);
}

static void timer_closed_cb(uv_handle_t *h)
{
    free_ingester(h->data);
}

/* Frees g once it is stopped and no round is in flight. */
static void maybe_release(Ingester *g)
{
    if (g->stopping && !g->in_flight)
        uv_close((uv_handle_t *)&g->timer, timer_closed_cb);
}

static void launch(Ingester *g);

static void after_work_cb(PoolWork *w)
{
    Round *r = w->data;
    Ingester *g = r->g;
    g->in_flight = false;
    if (r->err.message != NULL)
        sl_log(LOG_WARN, "ingestion round failed; retrying", "stream=%s error=\"%s\"",
               log_value(g->rel->name), log_quote(r->err.message));
    sl_error_clear(&r->err);
    sl_free(r);
    pthread_mutex_lock(&g->rt->ingest.mu);
    bool failed = g->error != NULL && !g->failure_logged;
    pthread_mutex_unlock(&g->rt->ingest.mu);
    if (failed) {
        g->failure_logged = true;
        sl_log(LOG_ERROR, "stream ingestion failed", "stream=%s error=\"%s\"",
               log_value(g->rel->name), log_quote(g->error));
    }
    if (g->stopping) {
        maybe_release(g);
        return;
    }
    if (g->more)
        launch(g);
}

static void launch(Ingester *g)
{
    if (g->in_flight || g->stopping)
        return;
    Round *r = sl_calloc(1, sizeof(Round));
    r->g = g;
    g->work.data = r;
    g->in_flight = true;
    pool_submit(g->rt->engine, &g->work, work_cb, after_work_cb);
}

static void timer_cb(uv_timer_t *t)
{
    launch(t->data);
}

static Ingester *find(Runtime *rt, uint32_t oid)
{
    for (Ingester *g = rt->ingest.list; g != NULL; g = g->next)
        if (g->rel->oid == oid)
            return g;
    return NULL;
}

int ingest_start(Runtime *rt, const CatRelation *rel, SlError *err)
{
    if (!rt->ingest.open || rel->kind != REL_STREAM || find(rt, rel->oid) != NULL ||
        reads_kafka(rel))
        return 0;
    Ingester *g = sl_calloc(1, sizeof(Ingester));
    g->rt = rt;
    arena_init(&g->arena, 2048);
    if (read_options(g, rel, err) < 0) {
        arena_destroy(&g->arena);
        sl_free(g);
        return -1;
    }
    if (!g->files && g->retention_us == 0 && g->retention_bytes == 0) {
        arena_destroy(&g->arena);
        sl_free(g);
        return 0;
    }
    g->rel = rel;
    cat_relation_ref(rel);
    if (ingest_has_dead_letters(rel)) {
        const char *dn = arena_printf(&g->arena, "%s_dead_letters", rel->name);
        const CatRelation *d = cat_lookup(rt->cat, dn);
        if (d != NULL && d->kind == REL_STREAM && d->ncols == 5) {
            g->dead = d;
            cat_relation_ref(d);
        }
    }
    g->stats.stream = rel->name;
    g->stats.status = "running";
    uv_timer_init(&rt->loop, &g->timer);
    g->timer.data = g;
    int64_t every = g->files ? g->poll_ms : RETENTION_EVERY_US / 1000;
    uv_timer_start(&g->timer, timer_cb, 0, (uint64_t)every);
    pthread_mutex_lock(&g->rt->ingest.mu);
    g->next = rt->ingest.list;
    rt->ingest.list = g;
    pthread_mutex_unlock(&g->rt->ingest.mu);
    return 0;
}

void ingest_stop(Runtime *rt, const CatRelation *rel)
{
    for (Ingester **p = &rt->ingest.list; *p != NULL; p = &(*p)->next) {
        Ingester *g = *p;
        if (g->rel->oid != rel->oid)
            continue;
        pthread_mutex_lock(&g->rt->ingest.mu);
        *p = g->next;
        pthread_mutex_unlock(&g->rt->ingest.mu);
        g->stopping = true;
        uv_timer_stop(&g->timer);
        maybe_release(g);
        return;
    }
}

static void start_cb(const CatRelation *rel, void *arg)
{
    SlError err = {0};
    if (rel->kind == REL_STREAM && ingest_start(arg, rel, &err) < 0)
        sl_log(LOG_ERROR, "cannot start ingestion", "stream=%s error=\"%s\"",
               log_value(rel->name), log_quote(err.message));
    sl_error_clear(&err);
}

static void fill(const Ingester *g, IngestStats *out)
{
    *out = g->stats;
    out->status = g->error ? "failed" : "running";
    out->error = g->error;
}

/* sluice_stream_stat() and friends (functions/streamfuncs.c): any thread.
 * arg is ExFnHooks.stream_arg: the Runtime whose ingesters it reads. */
int ingest_stats_by_name(void *arg, const char *name, size_t len, IngestStats *out, Arena *a)
{
    Runtime *rt = arg;
    if (rt == NULL)
        return 0;
    pthread_mutex_lock(&rt->ingest.mu);
    Ingester *g = rt->ingest.list;
    while (g != NULL && (strlen(g->rel->name) != len || memcmp(g->rel->name, name, len) != 0))
        g = g->next;
    if (g != NULL) {
        fill(g, out);
        out->stream = arena_strdup(a, out->stream);
        out->error = out->error ? arena_strdup(a, out->error) : NULL;
    }
    pthread_mutex_unlock(&rt->ingest.mu);
    return g != NULL;
}

int ingest_init(Runtime *rt)
{
    rt->ingest.open = true;
    cat_foreach(rt->cat, start_cb, rt);
    return 0;
}

void ingest_close(Runtime *rt)
{
    while (rt->ingest.list != NULL)
        ingest_stop(rt, rt->ingest.list->rel);
    rt->ingest.open = false;
}

int ingest_check_readable(Runtime *rt, const CatRelation *rel, SlError *err)
{
    if (rt == NULL)
        return 0;
    pthread_mutex_lock(&rt->ingest.mu);
    Ingester *g = find(rt, rel->oid);
    char *why = g && g->error ? sl_strdup(g->error) : NULL;
    pthread_mutex_unlock(&rt->ingest.mu);
    if (why == NULL)
        return 0;
    sl_error(err, ERRCODE_INVALID_TEXT_REPRESENTATION,
             "ingestion of stream \"%s\" failed: %s", rel->name, why);
    sl_error_detail(err, "The stream has on_error = 'fail': ingestion stopped at the first "
                         "record that could not be decoded.");
    sl_error_hint(err, "Fix or remove the record and restart the server, or recreate the "
                       "stream with on_error = 'dead_letter' or 'skip'.");
    sl_free(why);
    return -1;
}

int ingest_stats(Runtime *rt, uint32_t oid, IngestStats *out)
{
    pthread_mutex_lock(&rt->ingest.mu);
    Ingester *g = find(rt, oid);
    if (g != NULL)
        fill(g, out);
    pthread_mutex_unlock(&rt->ingest.mu);
    return g != NULL;
}

void ingest_foreach(Runtime *rt, void (*fn)(const IngestStats *s, void *arg), void *arg)
{
    for (Ingester *g = rt->ingest.list; g != NULL; g = g->next) {
        IngestStats s;
        pthread_mutex_lock(&g->rt->ingest.mu);
        fill(g, &s);
        pthread_mutex_unlock(&g->rt->ingest.mu);
        fn(&s, arg);
    }
}

/* ---------------------------------------------------------------------- */
/* Every stream's figures (/metrics)                                       */

typedef struct FiguresWalk {
    Runtime *rt;
    void   (*fn)(const IngestFigures *f, void *arg);
    void    *arg;
} FiguresWalk;

/* rel's end offset: the rows ever appended to it; -1 when unknown (an
 * error, or an append holds the store's counters before this scrape saw
 * the stream once: never waited for, /metrics runs on the loop). */
static int64_t end_offset(Runtime *rt, const CatRelation *rel)
{
    SlError err = {0};
    int64_t end = stream_end_offset_nowait(rt->st, rel, &err);
    sl_error_clear(&err);
    return end < 0 ? -1 : end;
}

static void figures_cb(const CatRelation *rel, void *arg)
{
    FiguresWalk *w = arg;
    if (rel->kind != REL_STREAM)
        return;
    Arena a;
    arena_init(&a, 512);
    if (ingest_dead_letters_of(&a, rel) != NULL) {
        arena_destroy(&a);
        return;     /* counted as its stream's dead letters */
    }
    Options o;
    SlError err = {0};
    const char *connector = opts_parse(&a, rel->options, &o, &err) == 0
                                ? opts_get(&o, "connector") : NULL;
    sl_error_clear(&err);
    if (connector == NULL)
        connector = "internal";
    bool stored = strcmp(connector, "kafka") != 0 && strcmp(connector, "datagen") != 0;
    IngestFigures f = {
        .stream = rel->name,
        .connector = connector,
        .rows = stored ? end_offset(w->rt, rel) : -1,
        .dead_letters = -1,
        .bytes = -1,
    };
    const CatRelation *dead = cat_lookup(w->rt->cat, arena_printf(&a, "%s_dead_letters",
                                                                  rel->name));
    if (dead != NULL) {
        const char *of = ingest_dead_letters_of(&a, dead);
        if (of != NULL && strcmp(of, rel->name) == 0)
            f.dead_letters = end_offset(w->rt, dead);
    }
    IngestStats st;
    if (ingest_stats(w->rt, rel->oid, &st) && strcmp(connector, "files") == 0)
        f.bytes = st.bytes;
    w->fn(&f, w->arg);
    arena_destroy(&a);
}

void ingest_stream_figures(Runtime *rt, void (*fn)(const IngestFigures *f, void *arg), void *arg)
{
    if (rt->cat == NULL || rt->st == NULL)
        return;
    FiguresWalk w = {rt, fn, arg};
    cat_foreach(rt->cat, figures_cb, &w);
}
