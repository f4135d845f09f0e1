/*
 * replay.c -- runs a fuzz target's LLVMFuzzerTestOneInput over files, the
 * way libFuzzer replays a corpus, without libFuzzer: so that every build
 * (gcc included) checks the seed corpus and any saved crash input.
 *
 *   replay_<target> DIR|FILE ...
 *
 * Exits 0 when every input ran (a crash aborts the process).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            failed++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed += run_file(argv[i]) < 0;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (d == NULL) {
            perror(argv[i]);
            failed++;
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            failed += run_file(path) < 0;
            files++;
        }
        closedir(d);
    }
    printf("replayed %d inputs, %d unreadable\n", files, failed);
    return failed ? 1 : 0;
}
