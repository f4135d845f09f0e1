/*
 * test_catalog.c -- unit tests of the SQLite catalog (src/catalog/):
 * relations survive a reopen with their columns and key, a duplicate name is
 * refused and leaves nothing behind, a drop is durable; the offset log, the
 * commit log, purging and query status round-trip.
 */
#include "unit_data.h"

#include <stdio.h>


static void count_cb(const CatRelation *rel, void *arg)
{
    (void)rel;
    (*(int *)arg)++;
}

static int count_rels(Catalog *cat)
{
    int n = 0;
    cat_foreach(cat, count_cb, &n);
    return n;
}

int main(void)
{
    UnitData d;
    unit_data_open(&d, "catalog", false);
    const char *path = d.catalog;
    Catalog *cat = d.cat;
    SlError err = {0};
    CHECK(cat_schema_version(cat) >= 3);

    CatColumn cols[2] = {{"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, true}, {"name", {TYPE_VARCHAR, 20, TYPE_UNKNOWN}, false}};
    int pk[1] = {0};
    CatRelation def = {0};
    def.name = "users";
    def.kind = REL_TABLE;
    def.ncols = 2;
    def.cols = cols;
    def.npk = 1;
    def.pk = pk;
    def.sql = "CREATE TABLE users (...)";
    const CatRelation *rel;
    CHECK(cat_create_relation(cat, &def, &rel, &err) == 0);
    CHECK(rel->oid >= 16384 && strcmp(rel->name, "users") == 0);
    uint32_t oid = rel->oid;
    CHECK(cat_create_relation(cat, &def, &rel, &err) < 0 &&
          strcmp(err.sqlstate, "42P07") == 0);
    sl_error_clear(&err);
    CHECK(count_rels(cat) == 1);

    def.name = "q1";
    def.kind = REL_QUERY;
    def.npk = 0;
    CHECK(cat_create_relation(cat, &def, &rel, &err) == 0);
    uint32_t qoid = rel->oid;
    CHECK(qoid == oid + 1);

    /* Offset and commit logs. */
    CHECK(cat_commit_last(cat, qoid, &err) == -1);
    for (int64_t b = 0; b < 5; b++) {
        CqOffsets o = {b, "[{\"oid\":1,\"part\":0,\"start\":0,\"end\":10}]", b > 0, b * 1000,
                       123};
        CHECK(cat_offsets_append(cat, qoid, &o, &err) == 0);
        if (b < 4)
            CHECK(cat_commit_append(cat, qoid, b, &err) == 0);
    }
    /* The same batch committed twice is one entry. */
    CHECK(cat_commit_append(cat, qoid, 3, &err) == 0);
    Arena a;
    arena_init(&a, 1024);
    CqOffsets last;
    CHECK(cat_offsets_last(cat, qoid, &a, &last, &err) == 1);
    CHECK(last.batch_id == 4 && last.has_watermark && last.watermark_us == 4000);
    CHECK(cat_commit_last(cat, qoid, &err) == 3);
    CHECK(cat_cq_purge(cat, qoid, 3, &err) == 0);
    CHECK(cat_cq_status_set(cat, qoid, "failed", "boom", &err) == 0);
    CHECK(cat_cq_status_set(cat, qoid, "running", NULL, &err) == 0);
    const char *status, *error;
    CHECK(cat_cq_status_get(cat, qoid, &a, &status, &error, &err) == 1);
    CHECK(strcmp(status, "running") == 0 && error && strcmp(error, "boom") == 0);
    cat_close(cat);

    /* Everything is there after a reopen. */
    CHECK(cat_open(path, &cat, &err) == 0);
    rel = cat_lookup(cat, "users");
    CHECK(rel != NULL && rel->oid == oid && rel->ncols == 2 && rel->npk == 1 &&
          rel->pk[0] == 0 && rel->cols[1].type.id == TYPE_VARCHAR &&
          rel->cols[1].type.typmod == 20 && rel->cols[0].not_null);
    CHECK(cat_offsets_last(cat, qoid, &a, &last, &err) == 1 && last.batch_id == 4);
    /* A relation in use outlives its drop. */
    cat_relation_ref(rel);
    CHECK(cat_drop_relation(cat, "users", &err) == 0);
    CHECK(cat_lookup(cat, "users") == NULL && strcmp(rel->name, "users") == 0);
    cat_relation_unref(rel);
    CHECK(cat_drop_relation(cat, "users", &err) < 0 && strcmp(err.sqlstate, "42P01") == 0);
    sl_error_clear(&err);
    /* Dropping the query drops its logs. */
    CHECK(cat_drop_relation(cat, "q1", &err) == 0);
    CHECK(cat_offsets_last(cat, qoid, &a, &last, &err) == 0);
    cat_close(cat);
    CHECK(cat_open(path, &cat, &err) == 0);
    CHECK(count_rels(cat) == 0);
    d.cat = cat;    /* the one opened last */

    if (sl_error_set(&err))
        fprintf(stderr, "error: %s\n", err.message);
    sl_error_clear(&err);
    arena_destroy(&a);
    unit_data_close(&d);
    return unit_done("test_catalog");
}
