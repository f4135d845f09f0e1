/*
 * sys_progress.c -- sys.query_progress: a row per recent micro-batch of
 * each running continuous query (docs/sql-reference.md, "System tables").
 *
 *   sys_progress_register   add the relation to the registry (sys_register)
 *
 * The rows come from the scheduler's in-memory ring (cq_progress in cq.h,
 * CQ_PROGRESS_KEEP batches per query since the server started), newest
 * first per query.  Rates follow Spark's StreamingQueryProgress:
 * input_rows_per_second is the batch's rows over the time since the
 * previous batch started, processed_rows_per_second its rows over its own
 * duration.
 */
#include "syscat_int.h"
#include "sluice/cq.h"
#include "sluice/vrel.h"


typedef struct ProgressWalk {
    VrelRows         *out;
    struct CqRuntime *cqs;
    CqProgress       *ring;
} ProgressWalk;

static void put_ms(VrelRows *r, int64_t us)
{
    vrel_put_float(r, (double)us / 1000.0);
}

static void put_event_time(VrelRows *r, bool has, int64_t pg_us)
{
    if (has)
        vrel_put_pg_us(r, pg_us);
    else
        vrel_put_null(r);
}

static void put_rate(VrelRows *r, int64_t rows, int64_t us)
{
    if (us > 0)
        vrel_put_float(r, (double)rows * 1e6 / (double)us);
    else
        vrel_put_null(r);
}

static void progress_cb(const CqStatus *s, void *arg)
{
    ProgressWalk *w = arg;
    SlError err = {0};
    int n = cq_progress(w->cqs, s->name, w->ring, CQ_PROGRESS_KEEP, &err);
    sl_error_clear(&err);
    for (int i = 0; i < n; i++) {
        const CqProgress *p = &w->ring[i];
        /* ring[i + 1] is the batch before */
        int64_t since_prev = i + 1 < n ? p->started_us - w->ring[i + 1].started_us : 0;
        VrelRows *r = w->out;
        vrel_row(r);
        vrel_put_text(r, s->name);
        vrel_put_int(r, p->batch_id);
        vrel_put_unix_us(r, p->started_us);
        put_ms(r, p->total_us);
        put_ms(r, p->plan_us);
        put_ms(r, p->read_us);
        put_ms(r, p->execute_us);
        put_ms(r, p->sink_us);
        put_ms(r, p->write_us);
        put_ms(r, p->commit_us);
        if (s->trigger_ms >= 0)
            vrel_put_int(r, s->trigger_ms);
        else
            vrel_put_null(r);
        vrel_put_int(r, p->input_rows);
        put_rate(r, p->input_rows, since_prev);
        put_rate(r, p->input_rows, p->total_us);
        put_event_time(r, p->has_watermark, p->watermark_us);
        put_event_time(r, p->has_event_time, p->min_event_us);
        put_event_time(r, p->has_event_time, p->max_event_us);
        vrel_put_int(r, p->state_rows);
        vrel_put_int(r, p->state_bytes);
        vrel_put_int(r, p->evicted_rows);
        vrel_put_int(r, p->late_rows);
        vrel_put_int(r, p->output_rows);
        vrel_put_int(r, p->backlog_rows);
    }
}

static int produce_progress(VrelRows *out)
{
    struct CqRuntime *cqs = syscat_cq_runtime(vrel_rows_syscat(out));
    if (cqs == NULL)
        return 0;
    ProgressWalk w = {out, cqs, sl_malloc(sizeof(CqProgress) * CQ_PROGRESS_KEEP)};
    cq_foreach(cqs, progress_cb, &w);
    sl_free(w.ring);
    return 0;
}

static const VrelDef progress_defs[] = {
    {"sys", "query_progress", 14008,
     "query text, batch_id int8, started_at timestamptz, duration_ms float8, plan_ms float8, "
     "read_ms float8, execute_ms float8, sink_commit_ms float8, state_commit_ms float8, "
     "commit_log_ms float8, trigger_ms int8, input_rows int8, input_rows_per_second float8, "
     "processed_rows_per_second float8, watermark timestamptz, min_event_time timestamptz, "
     "max_event_time timestamptz, state_rows int8, state_bytes int8, evicted_rows int8, "
     "late_rows int8, "
     "output_rows int8, backlog_rows int8",
     produce_progress, "the recent micro-batches of each continuous query"},
};

void sys_progress_register(Syscat *sc)
{
    vrel_register(sc, progress_defs, (int)SL_ARRAY_LEN(progress_defs));
}
