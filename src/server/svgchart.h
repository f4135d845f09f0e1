/*
 * svgchart.h -- plots against wall-clock time as inline SVG, for the HTTP
 * pages (pages.c).  Pure: it writes text into a StrBuf and reads nothing
 * else, so a unit test can draw any figures.
 *
 *   svgchart_put   one plot: a time axis at the bottom (UTC, ticks at
 *                  round seconds, minutes or hours), a value axis on the
 *                  left and optionally a second one on the right, each
 *                  from its own range with round ticks, a grid, the
 *                  series (lines, dashed lines, stacked bars) and an HTML
 *                  legend under it
 *   svgchart_value format a figure shortly (1.5k, 2.3M, 0.25)
 *
 * The markup names its parts for tests and style sheets: the plot area is
 * <rect class="plot-area">, tick labels are <text class="tick">, axis
 * titles <text class="axis-label">, each line <polyline class="series"
 * data-series="NAME">, each stacked series <g class="bars"
 * data-series="NAME">.  Every text is escaped (svgchart_html).
 */
#ifndef SLUICE_SVGCHART_H
#define SLUICE_SVGCHART_H

#include <stdint.h>

#include "sluice/strbuf.h"

typedef enum SvgSeriesKind {
    SVG_LINE,       /* a polyline through the points that have a value */
    SVG_DASHED,     /* the same, dashed (a limit: the trigger interval) */
    SVG_BAR,        /* bars stacked on the previous SVG_BAR series */
} SvgSeriesKind;

typedef struct SvgSeries {
    const char   *name;     /* legend text and data-series */
    const char   *color;    /* a CSS color, written as given */
    const double *y;        /* one value per point; NAN: none there */
    int           axis;     /* 0: the left axis, 1: the right one */
    SvgSeriesKind kind;
} SvgSeries;

typedef struct SvgChart {
    const char      *id;            /* the element id of the plot's <div> */
    const char      *title;
    const char      *axis_label[2]; /* the value axes' titles; [1] NULL: one axis */
    const int64_t   *t;             /* n points' times, microseconds since the Unix epoch */
    int              n;
    int64_t          t0, t1;        /* the time axis' range (t1 > t0) */
    const SvgSeries *series;
    int              nseries;
} SvgChart;

/* Writes the plot's <div> (title, SVG, legend) to b. */
void svgchart_put(StrBuf *b, const SvgChart *c);
/* A figure in at most about 6 characters: 950, 1.5k, 2.25M, 0.125, -3. */
void svgchart_value(char *buf, size_t n, double v);
/* Text with <, >, &, " and ' escaped for HTML and SVG. */
void svgchart_html(StrBuf *b, const char *s);

#endif /* SLUICE_SVGCHART_H */
