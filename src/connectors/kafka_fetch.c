/*
 * kafka_fetch.c -- Kafka Fetch requests and RecordBatch v2 parsed in place
 * (see kafka_fetch.h; docs/kafka-fetch.md).
 *
 *   kf_connect, kf_conn_close, kf_conn_broker
 *   kf_fetch, kf_next, kf_report_markers, kf_skip, kf_ask_info,
 *   kf_headers_json
 *
 * The protocol spoken: ApiVersions v0 once per connection, then Fetch v4 to
 * v11 (the highest the broker takes, at least 4), never a fetch session
 * (session id 0, epoch -1: every request is a full one), no leader epochs
 * (-1), no rack.  A request and its response are one blocking round trip on
 * the caller's thread, bounded by poll(2) deadlines and by the statement's
 * interrupt flag (a SELECT's cancel or timeout); the whole response is
 * read into the connection's buffer and then walked: per partition asked,
 * its record batches in log order.  Batches of magic 2 only (Kafka 0.11 and
 * later write nothing else); uncompressed, gzip (zlib), lz4 (the frame
 * format) and zstd; snappy and anything else is an error, for the caller's
 * fallback.  A batch cut short at the response's end (the size limits) is
 * left for the next request.
 *
 * read_committed follows Kafka's consumer: the response lists the aborted
 * transactions (producer id, first offset) overlapping what it returns;
 * walking a partition's batches in order, a producer is aborted from its
 * first offset until its ABORT control record, and its transactional
 * batches in between are skipped.  Control batches are never records.
 * Both still move the partition's position (kf_next's 2), for they take
 * offsets.  A reader that asks for the markers (kf_report_markers: the
 * Kafka sink's recovery read, kafka_sink.c) gets each COMMIT and ABORT
 * marker, with its producer id, and every record says its batch's producer
 * id and whether it is transactional.
 */
#include "kafka_fetch.h"

#include "sluice/bytes.h"
#include "sluice/common.h"
#include "sluice/exec.h"

#include <errno.h>
#include <lz4frame.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define API_FETCH        1
#define API_VERSIONS     18
#define FETCH_MIN        4
#define FETCH_MAX        11
#define PART_MAX_BYTES   (4 << 20)      /* per partition and request */
#define FETCH_MAX_BYTES  (64 << 20)     /* per request */
#define RESPONSE_MAX     (256 << 20)    /* a larger size is lost sync */
#define BATCH_HEADER     61             /* RecordBatch v2 up to its records */
#define CLIENT_ID        "sluice"

typedef struct Aborted {
    int64_t pid, first;
} Aborted;

typedef struct AskState {
    KfAsk          ask;
    KfAskInfo      info;
    bool           answered;        /* the response named it */
    bool           skip;
    const uint8_t *p, *end;         /* its record batches not yet walked */
    Aborted       *aborted;         /* sorted by first offset */
    int            naborted, iaborted;
} AskState;

struct KfConn {
    int       fd;
    int32_t   broker;
    int16_t   version;              /* of Fetch */
    int32_t   corr;
    bool      read_committed;
    bool      markers;              /* kf_next returns transaction markers */
    uint8_t  *buf;                  /* the response (or the request being sent) */
    size_t    cap;
    uint8_t  *zbuf;                 /* a batch's records, decompressed */
    size_t    zcap;
    AskState *asks;
    int       nasks, capasks;
    Aborted  *aborted;              /* every ask's, in one array */
    int       capaborted;
    /* the walk */
    int            cur;             /* the ask being walked */
    bool           in_batch;
    const uint8_t *rp, *rend;       /* the batch's records left */
    int32_t        rleft;
    int64_t        base_offset, base_ts, max_ts, batch_next;
    bool           log_append_time;
    int64_t        batch_pid;       /* the batch's producer id */
    bool           batch_txn;       /* the batch is transactional */
    int64_t       *pids;            /* producers aborted so far in this ask */
    int            npids, cappids;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(char *why, size_t n, const char *fmt, const char *arg)
{
    snprintf(why, n, fmt, arg);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* The socket                                                              */

/* Waits until fd is readable (or writable) before deadline: 0, or -1 --
 * also once the statement on this thread is cancelled or timed out
 * (looked at every 100 ms). */
static int wait_fd(int fd, bool write, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0 || ex_interrupted() != EX_RUNNING)
            return -1;
        struct pollfd p = {fd, write ? POLLOUT : POLLIN, 0};
        int rc = poll(&p, 1, (int)SL_MIN(left, 100));
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

static int send_all(int fd, const uint8_t *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, true, deadline) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

static int recv_all(int fd, uint8_t *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, false, deadline) < 0)
                return -1;
        } else {
            return -1;      /* closed (0) or failed */
        }
    }
    return 0;
}

static void reserve(uint8_t **buf, size_t *cap, size_t n)
{
    if (*cap >= n)
        return;
    size_t c = *cap ? *cap : 4096;
    while (c < n)
        c *= 2;
    *buf = sl_realloc(*buf, c);
    *cap = c;
}

/* The request's header into c->buf after 4 bytes left for its size; the
 * offset past it. */
static size_t put_header(KfConn *c, int16_t api, int16_t version)
{
    reserve(&c->buf, &c->cap, 64);
    uint8_t *p = c->buf + 4;
    p[0] = (uint8_t)(api >> 8), p[1] = (uint8_t)api;
    p[2] = (uint8_t)(version >> 8), p[3] = (uint8_t)version;
    put_be32(p + 4, (uint32_t)++c->corr);
    size_t l = strlen(CLIENT_ID);
    p[8] = 0, p[9] = (uint8_t)l;
    memcpy(p + 10, CLIENT_ID, l);
    return 4 + 10 + l;
}

/* Sends c->buf[0, len) (its size filled in) and reads the response's body
 * into c->buf; its length, or -1 with why. */
static int64_t round_trip(KfConn *c, size_t len, int timeout_ms, char *why, size_t whylen)
{
    int64_t deadline = now_ms() + timeout_ms;
    put_be32(c->buf, (uint32_t)(len - 4));
    uint8_t sz[4];
    if (send_all(c->fd, c->buf, len, deadline) < 0)
        return fail(why, whylen, "sending to the broker failed: %s",
                    errno ? strerror(errno) : "timed out");
    if (recv_all(c->fd, sz, 4, deadline) < 0)
        return fail(why, whylen, "no answer from the broker: %s",
                    errno ? strerror(errno) : "timed out");
    uint32_t n = get_be32(sz);
    if (n < 4 || n > RESPONSE_MAX)
        return fail(why, whylen, "a response of %s bytes: lost sync", n < 4 ? "too few" : "too many");
    reserve(&c->buf, &c->cap, n);
    if (recv_all(c->fd, c->buf, n, deadline) < 0)
        return fail(why, whylen, "the broker's response was cut short: %s",
                    errno ? strerror(errno) : "timed out");
    if ((int32_t)get_be32(c->buf) != c->corr)
        return fail(why, whylen, "%s", "a response to another request: lost sync");
    return n;
}

KfConn *kf_connect(const char *host, int port, int32_t broker, int timeout_ms, char *why,
                   size_t whylen)
{
    char service[16];
    snprintf(service, sizeof(service), "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host, service, &hints, &res);
    if (gai != 0) {
        snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(gai));
        return NULL;
    }
    int64_t deadline = now_ms() + timeout_ms;
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc < 0 && errno == EINPROGRESS && wait_fd(fd, true, deadline) == 0) {
            int e = 0;
            socklen_t el = sizeof(e);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
            rc = e == 0 ? 0 : -1;
            errno = e;
        }
        if (rc < 0) {
            snprintf(why, whylen, "cannot connect to %s:%d: %s", host, port,
                     errno ? strerror(errno) : "timed out");
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    KfConn *c = sl_calloc(1, sizeof(KfConn));
    c->fd = fd;
    c->broker = broker;
    /* ApiVersions v0: which Fetch versions the broker takes. */
    size_t len = put_header(c, API_VERSIONS, 0);
    int64_t n = round_trip(c, len, timeout_ms, why, whylen);
    if (n < 0) {
        kf_conn_close(c);
        return NULL;
    }
    const uint8_t *p = c->buf + 4, *end = c->buf + n;
    if (end - p < 6 || get_be32(p + 2) > (uint32_t)(end - p - 6) / 6 || p[0] || p[1]) {
        snprintf(why, whylen, "the broker's ApiVersions answer is not one sluice reads");
        kf_conn_close(c);
        return NULL;
    }
    int32_t napis = (int32_t)get_be32(p + 2);
    int16_t lo = -1, hi = -1;
    for (int32_t i = 0; i < napis; i++) {
        const uint8_t *a = p + 6 + 6 * i;
        if ((int16_t)(a[0] << 8 | a[1]) == API_FETCH) {
            lo = (int16_t)(a[2] << 8 | a[3]);
            hi = (int16_t)(a[4] << 8 | a[5]);
        }
    }
    if (hi < FETCH_MIN || lo > FETCH_MAX) {
        snprintf(why, whylen, "the broker speaks Fetch v%d to v%d, sluice v%d to v%d", lo, hi,
                 FETCH_MIN, FETCH_MAX);
        kf_conn_close(c);
        return NULL;
    }
    c->version = SL_MIN(hi, FETCH_MAX);
    return c;
}

void kf_conn_close(KfConn *c)
{
    if (c == NULL)
        return;
    if (c->fd >= 0)
        close(c->fd);
    sl_free(c->buf);
    sl_free(c->zbuf);
    sl_free(c->asks);
    sl_free(c->aborted);
    sl_free(c->pids);
    sl_free(c);
}

int32_t kf_conn_broker(const KfConn *c)
{
    return c->broker;
}

/* ---------------------------------------------------------------------- */
/* Fetch                                                                   */

typedef struct Out {
    KfConn *c;
    size_t  len;
} Out;

static uint8_t *out_room(Out *o, size_t n)
{
    reserve(&o->c->buf, &o->c->cap, o->len + n);
    uint8_t *p = o->c->buf + o->len;
    o->len += n;
    return p;
}

static void out_i8(Out *o, int8_t v)
{
    *out_room(o, 1) = (uint8_t)v;
}

static void out_i16(Out *o, int16_t v)
{
    uint8_t *p = out_room(o, 2);
    p[0] = (uint8_t)((uint16_t)v >> 8), p[1] = (uint8_t)v;
}

static void out_i32(Out *o, int32_t v)
{
    put_be32(out_room(o, 4), (uint32_t)v);
}

static void out_i64(Out *o, int64_t v)
{
    put_be64(out_room(o, 8), (uint64_t)v);
}

static void out_str(Out *o, const char *s)
{
    size_t l = strlen(s);
    out_i16(o, (int16_t)l);
    memcpy(out_room(o, l), s, l);
}

/* A cursor over a response: every read checks the bounds. */
typedef struct In {
    const uint8_t *p, *end;
    bool           bad;
} In;

static const uint8_t *in_take(In *in, size_t n)
{
    if (in->bad || (size_t)(in->end - in->p) < n) {
        in->bad = true;
        return NULL;
    }
    const uint8_t *p = in->p;
    in->p += n;
    return p;
}

static int16_t in_i16(In *in)
{
    const uint8_t *p = in_take(in, 2);
    return p ? (int16_t)(p[0] << 8 | p[1]) : 0;
}

static int32_t in_i32(In *in)
{
    const uint8_t *p = in_take(in, 4);
    return p ? (int32_t)get_be32(p) : 0;
}

static int64_t in_i64(In *in)
{
    const uint8_t *p = in_take(in, 8);
    return p ? (int64_t)get_be64(p) : 0;
}

static int cmp_aborted(const void *a, const void *b)
{
    int64_t x = ((const Aborted *)a)->first, y = ((const Aborted *)b)->first;
    return x < y ? -1 : x > y;
}

int kf_fetch(KfConn *c, const KfAsk *asks, int nasks, bool read_committed, int max_wait_ms,
             int timeout_ms, char *why, size_t whylen)
{
    int16_t v = c->version;
    Out o = {c, put_header(c, API_FETCH, v)};
    out_i32(&o, -1);                        /* replica_id: a consumer */
    out_i32(&o, max_wait_ms);
    out_i32(&o, 1);                         /* min_bytes */
    out_i32(&o, FETCH_MAX_BYTES);
    out_i8(&o, read_committed ? 1 : 0);
    if (v >= 7) {
        out_i32(&o, 0);                     /* no fetch session */
        out_i32(&o, -1);
    }
    /* Topics, each once, with their partitions. */
    size_t ntopics_at = o.len;
    out_i32(&o, 0);
    int32_t ntopics = 0;
    for (int i = 0; i < nasks; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(asks[j].topic, asks[i].topic) == 0;
        if (seen)
            continue;
        ntopics++;
        out_str(&o, asks[i].topic);
        size_t nparts_at = o.len;
        out_i32(&o, 0);
        int32_t nparts = 0;
        for (int j = i; j < nasks; j++) {
            if (strcmp(asks[j].topic, asks[i].topic) != 0)
                continue;
            nparts++;
            out_i32(&o, asks[j].part);
            if (v >= 9)
                out_i32(&o, -1);            /* current leader epoch: unknown */
            out_i64(&o, asks[j].offset);
            if (v >= 5)
                out_i64(&o, -1);            /* log start offset: a consumer's */
            out_i32(&o, PART_MAX_BYTES);
        }
        put_be32(c->buf + nparts_at, (uint32_t)nparts);
    }
    put_be32(c->buf + ntopics_at, (uint32_t)ntopics);
    if (v >= 7)
        out_i32(&o, 0);                     /* forgotten topics */
    if (v >= 11)
        out_str(&o, "");                    /* rack id */
    /* The asks are kept: the response names topics, not asks. */
    if (c->capasks < nasks) {
        c->capasks = nasks;
        c->asks = sl_realloc(c->asks, sizeof(AskState) * (size_t)nasks);
    }
    c->nasks = nasks;
    for (int i = 0; i < nasks; i++)
        c->asks[i] = (AskState){.ask = asks[i], .info = {.stable = -1, .high = -1}};
    c->read_committed = read_committed;
    c->cur = 0;
    c->in_batch = false;
    c->npids = 0;
    int64_t n = round_trip(c, o.len, timeout_ms, why, whylen);
    if (n < 0)
        return -1;
    /* The response: where each ask's records and aborted transactions are. */
    In in = {c->buf + 4, c->buf + n, false};
    in_i32(&in);                            /* throttle time */
    if (v >= 7) {
        int16_t e = in_i16(&in);
        in_i32(&in);                        /* session id */
        if (e != 0) {
            snprintf(why, whylen, "the broker refused the Fetch: error %d", e);
            return -1;
        }
    }
    int32_t nt = in_i32(&in);
    int totab = 0;
    /* First pass: count the aborted transactions, to size one array. */
    for (int pass = 0; pass < 2; pass++) {
        In r = in;
        int iab = 0;
        for (int32_t t = 0; t < nt && !r.bad; t++) {
            int16_t tl = in_i16(&r);
            const uint8_t *tn = in_take(&r, tl < 0 ? 0 : (size_t)tl);
            int32_t np = in_i32(&r);
            for (int32_t k = 0; k < np && !r.bad; k++) {
                int32_t part = in_i32(&r);
                KfAskInfo info = {.stable = -1};
                info.error = in_i16(&r);
                info.high = in_i64(&r);
                info.stable = in_i64(&r);
                if (v >= 5)
                    in_i64(&r);             /* log start offset */
                int32_t na = in_i32(&r);
                const uint8_t *ab = in_take(&r, na > 0 ? (size_t)na * 16 : 0);
                if (v >= 11)
                    in_i32(&r);             /* preferred read replica */
                int32_t rl = in_i32(&r);
                const uint8_t *recs = in_take(&r, rl > 0 ? (size_t)rl : 0);
                if (r.bad)
                    break;
                if (pass == 0) {
                    totab += na > 0 ? na : 0;
                    continue;
                }
                AskState *a = NULL;
                for (int i = 0; i < nasks && a == NULL; i++)
                    if (c->asks[i].ask.part == part && tn != NULL &&
                        strlen(c->asks[i].ask.topic) == (size_t)tl &&
                        memcmp(c->asks[i].ask.topic, tn, (size_t)tl) == 0)
                        a = &c->asks[i];
                if (a == NULL)
                    continue;
                a->answered = true;
                a->info = info;
                a->info.had_batches = rl > 0;
                a->p = recs;
                a->end = recs ? recs + rl : NULL;
                a->naborted = na > 0 ? na : 0;
                if (a->naborted == 0)
                    continue;
                a->aborted = c->aborted + iab;
                for (int x = 0; x < a->naborted; x++)
                    a->aborted[x] = (Aborted){(int64_t)get_be64(ab + 16 * x),
                                              (int64_t)get_be64(ab + 16 * x + 8)};
                qsort(a->aborted, (size_t)a->naborted, sizeof(Aborted), cmp_aborted);
                iab += a->naborted;
            }
        }
        if (r.bad) {
            snprintf(why, whylen, "a Fetch response sluice cannot read");
            return -1;
        }
        if (pass == 0 && totab > c->capaborted) {
            c->capaborted = totab;
            c->aborted = sl_realloc(c->aborted, sizeof(Aborted) * (size_t)totab);
        }
    }
    for (int i = 0; i < nasks; i++) {
        if (!c->asks[i].answered) {
            snprintf(why, whylen, "the Fetch response left out %s", c->asks[i].ask.topic);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Record batches                                                          */

/* A zigzag varint (Kafka's varint and varlong) at *p, before end.  Most
 * of a record's (its attributes, deltas, a short key's length) take one
 * byte. */
static inline bool varint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    uint64_t v;
    if (*p < end && !(**p & 0x80))
        v = *(*p)++;
    else if (!get_uvarint(p, end, &v))
        return false;
    *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return true;
}

/* The records of a compressed batch, [p, end), into c->zbuf: its length,
 * or -1 with why. */
static int64_t decompress(KfConn *c, int codec, const uint8_t *p, const uint8_t *end,
                          char *why, size_t whylen)
{
    size_t in_len = (size_t)(end - p);
    size_t out = 0;
    reserve(&c->zbuf, &c->zcap, in_len * 4 + 1024);
    if (codec == 1) {                       /* gzip */
        z_stream z = {0};
        if (inflateInit2(&z, 15 + 32) != Z_OK)
            return fail(why, whylen, "%s", "zlib: cannot start inflating");
        z.next_in = (Bytef *)(uintptr_t)p;
        z.avail_in = (uInt)in_len;
        int rc;
        do {
            if (out == c->zcap)
                reserve(&c->zbuf, &c->zcap, c->zcap * 2);
            z.next_out = c->zbuf + out;
            z.avail_out = (uInt)(c->zcap - out);
            rc = inflate(&z, Z_NO_FLUSH);
            out = (size_t)(z.next_out - c->zbuf);
        } while (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0));
        inflateEnd(&z);
        if (rc != Z_STREAM_END)
            return fail(why, whylen, "a gzip batch that does not inflate: %s",
                        z.msg ? z.msg : "truncated");
        return (int64_t)out;
    }
    if (codec == 3) {                       /* lz4, the frame format */
        LZ4F_dctx *d;
        if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
            return fail(why, whylen, "%s", "lz4: cannot start decompressing");
        size_t done = 0, hint = 1;
        while (done < in_len && hint != 0) {
            if (out == c->zcap)
                reserve(&c->zbuf, &c->zcap, c->zcap * 2);
            size_t dst = c->zcap - out, src = in_len - done;
            hint = LZ4F_decompress(d, c->zbuf + out, &dst, p + done, &src, NULL);
            if (LZ4F_isError(hint)) {
                LZ4F_freeDecompressionContext(d);
                return fail(why, whylen, "an lz4 batch that does not decompress: %s",
                            LZ4F_getErrorName(hint));
            }
            out += dst;
            done += src;
            if (src == 0 && dst == 0 && out < c->zcap)
                break;
        }
        LZ4F_freeDecompressionContext(d);
        if (hint != 0)
            return fail(why, whylen, "%s", "an lz4 batch cut short");
        return (int64_t)out;
    }
    if (codec == 4) {                       /* zstd */
        ZSTD_DStream *z = ZSTD_createDStream();
        ZSTD_inBuffer zin = {p, in_len, 0};
        size_t rc = 1;
        while (rc != 0 || zin.pos < zin.size) {
            if (out == c->zcap)
                reserve(&c->zbuf, &c->zcap, c->zcap * 2);
            ZSTD_outBuffer zout = {c->zbuf, c->zcap, out};
            rc = ZSTD_decompressStream(z, &zout, &zin);
            out = zout.pos;
            if (ZSTD_isError(rc)) {
                ZSTD_freeDStream(z);
                return fail(why, whylen, "a zstd batch that does not decompress: %s",
                            ZSTD_getErrorName(rc));
            }
            if (rc != 0 && zin.pos == zin.size && out < c->zcap)
                break;              /* wants more input than there is */
        }
        ZSTD_freeDStream(z);
        if (rc != 0)
            return fail(why, whylen, "%s", "a zstd batch cut short");
        return (int64_t)out;
    }
    snprintf(why, whylen, "a batch compressed with %s, which sluice does not read",
             codec == 2 ? "snappy" : "an unknown codec");
    return -1;
}

static bool pid_aborted(const KfConn *c, int64_t pid)
{
    for (int i = 0; i < c->npids; i++)
        if (c->pids[i] == pid)
            return true;
    return false;
}

/* The next record of the batch being walked into rec: 1, 0 none left,
 * -1 malformed. */
static int next_in_batch(KfConn *c, KfRecord *rec)
{
    const uint8_t *p = c->rp, *end = c->rend;
    int64_t len, tsd, od, kl, vl, nh;
    if (c->rleft <= 0 || p >= end)
        return 0;
    if (!varint(&p, end, &len) || len < 0 || len > end - p)
        return -1;
    const uint8_t *rec_end = p + len;
    p++;                                    /* attributes: none defined */
    if (!varint(&p, rec_end, &tsd) || !varint(&p, rec_end, &od) ||
        !varint(&p, rec_end, &kl) || kl < -1 || kl > rec_end - p)
        return -1;
    rec->key = kl < 0 ? NULL : (const char *)p;
    rec->key_len = kl < 0 ? 0 : (size_t)kl;
    p += kl < 0 ? 0 : kl;
    if (!varint(&p, rec_end, &vl) || vl < -1 || vl > rec_end - p)
        return -1;
    rec->value = vl < 0 ? NULL : (const char *)p;
    rec->len = vl < 0 ? 0 : (size_t)vl;
    p += vl < 0 ? 0 : vl;
    if (!varint(&p, rec_end, &nh) || nh < 0 || nh > rec_end - p)
        return -1;
    rec->headers = p;
    rec->headers_end = rec_end;
    rec->nheaders = (int32_t)nh;
    rec->offset = c->base_offset + od;
    rec->ts_ms = c->log_append_time ? c->max_ts : c->base_ts < 0 ? -1 : c->base_ts + tsd;
    c->rp = rec_end;
    c->rleft--;
    return 1;
}

int kf_next(KfConn *c, KfRecord *rec, char *why, size_t whylen)
{
    for (;;) {
        if (c->in_batch) {
            AskState *a = &c->asks[c->cur];
            while (!a->skip) {
                int rc = next_in_batch(c, rec);
                if (rc < 0)
                    return fail(why, whylen, "a malformed record in a batch of %s",
                                a->ask.topic);
                if (rc == 0)
                    break;
                if (rec->offset < a->ask.offset)
                    continue;               /* before the offset asked for */
                rec->ask = c->cur;
                rec->pid = c->batch_pid;
                rec->transactional = c->batch_txn;
                rec->commit = false;
                return 1;
            }
            c->in_batch = false;
            if (!a->skip) {
                memset(rec, 0, sizeof(*rec));
                rec->ask = c->cur;
                rec->offset = c->batch_next;
                return 2;
            }
        }
        if (c->cur >= c->nasks)
            return 0;
        AskState *a = &c->asks[c->cur];
        if (a->skip || a->p == NULL || a->end - a->p < BATCH_HEADER) {
            c->cur++;
            c->npids = 0;
            continue;
        }
        const uint8_t *b = a->p;
        int64_t base = (int64_t)get_be64(b);
        int32_t blen = (int32_t)get_be32(b + 8);
        if (blen < BATCH_HEADER - 12)
            return fail(why, whylen, "a malformed record batch of %s", a->ask.topic);
        if (blen > a->end - b - 12) {
            a->p = NULL;                    /* cut short by the size limits */
            continue;
        }
        const uint8_t *bend = b + 12 + blen;
        a->p = bend;
        if (b[16] != 2)
            return fail(why, whylen, "a message set of an old format (magic %s)",
                        b[16] == 0 ? "0" : "1");
        int attrs = b[21] << 8 | b[22];
        int32_t last_delta = (int32_t)get_be32(b + 23);
        int64_t pid = (int64_t)get_be64(b + 43);
        int32_t count = (int32_t)get_be32(b + 57);
        c->base_offset = base;
        c->batch_next = base + last_delta + 1;
        c->base_ts = (int64_t)get_be64(b + 27);
        c->max_ts = (int64_t)get_be64(b + 35);
        c->log_append_time = (attrs & 0x08) != 0;
        bool transactional = (attrs & 0x10) != 0, control = (attrs & 0x20) != 0;
        c->batch_pid = pid;
        c->batch_txn = transactional;
        if (c->read_committed)
            while (a->iaborted < a->naborted &&
                   a->aborted[a->iaborted].first <= c->batch_next - 1) {
                if (!pid_aborted(c, a->aborted[a->iaborted].pid)) {
                    if (c->npids == c->cappids) {
                        c->cappids = c->cappids ? c->cappids * 2 : 8;
                        c->pids = sl_realloc(c->pids, sizeof(int64_t) * (size_t)c->cappids);
                    }
                    c->pids[c->npids++] = a->aborted[a->iaborted].pid;
                }
                a->iaborted++;
            }
        const uint8_t *recs = b + BATCH_HEADER;
        int codec = attrs & 0x07;
        if (!control && c->batch_next <= a->ask.offset)
            continue;                       /* wholly before the offset asked for */
        if (codec != 0) {
            int64_t n = decompress(c, codec, recs, bend, why, whylen);
            if (n < 0)
                return -1;
            c->rp = c->zbuf;
            c->rend = c->zbuf + n;
        } else {
            c->rp = recs;
            c->rend = bend;
        }
        c->rleft = count;
        if (control) {
            /* The marker's key: version (int16), type (int16: 0 ABORT,
             * 1 COMMIT).  An ABORT ends its producer's aborted transaction. */
            KfRecord cr = {.offset = -1};
            int type = -1;
            if (transactional && (c->read_committed || c->markers) &&
                next_in_batch(c, &cr) == 1 && cr.key != NULL && cr.key_len >= 4)
                type = (uint8_t)cr.key[2] << 8 | (uint8_t)cr.key[3];
            if (c->read_committed && type == 0) {
                for (int i = 0; i < c->npids; i++)
                    if (c->pids[i] == pid)
                        c->pids[i] = c->pids[--c->npids];
            }
            c->rleft = 0;
            if (c->markers && (type == 0 || type == 1) && cr.offset >= a->ask.offset) {
                c->in_batch = true;         /* the next call gives the position */
                memset(rec, 0, sizeof(*rec));
                rec->ask = c->cur;
                rec->offset = cr.offset;
                rec->pid = pid;
                rec->transactional = true;
                rec->commit = type == 1;
                return 3;
            }
        } else if (c->read_committed && transactional && pid_aborted(c, pid)) {
            c->rleft = 0;
        }
        c->in_batch = true;
    }
}

void kf_report_markers(KfConn *c, bool on)
{
    c->markers = on;
}

void kf_skip(KfConn *c, int ask)
{
    if (ask >= 0 && ask < c->nasks)
        c->asks[ask].skip = true;
}

void kf_ask_info(const KfConn *c, int ask, KfAskInfo *out)
{
    *out = c->asks[ask].info;
}

int kf_headers_json(const KfRecord *rec, StrBuf *j)
{
    const uint8_t *p = rec->headers, *end = rec->headers_end;
    strbuf_putc(j, '{');
    for (int32_t h = 0; h < rec->nheaders; h++) {
        int64_t kl, vl;
        if (!varint(&p, end, &kl) || kl < 0 || kl > end - p)
            return -1;
        const uint8_t *k = p;
        p += kl;
        if (!varint(&p, end, &vl) || vl < -1 || vl > end - p)
            return -1;
        if (h)
            strbuf_puts(j, ", ");
        strbuf_put_json_string(j, (const char *)k, (size_t)kl);
        strbuf_puts(j, ": ");
        if (vl < 0)
            strbuf_puts(j, "null");
        else
            strbuf_put_json_string(j, (const char *)p, (size_t)vl);
        p += vl < 0 ? 0 : vl;
    }
    strbuf_putc(j, '}');
    return 0;
}
