/* bench_calib.c - single-thread throughput of qmx_calib.h: observer updates (GB/s of float32
 * input, as a ratio to memcpy of the same bytes measured in the same run) and the 2:4 sparse
 * int8 matmul against the dense qmx_matmul_i8 on the same shapes (ratio of times, pairs of
 * reps alternated by bqu_measure_ratio; median, min-max).
 *
 *   make bench BENCH=calib
 *
 * Observer input: 64 MiB of float32 (16 Mi elements, DRAM-streaming) and 256 KiB (L2), per
 * tensor, one update per call. Matmul: weights [N][K] int8, pruned to 2:4 and compressed
 * (values + 2-bit indices) outside the timing; before timing, the sparse result is checked
 * against the dense matmul over the pruned weights (the bench refuses to time wrong code).
 * Environment: QMX_BENCH_REPS (default 7), QMX_BENCH_REP_MS (default 60). */
#define QMX_IMPLEMENTATION
#include "../qmx_calib.h"
#include "../qmx_kernels.h"
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef QMX_BENCH_CFLAGS
#  define QMX_BENCH_CFLAGS "(not recorded; build with `make bench`)"
#endif

typedef struct obs_job {
    qmx_observer obs;
    qmx_calib_stat st[1];
    const float *x;
    float *dst;
    size_t n;
    int memcpy_job;
} obs_job;

static void run_obs(void *ctx) {
    obs_job *j = (obs_job *)ctx;
    if (j->memcpy_job) { memcpy(j->dst, j->x, j->n * sizeof(float)); return; }
    if (qmx_observer_update(&j->obs, j->x, j->n) != QMX_OK) { fprintf(stderr, "update failed\n"); exit(1); }
}

typedef struct mm_job {
    size_t M, N, K;
    const int8_t *A, *W, *vals;
    const uint8_t *meta;
    size_t vc, mb;
    int32_t *C;
    void *ws;
    size_t wsz;
    int sparse;          /* 1: qmx_nm_matmul_i8; 2: qmx_matmul_i8_packed on the packed blob */
    const void *blob;
    size_t blob_bytes;
} mm_job;

static void run_mm(void *ctx) {
    mm_job *j = (mm_job *)ctx;
    qmx_status st;
    if (j->sparse == 1)
        st = qmx_nm_matmul_i8(j->M, j->N, j->K, j->A, j->K, 3, 2, 4, j->vals, j->vc, j->meta, j->mb,
                              j->C, j->N);
    else if (j->sparse == 2) {
        qmx_matmul_i8_opts o = QMX_ZERO_INIT;
        o.a_zp = 3;
        st = qmx_matmul_i8_packed(j->M, j->N, j->K, j->A, j->K, j->blob, j->blob_bytes, j->C, j->N,
                                  &o, j->ws, j->wsz);
    } else {
        qmx_matmul_i8_opts o = QMX_ZERO_INIT;
        o.a_zp = 3;
        st = qmx_matmul_i8(j->M, j->N, j->K, j->A, j->K, j->W, j->K, j->C, j->N, &o, j->ws, j->wsz);
    }
    if (st != QMX_OK) { fprintf(stderr, "matmul failed %d\n", (int)st); exit(1); }
}

static void bench_observers(size_t n, const char *size) {
    static const struct { qmx_calib_method m; const char *name; } ms[] = {
        {QMX_CALIB_ABSMAX, "absmax"}, {QMX_CALIB_MINMAX, "minmax"},
        {QMX_CALIB_MOVING_MINMAX, "moving minmax"}, {QMX_CALIB_RMS, "rms (compensated sum)"},
        {QMX_CALIB_ABSMEAN, "absmean p=1"},
    };
    float *x = (float *)bqu_alloc(n * sizeof(float)), *dst = (float *)bqu_alloc(n * sizeof(float));
    unsigned s = 12345u;
    size_t i, k;
    obs_job cp;
    bqu_stats tc;
    for (i = 0; i < n; i++) x[i] = (float)((int)(bqu_rng(&s) % 20001u) - 10000) * 1e-3f;
    memset(&cp, 0, sizeof cp);
    cp.x = x; cp.dst = dst; cp.n = n; cp.memcpy_job = 1;
    tc = bqu_measure(run_obs, &cp);
    printf("%-8s %-34s %8.2f GB/s copied\n", size, "memcpy", (double)(n * 4) / tc.med / 1e9);
    for (k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        obs_job j;
        qmx_calib_config cc = QMX_ZERO_INIT;
        qmx_qconfig q = QMX_ZERO_INIT;
        bqu_stats t, r;
        memset(&j, 0, sizeof j);
        cc.method = ms[k].m;
        q.recipe = QMX_RECIPE_QWIX;
        if (qmx_observer_init(&j.obs, &cc, &q, n, j.st, 1) != QMX_OK) exit(1);
        j.x = x; j.n = n;
        t = bqu_measure(run_obs, &j);
        r = bqu_measure_ratio(run_obs, &cp, run_obs, &j);   /* memcpy time / observer time */
        printf("%-8s %-34s %8.2f GB/s read   %.2fx memcpy speed (%.2f-%.2f)\n", size, ms[k].name,
               (double)(n * 4) / t.med / 1e9, r.med, r.min, r.max);
    }
    free(x); free(dst);
}

static void bench_sparse(size_t M, size_t N, size_t K) {
    int8_t *A = (int8_t *)bqu_alloc(M * K), *W = (int8_t *)bqu_alloc(N * K), *Wp = (int8_t *)bqu_alloc(N * K);
    int8_t *vals;
    uint8_t *meta;
    int32_t *C1 = (int32_t *)bqu_alloc(M * N * 4), *C2 = (int32_t *)bqu_alloc(M * N * 4);
    size_t vc, mb, wsz, i;
    unsigned s = 777u;
    mm_job sj, dj;
    bqu_stats r;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    for (i = 0; i < M * K; i++) A[i] = (int8_t)(bqu_rng(&s) & 0xFF);
    for (i = 0; i < N * K; i++) W[i] = (int8_t)(bqu_rng(&s) & 0xFF);
    qmx_nm_storage_size(N, K, 2, 4, &vc, &mb);
    vals = (int8_t *)bqu_alloc(vc); meta = (uint8_t *)bqu_alloc(mb);
    if (qmx_nm_compress_i8(W, N, K, K, 2, 4, vals, vc, meta, mb) != QMX_OK ||
        qmx_nm_decompress_i8(vals, vc, meta, mb, N, K, 2, 4, Wp, K) != QMX_OK) exit(1);
    o.a_zp = 3;
    qmx_matmul_i8_workspace_size(M, N, K, &o, &wsz);
    memset(&sj, 0, sizeof sj);
    sj.M = M; sj.N = N; sj.K = K; sj.A = A; sj.W = Wp; sj.vals = vals; sj.meta = meta; sj.vc = vc;
    sj.mb = mb; sj.ws = bqu_alloc(wsz); sj.wsz = wsz;
    dj = sj;
    sj.sparse = 1; sj.C = C1; dj.C = C2;
    run_mm(&sj); run_mm(&dj);
    if (memcmp(C1, C2, M * N * 4) != 0) { fprintf(stderr, "bench_calib: sparse != dense, refusing to time\n"); exit(1); }
    r = bqu_measure_ratio(run_mm, &dj, run_mm, &sj);     /* dense time / sparse time */
    {
        bqu_stats ts = bqu_measure(run_mm, &sj), td = bqu_measure(run_mm, &dj);
        printf("2:4 int8 M=%-4zu N=%-5zu K=%-5zu  dense %8.3f ms  sparse %8.3f ms  "
               "speed-up %.2fx (%.2f-%.2f)\n", M, N, K, td.med * 1e3, ts.med * 1e3, r.med, r.min, r.max);
    }
    {   /* and against the fastest dense path: the same pruned weights prepacked */
        mm_job pj = dj;
        size_t pb = 0, pws = 0;
        void *blob;
        qmx_matmul_i8_pack_weights_size(N, K, &pb);
        qmx_matmul_i8_packed_workspace_size(M, N, K, &pws);
        blob = bqu_alloc(pb);
        if (qmx_matmul_i8_pack_weights(Wp, N, K, K, QMX_B_NK, blob, pb) != QMX_OK) exit(1);
        pj.sparse = 2; pj.blob = blob; pj.blob_bytes = pb; pj.ws = bqu_alloc(pws); pj.wsz = pws;
        pj.C = C2;
        run_mm(&pj);
        if (memcmp(C1, C2, M * N * 4) != 0) { fprintf(stderr, "bench_calib: packed != sparse\n"); exit(1); }
        r = bqu_measure_ratio(run_mm, &pj, run_mm, &sj);
        printf("2:4 int8 M=%-4zu N=%-5zu K=%-5zu  vs the dense weights prepacked (qmx_matmul_i8_packed): "
               "speed-up %.2fx (%.2f-%.2f)\n", M, N, K, r.med, r.min, r.max);
        free(blob); free(pj.ws);
    }
    free(A); free(W); free(Wp); free(vals); free(meta); free(C1); free(C2); free(sj.ws);
}

int main(void) {
    printf("bench_calib: %s\n", QMX_BENCH_CFLAGS);
    printf("core clock ~%.2f GHz\n", bqu_clock_ghz());
    bench_observers((size_t)16 << 20, "64 MiB");
    bench_observers((size_t)64 << 10, "256 KiB");
    bench_sparse(1, 4096, 4096);
    bench_sparse(8, 4096, 4096);
    bench_sparse(64, 1024, 1024);
    return 0;
}
