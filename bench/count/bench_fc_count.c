/* bench_fc_count.c - qmx kernels measured in executed instructions under QEMU, between the
 * noinline markers of markers.c (tools/cortexm_count.sh for Cortex-M4 / M55: make
 * bench-cortex-m; tools/riscv_count.sh for RISC-V portable vs RVV: make bench-riscv).
 * Regions, in this order, each batch x 1024 -> 1024, per-channel double-rounding requant:
 *   0 qmx_fully_connected_i8  batch 1      1 qmx_fully_connected_i8  batch 4
 *   2 qmx_fully_connected_i4  batch 1      3 qmx_fully_connected_i4  batch 4
 * With -DBENCH_S16 (tools/cortexm_count.sh: in the input-zero-point-0 run) eight more follow,
 * qmx_fully_connected_i16 (int16 x int8 -> int16, TFLite 16x8), weight zero point 0:
 *   4 K 512 per tensor batch 1    5 K 512 per tensor batch 4
 *   6 K 512 per channel batch 1   7 K 512 per channel batch 4     (K -> 1024 outputs)
 *   8 .. 11 the same with K 1024
 * With -DBENCH_QUANT (tools/riscv_count.sh) one more: qmx_quantize, int8, per tensor, AQT
 * recipe, NQ floats (checked: |q * s - x| <= s / 2 and |q| <= 127).
 * The input zero point is BENCH_AZP (default -3, an asymmetric int8 input as TFLite gives;
 * -DBENCH_AZP=0 for a symmetric one). After each region the outputs are checked against an
 * int64 reference through qmx_requantize (outside the region), so a wrong kernel cannot
 * report a count. */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

#ifndef BENCH_AZP
#define BENCH_AZP (-3)
#endif
#define NIN 1024
#define NOUT 1024
#define BMAX 4

void qmx_region_begin(void);
void qmx_region_end(void);

static int8_t A[BMAX * NIN];
static int8_t W8[NOUT * NIN];
static uint8_t W4[NOUT * NIN / 2];
static int8_t out[BMAX * NOUT];
static int32_t mult[NOUT], bias[NOUT];
static int shift[NOUT];
static unsigned char ws[64 * 1024 + 4 * NIN * 2 + 4096];

static uint32_t s = 12345u;
static uint32_t rnd(void) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return s; }

static int check(int i4, size_t M) {
    size_t m, n, k;
    int bad = 0;
    for (m = 0; m < M; m++)
        for (n = 0; n < NOUT; n++) {
            int64_t acc = 0;
            int32_t v;
            for (k = 0; k < NIN; k++) {
                int32_t w = i4 ? (int32_t)(((W4[(n * NIN + k) / 2] >> (4 * (k & 1))) & 15) ^ 8) - 8
                               : W8[n * NIN + k];
                acc += ((int64_t)A[m * NIN + k] - BENCH_AZP) * w;
            }
            v = qmx_requantize((int32_t)acc + bias[n], mult[n], shift[n]);
            v = v < -128 ? -128 : (v > 127 ? 127 : v);
            bad += out[m * NOUT + n] != v;
        }
    return bad;
}

#ifdef BENCH_S16
static int16_t A16[BMAX * NIN], out16[BMAX * NOUT];
static int32_t mult16[NOUT];
static int shift16[NOUT];
static int64_t bias16[NOUT];

static int check16(size_t M, size_t K, const qmx_requant64_config *rq) {
    size_t m, n, k;
    int bad = 0;
    for (m = 0; m < M; m++)
        for (n = 0; n < NOUT; n++) {
            size_t c = rq->per_channel ? n : 0;
            int64_t acc = 0;
            int32_t v;
            for (k = 0; k < K; k++) acc += (int64_t)A16[m * K + k] * W8[n * K + k];
            v = qmx_requantize64(acc + bias16[n], mult16[c], shift16[c]);
            v = v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
            bad += out16[m * NOUT + n] != v;
        }
    return bad;
}

/* regions 4 .. 11: qmx_fully_connected_i16, K x {per tensor, per channel} x batch {1, 4} */
static int bench_s16(void) {
    qmx_requant64_config rq;
    size_t i, K, M, need = 0;
    int pc, bad = 0;
    for (i = 0; i < BMAX * NIN; i++) A16[i] = (int16_t)rnd();
    for (i = 0; i < NOUT; i++) {
        mult16[i] = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
        shift16[i] = -10 - (int)(rnd() % 3);
        bias16[i] = (int64_t)(rnd() % 2000001u) - 1000000;
    }
    memset(&rq, 0, sizeof rq);
    rq.multipliers = mult16; rq.shifts = shift16; rq.bias = bias16;
    for (K = 512; K <= NIN; K *= 2)
        for (pc = 0; pc <= 1; pc++)
            for (M = 1; M <= 4; M += 3) {
                qmx_status st;
                rq.per_channel = pc;
                if (qmx_fully_connected_i16_workspace_size(M, NOUT, K, &need) != QMX_OK ||
                    need > sizeof ws) {
                    printf("s16 workspace too small (%lu)\n", (unsigned long)need);
                    return 1;
                }
                qmx_region_begin();   /* A [M,K], W8 as [NOUT,K] */
                st = qmx_fully_connected_i16(M, NOUT, K, A16, K, W8, K, 0, &rq, out16, NOUT, ws,
                                             need);
                qmx_region_end();
                i = (size_t)check16(M, K, &rq);
                printf("fc int16 K %lu %s batch %lu: status %d, %lu wrong\n", (unsigned long)K,
                       pc ? "per channel" : "per tensor", (unsigned long)M, (int)st,
                       (unsigned long)i);
                bad += st != QMX_OK || i != 0;
            }
    return bad;
}
#endif

#ifdef BENCH_QUANT
#define NQ 65536
static float xq[NQ];
static int8_t q8[NQ];

/* the last region: qmx_quantize int8 per tensor (AQT), scales computed outside the region */
static int bench_quant(void) {
    qmx_qconfig qc = QMX_ZERO_INIT;
    float sc = 0.0f;
    size_t i, wrong = 0;
    qmx_status st;
    for (i = 0; i < NQ; i++) xq[i] = (float)((int32_t)(rnd() % 2000001u) - 1000000) * 1e-4f;
    st = qmx_compute_qparams(&qc, xq, NQ, &sc, 1, NULL);
    qmx_region_begin();
    if (st == QMX_OK) st = qmx_quantize(&qc, xq, NQ, &sc, 1, NULL, q8, sizeof q8);
    qmx_region_end();
    for (i = 0; st == QMX_OK && i < NQ; i++) {
        float d = (float)q8[i] * sc - xq[i];
        wrong += q8[i] < -127 || d > 0.5001f * sc || d < -0.5001f * sc;
    }
    printf("quantize int8 %d elements: status %d, %lu wrong\n", NQ, (int)st, (unsigned long)wrong);
    return st != QMX_OK || wrong != 0;
}
#endif

int main(void) {
    qmx_requant_config rq;
    size_t i, need8 = 0, need4 = 0, M;
    int bad = 0;
    for (i = 0; i < sizeof A; i++) A[i] = (int8_t)rnd();
    for (i = 0; i < sizeof W8; i++) W8[i] = (int8_t)rnd();
    for (i = 0; i < sizeof W4; i++) W4[i] = (uint8_t)rnd();
    for (i = 0; i < NOUT; i++) {
        mult[i] = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
        shift[i] = -9 - (int)(rnd() % 3);
        bias[i] = (int32_t)(rnd() % 20001u) - 10000;
    }
    memset(&rq, 0, sizeof rq);
    rq.per_channel = 1; rq.multipliers = mult; rq.shifts = shift; rq.bias = bias;
    for (M = 1; M <= 4; M += 3) {
        if (qmx_fully_connected_i8_workspace_size(M, NOUT, NIN, &need8) != QMX_OK ||
            qmx_matmul_i4_workspace_size(M, NOUT, NIN, NULL, &need4) != QMX_OK ||
            need8 > sizeof ws || need4 > sizeof ws) {
            printf("workspace too small (%lu, %lu)\n", (unsigned long)need8, (unsigned long)need4);
            return 1;
        }
    }
    for (M = 1; M <= 4; M += 3) {
        qmx_status st;
        qmx_fully_connected_i8_workspace_size(M, NOUT, NIN, &need8);
        qmx_region_begin();
        st = qmx_fully_connected_i8(M, NOUT, NIN, A, NIN, BENCH_AZP, W8, NIN, &rq, out, NOUT, ws, need8);
        qmx_region_end();
        i = (size_t)check(0, M);
        printf("fc int8 batch %lu: status %d, %lu wrong\n", (unsigned long)M, (int)st, (unsigned long)i);
        bad += st != QMX_OK || i != 0;
    }
    for (M = 1; M <= 4; M += 3) {
        qmx_status st;
        qmx_matmul_i4_workspace_size(M, NOUT, NIN, NULL, &need4);
        qmx_region_begin();
        st = qmx_fully_connected_i4(M, NOUT, NIN, A, NIN, BENCH_AZP, W4, NIN, &rq, out, NOUT, ws, need4);
        qmx_region_end();
        i = (size_t)check(1, M);
        printf("fc int4 batch %lu: status %d, %lu wrong\n", (unsigned long)M, (int)st, (unsigned long)i);
        bad += st != QMX_OK || i != 0;
    }
#ifdef BENCH_S16
    bad += bench_s16();
#endif
#ifdef BENCH_QUANT
    bad += bench_quant();
#endif
    return bad != 0;
}
