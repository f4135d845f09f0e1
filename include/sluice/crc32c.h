/*
 * crc32c.h -- CRC-32C (Castagnoli), the checksum of result files.
 *
 *   sl_crc32c          extend a CRC-32C over more bytes
 *   sl_crc32c_hw       whether the SSE4.2 instruction is used
 *
 * The same polynomial as RocksDB's and ext4's checksums (0x1EDC6F41,
 * reflected); sl_crc32c(0, "123456789", 9) is 0xE3069283.  On x86-64 CPUs
 * with SSE4.2 (found at run time) the crc32 instruction computes it; on
 * other CPUs a table-driven loop gives the same values.
 */
#ifndef SLUICE_CRC32C_H
#define SLUICE_CRC32C_H

#include "sluice/common.h"

/* The CRC-32C of the n bytes at p, continuing from crc (0 to start). */
uint32_t sl_crc32c(uint32_t crc, const void *p, size_t n);
/* The portable loop alone (for tests that compare the two). */
uint32_t sl_crc32c_sw(uint32_t crc, const void *p, size_t n);
/* True when sl_crc32c uses the CPU's crc32 instruction. */
bool sl_crc32c_hw(void);

#endif /* SLUICE_CRC32C_H */
