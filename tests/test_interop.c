/* test_interop.c - qmx.h section 8: binary16/bfloat16 conversions and the peer layouts.
 * References (independent of qmx):
 *   binary16 decode: the IEEE 754 formula evaluated here in double, for all 65536 codes;
 *   binary16 encode: numpy's astype(float16), bfloat16 encode: PyTorch's to(bfloat16)
 *     (tests/data/interop_*.txt, written by tests/gen/gen_interop.py);
 *   ggml Q8_0 / Q4_0: block bytes and dequantized floats of ggml's reference quantizers and
 *     dequantizers (transcribed in numpy float32 by the generator);
 *   CMSIS-NN s4: the nibble reads of arm_nn_vec_mat_mult_t_s4's scalar path ((int8)(b << 4) >> 4
 *     for the low nibble, (int8)b >> 4 for the high one, flat over rows), applied here to
 *     qmx's packed int4. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_test.h"

#define MAXB 64
static uint8_t raw8[MAXB][QMX_GGML_Q8_0_BLOCK_BYTES], raw4[MAXB][QMX_GGML_Q4_0_BLOCK_BYTES];
static uint32_t y8[MAXB][32], y4[MAXB][32];
static size_t n8, n4;

static uint32_t fbits(float f) { return qmx_test_f32_bits(f); }

/* ---- binary16 ---- */
static double f16_formula(uint32_t e, uint32_t m) {   /* finite, magnitude only */
    double v = e ? 1.0 + (double)m / 1024.0 : (double)m / 1024.0;
    int p = e ? (int)e - 15 : -14;
    for (; p > 0; p--) v *= 2.0;
    for (; p < 0; p++) v *= 0.5;
    return v;
}
static void f16_decode_all(void) {
    uint32_t h;
    QMX_TEST_CASE("qmx_f16_to_f32: every one of the 65536 codes is its IEEE 754 value");
    for (h = 0; h < 65536u; h++) {
        uint32_t s = (h >> 15) & 1u, e = (h >> 10) & 31u, m = h & 1023u, want;
        uint32_t got = fbits(qmx_f16_to_f32((uint16_t)h));
        if (e == 31) want = (s << 31) | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u);  /* Inf; NaN: payload, quiet */
        else {
            float v = (float)f16_formula(e, m);
            want = fbits(s ? -v : v);
        }
        CHECK(got == want, "f16 %04x -> %08x want %08x", (unsigned)h, (unsigned)got, (unsigned)want);
    }
}
static void f16_roundtrip(void) {
    uint32_t h;
    QMX_TEST_CASE("qmx_f32_to_f16(qmx_f16_to_f32(h)) == h for every non-NaN code");
    for (h = 0; h < 65536u; h++) {
        if (((h >> 10) & 31u) == 31u && (h & 1023u)) continue;
        CHECK(qmx_f32_to_f16(qmx_f16_to_f32((uint16_t)h)) == h, "round trip %04x", (unsigned)h);
    }
}
static void golden_pairs(const char *file, const char *what, int bf) {
    FILE *f = qmx_test_open(file);
    char line[128];
    unsigned long x, y;
    long n = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        uint16_t got;
        float fx;
        if (line[0] == '#' || sscanf(line, "%lx %lx", &x, &y) != 2) continue;
        fx = qmx_test_bits_f32((uint32_t)x);
#if defined(__i386__) && !defined(__SSE2_MATH__)
        /* x87: a float that passes through an FPU register is quieted, so a signaling NaN
         * cannot reach a function taking a float; those inputs are not testable here */
        if ((x & 0x7F800000ul) == 0x7F800000ul && (x & 0x7FFFFFul) && !(x & 0x400000ul)) continue;
#endif
        got = bf ? qmx_f32_to_bf16(fx) : qmx_f32_to_f16(fx);
        CHECK(got == (uint16_t)y, "%s(%08lx) = %04x, reference %04lx", what, x, (unsigned)got, y);
        n++;
    }
    fclose(f);
    CHECK(n > 5000, "%s: only %ld golden rows read", file, n);
}
static void f16_encode_golden(void) {
    QMX_TEST_CASE("qmx_f32_to_f16 == numpy astype(float16): ties, subnormals, overflow, NaN payloads");
    golden_pairs("interop_f16.txt", "f32_to_f16", 0);
}
static void bf16_golden(void) {
    uint32_t b;
    QMX_TEST_CASE("qmx_f32_to_bf16 == torch to(bfloat16); NaN -> 0x7FC0 with the sign; decode exact");
    golden_pairs("interop_bf16.txt", "f32_to_bf16", 1);
    CHECK(qmx_f32_to_bf16(qmx_test_bits_f32(0x7F800001u)) == 0x7FC0u, "NaN -> 0x7FC0");
    CHECK(qmx_f32_to_bf16(qmx_test_bits_f32(0xFFFFFFFFu)) == 0xFFC0u, "-NaN -> 0xFFC0");
    for (b = 0; b < 65536u; b += 7) {
        uint32_t want = (b & 0x7FFFu) > 0x7F80u ? (b << 16) | 0x400000u : b << 16;   /* NaN: quiet */
        CHECK(fbits(qmx_bf16_to_f32((uint16_t)b)) == want, "bf16 decode %04x", (unsigned)b);
    }
}

/* ---- ggml ---- */
static int hexbytes(const char *s, uint8_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return 0;
        out[i] = (uint8_t)v;
    }
    return s[2 * n] == ' ';
}
static void load_ggml(void) {
    FILE *f = qmx_test_open("interop_ggml.txt");
    static char line[2048];
    QMX_TEST_CASE("ggml golden file");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        int q8 = strncmp(line, "q8_0 ", 5) == 0, q4 = strncmp(line, "q4_0 ", 5) == 0, j, off;
        size_t nb = q8 ? QMX_GGML_Q8_0_BLOCK_BYTES : QMX_GGML_Q4_0_BLOCK_BYTES;
        uint32_t *y;
        if (!q8 && !q4) continue;
        if ((q8 ? n8 : n4) >= MAXB) break;
        CHECK(hexbytes(line + 5, q8 ? raw8[n8] : raw4[n4], nb), "bad golden line");
        y = q8 ? y8[n8] : y4[n4];
        off = 5 + 2 * (int)nb;
        for (j = 0; j < 32; j++) {
            unsigned long v;
            int used;
            CHECK(sscanf(line + off, " %lx%n", &v, &used) == 1, "bad golden value");
            y[j] = (uint32_t)v;
            off += used;
        }
        if (q8) n8++; else n4++;
    }
    fclose(f);
    CHECK(n8 >= 40 && n4 >= 40, "golden blocks: %u q8_0, %u q4_0", (unsigned)n8, (unsigned)n4);
}

static int d_is_zero(const uint8_t *blk) { return (blk[0] | (blk[1] & 0x7F)) == 0; }

static void ggml_q8_0(void) {
    static int8_t q[MAXB * 32];
    static float sc[MAXB], y[MAXB * 32];
    static uint8_t back[MAXB][QMX_GGML_Q8_0_BLOCK_BYTES];
    qmx_qconfig c = QMX_ZERO_INIT;
    size_t b, j, n = n8 * 32;
    QMX_TEST_CASE("ggml Q8_0 -> qmx int8 per block 32: llama.cpp's dequantized values bit for bit; and back byte for byte");
    CHECK(qmx_ggml_q8_0_to_qmx(raw8[0], sizeof raw8, n, q, sizeof q, sc, MAXB) == QMX_OK, "to_qmx");
    c.dtype = QMX_INT8; c.granularity = QMX_PER_BLOCK; c.block_size = 32;
    CHECK(qmx_dequantize(&c, q, n, n, sc, n8, NULL, y) == QMX_OK, "dequantize");
    for (b = 0; b < n8; b++)
        for (j = 0; j < 32; j++)
            CHECK(fbits(y[b * 32 + j]) == y8[b][j] || (fbits(y[b * 32 + j]) | y8[b][j]) == 0x80000000u,
                  "q8_0 block %u [%u]: %08x want %08x", (unsigned)b, (unsigned)j, (unsigned)fbits(y[b * 32 + j]), (unsigned)y8[b][j]);
    CHECK(qmx_ggml_q8_0_from_qmx(q, n, sc, n8, back[0], sizeof back) == QMX_OK, "from_qmx");
    for (b = 0; b < n8; b++) {
        if (d_is_zero(raw8[b])) {   /* documented: d = 0 comes back as 1.0 with q = 0 */
            CHECK(back[b][0] == 0x00 && back[b][1] == 0x3C, "zero block: d = 1.0");
            for (j = 2; j < QMX_GGML_Q8_0_BLOCK_BYTES; j++) CHECK(back[b][j] == 0, "zero block q");
        } else {
            CHECK(memcmp(back[b], raw8[b], QMX_GGML_Q8_0_BLOCK_BYTES) == 0, "q8_0 block %u bytes", (unsigned)b);
        }
    }
}

static void ggml_q4_0(void) {
    static uint8_t q[MAXB * 16];
    static float sc[MAXB], y[MAXB * 32];
    static int32_t zp[MAXB];
    static uint8_t back[MAXB][QMX_GGML_Q4_0_BLOCK_BYTES];
    qmx_qconfig c = QMX_ZERO_INIT;
    size_t b, j, n = n4 * 32, negd = 0;
    QMX_TEST_CASE("ggml Q4_0 -> qmx uint4 + zero point 7/8 per block 32: llama.cpp's values bit for bit; and back");
    CHECK(qmx_ggml_q4_0_to_qmx(raw4[0], sizeof raw4, n, q, sizeof q, sc, zp, MAXB) == QMX_OK, "to_qmx");
    c.dtype = QMX_UINT4; c.granularity = QMX_PER_BLOCK; c.block_size = 32; c.asymmetric = 1;
    c.recipe = QMX_RECIPE_QWIX;   /* zero points: an asymmetric recipe; dequantize is (q - zp) * s */
    CHECK(qmx_dequantize(&c, q, sizeof q, n, sc, n4, zp, y) == QMX_OK, "dequantize");
    for (b = 0; b < n4; b++) {
        negd += raw4[b][1] >> 7;
        for (j = 0; j < 32; j++)
            /* the one documented difference: a zero element of a d < 0 block is -0.0 in ggml */
            CHECK(fbits(y[b * 32 + j]) == y4[b][j] || ((y4[b][j] & 0x7FFFFFFFu) == 0 && fbits(y[b * 32 + j]) == 0),
                  "q4_0 block %u [%u]: %08x want %08x", (unsigned)b, (unsigned)j, (unsigned)fbits(y[b * 32 + j]), (unsigned)y4[b][j]);
    }
    CHECK(negd > 10, "the golden data must hold blocks with negative d (ggml's d = max / -8)");
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_UINT4, q, n, sc, zp, n4, back[0], sizeof back) == QMX_OK, "from_qmx");
    for (b = 0; b < n4; b++) {
        if (d_is_zero(raw4[b])) {
            CHECK(back[b][0] == 0x00 && back[b][1] == 0x3C, "zero block: d = 1.0");
            for (j = 2; j < QMX_GGML_Q4_0_BLOCK_BYTES; j++) CHECK(back[b][j] == 0x88, "zero block: nibbles 8");
        } else {
            CHECK(memcmp(back[b], raw4[b], QMX_GGML_Q4_0_BLOCK_BYTES) == 0, "q4_0 block %u bytes", (unsigned)b);
        }
    }
}

/* qmx int4 (symmetric, fp16-exact scales) -> Q4_0: read back with ggml's dequantize formula. */
static void ggml_q4_0_from_int4(void) {
    enum { NB = 6, N = NB * 32 };
    float x[N], sc[NB], yq[N];
    uint8_t q[N / 2], blk[NB][QMX_GGML_Q4_0_BLOCK_BYTES];
    qmx_qconfig c = QMX_ZERO_INIT;
    size_t i, b, j;
    QMX_TEST_CASE("qmx int4 per block 32 -> Q4_0: (nibble - 8) * d equals qmx_dequantize");
    for (i = 0; i < N; i++) x[i] = (float)((int)((i * 2654435761u) >> 20) % 2001 - 1000) / 97.0f;
    c.dtype = QMX_INT4; c.granularity = QMX_PER_BLOCK; c.block_size = 32;
    CHECK(qmx_compute_qparams(&c, x, N, sc, NB, NULL) == QMX_OK, "qparams");
    for (b = 0; b < NB; b++) sc[b] = qmx_f16_to_f32(qmx_f32_to_f16(sc[b]));   /* ggml stores fp16 */
    CHECK(qmx_quantize(&c, x, N, sc, NB, NULL, q, sizeof q) == QMX_OK, "quantize");
    CHECK(qmx_dequantize(&c, q, sizeof q, N, sc, NB, NULL, yq) == QMX_OK, "dequantize");
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_INT4, q, N, sc, NULL, NB, blk[0], sizeof blk) == QMX_OK, "from_qmx");
    for (b = 0; b < NB; b++) {
        float d = qmx_f16_to_f32((uint16_t)(blk[b][0] | (blk[b][1] << 8)));
        for (j = 0; j < 16; j++) {
            float y0 = (float)((blk[b][2 + j] & 0x0F) - 8) * d, y1 = (float)((blk[b][2 + j] >> 4) - 8) * d;
            CHECK(fbits(y0) == fbits(yq[b * 32 + j]), "block %u elem %u", (unsigned)b, (unsigned)j);
            CHECK(fbits(y1) == fbits(yq[b * 32 + 16 + j]), "block %u elem %u", (unsigned)b, (unsigned)(16 + j));
        }
    }
}

static void ggml_errors(void) {
    static uint8_t blk[4][QMX_GGML_Q4_0_BLOCK_BYTES + 16], sent[sizeof blk];
    int8_t q8[128];
    uint8_t q4[64];
    float sc[4] = { 1.0f, 0.5f, 2.0f, 0.25f };
    int32_t zp[4] = { 8, 7, 8, 8 };
    QMX_TEST_CASE("ggml converters: every bad argument is a status and writes nothing");
    memset(q8, 1, sizeof q8); memset(q4, 0x11, sizeof q4);
    memset(blk, 0xA5, sizeof blk); memcpy(sent, blk, sizeof blk);
    CHECK(qmx_ggml_q8_0_from_qmx(NULL, 64, sc, 2, blk[0], sizeof blk) == QMX_ERR_NULL, "NULL q");
    CHECK(qmx_ggml_q8_0_from_qmx(q8, 0, sc, 2, blk[0], sizeof blk) == QMX_ERR_SIZE, "n = 0");
    CHECK(qmx_ggml_q8_0_from_qmx(q8, 48, sc, 2, blk[0], sizeof blk) == QMX_ERR_SHAPE, "n not a multiple of 32");
    CHECK(qmx_ggml_q8_0_from_qmx(q8, 64, sc, 1, blk[0], sizeof blk) == QMX_ERR_BUFFER_TOO_SMALL, "scales");
    CHECK(qmx_ggml_q8_0_from_qmx(q8, 64, sc, 2, blk[0], 67) == QMX_ERR_BUFFER_TOO_SMALL, "blocks");
    sc[1] = 0.1f;   /* not a binary16 value */
    CHECK(qmx_ggml_q8_0_from_qmx(q8, 64, sc, 2, blk[0], sizeof blk) == QMX_ERR_ARG, "inexact scale");
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_INT4, q4, 64, sc, NULL, 2, blk[0], sizeof blk) == QMX_ERR_ARG, "inexact scale");
    sc[1] = -0.5f;
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_INT4, q4, 64, sc, NULL, 2, blk[0], sizeof blk) == QMX_ERR_ARG, "negative scale");
    sc[1] = 0.5f; zp[1] = 6;
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_UINT4, q4, 64, sc, zp, 2, blk[0], sizeof blk) == QMX_ERR_ARG, "zp 6");
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_UINT4, q4, 64, sc, NULL, 2, blk[0], sizeof blk) == QMX_ERR_NULL, "uint4 needs zps");
    CHECK(qmx_ggml_q4_0_from_qmx(QMX_INT8, q4, 64, sc, NULL, 2, blk[0], sizeof blk) == QMX_ERR_DTYPE, "dtype");
    CHECK(memcmp(blk, sent, sizeof blk) == 0, "blocks untouched");
    /* to_qmx: NaN / Inf d, negative d with -128 */
    blk[0][0] = 0x00; blk[0][1] = 0x7C;   /* +Inf */
    CHECK(qmx_ggml_q4_0_to_qmx(blk[0], 2 * QMX_GGML_Q4_0_BLOCK_BYTES, 64, q4, sizeof q4, sc, zp, 2) == QMX_ERR_NONFINITE, "Inf d");
    CHECK(qmx_ggml_q8_0_to_qmx(blk[0], 2 * QMX_GGML_Q8_0_BLOCK_BYTES, 64, q8, sizeof q8, sc, 2) == QMX_ERR_NONFINITE, "Inf d");
    blk[0][0] = 0x00; blk[0][1] = 0xBC; blk[0][5] = 0x80;   /* d = -1, a -128 */
    CHECK(qmx_ggml_q8_0_to_qmx(blk[0], 2 * QMX_GGML_Q8_0_BLOCK_BYTES, 64, q8, sizeof q8, sc, 2) == QMX_ERR_UNSUPPORTED, "-d with -128");
    CHECK(qmx_ggml_q4_0_to_qmx(blk[0], 2 * QMX_GGML_Q4_0_BLOCK_BYTES, 64, q4, 31, sc, zp, 2) == QMX_ERR_BUFFER_TOO_SMALL, "q bytes");
    CHECK(sc[0] == 1.0f && zp[0] == 8 && q4[0] == 0x11 && q8[0] == 1, "outputs untouched");
}

/* ---- CMSIS-NN s4 and AQT unpacked int4 ---- */
static void cmsis_nn_s4_layout(void) {
    enum { N = 5, K = 7 };   /* odd K: rows share bytes (CMSIS-NN's spillover) */
    float w[N * K], sc[N];
    int8_t want[N * K], unpacked[N * K];
    uint8_t q[(N * K + 1) / 2];
    qmx_qconfig c = QMX_ZERO_INIT;
    size_t n, k, i;
    QMX_TEST_CASE("qmx packed int4 [N][K], K odd, read with CMSIS-NN s4's nibble reads over the flat index");
    for (n = 0; n < N; n++) {
        sc[n] = n & 1 ? 0.25f : 0.5f;
        for (k = 0; k < K; k++) {
            int v = (int)((n * 7 + k * 3) % 16) - 8;
            want[n * K + k] = (int8_t)v;
            w[n * K + k] = (float)v * sc[n];   /* exact: quantizes to v */
        }
    }
    c.dtype = QMX_INT4; c.granularity = QMX_PER_CHANNEL; c.outer = 1; c.axis_len = N; c.inner = K;
    c.recipe = QMX_RECIPE_QWIX;   /* full range [-8, 7] (AQT clips int4 to [-7, 7]) */
    c.rounding = QMX_ROUND_NEAREST_EVEN;
    CHECK(qmx_quantize(&c, w, N * K, sc, N, NULL, q, sizeof q) == QMX_OK, "quantize");
    for (i = 0; i < N * K; i++) {
        int8_t b = (int8_t)q[i / 2];
        int32_t v = (i & 1) ? (int32_t)(b >> 4) : (int32_t)(int8_t)((uint8_t)((uint8_t)b << 4)) >> 4;
        CHECK(v == want[i], "element %u: CMSIS-NN reads %d, want %d", (unsigned)i, (int)v, (int)want[i]);
    }
    CHECK((q[sizeof q - 1] >> 4) == 0, "odd count: the last high nibble is 0");
    QMX_TEST_CASE("AQT/Qwix unpacked int4 (one int8 per value): qmx_unpack_int4 of the packed bytes");
    CHECK(qmx_unpack_int4(QMX_INT4, q, sizeof q, N * K, unpacked) == QMX_OK, "unpack");
    CHECK(memcmp(unpacked, want, sizeof want) == 0, "unpacked values");
}

int main(void) {
    f16_decode_all();
    f16_roundtrip();
    f16_encode_golden();
    bf16_golden();
    load_ggml();
    ggml_q8_0();
    ggml_q4_0();
    ggml_q4_0_from_int4();
    ggml_errors();
    cmsis_nn_s4_layout();
    return QMX_TEST_END();
}
