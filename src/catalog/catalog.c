/*
 * catalog.c -- the SQLite catalog file: opening, pragmas, migrations, and
 * the relations (tables, streams, sinks, continuous queries).
 *
 *   cat_open, cat_close, cat_schema_version, cat_backup
 *   cat_lookup, cat_create_relation(s), cat_recreate_relation, cat_replace_relation,
 *   cat_rename_relation,
 *   cat_drop_relation(s),
 *   cat_foreach
 *   cat_relation_ref, cat_relation_unref
 *
 * Roles and privileges are in roles.c.
 * Every relation is loaded into memory at open; a create or drop writes the
 * file first, in one transaction, and changes memory only once it commits,
 * so a failed DDL statement leaves nothing behind.  cat_open reads every
 * page first (check_pages): a damaged or truncated file is refused with
 * XX001, never loaded as a catalog that lacks some relations.
 *
 * The schema is versioned with PRAGMA user_version.  Each migration is one
 * SQL script applied in its own transaction together with the version bump,
 * so a crash leaves the file at the old version or the new one, never in
 * between.  Migrations are append-only: a released one is never edited.
 */
#include "sluice/catalog.h"
#include "sluice/log.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "catalog_int.h"

/* The first oid handed out, as PostgreSQL's FirstNormalObjectId. */
#define CAT_FIRST_OID 16384

static const char *const migrations[] = {
    /* 1: the metadata table every later migration can rely on. */
    "CREATE TABLE sluice_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO sluice_meta VALUES ('created_by', 'sluiced');",
    /* 2: relations and their columns. */
    "CREATE TABLE relations ("
    "  oid INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  kind TEXT NOT NULL CHECK (kind IN ('table', 'stream', 'sink', 'query')),"
    "  sql TEXT NOT NULL,"
    "  options TEXT NOT NULL DEFAULT '{}',"
    "  created_at INTEGER NOT NULL);"
    "CREATE TABLE columns ("
    "  rel_oid INTEGER NOT NULL REFERENCES relations(oid) ON DELETE CASCADE,"
    "  attnum INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  type TEXT NOT NULL,"
    "  typmod INTEGER NOT NULL,"
    "  not_null INTEGER NOT NULL,"
    "  pk_pos INTEGER,"
    "  PRIMARY KEY (rel_oid, attnum));",
    /* 3: the offset log, the commit log and the status of continuous
     * queries (docs/engine.md). */
    "CREATE TABLE cq_offsets ("
    "  query_oid INTEGER NOT NULL REFERENCES relations(oid) ON DELETE CASCADE,"
    "  batch_id INTEGER NOT NULL,"
    "  sources TEXT NOT NULL,"
    "  watermark_us INTEGER,"
    "  batch_ts_us INTEGER NOT NULL,"
    "  PRIMARY KEY (query_oid, batch_id)) WITHOUT ROWID;"
    "CREATE TABLE cq_commits ("
    "  query_oid INTEGER NOT NULL REFERENCES relations(oid) ON DELETE CASCADE,"
    "  batch_id INTEGER NOT NULL,"
    "  committed_at_us INTEGER NOT NULL,"
    "  PRIMARY KEY (query_oid, batch_id)) WITHOUT ROWID;"
    "CREATE TABLE cq_status ("
    "  query_oid INTEGER PRIMARY KEY REFERENCES relations(oid) ON DELETE CASCADE,"
    "  status TEXT NOT NULL,"
    "  last_error TEXT,"
    "  updated_at_us INTEGER NOT NULL);",
    /* 4: roles (pg_authid), the owner of each relation and the privileges
     * granted on it (docs/operations.md, docs/sql-reference.md).  The
     * bootstrap superuser has PostgreSQL's oid 10.  A password is kept
     * only as a SCRAM verifier and an md5 hash, never in clear. */
    "CREATE TABLE roles ("
    "  oid INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  superuser INTEGER NOT NULL DEFAULT 0,"
    "  login INTEGER NOT NULL DEFAULT 0,"
    "  createrole INTEGER NOT NULL DEFAULT 0,"
    "  createdb INTEGER NOT NULL DEFAULT 0,"
    "  inherit INTEGER NOT NULL DEFAULT 1,"
    "  password TEXT,"
    "  password_md5 TEXT,"
    "  valid_until INTEGER,"
    "  created_at INTEGER NOT NULL);"
    "INSERT INTO roles (oid, name, superuser, login, createrole, createdb, created_at)"
    "  VALUES (10, 'sluice', 1, 1, 1, 1,"
    "          CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER));"
    "ALTER TABLE relations ADD COLUMN owner INTEGER NOT NULL DEFAULT 10;"
    "CREATE TABLE privileges ("
    "  rel_oid INTEGER NOT NULL REFERENCES relations(oid) ON DELETE CASCADE,"
    "  grantee INTEGER NOT NULL,"
    "  privs INTEGER NOT NULL,"
    "  grantor INTEGER NOT NULL,"
    "  PRIMARY KEY (rel_oid, grantee)) WITHOUT ROWID;",
    /* 5: views (kind 'view').  SQLite cannot change a CHECK constraint, so
     * relations is made again with the new one and its rows copied, as
     * SQLite's "12-step" ALTER TABLE procedure does: migrate() turns
     * foreign keys off around it (dropping the old table must not cascade
     * to the rows that reference it) and checks them afterwards. */
    "CREATE TABLE relations_new ("
    "  oid INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  kind TEXT NOT NULL CHECK (kind IN ('table', 'stream', 'sink', 'query', 'view')),"
    "  sql TEXT NOT NULL,"
    "  options TEXT NOT NULL DEFAULT '{}',"
    "  created_at INTEGER NOT NULL,"
    "  owner INTEGER NOT NULL DEFAULT 10);"
    "INSERT INTO relations_new (oid, name, kind, sql, options, created_at, owner)"
    "  SELECT oid, name, kind, sql, options, created_at, owner FROM relations;"
    "DROP TABLE relations;"
    "ALTER TABLE relations_new RENAME TO relations;",
};

/* By RelKind; REL_SYSTEM relations are never in the file. */
static const char *const kind_names[] = {"table", "stream", "sink", "query", "view"};

int cat_exec(Catalog *cat, const char *sql, SlError *err)
{
    char *msg = NULL;
    if (sqlite3_exec(cat->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sl_error(err, ERRCODE_IO_ERROR, "catalog: %s", msg ? msg : "unknown error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int cat_schema_version(Catalog *cat)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(cat->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

/* Every foreign key of the file holds (PRAGMA foreign_key_check finds no
 * row), else XX001: a migration run with foreign keys off left a row that
 * references nothing. */
static int foreign_keys_hold(Catalog *cat, SlError *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(cat->db, "PRAGMA foreign_key_check", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW)
        ret = sl_error(err, ERRCODE_DATA_CORRUPTED,
                       "catalog: a row of %s references nothing after a migration",
                       (const char *)sqlite3_column_text(st, 0));
    else if (rc != SQLITE_DONE)
        ret = sl_error(err, ERRCODE_IO_ERROR, "catalog: %s", sqlite3_errmsg(cat->db));
    sqlite3_finalize(st);
    return ret;
}

static int migrate(Catalog *cat, SlError *err)
{
    int have = cat_schema_version(cat);
    int want = (int)SL_ARRAY_LEN(migrations);
    if (have < 0)
        return sl_error(err, ERRCODE_IO_ERROR, "catalog: cannot read schema version");
    if (have > want)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "catalog schema version %d is newer than this sluiced (%d)",
                        have, want);
    /* Foreign keys stay off while migrations run (one rebuilds relations,
     * whose old table's DROP must not cascade) and are checked after. */
    if (have < want && cat_exec(cat, "PRAGMA foreign_keys = OFF;", err) < 0)
        return -1;
    for (int v = have; v < want; v++) {
        char bump[64];
        snprintf(bump, sizeof(bump), "PRAGMA user_version = %d;", v + 1);
        if (cat_exec(cat, "BEGIN IMMEDIATE;", err) < 0)
            return -1;
        if (cat_exec(cat, migrations[v], err) < 0 || foreign_keys_hold(cat, err) < 0 ||
            cat_exec(cat, bump, err) < 0) {
            SlError ignore = {0};
            cat_exec(cat, "ROLLBACK;", &ignore);
            sl_error_clear(&ignore);
            return -1;
        }
        if (cat_exec(cat, "COMMIT;", err) < 0)
            return -1;
        sl_log(LOG_INFO, "catalog migrated", "version=%d", v + 1);
    }
    return cat_exec(cat, "PRAGMA foreign_keys = ON;", err);
}

static int load_relations(Catalog *cat, SlError *err);
void cat_relation_unref(const CatRelation *rel);

/* Reads every page of the catalog (PRAGMA quick_check: the b-trees, not
 * the indexes' agreement with their tables): a truncated or damaged file
 * is XX001 data_corrupted at open, not a catalog that lacks some rows.
 * The catalog is small (logs are purged), so this costs milliseconds. */
static int check_pages(Catalog *cat, const char *path, SlError *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(cat->db, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    const char *r = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int ret = 0;
    if (r == NULL || strcmp(r, "ok") != 0) {
        sl_error(err, ERRCODE_DATA_CORRUPTED, "catalog \"%s\" is damaged: %s", path,
                 r != NULL ? r : sqlite3_errmsg(cat->db));
        sl_error_hint(err, "restore the data directory from a backup");
        ret = -1;
    }
    sqlite3_finalize(st);
    return ret;
}

int cat_open(const char *path, Catalog **out, SlError *err)
{
    Catalog *cat = sl_calloc(1, sizeof(Catalog));
    pthread_rwlock_init(&cat->lock, NULL);
    int rc = sqlite3_open_v2(path, &cat->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                 SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sl_error(err, ERRCODE_IO_ERROR, "cannot open catalog \"%s\": %s", path,
                 cat->db ? sqlite3_errmsg(cat->db) : sqlite3_errstr(rc));
        cat_close(cat);
        return -1;
    }
    sqlite3_busy_timeout(cat->db, 5000);
    /* secure_delete: a row changed or deleted (a dropped password hash)
     * is overwritten in the file, not left in its free space. */
    if (cat_exec(cat, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
                      "PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;", err) < 0 ||
        check_pages(cat, path, err) < 0 || migrate(cat, err) < 0 || load_relations(cat, err) < 0 ||
        cat_roles_load(cat, err) < 0) {
        cat_close(cat);
        return -1;
    }
    *out = cat;
    return 0;
}

int cat_backup(Catalog *cat, const char *path, SlError *err)
{
    sqlite3 *dst = NULL;
    int rc = sqlite3_open_v2(path, &dst,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(dst, "PRAGMA synchronous = FULL;", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        /* One step copies every page under one read transaction of the
         * source: the copy is the file as one commit left it. */
        sqlite3_backup *b = sqlite3_backup_init(dst, "main", cat->db, "main");
        if (b == NULL) {
            rc = sqlite3_errcode(dst);
        } else {
            rc = sqlite3_backup_step(b, -1);
            int frc = sqlite3_backup_finish(b);
            rc = rc == SQLITE_DONE ? frc : rc;
        }
    }
    if (rc != SQLITE_OK) {
        sl_error(err, ERRCODE_IO_ERROR, "cannot back up the catalog into \"%s\": %s", path,
                 dst != NULL ? sqlite3_errmsg(dst) : sqlite3_errstr(rc));
        sqlite3_close(dst);
        unlink(path);
        return -1;
    }
    if (sqlite3_close(dst) != SQLITE_OK) {
        sl_error(err, ERRCODE_IO_ERROR, "cannot close the catalog's backup \"%s\"", path);
        unlink(path);
        return -1;
    }
    return 0;
}

void cat_close(Catalog *cat)
{
    if (cat == NULL)
        return;
    for (int i = 0; i < cat->nrels; i++)
        cat_relation_unref(cat->rels[i]);
    sl_free(cat->rels);
    cat_roles_free(cat);
    sqlite3_close(cat->db);
    pthread_rwlock_destroy(&cat->lock);
    sl_free(cat);
}

/* ---------------------------------------------------------------------- */
/* Relations                                                               */

int cat_db_error(Catalog *cat, SlError *err)
{
    return cat_db_error_as(sqlite3_errcode(cat->db), sqlite3_system_errno(cat->db),
                           sqlite3_errmsg(cat->db), err);
}

int cat_db_error_as(int code, int sys, const char *msg, SlError *err)
{
    code &= 0xff;
    /* An I/O error for want of space (growing the WAL's shared-memory
     * file, say) is a full disk too: a continuous query waits for space
     * instead of failing (docs/operations.md, "Disk full"). */
    if (code == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT))
        code = SQLITE_FULL;
    switch (code) {
    case SQLITE_FULL:
        sl_error(err, ERRCODE_DISK_FULL, "catalog: %s", msg);
        sl_error_hint(err, "Free space on the filesystem of the data directory.");
        return -1;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return sl_error(err, ERRCODE_DATA_CORRUPTED, "catalog: %s", msg);
    default:
        return sl_error(err, ERRCODE_IO_ERROR, "catalog: %s", msg);
    }
}

/* A column's type from its stored name: type_name(), with "[]" after an
 * array's element type ("integer[]"). */
static int type_parse(const char *name, SlType *t)
{
    size_t len = strlen(name);
    bool array = len > 2 && strcmp(name + len - 2, "[]") == 0;
    for (int id = 0; id < TYPE__NSCALAR; id++) {
        const char *tn = type_name((SlTypeId)id);
        if (array ? strlen(tn) == len - 2 && strncmp(tn, name, len - 2) == 0
                  : strcmp(tn, name) == 0) {
            t->elem = array ? (SlTypeId)id : TYPE_UNKNOWN;
            t->id = array ? TYPE_ARRAY : (SlTypeId)id;
            return 0;
        }
    }
    return -1;
}

static void rel_add(Catalog *cat, CatRelation *rel)
{
    CAT_WRITE_BEGIN(cat);
    if (cat->nrels == cat->caprels) {
        cat->caprels = cat->caprels ? cat->caprels * 2 : 16;
        cat->rels = sl_realloc(cat->rels, sizeof(CatRelation *) * (size_t)cat->caprels);
    }
    cat->rels[cat->nrels++] = rel;
    if (rel->oid >= cat->next_oid)
        cat->next_oid = rel->oid + 1;
    CAT_WRITE_END(cat);
}

/* A new entry, deep-copied from def into an arena of its own. */
static CatRelation *rel_copy(const CatRelation *def)
{
    CatRelation *rel = sl_calloc(1, sizeof(CatRelation));
    arena_init(&rel->arena, 2048);
    Arena *a = &rel->arena;
    rel->refs = 1;
    rel->oid = def->oid;
    rel->name = arena_strdup(a, def->name);
    rel->kind = def->kind;
    rel->ncols = def->ncols;
    rel->cols = ARENA_ARRAY(a, CatColumn, def->ncols > 0 ? def->ncols : 1);
    for (int i = 0; i < def->ncols; i++) {
        rel->cols[i] = def->cols[i];
        rel->cols[i].name = arena_strdup(a, def->cols[i].name);
    }
    rel->npk = def->npk;
    rel->pk = ARENA_ARRAY(a, int, def->npk > 0 ? def->npk : 1);
    for (int i = 0; i < def->npk; i++)
        rel->pk[i] = def->pk[i];
    rel->sql = arena_strdup(a, def->sql ? def->sql : "");
    rel->options = arena_strdup(a, def->options ? def->options : "{}");
    rel->created_at = def->created_at;
    rel->owner = def->owner ? def->owner : CAT_BOOTSTRAP_ROLE_OID;
    return rel;
}

static int load_relations(Catalog *cat, SlError *err)
{
    cat->next_oid = CAT_FIRST_OID;
    sqlite3_stmt *rs = NULL, *cs = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(cat->db,
            "SELECT oid, name, kind, sql, options, created_at, owner FROM relations"
            " ORDER BY oid",
            -1, &rs, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(cat->db,
            "SELECT name, type, typmod, not_null, pk_pos FROM columns"
            " WHERE rel_oid = ? ORDER BY attnum", -1, &cs, NULL) != SQLITE_OK) {
        cat_db_error(cat, err);
        goto out;
    }
    while (sqlite3_step(rs) == SQLITE_ROW) {
        CatRelation def = {0};
        def.oid = (uint32_t)sqlite3_column_int64(rs, 0);
        def.name = (const char *)sqlite3_column_text(rs, 1);
        const char *kind = (const char *)sqlite3_column_text(rs, 2);
        for (int k = 0; k < (int)SL_ARRAY_LEN(kind_names); k++)
            if (strcmp(kind, kind_names[k]) == 0)
                def.kind = (RelKind)k;
        def.sql = (const char *)sqlite3_column_text(rs, 3);
        def.options = (const char *)sqlite3_column_text(rs, 4);
        def.created_at = sqlite3_column_int64(rs, 5);
        def.owner = (uint32_t)sqlite3_column_int64(rs, 6);
        CatRelation *rel = rel_copy(&def);
        /* Columns go straight into the entry's arena. */
        sqlite3_bind_int64(cs, 1, def.oid);
        int n = 0, cap = 8, pkpos[64];
        rel->cols = ARENA_ARRAY(&rel->arena, CatColumn, cap);
        while (sqlite3_step(cs) == SQLITE_ROW) {
            if (n == cap) {
                CatColumn *more = ARENA_ARRAY(&rel->arena, CatColumn, cap * 2);
                memcpy(more, rel->cols, sizeof(CatColumn) * (size_t)n);
                rel->cols = more;
                cap *= 2;
            }
            CatColumn *c = &rel->cols[n];
            c->name = arena_strdup(&rel->arena, (const char *)sqlite3_column_text(cs, 0));
            c->type.typmod = sqlite3_column_int(cs, 2);
            if (type_parse((const char *)sqlite3_column_text(cs, 1), &c->type) < 0) {
                sl_error(err, ERRCODE_DATA_CORRUPTED,
                         "catalog: relation \"%s\" column \"%s\" has unknown type \"%s\"",
                         rel->name, c->name, sqlite3_column_text(cs, 1));
                sqlite3_reset(cs);
                cat_relation_unref(rel);
                goto out;
            }
            c->not_null = sqlite3_column_int(cs, 3) != 0;
            int pos = sqlite3_column_type(cs, 4) == SQLITE_NULL ? 0 : sqlite3_column_int(cs, 4);
            if (pos > 0 && pos <= (int)SL_ARRAY_LEN(pkpos)) {
                pkpos[pos - 1] = n;
                if (pos > rel->npk)
                    rel->npk = pos;
            }
            n++;
        }
        sqlite3_reset(cs);
        rel->ncols = n;
        rel->pk = ARENA_ARRAY(&rel->arena, int, rel->npk > 0 ? rel->npk : 1);
        for (int i = 0; i < rel->npk; i++)
            rel->pk[i] = pkpos[i];
        rel_add(cat, rel);
    }
    rc = 0;
out:
    sqlite3_finalize(rs);
    sqlite3_finalize(cs);
    return rc;
}

const CatRelation *cat_lookup(Catalog *cat, const char *name)
{
    for (int i = 0; i < cat->nrels; i++)
        if (strcmp(cat->rels[i]->name, name) == 0)
            return cat->rels[i];
    return NULL;
}

int64_t cat_now_usec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Inserts rel's columns inside the open transaction. */
static int insert_columns(Catalog *cat, const CatRelation *rel)
{
    sqlite3_stmt *col = NULL;
    if (sqlite3_prepare_v2(cat->db,
            "INSERT INTO columns (rel_oid, attnum, name, type, typmod, not_null, pk_pos)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &col, NULL) != SQLITE_OK)
        return -1;
    for (int i = 0; i < rel->ncols; i++) {
        int pkpos = 0;
        for (int k = 0; k < rel->npk; k++)
            if (rel->pk[k] == i)
                pkpos = k + 1;
        sqlite3_bind_int64(col, 1, rel->oid);
        sqlite3_bind_int(col, 2, i + 1);
        sqlite3_bind_text(col, 3, rel->cols[i].name, -1, SQLITE_STATIC);
        SlType ct = rel->cols[i].type;
        char arrname[64];
        snprintf(arrname, sizeof(arrname), "%s[]", type_name(ct.elem));
        sqlite3_bind_text(col, 4, ct.id == TYPE_ARRAY ? arrname : type_name(ct.id), -1,
                          SQLITE_TRANSIENT);
        sqlite3_bind_int(col, 5, rel->cols[i].type.typmod);
        sqlite3_bind_int(col, 6, rel->cols[i].not_null);
        if (pkpos)
            sqlite3_bind_int(col, 7, pkpos);
        else
            sqlite3_bind_null(col, 7);
        if (sqlite3_step(col) != SQLITE_DONE) {
            sqlite3_finalize(col);
            return -1;
        }
        sqlite3_reset(col);
    }
    sqlite3_finalize(col);
    return 0;
}

/* Inserts rel's rows (relation and columns) inside the open transaction. */
static int insert_relation(Catalog *cat, const CatRelation *rel)
{
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(cat->db,
            "INSERT INTO relations (oid, name, kind, sql, options, created_at, owner)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &ins, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(ins, 1, rel->oid);
    sqlite3_bind_text(ins, 2, rel->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 3, kind_names[rel->kind], -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 4, rel->sql, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 5, rel->options, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 6, rel->created_at);
    sqlite3_bind_int64(ins, 7, rel->owner);
    int rc = sqlite3_step(ins) == SQLITE_DONE ? insert_columns(cat, rel) : -1;
    sqlite3_finalize(ins);
    return rc;
}

static void rollback(Catalog *cat)
{
    SlError ignore = {0};
    cat_exec(cat, "ROLLBACK;", &ignore);
    sl_error_clear(&ignore);
}

int cat_create_relations(Catalog *cat, const CatRelation *const *defs, int n,
                         const CatRelation **out, SlError *err)
{
    for (int i = 0; i < n; i++) {
        if (cat_lookup(cat, defs[i]->name) != NULL)
            return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                            defs[i]->name);
        for (int k = 0; k < i; k++)
            if (strcmp(defs[k]->name, defs[i]->name) == 0)
                return sl_error(err, ERRCODE_DUPLICATE_TABLE,
                                "relation \"%s\" already exists", defs[i]->name);
        if (defs[i]->npk > 64)
            return sl_error(err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            "a primary key may have at most 64 columns");
    }
    CatRelation **rels = sl_calloc((size_t)(n > 0 ? n : 1), sizeof(CatRelation *));
    int64_t now = cat_now_usec();
    for (int i = 0; i < n; i++) {
        rels[i] = rel_copy(defs[i]);
        rels[i]->oid = cat->next_oid + (uint32_t)i;
        rels[i]->created_at = now;
    }
    if (cat_exec(cat, "BEGIN IMMEDIATE;", err) < 0)
        goto fail_free;
    for (int i = 0; i < n; i++)
        if (insert_relation(cat, rels[i]) < 0)
            goto fail;
    SLUICE_FAULT("catalog_create_before_commit");
    if (cat_exec(cat, "COMMIT;", err) < 0)
        goto fail_rolled;
    for (int i = 0; i < n; i++) {
        rel_add(cat, rels[i]);
        out[i] = rels[i];
    }
    sl_free(rels);
    return 0;

fail:
    cat_db_error(cat, err);
fail_rolled:
    rollback(cat);
fail_free:
    for (int i = 0; i < n; i++)
        cat_relation_unref(rels[i]);
    sl_free(rels);
    return -1;
}

int cat_create_relation(Catalog *cat, const CatRelation *def, const CatRelation **out,
                        SlError *err)
{
    return cat_create_relations(cat, &def, 1, out, err);
}

static int find_index(Catalog *cat, const char *name)
{
    for (int i = 0; i < cat->nrels; i++)
        if (strcmp(cat->rels[i]->name, name) == 0)
            return i;
    return -1;
}

/* Takes entry idx out of memory (it lives on while referenced). */
static void rel_remove(Catalog *cat, int idx)
{
    CatRelation *rel = cat->rels[idx];
    cat_acl_forget(cat, rel->oid);
    CAT_WRITE_BEGIN(cat);
    memmove(&cat->rels[idx], &cat->rels[idx + 1],
            sizeof(CatRelation *) * (size_t)(cat->nrels - idx - 1));
    cat->nrels--;
    CAT_WRITE_END(cat);
    cat_relation_unref(rel);
}

int cat_recreate_relation(Catalog *cat, const CatRelation *def, const CatRelation **out,
                          SlError *err)
{
    int old = find_index(cat, def->name);
    if (old < 0)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist",
                        def->name);
    if (def->npk > 64)
        return sl_error(err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                        "a primary key may have at most 64 columns");
    CatRelation *rel = rel_copy(def);
    rel->oid = cat->next_oid;
    rel->created_at = cat_now_usec();
    rel->owner = cat->rels[old]->owner;     /* OR REPLACE keeps the owner */
    sqlite3_stmt *del = NULL;
    if (cat_exec(cat, "BEGIN IMMEDIATE;", err) < 0) {
        cat_relation_unref(rel);
        return -1;
    }
    /* its columns and logs go with it: ON DELETE CASCADE */
    if (sqlite3_prepare_v2(cat->db, "DELETE FROM relations WHERE oid = ?", -1, &del,
                           NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(del, 1, cat->rels[old]->oid);
    if (sqlite3_step(del) != SQLITE_DONE || insert_relation(cat, rel) < 0)
        goto fail;
    SLUICE_FAULT("catalog_create_before_commit");
    if (cat_exec(cat, "COMMIT;", err) < 0)
        goto fail_rolled;
    sqlite3_finalize(del);
    rel_remove(cat, old);
    rel_add(cat, rel);
    *out = rel;
    return 0;

fail:
    cat_db_error(cat, err);
fail_rolled:
    sqlite3_finalize(del);
    rollback(cat);
    cat_relation_unref(rel);
    return -1;
}

/* Relation idx takes def's name, definition and columns (its oid, kind,
 * owner and creation time stay), in one SQLite transaction. */
static int replace_at(Catalog *cat, int idx, const CatRelation *def, const CatRelation **out,
                      SlError *err)
{
    CatRelation *old = cat->rels[idx];
    if (old->kind != def->kind)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is a %s", def->name,
                        kind_names[old->kind]);
    CatRelation *rel = rel_copy(def);
    rel->oid = old->oid;
    rel->created_at = old->created_at;
    rel->owner = old->owner;
    sqlite3_stmt *up = NULL, *del = NULL;
    if (cat_exec(cat, "BEGIN IMMEDIATE;", err) < 0) {
        cat_relation_unref(rel);
        return -1;
    }
    if (sqlite3_prepare_v2(cat->db,
                           "UPDATE relations SET sql = ?, options = ?, name = ? WHERE oid = ?",
                           -1, &up, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(cat->db, "DELETE FROM columns WHERE rel_oid = ?", -1, &del,
                           NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_text(up, 1, rel->sql, -1, SQLITE_STATIC);
    sqlite3_bind_text(up, 2, rel->options, -1, SQLITE_STATIC);
    sqlite3_bind_text(up, 3, rel->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(up, 4, rel->oid);
    sqlite3_bind_int64(del, 1, rel->oid);
    if (sqlite3_step(up) != SQLITE_DONE || sqlite3_step(del) != SQLITE_DONE ||
        insert_columns(cat, rel) < 0)
        goto fail;
    if (cat_exec(cat, "COMMIT;", err) < 0)
        goto fail_rolled;
    sqlite3_finalize(up);
    sqlite3_finalize(del);
    CAT_WRITE_BEGIN(cat);
    cat->rels[idx] = rel;
    CAT_WRITE_END(cat);
    cat_relation_unref(old);
    *out = rel;
    return 0;

fail:
    cat_db_error(cat, err);
fail_rolled:
    sqlite3_finalize(up);
    sqlite3_finalize(del);
    rollback(cat);
    cat_relation_unref(rel);
    return -1;
}

int cat_replace_relation(Catalog *cat, const CatRelation *def, const CatRelation **out,
                         SlError *err)
{
    int idx = find_index(cat, def->name);
    if (idx < 0)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist",
                        def->name);
    return replace_at(cat, idx, def, out, err);
}

int cat_rename_relation(Catalog *cat, const char *name, const char *new_name,
                        const CatRelation **out, SlError *err)
{
    int idx = find_index(cat, name);
    if (idx < 0)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist", name);
    if (find_index(cat, new_name) >= 0)
        return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                        new_name);
    CatRelation def = *cat->rels[idx];
    def.name = new_name;
    return replace_at(cat, idx, &def, out, err);
}

int cat_drop_relations(Catalog *cat, const char *const *names, int n, SlError *err)
{
    for (int i = 0; i < n; i++)
        if (find_index(cat, names[i]) < 0)
            return sl_error(err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist",
                            names[i]);
    if (cat_exec(cat, "BEGIN IMMEDIATE;", err) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *del = NULL;
        int rc = sqlite3_prepare_v2(cat->db, "DELETE FROM relations WHERE oid = ?", -1, &del,
                                    NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_int64(del, 1, cat->rels[find_index(cat, names[i])]->oid);
            rc = sqlite3_step(del) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        }
        sqlite3_finalize(del);
        if (rc != SQLITE_OK) {
            cat_db_error(cat, err);
            SlError ignore = {0};
            cat_exec(cat, "ROLLBACK;", &ignore);
            sl_error_clear(&ignore);
            return -1;
        }
    }
    if (cat_exec(cat, "COMMIT;", err) < 0) {
        rollback(cat);
        return -1;
    }
    for (int i = 0; i < n; i++)
        rel_remove(cat, find_index(cat, names[i]));
    return 0;
}

int cat_drop_relation(Catalog *cat, const char *name, SlError *err)
{
    return cat_drop_relations(cat, &name, 1, err);
}

void cat_relation_ref(const CatRelation *rel)
{
    atomic_fetch_add_explicit(&((CatRelation *)rel)->refs, 1, memory_order_relaxed);
}

void cat_relation_unref(const CatRelation *rel)
{
    CatRelation *r = (CatRelation *)rel;
    if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        arena_destroy(&r->arena);
        sl_free(r);
    }
}

void cat_foreach(Catalog *cat, void (*fn)(const CatRelation *rel, void *arg), void *arg)
{
    for (int i = 0; i < cat->nrels; i++)
        fn(cat->rels[i], arg);
}
