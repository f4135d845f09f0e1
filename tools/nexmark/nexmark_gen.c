/*
 * nexmark_gen.c -- the Nexmark events as JSON lines, on stdout or to Kafka.
 *
 *   nexmark_gen [--events N] [--from N] [--seed N] [--base-time-ms MS]
 *               [--first-event-rate N] [--out-of-order-group-size N]
 *               [--table person|auction|bid] [--events-per-second N]
 *               [--kafka BOOTSTRAP --topic T [--partitions N]]
 *
 * One object per line, for events --from .. --from + N - 1 of the
 * generator in src/connectors/nexmark.c (the same events as the nexmark
 * connector with the same seed, base_time_ms and first_event_rate):
 *
 *   {"event_type":"bid","auction":1000,"bidder":1001,"price":123,
 *    "channel":"Google","url":"https://...","date_time":"2026-01-01 00:00:00.000",
 *    "extra":"..."}
 *
 * The keys after event_type are the columns of the nexmark connector's
 * tables (tools/nexmark/README.md); times are UTC, in PostgreSQL's text form.
 * With --kafka each object is one Kafka record of topic T instead
 * (nexmark_kafka.c): event n goes to partition n mod N, with the event
 * time as the record's timestamp.  --events-per-second paces the output
 * in wall-clock time (event k - from no sooner than (k - from) / N seconds
 * after the start; with --base-time-ms now and --first-event-rate N the
 * event times follow the clock), for latency runs.
 *
 *   put_event     an event as a JSON object
 *   pace          wait until an event's time to go out
 *   main          the options, then the events to stdout or to Kafka
 */
#include "nexmark_kafka.h"

#include "sluice/nexmark.h"
#include "sluice/strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void put_str(StrBuf *b, const char *key, const char *s)
{
    strbuf_printf(b, ",\"%s\":", key);
    strbuf_put_json_string(b, s, strlen(s));
}

static void put_time(StrBuf *b, const char *key, int64_t ms)
{
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)secs * 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strbuf_printf(b, ",\"%s\":\"%04d-%02d-%02d %02d:%02d:%02d.%03d\"", key, tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

static void put_int(StrBuf *b, const char *key, int64_t v)
{
    strbuf_printf(b, ",\"%s\":%" PRId64, key, v);
}

/* Appends the event as one JSON object, without a newline. */
static void put_event(StrBuf *b, const NexmarkEvent *ev)
{
    strbuf_printf(b, "{\"event_type\":\"%s\"", nexmark_kind_name(ev->kind));
    switch (ev->kind) {
    case NEXMARK_PERSON:
        put_int(b, "id", ev->id);
        put_str(b, "name", ev->name);
        put_str(b, "email_address", ev->email);
        put_str(b, "credit_card", ev->credit_card);
        put_str(b, "city", ev->city);
        put_str(b, "state", ev->state);
        put_time(b, "date_time", ev->date_time_ms);
        put_str(b, "extra", ev->extra);
        break;
    case NEXMARK_AUCTION:
        put_int(b, "id", ev->id);
        put_str(b, "item_name", ev->item_name);
        put_str(b, "description", ev->description);
        put_int(b, "initial_bid", ev->initial_bid);
        put_int(b, "reserve", ev->reserve);
        put_time(b, "date_time", ev->date_time_ms);
        put_time(b, "expires", ev->expires_ms);
        put_int(b, "seller", ev->seller);
        put_int(b, "category", ev->category);
        put_str(b, "extra", ev->extra);
        break;
    case NEXMARK_BID:
        put_int(b, "auction", ev->auction);
        put_int(b, "bidder", ev->bidder);
        put_int(b, "price", ev->price);
        put_str(b, "channel", ev->channel);
        put_str(b, "url", ev->url);
        put_time(b, "date_time", ev->date_time_ms);
        put_str(b, "extra", ev->extra);
        break;
    }
    strbuf_putc(b, '}');
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits until at_ns after start; what b buffers for stdout (when not NULL)
 * goes out first, so a paced line is not held back. */
static int pace(int64_t start_ns, double at_ns, StrBuf *b)
{
    int64_t due = start_ns + (int64_t)at_ns;
    if (now_ns() >= due)
        return 0;
    if (b != NULL && b->len > 0) {
        if (fwrite(b->data, 1, b->len, stdout) != b->len || fflush(stdout) != 0)
            return -1;
        strbuf_reset(b);
    }
    int64_t left;
    while ((left = due - now_ns()) > 0) {
        struct timespec ts = {left / 1000000000, left % 1000000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: nexmark_gen [--events N] [--from N] [--seed N] [--base-time-ms MS]\n"
                    "                   [--first-event-rate N] [--out-of-order-group-size N]\n"
                    "                   [--table person|auction|bid] [--events-per-second N]\n"
                    "                   [--kafka BOOTSTRAP --topic T [--partitions N]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    NexmarkConfig c;
    nexmark_config_default(&c);
    int64_t events = 1000, from = 0;
    int only = -1;
    const char *bootstrap = NULL, *topic = NULL;
    int partitions = 0;
    int64_t pace_eps = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return usage();
        const char *v = argv[++i];
        char *end;
        long long n = strtoll(v, &end, 10);
        bool numeric = *v != '\0' && *end == '\0';
        if (strcmp(a, "--table") == 0) {
            only = strcmp(v, "person") == 0 ? NEXMARK_PERSON
                 : strcmp(v, "auction") == 0 ? NEXMARK_AUCTION
                 : strcmp(v, "bid") == 0 ? NEXMARK_BID : -2;
            if (only == -2)
                return usage();
            continue;
        }
        if (strcmp(a, "--kafka") == 0 || strcmp(a, "--topic") == 0) {
            *(a[2] == 'k' ? &bootstrap : &topic) = v;
            continue;
        }
        if (!numeric || n < 0)
            return usage();
        if (strcmp(a, "--events") == 0)
            events = n;
        else if (strcmp(a, "--from") == 0)
            from = n;
        else if (strcmp(a, "--seed") == 0)
            c.seed = (uint64_t)n;
        else if (strcmp(a, "--base-time-ms") == 0)
            c.base_time_ms = n;
        else if (strcmp(a, "--first-event-rate") == 0 && n > 0 && n <= 1000000)
            c.first_event_rate = n;
        else if (strcmp(a, "--out-of-order-group-size") == 0 && n > 0)
            c.out_of_order_group_size = n;
        else if (strcmp(a, "--partitions") == 0 && n > 0 && n <= 100000)
            partitions = (int)n;
        else if (strcmp(a, "--events-per-second") == 0)
            pace_eps = n;
        else
            return usage();
    }
    if ((bootstrap == NULL) != (topic == NULL) || (partitions > 0 && bootstrap == NULL))
        return usage();
    NexmarkEvent ev;
    StrBuf b;
    strbuf_init(&b);
    NexmarkKafka *kafka = NULL;
    /* Paced, a record should not linger in librdkafka's batch. */
    if (bootstrap != NULL &&
        nexmark_kafka_open(bootstrap, topic, partitions, pace_eps > 0 ? 1 : 20, &kafka) < 0)
        return 1;
    int rc = 0;
    int64_t start_ns = now_ns();
    for (int64_t k = from; k < from + events && rc == 0; k++) {
        if (pace_eps > 0 &&
            pace(start_ns, (double)(k - from) * 1e9 / (double)pace_eps, kafka ? NULL : &b) < 0) {
            rc = -1;
            break;
        }
        nexmark_event(&c, k, &ev);
        if (only >= 0 && (int)ev.kind != only)
            continue;
        if (kafka != NULL) {
            strbuf_reset(&b);
            put_event(&b, &ev);
            rc = nexmark_kafka_send(kafka, k, ev.date_time_ms, b.data, b.len);
            continue;
        }
        put_event(&b, &ev);
        strbuf_putc(&b, '\n');
        if (b.len >= 1 << 16) {
            rc = fwrite(b.data, 1, b.len, stdout) == b.len ? 0 : -1;
            strbuf_reset(&b);
        }
    }
    if (kafka != NULL) {
        if (nexmark_kafka_close(kafka) < 0)
            rc = -1;
    } else if (rc == 0 && fwrite(b.data, 1, b.len, stdout) != b.len) {
        rc = -1;
    }
    strbuf_free(&b);
    return rc == 0 && fflush(stdout) == 0 ? 0 : 1;
}
