/*
 * parse_nodes.c -- the AST constructors the grammar's actions call.
 *
 *   make_select, make_transaction, make_variable_set, make_unsupported,
 *   make_unsupported_named, make_deallocate, make_savepoint,
 *   make_res_target, make_star_target, make_range_var       statements
 *   xact_modes_none, xact_modes_merge, xact_mode_isolation,
 *   xact_mode_read_only, xact_mode_deferrable   transaction modes (by value)
 *   make_integer ... make_minmax                              expressions
 *   make_type_name, make_generic_type, make_float_type, make_char_type   type names
 *   make_collate, make_qual_op                                COLLATE, OPERATOR()
 *   make_sql_func, make_int_const, make_typed_literal_qual    SQL-standard
 *                                     function syntax, INTERVAL '1' DAY
 *
 * Every constructor allocates in the Parse's arena and records the node's
 * byte offset in the query.  A few do what gram.y's helpers do: a minus sign
 * in front of a numeric literal is folded into the literal (doNegate), and
 * TRUE/FALSE/NULL are constants.
 */
#include "sql/parser.h"

#include <stdio.h>
#include <stdlib.h>

#define NEW_NODE(p, T, loc) ((T *)new_node((p), sizeof(T), T_##T, (loc)))

static Node *new_node(Parse *p, size_t size, NodeTag tag, int loc)
{
    Node *n = arena_zalloc(p->arena, size);
    n->tag = tag;
    n->location = loc;
    return n;
}

const char *token_str(Parse *p, const Token *t)
{
    SL_UNUSED(p);
    return t->z;
}

List *make_list1(Parse *p, void *item)
{
    return list_append(p->arena, NULL, item);
}

List *make_list_append(Parse *p, List *l, void *item)
{
    return list_append(p->arena, l, item);
}

Names make_name_list(Parse *p, const Token *t)
{
    Names n = {list_append(p->arena, NULL, (void *)t->z), t->offset};
    return n;
}

Names make_name_list_append(Parse *p, Names l, const Token *t)
{
    l.list = list_append(p->arena, l.list, (void *)t->z);
    return l;
}

/* ------------------------------------------------------------ statements */

Node *make_select(Parse *p, int loc, bool distinct, List *targets, List *from,
                  Node *where, List *group_by, Node *having)
{
    SelectStmt *s = NEW_NODE(p, SelectStmt, loc);
    s->paren_loc = -1;
    s->distinct = distinct;
    s->targets = targets;
    s->from = from;
    s->where = where;
    s->group_by = group_by;
    s->having = having;
    return &s->hdr;
}

Node *make_transaction(Parse *p, const Token *t, TransactionKind kind, XactModes modes,
                       bool chain)
{
    TransactionStmt *s = NEW_NODE(p, TransactionStmt, t->offset);
    s->kind = kind;
    s->modes = modes;
    s->chain = chain;
    return &s->hdr;
}

/* Transaction modes: none given, one given, and a list's modes merged (b's
 * given modes over a's: the last of a repeated mode wins). */
XactModes xact_modes_none(void)
{
    return (XactModes){.isolation_loc = -1, .read_only_loc = -1};
}

XactModes xact_modes_merge(XactModes a, XactModes b)
{
    if (b.isolation != XACT_ISO_DEFAULT) {
        a.isolation = b.isolation;
        a.isolation_loc = b.isolation_loc;
    }
    if (b.read_only != XACT_UNSET) {
        a.read_only = b.read_only;
        a.read_only_loc = b.read_only_loc;
    }
    if (b.deferrable != XACT_UNSET)
        a.deferrable = b.deferrable;
    return a;
}

XactModes xact_mode_isolation(const Token *t, XactIsolation level)
{
    XactModes m = xact_modes_none();
    m.isolation = level;
    m.isolation_loc = t->offset;
    return m;
}

XactModes xact_mode_read_only(const Token *t, XactFlag read_only)
{
    XactModes m = xact_modes_none();
    m.read_only = read_only;
    m.read_only_loc = t->offset;
    return m;
}

XactModes xact_mode_deferrable(XactFlag deferrable)
{
    XactModes m = xact_modes_none();
    m.deferrable = deferrable;
    return m;
}

/* DEALLOCATE name, or ALL when name is NULL. */
Node *make_savepoint(Parse *p, const Token *t, TransactionKind kind, const Token *name)
{
    TransactionStmt *s = NEW_NODE(p, TransactionStmt, t->offset);
    s->kind = kind;
    s->modes = xact_modes_none();
    s->savepoint = name->z;
    return &s->hdr;
}

Node *make_deallocate(Parse *p, const Token *t, const Token *name)
{
    DeallocateStmt *s = NEW_NODE(p, DeallocateStmt, t->offset);
    s->name = name != NULL ? name->z : NULL;
    return &s->hdr;
}

Node *make_variable_set(Parse *p, const Token *t, const Token *name, bool local)
{
    VariableSetStmt *s = NEW_NODE(p, VariableSetStmt, t->offset);
    s->name = name->z;
    s->is_local = local;
    s->value_offset = name->offset + name->len;
    return &s->hdr;
}

Node *make_unsupported(Parse *p, const Token *t)
{
    UnsupportedStmt *s = NEW_NODE(p, UnsupportedStmt, t->offset);
    char *cmd = arena_strndup(p->arena, t->z, (size_t)t->n);
    for (char *c = cmd; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - ('a' - 'A'));
    s->command = cmd;
    return &s->hdr;
}

/* A statement refused by name: command is what the 0A000 message calls it
 * ("SAVEPOINT", "COMMIT PREPARED", ...). */
Node *make_unsupported_named(Parse *p, const Token *t, const char *command)
{
    UnsupportedStmt *s = NEW_NODE(p, UnsupportedStmt, t->offset);
    s->command = command;
    return &s->hdr;
}

Node *make_res_target(Parse *p, Node *val, const Token *name)
{
    ResTarget *r = NEW_NODE(p, ResTarget, val->location);
    r->val = val;
    r->name = name ? name->z : NULL;
    return &r->hdr;
}

Node *make_star_target(Parse *p, const Token *star, const Names *qual)
{
    ColumnRef *c = NEW_NODE(p, ColumnRef, qual ? qual->loc : star->offset);
    c->names = qual ? qual->list : NULL;
    c->names = list_append(p->arena, c->names, (void *)"*");
    ResTarget *r = NEW_NODE(p, ResTarget, c->hdr.location);
    r->val = &c->hdr;
    return &r->hdr;
}

Node *make_range_var(Parse *p, Names names, const Token *alias)
{
    RangeVar *r = NEW_NODE(p, RangeVar, names.loc);
    int n = list_len(names.list);
    if (n > 2) {
        sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, names.loc,
                    "improper qualified name (too many dotted names)");
        p->failed = true;
    }
    r->name = list_nth(names.list, n - 1);
    r->schema = n > 1 ? list_nth(names.list, n - 2) : NULL;
    r->alias = alias ? alias->z : NULL;
    return &r->hdr;
}

/* ----------------------------------------------------------- expressions */

static Node *make_const(Parse *p, ConstKind kind, const Token *t)
{
    A_Const *c = NEW_NODE(p, A_Const, t->offset);
    c->kind = kind;
    c->text = t->z;
    c->len = t->n;
    return &c->hdr;
}

Node *make_integer(Parse *p, const Token *t)
{
    return make_const(p, CONST_INTEGER, t);
}

Node *make_decimal(Parse *p, const Token *t)
{
    return make_const(p, CONST_DECIMAL, t);
}

Node *make_string(Parse *p, const Token *t)
{
    return make_const(p, CONST_STRING, t);
}

Node *make_bool_const(Parse *p, const Token *t, bool v)
{
    A_Const *c = (A_Const *)make_const(p, CONST_BOOL, t);
    c->bval = v;
    c->text = v ? "true" : "false";
    c->len = (int)strlen(c->text);
    return &c->hdr;
}

Node *make_null_const(Parse *p, const Token *t)
{
    A_Const *c = (A_Const *)make_const(p, CONST_NULL, t);
    c->text = "null";
    c->len = 4;
    return &c->hdr;
}

Node *make_param(Parse *p, const Token *t)
{
    ParamRef *r = NEW_NODE(p, ParamRef, t->offset);
    long v = 0;
    for (int i = 0; i < t->n; i++) {
        v = v * 10 + (t->z[i] - '0');
        if (v > 65535) {
            sl_error_at(p->err, ERRCODE_UNDEFINED_PARAMETER, t->offset,
                        "there is no parameter $%.*s", t->n, t->z);
            p->failed = true;
            break;
        }
    }
    r->number = (int)v;
    if (v == 0 && !p->failed) {
        sl_error_at(p->err, ERRCODE_UNDEFINED_PARAMETER, t->offset,
                    "there is no parameter $0");
        p->failed = true;
    }
    return &r->hdr;
}

Node *make_column_ref(Parse *p, Names names)
{
    ColumnRef *c = NEW_NODE(p, ColumnRef, names.loc);
    c->names = names.list;
    return &c->hdr;
}

Node *make_aexpr(Parse *p, AExprKind kind, const char *op, Node *l, Node *r, int loc)
{
    A_Expr *e = NEW_NODE(p, A_Expr, loc);
    e->kind = kind;
    e->op = op;
    e->lexpr = l;
    e->rexpr = r;
    return &e->hdr;
}

Node *make_op(Parse *p, const char *op, Node *l, Node *r, int loc)
{
    return make_aexpr(p, AEXPR_OP, op, l, r, loc);
}

Node *make_op_token(Parse *p, const Token *op, Node *l, Node *r)
{
    return make_aexpr(p, AEXPR_OP, op->z, l, r, op->offset);
}

/* gram.y's doNegate: -<number> is a negative literal, located at the '-'. */
Node *make_negate(Parse *p, Node *arg, int loc)
{
    if (IS_A(arg, A_Const)) {
        A_Const *c = (A_Const *)arg;
        if (c->kind == CONST_INTEGER || c->kind == CONST_DECIMAL) {
            if (c->text[0] == '-') {
                c->text++;
                c->len--;
            } else {
                c->text = arena_printf(p->arena, "-%s", c->text);
                c->len++;
            }
            c->hdr.location = loc;
            return arg;
        }
    }
    return make_op(p, "-", NULL, arg, loc);
}

Node *make_like(Parse *p, AExprKind kind, const char *op, Node *l, Node *r,
                Node *escape, int loc)
{
    A_Expr *e = (A_Expr *)make_aexpr(p, kind, op, l, r, loc);
    e->escape = escape;
    return &e->hdr;
}

Node *make_in(Parse *p, const char *op, Node *l, List *list, int loc)
{
    A_Expr *e = (A_Expr *)make_aexpr(p, AEXPR_IN, op, l, NULL, loc);
    e->list = list;
    return &e->hdr;
}

Node *make_between(Parse *p, AExprKind kind, Node *arg, Node *lo, Node *hi, int loc)
{
    A_Expr *e = (A_Expr *)make_aexpr(p, kind, "BETWEEN", arg, NULL, loc);
    e->list = list_append(p->arena, list_append(p->arena, NULL, lo), hi);
    return &e->hdr;
}

/* AND and OR flatten into one BoolExpr, as gram.y's makeAndExpr does. */
static Node *make_bool(Parse *p, BoolOp op, Node *l, Node *r, int loc)
{
    if (IS_A(l, BoolExpr) && ((BoolExpr *)l)->op == op) {
        BoolExpr *b = (BoolExpr *)l;
        b->args = list_append(p->arena, b->args, r);
        return l;
    }
    BoolExpr *b = NEW_NODE(p, BoolExpr, loc);
    b->op = op;
    b->args = list_append(p->arena, list_append(p->arena, NULL, l), r);
    return &b->hdr;
}

Node *make_and(Parse *p, Node *l, Node *r, int loc)
{
    return make_bool(p, BOOL_AND, l, r, loc);
}

Node *make_or(Parse *p, Node *l, Node *r, int loc)
{
    return make_bool(p, BOOL_OR, l, r, loc);
}

Node *make_not(Parse *p, Node *arg, int loc)
{
    BoolExpr *b = NEW_NODE(p, BoolExpr, loc);
    b->op = BOOL_NOT;
    b->args = list_append(p->arena, NULL, arg);
    return &b->hdr;
}

Node *make_null_test(Parse *p, Node *arg, bool is_not, int loc)
{
    NullTest *t = NEW_NODE(p, NullTest, loc);
    t->arg = arg;
    t->is_not = is_not;
    return &t->hdr;
}

Node *make_bool_test(Parse *p, Node *arg, BoolTestType test, int loc)
{
    BooleanTest *t = NEW_NODE(p, BooleanTest, loc);
    t->arg = arg;
    t->test = test;
    return &t->hdr;
}

Node *make_typecast(Parse *p, Node *arg, Node *type, int loc)
{
    TypeCast *c = NEW_NODE(p, TypeCast, loc);
    c->arg = arg;
    c->type = (TypeName *)type;
    return &c->hdr;
}

/* type 'string': a cast of the string, located at the string (gram.y's
 * makeStringConstCast). */
Node *make_typed_literal(Parse *p, Node *type, const Token *str)
{
    return make_typecast(p, make_string(p, str), type, -1);
}

Node *make_func_call(Parse *p, Names names, List *args, bool star, bool distinct)
{
    FuncCall *f = NEW_NODE(p, FuncCall, names.loc);
    int n = list_len(names.list);
    f->name = list_nth(names.list, n - 1);
    for (int i = 0; i < n - 1; i++)
        f->qual = list_append(p->arena, f->qual, list_nth(names.list, i));
    f->args = args;
    f->star = star;
    f->distinct = distinct;
    return &f->hdr;
}

Node *make_case(Parse *p, Node *arg, List *whens, Node *defresult, int loc)
{
    CaseExpr *c = NEW_NODE(p, CaseExpr, loc);
    c->arg = arg;
    c->whens = whens;
    c->defresult = defresult;
    return &c->hdr;
}

Node *make_case_when(Parse *p, Node *expr, Node *result, int loc)
{
    CaseWhen *w = NEW_NODE(p, CaseWhen, loc);
    w->expr = expr;
    w->result = result;
    return &w->hdr;
}

Node *make_coalesce(Parse *p, List *args, int loc)
{
    CoalesceExpr *c = NEW_NODE(p, CoalesceExpr, loc);
    c->args = args;
    return &c->hdr;
}

Node *make_named_arg(Parse *p, const Token *name, Node *arg)
{
    NamedArgExpr *n = NEW_NODE(p, NamedArgExpr, name->offset);
    n->name = name->z;
    n->arg = arg;
    return &n->hdr;
}

Node *make_minmax(Parse *p, bool greatest, List *args, int loc)
{
    MinMaxExpr *m = NEW_NODE(p, MinMaxExpr, loc);
    m->is_greatest = greatest;
    m->args = args;
    return &m->hdr;
}

Node *make_nullif(Parse *p, Node *a, Node *b, int loc)
{
    return make_aexpr(p, AEXPR_NULLIF, "=", a, b, loc);
}

/* ----------------------------------------------------------------- types */

Node *make_type_name(Parse *p, const char *name, List *mods, int loc)
{
    TypeName *t = NEW_NODE(p, TypeName, loc);
    t->name = name;
    t->mods = mods;
    return &t->hdr;
}

Node *make_generic_type(Parse *p, Names names, List *mods)
{
    int n = list_len(names.list);
    TypeName *t = (TypeName *)make_type_name(p, list_nth(names.list, n - 1), mods, names.loc);
    if (n > 2) {
        sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, names.loc,
                    "improper qualified name (too many dotted names)");
        p->failed = true;
    }
    t->qualified = n > 1;
    if (n == 2 && strcmp(list_nth(names.list, 0), "pg_catalog") != 0) {
        sl_error_at(p->err, ERRCODE_INVALID_SCHEMA_NAME, names.loc,
                    "schema \"%s\" does not exist", (const char *)list_nth(names.list, 0));
        p->failed = true;
    }
    return &t->hdr;
}

/* CHARACTER [(n)], CHAR [(n)]: bpchar, of length 1 when none is given
 * (PostgreSQL's rule; bpchar itself has no length). */
Node *make_char_type(Parse *p, List *mods, int loc)
{
    if (mods == NULL) {
        A_Const *one = NEW_NODE(p, A_Const, loc);
        one->kind = CONST_INTEGER;
        one->text = "1";
        mods = list_append(p->arena, NULL, one);
    }
    return make_type_name(p, "bpchar", mods, loc);
}

/* FLOAT(p): float4 up to 24 bits of precision, float8 up to 53. */
Node *make_float_type(Parse *p, const Token *prec, int loc)
{
    const char *name = "float8";
    if (prec != NULL) {
        long bits = prec->n > 9 ? 1000000000L : strtol(prec->z, NULL, 10);
        if (bits < 1) {
            sl_error_at(p->err, ERRCODE_INVALID_PARAMETER_VALUE, prec->offset,
                        "precision for type float must be at least 1 bit");
            p->failed = true;
        } else if (bits <= 24) {
            name = "float4";
        } else if (bits > 53) {
            sl_error_at(p->err, ERRCODE_INVALID_PARAMETER_VALUE, prec->offset,
                        "precision for type float must be less than 54 bits");
            p->failed = true;
        }
    }
    return make_type_name(p, name, NULL, loc);
}

/* ---------------------------------- SQL-standard function syntax, literals */

Node *make_collate(Parse *p, Node *expr, Names names)
{
    int n = list_len(names.list);
    const char *name = list_nth(names.list, n - 1);
    bool known = strcmp(name, "default") == 0 || strcmp(name, "C") == 0 ||
                 strcmp(name, "c") == 0 || strcmp(name, "POSIX") == 0 ||
                 strcmp(name, "posix") == 0 || strcmp(name, "ucs_basic") == 0;
    if (n > 2 || (n == 2 && strcmp(list_nth(names.list, 0), "pg_catalog") != 0) || !known) {
        sl_error_at(p->err, ERRCODE_UNDEFINED_OBJECT, names.loc,
                    "collation \"%s\" for encoding \"UTF8\" does not exist", name);
        p->failed = true;
    }
    return expr;
}

const char *make_qual_op(Parse *p, const Token *schema, const char *op)
{
    if (strcmp(schema->z, "pg_catalog") != 0) {
        sl_error_at(p->err, ERRCODE_INVALID_SCHEMA_NAME, schema->offset,
                    "schema \"%s\" does not exist", schema->z);
        p->failed = true;
    }
    return op;
}

Node *make_sql_func(Parse *p, const char *name, List *args, int loc)
{
    FuncCall *f = NEW_NODE(p, FuncCall, loc);
    f->name = name;
    f->args = args;
    return &f->hdr;
}

Node *make_int_const(Parse *p, int v, int loc)
{
    A_Const *c = NEW_NODE(p, A_Const, loc);
    c->kind = CONST_INTEGER;
    c->text = arena_printf(p->arena, "%d", v);
    c->len = (int)strlen(c->text);
    return &c->hdr;
}

Node *make_typed_literal_qual(Parse *p, Node *type, const Token *str, int qual, int qual_loc)
{
    if (qual != 0) {
        TypeName *t = (TypeName *)type;
        if (strcmp(t->name, "interval") != 0) {
            int n = 0;
            while (qual_loc + n < p->len && ((p->sql[qual_loc + n] | 32) >= 'a' &&
                                             (p->sql[qual_loc + n] | 32) <= 'z'))
                n++;
            sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, qual_loc, "syntax error at or near \"%.*s\"",
                        n, p->sql + qual_loc);
            p->failed = true;
        }
        t->mods = make_list1(p, make_int_const(p, qual, qual_loc));
    }
    return make_typed_literal(p, type, str);
}
