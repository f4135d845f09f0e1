/*
 * pgw_proto.h -- the PostgreSQL v3 wire format: message types, framing,
 * building and reading message bodies.
 *
 * Everything here is pure: bytes in, bytes out, no sockets and no session
 * state, so the decoder can be fuzzed on its own (tests/fuzz/fuzz_pgwire.c).
 *
 *   pgw_frame_startup  is a whole startup-phase packet in the buffer?
 *   pgw_frame_message  is a whole typed message in the buffer?
 *   pgw_parse_startup  decode a StartupMessage / SSLRequest / CancelRequest
 *   PgwReader          read int16/int32/strings from a message body
 *   pgw_begin/..._end  build a message into a StrBuf
 */
#ifndef SLUICE_PGW_PROTO_H
#define SLUICE_PGW_PROTO_H

#include "sluice/common.h"
#include "sluice/strbuf.h"

/* Frontend (client -> server) message types. */
#define PGW_MSG_BIND            'B'
#define PGW_MSG_CLOSE           'C'
#define PGW_MSG_COPY_DATA       'd'
#define PGW_MSG_COPY_DONE       'c'
#define PGW_MSG_COPY_FAIL       'f'
#define PGW_MSG_DESCRIBE        'D'
#define PGW_MSG_EXECUTE         'E'
#define PGW_MSG_FLUSH           'H'
#define PGW_MSG_FUNCTION_CALL   'F'
#define PGW_MSG_PARSE           'P'
#define PGW_MSG_PASSWORD        'p'
#define PGW_MSG_QUERY           'Q'
#define PGW_MSG_SYNC            'S'
#define PGW_MSG_TERMINATE       'X'

/* Backend (server -> client) message types. */
#define PGW_MSG_AUTHENTICATION  'R'
#define PGW_MSG_BACKEND_KEY     'K'
#define PGW_MSG_BIND_COMPLETE   '2'
#define PGW_MSG_CLOSE_COMPLETE  '3'
#define PGW_MSG_COMMAND_COMPLETE 'C'
#define PGW_MSG_COPY_IN_RESPONSE 'G'
#define PGW_MSG_COPY_OUT_RESPONSE 'H'
#define PGW_MSG_DATA_ROW        'D'
#define PGW_MSG_EMPTY_QUERY     'I'
#define PGW_MSG_ERROR           'E'
#define PGW_MSG_NEGOTIATE_VERSION 'v'
#define PGW_MSG_NO_DATA         'n'
#define PGW_MSG_NOTICE          'N'
#define PGW_MSG_PARAM_DESC      't'
#define PGW_MSG_PARAM_STATUS    'S'
#define PGW_MSG_PARSE_COMPLETE  '1'
#define PGW_MSG_PORTAL_SUSPENDED 's'
#define PGW_MSG_READY           'Z'
#define PGW_MSG_ROW_DESC        'T'

/* Special startup-phase request codes. */
#define PGW_PROTOCOL_V3         196608      /* 3.0 */
#define PGW_CANCEL_REQUEST_CODE 80877102
#define PGW_SSL_REQUEST_CODE    80877103
#define PGW_GSSENC_REQUEST_CODE 80877104

/* PostgreSQL's own limit for a startup packet. */
#define PGW_MAX_STARTUP_PACKET  10000

typedef enum PgwFrame {
    PGW_FRAME_NEED_MORE = 0,    /* not all of it is in yet */
    PGW_FRAME_OK = 1,           /* a whole packet: *total bytes */
    PGW_FRAME_BAD_LENGTH = -1,  /* a length no valid message has: lost sync */
} PgwFrame;

/* Frames a startup-phase packet (no type byte: int32 length then body). */
PgwFrame pgw_frame_startup(const uint8_t *buf, size_t len, size_t *total);
/* Frames a typed message (type byte, int32 length incl. itself, body);
 * lengths over max_len are bad. */
PgwFrame pgw_frame_message(const uint8_t *buf, size_t len, size_t max_len,
                           size_t *total);

/* Reads the fields of a message body; any overrun sets err and returns 0 /
 * NULL, so a handler checks err once at the end. */
typedef struct PgwReader {
    const uint8_t *p;
    size_t         len;
    size_t         pos;
    bool           err;
} PgwReader;

void        pgw_reader_init(PgwReader *r, const uint8_t *p, size_t len);
uint8_t     pgw_get_byte(PgwReader *r);
int16_t     pgw_get_int16(PgwReader *r);
int32_t     pgw_get_int32(PgwReader *r);
/* A NUL-terminated string inside the body; points into the buffer. */
const char *pgw_get_cstr(PgwReader *r);
/* n raw bytes; points into the buffer. */
const uint8_t *pgw_get_bytes(PgwReader *r, size_t n);
/* True when the body was read exactly to its end without error. */
bool        pgw_reader_done(const PgwReader *r);

/* A decoded startup packet. */
typedef struct PgwStartup {
    int32_t code;               /* PGW_PROTOCOL_V3 or one of the request codes */
    /* CancelRequest */
    int32_t cancel_pid;
    int32_t cancel_key;
    /* StartupMessage: name/value pairs, pointing into the packet */
    int         nparams;
    const char *names[64];
    const char *values[64];
} PgwStartup;

/* Decodes a whole startup packet (as framed above).  Returns 0, or -1 with
 * a message in *why when it is malformed. */
int pgw_parse_startup(const uint8_t *pkt, size_t len, PgwStartup *out, const char **why);

/* Message building: begin writes the type and a length placeholder, end
 * patches the length. */
size_t pgw_begin(StrBuf *b, char type);
void   pgw_put_byte(StrBuf *b, uint8_t v);
void   pgw_put_int16(StrBuf *b, int16_t v);
void   pgw_put_int32(StrBuf *b, int32_t v);
void   pgw_put_cstr(StrBuf *b, const char *s);
void   pgw_put_bytes(StrBuf *b, const void *p, size_t n);
void   pgw_end(StrBuf *b, size_t start);

#endif /* SLUICE_PGW_PROTO_H */
