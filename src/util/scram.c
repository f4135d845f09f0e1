/*
 * scram.c -- SCRAM-SHA-256 exchange, stored verifiers and md5 (base64:
 * base64.c).
 *
 *   scram_secret_parse, scram_secret_make, scram_secret_format,
 *   scram_verify_plain, scram_server_first, scram_server_final,
 *   scram_state_free, md5_hex, md5_password_hex
 *
 * See scram.h.  The exchange (RFC 5802 section 3, with SHA-256 as RFC 7677):
 *
 *   SaltedPassword  = PBKDF2-HMAC-SHA-256(password, salt, i)
 *   ClientKey       = HMAC(SaltedPassword, "Client Key")
 *   StoredKey       = SHA-256(ClientKey)
 *   ServerKey       = HMAC(SaltedPassword, "Server Key")
 *   AuthMessage     = client-first-bare "," server-first "," client-final-without-proof
 *   ClientProof     = ClientKey XOR HMAC(StoredKey, AuthMessage)
 *   ServerSignature = HMAC(ServerKey, AuthMessage)
 *
 * The server keeps StoredKey and ServerKey; it recovers ClientKey from the
 * proof and checks that its SHA-256 is StoredKey.
 *
 * It is util's, below every floor that uses it: the server's exchange
 * (server/auth.c) and the verifiers CREATE / ALTER ROLE store
 * (runtime/roles.c).
 */
#include "sluice/scram.h"
#include "sluice/base64.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>

#define SCRAM_PREFIX "SCRAM-SHA-256$"

static void sha256(const void *data, size_t len, uint8_t out[SCRAM_KEY_LEN])
{
    unsigned int n = SCRAM_KEY_LEN;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1)
        sl_panic("EVP_Digest(sha256) failed");
}

static void hmac(const uint8_t *key, size_t keylen, const void *data, size_t len,
                 uint8_t out[SCRAM_KEY_LEN])
{
    unsigned int n = SCRAM_KEY_LEN;
    if (HMAC(EVP_sha256(), key, (int)keylen, data, len, out, &n) == NULL)
        sl_panic("HMAC(sha256) failed");
}

void md5_hex(const void *data, size_t len, char out[33])
{
    uint8_t d[16];
    unsigned int n = sizeof(d);
    if (EVP_Digest(data, len, d, &n, EVP_md5(), NULL) != 1)
        sl_panic("EVP_Digest(md5) failed");
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[32] = '\0';
}

void md5_password_hex(const char *password, const char *user, char out[33])
{
    StrBuf b;
    strbuf_init(&b);
    strbuf_puts(&b, password);
    strbuf_puts(&b, user);
    md5_hex(b.data, b.len, out);
    OPENSSL_cleanse(b.data, b.len);
    strbuf_free(&b);
}

/* ---------------------------------------------------------------------- */
/* Verifiers                                                               */

/* Decodes exactly want bytes of base64 from [s, e). */
static bool b64_exact(const char *s, const char *e, uint8_t *out, int want)
{
    uint8_t tmp[SCRAM_MAX_SALT_LEN + 4];
    int64_t n = b64_decode(s, (size_t)(e - s), false, tmp, sizeof(tmp), NULL);
    if (n != want)
        return false;
    memcpy(out, tmp, (size_t)n);
    return true;
}

int scram_secret_parse(const char *s, ScramSecret *out)
{
    memset(out, 0, sizeof(*out));
    size_t pl = strlen(SCRAM_PREFIX);
    if (strncmp(s, SCRAM_PREFIX, pl) != 0)
        return -1;
    s += pl;
    char *end;
    long iter = strtol(s, &end, 10);
    if (end == s || *end != ':' || iter < 1 || iter > 100000000)
        return -1;
    out->iterations = (int)iter;
    const char *salt = end + 1;
    const char *dollar = strchr(salt, '$');
    if (dollar == NULL)
        return -1;
    int64_t n = b64_decode(salt, (size_t)(dollar - salt), false, out->salt, sizeof(out->salt),
                           NULL);
    if (n <= 0)
        return -1;
    out->salt_len = (int)n;
    const char *keys = dollar + 1;
    const char *colon = strchr(keys, ':');
    if (colon == NULL)
        return -1;
    if (!b64_exact(keys, colon, out->stored_key, SCRAM_KEY_LEN) ||
        !b64_exact(colon + 1, colon + 1 + strlen(colon + 1), out->server_key, SCRAM_KEY_LEN))
        return -1;
    return 0;
}

static void salted_password(const char *password, size_t len, const uint8_t *salt,
                            int salt_len, int iterations, uint8_t out[SCRAM_KEY_LEN])
{
    if (PKCS5_PBKDF2_HMAC(password, (int)len, salt, salt_len, iterations, EVP_sha256(),
                          SCRAM_KEY_LEN, out) != 1)
        sl_panic("PKCS5_PBKDF2_HMAC failed");
}

void scram_secret_make(const char *password, size_t password_len, const uint8_t *salt,
                       int salt_len, int iterations, ScramSecret *out)
{
    uint8_t sp[SCRAM_KEY_LEN], ck[SCRAM_KEY_LEN];
    memset(out, 0, sizeof(*out));
    out->iterations = iterations;
    out->salt_len = SL_MIN(salt_len, SCRAM_MAX_SALT_LEN);
    memcpy(out->salt, salt, (size_t)out->salt_len);
    salted_password(password, password_len, out->salt, out->salt_len, iterations, sp);
    hmac(sp, sizeof(sp), "Client Key", 10, ck);
    sha256(ck, sizeof(ck), out->stored_key);
    hmac(sp, sizeof(sp), "Server Key", 10, out->server_key);
    OPENSSL_cleanse(sp, sizeof(sp));
    OPENSSL_cleanse(ck, sizeof(ck));
}

void scram_secret_format(const ScramSecret *secret, StrBuf *out)
{
    strbuf_printf(out, SCRAM_PREFIX "%d:", secret->iterations);
    b64_encode(secret->salt, (size_t)secret->salt_len, out);
    strbuf_putc(out, '$');
    b64_encode(secret->stored_key, SCRAM_KEY_LEN, out);
    strbuf_putc(out, ':');
    b64_encode(secret->server_key, SCRAM_KEY_LEN, out);
}

bool scram_verify_plain(const ScramSecret *secret, const char *password, size_t len)
{
    ScramSecret again;
    scram_secret_make(password, len, secret->salt, secret->salt_len, secret->iterations,
                      &again);
    bool ok = CRYPTO_memcmp(again.server_key, secret->server_key, SCRAM_KEY_LEN) == 0;
    OPENSSL_cleanse(&again, sizeof(again));
    return ok;
}

/* ---------------------------------------------------------------------- */
/* The exchange                                                            */

/* Reads "k=value" at *p (up to the next ',' or the end) into a new string;
 * advances *p past the comma.  NULL if the attribute is not k. */
static char *read_attr(const char **p, const char *end, char k)
{
    const char *s = *p;
    if (end - s < 2 || s[0] != k || s[1] != '=')
        return NULL;
    s += 2;
    const char *comma = memchr(s, ',', (size_t)(end - s));
    const char *stop = comma ? comma : end;
    char *v = sl_strndup(s, (size_t)(stop - s));
    *p = comma ? comma + 1 : end;
    return v;
}

static bool printable_nonce(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < 0x21 || *s > 0x7e || *s == ',')
            return false;
    return true;
}

void scram_state_free(ScramState *st)
{
    sl_free(st->client_first_bare);
    sl_free(st->server_first);
    sl_free(st->nonce);
    OPENSSL_cleanse(&st->secret, sizeof(st->secret));
    memset(st, 0, sizeof(*st));
}

int scram_server_first(ScramState *st, const ScramSecret *secret, const uint8_t *mock_key,
                       const char *user, const char *msg, size_t len, StrBuf *server_first,
                       const char **why)
{
    const char *p = msg, *end = msg + len;
    memset(st, 0, sizeof(*st));
    if (memchr(msg, '\0', len) != NULL) {
        *why = "malformed SCRAM message (NUL byte)";
        return -1;
    }
    /* gs2-header: channel binding flag, authzid */
    if (len < 3) {
        *why = "malformed SCRAM message (message too short)";
        return -1;
    }
    if (p[0] == 'p') {
        *why = "channel binding is not supported by this server";
        return -1;
    }
    if ((p[0] != 'n' && p[0] != 'y') || p[1] != ',') {
        *why = "malformed SCRAM message (unexpected channel-binding flag)";
        return -1;
    }
    if (p[2] != ',') {
        *why = p[2] == 'a' ? "client uses authorization identity, but it is not supported"
                           : "malformed SCRAM message (unexpected attribute in client-first-message)";
        return -1;
    }
    memcpy(st->gs2_header, p, 3);
    st->gs2_header[3] = '\0';
    p += 3;
    const char *bare = p;
    if (end - p >= 2 && p[0] == 'm' && p[1] == '=') {
        *why = "client requires an unsupported SCRAM extension";
        return -1;
    }
    char *name = read_attr(&p, end, 'n');
    if (name == NULL) {
        *why = "malformed SCRAM message (expected attribute \"n\")";
        return -1;
    }
    sl_free(name);      /* ignored: the startup packet's user counts */
    char *cnonce = read_attr(&p, end, 'r');
    if (cnonce == NULL || !printable_nonce(cnonce)) {
        sl_free(cnonce);
        *why = "malformed SCRAM message (expected a nonce)";
        return -1;
    }
    /* Anything after the nonce is an optional extension: ignored. */

    if (secret != NULL) {
        st->secret = *secret;
    } else {
        /* A mock exchange: a salt that depends only on the user, so that a
         * client cannot tell unknown users from known ones. */
        uint8_t h[SCRAM_KEY_LEN];
        hmac(mock_key, SCRAM_KEY_LEN, user, strlen(user), h);
        st->mock = true;
        st->secret.iterations = SCRAM_DEFAULT_ITER;
        st->secret.salt_len = 16;
        memcpy(st->secret.salt, h, 16);
        if (RAND_bytes(st->secret.stored_key, SCRAM_KEY_LEN) != 1 ||
            RAND_bytes(st->secret.server_key, SCRAM_KEY_LEN) != 1)
            sl_panic("RAND_bytes failed");
    }
    uint8_t raw[SCRAM_NONCE_LEN];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        sl_panic("RAND_bytes failed");
    StrBuf b;
    strbuf_init(&b);
    strbuf_puts(&b, cnonce);
    b64_encode(raw, sizeof(raw), &b);
    st->nonce = strbuf_steal(&b, NULL);
    sl_free(cnonce);
    st->client_first_bare = sl_strndup(bare, (size_t)(end - bare));

    strbuf_init(&b);
    strbuf_printf(&b, "r=%s,s=", st->nonce);
    b64_encode(st->secret.salt, (size_t)st->secret.salt_len, &b);
    strbuf_printf(&b, ",i=%d", st->secret.iterations);
    st->server_first = sl_strndup(b.data, b.len);
    strbuf_append(server_first, b.data, b.len);
    strbuf_free(&b);
    return 0;
}

int scram_server_final(ScramState *st, const char *msg, size_t len, StrBuf *server_final,
                       const char **why)
{
    const char *p = msg, *end = msg + len;
    if (memchr(msg, '\0', len) != NULL) {
        *why = "malformed SCRAM message (NUL byte)";
        return -1;
    }
    /* c=: the gs2 header again, base64 */
    char *cbind = read_attr(&p, end, 'c');
    if (cbind == NULL) {
        *why = "malformed SCRAM message (expected attribute \"c\")";
        return -1;
    }
    uint8_t hdr[16];
    int64_t n = b64_decode(cbind, strlen(cbind), false, hdr, sizeof(hdr), NULL);
    sl_free(cbind);
    if (n != (int64_t)strlen(st->gs2_header) || memcmp(hdr, st->gs2_header, (size_t)n) != 0) {
        *why = "SCRAM channel binding check failed";
        return -1;
    }
    char *nonce = read_attr(&p, end, 'r');
    if (nonce == NULL || strcmp(nonce, st->nonce) != 0) {
        sl_free(nonce);
        *why = "SCRAM nonce mismatch";
        return -1;
    }
    sl_free(nonce);
    /* Skip extensions up to the proof, which must come last. */
    while (p < end && !(end - p >= 2 && p[0] == 'p' && p[1] == '=')) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        p = comma ? comma + 1 : end;
    }
    if (p >= end || p == msg) {
        *why = "malformed SCRAM message (expected attribute \"p\")";
        return -1;
    }
    size_t without_proof = (size_t)(p - msg) - 1;     /* before ",p=" */
    uint8_t proof[SCRAM_KEY_LEN];
    if (b64_decode(p + 2, (size_t)(end - p - 2), false, proof, sizeof(proof), NULL) !=
        SCRAM_KEY_LEN) {
        *why = "malformed SCRAM message (malformed proof in client-final-message)";
        return -1;
    }

    StrBuf am;
    strbuf_init(&am);
    strbuf_puts(&am, st->client_first_bare);
    strbuf_putc(&am, ',');
    strbuf_puts(&am, st->server_first);
    strbuf_putc(&am, ',');
    strbuf_append(&am, msg, without_proof);

    uint8_t sig[SCRAM_KEY_LEN], ck[SCRAM_KEY_LEN], stored[SCRAM_KEY_LEN];
    hmac(st->secret.stored_key, SCRAM_KEY_LEN, am.data, am.len, sig);
    for (int i = 0; i < SCRAM_KEY_LEN; i++)
        ck[i] = proof[i] ^ sig[i];
    sha256(ck, sizeof(ck), stored);
    bool ok = CRYPTO_memcmp(stored, st->secret.stored_key, SCRAM_KEY_LEN) == 0 && !st->mock;
    if (ok) {
        uint8_t ssig[SCRAM_KEY_LEN];
        hmac(st->secret.server_key, SCRAM_KEY_LEN, am.data, am.len, ssig);
        strbuf_puts(server_final, "v=");
        b64_encode(ssig, sizeof(ssig), server_final);
    }
    OPENSSL_cleanse(ck, sizeof(ck));
    strbuf_free(&am);
    return ok ? 1 : 0;
}
