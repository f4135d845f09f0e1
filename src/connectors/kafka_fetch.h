/*
 * kafka_fetch.h -- the Kafka source's own Fetch path: one connection to a
 * partition leader, Fetch requests for a batch's ranges, and the records of
 * each response parsed in place (kafka_fetch.c; docs/kafka-fetch.md).  Not
 * for use outside src/connectors/kafka_*.c.
 *
 *   kf_connect         a plaintext connection to a broker, with the Fetch
 *                      version it speaks (ApiVersions), or NULL and why
 *   kf_conn_close
 *   kf_conn_broker     the broker id it was made for
 *   kf_fetch           one Fetch request for partitions at offsets, and its
 *                      whole response read into the connection's buffer
 *   kf_next            the response's next record at or past its ask's
 *                      offset, or the offset a partition has reached, or
 *                      (kf_report_markers) a transaction's end
 *   kf_report_markers  whether kf_next reports COMMIT and ABORT markers
 *   kf_skip            drop the rest of an ask's records in the response
 *   kf_ask_info        what the response said of an ask's partition
 *
 * Nothing here allocates per record: a record's key, value and headers
 * point into the response, or into the connection's buffer of the batch
 * decompressed, and stay valid until the next kf_next or kf_fetch.  Every
 * failure (the network, a version, a format or codec it does not read, an
 * error code of the broker's) is returned with its reason; the caller
 * falls back to librdkafka's reader.
 */
#ifndef SLUICE_CONNECTORS_KAFKA_FETCH_H
#define SLUICE_CONNECTORS_KAFKA_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/strbuf.h"

typedef struct KfConn KfConn;

/* One partition a Fetch asks for. */
typedef struct KfAsk {
    const char *topic;
    int32_t     part;
    int64_t     offset;
} KfAsk;

/* A record of a response, or (kf_next's 2) a position. */
typedef struct KfRecord {
    int            ask;             /* the KfAsk it answers */
    int64_t        offset;          /* the record's, or the position reached */
    int64_t        ts_ms;           /* -1: none */
    const char    *key;             /* NULL: a NULL key */
    size_t         key_len;
    const char    *value;           /* NULL: a NULL value (a tombstone) */
    size_t         len;
    const uint8_t *headers;         /* the record's headers, as encoded */
    const uint8_t *headers_end;
    int32_t        nheaders;
    int64_t        pid;             /* the producer id of its batch (-1: none) */
    bool           transactional;   /* written in a transaction */
    bool           commit;          /* kf_next's 3: a COMMIT (else ABORT) marker */
} KfRecord;

/* What a response said of one ask. */
typedef struct KfAskInfo {
    int16_t error;                  /* Kafka's error code, 0 none */
    int64_t high;                   /* high watermark */
    int64_t stable;                 /* last stable offset (-1 unknown) */
    bool    had_batches;            /* record batches came back, whole or cut short */
} KfAskInfo;

KfConn *kf_connect(const char *host, int port, int32_t broker, int timeout_ms, char *why,
                   size_t whylen);
void    kf_conn_close(KfConn *c);
int32_t kf_conn_broker(const KfConn *c);
/* read_committed: isolation level 1, and records of aborted transactions
 * are skipped.  Returns 0, or -1 with why (the connection is then of no
 * further use). */
int     kf_fetch(KfConn *c, const KfAsk *asks, int nasks, bool read_committed, int max_wait_ms,
                 int timeout_ms, char *why, size_t whylen);
/* 1: rec is a record (offset at or past its ask's); 2: rec->offset is the
 * offset after the last batch of rec->ask read (control batches and aborted
 * transactions included); 3 (only after kf_report_markers(c, true)): rec
 * is the transaction marker at rec->offset of producer rec->pid, a COMMIT
 * if rec->commit, else an ABORT; 0: the response is done; -1: why. */
int     kf_next(KfConn *c, KfRecord *rec, char *why, size_t whylen);
/* With on, kf_next also returns the COMMIT and ABORT markers at or past
 * an ask's offset: a read_uncommitted reader that resolves transactions
 * itself, to the high watermark, where read_committed stops at the last
 * stable offset. */
void    kf_report_markers(KfConn *c, bool on);
void    kf_skip(KfConn *c, int ask);
void    kf_ask_info(const KfConn *c, int ask, KfAskInfo *out);
/* A record's headers as a JSON object {"name": "value" | null, ...} into
 * out.  Returns 0, or -1 if they do not parse. */
int     kf_headers_json(const KfRecord *rec, StrBuf *out);

#endif /* SLUICE_CONNECTORS_KAFKA_FETCH_H */
