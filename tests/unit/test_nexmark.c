/*
 * test_nexmark.c -- unit tests of the Nexmark generator and connector
 * (src/connectors/nexmark.c): event k is a pure function of (seed, k) and
 * connector ranges split across batches give the same rows; persons,
 * auctions and bids come 1:3:46; ids, hot auctions and bidders, prices,
 * categories, states, cities, credit cards and the extra padding follow
 * the Nexmark rules; event times advance at first_event_rate; with
 * out_of_order_group_size the connector's rows follow the generator's
 * shuffled order; bad options are refused with a SQLSTATE.
 */
#include "unit.h"
#include "sluice/nexmark.h"
#include "sluice/rowcodec.h"

#include <stdio.h>

static CatColumn bid_cols[4] = {
    {"auction", {TYPE_INT8, -1}, false},
    {"price", {TYPE_INT8, -1}, false},
    {"url", {TYPE_TEXT, -1}, false},
    {"date_time", {TYPE_TIMESTAMP, -1}, false},
};
static SlType bid_types[4] = {{TYPE_INT8, -1}, {TYPE_INT8, -1}, {TYPE_TEXT, -1},
                              {TYPE_TIMESTAMP, -1}};

static CatRelation relation(const char *options, CatColumn *cols, int ncols)
{
    CatRelation r;
    memset(&r, 0, sizeof(r));
    r.name = "bid";
    r.kind = REL_STREAM;
    r.ncols = ncols;
    r.cols = cols;
    r.options = options;
    r.created_at = 1700000000000000LL;
    return r;
}

static bool in_list(const char *s, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

static void test_generator(void)
{
    NexmarkConfig c;
    nexmark_config_default(&c);
    c.seed = 7;
    c.base_time_ms = 1767225600000LL;
    static const char *const states[] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
    static const char *const cities[] = {"Phoenix", "Los Angeles", "San Francisco", "Boise",
                                         "Portland", "Bend", "Redmond", "Seattle", "Kent",
                                         "Cheyenne"};
    int64_t count[3] = {0, 0, 0}, hot_bids = 0, hot_bidders = 0, extra_bytes[3] = {0, 0, 0};
    int64_t last_person = NEXMARK_FIRST_PERSON_ID - 1, last_auction = NEXMARK_FIRST_AUCTION_ID - 1;
    const int64_t N = 50000;
    NexmarkEvent ev, again;
    for (int64_t k = 0; k < N; k++) {
        nexmark_event(&c, k, &ev);
        count[ev.kind]++;
        CHECK(ev.event_id == k);
        CHECK(ev.date_time_ms == c.base_time_ms + k / 10, "event %lld", (long long)k);
        extra_bytes[ev.kind] += (int64_t)strlen(ev.extra);
        if (k % 997 == 0) {      /* the same event again, from scratch */
            static NexmarkEvent x, y;    /* every field compared */
            memset(&x, 0, sizeof(x));
            memset(&y, 0, sizeof(y));
            nexmark_event(&c, k, &x);
            NexmarkEvent other;
            nexmark_event(&c, k + 1, &other);   /* no state carried over */
            nexmark_event(&c, k, &y);
            CHECK(memcmp(&x, &y, sizeof(x)) == 0 && x.kind == ev.kind &&
                  strcmp(x.extra, ev.extra) == 0, "event %lld", (long long)k);
        }
        switch (ev.kind) {
        case NEXMARK_PERSON:
            CHECK(ev.id == last_person + 1);
            last_person = ev.id;
            CHECK(in_list(ev.state, states, 6) && in_list(ev.city, cities, 10));
            CHECK(strlen(ev.credit_card) == 19 && ev.credit_card[4] == ' ');
            CHECK(strchr(ev.email, '@') != NULL && strstr(ev.email, ".com") != NULL);
            CHECK(strchr(ev.name, ' ') != NULL);
            break;
        case NEXMARK_AUCTION:
            CHECK(ev.id == last_auction + 1);
            last_auction = ev.id;
            CHECK(ev.category >= 10 && ev.category < 15);
            CHECK(ev.initial_bid >= 100 && ev.initial_bid <= 100000000);
            CHECK(ev.reserve > ev.initial_bid);
            CHECK(ev.expires_ms > ev.date_time_ms);
            CHECK(ev.seller >= NEXMARK_FIRST_PERSON_ID && ev.seller <= last_person + 10);
            break;
        case NEXMARK_BID:
            CHECK(ev.auction >= NEXMARK_FIRST_AUCTION_ID && ev.auction <= last_auction + 10);
            CHECK(ev.bidder >= NEXMARK_FIRST_PERSON_ID && ev.bidder <= last_person + 10);
            CHECK(ev.price >= 100 && ev.price <= 100000000);
            CHECK(strncmp(ev.url, "https://www.nexmark.com/", 24) == 0);
            hot_bids += (ev.auction - NEXMARK_FIRST_AUCTION_ID) % 100 == 0;
            hot_bidders += (ev.bidder - NEXMARK_FIRST_PERSON_ID) % 100 == 1;
            break;
        }
    }
    /* 1:3:46 exactly, per 50 events */
    CHECK(count[NEXMARK_PERSON] == N / 50 && count[NEXMARK_AUCTION] == 3 * N / 50 &&
          count[NEXMARK_BID] == 46 * N / 50);
    for (int kind = 0; kind < 3; kind++)
        CHECK(nexmark_kind_count((NexmarkKind)kind, N) == count[kind]);
    CHECK(nexmark_kind_count(NEXMARK_BID, 5) == 1 && nexmark_kind_count(NEXMARK_AUCTION, 2) == 1);
    CHECK(nexmark_kind_event(NEXMARK_BID, 46) == 54 && nexmark_kind_event(NEXMARK_AUCTION, 4) == 52);
    /* half the bids go to a hot auction (1 in 100 ids), 3/4 from a hot bidder */
    double hot = (double)hot_bids / (double)count[NEXMARK_BID];
    double hotb = (double)hot_bidders / (double)count[NEXMARK_BID];
    CHECK(hot > 0.48 && hot < 0.54, "hot auction share %f", hot);
    CHECK(hotb > 0.73 && hotb < 0.78, "hot bidder share %f", hotb);
    /* extra pads a bid to 100 bytes on average (32 + extra), +-20% */
    double bid_extra = (double)extra_bytes[NEXMARK_BID] / (double)count[NEXMARK_BID];
    CHECK(bid_extra > 64 && bid_extra < 72, "bid extra %f", bid_extra);
    double auction_extra = (double)extra_bytes[NEXMARK_AUCTION] / (double)count[NEXMARK_AUCTION];
    CHECK(auction_extra > 300 && auction_extra < 440, "auction extra %f", auction_extra);
    /* another seed: other values, same ids */
    NexmarkConfig c2 = c;
    c2.seed = 8;
    int differ = 0;
    for (int64_t k = 4; k < 50; k++) {
        nexmark_event(&c, k, &ev);
        nexmark_event(&c2, k, &again);
        differ += ev.price != again.price;
    }
    CHECK(differ > 40);
    /* out of order within groups: ids a permutation of each group */
    c2.out_of_order_group_size = 100;
    int64_t sum = 0;
    for (int64_t k = 0; k < 100; k++) {
        nexmark_event(&c2, k, &ev);
        CHECK(ev.event_id >= 0 && ev.event_id < 100);
        sum += ev.event_id;
    }
    CHECK(sum == 99 * 100 / 2);
}

static void test_connector(void)
{
    Arena a;
    arena_init(&a, 1 << 16);
    SlError err = {0};
    CatRelation rel = relation("{\"connector\": \"nexmark\", \"table\": \"bid\", \"seed\": 7,"
                               " \"base_time_ms\": 1767225600000, \"number_of_events\": 5000,"
                               " \"events_per_second\": 0}", bid_cols, 4);
    Nexmark *g = NULL;
    CHECK(nexmark_open(&a, &rel, &g, &err) == 0, "%s", err.message);
    if (g == NULL)
        return;
    CHECK(nexmark_available(g, 0) == 4600);
    Batch *whole = batch_alloc(&a, bid_types, 4, 4600);
    nexmark_generate(g, 0, 4600, &a, whole);
    NexmarkConfig c;
    nexmark_config_default(&c);
    c.seed = 7;
    c.base_time_ms = 1767225600000LL;
    NexmarkEvent ev;
    for (int64_t from = 0; from < 4600;) {
        uint32_t n = (uint32_t)SL_MIN(4600 - from, 1 + (from * 7) % 333);
        Batch *part = batch_alloc(&a, bid_types, 4, n);
        nexmark_generate(g, from, n, &a, part);
        for (uint32_t i = 0; i < n; i++) {
            int64_t k = from + i;
            CHECK(part->cols[0].v.i64[i] == whole->cols[0].v.i64[k]);
            CHECK(part->cols[1].v.i64[i] == whole->cols[1].v.i64[k]);
            CHECK(part->cols[2].v.str[i].len == whole->cols[2].v.str[k].len &&
                  memcmp(part->cols[2].v.str[i].ptr, whole->cols[2].v.str[k].ptr,
                         part->cols[2].v.str[i].len) == 0);
            nexmark_event(&c, nexmark_kind_event(NEXMARK_BID, k), &ev);
            CHECK(ev.kind == NEXMARK_BID && ev.auction == part->cols[0].v.i64[i] &&
                  ev.price == part->cols[1].v.i64[i]);
            CHECK(part->cols[3].v.i64[i] == ev.date_time_ms * 1000 - 946684800000000LL);
        }
        from += n;
    }
    /* out of order in groups of 500 events: the table's rows are its events
     * in the order the generator emits them, event times out of order */
    CatRelation ooo = relation("{\"connector\": \"nexmark\", \"table\": \"bid\", \"seed\": 7,"
                               " \"base_time_ms\": 1767225600000, \"number_of_events\": 5321,"
                               " \"events_per_second\": 0, \"out_of_order_group_size\": 500}",
                               bid_cols, 4);
    CHECK(nexmark_open(&a, &ooo, &g, &err) == 0, "%s", err.message);
    c.out_of_order_group_size = 500;
    int64_t want_rows = 0, k = 0, backwards = 0;
    Batch *row = batch_alloc(&a, bid_types, 4, 1);
    Batch *run = batch_alloc(&a, bid_types, 4, 777);
    nexmark_generate(g, 1000, 777, &a, run);
    for (int64_t e = 0; e < 5321; e++) {
        nexmark_event(&c, e, &ev);
        if (ev.kind != NEXMARK_BID)
            continue;
        want_rows++;
        if (k % 37 == 0 || (k >= 1000 && k < 1777)) {
            nexmark_generate(g, k, 1, &a, row);
            CHECK(row->cols[1].v.i64[0] == ev.price && row->cols[0].v.i64[0] == ev.auction,
                  "row %lld", (long long)k);
            if (k >= 1000 && k < 1777)
                CHECK(run->cols[1].v.i64[k - 1000] == ev.price &&
                      run->cols[3].v.i64[k - 1000] == row->cols[3].v.i64[0]);
            if (k >= 1001 && k < 1777)
                backwards += run->cols[3].v.i64[k - 1000] < run->cols[3].v.i64[k - 1001];
        }
        k++;
    }
    CHECK(nexmark_available(g, 0) == want_rows, "%lld rows", (long long)nexmark_available(g, 0));
    CHECK(backwards > 0);
    c.out_of_order_group_size = 1;
    /* at events_per_second, rows appear with the wall clock */
    CatRelation paced = relation("{\"connector\": \"nexmark\", \"table\": \"bid\","
                                 " \"events_per_second\": 100}", bid_cols, 4);
    CHECK(nexmark_open(&a, &paced, &g, &err) == 0);
    CHECK(nexmark_available(g, paced.created_at) == 0);
    CHECK(nexmark_available(g, paced.created_at + 10000000) == 920);
    /* refused */
    static const char *const bad[] = {
        "{\"connector\": \"nexmark\"}",
        "{\"connector\": \"nexmark\", \"table\": \"bids\"}",
        "{\"connector\": \"nexmark\", \"table\": \"bid\", \"events_per_second\": 0}",
        "{\"connector\": \"nexmark\", \"table\": \"bid\", \"first_event_rate\": 0}",
        "{\"connector\": \"nexmark\", \"table\": \"bid\", \"seed\": \"x\"}",
        "{\"connector\": \"nexmark\", \"table\": \"person\"}",    /* auction is no person field */
        "{\"connector\": \"nexmark\", \"table\": \"bid\", \"out_of_order_group_size\": 30}",
        "{\"connector\": \"nexmark\", \"table\": \"bid\", \"out_of_order_group_size\": 0}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CatRelation r = relation(bad[i], bid_cols, 4);
        CHECK(nexmark_open(&a, &r, &g, &err) < 0, "%s", bad[i]);
        CHECK(err.sqlstate[0] != '\0' && strcmp(err.sqlstate, "XX000") != 0, "%s", bad[i]);
        sl_error_clear(&err);
    }
    CatColumn wrong[1] = {{"price", {TYPE_INT4, -1}, false}};
    CatRelation r = relation("{\"connector\": \"nexmark\", \"table\": \"bid\"}", wrong, 1);
    CHECK(nexmark_open(&a, &r, &g, &err) < 0 && strcmp(err.sqlstate, "42804") == 0);
    sl_error_clear(&err);
    arena_destroy(&a);
}

int main(void)
{
    test_generator();
    test_connector();
    return unit_done("test_nexmark");
}
