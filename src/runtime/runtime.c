/*
 * runtime.c -- what the server hands statements to (see runtime.h).
 *
 *   rt_parse      query string -> RawStmts (the sql module's parser)
 *   rt_prepare    RawStmt -> Prepared (analysis; the plan of a SELECT
 *                 without FROM is "evaluate the targets over one row")
 *   rt_describe   result columns and parameter types
 *   rt_execute    parameters in, rows out to a ResultSink, the tag
 *
 * Parameters in text format go through the types' input functions, as a
 * cast from text does; binary format is PostgreSQL's send/recv format for
 * bool, int2/4/8, float4/8, numeric, text and varchar.  rt_execute works in
 * an arena of its own, destroyed before it returns.
 */
#include "sluice/runtime.h"
#include "sluice/ast.h"
#include "sluice/expr.h"
#include "exec/numeric.h"
#include "sql/parser.h"

#include <limits.h>
#include <stdio.h>

struct Prepared {
    Query      *q;
    int         ncols;
    ColumnDesc *cols;
};

int rt_parse(Arena *a, const char *sql, size_t len, List **stmts, SlError *err)
{
    if (len > (size_t)INT_MAX / 2)
        return sl_error(err, ERRCODE_PROGRAM_LIMIT_EXCEEDED, "query string is too long");
    return sql_parse(a, sql, (int)len, stmts, err);
}

int rt_prepare(Arena *a, const char *sql, const RawStmt *raw, const SlType *param_types,
               int nparam_types, Prepared **out, SlError *err)
{
    Query *q;
    if (sql_analyze(a, sql, raw, param_types, nparam_types, &q, err) < 0)
        return -1;
    Prepared *p = ARENA_NEW(a, Prepared);
    p->q = q;
    if (q->kind == QUERY_SELECT) {
        p->ncols = q->ntargets;
        p->cols = ARENA_ARRAY(a, ColumnDesc, q->ntargets ? q->ntargets : 1);
        for (int i = 0; i < q->ntargets; i++) {
            p->cols[i].name = q->names[i];
            p->cols[i].type = q->targets[i]->type;
        }
    }
    *out = p;
    return 0;
}

void rt_describe(const Prepared *p, int *ncols, const ColumnDesc **cols, int *nparams,
                 const SlType **param_types)
{
    *ncols = p->ncols;
    *cols = p->cols;
    *nparams = p->q->nparams;
    *param_types = p->q->param_types;
}

static uint64_t read_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int bad_binary(SlError *err, int param)
{
    return sl_error(err, ERRCODE_INVALID_BINARY_REPRESENTATION,
                    "incorrect binary data format in bind parameter %d", param);
}

/* PostgreSQL's numeric_recv: ndigits, weight, sign, dscale, base-10000
 * digits; turned into text and parsed. */
static int numeric_recv(Arena *a, const unsigned char *p, int32_t len, SlNumeric *out,
                        SlError *err, int param)
{
    if (len < 8)
        return bad_binary(err, param);
    int ndigits = (int16_t)read_be(p, 2), weight = (int16_t)read_be(p + 2, 2);
    unsigned sign = (unsigned)read_be(p + 4, 2), dscale = (unsigned)read_be(p + 6, 2);
    if (ndigits < 0 || len != 8 + 2 * ndigits || dscale > 0x3FFF)
        return bad_binary(err, param);
    if (sign == 0xC000 || sign == 0xD000 || sign == 0xF000) {
        const char *txt = sign == 0xC000 ? "NaN" : sign == 0xD000 ? "Infinity" : "-Infinity";
        return num_parse(a, txt, strlen(txt), out) < 0 ? bad_binary(err, param) : 0;
    }
    if (sign != 0 && sign != 0x4000)
        return bad_binary(err, param);
    StrBuf b;
    strbuf_init(&b);
    if (sign == 0x4000)
        strbuf_putc(&b, '-');
    strbuf_puts(&b, "0");
    for (int i = 0; i < ndigits; i++) {
        unsigned d = (unsigned)read_be(p + 8 + 2 * i, 2);
        if (d > 9999) {
            strbuf_free(&b);
            return bad_binary(err, param);
        }
        strbuf_printf(&b, "%04u", d);
    }
    /* the digits so far stand for 10000^weight ... : place the point */
    int exp = (weight + 1 - ndigits) * 4;
    strbuf_printf(&b, "e%d", exp);
    SlNumeric n;
    int rc = num_parse(a, b.data, b.len, &n);
    strbuf_free(&b);
    if (rc < 0)
        return bad_binary(err, param);
    num_round(a, &n, (int)dscale, out);
    return 0;
}

/* One parameter into a one-row vector of type t. */
static int bind_param(Arena *a, SlType t, const ParamValue *pv, Vector *v, int param,
                      SlError *err)
{
    vector_init(v, a, t, 1, true);
    if (pv->data == NULL) {
        v->nulls[0] = 1;
        return 0;
    }
    if (pv->len < 0)
        return bad_binary(err, param);
    if (pv->format == 0)
        return value_parse_text(a, t, pv->data, (size_t)pv->len, v, 0, -1, err);
    const unsigned char *p = (const unsigned char *)pv->data;
    int32_t len = pv->len;
    switch (t.id) {
    case TYPE_BOOL:
        if (len != 1)
            return bad_binary(err, param);
        v->v.b[0] = p[0] != 0;
        return 0;
    case TYPE_INT2:
        if (len != 2)
            return bad_binary(err, param);
        v->v.i16[0] = (int16_t)read_be(p, 2);
        return 0;
    case TYPE_INT4:
        if (len != 4)
            return bad_binary(err, param);
        v->v.i32[0] = (int32_t)read_be(p, 4);
        return 0;
    case TYPE_INT8:
        if (len != 8)
            return bad_binary(err, param);
        v->v.i64[0] = (int64_t)read_be(p, 8);
        return 0;
    case TYPE_FLOAT4: {
        if (len != 4)
            return bad_binary(err, param);
        uint32_t u = (uint32_t)read_be(p, 4);
        memcpy(&v->v.f32[0], &u, 4);
        return 0;
    }
    case TYPE_FLOAT8: {
        if (len != 8)
            return bad_binary(err, param);
        uint64_t u = read_be(p, 8);
        memcpy(&v->v.f64[0], &u, 8);
        return 0;
    }
    case TYPE_NUMERIC:
        return numeric_recv(a, p, len, &v->v.num[0], err, param);
    case TYPE_TEXT:
    case TYPE_VARCHAR:
        return value_parse_text(a, t, pv->data, (size_t)len, v, 0, -1, err);
    default:
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "binary format for parameters of type %s is not supported yet",
                        type_name(t.id));
    }
}

int rt_execute(const Prepared *p, const ParamValue *params, int nparams, ResultSink *sink,
               char *tag, size_t tagsize, SlError *err)
{
    const Query *q = p->q;
    if (nparams != q->nparams)
        return sl_error(err, ERRCODE_PROTOCOL_VIOLATION,
                        "bind message supplies %d parameters, but prepared statement requires %d",
                        nparams, q->nparams);
    if (q->kind == QUERY_UTILITY) {
        snprintf(tag, tagsize, "%s", q->tag);
        return 0;
    }
    Arena work;
    arena_init(&work, 64 * 1024);
    int rc = 0;
    Vector *pv = ARENA_ARRAY(&work, Vector, nparams ? nparams : 1);
    for (int i = 0; i < nparams && rc == 0; i++)
        rc = bind_param(&work, q->param_types[i], &params[i], &pv[i], i + 1, err);
    EvalCtx cx = {.arena = &work, .err = err, .params = pv, .nparams = nparams};
    Batch batch = {.nrows = 1, .ncols = (uint32_t)q->ntargets};
    if (rc == 0 && q->where != NULL) {
        Vector w;
        rc = ex_eval(&cx, q->where, NULL, 1, &w);
        if (rc == 0 && (vector_is_null(&w, 0) || !w.v.b[0]))
            batch.nrows = 0;
    }
    if (rc == 0 && batch.nrows > 0) {
        batch.cols = ARENA_ARRAY(&work, Vector, q->ntargets ? q->ntargets : 1);
        for (int i = 0; i < q->ntargets && rc == 0; i++)
            rc = ex_eval(&cx, q->targets[i], NULL, 1, &batch.cols[i]);
        if (rc == 0 && sink != NULL && sink->batch_cb(sink, &batch) < 0)
            rc = sl_error(err, ERRCODE_QUERY_CANCELED,
                          "canceling statement: the result could not be delivered");
    }
    if (rc == 0)
        snprintf(tag, tagsize, "SELECT %u", batch.nrows);
    arena_destroy(&work);
    return rc < 0 ? -1 : 0;
}
