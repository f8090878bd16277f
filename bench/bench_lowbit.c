/* bench_lowbit.c - single-thread throughput of the int4-weight and fp8 matmuls
 * (qmx_kernels.h), and the int4-weight GEMV against the int8 GEMV (prepacked and plain, M = 1)
 * at 8192 x 8192 (weights larger than the last-level cache), measured in the same run as
 * alternating reps (bench_util.h: bqu_measure_ratio), the aim being >= 1.7x weights/s.
 * GOPS = 2 * M * N * K / seconds. Build and run: make bench BENCH=lowbit. */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "bench_util.h"
#include <stdint.h>

#ifndef QMX_BENCH_CFLAGS
#define QMX_BENCH_CFLAGS "(unknown flags)"
#endif

typedef struct job {
    int kind; /* 0 int4 -> int32, 1 int4 -> f32 (blocks), 2 fp8 e4m3 x e4m3, 3 int8, 4 int8 packed */
    size_t M, N, K, bs;
    void *A, *W, *C, *ws, *blob;
    size_t ws_bytes, blob_bytes;
    qmx_matmul_i4_params p4;
    qmx_matmul_fp8_params p8;
    float *sa, *sb;
} job;

static void run_job(void *v) {
    job *j = (job *)v;
    qmx_status st = QMX_OK;
    switch (j->kind) {
    case 0: st = qmx_matmul_i4(j->M, j->N, j->K, j->A, j->K, (const uint8_t *)j->W, j->K,
                               (int32_t *)j->C, j->N, &j->p4, j->ws, j->ws_bytes); break;
    case 1: st = qmx_matmul_i4_f32(j->M, j->N, j->K, j->A, j->K, (const uint8_t *)j->W, j->K,
                                   (float *)j->C, j->N, &j->p4, j->ws, j->ws_bytes); break;
    case 2: st = qmx_matmul_fp8_f32(j->M, j->N, j->K, (const uint8_t *)j->A, j->K,
                                    (const uint8_t *)j->W, j->K, (float *)j->C, j->N, &j->p8,
                                    j->ws, j->ws_bytes); break;
    case 4: st = qmx_matmul_i8_packed(j->M, j->N, j->K, (const int8_t *)j->A, j->K, j->blob,
                                      j->blob_bytes, (int32_t *)j->C, j->N, NULL, j->ws,
                                      j->ws_bytes); break;
    default: st = qmx_matmul_i8(j->M, j->N, j->K, (const int8_t *)j->A, j->K,
                                (const int8_t *)j->W, j->K, (int32_t *)j->C, j->N, NULL, j->ws,
                                j->ws_bytes); break;
    }
    if (st != QMX_OK) { fprintf(stderr, "status %d\n", (int)st); exit(1); }
}

static void fill_bytes(void *p, size_t n, uint32_t seed, uint8_t mask, uint8_t avoid) {
    uint8_t *b = (uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = (uint8_t)((seed >> 24) & mask);
        if (avoid && (b[i] & 0x7F) == 0x7F) b[i] ^= 1; /* no E4M3 NaN codes */
    }
}

static job make(int kind, size_t M, size_t N, size_t K, size_t bs) {
    job j;
    size_t nblk, i, wbytes = kind == 0 || kind == 1 ? (N * K + 1) / 2 : N * K;
    memset(&j, 0, sizeof j);
    j.kind = kind; j.M = M; j.N = N; j.K = K; j.bs = bs;
    nblk = bs ? (K + bs - 1) / bs : 1;
    j.A = malloc(M * K + 64);
    j.W = malloc(wbytes + 64);
    j.C = malloc(M * N * 4 + 64);
    fill_bytes(j.A, M * K, 1u, 0xFF, kind == 2);
    fill_bytes(j.W, wbytes, 2u, 0xFF, kind == 2);
    j.sa = (float *)malloc(M * nblk * 4 + 64);
    j.sb = (float *)malloc(N * nblk * 4 + 64);
    for (i = 0; i < M * nblk; i++) j.sa[i] = 0.01f;
    for (i = 0; i < N * nblk; i++) j.sb[i] = 0.02f;
    j.p4.block_size = bs;
    j.p4.a_scales = j.sa; j.p4.a_scales_len = M * nblk; j.p4.a_per_row = 1;
    j.p4.w_scales = j.sb; j.p4.w_scales_len = N * nblk; j.p4.w_per_col = 1;
    j.p8.a_scales = j.sa; j.p8.a_scales_len = M; j.p8.a_per_row = 1;
    j.p8.b_scales = j.sb; j.p8.b_scales_len = N; j.p8.b_per_col = 1;
    if (kind == 0 || kind == 1) qmx_matmul_i4_workspace_size(M, N, K, &j.p4, &j.ws_bytes);
    else if (kind == 2) qmx_matmul_fp8_f32_workspace_size(M, N, K, &j.ws_bytes);
    else if (kind == 4) {
        qmx_matmul_i8_pack_weights_size(N, K, &j.blob_bytes);
        qmx_matmul_i8_packed_workspace_size(M, N, K, &j.ws_bytes);
        j.blob = malloc(j.blob_bytes);
        if (!j.blob || qmx_matmul_i8_pack_weights((const int8_t *)j.W, N, K, K, QMX_B_NK, j.blob,
                                                  j.blob_bytes) != QMX_OK) exit(1);
    } else qmx_matmul_i8_workspace_size(M, N, K, NULL, &j.ws_bytes);
    j.ws = malloc(j.ws_bytes);
    return j;
}
static void drop(job *j) {
    free(j->A); free(j->W); free(j->C); free(j->ws); free(j->sa); free(j->sb); free(j->blob);
}

int main(void) {
    static const size_t shapes[][3] = {
        {1, 4096, 4096}, {16, 4096, 4096}, {128, 4096, 4096}, {512, 512, 512}, {1024, 1024, 1024}};
    static const char *names[] = {"int4 x int8 -> int32 (per channel)", "int4 x int8 -> f32, blocks of 32",
                                  "int4 x int8 -> f32, blocks of 128", "fp8 e4m3 x e4m3 -> f32",
                                  "int8 x int8 -> int32 (qmx_matmul_i8)"};
    static const int kinds[] = {0, 1, 1, 2, 3};
    static const size_t bss[] = {0, 32, 128, 0, 0};
    size_t s, v;
    printf("bench_lowbit: %s\n", QMX_BENCH_CFLAGS);
    printf("single thread, GOPS = 2*M*N*K / s (median of reps)\n");
    printf("%-40s", "variant \\ (M,N,K)");
    for (s = 0; s < 5; s++) {
        char b[32];
        snprintf(b, sizeof b, "(%lu,%lu,%lu)", (unsigned long)shapes[s][0],
                 (unsigned long)shapes[s][1], (unsigned long)shapes[s][2]);
        printf(" %17s", b);
    }
    printf("\n");
    for (v = 0; v < 5; v++) {
        printf("%-40s", names[v]);
        for (s = 0; s < 5; s++) {
            job j = make(kinds[v], shapes[s][0], shapes[s][1], shapes[s][2], bss[v]);
            bqu_stats t = bqu_measure(run_job, &j);
            printf(" %17.1f", 2.0 * (double)j.M * (double)j.N * (double)j.K / t.med / 1e9);
            fflush(stdout);
            drop(&j);
        }
        printf("\n");
    }
    {
        const size_t N = 8192, K = 8192;
        job j4 = make(0, 1, N, K, 0), j8 = make(3, 1, N, K, 0), jb = make(1, 1, N, K, 32);
        job jp = make(4, 1, N, K, 0);
        bqu_stats t4 = bqu_measure(run_job, &j4), t8 = bqu_measure(run_job, &j8);
        bqu_stats tb = bqu_measure(run_job, &jb), tp = bqu_measure(run_job, &jp);
        bqu_stats r = bqu_measure_ratio(run_job, &jp, run_job, &j4);
        bqu_stats r8 = bqu_measure_ratio(run_job, &j8, run_job, &j4);
        bqu_stats rb = bqu_measure_ratio(run_job, &jp, run_job, &jb);
        double w = (double)N * (double)K;
        printf("\nGEMV 8192 x 8192 (int8 weights 64 MiB, int4 32 MiB), weights/s:\n");
        printf("  int8 qmx_matmul_i8 M=1          %7.2f Gweights/s (%5.1f GB/s of weights)\n",
               w / t8.med / 1e9, w / t8.med / 1e9);
        printf("  int8 qmx_matmul_i8_packed M=1   %7.2f Gweights/s (%5.1f GB/s of weights)\n",
               w / tp.med / 1e9, w / tp.med / 1e9);
        printf("  int4 qmx_matmul_i4 M=1          %7.2f Gweights/s (%5.1f GB/s of weights)\n",
               w / t4.med / 1e9, 0.5 * w / t4.med / 1e9);
        printf("  int4 qmx_matmul_i4_f32 bs=32    %7.2f Gweights/s\n", w / tb.med / 1e9);
        printf("  int4 / int8 packed weights/s (alternating reps): median %.2fx (min %.2f, max %.2f)"
               "   aim >= 1.7x: %s\n", r.med, r.min, r.max, r.med >= 1.7 ? "met" : "NOT met");
        printf("  int4 / int8 plain (qmx_matmul_i8):               median %.2fx (min %.2f, max %.2f)\n",
               r8.med, r8.min, r8.max);
        printf("  int4 f32 bs=32 / int8 packed:                    median %.2fx (min %.2f, max %.2f)\n",
               rb.med, rb.min, rb.max);
        drop(&j4); drop(&j8); drop(&jb); drop(&jp);
    }
    return 0;
}
