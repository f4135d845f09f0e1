/*
 * nexmark.c -- the Nexmark event generator and connector (see nexmark.h).
 *
 *   nexmark_config_default, nexmark_event, nexmark_kind_of,
 *   nexmark_kind_count, nexmark_kind_event, nexmark_kind_name
 *   nexmark_open, nexmark_available, nexmark_generate, nexmark_generate_cols
 *
 * Our own code after the rules of the nexmark/nexmark generator: ids from
 * the event id (lastBase0PersonId / lastBase0AuctionId), hot auctions,
 * sellers and bidders, prices 10^(6u) cents, auction lengths within twice
 * the time the in-flight auctions take, and the extra field padding each
 * event to its average size (+-20%).  The random numbers come from a
 * splitmix64 stream seeded by (seed, event id) instead of Java's
 * SplittableRandom, so the values are not those of the Java generator but
 * follow the same distributions.
 *
 * Speed (docs/benchmarks.md, "Nexmark"): the connector draws an event's
 * fields only as far as the last column the query reads (the draws are one
 * sequence, so a later field needs the earlier draws, never their text);
 * the channels' names and URLs, a pure function of the channel, are
 * formatted once per process; no printf per event.  The values are the same
 * as when every field is drawn (tests/unit/test_nexmark.c: golden digests).
 */
#include "sluice/nexmark.h"
#include "sluice/options.h"
#include "sluice/strbuf.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>


#define PERSON_PROPORTION  1
#define AUCTION_PROPORTION 3
#define BID_PROPORTION     46
#define PROPORTION_DENOM   (PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION)
#define PERSON_ID_LEAD     10
#define AUCTION_ID_LEAD    10
#define HOT_AUCTION_RATIO  100
#define HOT_SELLER_RATIO   100
#define HOT_BIDDER_RATIO   100
#define HOT_CHANNELS_RATIO 2
#define CHANNELS_NUMBER    10000

static const char *const US_STATES[] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
static const char *const US_CITIES[] = {"Phoenix", "Los Angeles", "San Francisco", "Boise",
                                        "Portland", "Bend", "Redmond", "Seattle", "Kent",
                                        "Cheyenne"};
static const char *const FIRST_NAMES[] = {"Peter", "Paul", "Luke", "John", "Saul", "Vicky",
                                          "Kate", "Julie", "Sarah", "Deiter", "Walter"};
static const char *const LAST_NAMES[] = {"Shultz", "Abrams", "Spencer", "White", "Bartels",
                                         "Walton", "Smith", "Jones", "Noris"};
static const char *const HOT_CHANNELS[] = {"Google", "Facebook", "Baidu", "Apple"};

#define NELEM(x) ((int64_t)(sizeof(x) / sizeof((x)[0])))

/* The fields of the three tables; a want mask has bit (1 << field) for each
 * field to produce. */
typedef enum Field {
    F_ID, F_NAME, F_EMAIL, F_CREDIT_CARD, F_CITY, F_STATE, F_DATE_TIME, F_EXTRA,
    F_ITEM_NAME, F_DESCRIPTION, F_INITIAL_BID, F_RESERVE, F_EXPIRES, F_SELLER, F_CATEGORY,
    F_AUCTION, F_BIDDER, F_PRICE, F_CHANNEL, F_URL
} Field;

#define W(f)     (1u << (f))
#define WANT_ALL 0xFFFFFFFFu
/* Returns from a gen_* once no field from here on is wanted. */
#define UNLESS_WANTED(mask) \
    do {                    \
        if (!(want & (mask))) \
            return;         \
    } while (0)

/* ---- random numbers: splitmix64 ---------------------------------------- */

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng_next(Rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    return mix64(r->s);
}

/* Uniform in [0, bound), bound > 0 (bias below 2^-40 for our bounds). */
static int64_t rng_below(Rng *r, int64_t bound)
{
    return (int64_t)(rng_next(r) % (uint64_t)bound);
}

static double rng_double(Rng *r)
{
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static Rng rng_for(uint64_t seed, int64_t id, uint64_t stream)
{
    Rng r = {mix64(seed * 0x9E3779B97F4A7C15ull + stream) ^ mix64((uint64_t)id + 0x5851F42D4C957F2Dull)};
    return r;
}

/* ---- strings (StringsGenerator) ---------------------------------------- */

/* 3..max_len-1 characters, a-z with 1 in 13 `special`, trimmed. */
static void next_string(Rng *r, int max_len, char special, char *out)
{
    int len = 3 + (int)rng_below(r, max_len - 3);
    int n = 0;
    for (int i = 0; i < len; i++)
        out[n++] = rng_below(r, 13) == 0 ? special : (char)('a' + rng_below(r, 26));
    out[n] = '\0';
    if (special == ' ') {               /* Java's trim() */
        int s = 0;
        while (s < n && out[s] == ' ')
            s++;
        while (n > s && out[n - 1] == ' ')
            n--;
        memmove(out, out + s, (size_t)(n - s));
        out[n - s] = '\0';
    }
}

static void next_exact_string(Rng *r, int len, char *out)
{
    for (int i = 0; i < len; i++)
        out[i] = (char)('a' + rng_below(r, 26));
    out[len] = '\0';
}

/* Padding to desired_avg +- 20% over current_size (nextExtra). */
static void next_extra(Rng *r, int64_t current_size, int64_t desired_avg, char *out, size_t cap)
{
    out[0] = '\0';
    if (current_size > desired_avg)
        return;
    int64_t desired = desired_avg - current_size;
    int64_t delta = llround((double)desired * 0.2);
    int64_t size = desired - delta + (delta == 0 ? 0 : rng_below(r, 2 * delta));
    if (size > (int64_t)cap - 1)
        size = (int64_t)cap - 1;
    next_exact_string(r, (int)size, out);
}

static int64_t next_price(Rng *r)
{
    return llround(pow(10.0, rng_double(r) * 6.0) * 100.0);
}

/* "https://www.nexmark.com/xxx/yyy/zzz/item.htm?query=1" */
static int base_url(Rng *r, char *out, size_t cap)
{
    char a[8], b[8], c[8];
    next_string(r, 5, '_', a);
    next_string(r, 5, '_', b);
    next_string(r, 5, '_', c);
    return snprintf(out, cap, "https://www.nexmark.com/%s/%s/%s/item.htm?query=1", a, b, c);
}

/* A channel's name and URL depend on the channel alone: the 4 hot channels
 * (entries 0..3) and channels 0..9999 (entries 4..) are formatted once per
 * process, by the rules below, and copied from here. */
typedef struct Channel {
    uint8_t name_len, url_len;
    char    name[22];
    char    url[104];
} Channel;

static Channel        *channels;
static pthread_once_t  channels_once = PTHREAD_ONCE_INIT;

static void channels_init(void)
{
    channels = sl_calloc(NELEM(HOT_CHANNELS) + CHANNELS_NUMBER, sizeof(Channel));
    for (int64_t i = 0; i < NELEM(HOT_CHANNELS) + CHANNELS_NUMBER; i++) {
        Channel *ch = &channels[i];
        char url[112];
        int len;
        if (i < NELEM(HOT_CHANNELS)) {
            snprintf(ch->name, sizeof(ch->name), "%s", HOT_CHANNELS[i]);
            Rng ur = rng_for(0, i, 1);
            len = base_url(&ur, url, sizeof(url));
        } else {
            int64_t c = i - NELEM(HOT_CHANNELS);
            snprintf(ch->name, sizeof(ch->name), "channel-%lld", (long long)c);
            Rng ur = rng_for(0, c, 2);
            len = base_url(&ur, url, sizeof(url));
            if (rng_below(&ur, 10) > 0) {   /* 9 channels in 10 name their id */
                uint32_t rev = 0, v = (uint32_t)c;
                for (int b = 0; b < 32; b++, v >>= 1)
                    rev = (rev << 1) | (v & 1);
                int32_t srev = (int32_t)rev;
                len += snprintf(url + len, sizeof(url) - (size_t)len, "&channel_id=%lld",
                                llabs((long long)srev));
            }
        }
        ch->name_len = (uint8_t)strlen(ch->name);
        ch->url_len = (uint8_t)SL_MIN(len, (int)sizeof(ch->url) - 1);
        memcpy(ch->url, url, ch->url_len);
    }
}

/* a..z decimal: the 4 digits of d (0..9999), zero-padded, then NUL. */
static char *put_4digits(char *p, int d)
{
    p[0] = (char)('0' + d / 1000);
    p[1] = (char)('0' + d / 100 % 10);
    p[2] = (char)('0' + d / 10 % 10);
    p[3] = (char)('0' + d % 10);
    return p + 4;
}

static char *put_cstr(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* ---- ids (GeneratorConfig, PersonGenerator, AuctionGenerator) ----------- */

static int64_t last_base0_person_id(int64_t e)
{
    int64_t epoch = e / PROPORTION_DENOM, off = e % PROPORTION_DENOM;
    if (off >= PERSON_PROPORTION)
        off = PERSON_PROPORTION - 1;
    return epoch * PERSON_PROPORTION + off;
}

static int64_t last_base0_auction_id(int64_t e)
{
    int64_t epoch = e / PROPORTION_DENOM, off = e % PROPORTION_DENOM;
    if (off < PERSON_PROPORTION) {
        epoch--;
        off = AUCTION_PROPORTION - 1;
    } else if (off >= PERSON_PROPORTION + AUCTION_PROPORTION) {
        off = AUCTION_PROPORTION - 1;
    } else {
        off -= PERSON_PROPORTION;
    }
    return epoch * AUCTION_PROPORTION + off;
}

static int64_t next_base0_person_id(const NexmarkConfig *c, int64_t e, Rng *r)
{
    int64_t num_people = last_base0_person_id(e) + 1;
    int64_t active = SL_MIN(num_people, c->num_active_people);
    return num_people - active + rng_below(r, active + PERSON_ID_LEAD);
}

static int64_t next_base0_auction_id(const NexmarkConfig *c, int64_t e, Rng *r)
{
    int64_t max_a = last_base0_auction_id(e);
    int64_t min_a = SL_MAX(max_a - c->num_in_flight_auctions, 0);
    return min_a + rng_below(r, max_a - min_a + 1 + AUCTION_ID_LEAD);
}

static int64_t timestamp_for_event(const NexmarkConfig *c, int64_t n)
{
    return c->base_time_ms + (n * 1000000 / c->first_event_rate) / 1000;
}

static int64_t adjusted_event_number(const NexmarkConfig *c, int64_t n)
{
    int64_t g = c->out_of_order_group_size;
    if (g <= 1)
        return n;
    return (n / g) * g + (int64_t)(((uint64_t)n * 953u) % (uint64_t)g);
}

/* ---- the generator ------------------------------------------------------ */

void nexmark_config_default(NexmarkConfig *c)
{
    memset(c, 0, sizeof(*c));
    c->base_time_ms = 0;
    c->first_event_rate = 10000;
    c->num_active_people = 1000;
    c->num_in_flight_auctions = 100;
    c->hot_auction_ratio = 2;
    c->hot_sellers_ratio = 4;
    c->hot_bidders_ratio = 4;
    c->avg_person_bytes = 200;
    c->avg_auction_bytes = 500;
    c->avg_bid_bytes = 100;
    c->out_of_order_group_size = 1;
}

NexmarkKind nexmark_kind_of(int64_t event_id)
{
    int64_t rem = event_id % PROPORTION_DENOM;
    if (rem < PERSON_PROPORTION)
        return NEXMARK_PERSON;
    if (rem < PERSON_PROPORTION + AUCTION_PROPORTION)
        return NEXMARK_AUCTION;
    return NEXMARK_BID;
}

const char *nexmark_kind_name(NexmarkKind kind)
{
    return kind == NEXMARK_PERSON ? "person" : kind == NEXMARK_AUCTION ? "auction" : "bid";
}

int64_t nexmark_kind_count(NexmarkKind kind, int64_t n)
{
    int64_t epochs = n / PROPORTION_DENOM, rem = n % PROPORTION_DENOM;
    switch (kind) {
    case NEXMARK_PERSON:
        return epochs * PERSON_PROPORTION + SL_MIN(rem, PERSON_PROPORTION);
    case NEXMARK_AUCTION:
        return epochs * AUCTION_PROPORTION +
               SL_MIN(SL_MAX(rem - PERSON_PROPORTION, 0), AUCTION_PROPORTION);
    default:
        return epochs * BID_PROPORTION +
               SL_MAX(rem - PERSON_PROPORTION - AUCTION_PROPORTION, 0);
    }
}

int64_t nexmark_kind_event(NexmarkKind kind, int64_t k)
{
    switch (kind) {
    case NEXMARK_PERSON:
        return (k / PERSON_PROPORTION) * PROPORTION_DENOM + k % PERSON_PROPORTION;
    case NEXMARK_AUCTION:
        return (k / AUCTION_PROPORTION) * PROPORTION_DENOM + PERSON_PROPORTION +
               k % AUCTION_PROPORTION;
    default:
        return (k / BID_PROPORTION) * PROPORTION_DENOM + PERSON_PROPORTION +
               AUCTION_PROPORTION + k % BID_PROPORTION;
    }
}

static void gen_person(const NexmarkConfig *c, int64_t e, Rng *r, NexmarkEvent *ev,
                       uint32_t want)
{
    ev->id = last_base0_person_id(e) + NEXMARK_FIRST_PERSON_ID;
    UNLESS_WANTED(W(F_NAME) | W(F_EMAIL) | W(F_CREDIT_CARD) | W(F_CITY) | W(F_STATE) |
                  W(F_EXTRA));
    /* "%s %s", "%s@%s.com", "%04d %04d %04d %04d", by hand.  The last name
     * is drawn first: the values were fixed by a snprintf whose arguments
     * gcc evaluated right to left. */
    const char *last = LAST_NAMES[rng_below(r, NELEM(LAST_NAMES))];
    const char *first = FIRST_NAMES[rng_below(r, NELEM(FIRST_NAMES))];
    char *q = put_cstr(ev->name, first);
    *q++ = ' ';
    *put_cstr(q, last) = '\0';
    UNLESS_WANTED(W(F_EMAIL) | W(F_CREDIT_CARD) | W(F_CITY) | W(F_STATE) | W(F_EXTRA));
    char user[8], host[8];
    next_string(r, 7, ' ', user);
    next_string(r, 5, ' ', host);
    q = put_cstr(ev->email, user);
    *q++ = '@';
    q = put_cstr(q, host);
    memcpy(q, ".com", 5);
    UNLESS_WANTED(W(F_CREDIT_CARD) | W(F_CITY) | W(F_STATE) | W(F_EXTRA));
    q = ev->credit_card;
    for (int i = 0; i < 4; i++) {
        q = put_4digits(q, (int)rng_below(r, 10000));
        *q++ = i < 3 ? ' ' : '\0';
    }
    UNLESS_WANTED(W(F_CITY) | W(F_STATE) | W(F_EXTRA));
    ev->city = US_CITIES[rng_below(r, NELEM(US_CITIES))];
    ev->state = US_STATES[rng_below(r, NELEM(US_STATES))];
    UNLESS_WANTED(W(F_EXTRA));
    int64_t size = 8 + (int64_t)(strlen(ev->name) + strlen(ev->email) + strlen(ev->credit_card) +
                                 strlen(ev->city) + strlen(ev->state));
    next_extra(r, size, c->avg_person_bytes, ev->extra, sizeof(ev->extra));
}

static void gen_auction(const NexmarkConfig *c, int64_t n, int64_t e, Rng *r, NexmarkEvent *ev,
                        uint32_t want)
{
    ev->id = last_base0_auction_id(e) + NEXMARK_FIRST_AUCTION_ID;
    UNLESS_WANTED(W(F_SELLER) | W(F_CATEGORY) | W(F_INITIAL_BID) | W(F_EXPIRES) |
                  W(F_ITEM_NAME) | W(F_DESCRIPTION) | W(F_RESERVE) | W(F_EXTRA));
    int64_t seller;
    if (rng_below(r, c->hot_sellers_ratio) > 0)
        seller = (last_base0_person_id(e) / HOT_SELLER_RATIO) * HOT_SELLER_RATIO;
    else
        seller = next_base0_person_id(c, e, r);
    ev->seller = seller + NEXMARK_FIRST_PERSON_ID;
    UNLESS_WANTED(W(F_CATEGORY) | W(F_INITIAL_BID) | W(F_EXPIRES) | W(F_ITEM_NAME) |
                  W(F_DESCRIPTION) | W(F_RESERVE) | W(F_EXTRA));
    ev->category = NEXMARK_FIRST_CATEGORY + rng_below(r, NEXMARK_NUM_CATEGORIES);
    UNLESS_WANTED(W(F_INITIAL_BID) | W(F_EXPIRES) | W(F_ITEM_NAME) | W(F_DESCRIPTION) |
                  W(F_RESERVE) | W(F_EXTRA));
    ev->initial_bid = next_price(r);
    /* nextAuctionLengthMs: within twice the time the in-flight auctions take */
    int64_t events_for_auctions = (c->num_in_flight_auctions * PROPORTION_DENOM) / AUCTION_PROPORTION;
    int64_t future = timestamp_for_event(c, adjusted_event_number(c, n) + events_for_auctions);
    int64_t horizon = future - ev->date_time_ms;
    ev->expires_ms = ev->date_time_ms + 1 + rng_below(r, SL_MAX(horizon * 2, 1));
    UNLESS_WANTED(W(F_ITEM_NAME) | W(F_DESCRIPTION) | W(F_RESERVE) | W(F_EXTRA));
    next_string(r, 20, ' ', ev->item_name);
    next_string(r, 100, ' ', ev->description);
    ev->reserve = ev->initial_bid + next_price(r);
    UNLESS_WANTED(W(F_EXTRA));
    int64_t size = 8 + (int64_t)(strlen(ev->item_name) + strlen(ev->description)) + 8 * 5;
    next_extra(r, size, c->avg_auction_bytes, ev->extra, sizeof(ev->extra));
}

static void gen_bid(const NexmarkConfig *c, int64_t e, Rng *r, NexmarkEvent *ev, uint32_t want)
{
    UNLESS_WANTED(W(F_AUCTION) | W(F_BIDDER) | W(F_PRICE) | W(F_CHANNEL) | W(F_URL) |
                  W(F_EXTRA));
    int64_t auction, bidder;
    if (rng_below(r, c->hot_auction_ratio) > 0)
        auction = (last_base0_auction_id(e) / HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO;
    else
        auction = next_base0_auction_id(c, e, r);
    ev->auction = auction + NEXMARK_FIRST_AUCTION_ID;
    UNLESS_WANTED(W(F_BIDDER) | W(F_PRICE) | W(F_CHANNEL) | W(F_URL) | W(F_EXTRA));
    if (rng_below(r, c->hot_bidders_ratio) > 0)
        bidder = (last_base0_person_id(e) / HOT_BIDDER_RATIO) * HOT_BIDDER_RATIO + 1;
    else
        bidder = next_base0_person_id(c, e, r);
    ev->bidder = bidder + NEXMARK_FIRST_PERSON_ID;
    UNLESS_WANTED(W(F_PRICE) | W(F_CHANNEL) | W(F_URL) | W(F_EXTRA));
    ev->price = next_price(r);
    UNLESS_WANTED(W(F_CHANNEL) | W(F_URL) | W(F_EXTRA));
    /* The channel: 1 in 2 bids a hot one; its name and URL come from the
     * table (the URL is drawn from the channel's own stream, not r). */
    int64_t ch = rng_below(r, HOT_CHANNELS_RATIO) > 0
                     ? rng_below(r, NELEM(HOT_CHANNELS))
                     : NELEM(HOT_CHANNELS) + rng_below(r, CHANNELS_NUMBER);
    if (want & (W(F_CHANNEL) | W(F_URL))) {
        pthread_once(&channels_once, channels_init);
        const Channel *t = &channels[ch];
        memcpy(ev->channel, t->name, t->name_len);
        ev->channel[t->name_len] = '\0';
        memcpy(ev->url, t->url, t->url_len);
        ev->url[t->url_len] = '\0';
    }
    UNLESS_WANTED(W(F_EXTRA));
    next_extra(r, 32, c->avg_bid_bytes, ev->extra, sizeof(ev->extra));
}

/* Event n, the fields in want (and the kind, id, event time) set. */
static void event_want(const NexmarkConfig *c, int64_t n, NexmarkEvent *ev, uint32_t want)
{
    int64_t e = adjusted_event_number(c, n);
    ev->event_id = e;
    ev->kind = nexmark_kind_of(e);
    ev->date_time_ms = timestamp_for_event(c, e);
    Rng r = rng_for(c->seed, e, 0);
    switch (ev->kind) {
    case NEXMARK_PERSON: gen_person(c, e, &r, ev, want); break;
    case NEXMARK_AUCTION: gen_auction(c, n, e, &r, ev, want); break;
    case NEXMARK_BID: gen_bid(c, e, &r, ev, want); break;
    }
}

void nexmark_event(const NexmarkConfig *c, int64_t n, NexmarkEvent *ev)
{
    event_want(c, n, ev, WANT_ALL);
}

/* ---- the connector ------------------------------------------------------ */


typedef struct FieldDef {
    const char *name;
    Field       f;
    char        cls;        /* 'i' bigint, 's' text, 't' timestamp */
} FieldDef;

static const FieldDef PERSON_FIELDS[] = {
    {"id", F_ID, 'i'}, {"name", F_NAME, 's'}, {"email_address", F_EMAIL, 's'},
    {"credit_card", F_CREDIT_CARD, 's'}, {"city", F_CITY, 's'}, {"state", F_STATE, 's'},
    {"date_time", F_DATE_TIME, 't'}, {"extra", F_EXTRA, 's'}, {NULL, F_ID, 0}};
static const FieldDef AUCTION_FIELDS[] = {
    {"id", F_ID, 'i'}, {"item_name", F_ITEM_NAME, 's'}, {"description", F_DESCRIPTION, 's'},
    {"initial_bid", F_INITIAL_BID, 'i'}, {"reserve", F_RESERVE, 'i'},
    {"date_time", F_DATE_TIME, 't'}, {"expires", F_EXPIRES, 't'}, {"seller", F_SELLER, 'i'},
    {"category", F_CATEGORY, 'i'}, {"extra", F_EXTRA, 's'}, {NULL, F_ID, 0}};
static const FieldDef BID_FIELDS[] = {
    {"auction", F_AUCTION, 'i'}, {"bidder", F_BIDDER, 'i'}, {"price", F_PRICE, 'i'},
    {"channel", F_CHANNEL, 's'}, {"url", F_URL, 's'}, {"date_time", F_DATE_TIME, 't'},
    {"extra", F_EXTRA, 's'}, {NULL, F_ID, 0}};

struct Nexmark {
    NexmarkConfig cfg;
    NexmarkKind   kind;
    double        events_per_second;   /* 0: all at once */
    int64_t       number_of_events;    /* -1: unbounded */
    int64_t       start_wall_us;
    int           ncols;
    Field        *fields;
    uint32_t      want;                /* the declared columns' fields */
};

static int opt_positive(const Options *o, const char *key, int64_t def, int64_t *out,
                        SlError *err)
{
    if (opts_get_int(o, key, def, out, err) < 0)
        return -1;
    if (*out <= 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "%s must be greater than zero", key);
    return 0;
}

int nexmark_open(Arena *a, const CatRelation *rel, Nexmark **out, SlError *err)
{
    Options o;
    if (opts_parse(a, rel->options, &o, err) < 0)
        return -1;
    Nexmark *g = ARENA_NEW(a, Nexmark);
    NexmarkConfig *c = &g->cfg;
    nexmark_config_default(c);
    const char *table = opts_get(&o, "table");
    const FieldDef *defs;
    if (table == NULL)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "a nexmark stream needs the option table = 'person', 'auction' or 'bid'");
    if (strcmp(table, "person") == 0) {
        g->kind = NEXMARK_PERSON;
        defs = PERSON_FIELDS;
    } else if (strcmp(table, "auction") == 0) {
        g->kind = NEXMARK_AUCTION;
        defs = AUCTION_FIELDS;
    } else if (strcmp(table, "bid") == 0) {
        g->kind = NEXMARK_BID;
        defs = BID_FIELDS;
    } else {
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "invalid value for option \"table\": \"%s\" (person, auction or bid)",
                        table);
    }
    int64_t seed;
    if (opts_get_int(&o, "seed", 0, &seed, err) < 0 ||
        opts_get_int(&o, "base_time_ms", rel->created_at / 1000, &c->base_time_ms, err) < 0 ||
        opt_positive(&o, "first_event_rate", 10000, &c->first_event_rate, err) < 0 ||
        opt_positive(&o, "num_active_people", 1000, &c->num_active_people, err) < 0 ||
        opt_positive(&o, "num_in_flight_auctions", 100, &c->num_in_flight_auctions, err) < 0 ||
        opt_positive(&o, "hot_auction_ratio", 2, &c->hot_auction_ratio, err) < 0 ||
        opt_positive(&o, "hot_sellers_ratio", 4, &c->hot_sellers_ratio, err) < 0 ||
        opt_positive(&o, "hot_bidders_ratio", 4, &c->hot_bidders_ratio, err) < 0 ||
        opts_get_int(&o, "avg_person_bytes", 200, &c->avg_person_bytes, err) < 0 ||
        opts_get_int(&o, "avg_auction_bytes", 500, &c->avg_auction_bytes, err) < 0 ||
        opts_get_int(&o, "avg_bid_bytes", 100, &c->avg_bid_bytes, err) < 0 ||
        opts_get_int(&o, "number_of_events", -1, &g->number_of_events, err) < 0 ||
        opts_get_double(&o, "events_per_second", (double)c->first_event_rate,
                        &g->events_per_second, err) < 0)
        return -1;
    c->seed = (uint64_t)seed;
    if (opts_get_int(&o, "out_of_order_group_size", 1, &c->out_of_order_group_size, err) < 0)
        return -1;
    if (c->out_of_order_group_size != 1 &&
        (c->out_of_order_group_size <= 0 || c->out_of_order_group_size > 1000000 ||
         c->out_of_order_group_size % PROPORTION_DENOM != 0 ||
         c->out_of_order_group_size % 953 == 0))
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "out_of_order_group_size must be 1 or a multiple of %d up to 1000000 "
                        "(and not of 953)", PROPORTION_DENOM);
    if (g->events_per_second < 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "events_per_second must not be negative");
    if (g->events_per_second == 0 && g->number_of_events < 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "events_per_second = 0 (as fast as possible) needs number_of_events");
    if (c->first_event_rate > 1000000)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "first_event_rate must be at most 1000000");
    g->start_wall_us = rel->created_at;
    g->ncols = rel->ncols;
    g->fields = ARENA_ARRAY(a, Field, rel->ncols ? rel->ncols : 1);
    for (int i = 0; i < rel->ncols; i++) {
        const char *name = rel->cols[i].name;
        SlTypeId t = rel->cols[i].type.id;
        const FieldDef *d = defs;
        while (d->name != NULL && strcmp(d->name, name) != 0)
            d++;
        if (d->name == NULL) {
            sl_error(err, ERRCODE_UNDEFINED_COLUMN,
                     "column \"%s\" is not a field of the nexmark table \"%s\"", name, table);
            StrBuf hint;
            strbuf_init(&hint);
            for (const FieldDef *f = defs; f->name; f++)
                strbuf_printf(&hint, "%s%s", f == defs ? "" : ", ", f->name);
            sl_error_hint(err, "The fields of \"%s\": %s.", table, hint.data);
            strbuf_free(&hint);
            return -1;
        }
        bool ok = d->cls == 'i' ? t == TYPE_INT8
                  : d->cls == 's' ? (t == TYPE_TEXT || t == TYPE_VARCHAR)
                  : (t == TYPE_TIMESTAMP || t == TYPE_TIMESTAMPTZ);
        if (!ok)
            return sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                            "column \"%s\" of a nexmark stream must be of type %s, not %s", name,
                            d->cls == 'i' ? "bigint" : d->cls == 's' ? "text" : "timestamp",
                            type_name(t));
        g->fields[i] = d->f;
        g->want |= W(d->f);
    }
    *out = g;
    return 0;
}

/* Rows of the stream's table among the first `events` events. */
static int64_t rows_of_events(const Nexmark *g, int64_t events)
{
    int64_t gs = g->cfg.out_of_order_group_size;
    if (gs == 1)
        return nexmark_kind_count(g->kind, events);
    /* whole groups hold their share of each kind; the last one is counted */
    int64_t rows = nexmark_kind_count(g->kind, (events / gs) * gs);
    for (int64_t c = (events / gs) * gs; c < events; c++)
        rows += nexmark_kind_of(adjusted_event_number(&g->cfg, c)) == g->kind;
    return rows;
}

int64_t nexmark_available(const Nexmark *g, int64_t now_us)
{
    int64_t events;
    if (g->events_per_second == 0) {
        events = g->number_of_events;
    } else {
        double elapsed = (double)(now_us - g->start_wall_us) / 1e6;
        events = elapsed <= 0 ? 0 : (int64_t)floor(elapsed * g->events_per_second);
        if (g->number_of_events >= 0 && events > g->number_of_events)
            events = g->number_of_events;
    }
    return rows_of_events(g, events);
}

int64_t nexmark_total(const Nexmark *g)
{
    return g->number_of_events < 0 ? -1 : rows_of_events(g, g->number_of_events);
}

/* The event number of the table's row k.  With out-of-order groups of G
 * events (a multiple of 50, so each group holds G/50 persons, 3G/50
 * auctions, 46G/50 bids), the rows are the group's events of the table's
 * kind in the order the generator emits them. */
static int64_t row_event(const Nexmark *g, int64_t k, int64_t *next_c)
{
    int64_t gs = g->cfg.out_of_order_group_size;
    if (gs == 1)
        return nexmark_kind_event(g->kind, k);
    int64_t per_group = nexmark_kind_count(g->kind, gs);
    int64_t c = *next_c >= 0 ? *next_c : (k / per_group) * gs;
    int64_t skip = *next_c >= 0 ? 0 : k % per_group;
    for (;; c++) {
        if (nexmark_kind_of(adjusted_event_number(&g->cfg, c)) != g->kind)
            continue;
        if (skip-- == 0)
            break;
    }
    *next_c = c + 1;
    return c;
}

static void put_str(Vector *v, uint32_t i, const char *s, Arena *a)
{
    size_t len = strlen(s);
    v->v.str[i].ptr = arena_strndup(a, s, len);
    v->v.str[i].len = (uint32_t)len;
}

void nexmark_generate(const Nexmark *g, int64_t from, uint32_t n, Arena *a, Batch *b)
{
    nexmark_generate_cols(g, from, n, NULL, a, b);
}

void nexmark_generate_cols(const Nexmark *g, int64_t from, uint32_t n, const uint8_t *need,
                           Arena *a, Batch *b)
{
    NexmarkEvent ev;
    int64_t next_c = -1;
    uint32_t want = 0;
    for (int c = 0; c < g->ncols; c++) {
        if (need == NULL || need[c])
            want |= W(g->fields[c]);
        else
            memset(b->cols[c].nulls, 1, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        event_want(&g->cfg, row_event(g, from + i, &next_c), &ev, want);
        for (int c = 0; c < g->ncols; c++) {
            if (need != NULL && !need[c])
                continue;
            Vector *v = &b->cols[c];
            v->nulls[i] = 0;
            switch (g->fields[c]) {
            case F_ID: v->v.i64[i] = ev.id; break;
            case F_NAME: put_str(v, i, ev.name, a); break;
            case F_EMAIL: put_str(v, i, ev.email, a); break;
            case F_CREDIT_CARD: put_str(v, i, ev.credit_card, a); break;
            case F_CITY: put_str(v, i, ev.city, a); break;
            case F_STATE: put_str(v, i, ev.state, a); break;
            case F_DATE_TIME: v->v.i64[i] = ev.date_time_ms * 1000 - SL_PG_EPOCH_UNIX_US; break;
            case F_EXTRA: put_str(v, i, ev.extra, a); break;
            case F_ITEM_NAME: put_str(v, i, ev.item_name, a); break;
            case F_DESCRIPTION: put_str(v, i, ev.description, a); break;
            case F_INITIAL_BID: v->v.i64[i] = ev.initial_bid; break;
            case F_RESERVE: v->v.i64[i] = ev.reserve; break;
            case F_EXPIRES: v->v.i64[i] = ev.expires_ms * 1000 - SL_PG_EPOCH_UNIX_US; break;
            case F_SELLER: v->v.i64[i] = ev.seller; break;
            case F_CATEGORY: v->v.i64[i] = ev.category; break;
            case F_AUCTION: v->v.i64[i] = ev.auction; break;
            case F_BIDDER: v->v.i64[i] = ev.bidder; break;
            case F_PRICE: v->v.i64[i] = ev.price; break;
            case F_CHANNEL: put_str(v, i, ev.channel, a); break;
            case F_URL: put_str(v, i, ev.url, a); break;
            }
        }
    }
    for (int c = 0; c < g->ncols; c++)
        b->cols[c].len = n;
    b->nrows = n;
}
