/*
 * options.h -- the WITH (...) options of a relation, kept in the catalog as
 * a flat JSON object, read back as strings.
 *
 *   opts_parse      JSON object text -> Options (strings in an arena)
 *   opts_get        a value by key, or NULL
 *   opts_get_int, opts_get_double, opts_get_bool, opts_get_interval_us
 *                   typed access with a clear error for a bad value
 *   opts_is_secret  whether an option holds a secret (a password, a token,
 *                   a private key): its name says so
 *   opts_mask_json  the JSON with every secret's value shown as OPTS_MASK
 *
 * Keys are case-sensitive and compared as written ("fields.ts.kind").
 * Numbers and booleans are kept as their JSON text.
 */
#ifndef SLUICE_OPTIONS_H
#define SLUICE_OPTIONS_H

#include "sluice/arena.h"
#include "sluice/error.h"

typedef struct Options {
    int          n;
    const char **keys;
    const char **values;
} Options;

int         opts_parse(Arena *a, const char *json, Options *out, SlError *err);
const char *opts_get(const Options *o, const char *key);
/* Each returns 0 with *out set (def when the key is absent), or -1 with a
 * 22023 error naming the option. */
int opts_get_int(const Options *o, const char *key, int64_t def, int64_t *out, SlError *err);
int opts_get_double(const Options *o, const char *key, double def, double *out, SlError *err);
int opts_get_bool(const Options *o, const char *key, bool def, bool *out, SlError *err);
/* An interval as '5 seconds', '1 minute', '250 ms', '2h', or a bare number
 * of milliseconds, in microseconds. */
int opts_get_interval_us(const Options *o, const char *key, int64_t def, int64_t *out,
                         SlError *err);
/* Parses such an interval text; -1 if it is not one. */
int opts_parse_interval_us(const char *s, int64_t *out);

/* What catalog views and messages show instead of a secret's value. */
#define OPTS_MASK "********"
/* key (any case) names a secret: it contains password, passwd, secret,
 * token, credential, private, key.pem, oauthbearer.config or sasl.jaas. */
bool        opts_is_secret(const char *key);
/* json itself when it holds no secret, else a copy in a with each secret
 * value replaced by "********"; "{}" for text that is not an options
 * object (never the text itself).  NULL for NULL. */
const char *opts_mask_json(Arena *a, const char *json);

#endif /* SLUICE_OPTIONS_H */
