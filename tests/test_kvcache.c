/* test_kvcache.c - specification of the quantized KV cache and attention decode (qmx_kv_*,
 * qmx_kernels.h, KV CACHE part).
 *
 * Independent references written here:
 *   - the storage size from the documented layout formula;
 *   - MaxText's quantization, written in double from SEMANTICS.md section 3
 *     (q = rint(x * B / absmax) saturated, B = 127.5 / 7.5; fp8 = nearest fp8 value of
 *     x * 448 / absmax), checked on a hand-derived golden token and on random tokens (at most
 *     one step apart, the float-vs-double rounding of x / s on a near-tie);
 *   - attention in float64 (double dot, libm exp, double sums) on (a) the original float K/V:
 *     the error bound of each format, and (b) the dequantized cache read back with
 *     qmx_kv_cache_read with a float query: the arithmetic error only (1e-5 relative);
 *   - exp against libm's double exp, 1/sqrt(n) against double 1/sqrt(n) (correct rounding).
 * Bit identity across targets: a hash of every output bit of a fixed scenario (all formats,
 * both query modes, ring wrap-around, prefill) must equal KV_HASH, the value computed on the
 * x86-64 host. That hash is only an identity check across targets/builds; correctness comes
 * from the references above. */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "qmx_test.h"
#include <math.h>

#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__)
#  define BIG 1
#else
#  define BIG 0
#endif

/* ---- data ---- */
static float rnd_u(void) { return (float)(qmx_test_rand() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f; }
/* roughly normal: sum of 4 uniforms (integer-derived; one rounded float op per statement, so
 * the same data on every target, x87 included) */
static float rnd_n(void) {
    float s = rnd_u();
    s = s + rnd_u();
    s = s + rnd_u();
    s = s + rnd_u();
    s = s * 0.5f;
    return s;
}

/* K/V tokens [n][heads][d]; kind 0 random, 1 outlier channels (2 channels of every head of
 * K scaled by 16, as LLM keys have), 2 one token all zero and a constant head */
static void fill_kv(float *x, size_t n, size_t heads, size_t d, int kind, float scale) {
    size_t t, h, i;
    for (t = 0; t < n; t++)
        for (h = 0; h < heads; h++)
            for (i = 0; i < d; i++) {
                float v = rnd_n() * scale;
                if (kind == 1 && (i == 3 || i == d - 2)) v *= 16.0f;
                if (kind == 2 && t == 1) v = 0.0f;
                if (kind == 2 && h == 0 && t == 2) v = 0.25f;
                x[(t * heads + h) * d + i] = v;
            }
}

/* ---- float64 reference attention ---- */
static void ref_attention(const float *K, const float *V, size_t heads, size_t d, size_t lo,
                          size_t hi, const float *q, size_t n_heads, double isd, double *out) {
    size_t g = n_heads / heads, j, t, i;
    double *l = (double *)malloc(sizeof(double) * (hi - lo + 1));
    for (j = 0; j < n_heads; j++) {
        size_t h = j / g;
        double m = -1e300, s = 0;
        for (t = lo; t < hi; t++) {
            double a = 0;
            for (i = 0; i < d; i++) a += (double)q[j * d + i] * (double)K[(t * heads + h) * d + i];
            l[t - lo] = a * isd;
            if (l[t - lo] > m) m = l[t - lo];
        }
        for (t = lo; t < hi; t++) { l[t - lo] = exp(l[t - lo] - m); s += l[t - lo]; }
        for (i = 0; i < d; i++) {
            double a = 0;
            for (t = lo; t < hi; t++) a += l[t - lo] * (double)V[(t * heads + h) * d + i];
            out[j * d + i] = a / s;
        }
    }
    free(l);
}

static double max_abs_f(const float *x, size_t n) {
    double m = 0;
    size_t i;
    for (i = 0; i < n; i++) if (fabs((double)x[i]) > m) m = fabs((double)x[i]);
    return m;
}
static double max_err(const float *got, const double *ref, size_t n) {
    double m = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        if (!(e <= m)) m = e;   /* NaN propagates */
    }
    return m;
}

/* ---- cross-target hash ---- */
static uint32_t hash_state = 2166136261u;
static void hash_floats(const float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t b = qmx_test_f32_bits(x[i]);
        int k;
        for (k = 0; k < 4; k++) { hash_state ^= (b >> (8 * k)) & 0xFFu; hash_state *= 16777619u; }
    }
}

static const char *dt_name(qmx_dtype d) { return qmx_dtype_name(d); }
static const qmx_dtype FORMATS[5] = {QMX_INT8, QMX_INT4, QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FLOAT32};

/* Error bound against float64 on the unquantized K/V, as max|out - ref| / max|V|: the sum of
 * a K part and a V part. V alone: the output is a convex combination of rows whose elements
 * are off by <= 0.5 s = absmax/255 (int8), absmax/15 (int4), 2^-4 (E4M3) / 2^-3 (E5M2)
 * relative; K errors move the probabilities (logit error ~ |q| |k error| sqrt(d), here with
 * logits up to ~10 and outlier channels 16x the rest, the case MaxText's per-token scales
 * handle worst). The bounds are about twice the worst case measured over all the runs of
 * this test (K: 0.022, 0.135, 0.052, 0.090; V: 0.0019, 0.024, 0.017, 0.029), so they catch a
 * wrong scale, order or rounding mode, which move the error by far more. */
static double bound_of(qmx_dtype k, qmx_dtype v) {
    double b;
    switch (k) {
    case QMX_INT8: b = 0.05; break;
    case QMX_INT4: b = 0.6; break;
    case QMX_FP8_E4M3FN: b = 0.12; break;
    case QMX_FP8_E5M2: b = 0.2; break;
    default: b = 1e-6; break;
    }
    switch (v) {
    case QMX_INT8: b += 0.01; break;
    case QMX_INT4: b += 0.06; break;
    case QMX_FP8_E4M3FN: b += 0.04; break;
    case QMX_FP8_E5M2: b += 0.07; break;
    default: b += 1e-6; break;
    }
    return b;
}

/* ============================================================================================ */
static void test_exp(void) {
    double worst = 0;
    long i, n = BIG ? (1L << 20) : (1L << 14);
    QMX_TEST_CASE("qmx_kv_exp: relative error <= 2e-7 over [-87.33, 88.72], specials");
    for (i = 0; i <= n; i++) {
        float x = (float)(-87.3365 + (88.7228 + 87.3365) * (double)i / (double)n);
        double r = exp((double)x), e = fabs((double)qmx_kv_exp(x) - r) / r;
        if (e > worst) worst = e;
    }
    /* the range used by softmax, densely: [-20, 0] */
    for (i = 0; i <= n; i++) {
        float x = (float)(-20.0 * (double)i / (double)n);
        double r = exp((double)x), e = fabs((double)qmx_kv_exp(x) - r) / r;
        if (e > worst) worst = e;
    }
    printf("  exp max relative error %.3g (%.2f ulp of 2^-23)\n", worst, worst * 8388608.0);
    CHECK(worst <= 2e-7, "exp relative error %g", worst);
    CHECK(qmx_kv_exp(0.0f) == 1.0f, "exp(0) = %g", (double)qmx_kv_exp(0.0f));
    CHECK(qmx_kv_exp(-0.0f) == 1.0f, "exp(-0)");
    CHECK(qmx_kv_exp(-88.0f) == 0.0f, "flush below FLT_MIN");
    CHECK(qmx_kv_exp(-1e30f) == 0.0f, "large negative");
    CHECK(qmx_test_f32_bits(qmx_kv_exp(89.0f)) == 0x7F800000u, "overflow to +Inf");
    CHECK(qmx_kv_exp(qmx_test_bits_f32(0xFF800000u)) == 0.0f, "exp(-Inf) = 0");
    CHECK(qmx_kv_exp(qmx_test_bits_f32(0x7FC00000u)) != qmx_kv_exp(qmx_test_bits_f32(0x7FC00000u)),
          "exp(NaN) is NaN");
    CHECK(qmx_kv_exp(88.7f) > 3.3e38f && qmx_kv_exp(88.7f) < 3.4e38f, "exp(88.7) finite");
}

static void test_inv_sqrt(void) {
    size_t n;
    long bad = 0;
    QMX_TEST_CASE("qmx_kv_inv_sqrt: correctly rounded 1/sqrt(n) for n in [1, 8192]");
    for (n = 1; n <= QMX_KV_MAX_HEAD_DIM; n++) {
        float y = qmx_kv_inv_sqrt(n);
        double r = 1.0 / sqrt((double)n);
        float up = qmx_test_bits_f32(qmx_test_f32_bits(y) + 1), dn = qmx_test_bits_f32(qmx_test_f32_bits(y) - 1);
        double e = fabs((double)y - r);
        if (!(e <= fabs((double)up - r) && e <= fabs((double)dn - r))) {
            if (bad++ < 5) CHECK(0, "n=%u got %.9g want %.17g", (unsigned)n, (double)y, r);
        }
    }
    CHECK(bad == 0, "%ld values not nearest", bad);
    CHECK(qmx_kv_inv_sqrt(4) == 0.5f && qmx_kv_inv_sqrt(64) == 0.125f, "exact powers");
    CHECK(qmx_kv_inv_sqrt(0) == 0.0f && qmx_kv_inv_sqrt(QMX_KV_MAX_HEAD_DIM + 1) == 0.0f, "out of range -> 0");
}

/* The attention's fp8 row decoder (internal; SIMD bit placement) equals qmx_fp8_to_f32 for
 * all 256 codes of both formats, at every position of a SIMD group. */
static void test_fp8_decode(void) {
    unsigned char codes[256 + 16];
    float lut[256], y[256 + 16];
    int f, c, off;
    QMX_TEST_CASE("fp8 row decoding in attention == qmx_fp8_to_f32 for every code");
    for (f = 0; f < 2; f++) {
        qmx_dtype dt = f ? QMX_FP8_E5M2 : QMX_FP8_E4M3FN;
        for (c = 0; c < 256; c++) lut[c] = qmx_fp8_to_f32((uint8_t)c, dt);
        for (off = 0; off < 3; off++) {
            for (c = 0; c < 256 + 16; c++) codes[c] = (unsigned char)((c * 7 + off) & 255);
            qmx__kv_fp8_decode(codes, 256 + 16 - off, dt, lut, y);
            for (c = 0; c < 256 + 16 - off; c++) {
                float want = qmx_fp8_to_f32(codes[c], dt);
                CHECK(qmx_test_f32_bits(y[c]) == qmx_test_f32_bits(want) || (y[c] != y[c] && want != want),
                      "%s code 0x%02x: %g want %g", dt_name(dt), codes[c], (double)y[c], (double)want);
            }
        }
    }
}

static void test_storage_size(void) {
    qmx_kv_config c = QMX_ZERO_INIT;
    size_t b = 0, want;
    QMX_TEST_CASE("storage size follows the documented layout formula");
#define R64(x) (((x) + 63u) & ~(size_t)63u)
    c.capacity = 100; c.n_kv_heads = 3; c.head_dim = 10;
    CHECK(qmx_kv_cache_storage_size(&c, &b) == QMX_OK, "int8 default");
    want = 64 + (R64(3 * 100 * 10) + R64(3 * 100 * 10) + R64(4 * 100) + R64(4 * 100));
    CHECK_EQ_INT(b, want, "int8 heads_and_dkv");
    c.k_dtype = QMX_INT4; c.v_dtype = QMX_FP8_E5M2; c.k_axis = QMX_KV_DKV; c.v_axis = QMX_KV_DKV;
    c.n_layers = 4;
    CHECK(qmx_kv_cache_storage_size(&c, &b) == QMX_OK, "int4/e5m2 dkv 4 layers");
    want = 64 + 4 * (R64(3 * 100 * 5) + R64(3 * 100 * 10) + R64(4 * 300) + R64(4 * 300));
    CHECK_EQ_INT(b, want, "int4/e5m2 dkv 4 layers");
    c.k_dtype = QMX_INT8; c.k_axis = QMX_KV_CHANNEL; c.channel_block = 20; c.v_dtype = QMX_FLOAT32;
    c.n_layers = 1;
    CHECK(qmx_kv_cache_storage_size(&c, &b) == QMX_OK, "channel keys");
    want = 64 + (R64(3000) + R64(4 * 3000) + R64(4 * 3 * 5 * 10) + 0 + R64(4 * 3 * 20 * 10));
    CHECK_EQ_INT(b, want, "channel keys, float V, residual");
    c.k_dtype = QMX_INT8; c.k_axis = QMX_KV_HEADS_AND_DKV; c.v_dtype = QMX_INT8; c.v_axis = QMX_KV_HEADS_AND_DKV;
    c.channel_block = 0;
    CHECK_EQ_INT(qmx_kv_cache_bytes_per_token(&c), 3 * 10 * 2 + 8, "bytes per token int8");
    {   /* attention workspace, g = 4 query heads per KV head */
        size_t g = 4, d = 10, nh = 12, ws = 0;
        want = 64 + R64(4 * g * 100) + R64(4 * nh * d) + R64(4 * g * d) + R64(g * d) + 2 * R64(4 * g) +
               2 * R64(64 * d) + 2048 + R64(132 * g);
        CHECK(qmx_kv_attention_workspace_size(&c, nh, &ws) == QMX_OK, "workspace size");
        CHECK_EQ_INT(ws, want, "workspace formula");
    }
#undef R64
}

/* MaxText's quantization (double, from SEMANTICS.md) of one group: q values, returns 0 when
 * the qmx code differs by more than one step anywhere. */
static float q_fp8_nearest(double v, qmx_dtype fmt) {
    /* nearest fp8 value by search over all codes (ties: the even code) */
    int c, best = -1;
    double be = 1e300;
    for (c = 0; c < 256; c++) {
        float f = qmx_fp8_to_f32((uint8_t)c, fmt);
        double e;
        if (f != f || fabs((double)f) > 1e30) continue;
        e = fabs((double)f - v);
        if (e < be || (e == be && !(c & 1))) { be = e; best = c; }
    }
    return qmx_fp8_to_f32((uint8_t)best, fmt);
}

static double rne_sat(double r, double lim) {
    double qi = floor(r + 0.5);
    if (r + 0.5 == qi && fmod(qi, 2.0) != 0) qi -= 1; /* tie to even */
    if (qi > lim) qi = lim;
    if (qi < -lim - 1) qi = -lim - 1;
    return qi;
}

static void test_append_quantization(void) {
    enum { H = 2, D = 16, T = 8 };
    static unsigned char st[64 * 1024];
    float k[T * H * D], v[T * H * D], kr[T * H * D], vr[T * H * D];
    qmx_kv_cache c;
    qmx_kv_config cfg = QMX_ZERO_INIT;
    int fi, ax;
    QMX_TEST_CASE("append quantizes like MaxText kvcache.py (int8/int4/fp8, dkv/heads_and_dkv)");
    /* golden token, derived by hand: absmax 127.5 -> s = 1, q = [127 (128 saturated), -64,
     * 0 (0.5 ties to even), 2 (1.5), 2 (2.5), -2 (-2.5), 3 (3.49)] */
    {
        float g[16] = {127.5f, -64.0f, 0.5f, 1.5f, 2.5f, -2.5f, 3.49f, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        float want[7] = {127, -64, 0, 2, 2, -2, 3}, back[16];
        int i;
        cfg.capacity = 4; cfg.n_kv_heads = 1; cfg.head_dim = 16;
        CHECK(qmx_kv_cache_init(&c, &cfg, st, sizeof st) == QMX_OK, "init");
        CHECK(qmx_kv_cache_append(&c, g, g, 1) == QMX_OK, "append");
        CHECK(qmx_kv_cache_read(&c, 0, 1, back, NULL) == QMX_OK, "read");
        for (i = 0; i < 7; i++) CHECK(back[i] == want[i], "golden %d: %g want %g", i, (double)back[i], (double)want[i]);
        for (i = 7; i < 16; i++) CHECK(back[i] == 0.0f, "golden zero %d", i);
        CHECK(c.k_scales[0] == 1.0f, "stored scale is absmax/127.5 = 1");
    }
    for (fi = 0; fi < 4; fi++)
        for (ax = 0; ax < 2; ax++) {
            qmx_dtype dt = FORMATS[fi];
            double B = dt == QMX_INT8 ? 127.5 : dt == QMX_INT4 ? 7.5 : (double)qmx_fp8_max(dt);
            size_t t, h, i, far = 0, one = 0, ng = ax == 1 ? H : 1;
            qmx_kv_config z = QMX_ZERO_INIT;
            cfg = z;
            cfg.capacity = T; cfg.n_kv_heads = H; cfg.head_dim = D;
            cfg.k_dtype = cfg.v_dtype = dt;
            cfg.k_axis = cfg.v_axis = ax ? QMX_KV_DKV : QMX_KV_HEADS_AND_DKV;
            fill_kv(k, T, H, D, 1, 1.0f);
            fill_kv(v, T, H, D, 2, 1.0f);
            CHECK(qmx_kv_cache_init(&c, &cfg, st, sizeof st) == QMX_OK, "init %s", dt_name(dt));
            CHECK(qmx_kv_cache_append(&c, k, v, 3) == QMX_OK, "append 3");
            CHECK(qmx_kv_cache_append(&c, k + 3 * H * D, v + 3 * H * D, T - 3) == QMX_OK, "append rest");
            CHECK(qmx_kv_cache_read(&c, 0, T, kr, vr) == QMX_OK, "read");
            for (t = 0; t < T; t++)
                for (h = 0; h < ng; h++) {
                    int which;
                    for (which = 0; which < 2; which++) {
                        const float *x = which ? v : k, *y = which ? vr : kr;
                        size_t n0 = t * H * D + h * D, len = ax ? D : H * D;
                        double am = 0, s;
                        for (i = 0; i < len; i++) if (fabs((double)x[n0 + i]) > am) am = fabs((double)x[n0 + i]);
                        s = am / B;
                        for (i = 0; i < len; i++) {
                            double got = (double)y[n0 + i];
                            if (am == 0) { CHECK(got == 0.0, "all-zero group reads back 0 (not NaN)"); continue; }
                            {
                                /* MaxText's value, and the ones a relative 1e-6 either way
                                 * give: float x / s (ours) and float x * (B / absmax)
                                 * (MaxText's) may each fall on either side of a near-tie
                                 * (e.g. -absmax lands on -127.5 exactly). */
                                double r = (double)x[n0 + i] * (B / am), g = got / s, w0, w1;
                                if (qmx_dtype_is_fp8(dt)) {
                                    w0 = (double)q_fp8_nearest(r * (1 - 1e-6), dt);
                                    w1 = (double)q_fp8_nearest(r * (1 + 1e-6), dt);
                                } else {
                                    w0 = rne_sat(r * (1 - 1e-6), dt == QMX_INT8 ? 127 : 7);
                                    w1 = rne_sat(r * (1 + 1e-6), dt == QMX_INT8 ? 127 : 7);
                                }
                                if (fabs(g - w0) > 1e-5 * fabs(w0) + 1e-4 && fabs(g - w1) > 1e-5 * fabs(w1) + 1e-4) {
                                    if (far < 3) printf("  x=%.9g r=%.9g got %.9g want %g or %g\n", (double)x[n0 + i], r, g, w0, w1);
                                    far++;
                                }
                                if (w0 != w1) one++;
                            }
                        }
                    }
                }
            CHECK(far == 0, "%s axis %d: %u values differ from MaxText beyond a near-tie", dt_name(dt), ax, (unsigned)far);
            (void)one;
        }
}

/* One attention configuration against the float64 references. */
typedef struct att_case {
    qmx_dtype kd, vd;
    qmx_kv_axis kax, vax;
    size_t heads, n_heads, d, cap, n, G, causal, window;
    int kind, float_query, ring, rotate;
} att_case;

static void run_att(const att_case *a, int hash) {
    size_t H = a->heads, D = a->d, NH = a->n_heads, N = a->n, per = H * D;
    size_t st_bytes = 0, ws_bytes = 0, lo, hi;
    qmx_kv_config cfg = QMX_ZERO_INIT;
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    qmx_kv_cache c;
    float *K = (float *)calloc(N * per, 4), *V = (float *)calloc(N * per, 4);
    float *Kd = (float *)calloc(N * per, 4), *Vd = (float *)calloc(N * per, 4);
    float *q = (float *)calloc(NH * D, 4), *out = (float *)calloc(NH * D, 4);
    double *ref = (double *)malloc(8 * NH * D), *ref2 = (double *)malloc(8 * NH * D);
    void *st, *ws;
    double vmax, e1, e2, isd = 1.0 / sqrt((double)D);
    cfg.capacity = a->cap; cfg.n_kv_heads = H; cfg.head_dim = D;
    cfg.k_dtype = a->kd; cfg.v_dtype = a->vd; cfg.k_axis = a->kax; cfg.v_axis = a->vax;
    cfg.channel_block = a->G; cfg.mode = a->ring ? QMX_KV_RING : QMX_KV_LINEAR;
    cfg.rotate = a->rotate;
    CHECK(qmx_kv_cache_storage_size(&cfg, &st_bytes) == QMX_OK, "storage size");
    CHECK(qmx_kv_attention_workspace_size(&cfg, NH, &ws_bytes) == QMX_OK, "ws size");
    st = malloc(st_bytes + 1); ws = malloc(ws_bytes + 1);
    /* odd addresses: the storage and workspace may have any alignment */
    CHECK(qmx_kv_cache_init(&c, &cfg, (char *)st + 1, st_bytes) == QMX_OK, "init");
    fill_kv(K, N, H, D, a->kind, 1.0f);
    fill_kv(V, N, H, D, a->kind == 1 ? 0 : a->kind, 1.0f);
    fill_kv(q, 1, NH, D, 0, 2.0f);
    CHECK(qmx_kv_cache_append(&c, K, V, N) == QMX_OK, "append");
    hi = a->causal ? a->causal : N;
    lo = a->window && a->window < hi ? hi - a->window : 0;
    if (a->ring && N > a->cap && lo < N - a->cap) lo = N - a->cap;
    o.causal_len = a->causal; o.window = a->window; o.float_query = a->float_query;
    CHECK(qmx_kv_attention(&c, q, NH, &o, out, (char *)ws + 1, ws_bytes) == QMX_OK, "attention");
    ref_attention(K, V, H, D, lo, hi, q, NH, isd, ref);
    vmax = max_abs_f(V + lo * per, (hi - lo) * per);
    e1 = max_err(out, ref, NH * D) / vmax;
    /* (b) the dequantized cache in float64: arithmetic error only (float query) */
    CHECK(qmx_kv_cache_read(&c, lo, hi - lo, Kd + lo * per, Vd + lo * per) == QMX_OK, "read");
    ref_attention(Kd, Vd, H, D, lo, hi, q, NH, isd, ref2);
    e2 = max_err(out, ref2, NH * D) / vmax;
    if (!hash || e1 > bound_of(a->kd, a->vd) * 0.5 || e2 > 0.01)
        printf("  K %-10s V %-10s %-13s %s%s n=%u [%u,%u): err vs f64 %.2e (bound %.2e), vs dequantized %.2e\n",
               dt_name(a->kd), dt_name(a->vd),
               a->kax == QMX_KV_CHANNEL ? "channel" : a->kax == QMX_KV_DKV ? "dkv" : "heads_and_dkv",
               a->float_query ? "fq" : "iq", a->ring ? " ring" : "", (unsigned)N, (unsigned)lo,
               (unsigned)hi, e1, bound_of(a->kd, a->vd), e2);
    CHECK(e1 <= bound_of(a->kd, a->vd), "K %s V %s axis %d kind %d: error %g > bound %g",
          dt_name(a->kd), dt_name(a->vd), a->kax, a->kind, e1, bound_of(a->kd, a->vd));
    /* float query: only the float arithmetic differs from the float64 evaluation of the same
     * dequantized values; with int8 / int4 values also the 15-bit integer weights of each
     * 64-token tile (each weight off by at most 2^-16 of its tile's largest; worst measured
     * 4.8e-5 of max|V|, float values 2e-6). Integer query: + the int8 rounding of the query
     * (2^-8 of |q|max per element, on logits of size ~|q||k|sqrt(d)); worst measured 0.0065. */
    if (a->float_query || a->kd == QMX_FLOAT32 || qmx_dtype_is_fp8(a->kd)) {
        double b2 = (a->vd == QMX_INT8 || a->vd == QMX_INT4) ? 1e-4 : 1e-5;
        CHECK(e2 <= b2, "arithmetic error %g vs float64 of the dequantized cache (bound %g)", e2, b2);
    }
    else
        CHECK(e2 <= 0.015, "int query error %g vs float64 of the dequantized cache", e2);
    if (hash) hash_floats(out, NH * D);
    free(K); free(V); free(Kd); free(Vd); free(q); free(out); free(ref); free(ref2);
    free(st); free(ws);
}

static void test_attention_formats(void) {
    int ki, vi, ax, kind;
    att_case a;
    QMX_TEST_CASE("attention vs float64: every K/V format, granularity, data kind; GQA");
    memset(&a, 0, sizeof a);
    a.heads = 2; a.n_heads = 8; a.d = BIG ? 64 : 32; a.cap = BIG ? 256 : 64; a.n = BIG ? 200 : 48;
    a.G = 8;
    for (ki = 0; ki < 5; ki++)
        for (vi = 0; vi < 5; vi++) {
            if (!BIG && ki != vi && vi != 4) continue;
            for (ax = 0; ax < 3; ax++)
                for (kind = 0; kind < 2; kind++) {
                    if (ax == 2 && FORMATS[ki] == QMX_FLOAT32) continue;
                    if (!BIG && kind == 1 && ax != 0) continue;
                    a.kd = FORMATS[ki]; a.vd = FORMATS[vi];
                    a.kax = (qmx_kv_axis)ax; a.vax = ax == 1 ? QMX_KV_DKV : QMX_KV_HEADS_AND_DKV;
                    a.kind = kind;
                    a.float_query = 0;
                    if (ki == vi && kind == 1) run_att(&a, 0); else { qmx_test_case_name = "attention (quiet)"; run_att(&a, 1); }
                    QMX_TEST_CASE("attention vs float64: every K/V format, granularity, data kind; GQA");
                    a.float_query = 1;
                    run_att(&a, 1);
                }
        }
}

static void test_attention_ranges(void) {
    att_case a;
    QMX_TEST_CASE("causal length, sliding window, d not a multiple of 16, MHA and MQA");
    memset(&a, 0, sizeof a);
    a.kd = QMX_INT8; a.vd = QMX_INT8; a.heads = 2; a.n_heads = 6; a.d = 20; a.cap = 64; a.n = 50;
    a.G = 16;
    a.causal = 33; run_att(&a, 1);
    a.window = 7; run_att(&a, 1);
    a.causal = 0; a.window = 1; run_att(&a, 1);
    a.window = 0; a.heads = 3; a.n_heads = 3; a.d = 6; run_att(&a, 1);     /* MHA, tiny d */
    a.heads = 1; a.n_heads = 5; a.d = 130; a.kd = QMX_INT4; run_att(&a, 1); /* MQA */
    a.kax = QMX_KV_CHANNEL; a.n = 37; run_att(&a, 1);                       /* residual tail */
    a.float_query = 1; run_att(&a, 1);
    a.n = 1; a.kax = QMX_KV_DKV; run_att(&a, 1);                            /* one token */
    a.n = 50; a.heads = 2; a.n_heads = 10; a.d = 32; a.kd = QMX_INT8; a.vd = QMX_FP8_E5M2;
    run_att(&a, 1);                                    /* float query, 16-token float tiles */
    a.kax = QMX_KV_CHANNEL; a.vd = QMX_FLOAT32; run_att(&a, 1);
    a.float_query = 0; a.kax = QMX_KV_HEADS_AND_DKV; a.kd = QMX_INT4; a.vd = QMX_INT4; run_att(&a, 1);
}

/* Ring wrap-around: a ring cache of capacity C after N > C tokens holds exactly what a linear
 * cache of N tokens holds for the last C positions (bit for bit), and attention over the ring
 * equals attention over the linear cache with window C (bit for bit). */
static void test_ring(void) {
    enum { H = 2, D = 16, NH = 4, C = 16, N = 45 };
    static unsigned char s1[96 * 1024], s2[96 * 1024], w1[64 * 1024];
    static float k[N * H * D], v[N * H * D], a[N * H * D], b[N * H * D], q[NH * D], o1[NH * D], o2[NH * D];
    int ax, fi;
    QMX_TEST_CASE("ring buffer: wrap-around keeps the last capacity tokens, same bits as linear");
    fill_kv(k, N, H, D, 1, 1.0f);
    fill_kv(v, N, H, D, 0, 1.0f);
    fill_kv(q, 1, NH, D, 0, 1.0f);
    for (fi = 0; fi < 5; fi++)
        for (ax = 0; ax < 3; ax++) {
            qmx_kv_config cr = QMX_ZERO_INIT, cl;
            qmx_kv_cache r, l;
            qmx_kv_attn_opts o = QMX_ZERO_INIT;
            size_t t, ws = 0;
            cr.capacity = C; cr.n_kv_heads = H; cr.head_dim = D; cr.mode = QMX_KV_RING;
            cr.k_dtype = cr.v_dtype = FORMATS[fi]; cr.k_axis = (qmx_kv_axis)ax; cr.channel_block = 4;
            cl = cr; cl.mode = QMX_KV_LINEAR; cl.capacity = 48;
            CHECK(qmx_kv_cache_init(&r, &cr, s1, sizeof s1) == QMX_OK, "ring init");
            CHECK(qmx_kv_cache_init(&l, &cl, s2, sizeof s2) == QMX_OK, "linear init");
            /* odd chunks so that appends straddle the wrap */
            for (t = 0; t < N;) {
                size_t m = t % 7 + 1;
                if (t + m > N) m = N - t;
                CHECK(qmx_kv_cache_append(&r, k + t * H * D, v + t * H * D, m) == QMX_OK, "ring append");
                t += m;
            }
            CHECK(qmx_kv_cache_append(&l, k, v, N) == QMX_OK, "linear append");
            CHECK_EQ_INT(r.n_tokens, N, "ring counts every token");
            CHECK(qmx_kv_cache_read(&r, N - C, C, a, b) == QMX_OK, "ring read");
            CHECK(qmx_kv_cache_read(&l, N - C, C, a + C * H * D, b + C * H * D) == QMX_OK, "lin read");
            CHECK(memcmp(a, a + C * H * D, 4 * C * H * D) == 0, "%s axis %d: ring K == linear K", dt_name(FORMATS[fi]), ax);
            CHECK(memcmp(b, b + C * H * D, 4 * C * H * D) == 0, "%s axis %d: ring V == linear V", dt_name(FORMATS[fi]), ax);
            CHECK(qmx_kv_cache_read(&r, N - C - 1, 1, a, NULL) == QMX_ERR_ARG, "evicted position");
            CHECK(qmx_kv_attention_workspace_size(&cl, NH, &ws) == QMX_OK && ws <= sizeof w1, "ws");
            CHECK(qmx_kv_attention(&r, q, NH, NULL, o1, w1, sizeof w1) == QMX_OK, "ring attention");
            o.window = C;
            CHECK(qmx_kv_attention(&l, q, NH, &o, o2, w1, sizeof w1) == QMX_OK, "linear attention");
            CHECK(memcmp(o1, o2, sizeof o1) == 0, "%s axis %d: ring attention == linear window", dt_name(FORMATS[fi]), ax);
            hash_floats(o1, NH * D);
            o.window = 5;
            CHECK(qmx_kv_attention(&r, q, NH, &o, o1, w1, sizeof w1) == QMX_OK, "ring window 5");
            CHECK(qmx_kv_attention(&l, q, NH, &o, o2, w1, sizeof w1) == QMX_OK, "linear window 5");
            CHECK(memcmp(o1, o2, sizeof o1) == 0, "window 5 equal");
            o.window = C + 1;
            CHECK(qmx_kv_attention(&r, q, NH, &o, o1, w1, sizeof w1) == QMX_ERR_ARG, "window beyond ring");
            o.window = 0; o.causal_len = N - 3;   /* window = capacity: positions [26, 42) evicted */
            CHECK(qmx_kv_attention(&r, q, NH, &o, o1, w1, sizeof w1) == QMX_ERR_ARG, "ring, causal_len, evicted");
            o.window = 4;                          /* [38, 42): held */
            CHECK(qmx_kv_attention(&r, q, NH, &o, o1, w1, sizeof w1) == QMX_OK, "ring, causal_len, window 4");
            CHECK(qmx_kv_attention(&l, q, NH, &o, o2, w1, sizeof w1) == QMX_OK, "linear, causal_len, window 4");
            CHECK(memcmp(o1, o2, sizeof o1) == 0, "ring == linear with causal_len and window");
            o.causal_len = 0;
            CHECK(qmx_kv_cache_reset(&r) == QMX_OK && r.n_tokens == 0, "reset");
            CHECK(qmx_kv_attention(&r, q, NH, NULL, o1, w1, sizeof w1) == QMX_ERR_SIZE, "empty after reset");
        }
}

/* Prefill equals appending and attending token by token, and matches float64 causal. */
static void test_prefill(void) {
    enum { H = 2, D = 32, NH = 4, T = 12, C = 16 };
    static unsigned char s1[64 * 1024], s2[64 * 1024], w1[32 * 1024];
    static float k[T * H * D], v[T * H * D], q[T * NH * D], o1[T * NH * D], o2[NH * D];
    static double ref[NH * D];
    int ring;
    QMX_TEST_CASE("prefill: causal attention of a block == per-token decode, vs float64");
    fill_kv(k, T, H, D, 1, 1.0f);
    fill_kv(v, T, H, D, 0, 1.0f);
    fill_kv(q, T, NH, D, 0, 1.0f);
    for (ring = 0; ring < 2; ring++) {
        qmx_kv_config c = QMX_ZERO_INIT;
        qmx_kv_cache a, b;
        qmx_kv_attn_opts o = QMX_ZERO_INIT;
        size_t t;
        c.capacity = ring ? 8 : C; c.n_kv_heads = H; c.head_dim = D;
        c.mode = ring ? QMX_KV_RING : QMX_KV_LINEAR;
        o.window = ring ? 6 : 0;
        CHECK(qmx_kv_cache_init(&a, &c, s1, sizeof s1) == QMX_OK, "init");
        CHECK(qmx_kv_cache_init(&b, &c, s2, sizeof s2) == QMX_OK, "init");
        CHECK(qmx_kv_prefill(&a, k, v, T, q, NH, &o, o1, w1, sizeof w1) == QMX_OK, "prefill");
        for (t = 0; t < T; t++) {
            size_t lo = o.window && t + 1 > o.window ? t + 1 - o.window : 0;
            CHECK(qmx_kv_cache_append(&b, k + t * H * D, v + t * H * D, 1) == QMX_OK, "append");
            CHECK(qmx_kv_attention(&b, q + t * NH * D, NH, &o, o2, w1, sizeof w1) == QMX_OK, "attend");
            CHECK(memcmp(o1 + t * NH * D, o2, sizeof o2) == 0, "token %u same bits", (unsigned)t);
            ref_attention(k, v, H, D, lo, t + 1, q + t * NH * D, NH, 1.0 / sqrt((double)D), ref);
            CHECK(max_err(o2, ref, NH * D) / max_abs_f(v, T * H * D) <= 0.04, "token %u vs float64", (unsigned)t);
        }
        hash_floats(o1, T * NH * D);
        o.causal_len = 3;
        CHECK(qmx_kv_prefill(&a, k, v, 1, q, NH, &o, o1, w1, sizeof w1) == QMX_ERR_ARG, "prefill with causal_len");
    }
}

/* Every bad argument: a status, outputs and the cache untouched. */
static void test_errors(void) {
    enum { H = 2, D = 8, NH = 4 };
    static unsigned char st[16 * 1024], ws[8 * 1024];
    float k[4 * H * D], v[4 * H * D], q[4 * NH * D], out[NH * D], sent[NH * D];
    qmx_kv_config c = QMX_ZERO_INIT, b;
    qmx_kv_cache kc, zc;
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    size_t sz = 0, i, wsz = 0;
    QMX_TEST_CASE("bad arguments return a status and leave outputs and the cache untouched");
    fill_kv(k, 4, H, D, 0, 1.0f);
    fill_kv(v, 4, H, D, 0, 1.0f);
    fill_kv(q, 4, NH, D, 0, 1.0f);
    c.capacity = 4; c.n_kv_heads = H; c.head_dim = D;
    /* config / storage query */
    CHECK(qmx_kv_cache_storage_size(NULL, &sz) == QMX_ERR_NULL, "NULL cfg");
    CHECK(qmx_kv_cache_storage_size(&c, NULL) == QMX_ERR_NULL, "NULL bytes");
    b = c; b.capacity = 0;   CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SIZE, "capacity 0");
    b = c; b.n_kv_heads = 0; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SIZE, "heads 0");
    b = c; b.head_dim = 0;   CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SIZE, "dim 0");
    b = c; b.head_dim = QMX_KV_MAX_HEAD_DIM + 1; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SIZE, "dim too big");
    b = c; b.k_dtype = QMX_UINT8; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_DTYPE, "uint8 K");
    b = c; b.v_dtype = (qmx_dtype)99; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_DTYPE, "bad V dtype");
    b = c; b.k_axis = (qmx_kv_axis)7; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "bad axis");
    b = c; b.mode = (qmx_kv_mode)2; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "bad mode");
    b = c; b.v_axis = QMX_KV_CHANNEL; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "channel V");
    b = c; b.k_dtype = QMX_INT4; b.head_dim = 7; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "int4 odd dim");
    b = c; b.k_axis = QMX_KV_CHANNEL; b.channel_block = 3; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "capacity not a multiple of the block");
    b = c; b.capacity = SIZE_MAX / 2; b.n_kv_heads = 4; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_OVERFLOW, "overflow");
    b = c; b.n_layers = SIZE_MAX / 64; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_OVERFLOW, "layers overflow");
    CHECK(sz == 0, "size untouched on error");
    CHECK(qmx_kv_cache_storage_size(&c, &sz) == QMX_OK, "valid");
    /* init */
    memset(&zc, 0, sizeof zc);
    kc = zc;
    CHECK(qmx_kv_cache_init(NULL, &c, st, sz) == QMX_ERR_NULL, "NULL cache");
    CHECK(qmx_kv_cache_init(&kc, &c, NULL, sz) == QMX_ERR_NULL, "NULL storage");
    CHECK(qmx_kv_cache_init(&kc, &c, st, sz - 1) == QMX_ERR_BUFFER_TOO_SMALL, "short storage");
    CHECK(qmx_kv_cache_init_layer(&kc, &c, st, sz, 1) == QMX_ERR_ARG, "layer out of range");
    CHECK(memcmp(&kc, &zc, sizeof kc) == 0, "descriptor untouched");
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_ERR_ARG, "uninitialised descriptor");
    CHECK(qmx_kv_cache_reset(&kc) == QMX_ERR_ARG, "reset uninitialised");
    CHECK(qmx_kv_cache_reset(NULL) == QMX_ERR_NULL, "reset NULL");
    CHECK(qmx_kv_cache_init(&kc, &c, st, sz) == QMX_OK, "init");
    /* append */
    CHECK(qmx_kv_cache_append(NULL, k, v, 1) == QMX_ERR_NULL, "append NULL cache");
    CHECK(qmx_kv_cache_append(&kc, NULL, v, 1) == QMX_ERR_NULL, "append NULL k");
    CHECK(qmx_kv_cache_append(&kc, k, NULL, 1) == QMX_ERR_NULL, "append NULL v");
    CHECK(qmx_kv_cache_append(&kc, k, v, 0) == QMX_ERR_SIZE, "append 0 tokens");
    CHECK(qmx_kv_cache_append(&kc, k, v, 5) == QMX_ERR_BUFFER_TOO_SMALL, "past capacity");
    k[H * D + 3] = qmx_test_bits_f32(0x7FC00000u);
    CHECK(qmx_kv_cache_append(&kc, k, v, 2) == QMX_ERR_NONFINITE, "NaN in second token");
    k[H * D + 3] = qmx_test_bits_f32(0x7F800000u);
    CHECK(qmx_kv_cache_append(&kc, k, v, 2) == QMX_ERR_NONFINITE, "Inf key");
    k[H * D + 3] = 0.5f;
    v[5] = qmx_test_bits_f32(0xFF800000u);
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_ERR_NONFINITE, "-Inf value");
    v[5] = 0.5f;
    CHECK_EQ_INT(kc.n_tokens, 0, "nothing appended by failed calls");
    CHECK(qmx_kv_cache_append(&kc, k, v, 4) == QMX_OK, "fill");
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_ERR_BUFFER_TOO_SMALL, "full linear cache");
    CHECK_EQ_INT(kc.n_tokens, 4, "still 4");
    /* read */
    for (i = 0; i < NH * D; i++) sent[i] = out[i] = -7.0f;
    CHECK(qmx_kv_cache_read(&kc, 0, 1, NULL, NULL) == QMX_ERR_NULL, "read both NULL");
    CHECK(qmx_kv_cache_read(&kc, 0, 0, out, NULL) == QMX_ERR_SIZE, "read 0");
    CHECK(qmx_kv_cache_read(&kc, 3, 2, out, NULL) == QMX_ERR_ARG, "read past end");
    CHECK(qmx_kv_cache_read(&kc, SIZE_MAX, 2, out, NULL) == QMX_ERR_ARG, "read overflow");
    CHECK(memcmp(out, sent, sizeof out) == 0, "read output untouched");
    /* attention */
    CHECK(qmx_kv_attention_workspace_size(&c, NH, &wsz) == QMX_OK, "ws size");
    CHECK(qmx_kv_attention_workspace_size(&c, 3, &sz) == QMX_ERR_SHAPE, "ws: heads not a multiple");
    CHECK(qmx_kv_attention_workspace_size(&c, 0, &sz) == QMX_ERR_SIZE, "ws: 0 heads");
    CHECK(qmx_kv_attention_workspace_size(NULL, 4, &sz) == QMX_ERR_NULL, "ws: NULL");
    CHECK(qmx_kv_attention(NULL, q, NH, NULL, out, ws, wsz) == QMX_ERR_NULL, "NULL cache");
    CHECK(qmx_kv_attention(&kc, NULL, NH, NULL, out, ws, wsz) == QMX_ERR_NULL, "NULL q");
    CHECK(qmx_kv_attention(&kc, q, NH, NULL, NULL, ws, wsz) == QMX_ERR_NULL, "NULL out");
    CHECK(qmx_kv_attention(&kc, q, NH, NULL, out, NULL, wsz) == QMX_ERR_NULL, "NULL ws");
    CHECK(qmx_kv_attention(&kc, q, 0, NULL, out, ws, wsz) == QMX_ERR_SIZE, "0 heads");
    CHECK(qmx_kv_attention(&kc, q, 3, NULL, out, ws, wsz) == QMX_ERR_SHAPE, "3 heads over 2 kv heads");
    CHECK(qmx_kv_attention(&kc, q, NH, NULL, out, ws, wsz - 1) == QMX_ERR_BUFFER_TOO_SMALL, "short ws");
    CHECK(qmx_kv_attention(&zc, q, NH, NULL, out, ws, wsz) == QMX_ERR_ARG, "zeroed descriptor");
    o.causal_len = 5;
    CHECK(qmx_kv_attention(&kc, q, NH, &o, out, ws, wsz) == QMX_ERR_ARG, "causal_len > tokens");
    o.causal_len = 0; o.scale = -1.0f;
    CHECK(qmx_kv_attention(&kc, q, NH, &o, out, ws, wsz) == QMX_ERR_ARG, "negative scale");
    o.scale = qmx_test_bits_f32(0x7FC00000u);
    CHECK(qmx_kv_attention(&kc, q, NH, &o, out, ws, wsz) == QMX_ERR_ARG, "NaN scale");
    o.scale = qmx_test_bits_f32(0x7F800000u);
    CHECK(qmx_kv_attention(&kc, q, NH, &o, out, ws, wsz) == QMX_ERR_ARG, "Inf scale");
    o.scale = 0;
    q[2] = qmx_test_bits_f32(0x7FC00000u);
    CHECK(qmx_kv_attention(&kc, q, NH, &o, out, ws, wsz) == QMX_ERR_NONFINITE, "NaN query");
    q[2] = 3e38f; q[3] = 3e38f;   /* finite query, logits overflow */
    o.float_query = 1;
    CHECK(qmx_kv_attention(&kc, q, NH, &o, out, ws, wsz) == QMX_ERR_NONFINITE, "overflowing logit");
    q[2] = q[3] = 0.5f;
    CHECK(memcmp(out, sent, sizeof out) == 0, "attention output untouched");
    /* prefill */
    CHECK(qmx_kv_cache_reset(&kc) == QMX_OK, "reset");
    o.float_query = 0;
    {
        float big[4 * NH * D];
        for (i = 0; i < 4 * NH * D; i++) big[i] = -7.0f;
        CHECK(qmx_kv_prefill(&kc, k, v, 5, q, NH, &o, big, ws, wsz) == QMX_ERR_BUFFER_TOO_SMALL, "prefill past capacity");
        CHECK(qmx_kv_prefill(&kc, k, v, 1, q, NH, &o, big, ws, 10) == QMX_ERR_BUFFER_TOO_SMALL, "prefill short ws");
        CHECK(qmx_kv_prefill(&kc, k, v, 1, q, 3, &o, big, ws, wsz) == QMX_ERR_SHAPE, "prefill heads");
        CHECK(qmx_kv_prefill(&kc, k, v, 1, NULL, NH, &o, big, ws, wsz) == QMX_ERR_NULL, "prefill NULL q");
        CHECK(qmx_kv_prefill(&kc, k, v, 0, q, NH, &o, big, ws, wsz) == QMX_ERR_SIZE, "prefill 0 tokens");
        k[7] = qmx_test_bits_f32(0x7FC00000u);
        CHECK(qmx_kv_prefill(&kc, k, v, 2, q, NH, &o, big, ws, wsz) == QMX_ERR_NONFINITE, "prefill NaN key");
        k[7] = 0.5f;
        q[NH * D + 1] = qmx_test_bits_f32(0x7F800000u);
        CHECK(qmx_kv_prefill(&kc, k, v, 2, q, NH, &o, big, ws, wsz) == QMX_ERR_NONFINITE, "prefill Inf in the 2nd query");
        CHECK_EQ_INT(kc.n_tokens, 0, "prefill errors append nothing");
        for (i = 0; i < 4 * NH * D; i++) CHECK(big[i] == -7.0f, "prefill output untouched");
    }
}

/* n_layers layers in one storage: each layer's descriptor is independent of the others. */
static void test_layers(void) {
    enum { H = 2, D = 8, C = 6, L = 3 };
    static unsigned char st[32 * 1024];
    float k[L][C * H * D], v[L][C * H * D], a[C * H * D], b[C * H * D];
    qmx_kv_config c = QMX_ZERO_INIT, c1;
    qmx_kv_cache kc[L];
    size_t sz = 0, sz1 = 0;
    int l;
    QMX_TEST_CASE("n_layers layers share one storage query without overlapping");
    c.capacity = C; c.n_kv_heads = H; c.head_dim = D; c.n_layers = L; c.k_dtype = QMX_INT4;
    c.v_dtype = QMX_FP8_E4M3FN; c.k_axis = QMX_KV_CHANNEL; c.channel_block = 3;
    c1 = c; c1.n_layers = 1;
    CHECK(qmx_kv_cache_storage_size(&c, &sz) == QMX_OK && qmx_kv_cache_storage_size(&c1, &sz1) == QMX_OK, "sizes");
    CHECK(sz == 64 + L * (sz1 - 64) && sz <= sizeof st, "L layers = L x one layer (+64 alignment)");
    for (l = 0; l < L; l++) {
        fill_kv(k[l], C, H, D, 1, 1.0f);
        fill_kv(v[l], C, H, D, 0, 1.0f);
        CHECK(qmx_kv_cache_init_layer(&kc[l], &c, st + 3, sz, (size_t)l) == QMX_OK, "init layer %d", l);
    }
    for (l = 0; l < L; l++) CHECK(qmx_kv_cache_append(&kc[l], k[l], v[l], C) == QMX_OK, "append layer %d", l);
    for (l = 0; l < L; l++) {
        qmx_kv_cache one;
        static unsigned char st1[16 * 1024];
        float a1[C * H * D], b1[C * H * D];
        CHECK(qmx_kv_cache_read(&kc[l], 0, C, a, b) == QMX_OK, "read layer %d", l);
        CHECK(qmx_kv_cache_init(&one, &c1, st1, sizeof st1) == QMX_OK, "single");
        CHECK(qmx_kv_cache_append(&one, k[l], v[l], C) == QMX_OK, "single append");
        CHECK(qmx_kv_cache_read(&one, 0, C, a1, b1) == QMX_OK, "single read");
        CHECK(memcmp(a, a1, sizeof a) == 0 && memcmp(b, b1, sizeof b) == 0, "layer %d intact", l);
    }
}

/* Hadamard rotation: read-back returns the unrotated vectors (float32: to rounding), and on
 * keys with outlier channels it cuts the error of per-token int4 / int8 keys. */
static double att_err(att_case *a) {
    /* the float64 error of one run, recomputed here (run_att checks its bound) */
    size_t H = a->heads, D = a->d, NH = a->n_heads, N = a->n, per = H * D, sb = 0, wb = 0;
    qmx_kv_config cfg = QMX_ZERO_INIT;
    qmx_kv_cache c;
    float *K = (float *)calloc(N * per, 4), *V = (float *)calloc(N * per, 4);
    float *q = (float *)calloc(NH * D, 4), *out = (float *)calloc(NH * D, 4);
    double *ref = (double *)calloc(NH * D, 8), e;
    void *st, *ws;
    uint32_t keep = qmx_test_rng_state;
    cfg.capacity = a->cap; cfg.n_kv_heads = H; cfg.head_dim = D; cfg.k_dtype = a->kd;
    cfg.v_dtype = a->vd; cfg.k_axis = a->kax; cfg.v_axis = a->vax; cfg.rotate = a->rotate;
    (void)qmx_kv_cache_storage_size(&cfg, &sb);
    (void)qmx_kv_attention_workspace_size(&cfg, NH, &wb);
    st = malloc(sb); ws = malloc(wb);
    fill_kv(K, N, H, D, 1, 1.0f);
    fill_kv(V, N, H, D, 0, 1.0f);
    fill_kv(q, 1, NH, D, 0, 2.0f);
    qmx_test_rng_state = keep;   /* the same data for every call */
    CHECK(qmx_kv_cache_init(&c, &cfg, st, sb) == QMX_OK && qmx_kv_cache_append(&c, K, V, N) == QMX_OK &&
          qmx_kv_attention(&c, q, NH, NULL, out, ws, wb) == QMX_OK, "rotation run");
    ref_attention(K, V, H, D, 0, N, q, NH, 1.0 / sqrt((double)D), ref);
    e = max_err(out, ref, NH * D) / max_abs_f(V, N * per);
    free(K); free(V); free(q); free(out); free(ref); free(st); free(ws);
    return e;
}

static void test_rotation(void) {
    enum { H = 2, D = 32, T = 5 };
    static unsigned char st[64 * 1024];
    float k[T * H * D], v[T * H * D], kr[T * H * D], vr[T * H * D];
    qmx_kv_config c = QMX_ZERO_INIT, b;
    qmx_kv_cache kc;
    att_case a;
    size_t i, sz;
    double worst = 0, e0, e1;
    QMX_TEST_CASE("Hadamard rotation: exact read-back, lower error on outlier keys, errors");
    fill_kv(k, T, H, D, 1, 1.0f);
    fill_kv(v, T, H, D, 0, 1.0f);
    c.capacity = 8; c.n_kv_heads = H; c.head_dim = D; c.rotate = 1;
    c.k_dtype = c.v_dtype = QMX_FLOAT32;
    CHECK(qmx_kv_cache_init(&kc, &c, st, sizeof st) == QMX_OK, "init");
    CHECK(qmx_kv_cache_append(&kc, k, v, T) == QMX_OK, "append");
    CHECK(qmx_kv_cache_read(&kc, 0, T, kr, vr) == QMX_OK, "read");
    for (i = 0; i < T * H * D; i++) {
        double e = fabs((double)kr[i] - k[i]) + fabs((double)vr[i] - v[i]);
        if (e > worst) worst = e;
    }
    /* H (H x) / d: 2 log2(d) = 10 rounded adds of values up to d max|x| = 32 * 8 */
    CHECK(worst <= 1e-4, "float32 round trip error %g", worst);
    b = c; b.head_dim = 24; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "rotate needs a power of 2");
    b = c; b.rotate = 2; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "rotate 0 or 1");
    k[3] = 3e37f;
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_ERR_OVERFLOW, "a value the rotation would overflow");
    CHECK_EQ_INT(kc.n_tokens, T, "nothing appended");
    memset(&a, 0, sizeof a);
    a.heads = 2; a.n_heads = 8; a.d = 64; a.cap = 128; a.n = 100; a.kind = 1;
    a.kd = QMX_INT4; a.vd = QMX_FLOAT32; a.kax = QMX_KV_DKV;
    e0 = att_err(&a);
    a.rotate = 1;
    e1 = att_err(&a);
    printf("  int4 keys with outlier channels: error %.3g plain, %.3g rotated\n", e0, e1);
    CHECK(e1 < 0.7 * e0, "rotation lowers the int4 key error (%g vs %g)", e1, e0);
    a.kd = QMX_INT8; a.rotate = 0; e0 = att_err(&a);
    a.rotate = 1; e1 = att_err(&a);
    printf("  int8 keys with outlier channels: error %.3g plain, %.3g rotated\n", e0, e1);
    CHECK(e1 < e0, "rotation lowers the int8 key error (%g vs %g)", e1, e0);
    /* into the hash: every format rotated, ring */
    a.n = 40; a.cap = 32; a.ring = 1; a.d = 32;
    a.kd = QMX_INT8; a.vd = QMX_INT8; run_att(&a, 1);
    a.kd = QMX_FP8_E4M3FN; a.vd = QMX_INT4; a.kax = QMX_KV_CHANNEL; a.G = 8; run_att(&a, 1);
    a.float_query = 1; a.kd = QMX_INT4; a.vd = QMX_FP8_E5M2; run_att(&a, 1);
}

/* all-zero and constant data: no NaN (MaxText would give NaN for all-zero tokens) */
static void test_zero_tokens(void) {
    att_case a;
    QMX_TEST_CASE("all-zero tokens and constant heads give finite, correct attention");
    memset(&a, 0, sizeof a);
    a.heads = 2; a.n_heads = 4; a.d = 16; a.cap = 8; a.n = 6; a.G = 2; a.kind = 2;
    a.kd = QMX_INT8; a.vd = QMX_INT4; run_att(&a, 1);
    a.kax = QMX_KV_CHANNEL; a.kd = QMX_FP8_E4M3FN; a.vd = QMX_FP8_E5M2; run_att(&a, 1);
    a.kax = QMX_KV_DKV; a.kd = QMX_INT4; a.vd = QMX_INT8; a.vax = QMX_KV_DKV; run_att(&a, 1);
    /* float keys and query: only the value arithmetic differs from float64; the all-zero
     * token (scale 1 by the zero guard, ~127x the others') must not coarsen the 15-bit
     * integer weights of the other tokens of its tile (bound 1e-4 of max|V| in run_att) */
    a.kd = QMX_FLOAT32; a.float_query = 1; a.vd = QMX_INT8; run_att(&a, 1);
    a.vax = QMX_KV_HEADS_AND_DKV; a.vd = QMX_INT4; run_att(&a, 1);
}

/* The hash of every output bit above, computed on x86-64 (AVX-512 build); any target or build
 * that differs in one bit fails here. */
#define KV_HASH 0x43e839dcu

int main(void) {
    qmx_test_seed(2463534242u); /* this program's data */
    test_exp();
    test_inv_sqrt();
    test_storage_size();
    test_fp8_decode();
    test_append_quantization();
    test_errors();
    test_layers();
    hash_state = 2166136261u;
    test_attention_ranges();
    test_ring();
    test_prefill();
    test_zero_tokens();
    test_rotation();
    {
        uint32_t h = hash_state;
        QMX_TEST_CASE("cross-target bit identity (hash of the outputs of the fixed scenarios)");
        printf("  output hash 0x%08x (x86-64 host: 0x%08x)\n", (unsigned)h, (unsigned)KV_HASH);
        CHECK(h == KV_HASH, "output bits differ from the x86-64 host: 0x%08x", (unsigned)h);
    }
    test_attention_formats();
    return QMX_TEST_END();
}
