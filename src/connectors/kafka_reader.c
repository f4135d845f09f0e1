/*
 * kafka_reader.c -- the records of a micro-batch's ranges of a Kafka stream,
 * decoded into rows (see kafka.h; the source, its options and its poller are
 * kafka_source.c).
 *
 *   kafka_reader_open, kafka_reader_need, kafka_reader_next, kafka_reader_close
 *
 * A batch reads its ranges on the worker thread that runs it, by default
 * with sluice's own Fetch requests (kafka_fetch.h, docs/kafka-fetch.md):
 * to each partition's leader, from the poller's metadata, on a connection
 * the source keeps; the records of each response walked in place, with no
 * allocation per record.  A partition is done when its next offset reaches
 * its range's end (control batches and aborted transactions move it too),
 * or when a response with nothing at all says the log ends at or past it.
 * Whatever that path cannot do (no leader known, the network, a codec, an
 * error code of the broker's) hands the rest of the batch to librdkafka's
 * reader (fall_back), from the offsets reached; so do fetch = 'librdkafka'
 * and the security settings only librdkafka speaks.  A SELECT's cancel or
 * statement_timeout during a Fetch is no failure: it ends the read (57014).
 *
 * librdkafka's reader assigns at the range starts (no subscribe, no
 * rebalancing).  A partition is done when a record at or past end - 1 has
 * arrived, or the partition's end-of-file event says the log ends at or
 * past end (control records of transactions take offsets that no record
 * has).  Records at or past end belong to the next batch.
 *
 * The next batch usually starts where this one ended, so a reader that
 * read all its ranges leaves the consumer assigned -- librdkafka goes on
 * fetching while the batch's rows are processed and committed -- and hands
 * the records and end-of-file events it took past its ranges (held, in the
 * order taken) to the next reader through the source.  That reader uses
 * them, and the assignment, only if every one of its ranges starts where
 * the last reader's ended; otherwise (a replay, a retry, a partition that
 * appeared, a failed or cut-short reader) it drops them and assigns at its
 * range starts as before.  Either way a batch reads exactly the records of
 * its logged ranges.
 *
 * Columns named _key, _partition, _offset, _timestamp and _headers are
 * filled from the record's metadata; the others are decoded from its value
 * with the stream's format (JSON, CSV, or raw: the value as the one
 * column).  A value that does not decode, or bytes that are not UTF-8 bound
 * for a text or jsonb column (a raw value, the key, a header: checked
 * whether or not the query reads them, record_not_text), make the record a
 * dead letter: the reader
 * keeps it (raw bytes, topic/partition, offset, reason) with a key that
 * names the record (topic, partition, offset, its place among the values
 * of the record), and hands them to the batch when it closes; the batch
 * appends those not recorded before to <stream>_dead_letters in its own
 * write (deadset.h's DeadSet; the engine's deadletter.h appends it).
 *
 * A plain SELECT's reader stops with 57014 at the statement's cancel or
 * statement_timeout (ex_check_interrupt): between Fetch requests, after
 * each wait of at most 100 ms for librdkafka, and inside a Fetch's socket
 * waits (kafka_fetch.c), which then fall back to librdkafka's reader.
 *
 * A reader told which columns its query reads (kafka_reader_need) leaves
 * the others NULL: metadata columns are not filled, and the decoder does
 * not copy unread text values, though it still checks them, so the same
 * records are dead letters whatever the query reads (format.h).
 */
#include "kafka_source_int.h"

#include "format_int.h"
#include "sluice/bytes.h"
#include "sluice/deadset.h"
#include "sluice/exec.h"
#include "sluice/expr.h"
#include "sluice/log.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------- */
/* Reading a batch                                                         */

KafkaReader *kafka_reader_open(KafkaSource *ks, const SourceOffsets *ranges)
{
    KafkaReader *r = sl_calloc(1, sizeof(KafkaReader));
    r->ks = ks;
    srcoffs_copy(&r->ranges, ranges);
    r->done = sl_calloc((size_t)(ranges->n ? ranges->n : 1), sizeof(bool));
    r->next = sl_calloc((size_t)(ranges->n ? ranges->n : 1), sizeof(int64_t));
    r->leader = sl_calloc((size_t)(ranges->n ? ranges->n : 1), sizeof(int32_t));
    for (int i = 0; i < ranges->n; i++)
        r->next[i] = ranges->parts[i].start;
    r->spec = ks->spec;
    arena_init(&r->dead_arena, 4096);
    r->last_progress_us = r->open_us = kafka_wall_us();
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(ranges->n);
    pthread_mutex_lock(&ks->mu);
    /* A replayed batch may come before any plan: the consumer is made by
     * the poller thread, so start it and wait for it (a worker thread). */
    SlError ignore = {0};
    kafka_poller_start(ks, &ignore);
    sl_error_clear(&ignore);
    while (ks->started && !ks->made)
        pthread_cond_wait(&ks->cond, &ks->mu);
    /* The last batch's assignment serves this one if this one starts, in
     * every partition it had, where that one ended. */
    bool reuse = ks->kept && ks->nreaders == 0 && ranges->n == ks->kept_at.n;
    bool valid = true;
    for (int i = 0; i < ranges->n; i++) {
        const SrcPart *p = &ranges->parts[i];
        if (p->topic < 0 || p->topic >= ks->ntopics) {
            r->done[i] = true;
            valid = false;
            continue;
        }
        const SrcPart *k = reuse ? srcoffs_find(&ks->kept_at, p->topic, p->part) : NULL;
        reuse = k != NULL && k->end == p->start;
        if (p->start >= p->end)
            r->done[i] = true;
        else
            r->remaining++;
        /* Every partition, read this time or not, so that the assignment
         * can serve the next batch too. */
        rd_kafka_topic_partition_list_add(l, ks->topics[p->topic], p->part)->offset = p->start;
    }
    reuse &= valid;
    /* The direct path reads it if every partition to read has a known
     * leader (a replay before the first look has none: librdkafka reads). */
    bool direct = ks->direct && ks->rk != NULL && r->remaining > 0;
    for (int i = 0; i < ranges->n && direct; i++) {
        r->leader[i] = -1;
        for (int k = 0; k < ks->nsnap; k++)
            if (ks->snap[k].topic == ranges->parts[i].topic &&
                ks->snap[k].part == ranges->parts[i].part)
                r->leader[i] = ks->snap[k].leader;
        direct = r->done[i] || r->leader[i] >= 0;
    }
    ks->nreaders++;
    pthread_mutex_unlock(&ks->mu);
    if (direct) {
        /* librdkafka's assignment and held records serve no one now. */
        kafka_messages_destroy(ks->held, 0, ks->nheld);
        sl_free(ks->held);
        ks->held = NULL;
        ks->nheld = ks->capheld = 0;
        if (ks->kept)
            rd_kafka_assign(ks->rk, NULL);
        ks->kept = false;
        r->direct = true;
        r->asks = sl_calloc((size_t)ranges->n, sizeof(KfAsk));
        r->ask_range = sl_calloc((size_t)ranges->n, sizeof(int));
    } else if (ks->rk != NULL) {
        if (reuse) {
            r->held = ks->held;
            r->nheld = ks->nheld;
            ks->held = NULL;
            ks->nheld = ks->capheld = 0;
        } else {
            kafka_messages_destroy(ks->held, 0, ks->nheld);
            sl_free(ks->held);
            ks->held = NULL;
            ks->nheld = ks->capheld = 0;
            if (r->remaining > 0) {
                rd_kafka_assign(ks->rk, l);
                sl_log(LOG_DEBUG, "kafka consumer assigned", "stream=%s partitions=%d",
                       log_value(ks->rel->name), l->cnt);
            } else if (ks->kept)
                rd_kafka_assign(ks->rk, NULL);
            ks->kept = false;
        }
        r->can_keep = valid && (reuse || r->remaining > 0);
        if (r->remaining > 0)
            r->queue = rd_kafka_queue_get_consumer(ks->rk);
    }
    rd_kafka_topic_partition_list_destroy(l);
    return r;
}

void kafka_reader_need(KafkaReader *r, const uint8_t *need)
{
    KafkaSource *ks = r->ks;
    r->need = need;
    sl_free(r->spec_need);
    r->spec_need = NULL;
    r->spec.need = NULL;
    if (need == NULL)
        return;
    r->spec_need = sl_calloc((size_t)(ks->spec.ncols > 0 ? ks->spec.ncols : 1), 1);
    for (int c = 0; c < ks->rel->ncols; c++)
        if (ks->meta[c] == KM_NONE && need[c])
            r->spec_need[ks->payload_col[c]] = 1;
    r->spec.need = r->spec_need;
}

/* The index of the reader's range for a record's topic and partition. */
static int range_of(KafkaReader *r, rd_kafka_topic_t *rkt, int32_t part)
{
    if (rkt == r->last_rkt && part == r->last_part)
        return r->last_range;
    int found = -1;
    const char *name = rd_kafka_topic_name(rkt);
    for (int i = 0; i < r->ranges.n; i++) {
        const SrcPart *p = &r->ranges.parts[i];
        if (p->part == part && p->topic >= 0 && p->topic < r->ks->ntopics &&
            strcmp(r->ks->topics[p->topic], name) == 0) {
            found = i;
            break;
        }
    }
    r->last_rkt = rkt;
    r->last_part = part;
    r->last_range = found;
    return found;
}

/* The next record or event, waiting up to timeout_ms: taken READ_BATCH at
 * a time from the consumer's queue (one lock for many records).  The read
 * timeout restarts whenever librdkafka hands something over. */
static rd_kafka_message_t *next_message(KafkaReader *r, int timeout_ms)
{
    if (r->iheld < r->nheld)
        return r->held[r->iheld++];
    if (r->imsg < r->nmsgs)
        return r->msgs[r->imsg++];
    r->imsg = r->nmsgs = 0;
    if (r->queue == NULL) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->ks->rk, timeout_ms);
        if (m != NULL)
            r->last_progress_us = kafka_wall_us();
        return m;
    }
    /* What the queue holds now, without waiting: a batch call with a
     * timeout waits until it has READ_BATCH or the time is up, even with
     * the batch's last records in hand.  Only an empty queue is waited on,
     * for one record or event. */
    ssize_t n = rd_kafka_consume_batch_queue(r->queue, 0, r->msgs, READ_BATCH);
    if (n <= 0) {
        int64_t t0 = kafka_wall_us();
        rd_kafka_message_t *m = rd_kafka_consume_queue(r->queue, timeout_ms);
        r->wait_us += kafka_wall_us() - t0;
        if (m == NULL)
            return NULL;
        r->msgs[0] = m;
        n = 1;
    }
    r->last_progress_us = kafka_wall_us();
    r->nmsgs = (int)n;
    return r->msgs[r->imsg++];
}

/* Keeps m, a record or end-of-file event past its range, for the next
 * reader; past HOLD_MAX of them, drops it, and the next reader assigns
 * afresh. */
static void hold(KafkaReader *r, rd_kafka_message_t *m)
{
    if (!r->can_keep || r->nkeep == HOLD_MAX) {
        rd_kafka_message_destroy(m);
        r->can_keep = false;
        return;
    }
    if (r->nkeep == r->capkeep) {
        r->capkeep = r->capkeep ? r->capkeep * 2 : 256;
        r->keep = sl_realloc(r->keep, sizeof(*r->keep) * (size_t)r->capkeep);
    }
    r->keep[r->nkeep++] = m;
}

static void mark_done(KafkaReader *r, int i)
{
    if (i >= 0 && !r->done[i]) {
        r->done[i] = true;
        r->remaining--;
    }
}

static void keep_dead(KafkaReader *r, const KRec *rec, const char *reason,
                      const char *raw, size_t rawlen)
{
    KafkaSource *ks = r->ks;
    const char *topic = ks->topics[r->ranges.parts[rec->range].topic];
    int32_t part = r->ranges.parts[rec->range].part;
    Arena *a = &r->dead_arena;
    if (r->ndead == r->capdead) {
        uint32_t cap = r->capdead ? r->capdead * 2 : 16;
        SlType types[5] = {{TYPE_BYTEA, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN},
                           {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TIMESTAMPTZ, -1, TYPE_UNKNOWN}};
        Batch *b = batch_alloc(a, types, 5, cap);
        SlStr *keys = ARENA_ARRAY(a, SlStr, cap);
        if (r->dead != NULL) {
            for (uint32_t c = 0; c < 5; c++) {
                memcpy(b->cols[c].nulls, r->dead->cols[c].nulls, r->ndead);
                memcpy(b->cols[c].v.data, r->dead->cols[c].v.data,
                       (size_t)r->ndead * (c == 2 || c == 4 ? 8 : sizeof(SlStr)));
            }
            memcpy(keys, r->dead_keys, sizeof(SlStr) * r->ndead);
        }
        r->dead = b;
        r->dead_keys = keys;
        r->capdead = cap;
    }
    Batch *b = r->dead;
    uint32_t i = r->ndead++;
    b->cols[0].v.str[i] = (SlStr){arena_memdup(a, raw, rawlen), (uint32_t)rawlen};
    const char *src = arena_printf(a, "kafka:%s/%d", topic, part);
    b->cols[1].v.str[i] = (SlStr){src, (uint32_t)strlen(src)};
    b->cols[2].v.i64[i] = rec->offset;
    const char *why = arena_strdup(a, reason);
    b->cols[3].v.str[i] = (SlStr){why, (uint32_t)strlen(why)};
    b->cols[4].v.i64[i] = kafka_wall_us() - SL_PG_EPOCH_UNIX_US;
    /* The key: topic, NUL, partition, offset, place in the record. */
    size_t tl = strlen(topic);
    uint8_t *k = arena_alloc(a, tl + 1 + 16);
    memcpy(k, topic, tl + 1);
    put_be32(k + tl + 1, (uint32_t)part);
    put_be64(k + tl + 5, (uint64_t)rec->offset);
    put_be32(k + tl + 13, r->dead_seq++);
    r->dead_keys[i] = (SlStr){(const char *)k, (uint32_t)(tl + 17)};
    for (int c = 0; c < 5; c++)
        b->cols[c].nulls[i] = 0;
    b->nrows = r->ndead;
    for (int c = 0; c < 5; c++)
        b->cols[c].len = r->ndead;
    sl_log(LOG_WARN, "kafka record sent to the dead letters",
           "stream=%s topic=%s partition=%d offset=%" PRId64 " reason=\"%s\"",
           log_value(ks->rel->name), topic, part, rec->offset, log_quote(reason));
}

/* A record's headers as a JSON object into j: 0, or -1 if malformed. */
static int headers_json(const KRec *rec, StrBuf *j)
{
    if (rec->m == NULL)
        return kf_headers_json(&rec->kf, j);
    rd_kafka_headers_t *hdrs = NULL;
    strbuf_putc(j, '{');
    if (rd_kafka_message_headers(rec->m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char *name;
        const void *val;
        size_t size;
        for (size_t h = 0;
             rd_kafka_header_get_all(hdrs, h, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             h++) {
            if (h)
                strbuf_puts(j, ", ");
            strbuf_put_json_string(j, name, strlen(name));
            strbuf_puts(j, ": ");
            if (val == NULL)
                strbuf_puts(j, "null");
            else
                strbuf_put_json_string(j, val, size);
        }
    }
    strbuf_putc(j, '}');
    return 0;
}

/* Why record rec cannot become a row because a text column would get
 * bytes that are not UTF-8 (the value in format 'raw', the key, a header
 * for the headers column), or NULL.  Checked whether or not the query
 * reads those columns, so a record is a dead letter for the same reasons
 * whatever reads it. */
static const char *record_not_text(KafkaReader *r, const KRec *rec, const Batch *pay, Arena *a)
{
    KafkaSource *ks = r->ks;
    char msg[96];
    size_t bad;
    if (ks->format == KF_RAW && rec->value != NULL && pay->cols[0].type.id != TYPE_BYTEA &&
        (bad = sl_utf8_invalid(rec->value, rec->len)) < rec->len) {
        sl_utf8_message(rec->value + bad, rec->len - bad, msg, sizeof(msg));
        return arena_printf(a, "value: %s at byte %zu", msg, bad);
    }
    const char *key = rec->m ? rec->m->key : rec->kf.key;
    size_t key_len = rec->m ? rec->m->key_len : rec->kf.key_len;
    for (int c = 0; c < ks->rel->ncols; c++) {
        SlType t = ks->rel->cols[c].type;
        if (ks->meta[c] == KM_KEY && key != NULL && t.id != TYPE_BYTEA &&
            (bad = sl_utf8_invalid(key, key_len)) < key_len) {
            sl_utf8_message(key + bad, key_len - bad, msg, sizeof(msg));
            return arena_printf(a, "key: %s at byte %zu", msg, bad);
        }
        if (ks->meta[c] == KM_HEADERS) {
            StrBuf j;
            strbuf_init(&j);
            Vector v;
            vector_init(&v, a, t, 1, true);
            SlError e = {0};
            const char *why = NULL;
            if (headers_json(rec, &j) == 0 &&
                value_parse_text(a, t, j.data, j.len, &v, 0, -1, &e) < 0)
                why = arena_printf(a, "headers: %s", e.message);
            sl_error_clear(&e);
            strbuf_free(&j);
            if (why != NULL)
                return why;
        }
    }
    return NULL;
}

/* The metadata columns of rows [from, to) of out, all from record rec. */
static int fill_meta(KafkaReader *r, const KRec *rec, Batch *out, uint32_t from,
                     uint32_t to, Arena *a, SlError *err)
{
    KafkaSource *ks = r->ks;
    const rd_kafka_message_t *m = rec->m;
    const char *key = m ? m->key : rec->kf.key;
    size_t key_len = m ? m->key_len : rec->kf.key_len;
    int32_t partition = r->ranges.parts[rec->range].part;
    for (int c = 0; c < ks->rel->ncols; c++) {
        KMeta k = ks->meta[c];
        if (k == KM_NONE)
            continue;
        Vector *v = &out->cols[c];
        if (r->need != NULL && !r->need[c]) {
            memset(v->nulls + from, 1, to - from);
            continue;
        }
        for (uint32_t i = from; i < to; i++) {
            v->nulls[i] = 0;
            switch (k) {
            case KM_KEY:
                if (key == NULL) {
                    v->nulls[i] = 1;
                    break;
                }
                v->v.str[i] = (SlStr){arena_memdup(a, key, key_len), (uint32_t)key_len};
                break;
            case KM_PARTITION:
                if (v->type.id == TYPE_INT4)
                    v->v.i32[i] = partition;
                else
                    v->v.i64[i] = partition;
                break;
            case KM_OFFSET:
                v->v.i64[i] = rec->offset;
                break;
            case KM_TIMESTAMP: {
                rd_kafka_timestamp_type_t tt;
                int64_t ms = m ? rd_kafka_message_timestamp(m, &tt) : rec->kf.ts_ms;
                if (ms < 0)
                    v->nulls[i] = 1;
                else
                    v->v.i64[i] = ms * 1000 - SL_PG_EPOCH_UNIX_US;
                break;
            }
            case KM_HEADERS: {
                StrBuf j;
                strbuf_init(&j);
                if (headers_json(rec, &j) < 0) {
                    strbuf_free(&j);
                    return sl_error(err, ERRCODE_DATA_CORRUPTED,
                                    "Kafka record %s/%d@%" PRId64 ": malformed headers",
                                    ks->topics[r->ranges.parts[rec->range].topic], partition,
                                    rec->offset);
                }
                int rc = value_parse_text(a, v->type, j.data, j.len, v, i, -1, err);
                strbuf_free(&j);
                if (rc < 0)
                    return -1;
                break;
            }
            case KM_NONE:
                break;
            }
        }
    }
    return 0;
}

/* Assigns librdkafka's consumer the partitions of the batch not done, at
 * the offsets next wanted (a reset partition, a fallback). */
static rd_kafka_resp_err_t assign_rest(KafkaReader *r)
{
    KafkaSource *ks = r->ks;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->ranges.n);
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < r->ranges.n; i++)
        if (!r->done[i])
            rd_kafka_topic_partition_list_add(l, ks->topics[r->ranges.parts[i].topic],
                                              r->ranges.parts[i].part)->offset = r->next[i];
    pthread_mutex_unlock(&ks->mu);
    rd_kafka_resp_err_t e = rd_kafka_assign(ks->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    return e;
}

/* Handles an error event of the consumer: 0 go on, -1 fail. */
static int on_event(KafkaReader *r, const rd_kafka_message_t *m, SlError *err)
{
    KafkaSource *ks = r->ks;
    int i = m->rkt ? range_of(r, m->rkt, m->partition) : -1;
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "?";
    switch (m->err) {
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
        if (i >= 0 && m->offset >= r->ranges.parts[i].end)
            mark_done(r, i);
        return 0;
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE: {
        if (i >= 0 && r->done[i]) {
            /* Not this batch's: the next one assigns afresh and sees. */
            r->can_keep = false;
            return 0;
        }
        if (ks->fail_on_data_loss) {
            sl_error(err, ERRCODE_DATA_EXCEPTION,
                     "Kafka partition %s/%d of stream \"%s\": the batch's offsets are out of "
                     "range: records were lost", topic, m->partition, ks->rel->name);
            sl_error_hint(err, "Set fail_on_data_loss = false on the stream to skip them.");
            return -1;
        }
        if (i < 0)
            return 0;
        /* Go on from the earliest offset there is, within the range. */
        int64_t low, high;
        const SrcPart *p = &r->ranges.parts[i];
        if (r->has_cur)
            return 0;       /* cannot happen: events come between records */
        if (rd_kafka_query_watermark_offsets(ks->rk, topic, m->partition, &low, &high, 10000) !=
                RD_KAFKA_RESP_ERR_NO_ERROR ||
            low >= p->end) {
            mark_done(r, i);
            return 0;
        }
        sl_log(LOG_WARN, "kafka records lost, skipped",
               "stream=%s topic=%s partition=%d from=%" PRId64 " to=%" PRId64,
               log_value(ks->rel->name), topic, m->partition, r->next[i], low);
        r->next[i] = SL_MAX(low, r->next[i]);
        /* Assign again at the next offsets: a partition that hit the reset
         * error is not fetched again otherwise. */
        rd_kafka_resp_err_t e = assign_rest(r);
        r->can_keep = false;    /* the done partitions are no longer assigned */
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
            return kafka_error(err, e, "Kafka: assign");
        return 0;
    }
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
        if (i >= 0 && r->done[i]) {
            r->can_keep = false;
            return 0;
        }
        if (ks->fail_on_data_loss) {
            sl_error(err, ERRCODE_UNDEFINED_OBJECT,
                     "Kafka topic \"%s\" of stream \"%s\" does not exist (was it deleted?)",
                     topic, ks->rel->name);
            return -1;
        }
        mark_done(r, i);
        return 0;
    default:
        sl_log(LOG_DEBUG, "kafka consumer event", "stream=%s error=\"%s\"",
               log_value(ks->rel->name), log_quote(rd_kafka_message_errstr(m)));
        return 0;
    }
}

/* The error of a reader that waited read_timeout for a record. */
static int read_timed_out(KafkaReader *r, SlError *err)
{
    KafkaSource *ks = r->ks;
    sl_error(err, ERRCODE_CONNECTION_FAILURE,
             "stream \"%s\": no records from Kafka for %" PRId64
             " s while %d partition(s) of the batch were unread",
             ks->rel->name, ks->read_timeout_us / 1000000, r->remaining);
    sl_error_hint(err, "Is the broker up?  read_timeout sets the wait.");
    return -1;
}

/* The next record of the ranges from librdkafka into r->cur: 1, 0 none
 * yet (waited up to 100 ms, or took an event), -1 with err. */
static int next_rdk(KafkaReader *r, SlError *err)
{
    KafkaSource *ks = r->ks;
    rd_kafka_message_t *m = next_message(r, 100);
    if (m == NULL) {
        if (ex_check_interrupt(err) < 0)
            return -1;      /* a SELECT's cancel or statement_timeout */
        return kafka_wall_us() - r->last_progress_us > ks->read_timeout_us ? read_timed_out(r, err)
                                                                     : 0;
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && m->rkt != NULL) {
        /* The log's end past the range: the next batch may need it to
         * know its range read (control records have offsets no record
         * has). */
        int i = range_of(r, m->rkt, m->partition);
        if (i >= 0 && m->offset > r->ranges.parts[i].end) {
            mark_done(r, i);
            hold(r, m);
            return 0;
        }
    }
    if (m->err) {
        int rc = on_event(r, m, err);
        rd_kafka_message_destroy(m);
        return rc;
    }
    int i = range_of(r, m->rkt, m->partition);
    if (i < 0 || r->done[i] || m->offset < r->next[i] || m->offset >= r->ranges.parts[i].end) {
        if (i >= 0 && m->offset >= r->ranges.parts[i].end) {
            mark_done(r, i);
            hold(r, m);
        } else {
            rd_kafka_message_destroy(m);
        }
        return 0;
    }
    r->cur = (KRec){.range = i, .offset = m->offset, .value = m->payload, .len = m->len, .m = m};
    return 1;
}

/* Leaves the direct path for librdkafka's reader, for the rest of the
 * batch: the partitions not done are assigned at the offsets next wanted,
 * so the batch still reads exactly its ranges.  The read timeout starts
 * over (the time the direct path spent failing is not librdkafka's).  0,
 * or -1 with err (08006, so the batch is tried again) when librdkafka
 * refuses the assignment. */
static int fall_back(KafkaReader *r, const char *why, SlError *err)
{
    KafkaSource *ks = r->ks;
    snprintf(r->fallback, sizeof(r->fallback), "%s", why);
    sl_log(LOG_WARN, "kafka fetch falls back to librdkafka", "stream=%s reason=\"%s\"",
           log_value(ks->rel->name), log_quote(why));
    kf_conn_close(r->conn);
    r->conn = NULL;
    r->in_response = false;
    r->direct = false;
    r->can_keep = false;
    rd_kafka_resp_err_t e = assign_rest(r);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        sl_error(err, ERRCODE_CONNECTION_FAILURE,
                 "stream \"%s\": the fallback to librdkafka could not assign the batch's "
                 "partitions: %s", ks->rel->name, rd_kafka_err2str(e));
        return -1;
    }
    r->queue = rd_kafka_queue_get_consumer(ks->rk);
    r->last_progress_us = kafka_wall_us();
    return 0;
}

/* A connection to broker id b: an idle one of the source's, or a new one
 * (*fresh); NULL with why. */
static KfConn *take_conn(KafkaSource *ks, int32_t b, char *why, size_t whylen, bool *fresh)
{
    *fresh = false;
    char host[256] = "";
    int port = 0;
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < ks->npool; i++) {
        if (kf_conn_broker(ks->pool[i]) == b) {
            KfConn *c = ks->pool[i];
            ks->pool[i] = ks->pool[--ks->npool];
            pthread_mutex_unlock(&ks->mu);
            return c;
        }
    }
    for (int i = 0; i < ks->nbrokers; i++)
        if (ks->brokers[i].id == b) {
            snprintf(host, sizeof(host), "%s", ks->brokers[i].host);
            port = ks->brokers[i].port;
        }
    pthread_mutex_unlock(&ks->mu);
    if (port == 0) {
        snprintf(why, whylen, "broker %d is not in the metadata", b);
        return NULL;
    }
    if (!kafka_broker_allowed(ks->pol, ks->rel->owner, host, port)) {
        snprintf(why, whylen, "broker %s:%d is not on --kafka-allowed-hosts", host, port);
        return NULL;
    }
    *fresh = true;
    KfConn *c = kf_connect(host, port, b, CONNECT_MS, why, whylen);
    if (c != NULL)
        sl_log(LOG_DEBUG, "kafka fetch connected", "stream=%s broker=%d address=%s:%d",
               log_value(ks->rel->name), b, host, port);
    return c;
}

static void put_conn(KafkaSource *ks, KfConn *c)
{
    pthread_mutex_lock(&ks->mu);
    if (ks->npool < POOL_MAX) {
        ks->pool[ks->npool++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&ks->mu);
    kf_conn_close(c);
}

/* One Fetch for the partitions not done that the first of them's leader
 * leads: 0, or -1 with why. */
static int direct_request(KafkaReader *r, char *why, size_t whylen)
{
    KafkaSource *ks = r->ks;
    int32_t leader = -1;
    for (int i = 0; i < r->ranges.n && leader < 0; i++)
        if (!r->done[i])
            leader = r->leader[i];
    if (r->conn != NULL && kf_conn_broker(r->conn) != leader) {
        put_conn(ks, r->conn);
        r->conn = NULL;
    }
    if (SLUICE_FAULT_FAILS("kafka_direct_fetch")) {
        snprintf(why, whylen, "fault point kafka_direct_fetch");
        return -1;
    }
    bool fresh = r->conn == NULL;
    if (r->conn == NULL && (r->conn = take_conn(ks, leader, why, whylen, &fresh)) == NULL)
        return -1;
    r->nasks = 0;
    pthread_mutex_lock(&ks->mu);
    for (int i = 0; i < r->ranges.n; i++) {
        if (r->done[i] || r->leader[i] != leader)
            continue;
        r->ask_range[r->nasks] = i;
        r->asks[r->nasks++] = (KfAsk){ks->topics[r->ranges.parts[i].topic],
                                      r->ranges.parts[i].part, r->next[i]};
    }
    pthread_mutex_unlock(&ks->mu);
    int timeout = FETCH_WAIT_MS + FETCH_SLACK_MS;
    if (kf_fetch(r->conn, r->asks, r->nasks, ks->read_committed, FETCH_WAIT_MS, timeout, why,
                 whylen) < 0) {
        /* An idle connection may have been closed by the broker (restarted,
         * or idle too long): one more try on a new one. */
        kf_conn_close(r->conn);
        r->conn = NULL;
        if (fresh || ex_interrupted() != EX_RUNNING ||
            (r->conn = take_conn(ks, leader, why, whylen, &fresh)) == NULL ||
            kf_fetch(r->conn, r->asks, r->nasks, ks->read_committed, FETCH_WAIT_MS, timeout,
                     why, whylen) < 0)
            return -1;
    }
    r->nfetch++;
    for (int k = 0; k < r->nasks; k++) {
        KfAskInfo info;
        kf_ask_info(r->conn, k, &info);
        if (info.error != 0) {
            /* Not leader, out of range, unknown topic...: librdkafka's
             * reader has the rules for each. */
            snprintf(why, whylen, "the broker answered %s/%d with error %d: %s",
                     r->asks[k].topic, r->asks[k].part, info.error,
                     rd_kafka_err2str((rd_kafka_resp_err_t)info.error));
            return -1;
        }
    }
    return 0;
}

/* After a direct Fetch failed: whether it was the statement's cancel or
 * statement_timeout (the socket waits give up then), with err set (57014).
 * The connection, mid-exchange, is closed, not kept; the batch does not
 * fall back to librdkafka. */
static bool interrupted(KafkaReader *r, SlError *err)
{
    if (ex_check_interrupt(err) == 0)
        return false;
    kf_conn_close(r->conn);
    r->conn = NULL;
    r->in_response = false;
    return true;
}

/* The next record of the ranges from the direct path into r->cur: 1, 0
 * none (the ranges are read, or the reader fell back), -1 with err. */
static int next_direct(KafkaReader *r, SlError *err)
{
    KafkaSource *ks = r->ks;
    char why[160];
    for (;;) {
        if (!r->in_response) {
            if (r->remaining == 0)
                return 0;
            if (ex_check_interrupt(err) < 0)
                return -1;  /* a SELECT's cancel or statement_timeout */
            if (direct_request(r, why, sizeof(why)) < 0)
                return interrupted(r, err) ? -1 : fall_back(r, why, err);
            r->in_response = true;
        }
        KfRecord kr;
        int rc = kf_next(r->conn, &kr, why, sizeof(why));
        if (rc < 0)
            return interrupted(r, err) ? -1 : fall_back(r, why, err);
        if (rc == 0) {
            /* The response is walked.  One with no batch at all for any
             * partition means nothing is at or past the offsets asked:
             * a partition whose log ends at or past its range's end is
             * read (what librdkafka's end-of-file event says). */
            r->in_response = false;
            bool any = false, moved = false;
            for (int k = 0; k < r->nasks; k++) {
                KfAskInfo info;
                kf_ask_info(r->conn, k, &info);
                any |= info.had_batches;
            }
            for (int k = 0; k < r->nasks && !any; k++) {
                KfAskInfo info;
                kf_ask_info(r->conn, k, &info);
                int i = r->ask_range[k];
                int64_t log_end = ks->read_committed && info.stable >= 0 ? info.stable
                                                                          : info.high;
                if (!r->done[i] && log_end >= r->ranges.parts[i].end) {
                    mark_done(r, i);
                    moved = true;
                }
            }
            if (any || moved)
                r->last_progress_us = kafka_wall_us();
            else if (kafka_wall_us() - r->last_progress_us > ks->read_timeout_us)
                return read_timed_out(r, err);
            continue;
        }
        int i = r->ask_range[kr.ask];
        const SrcPart *p = &r->ranges.parts[i];
        if (rc == 2) {
            /* A batch ended: control records and aborted transactions
             * take offsets too. */
            r->next[i] = SL_MAX(r->next[i], kr.offset);
            if (r->next[i] >= p->end) {
                mark_done(r, i);
                kf_skip(r->conn, kr.ask);
            }
            continue;
        }
        if (r->done[i] || kr.offset >= p->end) {
            mark_done(r, i);
            kf_skip(r->conn, kr.ask);
            continue;
        }
        if (kr.offset < r->next[i])
            continue;
        r->cur = (KRec){.range = i, .offset = kr.offset, .value = kr.value, .len = kr.len,
                        .kf = kr};
        return 1;
    }
}

int kafka_reader_next(KafkaReader *r, Arena *a, Batch **out, SlError *err)
{
    KafkaSource *ks = r->ks;
    const CatRelation *rel = ks->rel;
    uint32_t cap = RELSTORE_BATCH_ROWS;
    Batch *pay = batch_alloc(a, ks->payload_types, (uint32_t)ks->spec.ncols, cap);
    Batch *b = ARENA_NEW(a, Batch);
    b->ncols = (uint32_t)rel->ncols;
    b->cols = ARENA_ARRAY(a, Vector, rel->ncols);
    for (int c = 0; c < rel->ncols; c++)
        if (ks->meta[c] != KM_NONE)
            vector_init(&b->cols[c], a, rel->cols[c].type, cap, true);
    if (ks->rk == NULL && r->remaining > 0) {
        pthread_mutex_lock(&ks->mu);
        sl_error(err, ks->error_state ? ks->error_state : ERRCODE_SYSTEM_ERROR,
                 "stream \"%s\": no Kafka consumer: %s", rel->name,
                 ks->error ? ks->error : "not started");
        pthread_mutex_unlock(&ks->mu);
        r->failed = true;
        return -1;
    }
    while (pay->nrows < cap) {
        if (!r->has_cur) {
            if (r->remaining == 0)
                break;
            int rc = r->direct ? next_direct(r, err) : next_rdk(r, err);
            if (rc < 0) {
                r->failed = true;
                return -1;
            }
            if (rc == 0)
                continue;
            r->has_cur = true;
            r->nread++;
            r->dead_seq = 0;
            r->next[r->cur.range] = r->cur.offset + 1;
            memset(&r->res, 0, sizeof(r->res));
        }
        KRec *m = &r->cur;
        uint32_t before = pay->nrows;
        bool finished = true;
        const char *not_text = record_not_text(r, m, pay, a);
        if (not_text != NULL) {
            keep_dead(r, m, not_text, m->value, m->value != NULL ? m->len : 0);
        } else if (ks->format == KF_RAW) {
            Vector *v = &pay->cols[0];
            if (m->value == NULL || (r->spec.need != NULL && !r->spec.need[0])) {
                v->nulls[before] = 1;
            } else {
                v->nulls[before] = 0;
                v->v.str[before] = (SlStr){arena_memdup(a, m->value, m->len),
                                           (uint32_t)m->len};
            }
            pay->nrows++;
        } else if (m->value != NULL) {
            /* A record with a NULL value (a tombstone) has no row. */
            int rc = ks->format == KF_JSON
                         ? fmt_json_decode(&r->spec, m->value, m->len, true, pay, cap, a,
                                           &r->res, err)
                         : fmt_csv_decode(&r->spec, m->value, m->len, true, pay, cap, a,
                                          &r->res, err);
            if (rc < 0) {
                r->failed = true;
                return -1;
            }
            for (int d = 0; d < r->res.ndead; d++)
                keep_dead(r, m, r->res.dead[d].reason, r->res.dead[d].raw.ptr,
                          r->res.dead[d].raw.len);
            r->res.ndead = r->res.capdead = 0;
            r->res.dead = NULL;
            finished = r->res.consumed >= (int64_t)m->len;
        }
        for (uint32_t c = 0; c < pay->ncols; c++)
            pay->cols[c].len = pay->nrows;
        if (fill_meta(r, m, b, before, pay->nrows, a, err) < 0) {
            r->failed = true;
            return -1;
        }
        if (finished) {
            if (m->offset >= r->ranges.parts[m->range].end - 1)
                mark_done(r, m->range);
            if (m->m != NULL)
                rd_kafka_message_destroy(m->m);
            r->has_cur = false;
        }
    }
    if (pay->nrows == 0)
        return 0;
    b->nrows = pay->nrows;
    for (int c = 0; c < rel->ncols; c++) {
        if (ks->meta[c] == KM_NONE)
            b->cols[c] = pay->cols[ks->payload_col[c]];
        b->cols[c].len = b->nrows;
    }
    *out = b;
    return (int)b->nrows;
}

void kafka_reader_close(KafkaReader *r, DeadSet *dead)
{
    KafkaSource *ks = r->ks;
    pthread_mutex_lock(&ks->mu);
    bool alone = --ks->nreaders == 0;
    pthread_mutex_unlock(&ks->mu);
    if (r->nread > 0)
        sl_log(LOG_DEBUG, "kafka batch read", "stream=%s records=%" PRId64 " ms=%" PRId64
               " waited_ms=%" PRId64 " held=%d path=%s fetches=%" PRId64,
               log_value(ks->rel->name), r->nread, (kafka_wall_us() - r->open_us) / 1000,
               r->wait_us / 1000, r->nkeep + (r->nheld - r->iheld) + (r->nmsgs - r->imsg),
               r->direct ? "direct" : r->fallback[0] ? "fallback" : "librdkafka", r->nfetch);
    if (r->can_keep && alone && !r->failed && r->remaining == 0 && !r->has_cur &&
        ks->rk != NULL) {
        /* The next batch starts where this one ended: leave the consumer
         * assigned, and keep what was taken past the ranges, in order --
         * those held past them first, then the last reader's left unread
         * (none were taken from the queue if some are), then the rest of
         * the last take from the queue. */
        int n = r->nkeep + (r->nheld - r->iheld) + (r->nmsgs - r->imsg);
        ks->held = sl_realloc(r->keep, sizeof(*ks->held) * (size_t)(n ? n : 1));
        if (r->nheld > r->iheld)
            memcpy(ks->held + r->nkeep, r->held + r->iheld,
                   sizeof(*ks->held) * (size_t)(r->nheld - r->iheld));
        if (r->nmsgs > r->imsg)
            memcpy(ks->held + r->nkeep + (r->nheld - r->iheld), r->msgs + r->imsg,
                   sizeof(*ks->held) * (size_t)(r->nmsgs - r->imsg));
        ks->nheld = ks->capheld = n;
        r->keep = NULL;
        srcoffs_copy(&ks->kept_at, &r->ranges);
        ks->kept = true;
    } else {
        if (r->has_cur && r->cur.m != NULL)
            rd_kafka_message_destroy(r->cur.m);
        kafka_messages_destroy(r->msgs, r->imsg, r->nmsgs);
        kafka_messages_destroy(r->held, r->iheld, r->nheld);
        kafka_messages_destroy(r->keep, 0, r->nkeep);
        sl_free(r->keep);
        /* A reader that read by the direct path alone assigned nothing. */
        if (ks->rk != NULL && alone && !r->direct)
            rd_kafka_assign(ks->rk, NULL);
        ks->kept = false;
    }
    sl_free(r->held);
    if (r->conn != NULL)
        put_conn(ks, r->conn);
    if (r->queue != NULL)
        rd_kafka_queue_destroy(r->queue);
    if (r->ndead > 0 && !r->failed && dead != NULL) {
        if (ks->dead == NULL) {
            sl_log(LOG_ERROR, "kafka records lost: no dead-letter stream",
                   "stream=%s records=%u", log_value(ks->rel->name), r->ndead);
        } else {
            /* The batch appends them with its state (deadletter.h). */
            cat_relation_ref(ks->dead);
            *dead = (DeadSet){ks->dead, r->dead_arena, r->dead, r->dead_keys};
            arena_init(&r->dead_arena, 64);
        }
    }
    arena_destroy(&r->dead_arena);
    srcoffs_free(&r->ranges);
    sl_free(r->spec_need);
    sl_free(r->done);
    sl_free(r->next);
    sl_free(r->leader);
    sl_free(r->asks);
    sl_free(r->ask_range);
    sl_free(r);
}
