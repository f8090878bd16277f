/* bench_matmul.c - int8 matmul throughput of qmx_kernels.h beside the machine's limits and
 * its peers, all measured in this run, single thread (`make bench`, or BENCH=matmul).
 *
 *   limits : the VNNI peak (24 independent vpdpbusd zmm chains in inline asm, register
 *            operands only, so nothing spills) and the read-only streaming bandwidth (a vpaddd
 *            sum over a 512 MiB buffer, 16x the L3, read as 4 sequential streams like the
 *            GEMV's 4 panels);
 *   qmx    : qmx_matmul_i8_packed (weights packed once, outside the timing) and qmx_matmul_i8
 *            on plain row-major [N,K] weights, GOPS = 2*M*N*K / s, for (M,N,K) = (1,4096,4096),
 *            (16,4096,4096), (128,4096,4096), (512,512,512), (1024,1024,1024); and the cold
 *            GEMV: M=1, N=K=8192, a 64 MiB weight blob (2x the L3), in GB/s of weights vs the
 *            read stream;
 *   blockw : block-scaled weights (issue 16): the GEMV M=1 N=K=8192 on the prepacked blob
 *            (qmx_matmul_blockw_packed_dyn_i8: Q8_0 class, Q4_0 class, MXFP4, NVFP4, MXFP8
 *            E4M3) beside the
 *            unpacked qmx_matmul_blockw_dyn_i8 and qmx_matmul_f32_dyn_i8, weight GB/s vs the
 *            read stream with bits per weight; and the Q4_0-class GEMM at M=16 / 128, 4096^2,
 *            vs qmx_matmul_i8_packed (QMX_BENCH_MATMUL_ONLY=blockw runs only these rows,
 *            =blockw_gemm only the GEMM rows);
 *   peers  : build/peers_matmul (bench/peers_matmul.cpp: oneDNN s8s8s32 prepacked and plain,
 *            gemmlowp, OpenBLAS sgemm), run from here in the same run when `make bench` could
 *            build it (Debian packages installed; `make bench-peers` installs them);
 *   16x8   : qmx_fully_connected_i16 (int16 A x int8 W, plain and on the int8 blob) at
 *            1024^3 and M=1 (1024 -> 1024), each timed in alternation with
 *            qmx_matmul_i8_packed on the same shape (aim: >= 0.45x its speed at 1024^3).
 * Every qmx result is spot-checked against a scalar int64 dot product before it is timed.
 * Timing rules: bench_util.h (median of QMX_BENCH_REPS reps of >= QMX_BENCH_REP_MS ms). */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "bench_util.h"
#if defined(__x86_64__) && (defined(__AVX512F__) || defined(__AVX2__))
#include <immintrin.h>
#endif
#include <unistd.h>
#if defined(QMX_BENCH_HAVE_DNNL)
#include <dnnl.h>
#endif
#if defined(QMX_BENCH_HAVE_OPENBLAS)
#include <cblas.h>
extern char *openblas_get_corename(void);
#endif

#ifndef QMX_BENCH_CFLAGS
#  define QMX_BENCH_CFLAGS "(not recorded; build with `make bench`)"
#endif
#define NSHAPES 5
static const size_t shapes[NSHAPES][3] = {
    {1, 4096, 4096}, {16, 4096, 4096}, {128, 4096, 4096}, {512, 512, 512}, {1024, 1024, 1024}};

/* ---- limits ---- */
#define PEAK_ITERS 4096L
static void peak_vnni(void *ctx) {
    (void)ctx;
#if defined(__x86_64__) && defined(__AVX512VNNI__)
    long i;
    for (i = 0; i < PEAK_ITERS; i++)
        __asm__ volatile(
#define P(r) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #r "\n\t"
            P(0) P(1) P(2) P(3) P(4) P(5) P(6) P(7) P(8) P(9) P(10) P(11)
            P(12) P(13) P(14) P(15) P(16) P(17) P(18) P(19) P(20) P(21) P(22) P(23)
#undef P
            ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
            "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18",
            "xmm19", "xmm20", "xmm21", "xmm22", "xmm23");
#endif
}

typedef struct stream_ctx { const uint8_t *p; size_t n; volatile uint64_t sink; } stream_ctx;
static void read_stream(void *vctx) {
    stream_ctx *c = (stream_ctx *)vctx;
#if defined(__x86_64__) && defined(__AVX512F__)
    /* 8 independent vpaddd chains, 4 sequential streams (the four quarters of the buffer,
     * 128 bytes of each per step, as the GEMV reads 4 panels): the loads are the only limit */
    __m512i z = _mm512_setzero_si512(), a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
    size_t i, qn = c->n / 4;
    for (i = 0; i < qn; i += 128) {
        const __m512i *q0 = (const __m512i *)(const void *)(c->p + i);
        const __m512i *q1 = (const __m512i *)(const void *)(c->p + qn + i);
        const __m512i *q2 = (const __m512i *)(const void *)(c->p + 2 * qn + i);
        const __m512i *q3 = (const __m512i *)(const void *)(c->p + 3 * qn + i);
        a0 = _mm512_add_epi32(a0, _mm512_load_si512(q0));
        a1 = _mm512_add_epi32(a1, _mm512_load_si512(q0 + 1));
        a2 = _mm512_add_epi32(a2, _mm512_load_si512(q1));
        a3 = _mm512_add_epi32(a3, _mm512_load_si512(q1 + 1));
        a4 = _mm512_add_epi32(a4, _mm512_load_si512(q2));
        a5 = _mm512_add_epi32(a5, _mm512_load_si512(q2 + 1));
        a6 = _mm512_add_epi32(a6, _mm512_load_si512(q3));
        a7 = _mm512_add_epi32(a7, _mm512_load_si512(q3 + 1));
    }
    a0 = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                          _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
    c->sink = (uint64_t)(uint32_t)_mm512_reduce_add_epi32(a0);
#elif defined(__x86_64__) && defined(__AVX2__)
    /* an AVX2 build (BENCH_EXTRA=-mno-avx512f): the same 4 streams, 64 bytes of each per
     * step in 8 vpaddd chains */
    __m256i z = _mm256_setzero_si256(), a[8];
    size_t i, qn = c->n / 4, t;
    uint32_t lane[8], sum = 0;
    for (t = 0; t < 8; t++) a[t] = z;
    for (i = 0; i < qn; i += 64)
        for (t = 0; t < 8; t++)
            a[t] = _mm256_add_epi32(a[t], _mm256_load_si256((const __m256i *)(const void *)(
                                              c->p + (t / 2) * qn + i + 32 * (t & 1))));
    for (t = 1; t < 8; t++) a[0] = _mm256_add_epi32(a[0], a[t]);
    _mm256_storeu_si256((__m256i *)(void *)lane, a[0]);
    for (t = 0; t < 8; t++) sum += lane[t];
    c->sink = sum;
#else
    uint64_t s = 0;
    size_t i;
    for (i = 0; i < c->n; i++) s += c->p[i];
    c->sink = s;
#endif
}

/* ---- qmx ---- */
typedef struct mm_ctx {
    size_t M, N, K, pb, wsb;
    int8_t *A, *B;
    void *blob, *ws;
    int32_t *C;
    int packed;
} mm_ctx;
static void run_mm(void *vctx) {
    mm_ctx *c = (mm_ctx *)vctx;
    qmx_status st = c->packed
        ? qmx_matmul_i8_packed(c->M, c->N, c->K, c->A, c->K, c->blob, c->pb, c->C, c->N, NULL, c->ws, c->wsb)
        : qmx_matmul_i8(c->M, c->N, c->K, c->A, c->K, c->B, c->K, c->C, c->N, NULL, c->ws, c->wsb);
    if (st != QMX_OK) { fprintf(stderr, "bench_matmul: status %d\n", (int)st); exit(1); }
}
static int spot_check(const mm_ctx *c) {
    size_t t;
    for (t = 0; t < 3; t++) {
        size_t m = (c->M - 1) * t / 2, n = (c->N - 1) * t / 2 + (t == 1), k;
        int64_t s = 0;
        for (k = 0; k < c->K; k++) s += (int64_t)c->A[m * c->K + k] * c->B[n * c->K + k];
        if ((int64_t)c->C[m * c->N + n] != s) {
            printf("MISMATCH M=%zu N=%zu K=%zu at (%zu,%zu): %ld vs %lld\n", c->M, c->N, c->K, m,
                   n, (long)c->C[m * c->N + n], (long long)s);
            return 1;
        }
    }
    return 0;
}
static void mm_setup(mm_ctx *c, size_t M, size_t N, size_t K) {
    unsigned seed = 99u;
    size_t i, wp = 0, wq = 0;
    c->M = M; c->N = N; c->K = K;
    c->A = (int8_t *)bqu_alloc(M * K);
    c->B = (int8_t *)bqu_alloc(N * K);
    c->C = (int32_t *)bqu_alloc(M * N * 4);
    for (i = 0; i < M * K; i++) c->A[i] = (int8_t)bqu_rng(&seed);
    for (i = 0; i < N * K; i++) c->B[i] = (int8_t)bqu_rng(&seed);
    qmx_matmul_i8_pack_weights_size(N, K, &c->pb);
    c->blob = bqu_alloc(c->pb);
    if (qmx_matmul_i8_pack_weights(c->B, N, K, K, QMX_B_NK, c->blob, c->pb) != QMX_OK) exit(1);
    qmx_matmul_i8_packed_workspace_size(M, N, K, &wp);
    qmx_matmul_i8_workspace_size(M, N, K, NULL, &wq);
    c->wsb = wp > wq ? wp : wq;
    c->ws = bqu_alloc(c->wsb);
}
static void mm_free(mm_ctx *c) { free(c->A); free(c->B); free(c->C); free(c->blob); free(c->ws); }

/* ---- in-process peers (oneDNN C API, OpenBLAS cblas), timed in alternation with qmx ---- */
/* Reps of a and b alternate (a b, b a, ...), as in bqu_measure_ratio; gives both medians in
 * GOPS and the median of the per-pair speed ratios a/b (robust to a shared machine's drift). */
typedef struct pair_res { double ga, gb, ratio; } pair_res;
static int cmp_dd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double med(double *v, int n) {
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof v[0], cmp_dd);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static pair_res measure_pair(bqu_fn fa, void *ca, bqu_fn fb, void *cb, double work) {
    double ta[BQU_MAX_REPS], tb[BQU_MAX_REPS], rr[BQU_MAX_REPS], target = bqu_rep_seconds();
    int reps = bqu_reps(), r;
    long na = bqu_calls_for(fa, ca, target), nb = bqu_calls_for(fb, cb, target);
    pair_res res;
    for (r = 0; r < reps; r++) {
        if (r & 1) { tb[r] = bqu_rep(fb, cb, nb, target); ta[r] = bqu_rep(fa, ca, na, target); }
        else       { ta[r] = bqu_rep(fa, ca, na, target); tb[r] = bqu_rep(fb, cb, nb, target); }
        rr[r] = tb[r] / ta[r];
    }
    res.ratio = med(rr, reps);
    res.ga = work / med(ta, reps) / 1e9;
    res.gb = work / med(tb, reps) / 1e9;
    return res;
}

/* ---- fused output stages: the same shapes with the int32 tile consumed in the kernel ---- */
typedef struct stage_ctx {
    mm_ctx *mm;
    int kind;             /* 0 fully-connected (requant to int8), 1 dequant-on-output f32 */
    int8_t *q;            /* [M,N] int8 output */
    float *f;             /* [M,N] float output */
    float *sa, *sb;       /* per-row, per-column scales */
    int32_t *bias, *mult;
    int *shift;
    void *ws;
    size_t wsb;
} stage_ctx;
static void run_stage(void *vctx) {
    stage_ctx *x = (stage_ctx *)vctx;
    mm_ctx *c = x->mm;
    qmx_status st;
    if (x->kind == 0) {
        qmx_requant_config rq = QMX_ZERO_INIT;
        rq.mode = QMX_REQUANT_DOUBLE_ROUNDING; rq.per_channel = 1; rq.bias = x->bias;
        rq.multipliers = x->mult; rq.shifts = x->shift; rq.out_dtype = QMX_INT8;
        rq.output_zero_point = -3;
        st = c->packed ? qmx_fully_connected_i8_packed(c->M, c->N, c->K, c->A, c->K, 5, c->blob, c->pb,
                                                       &rq, x->q, c->N, x->ws, x->wsb)
                       : qmx_fully_connected_i8(c->M, c->N, c->K, c->A, c->K, 5, c->B, c->K, &rq, x->q,
                                                c->N, x->ws, x->wsb);
    } else {
        qmx_matmul_i8_f32_scales sc = QMX_ZERO_INIT;
        sc.a_scales = x->sa; sc.a_scales_len = c->M; sc.a_per_row = 1; sc.a_zp = 5;
        sc.b_scales = x->sb; sc.b_scales_len = c->N; sc.b_per_col = 1; sc.block_size = c->K;
        st = c->packed ? qmx_matmul_i8_f32_packed(c->M, c->N, c->K, c->A, c->K, c->blob, c->pb, x->f,
                                                  c->N, &sc, x->ws, x->wsb)
                       : qmx_matmul_i8_f32(c->M, c->N, c->K, c->A, c->K, c->B, c->K, x->f, c->N, &sc,
                                           x->ws, x->wsb);
    }
    if (st != QMX_OK) { fprintf(stderr, "bench_matmul: output stage status %d\n", (int)st); exit(1); }
}

/* GOPS of qmx_fully_connected_i8[_packed] (per-channel double-rounding requantization + bias to
 * int8) and qmx_matmul_i8_f32[_packed] (per-row x per-channel scales), each timed in alternation
 * with the raw int32 qmx_matmul_i8[_packed] on the same weights: the ratio is the cost of the
 * fused stage (1.00 = free). */
static void bench_stages(void) {
    static const size_t sh[4][3] = {{1, 4096, 4096}, {16, 4096, 4096}, {128, 4096, 4096},
                                    {1024, 1024, 1024}};
    int i, kind, packed;
    printf("\nfused output stages (GOPS; ratio = raw int32 time / stage time, alternating reps):\n");
    printf("%-16s %9s %7s %9s %7s %9s %7s %9s %7s\n", "M,N,K", "fc_pk", "/i32", "fc_pl", "/i32",
           "f32_pk", "/i32", "f32_pl", "/i32");
    for (i = 0; i < 4; i++) {
        mm_ctx c;
        stage_ctx x;
        size_t M = sh[i][0], N = sh[i][1], K = sh[i][2], j, w1 = 0, w2 = 0, w3 = 0;
        char nm[32];
        mm_setup(&c, M, N, K);
        memset(&x, 0, sizeof x);
        x.mm = &c;
        x.q = (int8_t *)bqu_alloc(M * N);
        x.f = (float *)bqu_alloc(M * N * 4);
        x.sa = (float *)bqu_alloc(M * 4); x.sb = (float *)bqu_alloc(N * 4);
        x.bias = (int32_t *)bqu_alloc(N * 4); x.mult = (int32_t *)bqu_alloc(N * 4);
        x.shift = (int *)bqu_alloc(N * sizeof(int));
        for (j = 0; j < M; j++) x.sa[j] = 0.01f + 0.001f * (float)(j % 7);
        for (j = 0; j < N; j++) {
            x.sb[j] = 0.02f + 0.001f * (float)(j % 5);
            x.bias[j] = (int32_t)(j * 37 % 2001) - 1000;
            qmx_quantize_multiplier(0.0004 + 0.00001 * (double)(j % 11), &x.mult[j], &x.shift[j]);
        }
        qmx_fully_connected_i8_workspace_size(M, N, K, &w1);
        qmx_fully_connected_i8_packed_workspace_size(M, N, K, &w2);
        qmx_matmul_i8_f32_workspace_size(M, N, K, &w3);
        x.wsb = w1 > w2 ? w1 : w2;
        if (w3 > x.wsb) x.wsb = w3;
        x.ws = bqu_alloc(x.wsb);
        snprintf(nm, sizeof nm, "%zu,%zu,%zu", M, N, K);
        printf("%-16s", nm);
        for (kind = 0; kind < 2; kind++)
            for (packed = 1; packed >= 0; packed--) {
                pair_res pr;
                c.packed = packed;
                x.kind = kind;
                pr = measure_pair(run_stage, &x, run_mm, &c, 2.0 * (double)M * N * K);
                printf(" %9.1f %6.2fx", pr.ga, pr.ratio);
            }
        printf("\n");
        fflush(stdout);
        free(x.q); free(x.f); free(x.sa); free(x.sb); free(x.bias); free(x.mult); free(x.shift);
        free(x.ws);
        mm_free(&c);
    }
    printf("(fc: qmx_fully_connected_i8, per-channel double rounding + bias -> int8; f32:\n"
           " qmx_matmul_i8_f32 per-row x per-channel scales; _pk packed weights, _pl plain [N,K])\n");
}

/* ---- 16x8: int16 activations x int8 weights (qmx_fully_connected_i16[_packed]) ---- */
typedef struct fc16_ctx {
    mm_ctx *mm;           /* the int8 case of the same shape: its weights, blob and timing */
    int16_t *A, *out;
    void *ws;
    size_t wsb;
    int32_t mult[1];
    int shift[1];
    int packed;
} fc16_ctx;
static void run_fc16(void *vctx) {
    fc16_ctx *x = (fc16_ctx *)vctx;
    mm_ctx *c = x->mm;
    qmx_requant64_config rq;
    qmx_status st;
    memset(&rq, 0, sizeof rq);
    rq.multipliers = x->mult; rq.shifts = x->shift;
    st = x->packed ? qmx_fully_connected_i16_packed(c->M, c->N, c->K, x->A, c->K, c->blob, c->pb,
                                                    3, &rq, x->out, c->N, x->ws, x->wsb)
                   : qmx_fully_connected_i16(c->M, c->N, c->K, x->A, c->K, c->B, c->K, 3, &rq,
                                             x->out, c->N, x->ws, x->wsb);
    if (st != QMX_OK) { fprintf(stderr, "bench_matmul: 16x8 status %d\n", (int)st); exit(1); }
}

/* GOPS of the 16x8 fully-connected (int16 A, the int8 weights of the int8 case with w_zp 3,
 * per-tensor int64 requantization to int16), plain [N,K] and on the int8 blob, each timed in
 * alternation with qmx_matmul_i8_packed on the same shape: ratio = 16x8 speed / int8 speed.
 * The outputs are spot-checked against a scalar int64 sum first. */
static void bench_fc16(void) {
    static const size_t sh[2][3] = {{1024, 1024, 1024}, {1, 1024, 1024}};
    int i, packed;
    printf("\n16x8 fully-connected (int16 x int8 -> int16, TFLite 16x8; GOPS; ratio = 16x8 speed /"
           " qmx_matmul_i8_packed speed, alternating reps; aim >= 0.45x at 1024^3):\n");
    printf("%-16s %9s %7s %9s %7s %9s\n", "M,N,K", "i16_pl", "/i8pk", "i16_pk", "/i8pk", "i8pk");
    for (i = 0; i < 2; i++) {
        mm_ctx c;
        fc16_ctx x;
        size_t M = sh[i][0], N = sh[i][1], K = sh[i][2], j;
        unsigned seed = 7u;
        double i8 = 0;
        char nm[32];
        mm_setup(&c, M, N, K);
        c.packed = 1;
        memset(&x, 0, sizeof x);
        x.mm = &c;
        x.A = (int16_t *)bqu_alloc(M * K * 2);
        x.out = (int16_t *)bqu_alloc(M * N * 2);
        for (j = 0; j < M * K; j++) x.A[j] = (int16_t)(bqu_rng(&seed) & 0xFFFFu);
        x.mult[0] = 1 << 30; x.shift[0] = -24;
        qmx_fully_connected_i16_workspace_size(M, N, K, &x.wsb);
        x.ws = bqu_alloc(x.wsb);
        snprintf(nm, sizeof nm, "%zu,%zu,%zu", M, N, K);
        printf("%-16s", nm);
        for (packed = 0; packed < 2; packed++) {
            pair_res pr;
            size_t t;
            x.packed = packed;
            run_fc16(&x);
            for (t = 0; t < 3; t++) { /* spot check: out = round(acc / 2^25) of the int64 sum */
                size_t m = (M - 1) * t / 2, n = (N - 1) * t / 2, k;
                int64_t s = 0;
                for (k = 0; k < K; k++) s += (int64_t)x.A[m * K + k] * (c.B[n * K + k] - 3);
                if (x.out[m * N + n] != (int16_t)qmx_requantize64(s, x.mult[0], x.shift[0])) {
                    printf("MISMATCH 16x8 M=%zu at (%zu,%zu)\n", M, m, n);
                    exit(1);
                }
            }
            pr = measure_pair(run_fc16, &x, run_mm, &c, 2.0 * (double)M * N * K);
            printf(" %9.1f %6.2fx", pr.ga, pr.ratio);
            i8 += pr.gb / 2;
            fflush(stdout);
        }
        printf(" %9.1f\n", i8);
        free(x.A); free(x.out); free(x.ws);
        mm_free(&c);
    }
    printf("(i16_pl: qmx_fully_connected_i16 on row-major [N,K] int8 weights; i16_pk: "
           "qmx_fully_connected_i16_packed\n on the int8 blob; i8pk: qmx_matmul_i8_packed, the "
           "mean of its two alternating runs)\n");
}

#if defined(QMX_BENCH_HAVE_DNNL)
static dnnl_engine_t dn_eng;
static dnnl_stream_t dn_strm;
typedef struct dn_ctx {
    dnnl_primitive_t prim;
    dnnl_memory_t a, bu, b, c;
    dnnl_exec_arg_t args[3];
    int8_t *bkn;
    const char *impl;
} dn_ctx;
static void dn_run(void *p) {
    dn_ctx *d = (dn_ctx *)p;
    dnnl_primitive_execute(d->prim, dn_strm, 3, d->args);
    dnnl_stream_wait(dn_strm);
}
#define DN_OK(x) do { if ((x) != dnnl_success) { printf("oneDNN: %s failed\n", #x); return 1; } } while (0)
/* oneDNN s8 x s8 -> s32 on the same data as c (B transposed to oneDNN's [K,N]); packed:
 * format_tag::any weights and an untimed reorder, as oneDNN's prepacked fast path. Checks
 * every output against qmx's C. */
static int dn_setup(dn_ctx *d, const mm_ctx *c, int packed) {
    dnnl_dims_t ad, bd, cd;
    dnnl_memory_desc_t amd, bumd, bmd, cmd;
    dnnl_matmul_desc_t mmd;
    dnnl_primitive_desc_t pd;
    const dnnl_memory_desc_t *wmd;
    int32_t *out;
    size_t n, k, i;
    ad[0] = (dnnl_dim_t)c->M; ad[1] = (dnnl_dim_t)c->K;
    bd[0] = (dnnl_dim_t)c->K; bd[1] = (dnnl_dim_t)c->N;
    cd[0] = (dnnl_dim_t)c->M; cd[1] = (dnnl_dim_t)c->N;
    d->bkn = (int8_t *)bqu_alloc(c->N * c->K);
    for (n = 0; n < c->N; n++)
        for (k = 0; k < c->K; k++) d->bkn[k * c->N + n] = c->B[n * c->K + k];
    DN_OK(dnnl_memory_desc_init_by_tag(&amd, 2, ad, dnnl_s8, dnnl_ab));
    DN_OK(dnnl_memory_desc_init_by_tag(&bumd, 2, bd, dnnl_s8, dnnl_ab));
    DN_OK(dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_s8, packed ? dnnl_format_tag_any : dnnl_ab));
    DN_OK(dnnl_memory_desc_init_by_tag(&cmd, 2, cd, dnnl_s32, dnnl_ab));
    DN_OK(dnnl_matmul_desc_init(&mmd, &amd, &bmd, NULL, &cmd));
    DN_OK(dnnl_primitive_desc_create(&pd, &mmd, NULL, dn_eng, NULL));
    wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    d->impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&d->impl);
    DN_OK(dnnl_memory_create(&d->a, &amd, dn_eng, c->A));
    DN_OK(dnnl_memory_create(&d->bu, &bumd, dn_eng, d->bkn));
    DN_OK(dnnl_memory_create(&d->c, &cmd, dn_eng, DNNL_MEMORY_ALLOCATE));
    if (packed) {
        dnnl_primitive_desc_t rpd;
        dnnl_primitive_t rp;
        dnnl_exec_arg_t ra[2];
        DN_OK(dnnl_memory_create(&d->b, wmd, dn_eng, DNNL_MEMORY_ALLOCATE));
        DN_OK(dnnl_reorder_primitive_desc_create(&rpd, &bumd, dn_eng, wmd, dn_eng, NULL));
        DN_OK(dnnl_primitive_create(&rp, rpd));
        ra[0].arg = DNNL_ARG_FROM; ra[0].memory = d->bu;
        ra[1].arg = DNNL_ARG_TO; ra[1].memory = d->b;
        DN_OK(dnnl_primitive_execute(rp, dn_strm, 2, ra));
        DN_OK(dnnl_stream_wait(dn_strm));
        dnnl_primitive_destroy(rp);
        dnnl_primitive_desc_destroy(rpd);
    } else {
        d->b = d->bu;
    }
    DN_OK(dnnl_primitive_create(&d->prim, pd));
    d->args[0].arg = DNNL_ARG_SRC; d->args[0].memory = d->a;
    d->args[1].arg = DNNL_ARG_WEIGHTS; d->args[1].memory = d->b;
    d->args[2].arg = DNNL_ARG_DST; d->args[2].memory = d->c;
    dn_run(d);
    DN_OK(dnnl_memory_get_data_handle(d->c, (void **)&out));
    for (i = 0; i < c->M * c->N; i++)
        if (out[i] != c->C[i]) {
            printf("oneDNN and qmx differ at %zu: %ld vs %ld\n", i, (long)out[i], (long)c->C[i]);
            return 1;
        }
    return 0;
}
static void dn_free(dn_ctx *d) {
    dnnl_primitive_destroy(d->prim);
    if (d->b != d->bu) dnnl_memory_destroy(d->b);
    dnnl_memory_destroy(d->bu);
    dnnl_memory_destroy(d->a);
    dnnl_memory_destroy(d->c);
    free(d->bkn);
}
#endif

#if defined(QMX_BENCH_HAVE_OPENBLAS)
typedef struct sg_ctx { size_t M, N, K; float *a, *b, *c; } sg_ctx;
static void sg_run(void *p) {
    sg_ctx *x = (sg_ctx *)p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)x->M, (int)x->N, (int)x->K, 1.0f,
                x->a, (int)x->K, x->b, (int)x->N, 0.0f, x->c, (int)x->N);
}
#endif

/* ---- peers ---- */
#define MAXPEER 64
typedef struct peer_row { char name[48]; long M, N, K; double med, min, max; } peer_row;
static peer_row peers[MAXPEER];
static int npeers;
static int peers_ok = -1;
/* Runs build/peers_matmul with args; adds its PEER lines to peers[]. */
static void run_peers(const char *args) {
    FILE *f;
    char line[1024], cmd[256];
    if (peers_ok < 0) {
        f = fopen("build/peers_matmul", "rb");
        peers_ok = f != NULL;
        if (f) fclose(f);
        if (!peers_ok)
            printf("peers:    build/peers_matmul not built (Debian libdnnl-dev, libgemmlowp-dev, "
                   "libopenblas-dev missing: `make bench-peers`); qmx alone\n");
    }
    if (!peers_ok) return;
    snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 "
             "OPENBLAS_NUM_THREADS=1 build/peers_matmul %s", args);
    f = popen(cmd, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        peer_row r;
        if (strncmp(line, "PEER\t", 5) != 0) { printf("  %s", line); continue; }
        if (npeers < MAXPEER &&
            sscanf(line + 5, "%47[^\t]\t%ld\t%ld\t%ld\t%lf\t%lf\t%lf", r.name, &r.M, &r.N, &r.K,
                   &r.med, &r.min, &r.max) == 7)
            peers[npeers++] = r;
    }
    if (pclose(f) != 0) printf("peers:    build/peers_matmul %s failed\n", args);
}
/* A peer's figure on one shape (0 when absent). */
static double peer(const char *name, size_t M, size_t N, size_t K) {
    double v[MAXPEER];
    int i, n = 0;
    for (i = 0; i < npeers; i++)
        if (!strcmp(peers[i].name, name) && peers[i].M == (long)M && peers[i].N == (long)N &&
            peers[i].K == (long)K)
            v[n++] = peers[i].med;
    return med(v, n);
}
static void cell(double v) { if (v > 0) printf(" %8.1f", v); else printf(" %8s", "-"); }
static void ratio(double a, double b) { if (a > 0 && b > 0) printf(" %6.2fx", a / b); else printf(" %7s", "-"); }
static void rcell(double r) { if (r > 0) printf(" %6.2fx", r); else printf(" %7s", "-"); }

static void unused_helpers(void) { (void)bqu_measure_ratio; (void)peak_vnni; }

/* ---- prepacked block-scaled weights (issue 16): GEMV M=1 at 8192 x 8192, weights from DRAM,
 * the blob (qmx_matmul_blockw_packed_dyn_i8) beside the unpacked qmx_matmul_blockw_dyn_i8 and
 * the per-channel int8 dynamic GEMV (qmx_matmul_f32_dyn_i8) on the same shape; weight GB/s =
 * the bytes each kernel reads for its weights per second, and that over the read stream timed
 * in alternation with it (QMX_BENCH_MATMUL_ONLY=blockw runs only these rows) ---- */
typedef struct bw_ctx {
    int kind;                 /* 0 blob, 1 unpacked qmx_blockw, 2 per-channel int8 blob,
                                 3 blob x float32 activations (qmx_matmul_blockw_packed_f32) */
    size_t M, N, K, wsb, pb;
    const float *X;
    const qmx_blockw *w;
    const void *blob;
    const float *wsc;
    float *Y;
    void *ws;
} bw_ctx;
static void run_bw(void *vctx) {
    bw_ctx *c = (bw_ctx *)vctx;
    qmx_status st = c->kind == 0
        ? qmx_matmul_blockw_packed_dyn_i8(c->M, c->N, c->K, c->X, c->K, c->blob, c->pb, NULL,
                                          c->Y, c->N, c->ws, c->wsb)
        : c->kind == 1
        ? qmx_matmul_blockw_dyn_i8(c->M, c->N, c->K, c->X, c->K, c->w, NULL, c->Y, c->N, c->ws,
                                   c->wsb)
        : c->kind == 3
        ? qmx_matmul_blockw_packed_f32(c->M, c->N, c->K, c->X, c->K, c->blob, c->pb, c->Y, c->N,
                                       c->ws, c->wsb)
        : qmx_matmul_f32_dyn_i8(c->M, c->N, c->K, c->X, c->K, c->blob, c->pb, c->wsc, c->N, c->Y,
                                c->N, c->ws, c->wsb);
    if (st != QMX_OK) { fprintf(stderr, "bench_matmul: blockw status %d\n", (int)st); exit(1); }
}
/* QMX_BENCH_MATMUL_ONLY=blockw_gemm: only the GEMM rows of bench_blockw */
static int bw_gemm_only(void) {
    const char *e = getenv("QMX_BENCH_MATMUL_ONLY");
    return e && strcmp(e, "blockw_gemm") == 0;
}
static void bench_blockw(void) {
    const size_t N = 8192, K = 8192, nb = K / 32;
    int fmt, bad = 0;
    unsigned seed = 1616u;
    size_t i, ws_need;
    stream_ctx sc;
    float *X = (float *)bqu_alloc(K * 4), *Y = (float *)bqu_alloc(N * 4),
          *Y2 = (float *)bqu_alloc(N * 4);
    sc.n = bw_gemm_only() ? (size_t)1 << 20 : (size_t)512 << 20;
    sc.p = (const uint8_t *)bqu_alloc(sc.n);
    memset((void *)(uintptr_t)sc.p, 1, sc.n);
    for (i = 0; i < K; i++) X[i] = (float)((int)(bqu_rng(&seed) & 255) - 128) / 32.0f;
    printf("\nblock-scaled weights, GEMV M=1 N=K=8192 (weights from DRAM), X quantized per row on the fly\n"
           "(packed_f32: X float32, no quantization);\n"
           "weight GB/s and its ratio to the read stream timed in alternation (aims: Q4_0-class and\n"
           "MXFP4 / NVFP4 >= 0.9x, Q8_0-class >= 1.0x)\n");
    printf("%-44s %7s %8s %8s %7s\n", "kernel", "bits/w", "GB/s", "stream", "ratio");
    for (fmt = 0; fmt < 7 && !bw_gemm_only(); fmt++) {
        /* 0: Q8_0 class (int8, block 32, f16-exact scales), 1: Q4_0 class (uint4 + zero point
         * per block of 32), 3: MXFP4 (OCP, E8M0 codes), 4: NVFP4 (E4M3 codes per 16, two-level
         * with a tensor scale), 5: MXFP8 E4M3 (E8M0 per 32), 6: ggml Q4_1 (from random
         * block_q4_1 bytes; no unpacked kernel takes it), 2: per-channel int8
         * (qmx_matmul_f32_dyn_i8's blob) */
        qmx_qconfig qc;
        qmx_mx_config mc;
        qmx_blockw w;
        uint8_t *codes = (uint8_t *)bqu_alloc(N * (K / 16));
        size_t db = fmt == 1 || fmt == 3 || fmt == 4 ? N * K / 2 : fmt == 6 ? N * nb * 20 : N * K,
               bytes = 0, k;
        uint8_t *data = (uint8_t *)bqu_alloc(db);
        float *sc_ = (float *)bqu_alloc(N * nb * 4);
        int32_t *zp = (int32_t *)bqu_alloc(N * nb * 4);
        void *blob;
        bw_ctx c;
        int kind;
        for (i = 0; i < db; i++) data[i] = (uint8_t)bqu_rng(&seed);
        for (i = 0; i < N * nb; i++) {
            sc_[i] = qmx_f16_to_f32(qmx_f32_to_f16(0.001f + (float)(bqu_rng(&seed) & 1023) / 65536.0f));
            zp[i] = fmt == 1 ? 8 - (int32_t)(bqu_rng(&seed) & 1) : 0;
        }
        memset(&qc, 0, sizeof qc);
        qc.dtype = fmt == 1 ? QMX_UINT4 : QMX_INT8;
        qc.granularity = QMX_PER_BLOCK; qc.outer = N; qc.axis_len = K; qc.inner = 1;
        qc.block_size = 32;
        qc.asymmetric = fmt == 1;
        qc.recipe = fmt == 1 ? QMX_RECIPE_TFLITE : QMX_RECIPE_AQT;
        memset(&w, 0, sizeof w);
        w.kind = QMX_BLOCKW_QCONFIG; w.qc = &qc; w.data = data; w.data_bytes = db;
        w.scales = sc_; w.zero_points = fmt == 1 ? zp : NULL; w.n_scales = N * nb;
        if (fmt == 3) {
            memset(&mc, 0, sizeof mc);
            mc.format = QMX_MXFP4; mc.block_size = 32; mc.outer = N; mc.axis_len = K; mc.inner = 1;
            for (i = 0; i < N * nb; i++) codes[i] = (uint8_t)(120 + bqu_rng(&seed) % 8);
            memset(&w, 0, sizeof w);
            w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.data = data; w.data_bytes = db;
            w.scale_codes = codes; w.n_scales = N * nb;
        }
        if (fmt == 4) {
            memset(&mc, 0, sizeof mc);
            mc.format = QMX_NVFP4; mc.block_size = 16; mc.outer = N; mc.axis_len = K; mc.inner = 1;
            mc.tensor_scale = 0.0005f;
            for (i = 0; i < N * (K / 16); i++) codes[i] = (uint8_t)(0x30 + bqu_rng(&seed) % 0x20);
            memset(&w, 0, sizeof w);
            w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.data = data; w.data_bytes = db;
            w.scale_codes = codes; w.n_scales = N * (K / 16);
        }
        if (fmt == 5) {
            memset(&mc, 0, sizeof mc);
            mc.format = QMX_MXFP8_E4M3; mc.block_size = 32; mc.outer = N; mc.axis_len = K;
            mc.inner = 1;
            for (i = 0; i < db; i++) if ((data[i] & 0x7F) == 0x7F) data[i] = 0x3C;   /* no NaN */
            for (i = 0; i < N * nb; i++) codes[i] = (uint8_t)(120 + bqu_rng(&seed) % 8);
            memset(&w, 0, sizeof w);
            w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.data = data; w.data_bytes = db;
            w.scale_codes = codes; w.n_scales = N * nb;
        }
        if (fmt == 6) {   /* block_q4_1: d, m binary16 (finite, moderate), qs[16] random */
            for (i = 0; i < N * nb; i++) {
                uint16_t dh = qmx_f32_to_f16(0.001f + (float)(bqu_rng(&seed) & 1023) / 65536.0f);
                uint16_t mh = qmx_f32_to_f16(-0.01f * (float)(bqu_rng(&seed) & 7));
                data[20 * i] = (uint8_t)dh; data[20 * i + 1] = (uint8_t)(dh >> 8);
                data[20 * i + 2] = (uint8_t)mh; data[20 * i + 3] = (uint8_t)(mh >> 8);
            }
            if (qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q4_1, N, K, &bytes) != QMX_OK) exit(1);
            blob = bqu_alloc(bytes);
            if (qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, data, db, N, K, blob, bytes) != QMX_OK)
                exit(1);
        } else if (fmt != 2) {
            if (qmx_blockw_pack_size(&w, N, K, &bytes) != QMX_OK) exit(1);
            blob = bqu_alloc(bytes);
            if (qmx_blockw_pack(&w, N, K, blob, bytes) != QMX_OK) exit(1);
        } else {
            if (qmx_matmul_i8_pack_weights_size(N, K, &bytes) != QMX_OK) exit(1);
            blob = bqu_alloc(bytes);
            if (qmx_matmul_i8_pack_weights((const int8_t *)data, N, K, K, QMX_B_NK, blob, bytes) != QMX_OK)
                exit(1);
        }
        for (kind = 0; kind < 3; kind++) {
            pair_res pr;
            double wbytes;
            const char *name;
            if (fmt == 6 && kind == 1) continue;   /* no unpacked Q4_1 kernel */
            memset(&c, 0, sizeof c);
            c.kind = fmt == 2 ? 2 : kind == 2 ? 3 : kind; c.M = 1; c.N = N; c.K = K; c.X = X; c.w = &w;
            c.blob = blob; c.pb = bytes; c.wsc = sc_; c.Y = kind == 1 ? Y2 : Y;
            ws_need = 0;
            if (c.kind == 0) qmx_matmul_blockw_packed_dyn_i8_workspace_size(1, N, K, NULL, &ws_need);
            else if (c.kind == 1) qmx_matmul_blockw_dyn_i8_workspace_size(1, N, K, NULL, &ws_need);
            else if (c.kind == 3) qmx_matmul_blockw_packed_f32_workspace_size(1, N, K, &ws_need);
            else qmx_matmul_f32_dyn_i8_workspace_size(1, N, K, &ws_need);
            c.wsb = ws_need;
            c.ws = bqu_alloc(ws_need);
            run_bw(&c);
            /* the unpacked kernel reads codes + float32 scales (+ int32 zero points; MXFP4:
             * one E8M0 byte) */
            wbytes = c.kind == 1 ? (double)db + (double)N * (fmt == 4 ? K / 16 : nb) *
                                                    (fmt == 1 ? 8 : fmt >= 3 ? 1 : 4)
                                 : (double)bytes;
            if (c.kind == 1) {   /* the same bits as the blob's kernel */
                for (k = 0; k < N; k++) bad |= memcmp(&Y[k], &Y2[k], 4) != 0;
                /* one rep set only: the portable kernel is far from the stream */
            }
            pr = measure_pair(run_bw, &c, read_stream, &sc, wbytes);
            name = fmt == 2 ? "qmx_matmul_f32_dyn_i8 (per-channel int8)"
                 : c.kind == 3 ? (fmt == 0 ? "packed_f32 (f32 x blob), Q8_0 class"
                                  : fmt == 1 ? "packed_f32 (f32 x blob), Q4_0 class"
                                  : fmt == 3 ? "packed_f32 (f32 x blob), MXFP4"
                                  : fmt == 4 ? "packed_f32 (f32 x blob), NVFP4"
                                  : fmt == 5 ? "packed_f32 (f32 x blob), MXFP8 E4M3"
                                             : "packed_f32 (f32 x blob), ggml Q4_1")
                 : kind == 0 ? (fmt == 0 ? "packed_dyn_i8, Q8_0 class (int8/32)"
                                : fmt == 1 ? "packed_dyn_i8, Q4_0 class (uint4+zp/32)"
                                : fmt == 3 ? "packed_dyn_i8, MXFP4 (E2M1 + E8M0/32)"
                                : fmt == 4 ? "packed_dyn_i8, NVFP4 (E2M1 + E4M3/16, ts)"
                                : fmt == 5 ? "packed_dyn_i8, MXFP8 E4M3 (E8M0/32)"
                                           : "packed_dyn_i8, ggml Q4_1 (uint4 + d, m f16/32)")
                             : (fmt == 0 ? "blockw_dyn_i8 unpacked, Q8_0 class"
                                : fmt == 1 ? "blockw_dyn_i8 unpacked, Q4_0 class"
                                : fmt == 3 ? "blockw_dyn_i8 unpacked, MXFP4"
                                : fmt == 4 ? "blockw_dyn_i8 unpacked, NVFP4"
                                           : "blockw_dyn_i8 unpacked, MXFP8 E4M3");
            printf("%-44s %7.3f %8.2f %8.2f %6.2fx\n", name, wbytes * 8.0 / ((double)N * K), pr.ga,
                   pr.gb * (double)sc.n / wbytes, pr.ratio * wbytes / (double)sc.n);
            fflush(stdout);
            free(c.ws);
            if (fmt == 2) break;
        }
        free(blob); free(data); free(sc_); free(zp); free(codes);
    }
    if (bad) printf("MISMATCH: the blob kernel and qmx_matmul_blockw_dyn_i8 differ\n");
    free((void *)(uintptr_t)sc.p); free(X); free(Y); free(Y2);
    {   /* GEMM, 4096 x 4096 weights: the Q4_0-class blob against qmx_matmul_i8_packed (int8 x
         * int8 -> int32 on the int8 blob) in the same run, MAC rates */
        const size_t GN = 4096, GK = 4096, gnb = GK / 32;
        static const size_t gm[2] = {16, 128};
        size_t t;
        qmx_qconfig qc;
        qmx_blockw w;
        uint8_t *data = (uint8_t *)bqu_alloc(GN * GK / 2);
        float *sc_ = (float *)bqu_alloc(GN * gnb * 4);
        int32_t *zp = (int32_t *)bqu_alloc(GN * gnb * 4);
        size_t bytes;
        void *blob;
        for (i = 0; i < GN * GK / 2; i++) data[i] = (uint8_t)bqu_rng(&seed);
        for (i = 0; i < GN * gnb; i++) { sc_[i] = 0.01f; zp[i] = 8; }
        memset(&qc, 0, sizeof qc);
        qc.dtype = QMX_UINT4; qc.granularity = QMX_PER_BLOCK; qc.outer = GN; qc.axis_len = GK;
        qc.inner = 1; qc.block_size = 32; qc.asymmetric = 1; qc.recipe = QMX_RECIPE_TFLITE;
        memset(&w, 0, sizeof w);
        w.kind = QMX_BLOCKW_QCONFIG; w.qc = &qc; w.data = data; w.data_bytes = GN * GK / 2;
        w.scales = sc_; w.zero_points = zp; w.n_scales = GN * gnb;
        if (qmx_blockw_pack_size(&w, GN, GK, &bytes) != QMX_OK) exit(1);
        blob = bqu_alloc(bytes);
        if (qmx_blockw_pack(&w, GN, GK, blob, bytes) != QMX_OK) exit(1);
        printf("GEMM on 4096 x 4096 weights, GOPS = 2 M N K / s (the int8 prepacked GEMM timed in "
               "alternation; aim: block-4-bit >= 0.6x)\n");
        for (t = 0; t < 2; t++) {
            bw_ctx c;
            mm_ctx m;
            pair_res pr;
            size_t M = gm[t];
            float *GX = (float *)bqu_alloc(M * GK * 4), *GY = (float *)bqu_alloc(M * GN * 4);
            for (i = 0; i < M * GK; i++) GX[i] = (float)((int)(bqu_rng(&seed) & 255) - 128) / 32.0f;
            memset(&c, 0, sizeof c);
            c.kind = 0; c.M = M; c.N = GN; c.K = GK; c.X = GX; c.blob = blob; c.pb = bytes;
            c.Y = GY;
            qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, GN, GK, NULL, &c.wsb);
            c.ws = bqu_alloc(c.wsb);
            mm_setup(&m, M, GN, GK);
            m.packed = 1;
            pr = measure_pair(run_bw, &c, run_mm, &m, 2.0 * M * GN * GK);
            printf("M=%-4zu Q4_0-class packed_dyn_i8 %8.1f GOPS, qmx_matmul_i8_packed %8.1f GOPS: %.2fx\n",
                   M, pr.ga, pr.gb, pr.ratio);
            fflush(stdout);
            mm_free(&m); free(c.ws); free(GX); free(GY);
        }
        free(blob); free(data); free(sc_); free(zp);
    }
}

int main(int argc, char **argv) {
    double peak = 0, stream = 0, ghz, cold = 0;
    double qp[NSHAPES], qn[NSHAPES], dp[NSHAPES], dn[NSHAPES], rp[NSHAPES], rn[NSHAPES];
    double sg[NSHAPES], rs[NSHAPES], dcold = 0, rcold = 0, pk_frac[NSHAPES], cold_frac = 0;
    double warm_frac = 0, warm_gbs = 0, warm_stream = 0;
    stream_ctx sc;
    bqu_stats s;
    size_t i;
    int bad = 0, aims_ok = 1, have_dnnl = 0;
    (void)argc;
#if defined(QMX_BENCH_HAVE_DNNL) || defined(QMX_BENCH_HAVE_OPENBLAS)
    /* one thread for the peers: libgomp and OpenBLAS read their environment when they are
     * loaded, so set it and start again */
    if (!getenv("QMX_BENCH_MATMUL_ENV")) {
        setenv("QMX_BENCH_MATMUL_ENV", "1", 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        unsetenv("OPENBLAS_CORETYPE"); /* let OpenBLAS pick its best kernels */
        unsetenv("OPENBLAS_L2_SIZE");
        execv("/proc/self/exe", argv);
        printf("bench_matmul: could not restart with OMP_NUM_THREADS=1; peers may use threads\n");
    }
#else
    (void)argv;
#endif
    for (i = 0; i < NSHAPES; i++) qp[i] = qn[i] = dp[i] = dn[i] = rp[i] = rn[i] = sg[i] = rs[i] = 0;
    if (getenv("QMX_BENCH_MATMUL_ONLY") && (strcmp(getenv("QMX_BENCH_MATMUL_ONLY"), "blockw") == 0 ||
                                            bw_gemm_only())) {
        bench_blockw();
        return 0;
    }
    printf("bench_matmul: int8 x int8 -> int32, single thread; GOPS = 2*M*N*K/s; median of %d reps\n"
           "              (qmx and each in-process peer alternate rep by rep; ratio = median of\n"
           "              the per-pair speed ratios)\n", bqu_reps());
    printf("build:    compiler %s; flags: %s\n", __VERSION__, QMX_BENCH_CFLAGS);
#if defined(__AVX512VNNI__) && !defined(QMX_NO_SIMD) && !defined(QMX_NO_AVX512)
    printf("qmx path: AVX-512 VNNI\n");
#else
    printf("qmx path: not AVX-512 VNNI (AVX2 / NEON / portable C)\n");
#endif
#if defined(QMX_BENCH_HAVE_DNNL)
    {
        const dnnl_version_t *v = dnnl_version();
        if (dnnl_engine_create(&dn_eng, dnnl_cpu, 0) == dnnl_success &&
            dnnl_stream_create(&dn_strm, dn_eng, dnnl_stream_default_flags) == dnnl_success)
            have_dnnl = 1;
        printf("peers:    oneDNN %d.%d.%d in process (s8 x s8 -> s32), OMP_NUM_THREADS=%s\n",
               v->major, v->minor, v->patch, getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "?");
    }
#else
    printf("peers:    oneDNN not built in (make bench-peers installs Debian's libdnnl-dev)\n");
#endif
#if defined(QMX_BENCH_HAVE_OPENBLAS)
    printf("peers:    OpenBLAS in process, core %s, 1 thread\n", openblas_get_corename());
#endif
    ghz = bqu_clock_ghz();
#if defined(__x86_64__) && defined(__AVX512VNNI__)
    s = bqu_measure(peak_vnni, NULL);
    peak = PEAK_ITERS * 24.0 * 64 * 2 / s.med / 1e9;
    printf("limit:    VNNI peak %.0f GOPS (vpdpbusd zmm, 24 chains; %.2f instr/cycle at %.2f GHz)\n",
           peak, PEAK_ITERS * 24.0 / s.med / 1e9 / ghz, ghz);
#endif
    sc.n = (size_t)512 << 20;
    sc.p = (const uint8_t *)bqu_alloc(sc.n);
    s = bqu_measure(read_stream, &sc);
    stream = (double)sc.n / s.med / 1e9;
    printf("limit:    read-only stream %.1f GB/s (sum of a 512 MiB buffer as 4 streams, 8 zmm chains; "
           "min-max %.1f-%.1f)\n", stream, (double)sc.n / s.max / 1e9, (double)sc.n / s.min / 1e9);
    fflush(stdout);

    for (i = 0; i < NSHAPES; i++) {
        mm_ctx c, c2;
        char args[64];
        double work;
        mm_setup(&c, shapes[i][0], shapes[i][1], shapes[i][2]);
        work = 2.0 * c.M * c.N * c.K;
        c2 = c;
        c.packed = 1; run_mm(&c); bad |= spot_check(&c);
        c2.packed = 0; run_mm(&c2); bad |= spot_check(&c2);
#if defined(QMX_BENCH_HAVE_DNNL)
        if (have_dnnl) {
            dn_ctx d;
            pair_res pr;
            if (dn_setup(&d, &c, 1) == 0) {
                pr = measure_pair(run_mm, &c, dn_run, &d, work);
                qp[i] = pr.ga; dp[i] = pr.gb; rp[i] = pr.ratio;
                if (i == 0) printf("peers:    oneDNN prepacked impl %s\n", d.impl);
                dn_free(&d);
            } else bad = 1;
            if (dn_setup(&d, &c2, 0) == 0) {
                pr = measure_pair(run_mm, &c2, dn_run, &d, work);
                qn[i] = pr.ga; dn[i] = pr.gb; rn[i] = pr.ratio;
                dn_free(&d);
            } else bad = 1;
        }
#endif
        if (qp[i] == 0) { s = bqu_measure(run_mm, &c); qp[i] = work / s.med / 1e9; }
        pk_frac[i] = 0;
#if defined(__x86_64__) && defined(__AVX512VNNI__)
        { /* the share of the VNNI peak, timed in alternation with the peak loop */
            pair_res pr = measure_pair(run_mm, &c, peak_vnni, NULL, work);
            pk_frac[i] = pr.ratio * work / (PEAK_ITERS * 24.0 * 64 * 2);
        }
#endif
        if (qn[i] == 0) { s = bqu_measure(run_mm, &c2); qn[i] = work / s.med / 1e9; }
        if (c.M == 1) { /* the GEMV against a read stream of its own weight bytes, which fit
                         * the L3 like the weights: the limit of any M = 1 kernel here */
            stream_ctx w;
            pair_res pr;
            w.n = (c.pb + 511) & ~(size_t)511;
            w.p = (const uint8_t *)bqu_alloc(w.n);
            memset((void *)(uintptr_t)w.p, 1, w.n);
            pr = measure_pair(run_mm, &c, read_stream, &w, (double)c.pb);
            warm_frac = pr.ratio * (double)c.pb / (double)w.n;
            warm_gbs = pr.ga;
            warm_stream = pr.gb * (double)w.n / (double)c.pb;
            free((void *)(uintptr_t)w.p);
        }
#if defined(QMX_BENCH_HAVE_OPENBLAS)
        {
            sg_ctx x;
            size_t t;
            unsigned seed = 5u;
            pair_res pr;
            x.M = c.M; x.N = c.N; x.K = c.K;
            x.a = (float *)bqu_alloc(c.M * c.K * 4); x.b = (float *)bqu_alloc(c.K * c.N * 4);
            x.c = (float *)bqu_alloc(c.M * c.N * 4);
            for (t = 0; t < c.M * c.K; t++) x.a[t] = (float)((int)(bqu_rng(&seed) & 255) - 128) / 64.0f;
            for (t = 0; t < c.K * c.N; t++) x.b[t] = (float)((int)(bqu_rng(&seed) & 255) - 128) / 64.0f;
            pr = measure_pair(run_mm, &c, sg_run, &x, work);
            sg[i] = pr.gb; rs[i] = pr.ratio;
            free(x.a); free(x.b); free(x.c);
        }
#endif
        snprintf(args, sizeof args, "%zu %zu %zu", shapes[i][0], shapes[i][1], shapes[i][2]);
        run_peers(args); /* gemmlowp (C++), once per shape: ~10x slower, drift does not matter */
        mm_free(&c);
        printf("measured  %zu,%zu,%zu\n", shapes[i][0], shapes[i][1], shapes[i][2]);
        fflush(stdout);
    }
    {
        mm_ctx c;
        mm_setup(&c, 1, 8192, 8192);
        c.packed = 1; run_mm(&c); bad |= spot_check(&c);
#if defined(QMX_BENCH_HAVE_DNNL)
        if (have_dnnl) {
            dn_ctx d;
            if (dn_setup(&d, &c, 1) == 0) {
                pair_res pr = measure_pair(run_mm, &c, dn_run, &d, (double)c.N * c.K);
                cold = pr.ga; dcold = pr.gb; rcold = pr.ratio;
                dn_free(&d);
            } else bad = 1;
        }
#endif
        if (cold == 0) { s = bqu_measure(run_mm, &c); cold = (double)c.N * c.K / s.med / 1e9; }
        { /* the share of the read stream, timed in alternation with the stream */
            pair_res pr = measure_pair(run_mm, &c, read_stream, &sc, (double)c.pb);
            cold_frac = pr.ratio * (double)c.pb / (double)sc.n;
        }
        mm_free(&c);
        free((void *)sc.p);
    }

    printf("\n%-16s %8s %6s %8s %7s %8s %8s %7s %8s %8s %8s %8s\n", "M,N,K", "qmx_pk", "%peak",
           "dnnl_pk", "pk/dnnl", "qmx_pl", "dnnl_pl", "pl/dnnl", "lowp", "pk/lowp", "sgemm",
           "pk/sgemm");
    for (i = 0; i < NSHAPES; i++) {
        size_t M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        double lp = peer("gemmlowp_u8u8s32", M, N, K);
        char nm[32];
        snprintf(nm, sizeof nm, "%zu,%zu,%zu", M, N, K);
        printf("%-16s", nm);
        cell(qp[i]);
        if (pk_frac[i] > 0) printf(" %5.0f%%", 100 * pk_frac[i]); else printf(" %6s", "-");
        cell(dp[i]); rcell(rp[i]);
        cell(qn[i]); cell(dn[i]); rcell(rn[i]);
        cell(lp); ratio(qp[i], lp);
        cell(sg[i]); rcell(rs[i]);
        printf("\n");
        if (have_dnnl && (rp[i] < (M == 1 ? 1.5 : 1.0) || rn[i] < 1.0)) aims_ok = 0;
    }
    printf("(qmx_pk: qmx_matmul_i8_packed; qmx_pl: qmx_matmul_i8 on row-major [N,K] weights;\n"
           " dnnl_pk/_pl: oneDNN s8xs8->s32 prepacked (format any) / plain [K,N]; lowp: gemmlowp\n"
           " u8xu8->s32 with offsets (packs per call); sgemm: OpenBLAS f32 GFLOPS; ratios qmx/peer;\n"
           " %%peak: qmx_pk's share of the VNNI peak loop timed in alternation with it)\n");
    printf("\nGEMV cold, M=1 N=K=8192 (64 MiB of packed weights, 2x L3): qmx %.1f GB/s of weights "
           "= %.2fx the read stream (timed in alternation; stream alone %.1f GB/s)", cold,
           cold_frac, stream);
    if (dcold > 0) printf("; oneDNN prepacked %.1f GB/s (qmx/oneDNN %.2fx)", dcold, rcold);
    if (warm_frac > 0) {
        printf("\nGEMV warm, M=1 N=K=4096 (16 MiB of packed weights, in L3): qmx %.1f GB/s of weights = "
               "%.2fx a read stream of the same bytes (%.1f GB/s)", warm_gbs, warm_frac, warm_stream);
        if (have_dnnl && rp[0] > 0)
            printf("; oneDNN %.2fx of it, so 1.5x oneDNN would need %.2fx the stream", warm_frac / rp[0],
                   1.5 * warm_frac / rp[0]);
    }
    printf("\n");
    if (cold_frac < 0.85) aims_ok = 0;
    printf("aims (>= 1.0x oneDNN prepacked, >= 1.5x at M=1, plain >= 1.0x oneDNN plain, cold GEMV "
           ">= 0.85x stream): %s\n", have_dnnl ? (aims_ok ? "all met" : "NOT all met") : "no oneDNN");
    bench_stages();
    bench_fc16();
    bench_blockw();
    (void)unused_helpers; (void)peak; (void)ghz;
    return bad;
}
