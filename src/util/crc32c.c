/*
 * crc32c.c -- CRC-32C (see crc32c.h).
 *
 *   sl_crc32c, sl_crc32c_sw, sl_crc32c_hw
 *
 * Two implementations with equal results: the SSE4.2 crc32 instruction, 8
 * bytes at a time (x86-64 only, chosen once at run time with
 * __builtin_cpu_supports, so a binary built for any x86-64 runs anywhere),
 * and slicing-by-8 over eight 256-entry tables made on first use.
 */
#include "sluice/crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC32C_X86 1
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82F63B78u    /* 0x1EDC6F41 reflected */

static uint32_t        table[8][256];
static pthread_once_t  table_once = PTHREAD_ONCE_INIT;

static void table_make(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
}

uint32_t sl_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&table_once, table_make);
    const uint8_t *s = p;
    uint32_t c = ~crc;
    while (n > 0 && ((uintptr_t)s & 7) != 0) {
        c = (c >> 8) ^ table[0][(c ^ *s++) & 0xFF];
        n--;
    }
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + 4, 4);
        lo ^= c;    /* little-endian: the first byte is the low one */
        c = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^
            table[4][lo >> 24] ^ table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^
            table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        s += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = (c >> 8) ^ table[0][(c ^ *s++) & 0xFF];
    return ~c;
}

#ifdef CRC32C_X86
__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *s = p;
    uint64_t c = ~crc;
    while (n > 0 && ((uintptr_t)s & 7) != 0) {
        c = _mm_crc32_u8((uint32_t)c, *s++);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        c = _mm_crc32_u64(c, w);
        s += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = _mm_crc32_u8((uint32_t)c, *s++);
    return ~(uint32_t)c;
}

static bool           hw;
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

static void hw_look(void)
{
    __builtin_cpu_init();
    hw = __builtin_cpu_supports("sse4.2") != 0;
}

bool sl_crc32c_hw(void)
{
    pthread_once(&hw_once, hw_look);
    return hw;
}

uint32_t sl_crc32c(uint32_t crc, const void *p, size_t n)
{
    return sl_crc32c_hw() ? crc32c_sse42(crc, p, n) : sl_crc32c_sw(crc, p, n);
}
#else
bool sl_crc32c_hw(void)
{
    return false;
}

uint32_t sl_crc32c(uint32_t crc, const void *p, size_t n)
{
    return sl_crc32c_sw(crc, p, n);
}
#endif
