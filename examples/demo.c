/* demo.c - a small end-to-end quantized model on real data with qmx.
 *
 * Data: the UCI handwritten digits (examples/data/digits.csv, 1,797 8x8 images). Every fifth
 * image is held out for testing; the rest train a 64-32-10 MLP in float32 with plain SGD and a
 * fixed seed (deterministic). The trained weights are then quantized with qmx in several
 * formats and granularities, and the held-out images are classified with each.
 *
 * Two kinds of inference are shown:
 *   - weight-only: weights quantized and dequantized (what AQT/Qwix "fake quant" serve),
 *     activations in float;
 *   - int8 integer-only: activations quantized with a calibrated static scale, int32
 *     accumulation, and qmx's fixed-point requantization (TFLite/CMSIS-NN output stage) between
 *     the layers: no float arithmetic inside the inference loop.
 * It prints one table: format, accuracy, weight bytes, weight SQNR, time per sample.
 *
 * Build and run: make demo   (or: cc -O2 -I. examples/demo.c -o demo && ./demo)
 */
#define QMX_IMPLEMENTATION
#include "qmx.h"

#include <stdio.h>
#include <string.h>
#include <math.h>
#include <time.h>

enum { NPIX = 64, NHID = 32, NCLS = 10, MAXIMG = 1797 };

static float g_x[MAXIMG][NPIX];
static int g_y[MAXIMG];
static int g_n;

/* model: h = relu(W1 x + b1) (W1 is [NHID][NPIX]); logits = W2 h + b2 (W2 is [NCLS][NHID]) */
typedef struct mlp { float w1[NHID * NPIX], b1[NHID], w2[NCLS * NHID], b2[NCLS]; } mlp;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int load(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1024];
    if (!f) { fprintf(stderr, "demo: cannot open %s (run from the repository root)\n", path); return 0; }
    while (g_n < MAXIMG && fgets(line, sizeof line, f)) {
        char *p = line;
        int i;
        for (i = 0; i <= NPIX; i++) {
            long v = strtol(p, &p, 10);
            if (*p == ',') p++;
            if (i < NPIX) g_x[g_n][i] = (float)v / 16.0f;
            else g_y[g_n] = (int)v;
        }
        g_n++;
    }
    fclose(f);
    return g_n == MAXIMG;
}
static int is_test(int i) { return i % 5 == 0; }

static void forward(const mlp *m, const float *x, float *h, float *logits) {
    int j, k;
    for (j = 0; j < NHID; j++) {
        float a = m->b1[j];
        for (k = 0; k < NPIX; k++) a += m->w1[j * NPIX + k] * x[k];
        h[j] = a > 0.0f ? a : 0.0f;
    }
    for (j = 0; j < NCLS; j++) {
        float a = m->b2[j];
        for (k = 0; k < NHID; k++) a += m->w2[j * NHID + k] * h[k];
        logits[j] = a;
    }
}
static int argmax(const float *v, int n) {
    int i, b = 0;
    for (i = 1; i < n; i++) if (v[i] > v[b]) b = i;
    return b;
}

static void train(mlp *m) {
    qmx_rng rng;
    int i, e, j, k;
    float h[NHID], lg[NCLS], dl[NCLS], dh[NHID];
    qmx_rng_seed(&rng, 2026);
    for (i = 0; i < NHID * NPIX; i++) m->w1[i] = qmx_rng_next_noise(&rng) * 0.35f;
    for (i = 0; i < NCLS * NHID; i++) m->w2[i] = qmx_rng_next_noise(&rng) * 0.7f;
    memset(m->b1, 0, sizeof m->b1);
    memset(m->b2, 0, sizeof m->b2);
    for (e = 0; e < 40; e++) {
        float lr = 0.05f * (1.0f - (float)e / 45.0f);
        for (i = 0; i < g_n; i++) {
            float mx, sum = 0.0f;
            int s = (int)((unsigned)(i * 7919 + e * 104729) % (unsigned)g_n); /* fixed shuffle */
            if (is_test(s)) continue;
            forward(m, g_x[s], h, lg);
            mx = lg[argmax(lg, NCLS)];
            for (j = 0; j < NCLS; j++) { dl[j] = expf(lg[j] - mx); sum += dl[j]; }
            for (j = 0; j < NCLS; j++) dl[j] = dl[j] / sum - (j == g_y[s] ? 1.0f : 0.0f);
            for (k = 0; k < NHID; k++) {
                float g = 0.0f;
                for (j = 0; j < NCLS; j++) g += dl[j] * m->w2[j * NHID + k];
                dh[k] = h[k] > 0.0f ? g : 0.0f;
            }
            for (j = 0; j < NCLS; j++) {
                for (k = 0; k < NHID; k++) m->w2[j * NHID + k] -= lr * dl[j] * h[k];
                m->b2[j] -= lr * dl[j];
            }
            for (j = 0; j < NHID; j++) {
                for (k = 0; k < NPIX; k++) m->w1[j * NPIX + k] -= lr * dh[j] * g_x[s][k];
                m->b1[j] -= lr * dh[j];
            }
        }
    }
}

/* accuracy on the held-out images and the time per image */
static double evaluate(const mlp *m, double *us_per_img) {
    int i, ok = 0, n = 0, rep;
    float h[NHID], lg[NCLS];
    double t0 = now_s();
    for (rep = 0; rep < 20; rep++)
        for (i = 0; i < g_n; i++) {
            if (!is_test(i)) continue;
            forward(m, g_x[i], h, lg);
            if (rep == 0) { ok += argmax(lg, NCLS) == g_y[i]; n++; }
        }
    *us_per_img = (now_s() - t0) / (20.0 * n) * 1e6;
    return 100.0 * ok / n;
}

static double sqnr_db(const float *ref, const float *q, int n) {
    double s = 0, e = 0;
    int i;
    for (i = 0; i < n; i++) { s += (double)ref[i] * ref[i]; e += (double)(ref[i] - q[i]) * (ref[i] - q[i]); }
    return e == 0 ? 999.0 : 10.0 * log10(s / e);
}

/* Quantize then dequantize one weight matrix [rows][cols] in place with cfg; returns bytes
 * of storage (values + scales + zero points). */
static size_t qdq(qmx_qconfig cfg, float *w, int rows, int cols) {
    static uint8_t q[NHID * NPIX * 2];
    float scales[NHID * NPIX];
    int32_t zps[NHID * NPIX];
    size_t n = (size_t)rows * (size_t)cols, np = 0, qb = 0;
    qmx_status st;
    if (cfg.granularity == QMX_PER_CHANNEL) { cfg.outer = 1; cfg.axis_len = (size_t)rows; cfg.inner = (size_t)cols; }
    if (cfg.granularity == QMX_PER_BLOCK) { cfg.outer = (size_t)rows; cfg.axis_len = (size_t)cols; cfg.inner = 1; }
    st = qmx_qparams_count(&cfg, n, &np);
    if (st == QMX_OK) st = qmx_compute_qparams(&cfg, w, n, scales, np, zps);
    if (st == QMX_OK) st = qmx_dtype_storage_bytes(cfg.dtype, n, &qb);
    if (st == QMX_OK) st = qmx_quantize(&cfg, w, n, scales, np, zps, q, sizeof q);
    if (st == QMX_OK) st = qmx_dequantize(&cfg, q, sizeof q, n, scales, np, zps, w);
    if (st != QMX_OK) { fprintf(stderr, "demo: qmx error: %s\n", qmx_status_str(st)); exit(1); }
    return qb + np * sizeof(float) + (cfg.asymmetric ? np : 0);
}

/* ---- int8 integer-only inference ---- */
typedef struct int8_model {
    int8_t w1[NHID * NPIX], w2[NCLS * NHID];
    int32_t b1[NHID], b2[NCLS];
    int32_t m1[NHID]; int sh1[NHID];       /* requantization of layer 1 to int8 */
    float s_in, s_h;                        /* activation scales (static, calibrated) */
} int8_model;

static int build_int8(const mlp *m, int8_model *im) {
    qmx_qconfig c = QMX_ZERO_INIT;
    float s1[NHID], s2[NCLS], h[NHID], lg[NCLS], hmax = 0.0f;
    int i, j;
    /* calibrate the hidden activation range on the training images (absmax observer) */
    for (i = 0; i < g_n; i++) {
        if (is_test(i)) continue;
        forward(m, g_x[i], h, lg);
        for (j = 0; j < NHID; j++) if (h[j] > hmax) hmax = h[j];
    }
    im->s_in = 1.0f / 127.0f;   /* pixels are in [0, 1]: TFLite-style absmax / 127 */
    im->s_h = hmax / 127.0f;
    c.recipe = QMX_RECIPE_TFLITE;         /* weights: symmetric narrow per-channel, /127 */
    c.granularity = QMX_PER_CHANNEL;
    c.outer = 1; c.axis_len = NHID; c.inner = NPIX;
    if (qmx_compute_qparams(&c, m->w1, NHID * NPIX, s1, NHID, NULL) != QMX_OK ||
        qmx_quantize(&c, m->w1, NHID * NPIX, s1, NHID, NULL, im->w1, sizeof im->w1) != QMX_OK) return 0;
    c.axis_len = NCLS; c.inner = NHID;
    if (qmx_compute_qparams(&c, m->w2, NCLS * NHID, s2, NCLS, NULL) != QMX_OK ||
        qmx_quantize(&c, m->w2, NCLS * NHID, s2, NCLS, NULL, im->w2, sizeof im->w2) != QMX_OK) return 0;
    for (j = 0; j < NHID; j++) {
        double acc_scale = (double)im->s_in * s1[j];
        im->b1[j] = (int32_t)lround(m->b1[j] / acc_scale);
        if (qmx_quantize_multiplier(acc_scale / im->s_h, &im->m1[j], &im->sh1[j]) != QMX_OK) return 0;
    }
    for (j = 0; j < NCLS; j++) im->b2[j] = (int32_t)lround(m->b2[j] / ((double)im->s_h * s2[j]));
    return 1;
}

/* Classify one image with integers only. x_q: the image quantized once at the input. */
static int infer_int8(const int8_model *im, const int8_t *x_q, const int32_t *m2, const int *sh2) {
    int32_t acc[NHID], best = INT32_MIN;
    int8_t h[NHID];
    int j, k, b = 0;
    qmx_requant_config rc = QMX_ZERO_INIT;
    for (j = 0; j < NHID; j++) {
        int32_t a = 0;
        for (k = 0; k < NPIX; k++) a += (int32_t)im->w1[j * NPIX + k] * x_q[k];
        acc[j] = a;
    }
    rc.per_channel = 1; rc.multipliers = im->m1; rc.shifts = im->sh1; rc.bias = im->b1;
    rc.act_min = 0; rc.act_max = 127;      /* fused ReLU: clamp at the zero point */
    qmx_requantize_array(&rc, acc, 1, NHID, h, sizeof h);
    for (j = 0; j < NCLS; j++) {
        int32_t a = im->b2[j], v;
        for (k = 0; k < NHID; k++) a += (int32_t)im->w2[j * NHID + k] * h[k];
        v = qmx_requantize(a, m2[j], sh2[j]);   /* common logit scale across classes */
        if (v > best) { best = v; b = j; }
    }
    return b;
}

int main(int argc, char **argv) {
    static mlp base, m;
    static int8_model im;
    static int8_t xq[MAXIMG][NPIX];
    const char *path = argc > 1 ? argv[1] : "examples/data/digits.csv";
    double acc, us, t0;
    int i;
    struct { const char *name; qmx_dtype dt; qmx_granularity g; size_t block; qmx_recipe r; int asym; } fmts[] = {
        { "int8 per-tensor (AQT)", QMX_INT8, QMX_PER_TENSOR, 0, QMX_RECIPE_AQT, 0 },
        { "int8 per-channel (AQT)", QMX_INT8, QMX_PER_CHANNEL, 0, QMX_RECIPE_AQT, 0 },
        { "int8 per-channel asym (Qwix minmax)", QMX_INT8, QMX_PER_CHANNEL, 0, QMX_RECIPE_QWIX, 1 },
        { "int4 per-channel (AQT)", QMX_INT4, QMX_PER_CHANNEL, 0, QMX_RECIPE_AQT, 0 },
        { "int4 per-block 16 (AQT)", QMX_INT4, QMX_PER_BLOCK, 16, QMX_RECIPE_AQT, 0 },
        { "fp8 e4m3fn per-tensor", QMX_FP8_E4M3FN, QMX_PER_TENSOR, 0, QMX_RECIPE_QWIX, 0 },
        { "fp8 e5m2 per-tensor", QMX_FP8_E5M2, QMX_PER_TENSOR, 0, QMX_RECIPE_QWIX, 0 },
        { "fp8 e4m3fnuz per-channel", QMX_FP8_E4M3FNUZ, QMX_PER_CHANNEL, 0, QMX_RECIPE_QWIX, 0 },
    };
    if (!load(path)) return 1;
    t0 = now_s();
    train(&base);
    printf("qmx demo: UCI digits, %d images (%d held out), MLP 64-32-10 trained in %.2f s\n\n",
           g_n, (g_n + 4) / 5, now_s() - t0);
    printf("%-38s %9s %12s %10s %12s\n", "format (weights)", "accuracy", "weight bytes", "SQNR dB", "us/image");
    acc = evaluate(&base, &us);
    printf("%-38s %8.2f%% %12u %10s %12.2f\n", "float32", acc,
           (unsigned)(sizeof base.w1 + sizeof base.w2), "-", us);
    for (i = 0; i < (int)(sizeof fmts / sizeof fmts[0]); i++) {
        qmx_qconfig c = QMX_ZERO_INIT;
        size_t bytes;
        double sq;
        c.dtype = fmts[i].dt; c.granularity = fmts[i].g; c.block_size = fmts[i].block;
        c.recipe = fmts[i].r; c.asymmetric = fmts[i].asym;
        m = base;
        bytes = qdq(c, m.w1, NHID, NPIX) + qdq(c, m.w2, NCLS, NHID);
        sq = 0.5 * (sqnr_db(base.w1, m.w1, NHID * NPIX) + sqnr_db(base.w2, m.w2, NCLS * NHID));
        acc = evaluate(&m, &us);
        printf("%-38s %8.2f%% %12u %10.1f %12.2f\n", fmts[i].name, acc, (unsigned)bytes, sq, us);
    }
    /* int8 integer-only */
    if (!build_int8(&base, &im)) { fprintf(stderr, "demo: int8 model build failed\n"); return 1; }
    {
        int32_t m2[NCLS]; int sh2[NCLS];
        qmx_qconfig c = QMX_ZERO_INIT;
        float s2[NCLS], s2max = 0.0f, s_in = im.s_in;
        int ok = 0, n = 0, rep, j;
        c.recipe = QMX_RECIPE_TFLITE; c.granularity = QMX_PER_CHANNEL;
        c.outer = 1; c.axis_len = NCLS; c.inner = NHID;
        qmx_compute_qparams(&c, base.w2, NCLS * NHID, s2, NCLS, NULL);
        /* the classes' logits have per-class scales s_h * s2[j]: bring them to one common
         * scale (the largest) in fixed point so that the integer argmax is fair */
        for (j = 0; j < NCLS; j++) if (s2[j] > s2max) s2max = s2[j];
        for (j = 0; j < NCLS; j++) qmx_quantize_multiplier((double)s2[j] / s2max, &m2[j], &sh2[j]);
        for (i = 0; i < g_n; i++) {
            qmx_qconfig ci = QMX_ZERO_INIT;
            ci.recipe = QMX_RECIPE_TFLITE;
            qmx_quantize(&ci, g_x[i], NPIX, &s_in, 1, NULL, xq[i], NPIX);
        }
        t0 = now_s();
        for (rep = 0; rep < 20; rep++)
            for (i = 0; i < g_n; i++) {
                int p;
                if (!is_test(i)) continue;
                p = infer_int8(&im, xq[i], m2, sh2);
                if (rep == 0) { ok += p == g_y[i]; n++; }
            }
        us = (now_s() - t0) / (20.0 * n) * 1e6;
        printf("%-38s %8.2f%% %12u %10s %12.2f\n", "int8 integer-only (TFLite requant)",
               100.0 * ok / n, (unsigned)(sizeof im.w1 + sizeof im.w2 + sizeof im.b1 + sizeof im.b2 +
                                          sizeof im.m1 + sizeof im.sh1), "-", us);
    }
    printf("\nweight bytes include scales (4 B each) and zero points; times are single-thread,\n"
           "scalar reference loops (qmx's matmul kernels arrive with qmx_kernels.h).\n");
    return 0;
}
