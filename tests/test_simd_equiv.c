/* test_simd_equiv.c - the vector paths of qmx_quantize / qmx_dequantize / qmx_fp8_*_array give
 * exactly the bits of the documented formulas, for every run length and alignment.
 *
 * The expected values come from a plain scalar model written here from the qmx.h doc block
 * (INTEGER QUANTIZATION, FP8 CONVERSION): AQT t = x * (1/s) (an infinite 1/s -> 1), Qwix
 * t = x / s (+ zp in float), TFLite t = x / s (+ zp after rounding); round nearest-even or half
 * away from zero; saturate to the recipe's range; NaN -> the zero point; dequantize
 * (q - zp) * s. The fp8 cases compare element by element with qmx_fp8_from_f32 / qmx_fp8_to_f32
 * (verified against CUDA and ml_dtypes elsewhere). Float products and quotients of the model go
 * through a volatile float, so neither FMA contraction nor x87 excess precision can change them.
 *
 * The sweeps: run lengths 0..67 and a few long ones (every vector tail length for 4, 8, 16 and
 * 64 lanes), input pointers offset by 0..3 floats and outputs by 0..3 bytes from 64-byte
 * alignment, special values (NaN payloads and signs, +-Inf, +-0, denormals, FLT_MAX), values on
 * and one ulp around rounding ties, random bit patterns; every recipe, rounding, symmetric and
 * asymmetric (random zero points), narrow range, int8 / int4 / uint8 outputs, per-tensor and
 * per-channel runs; all four fp8 formats with and without saturation, including a sweep of
 * every upper 16-bit float pattern. Bytes past each output must stay untouched.
 * The MX / NVFP4 block formats (qmx_mx_quantize / _dequantize) are held to qmx.h's own
 * per-element reference path in the same binary (qmx__mx_quant / qmx__mx_dequant with
 * QMX__MX_REF, golden-tested by test_mx.c): the fast scalar blocks and the vector kernels must
 * give its scale codes, element bytes and dequantized bits for every format, rule, block size
 * and NVFP4 tensor scale, on random blocks, ties of every element value and midpoint at the
 * block's own scale, amax at each rule's thresholds, zeros and denormals, values near FLT_MAX,
 * NaN / Inf in blocks, ragged last blocks, odd fp4 rows, strided (inner axis) views, unaligned
 * pointers; and random element bytes and scale codes (0x00, 0xFF included) for dequantize.
 * The E2M1 encoder is checked against the generic integer encoder it replaced.
 * The Makefile runs this program with SIMD (-march=native) and with -DQMX_NO_SIMD, so both
 * builds are held to the same model. */
#define QMX_IMPLEMENTATION
/* the non-temporal store path of long int8 runs (default: from 4 MiB of output) from 1000
 * elements here, so that the long runs below (1000, 4099, every alignment) go through it */
#define QMX_NT_STORE_MIN 1000
#include "qmx.h"
#include "qmx_test.h"

#define MAXN 4200
#define GUARD 64
#define SENT 0xA5

static float xbuf[MAXN + 16 + GUARD];
static float ybuf[MAXN + 16 + GUARD], yexp[MAXN];
static uint8_t qbuf[MAXN + 16 + GUARD], qexp[MAXN + 16];
static int32_t qint[MAXN];
static uint8_t cbuf[MAXN + 16 + GUARD];

/* ---- deterministic random numbers (xorshift32) ---- */

static float fb(uint32_t u) { return qmx_test_bits_f32(u); }
static uint32_t bf(float f) { return qmx_test_f32_bits(f); }
static int isnan_f(float f) { return (bf(f) & 0x7FFFFFFFu) > 0x7F800000u; }
static int isfinite_f(float f) { return (bf(f) & 0x7F800000u) != 0x7F800000u; }

/* IEEE single operations, rounded once and stored (no contraction, no excess precision). */
static float mul_f(float a, float b) { volatile float r = a * b; return r; }
static float div_f(float a, float b) { volatile float r = a / b; return r; }
static float add_f(float a, float b) { volatile float r = a + b; return r; }

/* torch and ONNX apply a zero point whenever one is given; the others only when asymmetric */
static int uses_zp(const qmx_qconfig *c) {
    return c->asymmetric || c->recipe == QMX_RECIPE_TORCH || c->recipe == QMX_RECIPE_ONNX;
}

/* ---- the model ---- */
typedef struct model {
    qmx_recipe recipe;
    int away;            /* rounding half away from zero, else nearest-even */
    int32_t qmin, qmax;  /* the saturation range */
    int asym;
} model;

static void model_init(model *m, const qmx_qconfig *c) {
    int32_t lo = 0, hi = 0;
    int narrow;
    qmx_dtype d = c->dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c->dtype;
    switch (d) {
    case QMX_INT8: lo = -128; hi = 127; break;
    case QMX_UINT8: lo = 0; hi = 255; break;
    case QMX_INT4: lo = -8; hi = 7; break;
    case QMX_UINT4: lo = 0; hi = 15; break;
    case QMX_INT2: lo = -2; hi = 1; break;
    case QMX_UINT2: lo = 0; hi = 3; break;
    case QMX_INT3: lo = -4; hi = 3; break;
    case QMX_INT7: lo = -64; hi = 63; break;
    default: lo = -32768; hi = 32767; break;
    }
    /* AQT is symmetric [-qmax, qmax]; TFLite symmetric is narrow except int16 (the 16x8
     * activations: the QUANTIZE op's full range); narrow_range forces it; torch and ONNX
     * saturate to the full range */
    narrow = c->narrow_range ||
             (!c->asymmetric && (c->recipe == QMX_RECIPE_AQT ||
                                 (c->recipe == QMX_RECIPE_TFLITE && c->dtype != QMX_INT16)));
    if (narrow && lo < 0) lo = -hi;
    m->recipe = c->recipe;
    m->away = c->rounding == QMX_ROUND_HALF_AWAY ||
              (c->rounding == QMX_ROUND_DEFAULT && c->recipe == QMX_RECIPE_TFLITE);
    m->qmin = lo; m->qmax = hi;
    m->asym = uses_zp(c);
}

/* Round a float (|t| < 2^22) to an integer in double arithmetic (exact there). */
static long round_model(float t, int away) {
    double d = (double)t;
    long i = (long)d;                 /* toward zero */
    double fr = d - (double)i;        /* exact */
    if (away) {
        if (fr >= 0.5) i++;
        else if (fr <= -0.5) i--;
    } else {
        if (fr > 0.5 || (fr == 0.5 && (i % 2 != 0))) i++;
        else if (fr < -0.5 || (fr == -0.5 && (i % 2 != 0))) i--;
    }
    return i;
}

static int32_t quant_model(const model *m, float x, float s, int32_t zp) {
    float t;
    long r;
    if (m->recipe == QMX_RECIPE_AQT || m->recipe == QMX_RECIPE_TORCH) {
        float inv = div_f(1.0f, s);
        if (!isfinite_f(inv) && m->recipe == QMX_RECIPE_AQT) inv = 1.0f;   /* torch keeps Inf */
        t = mul_f(x, inv);
    } else {
        t = div_f(x, s);
        if (m->recipe == QMX_RECIPE_QWIX && zp != 0) t = add_f(t, (float)zp);
    }
    if (isnan_f(t)) return zp;
    if (t > 4194304.0f) t = 4194304.0f;      /* far beyond every range: saturates either way */
    if (t < -4194304.0f) t = -4194304.0f;
    r = round_model(t, m->away);
    if (m->recipe != QMX_RECIPE_AQT && m->recipe != QMX_RECIPE_QWIX) r += zp;   /* after rounding */
    if (r < m->qmin) r = m->qmin;
    if (r > m->qmax) r = m->qmax;
    return (int32_t)r;
}

/* ---- input values ---- */
static const uint32_t specials[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7FA00000u, /* NaNs */
    0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u,                          /* Inf, 0 */
    0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u, 0x80800000u, /* tiny */
    0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x3F000000u, 0xBF000000u,
    0x3EFFFFFFu, 0xBEFFFFFFu, 0x3FC00000u, 0x40200000u, 0xC0200000u, 0x42FF0000u,
    0xC2FF0000u, 0x43000000u, 0xC3008000u, 0x4B000001u, 0xCB7FFFFFu, 0x4F000000u
};
#define NSPECIAL (sizeof specials / sizeof specials[0])

/* One input value for scale s: special, a tie k + 1/2 (times s) or one ulp around it, a value in
 * range, or any bit pattern. */
static float gen_value(float s) {
    uint32_t k = qmx_test_rand() % 16;
    if (k == 0) return fb(specials[qmx_test_rand() % NSPECIAL]);
    if (k == 1) return fb(qmx_test_rand());
    if (k <= 7) {
        int q = (int)(qmx_test_rand() % 601) - 300;
        float t = (float)q + 0.5f;
        uint32_t u = bf(mul_f(t, s));
        if ((u & 0x7F800000u) != 0x7F800000u) u += (qmx_test_rand() % 3) - 1u;   /* -1, 0, +1 ulp */
        return fb(u);
    }
    if (k <= 9) return mul_f((float)((int)(qmx_test_rand() % 601) - 300), s);      /* exact integers */
    return mul_f(((float)(int)(qmx_test_rand() % 2000001) - 1000000.0f) * 3.0e-4f, s);
}

static const float scale_list[] = {
    1.0f, 0.5f, 0.25f, 0.0078125f, 0.33333334f, 0.1f, 0.0072727273f, 3.0e-3f, 17.0f,
    1.0e-45f /* 1/s overflows: AQT uses 1 */, 1.0e-38f, 3.0e38f, 1.5e-5f
};
#define NSCALES (sizeof scale_list / sizeof scale_list[0])
static float gen_scale(void) {
    if (qmx_test_rand() % 3 == 0) return fb(0x38000000u + qmx_test_rand() % 0x0C000000u);   /* ~3e-5 .. 3e2 */
    return scale_list[qmx_test_rand() % NSCALES];
}

static void fill_sentinel(uint8_t *p, size_t n) { memset(p, SENT, n); }
static int sentinel_ok(const uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != SENT) return 0;
    return 1;
}

/* Packs model values as the dtype stores them (int8/uint8/int3..int7 bytes, int4/uint4
 * nibbles, int2/uint2 four per byte from the lowest bits). */
static size_t pack_expected(qmx_dtype d, const int32_t *v, size_t n, uint8_t *out) {
    size_t i;
    if (d == QMX_INT2 || d == QMX_UINT2) {
        for (i = 0; i < (n + 3) / 4; i++) {
            uint32_t b = 0, k;
            for (k = 0; k < 4 && 4 * i + k < n; k++) b |= ((uint32_t)v[4 * i + k] & 3u) << (2 * k);
            out[i] = (uint8_t)b;
        }
        return (n + 3) / 4;
    }
    if (d == QMX_INT4 || d == QMX_UINT4) {
        for (i = 0; i < (n + 1) / 2; i++) {
            uint32_t lo = (uint32_t)v[2 * i] & 0xFu;
            uint32_t hi = 2 * i + 1 < n ? (uint32_t)v[2 * i + 1] & 0xFu : 0u;
            out[i] = (uint8_t)(lo | (hi << 4));
        }
        return (n + 1) / 2;
    }
    for (i = 0; i < n; i++) out[i] = (uint8_t)v[i];
    return n;
}

/* ---- integer quantize: per tensor, every length and alignment ---- */
static void int_quantize_case(const qmx_qconfig *c, size_t n, size_t xoff, size_t qoff, float s,
                              int32_t zp, const char *what) {
    model m;
    float *x = xbuf + xoff;
    uint8_t *q = qbuf + qoff;
    size_t i, nb, bad = 0, first = 0;
    qmx_status st;
    qmx_dtype d = c->dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c->dtype;
    model_init(&m, c);
    for (i = 0; i < n; i++) x[i] = gen_value(s);
    fill_sentinel(qbuf, sizeof qbuf);
    st = qmx_quantize(c, x, n, &s, 1, uses_zp(c) ? &zp : NULL, q, MAXN + 16);
    if (n == 0) {
        CHECK(st == QMX_ERR_SIZE && sentinel_ok(qbuf, sizeof qbuf), "%s: n = 0 must fail untouched", what);
        return;
    }
    CHECK(st == QMX_OK, "%s: status %d", what, (int)st);
    for (i = 0; i < n; i++) qint[i] = quant_model(&m, x[i], s, uses_zp(c) ? zp : 0);
    nb = pack_expected(d, qint, n, qexp);
    for (i = 0; i < nb; i++)
        if (q[i] != qexp[i] && bad++ == 0) first = i;
    CHECK(bad == 0, "%s: recipe %d rounding %d asym %d narrow %d dtype %s n %u xoff %u qoff %u "
          "s %.9g zp %d: %u bad bytes, first [%u] got 0x%02x want 0x%02x (x = 0x%08x)",
          what, (int)c->recipe, (int)c->rounding, c->asymmetric, c->narrow_range, qmx_dtype_name(d),
          (unsigned)n, (unsigned)xoff, (unsigned)qoff, (double)s, (int)zp, (unsigned)bad,
          (unsigned)first, q[first], qexp[first],
          (unsigned)bf(x[(d == QMX_INT4 || d == QMX_UINT4) ? 2 * first : first]));
    CHECK(sentinel_ok(qbuf, qoff) && sentinel_ok(q + nb, GUARD), "%s: wrote outside the output", what);
}

static void random_int_config(qmx_qconfig *c, qmx_dtype d) {
    qmx_qconfig z = QMX_ZERO_INIT;
    *c = z;
    c->dtype = d;
    c->recipe = (qmx_recipe)(qmx_test_rand() % 5);
    if (c->recipe == QMX_RECIPE_TORCH && d != QMX_INT8 && d != QMX_UINT8) c->recipe = QMX_RECIPE_ONNX;
    c->rounding = (qmx_round)(qmx_test_rand() % 3);   /* default, nearest-even, half away */
    c->asymmetric = c->recipe != QMX_RECIPE_AQT && (qmx_test_rand() % 2);
    c->narrow_range = qmx_test_rand() % 5 == 0;
}

static int32_t random_zp(qmx_dtype d) {
    int32_t lo = 0, hi = 0;
    qmx_dtype_int_range(d, &lo, &hi);
    switch (qmx_test_rand() % 4) {
    case 0: return lo;
    case 1: return hi;
    case 2: return 0;
    default: return lo + (int32_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1));
    }
}

static void int_quantize_lengths(void) {
    static const qmx_dtype dts[] = { QMX_INT8, QMX_INT4, QMX_UINT8, QMX_UINT4, QMX_INT2, QMX_UINT2,
                                     QMX_INT3, QMX_INT7 };
    static const size_t longs[] = { 127, 128, 129, 255, 256, 257, 1000, 4099 };
    size_t n, di, r;
    QMX_TEST_CASE("int quantize, per tensor: every length 0..67 and long runs, every alignment");
    for (di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        for (n = 0; n < 68 + 8; n++) {
            size_t len = n < 68 ? n : longs[n - 68];
            for (r = 0; r < 16; r++) {
                qmx_qconfig c;
                float s = gen_scale();
                random_int_config(&c, dts[di]);
                int_quantize_case(&c, len, qmx_test_rand() % 4, qmx_test_rand() % 4, s, random_zp(dts[di]),
                                  "int quantize");
            }
        }
    }
}

/* Every recipe x rounding x symmetry x narrow combination explicitly. */
static void int_quantize_all_configs(void) {
    static const qmx_dtype dts[] = { QMX_INT8, QMX_INT4 };
    int di, rec, rd, asym, narrow, rep;
    QMX_TEST_CASE("int quantize: every recipe, rounding, symmetry and narrow range");
    for (di = 0; di < 2; di++)
        for (rec = 0; rec < 5; rec++)
            for (rd = 0; rd < 3; rd++)
                for (asym = 0; asym < 2; asym++)
                    for (narrow = 0; narrow < 2; narrow++) {
                        qmx_qconfig c = QMX_ZERO_INIT;
                        if (asym && rec == QMX_RECIPE_AQT) continue;
                        if (rec == QMX_RECIPE_TORCH && dts[di] != QMX_INT8) continue;
                        c.dtype = dts[di];
                        c.recipe = (qmx_recipe)rec;
                        c.rounding = (qmx_round)rd;
                        c.asymmetric = asym;
                        c.narrow_range = narrow;
                        for (rep = 0; rep < (int)NSCALES + 4; rep++) {
                            float s = rep < (int)NSCALES ? scale_list[rep] : gen_scale();
                            int_quantize_case(&c, 200 + qmx_test_rand() % 300, qmx_test_rand() % 4, qmx_test_rand() % 4, s,
                                              random_zp(c.dtype), "int quantize config");
                        }
                    }
}

/* Per channel: [2][3][inner] with three scales and zero points: runs of every short length. */
static void int_quantize_per_channel(void) {
    size_t inner, i, o, k;
    QMX_TEST_CASE("int quantize, per channel: runs of every length with their own parameters");
    for (inner = 1; inner < 70; inner++) {
        qmx_qconfig c;
        model m;
        float sc[3];
        int32_t zp[3];
        size_t n = 2 * 3 * inner, bad = 0, first = 0;
        qmx_status st;
        {
            static const qmx_dtype pc[] = { QMX_INT8, QMX_INT4, QMX_UINT4 };
            random_int_config(&c, pc[qmx_test_rand() % 3]);
        }
        c.granularity = QMX_PER_CHANNEL;
        c.outer = 2; c.axis_len = 3; c.inner = inner;
        model_init(&m, &c);
        for (k = 0; k < 3; k++) { sc[k] = gen_scale(); zp[k] = random_zp(c.dtype); }
        for (o = 0; o < 2; o++)
            for (k = 0; k < 3; k++)
                for (i = 0; i < inner; i++) {
                    size_t e = (o * 3 + k) * inner + i;
                    xbuf[1 + e] = gen_value(sc[k]);
                    qint[e] = quant_model(&m, xbuf[1 + e], sc[k], uses_zp(&c) ? zp[k] : 0);
                }
        fill_sentinel(qbuf, sizeof qbuf);
        st = qmx_quantize(&c, xbuf + 1, n, sc, 3, uses_zp(&c) ? zp : NULL, qbuf + 3, MAXN);
        CHECK(st == QMX_OK, "per channel status %d", (int)st);
        n = pack_expected(c.dtype, qint, n, qexp);
        for (i = 0; i < n; i++)
            if (qbuf[3 + i] != qexp[i] && bad++ == 0) first = i;
        CHECK(bad == 0, "per channel inner %u recipe %d: %u bad bytes, first [%u] got 0x%02x want 0x%02x",
              (unsigned)inner, (int)c.recipe, (unsigned)bad, (unsigned)first, qbuf[3 + first], qexp[first]);
        CHECK(sentinel_ok(qbuf, 3) && sentinel_ok(qbuf + 3 + n, GUARD), "per channel: outside");
        /* and back: runs that start at odd int4 elements take the half-byte paths */
        st = qmx_dequantize(&c, qbuf + 3, n, 2 * 3 * inner, sc, 3, uses_zp(&c) ? zp : NULL, ybuf);
        CHECK(st == QMX_OK, "per channel dequantize status %d", (int)st);
        bad = 0;
        for (o = 0; o < 2; o++)
            for (k = 0; k < 3; k++)
                for (i = 0; i < inner; i++) {
                    size_t e = (o * 3 + k) * inner + i;
                    float want = mul_f((float)(qint[e] - (uses_zp(&c) ? zp[k] : 0)), sc[k]);
                    if (bf(ybuf[e]) != bf(want) && bad++ == 0) first = e;
                }
        CHECK(bad == 0, "per channel dequantize inner %u dtype %s: %u bad values, first [%u]",
              (unsigned)inner, qmx_dtype_name(c.dtype), (unsigned)bad, (unsigned)first);
    }
}

/* One [outer][len][inner] tensor, per channel (blk 0) or per block of blk along len (inner 1):
 * a random int8, int4 or uint4 config (mostly symmetric), each element against the model with
 * its own scale and zero point, then back element by element: (q - zp) * s. */
static void short_runs_case(size_t outer, size_t len, size_t inner, size_t blk) {
    static float sc[2048];
    static int32_t zp[2048];
    size_t n = outer * len * inner, nb = blk ? (len + blk - 1) / blk : 0, np = blk ? outer * nb : len;
    size_t qoff = qmx_test_rand() % 4, bytes, bad = 0, first = 0, i;
    qmx_qconfig c;
    model m;
    qmx_status st;
    {
        static const qmx_dtype dts[] = { QMX_INT8, QMX_INT8, QMX_INT4, QMX_UINT4 };
        random_int_config(&c, dts[qmx_test_rand() % 4]);
    }
    if (qmx_test_rand() % 2) c.asymmetric = 0;   /* mostly the symmetric fast path */
    c.granularity = blk ? QMX_PER_BLOCK : QMX_PER_CHANNEL;
    c.outer = outer; c.axis_len = len; c.inner = inner; c.block_size = blk;
    model_init(&m, &c);
    for (i = 0; i < np; i++) { sc[i] = gen_scale(); zp[i] = random_zp(c.dtype); }
    for (i = 0; i < n; i++) {   /* qint[i] = the model's code; yexp[i] its dequantized value */
        size_t k = (i / inner) % len, pi = blk ? (i / (len * inner)) * nb + k / blk : k;
        int32_t z = uses_zp(&c) ? zp[pi] : 0;
        xbuf[i] = gen_value(sc[pi]);
        qint[i] = quant_model(&m, xbuf[i], sc[pi], z);
        yexp[i] = mul_f((float)(qint[i] - z), sc[pi]);
    }
    fill_sentinel(qbuf, sizeof qbuf);
    st = qmx_quantize(&c, xbuf, n, sc, np, uses_zp(&c) ? zp : NULL, qbuf + qoff, MAXN);
    CHECK(st == QMX_OK, "short runs status %d", (int)st);
    bytes = pack_expected(c.dtype, qint, n, qexp);
    for (i = 0; i < bytes; i++)
        if (qbuf[qoff + i] != qexp[i] && bad++ == 0) first = i;
    CHECK(bad == 0, "short runs %s [%u][%u][%u] block %u recipe %d rounding %d asym %d: %u bad bytes, "
          "first [%u] got 0x%02x want 0x%02x", qmx_dtype_name(c.dtype), (unsigned)outer, (unsigned)len,
          (unsigned)inner, (unsigned)blk, (int)c.recipe, (int)c.rounding, c.asymmetric, (unsigned)bad,
          (unsigned)first, qbuf[qoff + first], qexp[first]);
    CHECK(sentinel_ok(qbuf, qoff) && sentinel_ok(qbuf + qoff + bytes, GUARD), "short runs: outside");
    st = qmx_dequantize(&c, qbuf + qoff, bytes, n, sc, np, uses_zp(&c) ? zp : NULL, ybuf);
    CHECK(st == QMX_OK, "short runs dequantize status %d", (int)st);
    bad = 0;
    for (i = 0; i < n; i++)
        if (bf(ybuf[i]) != bf(yexp[i]) && bad++ == 0) first = i;
    CHECK(bad == 0, "short runs dequantize %s [%u][%u][%u] block %u asym %d: %u bad values, first [%u]",
          qmx_dtype_name(c.dtype), (unsigned)outer, (unsigned)len, (unsigned)inner, (unsigned)blk,
          c.asymmetric, (unsigned)bad, (unsigned)first);
}

/* Along the last axis ([rows][len], inner 1): per channel, a scale per column; per block, a
 * scale per block of columns in each row (block sizes below, at and above 16 lanes, ragged
 * last block). Lengths that end anywhere in a 16-lane vector and cross the 128-column chunk
 * of the AVX-512 path; every recipe and rounding. */
static void int_quantize_last_axis(void) {
    static const size_t lens[] = { 1, 5, 15, 16, 17, 31, 32, 33, 63, 64, 100, 255, 256, 257, 300, 530 };
    static const size_t blocks[] = { 0 /* per channel */, 3, 8, 15, 16, 17, 32, 33, 48, 64, 100 };
    size_t li, rows, bi;
    QMX_TEST_CASE("int quantize along the last axis: per channel and per block, every recipe");
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (rows = 1; rows <= 3; rows++)
            for (bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++)
                short_runs_case(rows, lens[li], 1, blocks[bi]);
}

/* Per channel with channels of 16 or more elements ([outer][len][inner], inner >= 16): a
 * vector of 16 lanes holds one channel or the end of one and the start of the next. */
static void int_quantize_channel_runs(void) {
    static const size_t inners[] = { 16, 17, 20, 31, 32, 33, 47, 64, 100 };
    static const size_t lens[] = { 1, 3, 20 };   /* n <= 2 * 20 * 100 < MAXN */
    size_t ii, li, outer;
    QMX_TEST_CASE("int quantize per channel, channels of 16 or more elements");
    for (ii = 0; ii < sizeof inners / sizeof inners[0]; ii++)
        for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (outer = 1; outer <= 2; outer++)
                short_runs_case(outer, lens[li], inners[ii], 0);
}

/* ---- integer dequantize ---- */
static void int_dequantize_lengths(void) {
    static const qmx_dtype dts[] = { QMX_INT8, QMX_INT4, QMX_UINT8, QMX_UINT4, QMX_INT2, QMX_UINT2,
                                     QMX_INT3, QMX_INT7 };
    size_t n, di, r, i;
    QMX_TEST_CASE("int dequantize: (q - zp) * s for every length and alignment");
    for (di = 0; di < sizeof dts / sizeof dts[0]; di++)
        for (n = 1; n < 68 + 4; n++)
            for (r = 0; r < 4; r++) {
                qmx_qconfig c;
                size_t len = n < 68 ? n : (n == 68 ? 256 : (n == 69 ? 257 : (n == 70 ? 1000 : 4099)));
                size_t qoff = qmx_test_rand() % 4, yoff = qmx_test_rand() % 4, nb, bad = 0, first = 0;
                int32_t lo = 0, hi = 0, zp = random_zp(dts[di]);
                float s = gen_scale();
                qmx_status st;
                random_int_config(&c, dts[di]);
                qmx_dtype_int_range(dts[di], &lo, &hi);
                for (i = 0; i < len; i++) qint[i] = lo + (int32_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1));
                nb = pack_expected(dts[di], qint, len, qbuf + qoff);
                for (i = 0; i < len; i++)
                    yexp[i] = mul_f((float)(qint[i] - (uses_zp(&c) ? zp : 0)), s);
                memset(ybuf, SENT, sizeof ybuf);
                st = qmx_dequantize(&c, qbuf + qoff, nb, len, &s, 1, uses_zp(&c) ? &zp : NULL,
                                    ybuf + yoff);
                CHECK(st == QMX_OK, "dequantize status %d", (int)st);
                for (i = 0; i < len; i++)
                    if (bf(ybuf[yoff + i]) != bf(yexp[i]) && bad++ == 0) first = i;
                CHECK(bad == 0, "dequantize %s n %u: %u bad, first [%u] q %d got 0x%08x want 0x%08x",
                      qmx_dtype_name(dts[di]), (unsigned)len, (unsigned)bad, (unsigned)first,
                      (int)qint[first], (unsigned)bf(ybuf[yoff + first]), (unsigned)bf(yexp[first]));
                CHECK(sentinel_ok((const uint8_t *)ybuf, yoff * 4) &&
                      sentinel_ok((const uint8_t *)(ybuf + yoff + len), GUARD * 4), "dequantize: outside");
            }
}

/* ---- fp8 ---- */
static const qmx_dtype fp8s[] = { QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FP8_E4M3FNUZ, QMX_FP8_E5M2FNUZ };

/* Values where the fp8 rounding changes regime: the largest finite value, the midpoint above
 * it (rounds to max or overflows, by the tie rule), the smallest normal, the smallest subnormal
 * and half of it (a tie to zero). */
static float fp8_boundary(qmx_dtype f) {
    float mx = qmx_fp8_max(f);
    uint8_t maxc = qmx_fp8_from_f32(mx, f, 1);
    float prev = qmx_fp8_to_f32((uint8_t)(maxc - 1), f);
    int mbits = (f == QMX_FP8_E5M2 || f == QMX_FP8_E5M2FNUZ) ? 2 : 3;
    float minnorm = qmx_fp8_to_f32((uint8_t)(1u << mbits), f), minsub = qmx_fp8_to_f32(1, f);
    switch (qmx_test_rand() % 5) {
    case 0: return mx;
    case 1: return add_f(mx, mul_f(add_f(mx, -prev), 0.5f));   /* max + ulp / 2 */
    case 2: return minnorm;
    case 3: return minsub;
    default: return mul_f(minsub, 0.5f);
    }
}

/* fp8 inputs: specials, values near the format's rounding points (codes decoded and moved by a
 * few ulps, or midpoints), and any bit pattern. */
static float gen_fp8_value(qmx_dtype f, float scale) {
    uint32_t k = qmx_test_rand() % 10;
    if (k == 0) return fb(specials[qmx_test_rand() % NSPECIAL]);
    if (k == 1) return fb(qmx_test_rand());
    if (k >= 8) {   /* a regime boundary, +-2 ulps, either sign, times scale */
        uint32_t u = bf(mul_f(fp8_boundary(f), scale));
        if (isfinite_f(fb(u)) && (u & 0x7FFFFFFFu) > 2u) u += (qmx_test_rand() % 5) - 2u;
        return fb(u ^ (qmx_test_rand() % 2 ? 0x80000000u : 0u));
    }
    if (k <= 4) {   /* a code's value, or the midpoint to the next one, +-2 ulps, times scale */
        uint8_t c = (uint8_t)qmx_test_rand();
        float v = qmx_fp8_to_f32(c, f), w = qmx_fp8_to_f32((uint8_t)(c + 1), f);
        uint32_t u;
        if (isfinite_f(v) && isfinite_f(w) && (qmx_test_rand() & 1)) v = mul_f(add_f(v, w), 0.5f);
        u = bf(mul_f(v, scale));
        if (isfinite_f(fb(u))) u += (qmx_test_rand() % 5) - 2u;
        return fb(u);
    }
    return mul_f(fb((qmx_test_rand() & 0x807FFFFFu) | ((100u + qmx_test_rand() % 60u) << 23)), scale);
}

static void fp8_array_case(qmx_dtype f, int sat, size_t n, size_t xoff, size_t qoff, float scale) {
    float *x = xbuf + xoff;
    uint8_t *q = qbuf + qoff;
    size_t i, bad = 0, first = 0;
    qmx_status st;
    for (i = 0; i < n; i++) x[i] = gen_fp8_value(f, scale);
    fill_sentinel(qbuf, sizeof qbuf);
    st = qmx_fp8_quantize_array(f, x, n, scale, sat, q);
    if (n == 0) {
        CHECK(st == QMX_ERR_SIZE && sentinel_ok(qbuf, sizeof qbuf), "fp8 n = 0");
        return;
    }
    CHECK(st == QMX_OK, "fp8 quantize status %d", (int)st);
    for (i = 0; i < n; i++) {
        float t = div_f(x[i], scale);
        qexp[i] = qmx_fp8_from_f32(isnan_f(t) ? x[i] : t, f, sat);   /* NaN: the input's sign */
        if (q[i] != qexp[i] && bad++ == 0) first = i;
    }
    CHECK(bad == 0, "fp8 %s sat %d n %u scale %.9g: %u bad, first x 0x%08x got 0x%02x want 0x%02x",
          qmx_dtype_name(f), sat, (unsigned)n, (double)scale, (unsigned)bad, (unsigned)bf(x[first]),
          q[first], qexp[first]);
    CHECK(sentinel_ok(qbuf, qoff) && sentinel_ok(q + n, GUARD), "fp8 quantize: outside");
}

static void fp8_quantize_lengths(void) {
    static const float scales[] = { 1.0f, 0.5f, 3.0e-3f, 0.013392857f, 7.0f, 1.0e-30f, 3.0e38f };
    size_t fi, n, r;
    int sat;
    QMX_TEST_CASE("fp8 quantize_array: every format, saturation, length and alignment");
    for (fi = 0; fi < 4; fi++)
        for (sat = 0; sat < 2; sat++)
            for (n = 0; n < 68 + 3; n++)
                for (r = 0; r < 8; r++) {
                    size_t len = n < 68 ? n : (n == 68 ? 256 : (n == 69 ? 1000 : 4099));
                    float s = qmx_test_rand() % 2 ? scales[qmx_test_rand() % 7] : gen_scale();
                    fp8_array_case(fp8s[fi], sat, len, qmx_test_rand() % 4, qmx_test_rand() % 4, s);
                }
}

/* Every float whose low 16 bits are one of a few patterns: all exponents and the mantissa bits
 * that decide every fp8 rounding, ties included, in runs of 4096. */
static void fp8_quantize_sweep(void) {
    static const uint32_t lows[] = { 0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu, 0x5A5Au };
    size_t fi, li, i, bad, first;
    int sat;
    uint32_t hi0;
    QMX_TEST_CASE("fp8 quantize_array: sweep of every upper 16-bit pattern, scale 1");
    for (fi = 0; fi < 4; fi++)
        for (sat = 0; sat < 2; sat++)
            for (li = 0; li < sizeof lows / sizeof lows[0]; li++) {
                bad = 0;
                first = 0;
                for (hi0 = 0; hi0 < 0x10000u; hi0 += 4096) {
                    for (i = 0; i < 4096; i++) xbuf[i] = fb(((hi0 + (uint32_t)i) << 16) | lows[li]);
                    qmx_fp8_quantize_array(fp8s[fi], xbuf, 4096, 1.0f, sat, qbuf);
                    for (i = 0; i < 4096; i++)
                        if (qbuf[i] != qmx_fp8_from_f32(xbuf[i], fp8s[fi], sat) && bad++ == 0)
                            first = ((hi0 + (uint32_t)i) << 16) | lows[li];
                }
                CHECK(bad == 0, "fp8 sweep %s sat %d: %u bad, first x 0x%08x (want 0x%02x)",
                      qmx_dtype_name(fp8s[fi]), sat, (unsigned)bad, (unsigned)first,
                      qmx_fp8_from_f32(fb((uint32_t)first), fp8s[fi], sat));
            }
}

static void fp8_dequantize_lengths(void) {
    static const float scales[] = { 1.0f, 0.5f, 3.0e-3f, 7.0f, 1.0e-30f, 3.0e38f, 1.0e-45f };
    size_t fi, n, r, i;
    QMX_TEST_CASE("fp8 dequantize_array: every format, code, length and alignment");
    for (fi = 0; fi < 4; fi++)
        for (n = 1; n < 68 + 3; n++)
            for (r = 0; r < 3; r++) {
                size_t len = n < 68 ? n : (n == 68 ? 256 : (n == 69 ? 1000 : 4099));
                size_t coff = qmx_test_rand() % 4, yoff = qmx_test_rand() % 4, bad = 0, first = 0;
                float s = qmx_test_rand() % 2 ? scales[qmx_test_rand() % 7] : gen_scale();
                qmx_status st;
                for (i = 0; i < len; i++) cbuf[coff + i] = (uint8_t)(len >= 256 ? i : qmx_test_rand());
                memset(ybuf, SENT, sizeof ybuf);
                st = qmx_fp8_dequantize_array(fp8s[fi], cbuf + coff, len, s, ybuf + yoff);
                CHECK(st == QMX_OK, "fp8 dequantize status %d", (int)st);
                for (i = 0; i < len; i++) {
                    yexp[i] = mul_f(qmx_fp8_to_f32(cbuf[coff + i], fp8s[fi]), s);
                    if (bf(ybuf[yoff + i]) != bf(yexp[i]) && bad++ == 0) first = i;
                }
                CHECK(bad == 0, "fp8 dequantize %s scale %.9g: %u bad, first code 0x%02x got 0x%08x want 0x%08x",
                      qmx_dtype_name(fp8s[fi]), (double)s, (unsigned)bad, cbuf[coff + first],
                      (unsigned)bf(ybuf[yoff + first]), (unsigned)bf(yexp[first]));
                CHECK(sentinel_ok((const uint8_t *)ybuf, yoff * 4) &&
                      sentinel_ok((const uint8_t *)(ybuf + yoff + len), GUARD * 4), "fp8 dequantize: outside");
            }
}

/* The ONNX recipe writes ml_dtypes' E5M2 NaN, 0x7E | sign, where the codec writes 0x7F | sign. */
static uint8_t onnx_nan(int rec, qmx_dtype f, uint8_t code) {
    return rec == QMX_RECIPE_ONNX && f == QMX_FP8_E5M2 && (code & 0x7F) == 0x7F ? (uint8_t)(code - 1) : code;
}

/* fp8 dtypes through qmx_quantize / qmx_dequantize: AQT multiplies by 1/s, Qwix, TFLite and
 * ONNX divide; the cast saturates (clip to +-max, then cast), or for ONNX optionally not. */
static void fp8_through_qconfig(void) {
    size_t fi, n, i, r;
    int rec;
    QMX_TEST_CASE("fp8 dtypes through qmx_quantize / qmx_dequantize, every recipe");
    for (fi = 0; fi < 4; fi++)
        for (rec = 0; rec < 5; rec++)
            for (n = 1; n < 68 + 2; n++)
                for (r = 0; r < 4; r++) {
                    qmx_qconfig c = QMX_ZERO_INIT;
                    size_t len = n < 68 ? n : (n == 68 ? 333 : 4099);
                    size_t xoff = qmx_test_rand() % 4, qoff = qmx_test_rand() % 4, bad = 0, first = 0;
                    float s = gen_scale(), inv = div_f(1.0f, s);
                    qmx_status st;
                    int sat = 1;
                    if (rec == QMX_RECIPE_TORCH) continue;   /* torch has no fp8 recipe */
                    if (!isfinite_f(inv)) inv = 1.0f;
                    c.dtype = fp8s[fi];
                    c.recipe = (qmx_recipe)rec;
                    if (rec == QMX_RECIPE_ONNX && (r & 1)) { c.fp8_no_saturate = 1; sat = 0; }
                    for (i = 0; i < len; i++) xbuf[xoff + i] = gen_fp8_value(fp8s[fi], s);
                    fill_sentinel(qbuf, sizeof qbuf);
                    st = qmx_quantize(&c, xbuf + xoff, len, &s, 1, NULL, qbuf + qoff, len);
                    CHECK(st == QMX_OK, "fp8 qmx_quantize status %d", (int)st);
                    for (i = 0; i < len; i++) {
                        float t = rec == QMX_RECIPE_AQT ? mul_f(xbuf[xoff + i], inv) : div_f(xbuf[xoff + i], s);
                        if (isnan_f(t)) t = xbuf[xoff + i];   /* the input NaN's sign (RISC-V: +NaN) */
                        qexp[i] = onnx_nan(rec, fp8s[fi], qmx_fp8_from_f32(t, fp8s[fi], sat));
                        if (qbuf[qoff + i] != qexp[i] && bad++ == 0) first = i;
                    }
                    CHECK(bad == 0, "fp8 qmx_quantize %s recipe %d s %.9g: %u bad, first x 0x%08x got 0x%02x want 0x%02x",
                          qmx_dtype_name(fp8s[fi]), rec, (double)s, (unsigned)bad, (unsigned)bf(xbuf[xoff + first]),
                          qbuf[qoff + first], qexp[first]);
                    CHECK(sentinel_ok(qbuf, qoff) && sentinel_ok(qbuf + qoff + len, GUARD), "fp8 quantize outside");
                    /* and back */
                    memset(ybuf, SENT, sizeof ybuf);
                    st = qmx_dequantize(&c, qbuf + qoff, len, len, &s, 1, NULL, ybuf + 1);
                    CHECK(st == QMX_OK, "fp8 qmx_dequantize status %d", (int)st);
                    bad = 0;
                    for (i = 0; i < len; i++) {
                        yexp[i] = mul_f(qmx_fp8_to_f32(qbuf[qoff + i], fp8s[fi]), s);
                        if (bf(ybuf[1 + i]) != bf(yexp[i]) && bad++ == 0) first = i;
                    }
                    CHECK(bad == 0, "fp8 qmx_dequantize %s: %u bad, first code 0x%02x got 0x%08x want 0x%08x",
                          qmx_dtype_name(fp8s[fi]), (unsigned)bad, qbuf[qoff + first],
                          (unsigned)bf(ybuf[1 + first]), (unsigned)bf(yexp[first]));
                }
}

/* fp8 per channel / per block: [outer][len][inner] with a scale per channel (blk 0) or per
 * block of blk along len (inner 1); each element is qmx_fp8_from_f32 of x * (1/s) (AQT) or
 * x / s with its own s, saturating, and back qmx_fp8_to_f32(code) * s. Covers the short-run
 * vector paths' layouts and tails. */
static void fp8_short_runs(void) {
    static const size_t shapes[][4] = {   /* outer, len, inner, blk */
        {1, 300, 1, 0}, {3, 70, 1, 0}, {2, 5, 16, 0}, {2, 7, 33, 0}, {1, 9, 100, 0},
        {2, 130, 1, 16}, {3, 100, 1, 32}, {2, 97, 1, 17}, {1, 256, 1, 64}, {2, 45, 1, 20}};
    static float sc[1024];
    size_t fi, si, i;
    int rec;
    QMX_TEST_CASE("fp8 through qmx_quantize / qmx_dequantize per channel and per block, every format and recipe");
    for (fi = 0; fi < 4; fi++)
        for (rec = 0; rec < 5; rec++)
            for (si = 0; si < sizeof shapes / sizeof shapes[0] && rec != QMX_RECIPE_TORCH; si++) {
                size_t outer = shapes[si][0], len = shapes[si][1], inner = shapes[si][2], blk = shapes[si][3];
                size_t n = outer * len * inner, nb = blk ? (len + blk - 1) / blk : 0, np = blk ? outer * nb : len;
                size_t qoff = qmx_test_rand() % 4, bad = 0, first = 0;
                qmx_qconfig c = QMX_ZERO_INIT;
                qmx_status st;
                c.dtype = fp8s[fi];
                c.recipe = (qmx_recipe)rec;
                c.fp8_no_saturate = rec == QMX_RECIPE_ONNX && (si & 1);   /* ONNX saturate=0 */
                c.granularity = blk ? QMX_PER_BLOCK : QMX_PER_CHANNEL;
                c.outer = outer; c.axis_len = len; c.inner = inner; c.block_size = blk;
                for (i = 0; i < np; i++) sc[i] = gen_scale();
                for (i = 0; i < n; i++) {
                    size_t k = (i / inner) % len, pi = blk ? (i / (len * inner)) * nb + k / blk : k;
                    float inv = div_f(1.0f, sc[pi]), t;
                    if (!isfinite_f(inv)) inv = 1.0f;
                    xbuf[i] = gen_fp8_value(fp8s[fi], sc[pi]);
                    t = rec == QMX_RECIPE_AQT ? mul_f(xbuf[i], inv) : div_f(xbuf[i], sc[pi]);
                    if (isnan_f(t)) t = xbuf[i];
                    qexp[i] = onnx_nan(rec, fp8s[fi],
                                       qmx_fp8_from_f32(t, fp8s[fi], !(rec == QMX_RECIPE_ONNX && (si & 1))));
                }
                fill_sentinel(qbuf, sizeof qbuf);
                st = qmx_quantize(&c, xbuf, n, sc, np, NULL, qbuf + qoff, MAXN);
                CHECK(st == QMX_OK, "fp8 short runs status %d", (int)st);
                for (i = 0; i < n; i++)
                    if (qbuf[qoff + i] != qexp[i] && bad++ == 0) first = i;
                CHECK(bad == 0, "fp8 short runs %s recipe %d [%u][%u][%u] block %u: %u bad, first [%u] got 0x%02x "
                      "want 0x%02x", qmx_dtype_name(fp8s[fi]), rec, (unsigned)outer, (unsigned)len,
                      (unsigned)inner, (unsigned)blk, (unsigned)bad, (unsigned)first, qbuf[qoff + first], qexp[first]);
                CHECK(sentinel_ok(qbuf, qoff) && sentinel_ok(qbuf + qoff + n, GUARD), "fp8 short runs: outside");
                /* and back: f32(code) * s with each element's s, for every code (Inf, NaN, -0 too) */
                for (i = 0; i < n; i++) qbuf[qoff + i] = (uint8_t)(i % 3 ? qmx_test_rand() : 0x78 + i % 8 + (i & 128));
                st = qmx_dequantize(&c, qbuf + qoff, n, n, sc, np, NULL, ybuf);
                CHECK(st == QMX_OK, "fp8 short runs dequantize status %d", (int)st);
                bad = 0;
                for (i = 0; i < n; i++) {
                    size_t k = (i / inner) % len, pi = blk ? (i / (len * inner)) * nb + k / blk : k;
                    yexp[i] = mul_f(qmx_fp8_to_f32(qbuf[qoff + i], fp8s[fi]), sc[pi]);
                    if (bf(ybuf[i]) != bf(yexp[i]) && bad++ == 0) first = i;
                }
                CHECK(bad == 0, "fp8 short runs dequantize %s [%u][%u][%u] block %u: %u bad, first code 0x%02x "
                      "got 0x%08x want 0x%08x", qmx_dtype_name(fp8s[fi]), (unsigned)outer, (unsigned)len,
                      (unsigned)inner, (unsigned)blk, (unsigned)bad, qbuf[qoff + first],
                      (unsigned)bf(ybuf[first]), (unsigned)bf(yexp[first]));
            }
}

/* ---- the E2M1 encoder (qmx_fp4_from_f32, the MX fast paths: a step table) against the
 * generic integer encoder qmx__lowfp_encode it replaced: every 16-bit-aligned pattern (both
 * signs, NaN and Inf included) and +-64 ulps around each E2M1 value and midpoint, both roundings */
static void fp4_encoder_vs_generic(void) {
    static const uint32_t pts[] = { 0x3E800000u, 0x3F000000u, 0x3F400000u, 0x3F800000u, 0x3FA00000u,
        0x3FC00000u, 0x3FE00000u, 0x40000000u, 0x40200000u, 0x40400000u, 0x40600000u, 0x40800000u,
        0x40A00000u, 0x40C00000u, 0x40E00000u, 0x41000000u, 0x3E700000u, 0x00800000u, 0x00000000u };
    qmx__lowfp f;
    uint32_t u, i, bad = 0, n = 0;
    int r, k;
    QMX_TEST_CASE("fp4 E2M1 encoder == the generic integer encoder");
    qmx__lowfp_format(QMX_FP4_E2M1, &f);
    for (u = 0; u < 0x10000u; u++)
        for (r = 0; r < 2; r++, n++)
            bad += qmx_fp4_from_f32(fb(u << 16), r) != qmx__lowfp_encode(u << 16, &f, r);
    for (i = 0; i < sizeof pts / sizeof pts[0]; i++)
        for (k = -64; k <= 64; k++)
            for (r = 0; r < 4; r++, n++) {
                uint32_t b = (pts[i] + (uint32_t)k) | ((uint32_t)(r >> 1) << 31);
                bad += qmx_fp4_from_f32(fb(b), r & 1) != qmx__lowfp_encode(b, &f, r & 1);
            }
    CHECK(bad == 0, "%u of %u encodes differ", (unsigned)bad, (unsigned)n);
    printf("  fp4 encoder: %u encodes equal the generic encoder's\n", (unsigned)n);
}

/* ---- MX / NVFP4 block formats: every path against the reference in this binary ----
 * qmx__mx_quant / qmx__mx_dequant with QMX__MX_REF (each element through the documented
 * per-element code: qmx__mx_scaled, qmx__mx_encode; the path golden-tested by test_mx.c), with
 * QMX__MX_FAST (the specialised scalar blocks) and with QMX__MX_VEC (the public calls: the
 * vector kernels where the target has them): the same scale codes, element bytes and
 * dequantized bits (NaN payloads included), and nothing written past the outputs. */
#define MXN 4608
static float mx_x[MXN + 8];
static uint8_t mx_el[3][MXN + 64], mx_sc[3][MXN / 4 + 64];
static float mx_y[3][MXN + 8];
static long mx_blocks, mx_elems, mx_dq_elems, mx_cfgs;

/* a random float of exponent e (biased 0 .. 254; 0: subnormal), random mantissa and sign */
static float mx_rand_exp(int e) {
    uint32_t s = (qmx_test_rand() & 1u) << 31;
    return fb(s | ((uint32_t)e << 23) | (qmx_test_rand() & 0x7FFFFFu));
}
/* the element values of a format (positive), for ties: each value and each midpoint */
static int mx_grid(qmx_mx_format f, float *g) {
    int n = 0, c;
    for (c = 0; c < 128; c++) {
        float v;
        switch (f) {
        case QMX_MXFP4: case QMX_NVFP4: if (c >= 8) return n; v = qmx_fp4_to_f32((uint8_t)c); break;
        case QMX_MXFP6_E2M3: if (c >= 32) return n; v = qmx_fp6_to_f32((uint8_t)c, QMX_FP6_E2M3); break;
        case QMX_MXFP6_E3M2: if (c >= 32) return n; v = qmx_fp6_to_f32((uint8_t)c, QMX_FP6_E3M2); break;
        case QMX_MXFP8_E5M2: if (c > 0x7B) return n; v = qmx_fp8_to_f32((uint8_t)c, QMX_FP8_E5M2); break;
        case QMX_MXINT8: v = (float)c * 0.015625f; break;
        default: if (c > 0x7E) return n; v = qmx_fp8_to_f32((uint8_t)c, QMX_FP8_E4M3FN); break;
        }
        if (n) { g[n] = add_f(g[n - 1], mul_f(add_f(v, -g[n - 1]), 0.5f)); n++; }   /* midpoint */
        g[n++] = v;
    }
    return n;
}
/* amax values where a scale rule changes its result: around powers of two, 1.5 2^e (EVEN's
 * rounding), max 2^e (RCEIL: also where amax * f32(1 / max) is 2^-127, the subnormal tie of
 * its E8M0), Qwix's bfloat16 ties whose carry changes the exponent, 6 P (E4M3 values and
 * midpoints) for NVFP4 (P the tensor scale or 1; subnormal E4M3 and half the smallest one for
 * Qwix, and Qwix's 2^-63 guard), the ends 2^-6 * 6 and 448 * 6, FLT_MAX, subnormals, zero;
 * each -2 .. +2 ulps, or up to 100 ulps below a power of two (microxcaling's log2f) */
static float mx_threshold_amax(const qmx_mx_config *c) {
    qmx_mx_format f = c->format;
    float base, P = c->tensor_scale > 0.0f ? c->tensor_scale : 1.0f;
    float mx = f == QMX_MXFP4 || f == QMX_NVFP4 ? 6.0f : f == QMX_MXFP8_E5M2 ? 57344.0f
             : f == QMX_MXFP6_E2M3 ? 7.5f : f == QMX_MXFP6_E3M2 ? 28.0f
             : f == QMX_MXINT8 ? 1.984375f : 448.0f;
    int e = (int)(qmx_test_rand() % 300) - 150, k;
    uint32_t u, sel = qmx_test_rand() % 14;
    switch (sel) {
    case 0: base = 1.0f; break;
    case 1: base = 1.5f; break;
    case 2: base = mx; break;
    case 3: case 4: {   /* 6 P E4M3 (value or midpoint) */
        uint8_t cd = (uint8_t)(qmx_test_rand() % 0x7E);
        float v = qmx_fp8_to_f32(cd, QMX_FP8_E4M3FN);
        if (sel == 4) v = add_f(v, mul_f(add_f(qmx_fp8_to_f32((uint8_t)(cd + 1), QMX_FP8_E4M3FN), -v), 0.5f));
        base = mul_f(mul_f(v, 6.0f), P); e = 0;
        break;
    }
    case 5: base = mul_f(qmx_test_rand() & 1 ? 0.09375f : 2688.0f, P); e = 0; break;
    case 6: return fb(0x7F7FFFFFu - qmx_test_rand() % 64);
    case 7: return fb(qmx_test_rand() % 0x01000000u);       /* subnormals, 0, the smallest normals */
    case 8:   /* RCEIL: amax * f32(1 / max) at 2^-127 or 2^-126 */
        base = div_f(fb(qmx_test_rand() & 1 ? 0x00400000u : 0x00800000u), div_f(1.0f, mx)); e = 0;
        break;
    case 9: {   /* Qwix: f32(f32(amax / Q) * K) = 2^E (2 - 2^-8) (+- ulps), a bf16 tie with a carry */
        float Q = f == QMX_MXFP4 ? 6.0f : 448.0f;
        float K = f == QMX_MXFP4 ? 1.71428573131561279296875f : 1.93548381328582763671875f;
        float V = fb(((uint32_t)(60 + qmx_test_rand() % 120) << 23) | 0x7F8000u);
        base = mul_f(div_f(V, K), Q);
        for (k = 0; k < 64; k++) {   /* walk toward the amax whose product is V */
            float g = mul_f(div_f(base, Q), K);
            if (bf(g) == bf(V)) break;
            base = fb(bf(base) + (bf(g) < bf(V) ? 1u : (uint32_t)-1));
        }
        e = 0;
        break;
    }
    case 10: base = mul_f(f == QMX_MXFP4 || f == QMX_NVFP4 ? 6.0f : 448.0f, fb(0x20000000u)); e = 0; break;   /* Q 2^-63 */
    case 12: base = mul_f(6.0f, fb(0x3A800000u)); e = 0; break;   /* 6 2^-10 */
    case 11: base = 1.0f; e = (int)(qmx_test_rand() % 260) - 130;
        for (; e > 0; e--) base = mul_f(base, 2.0f);
        for (; e < 0 && bf(base) > 0x00800000u; e++) base = mul_f(base, 0.5f);
        return fb(bf(base) - qmx_test_rand() % 100);
    default: base = 1.0f + (float)(qmx_test_rand() % 8) * 0.125f; break;
    }
    while (e > 0 && bf(base) < 0x7F000000u) { base = mul_f(base, 2.0f); e--; }
    while (e < 0 && bf(base) > 0x01000000u) { base = mul_f(base, 0.5f); e++; }
    u = bf(base) + (qmx_test_rand() % 5) - 2u;
    if ((u & 0x7F800000u) == 0x7F800000u) u = 0x7F7FFFFFu;
    return fb(u & 0x7FFFFFFFu);
}
/* n values of one block: a mode per block (random magnitudes, ties of the element grid at the
 * block's own scale, amax at a scale threshold, zeros / denormals, near FLT_MAX), then NaN / Inf
 * sprinkled into some blocks */
static void mx_fill_block(const qmx_mx_config *c, float *x, size_t n) {
    static float grid[300];
    size_t j;
    int ng, mode = (int)(qmx_test_rand() % 8), e = (int)(qmx_test_rand() % 255);
    float amax;
    for (j = 0; j < n; j++) {
        int ej = e - (int)(qmx_test_rand() % 24);
        x[j] = mx_rand_exp(ej < 0 ? 0 : ej);
    }
    if (mode == 1 || mode == 2 || mode == 3) {               /* a chosen amax, then ties under it */
        qmx__mxv v;
        qmx__mxq q;
        qmx__mxs s;
        qmx_mx_config flat = *c;                              /* the block's scale, as the */
        flat.outer = flat.axis_len = flat.inner = 0;          /* library computes it */
        amax = mode == 1 ? fb(bf(mx_rand_exp(e)) & 0x7FFFFFFFu) : mx_threshold_amax(c);
        j = qmx_test_rand() % n;
        x[j] = qmx_test_rand() & 1 ? amax : -amax;
        if (qmx__mx_resolve(&flat, n, &v) == QMX_OK) {
            qmx__mxq_init(&flat, &v, &q);
            if (qmx__mx_fast_scale(&q, bf(amax) & 0x7FFFFFFFu, &s) && mode != 3) {
                ng = mx_grid(c->format, grid);
                for (j = 0; j < n; j++) {
                    float t = grid[qmx_test_rand() % (uint32_t)ng], xv;
                    uint32_t u;
                    if (bf(x[j]) == bf(amax) || bf(x[j]) == (bf(amax) | 0x80000000u)) continue;
                    xv = s.div ? mul_f(t, s.mul) : div_f(t, s.mul);
                    u = bf(xv);
                    if ((u & 0x7F800000u) != 0x7F800000u && u > 1u) u += (qmx_test_rand() % 3) - 1u;
                    if ((u & 0x7FFFFFFFu) > (bf(amax) & 0x7FFFFFFFu)) u = bf(amax) & 0x7FFFFFFFu;
                    x[j] = fb(u | ((qmx_test_rand() & 1u) << 31));
                }
            }
        }
    } else if (mode == 4) {
        for (j = 0; j < n; j++) x[j] = fb(qmx_test_rand() % 5 == 0 ? qmx_test_rand() & 0x807FFFFFu : (qmx_test_rand() & 1u) << 31);
    } else if (mode == 5) {
        for (j = 0; j < n; j++) x[j] = fb((qmx_test_rand() & 0x807FFFFFu) | 0x7F000000u);
    } else if (mode == 6) {
        for (j = 0; j < n; j++) x[j] = fb(qmx_test_rand());   /* any bits: NaN, Inf, everything */
    }
    if (qmx_test_rand() % 6 == 0) {                           /* NaN / Inf in the block */
        j = qmx_test_rand() % n;
        x[j] = fb(specials[qmx_test_rand() % 8]);
        if (qmx_test_rand() & 1) { j = qmx_test_rand() % n; x[j] = fb(specials[qmx_test_rand() % 8]); }
    }
}

static int mx_same_f(const float *a, const float *b, size_t n) {
    return memcmp(a, b, n * sizeof(float)) == 0;
}
static const int mx_modes[3] = { QMX__MX_REF, QMX__MX_FAST, QMX__MX_VEC };

/* One case: x (count elements at xoff), quantized and dequantized by the three paths */
static void mx_case(const qmx_mx_config *c, size_t count, size_t xoff, size_t eoff, const char *what) {
    size_t eb, ns, i;
    int p;
    float *x = mx_x + xoff;
    if (qmx_mx_storage(c, count, &eb, &ns) != QMX_OK) return;
    for (p = 0; p < 3; p++) {
        fill_sentinel(mx_el[p], sizeof mx_el[p]);
        fill_sentinel(mx_sc[p], sizeof mx_sc[p]);
        CHECK_EQ_INT(qmx__mx_quant(c, x, count, mx_el[p] + eoff, eb, mx_sc[p], ns, mx_modes[p]), QMX_OK,
                     "%s: quantize f%d r%d path %d", what, (int)c->format, (int)c->rule, p);
    }
    for (p = 1; p < 3; p++) {
        int sc_ok = memcmp(mx_sc[p], mx_sc[0], sizeof mx_sc[0]) == 0;
        int el_ok = memcmp(mx_el[p], mx_el[0], sizeof mx_el[0]) == 0;
        CHECK(sc_ok && el_ok, "%s: format %d rule %d block %u count %u ts %g: path %d differs from the "
              "reference (scales %s, elements %s)", what, (int)c->format, (int)c->rule, (unsigned)c->block_size,
              (unsigned)count, (double)c->tensor_scale, p, sc_ok ? "equal" : "DIFFER", el_ok ? "equal" : "DIFFER");
        if (!sc_ok || !el_ok) {
            for (i = 0; i < ns; i++)
                if (mx_sc[p][i] != mx_sc[0][i]) {
                    printf("    first scale difference: block %u got %02x want %02x\n", (unsigned)i, mx_sc[p][i], mx_sc[0][i]);
                    break;
                }
            for (i = 0; i < eb + eoff; i++)
                if (mx_el[p][i] != mx_el[0][i]) {
                    printf("    first element byte difference: byte %u got %02x want %02x\n", (unsigned)i, mx_el[p][i], mx_el[0][i]);
                    break;
                }
        }
    }
    CHECK(sentinel_ok(mx_sc[0] + ns, 64) && sentinel_ok(mx_el[0] + eoff + eb, 64) && sentinel_ok(mx_el[0], eoff),
          "%s: reference wrote past its outputs", what);
    mx_blocks += (long)ns; mx_elems += (long)count;
    /* dequantize: the codes just made, then random element bytes and random scale codes */
    for (i = 0; i < 2; i++) {
        if (i == 1) {
            size_t j;
            for (j = 0; j < eb; j++) mx_el[0][eoff + j] = (uint8_t)qmx_test_rand();
            for (j = 0; j < ns; j++) mx_sc[0][j] = (uint8_t)(qmx_test_rand() % 4 == 0 ? 0xFF - qmx_test_rand() % 3
                                                            : qmx_test_rand() % 4 == 0 ? qmx_test_rand() % 3 : qmx_test_rand());
        }
        for (p = 0; p < 3; p++) {
            memset(mx_y[p], 0x5A, sizeof mx_y[p]);
            CHECK_EQ_INT(qmx__mx_dequant(c, mx_el[0] + eoff, eb, mx_sc[0], ns, count, mx_y[p], mx_modes[p]), QMX_OK,
                         "%s: dequantize", what);
        }
        for (p = 1; p < 3; p++)
            CHECK(mx_same_f(mx_y[p], mx_y[0], count + 8), "%s: dequantize format %d rule %d block %u count %u: "
                  "path %d differs from the reference", what, (int)c->format, (int)c->rule,
                  (unsigned)c->block_size, (unsigned)count, p);
        mx_dq_elems += (long)count;
    }
}

/* Every format x rule the library takes, several block sizes (the vector kernels' 16, 32, 64 and
 * others the scalar path keeps), NVFP4 tensor scales; whole-tensor runs, rows with a ragged last
 * block, odd fp4 rows (rows starting mid-byte), views along an inner axis, unaligned pointers. */
static void mx_paths(void) {
    static const size_t blocks[] = { 0, 16, 32, 64, 4, 8, 24, 128, 1024 };
    static const float tss[] = { 0.0f, 1.0f, 0.37f, 1.0e-30f, 3.0e30f, 1.0e-45f, 3.0e38f };
    int f, r, it, iters = QMX_TEST_SMALL_TARGET ? 1 : 4;
    size_t bi;
    QMX_TEST_CASE("MX / NVFP4: vector and fast scalar paths equal the reference bit for bit");
    qmx_test_seed(0x4D58u);   /* this section's data: the same on every target and compiler */
    for (f = 0; f <= (int)QMX_MXINT8; f++)
        for (r = 0; r <= (int)QMX_MX_GGML; r++)
            for (bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
                size_t ti, nts = f == (int)QMX_NVFP4 && r == (int)QMX_MX_FLOOR ? sizeof tss / sizeof tss[0] : 1;
                for (ti = 0; ti < nts; ti++) {
                    qmx_mx_config c = QMX_ZERO_INIT;
                    size_t eb, ns, B;
                    c.format = (qmx_mx_format)f; c.rule = (qmx_mx_rule)r; c.block_size = blocks[bi];
                    c.tensor_scale = tss[ti];
                    if (qmx_mx_storage(&c, 4096, &eb, &ns) != QMX_OK) continue;
                    B = blocks[bi] ? blocks[bi] : (f == (int)QMX_NVFP4 ? 16 : 32);
                    mx_cfgs++;
                    for (it = 0; it < iters; it++) {
                        size_t n, j, rows, len, xoff = qmx_test_rand() % 4, eoff = qmx_test_rand() % 3;
                        /* whole blocks, flat */
                        n = B * (1 + qmx_test_rand() % (MXN / B < 40 ? MXN / B : 40));
                        if (n > MXN) n = B;
                        for (j = 0; j < n; j += B) mx_fill_block(&c, mx_x + xoff + j, B);
                        mx_case(&c, n, xoff, eoff, "flat");
                        /* rows with a ragged last block (odd lengths: fp4 rows start mid-byte) */
                        len = B * (1 + qmx_test_rand() % 5) + 1;
                        len += qmx_test_rand() % (B > 1 ? B - 1 : 1);
                        rows = 1 + qmx_test_rand() % 4;
                        if (rows * len > MXN) rows = 1;
                        if (len > MXN) len = MXN;
                        c.outer = rows; c.axis_len = len; c.inner = 1;
                        for (j = 0; j < rows * len; j += B) mx_fill_block(&c, mx_x + xoff + j, rows * len - j < B ? rows * len - j : B);
                        mx_case(&c, rows * len, xoff, eoff, "ragged rows");
                        /* even rows of whole blocks, and rows of an odd count of blocks when B is */
                        c.outer = 2 + qmx_test_rand() % 3; c.axis_len = B * (1 + qmx_test_rand() % 3); c.inner = 1;
                        if (c.outer * c.axis_len <= MXN) {
                            for (j = 0; j < c.outer * c.axis_len; j += B) mx_fill_block(&c, mx_x + xoff + j, B);
                            mx_case(&c, c.outer * c.axis_len, xoff, eoff, "rows");
                        }
                        /* along an inner axis (blocks strided: the scalar walk) */
                        c.outer = 2; c.axis_len = B + 3; c.inner = 3;
                        if (c.outer * c.axis_len * c.inner <= MXN) {
                            for (j = 0; j < c.outer * c.axis_len * c.inner; j += B)
                                mx_fill_block(&c, mx_x + xoff + j, c.outer * c.axis_len * c.inner - j < B ? c.outer * c.axis_len * c.inner - j : B);
                            mx_case(&c, c.outer * c.axis_len * c.inner, xoff, eoff, "inner axis");
                        }
                    }
                }
            }
    printf("  MX / NVFP4 paths: %ld configurations, %ld blocks (%ld elements) quantized and %ld elements "
           "dequantized by each of the reference, the fast scalar and the vector path\n",
           mx_cfgs, mx_blocks, mx_elems, mx_dq_elems);
}

/* amax at every exponent and at the rules' thresholds, one block at a time in long runs: the
 * scale codes of the vector kernels' lane-wise formulas against the reference's, all rules */
static void mx_scale_sweep(void) {
    static const float tss[] = { 0.0f, 0.37f, 3.0e-30f };
    int f, r, e, ti, round, rounds = QMX_TEST_SMALL_TARGET ? 2 : 8;
    long n = 0;
    QMX_TEST_CASE("MX / NVFP4: scale codes of every amax exponent and threshold");
    for (f = 0; f <= (int)QMX_NVFP4; f++)
        for (r = 0; r <= (int)QMX_MX_QWIX; r++)
          for (ti = 0; ti < (f == (int)QMX_NVFP4 && r == (int)QMX_MX_FLOOR ? 3 : 1); ti++)
            for (round = 0; round < rounds; round++) {
            qmx_mx_config c = QMX_ZERO_INIT;
            size_t eb, ns, B, j, nb = 0;
            int p;
            c.format = (qmx_mx_format)f; c.rule = (qmx_mx_rule)r; c.tensor_scale = tss[ti];
            if (qmx_mx_storage(&c, 4096, &eb, &ns) != QMX_OK) continue;
            B = f == (int)QMX_NVFP4 ? 16 : 32;
            for (e = 0; round == 0 && e < 256 && (nb + 1) * B <= MXN; e++, nb++) {   /* every exponent */
                float *x = mx_x + nb * B;
                for (j = 0; j < B; j++) x[j] = fb(qmx_test_rand() % 0x00800000u);
                j = qmx_test_rand() % B;
                x[j] = fb(e == 255 ? 0x7F7FFFFFu - qmx_test_rand() % 4
                                           : ((uint32_t)e << 23) + (qmx_test_rand() % 3 == 0 ? qmx_test_rand() % 0x800000u : qmx_test_rand() % 5));
            }
            for (; (nb + 1) * B <= MXN; nb++) {                   /* then the thresholds */
                float *x = mx_x + nb * B;
                for (j = 0; j < B; j++) x[j] = 0.0f;
                j = qmx_test_rand() % B;
                x[j] = mx_threshold_amax(&c);
            }
            qmx_mx_storage(&c, nb * B, &eb, &ns);
            for (p = 0; p < 3; p++) {
                fill_sentinel(mx_sc[p], sizeof mx_sc[p]);
                CHECK_EQ_INT(qmx__mx_quant(&c, mx_x, nb * B, mx_el[p], eb, mx_sc[p], ns, mx_modes[p]), QMX_OK, "sweep");
            }
            CHECK(memcmp(mx_sc[1], mx_sc[0], nb) == 0 && memcmp(mx_sc[2], mx_sc[0], nb) == 0 &&
                  memcmp(mx_el[1], mx_el[0], eb) == 0 && memcmp(mx_el[2], mx_el[0], eb) == 0,
                  "format %d rule %d ts %g: scale sweep differs", f, r, (double)c.tensor_scale);
            n += (long)nb;
        }
    printf("  MX / NVFP4 scale sweep: %ld blocks\n", n);
}

int main(void) {
    qmx_test_seed(0x2545F491u); /* this program's data */
    int_quantize_lengths();
    int_quantize_all_configs();
    int_quantize_per_channel();
    int_quantize_last_axis();
    int_quantize_channel_runs();
    int_dequantize_lengths();
    fp8_quantize_lengths();
    fp8_quantize_sweep();
    fp8_dequantize_lengths();
    fp8_through_qconfig();
    fp8_short_runs();
    fp4_encoder_vs_generic();
    mx_paths();
    mx_scale_sweep();
    return QMX_TEST_END();
}
