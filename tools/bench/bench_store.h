/*
 * bench_store.h -- the state store of a C benchmark, in a temporary
 * directory of its own (append_bench.c, scan_bench.c).
 *
 *   bench_store_open(name, dir)    a fresh /tmp/sluice-<name>-XXXXXX and
 *                                  its store; NULL with a message on stderr
 *   bench_store_close(st, dir)     close the store, remove the directory;
 *                                  main's exit status
 */
#ifndef SLUICE_BENCH_STORE_H
#define SLUICE_BENCH_STORE_H

#include "sluice/state.h"

#include <stdio.h>
#include <stdlib.h>

#define BENCH_DIR_MAX 128

__attribute__((unused))
static StateStore *bench_store_open(const char *name, char dir[BENCH_DIR_MAX])
{
    snprintf(dir, BENCH_DIR_MAX, "/tmp/sluice-%s-XXXXXX", name);
    if (mkdtemp(dir) == NULL) {
        perror(dir);
        return NULL;
    }
    SlError err = {0};
    StateStore *st;
    if (state_open(dir, &st, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        sl_error_clear(&err);
        return NULL;
    }
    return st;
}

__attribute__((unused))
static int bench_store_close(StateStore *st, const char *dir)
{
    state_close(st);
    char cmd[BENCH_DIR_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}

#endif /* SLUICE_BENCH_STORE_H */
