/*
 * roles.c -- roles, ownership and privileges: the rules PostgreSQL 15
 * applies, over the roles and grants the catalog stores.
 *
 *   rt_set_role, rt_current_role   the role this thread's statements run as
 *   rt_role_sees_session  may the current role see a session's query text
 *                     (pg_stat_activity: its own role, or a superuser)
 *   rt_role_login                  a startup user logs in (28000 if NOLOGIN)
 *   rt_role_secret                 a role's stored password, for auth.c
 *   rt_roles_md5                   whether md5 hashes are kept (an md5 hba
 *                                  rule exists); without, drops them all
 *   rt_run_role                    CREATE / ALTER / DROP ROLE, GRANT, REVOKE
 *   rt_check_query                 the privileges a statement needs (42501)
 *   rt_check_owner                 DROP and ALTER need the owner (42501)
 *   rt_check_select                SELECT on one relation (SUBSCRIBE)
 *                                  (both over the catalog they are given)
 *   rt_subscribe_check             a subscriber may still read the query,
 *                                  before each batch it is sent
 *   rt_cq_privileges               a continuous query's owner still has what
 *                                  its query reads and writes (each batch;
 *                                  a cq_check_fn, its arg the catalog)
 *   rt_owner                       who owns a relation created now
 *   rt_acl_hooks                   the privilege functions' answers
 *                                  (has_table_privilege, ...: acl.h), over
 *                                  the catalog given as their argument
 *
 * Rules: a superuser may do anything.  The owner of a relation (the role
 * that created it) has every privilege on it and alone may drop, alter,
 * grant and revoke.  Others have what was granted to them or to PUBLIC.
 * What a view reads is read with its owner's rights, whoever reads the
 * view, a superuser too (Query.dep_as).
 * CREATE ROLE needs SUPERUSER or CREATEROLE, and making or changing a
 * superuser needs SUPERUSER; any role may change its own password.
 *
 * Passwords are stored as PostgreSQL stores them -- a SCRAM-SHA-256
 * verifier (4096 iterations, 16 random bytes of salt) -- and, only while
 * an hba rule uses md5 (rt_roles_md5), also an md5 hash ("md5" ||
 * md5(password || name)) so that md5 rules work for roles made here: an
 * md5 hash is enough to log in through an md5 rule (pass-the-hash), so it
 * is not kept where nothing needs it.  Without md5 rules the hashes are
 * dropped at start and a password given as an md5 hash is refused (22023).
 * A password given already hashed (a verifier, or an md5 hash with md5
 * rules) is stored as given.  Renaming a role clears its md5 hash (it is
 * salted with the name), as PostgreSQL does.
 */
#include "runtime_int.h"
#include "sluice/acl.h"
#include "sluice/ast.h"
#include "sluice/expr.h"
#include "sluice/log.h"
#include "sluice/options.h"
#include "sluice/plan.h"
#include "sluice/scram.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <strings.h>

static _Thread_local uint32_t t_role;

void rt_set_role(uint32_t role_oid)
{
    t_role = role_oid;
}

uint32_t rt_current_role(void)
{
    return t_role;
}

uint32_t rt_owner(void)
{
    return t_role ? t_role : CAT_BOOTSTRAP_ROLE_OID;
}

static const char *kind_noun(RelKind k)
{
    switch (k) {
    case REL_STREAM: return "stream";
    case REL_SINK:   return "sink";
    case REL_QUERY:  return "continuous query";
    case REL_VIEW:   return "view";
    default:         return "table";
    }
}

/* Is the current role a superuser?  Internal work (no role) is. */
static bool current_is_superuser(Catalog *cat)
{
    if (t_role == 0)
        return true;
    const CatRole *r = cat_role_by_oid(cat, t_role);
    return r != NULL && r->superuser;
}

/* The privileges role (CAT_ROLE_PUBLIC: PUBLIC alone) has on rel. */
static unsigned privileges_of(Catalog *cat, uint32_t role, const CatRelation *rel)
{
    if (role != CAT_ROLE_PUBLIC) {
        const CatRole *r = cat_role_by_oid(cat, role);
        if ((r != NULL && r->superuser) || rel->owner == role)
            return CAT_ACL_ALL;
    }
    unsigned p = cat_acl_get(cat, rel->oid, CAT_ROLE_PUBLIC);
    if (role != CAT_ROLE_PUBLIC)
        p |= cat_acl_get(cat, rel->oid, role);
    return p;
}

static int denied(const CatRelation *rel, SlError *err)
{
    return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied for %s %s",
                    kind_noun(rel->kind), rel->name);
}

/* The current role needs every bit of want on rel. */
static int need(Catalog *cat, const CatRelation *rel, unsigned want, SlError *err)
{
    if (t_role == 0 || rel == NULL)
        return 0;
    if ((privileges_of(cat, t_role, rel) & want) != want)
        return denied(rel, err);
    return 0;
}

int rt_check_owner(Catalog *cat, const CatRelation *rel, SlError *err)
{
    if (current_is_superuser(cat) || rel->owner == t_role)
        return 0;
    return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "must be owner of %s %s",
                    kind_noun(rel->kind), rel->name);
}

bool rt_role_sees_session(Runtime *rt, uint32_t role)
{
    if (t_role == 0 || t_role == role)
        return true;
    Catalog *cat = rt != NULL ? rt->cat : NULL;
    return cat == NULL || current_is_superuser(cat);
}

int rt_subscribe_check(Runtime *rt, const char *name, uint32_t role, SlError *err)
{
    Catalog *cat = rt != NULL ? rt->cat : NULL;
    const CatRelation *rel = cat ? cat_lookup(cat, name) : NULL;
    if (role == 0 || rel == NULL)
        return 0;
    if ((privileges_of(cat, role, rel) & CAT_ACL_SELECT) == 0) {
        denied(rel, err);
        sl_error_detail(err, "SELECT on it was revoked while SUBSCRIBE ran: the subscription "
                             "ends.");
        return -1;
    }
    return 0;
}

int rt_check_select(Catalog *cat, const CatRelation *rel, SlError *err)
{
    if (t_role == 0 || cat == NULL || current_is_superuser(cat))
        return 0;
    return need(cat, rel, CAT_ACL_SELECT, err);
}

/* What a query's check needs: the first relation its owner may not use. */
typedef struct OwnerCheck {
    Catalog           *cat;
    const CatRelation *query;
    uint32_t           owner;
    bool             (*reads)(void *plan, uint32_t oid);
    void              *plan;
    const CatRelation *denied;
} OwnerCheck;

static void owner_reads_cb(const CatRelation *rel, void *arg)
{
    OwnerCheck *c = arg;
    if (c->denied != NULL || rel->oid == c->query->oid || !c->reads(c->plan, rel->oid))
        return;
    if ((privileges_of(c->cat, c->owner, rel) & CAT_ACL_SELECT) == 0)
        c->denied = rel;
}

int rt_cq_privileges(void *arg, const CatRelation *query, const CatRelation *into,
                     const CatRelation *late, bool (*reads)(void *plan, uint32_t oid),
                     void *plan, SlError *err)
{
    Catalog *cat = arg;
    const CatRole *owner = cat ? cat_role_by_oid(cat, query->owner) : NULL;
    if (cat == NULL || owner == NULL || owner->superuser)
        return 0;
    OwnerCheck c = {cat, query, owner->oid, reads, plan, NULL};
    cat_foreach(cat, owner_reads_cb, &c);
    const char *what = "SELECT";
    const CatRelation *writes[2] = {into, late};
    for (int i = 0; i < 2 && c.denied == NULL; i++) {
        if (writes[i] != NULL &&
            (privileges_of(cat, owner->oid, writes[i]) & CAT_ACL_INSERT) == 0) {
            c.denied = writes[i];
            what = "INSERT";
        }
    }
    if (c.denied == NULL)
        return 0;
    denied(c.denied, err);
    sl_error_detail(err, "Continuous query %s runs as its owner %s, who no longer has %s on "
                         "%s %s.", query->name, owner->name, what, kind_noun(c.denied->kind),
                    c.denied->name);
    sl_error_hint(err, "Grant it again and replace the query (CREATE OR REPLACE, which keeps "
                       "its state), or drop it.");
    return -1;
}

/* ---------------------------------------------------------------------- */
/* What a statement needs                                                  */

/* Does e read a column of its input? */
static bool reads_columns(const Expr *e)
{
    if (e == NULL)
        return false;
    if (e->kind == EXPR_COLUMN)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (reads_columns(e->args[i]))
            return true;
    return false;
}

/* Does plan p (or one below it) scan the relation oid? */
static bool scans(const Plan *p, uint32_t oid)
{
    if (p == NULL)
        return false;
    if (p->kind == PLAN_SCAN && p->u.scan.oid == oid)
        return true;
    return scans(p->child, oid) || scans(p->right, oid);
}

/* Does the DML statement read its target's values, so that it needs
 * SELECT on it too (PostgreSQL asks for it on the columns read)?  WHERE,
 * RETURNING, ON CONFLICT DO UPDATE; an UPDATE's SET expression over the
 * row's columns; an INSERT whose query reads the target. */
static bool reads_target(const Query *q)
{
    const ModifyPlan *m = q->modify;
    const Node *ast = q->ast;
    if (m->nreturning > 0)
        return true;
    if (m->kind == MODIFY_INSERT) {
        if (m->conflict == ONCONFLICT_UPDATE || scans(m->source, m->oid))
            return true;
        for (int i = 0; i < q->ninit; i++)
            if (scans(q->init[i].plan, m->oid))
                return true;
        return false;
    }
    if (ast != NULL && ast->tag == T_UpdateStmt) {
        const UpdateStmt *s = (const UpdateStmt *)ast;
        if (s->where != NULL || s->from != NULL)
            return true;
        /* the source is [key, new value of each column]: a column left as
         * it is is a plain reference to itself */
        const Plan *p = m->source;
        if (p != NULL && p->kind == PLAN_PROJECT) {
            for (int c = 1; c < p->ncols; c++) {
                const Expr *e = p->u.project.exprs[c];
                bool same = e->kind == EXPR_COLUMN && e->index == c - 1;
                if (!same && reads_columns(e))
                    return true;
            }
        }
        return false;
    }
    if (ast != NULL && ast->tag == T_DeleteStmt) {
        const DeleteStmt *s = (const DeleteStmt *)ast;
        return s->where != NULL || s->using_list != NULL;
    }
    return false;
}

static int select_deps(Catalog *cat, const Query *deps, const CatRelation *skip,
                       bool views_only, SlError *err);

/* Every relation of deps but skip needs SELECT: by the current role, or
 * by the owner of the view that reads it (dep_as), as PostgreSQL checks a
 * view's relations with its owner's rights. */
static int need_select_deps(Catalog *cat, const Query *deps, const CatRelation *skip,
                            SlError *err)
{
    return select_deps(cat, deps, skip, false, err);
}

/* The same for the relations views read alone (views_only), or all. */
static int select_deps(Catalog *cat, const Query *deps, const CatRelation *skip,
                       bool views_only, SlError *err)
{
    for (int i = 0; i < deps->ndeps; i++) {
        const CatRelation *rel = cat_lookup(cat, deps->dep_names[i]);
        if (rel == NULL || (rel == skip && deps->dep_as[i] == 0) ||
            (views_only && deps->dep_as[i] == 0))
            continue;
        if (deps->dep_as[i] != 0) {
            if ((privileges_of(cat, deps->dep_as[i], rel) & CAT_ACL_SELECT) == 0)
                return denied(rel, err);
        } else if (need(cat, rel, CAT_ACL_SELECT, err) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The stream a continuous query's late_rows option names, or NULL. */
static const CatRelation *late_rows_target(Catalog *cat, const CatRelation *def)
{
    Arena a;
    arena_init(&a, 256);
    Options o;
    SlError ignore = {0};
    const CatRelation *rel = NULL;
    if (opts_parse(&a, def->options, &o, &ignore) == 0) {
        const char *name = opts_get(&o, "late_rows");
        rel = name ? cat_lookup(cat, name) : NULL;
    }
    sl_error_clear(&ignore);
    arena_destroy(&a);
    return rel;
}

/* q's needs; deps: the statement whose dependency list counts (EXPLAIN's
 * own, for the statement it explains). */
static int check(Catalog *cat, const Query *q, const Query *deps, SlError *err)
{
    switch (q->kind) {
    case QUERY_SELECT:
        return need_select_deps(cat, deps, NULL, err);
    case QUERY_EXPLAIN:
        return check(cat, q->explain, deps, err);
    case QUERY_MODIFY: {
        const CatRelation *target = cat_lookup(cat, q->modify->rel->name);
        unsigned want = q->modify->kind == MODIFY_INSERT   ? CAT_ACL_INSERT
                        : q->modify->kind == MODIFY_UPDATE ? CAT_ACL_UPDATE
                                                           : CAT_ACL_DELETE;
        if (q->modify->kind == MODIFY_INSERT && q->modify->conflict == ONCONFLICT_UPDATE)
            want |= CAT_ACL_UPDATE;
        if (reads_target(q))
            want |= CAT_ACL_SELECT;
        if (need(cat, target, want, err) < 0)
            return -1;
        return need_select_deps(cat, deps, target, err);
    }
    case QUERY_COPY:
        if (q->copy->rel != NULL)
            return need(cat, cat_lookup(cat, q->copy->rel->name),
                        q->copy->to ? CAT_ACL_SELECT : CAT_ACL_INSERT, err);
        return need_select_deps(cat, deps, NULL, err);
    case QUERY_CREATE:
        if (q->create->kind != REL_QUERY)
            return 0;
        /* A continuous query reads its sources as its creator, and writes
         * the stream it goes INTO. */
        if (need_select_deps(cat, deps, NULL, err) < 0)
            return -1;
        if (q->ast != NULL && q->ast->tag == T_CreateCqStmt) {
            const CreateCqStmt *c = (const CreateCqStmt *)q->ast;
            if (c->into != NULL && need(cat, cat_lookup(cat, c->into->name), CAT_ACL_INSERT,
                                        err) < 0)
                return -1;
        }
        /* ... and the stream its late rows go to (late_rows = 'name'). */
        return need(cat, late_rows_target(cat, q->create), CAT_ACL_INSERT, err);
    default:
        return 0;
    }
}

int rt_check_query(Runtime *rt, const Query *q, SlError *err)
{
    Catalog *cat = rt != NULL ? rt->cat : NULL;
    if (t_role == 0 || cat == NULL)
        return 0;
    /* The session's role was dropped by another session since it logged
     * in: nothing more runs as it (PostgreSQL fails the same way). */
    if (cat_role_by_oid(cat, t_role) == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "role with OID %u does not exist",
                        t_role);
    /* a superuser may do anything, but what a view reads is read with the
     * view owner's rights, whoever reads the view */
    if (current_is_superuser(cat)) {
        bool reads = q->kind != QUERY_CREATE || q->create->kind == REL_QUERY;
        return reads ? select_deps(cat, q, NULL, true, err) : 0;
    }
    return check(cat, q, q, err);
}

/* ---------------------------------------------------------------------- */
/* Login and authentication                                                */

int rt_role_login(Runtime *rt, const char *name, uint32_t *oid, bool *superuser,
                  SlError *err)
{
    Catalog *cat = rt != NULL ? rt->cat : NULL;
    *oid = 0;
    *superuser = true;
    if (cat == NULL)
        return 0;
    const CatRole *r = cat_role_lookup(cat, name);
    if (r == NULL && (strcmp(name, "public") == 0 || strcmp(name, "none") == 0 ||
                      strncmp(name, "pg_", 3) == 0))
        return sl_error(err, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
                        "role \"%s\" does not exist", name);
    if (r == NULL) {
        /* Authenticated without a role (a trusted user, or one from the
         * config file): a plain LOGIN role, as CREATE USER makes.  The only
         * superuser nobody made is the bootstrap one, which the catalog
         * has from the start. */
        CatRole def = {.name = name, .login = true, .inherit = true};
        if (cat_role_create(cat, &def, &r, err) < 0)
            return -1;
        sl_log(LOG_INFO, "role created at first login", "role=\"%s\" oid=%u", name, r->oid);
    }
    if (!r->login)
        return sl_error(err, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
                        "role \"%s\" is not permitted to log in", name);
    *oid = r->oid;
    *superuser = r->superuser;
    return 0;
}

/* The oids of the roles that have an md5 hash. */
typedef struct Md5Roles {
    uint32_t *oids;
    int       n, cap;
} Md5Roles;

static void md5_role_cb(const CatRole *r, void *arg)
{
    Md5Roles *m = arg;
    if (r->password_md5 == NULL)
        return;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->oids = sl_realloc(m->oids, sizeof(uint32_t) * (size_t)m->cap);
    }
    m->oids[m->n++] = r->oid;
}

int rt_roles_md5(Runtime *rt, bool keep, SlError *err)
{
    Catalog *cat = rt->cat;
    rt->host.keep_md5 = keep;
    if (keep || cat == NULL)
        return 0;
    /* collected first: an update changes the roles being visited */
    Md5Roles m = {0};
    cat_role_foreach(cat, md5_role_cb, &m);
    uint32_t *oids = m.oids;
    int rc = 0, dropped = 0;
    for (int i = 0; i < m.n && rc == 0; i++) {
        const CatRole *r = cat_role_by_oid(cat, oids[i]);
        if (r == NULL || r->password_md5 == NULL)
            continue;
        CatRole def = *r;
        def.password_md5 = NULL;
        bool left_without = r->password == NULL;
        char *name = sl_strdup(r->name);
        rc = cat_role_update(cat, oids[i], &def, err);
        if (rc == 0) {
            dropped++;
            if (left_without)
                sl_log(LOG_WARN, "role left without a password",
                       "role=\"%s\" reason=\"its only secret was an md5 hash, and no hba "
                       "rule uses md5\"", log_quote(name));
        }
        sl_free(name);
    }
    sl_free(oids);
    if (dropped > 0)
        sl_log(LOG_INFO, "md5 password hashes dropped", "roles=%d reason=\"no hba rule "
               "uses md5\"", dropped);
    return rc;
}

RtSecret rt_role_secret(Runtime *rt, const char *name, char **scram, char **md5)
{
    Catalog *cat = rt != NULL ? rt->cat : NULL;
    *scram = *md5 = NULL;
    const CatRole *r = cat ? cat_role_lookup(cat, name) : NULL;
    if (r == NULL || (r->password == NULL && r->password_md5 == NULL))
        return RT_SECRET_NONE;
    if (r->has_valid_until && r->valid_until < ex_clock_now())
        return RT_SECRET_EXPIRED;
    *scram = r->password ? sl_strdup(r->password) : NULL;
    *md5 = r->password_md5 ? sl_strdup(r->password_md5) : NULL;
    return RT_SECRET_SET;
}

/* ---------------------------------------------------------------------- */
/* CREATE / ALTER / DROP ROLE                                              */

static int check_role_name(const char *name, SlError *err)
{
    if (strcmp(name, "public") == 0 || strcmp(name, "none") == 0)
        return sl_error(err, ERRCODE_RESERVED_NAME, "role name \"%s\" is reserved", name);
    if (strncmp(name, "pg_", 3) == 0) {
        sl_error(err, ERRCODE_RESERVED_NAME, "role name \"%s\" is reserved", name);
        sl_error_detail(err, "Role names starting with \"pg_\" are reserved.");
        return -1;
    }
    return 0;
}

static bool is_md5_hash(const char *s)
{
    if (strncmp(s, "md5", 3) != 0 || strlen(s) != 35)
        return false;
    for (int i = 3; i < 35; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
            return false;
    return true;
}

/* Sets def's password fields from what was given (NULL: none).  The
 * strings live in arena a. */
static void set_password(Arena *a, CatRole *def, const char *name, const char *pw,
                         bool keep_md5)
{
    def->password = def->password_md5 = NULL;
    if (pw == NULL || *pw == '\0')
        return;
    ScramSecret sec;
    if (strncmp(pw, "SCRAM-SHA-256$", 14) == 0 && scram_secret_parse(pw, &sec) == 0) {
        def->password = arena_strdup(a, pw);
        return;
    }
    if (is_md5_hash(pw)) {
        def->password_md5 = arena_strdup(a, pw);
        return;
    }
    uint8_t salt[16];
    if (RAND_bytes(salt, sizeof(salt)) != 1)
        sl_panic("RAND_bytes failed");
    scram_secret_make(pw, strlen(pw), salt, sizeof(salt), SCRAM_DEFAULT_ITER, &sec);
    StrBuf b;
    strbuf_init(&b);
    scram_secret_format(&sec, &b);
    def->password = arena_strndup(a, b.data, b.len);
    strbuf_free(&b);
    if (keep_md5) {
        char hex[33];
        md5_password_hex(pw, name, hex);
        def->password_md5 = arena_printf(a, "md5%s", hex);
    }
    OPENSSL_cleanse(&sec, sizeof(sec));
}

/* What a role statement's options say; a field's seen flag is set when
 * it was given. */
typedef struct RoleOpts {
    int         superuser, login, createrole, createdb, inherit;   /* -1: not given */
    bool        password_given;
    const char *password;       /* NULL: PASSWORD NULL */
    bool        valid_given;
    int64_t     valid_until;
    bool        keep_md5;       /* the Runtime's host.keep_md5 (rt_roles_md5) */
} RoleOpts;

static const struct {
    const char *word;
    size_t      field;
    int         value;
} role_words[] = {
    {"superuser", offsetof(RoleOpts, superuser), 1},
    {"nosuperuser", offsetof(RoleOpts, superuser), 0},
    {"login", offsetof(RoleOpts, login), 1},
    {"nologin", offsetof(RoleOpts, login), 0},
    {"createrole", offsetof(RoleOpts, createrole), 1},
    {"nocreaterole", offsetof(RoleOpts, createrole), 0},
    {"createdb", offsetof(RoleOpts, createdb), 1},
    {"nocreatedb", offsetof(RoleOpts, createdb), 0},
    {"inherit", offsetof(RoleOpts, inherit), 1},
    {"noinherit", offsetof(RoleOpts, inherit), 0},
};

static int redundant(const DefElem *d, SlError *err)
{
    return sl_error_at(err, ERRCODE_SYNTAX_ERROR, d->hdr.location,
                       "conflicting or redundant options");
}

static int parse_role_opts(Arena *a, List *options, RoleOpts *o, SlError *err)
{
    memset(o, 0, sizeof(*o));
    o->superuser = o->login = o->createrole = o->createdb = o->inherit = -1;
    for (int i = 0; i < list_len(options); i++) {
        const DefElem *d = list_nth(options, i);
        if (strcmp(d->name, "password") == 0) {
            if (o->password_given)
                return redundant(d, err);
            o->password_given = true;
            const A_Const *c = (const A_Const *)d->arg;
            o->password = c->kind == CONST_STRING ? c->text : NULL;
            continue;
        }
        if (strcmp(d->name, "valid") == 0) {
            if (o->valid_given)
                return redundant(d, err);
            const A_Const *c = (const A_Const *)d->arg;
            Vector v;
            vector_init(&v, a, sl_type(TYPE_TIMESTAMPTZ), 1, true);
            if (value_parse_text(a, sl_type(TYPE_TIMESTAMPTZ), c->text, (size_t)c->len, &v, 0,
                                 c->hdr.location, err) < 0)
                return -1;
            o->valid_given = true;
            o->valid_until = v.v.i64[0];
            continue;
        }
        size_t k;
        for (k = 0; k < SL_ARRAY_LEN(role_words); k++)
            if (strcmp(d->name, role_words[k].word) == 0)
                break;
        if (k == SL_ARRAY_LEN(role_words))
            return sl_error_at(err, ERRCODE_SYNTAX_ERROR, d->hdr.location,
                               "unrecognized role option \"%s\"", d->name);
        int *f = (int *)((char *)o + role_words[k].field);
        if (*f != -1)
            return redundant(d, err);
        *f = role_words[k].value;
    }
    return 0;
}

/* A password given as an md5 hash is kept only while an md5 rule could
 * use it (22023 otherwise): stored, it would be the only secret, and one
 * that logs in as it is. */
static int check_password_form(const RoleOpts *o, SlError *err)
{
    if (!o->password_given || o->password == NULL || o->keep_md5 || !is_md5_hash(o->password))
        return 0;
    sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
             "a password given as an md5 hash cannot be stored: no hba rule uses md5");
    sl_error_detail(err, "Without md5 rules the server keeps only SCRAM-SHA-256 verifiers.");
    sl_error_hint(err, "Give the password itself (it is stored as a SCRAM-SHA-256 verifier) "
                       "or a SCRAM-SHA-256 verifier.");
    return -1;
}

static void apply_opts(Arena *a, CatRole *def, const RoleOpts *o)
{
    if (o->superuser >= 0)
        def->superuser = o->superuser;
    if (o->login >= 0)
        def->login = o->login;
    if (o->createrole >= 0)
        def->createrole = o->createrole;
    if (o->createdb >= 0)
        def->createdb = o->createdb;
    if (o->inherit >= 0)
        def->inherit = o->inherit;
    if (o->password_given)
        set_password(a, def, def->name, o->password, o->keep_md5);
    if (o->valid_given) {
        def->has_valid_until = true;
        def->valid_until = o->valid_until;
    }
}

static bool may_create_roles(Catalog *cat)
{
    if (t_role == 0)
        return true;
    const CatRole *r = cat_role_by_oid(cat, t_role);
    return r != NULL && (r->superuser || r->createrole);
}

static int undefined_role(const char *name, SlError *err)
{
    return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "role \"%s\" does not exist", name);
}

static int create_role(Catalog *cat, Arena *a, const RoleStmt *s, bool keep_md5, SlError *err)
{
    RoleOpts o;
    if (parse_role_opts(a, s->options, &o, err) < 0)
        return -1;
    o.keep_md5 = keep_md5;
    if (!may_create_roles(cat))
        return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied to create role");
    if (check_password_form(&o, err) < 0)
        return -1;
    if (o.superuser == 1 && !current_is_superuser(cat))
        return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                        "must be superuser to create superusers");
    if (check_role_name(s->name, err) < 0)
        return -1;
    if (cat_role_lookup(cat, s->name) != NULL)
        return sl_error(err, ERRCODE_DUPLICATE_OBJECT, "role \"%s\" already exists", s->name);
    CatRole def = {.name = s->name, .login = s->is_user, .inherit = true};
    apply_opts(a, &def, &o);
    return cat_role_create(cat, &def, NULL, err);
}

static int alter_role(Catalog *cat, Arena *a, const RoleStmt *s, bool keep_md5, SlError *err)
{
    RoleOpts o;
    if (parse_role_opts(a, s->options, &o, err) < 0)
        return -1;
    o.keep_md5 = keep_md5;
    const CatRole *r = cat_role_lookup(cat, s->name);
    if (r == NULL)
        return undefined_role(s->name, err);
    bool only_password = o.superuser < 0 && o.login < 0 && o.createrole < 0 &&
                         o.createdb < 0 && o.inherit < 0 && !o.valid_given;
    if (r->superuser || o.superuser >= 0) {
        if (!current_is_superuser(cat))
            return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                            "must be superuser to alter superuser roles or change superuser "
                            "attribute");
    } else if (!may_create_roles(cat) && !(r->oid == t_role && only_password)) {
        return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied to alter role");
    }
    if (r->oid == CAT_BOOTSTRAP_ROLE_OID && o.superuser == 0)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "the bootstrap user must have the SUPERUSER attribute");
    if (check_password_form(&o, err) < 0)
        return -1;
    CatRole def = *r;
    apply_opts(a, &def, &o);
    return cat_role_update(cat, r->oid, &def, err);
}

static int rename_role(Catalog *cat, const RoleStmt *s, SlError *err)
{
    const CatRole *r = cat_role_lookup(cat, s->name);
    if (r == NULL)
        return undefined_role(s->name, err);
    if (r->oid == t_role)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "session user cannot be renamed");
    if (cat_role_lookup(cat, s->new_name) != NULL)
        return sl_error(err, ERRCODE_DUPLICATE_OBJECT, "role \"%s\" already exists",
                        s->new_name);
    if (check_role_name(s->new_name, err) < 0)
        return -1;
    if (r->superuser ? !current_is_superuser(cat) : !may_create_roles(cat))
        return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                        r->superuser ? "must be superuser to rename superusers"
                                     : "permission denied to rename role");
    return cat_role_rename(cat, r->oid, s->new_name, err);
}

/* DROP ROLE's dependency check: what the role owns or was granted. */
typedef struct Depends {
    Catalog    *cat;
    uint32_t    role;
    StrBuf      detail;
    int         n;
} Depends;

static void owned_cb(const CatRelation *rel, void *arg)
{
    Depends *d = arg;
    if (rel->owner != d->role)
        return;
    strbuf_printf(&d->detail, "%sowner of %s %s", d->n++ ? "\n" : "", kind_noun(rel->kind),
                  rel->name);
}

typedef struct FindOid {
    uint32_t           oid;
    const CatRelation *rel;
} FindOid;

static void find_oid_cb(const CatRelation *rel, void *arg)
{
    FindOid *f = arg;
    if (rel->oid == f->oid)
        f->rel = rel;
}

static const CatRelation *relation_by_oid(Catalog *cat, uint32_t oid)
{
    FindOid f = {oid, NULL};
    cat_foreach(cat, find_oid_cb, &f);
    return f.rel;
}

static void granted_cb(uint32_t rel_oid, unsigned privs, void *arg)
{
    Depends *d = arg;
    SL_UNUSED(privs);
    const CatRelation *rel = relation_by_oid(d->cat, rel_oid);
    if (rel != NULL)
        strbuf_printf(&d->detail, "%sprivileges for %s %s", d->n++ ? "\n" : "",
                      kind_noun(rel->kind), rel->name);
}

static int drop_roles(Catalog *cat, const RoleStmt *s, SlError *err)
{
    if (!may_create_roles(cat))
        return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied to drop role");
    int n = list_len(s->names);
    /* Check every name first: a refusal drops nothing. */
    for (int i = 0; i < n; i++) {
        const char *name = list_nth(s->names, i);
        const CatRole *r = cat_role_lookup(cat, name);
        if (r == NULL) {
            if (s->missing_ok)
                continue;
            return undefined_role(name, err);
        }
        if (r->oid == t_role)
            return sl_error(err, ERRCODE_OBJECT_IN_USE, "current user cannot be dropped");
        if (r->oid == CAT_BOOTSTRAP_ROLE_OID)
            return sl_error(err, ERRCODE_OBJECT_IN_USE,
                            "cannot drop role %s because it is required by the database "
                            "system", name);
        if (r->superuser && !current_is_superuser(cat))
            return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                            "must be superuser to drop superusers");
        Depends d = {cat, r->oid, {0}, 0};
        strbuf_init(&d.detail);
        cat_foreach(cat, owned_cb, &d);
        cat_acl_foreach_grantee(cat, r->oid, granted_cb, &d);
        if (d.n > 0) {
            sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
                     "role \"%s\" cannot be dropped because some objects depend on it", name);
            sl_error_detail(err, "%s", d.detail.data);
            strbuf_free(&d.detail);
            return -1;
        }
        strbuf_free(&d.detail);
    }
    for (int i = 0; i < n; i++) {
        const CatRole *r = cat_role_lookup(cat, list_nth(s->names, i));
        if (r != NULL && cat_role_drop(cat, r->oid, err) < 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* GRANT / REVOKE                                                          */

/* A privilege word as a CAT_ACL_* bit; 0 for one sluice does not have. */
static int privilege_bit(const char *w, unsigned *bit)
{
    static const struct {
        const char *word;
        unsigned    bit;
    } words[] = {
        {"select", CAT_ACL_SELECT}, {"insert", CAT_ACL_INSERT}, {"update", CAT_ACL_UPDATE},
        {"delete", CAT_ACL_DELETE}, {"truncate", 0}, {"references", 0}, {"trigger", 0},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(words); i++) {
        if (strcasecmp(w, words[i].word) == 0) {
            *bit = words[i].bit;
            return 0;
        }
    }
    return -1;
}

/* Collects the relations of ON ALL TABLES | STREAMS IN SCHEMA public as
 * RangeVars (sinks are not tables). */
typedef struct AllIn {
    Arena *a;
    bool   streams;
    List  *objects;
} AllIn;

static void all_in_cb(const CatRelation *rel, void *arg)
{
    AllIn *all = arg;
    if (rel->kind == REL_SINK || (all->streams && rel->kind != REL_STREAM))
        return;
    RangeVar *rv = ARENA_NEW(all->a, RangeVar);
    rv->hdr.tag = T_RangeVar;
    rv->name = rel->name;
    all->objects = list_append(all->a, all->objects, rv);
}

static int run_grant(Catalog *cat, const GrantStmt *g, SlError *err)
{
    unsigned mask = 0;
    if (g->privileges == NULL)
        mask = CAT_ACL_ALL;
    for (int i = 0; i < list_len(g->privileges); i++) {
        const char *w = list_nth(g->privileges, i);
        unsigned bit;
        if (privilege_bit(w, &bit) < 0)
            return sl_error(err, ERRCODE_SYNTAX_ERROR, "unrecognized privilege type \"%s\"", w);
        if (bit == 0)
            return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "privilege %s is not supported: sluice has SELECT, INSERT, UPDATE "
                            "and DELETE", w);
        mask |= bit;
    }
    /* ON ALL TABLES | STREAMS IN SCHEMA: every such relation, now. */
    List *objects = g->objects;
    Arena la;
    arena_init(&la, 1024);
    if (g->all_in_schema != NULL) {
        if (strcmp(g->all_in_schema, "public") != 0) {
            arena_destroy(&la);
            return sl_error(err, ERRCODE_INVALID_SCHEMA_NAME, "schema \"%s\" does not exist",
                            g->all_in_schema);
        }
        AllIn all = {&la, g->stream, NULL};
        cat_foreach(cat, all_in_cb, &all);
        objects = all.objects;
    }
    int nobj = list_len(objects), nrole = list_len(g->grantees);
    const CatRelation **rels = sl_calloc((size_t)(nobj ? nobj : 1), sizeof(*rels));
    uint32_t *grantees = sl_calloc((size_t)(nrole ? nrole : 1), sizeof(*grantees));
    int rc = -1;
    for (int i = 0; i < nobj; i++) {
        const RangeVar *rv = list_nth(objects, i);
        const CatRelation *rel = rv->schema == NULL || strcmp(rv->schema, "public") == 0
                                     ? cat_lookup(cat, rv->name) : NULL;
        if (rel == NULL) {
            sl_error(err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist", rv->name);
            goto out;
        }
        if (rel->kind == REL_SINK || (g->stream && rel->kind != REL_STREAM)) {
            sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a %s", rel->name,
                     g->stream ? "stream" : "table or stream");
            goto out;
        }
        if (!current_is_superuser(cat) && rel->owner != t_role) {
            denied(rel, err);
            goto out;
        }
        rels[i] = rel;
    }
    for (int i = 0; i < nrole; i++) {
        const char *name = list_nth(g->grantees, i);
        if (strcmp(name, "public") == 0) {
            grantees[i] = CAT_ROLE_PUBLIC;
            continue;
        }
        const CatRole *r = cat_role_lookup(cat, name);
        if (r == NULL) {
            undefined_role(name, err);
            goto out;
        }
        grantees[i] = r->oid;
    }
    for (int i = 0; i < nobj; i++) {
        for (int k = 0; k < nrole; k++) {
            unsigned have = cat_acl_get(cat, rels[i]->oid, grantees[k]);
            unsigned now = g->is_grant ? have | mask : have & ~mask;
            if (cat_acl_set(cat, rels[i]->oid, grantees[k], now, rt_owner(), err) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    sl_free(rels);
    sl_free(grantees);
    arena_destroy(&la);
    return rc;
}

int rt_run_role(Runtime *rt, const Query *q, SlError *err)
{
    Catalog *cat = rt->cat;
    if (q->ast->tag == T_GrantStmt)
        return run_grant(cat, (const GrantStmt *)q->ast, err);
    const RoleStmt *s = (const RoleStmt *)q->ast;
    Arena a;
    arena_init(&a, 4096);
    int rc;
    switch (s->kind) {
    case ROLESTMT_CREATE: rc = create_role(cat, &a, s, rt->host.keep_md5, err); break;
    case ROLESTMT_ALTER:  rc = alter_role(cat, &a, s, rt->host.keep_md5, err); break;
    case ROLESTMT_RENAME: rc = rename_role(cat, s, err); break;
    default:              rc = drop_roles(cat, s, err); break;
    }
    arena_destroy(&a);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* has_table_privilege and friends (acl.h)                                 */

/* The privilege words of a has_*_privilege argument: "SELECT, INSERT WITH
 * GRANT OPTION".  Calls fn for each word (upper-cased, without WITH GRANT
 * OPTION); -1 with 22023 for an empty one, or one fn does not know
 * (named as written, as PostgreSQL names it). */
typedef int (*word_fn)(const char *word, bool grant_option, void *arg);

static int each_privilege(const char *list, word_fn fn, void *arg, SlError *err)
{
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char w[64];
        while (len > 0 && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len > 0 && isspace((unsigned char)p[len - 1]))
            len--;
        if (len >= sizeof(w))
            len = sizeof(w) - 1;
        for (size_t i = 0; i < len; i++)
            w[i] = (char)toupper((unsigned char)p[i]);
        w[len] = '\0';
        bool grant_option = false;
        /* both suffixes are 18 characters */
        if (len > 18 && (strcmp(w + len - 18, " WITH GRANT OPTION") == 0 ||
                         strcmp(w + len - 18, " WITH ADMIN OPTION") == 0)) {
            w[len - 18] = '\0';
            grant_option = true;
        }
        int rc = fn(w, grant_option, arg);
        if (rc != 0) {
            if (rc == -2)
                return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                                "unrecognized privilege type: \"%.*s\"",
                                (int)strlen(w), p);
            return rc;
        }
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

typedef struct Ask {
    Catalog           *cat;
    uint32_t           role;        /* CAT_ROLE_PUBLIC for "public" */
    bool               superuser;
    const CatRelation *rel;         /* tables; NULL: a system relation */
    bool               owner_like;  /* schemas etc.: create rights */
    bool               yes;
} Ask;

static int table_word(const char *w, bool grant_option, void *arg)
{
    Ask *a = arg;
    unsigned bit;
    char lower[64];
    size_t n = strlen(w);
    for (size_t i = 0; i <= n && i < sizeof(lower); i++)
        lower[i] = (char)tolower((unsigned char)w[i]);
    lower[sizeof(lower) - 1] = '\0';
    if (privilege_bit(lower, &bit) < 0)
        return -2;
    if (a->superuser) {
        a->yes = true;
    } else if (a->rel == NULL) {
        /* system relations: SELECT granted to PUBLIC, as pg_catalog's are */
        a->yes |= bit == CAT_ACL_SELECT && !grant_option;
    } else if (a->rel->owner == a->role) {
        a->yes = true;
    } else if (bit != 0 && !grant_option) {
        a->yes |= (privileges_of(a->cat, a->role, a->rel) & bit) != 0;
    }
    return 0;
}

static int schema_word(const char *w, bool grant_option, void *arg)
{
    Ask *a = arg;
    if (strcmp(w, "USAGE") == 0)
        a->yes |= a->superuser || !grant_option;
    else if (strcmp(w, "CREATE") == 0)
        a->yes |= a->superuser || (a->owner_like && !grant_option);
    else
        return -2;
    return 0;
}

static int database_word(const char *w, bool grant_option, void *arg)
{
    Ask *a = arg;
    if (strcmp(w, "CONNECT") == 0 || strcmp(w, "TEMPORARY") == 0 || strcmp(w, "TEMP") == 0)
        a->yes |= a->superuser || !grant_option;
    else if (strcmp(w, "CREATE") == 0)
        a->yes |= a->superuser || a->owner_like;
    else
        return -2;
    return 0;
}

static int role_word(const char *w, bool grant_option, void *arg)
{
    Ask *a = arg;
    if (strcmp(w, "MEMBER") != 0 && strcmp(w, "USAGE") != 0 && strcmp(w, "SET") != 0)
        return -2;
    a->yes |= a->superuser || (a->owner_like && !grant_option);
    return 0;
}

static int acl_answer(Catalog *cat, const AclQuestion *q, SlError *err);

/* The hooks run on the statement's thread, a worker's too: they read the
 * catalog (their argument, ExFnHooks.acl_arg) under its read lock. */
static int acl_check(void *arg, const AclQuestion *q, SlError *err)
{
    Catalog *cat = arg;
    if (cat == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no catalog is open: the runtime was not initialized (rt_init)");
    cat_read_lock(cat);
    int rc = acl_answer(cat, q, err);
    cat_read_unlock(cat);
    return rc;
}

static int acl_answer(Catalog *cat, const AclQuestion *q, SlError *err)
{
    Ask a = {.cat = cat};
    const CatRole *r = NULL;
    if (q->current_role) {
        a.role = t_role;
        r = t_role ? cat_role_by_oid(cat, t_role) : NULL;
        a.superuser = t_role == 0 || (r != NULL && r->superuser);
    } else if (q->role != NULL && strcmp(q->role, "public") == 0) {
        a.role = CAT_ROLE_PUBLIC;
    } else {
        r = q->role ? cat_role_lookup(cat, q->role) : cat_role_by_oid(cat, (uint32_t)q->role_oid);
        if (r == NULL) {
            if (q->role == NULL)
                return ACL_NULL;
            return undefined_role(q->role, err);
        }
        a.role = r->oid;
        a.superuser = r->superuser;
    }
    switch (q->kind) {
    case ACL_OBJ_TABLE: {
        if (q->object == NULL) {
            a.rel = relation_by_oid(cat, (uint32_t)q->object_oid);
            if (a.rel == NULL && q->object_oid >= 16384)
                return ACL_NULL;
        } else {
            const char *name = q->object, *dot = strchr(name, '.');
            bool system = false;
            if (dot != NULL) {
                size_t sl = (size_t)(dot - name);
                if (sl == 6 && strncmp(name, "public", 6) == 0)
                    name = dot + 1;
                else if ((sl == 10 && strncmp(name, "pg_catalog", 10) == 0) ||
                         (sl == 18 && strncmp(name, "information_schema", 18) == 0) ||
                         (sl == 3 && strncmp(name, "sys", 3) == 0))
                    system = true;
                else
                    return sl_error(err, ERRCODE_INVALID_SCHEMA_NAME,
                                    "schema \"%.*s\" does not exist", (int)sl, name);
            }
            if (!system) {
                a.rel = cat_lookup(cat, name);
                if (a.rel == NULL && strncmp(name, "pg_", 3) != 0)
                    return sl_error(err, ERRCODE_UNDEFINED_TABLE,
                                    "relation \"%s\" does not exist", q->object);
            }
        }
        if (each_privilege(q->privilege, table_word, &a, err) < 0)
            return -1;
        break;
    }
    case ACL_OBJ_SCHEMA:
        if (q->object != NULL) {
            if (strcmp(q->object, "public") == 0)
                a.owner_like = true;
            else if (strcmp(q->object, "pg_catalog") != 0 &&
                     strcmp(q->object, "information_schema") != 0 &&
                     strcmp(q->object, "sys") != 0)
                return sl_error(err, ERRCODE_INVALID_SCHEMA_NAME,
                                "schema \"%s\" does not exist", q->object);
        } else {
            /* PostgreSQL's oids: pg_catalog 11, public 2200 */
            if (q->object_oid != 11 && q->object_oid != 2200)
                return ACL_NULL;
            a.owner_like = q->object_oid == 2200;
        }
        if (each_privilege(q->privilege, schema_word, &a, err) < 0)
            return -1;
        break;
    case ACL_OBJ_DATABASE:
        a.owner_like = r != NULL && r->createdb;
        if (each_privilege(q->privilege, database_word, &a, err) < 0)
            return -1;
        break;
    case ACL_OBJ_ROLE: {
        const CatRole *target = q->object ? cat_role_lookup(cat, q->object)
                                          : cat_role_by_oid(cat, (uint32_t)q->object_oid);
        if (target == NULL) {
            if (q->object == NULL)
                return ACL_NULL;
            return undefined_role(q->object, err);
        }
        a.owner_like = target->oid == a.role;
        if (each_privilege(q->privilege, role_word, &a, err) < 0)
            return -1;
        break;
    }
    }
    return a.yes ? ACL_YES : ACL_NO;
}

static char *acl_role_name(void *arg, int64_t oid, Arena *a)
{
    Catalog *cat = arg;
    if (cat == NULL || oid <= 0 || oid > UINT32_MAX)
        return NULL;
    cat_read_lock(cat);
    const CatRole *r = cat_role_by_oid(cat, (uint32_t)oid);
    char *name = r ? arena_strdup(a, r->name) : NULL;
    cat_read_unlock(cat);
    return name;
}

const ExAclHooks rt_acl_hooks = {acl_check, acl_role_name};
