/*
 * sink_files.h -- the files sink: a continuous query's output as one file
 * per micro-batch in a directory, with a manifest that lists the committed
 * ones (docs/architecture.md, "The files sink").
 *
 *   fsink_check    the options of CREATE SINK ... (connector = 'files'):
 *                  path and format checked, the path resolved and allowed
 *                  for the sink's owner (rt_files_resolve), the directory
 *                  made
 *   fsink_open     the sink as one query writes it: its committed batches
 *                  read back from the manifest
 *   fsink_commit   batch N's rows: a temporary file, fsync, rename to the
 *                  batch's name, fsync the directory, then one manifest
 *                  line, fsync; a batch already in the manifest is skipped
 *   fsink_close
 *
 * fsink_commit runs on a worker thread, at most one per FilesSink at a
 * time; manifest appends of all sinks are serialized by one mutex, the
 * registry's (incremental.h's IncShared.manifest_mu), which fsink_open is
 * given and which outlives the sink.
 */
#ifndef SLUICE_RUNTIME_SINK_FILES_H
#define SLUICE_RUNTIME_SINK_FILES_H

#include "sluice/catalog.h"
#include "sluice/types.h"

#include <pthread.h>

typedef struct FilesSink FilesSink;
struct Runtime;

/* def's owner decides where it may write in rt (its files root, data
 * directory and roles: hostaccess.c; 42501). */
int  fsink_check(const struct Runtime *rt, const CatRelation *def, SlError *err);
/* The sink relation as query (oid, name) writes it, with the query's output
 * column names; manifest_mu serializes the manifest reads and appends.  The
 * sink keeps rt (which outlives it) for the checks of each commit. */
int  fsink_open(const struct Runtime *rt, const CatRelation *sink, uint32_t query_oid,
                const char *query_name, const char *const *names, int ncols,
                pthread_mutex_t *manifest_mu,
                FilesSink **out, SlError *err);
int  fsink_commit(FilesSink *s, int64_t batch_id, const Batch *const *bs, int nb,
                  SlError *err);
void fsink_close(FilesSink *s);

#endif /* SLUICE_RUNTIME_SINK_FILES_H */
