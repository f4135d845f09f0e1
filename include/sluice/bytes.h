/*
 * bytes.h -- fixed-width integers in byte buffers: big-endian for keys
 * (byte order is numeric order for unsigned values), little-endian where a
 * format says so; unsigned LEB128 varints (get_uvarint).
 */
#ifndef SLUICE_BYTES_H
#define SLUICE_BYTES_H

#include <stdbool.h>
#include <stdint.h>

static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

static inline uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get_be64(const uint8_t *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

/* Signed times as key bytes: sign bit flipped, big-endian, so byte order is
 * time order. */
static inline void put_time_key(uint8_t *p, int64_t t)
{
    put_be64(p, (uint64_t)t ^ 0x8000000000000000ull);
}

static inline int64_t get_time_key(const uint8_t *p)
{
    return (int64_t)(get_be64(p) ^ 0x8000000000000000ull);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t get_le64(const uint8_t *p)
{
    return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* An unsigned LEB128 varint at *p, before end, into *v (the pointer moves
 * past it); false if it runs past end or 64 bits. */
static inline bool get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return false;
        uint8_t c = *(*p)++;
        r |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

#endif /* SLUICE_BYTES_H */
