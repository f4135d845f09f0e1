/*
 * test_cq_behind.c -- cq_falling_behind, the rule behind sys.queries'
 * falling_behind (include/sluice/cq.h), over made-up batch figures: a
 * backlog that grows in a sawtooth (issue 19: 124 -> 239 rows, shrinking
 * every other batch) is behind; one that drains, holds steady or is empty
 * is not; batches that together outlast their trigger intervals are
 * behind, one slow batch among quick ones is not, even one stalled for
 * many intervals; too few batches say nothing.
 */
#include "sluice/cq.h"
#include "unit.h"

#include <string.h>

/* n batches (at most 16) with the given backlogs and one duration each. */
static bool behind(const int64_t *backlog, int n, int64_t total_us, int64_t interval_us)
{
    CqProgress p[16];
    memset(p, 0, sizeof(p));
    for (int i = 0; i < n; i++) {
        p[i].batch_id = i;
        p[i].backlog_rows = backlog[i];
        p[i].total_us = total_us;
    }
    return cq_falling_behind(p, n, interval_us);
}

int main(void)
{
    const int N = CQ_BEHIND_BATCHES;
    CHECK(N == 8);
    /* The backlog: it shrinks every other batch, grows on the whole. */
    int64_t saw[] = {124, 110, 150, 137, 180, 166, 214, 239};
    CHECK(behind(saw, N, 1000, 100000));
    /* Growing steadily (the rule before caught only this). */
    int64_t grow[] = {10, 20, 30, 40, 50, 60, 70, 80};
    CHECK(behind(grow, N, 1000, 100000));
    /* Draining after a burst: not behind. */
    int64_t drain[] = {390, 380, 370, 360, 350, 340, 330, 320};
    CHECK(!behind(drain, N, 1000, 100000));
    /* Steady at the max_offsets_per_trigger rate, with noise: not behind. */
    int64_t steady[] = {100, 104, 97, 101, 99, 103, 98, 102};
    CHECK(!behind(steady, N, 1000, 100000));
    /* A sawtooth that drains to 0 now and then keeps up. */
    int64_t empties[] = {20, 0, 30, 40, 50, 60, 70, 80};
    CHECK(!behind(empties, N, 1000, 100000));
    int64_t none[8] = {0};
    CHECK(!behind(none, N, 1000, 100000));
    /* Batches of 300 ms against a 50 ms trigger: behind, backlog or not. */
    CHECK(behind(none, N, 300000, 50000));
    /* Back to back (no interval): the duration says nothing. */
    CHECK(!behind(none, N, 300000, 0));
    /* One slow batch among quick ones: the total stays within the intervals. */
    CqProgress p[8];
    memset(p, 0, sizeof(p));
    for (int i = 0; i < N; i++)
        p[i].total_us = i == 3 ? 200000 : 10000;
    CHECK(!cq_falling_behind(p, N, 50000));
    /* One batch stalled for 8 intervals and more (issue 19, item 22: one
     * outlier is not a trend), however quick the others: not behind. */
    for (int i = 0; i < N; i++)
        p[i].total_us = i == 5 ? 8 * 50000 + 1000 : 1000;
    CHECK(!cq_falling_behind(p, N, 50000));
    p[5].total_us = 60 * 50000;
    CHECK(!cq_falling_behind(p, N, 50000));
    /* Two such stalls in the window are: together the rest overrun. */
    p[1].total_us = 8 * 50000 + 1000;
    CHECK(cq_falling_behind(p, N, 50000));
    /* Every other batch overruns by more than the others save: behind. */
    for (int i = 0; i < N; i++)
        p[i].total_us = i % 2 ? 120000 : 10000;
    CHECK(cq_falling_behind(p, N, 50000));
    /* Fewer batches than the window: not judged. */
    CHECK(!behind(grow, N - 1, 300000, 50000));
    return unit_done("test_cq_behind");
}
