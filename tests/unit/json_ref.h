/*
 * json_ref.h -- the old JSON-lines decoder (json_ref.c), the oracle the new
 * one is compared with.
 *
 *   fmt_json_decode_ref   the same contract as fmt_json_decode (format.h)
 */
#ifndef SLUICE_TESTS_JSON_REF_H
#define SLUICE_TESTS_JSON_REF_H

#include "sluice/format.h"

int fmt_json_decode_ref(const FmtSpec *spec, const char *buf, size_t len, bool final,
                        Batch *b, uint32_t cap, Arena *a, FmtResult *res, SlError *err);

#endif /* SLUICE_TESTS_JSON_REF_H */
