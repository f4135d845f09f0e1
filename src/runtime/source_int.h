/*
 * source_int.h -- what source.c and the sources of each connector share:
 * the table of functions a connector implements (SourceOps), the Source
 * and SourceReader every connector's own structs start with, and the plan
 * of a one-partition source.
 *
 *   SourceOps                 one connector's source (see below)
 *   source_stream_ops         internal and files streams (source_stream.c)
 *   source_datagen_ops, source_nexmark_ops   generated streams (source_gen.c)
 *   source_kafka_ops          Kafka topics (source_kafka.c)
 *   source_changelog_ops      a continuous query's result table, as its
 *                             changelog (changelog.c)
 *   source_plan_one           the range of a one-partition source, from its
 *                             latest offset (source.c)
 *   source_lag_now            a lag row's latest offset, read now (source.c)
 *
 * source.c picks the ops from the relation's connector option, once, in
 * source_open; every other call goes through them.  Nothing here is used
 * outside src/runtime/source*.c and changelog.c.
 */
#ifndef SLUICE_RUNTIME_SOURCE_INT_H
#define SLUICE_RUNTIME_SOURCE_INT_H

#include "source.h"

/* One connector's source.  A NULL member means "nothing to do" as each
 * says.  Every member but plan, committed and lag is called from one
 * thread at a time (source.h). */
typedef struct SourceOps {
    /* Opens the connector's side of src (src->rel, src->st, src->rt and
     * src->arena set; src->impl for its own object).  0 or -1; NULL: nothing to open. */
    int  (*open)(Source *src, const char *owner, SlError *err);
    void (*close)(Source *src);                         /* NULL: nothing */
    /* Every known partition's range from pos to the latest offset the
     * source knows, uncapped (source_plan caps them).  0,
     * SOURCE_NOT_READY or -1. */
    int  (*plan)(Source *src, const SourceOffsets *pos, int64_t now_us, SourceOffsets *out,
                 SlError *err);
    /* The source is bounded and ranges reach its end.  NULL: never ends. */
    bool (*ended)(const Source *src, const SourceOffsets *ranges);
    /* A batch over pos committed.  NULL: nothing to tell. */
    void (*committed)(Source *src, const SourceOffsets *pos);
    /* Fills l->topic, l->latest and l->last_poll_us of partition p when the
     * connector knows better than the last plan (source_lag set them from
     * src->latest).  NULL: the last plan's answer stands. */
    void (*lag)(Source *src, const SrcPart *p, SourceLag *l);
    /* The source has one partition (-1, 0), known before its first batch:
     * source_lag shows it at position 0 before then. */
    bool one_part;
    /* The topic table, for the offset log's JSON.  NULL: partitions have
     * no topic (a logged "topic" member is then an unreadable entry). */
    const char *(*topic)(Source *src, int32_t topic);
    int32_t (*topic_index)(Source *src, const char *name);
    /* A reader of ranges: allocates its own struct, which starts with a
     * SourceReader, and sets its src.  The reads of a batch's ranges. */
    SourceReader *(*reader_open)(Source *src, const SourceOffsets *ranges);
    int  (*reader_next)(SourceReader *r, Arena *a, Batch **out, SlError *err);
    void (*reader_need)(SourceReader *r, const uint8_t *need);     /* NULL: a hint ignored */
    /* Ends the reader and frees it (dead: as source_reader_close).  0 or -1. */
    int  (*reader_close)(SourceReader *r, DeadLetters *dead, SlError *err);
} SourceOps;

struct Source {
    const SourceOps   *ops;
    const CatRelation *rel;     /* referenced while the source is open */
    StateStore        *st;
    struct Runtime    *rt;      /* where it was opened (source_open), or NULL */
    void              *impl;    /* the connector's object (Datagen, KafkaSource...) */
    Arena              arena;   /* the connector's settings */
    int64_t            latest;  /* one-partition sources: the end last planned to */
    int64_t            latest_us;
};

struct SourceReader {
    Source *src;
};

extern const SourceOps source_stream_ops;
extern const SourceOps source_datagen_ops;
extern const SourceOps source_nexmark_ops;
extern const SourceOps source_kafka_ops;
extern const SourceOps source_changelog_ops;

/* The range of partition (-1, 0) from pos to latest (latest < 0: -1, the
 * error already set); remembers latest and now_us for source_lag.  0 or -1. */
int source_plan_one(Source *src, const SourceOffsets *pos, int64_t latest, int64_t now_us,
                    SourceOffsets *out);
/* A lag row's latest offset, read afresh now (SourceOps.lag). */
void source_lag_now(SourceLag *l, int64_t latest);

#endif /* SLUICE_RUNTIME_SOURCE_INT_H */
