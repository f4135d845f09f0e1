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
    T_DeallocateStmt,
    T_VariableSetStmt,
    T_UnsupportedStmt,
    T_InsertStmt,
    T_UpdateStmt,
    T_DeleteStmt,
    T_CreateStmt,
    T_CreateCqStmt,
    T_CreateViewStmt,
    T_DropStmt,
    T_AlterCqStmt,
    T_AlterTableStmt,
    T_SubscribeStmt,
    T_ExplainStmt,
    T_ShowStmt,
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
    T_SubLink,
    T_SetToDefault,
    T_NamedArgExpr,
    /* pieces */
    T_ResTarget,
    T_TypeName,
    T_RangeVar,
    T_RangeSubselect,
    T_JoinExpr,
    T_SortBy,
    T_GroupingSet,
    T_CommonTableExpr,
    T_ColumnDef,
    T_Constraint,
    T_WatermarkDef,
    T_DefElem,
    T_OnConflictClause,
    T_CopyStmt,
    T_RangeFunction,
    T_RoleStmt,
    T_GrantStmt,
    T_BackupStmt,
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
    AEXPR_SIMILAR,          /* op "similar" or "!similar"; escape may be set */
    AEXPR_BETWEEN,          /* lexpr BETWEEN list[0] AND list[1] */
    AEXPR_NOT_BETWEEN,
    AEXPR_BETWEEN_SYM,
    AEXPR_NOT_BETWEEN_SYM,
    AEXPR_OP_ANY,           /* lexpr op ANY (rexpr): an array or a subquery */
    AEXPR_OP_ALL,           /* lexpr op ALL (rexpr): an array */
    AEXPR_SUBSCRIPT,        /* lexpr[rexpr]: an array's element */
    AEXPR_SLICE,            /* lexpr[rexpr:escape]: a slice (either bound NULL
                               when omitted) */
    AEXPR_ARRAY,            /* ARRAY[list]: the array of list's values */
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

/* A window frame: OVER (... {ROWS|RANGE|GROUPS} [BETWEEN] start [AND end]
 * [EXCLUDE ...]), PostgreSQL's frame options. */
typedef enum FrameMode { FRAME_DEFAULT, FRAME_ROWS, FRAME_RANGE, FRAME_GROUPS } FrameMode;
typedef enum FrameBoundKind {
    BOUND_UNBOUNDED_PRECEDING, BOUND_PRECEDING, BOUND_CURRENT_ROW, BOUND_FOLLOWING,
    BOUND_UNBOUNDED_FOLLOWING
} FrameBoundKind;
typedef enum FrameExclude {
    EXCLUDE_NO_OTHERS, EXCLUDE_CURRENT_ROW, EXCLUDE_GROUP, EXCLUDE_TIES
} FrameExclude;

typedef struct FrameBound {
    FrameBoundKind kind;
    Node          *offset;      /* n PRECEDING / n FOLLOWING, else NULL */
    int            location;
} FrameBound;

typedef struct WindowFrameDef {
    FrameMode    mode;
    FrameBound   start, end;    /* a single bound: end is CURRENT ROW */
    FrameExclude exclude;
    int          location;
} WindowFrameDef;

/* A window: WINDOW name AS (...)'s, or an OVER clause's.  refname: the
 * window it starts from ((w ORDER BY ...)), or NULL. */
typedef struct WindowDef {
    const char     *name;       /* WINDOW name AS ...; NULL in OVER */
    const char     *refname;
    bool            bare;       /* OVER name, without parentheses */
    List           *partition;  /* of Node */
    List           *order;      /* of SortBy */
    WindowFrameDef *frame;      /* or NULL */
    int             location;
} WindowDef;

typedef struct FuncCall {
    Node        hdr;
    const char *name;       /* the function's (last) name */
    List       *qual;       /* of const char *: the schema, if qualified */
    List       *args;
    bool        star;       /* count(*) */
    bool        distinct;
    Node       *filter;     /* agg(...) FILTER (WHERE filter), or NULL */
    List       *agg_order;  /* agg(x ORDER BY ...): of SortBy */
    bool        agg_within_group;   /* agg_order is WITHIN GROUP (ORDER BY ...) */
    bool        over;       /* a window function: f(...) OVER (...) */
    List       *over_partition;  /* PARTITION BY: of Node */
    List       *over_order;      /* ORDER BY: of SortBy */
    WindowFrameDef *over_frame;  /* the frame clause, or NULL */
    const char *over_ref;       /* OVER w / OVER (w ...): the WINDOW it names */
    bool        over_bare;      /* OVER w, without parentheses */
    int         over_loc;
    int         over_col;   /* set by the analyzer: 1 + the column of the
                               Window node that computes it; 0 none yet */
} FuncCall;

typedef struct TypeName {
    Node        hdr;
    const char *name;       /* canonical lower-case name, e.g. "int4" */
    List       *mods;       /* of Node (A_Const): varchar(10), numeric(10,2) */
    bool        qualified;  /* written as schema.name */
    bool        array;      /* name[] */
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

/* name => arg: a function's argument in named notation. */
typedef struct NamedArgExpr {
    Node        hdr;
    const char *name;
    Node       *arg;
} NamedArgExpr;

typedef struct ResTarget {
    Node        hdr;
    const char *name;   /* AS alias, or NULL */
    Node       *val;
} ResTarget;

/* A table named in FROM (or the target of INSERT/UPDATE/DELETE). */
typedef struct RangeVar {
    Node        hdr;
    const char *schema;
    const char *name;
    const char *alias;
    List       *colnames;   /* column aliases: t AS x(a, b) */
} RangeVar;

typedef struct SelectStmt SelectStmt;

/* (SELECT ...) [AS] alias in FROM. */
typedef struct RangeSubselect {
    Node        hdr;
    SelectStmt *subquery;
    const char *alias;      /* NULL: none given (an error in PostgreSQL 15) */
    List       *colnames;
    bool        lateral;        /* LATERAL: sees the FROM items before it */
} RangeSubselect;

/* A function in FROM: generate_series(start, stop [, step]) [AS] alias. */
typedef struct RangeFunction {
    Node        hdr;
    FuncCall   *func;
    const char *alias;
    List       *colnames;
    bool        ordinality;     /* WITH ORDINALITY */
    bool        lateral;        /* LATERAL written (a function is lateral anyway) */
} RangeFunction;

typedef enum JoinType { JOIN_INNER, JOIN_LEFT, JOIN_RIGHT, JOIN_FULL, JOIN_CROSS } JoinType;

/* larg [NATURAL] jointype JOIN rarg [ON quals | USING (names)]. */
typedef struct JoinExpr {
    Node        hdr;
    JoinType    jointype;
    bool        natural;
    Node       *larg;
    Node       *rarg;
    List       *using_names;    /* of const char * */
    Node       *quals;
    const char *alias;          /* (a JOIN b ...) AS alias */
    List       *colnames;
} JoinExpr;

typedef enum SortDir { SORT_DEFAULT, SORT_ASC, SORT_DESC } SortDir;
typedef enum SortNulls { NULLS_DEFAULT, NULLS_FIRST, NULLS_LAST } SortNulls;

typedef struct SortBy {
    Node      hdr;
    Node     *node;
    SortDir   dir;
    SortNulls nulls;
} SortBy;

/* An item of GROUP BY other than an expression: () (GROUPING_SET_EMPTY),
 * (a, b) inside one of the others (GROUPING_SET_SIMPLE: content its
 * expressions), ROLLUP (...), CUBE (...) (content: expressions and SIMPLE
 * sets) and GROUPING SETS (...) (content: GROUP BY items). */
typedef enum GroupingSetKind {
    GROUPING_SET_EMPTY, GROUPING_SET_SIMPLE, GROUPING_SET_ROLLUP, GROUPING_SET_CUBE,
    GROUPING_SET_SETS
} GroupingSetKind;

typedef struct GroupingSet {
    Node            hdr;
    GroupingSetKind kind;
    List           *content;    /* of Node */
} GroupingSet;

/* WITH name [(cols)] AS (query). */
/* WITH name AS [[NOT] MATERIALIZED] (query). */
typedef enum CTEMaterialize {
    CTE_MATERIALIZE_DEFAULT, CTE_MATERIALIZE_ALWAYS, CTE_MATERIALIZE_NEVER
} CTEMaterialize;

typedef struct CommonTableExpr {
    Node        hdr;
    const char *name;
    List       *colnames;
    SelectStmt *query;
    CTEMaterialize materialize;
    int         search_cycle_loc;   /* SEARCH / CYCLE clause's offset, -1: none */
} CommonTableExpr;

typedef enum SetOpKind { SETOP_NONE, SETOP_UNION, SETOP_INTERSECT, SETOP_EXCEPT } SetOpKind;

/* A SELECT, a VALUES list or a set operation of two of them.  sort, limit,
 * offset and with apply to the whole node: for a set operation, to its
 * result. */
struct SelectStmt {
    Node  hdr;
    bool  distinct;
    List *distinct_on;  /* DISTINCT ON (exprs) */
    List *targets;      /* of ResTarget; may be empty (SELECT;) */
    List *from;         /* of RangeVar, RangeSubselect, JoinExpr */
    Node *where;
    List *group_by;     /* of Node */
    Node *having;
    List *windows;      /* WINDOW name AS (...), ...: of WindowDef */
    List *values;       /* VALUES: a List of rows, each a List of Node */
    SetOpKind   op;     /* SETOP_NONE: a plain SELECT or VALUES */
    bool        all;    /* UNION ALL ... */
    SelectStmt *larg;
    SelectStmt *rarg;
    List *with;         /* of CommonTableExpr */
    bool  recursive;    /* WITH RECURSIVE */
    List *sort;         /* of SortBy */
    Node *limit;        /* NULL: none; LIMIT ALL is NULL too */
    Node *offset;
    int   paren_loc;    /* offset of the outermost '(' around it, -1: none */
};

/* A subquery in an expression: (SELECT ...), EXISTS (...), x IN (...) and
 * x op ANY (...) (SUBLINK_IN), x op ALL (...) (SUBLINK_ALL). */
typedef enum SubLinkType {
    SUBLINK_EXPR, SUBLINK_EXISTS, SUBLINK_IN, SUBLINK_ARRAY, SUBLINK_ALL
} SubLinkType;

typedef struct SubLink {
    Node        hdr;
    SubLinkType type;
    bool        negate;     /* NOT IN */
    Node       *testexpr;   /* SUBLINK_IN, SUBLINK_ALL: the left operand */
    const char *op;         /* ... and the operator; NULL: "=" */
    SelectStmt *subselect;
} SubLink;

/* DEFAULT in an INSERT's VALUES. */
typedef struct SetToDefault {
    Node hdr;
} SetToDefault;

/* ---- DDL and DML ---- */

typedef enum ConstrType {
    CONSTR_NOTNULL, CONSTR_NULL, CONSTR_PRIMARY, CONSTR_UNIQUE, CONSTR_CHECK,
    CONSTR_DEFAULT, CONSTR_FOREIGN,
    CONSTR_IDENTITY,    /* GENERATED ... AS IDENTITY: refused */
    CONSTR_GENERATED    /* GENERATED ALWAYS AS (expr) STORED: refused */
} ConstrType;

/* A column or table constraint.  keys: the PRIMARY KEY (a, b) of a table
 * constraint, of const char *, and key_nodes the same as ColumnRefs (for
 * their positions). */
typedef struct Constraint {
    Node       hdr;
    ConstrType type;
    List      *keys;
    List      *key_nodes;   /* of ColumnRef, for positions */
    Node      *expr;        /* DEFAULT's and CHECK's expression, else NULL */
    const char *conname;    /* CONSTRAINT name, or NULL */
} Constraint;

typedef struct TypeName TypeName;

typedef struct ColumnDef {
    Node        hdr;
    const char *name;
    TypeName   *type;
    List       *constraints;    /* of Constraint */
} ColumnDef;

/* WATERMARK FOR col AS expr, in CREATE STREAM. */
typedef struct WatermarkDef {
    Node        hdr;
    const char *column;
    int         column_loc;
    Node       *expr;
} WatermarkDef;

/* name = value in WITH (...): value an A_Const, or a ColumnRef (a bare word). */
typedef struct DefElem {
    Node        hdr;
    const char *name;
    Node       *arg;
} DefElem;

typedef enum ObjectKind {
    OBJECT_TABLE, OBJECT_STREAM, OBJECT_SINK, OBJECT_QUERY, OBJECT_VIEW
} ObjectKind;

/* CREATE TABLE / STREAM / SINK. */
typedef struct CreateStmt {
    Node        hdr;
    ObjectKind  kind;
    RangeVar   *relation;
    bool        if_not_exists;
    List       *elts;       /* ColumnDef, Constraint, WatermarkDef */
    List       *options;    /* of DefElem */
} CreateStmt;

/* CREATE [OR REPLACE] CONTINUOUS QUERY name [INTO target] [WITH (...)] AS query */
typedef struct CreateCqStmt {
    Node        hdr;
    RangeVar   *name;
    bool        or_replace;
    bool        if_not_exists;
    RangeVar   *into;
    List       *options;
    SelectStmt *query;
} CreateCqStmt;

/* CREATE [OR REPLACE] VIEW name [(column, ...)] AS query */
typedef struct CreateViewStmt {
    Node        hdr;
    RangeVar   *name;
    bool        or_replace;
    List       *colnames;   /* of ColumnRef, or NULL: the query's names */
    SelectStmt *query;
} CreateViewStmt;

typedef struct DropStmt {
    Node       hdr;
    ObjectKind kind;
    List      *objects;     /* of RangeVar */
    bool       missing_ok;
    bool       cascade;
} DropStmt;

/* COPY relation [(columns)] FROM STDIN | TO STDOUT, or COPY (query) TO
 * STDOUT, with options (DefElems: FORMAT, HEADER, DELIMITER, NULL). */
typedef struct CopyStmt {
    Node        hdr;
    RangeVar   *relation;   /* NULL for COPY (query) and COPY (SUBSCRIBE) */
    List       *columns;    /* of ColumnRef, or NULL: all */
    SelectStmt *query;
    struct SubscribeStmt *subscribe;    /* COPY (SUBSCRIBE name ...) TO STDOUT */
    bool        to;         /* TO STDOUT; else FROM STDIN */
    const char *target;     /* the word after FROM / TO */
    int         target_loc;
    List       *options;
} CopyStmt;

/* ALTER TABLE | VIEW [IF EXISTS] name <cmd>. */
typedef enum AlterCmd {
    ALTER_RENAME,           /* RENAME TO newname */
    ALTER_RENAME_COLUMN,    /* RENAME [COLUMN] column TO newname */
    ALTER_SET_NOT_NULL,     /* ALTER [COLUMN] column SET NOT NULL */
    ALTER_DROP_NOT_NULL,    /* ALTER [COLUMN] column DROP NOT NULL */
    ALTER_REFUSED,          /* anything else: refused (0A000) naming `refused` */
} AlterCmd;

typedef struct AlterTableStmt {
    Node        hdr;
    ObjectKind  kind;       /* OBJECT_TABLE (ALTER TABLE) or OBJECT_VIEW */
    RangeVar   *relation;
    bool        missing_ok;
    AlterCmd    cmd;
    const char *column;
    const char *newname;
    const char *refused;    /* ALTER_REFUSED: "ADD", "ALTER COLUMN ... TYPE", ... */
    int         cmd_loc;
} AlterTableStmt;

typedef struct AlterCqStmt {
    Node      hdr;
    RangeVar *name;
    bool      pause;        /* PAUSE, else RESUME */
} AlterCqStmt;

/* BACKUP TO 'dir' (src/runtime/backup.c). */
typedef struct BackupStmt {
    Node        hdr;
    const char *target;     /* the directory, as written (unescaped) */
    int         target_loc;
} BackupStmt;

typedef struct SubscribeStmt {
    Node      hdr;
    RangeVar *name;
    List     *options;      /* WITH (snapshot [= bool]): DefElems */
} SubscribeStmt;

/* EXPLAIN stmt, or EXPLAIN CONTINUOUS QUERY name (cq set). */
typedef struct ExplainStmt {
    Node      hdr;
    Node     *stmt;
    RangeVar *cq;
    bool      analyze;
} ExplainStmt;

/* SHOW name / SHOW ALL (name "all"). */
typedef struct ShowStmt {
    Node        hdr;
    const char *name;
} ShowStmt;

typedef enum OnConflictAction { ONCONFLICT_NONE, ONCONFLICT_NOTHING, ONCONFLICT_UPDATE } OnConflictAction;

typedef struct OnConflictClause {
    Node             hdr;
    OnConflictAction action;
    List            *infer;     /* (col, ...) of ColumnRef, or NULL */
    List            *targets;   /* DO UPDATE SET: of ResTarget (name = column) */
    Node            *where;
} OnConflictClause;

typedef struct InsertStmt {
    Node              hdr;
    RangeVar         *relation;
    List             *cols;         /* of ResTarget (name, location), or NULL */
    SelectStmt       *select;       /* NULL: DEFAULT VALUES */
    OnConflictClause *on_conflict;
    List             *returning;    /* of ResTarget */
} InsertStmt;

typedef struct UpdateStmt {
    Node      hdr;
    RangeVar *relation;
    List     *targets;      /* of ResTarget (name = column) */
    List     *from;
    Node     *where;
    List     *returning;
} UpdateStmt;

typedef struct DeleteStmt {
    Node      hdr;
    RangeVar *relation;
    List     *using_list;
    Node     *where;
    List     *returning;
} DeleteStmt;

/* CREATE ROLE | USER name [WITH] options, ALTER ROLE | USER name [WITH]
 * options, ALTER ROLE | USER name RENAME TO new_name, DROP ROLE | USER [IF
 * EXISTS] name, ...  options: DefElems named as written ("login",
 * "nosuperuser", ...; "password" with an A_Const string or NULL, "valid"
 * for VALID UNTIL with a string); the runtime checks the names. */
typedef enum RoleStmtKind {
    ROLESTMT_CREATE, ROLESTMT_ALTER, ROLESTMT_RENAME, ROLESTMT_DROP
} RoleStmtKind;

typedef struct RoleStmt {
    Node         hdr;
    RoleStmtKind kind;
    bool         is_user;       /* CREATE USER: LOGIN unless NOLOGIN */
    const char  *name;
    const char  *new_name;      /* RENAME TO */
    List        *options;       /* of DefElem */
    List        *names;         /* DROP: of const char * */
    bool         missing_ok;    /* DROP IF EXISTS */
} RoleStmt;

/* GRANT privileges ON [TABLE | STREAM] name, ... TO role, ...
 * REVOKE privileges ON [TABLE | STREAM] name, ... FROM role, ...
 * GRANT / REVOKE privileges ON ALL TABLES | STREAMS IN SCHEMA name ...
 * privileges: the words as written ("select", ...), NULL for ALL; a
 * grantee "public" is PUBLIC. */
typedef struct GrantStmt {
    Node        hdr;
    bool        is_grant;
    List       *privileges;     /* of const char *, NULL: ALL [PRIVILEGES] */
    bool        stream;         /* ON STREAM: every object must be a stream */
    List       *objects;        /* of RangeVar */
    const char *all_in_schema;  /* ON ALL TABLES | STREAMS IN SCHEMA name:
                                   objects NULL, stream for STREAMS */
    List       *grantees;       /* of const char * */
} GrantStmt;

/* BEGIN [WORK | TRANSACTION] [modes], START TRANSACTION [modes],
 * COMMIT | END [WORK | TRANSACTION] [AND [NO] CHAIN],
 * ROLLBACK | ABORT [WORK | TRANSACTION] [AND [NO] CHAIN],
 * SET TRANSACTION modes, SET SESSION CHARACTERISTICS AS TRANSACTION modes.
 * The server (src/server/session.c) runs them: they move the session's
 * transaction state, and check the modes against what sluice provides. */
typedef enum TransactionKind {
    TRANS_BEGIN, TRANS_COMMIT, TRANS_ROLLBACK, TRANS_START,
    TRANS_SET,              /* SET TRANSACTION */
    TRANS_SET_SESSION,      /* SET SESSION CHARACTERISTICS AS TRANSACTION */
    TRANS_SAVEPOINT,        /* SAVEPOINT name */
    TRANS_RELEASE,          /* RELEASE [SAVEPOINT] name */
    TRANS_ROLLBACK_TO       /* ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name */
} TransactionKind;

/* A transaction's isolation level as written; XACT_ISO_DEFAULT: none. */
typedef enum XactIsolation {
    XACT_ISO_DEFAULT, XACT_READ_UNCOMMITTED, XACT_READ_COMMITTED,
    XACT_REPEATABLE_READ, XACT_SERIALIZABLE
} XactIsolation;

/* A mode given or not: READ ONLY / READ WRITE, DEFERRABLE / NOT DEFERRABLE. */
typedef enum XactFlag { XACT_UNSET, XACT_OFF, XACT_ON } XactFlag;

/* The transaction modes of one statement; the last of a repeated mode wins,
 * as in PostgreSQL.  *_loc: the mode's text offset, -1 when not given. */
typedef struct XactModes {
    XactIsolation isolation;
    int           isolation_loc;
    XactFlag      read_only;
    int           read_only_loc;
    XactFlag      deferrable;
} XactModes;

typedef struct TransactionStmt {
    Node            hdr;
    TransactionKind kind;
    XactModes       modes;      /* BEGIN, START TRANSACTION, SET ... */
    bool            chain;      /* COMMIT / ROLLBACK AND CHAIN */
    const char     *savepoint;  /* SAVEPOINT, RELEASE, ROLLBACK TO: its name */
} TransactionStmt;

/* DEALLOCATE [PREPARE] name | ALL: name NULL for ALL. */
typedef struct DeallocateStmt {
    Node        hdr;
    const char *name;
} DeallocateStmt;

/* SET [LOCAL] name TO value, RESET name (name "all": RESET ALL); name as
 * the tokenizer gives it.  The value is the statement's text from
 * value_offset to its end (settings_parse_args reads it). */
typedef struct VariableSetStmt {
    Node        hdr;
    const char *name;
    bool        is_reset;
    bool        is_local;
    int         value_offset;
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
