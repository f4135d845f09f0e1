/*
 * nexmark_gen.c -- the Nexmark events as JSON lines on stdout.
 *
 *   nexmark_gen [--events N] [--from N] [--seed N] [--base-time-ms MS]
 *               [--first-event-rate N] [--out-of-order-group-size N]
 *               [--table person|auction|bid]
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
 */
#include "sluice/nexmark.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void put_str(const char *key, const char *s)
{
    printf(",\"%s\":\"", key);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned)(unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void put_time(const char *key, int64_t ms)
{
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)secs * 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    printf(",\"%s\":\"%04d-%02d-%02d %02d:%02d:%02d.%03d\"", key, tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

static void put_int(const char *key, int64_t v)
{
    printf(",\"%s\":%" PRId64, key, v);
}

static int usage(void)
{
    fprintf(stderr, "usage: nexmark_gen [--events N] [--from N] [--seed N] [--base-time-ms MS]\n"
                    "                   [--first-event-rate N] [--out-of-order-group-size N]\n"
                    "                   [--table person|auction|bid]\n");
    return 2;
}

int main(int argc, char **argv)
{
    NexmarkConfig c;
    nexmark_config_default(&c);
    int64_t events = 1000, from = 0;
    int only = -1;
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
        else
            return usage();
    }
    NexmarkEvent ev;
    for (int64_t k = from; k < from + events; k++) {
        nexmark_event(&c, k, &ev);
        if (only >= 0 && (int)ev.kind != only)
            continue;
        printf("{\"event_type\":\"%s\"", nexmark_kind_name(ev.kind));
        switch (ev.kind) {
        case NEXMARK_PERSON:
            put_int("id", ev.id);
            put_str("name", ev.name);
            put_str("email_address", ev.email);
            put_str("credit_card", ev.credit_card);
            put_str("city", ev.city);
            put_str("state", ev.state);
            put_time("date_time", ev.date_time_ms);
            put_str("extra", ev.extra);
            break;
        case NEXMARK_AUCTION:
            put_int("id", ev.id);
            put_str("item_name", ev.item_name);
            put_str("description", ev.description);
            put_int("initial_bid", ev.initial_bid);
            put_int("reserve", ev.reserve);
            put_time("date_time", ev.date_time_ms);
            put_time("expires", ev.expires_ms);
            put_int("seller", ev.seller);
            put_int("category", ev.category);
            put_str("extra", ev.extra);
            break;
        case NEXMARK_BID:
            put_int("auction", ev.auction);
            put_int("bidder", ev.bidder);
            put_int("price", ev.price);
            put_str("channel", ev.channel);
            put_str("url", ev.url);
            put_time("date_time", ev.date_time_ms);
            put_str("extra", ev.extra);
            break;
        }
        fputs("}\n", stdout);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
