/* fuzz_einsum.c - libFuzzer harness for qmx_einsum (qmx_kernels.h): arbitrary spec strings
 * on small random shapes, dtypes, scale modes and zero points.
 * Input: 32 header bytes (ranks, 16 dims of 1..4, dtypes, flags, axes, block sizes, zero
 * points; missing bytes read as 0), then the spec (any bytes, cut at 300 and at a NUL).
 * The dtype byte h[18 + o]: top bits 11 = an MX / NVFP4 operand (format = low 3 bits, 7 an
 * invalid one; bit 3 declares a wrong dtype; rule = h[23] >> 4, block size h[23] & 7, a
 * tensor scale with h[30] bit 0, scale codes from h[26], sometimes 0xFF), else bits 4-5 = 11
 * one of int2, uint2, int3, int7, fp4, fp6 e2m3, fp6 e3m2, nf4, else the first eight.
 * Invariants checked (abort on violation), beyond ASan/UBSan:
 *   - qmx_einsum_workspace_size and qmx_einsum agree on spec/shape errors (status and
 *     position) and the position is -1 or inside the spec;
 *   - on any error the output (and its guard) is untouched; on success nothing past out_len
 *     is written, and a second run on a differently aligned workspace gives the same bits;
 *   - a workspace one byte short is refused with QMX_ERR_BUFFER_TOO_SMALL;
 *   - every workspace is allocated at exactly its size, at a fuzzer-chosen alignment (ASan
 *     sees a write past it);
 *   - differential: int8 x int8 without scales or zero points gives the same numbers through
 *     the three paths (int32 output, float output via qmx_matmul_i8_f32, and the float32
 *     kernel on the same values as floats): the values are in [-7, 7] and K <= 4^8, so
 *     every sum is an integer below 2^24 and exact in float;
 *   - differential: an operand of a newer type gives the bits of its twin, the tensor it is
 *     documented to become: int3 / int7 the same bytes as int8, int2 / uint2 unpacked to int8
 *     (qmx_unpack_int2), fp4 / fp6 / nf4 / fp8 without scales decoded to float32, an MX
 *     operand qmx_mx_dequantize'd on its [outer][axis_len][inner] view;
 *   - a block-weight blob operand ((h[30] & 6) == 6: operand h[30] >> 3 & 1, when of rank 2,
 *     becomes the qmx_blockw_pack blob of MXFP8 E4M3 codes (scales 2^-2 .. 2^2, one block);
 *     h[29] bit 7 flips a byte of it, bit 6 cuts its bytes; h[31] bit 6 int8 activations, bit
 *     7 per block of 32): any bytes give a status or a result, never a crash; an intact blob
 *     with float32 activations gives the bits of its twin, the float32 weights it holds (the
 *     kernel's order is the float path's).
 * Build: make fuzz (tools/fuzz.sh), e.g. FUZZ=fuzz_einsum FUZZ_SECONDS=30 make fuzz. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include <stdlib.h>
#include <string.h>

#define OUTN 4096
static float da[4096], db[4096], fa[4096], fb[4096], sc[2][64], tw[2][4096];
static int8_t qa[4096], qb[4096], tq[2][4096];
static uint8_t sc8[2][4096];
static qmx_mx_config mxc[2];
static uint8_t bwb[2][1024];   /* blob operands */
static uint8_t bwc[64], bwe[8]; /* its MXFP8 E4M3 codes and E8M0 scale codes */
static int bwt[2];             /* 1: operand o is an intact blob with float32 activations */
static uint32_t out1[OUTN + 8], out2[OUTN + 8];
#define FZE_WS_MAX ((size_t)1 << 20)
/* A workspace of exactly `bytes` at offset `off` of its own allocation, so that ASan (or the
 * allocator's guard) sees any write past its end, at any alignment; NULL if malloc fails. */
static unsigned char *fze_ws(size_t bytes, unsigned off, unsigned char **base) {
    *base = (unsigned char *)malloc(off + bytes + (off + bytes == 0));
    return *base ? *base + off : NULL;
}

static qmx_dtype pick(unsigned b) {
    static const qmx_dtype d[8] = {QMX_FLOAT32, QMX_FLOAT32, QMX_INT8, QMX_INT8, QMX_INT4,
                                   QMX_UINT4, QMX_FP8_E4M3FN, QMX_FP8_E5M2};
    static const qmx_dtype dn[8] = {QMX_INT2, QMX_UINT2, QMX_INT3, QMX_INT7, QMX_FP4_E2M1,
                                    QMX_FP6_E2M3, QMX_FP6_E3M2, QMX_NF4};
    if (b == 0xFF) return QMX_UINT8;
    if ((b & 0x30) == 0x30) return dn[b & 7];
    return d[b & 7];
}
static int is_mx_byte(unsigned b) { return b != 0xFF && (b >> 6) == 3; }
static qmx_dtype mx_elem(unsigned f) {
    static const qmx_dtype e[8] = {QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_FP6_E2M3, QMX_FP6_E3M2,
                                   QMX_FP4_E2M1, QMX_FP4_E2M1, QMX_INT8, QMX_FP4_E2M1};
    return e[f & 7];
}

/* The twin of operand q (see the header): 1 when it has one (t filled), else 0. */
static int twin(const qmx_einsum_operand *q, size_t cnt, int o, qmx_einsum_operand *t) {
    size_t i;
    qmx_dtype d = q->dtype;
    *t = *q;
    if (q->blockw_blob) { /* its weights as float32: the values times their block's scale */
        if (!bwt[o]) return 0;
        for (i = 0; i < cnt; i++) /* fp8 value x 2^(e - 127), exact */
            tw[o][i] = qmx_fp8_to_f32(bwc[i], QMX_FP8_E4M3FN) *
                       (float)(1u << (bwe[i / q->shape[1]] - 125)) * 0.25f;
        t->blockw_blob = NULL; t->blockw_blob_bytes = 0;
    } else if (q->mx) {
        qmx_mx_config c = *q->mx;
        int ax;
        c.outer = c.inner = 1; c.axis_len = q->shape[q->block_axis];
        for (ax = 0; ax < q->block_axis; ax++) c.outer *= q->shape[ax];
        for (ax = q->block_axis + 1; ax < q->rank; ax++) c.inner *= q->shape[ax];
        if (qmx_mx_dequantize(&c, (const uint8_t *)q->data, q->data_bytes, q->scale_codes,
                              q->scale_codes_len, cnt, tw[o]) != QMX_OK) abort();
        t->mx = NULL; t->scale_codes = NULL; t->scale_codes_len = 0; t->block_axis = 0;
        t->block_size = 0;
    } else if (d == QMX_INT3 || d == QMX_INT7) {
        t->dtype = QMX_INT8;
        return 1;
    } else if (d == QMX_INT2 || d == QMX_UINT2) {
        if (qmx_unpack_int2(d, (const uint8_t *)q->data, q->data_bytes, cnt, tq[o]) != QMX_OK) abort();
        t->dtype = QMX_INT8; t->data = tq[o]; t->data_bytes = cnt;
        return 1;
    } else if (!q->scales && (qmx_dtype_is_fp8(d) || d == QMX_FP4_E2M1 || d == QMX_FP6_E2M3 ||
                              d == QMX_FP6_E3M2 || d == QMX_NF4)) {
        const uint8_t *p = (const uint8_t *)q->data;
        for (i = 0; i < cnt; i++) {
            uint8_t nib = (uint8_t)((p[i / 2] >> (4 * (i & 1))) & 15);
            if (d == QMX_FP4_E2M1) tw[o][i] = qmx_fp4_to_f32(nib);
            else if (d == QMX_NF4) {
                qmx_qconfig qc;
                float one = 1.0f;
                memset(&qc, 0, sizeof qc);
                qc.dtype = QMX_NF4;
                if (qmx_dequantize(&qc, p, q->data_bytes, cnt, &one, 1, NULL, tw[o]) != QMX_OK) abort();
                break;
            } else if (d == QMX_FP6_E2M3 || d == QMX_FP6_E3M2) tw[o][i] = qmx_fp6_to_f32(p[i], d);
            else tw[o][i] = qmx_fp8_to_f32(p[i], d);
        }
    } else {
        return 0;
    }
    t->dtype = QMX_FLOAT32; t->data = tw[o]; t->data_bytes = cnt * 4;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t h[32];
    char spec[301];
    size_t i, n, bytes = 0, cnt;
    qmx_einsum_operand op[2];
    qmx_einsum_opts opts;
    int o, p1 = -7, p2 = -7, rank;
    qmx_status s1, s2;
    size_t oshape[QMX_EINSUM_MAX_RANK];
    unsigned char *b1 = NULL, *b2 = NULL, *b3 = NULL, *w1, *w2, *w3;
    memset(oshape, 0, sizeof oshape);
    memset(h, 0, sizeof h);
    memcpy(h, data, size < 32 ? size : 32);
    n = size > 32 ? size - 32 : 0;
    if (n > 300) n = 300;
    if (n) memcpy(spec, data + 32, n);
    spec[n] = 0;
    memset(op, 0, sizeof op);
    memset(&opts, 0, sizeof opts);
    opts.int32_out = h[20] & 1;
    for (o = 0; o < 2; o++) {
        qmx_einsum_operand *q = &op[o];
        float *d = o ? db : da, *fv = o ? fb : fa;
        int8_t *qv = o ? qb : qa;
        q->rank = h[o] % 10 == 9 ? 9 : h[o] % 9;
        for (i = 0; i < QMX_EINSUM_MAX_RANK; i++) q->shape[i] = 1 + (h[2 + o * 8 + i] & 3);
        if (h[2 + o * 8] == 0xFF) q->shape[0] = 0;
        q->dtype = pick(h[18 + o]);
        if (is_mx_byte(h[18 + o])) {
            qmx_mx_config *c = &mxc[o];
            size_t k;
            memset(c, 0, sizeof *c);
            c->format = (qmx_mx_format)(h[18 + o] & 7);
            c->rule = (qmx_mx_rule)((h[23] >> 4) & 7);
            c->block_size = h[23] & 7;
            c->tensor_scale = (h[30] & 1) ? 0.5f : 0.0f;
            q->mx = c;
            q->block_axis = (int)(h[21 + o] >> 4 & 7) - 1;
            q->dtype = (h[18 + o] & 8) ? QMX_INT4 : mx_elem(h[18 + o]);
            for (k = 0; k < 4096; k++) sc8[o][k] = (uint8_t)(118 + (k * 3 + h[26]) % 16);
            if (h[26] & 0x80) sc8[o][h[26] & 15] = 0xFF;
            q->scale_codes = sc8[o];
            q->scale_codes_len = (h[24 + o] & 64) ? (size_t)(h[24 + o] & 63) : 4096;
        }
        cnt = 1;
        for (i = 0; i < (size_t)(q->rank < 9 ? q->rank : 0); i++) cnt *= q->shape[i];
        if (cnt > 4096) return 0;
        for (i = 0; i < cnt; i++) {
            int v = (int)((i * 2654435761u + h[28] + 5u * (unsigned)o) % 15) - 7;
            d[i] = fv[i] = (float)v;
            qv[i] = (int8_t)v;
        }
        if (q->dtype == QMX_FLOAT32) {
            q->data = d; q->data_bytes = cnt * 4;
        } else if (q->dtype == QMX_INT8) {
            q->data = qv; q->data_bytes = (h[20] & 0x80) ? cnt / 2 : cnt; /* sometimes short */
        } else if (q->mx) {
            unsigned char *c = (unsigned char *)d; /* any codes, or small finite ones */
            for (i = 0; i < cnt; i++)
                c[i] = (unsigned char)((h[29] & 1) ? 0x30 + (i * 7 + h[29]) % 16 : (i * 37 + h[29]) & 0xFF);
            q->data = d; q->data_bytes = (h[20] & 0x80) ? cnt / 2 : cnt;
        } else if (q->dtype == QMX_FP8_E4M3FN || q->dtype == QMX_FP8_E5M2) {
            unsigned char *c = (unsigned char *)d; /* small finite codes */
            for (i = 0; i < cnt; i++) c[i] = (unsigned char)(0x30 + (i * 7 + h[29]) % 16);
            q->data = d; q->data_bytes = cnt;
        } else if (q->dtype == QMX_FP4_E2M1 || q->dtype == QMX_FP6_E2M3 ||
                   q->dtype == QMX_FP6_E3M2 || q->dtype == QMX_NF4 || q->dtype == QMX_INT2 ||
                   q->dtype == QMX_UINT2) {
            unsigned char *c = (unsigned char *)d; /* every code is a finite value */
            for (i = 0; i < cnt; i++) c[i] = (unsigned char)((i * 37 + h[29]) & 0xFF);
            q->data = d; q->data_bytes = (h[20] & 0x80) ? cnt / 4 : cnt; /* sometimes short */
        } else if (q->dtype == QMX_INT3 || q->dtype == QMX_INT7) {
            q->data = qv; q->data_bytes = (h[20] & 0x80) ? cnt / 2 : cnt;
        } else {
            q->data = d; q->data_bytes = (h[20] & 0x80) ? cnt / 2 : cnt; /* sometimes short */
        }
        if (h[20] & (2 << o)) {
            size_t k;
            q->scales = sc[o];
            q->scales_len = h[24 + o] & 63;
            q->scaling = (qmx_einsum_scaling)((h[20] >> (3 + 2 * o)) & 3);
            q->channel_axis = (int)(h[21 + o] & 7) - 1;
            q->block_axis = (int)(h[21 + o] >> 4 & 7) - 1;
            q->block_size = h[23] & 7;
            for (k = 0; k < 64; k++) sc[o][k] = 0.25f * (float)(1 + (k + h[26]) % 5);
        }
        q->zero_point = (int32_t)(h[27 + o * 2] % 9) - 4;
        if (h[30] == 0xFF) q->zero_point = 200;
        bwt[o] = 0;
        if ((h[30] & 6) == 6 && o == (h[30] >> 3 & 1) && q->rank == 2 && q->shape[0]) {
            /* a blob (N, K <= 4) */
            qmx_blockw w;
            qmx_mx_config c;
            size_t blen = 0, N = q->shape[0], K = q->shape[1], k;
            memset(&w, 0, sizeof w); memset(&c, 0, sizeof c);
            c.format = QMX_MXFP8_E4M3; c.outer = N; c.axis_len = K; c.inner = 1;
            for (k = 0; k < cnt; k++) bwc[k] = (uint8_t)(0x30 + (k * 7 + h[29]) % 16 + (k & 1) * 0x80);
            for (k = 0; k < N; k++) bwe[k] = (uint8_t)(125 + (k + h[26]) % 5);
            w.kind = QMX_BLOCKW_MX; w.mx = &c; w.data = bwc; w.data_bytes = cnt;
            w.scale_codes = bwe; w.n_scales = N;
            if (qmx_blockw_pack_size(&w, N, K, &blen) != QMX_OK || blen > sizeof bwb[o] ||
                qmx_blockw_pack(&w, N, K, bwb[o], blen) != QMX_OK) abort();
            if (h[29] & 0x80) bwb[o][h[28] % blen] ^= (uint8_t)(1u << (h[27] & 7));
            if (h[29] & 0x40) blen -= 1 + h[28] % 70;
            memset(q, 0, sizeof *q);
            q->rank = 2; q->shape[0] = N; q->shape[1] = K;
            q->blockw_blob = bwb[o]; q->blockw_blob_bytes = blen;
            opts.blockw_act = (h[31] & 0x40) ? QMX_EINSUM_BLOCKW_DYN_I8 : QMX_EINSUM_BLOCKW_F32;
            opts.blockw_act_block = (h[31] & 0x80) ? 32 : 0;
            bwt[o] = !(h[29] & 0xC0) && !(h[31] & 0x40);
        }
    }
    s1 = qmx_einsum_workspace_size(spec, &op[0], &op[1], &opts, &bytes, &p1);
    for (i = 0; i < OUTN + 8; i++) out1[i] = 0xDEADBEEFu;
    if (s1 == QMX_OK && bytes > FZE_WS_MAX) return 0;
    if (qmx_einsum_output_shape(spec, &op[0], &op[1], oshape, &rank, &p2) == QMX_OK) {
        size_t c = 1;
        for (i = 0; i < (size_t)rank; i++) c *= oshape[i];
        if (c > OUTN) return 0;
    }
    /* a plan error must come first, whatever the workspace (64 bytes then) */
    w1 = fze_ws(s1 == QMX_OK ? bytes : 64, h[31] & 63u, &b1);
    if (!w1) return 0;
    s2 = qmx_einsum(spec, &op[0], &op[1], &opts, out1, OUTN, w1, s1 == QMX_OK ? bytes : 64, &p2);
    free(b1);
    if (p1 < -1 || p1 > (int)n || p2 < -1 || p2 > (int)n) abort();
    if (s1 != QMX_OK) {
        /* plan errors come first in qmx_einsum as well */
        if (s2 != s1 || p1 != p2) abort();
    }
    if (s2 != QMX_OK) {
        for (i = 0; i < OUTN + 8; i++) if (out1[i] != 0xDEADBEEFu) abort();
        return 0;
    }
    if (qmx_einsum_output_shape(spec, &op[0], &op[1], oshape, &rank, &p2) != QMX_OK) abort();
    cnt = 1;
    for (i = 0; i < (size_t)rank; i++) cnt *= oshape[i];
    for (i = cnt; i < OUTN + 8; i++) if (out1[i] != 0xDEADBEEFu) abort();
    w2 = fze_ws(bytes, 63u - (h[31] & 63u), &b2);
    if (!w2) return 0;
    if (qmx_einsum(spec, &op[0], &op[1], &opts, out2, OUTN, w2, bytes, &p2) != QMX_OK) abort();
    free(b2);
    if (memcmp(out1, out2, cnt * 4) != 0) abort();
    if (bytes > 0) {
        w3 = fze_ws(bytes - 1, 0, &b3);
        if (!w3) return 0;
        if (qmx_einsum(spec, &op[0], &op[1], &opts, out2, OUTN, w3, bytes - 1, &p2)
            != QMX_ERR_BUFFER_TOO_SMALL) abort();
        free(b3);
    }
    if (op[0].dtype == QMX_INT8 && op[1].dtype == QMX_INT8 && !op[0].scales && !op[1].scales &&
        !op[0].zero_point && !op[1].zero_point && !opts.int32_out) {
        qmx_einsum_operand f[2];
        qmx_einsum_opts o32;
        size_t need = 0;
        memset(&o32, 0, sizeof o32);
        o32.int32_out = 1;
        if (qmx_einsum_workspace_size(spec, &op[0], &op[1], &o32, &need, &p2) != QMX_OK ||
            need > FZE_WS_MAX) abort();
        if (!(w3 = fze_ws(need, h[31] & 63u, &b3))) return 0;
        if (qmx_einsum(spec, &op[0], &op[1], &o32, out2, OUTN, w3, need, &p2) != QMX_OK) abort();
        free(b3);
        for (i = 0; i < cnt; i++) {
            float x;
            memcpy(&x, &out1[i], 4);
            if (x != (float)(int32_t)out2[i]) abort();
        }
        for (o = 0; o < 2; o++) {
            f[o] = op[o];
            f[o].dtype = QMX_FLOAT32;
            f[o].data = o ? fb : fa;
            f[o].data_bytes = sizeof fa;
        }
        if (qmx_einsum_workspace_size(spec, &f[0], &f[1], NULL, &need, &p2) != QMX_OK ||
            need > FZE_WS_MAX) abort();
        if (!(w3 = fze_ws(need, h[31] & 63u, &b3))) return 0;
        if (qmx_einsum(spec, &f[0], &f[1], NULL, out2, OUTN, w3, need, &p2) != QMX_OK) abort();
        free(b3);
        if (memcmp(out1, out2, cnt * 4) != 0) abort();
    }
    {   /* the newer operand types give the bits of their twins */
        qmx_einsum_operand t[2];
        size_t need = 0, c0 = 1, c1 = 1;
        int any;
        for (i = 0; i < (size_t)op[0].rank; i++) c0 *= op[0].shape[i];
        for (i = 0; i < (size_t)op[1].rank; i++) c1 *= op[1].shape[i];
        any = twin(&op[0], c0, 0, &t[0]);
        any |= twin(&op[1], c1, 1, &t[1]);
        if (any) {
            if (qmx_einsum_workspace_size(spec, &t[0], &t[1], &opts, &need, &p2) != QMX_OK ||
                need > FZE_WS_MAX) abort();
            if (!(w3 = fze_ws(need, h[31] & 63u, &b3))) return 0;
            if (qmx_einsum(spec, &t[0], &t[1], &opts, out2, OUTN, w3, need, &p2) != QMX_OK) abort();
            free(b3);
            if (memcmp(out1, out2, cnt * 4) != 0) abort();
        }
    }
    return 0;
}
