/*
 * kafka_int.h -- what the Kafka source and sink share (kafka_conf.c).  Not
 * for use outside src/connectors/kafka_*.c.
 *
 *   kafka_conf_build   a librdkafka configuration from a relation's WITH
 *                      options: bootstrap_servers and every "kafka.<name>"
 *                      passed through, checked by librdkafka itself
 *                      once the owner may set them (42501)
 *   kafka_broker_allowed  whether an owner's client may connect to a broker
 *                      (--kafka-allowed-hosts)
 *   kafka_owner_trusted   whether an owner is a superuser now
 *   kafka_error        a librdkafka error as an SlError with a SQLSTATE
 *   kafka_transient    whether an error may pass if the work is done again
 *   kafka_fetch_choice the option fetch = 'direct' (the default) or
 *                      'librdkafka', and whether sluice's own Fetch path
 *                      (kafka_fetch.c) can serve: not with TLS or SASL
 */
#ifndef SLUICE_CONNECTORS_KAFKA_INT_H
#define SLUICE_CONNECTORS_KAFKA_INT_H

#include <librdkafka/rdkafka.h>

#include "sluice/kafka.h"
#include "sluice/options.h"
#include "sluice/strbuf.h"

/* defaults: name/value pairs set before the user's, NULL-terminated;
 * owner: the role that owns the relation (pol says whether it may set any
 * property and which brokers it may name; pol NULL trusts nobody and
 * allows no broker).  pol must outlive the clients made from the result. */
int kafka_conf_build(const KafkaPolicy *pol, const Options *o, const char *relname,
                     uint32_t owner, const char *const *defaults, rd_kafka_conf_t **out,
                     SlError *err);
/* A configuration kafka_conf_build made that rd_kafka_new did not take
 * (pol: the one it was built with), and a handle made from one: each
 * drops the policy's reference that the configuration held. */
void kafka_conf_discard(rd_kafka_conf_t *conf, const KafkaPolicy *pol);
void kafka_handle_destroy(rd_kafka_t *rk);
/* host as the metadata names it (an IPv6 address without brackets too). */
bool kafka_broker_allowed(const KafkaPolicy *pol, uint32_t owner, const char *host, int port);
/* owner is a superuser now (pol's owner_is_superuser; false without one). */
bool kafka_owner_trusted(const KafkaPolicy *pol, uint32_t owner);
/* The SQLSTATE is 08006 (connection failure) for a transient error -- a
 * broker away, a timeout, a leader or coordinator moving: the runtime runs
 * the batch again -- 42704 for a missing topic, 58000 otherwise. */
int kafka_error(SlError *err, rd_kafka_resp_err_t code, const char *what);
bool kafka_transient(rd_kafka_resp_err_t code);
/* *direct: fetch is not 'librdkafka' and no option asks for TLS or SASL,
 * which only librdkafka speaks.  -1 for a fetch value not known. */
int kafka_fetch_choice(const Options *o, bool *direct, SlError *err);

#endif /* SLUICE_CONNECTORS_KAFKA_INT_H */
