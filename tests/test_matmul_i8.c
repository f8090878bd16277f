/* test_matmul_i8.c - int8 x int8 -> int32 matmul with zero points (qmx_kernels.h).
 * Every result is compared with an independent int64 triple loop written here (not with
 * qmx_matmul_i8_ref, which is checked against it as well): random and edge shapes (1, odd, not
 * multiples of 16/64), both B layouts, strides wider than the rows, zero points, precomputed
 * and workspace weight sums, K at the overflow bound with the extreme values; every error
 * status with the outputs checked untouched. The qmx.h-first include order is used here on
 * purpose (check-headers covers qmx_kernels.h alone). */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_kernels.h"
#include "qmx_test.h"

#define SENT ((int32_t)0x5A5A5A5A)



static int64_t ref_elem(size_t K, const int8_t *A, size_t lda, const int8_t *B, size_t ldb,
                        int layout, int32_t azp, int32_t bzp, size_t m, size_t n) {
    int64_t s = 0;
    size_t k;
    for (k = 0; k < K; k++) {
        int64_t a = (int64_t)A[m * lda + k] - azp;
        int64_t b = (int64_t)(layout == QMX_B_NK ? B[n * ldb + k] : B[k * ldb + n]) - bzp;
        s += a * b;
    }
    return s;
}

typedef struct mm_case {
    size_t M, N, K, lda, ldb, ldc;
    int layout, fill_a, fill_b, use_sums, ws_misalign;
    int32_t azp, bzp;
} mm_case;

/* Runs qmx_matmul_i8 and qmx_matmul_i8_ref on one case; returns the number of mismatches. */
static long run_case(const mm_case *t) {
    size_t M = t->M, N = t->N, K = t->K;
    size_t a_n = (M - 1) * t->lda + K;
    size_t b_n = t->layout == QMX_B_NK ? (N - 1) * t->ldb + K : (K - 1) * t->ldb + N;
    size_t c_n = M * t->ldc, ws_bytes = 0, m, n;
    int8_t *A = (int8_t *)malloc(a_n), *B = (int8_t *)malloc(b_n);
    int32_t *C = (int32_t *)malloc(c_n * 4), *C2 = (int32_t *)malloc(c_n * 4);
    int32_t *sums = (int32_t *)malloc(N * 4);
    unsigned char *ws;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    long bad = 0;
    qmx_status st;
    CHECK(A && B && C && C2 && sums, "malloc");
    if (!A || !B || !C || !C2 || !sums) return 1;
    qmx_test_fill_i8(A, a_n, t->fill_a);
    qmx_test_fill_i8(B, b_n, t->fill_b);
    for (m = 0; m < c_n; m++) C[m] = C2[m] = SENT;
    o.a_zp = t->azp; o.b_zp = t->bzp; o.b_layout = (qmx_b_layout)t->layout;
    if (t->use_sums) {
        CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, N, K, t->ldb, o.b_layout, sums, N), QMX_OK,
                     "weight sums");
        o.b_sums = sums; o.b_sums_len = N;
    }
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(M, N, K, &o, &ws_bytes), QMX_OK, "ws size");
    ws = (unsigned char *)malloc(ws_bytes + 64);
    if (!ws) { CHECK(0, "malloc ws"); return 1; }
    st = qmx_matmul_i8(M, N, K, A, t->lda, B, t->ldb, C, t->ldc, &o, ws + t->ws_misalign, ws_bytes);
    CHECK_EQ_INT(st, QMX_OK, "matmul M=%u N=%u K=%u", (unsigned)M, (unsigned)N, (unsigned)K);
    CHECK_EQ_INT(qmx_matmul_i8_ref(M, N, K, A, t->lda, B, t->ldb, C2, t->ldc, &o), QMX_OK, "ref");
    for (m = 0; m < M; m++)
        for (n = 0; n < t->ldc; n++) {
            int32_t got = C[m * t->ldc + n], got2 = C2[m * t->ldc + n];
            if (n < N) {
                int64_t want = ref_elem(K, A, t->lda, B, t->ldb, t->layout, t->azp, t->bzp, m, n);
                if (got != want || got2 != want) {
                    if (bad++ < 3)
                        printf("  M=%u N=%u K=%u layout=%d zp=%d,%d sums=%d [%u][%u]: got %ld"
                               " ref %ld want %lld\n", (unsigned)M, (unsigned)N, (unsigned)K,
                               t->layout, (int)t->azp, (int)t->bzp, t->use_sums, (unsigned)m,
                               (unsigned)n, (long)got, (long)got2, (long long)want);
                }
            } else if (got != SENT || got2 != SENT) {
                if (bad++ < 3) printf("  padding of C written at [%u][%u]\n", (unsigned)m, (unsigned)n);
            }
        }
    free(A); free(B); free(C); free(C2); free(sums); free(ws);
    return bad;
}

#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__)
#  define BIG 1
#else
#  define BIG 0
#endif

static void random_shapes(void) {
    static const size_t edge[] = {1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129};
    int it, n_it = BIG ? 300 : 60;
    QMX_TEST_CASE("random shapes, both layouts, strides, zero points, sums vs int64 loop");
    for (it = 0; it < n_it; it++) {
        mm_case t;
        long bad;
        int r = it % 4;
        t.M = r == 0 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 70 : 20);
        t.N = r == 1 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 70 : 20);
        t.K = r == 2 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 300 : 140);
        if (it % 7 == 0) t.M = 1;
        if (it % 11 == 0) t.N = 1;
        if (it % 13 == 0) t.K = 1;
        t.layout = (it / 2) % 2 ? QMX_B_KN : QMX_B_NK;
        t.lda = t.K + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 9) : 0);
        t.ldb = (t.layout == QMX_B_NK ? t.K : t.N) + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 9) : 0);
        t.ldc = t.N + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 5) : 0);
        t.fill_a = t.fill_b = (it % 5 == 4) ? 1 : 0;
        t.use_sums = (int)(qmx_test_rand() & 1);
        t.ws_misalign = (int)(qmx_test_rand() % 8);
        switch (it % 6) {
        case 0: t.azp = 0; t.bzp = 0; break;
        case 1: t.azp = -128; t.bzp = 127; break;
        case 2: t.azp = 127; t.bzp = -128; break;
        default: t.azp = (int32_t)(qmx_test_rand() % 256) - 128; t.bzp = (int32_t)(qmx_test_rand() % 256) - 128;
        }
        bad = run_case(&t);
        CHECK(bad == 0, "case %d: %ld mismatches", it, bad);
    }
}

static void big_shapes(void) {
#if BIG
    /* the last two: [K,N] with few rows streams B in column slabs as wide as the workspace
     * holds (AVX-512 VNNI), here 3 and 4 of them */
    static const size_t shapes[][3] = {{1, 513, 4100}, {67, 130, 1025}, {128, 64, 64},
                                       {9, 300, 2049}, {260, 33, 1030}, {1, 2000, 200},
                                       {3, 3000, 520}};
    int i, l;
    QMX_TEST_CASE("larger shapes (64-bit hosts): several panels and B blocks");
    for (i = 0; i < 7; i++)
        for (l = 0; l < 2; l++) {
            mm_case t;
            t.M = shapes[i][0]; t.N = shapes[i][1]; t.K = shapes[i][2];
            t.layout = l ? QMX_B_KN : QMX_B_NK;
            t.lda = t.K + 3; t.ldb = (l ? t.N : t.K) + 1; t.ldc = t.N + 2;
            t.fill_a = t.fill_b = 0; t.use_sums = i & 1; t.ws_misalign = 3;
            t.azp = -7 * i + 5; t.bzp = 3 * i - 100;
            CHECK(run_case(&t) == 0, "big case %d layout %d", i, l);
        }
#endif
}

static void overflow_bound(void) {
    /* K = 33025: |C| reaches 255^2 * K = 2147450625 <= INT32_MAX. */
    static const int fills[][4] = { /* fill_a, fill_b, azp, bzp */
        {2, 2, 127, 127},   /* (-255)(-255) -> +max */
        {2, 3, 127, -128},  /* (-255)(+255) -> -max */
        {3, 2, -128, 127},  /* (+255)(-255) -> -max */
        {3, 3, -128, -128}, /* (+255)(+255) -> +max */
        {1, 1, 127, -128},  /* random extremes */
        {1, 1, 0, 0}, {2, 2, 0, 0}, {1, 2, -128, 127}};
    size_t i;
    int l;
    QMX_TEST_CASE("K = QMX_MATMUL_I8_MAX_K with extreme values and zero points");
    CHECK(QMX_MATMUL_I8_MAX_K == 33025, "bound");
    CHECK((int64_t)QMX_MATMUL_I8_MAX_K * 65025 <= INT32_MAX &&
          (int64_t)(QMX_MATMUL_I8_MAX_K + 1) * 65025 > INT32_MAX, "bound is tight");
    for (i = 0; i < sizeof fills / sizeof fills[0]; i++)
        for (l = 0; l < 2; l++) {
            mm_case t;
            t.M = (i & 2) ? 13 : 5; /* both the 4x4-tile and the packed-strip kernels */
            t.N = 6; t.K = QMX_MATMUL_I8_MAX_K;
            if (i == 0) t.K = QMX_MATMUL_I8_MAX_K; else if (i == 5) t.K = QMX_MATMUL_I8_MAX_K - 17;
            t.layout = l ? QMX_B_KN : QMX_B_NK;
            t.lda = t.K; t.ldb = l ? t.N + 1 : t.K; t.ldc = t.N;
            t.fill_a = fills[i][0]; t.fill_b = fills[i][1];
            t.azp = fills[i][2]; t.bzp = fills[i][3];
            t.use_sums = (int)(i & 1); t.ws_misalign = 1;
            CHECK(run_case(&t) == 0, "bound case %u layout %d", (unsigned)i, l);
        }
}

static void weight_sums(void) {
    int8_t B[7 * 9];
    int32_t s[8];
    size_t n, k, i;
    QMX_TEST_CASE("weight sums: both layouts, errors leave the output untouched");
    qmx_test_fill_i8(B, sizeof B, 0);
    CHECK(qmx_matmul_i8_weight_sums_size(7) == 28, "size");
    CHECK(qmx_matmul_i8_weight_sums_size(SIZE_MAX / 2) == 0, "size overflow");
    for (i = 0; i < 8; i++) s[i] = SENT;
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 8, 9, QMX_B_NK, s, 7), QMX_OK, "NK");
    for (n = 0; n < 7; n++) {
        int32_t w = 0;
        for (k = 0; k < 8; k++) w += B[n * 9 + k];
        CHECK_EQ_INT(s[n], w, "NK sum %u", (unsigned)n);
    }
    CHECK(s[7] == SENT, "past N untouched");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 8, 7, 9, QMX_B_KN, s, 8), QMX_OK, "KN");
    for (n = 0; n < 8; n++) {
        int32_t w = 0;
        for (k = 0; k < 7; k++) w += B[k * 9 + n];
        CHECK_EQ_INT(s[n], w, "KN sum %u", (unsigned)n);
    }
    for (i = 0; i < 8; i++) s[i] = SENT;
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(NULL, 7, 8, 9, QMX_B_NK, s, 8), QMX_ERR_NULL, "NULL B");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 8, 9, QMX_B_NK, NULL, 8), QMX_ERR_NULL, "NULL s");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 0, 8, 9, QMX_B_NK, s, 8), QMX_ERR_SIZE, "N=0");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 0, 9, QMX_B_NK, s, 8), QMX_ERR_SIZE, "K=0");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 10, 9, QMX_B_NK, s, 8), QMX_ERR_SHAPE, "ldb<K");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 10, 7, 9, QMX_B_KN, s, 10), QMX_ERR_SHAPE, "ldb<N");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 8, 9, QMX_B_NK, s, 6), QMX_ERR_BUFFER_TOO_SMALL, "len");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 8, 9, (qmx_b_layout)2, s, 8), QMX_ERR_ARG, "layout");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, 7, 33026, 40000, QMX_B_NK, s, 8), QMX_ERR_OVERFLOW, "K");
    CHECK_EQ_INT(qmx_matmul_i8_weight_sums(B, SIZE_MAX / 2, 8, 9, QMX_B_NK, s, SIZE_MAX),
                 QMX_ERR_OVERFLOW, "extent overflow");
    for (i = 0; i < 8; i++) CHECK(s[i] == SENT, "untouched after errors [%u]", (unsigned)i);
}

static void workspace_size(void) {
    size_t b = 7, b2 = 0;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    QMX_TEST_CASE("workspace size: documented formula, pure, errors");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(1, 1, 1, NULL, &b), QMX_OK, "1x1x1");
    /* 64 + r64(4M) + r64(4N) + r64(max(2*min(M,64)*Kp, min(M,256)*Kp)) + r64(max(4K, 32*Kp)),
     * Kp = K rounded up to 4 */
    CHECK_EQ_INT(b, 64 + 64 + 64 + 64 + 128, "1x1x1 bytes");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(100, 17, 1000, NULL, &b), QMX_OK, "100x17x1000");
    CHECK_EQ_INT(b, 64 + 448 + 128 + 128000 + 32000, "100x17x1000 bytes");
    o.b_layout = QMX_B_KN; o.a_zp = 3;
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(100, 17, 1000, &o, &b2), QMX_OK, "with opts");
    CHECK_EQ_INT(b2, b, "opts do not change the size");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(300, 5, 3001, NULL, &b), QMX_OK, "300x5x3001");
    CHECK_EQ_INT(b, 64 + 1216 + 64 + 769024 + 96128, "300x5x3001 bytes");
    b = 7;
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(0, 1, 1, NULL, &b), QMX_ERR_SIZE, "M=0");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(1, 0, 1, NULL, &b), QMX_ERR_SIZE, "N=0");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(1, 1, 0, NULL, &b), QMX_ERR_SIZE, "K=0");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(SIZE_MAX / 4, 1, 1, NULL, &b), QMX_ERR_OVERFLOW, "M");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(64, 1, SIZE_MAX / 32, NULL, &b), QMX_ERR_OVERFLOW, "K");
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(1, 1, 1, NULL, NULL), QMX_ERR_NULL, "NULL");
    CHECK(b == 7, "untouched");
}

/* Each call must fail with the status and leave C, the sums and the workspace untouched. */
static void errors_leave_outputs_untouched(void) {
    enum { M = 3, N = 5, K = 7 };
    int8_t A[M * 8], B[N * 8];
    int32_t C[M * 6], sums[N];
    unsigned char ws[1024];
    size_t need = 0, i;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT, bad = QMX_ZERO_INIT;
    qmx_status st;
    int pass;
    QMX_TEST_CASE("errors: a status, and C/workspace untouched");
    qmx_test_fill_i8(A, sizeof A, 0);
    qmx_test_fill_i8(B, sizeof B, 0);
    CHECK_EQ_INT(qmx_matmul_i8_workspace_size(M, N, K, NULL, &need), QMX_OK, "need");
    CHECK(need <= sizeof ws, "ws fits");
    for (pass = 0; pass < 2; pass++) { /* 0: qmx_matmul_i8, 1: qmx_matmul_i8_ref */
#define TRY(want, m, n, k, a, lda, b, ldb, c, ldc, op, w, wb, what)                                \
        do {                                                                                   \
            for (i = 0; i < M * 6; i++) C[i] = SENT;                                           \
            for (i = 0; i < sizeof ws; i++) ws[i] = 0xA5;                                      \
            st = pass == 0 ? qmx_matmul_i8(m, n, k, a, lda, b, ldb, c, ldc, op, w, wb)         \
                           : qmx_matmul_i8_ref(m, n, k, a, lda, b, ldb, c, ldc, op);           \
            if (pass == 1 && (want == QMX_ERR_BUFFER_TOO_SMALL || (w) == NULL))                \
                CHECK(st == QMX_OK || st == want, "ref: %s", what);                            \
            else                                                                               \
                CHECK_EQ_INT(st, want, "%s (pass %d)", what, pass);                            \
            if (st != QMX_OK) {                                                                \
                for (i = 0; i < M * 6; i++) CHECK(C[i] == SENT, "%s: C[%u] written", what, (unsigned)i); \
                for (i = 0; i < sizeof ws; i++)                                                \
                    if (ws[i] != 0xA5) { CHECK(0, "%s: workspace written", what); break; }     \
            }                                                                                  \
        } while (0)
        TRY(QMX_OK, M, N, K, A, 8, B, 8, C, 6, &o, ws, need, "valid call");
        TRY(QMX_ERR_NULL, M, N, K, (const int8_t *)NULL, 8, B, 8, C, 6, &o, ws, need, "A NULL");
        TRY(QMX_ERR_NULL, M, N, K, A, 8, (const int8_t *)NULL, 8, C, 6, &o, ws, need, "B NULL");
        TRY(QMX_ERR_NULL, M, N, K, A, 8, B, 8, (int32_t *)NULL, 6, &o, ws, need, "C NULL");
        TRY(QMX_ERR_NULL, M, N, K, A, 8, B, 8, C, 6, &o, (void *)NULL, need, "ws NULL");
        TRY(QMX_ERR_SIZE, 0, N, K, A, 8, B, 8, C, 6, &o, ws, need, "M=0");
        TRY(QMX_ERR_SIZE, M, 0, K, A, 8, B, 8, C, 6, &o, ws, need, "N=0");
        TRY(QMX_ERR_SIZE, M, N, 0, A, 8, B, 8, C, 6, &o, ws, need, "K=0");
        TRY(QMX_ERR_SHAPE, M, N, K, A, 6, B, 8, C, 6, &o, ws, need, "lda<K");
        TRY(QMX_ERR_SHAPE, M, N, K, A, 8, B, 6, C, 6, &o, ws, need, "ldb<K");
        TRY(QMX_ERR_SHAPE, M, N, K, A, 8, B, 8, C, 4, &o, ws, need, "ldc<N");
        TRY(QMX_ERR_BUFFER_TOO_SMALL, M, N, K, A, 8, B, 8, C, 6, &o, ws, need - 1, "ws short");
        TRY(QMX_ERR_BUFFER_TOO_SMALL, M, N, K, A, 8, B, 8, C, 6, &o, ws, 0, "ws 0 bytes");
        TRY(QMX_ERR_OVERFLOW, M, N, 33026, A, 40000, B, 40000, C, 6, &o, ws, sizeof ws, "K > bound");
        TRY(QMX_ERR_OVERFLOW, SIZE_MAX / 4, N, K, A, 8, B, 8, C, 6, &o, ws, sizeof ws, "M*lda");
        TRY(QMX_ERR_OVERFLOW, M, N, K, A, SIZE_MAX / 2, B, 8, C, 6, &o, ws, sizeof ws, "lda huge");
        TRY(QMX_ERR_OVERFLOW, M, SIZE_MAX / 4, K, A, 8, B, 8, C, SIZE_MAX / 4, &o, ws, sizeof ws, "N*ldb");
        TRY(QMX_ERR_OVERFLOW, M, N, K, A, 8, B, 8, C, SIZE_MAX / 4, &o, ws, sizeof ws, "M*ldc*4");
        TRY(QMX_ERR_OVERFLOW, 2, N, K, A, 8, B, 8, C, SIZE_MAX / 4 - 2, &o, ws, sizeof ws, "bytes of C");
        bad = o; bad.a_zp = 128;
        TRY(QMX_ERR_ARG, M, N, K, A, 8, B, 8, C, 6, &bad, ws, need, "a_zp 128");
        bad = o; bad.a_zp = -129;
        TRY(QMX_ERR_ARG, M, N, K, A, 8, B, 8, C, 6, &bad, ws, need, "a_zp -129");
        bad = o; bad.b_zp = 128;
        TRY(QMX_ERR_ARG, M, N, K, A, 8, B, 8, C, 6, &bad, ws, need, "b_zp 128");
        bad = o; bad.b_zp = INT32_MIN;
        TRY(QMX_ERR_ARG, M, N, K, A, 8, B, 8, C, 6, &bad, ws, need, "b_zp INT32_MIN");
        bad = o; bad.b_layout = (qmx_b_layout)7;
        TRY(QMX_ERR_ARG, M, N, K, A, 8, B, 8, C, 6, &bad, ws, need, "layout");
        bad = o; bad.b_layout = QMX_B_KN;
        TRY(QMX_ERR_SHAPE, M, N, K, A, 8, B, 4, C, 6, &bad, ws, need, "KN ldb<N");
        TRY(QMX_OK, M, N, K, A, 8, B, 5, C, 6, &bad, ws, need, "KN ldb=N");
        TRY(QMX_ERR_OVERFLOW, M, N, K, A, 8, B, SIZE_MAX / 4, C, 6, &bad, ws, sizeof ws, "KN K*ldb");
        for (i = 0; i < N; i++) sums[i] = 0;
        bad = o; bad.b_sums = sums; bad.b_sums_len = N - 1;
        if (pass == 0)
            TRY(QMX_ERR_BUFFER_TOO_SMALL, M, N, K, A, 8, B, 8, C, 6, &bad, ws, need, "sums short");
        TRY(QMX_OK, M, N, K, A, 8, B, 8, C, 6, (const qmx_matmul_i8_opts *)NULL, ws, need,
            "opts NULL = defaults");
#undef TRY
    }
}

static void defaults_match_zero_opts(void) {
    int8_t A[2 * 3] = {1, -2, 3, -128, 127, 0}, B[2 * 3] = {-1, 5, 2, 127, -128, 7};
    int32_t C[4], D[4];
    unsigned char ws[512];
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    QMX_TEST_CASE("hand-checked 2x2x3, NULL opts == zero-initialised opts");
    CHECK_EQ_INT(qmx_matmul_i8(2, 2, 3, A, 3, B, 3, C, 2, NULL, ws, sizeof ws), QMX_OK, "NULL opts");
    CHECK_EQ_INT(qmx_matmul_i8(2, 2, 3, A, 3, B, 3, D, 2, &o, ws, sizeof ws), QMX_OK, "zero opts");
    CHECK_EQ_INT(C[0], -1 - 10 + 6, "C00");
    CHECK_EQ_INT(C[1], 127 + 256 + 21, "C01");
    CHECK_EQ_INT(C[2], 128 + 635 + 0, "C10");
    CHECK_EQ_INT(C[3], -128 * 127 + 127 * -128 + 0, "C11");
    CHECK(memcmp(C, D, sizeof C) == 0, "same");
    o.a_zp = 1; o.b_zp = -1;
    CHECK_EQ_INT(qmx_matmul_i8(2, 2, 3, A, 3, B, 3, C, 2, &o, ws, sizeof ws), QMX_OK, "zp");
    CHECK_EQ_INT(C[0], 0 * 0 + (-3) * 6 + 2 * 3, "C00 with zero points");
}

int main(void) {
    qmx_test_seed(12345u); /* this program's data */
    defaults_match_zero_opts();
    workspace_size();
    weight_sums();
    errors_leave_outputs_untouched();
    random_shapes();
    big_shapes();
    overflow_bound();
    return QMX_TEST_END();
}
