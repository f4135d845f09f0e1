/*
 * fuzz_sql.c -- libFuzzer target for the SQL front end and evaluator:
 * tokenizer, parser, analyzer (rt_parse, rt_prepare) and, for statements
 * that analyze, rt_execute with every parameter bound to the text '1'.
 *
 * The input is one query string (any bytes).  Everything is allocated in
 * one arena destroyed at the end, so a leak shows up under LeakSanitizer.
 * Nothing may crash, overrun, leak or run away.
 *
 *   LLVMFuzzerTestOneInput(data, size)
 */
#include "sluice/runtime.h"
#include "sluice/ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Formats every value, as the server does for DataRow. */
static int sink_cb(ResultSink *sink, const Batch *b)
{
    StrBuf *out = sink->ctx;
    for (uint32_t r = 0; r < b->nrows; r++)
        for (uint32_t c = 0; c < b->ncols; c++)
            if (!vector_is_null(&b->cols[c], r))
                value_format_text(&b->cols[c], r, out);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts = NULL;
    StrBuf out;
    strbuf_init(&out);
    if (rt_parse(&a, (const char *)data, size, &stmts, &err) == 0) {
        for (int i = 0; i < list_len(stmts); i++) {
            Prepared *p;
            if (rt_prepare(NULL, &a, (const char *)data, list_nth(stmts, i), NULL, 0, &p, &err) == 0) {
                int ncols, nparams;
                const ColumnDesc *cols;
                const SlType *ptypes;
                rt_describe(p, &ncols, &cols, &nparams, &ptypes);
                ParamValue *params = ARENA_ARRAY(&a, ParamValue, nparams ? nparams : 1);
                for (int k = 0; k < nparams; k++) {
                    params[k].data = "1";
                    params[k].len = 1;
                    params[k].format = 0;
                }
                ResultSink sink = {&out, sink_cb};
                char tag[64];
                (void)rt_execute(p, params, nparams, &sink, tag, sizeof(tag), &err);
            }
            sl_error_clear(&err);
        }
    }
    sl_error_clear(&err);
    strbuf_free(&out);
    arena_destroy(&a);
    return 0;
}
