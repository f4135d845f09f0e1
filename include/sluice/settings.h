/*
 * settings.h -- a session's run-time parameters (PostgreSQL's GUCs):
 * application_name, client_encoding, DateStyle, IntervalStyle, TimeZone,
 * search_path, extra_float_digits, the timeouts, standard_conforming_strings,
 * the transaction modes (the server's) and the read-only ones (server_version, server_encoding, ...).
 *
 *   settings_new, settings_free     one session's values, at their defaults
 *   settings_set                    SET [LOCAL] / RESET / a startup option
 *   settings_reset_all              RESET ALL
 *   settings_changes                a count of the changes, for savepoints
 *   settings_parse_args             the words after SET name TO, flattened
 *   settings_get                    SHOW name, current_setting(name)
 *   settings_xact_value             SET transaction_isolation's value
 *   settings_count, settings_nth    SHOW ALL (sorted by name)
 *   settings_info                   what pg_settings says of one
 *   settings_xact_begin, _end       SET LOCAL ends with the block; ROLLBACK
 *                                   undoes the block's SETs
 *   settings_next_report            reported parameters that changed since
 *                                   the client last heard (ParameterStatus)
 *   settings_timeout_ms             statement / idle timeouts
 *   settings_log_min_duration_ms    log_min_duration_statement
 *   settings_statement_mem          statement_mem, the memory budget of
 *                                   one statement (memacct.h)
 *   settings_enter, settings_current  the session of the calling thread
 *
 * Values are kept as text in their canonical form (what SHOW prints);
 * errors are PostgreSQL's: an unknown name is 42704, a bad value 22023, a
 * read-only parameter 55P02.  The evaluator reads the session of its
 * thread (settings_current, NULL outside a session: the defaults), so a
 * statement on a worker thread sees the TimeZone of the session that runs
 * it; at most one statement of a session runs at a time, so the values
 * need no lock.
 */
#ifndef SLUICE_SETTINGS_H
#define SLUICE_SETTINGS_H

#include "sluice/arena.h"
#include "sluice/error.h"

typedef struct SlSettings SlSettings;
struct DtTz;

#define SL_SERVER_VERSION     "15.0"
#define SL_SERVER_VERSION_NUM "150000"

typedef enum SetScope {
    SET_SESSION,        /* SET name = value */
    SET_LOCAL,          /* SET LOCAL: until the end of the transaction block */
    SET_STARTUP,        /* a StartupMessage option: also what RESET returns to */
} SetScope;

typedef enum SetTimeout {
    TIMEOUT_STATEMENT,
    TIMEOUT_IDLE_SESSION,
    TIMEOUT_IDLE_IN_TRANSACTION,
} SetTimeout;

SlSettings *settings_new(const char *user);
/* Sets a read-only parameter the server knows only later (is_superuser,
 * once the role is known), before it is reported, or a transaction mode
 * (transaction_isolation, transaction_read_only) the server's transaction
 * statements changed. */
void        settings_set_fixed(SlSettings *s, const char *name, const char *value);
void        settings_free(SlSettings *s);

/* Sets name (any case) to value, or back to its default when value is
 * NULL (RESET, SET name TO DEFAULT); a superuser-only one
 * (log_min_duration_statement) is 42501 unless is_superuser is on or scope
 * is SET_STARTUP.  in_block: a transaction block is
 * open (SET LOCAL outside one is a warning, and does nothing; *warning
 * gets its text when warning is not NULL). */
int settings_set(SlSettings *s, const char *name, const char *value, SetScope scope,
                 bool in_block, const char **warning, SlError *err);
void settings_reset_all(SlSettings *s, bool in_block);
/* How many times settings_set and settings_reset_all changed s so far: a
 * savepoint's mark (server/session.c). */
uint64_t settings_changes(const SlSettings *s);

/* Flattens the text after "SET name" (TO / = and a comma-separated list of
 * identifiers, strings and numbers, or DEFAULT) as PostgreSQL's
 * flatten_set_variable_args does: *value gets the text in a, or NULL for
 * DEFAULT.  A list for a parameter that takes one value is 42601. */
int settings_parse_args(Arena *a, const char *name, const char *text, size_t len,
                        const char **value, SlError *err);

/* The value of name (any case); *canon, when not NULL, gets the name as
 * PostgreSQL spells it ("TimeZone").  NULL with 42704 when unknown. */
const char *settings_get(const SlSettings *s, const char *name, const char **canon,
                         SlError *err);
/* The position of value among the choices of the transaction mode name
 * (transaction_isolation, PostgreSQL's order: 0 serializable, 1 repeatable
 * read, 2 read committed, 3 read uncommitted; transaction_read_only: 0
 * off, 1 on), for
 * the server's SET of them, which SET TRANSACTION's rules govern (settings_set
 * refuses them with 55P02); -1 with 22023 when value is none of them. */
int  settings_xact_value(const char *name, const char *value, SlError *err);
int  settings_count(void);
void settings_nth(const SlSettings *s, int i, const char **name, const char **value,
                  const char **description);

/* What pg_settings says of parameter i besides its value: PostgreSQL's
 * vartype (bool, integer, enum, string), context (user, superuser,
 * internal), unit (ms, kB or NULL), range (integers) and enumvals (an
 * array literal, enums), and setting, the value in the unit (statement_timeout
 * '5s' is 5000 ms) in a, or NULL when it is the value itself. */
typedef struct SettingInfo {
    const char *vartype, *context, *unit;
    bool        has_range;
    int         min, max;
    const char *enumvals;
    const char *setting;
    bool        changed;    /* not the default */
} SettingInfo;
void settings_info(const SlSettings *s, int i, Arena *a, SettingInfo *out);

void settings_xact_begin(SlSettings *s);
/* Whether a transaction block is open (between settings_xact_begin and _end). */
bool settings_in_block(const SlSettings *s);
void settings_xact_end(SlSettings *s, bool commit);

/* Walks the reported (GUC_REPORT) parameters whose value the client has
 * not been told: start with *iter = 0; each true return gives one and
 * marks it told. */
bool settings_next_report(SlSettings *s, int *iter, const char **name, const char **value);

/* A timeout in milliseconds; 0 is off. */
int settings_timeout_ms(const SlSettings *s, SetTimeout which);

/* statement_mem in bytes (the default outside a session). */
size_t settings_statement_mem(const SlSettings *s);

/* log_min_duration_statement in milliseconds: -1 off, 0 every statement. */
int settings_log_min_duration_ms(const SlSettings *s);

/* Makes s the session of the calling thread; returns the previous one. */
SlSettings *settings_enter(SlSettings *s);
SlSettings *settings_current(void);
/* The calling thread's session TimeZone: NULL for UTC. */
const struct DtTz *settings_current_tz(void);
/* Its extra_float_digits (1 outside a session). */
int settings_current_float_digits(void);

#endif /* SLUICE_SETTINGS_H */
