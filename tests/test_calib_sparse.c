/* test_calib_sparse.c - specification of qmx_calib.h's N:M structured sparsity: magnitude
 * pruning with lower-index tie-breaking, the compressed bit layout, and the int8 / float
 * matmuls over compressed weights.
 * References: an independent pruning (stable selection sort on (|w| desc, index asc)) in this
 * file; qmx_kernels.h's dense qmx_matmul_i8 and an int64 naive loop over the pruned dense
 * weights (exact: integers); for 2:4 also an int64 loop reading the compressed form directly
 * (any metadata), over shapes around every register tile and K tail of the SIMD kernels and
 * sums at the K bound; a dense naive float loop over the pruned weights in increasing k
 * (bit-exact: the pruned terms add exact zeros and the kept products are the same operations).
 */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_calib.h"
#include "qmx_kernels.h"
#include "qmx_test.h"

#define SMALL_TARGET QMX_TEST_SMALL_TARGET

static uint32_t seed = 1u;
static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; return seed >> 8; }

/* reference pruning of one row: keep the n largest |w| per group, ties to the lower index */
static void ref_prune_i8(const int8_t *w, size_t K, int n, int m, int8_t *out) {
    size_t g;
    for (g = 0; g < K / (size_t)m; g++) {
        int used[256] = {0}, t, i;
        for (i = 0; i < m; i++) out[g * (size_t)m + (size_t)i] = 0;
        for (t = 0; t < n; t++) {        /* pick the best unused: larger |w|, then lower index */
            int best = -1, bm = -1;
            for (i = 0; i < m; i++) {
                int a = w[g * (size_t)m + (size_t)i];
                a = a < 0 ? -a : a;
                if (!used[i] && a > bm) { bm = a; best = i; }
            }
            used[best] = 1;
            out[g * (size_t)m + (size_t)best] = w[g * (size_t)m + (size_t)best];
        }
    }
}

static void test_layout(void) {
    const int8_t w[8] = {1, -5, 3, 0, 0, 0, 2, -2}, w2[4] = {4, -4, 4, 1};
    int8_t v[4], d[8];
    uint8_t meta[1];
    size_t vc = 0, mb = 0;
    QMX_TEST_CASE("2:4 compressed layout: values in index order, 2-bit indices LSB first");
    CHECK(qmx_nm_storage_size(1, 8, 2, 4, &vc, &mb) == QMX_OK && vc == 4 && mb == 1, "sizes %u %u",
          (unsigned)vc, (unsigned)mb);
    CHECK_EQ_INT(qmx_nm_compress_i8(w, 1, 8, 8, 2, 4, v, 4, meta, 1), QMX_OK, "compress");
    CHECK(v[0] == -5 && v[1] == 3 && v[2] == 2 && v[3] == -2, "values %d %d %d %d", v[0], v[1], v[2], v[3]);
    CHECK_EQ_INT(meta[0], 0xE9, "indices 1,2 | 2,3 -> 1 + 2<<2 + 2<<4 + 3<<6");
    QMX_TEST_CASE("ties: the lower index wins (lax.top_k, Qwix)");
    CHECK_EQ_INT(qmx_nm_compress_i8(w2, 1, 4, 4, 2, 4, v, 4, meta, 1), QMX_OK, "compress");
    CHECK(v[0] == 4 && v[1] == -4 && (meta[0] & 0xF) == 0x4, "kept indices 0,1: %d %d meta %02x",
          v[0], v[1], meta[0]);
    QMX_TEST_CASE("other n:m sizes: b = ceil(log2 m) bits per index, rows start on a byte");
    CHECK(qmx_nm_storage_size(3, 40, 4, 8, &vc, &mb) == QMX_OK && vc == 60 && mb == 3 * 8,
          "4:8: 20 idx * 3 bits = 60 bits = 8 bytes/row: %u %u", (unsigned)vc, (unsigned)mb);
    CHECK(qmx_nm_storage_size(2, 15, 1, 3, &vc, &mb) == QMX_OK && vc == 10 && mb == 2 * 2, "1:3");
    CHECK(qmx_nm_storage_size(1, 16, 2, 4, &vc, &mb) == QMX_OK && vc == 8 && mb == 2, "2:4 row");
    (void)d;
}

static int8_t W[64 * 256], Wp[64 * 256], Wr[64 * 256], A[32 * 256], vals[64 * 256];
static uint8_t meta[64 * 256];
static int32_t C1[32 * 64], C2[32 * 64];
static unsigned char ws[1 << 20];

static void test_prune_and_matmul(void) {
    static const int nm[][2] = {{2, 4}, {1, 2}, {4, 8}, {3, 5}, {1, 3}, {5, 16}, {7, 8}, {1, 4}, {2, 8}};
    size_t c, rep;
    QMX_TEST_CASE("pruning equals the reference; the sparse matmul equals dense qmx_matmul_i8 "
                  "and an int64 loop over the pruned weights");
    for (c = 0; c < sizeof nm / sizeof nm[0]; c++)
        for (rep = 0; rep < (SMALL_TARGET ? 2u : 6u); rep++) {
            int n = nm[c][0], m = nm[c][1];
            size_t N = 1 + rnd() % 40, M = 1 + rnd() % (SMALL_TARGET ? 6 : 20);
            size_t K = (size_t)m * (1 + rnd() % (240 / (size_t)m)), ldw = K + rnd() % 3;
            size_t lda = K + rnd() % 5, ldc = N + rnd() % 3, vc = 0, mb = 0, i, j, k, wsz = 0;
            int32_t a_zp = (int32_t)(rnd() % 256) - 128;
            qmx_matmul_i8_opts o = QMX_ZERO_INIT;
            int ok = 1;
            for (i = 0; i < N * ldw; i++) W[i] = (int8_t)(rnd() % (rep & 1 ? 7 : 256) - (rep & 1 ? 3 : 128));
            for (i = 0; i < M * lda; i++) A[i] = (int8_t)(rnd() % 256 - 128);
            CHECK_EQ_INT(qmx_nm_storage_size(N, K, n, m, &vc, &mb), QMX_OK, "size");
            CHECK_EQ_INT(qmx_nm_compress_i8(W, N, K, ldw, n, m, vals, vc, meta, mb), QMX_OK, "compress");
            CHECK_EQ_INT(qmx_nm_decompress_i8(vals, vc, meta, mb, N, K, n, m, Wp, K), QMX_OK, "decompress");
            for (j = 0; j < N; j++) ref_prune_i8(W + j * ldw, K, n, m, Wr + j * K);
            CHECK(memcmp(Wp, Wr, N * K) == 0, "%d:%d N %u K %u: pruning differs", n, m, (unsigned)N, (unsigned)K);
            CHECK_EQ_INT(qmx_nm_matmul_i8(M, N, K, A, lda, a_zp, n, m, vals, vc, meta, mb, C1, ldc),
                         QMX_OK, "sparse matmul");
            o.a_zp = a_zp;
            qmx_matmul_i8_workspace_size(M, N, K, &o, &wsz);
            CHECK(wsz <= sizeof ws, "workspace");
            CHECK_EQ_INT(qmx_matmul_i8(M, N, K, A, lda, Wr, K, C2, ldc, &o, ws, sizeof ws), QMX_OK, "dense");
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) {
                    int64_t ref = 0;
                    for (k = 0; k < K; k++) ref += (int64_t)(A[i * lda + k] - a_zp) * Wr[j * K + k];
                    if (C1[i * ldc + j] != C2[i * ldc + j] || (int64_t)C1[i * ldc + j] != ref) ok = 0;
                }
            CHECK(ok, "%d:%d M %u N %u K %u zp %d: sparse != dense", n, m, (unsigned)M, (unsigned)N,
                  (unsigned)K, (int)a_zp);
        }
}

/* 2:4 reference straight from the compressed form, for any metadata (also repeated or
 * decreasing indices, which compress never writes): kept value j of the row multiplies
 * A[4 * (j / 2) + index j], index j in bits [2j, 2j + 2) of the row's metadata. */
static int64_t ref24(const int8_t *a, const int8_t *v, const uint8_t *mrow, size_t K, int32_t zp) {
    size_t j;
    int64_t acc = 0;
    for (j = 0; j < K / 2; j++) {
        unsigned idx = (mrow[j / 4] >> (2 * (j % 4))) & 3u;
        acc += (int64_t)(a[(j / 2) * 4 + idx] - zp) * v[j];
    }
    return acc;
}

/* One 2:4 case: mode 0 random weights, compressed; 1 random values and metadata (every
 * 2-bit pattern, garbage in the unused high bits of an odd row's last byte); 2 all weights
 * -128 and A all -128 with zp 127 (largest positive sums); 3 weights -128, A 127, zp -128
 * (largest negative sums). Checks the sparse matmul against ref24 and, for compressed
 * weights, against dense qmx_matmul_i8 over the decompressed ones; C's padding columns
 * (ldc > N) stay untouched. Returns 1 when everything matched. */
static int run24(size_t M, size_t N, size_t K, int32_t zp, int mode) {
    size_t lda = K + (size_t)(rnd() % 5), ldc = N + 3, vc = 0, mb = 0, i, j, wsz = 0, mpr;
    int8_t *a = (int8_t *)malloc(M * lda), *w = (int8_t *)malloc(N * K), *wd = (int8_t *)malloc(N * K);
    int8_t *v;
    uint8_t *mt;
    int32_t *c1 = (int32_t *)malloc(M * ldc * sizeof(int32_t)), *c2 = (int32_t *)malloc(M * ldc * sizeof(int32_t));
    void *ws = NULL;
    int ok = 1;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    if (qmx_nm_storage_size(N, K, 2, 4, &vc, &mb) != QMX_OK) return 0;
    v = (int8_t *)malloc(vc);
    mt = (uint8_t *)malloc(mb);
    if (!a || !w || !wd || !v || !mt || !c1 || !c2) { printf("out of memory\n"); exit(1); }
    mpr = mb / N;
    for (i = 0; i < M * lda; i++)
        a[i] = (int8_t)(mode == 2 ? -128 : mode == 3 ? 127 : (int)(rnd() % 256) - 128);
    for (i = 0; i < N * K; i++) w[i] = (int8_t)(mode >= 2 ? -128 : (int)(rnd() % 256) - 128);
    if (mode == 1) {
        for (i = 0; i < vc; i++) v[i] = (int8_t)((int)(rnd() % 256) - 128);
        for (i = 0; i < mb; i++) mt[i] = (uint8_t)rnd();
    } else if (qmx_nm_compress_i8(w, N, K, K, 2, 4, v, vc, mt, mb) != QMX_OK ||
               qmx_nm_decompress_i8(v, vc, mt, mb, N, K, 2, 4, wd, K) != QMX_OK) {
        ok = 0;
    }
    for (i = 0; i < M * ldc; i++) c1[i] = c2[i] = 0x5A5A5A5A;
    if (qmx_nm_matmul_i8(M, N, K, a, lda, zp, 2, 4, v, vc, mt, mb, c1, ldc) != QMX_OK) ok = 0;
    if (mode != 1) {
        o.a_zp = zp;
        qmx_matmul_i8_workspace_size(M, N, K, &o, &wsz);
        ws = malloc(wsz ? wsz : 1);
        if (!ws || qmx_matmul_i8(M, N, K, a, lda, wd, K, c2, ldc, &o, ws, wsz) != QMX_OK) ok = 0;
    }
    for (i = 0; ok && i < M; i++)
        for (j = 0; j < ldc; j++) {
            int32_t got = c1[i * ldc + j];
            if (j >= N) {
                if (got != 0x5A5A5A5A) ok = 0;
            } else {
                int64_t ref = ref24(a + i * lda, v + j * (K / 2), mt + j * mpr, K, zp);
                if ((int64_t)got != ref || (mode != 1 && got != c2[i * ldc + j])) ok = 0;
            }
        }
    free(a); free(w); free(wd); free(v); free(mt); free(c1); free(c2); free(ws);
    return ok;
}

static void test_nm24_tiles(void) {
    /* rows and columns around the 4 x 4, 2 x 8, 1 x 16 and 1 x 8 register tiles and the
     * 16-row weight blocks; K around the 128-byte step (tail groups 1..31, none) */
    static const size_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 16, 17};
    static const size_t Ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 31, 33};
    static const size_t Ks[] = {4, 8, 60, 124, 128, 132, 252, 256, 260, 384, 516};
    static const int32_t zps[] = {0, -128, 127, 3, -77};
    size_t mi, ni, ki, t = 0;
    int ok = 1;
    QMX_TEST_CASE("2:4 matmul: every tile remainder in M and N, K tails, zero points, any "
                  "metadata; equals the compressed-form reference and dense qmx_matmul_i8");
    for (mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++)
        for (ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++, t++) {
            size_t K = Ks[t % (sizeof Ks / sizeof Ks[0])];
            int32_t zp = zps[t % 5];
            if (SMALL_TARGET && (Ms[mi] > 5 || Ns[ni] > 17)) continue;
            if (!run24(Ms[mi], Ns[ni], K, zp, (int)(t % 2))) {
                ok = 0;
                CHECK(0, "M %u N %u K %u zp %d mode %d", (unsigned)Ms[mi], (unsigned)Ns[ni],
                      (unsigned)K, (int)zp, (int)(t % 2));
            }
        }
    CHECK(ok, "shape sweep");
    for (ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {   /* every K on the mixed-tile shapes */
        CHECK(run24(7, 17, Ks[ki], -5, 0), "M 7 N 17 K %u", (unsigned)Ks[ki]);
        CHECK(run24(1, 9, Ks[ki], 100, 1), "M 1 N 9 K %u", (unsigned)Ks[ki]);
    }
    if (!SMALL_TARGET) {
        /* more rows than one L2 block of A (256 KiB / K rows) */
        CHECK(run24(70, 5, 4100, 7, 0), "M 70 K 4100");
        CHECK(run24(69, 18, 4096, -128, 1), "M 69 K 4096 random metadata");
        QMX_TEST_CASE("2:4 matmul near QMX_NM_MAX_K: the largest positive and negative sums");
        CHECK(run24(6, 17, 33024, 127, 2), "K 33024 max positive");
        CHECK(run24(5, 17, 33020, -128, 3), "K 33020 max negative");
        CHECK(run24(1, 9, 33020, 127, 2), "GEMV K 33020 max positive");
        CHECK(run24(1, 9, 33024, -128, 3), "GEMV K 33024 max negative");
        CHECK(run24(3, 3, 33020, -128, 1), "K 33020 random");
    }
}

static float Wf[32 * 128], Wfp[32 * 128], Af[16 * 128], vf[32 * 128], Cf[16 * 32];
static void test_float(void) {
    size_t rep;
    QMX_TEST_CASE("float sparse matmul: the same bits as the dense loop over the pruned weights");
    for (rep = 0; rep < 8; rep++) {
        int n = rep & 1 ? 2 : 1, m = rep & 2 ? 4 : 8;
        size_t N = 1 + rnd() % 32, M = 1 + rnd() % 16, K = (size_t)m * (1 + rnd() % (128 / (size_t)m));
        size_t vc = 0, mb = 0, i, j, k, g;
        int ok = 1, b;
        for (i = 0; i < N * K; i++) Wf[i] = ((float)(rnd() % 20001) - 10000.0f) * 1e-3f;
        for (i = 0; i < M * K; i++) Af[i] = ((float)(rnd() % 20001) - 10000.0f) * 1e-2f;
        CHECK_EQ_INT(qmx_nm_storage_size(N, K, n, m, &vc, &mb), QMX_OK, "size");
        CHECK_EQ_INT(qmx_nm_compress_f32(Wf, N, K, K, n, m, vf, vc, meta, mb), QMX_OK, "compress");
        /* pruned dense from the reference rule (largest |w|, lower index on ties) */
        for (j = 0; j < N; j++)
            for (g = 0; g < K / (size_t)m; g++) {
                int used[16] = {0}, t, bi;
                for (b = 0; b < m; b++) Wfp[j * K + g * (size_t)m + (size_t)b] = 0.0f;
                for (t = 0; t < n; t++) {
                    float bm = -1.0f;
                    bi = -1;
                    for (b = 0; b < m; b++) {
                        float a = Wf[j * K + g * (size_t)m + (size_t)b];
                        a = a < 0 ? -a : a;
                        if (!used[b] && a > bm) { bm = a; bi = b; }
                    }
                    used[bi] = 1;
                    Wfp[j * K + g * (size_t)m + (size_t)bi] = Wf[j * K + g * (size_t)m + (size_t)bi];
                }
            }
        CHECK_EQ_INT(qmx_nm_matmul_f32(M, N, K, Af, K, n, m, vf, vc, meta, mb, Cf, N), QMX_OK, "matmul");
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                float acc = 0.0f;
                for (k = 0; k < K; k++) {
                    volatile float p = Af[i * K + k] * Wfp[j * K + k];   /* no FMA contraction */
                    volatile float s = acc + p;   /* rounded to float at each add, also on x87 */
                    acc = s;
                }
                if (qmx_test_f32_bits(acc) != qmx_test_f32_bits(Cf[i * N + j])) ok = 0;
            }
        CHECK(ok, "%d:%d M %u N %u K %u differs", n, m, (unsigned)M, (unsigned)N, (unsigned)K);
    }
}

static void test_errors(void) {
    int8_t w[16] = {0}, v[16];
    uint8_t mt[16] = {0};
    int32_t c[4];
    float wf[16] = {0}, vf2[16], cf[4];
    size_t vc, mb;
    QMX_TEST_CASE("N:M argument errors are statuses; bad metadata is rejected");
    CHECK_EQ_INT(qmx_nm_storage_size(1, 8, 4, 4, &vc, &mb), QMX_ERR_ARG, "n == m");
    CHECK_EQ_INT(qmx_nm_storage_size(1, 8, 0, 4, &vc, &mb), QMX_ERR_ARG, "n 0");
    CHECK_EQ_INT(qmx_nm_storage_size(1, 8, 1, 1, &vc, &mb), QMX_ERR_ARG, "m 1");
    CHECK_EQ_INT(qmx_nm_storage_size(1, 8, 1, 257, &vc, &mb), QMX_ERR_ARG, "m 257");
    CHECK_EQ_INT(qmx_nm_storage_size(1, 10, 2, 4, &vc, &mb), QMX_ERR_SHAPE, "K not a multiple of m");
    CHECK_EQ_INT(qmx_nm_storage_size(0, 8, 2, 4, &vc, &mb), QMX_ERR_SIZE, "rows 0");
    CHECK_EQ_INT(qmx_nm_storage_size((size_t)-1, 8, 2, 4, &vc, &mb), QMX_ERR_OVERFLOW, "overflow");
    CHECK_EQ_INT(qmx_nm_compress_i8(w, 2, 8, 8, 2, 4, v, 7, mt, 2), QMX_ERR_BUFFER_TOO_SMALL, "values");
    CHECK_EQ_INT(qmx_nm_compress_i8(w, 2, 8, 8, 2, 4, v, 8, mt, 1), QMX_ERR_BUFFER_TOO_SMALL, "meta");
    CHECK_EQ_INT(qmx_nm_compress_i8(w, 2, 8, 7, 2, 4, v, 8, mt, 2), QMX_ERR_SHAPE, "ldw < K");
    CHECK_EQ_INT(qmx_nm_compress_i8(NULL, 2, 8, 8, 2, 4, v, 8, mt, 2), QMX_ERR_NULL, "NULL");
    wf[3] = qmx_test_bits_f32(0x7FC00000u);
    CHECK_EQ_INT(qmx_nm_compress_f32(wf, 1, 8, 8, 2, 4, vf2, 4, mt, 1), QMX_ERR_NONFINITE, "NaN weight");
    mt[0] = 0x03;   /* 1:3, 2-bit index 3 >= m */
    CHECK_EQ_INT(qmx_nm_matmul_i8(1, 1, 3, w, 3, 0, 1, 3, v, 1, mt, 1, c, 1), QMX_ERR_ARG, "index >= m");
    mt[0] = 0x01;   /* 2:4 indices 1, 0: not increasing */
    CHECK_EQ_INT(qmx_nm_decompress_i8(v, 2, mt, 1, 1, 4, 2, 4, w, 4), QMX_ERR_ARG, "decompress bad meta");
    mt[0] = 0x03;
    CHECK_EQ_INT(qmx_nm_matmul_f32(1, 1, 3, wf, 3, 1, 3, vf2, 1, mt, 1, cf, 1), QMX_ERR_ARG, "f32 index >= m");
    mt[0] = 0x01;
    mt[0] = 0x04;
    CHECK_EQ_INT(qmx_nm_matmul_i8(1, 1, 4, w, 4, 128, 2, 4, v, 2, mt, 1, c, 1), QMX_ERR_ARG, "a_zp 128");
    CHECK_EQ_INT(qmx_nm_matmul_i8(1, 1, 4, w, 3, 0, 2, 4, v, 2, mt, 1, c, 1), QMX_ERR_SHAPE, "lda");
    CHECK_EQ_INT(qmx_nm_matmul_i8(0, 1, 4, w, 4, 0, 2, 4, v, 2, mt, 1, c, 1), QMX_ERR_SIZE, "M 0");
    CHECK_EQ_INT(qmx_nm_matmul_i8(1, 1, 33028, w, 33028, 0, 2, 4, v, 2, mt, 1, c, 1), QMX_ERR_OVERFLOW, "K max");
    CHECK_EQ_INT(qmx_nm_matmul_i8(1, 1, 4, w, 4, 0, 2, 4, v, 1, mt, 1, c, 1), QMX_ERR_BUFFER_TOO_SMALL, "values");
    CHECK_EQ_INT(qmx_nm_matmul_i8(1, 1, 4, w, 4, 0, 2, 4, v, 2, mt, 1, c, 1), QMX_OK, "valid");
}

int main(void) {
    test_layout();
    test_prune_and_matmul();
    test_nm24_tiles();
    test_float();
    test_errors();
    return QMX_TEST_END();
}
