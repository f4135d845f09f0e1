/*
 * kafka_source_int.h -- what the Kafka source (kafka_source.c: options, the
 * poller, planning) and its reader (kafka_reader.c: a batch's records)
 * share.  Not for use outside src/connectors/kafka_*.c.
 *
 *   KafkaSource, KafkaReader, KRec   the source, a batch's reader, a record
 *   kafka_poller_start       start the poller thread (ks->mu held)
 *   kafka_messages_destroy   librdkafka messages [from, n) of an array
 *   kafka_wall_us            the wall clock in microseconds
 */
#ifndef SLUICE_CONNECTORS_KAFKA_SOURCE_INT_H
#define SLUICE_CONNECTORS_KAFKA_SOURCE_INT_H

#include "kafka_fetch.h"
#include "kafka_int.h"

#include "sluice/format.h"

#include "sluice/functions.h"

#include <pthread.h>

#define POLL_MS         250
#define METADATA_MS     5000    /* the poller's metadata request */
#define FIRST_LOOK_MS   1000    /* ... until one succeeded */
#define READ_BATCH      512     /* records taken from librdkafka's queue at once */
#define HOLD_MAX        (1 << 18)   /* records a reader keeps for the next */
#define DESTROY_WAIT_MS 3000    /* close_timeout's default: see destroy_consumer */
#define MAX_TOPICS      256
#define SOURCE_NOT_READY (-2)
#define POOL_MAX        16      /* idle connections of the direct path kept */
#define CONNECT_MS      5000    /* connecting and ApiVersions */
#define FETCH_WAIT_MS   500     /* the broker's wait on a Fetch with nothing yet */
#define FETCH_SLACK_MS  10000   /* a Fetch's answer, past that wait */

typedef enum KFormat { KF_JSON, KF_CSV, KF_RAW } KFormat;
typedef enum KMeta { KM_NONE, KM_KEY, KM_PARTITION, KM_OFFSET, KM_TIMESTAMP, KM_HEADERS } KMeta;
typedef enum KStart { KS_EARLIEST, KS_LATEST, KS_MAP } KStart;

typedef struct SnapPart {
    int32_t topic, part;
    int64_t low, high;
    int32_t leader;         /* broker id, -1 none */
} SnapPart;

typedef struct SnapBroker {
    int32_t id;
    int     port;
    char   *host;
} SnapBroker;

/* A record of a batch's ranges, from either reader: librdkafka's message,
 * or the direct path's record (pointing into its response). */
typedef struct KRec {
    int                 range;          /* in the reader's ranges */
    int64_t             offset;
    const char         *value;          /* NULL: a NULL value */
    size_t              len;
    rd_kafka_message_t *m;              /* librdkafka's, or NULL */
    KfRecord            kf;             /* the direct path's */
} KRec;

typedef struct StartAt {
    int32_t topic, part;
    int64_t offset;         /* -2 earliest, -1 latest */
} StartAt;

struct KafkaSource {
    const KafkaPolicy *pol;         /* the caller's: who may reach which broker */
    Arena              arena;           /* options, spec, names */
    const CatRelation *rel;
    const CatRelation *dead;            /* <stream>_dead_letters, or NULL */
    StateStore        *st;
    Options            opts;
    char              *group;
    /* what to read */
    const char        *topics[MAX_TOPICS]; /* the topic table; [0, ntopics) */
    int                ntopics;
    int                nnamed;          /* topics named by topic / topics */
    bool               pattern;
    ExRegex           *re;
    KStart             start;
    StartAt           *start_map;
    int                nstart_map;
    bool               fail_on_data_loss;
    bool               direct;          /* fetch = 'direct' and nothing that needs librdkafka */
    bool               read_committed;  /* isolation.level */
    int64_t            read_timeout_us;
    int64_t            close_timeout_us;    /* the bound on destroying the consumer */
    /* how to decode */
    KFormat            format;
    FmtSpec            spec;            /* the value's columns */
    KMeta             *meta;            /* per stream column */
    int               *payload_col;     /* per stream column: index in spec, or -1 */
    SlType            *payload_types;
    /* the poller */
    pthread_mutex_t    mu;
    pthread_cond_t     cond;
    pthread_t          thread;
    bool               started, stop;
    bool               busy;            /* the poller waits on the broker (a request) */
    bool               ended;           /* the poller's thread has done its work */
    bool               left;            /* close went on without it: the poller
                                         * frees the source (source_free) */
    bool               made;            /* the poller tried to make rk */
    rd_kafka_t        *rk;
    bool               ready;           /* a snapshot was taken */
    char              *error;           /* the last look's error, or NULL */
    const char        *error_state;
    SnapPart          *snap;
    int                nsnap, capsnap;
    SnapBroker        *brokers;         /* of the last metadata */
    int                nbrokers;
    KfConn            *pool[POOL_MAX];  /* the direct path's idle connections */
    int                npool;
    int64_t            poll_us;
    SourceOffsets      to_commit;       /* pending positions for the group */
    bool               commit_pending;
    /* What a batch's reader leaves to the next (see "Reading a batch"):
     * the consumer stays assigned, fetching on, and kept_at says where
     * each partition's next batch must start for that to be of use;
     * held are the records and end-of-file events it took from the queue
     * past its ranges, in the order taken.  Only readers touch these, one
     * at a time (nreaders counts them). */
    bool                 kept;
    SourceOffsets        kept_at;
    rd_kafka_message_t **held;
    int                  nheld, capheld;
    int                  nreaders;
};

struct KafkaReader {
    KafkaSource   *ks;
    SourceOffsets  ranges;
    bool          *done;
    int64_t       *next;            /* per range: the next offset wanted */
    int            remaining;
    KRec                cur;            /* a record decoded in part, if has_cur */
    bool                has_cur;
    /* The direct path (kafka_fetch.h), while direct */
    bool                direct;
    KfConn             *conn;
    bool                in_response;    /* conn's last response is being walked */
    KfAsk              *asks;           /* of that request */
    int                *ask_range;
    int                 nasks;
    int32_t            *leader;         /* per range */
    int64_t             nfetch;
    rd_kafka_queue_t   *queue;          /* the consumer's queue, or NULL */
    rd_kafka_message_t *msgs[READ_BATCH];   /* taken from it, [imsg, nmsgs) unread */
    int                 imsg, nmsgs;
    rd_kafka_message_t **held;          /* the last reader's, [iheld, nheld) unread */
    int                  iheld, nheld;
    rd_kafka_message_t **keep;          /* past the ranges: for the next reader */
    int                  nkeep, capkeep;
    bool                 can_keep;      /* nothing past the ranges was dropped */
    const rd_kafka_topic_t *last_rkt;   /* range_of's last answer */
    int32_t             last_part;
    int                 last_range;
    FmtResult      res;
    FmtSpec        spec;            /* ks->spec with the reader's need */
    const uint8_t *need;            /* per stream column, NULL: all */
    uint8_t       *spec_need;       /* per value column */
    int64_t        last_progress_us;
    int64_t        wait_us;         /* waiting on an empty queue */
    int64_t        nread;           /* records read in range */
    int64_t        open_us;
    bool           failed;
    /* dead letters, kept until close, and their keys */
    Arena          dead_arena;
    Batch         *dead;
    SlStr         *dead_keys;
    uint32_t       ndead, capdead;
    uint32_t       dead_seq;        /* dead letters of the record r->cur so far */
    char           fallback[160];   /* why the direct path was left, or "" */
};

int     kafka_poller_start(KafkaSource *ks, SlError *err);
void    kafka_messages_destroy(rd_kafka_message_t **m, int from, int n);
int64_t kafka_wall_us(void);

#endif /* SLUICE_CONNECTORS_KAFKA_SOURCE_INT_H */
