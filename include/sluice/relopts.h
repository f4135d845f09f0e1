/*
 * relopts.h -- every WITH (...) option of a stream, table, sink and
 * continuous query, declared once: name, type, default, meaning, who may
 * set it and what it needs.  CREATE checks a definition's options against
 * it; `sluiced --list-options` prints it as the tables of
 * docs/sql-reference.md (tests/test_options_table.py keeps them equal and
 * checks that every option a reader asks for is declared here).
 *
 *   cat_relopts_check    a relation's WITH options against its table:
 *                        unknown names (with the closest as a hint),
 *                        values of the wrong form, options that need
 *                        another (required ones and ranges are the
 *                        readers' checks, which CREATE also runs)
 *   cat_relopts_sets     the tables, for listing
 *   cat_relopts_type_name  how a type reads in the docs
 *
 * Names are matched as written (case-sensitive).  A name with COLUMN in
 * it (fields.COLUMN.kind) stands for one per column of the stream; one
 * ending in PROPERTY (kafka.PROPERTY) for any name after its prefix,
 * whose own check is the connector's (kafka_conf.c's allow-list).
 */
#ifndef SLUICE_RELOPTS_H
#define SLUICE_RELOPTS_H

#include "sluice/catalog.h"

typedef enum RelOptType {
    RELOPT_TEXT,        /* any text */
    RELOPT_ENUM,        /* one of RelOpt.values */
    RELOPT_INT,         /* an integer */
    RELOPT_NUMBER,      /* a number */
    RELOPT_BOOL,        /* true / false (on, off, 1, 0) */
    RELOPT_INTERVAL,    /* '5 seconds', '250 ms', or a number of milliseconds */
    RELOPT_SIZE,        /* bytes, or with kB, MB, GB, TB ('64MB') */
    RELOPT_TRIGGER,     /* an interval, 'once' or 'available_now' */
    RELOPT_OFFSETS,     /* 'earliest', 'latest' or a JSON map */
    RELOPT_LIST,        /* a comma list */
} RelOptType;

/* flags */
#define RELOPT_REQUIRED  0x1u   /* must be given */
#define RELOPT_SERVER    0x2u   /* set by the server or a clause, not by WITH */

typedef struct RelOpt {
    const char *name;
    RelOptType  type;
    const char *values;     /* RELOPT_ENUM: "json, csv" */
    const char *dflt;       /* the default, as the docs show it */
    unsigned    flags;
    const char *superuser;  /* when it needs a superuser; NULL: never */
    const char *needs;      /* "format = csv": the option and value it needs; NULL */
    const char *meaning;
} RelOpt;

typedef struct RelOptSet {
    const char   *name;     /* "kafka stream" */
    const char   *what;     /* in messages: "a Kafka stream" */
    const RelOpt *opts;
    int           n;
} RelOptSet;

/* What cat_relopts_check checks: the names (each declared for def's kind
 * and connector, a per-column one naming a column) and the options each
 * needs (delimiter needs format = csv); the values' forms (an integer, one
 * of the listed values, ...).  The readers check required options and
 * ranges, and their own messages come first where they run at CREATE:
 * DDL checks the names, then runs the readers, then the values. */
#define RELOPTS_NAMES  0x1u
#define RELOPTS_VALUES 0x2u
/* 0 if def's options pass the checks asked for, else -1 with 22023 naming
 * the option (and a hint: the closest declared name or value within 3
 * edits, or what there is).  A sink's unknown connector is left to
 * sink.c's check. */
int              cat_relopts_check(const CatRelation *def, unsigned what, SlError *err);
/* The tables, in the order the docs show them; *n is set. */
const RelOptSet *cat_relopts_sets(int *n);
const char      *cat_relopts_type_name(const RelOpt *o);

#endif /* SLUICE_RELOPTS_H */
