/* fuzz_array_api.c - libFuzzer harness for the array APIs of qmx.h and qmx_calib.h.
 * The first input byte picks the API (byte % 10), the rest is read as a stream (missing bytes
 * read as 0) that gives shapes (dims 1..16, 0xFF = 0; at most 4096 elements), enum values
 * (now and then garbage: -1, one past the last, INT_MAX; in C++ builds of the replay only
 * valid values, since C++ enums cannot hold others), sizes that are exact, one short or one
 * long, NULL pointers, and data: raw float bits (NaN, Inf, denormals), small exact values, or
 * a per-element mix.
 *   0 qmx_compute_qparams + qmx_quantize + qmx_dequantize (every dtype, granularity, recipe,
 *     rounding incl. stochastic, sym/asym)   1 qmx_dequantize on raw codes
 *   2 qmx_fp8_quantize_array / _dequantize_array   3 qmx_requantize_array
 *   4 observers (init / update / finalize / bounds)   5 histogram (update, percentile, MSE, KL)
 *   6 fp8 delayed scaling, qmx_absmax_f32   7 N:M compress / decompress / matmul (i8, f32)
 *   8 qmx_pack_int4 / qmx_unpack_int4, ggml Q8_0 / Q4_0   9 qmx_calib_snr_search
 *   first byte 240..255: fp4 / fp6 arrays and E8M0 (even) or MX / NVFP4 blocks (odd), and
 *     their range calls (qmx_fp4_quantize_array_run, ..., qmx_mx_quantize_run / _dequantize_run)
 * Every buffer is malloc'ed at exactly the size the call is told (so ASan sees any overrun;
 * without ASan, in the replay, 64 guard bytes after it are checked instead).
 * Invariants (__builtin_trap on violation): the status is a qmx_status value; on error every
 * output is byte-identical to before the call; on success the results match naive references
 * written here (quantize: the recipe's t = x/s or x*(1/s), zero point, clamp and rounding per
 * element, and |q - zp - x/s| <= 1/2 step (1 step stochastic) for finite in-range x;
 * dequantize: (q - zp) * s bit for bit; fp8 arrays: the scalar conversions; requantize: int64
 * gemmlowp / single-rounding / float formulas; delayed scaling: Flax/AQT formulas; histograms:
 * independent of batching, counts add up; N:M: top-n selection, metadata bits and int64 / float
 * matmul over the pruned dense weights).
 * Build: make fuzz (tools/fuzz.sh); replayed by tests/test_fuzz_replay.c. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_calib.h"
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
/* A dimension 1..16, or 0 for 0xFF. */
static size_t fa_dim(fz_rd *r) {
    unsigned b = fz_u8(r);
    return b == 0xFF ? 0 : 1 + b % 16;
}
static float *fa_floats(fz_rd *r, size_t n) {
    float *x = (float *)fz_alloc(n * 4);
    unsigned mode = fz_u8(r);
    size_t i;
    for (i = 0; i < n; i++) x[i] = fz_val(r, mode);
    return x;
}
/* A scale: mostly a positive power-of-two multiple of a small integer, sometimes raw bits. */
static float fa_scale(fz_rd *r) {
    unsigned b = fz_u8(r), e = fz_u8(r);
    if (b >= 0xF0) return fz_bits(fz_u32(r));
    return (float)(1 + b % 16) * fz_bits((uint32_t)(127u - e % 40u + 8u) << 23);
}

/* ---- naive references ---- */
/* Round to nearest even / half away from zero of a finite |t| < 2^31. */
static int64_t fa_rne(double t) {
    int64_t i = (int64_t)t;
    double f = t - (double)i;
    if (f > 0.5 || (f == 0.5 && (i & 1))) i++;
    else if (f < -0.5 || (f == -0.5 && (i & 1))) i--;
    return i;
}
static int64_t fa_half_away(double t) {
    int64_t i = (int64_t)t;
    double f = t - (double)i;
    if (f >= 0.5) i++;
    else if (f <= -0.5) i--;
    return i;
}
static int fa_int_range(qmx_dtype d, int32_t *lo, int32_t *hi) {
    switch ((int)d) {
    case QMX_INT8: *lo = -128; *hi = 127; return 1;
    case QMX_UINT8: *lo = 0; *hi = 255; return 1;
    case QMX_INT4: *lo = -8; *hi = 7; return 1;
    case QMX_UINT4: *lo = 0; *hi = 15; return 1;
    case QMX_INT16: *lo = -32768; *hi = 32767; return 1;
    case QMX_UINT16: *lo = 0; *hi = 65535; return 1;
    case QMX_INT2: *lo = -2; *hi = 1; return 1;
    case QMX_UINT2: *lo = 0; *hi = 3; return 1;
    case QMX_INT3: *lo = -4; *hi = 3; return 1;
    case QMX_INT5: *lo = -16; *hi = 15; return 1;
    case QMX_INT6: *lo = -32; *hi = 31; return 1;
    case QMX_INT7: *lo = -64; *hi = 63; return 1;
    default: return 0;
    }
}
/* torch and ONNX apply a zero point whenever one is given (integer dtypes) */
static int fa_uses_zp(const qmx_qconfig *c) {
    return c->asymmetric || c->recipe == QMX_RECIPE_TORCH || c->recipe == QMX_RECIPE_ONNX;
}
/* QLoRA's NormalFloat4 values (paper, Appendix E) */
static const float fa_nf4[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
static int fa_is_fp8(qmx_dtype d) { return d >= QMX_FP8_E4M3FN && d <= QMX_FP8_E5M2FNUZ; }
/* element e of a quantized int array */
static int32_t fa_qget(qmx_dtype d, const void *q, size_t e) {
    const uint8_t *b = (const uint8_t *)q;
    int16_t s;
    uint16_t u;
    switch ((int)d) {
    case QMX_INT8: case QMX_INT3: case QMX_INT5: case QMX_INT6: case QMX_INT7: return (int8_t)b[e];
    case QMX_INT2: return (int32_t)(((b[e / 4] >> (2 * (e & 3))) & 3) ^ 2) - 2;
    case QMX_UINT2: return (b[e / 4] >> (2 * (e & 3))) & 3;
    case QMX_UINT8: return b[e];
    case QMX_INT16: memcpy(&s, b + 2 * e, 2); return s;
    case QMX_UINT16: memcpy(&u, b + 2 * e, 2); return u;
    case QMX_INT4: return (int32_t)(((b[e / 2] >> (4 * (e & 1))) & 0xF) ^ 8) - 8;
    default: return (b[e / 2] >> (4 * (e & 1))) & 0xF;
    }
}
/* Parameter index of flat element e in the [outer][len][inner] view. */
typedef struct fa_view { size_t outer, len, inner, block, nblocks; int gran; } fa_view;
static size_t fa_group(const fa_view *v, size_t e) {
    size_t i = e % v->inner, k = (e / v->inner) % v->len, o = e / (v->inner * v->len);
    if (v->gran == QMX_PER_TENSOR) return 0;
    if (v->gran == QMX_PER_CHANNEL) return k;
    return (o * v->nblocks + k / v->block) * v->inner + i;
}

/* Decodes a qconfig and its element count; 0 when too large to run. */
static int fa_qcfg(fz_rd *r, qmx_qconfig *c, size_t *count, qmx_rng *rng) {
    unsigned fl, view;
    size_t o, l, i;
    memset(c, 0, sizeof *c);
    c->dtype = (qmx_dtype)fz_enum(r, 23);
    c->granularity = (qmx_granularity)fz_enum(r, 3);
    c->recipe = (qmx_recipe)fz_enum(r, 5);
    c->rounding = (qmx_round)fz_enum(r, 4);
    fl = fz_u8(r);
    c->asymmetric = fl & 1;
    c->narrow_range = (fl >> 1) & 1;
    c->preserve_max_val = (fl >> 2) & 1;
    c->rng = (fl & 8) ? NULL : rng;
    c->reduce_range = (fl >> 4) & 3;     /* 2, 3: invalid */
    if (c->recipe != QMX_RECIPE_TORCH && (fl & 0x40)) c->reduce_range = 0;
    c->fp8_no_saturate = (fl >> 7) & 1;
    c->block_size = fz_u8(r) % 20;
    view = fz_u8(r);
    o = fa_dim(r); l = fa_dim(r); i = fa_dim(r);
    switch (view % 8) {
    case 0: *count = l; break;                         /* the flat view [1][count][1] */
    case 6: c->outer = o; c->axis_len = l; c->inner = i; *count = o * l * i + 1; break;
    case 7: c->outer = o; c->axis_len = ((size_t)-1) / 2 + 1; c->inner = i + 1;
            *count = o * l; break;                      /* view product overflows */
    default: c->outer = o; c->axis_len = l; c->inner = i; *count = o * l * i; break;
    }
    return *count <= 4096;
}
/* The resolved view of a config that qmx accepted. */
static void fa_mkview(const qmx_qconfig *c, size_t count, fa_view *v) {
    if (!c->outer && !c->axis_len && !c->inner) { v->outer = 1; v->len = count; v->inner = 1; }
    else { v->outer = c->outer; v->len = c->axis_len; v->inner = c->inner; }
    v->gran = (int)c->granularity;
    v->block = v->len; v->nblocks = 1;
    if (c->granularity == QMX_PER_BLOCK) {
        v->block = c->block_size < v->len ? c->block_size : v->len;
        v->nblocks = (v->len + v->block - 1) / v->block;
    }
}

/* ---- 0: compute_qparams + quantize + dequantize ---- */
static void fa_quantize(fz_rd *r) {
    qmx_qconfig c;
    qmx_rng rng, rng0;
    size_t count, np = 0, ns, need = 0, qb, e;
    qmx_status st;
    unsigned how;
    float *x, *scales, *y;
    int32_t *zps = NULL, lo = 0, hi = 0;
    void *q, *snap, *ssnap, *zsnap = NULL;
    qmx_dtype dt;
    fa_view v;
    int is_int, stoch;
    qmx_rng_seed(&rng, fz_u32(r));
    rng0 = rng;
    if (!fa_qcfg(r, &c, &count, &rng)) return;
    how = fz_u8(r);
    x = fa_floats(r, count);
    st = qmx_qparams_count(&c, count, &np);
    fz_check(st);
    if (st != QMX_OK || np > 4096) np = 1 + how % 4;
    ns = np;
    if (how & 0x10) ns = np - 1;
    else if (how & 0x20) ns = np + 1;
    scales = (float *)fz_alloc(ns * 4);
    if (c.asymmetric || (how & 0x40)) zps = (int32_t *)fz_alloc(ns * 4);
    if (how & 1) {
        ssnap = fz_snap(scales, ns * 4);
        if (zps) zsnap = fz_snap(zps, ns * 4);
        st = qmx_compute_qparams(&c, x, count, scales, ns, zps);
        fz_check(st);
        if (st == QMX_ERR_NONFINITE) {
            /* one pass: the groups before the first NaN/Inf group may be written, so what
             * differs from the snapshot must be valid scales (test_quantize checks the exact
             * prefix against golden data); the data must hold a NaN/Inf */
            size_t w = ns, nonfinite = 0;
            for (e = 0; e < count; e++) nonfinite |= !fz_finite(x[e]);
            if (!nonfinite) __builtin_trap();
            while (w > 0 && !memcmp(scales + w - 1, (const char *)ssnap + 4 * (w - 1), 4) &&
                   (!zps || !memcmp(zps + w - 1, (const char *)zsnap + 4 * (w - 1), 4)))
                w--;
            for (e = 0; e < w; e++)
                if (fz_isnan(scales[e]) || !(scales[e] >= 0.0f)) __builtin_trap();
        } else if (st != QMX_OK) {
            fz_same(scales, ssnap, ns * 4);
            if (zps) fz_same(zps, zsnap, ns * 4);
        } else {
            dt = c.dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c.dtype;
            for (e = 0; e < np; e++) {
                if (fz_isnan(scales[e]) || !(scales[e] >= 0.0f)) __builtin_trap();
                if (zps && fa_uses_zp(&c) && fa_int_range(dt, &lo, &hi) && (zps[e] < lo || zps[e] > hi))
                    __builtin_trap();
            }
        }
    }
    if (!(how & 1) || st != QMX_OK) {
        for (e = 0; e < ns; e++) scales[e] = fa_scale(r);
        if (zps)
            for (e = 0; e < ns; e++) {
                unsigned b = fz_u8(r);
                zps[e] = b >= 0xFC ? (int32_t)fz_u32(r) : (int32_t)(int8_t)b / 8;
            }
    }
    dt = c.dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c.dtype;
    if (qmx_dtype_storage_bytes(dt, count, &need) != QMX_OK || need == 0) need = count;
    qb = need;
    if ((how & 0x80) && qb) qb--;
    q = fz_alloc(qb);
    snap = fz_snap(q, qb);
    st = qmx_quantize(&c, x, count, scales, ns, zps, q, qb);
    fz_check(st);
    if (st != QMX_OK) { fz_same(q, snap, qb); return; }
    /* success: a valid config, so the view is known */
    fa_mkview(&c, count, &v);
    is_int = fa_int_range(dt, &lo, &hi);
    stoch = c.rounding == QMX_ROUND_STOCHASTIC;
    if (!is_int && !fa_is_fp8(dt) && dt != QMX_NF4) __builtin_trap();
    if (is_int && (dt == QMX_INT4 || dt == QMX_UINT4) && (count & 1) &&
        (((const uint8_t *)q)[count / 2] >> 4) != 0)
        __builtin_trap();
    if (stoch) { /* the same seed gives the same bits */
        void *q2 = fz_alloc(qb);
        rng = rng0;
        if (qmx_quantize(&c, x, count, scales, ns, zps, q2, qb) != QMX_OK) __builtin_trap();
        if (memcmp(q, q2, qb) != 0) __builtin_trap();
    }
    if (is_int) {
        /* TFLite: symmetric weights narrow; int16 (16x8 activations) the QUANTIZE op's full range */
        int narrow = c.narrow_range ||
                     (!c.asymmetric && (c.recipe == QMX_RECIPE_AQT ||
                                        (c.recipe == QMX_RECIPE_TFLITE && dt != QMX_INT16)));
        int32_t rlo = narrow && lo < 0 ? -hi : lo;
        int half_away = c.rounding == QMX_ROUND_HALF_AWAY ||
                        (c.rounding == QMX_ROUND_DEFAULT && c.recipe == QMX_RECIPE_TFLITE);
        for (e = 0; e < count; e++) {
            size_t g = fa_group(&v, e);
            float s = scales[g], t, inv = 1.0f / s;
            int32_t zp = zps && fa_uses_zp(&c) ? zps[g] : 0, got = fa_qget(dt, q, e), want;
            double td;
            if (got < rlo || got > hi) __builtin_trap();
            if (!fz_finite(inv) && c.recipe == QMX_RECIPE_AQT) inv = 1.0f;
            if (c.recipe == QMX_RECIPE_AQT || c.recipe == QMX_RECIPE_TORCH) t = x[e] * inv;
            else t = x[e] / s;
            if (!stoch) { /* the naive reference of the recipe */
                if (c.recipe == QMX_RECIPE_QWIX) {
                    if (zp != 0) t = t + (float)zp;
                    if (fz_isnan(t)) want = zp;
                    else {
                        if (t < (float)rlo) t = (float)rlo;
                        if (t > (float)hi) t = (float)hi;
                        want = (int32_t)(half_away ? fa_half_away(t) : fa_rne(t));
                    }
                } else if (fz_isnan(t)) {
                    want = zp;
                } else {
                    if (t < (float)(rlo - zp)) t = (float)(rlo - zp);
                    if (t > (float)(hi - zp)) t = (float)(hi - zp);
                    want = (int32_t)(half_away ? fa_half_away(t) : fa_rne(t)) + zp;
                }
                if (got != want) __builtin_trap();
            }
            /* within half a step (one step stochastic) of x / s when x / s is in range */
            if (fz_finite(x[e]) && s >= 1.17549435e-38f && s <= 1e30f) {
                td = (double)x[e] / (double)s;
                if (td + zp >= rlo && td + zp <= hi) {
                    double err = (double)(got - zp) - td, tol = (stoch ? 1.0 : 0.5) +
                                 (td < 0 ? -td : td) * 4.8e-7 + 1e-6;
                    if (err > tol || err < -tol) __builtin_trap();
                }
            }
        }
    } else if (dt == QMX_NF4) {
        for (e = 0; e < count; e++) {   /* the nearest of the 16 values, the lowest on ties */
            size_t g = fa_group(&v, e);
            float s = scales[g], t, m = 1.0f / s, bd = 0.0f;
            int32_t k, best = 0;
            if (c.recipe == QMX_RECIPE_AQT) { if (!fz_finite(m)) m = 1.0f; t = x[e] * m; }
            else t = x[e] / s;
            for (k = 0; k < 16; k++) {
                float d = fa_nf4[k] - t;
                d = d < 0.0f ? -d : d;
                if (k == 0 || d < bd) { bd = d; best = k; }
            }
            if (fz_isnan(t)) best = 7;
            if (((((const uint8_t *)q)[e / 2] >> (4 * (e & 1))) & 15) != (uint32_t)best) __builtin_trap();
        }
    } else {
        for (e = 0; e < count; e++) {
            size_t g = fa_group(&v, e);
            float s = scales[g], t, m = 1.0f / s;
            if (c.recipe == QMX_RECIPE_AQT) { if (!fz_finite(m)) m = 1.0f; t = x[e] * m; }
            else t = x[e] / s;
            {
                uint8_t want = qmx_fp8_from_f32(t, dt, !c.fp8_no_saturate);
                if (c.recipe == QMX_RECIPE_ONNX && dt == QMX_FP8_E5M2 && (want & 0x7F) == 0x7F)
                    want--;   /* ONNX: ml_dtypes' E5M2 NaN 0x7E | sign */
                if (((const uint8_t *)q)[e] != want) __builtin_trap();
            }
        }
    }
    /* dequantize with the same parameters: (q - zp) * s, one rounding */
    y = (float *)fz_alloc(count * 4);
    if (qmx_dequantize(&c, q, qb, count, scales, ns, zps, y) != QMX_OK) __builtin_trap();
    for (e = 0; e < count; e++) {
        size_t g = fa_group(&v, e);
        float want;
        if (is_int) {
            int32_t zp = zps && fa_uses_zp(&c) ? zps[g] : 0;
            float d = (float)(fa_qget(dt, q, e) - zp);
            want = d * scales[g];
        } else if (dt == QMX_NF4) {
            want = fa_nf4[(((const uint8_t *)q)[e / 2] >> (4 * (e & 1))) & 15] * scales[g];
        } else {
            want = qmx_fp8_to_f32(((const uint8_t *)q)[e], dt) * scales[g];
        }
        if (!fz_same_f(y[e], want)) __builtin_trap();
    }
}

/* ---- 1: dequantize arbitrary codes ---- */
static void fa_dequantize(fz_rd *r) {
    qmx_qconfig c;
    qmx_rng rng;
    size_t count, np = 0, ns, need = 0, qb, e;
    unsigned how;
    float *scales, *y;
    int32_t *zps = NULL;
    uint8_t *q;
    void *snap;
    qmx_status st;
    qmx_dtype dt;
    fa_view v;
    qmx_rng_seed(&rng, 1);
    if (!fa_qcfg(r, &c, &count, &rng)) return;
    how = fz_u8(r);
    st = qmx_qparams_count(&c, count, &np);
    fz_check(st);
    if (st != QMX_OK || np > 4096) np = 1 + how % 4;
    ns = (how & 0x10) ? np - 1 : np;
    scales = (float *)fz_alloc(ns * 4);
    for (e = 0; e < ns; e++) scales[e] = fa_scale(r);
    if (c.asymmetric || (how & 0x40)) {
        zps = (int32_t *)fz_alloc(ns * 4);
        for (e = 0; e < ns; e++) zps[e] = (int32_t)(int8_t)fz_u8(r) / ((how & 0x20) ? 1 : 16);
    }
    dt = c.dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c.dtype;
    if (qmx_dtype_storage_bytes(dt, count, &need) != QMX_OK || need == 0) need = count;
    qb = (how & 0x80) && need ? need - 1 : need;
    q = (uint8_t *)fz_alloc(qb);
    for (e = 0; e < qb; e++) q[e] = (uint8_t)fz_u8(r);
    y = (float *)fz_alloc(count * 4);
    snap = fz_snap(y, count * 4);
    st = qmx_dequantize(&c, q, qb, count, scales, ns, zps, y);
    fz_check(st);
    if (st != QMX_OK) { fz_same(y, snap, count * 4); return; }
    fa_mkview(&c, count, &v);
    for (e = 0; e < count; e++) {
        size_t g = fa_group(&v, e);
        int32_t lo, hi;
        float want;
        if (fa_int_range(dt, &lo, &hi)) {
            float d = (float)(fa_qget(dt, q, e) - (zps && fa_uses_zp(&c) ? zps[g] : 0));
            want = d * scales[g];
        } else if (dt == QMX_NF4) {
            want = fa_nf4[(q[e / 2] >> (4 * (e & 1))) & 15] * scales[g];
        } else {
            want = qmx_fp8_to_f32(q[e], dt) * scales[g];
        }
        if (!fz_same_f(y[e], want)) __builtin_trap();
    }
}

/* ---- 2: fp8 arrays ---- */
static void fa_fp8_arrays(fz_rd *r) {
    qmx_dtype fmt = (qmx_dtype)fz_enum(r, 11);
    size_t n = fa_dim(r) * fa_dim(r) * fa_dim(r), i;
    int sat = (int)fz_u8(r) - 1;
    float scale = fa_scale(r), *x = fa_floats(r, n), *y;
    uint8_t *out = (uint8_t *)fz_alloc(n), *codes;
    void *snap = fz_snap(out, n);
    qmx_status st = qmx_fp8_quantize_array(fmt, x, n, scale, sat, out);
    fz_check(st);
    if (st != QMX_OK) fz_same(out, snap, n);
    else
        for (i = 0; i < n; i++) {
            float t = x[i] / scale;
            if (out[i] != qmx_fp8_from_f32(t, fmt, sat != 0)) __builtin_trap();
        }
    codes = (uint8_t *)fz_alloc(n);
    for (i = 0; i < n; i++) codes[i] = (uint8_t)fz_u8(r);
    y = (float *)fz_alloc(n * 4);
    snap = fz_snap(y, n * 4);
    st = qmx_fp8_dequantize_array(fmt, codes, n, scale, y);
    fz_check(st);
    if (st != QMX_OK) fz_same(y, snap, n * 4);
    else
        for (i = 0; i < n; i++)
            if (!fz_same_f(y[i], qmx_fp8_to_f32(codes[i], fmt) * scale)) __builtin_trap();
}

/* ---- 3: requantize arrays ---- */
/* gemmlowp: SaturatingRoundingDoublingHighMul then RoundingDivideByPOT, in int64 */
static int32_t fa_rq_double(int32_t acc, int32_t m, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int32_t x = (int32_t)(uint32_t)((uint64_t)(uint32_t)acc << left), h;
    int64_t ab, nudge, mask, rem, thr;
    if (x == INT32_MIN && m == INT32_MIN) h = INT32_MAX;
    else {
        ab = (int64_t)x * m;
        nudge = ab >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30);
        h = (int32_t)((ab + nudge) / ((int64_t)1 << 31));
    }
    mask = ((int64_t)1 << right) - 1;
    rem = (int64_t)h & mask;
    thr = (mask >> 1) + (h < 0 ? 1 : 0);
    return (int32_t)(((int64_t)h >> right) + (rem > thr ? 1 : 0));
}
static int32_t fa_rq_single(int32_t acc, int32_t m, int shift) {
    int64_t v = (int64_t)acc * m + ((int64_t)1 << (30 - shift));
    v >>= (31 - shift);
    if (v > INT32_MAX) return INT32_MAX;
    if (v < INT32_MIN) return INT32_MIN;
    return (int32_t)v;
}
static int32_t fa_rq_float(int32_t acc, float s) {
    float p = (float)acc * s;
    if (fz_isnan(p)) return 0;
    if (p >= 2147483648.0f) return INT32_MAX;
    if (p < -2147483648.0f) return INT32_MIN;
    return (int32_t)fa_rne(p);
}
/* RNE of the exact product acc * s = acc * m * 2^k: p = acc * m is exact in int64 (|p| < 2^55);
 * for k < 0 the quotient by 2^-k by C division (truncating), then the remainder decides */
static int32_t fa_rq_exact(int32_t acc, float s) {
    uint32_t b;
    int64_t m, p, d, q, rem;
    int k;
    memcpy(&b, &s, 4);
    if (b >= 0x7F800000u) return 0;
    m = (int64_t)(b & 0x7FFFFFu) | ((b >> 23) ? 0x800000 : 0);
    k = (int)((b >> 23) ? (b >> 23) : 1) - 150;
    p = (int64_t)acc * m;
    if (k >= 0) {
        int j;
        for (j = 0; j < k; j++) {
            if (p > INT32_MAX || p < INT32_MIN) break;
            p *= 2;
        }
        return p > INT32_MAX ? INT32_MAX : p < INT32_MIN ? INT32_MIN : (int32_t)p;
    }
    if (-k > 61) return 0;                 /* |p| < 2^55: below one half */
    d = (int64_t)1 << -k;
    q = p / d; rem = p % d;                /* truncation: rem has p's sign */
    if (2 * rem > d || (2 * rem == d && (q & 1))) q++;
    else if (2 * rem < -d || (2 * rem == -d && (q & 1))) q--;
    return q > INT32_MAX ? INT32_MAX : q < INT32_MIN ? INT32_MIN : (int32_t)q;
}
static void fa_requant(fz_rd *r) {
    qmx_requant_config c;
    size_t rows = fa_dim(r), ch = fa_dim(r), n = rows * ch, np, i, need, ob;
    unsigned how = fz_u8(r), b;
    int32_t *acc, *mult, *bias = NULL, lo, hi, amin, amax;
    int *shifts;
    float *sc;
    void *out, *snap;
    qmx_status st;
    memset(&c, 0, sizeof c);
    c.mode = (qmx_requant_mode)fz_enum(r, 4);
    c.per_channel = how & 1;
    c.out_dtype = (qmx_dtype)(fz_u8(r) % 8 == 0 ? QMX_INT16 : fz_u8(r) % 8 == 1 ? fz_enum(r, 12) : 0);
    np = c.per_channel ? ch : 1;
    mult = (int32_t *)fz_alloc(np * 4);
    shifts = (int *)fz_alloc(np * sizeof(int));
    sc = (float *)fz_alloc(np * 4);
    for (i = 0; i < np; i++) {
        b = fz_u8(r);
        mult[i] = b < 0xF0 ? (int32_t)(0x40000000u + (fz_u32(r) & 0x3FFFFFFFu)) : (int32_t)fz_u32(r);
        shifts[i] = b < 0xF0 ? (int)(b % 40) - 31 : (int)(int8_t)fz_u8(r);
        sc[i] = fa_scale(r);
    }
    if (how & 2) {
        bias = (int32_t *)fz_alloc(ch * 4);
        for (i = 0; i < ch; i++) bias[i] = (int32_t)fz_u32(r) >> (fz_u8(r) % 32);
    }
    c.multipliers = (how & 4) ? NULL : mult;
    c.shifts = (how & 8) ? NULL : shifts;
    c.scales = (how & 4) ? NULL : sc;
    c.bias = bias;
    b = fz_u8(r);
    c.output_zero_point = b >= 0xF0 ? (int32_t)fz_u32(r) : (int32_t)(int8_t)b;
    if (how & 0x10) {
        c.act_min = (int32_t)(int8_t)fz_u8(r);
        c.act_max = (int32_t)(int8_t)fz_u8(r);
        if (fz_u8(r) >= 0xF0) c.act_max = (int32_t)fz_u32(r);
    }
    acc = (int32_t *)fz_alloc(n * 4);
    for (i = 0; i < n; i++) acc[i] = (int32_t)fz_u32(r) >> (fz_u8(r) % 32);
    need = n * ((int)c.out_dtype == QMX_INT16 || (int)c.out_dtype == QMX_UINT16 ? 2 : 1);
    ob = (how & 0x20) && need ? need - 1 : need;
    out = fz_alloc(ob);
    snap = fz_snap(out, ob);
    st = qmx_requantize_array(&c, acc, rows, ch, out, ob);
    fz_check(st);
    if (st != QMX_OK) { fz_same(out, snap, ob); return; }
    if ((int)c.out_dtype == QMX_INT16) { lo = -32768; hi = 32767; }
    else if ((int)c.out_dtype == QMX_UINT16) { lo = 0; hi = 65535; }
    else if ((int)c.out_dtype == QMX_UINT8) { lo = 0; hi = 255; }
    else { lo = -128; hi = 127; }
    amin = c.act_min; amax = c.act_max;
    if (amin == 0 && amax == 0) { amin = lo; amax = hi; }
    for (i = 0; i < n; i++) {
        size_t k = i % ch, p = c.per_channel ? k : 0;
        int32_t a = acc[i], v, got;
        int64_t w;
        int16_t s16;
        uint16_t u16;
        if (bias) a = (int32_t)(uint32_t)((uint32_t)a + (uint32_t)bias[k]);
        if (c.mode == QMX_REQUANT_DOUBLE_ROUNDING) v = fa_rq_double(a, mult[p], shifts[p]);
        else if (c.mode == QMX_REQUANT_SINGLE_ROUNDING) v = fa_rq_single(a, mult[p], shifts[p]);
        else if (c.mode == QMX_REQUANT_FLOAT) v = fa_rq_float(a, sc[p]);
        else v = fa_rq_exact(a, sc[p]);
        w = (int64_t)v + c.output_zero_point;
        if (w < amin) w = amin;
        if (w > amax) w = amax;
        if ((int)c.out_dtype == QMX_INT16) { memcpy(&s16, (const char *)out + 2 * i, 2); got = s16; }
        else if ((int)c.out_dtype == QMX_UINT16) { memcpy(&u16, (const char *)out + 2 * i, 2); got = u16; }
        else if ((int)c.out_dtype == QMX_UINT8) got = ((const uint8_t *)out)[i];
        else got = ((const int8_t *)out)[i];
        if (got != w) __builtin_trap();
    }
}

/* ---- 4: observers ---- */
static void fa_observer(fz_rd *r) {
    qmx_calib_config cc;
    qmx_qconfig q;
    qmx_observer obs, osnap;
    qmx_rng rng;
    size_t count, np = 0, ns, i, g;
    unsigned how, nb, bt;
    qmx_calib_stat *stats;
    float *x = NULL, *scales, *s2;
    int32_t *zps, *z2;
    void *snap, *zsnap;
    qmx_status st;
    memset(&cc, 0, sizeof cc);
    cc.method = (qmx_calib_method)fz_enum(r, 7);
    how = fz_u8(r);
    cc.clip = (how & 1) ? fa_scale(r) : 0.0f;
    cc.momentum = (how & 2) ? fz_bits(0x3F000000u - (fz_u8(r) << 20)) : 0.0f;
    if (how & 4) cc.momentum = fz_val(r, 0);
    cc.p = (int)(fz_u8(r) % 7) - 1;
    cc.lo = fz_val(r, 2);
    cc.hi = fz_val(r, 2);
    qmx_rng_seed(&rng, 7);
    if (!fa_qcfg(r, &q, &count, &rng)) return;
    st = qmx_qparams_count(&q, count, &np);
    if (st != QMX_OK || np > 4096) np = 2;
    ns = (how & 8) ? np - 1 : np;
    stats = (qmx_calib_stat *)fz_alloc(ns * sizeof(qmx_calib_stat));
    memset(&obs, 0x5A, sizeof obs);
    memcpy(&osnap, &obs, sizeof obs);   /* memcpy: padding included */
    snap = fz_snap(stats, ns * sizeof(qmx_calib_stat));
    st = qmx_observer_init(&obs, &cc, &q, count, stats, ns);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(stats, snap, ns * sizeof(qmx_calib_stat));
        if (memcmp(&obs, &osnap, sizeof obs) != 0) __builtin_trap();
        return;
    }
    nb = 1 + fz_u8(r) % 3;
    for (bt = 0; bt < nb; bt++) {
        size_t xc = count + ((how & 0x10) && bt == 1 ? 1 : 0);
        x = fa_floats(r, xc);
        snap = fz_snap(stats, ns * sizeof(qmx_calib_stat));
        st = qmx_observer_update(&obs, x, xc);
        fz_check(st);
        if (st != QMX_OK) fz_same(stats, snap, ns * sizeof(qmx_calib_stat));
    }
    scales = (float *)fz_alloc(np * 4);
    zps = (int32_t *)fz_alloc(np * 4);
    snap = fz_snap(scales, np * 4);
    zsnap = fz_snap(zps, np * 4);
    st = qmx_observer_finalize(&obs, scales, (how & 0x20) ? np - 1 : np, (how & 0x40) ? NULL : zps);
    fz_check(st);
    if (st != QMX_OK) { fz_same(scales, snap, np * 4); fz_same(zps, zsnap, np * 4); return; }
    for (g = 0; g < np; g++) {
        float lo = 1.0f, hi = -1.0f;
        if (fz_isnan(scales[g]) || !(scales[g] >= 0.0f)) __builtin_trap();
        if (qmx_observer_bounds(&obs, g, &lo, &hi) != QMX_OK || !(lo <= hi)) __builtin_trap();
    }
    {   /* out of range group: a status, no write */
        float lo = 3.0f, hi = 4.0f;
        if (qmx_observer_bounds(&obs, np, &lo, &hi) == QMX_OK || lo != 3.0f || hi != 4.0f)
            __builtin_trap();
    }
    /* one batch of absmax (symmetric) or minmax, clip 1: exactly qmx_compute_qparams */
    if (nb == 1 && x && !(how & 0x10) && (cc.clip == 0.0f || cc.clip == 1.0f) &&
        ((cc.method == QMX_CALIB_ABSMAX && !q.asymmetric) || cc.method == QMX_CALIB_MINMAX) &&
        (!q.asymmetric || !(how & 0x40))) {
        s2 = (float *)fz_alloc(np * 4);
        z2 = (int32_t *)fz_alloc(np * 4);
        if (qmx_compute_qparams(&q, x, count, s2, np, z2) != QMX_OK) __builtin_trap();
        for (i = 0; i < np; i++)
            if (fz_fbits(s2[i]) != fz_fbits(scales[i]) || (q.asymmetric && z2[i] != zps[i]))
                __builtin_trap();
    }
}

/* ---- 5: histogram ---- */
/* qmx_torch_histogram_* over the same batches: an error leaves the state (struct and bins)
 * untouched; qparams give a positive finite scale, a zero point in range and an ordered
 * searched range (torch's own bits are checked against torch in test_calib). */
static void fa_torch_hist(float *const *x, const size_t *n, unsigned nb, unsigned how,
                          size_t nbins) {
    qmx_torch_histogram t, ts;
    size_t nt = 2 + nbins % 300, len = qmx_torch_histogram_buffer_size(nt), k;
    uint32_t up = 1u << ((how >> 1) & 7);
    float *buf = (float *)fz_alloc(len * 4), scale = -1.0f, lo = 0.0f, hi = 0.0f;
    int32_t zp = -999;
    qmx_status st;
    st = qmx_torch_histogram_init(&t, buf, len, nt, up);
    fz_check(st);
    if (st != QMX_OK) return;
    for (k = 0; k < nb; k++) {
        void *snap = fz_snap(buf, nt * 4);
        memcpy(&ts, &t, sizeof t);
        st = qmx_torch_histogram_update(&t, x[k], n[k]);
        fz_check(st);
        if (st != QMX_OK) {
            fz_same(buf, snap, nt * 4);
            if (memcmp(&t, &ts, sizeof t) != 0) __builtin_trap();
        }
    }
    if (nbins % 16 != 15) return;   /* the parameter search (up to 10^5 steps): 1 in 4 */
    st = qmx_torch_histogram_qparams(&t, (how & 0x20) ? QMX_INT8 : QMX_UINT8, (how >> 4) & 1,
                                     (how >> 3) & 1, 0, 0, &scale, &zp, &lo, &hi);
    fz_check(st);
    if (st == QMX_OK) {
        int32_t qmin = (how & 0x20) ? -128 : 0, qmax = (how & 0x20) ? 127 : 255;
        if (!(scale > 0.0f && fz_finite(scale)) || zp < qmin || zp > qmax || !(lo <= hi))
            __builtin_trap();
    } else if (scale != -1.0f || zp != -999) {
        __builtin_trap();   /* nothing written on error */
    }
}

static void fa_histogram(fz_rd *r) {
    qmx_histogram h, h2, hs;
    size_t nbins, i, n[3], nr[3], tot = 0;
    unsigned how = fz_u8(r), nb = 1 + fz_u8(r) % 3, k;
    uint64_t *bins, *bins2, sum = 0;
    float *x[3], *all, amax = 0.0f, bound, b0;
    qmx_qconfig q;
    qmx_rng rng;
    void *snap;
    qmx_status st;
    size_t qc;
    /* up to 511 bins (the MSE and KL searches are O(n_bins^2)), or an invalid count */
    nbins = (how & 0x80) ? (size_t)((1u << 20) + 1) : fz_u8(r) * 2u + (how & 1);
    if (nbins > 4096) {   /* invalid count, small buffer: must be refused */
        bins = (uint64_t *)fz_alloc(8);
        if (qmx_histogram_init(&h, bins, nbins) == QMX_OK) __builtin_trap();
        return;
    }
    bins = (uint64_t *)fz_alloc(nbins * 8);
    memset(&h, 0x5A, sizeof h);
    memcpy(&hs, &h, sizeof h);
    st = qmx_histogram_init(&h, bins, nbins);
    fz_check(st);
    if (st != QMX_OK) { if (memcmp(&h, &hs, sizeof h) != 0) __builtin_trap(); return; }
    for (k = 0; k < nb; k++) {
        n[k] = fa_dim(r) * fa_dim(r) * fa_dim(r);
        nr[k] = n[k];
        x[k] = fa_floats(r, n[k]);
        snap = fz_snap(bins, nbins * 8);
        memcpy(&hs, &h, sizeof h);
        st = qmx_histogram_update(&h, x[k], n[k]);
        fz_check(st);
        if (st != QMX_OK) {
            fz_same(bins, snap, nbins * 8);
            if (memcmp(&h, &hs, sizeof h) != 0) __builtin_trap();
            n[k] = 0;
        } else {
            for (i = 0; i < n[k]; i++) {
                float a = fz_bits(fz_fbits(x[k][i]) & 0x7FFFFFFFu);
                if (a > amax) amax = a;
            }
            tot += n[k];
        }
    }
    for (i = 0; i < nbins; i++) sum += bins[i];
    if (sum != tot || h.total != tot || fz_fbits(h.absmax) != fz_fbits(amax)) __builtin_trap();
    if (h.width != 0.0f && (fz_fbits(h.width) & 0x807FFFFFu) != 0) __builtin_trap(); /* 2^k */
    if (h.width != 0.0f && !((float)nbins * h.width > amax)) __builtin_trap();
    /* independent of batching: all accepted batches in one update give the same bins */
    if (tot > 0) {
        size_t at = 0;
        all = (float *)fz_alloc(tot * 4);
        for (k = 0; k < nb; k++) { if (n[k]) memcpy(all + at, x[k], n[k] * 4); at += n[k]; }
        bins2 = (uint64_t *)fz_alloc(nbins * 8);
        if (qmx_histogram_init(&h2, bins2, nbins) != QMX_OK ||
            qmx_histogram_update(&h2, all, tot) != QMX_OK)
            __builtin_trap();
        if (memcmp(bins, bins2, nbins * 8) != 0 || fz_fbits(h2.width) != fz_fbits(h.width))
            __builtin_trap();
    }
    b0 = bound = -7.0f;
    st = qmx_histogram_percentile(&h, fz_u32(r) % 1100000u, &bound);
    fz_check(st);
    if (st != QMX_OK ? bound != b0 : !(bound >= 0.0f && bound <= amax)) __builtin_trap();
    qmx_rng_seed(&rng, 3);
    if (fa_qcfg(r, &q, &qc, &rng)) {
        bound = b0;
        st = qmx_histogram_mse_bound(&h, (how & 0x40) ? NULL : &q, &bound);
        fz_check(st);
        if (st != QMX_OK ? bound != b0 : !(bound >= 0.0f && bound <= amax)) __builtin_trap();
    }
    {
        bound = b0;
        st = qmx_histogram_kl_bound(&h, (int)fz_u8(r) - 8, &bound);
        fz_check(st);
        if (st != QMX_OK ? bound != b0 : !(bound >= 0.0f && bound <= amax)) __builtin_trap();
    }
    /* one histogram input in four (nbins % 4 == 3), its parameter search in one of those four:
     * the search takes up to 10^5 steps, which would otherwise slow all the fuzzing tenfold */
    if (nbins % 4 == 3) fa_torch_hist(x, nr, nb, how, nbins);
}

/* ---- 6: fp8 delayed scaling ---- */
static void fa_delayed(fz_rd *r) {
    qmx_fp8_delayed d, ds;
    qmx_dtype fmt = (qmx_dtype)fz_enum(r, 11);
    qmx_delayed_mode mode = (qmx_delayed_mode)fz_enum(r, 2);
    int margin = (int)(int8_t)fz_u8(r);
    size_t len = fa_dim(r), i, n;
    float *hist = (float *)fz_alloc(len * 4), *hsnap, *x, ref_scale, ref_bound, fmax, so, a;
    unsigned steps = fz_u8(r) % 6, k;
    qmx_status st;
    memset(&d, 0x5A, sizeof d);
    memcpy(&ds, &d, sizeof d);
    st = qmx_fp8_delayed_init(&d, fmt, mode, margin, hist, len);
    fz_check(st);
    if (st != QMX_OK) { if (memcmp(&d, &ds, sizeof d) != 0) __builtin_trap(); return; }
    fmax = qmx_fp8_max(fmt);
    for (i = 0; i < len; i++)
        if (fz_fbits(hist[i]) != 0) __builtin_trap();   /* init zeroes the history */
    ref_scale = d.scale;
    ref_bound = d.bound;
    if (mode == QMX_DELAYED_FLAX ? ref_scale != 1.0f : ref_scale != 0.0f) __builtin_trap();
    for (k = 0; k < steps; k++) {
        float hmax = hist[0], sf, prev_scale = ref_scale, prev_bound = ref_bound;
        int nan = 0;
        unsigned b = fz_u8(r);
        hsnap = (float *)fz_snap(hist, len * 4);
        so = -3.0f;
        if (b & 1) {
            n = fa_dim(r);
            x = fa_floats(r, n);
            a = -1.0f;
            st = qmx_absmax_f32(x, n, &a);
            fz_check(st);
            if (st == QMX_OK) {
                uint32_t m = 0;
                for (i = 0; i < n; i++)
                    if ((fz_fbits(x[i]) & 0x7FFFFFFFu) > m) m = fz_fbits(x[i]) & 0x7FFFFFFFu;
                if (m > 0x7F800000u ? !fz_isnan(a) : fz_fbits(a) != m) __builtin_trap();
            } else if (a != -1.0f) __builtin_trap();
            st = qmx_fp8_delayed_update(&d, x, n, (b & 2) ? NULL : &so);
        } else {
            a = fz_val(r, 2);
            st = qmx_fp8_delayed_step(&d, a, (b & 2) ? NULL : &so);
        }
        fz_check(st);
        if (st != QMX_OK && st != QMX_ERR_NONFINITE) {
            /* refused before the step (bad data): nothing written */
            fz_same(hist, hsnap, len * 4);
            if (so != -3.0f) __builtin_trap();
            continue;
        }
        /* reference: h = max(previous history), then the mode's formula, then roll */
        for (i = 0; i < len; i++) {
            if (fz_isnan(hsnap[i])) nan = 1;
            else if (hsnap[i] > hmax) hmax = hsnap[i];
        }
        if (nan) hmax = fz_bits(0x7FC00000u);
        if (mode == QMX_DELAYED_FLAX) {
            if (hmax > 0.0f && fz_finite(hmax)) {
                sf = fmax / hmax;
                sf = sf / fz_bits((uint32_t)(127 + margin) << 23);
            } else {
                sf = 1.0f / ref_scale;
            }
            ref_scale = 1.0f / sf;
        } else {
            if (hmax > 0.0f && fz_finite(hmax)) ref_bound = hmax;
            ref_scale = ref_bound / fmax;
        }
        /* a scale float cannot hold (Flax: not finite or 0; AQT: a positive bound giving 0) is
         * refused with the amax still recorded and the previous scale kept */
        if (mode == QMX_DELAYED_FLAX ? !(fz_finite(ref_scale) && ref_scale > 0.0f)
                                     : (ref_bound > 0.0f && !(ref_scale > 0.0f))) {
            if (st != QMX_ERR_NONFINITE || so != -3.0f) __builtin_trap();
            ref_scale = prev_scale; ref_bound = prev_bound;
        } else if (st != QMX_OK) {
            __builtin_trap();
        }
        if (!fz_same_f(d.scale, ref_scale) || (!(b & 2) && st == QMX_OK && !fz_same_f(so, ref_scale)))
            __builtin_trap();
        if (!fz_same_f(hist[0], a)) __builtin_trap();
        for (i = 1; i < len; i++)
            if (fz_fbits(hist[i]) != fz_fbits(hsnap[i - 1])) __builtin_trap();
    }
}

/* ---- 7: N:M sparsity ---- */
static void fa_nm(fz_rd *r) {
    unsigned how = fz_u8(r), b = fz_u8(r);
    int nn, mm, bits = 0;
    size_t rows = fa_dim(r), groups = fa_dim(r), K, ldw, vc = 0, mb = 0, i, j, k, M, lda, ldc, rowm;
    int8_t *W, *vals, *W2, *A, *Wp, *rv;
    float *Wf, *vf, *Af, *Cf;
    uint8_t *meta, *rmeta;
    int32_t *C, a_zp;
    void *snap, *snap2;
    qmx_status st;
    static const int pairs[8][2] = {{2, 4}, {1, 4}, {4, 8}, {1, 2}, {3, 5}, {2, 3}, {1, 256}, {7, 16}};
    nn = pairs[b & 7][0]; mm = pairs[b & 7][1];
    if (b >= 0xF0) { nn = (int)(int8_t)fz_u8(r); mm = (int)fz_u8(r) + (b & 1 ? 1 : 0) * 300; }
    if (mm <= 0 || mm > 256 || groups * (size_t)mm * rows > 4096) {
        size_t v0 = 11, m0 = 12;
        st = qmx_nm_storage_size(rows, 4, nn, mm, &v0, &m0);
        fz_check(st);
        if (st == QMX_OK && (mm > 256 || mm <= 0)) __builtin_trap();
        if (st != QMX_OK && (v0 != 11 || m0 != 12)) __builtin_trap();
        return;
    }
    K = groups * (size_t)mm + ((how & 1) ? 1 : 0);
    ldw = K + fz_u8(r) % 3;
    if (how & 2) ldw = K ? K - 1 : 0;
    st = qmx_nm_storage_size(rows, K, nn, mm, &vc, &mb);
    fz_check(st);
    if (st != QMX_OK) { vc = rows * K; mb = rows * K; }
    W = (int8_t *)fz_alloc(rows ? (rows - 1) * ldw + K : 0);
    for (i = 0; i < (rows ? (rows - 1) * ldw + K : 0); i++) {
        unsigned v = fz_u8(r);
        W[i] = (how & 4) ? (int8_t)(v % 5) - 2 : (int8_t)v;   /* small values: many ties */
    }
    if (how & 8) vc = vc ? vc - 1 : 0;
    vals = (int8_t *)fz_alloc(vc);
    meta = (uint8_t *)fz_alloc(mb);
    snap = fz_snap(vals, vc);
    snap2 = fz_snap(meta, mb);
    st = qmx_nm_compress_i8(W, rows, K, ldw, nn, mm, vals, vc, meta, mb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(vals, snap, vc);
        fz_same(meta, snap2, mb);
        /* garbage metadata into the matmul: statuses only */
        for (i = 0; i < mb; i++) meta[i] = (uint8_t)fz_u8(r);
        for (i = 0; i < vc; i++) vals[i] = (int8_t)fz_u8(r);
        M = fa_dim(r);
        if (M && K) {
            A = (int8_t *)fz_alloc(M * K);
            C = (int32_t *)fz_alloc(M * rows * 4);
            snap = fz_snap(C, M * rows * 4);
            st = qmx_nm_matmul_i8(M, rows, K, A, K, 0, nn, mm, vals, vc, meta, mb, C, rows);
            fz_check(st);
            if (st != QMX_OK) fz_same(C, snap, M * rows * 4);
        }
        return;
    }
    /* reference: the n largest |w| of each group (ties: lower index), in index order */
    while ((1 << bits) < mm) bits++;
    rowm = (K / (size_t)mm * (size_t)nn * (size_t)bits + 7) / 8;
    if (mb != rows * rowm || vc != rows * (K / (size_t)mm) * (size_t)nn) __builtin_trap();
    rv = (int8_t *)fz_alloc(vc);
    rmeta = (uint8_t *)fz_alloc(mb);
    memset(rmeta, 0, mb);
    Wp = (int8_t *)fz_alloc(rows * K);
    memset(Wp, 0, rows * K);
    for (i = 0; i < rows; i++) {
        size_t out = 0;
        for (k = 0; k < K; k += (size_t)mm) {
            int keep[256];
            size_t t, u;
            for (t = 0; t < (size_t)mm; t++) {   /* rank = number of elements that beat t */
                int at = abs(W[i * ldw + k + t]), rank = 0;
                for (u = 0; u < (size_t)mm; u++) {
                    int au = abs(W[i * ldw + k + u]);
                    if (au > at || (au == at && u < t)) rank++;
                }
                keep[t] = rank < nn;
            }
            for (t = 0; t < (size_t)mm; t++) {
                if (!keep[t]) continue;
                rv[i * (vc / rows) + out] = W[i * ldw + k + t];
                Wp[i * K + k + t] = W[i * ldw + k + t];
                for (u = 0; u < (size_t)bits; u++)
                    if ((t >> u) & 1) {
                        size_t bit = out * (size_t)bits + u;
                        rmeta[i * rowm + bit / 8] |= (uint8_t)(1u << (bit % 8));
                    }
                out++;
            }
        }
    }
    if (memcmp(rv, vals, vc) != 0 || memcmp(rmeta, meta, mb) != 0) __builtin_trap();
    /* decompress into a padded buffer: the padding stays */
    W2 = (int8_t *)fz_alloc((rows - 1) * (K + 2) + K);
    snap = fz_snap(W2, (rows - 1) * (K + 2) + K);
    if (qmx_nm_decompress_i8(vals, vc, meta, mb, rows, K, nn, mm, W2, K + 2) != QMX_OK)
        __builtin_trap();
    for (i = 0; i < rows; i++)
        for (k = 0; k < K + 2 && i * (K + 2) + k < (rows - 1) * (K + 2) + K; k++)
            if (W2[i * (K + 2) + k] != (k < K ? Wp[i * K + k] : ((int8_t *)snap)[i * (K + 2) + k]))
                __builtin_trap();
    /* int8 matmul vs int64 over the pruned dense weights */
    M = fa_dim(r);
    if (!M) M = 1;
    lda = K + fz_u8(r) % 2;
    ldc = rows + fz_u8(r) % 2;
    a_zp = (how & 0x10) ? (int32_t)(int8_t)fz_u8(r) : 0;
    if (how & 0x20) a_zp = 128 + (int32_t)fz_u8(r);
    A = (int8_t *)fz_alloc((M - 1) * lda + K);
    for (i = 0; i < (M - 1) * lda + K; i++) A[i] = (int8_t)fz_u8(r);
    C = (int32_t *)fz_alloc(((M - 1) * ldc + rows) * 4);
    snap = fz_snap(C, ((M - 1) * ldc + rows) * 4);
    st = qmx_nm_matmul_i8(M, rows, K, A, lda, a_zp, nn, mm, vals, vc, meta, mb, C, ldc);
    fz_check(st);
    if (st != QMX_OK) fz_same(C, snap, ((M - 1) * ldc + rows) * 4);
    else
        for (i = 0; i < M; i++)
            for (j = 0; j < rows; j++) {
                int64_t s = 0;
                for (k = 0; k < K; k++) s += ((int64_t)A[i * lda + k] - a_zp) * Wp[j * K + k];
                if (C[i * ldc + j] != s) __builtin_trap();
                if (j + 1 == rows && ldc > rows && i + 1 < M &&
                    memcmp(&C[i * ldc + rows], (const char *)snap + (i * ldc + rows) * 4, 4) != 0)
                    __builtin_trap();
            }
    /* float: compress and matmul vs the kept-k loop (no FMA: a volatile product) */
    Wf = (float *)fz_alloc(rows * K * 4);
    for (i = 0; i < rows * K; i++) Wf[i] = (how & 0x40) ? fz_val(r, 2) : (float)W[(i / K) * ldw + i % K];
    vf = (float *)fz_alloc(vc * 4);
    snap = fz_snap(meta, mb);
    st = qmx_nm_compress_f32(Wf, rows, K, K, nn, mm, vf, vc, meta, mb);
    fz_check(st);
    if (st != QMX_OK) { fz_same(meta, snap, mb); return; }
    Af = (float *)fz_alloc(M * K * 4);
    for (i = 0; i < M * K; i++) Af[i] = (how & 0x80) ? fz_val(r, 2) : (float)A[(i / K) * lda + i % K];
    Cf = (float *)fz_alloc(M * rows * 4);
    if (qmx_nm_matmul_f32(M, rows, K, Af, K, nn, mm, vf, vc, meta, mb, Cf, rows) != QMX_OK)
        __builtin_trap();
    for (i = 0; i < M; i++) {
        int fin = 1;
        for (k = 0; k < K; k++) fin &= fz_finite(Af[i * K + k]);
        for (j = 0; j < rows && fin; j++) {
            float s = 0.0f;
            size_t per = K / (size_t)mm * (size_t)nn, t = 0;
            for (k = 0; k < K; k++) {   /* decode the kept indices from the metadata */
                size_t grp = k / (size_t)mm, idx = 0, u;
                if (t >= per || (t / (size_t)nn) != grp) continue;
                for (u = 0; u < (size_t)bits; u++) {
                    size_t bit = t * (size_t)bits + u;
                    idx |= (size_t)((meta[j * rowm + bit / 8] >> (bit % 8)) & 1u) << u;
                }
                if (grp * (size_t)mm + idx != k) continue;
                {
                    volatile float p = Af[i * K + k] * vf[j * per + t];
                    s = s + p;
                }
                t++;
            }
            if (fz_fbits(s) != fz_fbits(Cf[i * rows + j]) && !(s == 0.0f && Cf[i * rows + j] == 0.0f) &&
                !(fz_isnan(s) && fz_isnan(Cf[i * rows + j])))
                __builtin_trap();
        }
    }
}

/* ---- 8: int4 packing, ggml blocks ---- */
static void fa_pack(fz_rd *r) {
    qmx_dtype d = (qmx_dtype)fz_enum(r, 11);
    size_t n = fa_dim(r) * fa_dim(r), pb = (n + 1) / 2, i, nb32, bb;
    unsigned how = fz_u8(r);
    int8_t *v = (int8_t *)fz_alloc(n), *v2;
    uint8_t *p, *blocks, *q8, *u4;
    float *sc, *sc2;
    int32_t *zp;
    void *snap;
    qmx_status st;
    for (i = 0; i < n; i++) v[i] = (int8_t)((how & 1) ? (int)fz_u8(r) : (int)(fz_u8(r) % 16) - ((int)d == QMX_INT4 ? 8 : 0));
    if ((how & 2) && pb) pb--;
    p = (uint8_t *)fz_alloc(pb);
    snap = fz_snap(p, pb);
    st = qmx_pack_int4(d, v, n, p, pb);
    fz_check(st);
    if (st != QMX_OK) fz_same(p, snap, pb);
    else {
        v2 = (int8_t *)fz_alloc(n);
        if (qmx_unpack_int4(d, p, pb, n, v2) != QMX_OK || memcmp(v, v2, n) != 0) __builtin_trap();
        if ((n & 1) && (p[n / 2] >> 4)) __builtin_trap();
    }
    /* ggml: Q8_0 and Q4_0 blocks from raw bytes, to qmx and back */
    nb32 = fz_u8(r) % 5;
    bb = nb32 * QMX_GGML_Q8_0_BLOCK_BYTES;
    blocks = (uint8_t *)fz_alloc(bb);
    for (i = 0; i < bb; i++) blocks[i] = (uint8_t)fz_u8(r);
    q8 = (uint8_t *)fz_alloc(nb32 * 32);
    sc = (float *)fz_alloc(nb32 * 4);
    snap = fz_snap(q8, nb32 * 32);
    st = qmx_ggml_q8_0_to_qmx(blocks, bb, nb32 * 32 + ((how & 4) ? 1 : 0), (int8_t *)q8, nb32 * 32, sc, nb32);
    fz_check(st);
    if (st != QMX_OK) fz_same(q8, snap, nb32 * 32);
    else {
        uint8_t *b2 = (uint8_t *)fz_alloc(bb);
        st = qmx_ggml_q8_0_from_qmx((const int8_t *)q8, nb32 * 32, sc, nb32, b2, bb);
        fz_check(st);
        for (i = 0; i < nb32 * 32 && st == QMX_OK; i++) {   /* the same values */
            float a = (float)((const int8_t *)q8)[i] * sc[i / 32];
            float bq = (float)(int8_t)b2[(i / 32) * 34 + 2 + i % 32] *
                       qmx_f16_to_f32((uint16_t)(b2[(i / 32) * 34] | b2[(i / 32) * 34 + 1] << 8));
            if (a != bq) __builtin_trap();
        }
    }
    bb = nb32 * QMX_GGML_Q4_0_BLOCK_BYTES;
    u4 = (uint8_t *)fz_alloc(nb32 * 16);
    sc2 = (float *)fz_alloc(nb32 * 4);
    zp = (int32_t *)fz_alloc(nb32 * 4);
    snap = fz_snap(u4, nb32 * 16);
    st = qmx_ggml_q4_0_to_qmx(blocks, bb, nb32 * 32, u4, nb32 * 16 - ((how & 8) && nb32 ? 1 : 0), sc2, zp, nb32);
    fz_check(st);
    if (st != QMX_OK) fz_same(u4, snap, nb32 * 16);
    else {
        uint8_t *b2 = (uint8_t *)fz_alloc(bb);
        if (qmx_ggml_q4_0_from_qmx(QMX_UINT4, u4, nb32 * 32, sc2, zp, nb32, b2, bb) != QMX_OK)
            __builtin_trap();
        for (i = 0; i < nb32; i++)   /* lossless except d = +-0 (it comes back as 1.0) */
            if ((blocks[18 * i] | (blocks[18 * i + 1] & 0x7F) << 8) != 0 &&
                memcmp(b2 + 18 * i, blocks + 18 * i, 18) != 0)
                __builtin_trap();
    }
}

/* ---- 9: AQT SNR search ---- */
static void fa_snr(fz_rd *r) {
    qmx_qconfig q;
    qmx_rng rng;
    size_t count, np = 0, nc = fz_u8(r) % 6, i, ns;
    float *x, *cand, *sc, *fac;
    void *s1, *s2;
    unsigned how;
    qmx_status st;
    qmx_rng_seed(&rng, 5);
    if (!fa_qcfg(r, &q, &count, &rng)) return;
    if (count > 1024) return;   /* one quantization pass per candidate */
    how = fz_u8(r);
    x = fa_floats(r, count);
    cand = (float *)fz_alloc(nc * 4);
    for (i = 0; i < nc; i++) cand[i] = (how & 1) ? fz_val(r, 0) : (float)(1 + fz_u8(r) % 16) * 0.0625f;
    if (qmx_qparams_count(&q, count, &np) != QMX_OK || np > 4096) np = 1;
    ns = (how & 2) ? np - 1 : np;
    sc = (float *)fz_alloc(ns * 4);
    fac = (float *)fz_alloc(ns * 4);
    s1 = fz_snap(sc, ns * 4);
    s2 = fz_snap(fac, ns * 4);
    st = qmx_calib_snr_search(&q, x, count, cand, nc, sc, ns, (how & 4) ? NULL : fac);
    fz_check(st);
    if (st != QMX_OK) { fz_same(sc, s1, ns * 4); fz_same(fac, s2, ns * 4); return; }
    for (i = 0; i < np; i++) {
        size_t c;
        int found = fac[i] == 1.0f || (how & 4);
        if (fz_isnan(sc[i]) || !(sc[i] >= 0.0f)) __builtin_trap();
        for (c = 0; c < nc; c++) found |= fz_fbits(cand[c]) == fz_fbits(fac[i]);
        if (!found) __builtin_trap();
    }
}

/* ---- 10 (first byte >= 240): fp4 / fp6 / E8M0 codecs and arrays, MX / NVFP4 block formats ---- */
static void fa_lowfloat(fz_rd *r) {
    qmx_dtype fmt = (qmx_dtype)(fz_u8(r) % 2 ? QMX_FP4_E2M1 : (fz_u8(r) % 2 ? QMX_FP6_E2M3 : QMX_FP6_E3M2));
    size_t n = fa_dim(r) * fa_dim(r) * fa_dim(r), nb, i;
    float scale = fa_scale(r), *x = fa_floats(r, n), *y;
    uint8_t *out, *codes;
    void *snap;
    qmx_status st;
    int fp4 = fmt == QMX_FP4_E2M1, rtz = fz_u8(r) & 1;
    if (fz_u8(r) == 0xF0) fmt = (qmx_dtype)fz_enum(r, 23);   /* now and then a wrong format */
    nb = fp4 ? n / 2 + (n & 1) : n;
    out = (uint8_t *)fz_alloc(nb);
    snap = fz_snap(out, nb);
    st = fp4 ? qmx_fp4_quantize_array(x, n, scale, rtz, out)
             : qmx_fp6_quantize_array(fmt, x, n, scale, rtz, out);
    fz_check(st);
    if (st != QMX_OK) fz_same(out, snap, nb);
    else
        for (i = 0; i < n; i++) {   /* the scalar codec of x / s (a NaN x encoded itself) */
            float t = x[i] / scale;
            uint8_t want, got = fp4 ? (uint8_t)((out[i / 2] >> (4 * (i & 1))) & 15) : out[i];
            if (t != t) t = x[i];
            want = fp4 ? qmx_fp4_from_f32(t, rtz) : qmx_fp6_from_f32(t, fmt, rtz);
            if (got != want) __builtin_trap();
            if (fp4 && (n & 1) && (out[n / 2] >> 4) != 0) __builtin_trap();
        }
    if (st == QMX_OK) {   /* the range calls: a bad range writes nothing; [0, 1) is the call */
        size_t tb = fz_u8(r) % 3, te = fz_u8(r) % 3;
        uint8_t *o2 = (uint8_t *)fz_alloc(nb);
        void *s2 = fz_snap(o2, nb);
        st = fp4 ? qmx_fp4_quantize_array_run(x, n, scale, rtz, o2, tb, te)
                 : qmx_fp6_quantize_array_run(fmt, x, n, scale, rtz, o2, tb, te);
        if ((tb > te || te > 1) != (st == QMX_ERR_ARG)) __builtin_trap();
        if (st != QMX_OK || tb == te) fz_same(o2, s2, nb);
        else if (memcmp(o2, out, nb) != 0) __builtin_trap();
    }
    codes = (uint8_t *)fz_alloc(nb);
    for (i = 0; i < nb; i++) codes[i] = (uint8_t)fz_u8(r);
    y = (float *)fz_alloc(n * 4);
    snap = fz_snap(y, n * 4);
    st = fp4 ? qmx_fp4_dequantize_array(codes, n, scale, y)
             : qmx_fp6_dequantize_array(fmt, codes, n, scale, y);
    fz_check(st);
    if (st != QMX_OK) fz_same(y, snap, n * 4);
    else
        for (i = 0; i < n; i++) {
            float v = fp4 ? qmx_fp4_to_f32((uint8_t)((codes[i / 2] >> (4 * (i & 1))) & 15))
                          : qmx_fp6_to_f32(codes[i], fmt);
            if (!fz_same_f(y[i], v * scale)) __builtin_trap();
        }
    for (i = 0; i < 4; i++) {   /* E8M0: down <= up, decode(down) <= |x| <= decode(up) in range */
        float v = fz_val(r, 3), a = v < 0.0f ? -v : v;
        uint8_t dn = qmx_e8m0_from_f32(v, QMX_E8M0_ROUND_DOWN, 1);
        uint8_t up = qmx_e8m0_from_f32(v, QMX_E8M0_ROUND_UP, 1);
        if (a >= 1e-38f && a <= 1e38f &&
            (dn > up || qmx_e8m0_to_f32(dn) > a || qmx_e8m0_to_f32(up) < a)) __builtin_trap();
    }
}
static void fa_mx(fz_rd *r) {
    qmx_mx_config c;
    size_t count, ne = 0, ns = 0, e, nb_el, nb_sc, o, l, i;
    unsigned how = fz_u8(r), v;
    float *x, *y;
    uint8_t *el, *sc;
    void *s1, *s2;
    qmx_status st;
    memset(&c, 0, sizeof c);
    c.format = (qmx_mx_format)fz_enum(r, 7);
    c.rule = (qmx_mx_rule)fz_enum(r, 7);
    c.block_size = fz_u8(r) % 40;
    if (how & 1) c.tensor_scale = fa_scale(r);
    v = fz_u8(r);
    o = fa_dim(r); l = fa_dim(r) * 3; i = fa_dim(r);
    if (v % 4 == 0) { count = l * i; }
    else { c.outer = o; c.axis_len = l; c.inner = i; count = o * l * i + (v % 4 == 3); }
    if (count > 4096) return;
    x = fa_floats(r, count ? count : 1);
    st = qmx_mx_storage(&c, count, &ne, &ns);
    fz_check(st);
    if (st != QMX_OK) { ne = 1 + how % 5; ns = 1 + how % 3; }
    nb_el = (how & 2) && ne ? ne - 1 : ne;
    nb_sc = (how & 4) && ns ? ns - 1 : ns;
    el = (uint8_t *)fz_alloc(nb_el);
    sc = (uint8_t *)fz_alloc(nb_sc);
    s1 = fz_snap(el, nb_el);
    s2 = fz_snap(sc, nb_sc);
    st = qmx_mx_quantize(&c, (how & 8) ? NULL : x, count, el, nb_el, sc, nb_sc);
    fz_check(st);
    if (st != QMX_OK) { fz_same(el, s1, nb_el); fz_same(sc, s2, nb_sc); return; }
    if ((c.format == QMX_MXFP4 || c.format == QMX_NVFP4) && (count & 1) && (el[count / 2] >> 4))
        __builtin_trap();                                   /* the unused high nibble */
    y = (float *)fz_alloc(count * 4);
    if (qmx_mx_dequantize(&c, el, nb_el, sc, nb_sc, count, y) != QMX_OK) __builtin_trap();
    /* the same input gives the same bits (no state, no uninitialised read) */
    {
        uint8_t *el2 = (uint8_t *)fz_alloc(nb_el), *sc2 = (uint8_t *)fz_alloc(nb_sc);
        if (qmx_mx_quantize(&c, x, count, el2, nb_el, sc2, nb_sc) != QMX_OK ||
            memcmp(el, el2, ne) != 0 || memcmp(sc, sc2, ns) != 0)
            __builtin_trap();
    }
    {   /* range calls (qmx_mx_tasks): [tb, te) from the input, out of bounds or reversed ->
         * QMX_ERR_ARG with nothing written; [0, cut) then [cut, nt) -> the serial call's bits */
        size_t nt = 0, tb = fz_u8(r) % 4, te = fz_u8(r) % 4, cut;
        uint8_t *el3 = (uint8_t *)fz_alloc(nb_el), *sc3 = (uint8_t *)fz_alloc(nb_sc);
        float *y3 = (float *)fz_alloc(count * 4);
        void *t1 = fz_snap(el3, nb_el), *t2 = fz_snap(sc3, nb_sc), *t3 = fz_snap(y3, count * 4);
        if (qmx_mx_tasks(&c, count, &nt) != QMX_OK || nt == 0) __builtin_trap();
        st = qmx_mx_quantize_run(&c, x, count, el3, nb_el, sc3, nb_sc, tb, te);
        fz_check(st);
        if ((tb > te || te > nt) != (st == QMX_ERR_ARG) || (st != QMX_OK && st != QMX_ERR_ARG))
            __builtin_trap();
        if (st != QMX_OK || tb == te) { fz_same(el3, t1, nb_el); fz_same(sc3, t2, nb_sc); }
        st = qmx_mx_dequantize_run(&c, el, nb_el, sc, nb_sc, count, y3, te, tb);
        if ((te > tb || tb > nt) != (st == QMX_ERR_ARG)) __builtin_trap();
        if (st != QMX_OK || tb == te) fz_same(y3, t3, count * 4);
        cut = tb < nt ? tb : nt;
        if (qmx_mx_quantize_run(&c, x, count, el3, nb_el, sc3, nb_sc, cut, nt) != QMX_OK ||
            qmx_mx_quantize_run(&c, x, count, el3, nb_el, sc3, nb_sc, 0, cut) != QMX_OK ||
            qmx_mx_dequantize_run(&c, el, nb_el, sc, nb_sc, count, y3, 0, nt) != QMX_OK ||
            memcmp(el, el3, ne) != 0 || memcmp(sc, sc3, ns) != 0 || memcmp(y, y3, count * 4) != 0)
            __builtin_trap();
    }
    for (e = 0; e < count; e++)   /* an element of an exact (x == y) value keeps its sign */
        if (fz_finite(x[e]) && fz_finite(y[e]) && x[e] == y[e] && x[e] != 0.0f &&
            ((fz_fbits(x[e]) ^ fz_fbits(y[e])) >> 31))
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_rd r;
    r.p = data;
    r.n = size;
    unsigned op = fz_u8(&r);
    if (op >= 240) {   /* (no older corpus input starts with 240..255) */
        if (op & 1) fa_mx(&r); else fa_lowfloat(&r);
        fz_free_all();
        return 0;
    }
    switch (op % 10) {
    case 0: fa_quantize(&r); break;
    case 1: fa_dequantize(&r); break;
    case 2: fa_fp8_arrays(&r); break;
    case 3: fa_requant(&r); break;
    case 4: fa_observer(&r); break;
    case 5: fa_histogram(&r); break;
    case 6: fa_delayed(&r); break;
    case 7: fa_nm(&r); break;
    case 8: fa_pack(&r); break;
    default: fa_snr(&r); break;
    }
    fz_free_all();
    return 0;
}
