/* test_matmul_mx.c - qmx_matmul_blockw_f32 (f32 activations x MX / NVFP4 / qconfig block-scaled
 * weights) and qmx_matmul_mxfp8_f32 (MXFP8 x MXFP8), qmx_kernels.h "BLOCK-SCALED WEIGHTS".
 * The weights are made by qmx_mx_quantize / qmx_quantize and dequantized here as ONE tensor
 * (qmx_mx_dequantize / qmx_dequantize on the whole [N][K] view). Two references:
 *   bit for bit: all products of the documented order first, then the sums over k with k as
 *     the OUTER loop (a loop structure unlike the kernel's), each step a volatile float;
 *   tolerance: double dot products, |Y - ref| <= (K + 2) 2^-24 sum |a w|.
 * MXFP8 x MXFP8: per block, the exact sum found in double / int64 (checked to be exact), one
 * rounding of its scaled value to float, blocks summed in order; hand-made blocks for ties,
 * subnormals, overflow, cancellation, NaN / Inf. Every error path leaves Y and the workspace
 * untouched; nothing is written past the queried workspace (sentinels).
 */
#include <math.h>
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"

#define MAXM 8
#define MAXN 12
#define MAXK 200
#define PADA 5
#define PADY 3
#define SENT 0xC2F6E979u /* Y sentinel -123.456 (finite: x87 loads would quiet a signaling NaN) */

static float A[MAXM * (MAXK + PADA)], Wf[MAXN * MAXK], Wdq[MAXN * MAXK];
static float Y[MAXM * (MAXN + PADY)], Yref[MAXM * MAXN], Ysave[MAXM * (MAXN + PADY)];
static float P[MAXM * MAXN * MAXK];
static uint8_t wel[MAXN * MAXK * 2 + 16], wsc8[MAXN * MAXK + 16];
static float wscf[MAXN * MAXK + 16];
static int32_t wzp[MAXN * MAXK + 16];
static unsigned char ws[4096], wssave[4096];
static qmx_mx_config mcfg;
static qmx_qconfig qcfg;
static qmx_blockw W;

/* one rounded float operation per statement (x87, s390x round each assignment under
 * -std=c99), the product through a volatile (no FMA contraction): the same values everywhere */
static float frand(float lo, float hi) {
    float t = (float)(qmx_test_rand() >> 8) * (1.0f / 16777216.0f), w = hi - lo;
    volatile float p = t * w;
    t = lo + p;
    return t;
}
static uint32_t fb(float f) { return qmx_test_f32_bits(f); }
/* FNV-1a over the bits of every output: the same value on every target (checked in main) */
static uint32_t out_hash = 2166136261u;
static void hash_out(float y) {
    uint32_t u = fb(y), i;
    for (i = 0; i < 4; i++) { out_hash ^= (u >> (8 * i)) & 0xFFu; out_hash *= 16777619u; }
}

/* W [N][K]: values in [-2, 2] times 2^(n % 5 - 2), some exact zeros */
static void fill_w(size_t N, size_t K) {
    size_t n, k;
    for (n = 0; n < N; n++)
        for (k = 0; k < K; k++) {
            float v = frand(-2.0f, 2.0f) * (float)(1u << (n % 5)) * 0.25f;
            if (qmx_test_rand() % 13 == 0) v = 0.0f;
            Wf[n * K + k] = v;
        }
}
static void fill_a(size_t M, size_t K, size_t lda) {
    size_t i;
    for (i = 0; i < M * lda; i++)   /* the padding holds NaN: reading it would show */
        A[i] = (i % lda) < K ? frand(-1.5f, 1.5f) : qmx_test_bits_f32(0x7FC01234u);
}

/* MX weights [N][K] of Wf; Wdq = the whole tensor dequantized */
static int mk_mx(qmx_mx_format f, qmx_mx_rule r, size_t bs, float ts, size_t N, size_t K) {
    size_t eb, ns;
    memset(&mcfg, 0, sizeof mcfg);
    mcfg.format = f; mcfg.rule = r; mcfg.block_size = bs; mcfg.tensor_scale = ts;
    mcfg.outer = N; mcfg.axis_len = K; mcfg.inner = 1;
    if (qmx_mx_storage(&mcfg, N * K, &eb, &ns) != QMX_OK) return 0;
    if (qmx_mx_quantize(&mcfg, Wf, N * K, wel, eb, wsc8, ns) != QMX_OK) return 0;
    if (qmx_mx_dequantize(&mcfg, wel, eb, wsc8, ns, N * K, Wdq) != QMX_OK) return 0;
    memset(&W, 0, sizeof W);
    W.kind = QMX_BLOCKW_MX; W.mx = &mcfg; W.data = wel; W.data_bytes = eb;
    W.scale_codes = wsc8; W.n_scales = ns;
    return 1;
}
/* qconfig weights [N][K] of Wf (granularity g; per block along K, per channel per row) */
static int mk_qc(qmx_dtype d, qmx_granularity g, size_t bs, int asym, qmx_recipe rc, size_t N,
                 size_t K) {
    size_t np, qb;
    memset(&qcfg, 0, sizeof qcfg);
    qcfg.dtype = d; qcfg.granularity = g; qcfg.block_size = bs; qcfg.asymmetric = asym;
    qcfg.recipe = rc;
    if (g == QMX_PER_BLOCK) { qcfg.outer = N; qcfg.axis_len = K; qcfg.inner = 1; }
    else if (g == QMX_PER_CHANNEL) { qcfg.outer = 1; qcfg.axis_len = N; qcfg.inner = K; }
    if (qmx_qparams_count(&qcfg, N * K, &np) != QMX_OK) return 0;
    if (qmx_dtype_storage_bytes(d, N * K, &qb) != QMX_OK) return 0;
    if (qmx_compute_qparams(&qcfg, Wf, N * K, wscf, np, asym ? wzp : NULL) != QMX_OK) return 0;
    if (qmx_quantize(&qcfg, Wf, N * K, wscf, np, asym ? wzp : NULL, wel, qb) != QMX_OK) return 0;
    if (qmx_dequantize(&qcfg, wel, qb, N * K, wscf, np, asym ? wzp : NULL, Wdq) != QMX_OK)
        return 0;
    memset(&W, 0, sizeof W);
    W.kind = QMX_BLOCKW_QCONFIG; W.qc = &qcfg; W.data = wel; W.data_bytes = qb;
    W.scales = wscf; W.zero_points = asym ? wzp : NULL; W.n_scales = np;
    return 1;
}

/* the documented order, k as the outer loop */
static void ref_exact(size_t M, size_t N, size_t K, size_t lda) {
    size_t m, n, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++)
            for (k = 0; k < K; k++) {
                volatile float p = A[m * lda + k] * Wdq[n * K + k];
                P[(m * N + n) * K + k] = p;
            }
    for (m = 0; m < M * N; m++) Yref[m] = 0.0f;
    for (k = 0; k < K; k++)
        for (m = 0; m < M * N; m++) {
            volatile float s = Yref[m] + P[m * K + k];
            Yref[m] = s;
        }
    for (m = 0; m < M * N; m++)
        if (Yref[m] != Yref[m]) Yref[m] = qmx_test_bits_f32(0x7FC00000u);
}

/* Runs the kernel with padded lda / ldy at workspace offset off and checks everything. */
static void run_blockw(const char *what, size_t M, size_t N, size_t K, int nonfinite) {
    size_t lda = K + PADA, ldy = N + PADY, need, i, m, n, k, off = (size_t)(qmx_test_rand() % 8);
    qmx_status st;
    long bad_bits = 0, bad_tol = 0, bad_pad = 0;
    fill_a(M, K, lda);
    if (nonfinite) {
        A[0 * lda + 3] = qmx_test_bits_f32(0xFFC00001u);   /* a negative NaN with a payload */
        if (M > 1) A[1 * lda + 5] = qmx_test_bits_f32(0x7F800000u);
        if (M > 2) A[2 * lda + 0] = qmx_test_bits_f32(0xFF800000u);
    }
    ref_exact(M, N, K, lda);
    for (i = 0; i < M * ldy; i++) Y[i] = qmx_test_bits_f32(SENT);
    CHECK(qmx_matmul_blockw_f32_workspace_size(M, N, K, &need) == QMX_OK, "%s query", what);
    CHECK(need + off + 64 <= sizeof ws, "%s workspace %zu", what, need);
    memset(ws, 0xA5, sizeof ws);
    st = qmx_matmul_blockw_f32(M, N, K, A, lda, &W, Y, ldy, ws + off, need);
    CHECK(st == QMX_OK, "%s: status %d", what, (int)st);
    for (i = 0; i < off; i++) if (ws[i] != 0xA5) bad_pad++;
    for (i = off + need; i < sizeof ws; i++) if (ws[i] != 0xA5) bad_pad++;
    for (m = 0; m < M; m++) {
        for (n = N; n < ldy; n++) if (fb(Y[m * ldy + n]) != SENT) bad_pad++;
        for (n = 0; n < N; n++) {
            float y = Y[m * ldy + n], r = Yref[m * N + n];
            double d = 0.0, ab = 0.0;
            hash_out(y);
            if (fb(y) != fb(r)) {
                if (bad_bits++ < 3) printf("  %s m %zu n %zu got %08x want %08x\n", what, m, n,
                                           (unsigned)fb(y), (unsigned)fb(r));
            }
            if (y != y || y - y != 0.0f) continue;   /* non-finite: bits only */
            for (k = 0; k < K; k++) {
                d += (double)A[m * lda + k] * (double)Wdq[n * K + k];
                ab += fabs((double)A[m * lda + k] * (double)Wdq[n * K + k]);
            }
            if (fabs((double)y - d) > (double)(K + 2) * ldexp(1.0, -24) * ab + 1e-37) bad_tol++;
        }
    }
    CHECK(bad_bits == 0, "%s: %ld outputs differ from the documented order", what, bad_bits);
    CHECK(bad_tol == 0, "%s: %ld outputs outside the double tolerance", what, bad_tol);
    CHECK(bad_pad == 0, "%s: %ld padding / workspace sentinels written", what, bad_pad);
}

static void mx_case(const char *what, qmx_mx_format f, qmx_mx_rule r, size_t bs, float ts,
                    size_t M, size_t N, size_t K, int nonfinite) {
    int ok;
    fill_w(N, K);
    ok = mk_mx(f, r, bs, ts, N, K);
    CHECK(ok, "%s: making the weights", what);
    if (ok) run_blockw(what, M, N, K, nonfinite);
}
static void qc_case(const char *what, qmx_dtype d, qmx_granularity g, size_t bs, int asym,
                    qmx_recipe rc, size_t M, size_t N, size_t K, int nonfinite) {
    int ok;
    fill_w(N, K);
    ok = mk_qc(d, g, bs, asym, rc, N, K);
    CHECK(ok, "%s: making the weights", what);
    if (ok) run_blockw(what, M, N, K, nonfinite);
}

static void test_formats(void) {
    QMX_TEST_CASE("blockw formats");
    mx_case("mxfp4 floor", QMX_MXFP4, QMX_MX_FLOOR, 0, 0.0f, 3, 5, 96, 0);
    mx_case("mxfp4 floor ragged odd K", QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, 5, 7, 99, 0);
    mx_case("mxfp4 floor NaN/Inf in A", QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, 3, 5, 64, 1);
    mx_case("mxfp4 ggml", QMX_MXFP4, QMX_MX_GGML, 0, 0.0f, 3, 3, 64, 0);
    mx_case("nvfp4 torchao", QMX_NVFP4, QMX_MX_FLOOR, 0, 0.0f, 3, 5, 64, 0);
    mx_case("nvfp4 torchao two-level", QMX_NVFP4, QMX_MX_FLOOR, 0, 2.0f / 2688.0f, 3, 5, 80, 0);
    mx_case("nvfp4 torchao ragged odd K", QMX_NVFP4, QMX_MX_FLOOR, 16, 0.0f, 3, 5, 41, 0);
    mx_case("nvfp4 ggml", QMX_NVFP4, QMX_MX_GGML, 0, 0.0f, 3, 5, 64, 0);
    mx_case("nvfp4 qwix", QMX_NVFP4, QMX_MX_QWIX, 0, 0.0f, 1, 5, 48, 0);
    mx_case("mxfp8 e4m3 rceil", QMX_MXFP8_E4M3, QMX_MX_RCEIL, 32, 0.0f, 3, 5, 96, 0);
    mx_case("mxfp8 e4m3 rceil ragged", QMX_MXFP8_E4M3, QMX_MX_RCEIL, 32, 0.0f, 7, 3, 100, 1);
    mx_case("mxfp8 e5m2 ceil", QMX_MXFP8_E5M2, QMX_MX_CEIL, 32, 0.0f, 3, 5, 64, 0);
    mx_case("mxfp8 e4m3 qwix 16", QMX_MXFP8_E4M3, QMX_MX_QWIX, 16, 0.0f, 2, 5, 48, 0);
    mx_case("mxfp6 e2m3 even", QMX_MXFP6_E2M3, QMX_MX_EVEN, 32, 0.0f, 3, 5, 64, 0);
    mx_case("mxfp6 e3m2 floor ragged", QMX_MXFP6_E3M2, QMX_MX_FLOOR, 32, 0.0f, 3, 5, 70, 0);
    mx_case("mxfp6 e2m3 microxcaling", QMX_MXFP6_E2M3, QMX_MX_MICROXCALING, 32, 0.0f, 3, 5, 64, 0);
    mx_case("mxint8 microxcaling", QMX_MXINT8, QMX_MX_MICROXCALING, 32, 0.0f, 3, 5, 96, 0);
    mx_case("mxint8 microxcaling ragged", QMX_MXINT8, QMX_MX_MICROXCALING, 32, 0.0f, 5, 3, 45, 1);
    mx_case("mxfp4 one row", QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, 1, 1, 32, 0);
    qc_case("nf4 block 32", QMX_NF4, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 3, 5, 96, 0);
    qc_case("nf4 ragged odd K", QMX_NF4, QMX_PER_BLOCK, 8, 0, QMX_RECIPE_QWIX, 5, 7, 33, 1);
    qc_case("int2 block 16", QMX_INT2, QMX_PER_BLOCK, 16, 0, QMX_RECIPE_AQT, 3, 5, 64, 0);
    qc_case("int2 ragged K 35", QMX_INT2, QMX_PER_BLOCK, 8, 0, QMX_RECIPE_QWIX, 3, 7, 35, 0);
    qc_case("uint2 zero points", QMX_UINT2, QMX_PER_BLOCK, 16, 1, QMX_RECIPE_QWIX, 3, 5, 64, 0);
    qc_case("uint2 zero points ragged K 37", QMX_UINT2, QMX_PER_BLOCK, 10, 1, QMX_RECIPE_QWIX,
            5, 5, 37, 1);
    qc_case("int4 per channel", QMX_INT4, QMX_PER_CHANNEL, 0, 0, QMX_RECIPE_AQT, 3, 5, 33, 0);
    qc_case("uint4 zero points", QMX_UINT4, QMX_PER_BLOCK, 16, 1, QMX_RECIPE_TFLITE, 3, 5, 50, 0);
    qc_case("int8 per tensor", QMX_INT8, QMX_PER_TENSOR, 0, 0, QMX_RECIPE_AQT, 3, 5, 40, 0);
    qc_case("uint8 per channel zp", QMX_UINT8, QMX_PER_CHANNEL, 0, 1, QMX_RECIPE_QWIX, 3, 5, 40, 0);
    qc_case("int16 block 24", QMX_INT16, QMX_PER_BLOCK, 24, 0, QMX_RECIPE_AQT, 3, 5, 60, 0);
    qc_case("int3 block 8", QMX_INT3, QMX_PER_BLOCK, 8, 0, QMX_RECIPE_QWIX, 3, 5, 40, 0);
    qc_case("fp8 e4m3 block 32", QMX_FP8_E4M3FN, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 3, 5, 64, 0);
}

/* NaN weights (an MX block with NaN: scale code 0xFF) propagate as 0x7FC00000 */
static void test_nan_weights(void) {
    int ok;
    QMX_TEST_CASE("blockw NaN weights");
    fill_w(5, 64);
    Wf[1 * 64 + 7] = qmx_test_bits_f32(0x7FC00000u);
    ok = mk_mx(QMX_MXFP8_E4M3, QMX_MX_FLOOR, 32, 0.0f, 5, 64);
    CHECK(ok && wsc8[1 * 2 + 0] == 0xFF, "NaN block scale");
    if (ok) run_blockw("mxfp8 NaN block", 3, 5, 64, 0);
}

#define ERRCASE(call, want, what)                                                          \
    do {                                                                                   \
        qmx_status st_;                                                                    \
        for (i = 0; i < sizeof Y / sizeof Y[0]; i++) Y[i] = qmx_test_bits_f32(SENT);       \
        memset(ws, 0xA5, sizeof ws);                                                       \
        memcpy(Ysave, Y, sizeof Y); memcpy(wssave, ws, sizeof ws);                         \
        st_ = (call);                                                                      \
        CHECK(st_ == (want), "%s: status %d want %d", what, (int)st_, (int)(want));        \
        CHECK(!memcmp(Y, Ysave, sizeof Y) && !memcmp(ws, wssave, sizeof ws),               \
              "%s: output or workspace written", what);                                    \
    } while (0)

static void test_errors(void) {
    size_t M = 3, N = 5, K = 96, lda = K, ldy = N, need, i, big = SIZE_MAX / 2;
    qmx_blockw w2;
    qmx_mx_config m2;
    qmx_qconfig q2;
    QMX_TEST_CASE("blockw errors");
    fill_w(N, K);
    fill_a(M, K, lda);
    CHECK(mk_mx(QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, N, K), "weights");
    qmx_matmul_blockw_f32_workspace_size(M, N, K, &need);
#define CALL(Mx, Nx, Kx, Ax, ldax, wx, Yx, ldyx, wsx, wsb) \
    qmx_matmul_blockw_f32(Mx, Nx, Kx, Ax, ldax, wx, Yx, ldyx, wsx, wsb)
    CHECK(CALL(M, N, K, A, lda, &W, Y, ldy, ws, need) == QMX_OK, "valid (control)");
    ERRCASE(CALL(M, N, K, NULL, lda, &W, Y, ldy, ws, need), QMX_ERR_NULL, "A NULL");
    ERRCASE(CALL(M, N, K, A, lda, NULL, Y, ldy, ws, need), QMX_ERR_NULL, "w NULL");
    ERRCASE(CALL(M, N, K, A, lda, &W, NULL, ldy, ws, need), QMX_ERR_NULL, "Y NULL");
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, ldy, NULL, need), QMX_ERR_NULL, "workspace NULL");
    ERRCASE(CALL(0, N, K, A, lda, &W, Y, ldy, ws, need), QMX_ERR_SIZE, "M 0");
    ERRCASE(CALL(M, 0, K, A, lda, &W, Y, ldy, ws, need), QMX_ERR_SIZE, "N 0");
    ERRCASE(CALL(M, N, 0, A, lda, &W, Y, ldy, ws, need), QMX_ERR_SIZE, "K 0");
    ERRCASE(CALL(M, N, K, A, K - 1, &W, Y, ldy, ws, need), QMX_ERR_SHAPE, "lda < K");
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, N - 1, ws, need), QMX_ERR_SHAPE, "ldy < N");
    ERRCASE(CALL(3, N, K, A, big, &W, Y, ldy, ws, need), QMX_ERR_OVERFLOW, "A extent");
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, big / 2, ws, need), QMX_ERR_OVERFLOW, "Y bytes");
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, ldy, ws, need - 1), QMX_ERR_BUFFER_TOO_SMALL,
            "workspace short");
    w2 = W; w2.kind = (qmx_blockw_kind)0;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_ARG, "kind 0");
    w2 = W; w2.kind = (qmx_blockw_kind)3;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_ARG, "kind 3");
    w2 = W; w2.mx = NULL;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_NULL, "mx NULL");
    w2 = W; w2.data = NULL;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_NULL, "data NULL");
    w2 = W; w2.scale_codes = NULL;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_NULL, "scale codes NULL");
    w2 = W; w2.data_bytes = W.data_bytes - 1;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_BUFFER_TOO_SMALL, "data short");
    w2 = W; w2.n_scales = W.n_scales - 1;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_BUFFER_TOO_SMALL,
            "scales short");
    m2 = mcfg; m2.outer = N - 1; m2.axis_len = K + K / (N - 1); w2 = W; w2.mx = &m2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SHAPE, "view != count");
    m2 = mcfg; m2.outer = 1; m2.axis_len = N * K; w2 = W; w2.mx = &m2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SHAPE, "view [1][N*K][1]");
    m2 = mcfg; m2.outer = N; m2.axis_len = 1; m2.inner = K; w2 = W; w2.mx = &m2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SHAPE, "view [N][1][K]");
    m2 = mcfg; m2.outer = 0; m2.axis_len = 0; m2.inner = 0; w2 = W; w2.mx = &m2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SHAPE, "all-zero view, N > 1");
    m2 = mcfg; m2.rule = QMX_MX_MICROXCALING; m2.format = QMX_NVFP4; w2 = W; w2.mx = &m2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_UNSUPPORTED, "nvfp4 mx rule");
    m2 = mcfg; m2.format = (qmx_mx_format)9; w2 = W; w2.mx = &m2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_ARG, "format 9");
    ERRCASE(CALL(1, SIZE_MAX / 64, K, A, lda, &W, Y, SIZE_MAX / 64, ws, need), QMX_ERR_OVERFLOW,
            "N * K");

    /* qconfig weights */
    CHECK(mk_qc(QMX_UINT2, QMX_PER_BLOCK, 16, 1, QMX_RECIPE_QWIX, N, K), "qc weights");
    CHECK(CALL(M, N, K, A, lda, &W, Y, ldy, ws, need) == QMX_OK, "qc valid (control)");
    w2 = W; w2.qc = NULL;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_NULL, "qc NULL");
    w2 = W; w2.scales = NULL;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_NULL, "scales NULL");
    w2 = W; w2.zero_points = NULL;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_NULL, "zero points NULL");
    w2 = W; w2.data_bytes = W.data_bytes - 1;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_BUFFER_TOO_SMALL, "q short");
    w2 = W; w2.n_scales = W.n_scales - 1;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_BUFFER_TOO_SMALL,
            "qc scales short");
    wscf[W.n_scales - 1] = 0.0f;
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, ldy, ws, need), QMX_ERR_ARG, "last scale 0");
    wscf[W.n_scales - 1] = qmx_test_bits_f32(0x7FC00000u);
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, ldy, ws, need), QMX_ERR_ARG, "last scale NaN");
    wscf[W.n_scales - 1] = 1.0f;
    wzp[W.n_scales - 1] = 4;
    ERRCASE(CALL(M, N, K, A, lda, &W, Y, ldy, ws, need), QMX_ERR_ARG, "last zero point 4");
    wzp[W.n_scales - 1] = 1;
    q2 = qcfg; q2.dtype = QMX_FLOAT32; w2 = W; w2.qc = &q2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_DTYPE, "qc float32");
    q2 = qcfg; q2.outer = 1; q2.axis_len = N * K; w2 = W; w2.qc = &q2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SHAPE, "qc block view");
    q2 = qcfg; q2.granularity = QMX_PER_CHANNEL; w2 = W; w2.qc = &q2;   /* view [N][K][1] */
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SHAPE, "qc channel view");
    q2 = qcfg; q2.block_size = 0; w2 = W; w2.qc = &q2;
    ERRCASE(CALL(M, N, K, A, lda, &w2, Y, ldy, ws, need), QMX_ERR_SIZE, "qc block 0");
#undef CALL
}

static void test_workspace_query(void) {
    size_t b = 0;
    QMX_TEST_CASE("blockw workspace query");
    CHECK(qmx_matmul_blockw_f32_workspace_size(1, 1, 1, &b) == QMX_OK && b == 192, "K 1: %zu", b);
    CHECK(qmx_matmul_blockw_f32_workspace_size(7, 3, 96, &b) == QMX_OK && b == 64 + 384 + 64,
          "K 96: %zu", b);
    CHECK(qmx_matmul_blockw_f32_workspace_size(1, 1, 129, &b) == QMX_OK &&
              b == 64 + 576 + 128, "K 129: %zu", b);
    CHECK(qmx_matmul_blockw_f32_workspace_size(1, 1, 1, NULL) == QMX_ERR_NULL, "NULL");
    CHECK(qmx_matmul_blockw_f32_workspace_size(0, 1, 1, &b) == QMX_ERR_SIZE, "M 0");
    CHECK(qmx_matmul_blockw_f32_workspace_size(1, 0, 1, &b) == QMX_ERR_SIZE, "N 0");
    CHECK(qmx_matmul_blockw_f32_workspace_size(1, 1, 0, &b) == QMX_ERR_SIZE, "K 0");
    CHECK(qmx_matmul_blockw_f32_workspace_size(1, 1, SIZE_MAX / 4, &b) == QMX_ERR_OVERFLOW,
          "K huge");
}

/* ---- MXFP8 x MXFP8 ---- */
static uint8_t ael[MAXM * MAXK], asc[MAXM * MAXK], bel[MAXN * MAXK], bsc[MAXN * MAXK];
static qmx_mx_config acfg, bcfg;
static qmx_blockw AW, BW;

static void set_mx8(qmx_blockw *w, qmx_mx_config *c, qmx_mx_format f, size_t bs, size_t R,
                    size_t K, uint8_t *el, uint8_t *sc) {
    memset(c, 0, sizeof *c);
    c->format = f; c->rule = QMX_MX_FLOOR; c->block_size = bs;
    c->outer = R; c->axis_len = K; c->inner = 1;
    memset(w, 0, sizeof *w);
    w->kind = QMX_BLOCKW_MX; w->mx = c; w->data = el; w->data_bytes = R * K;
    w->scale_codes = sc; w->n_scales = R * ((K + bs - 1) / bs);
}

/* exact block value RN_f32(sum a b 2^(sa + sb - 254)) when double / int64 can find it: 1 */
static int ref_block(const uint8_t *a, qmx_dtype fa, const uint8_t *b, qmx_dtype fbt, size_t n,
                     int sa, int sb, float *v, double *approx) {
    size_t k;
    int base = 100000, x;
    int64_t S = 0;
    double d = 0.0;
    for (k = 0; k < n; k++) {
        double p = (double)qmx_fp8_to_f32(a[k], fa) * (double)qmx_fp8_to_f32(b[k], fbt);
        d += p;
        if (p != 0.0) { (void)frexp(p, &x); if (x - 8 < base) base = x - 8; }
    }
    *approx = ldexp(d, sa + sb - 254);
    if (base == 100000) { *v = 0.0f; return 1; }
    for (k = 0; k < n; k++) {
        double p = (double)qmx_fp8_to_f32(a[k], fa) * (double)qmx_fp8_to_f32(b[k], fbt);
        double q = ldexp(p, -base);
        if (fabs(q) >= 4503599627370496.0) return 0;   /* 2^52 */
        S += (int64_t)q;
    }
    if (S >= (int64_t)1 << 53 || S <= -((int64_t)1 << 53)) return 0;
    *v = (float)ldexp((double)S, base + sa + sb - 254);
    return 1;
}

static void run_mx8(const char *what, qmx_mx_format fa, qmx_mx_format fbm, size_t bs, size_t M,
                    size_t N, size_t K, long *checked, long *blocks) {
    size_t m, n, i, ldy = N + PADY, nblk = (K + bs - 1) / bs, j;
    qmx_dtype da = fa == QMX_MXFP8_E5M2 ? QMX_FP8_E5M2 : QMX_FP8_E4M3FN;
    qmx_dtype db = fbm == QMX_MXFP8_E5M2 ? QMX_FP8_E5M2 : QMX_FP8_E4M3FN;
    qmx_status st;
    long bad = 0, badpad = 0;
    for (i = 0; i < M * K; i++) A[i] = frand(-3.0f, 3.0f) * (float)(1u << (i % 7));
    fill_w(N, K);
    set_mx8(&AW, &acfg, fa, bs, M, K, ael, asc);
    set_mx8(&BW, &bcfg, fbm, bs, N, K, bel, bsc);
    bcfg.rule = QMX_MX_RCEIL;
    CHECK(qmx_mx_quantize(&acfg, A, M * K, ael, M * K, asc, AW.n_scales) == QMX_OK, "%s A", what);
    CHECK(qmx_mx_quantize(&bcfg, Wf, N * K, bel, N * K, bsc, BW.n_scales) == QMX_OK, "%s B", what);
    for (i = 0; i < M * ldy; i++) Y[i] = qmx_test_bits_f32(SENT);
    st = qmx_matmul_mxfp8_f32(M, N, K, &AW, &BW, Y, ldy);
    CHECK(st == QMX_OK, "%s: status %d", what, (int)st);
    for (m = 0; m < M; m++) {
        for (n = N; n < ldy; n++) if (fb(Y[m * ldy + n]) != SENT) badpad++;
        for (n = 0; n < N; n++) {
            float vb[64], y = Y[m * ldy + n];
            volatile float s = 0.0f;
            double ap[64], tot = 0.0, abt = 0.0;
            int all = 1;
            hash_out(y);
            for (j = 0; j < nblk; j++) {
                size_t k0 = j * bs, len = K - k0 < bs ? K - k0 : bs;
                int ok = ref_block(ael + m * K + k0, da, bel + n * K + k0, db, len,
                                   asc[m * nblk + j], bsc[n * nblk + j], &vb[j], &ap[j]);
                (*blocks)++;
                if (ok) (*checked)++;
                else all = 0;
                tot += ap[j]; abt += fabs(ap[j]);
            }
            if (all) {
                for (j = 0; j < nblk; j++) s = s + vb[j];
                if (fb(y) != fb(s)) bad++;
            } else if (fabs((double)y - tot) > (double)(nblk + 2) * ldexp(1.0, -24) * abt) {
                bad++;
            }
        }
    }
    CHECK(bad == 0, "%s: %ld outputs wrong", what, bad);
    CHECK(badpad == 0, "%s: Y padding written", what);
}

/* one-block (or two-block) hand-made case: expected bits */
static void hand(const char *what, qmx_mx_format fa, qmx_mx_format fbm, size_t K, size_t bs,
                 const uint8_t *a, const uint8_t *b, const uint8_t *sa, const uint8_t *sb,
                 uint32_t want) {
    qmx_status st;
    set_mx8(&AW, &acfg, fa, bs, 1, K, ael, asc);
    set_mx8(&BW, &bcfg, fbm, bs, 1, K, bel, bsc);
    memcpy(ael, a, K); memcpy(bel, b, K);
    memcpy(asc, sa, AW.n_scales); memcpy(bsc, sb, BW.n_scales);
    Y[0] = qmx_test_bits_f32(SENT);
    st = qmx_matmul_mxfp8_f32(1, 1, K, &AW, &BW, Y, 1);
    CHECK(st == QMX_OK && fb(Y[0]) == want, "%s: status %d got %08x want %08x", what, (int)st,
          (unsigned)fb(Y[0]), (unsigned)want);
}

static void test_mxfp8(void) {
    long checked = 0, blocks = 0;
    const qmx_mx_format E4 = QMX_MXFP8_E4M3, E5 = QMX_MXFP8_E5M2;
    QMX_TEST_CASE("mxfp8 x mxfp8 random");
    run_mx8("e4m3 x e4m3", E4, E4, 32, 3, 5, 96, &checked, &blocks);
    run_mx8("e4m3 x e5m2 ragged", E4, E5, 32, 5, 3, 70, &checked, &blocks);
    run_mx8("e5m2 x e4m3", E5, E4, 32, 3, 7, 64, &checked, &blocks);
    run_mx8("e5m2 x e5m2 ragged", E5, E5, 32, 3, 5, 99, &checked, &blocks);
    run_mx8("e4m3 x e4m3 block 16", E4, E4, 16, 1, 5, 48, &checked, &blocks);
    printf("mxfp8 x mxfp8: %ld of %ld random blocks checked bit for bit\n", checked, blocks);
    CHECK(checked * 10 >= blocks * 9, "exactly checked blocks %ld of %ld", checked, blocks);

    QMX_TEST_CASE("mxfp8 x mxfp8 hand-made");
    {   /* 1*1 2^24 + 2 * 2^-9 2^-16 2^24 = 2^24 + 1: a tie, to even 2^24; three: 2^24 + 2 */
        const uint8_t a[3] = {0x38, 0x01, 0x01}, b[3] = {0x3C, 0x01, 0x01};
        const uint8_t a4[4] = {0x38, 0x01, 0x01, 0x01}, b4[4] = {0x3C, 0x01, 0x01, 0x01};
        const uint8_t sa[1] = {151}, sb[1] = {127};
        hand("tie to even", E4, E5, 3, 32, a, b, sa, sb, 0x4B800000u);
        hand("above the tie", E4, E5, 4, 32, a4, b4, sa, sb, 0x4B800001u);
    }
    {   /* 1.5 * 1.5 2^-148 = 4.5 2^-149: a subnormal tie -> 4; 1.25 * 2 -> 5 exactly */
        const uint8_t a[1] = {0x3C}, b[1] = {0x3C}, c[1] = {0x3A}, d[1] = {0x40};
        const uint8_t s53[1] = {53}, s1[1] = {1};
        hand("subnormal tie", E4, E4, 1, 32, a, b, s53, s53, 0x00000004u);
        hand("subnormal exact", E4, E4, 1, 32, c, d, s53, s53, 0x00000005u);
        hand("underflow to +0", E4, E4, 1, 32, a, b, s1, s1, 0x00000000u);
    }
    {   /* 2^254 overflows to Inf, with the sign of the product */
        const uint8_t one[1] = {0x38}, mone[1] = {0xB8}, s254[1] = {254};
        hand("overflow", E4, E4, 1, 32, one, one, s254, s254, 0x7F800000u);
        hand("overflow negative", E4, E4, 1, 32, mone, one, s254, s254, 0xFF800000u);
    }
    {   /* 57344^2 + 2^-32 - 57344^2 = 2^-32 exactly (a float sum in this order gives 0) */
        const uint8_t a[3] = {0x7B, 0x01, 0x7B}, b[3] = {0x7B, 0x01, 0xFB};
        const uint8_t s[1] = {127};
        hand("cancellation", E5, E5, 3, 32, a, b, s, s, 0x2F800000u);
    }
    {   /* NaN and Inf: scale 0xFF, NaN element, Inf x 0, Inf x 1, +Inf - Inf in a block and
         * across blocks (block 1) */
        const uint8_t one4[2] = {0x38, 0x38}, one5[2] = {0x3C, 0x3C}, nan4[2] = {0x38, 0x7F};
        const uint8_t inf5[2] = {0x3C, 0x7C}, zero4[2] = {0x38, 0x00}, pm5[2] = {0x7C, 0xFC};
        const uint8_t s[2] = {127, 127}, sff[2] = {127, 0xFF};
        hand("scale 0xFF", E4, E5, 2, 1, one4, one5, s, sff, 0x7FC00000u);
        hand("NaN element", E4, E5, 2, 32, nan4, one5, s, s, 0x7FC00000u);
        hand("Inf x 0", E4, E5, 2, 32, zero4, inf5, s, s, 0x7FC00000u);
        hand("Inf x 1", E4, E5, 2, 32, one4, inf5, s, s, 0x7F800000u);
        hand("+Inf - Inf in a block", E4, E5, 2, 32, one4, pm5, s, s, 0x7FC00000u);
        hand("+Inf - Inf across blocks", E4, E5, 2, 1, one4, pm5, s, s, 0x7FC00000u);
        hand("E5M2 both Inf", E5, E5, 2, 1, inf5, inf5, s, s, 0x7F800000u);
    }

    QMX_TEST_CASE("mxfp8 x mxfp8 errors");
    {
        size_t i;
        qmx_blockw a2, b2;
        qmx_mx_config c2;
        set_mx8(&AW, &acfg, E4, 32, 3, 64, ael, asc);
        set_mx8(&BW, &bcfg, E5, 32, 5, 64, bel, bsc);
        memset(ael, 0x38, sizeof ael); memset(bel, 0x3C, sizeof bel);
        memset(asc, 127, sizeof asc); memset(bsc, 127, sizeof bsc);
        CHECK(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &BW, Y, 5) == QMX_OK, "valid (control)");
        CHECK(Y[0] == 64.0f, "control value %g", (double)Y[0]);
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, NULL, &BW, Y, 5), QMX_ERR_NULL, "a NULL");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, NULL, Y, 5), QMX_ERR_NULL, "b NULL");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &BW, NULL, 5), QMX_ERR_NULL, "Y NULL");
        ERRCASE(qmx_matmul_mxfp8_f32(0, 5, 64, &AW, &BW, Y, 5), QMX_ERR_SIZE, "M 0");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 0, &AW, &BW, Y, 5), QMX_ERR_SIZE, "K 0");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &BW, Y, 4), QMX_ERR_SHAPE, "ldy < N");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &BW, Y, SIZE_MAX / 4), QMX_ERR_OVERFLOW,
                "Y bytes");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 4, 64, &AW, &BW, Y, 5), QMX_ERR_SHAPE, "b rows != N");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 32, &AW, &BW, Y, 5), QMX_ERR_SHAPE, "K != view");
        c2 = bcfg; c2.block_size = 16; b2 = BW; b2.mx = &c2; b2.n_scales = 5 * 4;
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &b2, Y, 5), QMX_ERR_SHAPE, "blocks differ");
        c2 = bcfg; c2.format = QMX_MXFP6_E2M3; b2 = BW; b2.mx = &c2;
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &b2, Y, 5), QMX_ERR_UNSUPPORTED, "b mxfp6");
        c2 = acfg; c2.format = QMX_MXFP4; a2 = AW; a2.mx = &c2;
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &a2, &BW, Y, 5), QMX_ERR_UNSUPPORTED, "a mxfp4");
        b2 = BW; b2.n_scales = 9;
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &b2, Y, 5), QMX_ERR_BUFFER_TOO_SMALL,
                "b scales short");
        a2 = AW; a2.data_bytes = 3 * 64 - 1;
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &a2, &BW, Y, 5), QMX_ERR_BUFFER_TOO_SMALL,
                "a data short");
        fill_w(5, 64);
        CHECK(mk_qc(QMX_INT8, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 5, 64), "qc");
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &W, Y, 5), QMX_ERR_UNSUPPORTED, "b qconfig");
        b2 = BW; b2.kind = (qmx_blockw_kind)0;
        ERRCASE(qmx_matmul_mxfp8_f32(3, 5, 64, &AW, &b2, Y, 5), QMX_ERR_ARG, "b kind 0");
    }
}

/* ---- qmx_matmul_blockw_dyn_i8: int8 activations quantized on the fly x block-scaled weights.
 * The reference below is written from the documented contract only (qmx_kernels.h, "INT8
 * ACTIVATIONS ON THE FLY"), not from the kernel: activations quantized per block by the TFLite
 * formula (absmax / 127, RNE of x / s, [-127, 127]); weight elements decoded to their VALUE by
 * qmx.h's public scalar codecs (themselves checked against the CUDA / ml_dtypes tables in
 * test_lowfloat.c / test_fp8.c), ggml's and QLoRA's tables written out here, and integers
 * unpacked here; each element times 2^27 is an integer (checked), so a segment's exact sum is
 * an int64 S and its float value RN(S 2^-27), rounded here in integers; block scales decoded
 * here from the codes; segments found by walking k and closing one at every weight-block or
 * activation-block end; then p * sw, p * sx, y + p, each a volatile float. ---- */
#define DM 70   /* > 64: two panels of rows */
#define DSENT SENT
static float DX[DM * (MAXK + PADA)], DY[DM * (MAXN + PADY)], DYsave[DM * (MAXN + PADY)];
static float DYref[DM * MAXN], Dsx[DM * MAXK];
static double Dexact[DM * MAXN], Dabs[DM * MAXN];
static int Dnseg[DM * MAXN];
static int8_t Dq[DM * MAXK];
static unsigned char dws[70000], dwssave[70000];
static uint32_t dyn_hash = 2166136261u;
static long dyn_not_integral;

static const float t_nf4[16] = {   /* QLoRA Appendix E (the float32 values) */
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
static const int t_ggml_kv[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static void dyn_hash_out(float y) {
    uint32_t u = fb(y), i;
    for (i = 0; i < 4; i++) { dyn_hash ^= (u >> (8 * i)) & 0xFFu; dyn_hash *= 16777619u; }
}
/* 2^e exactly (a decimal float constant such as 3e30f is evaluated in wider precision where
 * FLT_EVAL_METHOD is 1 or 2: the test data would differ by target) */
static float p2f(int e) { return (float)ldexp(1.0, e); }
/* RNE of a float t (|t| < 2^31) */
static int32_t t_rne(float t) {
    double d = (double)t, f = floor(d), r = d - f;
    int32_t i = (int32_t)f;
    if (r > 0.5 || (r == 0.5 && (i & 1))) i++;
    return i;
}
/* the TFLite int8 row quantization of one activation block */
static void t_quant(const float *x, size_t len, float *s, int8_t *q) {
    size_t k;
    float am = 0.0f;
    for (k = 0; k < len; k++) if (fabsf(x[k]) > am) am = fabsf(x[k]);
    if (am == 0.0f) *s = 1.0f;
    else { volatile float t = am / 127.0f; *s = t; }
    for (k = 0; k < len; k++) {
        volatile float t = x[k] / *s;
        int32_t r = t_rne(t);
        q[k] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
    }
}
/* RN_f32(S 2^-27), nearest-even, in integers (the result is 0 or >= 2^-27: normal) */
static float t_rn27(int64_t S) {
    uint64_t a = S < 0 ? 0u - (uint64_t)S : (uint64_t)S, q, rem, half;
    int L = 0, d;
    float r;
    for (q = a; q; q >>= 1) L++;
    if (L <= 24) {
        r = (float)ldexp((double)a, -27);
    } else {
        d = L - 24;
        q = a >> d; rem = a & (((uint64_t)1 << d) - 1u); half = (uint64_t)1 << (d - 1);
        if (rem > half || (rem == half && (q & 1u))) q++;
        r = (float)ldexp((double)q, d - 27);
    }
    return S < 0 ? -r : r;
}
/* the weight block length along K and the scale index of element (n, k) */
static size_t t_wblock(size_t K) {
    size_t bs;
    if (W.kind == QMX_BLOCKW_MX)
        bs = mcfg.block_size ? mcfg.block_size : (mcfg.format == QMX_NVFP4 ? 16u : 32u);
    else
        bs = qcfg.granularity == QMX_PER_BLOCK ? qcfg.block_size : K;
    return bs < K ? bs : K;
}
static size_t t_sindex(size_t n, size_t k, size_t K) {
    size_t bs = t_wblock(K), nb = (K + bs - 1) / bs;
    if (W.kind == QMX_BLOCKW_QCONFIG && qcfg.granularity != QMX_PER_BLOCK)
        return qcfg.granularity == QMX_PER_CHANNEL ? n : 0;
    return n * nb + k / bs;
}
/* the value of element (n, k) without its block scale (may be NaN / Inf) */
static double t_wvalue(size_t n, size_t k, size_t K) {
    const uint8_t *p = (const uint8_t *)W.data;
    size_t e = n * K + k;
    qmx_dtype d;
    double v;
    if (W.kind == QMX_BLOCKW_MX) {
        switch (mcfg.format) {
        case QMX_MXFP4: case QMX_NVFP4: {
            unsigned c = (p[e / 2] >> (4 * (e & 1))) & 15u;
            /* select a float, convert once: GCC 12 for Cortex-M55 turns a choice between two
               double conversions into a conditional vcvt.f64 its assembler refuses (the ggml
               values are small integers, exact in float) */
            float f = mcfg.rule == QMX_MX_GGML ? (float)t_ggml_kv[c] : qmx_fp4_to_f32((uint8_t)c);
            return (double)f;
        }
        case QMX_MXFP6_E2M3: return qmx_fp6_to_f32(p[e], QMX_FP6_E2M3);
        case QMX_MXFP6_E3M2: return qmx_fp6_to_f32(p[e], QMX_FP6_E3M2);
        case QMX_MXFP8_E4M3: return qmx_fp8_to_f32(p[e], QMX_FP8_E4M3FN);
        case QMX_MXFP8_E5M2: return qmx_fp8_to_f32(p[e], QMX_FP8_E5M2);
        default: return (double)(p[e] >= 128 ? (int)p[e] - 256 : (int)p[e]) / 64.0;   /* MXINT8 */
        }
    }
    d = qcfg.dtype ? qcfg.dtype : QMX_INT8;
    if (qmx_dtype_is_fp8(d)) return qmx_fp8_to_f32(p[e], d);
    switch (d) {
    case QMX_NF4: return t_nf4[(p[e / 2] >> (4 * (e & 1))) & 15u];
    case QMX_INT2: case QMX_UINT2: {
        int c = (p[e / 4] >> (2 * (e & 3))) & 3;
        v = d == QMX_INT2 && c >= 2 ? c - 4 : c;
        break;
    }
    case QMX_INT4: case QMX_UINT4: {
        int c = (p[e / 2] >> (4 * (e & 1))) & 15;
        v = d == QMX_INT4 && c >= 8 ? c - 16 : c;
        break;
    }
    case QMX_UINT8: v = p[e]; break;
    case QMX_INT16: { int16_t t; memcpy(&t, p + 2 * e, 2); v = t; break; }
    case QMX_UINT16: { uint16_t t; memcpy(&t, p + 2 * e, 2); v = t; break; }
    default: v = p[e] >= 128 ? (int)p[e] - 256 : (int)p[e]; break;   /* int8, int3 .. int7 */
    }
    if (W.zero_points && (qcfg.asymmetric || qcfg.recipe == QMX_RECIPE_TORCH ||
                          qcfg.recipe == QMX_RECIPE_ONNX))
        v -= W.zero_points[t_sindex(n, k, K)];
    return v;
}
/* the block scale at scale index si, from the documented decoding of its code */
static float t_scale(size_t si) {
    unsigned c;
    if (W.kind == QMX_BLOCKW_QCONFIG) return W.scales[si];
    c = W.scale_codes[si];
    if (mcfg.rule == QMX_MX_GGML) {
        if (mcfg.format == QMX_NVFP4) {   /* UE4M3 / 2, bit 7 ignored, 0x00 and 0x7F -> 0 */
            unsigned ex = (c >> 3) & 15u, m = c & 7u;
            if (c == 0 || c == 0x7F) return 0.0f;
            return ex ? (float)ldexp(8.0 + m, (int)ex - 11) : (float)ldexp((double)m, -10);
        }
        return (float)ldexp(1.0, (int)c - 128);
    }
    if (mcfg.format == QMX_NVFP4) {
        float s = qmx_fp8_to_f32((uint8_t)c, QMX_FP8_E4M3FN);
        if (mcfg.tensor_scale != 0.0f && s == s) {
            volatile float t = mcfg.tensor_scale * s;
            s = t;
        }
        return s;
    }
    if (mcfg.rule == QMX_MX_QWIX)
        return c == 0 ? 0.0f : c == 255 ? qmx_test_bits_f32(0x7F800000u)
                                        : (float)ldexp(1.0, (int)c - 127);
    return c == 255 ? qmx_test_bits_f32(0x7FC00000u) : (float)ldexp(1.0, (int)c - 127);
}

/* The documented order for Y [M][N] (DYref), with the double data of the tolerance check. */
static void t_model(size_t M, size_t N, size_t K, size_t ldx, size_t act_block) {
    size_t ab = act_block && act_block < K ? act_block : K, wbs = t_wblock(K), m, n, k, j;
    for (m = 0; m < M; m++)
        for (j = 0; j * ab < K; j++) {
            size_t k0 = j * ab, len = K - k0 < ab ? K - k0 : ab;
            t_quant(DX + m * ldx + k0, len, &Dsx[m * MAXK + j], Dq + m * MAXK + k0);
        }
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            volatile float y = 0.0f;
            int64_t S = 0;
            double nfsum = 0.0, ex = 0.0, ab_sum = 0.0;
            int nf = 0, nseg = 0;
            for (k = 0; k < K; k++) {
                double v = t_wvalue(n, k, K);
                int q = Dq[m * MAXK + k];
                if (v != v || v - v != 0.0) {
                    nf = 1;
                } else {
                    double e27 = ldexp(v, 27);
                    if (e27 != floor(e27)) dyn_not_integral++;
                    S += (int64_t)q * (int64_t)e27;
                }
                nfsum += (double)q * v;
                if (k + 1 == K || (k + 1) % wbs == 0 || (k + 1) % ab == 0) {   /* segment end */
                    float sw = t_scale(t_sindex(n, k, K)), s = Dsx[m * MAXK + k / ab];
                    volatile float p = nf ? (float)nfsum : t_rn27(S);
                    double xv = ldexp((double)S, -27) * (double)sw * (double)s;
                    p = p * sw;
                    p = p * s;
                    y = y + p;
                    ex += xv; ab_sum += fabs(xv); nseg++;
                    S = 0; nfsum = 0.0; nf = 0;
                }
            }
            DYref[m * N + n] = y != y ? qmx_test_bits_f32(0x7FC00000u) : y;
            Dexact[m * N + n] = ex; Dabs[m * N + n] = ab_sum; Dnseg[m * N + n] = nseg;
        }
}

/* X [M][K] (row stride ldx; the padding holds NaN): per row by mode: random of varied
 * magnitude, all zero (+0 / -0), ties (every block's absmax 127 so sx = 1 and x / sx = x, with
 * x = i + 1/2 and -0), random with zeros and -0, huge, tiny; xmode 1: x[1][3] = 0 (an Inf
 * weight there meets q = 0) */
static void fill_x(size_t M, size_t K, size_t ldx, size_t act_block, int xmode) {
    size_t ab = act_block && act_block < K ? act_block : K, m, k;
    for (m = 0; m < M; m++) {
        float *x = DX + m * ldx;
        int mode = (int)(m % 7);
        for (k = K; k < ldx; k++) x[k] = qmx_test_bits_f32(0x7FC01234u);
        for (k = 0; k < K; k++) {
            float v;
            switch (mode) {
            case 1: v = (k & 1) ? -0.0f : 0.0f; break;
            case 2:
                if (k % ab == 0) v = (k / ab) & 1 ? -127.0f : 127.0f;
                else if (k % 5 == 4) v = -0.0f;
                else v = (float)((int)(k % 13) - 6) + ((k & 2) ? 0.5f : -0.5f);
                break;
            case 3:
                v = qmx_test_rand() % 4 == 0 ? ((k & 1) ? -0.0f : 0.0f) : frand(-3.0f, 3.0f);
                break;
            case 4: v = frand(-1.0f, 1.0f) * p2f(100); break;
            case 5: v = frand(-1.0f, 1.0f) * p2f(-100); break;
            default: v = frand(-1.5f, 1.5f) * (float)(1u << (m % 9)) * 0.0625f; break;
            }
            x[k] = v;
        }
    }
    if (xmode == 1 && M > 1 && K > 3) DX[1 * ldx + 3] = 0.0f;
}

/* Runs the kernel (padded ldx / ldy, workspace at an odd offset) against t_model. */
static void dyn_run(const char *what, size_t M, size_t N, size_t K, size_t act_block, int xmode) {
    size_t ldx = K + PADA, ldy = N + PADY, need = 0, i, m, n;
    size_t off = 1 + (size_t)(qmx_test_rand() % 63);
    qmx_blockw_dyn_opts o;
    qmx_status st;
    long bad_bits = 0, bad_tol = 0, bad_pad = 0;
    o.act_block = act_block;
    fill_x(M, K, ldx, act_block, xmode);
    t_model(M, N, K, ldx, act_block);
    for (i = 0; i < M * ldy; i++) DY[i] = qmx_test_bits_f32(DSENT);
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, &o, &need) == QMX_OK, "%s query", what);
    CHECK(need + off <= sizeof dws, "%s workspace %zu", what, need);
    if (need + off > sizeof dws) return;
    memset(dws, 0xA5, sizeof dws);
    st = qmx_matmul_blockw_dyn_i8(M, N, K, DX, ldx, &W, act_block || (M & 1) ? &o : NULL, DY,
                                  ldy, dws + off, need);
    CHECK(st == QMX_OK, "%s (M %zu, act_block %zu): status %d", what, M, act_block, (int)st);
    for (i = 0; i < off; i++) if (dws[i] != 0xA5) bad_pad++;
    for (i = off + need; i < sizeof dws; i++) if (dws[i] != 0xA5) bad_pad++;
    for (m = 0; m < M; m++) {
        for (n = N; n < ldy; n++) if (fb(DY[m * ldy + n]) != DSENT) bad_pad++;
        for (n = 0; n < N; n++) {
            float y = DY[m * ldy + n], r = DYref[m * N + n];
            double ex = Dexact[m * N + n];
            dyn_hash_out(y);
            if (fb(y) != fb(r) && bad_bits++ < 3)
                printf("  %s (M %zu ab %zu) m %zu n %zu got %08x want %08x\n", what, M, act_block,
                       m, n, (unsigned)fb(y), (unsigned)fb(r));
            if (y != y || y - y != 0.0f || ex != ex || ex - ex != 0.0) continue;
            if (fabs((double)y - ex) > (double)(Dnseg[m * N + n] + 3) * ldexp(1.0, -24) *
                                           Dabs[m * N + n] + Dnseg[m * N + n] * ldexp(1.0, -146))
                bad_tol++;
        }
    }
    CHECK(bad_bits == 0, "%s (M %zu, act_block %zu): %ld outputs differ from the documented order",
          what, M, act_block, bad_bits);
    CHECK(bad_tol == 0, "%s (M %zu, act_block %zu): %ld outputs outside the tolerance", what, M,
          act_block, bad_tol);
    CHECK(bad_pad == 0, "%s: %ld padding / workspace sentinels written", what, bad_pad);
}

/* the activation modes on the current weights: per row and per block (32, odd 7, 1, >= K),
 * M = 1 .. 70 (two panels) */
static void dyn_sweep(const char *what, size_t N, size_t K, int xmode) {
    dyn_run(what, 1, N, K, 0, xmode);
    dyn_run(what, 7, N, K, 32, xmode);
    dyn_run(what, 9, N, K, 7, xmode);
    dyn_run(what, 3, N, K, K + 5, xmode);
    dyn_run(what, DM, N, K, 0, xmode);
    dyn_run(what, DM - 3, N, K, 1, xmode);
}

/* raw element codes (every code of the format but the non-finite ones, which `plant` adds)
 * and scale codes (E8M0 mostly 2^-17 .. 2^13; extremes 0, 1, 254 when `extreme`) */
static void raw_codes(int extreme) {
    size_t i;
    uint8_t *d = wel;
    for (i = 0; i < W.data_bytes; i++) {
        uint8_t c = (uint8_t)qmx_test_rand();
        if (W.kind == QMX_BLOCKW_QCONFIG && qmx_dtype_bits(qcfg.dtype) == 16) {
            if (i & 1) continue;   /* 16-bit values (native-endian storage: the same values) */
            {
                uint16_t u = (uint16_t)(qmx_test_rand() >> 7);
                memcpy(d + i, &u, 2);
            }
            continue;
        }
        if (W.kind == QMX_BLOCKW_MX && mcfg.format == QMX_MXFP8_E4M3 && (c & 0x7F) == 0x7F) c ^= 1;
        if (W.kind == QMX_BLOCKW_MX && mcfg.format == QMX_MXFP8_E5M2 && ((c >> 2) & 31) == 31)
            c &= 0xBF;
        if (W.kind == QMX_BLOCKW_QCONFIG) {
            qmx_dtype t = qcfg.dtype;
            if ((t == QMX_FP8_E4M3FNUZ || t == QMX_FP8_E5M2FNUZ) && c == 0x80) c = 0;
            if (t == QMX_FP8_E4M3FN && (c & 0x7F) == 0x7F) c ^= 1;
            if (t == QMX_FP8_E5M2 && ((c >> 2) & 31) == 31) c &= 0xBF;
        }
        d[i] = c;
    }
    if (W.kind == QMX_BLOCKW_QCONFIG) {
        for (i = 0; i < W.n_scales; i++) {
            wscf[i] = frand(0.25f, 2.0f) * (float)(1u << (i % 5)) * 0.125f;
            if (W.zero_points) {
                int32_t lo = 0, hi = 0;
                qmx_dtype_int_range(qcfg.dtype, &lo, &hi);
                wzp[i] = lo + (int32_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1));
            }
        }
        return;
    }
    for (i = 0; i < W.n_scales; i++) {
        uint8_t c = (uint8_t)(110 + qmx_test_rand() % 31);
        if (mcfg.format == QMX_NVFP4 && mcfg.rule != QMX_MX_GGML) {   /* any E4M3 but NaN */
            c = (uint8_t)qmx_test_rand();
            if ((c & 0x7F) == 0x7F) c ^= 1;
        } else if (mcfg.format == QMX_NVFP4) {
            c = (uint8_t)qmx_test_rand();
        }
        if (extreme && mcfg.format != QMX_NVFP4 && i % 3 == 0)
            c = (uint8_t)(i % 2 ? 254 : (i / 3) % 2 ? 1 : 0);
        wsc8[i] = c;
    }
}
/* non-finite weights: NaN / Inf scale codes and elements where the format has them */
static void plant(size_t N, size_t K) {
    size_t nb = (K + t_wblock(K) - 1) / t_wblock(K);
    uint8_t *d = wel;
    if (W.kind == QMX_BLOCKW_MX) {
        if (mcfg.rule == QMX_MX_QWIX && mcfg.format != QMX_NVFP4) {
            wsc8[0] = 0;                        /* row 0 block 0: scale +0 */
            if (N > 1) wsc8[nb] = 0xFF;         /* row 1 block 0: scale +Inf */
        } else if (mcfg.format == QMX_NVFP4 && mcfg.rule != QMX_MX_GGML) {
            wsc8[0] = 0x7F;                     /* NaN */
            if (nb > 1) wsc8[1] = 0x80;         /* -0 */
            if (N > 1) wsc8[nb] = 0xB8;         /* -1 */
        } else if (mcfg.rule != QMX_MX_GGML) {
            if (nb > 1) wsc8[1] = 0xFF;         /* row 0 block 1: NaN */
            else wsc8[0] = 0xFF;
        }
        if (mcfg.format == QMX_MXFP8_E4M3 && N > 2) {
            d[1 * K + 2] = 0x7F;
            d[2 * K + 9 % K] = 0xFF;
        }
        if (mcfg.format == QMX_MXFP8_E5M2 && N > 3) {
            d[1 * K + 3] = 0x7C;                /* +Inf; x[1][3] = 0 gives NaN at m = 1 */
            d[2 * K + 5 % K] = 0xFC; d[2 * K + 6 % K] = 0x7C;   /* -Inf and +Inf */
            d[3 * K] = 0x7E;                    /* NaN */
        }
    } else if (N > 2) {
        qmx_dtype t = qcfg.dtype;
        if (t == QMX_FP8_E4M3FNUZ || t == QMX_FP8_E5M2FNUZ) d[1 * K + 4] = 0x80;
        if (t == QMX_FP8_E4M3FN) d[2 * K + 1] = 0xFF;
        if (t == QMX_FP8_E5M2) { d[1 * K + 3] = 0x7C; d[2 * K] = 0xFD; }
    }
}

static void dyn_mx(const char *what, qmx_mx_format f, qmx_mx_rule r, size_t bs, float ts,
                   size_t N, size_t K) {
    char name[96];
    fill_w(N, K);
    if (!mk_mx(f, r, bs, ts, N, K)) { CHECK(0, "%s: making the weights", what); return; }
    snprintf(name, sizeof name, "%s quantized", what);
    dyn_sweep(name, N, K, 0);
    raw_codes(0);
    snprintf(name, sizeof name, "%s raw codes", what);
    dyn_sweep(name, N, K, 0);
    raw_codes(1);
    plant(N, K);
    snprintf(name, sizeof name, "%s extreme / non-finite", what);
    dyn_run(name, 6, N, K, 0, 1);
    dyn_run(name, 5, N, K, 9, 1);
}
static void dyn_qc(const char *what, qmx_dtype d, qmx_granularity g, size_t bs, int asym,
                   qmx_recipe rc, size_t N, size_t K) {
    char name[96];
    fill_w(N, K);
    if (!mk_qc(d, g, bs, asym, rc, N, K)) { CHECK(0, "%s: making the weights", what); return; }
    snprintf(name, sizeof name, "%s quantized", what);
    dyn_sweep(name, N, K, 0);
    raw_codes(0);
    plant(N, K);
    snprintf(name, sizeof name, "%s raw codes", what);
    dyn_sweep(name, N, K, 1);
}

static void test_dyn_formats(void) {
    size_t i;
    QMX_TEST_CASE("blockw dyn_i8: the nf4 table");
    CHECK(mk_qc(QMX_NF4, QMX_PER_TENSOR, 0, 0, QMX_RECIPE_AQT, 1, 2), "nf4 config");
    for (i = 0; i < 16; i++) {   /* the table written here is qmx.h's (scale 1) */
        uint8_t c = (uint8_t)(i | (i << 4));
        float s = 1.0f, y[2];
        CHECK(qmx_dequantize(&qcfg, &c, 1, 2, &s, 1, NULL, y) == QMX_OK &&
              fb(y[0]) == fb(t_nf4[i]) && fb(y[1]) == fb(t_nf4[i]), "nf4 code %zu", i);
    }
    QMX_TEST_CASE("blockw dyn_i8 MX / NVFP4 formats");
    dyn_mx("mxfp4 floor", QMX_MXFP4, QMX_MX_FLOOR, 0, 0.0f, 5, 96);
    dyn_mx("mxfp4 floor ragged odd K", QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, 7, 99);
    dyn_mx("mxfp4 ggml", QMX_MXFP4, QMX_MX_GGML, 0, 0.0f, 3, 64);
    dyn_mx("mxfp4 ggml ragged", QMX_MXFP4, QMX_MX_GGML, 0, 0.0f, 4, 77);
    dyn_mx("mxfp4 qwix", QMX_MXFP4, QMX_MX_QWIX, 0, 0.0f, 5, 64);
    dyn_mx("nvfp4 torchao", QMX_NVFP4, QMX_MX_FLOOR, 0, 0.0f, 5, 64);
    dyn_mx("nvfp4 two-level", QMX_NVFP4, QMX_MX_FLOOR, 0, 2.0f / 2688.0f, 5, 80);
    dyn_mx("nvfp4 ragged odd K", QMX_NVFP4, QMX_MX_FLOOR, 16, 0.0f, 5, 41);
    dyn_mx("nvfp4 ggml", QMX_NVFP4, QMX_MX_GGML, 0, 0.0f, 5, 64);
    dyn_mx("nvfp4 qwix", QMX_NVFP4, QMX_MX_QWIX, 0, 0.0f, 3, 48);
    dyn_mx("mxfp8 e4m3 floor", QMX_MXFP8_E4M3, QMX_MX_FLOOR, 32, 0.0f, 5, 96);
    dyn_mx("mxfp8 e4m3 rceil ragged", QMX_MXFP8_E4M3, QMX_MX_RCEIL, 32, 0.0f, 4, 100);
    dyn_mx("mxfp8 e4m3 qwix 16", QMX_MXFP8_E4M3, QMX_MX_QWIX, 16, 0.0f, 5, 48);
    dyn_mx("mxfp8 e5m2 ceil", QMX_MXFP8_E5M2, QMX_MX_CEIL, 32, 0.0f, 5, 64);
    dyn_mx("mxfp8 e5m2 block 24 ragged", QMX_MXFP8_E5M2, QMX_MX_FLOOR, 24, 0.0f, 6, 61);
    dyn_mx("mxfp6 e2m3 even", QMX_MXFP6_E2M3, QMX_MX_EVEN, 32, 0.0f, 5, 64);
    dyn_mx("mxfp6 e3m2 floor ragged", QMX_MXFP6_E3M2, QMX_MX_FLOOR, 32, 0.0f, 5, 70);
    dyn_mx("mxfp6 e2m3 microxcaling", QMX_MXFP6_E2M3, QMX_MX_MICROXCALING, 32, 0.0f, 3, 64);
    dyn_mx("mxint8 microxcaling", QMX_MXINT8, QMX_MX_MICROXCALING, 32, 0.0f, 5, 96);
    dyn_mx("mxint8 microxcaling ragged", QMX_MXINT8, QMX_MX_MICROXCALING, 32, 0.0f, 4, 45);
    dyn_mx("mxfp4 one row one block", QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, 1, 32);
    dyn_mx("mxfp8 e4m3 K 1", QMX_MXFP8_E4M3, QMX_MX_FLOOR, 32, 0.0f, 5, 1);
    dyn_mx("mxfp4 N 12 K 200", QMX_MXFP4, QMX_MX_FLOOR, 0, 0.0f, MAXN, MAXK);
    QMX_TEST_CASE("blockw dyn_i8 qconfig formats");
    dyn_qc("nf4 block 32", QMX_NF4, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 5, 96);
    dyn_qc("nf4 ragged odd K", QMX_NF4, QMX_PER_BLOCK, 8, 0, QMX_RECIPE_QWIX, 7, 33);
    dyn_qc("nf4 per channel odd K", QMX_NF4, QMX_PER_CHANNEL, 0, 0, QMX_RECIPE_AQT, 5, 45);
    dyn_qc("int2 block 16", QMX_INT2, QMX_PER_BLOCK, 16, 0, QMX_RECIPE_AQT, 5, 64);
    dyn_qc("int2 ragged K 35", QMX_INT2, QMX_PER_BLOCK, 8, 0, QMX_RECIPE_QWIX, 7, 35);
    dyn_qc("uint2 zero points K 37", QMX_UINT2, QMX_PER_BLOCK, 10, 1, QMX_RECIPE_QWIX, 5, 37);
    dyn_qc("int4 per channel K 33", QMX_INT4, QMX_PER_CHANNEL, 0, 0, QMX_RECIPE_AQT, 5, 33);
    dyn_qc("uint4 zero points", QMX_UINT4, QMX_PER_BLOCK, 16, 1, QMX_RECIPE_TFLITE, 5, 50);
    dyn_qc("int3 block 8", QMX_INT3, QMX_PER_BLOCK, 8, 0, QMX_RECIPE_QWIX, 5, 40);
    dyn_qc("int5 block 32", QMX_INT5, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 4, 70);
    dyn_qc("int6 per channel", QMX_INT6, QMX_PER_CHANNEL, 0, 0, QMX_RECIPE_AQT, 4, 50);
    dyn_qc("int7 block 20", QMX_INT7, QMX_PER_BLOCK, 20, 0, QMX_RECIPE_QWIX, 4, 61);
    dyn_qc("int8 per tensor", QMX_INT8, QMX_PER_TENSOR, 0, 0, QMX_RECIPE_AQT, 5, 40);
    dyn_qc("int8 block 32", QMX_INT8, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 5, 200);
    dyn_qc("uint8 per channel zp", QMX_UINT8, QMX_PER_CHANNEL, 0, 1, QMX_RECIPE_QWIX, 5, 40);
    dyn_qc("int16 block 24", QMX_INT16, QMX_PER_BLOCK, 24, 0, QMX_RECIPE_AQT, 5, 60);
    dyn_qc("uint16 zero points", QMX_UINT16, QMX_PER_BLOCK, 32, 1, QMX_RECIPE_QWIX, 3, 64);
    dyn_qc("fp8 e4m3fn block 32", QMX_FP8_E4M3FN, QMX_PER_BLOCK, 32, 0, QMX_RECIPE_AQT, 5, 64);
    dyn_qc("fp8 e5m2 per channel", QMX_FP8_E5M2, QMX_PER_CHANNEL, 0, 0, QMX_RECIPE_AQT, 5, 50);
    dyn_qc("fp8 e4m3fnuz block 16", QMX_FP8_E4M3FNUZ, QMX_PER_BLOCK, 16, 0, QMX_RECIPE_AQT, 4, 40);
    dyn_qc("fp8 e5m2fnuz per tensor", QMX_FP8_E5M2FNUZ, QMX_PER_TENSOR, 0, 0, QMX_RECIPE_AQT, 4,
           40);
    CHECK(dyn_not_integral == 0, "%ld weight elements are not multiples of 2^-27",
          dyn_not_integral);
}

/* Hand-made values: known bits, independent of any reference code. */
static void dyn_hand(const char *what, size_t K, const float *x, size_t act_block,
                     uint32_t want) {
    qmx_blockw_dyn_opts o;
    size_t need = 0;
    qmx_status st;
    o.act_block = act_block;
    memcpy(DX, x, K * sizeof *x);
    DY[0] = qmx_test_bits_f32(DSENT);
    qmx_matmul_blockw_dyn_i8_workspace_size(1, 1, K, &o, &need);
    st = qmx_matmul_blockw_dyn_i8(1, 1, K, DX, K, &W, &o, DY, 1, dws, need);
    CHECK(st == QMX_OK && fb(DY[0]) == want, "%s: status %d got %08x (%g) want %08x", what,
          (int)st, (unsigned)fb(DY[0]), (double)DY[0], (unsigned)want);
}
static void test_dyn_hand(void) {
    /* MXFP4 FLOOR [1][4], block 32: elements 6, -0.5, 1, 0 (codes 7, 9, 2, 0), scale 2^0 */
    static const float x1[4] = {127.0f, 2.5f, -3.5f, 64.0f};        /* sx 1: q 127 2 -4 64 */
    static const float xz[4] = {-0.0f, 0.0f, -0.0f, 0.0f};
    static const float xt[4] = {-2.5f, 0.5f, -127.0f, 1.5f};
    QMX_TEST_CASE("blockw dyn_i8 hand-made");
    fill_w(1, 4);
    CHECK(mk_mx(QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, 1, 4), "weights");
    wel[0] = 0x97; wel[1] = 0x02; wsc8[0] = 127;
    /* 127*6 + 2*(-0.5) + (-4)*1 + 64*0 = 757 (ties 2.5 -> 2, -3.5 -> -4) */
    dyn_hand("ties to even", 4, x1, 0, fb(757.0f));
    dyn_hand("all-zero row (-0): +0", 4, xz, 0, 0x00000000u);
    /* -2*6 + 0*(-0.5) + (-127)*1 + 2*0 = -139 */
    dyn_hand("negative ties", 4, xt, 0, fb(-139.0f));
    /* per block of 2: [127, 2.5] sx 1 -> 762 - 1; [-3.5, 64] sx 64/127: q = RNE(-3.5 * 127
     * / 64) = -7, 127: -7 * 1 * sx */
    {
        volatile float s = 64.0f / 127.0f, p = -7.0f * s, y = 761.0f + p;
        dyn_hand("act_block 2", 4, x1, 2, fb(y));
    }
    wsc8[0] = 254;                                   /* 2^127: 757 2^127 overflows */
    dyn_hand("overflow to +Inf", 4, x1, 0, 0x7F800000u);
    wsc8[0] = 0;                                     /* 2^-127: 757 2^-127 is subnormal */
    dyn_hand("subnormal", 4, x1, 0, fb((float)ldexp(757.0, -127)));
    wsc8[0] = 0xFF;
    dyn_hand("NaN scale code", 4, x1, 0, 0x7FC00000u);
    /* MXFP8 E5M2 [1][3] blocks of 32: 57344, +2^-16, -57344 with q 127, 127, 127: the exact
     * sum is 127 2^-16, a float sum in k order would give 0 */
    {
        static const float x3[3] = {1.0f, 1.0f, 1.0f};
        fill_w(1, 3);
        CHECK(mk_mx(QMX_MXFP8_E5M2, QMX_MX_FLOOR, 32, 0.0f, 1, 3), "e5m2 weights");
        volatile float sx = 1.0f / 127.0f, p = (float)ldexp(127.0, -16);   /* q = 127 */
        wel[0] = 0x7B; wel[1] = 0x01; wel[2] = 0xFB; wsc8[0] = 127;
        p = p * sx;
        dyn_hand("e5m2 exact cancellation", 3, x3, 0, fb(p));
        wel[1] = 0x7C;                               /* +Inf */
        dyn_hand("e5m2 Inf", 3, x3, 0, 0x7F800000u);
        wel[1] = 0xFC; wel[0] = 0x7C;                /* +Inf and -Inf in one block */
        dyn_hand("e5m2 +Inf - Inf", 3, x3, 0, 0x7FC00000u);
    }
    {   /* E5M2 blocks of 1: RN(I) where I needs 31 bits: 57344 * 127 + ... one rounding */
        static const float x2[2] = {127.0f, 1.0f};   /* q 127, 1 */
        fill_w(1, 2);
        CHECK(mk_mx(QMX_MXFP8_E5M2, QMX_MX_FLOOR, 32, 0.0f, 1, 2), "e5m2 weights 2");
        wel[0] = 0x7B; wel[1] = 0x01; wsc8[0] = 127;   /* 57344 * 127 + 2^-16: RN -> 7282688 */
        dyn_hand("e5m2 one rounding", 2, x2, 0, fb(7282688.0f));
    }
}

#define DERRCASE(call, want, what)                                                         \
    do {                                                                                   \
        qmx_status st_;                                                                    \
        for (i = 0; i < sizeof DY / sizeof DY[0]; i++) DY[i] = qmx_test_bits_f32(SENT);    \
        memset(dws, 0xA5, sizeof dws);                                                     \
        memcpy(DYsave, DY, sizeof DY); memcpy(dwssave, dws, sizeof dws);                   \
        st_ = (call);                                                                      \
        CHECK(st_ == (want), "%s: status %d want %d", what, (int)st_, (int)(want));        \
        CHECK(!memcmp(DY, DYsave, sizeof DY) && !memcmp(dws, dwssave, sizeof dws),         \
              "%s: output or workspace written", what);                                    \
    } while (0)

static void test_dyn_errors(void) {
    size_t M = 3, N = 5, K = 96, ldx = K, ldy = N, need = 0, need7 = 0, i, big = SIZE_MAX / 2;
    qmx_blockw_dyn_opts o7;
    qmx_blockw w2;
    qmx_mx_config m2;
    o7.act_block = 7;
    QMX_TEST_CASE("blockw dyn_i8 workspace query");
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(1, 1, 1, NULL, &need) == QMX_OK &&
              need == 64 + 64 + 64 + 64, "1x1x1: %zu", need);
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(3, 9, 96, NULL, &need) == QMX_OK &&
              need == 64 + 64 + 768 + 320, "3x9x96: %zu", need);
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(70, 1, 96, &o7, &need) == QMX_OK &&
              need == 64 + 3584 + 768 + 6144, "70x1x96 act_block 7: %zu", need);
    o7.act_block = 200;
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(70, 1, 96, &o7, &need) == QMX_OK &&
              need == 64 + 256 + 768 + 6144, "act_block >= K: %zu", need);
    o7.act_block = 7;
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(1, 1, 1, NULL, NULL) == QMX_ERR_NULL, "NULL");
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(0, 1, 1, NULL, &need) == QMX_ERR_SIZE, "M 0");
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(1, 0, 1, NULL, &need) == QMX_ERR_SIZE, "N 0");
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(1, 1, 0, NULL, &need) == QMX_ERR_SIZE, "K 0");
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(1, 1, SIZE_MAX / 8, NULL, &need) ==
              QMX_ERR_OVERFLOW, "K huge");

    QMX_TEST_CASE("blockw dyn_i8 errors");
    fill_w(N, K);
    fill_x(M, K, ldx, 0, 0);
    CHECK(mk_mx(QMX_MXFP4, QMX_MX_FLOOR, 32, 0.0f, N, K), "weights");
    qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, NULL, &need);
    qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, &o7, &need7);
#define DCALL(Mx, Nx, Kx, Xx, ldxx, wx, ox, Yx, ldyx, wsx, wsb) \
    qmx_matmul_blockw_dyn_i8(Mx, Nx, Kx, Xx, ldxx, wx, ox, Yx, ldyx, wsx, wsb)
    CHECK(DCALL(M, N, K, DX, ldx, &W, NULL, DY, ldy, dws, need) == QMX_OK, "valid (control)");
    CHECK(DCALL(M, N, K, DX, ldx, &W, &o7, DY, ldy, dws, need7) == QMX_OK, "valid act_block 7");
    DERRCASE(DCALL(M, N, K, NULL, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_NULL, "X NULL");
    DERRCASE(DCALL(M, N, K, DX, ldx, NULL, NULL, DY, ldy, dws, need), QMX_ERR_NULL, "w NULL");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, NULL, ldy, dws, need), QMX_ERR_NULL, "Y NULL");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, ldy, NULL, need), QMX_ERR_NULL, "ws NULL");
    DERRCASE(DCALL(0, N, K, DX, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_SIZE, "M 0");
    DERRCASE(DCALL(M, 0, K, DX, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_SIZE, "N 0");
    DERRCASE(DCALL(M, N, 0, DX, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_SIZE, "K 0");
    DERRCASE(DCALL(M, N, K, DX, K - 1, &W, NULL, DY, ldy, dws, need), QMX_ERR_SHAPE, "ldx < K");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, N - 1, dws, need), QMX_ERR_SHAPE, "ldy < N");
    DERRCASE(DCALL(3, N, K, DX, big, &W, NULL, DY, ldy, dws, need), QMX_ERR_OVERFLOW,
             "X extent");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, big / 2, dws, need), QMX_ERR_OVERFLOW,
             "Y bytes");
    DERRCASE(DCALL(1, SIZE_MAX / 64, K, DX, ldx, &W, NULL, DY, SIZE_MAX / 64, dws, need),
             QMX_ERR_OVERFLOW, "N * K");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, ldy, dws, need - 1),
             QMX_ERR_BUFFER_TOO_SMALL, "workspace short");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, &o7, DY, ldy, dws, need7 - 1),
             QMX_ERR_BUFFER_TOO_SMALL, "workspace short, act_block 7");
    w2 = W; w2.kind = (qmx_blockw_kind)0;
    DERRCASE(DCALL(M, N, K, DX, ldx, &w2, NULL, DY, ldy, dws, need), QMX_ERR_ARG, "kind 0");
    w2 = W; w2.mx = NULL;
    DERRCASE(DCALL(M, N, K, DX, ldx, &w2, NULL, DY, ldy, dws, need), QMX_ERR_NULL, "mx NULL");
    w2 = W; w2.data_bytes = W.data_bytes - 1;
    DERRCASE(DCALL(M, N, K, DX, ldx, &w2, NULL, DY, ldy, dws, need), QMX_ERR_BUFFER_TOO_SMALL,
             "data short");
    w2 = W; w2.n_scales = W.n_scales - 1;
    DERRCASE(DCALL(M, N, K, DX, ldx, &w2, NULL, DY, ldy, dws, need), QMX_ERR_BUFFER_TOO_SMALL,
             "scales short");
    m2 = mcfg; m2.outer = 1; m2.axis_len = N * K; w2 = W; w2.mx = &m2;
    DERRCASE(DCALL(M, N, K, DX, ldx, &w2, NULL, DY, ldy, dws, need), QMX_ERR_SHAPE,
             "view [1][N*K][1]");
    m2 = mcfg; m2.rule = QMX_MX_MICROXCALING; m2.format = QMX_NVFP4; w2 = W; w2.mx = &m2;
    DERRCASE(DCALL(M, N, K, DX, ldx, &w2, NULL, DY, ldy, dws, need), QMX_ERR_UNSUPPORTED,
             "nvfp4 microxcaling");
    /* activations: NaN / Inf anywhere in the K elements of any row, a scale that underflows */
    DX[(M - 1) * ldx + K - 1] = qmx_test_bits_f32(0x7FC00000u);
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_NONFINITE,
             "NaN in the last row");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, &o7, DY, ldy, dws, need7), QMX_ERR_NONFINITE,
             "NaN in the last row, act_block 7");
    DX[(M - 1) * ldx + K - 1] = qmx_test_bits_f32(0xFF800000u);
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_NONFINITE, "-Inf");
    DX[(M - 1) * ldx + K - 1] = 0.5f;
    for (i = 0; i < K; i++) DX[1 * ldx + i] = i == 40 ? 1e-44f : 0.0f;   /* absmax / 127 -> 0 */
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, NULL, DY, ldy, dws, need), QMX_ERR_ARG,
             "row scale underflow");
    DERRCASE(DCALL(M, N, K, DX, ldx, &W, &o7, DY, ldy, dws, need7), QMX_ERR_ARG,
             "block scale underflow");
    DX[1 * ldx + 40] = p2f(-100);
    CHECK(DCALL(M, N, K, DX, ldx, &W, &o7, DY, ldy, dws, need7) == QMX_OK,
          "tiny but representable scale");
    /* the padding of X is not read: NaN there is no error */
    fill_x(M, K, K + 2, 0, 0);   /* (fill_x puts NaN in the padding) */
    CHECK(DCALL(M, N, K, DX, K + 2, &W, NULL, DY, ldy, dws, need) == QMX_OK, "NaN padding");
    /* qconfig weights */
    CHECK(mk_qc(QMX_UINT4, QMX_PER_BLOCK, 16, 1, QMX_RECIPE_QWIX, N, K), "qc weights");
    CHECK(DCALL(M, N, K, DX, K + 2, &W, NULL, DY, ldy, dws, need) == QMX_OK, "qc control");
    w2 = W; w2.zero_points = NULL;
    DERRCASE(DCALL(M, N, K, DX, K + 2, &w2, NULL, DY, ldy, dws, need), QMX_ERR_NULL, "zp NULL");
    wscf[W.n_scales - 1] = -1.0f;
    DERRCASE(DCALL(M, N, K, DX, K + 2, &W, NULL, DY, ldy, dws, need), QMX_ERR_ARG, "scale < 0");
    wscf[W.n_scales - 1] = 1.0f; wzp[0] = 16;
    DERRCASE(DCALL(M, N, K, DX, K + 2, &W, NULL, DY, ldy, dws, need), QMX_ERR_ARG, "zp 16");
    wzp[0] = 3;
#undef DCALL
}

static void test_dyn(void) {
    test_dyn_errors();
    test_dyn_hand();
    test_dyn_formats();
    QMX_TEST_CASE("blockw dyn_i8: same bits on every target");
    printf("dyn_i8 output hash %08x\n", (unsigned)dyn_hash);
    CHECK(dyn_hash == 0x8a6bef96u, "dyn_i8 output hash %08x differs from x86-64's",
          (unsigned)dyn_hash);
}

int main(void) {
    qmx_test_seed(20261127u);
    test_workspace_query();
    test_formats();
    test_nan_weights();
    test_errors();
    test_mxfp8();
    test_dyn();
    QMX_TEST_CASE("same bits on every target");
    printf("output hash %08x\n", (unsigned)out_hash);
    CHECK(out_hash == 0x235f4569u, "output hash %08x differs from x86-64's", (unsigned)out_hash);
    return QMX_TEST_END();
}
