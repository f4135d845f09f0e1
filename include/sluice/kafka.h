/*
 * kafka.h -- the Kafka connector: a source for streams and an exactly-once
 * sink (src/connectors/kafka_*.c, the only files that include rdkafka.h;
 * docs/sql-reference.md "Kafka").
 *
 * Source (kafka_source.c, its reader kafka_reader.c):
 *   kafka_source_validate   check a stream's WITH options at CREATE (no I/O)
 *   kafka_source_open       a consumer for a query; a poller thread learns
 *                           the topics' partitions and their watermarks
 *   kafka_source_plan       [position, high watermark) per known partition,
 *                           from the poller's last look (never blocks);
 *                           from_earliest ignores starting_offsets (SELECT)
 *   kafka_source_commit     a batch committed: its positions go to the
 *                           consumer group, from the poller thread
 *   kafka_source_latest     a partition's high watermark and poll time
 *   kafka_source_topic, kafka_source_topic_index   the topic table
 *   kafka_reader_open, kafka_reader_need, kafka_reader_next, kafka_reader_close
 *                           the records of a batch's ranges (sluice's own
 *                           Fetch requests, or librdkafka's assign and
 *                           seek; never subscribe), decoded into rows;
 *                           undecodable ones handed to the batch at close
 *   kafka_source_close
 *
 * Sink (kafka_sink.c):
 *   kafka_sink_validate     check a sink's WITH options at CREATE (no I/O)
 *   kafka_sink_open         a transactional producer for a query (no I/O)
 *   kafka_sink_write        batch N's rows in one Kafka transaction with a
 *                           progress record naming N; a batch whose
 *                           transaction already committed is skipped
 *   kafka_sink_key          its key columns (none: deletes cannot be written)
 *   kafka_sink_close
 *
 * Who may set what (kafka_conf.c):
 *   kafka_policy_new, kafka_policy_unref   a KafkaPolicy: the runtime's
 *                           answer to "is this owner a superuser?" (others
 *                           may set only the librdkafka properties that
 *                           read or run nothing on the host) and the
 *                           brokers a non-superuser may name
 *   kafka_property_allowed  whether a non-superuser may set one property
 *
 * The reader, the plan and the sink write run on worker threads; the
 * validation on the loop.  Nothing here touches the catalog.
 */
#ifndef SLUICE_KAFKA_H
#define SLUICE_KAFKA_H

#include "sluice/catalog.h"
#include "sluice/deadset.h"
#include "sluice/offsets.h"
#include "sluice/state.h"

typedef struct KafkaSource KafkaSource;
typedef struct KafkaReader KafkaReader;
typedef struct KafkaSink KafkaSink;

/* Metadata column names a Kafka stream may declare. */
#define KAFKA_META_KEY       "_key"
#define KAFKA_META_PARTITION "_partition"
#define KAFKA_META_OFFSET    "_offset"
#define KAFKA_META_TIMESTAMP "_timestamp"
#define KAFKA_META_HEADERS   "_headers"

/* Who may set what and reach which broker: the runtime's policy (held by
 * its Runtime), handed to every check and open below; it must outlive the
 * sources and sinks opened with it.  Immutable once made, and reference
 * counted: each librdkafka handle built from it holds a reference until
 * it is destroyed (a consumer whose close is left behind may outlive the
 * Runtime).  hosts: --kafka-allowed-hosts, "host[:port],..." ("host": any
 * port, "*": every host; NULL or "": no broker for an owner that is not a
 * superuser).  owner_is_superuser(arg, owner) runs on any thread (arg must
 * outlive the sources and sinks; NULL trusts nobody).  A NULL policy
 * trusts nobody and allows no broker. */
typedef struct KafkaPolicy KafkaPolicy;
KafkaPolicy *kafka_policy_new(const char *hosts,
                              bool (*owner_is_superuser)(void *arg, uint32_t owner), void *arg);
void         kafka_policy_unref(KafkaPolicy *p);
/* name without the "kafka." prefix. */
bool kafka_property_allowed(const char *name);

int  kafka_source_validate(const KafkaPolicy *pol, const CatRelation *def, SlError *err);
/* owner names the consumer group (sluice-<owner> unless group.id is
 * given); dead is the stream that undecodable records go to, or NULL. */
int  kafka_source_open(const KafkaPolicy *pol, StateStore *st, const CatRelation *rel,
                       const char *owner, const CatRelation *dead, KafkaSource **out,
                       SlError *err);
void kafka_source_close(KafkaSource *ks);
/* out gets every known partition with start = its position in pos (or the
 * starting offset for a new one) and end = its high watermark.  Returns 0,
 * SOURCE_NOT_READY (-2) before the first look at the topics, -1 with err
 * for a deleted topic or lost data (unless fail_on_data_loss = false). */
int  kafka_source_plan(KafkaSource *ks, const SourceOffsets *pos, bool from_earliest,
                       SourceOffsets *out, SlError *err);
void kafka_source_commit(KafkaSource *ks, const SourceOffsets *pos);
bool kafka_source_latest(KafkaSource *ks, int32_t topic, int32_t part, int64_t *latest,
                         int64_t *poll_us);
const char *kafka_source_topic(KafkaSource *ks, int32_t topic);
int32_t kafka_source_topic_index(KafkaSource *ks, const char *name);

KafkaReader *kafka_reader_open(KafkaSource *ks, const SourceOffsets *ranges);
/* need[c]: stream column c is read at all (NULL, the default: all; need
 * lives as long as the reader).  The others are left NULL (format.h says
 * which checks their values still get). */
void kafka_reader_need(KafkaReader *r, const uint8_t *need);
int  kafka_reader_next(KafkaReader *r, Arena *a, Batch **out, SlError *err);
/* Closes the reader.  With dead not NULL, the records it could not decode
 * move there (rows of the stream's dead-letter stream, keyed by topic,
 * partition and offset), for the batch to append with its state; a reader
 * that failed hands over none. */
void kafka_reader_close(KafkaReader *r, DeadSet *dead);

int  kafka_sink_validate(const KafkaPolicy *pol, const CatRelation *def, SlError *err);
/* Columns of the query's output; the query's name, oid and creation time
 * make the transactional.id. */
int  kafka_sink_open(const KafkaPolicy *pol, const CatRelation *sink, const CatRelation *query,
                     KafkaSink **out, SlError *err);
/* Writes batch_id's output: rows (nb batches laid out as the query's
 * columns) as records, and for each of the ndel tombstone batches (the key
 * columns of deleted groups, laid out as the output) a record with a NULL
 * value.  Returns 1 written, 0 skipped (that batch had committed before),
 * -1 on error. */
int  kafka_sink_write(KafkaSink *k, int64_t batch_id, const Batch *const *rows, int nb,
                      const Batch *const *dels, int ndel, SlError *err);
/* The key columns (indexes into the query's columns); returns how many,
 * 0 when the sink has no key. */
int  kafka_sink_key(const KafkaSink *k, const int **cols);
void kafka_sink_close(KafkaSink *k);

#endif /* SLUICE_KAFKA_H */
