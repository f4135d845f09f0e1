/*
 * state_int.h -- what a StateStore holds for the other files of src/state/
 * (private to src/state/).
 *
 *   state_counters      the store's per-relation row counters (relstore.c)
 *   state_group_commit  the store's commit policy and open group (relstore.c)
 *   state_resfile       the store's result-file switch, counts and staging
 *                       buffers (resfile.c)
 *
 * state_open makes one of each for the store (rel_counters_new,
 * group_commit_new, resfile_shared_new) and state_close frees them, so two
 * stores in one process keep their own offsets, row ids, groups, direct
 * I/O mode and counts
 * (docs/architecture.md, "Process-wide state").  Each struct is defined in
 * the file that uses it; the store only holds it.
 */
#ifndef SLUICE_STATE_INT_H
#define SLUICE_STATE_INT_H

#include "sluice/state.h"

/* relstore.c: the next row id of each table and the end offsets of each
 * stream, under a mutex that also guards the GroupCommit. */
typedef struct RelCounters RelCounters;
/* relstore.c: the commit mode, the group taking members, its leader, a
 * failed group write, and the appends and writes counted. */
typedef struct GroupCommit GroupCommit;
/* resfile.c: whether result files are written with O_DIRECT, the log
 * lines said, the bytes written each way, the free staging buffers. */
typedef struct ResfileShared ResfileShared;

RelCounters   *state_counters(StateStore *st);
GroupCommit   *state_group_commit(StateStore *st);
ResfileShared *state_resfile(StateStore *st);

RelCounters *rel_counters_new(void);
void         rel_counters_free(RelCounters *rc);
GroupCommit *group_commit_new(void);
void         group_commit_free(GroupCommit *gc);
ResfileShared *resfile_shared_new(void);
void           resfile_shared_free(ResfileShared *sh);

#endif /* SLUICE_STATE_INT_H */
