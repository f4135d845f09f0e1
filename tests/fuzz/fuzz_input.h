/*
 * fuzz_input.h -- how fuzz_types.c and fuzz_functions.c read an input: its
 * first byte picks what to run; the rest, split at its first NUL, is two
 * texts (the second empty when there is no NUL).
 *
 *   fuzz_input(data, size)   the input's parts (size is at least 1)
 */
#ifndef SLUICE_FUZZ_INPUT_H
#define SLUICE_FUZZ_INPUT_H

#include <stdint.h>
#include <string.h>

typedef struct FuzzInput {
    uint8_t     op;
    const char *s, *s2;         /* the bytes after op; those after the NUL */
    size_t      len, len1, len2; /* their count; before the NUL; after it */
} FuzzInput;

static inline FuzzInput fuzz_input(const uint8_t *data, size_t size)
{
    FuzzInput in;
    in.op = data[0];
    in.s = (const char *)data + 1;
    in.len = size - 1;
    const char *nul = memchr(in.s, '\0', in.len);
    in.len1 = nul ? (size_t)(nul - in.s) : in.len;
    in.s2 = nul ? nul + 1 : "";
    in.len2 = nul ? in.len - in.len1 - 1 : 0;
    return in;
}

#endif /* SLUICE_FUZZ_INPUT_H */
