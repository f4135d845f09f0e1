/*
 * kvsort.h -- an external sort of key/value pairs in bounded memory, for
 * bulk writes into the state store (a COPY into a table, copy.c).
 *
 *   kvsort_new, kvsort_free        a sort whose runs spill under
 *                                  <state>/bulk/ (state_bulk_dir)
 *   kvsort_add                     one pair, in any order
 *   kvsort_merge_step              merge spilled runs, a step at a time
 *   kvsort_next                    the pairs in key order (bytewise)
 *   kvsort_count, kvsort_in_memory   pairs added, none spilled?
 *
 * The pairs are held in memory until they come to run_bytes; then they
 * are sorted and written to a run file, which is unlinked as soon as it is
 * made (so that neither an error nor a crash can leave it behind).  Reading
 * merges at most a fan-in of runs at once (run_bytes / 32 KiB of them,
 * 4 to 96); more runs are first merged into longer ones by
 * kvsort_merge_step.  Every record of a run carries a CRC-32C that the
 * merge checks (XX001 when a run was damaged on disk).  Everything the sort
 * holds -- the pairs in memory, the index, the read and write buffers --
 * is charged to the memory account given to kvsort_new.  Equal keys come
 * out next to each other, in no particular order.  Not thread-safe: one
 * thread at a time.
 */
#ifndef SLUICE_KVSORT_H
#define SLUICE_KVSORT_H

#include "sluice/memacct.h"
#include "sluice/state.h"
#include "sluice/types.h"

typedef struct KvSort KvSort;

/* A sort whose run files go under state_bulk_dir(st), holding about
 * run_bytes of pairs in memory; keys share their first `skip` bytes (a
 * key prefix), which the in-memory sort then skips.  Charges mem. */
KvSort *kvsort_new(StateStore *st, SlMemAccount *mem, size_t run_bytes, size_t skip);
/* Closes (and so removes) its runs and credits mem; NULL is fine. */
void    kvsort_free(KvSort *s);

/* Adds a pair (copied); may write a run: 0, or -1 with err (53100 on a
 * full disk, 58030 on another write error). */
int     kvsort_add(KvSort *s, const void *key, size_t klen, const void *val, size_t vlen,
                   SlError *err);
uint64_t kvsort_count(const KvSort *s);
/* Whether every pair is still in memory (no run was written). */
bool     kvsort_in_memory(const KvSort *s);

/* After the last kvsort_add: does one step of the merge (sorts what is
 * held, or merges a fan-in of runs into one) and returns 1 when more steps
 * are needed, 0 when kvsort_next can read, -1 with err.  The caller may
 * check for a cancel between steps. */
int     kvsort_merge_step(KvSort *s, SlError *err);
/* The next pair in key order: 1 with key and val pointing into the sort's
 * buffers (valid until the next call), 0 at the end, -1 with err. */
int     kvsort_next(KvSort *s, SlStr *key, SlStr *val, SlError *err);

#endif /* SLUICE_KVSORT_H */
