/* test_kvcache.c - specification of the quantized KV cache and attention decode (qmx_kv_*,
 * qmx_kernels.h, KV CACHE part).
 *
 * Independent references written here:
 *   - the storage size from the documented layout formula;
 *   - MaxText's quantization, written in double from SEMANTICS.md section 3
 *     (q = rint(x * B / absmax) saturated, B = 127.5 / 7.5; fp8 = nearest fp8 value of
 *     x * 448 / absmax), checked on a hand-derived golden token and on random tokens (at most
 *     one step apart, the float-vs-double rounding of x / s on a near-tie);
 *   - attention in float64 (double dot, libm exp, double sums) on (a) the original float K/V
 *     and (b) the dequantized cache read back with qmx_kv_cache_read with a float query (the
 *     arithmetic error), each checked against the proven error bound of the KV doc (ERROR
 *     BOUNDS), a formula evaluated here on the actual inputs (proven_bound), on every run and
 *     on adversarial inputs built to attain it within 10% (test_proven_bounds);
 *   - exp against libm's double exp, 1/sqrt(n) against double 1/sqrt(n) (correct rounding);
 *   - QMX_KV_BLOCK (scales per block along head_dim): read-back == code x stored scale from
 *     the raw storage, 16-bit scales the rounded-up absmax / B, a model of the block attention
 *     written from the doc (bit-exact on every path), and models of llama.cpp's q8_0 / q4_0
 *     caches (ggml-quants.c's reference quantizers) on examples/kv_decode.c's data;
 *   - opts.token_split (test_token_split, test_token_split_errors): each split's record
 *     against the unsplit call over that split alone, a model of the combine's float order,
 *     one split == the token_split 0 bits, float64 on the dequantized cache; its own hash
 *     KV_SPLIT_HASH across targets.
 * Bit identity across targets: a hash of every output bit of a fixed scenario (all formats,
 * both query modes, ring wrap-around, prefill) must equal KV_HASH, the value computed on the
 * x86-64 host. That hash is only an identity check across targets/builds; correctness comes
 * from the references above. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"
#include "examples/kv_synth.h"   /* examples/kv_decode.c's data (test_block_llama) */
#include <math.h>

/* BIG: the longer sweeps, on x86-64 (native) and aarch64 with dotprod (its KV kernels); the
 * other emulated targets, Cortex-M and valgrind take the small sizes (CI time) */
#if (defined(__x86_64__) || defined(_M_X64) || (defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD))) && \
    !defined(QMX_TEST_VALGRIND)
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

/* A regression envelope, NOT a bound: max|out - ref| / max|V| against float64 on the
 * unquantized K/V, a K part plus a V part, about twice the worst measured on the random data
 * of this test (test_attention_formats prints the measured figures; the proven bound, a
 * formula of the data, is proven_bound below and is checked on every run). It also holds for
 * the rotated runs, which the proven formulas do not cover. */
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
    /* x log2e within half an ulp of k + 1/2: n = RN(RN(x log2e) + 1.5 2^23) differs from the
     * fused n = RN(x log2e + 1.5 2^23) (clang -ffp-contract=fast without the barrier on t).
     * volatile: a constant argument would be folded at compile time, unfused. */
    {
        volatile uint32_t xb[2] = {0x40D2B77Cu, 0x40FF1402u};
        CHECK(qmx_test_f32_bits(qmx_kv_exp(qmx_test_bits_f32(xb[0]))) == 0x443504F0u &&
              qmx_test_f32_bits(qmx_kv_exp(qmx_test_bits_f32(xb[1]))) == 0x453504F0u,
              "exp at a rounding boundary of n: not the documented order");
    }
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

/* Attention decodes every fp8 code exactly. One token in the cache, its K row zeros (so the one
 * logit is 0, its weight exp(0) = 1 and the sum 1) and its V scale set to 1: each output
 * element is then 0 + 1 x v = v, the code's qmx_fp8_to_f32 value (-0 becomes +0; NaN codes
 * give a NaN). The stored V codes are written into the cache: all 256 codes of both formats at
 * positions 0..271 (codes 7 i + off, so each code meets several SIMD lane positions), and
 * random codes for every row length 1..140 (the vector decoders' tails of 4..64 codes; the
 * small targets take every third length). */
static void test_fp8_decode(void) {
    static unsigned char st[8192];
    static float ws[16384];   /* 64 KiB: d = 272 takes about 33 KiB */
    float q[272], out[272], zk[272], v1[272];
    int f, off;
    uint32_t rs = 12345u;   /* a local generator: the hashed data of later cases stays */
    size_t i;
    QMX_TEST_CASE("fp8 attention returns every code's value (one token, weight 1, scale 1)");
    for (i = 0; i < 272; i++) { q[i] = 0.5f; zk[i] = 0.0f; v1[i] = 1.0f; }
    for (f = 0; f < 2; f++) {
        qmx_dtype dt = f ? QMX_FP8_E5M2 : QMX_FP8_E4M3FN;
        for (off = -3; off <= 140; off += (BIG || off < 1) ? 1 : 3) {
            qmx_kv_config cfg = QMX_ZERO_INIT;
            qmx_kv_cache c;
            size_t d = off <= 0 ? 272u : (size_t)off, sb = 0, wb = 0;
            cfg.capacity = 1; cfg.n_kv_heads = 1; cfg.head_dim = d;
            cfg.k_dtype = QMX_FLOAT32; cfg.v_dtype = dt; cfg.v_axis = QMX_KV_DKV;
            if (qmx_kv_cache_storage_size(&cfg, &sb) != QMX_OK || sb > sizeof st ||
                qmx_kv_attention_workspace_size(&cfg, 1, &wb) != QMX_OK || wb > sizeof ws ||
                qmx_kv_cache_init(&c, &cfg, st, sb) != QMX_OK ||
                qmx_kv_cache_append(&c, zk, v1, 1) != QMX_OK) {
                CHECK(0, "%s d %u: sizes / init / append", dt_name(dt), (unsigned)d);
                continue;
            }
            for (i = 0; i < d; i++) {
                rs = rs * 1664525u + 1013904223u;
                c.v[i] = (unsigned char)(off <= 0 ? (7u * i + (unsigned)(off + 3)) & 255u
                                                  : rs >> 24);
            }
            c.v_scales[0] = 1.0f;
            for (i = 0; i < 272; i++) out[i] = -3.5f;
            CHECK(qmx_kv_attention(&c, q, 1, NULL, out, ws, sizeof ws) == QMX_OK,
                  "%s d %u: attention", dt_name(dt), (unsigned)d);
            for (i = 0; i < d; i++) {
                volatile float want = qmx_fp8_to_f32(c.v[i], dt);
                want = want + 0.0f;   /* the accumulator's 0 + v: -0 -> +0 */
                CHECK(qmx_test_f32_bits(out[i]) == qmx_test_f32_bits(want) ||
                      (out[i] != out[i] && want != want),
                      "%s d %u element %u code 0x%02x: %g want %g", dt_name(dt), (unsigned)d,
                      (unsigned)i, c.v[i], (double)out[i], (double)want);
            }
            for (i = d; i < 272; i++)
                CHECK(out[i] == -3.5f, "%s d %u: wrote past the output", dt_name(dt), (unsigned)d);
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

/* ---- the proven error bound (qmx_kernels.h, KV doc, ERROR BOUNDS), evaluated on the data ----
 * Every quantity below is the doc's; the derivation is there. */
static double fmt_B(qmx_dtype dt) {
    return dt == QMX_INT8 ? 127.5 : dt == QMX_INT4 ? 7.5 : dt == QMX_FP8_E4M3FN ? 448.0 : 57344.0;
}
/* e(A): the worst error of one element of a scale group of absmax a */
static double elem_err(qmx_dtype dt, double a) {
    double rho;
    if (dt == QMX_FLOAT32) return 0.0;
    rho = dt == QMX_FP8_E4M3FN ? 1.0 / 28 : dt == QMX_FP8_E5M2 ? 1.0 / 14 : 0.5 / fmt_B(dt);
    if (a / fmt_B(dt) < 2.0 * 1.0842021724855044e-19) return a; /* zero guard (2x margin): e = A */
    return (1.0 + 1.0 / 16384) * rho * a;
}
/* the stored scale's largest value for a group of absmax a: s = RN(a / B), rounded up to the
 * 16-bit format sf (1 binary16: <= s (1 + 2^-10) + 2^-24; 2 bfloat16: <= s (1 + 2^-7)) */
static double scale_up(qmx_dtype dt, double a, int sf) {
    double s = a / fmt_B(dt) * (1.0 + 1.0 / 8388608);
    return sf == 1 ? s * (1.0 + 1.0 / 1024) + 5.9604644775390625e-08 : sf == 2 ? s * (1.0 + 1.0 / 128) : s;
}
/* e(A) with block scales in format sf (KV doc, ERROR BOUNDS: e = rho B s', s' the stored
 * scale, and never above A: a code that is not 0 errs by at most s'/2 <= |x|) */
static double elem_err_s(qmx_dtype dt, double a, int sf) {
    double e, rb;
    if (sf == 0 || dt == QMX_FLOAT32) return elem_err(dt, a);
    if (a / fmt_B(dt) < 2.0 * 1.0842021724855044e-19) return a;
    rb = dt == QMX_FP8_E4M3FN ? 16.0 : dt == QMX_FP8_E5M2 ? 4096.0 : 0.5;
    e = (1.0 + 1.0 / 16384) * rb * scale_up(dt, a, sf);
    return e < a * (1.0 + 1.0 / 16384) ? e : a * (1.0 + 1.0 / 16384);
}
static double blk_absmax(const float *X, size_t t, size_t h, size_t heads, size_t d, size_t i0,
                         size_t len) {
    const float *x = X + (t * heads + h) * d + i0;
    size_t i;
    double m = 0;
    for (i = 0; i < len; i++) if (fabs((double)x[i]) > m) m = fabs((double)x[i]);
    return m;
}
static double grp_absmax(const float *X, size_t t, size_t h, size_t heads, size_t d, int per_head) {
    const float *x = X + t * heads * d + (per_head ? h * d : 0);
    size_t n = per_head ? d : heads * d, i;
    double m = 0;
    for (i = 0; i < n; i++) if (fabs((double)x[i]) > m) m = fabs((double)x[i]);
    return m;
}

typedef struct bnd_case {
    const float *K, *V;   /* what the float64 reference ran on, [n_tok][heads][d] */
    const float *Vq;      /* the unquantized values (their scales, for EP) */
    const float *q;       /* [n_heads][d] */
    size_t heads, n_heads, d, n_tok, lo, hi, G;
    qmx_dtype kd, vd;
    qmx_kv_axis kax, vax;
    int int_q;            /* the attention ran with the integer query */
    int deq;              /* K, V are the dequantized cache: the arithmetic part only */
    size_t db;            /* QMX_KV_BLOCK: elements per block (0: 32) */
    int sf;               /* QMX_KV_BLOCK: scale format (qmx_kv_scale_format) */
} bnd_case;

/* bound[j][i] for every query head j and element i */
static void proven_bound(const bnd_case *b, double *bound) {
    size_t H = b->heads, D = b->d, g = b->n_heads / H, n = b->hi - b->lo, j, t, i, tt;
    size_t G = b->G, done = b->kax == QMX_KV_CHANNEL ? b->n_tok / G * G : 0;
    size_t db = b->db ? b->db : 32;
    const double u2 = 1.1920928955078125e-07;   /* 2^-23 */
    double isd = 1.0 / sqrt((double)D), eL = (double)((D + 15) / 16 + 12) * u2;
    double eV = (double)(n + (n + 15) / 16 + 12) * u2;
    int use_iq = b->int_q && (b->kd == QMX_INT8 || b->kd == QMX_INT4) && b->kax != QMX_KV_CHANNEL;
    for (j = 0; j < b->n_heads; j++) {
        size_t h = j / g;
        const float *qj = b->q + j * D;
        double eq = 0, Dl = 0, Ev = 0, M = 0, smax = 0, EP = 0, Evb[256];
        for (i = 0; i < 256; i++) Evb[i] = 0;
        if (use_iq) {
            for (i = 0; i < D; i++) if (fabs((double)qj[i]) > eq) eq = fabs((double)qj[i]);
            eq = (1.0 + 1.0 / 16384) * eq / 254;
        }
        for (t = b->lo; t < b->hi; t++) {
            const float *kt = b->K + (t * H + h) * D, *vt = b->V + (t * H + h) * D;
            double s1 = 0, s2 = 0, s3 = 0, ekt = 0, dl;
            if (!b->deq && b->kax != QMX_KV_CHANNEL && b->kax != QMX_KV_BLOCK)
                ekt = elem_err(b->kd, grp_absmax(b->K, t, h, H, D, b->kax == QMX_KV_DKV));
            for (i = 0; i < D; i++) {
                double ek, kk = fabs((double)kt[i]);
                if (!b->deq && b->kax == QMX_KV_BLOCK && i % db == 0)   /* the key's block */
                    ekt = elem_err_s(b->kd, blk_absmax(b->K, t, h, H, D, i, db), b->sf);
                ek = ekt;
                if (!b->deq && b->kax == QMX_KV_CHANNEL && t < done) {   /* channel of a block */
                    double am = 0;
                    for (tt = t / G * G; tt < t / G * G + G; tt++) {
                        double x = fabs((double)b->K[(tt * H + h) * D + i]);
                        if (x > am) am = x;
                    }
                    ek = elem_err(b->kd, am);
                }
                s1 += fabs((double)qj[i]) * ek;
                s2 += kk + ek;
                s3 += (fabs((double)qj[i]) + eq) * (kk + ek);
            }
            dl = isd * (s1 + eq * s2) + eL * (1.0 + isd * s3);
            if (dl > Dl) Dl = dl;
            if (b->vd != QMX_FLOAT32 && b->vax == QMX_KV_BLOCK) {   /* per block: Ev[i] */
                size_t bb;
                for (bb = 0; bb < D / db; bb++) {
                    double A = blk_absmax(b->Vq, t, h, H, D, bb * db, db), sp;
                    double e = b->deq ? 0.0 : elem_err_s(b->vd, A, b->sf);
                    if (e > Evb[bb]) Evb[bb] = e;
                    if (e > Ev) Ev = e;
                    sp = scale_up(b->vd, A, b->sf);
                    if (sp > smax) smax = sp;
                }
            } else if (b->vd != QMX_FLOAT32) {
                double A = grp_absmax(b->Vq, t, h, H, D, b->vax == QMX_KV_DKV);
                double e = b->deq ? 0.0 : elem_err(b->vd, A);
                if (e > Ev) Ev = e;
                if (A / fmt_B(b->vd) * (1.0 + u2) > smax) smax = A / fmt_B(b->vd) * (1.0 + u2);
            }
            for (i = 0; i < D; i++) if (fabs((double)vt[i]) > M) M = fabs((double)vt[i]);
        }
        if (b->vd == QMX_INT8 || b->vd == QMX_INT4)
            EP = (double)((n < 64 ? n : 64) - 1) * (b->vd == QMX_INT8 ? 128.0 : 8.0) * smax *
                 (1.0 + eV) / 65534.0;
        for (i = 0; i < D; i++) {
            double vlo = 1e300, vhi = -1e300;
            for (t = b->lo; t < b->hi; t++) {
                double x = (double)b->V[(t * H + h) * D + i];
                if (x < vlo) vlo = x;
                if (x > vhi) vhi = x;
            }
            double Ei = b->vax == QMX_KV_BLOCK ? Evb[i / db] : Ev;
            bound[j * D + i] = Ei + tanh(Dl / 2) * (vhi - vlo + 2 * Ei) + eV * (M + Ev) + EP;
        }
    }
}
/* max over elements of err / bound (> 1: the bound is broken) */
static double bound_ratio(const float *got, const double *ref, const double *bound, size_t n) {
    double m = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]), r = e == 0.0 ? 0.0 : e / bound[i];
        if (!(r <= m)) m = r;   /* NaN propagates */
    }
    return m;
}

/* One attention configuration against the float64 references. */
static double worst_ratio;   /* the largest err / proven bound of the random runs */
static double last_e1, last_e2;   /* the last run's errors (vs float64, vs the dequantized cache) */
typedef struct att_case {
    qmx_dtype kd, vd;
    qmx_kv_axis kax, vax;
    size_t heads, n_heads, d, cap, n, G, causal, window;
    int kind, float_query, ring, rotate;
    size_t db;   /* QMX_KV_BLOCK: dim_block (0: 32) */
    int sf;      /* QMX_KV_BLOCK: block_scale */
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
    cfg.dim_block = a->db; cfg.block_scale = (qmx_kv_scale_format)a->sf;
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
               a->kax == QMX_KV_CHANNEL ? "channel" : a->kax == QMX_KV_DKV ? "dkv"
               : a->kax == QMX_KV_BLOCK ? "block" : "heads_and_dkv",
               a->float_query ? "fq" : "iq", a->ring ? " ring" : "", (unsigned)N, (unsigned)lo,
               (unsigned)hi, e1, bound_of(a->kd, a->vd), e2);
    CHECK(e1 <= bound_of(a->kd, a->vd), "K %s V %s axis %d kind %d: error %g > bound %g",
          dt_name(a->kd), dt_name(a->vd), a->kax, a->kind, e1, bound_of(a->kd, a->vd));
    /* Regression envelopes of the measured arithmetic error (not bounds; the proven ones are
     * checked below). Float query: only the float arithmetic differs from the float64
     * evaluation of the same dequantized values; with int8 / int4 values also the 15-bit
     * integer weights of each 64-token tile. Integer query: + the int8 rounding of the query. */
    if (a->float_query || a->kd == QMX_FLOAT32 || qmx_dtype_is_fp8(a->kd)) {
        double b2 = (a->vd == QMX_INT8 || a->vd == QMX_INT4) ? 1e-4 : 1e-5;
        CHECK(e2 <= b2, "arithmetic error %g vs float64 of the dequantized cache (bound %g)", e2, b2);
    }
    else
        CHECK(e2 <= 0.015, "int query error %g vs float64 of the dequantized cache", e2);
    last_e1 = e1;
    last_e2 = e2;
    if (!a->rotate) {   /* the proven bounds (the formulas are for rotate = 0) */
        bnd_case b;
        double *bd = (double *)malloc(8 * NH * D), r1, r2;
        memset(&b, 0, sizeof b);
        b.K = K; b.V = V; b.Vq = V; b.q = q; b.heads = H; b.n_heads = NH; b.d = D; b.n_tok = N;
        b.lo = lo; b.hi = hi; b.G = a->G; b.kd = a->kd; b.vd = a->vd; b.kax = a->kax;
        b.vax = a->vax; b.int_q = !a->float_query; b.db = a->db; b.sf = a->sf;
        proven_bound(&b, bd);
        r1 = bound_ratio(out, ref, bd, NH * D);
        b.K = Kd; b.V = Vd; b.deq = 1;
        proven_bound(&b, bd);
        r2 = bound_ratio(out, ref2, bd, NH * D);
        CHECK(r1 <= 1.0 && r2 <= 1.0, "K %s V %s axis %d kind %d n %u: err / proven bound %g "
              "(vs float64), %g (vs the dequantized cache)", dt_name(a->kd), dt_name(a->vd),
              a->kax, a->kind, (unsigned)N, r1, r2);
        if (r1 > worst_ratio) worst_ratio = r1;
        if (r2 > worst_ratio) worst_ratio = r2;
        free(bd);
    }
    if (hash) hash_floats(out, NH * D);
    free(K); free(V); free(Kd); free(Vd); free(q); free(out); free(ref); free(ref2);
    free(st); free(ws);
}

/* ---- the proven bounds on adversarial inputs ---- */
/* One case, one KV head, per-token scales (ax): the attention's float64 errors against the
 * unquantized K/V and against the dequantized cache, each over its proven bound (the whole
 * bound, and its arithmetic part: deq), into r[0], r[1]; both must be <= 1. */
static void adv_case(qmx_dtype kd, qmx_dtype vd, qmx_kv_axis ax, size_t NH, size_t D, size_t N,
                     const float *K, const float *V, const float *q, int float_query, double r[2]) {
    qmx_kv_config cfg = QMX_ZERO_INIT;
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    qmx_kv_cache c;
    size_t sb = 0, wb = 0;
    float *Kd = (float *)calloc(N * D, 4), *Vd = (float *)calloc(N * D, 4);
    float *out = (float *)calloc(NH * D, 4);
    double *ref = (double *)malloc(8 * NH * D), *bd = (double *)malloc(8 * NH * D);
    double isd = 1.0 / sqrt((double)D);
    void *st, *ws;
    bnd_case b;
    cfg.capacity = N; cfg.n_kv_heads = 1; cfg.head_dim = D; cfg.k_dtype = kd; cfg.v_dtype = vd;
    cfg.k_axis = cfg.v_axis = ax;
    (void)qmx_kv_cache_storage_size(&cfg, &sb);
    (void)qmx_kv_attention_workspace_size(&cfg, NH, &wb);
    st = malloc(sb); ws = malloc(wb);
    o.float_query = float_query;
    r[0] = r[1] = 2.0;
    if (!(qmx_kv_cache_init(&c, &cfg, st, sb) == QMX_OK && qmx_kv_cache_append(&c, K, V, N) == QMX_OK &&
          qmx_kv_attention(&c, q, NH, &o, out, ws, wb) == QMX_OK &&
          qmx_kv_cache_read(&c, 0, N, Kd, Vd) == QMX_OK)) {
        CHECK(0, "K %s V %s: the attention failed", dt_name(kd), dt_name(vd));
    } else {
        memset(&b, 0, sizeof b);
        b.K = K; b.V = V; b.Vq = V; b.q = q; b.heads = 1; b.n_heads = NH; b.d = D; b.n_tok = N;
        b.lo = 0; b.hi = N; b.kd = kd; b.vd = vd; b.kax = b.vax = ax; b.int_q = !float_query;
        ref_attention(K, V, 1, D, 0, N, q, NH, isd, ref);
        proven_bound(&b, bd);
        r[0] = bound_ratio(out, ref, bd, NH * D);
        ref_attention(Kd, Vd, 1, D, 0, N, q, NH, isd, ref);
        b.K = Kd; b.V = Vd; b.deq = 1;
        proven_bound(&b, bd);
        r[1] = bound_ratio(out, ref, bd, NH * D);
    }
    CHECK(r[0] <= 1.0 && r[1] <= 1.0, "K %s V %s %s n=%u: err / proven bound %.4f (vs float64), "
          "%.4f (vs the dequantized cache)", dt_name(kd), dt_name(vd), float_query ? "fq" : "iq",
          (unsigned)N, r[0], r[1]);
    free(Kd); free(Vd); free(out); free(ref); free(bd); free(st); free(ws);
}

/* A = B / 2^k: the scale A / B is a power of two, so x / s below is exact */
static float edge_absmax(qmx_dtype dt) {
    return dt == QMX_INT8 ? 127.5f / 64 : dt == QMX_INT4 ? 7.5f / 8 : 1.75f;
}
/* a value row at its format's worst rounding: element 0 = A (int: x/s = B rounds to B + 1/2 and
 * saturates, error s/2); element 1: int -A (-B -> -B - 1/2 = the -128 / -8 code, error s/2),
 * fp8 just below the midpoint of the two largest values (error ~ the largest half-spacing:
 * 432 -> 416 of 448, 53248 -> 49152 of 57344); the others small, from `salt` */
static void edge_row(float *v, size_t D, qmx_dtype dt, int salt) {
    float A = edge_absmax(dt);
    size_t i;
    for (i = 0; i < D; i++) v[i] = A * (float)((int)((i * 7 + (size_t)salt) % 9) - 4) * 0.0625f;
    v[0] = A;
    v[1] = dt == QMX_FP8_E4M3FN ? A * (431.9f / 448.0f)
         : dt == QMX_FP8_E5M2   ? A * (53238.0f / 57344.0f) : -A;
}

static void test_proven_bounds(void) {
    enum { D = 16, NMAX = 100 };
    static float K[NMAX * D], V[NMAX * D], q[2 * D];
    const size_t NALL = BIG ? 100 : 40;   /* BIG: two 64-token value tiles */
    double r[2], worst[3] = {0, 0, 0};
    size_t t, i;
    int fi;
    QMX_TEST_CASE("proven error bounds hold on adversarial inputs, and are attained within 10%");
    for (fi = 0; fi < 5; fi++) {
        qmx_dtype dt = FORMATS[fi];
        int quant = dt != QMX_FLOAT32;
        /* values: one token (its own output), float keys */
        fill_kv(K, 2, 1, D, 0, 1.0f);
        fill_kv(q, 2, 1, D, 0, 1.0f);
        edge_row(V, D, dt, 0);
        adv_case(QMX_FLOAT32, dt, QMX_KV_HEADS_AND_DKV, 2, D, 1, K, V, q, 1, r);
        CHECK(!quant || r[0] >= 0.9, "V %s, one token: err %.4f of the bound", dt_name(dt), r[0]);
        if (r[0] > worst[0]) worst[0] = r[0];
        /* values: two tokens, and NALL tokens, with all logits equal (q = 0) */
        for (i = 0; i < 2 * D; i++) q[i] = 0.0f;
        for (t = 0; t < NALL; t++) edge_row(V + t * D, D, dt, (int)t);
        adv_case(QMX_FLOAT32, dt, QMX_KV_DKV, 1, D, 2, K, V, q, 1, r);
        CHECK(!quant || r[0] >= 0.9, "V %s, two tokens, equal logits: err %.4f of the bound", dt_name(dt), r[0]);
        fill_kv(K, NALL, 1, D, 0, 1.0f);
        adv_case(QMX_INT8, dt, QMX_KV_HEADS_AND_DKV, 1, D, NALL, K, V, q, 0, r);
        /* (int8: the bound's EP, 0.123 s, which equal weights do not reach, is in it) */
        CHECK(!quant || r[0] >= (dt == QMX_INT8 ? 0.75 : 0.9), "V %s, %u tokens, equal logits: err "
              "%.4f of the bound", dt_name(dt), (unsigned)NALL, r[0]);
        if (r[0] > worst[0]) worst[0] = r[0];
        /* keys: two tokens with equal exact logits whose keys round in opposite directions
         * by (almost) the format's largest half-spacing, values +1 / -1 (float32): the
         * softmax moves by tanh(D) against the bound's 2 tanh(D/2), D ~ 0.25 */
        {
            double Bf = fmt_B(dt), mid = dt == QMX_FP8_E4M3FN ? 432.0 : dt == QMX_FP8_E5M2 ? 53248.0 : 0.5;
            double eps = dt == QMX_FP8_E4M3FN ? 0.1 : dt == QMX_FP8_E5M2 ? 12.0 : 0.001;
            double A0 = quant ? (double)edge_absmax(dt) : 1.0, s0 = A0 / Bf, a = (mid - eps) * s0;
            double s1 = a / (mid + eps), rho = quant ? elem_err(dt, 1.0) : 1.0 / 255;
            float c = (float)(0.25 / (0.25 * (D - 1) * rho * A0));
            int fq;
            for (i = 0; i < D; i++) {
                K[i] = i ? (float)a : (float)A0;
                K[D + i] = i ? (float)a : (float)(Bf * s1);
                V[i] = 1.0f;
                V[D + i] = -1.0f;
                q[i] = i ? c : 0.0f;
            }
            for (fq = 1; fq >= 0; fq--) {
                if (!fq && dt != QMX_INT8 && dt != QMX_INT4) continue;
                adv_case(dt, QMX_FLOAT32, QMX_KV_HEADS_AND_DKV, 1, D, 2, K, V, q, fq, r);
                CHECK(!quant || !fq || r[0] >= 0.9, "K %s, two tokens: err %.4f of the bound",
                      dt_name(dt), r[0]);
                if (fq && r[0] > worst[1]) worst[1] = r[0];
            }
        }
        /* outlier channels: keys with channels 3 and 14 at 16x and channel 5 at 1000x (the
         * per-token scale flattens the other channels to a few codes), all formats, both
         * query modes, per-token and per-head scales, GQA 2 query heads */
        {
            int fq, ax;
            fill_kv(K, 20, 1, D, 1, 1.0f);
            fill_kv(V, 20, 1, D, 0, 1.0f);
            fill_kv(q, 2, 1, D, 0, 1.0f);
            for (t = 0; t < 20; t++) K[t * D + 5] *= 1000.0f;
            for (ax = 0; ax < 2; ax++)
                for (fq = 0; fq < 2; fq++)
                    adv_case(dt, dt, ax ? QMX_KV_DKV : QMX_KV_HEADS_AND_DKV, 2, D, 20, K, V, q, fq, r);
        }
    }
    /* the 15-bit weights of the integer values: one dominant token (logit 0, value 0 at
     * element 0) and 63 whose weight, e^-11.0904 = 0.49997 / 32767 of it, rounds to P = 0,
     * with values at the -128 / -8 code: the 63 tokens' whole contribution is lost */
    for (fi = 0; fi < 2; fi++) {
        qmx_dtype dt = FORMATS[fi];
        float A = edge_absmax(dt);
        for (t = 0; t < 64; t++)
            for (i = 0; i < D; i++) {
                K[t * D + i] = i == 0 && t ? -44.3616f : 0.0f;   /* isd = 1/4: logit -11.0904 */
                V[t * D + i] = i == 0 ? (t ? -A : 0.0f) : i == 1 ? (t ? 0.0f : A) : 0.0f;
            }
        for (i = 0; i < D; i++) q[i] = i == 0 ? 1.0f : 0.0f;
        adv_case(QMX_FLOAT32, dt, QMX_KV_HEADS_AND_DKV, 1, D, 64, K, V, q, 1, r);
        CHECK(r[1] >= 0.9, "V %s, 15-bit weights: err %.4f of the arithmetic bound", dt_name(dt), r[1]);
        if (r[1] > worst[2]) worst[2] = r[1];
    }
    printf("  largest err / proven bound: values %.4f, keys %.4f, integer weights %.4f (arithmetic part)\n",
           worst[0], worst[1], worst[2]);
}

static void test_attention_formats(void) {
    int ki, vi, ax, kind;
    double mk[4] = {0, 0, 0, 0}, mv[4] = {0, 0, 0, 0}, miq = 0, mfq[2] = {0, 0}, mch[2] = {0, 0};
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
                    if (ax < 2 && vi == 4 && ki < 4 && last_e1 > mk[ki]) mk[ki] = last_e1;
                    if (ax < 2 && ki == 4 && vi < 4 && last_e1 > mv[vi]) mv[vi] = last_e1;
                    if (ki < 2 && last_e2 > miq) miq = last_e2;
                    if (ki == 0 && vi == 4 && kind == 1 && ax != 1 && last_e1 > mch[ax / 2])
                        mch[ax / 2] = last_e1;
                    a.float_query = 1;
                    run_att(&a, 1);
                    if (last_e2 > mfq[vi < 2]) mfq[vi < 2] = last_e2;
                }
        }
    /* the measured figures the doc quotes (ERROR BOUNDS, MEASURED) */
    printf("  measured, max|out - ref| / max|V|, d %u, %u tokens, GQA 8/2, per-token and per-head"
           " scales:\n    K part (V float32, integer query): int8 %.4f int4 %.4f e4m3 %.4f e5m2 %.4f\n"
           "    V part (K float32): int8 %.4f int4 %.4f e4m3 %.4f e5m2 %.4f\n"
           "    vs the dequantized cache: integer query %.4f; float query, float/fp8 V %.2e, int V %.2e\n",
           (unsigned)a.d, (unsigned)a.n, mk[0], mk[1], mk[2], mk[3], mv[0], mv[1], mv[2], mv[3], miq,
           mfq[0], mfq[1]);
    printf("    int8 keys, outlier data: per-token scales %.4f, per-channel (KIVI, block 8) %.4f\n",
           mch[0], mch[1]);
    printf("  largest err / proven bound over all the random runs so far: %.3f\n", worst_ratio);
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

/* Prefill stopped midway by an overflowing logit (a finite query of 3e38 against a key of
 * 3e38 in the same element: the logit is +Inf, QMX_ERR_NONFINITE): it leaves exactly what the
 * per-token loop (append token i; attend token i; stop at the first error) leaves: the tokens
 * before the failing one appended with their outputs written, the failing token appended
 * (a ring's eviction cannot be undone) with its output untouched, the later tokens neither
 * appended nor written. */
static void test_prefill_midway(void) {
    enum { H = 2, D = 8, NH = 4, T = 4, F = 2 };   /* F: the failing token of the block */
    static unsigned char s1[16 * 1024], s2[16 * 1024], w1[16 * 1024];
    static float k[(3 + T) * H * D], v[(3 + T) * H * D], q[T * NH * D], out[T * NH * D], o2[NH * D];
    static float a1[(3 + T) * H * D], b1[(3 + T) * H * D], a2[(3 + T) * H * D], b2[(3 + T) * H * D];
    int ring, fq;
    QMX_TEST_CASE("prefill failing midway leaves what the per-token loop leaves");
    for (ring = 0; ring < 2; ring++)
        for (fq = 0; fq < 2; fq++) {
            qmx_kv_config c = QMX_ZERO_INIT;
            qmx_kv_cache a, b;
            qmx_kv_attn_opts o = QMX_ZERO_INIT;
            size_t n0 = 3, t, i, per = H * D, qper = NH * D, keep;
            c.capacity = ring ? 4 : 8; c.n_kv_heads = H; c.head_dim = D;
            c.mode = ring ? QMX_KV_RING : QMX_KV_LINEAR;
            c.k_dtype = fq ? QMX_FP8_E4M3FN : QMX_INT8;   /* float / integer query */
            fill_kv(k, n0 + T, H, D, 0, 1.0f);
            fill_kv(v, n0 + T, H, D, 0, 1.0f);
            fill_kv(q, T, NH, D, 0, 1.0f);
            k[(n0 + F) * per + 3] = 3e38f;       /* the failing token: key head 0, element 3 */
            q[F * qper + 3] = 3e38f;             /* and its query head 0, element 3 */
            for (i = 0; i < T * qper; i++) out[i] = -7.0f;
            CHECK(qmx_kv_cache_init(&a, &c, s1, sizeof s1) == QMX_OK && qmx_kv_cache_init(&b, &c, s2, sizeof s2) == QMX_OK, "init");
            CHECK(qmx_kv_cache_append(&a, k, v, n0) == QMX_OK && qmx_kv_cache_append(&b, k, v, n0) == QMX_OK, "first tokens");
            CHECK(qmx_kv_prefill(&a, k + n0 * per, v + n0 * per, T, q, NH, &o, out, w1, sizeof w1) == QMX_ERR_NONFINITE,
                  "ring %d fq %d: prefill stops at the overflowing logit", ring, fq);
            CHECK_EQ_INT(a.n_tokens, n0 + F + 1, "the tokens before the failing one and the failing one appended");
            for (t = 0; t <= F; t++) {   /* the per-token loop */
                qmx_status st;
                CHECK(qmx_kv_cache_append(&b, k + (n0 + t) * per, v + (n0 + t) * per, 1) == QMX_OK, "append");
                st = qmx_kv_attention(&b, q + t * qper, NH, &o, o2, w1, sizeof w1);
                if (t < F) {
                    CHECK(st == QMX_OK && memcmp(out + t * qper, o2, sizeof o2) == 0, "token %u: output written, "
                          "the same bits as the loop's", (unsigned)t);
                } else {
                    CHECK(st == QMX_ERR_NONFINITE, "the loop fails at the same token");
                }
            }
            for (i = F * qper; i < T * qper; i++)
                if (out[i] != -7.0f) break;
            CHECK(i == T * qper, "outputs of the failing token and the later ones untouched");
            keep = ring ? c.capacity : n0 + F + 1;
            CHECK(qmx_kv_cache_read(&a, n0 + F + 1 - keep, keep, a1, b1) == QMX_OK &&
                  qmx_kv_cache_read(&b, n0 + F + 1 - keep, keep, a2, b2) == QMX_OK, "read");
            CHECK(memcmp(a1, a2, 4 * keep * per) == 0 && memcmp(b1, b2, 4 * keep * per) == 0,
                  "the cache holds what the loop's holds");
            q[F * qper + 3] = 0.5f;   /* resume: the failing token's query fixed, its attention */
            CHECK(qmx_kv_attention(&a, q + F * qper, NH, &o, out + F * qper, w1, sizeof w1) == QMX_OK,
                  "its attention can be redone on the cache left behind");
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

/* ---- fp8 / float32 keys and values: every SIMD path against the documented float order ---- */
/* A model of ATTENTION DECODE for float32 / fp8 K and V written here from the doc block (codes
 * decoded by qmx_fp8_to_f32; dot16, sum16, the per-token value sums; one rounded float op per
 * call, so no contraction or excess precision), on caches whose codes include planted NaN, Inf,
 * subnormal and signed-zero codes, for ragged head_dim, context lengths, GQA groups (1..8),
 * rings, windows and KIVI keys: the output must be the model's bits (NaN: any NaN), and a
 * NaN / Inf key code must give QMX_ERR_NONFINITE. The build under test picks its path
 * (AVX-512 VBMI / AVX-512 / AVX2 / NEON / portable), so each target checks its own. */
static float mf_mul(float a, float b) { volatile float r = a * b; return r; }
static float mf_add(float a, float b) { volatile float r = a + b; return r; }
static float mf_div(float a, float b) { volatile float r = a / b; return r; }
static float mf_sum16(const float *x, const float *y, size_t n) {   /* dot16 (y) or sum16 */
    float l[16];
    size_t i, j;
    for (j = 0; j < 16; j++) l[j] = 0.0f;
    for (i = 0; i < n; i++) l[i & 15] = mf_add(l[i & 15], y ? mf_mul(x[i], y[i]) : x[i]);
    for (j = 0; j < 8; j++) l[j] = mf_add(l[j], l[j + 8]);
    for (j = 0; j < 4; j++) l[j] = mf_add(l[j], l[j + 4]);
    for (j = 0; j < 2; j++) l[j] = mf_add(l[j], l[j + 2]);
    return mf_add(l[0], l[1]);
}
static void mf_row(qmx_dtype dt, const unsigned char *src, size_t d, float *y) {
    size_t i;
    for (i = 0; i < d; i++)
        y[i] = dt == QMX_FLOAT32 ? ((const float *)(const void *)src)[i] : qmx_fp8_to_f32(src[i], dt);
}
/* returns 0, or 1 when a logit is not finite (the call must fail) */
static int model_attention(const qmx_kv_cache *c, const float *q, size_t NH, size_t lo, size_t hi,
                           float *out) {
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, cap = n->capacity, H = n->n_kv_heads, g = NH / H, cnt = hi - lo;
    size_t G = n->channel_block, h, j, t, i;
    int chan = n->k_axis == QMX_KV_CHANNEL && n->k_dtype != QMX_FLOAT32;
    size_t completed = chan ? c->n_tokens / G * G : 0;
    float isd = qmx_kv_inv_sqrt(d), *l = (float *)malloc(4 * cnt), *row = (float *)malloc(4 * d);
    float *qf = (float *)malloc(4 * d), *acc = (float *)malloc(4 * d);
    int bad = 0;
    for (h = 0; h < H && !bad; h++)
        for (j = 0; j < g && !bad; j++) {
            const float *qj = q + (h * g + j) * d;
            float m, S;
            for (t = 0; t < cnt; t++) {
                size_t p = lo + t, slot = p % cap;
                float x;
                if (chan && p >= completed) {
                    x = mf_mul(mf_sum16(qj, c->k_resid + (h * G + p % G) * d, d), isd);
                } else if (chan) {
                    const float *s = c->k_scales + (h * (cap / G) + slot / G) * d;
                    for (i = 0; i < d; i++) qf[i] = mf_mul(qj[i], s[i]);
                    mf_row(n->k_dtype, c->k + (h * cap + slot) * c->row_k, d, row);
                    x = mf_mul(mf_sum16(qf, row, d), isd);
                } else {
                    mf_row(n->k_dtype, c->k + (h * cap + slot) * c->row_k, d, row);
                    x = mf_mul(mf_sum16(qj, row, d), isd);
                    if (n->k_dtype != QMX_FLOAT32)
                        x = mf_mul(x, c->k_scales[n->k_axis == QMX_KV_DKV ? h * cap + slot : slot]);
                }
                l[t] = x;
            }
            m = l[0];
            for (t = 0; t < cnt; t++) {
                if (l[t] != l[t] || l[t] - l[t] != 0.0f) bad = 1;
                if (l[t] > m) m = l[t];
            }
            if (bad) break;
            for (t = 0; t < cnt; t++) {
                volatile float x = l[t] - m;
                l[t] = x < -87.3365020751953125f ? 0.0f : qmx_kv_exp(x);
            }
            S = mf_sum16(l, NULL, cnt);
            for (i = 0; i < d; i++) acc[i] = 0.0f;
            for (t = 0; t < cnt; t++) {
                size_t slot = (lo + t) % cap;
                float wt = l[t];
                if (n->v_dtype != QMX_FLOAT32)
                    wt = mf_mul(wt, c->v_scales[n->v_axis == QMX_KV_DKV ? h * cap + slot : slot]);
                mf_row(n->v_dtype, c->v + (h * cap + slot) * c->row_v, d, row);
                for (i = 0; i < d; i++) acc[i] = mf_add(acc[i], mf_mul(wt, row[i]));
            }
            for (i = 0; i < d; i++) out[(h * g + j) * d + i] = mf_div(acc[i], S);
        }
    free(l); free(row); free(qf); free(acc);
    return bad;
}

/* special fp8 codes: subnormals / zeros (finite), then Inf and NaN */
static const unsigned char F8_FINITE_SPECIAL[2][8] = {
    {0x01, 0x03, 0x07, 0x80, 0x00, 0x81, 0x86, 0x7E},   /* E4M3FN: 0x7E = 448 */
    {0x01, 0x02, 0x03, 0x80, 0x00, 0x81, 0x83, 0x7B}};  /* E5M2: 0x7B = 57344 */
static const unsigned char F8_NONFINITE[2][4] = {{0x7F, 0xFF, 0x7F, 0xFF},
                                                 {0x7C, 0xFC, 0x7E, 0xFF}};

static void test_fp8_paths(void) {
    static const size_t DS[] = {1, 7, 16, 33, 64, 100, 128, 136, 192};
    static const size_t NS[] = {1, 15, 16, 17, 40, 70};
    static const size_t GS[] = {1, 2, 3, 4, 5, 8};
    static const qmx_dtype FT[3] = {QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FLOAT32};
    size_t cases = 0, nonfinite = 0, ci;
    QMX_TEST_CASE("fp8 attention paths == the documented float order (special codes, ragged shapes)");
    for (ci = 0; ci < (BIG ? 160u : 40u); ci++) {
        qmx_kv_config cfg = QMX_ZERO_INIT;
        qmx_kv_attn_opts o = QMX_ZERO_INIT;
        qmx_kv_cache c;
        size_t D = DS[ci % 9], N = NS[(ci / 3) % 6], g = GS[(ci / 5) % 6], H = 1 + ci % 2;
        size_t NH = H * g, per, sb = 0, wb = 0, lo, hi, i, t;
        int kf = (int)(ci % 3), vf = (int)((ci / 3) % 3), mode = (int)((ci / 7) % 4), plant;
        float *K, *V, *q, *out, *want;
        void *st, *ws;
        qmx_status s;
        if (kf == 2 && vf == 2) vf = (int)(ci & 1);   /* at least one fp8 side */
        cfg.head_dim = D; cfg.n_kv_heads = H; cfg.k_dtype = FT[kf]; cfg.v_dtype = FT[vf];
        cfg.capacity = N + 8;
        cfg.k_axis = cfg.v_axis = (ci & 4) ? QMX_KV_DKV : QMX_KV_HEADS_AND_DKV;
        if (mode == 1) { cfg.mode = QMX_KV_RING; cfg.capacity = N > 20 ? N - 9 : N; }
        if (mode == 2 && kf != 2) { cfg.k_axis = QMX_KV_CHANNEL; cfg.channel_block = 8; cfg.capacity = 80; }
        per = H * D;
        K = (float *)malloc(4 * N * per); V = (float *)malloc(4 * N * per);
        q = (float *)malloc(4 * NH * D); out = (float *)malloc(4 * NH * D);
        want = (float *)malloc(4 * NH * D);
        fill_kv(K, N, H, D, 1, 1.0f);
        fill_kv(V, N, H, D, 0, 1.0f);
        fill_kv(q, 1, NH, D, 0, 2.0f);
        CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK &&
              qmx_kv_attention_workspace_size(&cfg, NH, &wb) == QMX_OK, "sizes");
        st = malloc(sb); ws = malloc(wb + 3);
        CHECK(qmx_kv_cache_init(&c, &cfg, st, sb) == QMX_OK && qmx_kv_cache_append(&c, K, V, N) == QMX_OK,
              "init / append");
        hi = (mode == 3 && N > 2) ? N - 1 : N;
        o.causal_len = hi;
        o.window = mode == 3 ? 13 : 0;
        lo = o.window && o.window < hi ? hi - o.window : 0;
        if (N > cfg.capacity && lo < N - cfg.capacity) lo = N - cfg.capacity;
        /* plant special codes in the stored rows: finite ones in K and V, Inf / NaN in V; in
         * every fourth case an Inf / NaN in K (the attention must then fail) */
        plant = (int)(ci % 4 == 3) * 2 + 1;
        for (t = 0; t < cfg.capacity && t < N; t++)
            for (i = 0; i < H * D; i += 5) {
                size_t hh = i / D, e = i % D, r = qmx_test_rand();
                if (qmx_dtype_is_fp8(cfg.k_dtype) && (r & 3) == 0)
                    c.k[(hh * cfg.capacity + t) * c.row_k + e] =
                        F8_FINITE_SPECIAL[kf][(r >> 2) & 7];
                if (qmx_dtype_is_fp8(cfg.v_dtype) && ((r >> 5) & 3) == 0)
                    c.v[(hh * cfg.capacity + t) * c.row_v + e] =
                        ((r >> 7) & 15) == 0 ? F8_NONFINITE[vf][(r >> 11) & 3]
                                             : F8_FINITE_SPECIAL[vf][(r >> 11) & 7];
            }
        if (plant == 3 && qmx_dtype_is_fp8(cfg.k_dtype) && !(cfg.k_axis == QMX_KV_CHANNEL))
            c.k[((H - 1) * cfg.capacity + (hi - 1) % cfg.capacity) * c.row_k + D / 2] =
                F8_NONFINITE[kf][ci & 3];
        for (i = 0; i < NH * D; i++) out[i] = -1.25f;
        s = qmx_kv_attention(&c, q, NH, &o, out, (char *)ws + 3, wb);
        if (model_attention(&c, q, NH, lo, hi, want)) {
            nonfinite++;
            CHECK(s == QMX_ERR_NONFINITE, "case %u: status %d, want QMX_ERR_NONFINITE", (unsigned)ci, (int)s);
            for (i = 0; i < NH * D; i++) CHECK(out[i] == -1.25f, "case %u: out written on error", (unsigned)ci);
        } else {
            CHECK(s == QMX_OK, "case %u: status %d", (unsigned)ci, (int)s);
            for (i = 0; i < NH * D; i++)
                CHECK(qmx_test_f32_bits(out[i]) == qmx_test_f32_bits(want[i]) ||
                          (out[i] != out[i] && want[i] != want[i]),
                      "case %u (K %s V %s d %u n %u g %u H %u mode %d axis %d) out[%u] %a want %a",
                      (unsigned)ci, dt_name(cfg.k_dtype), dt_name(cfg.v_dtype), (unsigned)D,
                      (unsigned)N, (unsigned)g, (unsigned)H, mode, (int)cfg.k_axis, (unsigned)i,
                      (double)out[i], (double)want[i]);
        }
        cases++;
        free(K); free(V); free(q); free(out); free(want); free(st); free(ws);
    }
    printf("  %u cases, %u with an Inf / NaN key code (QMX_ERR_NONFINITE)\n", (unsigned)cases,
           (unsigned)nonfinite);
}

/* ---- QMX_KV_BLOCK: scales per block of dim_block elements along head_dim ---- */
static float s16_val(uint16_t h, int sf) { return sf == 1 ? qmx_f16_to_f32(h) : qmx_bf16_to_f32(h); }
static size_t c_row(qmx_dtype dt, size_t d) { return dt == QMX_INT4 ? d / 2 : dt == QMX_FLOAT32 ? 4 * d : d; }
/* stored scale of block b of (head h, slot), as the doc's layout places it */
static float stored_bscale(const qmx_kv_cache *c, int is_k, size_t h, size_t slot, size_t b) {
    const float *sc = is_k ? c->k_scales : c->v_scales;
    size_t nb = c->cfg.head_dim / c->cfg.dim_block, i = (h * c->cfg.capacity + slot) * nb + b;
    if (c->cfg.block_scale == QMX_KV_SCALE_F32) return sc[i];
    return s16_val(((const uint16_t *)(const void *)sc)[i], (int)c->cfg.block_scale);
}
/* the stored code of element e of (head h, slot) as a float (int8, int4 nibble, fp8) */
static float stored_code(const qmx_kv_cache *c, int is_k, size_t h, size_t slot, size_t e) {
    qmx_dtype dt = is_k ? c->cfg.k_dtype : c->cfg.v_dtype;
    const unsigned char *r = (is_k ? c->k : c->v) + (h * c->cfg.capacity + slot) * (is_k ? c->row_k : c->row_v);
    if (dt == QMX_INT8) return (float)(int8_t)r[e];
    if (dt == QMX_INT4) {
        int nib = (r[e / 2] >> (4 * (e & 1))) & 15;
        /* branch-free: arm-none-eabi-gcc 12 (-mcpu=cortex-m55) turns the two-way conversion
         * into an IT-predicated vcvtne, which its assembler rejects */
        return (float)(nib - ((nib & 8) << 1));
    }
    return qmx_fp8_to_f32(r[e], dt);
}

/* Append / read-back with block scales: every format, block 32 / 64, float32 / binary16 /
 * bfloat16 scales, linear and ring: read-back == code x stored scale bit for bit; the stored
 * 16-bit scale is absmax / B rounded UP to the format; the codes are the nearest of x / s'
 * (Qwix / MaxText with the stored scale, near-ties either way); every element within e(A) of
 * the doc; an all-zero int block stores scale 0; a ring holds what a linear cache holds. */
static void test_block_storage(void) {
    enum { H = 2, D = 128, T = 7, C = 4 };
    static unsigned char s1[96 * 1024], s2[96 * 1024];
    static float k[T * H * D], v[T * H * D], kr[T * H * D], vr[T * H * D], a2[T * H * D], b2[T * H * D];
    int fi, sf, dbi;
    size_t bad_code = 0, bad_err = 0, bad_bits = 0, bad_scale = 0, cases = 0;
    QMX_TEST_CASE("block scales: storage, read-back == code x stored scale, rounding up, ring");
    fill_kv(k, T, H, D, 1, 1.0f);
    fill_kv(v, T, H, D, 0, 1.0f);
    {   /* an all-zero block, a tiny block (binary16: a subnormal scale), a 9000x outlier */
        size_t i;
        for (i = 0; i < 32; i++) { k[H * D + i] = 0.0f; v[2 * H * D + D + i] = 0.0f; }
        for (i = 32; i < 64; i++) { k[2 * H * D + i] *= 1e-6f; v[H * D + i] *= 3e-7f; }
        k[3 * H * D + 77] = 9000.0f;
    }
    for (fi = 0; fi < 4; fi++)
        for (sf = 0; sf < 3; sf++)
            for (dbi = 0; dbi < 2; dbi++) {
                qmx_dtype dt = FORMATS[fi];
                qmx_kv_config cl = QMX_ZERO_INIT, cr;
                qmx_kv_cache l, r;
                size_t db = dbi ? 64 : 32, t, h, e, sz = 0;
                double B = fmt_B(dt);
                /* Cortex-M (soft double): half of the combinations, each value of each loop kept */
                if (QMX_TEST_SMALL_TARGET && (fi + sf + dbi) % 2) continue;
                cl.capacity = 8; cl.n_kv_heads = H; cl.head_dim = D;
                cl.k_dtype = dt; cl.v_dtype = FORMATS[(fi + 1) % 4];
                cl.k_axis = cl.v_axis = QMX_KV_BLOCK; cl.dim_block = dbi ? 64 : 0;
                cl.block_scale = (qmx_kv_scale_format)sf;
                cr = cl; cr.mode = QMX_KV_RING; cr.capacity = C;
                CHECK(qmx_kv_cache_storage_size(&cl, &sz) == QMX_OK && sz <= sizeof s1, "size");
                CHECK(qmx_kv_cache_init(&l, &cl, s1, sizeof s1) == QMX_OK &&
                      qmx_kv_cache_init(&r, &cr, s2, sizeof s2) == QMX_OK, "init");
                CHECK(qmx_kv_cache_append(&l, k, v, T) == QMX_OK, "append");
                CHECK(qmx_kv_cache_append(&r, k, v, 3) == QMX_OK &&
                      qmx_kv_cache_append(&r, k + 3 * H * D, v + 3 * H * D, T - 3) == QMX_OK, "ring append");
                CHECK(qmx_kv_cache_read(&l, 0, T, kr, vr) == QMX_OK, "read");
                for (t = 0; t < T; t++)
                    for (h = 0; h < H; h++) {
                        int w;
                        for (w = 0; w < 2; w++) {
                            qmx_dtype wd = w ? cl.v_dtype : cl.k_dtype;
                            const float *x = (w ? v : k) + (t * H + h) * D, *y = (w ? vr : kr) + (t * H + h) * D;
                            double Bw = fmt_B(wd);
                            for (e = 0; e < D; e += db) {
                                double A = blk_absmax(w ? v : k, t, h, H, D, e, db), sref = A / Bw;
                                float s = stored_bscale(&l, !w, h, t, e / db);
                                size_t i, nz = 0;
                                cases++;
                                for (i = e; i < e + db; i++) {
                                    float code = stored_code(&l, !w, h, t, i), want = code * s;
                                    double r0, c0, c1;
                                    if (code != 0.0f) nz++;
                                    if (qmx_test_f32_bits(y[i]) != qmx_test_f32_bits(want)) bad_bits++;
                                    if (fabs((double)y[i] - x[i]) > elem_err_s(wd, A, sf)) {
                                        if (bad_err++ < 3)
                                            printf("  %s sf %d db %u: x %g read %g A %g e(A) %g\n", dt_name(wd), sf,
                                                   (unsigned)db, (double)x[i], (double)y[i], A, elem_err_s(wd, A, sf));
                                    }
                                    if (s == 0.0f) continue;
                                    r0 = (double)x[i] / s;
                                    if (qmx_dtype_is_fp8(wd)) {
                                        c0 = q_fp8_nearest(r0 * (1 - 1e-6), wd);
                                        c1 = q_fp8_nearest(r0 * (1 + 1e-6), wd);
                                    } else {
                                        c0 = rne_sat(r0 * (1 - 1e-6), wd == QMX_INT8 ? 127 : 7);
                                        c1 = rne_sat(r0 * (1 + 1e-6), wd == QMX_INT8 ? 127 : 7);
                                    }
                                    if ((double)code != c0 && (double)code != c1) bad_code++;
                                }
                                if (A == 0.0 || (!qmx_dtype_is_fp8(wd) && nz == 0)) {
                                    /* all-zero codes: scale 0 (int); fp8: the guard's 1 */
                                    if (!qmx_dtype_is_fp8(wd) && s != 0.0f) bad_scale++;
                                    continue;
                                }
                                if (sf == 0) {
                                    if (fabs((double)s - sref) > sref * 6e-8) bad_scale++;
                                } else {   /* the smallest 16-bit value >= RN(A / B) */
                                    uint16_t hc = sf == 1 ? qmx_f32_to_f16(s) : qmx_f32_to_bf16(s);
                                    CHECK(s16_val(hc, sf) == s, "the scale is a %s value", sf == 1 ? "binary16" : "bfloat16");
                                    if (!((double)s >= sref * (1 - 6e-8) && (double)s16_val((uint16_t)(hc - 1), sf) < sref * (1 + 6e-8)))
                                        bad_scale++;
                                }
                            }
                        }
                    }
                /* ring: the last C positions, bit for bit as the linear cache */
                CHECK(qmx_kv_cache_read(&r, T - C, C, a2, b2) == QMX_OK, "ring read");
                CHECK(memcmp(a2, kr + (T - C) * H * D, 4 * C * H * D) == 0 &&
                      memcmp(b2, vr + (T - C) * H * D, 4 * C * H * D) == 0, "%s sf %d db %u: ring == linear",
                      dt_name(dt), sf, (unsigned)db);
                CHECK_EQ_INT(qmx_kv_cache_bytes_per_token(&cl),
                             H * (c_row(dt, D) + c_row(cl.v_dtype, D)) + 2 * H * (D / db) * (sf ? 2 : 4),
                             "bytes per token");
                (void)B;
            }
    CHECK(bad_bits == 0, "%u elements differ from code x stored scale", (unsigned)bad_bits);
    CHECK(bad_err == 0, "%u elements beyond e(A)", (unsigned)bad_err);
    CHECK(bad_code == 0, "%u codes not the nearest of x / s'", (unsigned)bad_code);
    CHECK(bad_scale == 0, "%u stored scales not absmax / B (rounded up to 16 bits)", (unsigned)bad_scale);
    printf("  %u blocks checked\n", (unsigned)cases);
}

/* bad block configurations: a status, nothing written */
static void test_block_errors(void) {
    enum { H = 2, D = 64 };
    static unsigned char st[32 * 1024];
    float k[2 * H * D], v[2 * H * D];
    qmx_kv_config c = QMX_ZERO_INIT, b;
    qmx_kv_cache kc;
    size_t sz = 0, i;
    QMX_TEST_CASE("block scales: bad configs and overflowing binary16 scales return statuses");
    fill_kv(k, 2, H, D, 0, 1.0f);
    fill_kv(v, 2, H, D, 0, 1.0f);
    c.capacity = 4; c.n_kv_heads = H; c.head_dim = D; c.k_axis = QMX_KV_BLOCK; c.v_axis = QMX_KV_BLOCK;
    CHECK(qmx_kv_cache_storage_size(&c, &sz) == QMX_OK, "block 32 over 64");
    {   /* the STORAGE and WORKSPACE formulas of the doc with block scales */
#define R64(x) (((x) + 63u) & ~(size_t)63u)
        size_t want, ws = 0, g = 3;
        b = c; b.capacity = 10; b.k_dtype = QMX_INT4; b.v_dtype = QMX_FP8_E5M2; b.dim_block = 32;
        b.block_scale = QMX_KV_SCALE_F16;
        want = 64 + R64(H * 10 * D / 2) + R64(H * 10 * D) + R64(2 * H * 10 * (D / 32)) + R64(2 * H * 10 * (D / 32));
        CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_OK && sz == want, "storage %u want %u", (unsigned)sz, (unsigned)want);
        b.block_scale = QMX_KV_SCALE_F32; b.v_axis = QMX_KV_DKV; b.dim_block = 64;
        want = 64 + R64(H * 10 * D / 2) + R64(H * 10 * D) + R64(4 * H * 10 * (D / 64)) + R64(4 * H * 10);
        CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_OK && sz == want, "storage %u want %u", (unsigned)sz, (unsigned)want);
        b.v_axis = QMX_KV_BLOCK;
        want = 64 + R64(4 * g * 10) + R64(4 * H * g * D) + R64(4 * g * D) + R64(g * D) + 2 * R64(4 * g) +
               2 * R64(64 * D) + 2048 + R64(132 * g) + R64(256 * g + 4 * g * D);
        CHECK(qmx_kv_attention_workspace_size(&b, H * g, &ws) == QMX_OK && ws == want, "workspace %u want %u",
              (unsigned)ws, (unsigned)want);
#undef R64
    }
    b = c; b.head_dim = 48; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "48 not a multiple of 32");
    b = c; b.dim_block = 64; b.head_dim = 96; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "96 not a multiple of 64");
    b = c; b.k_axis = QMX_KV_DKV; b.head_dim = 48;
    CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "V blocks, 48 not a multiple of 32");
    b = c; b.dim_block = 16; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "dim_block 16");
    b = c; b.dim_block = 128; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "dim_block 128");
    b = c; b.block_scale = (qmx_kv_scale_format)3; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "scale format 3");
    b = c; b.k_axis = b.v_axis = QMX_KV_DKV; b.block_scale = QMX_KV_SCALE_F16;
    CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "16-bit scales without a block axis");
    b = c; b.k_dtype = b.v_dtype = QMX_FLOAT32; b.block_scale = QMX_KV_SCALE_BF16;
    CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "16-bit scales, float32 (no scales)");
    b = c; b.k_axis = (qmx_kv_axis)4; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_ARG, "axis 4");
    b = c; b.v_axis = QMX_KV_CHANNEL; CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_ERR_SHAPE, "V channel");
    b = c; b.k_dtype = QMX_FLOAT32; b.head_dim = 48; b.v_axis = QMX_KV_DKV;
    CHECK(qmx_kv_cache_storage_size(&b, &sz) == QMX_OK, "float32 keys: a block axis means no scales");
    CHECK(qmx_kv_cache_init(&kc, &b, st, 10) == QMX_ERR_BUFFER_TOO_SMALL, "short storage");
    /* binary16 scales overflow past absmax 65504 B: QMX_ERR_OVERFLOW, nothing appended */
    b = c; b.block_scale = QMX_KV_SCALE_F16; b.v_dtype = QMX_INT4;
    CHECK(qmx_kv_cache_init(&kc, &b, st, sizeof st) == QMX_OK, "init");
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_OK, "append");
    memcpy(st + 16 * 1024, st, 16 * 1024);
    k[H * D + 5] = 65504.0f * 127.5f;   /* the largest allowed: scale 65504 exactly */
    v[H * D + 9] = 65504.0f * 7.5f * 1.0001f;
    CHECK(qmx_kv_cache_append(&kc, k, v, 2) == QMX_ERR_OVERFLOW, "a value scale past binary16");
    CHECK_EQ_INT(kc.n_tokens, 1, "nothing appended");
    CHECK(memcmp(st + 16 * 1024, st, 16 * 1024) == 0, "storage untouched");
    v[H * D + 9] = 65504.0f * 7.5f;
    CHECK(qmx_kv_cache_append(&kc, k + H * D, v + H * D, 1) == QMX_OK, "at the limit: appended");
    {
        float kk[H * D];
        CHECK(qmx_kv_cache_read(&kc, 1, 1, kk, NULL) == QMX_OK && kk[5] == 65504.0f * 127.0f,
              "scale 65504: read back %g", (double)kk[5]);
    }
    b.block_scale = QMX_KV_SCALE_BF16;   /* bfloat16 reaches FLT_MAX: no such limit */
    CHECK(qmx_kv_cache_init(&kc, &b, st, sizeof st) == QMX_OK, "init bf16");
    k[3] = 3e38f;
    CHECK(qmx_kv_cache_append(&kc, k, v, 2) == QMX_OK, "bfloat16 scales: 3e38 appends");
    b.block_scale = QMX_KV_SCALE_F16; b.rotate = 1;   /* rotate: the limit is 65504 B / d */
    CHECK(qmx_kv_cache_init(&kc, &b, st, sizeof st) == QMX_OK, "init rotate");
    for (i = 0; i < 2 * H * D; i++) { k[i] = 0.5f; v[i] = 0.25f; }
    k[1] = 65504.0f * 127.5f / 64 * 1.001f;
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_ERR_OVERFLOW, "rotated: d max|x| past the limit");
    k[1] = 65504.0f * 127.5f / 64;
    CHECK(qmx_kv_cache_append(&kc, k, v, 1) == QMX_OK, "rotated: at the limit");
}

/* Attention with block keys and / or values against float64 (on the original K/V and on the
 * dequantized cache) and the proven bound of the doc, with every format, block 32 / 64,
 * float32 / binary16 / bfloat16 scales, both query modes, ring, windows, KIVI keys with block
 * values, rotation (envelope only); every output goes into the cross-target hash. */
static void test_block_attention(void) {
    static const qmx_dtype KD[7] = {QMX_INT8, QMX_INT4, QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_INT8, QMX_FLOAT32, QMX_INT4};
    static const qmx_dtype VD[7] = {QMX_INT8, QMX_INT4, QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FLOAT32, QMX_INT4, QMX_FP8_E4M3FN};
    att_case a;
    int p, sf, dbi, fq, runs = 0;
    QMX_TEST_CASE("block scales: attention vs float64 and the proven bound");
    memset(&a, 0, sizeof a);
    /* the same runs on every target (they feed the cross-target hash): no BIG here */
    a.heads = 2; a.n_heads = 8; a.d = 64; a.cap = 80; a.n = 70; a.G = 8;
    for (p = 0; p < 7; p++)
        for (sf = 0; sf < 3; sf++)
            for (dbi = 0; dbi < 2; dbi++)
                for (fq = 0; fq < 2; fq++) {
                    a.kd = KD[p]; a.vd = VD[p]; a.kax = a.vax = QMX_KV_BLOCK;
                    a.db = dbi ? 64 : 32; a.sf = sf; a.float_query = fq;
                    a.kind = (p + sf) & 1;
                    qmx_test_case_name = "block attention (quiet)";
                    run_att(&a, 1);
                    runs++;
                }
    QMX_TEST_CASE("block scales: attention, ring / window / causal / KIVI keys / rotate / mixed axes");
    a.kd = QMX_INT4; a.vd = QMX_INT4; a.sf = 1; a.db = 32; a.float_query = 0; a.kind = 1;
    a.ring = 1; a.cap = 32; a.n = 45; run_att(&a, 1);            /* ring wrap, 64-token tile split */
    a.ring = 0; a.cap = 64; a.n = 50; a.causal = 41; a.window = 19; run_att(&a, 1);
    a.causal = 0; a.window = 0;
    a.kax = QMX_KV_CHANNEL; a.vax = QMX_KV_BLOCK; a.n = 45; run_att(&a, 1);   /* KIVI K + block V */
    a.float_query = 1; a.kd = QMX_INT8; a.vd = QMX_FP8_E5M2; run_att(&a, 1);
    a.kax = QMX_KV_BLOCK; a.vax = QMX_KV_DKV; a.kd = QMX_FP8_E4M3FN; a.vd = QMX_INT8; run_att(&a, 1);
    a.kax = QMX_KV_DKV; a.vax = QMX_KV_BLOCK; a.kd = QMX_INT4; a.vd = QMX_INT8; a.float_query = 0; run_att(&a, 1);
    a.kax = a.vax = QMX_KV_BLOCK; a.rotate = 1; a.kd = QMX_INT4; a.vd = QMX_INT4; a.sf = 2; run_att(&a, 1);
    a.ring = 1; a.cap = 32; a.kd = QMX_FP8_E4M3FN; a.vd = QMX_FP8_E4M3FN; a.db = 64; run_att(&a, 1);
    a.rotate = 0; a.ring = 0; a.cap = 64; a.heads = 1; a.n_heads = 5; a.d = 128; a.n = 30;
    a.kd = QMX_INT8; a.vd = QMX_INT4; a.sf = 0; a.db = 64; run_att(&a, 1);   /* MQA, g = 5 */
    a.n = 1; a.db = 32; run_att(&a, 1);                                      /* one token */
    printf("  %d runs over the formats; largest err / proven bound so far %.3f\n", runs + 10, worst_ratio);
}

/* clang 16 for riscv64 (RVV) auto-vectorizes loops of the models and tests below into code
 * that qemu-riscv64 fails to translate (an assertion in its decode_save_opc, SIGSEGV): they
 * are compiled without optimization there (test code only; the library is compiled as usual
 * and its paths are what the tests check) */
#if defined(__clang__) && defined(__riscv)
#  pragma clang optimize off
#endif
/* llama.cpp's quantized caches, modelled from ggml-quants.c (quantize_row_q8_0_ref,
 * quantize_row_q4_0_ref, dequantize_row_*): blocks of 32 along the row, the scale d stored as
 * binary16 (round to nearest even; codes computed with the unrounded d):
 *   q8_0: d = amax / 127, q = roundf(x * (1/d)), value q * fp16(d)
 *   q4_0: m = the element of largest |x| (signed), d = m / -8, q = min(15, (int8)(x/d + 8.5)),
 *         value (q - 8) * fp16(d) */
static void ggml_model_row(float *x, size_t n, int q4) {
    size_t b, j;
    for (b = 0; b + 32 <= n; b += 32) {
        float amax = 0.0f, mx = 0.0f, d, id, dh;
        for (j = 0; j < 32; j++)
            if (amax < fabsf(x[b + j])) { amax = fabsf(x[b + j]); mx = x[b + j]; }
        d = q4 ? mx / -8.0f : amax / 127.0f;
        id = d != 0.0f ? 1.0f / d : 0.0f;
        dh = qmx_f16_to_f32(qmx_f32_to_f16(d));
        for (j = 0; j < 32; j++) {
            float x0 = x[b + j] * id;
            if (q4) {
                int qv = (int)(int8_t)(x0 + 8.5f);
                if (qv > 15) qv = 15;
                x[b + j] = (float)(qv - 8) * dh;
            } else {
                x[b + j] = roundf(x0) * dh;
            }
        }
    }
}

/* A model of ATTENTION DECODE with BLOCK keys and / or values, written from the doc block (one
 * rounded float op per call, as model_attention): block logits (integer query: AQT int8 query,
 * exact block dots, acc + (float)I_b * s_b, * (s_q * isd); float query: acc + dot16_b * s_b,
 * * isd), softmax, block values (fp8: per token w_b = e s_b, acc + w_b v; int8 / int4: per
 * 64-token tile from lo and per block, the 15-bit weights P, exact sums, acc + (float)I * s).
 * Keys of another axis must be float32; values of another axis float32. */
/* round to nearest even to an integer, |x| < 2^22: the 1.5 * 2^23 trick, one rounding per op */
static float mf_rne(float x) { return mf_add(mf_add(x, 12582912.0f), -12582912.0f); }
static void model_block_attention(const qmx_kv_cache *c, const float *q, size_t NH, size_t lo,
                                  size_t hi, int fq, float *out) {
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, cap = n->capacity, H = n->n_kv_heads, g = NH / H, cnt = hi - lo;
    size_t db = n->dim_block, nb = d / db, h, j, t, i, b;
    float isd = qmx_kv_inv_sqrt(d), *l = (float *)malloc(4 * cnt), *row = (float *)malloc(4 * d);
    float *acc = (float *)malloc(4 * d);
    int *q8 = (int *)malloc(sizeof(int) * d);
    int iq = !fq && (n->k_dtype == QMX_INT8 || n->k_dtype == QMX_INT4);
    for (h = 0; h < H; h++)
        for (j = 0; j < g; j++) {
            const float *qj = q + (h * g + j) * d;
            float m, S, sq = 1.0f, qsc = 1.0f;
            if (iq) {   /* AQT: s = absmax / 127, x * (1 / s), clip to +-127, RNE */
                float a = 0.0f, r;
                for (i = 0; i < d; i++) if (fabsf(qj[i]) > a) a = fabsf(qj[i]);
                if (a == 0.0f) a = 1.0f;
                sq = mf_div(a, 127.0f);
                r = mf_div(1.0f, sq);
                for (i = 0; i < d; i++) {
                    float x = mf_mul(qj[i], r);
                    if (x > 127.0f) x = 127.0f;
                    if (x < -127.0f) x = -127.0f;
                    q8[i] = (int)mf_rne(x);
                }
                qsc = mf_mul(sq, isd);
            }
            for (t = 0; t < cnt; t++) {
                size_t slot = (lo + t) % cap;
                float x = 0.0f;
                if (n->k_axis == QMX_KV_BLOCK)
                    for (i = 0; i < d; i++) row[i] = stored_code(c, 1, h, slot, i);
                if (n->k_axis != QMX_KV_BLOCK) {   /* float32 keys */
                    mf_row(QMX_FLOAT32, c->k + (h * cap + slot) * c->row_k, d, row);
                    x = mf_mul(mf_sum16(qj, row, d), isd);
                } else {
                    for (b = 0; b < nb; b++) {
                        float sb = stored_bscale(c, 1, h, slot, b), f;
                        if (iq) {
                            int32_t I = 0;
                            for (i = b * db; i < b * db + db; i++) I += q8[i] * (int32_t)row[i];
                            f = mf_mul((float)I, sb);
                        } else {
                            f = mf_mul(mf_sum16(qj + b * db, row + b * db, db), sb);
                        }
                        x = mf_add(x, f);
                    }
                    x = mf_mul(x, iq ? qsc : isd);
                }
                l[t] = x;
            }
            m = l[0];
            for (t = 0; t < cnt; t++) if (l[t] > m) m = l[t];
            for (t = 0; t < cnt; t++) {
                volatile float x = l[t] - m;
                l[t] = x < -87.3365020751953125f ? 0.0f : qmx_kv_exp(x);
            }
            S = mf_sum16(l, NULL, cnt);
            for (i = 0; i < d; i++) acc[i] = 0.0f;
            if (n->v_axis != QMX_KV_BLOCK) {   /* float32 values */
                for (t = 0; t < cnt; t++) {
                    mf_row(QMX_FLOAT32, c->v + (h * cap + (lo + t) % cap) * c->row_v, d, row);
                    for (i = 0; i < d; i++) acc[i] = mf_add(acc[i], mf_mul(l[t], row[i]));
                }
            } else if (qmx_dtype_is_fp8(n->v_dtype)) {
                for (t = 0; t < cnt; t++) {
                    size_t slot = (lo + t) % cap;
                    for (i = 0; i < d; i++) {
                        float w = mf_mul(l[t], stored_bscale(c, 0, h, slot, i / db));
                        acc[i] = mf_add(acc[i], mf_mul(w, stored_code(c, 0, h, slot, i)));
                    }
                }
            } else {
                size_t t0;
                for (t0 = 0; t0 < cnt; t0 += 64) {
                    size_t nt = cnt - t0 < 64 ? cnt - t0 : 64;
                    for (b = 0; b < nb; b++) {
                        float w[64], mx = 0.0f, u = 1.0f, du = 1.0f, r, s;
                        int32_t P[64];
                        for (t = 0; t < nt; t++) {
                            w[t] = mf_mul(l[t0 + t], stored_bscale(c, 0, h, (lo + t0 + t) % cap, b));
                            if (w[t] > mx) mx = w[t];
                        }
                        if (mx > 0.0f) {
                            if (mx < 8.673617379884035e-19f) {
                                u = 18446744073709551616.0f; du = 5.421010862427522e-20f; mx = mf_mul(mx, u);
                            }
                            r = mf_div(32767.0f, mx);
                            for (t = 0; t < nt; t++) P[t] = (int32_t)mf_rne(mf_mul(mf_mul(w[t], u), r));
                            s = mf_mul(mf_div(mx, 32767.0f), du);
                        } else {
                            for (t = 0; t < nt; t++) P[t] = 0;
                            s = 0.0f;
                        }
                        for (i = b * db; i < b * db + db; i++) {
                            int32_t I = 0;
                            for (t = 0; t < nt; t++)
                                I += P[t] * (int32_t)stored_code(c, 0, h, (lo + t0 + t) % cap, i);
                            acc[i] = mf_add(acc[i], mf_mul((float)I, s));
                        }
                    }
                }
            }
            for (i = 0; i < d; i++) out[(h * g + j) * d + i] = mf_div(acc[i], S);
        }
    free(l); free(row); free(acc); free(q8);
}

/* Every path of the build under test (AVX-512 VNNI block kernel, AVX-512 / AVX2 / NEON / RVV
 * value tiles and dots, portable) against the model: the same bits, for block 32 / 64, three
 * scale formats, both query modes, ragged counts (tails of 16-token and 64-token tiles), GQA
 * 1..5, rings and windows. */
static void test_block_paths(void) {
    static const size_t DS[3] = {64, 128, 192};
    static const size_t NS[5] = {1, 15, 17, 64, 70};
    static const qmx_dtype F6[6] = {QMX_INT8, QMX_INT4, QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FLOAT32, QMX_INT8};
    size_t ci, cases = 0;
    QMX_TEST_CASE("block attention == the documented float order (model), every path of this build");
    for (ci = 0; ci < (BIG ? 90u : 24u); ci++) {
        qmx_kv_config cfg = QMX_ZERO_INIT;
        qmx_kv_attn_opts o = QMX_ZERO_INIT;
        qmx_kv_cache c;
        size_t D = DS[ci % 3], N = NS[(ci / 3) % 5], g = 1 + ci % 5, H = 1 + (ci / 5) % 2, NH = H * g;
        size_t sb = 0, wb = 0, lo, hi, i;
        float *K, *V, *q, *out, *want;
        void *st, *ws;
        int fq = (int)((ci / 2) & 1);
        cfg.head_dim = D; cfg.n_kv_heads = H; cfg.capacity = N + 4;
        cfg.k_dtype = F6[ci % 6]; cfg.v_dtype = F6[(ci / 6) % 6];
        if (cfg.k_dtype == QMX_FLOAT32 && cfg.v_dtype == QMX_FLOAT32) cfg.v_dtype = QMX_INT4;
        cfg.k_axis = cfg.v_axis = QMX_KV_BLOCK;
        cfg.dim_block = (ci & 4) ? 64 : 32;
        if (D == 192 && cfg.dim_block == 64) cfg.dim_block = 64;   /* 192 = 3 x 64 */
        cfg.block_scale = (qmx_kv_scale_format)(ci % 3);
        if ((ci / 7) % 3 == 1) { cfg.mode = QMX_KV_RING; cfg.capacity = N > 20 ? N - 7 : N; }
        K = (float *)malloc(4 * N * H * D); V = (float *)malloc(4 * N * H * D);
        q = (float *)malloc(4 * NH * D); out = (float *)malloc(4 * NH * D); want = (float *)malloc(4 * NH * D);
        fill_kv(K, N, H, D, 1, 1.0f);
        fill_kv(V, N, H, D, 2, 1.0f);
        fill_kv(q, 1, NH, D, 0, 2.0f);
        CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK && qmx_kv_attention_workspace_size(&cfg, NH, &wb) == QMX_OK,
              "sizes");
        st = malloc(sb); ws = malloc(wb + 5);
        CHECK(qmx_kv_cache_init(&c, &cfg, st, sb) == QMX_OK && qmx_kv_cache_append(&c, K, V, N) == QMX_OK, "append");
        hi = (ci / 7) % 3 == 2 && N > 3 ? N - 2 : N;
        o.causal_len = hi; o.window = (ci / 7) % 3 == 2 ? 40 : 0; o.float_query = fq;
        lo = o.window && o.window < hi ? hi - o.window : 0;
        if (N > cfg.capacity && lo < N - cfg.capacity) lo = N - cfg.capacity;
        for (i = 0; i < NH * D; i++) out[i] = -1.5f;
        CHECK(qmx_kv_attention(&c, q, NH, &o, out, (char *)ws + 5, wb) == QMX_OK, "attention");
        model_block_attention(&c, q, NH, lo, hi, fq, want);
        for (i = 0; i < NH * D; i++)
            if (qmx_test_f32_bits(out[i]) != qmx_test_f32_bits(want[i])) break;
        CHECK(i == NH * D, "case %u (K %s V %s d %u db %u sf %d n %u g %u H %u fq %d ring %d [%u,%u)) out[%u] %a want %a",
              (unsigned)ci, dt_name(cfg.k_dtype), dt_name(cfg.v_dtype), (unsigned)D, (unsigned)cfg.dim_block,
              (int)cfg.block_scale, (unsigned)N, (unsigned)g, (unsigned)H, fq, (int)cfg.mode, (unsigned)lo,
              (unsigned)hi, (unsigned)(i < NH * D ? i : 0), (double)out[i < NH * D ? i : 0],
              (double)want[i < NH * D ? i : 0]);
        cases++;
        free(K); free(V); free(q); free(out); free(want); free(st); free(ws);
    }
    printf("  %u cases, bit-exact\n", (unsigned)cases);
}

/* qmx_kv_prefill with block scales == appending and attending token by token (bit for bit) */
static void test_block_prefill(void) {
    enum { H = 2, D = 64, NH = 8, T = 21 };
    static float k[T * H * D], v[T * H * D], q[T * NH * D], o1[T * NH * D], o2[NH * D];
    int ci;
    QMX_TEST_CASE("block scales: prefill == the per-token loop");
    fill_kv(k, T, H, D, 1, 1.0f);
    fill_kv(v, T, H, D, 0, 1.0f);
    fill_kv(q, T, NH, D, 0, 1.0f);
    for (ci = 0; ci < 4; ci++) {
        qmx_kv_config c = QMX_ZERO_INIT;
        qmx_kv_cache a, b;
        qmx_kv_attn_opts o = QMX_ZERO_INIT;
        size_t sb = 0, wb = 0, t;
        void *s1, *s2, *ws;
        c.capacity = ci & 1 ? 16 : 32; c.mode = ci & 1 ? QMX_KV_RING : QMX_KV_LINEAR;
        c.n_kv_heads = H; c.head_dim = D; c.k_axis = c.v_axis = QMX_KV_BLOCK;
        c.k_dtype = ci & 2 ? QMX_FP8_E4M3FN : QMX_INT4; c.v_dtype = ci & 2 ? QMX_INT8 : QMX_INT4;
        c.block_scale = (qmx_kv_scale_format)(ci % 3); c.dim_block = ci & 2 ? 64 : 32;
        o.float_query = ci == 3;
        CHECK(qmx_kv_cache_storage_size(&c, &sb) == QMX_OK && qmx_kv_attention_workspace_size(&c, NH, &wb) == QMX_OK, "sizes");
        s1 = malloc(sb); s2 = malloc(sb); ws = malloc(wb);
        CHECK(qmx_kv_cache_init(&a, &c, s1, sb) == QMX_OK && qmx_kv_cache_init(&b, &c, s2, sb) == QMX_OK, "init");
        CHECK(qmx_kv_prefill(&a, k, v, T, q, NH, &o, o1, ws, wb) == QMX_OK, "prefill");
        for (t = 0; t < T; t++) {
            CHECK(qmx_kv_cache_append(&b, k + t * H * D, v + t * H * D, 1) == QMX_OK &&
                  qmx_kv_attention(&b, q + t * NH * D, NH, &o, o2, ws, wb) == QMX_OK, "loop");
            CHECK(memcmp(o1 + t * NH * D, o2, sizeof o2) == 0, "case %d token %u: prefill == loop", ci, (unsigned)t);
        }
        free(s1); free(s2); free(ws);
    }
}

static void rms_kv(const float *K, const float *V, const float *Kq, const float *Vq, size_t n,
                   double *r) {
    double a = 0, b = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        a += ((double)Kq[i] - K[i]) * ((double)Kq[i] - K[i]);
        b += ((double)Vq[i] - V[i]) * ((double)Vq[i] - V[i]);
    }
    r[0] = sqrt(a / (double)n);
    r[1] = sqrt(b / (double)n);
}
/* examples/kv_decode.c's data (examples/kv_synth.h, seed 7: 3 outlier key channels of 128 at
 * 8x, queries noisy copies of earlier keys), a shorter context: the decode loop's relative L2
 * error against the float32 cache for today's int4 dkv row and the grouped rows, and a model
 * of llama.cpp's q4_0 / q8_0 caches on the same data (float64 attention on the dequantized
 * model cache; errors against the same float32 run), and each cache's own RMS error of K and
 * V. Checked: every grouped int4 row below int4 dkv; the int4 / int8 block32 caches' RMS
 * errors within 15% / 6% of the q4_0 / q8_0 models'. Printed: issue 19's ratio (best grouped
 * int4 / int4 dkv; it asks <= 1/3, which these rows do not reach: see the KV doc). */
static void test_block_llama(void) {
    enum { NKV = 8, NH = 32, HD = 128 };
    const size_t ctx = BIG ? 320 : 48, steps = BIG ? 8 : 3, total = ctx + steps, per = NKV * HD;
    static const struct { const char *name; qmx_dtype k, v; qmx_kv_axis kax, vax; int rot, sf, model; } R[] = {
        {"int4 dkv (today)", QMX_INT4, QMX_INT4, QMX_KV_DKV, QMX_KV_DKV, 0, 0, 4},
        {"int4 block32 f16", QMX_INT4, QMX_INT4, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 1, 4},
        {"int4 block32 f16 + rotate", QMX_INT4, QMX_INT4, QMX_KV_BLOCK, QMX_KV_BLOCK, 1, 1, 4},
        {"int4 KIVI K + block32 V", QMX_INT4, QMX_INT4, QMX_KV_CHANNEL, QMX_KV_BLOCK, 0, 1, 4},
        {"int8 block32 f16", QMX_INT8, QMX_INT8, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 1, 8},
        {"int8 block32 bf16", QMX_INT8, QMX_INT8, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 2, 8},
        {"e4m3 block32 f16", QMX_FP8_E4M3FN, QMX_FP8_E4M3FN, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 1, 8},
    };
    enum { NR = sizeof R / sizeof R[0] };
    kv_synth rs = {7u};
    float *K = (float *)malloc(4 * total * per), *V = (float *)malloc(4 * total * per);
    float *Q = (float *)malloc(4 * total * NH * HD), *ref = (float *)malloc(4 * steps * NH * HD);
    float *out = (float *)malloc(4 * NH * HD), *Km = (float *)malloc(4 * total * per);
    float *Vm = (float *)malloc(4 * total * per);
    double *dref = (double *)malloc(8 * NH * HD), err[NR], merr[2] = {0, 0}, crms[NR][2], mrms[2][2];
    size_t i, s, f;
    QMX_TEST_CASE("block scales on kv_decode's data: vs int4 dkv and models of llama.cpp's q4_0 / q8_0");
    kv_synth_fill(&rs, total, NKV, NH, HD, K, V, Q);
    /* the float32 cache's outputs (the reference of kv_decode.c) */
    for (f = 0; f <= NR; f++) {
        qmx_kv_config cfg = QMX_ZERO_INIT;
        qmx_kv_cache c;
        size_t sb = 0, wb = 0;
        double num = 0, den = 0;
        void *st, *ws;
        cfg.capacity = (total + 31) / 32 * 32; cfg.n_kv_heads = NKV; cfg.head_dim = HD;
        if (f == 0) {
            cfg.k_dtype = cfg.v_dtype = QMX_FLOAT32;
        } else {
            cfg.k_dtype = R[f - 1].k; cfg.v_dtype = R[f - 1].v; cfg.k_axis = R[f - 1].kax;
            cfg.v_axis = R[f - 1].vax; cfg.rotate = R[f - 1].rot;
            cfg.block_scale = (qmx_kv_scale_format)R[f - 1].sf;
        }
        CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK &&
              qmx_kv_attention_workspace_size(&cfg, NH, &wb) == QMX_OK, "sizes");
        st = malloc(sb); ws = malloc(wb);
        CHECK(qmx_kv_cache_init(&c, &cfg, st, sb) == QMX_OK && qmx_kv_cache_append(&c, K, V, ctx) == QMX_OK, "prompt");
        for (s = 0; s < steps; s++) {
            size_t t = ctx + s;
            CHECK(qmx_kv_cache_append(&c, K + t * per, V + t * per, 1) == QMX_OK &&
                  qmx_kv_attention(&c, Q + t * NH * HD, NH, NULL, f ? out : ref + s * NH * HD, ws, wb) == QMX_OK,
                  "step");
            if (f)
                for (i = 0; i < NH * HD; i++) {
                    double a = (double)out[i] - ref[s * NH * HD + i];
                    num += a * a; den += (double)ref[s * NH * HD + i] * ref[s * NH * HD + i];
                }
        }
        if (f) {   /* the cache's own error: read back (unrotated) against K, V */
            err[f - 1] = sqrt(num / den);
            CHECK(qmx_kv_cache_read(&c, 0, total, Km, Vm) == QMX_OK, "read");
            rms_kv(K, V, Km, Vm, total * per, &crms[f - 1][0]);
        }
        free(st); free(ws);
    }
    /* llama.cpp models: q4_0 (f = 0) and q8_0 (f = 1) K and V, float64 attention */
    for (f = 0; f < 2; f++) {
        double num = 0, den = 0;
        memcpy(Km, K, 4 * total * per);
        memcpy(Vm, V, 4 * total * per);
        for (i = 0; i < total * NKV; i++) {
            ggml_model_row(Km + i * HD, HD, f == 0);
            ggml_model_row(Vm + i * HD, HD, f == 0);
        }
        for (s = 0; s < steps; s++) {
            size_t t = ctx + s;
            ref_attention(Km, Vm, NKV, HD, 0, t + 1, Q + t * NH * HD, NH, 1.0 / sqrt((double)HD), dref);
            for (i = 0; i < NH * HD; i++) {
                double a = dref[i] - ref[s * NH * HD + i];
                num += a * a; den += (double)ref[s * NH * HD + i] * ref[s * NH * HD + i];
            }
        }
        merr[f] = sqrt(num / den);
        rms_kv(K, V, Km, Vm, total * per, &mrms[f][0]);
    }
    printf("  context %u + %u decode steps, 32/8 heads of 128; relative L2 error vs the float32 cache:\n",
           (unsigned)ctx, (unsigned)steps);
    printf("    %-28s %9s %9s %9s   (cache RMS error of K, V; attention error / the model's)\n", "", "attention", "K rms", "V rms");
    printf("    %-28s %9.3e %9.3e %9.3e\n", "llama.cpp q4_0 (model)", merr[0], mrms[0][0], mrms[0][1]);
    printf("    %-28s %9.3e %9.3e %9.3e\n", "llama.cpp q8_0 (model)", merr[1], mrms[1][0], mrms[1][1]);
    for (f = 0; f < NR; f++) {
        int m = R[f].model == 4 ? 0 : 1;
        printf("    %-28s %9.3e %9.3e %9.3e   %.2f x q%d_0\n", R[f].name, err[f], crms[f][0], crms[f][1],
               err[f] / merr[m], R[f].model);
    }
    {
        double best = err[1];
        for (f = 2; f < 4; f++) if (err[f] < best) best = err[f];
        printf("    best grouped int4 / int4 dkv = %.3f (issue 19 asks <= 1/3: not met, see the KV doc)\n",
               best / err[0]);
        for (f = 1; f < 4; f++)
            CHECK(err[f] < err[0], "%s: error %g not below int4 dkv's %g", R[f].name, err[f], err[0]);
    }
    /* the same blocks of 32 with binary16 scales as llama.cpp's caches: the cache error within a
     * few % of the model's (int4: qmx's symmetric B = 7.5 against q4_0's exact signed max, which
     * uses the 16th level: measured ~11%; int8: B = 127.5 puts each block's largest element at
     * the saturation edge, error s/2, where q8_0's 127 keeps it exact: measured ~3.5%) */
    CHECK(crms[1][0] <= 1.15 * mrms[0][0] && crms[1][1] <= 1.15 * mrms[0][1],
          "int4 block32 f16 cache rms %g / %g vs q4_0 model %g / %g", crms[1][0], crms[1][1], mrms[0][0], mrms[0][1]);
    CHECK(crms[4][0] <= 1.06 * mrms[1][0] && crms[4][1] <= 1.06 * mrms[1][1] &&
          crms[5][0] <= 1.06 * mrms[1][0] && crms[5][1] <= 1.06 * mrms[1][1],
          "int8 block32 cache rms %g %g (f16) %g %g (bf16) vs q8_0 model %g %g", crms[4][0], crms[4][1],
          crms[5][0], crms[5][1], mrms[1][0], mrms[1][1]);
    free(K); free(V); free(Q); free(ref); free(out); free(Km); free(Vm); free(dref);
}

#if defined(__clang__) && defined(__riscv)
#  pragma clang optimize on
#endif

/* The hash of every output bit above, computed on x86-64 (AVX-512 build); any target or build
 * that differs in one bit fails here. */
#define KV_HASH 0xd055c7e9u

/* ---- tiled prefill: bit for bit the per-token loop ----
 * qmx_kv_prefill (tiled where the config allows it, see PREFILL) against append + one
 * qmx_kv_attention per token on a second cache: the same output bits (memcmp), the same
 * storage bytes and token count, over every format pair, both axes, both query modes, GQA
 * groups 1 / 4 / 8, head_dim 64 / 128 / 96, prompts of 1, 2, 17, 65, 130 tokens onto an empty
 * cache and onto one holding 37 tokens, windows that keep the tiled path and windows that
 * stop it midway, rings with and without eviction inside the block, KIVI keys and rotation
 * (the per-token fallback), and workspaces of the minimum (decode) size, the full size and in
 * between. The outputs of the cases every target runs (PF_CASES) also go into a hash of their
 * own, checked against the x86-64 host's value (PF_HASH). */
static uint32_t pf_hash;
typedef struct pf_case {
    qmx_dtype kd, vd;
    qmx_kv_axis kax, vax;
    size_t g, d, cap, n0, n, window;
    int ring, fq, rot, ws_kind;
    int hashed;    /* one of the cases every target runs (see PF_CASES) */
} pf_case;

static unsigned char *al64(unsigned char *p) { return p + ((64u - ((size_t)(uintptr_t)p & 63u)) & 63u); }

static void run_pf(const pf_case *p) {
    enum { H = 2 };
    size_t nh = H * p->g, d = p->d, per = H * d, qper = nh * d, sb = 0, wmin = 0, wfull = 0, wsz, t;
    qmx_kv_config c = QMX_ZERO_INIT;
    qmx_kv_cache a, b;
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    unsigned char *sa0, *sb0, *ws0, *sta, *stb;
    float *K, *V, *Q, *o1, *o2;
    qmx_status st;
    uint32_t h0;
    int ok = 1;
    c.capacity = p->cap; c.n_kv_heads = H; c.head_dim = d;
    c.k_dtype = p->kd; c.v_dtype = p->vd; c.k_axis = p->kax; c.v_axis = p->vax;
    c.mode = p->ring ? QMX_KV_RING : QMX_KV_LINEAR;
    c.rotate = p->rot;
    o.window = p->window;
    o.float_query = p->fq;
    CHECK(qmx_kv_cache_storage_size(&c, &sb) == QMX_OK && qmx_kv_attention_workspace_size(&c, nh, &wmin) == QMX_OK &&
          qmx_kv_prefill_workspace_size(&c, nh, p->n, &wfull) == QMX_OK, "sizes");
    CHECK(wfull >= wmin, "the full prefill workspace is at least the decode's");
    wsz = p->ws_kind == 0 ? wmin : p->ws_kind == 2 ? wfull : wmin + (wfull - wmin) / 2;
    sa0 = (unsigned char *)malloc(sb + 64); sb0 = (unsigned char *)malloc(sb + 64);
    ws0 = (unsigned char *)malloc(wfull + 64);
    K = (float *)malloc(4 * (p->n0 + p->n) * per); V = (float *)malloc(4 * (p->n0 + p->n) * per);
    Q = (float *)malloc(4 * p->n * qper); o1 = (float *)malloc(4 * p->n * qper); o2 = (float *)malloc(4 * p->n * qper);
    if (!sa0 || !sb0 || !ws0 || !K || !V || !Q || !o1 || !o2) { CHECK(0, "malloc"); return; }
    sta = al64(sa0); stb = al64(sb0);
    memset(sta, 0xA5, sb); memset(stb, 0xA5, sb);
    fill_kv(K, p->n0 + p->n, H, d, 1, 1.0f);
    fill_kv(V, p->n0 + p->n, H, d, 0, 1.0f);
    fill_kv(Q, p->n, nh, d, 0, 2.0f);
    for (t = 0; t < p->n * qper; t++) { o1[t] = -7.0f; o2[t] = -7.0f; }
    CHECK(qmx_kv_cache_init(&a, &c, sta, sb) == QMX_OK && qmx_kv_cache_init(&b, &c, stb, sb) == QMX_OK, "init");
    if (p->n0) CHECK(qmx_kv_cache_append(&a, K, V, p->n0) == QMX_OK && qmx_kv_cache_append(&b, K, V, p->n0) == QMX_OK, "first tokens");
    st = qmx_kv_prefill(&a, K + p->n0 * per, V + p->n0 * per, p->n, Q, nh, &o, o1, ws0, wsz);
    for (t = 0; t < p->n; t++) {
        qmx_status s2;
        CHECK(qmx_kv_cache_append(&b, K + (p->n0 + t) * per, V + (p->n0 + t) * per, 1) == QMX_OK, "append");
        s2 = qmx_kv_attention(&b, Q + t * qper, nh, &o, o2 + t * qper, ws0 + 1, wmin);
        if (s2 != QMX_OK) { ok = s2 == st; break; }
    }
    CHECK(ok && st == QMX_OK, "k %s v %s axes %d/%d g %u d %u n0 %u n %u window %u ring %d fq %d rot %d ws %d: prefill ok (%d)",
          dt_name(p->kd), dt_name(p->vd), (int)p->kax, (int)p->vax, (unsigned)p->g, (unsigned)d, (unsigned)p->n0,
          (unsigned)p->n, (unsigned)p->window, p->ring, p->fq, p->rot, p->ws_kind, (int)st);
    CHECK(memcmp(o1, o2, 4 * p->n * qper) == 0,
          "k %s v %s axes %d/%d g %u d %u n0 %u n %u window %u ring %d fq %d rot %d ws %d: the per-token loop's output bits",
          dt_name(p->kd), dt_name(p->vd), (int)p->kax, (int)p->vax, (unsigned)p->g, (unsigned)d, (unsigned)p->n0,
          (unsigned)p->n, (unsigned)p->window, p->ring, p->fq, p->rot, p->ws_kind);
    CHECK(a.n_tokens == b.n_tokens && memcmp(sta, stb, sb) == 0, "the same cache storage and token count");
    if (p->hashed) {
        h0 = hash_state; hash_state = pf_hash;
        hash_floats(o1, p->n * qper);
        pf_hash = hash_state; hash_state = h0;
    }
    free(sa0); free(sb0); free(ws0); free(K); free(V); free(Q); free(o1); free(o2);
}

/* All 140 cases natively on x86-64. Under emulation and valgrind, where they took most of this
 * program's time: the 28 of cases 0-34 with prompts of up to 65 tokens (every format pair, two
 * query blocks at most), whose outputs' hash must be the x86-64 host's (PF_HASH). */
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(QMX_TEST_VALGRIND)
#  define PF_CASES 140
#else
#  define PF_CASES 35
#endif
#define PF_IN_HASH(ci, n) ((ci) < 35 && (n) <= 65)
#define PF_HASH 0x0dc564f3u
static void test_prefill_tiled(void) {
    static const qmx_dtype PAIRS[7][2] = {{QMX_INT8, QMX_INT8}, {QMX_FLOAT32, QMX_FLOAT32}, {QMX_INT4, QMX_INT4},
        {QMX_FP8_E4M3FN, QMX_FP8_E5M2}, {QMX_INT8, QMX_FLOAT32}, {QMX_FLOAT32, QMX_INT8}, {QMX_FP8_E5M2, QMX_INT4}};
    static const size_t NS[5] = {1, 2, 17, 65, 130}, DS[3] = {64, 128, 96}, GS[3] = {1, 4, 8};
    size_t ci, nc = PF_CASES;
    QMX_TEST_CASE("tiled prefill == append + qmx_kv_attention per token, bit for bit");
    pf_hash = 2166136261u;
    for (ci = 0; ci < nc; ci++) {
        pf_case p;
        memset(&p, 0, sizeof p);
        p.kd = PAIRS[ci % 7][0]; p.vd = PAIRS[ci % 7][1];
        p.n = NS[ci % 5];
        p.d = DS[(ci / 5) % 3];
        p.g = GS[(ci / 7) % 3];
        p.n0 = (ci / 3) % 2 ? 37 : 0;
        p.kax = ci % 4 == 1 ? QMX_KV_DKV : QMX_KV_HEADS_AND_DKV;
        p.vax = ci % 6 == 2 ? QMX_KV_DKV : QMX_KV_HEADS_AND_DKV;
        p.fq = ci % 9 == 4;
        p.ws_kind = (int)((ci / 2) % 3);
        p.cap = 192;
        if (ci % 11 == 3) p.window = 1000;                 /* covers every row: tiled */
        if (ci % 11 == 7) p.window = 50;                   /* tiled, then per token */
        if (ci % 13 == 5) p.ring = 1;                      /* no eviction: tiled */
        if (ci % 13 == 9) { p.ring = 1; p.cap = 64; }      /* evicts inside blocks */
        if (ci % 8 == 6 && p.d != 96) p.rot = 1;
        if (ci % 10 == 8 && p.kd != QMX_FLOAT32) p.kax = QMX_KV_CHANNEL;   /* per token */
        if (p.ring && p.window > p.cap) p.window = 0;
        if (!p.ring && p.n0 + p.n > p.cap) p.n = p.cap - p.n0;
        p.hashed = PF_IN_HASH(ci, p.n);
        if (PF_CASES == 35 && !p.hashed) continue;
        qmx_test_seed(977u + 31u * (uint32_t)ci);   /* each case's data of its own */
        run_pf(&p);
    }
    printf("  tiled prefill output hash 0x%08x (x86-64 host: 0x%08x)\n", (unsigned)pf_hash, (unsigned)PF_HASH);
    CHECK(pf_hash == PF_HASH, "tiled prefill output bits differ from the x86-64 host's: 0x%08x", (unsigned)pf_hash);
}

/* The tiled path stopped by an overflowing logit inside a block: the same contract as the
 * per-token loop (tokens before the failing one appended with their outputs written, the
 * failing one appended with its output untouched, the later ones neither); the earliest
 * failing token counts, whichever KV head it fails in. The storage slots past n_tokens may
 * hold the block's later tokens (see PREFILL: not part of the cache). NaN / Inf inputs:
 * nothing appended, nothing written. */
static void test_prefill_tiled_midway(void) {
    enum { H = 2, D = 64, NH = 8, N0 = 5, T = 20, CAP = 64 };
    static float k[(N0 + T) * H * D], v[(N0 + T) * H * D], q[T * NH * D], out[T * NH * D], o2[NH * D];
    static float a1[(N0 + T) * H * D], b1[(N0 + T) * H * D], a2[(N0 + T) * H * D], b2[(N0 + T) * H * D];
    unsigned char *s1, *s2, *w1;
    size_t sb = 0, wb = 0, per = H * D, qper = NH * D, i, t;
    int fq, kind;
    QMX_TEST_CASE("tiled prefill failing midway leaves what the per-token loop leaves");
    for (kind = 0; kind < 3; kind++)
        for (fq = 0; fq < 2; fq++) {
            qmx_kv_config c = QMX_ZERO_INIT;
            qmx_kv_cache a, b;
            qmx_kv_attn_opts o = QMX_ZERO_INIT;
            size_t F = kind == 2 ? 2 : 11;   /* the earliest failing token */
            c.capacity = CAP; c.n_kv_heads = H; c.head_dim = D;
            c.k_dtype = kind == 1 ? QMX_FLOAT32 : QMX_INT8;
            c.v_dtype = kind == 1 ? QMX_FLOAT32 : QMX_INT8;
            o.float_query = fq;
            CHECK(qmx_kv_cache_storage_size(&c, &sb) == QMX_OK && qmx_kv_prefill_workspace_size(&c, NH, T, &wb) == QMX_OK, "sizes");
            s1 = (unsigned char *)malloc(sb); s2 = (unsigned char *)malloc(sb); w1 = (unsigned char *)malloc(wb);
            if (!s1 || !s2 || !w1) { CHECK(0, "malloc"); return; }
            fill_kv(k, N0 + T, H, D, 0, 1.0f);
            fill_kv(v, N0 + T, H, D, 0, 1.0f);
            fill_kv(q, T, NH, D, 0, 1.0f);
            /* token 14 fails in KV head 0 (query head 0), token F in KV head 1 (query head 7);
             * the other query heads of those groups hold 0 in that element */
            for (i = 0; i < 4; i++) {   /* (every later query of group 1 sees key F) */
                q[14 * qper + i * D + 3] = 0.0f;
                for (t = 0; t < T; t++) q[t * qper + (4 + i) * D + 7] = 0.0f;
            }
            k[(N0 + 14) * per + 3] = 3e38f;
            q[14 * qper + 3] = 3e38f;
            k[(N0 + F) * per + D + 7] = -3e38f;
            q[F * qper + 7 * D + 7] = -3e38f;
            for (i = 0; i < T * qper; i++) out[i] = -7.0f;
            CHECK(qmx_kv_cache_init(&a, &c, s1, sb) == QMX_OK && qmx_kv_cache_init(&b, &c, s2, sb) == QMX_OK, "init");
            CHECK(qmx_kv_cache_append(&a, k, v, N0) == QMX_OK && qmx_kv_cache_append(&b, k, v, N0) == QMX_OK, "first tokens");
            CHECK(qmx_kv_prefill(&a, k + N0 * per, v + N0 * per, T, q, NH, &o, out, w1, wb) == QMX_ERR_NONFINITE,
                  "kind %d fq %d: prefill stops at the overflowing logit", kind, fq);
            CHECK_EQ_INT(a.n_tokens, N0 + F + 1, "the tokens up to the earliest failing one appended");
            for (t = 0; t <= F; t++) {
                qmx_status st;
                CHECK(qmx_kv_cache_append(&b, k + (N0 + t) * per, v + (N0 + t) * per, 1) == QMX_OK, "append");
                st = qmx_kv_attention(&b, q + t * qper, NH, &o, o2, w1, wb);
                if (t < F)
                    CHECK(st == QMX_OK && memcmp(out + t * qper, o2, sizeof o2) == 0, "token %u: the loop's bits", (unsigned)t);
                else
                    CHECK(st == QMX_ERR_NONFINITE, "the loop fails at the same token");
            }
            for (i = F * qper; i < T * qper; i++)
                if (out[i] != -7.0f) break;
            CHECK(i == T * qper, "outputs of the failing token and the later ones untouched");
            CHECK(qmx_kv_cache_read(&a, 0, N0 + F + 1, a1, b1) == QMX_OK && qmx_kv_cache_read(&b, 0, N0 + F + 1, a2, b2) == QMX_OK &&
                  memcmp(a1, a2, 4 * (N0 + F + 1) * per) == 0 && memcmp(b1, b2, 4 * (N0 + F + 1) * per) == 0,
                  "the cache holds what the loop's holds");
            /* resume after fixing the failing tokens: the rest prefilled, the same bits */
            q[F * qper + 7 * D + 7] = 0.5f; q[14 * qper + 3] = 0.5f;
            CHECK(qmx_kv_attention(&a, q + F * qper, NH, &o, out + F * qper, w1, wb) == QMX_OK, "redo the failing token");
            k[(N0 + 14) * per + 3] = 1.0f;
            CHECK(qmx_kv_prefill(&a, k + (N0 + F + 1) * per, v + (N0 + F + 1) * per, T - F - 1, q + (F + 1) * qper, NH, &o,
                                 out + (F + 1) * qper, w1, wb) == QMX_OK, "prefill the rest");
            CHECK(qmx_kv_attention(&b, q + F * qper, NH, &o, o2, w1, wb) == QMX_OK && memcmp(out + F * qper, o2, sizeof o2) == 0,
                  "the redone token's bits");
            for (t = F + 1; t < T; t++) {
                CHECK(qmx_kv_cache_append(&b, k + (N0 + t) * per, v + (N0 + t) * per, 1) == QMX_OK &&
                      qmx_kv_attention(&b, q + t * qper, NH, &o, o2, w1, wb) == QMX_OK &&
                      memcmp(out + t * qper, o2, sizeof o2) == 0, "resumed token %u: the loop's bits", (unsigned)t);
            }
            /* NaN / Inf in the last token's query or value: nothing appended or written */
            {
                size_t n0 = 0;
                float keep = out[0];
                CHECK(qmx_kv_cache_reset(&a) == QMX_OK, "reset");
                q[(T - 1) * qper + 5] = qmx_test_bits_f32(kind == 0 ? 0x7FC00000u : 0x7F800000u);
                CHECK(qmx_kv_prefill(&a, k, v, T, q, NH, &o, out, w1, wb) == QMX_ERR_NONFINITE && a.n_tokens == n0 &&
                      out[0] == keep, "non-finite query: nothing appended or written");
                q[(T - 1) * qper + 5] = 0.0f;
                v[(T - 1) * per + 9] = qmx_test_bits_f32(kind == 0 ? 0x7FC00000u : 0xFF800000u);
                CHECK(qmx_kv_prefill(&a, k, v, T, q, NH, &o, out, w1, wb) == QMX_ERR_NONFINITE && a.n_tokens == n0 &&
                      out[0] == keep, "non-finite value: nothing appended or written");
            }
            free(s1); free(s2); free(w1);
        }
}

/* ---- token split (opts.token_split, ATTENTION DECODE, TOKEN SPLIT) ----
 * Per configuration (every K / V format and axis family, channel keys, BLOCK, rotate, float
 * query, causal_len, window, a wrapped ring, d not a multiple of 16, MQA) and T in {64, 128,
 * one split >= the visible length}: (1) one split gives the token_split = 0 bits; (2) every
 * task's record (split_run) is the unsplit call restricted to its split: acc_s / S_s equals
 * qmx_kv_attention over causal_len = the split's end, window = its length, bit for bit; (3) the
 * combine against a model of its documented float order (volatile float steps), bit for bit,
 * and the serial call equal to split_run + split_combine; (4) the output against float64 on the
 * dequantized cache, within test_attention_formats' envelopes; (5) a hash of every output,
 * the same on every target. */
#if BIG
#  define KV_SPLIT_HASH 0x96ff4c07u
#else
#  define KV_SPLIT_HASH 0x94486665u   /* the smaller sizes (the x86-64 host with QMX_TEST_VALGRIND) */
#endif
typedef struct split_case {
    qmx_dtype kd, vd;
    qmx_kv_axis kax, vax;
    size_t heads, n_heads, d, cap, n, G, causal, window, db;
    int float_query, ring, rotate, sf;
} split_case;

static void split_run_case(const split_case *a, uint32_t *hash, double worst[3]) {
    size_t H = a->heads, D = a->d, NH = a->n_heads, N = a->n, per = H * D, g = NH / H;
    size_t sb = 0, wb = 0, tws = 0, lo, hi, vis, k;
    const size_t Ts[3] = {64, 128, 4096};
    qmx_kv_config cfg = QMX_ZERO_INIT;
    qmx_kv_attn_opts oz = QMX_ZERO_INIT;
    qmx_kv_cache c;
    float *K = (float *)calloc(N * per, 4), *V = (float *)calloc(N * per, 4);
    float *Kd = (float *)calloc(N * per, 4), *Vd = (float *)calloc(N * per, 4);
    float *q = (float *)calloc(NH * D, 4), *o0 = (float *)calloc(NH * D, 4);
    float *oT = (float *)calloc(NH * D, 4), *oc = (float *)calloc(NH * D, 4);
    float *om = (float *)calloc(NH * D, 4), *osub = (float *)calloc(NH * D, 4);
    double *ref2 = (double *)malloc(8 * NH * D), vmax;
    double *ref = (double *)malloc(8 * NH * D), *bd = (double *)malloc(8 * NH * D);
    unsigned char *st = NULL, *ws = NULL;
    float *part = NULL;
    cfg.capacity = a->cap; cfg.n_kv_heads = H; cfg.head_dim = D;
    cfg.k_dtype = a->kd; cfg.v_dtype = a->vd; cfg.k_axis = a->kax; cfg.v_axis = a->vax;
    cfg.channel_block = a->G; cfg.mode = a->ring ? QMX_KV_RING : QMX_KV_LINEAR;
    cfg.rotate = a->rotate; cfg.dim_block = a->db; cfg.block_scale = (qmx_kv_scale_format)a->sf;
    oz.causal_len = a->causal; oz.window = a->window; oz.float_query = a->float_query;
    {   /* the largest workspace any call below needs */
        qmx_kv_attn_opts o = oz;
        size_t b = 0;
        CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK &&
                  qmx_kv_attention_workspace_size(&cfg, NH, &wb) == QMX_OK &&
                  qmx_kv_attention_task_workspace_size(&cfg, NH, &tws) == QMX_OK, "split: sizes");
        o.token_split = 64;
        CHECK(qmx_kv_attention_split_workspace_size(&cfg, NH, &o, &b) == QMX_OK, "split: ws size");
        if (b > wb) wb = b;
    }
    st = (unsigned char *)malloc(sb + 1); ws = (unsigned char *)malloc(wb + 1);
    part = (float *)malloc(4 * (N / 64 + 1) * H * g * (D + 2) + 4);
    if (!K || !V || !Kd || !Vd || !q || !o0 || !oT || !oc || !om || !osub || !ref2 || !st ||
        !ws || !part || !ref || !bd) {
        CHECK(0, "malloc");
        goto done;
    }
    CHECK(qmx_kv_cache_init(&c, &cfg, st + 1, sb) == QMX_OK, "split: init");
    fill_kv(K, N, H, D, 1, 1.0f);
    fill_kv(V, N, H, D, 0, 1.0f);
    fill_kv(q, 1, NH, D, 0, 2.0f);
    CHECK(qmx_kv_cache_append(&c, K, V, N) == QMX_OK, "split: append");
    hi = a->causal ? a->causal : N;
    lo = a->window && a->window < hi ? hi - a->window : 0;
    if (a->ring && N > a->cap && lo < N - a->cap) lo = N - a->cap;
    vis = hi - lo;
    CHECK(qmx_kv_attention(&c, q, NH, &oz, o0, ws + 1, wb) == QMX_OK, "split: token_split 0");
    CHECK(qmx_kv_cache_read(&c, lo, vis, Kd + lo * per, Vd + lo * per) == QMX_OK, "split: read");
    ref_attention(Kd, Vd, H, D, lo, hi, q, NH, 1.0 / sqrt((double)D), ref2);
    ref_attention(K, V, H, D, lo, hi, q, NH, 1.0 / sqrt((double)D), ref);
    vmax = max_abs_f(V + lo * per, vis * per);
    for (k = 0; k < 3; k++) {
        qmx_kv_attn_opts o = oz;
        size_t T = Ts[k], ns = vis / T + (vis % T != 0), nt = 0, pb = 0, t, j, i, s, h;
        double e2, b2;
        qmx_status s1;
        o.token_split = T;
        memset(oT, 0xA5, NH * D * 4);
        s1 = qmx_kv_attention(&c, q, NH, &o, oT, ws + 1, wb);
        CHECK_EQ_INT(s1, QMX_OK, "split T %u: status", (unsigned)T);
        if (s1 != QMX_OK) continue;
        hash_state = *hash;
        hash_floats(oT, NH * D);
        *hash = hash_state;
        if (ns == 1)   /* f = qmx_kv_exp(0) = 1: the unsplit bits */
            CHECK(memcmp(oT, o0, NH * D * 4) == 0, "K %s V %s axis %d/%d T %u >= %u visible: not "
                  "the token_split 0 bits", dt_name(a->kd), dt_name(a->vd), a->kax, a->vax,
                  (unsigned)T, (unsigned)vis);
        /* (4) against float64 on the dequantized cache: test_attention_formats' envelopes */
        e2 = max_err(oT, ref2, NH * D) / vmax;
        b2 = a->float_query || a->kd == QMX_FLOAT32 || qmx_dtype_is_fp8(a->kd)
                 ? ((a->vd == QMX_INT8 || a->vd == QMX_INT4) ? 1e-4 : 1e-5) : 0.015;
        CHECK(e2 <= b2, "K %s V %s axis %d/%d T %u (%u splits): error %g vs float64 of the "
              "dequantized cache > %g", dt_name(a->kd), dt_name(a->vd), a->kax, a->vax,
              (unsigned)T, (unsigned)ns, e2, b2);
        if ((a->float_query || a->kd == QMX_FLOAT32 || qmx_dtype_is_fp8(a->kd)) && e2 > worst[0])
            worst[0] = e2;
        if (!a->rotate) {   /* MEASURED against ERROR BOUNDS (a), proven for token_split 0 only */
            bnd_case b;
            double r1, r2;
            memset(&b, 0, sizeof b);
            b.K = K; b.V = V; b.Vq = V; b.q = q; b.heads = H; b.n_heads = NH; b.d = D;
            b.n_tok = N; b.lo = lo; b.hi = hi; b.G = a->G; b.kd = a->kd; b.vd = a->vd;
            b.kax = a->kax; b.vax = a->vax; b.int_q = !a->float_query; b.db = a->db; b.sf = a->sf;
            proven_bound(&b, bd);
            r1 = bound_ratio(oT, ref, bd, NH * D);
            b.K = Kd; b.V = Vd; b.deq = 1;
            proven_bound(&b, bd);
            r2 = bound_ratio(oT, ref2, bd, NH * D);
            CHECK(r1 <= 1.0 && r2 <= 1.0, "K %s V %s axis %d/%d T %u: err / the token_split 0 "
                  "bound %g (vs float64), %g (vs the dequantized cache)", dt_name(a->kd),
                  dt_name(a->vd), a->kax, a->vax, (unsigned)T, r1, r2);
            /* the arithmetic part (vs the dequantized cache), split and unsplit */
            if (ns > 1 && r2 > worst[1]) worst[1] = r2;
            r1 = bound_ratio(o0, ref2, bd, NH * D);
            if (k == 0 && r1 > worst[2]) worst[2] = r1;
        }
        /* (2) the records */
        CHECK(qmx_kv_attention_split_tasks(&c, NH, &o, &nt) == QMX_OK && nt == H * ns &&
                  qmx_kv_attention_split_partials_size(&c, NH, &o, &pb) == QMX_OK &&
                  pb == nt * g * (D + 2) * 4, "split T %u: tasks %u", (unsigned)T, (unsigned)nt);
        CHECK(qmx_kv_attention_split_run(&c, q, NH, &o, part, pb, 0, nt, ws + 3, tws) == QMX_OK,
              "split T %u: run", (unsigned)T);
        for (t = 0; t < nt && !a->rotate; t++) {
            const float *r = part + t * g * (D + 2);
            size_t sa, sbnd;
            qmx_kv_attn_opts os = oz;
            h = t / ns; s = t % ns;
            sa = lo + s * T; sbnd = sa + T < hi ? sa + T : hi;
            os.causal_len = sbnd; os.window = sbnd - sa;
            CHECK(qmx_kv_attention(&c, q, NH, &os, osub, ws + 1, wb) == QMX_OK, "split: sub-range");
            for (j = 0; j < g; j++) {
                int same = r[g + j] >= 1.0f;
                for (i = 0; i < D; i++)
                    same &= qmx_test_f32_bits(mf_div(r[2 * g + j * D + i], r[g + j])) ==
                            qmx_test_f32_bits(osub[(h * g + j) * D + i]);
                CHECK(same, "K %s V %s axis %d/%d T %u: record of task %u head %u is not the "
                      "unsplit call over [%u, %u)", dt_name(a->kd), dt_name(a->vd), a->kax, a->vax,
                      (unsigned)T, (unsigned)t, (unsigned)j, (unsigned)sa, (unsigned)sbnd);
            }
        }
        /* (3) the combine: the library's, the model's, the serial call's */
        memset(oc, 0xA5, NH * D * 4);
        CHECK(qmx_kv_attention_split_combine(&c, NH, &o, part, pb, oc) == QMX_OK &&
                  memcmp(oc, oT, NH * D * 4) == 0,
              "split T %u: split_run + split_combine differ from the serial call", (unsigned)T);
        for (h = 0; h < H && !a->rotate; h++)
            for (j = 0; j < g; j++) {
                const float *r0 = part + h * ns * g * (D + 2);
                float m = r0[j], S = 0.0f, *acc = om + (h * g + j) * D;
                for (s = 1; s < ns; s++)
                    if (r0[s * g * (D + 2) + j] > m) m = r0[s * g * (D + 2) + j];
                for (i = 0; i < D; i++) acc[i] = 0.0f;
                for (s = 0; s < ns; s++) {   /* in split order */
                    const float *r = r0 + s * g * (D + 2);
                    float f = qmx_kv_exp(mf_add(r[j], -m));
                    S = mf_add(S, mf_mul(r[g + j], f));
                    for (i = 0; i < D; i++) acc[i] = mf_add(acc[i], mf_mul(r[2 * g + j * D + i], f));
                }
                for (i = 0; i < D; i++) acc[i] = mf_div(acc[i], S);
            }
        if (!a->rotate)
            CHECK(memcmp(om, oT, NH * D * 4) == 0, "K %s V %s axis %d/%d T %u (%u splits): the "
                  "combine differs from its model (split order, f = exp(m_s - m), S + S_s f, acc + "
                  "acc_s f, acc / S)", dt_name(a->kd), dt_name(a->vd), a->kax, a->vax, (unsigned)T,
                  (unsigned)ns);
    }
done:
    free(K); free(V); free(Kd); free(Vd); free(q); free(o0); free(oT); free(oc); free(om);
    free(osub); free(ref2); free(st); free(ws); free(part); free(ref); free(bd);
}

static void test_token_split(void) {
    const size_t D = BIG ? 64 : 32, N = BIG ? 300 : 150;
    split_case L[14];
    size_t n = 0, i;
    uint32_t h = 2166136261u;
    double worst[3] = {0, 0, 0};
    QMX_TEST_CASE("token_split: one split = the unsplit bits, records, combine model, vs float64");
    qmx_test_seed(0x5B117u);   /* the same data on every target (the tests before draw per target) */
    CHECK(qmx_test_f32_bits(qmx_kv_exp(0.0f)) == 0x3F800000u, "qmx_kv_exp(0) = %.9g, not 1",
          (double)qmx_kv_exp(0.0f));
    memset(L, 0, sizeof L);
    for (i = 0; i < 14; i++) {
        L[i].heads = 2; L[i].n_heads = 6; L[i].d = D; L[i].cap = N + 5; L[i].n = N;
    }
    L[n].kd = QMX_INT8; L[n].vd = QMX_INT8; n++;
    L[n].kd = QMX_INT4; L[n].vd = QMX_INT4; L[n].kax = L[n].vax = QMX_KV_DKV; n++;
    L[n].kd = QMX_FP8_E4M3FN; L[n].vd = QMX_FP8_E5M2; L[n].kax = QMX_KV_DKV; n++;
    L[n].kd = QMX_FLOAT32; L[n].vd = QMX_FLOAT32; n++;
    L[n].kd = QMX_INT8; L[n].vd = QMX_INT4; L[n].kax = QMX_KV_CHANNEL; L[n].G = 32;   /* KIVI */
    L[n].vax = QMX_KV_DKV; L[n].cap = (N + 31) / 32 * 32; n++;
    L[n] = L[n - 1]; L[n].float_query = 1; L[n].vd = QMX_FP8_E4M3FN; L[n].G = 16; n++;
    L[n].kd = QMX_INT8; L[n].vd = QMX_INT8; L[n].kax = L[n].vax = QMX_KV_BLOCK;
    L[n].sf = QMX_KV_SCALE_F16; n++;
    L[n].kd = QMX_INT4; L[n].vd = QMX_FP8_E4M3FN; L[n].kax = L[n].vax = QMX_KV_BLOCK;
    L[n].db = 64; L[n].d = 64; L[n].sf = QMX_KV_SCALE_BF16; L[n].float_query = 1; n++;
    L[n].kd = QMX_INT8; L[n].vd = QMX_INT4; L[n].kax = L[n].vax = QMX_KV_DKV; L[n].rotate = 1; n++;
    L[n].kd = QMX_INT8; L[n].vd = QMX_FP8_E5M2; L[n].ring = 1; L[n].cap = 160;   /* wrapped */
    L[n].n = N + 70; n++;
    L[n].kd = QMX_INT4; L[n].vd = QMX_INT8; L[n].float_query = 1; L[n].causal = N - 20;
    L[n].window = 140; n++;
    L[n].kd = QMX_INT8; L[n].vd = QMX_FLOAT32; L[n].heads = 1; L[n].n_heads = 5; L[n].d = 20;
    n++;   /* MQA, d not a multiple of 16 */
    for (i = 0; i < n; i++) split_run_case(&L[i], &h, worst);
    printf("  token_split outputs hash 0x%08x (x86-64 host: 0x%08x); largest error vs float64 of "
           "the dequantized cache, float query: %.2e\n", (unsigned)h, (unsigned)KV_SPLIT_HASH,
           worst[0]);
    printf("  largest err / ERROR BOUNDS (a) arithmetic part (proven for token_split 0), vs the "
           "dequantized cache: %.4f with 2..%u splits, "
           "%.4f unsplit (the same data)\n", worst[1], (unsigned)(N / 64 + 2), worst[2]);
    CHECK(h == KV_SPLIT_HASH, "token_split output bits differ from the x86-64 host: 0x%08x",
          (unsigned)h);
}

/* Bad token_split calls: a status, nothing written; a non-finite key in one split. */
static void test_token_split_errors(void) {
    enum { H = 1, NH = 2, D = 16, N = 150 };
    static float k[N * H * D], v[N * H * D], q[NH * D], out[NH * D], part[4 * NH * (D + 2)];
    static unsigned char s1[64 * 1024], w1[64 * 1024];
    qmx_kv_config cfg = QMX_ZERO_INIT;
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    qmx_kv_cache c;
    size_t sb = 0, wb = 0, tws = 0, pb = 0, nt = 0;
    QMX_TEST_CASE("token_split: bad calls, a non-finite logit in one split");
    cfg.capacity = N + 8; cfg.n_kv_heads = H; cfg.head_dim = D; cfg.k_dtype = QMX_FP8_E4M3FN;
    fill_kv(k, N, H, D, 0, 1.0f);
    fill_kv(v, N, H, D, 0, 1.0f);
    fill_kv(q, 1, NH, D, 0, 1.0f);
    CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK && sb <= sizeof s1 &&
              qmx_kv_cache_init(&c, &cfg, s1, sb) == QMX_OK &&
              qmx_kv_cache_append(&c, k, v, N) == QMX_OK, "init");
    o.token_split = 64;
    CHECK(qmx_kv_attention_split_workspace_size(&cfg, NH, &o, &wb) == QMX_OK && wb <= sizeof w1 &&
              qmx_kv_attention_task_workspace_size(&cfg, NH, &tws) == QMX_OK &&
              qmx_kv_attention_split_tasks(&c, NH, &o, &nt) == QMX_OK && nt == 3 &&
              qmx_kv_attention_split_partials_size(&c, NH, &o, &pb) == QMX_OK &&
              pb == 3 * NH * (D + 2) * 4, "sizes");
    memset(out, 0xA5, sizeof out);
    o.token_split = 32;
    CHECK(qmx_kv_attention(&c, q, NH, &o, out, w1, sizeof w1) == QMX_ERR_ARG, "T = 32");
    o.token_split = 65;
    CHECK(qmx_kv_attention(&c, q, NH, &o, out, w1, sizeof w1) == QMX_ERR_ARG, "T = 65");
    o.token_split = 64;
    CHECK(qmx_kv_attention(&c, q, NH, &o, out, w1, wb - 1) == QMX_ERR_BUFFER_TOO_SMALL,
          "workspace one byte short");
    CHECK(qmx_kv_prefill(&c, k, v, 1, q, NH, &o, out, w1, sizeof w1) == QMX_ERR_ARG &&
              c.n_tokens == N, "prefill with token_split: QMX_ERR_ARG, nothing appended");
    CHECK(qmx_test_f32_bits(out[0]) == 0xA5A5A5A5u && qmx_test_f32_bits(out[NH * D - 1]) ==
          0xA5A5A5A5u, "a bad call wrote out");
    /* a NaN key code (E4M3FN 0x7F) at token 70: split 1 of 3 */
    c.k[70 * c.row_k + 3] = 0x7F;
    CHECK(qmx_kv_attention(&c, q, NH, &o, out, w1, wb) == QMX_ERR_NONFINITE &&
              qmx_test_f32_bits(out[0]) == 0xA5A5A5A5u, "NaN key: QMX_ERR_NONFINITE, out untouched");
    memset(part, 0x5A, sizeof part);
    CHECK(qmx_kv_attention_split_run(&c, q, NH, &o, part, pb, 0, 1, w1, tws) == QMX_OK &&
              qmx_kv_attention_split_run(&c, q, NH, &o, part, pb, 1, 3, w1, tws) ==
              QMX_ERR_NONFINITE && qmx_test_f32_bits(part[NH * (D + 2)]) == 0x5A5A5A5Au &&
              qmx_test_f32_bits(part[2 * NH * (D + 2)]) == 0x5A5A5A5Au,
          "NaN key: the failing task's record and the later ones untouched");
    o.causal_len = 64;   /* the NaN outside the visible range */
    CHECK(qmx_kv_attention(&c, q, NH, &o, out, w1, wb) == QMX_OK, "NaN key past causal_len");
}

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
    test_block_attention();
    {
        uint32_t h = hash_state;
        QMX_TEST_CASE("cross-target bit identity (hash of the outputs of the fixed scenarios)");
        printf("  output hash 0x%08x (x86-64 host: 0x%08x)\n", (unsigned)h, (unsigned)KV_HASH);
        CHECK(h == KV_HASH, "output bits differ from the x86-64 host: 0x%08x", (unsigned)h);
    }
    test_block_storage();
    test_block_errors();
    test_block_paths();
    test_block_prefill();
    test_block_llama();
    test_attention_formats();
    test_proven_bounds();
    test_prefill_midway();
    test_prefill_tiled();
    test_prefill_tiled_midway();
    test_fp8_paths();
    test_token_split();
    test_token_split_errors();
    return QMX_TEST_END();
}
