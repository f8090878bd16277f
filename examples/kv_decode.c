/* kv_decode.c - an autoregressive decode loop over a quantized KV cache (qmx_kv_*), per format.
 *
 *   make demo      (runs it after the digits demo; or: build/kv_decode [context] [steps])
 *
 * One attention layer of a Llama-3-8B-like shape (32 query heads, 8 KV heads, head_dim 128):
 * a prompt of `context` tokens is prefilled into the cache, then `steps` tokens are decoded,
 * each appending its key/value and attending over everything before it. The data is
 * synthetic but shaped like a model's: keys have a few outlier channels (8x the rest, the
 * case that makes per-token int8 keys lose precision), and each query is a noisy copy of an
 * earlier key, so attention is peaked on a few positions as in retrieval heads.
 * Printed per format: cache bytes per token (data + scales), the attention output's error
 * against the same loop on a float32 cache (relative L2 over all decode steps, and the worst
 * step), and decode speed (attention steps per second, append included, single thread).
 * The "block32" rows use one scale per 32 elements of head_dim (QMX_KV_BLOCK, as llama.cpp's
 * q8_0 / q4_0 caches); 3 of the 4 blocks of each key head hold an outlier channel here.
 * All storage comes from the storage/workspace queries; the library allocates nothing. */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "kv_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NKV 8
#define NH 32
#define HD 128

static kv_synth rs = {7u};
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}


int main(int argc, char **argv) {
    static const kv_format F[] = {
        {"float32", QMX_FLOAT32, QMX_FLOAT32, QMX_KV_HEADS_AND_DKV, QMX_KV_HEADS_AND_DKV, 0, 0},
        {"int8 (MaxText heads_and_dkv)", QMX_INT8, QMX_INT8, QMX_KV_HEADS_AND_DKV, QMX_KV_HEADS_AND_DKV, 0, 0},
        {"int8 dkv", QMX_INT8, QMX_INT8, QMX_KV_DKV, QMX_KV_DKV, 0, 0},
        {"int8 dkv, float query", QMX_INT8, QMX_INT8, QMX_KV_DKV, QMX_KV_DKV, 1, 0},
        {"int8, K per-channel (KIVI)", QMX_INT8, QMX_INT8, QMX_KV_CHANNEL, QMX_KV_DKV, 0, 0},
        {"int8 dkv, Hadamard-rotated", QMX_INT8, QMX_INT8, QMX_KV_DKV, QMX_KV_DKV, 0, 1},
        {"int4 dkv", QMX_INT4, QMX_INT4, QMX_KV_DKV, QMX_KV_DKV, 0, 0},
        {"int4 dkv, Hadamard-rotated", QMX_INT4, QMX_INT4, QMX_KV_DKV, QMX_KV_DKV, 0, 1},
        {"int4, K per-channel (KIVI)", QMX_INT4, QMX_INT4, QMX_KV_CHANNEL, QMX_KV_DKV, 0, 0},
        {"fp8 e4m3fn dkv", QMX_FP8_E4M3FN, QMX_FP8_E4M3FN, QMX_KV_DKV, QMX_KV_DKV, 0, 0},
        {"fp8 e5m2 dkv", QMX_FP8_E5M2, QMX_FP8_E5M2, QMX_KV_DKV, QMX_KV_DKV, 0, 0},
        /* grouped scales along head_dim (QMX_KV_BLOCK, blocks of 32, binary16 scales unless
         * the name says bf16 / f32): llama.cpp's q8_0 / q4_0 layout */
        {"int8 block32 f16", QMX_INT8, QMX_INT8, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 0},
        {"int8 block32 bf16", QMX_INT8, QMX_INT8, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 0},
        {"int4 block32 f16", QMX_INT4, QMX_INT4, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 0},
        {"int4 block32 f32", QMX_INT4, QMX_INT4, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 0},
        {"int4 block32 f16, rotated", QMX_INT4, QMX_INT4, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 1},
        {"int4 KIVI K + block32 f16 V", QMX_INT4, QMX_INT4, QMX_KV_CHANNEL, QMX_KV_BLOCK, 0, 0},
        {"fp8 e4m3fn block32 f16", QMX_FP8_E4M3FN, QMX_FP8_E4M3FN, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 0},
    };
    enum { NF = sizeof F / sizeof F[0] };
    size_t ctx = argc > 1 ? (size_t)atol(argv[1]) : 2048, steps = argc > 2 ? (size_t)atol(argv[2]) : 128;
    size_t total, per = (size_t)NKV * HD, i, s, f;
    float *K, *V, *Q, *ref, *out, *pre_out;
    if (ctx < 1 || steps < 1 || ctx > 1000000 || steps > 100000) {
        fprintf(stderr, "usage: kv_decode [context >= 1] [steps >= 1]\n");
        return 2;
    }
    total = ctx + steps;
    K = (float *)malloc(4 * total * per);
    V = (float *)malloc(4 * total * per);
    Q = (float *)malloc(4 * total * NH * HD);
    ref = (float *)malloc(4 * steps * NH * HD);
    out = (float *)malloc(4 * NH * HD);
    pre_out = (float *)malloc(4 * 64 * NH * HD);
    if (!K || !V || !Q || !ref || !out || !pre_out) return 1;
    kv_synth_fill(&rs, total, NKV, NH, HD, K, V, Q);
    printf("kv_decode: one attention layer, %d query heads, %d KV heads, head_dim %d;\n"
           "  prefill %u tokens, then decode %u tokens (each: append + attention over all before it)\n\n",
           NH, NKV, HD, (unsigned)ctx, (unsigned)steps);
    printf("  %-30s %8s %14s %12s %11s\n", "format", "B/token", "err vs f32 L2", "worst step", "tokens/s");
    for (f = 0; f < NF; f++) {
        qmx_kv_config cfg;
        qmx_kv_cache c;
        qmx_kv_attn_opts o;
        size_t sb = 0, wb = 0, done;
        void *st, *ws;
        double t0, dt, num = 0, den = 0, worst = 0;
        qmx_status e;
        memset(&cfg, 0, sizeof cfg);
        memset(&o, 0, sizeof o);
        cfg.capacity = total; cfg.n_kv_heads = NKV; cfg.head_dim = HD;
        cfg.k_dtype = F[f].k; cfg.v_dtype = F[f].v; cfg.k_axis = F[f].kax; cfg.v_axis = F[f].vax;
        cfg.channel_block = 32;
        cfg.rotate = F[f].rotate;
        if (F[f].kax == QMX_KV_BLOCK || F[f].vax == QMX_KV_BLOCK)
            cfg.block_scale = strstr(F[f].name, "bf16") ? QMX_KV_SCALE_BF16
                            : strstr(F[f].name, "f32") ? QMX_KV_SCALE_F32 : QMX_KV_SCALE_F16;
        cfg.capacity = (total + 31) / 32 * 32;
        o.float_query = F[f].float_query;
        if (qmx_kv_cache_storage_size(&cfg, &sb) != QMX_OK ||
            qmx_kv_attention_workspace_size(&cfg, NH, &wb) != QMX_OK) return 1;
        st = malloc(sb);
        ws = malloc(wb);
        if (!st || !ws || qmx_kv_cache_init(&c, &cfg, st, sb) != QMX_OK) return 1;
        /* prompt: the first 64 tokens through the prefill helper (causal attention of each),
         * the rest appended in one call */
        done = ctx < 64 ? ctx : 64;
        e = qmx_kv_prefill(&c, K, V, done, Q, NH, &o, pre_out, ws, wb);
        if (e == QMX_OK && ctx > done) e = qmx_kv_cache_append(&c, K + done * per, V + done * per, ctx - done);
        if (e != QMX_OK) { printf("  %s: %s\n", F[f].name, qmx_status_str(e)); return 1; }
        t0 = now();
        for (s = 0; s < steps && e == QMX_OK; s++) {
            size_t t = ctx + s;
            e = qmx_kv_cache_append(&c, K + t * per, V + t * per, 1);
            if (e == QMX_OK) e = qmx_kv_attention(&c, Q + t * NH * HD, NH, &o, f ? out : ref + s * NH * HD, ws, wb);
            if (f && e == QMX_OK) {
                double n1 = 0, d1 = 0;
                for (i = 0; i < NH * HD; i++) {
                    double a = (double)out[i] - (double)ref[s * NH * HD + i], b = (double)ref[s * NH * HD + i];
                    n1 += a * a; d1 += b * b;
                }
                num += n1; den += d1;
                if (sqrt(n1 / d1) > worst) worst = sqrt(n1 / d1);
            }
        }
        dt = now() - t0;
        if (e != QMX_OK) { printf("  %s: %s\n", F[f].name, qmx_status_str(e)); return 1; }
        printf("  %-30s %8u %14.2e %12.2e %11.0f\n", F[f].name, (unsigned)qmx_kv_cache_bytes_per_token(&cfg),
               f ? sqrt(num / den) : 0.0, worst, (double)steps / dt);
        free(st);
        free(ws);
    }
    printf("\n  (err: ||out - out_f32|| / ||out_f32|| over the decode steps; bytes per token of the\n"
           "   float32 cache: %d; the KIVI formats also keep <= 32 recent keys in float32)\n", 2 * NKV * HD * 4);
    free(K); free(V); free(Q); free(ref); free(out); free(pre_out);
    return 0;
}
