/*
 * vrel.c -- the registry of virtual relations and their scans (vrel.h).
 *
 *   vrel_shutdown                 free the registry's CatRelations
 *   vrel_register                 add VrelDefs (at init)
 *   vrel_lookup, vrel_by_oid, vrel_foreach, vrel_namespace, vrel_comment
 *   vrel_open                     a scan: run the producer, hand out batches
 *                                 (the ExCtx.system_scan the runtime sets)
 *   vrel_row, vrel_put_*          the row builder producers fill
 *
 * Each VrelDef becomes one CatRelation of kind REL_SYSTEM (its columns
 * parsed from the def's text with pg_type names; oid and regproc-like
 * types are bigint, name and "char" are text, arrays ("text[]") arrays
 * of the element type (types.h, TYPE_ARRAY)), owned by the registry (the
 * Syscat's vrels) until vrel_shutdown.  A scan (the statement's Syscat in
 * ExCtx.system_arg) runs the producer to the end in the statement's
 * arena and hands out its rows as batches of up to
 * EX_BATCH_ROWS: system relations are small, and a producer that sees one
 * consistent moment is what PostgreSQL's catalog snapshots give too.
 */
#include "syscat_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct Vrel {
    VrelDef      def;
    CatRelation *rel;
} Vrel;

/* The sluice type a pg_type name in a column list stands for. */
static SlType column_type(const char *name)
{
    size_t len = strlen(name);
    if (len > 2 && strcmp(name + len - 2, "[]") == 0) {
        /* an array of the element type */
        char elem[32];
        snprintf(elem, sizeof(elem), "%.*s", (int)(len - 2), name);
        return sl_array_type(column_type(elem).id, -1);
    }
    if (strcmp(name, "oid") == 0 || strcmp(name, "regproc") == 0 ||
        strcmp(name, "xid") == 0)
        return sl_type(TYPE_INT8);
    if (strcmp(name, "name") == 0 || strcmp(name, "char") == 0 ||
        strcmp(name, "pg_node_tree") == 0)
        return sl_type(TYPE_TEXT);
    SlTypeId id = type_by_name(name);
    if (id == TYPE_UNKNOWN) {
        fprintf(stderr, "vrel: unknown column type %s\n", name);
        abort();
    }
    return sl_type(id);
}

static CatRelation *make_rel(const VrelDef *d)
{
    CatRelation *r = sl_calloc(1, sizeof(CatRelation));
    arena_init(&r->arena, 1024);
    r->refs = 1;
    r->oid = d->oid;
    r->name = arena_strdup(&r->arena, d->name);
    r->kind = REL_SYSTEM;
    /* "a t, b t, ..." */
    int n = 1;
    for (const char *p = d->columns; *p; p++)
        n += *p == ',';
    r->cols = arena_zalloc(&r->arena, sizeof(CatColumn) * (size_t)n);
    const char *p = d->columns;
    for (int c = 0; c < n; c++) {
        while (*p == ' ')
            p++;
        const char *sp = strchr(p, ' ');
        const char *end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        char tname[32];
        snprintf(tname, sizeof(tname), "%.*s", (int)(end - sp - 1), sp + 1);
        r->cols[c].name = arena_strndup(&r->arena, p, (size_t)(sp - p));
        r->cols[c].type = column_type(tname);
        p = *end ? end + 1 : end;
    }
    r->ncols = n;
    r->sql = "";
    r->options = "{}";
    return r;
}

void vrel_shutdown(Syscat *sc)
{
    for (int i = 0; i < sc->nvrels; i++) {
        arena_destroy(&sc->vrels[i].rel->arena);
        sl_free(sc->vrels[i].rel);
    }
    sl_free(sc->vrels);
    sc->vrels = NULL;
    sc->nvrels = sc->capvrels = 0;
}

void vrel_register(Syscat *sc, const VrelDef *defs, int n)
{
    for (int i = 0; i < n; i++) {
        if (vrel_lookup(sc, defs[i].schema, defs[i].name) != NULL)
            continue;
        if (sc->nvrels == sc->capvrels) {
            sc->capvrels = sc->capvrels ? 2 * sc->capvrels : 64;
            sc->vrels = sl_realloc(sc->vrels, sizeof(Vrel) * (size_t)sc->capvrels);
        }
        sc->vrels[sc->nvrels].def = defs[i];
        sc->vrels[sc->nvrels].rel = make_rel(&defs[i]);
        sc->nvrels++;
    }
}

static const Vrel *find(const Syscat *sc, const CatRelation *rel)
{
    for (int i = 0; sc != NULL && i < sc->nvrels; i++)
        if (sc->vrels[i].rel == rel)
            return &sc->vrels[i];
    return NULL;
}

const CatRelation *vrel_lookup(const Syscat *sc, const char *schema, const char *name)
{
    if (schema == NULL)
        schema = "pg_catalog";
    for (int i = 0; sc != NULL && i < sc->nvrels; i++)
        if (strcmp(sc->vrels[i].def.name, name) == 0 &&
            strcmp(sc->vrels[i].def.schema, schema) == 0)
            return sc->vrels[i].rel;
    return NULL;
}

const CatRelation *vrel_by_oid(const Syscat *sc, uint32_t oid)
{
    for (int i = 0; sc != NULL && i < sc->nvrels; i++)
        if (sc->vrels[i].rel->oid == oid)
            return sc->vrels[i].rel;
    return NULL;
}

uint32_t vrel_namespace(const Syscat *sc, const CatRelation *rel)
{
    const Vrel *v = find(sc, rel);
    if (v == NULL)
        return VREL_NS_PUBLIC;
    if (strcmp(v->def.schema, "pg_catalog") == 0)
        return VREL_NS_PG_CATALOG;
    if (strcmp(v->def.schema, "information_schema") == 0)
        return VREL_NS_INFO_SCHEMA;
    return VREL_NS_SYS;
}

const char *vrel_comment(const Syscat *sc, const CatRelation *rel)
{
    const Vrel *v = find(sc, rel);
    return v ? v->def.comment : NULL;
}

/* Every system relation but the rows of catalog functions ("name()",
 * which FROM reaches as name(): pg_get_keywords()), which pg_class and
 * information_schema do not list, as PostgreSQL lists no function there. */
void vrel_foreach(const Syscat *sc, void (*fn)(const CatRelation *rel, void *arg), void *arg)
{
    for (int i = 0; sc != NULL && i < sc->nvrels; i++) {
        const char *name = sc->vrels[i].rel->name;
        size_t len = strlen(name);
        if (len > 2 && strcmp(name + len - 2, "()") == 0)
            continue;
        fn(sc->vrels[i].rel, arg);
    }
}

/* ----------------------------------------------------------------- rows */

struct VrelRows {
    Syscat            *sc;
    Arena             *a;
    SlError           *err;
    StateStore        *st;
    const CatRelation *rel;
    List              *batches;     /* of Batch *, full ones and the current */
    Batch             *cur;
    int                col;         /* the next column of the current row */
    bool               failed;
};

Arena *vrel_rows_arena(VrelRows *r) { return r->a; }
SlError *vrel_rows_err(VrelRows *r) { return r->err; }
StateStore *vrel_rows_state(VrelRows *r) { return r->st; }
Syscat *vrel_rows_syscat(VrelRows *r) { return r->sc; }

void vrel_row(VrelRows *r)
{
    if (r->cur == NULL || r->cur->nrows == EX_BATCH_ROWS) {
        Batch *b = ARENA_NEW(r->a, Batch);
        b->ncols = (uint32_t)r->rel->ncols;
        b->cols = ARENA_ARRAY(r->a, Vector, r->rel->ncols);
        for (int c = 0; c < r->rel->ncols; c++)
            vector_init(&b->cols[c], r->a, r->rel->cols[c].type, EX_BATCH_ROWS, true);
        r->batches = list_append(r->a, r->batches, b);
        r->cur = b;
    }
    r->cur->nrows++;
    r->col = 0;
}

/* The next cell of the current row: its vector and row. */
static Vector *cell(VrelRows *r, uint32_t *row)
{
    if (r->col >= r->rel->ncols) {
        fprintf(stderr, "vrel: too many values in a row of %s\n", r->rel->name);
        abort();
    }
    *row = r->cur->nrows - 1;
    return &r->cur->cols[r->col++];
}

void vrel_put_null(VrelRows *r)
{
    uint32_t i;
    Vector *v = cell(r, &i);
    v->nulls[i] = 1;
}

void vrel_put_text(VrelRows *r, const char *s)
{
    uint32_t i;
    Vector *v = cell(r, &i);
    if (s == NULL) {
        v->nulls[i] = 1;
        return;
    }
    v->nulls[i] = 0;
    switch (v->type.id) {
    case TYPE_TEXT:
    case TYPE_VARCHAR:
        v->v.str[i].ptr = arena_strdup(r->a, s);
        v->v.str[i].len = (uint32_t)strlen(s);
        return;
    default:
        break;
    }
    SlError e = {0};
    if (value_parse_text(r->a, v->type, s, strlen(s), v, i, -1, &e) < 0) {
        /* a producer's own text that does not parse is a bug; show NULL */
        v->nulls[i] = 1;
        sl_error_clear(&e);
    }
}

void vrel_put_int(VrelRows *r, int64_t x)
{
    uint32_t i;
    Vector *v = cell(r, &i);
    v->nulls[i] = 0;
    switch (v->type.id) {
    case TYPE_BOOL:   v->v.b[i] = x != 0; break;
    case TYPE_INT2:   v->v.i16[i] = (int16_t)x; break;
    case TYPE_INT4:   v->v.i32[i] = (int32_t)x; break;
    case TYPE_INT8:   v->v.i64[i] = x; break;
    case TYPE_FLOAT4: v->v.f32[i] = (float)x; break;
    case TYPE_FLOAT8: v->v.f64[i] = (double)x; break;
    default: {
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld", (long long)x);
        r->col--;
        vrel_put_text(r, buf);
    }
    }
}

void vrel_put_bool(VrelRows *r, bool x)
{
    vrel_put_int(r, x ? 1 : 0);
}

void vrel_put_float(VrelRows *r, double x)
{
    uint32_t i;
    Vector *v = cell(r, &i);
    v->nulls[i] = 0;
    if (v->type.id == TYPE_FLOAT8)
        v->v.f64[i] = x;
    else if (v->type.id == TYPE_FLOAT4)
        v->v.f32[i] = (float)x;
    else
        v->nulls[i] = 1;
}


void vrel_put_unix_us(VrelRows *r, int64_t us)
{
    uint32_t i;
    Vector *v = cell(r, &i);
    if (us == 0 || (v->type.id != TYPE_TIMESTAMPTZ && v->type.id != TYPE_TIMESTAMP)) {
        v->nulls[i] = 1;
        return;
    }
    v->nulls[i] = 0;
    v->v.i64[i] = us - SL_PG_EPOCH_UNIX_US;
}

void vrel_put_pg_us(VrelRows *r, int64_t pg_us)
{
    uint32_t i;
    Vector *v = cell(r, &i);
    v->nulls[i] = v->type.id != TYPE_TIMESTAMPTZ && v->type.id != TYPE_TIMESTAMP;
    if (!v->nulls[i])
        v->v.i64[i] = pg_us;
}

ExSource *vrel_open(ExCtx *cx, const CatRelation *rel)
{
    Syscat *sc = cx->system_arg;
    if (sc == NULL) {
        sl_error(cx->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                 "system relations are not available: cannot read \"%s\"", rel->name);
        return NULL;
    }
    const Vrel *v = find(sc, rel);
    if (v == NULL) {
        sl_error(cx->err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" is not a system relation",
                 rel->name);
        return NULL;
    }
    VrelRows r = {sc, cx->arena, cx->err, cx->st, rel, NULL, NULL, 0, false};
    if (v->def.produce(&r) < 0)
        return NULL;
    int n = list_len(r.batches);
    Batch **bs = ARENA_ARRAY(cx->arena, Batch *, n ? n : 1);
    for (int i = 0; i < n; i++) {
        bs[i] = list_nth(r.batches, i);
        for (uint32_t c = 0; c < bs[i]->ncols; c++)
            bs[i]->cols[c].len = bs[i]->nrows;
    }
    return ex_source_batches(cx->arena, bs, n);
}
