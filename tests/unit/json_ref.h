/*
 * json_ref.h -- the old JSON-lines decoder (json_ref.c), the oracle the new
 * one is compared with.
 *
 *   fmt_json_decode_ref   the same contract as fmt_json_decode (format.h)
 *   json_ref_same         two decodes' outcomes compared
 */
#ifndef SLUICE_TESTS_JSON_REF_H
#define SLUICE_TESTS_JSON_REF_H

#include "sluice/format.h"

int fmt_json_decode_ref(const FmtSpec *spec, const char *buf, size_t len, bool final,
                        Batch *b, uint32_t cap, Arena *a, FmtResult *res, SlError *err);

/* True if two decodes of the same input into batches x and y (ncols
 * columns) decided the same: the same rows with the same values (NULLs,
 * bytes of fixed-width values, bytes of strings), the same dead letters
 * with the same reasons, the same records and bytes consumed. */
bool json_ref_same(int ncols, const Batch *x, const FmtResult *rx, const Batch *y,
                   const FmtResult *ry);

#endif /* SLUICE_TESTS_JSON_REF_H */
