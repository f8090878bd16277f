/* kv_synth.h - synthetic attention data shared by examples/kv_decode.c, bench/bench_kv.c and
 * tests/test_kvcache.c.
 *
 * Keys and values are sums of four uniform draws (a bell-shaped, normal-like distribution)
 * from a seeded xorshift32, so every run and every machine sees the same data; the callers
 * scale a few key channels up (outlier channels, what makes per-token key quantization hard).
 * Also the description of one KV-cache format under test. */
#ifndef KV_SYNTH_H
#define KV_SYNTH_H
#include <stddef.h>
#include <stdint.h>
#include "qmx_kernels.h"

typedef struct kv_synth { uint32_t s; } kv_synth;

static uint32_t kv_synth_u32(kv_synth *r) {
    r->s ^= r->s << 13; r->s ^= r->s >> 17; r->s ^= r->s << 5;
    return r->s;
}
/* sum of four uniforms in [-1, 1), halved: mean 0, variance 1/6, range (-2, 2) */
static float kv_synth_normal(kv_synth *r) {
    float s = 0;
    int i;
    for (i = 0; i < 4; i++) s += (float)(kv_synth_u32(r) >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    return 0.5f * s;
}

/* kv_decode's data for `total` tokens of nkv KV heads of hd and nh query heads: K, V
 * [total][nkv][hd], channels 9, 70 and 101 of every key 8x the rest (outliers, 3 of 4 blocks of
 * 32 hold one when hd = 128); Q [total][nh][hd], the query of token t, head j a noisy copy of
 * the key of an earlier token (KV head j / (nh / nkv)). */
#if defined(__GNUC__)
__attribute__((unused))   /* (bench_kv.c makes its own data) */
#endif
static void kv_synth_fill(kv_synth *rs, size_t total, size_t nkv, size_t nh, size_t hd, float *K,
                          float *V, float *Q) {
    size_t i, s, per = nkv * hd;
    for (i = 0; i < total * per; i++) {
        size_t c = i % hd;
        K[i] = kv_synth_normal(rs) * ((c == 9 || c == 70 || c == 101) ? 8.0f : 1.0f);
        V[i] = kv_synth_normal(rs);
    }
    for (s = 0; s < total; s++)
        for (i = 0; i < nh; i++) {
            size_t src = s ? (size_t)(rs->s % (uint32_t)s) : 0, d;
            kv_synth_normal(rs);
            for (d = 0; d < hd; d++)
                Q[(s * nh + i) * hd + d] =
                    0.35f * K[(src * nkv + i / (nh / nkv)) * hd + d] + 0.5f * kv_synth_normal(rs);
        }
}

/* One cache format: K and V dtypes and scale axes, query quantized or float, Hadamard rotation. */
typedef struct kv_format {
    const char *name;
    qmx_dtype k, v;
    qmx_kv_axis kax, vax;
    int float_query, rotate;
} kv_format;

#endif
