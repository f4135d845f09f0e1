/*
 * backup.c -- BACKUP TO 'dir': an online copy of the data directory that a
 * server started on it resumes from (docs/operations.md, "Backup and
 * restore").
 *
 *   rt_backup_begin   on the loop: the checks, then the snapshot -- the
 *                     catalog (SQLite's backup API) and the state store
 *                     (a RocksDB checkpoint, the result files linked) into
 *                     <data_dir>/backup.tmp, in one loop callback
 *   rt_backup_copy    on a statement worker: the snapshot's bytes copied
 *                     into the target directory and synced, then the
 *                     staging directory removed
 *   rt_backup_end     on the loop: what is left of the staging directory
 *                     removed, the next BACKUP allowed
 *   rt_backup_clean   at start-up: a staging directory a crash left, removed
 *
 * Consistency.  The loop writes the catalog, the offset log and the commit
 * log; a batch's offset entry is written on the loop before the batch goes
 * to a worker, its state (with its output and its batch id) commits in one
 * RocksDB write on the worker, its commit entry is written on the loop
 * after.  The catalog is copied first and the state store checkpointed
 * next, both within rt_backup_begin, so no catalog write comes between
 * them: for each query the copy holds an offset log ending at L, state S
 * with S = L - 1 (the batch was in flight), S = L, or S = L + 1 (a batch
 * whose output is all in the state committed while the loop was still
 * writing its offset entry: recovery writes back the copy kept with the
 * state), and a commit log that is never ahead of S -- the states recovery
 * resumes from exactly once
 * (docs/engine.md, "Recovery").  Every stream append the copied offset log
 * names committed before the offset entry was written, so the checkpoint
 * holds its rows.  Result files are linked after the checkpoint: every
 * region a reference in the checkpoint names was written before that
 * reference, and later batches only append past the committed end or cut
 * back to it, so the links hold those regions until they are copied.
 *
 * The snapshot is hard links (RocksDB's table and blob files, which RocksDB
 * never rewrites, and the result files) plus one copy of the catalog, so
 * the loop is held for a memtable flush and a catalog copy; the bytes are
 * copied on a worker, and the target never shares a file with the data
 * directory (a server started on the copy writes its own).  Only a
 * superuser may run it (42501), as only a superuser may name host paths
 * without a files root; the target is resolved as a files sink's path is
 * (hostaccess.c: no "..", never inside the data directory), must be
 * absolute (42602), and must not exist (its parent must: 58P01) or be an
 * empty directory (58P02).
 * One BACKUP runs at a time (55006).
 */
#include "sluice/catalog.h"
#include "sluice/functions.h"
#include "sluice/log.h"
#include "sluice/state.h"

#include "runtime_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes one read/write of a file copy moves. */
#define BACKUP_COPY_CHUNK (1u << 20)

struct RtBackup {
    Runtime *rt;
    char     staging[PATH_MAX];     /* <data_dir>/backup.tmp */
    char     target[PATH_MAX];      /* resolved */
    bool     made_target;           /* rt_backup_copy made it (and removes it on failure) */
    bool     copied;                /* the copy is complete and synced */
    uint64_t bytes;                 /* copied so far */
};

static int sys_error(SlError *err, const char *what, const char *path)
{
    return sl_error(err, errno == ENOSPC || errno == EDQUOT ? ERRCODE_DISK_FULL
                                                            : ERRCODE_IO_ERROR,
                    "BACKUP: cannot %s \"%s\": %s", what, path, strerror(errno));
}

/* Removes path and everything below it; errors are logged, not returned
 * (what is left is removed at the next start or BACKUP). */
static void remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) < 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *e;
            char sub[PATH_MAX];
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) < (int)sizeof(sub))
                    remove_tree(sub);
            }
            closedir(d);
        }
        if (rmdir(path) < 0)
            sl_log(LOG_WARN, "BACKUP: cannot remove a directory", "path=\"%s\" error=\"%s\"",
                   path, strerror(errno));
    } else if (unlink(path) < 0) {
        sl_log(LOG_WARN, "BACKUP: cannot remove a file", "path=\"%s\" error=\"%s\"", path,
               strerror(errno));
    }
}

static int sync_path(const char *path, SlError *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sys_error(err, "open", path);
    int rc = fsync(fd);
    close(fd);
    return rc < 0 ? sys_error(err, "fsync", path) : 0;
}

/* 1 when dir is a directory with no entries, 0 when it holds some, -1 with
 * errno when it cannot be read. */
static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int empty = 1;
    struct dirent *e;
    while (empty && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            empty = 0;
    closedir(d);
    return empty;
}

void rt_backup_clean(Runtime *rt)
{
    if (rt->host.data_dir == NULL)
        return;
    char staging[PATH_MAX];
    snprintf(staging, sizeof(staging), "%s/backup.tmp", rt->host.data_dir);
    struct stat sb;
    if (lstat(staging, &sb) == 0) {
        sl_log(LOG_INFO, "removing the staging directory of a BACKUP cut short",
               "path=\"%s\"", staging);
        remove_tree(staging);
    }
}

int rt_backup_begin(Runtime *rt, const char *target, RtBackup **out, SlError *err)
{
    uint32_t role = rt_current_role();
    if (role != 0 && !rt_role_is_superuser(rt, role)) {
        sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied to run BACKUP");
        sl_error_detail(err, "Only roles with the SUPERUSER attribute may write backups.");
        return -1;
    }
    if (rt->cat == NULL || rt->st == NULL || rt->host.data_dir == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "BACKUP needs an open data directory");
    if (target[0] != '/')
        return sl_error(err, ERRCODE_INVALID_NAME, "relative path not allowed for BACKUP TO");
    if (rt->backup_running)
        return sl_error(err, ERRCODE_OBJECT_IN_USE, "another BACKUP is running");
    RtBackup *b = sl_calloc(1, sizeof(RtBackup));
    b->rt = rt;
    bool exists = false;
    if (rt_files_resolve(rt, target, "backup directory", role, b->target, &exists, err) < 0)
        goto fail;
    if (!exists) {
        /* its parent must be there: the copy makes one directory */
        char parent[PATH_MAX];
        snprintf(parent, sizeof(parent), "%s", b->target);
        char *slash = strrchr(parent, '/');
        *(slash == parent ? slash + 1 : slash) = '\0';
        struct stat sb;
        if (stat(parent, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
            sl_error(err, ERRCODE_UNDEFINED_FILE,
                     "cannot make directory \"%s\": its parent does not exist", target);
            goto fail;
        }
    } else {
        int empty = dir_empty(b->target);
        if (empty < 0 && errno == ENOTDIR) {
            sl_error(err, ERRCODE_DUPLICATE_FILE, "\"%s\" exists and is not a directory", target);
            goto fail;
        }
        if (empty < 0) {
            sys_error(err, "read directory", target);
            goto fail;
        }
        if (!empty) {
            sl_error(err, ERRCODE_DUPLICATE_FILE, "directory \"%s\" exists and is not empty",
                     target);
            sl_error_hint(err, "Name a new directory, or an empty one.");
            goto fail;
        }
    }
    snprintf(b->staging, sizeof(b->staging), "%s/backup.tmp", rt->host.data_dir);
    remove_tree(b->staging);
    if (mkdir(b->staging, 0700) < 0) {
        sys_error(err, "make", b->staging);
        goto fail;
    }
    /* The snapshot, in this one loop callback: the catalog first, then
     * the state store (the order the opening comment argues for). */
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/catalog.db", b->staging);
    if (cat_backup(rt->cat, path, err) < 0)
        goto fail_staged;
    snprintf(path, sizeof(path), "%s/state", b->staging);
    if (state_checkpoint(rt->st, path, err) < 0)
        goto fail_staged;
    rt->backup_running = true;
    sl_log(LOG_INFO, "BACKUP: snapshot taken", "target=\"%s\"", b->target);
    *out = b;
    return 0;
fail_staged:
    remove_tree(b->staging);
fail:
    sl_free(b);
    return -1;
}

/* Copies the regular file src to dst (a new file) and syncs it. */
static int copy_file(RtBackup *b, const char *src, const char *dst, SlError *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return sys_error(err, "open", src);
    int outfd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (outfd < 0) {
        close(in);
        return sys_error(err, "create", dst);
    }
    char *buf = sl_malloc(BACKUP_COPY_CHUNK);
    int rc = 0;
    for (;;) {
        if (ex_check_interrupt(err) < 0) {
            rc = -1;
            break;
        }
        ssize_t n = read(in, buf, BACKUP_COPY_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = sys_error(err, "read", src);
            break;
        }
        if (n == 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(outfd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = sys_error(err, "write", dst);
                break;
            }
            off += w;
        }
        if (rc < 0)
            break;
        b->bytes += (uint64_t)n;
    }
    sl_free(buf);
    if (rc == 0 && fsync(outfd) < 0)
        rc = sys_error(err, "fsync", dst);
    close(in);
    if (close(outfd) < 0 && rc == 0)
        rc = sys_error(err, "close", dst);
    return rc;
}

/* Copies the tree below src into the existing directory dst. */
static int copy_tree(RtBackup *b, const char *src, const char *dst, SlError *err)
{
    DIR *d = opendir(src);
    if (d == NULL)
        return sys_error(err, "read directory", src);
    int rc = 0;
    struct dirent *e;
    char s[PATH_MAX], t[PATH_MAX];
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (snprintf(s, sizeof(s), "%s/%s", src, e->d_name) >= (int)sizeof(s) ||
            snprintf(t, sizeof(t), "%s/%s", dst, e->d_name) >= (int)sizeof(t)) {
            rc = sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "BACKUP: path too long under \"%s\"",
                          dst);
            break;
        }
        struct stat sb;
        if (lstat(s, &sb) < 0) {
            rc = sys_error(err, "stat", s);
        } else if (S_ISDIR(sb.st_mode)) {
            if (mkdir(t, 0700) < 0)
                rc = sys_error(err, "make", t);
            else
                rc = copy_tree(b, s, t, err);
        } else if (S_ISREG(sb.st_mode)) {
            rc = copy_file(b, s, t, err);
        }
        /* nothing else is made in the staging directory */
    }
    closedir(d);
    if (rc == 0)
        rc = sync_path(dst, err);
    return rc;
}

int rt_backup_copy(RtBackup *b, SlError *err)
{
    SLUICE_FAULT("backup_before_copy");
    if (mkdir(b->target, 0700) == 0) {
        b->made_target = true;
    } else if (errno != EEXIST || dir_empty(b->target) != 1) {
        /* made or filled since the check */
        if (errno == EEXIST)
            sl_error(err, ERRCODE_DUPLICATE_FILE, "directory \"%s\" exists and is not empty",
                     b->target);
        else
            sys_error(err, "make", b->target);
        return -1;
    }
    int rc = copy_tree(b, b->staging, b->target, err);
    if (rc == 0 && b->made_target) {
        /* the new directory's entry in its parent */
        char parent[PATH_MAX];
        snprintf(parent, sizeof(parent), "%s", b->target);
        char *slash = strrchr(parent, '/');
        if (slash != NULL) {
            *(slash == parent ? slash + 1 : slash) = '\0';
            rc = sync_path(parent, err);
        }
    }
    if (rc < 0) {
        /* nothing half-written is left behind */
        if (b->made_target) {
            remove_tree(b->target);
        } else {
            DIR *d = opendir(b->target);
            struct dirent *e;
            char sub[PATH_MAX];
            while (d != NULL && (e = readdir(d)) != NULL)
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                    snprintf(sub, sizeof(sub), "%s/%s", b->target, e->d_name) <
                        (int)sizeof(sub))
                    remove_tree(sub);
            if (d != NULL)
                closedir(d);
        }
    } else {
        b->copied = true;
        sl_log(LOG_INFO, "BACKUP: done", "target=\"%s\" bytes=%llu", b->target,
               (unsigned long long)b->bytes);
    }
    remove_tree(b->staging);
    return rc;
}

void rt_backup_end(RtBackup *b)
{
    if (b == NULL)
        return;
    remove_tree(b->staging);     /* a BACKUP cancelled before its copy */
    b->rt->backup_running = false;
    sl_free(b);
}
