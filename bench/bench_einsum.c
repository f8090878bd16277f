/* bench_einsum.c - the cost of qmx_einsum's plan over the kernels it dispatches to.
 *
 *   make bench BENCH=einsum
 *
 * Single thread. For each case the ratio (seconds per einsum call) / (seconds per the direct
 * kernel call(s) on the same data) is measured with alternating reps (bqu_measure_ratio),
 * median [min, max]; 1.00 means the plan (parse, bind, scale expansion, packs) is free.
 *   1. "bsd,fd->bsf"   int8 x int8 -> float, per-token x per-channel scales, zero point on the
 *      activations; b=4, s=32, d=f=1024 vs qmx_matmul_i8_f32(M=128, N=1024, K=1024).
 *   2. "bsd,df->bsf"   the same with [K,N] weights, read in place (the kernel's tiles pack
 *      32-column strips from [K,N]) vs the kernel on pre-transposed [N,K] weights.
 *   3. "bnth,bnsh->bnts" int8 -> int32 (attention scores), b=1, n=8, t=s=128, h=64 vs a loop
 *      of qmx_matmul_i8 over the 8 heads.
 *   4. "bsd,df->bsf" and "bsd,fd->bsf"  float32, b=1, s=64, d=f=256: GFLOP/s of the portable
 *      float kernel (fixed summation order, no intrinsics), row form and register-tile form. */
#define QMX_IMPLEMENTATION
#include "../qmx_kernels.h"
#include "bench_util.h"

typedef struct ctx {
    const char *spec;
    qmx_einsum_operand a, b;
    qmx_einsum_opts opts;
    void *out, *ws;
    size_t out_len, ws_bytes;
    /* direct */
    int which;
    const int8_t *A, *B;
    size_t M, N, K, batches;
    qmx_matmul_i8_f32_scales sc;
    void *mws;
    size_t mws_bytes;
} ctx;

static void run_einsum(void *p) {
    ctx *c = (ctx *)p;
    int pos;
    if (qmx_einsum(c->spec, &c->a, &c->b, &c->opts, c->out, c->out_len, c->ws, c->ws_bytes, &pos))
        abort();
}
static void run_direct(void *p) {
    ctx *c = (ctx *)p;
    size_t i;
    if (c->which == 0) {
        if (qmx_matmul_i8_f32(c->M, c->N, c->K, c->A, c->K, c->B, c->K, (float *)c->out, c->N,
                              &c->sc, c->mws, c->mws_bytes)) abort();
    } else {
        for (i = 0; i < c->batches; i++)
            if (qmx_matmul_i8(c->M, c->N, c->K, c->A + i * c->M * c->K, c->K,
                              c->B + i * c->N * c->K, c->K, (int32_t *)c->out + i * c->M * c->N,
                              c->N, NULL, c->mws, c->mws_bytes)) abort();
    }
}

static void fill(int8_t *p, size_t n, unsigned *s) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = (int8_t)((int)(bqu_rng(s) & 0xFF) - 128);
}

int main(void) {
    unsigned seed = 1;
    size_t M = 128, N = 1024, K = 1024, i, need;
    int8_t *A = (int8_t *)bqu_alloc(M * K), *B = (int8_t *)bqu_alloc(N * K),
           *BT = (int8_t *)bqu_alloc(N * K);
    float *sa = (float *)bqu_alloc(4 * M), *sb = (float *)bqu_alloc(4 * N), *ra = (float *)bqu_alloc(4 * M);
    void *out = bqu_alloc(4 * M * N * 8), *ws = bqu_alloc(64u << 20), *mws = bqu_alloc(16u << 20);
    ctx c;
    bqu_stats r;
    int pos;
    printf("bench_einsum: %s\n", QMX_BENCH_CFLAGS);
    fill(A, M * K, &seed); fill(B, N * K, &seed);
    for (i = 0; i < M; i++) sa[i] = 0.01f + 1e-4f * (float)i;
    for (i = 0; i < N; i++) sb[i] = 0.02f + 1e-5f * (float)i;
    for (i = 0; i < N * K; i++) BT[(i % K) * N + i / K] = B[i]; /* [K,N] copy of B */
    memset(&c, 0, sizeof c);
    /* 1 */
    c.spec = "bsd,fd->bsf";
    c.a.dtype = QMX_INT8; c.a.rank = 3; c.a.shape[0] = 4; c.a.shape[1] = 32; c.a.shape[2] = K;
    c.a.data = A; c.a.data_bytes = M * K; c.a.zero_point = 3;
    c.a.scales = sa; c.a.scales_len = 32; c.a.scaling = QMX_EINSUM_SCALE_CHANNEL; c.a.channel_axis = 1;
    c.b.dtype = QMX_INT8; c.b.rank = 2; c.b.shape[0] = N; c.b.shape[1] = K; c.b.data = B;
    c.b.data_bytes = N * K; c.b.scales = sb; c.b.scales_len = N;
    c.b.scaling = QMX_EINSUM_SCALE_CHANNEL; c.b.channel_axis = 0;
    c.out = out; c.out_len = M * N * 8; c.ws = ws;
    if (qmx_einsum_workspace_size(c.spec, &c.a, &c.b, NULL, &need, &pos)) abort();
    c.ws_bytes = need;
    for (i = 0; i < M; i++) ra[i] = sa[i % 32];
    c.which = 0; c.A = A; c.B = B; c.M = M; c.N = N; c.K = K;
    c.sc.a_scales = ra; c.sc.a_scales_len = M; c.sc.a_per_row = 1; c.sc.a_zp = 3;
    c.sc.b_scales = sb; c.sc.b_scales_len = N; c.sc.b_per_col = 1; c.sc.block_size = K;
    qmx_matmul_i8_f32_workspace_size(M, N, K, &c.mws_bytes); c.mws = mws;
    r = bqu_measure_ratio(run_einsum, &c, run_direct, &c);
    printf("  %-18s int8->f32  M=%zu N=%zu K=%zu  workspace %8zu B  einsum/kernel %.3f [%.3f, %.3f]\n",
           c.spec, M, N, K, need, r.med, r.min, r.max);
    /* 2 */
    c.spec = "bsd,df->bsf";
    c.b.shape[0] = K; c.b.shape[1] = N; c.b.data = BT; c.b.channel_axis = 1;
    if (qmx_einsum_workspace_size(c.spec, &c.a, &c.b, NULL, &need, &pos)) abort();
    c.ws_bytes = need;
    r = bqu_measure_ratio(run_einsum, &c, run_direct, &c);
    printf("  %-18s int8->f32  [K,N] weights in place  workspace %8zu B  einsum/kernel %.3f [%.3f, %.3f]\n",
           c.spec, need, r.med, r.min, r.max);
    /* 3 */
    memset(&c.a, 0, sizeof c.a); memset(&c.b, 0, sizeof c.b);
    c.spec = "bnth,bnsh->bnts";
    c.a.dtype = c.b.dtype = QMX_INT8; c.a.rank = c.b.rank = 4;
    c.a.shape[0] = 1; c.a.shape[1] = 8; c.a.shape[2] = 128; c.a.shape[3] = 64;
    c.b.shape[0] = 1; c.b.shape[1] = 8; c.b.shape[2] = 128; c.b.shape[3] = 64;
    c.a.data = A; c.a.data_bytes = 8 * 128 * 64; c.b.data = B; c.b.data_bytes = 8 * 128 * 64;
    c.opts.int32_out = 1;
    if (qmx_einsum_workspace_size(c.spec, &c.a, &c.b, &c.opts, &need, &pos)) abort();
    c.ws_bytes = need;
    c.which = 1; c.M = 128; c.N = 128; c.K = 64; c.batches = 8;
    qmx_matmul_i8_workspace_size(128, 128, 64, NULL, &c.mws_bytes);
    r = bqu_measure_ratio(run_einsum, &c, run_direct, &c);
    printf("  %-18s int8->i32  8 heads x 128x128x64  workspace %8zu B  einsum/kernel %.3f [%.3f, %.3f]\n",
           c.spec, need, r.med, r.min, r.max);
    /* 4 */
    {
        float *fa = (float *)bqu_alloc(4 * 64 * 256), *fb = (float *)bqu_alloc(4 * 256 * 256);
        bqu_stats t;
        for (i = 0; i < 64 * 256; i++) fa[i] = (float)(i % 7) - 3.0f;
        for (i = 0; i < 256 * 256; i++) fb[i] = (float)(i % 5) - 2.0f;
        memset(&c.a, 0, sizeof c.a); memset(&c.b, 0, sizeof c.b); c.opts.int32_out = 0;
        c.spec = "bsd,df->bsf";
        c.a.rank = 3; c.a.shape[0] = 1; c.a.shape[1] = 64; c.a.shape[2] = 256; c.a.data = fa;
        c.a.data_bytes = 4 * 64 * 256;
        c.b.rank = 2; c.b.shape[0] = 256; c.b.shape[1] = 256; c.b.data = fb; c.b.data_bytes = 4 * 256 * 256;
        if (qmx_einsum_workspace_size(c.spec, &c.a, &c.b, NULL, &need, &pos)) abort();
        c.ws_bytes = need;
        t = bqu_measure(run_einsum, &c);
        printf("  %-18s float32   64x256x256  workspace %8zu B  %.2f GFLOP/s (median of %d reps)\n",
               c.spec, need, 2.0 * 64 * 256 * 256 / t.med * 1e-9, t.reps);
        c.spec = "bsd,fd->bsf"; /* [N,K] weights: the 4 x 4 register-tile form */
        if (qmx_einsum_workspace_size(c.spec, &c.a, &c.b, NULL, &need, &pos)) abort();
        c.ws_bytes = need;
        t = bqu_measure(run_einsum, &c);
        printf("  %-18s float32   64x256x256  workspace %8zu B  %.2f GFLOP/s (median of %d reps)\n",
               c.spec, need, 2.0 * 64 * 256 * 256 / t.med * 1e-9, t.reps);
    }
    return 0;
}
