/*
 * parse_roles.c -- the AST constructors for role and privilege statements.
 *
 *   make_role_stmt     CREATE ROLE | USER, ALTER ROLE | USER ... options
 *   make_role_rename   ALTER ROLE | USER name RENAME TO new_name
 *   make_role_drop     DROP ROLE | USER [IF EXISTS] name, ...
 *   make_grant         GRANT / REVOKE privileges ON relations TO / FROM roles
 *   make_grant_all     ... ON ALL TABLES | STREAMS IN SCHEMA name ...
 *
 * Role options are kept as written (DefElems); the runtime
 * (src/runtime/roles.c) checks them, as PostgreSQL's CreateRole does with
 * the option list gram.y builds.  Nodes live in the Parse's arena.
 */
#include "sql/parser.h"
#include "sql.h"

static void *new_node(Parse *p, size_t size, NodeTag tag, int loc)
{
    Node *n = arena_zalloc(p->arena, size);
    n->tag = tag;
    n->location = loc;
    return n;
}

Node *make_role_stmt(Parse *p, const Token *t, RoleStmtKind kind, bool is_user,
                     const Token *name, List *options)
{
    RoleStmt *r = new_node(p, sizeof(RoleStmt), T_RoleStmt, t->offset);
    r->kind = kind;
    r->is_user = is_user;
    r->name = name->z;
    r->options = options;
    return &r->hdr;
}

Node *make_role_rename(Parse *p, const Token *t, const Token *name, const Token *new_name)
{
    RoleStmt *r = new_node(p, sizeof(RoleStmt), T_RoleStmt, t->offset);
    r->kind = ROLESTMT_RENAME;
    r->name = name->z;
    r->new_name = new_name->z;
    return &r->hdr;
}

Node *make_role_drop(Parse *p, const Token *t, bool missing_ok, List *names)
{
    RoleStmt *r = new_node(p, sizeof(RoleStmt), T_RoleStmt, t->offset);
    r->kind = ROLESTMT_DROP;
    r->missing_ok = missing_ok;
    r->names = names;
    return &r->hdr;
}

Node *make_grant(Parse *p, const Token *t, bool is_grant, List *privileges, bool stream,
                 List *objects, List *grantees)
{
    GrantStmt *g = new_node(p, sizeof(GrantStmt), T_GrantStmt, t->offset);
    g->is_grant = is_grant;
    g->privileges = privileges;
    g->stream = stream;
    g->objects = objects;
    g->grantees = grantees;
    return &g->hdr;
}

Node *make_grant_all(Parse *p, const Token *t, bool is_grant, List *privileges,
                     const Token *kind, const Token *schema_kw, const Token *schema,
                     List *grantees)
{
    bool streams = strcmp(kind->z, "streams") == 0;
    const Token *bad = !streams && strcmp(kind->z, "tables") != 0 ? kind
                       : strcmp(schema_kw->z, "schema") != 0     ? schema_kw
                                                                 : NULL;
    if (bad != NULL) {
        parse_syntax_error(p, TK_ID, bad);
        p->failed = true;
        return make_grant(p, t, is_grant, privileges, false, NULL, grantees);
    }
    GrantStmt *g = (GrantStmt *)make_grant(p, t, is_grant, privileges, streams, NULL, grantees);
    g->all_in_schema = schema->z;
    return &g->hdr;
}
