/*
 * pgcatalog.c -- the part of PostgreSQL's catalog that clients read:
 * pg_catalog's tables and views, information_schema's schemata, tables,
 * views and columns, all over sluice's own catalog, and the rows of
 * pg_get_keywords() (the system relation "pg_get_keywords()", which FROM
 * reaches as the function's call; the other catalog functions are
 * pgfuncs.c's).
 *
 *   pgcat_register   add the relations (vrel.h) and the functions (the
 *                    executor's function table) at start
 *   pgcat_roles_foreach, pgcat_role_name, pgcat_database_name,
 *   pgcat_relation_by_oid, pgcat_table_of_index, pgcat_namespace_of,
 *   pgcat_namespace_name, pgcat_type_by_oid, pgcat_array_oid,
 *   pgcat_pk_columns            for pgfuncs.c (pgcatalog_int.h)
 *
 * What a relation is to PostgreSQL's clients (docs/architecture.md,
 * "System relations"):
 *
 *   table                      relkind 'r'   TABLE
 *   stream                     relkind 'r'   TABLE (append-only; sys.streams
 *                                            tells streams apart)
 *   continuous query result    relkind 'm'   MATERIALIZED VIEW
 *   view                       relkind 'v'   VIEW (read-only: not insertable)
 *   sink                       relkind 'f'   FOREIGN TABLE (no rows to read)
 *   pg_catalog relation        relkind 'r' (pg_roles, pg_user, pg_settings,
 *                                            pg_tables, pg_views, pg_matviews,
 *                                            pg_stat_* 'v')
 *   information_schema, sys    relkind 'v'   VIEW
 *   primary key                relkind 'i'   an index "<table>_pkey"
 *
 * User relations live in schema public (oid 2200) and belong to the
 * bootstrap superuser (oid 10).  Columns of PostgreSQL type oid, regproc
 * and xid are bigint here, name and "char" are text (vrel.c): values
 * compare and join the same way.
 */
#include "pgcatalog_int.h"
#include "sluice/settings.h"
#include "sql/keywords.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>


/* ----------------------------------------------------------------- roles */

typedef struct RoleWalk {
    void (*fn)(const PgRole *r, void *arg);
    void *arg;
} RoleWalk;

static void role_walk_cb(const CatRole *cr, void *arg)
{
    RoleWalk *w = arg;
    PgRole r = {cr->oid, cr->name, cr->superuser, cr->login};
    w->fn(&r, w->arg);
}

/* The roles of the catalog (roles.c: the bootstrap superuser "sluice" is
 * oid 10, as PostgreSQL's; a user of the configuration file gets its role
 * at its first login), for pg_roles, pg_user and pg_get_userbyid. */
void pgcat_roles_foreach(const Syscat *sc, void (*fn)(const PgRole *r, void *arg), void *arg)
{
    RoleWalk w = {fn, arg};
    if (sc != NULL && sc->cat != NULL)
        cat_role_foreach(sc->cat, role_walk_cb, &w);
}

typedef struct RoleFind {
    int64_t     oid;
    const char *name;
    PgRole      found;
    bool        ok;
} RoleFind;

static void role_find_cb(const PgRole *r, void *arg)
{
    RoleFind *f = arg;
    if (!f->ok && ((f->name && strcmp(f->name, r->name) == 0) || (!f->name && r->oid == f->oid))) {
        f->found = *r;
        f->ok = true;
    }
}

const char *pgcat_role_name(const Syscat *sc, int64_t oid)
{
    RoleFind f = {oid, NULL, {0}, false};
    pgcat_roles_foreach(sc, role_find_cb, &f);
    return f.ok ? f.found.name : NULL;
}

/* ------------------------------------------------------------ helpers */

const char *pgcat_database_name(const Syscat *sc)
{
    const RtSession *s = syscat_session_current(sc);
    return s && s->database ? s->database : "sluice";
}

static char relkind_of(const Syscat *sc, const CatRelation *rel)
{
    switch (rel->kind) {
    case REL_TABLE:  return 'r';
    case REL_STREAM: return 'r';
    case REL_QUERY:  return 'm';
    case REL_SINK:   return 'f';
    case REL_VIEW:   return 'v';
    case REL_SYSTEM:
        if (vrel_namespace(sc, rel) != VREL_NS_PG_CATALOG)
            return 'v';
        return strcmp(rel->name, "pg_roles") == 0 || strcmp(rel->name, "pg_user") == 0 ||
                       strcmp(rel->name, "pg_settings") == 0 ||
                       strcmp(rel->name, "pg_tables") == 0 || strcmp(rel->name, "pg_views") == 0 ||
                       strcmp(rel->name, "pg_matviews") == 0 ||
                       strncmp(rel->name, "pg_stat_", 8) == 0 ? 'v' : 'r';
    }
    return 'r';
}

uint32_t pgcat_namespace_of(const Syscat *sc, const CatRelation *rel)
{
    return rel->kind == REL_SYSTEM ? vrel_namespace(sc, rel) : VREL_NS_PUBLIC;
}

const char *pgcat_namespace_name(uint32_t oid)
{
    switch (oid) {
    case VREL_NS_PG_CATALOG:  return "pg_catalog";
    case VREL_NS_PUBLIC:      return "public";
    case VREL_NS_INFO_SCHEMA: return "information_schema";
    case VREL_NS_SYS:         return "sys";
    }
    return NULL;
}

/* PostgreSQL's atttypmod: varchar(n) is n + 4, numeric(p,s) (p<<16|s) + 4. */
static int32_t pg_typmod(SlType t)
{
    SlTypeId id = t.id == TYPE_ARRAY ? t.elem : t.id;   /* an array: its element's */
    if (t.typmod >= 0 && (id == TYPE_VARCHAR || id == TYPE_NUMERIC))
        return t.typmod + 4;
    return t.typmod;
}

SlTypeId pgcat_type_by_oid(int64_t oid)
{
    for (int i = 1; i < TYPE__NSCALAR; i++)
        if ((int64_t)type_oid((SlTypeId)i) == oid)
            return (SlTypeId)i;
    return TYPE_UNKNOWN;
}

/* The array type of each type, as PostgreSQL's pg_type.typarray. */
uint32_t pgcat_array_oid(SlTypeId id)
{
    return type_array_oid(id);
}

static bool is_collatable(SlTypeId id)
{
    return id == TYPE_TEXT || id == TYPE_VARCHAR;
}

/* Every relation, user ones (oid order) then system ones. */
static void all_relations(const Syscat *sc, void (*fn)(const CatRelation *rel, void *arg),
                          void *arg)
{
    if (sc != NULL && sc->cat != NULL)
        cat_foreach(sc->cat, fn, arg);
    vrel_foreach(sc, fn, arg);
}

typedef struct RelFind {
    int64_t            oid;
    const char        *name;
    const CatRelation *found;
} RelFind;

static void rel_find_cb(const CatRelation *rel, void *arg)
{
    RelFind *f = arg;
    if (f->found == NULL && ((f->name && strcmp(rel->name, f->name) == 0) ||
                             (!f->name && (int64_t)rel->oid == f->oid)))
        f->found = rel;
}

const CatRelation *pgcat_relation_by_oid(const Syscat *sc, int64_t oid)
{
    RelFind f = {oid, NULL, NULL};
    all_relations(sc, rel_find_cb, &f);
    return f.found;
}

/* A table whose primary key index has this oid, or NULL. */
const CatRelation *pgcat_table_of_index(const Syscat *sc, int64_t oid)
{
    if (oid < INDEX_OID(0) || oid >= CONSTRAINT_OID(0))
        return NULL;
    const CatRelation *rel = pgcat_relation_by_oid(sc, oid - INDEX_OID(0));
    return rel != NULL && rel->npk > 0 ? rel : NULL;
}

/* "(a, b)": the primary key columns of rel, in a. */
const char *pgcat_pk_columns(Arena *a, const CatRelation *rel)
{
    StrBuf b;
    strbuf_init(&b);
    strbuf_putc(&b, '(');
    for (int k = 0; k < rel->npk; k++)
        strbuf_printf(&b, "%s%s", k ? ", " : "", rel->cols[rel->pk[k]].name);
    strbuf_putc(&b, ')');
    const char *s = arena_strndup(a, b.data, b.len);
    strbuf_free(&b);
    return s;
}

/* ------------------------------------------------------------ producers */

static int produce_namespace(VrelRows *r)
{
    static const uint32_t oids[] = {VREL_NS_PG_CATALOG, VREL_NS_PUBLIC, VREL_NS_INFO_SCHEMA,
                                    VREL_NS_SYS};
    for (size_t i = 0; i < SL_ARRAY_LEN(oids); i++) {
        vrel_row(r);
        vrel_put_int(r, oids[i]);
        vrel_put_text(r, pgcat_namespace_name(oids[i]));
        vrel_put_int(r, BOOTSTRAP_ROLE_OID);
        vrel_put_null(r);
    }
    return 0;
}

static void class_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    char kind[2] = {relkind_of(vrel_rows_syscat(r), rel), 0};
    for (int pass = 0; pass < (rel->npk > 0 ? 2 : 1); pass++) {
        bool index = pass == 1;
        vrel_row(r);
        vrel_put_int(r, index ? INDEX_OID(rel->oid) : rel->oid);
        vrel_put_text(r, index ? arena_printf(vrel_rows_arena(r), "%s_pkey", rel->name)
                               : rel->name);
        vrel_put_int(r, pgcat_namespace_of(vrel_rows_syscat(r), rel));                     /* relnamespace */
        vrel_put_int(r, 0);                                     /* reltype */
        vrel_put_int(r, 0);                                     /* reloftype */
        vrel_put_int(r, rel->owner ? rel->owner : BOOTSTRAP_ROLE_OID);    /* relowner */
        vrel_put_int(r, index ? 403 : kind[0] == 'r' || kind[0] == 'm' ? 2 : 0); /* relam */
        vrel_put_int(r, 0);                                     /* relfilenode */
        vrel_put_int(r, 0);                                     /* reltablespace */
        vrel_put_int(r, 0);                                     /* relpages */
        vrel_put_float(r, -1);                                  /* reltuples */
        vrel_put_int(r, 0);                                     /* relallvisible */
        vrel_put_int(r, 0);                                     /* reltoastrelid */
        vrel_put_bool(r, !index && rel->npk > 0);               /* relhasindex */
        vrel_put_bool(r, false);                                /* relisshared */
        vrel_put_text(r, "p");                                  /* relpersistence */
        vrel_put_text(r, index ? "i" : kind);                   /* relkind */
        vrel_put_int(r, index ? rel->npk : rel->ncols);         /* relnatts */
        vrel_put_int(r, 0);                                     /* relchecks */
        vrel_put_bool(r, false);                                /* relhasrules */
        vrel_put_bool(r, false);                                /* relhastriggers */
        vrel_put_bool(r, false);                                /* relhassubclass */
        vrel_put_bool(r, false);                                /* relrowsecurity */
        vrel_put_bool(r, false);                                /* relforcerowsecurity */
        vrel_put_bool(r, true);                                 /* relispopulated */
        vrel_put_text(r, index ? "n" : "d");                    /* relreplident */
        vrel_put_bool(r, false);                                /* relispartition */
        vrel_put_int(r, 0);                                     /* relrewrite */
        vrel_put_int(r, 0);                                     /* relfrozenxid */
        vrel_put_int(r, 0);                                     /* relminmxid */
        vrel_put_null(r);                                       /* relacl */
        vrel_put_null(r);                                       /* reloptions */
        vrel_put_null(r);                                       /* relpartbound */
    }
}

static int produce_class(VrelRows *r)
{
    all_relations(vrel_rows_syscat(r), class_cb, r);
    return 0;
}

static void attribute_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    for (int c = 0; c < rel->ncols; c++) {
        SlType t = rel->cols[c].type;
        vrel_row(r);
        vrel_put_int(r, rel->oid);                              /* attrelid */
        vrel_put_text(r, rel->cols[c].name);                    /* attname */
        vrel_put_int(r, type_oid_of(t));                        /* atttypid */
        vrel_put_int(r, -1);                                    /* attstattarget */
        vrel_put_int(r, type_len(t.id));                        /* attlen */
        vrel_put_int(r, c + 1);                                 /* attnum */
        vrel_put_int(r, 0);                                     /* attndims */
        vrel_put_int(r, -1);                                    /* attcacheoff */
        vrel_put_int(r, pg_typmod(t));                          /* atttypmod */
        vrel_put_bool(r, type_len(t.id) > 0 && type_len(t.id) <= 8); /* attbyval */
        vrel_put_text(r, "i");                                  /* attalign */
        vrel_put_text(r, type_len(t.id) > 0 ? "p" : t.id == TYPE_NUMERIC ? "m" : "x"); /* attstorage */
        vrel_put_text(r, "");                                   /* attcompression */
        vrel_put_bool(r, rel->cols[c].not_null);                /* attnotnull */
        vrel_put_bool(r, false);                                /* atthasdef */
        vrel_put_bool(r, false);                                /* atthasmissing */
        vrel_put_text(r, "");                                   /* attidentity */
        vrel_put_text(r, "");                                   /* attgenerated */
        vrel_put_bool(r, false);                                /* attisdropped */
        vrel_put_bool(r, true);                                 /* attislocal */
        vrel_put_int(r, 0);                                     /* attinhcount */
        vrel_put_int(r, is_collatable(t.id) ? 100 : 0);         /* attcollation */
        vrel_put_null(r);                                       /* attacl */
        vrel_put_null(r);                                       /* attoptions */
        vrel_put_null(r);                                       /* attfdwoptions */
    }
}

static int produce_attribute(VrelRows *r)
{
    all_relations(vrel_rows_syscat(r), attribute_cb, r);
    return 0;
}

static void type_row(VrelRows *r, SlTypeId id, bool array)
{
    int16_t len = type_len(id);
    char cat[2] = {array ? 'A' : type_category(id), 0};
    vrel_row(r);
    vrel_put_int(r, array ? pgcat_array_oid(id) : type_oid(id));     /* oid */
    const char *name = type_name(id);
    /* pg_type.typname: the internal name (int4, not integer) */
    static const char *const typnames[TYPE__COUNT] = {
        [TYPE_BOOL] = "bool", [TYPE_INT2] = "int2", [TYPE_INT4] = "int4",
        [TYPE_INT8] = "int8", [TYPE_FLOAT4] = "float4", [TYPE_FLOAT8] = "float8",
        [TYPE_NUMERIC] = "numeric", [TYPE_TEXT] = "text", [TYPE_VARCHAR] = "varchar",
        [TYPE_BYTEA] = "bytea", [TYPE_DATE] = "date", [TYPE_TIMESTAMP] = "timestamp",
        [TYPE_TIMESTAMPTZ] = "timestamptz", [TYPE_INTERVAL] = "interval",
        [TYPE_JSONB] = "jsonb", [TYPE_UUID] = "uuid",
        [TYPE_BPCHAR] = "bpchar"};
    if (typnames[id] != NULL)
        name = typnames[id];
    vrel_put_text(r, array ? arena_printf(vrel_rows_arena(r), "_%s", name) : name);
    vrel_put_int(r, VREL_NS_PG_CATALOG);                        /* typnamespace */
    vrel_put_int(r, BOOTSTRAP_ROLE_OID);                        /* typowner */
    vrel_put_int(r, array ? -1 : len);                          /* typlen */
    vrel_put_bool(r, !array && len > 0 && len <= 8);            /* typbyval */
    vrel_put_text(r, "b");                                      /* typtype */
    vrel_put_text(r, cat);                                      /* typcategory */
    vrel_put_bool(r, !array && type_is_preferred(id));          /* typispreferred */
    vrel_put_bool(r, true);                                     /* typisdefined */
    vrel_put_text(r, ",");                                      /* typdelim */
    vrel_put_int(r, 0);                                         /* typrelid */
    vrel_put_int(r, 0);                                         /* typsubscript */
    vrel_put_int(r, array ? type_oid(id) : 0);                  /* typelem */
    vrel_put_int(r, array ? 0 : pgcat_array_oid(id));                 /* typarray */
    vrel_put_int(r, array ? PGCAT_ARRAY_IN_OID : PGCAT_TYPE_IN_OID(id)); /* typinput */
    for (int k = 0; k < 6; k++)                                 /* typoutput .. typanalyze */
        vrel_put_int(r, 0);
    vrel_put_text(r, len == 8 || len == 16 || array ? "d" : len == 2 ? "s" : len == 1 ? "c" : "i");
    vrel_put_text(r, len > 0 && !array ? "p" : id == TYPE_NUMERIC && !array ? "m" : "x");
    vrel_put_bool(r, false);                                    /* typnotnull */
    vrel_put_int(r, 0);                                         /* typbasetype */
    vrel_put_int(r, -1);                                        /* typtypmod */
    vrel_put_int(r, 0);                                         /* typndims */
    vrel_put_int(r, is_collatable(id) ? 100 : 0);               /* typcollation */
    vrel_put_null(r);                                           /* typdefaultbin */
    vrel_put_null(r);                                           /* typdefault */
    vrel_put_null(r);                                           /* typacl */
}

static int produce_type(VrelRows *r)
{
    for (int i = 1; i < TYPE__NSCALAR; i++)
        type_row(r, (SlTypeId)i, false);
    for (int i = 1; i < TYPE__NSCALAR; i++)
        if (pgcat_array_oid((SlTypeId)i) != 0)
            type_row(r, (SlTypeId)i, true);
    return 0;
}

static void database_row(VrelRows *r, int64_t oid, const char *name)
{
    vrel_row(r);
    vrel_put_int(r, oid);
    vrel_put_text(r, name);
    vrel_put_int(r, BOOTSTRAP_ROLE_OID);                        /* datdba */
    vrel_put_int(r, 6);                                         /* encoding: UTF8 */
    vrel_put_text(r, "c");                                      /* datlocprovider */
    vrel_put_bool(r, false);                                    /* datistemplate */
    vrel_put_bool(r, true);                                     /* datallowconn */
    vrel_put_int(r, -1);                                        /* datconnlimit */
    vrel_put_int(r, 0);                                         /* datfrozenxid */
    vrel_put_int(r, 0);                                         /* datminmxid */
    vrel_put_int(r, 1663);                                      /* dattablespace: pg_default */
    vrel_put_text(r, "C");                                      /* datcollate */
    vrel_put_text(r, "C");                                      /* datctype */
    vrel_put_null(r);                                           /* daticulocale */
    vrel_put_null(r);                                           /* datcollversion */
    vrel_put_null(r);                                           /* datacl */
}

/* One database, "sluice": every session sees the same relations whatever
 * database name it gave at startup, and that name is listed too. */
static int produce_database(VrelRows *r)
{
    database_row(r, PGCAT_DATABASE_OID, "sluice");
    const char *cur = pgcat_database_name(vrel_rows_syscat(r));
    if (strcmp(cur, "sluice") != 0)
        database_row(r, PGCAT_DATABASE_OID + 1, cur);
    return 0;
}

static void roles_cb(const PgRole *role, void *arg)
{
    VrelRows *r = arg;
    vrel_row(r);
    vrel_put_text(r, role->name);                               /* rolname */
    vrel_put_bool(r, role->superuser);                          /* rolsuper */
    vrel_put_bool(r, true);                                     /* rolinherit */
    vrel_put_bool(r, role->superuser);                          /* rolcreaterole */
    vrel_put_bool(r, role->superuser);                          /* rolcreatedb */
    vrel_put_bool(r, role->login);                              /* rolcanlogin */
    vrel_put_bool(r, false);                                    /* rolreplication */
    vrel_put_int(r, -1);                                        /* rolconnlimit */
    vrel_put_text(r, "********");                               /* rolpassword */
    vrel_put_null(r);                                           /* rolvaliduntil */
    vrel_put_bool(r, false);                                    /* rolbypassrls */
    vrel_put_null(r);                                           /* rolconfig */
    vrel_put_int(r, role->oid);                                 /* oid */
}

static int produce_roles(VrelRows *r)
{
    pgcat_roles_foreach(vrel_rows_syscat(r), roles_cb, r);
    return 0;
}

static void user_cb(const PgRole *role, void *arg)
{
    VrelRows *r = arg;
    if (!role->login)
        return;
    vrel_row(r);
    vrel_put_text(r, role->name);                               /* usename */
    vrel_put_int(r, role->oid);                                 /* usesysid */
    vrel_put_bool(r, role->superuser);                          /* usecreatedb */
    vrel_put_bool(r, role->superuser);                          /* usesuper */
    vrel_put_bool(r, false);                                    /* userepl */
    vrel_put_bool(r, false);                                    /* usebypassrls */
    vrel_put_text(r, "********");                               /* passwd */
    vrel_put_null(r);                                           /* valuntil */
    vrel_put_null(r);                                           /* useconfig */
}

static int produce_user(VrelRows *r)
{
    pgcat_roles_foreach(vrel_rows_syscat(r), user_cb, r);
    return 0;
}

/* Settings every PostgreSQL client expects, then the server's own. */
static const char *const pg_fixed_settings[][3] = {
    {"server_version", "15.0", "Preset Options"},
    {"server_version_num", "150000", "Preset Options"},
    {"server_encoding", "UTF8", "Preset Options"},
    {"client_encoding", "UTF8", "Client Connection Defaults / Locale and Formatting"},
    {"DateStyle", "ISO, MDY", "Client Connection Defaults / Locale and Formatting"},
    {"IntervalStyle", "postgres", "Client Connection Defaults / Locale and Formatting"},
    {"TimeZone", "UTC", "Client Connection Defaults / Locale and Formatting"},
    {"integer_datetimes", "on", "Preset Options"},
    {"standard_conforming_strings", "on", "Version and Platform Compatibility"},
    {"max_identifier_length", "63", "Preset Options"},
    {"search_path", "\"$user\", public", "Client Connection Defaults / Statement Behavior"},
    {"default_transaction_isolation", "read committed",
     "Client Connection Defaults / Statement Behavior"},
    {"lc_collate", "C", "Preset Options"},
    {"lc_ctype", "C", "Preset Options"},
};

/* A row of pg_settings; info NULL: a string fixed at start (context
 * internal, or the server's options: postmaster). */
static void pg_setting_row(VrelRows *r, const char *name, const char *value,
                           const char *category, const char *desc, const SettingInfo *info,
                           const char *context)
{
    vrel_row(r);
    vrel_put_text(r, name);
    vrel_put_text(r, info && info->setting ? info->setting : value);
    vrel_put_text(r, info ? info->unit : NULL);                 /* unit */
    vrel_put_text(r, category);
    vrel_put_text(r, desc);
    vrel_put_null(r);                                           /* extra_desc */
    vrel_put_text(r, info ? info->context : context);           /* context */
    vrel_put_text(r, info ? info->vartype : "string");          /* vartype */
    vrel_put_text(r, info && info->changed ? "session" : "default"); /* source */
    if (info != NULL && info->has_range) {
        vrel_put_int(r, info->min);                             /* min_val */
        vrel_put_int(r, info->max);                             /* max_val */
    } else {
        vrel_put_null(r);
        vrel_put_null(r);
    }
    vrel_put_text(r, info ? info->enumvals : NULL);             /* enumvals */
    vrel_put_text(r, value);                                    /* boot_val */
    vrel_put_text(r, value);                                    /* reset_val */
    vrel_put_null(r);                                           /* sourcefile */
    vrel_put_null(r);                                           /* sourceline */
    vrel_put_bool(r, false);                                    /* pending_restart */
}

static void server_setting_cb(const char *name, const char *value, const char *description,
                              void *arg)
{
    pg_setting_row(arg, name, value, "sluice", description, NULL, "postmaster");
}

/* The session's parameters (settings.h: what SHOW and current_setting
 * say, with the session's values), then the fixed ones it does not have,
 * then the server's own. */
static int produce_settings(VrelRows *r)
{
    const SlSettings *cur = settings_current();
    for (int i = 0; i < settings_count(); i++) {
        const char *name, *value, *desc;
        SettingInfo info;
        settings_nth(cur, i, &name, &value, &desc);
        settings_info(cur, i, vrel_rows_arena(r), &info);
        pg_setting_row(r, name, value, "Client Connection Defaults", desc, &info, NULL);
    }
    for (size_t i = 0; i < SL_ARRAY_LEN(pg_fixed_settings); i++) {
        SlError none = {0};
        if (settings_get(NULL, pg_fixed_settings[i][0], NULL, &none) == NULL)
            pg_setting_row(r, pg_fixed_settings[i][0], pg_fixed_settings[i][1],
                           pg_fixed_settings[i][2], "", NULL, "internal");
        sl_error_clear(&none);
    }
    sys_settings_foreach(vrel_rows_syscat(r), server_setting_cb, r);
    return 0;
}

static int produce_proc(VrelRows *r)
{
    for (size_t i = 0;; i++) {
        const FuncDesc *f = ex_func_at(i);
        if (f == NULL)
            break;
        if (f->is_op || strchr(f->name, ' ') != NULL)
            continue;
        StrBuf args;
        strbuf_init(&args);
        for (int k = 0; k < f->nargs; k++)
            strbuf_printf(&args, "%s%u", k ? " " : "",
                          f->args[k] < TYPE__COUNT ? type_oid(f->args[k]) : 2283);
        vrel_row(r);
        vrel_put_int(r, 20000 + (int64_t)i);                    /* oid */
        vrel_put_text(r, f->name);                              /* proname */
        vrel_put_int(r, VREL_NS_PG_CATALOG);                    /* pronamespace */
        vrel_put_int(r, BOOTSTRAP_ROLE_OID);                    /* proowner */
        vrel_put_int(r, 12);                                    /* prolang: internal */
        vrel_put_float(r, 1);                                   /* procost */
        vrel_put_float(r, 0);                                   /* prorows */
        vrel_put_int(r, 0);                                     /* provariadic */
        vrel_put_int(r, 0);                                     /* prosupport */
        vrel_put_text(r, "f");                                  /* prokind */
        vrel_put_bool(r, false);                                /* prosecdef */
        vrel_put_bool(r, false);                                /* proleakproof */
        vrel_put_bool(r, !(f->flags & FUNC_NONSTRICT));         /* proisstrict */
        vrel_put_bool(r, (f->flags & FUNC_SRF) != 0);           /* proretset */
        vrel_put_text(r, (char[]){pgcat_func_volatility(f), 0}); /* provolatile */
        vrel_put_text(r, "s");                                  /* proparallel */
        vrel_put_int(r, f->nargs);                              /* pronargs */
        vrel_put_int(r, 0);                                     /* pronargdefaults */
        vrel_put_int(r, f->ret < TYPE__COUNT ? type_oid(f->ret) : 2283); /* prorettype */
        vrel_put_text(r, arena_strndup(vrel_rows_arena(r), args.data ? args.data : "",
                                       args.len));              /* proargtypes */
        strbuf_free(&args);
        vrel_put_null(r);                                       /* proallargtypes */
        vrel_put_null(r);                                       /* proargmodes */
        vrel_put_null(r);                                       /* proargnames */
        vrel_put_null(r);                                       /* proargdefaults */
        vrel_put_null(r);                                       /* protrftypes */
        vrel_put_text(r, f->name);                              /* prosrc */
        vrel_put_null(r);                                       /* probin */
        vrel_put_null(r);                                       /* prosqlbody */
        vrel_put_null(r);                                       /* proconfig */
        vrel_put_null(r);                                       /* proacl */
    }
    return 0;
}

static void description_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    const char *c = rel->kind == REL_SYSTEM ? vrel_comment(vrel_rows_syscat(r), rel) : NULL;
    if (c == NULL)
        return;
    vrel_row(r);
    vrel_put_int(r, rel->oid);                                  /* objoid */
    vrel_put_int(r, 1259);                                      /* classoid: pg_class */
    vrel_put_int(r, 0);                                         /* objsubid */
    vrel_put_text(r, c);                                        /* description */
}

static int produce_description(VrelRows *r)
{
    all_relations(vrel_rows_syscat(r), description_cb, r);
    return 0;
}

static void index_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    if (rel->npk == 0)
        return;
    StrBuf key;
    strbuf_init(&key);
    for (int k = 0; k < rel->npk; k++)
        strbuf_printf(&key, "%s%d", k ? " " : "", rel->pk[k] + 1);
    const char *indkey = arena_strndup(vrel_rows_arena(r), key.data, key.len);
    strbuf_free(&key);
    vrel_row(r);
    vrel_put_int(r, INDEX_OID(rel->oid));                       /* indexrelid */
    vrel_put_int(r, rel->oid);                                  /* indrelid */
    vrel_put_int(r, rel->npk);                                  /* indnatts */
    vrel_put_int(r, rel->npk);                                  /* indnkeyatts */
    vrel_put_bool(r, true);                                     /* indisunique */
    vrel_put_bool(r, false);                                    /* indnullsnotdistinct */
    vrel_put_bool(r, true);                                     /* indisprimary */
    vrel_put_bool(r, false);                                    /* indisexclusion */
    vrel_put_bool(r, true);                                     /* indimmediate */
    vrel_put_bool(r, false);                                    /* indisclustered */
    vrel_put_bool(r, true);                                     /* indisvalid */
    vrel_put_bool(r, false);                                    /* indcheckxmin */
    vrel_put_bool(r, true);                                     /* indisready */
    vrel_put_bool(r, true);                                     /* indislive */
    vrel_put_bool(r, false);                                    /* indisreplident */
    vrel_put_text(r, indkey);                                   /* indkey */
    vrel_put_null(r);                                           /* indcollation */
    vrel_put_null(r);                                           /* indclass */
    vrel_put_null(r);                                           /* indoption */
    vrel_put_null(r);                                           /* indexprs */
    vrel_put_null(r);                                           /* indpred */
}

static int produce_index(VrelRows *r)
{
    if (vrel_rows_syscat(r)->cat != NULL)
        cat_foreach(vrel_rows_syscat(r)->cat, index_cb, r);
    return 0;
}

static void constraint_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    if (rel->npk == 0)
        return;
    StrBuf key;
    strbuf_init(&key);
    strbuf_putc(&key, '{');
    for (int k = 0; k < rel->npk; k++)
        strbuf_printf(&key, "%s%d", k ? "," : "", rel->pk[k] + 1);
    strbuf_putc(&key, '}');
    const char *conkey = arena_strndup(vrel_rows_arena(r), key.data, key.len);
    strbuf_free(&key);
    vrel_row(r);
    vrel_put_int(r, CONSTRAINT_OID(rel->oid));                  /* oid */
    vrel_put_text(r, arena_printf(vrel_rows_arena(r), "%s_pkey", rel->name)); /* conname */
    vrel_put_int(r, VREL_NS_PUBLIC);                            /* connamespace */
    vrel_put_text(r, "p");                                      /* contype */
    vrel_put_bool(r, false);                                    /* condeferrable */
    vrel_put_bool(r, false);                                    /* condeferred */
    vrel_put_bool(r, true);                                     /* convalidated */
    vrel_put_int(r, rel->oid);                                  /* conrelid */
    vrel_put_int(r, 0);                                         /* contypid */
    vrel_put_int(r, INDEX_OID(rel->oid));                       /* conindid */
    vrel_put_int(r, 0);                                         /* conparentid */
    vrel_put_int(r, 0);                                         /* confrelid */
    vrel_put_text(r, " ");                                      /* confupdtype */
    vrel_put_text(r, " ");                                      /* confdeltype */
    vrel_put_text(r, " ");                                      /* confmatchtype */
    vrel_put_bool(r, true);                                     /* conislocal */
    vrel_put_int(r, 0);                                         /* coninhcount */
    vrel_put_bool(r, true);                                     /* connoinherit */
    vrel_put_text(r, conkey);                                   /* conkey */
    vrel_put_null(r);                                           /* confkey */
    vrel_put_null(r);                                           /* conbin */
}

static int produce_constraint(VrelRows *r)
{
    if (vrel_rows_syscat(r)->cat != NULL)
        cat_foreach(vrel_rows_syscat(r)->cat, constraint_cb, r);
    return 0;
}

/* pg_tablespace: PostgreSQL's two, so that pg_database joins to one (psql's
 * \l+); sluice keeps every relation in its data directory. */
static int produce_tablespace(VrelRows *r)
{
    static const struct { int oid; const char *name; } spaces[] = {{1663, "pg_default"},
                                                                   {1664, "pg_global"}};
    for (size_t i = 0; i < SL_ARRAY_LEN(spaces); i++) {
        vrel_row(r);
        vrel_put_int(r, spaces[i].oid);
        vrel_put_text(r, spaces[i].name);
        vrel_put_int(r, BOOTSTRAP_ROLE_OID);
        vrel_put_null(r);
    }
    return 0;
}

static int produce_am(VrelRows *r)
{
    static const struct { int oid; const char *name; const char *type; } ams[] = {
        {2, "heap", "t"}, {403, "btree", "i"}};
    for (size_t i = 0; i < SL_ARRAY_LEN(ams); i++) {
        vrel_row(r);
        vrel_put_int(r, ams[i].oid);
        vrel_put_text(r, ams[i].name);
        vrel_put_int(r, 0);
        vrel_put_text(r, ams[i].type);
    }
    return 0;
}

static int produce_collation(VrelRows *r)
{
    static const struct { int oid; const char *name; const char *prov; } colls[] = {
        {100, "default", "d"}, {950, "C", "c"}, {951, "POSIX", "c"}};
    for (size_t i = 0; i < SL_ARRAY_LEN(colls); i++) {
        vrel_row(r);
        vrel_put_int(r, colls[i].oid);
        vrel_put_text(r, colls[i].name);
        vrel_put_int(r, VREL_NS_PG_CATALOG);
        vrel_put_int(r, BOOTSTRAP_ROLE_OID);
        vrel_put_text(r, colls[i].prov);
        vrel_put_bool(r, true);
        vrel_put_int(r, colls[i].oid == 100 ? -1 : 6);
        vrel_put_text(r, colls[i].oid == 100 ? NULL : colls[i].name);
        vrel_put_text(r, colls[i].oid == 100 ? NULL : colls[i].name);
    }
    return 0;
}

/* Catalogs sluice has no rows for: defaults, inheritance, policies,
 * extended statistics, publications, extensions. */
static int produce_empty(VrelRows *r)
{
    SL_UNUSED(r);
    return 0;
}

/* ------------------------------------------- pg_tables and their kin */

static const char *owner_name(VrelRows *r, const CatRelation *rel)
{
    return pgcat_role_name(vrel_rows_syscat(r), rel->owner ? rel->owner : BOOTSTRAP_ROLE_OID);
}

/* pg_tables, pg_views, pg_matviews: a row for each relation of relkind
 * 'r', 'v', 'm' (relkind_of), as PostgreSQL's views over pg_class. */
typedef struct KindWalk {
    VrelRows *r;
    char      kind;
} KindWalk;

static void kind_cb(const CatRelation *rel, void *arg)
{
    KindWalk *w = arg;
    VrelRows *r = w->r;
    const Syscat *sc = vrel_rows_syscat(r);
    if (relkind_of(sc, rel) != w->kind)
        return;
    vrel_row(r);
    vrel_put_text(r, pgcat_namespace_name(pgcat_namespace_of(sc, rel)));   /* schemaname */
    vrel_put_text(r, rel->name);                                /* tablename / viewname */
    vrel_put_text(r, owner_name(r, rel));                       /* ...owner */
    const char *def = rel->kind == REL_QUERY ? sql_redact_secrets(vrel_rows_arena(r), rel->sql)
                                             : NULL;
    switch (w->kind) {
    case 'r':
        vrel_put_null(r);                                       /* tablespace */
        vrel_put_bool(r, rel->npk > 0);                         /* hasindexes */
        vrel_put_bool(r, false);                                /* hasrules */
        vrel_put_bool(r, false);                                /* hastriggers */
        vrel_put_bool(r, false);                                /* rowsecurity */
        break;
    case 'v':
        vrel_put_text(r, def);                                  /* definition */
        break;
    default:
        vrel_put_null(r);                                       /* tablespace */
        vrel_put_bool(r, rel->npk > 0);                         /* hasindexes */
        vrel_put_bool(r, true);                                 /* ispopulated */
        vrel_put_text(r, def);                                  /* definition */
        break;
    }
}

static int produce_kind(VrelRows *r, char kind)
{
    KindWalk w = {r, kind};
    all_relations(vrel_rows_syscat(r), kind_cb, &w);
    return 0;
}

static int produce_tables(VrelRows *r) { return produce_kind(r, 'r'); }
static int produce_views(VrelRows *r) { return produce_kind(r, 'v'); }
static int produce_matviews(VrelRows *r) { return produce_kind(r, 'm'); }

/* pg_stat_user_tables: a row for each user table, stream and result
 * table (not sinks, as PostgreSQL's leaves out foreign tables); sluice keeps none of PostgreSQL's scan, tuple and vacuum
 * counters, so they are NULL (unknown), not 0. */
static void stat_user_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    char kind = relkind_of(vrel_rows_syscat(r), rel);
    if (kind != 'r' && kind != 'm')
        return;
    vrel_row(r);
    vrel_put_int(r, rel->oid);                                  /* relid */
    vrel_put_text(r, pgcat_namespace_name(pgcat_namespace_of(vrel_rows_syscat(r), rel)));
    vrel_put_text(r, rel->name);                                /* relname */
    for (int k = 0; k < 20; k++)                                /* seq_scan .. autoanalyze_count */
        vrel_put_null(r);
}

static int produce_stat_user_tables(VrelRows *r)
{
    const Syscat *sc = vrel_rows_syscat(r);
    if (sc->cat != NULL)
        cat_foreach(sc->cat, stat_user_cb, r);
    return 0;
}

/* pg_language: sluice's functions are all built in (LANGUAGE internal,
 * oid 12 as in PostgreSQL); it has no procedural languages. */
static int produce_language(VrelRows *r)
{
    vrel_row(r);
    vrel_put_int(r, 12);                                        /* oid */
    vrel_put_text(r, "internal");                               /* lanname */
    vrel_put_int(r, BOOTSTRAP_ROLE_OID);                        /* lanowner */
    vrel_put_bool(r, false);                                    /* lanispl */
    vrel_put_bool(r, false);                                    /* lanpltrusted */
    vrel_put_int(r, 0);                                         /* lanplcallfoid */
    vrel_put_int(r, 0);                                         /* laninline */
    vrel_put_int(r, 2246);                                      /* lanvalidator */
    vrel_put_null(r);                                           /* lanacl */
    return 0;
}

/* pg_get_keywords(): sluice's keywords (grammar/keywords.txt), with
 * PostgreSQL's categories; a bare column label (SELECT 1 x, no AS) may be
 * an unreserved one (the grammar reads it as a name), no other. */
static int produce_keywords(VrelRows *r)
{
    static const char codes[] = {[SQL_KW_RESERVED] = 'R', [SQL_KW_COLNAME] = 'C',
                                 [SQL_KW_TYPEFUNC] = 'T', [SQL_KW_UNRESERVED] = 'U'};
    static const char *const descs[] = {
        [SQL_KW_RESERVED] = "reserved",
        [SQL_KW_COLNAME] = "unreserved (cannot be function or type name)",
        [SQL_KW_TYPEFUNC] = "reserved (can be function or type name)",
        [SQL_KW_UNRESERVED] = "unreserved"};
    const char *word;
    int cat;
    for (int i = 0; (word = sql_keyword_nth(i, &cat)) != NULL; i++) {
        bool bare = cat == SQL_KW_UNRESERVED;
        vrel_row(r);
        vrel_put_text(r, word);                                 /* word */
        vrel_put_text(r, (char[]){codes[cat], 0});              /* catcode */
        vrel_put_bool(r, bare);                                 /* barelabel */
        vrel_put_text(r, descs[cat]);                           /* catdesc */
        vrel_put_text(r, bare ? "can be bare label" : "requires AS"); /* baredesc */
    }
    return 0;
}

/* -------------------------------------------------- information_schema */

static int produce_schemata(VrelRows *r)
{
    static const uint32_t oids[] = {VREL_NS_PG_CATALOG, VREL_NS_PUBLIC, VREL_NS_INFO_SCHEMA,
                                    VREL_NS_SYS};
    for (size_t i = 0; i < SL_ARRAY_LEN(oids); i++) {
        vrel_row(r);
        vrel_put_text(r, pgcat_database_name(vrel_rows_syscat(r)));
        vrel_put_text(r, pgcat_namespace_name(oids[i]));
        vrel_put_text(r, "sluice");
        vrel_put_null(r);
        vrel_put_null(r);
        vrel_put_null(r);
        vrel_put_null(r);
    }
    return 0;
}

static void is_tables_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    char kind = relkind_of(vrel_rows_syscat(r), rel);
    const char *type = kind == 'r' ? "BASE TABLE" : kind == 'f' ? "FOREIGN" : "VIEW";
    if (kind == 'r' && rel->kind == REL_SYSTEM)
        type = "BASE TABLE";
    vrel_row(r);
    vrel_put_text(r, pgcat_database_name(vrel_rows_syscat(r)));
    vrel_put_text(r, pgcat_namespace_name(pgcat_namespace_of(vrel_rows_syscat(r), rel)));
    vrel_put_text(r, rel->name);
    vrel_put_text(r, type);
    vrel_put_null(r);                                           /* self_referencing_column_name */
    vrel_put_null(r);                                           /* reference_generation */
    vrel_put_null(r);                                           /* user_defined_type_catalog */
    vrel_put_null(r);                                           /* user_defined_type_schema */
    vrel_put_null(r);                                           /* user_defined_type_name */
    vrel_put_text(r, rel->kind == REL_TABLE || rel->kind == REL_STREAM ? "YES" : "NO");
    vrel_put_text(r, "NO");                                     /* is_typed */
    vrel_put_null(r);                                           /* commit_action */
}

static int produce_is_tables(VrelRows *r)
{
    all_relations(vrel_rows_syscat(r), is_tables_cb, r);
    return 0;
}

static void is_views_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    if (rel->kind != REL_VIEW)
        return;
    vrel_row(r);
    vrel_put_text(r, pgcat_database_name(vrel_rows_syscat(r)));
    vrel_put_text(r, pgcat_namespace_name(pgcat_namespace_of(vrel_rows_syscat(r), rel)));
    vrel_put_text(r, rel->name);
    const char *def = sql_view_query(vrel_rows_arena(r), rel);
    if (def != NULL)
        vrel_put_text(r, def);                                  /* view_definition */
    else
        vrel_put_null(r);
    vrel_put_text(r, "NONE");                                   /* check_option */
    for (int i = 0; i < 5; i++)     /* updatable, insertable, trigger updatable, ... */
        vrel_put_text(r, "NO");
}

static int produce_is_views(VrelRows *r)
{
    all_relations(vrel_rows_syscat(r), is_views_cb, r);
    return 0;
}

static void is_columns_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    for (int c = 0; c < rel->ncols; c++) {
        SlType t = rel->cols[c].type;
        char buf[64];
        vrel_row(r);
        vrel_put_text(r, pgcat_database_name(vrel_rows_syscat(r)));
        vrel_put_text(r, pgcat_namespace_name(pgcat_namespace_of(vrel_rows_syscat(r), rel)));
        vrel_put_text(r, rel->name);
        vrel_put_text(r, rel->cols[c].name);
        vrel_put_int(r, c + 1);                                 /* ordinal_position */
        vrel_put_null(r);                                       /* column_default */
        vrel_put_text(r, rel->cols[c].not_null ? "NO" : "YES"); /* is_nullable */
        vrel_put_text(r, t.id == TYPE_VARCHAR ? "character varying" : t.id == TYPE_ARRAY ? "ARRAY"
                         : type_format(sl_type(t.id), buf, sizeof(buf)));  /* data_type */
        if (t.id == TYPE_VARCHAR && t.typmod >= 0)
            vrel_put_int(r, t.typmod);                          /* character_maximum_length */
        else
            vrel_put_null(r);
        if (t.id == TYPE_NUMERIC && t.typmod >= 0) {
            vrel_put_int(r, (t.typmod >> 16) & 0xFFFF);         /* numeric_precision */
            vrel_put_int(r, t.typmod & 0xFFFF);                 /* numeric_scale */
        } else if (t.id == TYPE_INT2 || t.id == TYPE_INT4 || t.id == TYPE_INT8) {
            vrel_put_int(r, t.id == TYPE_INT2 ? 16 : t.id == TYPE_INT4 ? 32 : 64);
            vrel_put_int(r, 0);
        } else {
            vrel_put_null(r);
            vrel_put_null(r);
        }
        vrel_put_text(r, "sluice");                             /* udt_catalog */
        vrel_put_text(r, "pg_catalog");                         /* udt_schema */
        vrel_put_text(r, t.id == TYPE_VARCHAR ? "varchar" : t.id == TYPE_INT4 ? "int4"
                         : t.id == TYPE_INT2 ? "int2" : t.id == TYPE_INT8 ? "int8"
                         : t.id == TYPE_FLOAT4 ? "float4" : t.id == TYPE_FLOAT8 ? "float8"
                         : t.id == TYPE_BOOL ? "bool"
                         : t.id == TYPE_ARRAY ? arena_printf(vrel_rows_arena(r), "_%s",
                                                             type_typname(t.elem))
                         : type_name(t.id));                    /* udt_name */
        vrel_put_text(r, "NO");                                 /* is_identity */
        vrel_put_text(r, "NEVER");                              /* is_generated */
        vrel_put_text(r, rel->kind == REL_TABLE ? "YES" : "NO"); /* is_updatable */
    }
}

/* information_schema.table_constraints and key_column_usage: the primary
 * keys of tables, as pg_constraint has them (constraint_cb). */
static void is_constraint_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    if (rel->npk == 0)
        return;
    const char *db = pgcat_database_name(vrel_rows_syscat(r));
    const char *name = arena_printf(vrel_rows_arena(r), "%s_pkey", rel->name);
    vrel_row(r);
    vrel_put_text(r, db);                                       /* constraint_catalog */
    vrel_put_text(r, "public");                                 /* constraint_schema */
    vrel_put_text(r, name);                                     /* constraint_name */
    vrel_put_text(r, db);                                       /* table_catalog */
    vrel_put_text(r, "public");                                 /* table_schema */
    vrel_put_text(r, rel->name);                                /* table_name */
    vrel_put_text(r, "PRIMARY KEY");                            /* constraint_type */
    vrel_put_text(r, "NO");                                     /* is_deferrable */
    vrel_put_text(r, "NO");                                     /* initially_deferred */
    vrel_put_text(r, "YES");                                    /* enforced */
    vrel_put_text(r, "YES");                                    /* nulls_distinct */
}

static void is_key_column_cb(const CatRelation *rel, void *arg)
{
    VrelRows *r = arg;
    const char *db = pgcat_database_name(vrel_rows_syscat(r));
    for (int k = 0; k < rel->npk; k++) {
        vrel_row(r);
        vrel_put_text(r, db);                                   /* constraint_catalog */
        vrel_put_text(r, "public");                             /* constraint_schema */
        vrel_put_text(r, arena_printf(vrel_rows_arena(r), "%s_pkey", rel->name));
        vrel_put_text(r, db);                                   /* table_catalog */
        vrel_put_text(r, "public");                             /* table_schema */
        vrel_put_text(r, rel->name);                            /* table_name */
        vrel_put_text(r, rel->cols[rel->pk[k]].name);           /* column_name */
        vrel_put_int(r, k + 1);                                 /* ordinal_position */
        vrel_put_null(r);                                       /* position_in_unique_constraint */
    }
}

static int produce_is_table_constraints(VrelRows *r)
{
    if (vrel_rows_syscat(r)->cat != NULL)
        cat_foreach(vrel_rows_syscat(r)->cat, is_constraint_cb, r);
    return 0;
}

static int produce_is_key_column_usage(VrelRows *r)
{
    if (vrel_rows_syscat(r)->cat != NULL)
        cat_foreach(vrel_rows_syscat(r)->cat, is_key_column_cb, r);
    return 0;
}

static int produce_is_columns(VrelRows *r)
{
    all_relations(vrel_rows_syscat(r), is_columns_cb, r);
    return 0;
}

static const VrelDef pg_defs[] = {
    {"pg_catalog", "pg_namespace", 2615, "oid oid, nspname name, nspowner oid, nspacl text",
     produce_namespace, "schemas"},
    {"pg_catalog", "pg_class", 1259,
     "oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, "
     "relam oid, relfilenode oid, reltablespace oid, relpages int4, reltuples float4, "
     "relallvisible int4, reltoastrelid oid, relhasindex bool, relisshared bool, "
     "relpersistence char, relkind char, relnatts int2, relchecks int2, relhasrules bool, "
     "relhastriggers bool, relhassubclass bool, relrowsecurity bool, "
     "relforcerowsecurity bool, relispopulated bool, relreplident char, relispartition bool, "
     "relrewrite oid, relfrozenxid xid, relminmxid xid, relacl text, reloptions text[], "
     "relpartbound pg_node_tree",
     produce_class, "relations: tables, streams, result tables, sinks, system relations"},
    {"pg_catalog", "pg_attribute", 1249,
     "attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2, attnum int2, "
     "attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, "
     "attstorage char, attcompression char, attnotnull bool, atthasdef bool, "
     "atthasmissing bool, attidentity char, attgenerated char, attisdropped bool, "
     "attislocal bool, attinhcount int4, attcollation oid, attacl text, attoptions text[], "
     "attfdwoptions text",
     produce_attribute, "columns of relations"},
    {"pg_catalog", "pg_type", 1247,
     "oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, "
     "typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, "
     "typrelid oid, typsubscript regproc, typelem oid, typarray oid, typinput regproc, "
     "typoutput regproc, typreceive regproc, typsend regproc, typmodin regproc, "
     "typmodout regproc, typanalyze regproc, typalign char, typstorage char, "
     "typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, "
     "typdefaultbin pg_node_tree, typdefault text, typacl text",
     produce_type, "data types"},
    {"pg_catalog", "pg_database", 1262,
     "oid oid, datname name, datdba oid, encoding int4, datlocprovider char, "
     "datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, "
     "datminmxid xid, dattablespace oid, datcollate text, datctype text, daticulocale text, "
     "datcollversion text, datacl text",
     produce_database, "databases"},
    {"pg_catalog", "pg_roles", 12001,
     "rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, "
     "rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, "
     "rolvaliduntil timestamptz, rolbypassrls bool, rolconfig text[], oid oid",
     produce_roles, "roles"},
    {"pg_catalog", "pg_user", 12002,
     "usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, "
     "usebypassrls bool, passwd text, valuntil timestamptz, useconfig text[]",
     produce_user, "roles that can log in"},
    {"pg_catalog", "pg_settings", 12003,
     "name text, setting text, unit text, category text, short_desc text, extra_desc text, "
     "context text, vartype text, source text, min_val text, max_val text, enumvals text[], "
     "boot_val text, reset_val text, sourcefile text, sourceline int4, pending_restart bool",
     produce_settings, "settings"},
    {"pg_catalog", "pg_proc", 1255,
     "oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4, "
     "prorows float4, provariadic oid, prosupport regproc, prokind char, prosecdef bool, "
     "proleakproof bool, proisstrict bool, proretset bool, provolatile char, "
     "proparallel char, pronargs int2, pronargdefaults int2, prorettype oid, "
     "proargtypes text, proallargtypes oid[], proargmodes char[], proargnames text[], "
     "proargdefaults pg_node_tree, protrftypes text, prosrc text, probin text, "
     "prosqlbody pg_node_tree, proconfig text[], proacl text",
     produce_proc, "functions"},
    {"pg_catalog", "pg_description", 2609,
     "objoid oid, classoid oid, objsubid int4, description text", produce_description,
     "comments"},
    {"pg_catalog", "pg_index", 2610,
     "indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool, "
     "indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, "
     "indisclustered bool, indisvalid bool, indcheckxmin bool, indisready bool, "
     "indislive bool, indisreplident bool, indkey text, indcollation text, indclass text, "
     "indoption text, indexprs pg_node_tree, indpred pg_node_tree",
     produce_index, "indexes: the primary keys of tables"},
    {"pg_catalog", "pg_constraint", 2606,
     "oid oid, conname name, connamespace oid, contype char, condeferrable bool, "
     "condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid, "
     "conparentid oid, confrelid oid, confupdtype char, confdeltype char, "
     "confmatchtype char, conislocal bool, coninhcount int4, connoinherit bool, "
     "conkey text, confkey text, conbin pg_node_tree",
     produce_constraint, "constraints: the primary keys of tables"},
    {"pg_catalog", "pg_am", 2601, "oid oid, amname name, amhandler regproc, amtype char",
     produce_am, "access methods"},
    {"pg_catalog", "pg_attrdef", 2604, "oid oid, adrelid oid, adnum int2, adbin pg_node_tree",
     produce_empty, "column defaults"},
    {"pg_catalog", "pg_inherits", 2611,
     "inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool", produce_empty,
     "inheritance"},
    {"pg_catalog", "pg_extension", 3079,
     "oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, "
     "extversion text",
     produce_empty, "extensions"},
    {"pg_catalog", "pg_auth_members", 1261,
     "roleid oid, member oid, grantor oid, admin_option bool", produce_empty,
     "role memberships"},
    {"pg_catalog", "pg_collation", 3456,
     "oid oid, collname name, collnamespace oid, collowner oid, collprovider char, "
     "collisdeterministic bool, collencoding int4, collcollate text, collctype text",
     produce_collation, "collations: text compares byte-wise (C)"},
    {"pg_catalog", "pg_policy", 3256,
     "oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, polroles text, "
     "polqual pg_node_tree, polwithcheck pg_node_tree",
     produce_empty, "row security policies"},
    {"pg_catalog", "pg_statistic_ext", 3381,
     "oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, "
     "stxstattarget int4, stxkeys text, stxkind text, stxexprs pg_node_tree",
     produce_empty, "extended statistics"},
    {"pg_catalog", "pg_publication", 6104,
     "oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, "
     "pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool",
     produce_empty, "publications"},
    {"pg_catalog", "pg_publication_namespace", 6237, "oid oid, pnpubid oid, pnnspid oid",
     produce_empty, "schemas of publications"},
    {"pg_catalog", "pg_publication_rel", 6106,
     "oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2[]",
     produce_empty, "relations of publications"},
    {"pg_catalog", "pg_language", 2612,
     "oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool, "
     "lanplcallfoid oid, laninline oid, lanvalidator oid, lanacl text",
     produce_language, "languages: internal, the one sluice's functions are in"},
    {"pg_catalog", "pg_tables", 12020,
     "schemaname name, tablename name, tableowner name, tablespace name, hasindexes bool, "
     "hasrules bool, hastriggers bool, rowsecurity bool",
     produce_tables, "tables (relkind r): tables, streams, pg_catalog's tables"},
    {"pg_catalog", "pg_views", 12021,
     "schemaname name, viewname name, viewowner name, definition text",
     produce_views, "views (relkind v); the system views have no definition"},
    {"pg_catalog", "pg_matviews", 12022,
     "schemaname name, matviewname name, matviewowner name, tablespace name, "
     "hasindexes bool, ispopulated bool, definition text",
     produce_matviews, "continuous queries' result tables, with their statements"},
    {"pg_catalog", "pg_stat_user_tables", 12023,
     "relid oid, schemaname name, relname name, seq_scan int8, seq_tup_read int8, "
     "idx_scan int8, idx_tup_fetch int8, n_tup_ins int8, n_tup_upd int8, n_tup_del int8, "
     "n_tup_hot_upd int8, n_live_tup int8, n_dead_tup int8, n_mod_since_analyze int8, "
     "n_ins_since_vacuum int8, last_vacuum timestamptz, last_autovacuum timestamptz, "
     "last_analyze timestamptz, last_autoanalyze timestamptz, vacuum_count int8, "
     "autovacuum_count int8, analyze_count int8, autoanalyze_count int8",
     produce_stat_user_tables, "user relations; no scan, tuple or vacuum counters (NULL)"},
    {"pg_catalog", "pg_sequence", 2224,
     "seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, "
     "seqmin int8, seqcache int8, seqcycle bool",
     produce_empty, "sequences (sluice has none)"},
    {"pg_catalog", "pg_conversion", 2607,
     "oid oid, conname name, connamespace oid, conowner oid, conforencoding int4, "
     "contoencoding int4, conproc regproc, condefault bool",
     produce_empty, "encoding conversions (sluice speaks UTF8 only: none)"},
    {"pg_catalog", "pg_enum", 3501,
     "oid oid, enumtypid oid, enumsortorder float4, enumlabel name", produce_empty,
     "labels of enum types (sluice has none)"},
    {"pg_catalog", "pg_get_keywords()", 12010,
     "word text, catcode char, barelabel bool, catdesc text, baredesc text",
     produce_keywords, "the rows of pg_get_keywords()"},
    {"pg_catalog", "pg_tablespace", 1213, "oid oid, spcname name, spcowner oid, spcacl text",
     produce_tablespace, "tablespaces: the default and the global one"},
    {"information_schema", "schemata", 13001,
     "catalog_name name, schema_name name, schema_owner name, "
     "default_character_set_catalog name, default_character_set_schema name, "
     "default_character_set_name name, sql_path text",
     produce_schemata, "schemas"},
    {"information_schema", "tables", 13002,
     "table_catalog name, table_schema name, table_name name, table_type text, "
     "self_referencing_column_name name, reference_generation text, "
     "user_defined_type_catalog name, user_defined_type_schema name, "
     "user_defined_type_name name, is_insertable_into text, is_typed text, "
     "commit_action text",
     produce_is_tables, "tables and views"},
    {"information_schema", "columns", 13003,
     "table_catalog name, table_schema name, table_name name, column_name name, "
     "ordinal_position int4, column_default text, is_nullable text, data_type text, "
     "character_maximum_length int4, numeric_precision int4, numeric_scale int4, "
     "udt_catalog name, udt_schema name, udt_name name, is_identity text, "
     "is_generated text, is_updatable text",
     produce_is_columns, "columns of tables and views"},
    {"information_schema", "table_constraints", 13004,
     "constraint_catalog name, constraint_schema name, constraint_name name, "
     "table_catalog name, table_schema name, table_name name, constraint_type text, "
     "is_deferrable text, initially_deferred text, enforced text, nulls_distinct text",
     produce_is_table_constraints, "constraints of tables: their primary keys"},
    {"information_schema", "key_column_usage", 13005,
     "constraint_catalog name, constraint_schema name, constraint_name name, "
     "table_catalog name, table_schema name, table_name name, column_name name, "
     "ordinal_position int4, position_in_unique_constraint int4",
     produce_is_key_column_usage, "the columns of the tables' keys"},
    {"information_schema", "views", 13006,
     "table_catalog name, table_schema name, table_name name, view_definition text, "
     "check_option text, is_updatable text, is_insertable_into text, "
     "is_trigger_updatable text, is_trigger_deletable text, is_trigger_insertable_into text",
     produce_is_views, "views"},
};

void pgcat_register(Syscat *sc)
{
    vrel_register(sc, pg_defs, (int)SL_ARRAY_LEN(pg_defs));
    pgcat_register_functions();
}
