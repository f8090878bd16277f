/* demo_int8.h - the digits MLP as an int8 integer-only model, and its inference: the part of
 * the demo that ships in firmware. Included by examples/demo.c (which builds, evaluates and
 * exports the model) and examples/demo_mcu.c (which runs the exported model on a Cortex-M).
 *
 * Layers (TFLite / CMSIS-NN fully-connected, qmx_fully_connected_i8):
 *   x   int8 [64], scale s_in, zero point 0 (pixels in [0, 1]: s_in = 1/127)
 *   h   = clamp(requant(W1 x + b1), 0, 127)       int8 [32], the ReLU fused into the clamp
 *   y   = requant(W2 h + b2)                       int16 [10], one common logit scale
 *   W1 [32][64], W2 [10][32] int8, symmetric per output channel (TFLite recipe, absmax/127);
 *   biases int32 at the accumulator scales; (multiplier, shift) pairs from
 *   qmx_quantize_multiplier. No float arithmetic anywhere in demo_int8_classify. */
#ifndef QMX_DEMO_INT8_H
#define QMX_DEMO_INT8_H
#include "qmx_kernels.h"

enum { DEMO_NPIX = 64, DEMO_NHID = 32, DEMO_NCLS = 10 };

typedef struct demo_int8_model {
    int8_t w1[DEMO_NHID * DEMO_NPIX];
    int32_t b1[DEMO_NHID], m1[DEMO_NHID];
    int sh1[DEMO_NHID];
    int8_t w2[DEMO_NCLS * DEMO_NHID];
    int32_t b2[DEMO_NCLS], m2[DEMO_NCLS];
    int sh2[DEMO_NCLS];
} demo_int8_model;

/* Workspace of one classification: the larger of the two layers' needs (about 1.4 KiB). */
#define DEMO_INT8_WORKSPACE 4096

/* The class of one image x (int8 [64]); -1 on a qmx error. */
static int demo_int8_classify(const demo_int8_model *m, const int8_t *x, void *ws) {
    qmx_requant_config rc = QMX_ZERO_INIT;
    int8_t h[DEMO_NHID];
    int16_t y[DEMO_NCLS];
    int j, best = 0;
    rc.per_channel = 1;
    rc.multipliers = m->m1; rc.shifts = m->sh1; rc.bias = m->b1;
    rc.act_min = 0; rc.act_max = 127;     /* ReLU: the hidden zero point is 0 */
    if (qmx_fully_connected_i8(1, DEMO_NHID, DEMO_NPIX, x, DEMO_NPIX, 0, m->w1, DEMO_NPIX, &rc,
                               h, DEMO_NHID, ws, DEMO_INT8_WORKSPACE) != QMX_OK)
        return -1;
    rc.multipliers = m->m2; rc.shifts = m->sh2; rc.bias = m->b2;
    rc.act_min = 0; rc.act_max = 0;       /* the full int16 range */
    rc.out_dtype = QMX_INT16;
    if (qmx_fully_connected_i8(1, DEMO_NCLS, DEMO_NHID, h, DEMO_NHID, 0, m->w2, DEMO_NHID, &rc,
                               y, DEMO_NCLS, ws, DEMO_INT8_WORKSPACE) != QMX_OK)
        return -1;
    for (j = 1; j < DEMO_NCLS; j++)
        if (y[j] > y[best]) best = j;    /* ties: the lower class, on every target */
    return best;
}
#endif
