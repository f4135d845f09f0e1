/*
 * test_kafka_fetch.c -- unit tests of the Kafka source's own Fetch path
 * (src/connectors/kafka_fetch.c) against a scripted broker on a loopback
 * socket: ApiVersions and the Fetch version chosen (and refused); records
 * with keys, NULL keys and values, headers and timestamps, from an offset
 * inside a batch; read_committed over two producers, one aborted, with
 * their control batches (and read_uncommitted over the same); the markers
 * and producer ids reported for the Kafka sink's recovery read; a batch cut
 * short at the response's end; gzip, lz4 and zstd batches, and snappy
 * refused; a partition error code; and bad input -- a malformed record, an
 * old message format, a response cut short by a closed connection -- each
 * an error with a reason, never a crash (the caller falls back to
 * librdkafka on any of them).
 */
#include "unit.h"
#include "connectors/kafka_fetch.h"
#include "sluice/bytes.h"
#include "sluice/strbuf.h"

#include <lz4frame.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* ---------------------------------------------------------------------- */
/* Building responses                                                      */

static void b_i8(StrBuf *b, int v)
{
    strbuf_putc(b, (char)v);
}

static void b_i16(StrBuf *b, int v)
{
    uint8_t p[2] = {(uint8_t)((uint16_t)v >> 8), (uint8_t)v};
    strbuf_append(b, p, 2);
}

static void b_i32(StrBuf *b, int64_t v)
{
    uint8_t p[4];
    put_be32(p, (uint32_t)v);
    strbuf_append(b, p, 4);
}

static void b_i64(StrBuf *b, int64_t v)
{
    uint8_t p[8];
    put_be64(p, (uint64_t)v);
    strbuf_append(b, p, 8);
}

static void b_varint(StrBuf *b, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (z >= 0x80) {
        strbuf_putc(b, (char)(z | 0x80));
        z >>= 7;
    }
    strbuf_putc(b, (char)z);
}

static void b_vbytes(StrBuf *b, const char *s)
{
    if (s == NULL) {
        b_varint(b, -1);
        return;
    }
    b_varint(b, (int64_t)strlen(s));
    strbuf_puts(b, s);
}

/* One record: offset and timestamp deltas, key, value, headers
 * ("name", "value"-or-NULL pairs, NULL-terminated). */
static void b_record(StrBuf *b, int delta, int ts_delta, const char *key, const char *value,
                     const char *const *headers)
{
    StrBuf r;
    strbuf_init(&r);
    b_i8(&r, 0);
    b_varint(&r, ts_delta);
    b_varint(&r, delta);
    b_vbytes(&r, key);
    b_vbytes(&r, value);
    int nh = 0;
    while (headers && headers[2 * nh])
        nh++;
    b_varint(&r, nh);
    for (int h = 0; h < nh; h++) {
        b_vbytes(&r, headers[2 * h]);
        b_vbytes(&r, headers[2 * h + 1]);
    }
    b_varint(b, (int64_t)r.len);
    strbuf_append(b, r.data, r.len);
    strbuf_free(&r);
}

/* A RecordBatch v2 of count records (already encoded in recs) at base. */
static void b_batch(StrBuf *b, int64_t base, int last_delta, int attrs, int64_t pid,
                    int count, const StrBuf *recs, int magic)
{
    b_i64(b, base);
    b_i32(b, 49 + (int64_t)recs->len);
    b_i32(b, 0);                /* leader epoch */
    b_i8(b, magic);
    b_i32(b, 0);                /* crc: not checked */
    b_i16(b, attrs);
    b_i32(b, last_delta);
    b_i64(b, 1000);             /* base timestamp */
    b_i64(b, 5000);             /* max timestamp */
    b_i64(b, pid);
    b_i16(b, 0);
    b_i32(b, 0);
    b_i32(b, count);
    strbuf_append(b, recs->data, recs->len);
}

/* A control batch (ABORT 0, COMMIT 1) of producer pid at offset. */
static void b_control(StrBuf *b, int64_t offset, int64_t pid, int type)
{
    StrBuf r, rec;
    strbuf_init(&r);
    strbuf_init(&rec);
    b_i8(&rec, 0);
    b_varint(&rec, 0);
    b_varint(&rec, 0);
    b_varint(&rec, 4);          /* the key: version 0, type */
    b_i16(&rec, 0);
    b_i16(&rec, type);
    b_varint(&rec, 6);          /* the value: version, coordinator epoch */
    b_i16(&rec, 0);
    b_i32(&rec, 0);
    b_varint(&rec, 0);
    b_varint(&r, (int64_t)rec.len);
    strbuf_append(&r, rec.data, rec.len);
    b_batch(b, offset, 0, 0x30, pid, 1, &r, 2);
    strbuf_free(&r);
    strbuf_free(&rec);
}

/* A Fetch v11 response for one topic "t", partition 0. */
static void b_fetch(StrBuf *b, int error, const int64_t *aborted, int naborted,
                    const StrBuf *records)
{
    b_i32(b, 0);                /* throttle */
    b_i16(b, 0);
    b_i32(b, 0);                /* session */
    b_i32(b, 1);
    b_i16(b, 1);
    strbuf_putc(b, 't');
    b_i32(b, 1);
    b_i32(b, 0);                /* partition */
    b_i16(b, error);
    b_i64(b, 100);              /* high watermark */
    b_i64(b, 90);               /* last stable offset */
    b_i64(b, 0);
    b_i32(b, naborted);
    for (int i = 0; i < naborted; i++) {
        b_i64(b, aborted[2 * i]);
        b_i64(b, aborted[2 * i + 1]);
    }
    b_i32(b, -1);               /* preferred replica */
    b_i32(b, records ? (int64_t)records->len : -1);
    if (records)
        strbuf_append(b, records->data, records->len);
}

/* ---------------------------------------------------------------------- */
/* The scripted broker                                                     */

typedef struct Script {
    int     listen_fd;
    int     port;
    int     fetch_max;          /* the Fetch version range it announces */
    StrBuf  answers[4];         /* to each Fetch in turn */
    int     nanswers;
    size_t  cut;                /* >0: the last answer stops after this many bytes */
    int     fetch_version;      /* of the last Fetch seen */
    pthread_t thread;
} Script;

static bool read_full(int fd, void *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return false;
        p = (char *)p + r;
        n -= (size_t)r;
    }
    return true;
}

static void answer(int fd, const uint8_t *req, const StrBuf *body, size_t cut)
{
    StrBuf out;
    strbuf_init(&out);
    b_i32(&out, 4 + (int64_t)body->len);
    strbuf_append(&out, req + 4, 4);        /* correlation id */
    strbuf_append(&out, body->data, body->len);
    size_t n = cut ? cut : out.len;
    if (write(fd, out.data, n) != (ssize_t)n)
        abort();
    strbuf_free(&out);
}

static void *broker_main(void *arg)
{
    Script *s = arg;
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    int fetches = 0;
    for (;;) {
        uint8_t sz[4];
        if (!read_full(fd, sz, 4))
            break;
        uint32_t n = get_be32(sz);
        uint8_t *req = malloc(n);
        if (!read_full(fd, req, n)) {
            free(req);
            break;
        }
        int api = req[0] << 8 | req[1];
        StrBuf body;
        strbuf_init(&body);
        if (api == 18) {
            b_i16(&body, 0);
            b_i32(&body, 2);
            b_i16(&body, 1), b_i16(&body, 0), b_i16(&body, s->fetch_max);
            b_i16(&body, 18), b_i16(&body, 0), b_i16(&body, 3);
            answer(fd, req, &body, 0);
        } else if (api == 1 && fetches < s->nanswers) {
            s->fetch_version = req[2] << 8 | req[3];
            bool last = fetches == s->nanswers - 1;
            answer(fd, req, &s->answers[fetches++], last ? s->cut : 0);
            if (last && s->cut) {
                free(req);
                strbuf_free(&body);
                break;          /* the connection closes mid-response */
            }
        } else {
            free(req);
            strbuf_free(&body);
            break;
        }
        free(req);
        strbuf_free(&body);
    }
    close(fd);
    return NULL;
}

static void script_start(Script *s, int fetch_max)
{
    s->fetch_max = fetch_max;
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (bind(s->listen_fd, (struct sockaddr *)&a, al) < 0 || listen(s->listen_fd, 1) < 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&a, &al) < 0)
        abort();
    s->port = ntohs(a.sin_port);
    pthread_create(&s->thread, NULL, broker_main, s);
}

static void script_end(Script *s, KfConn *c)
{
    kf_conn_close(c);
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
    for (int i = 0; i < s->nanswers; i++)
        strbuf_free(&s->answers[i]);
}

/* Connects to the script and sends one Fetch at offset: the connection,
 * and kf_fetch's result in *rc. */
static KfConn *fetch_once(Script *s, int64_t offset, bool committed, int *rc, char *why)
{
    KfConn *c = kf_connect("127.0.0.1", s->port, 1, 5000, why, 200);
    if (c == NULL) {
        *rc = -2;
        return NULL;
    }
    KfAsk ask = {"t", 0, offset};
    *rc = kf_fetch(c, &ask, 1, committed, 100, 5000, why, 200);
    return c;
}

/* Walks the response: the records' offsets into got (and their values'
 * first letters into vals), the last position into *pos; kf_next's last
 * answer. */
static int walk(KfConn *c, int64_t *got, int *ngot, char *vals, int64_t *pos, char *why)
{
    KfRecord r;
    int rc;
    *ngot = 0;
    while ((rc = kf_next(c, &r, why, 200)) > 0) {
        if (rc == 2) {
            *pos = r.offset;
            continue;
        }
        vals[*ngot] = r.value ? r.value[0] : '-';
        got[(*ngot)++] = r.offset;
    }
    vals[*ngot] = '\0';
    return rc;
}

typedef struct Walk {
    int64_t got[256];           /* the records' offsets */
    char    vals[257];          /* their values' first letters ('-': NULL) */
    int     n, rc;              /* records; kf_next's last answer */
    int64_t pos;                /* the last position */
    char    why[200];
} Walk;

/* Answers the first Fetch with the batches of log (and aborted
 * transactions: pid, first offset pairs) and fetches from offset: the
 * connection, for script_end; true if the fetch succeeded.  Answers after
 * the first are the caller's, set before. */
static bool serve_and_fetch(Script *s, const int64_t *aborted, int naborted, const StrBuf *log,
                            int64_t offset, bool committed, KfConn **c, char *why)
{
    strbuf_init(&s->answers[0]);
    b_fetch(&s->answers[0], 0, aborted, naborted, log);
    s->nanswers = s->nanswers ? s->nanswers : 1;
    script_start(s, 11);
    int rc;
    *c = fetch_once(s, offset, committed, &rc, why);
    CHECK(*c != NULL && rc == 0, "%s", why);
    return *c != NULL && rc == 0;
}

/* serve_and_fetch, and the response walked into w. */
static KfConn *serve_and_walk(Script *s, const int64_t *aborted, int naborted,
                              const StrBuf *log, int64_t offset, bool committed, Walk *w)
{
    memset(w, 0, sizeof(*w));
    w->pos = -1;
    KfConn *c;
    w->rc = serve_and_fetch(s, aborted, naborted, log, offset, committed, &c, w->why)
                ? walk(c, w->got, &w->n, w->vals, &w->pos, w->why)
                : -2;
    return c;
}

/* ---------------------------------------------------------------------- */
/* The tests                                                               */

static void test_records_and_metadata(void)
{
    Script s = {0};
    StrBuf recs, batch;
    strbuf_init(&recs);
    strbuf_init(&batch);
    const char *h1[] = {"a", "x", "n", NULL, NULL};
    b_record(&recs, 0, 0, "k0", "{\"v\":0}", NULL);
    b_record(&recs, 1, 7, NULL, "{\"v\":1}", h1);
    b_record(&recs, 2, 9, "k2", NULL, NULL);
    b_batch(&batch, 10, 2, 0, -1, 3, &recs, 2);
    strbuf_init(&s.answers[0]);
    b_fetch(&s.answers[0], 0, NULL, 0, &batch);
    s.nanswers = 1;
    script_start(&s, 16);
    char why[200] = "";
    int rc;
    KfConn *c = fetch_once(&s, 11, true, &rc, why);
    CHECK(c != NULL && rc == 0, "%s", why);
    CHECK(s.fetch_version == 11, "Fetch v%d", s.fetch_version);
    KfRecord r;
    CHECK(kf_next(c, &r, why, sizeof(why)) == 1);
    CHECK(r.offset == 11 && r.key == NULL && r.ts_ms == 1007 && r.len == 7 &&
          memcmp(r.value, "{\"v\":1}", 7) == 0 && r.pid == -1 && !r.transactional);
    StrBuf j;
    strbuf_init(&j);
    CHECK(kf_headers_json(&r, &j) == 0);
    strbuf_putc(&j, '\0');
    CHECK(strcmp(j.data, "{\"a\": \"x\", \"n\": null}") == 0, "%s", j.data);
    strbuf_free(&j);
    CHECK(kf_next(c, &r, why, sizeof(why)) == 1);
    CHECK(r.offset == 12 && r.value == NULL && r.key_len == 2 && memcmp(r.key, "k2", 2) == 0);
    CHECK(kf_next(c, &r, why, sizeof(why)) == 2 && r.offset == 13);
    CHECK(kf_next(c, &r, why, sizeof(why)) == 0);
    KfAskInfo info;
    kf_ask_info(c, 0, &info);
    CHECK(info.error == 0 && info.high == 100 && info.stable == 90 && info.had_batches);
    script_end(&s, c);
    strbuf_free(&recs);
    strbuf_free(&batch);
}

/* pid 7 writes 20-21 and aborts (marker 24); pid 8 writes 22-23 and
 * commits (marker 25); pid 7 writes 26 in a later transaction. */
static void transactions_log(StrBuf *log)
{
    StrBuf r;
    strbuf_init(&r);
    b_record(&r, 0, 0, NULL, "a", NULL);
    b_record(&r, 1, 0, NULL, "b", NULL);
    b_batch(log, 20, 1, 0x10, 7, 2, &r, 2);
    strbuf_reset(&r);
    b_record(&r, 0, 0, NULL, "c", NULL);
    b_record(&r, 1, 0, NULL, "d", NULL);
    b_batch(log, 22, 1, 0x10, 8, 2, &r, 2);
    b_control(log, 24, 7, 0);
    b_control(log, 25, 8, 1);
    strbuf_reset(&r);
    b_record(&r, 0, 0, NULL, "e", NULL);
    b_batch(log, 26, 0, 0x10, 7, 1, &r, 2);
    strbuf_free(&r);
}

static void test_transactions(bool committed)
{
    Script s = {0};
    StrBuf log;
    strbuf_init(&log);
    transactions_log(&log);
    int64_t aborted[] = {7, 20};
    Walk w;
    KfConn *c = serve_and_walk(&s, aborted, 1, &log, 20, committed, &w);
    CHECK(w.rc == 0, "%s", w.why);
    CHECK(strcmp(w.vals, committed ? "cde" : "abcde") == 0, "%s", w.vals);
    CHECK(w.pos == 27, "%lld", (long long)w.pos);
    script_end(&s, c);
    strbuf_free(&log);
}

/* The Kafka sink's recovery read: read_uncommitted with the markers
 * reported, each record with its producer id, from an offset between
 * them: a marker below it is not reported. */
static void test_markers(int64_t from)
{
    Script s = {0};
    StrBuf log;
    strbuf_init(&log);
    transactions_log(&log);
    char why[200] = "";
    KfConn *c;
    bool ok = serve_and_fetch(&s, NULL, 0, &log, from, false, &c, why);
    if (ok)
        kf_report_markers(c, true);
    int rc = -2;
    /* What kf_next says: a record's value, producer id and 't'
     * (transactional) or 'n'; C or A and the producer id of a marker; '.'
     * and a position. */
    char got[128] = "";
    KfRecord rec;
    while (ok && (rc = kf_next(c, &rec, why, sizeof(why))) > 0) {
        char one[48];
        if (rc == 1)
            snprintf(one, sizeof(one), "%c%lld%c ", rec.value[0], (long long)rec.pid,
                     rec.transactional ? 't' : 'n');
        else if (rc == 3)
            snprintf(one, sizeof(one), "%c%lld ", rec.commit ? 'C' : 'A', (long long)rec.pid);
        else
            snprintf(one, sizeof(one), ".%lld ", (long long)rec.offset);
        strncat(got, one, sizeof(got) - strlen(got) - 1);
    }
    CHECK(rc == 0, "%s", why);
    const char *want = from == 21 ? "b7t .22 c8t d8t .24 A7 .25 C8 .26 e7t .27 "
                                  : ".25 C8 .26 e7t .27 ";
    CHECK(strcmp(got, want) == 0, "from %lld: %s", (long long)from, got);
    script_end(&s, c);
    strbuf_free(&log);
}

static void test_cut_short_and_error_code(void)
{
    Script s = {0};
    StrBuf recs, log;
    strbuf_init(&recs);
    strbuf_init(&log);
    b_record(&recs, 0, 0, NULL, "x", NULL);
    b_batch(&log, 5, 0, 0, -1, 1, &recs, 2);
    size_t whole = log.len;
    b_batch(&log, 6, 0, 0, -1, 1, &recs, 2);
    log.len = whole + 65;       /* the second batch cut short after its header */
    strbuf_init(&s.answers[1]);
    b_fetch(&s.answers[1], 6, NULL, 0, NULL);     /* NOT_LEADER_OR_FOLLOWER */
    s.nanswers = 2;
    Walk w;
    KfConn *c = serve_and_walk(&s, NULL, 0, &log, 5, true, &w);
    CHECK(w.rc == 0 && w.n == 1 && w.got[0] == 5 && w.pos == 6);
    KfAsk ask = {"t", 0, 6};
    CHECK(c != NULL && kf_fetch(c, &ask, 1, true, 100, 5000, w.why, sizeof(w.why)) == 0, "%s",
          w.why);
    KfAskInfo info;
    kf_ask_info(c, 0, &info);
    CHECK(info.error == 6 && !info.had_batches);
    script_end(&s, c);
    strbuf_free(&recs);
    strbuf_free(&log);
}

static void compress_into(int codec, const StrBuf *in, StrBuf *out)
{
    size_t cap = in->len * 2 + 1024;
    strbuf_reserve(out, cap);
    size_t n = 0;
    if (codec == 1) {
        z_stream z = {0};
        deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
        z.next_in = (Bytef *)in->data;
        z.avail_in = (uInt)in->len;
        z.next_out = (Bytef *)out->data + out->len;
        z.avail_out = (uInt)cap;
        deflate(&z, Z_FINISH);
        n = cap - z.avail_out;
        deflateEnd(&z);
    } else if (codec == 3) {
        n = LZ4F_compressFrame(out->data + out->len, cap, in->data, in->len, NULL);
    } else if (codec == 4) {
        n = ZSTD_compress(out->data + out->len, cap, in->data, in->len, 3);
    } else {
        memcpy(out->data + out->len, in->data, in->len);   /* "snappy" */
        n = in->len;
    }
    out->len += n;
}

static void test_codecs(void)
{
    for (int codec = 1; codec <= 4; codec++) {
        Script s = {0};
        StrBuf recs, packed, log;
        strbuf_init(&recs);
        strbuf_init(&packed);
        strbuf_init(&log);
        for (int i = 0; i < 200; i++)
            b_record(&recs, i, i, NULL, i % 2 ? "odd value, padded out" : "even", NULL);
        compress_into(codec, &recs, &packed);
        b_batch(&log, 0, 199, codec, -1, 200, &packed, 2);
        Walk w;
        KfConn *c = serve_and_walk(&s, NULL, 0, &log, 0, true, &w);
        if (codec == 2) {
            CHECK(w.rc == -1 && strstr(w.why, "snappy") != NULL, "%s", w.why);
        } else {
            CHECK(w.rc == 0 && w.n == 200 && w.got[199] == 199 && w.pos == 200 &&
                  w.vals[0] == 'e' && w.vals[1] == 'o', "codec %d: %s", codec, w.why);
        }
        script_end(&s, c);
        strbuf_free(&recs);
        strbuf_free(&packed);
        strbuf_free(&log);
    }
}

static void test_bad_input(void)
{
    /* A record whose length runs past its batch; then magic 1. */
    for (int k = 0; k < 2; k++) {
        Script s = {0};
        StrBuf recs, log;
        strbuf_init(&recs);
        strbuf_init(&log);
        if (k == 0) {
            b_varint(&recs, 120);
            strbuf_puts(&recs, "short");
        } else {
            b_record(&recs, 0, 0, NULL, "x", NULL);
        }
        b_batch(&log, 0, 0, 0, -1, 1, &recs, k == 0 ? 2 : 1);
        Walk w;
        KfConn *c = serve_and_walk(&s, NULL, 0, &log, 0, true, &w);
        CHECK(w.rc == -1 && w.n == 0);
        CHECK(strstr(w.why, k == 0 ? "malformed" : "magic 1") != NULL, "%s", w.why);
        script_end(&s, c);
        strbuf_free(&recs);
        strbuf_free(&log);
    }
    /* A response cut short by the broker closing the connection. */
    Script s = {0};
    strbuf_init(&s.answers[0]);
    b_fetch(&s.answers[0], 0, NULL, 0, NULL);
    s.nanswers = 1;
    s.cut = 12;
    script_start(&s, 11);
    char why[200] = "";
    int rc;
    KfConn *c = fetch_once(&s, 0, true, &rc, why);
    CHECK(c != NULL && rc == -1 && strstr(why, "cut short") != NULL, "%s", why);
    script_end(&s, c);
    /* A broker without Fetch v4..v11. */
    Script old = {0};
    script_start(&old, 3);
    c = kf_connect("127.0.0.1", old.port, 1, 5000, why, sizeof(why));
    CHECK(c == NULL && strstr(why, "Fetch v0 to v3") != NULL, "%s", why);
    script_end(&old, c);
}

int main(void)
{
    test_records_and_metadata();
    test_transactions(true);
    test_transactions(false);
    test_markers(21);
    test_markers(25);
    test_cut_short_and_error_code();
    test_codecs();
    test_bad_input();
    return unit_done("kafka_fetch");
}
