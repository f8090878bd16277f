/* bench_rvv.c - executed instructions of qmx kernels on RISC-V under QEMU (make bench-riscv;
 * tools/riscv_count.sh counts between the markers of bench/cortexm/markers.c). Regions:
 *   0 qmx_fully_connected_i8 batch 1   1 batch 4   (1024 -> 1024, per-channel double-rounding
 *     requantization, input zero point BENCH_AZP, default -3)
 *   2 qmx_quantize int8, per tensor, AQT recipe, NQ elements
 *   3 qmx_fully_connected_i4 batch 1   4 batch 4   (int4 weights, otherwise as 0 / 1)
 * Each region's result is checked outside it (fully-connected: an int64 reference through
 * qmx_requantize; quantize: |q * s - x| <= s / 2 and |q| <= 127), so a wrong kernel cannot
 * report a count. The same program is built for the portable path (riscv64) and RVV. */
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
#define NQ 65536

void qmx_region_begin(void);
void qmx_region_end(void);

static int8_t A[BMAX * NIN];
static int8_t W8[NOUT * NIN];
static uint8_t W4[NOUT * NIN / 2];
static int8_t out[BMAX * NOUT];
static int32_t mult[NOUT], bias[NOUT];
static int shift[NOUT];
static unsigned char ws[64 * 1024 + 4 * NIN * 2 + 4096];
static float xq[NQ];
static int8_t q8[NQ];

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

int main(void) {
    qmx_requant_config rq;
    qmx_qconfig qc = QMX_ZERO_INIT;
    size_t i, need = 0, M;
    float sc = 0.0f;
    int bad = 0;
    qmx_status st;
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
    for (M = 1; M <= BMAX; M += 3) {
        if (qmx_fully_connected_i8_workspace_size(M, NOUT, NIN, &need) != QMX_OK || need > sizeof ws) {
            printf("workspace too small (%lu)\n", (unsigned long)need);
            return 1;
        }
        qmx_region_begin();
        st = qmx_fully_connected_i8(M, NOUT, NIN, A, NIN, BENCH_AZP, W8, NIN, &rq, out, NOUT, ws, need);
        qmx_region_end();
        i = (size_t)check(0, M);
        printf("fc int8 batch %lu: status %d, %lu wrong\n", (unsigned long)M, (int)st, (unsigned long)i);
        bad += st != QMX_OK || i != 0;
    }
    for (i = 0; i < NQ; i++) xq[i] = (float)((int32_t)(rnd() % 2000001u) - 1000000) * 1e-4f;
    st = qmx_compute_qparams(&qc, xq, NQ, &sc, 1, NULL);
    qmx_region_begin();
    if (st == QMX_OK) st = qmx_quantize(&qc, xq, NQ, &sc, 1, NULL, q8, sizeof q8);
    qmx_region_end();
    for (i = 0, need = 0; st == QMX_OK && i < NQ; i++) {
        float d = (float)q8[i] * sc - xq[i];
        need += q8[i] < -127 || d > 0.5001f * sc || d < -0.5001f * sc;
    }
    printf("quantize int8 %d elements: status %d, %lu wrong\n", NQ, (int)st, (unsigned long)need);
    bad += st != QMX_OK || need != 0;
    for (M = 1; M <= BMAX; M += 3) {
        if (qmx_matmul_i4_workspace_size(M, NOUT, NIN, NULL, &need) != QMX_OK || need > sizeof ws) {
            printf("workspace too small (%lu)\n", (unsigned long)need);
            return 1;
        }
        qmx_region_begin();
        st = qmx_fully_connected_i4(M, NOUT, NIN, A, NIN, BENCH_AZP, W4, NIN, &rq, out, NOUT, ws, need);
        qmx_region_end();
        i = (size_t)check(1, M);
        printf("fc int4 batch %lu: status %d, %lu wrong\n", (unsigned long)M, (int)st, (unsigned long)i);
        bad += st != QMX_OK || i != 0;
    }
    return bad != 0;
}
