/*
 * resfile.h -- result files: the bytes of large result-log batches, in
 * segment files of sluice's own beside RocksDB (private to src/state/).
 *
 *   resfile_chain_start, resfile_frame_seal   the region's checksums
 *   resfile_open, resfile_append, resfile_finish, resfile_close
 *                                             one batch's region (writer)
 *   resfile_read_begin, resfile_read_chunk, resfile_read_end
 *                                             a committed region (reader)
 *   resfile_remove_all                        every file of a relation
 *   resfile_link_all                          every file, linked into a checkpoint
 *   resfile_pad                               a region's length, padded
 *   resfile_direct_io, resfile_use_direct_io  O_DIRECT writes on or off
 *   resfile_written                           bytes written each way
 *
 * Layout (docs/architecture.md, "Result files"): <state dir>/results/
 * <oid, 8 hex>-<segment, 16 hex>.seg, where the segment number is the id
 * of the batch that started the file.  A batch appends one region:
 *
 *   region header  16 bytes: magic "SLR1", 4 zero bytes, batch id (LE 8)
 *   frames         per chunk: length (LE 4), CRC-32C of the chunk (LE 4),
 *                  the chunk (a row count, then each row with its length:
 *                  a stream chunk's format)
 *
 * The region is fdatasync'ed before the batch's RocksDB write, which holds
 * its reference -- key 'A' + oid + batch id (13 bytes), value
 * RESFILE_REF_BYTES: segment, offset, length, frames, rows and the
 * CRC-32C of the region header and every frame header (the "chain") --
 * and the relation's tail 'M' + oid + 'F': the segment and the end of the
 * last committed region, padded.  Bytes past the tail are never read; the
 * next batch truncates them away before it writes.
 *
 * A region starts at a multiple of RESFILE_ALIGN and is padded with zeros
 * to one (the reference's length is the exact one; the padding is never
 * read), so that it can be written with O_DIRECT from an aligned staging
 * buffer, and a batch never writes into a block of a committed region.
 * Segments written before (regions unpadded) are read as they are; the
 * next region after such a tail starts at the next boundary.
 */
#ifndef SLUICE_RESFILE_H
#define SLUICE_RESFILE_H

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/state.h"

/* A segment takes new regions until it is this long. */
#define RESFILE_SEGMENT_BYTES (64u << 20)
#define RESFILE_REGION_HEADER 16
#define RESFILE_FRAME_HEADER  8
#define RESFILE_REF_BYTES     48
/* Regions start and end (padded) on this boundary: O_DIRECT's alignment of
 * file offsets, lengths and buffers for any logical block size up to it. */
#define RESFILE_ALIGN         4096u
/* A writer's aligned staging buffer: the unit of its direct writes. */
#define RESFILE_STAGE_BYTES   (1u << 20)

typedef struct ResFile ResFile;

/* The CRC-32C of a batch's region header: where its chain starts. */
uint32_t resfile_chain_start(int64_t batch_id);
/* Fills the frame header at hdr for the len-byte chunk that follows it,
 * and extends the chain over that header. */
void resfile_frame_seal(uint8_t *hdr, uint32_t len, uint32_t *chain);

/* Starts batch_id's region for relation oid: at the end of the last
 * committed region of its segment (truncating whatever follows it), or at
 * the start of a new segment.  Returns 0, or -1 with err set. */
int  resfile_open(StateStore *st, uint32_t oid, int64_t batch_id, ResFile **out,
                  SlError *err);
/* Appends n bytes of framed chunks to the region. */
int  resfile_append(ResFile *f, const void *p, size_t n, SlError *err);
/* Makes the region durable (fdatasync) and puts its reference and the new
 * tail into wb: the region is visible once wb is committed. */
int  resfile_finish(ResFile *f, StateBatch *wb, uint32_t frames, uint64_t rows,
                    uint32_t chain, SlError *err);
void resfile_close(ResFile *f);

/* A reader of committed regions; keeps the last segment open. */
typedef struct ResFileRead {
    int       fd;           /* -1: none open */
    uint32_t  oid;
    uint64_t  seg;
    int64_t   batch;
    uint64_t  pos, end;     /* the next frame; the region's end */
    uint32_t  frames_left;
    uint32_t  chain, want_chain;
} ResFileRead;

void resfile_read_init(ResFileRead *r);
/* Opens the region a reference (the value of key 'A' + oid + batch_id)
 * names and checks its header.  Returns 0, or -1 with err set (XX001 when
 * the reference, the file or the header is wrong). */
int  resfile_read_begin(ResFileRead *r, StateStore *st, uint32_t oid, int64_t batch_id,
                        const void *ref, size_t reflen, SlError *err);
/* The region's next chunk, read into a and checked against its CRC-32C:
 * 1 with *chunk and *len set, 0 after the last (once the chain and the
 * length are checked), -1 with err set (XX001 for a bad checksum, a short
 * or torn region). */
int  resfile_read_chunk(ResFileRead *r, Arena *a, const uint8_t **chunk, size_t *len,
                        SlError *err);
void resfile_read_end(ResFileRead *r);

/* n rounded up to a multiple of RESFILE_ALIGN. */
uint64_t resfile_pad(uint64_t n);
/* Whether st's writers open segments with O_DIRECT: on unless the
 * environment variable SLUICE_RESULT_DIRECT_IO is "off", "0" or "false"
 * (read once per store, at its first use).
 * Where the filesystem refuses O_DIRECT a file is written through the page
 * cache either way.  In fault-injection builds the variable may also be
 * "refuse-open" or "refuse-write": O_DIRECT opens, or the first direct
 * write of each file, fail with EINVAL as on such a filesystem.
 * resfile_use_direct_io sets the mode (0 off, 1 on, 2 refuse-open,
 * 3 refuse-write; unit tests). */
bool resfile_direct_io(StateStore *st);
void resfile_use_direct_io(StateStore *st, int mode);
/* Bytes of st's regions (padding included) written with O_DIRECT and
 * through the page cache since the store was opened. */
void resfile_written(StateStore *st, uint64_t *direct, uint64_t *buffered);

/* Unlinks every segment file of relation oid (after its references are
 * gone: DROP, or CREATE under a reused oid).  Returns 0 or -1. */
int  resfile_remove_all(StateStore *st, uint32_t oid, SlError *err);

/* Hard-links every segment file of the store into <dir>/results/ (made
 * here; dir must be on the store's filesystem), for state_checkpoint.
 * Returns 0 or -1 with err (58030). */
int  resfile_link_all(StateStore *st, const char *dir, SlError *err);

#endif /* SLUICE_RESFILE_H */
