/*
 * ast.h -- the raw parse tree the Lemon grammar builds.
 *
 * Every node starts with a Node header: its tag and the byte offset of the
 * text it came from, so the analyzer can point at the offending token.
 * Nodes live in the statement arena; nothing here is freed on its own.
 * Names are already case-folded (unquoted identifiers are lower-cased).
 *
 * The shapes follow PostgreSQL's parsenodes.h, so that what PostgreSQL's
 * parse analysis does with a node is a guide to what ours must do with it.
 * The constructors are in src/sql/parse_nodes.c (make_*), called from the
 * one-line actions of grammar/sql.y.
 */
#ifndef SLUICE_AST_H
#define SLUICE_AST_H

#include "sluice/list.h"

typedef enum NodeTag {
    /* statements */
    T_SelectStmt,
    T_TransactionStmt,
    T_VariableSetStmt,
    T_UnsupportedStmt,
    /* expressions */
    T_A_Const,
    T_A_Expr,
    T_BoolExpr,
    T_ColumnRef,
    T_FuncCall,
    T_TypeCast,
    T_NullTest,
    T_BooleanTest,
    T_ParamRef,
    T_CaseExpr,
    T_CaseWhen,
    T_CoalesceExpr,
    T_MinMaxExpr,
    /* pieces */
    T_ResTarget,
    T_TypeName,
    T_RangeVar,
} NodeTag;

typedef struct Node {
    NodeTag tag;
    int     location;   /* byte offset in the query text, -1 if none */
} Node;

#define NODE_TAG(n) (((const Node *)(n))->tag)
#define IS_A(n, T)  ((n) != NULL && NODE_TAG(n) == T_##T)

typedef enum ConstKind {
    CONST_INTEGER,  /* text holds the digits (and a leading '-'); may not fit int64 */
    CONST_DECIMAL,  /* 1.5, 1e10 */
    CONST_STRING,
    CONST_BOOL,
    CONST_NULL,
} ConstKind;

typedef struct A_Const {
    Node        hdr;
    ConstKind   kind;
    const char *text;   /* literal text (unescaped for strings), NUL-terminated */
    int         len;
    bool        bval;
} A_Const;

typedef enum AExprKind {
    AEXPR_OP,               /* lexpr op rexpr, or op rexpr (lexpr NULL) */
    AEXPR_DISTINCT,         /* IS DISTINCT FROM */
    AEXPR_NOT_DISTINCT,     /* IS NOT DISTINCT FROM */
    AEXPR_NULLIF,           /* NULLIF(lexpr, rexpr) */
    AEXPR_IN,               /* lexpr IN (list); op is "=" or "<>" (NOT IN) */
    AEXPR_LIKE,             /* op "~~" or "!~~"; escape may be set */
    AEXPR_ILIKE,            /* op "~~*" or "!~~*" */
    AEXPR_BETWEEN,          /* lexpr BETWEEN list[0] AND list[1] */
    AEXPR_NOT_BETWEEN,
    AEXPR_BETWEEN_SYM,
    AEXPR_NOT_BETWEEN_SYM,
} AExprKind;

/* An operator expression.  op is the operator's name ("+", "||", "<="). */
typedef struct A_Expr {
    Node        hdr;
    AExprKind   kind;
    const char *op;
    Node       *lexpr;
    Node       *rexpr;
    List       *list;       /* IN list; BETWEEN bounds */
    Node       *escape;     /* LIKE ... ESCAPE x */
} A_Expr;

typedef enum BoolOp { BOOL_AND, BOOL_OR, BOOL_NOT } BoolOp;

typedef struct BoolExpr {
    Node   hdr;
    BoolOp op;
    List  *args;
} BoolExpr;

typedef struct ColumnRef {
    Node  hdr;
    List *names;        /* of const char *: [table.]column, or "*" last */
} ColumnRef;

typedef struct FuncCall {
    Node        hdr;
    const char *name;       /* the function's (last) name */
    List       *qual;       /* of const char *: the schema, if qualified */
    List       *args;
    bool        star;       /* count(*) */
    bool        distinct;
} FuncCall;

typedef struct TypeName {
    Node        hdr;
    const char *name;       /* canonical lower-case name, e.g. "int4" */
    List       *mods;       /* of Node (A_Const): varchar(10), numeric(10,2) */
    bool        qualified;  /* written as schema.name */
} TypeName;

typedef struct TypeCast {
    Node      hdr;
    Node     *arg;
    TypeName *type;
} TypeCast;

typedef struct NullTest {
    Node  hdr;
    Node *arg;
    bool  is_not;
} NullTest;

typedef enum BoolTestType {
    IS_TRUE, IS_NOT_TRUE, IS_FALSE, IS_NOT_FALSE, IS_UNKNOWN, IS_NOT_UNKNOWN
} BoolTestType;

typedef struct BooleanTest {
    Node         hdr;
    Node        *arg;
    BoolTestType test;
} BooleanTest;

typedef struct ParamRef {
    Node hdr;
    int  number;        /* $1 is 1 */
} ParamRef;

typedef struct CaseWhen {
    Node  hdr;
    Node *expr;         /* the condition, or the value compared with CASE arg */
    Node *result;
} CaseWhen;

typedef struct CaseExpr {
    Node  hdr;
    Node *arg;          /* CASE arg WHEN ..., or NULL */
    List *whens;        /* of CaseWhen */
    Node *defresult;    /* ELSE, or NULL */
} CaseExpr;

typedef struct CoalesceExpr {
    Node  hdr;
    List *args;
} CoalesceExpr;

typedef struct MinMaxExpr {
    Node  hdr;
    bool  is_greatest;
    List *args;
} MinMaxExpr;

typedef struct ResTarget {
    Node        hdr;
    const char *name;   /* AS alias, or NULL */
    Node       *val;
} ResTarget;

/* A table named in FROM. */
typedef struct RangeVar {
    Node        hdr;
    const char *schema;
    const char *name;
    const char *alias;
} RangeVar;

typedef struct SelectStmt {
    Node  hdr;
    bool  distinct;
    List *targets;      /* of ResTarget; may be empty (SELECT;) */
    List *from;         /* of RangeVar */
    Node *where;
    List *group_by;     /* of Node */
    Node *having;
} SelectStmt;

typedef enum TransactionKind {
    TRANS_BEGIN, TRANS_COMMIT, TRANS_ROLLBACK, TRANS_START
} TransactionKind;

typedef struct TransactionStmt {
    Node            hdr;
    TransactionKind kind;
} TransactionStmt;

/* SET name TO value: accepted and ignored for now; name as written. */
typedef struct VariableSetStmt {
    Node        hdr;
    const char *name;
} VariableSetStmt;

/* A statement the grammar recognises by its first words only, e.g.
 * CREATE ... or INSERT ...; the runtime refuses it with 0A000. */
typedef struct UnsupportedStmt {
    Node        hdr;
    const char *command;    /* "CREATE", "INSERT", ... */
} UnsupportedStmt;

/* One statement of a query string, with the span of text it came from. */
typedef struct RawStmt {
    Node *stmt;
    int   start;        /* byte offsets into the query string: [start, end) */
    int   end;
} RawStmt;

#endif /* SLUICE_AST_H */
