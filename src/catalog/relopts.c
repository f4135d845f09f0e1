/*
 * relopts.c -- the table of every WITH (...) option (see relopts.h).
 *
 *   cat_relopts_check, cat_relopts_sets, cat_relopts_type_name
 *
 * One RelOptSet per kind of relation and connector: the options of every
 * stream, then those of each stream connector (internal, files, datagen,
 * nexmark, kafka), the sinks' (files, kafka), the continuous queries'; a
 * table takes none.  A stream's options are its set's and every stream's.
 * The readers (ingest.c, source.c, datagen.c, nexmark.c, kafka_*.c,
 * sink_files.c, cq.c, incremental.c, inc_join.c, cq_ddl.c) read only
 * names declared here and check the ranges; this file checks names,
 * forms, pairs and required options at CREATE, before them.
 */
#include "sluice/relopts.h"
#include "sluice/options.h"
#include "sluice/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define N(a) ((int)SL_ARRAY_LEN(a))

static const RelOpt stream_opts[] = {
    {"connector", RELOPT_ENUM, "internal, files, datagen, nexmark, kafka", "internal", 0, NULL,
     NULL, "where the rows come from"},
    {"partitions", RELOPT_INT, NULL, "1", 0, NULL, NULL,
     "watermark partitions (1 to 1024): the watermark is the minimum of theirs"},
    {"partition_key", RELOPT_TEXT, NULL, "", 0, NULL, NULL,
     "the column whose value picks a row's partition (needed with partitions > 1)"},
    {"idle_timeout", RELOPT_INTERVAL, NULL, "0 (never idle)", 0, NULL, NULL,
     "a partition that sent nothing for this long stops holding the watermark"},
    {"max_offsets_per_trigger", RELOPT_INT, NULL, "no limit", 0, NULL, NULL,
     "the most offsets one micro-batch reads (a query's own option wins)"},
    {"watermark_column", RELOPT_TEXT, NULL, "", RELOPT_SERVER, NULL, NULL,
     "set by the WATERMARK clause"},
    {"watermark_delay_us", RELOPT_INT, NULL, "", RELOPT_SERVER, NULL, NULL,
     "set by the WATERMARK clause"},
    {"dead_letters_of", RELOPT_TEXT, NULL, "", RELOPT_SERVER, NULL, NULL,
     "set on the dead-letter streams the server makes"},
};

static const RelOpt internal_opts[] = {
    {"retention", RELOPT_INTERVAL, NULL, "keep all", 0, NULL, NULL,
     "delete whole chunks appended longer ago than this"},
    {"retention_bytes", RELOPT_INT, NULL, "keep all", 0, NULL, NULL,
     "delete the oldest chunks while the stream holds more bytes than this"},
};

static const RelOpt files_opts[] = {
    {"path", RELOPT_TEXT, NULL, "", RELOPT_REQUIRED, "outside --files-root", NULL,
     "the directory to read (it must exist)"},
    {"format", RELOPT_ENUM, "json, csv", "", RELOPT_REQUIRED, NULL, NULL,
     "JSON lines or CSV"},
    {"pattern", RELOPT_TEXT, NULL, "*", 0, NULL, NULL,
     "which file names to read, a shell pattern (names starting with . never)"},
    {"on_error", RELOPT_ENUM, "dead_letter, skip, fail", "dead_letter", 0, NULL, NULL,
     "what a record that cannot be decoded does"},
    {"poll_interval", RELOPT_INTERVAL, NULL, "500 ms", 0, NULL, NULL,
     "how often the directory is looked at (at least 1 ms)"},
    {"max_record_bytes", RELOPT_INT, NULL, "1048576", 0, NULL, NULL,
     "a longer record is a dead letter (16 to 8388608)"},
    {"header", RELOPT_BOOL, NULL, "false", 0, NULL, "format = csv",
     "the first line of each file is a header and skipped"},
    {"delimiter", RELOPT_TEXT, NULL, ",", 0, NULL, "format = csv",
     "the field separator, one character"},
    {"null_string", RELOPT_TEXT, NULL, "(empty)", 0, NULL, "format = csv",
     "the unquoted text that means NULL"},
    {"fields.COLUMN.path", RELOPT_TEXT, NULL, "the column's name", 0, NULL, "format = json",
     "a dotted path to the column's value ('meta.ts')"},
    {"retention", RELOPT_INTERVAL, NULL, "keep all", 0, NULL, NULL,
     "delete whole chunks appended longer ago than this"},
    {"retention_bytes", RELOPT_INT, NULL, "keep all", 0, NULL, NULL,
     "delete the oldest chunks while the stream holds more bytes than this"},
};

static const RelOpt datagen_opts[] = {
    {"rows_per_second", RELOPT_NUMBER, NULL, "1000", 0, NULL, NULL,
     "rows made per second of wall-clock time since the stream's creation"},
    {"number_of_rows", RELOPT_INT, NULL, "unbounded", 0, NULL, NULL, "the rows there will be"},
    {"seed", RELOPT_INT, NULL, "0", 0, NULL, NULL, "the random numbers' seed"},
    {"start_time_us", RELOPT_INT, NULL, "the stream's creation", 0, NULL, NULL,
     "event time of row 0, microseconds since 2000-01-01"},
    {"fields.COLUMN.kind", RELOPT_ENUM, "sequence, random, values, event_time",
     "event_time for timestamps, else random", 0, NULL, NULL,
     "how the column's values are made (event_time: timestamps only)"},
    {"fields.COLUMN.start", RELOPT_INT, NULL, "0", 0, NULL, NULL, "a sequence's first value"},
    {"fields.COLUMN.step", RELOPT_INT, NULL, "1", 0, NULL, NULL, "a sequence's step"},
    {"fields.COLUMN.min", RELOPT_NUMBER, NULL, "0", 0, NULL, NULL,
     "random numbers' least value"},
    {"fields.COLUMN.max", RELOPT_NUMBER, NULL, "1000000", 0, NULL, NULL,
     "random numbers' greatest value (at least min)"},
    {"fields.COLUMN.length", RELOPT_INT, NULL, "8", 0, NULL, NULL,
     "random text's length (0 to 1000000)"},
    {"fields.COLUMN.values", RELOPT_LIST, NULL, "", 0, NULL, "fields.COLUMN.kind = values",
     "the texts a random pick is made from ('a,b,c')"},
    {"fields.COLUMN.null_share", RELOPT_NUMBER, NULL, "0", 0, NULL, NULL,
     "the share of NULLs (0 to 1)"},
    {"fields.COLUMN.max_out_of_orderness", RELOPT_INTERVAL, NULL, "0", 0, NULL, NULL,
     "event_time: each time moved back by up to this"},
    {"fields.COLUMN.late_share", RELOPT_NUMBER, NULL, "0", 0, NULL, NULL,
     "event_time: the share of rows made late"},
    {"fields.COLUMN.late_by", RELOPT_INTERVAL, NULL, "1 minute", 0, NULL, NULL,
     "event_time: how late those rows are"},
};

static const RelOpt nexmark_opts[] = {
    {"table", RELOPT_ENUM, "person, auction, bid", "", RELOPT_REQUIRED, NULL, NULL,
     "which of the three tables the stream is"},
    {"seed", RELOPT_INT, NULL, "0", 0, NULL, NULL, "the random numbers' seed"},
    {"number_of_events", RELOPT_INT, NULL, "unbounded", 0, NULL, NULL,
     "events of all three kinds (the table has its share: 46/50 of them for bid)"},
    {"events_per_second", RELOPT_NUMBER, NULL, "first_event_rate", 0, NULL, NULL,
     "wall-clock pace, all kinds together; 0: all number_of_events at once (needs it)"},
    {"first_event_rate", RELOPT_INT, NULL, "10000", 0, NULL, NULL,
     "events per second of event time (at most 1000000)"},
    {"base_time_ms", RELOPT_INT, NULL, "the stream's creation", 0, NULL, NULL,
     "event time of event 0, Unix epoch milliseconds"},
    {"num_active_people", RELOPT_INT, NULL, "1000", 0, NULL, NULL,
     "Nexmark's generator setting"},
    {"num_in_flight_auctions", RELOPT_INT, NULL, "100", 0, NULL, NULL,
     "Nexmark's generator setting"},
    {"hot_auction_ratio", RELOPT_INT, NULL, "2", 0, NULL, NULL,
     "1 - 1/ratio of the bids go to a hot auction"},
    {"hot_sellers_ratio", RELOPT_INT, NULL, "4", 0, NULL, NULL,
     "1 - 1/ratio of the auctions go to a hot seller"},
    {"hot_bidders_ratio", RELOPT_INT, NULL, "4", 0, NULL, NULL,
     "1 - 1/ratio of the bids go to a hot bidder"},
    {"avg_person_bytes", RELOPT_INT, NULL, "200", 0, NULL, NULL,
     "the extra column pads persons to this size, +-20%"},
    {"avg_auction_bytes", RELOPT_INT, NULL, "500", 0, NULL, NULL,
     "the extra column pads auctions to this size, +-20%"},
    {"avg_bid_bytes", RELOPT_INT, NULL, "100", 0, NULL, NULL,
     "the extra column pads bids to this size, +-20%"},
    {"out_of_order_group_size", RELOPT_INT, NULL, "1", 0, NULL, NULL,
     "events shuffled within groups of this many (1 or a multiple of 50)"},
};

static const RelOpt kafka_opts[] = {
    {"topic", RELOPT_TEXT, NULL, "", 0, NULL, NULL,
     "the topic (one of topic, topics, topic_pattern is required)"},
    {"topics", RELOPT_LIST, NULL, "", 0, NULL, NULL, "the topics, a comma list"},
    {"topic_pattern", RELOPT_TEXT, NULL, "", 0, NULL, NULL,
     "a POSIX extended regular expression matched against whole topic names"},
    {"bootstrap_servers", RELOPT_LIST, NULL, "", 0, "a broker not on --kafka-allowed-hosts",
     NULL, "host:port[,host:port] (required, or kafka.bootstrap.servers)"},
    {"format", RELOPT_ENUM, "json, csv, raw", "json", 0, NULL, NULL,
     "how a record's value is decoded"},
    {"starting_offsets", RELOPT_OFFSETS, NULL, "earliest", 0, NULL, NULL,
     "where a query first starts: earliest, latest, or {\"topic\": {\"0\": 42}}"},
    {"fail_on_data_loss", RELOPT_BOOL, NULL, "true", 0, NULL, NULL,
     "fail when unread offsets are gone; false: skip to the earliest"},
    {"read_timeout", RELOPT_INTERVAL, NULL, "60 seconds", 0, NULL, NULL,
     "how long a batch waits for its records before it is retried"},
    {"close_timeout", RELOPT_INTERVAL, NULL, "3 seconds", 0, NULL, NULL,
     "the longest wait for a consumer to close"},
    {"fetch", RELOPT_ENUM, "direct, librdkafka", "direct", 0, NULL, NULL,
     "sluice's own Fetch requests or librdkafka's consumer"},
    {"delimiter", RELOPT_TEXT, NULL, ",", 0, NULL, "format = csv",
     "the field separator, one character"},
    {"kafka.PROPERTY", RELOPT_TEXT, NULL, "", 0, "a property not on the allow-list", NULL,
     "passed to librdkafka as PROPERTY (\"Kafka properties\")"},
};

static const RelOpt files_sink_opts[] = {
    {"connector", RELOPT_ENUM, "files, kafka", "", RELOPT_REQUIRED, NULL, NULL,
     "the kind of sink"},
    {"path", RELOPT_TEXT, NULL, "", RELOPT_REQUIRED, "outside --files-root", NULL,
     "the directory written (made if missing)"},
    {"format", RELOPT_ENUM, "json, csv", "json", 0, NULL, NULL,
     "JSON lines, or CSV with a header line"},
};

static const RelOpt kafka_sink_opts[] = {
    {"connector", RELOPT_ENUM, "files, kafka", "", RELOPT_REQUIRED, NULL, NULL,
     "the kind of sink"},
    {"topic", RELOPT_TEXT, NULL, "", RELOPT_REQUIRED, NULL, NULL, "the topic written"},
    {"bootstrap_servers", RELOPT_LIST, NULL, "", 0, "a broker not on --kafka-allowed-hosts",
     NULL, "host:port[,host:port] (required, or kafka.bootstrap.servers)"},
    {"format", RELOPT_ENUM, "json, csv", "json", 0, NULL, NULL,
     "a record's value: a JSON object or a CSV line"},
    {"key", RELOPT_LIST, NULL, "no key", 0, NULL, NULL,
     "the output columns that make the record key"},
    {"progress_topic", RELOPT_TEXT, NULL, "sluice_progress", 0, NULL, NULL,
     "where each committed batch is recorded"},
    {"transactional_id", RELOPT_TEXT, NULL, "sluice-<query>-<oid>-<created>", 0, "always",
     NULL, "the producer's transactional id"},
    {"fetch", RELOPT_ENUM, "direct, librdkafka", "direct", 0, NULL, NULL,
     "how a restart reads the progress topic"},
    {"kafka.PROPERTY", RELOPT_TEXT, NULL, "", 0, "a property not on the allow-list", NULL,
     "passed to librdkafka as PROPERTY (\"Kafka properties\")"},
};

static const RelOpt cq_opts[] = {
    {"trigger", RELOPT_TRIGGER, NULL, "1 second", 0, NULL, NULL,
     "the interval between batches; '0': back to back; once; available_now"},
    {"output_mode", RELOPT_ENUM, "append, update, complete",
     "update with aggregation, else append", 0, NULL, NULL, "which rows each batch writes"},
    {"max_offsets_per_trigger", RELOPT_INT, NULL, "the streams' own", 0, NULL, NULL,
     "the most offsets one batch reads"},
    {"late_rows", RELOPT_TEXT, NULL, "dropped", 0, NULL, NULL,
     "the internal stream late rows are appended to"},
    {"state_ttl", RELOPT_INTERVAL, NULL, "none", 0, NULL, NULL,
     "keys no row touched for this long leave the state"},
    {"min_batches_to_retain", RELOPT_INT, NULL, "100", 0, NULL, NULL,
     "batches of the offset and commit logs kept (at least 1)"},
    {"batch_memory", RELOPT_SIZE, NULL, "1GB", 0, NULL, NULL,
     "the memory one micro-batch may hold (at least 1MB)"},
    {"reset", RELOPT_BOOL, NULL, "false", 0, NULL, NULL,
     "CREATE OR REPLACE starts over: state, offsets and results dropped"},
    {"append_updates", RELOPT_BOOL, NULL, "false", 0, NULL, NULL,
     "update mode INTO a stream or sink appends each changed group's new row"},
    {"join_memory", RELOPT_INT, NULL, "268435456", 0, NULL, NULL,
     "bytes of a stream-stream join's kept chunks held in memory"},
    {"join_slice_rows", RELOPT_INT, NULL, "262144", 0, NULL, NULL,
     "rows of a stream-stream join's side read at a time"},
};

static const RelOptSet sets[] = {
    {"stream", "a stream", stream_opts, N(stream_opts)},
    {"internal stream", "an internal stream", internal_opts, N(internal_opts)},
    {"files stream", "a files stream", files_opts, N(files_opts)},
    {"datagen stream", "a datagen stream", datagen_opts, N(datagen_opts)},
    {"nexmark stream", "a nexmark stream", nexmark_opts, N(nexmark_opts)},
    {"kafka stream", "a Kafka stream", kafka_opts, N(kafka_opts)},
    {"files sink", "a files sink", files_sink_opts, N(files_sink_opts)},
    {"kafka sink", "a Kafka sink", kafka_sink_opts, N(kafka_sink_opts)},
    {"continuous query", "a continuous query", cq_opts, N(cq_opts)},
    {"table", "a table", NULL, 0},
};

const RelOptSet *cat_relopts_sets(int *n)
{
    *n = N(sets);
    return sets;
}

static const RelOptSet *set_named(const char *name)
{
    for (int i = 0; i < N(sets); i++)
        if (strcmp(sets[i].name, name) == 0)
            return &sets[i];
    return NULL;
}

const char *cat_relopts_type_name(const RelOpt *o)
{
    switch (o->type) {
    case RELOPT_TEXT: return "text";
    case RELOPT_ENUM: return "one of";
    case RELOPT_INT: return "integer";
    case RELOPT_NUMBER: return "number";
    case RELOPT_BOOL: return "boolean";
    case RELOPT_INTERVAL: return "interval";
    case RELOPT_SIZE: return "size";
    case RELOPT_TRIGGER: return "interval, once or available_now";
    case RELOPT_OFFSETS: return "earliest, latest or JSON";
    case RELOPT_LIST: return "comma list";
    }
    return "text";
}

/* ---------------------------------------------------------------------- */
/* Matching names                                                          */

/* Whether key is o's name: as written, kafka.PROPERTY any name after
 * "kafka.", fields.COLUMN.x one of rel's columns in the middle (*col is
 * set to it then, else to -1). */
static bool name_matches(const RelOpt *o, const char *key, const CatRelation *rel, int *col)
{
    *col = -1;
    const char *ph = strstr(o->name, "PROPERTY");
    if (ph != NULL) {
        size_t pre = (size_t)(ph - o->name);
        return strncmp(key, o->name, pre) == 0 && key[pre] != '\0';
    }
    const char *cm = strstr(o->name, "COLUMN");
    if (cm == NULL)
        return strcmp(key, o->name) == 0;
    size_t pre = (size_t)(cm - o->name);
    const char *post = cm + 6;
    size_t klen = strlen(key), plen = strlen(post);
    if (klen <= pre + plen || strncmp(key, o->name, pre) != 0 ||
        strcmp(key + klen - plen, post) != 0)
        return false;
    size_t clen = klen - pre - plen;
    for (int c = 0; c < rel->ncols; c++)
        if (strlen(rel->cols[c].name) == clen && strncmp(rel->cols[c].name, key + pre, clen) == 0)
            *col = c;
    return true;
}

/* o's name with COLUMN replaced by column c's name, in a. */
static const char *instance(Arena *a, const RelOpt *o, const CatRelation *rel, int c)
{
    const char *cm = strstr(o->name, "COLUMN");
    if (cm == NULL || c < 0)
        return o->name;
    return arena_printf(a, "%.*s%s%s", (int)(cm - o->name), o->name, rel->cols[c].name, cm + 6);
}

typedef struct Check {
    const CatRelation *rel;
    const RelOptSet   *use[2];
    int                nuse;
    const char        *what;     /* "a Kafka stream" */
    Options            o;
    Arena              a;
} Check;

static const RelOpt *find(const Check *k, const char *key, int *col)
{
    for (int s = 0; s < k->nuse; s++)
        for (int i = 0; i < k->use[s]->n; i++)
            if (name_matches(&k->use[s]->opts[i], key, k->rel, col))
                return &k->use[s]->opts[i];
    return NULL;
}

/* The declared name closest to key within 3 edits (less than half of
 * key's length), or NULL. */
static const char *closest(Check *k, const char *key)
{
    int limit = SL_MIN(3, ((int)strlen(key) - 1) / 2), best = limit + 1;
    const char *name = NULL;
    for (int s = 0; s < k->nuse; s++)
        for (int i = 0; i < k->use[s]->n; i++) {
            const RelOpt *o = &k->use[s]->opts[i];
            if (o->flags & RELOPT_SERVER || strstr(o->name, "PROPERTY") != NULL)
                continue;
            int ncand = strstr(o->name, "COLUMN") != NULL ? k->rel->ncols : 1;
            for (int c = 0; c < ncand; c++) {
                const char *cand = instance(&k->a, o, k->rel,
                                            strstr(o->name, "COLUMN") ? c : -1);
                int d = sl_edit_distance(key, cand, best - 1);
                if (d < best) {
                    best = d;
                    name = cand;
                }
            }
        }
    return name;
}

static int unknown(Check *k, const char *key, SlError *err)
{
    sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "unrecognized option \"%s\" for %s", key,
             k->what);
    /* an option of another connector or kind */
    StrBuf b;
    strbuf_init(&b);
    for (int s = 0; s < N(sets); s++)
        for (int i = 0; i < sets[s].n; i++)
            if (!(sets[s].opts[i].flags & RELOPT_SERVER) && strcmp(sets[s].opts[i].name, key) == 0)
                strbuf_printf(&b, "%s%s", b.len ? ", " : "", sets[s].what);
    if (b.len > 0) {
        sl_error_hint(err, "\"%s\" is an option of %s.", key, b.data);
        strbuf_free(&b);
        return -1;
    }
    const char *near = closest(k, key);
    if (near != NULL) {
        sl_error_hint(err, "Did you mean \"%s\"?", near);
        strbuf_free(&b);
        return -1;
    }
    for (int s = 0; s < k->nuse; s++)
        for (int i = 0; i < k->use[s]->n; i++)
            if (!(k->use[s]->opts[i].flags & RELOPT_SERVER))
                strbuf_printf(&b, "%s%s", b.len ? ", " : "", k->use[s]->opts[i].name);
    if (b.len == 0)
        sl_error_hint(err, "%c%s takes no options.", toupper((unsigned char)k->what[0]),
                      k->what + 1);
    else
        sl_error_hint(err, "The options of %s: %s (docs/sql-reference.md).", k->what, b.data);
    strbuf_free(&b);
    return -1;
}

static bool is_int(const char *v)
{
    char *end;
    errno = 0;
    (void)strtoll(v, &end, 10);
    return *v != '\0' && *end == '\0' && errno == 0;
}

static bool in_list(const char *v, const char *list)
{
    size_t n = strlen(v);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return true;
        p = e ? e + 2 : p + len;
    }
    return false;
}

/* The value v of option key (declared as o) has o's form; else 22023. */
static int check_form(Check *k, const RelOpt *o, const char *key, const char *v, SlError *err)
{
    const char *want = NULL;
    char *end;
    int64_t us;
    switch (o->type) {
    case RELOPT_TEXT:
    case RELOPT_LIST:
    case RELOPT_OFFSETS:
    case RELOPT_SIZE:       /* its reader checks it at CREATE (cq.c's batch_memory) */
        return 0;
    case RELOPT_ENUM:
        if (in_list(v, o->values))
            return 0;
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "invalid value for option \"%s\" of %s: \"%s\" (expected one of %s)", key,
                 k->what, v, o->values);
        {
            /* the closest allowed value, as for names */
            const char *near = NULL;
            int best = SL_MIN(3, ((int)strlen(v) - 1) / 2) + 1;
            for (const char *p = o->values; *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                const char *cand = arena_strndup(&k->a, p, len);
                int d = sl_edit_distance(v, cand, best - 1);
                if (d < best) {
                    best = d;
                    near = cand;
                }
                p = e ? e + 2 : p + len;
            }
            if (near != NULL)
                sl_error_hint(err, "Did you mean '%s'?", near);
        }
        return -1;
    case RELOPT_INT:
        if (is_int(v))
            return 0;
        want = "an integer";
        break;
    case RELOPT_NUMBER:
        (void)strtod(v, &end);
        if (*v != '\0' && *end == '\0')
            return 0;
        want = "a number";
        break;
    case RELOPT_BOOL:
        if (strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0 ||
            strcasecmp(v, "on") == 0 || strcasecmp(v, "off") == 0 || strcmp(v, "1") == 0 ||
            strcmp(v, "0") == 0)
            return 0;
        want = "a boolean";
        break;
    case RELOPT_INTERVAL:
        if (opts_parse_interval_us(v, &us) == 0)
            return 0;
        want = "an interval such as '5 seconds'";
        break;
    case RELOPT_TRIGGER:
        if (strcmp(v, "once") == 0 || strcmp(v, "available_now") == 0 ||
            opts_parse_interval_us(v, &us) == 0)
            return 0;
        want = "an interval such as '1 second', '0', 'once' or 'available_now'";
        break;
    }
    return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "invalid value for option \"%s\" of %s: \"%s\" (expected %s)", key, k->what,
                    v, want);
}

/* The value option name has, its declared default when it is not given
 * (NULL: none). */
static const char *value_of(Check *k, const char *name)
{
    const char *v = opts_get(&k->o, name);
    int col;
    const RelOpt *o = v == NULL ? find(k, name, &col) : NULL;
    return v != NULL ? v : o != NULL && o->type == RELOPT_ENUM && in_list(o->dflt, o->values)
                               ? o->dflt : NULL;
}

/* o->needs ("format = csv"; COLUMN as in key) holds; else 22023. */
static int check_needs(Check *k, const RelOpt *o, const char *key, int col, SlError *err)
{
    if (o->needs == NULL)
        return 0;
    const char *eq = strstr(o->needs, " = ");
    RelOpt shape = {.name = arena_strndup(&k->a, o->needs, (size_t)(eq - o->needs))};
    const char *other = instance(&k->a, &shape, k->rel, col);
    const char *want = eq + 3, *have = value_of(k, other);
    if (have != NULL && strcmp(have, want) == 0)
        return 0;
    sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "option \"%s\" of %s needs %s = '%s'", key,
             k->what, other, want);
    if (have != NULL)
        sl_error_detail(err, "%s is '%s'.", other, have);
    sl_error_hint(err, "Leave \"%s\" out, or set %s = '%s'.", key, other, want);
    return -1;
}

int cat_relopts_check(const CatRelation *def, unsigned what, SlError *err)
{
    Check k = {.rel = def};
    arena_init(&k.a, 1024);
    int rc = -1;
    if (opts_parse(&k.a, def->options, &k.o, err) < 0)
        goto out;
    const char *connector = opts_get(&k.o, "connector");
    char name[64];
    switch (def->kind) {
    case REL_STREAM:
        k.use[k.nuse++] = set_named("stream");
        k.what = k.use[0]->what;
        if (connector != NULL && !in_list(connector, stream_opts[0].values)) {
            /* not a connector: the first check names it */
            if (!(what & RELOPTS_NAMES)) {
                rc = 0;
                goto out;
            }
            rc = check_form(&k, &stream_opts[0], "connector", connector, err);
            goto out;
        }
        snprintf(name, sizeof(name), "%s stream", connector ? connector : "internal");
        k.use[k.nuse++] = set_named(name);
        k.what = k.use[1]->what;
        break;
    case REL_SINK:
        if (connector == NULL || !in_list(connector, files_sink_opts[0].values)) {
            rc = 0;     /* sink.c says which connectors there are */
            goto out;
        }
        snprintf(name, sizeof(name), "%s sink", connector);
        k.use[k.nuse++] = set_named(name);
        k.what = k.use[0]->what;
        break;
    case REL_QUERY:
        k.use[k.nuse++] = set_named("continuous query");
        k.what = k.use[0]->what;
        break;
    default:
        k.use[k.nuse++] = set_named("table");
        k.what = k.use[0]->what;
        break;
    }
    for (int i = 0; i < k.o.n; i++) {
        int col;
        const char *key = k.o.keys[i];
        const RelOpt *o = find(&k, key, &col);
        if (o == NULL && !(what & RELOPTS_NAMES))
            continue;
        if (o == NULL) {
            unknown(&k, key, err);
            goto out;
        }
        if (strstr(o->name, "COLUMN") != NULL && col < 0) {
            sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                     "option \"%s\" of %s names no column of \"%s\"", key, k.what, def->name);
            const char *near = closest(&k, key);
            if (near != NULL)
                sl_error_hint(err, "Did you mean \"%s\"?", near);
            goto out;
        }
        if ((what & RELOPTS_VALUES) && check_form(&k, o, key, k.o.values[i], err) < 0)
            goto out;
        if ((what & RELOPTS_NAMES) && check_needs(&k, o, key, col, err) < 0)
            goto out;
    }
    rc = 0;
out:
    arena_destroy(&k.a);
    return rc;
}
