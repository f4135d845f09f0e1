/*
 * hostaccess.c -- what a role may reach on the server host through a
 * connector: the files of the files connector and files sink, and (through
 * the Runtime's KafkaPolicy) the librdkafka properties that read or run
 * something there.  See docs/operations.md, "Files root", and
 * shared/design.md, "Security model".
 *
 *   rt_host_init          the files root and the data directory, resolved
 *                         once at start-up into rt->host; the Runtime's
 *                         KafkaPolicy (rt->kafka: its owner check and the
 *                         brokers non-superusers may name)
 *   rt_host_free
 *   rt_role_is_superuser  whether a role is a superuser now in a Runtime's
 *                         catalog (any thread)
 *   rt_files_resolve      a files connector's or sink's directory, resolved
 *                         (symlinks followed) and checked for its owner
 *   rt_files_check_fd     an opened file, checked where it really is
 *
 * Rules.  A path with a ".." component is refused for everyone.  The
 * resolved path (realpath() of its longest existing prefix, the rest
 * appended) must lie outside the data directory for everyone, and inside
 * the files root (--files-root) for a relation whose owner is not a
 * superuser; without a files root such owners use no path at all.
 * Refusals are 42501.  For such an owner the files root is judged first
 * and one refusal covers every path outside it -- missing, present, the
 * data directory, a prefix that does not resolve (a symlink loop, a
 * permission) -- so it learns nothing about the host's paths; without a
 * files root nothing is looked up at all.  A data directory that does not
 * resolve at start-up stops the start (fail closed; fault point
 * "host_data_dir").  The answer depends on the owner as it is when the
 * check runs, so a role that loses SUPERUSER loses the paths with it.
 * Callers check at CREATE, again each time they open the directory (a
 * symlink swapped since is followed to wherever it points now), and each
 * file they open (rt_files_check_fd, by /proc/self/fd: where the open
 * really landed, whatever was swapped in between).
 *
 * The two paths are the Runtime's (rt->host, runtime.h), set once before
 * the loop runs and only read after; every check takes that Runtime (a
 * files sink keeps the one its query runs in, an Ingester its own).  A
 * NULL Runtime has neither path: every path is refused.
 */
#include "runtime_int.h"

#include "sluice/kafka.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Whether role oid is a superuser now in cat (any thread). */
static bool is_superuser(Catalog *cat, uint32_t oid)
{
    /* the bootstrap role owns what internal work creates, and always keeps
     * SUPERUSER (roles.c refuses to take it away) */
    if (oid == CAT_BOOTSTRAP_ROLE_OID)
        return true;
    if (cat == NULL)
        return false;
    cat_read_lock(cat);
    const CatRole *r = cat_role_by_oid(cat, oid);
    bool super = r != NULL && r->superuser;
    cat_read_unlock(cat);
    return super;
}

bool rt_role_is_superuser(const Runtime *rt, uint32_t oid)
{
    return is_superuser(rt != NULL ? rt->cat : NULL, oid);
}

/* The KafkaPolicy's owner check: arg is the Runtime. */
static bool kafka_owner_cb(void *arg, uint32_t owner)
{
    return is_superuser(((Runtime *)arg)->cat, owner);
}

int rt_host_init(Runtime *rt, const char *files_root, const char *data_dir,
                 const char *kafka_hosts, SlError *err)
{
    char buf[PATH_MAX];
    rt_host_free(rt);
    if (files_root != NULL && files_root[0] != '\0') {
        if (realpath(files_root, buf) == NULL)
            return sl_error(err, ERRCODE_UNDEFINED_FILE, "files root \"%s\": %s", files_root,
                            strerror(errno));
        rt->host.files_root = sl_strdup(buf);
    }
    /* fail closed: without the data directory resolved its guard would be
     * off, so a server that cannot resolve it does not start */
    if (data_dir == NULL || SLUICE_FAULT_FAILS("host_data_dir") ||
        realpath(data_dir, buf) == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_FILE, "data directory \"%s\": %s",
                        data_dir ? data_dir : "", data_dir ? strerror(errno) : "not given");
    rt->host.data_dir = sl_strdup(buf);
    rt->kafka = kafka_policy_new(kafka_hosts, kafka_owner_cb, rt);
    rt_backup_clean(rt);    /* what a BACKUP cut short left (backup.c) */
    return 0;
}

void rt_host_free(Runtime *rt)
{
    sl_free(rt->host.files_root);
    sl_free(rt->host.data_dir);
    rt->host.files_root = rt->host.data_dir = NULL;
    kafka_policy_unref(rt->kafka);
    rt->kafka = NULL;
}

/* The two paths of rt (none without one: every path is refused), and its
 * catalog for the owner's SUPERUSER. */
typedef struct HostPaths {
    const Runtime *rt;
    const char    *files_root, *data_dir;
} HostPaths;

static HostPaths host_paths(const Runtime *rt)
{
    return rt != NULL ? (HostPaths){rt, rt->host.files_root, rt->host.data_dir}
                      : (HostPaths){NULL, NULL, NULL};
}

/* Is path (resolved) dir itself or below it? */
static bool inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (strncmp(path, dir, n) != 0)
        return false;
    return path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/');
}

static int denied(SlError *err, const char *what, const char *path, const char *why)
{
    return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied for %s \"%s\": %s",
                    what, path, why);
}

/* The two refusals of an owner that is not a superuser. */
static int no_root(SlError *err, const char *what, const char *shown)
{
    denied(err, what, shown, "only a superuser may use the server's files");
    sl_error_hint(err, "A superuser may start sluiced with --files-root DIR to let every "
                       "role use the files below DIR.");
    return -1;
}

static int outside_root(const HostPaths *h, SlError *err, const char *what, const char *shown)
{
    denied(err, what, shown, "it is outside the files root");
    sl_error_hint(err, "A non-superuser may use only paths below the files root \"%s\".",
                  h->files_root);
    return -1;
}

/* The containment rules for a resolved path: for an owner that is not a
 * superuser the files root first, so that it learns nothing of a path
 * outside the root (not even that it is the data directory). */
static int check_resolved(const HostPaths *h, const char *real, const char *what,
                          const char *shown, uint32_t owner, SlError *err)
{
    bool super = rt_role_is_superuser(h->rt, owner);
    if (!super && h->files_root == NULL)
        return no_root(err, what, shown);
    if (!super && !inside(real, h->files_root))
        return outside_root(h, err, what, shown);
    if (h->data_dir == NULL || inside(real, h->data_dir)) {
        denied(err, what, shown, "it is inside the server's data directory");
        sl_error_hint(err, "No connector reads or writes the data directory, not even a "
                           "superuser's.");
        return -1;
    }
    return 0;
}

/* Does path have a ".." component? */
static bool has_dotdot(const char *path)
{
    for (const char *s = path; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == path || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
            return true;
    return false;
}

int rt_files_resolve(const Runtime *rt, const char *path, const char *what, uint32_t owner,
                     char *out, bool *exists, SlError *err)
{
    HostPaths h = host_paths(rt);
    if (has_dotdot(path)) {
        denied(err, what, path, "a path may not contain \"..\"");
        sl_error_hint(err, "Give the directory without \"..\" components.");
        return -1;
    }
    char abs[PATH_MAX], cwd[PATH_MAX];
    int w = -1;
    if (path[0] == '/')
        w = snprintf(abs, sizeof(abs), "%s", path);
    else if (getcwd(cwd, sizeof(cwd)) != NULL)
        w = snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
    if (w < 0 || (size_t)w >= sizeof(abs))
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "path \"%s\" is too long", path);
    /* an owner that is not a superuser learns nothing about the host's
     * paths: without a files root it is refused before any look-up */
    bool super = rt_role_is_superuser(rt, owner);
    if (!super && h.files_root == NULL)
        return no_root(err, what, path);
    /* realpath() of the longest existing prefix; the rest cannot be a
     * symlink, since it does not exist yet */
    size_t n = strlen(abs);
    while (n > 1 && abs[n - 1] == '/')
        abs[--n] = '\0';
    size_t cut = n;
    *exists = true;
    for (;;) {
        char c = abs[cut];
        abs[cut] = '\0';
        char *r = realpath(cut == 0 ? "/" : abs, out);
        int e = errno;
        /* why a prefix outside the root does not resolve (a loop, a
         * permission) is the host's business: the same refusal as any path
         * outside it */
        bool hidden = r == NULL && !super && !inside(cut == 0 ? "/" : abs, h.files_root);
        abs[cut] = c;
        if (r != NULL)
            break;
        if (e != ENOENT && e != ENOTDIR) {
            if (hidden)
                return outside_root(&h, err, what, path);
            return sl_error(err, ERRCODE_IO_ERROR, "cannot resolve path \"%s\": %s", path,
                            strerror(e));
        }
        *exists = false;
        while (cut > 0 && abs[cut - 1] != '/')
            cut--;
        while (cut > 0 && abs[cut - 1] == '/')
            cut--;
    }
    /* append the missing components, "." and empty ones dropped */
    size_t len = strlen(out);
    for (const char *s = abs + cut; *s != '\0';) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t k = e ? (size_t)(e - s) : strlen(s);
        if (k > 0 && !(k == 1 && s[0] == '.')) {
            if (len + 1 + k >= PATH_MAX)
                return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "path \"%s\" is too long", path);
            if (len > 1)
                out[len++] = '/';
            memcpy(out + len, s, k);
            len += k;
            out[len] = '\0';
        }
        s += k;
    }
    return check_resolved(&h, out, what, path, owner, err);
}

int rt_files_check_fd(const Runtime *rt, int fd, const char *what, const char *shown,
                      uint32_t owner, SlError *err)
{
    char link[64], real[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, sizeof(real) - 1);
    if (n < 0)
        return sl_error(err, ERRCODE_IO_ERROR, "cannot tell where \"%s\" is: %s", shown,
                        strerror(errno));
    real[n] = '\0';
    HostPaths h = host_paths(rt);
    return check_resolved(&h, real, what, shown, owner, err);
}
