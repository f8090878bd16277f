/* test_matmul_i16.c - the 16x8 kernels of qmx_kernels.h: qmx_requantize64,
 * qmx_fully_connected_i16 (+ _packed) and qmx_batch_matmul_i16 (TFLite 16x8).
 *   1. tests/data/fc16_golden.txt (tests/gen/gen_fc16.py: an independent numpy model of
 *      TFLite's int16 reference kernels): qmx_requantize64 rows; fully-connected cases (plain
 *      and on the packed int8 blob) and batch matmul cases, inputs refilled here from the same
 *      xorshift32 stream; per tensor / per channel, bias / none, weight zero points, K up to
 *      the bounds (2^23 and 2^16; the 2^23 cases are skipped on the Cortex-M targets), extreme
 *      multipliers and shifts, saturation at both ends, batch > 1, both transpose flags,
 *      strides and broadcasting; the padding of out is never written.
 *   2. random shapes against a naive int64 reference written here (plain == packed ==
 *      reference), workspace at every alignment.
 *   3. errors: every status, with out and the workspace untouched.
 *   4. the SIMD tile steps (x86, aarch64, Cortex-M) against a plain int64 triple loop: every
 *      ragged shape around the register tiles, panels, strips, int32 runs and K blocks, the
 *      extremes (-32768 x +-255, Y = -32768), all transpose flags; whole outputs bit for bit. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"

#define SENT16 ((int16_t)0x5A5A)
/* the K = 2^23 cases need ~50 MB: not on the Cortex-M targets (qmx_test.h's
 * QMX_TEST_SMALL_TARGET misses the M55, whose GCC defines __ARM_ARCH_8M_MAIN__) */
#if QMX_TEST_SMALL_TARGET || defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8M_BASE__)
#  define SMALL_MEM 1
#else
#  define SMALL_MEM 0
#endif

static int64_t parse64(const char *s, int *ok) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end) *ok = 0;
    return (int64_t)v;
}

/* fill modes as gen_fc16.py: 0 random, 1 extremes, 2 all min, 3 all max, 4 small */
static void fill16(int16_t *p, size_t n, int mode) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t r;
        if (mode == 2) { p[i] = (int16_t)-32768; continue; }
        if (mode == 3) { p[i] = 32767; continue; }
        r = qmx_test_rand();
        if (mode == 0) p[i] = (int16_t)((int32_t)(r & 0xFFFFu) - 32768);
        else if (mode == 1) p[i] = (r & 1u) ? (int16_t)32767 : (int16_t)-32768;
        else p[i] = (int16_t)((int32_t)(r % 17u) - 8);
    }
}
static void fill8(int8_t *p, size_t n, int mode) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t r;
        if (mode == 2) { p[i] = (int8_t)-128; continue; }
        if (mode == 3) { p[i] = 127; continue; }
        r = qmx_test_rand();
        if (mode == 0) p[i] = (int8_t)((int32_t)(r & 0xFFu) - 128);
        else if (mode == 1) p[i] = (r & 1u) ? (int8_t)127 : (int8_t)-128;
        else p[i] = (int8_t)((int32_t)(r % 17u) - 8);
    }
}
static size_t ext(size_t batch, size_t bs, size_t rows, size_t cols, size_t ld) {
    return (batch - 1) * bs + (rows - 1) * ld + cols;
}

/* ---- 1. golden data ---- */
typedef struct gcase {
    int bmm;
    size_t batch, M, N, K, lda, ldw, ldo, xbs, ybs, obs;
    int adj_x, adj_y, per_channel, has_bias, fill_a, fill_w, big;
    int32_t w_zp, act_min, act_max;
    uint32_t seed;
} gcase;

/* Runs one case; want holds the expected [batch][M][N]. */
static void run_case(const gcase *c, const int32_t *mult, const int *shift, const int64_t *bias,
                     const int16_t *want, long line) {
    qmx_requant64_config rq;
    size_t wsb = 0, on = ext(c->batch, c->obs, c->M, c->N, c->ldo), b, i, j, an, wn;
    int16_t *out = (int16_t *)malloc(on * 2), *A = NULL, *Y = NULL;
    int8_t *W = NULL;
    unsigned char *ws;
    qmx_status st;
    long bad = 0, pad_bad = 0;
    memset(&rq, 0, sizeof rq);
    rq.per_channel = c->per_channel; rq.multipliers = mult; rq.shifts = shift;
    rq.bias = c->has_bias ? bias : NULL; rq.act_min = c->act_min; rq.act_max = c->act_max;
    qmx_test_seed(c->seed);
    if (c->bmm) {
        an = ext(c->batch, c->xbs, c->adj_x ? c->K : c->M, c->adj_x ? c->M : c->K, c->lda);
        wn = ext(c->batch, c->ybs, c->adj_y ? c->N : c->K, c->adj_y ? c->K : c->N, c->ldw);
        A = (int16_t *)malloc(an * 2); Y = (int16_t *)malloc(wn * 2);
        fill16(A, an, c->fill_a); fill16(Y, wn, c->fill_w);
        CHECK(qmx_batch_matmul_i16_workspace_size(c->M, c->N, c->K, &wsb) == QMX_OK, "ws query");
    } else {
        an = ext(1, 0, c->M, c->K, c->lda);
        wn = ext(1, 0, c->N, c->K, c->ldw);
        A = (int16_t *)malloc(an * 2); W = (int8_t *)malloc(wn);
        fill16(A, an, c->fill_a); fill8(W, wn, c->fill_w);
        CHECK(qmx_fully_connected_i16_workspace_size(c->M, c->N, c->K, &wsb) == QMX_OK, "ws query");
    }
    ws = (unsigned char *)malloc(wsb + 1);
    for (i = 0; i < on; i++) out[i] = SENT16;
    if (c->bmm)
        st = qmx_batch_matmul_i16(c->batch, c->M, c->N, c->K, A, c->lda, c->xbs, c->adj_x, Y,
                                  c->ldw, c->ybs, c->adj_y, &rq, out, c->ldo, c->obs, ws + 1, wsb);
    else
        st = qmx_fully_connected_i16(c->M, c->N, c->K, A, c->lda, W, c->ldw, c->w_zp, &rq, out,
                                     c->ldo, ws + 1, wsb);
    CHECK_EQ_INT(st, QMX_OK, "line %ld: status", line);
    for (b = 0; b < c->batch; b++)
        for (i = 0; i < c->M; i++)
            for (j = 0; j < c->ldo; j++) {
                size_t o = b * c->obs + i * c->ldo + j;
                if (o >= on) continue;
                if (j < c->N) {
                    if (out[o] != want[(b * c->M + i) * c->N + j] && bad++ < 5)
                        printf("  line %ld: out[%lu][%lu][%lu] = %d, want %d\n", line,
                               (unsigned long)b, (unsigned long)i, (unsigned long)j, out[o],
                               want[(b * c->M + i) * c->N + j]);
                } else if (out[o] != SENT16) {
                    pad_bad++;
                }
            }
    CHECK(bad == 0, "line %ld: %ld outputs differ from TFLite's", line, bad);
    CHECK(pad_bad == 0, "line %ld: padding written", line);
    /* the packed int8 blob gives the same bits */
    if (!c->bmm && c->K <= QMX_MATMUL_I8_MAX_K) {
        size_t pb = 0;
        void *blob;
        CHECK(qmx_matmul_i8_pack_weights_size(c->N, c->K, &pb) == QMX_OK, "pack size");
        blob = malloc(pb);
        CHECK(qmx_matmul_i8_pack_weights(W, c->N, c->K, c->ldw, QMX_B_NK, blob, pb) == QMX_OK,
              "pack");
        for (i = 0; i < on; i++) out[i] = SENT16;
        st = qmx_fully_connected_i16_packed(c->M, c->N, c->K, A, c->lda, blob, pb, c->w_zp, &rq,
                                            out, c->ldo, ws, wsb);
        CHECK_EQ_INT(st, QMX_OK, "line %ld: packed status", line);
        bad = 0;
        for (i = 0; i < c->M; i++)
            for (j = 0; j < c->N; j++)
                if (out[i * c->ldo + j] != want[i * c->N + j]) bad++;
        CHECK(bad == 0, "line %ld: packed: %ld outputs differ", line, bad);
        free(blob);
    }
    free(out); free(A); free(Y); free(W); free(ws);
}

static void golden(void) {
    qmx_test_table t;
    char line[512], *fld[32];
    gcase c;
    int32_t *mult = NULL;
    int *shift = NULL;
    int64_t *bias = NULL;
    int16_t *want = NULL;
    size_t nq = 0, nb = 0, no = 0, nout = 0;
    long case_line = 0, cases = 0, skipped = 0, rrows = 0;
    int in_case = 0;
    memset(&c, 0, sizeof c);
    QMX_TEST_CASE("golden: TFLite 16x8 reference model (gen_fc16.py)");
    if (!qmx_test_table_open(&t, "fc16_golden.txt", "# columns: tag fields")) return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int n = qmx_test_split_fields(line, fld, 32), ok = 1, i;
        if (n < 1) { CHECK(0, "line %ld: empty", t.line_no); continue; }
        if (strcmp(fld[0], "r") == 0 && n == 5) {
            int64_t a = parse64(fld[1], &ok), m = parse64(fld[2], &ok), s = parse64(fld[3], &ok);
            int64_t w = parse64(fld[4], &ok);
            CHECK(ok, "line %ld: malformed", t.line_no);
            CHECK_EQ_INT(qmx_requantize64(a, (int32_t)m, (int)s), w,
                         "line %ld: qmx_requantize64(%lld, %lld, %d)", t.line_no, (long long)a,
                         (long long)m, (int)s);
            rrows++;
        } else if (strcmp(fld[0], "case") == 0 && n == 23) {
            int64_t v[22];
            for (i = 0; i < 21; i++) v[i] = parse64(fld[i + 2], &ok);
            CHECK(ok, "line %ld: malformed", t.line_no);
            c.bmm = strcmp(fld[1], "bmm") == 0;
            c.batch = (size_t)v[0]; c.M = (size_t)v[1]; c.N = (size_t)v[2]; c.K = (size_t)v[3];
            c.lda = (size_t)v[4]; c.ldw = (size_t)v[5]; c.ldo = (size_t)v[6];
            c.xbs = (size_t)v[7]; c.ybs = (size_t)v[8]; c.obs = (size_t)v[9];
            c.adj_x = (int)v[10]; c.adj_y = (int)v[11]; c.per_channel = (int)v[12];
            c.has_bias = (int)v[13]; c.w_zp = (int32_t)v[14]; c.act_min = (int32_t)v[15];
            c.act_max = (int32_t)v[16]; c.fill_a = (int)v[17]; c.fill_w = (int)v[18];
            c.seed = (uint32_t)v[19]; c.big = (int)v[20];
            nout = c.batch * c.M * c.N;
            mult = (int32_t *)malloc(c.N * 4); shift = (int *)malloc(c.N * sizeof(int));
            bias = (int64_t *)malloc(c.N * 8); want = (int16_t *)malloc(nout * 2);
            nq = nb = no = 0;
            in_case = 1; case_line = t.line_no;
        } else if (in_case && strcmp(fld[0], "q") == 0 && n == 3 && nq < c.N) {
            mult[nq] = (int32_t)parse64(fld[1], &ok); shift[nq] = (int)parse64(fld[2], &ok); nq++;
            CHECK(ok, "line %ld: malformed", t.line_no);
        } else if (in_case && strcmp(fld[0], "b") == 0 && n == 2 && nb < c.N) {
            bias[nb++] = parse64(fld[1], &ok);
            CHECK(ok, "line %ld: malformed", t.line_no);
        } else if (in_case && strcmp(fld[0], "o") == 0) {
            for (i = 1; i < n && no < nout; i++) want[no++] = (int16_t)parse64(fld[i], &ok);
            CHECK(ok && i == n, "line %ld: malformed", t.line_no);
        } else if (in_case && strcmp(fld[0], "end") == 0) {
            CHECK(no == nout && nq == (c.per_channel ? c.N : 1) && nb == (c.has_bias ? c.N : 0),
                  "line %ld: case record incomplete", case_line);
            if (c.big && SMALL_MEM) skipped++;
            else if (no == nout) run_case(&c, mult, shift, bias, want, case_line);
            cases++;
            free(mult); free(shift); free(bias); free(want);
            in_case = 0;
        } else {
            CHECK(0, "line %ld: unexpected record '%s'", t.line_no, fld[0]);
        }
    }
    CHECK(!in_case, "unterminated case");
    CHECK_EQ_INT(cases, 19, "cases in fc16_golden.txt");
    CHECK_EQ_INT(rrows, 3496, "qmx_requantize64 rows");
    qmx_test_table_close(&t, 3998);
    if (skipped) printf("  (%ld K = 2^23 cases skipped on this small target)\n", skipped);
}

/* ---- 2. random shapes against a naive reference ---- */
static int16_t ref_stage(int64_t acc, size_t n, const qmx_requant64_config *rq) {
    size_t pi = rq->per_channel ? n : 0;
    int32_t v, lo = rq->act_min, hi = rq->act_max;
    if (lo == 0 && hi == 0) { lo = -32768; hi = 32767; }
    if (rq->bias) acc += rq->bias[n];
    v = qmx_requantize64(acc, rq->multipliers[pi], rq->shifts[pi]);
    return (int16_t)(v < lo ? lo : (v > hi ? hi : v));
}

static void random_shapes(void) {
    int it, iters = SMALL_MEM ? 12 : 60;
    QMX_TEST_CASE("random shapes: plain == packed == naive int64 reference; batch matmul too");
    qmx_test_seed(0x16086u);
    for (it = 0; it < iters; it++) {
        size_t M = qmx_test_rand_range(1, 70), N = qmx_test_rand_range(1, 40);
        size_t K = qmx_test_rand_range(1, it % 5 == 0 ? 1300 : 90);
        size_t lda = K + qmx_test_rand_range(0, 3), ldw = K + qmx_test_rand_range(0, 2);
        size_t ldo = N + qmx_test_rand_range(0, 2), wsb = 0, pb = 0, m, n, k, i, off;
        int32_t wzp = (int32_t)qmx_test_rand_range(0, 255) - 128, mult[40];
        int shift[40];
        int64_t bias[40];
        int16_t *A = (int16_t *)malloc((M * lda) * 2), *o1 = (int16_t *)malloc(M * ldo * 2);
        int16_t *o2 = (int16_t *)malloc(M * ldo * 2);
        int8_t *W = (int8_t *)malloc(N * ldw);
        unsigned char *ws;
        void *blob;
        qmx_requant64_config rq;
        long bad = 0;
        if (it % 4 == 0) wzp = 0;
        fill16(A, M * lda, it % 3 == 0 ? 4 : 0);
        fill8(W, N * ldw, it % 7 == 3 ? 1 : 0);
        for (n = 0; n < N; n++) {
            mult[n] = (int32_t)(qmx_test_rand() & 0x7FFFFFFFu);
            shift[n] = (int)qmx_test_rand_range(0, 38) - 31;
            if (it % 2) shift[n] = -(int)qmx_test_rand_range(10, 24);
            bias[n] = ((int64_t)(qmx_test_rand() % 2000001u) - 1000000) * 7919;
        }
        memset(&rq, 0, sizeof rq);
        rq.per_channel = it % 3 != 1; rq.multipliers = mult; rq.shifts = shift;
        rq.bias = it % 5 == 2 ? NULL : bias;
        if (it % 6 == 5) { rq.act_min = -200; rq.act_max = 4000; }
        qmx_fully_connected_i16_workspace_size(M, N, K, &wsb);
        off = (size_t)it % 8;
        ws = (unsigned char *)malloc(wsb + off);
        for (i = 0; i < M * ldo; i++) o1[i] = o2[i] = SENT16;
        CHECK_EQ_INT(qmx_fully_connected_i16(M, N, K, A, lda, W, ldw, wzp, &rq, o1, ldo, ws + off,
                                             wsb), QMX_OK, "it %d", it);
        qmx_matmul_i8_pack_weights_size(N, K, &pb);
        blob = malloc(pb);
        qmx_matmul_i8_pack_weights(W, N, K, ldw, QMX_B_NK, blob, pb);
        CHECK_EQ_INT(qmx_fully_connected_i16_packed(M, N, K, A, lda, blob, pb, wzp, &rq, o2, ldo,
                                                    ws + off, wsb), QMX_OK, "it %d packed", it);
        for (m = 0; m < M; m++)
            for (n = 0; n < ldo; n++) {
                int16_t want = SENT16;
                if (n < N) {
                    int64_t s = 0;
                    for (k = 0; k < K; k++)
                        s += (int64_t)A[m * lda + k] * ((int64_t)W[n * ldw + k] - wzp);
                    want = ref_stage(s, n, &rq);
                }
                if (o1[m * ldo + n] != want || o2[m * ldo + n] != want) bad++;
            }
        CHECK(bad == 0, "it %d (M %lu N %lu K %lu): %ld differ", it, (unsigned long)M,
              (unsigned long)N, (unsigned long)K, bad);
        free(A); free(o1); free(o2); free(W); free(ws); free(blob);
    }
    /* batch matmul: every transpose combination, broadcasting */
    for (it = 0; it < iters; it++) {
        size_t batch = qmx_test_rand_range(1, 3), M = qmx_test_rand_range(1, 67);
        size_t N = qmx_test_rand_range(1, 35), K = qmx_test_rand_range(1, it % 4 ? 60 : 600);
        int ax = it & 1, ay = (it >> 1) & 1;
        size_t xr = ax ? K : M, xc = ax ? M : K, yr = ay ? N : K, yc = ay ? K : N;
        size_t ldx = xc + qmx_test_rand_range(0, 2), ldy = yc + qmx_test_rand_range(0, 2);
        size_t ldo = N + qmx_test_rand_range(0, 1);
        size_t xbs = it % 5 == 1 ? 0 : xr * ldx, ybs = it % 5 == 2 ? 0 : yr * ldy;
        size_t obs = M * ldo, wsb = 0, b, i, j, k, bad = 0;
        int16_t *X = (int16_t *)malloc(ext(batch, xbs, xr, xc, ldx) * 2);
        int16_t *Y = (int16_t *)malloc(ext(batch, ybs, yr, yc, ldy) * 2);
        int16_t *O = (int16_t *)malloc(batch * obs * 2);
        int32_t mult[35];
        int shift[35];
        unsigned char *ws;
        qmx_requant64_config rq;
        fill16(X, ext(batch, xbs, xr, xc, ldx), it % 3 ? 0 : 4);
        fill16(Y, ext(batch, ybs, yr, yc, ldy), it % 3 == 1 ? 1 : 0);
        for (j = 0; j < N; j++) {
            mult[j] = (int32_t)((1u << 30) + (qmx_test_rand() >> 2));
            shift[j] = -(int)qmx_test_rand_range(12, 31);
        }
        memset(&rq, 0, sizeof rq);
        rq.per_channel = it % 3 == 2; rq.multipliers = mult; rq.shifts = shift;
        qmx_batch_matmul_i16_workspace_size(M, N, K, &wsb);
        ws = (unsigned char *)malloc(wsb);
        for (i = 0; i < batch * obs; i++) O[i] = SENT16;
        CHECK_EQ_INT(qmx_batch_matmul_i16(batch, M, N, K, X, ldx, xbs, ax, Y, ldy, ybs, ay, &rq, O,
                                          ldo, obs, ws, wsb), QMX_OK, "bmm it %d", it);
        for (b = 0; b < batch; b++)
            for (i = 0; i < M; i++)
                for (j = 0; j < ldo; j++) {
                    int16_t want = SENT16;
                    if (j < N) {
                        int64_t s = 0;
                        for (k = 0; k < K; k++) {
                            int64_t xv = ax ? X[b * xbs + k * ldx + i] : X[b * xbs + i * ldx + k];
                            int64_t yv = ay ? Y[b * ybs + j * ldy + k] : Y[b * ybs + k * ldy + j];
                            s += xv * yv;
                        }
                        want = ref_stage(s, j, &rq);
                    }
                    if (O[b * obs + i * ldo + j] != want) bad++;
                }
        CHECK(bad == 0, "bmm it %d (adj %d %d): %lu differ", it, ax, ay, (unsigned long)bad);
        free(X); free(Y); free(O); free(ws);
    }
}

/* ---- 4. the SIMD tile steps against a plain triple loop: every ragged shape ---- */
/* Shapes that cross every block of the kernels: the register tiles of 8 / 4 rows, the panel
 * of 256 rows, the strip of 16 columns, the int32 run of 256 k and the K block of 512 (an odd
 * kl pads a k pair). Whole int16 outputs compared bit for bit, out's padding never written.
 * Three kinds of data: tiny values with a unit stage (out = acc exactly, so one product off
 * shows); the extremes (-32768 against w - w_zp = +-255: the int32 bound of a 256-k run) with
 * a scaled stage; random full-range values with random multipliers and biases. */
static int sweep_fc(size_t M, size_t N, size_t K, int kind, int per_channel, size_t pad) {
    size_t lda = K + pad, ldw = K + (pad & 1), ldo = N + 1, wsb = 0, pb = 0, m, n, k, i;
    int32_t wzp = 0, mult[40];
    int shift[40];
    int64_t bias[40];
    int16_t *A = (int16_t *)malloc(M * lda * 2), *o1 = (int16_t *)malloc(M * ldo * 2);
    int16_t *o2 = (int16_t *)malloc(M * ldo * 2);
    int8_t *W = (int8_t *)malloc(N * ldw);
    unsigned char *ws;
    void *blob;
    qmx_requant64_config rq;
    int bad = 0;
    memset(&rq, 0, sizeof rq);
    rq.per_channel = per_channel; rq.multipliers = mult; rq.shifts = shift;
    for (i = 0; i < M * lda; i++)
        A[i] = kind == 0 ? (int16_t)((int)(qmx_test_rand() % 5u) - 2)
             : kind == 1 ? (int16_t)((qmx_test_rand() & 7u) ? -32768 : 32767)
                         : (int16_t)((int32_t)(qmx_test_rand() & 0xFFFFu) - 32768);
    if (kind == 1) {   /* w - w_zp = -255 (w = -128, w_zp = 127) or +255 (127, -128), mixed */
        wzp = (qmx_test_rand() & 1u) ? 127 : -128;
        for (i = 0; i < N * ldw; i++)
            W[i] = (int8_t)((qmx_test_rand() & 3u) ? (wzp == 127 ? -128 : 127)
                                                    : (wzp == 127 ? 127 : -128));
    } else {
        wzp = (int32_t)(qmx_test_rand() % 256u) - 128;
        fill8(W, N * ldw, 0);
    }
    for (n = 0; n < 40; n++) {
        if (kind == 0) { mult[n] = 1 << 30; shift[n] = 1; bias[n] = 0; }   /* x 1.0: out = acc */
        else if (kind == 1) {
            mult[n] = (1 << 30) + (int32_t)n * 4099; shift[n] = -20; bias[n] = 0;
        }
        else {
            mult[n] = (int32_t)((1u << 30) + (qmx_test_rand() >> 2));
            shift[n] = -(int)qmx_test_rand_range(12, 22);
            bias[n] = ((int64_t)(qmx_test_rand() % 2000001u) - 1000000) * 3;
        }
    }
    rq.bias = kind == 2 ? bias : NULL;
    qmx_fully_connected_i16_workspace_size(M, N, K, &wsb);
    ws = (unsigned char *)malloc(wsb + 8);
    qmx_matmul_i8_pack_weights_size(N, K, &pb);
    blob = malloc(pb);
    qmx_matmul_i8_pack_weights(W, N, K, ldw, QMX_B_NK, blob, pb);
    for (i = 0; i < M * ldo; i++) o1[i] = o2[i] = SENT16;
    if (qmx_fully_connected_i16(M, N, K, A, lda, W, ldw, wzp, &rq, o1, ldo, ws + pad % 8, wsb) !=
            QMX_OK ||
        qmx_fully_connected_i16_packed(M, N, K, A, lda, blob, pb, wzp, &rq, o2, ldo,
                                       ws + (pad + 3) % 8, wsb) != QMX_OK)
        bad = 1;
    for (m = 0; m < M && !bad; m++)
        for (n = 0; n < ldo; n++) {
            int16_t want = SENT16;
            if (n < N) {
                int64_t s = 0;
                for (k = 0; k < K; k++)
                    s += (int64_t)A[m * lda + k] * ((int64_t)W[n * ldw + k] - wzp);
                want = ref_stage(s, n, &rq);
            }
            if (o1[m * ldo + n] != want || o2[m * ldo + n] != want) bad = 1;
        }
    free(A); free(o1); free(o2); free(W); free(ws); free(blob);
    return bad;
}

static int sweep_bmm(size_t batch, size_t M, size_t N, size_t K, int ax, int ay, int kind) {
    size_t xr = ax ? K : M, xc = ax ? M : K, yr = ay ? N : K, yc = ay ? K : N;
    size_t ldx = xc + (K & 1), ldy = yc + 1, ldo = N + 1, xbs = xr * ldx;
    size_t ybs = batch > 1 && kind ? 0 : yr * ldy;   /* kind 1, 2: Y broadcast over batches */
    size_t obs = M * ldo + 1, wsb = 0, b, i, j, k, xn = ext(batch, xbs, xr, xc, ldx);
    size_t yn = ext(batch, ybs, yr, yc, ldy);
    int16_t *X = (int16_t *)malloc(xn * 2), *Y = (int16_t *)malloc(yn * 2);
    int16_t *O = (int16_t *)malloc(batch * obs * 2);
    int32_t mult[40];
    int shift[40];
    unsigned char *ws;
    qmx_requant64_config rq;
    int bad = 0;
    for (i = 0; i < xn; i++)
        X[i] = kind == 0 ? (int16_t)((int)(qmx_test_rand() % 5u) - 2)
             : kind == 1 ? (int16_t)-32768
                         : (int16_t)((int32_t)(qmx_test_rand() & 0xFFFFu) - 32768);
    for (i = 0; i < yn; i++)
        Y[i] = kind == 0 ? (int16_t)((int32_t)(qmx_test_rand() & 0xFFFFu) - 32768) / 64
             : kind == 1 ? (int16_t)((qmx_test_rand() & 3u) ? -32768 : 32767)
                         : (int16_t)((int32_t)(qmx_test_rand() & 0xFFFFu) - 32768);
    for (j = 0; j < 40; j++) {
        mult[j] = kind == 0 ? 1 << 30 : (1 << 30) + (int32_t)j * 1021;
        shift[j] = kind == 0 ? 1 : -31;
    }
    memset(&rq, 0, sizeof rq);
    rq.per_channel = kind == 2; rq.multipliers = mult; rq.shifts = shift;
    qmx_batch_matmul_i16_workspace_size(M, N, K, &wsb);
    ws = (unsigned char *)malloc(wsb);
    for (i = 0; i < batch * obs; i++) O[i] = SENT16;
    if (qmx_batch_matmul_i16(batch, M, N, K, X, ldx, xbs, ax, Y, ldy, ybs, ay, &rq, O, ldo, obs,
                             ws, wsb) != QMX_OK)
        bad = 1;
    for (b = 0; b < batch && !bad; b++)
        for (i = 0; i < M; i++)
            for (j = 0; j < ldo; j++) {
                int16_t want = SENT16;
                if (j < N) {
                    int64_t s = 0;
                    for (k = 0; k < K; k++) {
                        int64_t xv = ax ? X[b * xbs + k * ldx + i] : X[b * xbs + i * ldx + k];
                        int64_t yv = ay ? Y[b * ybs + j * ldy + k] : Y[b * ybs + k * ldy + j];
                        s += xv * yv;
                    }
                    want = ref_stage(s, j, &rq);
                }
                if (O[b * obs + i * ldo + j] != want) bad = 1;
            }
    for (b = 0; b + 1 < batch; b++)   /* the gap between batches of out */
        if (O[b * obs + M * ldo] != SENT16) bad = 1;
    free(X); free(Y); free(O); free(ws);
    return bad;
}

static void simd_sweep(void) {
/* the smaller sweep (still ragged in M, N and K) on Cortex-M and under RVV emulation, where
 * QEMU runs each vector instruction element by element (the full sweep: 35 s per VLEN) */
#if SMALL_MEM || defined(__riscv_vector)
    static const size_t Ms[] = {1, 3, 65}, Ns[] = {1, 17}, Ks[] = {1, 3, 257, 513};
    static const size_t bM[] = {1, 9}, bN[] = {1, 17}, bK[] = {1, 3, 257, 513};
#else
    static const size_t Ms[] = {1, 3, 63, 64, 65, 130}, Ns[] = {1, 15, 16, 17, 33};
    static const size_t Ks[] = {1, 2, 3, 255, 256, 257, 511, 512, 513, 1000, 1100};
    static const size_t bM[] = {1, 3, 65}, bN[] = {1, 16, 17, 33};
    static const size_t bK[] = {1, 3, 256, 257, 513, 1100};
#endif
    size_t a, b, c, t = 0;
    int adj;
    QMX_TEST_CASE("SIMD tile steps vs a plain triple loop: ragged shapes, extremes");
    qmx_test_seed(0x51616u);
    for (a = 0; a < sizeof Ms / sizeof Ms[0]; a++)
        for (b = 0; b < sizeof Ns / sizeof Ns[0]; b++)
            for (c = 0; c < sizeof Ks / sizeof Ks[0]; c++, t++) {
                int kind = (int)(t % 3), pc = (int)(t / 3 % 2);
                CHECK(!sweep_fc(Ms[a], Ns[b], Ks[c], kind, pc, t % 4),
                      "fc M %lu N %lu K %lu kind %d per_channel %d", (unsigned long)Ms[a],
                      (unsigned long)Ns[b], (unsigned long)Ks[c], kind, pc);
            }
    /* the extremes at every K, both channel modes; a second panel of 256 rows */
    for (c = 0; c < sizeof Ks / sizeof Ks[0]; c++)
        for (adj = 0; adj < 2; adj++)
            CHECK(!sweep_fc(adj ? 9 : 1, 17, Ks[c], 1, adj, c % 4), "fc extremes K %lu",
                  (unsigned long)Ks[c]);
    CHECK(!sweep_fc(SMALL_MEM ? 257 : 300, 17, 513, 0, 1, 1), "fc M past one panel");
    CHECK(!sweep_fc(SMALL_MEM ? 257 : 300, 33, 1100, 2, 0, 2), "fc M past one panel, random");
    for (a = 0; a < sizeof bM / sizeof bM[0]; a++)
        for (b = 0; b < sizeof bN / sizeof bN[0]; b++)
            for (c = 0; c < sizeof bK / sizeof bK[0]; c++)
                for (adj = 0; adj < 4; adj++, t++) {
                    int kind = (int)(t % 3);
                    size_t batch = 1 + t % 2;
                    CHECK(!sweep_bmm(batch, bM[a], bN[b], bK[c], adj & 1, adj >> 1, kind),
                          "bmm batch %lu M %lu N %lu K %lu adj %d %d kind %d",
                          (unsigned long)batch, (unsigned long)bM[a], (unsigned long)bN[b],
                          (unsigned long)bK[c], adj & 1, adj >> 1, kind);
                }
}

/* ---- 3. errors: a status, out and the workspace untouched ---- */
static int16_t eout[64];
static unsigned char ews[8192];
static void sentinel(void) { size_t i; for (i = 0; i < 64; i++) eout[i] = SENT16; memset(ews, 0xA5, sizeof ews); }
static int untouched(void) {
    size_t i;
    for (i = 0; i < 64; i++) if (eout[i] != SENT16) return 0;
    for (i = 0; i < sizeof ews; i++) if (ews[i] != 0xA5) return 0;
    return 1;
}

#define EXPECT_FC(want, M, N, K, A, lda, W, ldw, zp, rq, o, ldo, ws, wsb)                        \
    do {                                                                                        \
        sentinel();                                                                             \
        CHECK_EQ_INT(qmx_fully_connected_i16(M, N, K, A, lda, W, ldw, zp, rq, o, ldo, ws, wsb),  \
                     want, "fc line %d", __LINE__);                                             \
        CHECK(untouched(), "fc line %d: output or workspace written on error", __LINE__);       \
    } while (0)
#define EXPECT_FCP(want, M, N, K, A, lda, P, pb, zp, rq, o, ldo, ws, wsb)                       \
    do {                                                                                        \
        sentinel();                                                                             \
        CHECK_EQ_INT(qmx_fully_connected_i16_packed(M, N, K, A, lda, P, pb, zp, rq, o, ldo, ws,  \
                                                    wsb), want, "fcp line %d", __LINE__);       \
        CHECK(untouched(), "fcp line %d: output or workspace written on error", __LINE__);      \
    } while (0)
#define EXPECT_BMM(want, bt, M, N, K, X, ldx, xbs, ax, Y, ldy, ybs, ay, rq, o, ldo, obs, ws, wsb) \
    do {                                                                                        \
        sentinel();                                                                             \
        CHECK_EQ_INT(qmx_batch_matmul_i16(bt, M, N, K, X, ldx, xbs, ax, Y, ldy, ybs, ay, rq, o,  \
                                          ldo, obs, ws, wsb), want, "bmm line %d", __LINE__);   \
        CHECK(untouched(), "bmm line %d: output or workspace written on error", __LINE__);      \
    } while (0)

static void errors(void) {
    int16_t A[64], Y[64];
    int8_t W[64];
    int32_t mult[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30}, bad_mult[2] = {1 << 30, -1};
    int shift[4] = {-10, -10, -10, -10}, sh_hi[2] = {-10, 8}, sh_lo[2] = {-32, -10};
    int64_t bias[4] = {0, 0, 0, 0}, big_bias[2] = {0, QMX_REQUANT64_MAX_BIAS + 1};
    int64_t neg_bias[2] = {-QMX_REQUANT64_MAX_BIAS - 1, 0};
    qmx_requant64_config rq, r2;
    size_t need = 0, pb = 0;
    unsigned char blob[256];
    QMX_TEST_CASE("errors: status, out and workspace untouched");
    memset(A, 1, sizeof A); memset(W, 1, sizeof W); memset(Y, 1, sizeof Y);
    memset(&rq, 0, sizeof rq);
    rq.per_channel = 1; rq.multipliers = mult; rq.shifts = shift; rq.bias = bias;
    CHECK(qmx_fully_connected_i16_workspace_size(2, 2, 4, &need) == QMX_OK, "query");
    CHECK(qmx_fully_connected_i16_workspace_size(2, 2, 4, NULL) == QMX_ERR_NULL, "query NULL");
    CHECK(qmx_fully_connected_i16_workspace_size(0, 2, 4, &need) == QMX_ERR_SIZE, "query M 0");
    CHECK(qmx_fully_connected_i16_workspace_size(1, 1, QMX_FC_I16_MAX_K + 1, &need) ==
          QMX_ERR_OVERFLOW, "query K past the bound");
    CHECK(qmx_batch_matmul_i16_workspace_size(1, 1, QMX_BATCH_MATMUL_I16_MAX_K + 1, &need) ==
          QMX_ERR_OVERFLOW, "bmm query K past the bound");
    CHECK(qmx_fully_connected_i16_workspace_size(2, 2, 4, &need) == QMX_OK, "query");
    CHECK_EQ_INT(need, 64 + 128 + 256, "workspace formula 64 + r64(32*4) + r64(128*2)");
    /* the valid call first: it works with exactly need bytes */
    sentinel();
    CHECK_EQ_INT(qmx_fully_connected_i16(2, 2, 4, A, 4, W, 4, 0, &rq, eout, 2, ews, need), QMX_OK,
                 "valid");
    EXPECT_FC(QMX_ERR_BUFFER_TOO_SMALL, 2, 2, 4, A, 4, W, 4, 0, &rq, eout, 2, ews, need - 1);
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, NULL, 4, W, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, A, 4, NULL, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, A, 4, W, 4, 0, NULL, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, A, 4, W, 4, 0, &rq, NULL, 2, ews, need);
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, A, 4, W, 4, 0, &rq, eout, 2, NULL, need);
    r2 = rq; r2.multipliers = NULL;
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.shifts = NULL;
    EXPECT_FC(QMX_ERR_NULL, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 128, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, -129, &rq, eout, 2, ews, need);
    r2 = rq; r2.shifts = sh_hi;       /* shift 8 > 7 on channel 1 */
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.shifts = sh_lo;       /* shift -32 */
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.multipliers = bad_mult;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.per_channel = 0; r2.multipliers = bad_mult + 1;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.bias = big_bias;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.bias = neg_bias;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.act_min = 10; r2.act_max = 5;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.act_min = -32769; r2.act_max = 5;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    r2 = rq; r2.act_min = 0; r2.act_max = 32768;
    EXPECT_FC(QMX_ERR_ARG, 2, 2, 4, A, 4, W, 4, 0, &r2, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_SIZE, 0, 2, 4, A, 4, W, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_SIZE, 2, 0, 4, A, 4, W, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_SIZE, 2, 2, 0, A, 4, W, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_OVERFLOW, 1, 1, QMX_FC_I16_MAX_K + 1, A, QMX_FC_I16_MAX_K + 1, W,
              QMX_FC_I16_MAX_K + 1, 0, &rq, eout, 1, ews, sizeof ews);
    EXPECT_FC(QMX_ERR_SHAPE, 2, 2, 4, A, 3, W, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_SHAPE, 2, 2, 4, A, 4, W, 3, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_SHAPE, 2, 2, 4, A, 4, W, 4, 0, &rq, eout, 1, ews, need);
    EXPECT_FC(QMX_ERR_OVERFLOW, 3, 2, 4, A, SIZE_MAX / 2, W, 4, 0, &rq, eout, 2, ews, need);
    EXPECT_FC(QMX_ERR_OVERFLOW, 2, 2, 4, A, 4, W, 4, 0, &rq, eout, SIZE_MAX / 2, ews, need);

    /* packed */
    CHECK(qmx_matmul_i8_pack_weights_size(2, 4, &pb) == QMX_OK && pb <= sizeof blob, "pack size");
    CHECK(qmx_matmul_i8_pack_weights(W, 2, 4, 4, QMX_B_NK, blob, pb) == QMX_OK, "pack");
    sentinel();
    CHECK_EQ_INT(qmx_fully_connected_i16_packed(2, 2, 4, A, 4, blob, pb, 0, &rq, eout, 2, ews,
                                                need), QMX_OK, "packed valid");
    EXPECT_FCP(QMX_ERR_BUFFER_TOO_SMALL, 2, 2, 4, A, 4, blob, pb, 0, &rq, eout, 2, ews, need - 1);
    EXPECT_FCP(QMX_ERR_BUFFER_TOO_SMALL, 2, 2, 4, A, 4, blob, pb - 1, 0, &rq, eout, 2, ews, need);
    EXPECT_FCP(QMX_ERR_NULL, 2, 2, 4, A, 4, NULL, pb, 0, &rq, eout, 2, ews, need);
    EXPECT_FCP(QMX_ERR_SHAPE, 2, 1, 4, A, 4, blob, pb, 0, &rq, eout, 2, ews, need);
    EXPECT_FCP(QMX_ERR_ARG, 2, 2, 4, A, 4, blob, pb, 200, &rq, eout, 2, ews, need);
    blob[0] ^= 1;
    EXPECT_FCP(QMX_ERR_PARSE, 2, 2, 4, A, 4, blob, pb, 0, &rq, eout, 2, ews, need);
    blob[0] ^= 1;

    /* batch matmul */
    CHECK(qmx_batch_matmul_i16_workspace_size(2, 2, 4, &need) == QMX_OK, "bmm query");
    sentinel();
    CHECK_EQ_INT(qmx_batch_matmul_i16(2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, ews,
                                      need), QMX_OK, "bmm valid");
    EXPECT_BMM(QMX_ERR_BUFFER_TOO_SMALL, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, ews,
               need - 1);
    EXPECT_BMM(QMX_ERR_NULL, 2, 2, 2, 4, NULL, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_NULL, 2, 2, 2, 4, A, 4, 8, 0, NULL, 2, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_NULL, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, NULL, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_NULL, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &rq, NULL, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_NULL, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, NULL, need);
    EXPECT_BMM(QMX_ERR_SIZE, 0, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_SIZE, 2, 2, 2, 0, A, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_OVERFLOW, 1, 1, 1, QMX_BATCH_MATMUL_I16_MAX_K + 1, A, 1 << 17, 0, 0, Y, 1,
               0, 0, &rq, eout, 1, 0, ews, sizeof ews);
    EXPECT_BMM(QMX_ERR_SHAPE, 2, 2, 2, 4, A, 3, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_SHAPE, 2, 2, 2, 4, A, 1, 8, 1, Y, 2, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_SHAPE, 2, 2, 2, 4, A, 4, 8, 0, Y, 1, 8, 0, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_SHAPE, 2, 2, 2, 4, A, 4, 8, 0, Y, 3, 8, 1, &rq, eout, 2, 4, ews, need);
    EXPECT_BMM(QMX_ERR_SHAPE, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &rq, eout, 2, 3, ews, need);
    EXPECT_BMM(QMX_ERR_OVERFLOW, 3, 2, 2, 4, A, 4, SIZE_MAX / 2, 0, Y, 2, 8, 0, &rq, eout, 2, 4,
               ews, need);
    r2 = rq; r2.shifts = sh_hi;
    EXPECT_BMM(QMX_ERR_ARG, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &r2, eout, 2, 4, ews, need);
    r2 = rq; r2.bias = big_bias;
    EXPECT_BMM(QMX_ERR_ARG, 2, 2, 2, 4, A, 4, 8, 0, Y, 2, 8, 0, &r2, eout, 2, 4, ews, need);

    /* the scalar check */
    CHECK(qmx_requantize64_check(0, -31) == QMX_OK && qmx_requantize64_check(INT32_MAX, 7) ==
          QMX_OK, "check: valid extremes");
    CHECK(qmx_requantize64_check(-1, 0) == QMX_ERR_ARG && qmx_requantize64_check(1, 8) ==
          QMX_ERR_ARG && qmx_requantize64_check(1, -32) == QMX_ERR_ARG, "check: rejects");
    /* total outside the checked ranges: clamped arguments */
    CHECK_EQ_INT(qmx_requantize64(INT64_MAX, 1 << 30, -31), qmx_requantize64(((int64_t)1 << 47) - 1,
                 1 << 30, -31), "acc clamped");
    CHECK_EQ_INT(qmx_requantize64(1000, -5, 0), 0, "negative multiplier taken as 0");
    CHECK_EQ_INT(qmx_requantize64(1000, 1 << 30, 40), qmx_requantize64(1000, 1 << 30, 7),
                 "shift clamped");
}

/* ---- 5. the Cortex-M paths (DSP, MVE) against a plain int64 triple loop ---- */
/* The fully-connected reads int8 W in place there (1 x 4, 2 x 2 / 2 x 3 register tiles,
 * int32 runs of up to 512 k, laid-out rows cached per panel and K block when they fit, the
 * weight zero point as - w_zp * sum a); packed and batch matmul take the widened 64-bit path.
 * The stage is x 2^-e with e from the reference (out = acc exactly when |acc| < 2^14, else
 * round(acc / 2^e) with |out| <= 2^14), per channel or per tensor. Data: 0 tiny, 1 random,
 * 2 extremes (a = -32768 / 32767 against w - w_zp = +-255), 3 all a = -32768 and all w = -128
 * (w_zp 0: every product 2^22, a 512-k run sums to exactly 2^31). */
static int cm_stage(const int64_t *ref, size_t M, size_t N, int pc, int32_t *mult, int *shift) {
    size_t m, n;
    int64_t mx = 0;
    for (n = 0; n < N; n++) {
        int e = 0;
        if (pc || n == 0) {
            mx = 0;
            for (m = 0; m < M; m++) {
                size_t c;
                for (c = pc ? n : 0; c < (pc ? n + 1 : N); c++) {
                    int64_t v = ref[m * N + c] < 0 ? -ref[m * N + c] : ref[m * N + c];
                    if (v > mx) mx = v;
                }
            }
        }
        while ((mx >> e) >= 16384) e++;
        mult[n] = 1 << 30; shift[n] = 1 - e;
    }
    return 0;
}
static int cm_fc(size_t M, size_t N, size_t K, int kind, int32_t wzp, int pc, size_t pad) {
    size_t lda = K + pad, ldw = K + (pad & 1), ldo = N, wsb = 0, pb = 0, m, n, k, i;
    int16_t *A = (int16_t *)malloc(M * lda * 2), *o1 = (int16_t *)malloc(M * ldo * 2);
    int16_t *o2 = (int16_t *)malloc(M * ldo * 2);
    int8_t *W = (int8_t *)malloc(N * ldw);
    int64_t *ref = (int64_t *)malloc(M * N * 8);
    int32_t *mult = (int32_t *)malloc(N * 4);
    int *shift = (int *)malloc(N * sizeof(int));
    unsigned char *ws;
    void *blob;
    qmx_requant64_config rq;
    int bad = 0;
    for (i = 0; i < M * lda; i++) {
        uint32_t r = qmx_test_rand();
        A[i] = kind == 0 ? (int16_t)((int)(r % 7u) - 3)
             : kind == 1 ? (int16_t)((int32_t)(r & 0xFFFFu) - 32768)
             : kind == 2 ? (int16_t)((r & 3u) ? -32768 : 32767) : (int16_t)-32768;
    }
    for (i = 0; i < N * ldw; i++) {
        uint32_t r = qmx_test_rand();
        W[i] = kind == 0 ? (int8_t)((int)(r % 5u) - 2)
             : kind == 1 ? (int8_t)((int32_t)(r & 0xFFu) - 128)
             : kind == 2 ? (int8_t)((r & 3u) ? (wzp >= 0 ? -128 : 127) : (wzp >= 0 ? 127 : -128))
                         : (int8_t)-128;
    }
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            int64_t s = 0;
            for (k = 0; k < K; k++) s += (int64_t)A[m * lda + k] * ((int64_t)W[n * ldw + k] - wzp);
            ref[m * N + n] = s;
        }
    cm_stage(ref, M, N, pc, mult, shift);
    memset(&rq, 0, sizeof rq);
    rq.per_channel = pc; rq.multipliers = mult; rq.shifts = shift;
    qmx_fully_connected_i16_workspace_size(M, N, K, &wsb);
    ws = (unsigned char *)malloc(wsb + 8);
    qmx_matmul_i8_pack_weights_size(N, K, &pb);
    blob = malloc(pb);
    qmx_matmul_i8_pack_weights(W, N, K, ldw, QMX_B_NK, blob, pb);
    memset(ws, 0x7F, wsb + 8);   /* stale workspace: nothing may be reused across calls */
    if (qmx_fully_connected_i16(M, N, K, A, lda, W, ldw, wzp, &rq, o1, ldo, ws + pad % 8, wsb) !=
            QMX_OK ||
        qmx_fully_connected_i16_packed(M, N, K, A, lda, blob, pb, wzp, &rq, o2, ldo, ws, wsb) !=
            QMX_OK)
        bad = 1;
    for (m = 0; m < M && !bad; m++)
        for (n = 0; n < N; n++) {
            int16_t want = ref_stage(ref[m * N + n], n, &rq);
            if (o1[m * ldo + n] != want || o2[m * ldo + n] != want) bad = 1;
        }
    free(A); free(o1); free(o2); free(W); free(ref); free(mult); free(shift); free(ws); free(blob);
    return bad;
}
static int cm_bmm(size_t M, size_t N, size_t K, int ax, int ay, int kind) {
    size_t xr = ax ? K : M, xc = ax ? M : K, yr = ay ? N : K, yc = ay ? K : N, wsb = 0, i, j, k;
    size_t ldx = xc + 1, ldy = yc + (K & 1);
    int16_t *X = (int16_t *)malloc(xr * ldx * 2), *Y = (int16_t *)malloc(yr * ldy * 2);
    int16_t *O = (int16_t *)malloc(M * N * 2);
    int64_t *ref = (int64_t *)malloc(M * N * 8);
    int32_t *mult = (int32_t *)malloc(N * 4);
    int *shift = (int *)malloc(N * sizeof(int));
    unsigned char *ws;
    qmx_requant64_config rq;
    int bad = 0;
    for (i = 0; i < xr * ldx; i++)
        X[i] = kind ? (int16_t)((qmx_test_rand() & 7u) ? -32768 : 32767)
                    : (int16_t)((int32_t)(qmx_test_rand() & 0xFFFFu) - 32768);
    for (i = 0; i < yr * ldy; i++)
        Y[i] = kind ? (int16_t)-32768 : (int16_t)((int32_t)(qmx_test_rand() & 0xFFFFu) - 32768);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            int64_t s = 0;
            for (k = 0; k < K; k++)
                s += (int64_t)(ax ? X[k * ldx + i] : X[i * ldx + k]) *
                     (ay ? Y[j * ldy + k] : Y[k * ldy + j]);
            ref[i * N + j] = s;
        }
    cm_stage(ref, M, N, 1, mult, shift);
    memset(&rq, 0, sizeof rq);
    rq.per_channel = 1; rq.multipliers = mult; rq.shifts = shift;
    qmx_batch_matmul_i16_workspace_size(M, N, K, &wsb);
    ws = (unsigned char *)malloc(wsb);
    if (qmx_batch_matmul_i16(1, M, N, K, X, ldx, 0, ax, Y, ldy, 0, ay, &rq, O, N, 0, ws, wsb) !=
        QMX_OK)
        bad = 1;
    for (i = 0; i < M * N && !bad; i++)
        if (O[i] != ref_stage(ref[i], i % N, &rq)) bad = 1;
    free(X); free(Y); free(O); free(ref); free(mult); free(shift); free(ws);
    return bad;
}
static void cortexm_paths(void) {
    static const size_t Ms[] = {1, 2, 3, 5, 9, 17}, Ns[] = {1, 3, 4, 5, 15, 16, 17, 33};
    static const size_t Ks[] = {1, 2, 3, 8, 15, 16, 17, 255, 256, 257, 511, 512, 513, 1000, 1024};
    static const size_t xK[] = {255, 256, 511, 512, 513, 1024};
    static const size_t bK[] = {1, 2, 7, 8, 9, 255, 256, 257, 1000};
    size_t a, c, t = 0;
    QMX_TEST_CASE("Cortex-M paths vs a plain int64 triple loop: ragged shapes, 2^31 runs");
    qmx_test_seed(0xC0DE16u);
    for (c = 0; c < sizeof Ks / sizeof Ks[0]; c++)
        for (a = 0; a < sizeof Ms / sizeof Ms[0]; a++, t++) {
            size_t N = Ns[(c + 3 * a) % 8];
            int kind = (int)(t % 3), pc = (int)(t / 3 % 2);
            int32_t wzp = t % 4 == 0 ? 0 : t % 4 == 1 ? (int32_t)(qmx_test_rand() % 256u) - 128
                        : t % 4 == 2 ? 127 : -128;
            CHECK(!cm_fc(Ms[a], N, Ks[c], kind, wzp, pc, t % 3), "fc M %lu N %lu K %lu kind %d "
                  "w_zp %ld pc %d", (unsigned long)Ms[a], (unsigned long)N, (unsigned long)Ks[c],
                  kind, (long)wzp, pc);
        }
    for (c = 0; c < sizeof xK / sizeof xK[0]; c++)   /* 2^31 runs, extremes */
        for (a = 0; a < 3; a++) {
            CHECK(!cm_fc(a + 1, 17, xK[c], 3, 0, (int)(a & 1), a), "fc all -32768 x -128 M %lu K %lu",
                  (unsigned long)(a + 1), (unsigned long)xK[c]);
            CHECK(!cm_fc(a + 1, 17, xK[c], 3, 127, (int)(a & 1), a), "fc w - w_zp = -255 M %lu K %lu",
                  (unsigned long)(a + 1), (unsigned long)xK[c]);
            CHECK(!cm_fc(a + 2, 16, xK[c], 2, (int32_t)a - 1, 1, 0), "fc extremes M %lu K %lu",
                  (unsigned long)(a + 2), (unsigned long)xK[c]);
        }
    /* laid-out rows cached for some K blocks only; several strips reuse them */
    CHECK(!cm_fc(9, 33, 1500, 1, 0, 1, 1), "fc cached slot 0 only");
    CHECK(!cm_fc(14, 20, 1024, 1, 5, 0, 0), "fc 14 rows, K 1024");
    CHECK(!cm_fc(5, 40, 2100, 0, -3, 1, 2), "fc 5 rows, K 2100");
    CHECK(!cm_fc(13, 18, 512, 2, 0, 0, 1), "fc 13 rows, K 512");
    for (c = 0; c < sizeof bK / sizeof bK[0]; c++)
        for (a = 0; a < 4; a++, t++)
            CHECK(!cm_bmm(1 + t % 3, Ns[(c + a) % 8], bK[c], (int)(a == 3), (int)(a & 1),
                          (int)(t % 2)), "bmm M %lu N %lu K %lu adj %d %d", (unsigned long)(1 + t % 3),
                  (unsigned long)Ns[(c + a) % 8], (unsigned long)bK[c], (int)(a == 3), (int)(a & 1));
}

int main(void) {
    golden();
    random_shapes();
    simd_sweep();
    errors();
    cortexm_paths();
    return QMX_TEST_END();
}
