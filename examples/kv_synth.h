/* kv_synth.h - synthetic attention data shared by examples/kv_decode.c and bench/bench_kv.c.
 *
 * Keys and values are sums of four uniform draws (a bell-shaped, normal-like distribution)
 * from a seeded xorshift32, so every run and every machine sees the same data; the callers
 * scale a few key channels up (outlier channels, what makes per-token key quantization hard).
 * Also the description of one KV-cache format under test. */
#ifndef KV_SYNTH_H
#define KV_SYNTH_H
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

/* One cache format: K and V dtypes and scale axes, query quantized or float, Hadamard rotation. */
typedef struct kv_format {
    const char *name;
    qmx_dtype k, v;
    qmx_kv_axis kax, vax;
    int float_query, rotate;
} kv_format;

#endif
