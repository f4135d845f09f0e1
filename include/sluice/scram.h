/*
 * scram.h -- SCRAM-SHA-256 (RFC 5802, RFC 7677) on the server side, and the
 * password hashes PostgreSQL stores.
 *
 *   scram_secret_parse     read a stored verifier "SCRAM-SHA-256$i:salt$SK:SK"
 *   scram_secret_make      derive a verifier from a password (PBKDF2)
 *   scram_secret_format    write a verifier in the stored form
 *   scram_verify_plain     does a password match a verifier?
 *   scram_server_first     handle client-first-message, build server-first
 *   scram_server_final     check client-final-message's proof, build
 *                          server-final
 *   md5_hex                md5 of bytes as 32 hex digits
 *   md5_password_hex       md5(password || user) as PostgreSQL's md5 hash
 *
 * Pure functions over bytes (OpenSSL's EVP for the hashes, PBKDF2 and
 * HMAC; RAND_bytes for nonces; base64.h for base64), so they are
 * unit-testable on their own.
 * The proof is compared with CRYPTO_memcmp.  The user name in the SCRAM
 * messages is ignored, as PostgreSQL does: the startup packet's user is the
 * one that counts.  Channel binding (SCRAM-SHA-256-PLUS) is not offered;
 * a client that asks for it ("p=") is refused, one that says it could have
 * ("y") is accepted.  Passwords are used as bytes, without SASLprep, which
 * gives the same result as PostgreSQL for ASCII passwords.
 */
#ifndef SLUICE_SCRAM_H
#define SLUICE_SCRAM_H

#include "sluice/common.h"
#include "sluice/strbuf.h"

#define SCRAM_KEY_LEN        32      /* SHA-256 */
#define SCRAM_MAX_SALT_LEN   64
#define SCRAM_DEFAULT_ITER   4096
#define SCRAM_NONCE_LEN      18      /* random bytes; 24 in base64 */

typedef struct ScramSecret {
    int     iterations;
    int     salt_len;
    uint8_t salt[SCRAM_MAX_SALT_LEN];
    uint8_t stored_key[SCRAM_KEY_LEN];
    uint8_t server_key[SCRAM_KEY_LEN];
} ScramSecret;

/* The state of one exchange, between the two client messages. */
typedef struct ScramState {
    ScramSecret secret;
    bool        mock;           /* no valid secret: always fail at the end */
    char        gs2_header[8];  /* "n,," or "y,," */
    char       *client_first_bare;
    char       *server_first;
    char       *nonce;          /* client nonce + server nonce */
} ScramState;

/* Parses a verifier; returns 0, or -1 if s is not one. */
int  scram_secret_parse(const char *s, ScramSecret *out);
/* Derives a verifier from password with the given salt and iterations. */
void scram_secret_make(const char *password, size_t password_len, const uint8_t *salt,
                       int salt_len, int iterations, ScramSecret *out);
/* Appends "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>". */
void scram_secret_format(const ScramSecret *secret, StrBuf *out);
/* True when password matches the verifier (its ServerKey is derived again). */
bool scram_verify_plain(const ScramSecret *secret, const char *password, size_t len);

/* Handles client-first-message (msg, len bytes).  secret NULL makes a mock
 * exchange that runs to the end and fails (the user has no usable secret),
 * with a salt derived from mock_key and user so that it looks stable.
 * On success st owns strings (free with scram_state_free) and server_first
 * holds the answer.  Returns 0, or -1 with *why set for a malformed message
 * or an unsupported option. */
int  scram_server_first(ScramState *st, const ScramSecret *secret,
                        const uint8_t *mock_key, const char *user,
                        const char *msg, size_t len, StrBuf *server_first,
                        const char **why);
/* Handles client-final-message.  Returns 1 when the proof is right (then
 * server_final holds "v=..."), 0 when it is wrong, -1 with *why when the
 * message is malformed. */
int  scram_server_final(ScramState *st, const char *msg, size_t len,
                        StrBuf *server_final, const char **why);
void scram_state_free(ScramState *st);

/* md5 of data as 32 lowercase hex digits and a NUL (out: 33 bytes). */
void md5_hex(const void *data, size_t len, char out[33]);
/* md5(password || user) as 32 hex digits: PostgreSQL's stored md5 hash
 * without its "md5" prefix.  The concatenation is wiped after use. */
void md5_password_hex(const char *password, const char *user, char out[33]);

#endif /* SLUICE_SCRAM_H */
