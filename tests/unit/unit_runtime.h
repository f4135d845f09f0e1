/*
 * unit_runtime.h -- what C unit tests that run statements share.
 *
 *   unit_runtime_new  a Runtime (rt_create) over a catalog and a state
 *                     store the test opened (unit_data.h), one statement
 *                     worker and engine_workers engine workers
 *   unit_row_text     row r of a batch as "a|b" (NULL written as "NULL")
 *                     appended to a StrBuf
 *   unit_rows_cb      a ResultSink callback: each row as one such line
 *                     appended to the StrBuf in the sink's ctx
 */
#ifndef SLUICE_TESTS_UNIT_RUNTIME_H
#define SLUICE_TESTS_UNIT_RUNTIME_H

#include "sluice/runtime.h"
#include "sluice/strbuf.h"
#include "sluice/types.h"

__attribute__((unused))
static Runtime *unit_runtime_new(Catalog *cat, StateStore *st, int engine_workers)
{
    RuntimeOptions ro = {.engine_workers = engine_workers, .statement_workers = 1};
    Runtime *rt = rt_create(&ro);
    rt->cat = cat;
    rt->st = st;
    return rt;
}

__attribute__((unused))
static void unit_row_text(const Batch *b, uint32_t r, StrBuf *out)
{
    for (uint32_t c = 0; c < b->ncols; c++) {
        if (c)
            strbuf_putc(out, '|');
        if (vector_is_null(&b->cols[c], r))
            strbuf_puts(out, "NULL");
        else
            value_format_text(&b->cols[c], r, out);
    }
}

__attribute__((unused))
static int unit_rows_cb(ResultSink *sink, const Batch *b)
{
    StrBuf *out = sink->ctx;
    for (uint32_t r = 0; r < b->nrows; r++) {
        unit_row_text(b, r, out);
        strbuf_putc(out, '\n');
    }
    return 0;
}

#endif /* SLUICE_TESTS_UNIT_RUNTIME_H */
