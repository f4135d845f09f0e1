/*
 * test_catalog_roles.c -- unit tests of roles and grants in the catalog
 * (src/catalog/roles.c): a fresh catalog has the bootstrap superuser (oid
 * 10); roles are created, changed, renamed (which clears the md5 hash) and
 * dropped durably; a taken name is 42710 and changes nothing; a relation
 * records its owner; grants round-trip, are removed with their relation,
 * and everything survives a reopen.
 */
#include "unit_data.h"

#include <stdio.h>

static void count_cb(const CatRole *r, void *arg)
{
    (void)r;
    (*(int *)arg)++;
}

static void grant_cb(uint32_t rel_oid, unsigned privs, void *arg)
{
    (void)rel_oid;
    *(unsigned *)arg |= privs;
}

int main(void)
{
    UnitData d;
    unit_data_open(&d, "roles", false);
    const char *path = d.catalog;
    Catalog *cat = d.cat;
    SlError err = {0};
    CHECK(cat_schema_version(cat) >= 4);

    const CatRole *boot = cat_role_by_oid(cat, CAT_BOOTSTRAP_ROLE_OID);
    CHECK(boot != NULL && strcmp(boot->name, CAT_BOOTSTRAP_ROLE_NAME) == 0 &&
          boot->superuser && boot->login && boot->password == NULL);
    CHECK(cat_role_lookup(cat, "sluice") == boot);

    CatRole def = {.name = "alice", .login = true, .inherit = true,
                   .password = "SCRAM-SHA-256$4096:c2FsdA==$a2V5:a2V5",
                   .password_md5 = "md5" "0123456789abcdef0123456789abcdef"};
    const CatRole *alice;
    CHECK(cat_role_create(cat, &def, &alice, &err) == 0);
    CHECK(alice->oid >= 16384 && !alice->superuser && alice->login);
    uint32_t alice_oid = alice->oid;
    CHECK(cat_role_create(cat, &def, NULL, &err) < 0 && strcmp(err.sqlstate, "42710") == 0);
    sl_error_clear(&err);
    int n = 0;
    CHECK(cat_role_foreach(cat, count_cb, &n) == 2 && n == 2);

    /* A relation records its owner; oids are shared with roles. */
    CatColumn cols[1] = {{"a", {TYPE_INT4, -1, TYPE_UNKNOWN}, false}};
    CatRelation rdef = {0};
    rdef.name = "t";
    rdef.kind = REL_TABLE;
    rdef.ncols = 1;
    rdef.cols = cols;
    rdef.owner = alice_oid;
    const CatRelation *rel;
    CHECK(cat_create_relation(cat, &rdef, &rel, &err) == 0);
    CHECK(rel->owner == alice_oid && rel->oid != alice_oid);
    uint32_t t_oid = rel->oid;
    rdef.name = "u";
    rdef.owner = 0;
    CHECK(cat_create_relation(cat, &rdef, &rel, &err) == 0);
    CHECK(rel->owner == CAT_BOOTSTRAP_ROLE_OID);
    uint32_t u_oid = rel->oid;

    /* Grants */
    CHECK(cat_acl_get(cat, t_oid, alice_oid) == 0);
    CHECK(cat_acl_set(cat, u_oid, alice_oid, CAT_ACL_SELECT | CAT_ACL_INSERT, 10, &err) == 0);
    CHECK(cat_acl_set(cat, u_oid, CAT_ROLE_PUBLIC, CAT_ACL_SELECT, 10, &err) == 0);
    CHECK(cat_acl_set(cat, t_oid, alice_oid, CAT_ACL_DELETE, 10, &err) == 0);
    CHECK(cat_acl_set(cat, u_oid, alice_oid, CAT_ACL_SELECT, 10, &err) == 0);
    CHECK(cat_acl_get(cat, u_oid, alice_oid) == CAT_ACL_SELECT);
    unsigned all = 0;
    CHECK(cat_acl_foreach_grantee(cat, alice_oid, grant_cb, &all) == 2 &&
          all == (CAT_ACL_SELECT | CAT_ACL_DELETE));

    /* Update and rename */
    CatRole upd = *alice;
    upd.createrole = true;
    upd.has_valid_until = true;
    upd.valid_until = 123456789;
    CHECK(cat_role_update(cat, alice_oid, &upd, &err) == 0);
    CHECK(alice->createrole && alice->valid_until == 123456789);
    CHECK(cat_role_rename(cat, alice_oid, "sluice", &err) < 0 &&
          strcmp(err.sqlstate, "42710") == 0);
    sl_error_clear(&err);
    CHECK(cat_role_rename(cat, alice_oid, "alicia", &err) == 0);
    CHECK(cat_role_lookup(cat, "alice") == NULL);
    alice = cat_role_lookup(cat, "alicia");
    CHECK(alice != NULL && alice->password_md5 == NULL && alice->password != NULL);

    /* Everything survives a reopen. */
    cat_close(cat);
    CHECK(cat_open(path, &cat, &err) == 0);
    alice = cat_role_lookup(cat, "alicia");
    CHECK(alice != NULL && alice->oid == alice_oid && alice->createrole &&
          alice->has_valid_until && alice->valid_until == 123456789 &&
          alice->password_md5 == NULL &&
          strcmp(alice->password, "SCRAM-SHA-256$4096:c2FsdA==$a2V5:a2V5") == 0);
    CHECK(cat_lookup(cat, "t")->owner == alice_oid);
    CHECK(cat_acl_get(cat, u_oid, alice_oid) == CAT_ACL_SELECT);
    CHECK(cat_acl_get(cat, u_oid, CAT_ROLE_PUBLIC) == CAT_ACL_SELECT);
    CHECK(cat_acl_get(cat, t_oid, alice_oid) == CAT_ACL_DELETE);

    /* Dropping a relation drops its grants; revoking everything removes the
     * entry; then the role can go. */
    CHECK(cat_drop_relation(cat, "t", &err) == 0);
    CHECK(cat_acl_get(cat, t_oid, alice_oid) == 0);
    CHECK(cat_acl_set(cat, u_oid, alice_oid, 0, 10, &err) == 0);
    CHECK(cat_acl_foreach_grantee(cat, alice_oid, NULL, NULL) == 0);
    CHECK(cat_role_drop(cat, alice_oid, &err) == 0);
    CHECK(cat_role_by_oid(cat, alice_oid) == NULL);
    cat_close(cat);
    CHECK(cat_open(path, &cat, &err) == 0);
    CHECK(cat_role_lookup(cat, "alicia") == NULL);
    CHECK(cat_acl_foreach_grantee(cat, alice_oid, NULL, NULL) == 0);
    CHECK(cat_acl_get(cat, u_oid, CAT_ROLE_PUBLIC) == CAT_ACL_SELECT);
    d.cat = cat;    /* the one opened last */

    if (sl_error_set(&err))
        fprintf(stderr, "error: %s\n", err.message);
    sl_error_clear(&err);
    unit_data_close(&d);
    return unit_done("test_catalog_roles");
}
