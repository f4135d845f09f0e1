/*
 * tls.c -- TLS on a libuv socket with OpenSSL memory BIOs.
 *
 *   tls_init          the server's SSL_CTX from ssl_cert_file/ssl_key_file
 *                     (and ssl_ca_file); TLS 1.2 at least, no renegotiation
 *   tls_free          free it
 *   tls_conn_start    after 'S' went out: a new SSL in the accept state
 *   tls_handshake_feed  raw bytes during the handshake: SSL_do_handshake on
 *                     the thread pool (its signatures and key exchange are
 *                     what a burst of TLS connections would stall the loop
 *                     with), one step at a time per connection
 *   tls_conn_read     raw bytes from the socket in; handshake; plaintext out
 *                     into c->in
 *   tls_conn_write    plaintext in, ciphertext out (to be uv_written)
 *   tls_conn_shutdown queue a close_notify alert
 *   tls_conn_free     free the connection's SSL (and its BIOs)
 *
 * OpenSSL never touches the socket: what libuv reads is written into the
 * SSL's read BIO, what OpenSSL produces (handshake records, encrypted
 * application data, alerts) is taken from its write BIO and handed to
 * uv_write by conn.c.  With memory BIOs SSL_write never blocks half-way, so
 * a whole buffer is always consumed.
 */
#include "pgw.h"
#include "sluice/log.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>

static void drain_wbio(Conn *c, StrBuf *out)
{
    BIO *w = SSL_get_wbio(c->ssl);
    char buf[16384];
    int n;
    while ((n = BIO_read(w, buf, sizeof(buf))) > 0)
        strbuf_append(out, buf, (size_t)n);
}

/* The oldest error of this thread's OpenSSL queue, as text in buf (the
 * caller's: handshake steps fail on several pool threads at once), which it
 * returns; the queue is left empty. */
static const char *ssl_error_string(char *buf, size_t size)
{
    unsigned long e = ERR_get_error();
    if (e == 0)
        snprintf(buf, size, "unknown error");
    else
        ERR_error_string_n(e, buf, size);
    ERR_clear_error();
    return buf;
}

int tls_init(Server *s, const ServerConfig *cfg, SlError *err)
{
    char eb[256];      /* an OpenSSL error's text */
    if (!cfg->ssl)
        return 0;
    if (cfg->ssl_cert_file == NULL || cfg->ssl_key_file == NULL)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "ssl = on needs ssl_cert_file and ssl_key_file");
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return sl_error(err, ERRCODE_INTERNAL_ERROR, "SSL_CTX_new: %s",
                        ssl_error_string(eb, sizeof(eb)));
    s->ssl_ctx = ctx;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                 SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg->ssl_cert_file) != 1)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "could not load server certificate file \"%s\": %s",
                        cfg->ssl_cert_file, ssl_error_string(eb, sizeof(eb)));
    if (SSL_CTX_use_PrivateKey_file(ctx, cfg->ssl_key_file, SSL_FILETYPE_PEM) != 1)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "could not load private key file \"%s\": %s",
                        cfg->ssl_key_file, ssl_error_string(eb, sizeof(eb)));
    if (SSL_CTX_check_private_key(ctx) != 1)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "private key file \"%s\" does not match the certificate",
                        cfg->ssl_key_file);
    if (cfg->ssl_ca_file != NULL && *cfg->ssl_ca_file) {
        if (SSL_CTX_load_verify_locations(ctx, cfg->ssl_ca_file, NULL) != 1)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "could not load root certificate file \"%s\": %s",
                            cfg->ssl_ca_file, ssl_error_string(eb, sizeof(eb)));
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->ssl_ca_file);
        if (names != NULL)
            SSL_CTX_set_client_CA_list(ctx, names);
        /* A client certificate is asked for and checked when sent, as
         * PostgreSQL does with ssl_ca_file; none is required. */
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    return 0;
}

void tls_free(Server *s)
{
    if (s->ssl_ctx != NULL)
        SSL_CTX_free(s->ssl_ctx);
    s->ssl_ctx = NULL;
}

typedef struct TlsStep {
    uv_work_t req;
    Conn     *conn;
    SSL      *ssl;
    StrBuf    out;          /* handshake records to send */
    int       rc;           /* 1 done, 0 wants more, -1 failed */
    char      why[256];     /* the OpenSSL error of a failure */
} TlsStep;

static void step_work_cb(uv_work_t *req)
{
    TlsStep *t = req->data;
    int rc = SSL_do_handshake(t->ssl);
    BIO *w = SSL_get_wbio(t->ssl);
    char buf[16384];
    int n;
    while ((n = BIO_read(w, buf, sizeof(buf))) > 0)
        strbuf_append(&t->out, buf, (size_t)n);
    if (rc == 1) {
        t->rc = 1;
    } else {
        int e = SSL_get_error(t->ssl, rc);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            t->rc = 0;
        } else {
            t->rc = -1;
            ssl_error_string(t->why, sizeof(t->why));
        }
    }
    /* OpenSSL's error queue is per thread: leave this one empty. */
    ERR_clear_error();
}

static void step_after_cb(uv_work_t *req, int status)
{
    TlsStep *t = req->data;
    Conn *c = t->conn;
    SL_UNUSED(status);
    c->tls_busy = false;
    if (c->phase == PHASE_CLOSING) {
        if (c->orphaned && !conn_busy(c))
            conn_free(c);
    } else {
        strbuf_append(&c->tls_out, t->out.data, t->out.len);
        if (t->rc < 0) {
            sl_log(LOG_INFO, "TLS handshake failed", "peer=%s error=\"%s\"", c->peer, t->why);
        } else if (t->rc == 1) {
            c->tls_up = true;
            sl_log(LOG_DEBUG, "TLS handshake done", "peer=%s version=%s cipher=%s", c->peer,
                   SSL_get_version(c->ssl), SSL_get_cipher_name(c->ssl));
        }
        conn_tls_step_done(c, t->rc < 0 ? -1 : 0);
    }
    strbuf_free(&t->out);
    sl_free(t);
}

void tls_handshake_feed(Conn *c, const uint8_t *data, size_t n)
{
    if (c->tls_busy) {
        strbuf_append(&c->tls_pending, data, n);
        return;
    }
    if (n > 0 && BIO_write(SSL_get_rbio(c->ssl), data, (int)n) != (int)n)
        sl_panic("BIO_write to a memory BIO failed");
    TlsStep *t = sl_calloc(1, sizeof(TlsStep));
    t->req.data = t;
    t->conn = c;
    t->ssl = c->ssl;
    strbuf_init(&t->out);
    if (uv_queue_work(c->server->loop, &t->req, step_work_cb, step_after_cb) != 0)
        sl_panic("uv_queue_work failed");
    c->tls_busy = true;
}

void tls_conn_start(Conn *c)
{
    SSL *ssl = SSL_new(c->server->ssl_ctx);
    if (ssl == NULL)
        sl_panic("SSL_new failed");
    BIO *r = BIO_new(BIO_s_mem()), *w = BIO_new(BIO_s_mem());
    if (r == NULL || w == NULL)
        sl_panic("BIO_new failed");
    /* An empty read BIO means "want more", not end of file. */
    BIO_set_mem_eof_return(r, -1);
    BIO_set_mem_eof_return(w, -1);
    SSL_set_bio(ssl, r, w);
    SSL_set_accept_state(ssl);
    c->ssl = ssl;
}

int tls_conn_read(Conn *c, const uint8_t *data, size_t n, StrBuf *out)
{
    char eb[256];      /* an OpenSSL error's text */
    if (n > 0 && BIO_write(SSL_get_rbio(c->ssl), data, (int)n) != (int)n)
        sl_panic("BIO_write to a memory BIO failed");
    if (!c->tls_up) {
        int rc = SSL_do_handshake(c->ssl);
        drain_wbio(c, out);
        if (rc != 1) {
            int e = SSL_get_error(c->ssl, rc);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return 0;
            sl_log(LOG_INFO, "TLS handshake failed", "peer=%s error=\"%s\"", c->peer,
                   ssl_error_string(eb, sizeof(eb)));
            return -1;
        }
        c->tls_up = true;
        sl_log(LOG_DEBUG, "TLS handshake done", "peer=%s version=%s cipher=%s", c->peer,
               SSL_get_version(c->ssl), SSL_get_cipher_name(c->ssl));
    }
    for (;;) {
        if (c->in_cap - c->in_len < 16384) {
            c->in_cap = c->in_cap ? c->in_cap * 2 : 65536;
            c->in = sl_realloc(c->in, c->in_cap);
        }
        int got = SSL_read(c->ssl, c->in + c->in_len, (int)SL_MIN(c->in_cap - c->in_len,
                                                                  (size_t)1 << 30));
        if (got > 0) {
            c->in_len += (size_t)got;
            continue;
        }
        int e = SSL_get_error(c->ssl, got);
        drain_wbio(c, out);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            return 0;
        if (e == SSL_ERROR_ZERO_RETURN)
            return -1;      /* close_notify: the client is done */
        sl_log(LOG_INFO, "TLS read failed", "peer=%s error=\"%s\"", c->peer,
               ssl_error_string(eb, sizeof(eb)));
        return -1;
    }
}

int tls_conn_write(Conn *c, const void *data, size_t n, StrBuf *out)
{
    char eb[256];      /* an OpenSSL error's text */
    const char *p = data;
    while (n > 0) {
        int chunk = (int)SL_MIN(n, (size_t)1 << 30);
        int rc = SSL_write(c->ssl, p, chunk);
        if (rc <= 0) {
            sl_log(LOG_INFO, "TLS write failed", "peer=%s error=\"%s\"", c->peer,
                   ssl_error_string(eb, sizeof(eb)));
            return -1;
        }
        p += rc;
        n -= (size_t)rc;
        drain_wbio(c, out);
    }
    drain_wbio(c, out);
    return 0;
}

void tls_conn_shutdown(Conn *c, StrBuf *out)
{
    if (c->ssl != NULL && c->tls_up) {
        SSL_shutdown(c->ssl);
        drain_wbio(c, out);
    }
}

void tls_conn_free(Conn *c)
{
    if (c->ssl != NULL)
        SSL_free(c->ssl);
    c->ssl = NULL;
    ERR_clear_error();
}
