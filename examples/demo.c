/* demo.c - an end-to-end quantized model on real data with qmx: train, calibrate, quantize,
 * run with qmx's kernels, ship to a microcontroller.
 *
 * Data: the UCI handwritten digits (examples/data/digits.csv, 1,797 8x8 images). Every fifth
 * image is held out for testing (360); the rest (1,437) train a 64-32-10 MLP in float32 with
 * plain SGD and a fixed seed (deterministic), and calibrate.
 *
 * Then every format runs inference on the held-out images with qmx's kernels (weights stored
 * quantized, not fake-quantized):
 *   int8 / int4 / fp8 weights x dynamically quantized activations (one scale per image, AQT's
 *     dynamic recipe), float outputs: qmx_matmul_i8_f32, qmx_matmul_i4_f32, qmx_matmul_fp8_f32;
 *   a mixed-precision rule table (MaxText intmp JSON, qmx_intmp_parse / qmx_intmp_lookup)
 *     choosing the format layer by layer;
 *   int8 integer-only (TFLite / CMSIS-NN): static activation scales calibrated on the training
 *     images with three qmx_calib methods (absmax observer, 99.99 % percentile and MSE-optimal
 *     clip from a histogram), int32 accumulation and fixed-point requantization between the
 *     layers (qmx_fully_connected_i8): no float arithmetic in the inference loop.
 * It prints one table: format, accuracy, weight bytes, time per image.
 *
 *   ./demo [digits.csv] [--export model.h]
 * --export writes the integer-only model (the calibration with the best training accuracy),
 * the quantized held-out images and this run's predictions as a C header, which
 * examples/demo_mcu.c runs on a Cortex-M4 (make demo-cortex-m).
 */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "qmx_calib.h"
#include "demo_int8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

enum { NPIX = DEMO_NPIX, NHID = DEMO_NHID, NCLS = DEMO_NCLS, MAXIMG = 1797, NTEST = 360 };

static float g_x[MAXIMG][NPIX];
static int g_y[MAXIMG];
static int g_n;
static float t_x[NTEST][NPIX];   /* the held-out images, in order */
static int t_y[NTEST];

/* model: h = relu(W1 x + b1) (W1 is [NHID][NPIX]); logits = W2 h + b2 (W2 is [NCLS][NHID]) */
typedef struct mlp { float w1[NHID * NPIX], b1[NHID], w2[NCLS * NHID], b2[NCLS]; } mlp;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void die(const char *what, qmx_status st) {
    fprintf(stderr, "demo: %s: %s\n", what, qmx_status_str(st));
    exit(1);
}
#define TRY(call) do { qmx_status st_ = (call); if (st_ != QMX_OK) die(#call, st_); } while (0)

static int load(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1024];
    int nt = 0;
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
        if (g_n % 5 == 0 && nt < NTEST) {
            memcpy(t_x[nt], g_x[g_n], sizeof t_x[nt]);
            t_y[nt++] = g_y[g_n];
        }
        g_n++;
    }
    fclose(f);
    return g_n == MAXIMG && nt == NTEST;
}
static int is_test(int i) { return i % 5 == 0; }

/* ---- float32 model and training ---- */
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

/* ---- quantized layers run by qmx's kernels ---- */
typedef enum fmt_kind { F_F32, F_I8, F_I4, F_FP8, F_MX, F_NF4, F_U4Z } fmt_kind;
typedef struct fmt {
    fmt_kind kind;
    size_t block;      /* K-block (sub-channel) length; 0 = one scale per output channel */
    qmx_dtype fp8;     /* F_FP8: the format of weights and activations */
    float clip;        /* weight clipping scale (intmp w_scale); 0 = 1 */
    qmx_mx_format mx;  /* F_MX: the block-scaled format (OCP FLOOR rule, blocks along k) */
    size_t act_i8;     /* F_MX / F_NF4 / F_U4Z: 0 = float32 activations, else int8 per block */
    int packed;        /* F_MX (MXFP4) / F_U4Z: weights in a prepacked block blob */
} fmt;

typedef struct qlayer {
    fmt f;
    int n, k;                                  /* weights [n][k] */
    const float *wf, *bias;                    /* float weights (F_F32), bias */
    int8_t w8[NHID * NPIX];
    uint8_t w4[NHID * NPIX / 2], wfp8[NHID * NPIX];
    float ws[NHID * NPIX];                     /* weight scales [n][nblk] */
    size_t nblk, bytes;                        /* blocks along k; stored weight bytes */
    qmx_mx_config mxc;                         /* F_MX: elements in wfp8, scale codes in mxs */
    qmx_qconfig qc;                            /* F_NF4 / F_U4Z: codes in w4, scales in ws */
    uint8_t mxs[NHID * NPIX];
    int32_t wz[NHID * NPIX];                   /* F_U4Z: zero point per (row, block) */
    size_t nscales;
    unsigned char blob[8192];                  /* f.packed: qmx_blockw_pack's blob */
    size_t blob_bytes;
} qlayer;

/* The layer's block-scaled weights as the qmx_blockw the kernels take. */
static qmx_blockw layer_blockw(const qlayer *L) {
    qmx_blockw w = QMX_ZERO_INIT;
    if (L->f.kind == F_MX) {
        w.kind = QMX_BLOCKW_MX; w.mx = &L->mxc; w.data = L->wfp8; w.data_bytes = sizeof L->wfp8;
        w.scale_codes = L->mxs;
    } else {
        w.kind = QMX_BLOCKW_QCONFIG; w.qc = &L->qc; w.data = L->w4; w.data_bytes = sizeof L->w4;
        w.scales = L->ws;
        if (L->f.kind == F_U4Z) w.zero_points = L->wz;
    }
    w.n_scales = L->nscales;
    return w;
}

/* f.packed: the weights packed once into a blob; its size is what the layer stores. */
static void layer_pack(qlayer *L) {
    qmx_blockw w = layer_blockw(L);
    TRY(qmx_blockw_pack_size(&w, (size_t)L->n, (size_t)L->k, &L->blob_bytes));
    TRY(qmx_blockw_pack(&w, (size_t)L->n, (size_t)L->k, L->blob, sizeof L->blob));
    L->bytes = L->blob_bytes;
}

static uint8_t g_ws[1 << 20];                  /* kernels' workspace (sizes checked) */

static void layer_build(qlayer *L, fmt f, const float *w, const float *b, int n, int k) {
    qmx_qconfig c = QMX_ZERO_INIT;
    size_t np = 0, i;
    L->f = f; L->n = n; L->k = k; L->wf = w; L->bias = b;
    L->nblk = f.block ? ((size_t)k + f.block - 1) / f.block : 1;
    if (f.kind == F_F32) { L->bytes = (size_t)n * (size_t)k * 4; return; }
    if (f.kind == F_MX) {     /* [n][k], one shared scale code per block along k */
        qmx_mx_config *m = &L->mxc;
        size_t eb = 0;
        memset(m, 0, sizeof *m);
        m->format = f.mx; m->rule = QMX_MX_FLOOR; m->block_size = f.block;
        m->outer = (size_t)n; m->axis_len = (size_t)k; m->inner = 1;
        TRY(qmx_mx_storage(m, (size_t)n * (size_t)k, &eb, &L->nscales));
        TRY(qmx_mx_quantize(m, w, (size_t)n * (size_t)k, L->wfp8, sizeof L->wfp8, L->mxs,
                            sizeof L->mxs));
        L->bytes = eb + L->nscales;   /* one byte per scale code (E8M0 / E4M3) */
        if (f.packed) layer_pack(L);
        return;
    }
    if (f.kind == F_U4Z) {    /* ggml Q4_0 / GPTQ class: uint4 + zero point per block along k */
        qmx_qconfig *q = &L->qc;
        memset(q, 0, sizeof *q);
        q->dtype = QMX_UINT4; q->granularity = QMX_PER_BLOCK; q->asymmetric = 1;
        q->recipe = QMX_RECIPE_QWIX;
        q->outer = (size_t)n; q->axis_len = (size_t)k; q->inner = 1; q->block_size = f.block;
        TRY(qmx_qparams_count(q, (size_t)n * (size_t)k, &L->nscales));
        TRY(qmx_compute_qparams(q, w, (size_t)n * (size_t)k, L->ws, L->nscales, L->wz));
        TRY(qmx_quantize(q, w, (size_t)n * (size_t)k, L->ws, L->nscales, L->wz, L->w4,
                         sizeof L->w4));
        TRY(qmx_dtype_storage_bytes(QMX_UINT4, (size_t)n * (size_t)k, &L->bytes));
        L->bytes += L->nscales * (sizeof(float) + 1);   /* a byte holds a zero point */
        if (f.packed) layer_pack(L);
        return;
    }
    if (f.kind == F_NF4) {    /* QLoRA NormalFloat4: absmax per block of f.block along k */
        qmx_qconfig *q = &L->qc;
        memset(q, 0, sizeof *q);
        q->dtype = QMX_NF4; q->granularity = QMX_PER_BLOCK;
        q->outer = (size_t)n; q->axis_len = (size_t)k; q->inner = 1; q->block_size = f.block;
        TRY(qmx_qparams_count(q, (size_t)n * (size_t)k, &L->nscales));
        TRY(qmx_compute_qparams(q, w, (size_t)n * (size_t)k, L->ws, L->nscales, NULL));
        TRY(qmx_quantize(q, w, (size_t)n * (size_t)k, L->ws, L->nscales, NULL, L->w4,
                         sizeof L->w4));
        TRY(qmx_dtype_storage_bytes(QMX_NF4, (size_t)n * (size_t)k, &L->bytes));
        L->bytes += L->nscales * sizeof(float);
        return;
    }
    c.dtype = f.kind == F_I8 ? QMX_INT8 : (f.kind == F_I4 ? QMX_INT4 : f.fp8);
    if (f.block) {            /* [n][k] with one scale per (row, block of k) */
        c.granularity = QMX_PER_BLOCK; c.outer = (size_t)n; c.axis_len = (size_t)k; c.inner = 1;
        c.block_size = f.block;
    } else {                  /* one scale per output channel */
        c.granularity = QMX_PER_CHANNEL; c.outer = 1; c.axis_len = (size_t)n; c.inner = (size_t)k;
    }
    TRY(qmx_qparams_count(&c, (size_t)n * (size_t)k, &np));
    TRY(qmx_compute_qparams(&c, w, (size_t)n * (size_t)k, L->ws, np, NULL));
    if (f.clip > 0.0f) for (i = 0; i < np; i++) L->ws[i] *= f.clip;   /* AQT clipping scale */
    TRY(qmx_quantize(&c, w, (size_t)n * (size_t)k, L->ws, np, NULL,
                     f.kind == F_I8 ? (void *)L->w8 : f.kind == F_I4 ? (void *)L->w4 : (void *)L->wfp8,
                     sizeof L->w8));
    TRY(qmx_dtype_storage_bytes(c.dtype, (size_t)n * (size_t)k, &L->bytes));
    L->bytes += np * sizeof(float);
}

/* Y[M][n] = X[M][k] W^T + b (ReLU when relu), X quantized on the fly as the format asks. */
static void layer_forward(const qlayer *L, const float *X, int M, float *Y, int relu) {
    static int8_t xq[NTEST * NPIX];
    static uint8_t xf8[NTEST * NPIX];
    static float xs[NTEST * NPIX];
    size_t n = (size_t)L->n, k = (size_t)L->k, Mz = (size_t)M, need = 0, i, j;
    qmx_qconfig c = QMX_ZERO_INIT;
    if (L->f.kind == F_F32) {
        for (i = 0; i < Mz; i++)
            for (j = 0; j < n; j++) {
                float a = 0.0f;
                size_t t;
                for (t = 0; t < k; t++) a += L->wf[j * k + t] * X[i * k + t];
                Y[i * n + j] = a;
            }
    } else if (L->f.kind == F_MX || L->f.kind == F_NF4 || L->f.kind == F_U4Z) {
        /* block-scaled weights x float32 activations (qmx_matmul_blockw_f32) */
        qmx_blockw w = layer_blockw(L);
        if (L->f.packed) {    /* the blob, int8 activations per block (the same bits) */
            qmx_blockw_dyn_opts o = QMX_ZERO_INIT;
            o.act_block = L->f.act_i8;
            TRY(qmx_matmul_blockw_packed_dyn_i8_workspace_size(Mz, n, k, &o, &need));
            if (need > sizeof g_ws) die("workspace", QMX_ERR_BUFFER_TOO_SMALL);
            TRY(qmx_matmul_blockw_packed_dyn_i8(Mz, n, k, X, k, L->blob, L->blob_bytes, &o, Y, n,
                                                g_ws, sizeof g_ws));
        } else if (L->f.act_i8) {   /* activations quantized to int8 on the fly, per block */
            qmx_blockw_dyn_opts o = QMX_ZERO_INIT;
            o.act_block = L->f.act_i8;
            TRY(qmx_matmul_blockw_dyn_i8_workspace_size(Mz, n, k, &o, &need));
            if (need > sizeof g_ws) die("workspace", QMX_ERR_BUFFER_TOO_SMALL);
            TRY(qmx_matmul_blockw_dyn_i8(Mz, n, k, X, k, &w, &o, Y, n, g_ws, sizeof g_ws));
        } else {
            TRY(qmx_matmul_blockw_f32_workspace_size(Mz, n, k, &need));
            if (need > sizeof g_ws) die("workspace", QMX_ERR_BUFFER_TOO_SMALL);
            TRY(qmx_matmul_blockw_f32(Mz, n, k, X, k, &w, Y, n, g_ws, sizeof g_ws));
        }
    } else if (L->f.kind == F_FP8) {
        qmx_matmul_fp8_params p = QMX_ZERO_INIT;   /* activations: one fp8 scale per tensor */
        c.dtype = L->f.fp8;
        TRY(qmx_compute_qparams(&c, X, Mz * k, xs, 1, NULL));
        TRY(qmx_quantize(&c, X, Mz * k, xs, 1, NULL, xf8, sizeof xf8));
        p.a_fmt = L->f.fp8; p.b_fmt = L->f.fp8;
        p.a_scales = xs; p.a_scales_len = 1;
        p.b_scales = L->ws; p.b_scales_len = n; p.b_per_col = 1;
        TRY(qmx_matmul_fp8_f32_workspace_size(Mz, n, k, &need));
        if (need > sizeof g_ws) die("workspace", QMX_ERR_BUFFER_TOO_SMALL);
        TRY(qmx_matmul_fp8_f32(Mz, n, k, xf8, k, L->wfp8, k, Y, n, &p, g_ws, sizeof g_ws));
    } else {
        /* activations: int8, one scale per image (row), AQT dynamic; repeated per K-block */
        size_t b;
        c.granularity = QMX_PER_CHANNEL; c.outer = 1; c.axis_len = Mz; c.inner = k;
        TRY(qmx_compute_qparams(&c, X, Mz * k, xs, Mz, NULL));
        TRY(qmx_quantize(&c, X, Mz * k, xs, Mz, NULL, xq, sizeof xq));
        for (i = Mz; i-- > 0;)
            for (b = L->nblk; b-- > 0;) xs[i * L->nblk + b] = xs[i];
        if (L->f.kind == F_I8) {
            qmx_matmul_i8_f32_scales s = QMX_ZERO_INIT;
            s.a_scales = xs; s.a_scales_len = Mz * L->nblk; s.a_per_row = 1;
            s.b_scales = L->ws; s.b_scales_len = n * L->nblk; s.b_per_col = 1;
            s.block_size = L->f.block ? L->f.block : k;
            TRY(qmx_matmul_i8_f32_workspace_size(Mz, n, k, &need));
            if (need > sizeof g_ws) die("workspace", QMX_ERR_BUFFER_TOO_SMALL);
            TRY(qmx_matmul_i8_f32(Mz, n, k, xq, k, L->w8, k, Y, n, &s, g_ws, sizeof g_ws));
        } else {
            qmx_matmul_i4_params p = QMX_ZERO_INIT;
            p.block_size = L->f.block;
            p.a_scales = xs; p.a_scales_len = Mz * L->nblk; p.a_per_row = 1;
            p.w_scales = L->ws; p.w_scales_len = n * L->nblk; p.w_per_col = 1;
            TRY(qmx_matmul_i4_workspace_size(Mz, n, k, &p, &need));
            if (need > sizeof g_ws) die("workspace", QMX_ERR_BUFFER_TOO_SMALL);
            TRY(qmx_matmul_i4_f32(Mz, n, k, xq, k, L->w4, k, Y, n, &p, g_ws, sizeof g_ws));
        }
    }
    for (i = 0; i < Mz; i++)
        for (j = 0; j < n; j++) {
            float v = Y[i * n + j] + L->bias[j];
            Y[i * n + j] = relu && v < 0.0f ? 0.0f : v;
        }
}

/* Accuracy on the held-out images and microseconds per image (the whole set as one batch). */
static double run_model(const qlayer *l1, const qlayer *l2, double *us) {
    static float h[NTEST * NHID], y[NTEST * NCLS];
    int i, ok = 0, rep, reps = 50;
    double t0 = now_s();
    for (rep = 0; rep < reps; rep++) {
        layer_forward(l1, t_x[0], NTEST, h, 1);
        layer_forward(l2, h, NTEST, y, 0);
    }
    *us = (now_s() - t0) / ((double)reps * NTEST) * 1e6;
    for (i = 0; i < NTEST; i++) ok += argmax(y + i * NCLS, NCLS) == t_y[i];
    return 100.0 * ok / NTEST;
}

/* ---- mixed precision: a MaxText intmp rule table picks each layer's format ---- */
static const char g_intmp_json[] =
    "{\n"
    "  \"__default__\": {\"w_bits\": 8, \"a_bits\": 8, \"w_scale\": 1.0, \"a_scale\": 1.0,"
    " \"tile_size\": -1},\n"
    "  \"mlp/dense_0\": {\"w_bits\": 4, \"tile_size\": 16},\n"
    "  \"mlp/dense_[1-9]\": {\"w_bits\": 8, \"w_scale\": 1.0}\n"
    "}\n";

static fmt fmt_from_rule(const qmx_intmp_rule *r) {
    fmt f;
    memset(&f, 0, sizeof f);
    f.kind = r->w_bits == 0 ? F_F32 : (r->w_bits <= 4 ? F_I4 : F_I8);
    f.block = r->tile_size > 0 ? (size_t)r->tile_size : 0;
    f.clip = r->w_scale;
    return f;
}

/* ---- int8 integer-only: calibration of the static activation scales ---- */
typedef enum calib_kind { CAL_ABSMAX, CAL_PERCENTILE, CAL_MSE } calib_kind;
static const char *const calib_name[] = { "absmax observer", "percentile 99.99%", "MSE-optimal clip" };

/* The bound of the hidden activations of the float model over the training images. */
static float calibrate_hidden(const mlp *m, calib_kind kind) {
    static uint64_t bins[2048];
    static float hs[MAXIMG * NHID];
    float lg[NCLS], bound = 0.0f, s = 0.0f;
    size_t nh = 0;
    int i;
    for (i = 0; i < g_n; i++)
        if (!is_test(i)) { forward(m, g_x[i], hs + nh, lg); nh += NHID; }
    if (kind == CAL_ABSMAX) {   /* streaming observer, one batch per image */
        qmx_calib_config cc = QMX_ZERO_INIT;
        qmx_qconfig q = QMX_ZERO_INIT;
        qmx_calib_stat stat;
        qmx_observer obs;
        size_t b;
        q.recipe = QMX_RECIPE_TFLITE;
        TRY(qmx_observer_init(&obs, &cc, &q, NHID, &stat, 1));
        for (b = 0; b < nh; b += NHID) TRY(qmx_observer_update(&obs, hs + b, NHID));
        TRY(qmx_observer_finalize(&obs, &s, 1, NULL));
        return s * 127.0f;
    } else {
        qmx_histogram hist;
        TRY(qmx_histogram_init(&hist, bins, sizeof bins / sizeof bins[0]));
        TRY(qmx_histogram_update(&hist, hs, nh));
        if (kind == CAL_PERCENTILE) {
            TRY(qmx_histogram_percentile(&hist, 999900u, &bound));
        } else {
            qmx_qconfig q = QMX_ZERO_INIT;
            q.recipe = QMX_RECIPE_TFLITE;
            TRY(qmx_histogram_mse_bound(&hist, &q, &bound));
        }
        return bound;
    }
}

static int32_t round_i32(double v) {
    if (v > 2147483647.0) return INT32_MAX;
    if (v < -2147483648.0) return INT32_MIN;
    return (int32_t)lround(v);
}

/* The integer-only model with the hidden bound h_bound; s_in = 1/127 for pixels in [0, 1]. */
static void build_int8(const mlp *m, float h_bound, demo_int8_model *im) {
    qmx_qconfig c = QMX_ZERO_INIT;
    float s1[NHID], s2[NCLS], h[NHID], lg[NCLS], lmax = 0.0f;
    const double s_in = 1.0 / 127.0, s_h = h_bound / 127.0;
    double s_out;
    int i, j;
    /* the logits' int16 scale: their absmax over the training images, as the float model
     * with the hidden layer clipped to the bound */
    for (i = 0; i < g_n; i++) {
        if (is_test(i)) continue;
        forward(m, g_x[i], h, lg);
        for (j = 0; j < NCLS; j++) if (fabsf(lg[j]) > lmax) lmax = fabsf(lg[j]);
    }
    s_out = 2.0 * lmax / 32767.0;   /* headroom for clipped-activation differences */
    c.recipe = QMX_RECIPE_TFLITE;   /* weights: symmetric narrow per channel, absmax / 127 */
    c.granularity = QMX_PER_CHANNEL;
    c.outer = 1; c.axis_len = NHID; c.inner = NPIX;
    TRY(qmx_compute_qparams(&c, m->w1, NHID * NPIX, s1, NHID, NULL));
    TRY(qmx_quantize(&c, m->w1, NHID * NPIX, s1, NHID, NULL, im->w1, sizeof im->w1));
    c.axis_len = NCLS; c.inner = NHID;
    TRY(qmx_compute_qparams(&c, m->w2, NCLS * NHID, s2, NCLS, NULL));
    TRY(qmx_quantize(&c, m->w2, NCLS * NHID, s2, NCLS, NULL, im->w2, sizeof im->w2));
    for (j = 0; j < NHID; j++) {
        double acc = s_in * s1[j];
        im->b1[j] = round_i32(m->b1[j] / acc);
        TRY(qmx_quantize_multiplier(acc / s_h, &im->m1[j], &im->sh1[j]));
    }
    for (j = 0; j < NCLS; j++) {
        double acc = s_h * s2[j];
        im->b2[j] = round_i32(m->b2[j] / acc);
        TRY(qmx_quantize_multiplier(acc / s_out, &im->m2[j], &im->sh2[j]));
    }
}

static void quantize_input(const float *x, int8_t *q) {
    qmx_qconfig c = QMX_ZERO_INIT;
    float s = 1.0f / 127.0f;
    c.recipe = QMX_RECIPE_TFLITE;
    TRY(qmx_quantize(&c, x, NPIX, &s, 1, NULL, q, NPIX));
}

/* Accuracy of the integer-only model on the held-out images (pred may be NULL); us per image. */
static double run_int8(const demo_int8_model *im, const int8_t (*xq)[NPIX], int n, const int *ys,
                       int *pred, double *us) {
    static uint8_t ws[DEMO_INT8_WORKSPACE];
    int i, ok = 0, rep, reps = us ? 50 : 1;
    double t0 = now_s();
    for (rep = 0; rep < reps; rep++)
        for (i = 0; i < n; i++) {
            int p = demo_int8_classify(im, xq[i], ws);
            if (p < 0) die("demo_int8_classify", QMX_ERR_ARG);
            if (rep == 0) { ok += p == ys[i]; if (pred) pred[i] = p; }
        }
    if (us) *us = (now_s() - t0) / ((double)reps * n) * 1e6;
    return 100.0 * ok / n;
}

static void put_i32s(FILE *f, const char *name, const int32_t *v, int n) {
    int i;
    fprintf(f, "    /* %s */ {", name);
    for (i = 0; i < n; i++) fprintf(f, "%s%ld", i ? ", " : "", (long)v[i]);
    fprintf(f, "},\n");
}
static void put_ints(FILE *f, const char *name, const int *v, int n) {
    int i;
    fprintf(f, "    /* %s */ {", name);
    for (i = 0; i < n; i++) fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fprintf(f, "},\n");
}
static void put_i8s(FILE *f, const char *name, const int8_t *v, int n) {
    int i;
    fprintf(f, "    /* %s */ {", name);
    for (i = 0; i < n; i++) fprintf(f, "%s%s%d", i ? "," : "", i % 32 == 0 ? "\n        " : "", v[i]);
    fprintf(f, "},\n");
}

static int export_model(const char *path, const demo_int8_model *im, const char *calib,
                        const int8_t (*xq)[NPIX], const int *pred) {
    FILE *f = fopen(path, "w");
    int i, j;
    if (!f) { fprintf(stderr, "demo: cannot write %s\n", path); return 0; }
    fprintf(f, "/* Generated by examples/demo.c --export: the UCI digits MLP 64-32-10 as an int8\n"
               " * integer-only model (hidden activations calibrated by: %s), the %d held-out\n"
               " * images quantized to int8 and the host's predictions for them.\n"
               " * Used by examples/demo_mcu.c. */\n", calib, NTEST);
    fprintf(f, "#define DEMO_NTEST %d\nstatic const demo_int8_model demo_model = {\n", NTEST);
    put_i8s(f, "w1", im->w1, NHID * NPIX);
    put_i32s(f, "b1", im->b1, NHID); put_i32s(f, "m1", im->m1, NHID); put_ints(f, "sh1", im->sh1, NHID);
    put_i8s(f, "w2", im->w2, NCLS * NHID);
    put_i32s(f, "b2", im->b2, NCLS); put_i32s(f, "m2", im->m2, NCLS); put_ints(f, "sh2", im->sh2, NCLS);
    fprintf(f, "};\nstatic const int8_t demo_test_x[DEMO_NTEST][%d] = {\n", NPIX);
    for (i = 0; i < NTEST; i++) {
        fprintf(f, "    {");
        for (j = 0; j < NPIX; j++) fprintf(f, "%s%d", j ? "," : "", xq[i][j]);
        fprintf(f, "},\n");
    }
    fprintf(f, "};\nstatic const unsigned char demo_test_y[DEMO_NTEST] = {");
    for (i = 0; i < NTEST; i++) fprintf(f, "%s%s%d", i ? "," : "", i % 40 == 0 ? "\n    " : "", t_y[i]);
    fprintf(f, "};\nstatic const unsigned char demo_host_pred[DEMO_NTEST] = {");
    for (i = 0; i < NTEST; i++) fprintf(f, "%s%s%d", i ? "," : "", i % 40 == 0 ? "\n    " : "", pred[i]);
    fprintf(f, "};\n");
    return fclose(f) == 0;
}

static uint32_t fnv1a(const int *v, int n) {   /* a digest of the predictions, to compare runs */
    uint32_t h = 2166136261u;
    int i;
    for (i = 0; i < n; i++) { h ^= (uint32_t)v[i]; h *= 16777619u; }
    return h;
}

int main(int argc, char **argv) {
    static mlp base;
    static qlayer l1, l2;
    static demo_int8_model im[3];
    static int8_t xq[NTEST][NPIX], xq_train[MAXIMG][NPIX];
    static int y_train[MAXIMG], pred[NTEST];
    const char *path = "examples/data/digits.csv", *export_path = NULL;
    double acc, us, t0, train_acc[3];
    size_t fbytes;
    int i, best = 0, nt = 0;
    qmx_intmp_rule rules[8];
    char names[256];
    qmx_intmp_config mp;
    const fmt f32 = { F_F32, 0, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 };
    const struct { const char *name; fmt f; } fmts[] = {
        { "int8 per-channel       (qmx_matmul_i8_f32)", { F_I8, 0, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "int8 per-block 16      (qmx_matmul_i8_f32)", { F_I8, 16, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "int4 per-channel       (qmx_matmul_i4_f32)", { F_I4, 0, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "int4 per-block 16      (qmx_matmul_i4_f32)", { F_I4, 16, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "fp8 E4M3 per-channel  (qmx_matmul_fp8_f32)", { F_FP8, 0, QMX_FP8_E4M3FN, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "fp8 E5M2 per-channel  (qmx_matmul_fp8_f32)", { F_FP8, 0, QMX_FP8_E5M2, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "MXFP8 E4M3 x f32   (qmx_matmul_blockw_f32)", { F_MX, 32, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "MXFP4 x f32        (qmx_matmul_blockw_f32)", { F_MX, 32, QMX_INT8, 0, QMX_MXFP4, 0, 0 } },
        { "NVFP4 x f32        (qmx_matmul_blockw_f32)", { F_MX, 16, QMX_INT8, 0, QMX_NVFP4, 0, 0 } },
        { "nf4 per-block 32 x f32 (qmx_matmul_blockw)", { F_NF4, 32, QMX_INT8, 0, QMX_MXFP8_E4M3, 0, 0 } },
        { "MXFP8 E4M3 x int8/32   (blockw_dyn_i8)", { F_MX, 32, QMX_INT8, 0, QMX_MXFP8_E4M3, 32, 0 } },
        { "MXFP4 x int8/32        (blockw_dyn_i8)", { F_MX, 32, QMX_INT8, 0, QMX_MXFP4, 32, 0 } },
        { "NVFP4 x int8/32        (blockw_dyn_i8)", { F_MX, 16, QMX_INT8, 0, QMX_NVFP4, 32, 0 } },
        { "nf4 per-block 32 x int8/32 (blockw_dyn_i8)", { F_NF4, 32, QMX_INT8, 0, QMX_MXFP8_E4M3, 32, 0 } },
        { "uint4+zp/32 (Q4_0 class) x int8/32 (dyn_i8)", { F_U4Z, 32, QMX_INT8, 0, QMX_MXFP8_E4M3, 32, 0 } },
        { "uint4+zp/32 x int8/32        (prepacked blob)", { F_U4Z, 32, QMX_INT8, 0, QMX_MXFP8_E4M3, 32, 1 } },
        { "MXFP4 x int8/32              (prepacked blob)", { F_MX, 32, QMX_INT8, 0, QMX_MXFP4, 32, 1 } },
    };
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--export") && i + 1 < argc) export_path = argv[++i];
        else path = argv[i];
    }
    if (!load(path)) return 1;
    t0 = now_s();
    train(&base);
    printf("qmx demo: UCI digits, %d images (%d held out), MLP 64-32-10 trained in %.2f s\n\n",
           g_n, NTEST, now_s() - t0);
    printf("%-46s %9s %12s %10s\n", "format (weights x activations)", "accuracy", "weight bytes", "us/image");

    /* float32 reference, through the same layer code */
    layer_build(&l1, f32, base.w1, base.b1, NHID, NPIX);
    layer_build(&l2, f32, base.w2, base.b2, NCLS, NHID);
    fbytes = l1.bytes + l2.bytes;
    acc = run_model(&l1, &l2, &us);
    printf("%-46s %8.2f%% %12u %10.2f\n", "float32", acc, (unsigned)fbytes, us);

    for (i = 0; i < (int)(sizeof fmts / sizeof fmts[0]); i++) {
        layer_build(&l1, fmts[i].f, base.w1, base.b1, NHID, NPIX);
        layer_build(&l2, fmts[i].f, base.w2, base.b2, NCLS, NHID);
        acc = run_model(&l1, &l2, &us);
        printf("%-46s %8.2f%% %12u %10.2f\n", fmts[i].name, acc, (unsigned)(l1.bytes + l2.bytes), us);
    }

    /* mixed precision from a MaxText intmp rule table */
    {
        const qmx_intmp_rule *r1, *r2;
        char label[64];
        TRY(qmx_intmp_parse(g_intmp_json, sizeof g_intmp_json - 1, rules, 8, names, sizeof names, &mp));
        TRY(qmx_intmp_lookup(&mp, "mlp/dense_0", 11, &r1));
        TRY(qmx_intmp_lookup(&mp, "mlp/dense_1", 11, &r2));
        layer_build(&l1, fmt_from_rule(r1), base.w1, base.b1, NHID, NPIX);
        layer_build(&l2, fmt_from_rule(r2), base.w2, base.b2, NCLS, NHID);
        acc = run_model(&l1, &l2, &us);
        snprintf(label, sizeof label, "mixed (intmp): dense_0 w%d/%d, dense_1 w%d", r1->w_bits,
                 (int)r1->tile_size, r2->w_bits);
        printf("%-46s %8.2f%% %12u %10.2f\n", label, acc, (unsigned)(l1.bytes + l2.bytes), us);
    }

    /* int8 integer-only, three calibrations of the hidden activations */
    for (i = 0; i < NTEST; i++) quantize_input(t_x[i], xq[i]);
    for (i = 0; i < g_n; i++)
        if (!is_test(i)) { quantize_input(g_x[i], xq_train[nt]); y_train[nt++] = g_y[i]; }
    for (i = 0; i < 3; i++) {
        char label[64];
        build_int8(&base, calibrate_hidden(&base, (calib_kind)i), &im[i]);
        train_acc[i] = run_int8(&im[i], (const int8_t(*)[NPIX])xq_train, nt, y_train, NULL, NULL);
        acc = run_int8(&im[i], (const int8_t(*)[NPIX])xq, NTEST, t_y, NULL, &us);
        snprintf(label, sizeof label, "int8 integer-only, %s", calib_name[i]);
        printf("%-46s %8.2f%% %12u %10.2f\n", label, acc,
               (unsigned)(sizeof im[i].w1 + sizeof im[i].w2 + sizeof im[i].b1 + sizeof im[i].b2 +
                          sizeof im[i].m1 + sizeof im[i].m2 + sizeof im[i].sh1 + sizeof im[i].sh2), us);
        if (train_acc[i] > train_acc[best]) best = i;
    }
    run_int8(&im[best], (const int8_t(*)[NPIX])xq, NTEST, t_y, pred, NULL);
    printf("\nweight bytes include the scales (and integer-only: biases, multipliers, shifts).\n"
           "The float rows run the whole held-out set as one batch per layer (single thread);\n"
           "the integer-only rows classify one image at a time, as firmware does.\n"
           "The unpacked block-scaled rows (MX, NVFP4, nf4, uint4+zp) run portable kernels; the\n"
           "prepacked blob rows (qmx_matmul_blockw_packed_dyn_i8) give the same outputs as their\n"
           "unpacked rows with SIMD; a blob pads rows to 16 and has a 64-byte header, so on\n"
           "these small layers it holds more bytes than the unpacked codes.\n"
           "integer-only calibration chosen on the training images: %s (train accuracy %.2f%%);\n"
           "its predictions digest: %08lx\n", calib_name[best], train_acc[best],
           (unsigned long)fnv1a(pred, NTEST));
    if (export_path) {
        if (!export_model(export_path, &im[best], calib_name[best], (const int8_t(*)[NPIX])xq, pred))
            return 1;
        printf("exported to %s\n", export_path);
    }
    return 0;
}
