/*
 * test_nexmark.c -- unit tests of the Nexmark generator and connector
 * (src/connectors/nexmark.c): event k is a pure function of (seed, k) and
 * connector ranges split across batches give the same rows; persons,
 * auctions and bids come 1:3:46; ids, hot auctions and bidders, prices,
 * categories, states, cities, credit cards and the extra padding follow
 * the Nexmark rules; event times advance at first_event_rate; with
 * out_of_order_group_size the connector's rows follow the generator's
 * shuffled order; bad options are refused with a SQLSTATE; golden digests
 * of every field of the events and of the connector's rows (taken before
 * the generator was made faster: its values must never change);
 * nexmark_generate_cols gives the same values in the columns asked for.
 */
#include "unit.h"
#include "sluice/nexmark.h"
#include "sluice/rowcodec.h"

#include <stdio.h>

/* FNV-1a digests of the generator's output (test_golden). */
#define GOLDEN_EVENTS_1     0xbea9fa397fd46fafull
#define GOLDEN_EVENTS_7_OOO 0x95ae70377b31a54bull
#define GOLDEN_PERSON       0x5256117d2e302192ull
#define GOLDEN_AUCTION      0x1fa4f0575109cc75ull
#define GOLDEN_BID          0x5b619f6e1407ddf3ull

static CatColumn bid_cols[4] = {
    {"auction", {TYPE_INT8, -1, TYPE_UNKNOWN}, false},
    {"price", {TYPE_INT8, -1, TYPE_UNKNOWN}, false},
    {"url", {TYPE_TEXT, -1, TYPE_UNKNOWN}, false},
    {"date_time", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, false},
};
static SlType bid_types[4] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN},
                              {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}};

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
    CatColumn wrong[1] = {{"price", {TYPE_INT4, -1, TYPE_UNKNOWN}, false}};
    CatRelation r = relation("{\"connector\": \"nexmark\", \"table\": \"bid\"}", wrong, 1);
    CHECK(nexmark_open(&a, &r, &g, &err) < 0 && strcmp(err.sqlstate, "42804") == 0);
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* ---- golden digests: the values must never change ---------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s, strlen(s) + 1);
}

static uint64_t fnv_i64(uint64_t h, int64_t v)
{
    return fnv(h, &v, sizeof(v));
}

/* A digest of every field of events [0, n): nexmark_event. */
static uint64_t event_digest(const NexmarkConfig *c, int64_t n)
{
    uint64_t h = 0xCBF29CE484222325ull;
    NexmarkEvent ev;
    for (int64_t e = 0; e < n; e++) {
        nexmark_event(c, e, &ev);
        h = fnv_i64(h, ev.kind);
        h = fnv_i64(h, ev.event_id);
        h = fnv_i64(h, ev.date_time_ms);
        switch (ev.kind) {
        case NEXMARK_PERSON:
            h = fnv_i64(h, ev.id);
            h = fnv_str(fnv_str(fnv_str(h, ev.name), ev.email), ev.credit_card);
            h = fnv_str(fnv_str(h, ev.city), ev.state);
            break;
        case NEXMARK_AUCTION:
            h = fnv_i64(fnv_i64(fnv_i64(h, ev.id), ev.seller), ev.category);
            h = fnv_i64(fnv_i64(fnv_i64(h, ev.initial_bid), ev.reserve), ev.expires_ms);
            h = fnv_str(fnv_str(h, ev.item_name), ev.description);
            break;
        case NEXMARK_BID:
            h = fnv_i64(fnv_i64(fnv_i64(h, ev.auction), ev.bidder), ev.price);
            h = fnv_str(fnv_str(h, ev.channel), ev.url);
            break;
        }
        h = fnv_str(h, ev.extra);
    }
    return h;
}

/* A digest of the connector's rows [0, rows) of a table, every column. */
static uint64_t connector_digest(Arena *a, const char *options, CatColumn *cols, int ncols,
                                 int64_t rows)
{
    SlError err = {0};
    CatRelation rel = relation(options, cols, ncols);
    Nexmark *g = NULL;
    CHECK(nexmark_open(a, &rel, &g, &err) == 0, "%s", err.message);
    if (g == NULL)
        return 0;
    SlType types[10];
    for (int i = 0; i < ncols; i++)
        types[i] = cols[i].type;
    uint64_t h = 0xCBF29CE484222325ull;
    for (int64_t from = 0; from < rows; from += 1000) {
        uint32_t n = (uint32_t)SL_MIN(1000, rows - from);
        Batch *b = batch_alloc(a, types, (uint32_t)ncols, n);
        nexmark_generate(g, from, n, a, b);
        for (uint32_t i = 0; i < n; i++)
            for (int c = 0; c < ncols; c++) {
                const Vector *v = &b->cols[c];
                CHECK(!vector_is_null(v, i));
                if (types[c].id == TYPE_TEXT)
                    h = fnv(fnv_i64(h, v->v.str[i].len), v->v.str[i].ptr, v->v.str[i].len);
                else
                    h = fnv_i64(h, v->v.i64[i]);
            }
    }
    return h;
}

#define I8 {TYPE_INT8, -1, TYPE_UNKNOWN}
#define TX {TYPE_TEXT, -1, TYPE_UNKNOWN}
#define TS {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}
static CatColumn person_all[] = {
    {"id", I8, false}, {"name", TX, false}, {"email_address", TX, false},
    {"credit_card", TX, false}, {"city", TX, false}, {"state", TX, false},
    {"date_time", TS, false}, {"extra", TX, false}};
static CatColumn auction_all[] = {
    {"id", I8, false}, {"item_name", TX, false}, {"description", TX, false},
    {"initial_bid", I8, false}, {"reserve", I8, false}, {"date_time", TS, false},
    {"expires", TS, false}, {"seller", I8, false}, {"category", I8, false},
    {"extra", TX, false}};
static CatColumn bid_all[] = {
    {"auction", I8, false}, {"bidder", I8, false}, {"price", I8, false},
    {"channel", TX, false}, {"url", TX, false}, {"date_time", TS, false},
    {"extra", TX, false}};

/* The generator's values are a pure function of (seed, n), and the same as
 * when these digests were taken (tools/nexmark's oracle checks and the
 * DuckDB comparisons depend on them): any change to the generator that
 * changes a value fails here. */
static void test_golden(void)
{
    NexmarkConfig c;
    nexmark_config_default(&c);
    c.seed = 1;
    c.base_time_ms = 1767225600000LL;
    uint64_t d1 = event_digest(&c, 100000);
    c.seed = 7;
    c.out_of_order_group_size = 1000;
    uint64_t d2 = event_digest(&c, 50000);
    CHECK(d1 == GOLDEN_EVENTS_1, "%016llx", (unsigned long long)d1);
    CHECK(d2 == GOLDEN_EVENTS_7_OOO, "%016llx", (unsigned long long)d2);
    Arena a;
    arena_init(&a, 1 << 16);
    const char *opts = "{\"connector\": \"nexmark\", \"table\": \"%s\", \"seed\": 1,"
                       " \"base_time_ms\": 1767225600000, \"number_of_events\": 100000,"
                       " \"events_per_second\": 0}";
    char buf[256];
    snprintf(buf, sizeof(buf), opts, "person");
    uint64_t dp = connector_digest(&a, buf, person_all, 8, 2000);
    snprintf(buf, sizeof(buf), opts, "auction");
    uint64_t da = connector_digest(&a, buf, auction_all, 10, 6000);
    snprintf(buf, sizeof(buf), opts, "bid");
    uint64_t db = connector_digest(&a, buf, bid_all, 7, 92000);
    CHECK(dp == GOLDEN_PERSON, "%016llx", (unsigned long long)dp);
    CHECK(da == GOLDEN_AUCTION, "%016llx", (unsigned long long)da);
    CHECK(db == GOLDEN_BID, "%016llx", (unsigned long long)db);
    arena_destroy(&a);
}

/* nexmark_generate_cols: the columns asked for hold the same values as when
 * every column is generated, the others are NULL. */
static void check_need(Arena *a, const char *table, CatColumn *cols, int ncols,
                       const uint8_t *need)
{
    char opts[256];
    snprintf(opts, sizeof(opts),
             "{\"connector\": \"nexmark\", \"table\": \"%s\", \"seed\": 3,"
             " \"base_time_ms\": 1767225600000, \"number_of_events\": 50000,"
             " \"events_per_second\": 0}", table);
    SlError err = {0};
    CatRelation rel = relation(opts, cols, ncols);
    Nexmark *g = NULL;
    CHECK(nexmark_open(a, &rel, &g, &err) == 0, "%s", err.message);
    if (g == NULL)
        return;
    SlType types[10];
    for (int i = 0; i < ncols; i++)
        types[i] = cols[i].type;
    Batch *all = batch_alloc(a, types, (uint32_t)ncols, 900);
    Batch *some = batch_alloc(a, types, (uint32_t)ncols, 900);
    nexmark_generate(g, 100, 900, a, all);
    nexmark_generate_cols(g, 100, 900, need, a, some);
    CHECK(some->nrows == 900);
    for (uint32_t i = 0; i < 900; i++)
        for (int c = 0; c < ncols; c++) {
            const Vector *x = &all->cols[c], *y = &some->cols[c];
            CHECK(vector_is_null(y, i) == !need[c], "%s.%s", table, cols[c].name);
            if (!need[c])
                continue;
            if (types[c].id == TYPE_TEXT)
                CHECK(x->v.str[i].len == y->v.str[i].len &&
                      memcmp(x->v.str[i].ptr, y->v.str[i].ptr, x->v.str[i].len) == 0,
                      "%s.%s row %u", table, cols[c].name, i);
            else
                CHECK(x->v.i64[i] == y->v.i64[i], "%s.%s row %u", table, cols[c].name, i);
        }
}

static void test_generate_cols(void)
{
    Arena a;
    arena_init(&a, 1 << 16);
    /* bid: auction, price, date_time (q7-like); then the channel alone */
    check_need(&a, "bid", bid_all, 7, (const uint8_t[]){1, 0, 1, 0, 0, 1, 0});
    check_need(&a, "bid", bid_all, 7, (const uint8_t[]){0, 0, 0, 1, 0, 0, 0});
    check_need(&a, "bid", bid_all, 7, (const uint8_t[]){0, 1, 0, 0, 1, 0, 1});
    /* person: id only; the state and not the extra */
    check_need(&a, "person", person_all, 8, (const uint8_t[]){1, 0, 0, 0, 0, 0, 1, 0});
    check_need(&a, "person", person_all, 8, (const uint8_t[]){0, 1, 0, 0, 0, 1, 0, 0});
    /* auction: id, seller, category; the reserve */
    check_need(&a, "auction", auction_all, 10, (const uint8_t[]){1, 0, 0, 0, 0, 0, 0, 1, 1, 0});
    check_need(&a, "auction", auction_all, 10, (const uint8_t[]){0, 0, 0, 0, 1, 0, 0, 0, 0, 0});
    arena_destroy(&a);
}

int main(void)
{
    test_generator();
    test_connector();
    test_golden();
    test_generate_cols();
    return unit_done("test_nexmark");
}
