/*
 * nexmark_kafka.h -- nexmark_gen's Kafka writer (nexmark_kafka.c).
 *
 *   nexmark_kafka_open   a producer for a topic, made with N partitions if
 *                        it is missing
 *   nexmark_kafka_send   one event's JSON as one record
 *   nexmark_kafka_close  wait until every record is acknowledged
 *
 * Each returns 0 or -1 after printing what went wrong on stderr.
 */
#ifndef SLUICE_NEXMARK_KAFKA_H
#define SLUICE_NEXMARK_KAFKA_H

#include <stddef.h>
#include <stdint.h>

typedef struct NexmarkKafka NexmarkKafka;

/* partitions 0: the topic's partition count (1 for a topic it creates);
 * linger_ms: how long librdkafka waits to fill a batch. */
int nexmark_kafka_open(const char *bootstrap, const char *topic, int partitions, int linger_ms,
                       NexmarkKafka **out);
/* Event number n goes to partition n mod partitions; ts_ms is the record's
 * timestamp.  The payload is copied. */
int nexmark_kafka_send(NexmarkKafka *k, int64_t n, int64_t ts_ms, const char *json, size_t len);
int nexmark_kafka_close(NexmarkKafka *k);

#endif /* SLUICE_NEXMARK_KAFKA_H */
