/*
 * op_setop.c -- the set operations of the operator graph (op_set.h):
 * UNION ALL, UNION, INTERSECT [ALL], EXCEPT [ALL] of two inputs of the
 * same column types, with PostgreSQL's multiset rules.
 *
 *   eng_op_union_all_new   UNION ALL: linear, every row of either input
 *                          passed on with its weight; no state
 *   eng_op_setop_new       the operator of a set operation: UNION ALL as
 *                          above, the others op_distinct.c's counted
 *                          operator (per distinct row its count on each
 *                          side; the output multiplicity min(l, r) for
 *                          INTERSECT ALL, max(l - r, 0) for EXCEPT ALL,
 *                          1 or 0 for the set forms; UNION: l + r > 0)
 *   eng_op_setop_plan      the same for a plan's SETOP node
 *
 * UNION is one counted operator rather than union_all + distinct: one
 * state key per distinct row instead of a distinct's, the same layout as
 * INTERSECT and EXCEPT, and one operator for EXPLAIN to name.
 */
#include "op_set.h"
#include "sluice/common.h"

#include <string.h>

typedef struct UnionAll {
    bool    has_wm[2];
    int64_t wm[2];
    bool    pass_wm;
} UnionAll;

static int ua_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    return eng_emit(op, d, cx);
}

static int ua_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    UnionAll *u = op->self;
    if (!u->has_wm[input] || wm_us > u->wm[input])
        u->wm[input] = wm_us;
    u->has_wm[input] = true;
    if (!u->pass_wm || !u->has_wm[0] || !u->has_wm[1])
        return 0;
    return eng_emit_watermark(op, SL_MIN(u->wm[0], u->wm[1]), cx);
}

static int ua_restore(EngOp *op, EngCtx *cx)
{
    SL_UNUSED(cx);
    UnionAll *u = op->self;
    u->has_wm[0] = u->has_wm[1] = false;
    return 0;
}

static void ua_stats(const EngOp *op, EngOpStats *out)
{
    SL_UNUSED(op);
    memset(out, 0, sizeof(*out));
}

static void ua_explain(const EngOp *op, StrBuf *out)
{
    strbuf_printf(out, "union all of %d column%s: no state", op->out_ncols,
                  op->out_ncols == 1 ? "" : "s");
}

static const EngOpVt union_all_vt = {
    .kind = "union all",
    .push = ua_push,
    .watermark = ua_watermark,
    .restore = ua_restore,
    .stats = ua_stats,
    .explain = ua_explain,
};

/* 42804 unless both inputs have the same column types. */
static int check_types(const ColumnDesc *lcols, int nl, const ColumnDesc *rcols, int nr,
                       SlError *err)
{
    if (nl != nr)
        return sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                        "a set operation's inputs have %d and %d columns", nl, nr);
    for (int c = 0; c < nl; c++)
        if (lcols[c].type.id != rcols[c].type.id)
            return sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                            "a set operation's column %d is %s on the left and %s on the right",
                            c + 1, type_name(lcols[c].type.id), type_name(rcols[c].type.id));
    return 0;
}

EngOp *eng_op_union_all_new(const ColumnDesc *lcols, int nl, const EngEdgeTime *ltime,
                            const ColumnDesc *rcols, int nr, const EngEdgeTime *rtime,
                            SlError *err)
{
    if (check_types(lcols, nl, rcols, nr, err) < 0)
        return NULL;
    EngOp *op = eng_op_new(&union_all_vt, 2, sizeof(UnionAll));
    UnionAll *u = op->self;
    const ColumnDesc *cols[2] = {lcols, rcols};
    const EngEdgeTime *times[2] = {ltime, rtime};
    for (int i = 0; i < 2; i++) {
        op->in_cols[i] = cols[i];
        op->in_ncols[i] = nl;
        if (times[i] != NULL)
            op->in_time[i] = *times[i];
    }
    op->out_cols = lcols;
    op->out_ncols = nl;
    u->pass_wm = eng_same_time(ltime, rtime);
    if (u->pass_wm)
        op->out_time = *ltime;
    op->bound = ENG_BOUND_NONE;
    return op;
}

EngOp *eng_op_setop_new(SetOpKind op, bool all, const ColumnDesc *lcols, int nl,
                        const EngEdgeTime *ltime, const ColumnDesc *rcols, int nr,
                        const EngEdgeTime *rtime, SlError *err)
{
    EngSetKind kind;
    switch (op) {
    case SETOP_UNION:
        if (all)
            return eng_op_union_all_new(lcols, nl, ltime, rcols, nr, rtime, err);
        kind = ENG_SET_UNION;
        break;
    case SETOP_INTERSECT:
        kind = all ? ENG_SET_INTERSECT_ALL : ENG_SET_INTERSECT;
        break;
    case SETOP_EXCEPT:
        kind = all ? ENG_SET_EXCEPT_ALL : ENG_SET_EXCEPT;
        break;
    default:
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "not a set operation");
        return NULL;
    }
    if (check_types(lcols, nl, rcols, nr, err) < 0)
        return NULL;
    const EngEdgeTime *times[2] = {ltime, rtime};
    return eng_op_counted_new(kind, lcols, nl, times);
}

EngOp *eng_op_setop_plan(const Plan *p, const EngEdgeTime *ltime, const EngEdgeTime *rtime,
                         SlError *err)
{
    return eng_op_setop_new(p->u.setop.op, p->u.setop.all, p->child->cols, p->child->ncols,
                            ltime, p->right->cols, p->right->ncols, rtime, err);
}
