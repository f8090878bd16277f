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
#define QMX_IMPLEMENTATION
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

int main(void) {
    qmx_test_seed(20261127u);
    test_workspace_query();
    test_formats();
    test_nan_weights();
    test_errors();
    test_mxfp8();
    QMX_TEST_CASE("same bits on every target");
    printf("output hash %08x\n", (unsigned)out_hash);
    CHECK(out_hash == 0x235f4569u, "output hash %08x differs from x86-64's", (unsigned)out_hash);
    return QMX_TEST_END();
}
