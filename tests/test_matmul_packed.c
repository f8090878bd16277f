/* test_matmul_packed.c - prepacked int8 weights (qmx_matmul_i8_pack_weights,
 * qmx_matmul_i8_packed) and the dynamic float path (qmx_matmul_f32_dyn_i8), qmx_kernels.h.
 * Specifications checked:
 *   - the blob's bytes follow the documented layout (header, little-endian weight sums, panels
 *     of 16 channels x 4 k), checked byte by byte with the formula written out here, from
 *     either B layout, with zero padding; a fixed blob hashes to the same FNV-1a value on
 *     every target (the format is portable);
 *   - qmx_matmul_i8_packed gives exactly the int64 triple loop written here, and the same bits
 *     as qmx_matmul_i8 and qmx_matmul_i8_ref, on random and edge shapes (1, odd, not multiples
 *     of 4/16/32/64/512, M across the 8-row blocks and the 256-row panels, K near
 *     QMX_MATMUL_I8_MAX_K with the extreme values), zero points, strides, misaligned buffers;
 *   - every error status, with outputs untouched;
 *   - qmx_matmul_i8_f32_packed: the same float bits as qmx_matmul_i8_f32 and as the documented
 *     float order evaluated here from int64 block partial sums;
 *   - qmx_fully_connected_i8_packed: the same bits as qmx_fully_connected_i8 and as an int64
 *     dot product + the scalar qmx.h requantization written out here, every rq mode;
 *   - qmx_matmul_f32_dyn_i8 against a reference written here in double (per-row absmax/127,
 *     nearest-even quantization, exact integer dot): the documented float order makes it
 *     bit-exact against that reference evaluated in float (see dyn_ref). */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"
#include <math.h>

#define SENT ((int32_t)0x5A5A5A5A)



static int8_t bval(const int8_t *B, size_t ldb, int layout, size_t n, size_t k) {
    return layout == QMX_B_NK ? B[n * ldb + k] : B[k * ldb + n];
}

/* The documented blob layout, written out independently: returns mismatching bytes. */
static long check_layout(const uint8_t *blob, size_t bytes, const int8_t *B, size_t N, size_t K,
                         size_t ldb, int layout) {
    size_t Np = (N + 15) / 16 * 16, Kp = (K + 3) / 4 * 4, n, k, i;
    long bad = 0;
    static const char magic[8] = {'Q', 'M', 'X', 'I', '8', 'P', 'K', '1'};
    if (bytes != 64 + 4 * Np + Np * Kp) return 1000000;
    for (i = 0; i < 8; i++) bad += blob[i] != (uint8_t)magic[i];
    for (i = 0; i < 4; i++) {
        bad += blob[8 + i] != (uint8_t)(N >> (8 * i));
        bad += blob[12 + i] != (uint8_t)(K >> (8 * i));
    }
    for (i = 16; i < 64; i++) bad += blob[i] != 0;
    for (n = 0; n < Np; n++) {
        int64_t s = 0;
        uint32_t u;
        for (k = 0; k < K && n < N; k++) s += bval(B, ldb, layout, n, k);
        u = (uint32_t)(int32_t)s;
        for (i = 0; i < 4; i++) bad += blob[64 + 4 * n + i] != (uint8_t)(u >> (8 * i));
        for (k = 0; k < Kp; k++) {
            size_t off = 64 + 4 * Np + (n / 16) * 16 * Kp + (k / 4) * 64 + (n % 16) * 4 + k % 4;
            int8_t want = (n < N && k < K) ? bval(B, ldb, layout, n, k) : 0;
            bad += blob[off] != (uint8_t)want;
        }
    }
    return bad;
}

typedef struct pk_case {
    size_t M, N, K, lda, ldb, ldc;
    int layout, fill_a, fill_b, misalign;
    int32_t azp, bzp;
} pk_case;

static long run_case(const pk_case *t, int check_plain) {
    size_t M = t->M, N = t->N, K = t->K, m, n, k, pb = 0, wsb = 0, wsb2 = 0;
    size_t a_n = (M - 1) * t->lda + K;
    size_t b_n = t->layout == QMX_B_NK ? (N - 1) * t->ldb + K : (K - 1) * t->ldb + N;
    size_t c_n = M * t->ldc;
    int8_t *A = (int8_t *)malloc(a_n), *B = (int8_t *)malloc(b_n);
    int32_t *C = (int32_t *)malloc(c_n * 4), *C2 = (int32_t *)malloc(c_n * 4);
    uint8_t *blob, *ws, *ws2 = NULL;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    long bad = 0;
    if (!A || !B || !C || !C2) { CHECK(0, "malloc"); return 1; }
    qmx_test_fill_i8(A, a_n, t->fill_a);
    qmx_test_fill_i8(B, b_n, t->fill_b);
    for (m = 0; m < c_n; m++) C[m] = C2[m] = SENT;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(N, K, &pb), QMX_OK, "pack size");
    blob = (uint8_t *)malloc(pb + 64);
    CHECK_EQ_INT(qmx_matmul_i8_packed_workspace_size(M, N, K, &wsb), QMX_OK, "ws size");
    ws = (uint8_t *)malloc(wsb + 64);
    if (!blob || !ws) { CHECK(0, "malloc"); return 1; }
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, N, K, t->ldb, (qmx_b_layout)t->layout,
                                            blob + t->misalign, pb), QMX_OK, "pack");
    if (M == 1 || t->fill_b == 0) /* the layout itself, independently (not every case: slow) */
        CHECK(check_layout(blob + t->misalign, pb, B, N, K, t->ldb, t->layout) == 0,
              "blob layout N=%zu K=%zu layout=%d", N, K, t->layout);
    o.a_zp = t->azp; o.b_zp = t->bzp;
    o.b_layout = (qmx_b_layout)t->layout;
    CHECK_EQ_INT(qmx_matmul_i8_packed(M, N, K, A, t->lda, blob + t->misalign, pb, C, t->ldc, &o,
                                      ws + t->misalign, wsb), QMX_OK, "packed");
    for (m = 0; m < M; m++)
        for (n = 0; n < t->ldc; n++) {
            int32_t got = C[m * t->ldc + n];
            if (n < N) {
                int64_t s = 0;
                for (k = 0; k < K; k++)
                    s += ((int64_t)A[m * t->lda + k] - t->azp) *
                         ((int64_t)bval(B, t->ldb, t->layout, n, k) - t->bzp);
                if ((int64_t)got != s) {
                    if (bad < 3)
                        printf("  M=%zu N=%zu K=%zu m=%zu n=%zu got %ld want %lld\n", M, N, K,
                               m, n, (long)got, (long long)s);
                    bad++;
                }
            } else {
                bad += got != SENT; /* padding of C untouched */
            }
        }
    if (check_plain) { /* same bits as the plain-layout kernel */
        CHECK_EQ_INT(qmx_matmul_i8_workspace_size(M, N, K, &o, &wsb2), QMX_OK, "plain ws");
        ws2 = (uint8_t *)malloc(wsb2);
        if (!ws2) { CHECK(0, "malloc"); return 1; }
        CHECK_EQ_INT(qmx_matmul_i8(M, N, K, A, t->lda, B, t->ldb, C2, t->ldc, &o, ws2, wsb2),
                     QMX_OK, "plain");
        for (m = 0; m < c_n; m++) bad += C[m] != C2[m];
        for (m = 0; m < c_n; m++) C2[m] = SENT;
        CHECK_EQ_INT(qmx_matmul_i8_ref(M, N, K, A, t->lda, B, t->ldb, C2, t->ldc, &o), QMX_OK,
                     "ref");
        for (m = 0; m < c_n; m++) bad += C[m] != C2[m];
    }
    free(A); free(B); free(C); free(C2); free(blob); free(ws); free(ws2);
    return bad;
}

static void test_shapes(void) {
    static const size_t dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    const size_t nd = sizeof dims / sizeof dims[0];
    size_t i;
    QMX_TEST_CASE("packed == int64 loop == qmx_matmul_i8 == ref: every small edge shape");
    for (i = 0; i < nd * nd; i++) {
        pk_case t;
        long bad;
        memset(&t, 0, sizeof t);
        t.M = dims[i % nd]; t.N = dims[i / nd]; t.K = dims[(i * 7 + 3) % nd];
        t.layout = (int)(i & 1);
        t.lda = t.K + (i % 3); t.ldc = t.N + (i % 2);
        t.ldb = (t.layout == QMX_B_NK ? t.K : t.N) + (i % 4 == 1);
        t.azp = (int32_t)(i % 5) - 2; t.bzp = (i % 3 == 0) ? (int32_t)(i % 7) - 3 : 0;
        t.misalign = (int)(i % 5);
        bad = run_case(&t, 1);
        CHECK(bad == 0, "M=%zu N=%zu K=%zu: %ld mismatches", t.M, t.N, t.K, bad);
    }
    QMX_TEST_CASE("packed: random shapes across 8-row blocks, 32-column strips, 512-byte K blocks");
    for (i = 0; i < 40; i++) {
        pk_case t;
        long bad;
        memset(&t, 0, sizeof t);
        t.M = qmx_test_rand_range(1, i < 4 ? 300 : 40); t.N = qmx_test_rand_range(1, 100); t.K = qmx_test_rand_range(1, 1200);
        t.layout = (int)(qmx_test_rand() & 1);
        t.lda = t.K + qmx_test_rand_range(0, 5); t.ldc = t.N + qmx_test_rand_range(0, 3);
        t.ldb = (t.layout == QMX_B_NK ? t.K : t.N) + qmx_test_rand_range(0, 2);
        t.azp = (int32_t)qmx_test_rand_range(0, 255) - 128; t.bzp = (i & 1) ? (int32_t)qmx_test_rand_range(0, 255) - 128 : 0;
        t.fill_a = (int)(i % 4 == 3); t.misalign = (int)(i % 3);
        bad = run_case(&t, 1);
        CHECK(bad == 0, "M=%zu N=%zu K=%zu azp=%d bzp=%d: %ld mismatches", t.M, t.N, t.K,
              (int)t.azp, (int)t.bzp, bad);
    }
}

static void test_extremes(void) {
    static const int32_t zps[4][2] = {{127, -128}, {-128, 127}, {127, 127}, {-128, -128}};
    static const int fills[4][2] = {{2, 3}, {3, 2}, {2, 2}, {3, 3}};
    size_t kmax = QMX_MATMUL_I8_MAX_K;
    int i;
    QMX_TEST_CASE("packed: K = QMX_MATMUL_I8_MAX_K (and -1, -2) at the extreme values and zero points");
    for (i = 0; i < 4; i++) {
        pk_case t;
        long bad;
        memset(&t, 0, sizeof t);
        t.M = (size_t)(i == 0 ? 1 : 9); t.N = (size_t)(i == 1 ? 17 : 3); t.K = kmax - (size_t)(i & 1) - (size_t)(i == 2) * 2;
        t.layout = QMX_B_NK; t.lda = t.K; t.ldb = t.K; t.ldc = t.N;
        t.fill_a = fills[i][0]; t.fill_b = fills[i][1];
        t.azp = zps[i][0]; t.bzp = zps[i][1];
        bad = run_case(&t, i < 2);
        CHECK(bad == 0, "K=%zu case %d: %ld mismatches", t.K, i, bad);
    }
}

static void test_portable_blob(void) {
    /* A fixed blob must be the same bytes on every target: FNV-1a of the blob of a fixed B. */
    int8_t B[37 * 13];
    uint8_t blob[64 + 48 * 4 + 48 * 16];
    size_t i, pb = 0;
    uint32_t h = 2166136261u;
    QMX_TEST_CASE("pack: the blob of a fixed [37,13] B hashes the same on every target");
    for (i = 0; i < sizeof B; i++) B[i] = (int8_t)((int)((i * 37u + 11u) % 256u) - 128);
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(37, 13, &pb), QMX_OK, "size");
    CHECK_EQ_INT(pb, sizeof blob, "size value");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, 37, 13, 13, QMX_B_NK, blob, sizeof blob), QMX_OK, "pack");
    CHECK(check_layout(blob, sizeof blob, B, 37, 13, 13, QMX_B_NK) == 0, "layout");
    for (i = 0; i < sizeof blob; i++) { h ^= blob[i]; h *= 16777619u; }
    CHECK(h == 0x4B776AF6u, "hash %08lx", (unsigned long)h);
}

static void test_errors(void) {
    int8_t A[64], B[64];
    int32_t C[64];
    uint8_t blob[2048], ws[4096];
    size_t pb = 0, wsb = 0, i;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    int bad = 0;
    QMX_TEST_CASE("pack/packed errors: status, outputs untouched");
    memset(A, 1, sizeof A); memset(B, 2, sizeof B);
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(0, 4, &pb), QMX_ERR_SIZE, "N=0");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(4, 0, &pb), QMX_ERR_SIZE, "K=0");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(4, 4, NULL), QMX_ERR_NULL, "NULL bytes");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(4, QMX_MATMUL_I8_MAX_K + 1, &pb), QMX_ERR_OVERFLOW, "K>max");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(SIZE_MAX, 4, &pb), QMX_ERR_OVERFLOW, "N huge");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(4, 8, &pb), QMX_OK, "ok");
    CHECK_EQ_INT(pb, 64 + 16 * 4 + 16 * 8, "size formula");
    memset(blob, 0xEE, sizeof blob);
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, 4, 8, 8, QMX_B_NK, blob, pb - 1), QMX_ERR_BUFFER_TOO_SMALL, "short blob");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(NULL, 4, 8, 8, QMX_B_NK, blob, pb), QMX_ERR_NULL, "NULL B");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, 4, 8, 8, QMX_B_NK, NULL, pb), QMX_ERR_NULL, "NULL blob");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, 4, 8, 7, QMX_B_NK, blob, pb), QMX_ERR_SHAPE, "ldb<K");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, 4, 8, 8, (qmx_b_layout)7, blob, pb), QMX_ERR_ARG, "layout");
    for (i = 0; i < sizeof blob; i++) bad += blob[i] != 0xEE;
    CHECK(bad == 0, "blob untouched on error");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(B, 4, 8, 8, QMX_B_NK, blob, pb), QMX_OK, "pack");
    CHECK_EQ_INT(qmx_matmul_i8_packed_workspace_size(2, 4, 8, &wsb), QMX_OK, "ws");
    CHECK_EQ_INT(qmx_matmul_i8_packed_workspace_size(0, 4, 8, &wsb), QMX_ERR_SIZE, "ws M=0");
    CHECK_EQ_INT(qmx_matmul_i8_packed_workspace_size(SIZE_MAX, 4, 8, &wsb), QMX_ERR_OVERFLOW, "ws M huge");
    CHECK_EQ_INT(qmx_matmul_i8_packed_workspace_size(2, 4, 8, NULL), QMX_ERR_NULL, "ws NULL");
    CHECK_EQ_INT(qmx_matmul_i8_packed_workspace_size(2, 4, 8, &wsb), QMX_OK, "ws");
    for (i = 0; i < 64; i++) C[i] = SENT;
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 4, NULL, ws, wsb - 1), QMX_ERR_BUFFER_TOO_SMALL, "short ws");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb - 1, C, 4, NULL, ws, wsb), QMX_ERR_BUFFER_TOO_SMALL, "short blob");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 5, 8, A, 8, blob, pb, C, 5, NULL, ws, sizeof ws), QMX_ERR_SHAPE, "N differs from blob");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 7, A, 8, blob, pb, C, 4, NULL, ws, sizeof ws), QMX_ERR_SHAPE, "K differs from blob");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 7, blob, pb, C, 4, NULL, ws, wsb), QMX_ERR_SHAPE, "lda<K");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 3, NULL, ws, wsb), QMX_ERR_SHAPE, "ldc<N");
    CHECK_EQ_INT(qmx_matmul_i8_packed(0, 4, 8, A, 8, blob, pb, C, 4, NULL, ws, wsb), QMX_ERR_SIZE, "M=0");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, NULL, 8, blob, pb, C, 4, NULL, ws, wsb), QMX_ERR_NULL, "NULL A");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, NULL, pb, C, 4, NULL, ws, wsb), QMX_ERR_NULL, "NULL blob");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, NULL, 4, NULL, ws, wsb), QMX_ERR_NULL, "NULL C");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 4, NULL, NULL, wsb), QMX_ERR_NULL, "NULL ws");
    o.a_zp = 128;
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 4, &o, ws, wsb), QMX_ERR_ARG, "a_zp 128");
    o.a_zp = 0; o.b_zp = -129;
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 4, &o, ws, wsb), QMX_ERR_ARG, "b_zp -129");
    CHECK_EQ_INT(qmx_matmul_i8_packed(SIZE_MAX / 2, 4, 8, A, 8, blob, pb, C, 4, NULL, ws, wsb), QMX_ERR_OVERFLOW, "M extent overflow");
    blob[3] ^= 1;
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 4, NULL, ws, wsb), QMX_ERR_PARSE, "bad magic");
    blob[3] ^= 1;
    bad = 0;
    for (i = 0; i < 64; i++) bad += C[i] != SENT;
    CHECK(bad == 0, "C untouched on error");
    CHECK_EQ_INT(qmx_matmul_i8_packed(2, 4, 8, A, 8, blob, pb, C, 4, NULL, ws, wsb), QMX_OK, "ok");
    CHECK_EQ_INT(C[0], 16, "sum over K=8 of 1*2");
}

/* ---- dynamic path: independent reference ---- */
/* One row: s = absmax/127 (1 when absmax is 0), q = clamp(RNE(x / s), -127, 127), written out
 * here with libm's rint (nearest-even in the default rounding mode). */
static float ref_quant_row(const float *x, size_t K, int32_t *q) {
    float amax = 0.0f, s;
    size_t k;
    for (k = 0; k < K; k++) if (fabsf(x[k]) > amax) amax = fabsf(x[k]);
    s = amax == 0.0f ? 1.0f : amax / 127.0f;
    for (k = 0; k < K; k++) {
        float t = x[k] / s;
        double r = rint((double)t);
        q[k] = r > 127.0 ? 127 : (r < -127.0 ? -127 : (int32_t)r);
    }
    return s;
}

static long run_dyn(size_t M, size_t N, size_t K, size_t ldx, size_t ldy, int per_channel,
                    int misalign) {
    size_t pb = 0, wsb = 0, m, n, k;
    float *X = (float *)malloc(((M - 1) * ldx + K) * 4), *Y = (float *)malloc(M * ldy * 4);
    float *sw = (float *)malloc(N * 4);
    int8_t *W = (int8_t *)malloc(N * K);
    int32_t *q = (int32_t *)malloc(K * 4);
    uint8_t *blob, *ws;
    long bad = 0;
    if (!X || !Y || !sw || !W || !q) { CHECK(0, "malloc"); return 1; }
    for (m = 0; m < (M - 1) * ldx + K; m++) {
        /* rows of different magnitudes; every 5th row all zeros */
        float mag = (float)(1u << ((m / ldx) % 9)) / 16.0f;
        X[m] = ((m / ldx) % 5 == 4) ? 0.0f : mag * ((float)(int32_t)(qmx_test_rand() % 20001u) - 10000.0f) / 10000.0f;
    }
    qmx_test_fill_i8(W, N * K, 0);
    for (n = 0; n < N; n++) sw[n] = (float)(1 + qmx_test_rand() % 1000) / 65536.0f;
    for (m = 0; m < M * ldy; m++) Y[m] = -7.0f;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(N, K, &pb), QMX_OK, "size");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8_workspace_size(M, N, K, &wsb), QMX_OK, "ws");
    blob = (uint8_t *)malloc(pb + 8); ws = (uint8_t *)malloc(wsb + 8);
    if (!blob || !ws) { CHECK(0, "malloc"); return 1; }
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob + misalign, pb), QMX_OK, "pack");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(M, N, K, X, ldx, blob + misalign, pb, sw,
                                       per_channel ? N : 1, Y, ldy, ws + misalign, wsb),
                 QMX_OK, "dyn");
    for (m = 0; m < M; m++) {
        float s = ref_quant_row(X + m * ldx, K, q);
        for (n = 0; n < ldy; n++) {
            float got = Y[m * ldy + n];
            if (n < N) {
                int64_t d = 0;
                double exact = 0.0, tol = 0.0;
                float want, w = per_channel ? sw[n] : sw[0];
                for (k = 0; k < K; k++) {
                    d += (int64_t)q[k] * W[n * K + k];
                    exact += (double)X[m * ldx + k] * W[n * K + k] * w;
                    tol += 0.5 * s * fabs((double)W[n * K + k]) * w;
                }
                want = (float)d;     /* the documented order: ((float)acc * sx) * sw */
                want = want * s;
                want = want * w;
                if (qmx_test_f32_bits(got) != qmx_test_f32_bits(want)) {
                    if (bad < 3) printf("  dyn m=%zu n=%zu got %.9g want %.9g\n", m, n, got, want);
                    bad++;
                }
                /* and it is a quantized product: within the quantization error of X */
                if (fabs((double)got - exact) > tol * 1.01 + 1e-6 * fabs(exact) + 1e-30) bad++;
            } else {
                bad += got != -7.0f; /* padding of Y untouched */
            }
        }
    }
    free(X); free(Y); free(sw); free(W); free(q); free(blob); free(ws);
    return bad;
}

static void test_dyn(void) {
    static const size_t sh[][3] = {{1, 1, 1}, {1, 17, 33}, {3, 5, 7}, {9, 31, 130}, {65, 20, 64},
                                   {2, 100, 1030}, {70, 3, 5}};
    size_t i;
    QMX_TEST_CASE("dynamic f32 x packed int8: bits of the documented order, per tensor and channel");
    for (i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        long bad = run_dyn(sh[i][0], sh[i][1], sh[i][2], sh[i][2] + (i % 3), sh[i][1] + (i % 2),
                           (int)(i & 1), (int)(i % 4));
        CHECK(bad == 0, "M=%zu N=%zu K=%zu: %ld mismatches", sh[i][0], sh[i][1], sh[i][2], bad);
        bad = run_dyn(sh[i][0], sh[i][1], sh[i][2], sh[i][2], sh[i][1], (int)!(i & 1), 0);
        CHECK(bad == 0, "M=%zu N=%zu K=%zu (other scales): %ld mismatches", sh[i][0], sh[i][1], sh[i][2], bad);
    }
}

static void test_dyn_errors(void) {
    float X[4 * 8], Y[4 * 4], sw[4] = {0.5f, 0.25f, 1.0f, 2.0f};
    int8_t W[4 * 8];
    uint8_t blob[512], ws[8192];
    size_t pb = 0, wsb = 0, i;
    int bad = 0;
    QMX_TEST_CASE("dynamic: errors (NaN/Inf rows, scales, sizes), Y untouched");
    for (i = 0; i < 32; i++) { X[i] = (float)i - 10.0f; W[i] = (int8_t)(i * 3); }
    for (i = 0; i < 16; i++) Y[i] = 42.0f;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(4, 8, &pb), QMX_OK, "size");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, 4, 8, 8, QMX_B_NK, blob, pb), QMX_OK, "pack");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8_workspace_size(4, 4, 8, &wsb), QMX_OK, "ws");
    CHECK(wsb <= sizeof ws, "ws fits");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8_workspace_size(0, 4, 8, &wsb), QMX_ERR_SIZE, "ws M=0");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8_workspace_size(4, 4, 8, NULL), QMX_ERR_NULL, "ws NULL");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8_workspace_size(4, 4, 8, &wsb), QMX_OK, "ws");
    X[21] = NAN;
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_NONFINITE, "NaN in row 2");
    X[21] = INFINITY;
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_NONFINITE, "Inf in row 2");
    X[21] = 1e-44f; X[16] = X[17] = X[18] = X[19] = X[20] = X[22] = X[23] = 0.0f;
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_ARG, "absmax/127 underflows");
    X[21] = 1.0f;
    sw[2] = 0.0f;
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_ARG, "zero weight scale");
    sw[2] = NAN;
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_ARG, "NaN weight scale");
    sw[2] = 1.0f;
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 3, Y, 4, ws, wsb), QMX_ERR_BUFFER_TOO_SMALL, "3 scales for N=4");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb - 1), QMX_ERR_BUFFER_TOO_SMALL, "short ws");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 7, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_SHAPE, "ldx<K");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 3, ws, wsb), QMX_ERR_SHAPE, "ldy<N");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 5, 8, X, 8, blob, pb, sw, 4, Y, 5, ws, wsb), QMX_ERR_SHAPE, "N differs from blob");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, NULL, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_NULL, "NULL X");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, NULL, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_NULL, "NULL blob");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, NULL, 4, Y, 4, ws, wsb), QMX_ERR_NULL, "NULL scales");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, NULL, 4, ws, wsb), QMX_ERR_NULL, "NULL Y");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, NULL, wsb), QMX_ERR_NULL, "NULL ws");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(0, 4, 8, X, 8, blob, pb, sw, 4, Y, 4, ws, wsb), QMX_ERR_SIZE, "M=0");
    for (i = 0; i < 16; i++) bad += Y[i] != 42.0f;
    CHECK(bad == 0, "Y untouched on error");
    CHECK_EQ_INT(qmx_matmul_f32_dyn_i8(4, 4, 8, X, 8, blob, pb, sw, 1, Y, 4, ws, wsb), QMX_OK, "one (per-tensor) scale");
}

/* ---- fully-connected on packed weights ---- */
/* Same bits as qmx_fully_connected_i8 (tested against independent references in
 * test_matmul_out.c) and, for every element, as the int64 dot product written here followed by
 * the scalar qmx.h requantization, bias add and clamp. */
static long run_fc(size_t M, size_t N, size_t K, int mode, int pc, int i16, int bias, int32_t azp,
                   int misalign) {
    size_t lda = K + (size_t)misalign, ldo = N + (size_t)(misalign & 1), pb = 0, wsb = 0, wsp = 0;
    size_t m, n, k, esz = i16 ? 2 : 1;
    int8_t *A = (int8_t *)malloc((M - 1) * lda + K), *W = (int8_t *)malloc(N * K);
    int32_t *mu = (int32_t *)malloc(N * 4), *bi = (int32_t *)malloc(N * 4);
    int *sh = (int *)malloc(N * sizeof(int));
    float *sc = (float *)malloc(N * 4);
    unsigned char *o1 = (unsigned char *)malloc(M * ldo * esz), *o2 = (unsigned char *)malloc(M * ldo * esz);
    uint8_t *blob, *ws, *ws2;
    qmx_requant_config rq;
    long bad = 0;
    if (!A || !W || !mu || !bi || !sh || !sc || !o1 || !o2) { CHECK(0, "malloc"); return 1; }
    qmx_test_fill_i8(A, (M - 1) * lda + K, 0);
    qmx_test_fill_i8(W, N * K, 0);
    for (n = 0; n < N; n++) {
        mu[n] = (int32_t)(0x40000000u + (qmx_test_rand() & 0x3FFFFFFFu));
        sh[n] = -(int)(qmx_test_rand() % 12) - 4;
        sc[n] = (float)(1 + qmx_test_rand() % 100) / 65536.0f;
        bi[n] = (int32_t)(qmx_test_rand() % 20001u) - 10000;
    }
    memset(&rq, 0, sizeof rq);
    rq.mode = (qmx_requant_mode)mode; rq.per_channel = pc;
    rq.multipliers = mu; rq.shifts = sh; rq.scales = sc; rq.bias = bias ? bi : NULL;
    rq.output_zero_point = i16 ? 7 : -3;
    rq.out_dtype = i16 ? QMX_INT16 : QMX_INT8;
    if (mode == 1) { rq.act_min = -100; rq.act_max = 90; }
    memset(o1, 0xA5, M * ldo * esz); memset(o2, 0xA5, M * ldo * esz);
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(N, K, &pb), QMX_OK, "size");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed_workspace_size(M, N, K, &wsp), QMX_OK, "ws");
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(M, N, K, &wsb), QMX_OK, "ws plain");
    blob = (uint8_t *)malloc(pb + 4); ws = (uint8_t *)malloc(wsp + 4); ws2 = (uint8_t *)malloc(wsb);
    if (!blob || !ws || !ws2) { CHECK(0, "malloc"); return 1; }
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob + misalign, pb), QMX_OK, "pack");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(M, N, K, A, lda, azp, blob + misalign, pb, &rq, o1,
                                               ldo, ws + misalign, wsp), QMX_OK, "fc packed");
    CHECK_EQ_INT(qmx_fully_connected_i8(M, N, K, A, lda, azp, W, K, &rq, o2, ldo, ws2, wsb),
                 QMX_OK, "fc plain");
    bad += memcmp(o1, o2, M * ldo * esz) != 0;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            int64_t d = 0;
            int32_t acc, v, lo = i16 ? -32768 : -128, hi = i16 ? 32767 : 127, got;
            size_t ch = pc ? n : 0;
            for (k = 0; k < K; k++) d += ((int64_t)A[m * lda + k] - azp) * W[n * K + k];
            acc = (int32_t)d;
            if (bias) acc = (int32_t)(uint32_t)((uint32_t)acc + (uint32_t)bi[n]);
            v = mode == 0 ? qmx_requantize(acc, mu[ch], sh[ch])
              : mode == 1 ? qmx_requantize_single_rounding(acc, mu[ch], sh[ch])
                          : qmx_requantize_float(acc, sc[ch]);
            if (mode == 1) { lo = -100; hi = 90; }
            v = (int32_t)((int64_t)v + rq.output_zero_point < lo ? lo
                          : ((int64_t)v + rq.output_zero_point > hi ? hi : v + rq.output_zero_point));
            if (i16) { int16_t t; memcpy(&t, o1 + (m * ldo + n) * 2, 2); got = t; }
            else got = (int8_t)o1[m * ldo + n];
            bad += got != v;
        }
    for (m = 0; m < M; m++) /* row padding untouched */
        for (n = N; n < ldo; n++)
            for (k = 0; k < esz; k++) bad += o1[(m * ldo + n) * esz + k] != 0xA5;
    free(A); free(W); free(mu); free(bi); free(sh); free(sc); free(o1); free(o2);
    free(blob); free(ws); free(ws2);
    return bad;
}

static void test_fc(void) {
    static const size_t sh[][3] = {{1, 1, 1}, {1, 300, 70}, {3, 17, 9}, {9, 33, 130},
                                   {65, 20, 64}, {70, 260, 33}, {2, 5, 1030}};
    size_t i;
    QMX_TEST_CASE("fully-connected on packed weights == plain == int64 + scalar requantize");
    for (i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        int mode = (int)(i % 3);
        long bad = run_fc(sh[i][0], sh[i][1], sh[i][2], mode, (int)(i & 1), (int)(i % 4 == 2),
                          (int)(i % 3 != 1), (int32_t)(i * 37 % 256) - 128, (int)(i % 3));
        CHECK(bad == 0, "M=%zu N=%zu K=%zu mode %d: %ld mismatches", sh[i][0], sh[i][1], sh[i][2], mode, bad);
    }
}

static void test_fc_errors(void) {
    int8_t A[16], W[16];
    int8_t out[8];
    uint8_t blob[256], ws[4096];
    int32_t mu[2] = {1 << 30, 1 << 30};
    int shf[2] = {-2, -2};
    size_t pb = 0, wsb = 0, i;
    qmx_requant_config rq;
    int bad = 0;
    QMX_TEST_CASE("fully-connected packed: errors, output untouched");
    memset(A, 1, sizeof A); memset(W, 1, sizeof W); memset(out, 0x11, sizeof out);
    memset(&rq, 0, sizeof rq);
    rq.multipliers = mu; rq.shifts = shf;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(2, 8, &pb), QMX_OK, "size");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, 2, 8, 8, QMX_B_NK, blob, pb), QMX_OK, "pack");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed_workspace_size(2, 2, 8, &wsb), QMX_OK, "ws");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed_workspace_size(2, 0, 8, &wsb), QMX_ERR_SIZE, "ws N=0");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed_workspace_size(2, 2, 8, NULL), QMX_ERR_NULL, "ws NULL");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed_workspace_size(2, 2, 8, &wsb), QMX_OK, "ws");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb, &rq, out, 2, ws, wsb - 1), QMX_ERR_BUFFER_TOO_SMALL, "short ws");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb - 1, &rq, out, 2, ws, wsb), QMX_ERR_BUFFER_TOO_SMALL, "short blob");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 3, 8, A, 8, 0, blob, pb, &rq, out, 3, ws, sizeof ws), QMX_ERR_SHAPE, "N differs");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 128, blob, pb, &rq, out, 2, ws, wsb), QMX_ERR_ARG, "a_zp");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb, NULL, out, 2, ws, wsb), QMX_ERR_NULL, "NULL rq");
    rq.out_dtype = QMX_FP8_E5M2;
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb, &rq, out, 2, ws, wsb), QMX_ERR_DTYPE, "out dtype");
    rq.out_dtype = QMX_INT8; shf[0] = 40;
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb, &rq, out, 2, ws, wsb), QMX_ERR_ARG, "shift");
    shf[0] = -2;
    blob[0] ^= 1;
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb, &rq, out, 2, ws, wsb), QMX_ERR_PARSE, "magic");
    blob[0] ^= 1;
    for (i = 0; i < sizeof out; i++) bad += out[i] != 0x11;
    CHECK(bad == 0, "out untouched");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed(2, 2, 8, A, 8, 0, blob, pb, &rq, out, 2, ws, wsb), QMX_OK, "ok");
    CHECK_EQ_INT(out[0], 1, "acc 8 (K=8 of 1*1) * 0.5 * 2^-2 = 1");
}

/* ---- dequant-on-output on packed weights ---- */
/* Bits of qmx_matmul_i8_f32 on the plain weights, and of the documented float order evaluated
 * here from int64 block partial sums: sum = 0; per block b: p = (float)P_b; p *= sa; p *= sb;
 * sum += p (volatile locals: every step is stored as a float, so no FMA contraction or excess
 * precision can change the reference). */
static long run_f32(size_t M, size_t N, size_t K, size_t bs, int apr, int bpc, int32_t azp, int mis) {
    size_t lda = K + (size_t)mis, ldc = N + (size_t)(mis & 1), pb = 0, wsb = 0, wsp = 0, m, n, k;
    size_t nblk = K / bs + (K % bs != 0), i;
    int8_t *A = (int8_t *)malloc((M - 1) * lda + K), *W = (int8_t *)malloc(N * K);
    float *sa = (float *)malloc(M * nblk * 4), *sb = (float *)malloc(N * nblk * 4);
    float *C1 = (float *)malloc(M * ldc * 4), *C2 = (float *)malloc(M * ldc * 4);
    uint8_t *blob, *ws, *ws2;
    qmx_matmul_i8_f32_scales sc;
    long bad = 0;
    if (!A || !W || !sa || !sb || !C1 || !C2) { CHECK(0, "malloc"); return 1; }
    qmx_test_fill_i8(A, (M - 1) * lda + K, 0);
    qmx_test_fill_i8(W, N * K, 0);
    for (i = 0; i < M * nblk; i++) sa[i] = (float)(1 + qmx_test_rand() % 1000) / 4096.0f;
    for (i = 0; i < N * nblk; i++) sb[i] = (float)(1 + qmx_test_rand() % 1000) / 8192.0f;
    for (i = 0; i < M * ldc; i++) C1[i] = C2[i] = -5.0f;
    memset(&sc, 0, sizeof sc);
    sc.a_scales = sa; sc.a_scales_len = M * nblk; sc.a_per_row = apr; sc.a_zp = azp;
    sc.b_scales = sb; sc.b_scales_len = N * nblk; sc.b_per_col = bpc; sc.block_size = bs;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(N, K, &pb), QMX_OK, "size");
    CHECK_EQ_INT(qmx_fully_connected_i8_packed_workspace_size(M, N, K, &wsp), QMX_OK, "ws");
    CHECK_EQ_INT(qmx_matmul_i8_f32_workspace_size(M, N, K, &wsb), QMX_OK, "ws plain");
    blob = (uint8_t *)malloc(pb + 4); ws = (uint8_t *)malloc(wsp + 4); ws2 = (uint8_t *)malloc(wsb);
    if (!blob || !ws || !ws2) { CHECK(0, "malloc"); return 1; }
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob + mis, pb), QMX_OK, "pack");
    CHECK_EQ_INT(qmx_matmul_i8_f32_packed(M, N, K, A, lda, blob + mis, pb, C1, ldc, &sc,
                                          ws + mis, wsp), QMX_OK, "f32 packed");
    CHECK_EQ_INT(qmx_matmul_i8_f32(M, N, K, A, lda, W, K, C2, ldc, &sc, ws2, wsb), QMX_OK, "f32 plain");
    for (i = 0; i < M * ldc; i++) bad += qmx_test_f32_bits(C1[i]) != qmx_test_f32_bits(C2[i]);
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            volatile float sum = 0.0f; /* volatile: each step rounded to float, no contraction */
            size_t b;
            for (b = 0; b < nblk; b++) {
                int64_t d = 0;
                volatile float pv;
                for (k = b * bs; k < K && k < (b + 1) * bs; k++)
                    d += ((int64_t)A[m * lda + k] - azp) * W[n * K + k];
                pv = (float)d;
                pv = pv * sa[(apr ? m * nblk : 0) + b];
                pv = pv * sb[(bpc ? n * nblk : 0) + b];
                sum = sum + pv;
            }
            bad += qmx_test_f32_bits(C1[m * ldc + n]) != qmx_test_f32_bits(sum);
        }
    free(A); free(W); free(sa); free(sb); free(C1); free(C2); free(blob); free(ws); free(ws2);
    return bad;
}

static void test_f32(void) {
    static const size_t sh[][4] = {{1, 1, 1, 4}, {1, 300, 70, 16}, {3, 17, 9, 9}, {9, 33, 130, 64},
                                   {65, 20, 64, 32}, {70, 260, 33, 1000}, {2, 5, 1030, 128},
                                   {5, 40, 2100, 1024}, {4, 150, 96, 32}, {1, 70, 64, 8},
                                   {3, 200, 130, 20}};
    size_t i;
    int8_t A[16] = {0}, W[16] = {0};
    float s1[8] = {1, 1, 1, 1, 1, 1, 1, 1}, C[4];
    uint8_t blob[256], ws[4096];
    size_t pb = 0;
    qmx_matmul_i8_f32_scales sc;
    QMX_TEST_CASE("dequant-on-output on packed weights == plain == the documented float order");
    for (i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        long bad = run_f32(sh[i][0], sh[i][1], sh[i][2], sh[i][3], (int)(i & 1), (int)((i >> 1) & 1),
                           (int32_t)(i * 53 % 256) - 128, (int)(i % 3));
        CHECK(bad == 0, "M=%zu N=%zu K=%zu bs=%zu: %ld mismatches", sh[i][0], sh[i][1], sh[i][2], sh[i][3], bad);
    }
    QMX_TEST_CASE("dequant-on-output packed: a block size not a multiple of 4 is unsupported");
    memset(&sc, 0, sizeof sc);
    sc.a_scales = s1; sc.a_scales_len = 8; sc.b_scales = s1; sc.b_scales_len = 8; sc.block_size = 6;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(2, 8, &pb), QMX_OK, "size");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, 2, 8, 8, QMX_B_NK, blob, pb), QMX_OK, "pack");
    C[0] = 3.0f;
    CHECK_EQ_INT(qmx_matmul_i8_f32_packed(2, 2, 8, A, 8, blob, pb, C, 2, &sc, ws, sizeof ws), QMX_ERR_UNSUPPORTED, "bs 6");
    CHECK(C[0] == 3.0f, "C untouched");
    sc.block_size = 8;
    CHECK_EQ_INT(qmx_matmul_i8_f32_packed(2, 2, 8, A, 8, blob, pb, C, 2, &sc, ws, sizeof ws), QMX_OK, "bs = K");
    sc.block_size = 0;
    CHECK_EQ_INT(qmx_matmul_i8_f32_packed(2, 2, 8, A, 8, blob, pb, C, 2, &sc, ws, sizeof ws), QMX_ERR_SIZE, "bs 0");
    sc.block_size = 4; sc.b_scales_len = 1;
    CHECK_EQ_INT(qmx_matmul_i8_f32_packed(2, 2, 8, A, 8, blob, pb, C, 2, &sc, ws, sizeof ws), QMX_ERR_BUFFER_TOO_SMALL, "2 blocks, 1 scale");
}

int main(void) {
    qmx_test_seed(2468u); /* this program's data */
    test_portable_blob();
    test_errors();
    test_shapes();
    test_extremes();
    test_fc();
    test_fc_errors();
    test_f32();
    test_dyn();
    test_dyn_errors();
    return QMX_TEST_END();
}
