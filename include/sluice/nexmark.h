/*
 * nexmark.h -- the Nexmark event generator and the nexmark connector.
 *
 *   nexmark_config_default  the Nexmark defaults (GeneratorConfig)
 *   nexmark_event           event number n, a pure function of (config, n)
 *   nexmark_kind_of         the kind of the event with id e
 *   nexmark_kind_count      events of a kind among the first n events
 *   nexmark_kind_event      the event number of a kind's k-th event
 *   nexmark_open            read a stream's options into a connector
 *   nexmark_available       rows of the stream's table at a wall-clock time
 *   nexmark_total           rows of the stream's table in all, -1: unbounded
 *   nexmark_generate        the rows with offsets [from, from + n)
 *   nexmark_generate_cols   the same, only the columns a query reads
 *
 * The rules follow the nexmark/nexmark project's generator (Flink's
 * nexmark-flink: GeneratorConfig, NexmarkGenerator, PersonGenerator,
 * AuctionGenerator, BidGenerator); docs in tools/nexmark/README.md.
 * Events come in epochs of 50: 1 person, 3 auctions, 46 bids.  Event n
 * has id adjusted(n) (the out-of-order shuffle within groups of
 * out_of_order_group_size events, identity when that is 1) and its
 * randomness comes from a counter-based generator seeded by (seed, id),
 * so any range of events can be generated again, in any split.
 */
#ifndef SLUICE_NEXMARK_H
#define SLUICE_NEXMARK_H

#include "sluice/catalog.h"

typedef enum NexmarkKind { NEXMARK_PERSON, NEXMARK_AUCTION, NEXMARK_BID } NexmarkKind;

typedef struct NexmarkConfig {
    uint64_t seed;
    int64_t  base_time_ms;            /* event time of event 0, Unix epoch ms */
    int64_t  first_event_rate;        /* events per second of event time */
    int64_t  num_active_people;       /* 1000 */
    int64_t  num_in_flight_auctions;  /* 100 */
    int64_t  hot_auction_ratio;       /* 2: 1 in 2 bids is for a hot auction */
    int64_t  hot_sellers_ratio;       /* 4 */
    int64_t  hot_bidders_ratio;       /* 4 */
    int64_t  avg_person_bytes;        /* 200 */
    int64_t  avg_auction_bytes;       /* 500 */
    int64_t  avg_bid_bytes;           /* 100 */
    int64_t  out_of_order_group_size; /* 1 */
} NexmarkConfig;

#define NEXMARK_FIRST_PERSON_ID  1000
#define NEXMARK_FIRST_AUCTION_ID 1000
#define NEXMARK_FIRST_CATEGORY   10
#define NEXMARK_NUM_CATEGORIES   5

/* One event; the fields of the other kinds are unset.  Strings are NUL
 * terminated, in the event itself or static. */
typedef struct NexmarkEvent {
    NexmarkKind kind;
    int64_t     event_id;
    int64_t     date_time_ms;        /* Unix epoch ms */
    /* person */
    int64_t     id;                  /* also the auction's id */
    char        name[32];
    char        email[32];
    char        credit_card[24];
    const char *city;
    const char *state;
    /* auction */
    char        item_name[24];
    char        description[104];
    int64_t     initial_bid, reserve, expires_ms, seller, category;
    /* bid */
    int64_t     auction, bidder, price;
    char        channel[24];
    char        url[112];
    /* all */
    char        extra[1024];
} NexmarkEvent;

void        nexmark_config_default(NexmarkConfig *c);
void        nexmark_event(const NexmarkConfig *c, int64_t n, NexmarkEvent *ev);
NexmarkKind nexmark_kind_of(int64_t event_id);
int64_t     nexmark_kind_count(NexmarkKind kind, int64_t n);
int64_t     nexmark_kind_event(NexmarkKind kind, int64_t k);
const char *nexmark_kind_name(NexmarkKind kind);

/* The connector: a stream WITH (connector = 'nexmark', table = 'bid', ...)
 * (options in docs/sql-reference.md, "The nexmark connector"). */
typedef struct Nexmark Nexmark;

int     nexmark_open(Arena *a, const CatRelation *rel, Nexmark **out, SlError *err);
int64_t nexmark_available(const Nexmark *g, int64_t now_us);
int64_t nexmark_total(const Nexmark *g);
void    nexmark_generate(const Nexmark *g, int64_t from, uint32_t n, Arena *a, Batch *b);
/* The same rows with only the columns c where need[c] (NULL: all); the
 * others are NULL.  The fields are drawn only as far as the last one
 * needed, so a query that reads few columns generates less. */
void    nexmark_generate_cols(const Nexmark *g, int64_t from, uint32_t n, const uint8_t *need,
                              Arena *a, Batch *b);

#endif /* SLUICE_NEXMARK_H */
