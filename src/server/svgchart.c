/*
 * svgchart.c -- plots against wall-clock time as inline SVG (svgchart.h).
 *
 * A plot is 540 x 250 pixels: the plot area, a value axis on each side
 * that has series (ticks at 1, 2, 2.5 or 5 times a power of ten, four to
 * six of them, the range taking in 0 and leaving room above the largest
 * value), the time axis under it (ticks at round seconds, minutes or hours
 * in UTC, three to six over 3 s or more).  Values are drawn as they are
 * given: nothing is smoothed, a missing value (NAN) is skipped, a line of
 * one point is a dot.
 */
#include "svgchart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CHART_W   540
#define CHART_H   250
#define MARGIN_L  64
#define MARGIN_R1 32        /* right margin without a right axis: half a time label */
#define MARGIN_R2 64        /* with one */
#define MARGIN_T  12
#define MARGIN_B  40

void svgchart_html(StrBuf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '<': strbuf_puts(b, "&lt;"); break;
        case '>': strbuf_puts(b, "&gt;"); break;
        case '&': strbuf_puts(b, "&amp;"); break;
        case '"': strbuf_puts(b, "&quot;"); break;
        case '\'': strbuf_puts(b, "&#39;"); break;
        default: strbuf_putc(b, *s); break;
        }
    }
}

void svgchart_value(char *buf, size_t n, double v)
{
    double a = fabs(v);
    if (a >= 1e12)
        snprintf(buf, n, "%.3gT", v / 1e12);
    else if (a >= 1e9)
        snprintf(buf, n, "%.3gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, n, "%.3gM", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, n, "%.3gk", v / 1e3);
    else
        snprintf(buf, n, "%.3g", v);
}

/* The smallest of 1, 2, 2.5, 5 times a power of ten that is at least
 * range / ticks. */
static double nice_step(double range, int ticks)
{
    double raw = range / ticks;
    double mag = pow(10, floor(log10(raw)));
    static const double m[] = {1, 2, 2.5, 5, 10};
    for (int i = 0; i < 5; i++)
        if (m[i] * mag >= raw * (1 - 1e-9))
            return m[i] * mag;
    return 10 * mag;
}

typedef struct Axis {
    bool   used;
    double lo, hi, step;
    const char *color;      /* its first series' (the title's color with two axes) */
} Axis;

/* The range of the values on axis ax (stacked bars by their sums), from 0
 * or below, rounded out to whole ticks. */
static void axis_range(const SvgChart *c, int ax, Axis *a)
{
    double lo = 0, hi = 0;
    a->used = false;
    a->color = NULL;
    for (int i = 0; i < c->n; i++) {
        double stack = 0;
        for (int s = 0; s < c->nseries; s++) {
            const SvgSeries *ss = &c->series[s];
            if (ss->axis != ax)
                continue;
            double v = ss->y[i];
            if (isnan(v) || isinf(v))
                continue;
            if (ss->kind == SVG_BAR)
                v = stack += v > 0 ? v : 0;
            if (v > hi)
                hi = v;
            if (v < lo)
                lo = v;
        }
    }
    for (int s = 0; s < c->nseries; s++)
        if (c->series[s].axis == ax) {
            a->used = true;
            if (a->color == NULL)
                a->color = c->series[s].color;
        }
    if (hi - lo <= 0)
        hi = lo + 4;        /* nothing but one value: ticks 1 apart */
    a->step = nice_step(hi - lo, 4);
    a->lo = floor(lo / a->step) * a->step;
    a->hi = ceil(hi / a->step) * a->step;
    /* a line at the top would lie on the frame: a tick of room above it */
    if (a->hi - hi < a->step / 20)
        a->hi += a->step;
}

/* Each at most twice the one before: a span gets 3 to 6 ticks. */
static const int time_steps_s[] = {1,    2,    3,    5,     10,    15,    20,    30,
                                   60,   120,  180,  300,   600,   900,   1200,  1800,
                                   3600, 7200, 10800, 21600, 43200, 86400};

typedef struct Frame {
    int    l, r, t, b;      /* the plot area's edges in pixels */
    double t0, t1;          /* its time range, seconds */
} Frame;

static double px_of_time(const Frame *f, double sec)
{
    return f->l + (sec - f->t0) / (f->t1 - f->t0) * (f->r - f->l);
}

static double py_of_value(const Frame *f, const Axis *a, double v)
{
    return f->b - (v - a->lo) / (a->hi - a->lo) * (f->b - f->t);
}

static void put_time_axis(StrBuf *b, const Frame *f)
{
    double span = f->t1 - f->t0;
    int step = time_steps_s[SL_ARRAY_LEN(time_steps_s) - 1];
    for (size_t i = 0; i < SL_ARRAY_LEN(time_steps_s); i++)
        if (span / time_steps_s[i] <= 6) {
            step = time_steps_s[i];
            break;
        }
    for (double s = ceil(f->t0 / step) * step; s <= f->t1; s += step) {
        double x = px_of_time(f, s);
        time_t tt = (time_t)s;
        struct tm tm;
        gmtime_r(&tt, &tm);
        char label[16];
        strftime(label, sizeof(label), step < 60 ? "%H:%M:%S" : "%H:%M", &tm);
        strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>",
                      x, f->t, x, f->b);
        strbuf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s"
                         "</text>", x, f->b + 14, label);
    }
    strbuf_printf(b, "<text class=\"axis-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
                     "time (UTC)</text>", (f->l + f->r) / 2, f->b + 32);
}

static void put_value_axis(StrBuf *b, const Frame *f, const Axis *a, int side,
                           const char *label, bool colored)
{
    int x = side == 0 ? f->l - 5 : f->r + 5;
    const char *anchor = side == 0 ? "end" : "start";
    for (double v = a->lo; v <= a->hi + a->step / 2; v += a->step) {
        double y = py_of_value(f, a, v);
        if (side == 0)
            strbuf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                             "stroke=\"#e4e4e4\"/>", f->l, y, f->r, y);
        char t[32];
        svgchart_value(t, sizeof(t), fabs(v) < a->step / 1e6 ? 0 : v);
        strbuf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"%s\">%s</text>",
                      x, y + 4, anchor, t);
    }
    int lx = side == 0 ? 14 : CHART_W - 10, ly = (f->t + f->b) / 2;
    strbuf_printf(b, "<text class=\"axis-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                     "transform=\"rotate(%d %d %d)\"", lx, ly, side == 0 ? -90 : 90, lx, ly);
    if (colored && a->color != NULL)
        strbuf_printf(b, " fill=\"%s\"", a->color);
    strbuf_putc(b, '>');
    svgchart_html(b, label);
    strbuf_puts(b, "</text>");
}

static void put_line(StrBuf *b, const SvgChart *c, const Frame *f, const Axis *a,
                     const SvgSeries *s)
{
    int points = 0, last = -1;
    for (int i = 0; i < c->n; i++)
        if (!isnan(s->y[i]) && !isinf(s->y[i])) {
            points++;
            last = i;
        }
    strbuf_puts(b, "<polyline class=\"series\" data-series=\"");
    svgchart_html(b, s->name);
    strbuf_printf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", s->color,
                  s->kind == SVG_DASHED ? " stroke-dasharray=\"6 4\"" : "");
    for (int i = 0; i < c->n; i++) {
        if (isnan(s->y[i]) || isinf(s->y[i]))
            continue;
        strbuf_printf(b, "%.1f,%.1f ", px_of_time(f, (double)c->t[i] / 1e6),
                      py_of_value(f, a, s->y[i]));
    }
    strbuf_puts(b, "\"/>");
    if (points == 1)
        strbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>",
                      px_of_time(f, (double)c->t[last] / 1e6), py_of_value(f, a, s->y[last]),
                      s->color);
}

/* The SVG_BAR series, each point's bars stacked in the series' order. */
static void put_bars(StrBuf *b, const SvgChart *c, const Frame *f, const Axis *axes)
{
    double w = c->n > 0 ? 0.7 * (f->r - f->l) / c->n : 1;
    w = w < 1.5 ? 1.5 : w > 10 ? 10 : w;
    double *base = sl_calloc((size_t)(c->n > 0 ? c->n : 1), sizeof(double));
    for (int s = 0; s < c->nseries; s++) {
        const SvgSeries *ss = &c->series[s];
        if (ss->kind != SVG_BAR)
            continue;
        const Axis *a = &axes[ss->axis];
        strbuf_puts(b, "<g class=\"bars\" data-series=\"");
        svgchart_html(b, ss->name);
        strbuf_printf(b, "\" fill=\"%s\">", ss->color);
        for (int i = 0; i < c->n; i++) {
            double v = ss->y[i];
            if (isnan(v) || isinf(v) || v <= 0)
                continue;
            double y0 = py_of_value(f, a, base[i] + (a->lo > 0 ? a->lo : 0));
            double y1 = py_of_value(f, a, base[i] + v);
            base[i] += v;
            double x = px_of_time(f, (double)c->t[i] / 1e6) - w / 2;
            strbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", x,
                          y1, w, y0 - y1 > 0.5 ? y0 - y1 : 0.5);
        }
        strbuf_puts(b, "</g>");
    }
    sl_free(base);
}

void svgchart_put(StrBuf *b, const SvgChart *c)
{
    Axis axes[2];
    axis_range(c, 0, &axes[0]);
    axis_range(c, 1, &axes[1]);
    bool two = axes[1].used && c->axis_label[1] != NULL;
    Frame f = {MARGIN_L, CHART_W - (two ? MARGIN_R2 : MARGIN_R1), MARGIN_T, CHART_H - MARGIN_B,
               (double)c->t0 / 1e6, (double)c->t1 / 1e6};
    if (f.t1 <= f.t0)
        f.t1 = f.t0 + 1;
    strbuf_puts(b, "<div class=\"chart\" id=\"");
    svgchart_html(b, c->id);
    strbuf_puts(b, "\"><h3>");
    svgchart_html(b, c->title);
    strbuf_printf(b, "</h3><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                     "height=\"%d\" font-size=\"11\">", CHART_W, CHART_H);
    strbuf_printf(b, "<rect class=\"plot-area\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                     "fill=\"#fcfcfc\" stroke=\"#999\"/>", f.l, f.t, f.r - f.l, f.b - f.t);
    put_time_axis(b, &f);
    put_value_axis(b, &f, &axes[0], 0, c->axis_label[0], two);
    if (two)
        put_value_axis(b, &f, &axes[1], 1, c->axis_label[1], true);
    bool any = false;
    for (int s = 0; s < c->nseries && !any; s++)
        for (int i = 0; i < c->n && !any; i++)
            any = !isnan(c->series[s].y[i]) && !isinf(c->series[s].y[i]);
    if (!any)
        strbuf_printf(b, "<text class=\"no-data\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                         "fill=\"#888\">no batch to show</text>", (f.l + f.r) / 2,
                      (f.t + f.b) / 2);
    put_bars(b, c, &f, axes);
    for (int s = 0; s < c->nseries; s++)
        if (c->series[s].kind != SVG_BAR)
            put_line(b, c, &f, &axes[c->series[s].axis], &c->series[s]);
    strbuf_printf(b, "</svg><div class=\"legend\" style=\"max-width:%dpx\">", CHART_W);
    for (int s = 0; s < c->nseries; s++) {
        const SvgSeries *ss = &c->series[s];
        strbuf_printf(b, "<span><i style=\"background:%s\"></i>", ss->color);
        svgchart_html(b, ss->name);
        if (two)
            strbuf_puts(b, ss->axis == 0 ? " (left)" : " (right)");
        strbuf_puts(b, "</span>");
    }
    strbuf_puts(b, "</div></div>\n");
}
