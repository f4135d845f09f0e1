/*
 * metrics.c -- the collector registry and the text exposition format
 * (see metrics.h).
 */
#include "sluice/metrics.h"

#include <math.h>

typedef struct Collector {
    metrics_collect_fn fn;
    void              *arg;
} Collector;

static Collector *collectors;
static int        ncollectors;

void metrics_register(metrics_collect_fn fn, void *arg)
{
    collectors = sl_realloc(collectors, sizeof(Collector) * (size_t)(ncollectors + 1));
    collectors[ncollectors].fn = fn;
    collectors[ncollectors].arg = arg;
    ncollectors++;
}

void metrics_unregister(metrics_collect_fn fn, void *arg)
{
    for (int i = 0; i < ncollectors; i++) {
        if (collectors[i].fn == fn && collectors[i].arg == arg) {
            memmove(&collectors[i], &collectors[i + 1],
                    sizeof(Collector) * (size_t)(ncollectors - i - 1));
            ncollectors--;
            break;
        }
    }
    if (ncollectors == 0) {
        sl_free(collectors);
        collectors = NULL;
    }
}

void metrics_render(StrBuf *out)
{
    for (int i = 0; i < ncollectors; i++)
        collectors[i].fn(out, collectors[i].arg);
}

/* HELP text escapes backslash and newline; label values also the quote. */
static void put_escaped(StrBuf *out, const char *s, bool quote)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            strbuf_puts(out, "\\\\");
        else if (*s == '\n')
            strbuf_puts(out, "\\n");
        else if (quote && *s == '"')
            strbuf_puts(out, "\\\"");
        else
            strbuf_putc(out, *s);
    }
}

void metrics_family(StrBuf *out, const char *name, const char *type, const char *help)
{
    strbuf_printf(out, "# HELP %s ", name);
    put_escaped(out, help, false);
    strbuf_printf(out, "\n# TYPE %s %s\n", name, type);
}

void metrics_label(StrBuf *labels, const char *name, const char *value)
{
    if (labels->len > 0)
        strbuf_putc(labels, ',');
    strbuf_printf(labels, "%s=\"", name);
    put_escaped(labels, value, true);
    strbuf_putc(labels, '"');
}

void metrics_sample(StrBuf *out, const char *name, const char *labels, double value)
{
    strbuf_puts(out, name);
    if (labels != NULL && labels[0] != '\0')
        strbuf_printf(out, "{%s}", labels);
    if (isnan(value))
        strbuf_puts(out, " NaN\n");
    else if (isinf(value))
        strbuf_puts(out, value > 0 ? " +Inf\n" : " -Inf\n");
    else if (value == (double)(int64_t)value && fabs(value) < 9e15)
        strbuf_printf(out, " %lld\n", (long long)value);
    else
        strbuf_printf(out, " %.17g\n", value);
}
