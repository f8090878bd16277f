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
    /* AQT is symmetric [-qmax, qmax]; TFLite symmetric is narrow; narrow_range forces it;
     * torch and ONNX saturate to the full range */
    narrow = c->narrow_range || (!c->asymmetric && (c->recipe == QMX_RECIPE_AQT ||
                                                    c->recipe == QMX_RECIPE_TFLITE));
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
    return QMX_TEST_END();
}
