/*
 * test_svgchart.c -- the plots of the HTTP pages (src/server/svgchart.c):
 * round ticks on each value axis from its own range, clock-time ticks on
 * the time axis, points placed by their times, stacked bars, a missing
 * value skipped, a lone point drawn as a dot, every text escaped, the
 * short figures.  The pages in a browser: tests/test_http_pages.py.
 */
#include "server/svgchart.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define T0 INT64_C(1796601600000000)     /* 2026-12-07 00:00:00 UTC */

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The text of the first element after `after` that starts with `tag`. */
static const char *find_after(const char *s, const char *after, const char *tag)
{
    const char *p = strstr(s, after);
    return p != NULL ? strstr(p, tag) : NULL;
}

static void test_two_axes_and_time_ticks(void)
{
    int64_t t[5];
    for (int i = 0; i < 5; i++)
        t[i] = T0 + (int64_t)i * 15 * 1000000;         /* every 15 s over a minute */
    double in[5] = {NAN, 2000, 2100, 1900, 2000};       /* rows/s: small */
    double done[5] = {700000, 720000, 710000, 730000, 690000};   /* large */
    SvgSeries s[] = {{"input rows/s", "#1f77b4", in, 0, SVG_LINE},
                     {"processed rows/s", "#2ca02c", done, 1, SVG_LINE}};
    SvgChart c = {"rates", "Input & processed", {"input rows/s", "processed rows/s"},
                  t, 5, T0, T0 + 60 * 1000000, s, 2};
    StrBuf b;
    strbuf_init(&b);
    svgchart_put(&b, &c);
    const char *h = b.data;
    CHECK(strstr(h, "<div class=\"chart\" id=\"rates\"><h3>Input &amp; processed</h3>"));
    CHECK(count(h, "class=\"plot-area\"") == 1);
    /* each axis from its own range: the left 0 to 3k by 1k, the right 0
     * to 800k by 200k (nothing in between on either) */
    CHECK(strstr(h, ">1k</text>") && strstr(h, ">3k</text>") && !strstr(h, ">4k</text>"),
          "%s", h);
    CHECK(strstr(h, ">200k</text>") && strstr(h, ">800k</text>") && !strstr(h, ">1M</text>"),
          "%s", h);
    CHECK(!strstr(h, ">1.5k</text>") && !strstr(h, ">100k</text>"), "%s", h);
    /* the time axis: 10 s ticks 00:00:00 .. 00:01:00, titled */
    CHECK(strstr(h, ">00:00:00</text>") && strstr(h, ">00:00:10</text>") &&
          strstr(h, ">00:01:00</text>") && !strstr(h, ">00:00:05</text>"), "%s", h);
    CHECK(count(h, "class=\"axis-label\"") == 3);
    CHECK(strstr(h, ">time (UTC)</text>") && strstr(h, ">processed rows/s</text>"));
    /* the input line skips its missing first value: four points */
    const char *pl = find_after(h, "data-series=\"input rows/s\"", "points=\"");
    CHECK(pl != NULL);
    int pts = 0;
    for (const char *p = pl + 8; *p != '"'; p++)
        pts += *p == ',';
    CHECK(pts == 4, "%d points", pts);
    /* the processed line's first point at the plot's left edge (x = 64) */
    pl = find_after(h, "data-series=\"processed rows/s\"", "points=\"");
    CHECK(pl != NULL && strncmp(pl, "points=\"64.0,", 13) == 0, "%.40s", pl);
    CHECK(strstr(h, "(left)") && strstr(h, "(right)"));
    strbuf_free(&b);
}

static void test_stacked_bars_dashed_line_and_escaping(void)
{
    int64_t t[3] = {T0, T0 + 1000000, T0 + 2000000};
    double a[3] = {10, 0, 30}, bb[3] = {20, 20, 20}, trig[3] = {100, 100, 100};
    SvgSeries s[] = {{"plan", "#111111", a, 0, SVG_BAR},
                     {"<read>", "#222222", bb, 0, SVG_BAR},
                     {"trigger", "#333333", trig, 0, SVG_DASHED}};
    SvgChart c = {"d\"x", "<b>", {"ms", NULL}, t, 3, T0, T0 + 10 * 1000000, s, 3};
    StrBuf b;
    strbuf_init(&b);
    svgchart_put(&b, &c);
    const char *h = b.data;
    CHECK(strstr(h, "id=\"d&quot;x\"><h3>&lt;b&gt;</h3>"), "%s", h);
    CHECK(strstr(h, "data-series=\"&lt;read&gt;\"") && !strstr(h, "<read>"));
    /* a zero is no bar: 2 of plan, 3 of read */
    const char *g1 = strstr(h, "data-series=\"plan\""), *g2 = strstr(h, "data-series=\"&lt;read");
    CHECK(g1 != NULL && g2 != NULL && g1 < g2);
    int plan_bars = 0;
    for (const char *p = strstr(g1, "<rect"); p != NULL && p < g2; p = strstr(p + 1, "<rect"))
        plan_bars++;
    CHECK(plan_bars == 2, "%d", plan_bars);
    CHECK(count(g2, "<rect") == 3);
    CHECK(strstr(h, "stroke-dasharray"));
    /* the axis takes in the dashed 100 and leaves a tick above it */
    CHECK(strstr(h, ">120</text>") || strstr(h, ">125</text>") || strstr(h, ">150</text>"),
          "%s", h);
    CHECK(!strstr(h, "(left)"));        /* one axis: no sides named */
    strbuf_free(&b);
}

static void test_lone_point_and_no_data(void)
{
    int64_t t[1] = {T0 + 5000000};
    double y[1] = {3};
    SvgSeries s[] = {{"lag", "#9467bd", y, 0, SVG_LINE}};
    SvgChart c = {"w", "lag", {"seconds", NULL}, t, 1, T0, T0 + 10 * 1000000, s, 1};
    StrBuf b;
    strbuf_init(&b);
    svgchart_put(&b, &c);
    CHECK(strstr(b.data, "<circle") && !strstr(b.data, "no batch to show"));
    strbuf_reset(&b);
    c.n = 0;
    svgchart_put(&b, &c);
    CHECK(strstr(b.data, "no batch to show") && !strstr(b.data, "<circle"));
    /* nothing but zeros: ticks 1 apart */
    strbuf_reset(&b);
    y[0] = 0;
    c.n = 1;
    svgchart_put(&b, &c);
    CHECK(strstr(b.data, ">4</text>") && !strstr(b.data, ">0.25</text>"), "%s", b.data);
    strbuf_free(&b);
}

/* Over 3 s or more, the time axis has 3 to 6 ticks. */
static void test_time_ticks_over_spans(void)
{
    static const double spans_s[] = {3, 7, 13, 29, 31, 61, 95, 179, 359, 601, 1799,
                                     3601, 7201, 40000, 100000, 170000};
    StrBuf b;
    strbuf_init(&b);
    for (size_t k = 0; k < sizeof(spans_s) / sizeof(spans_s[0]); k++) {
        for (int64_t shift = 0; shift < 3; shift++) {
            SvgChart c = {"x", "x", {"v", NULL}, NULL, 0, T0 + shift * 333333,
                          T0 + shift * 333333 + (int64_t)(spans_s[k] * 1e6), NULL, 0};
            strbuf_reset(&b);
            svgchart_put(&b, &c);
            int n = count(b.data, "\" y=\"224\" text-anchor=\"middle\">");
            CHECK(n >= 3 && n <= 6, "span %g s: %d ticks", spans_s[k], n);
        }
    }
    strbuf_free(&b);
}

static void test_values(void)
{
    char buf[32];
    static const struct {
        double      v;
        const char *want;
    } cases[] = {{0, "0"}, {950, "950"}, {1500, "1.5k"}, {2250000, "2.25M"},
                 {0.125, "0.125"}, {-3, "-3"}, {7e9, "7G"}, {12e12, "12T"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        svgchart_value(buf, sizeof(buf), cases[i].v);
        CHECK(strcmp(buf, cases[i].want) == 0, "%g: %s", cases[i].v, buf);
    }
}

int main(void)
{
    test_two_axes_and_time_ticks();
    test_stacked_bars_dashed_line_and_escaping();
    test_lone_point_and_no_data();
    test_time_ticks_over_spans();
    test_values();
    return unit_done("svgchart");
}
