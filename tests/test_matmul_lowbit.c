/* test_matmul_lowbit.c - specification of the int4-weight and fp8 matmuls (qmx_kernels.h).
 *
 * References are written independently here: int4 values come from the test's own nibble
 * packer, integer results from an int64 triple loop, float results from int64 block partials
 * combined in the documented float order (checked bit for bit) and from a double sum (checked
 * against the documented error bound). Shared golden values (an FNV-1a hash of the output
 * bits of fixed-seed cases, computed on x86-64) pin the float bits across SIMD/scalar builds
 * and targets. Every error status is checked with an output that must stay untouched. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"
#include <math.h>

#if defined(__arm__) && !defined(__linux__)
#  define SMALL_TARGET 1 /* bare-metal Cortex-M under QEMU: smaller sweeps */
#else
#  define SMALL_TARGET 0
#endif

/* ---- deterministic data (xorshift32; identical on every target) ---- */
static int32_t rnd_in(int32_t lo, int32_t hi) { return lo + (int32_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1)); }

/* The test's own packer: element e -> byte e/2, low nibble when e is even. */
static void put_nib(uint8_t *p, size_t e, int32_t v) {
    uint8_t nib = (uint8_t)(v & 15);
    if (e & 1) p[e / 2] = (uint8_t)((p[e / 2] & 0x0F) | (nib << 4));
    else p[e / 2] = (uint8_t)((p[e / 2] & 0xF0) | nib);
}

static uint32_t fnv_u32(uint32_t h, uint32_t u) {
    int b;
    for (b = 0; b < 4; b++) { h ^= (u >> (8 * b)) & 0xFFu; h *= 16777619u; }
    return h;
}
static uint32_t fnv_bits(uint32_t h, const float *v, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t u = qmx_test_f32_bits(v[i]);
        int b;
        for (b = 0; b < 4; b++) { h ^= (u >> (8 * b)) & 0xFFu; h *= 16777619u; }
    }
    return h;
}

/* buffers (static: some targets have small stacks) */
#define MAXM 40
#define MAXN 40
#define MAXK 700
#define MAXLD (MAXK + 9)
static int8_t Av[MAXM * MAXLD];           /* values of A (int8, or int4 values) */
static uint8_t Ap[(MAXM * MAXLD + 1) / 2]; /* A packed when int4 */
static int8_t Wv[MAXN * MAXLD];           /* values of W */
static uint8_t Wp[(MAXN * MAXLD + 1) / 2 + 1];
static uint8_t wzps[MAXN * MAXK];
static float ascl[MAXM * MAXK], wscl[MAXN * MAXK];
static int32_t Ci[MAXM * (MAXN + 3)];
static float Cf[MAXM * (MAXN + 3)];
static unsigned char wsbuf[1 << 20];

/* A scale exactly representable everywhere: (1 + r/64) * 2^e */
static float pow2f(int e) {
    float f = 1.0f;
    while (e > 0) { f *= 2.0f; e--; }
    while (e < 0) { f *= 0.5f; e++; }
    return f;
}
static float rnd_scale(void) { return (1.0f + (float)rnd_in(0, 63) / 64.0f) * pow2f(rnd_in(-12, 2)); }

typedef struct cfg {
    size_t M, N, K, lda, ldw, ldc, bs;
    int a_i4, w_u4, zps_per_block, a_per_row, w_per_col;
    int32_t a_zp, w_zp;
} cfg;

static void fill(const cfg *c, qmx_matmul_i4_params *p) {
    size_t i, nblk = (c->bs == 0 || c->bs >= c->K) ? 1 : (c->K + c->bs - 1) / c->bs;
    memset(Ap, 0, sizeof Ap);
    memset(Wp, 0, sizeof Wp);
    for (i = 0; i < c->M * c->lda; i++) {
        Av[i] = (int8_t)(c->a_i4 ? rnd_in(-8, 7) : rnd_in(-128, 127));
        if (c->a_i4) put_nib(Ap, i, Av[i]);
    }
    for (i = 0; i < c->N * c->ldw; i++) {
        Wv[i] = (int8_t)(c->w_u4 ? rnd_in(0, 15) : rnd_in(-8, 7));
        put_nib(Wp, i, Wv[i]);
    }
    if (c->N * c->ldw % 2) Wp[c->N * c->ldw / 2] |= 0xA0; /* a stray high nibble: ignored */
    for (i = 0; i < c->N * nblk; i++) wzps[i] = (uint8_t)rnd_in(0, 15);
    for (i = 0; i < c->M * nblk; i++) ascl[i] = rnd_scale();
    for (i = 0; i < c->N * nblk; i++) wscl[i] = rnd_scale();
    memset(p, 0, sizeof *p);
    p->a_dtype = c->a_i4 ? QMX_INT4 : QMX_INT8;
    p->a_zp = c->a_zp;
    p->w_dtype = c->w_u4 ? QMX_UINT4 : QMX_DTYPE_INVALID; /* 0 means int4 */
    p->w_zp = c->w_u4 ? c->w_zp : 0;
    p->w_zps = (c->w_u4 && c->zps_per_block) ? wzps : NULL;
    p->w_zps_len = c->N * nblk;
    p->block_size = c->bs;
    p->a_scales = ascl; p->a_scales_len = (c->a_per_row ? c->M : 1) * nblk; p->a_per_row = c->a_per_row;
    p->w_scales = wscl; p->w_scales_len = (c->w_per_col ? c->N : 1) * nblk; p->w_per_col = c->w_per_col;
}

/* int64 partial of block [k0, k0+kl) for (m, n) */
static int64_t ref_part(const cfg *c, size_t m, size_t n, size_t b, size_t k0, size_t kl) {
    int64_t s = 0;
    size_t k, nblk = (c->bs == 0 || c->bs >= c->K) ? 1 : (c->K + c->bs - 1) / c->bs;
    int64_t z = c->w_u4 ? (c->zps_per_block ? wzps[n * nblk + b] : c->w_zp) : 0;
    for (k = k0; k < k0 + kl; k++)
        s += ((int64_t)Av[m * c->lda + k] - c->a_zp) * ((int64_t)Wv[n * c->ldw + k] - z);
    return s;
}

static uint32_t run_case(const cfg *c, const char *what) {
    qmx_matmul_i4_params p;
    size_t need = 0, m, n, b, bs = (c->bs == 0 || c->bs >= c->K) ? c->K : c->bs;
    size_t nblk = (c->K + bs - 1) / bs;
    const void *A;
    qmx_status st;
    int bad_i = 0, bad_f = 0, bad_bound = 0;
    fill(c, &p);
    A = c->a_i4 ? (const void *)Ap : (const void *)Av;
    CHECK_EQ_INT(qmx_matmul_i4_workspace_size(c->M, c->N, c->K, &p, &need), QMX_OK, "%s", what);
    CHECK(need <= sizeof wsbuf, "%s: workspace %lu", what, (unsigned long)need);
    CHECK(need + 3 + 512 <= sizeof wsbuf, "%s: workspace %lu too large for the test", what, (unsigned long)need);
    if (need + 3 + 512 > sizeof wsbuf) return 0;
    for (m = 0; m < c->M * c->ldc; m++) Ci[m] = 0x5A5A5A5A;
    memset(wsbuf + 1 + need, 0xA5, 512);   /* nothing may be written past the workspace */
    st = qmx_matmul_i4(c->M, c->N, c->K, A, c->lda, Wp, c->ldw, Ci, c->ldc, &p, wsbuf + 1, need);
    CHECK_EQ_INT(st, QMX_OK, "%s", what);
    for (m = 0; m < 512; m++) if (wsbuf[1 + need + m] != 0xA5) break;
    CHECK(m == 512, "%s: byte %lu past the workspace written", what, (unsigned long)m);
    for (m = 0; m < c->M * c->ldc; m++) Cf[m] = -7.0f;
    memset(wsbuf + 3 + need, 0xA5, 512);
    st = qmx_matmul_i4_f32(c->M, c->N, c->K, A, c->lda, Wp, c->ldw, Cf, c->ldc, &p, wsbuf + 3, need);
    CHECK_EQ_INT(st, QMX_OK, "%s f32", what);
    for (m = 0; m < 512; m++) if (wsbuf[3 + need + m] != 0xA5) break;
    CHECK(m == 512, "%s f32: byte %lu past the workspace written", what, (unsigned long)m);
    for (m = 0; m < c->M; m++)
        for (n = 0; n < c->ldc; n++) {
            int64_t tot = 0;
            float sum = 0.0f;
            double exact = 0.0, mag = 0.0;
            if (n >= c->N) { /* padding untouched */
                if (Ci[m * c->ldc + n] != 0x5A5A5A5A || Cf[m * c->ldc + n] != -7.0f) bad_i++;
                continue;
            }
            for (b = 0; b < nblk; b++) {
                size_t k0 = b * bs, kl = c->K - k0 < bs ? c->K - k0 : bs;
                int64_t P = ref_part(c, m, n, b, k0, kl);
                float sa = ascl[(c->a_per_row ? m * nblk : 0) + b];
                float sb = wscl[(c->w_per_col ? n * nblk : 0) + b];
                float q = (float)P; /* |P| < 2^31: exact in double, one rounding to float */
                volatile float vq;
                q = q * sa;
                q = q * sb;
                vq = q; /* no contraction into the add */
                sum = sum + vq;
                tot += P;
                exact += (double)P * sa * sb;
                mag += fabs((double)P * sa * sb);
            }
            if (Ci[m * c->ldc + n] != (int32_t)tot) {
                if (bad_i++ < 3)
                    printf("  %s: C[%lu][%lu] = %ld, want %lld\n", what, (unsigned long)m,
                           (unsigned long)n, (long)Ci[m * c->ldc + n], (long long)tot);
            }
            if (qmx_test_f32_bits(Cf[m * c->ldc + n]) != qmx_test_f32_bits(sum)) bad_f++;
            if (fabs((double)Cf[m * c->ldc + n] - exact) >
                (double)(nblk + 4) * ldexp(1.0, -24) * mag + 1e-37)
                bad_bound++;
        }
    CHECK(bad_i == 0, "%s: %d int32 mismatches", what, bad_i);
    CHECK(bad_f == 0, "%s: %d float results differ from the documented order", what, bad_f);
    CHECK(bad_bound == 0, "%s: %d float results outside the bound", what, bad_bound);
    {
        uint32_t h = fnv_bits(2166136261u, Cf, c->M * c->ldc);
        for (m = 0; m < c->M * c->ldc; m++) h = fnv_u32(h, (uint32_t)Ci[m]);
        return h;
    }
}

static void test_int4_random(void) {
    int it, iters = SMALL_TARGET ? 40 : 300;
    char name[160];
    QMX_TEST_CASE("int4 x int8/int4 on random edge shapes equals the int64 reference");
    for (it = 0; it < iters; it++) {
        cfg c;
        static const size_t Ks[] = {1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 300, 513, 700};
        static const size_t Bs[] = {0, 4, 16, 32, 64, 128, 5, 33, 256, 6};
        memset(&c, 0, sizeof c);
        c.M = (size_t)rnd_in(1, it % 5 == 0 ? MAXM : 9);
        c.N = (size_t)rnd_in(1, it % 7 == 0 ? MAXN : 9);
        c.K = Ks[qmx_test_rand() % (sizeof Ks / sizeof Ks[0])];
        c.lda = c.K + (qmx_test_rand() % 3 == 0 ? (size_t)rnd_in(0, 9) : 0);
        c.ldw = c.K + (qmx_test_rand() % 3 == 0 ? (size_t)rnd_in(0, 9) : 0);
        c.ldc = c.N + (size_t)rnd_in(0, 3);
        c.bs = Bs[qmx_test_rand() % (sizeof Bs / sizeof Bs[0])];
        c.a_i4 = qmx_test_rand() % 4 == 0;
        c.w_u4 = qmx_test_rand() % 2;
        c.zps_per_block = qmx_test_rand() % 2;
        c.a_per_row = qmx_test_rand() % 2;
        c.w_per_col = qmx_test_rand() % 2;
        c.a_zp = qmx_test_rand() % 3 == 0 ? 0 : (c.a_i4 ? rnd_in(-8, 7) : rnd_in(-128, 127));
        c.w_zp = rnd_in(0, 15);
        snprintf(name, sizeof name, "M%lu N%lu K%lu lda%lu ldw%lu bs%lu a%s w%s azp%ld",
                 (unsigned long)c.M, (unsigned long)c.N, (unsigned long)c.K,
                 (unsigned long)c.lda, (unsigned long)c.ldw, (unsigned long)c.bs,
                 c.a_i4 ? "i4" : "i8", c.w_u4 ? (c.zps_per_block ? "u4blk" : "u4") : "i4",
                 (long)c.a_zp);
        run_case(&c, name);
    }
}

/* Blocks of 32 r with one weight zero point and a_zp = 0 (the ggml Q4_0 x Q8_0 class and
 * GPTQ-style groups of 64 / 128): the path that computes 16 columns at a time, with every
 * column count, K tail and block count around its widths (16 columns, 4-dot chunks, 16-block
 * scale transposes, r dots per block). */
static void test_int4_b32_strips(void) {
    static const size_t Ks[] = {32, 96, 128, 300, 500, 544, 700};
    static const size_t Ns[] = {1, 15, 16, 17, 33, 40};
    static const size_t Bss[] = {32, 64, 96, 128, 256};
    size_t ki, ni, bi, it = 0;
    char name[160];
    QMX_TEST_CASE("int4 blocks of 32 r, one zero point: every strip width, K tail and block count");
    for (bi = 0; bi < sizeof Bss / sizeof Bss[0]; bi++)
    for (ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
        for (ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++, it++) {
            cfg c;
            memset(&c, 0, sizeof c);
            c.M = it % 3 == 0 ? 3 : 1;
            c.N = Ns[ni];
            c.K = Ks[ki];
            c.lda = c.K + (it % 4 == 1 ? 3 : 0);
            c.ldw = c.K + (it % 2 ? 2 : 0);
            c.ldc = c.N + it % 3;
            c.bs = Bss[bi];
            c.a_i4 = it % 5 == 2;
            c.w_u4 = it % 2;
            c.a_per_row = (it / 2) % 2;
            c.w_per_col = it % 7 != 3;
            c.w_zp = (int32_t)(it % 16);
            c.zps_per_block = c.w_u4 && it % 4 == 1;   /* GPTQ / AWQ-style zero points */
            snprintf(name, sizeof name, "strip bs%lu M%lu N%lu K%lu ldw%lu a%s w%s",
                     (unsigned long)c.bs, (unsigned long)c.M,
                     (unsigned long)c.N, (unsigned long)c.K, (unsigned long)c.ldw,
                     c.a_i4 ? "i4" : "i8", c.w_u4 ? (c.zps_per_block ? "u4blk" : "u4") : "i4");
            run_case(&c, name);
        }
}

/* Golden: fixed cases whose output bits must be the same on every build and target. */
static void test_int4_golden(void) {
    static const struct { size_t M, N, K, ldw, bs; int w_u4, a_i4; int32_t azp; uint32_t h; } g[] = {
        {5, 9, 300, 300, 64, 1, 0, 3, 0xF23164EAu},
        {4, 8, 256, 257, 0, 0, 0, -5, 0xC6661C51u},
        {3, 5, 129, 130, 32, 0, 1, 2, 0xAB5CD8EFu},
    };
    size_t i;
    QMX_TEST_CASE("int4 golden output bits (identical on every target and path)");
    for (i = 0; i < sizeof g / sizeof g[0]; i++) {
        cfg c;
        uint32_t h;
        memset(&c, 0, sizeof c);
        qmx_test_rng_state = 12345u + (uint32_t)i;
        c.M = g[i].M; c.N = g[i].N; c.K = g[i].K; c.lda = c.K; c.ldw = g[i].ldw; c.ldc = c.N;
        c.bs = g[i].bs; c.w_u4 = g[i].w_u4; c.a_i4 = g[i].a_i4; c.a_zp = g[i].azp;
        c.zps_per_block = 1; c.a_per_row = 1; c.w_per_col = 1; c.w_zp = 7;
        h = run_case(&c, "golden");
        if (g[i].h == 0u) printf("  golden %lu: 0x%08lXu\n", (unsigned long)i, (unsigned long)h);
        else CHECK(h == g[i].h, "golden case %lu: hash 0x%08lX want 0x%08lX", (unsigned long)i,
                   (unsigned long)h, (unsigned long)g[i].h);
    }
}

/* K at the documented maximum with the extreme values: |C| = 3825 * K, just below 2^31. */
static void test_int4_max_k(void) {
    static const size_t K = QMX_MATMUL_I4_MAX_K;
    static int8_t a[QMX_MATMUL_I4_MAX_K];
    static uint8_t w[QMX_MATMUL_I4_MAX_K + 1]; /* 2 rows of uint4 */
    static unsigned char ws[2 * ((QMX_MATMUL_I4_MAX_K + 127) / 128) * 128 + 512];
    qmx_matmul_i4_params p;
    int32_t c[2] = {0, 0};
    size_t need = 0, k;
    QMX_TEST_CASE("int4 K = QMX_MATMUL_I4_MAX_K is exact; K + 1 is QMX_ERR_OVERFLOW");
    memset(&p, 0, sizeof p);
    for (k = 0; k < K; k++) a[k] = -128;
    /* row 0: all 15 with zero point 0 -> +15; row 1: all 0 with zero point 15 -> -15 */
    for (k = 0; k < 2 * K; k++) put_nib(w, k, k < K ? 15 : 0);
    p.w_dtype = QMX_UINT4; p.a_zp = 127;
    {
        static uint8_t zp[2] = {0, 15};
        p.w_zps = zp; p.w_zps_len = 2;
    }
    CHECK_EQ_INT(qmx_matmul_i4_workspace_size(1, 2, K, &p, &need), QMX_OK, "size");
    CHECK(need <= sizeof ws, "workspace %lu", (unsigned long)need);
    CHECK_EQ_INT(qmx_matmul_i4(1, 2, K, a, K, w, K, c, 2, &p, ws, sizeof ws), QMX_OK, "run");
    CHECK_EQ_INT(c[0], -3825LL * (long long)K, "row 0");
    CHECK_EQ_INT(c[1], 3825LL * (long long)K, "row 1");
    CHECK(3825.0 * (double)K <= 2147483647.0 && 3825.0 * (double)(K + 1) > 2147483647.0,
          "the bound is tight");
    c[0] = 77;
    CHECK_EQ_INT(qmx_matmul_i4(1, 2, K + 1, a, K + 1, w, K + 1, c, 2, &p, ws, sizeof ws),
                 QMX_ERR_OVERFLOW, "K + 1");
    CHECK_EQ_INT(c[0], 77, "untouched");
}

/* Every error status, output untouched. */
static void test_int4_errors(void) {
    qmx_matmul_i4_params p, q;
    qmx_requant_config rq;
    int32_t mult[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
    int shifts[4] = {0, 0, 0, 0};
    static int32_t c[64];
    static int8_t o8[64];
    static float cf[64];
    float sc[16];
    size_t need = 0, i;
    QMX_TEST_CASE("int4 errors return a status and leave every output untouched");
    memset(&p, 0, sizeof p);
    for (i = 0; i < 16; i++) sc[i] = 1.0f;
    for (i = 0; i < 64; i++) { c[i] = 99; o8[i] = 99; cf[i] = 99.0f; }
    memset(Av, 1, 64); memset(Wp, 0x11, 64);
    CHECK_EQ_INT(qmx_matmul_i4_workspace_size(4, 4, 8, &p, &need), QMX_OK, "size");
#define E(call, want) CHECK_EQ_INT(call, want, #call)
    E(qmx_matmul_i4_workspace_size(4, 4, 8, &p, NULL), QMX_ERR_NULL);
    E(qmx_matmul_i4_workspace_size(0, 4, 8, &p, &need), QMX_ERR_SIZE);
    E(qmx_matmul_i4_workspace_size(4, 0, 8, &p, &need), QMX_ERR_SIZE);
    E(qmx_matmul_i4_workspace_size(4, 4, 0, &p, &need), QMX_ERR_SIZE);
    E(qmx_matmul_i4_workspace_size(4, 4, QMX_MATMUL_I4_MAX_K + 1, &p, &need), QMX_ERR_OVERFLOW);
    E(qmx_matmul_i4(4, 4, 8, NULL, 8, Wp, 8, c, 4, &p, wsbuf, need), QMX_ERR_NULL);
    E(qmx_matmul_i4(4, 4, 8, Av, 8, NULL, 8, c, 4, &p, wsbuf, need), QMX_ERR_NULL);
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, NULL, 4, &p, wsbuf, need), QMX_ERR_NULL);
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &p, NULL, need), QMX_ERR_NULL);
    E(qmx_matmul_i4(0, 4, 8, Av, 8, Wp, 8, c, 4, &p, wsbuf, need), QMX_ERR_SIZE);
    E(qmx_matmul_i4(4, 0, 8, Av, 8, Wp, 8, c, 4, &p, wsbuf, need), QMX_ERR_SIZE);
    E(qmx_matmul_i4(4, 4, 0, Av, 8, Wp, 8, c, 4, &p, wsbuf, need), QMX_ERR_SIZE);
    E(qmx_matmul_i4(4, 4, 8, Av, 7, Wp, 8, c, 4, &p, wsbuf, need), QMX_ERR_SHAPE);
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 7, c, 4, &p, wsbuf, need), QMX_ERR_SHAPE);
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 3, &p, wsbuf, need), QMX_ERR_SHAPE);
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &p, wsbuf, need - 1), QMX_ERR_BUFFER_TOO_SMALL);
    E(qmx_matmul_i4(3, 4, 8, Av, SIZE_MAX / 2 + 2, Wp, 8, c, 4, &p, wsbuf, need), QMX_ERR_OVERFLOW);
    E(qmx_matmul_i4(4, 2, 8, Av, 8, Wp, SIZE_MAX - 2, c, 4, &p, wsbuf, need), QMX_ERR_OVERFLOW);
    E(qmx_matmul_i4(2, 4, 8, Av, 8, Wp, 8, c, SIZE_MAX / 4, &p, wsbuf, need), QMX_ERR_OVERFLOW);
    q = p; q.a_dtype = QMX_UINT8;
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_DTYPE);
    q = p; q.w_dtype = QMX_INT8;
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_DTYPE);
    q = p; q.a_zp = 128;
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_ARG);
    q = p; q.a_dtype = QMX_INT4; q.a_zp = 8;
    E(qmx_matmul_i4(4, 4, 8, Ap, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_ARG);
    q = p; q.w_zp = 1; /* int4 weights are symmetric */
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_ARG);
    q = p; q.w_dtype = QMX_UINT4; q.w_zp = 16;
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_ARG);
    q = p; q.w_dtype = QMX_UINT4; wzps[0] = 3; wzps[1] = 16; wzps[2] = 0; wzps[3] = 0;
    q.w_zps = wzps; q.w_zps_len = 4;
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_ARG);
    q.w_zps_len = 3;
    E(qmx_matmul_i4(4, 4, 8, Av, 8, Wp, 8, c, 4, &q, wsbuf, need), QMX_ERR_BUFFER_TOO_SMALL);
    E(qmx_matmul_i4(1, 1, QMX_MATMUL_I4_MAX_K + 1, Av, QMX_MATMUL_I4_MAX_K + 1, Wp,
                    QMX_MATMUL_I4_MAX_K + 1, c, 1, &p, wsbuf, sizeof wsbuf), QMX_ERR_OVERFLOW);
    for (i = 0; i < 64; i++) CHECK(c[i] == 99, "int32 output written at %lu", (unsigned long)i);
    /* f32 */
    q = p; q.a_scales = sc; q.a_scales_len = 1; q.w_scales = sc; q.w_scales_len = 1;
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, NULL, wsbuf, need), QMX_ERR_NULL);
    { qmx_matmul_i4_params r = q; r.a_scales = NULL;
      E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &r, wsbuf, need), QMX_ERR_NULL); }
    { qmx_matmul_i4_params r = q; r.a_scales_len = 0;
      E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &r, wsbuf, need), QMX_ERR_BUFFER_TOO_SMALL); }
    { qmx_matmul_i4_params r = q; r.w_per_col = 1;
      E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &r, wsbuf, need), QMX_ERR_BUFFER_TOO_SMALL); }
    sc[0] = 0.0f;
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &q, wsbuf, need), QMX_ERR_ARG);
    sc[0] = -1.0f;
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &q, wsbuf, need), QMX_ERR_ARG);
    sc[0] = (float)HUGE_VAL;
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &q, wsbuf, need), QMX_ERR_ARG);
    sc[0] = (float)NAN;
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &q, wsbuf, need), QMX_ERR_ARG);
    sc[0] = 1.0f;
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 3, &q, wsbuf, need), QMX_ERR_SHAPE);
    E(qmx_matmul_i4_f32(4, 4, 8, Av, 8, Wp, 8, cf, 4, &q, wsbuf, need - 1), QMX_ERR_BUFFER_TOO_SMALL);
    for (i = 0; i < 64; i++) CHECK(cf[i] == 99.0f, "float output written at %lu", (unsigned long)i);
    /* fully-connected */
    memset(&rq, 0, sizeof rq);
    rq.multipliers = mult; rq.shifts = shifts;
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, NULL, o8, 4, wsbuf, need), QMX_ERR_NULL);
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 200, Wp, 8, &rq, o8, 4, wsbuf, need), QMX_ERR_ARG);
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, &rq, o8, 3, wsbuf, need), QMX_ERR_SHAPE);
    rq.out_dtype = QMX_FP8_E5M2;
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, &rq, o8, 4, wsbuf, need), QMX_ERR_DTYPE);
    rq.out_dtype = QMX_INT8; shifts[0] = 40;
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, &rq, o8, 4, wsbuf, need), QMX_ERR_ARG);
    shifts[0] = 0; rq.act_min = 5; rq.act_max = 4;
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, &rq, o8, 4, wsbuf, need), QMX_ERR_ARG);
    rq.act_min = 0; rq.act_max = 0; rq.output_zero_point = 300;   /* accepted (issue 18), clamped */
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, &rq, o8, 4, wsbuf, need), QMX_OK);
    for (i = 0; i < 16; i++) { CHECK(o8[i] == 127, "zp 300: 4 + 300 clamped to 127"); o8[i] = 99; }
    rq.output_zero_point = 0;
    E(qmx_fully_connected_i4(4, 4, 8, Av, 8, 0, Wp, 8, &rq, o8, 4, wsbuf, need - 1), QMX_ERR_BUFFER_TOO_SMALL);
    for (i = 0; i < 64; i++) CHECK(o8[i] == 99, "fc output written at %lu", (unsigned long)i);
#undef E
}

/* The s4 fully-connected equals the int64 accumulators through qmx_requantize + clamp. */
static void test_fc_i4(void) {
    static int8_t out[MAXM * MAXN];
    qmx_requant_config rq;
    int32_t mult[MAXN], bias[MAXN];
    int shifts[MAXN];
    size_t M = 5, N = 11, K = 97, m, n, k, need = 0;
    int32_t azp = -3;
    int bad = 0;
    QMX_TEST_CASE("fully-connected s4 = requantize(int64 accumulators + bias), clamped");
    memset(Wp, 0, sizeof Wp);
    for (k = 0; k < M * K; k++) Av[k] = (int8_t)rnd_in(-128, 127);
    for (k = 0; k < N * K; k++) { Wv[k] = (int8_t)rnd_in(-8, 7); put_nib(Wp, k, Wv[k]); }
    for (n = 0; n < N; n++) {
        mult[n] = (int32_t)(0x40000000u + (qmx_test_rand() & 0x3FFFFFFFu));
        shifts[n] = rnd_in(-10, -4);
        bias[n] = rnd_in(-5000, 5000);
    }
    memset(&rq, 0, sizeof rq);
    rq.per_channel = 1; rq.multipliers = mult; rq.shifts = shifts; rq.bias = bias;
    rq.output_zero_point = 5; rq.act_min = -100; rq.act_max = 120;
    CHECK_EQ_INT(qmx_matmul_i4_workspace_size(M, N, K, NULL, &need), QMX_OK, "size");
    /* ldw = K odd: CMSIS-NN's flat packing, rows split bytes (the generic path) */
    CHECK_EQ_INT(qmx_fully_connected_i4(M, N, K, Av, K, azp, Wp, K, &rq, out, N, wsbuf, need),
                 QMX_OK, "run");
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            int64_t s = 0;
            int32_t v;
            for (k = 0; k < K; k++) s += ((int64_t)Av[m * K + k] - azp) * Wv[n * K + k];
            v = qmx_requantize((int32_t)s + bias[n], mult[n], shifts[n]) + 5;
            v = v < -100 ? -100 : (v > 120 ? 120 : v);
            if (out[m * N + n] != v) bad++;
        }
    CHECK(bad == 0, "%d outputs differ", bad);
}

/* ---- fp8 ---- */
/* The test's own decoder: from the bit fields, with ldexp. */
static double dec8(uint8_t c, int e5) {
    int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7, e = (c & 0x7F) >> mb, m = c & ((1 << mb) - 1);
    double v = e == 0 ? ldexp((double)m, 1 - bias - mb) : ldexp((double)((1 << mb) + m), e - bias - mb);
    return (c & 0x80) ? -v : v;
}
static uint8_t rnd_fp8(int e5) {
    for (;;) {
        uint8_t c = (uint8_t)qmx_test_rand();
        if (e5 ? (c & 0x7C) != 0x7C : (c & 0x7F) != 0x7F) return c;
    }
}

static void test_fp8_products_exact(void) {
    int fa, fb, bad = 0;
    QMX_TEST_CASE("every fp8 x fp8 product (E4M3, E5M2, mixed) is exact in float");
    for (fa = 0; fa < 2; fa++)
        for (fb = 0; fb < 2; fb++) {
            int i, j;
            for (i = 0; i < 256; i++)
                for (j = 0; j < 256; j++) {
                    float x, y, p;
                    double d;
                    if ((fa ? (i & 0x7C) == 0x7C : (i & 0x7F) == 0x7F) ||
                        (fb ? (j & 0x7C) == 0x7C : (j & 0x7F) == 0x7F))
                        continue;
                    x = (float)dec8((uint8_t)i, fa);
                    y = (float)dec8((uint8_t)j, fb);
                    p = x * y;
                    d = dec8((uint8_t)i, fa) * dec8((uint8_t)j, fb);
                    if ((double)p != d || (d != 0.0 && fabs(d) < 1.1754943508222875e-38)) bad++;
                }
        }
    CHECK(bad == 0, "%d inexact or subnormal products", bad);
}

static uint8_t FA[MAXM * MAXLD], FB[MAXN * MAXLD];
static float fsa[MAXM], fsb[MAXN];

static uint32_t run_fp8(size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc,
                        int ae5, int be5, int prow, int pcol, const char *what) {
    qmx_matmul_fp8_params p;
    size_t need = 0, m, n, k, i;
    int bad_order = 0, bad_bound = 0, bad_pad = 0;
    for (i = 0; i < M * lda; i++) FA[i] = rnd_fp8(ae5);
    for (i = 0; i < N * ldb; i++) FB[i] = rnd_fp8(be5);
    for (i = 0; i < M; i++) fsa[i] = rnd_scale();
    for (i = 0; i < N; i++) fsb[i] = rnd_scale();
    memset(&p, 0, sizeof p);
    p.a_fmt = ae5 ? QMX_FP8_E5M2 : QMX_FP8_E4M3FN;
    p.b_fmt = be5 ? QMX_FP8_E5M2 : QMX_DTYPE_INVALID;
    p.a_scales = fsa; p.a_scales_len = prow ? M : 1; p.a_per_row = prow;
    p.b_scales = fsb; p.b_scales_len = pcol ? N : 1; p.b_per_col = pcol;
    CHECK_EQ_INT(qmx_matmul_fp8_f32_workspace_size(M, N, K, &need), QMX_OK, "%s", what);
    CHECK(need <= sizeof wsbuf, "%s ws", what);
    for (i = 0; i < M * ldc; i++) Cf[i] = -3.0f;
    CHECK_EQ_INT(qmx_matmul_fp8_f32(M, N, K, FA, lda, FB, ldb, Cf, ldc, &p, wsbuf + 5, need),
                 QMX_OK, "%s", what);
    for (m = 0; m < M; m++)
        for (n = 0; n < ldc; n++) {
            float s[16], r;
            volatile float v;
            double exact = 0.0, mag = 0.0, sa = fsa[prow ? m : 0], sb = fsb[pcol && n < N ? n : 0];
            int w, l;
            if (n >= N) { bad_pad += Cf[m * ldc + n] != -3.0f; continue; }
            for (l = 0; l < 16; l++) s[l] = 0.0f;
            for (k = 0; k < K; k++) {
                double d = dec8(FA[m * lda + k], ae5) * dec8(FB[n * ldb + k], be5);
                v = (float)d; /* exact (test above) */
                s[k % 16] = s[k % 16] + v;
                exact += d;
                mag += fabs(d);
            }
            for (w = 8; w >= 1; w /= 2)
                for (l = 0; l < w; l++) s[l] = s[l] + s[l + w];
            v = s[0] * (float)sa;
            r = v * (float)sb;
            if (qmx_test_f32_bits(Cf[m * ldc + n]) != qmx_test_f32_bits(r)) bad_order++;
            if (fabs((double)Cf[m * ldc + n] - exact * sa * sb) >
                ((double)K / 16.0 + 6.0) * ldexp(1.0, -24) * mag * sa * sb + 1e-37)
                bad_bound++;
        }
    CHECK(bad_order == 0, "%s: %d results differ from the documented order", what, bad_order);
    CHECK(bad_bound == 0, "%s: %d results outside the bound", what, bad_bound);
    CHECK(bad_pad == 0, "%s: padding written", what);
    return fnv_bits(2166136261u, Cf, M * ldc);
}

static void test_fp8_random(void) {
    int it, iters = SMALL_TARGET ? 30 : 200;
    char name[128];
    QMX_TEST_CASE("fp8 x fp8 -> float: documented order bit for bit, within the bound");
    for (it = 0; it < iters; it++) {
        static const size_t Ks[] = {1, 2, 15, 16, 17, 31, 33, 64, 100, 255, 513, 700};
        size_t M = (size_t)rnd_in(1, it % 6 == 0 ? MAXM : 7), N = (size_t)rnd_in(1, it % 5 == 0 ? MAXN : 9);
        size_t K = Ks[qmx_test_rand() % (sizeof Ks / sizeof Ks[0])];
        size_t lda = K + (size_t)(qmx_test_rand() % 3 == 0 ? rnd_in(0, 9) : 0);
        size_t ldb = K + (size_t)(qmx_test_rand() % 3 == 0 ? rnd_in(0, 9) : 0);
        size_t ldc = N + (size_t)rnd_in(0, 2);
        int ae5 = qmx_test_rand() % 2, be5 = qmx_test_rand() % 2;
        snprintf(name, sizeof name, "M%lu N%lu K%lu %s x %s", (unsigned long)M, (unsigned long)N,
                 (unsigned long)K, ae5 ? "e5m2" : "e4m3", be5 ? "e5m2" : "e4m3");
        run_fp8(M, N, K, lda, ldb, ldc, ae5, be5, qmx_test_rand() % 2, qmx_test_rand() % 2, name);
    }
}

static void test_fp8_golden(void) {
    static const struct { size_t M, N, K; int ae5, be5; uint32_t h; } g[] = {
        {5, 6, 300, 0, 0, 0x743E5AF2u}, {4, 7, 129, 0, 1, 0x40739F2Bu}, {6, 3, 77, 1, 1, 0x2981E993u},
    };
    size_t i;
    QMX_TEST_CASE("fp8 golden output bits (identical on every target and path)");
    for (i = 0; i < sizeof g / sizeof g[0]; i++) {
        uint32_t h;
        qmx_test_rng_state = 777u + (uint32_t)i;
        h = run_fp8(g[i].M, g[i].N, g[i].K, g[i].K, g[i].K, g[i].N, g[i].ae5, g[i].be5, 1, 1,
                    "golden");
        if (g[i].h == 0u) printf("  fp8 golden %lu: 0x%08lXu\n", (unsigned long)i, (unsigned long)h);
        else CHECK(h == g[i].h, "fp8 golden %lu: 0x%08lX want 0x%08lX", (unsigned long)i,
                   (unsigned long)h, (unsigned long)g[i].h);
    }
}

static void test_fp8_errors(void) {
    qmx_matmul_fp8_params p, q;
    float sc[4] = {1, 1, 1, 1};
    static float c[32];
    size_t need = 0, i;
    QMX_TEST_CASE("fp8 errors (NaN/Inf codes, formats, shapes) leave C untouched");
    memset(&p, 0, sizeof p);
    p.a_scales = sc; p.a_scales_len = 1; p.b_scales = sc; p.b_scales_len = 1;
    memset(FA, 0x38, 64); memset(FB, 0x38, 64);
    for (i = 0; i < 32; i++) c[i] = 5.0f;
    CHECK_EQ_INT(qmx_matmul_fp8_f32_workspace_size(4, 4, 8, &need), QMX_OK, "size");
#define E(call, want) CHECK_EQ_INT(call, want, #call)
    E(qmx_matmul_fp8_f32_workspace_size(4, 4, 8, NULL), QMX_ERR_NULL);
    E(qmx_matmul_fp8_f32_workspace_size(4, 0, 8, &need), QMX_ERR_SIZE);
    E(qmx_matmul_fp8_f32_workspace_size(4, 4, SIZE_MAX - 3, &need), QMX_ERR_OVERFLOW);
    E(qmx_matmul_fp8_f32(4, 4, 8, NULL, 8, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_NULL);
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, NULL, wsbuf, need), QMX_ERR_NULL);
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &p, NULL, need), QMX_ERR_NULL);
    E(qmx_matmul_fp8_f32(4, 4, 0, FA, 8, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_SIZE);
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 7, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_SHAPE);
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 3, &p, wsbuf, need), QMX_ERR_SHAPE);
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &p, wsbuf, need - 1), QMX_ERR_BUFFER_TOO_SMALL);
    E(qmx_matmul_fp8_f32(3, 4, 8, FA, SIZE_MAX / 2 + 2, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_OVERFLOW);
    q = p; q.a_fmt = QMX_INT8;
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &q, wsbuf, need), QMX_ERR_DTYPE);
    q = p; q.b_fmt = QMX_FP8_E4M3FNUZ;
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &q, wsbuf, need), QMX_ERR_UNSUPPORTED);
    q = p; q.b_per_col = 1;
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &q, wsbuf, need), QMX_ERR_BUFFER_TOO_SMALL);
    sc[0] = (float)NAN;
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_ARG);
    sc[0] = 1.0f;
    FA[13] = 0x7F; /* E4M3 NaN */
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_NONFINITE);
    FA[13] = 0xFF;
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &p, wsbuf, need), QMX_ERR_NONFINITE);
    FA[13] = 0x38;
    q = p; q.b_fmt = QMX_FP8_E5M2; FB[31] = 0x7C; /* E5M2 +Inf */
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &q, wsbuf, need), QMX_ERR_NONFINITE);
    FB[31] = 0xFE; /* E5M2 NaN */
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c, 4, &q, wsbuf, need), QMX_ERR_NONFINITE);
    FB[31] = 0x7B; /* E5M2 max, finite: fine */
    E(qmx_matmul_fp8_f32(4, 4, 8, FA, 8, FB, 8, c + 16, 4, &q, wsbuf, need), QMX_OK);
    for (i = 0; i < 16; i++) CHECK(c[i] == 5.0f, "output written at %lu", (unsigned long)i);
#undef E
}

int main(void) {
    qmx_test_seed(2463534242u); /* this program's data */
    test_int4_errors();
    test_int4_max_k();
    test_fc_i4();
    test_int4_golden();
    test_int4_random();
    test_int4_b32_strips();
    test_fp8_products_exact();
    test_fp8_errors();
    test_fp8_golden();
    test_fp8_random();
    return QMX_TEST_END();
}
