/*
 * aclfuncs.c -- the privilege inquiry functions of PostgreSQL's acl.c:
 *
 *   has_table_privilege([role,] table, privilege)
 *   has_schema_privilege([role,] schema, privilege)
 *   has_database_privilege([role,] database, privilege)
 *   pg_has_role([role,] role, privilege)
 *   pg_get_userbyid(oid)
 *
 * A role or object argument is a name (text) or an oid (an integer).  The
 * kernels only unpack their arguments: the answers come from the hooks the
 * evaluation context carries (EvalCtx.hooks->acl, acl.h), because the
 * executor never reads the catalog.  A context without them (one the
 * runtime did not make) fails the call with 55000.  The forms without a
 * role ask about the hooks' role where they name one (a continuous
 * query's owner), else about the running statement's role.
 */
#include "functions/kernels.h"
#include "sluice/acl.h"

/* The context's answers, or NULL with 55000 in cx->err. */
static const ExAclHooks *hooks(EvalCtx *cx, const Expr *e)
{
    if (cx->hooks == NULL || cx->hooks->acl == NULL) {
        sl_error(cx->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                 "%s needs the catalog, and none is open here", e->fn->name);
        return NULL;
    }
    return cx->hooks->acl;
}

/* Argument a of row i as a name (NUL-terminated, in the arena) or an oid. */
static void arg_ref(EvalCtx *cx, const Expr *e, const Vector *args, int a, uint32_t i,
                    const char **name, int64_t *oid)
{
    SlTypeId t = e->fn->kargs[a];
    if (t == TYPE_TEXT) {
        const SlStr *s = &args[a].v.str[i];
        *name = arena_strndup(cx->arena, s->ptr ? s->ptr : "", s->len);
        *oid = 0;
    } else {
        *name = NULL;
        *oid = args[a].v.i64[i];
    }
}

static int ask(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
               const uint32_t *sel, uint32_t n, AclObjKind kind)
{
    const ExAclHooks *h = hooks(cx, e);
    if (h == NULL)
        return -1;
    int nargs = e->fn->nargs;
    FOR_SEL(sel, n, {
        AclQuestion q = {.kind = kind, .current_role = nargs == 2};
        if (q.current_role && cx->hooks->role != 0) {
            q.current_role = false;         /* a continuous query's owner */
            q.role_oid = cx->hooks->role;
        }
        int a = 0;
        if (nargs == 3)
            arg_ref(cx, e, args, a++, i, &q.role, &q.role_oid);
        arg_ref(cx, e, args, a++, i, &q.object, &q.object_oid);
        const SlStr *p = &args[a].v.str[i];
        q.privilege = arena_strndup(cx->arena, p->ptr ? p->ptr : "", p->len);
        int rc = h->check(cx->hooks->acl_arg, &q, cx->err);
        if (rc < 0)
            return -1;
        out->v.b[i] = rc == ACL_YES;
        if (rc == ACL_NULL)
            out->nulls[i] = 1;
    });
    return 0;
}

KERNEL(k_has_table_privilege) { return ask(cx, e, args, out, sel, n, ACL_OBJ_TABLE); }
KERNEL(k_has_schema_privilege) { return ask(cx, e, args, out, sel, n, ACL_OBJ_SCHEMA); }
KERNEL(k_has_database_privilege) { return ask(cx, e, args, out, sel, n, ACL_OBJ_DATABASE); }
KERNEL(k_pg_has_role) { return ask(cx, e, args, out, sel, n, ACL_OBJ_ROLE); }

KERNEL(k_pg_get_userbyid)
{
    const ExAclHooks *h = hooks(cx, e);
    if (h == NULL)
        return -1;
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        char *s = h->role_name(cx->hooks->acl_arg, oid, cx->arena);
        if (s == NULL)
            s = arena_printf(cx->arena, "unknown (OID=%lld)", (long long)oid);
        out->v.str[i].ptr = s;
        out->v.str[i].len = (uint32_t)strlen(s);
    });
    return 0;
}
