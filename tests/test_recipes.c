/* test_recipes.c - specification of QMX_RECIPE_TORCH and QMX_RECIPE_ONNX against data produced
 * by their origins (no qmx code was involved in making it):
 *
 *   tests/data/quant_torch.txt  Debian's python3-torch 1.13 (tests/gen/gen_quant_torch.py):
 *       MinMaxObserver, PerChannelMinMaxObserver and their moving-average variants over 1-5
 *       batches, calculate_qparams(), then torch.quantize_per_tensor / quantize_per_channel of
 *       the last batch, int_repr() and dequantize(). Checked bit for bit: qmx_compute_qparams
 *       (single batch) and qmx_observer (MINMAX / MOVING_MINMAX, every batch) give torch's
 *       scales and zero points, the observer tracks torch's min_val / max_val (as values: the
 *       sign of a zero follows torch's reduction order), qmx_quantize gives int_repr() and
 *       qmx_dequantize gives dequantize(). Where torch's scale is +Inf (max - min overflows
 *       float) qmx_compute_qparams returns the same Inf and qmx_quantize refuses it
 *       (QMX_ERR_ARG: qmx's contract; torch quantizes everything to the zero point).
 *   tests/data/quant_onnx.txt   ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear
 *       / QLinearMatMul (tests/gen/gen_quant_onnx.py; see its header for the reference used).
 *
 * Every line of the data files is read as it comes (the tests also run on Cortex-M under QEMU).
 */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_calib.h"
#include "qmx_test.h"

#define SMALL_TARGET QMX_TEST_SMALL_TARGET

#define MAXN 100000
#define MAXP 4096
static char line[80000];
static float xb[MAXN], yb[MAXN], sc[MAXP], sc_want[MAXP], mm_want[2 * MAXP];
static int32_t zp[MAXP], zp_want[MAXP];
static uint8_t qb[2 * MAXN + 16];
static qmx_calib_stat stats[MAXP];
static char *tok[MAXN + 8];

static uint32_t hexu(const char *s) { return (uint32_t)strtoul(s, NULL, 16); }
static float hexf(const char *s) { return qmx_test_bits_f32(hexu(s)); }
static uint32_t fb(float f) { return qmx_test_f32_bits(f); }
static float fdiv(float a, float b) { volatile float r = a / b; return r; }   /* one rounding */

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) { h ^= p[i]; h *= 0x100000001b3ull; }
    return h;
}
static uint64_t parse_u64(const char *s) {   /* 16 hex digits, without strtoull's C99 needs */
    uint64_t v = 0;
    for (; *s; s++) {
        int c = *s, d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) break;
        v = v << 4 | (uint64_t)d;
    }
    return v;
}

/* The xorshift32 batch of the data files' `g SEED COUNT SHIFT` lines (exact in float32). */
static void gen_batch(uint32_t seed, size_t n, int shift, float *x) {
    uint32_t st = seed;
    float p = 1.0f;
    size_t i;
    int k;
    for (k = 0; k < shift; k++) p = p * 0.5f;
    for (i = 0; i < n; i++) {
        st ^= st << 13; st ^= st >> 17; st ^= st << 5;
        x[i] = (float)((int32_t)(st >> 8) - 8388608) * p;
    }
}

/* Splits the current line into tok[]; returns the count. */
static int split(void) {
    qmx_test_chomp(line);
    return qmx_test_split_fields(line, tok, MAXN + 8);
}

/* ---- PyTorch -------------------------------------------------------------------------------- */
static void test_torch(void) {
    FILE *f = qmx_test_open("quant_torch.txt");
    long cases = 0, qchecked = 0, obs_checked = 0, cq_checked = 0;
    QMX_TEST_CASE("torch 1.13 observers, quantize_per_tensor / _per_channel and dequantize");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char name[96], obsk[16], dt[16], qs[32];
        unsigned reduce, outer, len, inner, nbatch, b;
        char mom[16];
        size_t count, np, g, i;
        qmx_qconfig q = QMX_ZERO_INIT;
        qmx_calib_config cc = QMX_ZERO_INIT;
        qmx_observer obs = QMX_ZERO_INIT;
        int use_obs, n, overflow, have_mm = 0, pc;
        qmx_status st;
        if (sscanf(line, "case %95s %15s %15s %31s %u %15s %u %u %u %u", name, obsk, dt, qs, &reduce,
                   mom, &outer, &len, &inner, &nbatch) != 10)
            continue;
        cases++;
        count = (size_t)outer * len * inner;
        pc = strstr(qs, "per_channel") != NULL;
        np = pc ? len : 1;
        CHECK(count <= MAXN && np <= MAXP, "%s: too large", name);
        if (count > MAXN || np > MAXP) break;
        overflow = strstr(name, "overflow") != NULL;
        q.dtype = strcmp(dt, "quint8") == 0 ? QMX_UINT8 : QMX_INT8;
        q.recipe = QMX_RECIPE_TORCH;
        q.asymmetric = strstr(qs, "affine") != NULL;
        q.reduce_range = (int)reduce;
        q.granularity = pc ? QMX_PER_CHANNEL : QMX_PER_TENSOR;
        q.outer = outer; q.axis_len = len; q.inner = inner;
        use_obs = strcmp(obsk, "none") != 0;
        if (use_obs) {
            cc.method = strcmp(obsk, "moving") == 0 ? QMX_CALIB_MOVING_MINMAX : QMX_CALIB_MINMAX;
            cc.momentum = hexf(mom);
            st = qmx_observer_init(&obs, &cc, &q, count, stats, MAXP);
            CHECK_EQ_INT(st, QMX_OK, "%s: observer init", name);
        }
        /* batches: each goes into the observer as it is read; the last one stays in xb */
        for (b = 0; b < nbatch; b++) {
            if (!qmx_test_next_line(f, line, sizeof line)) break;
            n = split();
            if (n == 4 && strcmp(tok[0], "g") == 0) {
                CHECK((size_t)strtoul(tok[2], NULL, 10) == count, "%s: g count", name);
                gen_batch((uint32_t)strtoul(tok[1], NULL, 10), count, atoi(tok[3]), xb);
            } else {
                CHECK(n == (int)count + 1 && strcmp(tok[0], "x") == 0, "%s: batch line", name);
                for (i = 0; i < count && (int)i + 1 < n; i++) xb[i] = hexf(tok[i + 1]);
            }
            if (use_obs) CHECK_EQ_INT(qmx_observer_update(&obs, xb, count), QMX_OK, "%s batch %u", name, b);
        }
        /* mm, qp, then q / qh, dq / dqh, end */
        while (qmx_test_next_line(f, line, sizeof line)) {
            n = split();
            if (n < 1) continue;
            if (strcmp(tok[0], "end") == 0) break;
            if (strcmp(tok[0], "mm") == 0) {
                CHECK(n == 1 + 2 * (int)np, "%s: mm", name);
                for (g = 0; g < 2 * np && (int)g + 1 < n; g++) mm_want[g] = hexf(tok[g + 1]);
                have_mm = 1;
                if (use_obs)
                    for (g = 0; g < np; g++)
                        CHECK(stats[g].min == mm_want[2 * g] && stats[g].max == mm_want[2 * g + 1],
                              "%s ch %u: min/max %08x %08x want %08x %08x", name, (unsigned)g,
                              (unsigned)fb(stats[g].min), (unsigned)fb(stats[g].max),
                              (unsigned)fb(mm_want[2 * g]), (unsigned)fb(mm_want[2 * g + 1]));
            } else if (strcmp(tok[0], "qp") == 0) {
                CHECK(n == 1 + 2 * (int)np, "%s: qp", name);
                for (g = 0; g < np && (int)(2 * g + 2) < n; g++) {
                    sc_want[g] = hexf(tok[1 + 2 * g]);
                    zp_want[g] = (int32_t)atoi(tok[2 + 2 * g]);
                }
                if (use_obs) {
                    for (g = 0; g < np; g++) { sc[g] = -1.0f; zp[g] = -999; }
                    st = qmx_observer_finalize(&obs, sc, np, zp);
                    CHECK_EQ_INT(st, QMX_OK, "%s: finalize", name);
                    for (g = 0; g < np; g++)
                        CHECK(fb(sc[g]) == fb(sc_want[g]) && zp[g] == zp_want[g],
                              "%s ch %u: observer scale %08x zp %d want %08x %d", name, (unsigned)g,
                              (unsigned)fb(sc[g]), (int)zp[g], (unsigned)fb(sc_want[g]), (int)zp_want[g]);
                    obs_checked++;
                    if (cc.method == QMX_CALIB_MINMAX && nbatch == 1) {
                        /* one batch: the one-shot call is torch's observer too */
                        for (g = 0; g < np; g++) { sc[g] = -1.0f; zp[g] = -999; }
                        st = qmx_compute_qparams(&q, xb, count, sc, np, zp);
                        CHECK_EQ_INT(st, QMX_OK, "%s: compute_qparams", name);
                        for (g = 0; g < np; g++)
                            CHECK(fb(sc[g]) == fb(sc_want[g]) && zp[g] == zp_want[g],
                                  "%s ch %u: compute_qparams scale %08x zp %d want %08x %d", name,
                                  (unsigned)g, (unsigned)fb(sc[g]), (int)zp[g],
                                  (unsigned)fb(sc_want[g]), (int)zp_want[g]);
                        cq_checked++;
                    }
                }
                if (overflow) {   /* qmx refuses the Inf scale torch quantizes with */
                    int inf = 0;
                    for (g = 0; g < np; g++) inf |= fb(sc_want[g]) == 0x7F800000u;
                    CHECK(inf, "%s: expected an Inf scale from torch", name);
                    CHECK_EQ_INT(qmx_quantize(&q, xb, count, sc_want, np, zp_want, qb, sizeof qb),
                                 QMX_ERR_ARG, "%s: Inf scale", name);
                    continue;
                }
                st = qmx_quantize(&q, xb, count, sc_want, np, zp_want, qb, sizeof qb);
                CHECK_EQ_INT(st, QMX_OK, "%s: quantize", name);
                st = qmx_dequantize(&q, qb, count, count, sc_want, np, zp_want, yb);
                CHECK_EQ_INT(st, QMX_OK, "%s: dequantize", name);
            } else if (strcmp(tok[0], "q") == 0 && !overflow) {
                size_t bad = 0, first = 0;
                CHECK(n == (int)count + 1, "%s: q", name);
                for (i = 0; i < count && (int)i + 1 < n; i++) {
                    int v = atoi(tok[i + 1]);
                    int got = q.dtype == QMX_UINT8 ? (int)qb[i] : (int)(int8_t)qb[i];
                    if (got != v && bad++ == 0) first = i;
                }
                CHECK(bad == 0, "%s: %u of %u codes differ, first [%u] got %d want %s (x %08x)", name,
                      (unsigned)bad, (unsigned)count, (unsigned)first,
                      q.dtype == QMX_UINT8 ? (int)qb[first] : (int)(int8_t)qb[first], tok[first + 1],
                      (unsigned)fb(xb[first]));
                qchecked += (long)count;
            } else if (strcmp(tok[0], "qh") == 0 && !overflow) {
                CHECK(fnv(0xcbf29ce484222325ull, qb, count) == parse_u64(tok[1]), "%s: qh", name);
                qchecked += (long)count;
            } else if (strcmp(tok[0], "dq") == 0 && !overflow) {
                size_t bad = 0, first = 0;
                CHECK(n == (int)count + 1, "%s: dq", name);
                for (i = 0; i < count && (int)i + 1 < n; i++)
                    if (fb(yb[i]) != hexu(tok[i + 1]) && bad++ == 0) first = i;
                CHECK(bad == 0, "%s: %u dequantized values differ, first [%u] got %08x want %s", name,
                      (unsigned)bad, (unsigned)first, (unsigned)fb(yb[first]), tok[first + 1]);
            } else if (strcmp(tok[0], "dqh") == 0 && !overflow) {
                uint64_t h = 0xcbf29ce484222325ull;
                for (i = 0; i < count; i++) {
                    uint32_t u = fb(yb[i]);
                    uint8_t le[4];
                    le[0] = (uint8_t)u; le[1] = (uint8_t)(u >> 8); le[2] = (uint8_t)(u >> 16);
                    le[3] = (uint8_t)(u >> 24);
                    h = fnv(h, le, 4);
                }
                CHECK(h == parse_u64(tok[1]), "%s: dqh", name);
            }
        }
        CHECK(!use_obs || have_mm, "%s: no mm line", name);
    }
    fclose(f);
    CHECK(cases >= 400 && obs_checked >= 300 && cq_checked >= 100 && qchecked > 1000000,
          "torch data: %ld cases, %ld observers, %ld one-shot, %ld codes", cases, obs_checked,
          cq_checked, qchecked);
}

/* Hand-derived rules of the torch recipe that the data cannot reach: the eps clamp at zero
 * range, quint8 symmetric's fixed zero point 128, reduce_range only in the parameters, the
 * zero-point requirement and the dtype restriction. */
static void test_torch_rules(void) {
    float z[4] = {0, 0, 0, 0}, x[4] = {-1.0f, 0.5f, 2.0f, 3.0f}, s = 0;
    int32_t p = -1;
    uint8_t qv[4];
    qmx_qconfig q = QMX_ZERO_INIT;
    QMX_TEST_CASE("torch recipe rules");
    q.recipe = QMX_RECIPE_TORCH; q.dtype = QMX_UINT8; q.asymmetric = 1;
    CHECK_EQ_INT(qmx_compute_qparams(&q, z, 4, &s, 1, &p), QMX_OK, "zeros");
    CHECK(fb(s) == 0x34000000u && p == 0, "all-zero: scale eps 2^-23, zp qmin; got %08x %d",
          (unsigned)fb(s), (int)p);
    q.asymmetric = 0;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_ERR_NULL, "quint8 symmetric needs zps");
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, &p), QMX_OK, "quint8 symmetric");
    CHECK(fb(s) == fb(fdiv(3.0f, 127.5f)) && p == 128, "quint8 symmetric: %g %d", (double)s, (int)p);
    /* quantize with that zero point: 3 / s = 127.5 -> 128 (even) + 128 = 256 -> clamp 255 */
    CHECK_EQ_INT(qmx_quantize(&q, x, 4, &s, 1, &p, qv, 4), QMX_OK, "quantize");
    CHECK(qv[1] == 128 + 21 && qv[3] == 255, "quint8 symmetric codes %d %d", qv[1], qv[3]);
    q.reduce_range = 1; q.dtype = QMX_INT8;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_OK, "qint8 reduce_range");
    CHECK(fb(s) == fb(fdiv(3.0f, 63.5f)), "reduce_range symmetric scale %g", (double)s);
    CHECK_EQ_INT(qmx_quantize(&q, x, 4, &s, 1, NULL, qv, 4), QMX_OK, "quantize");
    CHECK((int8_t)qv[3] == 64, "reduce_range clamps to the full range: %d", (int8_t)qv[3]);
    q.dtype = QMX_UINT8;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, &p), QMX_ERR_UNSUPPORTED,
                 "quint8 symmetric reduce_range: torch raises NotImplementedError");
    q.dtype = QMX_INT4;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_ERR_DTYPE, "int4");
    q.dtype = QMX_INT8; q.recipe = QMX_RECIPE_QWIX;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_ERR_ARG, "reduce_range is torch's");
    q.reduce_range = 2; q.recipe = QMX_RECIPE_TORCH;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_ERR_ARG, "reduce_range 2");
}


/* ONNX rules the operators leave to qmx: symmetric parameters (onnxruntime's shape, the middle
 * of the range as zero point), a span so small that the scale underflows, fp8 parameters. */
static void test_onnx_rules(void) {
    float x[4] = {-1.0f, 0.5f, 2.0f, 3.0f}, tiny[2] = {1e-45f, 3e-45f}, s = 0;
    int32_t p = -1;
    uint8_t qv[8];
    qmx_qconfig q = QMX_ZERO_INIT;
    static const struct { qmx_dtype d; int32_t zp; float range; } sym[] = {
        {QMX_INT8, 0, 255.0f}, {QMX_UINT8, 128, 255.0f}, {QMX_INT16, 0, 65535.0f},
        {QMX_UINT16, 32768, 65535.0f}, {QMX_INT4, 0, 15.0f}, {QMX_UINT4, 8, 15.0f}};
    size_t i;
    QMX_TEST_CASE("ONNX recipe rules: symmetric parameters, scale underflow, fp8");
    q.recipe = QMX_RECIPE_ONNX;
    for (i = 0; i < sizeof sym / sizeof sym[0]; i++) {
        q.dtype = sym[i].d;
        CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, &p), QMX_OK, "%s", qmx_dtype_name(q.dtype));
        CHECK(fb(s) == fb(fdiv(6.0f, sym[i].range)) && p == sym[i].zp, "%s symmetric: %g %d",
              qmx_dtype_name(q.dtype), (double)s, (int)p);
    }
    q.dtype = QMX_UINT8; q.asymmetric = 1;
    CHECK_EQ_INT(qmx_compute_qparams(&q, tiny, 2, &s, 1, &p), QMX_OK, "tiny span");
    CHECK(s == 0.0f && p == 0, "3e-45 / 255 underflows: scale 0 as the formula, zp qmin: %g %d",
          (double)s, (int)p);
    CHECK_EQ_INT(qmx_quantize(&q, tiny, 2, &s, 1, &p, qv, 2), QMX_ERR_ARG, "a zero scale is refused");
    q.dtype = QMX_FP8_E4M3FN; q.asymmetric = 0;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_OK, "fp8");
    CHECK(fb(s) == fb(fdiv(3.0f, 448.0f)), "fp8 scale absmax / 448: %g", (double)s);
    q.reduce_range = 1;
    CHECK_EQ_INT(qmx_compute_qparams(&q, x, 4, &s, 1, NULL), QMX_ERR_ARG, "reduce_range is torch's");
}

/* ---- ONNX ----------------------------------------------------------------------------------- */
static qmx_dtype onnx_dtype(const char *s) {
    static const struct { const char *n; qmx_dtype d; } t[] = {
        {"int8", QMX_INT8}, {"uint8", QMX_UINT8}, {"int16", QMX_INT16}, {"uint16", QMX_UINT16},
        {"int4", QMX_INT4}, {"uint4", QMX_UINT4}, {"e4m3fn", QMX_FP8_E4M3FN},
        {"e4m3fnuz", QMX_FP8_E4M3FNUZ}, {"e5m2", QMX_FP8_E5M2}, {"e5m2fnuz", QMX_FP8_E5M2FNUZ}};
    size_t i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) if (strcmp(s, t[i].n) == 0) return t[i].d;
    return QMX_DTYPE_INVALID;
}
/* element e of a quantized array as a value (fp8: the code) */
static int32_t qget(qmx_dtype d, const uint8_t *q, size_t e) {
    int16_t s16;
    uint16_t u16;
    switch (d) {
    case QMX_INT8: return (int8_t)q[e];
    case QMX_INT16: memcpy(&s16, q + 2 * e, 2); return s16;
    case QMX_UINT16: memcpy(&u16, q + 2 * e, 2); return u16;
    case QMX_INT4: return (int32_t)(((q[e / 2] >> (4 * (e & 1))) & 0xF) ^ 8) - 8;
    case QMX_UINT4: return (q[e / 2] >> (4 * (e & 1))) & 0xF;
    default: return q[e];
    }
}
static void qput(qmx_dtype d, uint8_t *q, size_t e, int32_t v) {
    int16_t s16 = (int16_t)v;
    uint16_t u16 = (uint16_t)v;
    switch (d) {
    case QMX_INT16: memcpy(q + 2 * e, &s16, 2); break;
    case QMX_UINT16: memcpy(q + 2 * e, &u16, 2); break;
    case QMX_INT4: case QMX_UINT4:
        q[e / 2] = (uint8_t)((q[e / 2] & (0xF0 >> (4 * (e & 1)))) | ((v & 0xF) << (4 * (e & 1))));
        break;
    default: q[e] = (uint8_t)v; break;
    }
}
static int same_f(float a, float b) {   /* bit for bit; any NaN equals any NaN */
    return fb(a) == fb(b) || (a != a && b != b);
}
static int32_t ia[4096], ib[4096];

/* One ql / dl case: config from the header, then the s z x|q y lines. */
static void onnx_q_case(FILE *f, int deq, long *elems) {
    char name[96], dts[16];
    unsigned sat = 1, outer, len, inner, blk, np;
    size_t count, i, bad = 0, first = 0;
    int n, got_s = 0, got_z = 0, got_in = 0;
    qmx_qconfig q = QMX_ZERO_INIT;
    qmx_dtype d;
    qmx_status st;
    if (deq) n = sscanf(line, "dl %95s %15s %u %u %u %u %u", name, dts, &outer, &len, &inner, &blk, &np) == 7;
    else n = sscanf(line, "ql %95s %15s %u %u %u %u %u %u", name, dts, &sat, &outer, &len, &inner, &blk, &np) == 8;
    CHECK(n, "bad header: %.60s", line);
    if (!n) return;
    count = (size_t)outer * len * inner;
    d = onnx_dtype(dts);
    CHECK(d != QMX_DTYPE_INVALID && count <= MAXN && np <= MAXP, "%s: dtype / size", name);
    if (d == QMX_DTYPE_INVALID || count > MAXN || np > MAXP) return;
    q.dtype = d; q.recipe = QMX_RECIPE_ONNX; q.fp8_no_saturate = !sat;
    q.outer = outer; q.axis_len = len; q.inner = inner;
    q.granularity = blk ? QMX_PER_BLOCK : np == 1 ? QMX_PER_TENSOR : QMX_PER_CHANNEL;
    q.block_size = blk;
    while (qmx_test_next_line(f, line, sizeof line)) {
        n = split();
        if (n < 1) continue;
        if (strcmp(tok[0], "end") == 0) break;
        if (strcmp(tok[0], "s") == 0) {
            CHECK(n == (int)np + 1, "%s: s", name);
            for (i = 0; i < np && (int)i + 1 < n; i++) sc[i] = hexf(tok[i + 1]);
            got_s = 1;
        } else if (strcmp(tok[0], "z") == 0) {
            CHECK(n == (int)np + 1, "%s: z", name);
            for (i = 0; i < np && (int)i + 1 < n; i++) zp[i] = (int32_t)atol(tok[i + 1]);
            got_z = 1;
        } else if (strcmp(tok[0], "x") == 0 && !deq) {
            CHECK(n == (int)count + 1, "%s: x", name);
            for (i = 0; i < count && (int)i + 1 < n; i++) xb[i] = hexf(tok[i + 1]);
            got_in = 1;
        } else if (strcmp(tok[0], "q") == 0 && deq) {
            CHECK(n == (int)count + 1, "%s: q", name);
            memset(qb, 0, sizeof qb);
            for (i = 0; i < count && (int)i + 1 < n; i++) qput(d, qb, i, (int32_t)atol(tok[i + 1]));
            got_in = 1;
        } else if (strcmp(tok[0], "y") == 0) {
            CHECK(got_s && got_z && got_in && n == (int)count + 1, "%s: y before s z x|q", name);
            if (!(got_s && got_z && got_in && n == (int)count + 1)) return;
            if (!deq) {
                memset(qb, 0xA5, sizeof qb);
                st = qmx_quantize(&q, xb, count, sc, np, zp, qb, sizeof qb);
                CHECK_EQ_INT(st, QMX_OK, "%s: quantize", name);
                for (i = 0; i < count; i++)
                    if (qget(d, qb, i) != (int32_t)atol(tok[i + 1]) && bad++ == 0) first = i;
                CHECK(bad == 0, "%s: %u of %u differ, first [%u] got %d want %s (x %08x)", name,
                      (unsigned)bad, (unsigned)count, (unsigned)first, (int)qget(d, qb, first),
                      tok[first + 1], (unsigned)fb(xb[first]));
            } else {
                size_t bytes = 0;
                qmx_dtype_storage_bytes(d, count, &bytes);
                st = qmx_dequantize(&q, qb, bytes, count, sc, np, zp, yb);
                CHECK_EQ_INT(st, QMX_OK, "%s: dequantize", name);
                for (i = 0; i < count; i++)
                    if (!same_f(yb[i], hexf(tok[i + 1])) && bad++ == 0) first = i;
                CHECK(bad == 0, "%s: %u of %u differ, first [%u] got %08x want %s", name,
                      (unsigned)bad, (unsigned)count, (unsigned)first, (unsigned)fb(yb[first]),
                      tok[first + 1]);
            }
            *elems += (long)count;
        }
    }
}

/* DynamicQuantizeLinear = qmx_compute_qparams (ONNX, asymmetric uint8) + qmx_quantize. */
static void onnx_dql_case(FILE *f, long *elems) {
    char name[96];
    unsigned count;
    size_t i, bad = 0, first = 0;
    float s_want = 0.0f;
    int32_t z_want = -1;
    int n;
    qmx_qconfig q = QMX_ZERO_INIT;
    if (sscanf(line, "dql %95s %u", name, &count) != 2 || count > MAXN) {
        CHECK(0, "bad dql: %.60s", line);
        return;
    }
    q.dtype = QMX_UINT8; q.recipe = QMX_RECIPE_ONNX; q.asymmetric = 1;
    while (qmx_test_next_line(f, line, sizeof line)) {
        n = split();
        if (n < 1) continue;
        if (strcmp(tok[0], "end") == 0) break;
        if (strcmp(tok[0], "x") == 0) {
            CHECK(n == (int)count + 1, "%s: x", name);
            for (i = 0; i < count && (int)i + 1 < n; i++) xb[i] = hexf(tok[i + 1]);
        } else if (strcmp(tok[0], "s") == 0) s_want = hexf(tok[1]);
        else if (strcmp(tok[0], "z") == 0) z_want = (int32_t)atol(tok[1]);
        else if (strcmp(tok[0], "y") == 0) {
            float s = -1.0f;
            int32_t z = -1;
            CHECK_EQ_INT(qmx_compute_qparams(&q, xb, count, &s, 1, &z), QMX_OK, "%s", name);
            CHECK(fb(s) == fb(s_want) && z == z_want, "%s: scale %08x zp %d want %08x %d", name,
                  (unsigned)fb(s), (int)z, (unsigned)fb(s_want), (int)z_want);
            CHECK_EQ_INT(qmx_quantize(&q, xb, count, &s, 1, &z, qb, count), QMX_OK, "%s: quantize", name);
            for (i = 0; i < count && (int)i + 1 < n; i++)
                if ((int32_t)qb[i] != (int32_t)atol(tok[i + 1]) && bad++ == 0) first = i;
            CHECK(bad == 0, "%s: %u of %u differ, first [%u] got %d want %s", name, (unsigned)bad,
                  count, (unsigned)first, qb[first], tok[first + 1]);
            *elems += (long)count;
        }
    }
}

/* QLinearMatMul: the exact integer accumulator sum (a - a_zp)(b - b_zp), then
 * qmx_requantize_array with QMX_REQUANT_FLOAT_EXACT and the multiplier
 * float32(float32(a_scale * b_scale) / y_scale), output zero point y_zp, saturated. */
static void onnx_qmm_case(FILE *f, long *elems) {
    char name[96], dts[16];
    unsigned M, K, N;
    size_t i, j, k, bad = 0;
    int n;
    float p[3] = {0, 0, 0}, mult;
    int32_t z[3] = {0, 0, 0};
    qmx_requant_config rq = QMX_ZERO_INIT;
    if (sscanf(line, "qmm %95s %15s %u %u %u", name, dts, &M, &K, &N) != 5 || M * K > 4096 ||
        K * N > 4096 || M * N > 4096) {
        CHECK(0, "bad qmm: %.60s", line);
        return;
    }
    while (qmx_test_next_line(f, line, sizeof line)) {
        n = split();
        if (n < 1) continue;
        if (strcmp(tok[0], "end") == 0) break;
        if (strcmp(tok[0], "a") == 0) for (i = 0; i < (size_t)M * K && (int)i + 1 < n; i++) ia[i] = atoi(tok[i + 1]);
        else if (strcmp(tok[0], "b") == 0) for (i = 0; i < (size_t)K * N && (int)i + 1 < n; i++) ib[i] = atoi(tok[i + 1]);
        else if (strcmp(tok[0], "p") == 0 && n == 4) for (i = 0; i < 3; i++) p[i] = hexf(tok[i + 1]);
        else if (strcmp(tok[0], "zp") == 0 && n == 4) for (i = 0; i < 3; i++) z[i] = atoi(tok[i + 1]);
        else if (strcmp(tok[0], "y") == 0) {
            static int32_t acc[4096];
            volatile float t = p[0] * p[1];
            CHECK(n == (int)(M * N) + 1, "%s: y", name);
            mult = t / p[2];
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) {
                    int32_t sum = 0;
                    for (k = 0; k < K; k++) sum += (ia[i * K + k] - z[0]) * (ib[k * N + j] - z[1]);
                    acc[i * N + j] = sum;
                }
            rq.mode = QMX_REQUANT_FLOAT_EXACT;
            rq.scales = &mult;
            rq.output_zero_point = z[2];
            rq.out_dtype = strcmp(dts, "uint8") == 0 ? QMX_UINT8 : QMX_INT8;
            CHECK_EQ_INT(qmx_requantize_array(&rq, acc, M, N, qb, M * N), QMX_OK, "%s", name);
            for (i = 0; i < (size_t)M * N && (int)i + 1 < n; i++)
                if (qget(rq.out_dtype, qb, i) != atoi(tok[i + 1])) bad++;
            CHECK(bad == 0, "%s: %u of %u outputs differ", name, (unsigned)bad, M * N);
            *elems += (long)(M * N);
        }
    }
}

static void test_onnx(void) {
    FILE *f = qmx_test_open("quant_onnx.txt");
    long nql = 0, ndl = 0, ndql = 0, nqmm = 0, elems = 0;
    QMX_TEST_CASE("ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear / QLinearMatMul");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        if (strncmp(line, "ql ", 3) == 0) { nql++; onnx_q_case(f, 0, &elems); }
        else if (strncmp(line, "dl ", 3) == 0) { ndl++; onnx_q_case(f, 1, &elems); }
        else if (strncmp(line, "dql ", 4) == 0) { ndql++; onnx_dql_case(f, &elems); }
        else if (strncmp(line, "qmm ", 4) == 0) { nqmm++; onnx_qmm_case(f, &elems); }
    }
    fclose(f);
    CHECK(nql >= 200 && ndl >= 100 && ndql >= 20 && nqmm >= 20 && elems > 10000,
          "onnx data: %ld ql, %ld dl, %ld dql, %ld qmm, %ld elements", nql, ndl, ndql, nqmm, elems);
}

/* QMX_REQUANT_FLOAT_EXACT against a product computed in double (exact for |acc| < 2^29). */
static void test_requant_exact(void) {
    long i, bad = 0, n = SMALL_TARGET ? 20000 : 200000;
    QMX_TEST_CASE("qmx_requantize_float_exact = RNE of the exact product");
    qmx_test_seed(7);
    for (i = 0; i < n; i++) {
        int32_t acc = (int32_t)(qmx_test_rand() >> (3 + qmx_test_rand() % 28)) * (qmx_test_rand() & 1 ? 1 : -1);
        float s = qmx_test_bits_f32(0x30000000u + qmx_test_rand() % 0x0F000000u);   /* ~5e-10 .. 2e-2 */
        double d = (double)acc * (double)s, fl = (double)(int64_t)d, fr = d - fl, want;
        if (fr < 0) { fl -= 1.0; fr += 1.0; }                 /* floor */
        want = fr > 0.5 || (fr == 0.5 && ((int64_t)fl & 1)) ? fl + 1.0 : fl;
        if (want > 2147483647.0) want = 2147483647.0;
        if (want < -2147483648.0) want = -2147483648.0;
        if ((double)qmx_requantize_float_exact(acc, s) != want) bad++;
    }
    CHECK(bad == 0, "%ld of %ld differ", bad, n);
    CHECK(qmx_requantize_float_exact(3, 0.5f) == 2 && qmx_requantize_float_exact(5, 0.5f) == 2 &&
          qmx_requantize_float_exact(-3, 0.5f) == -2 && qmx_requantize_float_exact(-5, 0.5f) == -2,
          "ties to even");
    CHECK(qmx_requantize_float_exact(INT32_MAX, 3e38f) == INT32_MAX &&
          qmx_requantize_float_exact(INT32_MIN, 2.0f) == INT32_MIN &&
          qmx_requantize_float_exact(7, 1e-45f) == 0, "saturation and underflow");
}

int main(void) {
    test_torch();
    test_torch_rules();
    test_onnx();
    test_onnx_rules();
    test_requant_exact();
    return QMX_TEST_END();
}
