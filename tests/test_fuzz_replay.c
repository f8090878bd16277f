/* test_fuzz_replay.c - replays every seed and regression input of the libFuzzer harnesses
 * (tests/fuzz/fuzz_*.c) as an ordinary test, on every target and build of make test.
 *
 * The harness sources are #included here, each with LLVMFuzzerTestOneInput renamed, so a
 * harness's own invariants (it traps on a violation: the program dies, which the runners count
 * as a failure) and its references run on the host, the scalar, C++ and FMA-contraction
 * builds, the sanitizers and the cross targets, not only under clang's libFuzzer on x86-64.
 * Inputs: the files named in tests/fuzz/corpus.lst (paths relative to the repository root:
 * the seeds in tests/fuzz/corpus/NAME/ and the crashes turned into regression inputs in
 * tests/fuzz/regressions/NAME/, NAME being the harness). One CHECK per input: the file reads
 * and the harness returns 0; a trap names the input (signal handler) before the program dies.
 * Bare-metal targets cannot list directories, hence the list; where <dirent.h> exists the test
 * also checks (one CHECK per directory) that the list names every file there (refresh it with
 * `tools/fuzz.sh --list` after adding an input).
 * The harnesses allocate at most a few hundred KiB (shapes capped at 4096 elements), which the
 * QEMU Cortex-M boards' 16 MiB hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

/* (each harness below guards its own #define QMX_IMPLEMENTATION the same way) */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#  define QMX_FZ_SMALL 1
#endif

#define LLVMFuzzerTestOneInput qmx_fz_array_api
#include "fuzz/fuzz_array_api.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput qmx_fz_kernels_api
#include "fuzz/fuzz_kernels_api.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput qmx_fz_calib_intmp
#include "fuzz/fuzz_calib_intmp.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput qmx_fz_calib_method
#include "fuzz/fuzz_calib_method.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput qmx_fz_convert_npy
#include "fuzz/fuzz_convert_npy.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput qmx_fz_convert_safetensors
#include "fuzz/fuzz_convert_safetensors.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput qmx_fz_einsum
#include "fuzz/fuzz_einsum.c"
#undef LLVMFuzzerTestOneInput

#include "qmx_test.h"

#if !defined(QMX_FZ_SMALL) && (defined(__unix__) || defined(__APPLE__))
#  include <dirent.h>
#  define QMX_FZ_HAVE_DIRENT 1
#endif

typedef int (*qmx_fz_fn)(const uint8_t *, size_t);
static const struct { const char *name; qmx_fz_fn fn; } qmx_fz_harness[] = {
    {"fuzz_array_api", qmx_fz_array_api},
    {"fuzz_kernels_api", qmx_fz_kernels_api},
    {"fuzz_calib_intmp", qmx_fz_calib_intmp},
    {"fuzz_calib_method", qmx_fz_calib_method},
    {"fuzz_convert_npy", qmx_fz_convert_npy},
    {"fuzz_convert_safetensors", qmx_fz_convert_safetensors},
    {"fuzz_einsum", qmx_fz_einsum},
};
#define QMX_FZ_NH (sizeof qmx_fz_harness / sizeof qmx_fz_harness[0])
#define QMX_FZ_LIST "tests/fuzz/corpus.lst"

/* A harness traps on a violated invariant: name the input before the program dies (hosted
 * targets; a Cortex-M fault prints its own register dump). */
static const char *qmx_fz_current;
static void qmx_fz_died(int sig) {
    fputs("FAIL test_fuzz_replay: the harness trapped (or crashed) on ", stdout);
    fputs(qmx_fz_current ? qmx_fz_current : "?", stdout);
    fputs("\n", stdout);
    fflush(stdout);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The next path of the list (blank lines and # comments skipped); 0 at the end. */
static int qmx_fz_next(FILE *f, char *line, int size) {
    while (fgets(line, size, f)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = 0;
        if (len && line[0] != '#') return 1;
    }
    return 0;
}

/* The harness of tests/fuzz/{corpus,regressions}/NAME/FILE: -1 unknown, -2 skipped here. */
static int qmx_fz_find(const char *path) {
    const char *e = strrchr(path, '/'), *b;
    size_t i, len;
    if (!e) return -1;
    for (b = e; b > path && b[-1] != '/'; b--) {}
    len = (size_t)(e - b);
    for (i = 0; i < QMX_FZ_NH; i++)
        if (strlen(qmx_fz_harness[i].name) == len && !memcmp(qmx_fz_harness[i].name, b, len))
            return (int)i;
    return -1;
}

/* The whole file in a buffer of exactly its size (ASan builds see any over-read). */
static uint8_t *qmx_fz_read(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL, *p;
    size_t cap = 0, n = 0, got;
    if (!f) return NULL;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            p = (uint8_t *)realloc(buf, cap);
            if (!p) { free(buf); fclose(f); return NULL; }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    p = (uint8_t *)malloc(n ? n : 1);
    if (p && n) memcpy(p, buf, n);
    free(buf);
    *size = n;
    return p;
}

#ifdef QMX_FZ_HAVE_DIRENT
static int qmx_fz_listed(const char *path) {
    char line[256];
    int found = 0;
    FILE *f = fopen(QMX_FZ_LIST, "r");
    while (f && !found && qmx_fz_next(f, line, sizeof line)) found = !strcmp(line, path);
    if (f) fclose(f);
    return found;
}
/* Every file of DIR/NAME/ for every harness NAME is in the list (one check per DIR). */
static void qmx_fz_check_dir(const char *dir) {
    size_t h;
    int missing = 0;
    for (h = 0; h < QMX_FZ_NH; h++) {
        char sub[160], path[160 + 260];
        DIR *d;
        struct dirent *e;
        snprintf(sub, sizeof sub, "%s/%s", dir, qmx_fz_harness[h].name);
        d = opendir(sub);
        if (!d) continue;   /* no inputs of that kind (regressions are optional) */
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
            if (!qmx_fz_listed(path)) {
                printf("%s is not in " QMX_FZ_LIST "\n", path);
                missing++;
            }
        }
        closedir(d);
    }
    CHECK(missing == 0, "%s: %d file(s) not in " QMX_FZ_LIST " (run tools/fuzz.sh --list)", dir,
          missing);
}
#endif

int main(void) {
    char line[256];
    FILE *f;
    int n = 0, skipped = 0;
    QMX_TEST_CASE("replay");
    signal(SIGILL, qmx_fz_died);
    signal(SIGABRT, qmx_fz_died);
    signal(SIGSEGV, qmx_fz_died);
#ifdef SIGTRAP
    signal(SIGTRAP, qmx_fz_died);   /* __builtin_trap on aarch64 */
#endif
    f = fopen(QMX_FZ_LIST, "r");
    CHECK(f != NULL, "cannot open " QMX_FZ_LIST " (run from the repository root)");
    if (!f) return QMX_TEST_END();
    while (qmx_fz_next(f, line, sizeof line)) {
        size_t size = 0;
        int h = qmx_fz_find(line);
        uint8_t *data;
        n++;
        if (h == -2) { skipped++; continue; }
        data = h >= 0 ? qmx_fz_read(line, &size) : NULL;
        qmx_fz_current = line;
        /* a violated invariant traps inside the harness: the program dies there */
        CHECK(data != NULL && qmx_fz_harness[h].fn(data, size) == 0, "%s: %s", line,
              h < 0 ? "no harness of that name" : "unreadable");
        free(data);
    }
    fclose(f);
    CHECK(n > 0, QMX_FZ_LIST " names no input");
    printf("replayed %d inputs of %d harnesses (%d skipped on this target)\n", n - skipped,
           (int)QMX_FZ_NH, skipped);
#ifdef QMX_FZ_HAVE_DIRENT
    QMX_TEST_CASE("corpus list up to date");
    qmx_fz_check_dir("tests/fuzz/corpus");
    qmx_fz_check_dir("tests/fuzz/regressions");
#endif
    return QMX_TEST_END();
}
