/* fp8_array_vs_scalar.c - exhaustive check of qmx's vectorised fp8 encode (the array paths)
 * against qmx's own scalar qmx_fp8_from_f32, for every float32 bit pattern.
 *
 * Built and run by tests/exhaustive/run.sh (see README.md there); C99 + POSIX threads, linked
 * with qmx_impl.o (qmx compiled -O2 -march=native, so the SIMD kernels of this machine run).
 * qmx_fp8_from_f32 encodes with integer arithmetic only and is itself checked against NVIDIA's
 * cuda_fp8.h by fp8_vs_cuda.cpp, so this makes the SIMD paths as trusted as the scalar one.
 *
 * Sweeps, each over all 2^32 inputs x, for E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ:
 *   div s=1   qmx_fp8_quantize_array(fmt, x, n, 1.0f, sat, out) (x / 1 = x: every value,
 *             NaN, Inf and subnormal reaches the kernel), saturate 0 and 1: out[i] must equal
 *             qmx_fp8_from_f32(x[i], fmt, sat)                                     (8 sweeps)
 *   mul s=1   qmx_quantize with the fp8 dtype, AQT recipe (x * (1/s), saturating), scale 1:
 *             out[i] == qmx_fp8_from_f32(x[i], fmt, 1)                              (4 sweeps)
 *   div s=3   qmx_fp8_quantize_array with scale 3 (the quotient rounds), saturate 0 and 1:
 *             out[i] == qmx_fp8_from_f32(x[i] / 3.0f, fmt, sat)                     (8 sweeps)
 * The inputs go in 2^16 at a time, each block as two calls split at 32768 + (block % 64), so
 * the masked tail of the kernels and unaligned starts are covered too.
 *
 * Output: progress every 1/8 of the range, at most 20 mismatches per sweep, one line per sweep,
 * then "N passed, N failed" (one check per input and sweep). Exit status 0 only when nothing
 * failed.
 * Usage: fp8_array_vs_scalar [--threads N] [--stride S] [--quick]
 *   --stride S  only every S-th block of 2^16 inputs (the blocks are the top 16 bits: sign,
 *               exponent, top 7 mantissa bits; S = 16 keeps every sign, exponent and low
 *               mantissa pattern). Default 1: all 2^32 inputs. --quick is --stride 255. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qmx.h"

#define BLOCK 65536u
#define NBLOCKS 65536u
#define NFMT 4
#define NSWEEP 20   /* per format: div1 sat0, div1 sat1, mul1, div3 sat0, div3 sat1 */

static const qmx_dtype fmts[NFMT] = {QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FP8_E4M3FNUZ,
                                     QMX_FP8_E5M2FNUZ};
static const char *fmt_names[NFMT] = {"E4M3FN", "E5M2", "E4M3FNUZ", "E5M2FNUZ"};
static const char *kind_names[5] = {"quantize_array x/1 sat=0", "quantize_array x/1 sat=1",
                                    "qmx_quantize AQT x*1 (sat)", "quantize_array x/3 sat=0",
                                    "quantize_array x/3 sat=1"};

static const int sat_of[5] = {0, 1, 1, 0, 1};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_block, done_blocks, step = 1;
static unsigned long long fails[NSWEEP], checks[NSWEEP];
static int shown[NSWEEP], api_error;

static float bits_f(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

static void report(int sw, uint32_t xb, unsigned got, unsigned want) {
    pthread_mutex_lock(&lock);
    if (shown[sw] < 20) {
        shown[sw]++;
        printf("  MISMATCH %s %s: x=0x%08X got 0x%02X want 0x%02X\n", fmt_names[sw / 5],
               kind_names[sw % 5], (unsigned)xb, got, want);
    }
    pthread_mutex_unlock(&lock);
}

/* out = fp8 of x[0..n) through the array path of sweep kind, in two calls split at `at` */
static int run_kind(int kind, qmx_dtype fmt, const float *x, unsigned at, uint8_t *out) {
    int k;
    for (k = 0; k < 2; k++) {
        const float *xs = x + (k ? at : 0);
        size_t n = k ? BLOCK - at : at;
        uint8_t *o = out + (k ? at : 0);
        qmx_status st;
        if (kind == 2) {
            qmx_qconfig c = QMX_ZERO_INIT;
            float one = 1.0f;
            c.dtype = fmt; c.recipe = QMX_RECIPE_AQT;
            st = qmx_quantize(&c, xs, n, &one, 1, NULL, o, n);
        } else {
            st = qmx_fp8_quantize_array(fmt, xs, n, kind >= 3 ? 3.0f : 1.0f, sat_of[kind], o);
        }
        if (st != QMX_OK) return 0;
    }
    return 1;
}

static void *worker(void *arg) {
    float *x = (float *)malloc(BLOCK * sizeof(float)), *x3 = (float *)malloc(BLOCK * sizeof(float));
    uint8_t *out = (uint8_t *)malloc(BLOCK), *ref = (uint8_t *)malloc(BLOCK);
    unsigned long long lf[NSWEEP], lc[NSWEEP];
    (void)arg;
    memset(lf, 0, sizeof lf); memset(lc, 0, sizeof lc);
    if (!x || !x3 || !out || !ref) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (;;) {
        unsigned b, i, at;
        int f, kind;
        pthread_mutex_lock(&lock);
        b = next_block; next_block += step;
        pthread_mutex_unlock(&lock);
        if (b >= NBLOCKS) break;
        for (i = 0; i < BLOCK; i++) {
            x[i] = bits_f((b << 16) | i);
            x3[i] = x[i] / 3.0f;
        }
        at = 32768u + (b % 64u);
        for (f = 0; f < NFMT; f++) {
            for (kind = 0; kind < 5; kind++) {
                int sw = f * 5 + kind, sat = sat_of[kind];
                const float *xr = kind >= 3 ? x3 : x;
                if (kind != 2) {   /* kind 2 (sat, x*1) has kind 1's reference */
                    for (i = 0; i < BLOCK; i++) ref[i] = qmx_fp8_from_f32(xr[i], fmts[f], sat);
                }
                if (!run_kind(kind, fmts[f], x, at, out)) { api_error = 1; continue; }
                for (i = 0; i < BLOCK; i++) {
                    if (out[i] != ref[i]) { lf[sw]++; report(sw, (b << 16) | i, out[i], ref[i]); }
                }
                lc[sw] += BLOCK;
            }
        }
        pthread_mutex_lock(&lock);
        for (i = 0; i < NSWEEP; i++) { fails[i] += lf[i]; checks[i] += lc[i]; lf[i] = lc[i] = 0; }
        done_blocks++;
        if (done_blocks % ((NBLOCKS / step + 7) / 8) == 0) {
            printf("  %u of %u blocks done\n", done_blocks, (NBLOCKS + step - 1) / step);
            fflush(stdout);
        }
        pthread_mutex_unlock(&lock);
    }
    free(x); free(x3); free(out); free(ref);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), a, i;
    unsigned long long tp = 0, tf = 0;
    pthread_t th[256];
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--stride") && a + 1 < argc) step = (unsigned)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--quick")) step = 255;   /* 257 blocks, NaN and Inf among them */
        else {
            fprintf(stderr, "usage: %s [--threads N] [--stride S] [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (step < 1 || step > NBLOCKS) step = 1;
    if (threads < 1) threads = 1;
    if (threads > 256) threads = 256;
    printf("== fp8 array paths (SIMD) vs scalar qmx_fp8_from_f32: ");
    if (step == 1) printf("all 2^32 inputs, %d threads\n", threads);
    else printf("every %u-th block of 2^16 inputs, %d threads\n", step, threads);
    fflush(stdout);
    for (i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker, NULL);
    for (i = 0; i < threads; i++) pthread_join(th[i], NULL);
    for (i = 0; i < NSWEEP; i++) {
        printf("  %-9s %-27s %llu inputs, %llu mismatches\n", fmt_names[i / 5], kind_names[i % 5],
               checks[i], fails[i]);
        tp += checks[i] - fails[i];
        tf += fails[i];
    }
    if (api_error) { printf("  an array call returned an error status\n"); tf++; }
    printf("%llu passed, %llu failed\n", tp, tf);
    return tf ? 1 : 0;
}
