/*
 * log.h -- structured logging: one line per event on stderr.
 *
 * A line is `ts=... level=... msg="..." key=value ...` (or one JSON object
 * per line with log_format = json).  The caller passes the message and an
 * optional printf-style list of extra key=value pairs:
 *
 *     sl_log(LOG_INFO, "connection accepted", "peer=%s", addr);
 *
 * A value that may hold spaces, quotes or newlines goes through log_value
 * (a name: bare when it can be, else quoted, as logfmt does) or between
 * quotes through log_quote (a message: always quoted):
 *
 *     sl_log(LOG_ERROR, "continuous query failed", "query=%s error=\"%s\"",
 *            log_value(name), log_quote(message));
 */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include "sluice/common.h"

typedef enum { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR } LogLevel;

void log_set_level(LogLevel level);
void log_set_json(bool json);
/* Parses "debug", "info", "warn"/"warning", "error"; returns -1 if unknown. */
int  log_level_parse(const char *s);
bool log_enabled(LogLevel level);
void sl_log(LogLevel level, const char *msg, const char *kvfmt, ...) SL_PRINTF(3, 4);
/* s escaped for the inside of a quoted value (backslash before " and \\,
 * \\n, \\r, \\t, \\u00XX for other control bytes), cut at LOG_QUOTE_MAX bytes.
 * It lives in one of LOG_QUOTE_SLOTS buffers of the calling thread: that
 * many may be used in one sl_log call. */
#define LOG_QUOTE_MAX   1024
#define LOG_QUOTE_SLOTS 4
const char *log_quote(const char *s);
/* s as it is when it has no space, quote, '=', backslash or control byte
 * (and is not empty); otherwise "s" escaped as log_quote does.  Same
 * buffers as log_quote. */
const char *log_value(const char *s);

#endif /* SLUICE_LOG_H */
