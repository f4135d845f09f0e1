/*
 * explain.c -- the EXPLAIN text of a logical plan, and expressions as SQL.
 *
 *   plan_explain          a query's plan as lines, PostgreSQL's shape:
 *                         "Node", then "  ->  Child" indented six more per
 *                         level, with detail lines ("Filter: ...") under
 *                         each node
 *   plan_explain_modify   the same under "Insert on t" / "Update on t" /
 *                         "Delete on t"
 *   plan_expr_deparse     an expression as text, columns named after the
 *                         input's columns ("u.score"), operators in
 *                         parentheses as PostgreSQL prints them
 *   plan_agg_call_deparse "count(*)", "sum(DISTINCT x) FILTER (WHERE ...)"
 *
 * A Filter right above a scan or an aggregate is printed as that node's
 * "Filter:" line, as PostgreSQL does; every other node is printed as it is
 * in the plan.  There are no costs: this is the logical plan.
 */
#include "sluice/plan.h"

#include <stdarg.h>
#include <stdio.h>

static void deparse(const Expr *e, const ColumnDesc *cols, const char *const *quals,
                    StrBuf *out);

static bool needs_quotes(const char *name)
{
    if (strchr(name, '(') != NULL)
        return false;   /* an aggregate's or expression's own text */
    if (name[0] == '\0' || (name[0] >= '0' && name[0] <= '9'))
        return true;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return true;
    return false;
}

static void put_name(StrBuf *out, const char *name)
{
    if (!needs_quotes(name)) {
        strbuf_puts(out, name);
        return;
    }
    strbuf_putc(out, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            strbuf_putc(out, '"');
        strbuf_putc(out, *p);
    }
    strbuf_putc(out, '"');
}

static void put_const(const Expr *e, StrBuf *out)
{
    const Vector *v = &e->value;
    if (vector_is_null(v, 0)) {
        strbuf_puts(out, "NULL");
        return;
    }
    SlTypeId t = e->type.id;
    StrBuf txt;
    strbuf_init(&txt);
    value_format_text(v, 0, &txt);
    switch (t) {
    case TYPE_INT2:
    case TYPE_INT4:
    case TYPE_INT8:
    case TYPE_NUMERIC:
    case TYPE_FLOAT8:
    case TYPE_BOOL:
        if (txt.len > 0 && txt.data[0] == '-') {
            strbuf_putc(out, '(');
            strbuf_append(out, txt.data, txt.len);
            strbuf_putc(out, ')');
        } else {
            strbuf_append(out, txt.data ? txt.data : "", txt.len);
        }
        break;
    default:
        strbuf_putc(out, '\'');
        for (size_t i = 0; i < txt.len; i++) {
            if (txt.data[i] == '\'')
                strbuf_putc(out, '\'');
            strbuf_putc(out, txt.data[i]);
        }
        strbuf_putc(out, '\'');
        if (t != TYPE_TEXT && t != TYPE_UNKNOWN) {
            char buf[64];
            strbuf_printf(out, "::%s", type_format(e->type, buf, sizeof(buf)));
        }
        break;
    }
    strbuf_free(&txt);
}

static void put_args(const Expr *e, int from, const ColumnDesc *cols, const char *const *quals,
                     StrBuf *out)
{
    for (int i = from; i < e->nargs; i++) {
        if (i > from)
            strbuf_puts(out, ", ");
        deparse(e->args[i], cols, quals, out);
    }
}

static void put_joined(const Expr *e, const char *sep, const ColumnDesc *cols,
                       const char *const *quals, StrBuf *out)
{
    strbuf_putc(out, '(');
    for (int i = 0; i < e->nargs; i++) {
        if (i > 0)
            strbuf_puts(out, sep);
        deparse(e->args[i], cols, quals, out);
    }
    strbuf_putc(out, ')');
}

static void deparse(const Expr *e, const ColumnDesc *cols, const char *const *quals, StrBuf *out)
{
    static const char *const booltests[] = {"IS TRUE", "IS NOT TRUE", "IS FALSE",
                                            "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN"};
    char buf[64];
    switch (e->kind) {
    case EXPR_COLUMN:
        if (cols == NULL || e->index < 0) {
            strbuf_printf(out, "$col%d", e->index);
            break;
        }
        if (quals != NULL && quals[e->index] != NULL) {
            put_name(out, quals[e->index]);
            strbuf_putc(out, '.');
        }
        put_name(out, cols[e->index].name);
        break;
    case EXPR_CONST:
        put_const(e, out);
        break;
    case EXPR_PARAM:
        strbuf_printf(out, "$%d", e->index + 1);
        break;
    case EXPR_OUTER:
        strbuf_printf(out, "$outer%d", e->index + 1);
        break;
    case EXPR_FUNC:
        if (e->fn->is_op && e->nargs == 2) {
            strbuf_putc(out, '(');
            deparse(e->args[0], cols, quals, out);
            strbuf_printf(out, " %s ", e->fn->name);
            deparse(e->args[1], cols, quals, out);
            strbuf_putc(out, ')');
        } else if (e->fn->is_op) {
            strbuf_printf(out, "(%s ", e->fn->name);
            deparse(e->args[0], cols, quals, out);
            strbuf_putc(out, ')');
        } else {
            const char *name = e->fn->name;
            if (strcmp(name, "like escape") == 0 || strcmp(name, "ilike escape") == 0) {
                strbuf_putc(out, '(');
                deparse(e->args[0], cols, quals, out);
                strbuf_printf(out, " %s%s ", e->negate ? "NOT " : "",
                              name[0] == 'i' ? "ILIKE" : "LIKE");
                deparse(e->args[1], cols, quals, out);
                strbuf_puts(out, " ESCAPE ");
                deparse(e->args[2], cols, quals, out);
                strbuf_putc(out, ')');
                break;
            }
            strbuf_printf(out, "%s(", name);
            put_args(e, 0, cols, quals, out);
            strbuf_putc(out, ')');
        }
        break;
    case EXPR_CAST: {
        const Expr *a = e->args[0];
        bool simple = a->kind == EXPR_COLUMN || a->kind == EXPR_CONST || a->kind == EXPR_PARAM ||
                      (a->kind == EXPR_FUNC && !a->fn->is_op) ||
                      (a->kind == EXPR_SUBPLAN && a->subkind != SUBLINK_EXISTS);
        if (!simple)
            strbuf_putc(out, '(');
        deparse(a, cols, quals, out);
        if (!simple)
            strbuf_putc(out, ')');
        strbuf_printf(out, "::%s", type_format(e->type, buf, sizeof(buf)));
        break;
    }
    case EXPR_AND:
        put_joined(e, " AND ", cols, quals, out);
        break;
    case EXPR_OR:
        put_joined(e, " OR ", cols, quals, out);
        break;
    case EXPR_NOT:
        strbuf_puts(out, "(NOT ");
        deparse(e->args[0], cols, quals, out);
        strbuf_putc(out, ')');
        break;
    case EXPR_NULLTEST:
        strbuf_putc(out, '(');
        deparse(e->args[0], cols, quals, out);
        strbuf_puts(out, e->negate ? " IS NOT NULL)" : " IS NULL)");
        break;
    case EXPR_BOOLTEST:
        strbuf_putc(out, '(');
        deparse(e->args[0], cols, quals, out);
        strbuf_printf(out, " %s)", booltests[e->subkind]);
        break;
    case EXPR_CASE: {
        int npairs = (e->nargs - (e->has_else ? 1 : 0)) / 2;
        strbuf_puts(out, "CASE");
        for (int i = 0; i < npairs; i++) {
            strbuf_puts(out, " WHEN ");
            deparse(e->args[2 * i], cols, quals, out);
            strbuf_puts(out, " THEN ");
            deparse(e->args[2 * i + 1], cols, quals, out);
        }
        if (e->has_else) {
            strbuf_puts(out, " ELSE ");
            deparse(e->args[e->nargs - 1], cols, quals, out);
        }
        strbuf_puts(out, " END");
        break;
    }
    case EXPR_COALESCE:
        strbuf_puts(out, "COALESCE(");
        put_args(e, 0, cols, quals, out);
        strbuf_putc(out, ')');
        break;
    case EXPR_MINMAX:
        strbuf_puts(out, e->negate ? "LEAST(" : "GREATEST(");
        put_args(e, 0, cols, quals, out);
        strbuf_putc(out, ')');
        break;
    case EXPR_NULLIF:
        strbuf_puts(out, "NULLIF(");
        put_args(e, 1, cols, quals, out);
        strbuf_putc(out, ')');
        break;
    case EXPR_DISTINCT:
        strbuf_putc(out, '(');
        deparse(e->args[0], cols, quals, out);
        strbuf_puts(out, e->negate ? " IS NOT DISTINCT FROM " : " IS DISTINCT FROM ");
        deparse(e->args[1], cols, quals, out);
        strbuf_putc(out, ')');
        break;
    case EXPR_SUBPLAN:
        if (e->subplan != NULL) {
            strbuf_puts(out, e->subkind == SUBLINK_EXISTS ? "EXISTS(SubPlan)"
                             : e->subkind == SUBLINK_ARRAY ? "ARRAY(SubPlan)" : "(SubPlan)");
        } else if (e->subkind == SUBLINK_IN || e->subkind == SUBLINK_ALL) {
            strbuf_putc(out, '(');
            if (e->negate)
                strbuf_puts(out, "NOT ");
            deparse(e->args[0], cols, quals, out);
            if (e->subkind == SUBLINK_IN && strcmp(e->fn->name, "=") == 0)
                strbuf_printf(out, " IN (InitPlan %d))", e->index + 1);
            else
                strbuf_printf(out, " %s %s (InitPlan %d))", e->fn->name,
                              e->subkind == SUBLINK_ALL ? "ALL" : "ANY", e->index + 1);
        } else if (e->subkind == SUBLINK_EXISTS) {
            strbuf_printf(out, "EXISTS(InitPlan %d)", e->index + 1);
        } else {
            strbuf_printf(out, "(InitPlan %d)", e->index + 1);
        }
        break;
    }
}

void plan_expr_deparse(const Expr *e, const ColumnDesc *cols, const char *const *quals,
                       StrBuf *out)
{
    deparse(e, cols, quals, out);
}

void plan_agg_call_deparse(const AggCall *c, const ColumnDesc *cols, const char *const *quals,
                           StrBuf *out)
{
    strbuf_printf(out, "%s(", c->name);
    if (c->star)
        strbuf_putc(out, '*');
    if (c->distinct)
        strbuf_puts(out, "DISTINCT ");
    for (int i = 0; i < c->nargs; i++) {
        if (i > 0)
            strbuf_puts(out, ", ");
        deparse(c->args[i], cols, quals, out);
    }
    for (int i = 0; i < c->norder; i++) {
        strbuf_puts(out, i == 0 ? " ORDER BY " : ", ");
        deparse(c->order[i].expr, cols, quals, out);
        if (c->order[i].desc)
            strbuf_puts(out, " DESC");
        if (c->order[i].nulls_first != c->order[i].desc)
            strbuf_puts(out, c->order[i].nulls_first ? " NULLS FIRST" : " NULLS LAST");
    }
    strbuf_putc(out, ')');
    if (c->filter != NULL) {
        strbuf_puts(out, " FILTER (WHERE ");
        deparse(c->filter, cols, quals, out);
        strbuf_putc(out, ')');
    }
}

/* ------------------------------------------------------------- EXPLAIN */

typedef struct Explain {
    Arena *a;
    List **lines;
    StrBuf line;
    int    shift;       /* extra indentation (under an InitPlan's label) */
} Explain;

static void emit(Explain *x)
{
    *x->lines = list_append(x->a, *x->lines, arena_strndup(x->a, x->line.data, x->line.len));
    strbuf_reset(&x->line);
}

static void indent(Explain *x, int n)
{
    n += x->shift;
    for (int i = 0; i < n; i++)
        strbuf_putc(&x->line, ' ');
}

/* Starts a node's line at depth d. */
static void node_line(Explain *x, int depth, const char *fmt, ...) SL_PRINTF(3, 4);
static void node_line(Explain *x, int depth, const char *fmt, ...)
{
    if (depth > 0) {
        indent(x, 2 + 6 * (depth - 1));
        strbuf_puts(&x->line, "->  ");
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    strbuf_puts(&x->line, buf);
    emit(x);
}

/* A detail line of a node at depth d: label, then the text in b. */
static void detail(Explain *x, int depth, const char *label, StrBuf *b)
{
    indent(x, 2 + 6 * depth);
    strbuf_printf(&x->line, "%s: ", label);
    strbuf_append(&x->line, b->data ? b->data : "", b->len);
    emit(x);
    strbuf_reset(b);
}

static void expr_detail(Explain *x, int depth, const char *label, const Expr *e, const Plan *in,
                        bool label_parens)
{
    StrBuf b;
    strbuf_init(&b);
    const ColumnDesc *cols = in ? in->cols : NULL;
    const char *const *quals = in ? in->quals : NULL;
    bool parens = label_parens &&
                  (e->kind == EXPR_COLUMN || e->kind == EXPR_CONST || e->kind == EXPR_PARAM ||
                   (e->kind == EXPR_FUNC && !e->fn->is_op) || e->kind == EXPR_CAST);
    if (parens)
        strbuf_putc(&b, '(');
    deparse(e, cols, quals, &b);
    if (parens)
        strbuf_putc(&b, ')');
    detail(x, depth, label, &b);
    strbuf_free(&b);
}

/* Column c of p by name; when p is a Project, the expression it computes
 * (PostgreSQL prints sort keys so). */
static void col_name(StrBuf *b, const Plan *p, int c)
{
    if (p->kind == PLAN_PROJECT && p->child != NULL) {
        const Expr *e = p->u.project.exprs[c];
        bool simple = e->kind == EXPR_COLUMN || e->kind == EXPR_CONST;
        if (!simple)
            strbuf_putc(b, '(');
        deparse(e, p->child->cols, p->child->quals, b);
        if (!simple)
            strbuf_putc(b, ')');
        return;
    }
    if (p->quals[c] != NULL) {
        put_name(b, p->quals[c]);
        strbuf_putc(b, '.');
    }
    put_name(b, p->cols[c].name);
}

static const char *join_name(JoinType t)
{
    switch (t) {
    case JOIN_LEFT:  return " Left";
    case JOIN_RIGHT: return " Right";
    case JOIN_FULL:  return " Full";
    default:         return "";
    }
}

static void format_usec(int64_t us, StrBuf *b)
{
    SlInterval iv = {us % INT64_C(86400000000), (int32_t)(us / INT64_C(86400000000)), 0};
    Vector v = {.type = {TYPE_INTERVAL, -1, TYPE_UNKNOWN}, .len = 1, .nulls = NULL};
    v.v.iv = &iv;
    strbuf_putc(b, '\'');
    value_format_text(&v, 0, b);
    strbuf_putc(b, '\'');
}

static void explain_node(Explain *x, const Plan *p, int depth, const InitPlan *init, int ninit);

static void explain_init(Explain *x, int depth, const InitPlan *init, int ninit)
{
    for (int i = 0; i < ninit; i++) {
        indent(x, 2 + 6 * depth);
        strbuf_printf(&x->line, "InitPlan %d", i + 1);
        emit(x);
        /* PostgreSQL's layout: the subplan two columns right of its label */
        x->shift += 2;
        explain_node(x, init[i].plan, depth + 1, NULL, 0);
        x->shift -= 2;
    }
}

static void explain_node(Explain *x, const Plan *p, int depth, const InitPlan *init, int ninit)
{
    StrBuf b;
    strbuf_init(&b);
    const Plan *filter = NULL;
    if (p->kind == PLAN_FILTER && (p->child->kind == PLAN_SCAN || p->child->kind == PLAN_AGG)) {
        filter = p;
        p = p->child;
    }
    switch (p->kind) {
    case PLAN_SCAN: {
        const CatRelation *rel = p->u.scan.rel;
        const char *what = rel->kind == REL_STREAM ? "Stream Scan" : "Seq Scan";
        if (p->u.scan.alias && strcmp(p->u.scan.alias, rel->name) != 0)
            node_line(x, depth, "%s on %s %s", what, rel->name, p->u.scan.alias);
        else
            node_line(x, depth, "%s on %s", what, rel->name);
        break;
    }
    case PLAN_VALUES:
        if (p->ncols == 0 && p->u.values.nrows == 1)
            node_line(x, depth, "Result");
        else
            node_line(x, depth, "Values Scan (%d row%s)", p->u.values.nrows,
                      p->u.values.nrows == 1 ? "" : "s");
        break;
    case PLAN_FILTER:
        node_line(x, depth, "Filter");
        expr_detail(x, depth, "Filter", p->u.filter.cond, p->child, true);
        break;
    case PLAN_PROJECT:
        node_line(x, depth, "Project");
        for (int c = 0; c < p->ncols; c++) {
            if (c > 0)
                strbuf_puts(&b, ", ");
            deparse(p->u.project.exprs[c], p->child ? p->child->cols : NULL,
                    p->child ? p->child->quals : NULL, &b);
        }
        detail(x, depth, "Output", &b);
        break;
    case PLAN_AGG: {
        const WindowSpec *w = &p->u.agg.window;
        node_line(x, depth, "%s", p->u.agg.ngroups > 0 || w->kind != WINDOW_NONE
                                      ? "HashAggregate" : "Aggregate");
        for (int g = 0; g < p->u.agg.ngroups; g++) {
            if (g > 0)
                strbuf_puts(&b, ", ");
            deparse(p->u.agg.groups[g], p->child->cols, p->child->quals, &b);
        }
        if (p->u.agg.ngroups > 0)
            detail(x, depth, "Group Key", &b);
        if (w->kind != WINDOW_NONE) {
            strbuf_puts(&b, w->kind == WINDOW_SESSION ? "session(" :
                            w->kind == WINDOW_SLIDE ? "slide(" : "tumble(");
            deparse(w->time, p->child->cols, p->child->quals, &b);
            strbuf_puts(&b, ", ");
            format_usec(w->kind == WINDOW_SESSION ? w->gap_us : w->size_us, &b);
            if (w->kind == WINDOW_SLIDE) {
                strbuf_puts(&b, ", ");
                format_usec(w->slide_us, &b);
            }
            strbuf_putc(&b, ')');
            detail(x, depth, "Window", &b);
        }
        for (int k = 0; k < p->u.agg.naggs; k++) {
            if (k > 0)
                strbuf_puts(&b, ", ");
            plan_agg_call_deparse(&p->u.agg.aggs[k], p->child->cols, p->child->quals, &b);
        }
        if (p->u.agg.naggs > 0)
            detail(x, depth, "Aggregates", &b);
        break;
    }
    case PLAN_SORT:
        node_line(x, depth, "Sort");
        for (int k = 0; k < p->u.sort.nkeys; k++) {
            const SortKey *sk = &p->u.sort.keys[k];
            if (k > 0)
                strbuf_puts(&b, ", ");
            col_name(&b, p->child, sk->col);
            if (sk->desc)
                strbuf_puts(&b, " DESC");
            if (sk->nulls_first != sk->desc)
                strbuf_puts(&b, sk->nulls_first ? " NULLS FIRST" : " NULLS LAST");
        }
        detail(x, depth, "Sort Key", &b);
        break;
    case PLAN_LIMIT:
        node_line(x, depth, "Limit");
        if (p->u.limit.count)
            expr_detail(x, depth, "Count", p->u.limit.count, NULL, false);
        if (p->u.limit.offset)
            expr_detail(x, depth, "Offset", p->u.limit.offset, NULL, false);
        break;
    case PLAN_WINDOW:
        node_line(x, depth, "WindowAgg");
        break;
    case PLAN_SERIES:
        node_line(x, depth, "Function Scan on generate_series");
        break;
    case PLAN_PROJECT_SET:
        node_line(x, depth, "ProjectSet");
        break;
    case PLAN_DISTINCT:
        node_line(x, depth, "Distinct");
        for (int k = 0; k < p->u.distinct.nkeys; k++) {
            if (k > 0)
                strbuf_puts(&b, ", ");
            col_name(&b, p->child, p->u.distinct.keys[k]);
        }
        detail(x, depth, "Distinct Key", &b);
        break;
    case PLAN_JOIN: {
        bool hash = p->u.join.nkeys > 0;
        if (hash)
            node_line(x, depth, "Hash%s Join", join_name(p->u.join.type));
        else
            node_line(x, depth, "Nested Loop%s%s", join_name(p->u.join.type),
                      p->u.join.type == JOIN_INNER || p->u.join.type == JOIN_CROSS ? "" : " Join");
        if (hash) {
            if (p->u.join.nkeys > 1)
                strbuf_putc(&b, '(');
            for (int k = 0; k < p->u.join.nkeys; k++) {
                if (k > 0)
                    strbuf_puts(&b, " AND ");
                strbuf_putc(&b, '(');
                deparse(p->u.join.lkeys[k], p->child->cols, p->child->quals, &b);
                strbuf_puts(&b, " = ");
                deparse(p->u.join.rkeys[k], p->right->cols, p->right->quals, &b);
                strbuf_putc(&b, ')');
            }
            if (p->u.join.nkeys > 1)
                strbuf_putc(&b, ')');
            detail(x, depth, "Hash Cond", &b);
        }
        if (p->u.join.residual)
            expr_detail(x, depth, "Join Filter", p->u.join.residual, p, true);
        break;
    }
    case PLAN_LATERAL:
        node_line(x, depth, "Nested Loop%s", p->u.lateral.type == JOIN_LEFT ? " Left Join" : "");
        if (p->u.lateral.cond)
            expr_detail(x, depth, "Join Filter", p->u.lateral.cond, p, true);
        break;
    case PLAN_RECURSIVE:
        node_line(x, depth, "Recursive Union%s", p->u.recursive.all ? "" : " (distinct)");
        break;
    case PLAN_WORKTABLE:
        node_line(x, depth, "WorkTable Scan");
        break;
    case PLAN_CTE_SCAN:
        node_line(x, depth, "CTE Scan on %s", p->u.cte_scan.name);
        break;
    case PLAN_SETOP: {
        static const char *const names[] = {"", "Union", "Intersect", "Except"};
        if (p->u.setop.op == SETOP_UNION && p->u.setop.all)
            node_line(x, depth, "Append");
        else
            node_line(x, depth, "%s%s", names[p->u.setop.op], p->u.setop.all ? " All" : "");
        break;
    }
    }
    if (filter != NULL)
        expr_detail(x, depth, "Filter", filter->u.filter.cond, p, true);
    strbuf_free(&b);
    explain_init(x, depth, init, ninit);
    for (int i = 0; i < plan_nchildren(p); i++)
        explain_node(x, plan_child(p, i), depth + 1, NULL, 0);
}

void plan_explain(Arena *a, const Plan *p, const InitPlan *init, int ninit, List **lines)
{
    Explain x = {.a = a, .lines = lines};
    strbuf_init(&x.line);
    explain_node(&x, p, 0, init, ninit);
    strbuf_free(&x.line);
}

void plan_explain_modify(Arena *a, const ModifyPlan *m, const InitPlan *init, int ninit,
                         List **lines)
{
    static const char *const verbs[] = {"Insert", "Update", "Delete"};
    Explain x = {.a = a, .lines = lines};
    strbuf_init(&x.line);
    node_line(&x, 0, "%s on %s", verbs[m->kind], m->rel->name);
    if (m->conflict != ONCONFLICT_NONE) {
        StrBuf b;
        strbuf_init(&b);
        strbuf_puts(&b, m->conflict == ONCONFLICT_NOTHING ? "NOTHING" : "UPDATE");
        detail(&x, 0, "Conflict Resolution", &b);
        strbuf_free(&b);
    }
    explain_init(&x, 0, init, ninit);
    explain_node(&x, m->source, 1, NULL, 0);
    strbuf_free(&x.line);
}
