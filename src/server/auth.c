/*
 * auth.c -- client authentication: users, hba rules and the password
 * exchanges of the startup phase.
 *
 *   auth_init         copy the configured users and parse the hba rules
 *   auth_reload       the same again (SIGHUP): the new users and rules
 *                     replace the old ones only when all of them parse
 *   auth_free         free them
 *   auth_md5_rules    whether any rule uses md5 (the catalog keeps md5
 *                     hashes only then: rt_roles_md5)
 *   server_address_is_loopback   (server.h) for auth_init and http.c
 *   auth_start        after a StartupMessage: pick the rule that matches the
 *                     connection, then accept it (trust), refuse it (reject,
 *                     no rule) or ask for a password
 *   auth_message      a PasswordMessage / SASLInitialResponse / SASLResponse
 *   auth_conn_free    per-connection exchange state
 *
 * Rules are pg_hba.conf lines without the file: "TYPE DATABASE USER ADDRESS
 * METHOD", TYPE host | hostssl | hostnossl, DATABASE and USER "all" or a
 * comma-separated list of names (DATABASE also "sameuser"), ADDRESS "all"
 * or an IPv4/IPv6 address with an optional /prefix length, METHOD trust |
 * reject | password | md5 | scram-sha-256.  The first rule whose type,
 * database, user and address match decides; with no rules at all,
 * connections from loopback are trusted, and auth_init refuses a listen
 * address that is not loopback (22023), as auth_reload refuses to drop
 * the last rule of such a server.  A reload reaches only connections that
 * start authenticating after it: those in an exchange look their user up
 * by name at each step, so a secret changed under them fails that
 * exchange, never uses freed memory.
 *
 * A user's secret is its role's password in the catalog when it has one
 * (rt_role_secret: a SCRAM verifier and an md5 hash; for an md5 rule the
 * md5 hash is used when there is one), else the config file's.  Once
 * authenticated, the user logs in to its role (rt_role_login): a NOLOGIN
 * role is refused with 28000.
 *
 * Secrets are what PostgreSQL stores: a password in clear, "md5" + hex, or
 * a SCRAM verifier.  As in PostgreSQL, md5 with a SCRAM verifier runs
 * SCRAM instead, scram-sha-256 with an md5 hash cannot succeed, and a user
 * without a usable secret still goes through a (mock) exchange and gets
 * the same "password authentication failed" as a wrong password, so that a
 * client cannot probe which users exist.
 */
#include "pgw.h"
#include "sluice/scram.h"
#include "sluice/log.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>

/* The largest password or SASL message accepted (PostgreSQL's
 * PG_MAX_AUTH_TOKEN_LENGTH). */
#define AUTH_MAX_TOKEN 65535

typedef enum HbaType { HBA_HOST, HBA_HOSTSSL, HBA_HOSTNOSSL } HbaType;

typedef enum AuthMethod {
    AUTH_TRUST, AUTH_REJECT, AUTH_PASSWORD, AUTH_MD5, AUTH_SCRAM
} AuthMethod;

static const char *const method_names[] = {
    [AUTH_TRUST] = "trust", [AUTH_REJECT] = "reject", [AUTH_PASSWORD] = "password",
    [AUTH_MD5] = "md5", [AUTH_SCRAM] = "scram-sha-256",
};

struct HbaRule {
    HbaType    type;
    char      *databases;       /* "all", "sameuser" or a,b,c */
    char      *users;           /* "all" or a,b,c */
    int        family;          /* 0: any address; AF_INET; AF_INET6 */
    uint8_t    addr[16];
    uint8_t    mask[16];
    AuthMethod method;
};

typedef enum SecretKind { SECRET_NONE, SECRET_PLAIN, SECRET_MD5, SECRET_SCRAM } SecretKind;

struct AuthUser {
    char       *name;
    char       *secret;
    SecretKind  kind;
    ScramSecret scram;          /* SECRET_SCRAM, or derived from a plain one */
    bool        have_scram;
};

typedef enum AuthStep {
    STEP_PASSWORD,              /* sent AuthenticationCleartextPassword */
    STEP_MD5,                   /* sent AuthenticationMD5Password */
    STEP_SASL_INITIAL,          /* sent AuthenticationSASL */
    STEP_SASL_FINAL,            /* sent AuthenticationSASLContinue */
} AuthStep;

struct AuthConn {
    AuthStep    step;
    AuthMethod  method;
    uint8_t     md5_salt[4];
    ScramState  scram;
    /* The user's password from the catalog (CREATE ROLE ... PASSWORD),
     * which counts before the config file's; expired: past VALID UNTIL. */
    AuthUser    role_user;
    bool        has_role_user;
    bool        expired;
};

/* ---------------------------------------------------------------------- */
/* Configuration                                                           */

static SecretKind secret_kind(const char *s)
{
    if (strncmp(s, "md5", 3) == 0 && strlen(s) == 35) {
        bool hex = true;
        for (int i = 3; i < 35; i++)
            hex = hex && isxdigit((unsigned char)s[i]) && !isupper((unsigned char)s[i]);
        if (hex)
            return SECRET_MD5;
    }
    if (strncmp(s, "SCRAM-SHA-256$", 14) == 0)
        return SECRET_SCRAM;
    return SECRET_PLAIN;
}

/* Parses an address with an optional /prefix into rule r. */
static int parse_address(const char *s, HbaRule *r)
{
    if (strcmp(s, "all") == 0) {
        r->family = 0;
        return 0;
    }
    char host[64];
    const char *slash = strchr(s, '/');
    size_t hl = slash ? (size_t)(slash - s) : strlen(s);
    if (hl == 0 || hl >= sizeof(host))
        return -1;
    memcpy(host, s, hl);
    host[hl] = '\0';
    int bits;
    if (inet_pton(AF_INET, host, r->addr) == 1) {
        r->family = AF_INET;
        bits = 32;
    } else if (inet_pton(AF_INET6, host, r->addr) == 1) {
        r->family = AF_INET6;
        bits = 128;
    } else {
        return -1;
    }
    if (slash != NULL) {
        char *end;
        long b = strtol(slash + 1, &end, 10);
        if (slash[1] == '\0' || *end != '\0' || b < 0 || b > bits)
            return -1;
        bits = (int)b;
    }
    memset(r->mask, 0, sizeof(r->mask));
    for (int i = 0; i < bits; i++)
        r->mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
    for (int i = 0; i < 16; i++)
        r->addr[i] &= r->mask[i];
    return 0;
}

static int parse_rule(const char *line, HbaRule *r, SlError *err)
{
    char *copy = sl_strdup(line), *save = NULL;
    char *f[6] = {0};
    int n = 0;
    for (char *t = strtok_r(copy, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save))
        if (n < 6)
            f[n++] = t;
        else
            n++;
    int rc = 0;
    memset(r, 0, sizeof(*r));
    if (n != 5) {
        rc = sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                      "invalid hba rule \"%s\": expected TYPE DATABASE USER ADDRESS METHOD",
                      line);
        goto out;
    }
    if (strcmp(f[0], "host") == 0)
        r->type = HBA_HOST;
    else if (strcmp(f[0], "hostssl") == 0)
        r->type = HBA_HOSTSSL;
    else if (strcmp(f[0], "hostnossl") == 0)
        r->type = HBA_HOSTNOSSL;
    else {
        rc = sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                      "invalid hba rule \"%s\": unknown connection type \"%s\"", line, f[0]);
        goto out;
    }
    if (parse_address(f[3], r) < 0) {
        rc = sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                      "invalid hba rule \"%s\": invalid IP address \"%s\"", line, f[3]);
        goto out;
    }
    int m;
    for (m = 0; m < (int)SL_ARRAY_LEN(method_names); m++)
        if (strcmp(f[4], method_names[m]) == 0)
            break;
    if (m == (int)SL_ARRAY_LEN(method_names)) {
        rc = sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                      "invalid hba rule \"%s\": invalid authentication method \"%s\"",
                      line, f[4]);
        goto out;
    }
    r->method = (AuthMethod)m;
    r->databases = sl_strdup(f[1]);
    r->users = sl_strdup(f[2]);
out:
    sl_free(copy);
    return rc;
}

bool server_address_is_loopback(const char *listen)
{
    uint8_t a[16];
    if (inet_pton(AF_INET, listen, a) == 1)
        return a[0] == 127;
    static const uint8_t v6loop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (inet_pton(AF_INET6, listen, a) == 1)
        return memcmp(a, v6loop, 16) == 0 || (memcmp(a, mapped, 12) == 0 && a[12] == 127);
    return false;
}

/* The users and rules of users/nusers and hba/nhba, parsed, into *s's
 * fields on success; on an error nothing of *s changes. */
static int load_auth(Server *s, const ServerUser *users, int nusers, const char *const *hba,
                     int nhba, SlError *err)
{
    /* Without rules only loopback clients get in, trusted: a server that
     * listens elsewhere without rules is a mistake (or a wish for trust
     * that the rules must say), so it does not start. */
    if (nhba == 0 && s->cfg.listen != NULL && !server_address_is_loopback(s->cfg.listen)) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "refusing to listen on %s without hba rules", s->cfg.listen);
        sl_error_hint(err, "Without rules only loopback clients are let in (trusted). Add hba "
                           "rules that say who may connect from where and how, e.g. hba = "
                           "'hostssl all all 0.0.0.0/0 scram-sha-256', or listen on "
                           "127.0.0.1.");
        return -1;
    }
    /* next counts the users and rules made so far: auth_free frees those. */
    Server next = {0};
    next.users = sl_calloc((size_t)(nusers ? nusers : 1), sizeof(AuthUser));
    next.hba = sl_calloc((size_t)(nhba ? nhba : 1), sizeof(HbaRule));
    next.nhba = nhba;               /* a rule not parsed has NULL fields */
    int rc = 0;
    for (int i = 0; i < nusers && rc == 0; i++, next.nusers++) {
        AuthUser *u = &next.users[i];
        u->name = sl_strdup(users[i].name);
        u->secret = sl_strdup(users[i].secret);
        u->kind = *u->secret ? secret_kind(u->secret) : SECRET_NONE;
        if (u->kind == SECRET_SCRAM) {
            if (scram_secret_parse(u->secret, &u->scram) < 0)
                rc = sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                              "invalid SCRAM verifier for user \"%s\"", u->name);
            u->have_scram = true;
        }
    }
    for (int i = 0; i < nhba && rc == 0; i++)
        rc = parse_rule(hba[i], &next.hba[i], err);
    if (rc < 0) {
        auth_free(&next);
        return -1;
    }
    auth_free(s);
    s->users = next.users;
    s->nusers = next.nusers;
    s->hba = next.hba;
    s->nhba = next.nhba;
    return 0;
}

int auth_init(Server *s, const ServerConfig *cfg, SlError *err)
{
    if (RAND_bytes(s->mock_key, sizeof(s->mock_key)) != 1)
        sl_panic("RAND_bytes failed");
    return load_auth(s, cfg->users, cfg->nusers, cfg->hba, cfg->nhba, err);
}

int auth_reload(Server *s, const ServerUser *users, int nusers, const char *const *hba,
                int nhba, SlError *err)
{
    return load_auth(s, users, nusers, hba, nhba, err);
}

void auth_free(Server *s)
{
    for (int i = 0; i < s->nusers; i++) {
        sl_free(s->users[i].name);
        OPENSSL_cleanse(s->users[i].secret, strlen(s->users[i].secret));
        sl_free(s->users[i].secret);
    }
    sl_free(s->users);
    for (int i = 0; i < s->nhba; i++) {
        sl_free(s->hba[i].databases);
        sl_free(s->hba[i].users);
    }
    sl_free(s->hba);
    s->users = NULL;
    s->hba = NULL;
}

bool auth_md5_rules(const Server *s)
{
    for (int i = 0; i < s->nhba; i++)
        if (s->hba[i].method == AUTH_MD5)
            return true;
    return false;
}

/* ---------------------------------------------------------------------- */
/* Matching                                                                */

/* Is name in the comma-separated list? */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return false;
}

/* The peer's address as family + 16 bytes; IPv4-mapped IPv6 counts as IPv4. */
static int peer_address(const Conn *c, uint8_t addr[16])
{
    memset(addr, 0, 16);
    if (c->peer_addr.ss_family == AF_INET) {
        memcpy(addr, &((const struct sockaddr_in *)&c->peer_addr)->sin_addr, 4);
        return AF_INET;
    }
    if (c->peer_addr.ss_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)&c->peer_addr)->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a, mapped, 12) == 0) {
            memcpy(addr, a + 12, 4);
            return AF_INET;
        }
        memcpy(addr, a, 16);
        return AF_INET6;
    }
    return 0;
}

static bool is_loopback(int family, const uint8_t addr[16])
{
    static const uint8_t v6loop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    if (family == AF_INET)
        return addr[0] == 127;
    return family == AF_INET6 && memcmp(addr, v6loop, 16) == 0;
}

static bool rule_matches(const HbaRule *r, const Conn *c, int family, const uint8_t addr[16])
{
    bool tls = c->ssl != NULL;
    if ((r->type == HBA_HOSTSSL && !tls) || (r->type == HBA_HOSTNOSSL && tls))
        return false;
    if (strcmp(r->databases, "all") != 0 &&
        !(strcmp(r->databases, "sameuser") == 0 && strcmp(c->database, c->user) == 0) &&
        !in_list(r->databases, c->database))
        return false;
    if (strcmp(r->users, "all") != 0 && !in_list(r->users, c->user))
        return false;
    if (r->family != 0) {
        if (r->family != family)
            return false;
        for (int i = 0; i < 16; i++)
            if ((addr[i] & r->mask[i]) != r->addr[i])
                return false;
    }
    return true;
}

static AuthUser *find_user(Server *s, const char *name)
{
    for (int i = 0; i < s->nusers; i++)
        if (strcmp(s->users[i].name, name) == 0)
            return &s->users[i];
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* The exchange                                                            */

static void send_auth_request(Conn *c, int32_t code, const void *data, size_t len)
{
    size_t m = pgw_begin(&c->out, PGW_MSG_AUTHENTICATION);
    pgw_put_int32(&c->out, code);
    if (len > 0)
        pgw_put_bytes(&c->out, data, len);
    pgw_end(&c->out, m);
    conn_mark_dirty(c);
}

static const char *host_of(const Conn *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s", c->peer);
    char *colon = strrchr(buf, ':');
    if (colon != NULL)
        *colon = '\0';
    return buf;
}

static void auth_failed(Conn *c, const char *why)
{
    sl_log(LOG_INFO, "authentication failed", "peer=%s user=\"%s\" method=%s reason=\"%s\"",
           c->peer, log_quote(c->user), c->auth ? method_names[c->auth->method] : "?",
           log_quote(why));
    session_fatal(c, ERRCODE_INVALID_PASSWORD,
                  "password authentication failed for user \"%s\"", c->user);
}

/* Authenticated: log in to the user's role, then the session is ready. */
static void login(Conn *c)
{
    SlError e = {0};
    if (rt_role_login(c->server->rt, c->user, &c->role_oid, &c->superuser, &e) < 0) {
        session_send_error(c, &e, NULL, true);
        sl_log(LOG_INFO, "connection closed", "peer=%s reason=\"%s\"", c->peer,
               log_quote(e.message));
        sl_error_clear(&e);
        return;
    }
    session_auth_ok(c);
}

static void auth_succeeded(Conn *c)
{
    auth_conn_free(c);
    login(c);
}

/* The catalog's password of c's user, for this exchange (method: the
 * rule's).  Sets a->has_role_user or a->expired. */
static void load_role_secret(Conn *c, AuthConn *a, AuthMethod method)
{
    char *scram = NULL, *md5 = NULL;
    RtSecret rs = rt_role_secret(c->server->rt, c->user, &scram, &md5);
    if (rs == RT_SECRET_EXPIRED) {
        a->expired = true;
        return;
    }
    if (rs != RT_SECRET_SET)
        return;
    AuthUser *u = &a->role_user;
    u->name = sl_strdup(c->user);
    if (scram != NULL && scram_secret_parse(scram, &u->scram) == 0 &&
        !(method == AUTH_MD5 && md5 != NULL)) {
        u->kind = SECRET_SCRAM;
        u->have_scram = true;
        u->secret = scram;
        scram = NULL;
    } else if (md5 != NULL) {
        u->kind = SECRET_MD5;
        u->secret = md5;
        md5 = NULL;
    } else {
        u->kind = SECRET_NONE;
        u->secret = sl_strdup("");
    }
    a->has_role_user = true;
    if (scram != NULL)
        OPENSSL_cleanse(scram, strlen(scram));
    if (md5 != NULL)
        OPENSSL_cleanse(md5, strlen(md5));
    sl_free(scram);
    sl_free(md5);
}

/* The user whose secret counts: the catalog's role, or the config file's
 * user; NULL when there is none, or the role's password expired. */
static AuthUser *conn_user(Conn *c)
{
    if (c->auth->expired)
        return NULL;
    if (c->auth->has_role_user)
        return &c->auth->role_user;
    return find_user(c->server, c->user);
}

void auth_start(Conn *c)
{
    Server *s = c->server;
    uint8_t addr[16];
    int family = peer_address(c, addr);
    const HbaRule *rule = NULL;
    AuthMethod method = AUTH_TRUST;
    for (int i = 0; i < s->nhba && rule == NULL; i++)
        if (rule_matches(&s->hba[i], c, family, addr))
            rule = &s->hba[i];
    char host[64];
    const char *enc = c->ssl != NULL ? "SSL encryption" : "no encryption";
    if (rule != NULL) {
        method = rule->method;
    } else if (s->nhba > 0 || !is_loopback(family, addr)) {
        session_fatal(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
                      "no pg_hba.conf entry for host \"%s\", user \"%s\", database \"%s\", %s",
                      host_of(c, host, sizeof(host)), c->user, c->database, enc);
        return;
    }
    if (method == AUTH_TRUST) {
        login(c);
        return;
    }
    if (method == AUTH_REJECT) {
        session_fatal(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
                      "pg_hba.conf rejects connection for host \"%s\", user \"%s\", database \"%s\", %s",
                      host_of(c, host, sizeof(host)), c->user, c->database, enc);
        return;
    }
    c->auth = sl_calloc(1, sizeof(AuthConn));
    load_role_secret(c, c->auth, method);
    /* md5 against a SCRAM verifier runs SCRAM, as in PostgreSQL. */
    AuthUser *u = conn_user(c);
    if (method == AUTH_MD5 && u != NULL && u->kind == SECRET_SCRAM)
        method = AUTH_SCRAM;
    c->auth->method = method;
    c->phase = PHASE_AUTH;
    switch (method) {
    case AUTH_PASSWORD:
        c->auth->step = STEP_PASSWORD;
        send_auth_request(c, 3, NULL, 0);
        break;
    case AUTH_MD5:
        c->auth->step = STEP_MD5;
        if (RAND_bytes(c->auth->md5_salt, 4) != 1)
            sl_panic("RAND_bytes failed");
        send_auth_request(c, 5, c->auth->md5_salt, 4);
        break;
    default:
        c->auth->step = STEP_SASL_INITIAL;
        send_auth_request(c, 10, "SCRAM-SHA-256\0", 15);
        break;
    }
}

/* The user's SCRAM verifier, derived once from a clear password. */
static const ScramSecret *user_scram(AuthUser *u)
{
    if (u == NULL)
        return NULL;
    if (!u->have_scram && u->kind == SECRET_PLAIN) {
        uint8_t salt[16];
        if (RAND_bytes(salt, sizeof(salt)) != 1)
            sl_panic("RAND_bytes failed");
        scram_secret_make(u->secret, strlen(u->secret), salt, sizeof(salt),
                          SCRAM_DEFAULT_ITER, &u->scram);
        u->have_scram = true;
    }
    return u->have_scram ? &u->scram : NULL;
}

static bool check_password(AuthUser *u, const char *user, const char *pw)
{
    if (u == NULL || *pw == '\0')
        return false;
    size_t n = strlen(pw);
    switch (u->kind) {
    case SECRET_PLAIN:
        return strlen(u->secret) == n && CRYPTO_memcmp(u->secret, pw, n) == 0;
    case SECRET_MD5: {
        char hex[33];
        md5_password_hex(pw, user, hex);
        return CRYPTO_memcmp(hex, u->secret + 3, 32) == 0;
    }
    case SECRET_SCRAM:
        return scram_verify_plain(&u->scram, pw, n);
    default:
        return false;
    }
}

/* md5 method: the client sends "md5" + md5hex(md5hex(password || user) || salt). */
static bool check_md5(AuthUser *u, const char *user, const uint8_t salt[4], const char *resp)
{
    if (u == NULL || (u->kind != SECRET_PLAIN && u->kind != SECRET_MD5) || strlen(resp) != 35)
        return false;
    char inner[33];
    if (u->kind == SECRET_MD5)
        memcpy(inner, u->secret + 3, 33);
    else
        md5_password_hex(u->secret, user, inner);
    uint8_t buf[36];
    memcpy(buf, inner, 32);
    memcpy(buf + 32, salt, 4);
    char outer[33];
    md5_hex(buf, sizeof(buf), outer);
    return strncmp(resp, "md5", 3) == 0 && CRYPTO_memcmp(resp + 3, outer, 32) == 0;
}

static void protocol_error(Conn *c, const char *msg)
{
    session_fatal(c, ERRCODE_PROTOCOL_VIOLATION, "%s", msg);
}

/* The password method against a SCRAM verifier: PBKDF2 (4096 rounds or
 * more) on the thread pool, so that a burst of logins does not stall the
 * loop.  The user's verifier never changes once loaded. */
typedef struct PasswordCheck {
    uv_work_t        req;
    Conn            *conn;
    const ScramSecret *secret;
    char            *password;
    bool             ok;
} PasswordCheck;

static void password_work_cb(uv_work_t *req)
{
    PasswordCheck *pc = req->data;
    pc->ok = scram_verify_plain(pc->secret, pc->password, strlen(pc->password));
}

static void password_after_cb(uv_work_t *req, int status)
{
    PasswordCheck *pc = req->data;
    Conn *c = pc->conn;
    SL_UNUSED(status);
    c->auth_busy = false;
    OPENSSL_cleanse(pc->password, strlen(pc->password));
    sl_free(pc->password);
    bool ok = pc->ok;
    sl_free(pc);
    if (c->phase == PHASE_CLOSING) {
        if (c->orphaned && !conn_busy(c))
            conn_free(c);
        return;
    }
    if (ok)
        auth_succeeded(c);
    else
        auth_failed(c, "wrong password");
    conn_resume(c);
}

void auth_message(Conn *c, uint8_t type, const uint8_t *body, size_t len)
{
    AuthConn *a = c->auth;
    Server *s = c->server;
    if (type != PGW_MSG_PASSWORD) {
        session_fatal(c, ERRCODE_PROTOCOL_VIOLATION,
                      "expected password response, got message type %d", type);
        return;
    }
    if (len > AUTH_MAX_TOKEN) {
        protocol_error(c, "invalid password packet size");
        return;
    }
    PgwReader r;
    pgw_reader_init(&r, body, len);
    AuthUser *u = conn_user(c);
    switch (a->step) {
    case STEP_PASSWORD:
    case STEP_MD5: {
        const char *pw = pgw_get_cstr(&r);
        if (!pgw_reader_done(&r)) {
            protocol_error(c, "invalid password packet size");
            return;
        }
        if (a->step == STEP_PASSWORD && u != NULL && u->kind == SECRET_SCRAM && *pw) {
            PasswordCheck *pc = sl_calloc(1, sizeof(PasswordCheck));
            pc->req.data = pc;
            pc->conn = c;
            pc->secret = &u->scram;
            pc->password = sl_strdup(pw);
            if (uv_queue_work(s->loop, &pc->req, password_work_cb, password_after_cb) != 0)
                sl_panic("uv_queue_work failed");
            c->auth_busy = true;
            return;
        }
        bool ok = a->step == STEP_PASSWORD ? check_password(u, c->user, pw)
                                           : check_md5(u, c->user, a->md5_salt, pw);
        if (ok)
            auth_succeeded(c);
        else
            auth_failed(c, u == NULL ? "no such user" : *pw ? "wrong password"
                                                            : "empty password");
        return;
    }
    case STEP_SASL_INITIAL: {
        const char *mech = pgw_get_cstr(&r);
        int32_t n = pgw_get_int32(&r);
        const uint8_t *data = n >= 0 ? pgw_get_bytes(&r, (size_t)n) : NULL;
        if (!pgw_reader_done(&r) || data == NULL) {
            protocol_error(c, "malformed SASLInitialResponse message");
            return;
        }
        if (strcmp(mech, "SCRAM-SHA-256") != 0) {
            protocol_error(c, "client selected an invalid SASL authentication mechanism");
            return;
        }
        const ScramSecret *secret = user_scram(u);
        StrBuf first;
        strbuf_init(&first);
        const char *why = NULL;
        if (scram_server_first(&a->scram, secret, s->mock_key, c->user, (const char *)data,
                               (size_t)n, &first, &why) < 0) {
            strbuf_free(&first);
            protocol_error(c, why);
            return;
        }
        a->step = STEP_SASL_FINAL;
        send_auth_request(c, 11, first.data, first.len);
        strbuf_free(&first);
        return;
    }
    case STEP_SASL_FINAL: {
        StrBuf final;
        strbuf_init(&final);
        const char *why = NULL;
        int ok = scram_server_final(&a->scram, (const char *)body, len, &final, &why);
        if (ok < 0) {
            protocol_error(c, why);
        } else if (ok == 0) {
            auth_failed(c, a->scram.mock ? "no usable SCRAM secret" : "wrong proof");
        } else {
            send_auth_request(c, 12, final.data, final.len);
            auth_succeeded(c);
        }
        strbuf_free(&final);
        return;
    }
    }
}

void auth_conn_free(Conn *c)
{
    if (c->auth == NULL)
        return;
    scram_state_free(&c->auth->scram);
    AuthUser *u = &c->auth->role_user;
    if (u->secret != NULL)
        OPENSSL_cleanse(u->secret, strlen(u->secret));
    sl_free(u->secret);
    sl_free(u->name);
    OPENSSL_cleanse(&u->scram, sizeof(u->scram));
    sl_free(c->auth);
    c->auth = NULL;
}
