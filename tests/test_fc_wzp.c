/* test_fc_wzp.c - the weight zero point of the int8-activation fully-connected kernels
 * (qmx_requant_config.weight_zero_point; TFLite's filter offset is its negation):
 * qmx_fully_connected_i8, qmx_fully_connected_i8_packed and qmx_fully_connected_i4.
 *   1. tests/data/fc8_wzp_golden.txt (tests/gen/gen_fc8_wzp.py: an independent numpy model of
 *      TFLite's reference_integer_ops::FullyConnected / FullyConnectedPerChannel with int32
 *      accumulators and MultiplyByQuantizedMultiplier, double and single rounding): inputs
 *      refilled here from the same xorshift32 stream; nonzero filter and input offsets at
 *      their extremes, bias / none, per tensor / per channel, int8 / int16 out, saturation,
 *      M > 64 and N > 256 (several tiles), K at QMX_MATMUL_I8_MAX_K and QMX_MATMUL_I4_MAX_K
 *      (accumulator plus bias exactly INT32_MAX / INT32_MIN); plain, packed and int4 kernels
 *      bit for bit, workspace misaligned, the padding of out never written.
 *   2. random shapes: the three kernels against a naive int64 loop written here (through the
 *      scalar qmx_requantize + clamp), and against qmx_matmul_i8 with b_zp = w_zp followed by
 *      qmx_requantize_array (which ignores weight_zero_point).
 *   3. errors: weight zero points outside [-128, 127] (int8) / [-8, 7] (int4) return
 *      QMX_ERR_ARG with out and the workspace untouched. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"

#define SENT8 ((int8_t)0x5A)
#define SENT16 ((int16_t)0x5A5A)

static int64_t parse64(const char *s, int *ok) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end) *ok = 0;
    return (int64_t)v;
}

/* fill modes as gen_fc8_wzp.py: 0 random, 1 extremes, 2 all min, 3 all max, 4 small;
 * bits 8 (int8) or 4 (int4 values in int8) */
static void fillv(int8_t *p, size_t n, int mode, int bits) {
    const int32_t lo = bits == 8 ? -128 : -8, hi = bits == 8 ? 127 : 7;
    const uint32_t mask = bits == 8 ? 0xFFu : 0xFu, small = bits == 8 ? 17u : 9u;
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t r;
        if (mode == 2) { p[i] = (int8_t)lo; continue; }
        if (mode == 3) { p[i] = (int8_t)hi; continue; }
        r = qmx_test_rand();
        if (mode == 0) p[i] = (int8_t)((int32_t)(r & mask) + lo);
        else if (mode == 1) p[i] = (int8_t)((r & 1u) ? hi : lo);
        else p[i] = (int8_t)((int32_t)(r % small) - (int32_t)(small / 2));
    }
}
/* int4 values -> packed nibbles by flat index (element 2i in the low nibble of byte i) */
static void pack4(const int8_t *v, size_t n, uint8_t *p) {
    size_t i;
    for (i = 0; i < (n + 1) / 2; i++) p[i] = 0;
    for (i = 0; i < n; i++) p[i / 2] |= (uint8_t)(((uint32_t)v[i] & 0xFu) << (4 * (i & 1)));
}

/* Runs the kernel(s) of one configuration and compares with want [M][N]; 0 = all equal. */
typedef struct fcase {
    int i4, i16;
    size_t M, N, K, lda, ldw, ldo;
} fcase;

/* which: 0 plain, 1 packed, 2 int4. Returns the number of differing outputs (padding writes
 * count as differences too); misalign: workspace offset. */
static long run_kernel(const fcase *c, int which, const int8_t *A, const int8_t *W,
                       const qmx_requant_config *rq, int32_t a_zp, const int32_t *want,
                       size_t misalign) {
    size_t on = (c->M - 1) * c->ldo + c->N, wsb = 0, pb = 0, i, j, wn = (c->N - 1) * c->ldw + c->K;
    size_t es = c->i16 ? 2 : 1;
    unsigned char *out = (unsigned char *)malloc(on * es), *ws;
    void *blob = NULL;
    uint8_t *w4 = NULL;
    qmx_status st;
    long bad = 0;
    if (which == 0) st = qmx_fully_connected_i8_workspace_size(c->M, c->N, c->K, &wsb);
    else if (which == 1) st = qmx_fully_connected_i8_packed_workspace_size(c->M, c->N, c->K, &wsb);
    else st = qmx_matmul_i4_workspace_size(c->M, c->N, c->K, NULL, &wsb);
    CHECK_EQ_INT(st, QMX_OK, "workspace query (kernel %d)", which);
    ws = (unsigned char *)malloc(wsb + misalign);
    if (!out || !ws) { CHECK(0, "malloc"); free(out); free(ws); return 1; }
    for (i = 0; i < on; i++) {
        if (c->i16) ((int16_t *)(void *)out)[i] = SENT16;
        else ((int8_t *)out)[i] = SENT8;
    }
    if (which == 0) {
        st = qmx_fully_connected_i8(c->M, c->N, c->K, A, c->lda, a_zp, W, c->ldw, rq, out,
                                    c->ldo, ws + misalign, wsb);
    } else if (which == 1) {
        CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(c->N, c->K, &pb), QMX_OK, "pack size");
        blob = malloc(pb);
        CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, c->N, c->K, c->ldw, QMX_B_NK, blob, pb),
                     QMX_OK, "pack");
        st = qmx_fully_connected_i8_packed(c->M, c->N, c->K, A, c->lda, a_zp, blob, pb, rq, out,
                                           c->ldo, ws + misalign, wsb);
    } else {
        w4 = (uint8_t *)malloc((wn + 1) / 2);
        pack4(W, wn, w4);
        st = qmx_fully_connected_i4(c->M, c->N, c->K, A, c->lda, a_zp, w4, c->ldw, rq, out,
                                    c->ldo, ws + misalign, wsb);
    }
    CHECK_EQ_INT(st, QMX_OK, "status (kernel %d)", which);
    for (i = 0; i < c->M; i++)
        for (j = 0; j < c->ldo; j++) {
            size_t o = i * c->ldo + j;
            int32_t v;
            if (o >= on) continue;
            v = c->i16 ? ((int16_t *)(void *)out)[o] : ((int8_t *)out)[o];
            if (j < c->N) {
                if (v != want[i * c->N + j] && bad++ < 5)
                    printf("  kernel %d: out[%lu][%lu] = %ld, want %ld\n", which,
                           (unsigned long)i, (unsigned long)j, (long)v,
                           (long)want[i * c->N + j]);
            } else if (v != (c->i16 ? SENT16 : SENT8)) {
                bad++;   /* padding written */
            }
        }
    free(out); free(ws); free(blob); free(w4);
    return bad;
}

/* ---- 1. golden data ---- */
static void golden(void) {
    qmx_test_table t;
    char line[512], *fld[32];
    fcase c;
    qmx_requant_config rq;
    int32_t *mult = NULL, *bias = NULL, *want = NULL, a_zp = 0;
    int *shift = NULL, per_channel = 0, has_bias = 0, fill_a = 0, fill_w = 0, in_case = 0;
    uint32_t seed = 0;
    size_t nq = 0, nb = 0, no = 0, nout = 0;
    long case_line = 0, cases = 0, i4cases = 0;
    memset(&c, 0, sizeof c);
    memset(&rq, 0, sizeof rq);
    QMX_TEST_CASE("golden: TFLite FullyConnected with a filter offset (gen_fc8_wzp.py)");
    if (!qmx_test_table_open(&t, "fc8_wzp_golden.txt", "# columns: tag fields")) return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int n = qmx_test_split_fields(line, fld, 32), ok = 1, i;
        if (n < 1) { CHECK(0, "line %ld: empty", t.line_no); continue; }
        if (strcmp(fld[0], "case") == 0 && n == 20) {
            int64_t v[18];
            for (i = 0; i < 18; i++) v[i] = parse64(fld[i + 2], &ok);
            CHECK(ok, "line %ld: malformed", t.line_no);
            c.i4 = strcmp(fld[1], "i4") == 0;
            c.M = (size_t)v[0]; c.N = (size_t)v[1]; c.K = (size_t)v[2];
            c.lda = (size_t)v[3]; c.ldw = (size_t)v[4]; c.ldo = (size_t)v[5];
            per_channel = (int)v[6]; has_bias = (int)v[7]; a_zp = (int32_t)v[8];
            memset(&rq, 0, sizeof rq);
            rq.weight_zero_point = (int32_t)v[9]; rq.output_zero_point = (int32_t)v[10];
            rq.act_min = (int32_t)v[11]; rq.act_max = (int32_t)v[12];
            c.i16 = (int)v[13];
            rq.out_dtype = c.i16 ? QMX_INT16 : QMX_INT8;
            rq.mode = v[14] ? QMX_REQUANT_SINGLE_ROUNDING : QMX_REQUANT_DOUBLE_ROUNDING;
            rq.per_channel = per_channel;
            fill_a = (int)v[15]; fill_w = (int)v[16]; seed = (uint32_t)v[17];
            nout = c.M * c.N;
            mult = (int32_t *)malloc(c.N * 4); shift = (int *)malloc(c.N * sizeof(int));
            bias = (int32_t *)malloc(c.N * 4); want = (int32_t *)malloc(nout * 4);
            nq = nb = no = 0;
            in_case = 1; case_line = t.line_no;
        } else if (in_case && strcmp(fld[0], "q") == 0 && n == 3 && nq < c.N) {
            mult[nq] = (int32_t)parse64(fld[1], &ok); shift[nq] = (int)parse64(fld[2], &ok); nq++;
            CHECK(ok, "line %ld: malformed", t.line_no);
        } else if (in_case && strcmp(fld[0], "b") == 0 && n == 2 && nb < c.N) {
            bias[nb++] = (int32_t)parse64(fld[1], &ok);
            CHECK(ok, "line %ld: malformed", t.line_no);
        } else if (in_case && strcmp(fld[0], "o") == 0) {
            for (i = 1; i < n && no < nout; i++) want[no++] = (int32_t)parse64(fld[i], &ok);
            CHECK(ok && i == n, "line %ld: malformed", t.line_no);
        } else if (in_case && strcmp(fld[0], "end") == 0) {
            CHECK(no == nout && nq == (size_t)(per_channel ? c.N : 1) &&
                      nb == (size_t)(has_bias ? c.N : 0),
                  "line %ld: case record incomplete", case_line);
            if (no == nout) {
                size_t an = (c.M - 1) * c.lda + c.K, wn = (c.N - 1) * c.ldw + c.K;
                int8_t *A = (int8_t *)malloc(an), *W = (int8_t *)malloc(wn);
                long bad;
                rq.multipliers = mult; rq.shifts = shift; rq.bias = has_bias ? bias : NULL;
                qmx_test_seed(seed);
                fillv(A, an, fill_a, 8);
                fillv(W, wn, fill_w, c.i4 ? 4 : 8);
                if (c.i4) {
                    bad = run_kernel(&c, 2, A, W, &rq, a_zp, want, 3);
                    CHECK(bad == 0, "line %ld: int4: %ld outputs differ from TFLite's", case_line,
                          bad);
                    i4cases++;
                } else {
                    bad = run_kernel(&c, 0, A, W, &rq, a_zp, want, 1);
                    CHECK(bad == 0, "line %ld: plain: %ld outputs differ from TFLite's",
                          case_line, bad);
                    bad = run_kernel(&c, 1, A, W, &rq, a_zp, want, 5);
                    CHECK(bad == 0, "line %ld: packed: %ld outputs differ from TFLite's",
                          case_line, bad);
                }
                free(A); free(W);
            }
            cases++;
            free(mult); free(shift); free(bias); free(want);
            mult = bias = want = NULL; shift = NULL;
            in_case = 0;
        } else {
            CHECK(0, "line %ld: unexpected record '%s'", t.line_no, fld[0]);
        }
    }
    CHECK(!in_case, "unterminated case");
    CHECK_EQ_INT(cases, 23, "cases in fc8_wzp_golden.txt");
    CHECK_EQ_INT(i4cases, 9, "int4 cases in fc8_wzp_golden.txt");
    qmx_test_table_close(&t, 1865);
}

/* ---- 2. random shapes against a naive loop ---- */
static int32_t clamp_out(int32_t v, const qmx_requant_config *rq, int i16) {
    int64_t w = (int64_t)v + rq->output_zero_point, lo = i16 ? -32768 : -128, hi = i16 ? 32767 : 127;
    if (rq->act_min != 0 || rq->act_max != 0) { lo = rq->act_min; hi = rq->act_max; }
    return (int32_t)(w < lo ? lo : (w > hi ? hi : w));
}

static void random_shapes(void) {
    const int rounds = QMX_TEST_SMALL_TARGET ? 12 : 60;
    int r;
    QMX_TEST_CASE("random shapes: plain = packed = int4 = naive int64 loop");
    qmx_test_seed(0xFC8A2Bu);
    for (r = 0; r < rounds; r++) {
        fcase c;
        qmx_requant_config rq;
        size_t an, wn, m, n, k, i;
        int8_t *A, *W;
        int32_t *want, *acc, mult[300], bias[300], a_zp;
        int shift[300], i4 = r % 3 == 2;
        memset(&c, 0, sizeof c);
        memset(&rq, 0, sizeof rq);
        c.i4 = i4;
        c.M = (r % 5 == 0) ? qmx_test_rand_range(16, 70) : qmx_test_rand_range(1, 9);
        c.N = (r % 7 == 0) ? qmx_test_rand_range(250, 300) : qmx_test_rand_range(1, 40);
        c.K = qmx_test_rand_range(1, 300);
        c.lda = c.K + qmx_test_rand_range(0, 3);
        c.ldw = c.K + qmx_test_rand_range(0, 3);
        c.ldo = c.N + qmx_test_rand_range(0, 2);
        c.i16 = (int)(qmx_test_rand() & 1u);
        a_zp = (int32_t)qmx_test_rand_range(0, 255) - 128;
        rq.weight_zero_point = i4 ? (int32_t)qmx_test_rand_range(0, 15) - 8
                                  : (int32_t)qmx_test_rand_range(0, 255) - 128;
        if (r % 9 == 0) rq.weight_zero_point = i4 ? ((r & 1) ? 7 : -8) : ((r & 1) ? 127 : -128);
        rq.mode = (qmx_requant_mode)(qmx_test_rand() % 3u);
        rq.per_channel = (int)(qmx_test_rand() & 1u);
        rq.out_dtype = c.i16 ? QMX_INT16 : QMX_INT8;
        rq.output_zero_point = (int32_t)qmx_test_rand_range(0, 20) - 10;
        for (n = 0; n < c.N; n++) {
            mult[n] = (int32_t)(0x40000000u + (qmx_test_rand() & 0x3FFFFFFFu));
            shift[n] = -(int)qmx_test_rand_range(c.i16 ? 2 : 6, c.i16 ? 8 : 14);
            bias[n] = (int32_t)qmx_test_rand_range(0, 200000) - 100000;
        }
        {
            static float sc[300];
            for (n = 0; n < c.N; n++) sc[n] = (float)(1 + qmx_test_rand() % 100) / (c.i16 ? 256.0f : 65536.0f);
            rq.scales = sc;
        }
        rq.multipliers = mult; rq.shifts = shift;
        rq.bias = (qmx_test_rand() & 1u) ? bias : NULL;
        an = (c.M - 1) * c.lda + c.K; wn = (c.N - 1) * c.ldw + c.K;
        A = (int8_t *)malloc(an); W = (int8_t *)malloc(wn);
        want = (int32_t *)malloc(c.M * c.N * 4); acc = (int32_t *)malloc(c.M * c.N * 4);
        fillv(A, an, 0, 8);
        fillv(W, wn, 0, i4 ? 4 : 8);
        for (m = 0; m < c.M; m++)
            for (n = 0; n < c.N; n++) {
                int64_t s = 0;
                size_t pi = rq.per_channel ? n : 0;
                int32_t a, v;
                for (k = 0; k < c.K; k++)
                    s += ((int64_t)A[m * c.lda + k] - a_zp) *
                         ((int64_t)W[n * c.ldw + k] - rq.weight_zero_point);
                acc[m * c.N + n] = (int32_t)s;
                a = (int32_t)s + (rq.bias ? rq.bias[n] : 0);   /* |s| < 2^25: no overflow */
                if (rq.mode == QMX_REQUANT_DOUBLE_ROUNDING) v = qmx_requantize(a, mult[pi], shift[pi]);
                else if (rq.mode == QMX_REQUANT_SINGLE_ROUNDING)
                    v = qmx_requantize_single_rounding(a, mult[pi], shift[pi]);
                else v = qmx_requantize_float(a, rq.scales[pi]);
                want[m * c.N + n] = clamp_out(v, &rq, c.i16);
            }
        if (i4) {
            long bad = run_kernel(&c, 2, A, W, &rq, a_zp, want, (size_t)r % 7);
            CHECK(bad == 0, "round %d (int4 M=%lu N=%lu K=%lu w_zp=%ld): %ld differ", r,
                  (unsigned long)c.M, (unsigned long)c.N, (unsigned long)c.K,
                  (long)rq.weight_zero_point, bad);
        } else {
            long bad0 = run_kernel(&c, 0, A, W, &rq, a_zp, want, (size_t)r % 7);
            long bad1 = run_kernel(&c, 1, A, W, &rq, a_zp, want, (size_t)r % 5);
            CHECK(bad0 == 0 && bad1 == 0,
                  "round %d (M=%lu N=%lu K=%lu w_zp=%ld): plain %ld, packed %ld differ", r,
                  (unsigned long)c.M, (unsigned long)c.N, (unsigned long)c.K,
                  (long)rq.weight_zero_point, bad0, bad1);
            /* = qmx_matmul_i8 with b_zp = w_zp, then qmx_requantize_array (which ignores
             * weight_zero_point), for output zero points inside the dtype */
            {
                qmx_matmul_i8_opts o;
                size_t need = 0, es = c.i16 ? 2 : 1;
                int32_t *C = (int32_t *)malloc(c.M * c.N * 4);
                unsigned char *ref = (unsigned char *)malloc(c.M * c.N * es), *ws;
                long bad = 0;
                memset(&o, 0, sizeof o);
                o.a_zp = a_zp; o.b_zp = rq.weight_zero_point;
                CHECK_EQ_INT(qmx_matmul_i8_workspace_size(c.M, c.N, c.K, &o, &need), QMX_OK, "ws");
                ws = (unsigned char *)malloc(need);
                CHECK_EQ_INT(qmx_matmul_i8(c.M, c.N, c.K, A, c.lda, W, c.ldw, C, c.N, &o, ws, need),
                             QMX_OK, "matmul");
                for (i = 0; i < c.M * c.N; i++) bad += C[i] != acc[i];
                CHECK_EQ_INT(qmx_requantize_array(&rq, C, c.M, c.N, ref, c.M * c.N * es), QMX_OK,
                             "requantize_array");
                for (i = 0; i < c.M * c.N; i++)
                    bad += (c.i16 ? ((int16_t *)(void *)ref)[i] : ((int8_t *)ref)[i]) != want[i];
                CHECK(bad == 0, "round %d: qmx_matmul_i8 + qmx_requantize_array: %ld differ", r,
                      bad);
                free(C); free(ref); free(ws);
            }
        }
        free(A); free(W); free(want); free(acc);
    }
}

/* ---- 3. errors ---- */
static void errors(void) {
    static int8_t A[4 * 8], W[4 * 8];
    static uint8_t W4[16];
    static int8_t out[16];
    static unsigned char ws[1 << 14], wsnap[1 << 14];
    static unsigned char blob[4096];
    int32_t mult = 1 << 30;
    int shift = -1;
    qmx_requant_config rq;
    size_t pb = 0, i, need = 0;
    const int32_t bad8[4] = {128, -129, INT32_MAX, INT32_MIN};
    const int32_t bad4[4] = {8, -9, 127, -128};
    int k;
    QMX_TEST_CASE("errors: weight zero point out of range -> QMX_ERR_ARG, nothing written");
    memset(A, 3, sizeof A); memset(W, 5, sizeof W); memset(W4, 0x35, sizeof W4);
    memset(&rq, 0, sizeof rq);
    rq.multipliers = &mult; rq.shifts = &shift;
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights_size(4, 8, &pb), QMX_OK, "pack size");
    CHECK(pb <= sizeof blob, "blob");
    CHECK_EQ_INT(qmx_matmul_i8_pack_weights(W, 4, 8, 8, QMX_B_NK, blob, pb), QMX_OK, "pack");
    for (i = 0; i < sizeof ws; i++) ws[i] = (unsigned char)(i * 7u + 1u);
    memcpy(wsnap, ws, sizeof ws);
    for (k = 0; k < 4; k++) {
        memset(out, 0x5A, sizeof out);
        rq.weight_zero_point = bad8[k];
        CHECK_EQ_INT(qmx_fully_connected_i8(4, 4, 8, A, 8, 0, W, 8, &rq, out, 4, ws, sizeof ws),
                     QMX_ERR_ARG, "plain w_zp %ld", (long)bad8[k]);
        CHECK_EQ_INT(qmx_fully_connected_i8_packed(4, 4, 8, A, 8, 0, blob, pb, &rq, out, 4, ws,
                                                   sizeof ws),
                     QMX_ERR_ARG, "packed w_zp %ld", (long)bad8[k]);
        rq.weight_zero_point = bad4[k];
        CHECK_EQ_INT(qmx_fully_connected_i4(4, 4, 8, A, 8, 0, W4, 8, &rq, out, 4, ws, sizeof ws),
                     QMX_ERR_ARG, "int4 w_zp %ld", (long)bad4[k]);
        for (i = 0; i < sizeof out; i++) CHECK(out[i] == 0x5A, "out[%lu] written", (unsigned long)i);
        CHECK(memcmp(ws, wsnap, sizeof ws) == 0, "workspace written");
    }
    /* the extremes of the ranges are accepted */
    CHECK_EQ_INT(qmx_fully_connected_i8_workspace_size(4, 4, 8, &need), QMX_OK, "ws");
    CHECK(need <= sizeof ws, "ws size");
    for (k = 0; k < 2; k++) {
        rq.weight_zero_point = k ? 127 : -128;
        CHECK_EQ_INT(qmx_fully_connected_i8(4, 4, 8, A, 8, 0, W, 8, &rq, out, 4, ws, sizeof ws),
                     QMX_OK, "plain w_zp %ld", (long)rq.weight_zero_point);
        CHECK_EQ_INT(qmx_fully_connected_i8_packed(4, 4, 8, A, 8, 0, blob, pb, &rq, out, 4, ws,
                                                   sizeof ws),
                     QMX_OK, "packed w_zp %ld", (long)rq.weight_zero_point);
        rq.weight_zero_point = k ? 7 : -8;
        CHECK_EQ_INT(qmx_fully_connected_i4(4, 4, 8, A, 8, 0, W4, 8, &rq, out, 4, ws, sizeof ws),
                     QMX_OK, "int4 w_zp %ld", (long)rq.weight_zero_point);
    }
    /* qmx_requantize_array does not read it */
    {
        int32_t acc[4] = {100, -100, 7, 0};
        int8_t o1[4], o2[4];
        rq.weight_zero_point = 0;
        CHECK_EQ_INT(qmx_requantize_array(&rq, acc, 1, 4, o1, 4), QMX_OK, "array");
        rq.weight_zero_point = 100000;
        CHECK_EQ_INT(qmx_requantize_array(&rq, acc, 1, 4, o2, 4), QMX_OK, "array, w_zp ignored");
        CHECK(memcmp(o1, o2, 4) == 0, "qmx_requantize_array depends on weight_zero_point");
    }
}

int main(void) {
    golden();
    random_shapes();
    errors();
    return QMX_TEST_END();
}
