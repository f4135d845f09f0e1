/*
 * jsonb.h -- the tree form of a JSONB value, shared by the type's input
 * and output (types/jsonb.c) and its operators and functions
 * (functions/jsonbfuncs.c), and jsonb_agg's escaping of strings
 * (exec/agg.c).  Not for use elsewhere: the rest of sluice
 * sees a jsonb value only as its canonical text (jsonb_parse, types.h).
 *
 *   JType, JNode                     a parsed value: scalars, arrays, objects
 *   jsonb_tree_of, jsonb_str_of      canonical text -> tree -> canonical text
 *   jsonb_serialize, jsonb_escape    a tree, a string as PostgreSQL prints them
 *   jsonb_key_cmp, jsonb_sort_pairs  object keys in canonical order
 *   jsonb_cmp_tree                   the btree order (types.h's jsonb_cmp on text)
 *
 * Every tree lives in the arena it was built in.
 */
#ifndef SLUICE_TYPES_JSONB_H
#define SLUICE_TYPES_JSONB_H

#include "sluice/types.h"

typedef enum JType { J_NULL, J_FALSE, J_TRUE, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } JType;

typedef struct JNode JNode;
struct JNode {
    JType       type;
    const char *str;        /* J_STRING: decoded bytes; J_NUMBER: canonical text */
    uint32_t    len;
    uint32_t    n;          /* elements or pairs */
    JNode      *items;      /* array elements, or object pairs as key, value, ... */
};

/* A canonical value (jsonb_parse's output) as a tree; it is valid, so this
 * cannot fail. */
void     jsonb_tree_of(Arena *a, const SlStr *v, JNode *root);
/* A tree's canonical text, in a. */
SlStr    jsonb_str_of(Arena *a, const JNode *n);
void     jsonb_serialize(StrBuf *b, const JNode *n);
/* A string in double quotes, escaped as PostgreSQL's escape_json. */
void     jsonb_escape(StrBuf *b, const char *s, uint32_t len);
/* The order of object keys: length, then bytes. */
int      jsonb_key_cmp(const JNode *a, const JNode *b);
/* Sorts n object pairs (2n items) by key, stably, keeps the last of each
 * run of equal keys; returns how many pairs remain. */
uint32_t jsonb_sort_pairs(Arena *a, JNode *items, uint32_t n);
/* PostgreSQL's btree order of jsonb (compareJsonbContainers): by type
 * rank (null < string < number < boolean < array < object; a top-level
 * scalar is a one-element array), arrays and objects by size, then
 * element by element (objects: key, then value, in key order). */
int      jsonb_cmp_tree(const JNode *a, const JNode *b);
/* Two scalars of one rank; the rank of a type. */
int      jsonb_scalar_cmp(const JNode *a, const JNode *b);
int      jsonb_type_rank(JType t);

#endif /* SLUICE_TYPES_JSONB_H */
