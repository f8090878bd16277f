/* bench_util.h - timing helpers for qmx's benchmarks (single thread, POSIX clock_gettime).
 *
 * One figure = the median of QMX_BENCH_REPS reps (default 7, never fewer than 5). A rep calls
 * the operation back to back until at least QMX_BENCH_REP_MS milliseconds (default 60) have
 * passed, and yields that rep's seconds per call. Before the reps come one untimed warm-up call
 * (page faults, caches) and a calibration of how many calls one rep needs. bqu_measure_ratio
 * alternates the reps of two operations and gives the ratio per pair.
 * bqu_clock_ghz() estimates the core clock from a dependent chain of integer adds (one add
 * per cycle), so a figure can also be given per cycle. */
#ifndef QMX_BENCH_UTIL_H
#define QMX_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BQU_MAX_REPS 99

/* every helper is static (one translation unit per bench) and not every bench uses each */
#if defined(__GNUC__) || defined(__clang__)
#  define BQU_FN static __attribute__((unused))
#else
#  define BQU_FN static
#endif

BQU_FN double bqu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

BQU_FN int bqu_env_int(const char *name, int dflt) {
    const char *s = getenv(name);
    return (s && *s) ? atoi(s) : dflt;
}
BQU_FN int bqu_reps(void) {
    int r = bqu_env_int("QMX_BENCH_REPS", 7);
    return r < 5 ? 5 : (r > BQU_MAX_REPS ? BQU_MAX_REPS : r);
}
BQU_FN double bqu_rep_seconds(void) {
    int ms = bqu_env_int("QMX_BENCH_REP_MS", 60);
    return 1e-3 * (double)(ms < 1 ? 1 : ms);
}

BQU_FN int bqu_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Seconds per call over the reps (or, from bqu_measure_ratio, a ratio): median, min, max. */
typedef struct bqu_stats {
    double med, min, max;
    int reps;
} bqu_stats;

typedef void (*bqu_fn)(void *ctx);

BQU_FN bqu_stats bqu_summarize(double *v, int reps) {
    bqu_stats s;
    qsort(v, (size_t)reps, sizeof v[0], bqu_cmp_double);
    s.min = v[0];
    s.max = v[reps - 1];
    s.med = (reps & 1) ? v[reps / 2] : 0.5 * (v[reps / 2 - 1] + v[reps / 2]);
    s.reps = reps;
    return s;
}

/* One untimed warm-up call, then the number of calls that lasts about one rep. */
BQU_FN long bqu_calls_for(bqu_fn fn, void *ctx, double target) {
    double t0, dt;
    long c = 0;
    fn(ctx);
    t0 = bqu_now();
    do { fn(ctx); c++; dt = bqu_now() - t0; } while (dt < target / 8);
    return (long)((double)c * target / dt) + 1;
}

/* One rep: `calls` calls, topped up until at least `target` seconds have passed; returns
 * seconds per call. */
BQU_FN double bqu_rep(bqu_fn fn, void *ctx, long calls, double target) {
    double t0 = bqu_now(), dt;
    long done, c;
    for (done = 0; done < calls; done++) fn(ctx);
    dt = bqu_now() - t0;
    while (dt < target) {
        long more = calls / 16 + 1;
        for (c = 0; c < more; c++) fn(ctx);
        done += more;
        dt = bqu_now() - t0;
    }
    return dt / (double)done;
}

/* Seconds per call of fn(ctx). */
BQU_FN bqu_stats bqu_measure(bqu_fn fn, void *ctx) {
    double v[BQU_MAX_REPS], target = bqu_rep_seconds();
    int reps = bqu_reps(), r;
    long calls = bqu_calls_for(fn, ctx, target);
    for (r = 0; r < reps; r++) v[r] = bqu_rep(fn, ctx, calls, target);
    return bqu_summarize(v, reps);
}

/* A ratio that should not move with the machine's drift (shared cores, a neighbour's memory
 * traffic): reps of A and B alternate (A B, B A, A B, ...), each as long as in bqu_measure, and
 * each pair gives (seconds per call of A) / (seconds per call of B). Median / min / max of
 * those ratios. */
BQU_FN bqu_stats bqu_measure_ratio(bqu_fn fa, void *ca, bqu_fn fb, void *cb) {
    double v[BQU_MAX_REPS], target = bqu_rep_seconds();
    int reps = bqu_reps(), r;
    long na = bqu_calls_for(fa, ca, target), nb = bqu_calls_for(fb, cb, target);
    for (r = 0; r < reps; r++) {
        double ta, tb;
        if (r & 1) { tb = bqu_rep(fb, cb, nb, target); ta = bqu_rep(fa, ca, na, target); }
        else       { ta = bqu_rep(fa, ca, na, target); tb = bqu_rep(fb, cb, nb, target); }
        v[r] = ta / tb;
    }
    return bqu_summarize(v, reps);
}

/* Core clock in GHz, best of 9 samples of a dependent add chain (a neighbour on a shared core
 * can only slow a sample down). 0 when there is no chain for this architecture. */
BQU_FN void bqu_clock_chain(long iters) {
    long i, x = 0;
    for (i = 0; i < iters; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                         : "+r"(x));
#elif defined(__aarch64__)
        __asm__ volatile("add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
                         "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1"
                         : "+r"(x));
#else
        (void)x;
        return;
#endif
    }
}
BQU_FN double bqu_clock_ghz(void) {
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
    const long iters = 1L << 18;           /* 2^21 adds: ~0.6 ms at 3.5 GHz */
    double best = 0.0;
    int i;
    bqu_clock_chain(iters);
    for (i = 0; i < 9; i++) {
        double t0 = bqu_now(), ghz;
        bqu_clock_chain(iters);
        ghz = 8.0 * (double)iters / (bqu_now() - t0) / 1e9;
        if (ghz > best) best = ghz;
    }
    return best;
#else
    return 0.0;
#endif
}

/* Page-aligned buffer, every page touched with a nonzero pattern before any timing. */
BQU_FN void *bqu_alloc(size_t bytes) {
    void *p = NULL;
    size_t rounded = (bytes + 4095) & ~(size_t)4095;
    if (posix_memalign(&p, 4096, rounded ? rounded : 4096) != 0) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    memset(p, 0x5a, rounded ? rounded : 4096);
    return p;
}

/* Deterministic xorshift32, so every run sees the same data. */
BQU_FN unsigned bqu_rng(unsigned *s) {
    unsigned x = *s;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return *s = x;
}

#endif
