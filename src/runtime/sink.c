/*
 * sink.c -- a continuous query's sink, by its connector (see sink.h).
 *
 *   sink_check, sink_open, sink_commit, sink_key, sink_wants_deletes, sink_stats,
 *   sink_close
 *
 * Each connector is a small table of functions (SinkOps); the files sink
 * and the Kafka sink keep their own commit protocols and fault points
 * behind it.  Each check and open is handed the Runtime it runs in (the
 * files sink's paths, the KafkaPolicy: rt->kafka).
 */
#include "runtime_int.h"
#include "sink.h"

#include "sink_files.h"
#include "sluice/kafka.h"
#include "sluice/options.h"

#include <errno.h>
#include <string.h>

typedef struct SinkOps {
    const char *connector;
    bool        deletes;        /* writes groups that left the result */
    int  (*check)(Runtime *rt, const CatRelation *def, SlError *err);
    int  (*open)(Runtime *rt, const CatRelation *sink, const CatRelation *query,
                 const char *const *names, int ncols,
                 pthread_mutex_t *manifest_mu, void **out, SlError *err);
    int  (*commit)(void *impl, int64_t batch_id, const Batch *const *rows, int nb,
                   const Batch *const *dels, int nd, SlError *err);
    int  (*key)(const void *impl, const int **cols);    /* NULL: no key */
    void (*close)(void *impl);
} SinkOps;

struct Sink {
    const SinkOps *ops;
    void          *impl;
    /* sink_stats: written by the committing worker, read on the loop */
    _Atomic int64_t commits, failures, retries;
    int64_t        last_batch;      /* the last batch id committed or tried; -1 */
};

/* files (sink_files.c) */

static int files_check(Runtime *rt, const CatRelation *def, SlError *err)
{
    return fsink_check(rt, def, err);
}

static int files_open(Runtime *rt, const CatRelation *sink, const CatRelation *query,
                      const char *const *names, int ncols,
                      pthread_mutex_t *manifest_mu, void **out, SlError *err)
{
    FilesSink *s;
    if (fsink_open(rt, sink, query->oid, query->name, names, ncols, manifest_mu, &s, err) < 0)
        return -1;
    *out = s;
    return 0;
}

static int files_commit(void *impl, int64_t batch_id, const Batch *const *rows, int nb,
                        const Batch *const *dels, int nd, SlError *err)
{
    (void)dels;
    (void)nd;
    return fsink_commit(impl, batch_id, rows, nb, err);
}

static void files_close(void *impl)
{
    fsink_close(impl);
}

/* kafka (src/connectors/kafka_sink.c) */

static int kafka_open(Runtime *rt, const CatRelation *sink, const CatRelation *query,
                      const char *const *names, int ncols,
                      pthread_mutex_t *manifest_mu, void **out, SlError *err)
{
    (void)names;
    (void)ncols;
    (void)manifest_mu;
    KafkaSink *k;
    if (kafka_sink_open(rt != NULL ? rt->kafka : NULL, sink, query, &k, err) < 0)
        return -1;
    *out = k;
    return 0;
}

static int kafka_check(Runtime *rt, const CatRelation *def, SlError *err)
{
    return kafka_sink_validate(rt != NULL ? rt->kafka : NULL, def, err);
}

static int kafka_commit(void *impl, int64_t batch_id, const Batch *const *rows, int nb,
                        const Batch *const *dels, int nd, SlError *err)
{
    return kafka_sink_write(impl, batch_id, rows, nb, dels, nd, err) < 0 ? -1 : 0;
}

static int kafka_key(const void *impl, const int **cols)
{
    return kafka_sink_key(impl, cols);
}

static void kafka_close(void *impl)
{
    kafka_sink_close(impl);
}

static const SinkOps sink_ops[] = {
    {"files", false, files_check, files_open, files_commit, NULL, files_close},
    {"kafka", true, kafka_check, kafka_open, kafka_commit, kafka_key, kafka_close},
};

static const SinkOps *ops_for(const CatRelation *def, SlError *err)
{
    Arena a;
    arena_init(&a, 512);
    Options o;
    const SinkOps *ops = NULL;
    if (opts_parse(&a, def->options, &o, err) < 0)
        goto out;
    const char *connector = opts_get(&o, "connector");
    if (connector == NULL) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "a sink needs a connector");
        sl_error_hint(err, "Add WITH (connector = 'files', path = '...', format = 'json') or "
                           "WITH (connector = 'kafka', topic = '...', "
                           "bootstrap_servers = '...').");
        goto out;
    }
    for (size_t i = 0; i < SL_ARRAY_LEN(sink_ops); i++)
        if (strcmp(sink_ops[i].connector, connector) == 0)
            ops = &sink_ops[i];
    if (ops == NULL) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "sinks with connector \"%s\" are not supported", connector);
        sl_error_hint(err, "Use connector = 'files' or 'kafka'.");
    }
out:
    arena_destroy(&a);
    return ops;
}

int sink_check(Runtime *rt, const CatRelation *def, SlError *err)
{
    const SinkOps *ops = ops_for(def, err);
    return ops == NULL ? -1 : ops->check(rt, def, err);
}

int sink_open(Runtime *rt, const CatRelation *sink, const CatRelation *query,
              const char *const *names, int ncols,
              pthread_mutex_t *manifest_mu, Sink **out, SlError *err)
{
    const SinkOps *ops = ops_for(sink, err);
    void *impl;
    if (ops == NULL || ops->open(rt, sink, query, names, ncols, manifest_mu, &impl, err) < 0)
        return -1;
    Sink *s = sl_calloc(1, sizeof(Sink));
    s->ops = ops;
    s->impl = impl;
    s->last_batch = -1;
    *out = s;
    return 0;
}

int sink_commit(Sink *s, int64_t batch_id, const Batch *const *rows, int nb,
                const Batch *const *dels, int nd, SlError *err)
{
    /* a batch run again (its commit here, or a later step, failed) */
    if (batch_id <= s->last_batch)
        s->retries++;
    s->last_batch = batch_id;
    int rc;
    if (SLUICE_FAULT_FAILS("sink_commit")) {
        sl_error(err, ERRCODE_IO_ERROR, "sink: commit: %s (fault point sink_commit)",
                 strerror(errno));
        rc = -1;
    } else {
        rc = s->ops->commit(s->impl, batch_id, rows, nb, dels, nd, err);
    }
    if (rc < 0)
        s->failures++;
    else
        s->commits++;
    return rc;
}

void sink_stats(const Sink *s, SinkStats *out)
{
    *out = (SinkStats){s->commits, s->failures, s->retries};
}

int sink_key(const Sink *s, const int **cols)
{
    *cols = NULL;
    return s->ops->key == NULL ? 0 : s->ops->key(s->impl, cols);
}

/* Only a keyed sink can write a delete (a tombstone needs the key). */
bool sink_wants_deletes(const Sink *s)
{
    const int *cols;
    return s->ops->deletes && sink_key(s, &cols) > 0;
}

void sink_close(Sink *s)
{
    if (s == NULL)
        return;
    s->ops->close(s->impl);
    sl_free(s);
}
