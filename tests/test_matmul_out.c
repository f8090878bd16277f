/* test_matmul_out.c - the output stages on the int8 matmul (qmx_kernels.h):
 *   qmx_fully_connected_i8  (int32 accumulators -> qmx_requant_config output stage), and
 *   qmx_matmul_i8_f32       (per-tensor / per-row / per-column / per-block float scales).
 * Independent references written here: int64 naive dot products; for the fully-connected the
 * scalar qmx_requantize / _single_rounding / _float (checked against gemmlowp/TFLite rows in
 * test_requant.c) plus the bias wrap and the clamp, and also qmx_matmul_i8 followed by
 * qmx_requantize_array (the contract: bit-identical to that pair); for the float output the
 * documented order written out with volatile floats (every step rounded to float, no
 * contraction) compared bit for bit, and a double-precision sum of the same terms within
 * (nblk + 4) * 2^-24 * sum|terms| + 1e-37 (the float error bound of 3 rounded operations per
 * term plus nblk - 1 additions). Random shapes (1, odd, past the 64-row panel and the 256-column
 * tile), strides, zero points, every mode, and every error status with sentinel outputs. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"

#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__)
#  define BIG 1
#else
#  define BIG 0
#endif

static int32_t rnd_i32(int32_t lo, int32_t hi) {
    return (int32_t)((int64_t)lo + (int64_t)(qmx_test_rand() % (uint32_t)((int64_t)hi - lo + 1)));
}
/* uniform-ish float in [lo, hi) */
static float rnd_f(float lo, float hi) { return lo + (hi - lo) * (float)(qmx_test_rand() >> 8) * (1.0f / 16777216.0f); }


/* sum over k in [k0, k1) of (A[m][k] - azp) * B[n][k], in int64 */
static int64_t ref_dot(const int8_t *A, size_t lda, const int8_t *B, size_t ldb, int32_t azp,
                       size_t m, size_t n, size_t k0, size_t k1) {
    int64_t s = 0;
    size_t k;
    for (k = k0; k < k1; k++) s += ((int64_t)A[m * lda + k] - azp) * (int64_t)B[n * ldb + k];
    return s;
}

static size_t r64(size_t x) { return (x + 63u) & ~(size_t)63u; }
static size_t ws_formula(size_t M, size_t N, size_t K) {
    size_t mb = M < 64 ? M : 64, nb = N < QMX_MATMUL_TILE_N ? N : QMX_MATMUL_TILE_N;
    return 64 + 1024 + r64(4 * nb) + r64(2 * mb * ((K + 3) / 4 * 4)) + r64(4 * mb * nb);
}

/* ============================== fully-connected ============================== */
typedef struct fc_case {
    size_t M, N, K, lda, ldw, ldo;
    int fill_a, fill_w, misalign, use_bias, bias_big;
    int32_t azp;
    int mode, per_channel, i16, act, raw_mult;
} fc_case;

static long run_fc(const fc_case *t) {
    size_t M = t->M, N = t->N, K = t->K, m, n, ch;
    size_t a_n = (M - 1) * t->lda + K, w_n = (N - 1) * t->ldw + K, o_n = M * t->ldo;
    size_t esz = t->i16 ? 2 : 1, ws_bytes = 0, np = t->per_channel ? N : 1;
    int8_t *A = (int8_t *)malloc(a_n), *W = (int8_t *)malloc(w_n);
    unsigned char *out = (unsigned char *)malloc(o_n * esz), *out2 = (unsigned char *)malloc(M * N * esz);
    int32_t *bias = (int32_t *)malloc(N * 4), *mult = (int32_t *)malloc(np * 4);
    int32_t *acc = (int32_t *)malloc(M * N * 4);
    int *shifts = (int *)malloc(np * sizeof(int));
    float *scales = (float *)malloc(np * 4);
    unsigned char *ws = NULL;
    qmx_requant_config rq = QMX_ZERO_INIT;
    qmx_matmul_i8_opts mo = QMX_ZERO_INIT;
    int32_t lo = t->i16 ? -32768 : -128, hi = t->i16 ? 32767 : 127, amin, amax;
    long bad = 0;
    if (!A || !W || !out || !out2 || !bias || !mult || !acc || !shifts || !scales) {
        CHECK(0, "malloc");
        return 1;
    }
    qmx_test_fill_i8(A, a_n, t->fill_a);
    qmx_test_fill_i8(W, w_n, t->fill_w);
    memset(out, 0xA5, o_n * esz);
    for (n = 0; n < N; n++)
        bias[n] = t->bias_big ? (int32_t)qmx_test_rand() : rnd_i32(-(1 << 20), 1 << 20);
    for (ch = 0; ch < np; ch++) {
        if (t->mode == QMX_REQUANT_FLOAT) {
            scales[ch] = rnd_f(1e-6f, 0.02f);
            if (qmx_test_rand() % 8 == 0) scales[ch] = rnd_f(0.5f, 300.0f); /* saturating outputs */
        } else if (t->raw_mult) { /* any valid (multiplier, shift) */
            mult[ch] = (int32_t)qmx_test_rand();
            if (t->mode == QMX_REQUANT_SINGLE_ROUNDING && mult[ch] < 0) mult[ch] = -(mult[ch] + 1);
            shifts[ch] = (int)rnd_i32(-31, 30);
        } else {
            double real = (double)rnd_f(1e-6f, 0.02f);
            qmx_status st = t->mode == QMX_REQUANT_SINGLE_ROUNDING
                                ? qmx_quantize_multiplier_single_rounding(real, &mult[ch], &shifts[ch])
                                : qmx_quantize_multiplier(real, &mult[ch], &shifts[ch]);
            CHECK_EQ_INT(st, QMX_OK, "quantize_multiplier");
        }
    }
    rq.mode = (qmx_requant_mode)t->mode;
    rq.per_channel = t->per_channel;
    rq.multipliers = mult; rq.shifts = shifts; rq.scales = scales;
    rq.bias = t->use_bias ? bias : NULL;
    rq.out_dtype = t->i16 ? QMX_INT16 : (qmx_test_rand() & 1 ? QMX_INT8 : QMX_DTYPE_INVALID);
    rq.output_zero_point = rnd_i32(lo, hi);
    if (t->act) {
        rq.act_min = rnd_i32(lo, hi); rq.act_max = rnd_i32(rq.act_min, hi);
    }
    amin = rq.act_min; amax = rq.act_max;
    if (amin == 0 && amax == 0) { amin = lo; amax = hi; }

    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(M, N, K, &ws_bytes), QMX_OK, "ws size");
    CHECK_EQ_INT(ws_bytes, ws_formula(M, N, K), "ws formula");
    ws = (unsigned char *)malloc(ws_bytes + 64);
    if (!ws) { CHECK(0, "malloc ws"); return 1; }
    CHECK_EQ_INT(qmx_fully_connected_i8(M, N, K, A, t->lda, t->azp, W, t->ldw, &rq, out, t->ldo,
                                        ws + t->misalign, ws_bytes), QMX_OK,
                 "fc M=%u N=%u K=%u", (unsigned)M, (unsigned)N, (unsigned)K);
    /* second reference: qmx_matmul_i8 then qmx_requantize_array */
    {
        size_t wsz = 0;
        unsigned char *ws2;
        mo.a_zp = t->azp;
        CHECK_EQ_INT(qmx_matmul_i8_workspace_size(M, N, K, &mo, &wsz), QMX_OK, "mm ws");
        ws2 = (unsigned char *)malloc(wsz);
        CHECK(ws2 != NULL, "malloc");
        if (ws2) {
            CHECK_EQ_INT(qmx_matmul_i8(M, N, K, A, t->lda, W, t->ldw, acc, N, &mo, ws2, wsz), QMX_OK, "mm");
            CHECK_EQ_INT(qmx_requantize_array(&rq, acc, M, N, out2, M * N * esz), QMX_OK, "array");
            free(ws2);
        }
    }
    for (m = 0; m < M; m++)
        for (n = 0; n < t->ldo; n++) {
            size_t o = m * t->ldo + n;
            int32_t got = t->i16 ? ((int16_t *)(void *)out)[o] : ((int8_t *)out)[o];
            if (n < N) {
                size_t pi = t->per_channel ? n : 0;
                int64_t d = ref_dot(A, t->lda, W, t->ldw, t->azp, m, n, 0, K);
                int32_t a = (int32_t)d, v, want, got2;
                int64_t w;
                if (t->use_bias) { /* wrapping int32 add */
                    int64_t s = (int64_t)a + bias[n];
                    if (s > INT32_MAX) s -= (int64_t)1 << 32;
                    if (s < INT32_MIN) s += (int64_t)1 << 32;
                    a = (int32_t)s;
                }
                if (t->mode == QMX_REQUANT_DOUBLE_ROUNDING) v = qmx_requantize(a, mult[pi], shifts[pi]);
                else if (t->mode == QMX_REQUANT_SINGLE_ROUNDING)
                    v = qmx_requantize_single_rounding(a, mult[pi], shifts[pi]);
                else v = qmx_requantize_float(a, scales[pi]);
                w = (int64_t)v + rq.output_zero_point;
                want = (int32_t)(w < amin ? amin : (w > amax ? amax : w));
                got2 = t->i16 ? ((int16_t *)(void *)out2)[m * N + n] : ((int8_t *)out2)[m * N + n];
                if (got != want || got2 != want) {
                    if (bad++ < 3)
                        printf("  fc M=%u N=%u K=%u mode=%d pc=%d i16=%d [%u][%u]: got %ld array %ld"
                               " want %ld\n", (unsigned)M, (unsigned)N, (unsigned)K, t->mode,
                               t->per_channel, t->i16, (unsigned)m, (unsigned)n, (long)got,
                               (long)got2, (long)want);
                }
            } else {
                int32_t sent = t->i16 ? (int16_t)(uint16_t)0xA5A5 : (int8_t)(uint8_t)0xA5;
                if (got != sent && bad++ < 3)
                    printf("  fc padding written at [%u][%u]\n", (unsigned)m, (unsigned)n);
            }
        }
    free(A); free(W); free(out); free(out2); free(bias); free(mult); free(acc); free(shifts);
    free(scales); free(ws);
    return bad;
}

static const size_t edge[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 127};

static void fc_random(void) {
    int it, n_it = BIG ? 400 : 60;
    QMX_TEST_CASE("fully-connected: random shapes, strides, modes, per-channel, bias, clamps, int8/int16");
    for (it = 0; it < n_it; it++) {
        fc_case t;
        long bad;
        int r = it % 4;
        t.M = r == 0 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 70 : 9);
        t.N = r == 1 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 300 : 20);
        t.K = r == 2 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 300 : 80);
        if (it % 7 == 0) t.M = 1;
        t.lda = t.K + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 9) : 0);
        t.ldw = t.K + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 9) : 0);
        t.ldo = t.N + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 5) : 0);
        t.fill_a = qmx_test_rand() % 8 == 0 ? 1 : 0;
        t.fill_w = qmx_test_rand() % 8 == 0 ? 1 : 0;
        t.misalign = (int)(qmx_test_rand() % 64);
        t.use_bias = (int)(qmx_test_rand() % 4 != 0);
        t.bias_big = qmx_test_rand() % 8 == 0;
        t.azp = qmx_test_rand() % 3 == 0 ? 0 : rnd_i32(-128, 127);
        t.mode = it % 3;
        t.per_channel = (int)(qmx_test_rand() & 1);
        t.i16 = qmx_test_rand() % 3 == 0;
        t.act = qmx_test_rand() % 3 == 0;
        t.raw_mult = qmx_test_rand() % 4 == 0;
        bad = run_fc(&t);
        CHECK(bad == 0, "case %d: %ld mismatches", it, bad);
    }
}

static void fc_edges(void) {
    /* M >= 16 with K past 1024 (the AVX-512 VNNI register-tile path takes B in 1024-byte
     * chunks of K), a ragged K and an odd last row panel; the extremes at QMX_MATMUL_I8_MAX_K
     * with M = 2 and with M = 16 (the two paths) */
    static const size_t shapes[][3] = {{65, 257, 3}, {64, 256, 5}, {1, 1, 1}, {129, 3, 17},
                                       {2, 3, QMX_MATMUL_I8_MAX_K}, {17, 40, 3001},
                                       {70, 300, 2050}, {16, 33, QMX_MATMUL_I8_MAX_K}};
    size_t i, n_shapes = BIG ? 8 : 5;
    int mode;
    QMX_TEST_CASE("fully-connected: panel/tile edges, K = QMX_MATMUL_I8_MAX_K with extremes");
    for (i = 0; i < n_shapes; i++)
        for (mode = 0; mode < 3; mode++) {
            fc_case t;
            int ext = shapes[i][2] == QMX_MATMUL_I8_MAX_K;
            t.M = shapes[i][0]; t.N = shapes[i][1]; t.K = shapes[i][2];
            t.lda = t.K; t.ldw = t.K + 1; t.ldo = t.N + 2;
            t.fill_a = ext ? 2 : 0; t.fill_w = ext ? 1 : 0;
            t.misalign = 3; t.use_bias = 1; t.bias_big = 0;
            t.azp = ext ? 127 : -5;
            t.mode = mode; t.per_channel = (int)(i & 1); t.i16 = (int)(i & 1); t.act = 0;
            t.raw_mult = 0;
            CHECK(run_fc(&t) == 0, "shape %u mode %d", (unsigned)i, mode);
        }
}

/* ============================== dequant-on-output ============================== */
typedef struct f32_case {
    size_t M, N, K, lda, ldb, ldc, bs;
    int fill_a, fill_b, misalign, a_per_row, b_per_col, tiny;
    int32_t azp;
} f32_case;

static float rnd_scale(int tiny) {
    if (tiny && qmx_test_rand() % 4 == 0) return rnd_f(1e-30f, 2e-30f); /* products underflow */
    return rnd_f(1.0f / 1024, 2.0f);
}

static long run_f32(const f32_case *t) {
    size_t M = t->M, N = t->N, K = t->K, m, n, i, blk;
    size_t nblk = (K + t->bs - 1) / t->bs;
    size_t a_n = (M - 1) * t->lda + K, b_n = (N - 1) * t->ldb + K, c_n = M * t->ldc, ws_bytes = 0;
    size_t na = (t->a_per_row ? M : 1) * nblk, nb = (t->b_per_col ? N : 1) * nblk;
    int8_t *A = (int8_t *)malloc(a_n), *B = (int8_t *)malloc(b_n);
    float *C = (float *)malloc(c_n * 4), *sa = (float *)malloc(na * 4), *sb = (float *)malloc(nb * 4);
    unsigned char *ws;
    qmx_matmul_i8_f32_scales s = QMX_ZERO_INIT;
    long bad = 0;
    if (!A || !B || !C || !sa || !sb) { CHECK(0, "malloc"); return 1; }
    qmx_test_fill_i8(A, a_n, t->fill_a);
    qmx_test_fill_i8(B, b_n, t->fill_b);
    for (i = 0; i < c_n; i++) C[i] = qmx_test_bits_f32(0x7FC0DEADu);
    for (i = 0; i < na; i++) sa[i] = rnd_scale(t->tiny);
    for (i = 0; i < nb; i++) sb[i] = rnd_scale(t->tiny);
    s.a_scales = sa; s.a_scales_len = na; s.a_per_row = t->a_per_row; s.a_zp = t->azp;
    s.b_scales = sb; s.b_scales_len = nb; s.b_per_col = t->b_per_col; s.block_size = t->bs;
    CHECK_EQ_INT(qmx_matmul_i8_f32_workspace_size(M, N, K, &ws_bytes), QMX_OK, "ws size");
    CHECK_EQ_INT(ws_bytes, ws_formula(M, N, K), "ws formula");
    ws = (unsigned char *)malloc(ws_bytes + 64);
    if (!ws) { CHECK(0, "malloc ws"); return 1; }
    CHECK_EQ_INT(qmx_matmul_i8_f32(M, N, K, A, t->lda, B, t->ldb, C, t->ldc, &s, ws + t->misalign,
                                   ws_bytes), QMX_OK, "f32 M=%u N=%u K=%u bs=%u", (unsigned)M,
                 (unsigned)N, (unsigned)K, (unsigned)t->bs);
    for (m = 0; m < M; m++)
        for (n = 0; n < t->ldc; n++) {
            float got = C[m * t->ldc + n];
            if (n < N) {
                volatile float sum = 0.0f, p;
                double dsum = 0.0, dabs = 0.0, tol;
                for (blk = 0; blk < nblk; blk++) {
                    size_t k0 = blk * t->bs, k1 = k0 + t->bs < K ? k0 + t->bs : K;
                    int32_t part = (int32_t)ref_dot(A, t->lda, B, t->ldb, t->azp, m, n, k0, k1);
                    float fa = sa[(t->a_per_row ? m * nblk : 0) + blk];
                    float fb = sb[(t->b_per_col ? n * nblk : 0) + blk];
                    double term = (double)part * (double)fa * (double)fb;
                    /* the documented order: each step a rounded float */
                    p = (float)part;
                    p = p * fa;
                    p = p * fb;
                    sum = sum + p;
                    dsum += term;
                    dabs += term < 0 ? -term : term;
                }
                tol = (double)(nblk + 4) * (1.0 / 16777216.0) * dabs + 1e-37;
                if (qmx_test_f32_bits(got) != qmx_test_f32_bits(sum) ||
                    !((double)got - dsum <= tol && dsum - (double)got <= tol)) {
                    if (bad++ < 3)
                        printf("  f32 M=%u N=%u K=%u bs=%u [%u][%u]: got %.9g (0x%08lx) want %.9g"
                               " (0x%08lx) double %.17g tol %.3g\n", (unsigned)M, (unsigned)N,
                               (unsigned)K, (unsigned)t->bs, (unsigned)m, (unsigned)n, (double)got,
                               (unsigned long)qmx_test_f32_bits(got), (double)sum,
                               (unsigned long)qmx_test_f32_bits(sum), dsum, tol);
                }
            } else if (qmx_test_f32_bits(got) != 0x7FC0DEADu && bad++ < 3) {
                printf("  f32 padding written at [%u][%u]\n", (unsigned)m, (unsigned)n);
            }
        }
    free(A); free(B); free(C); free(sa); free(sb); free(ws);
    return bad;
}

/* The output stage at the int32 edges: with K = 1 and A = W = 0 the accumulator of column n
 * is bias[n], so every (accumulator, multiplier, shift) combination below reaches the stage
 * (AVX-512 runs it 16 lanes at a time) and is compared with the scalar qmx_requantize*. */
static void fc_stage_edges(void) {
    static const int32_t accs[] = {INT32_MIN, INT32_MIN + 1, -1073741825, -1073741824, -65537,
                                   -256, -129, -128, -3, -2, -1, 0, 1, 2, 3, 127, 128, 255,
                                   65536, 1073741823, 1073741824, INT32_MAX - 1, INT32_MAX};
    static const int32_t mults[] = {INT32_MIN, INT32_MIN + 1, -1073741824, -1, 0, 1, 1073741824,
                                    1073741825, 1518500250, INT32_MAX};
    static const int shifts_[] = {-31, -30, -17, -8, -1, 0, 1, 7, 29, 30};
    static const float scales_[] = {1e-10f, 1e-6f, 0.0078125f, 0.3f, 0.5f, 1.0f, 1.5f, 3.0e9f};
    enum { NA = sizeof accs / sizeof accs[0], NM = sizeof mults / sizeof mults[0],
           NS = sizeof shifts_ / sizeof shifts_[0], NF = sizeof scales_ / sizeof scales_[0],
           NCH = NA * NM * NS };
    static int32_t bias[NCH], mu[NCH];
    static int sh[NCH];
    static float sc[NCH];
    static int8_t W[NCH];
    static int16_t out[3 * NCH];
    int8_t A[3] = {0, 0, 0};
    int mode, i16, variant;
    size_t n, ws_bytes, m;
    unsigned char *ws;
    QMX_TEST_CASE("fully-connected: the output stage at the int32 edges, every mode (A = W = 0, K = 1)");
    for (n = 0; n < NCH; n++) {
        bias[n] = accs[n % NA];
        mu[n] = mults[(n / NA) % NM];
        sh[n] = shifts_[n / (NA * NM)];
        sc[n] = scales_[(n / NA) % NF];
        W[n] = 0;
    }
    if (qmx_fully_connected_i8_workspace_size(3, NCH, 1, &ws_bytes) != QMX_OK) { CHECK(0, "ws"); return; }
    ws = (unsigned char *)malloc(ws_bytes);
    if (!ws) { CHECK(0, "malloc"); return; }
    for (mode = 0; mode < 3; mode++)
        for (i16 = 0; i16 < 2; i16++)
            for (variant = 0; variant < 2; variant++) {
                qmx_requant_config rq = QMX_ZERO_INIT;
                long bad = 0;
                int32_t amin, amax;
                rq.mode = (qmx_requant_mode)mode;
                rq.per_channel = 1;
                rq.multipliers = mu; rq.shifts = sh; rq.scales = sc; rq.bias = bias;
                rq.out_dtype = i16 ? QMX_INT16 : QMX_INT8;
                rq.output_zero_point = variant ? (i16 ? -300 : 5) : 0;
                rq.act_min = variant ? (i16 ? -1000 : -100) : 0;
                rq.act_max = variant ? (i16 ? 20000 : 90) : 0;
                amin = variant ? rq.act_min : (i16 ? -32768 : -128);
                amax = variant ? rq.act_max : (i16 ? 32767 : 127);
                /* single rounding takes multipliers >= 0 only: use |m| (INT32_MIN -> MAX) */
                if (mode == QMX_REQUANT_SINGLE_ROUNDING)
                    for (n = 0; n < NCH; n++) mu[n] = mu[n] >= 0 ? mu[n] : (mu[n] == INT32_MIN ? INT32_MAX : -mu[n]);
                CHECK_EQ_INT(qmx_fully_connected_i8(3, NCH, 1, A, 1, 0, W, 1, &rq, out, NCH, ws, ws_bytes),
                             QMX_OK, "fc mode %d i16 %d", mode, i16);
                for (m = 0; m < 3; m++)
                    for (n = 0; n < NCH; n++) {
                        int32_t v = mode == QMX_REQUANT_DOUBLE_ROUNDING ? qmx_requantize(bias[n], mu[n], sh[n])
                                  : mode == QMX_REQUANT_SINGLE_ROUNDING
                                      ? qmx_requantize_single_rounding(bias[n], mu[n], sh[n])
                                      : qmx_requantize_float(bias[n], sc[n]);
                        int64_t w = (int64_t)v + rq.output_zero_point;
                        int32_t want = (int32_t)(w < amin ? amin : (w > amax ? amax : w));
                        int32_t got = i16 ? out[m * NCH + n] : ((int8_t *)out)[m * NCH + n];
                        if (got != want && bad++ < 3)
                            printf("  mode %d i16 %d acc %ld mult %ld shift %d scale %g: got %ld want %ld\n",
                                   mode, i16, (long)bias[n], (long)mu[n], sh[n], (double)sc[n],
                                   (long)got, (long)want);
                    }
                CHECK(bad == 0, "mode %d i16 %d variant %d: %ld mismatches", mode, i16, variant, bad);
                for (n = 0; n < NCH; n++) mu[n] = mults[(n / NA) % NM];
            }
    free(ws);
}

static void f32_random(void) {
    int it, n_it = BIG ? 400 : 60;
    QMX_TEST_CASE("int8 -> float: random shapes, strides, per-tensor/row/column/block scales");
    for (it = 0; it < n_it; it++) {
        f32_case t;
        long bad;
        int r = it % 4, g = it % 5;
        t.M = r == 0 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 70 : 9);
        t.N = r == 1 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 300 : 20);
        t.K = r == 2 ? edge[qmx_test_rand() % 16] : qmx_test_rand_range(1, BIG ? 300 : 80);
        if (it % 7 == 0) t.M = 1;
        /* block size: K (one block), a divisor, ragged, 1, larger than K */
        if (g == 0) t.bs = t.K;
        else if (g == 1) { t.bs = qmx_test_rand_range(1, t.K); while (t.K % t.bs) t.bs--; }
        else if (g == 2) t.bs = qmx_test_rand_range(1, t.K);
        else if (g == 3) t.bs = qmx_test_rand() % 2 ? 1 : qmx_test_rand_range(1, 8) * 8;
        else t.bs = t.K + qmx_test_rand_range(1, 100);
        t.lda = t.K + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 9) : 0);
        t.ldb = t.K + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 9) : 0);
        t.ldc = t.N + (qmx_test_rand() % 3 == 0 ? qmx_test_rand_range(1, 5) : 0);
        t.fill_a = qmx_test_rand() % 8 == 0 ? 1 : 0;
        t.fill_b = qmx_test_rand() % 8 == 0 ? 1 : 0;
        t.misalign = (int)(qmx_test_rand() % 64);
        t.a_per_row = (int)(qmx_test_rand() & 1);
        t.b_per_col = (int)(qmx_test_rand() & 1);
        t.tiny = qmx_test_rand() % 10 == 0;
        t.azp = qmx_test_rand() % 3 == 0 ? 0 : rnd_i32(-128, 127);
        bad = run_f32(&t);
        CHECK(bad == 0, "case %d: %ld mismatches", it, bad);
    }
}

static void f32_edges(void) {
    static const size_t shapes[][4] = {{65, 257, 3, 3}, {64, 256, 40, 32}, {1, 1, 1, 1},
                                       {129, 3, 17, 4}, {3, 300, 64, 64}, {1, 5, 100, 7},
                                       {2, 3, QMX_MATMUL_I8_MAX_K, QMX_MATMUL_I8_MAX_K},
                                       {2, 3, QMX_MATMUL_I8_MAX_K, 4096},
                                       /* M >= 16: blocks across the 1024-byte K chunks of the
                                        * VNNI path, a ragged last block, a block size that is
                                        * not a multiple of 4 (the other path) */
                                       {17, 40, 3001, 1500}, {33, 290, 2050, 2050},
                                       {20, 17, 1030, 1028}, {40, 50, 1100, 6},
                                       {16, 33, QMX_MATMUL_I8_MAX_K, 4096}};
    size_t i, n_shapes = BIG ? 13 : 8;
    QMX_TEST_CASE("int8 -> float: panel/tile edges, K = QMX_MATMUL_I8_MAX_K with extremes");
    for (i = 0; i < n_shapes; i++) {
        f32_case t;
        int ext = shapes[i][2] == QMX_MATMUL_I8_MAX_K;
        t.M = shapes[i][0]; t.N = shapes[i][1]; t.K = shapes[i][2]; t.bs = shapes[i][3];
        t.lda = t.K + 1; t.ldb = t.K; t.ldc = t.N + 1;
        t.fill_a = ext ? 2 : 0; t.fill_b = ext ? 2 : 0;
        t.misalign = 5; t.a_per_row = (int)(i & 1); t.b_per_col = (int)((i >> 1) & 1);
        t.tiny = 0; t.azp = ext ? 127 : 9;
        CHECK(run_f32(&t) == 0, "shape %u", (unsigned)i);
    }
}

/* ============================== errors ============================== */
#define WS_BYTES 8192
static unsigned char g_ws[WS_BYTES], g_out[256];
static int8_t g_a[64], g_w[64];
static float g_fout[64];

static int untouched(void) {
    size_t i;
    for (i = 0; i < WS_BYTES; i++) if (g_ws[i] != 0x5A) return 0;
    for (i = 0; i < sizeof g_out; i++) if (g_out[i] != 0xA5) return 0;
    for (i = 0; i < 64; i++) if (qmx_test_f32_bits(g_fout[i]) != 0x7FC0BEEFu) return 0;
    return 1;
}
static void reset(void) {
    size_t i;
    memset(g_ws, 0x5A, sizeof g_ws);
    memset(g_out, 0xA5, sizeof g_out);
    for (i = 0; i < 64; i++) g_fout[i] = qmx_test_bits_f32(0x7FC0BEEFu);
}

#define EXPECT(call, want, what)                                                           \
    do {                                                                                   \
        qmx_status st_;                                                                    \
        reset();                                                                           \
        st_ = (call);                                                                      \
        CHECK_EQ_INT(st_, want, "%s", what);                                               \
        CHECK(untouched(), "%s: output or workspace written", what);                       \
    } while (0)

static void fc_errors(void) {
    qmx_requant_config rq = QMX_ZERO_INIT, b = QMX_ZERO_INIT;
    int32_t mult[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
    int shifts[4] = {-3, -3, -3, -3};
    float sc[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    size_t bytes = 0, M = 2, N = 4, K = 8;
    QMX_TEST_CASE("fully-connected: every error is a status, outputs and workspace untouched");
    rq.multipliers = mult; rq.shifts = shifts; rq.scales = sc;
    /* the valid call works */
    reset();
    CHECK_EQ_INT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES),
                 QMX_OK, "valid");
    EXPECT(qmx_fully_connected_i8(M, N, K, NULL, K, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_NULL, "A NULL");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, NULL, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_NULL, "W NULL");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, NULL, g_out, N, g_ws, WS_BYTES), QMX_ERR_NULL, "rq NULL");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, NULL, N, g_ws, WS_BYTES), QMX_ERR_NULL, "out NULL");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, g_out, N, NULL, WS_BYTES), QMX_ERR_NULL, "ws NULL");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 128, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "a_zp 128");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, -129, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "a_zp -129");
    EXPECT(qmx_fully_connected_i8(0, N, K, g_a, K, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_SIZE, "M 0");
    EXPECT(qmx_fully_connected_i8(M, 0, K, g_a, K, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_SIZE, "N 0");
    EXPECT(qmx_fully_connected_i8(M, N, 0, g_a, K, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_SIZE, "K 0");
    EXPECT(qmx_fully_connected_i8(M, N, QMX_MATMUL_I8_MAX_K + 1, g_a, QMX_MATMUL_I8_MAX_K + 1, 0, g_w,
                                  QMX_MATMUL_I8_MAX_K + 1, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "K > max");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K - 1, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_SHAPE, "lda < K");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K - 1, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_SHAPE, "ldw < K");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, g_out, N - 1, g_ws, WS_BYTES), QMX_ERR_SHAPE, "ldo < N");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, SIZE_MAX, 0, g_w, K, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "A extent");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, SIZE_MAX, &rq, g_out, N, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "W extent");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, g_out, SIZE_MAX, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "out extent");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, g_out, N, g_ws, 100), QMX_ERR_BUFFER_TOO_SMALL, "ws small");
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(M, N, K, &bytes), QMX_OK, "ws size");
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &rq, g_out, N, g_ws, bytes - 1), QMX_ERR_BUFFER_TOO_SMALL, "ws one short");
    b = rq; b.out_dtype = QMX_UINT8;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_DTYPE, "out uint8");
    b = rq; b.mode = (qmx_requant_mode)3;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "mode 3");
    b = rq; b.act_min = 10; b.act_max = 5;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "act_min > act_max");
    b = rq; b.act_min = -128; b.act_max = 128;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "act_max > 127");
    /* output zero points outside the out dtype are accepted (as TFLite / CMSIS-NN): see
     * fc_zero_points */
    b = rq; b.output_zero_point = 128;
    CHECK_EQ_INT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_OK, "ozp 128");
    b = rq; b.out_dtype = QMX_INT16; b.output_zero_point = -32769;
    CHECK_EQ_INT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_OK, "ozp int16");
    b = rq; b.multipliers = NULL;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_NULL, "multipliers NULL");
    b = rq; b.shifts = NULL;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_NULL, "shifts NULL");
    b = rq; b.mode = QMX_REQUANT_FLOAT; b.scales = NULL;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_NULL, "scales NULL");
    shifts[3] = 31; b = rq; b.per_channel = 1;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "shift 31 (last channel)");
    shifts[3] = -32;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "shift -32");
    shifts[3] = -3; mult[2] = -5; b.mode = QMX_REQUANT_SINGLE_ROUNDING;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "single rounding m < 0");
    mult[2] = 1 << 30;
    b = rq; b.mode = QMX_REQUANT_FLOAT; b.per_channel = 1;
    sc[3] = 0.0f;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "scale 0");
    sc[3] = -1.0f;
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "scale -1");
    sc[3] = qmx_test_bits_f32(0x7FC00000u);
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "scale NaN");
    sc[3] = qmx_test_bits_f32(0x7F800000u);
    EXPECT(qmx_fully_connected_i8(M, N, K, g_a, K, 0, g_w, K, &b, g_out, N, g_ws, WS_BYTES), QMX_ERR_ARG, "scale Inf");
    sc[3] = 0.5f;
    /* workspace query */
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(M, N, K, NULL), QMX_ERR_NULL, "ws NULL");
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(0, N, K, &bytes), QMX_ERR_SIZE, "ws M 0");
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(M, 0, K, &bytes), QMX_ERR_SIZE, "ws N 0");
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(M, N, 0, &bytes), QMX_ERR_SIZE, "ws K 0");
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(100, N, SIZE_MAX / 32, &bytes), QMX_ERR_OVERFLOW, "ws overflow");
}

static void f32_errors(void) {
    float sa[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sb[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    qmx_matmul_i8_f32_scales s = QMX_ZERO_INIT, b = QMX_ZERO_INIT;
    size_t bytes = 0, M = 2, N = 4, K = 8;
    float *C = g_fout;
    QMX_TEST_CASE("int8 -> float: every error is a status, outputs and workspace untouched");
    s.a_scales = sa; s.a_scales_len = 8; s.a_per_row = 1; /* [2][2] blocks */
    s.b_scales = sb; s.b_scales_len = 8; s.b_per_col = 1; /* [4][2] */
    s.block_size = 5;                                     /* ragged: 5 + 3 */
    reset();
    CHECK_EQ_INT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_OK, "valid");
    EXPECT(qmx_matmul_i8_f32(M, N, K, NULL, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_NULL, "A NULL");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, NULL, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_NULL, "B NULL");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, NULL, N, &s, g_ws, WS_BYTES), QMX_ERR_NULL, "C NULL");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, NULL, g_ws, WS_BYTES), QMX_ERR_NULL, "scales NULL");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, NULL, WS_BYTES), QMX_ERR_NULL, "ws NULL");
    b = s; b.a_scales = NULL;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_NULL, "a_scales NULL");
    b = s; b.b_scales = NULL;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_NULL, "b_scales NULL");
    b = s; b.a_zp = 128;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_ARG, "a_zp 128");
    {   /* one bad scale at any of 40 positions (the vector check's lanes and its scalar tail),
         * per row of A (M = 40, N = 1) and per column of B (M = 1, N = 40) */
        const float bad[] = {0.0f, -1.0f, -0.0f, qmx_test_bits_f32(0x7F800000u), qmx_test_bits_f32(0x7FC00000u)};
        float s40[40];
        size_t p, v, q;
        char what[64];
        for (v = 0; v < sizeof bad / sizeof bad[0]; v++)
            for (p = 0; p < 40; p++) {
                for (q = 0; q < 40; q++) s40[q] = 0.5f + (float)q;
                s40[p] = bad[v];
                snprintf(what, sizeof what, "scale %g at %u", (double)bad[v], (unsigned)p);
                b = s; b.block_size = 1; b.a_scales = s40; b.a_scales_len = 40; b.b_scales = sb;
                b.b_scales_len = 1; b.b_per_col = 0;
                EXPECT(qmx_matmul_i8_f32(40, 1, 1, g_a, 1, g_w, 1, C, 1, &b, g_ws, WS_BYTES), QMX_ERR_ARG, what);
                b = s; b.block_size = 1; b.b_scales = s40; b.b_scales_len = 40; b.a_scales = sa;
                b.a_scales_len = 1; b.a_per_row = 0;
                EXPECT(qmx_matmul_i8_f32(1, 40, 1, g_a, 1, g_w, 1, C, 40, &b, g_ws, WS_BYTES), QMX_ERR_ARG, what);
            }
    }
    b = s; b.block_size = 0;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_SIZE, "block 0");
    EXPECT(qmx_matmul_i8_f32(0, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_SIZE, "M 0");
    EXPECT(qmx_matmul_i8_f32(M, 0, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_SIZE, "N 0");
    EXPECT(qmx_matmul_i8_f32(M, N, 0, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_SIZE, "K 0");
    EXPECT(qmx_matmul_i8_f32(M, N, QMX_MATMUL_I8_MAX_K + 1, g_a, QMX_MATMUL_I8_MAX_K + 1, g_w,
                             QMX_MATMUL_I8_MAX_K + 1, C, N, &s, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "K > max");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K - 1, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_SHAPE, "lda < K");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K - 1, C, N, &s, g_ws, WS_BYTES), QMX_ERR_SHAPE, "ldb < K");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N - 1, &s, g_ws, WS_BYTES), QMX_ERR_SHAPE, "ldc < N");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, SIZE_MAX, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "A extent");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, SIZE_MAX, C, N, &s, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "B extent");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, SIZE_MAX / 2, &s, g_ws, WS_BYTES), QMX_ERR_OVERFLOW, "C extent");
    b = s; b.a_scales_len = 3;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_BUFFER_TOO_SMALL, "a_scales short");
    b = s; b.b_scales_len = 7;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_BUFFER_TOO_SMALL, "b_scales short");
    b = s; b.block_size = 2; /* 4 blocks: 8 a scales ok, 16 b scales needed */
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &b, g_ws, WS_BYTES), QMX_ERR_BUFFER_TOO_SMALL, "blocks need more scales");
    sa[3] = 0.0f; /* the last of the 2 x 2 used */
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_ARG, "a scale 0");
    sa[3] = -2.0f;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_ARG, "a scale < 0");
    sa[3] = 1.0f; sb[7] = qmx_test_bits_f32(0x7FC00000u);
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_ARG, "b scale NaN");
    sb[7] = qmx_test_bits_f32(0x7F800000u);
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_ARG, "b scale Inf");
    sb[7] = qmx_test_bits_f32(0x80000000u);
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, WS_BYTES), QMX_ERR_ARG, "b scale -0");
    sb[7] = 1.0f;
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, 64), QMX_ERR_BUFFER_TOO_SMALL, "ws small");
    CHECK_EQ_INT(qmx_matmul_i8_f32_workspace_size(M, N, K, &bytes), QMX_OK, "ws size");
    EXPECT(qmx_matmul_i8_f32(M, N, K, g_a, K, g_w, K, C, N, &s, g_ws, bytes - 1), QMX_ERR_BUFFER_TOO_SMALL, "ws one short");
    CHECK_EQ_INT(qmx_matmul_i8_f32_workspace_size(M, N, K, NULL), QMX_ERR_NULL, "ws NULL");
    CHECK_EQ_INT(qmx_matmul_i8_f32_workspace_size(M, 0, K, &bytes), QMX_ERR_SIZE, "ws N 0");
    CHECK_EQ_INT(qmx_matmul_i8_f32_workspace_size(100, N, SIZE_MAX / 32, &bytes), QMX_ERR_OVERFLOW, "ws overflow");
}

/* Output zero points anywhere in int32 (TFLite and CMSIS-NN add output_offset to the
 * requantized int32 unchecked: 128 with int8 out is a real TFLite case), every SIMD path of the
 * stage (M >= 16 and N >= 32 reach the AVX-512 / AVX2 / NEON stages), plain and packed weights,
 * int8 and int16 out, clamps that make the output constant: out = clamp(v + zp) exactly. */
static void fc_zero_points(void) {
    static const int32_t zps[] = {128, -129, 255, -256, 300, -40000, 40000, 1 << 30,
                                  -(1 << 30), INT32_MAX, INT32_MIN, INT32_MAX - 200,
                                  INT32_MIN + 200, 2147450880, -2147450880};
    const size_t M = 19, N = 37, K = 29;
    int8_t *A = (int8_t *)malloc(M * K), *W = (int8_t *)malloc(N * K);
    int32_t mult[37], *acc = (int32_t *)malloc(M * N * 4);
    int shifts[37];
    int16_t *out = (int16_t *)malloc(M * N * 2);
    size_t zi, need = 0, pneed = 0, pb = 0, m, n, k, i;
    unsigned char *ws, *blob;
    int variant;
    QMX_TEST_CASE("fully-connected: output zero points outside the out dtype (TFLite / CMSIS-NN)");
    qmx_test_fill_i8(A, M * K, 0);
    qmx_test_fill_i8(W, N * K, 0);
    for (n = 0; n < N; n++) { mult[n] = (int32_t)(0x40000000u + (qmx_test_rand() >> 2)); shifts[n] = -(int)(n % 9); }
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) acc[m * N + n] = (int32_t)ref_dot(A, K, W, K, 0, m, n, 0, K);
    qmx_fully_connected_i8_workspace_size(M, N, K, &need);
    qmx_fully_connected_i8_packed_workspace_size(M, N, K, &pneed);
    qmx_matmul_i8_pack_weights_size(N, K, &pb);
    ws = (unsigned char *)malloc(need > pneed ? need : pneed);
    blob = (unsigned char *)malloc(pb);
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob, pb), QMX_OK, "pack");
    for (zi = 0; zi < sizeof zps / sizeof zps[0]; zi++)
        for (variant = 0; variant < 8; variant++) {
            qmx_requant_config rq;
            int i16 = variant & 1, packed = (variant >> 1) & 1, act = variant >> 2;
            int32_t lo = i16 ? -32768 : -128, hi = i16 ? 32767 : 127, amin, amax;
            long bad = 0;
            memset(&rq, 0, sizeof rq);
            rq.per_channel = 1; rq.multipliers = mult; rq.shifts = shifts;
            rq.out_dtype = i16 ? QMX_INT16 : QMX_INT8;
            rq.output_zero_point = zps[zi];
            if (act) {   /* a clamp above or below everything: amax < -1 or amin > 0 */
                rq.act_min = zi & 1 ? lo : 3; rq.act_max = zi & 1 ? -5 : hi;
            }
            amin = rq.act_min; amax = rq.act_max;
            if (amin == 0 && amax == 0) { amin = lo; amax = hi; }
            for (i = 0; i < M * N; i++) out[i] = 0x5A5A;
            CHECK_EQ_INT(packed ? qmx_fully_connected_i8_packed(M, N, K, A, K, 0, blob, pb, &rq, out, N, ws, pneed)
                                : qmx_fully_connected_i8(M, N, K, A, K, 0, W, K, &rq, out, N, ws, need),
                         QMX_OK, "zp %ld variant %d", (long)zps[zi], variant);
            for (m = 0; m < M; m++)
                for (n = 0; n < N; n++) {
                    int64_t w = (int64_t)qmx_requantize(acc[m * N + n], mult[n], shifts[n]) + zps[zi];
                    int32_t want = (int32_t)(w < amin ? amin : (w > amax ? amax : w));
                    int32_t got = i16 ? out[m * N + n] : ((int8_t *)(void *)out)[m * N + n];
                    if (got != want && bad++ < 3)
                        printf("  zp %ld variant %d [%u][%u]: got %ld want %ld\n", (long)zps[zi],
                               variant, (unsigned)m, (unsigned)n, (long)got, (long)want);
                }
            CHECK(bad == 0, "zp %ld variant %d: %ld wrong", (long)zps[zi], variant, bad);
        }
    (void)k;
    free(A); free(W); free(acc); free(out); free(ws); free(blob);
}

int main(void) {
    qmx_test_seed(987654321u); /* this program's data */
    fc_errors();
    f32_errors();
    fc_edges();
    fc_stage_edges();
    f32_edges();
    fc_random();
    f32_random();
    fc_zero_points();
    return QMX_TEST_END();
}
