/*
 * op_window.c -- window functions over a sorted input, and
 * generate_series in FROM.
 *
 *   op_build_window    one window function (plan.h's WindowFunc: the
 *                      ranking and value functions, or an aggregate) over
 *                      its PARTITION BY / ORDER BY and frame
 *   op_build_series    generate_series(start, stop [, step]) and
 *                      unnest(array): the arguments evaluated once (they
 *                      may read a correlated subquery's outer row), then
 *                      the integers or the array's elements
 *
 * The analyzer puts a Sort by the partition keys, then the order keys,
 * under the Window node, so a partition's rows arrive together and in
 * order.  The operator keeps its whole input (a RowBuf in the statement's
 * arena, so statement_mem counts it: 53200 past it), computes the value of
 * every row partition by partition, then passes the kept batches on with
 * one more column.  A partition ends where the partition keys' equality
 * bytes (ex_key_encode) change; peers are rows whose order keys' bytes are
 * equal (all rows of a partition when there is no ORDER BY).
 *
 * Frames are PostgreSQL's (nodeWindowAgg.c): ROWS, RANGE and GROUPS, each
 * bound UNBOUNDED, n PRECEDING/FOLLOWING or CURRENT ROW, and EXCLUDE
 * CURRENT ROW / GROUP / TIES, which leave a frame of up to three runs of
 * rows.  RANGE with an offset compares the order key with each row's
 * key -/+ offset, columns the analyzer computes (in_range's sub/less and
 * its NULL rules).  Offsets are checked before the first row (22004 NULL,
 * 22013 a negative ROWS / GROUPS offset) and when the first partition
 * starts (22013 a negative RANGE offset), as PostgreSQL does.
 *
 * An aggregate keeps one state (ex_aggset_*: FILTER, every aggregate the
 * Aggregate node runs).  While a row's frame has the same start as the
 * row before's and no exclusion, the state is extended with the rows the
 * frame gained (a frame from UNBOUNDED PRECEDING is O(n) in all); when the
 * start moves, the state restarts from the new frame -- what PostgreSQL
 * does for aggregates without an inverse transition, and the order it
 * sums floats in.
 */
#include "exec/op.h"

/* A run of rows [lo, hi) of the input (global row numbers). */
typedef struct Run {
    int64_t lo, hi;
} Run;

typedef struct WindowState {
    RowBuf    rows;         /* the whole input */
    bool      computed;
    int       emit;         /* the next kept batch to pass on */
    int64_t   nrows;
    uint32_t *rb, *ri;      /* row -> its batch and index in it */
    Vector   *res;          /* per kept batch: the function's values */
    /* the partition being computed: its peer groups */
    int64_t  *grp;          /* row - ps -> its group */
    int64_t  *gs, *ge;      /* group -> its rows [gs, ge) */
    int64_t   ngroups;
    bool      offsets_checked;
    int64_t   start_n, end_n;   /* ROWS / GROUPS offsets */
    /* WINDOW_FUNC_AGG */
    Arena     agg_arena;    /* the state's memory, emptied at a restart */
    ExAggSet *set;
    uint8_t  *block;
    uint8_t **ptrs;         /* EX_BATCH_ROWS pointers to block */
    bool      have_state;
    Run       state_runs[3];    /* what the state holds */
    int       state_nruns;
    Arena     scratch;      /* arguments evaluated by the aggregates */
    /* ntile */
    int64_t   nt_bucket, nt_per, nt_boundary, nt_rem;
} WindowState;

static const Vector *row_col(const WindowState *s, int c, int64_t r, uint32_t *i)
{
    *i = s->ri[r];
    return &s->rows.batches[s->rb[r]]->cols[c];
}

static bool is_null_at(const WindowState *s, int c, int64_t r)
{
    uint32_t i;
    const Vector *v = row_col(s, c, r, &i);
    return vector_is_null(v, i);
}

/* The equality bytes of row r's columns cols[0..n). */
static void row_key(const WindowState *s, const int *cols, int n, int64_t r, Vector *tmp,
                    StrBuf *out)
{
    strbuf_reset(out);
    uint32_t i = s->ri[r];
    const Batch *b = s->rows.batches[s->rb[r]];
    for (int k = 0; k < n; k++)
        tmp[k] = b->cols[cols[k]];
    ex_key_encode(tmp, n, i, out);
}

static bool same_bytes(const StrBuf *a, const StrBuf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* An int4 argument of row r (NULL: false). */
static bool int_arg(const WindowState *s, int c, int64_t r, int64_t *v)
{
    uint32_t i;
    const Vector *vec = row_col(s, c, r, &i);
    if (vector_is_null(vec, i))
        return false;
    *v = vec->type.id == TYPE_INT8 ? vec->v.i64[i] : vec->v.i32[i];
    return true;
}

/* ---------------------------------------------------------------- frames */

/* The offsets: NULL (22004) and ROWS and GROUPS's sign (22013) before the
 * first row; RANGE's sign (range_sign) when the first partition starts.
 * PostgreSQL checks them there too. */
static int check_offsets(ExOp *op, WindowState *s, bool range_sign)
{
    const Plan *p = op->plan;
    if (range_sign && (p->u.window.mode != FRAME_RANGE || s->offsets_checked))
        return 0;
    s->offsets_checked = range_sign;
    EvalCtx ecx = op_eval_ctx(op);
    ecx.arena = &s->scratch;
    Expr *offs[2] = {p->u.window.start_off, p->u.window.end_off};
    Expr *negs[2] = {p->u.window.start_neg, p->u.window.end_neg};
    int64_t *outs[2] = {&s->start_n, &s->end_n};
    for (int k = 0; k < 2; k++) {
        if (offs[k] == NULL)
            continue;
        const char *which = k == 0 ? "starting" : "ending";
        Vector v;
        if (ex_eval(&ecx, offs[k], NULL, 1, &v) < 0)
            return -1;
        if (vector_is_null(&v, 0))
            return sl_error(op->cx->err, ERRCODE_NULL_VALUE_NOT_ALLOWED,
                            "frame %s offset must not be null", which);
        if (p->u.window.mode != FRAME_RANGE) {
            if (range_sign)
                continue;
            if (v.v.i64[0] < 0)
                return sl_error(op->cx->err, ERRCODE_INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                                "frame %s offset must not be negative", which);
            *outs[k] = v.v.i64[0];
            continue;
        }
        if (!range_sign)
            continue;
        Vector neg;
        if (ex_eval(&ecx, negs[k], NULL, 1, &neg) < 0)
            return -1;
        if (!vector_is_null(&neg, 0) && neg.v.b[0])
            return sl_error(op->cx->err, ERRCODE_INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                            "invalid preceding or following size in window function");
    }
    arena_reset(&s->scratch);
    return 0;
}

/* RANGE with an offset: does row h's key stand at or past row cur's bound
 * (the frame's first row: in_range with less = DESC)? */
static bool range_head_ok(const WindowState *s, const Plan *p, int64_t h, int64_t cur)
{
    bool hnull = is_null_at(s, p->u.window.range_key, h);
    bool cnull = is_null_at(s, p->u.window.range_key, cur);
    if (hnull || cnull)
        return p->u.window.nulls_first ? (!hnull || cnull) : (hnull || !cnull);
    uint32_t hi, bi;
    const Vector *hv = row_col(s, p->u.window.range_key, h, &hi);
    const Vector *bv = row_col(s, p->u.window.range_start, cur, &bi);
    int c = ex_value_cmp(hv, hi, bv, bi);
    return p->u.window.desc ? c <= 0 : c >= 0;
}

/* ... is row t still inside the frame that ends at row cur's bound? */
static bool range_tail_ok(const WindowState *s, const Plan *p, int64_t t, int64_t cur)
{
    bool tnull = is_null_at(s, p->u.window.range_key, t);
    bool cnull = is_null_at(s, p->u.window.range_key, cur);
    if (tnull || cnull)
        return p->u.window.nulls_first ? tnull : cnull;
    uint32_t ti, bi;
    const Vector *tv = row_col(s, p->u.window.range_key, t, &ti);
    const Vector *bv = row_col(s, p->u.window.range_end, cur, &bi);
    int c = ex_value_cmp(tv, ti, bv, bi);
    return p->u.window.desc ? c >= 0 : c <= 0;
}

typedef struct FramePos {
    int64_t head, tail;     /* RANGE with offsets: the scans' positions */
} FramePos;

/* Row i's frame [fs, fe) in its partition [ps, pe). */
static void frame_of(const WindowState *s, const Plan *p, int64_t ps, int64_t pe, int64_t i,
                     FramePos *fp, int64_t *fs, int64_t *fe)
{
    int64_t g = s->grp[i - ps];
    int64_t a = ps, b = pe;
    switch (p->u.window.start) {
    case BOUND_UNBOUNDED_PRECEDING:
        a = ps;
        break;
    case BOUND_CURRENT_ROW:
        a = p->u.window.mode == FRAME_ROWS ? i : s->gs[g];
        break;
    case BOUND_PRECEDING:
    case BOUND_FOLLOWING: {
        bool prec = p->u.window.start == BOUND_PRECEDING;
        int64_t n = s->start_n;
        if (p->u.window.mode == FRAME_ROWS) {
            a = prec ? (n > i - ps ? ps : i - n) : (n >= pe - i ? pe : i + n);
        } else if (p->u.window.mode == FRAME_GROUPS) {
            if (prec)
                a = n > g ? ps : s->gs[g - n];
            else
                a = n >= s->ngroups - g ? pe : s->gs[g + n];
        } else {
            if (fp->head < ps)
                fp->head = ps;
            while (fp->head < pe && !range_head_ok(s, p, fp->head, i))
                fp->head++;
            a = fp->head;
        }
        break;
    }
    default:
        break;
    }
    switch (p->u.window.end) {
    case BOUND_UNBOUNDED_FOLLOWING:
        b = pe;
        break;
    case BOUND_CURRENT_ROW:
        b = p->u.window.mode == FRAME_ROWS ? i + 1 : s->ge[g];
        break;
    case BOUND_PRECEDING:
    case BOUND_FOLLOWING: {
        bool prec = p->u.window.end == BOUND_PRECEDING;
        int64_t n = s->end_n;
        if (p->u.window.mode == FRAME_ROWS) {
            b = prec ? (n > i - ps ? ps : i - n + 1) : (n >= pe - i - 1 ? pe : i + n + 1);
        } else if (p->u.window.mode == FRAME_GROUPS) {
            if (prec)
                b = n > g ? ps : s->ge[g - n];
            else
                b = n >= s->ngroups - g ? pe : s->ge[g + n];
        } else {
            if (fp->tail < ps)
                fp->tail = ps;
            while (fp->tail < pe && range_tail_ok(s, p, fp->tail, i))
                fp->tail++;
            b = fp->tail;
        }
        break;
    }
    default:
        break;
    }
    if (b < a)
        b = a;
    *fs = a;
    *fe = b;
}

/* The frame [fs, fe) less the rows EXCLUDE takes out: up to three runs. */
static int frame_runs(const WindowState *s, const Plan *p, int64_t ps, int64_t i, int64_t fs,
                      int64_t fe, Run *runs)
{
    int n = 0;
    if (p->u.window.exclude == EXCLUDE_NO_OTHERS) {
        if (fe > fs)
            runs[n++] = (Run){fs, fe};
        return n;
    }
    int64_t g = s->grp[i - ps];
    int64_t xs = p->u.window.exclude == EXCLUDE_CURRENT_ROW ? i : s->gs[g];
    int64_t xe = p->u.window.exclude == EXCLUDE_CURRENT_ROW ? i + 1 : s->ge[g];
    int64_t e1 = fe < xs ? fe : xs;
    if (e1 > fs)
        runs[n++] = (Run){fs, e1};
    if (p->u.window.exclude == EXCLUDE_TIES && i >= fs && i < fe)
        runs[n++] = (Run){i, i + 1};
    int64_t s3 = fs > xe ? fs : xe;
    if (fe > s3)
        runs[n++] = (Run){s3, fe};
    return n;
}

/* The k-th row (from 0) of the runs, or -1. */
static int64_t run_row(const Run *runs, int n, int64_t k)
{
    for (int r = 0; r < n; r++) {
        int64_t len = runs[r].hi - runs[r].lo;
        if (k < len)
            return runs[r].lo + k;
        k -= len;
    }
    return -1;
}

/* ------------------------------------------------------------ aggregates */

static int agg_restart(ExOp *op, WindowState *s)
{
    arena_reset(&s->agg_arena);
    s->set = ex_aggset_new(&s->agg_arena, &op->plan->u.window.agg, 1);
    if (s->block == NULL) {
        s->block = arena_alloc(op->cx->arena, ex_aggset_size(s->set) + 1);
        s->ptrs = ARENA_ARRAY(op->cx->arena, uint8_t *, EX_BATCH_ROWS);
        for (int k = 0; k < EX_BATCH_ROWS; k++)
            s->ptrs[k] = s->block;
    }
    memset(s->block, 0, ex_aggset_size(s->set));
    s->have_state = true;
    s->state_nruns = 0;
    return 0;
}

/* Folds rows [lo, hi) into the state, a kept batch at a time. */
static int agg_add(ExOp *op, WindowState *s, int64_t lo, int64_t hi)
{
    uint32_t sel[EX_BATCH_ROWS];
    EvalCtx ecx = op_eval_ctx(op);
    ecx.arena = &s->scratch;
    while (lo < hi) {
        uint32_t b = s->rb[lo];
        const Batch *batch = s->rows.batches[b];
        uint32_t n = 0;
        while (lo < hi && s->rb[lo] == b && n < EX_BATCH_ROWS)
            sel[n++] = s->ri[lo++];
        if (ex_aggset_update(s->set, &ecx, batch, batch->nrows, sel, n, s->ptrs) < 0)
            return -1;
        arena_reset(&s->scratch);
    }
    return 0;
}

/* Makes the state hold exactly the runs: extends it when it holds a
 * prefix of them (one run each, the same start), else starts again. */
static int agg_frame(ExOp *op, WindowState *s, const Run *runs, int n)
{
    if (s->have_state && n == 1 && s->state_nruns == 1 && runs[0].lo == s->state_runs[0].lo &&
        runs[0].hi >= s->state_runs[0].hi) {
        if (agg_add(op, s, s->state_runs[0].hi, runs[0].hi) < 0)
            return -1;
        s->state_runs[0].hi = runs[0].hi;
        return 0;
    }
    if (s->have_state && n == s->state_nruns) {
        bool same = true;
        for (int k = 0; k < n; k++)
            same &= runs[k].lo == s->state_runs[k].lo && runs[k].hi == s->state_runs[k].hi;
        if (same)
            return 0;
    }
    if (agg_restart(op, s) < 0)
        return -1;
    for (int k = 0; k < n; k++)
        if (agg_add(op, s, runs[k].lo, runs[k].hi) < 0)
            return -1;
    memcpy(s->state_runs, runs, sizeof(Run) * (size_t)n);
    s->state_nruns = n;
    return 0;
}

/* ------------------------------------------------------------- functions */

static void set_null_at(WindowState *s, int64_t r)
{
    s->res[s->rb[r]].nulls[s->ri[r]] = 1;
}

static Vector *out_at(WindowState *s, int64_t r, uint32_t *i)
{
    *i = s->ri[r];
    Vector *v = &s->res[s->rb[r]];
    v->nulls[*i] = 0;
    return v;
}

static void copy_from(WindowState *s, int64_t r, int c, int64_t src)
{
    if (src < 0) {
        set_null_at(s, r);
        return;
    }
    uint32_t si, di;
    const Vector *sv = row_col(s, c, src, &si);
    Vector *dv = out_at(s, r, &di);
    ex_copy_value(dv, di, sv, si, NULL);
}

static int ntile_value(ExOp *op, WindowState *s, int64_t ps, int64_t pe, int64_t i)
{
    const Plan *p = op->plan;
    if (s->nt_bucket == 0) {
        int64_t nb;
        if (!int_arg(s, p->u.window.args[0], i, &nb)) {
            set_null_at(s, i);
            return 0;
        }
        if (nb <= 0)
            return sl_error(op->cx->err, ERRCODE_INVALID_ARGUMENT_FOR_NTILE,
                            "argument of ntile must be greater than zero");
        int64_t total = pe - ps;
        s->nt_bucket = 1;
        s->nt_per = 0;
        s->nt_rem = 0;
        s->nt_boundary = total / nb;
        if (s->nt_boundary <= 0) {
            s->nt_boundary = 1;
        } else {
            s->nt_rem = total % nb;
            if (s->nt_rem != 0)
                s->nt_boundary++;
        }
    }
    s->nt_per++;
    if (s->nt_boundary < s->nt_per) {
        if (s->nt_rem != 0 && s->nt_bucket == s->nt_rem) {
            s->nt_rem = 0;
            s->nt_boundary--;
        }
        s->nt_bucket++;
        s->nt_per = 1;
    }
    uint32_t di;
    out_at(s, i, &di)->v.i32[di] = (int32_t)s->nt_bucket;
    return 0;
}

/* lag / lead: the value offset rows back or ahead, or the default. */
static void shift_value(const Plan *p, WindowState *s, int64_t ps, int64_t pe, int64_t i)
{
    int64_t off = 1;
    if (p->u.window.nargs >= 2 && !int_arg(s, p->u.window.args[1], i, &off)) {
        set_null_at(s, i);
        return;
    }
    int64_t j = p->u.window.func == WINDOW_FUNC_LAG ? i - off : i + off;
    if (j >= ps && j < pe)
        copy_from(s, i, p->u.window.args[0], j);
    else if (p->u.window.nargs == 3)
        copy_from(s, i, p->u.window.args[2], i);
    else
        set_null_at(s, i);
}

/* Peer groups of the partition [ps, pe). */
static void partition_groups(WindowState *s, const Plan *p, int64_t ps, int64_t pe,
                             Vector *tmp, StrBuf *key, StrBuf *prev)
{
    s->ngroups = 0;
    for (int64_t r = ps; r < pe; r++) {
        row_key(s, p->u.window.order, p->u.window.norder, r, tmp, key);
        if (r == ps || !same_bytes(key, prev)) {
            if (s->ngroups > 0)
                s->ge[s->ngroups - 1] = r;
            s->gs[s->ngroups++] = r;
            strbuf_reset(prev);
            strbuf_append(prev, key->data ? key->data : "", key->len);
        }
        s->grp[r - ps] = s->ngroups - 1;
    }
    if (s->ngroups > 0)
        s->ge[s->ngroups - 1] = pe;
}

static int compute_partition(ExOp *op, WindowState *s, int64_t ps, int64_t pe)
{
    const Plan *p = op->plan;
    WindowFunc fn = p->u.window.func;
    int64_t n = pe - ps;
    FramePos fp = {ps, ps};
    s->have_state = false;
    s->nt_bucket = 0;
    if (check_offsets(op, s, true) < 0)
        return -1;
    for (int64_t i = ps; i < pe; i++) {
        int64_t g = s->grp[i - ps];
        uint32_t di;
        switch (fn) {
        case WINDOW_FUNC_ROW_NUMBER:
            out_at(s, i, &di)->v.i64[di] = i - ps + 1;
            continue;
        case WINDOW_FUNC_RANK:
            out_at(s, i, &di)->v.i64[di] = s->gs[g] - ps + 1;
            continue;
        case WINDOW_FUNC_DENSE_RANK:
            out_at(s, i, &di)->v.i64[di] = g + 1;
            continue;
        case WINDOW_FUNC_PERCENT_RANK:
            out_at(s, i, &di)->v.f64[di] =
                n > 1 ? (double)(s->gs[g] - ps) / (double)(n - 1) : 0.0;
            continue;
        case WINDOW_FUNC_CUME_DIST:
            out_at(s, i, &di)->v.f64[di] = (double)(s->ge[g] - ps) / (double)n;
            continue;
        case WINDOW_FUNC_NTILE:
            if (ntile_value(op, s, ps, pe, i) < 0)
                return -1;
            continue;
        case WINDOW_FUNC_LAG:
        case WINDOW_FUNC_LEAD:
            shift_value(p, s, ps, pe, i);
            continue;
        default:
            break;
        }
        int64_t fs, fe;
        Run runs[3];
        frame_of(s, p, ps, pe, i, &fp, &fs, &fe);
        int nr = frame_runs(s, p, ps, i, fs, fe, runs);
        int64_t len = 0;
        for (int k = 0; k < nr; k++)
            len += runs[k].hi - runs[k].lo;
        switch (fn) {
        case WINDOW_FUNC_FIRST_VALUE:
            copy_from(s, i, p->u.window.args[0], run_row(runs, nr, 0));
            break;
        case WINDOW_FUNC_LAST_VALUE:
            copy_from(s, i, p->u.window.args[0], len > 0 ? run_row(runs, nr, len - 1) : -1);
            break;
        case WINDOW_FUNC_NTH_VALUE: {
            int64_t nth;
            if (!int_arg(s, p->u.window.args[1], i, &nth)) {
                set_null_at(s, i);
                break;
            }
            if (nth <= 0)
                return sl_error(op->cx->err, ERRCODE_INVALID_ARGUMENT_FOR_NTH_VALUE,
                                "argument of nth_value must be greater than zero");
            copy_from(s, i, p->u.window.args[0], nth <= len ? run_row(runs, nr, nth - 1) : -1);
            break;
        }
        default: {
            if (agg_frame(op, s, runs, nr) < 0)
                return -1;
            Vector *v = out_at(s, i, &di);
            if (ex_aggset_final(s->set, s->block, v, di, op->cx->arena, op->cx->err) < 0)
                return -1;
            break;
        }
        }
    }
    return 0;
}

/* Keeps the whole input, then computes every row's value. */
static int window_compute(ExOp *op, WindowState *s)
{
    const Plan *p = op->plan;
    const Plan *c = p->child;
    rowbuf_init(&s->rows, op->cx->arena, c->cols, c->ncols);
    ExBatch *in;
    int rc;
    while ((rc = op_pull(op->child, &in)) > 0)
        rowbuf_append(&s->rows, in);
    if (rc < 0)
        return -1;
    int64_t n = (int64_t)s->rows.nrows;
    Arena *a = op->cx->arena;
    s->nrows = n;
    s->rb = ARENA_ARRAY(a, uint32_t, n ? n : 1);
    s->ri = ARENA_ARRAY(a, uint32_t, n ? n : 1);
    s->res = ARENA_ARRAY(a, Vector, s->rows.nbatches ? s->rows.nbatches : 1);
    int64_t r = 0;
    for (int b = 0; b < s->rows.nbatches; b++) {
        const Batch *bt = s->rows.batches[b];
        vector_init(&s->res[b], a, p->cols[p->ncols - 1].type, bt->nrows, true);
        for (uint32_t k = 0; k < bt->nrows; k++, r++) {
            s->rb[r] = (uint32_t)b;
            s->ri[r] = k;
        }
    }
    s->grp = ARENA_ARRAY(a, int64_t, n ? n : 1);
    s->gs = ARENA_ARRAY(a, int64_t, n ? n : 1);
    s->ge = ARENA_ARRAY(a, int64_t, n ? n : 1);
    int nk = p->u.window.npart > p->u.window.norder ? p->u.window.npart : p->u.window.norder;
    Vector *tmp = ARENA_ARRAY(a, Vector, nk ? nk : 1);
    StrBuf key, prev, gkey, gprev;
    strbuf_init(&key);
    strbuf_init(&prev);
    strbuf_init(&gkey);
    strbuf_init(&gprev);
    int64_t ps = 0;
    rc = check_offsets(op, s, false);
    while (ps < n && rc == 0) {
        row_key(s, p->u.window.part, p->u.window.npart, ps, tmp, &prev);
        int64_t pe = ps + 1;
        while (pe < n) {
            row_key(s, p->u.window.part, p->u.window.npart, pe, tmp, &key);
            if (!same_bytes(&key, &prev))
                break;
            pe++;
        }
        partition_groups(s, p, ps, pe, tmp, &gkey, &gprev);
        rc = compute_partition(op, s, ps, pe);
        ps = pe;
    }
    strbuf_free(&key);
    strbuf_free(&prev);
    strbuf_free(&gkey);
    strbuf_free(&gprev);
    return rc;
}

static int window_next(ExOp *op, ExBatch **out)
{
    WindowState *s = op->state;
    if (!s->computed) {
        s->computed = true;
        if (window_compute(op, s) < 0)
            return -1;
    }
    if (s->emit >= s->rows.nbatches)
        return 0;
    const Batch *b = s->rows.batches[s->emit];
    uint32_t nc = b->ncols;
    Vector *cols = ARENA_ARRAY(&op->arena, Vector, nc + 1);
    memcpy(cols, b->cols, sizeof(Vector) * nc);
    cols[nc] = s->res[s->emit];
    s->emit++;
    op->out.b.nrows = b->nrows;
    op->out.b.ncols = nc + 1;
    op->out.b.cols = cols;
    op->out.sel = NULL;
    op->out.n = b->nrows;
    *out = &op->out;
    return 1;
}

static void window_close(ExOp *op)
{
    WindowState *s = op->state;
    arena_destroy(&s->agg_arena);
    arena_destroy(&s->scratch);
}

ExOp *op_build_window(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(WindowState));
    WindowState *s = op->state;
    arena_init(&s->agg_arena, 16 * 1024);
    arena_init(&s->scratch, 16 * 1024);
    op->next = window_next;
    op->close = window_close;
    return op;
}

/* ------------------------------------------------------ generate_series */

typedef struct SeriesState {
    bool    started, done;
    int64_t next, stop, step;
    int64_t ordinal;    /* WITH ORDINALITY: the rows so far */
    /* unnest: the array (in the statement's arena) and where it is read */
    SlStr     arr;
    ArrayIter it;
} SeriesState;

/* unnest: the array's elements, read in place (the array is kept for
 * the statement). */
static int unnest_start(ExOp *op, SeriesState *s)
{
    EvalCtx ecx = op_eval_ctx(op);
    Vector arr;
    if (ex_eval(&ecx, op->plan->u.series.start, NULL, 1, &arr) < 0)
        return -1;
    s->arr.ptr = "";
    s->arr.len = 0;
    if (!vector_is_null(&arr, 0)) {
        s->arr.ptr = arena_memdup(op->cx->arena, arr.v.str[0].ptr, arr.v.str[0].len);
        s->arr.len = arr.v.str[0].len;
    }
    array_iter_init(&s->it, &s->arr);
    return 0;
}

/* The next batch of unnest's elements, in their column's type. */
static int unnest_next(ExOp *op, SeriesState *s, Vector *col, uint32_t *n)
{
    *n = 0;
    ArrayElem el;
    while (*n < EX_BATCH_ROWS && array_next(&s->it, &el))
        array_elem_value(&op->arena, col->type, &el, col, (*n)++);
    return 0;
}

static int series_start(ExOp *op, SeriesState *s)
{
    const Plan *p = op->plan;
    EvalCtx ecx = op_eval_ctx(op);
    Expr *args[3] = {p->u.series.start, p->u.series.stop, p->u.series.step};
    int64_t v[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) {
        if (args[k] == NULL)
            continue;
        Vector out;
        if (ex_eval(&ecx, args[k], NULL, 1, &out) < 0)
            return -1;
        if (vector_is_null(&out, 0)) {
            s->done = true;         /* a NULL argument: no rows */
            return 0;
        }
        v[k] = out.v.i64[0];
    }
    if (v[2] == 0)
        return sl_error(op->cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "step size cannot equal zero");
    s->next = v[0];
    s->stop = v[1];
    s->step = v[2];
    return 0;
}

static int series_next(ExOp *op, ExBatch **out)
{
    SeriesState *s = op->state;
    const Plan *p = op->plan;
    if (!s->started) {
        s->started = true;
        if ((p->u.series.unnest ? unnest_start(op, s) : series_start(op, s)) < 0)
            return -1;
    }
    Vector *col = ARENA_NEW(&op->arena, Vector);
    vector_init(col, &op->arena, p->cols[0].type, EX_BATCH_ROWS, p->u.series.unnest);
    uint32_t n = 0;
    if (p->u.series.unnest && unnest_next(op, s, col, &n) < 0)
        return -1;
    while (!p->u.series.unnest && !s->done && n < EX_BATCH_ROWS) {
        if (s->step > 0 ? s->next > s->stop : s->next < s->stop) {
            s->done = true;
            break;
        }
        if (col->type.id == TYPE_INT4)
            col->v.i32[n++] = (int32_t)s->next;
        else
            col->v.i64[n++] = s->next;
        if (__builtin_add_overflow(s->next, s->step, &s->next))
            s->done = true;
    }
    if (n == 0)
        return 0;
    col->len = n;
    op->out.b.nrows = n;
    op->out.b.ncols = 1;
    op->out.b.cols = col;
    if (p->u.series.ordinality) {
        /* the row numbers, from 1, beside the values */
        Vector *cols = ARENA_ARRAY(&op->arena, Vector, 2);
        cols[0] = *col;
        vector_init(&cols[1], &op->arena, sl_type(TYPE_INT8), n, false);
        for (uint32_t i = 0; i < n; i++)
            cols[1].v.i64[i] = ++s->ordinal;
        op->out.b.ncols = 2;
        op->out.b.cols = cols;
    }
    op->out.sel = NULL;
    op->out.n = n;
    *out = &op->out;
    return 1;
}

ExOp *op_build_series(ExCtx *cx, const Plan *p)
{
    ExOp *op = op_new(cx, p, sizeof(SeriesState));
    op->next = series_next;
    return op;
}
