/*
 * fuzz_json.c -- libFuzzer target for the JSON-lines decoder: a
 * differential test of src/connectors/format_json.c against the decoder
 * it replaced (tests/unit/json_ref.c, main f57dc53's).
 *
 *   LLVMFuzzerTestOneInput(data, size)
 *
 * The first byte picks the columns: bit 0-1 one of four specs (nine
 * columns of every kind with flat keys; the Nexmark bid stream's seven;
 * keys that cannot be compared in place; dotted paths), bit 2 reading
 * only some columns (FmtSpec.need), bit 3 not final (a last line without
 * its newline waits).  The rest is the input, decoded by both into
 * batches of 16 rows until it is consumed.  Both must give the same rows
 * with the same values and the same dead letters with the same reasons,
 * or the target aborts.  Nothing may crash, overrun or leak.
 */
#include "../unit/json_ref.h"

#include "sluice/rowcodec.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const all_names[] = {"i8", "i4", "i2", "f8", "b", "t", "ts", "j", "v"};
static SlType all_types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT4, -1, TYPE_UNKNOWN}, {TYPE_INT2, -1, TYPE_UNKNOWN},
                             {TYPE_FLOAT8, -1, TYPE_UNKNOWN}, {TYPE_BOOL, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN},
                             {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, {TYPE_JSONB, -1, TYPE_UNKNOWN}, {TYPE_VARCHAR, 5, TYPE_UNKNOWN}};
static const char *const bid_names[] = {"auction", "bidder", "price", "channel", "url",
                                        "date_time", "extra"};
static SlType bid_types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN},
                             {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN},
                             {TYPE_TEXT, -1, TYPE_UNKNOWN}};
static const char *const odd_names[] = {"a\"b", "c\\d", "a_very_long_column_name", "n"};
static SlType odd_types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_FLOAT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN},
                             {TYPE_INT4, -1, TYPE_UNKNOWN}};
static const char *const deep_paths[] = {"m.a", "m.b", "t", "n"};
static const uint8_t some[] = {1, 0, 1, 0, 1, 0, 1, 0, 0};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int pick = data[0] & 3;
    bool need = data[0] & 4, final = !(data[0] & 8);
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    Arena a;
    arena_init(&a, 1 << 16);
    FmtSpec spec;
    const SlType *types;
    int ncols;
    if (pick == 0) {
        ncols = 9;
        types = all_types;
        fmt_spec_init(&spec, &a, ncols, all_names, all_types, NULL);
    } else if (pick == 1) {
        ncols = 7;
        types = bid_types;
        fmt_spec_init(&spec, &a, ncols, bid_names, bid_types, NULL);
    } else {
        ncols = 4;
        types = odd_types;
        fmt_spec_init(&spec, &a, ncols, odd_names, odd_types, pick == 3 ? deep_paths : NULL);
    }
    spec.need = need ? some : NULL;
    spec.max_record_bytes = 4096;
    FmtResult rx = {0}, ry = {0};
    SlError err = {0};
    for (int rounds = 0; rounds < 1000; rounds++) {
        Batch *bx = batch_alloc(&a, types, (uint32_t)ncols, 16);
        Batch *by = batch_alloc(&a, types, (uint32_t)ncols, 16);
        fmt_json_decode_ref(&spec, buf, len, final, bx, 16, &a, &rx, &err);
        fmt_json_decode(&spec, buf, len, final, by, 16, &a, &ry, &err);
        if (!json_ref_same(ncols, bx, &rx, by, &ry)) {
            fprintf(stderr, "fuzz_json: the decoders differ (spec %d): rows %u/%u dead %d/%d\n",
                    pick, bx->nrows, by->nrows, rx.ndead, ry.ndead);
            abort();
        }
        if (bx->nrows < 16)
            break;      /* the input is used up (or waits for more) */
    }
    arena_destroy(&a);
    return 0;
}
