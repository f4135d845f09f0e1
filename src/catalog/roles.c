/*
 * roles.c -- roles (PostgreSQL's pg_authid) and the privileges granted on
 * relations (the ACLs of pg_class.relacl, one row per grantee).
 *
 *   cat_roles_load, cat_roles_free          at open and close
 *   cat_role_lookup, cat_role_by_oid, cat_role_foreach
 *   cat_role_create, cat_role_update, cat_role_rename, cat_role_drop
 *   cat_acl_get, cat_acl_set, cat_acl_foreach_grantee, cat_acl_forget
 *   cat_read_lock, cat_read_unlock          for readers off the loop thread
 *
 * As with relations, everything is loaded into memory at open, and a
 * change writes the file first and memory only once the write succeeded,
 * so a failed statement changes nothing.  Each change is one SQLite
 * statement (atomic on its own).  The rules -- who may create a role, who
 * may grant -- are the runtime's (src/runtime/roles.c); this file only
 * stores.
 */
#include "sluice/catalog.h"

#include <sqlite3.h>
#include <stdio.h>

#include "catalog_int.h"

struct CatAcl {
    uint32_t rel_oid;
    uint32_t grantee;
    unsigned privs;
    uint32_t grantor;
};

static char *dup_or_null(const char *s)
{
    return s ? sl_strdup(s) : NULL;
}

static void role_free(CatRole *r)
{
    sl_free((char *)r->name);
    sl_free((char *)r->password);
    sl_free((char *)r->password_md5);
    sl_free(r);
}

static void role_add(Catalog *cat, CatRole *r)
{
    CAT_WRITE_BEGIN(cat);
    if (cat->nroles == cat->caproles) {
        cat->caproles = cat->caproles ? cat->caproles * 2 : 16;
        cat->roles = sl_realloc(cat->roles, sizeof(CatRole *) * (size_t)cat->caproles);
    }
    int i = cat->nroles;
    while (i > 0 && cat->roles[i - 1]->oid > r->oid) {
        cat->roles[i] = cat->roles[i - 1];
        i--;
    }
    cat->roles[i] = r;
    cat->nroles++;
    if (r->oid >= cat->next_oid)
        cat->next_oid = r->oid + 1;
    CAT_WRITE_END(cat);
}

/* Callers hold the write lock. */
static void acl_add(Catalog *cat, const struct CatAcl *a)
{
    if (cat->nacls == cat->capacls) {
        cat->capacls = cat->capacls ? cat->capacls * 2 : 16;
        cat->acls = sl_realloc(cat->acls, sizeof(struct CatAcl) * (size_t)cat->capacls);
    }
    cat->acls[cat->nacls++] = *a;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NULL
                                                      : (const char *)sqlite3_column_text(st, i);
}

int cat_roles_load(Catalog *cat, SlError *err)
{
    sqlite3_stmt *rs = NULL, *as = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(cat->db,
            "SELECT oid, name, superuser, login, createrole, createdb, inherit, password,"
            " password_md5, valid_until, created_at FROM roles ORDER BY oid",
            -1, &rs, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(cat->db, "SELECT rel_oid, grantee, privs, grantor FROM privileges",
                           -1, &as, NULL) != SQLITE_OK) {
        cat_db_error(cat, err);
        goto out;
    }
    while (sqlite3_step(rs) == SQLITE_ROW) {
        CatRole *r = sl_calloc(1, sizeof(CatRole));
        r->oid = (uint32_t)sqlite3_column_int64(rs, 0);
        r->name = sl_strdup((const char *)sqlite3_column_text(rs, 1));
        r->superuser = sqlite3_column_int(rs, 2) != 0;
        r->login = sqlite3_column_int(rs, 3) != 0;
        r->createrole = sqlite3_column_int(rs, 4) != 0;
        r->createdb = sqlite3_column_int(rs, 5) != 0;
        r->inherit = sqlite3_column_int(rs, 6) != 0;
        r->password = dup_or_null(col_text(rs, 7));
        r->password_md5 = dup_or_null(col_text(rs, 8));
        r->has_valid_until = sqlite3_column_type(rs, 9) != SQLITE_NULL;
        r->valid_until = sqlite3_column_int64(rs, 9);
        r->created_at = sqlite3_column_int64(rs, 10);
        role_add(cat, r);
    }
    while (sqlite3_step(as) == SQLITE_ROW) {
        struct CatAcl a = {(uint32_t)sqlite3_column_int64(as, 0),
                           (uint32_t)sqlite3_column_int64(as, 1),
                           (unsigned)sqlite3_column_int(as, 2),
                           (uint32_t)sqlite3_column_int64(as, 3)};
        CAT_WRITE_BEGIN(cat);
        acl_add(cat, &a);
        CAT_WRITE_END(cat);
    }
    rc = 0;
out:
    sqlite3_finalize(rs);
    sqlite3_finalize(as);
    return rc;
}

void cat_roles_free(Catalog *cat)
{
    for (int i = 0; i < cat->nroles; i++)
        role_free(cat->roles[i]);
    sl_free(cat->roles);
    sl_free(cat->acls);
    cat->roles = NULL;
    cat->acls = NULL;
    cat->nroles = cat->nacls = 0;
}

const CatRole *cat_role_lookup(Catalog *cat, const char *name)
{
    for (int i = 0; i < cat->nroles; i++)
        if (strcmp(cat->roles[i]->name, name) == 0)
            return cat->roles[i];
    return NULL;
}

static int role_index(Catalog *cat, uint32_t oid)
{
    for (int i = 0; i < cat->nroles; i++)
        if (cat->roles[i]->oid == oid)
            return i;
    return -1;
}

const CatRole *cat_role_by_oid(Catalog *cat, uint32_t oid)
{
    int i = role_index(cat, oid);
    return i < 0 ? NULL : cat->roles[i];
}

int cat_role_foreach(Catalog *cat, void (*fn)(const CatRole *role, void *arg), void *arg)
{
    for (int i = 0; i < cat->nroles; i++)
        fn(cat->roles[i], arg);
    return cat->nroles;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s != NULL)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* Binds def's attributes as ?1..?8 (superuser .. valid_until). */
static void bind_attrs(sqlite3_stmt *st, const CatRole *def)
{
    sqlite3_bind_int(st, 1, def->superuser);
    sqlite3_bind_int(st, 2, def->login);
    sqlite3_bind_int(st, 3, def->createrole);
    sqlite3_bind_int(st, 4, def->createdb);
    sqlite3_bind_int(st, 5, def->inherit);
    bind_text_or_null(st, 6, def->password);
    bind_text_or_null(st, 7, def->password_md5);
    if (def->has_valid_until)
        sqlite3_bind_int64(st, 8, def->valid_until);
    else
        sqlite3_bind_null(st, 8);
}

/* Runs a prepared change; -1 with err set (42710 on a taken name). */
static int step_change(Catalog *cat, sqlite3_stmt *st, const char *name, SlError *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc == SQLITE_CONSTRAINT && name != NULL)
        return sl_error(err, ERRCODE_DUPLICATE_OBJECT, "role \"%s\" already exists", name);
    return cat_db_error(cat, err);
}

static void copy_attrs(CatRole *r, const CatRole *def)
{
    r->superuser = def->superuser;
    r->login = def->login;
    r->createrole = def->createrole;
    r->createdb = def->createdb;
    r->inherit = def->inherit;
    if (r->password != def->password) {
        sl_free((char *)r->password);
        r->password = dup_or_null(def->password);
    }
    if (r->password_md5 != def->password_md5) {
        sl_free((char *)r->password_md5);
        r->password_md5 = dup_or_null(def->password_md5);
    }
    r->has_valid_until = def->has_valid_until;
    r->valid_until = def->valid_until;
}

int cat_role_create(Catalog *cat, const CatRole *def, const CatRole **out, SlError *err)
{
    if (cat_role_lookup(cat, def->name) != NULL)
        return sl_error(err, ERRCODE_DUPLICATE_OBJECT, "role \"%s\" already exists",
                        def->name);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(cat->db,
            "INSERT INTO roles (superuser, login, createrole, createdb, inherit, password,"
            " password_md5, valid_until, oid, name, created_at)"
            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            -1, &st, NULL) != SQLITE_OK)
        return cat_db_error(cat, err);
    uint32_t oid = cat->next_oid;
    int64_t now = cat_now_usec();
    bind_attrs(st, def);
    sqlite3_bind_int64(st, 9, oid);
    sqlite3_bind_text(st, 10, def->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 11, now);
    int rc = step_change(cat, st, def->name, err);
    sqlite3_finalize(st);
    if (rc < 0)
        return -1;
    CatRole *r = sl_calloc(1, sizeof(CatRole));
    r->oid = oid;
    r->name = sl_strdup(def->name);
    r->created_at = now;
    copy_attrs(r, def);
    role_add(cat, r);
    if (out != NULL)
        *out = r;
    return 0;
}

int cat_role_update(Catalog *cat, uint32_t oid, const CatRole *def, SlError *err)
{
    int i = role_index(cat, oid);
    if (i < 0)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "role with OID %u does not exist", oid);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(cat->db,
            "UPDATE roles SET superuser = ?1, login = ?2, createrole = ?3, createdb = ?4,"
            " inherit = ?5, password = ?6, password_md5 = ?7, valid_until = ?8"
            " WHERE oid = ?9", -1, &st, NULL) != SQLITE_OK)
        return cat_db_error(cat, err);
    bind_attrs(st, def);
    sqlite3_bind_int64(st, 9, oid);
    int rc = step_change(cat, st, NULL, err);
    sqlite3_finalize(st);
    if (rc < 0)
        return -1;
    CAT_WRITE_BEGIN(cat);
    copy_attrs(cat->roles[i], def);
    CAT_WRITE_END(cat);
    return 0;
}

int cat_role_rename(Catalog *cat, uint32_t oid, const char *new_name, SlError *err)
{
    int i = role_index(cat, oid);
    if (i < 0)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "role with OID %u does not exist", oid);
    if (cat_role_lookup(cat, new_name) != NULL)
        return sl_error(err, ERRCODE_DUPLICATE_OBJECT, "role \"%s\" already exists", new_name);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(cat->db,
            "UPDATE roles SET name = ?1, password_md5 = NULL WHERE oid = ?2", -1, &st,
            NULL) != SQLITE_OK)
        return cat_db_error(cat, err);
    sqlite3_bind_text(st, 1, new_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, oid);
    int rc = step_change(cat, st, new_name, err);
    sqlite3_finalize(st);
    if (rc < 0)
        return -1;
    CatRole *r = cat->roles[i];
    CAT_WRITE_BEGIN(cat);
    sl_free((char *)r->name);
    r->name = sl_strdup(new_name);
    sl_free((char *)r->password_md5);
    r->password_md5 = NULL;
    CAT_WRITE_END(cat);
    return 0;
}

int cat_role_drop(Catalog *cat, uint32_t oid, SlError *err)
{
    int i = role_index(cat, oid);
    if (i < 0)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "role with OID %u does not exist", oid);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(cat->db, "DELETE FROM roles WHERE oid = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return cat_db_error(cat, err);
    sqlite3_bind_int64(st, 1, oid);
    int rc = step_change(cat, st, NULL, err);
    sqlite3_finalize(st);
    if (rc < 0)
        return -1;
    CAT_WRITE_BEGIN(cat);
    role_free(cat->roles[i]);
    memmove(&cat->roles[i], &cat->roles[i + 1],
            sizeof(CatRole *) * (size_t)(cat->nroles - i - 1));
    cat->nroles--;
    CAT_WRITE_END(cat);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Privileges                                                              */

static int acl_index(Catalog *cat, uint32_t rel_oid, uint32_t grantee)
{
    for (int i = 0; i < cat->nacls; i++)
        if (cat->acls[i].rel_oid == rel_oid && cat->acls[i].grantee == grantee)
            return i;
    return -1;
}

unsigned cat_acl_get(Catalog *cat, uint32_t rel_oid, uint32_t grantee)
{
    int i = acl_index(cat, rel_oid, grantee);
    return i < 0 ? 0 : cat->acls[i].privs;
}

int cat_acl_set(Catalog *cat, uint32_t rel_oid, uint32_t grantee, unsigned privs,
                uint32_t grantor, SlError *err)
{
    int i = acl_index(cat, rel_oid, grantee);
    if ((i < 0 && privs == 0) || (i >= 0 && cat->acls[i].privs == privs))
        return 0;
    sqlite3_stmt *st = NULL;
    const char *sql = privs == 0
        ? "DELETE FROM privileges WHERE rel_oid = ?1 AND grantee = ?2"
        : "INSERT INTO privileges (rel_oid, grantee, privs, grantor) VALUES (?1, ?2, ?3, ?4)"
          " ON CONFLICT (rel_oid, grantee) DO UPDATE SET privs = ?3, grantor = ?4";
    if (sqlite3_prepare_v2(cat->db, sql, -1, &st, NULL) != SQLITE_OK)
        return cat_db_error(cat, err);
    sqlite3_bind_int64(st, 1, rel_oid);
    sqlite3_bind_int64(st, 2, grantee);
    if (privs != 0) {
        sqlite3_bind_int(st, 3, (int)privs);
        sqlite3_bind_int64(st, 4, grantor);
    }
    int rc = step_change(cat, st, NULL, err);
    sqlite3_finalize(st);
    if (rc < 0)
        return -1;
    CAT_WRITE_BEGIN(cat);
    if (privs == 0) {
        cat->acls[i] = cat->acls[--cat->nacls];
    } else if (i >= 0) {
        cat->acls[i].privs = privs;
        cat->acls[i].grantor = grantor;
    } else {
        struct CatAcl a = {rel_oid, grantee, privs, grantor};
        acl_add(cat, &a);
    }
    CAT_WRITE_END(cat);
    return 0;
}

int cat_acl_foreach_grantee(Catalog *cat, uint32_t grantee,
                            void (*fn)(uint32_t rel_oid, unsigned privs, void *arg), void *arg)
{
    int n = 0;
    for (int i = 0; i < cat->nacls; i++) {
        if (cat->acls[i].grantee == grantee) {
            if (fn != NULL)
                fn(cat->acls[i].rel_oid, cat->acls[i].privs, arg);
            n++;
        }
    }
    return n;
}

void cat_acl_forget(Catalog *cat, uint32_t rel_oid)
{
    CAT_WRITE_BEGIN(cat);
    for (int i = 0; i < cat->nacls;) {
        if (cat->acls[i].rel_oid == rel_oid)
            cat->acls[i] = cat->acls[--cat->nacls];
        else
            i++;
    }
    CAT_WRITE_END(cat);
}

void cat_read_lock(Catalog *cat)
{
    pthread_rwlock_rdlock(&cat->lock);
}

void cat_read_unlock(Catalog *cat)
{
    pthread_rwlock_unlock(&cat->lock);
}
