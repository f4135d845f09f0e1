/*
 * server.h -- the PostgreSQL-protocol server on a libuv loop.
 *
 *   server_init   bind and listen, load the TLS certificate and the
 *                 authentication rules; returns NULL with err set on failure
 *   server_port   the bound port
 *   server_md5_rules  whether an hba rule uses md5
 *   server_address_is_loopback   127.0.0.0/8 or ::1 (auth.c)
 *   server_close  stop listening; statements in flight finish (cancelled
 *                 past shutdown_timeout) and are answered, then every
 *                 session ends with FATAL 57P01; cb runs once all handles
 *                 are closed and the Server's memory may be freed
 *
 * The configuration is copied: the strings it points to need not outlive
 * server_init; the statement pool must outlive the server.
 */
#ifndef SLUICE_SERVER_H
#define SLUICE_SERVER_H

#include <uv.h>
#include "sluice/common.h"
#include "sluice/error.h"
#include "sluice/pool.h"

typedef struct Server Server;

/* A user known to the server and its secret: a password in clear, an MD5
 * hash as PostgreSQL stores it ("md5" + 32 hex digits of md5(password ||
 * user)), or a SCRAM verifier
 * ("SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>", base64). */
typedef struct ServerUser {
    const char *name;
    const char *secret;
} ServerUser;

typedef struct ServerConfig {
    const char *listen;         /* address to bind, e.g. "127.0.0.1" */
    int         port;           /* 0 picks a free port */
    int         max_connections;
    size_t      max_message_size;
    size_t      max_output_buffer;  /* stop reading a client past this */
    int         max_prepared_statements;  /* named ones (and portals) per
                                           * connection; 53400 past it */
    int         authentication_timeout; /* seconds from accept to ready */
    int         log_min_duration_statement; /* ms, each session's default; -1 off */
    int         shutdown_timeout;   /* seconds in-flight statements get at
                                     * server_close before they are cancelled */

    /* Authentication (docs/operations.md).  hba: pg_hba.conf-like rules,
     * "TYPE DATABASE USER ADDRESS METHOD", first match wins; with none,
     * connections from loopback are trusted and others refused. */
    const ServerUser  *users;
    int                nusers;
    const char *const *hba;
    int                nhba;

    /* TLS: with ssl, an SSLRequest is answered 'S' and the handshake runs
     * on the same socket.  ssl_ca_file (optional) lets clients present
     * certificates signed by that CA. */
    bool        ssl;
    const char *ssl_cert_file;
    const char *ssl_key_file;
    const char *ssl_ca_file;

    /* The pool statements run on (pool.h; main makes it, with
     * statement_workers threads, and closes it after the loop ended). */
    Pool       *statements;
    /* The server's context (runtime.h): statements are prepared in it;
     * each session reaches it through its server. */
    struct Runtime *rt;

    /* Debugging: a 10 ms timer measures how late the loop runs it; the
     * worst lag is logged at shutdown ("loop lag"). */
    bool        debug_loop_lag;
} ServerConfig;

typedef void (*server_close_cb)(Server *s);

/* Creates the server on loop; returns NULL with err set (a bad rule, a
 * certificate that does not load, an address in use). */
Server *server_init(uv_loop_t *loop, const ServerConfig *cfg, SlError *err);
/* The port actually bound (useful with port 0). */
int     server_port(const Server *s);
/* Is addr (an IPv4 or IPv6 address in text) a loopback one: 127.0.0.0/8,
 * ::1, ::ffff:127.x.y.z?  Not an address: false. */
bool    server_address_is_loopback(const char *addr);
/* Does an hba rule use the md5 method?  Only then does the catalog keep
 * md5 password hashes (rt_roles_md5). */
bool    server_md5_rules(const Server *s);
/* SIGHUP: replaces the configured users and the hba rules (as in
 * ServerConfig) for the connections that start after it; on an error (a
 * bad rule, a bad SCRAM verifier, no rule left on an address that is not
 * loopback) the old ones stay and err says why. */
int     server_reload_auth(Server *s, const ServerUser *users, int nusers,
                           const char *const *hba, int nhba, SlError *err);
void    server_close(Server *s, server_close_cb cb);

#endif /* SLUICE_SERVER_H */
