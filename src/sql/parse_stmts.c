/*
 * parse_stmts.c -- the AST constructors for queries and statements that the
 * grammar's actions call (the expression constructors are in
 * parse_nodes.c).
 *
 *   make_values, values_add_row, make_setop, select_set_sort,
 *   select_set_limit, select_set_with, select_set_distinct_on,
 *   make_sort_by, make_cte, make_grouping_set, make_grouping_row  queries
 *   make_range_var_alias, make_range_subselect, make_range_function,
 *   range_function_set_ordinality, range_set_lateral,
 *   make_array_type, make_array_expr, make_array_multidim, make_array_slice,
 *   make_join,
 *   join_set_alias                                          FROM items
 *   make_sublink, make_sublink_op, make_set_to_default, func_set_filter,
 *   func_set_order, func_set_over, func_set_window,
 *   make_window_def, window_def_ref, window_def_name, make_frame,
 *   make_frame_bound                                        expression pieces
 *   select_set_windows                                      WINDOW clause
 *   make_column_def, make_constraint, make_watermark, make_def_elem,
 *   make_create, make_create_cq, make_create_view, make_drop, make_alter_cq, make_subscribe, make_backup,
 *   make_explain, make_explain_cq, make_show, make_variable_reset  DDL
 *   make_insert, make_on_conflict, make_update, make_delete,
 *   make_set_target                                         DML
 *
 * Like gram.y's insertSelectOptions, a second ORDER BY, LIMIT, OFFSET or
 * WITH on the same SELECT is a syntax error ("multiple ORDER BY clauses not
 * allowed").  Every node lives in the Parse's arena and records the byte
 * offset of the token it starts at.
 */
#include "sql/parser.h"

#define NEW_NODE(p, T, loc) ((T *)new_node((p), sizeof(T), T_##T, (loc)))

static Node *new_node(Parse *p, size_t size, NodeTag tag, int loc)
{
    Node *n = arena_zalloc(p->arena, size);
    n->tag = tag;
    n->location = loc;
    return n;
}

static void syntax_error(Parse *p, int loc, const char *msg)
{
    sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, loc, "%s", msg);
    p->failed = true;
}

/* ---------------------------------------------------------------- queries */

Node *make_values(Parse *p, int loc, List *row)
{
    SelectStmt *s = NEW_NODE(p, SelectStmt, loc);
    s->paren_loc = -1;
    s->values = list_append(p->arena, NULL, row);
    return &s->hdr;
}

Node *values_add_row(Parse *p, Node *values, List *row)
{
    SelectStmt *s = (SelectStmt *)values;
    s->values = list_append(p->arena, s->values, row);
    return values;
}

Node *make_setop(Parse *p, SetOpKind op, bool all, Node *l, Node *r)
{
    SelectStmt *s = NEW_NODE(p, SelectStmt, l->location);
    s->paren_loc = -1;
    s->op = op;
    s->all = all;
    s->larg = (SelectStmt *)l;
    s->rarg = (SelectStmt *)r;
    return &s->hdr;
}

Node *select_set_sort(Parse *p, Node *sel, List *sort)
{
    SelectStmt *s = (SelectStmt *)sel;
    if (sort == NULL)
        return sel;
    if (s->sort != NULL)
        syntax_error(p, ((Node *)list_nth(sort, 0))->location,
                     "multiple ORDER BY clauses not allowed");
    s->sort = sort;
    return sel;
}

Node *select_set_limit(Parse *p, Node *sel, LimitSpec lim)
{
    SelectStmt *s = (SelectStmt *)sel;
    if (lim.offset != NULL) {
        if (s->offset != NULL)
            syntax_error(p, lim.offset->location, "multiple OFFSET clauses not allowed");
        s->offset = lim.offset;
    }
    if (lim.limit != NULL) {
        if (s->limit != NULL)
            syntax_error(p, lim.limit->location, "multiple LIMIT clauses not allowed");
        s->limit = lim.limit;
    }
    return sel;
}

Node *select_set_with(Parse *p, Node *sel, WithSpec with)
{
    SelectStmt *s = (SelectStmt *)sel;
    if (s->with != NULL)
        syntax_error(p, with.loc, "multiple WITH clauses not allowed");
    s->with = with.ctes;
    s->recursive = with.recursive;
    s->hdr.location = with.loc;
    return sel;
}

Node *select_set_distinct_on(Parse *p, Node *sel, List *on)
{
    SL_UNUSED(p);
    SelectStmt *s = (SelectStmt *)sel;
    s->distinct = true;
    s->distinct_on = on;
    return sel;
}

/* (query): remembers the outermost parenthesis, where PostgreSQL points. */
Node *select_set_parens(Parse *p, Node *sel, int loc)
{
    SL_UNUSED(p);
    ((SelectStmt *)sel)->paren_loc = loc;
    return sel;
}

Node *make_sort_by(Parse *p, Node *e, SortDir dir, SortNulls nulls)
{
    SortBy *s = NEW_NODE(p, SortBy, e->location);
    s->node = e;
    s->dir = dir;
    s->nulls = nulls;
    return &s->hdr;
}

Node *make_grouping_set(Parse *p, GroupingSetKind kind, List *content, int loc)
{
    GroupingSet *g = NEW_NODE(p, GroupingSet, loc);
    g->kind = kind;
    g->content = content;
    return &g->hdr;
}

Node *make_grouping_row(Parse *p, Node *first, List *rest, int loc)
{
    List *l = list_append(p->arena, NULL, first);
    for (int i = 0; i < list_len(rest); i++)
        l = list_append(p->arena, l, list_nth(rest, i));
    return make_grouping_set(p, GROUPING_SET_SIMPLE, l, loc);
}

Node *make_cte(Parse *p, const Token *name, List *cols, Node *query, int materialize,
               int search_cycle_loc)
{
    CommonTableExpr *c = NEW_NODE(p, CommonTableExpr, name->offset);
    c->name = name->z;
    c->colnames = cols;
    c->query = (SelectStmt *)query;
    c->materialize = (CTEMaterialize)materialize;
    c->search_cycle_loc = search_cycle_loc;
    return &c->hdr;
}

List *make_name_strs(Parse *p, List *l, const Token *t)
{
    return list_append(p->arena, l, (void *)t->z);
}

/* ------------------------------------------------------------ FROM items */

Node *make_range_var_alias(Parse *p, Names names, AliasSpec alias)
{
    RangeVar *r = (RangeVar *)make_range_var(p, names, NULL);
    r->alias = alias.name;
    r->colnames = alias.cols;
    return &r->hdr;
}

Node *make_range_subselect(Parse *p, Node *sub, AliasSpec alias, int loc)
{
    RangeSubselect *r = NEW_NODE(p, RangeSubselect, loc);
    r->subquery = (SelectStmt *)sub;
    r->alias = alias.name;
    r->colnames = alias.cols;
    return &r->hdr;
}

Node *make_range_function(Parse *p, Node *func, AliasSpec alias)
{
    RangeFunction *r = NEW_NODE(p, RangeFunction, func->location);
    r->func = (FuncCall *)func;
    r->alias = alias.name;
    r->colnames = alias.cols;
    return &r->hdr;
}

Node *range_set_lateral(Parse *p, Node *r)
{
    SL_UNUSED(p);
    if (IS_A(r, RangeSubselect))
        ((RangeSubselect *)r)->lateral = true;
    else
        ((RangeFunction *)r)->lateral = true;
    return r;
}

Node *range_function_set_ordinality(Parse *p, Node *rf)
{
    SL_UNUSED(p);
    ((RangeFunction *)rf)->ordinality = true;
    return rf;
}

Node *make_array_type(Parse *p, Node *type)
{
    SL_UNUSED(p);
    ((TypeName *)type)->array = true;
    return type;
}

Node *make_array_expr(Parse *p, List *elems, int loc)
{
    A_Expr *e = (A_Expr *)make_aexpr(p, AEXPR_ARRAY, "ARRAY", NULL, NULL, loc);
    e->list = elems;
    return &e->hdr;
}

Node *make_array_multidim(Parse *p, int loc)
{
    return make_aexpr(p, AEXPR_ARRAY, "ARRAY[[]]", NULL, NULL, loc);
}

Node *make_array_slice(Parse *p, Node *arr, Node *lo, Node *hi, int loc)
{
    A_Expr *e = (A_Expr *)make_aexpr(p, AEXPR_SLICE, "[:]", arr, lo, loc);
    e->escape = hi;
    return &e->hdr;
}

Node *make_join(Parse *p, JoinType type, bool natural, Node *l, Node *r, JoinQual q)
{
    JoinExpr *j = NEW_NODE(p, JoinExpr, l->location);
    j->jointype = type;
    j->natural = natural;
    j->larg = l;
    j->rarg = r;
    j->using_names = q.using_names;
    j->quals = q.on;
    return &j->hdr;
}

Node *join_set_alias(Parse *p, Node *join, AliasSpec alias)
{
    SL_UNUSED(p);
    JoinExpr *j = (JoinExpr *)join;
    j->alias = alias.name;
    j->colnames = alias.cols;
    return join;
}

/* ----------------------------------------------------- expression pieces */

Node *make_sublink(Parse *p, SubLinkType type, bool negate, Node *test, Node *sub, int loc)
{
    SubLink *s = NEW_NODE(p, SubLink, loc);
    s->type = type;
    s->negate = negate;
    s->testexpr = test;
    s->subselect = (SelectStmt *)sub;
    return &s->hdr;
}

/* x op ANY (subquery) (SUBLINK_IN), x op ALL (subquery) (SUBLINK_ALL). */
Node *make_sublink_op(Parse *p, SubLinkType type, const char *op, Node *test, Node *sub, int loc)
{
    SubLink *s = (SubLink *)make_sublink(p, type, false, test, sub, loc);
    s->op = op;
    return &s->hdr;
}

Node *make_set_to_default(Parse *p, const Token *t)
{
    return &NEW_NODE(p, SetToDefault, t->offset)->hdr;
}

Node *func_set_filter(Parse *p, Node *func, Node *filter)
{
    SL_UNUSED(p);
    if (filter != NULL && IS_A(func, FuncCall))
        ((FuncCall *)func)->filter = filter;
    return func;
}

Node *func_set_over(Parse *p, Node *func, List *partition, List *order)
{
    SL_UNUSED(p);
    if (IS_A(func, FuncCall)) {
        FuncCall *f = (FuncCall *)func;
        f->over = true;
        f->over_partition = partition;
        f->over_order = order;
    }
    return func;
}

Node *func_set_window(Parse *p, Node *func, WindowDef *w)
{
    func = func_set_over(p, func, w->partition, w->order);
    if (IS_A(func, FuncCall)) {
        FuncCall *f = (FuncCall *)func;
        f->over_frame = w->frame;
        f->over_ref = w->refname;
        f->over_bare = w->bare;
        f->over_loc = w->location;
    }
    return func;
}

/* OVER (refname PARTITION BY ... ORDER BY ... frame), or with only refname
 * and no parentheses (loc is then the name's): OVER name. */
WindowDef *make_window_def(Parse *p, const Token *refname, List *partition, List *order,
                           WindowFrameDef *frame, int loc)
{
    WindowDef *w = ARENA_NEW(p->arena, WindowDef);
    w->refname = refname != NULL ? refname->z : NULL;
    w->bare = refname != NULL && refname->offset == loc;
    w->partition = partition;
    w->order = order;
    w->frame = frame;
    w->location = loc;
    return w;
}

/* OVER ([refname] ...): the window's '(' and the name it starts from. */
WindowDef *window_def_ref(Parse *p, WindowDef *w, const Token *refname, int loc)
{
    SL_UNUSED(p);
    w->refname = refname != NULL ? refname->z : NULL;
    w->location = loc;
    return w;
}

WindowDef *window_def_name(Parse *p, WindowDef *w, const Token *name)
{
    SL_UNUSED(p);
    w->name = name->z;
    w->location = name->offset;
    return w;
}

Node *select_set_windows(Parse *p, Node *sel, List *windows)
{
    SL_UNUSED(p);
    ((SelectStmt *)sel)->windows = windows;
    return sel;
}

/* A frame clause as written; the analyzer checks its bounds (42P20). */
WindowFrameDef *make_frame(Parse *p, int mode, const FrameBound *start, const FrameBound *end,
                           int exclude)
{
    WindowFrameDef *f = ARENA_NEW(p->arena, WindowFrameDef);
    f->mode = (FrameMode)mode;
    f->start = *start;
    if (end != NULL) {
        f->end = *end;
    } else {
        f->end.kind = BOUND_CURRENT_ROW;
        f->end.location = -1;
    }
    f->exclude = (FrameExclude)exclude;
    f->location = start->location;
    return f;
}

FrameBound make_frame_bound(Parse *p, FrameBoundKind kind, Node *offset, int location)
{
    SL_UNUSED(p);
    FrameBound b = {kind, offset, location};
    return b;
}

Node *func_set_order(Parse *p, Node *func, List *order)
{
    SL_UNUSED(p);
    ((FuncCall *)func)->agg_order = order;
    return func;
}

Node *func_set_within_group(Parse *p, Node *func, List *order, int loc)
{
    FuncCall *f = (FuncCall *)func;
    if (f->agg_order != NULL) {
        /* gram.y's own refusal */
        sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, loc,
                    "cannot use multiple ORDER BY clauses with WITHIN GROUP");
        p->failed = true;
    }
    f->agg_order = order;
    f->agg_within_group = true;
    return func;
}

/* ------------------------------------------------------------------- DDL */

Node *make_column_def(Parse *p, const Token *name, Node *type, List *constraints)
{
    ColumnDef *c = NEW_NODE(p, ColumnDef, name->offset);
    c->name = name->z;
    c->type = (TypeName *)type;
    c->constraints = constraints;
    return &c->hdr;
}

Node *make_constraint(Parse *p, ConstrType type, int loc, List *key_nodes)
{
    Constraint *c = NEW_NODE(p, Constraint, loc);
    c->type = type;
    c->key_nodes = key_nodes;
    for (int i = 0; i < list_len(key_nodes); i++) {
        ColumnRef *r = list_nth(key_nodes, i);
        c->keys = list_append(p->arena, c->keys, list_nth(r->names, 0));
    }
    return &c->hdr;
}

Node *make_default(Parse *p, int loc, Node *expr)
{
    Node *c = make_constraint(p, CONSTR_DEFAULT, loc, NULL);
    ((Constraint *)c)->expr = expr;
    return c;
}

Node *make_alter_cmd(Parse *p, AlterCmd cmd, const Token *column, const Token *newname)
{
    AlterTableStmt *a = NEW_NODE(p, AlterTableStmt, column ? column->offset : newname->offset);
    a->cmd = cmd;
    a->column = column ? column->z : NULL;
    a->newname = newname ? newname->z : NULL;
    a->cmd_loc = a->hdr.location;
    return &a->hdr;
}

/* An action ALTER TABLE does not run: what names it, or its first word. */
Node *make_alter_refused(Parse *p, const Token *t, const char *what)
{
    AlterTableStmt *a = NEW_NODE(p, AlterTableStmt, t->offset);
    a->cmd = ALTER_REFUSED;
    if (what == NULL) {
        char *w = arena_strndup(p->arena, t->z, (size_t)t->n);
        for (char *c = w; *c; c++)
            if (*c >= 'a' && *c <= 'z')
                *c = (char)(*c - ('a' - 'A'));
        what = w;
    }
    a->refused = what;
    a->cmd_loc = t->offset;
    return &a->hdr;
}

Node *make_alter_table(Parse *p, const Token *t, ObjectKind kind, bool missing_ok, Names name,
                       Node *cmd)
{
    AlterTableStmt *a = (AlterTableStmt *)cmd;
    a->hdr.location = t->offset;
    a->kind = kind;
    a->missing_ok = missing_ok;
    a->relation = (RangeVar *)make_range_var(p, name, NULL);
    return &a->hdr;
}

Node *make_check(Parse *p, int loc, Node *expr)
{
    Node *c = make_constraint(p, CONSTR_CHECK, loc, NULL);
    ((Constraint *)c)->expr = expr;
    return c;
}

Node *constraint_named(Parse *p, Node *constraint, const Token *name)
{
    SL_UNUSED(p);
    ((Constraint *)constraint)->conname = name->z;
    return constraint;
}

Node *make_watermark(Parse *p, const Token *w, const Token *col, Node *expr)
{
    WatermarkDef *d = NEW_NODE(p, WatermarkDef, w->offset);
    d->column = col->z;
    d->column_loc = col->offset;
    d->expr = expr;
    return &d->hdr;
}

Node *make_def_elem(Parse *p, const Token *name, Node *arg)
{
    DefElem *d = NEW_NODE(p, DefElem, name->offset);
    d->name = name->z;
    d->arg = arg;
    return &d->hdr;
}

Node *make_create(Parse *p, const Token *t, ObjectKind kind, bool if_not_exists, Names name,
                  List *elts, List *options)
{
    CreateStmt *c = NEW_NODE(p, CreateStmt, t->offset);
    c->kind = kind;
    c->relation = (RangeVar *)make_range_var(p, name, NULL);
    c->if_not_exists = if_not_exists;
    c->elts = elts;
    c->options = options;
    return &c->hdr;
}

Node *make_create_cq(Parse *p, const Token *t, bool or_replace, bool if_not_exists, Names name,
                     Node *into, List *options, Node *query)
{
    CreateCqStmt *c = NEW_NODE(p, CreateCqStmt, t->offset);
    c->name = (RangeVar *)make_range_var(p, name, NULL);
    c->or_replace = or_replace;
    c->if_not_exists = if_not_exists;
    c->into = (RangeVar *)into;
    c->options = options;
    c->query = (SelectStmt *)query;
    return &c->hdr;
}

Node *make_create_view(Parse *p, const Token *t, bool or_replace, Names name, List *cols,
                       Node *query)
{
    CreateViewStmt *c = NEW_NODE(p, CreateViewStmt, t->offset);
    c->name = (RangeVar *)make_range_var(p, name, NULL);
    c->or_replace = or_replace;
    c->colnames = cols;
    c->query = (SelectStmt *)query;
    return &c->hdr;
}

Node *make_drop(Parse *p, const Token *t, ObjectKind kind, bool missing_ok, List *names,
                bool cascade)
{
    DropStmt *d = NEW_NODE(p, DropStmt, t->offset);
    d->kind = kind;
    d->objects = names;
    d->missing_ok = missing_ok;
    d->cascade = cascade;
    return &d->hdr;
}

Node *make_copy(Parse *p, const Token *t, Names name, List *cols, Node *query, bool to,
                const Token *target, List *options)
{
    CopyStmt *c = NEW_NODE(p, CopyStmt, t->offset);
    c->relation = query == NULL ? (RangeVar *)make_range_var(p, name, NULL) : NULL;
    c->columns = cols;
    if (IS_A(query, SubscribeStmt))
        c->subscribe = (SubscribeStmt *)query;
    else
        c->query = (SelectStmt *)query;
    c->to = to;
    c->target = target->z;
    c->target_loc = target->offset;
    c->options = options;
    return &c->hdr;
}

Node *make_alter_cq(Parse *p, const Token *t, Names name, bool pause)
{
    AlterCqStmt *a = NEW_NODE(p, AlterCqStmt, t->offset);
    a->name = (RangeVar *)make_range_var(p, name, NULL);
    a->pause = pause;
    return &a->hdr;
}

Node *make_backup(Parse *p, const Token *t, const Token *target)
{
    BackupStmt *b = NEW_NODE(p, BackupStmt, t->offset);
    b->target = target->z;
    b->target_loc = target->offset;
    return &b->hdr;
}

Node *make_subscribe(Parse *p, const Token *t, Names name, List *options)
{
    SubscribeStmt *s = NEW_NODE(p, SubscribeStmt, t->offset);
    s->name = (RangeVar *)make_range_var(p, name, NULL);
    s->options = options;
    return &s->hdr;
}

Node *make_explain(Parse *p, const Token *t, Node *stmt, bool analyze)
{
    ExplainStmt *e = NEW_NODE(p, ExplainStmt, t->offset);
    e->stmt = stmt;
    e->analyze = analyze;
    return &e->hdr;
}

Node *make_explain_cq(Parse *p, const Token *t, Names name)
{
    ExplainStmt *e = NEW_NODE(p, ExplainStmt, t->offset);
    e->cq = (RangeVar *)make_range_var(p, name, NULL);
    return &e->hdr;
}

Node *make_show(Parse *p, const Token *t, const char *name)
{
    ShowStmt *s = NEW_NODE(p, ShowStmt, t->offset);
    s->name = name;
    return &s->hdr;
}

Node *make_variable_reset(Parse *p, const Token *t, const char *name)
{
    VariableSetStmt *s = NEW_NODE(p, VariableSetStmt, t->offset);
    s->name = name;
    s->is_reset = true;
    return &s->hdr;
}

Node *make_unsupported2(Parse *p, const Token *t, const Token *t2)
{
    UnsupportedStmt *s = (UnsupportedStmt *)make_unsupported(p, t);
    char *cmd = arena_printf(p->arena, "%s %.*s", s->command, t2->n, t2->z);
    for (char *c = cmd; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - ('a' - 'A'));
    s->command = cmd;
    return &s->hdr;
}

/* ------------------------------------------------------------------- DML */

Node *make_insert(Parse *p, const Token *t, Node *rel, List *cols, Node *select,
                  Node *on_conflict, List *returning)
{
    InsertStmt *s = NEW_NODE(p, InsertStmt, t->offset);
    s->relation = (RangeVar *)rel;
    s->cols = cols;
    s->select = (SelectStmt *)select;
    s->on_conflict = (OnConflictClause *)on_conflict;
    s->returning = returning;
    return &s->hdr;
}

Node *make_on_conflict(Parse *p, const Token *t, OnConflictAction action, List *infer,
                       List *targets, Node *where)
{
    OnConflictClause *c = NEW_NODE(p, OnConflictClause, t->offset);
    c->action = action;
    c->infer = infer;
    c->targets = targets;
    c->where = where;
    return &c->hdr;
}

Node *make_update(Parse *p, const Token *t, Node *rel, List *targets, List *from, Node *where,
                  List *returning)
{
    UpdateStmt *s = NEW_NODE(p, UpdateStmt, t->offset);
    s->relation = (RangeVar *)rel;
    s->targets = targets;
    s->from = from;
    s->where = where;
    s->returning = returning;
    return &s->hdr;
}

Node *make_delete(Parse *p, const Token *t, Node *rel, List *using_list, Node *where,
                  List *returning)
{
    DeleteStmt *s = NEW_NODE(p, DeleteStmt, t->offset);
    s->relation = (RangeVar *)rel;
    s->using_list = using_list;
    s->where = where;
    s->returning = returning;
    return &s->hdr;
}

/* col = expr in SET: a ResTarget named after the column, at the column. */
Node *make_set_target(Parse *p, const Token *col, Node *val)
{
    ResTarget *r = NEW_NODE(p, ResTarget, col->offset);
    r->name = col->z;
    r->val = val;
    return &r->hdr;
}
