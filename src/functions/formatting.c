/*
 * formatting.c -- to_char, to_timestamp(text, text) and to_date, with
 * PostgreSQL 15's template patterns (src/backend/utils/adt/formatting.c).
 *
 *   k_to_char_ts, k_to_char_tstz, k_to_char_iv     to_char(value, template)
 *   k_to_timestamp_fmt, k_to_date_fmt              parsing with a template
 *
 * Patterns: HH HH12 HH24 MI SS MS US FF1-FF6 SSSS SSSSS AM PM A.M. P.M.
 * Y,YYY YYYY YYY YY Y IYYY IYY IY I BC AD B.C. A.D. MONTH Month month MON
 * Mon mon MM DAY Day day DY Dy dy DDD IDDD DD D ID W WW IW CC J Q RM rm
 * TZ tz TZH TZM OF, in their upper and lower case spellings, with the FM
 * (no padding), TH/th (ordinal suffix) and FX (exact) modifiers, and
 * "quoted" literal text.  Parsing follows PostgreSQL's non-FX rules: a
 * separator in the template matches one separator or none in the input,
 * numbers take as many digits as the field has (all of them before a
 * separator), names match without regard to case; trailing input is
 * ignored.  Parsing J, WW, IW and IDDD is not supported (0A000).
 */
#include "types/datetime.h"
#include "functions/kernels.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

typedef enum {
    P_AD_DOTS, P_AM_DOTS, P_AD, P_AM, P_BC_DOTS, P_BC, P_CC, P_DAY, P_DDD, P_DD, P_DY, P_D,
    P_FF1, P_FF2, P_FF3, P_FF4, P_FF5, P_FF6, P_FX, P_HH24, P_HH12, P_HH, P_IDDD, P_ID, P_IW,
    P_IYYY, P_IYY, P_IY, P_I, P_J, P_MI, P_MM, P_MONTH, P_MON, P_MS, P_OF, P_PM_DOTS, P_PM,
    P_Q, P_RM, P_SSSSS, P_SSSS, P_SS, P_TZH, P_TZM, P_TZ, P_US, P_WW, P_W, P_Y_YYY, P_YYYY,
    P_YYY, P_YY, P_Y,
} PatId;

/* Spelling case: 0 upper, 1 initcap ("Month"), 2 lower. */
typedef struct Pattern {
    const char *name;
    PatId       id;
    int         lcase;
    bool        digit;      /* reads digits */
} Pattern;

/* Longest first within each initial, as PostgreSQL's keyword table. */
static const Pattern patterns[] = {
    {"A.D.", P_AD_DOTS, 0, false}, {"A.M.", P_AM_DOTS, 0, false}, {"AD", P_AD, 0, false},
    {"AM", P_AM, 0, false}, {"B.C.", P_BC_DOTS, 0, false}, {"BC", P_BC, 0, false},
    {"CC", P_CC, 0, true}, {"DAY", P_DAY, 0, false}, {"DDD", P_DDD, 0, true},
    {"DD", P_DD, 0, true}, {"DY", P_DY, 0, false}, {"Day", P_DAY, 1, false},
    {"Dy", P_DY, 1, false}, {"D", P_D, 0, true}, {"FF1", P_FF1, 0, false},
    {"FF2", P_FF2, 0, false}, {"FF3", P_FF3, 0, false}, {"FF4", P_FF4, 0, false},
    {"FF5", P_FF5, 0, false}, {"FF6", P_FF6, 0, false}, {"FX", P_FX, 0, false},
    {"HH24", P_HH24, 0, true}, {"HH12", P_HH12, 0, true}, {"HH", P_HH, 0, true},
    {"IDDD", P_IDDD, 0, true}, {"ID", P_ID, 0, true}, {"IW", P_IW, 0, true},
    {"IYYY", P_IYYY, 0, true}, {"IYY", P_IYY, 0, true}, {"IY", P_IY, 0, true},
    {"I", P_I, 0, true}, {"J", P_J, 0, true}, {"MI", P_MI, 0, true}, {"MM", P_MM, 0, true},
    {"MONTH", P_MONTH, 0, false}, {"MON", P_MON, 0, false}, {"MS", P_MS, 0, true},
    {"Month", P_MONTH, 1, false}, {"Mon", P_MON, 1, false}, {"OF", P_OF, 0, false},
    {"P.M.", P_PM_DOTS, 0, false}, {"PM", P_PM, 0, false}, {"Q", P_Q, 0, true},
    {"RM", P_RM, 0, false}, {"SSSSS", P_SSSSS, 0, true}, {"SSSS", P_SSSS, 0, true},
    {"SS", P_SS, 0, true}, {"TZH", P_TZH, 0, false}, {"TZM", P_TZM, 0, true},
    {"TZ", P_TZ, 0, false}, {"US", P_US, 0, true}, {"WW", P_WW, 0, true},
    {"W", P_W, 0, true}, {"Y,YYY", P_Y_YYY, 0, true}, {"YYYY", P_YYYY, 0, true},
    {"YYY", P_YYY, 0, true}, {"YY", P_YY, 0, true}, {"Y", P_Y, 0, true},
    {"a.d.", P_AD_DOTS, 2, false}, {"a.m.", P_AM_DOTS, 2, false}, {"ad", P_AD, 2, false},
    {"am", P_AM, 2, false}, {"b.c.", P_BC_DOTS, 2, false}, {"bc", P_BC, 2, false},
    {"cc", P_CC, 2, true}, {"day", P_DAY, 2, false}, {"ddd", P_DDD, 2, true},
    {"dd", P_DD, 2, true}, {"dy", P_DY, 2, false}, {"d", P_D, 2, true},
    {"ff1", P_FF1, 2, false}, {"ff2", P_FF2, 2, false}, {"ff3", P_FF3, 2, false},
    {"ff4", P_FF4, 2, false}, {"ff5", P_FF5, 2, false}, {"ff6", P_FF6, 2, false},
    {"fx", P_FX, 2, false}, {"hh24", P_HH24, 2, true}, {"hh12", P_HH12, 2, true},
    {"hh", P_HH, 2, true}, {"iddd", P_IDDD, 2, true}, {"id", P_ID, 2, true},
    {"iw", P_IW, 2, true}, {"iyyy", P_IYYY, 2, true}, {"iyy", P_IYY, 2, true},
    {"iy", P_IY, 2, true}, {"i", P_I, 2, true}, {"j", P_J, 2, true}, {"mi", P_MI, 2, true},
    {"mm", P_MM, 2, true}, {"month", P_MONTH, 2, false}, {"mon", P_MON, 2, false},
    {"ms", P_MS, 2, true}, {"of", P_OF, 2, false}, {"p.m.", P_PM_DOTS, 2, false},
    {"pm", P_PM, 2, false}, {"q", P_Q, 2, true}, {"rm", P_RM, 2, false},
    {"sssss", P_SSSSS, 2, true}, {"ssss", P_SSSS, 2, true}, {"ss", P_SS, 2, true},
    {"tzh", P_TZH, 2, false}, {"tzm", P_TZM, 2, true}, {"tz", P_TZ, 2, false},
    {"us", P_US, 2, true}, {"ww", P_WW, 2, true}, {"w", P_W, 2, true},
    {"y,yyy", P_Y_YYY, 2, true}, {"yyyy", P_YYYY, 2, true}, {"yyy", P_YYY, 2, true},
    {"yy", P_YY, 2, true}, {"y", P_Y, 2, true},
};

enum { N_END, N_ACTION, N_CHAR, N_SEPARATOR, N_SPACE };

typedef struct FmtNode {
    int            type;
    const Pattern *pat;
    bool           fm, th, th_upper;
    char           ch[5];   /* N_CHAR / N_SEPARATOR / N_SPACE: one UTF-8 character */
} FmtNode;

static bool is_separator(char c)
{
    return c != '\0' && (unsigned char)c < 0x80 && !isalnum((unsigned char)c) && c != ' ';
}

/* Splits a template into nodes (an arena array ending in N_END). */
static FmtNode *parse_format(Arena *a, const SlStr *f)
{
    FmtNode *nodes = ARENA_ARRAY(a, FmtNode, (size_t)f->len + 1);
    int n = 0;
    const char *p = f->ptr, *end = f->ptr + f->len;
    while (p < end) {
        FmtNode *nd = &nodes[n];
        memset(nd, 0, sizeof(*nd));
        bool fm = false;
        if (end - p >= 2 && (strncmp(p, "FM", 2) == 0 || strncmp(p, "fm", 2) == 0)) {
            fm = true;
            p += 2;
        }
        const Pattern *pat = NULL;
        for (size_t k = 0; k < SL_ARRAY_LEN(patterns) && p < end; k++) {
            size_t l = strlen(patterns[k].name);
            if ((size_t)(end - p) >= l && memcmp(p, patterns[k].name, l) == 0) {
                pat = &patterns[k];
                break;
            }
        }
        if (pat != NULL) {
            nd->type = N_ACTION;
            nd->pat = pat;
            nd->fm = fm;
            p += strlen(pat->name);
            if (end - p >= 2 && (strncmp(p, "TH", 2) == 0 || strncmp(p, "th", 2) == 0)) {
                nd->th = true;
                nd->th_upper = p[0] == 'T';
                p += 2;
            }
            n++;
            continue;
        }
        if (fm) {
            /* "FM" before no pattern: the letters are literal */
            p -= 2;
        }
        if (*p == '"') {
            p++;
            while (p < end && *p != '"') {
                if (*p == '\\' && p + 1 < end)
                    p++;
                nd = &nodes[n];
                memset(nd, 0, sizeof(*nd));
                nd->type = N_CHAR;
                int l = 1;
                while (p + l < end && ((unsigned char)p[l] & 0xC0) == 0x80 && l < 4)
                    l++;
                memcpy(nd->ch, p, (size_t)l);
                p += l;
                n++;
            }
            if (p < end)
                p++;
            continue;
        }
        if (*p == '\\' && p + 1 < end && p[1] == '"')
            p++;
        int l = 1;
        while (p + l < end && ((unsigned char)p[l] & 0xC0) == 0x80 && l < 4)
            l++;
        memcpy(nd->ch, p, (size_t)l);
        nd->type = *p == ' ' ? N_SPACE : is_separator(*p) ? N_SEPARATOR : N_CHAR;
        p += l;
        n++;
    }
    nodes[n].type = N_END;
    return nodes;
}

static const char *const months[] = {"January", "February", "March", "April", "May", "June",
                                     "July", "August", "September", "October", "November",
                                     "December"};
static const char *const days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday",
                                   "Friday", "Saturday"};
static const char *const rm_upper[] = {"I", "II", "III", "IV", "V", "VI", "VII", "VIII",
                                       "IX", "X", "XI", "XII"};

/* ----------------------------------------------------------------- to_char */

typedef struct CharTm {
    int64_t year;       /* astronomical for timestamps; plain for intervals */
    int     mon, mday, min, sec;
    int64_t hour;
    int64_t fsec;
    int     wday, yday; /* timestamps only */
    bool    interval, tz;
} CharTm;

static void put_cased(StrBuf *b, const char *s, int lcase, int width)
{
    size_t start = b->len;
    for (const char *p = s; *p; p++) {
        char c = *p;
        if (lcase == 0)
            c = (char)toupper((unsigned char)c);
        else if (lcase == 2 || (lcase == 1 && p != s))
            c = (char)tolower((unsigned char)c);
        strbuf_putc(b, c);
    }
    while ((int)(b->len - start) < width)
        strbuf_putc(b, ' ');
}

static const char *ordinal(int64_t v, bool upper)
{
    int64_t last = (v < 0 ? -v : v) % 100;
    const char *s = "th";
    if (last < 11 || last > 13) {
        switch (last % 10) {
        case 1: s = "st"; break;
        case 2: s = "nd"; break;
        case 3: s = "rd"; break;
        default: break;
        }
    }
    if (!upper)
        return s;
    return strcmp(s, "st") == 0 ? "ST" : strcmp(s, "nd") == 0 ? "ND" : strcmp(s, "rd") == 0 ? "RD" : "TH";
}

static void put_num(StrBuf *b, const FmtNode *n, int64_t v, int width)
{
    if (n->fm)
        strbuf_printf(b, "%lld", (long long)v);
    else if (v < 0)
        strbuf_printf(b, "-%0*lld", width - 1 > 0 ? width - 1 : 0, (long long)-v);
    else
        strbuf_printf(b, "%0*lld", width, (long long)v);
    if (n->th)
        strbuf_puts(b, ordinal(v, n->th_upper));
}

/* The same with PostgreSQL's "(v >= 0) ? width : width + 1" padding. */
static void put_num_sgn(StrBuf *b, const FmtNode *n, int64_t v, int width)
{
    if (n->fm)
        strbuf_printf(b, "%lld", (long long)v);
    else
        strbuf_printf(b, "%0*lld", v >= 0 ? width : width + 1, (long long)v);
    if (n->th)
        strbuf_puts(b, ordinal(v, n->th_upper));
}

static int64_t adj_year(const CharTm *t)
{
    return t->interval ? t->year : (t->year <= 0 ? -(t->year - 1) : t->year);
}

static void to_char(StrBuf *b, const FmtNode *nodes, const CharTm *t)
{
    for (const FmtNode *n = nodes; n->type != N_END; n++) {
        if (n->type != N_ACTION) {
            strbuf_puts(b, n->ch);
            continue;
        }
        const Pattern *p = n->pat;
        int64_t hour12 = t->hour % 12 == 0 ? 12 : t->hour % 12;
        switch (p->id) {
        case P_AM: case P_PM:
            strbuf_puts(b, t->hour % 24 >= 12 ? (p->lcase ? "pm" : "PM") : (p->lcase ? "am" : "AM"));
            break;
        case P_AM_DOTS: case P_PM_DOTS:
            strbuf_puts(b, t->hour % 24 >= 12 ? (p->lcase ? "p.m." : "P.M.")
                                               : (p->lcase ? "a.m." : "A.M."));
            break;
        case P_AD: case P_BC:
            strbuf_puts(b, t->year <= 0 && !t->interval ? (p->lcase ? "bc" : "BC")
                                                        : (p->lcase ? "ad" : "AD"));
            break;
        case P_AD_DOTS: case P_BC_DOTS:
            strbuf_puts(b, t->year <= 0 && !t->interval ? (p->lcase ? "b.c." : "B.C.")
                                                        : (p->lcase ? "a.d." : "A.D."));
            break;
        case P_HH: case P_HH12: put_num_sgn(b, n, hour12, 2); break;
        case P_HH24: put_num_sgn(b, n, t->hour, 2); break;
        case P_MI: put_num_sgn(b, n, t->min, 2); break;
        case P_SS: put_num_sgn(b, n, t->sec, 2); break;
        case P_MS: put_num(b, n, t->fsec / 1000, 3); break;
        case P_US: put_num(b, n, t->fsec, 6); break;
        case P_FF1: case P_FF2: case P_FF3: case P_FF4: case P_FF5: case P_FF6: {
            int digits = (int)(p->id - P_FF1) + 1;
            int64_t div = 1;
            for (int k = digits; k < 6; k++)
                div *= 10;
            put_num(b, n, t->fsec / div, digits);
            break;
        }
        case P_SSSS: case P_SSSSS:
            put_num(b, n, t->hour * 3600 + t->min * 60 + t->sec, 0);
            break;
        case P_Y_YYY: {
            int64_t y = adj_year(t);
            strbuf_printf(b, "%lld,%03lld", (long long)(y / 1000), (long long)(y % 1000));
            if (n->th)
                strbuf_puts(b, ordinal(y, n->th_upper));
            break;
        }
        case P_YYYY: put_num_sgn(b, n, adj_year(t), 4); break;
        case P_YYY: put_num_sgn(b, n, adj_year(t) % 1000, 3); break;
        case P_YY: put_num_sgn(b, n, adj_year(t) % 100, 2); break;
        case P_Y: put_num_sgn(b, n, adj_year(t) % 10, 1); break;
        case P_IYYY: case P_IYY: case P_IY: case P_I: {
            int64_t iy = t->interval ? t->year : dt_isoyear((int)t->year, t->mon, t->mday);
            if (!t->interval && iy <= 0)
                iy = -(iy - 1);
            int w = p->id == P_IYYY ? 4 : p->id == P_IYY ? 3 : p->id == P_IY ? 2 : 1;
            int64_t mod = w == 4 ? 0 : w == 3 ? 1000 : w == 2 ? 100 : 10;
            put_num(b, n, mod ? iy % mod : iy, w);
            break;
        }
        case P_MONTH:
            if (t->mon >= 1 && t->mon <= 12)
                put_cased(b, months[t->mon - 1], p->lcase, n->fm ? 0 : 9);
            break;
        case P_MON:
            if (t->mon >= 1 && t->mon <= 12) {
                char abbr[4];
                memcpy(abbr, months[t->mon - 1], 3);
                abbr[3] = '\0';
                put_cased(b, abbr, p->lcase, 0);
            }
            break;
        case P_MM: put_num_sgn(b, n, t->mon, 2); break;
        case P_DAY:
            if (!t->interval)
                put_cased(b, days[t->wday], p->lcase, n->fm ? 0 : 9);
            break;
        case P_DY:
            if (!t->interval) {
                char abbr[4];
                memcpy(abbr, days[t->wday], 3);
                abbr[3] = '\0';
                put_cased(b, abbr, p->lcase, 0);
            }
            break;
        case P_DDD: put_num(b, n, t->yday, 3); break;
        case P_IDDD: {
            int jd = dt_date2j((int)t->year, t->mon, t->mday);
            int iy = dt_isoyear((int)t->year, t->mon, t->mday);
            put_num(b, n, jd - dt_isoweek2j(iy, 1) + 1, 3);
            break;
        }
        case P_DD: put_num(b, n, t->mday, 2); break;
        case P_D: put_num(b, n, t->wday + 1, 1); break;
        case P_ID: put_num(b, n, t->wday == 0 ? 7 : t->wday, 1); break;
        case P_W: put_num(b, n, (t->mday - 1) / 7 + 1, 1); break;
        case P_WW: put_num(b, n, (t->yday - 1) / 7 + 1, 2); break;
        case P_IW:
            put_num(b, n, t->interval ? 0 : dt_isoweek((int)t->year, t->mon, t->mday), 2);
            break;
        case P_CC: {
            int64_t y = t->year, cc;
            if (t->interval)
                cc = y / 100;
            else
                cc = y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100);
            put_num_sgn(b, n, cc, 2);
            break;
        }
        case P_J:
            put_num(b, n, dt_date2j((int)t->year, t->mon, t->mday), 0);
            break;
        case P_Q:
            if (t->mon >= 1)
                put_num(b, n, (t->mon - 1) / 3 + 1, 0);
            break;
        case P_RM:
            if (t->mon >= 1 && t->mon <= 12)
                put_cased(b, rm_upper[t->mon - 1], p->lcase == 2 ? 2 : 0, n->fm ? 0 : 4);
            break;
        case P_TZ:
            if (t->tz)
                strbuf_puts(b, p->lcase ? "utc" : "UTC");
            break;
        case P_TZH:
        case P_OF:
            strbuf_puts(b, "+00");
            break;
        case P_TZM:
            strbuf_puts(b, "00");
            break;
        case P_FX:
            break;
        }
    }
}

static int to_char_ts(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, bool tz)
{
    StrBuf b;
    strbuf_init(&b);
    const SlStr *prevf = NULL;
    FmtNode *nodes = NULL;
    FOR_SEL(sel, n, {
        int64_t t = args[0].v.i64[i];
        const SlStr *f = &args[1].v.str[i];
        if (!dt_ts_finite(t) || f->len == 0) {
            out->nulls[i] = 1;
            continue;
        }
        if (prevf == NULL || prevf->ptr != f->ptr || prevf->len != f->len)
            nodes = parse_format(cx->arena, f);
        prevf = f;
        /* timestamptz: the fields in the session's time zone */
        if (tz)
            t += (int64_t)dt_session_utc_offset(t) * USECS_PER_SEC;
        DtTm tm;
        if (dt_ts2tm(t, &tm) < 0) {
            strbuf_free(&b);
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "timestamp out of range");
        }
        int jd = dt_date2j(tm.year, tm.mon, tm.mday);
        CharTm ct = {tm.year, tm.mon, tm.mday, tm.min, tm.sec, tm.hour, tm.fsec,
                     dt_j2day(jd), jd - dt_date2j(tm.year, 1, 1) + 1, false, tz};
        strbuf_reset(&b);
        to_char(&b, nodes, &ct);
        out->v.str[i].ptr = b.len ? arena_memdup(cx->arena, b.data, b.len) : "";
        out->v.str[i].len = (uint32_t)b.len;
    });
    strbuf_free(&b);
    return 0;
}

KERNEL(k_to_char_ts) { return to_char_ts(cx, args, out, sel, n, false); }
KERNEL(k_to_char_tstz) { return to_char_ts(cx, args, out, sel, n, true); }

KERNEL(k_to_char_iv)
{
    StrBuf b;
    strbuf_init(&b);
    FOR_SEL(sel, n, {
        const SlInterval *iv = &args[0].v.iv[i];
        const SlStr *f = &args[1].v.str[i];
        if (f->len == 0) {
            out->nulls[i] = 1;
            continue;
        }
        FmtNode *nodes = parse_format(cx->arena, f);
        int64_t time = iv->usec;
        CharTm ct;
        memset(&ct, 0, sizeof(ct));
        ct.interval = true;
        ct.year = iv->months / 12;
        ct.mon = iv->months % 12;
        ct.mday = iv->days;
        ct.hour = time / USECS_PER_HOUR;
        time -= ct.hour * USECS_PER_HOUR;
        ct.min = (int)(time / USECS_PER_MINUTE);
        time -= (int64_t)ct.min * USECS_PER_MINUTE;
        ct.sec = (int)(time / USECS_PER_SEC);
        ct.fsec = time - (int64_t)ct.sec * USECS_PER_SEC;
        ct.yday = ct.mday;
        strbuf_reset(&b);
        to_char(&b, nodes, &ct);
        out->v.str[i].ptr = b.len ? arena_memdup(cx->arena, b.data, b.len) : "";
        out->v.str[i].len = (uint32_t)b.len;
    });
    strbuf_free(&b);
    return 0;
}

/* ---------------------------------------------------------------- parsing */

typedef struct FromChar {
    int     hh, mi, ss, ssss, ms, us, dd, mm, year, cc, yysz, w, d, ddd;
    int     pm, clock12, bc, tzsign, tzh, tzm;
    bool    have_pm;
} FromChar;

static int bad_value(EvalCtx *cx, const char *s, int len, const Pattern *p, const char *detail)
{
    sl_error(cx->err, ERRCODE_INVALID_DATETIME_FORMAT, "invalid value \"%.*s\" for \"%s\"", len,
             s, p->name);
    if (detail)
        sl_error_detail(cx->err, "%s", detail);
    return -1;
}

static int set_int(EvalCtx *cx, int *dest, int value, const Pattern *p)
{
    if (*dest != 0 && *dest != value) {
        sl_error(cx->err, ERRCODE_INVALID_DATETIME_FORMAT,
                 "conflicting values for \"%s\" field in formatting string", p->name);
        sl_error_detail(cx->err, "This value contradicts a previous setting for the same field "
                                 "type.");
        return -1;
    }
    *dest = value;
    return 0;
}

static bool next_is_separator(const FmtNode *n)
{
    if (n->type == N_ACTION && n->th)
        return true;
    n++;
    if (n->type == N_END)
        return true;
    if (n->type == N_ACTION)
        return !n->pat->digit;
    if (n->ch[1] == '\0' && isdigit((unsigned char)n->ch[0]))
        return false;
    return true;
}

/* from_char_parse_int_len: returns the digits read, or -1. */
static int parse_int(EvalCtx *cx, const char **src, const char *end, int len, const FmtNode *n,
                     int *out)
{
    while (*src < end && isspace((unsigned char)**src))
        (*src)++;
    const char *init = *src;
    char copy[32];
    int avail = (int)SL_MIN((size_t)(end - init), sizeof(copy) - 1);
    long v;
    int used;
    if (n->fm || next_is_separator(n)) {
        memcpy(copy, init, (size_t)avail);
        copy[avail] = '\0';
        char *e;
        errno = 0;
        v = strtol(copy, &e, 10);
        used = (int)(e - copy);
    } else {
        int l = SL_MIN(len, avail);
        memcpy(copy, init, (size_t)l);
        copy[l] = '\0';
        if (l < len) {
            sl_error(cx->err, ERRCODE_INVALID_DATETIME_FORMAT,
                     "source string too short for \"%s\" formatting field", n->pat->name);
            sl_error_detail(cx->err, "Field requires %d characters, but only %d remain.", len, l);
            sl_error_hint(cx->err,
                          "If your source string is not fixed-width, try using the \"FM\" "
                          "modifier.");
            return -1;
        }
        char *e;
        errno = 0;
        v = strtol(copy, &e, 10);
        used = (int)(e - copy);
        if (used > 0 && used < len) {
            char d[128];
            snprintf(d, sizeof(d), "Field requires %d characters, but only %d could be parsed.",
                     len, used);
            bad_value(cx, copy, (int)strlen(copy), n->pat, d);
            sl_error_hint(cx->err, "If your source string is not fixed-width, try using the "
                                   "\"FM\" modifier.");
            return -1;
        }
    }
    if (used == 0) {
        int l = SL_MIN(len, avail);
        return bad_value(cx, init, l, n->pat, "Value must be an integer.");
    }
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
        sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                 "value for \"%s\" in source string is out of range", n->pat->name);
        sl_error_detail(cx->err, "Value must be in the range %d to %d.", INT_MIN, INT_MAX);
        return -1;
    }
    *src = init + used;
    *out = (int)v;
    return used;
}

/* A case-insensitive match of one of words at *src; its index or -1. */
static int seq_search(const char **src, const char *end, const char *const *words, int nwords,
                      int prefix)
{
    for (int k = 0; k < nwords; k++) {
        size_t l = prefix ? (size_t)prefix : strlen(words[k]);
        if ((size_t)(end - *src) >= l && strncasecmp(*src, words[k], l) == 0) {
            *src += l;
            return k;
        }
    }
    return -1;
}

static int seq_error(EvalCtx *cx, const char *s, const char *end, const FmtNode *n, int maxlen)
{
    return bad_value(cx, s, (int)SL_MIN(end - s, maxlen), n->pat,
                     "The given value did not match any of the allowed values for this field.");
}

static int adjust_partial_year(int year)
{
    if (year < 70)
        return year + 2000;
    if (year < 100)
        return year + 1900;
    if (year < 520)
        return year + 2000;
    if (year < 1000)
        return year + 1000;
    return year;
}

static int from_char(EvalCtx *cx, const FmtNode *nodes, const SlStr *in, FromChar *fc)
{
    const char *s = in->ptr, *end = in->ptr + in->len;
    bool fx = false;
    int extra_skip = 0;
    static const char *const ampm[] = {"am", "pm"}, *const ampm_dots[] = {"a.m.", "p.m."};
    static const char *const adbc[] = {"ad", "bc"}, *const adbc_dots[] = {"a.d.", "b.c."};
    for (const FmtNode *n = nodes; n->type != N_END && s < end; n++) {
        if (!fx && (n->type == N_ACTION ? n->pat->id != P_FX : n == nodes)) {
            while (s < end && isspace((unsigned char)*s)) {
                s++;
                extra_skip++;
            }
        }
        if (n->type == N_SPACE || n->type == N_SEPARATOR) {
            if (!fx) {
                extra_skip--;
                if (s < end && (isspace((unsigned char)*s) || is_separator(*s))) {
                    s++;
                    extra_skip++;
                }
            } else {
                s++;
            }
            continue;
        }
        if (n->type != N_ACTION) {
            if (!fx && extra_skip > 0)
                extra_skip--;
            else
                s += 1;
            continue;
        }
        const Pattern *p = n->pat;
        int v = 0, len;
        switch (p->id) {
        case P_FX:
            fx = true;
            break;
        case P_AM: case P_PM:
            if ((v = seq_search(&s, end, ampm, 2, 0)) < 0)
                return seq_error(cx, s, end, n, 2);
            fc->pm = v;
            fc->have_pm = true;
            fc->clock12 = 1;
            break;
        case P_AM_DOTS: case P_PM_DOTS:
            if ((v = seq_search(&s, end, ampm_dots, 2, 0)) < 0)
                return seq_error(cx, s, end, n, 4);
            fc->pm = v;
            fc->have_pm = true;
            fc->clock12 = 1;
            break;
        case P_AD: case P_BC:
            if ((v = seq_search(&s, end, adbc, 2, 0)) < 0)
                return seq_error(cx, s, end, n, 2);
            fc->bc = v;
            break;
        case P_AD_DOTS: case P_BC_DOTS:
            if ((v = seq_search(&s, end, adbc_dots, 2, 0)) < 0)
                return seq_error(cx, s, end, n, 4);
            fc->bc = v;
            break;
        case P_HH: case P_HH12:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->hh, v, p) < 0)
                return -1;
            fc->clock12 = 1;
            break;
        case P_HH24:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->hh, v, p) < 0)
                return -1;
            break;
        case P_MI:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->mi, v, p) < 0)
                return -1;
            break;
        case P_SS:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->ss, v, p) < 0)
                return -1;
            break;
        case P_MS:
            if ((len = parse_int(cx, &s, end, 3, n, &v)) < 0)
                return -1;
            v *= len == 1 ? 100 : len == 2 ? 10 : 1;
            if (set_int(cx, &fc->ms, v, p) < 0)
                return -1;
            break;
        case P_US: case P_FF1: case P_FF2: case P_FF3: case P_FF4: case P_FF5: case P_FF6: {
            int w = p->id == P_US ? 6 : (int)(p->id - P_FF1) + 1;
            if ((len = parse_int(cx, &s, end, w, n, &v)) < 0)
                return -1;
            static const int scale[] = {1, 100000, 10000, 1000, 100, 10, 1};
            v *= len <= 6 ? scale[len] : 1;
            if (set_int(cx, &fc->us, v, p) < 0)
                return -1;
            break;
        }
        case P_SSSS: case P_SSSSS:
            if (parse_int(cx, &s, end, (int)strlen(p->name), n, &v) < 0 ||
                set_int(cx, &fc->ssss, v, p) < 0)
                return -1;
            break;
        case P_TZ: case P_OF:
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "formatting field \"%s\" is only supported in to_char", p->name);
        case P_TZH:
            if (s < end && (*s == '+' || *s == '-' || *s == ' ')) {
                fc->tzsign = *s == '-' ? -1 : 1;
                s++;
            } else {
                fc->tzsign = (extra_skip > 0 && s > in->ptr && s[-1] == '-') ? -1 : 1;
            }
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->tzh, v, p) < 0)
                return -1;
            break;
        case P_TZM:
            if (!fc->tzsign)
                fc->tzsign = 1;
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->tzm, v, p) < 0)
                return -1;
            break;
        case P_MONTH:
            if ((v = seq_search(&s, end, months, 12, 0)) < 0)
                return seq_error(cx, s, end, n, 9);
            if (set_int(cx, &fc->mm, v + 1, p) < 0)
                return -1;
            break;
        case P_MON:
            if ((v = seq_search(&s, end, months, 12, 3)) < 0)
                return seq_error(cx, s, end, n, 3);
            if (set_int(cx, &fc->mm, v + 1, p) < 0)
                return -1;
            break;
        case P_MM:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->mm, v, p) < 0)
                return -1;
            break;
        case P_DAY:
            if ((v = seq_search(&s, end, days, 7, 0)) < 0)
                return seq_error(cx, s, end, n, 9);
            if (set_int(cx, &fc->d, v + 1, p) < 0)
                return -1;
            break;
        case P_DY:
            if ((v = seq_search(&s, end, days, 7, 3)) < 0)
                return seq_error(cx, s, end, n, 3);
            if (set_int(cx, &fc->d, v + 1, p) < 0)
                return -1;
            break;
        case P_DD:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->dd, v, p) < 0)
                return -1;
            break;
        case P_DDD:
            if (parse_int(cx, &s, end, 3, n, &v) < 0 || set_int(cx, &fc->ddd, v, p) < 0)
                return -1;
            break;
        case P_D: case P_ID:
            if (parse_int(cx, &s, end, 1, n, &v) < 0 || set_int(cx, &fc->d, v, p) < 0)
                return -1;
            break;
        case P_Q:
            if (parse_int(cx, &s, end, 1, n, &v) < 0)
                return -1;
            break;
        case P_CC:
            if (parse_int(cx, &s, end, 2, n, &v) < 0 || set_int(cx, &fc->cc, v, p) < 0)
                return -1;
            break;
        case P_W:
            if (parse_int(cx, &s, end, 1, n, &v) < 0 || set_int(cx, &fc->w, v, p) < 0)
                return -1;
            break;
        case P_Y_YYY: {
            int mil, yrs, nch = 0;
            char buf[32];
            size_t l = SL_MIN((size_t)(end - s), sizeof(buf) - 1);
            memcpy(buf, s, l);
            buf[l] = '\0';
            if (sscanf(buf, "%d,%03d%n", &mil, &yrs, &nch) < 2)
                return sl_error(cx->err, ERRCODE_INVALID_DATETIME_FORMAT,
                                "invalid input string for \"Y,YYY\"");
            /* in 64 bits: a year past int's range is out of range later,
             * as in PostgreSQL, not an overflow here */
            int64_t y = (int64_t)mil * 1000 + yrs;
            if (set_int(cx, &fc->year, y > INT_MAX ? INT_MAX : y < INT_MIN ? INT_MIN : (int)y,
                        p) < 0)
                return -1;
            fc->yysz = 4;
            s += nch;
            break;
        }
        case P_YYYY: case P_IYYY:
            if (parse_int(cx, &s, end, 4, n, &v) < 0 || set_int(cx, &fc->year, v, p) < 0)
                return -1;
            fc->yysz = 4;
            break;
        case P_YYY: case P_IYY: case P_YY: case P_IY: case P_Y: case P_I: {
            int w = (p->id == P_YYY || p->id == P_IYY) ? 3 : (p->id == P_YY || p->id == P_IY) ? 2 : 1;
            if ((len = parse_int(cx, &s, end, w, n, &v)) < 0)
                return -1;
            if (len < 4)
                v = w == 1 ? v + 2000 : adjust_partial_year(v);
            if (set_int(cx, &fc->year, v, p) < 0)
                return -1;
            fc->yysz = w;
            break;
        }
        case P_RM: {
            static const char *const rm[] = {"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V",
                                             "IV", "III", "II", "I"};
            if ((v = seq_search(&s, end, rm, 12, 0)) < 0)
                return seq_error(cx, s, end, n, 4);
            if (set_int(cx, &fc->mm, 12 - v, p) < 0)
                return -1;
            break;
        }
        default:
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "formatting field \"%s\" is not supported by to_timestamp yet",
                            p->name);
        }
        if (!fx) {
            extra_skip = 0;
            while (s < end && isspace((unsigned char)*s)) {
                s++;
                extra_skip++;
            }
        }
    }
    return 0;
}

/* do_to_timestamp: the fields into a DtTm and zone offset (seconds east). */
static int to_tm(EvalCtx *cx, const SlStr *in, const SlStr *fmt, DtTm *tm, int *east)
{
    FromChar fc;
    memset(&fc, 0, sizeof(fc));
    FmtNode *nodes = parse_format(cx->arena, fmt);
    if (from_char(cx, nodes, in, &fc) < 0)
        return -1;
    memset(tm, 0, sizeof(*tm));
    tm->mon = 1;
    tm->mday = 1;
    if (fc.ssss) {
        int x = fc.ssss < 0 || fc.ssss > 86400 ? 86400 : fc.ssss;
        tm->hour = x / 3600;
        x %= 3600;
        tm->min = x / 60;
        tm->sec = x % 60;
    }
    if (fc.ss)
        tm->sec = fc.ss;
    if (fc.mi)
        tm->min = fc.mi;
    if (fc.hh)
        tm->hour = fc.hh;
    if (fc.clock12) {
        if (tm->hour < 1 || tm->hour > 12) {
            sl_error(cx->err, ERRCODE_INVALID_DATETIME_FORMAT,
                     "hour \"%d\" is invalid for the 12-hour clock", tm->hour);
            sl_error_hint(cx->err, "Use the 24-hour clock, or give an hour between 1 and 12.");
            return -1;
        }
        if (fc.pm && tm->hour < 12)
            tm->hour += 12;
        else if (!fc.pm && tm->hour == 12)
            tm->hour = 0;
    }
    bool have_year = false, have_mon = false, have_day = false;
    int64_t year = 0;
    if (fc.year) {
        if (fc.cc && fc.yysz <= 2) {
            year = fc.year % 100;
            if (year)
                year += fc.cc >= 0 ? ((int64_t)fc.cc - 1) * 100 : 0;
            else
                year = (int64_t)fc.cc * 100;
        } else {
            year = fc.bc ? -(int64_t)fc.year : fc.year;
            if (year < 0)
                year++;
        }
        have_year = true;
    } else if (fc.cc) {
        year = fc.cc >= 0 ? ((int64_t)fc.cc - 1) * 100 + 1 : (int64_t)fc.cc * 100 + 1;
        if (fc.bc)
            year = -year;
        if (year < 0)
            year++;
        have_year = true;
    }
    if (year > 100000000 || year < -100000000)
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "date/time field value out of range: \"%.*s\"",
                        (int)SL_MIN(in->len, 1000), in->ptr);
    tm->year = (int)year;
    if (fc.w) /* a week of the month beyond any month makes the day invalid */
        fc.dd = fc.w < 1 || fc.w > 6 ? 32 : (fc.w - 1) * 7 + 1;
    if (fc.dd) {
        tm->mday = fc.dd;
        have_day = true;
    }
    if (fc.mm) {
        tm->mon = fc.mm;
        have_mon = true;
    }
    if (fc.ddd && (tm->mon <= 1 || tm->mday <= 1)) {
        static const int ysum[2][13] = {
            {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
            {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366}};
        if (!tm->year && !fc.bc)
            return sl_error(cx->err, ERRCODE_INVALID_DATETIME_FORMAT,
                            "cannot calculate day of year without year information");
        const int *y = ysum[dt_days_in_month(tm->year, 2) == 29];
        int m = 1;
        while (m <= 12 && fc.ddd > y[m])
            m++;
        if (tm->mon <= 1)
            tm->mon = m;
        if (tm->mday <= 1)
            tm->mday = fc.ddd - y[m - 1];
        have_mon = have_day = true;
    }
    tm->fsec = (int64_t)fc.ms * 1000 + (int64_t)fc.us;
    int n = (int)SL_MIN(in->len, 1000);
    if ((have_mon && (tm->mon < 1 || tm->mon > 12)) || (have_day && (tm->mday < 1 || tm->mday > 31)) ||
        (have_year && have_mon && have_day && tm->mday > dt_days_in_month(tm->year, tm->mon)))
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "date/time field value out of range: \"%.*s\"", n, in->ptr);
    if (tm->hour < 0 || tm->hour >= 24 || tm->min < 0 || tm->min >= 60 || tm->sec < 0 ||
        tm->sec >= 60 || tm->fsec < 0 || tm->fsec >= USECS_PER_SEC)
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "date/time field value out of range: \"%.*s\"", n, in->ptr);
    *east = fc.tzsign ? fc.tzsign * (fc.tzh * 3600 + fc.tzm * 60) : 0;
    return 0;
}

KERNEL(k_to_timestamp_fmt)
{
    FOR_SEL(sel, n, {
        DtTm tm;
        int east;
        int64_t t;
        if (to_tm(cx, &args[0].v.str[i], &args[1].v.str[i], &tm, &east) < 0)
            return -1;
        if (dt_tm2ts(&tm, &t) < 0 || __builtin_sub_overflow(t, (int64_t)east * USECS_PER_SEC, &t) ||
            !dt_ts_valid(t))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "timestamp out of range");
        out->v.i64[i] = t;
    });
    return 0;
}

KERNEL(k_to_date_fmt)
{
    FOR_SEL(sel, n, {
        DtTm tm;
        int east;
        if (to_tm(cx, &args[0].v.str[i], &args[1].v.str[i], &tm, &east) < 0)
            return -1;
        int64_t d = 0;
        if (dt_valid_julian(tm.year, tm.mon, tm.mday))
            d = (int64_t)dt_date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
        if (!dt_valid_julian(tm.year, tm.mon, tm.mday) || !dt_date_valid(d))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "date out of range: \"%.*s\"", (int)SL_MIN(args[0].v.str[i].len, 1000),
                            args[0].v.str[i].ptr);
        out->v.i32[i] = (int32_t)d;
    });
    return 0;
}
