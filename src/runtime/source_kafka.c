/*
 * source_kafka.c -- the source of a Kafka stream: its topics, read through
 * the consumer and reader of src/connectors/kafka_source.c and
 * kafka_reader.c (kafka.h).
 *
 *   source_kafka_ops     (source_int.h)
 *   source_scan_kafka    a plain SELECT's scan of a Kafka stream (its wait
 *                        for a first answer ends at a cancel or timeout)
 *
 * Partitions are named by topic (an index into the consumer's topic
 * table) and partition; the plan is [position, high watermark) of each,
 * from the poller thread's last look, and SOURCE_NOT_READY before its
 * first.  A committed batch's positions go to the consumer group.  The
 * records a reader cannot decode go to the stream's dead-letter stream,
 * <stream>_dead_letters, when the catalog has one.
 */
#include "source_int.h"

#include "runtime_int.h"
#include "sluice/kafka.h"

#include <assert.h>
#include <time.h>

typedef struct KafkaSrcReader {
    SourceReader base;
    KafkaReader *kafka;
} KafkaSrcReader;

static int ksrc_open(Source *src, const char *owner, SlError *err)
{
    const char *dname = arena_printf(&src->arena, "%s_dead_letters", src->rel->name);
    Runtime *rt = src->rt;
    const CatRelation *dead = rt != NULL && rt->cat != NULL ? cat_lookup(rt->cat, dname) : NULL;
    KafkaSource *ks;
    const KafkaPolicy *pol = rt != NULL ? rt->kafka : NULL;
    if (kafka_source_open(pol, src->st, src->rel, owner, dead, &ks, err) < 0)
        return -1;
    src->impl = ks;
    return 0;
}

static void ksrc_close(Source *src)
{
    kafka_source_close(src->impl);
}

static int ksrc_plan(Source *src, const SourceOffsets *pos, int64_t now_us, SourceOffsets *out,
                     SlError *err)
{
    (void)now_us;
    return kafka_source_plan(src->impl, pos, false, out, err);
}

static void ksrc_committed(Source *src, const SourceOffsets *pos)
{
    kafka_source_commit(src->impl, pos);
}

static void ksrc_lag(Source *src, const SrcPart *p, SourceLag *l)
{
    l->topic = kafka_source_topic(src->impl, p->topic);
    if (!kafka_source_latest(src->impl, p->topic, p->part, &l->latest, &l->last_poll_us))
        l->latest = p->end;
}

static const char *ksrc_topic(Source *src, int32_t topic)
{
    return kafka_source_topic(src->impl, topic);
}

static int32_t ksrc_topic_index(Source *src, const char *name)
{
    return kafka_source_topic_index(src->impl, name);
}

static SourceReader *ksrc_reader_open(Source *src, const SourceOffsets *ranges)
{
    KafkaSrcReader *r = sl_calloc(1, sizeof(KafkaSrcReader));
    r->base.src = src;
    r->kafka = kafka_reader_open(src->impl, ranges);
    return &r->base;
}

static int ksrc_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err)
{
    return kafka_reader_next(((KafkaSrcReader *)r)->kafka, a, out, err);
}

static void ksrc_reader_need(SourceReader *r, const uint8_t *need)
{
    kafka_reader_need(((KafkaSrcReader *)r)->kafka, need);
}

static int ksrc_reader_close(SourceReader *r, DeadLetters *dead, SlError *err)
{
    (void)err;
    KafkaSrcReader *k = (KafkaSrcReader *)r;
    DeadSet s = {0};
    kafka_reader_close(k->kafka, dead != NULL ? &s : NULL);
    if (s.rel != NULL)
        dead_letters_take(dead, &s);
    sl_free(k);
    return 0;
}

const SourceOps source_kafka_ops = {
    .open = ksrc_open,
    .close = ksrc_close,
    .plan = ksrc_plan,
    .committed = ksrc_committed,
    .lag = ksrc_lag,
    .topic = ksrc_topic,
    .topic_index = ksrc_topic_index,
    .reader_open = ksrc_reader_open,
    .reader_next = ksrc_reader_next,
    .reader_need = ksrc_reader_need,
    .reader_close = ksrc_reader_close,
};

/* ---------------------------------------------------------------------- */
/* A plain SELECT over a Kafka stream                                      */

typedef struct KafkaScan {
    ExSource       base;
    Source        *src;
    SourceReader  *reader;
    SourceOffsets  ranges;
} KafkaScan;

static int kscan_next(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    KafkaScan *k = (KafkaScan *)s;
    if (keys)
        *keys = NULL;
    return source_reader_next(k->reader, a, out, err);
}

static void kscan_close(ExSource *s)
{
    KafkaScan *k = (KafkaScan *)s;
    /* A plain SELECT records no dead letters: it writes nothing. */
    if (k->reader)
        source_reader_close(k->reader, NULL, NULL);
    source_close(k->src);
    srcoffs_free(&k->ranges);
    sl_free(k);
}

ExSource *source_scan_kafka(Runtime *rt, StateStore *st, const CatRelation *rel, SlError *err)
{
    KafkaScan *k = sl_calloc(1, sizeof(KafkaScan));
    k->base.next = kscan_next;
    k->base.close = kscan_close;
    if (source_open(rt, st, rel, "select", &k->src, err) < 0) {
        sl_free(k);
        return NULL;
    }
    assert(k->src->ops == &source_kafka_ops);
    /* The poller's first look: wait for it (30 s at most, and no longer
     * than the statement may run: a cancel or statement_timeout ends the
     * wait with 57014). */
    for (int i = 0; i < 1500; i++) {
        int rc = kafka_source_plan(k->src->impl, NULL, true, &k->ranges, err);
        if (rc == 0)
            break;
        if (rc == SOURCE_NOT_READY && ex_check_interrupt(err) < 0) {
            kscan_close(&k->base);
            return NULL;
        }
        if (rc != SOURCE_NOT_READY || i == 1499) {
            if (rc == SOURCE_NOT_READY)
                sl_error(err, ERRCODE_CONNECTION_FAILURE,
                         "stream \"%s\": no answer from Kafka within 30 s", rel->name);
            kscan_close(&k->base);
            return NULL;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    k->reader = source_reader_open(k->src, &k->ranges);
    return &k->base;
}
