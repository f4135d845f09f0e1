/*
 * acl.h -- the privilege questions expressions ask (has_table_privilege,
 * has_schema_privilege, has_database_privilege, pg_has_role,
 * pg_get_userbyid), answered by the runtime, which knows the catalog and
 * the session's role.  The functions never read the catalog themselves:
 * whoever makes an evaluation context hands it the runtime's answers
 * (expr.h's ExFnHooks.acl, with acl_arg), a client statement's and a
 * continuous query's batch alike.  The hooks may be called on any thread:
 * they read the catalog under its read lock.
 */
#ifndef SLUICE_ACL_H
#define SLUICE_ACL_H

#include "sluice/arena.h"
#include "sluice/error.h"

typedef enum AclObjKind {
    ACL_OBJ_TABLE, ACL_OBJ_SCHEMA, ACL_OBJ_DATABASE, ACL_OBJ_ROLE
} AclObjKind;

/* One call's arguments.  A role or object is given by name (NUL-
 * terminated) or by oid; no role argument means the current role. */
typedef struct AclQuestion {
    AclObjKind  kind;
    bool        current_role;
    const char *role;           /* NULL: by role_oid */
    int64_t     role_oid;
    const char *object;         /* NULL: by object_oid */
    int64_t     object_oid;
    const char *privilege;      /* "SELECT", "select, insert", "USAGE", ... */
} AclQuestion;

/* The answers of an ACL_CHECK_* kind. */
enum { ACL_NO = 0, ACL_YES = 1, ACL_NULL = 2 };

/* Each is called with ExFnHooks.acl_arg (the runtime's: its catalog). */
typedef struct ExAclHooks {
    /* ACL_YES, ACL_NO, ACL_NULL (an oid that names nothing, as PostgreSQL
     * answers NULL), or -1 with err set. */
    int         (*check)(void *arg, const AclQuestion *q, SlError *err);
    /* The name of the role with this oid, copied into a, or NULL. */
    char       *(*role_name)(void *arg, int64_t oid, Arena *a);
} ExAclHooks;

#endif /* SLUICE_ACL_H */
