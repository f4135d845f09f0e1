/*
 * sink_files.c -- the files sink (see sink_files.h).
 *
 *   fsink_check, fsink_open, fsink_commit, fsink_close
 *
 * Layout of a sink directory (docs/architecture.md, "The files sink"):
 *
 *   part-<query oid>-<batch id, 20 digits>.json | .csv   one file per batch
 *   _manifest.jsonl      one line per committed file, in commit order:
 *       {"query":"q","query_oid":16390,"batch_id":7,
 *        "file":"part-16390-00000000000000000007.json","rows":120}
 *   .part-*.tmp          a batch being written; never read
 *
 * A batch is committed when its manifest line is on disk.  The order is:
 * the rows into a temporary file, fsync, rename to the batch's name, fsync
 * the directory (the file is now durable under its name), then the
 * manifest line with one write() and fsync.  A crash before the manifest
 * line leaves at most a file nobody lists; the replay of the batch writes
 * the same rows under the same name again.  A crash after it leaves a
 * listed batch; its replay finds it in the manifest and writes nothing.  A
 * torn last manifest line (no newline) is cut off when the sink is opened.
 *
 * The path is resolved and checked for the sink's owner (rt_files_resolve:
 * no "..", never the data directory, inside the files root for a
 * non-superuser) at CREATE, at open and again before each batch.  The
 * directory is then opened one component at a time with O_NOFOLLOW (made
 * so, too: mkdirat), its descriptor checked where it really is, and the
 * batch's files and the manifest are written through that descriptor
 * (openat, renameat): a directory swapped for a symlink after the check
 * is not followed, and no file in it is opened through a symlink.
 *
 * JSON lines: one object per row, keys the query's column names; numbers
 * and booleans as JSON numbers and booleans, jsonb as its JSON, NULL as
 * null, every other type as a string in PostgreSQL's text format.  CSV: a
 * header line with the column names, then COPY CSV rules (NULL unquoted
 * empty, the empty string "").
 */
#include "sink_files.h"

#include "runtime_int.h"
#include "sluice/options.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST "_manifest.jsonl"

struct FilesSink {
    char    *path;              /* as the sink's options give it */
    char     dir[PATH_MAX];     /* path resolved, checked at open and each commit */
    uint32_t owner;             /* the sink's owner, whose rights the checks use */
    const Runtime *rt;          /* where they are checked (hostaccess.c) */
    bool     csv;
    uint32_t query_oid;
    char    *query_name;
    int      ncols;
    char   **names;
    int64_t  last_batch;        /* the newest batch of this query in the manifest */
    pthread_mutex_t *manifest_mu;   /* the registry's: manifest appends (and the
                                     * repair of a torn line) of every sink */
};

static int io_error(SlError *err, const char *what, const char *path)
{
    return sl_error(err, ERRCODE_IO_ERROR, "files sink: cannot %s \"%s\": %s", what, path,
                    strerror(errno));
}

/* The resolved directory dir (no symlink in it) opened one component at a
 * time from "/" with O_NOFOLLOW, each missing one made first when create
 * is set (mkdir -p): a component swapped for a symlink since dir was
 * resolved is refused, not followed.  The descriptor is then checked where
 * it really is, for owner.  The descriptor, or -1 with err. */
static int open_dir(const Runtime *rt, const char *dir, bool create, uint32_t owner,
                    SlError *err)
{
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return io_error(err, "open", "/");
    char comp[NAME_MAX + 1];
    for (const char *p = dir; *p != '\0';) {
        while (*p == '/')
            p++;
        size_t k = strcspn(p, "/");
        if (k == 0)
            break;
        if (k > NAME_MAX) {
            close(fd);
            errno = ENAMETOOLONG;
            return io_error(err, "use directory", dir);
        }
        memcpy(comp, p, k);
        comp[k] = '\0';
        p += k;
        if (create && mkdirat(fd, comp, 0777) < 0 && errno != EEXIST) {
            close(fd);
            return io_error(err, "create directory", dir);
        }
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        struct stat sb;
        /* O_DIRECTORY with O_NOFOLLOW says ENOTDIR for a symlink */
        bool link = next < 0 &&
                    (e == ELOOP || (fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                                    S_ISLNK(sb.st_mode)));
        close(fd);
        if (link) {
            sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                     "permission denied for files sink path \"%s\": \"%s\" became a symlink",
                     dir, comp);
            return -1;
        }
        if (next < 0) {
            errno = e;
            return io_error(err, create ? "create directory" : "use directory", dir);
        }
        fd = next;
    }
    if (rt_files_check_fd(rt, fd, "files sink path", dir, owner, err) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* mkdir -p, through open_dir. */
static int make_dirs(const Runtime *rt, const char *dir, uint32_t owner, SlError *err)
{
    int fd = open_dir(rt, dir, true, owner, err);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int read_options(Arena *a, const char *json, const char **path, bool *csv, SlError *err)
{
    Options o;
    if (opts_parse(a, json, &o, err) < 0)
        return -1;
    const char *connector = opts_get(&o, "connector");
    if (connector == NULL) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "a sink needs a connector");
        sl_error_hint(err, "Add WITH (connector = 'files', path = '...', format = 'json').");
        return -1;
    }
    if (strcmp(connector, "files") != 0)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "sinks with connector \"%s\" are not supported yet", connector);
    *path = opts_get(&o, "path");
    if (*path == NULL || **path == '\0') {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "a files sink needs a path");
        sl_error_hint(err, "Add path = '/some/directory' to the WITH options.");
        return -1;
    }
    const char *format = opts_get(&o, "format");
    *csv = false;
    if (format != NULL && strcmp(format, "csv") == 0)
        *csv = true;
    else if (format != NULL && strcmp(format, "json") != 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid format \"%s\" for a files sink",
                 format);
        sl_error_hint(err, "Use format = 'json' or 'csv'.");
        return -1;
    }
    return 0;
}

/* path resolved into out and checked for owner (hostaccess.c), before any
 * directory is made: 42501 for a place the owner may not write. */
static int resolve_dir(const Runtime *rt, const char *path, uint32_t owner, char *out,
                       SlError *err)
{
    bool exists;
    return rt_files_resolve(rt, path, "files sink path", owner, out, &exists, err);
}

int fsink_check(const Runtime *rt, const CatRelation *def, SlError *err)
{
    Arena a;
    arena_init(&a, 512);
    const char *path;
    bool csv;
    char real[PATH_MAX];
    int rc = read_options(&a, def->options, &path, &csv, err);
    if (rc == 0)
        rc = resolve_dir(rt, path, def->owner, real, err);
    SLUICE_FAULT("sink_before_make_dirs");
    if (rc == 0)
        rc = make_dirs(rt, real, def->owner, err);
    arena_destroy(&a);
    return rc;
}

/* Reads the manifest: this query's newest batch.  A last line without its
 * newline was torn by a crash before its fsync returned: cut it off. */
static int load_manifest(FilesSink *s, SlError *err)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", s->dir, MANIFEST);
    s->last_batch = -1;
    int dfd = open_dir(s->rt, s->dir, false, s->owner, err);
    if (dfd < 0)
        return -1;
    /* never through a symlink: the repair below truncates what it opened */
    int fd = openat(dfd, MANIFEST, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return errno == ENOENT ? 0 : io_error(err, "open", path);
    FILE *f = fdopen(fd, "r+");
    if (f == NULL) {
        close(fd);
        return io_error(err, "open", path);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long good = 0;
    char want[32];
    snprintf(want, sizeof(want), "\"query_oid\":%" PRIu32 ",", s->query_oid);
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] != '\n')
            break;
        good += n;
        const char *b = strstr(line, "\"batch_id\":");
        if (strstr(line, want) != NULL && b != NULL) {
            int64_t id = strtoll(b + 11, NULL, 10);
            if (id > s->last_batch)
                s->last_batch = id;
        }
    }
    free(line);
    bool torn = n > 0;
    int rc = torn && ftruncate(fileno(f), good) < 0 ? io_error(err, "repair", path) : 0;
    fclose(f);
    return rc;
}

int fsink_open(const Runtime *rt, const CatRelation *sink, uint32_t query_oid,
               const char *query_name, const char *const *names, int ncols,
               pthread_mutex_t *manifest_mu,
               FilesSink **out, SlError *err)
{
    Arena a;
    arena_init(&a, 512);
    const char *path;
    bool csv;
    char real[PATH_MAX];
    *out = NULL;
    if (read_options(&a, sink->options, &path, &csv, err) < 0 ||
        resolve_dir(rt, path, sink->owner, real, err) < 0 ||
        make_dirs(rt, real, sink->owner, err) < 0) {
        arena_destroy(&a);
        return -1;
    }
    FilesSink *s = sl_calloc(1, sizeof(FilesSink));
    s->path = sl_strdup(path);
    memcpy(s->dir, real, sizeof(real));
    s->owner = sink->owner;
    s->rt = rt;
    s->csv = csv;
    s->query_oid = query_oid;
    s->query_name = sl_strdup(query_name);
    s->manifest_mu = manifest_mu;
    s->ncols = ncols;
    s->names = sl_calloc((size_t)(ncols > 0 ? ncols : 1), sizeof(char *));
    for (int c = 0; c < ncols; c++)
        s->names[c] = sl_strdup(names[c]);
    arena_destroy(&a);
    pthread_mutex_lock(s->manifest_mu);
    int rc = load_manifest(s, err);
    pthread_mutex_unlock(s->manifest_mu);
    if (rc < 0) {
        fsink_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void fsink_close(FilesSink *s)
{
    if (s == NULL)
        return;
    for (int c = 0; c < s->ncols; c++)
        sl_free(s->names[c]);
    sl_free(s->names);
    sl_free(s->query_name);
    sl_free(s->path);
    sl_free(s);
}

/* One value as JSON. */
static void json_value(const Vector *v, uint32_t i, StrBuf *text, StrBuf *out)
{
    if (vector_is_null(v, i)) {
        strbuf_puts(out, "null");
        return;
    }
    strbuf_reset(text);
    value_format_text(v, i, text);
    switch (v->type.id) {
    case TYPE_BOOL:
        strbuf_puts(out, v->v.b[i] ? "true" : "false");
        return;
    case TYPE_INT2:
    case TYPE_INT4:
    case TYPE_INT8:
    case TYPE_JSONB:
        strbuf_append(out, text->data, text->len);
        return;
    case TYPE_FLOAT4:
    case TYPE_FLOAT8:
    case TYPE_NUMERIC:
        /* NaN and the infinities have no JSON number: a string. */
        if (strcmp(text->data, "NaN") != 0 && strstr(text->data, "Infinity") == NULL) {
            strbuf_append(out, text->data, text->len);
            return;
        }
        break;
    default:
        break;
    }
    strbuf_put_json_string(out, text->data, text->len);
}

/* The rows of the batch in the sink's format. */
static void format_rows(FilesSink *s, const Batch *const *bs, int nb, StrBuf *out)
{
    StrBuf text;
    strbuf_init(&text);
    if (s->csv) {
        for (int c = 0; c < s->ncols; c++) {
            if (c > 0)
                strbuf_putc(out, ',');
            rt_csv_field(out, s->names[c], strlen(s->names[c]), ',', "");
        }
        strbuf_putc(out, '\n');
    }
    for (int k = 0; k < nb; k++) {
        const Batch *b = bs[k];
        for (uint32_t r = 0; r < b->nrows; r++) {
            if (!s->csv)
                strbuf_putc(out, '{');
            for (int c = 0; c < s->ncols && c < (int)b->ncols; c++) {
                const Vector *v = &b->cols[c];
                if (c > 0)
                    strbuf_putc(out, ',');
                if (s->csv) {
                    if (vector_is_null(v, r))
                        continue;
                    strbuf_reset(&text);
                    value_format_text(v, r, &text);
                    rt_csv_field(out, text.data, text.len, ',', "");
                } else {
                    strbuf_put_json_string(out, s->names[c], strlen(s->names[c]));
                    strbuf_putc(out, ':');
                    json_value(v, r, &text, out);
                }
            }
            strbuf_puts(out, s->csv ? "\n" : "}\n");
        }
    }
    strbuf_free(&text);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes data durably into the directory dfd (s->dir, opened and checked
 * by open_dir): tmp, fsync, rename, fsync of the directory. */
static int write_file(FilesSink *s, int dfd, const char *name, const StrBuf *data,
                      SlError *err)
{
    char tmp[160], shown[PATH_MAX + 160];
    snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
    snprintf(shown, sizeof(shown), "%s/%s", s->dir, tmp);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return io_error(err, "create", shown);
    if (write_all(fd, data->data, data->len) < 0 || fsync(fd) < 0) {
        io_error(err, "write", shown);
        close(fd);
        unlinkat(dfd, tmp, 0);
        return -1;
    }
    close(fd);
    if (renameat(dfd, tmp, dfd, name) < 0) {
        io_error(err, "rename", shown);
        unlinkat(dfd, tmp, 0);
        return -1;
    }
    return fsync(dfd) < 0 ? io_error(err, "fsync", s->dir) : 0;
}

static int append_manifest(FilesSink *s, int dfd, const char *line, size_t n, SlError *err)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", s->dir, MANIFEST);
    pthread_mutex_lock(s->manifest_mu);
    int rc = 0;
    int fd = openat(dfd, MANIFEST, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        rc = io_error(err, "open", path);
    else {
        if (write_all(fd, line, n) < 0 || fsync(fd) < 0)
            rc = io_error(err, "append to", path);
        close(fd);
    }
    pthread_mutex_unlock(s->manifest_mu);
    /* The manifest's first line also made a directory entry. */
    if (rc == 0 && s->last_batch < 0)
        rc = fsync(dfd) < 0 ? io_error(err, "fsync", s->dir) : 0;
    return rc;
}

int fsink_commit(FilesSink *s, int64_t batch_id, const Batch *const *bs, int nb, SlError *err)
{
    int64_t rows = 0;
    for (int k = 0; k < nb; k++)
        rows += bs[k]->nrows;
    if (batch_id <= s->last_batch || rows == 0) {
        /* Committed before the crash that made this a replay, or nothing
         * to write: the fault points still mark the step. */
        SLUICE_FAULT("sink_before_commit");
        SLUICE_FAULT("sink_after_commit");
        return 0;
    }
    /* a symlink on the way may point elsewhere since the last batch */
    if (resolve_dir(s->rt, s->path, s->owner, s->dir, err) < 0)
        return -1;
    /* and every file of the batch written through this descriptor: a
     * directory swapped for a symlink after the check is not followed */
    int dfd = open_dir(s->rt, s->dir, false, s->owner, err);
    if (dfd < 0)
        return -1;
    SLUICE_FAULT("sink_after_dir_check");
    char name[128];
    snprintf(name, sizeof(name), "part-%" PRIu32 "-%020" PRId64 ".%s", s->query_oid, batch_id,
             s->csv ? "csv" : "json");
    StrBuf data;
    strbuf_init(&data);
    format_rows(s, bs, nb, &data);
    int rc = write_file(s, dfd, name, &data, err);
    strbuf_free(&data);
    if (rc < 0) {
        close(dfd);
        return -1;
    }
    SLUICE_FAULT("sink_before_commit");
    StrBuf line;
    strbuf_init(&line);
    strbuf_puts(&line, "{\"query\":");
    strbuf_put_json_string(&line, s->query_name, strlen(s->query_name));
    strbuf_printf(&line, ",\"query_oid\":%" PRIu32 ",\"batch_id\":%" PRId64 ",\"file\":\"%s\","
                  "\"rows\":%" PRId64 "}\n", s->query_oid, batch_id, name, rows);
    rc = append_manifest(s, dfd, line.data, line.len, err);
    strbuf_free(&line);
    close(dfd);
    if (rc < 0)
        return -1;
    s->last_batch = batch_id;
    SLUICE_FAULT("sink_after_commit");
    return 0;
}
