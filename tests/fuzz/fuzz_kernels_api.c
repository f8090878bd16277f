/* fuzz_kernels_api.c - libFuzzer harness for the compute kernels of qmx_kernels.h.
 * The first input byte picks the API (byte % 9), the rest is read as a stream (missing bytes
 * read as 0): shapes (M, N, K mostly 1..16, sometimes up to 92, 0xFF = 0), leading dimensions
 * (exact, padded, one too small, huge), zero points and enum values (sometimes out of range;
 * C++ builds of the replay keep enums valid), int8 data (raw bytes or extremes), float data
 * (raw bits with NaN/Inf/denormals, or small exact values), scales.
 *   0 qmx_matmul_i8 (NK/KN, zero points, cached weight sums) and qmx_matmul_i8_ref
 *   1 packed weights: pack, qmx_matmul_i8_packed, qmx_fully_connected_i8_packed,
 *     qmx_matmul_i8_f32_packed (against the unpacked entry points)
 *   2 qmx_fully_connected_i8 (int8/int16 out, every requant mode, weight zero point: the
 *     fully-connected configs of 1, 2 and 5 set rq.weight_zero_point, in and out of range)
 *   3 qmx_matmul_i8_f32 (per tensor / row / column / K-block scales)
 *   4 qmx_matmul_f32_dyn_i8   5 qmx_matmul_i4, qmx_matmul_i4_f32, qmx_fully_connected_i4
 *   6 qmx_matmul_fp8_f32      7 qmx_einsum on fixed specs with random label sizes and dtypes
 *   8 KV cache: init (any layer), append, read, attention decode, prefill, reset; ring mode
 *   first byte 246..249: the 16x8 kernels: qmx_fully_connected_i16 (+ _packed) and
 *     qmx_batch_matmul_i16 (transpose flags, batch strides), against an int64 naive loop and
 *     TFLite's int64 requantization written out in the harness; invalid multipliers, shifts,
 *     biases past 2^46, clamps, K past the bounds, short workspaces
 *   first byte 251..255: qmx_matmul_blockw_dyn_i8 (MX / NVFP4 / qconfig weights of raw codes,
 *     any format, rule, dtype, granularity, block and activation block; against the documented
 *     order: element values from the weights dequantized with unit scales, exact segment sums
 *     in int64 units of 2^-27 rounded once, then * sw, * sx, + in order), and where the
 *     weights pack, qmx_blockw_pack (+ a blob one byte short, a truncated or corrupted
 *     header) and qmx_matmul_blockw_packed_dyn_i8 on the blob: the same Y bits
 *   first byte 250: ggml Q4_1 blocks of raw bytes (any binary16 d and m, NaN / Inf too):
 *     qmx_blockw_pack_ggml (+ short blocks / a short blob), info, qmx_blockw_unpack_ggml (the
 *     same bytes back), qmx_matmul_blockw_packed_dyn_i8 (+ act_block) and _packed_f32 on the
 *     blob (a short workspace: the status, Y and workspace untouched; the same bits twice)
 *   first byte 245: several cores on the blob (ggml Q8_0 / Q4_0 / Q4_1 / MXFP4 / NVFP4 blocks;
 *     Q4_1 / MXFP4 / NVFP4: unpack_ggml gives the bytes back; NVFP4: the blob equals
 *     qmx_mx_from_ggml + qmx_blockw_pack's, short blocks / blob refused, the blob untouched):
 *     qmx_matmul_blockw_packed_dyn_i8 / _f32 _exec (harness executor, 1..5 workers) and
 *     single-task _run calls give the serial call's status and Y bits; bad ranges, short
 *     workspaces: their status, Y untouched
 * Buffers are malloc'ed at exactly their extent ((rows-1)*ld + cols elements); workspaces at
 * exactly the size the library's *_workspace_size / *_storage_size query returns, or one byte
 * less (then QMX_ERR_BUFFER_TOO_SMALL with nothing written is required), and like packed
 * blobs and KV storage at any address mod 64 (the docs allow any alignment). Without ASan
 * (the replay), 64 guard bytes after every buffer are checked instead.
 * Invariants (__builtin_trap on violation): the status is a qmx_status value; on error the
 * outputs (and the matmul workspaces, which the docs promise untouched) are byte-identical;
 * on success: int matmuls equal an int64 naive loop, float outputs equal a naive loop in the
 * documented order (every step a volatile float so no FMA can form), fully-connected equals
 * the naive accumulators through qmx_requantize_array, packed = unpacked bit for bit, the
 * dynamic path equals its per-row quantization written out here, einsum equals a naive
 * label-loop evaluation (int32 output, and float output on small integers where it is exact),
 * KV read-back is within the format's step of what was appended, and float-query attention is
 * within 4e-3 * max|v| of a double-precision softmax over the read-back cache; padding beyond
 * each row's N columns is never written.
 * Build: make fuzz (tools/fuzz.sh); replayed by tests/test_fuzz_replay.c. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define FK_BIG ((size_t)1 << 20) /* larger extents are not allocated (the call must fail) */
/* 1..16 mostly, 17..92 for 0xF0..0xFE, 0 for 0xFF */
static size_t fk_dim(fz_rd *r) {
    unsigned b = fz_u8(r);
    if (b == 0xFF) return 0;
    if (b >= 0xF0) return 17 + (b & 15) * 5;
    return 1 + b % 16;
}
/* K of the int8 matmuls: fk_dim, or the overflow bound QMX_MATMUL_I8_MAX_K (0xFD, where
 * K * 255^2 just fits int32) and one past it (0xFC). */
static size_t fk_kdim(fz_rd *r) {   /* (callers keep M * N <= 64 with such a K) */
    unsigned b = r->n ? *r->p : 0;
    if (b == 0xFD || b == 0xFC) { fz_u8(r); return QMX_MATMUL_I8_MAX_K + (b == 0xFC); }
    return fk_dim(r);
}
/* A leading dimension for rows of `cols` elements. */
static size_t fk_ld(fz_rd *r, size_t cols) {
    unsigned b = fz_u8(r);
    if (b < 200) return cols + b % 3;
    if (b < 230) return cols ? cols - 1 : 0;
    if (b < 250) return cols + 17;
    return ((size_t)-1) / (b - 248);
}
/* (rows-1)*ld + cols, or FK_BIG + 1 when that overflows size_t (the call must fail). An
 * extent that fits size_t but not in memory (M > 1 with a huge lda) is a valid promise of the
 * caller that cannot be kept here: fk_toobig makes the selector skip the call. */
static int fk_toobig;
static size_t fk_ext(size_t rows, size_t cols, size_t ld) {
    if (rows == 0 || cols == 0) return 0;
    if (rows - 1 != 0 && ld > (((size_t)-1) - cols) / (rows - 1)) return FK_BIG + 1;
    if (rows - 1 != 0 && ld > (FK_BIG - cols) / (rows - 1)) { fk_toobig = 1; return FK_BIG + 1; }
    return (rows - 1) * ld + cols;
}
/* an exactly sized buffer for ext elements of esize bytes (1 byte if not allocatable) */
static void *fk_buf(size_t ext, size_t esize) {
    return fz_alloc(ext > FK_BIG ? 1 : ext * esize);
}
static int8_t *fk_i8(fz_rd *r, size_t n) {
    int8_t *p = (int8_t *)fk_buf(n, 1);
    unsigned mode = fz_u8(r);
    size_t i;
    if (n > FK_BIG) return p;
    for (i = 0; i < n; i++) {
        unsigned b = fz_u8(r);
        p[i] = (int8_t)(mode % 3 == 0 ? (int)b - 128 : mode % 3 == 1 ? (b & 1 ? 127 : -128) : (int)(b % 9) - 4);
    }
    return p;
}
static float *fk_floats(fz_rd *r, size_t n, int *small) {
    float *x = (float *)fk_buf(n, 4);
    unsigned mode = fz_u8(r);
    size_t i;
    if (small) *small = 1;
    if (n > FK_BIG) return x;
    for (i = 0; i < n; i++) {
        x[i] = fz_val(r, mode);
        if (small && !(x[i] >= -64.0f && x[i] <= 64.0f)) *small = 0;
    }
    return x;
}
static float fk_scale(fz_rd *r) {
    unsigned b = fz_u8(r), e = fz_u8(r);
    if (b >= 0xF8) return fz_bits(fz_u32(r));
    return (float)(1 + b % 16) * fz_bits((uint32_t)(127u - e % 24u + 4u) << 23);
}
static float *fk_scales(fz_rd *r, size_t n) {
    float *s = (float *)fz_alloc(n * 4);
    size_t i;
    for (i = 0; i < n; i++) s[i] = fk_scale(r);
    return s;
}
static int32_t fk_zp(fz_rd *r, int lo, int hi) {
    unsigned b = fz_u8(r);
    if (b >= 0xF8) return (int32_t)fz_u32(r);
    if (b == 0xDF) return hi;   /* (the modulo below may not reach it) */
    if (b >= 0xE0) return hi + 1;
    return lo + (int32_t)(b % (unsigned)(hi - lo + 1));
}
/* Workspace: the queried size (a few MiB at most for the shapes here), sometimes one byte
 * less (*short_ws = 1), at any alignment (the same byte's low 6 bits). */
static void *fk_ws(fz_rd *r, size_t need, size_t *bytes, int *short_ws) {
    unsigned b = need > 0 ? fz_u8(r) : 0;
    *short_ws = b >= 0xE8;
    *bytes = need - (size_t)*short_ws;
    return fz_alloc_at(*bytes, (int)(b & 63));
}

/* the requant output stage of a layer with N channels */
typedef struct fk_rq { qmx_requant_config c; size_t esize; } fk_rq;
static void fk_mkrq(fz_rd *r, size_t N, fk_rq *q) {
    unsigned how = fz_u8(r), b;
    size_t np, i;
    int32_t *mult, *bias;
    int *sh;
    float *sc;
    memset(q, 0, sizeof *q);
    q->c.mode = (qmx_requant_mode)fz_enum(r, 3);
    q->c.per_channel = how & 1;
    b = fz_u8(r);
    q->c.out_dtype = (qmx_dtype)(b < 0xC0 ? 0 : b < 0xF0 ? QMX_INT16 : b < 0xF8 ? QMX_INT8 : fz_enum(r, 11));
    q->esize = (int)q->c.out_dtype == QMX_INT16 ? 2 : 1;
    np = q->c.per_channel ? N : 1;
    mult = (int32_t *)fz_alloc(np * 4);
    sh = (int *)fz_alloc(np * sizeof(int));
    sc = (float *)fz_alloc(np * 4);
    for (i = 0; i < np; i++) {
        b = fz_u8(r);
        mult[i] = b < 0xF0 ? (int32_t)(0x40000000u + (fz_u32(r) & 0x3FFFFFFFu)) : (int32_t)fz_u32(r);
        sh[i] = b < 0xF0 ? (int)(b % 24) - 20 : (int)(int8_t)fz_u8(r);
        sc[i] = fk_scale(r);
    }
    q->c.multipliers = mult;
    q->c.shifts = sh;
    q->c.scales = sc;
    if (how & 2) {
        bias = (int32_t *)fz_alloc(N * 4);
        for (i = 0; i < N; i++) bias[i] = (int32_t)fz_u32(r) >> (fz_u8(r) % 32);
        q->c.bias = bias;
    }
    if (how & 4) q->c.multipliers = NULL;
    if (how & 8) q->c.scales = NULL;
    q->c.output_zero_point = fk_zp(r, -20, 20);
    if (how & 0x20)   /* the fully-connected weight zero point: int8 or int4 range (+ outside) */
        q->c.weight_zero_point = (how & 0x40) ? fk_zp(r, -8, 7) : fk_zp(r, -128, 127);
    if (how & 0x10) {
        q->c.act_min = (int32_t)(int8_t)fz_u8(r);
        q->c.act_max = (int32_t)(int8_t)fz_u8(r);
    }
}

/* exact int64 C[m][n] = sum_k (A(m,k) - azp) * (B(n,k) - bzp) into an int32 [M][N] array
 * (the bound K <= 33025 keeps it in int32) */
static int32_t *fk_ref_mm(const int8_t *A, size_t lda, const int8_t *B, size_t ldb, int kn,
                          size_t M, size_t N, size_t K, int32_t azp, int32_t bzp) {
    int32_t *C = (int32_t *)fz_alloc(M * N * 4);
    size_t m, n, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            int64_t s = 0;
            for (k = 0; k < K; k++)
                s += ((int64_t)A[m * lda + k] - azp) *
                     ((int64_t)(kn ? B[k * ldb + n] : B[n * ldb + k]) - bzp);
            C[m * N + n] = (int32_t)s;
        }
    return C;
}
/* out (row m at m*ldo elements of esize bytes) equals ref [M][N]; the padding is pattern */
static void fk_cmp_rows(const void *out, size_t ldo, const void *ref, size_t M, size_t N,
                        size_t esize, const void *snap) {
    size_t m;
    for (m = 0; m < M; m++) {
        if (memcmp((const char *)out + m * ldo * esize, (const char *)ref + m * N * esize, N * esize))
            __builtin_trap();
        if (m + 1 < M && ldo > N &&
            memcmp((const char *)out + (m * ldo + N) * esize, (const char *)snap + (m * ldo + N) * esize,
                   (ldo - N) * esize))
            __builtin_trap();
    }
}
/* the int32 accumulators through the output stage, as the docs define it */
static void *fk_ref_rq(const fk_rq *q, const int32_t *acc, size_t M, size_t N) {
    void *ref = fz_alloc(M * N * q->esize);
    const qmx_requant_config *c = &q->c;
    int32_t lo = q->esize == 2 ? -32768 : -128, hi = q->esize == 2 ? 32767 : 127, amin, amax;
    size_t m, n;
    if (c->output_zero_point >= lo && c->output_zero_point <= hi) {
        if (qmx_requantize_array(c, acc, M, N, ref, M * N * q->esize) != QMX_OK) __builtin_trap();
        return ref;
    }
    /* a zero point outside the out dtype (the fully-connected takes any int32, as TFLite and
     * CMSIS-NN; qmx_requantize_array does not): clamp(v + zp) in int64, element by element */
    amin = c->act_min; amax = c->act_max;
    if (amin == 0 && amax == 0) { amin = lo; amax = hi; }
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            size_t pi = c->per_channel ? n : 0;
            int32_t a = acc[m * N + n], v;
            int64_t w;
            if (c->bias) a = (int32_t)((uint32_t)a + (uint32_t)c->bias[n]);
            if (c->mode == QMX_REQUANT_DOUBLE_ROUNDING) v = qmx_requantize(a, c->multipliers[pi], c->shifts[pi]);
            else if (c->mode == QMX_REQUANT_SINGLE_ROUNDING)
                v = qmx_requantize_single_rounding(a, c->multipliers[pi], c->shifts[pi]);
            else v = qmx_requantize_float(a, c->scales[pi]);
            w = (int64_t)v + c->output_zero_point;
            w = w < amin ? amin : (w > amax ? amax : w);
            if (q->esize == 2) ((int16_t *)ref)[m * N + n] = (int16_t)w;
            else ((int8_t *)ref)[m * N + n] = (int8_t)w;
        }
    return ref;
}

/* ---- 0: int8 matmul ---- */
static void fk_matmul(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_kdim(r), lda, ldb, ldc, ea, eb, ec, need = 0, wsb, i;
    qmx_matmul_i8_opts o;
    int kn, short_ws;
    unsigned how = fz_u8(r);
    int8_t *A, *B;
    int32_t *C, *sums = NULL, *ref;
    void *ws, *snap, *wsnap;
    qmx_status st;
    memset(&o, 0, sizeof o);
    o.b_layout = (qmx_b_layout)fz_enum(r, 2);
    o.a_zp = fk_zp(r, -128, 127);
    o.b_zp = fk_zp(r, -128, 127);
    if (how & 8) o.b_layout = QMX_B_NK;   /* opts NULL below: B is read as [N,K] */
    kn = o.b_layout == QMX_B_KN;
    if (K > 4096 && M * N > 64) return;   /* the naive references stay fast */
    lda = fk_ld(r, K); ldb = fk_ld(r, kn ? N : K); ldc = fk_ld(r, N);
    ea = fk_ext(M, K, lda); eb = kn ? fk_ext(K, N, ldb) : fk_ext(N, K, ldb); ec = fk_ext(M, N, ldc);
    if (fk_toobig) return;
    A = fk_i8(r, ea);
    B = fk_i8(r, eb);
    if (how & 1) {   /* cached weight sums, sometimes one short */
        size_t ns = N - ((how & 2) && N ? 1 : 0);
        sums = (int32_t *)fz_alloc(ns * 4);
        snap = fz_snap(sums, ns * 4);
        st = qmx_matmul_i8_weight_sums(B, N, K, ldb, o.b_layout, sums, ns);
        fz_check(st);
        if (st != QMX_OK) fz_same(sums, snap, ns * 4);
        else
            for (i = 0; i < N; i++) {
                int32_t s = 0;
                size_t k;
                for (k = 0; k < K; k++) s += kn ? B[k * ldb + i] : B[i * ldb + k];
                if (sums[i] != s) __builtin_trap();
            }
        o.b_sums = sums;
        o.b_sums_len = ns;
    }
    st = qmx_matmul_i8_workspace_size(M, N, K, (how & 4) ? NULL : &o, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    C = (int32_t *)fk_buf(ec, 4);
    snap = fz_snap(C, ec > FK_BIG ? 1 : ec * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_i8(M, N, K, A, lda, B, ldb, C, ldc, (how & 8) ? NULL : &o, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(C, snap, ec > FK_BIG ? 1 : ec * 4);
        fz_same(ws, wsnap, wsb);
    } else {
        if (short_ws) __builtin_trap();
        if (how & 8) { o.a_zp = 0; o.b_zp = 0; }
        ref = fk_ref_mm(A, lda, B, ldb, kn, M, N, K, o.a_zp, o.b_zp);
        fk_cmp_rows(C, ldc, ref, M, N, 4, snap);
    }
    /* the scalar reference entry point: the same contract */
    memcpy(C, snap, ec > FK_BIG ? 1 : ec * 4);
    st = qmx_matmul_i8_ref(M, N, K, A, lda, B, ldb, C, ldc, (how & 8) ? NULL : &o);
    fz_check(st);
    if (st != QMX_OK) fz_same(C, snap, ec > FK_BIG ? 1 : ec * 4);
    else {
        if (how & 8) { o.a_zp = 0; o.b_zp = 0; }
        ref = fk_ref_mm(A, lda, B, ldb, kn, M, N, K, o.a_zp, o.b_zp);
        fk_cmp_rows(C, ldc, ref, M, N, 4, snap);
    }
}

/* scales of the dequant-on-output matmuls */
static void fk_mkscales(fz_rd *r, size_t M, size_t N, size_t K, qmx_matmul_i8_f32_scales *s) {
    unsigned how = fz_u8(r);
    size_t nblk, na, nb;
    memset(s, 0, sizeof *s);
    s->block_size = (how & 1) ? K : 1 + fz_u8(r) % (K + 3);
    if (how & 2) s->block_size = fz_u8(r) % 2 ? 4 * (1 + fz_u8(r) % 8) : 0;
    nblk = s->block_size ? (K + s->block_size - 1) / s->block_size : 1;
    s->a_per_row = (how >> 2) & 1;
    s->b_per_col = (how >> 3) & 1;
    na = (s->a_per_row ? M : 1) * nblk - ((how & 0x10) ? 1 : 0);
    nb = (s->b_per_col ? N : 1) * nblk - ((how & 0x20) ? 1 : 0);
    if (na > 4096 || nb > 4096) na = nb = 1;
    s->a_scales = fk_scales(r, na);
    s->a_scales_len = na;
    s->b_scales = fk_scales(r, nb);
    s->b_scales_len = nb;
    s->a_zp = fk_zp(r, -128, 127);
}
/* the documented float order: per K-block p = (float)P; p *= sa; p *= sb; sum += p */
static float *fk_ref_f32(const int8_t *A, size_t lda, const int8_t *B, size_t ldb, size_t M,
                         size_t N, size_t K, const qmx_matmul_i8_f32_scales *s) {
    float *C = (float *)fz_alloc(M * N * 4);
    size_t bs = s->block_size < K ? s->block_size : K, nblk = (K + bs - 1) / bs, m, n, b, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            float sum = 0.0f;
            for (b = 0; b < nblk; b++) {
                int32_t P = 0;
                volatile float p;
                for (k = b * bs; k < K && k < (b + 1) * bs; k++)
                    P += ((int32_t)A[m * lda + k] - s->a_zp) * B[n * ldb + k];
                p = (float)P;
                p = p * s->a_scales[(s->a_per_row ? m * nblk : 0) + b];
                p = p * s->b_scales[(s->b_per_col ? n * nblk : 0) + b];
                sum = sum + p;
            }
            C[m * N + n] = sum;
        }
    return C;
}
static void fk_cmp_f(const float *C, size_t ldc, const float *ref, size_t M, size_t N,
                     const void *snap) {
    size_t m, n;
    for (m = 0; m < M; m++) {
        for (n = 0; n < N; n++)
            if (!fz_same_f(C[m * ldc + n], ref[m * N + n])) __builtin_trap();
        if (m + 1 < M && ldc > N && memcmp(C + m * ldc + N, (const float *)snap + m * ldc + N, (ldc - N) * 4))
            __builtin_trap();
    }
}

/* ---- 1: packed weights ---- */
static void fk_packed(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_kdim(r), lda, ldb, ldc, ea, eb, ec, pb = 0, need = 0,
           wsb, esz;
    qmx_matmul_i8_opts o;
    qmx_b_layout lay = (qmx_b_layout)fz_enum(r, 2);
    unsigned how = fz_u8(r);
    int short_ws;
    int8_t *A, *B, *Bn;
    int32_t *C, *ref;
    uint8_t *blob;
    void *ws, *snap, *out, *out2, *ws2;
    qmx_status st, st2;
    fk_rq q;
    qmx_matmul_i8_f32_scales sc;
    if (K > 4096 && M * N > 64) return;   /* the naive references stay fast */
    lda = fk_ld(r, K); ldb = fk_ld(r, lay == QMX_B_KN ? N : K); ldc = fk_ld(r, N);
    ea = fk_ext(M, K, lda); ec = fk_ext(M, N, ldc);
    eb = lay == QMX_B_KN ? fk_ext(K, N, ldb) : fk_ext(N, K, ldb);
    if (fk_toobig) return;
    A = fk_i8(r, ea);
    B = fk_i8(r, eb);
    st = qmx_matmul_i8_pack_weights_size(N, K, &pb);
    fz_check(st);
    if (st != QMX_OK) pb = 64;
    if ((how & 1) && pb) pb--;
    blob = (uint8_t *)fz_alloc_at(pb, (int)(r->n & 63));   /* the queried size (or one less), any alignment */
    snap = fz_snap(blob, pb);
    st = qmx_matmul_i8_pack_weights(B, N, K, ldb, lay, blob, pb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(blob, snap, pb);
        if (how & 2) {   /* a corrupted / foreign blob must give a status */
            size_t i;
            for (i = 0; i < pb; i++) blob[i] = (uint8_t)fz_u8(r);
        } else {
            return;
        }
    } else if (how & 2) {
        blob[fz_u8(r) % 16] ^= (uint8_t)(1u << (fz_u8(r) % 8));  /* header bit flip */
    }
    /* the same weights as [N,K] for the unpacked entry points */
    Bn = (int8_t *)fz_alloc(N * K);
    if (st == QMX_OK) {
        size_t n, k;
        for (n = 0; n < N; n++)
            for (k = 0; k < K; k++) Bn[n * K + k] = lay == QMX_B_KN ? B[k * ldb + n] : B[n * ldb + k];
    }
    memset(&o, 0, sizeof o);
    o.a_zp = fk_zp(r, -128, 127);
    o.b_zp = fk_zp(r, -128, 127);
    st2 = qmx_matmul_i8_packed_workspace_size(M, N, K, &need);
    fz_check(st2);
    if (st2 != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    C = (int32_t *)fk_buf(ec, 4);
    snap = fz_snap(C, ec > FK_BIG ? 1 : ec * 4);
    st2 = qmx_matmul_i8_packed(M, N, K, A, lda, blob, pb, C, ldc, &o, ws, wsb);
    fz_check(st2);
    if (st2 != QMX_OK) fz_same(C, snap, ec > FK_BIG ? 1 : ec * 4);
    else if (st == QMX_OK) {   /* (a foreign blob with a valid header is accepted: unchecked) */
        if (short_ws || (how & 2)) __builtin_trap();
        ref = fk_ref_mm(A, lda, Bn, K, 0, M, N, K, o.a_zp, o.b_zp);
        fk_cmp_rows(C, ldc, ref, M, N, 4, snap);
    }
    /* fully-connected on the blob = fully-connected on the plain weights */
    fk_mkrq(r, N, &q);
    esz = q.esize;
    st2 = qmx_fully_connected_i8_packed_workspace_size(M, N, K, &need);
    fz_check(st2);
    if (st2 != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    out = fk_buf(ec, esz);
    snap = fz_snap(out, ec > FK_BIG ? 1 : ec * esz);
    st2 = qmx_fully_connected_i8_packed(M, N, K, A, lda, o.a_zp, blob, pb, &q.c, out, ldc, ws, wsb);
    fz_check(st2);
    if (st2 != QMX_OK) fz_same(out, snap, ec > FK_BIG ? 1 : ec * esz);
    else if (st == QMX_OK) {
        if (short_ws || (how & 2)) __builtin_trap();
        size_t need2 = 0;
        if (qmx_fully_connected_i8_workspace_size(M, N, K, &need2) != QMX_OK) __builtin_trap();
        ws2 = fz_alloc(need2);
        out2 = fz_alloc(ec * esz);
        memcpy(out2, snap, ec * esz);
        if (qmx_fully_connected_i8(M, N, K, A, lda, o.a_zp, Bn, K, &q.c, out2, ldc, ws2, need2) != QMX_OK ||
            memcmp(out, out2, ec * esz) != 0)
            __builtin_trap();
    }
    /* dequant-on-output on the blob = on the plain weights (the packed FC's workspace size) */
    fk_mkscales(r, M, N, K, &sc);
    if (qmx_fully_connected_i8_packed_workspace_size(M, N, K, &need) != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    out = fk_buf(ec, 4);
    snap = fz_snap(out, ec > FK_BIG ? 1 : ec * 4);
    st2 = qmx_matmul_i8_f32_packed(M, N, K, A, lda, blob, pb, (float *)out, ldc, &sc, ws, wsb);
    fz_check(st2);
    if (st2 != QMX_OK) fz_same(out, snap, ec > FK_BIG ? 1 : ec * 4);
    else if (st == QMX_OK) {
        float *ref2;
        if (short_ws || (how & 2)) __builtin_trap();
        ref2 = fk_ref_f32(A, lda, Bn, K, M, N, K, &sc);
        fk_cmp_f((const float *)out, ldc, ref2, M, N, snap);
    }
}

/* ---- 2: fully-connected ---- */
static void fk_fc(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_kdim(r), lda, ldw, ldo, ea, ew, eo, need = 0, wsb;
    int32_t azp;
    int8_t *A, *W;
    int32_t *acc;
    fk_rq q;
    int short_ws;
    void *out, *snap, *ws, *wsnap;
    qmx_status st;
    if (K > 4096 && M * N > 64) return;   /* the naive references stay fast */
    lda = fk_ld(r, K); ldw = fk_ld(r, K); ldo = fk_ld(r, N);
    ea = fk_ext(M, K, lda); ew = fk_ext(N, K, ldw); eo = fk_ext(M, N, ldo);
    if (fk_toobig) return;
    azp = fk_zp(r, -128, 127);
    A = fk_i8(r, ea);
    W = fk_i8(r, ew);
    fk_mkrq(r, N, &q);
    st = qmx_fully_connected_i8_workspace_size(M, N, K, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    out = fk_buf(eo, q.esize);
    snap = fz_snap(out, eo > FK_BIG ? 1 : eo * q.esize);
    wsnap = fz_snap(ws, wsb);
    st = qmx_fully_connected_i8(M, N, K, A, lda, azp, W, ldw, &q.c, out, ldo, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(out, snap, eo > FK_BIG ? 1 : eo * q.esize);
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    acc = fk_ref_mm(A, lda, W, ldw, 0, M, N, K, azp, q.c.weight_zero_point);
    fk_cmp_rows(out, ldo, fk_ref_rq(&q, acc, M, N), M, N, q.esize, snap);
}

/* ---- 3: dequant-on-output ---- */
static void fk_mm_f32(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_kdim(r), lda, ldb, ldc, ea, eb, ec, need = 0, wsb;
    int8_t *A, *B;
    float *C;
    qmx_matmul_i8_f32_scales sc;
    int short_ws;
    void *ws, *snap, *wsnap;
    qmx_status st;
    if (K > 4096 && M * N > 64) return;   /* the naive references stay fast */
    lda = fk_ld(r, K); ldb = fk_ld(r, K); ldc = fk_ld(r, N);
    ea = fk_ext(M, K, lda); eb = fk_ext(N, K, ldb); ec = fk_ext(M, N, ldc);
    if (fk_toobig) return;
    A = fk_i8(r, ea);
    B = fk_i8(r, eb);
    fk_mkscales(r, M, N, K, &sc);
    st = qmx_matmul_i8_f32_workspace_size(M, N, K, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    C = (float *)fk_buf(ec, 4);
    snap = fz_snap(C, ec > FK_BIG ? 1 : ec * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_i8_f32(M, N, K, A, lda, B, ldb, C, ldc, (fz_u8(r) & 1) ? NULL : &sc, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(C, snap, ec > FK_BIG ? 1 : ec * 4);
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    fk_cmp_f(C, ldc, fk_ref_f32(A, lda, B, ldb, M, N, K, &sc), M, N, snap);
}

/* ---- 4: dynamic float activations ---- */
static void fk_dyn(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_dim(r), ldx, ldy, ex, ey, pb = 0, need = 0, wsb, nws,
           m, n, k;
    int8_t *W;
    float *X, *Y, *wsc, *ref;
    uint8_t *blob;
    int short_ws;
    unsigned how = fz_u8(r);
    void *ws, *snap;
    qmx_status st;
    ldx = fk_ld(r, K); ldy = fk_ld(r, N);
    ex = fk_ext(M, K, ldx); ey = fk_ext(M, N, ldy);
    if (fk_toobig) return;
    X = fk_floats(r, ex, NULL);
    W = fk_i8(r, N * K);
    if (qmx_matmul_i8_pack_weights_size(N, K, &pb) != QMX_OK) return;
    blob = (uint8_t *)fz_alloc(pb);
    if (qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob, pb) != QMX_OK) __builtin_trap();
    nws = (how & 1) ? 1 : N - ((how & 2) ? 1 : 0);
    wsc = fk_scales(r, nws);
    st = qmx_matmul_f32_dyn_i8_workspace_size(M, N, K, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    Y = (float *)fk_buf(ey, 4);
    snap = fz_snap(Y, ey > FK_BIG ? 1 : ey * 4);
    st = qmx_matmul_f32_dyn_i8(M, N, K, X, ldx, blob, pb, wsc, nws, Y, ldy, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) { fz_same(Y, snap, ey > FK_BIG ? 1 : ey * 4); return; }
    if (short_ws) __builtin_trap();
    /* reference: per row sx = absmax / 127 (1 if 0), q = RNE(clamp(x / sx)), then
     * ((float)acc * sx) * sw */
    ref = (float *)fz_alloc(M * N * 4);
    for (m = 0; m < M; m++) {
        float am = 0.0f, sx;
        int8_t q[92];
        for (k = 0; k < K; k++) {
            float a = fz_bits(fz_fbits(X[m * ldx + k]) & 0x7FFFFFFFu);
            if (!fz_finite(a)) __builtin_trap();   /* NaN/Inf must have been refused */
            if (a > am) am = a;
        }
        sx = am == 0.0f ? 1.0f : am / 127.0f;
        if (!(sx > 0.0f)) __builtin_trap();
        for (k = 0; k < K; k++) {
            float t = X[m * ldx + k] / sx;
            int32_t i;
            float fr;
            if (t > 127.0f) t = 127.0f;
            if (t < -127.0f) t = -127.0f;
            i = (int32_t)t;
            fr = t - (float)i;
            if (fr > 0.5f || (fr == 0.5f && (i & 1))) i++;
            else if (fr < -0.5f || (fr == -0.5f && (i & 1))) i--;
            q[k] = (int8_t)i;
        }
        for (n = 0; n < N; n++) {
            int32_t acc = 0;
            volatile float y;
            for (k = 0; k < K; k++) acc += q[k] * W[n * K + k];
            y = (float)acc * sx;
            y = y * wsc[nws == 1 ? 0 : n];
            ref[m * N + n] = y;
        }
    }
    fk_cmp_f(Y, ldy, ref, M, N, snap);
}

/* ---- 5: int4 matmuls ---- */
static int32_t fk_nib(const uint8_t *p, size_t e, int sgn) {
    int32_t v = (p[e / 2] >> (4 * (e & 1))) & 0xF;
    return sgn ? (v ^ 8) - 8 : v;
}
static void fk_i4(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_dim(r), lda, ldw, ldc, ea, ew, ec, need = 0, wsb, i,
           nblk, bs, nz, m, n, b, k;
    qmx_matmul_i4_params p;
    unsigned how = fz_u8(r), sel = fz_u8(r) % 3;
    int a4, w4, short_ws;
    uint8_t *W, *zps = NULL;
    void *A, *C, *ws, *snap, *wsnap;
    int32_t *ref, fzp = 0;   /* fzp: the s4 fully-connected's weight zero point */
    fk_rq q;
    qmx_status st;
    memset(&p, 0, sizeof p);
    p.a_dtype = (qmx_dtype)(fz_u8(r) % 2 ? QMX_INT4 : fz_u8(r) % 4 == 0 ? fz_enum(r, 11) : 0);
    p.w_dtype = (qmx_dtype)(fz_u8(r) % 2 ? QMX_UINT4 : fz_u8(r) % 4 == 0 ? fz_enum(r, 11) : 0);
    a4 = p.a_dtype == QMX_INT4;
    w4 = p.w_dtype != QMX_UINT4;
    p.a_zp = a4 ? fk_zp(r, -8, 7) : fk_zp(r, -128, 127);
    p.w_zp = w4 ? ((how & 1) ? 1 : 0) : fk_zp(r, 0, 15);
    p.block_size = (how & 2) ? 1 + fz_u8(r) % (K + 2) : 0;
    if (sel == 2 || (sel == 0 && (how & 0x80))) {   /* the defaults: int8 A, int4 W, one block */
        memset(&p, 0, sizeof p);
        a4 = 0;
        w4 = 1;
        if (sel == 2) p.a_zp = fk_zp(r, -128, 127);   /* the fully-connected's own a_zp */
    }
    bs = p.block_size && p.block_size < K ? p.block_size : K;
    nblk = K ? (K + bs - 1) / bs : 1;
    lda = fk_ld(r, K); ldw = fk_ld(r, K); ldc = fk_ld(r, N);
    ea = fk_ext(M, K, lda); ew = fk_ext(N, K, ldw); ec = fk_ext(M, N, ldc);
    if (fk_toobig) return;
    if (a4) {
        A = fk_buf((ea + 1) / 2, 1);
        for (i = 0; i < (ea + 1) / 2 && ea <= FK_BIG; i++) ((uint8_t *)A)[i] = (uint8_t)fz_u8(r);
    } else {
        A = fk_i8(r, ea);
    }
    W = (uint8_t *)fk_buf((ew + 1) / 2, 1);
    for (i = 0; i < (ew + 1) / 2 && ew <= FK_BIG; i++) W[i] = (uint8_t)fz_u8(r);
    if (!w4 && (how & 4) && N && N * nblk <= 4096 && sel != 2) {
        nz = N * nblk - ((how & 8) ? 1 : 0);
        zps = (uint8_t *)fz_alloc(nz);
        for (i = 0; i < nz; i++) zps[i] = (uint8_t)(fz_u8(r) % ((how & 0x10) ? 17 : 16));
        p.w_zps = zps;
        p.w_zps_len = nz;
    }
    if (sel == 1) {
        size_t na = ((how & 0x20) ? M : 1) * nblk, nb = ((how & 0x40) ? N : 1) * nblk;
        if (!na || !nb || na > 4096 || nb > 4096) return;
        p.a_per_row = (how >> 5) & 1;
        p.w_per_col = (how >> 6) & 1;
        p.a_scales = fk_scales(r, na);
        p.a_scales_len = na - ((how & 0x80) ? 1 : 0);
        p.w_scales = fk_scales(r, nb);
        p.w_scales_len = nb;
    }
    st = qmx_matmul_i4_workspace_size(M, N, K, sel == 2 ? NULL : &p, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    if (sel == 2) { fk_mkrq(r, N, &q); fzp = q.c.weight_zero_point; }
    C = fk_buf(ec, sel == 2 ? q.esize : 4);
    snap = fz_snap(C, ec > FK_BIG ? 1 : ec * (sel == 2 ? q.esize : 4));
    wsnap = fz_snap(ws, wsb);
    if (sel == 0) st = qmx_matmul_i4(M, N, K, A, lda, W, ldw, (int32_t *)C, ldc, (how & 0x80) ? NULL : &p, ws, wsb);
    else if (sel == 1) st = qmx_matmul_i4_f32(M, N, K, A, lda, W, ldw, (float *)C, ldc, &p, ws, wsb);
    else st = qmx_fully_connected_i4(M, N, K, (const int8_t *)A, lda, p.a_zp, W, ldw, &q.c, C, ldc, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(C, snap, ec > FK_BIG ? 1 : ec * (sel == 2 ? q.esize : 4));
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    /* per-block exact partials */
    ref = (int32_t *)fz_alloc(M * N * nblk * 4);
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++)
            for (b = 0; b < nblk; b++) {
                int64_t s = 0;
                int32_t wz = w4 ? fzp : (zps ? zps[n * nblk + b] : p.w_zp);
                for (k = b * bs; k < K && k < (b + 1) * bs; k++) {
                    int32_t a = a4 ? fk_nib((const uint8_t *)A, m * lda + k, 1) : ((const int8_t *)A)[m * lda + k];
                    s += ((int64_t)a - p.a_zp) * (fk_nib(W, n * ldw + k, w4) - wz);
                }
                ref[(m * N + n) * nblk + b] = (int32_t)s;
            }
    if (sel == 0 || sel == 2) {
        int32_t *acc = (int32_t *)fz_alloc(M * N * 4);
        for (m = 0; m < M * N; m++) {
            int64_t s = 0;
            for (b = 0; b < nblk; b++) s += ref[m * nblk + b];
            acc[m] = (int32_t)s;
        }
        if (sel == 0) fk_cmp_rows(C, ldc, acc, M, N, 4, snap);
        else fk_cmp_rows(C, ldc, fk_ref_rq(&q, acc, M, N), M, N, q.esize, snap);
    } else {
        float *rf = (float *)fz_alloc(M * N * 4);
        for (m = 0; m < M; m++)
            for (n = 0; n < N; n++) {
                float sum = 0.0f;
                for (b = 0; b < nblk; b++) {
                    volatile float v = (float)ref[(m * N + n) * nblk + b];
                    v = v * p.a_scales[(p.a_per_row ? m * nblk : 0) + b];
                    v = v * p.w_scales[(p.w_per_col ? n * nblk : 0) + b];
                    sum = sum + v;
                }
                rf[m * N + n] = sum;
            }
        fk_cmp_f((const float *)C, ldc, rf, M, N, snap);
    }
}

/* ---- 6: fp8 x fp8 ---- */
static int fk_fp8_ok(uint8_t c, qmx_dtype f) {
    return f == QMX_FP8_E5M2 ? (c & 0x7C) != 0x7C : (c & 0x7F) != 0x7F;
}
static void fk_fp8(fz_rd *r) {
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_dim(r), lda, ldb, ldc, ea, eb, ec, need = 0, wsb, i,
           m, n, k, na, nb;
    qmx_matmul_fp8_params p;
    unsigned how = fz_u8(r);
    uint8_t *A, *B;
    float *C, *ref;
    int short_ws, ok = 1;
    void *ws, *snap, *wsnap;
    qmx_dtype af, bf;
    qmx_status st;
    memset(&p, 0, sizeof p);
    p.a_fmt = (qmx_dtype)(fz_u8(r) % 2 ? QMX_FP8_E5M2 : fz_u8(r) % 4 == 0 ? fz_enum(r, 11) : 0);
    p.b_fmt = (qmx_dtype)(fz_u8(r) % 2 ? QMX_FP8_E5M2 : fz_u8(r) % 4 == 0 ? fz_enum(r, 11) : 0);
    lda = fk_ld(r, K); ldb = fk_ld(r, K); ldc = fk_ld(r, N);
    ea = fk_ext(M, K, lda); eb = fk_ext(N, K, ldb); ec = fk_ext(M, N, ldc);
    if (fk_toobig) return;
    A = (uint8_t *)fk_buf(ea, 1);
    B = (uint8_t *)fk_buf(eb, 1);
    for (i = 0; i < ea && ea <= FK_BIG; i++) A[i] = (uint8_t)((how & 1) ? fz_u8(r) : fz_u8(r) & 0xBB);
    for (i = 0; i < eb && eb <= FK_BIG; i++) B[i] = (uint8_t)((how & 1) ? fz_u8(r) : fz_u8(r) & 0xBB);
    p.a_per_row = (how >> 1) & 1;
    p.b_per_col = (how >> 2) & 1;
    na = p.a_per_row ? M : 1;
    nb = p.b_per_col ? N : 1;
    p.a_scales = fk_scales(r, na);
    p.a_scales_len = na - ((how & 8) && na ? 1 : 0);
    p.b_scales = (how & 0x10) ? NULL : fk_scales(r, nb);
    p.b_scales_len = nb;
    st = qmx_matmul_fp8_f32_workspace_size(M, N, K, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    C = (float *)fk_buf(ec, 4);
    snap = fz_snap(C, ec > FK_BIG ? 1 : ec * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_fp8_f32(M, N, K, A, lda, B, ldb, C, ldc, &p, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(C, snap, ec > FK_BIG ? 1 : ec * 4);
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    af = p.a_fmt ? p.a_fmt : QMX_FP8_E4M3FN;
    bf = p.b_fmt ? p.b_fmt : QMX_FP8_E4M3FN;
    for (m = 0; m < M; m++)
        for (k = 0; k < K; k++) ok &= fk_fp8_ok(A[m * lda + k], af);
    for (n = 0; n < N; n++)
        for (k = 0; k < K; k++) ok &= fk_fp8_ok(B[n * ldb + k], bf);
    if (!ok) __builtin_trap();   /* NaN/Inf codes must have been refused */
    ref = (float *)fz_alloc(M * N * 4);
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            float s[16];
            volatile float y;
            int l, w;
            for (l = 0; l < 16; l++) s[l] = 0.0f;
            for (k = 0; k < K; k++)
                s[k % 16] = s[k % 16] + qmx_fp8_to_f32(A[m * lda + k], af) * qmx_fp8_to_f32(B[n * ldb + k], bf);
            for (w = 8; w >= 1; w /= 2)
                for (l = 0; l < w; l++) s[l] = s[l] + s[l + w];
            y = s[0] * p.a_scales[p.a_per_row ? m : 0];
            y = y * p.b_scales[p.b_per_col ? n : 0];
            ref[m * N + n] = y;
        }
    fk_cmp_f(C, ldc, ref, M, N, snap);
}

/* ---- 7: einsum on fixed specs ---- */
static void fk_einsum(fz_rd *r) {
    static const char *const specs[12] = {
        "ij,jk->ik", "ij,kj->ik", "bij,bjk->bik", "i,i->", "ij,j->i", "bsd,fd->bsf",
        "ij,ij->ij", "ii,i->i", "ij,kl->ijkl", "bnth,bnsh->bnts", "ijk,ikl->jl", "i,j->ij"};
    const char *spec = specs[fz_u8(r) % 12], *term[3], *s;
    size_t lsz[52], cnt[2], out_len, i, need = 0, wsb, oshape[QMX_EINSUM_MAX_RANK];
    int tl[3], t, o, orank = 0, pos = -2, short_ws, exact;
    unsigned how = fz_u8(r);
    qmx_einsum_operand op[2];
    qmx_einsum_opts opts;
    float *sc[2];
    int32_t zp[2];
    void *out, *snap, *ws;
    qmx_status st;
    /* the three terms of the spec */
    term[0] = spec;
    s = strchr(spec, ',');
    term[1] = s + 1;
    tl[0] = (int)(s - spec);
    s = strstr(spec, "->");
    tl[1] = (int)(s - term[1]);
    term[2] = s + 2;
    tl[2] = (int)strlen(term[2]);
    for (i = 0; i < 52; i++) lsz[i] = 1 + fz_u8(r) % 5;
    memset(op, 0, sizeof op);
    memset(&opts, 0, sizeof opts);
    opts.int32_out = how & 1;
    exact = 1;
    for (o = 0; o < 2; o++) {
        static const qmx_dtype dts[8] = {QMX_INT8, QMX_INT8, QMX_INT4, QMX_UINT4, QMX_FLOAT32,
                                         QMX_FP8_E4M3FN, QMX_INT8, QMX_UINT8};
        qmx_einsum_operand *q = &op[o];
        q->dtype = dts[fz_u8(r) % 8];
        q->rank = tl[o];
        cnt[o] = 1;
        for (t = 0; t < tl[o]; t++) {
            q->shape[t] = lsz[term[o][t] - 'a'];
            cnt[o] *= q->shape[t];
        }
        if (q->dtype == QMX_FLOAT32) {
            float *d = (float *)fz_alloc(cnt[o] * 4);
            for (i = 0; i < cnt[o]; i++) d[i] = (how & 2) ? fz_val(r, 2) : (float)((int)(fz_u8(r) % 15) - 7);
            if (how & 2) exact = 0;
            q->data = d;
            q->data_bytes = cnt[o] * 4;
        } else if (q->dtype == QMX_INT4 || q->dtype == QMX_UINT4) {
            uint8_t *d = (uint8_t *)fz_alloc((cnt[o] + 1) / 2);
            for (i = 0; i < (cnt[o] + 1) / 2; i++) d[i] = (uint8_t)fz_u8(r);
            q->data = d;
            q->data_bytes = (cnt[o] + 1) / 2;
        } else {
            uint8_t *d = (uint8_t *)fz_alloc(cnt[o]);
            for (i = 0; i < cnt[o]; i++) d[i] = (uint8_t)fz_u8(r);
            if (q->dtype == QMX_FP8_E4M3FN) exact = 0;
            q->data = d;
            q->data_bytes = cnt[o];
        }
        if ((how & 4) && q->data_bytes) q->data_bytes--;
        zp[o] = (how & (8 << o)) ? fk_zp(r, -8, 8) : 0;
        q->zero_point = zp[o];
        sc[o] = NULL;
        if (how & (0x20 << o)) {
            size_t n = 1 + fz_u8(r) % 8;
            sc[o] = fk_scales(r, n);
            q->scales = sc[o];
            q->scales_len = n;
            q->scaling = (qmx_einsum_scaling)fz_enum(r, 4);
            q->channel_axis = (int)(fz_u8(r) % 5) - 1;
            q->block_axis = (int)(fz_u8(r) % 5) - 1;
            q->block_size = fz_u8(r) % 4;
            exact = 0;
        }
    }
    st = qmx_einsum_output_shape(spec, &op[0], &op[1], oshape, &orank, &pos);
    if (st != QMX_OK) __builtin_trap();   /* fixed, valid specs and consistent sizes */
    out_len = 1;
    for (t = 0; t < orank; t++) out_len *= oshape[t];
    if (how & 0x80) out_len--;
    st = qmx_einsum_workspace_size(spec, &op[0], &op[1], &opts, &need, &pos);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    out = fz_alloc(out_len * 4);
    snap = fz_snap(out, out_len * 4);
    st = qmx_einsum(spec, &op[0], &op[1], &opts, out, out_len, need ? ws : NULL, wsb, &pos);
    fz_check(st);
    if (st != QMX_OK) { fz_same(out, snap, out_len * 4); return; }
    if (short_ws) __builtin_trap();
    /* naive reference: every assignment of the labels, int64 (exact for int data; float data
     * here is small integers whose sums are exact) */
    if (opts.int32_out || exact) {
        char labs[16];
        int nl = 0, idx[16], l;
        int64_t *acc = (int64_t *)fz_alloc(out_len * 8);
        memset(acc, 0, out_len * 8);
        for (t = 0; t < 3; t++)
            for (o = 0; o < tl[t]; o++)
                if (!memchr(labs, term[t][o], (size_t)nl)) labs[nl++] = term[t][o];
        for (l = 0; l < nl; l++) idx[l] = 0;
        for (;;) {
            size_t off[3];
            int64_t v[2];
            for (t = 0; t < 3; t++) {   /* row-major offsets of the current assignment */
                off[t] = 0;
                for (o = 0; o < tl[t]; o++) {
                    int li = (int)((const char *)memchr(labs, term[t][o], (size_t)nl) - labs);
                    off[t] = off[t] * lsz[term[t][o] - 'a'] + (size_t)idx[li];
                }
            }
            for (o = 0; o < 2; o++) {
                const qmx_einsum_operand *q = &op[o];
                if (q->dtype == QMX_FLOAT32) v[o] = (int64_t)((const float *)q->data)[off[o]];
                else if (q->dtype == QMX_INT8) v[o] = ((const int8_t *)q->data)[off[o]];
                else v[o] = fk_nib((const uint8_t *)q->data, off[o], q->dtype == QMX_INT4);
                v[o] -= zp[o];
            }
            acc[off[2]] += v[0] * v[1];
            for (l = nl - 1; l >= 0; l--) {
                if ((size_t)++idx[l] < lsz[labs[l] - 'a']) break;
                idx[l] = 0;
            }
            if (l < 0) break;
        }
        int i32 = opts.int32_out && op[0].dtype != QMX_FLOAT32 && op[1].dtype != QMX_FLOAT32;
        for (i = 0; i < out_len; i++) {
            if (i32) {
                if (((const int32_t *)out)[i] != acc[i]) __builtin_trap();
            } else if (((const float *)out)[i] != (float)acc[i]) {
                __builtin_trap();
            }
        }
    }
}

/* ---- 8: KV cache ---- */
static void fk_kv(fz_rd *r) {
    static const qmx_dtype dts[6] = {QMX_DTYPE_INVALID, QMX_INT8, QMX_INT4, QMX_FP8_E4M3FN,
                                     QMX_FP8_E5M2, QMX_FLOAT32};
    qmx_kv_config cfg;
    qmx_kv_cache cache, csnap;
    size_t bytes = 0, layer, per, nops, op, i, hist_n = 0, hd;
    unsigned how = fz_u8(r), b;
    void *storage;
    float *hist_k, *hist_v;   /* every appended token (up to 64), for the read-back check */
    int all_small = 1, o;
    qmx_status st;
    memset(&cfg, 0, sizeof cfg);
    b = fz_u8(r);
    cfg.capacity = b >= 0xC0 ? 1 + b % 80 : 1 + b % 12;   /* > 16: the 16-token kernels */
    cfg.n_kv_heads = 1 + fz_u8(r) % 3;
    hd = fz_u8(r);
    cfg.head_dim = (how & 1) ? ((size_t)1 << (hd % 7)) : hd >= 0xF0 ? 17 + (hd & 15) * 4 : 1 + hd % 16;
    b = fz_u8(r);
    cfg.k_dtype = b >= 0xF8 ? (qmx_dtype)fz_enum(r, 11) : dts[b % 6];
    cfg.v_dtype = dts[fz_u8(r) % 6];
    cfg.k_axis = (qmx_kv_axis)fz_enum(r, 3);
    cfg.v_axis = (qmx_kv_axis)fz_enum(r, 2);
    cfg.channel_block = (how & 2) ? 1 + fz_u8(r) % 4 : 0;
    if (cfg.k_axis == QMX_KV_CHANNEL && !(how & 4)) {
        size_t g = cfg.channel_block ? cfg.channel_block : QMX_KV_DEFAULT_CHANNEL_BLOCK;
        cfg.capacity = g * (1 + cfg.capacity % 3);
    }
    cfg.mode = (qmx_kv_mode)fz_enum(r, 2);
    cfg.n_layers = fz_u8(r) % 3;
    cfg.rotate = (how >> 3) & 1;
    st = qmx_kv_cache_storage_size(&cfg, &bytes);
    fz_check(st);
    if (st != QMX_OK) bytes = 64;
    if (bytes > FK_BIG) return;
    if ((how & 0x10) && bytes) bytes--;
    storage = fz_alloc_at(bytes, (int)((r->n * 29) & 63));   /* any alignment */
    layer = fz_u8(r) % 3;
    memset(&cache, 0x5A, sizeof cache);
    memcpy(&csnap, &cache, sizeof cache);
    st = qmx_kv_cache_init_layer(&cache, &cfg, storage, bytes, layer);
    fz_check(st);
    if (st != QMX_OK) { if (memcmp(&cache, &csnap, sizeof cache)) __builtin_trap(); return; }
    per = cfg.n_kv_heads * cfg.head_dim;
    hist_k = (float *)fz_alloc(64 * per * 4);
    hist_v = (float *)fz_alloc(64 * per * 4);
    nops = 1 + fz_u8(r) % 8;
    for (op = 0; op < nops; op++) {
        unsigned kind = fz_u8(r) % 5;
        size_t nt = fz_u8(r), before = cache.n_tokens;
        nt = nt >= 0xF0 ? 16 + (nt & 15) : 1 + nt % 3;
        if (kind <= 1) {   /* append (or prefill, kind 1) */
            int sk, sv, sq = 1;
            float *k = fk_floats(r, nt * per, &sk), *v = fk_floats(r, nt * per, &sv), *q = NULL, *o2 = NULL;
            size_t g = 1 + fz_u8(r) % 2, nh = cfg.n_kv_heads * g, need = 0, wsb = 0;
            void *ws = NULL, *osnap = NULL, *ssnap = fz_snap(storage, bytes);
            int short_ws = 0;
            if (kind == 1) {
                q = fk_floats(r, nt * nh * cfg.head_dim, &sq);
                if (qmx_kv_attention_workspace_size(&cfg, nh, &need) != QMX_OK) __builtin_trap();
                ws = fk_ws(r, need, &wsb, &short_ws);
                o2 = (float *)fz_alloc(nt * nh * cfg.head_dim * 4);
                osnap = fz_snap(o2, nt * nh * cfg.head_dim * 4);
                st = qmx_kv_prefill(&cache, k, v, nt, q, nh, NULL, o2, ws, wsb);
            } else {
                st = qmx_kv_cache_append(&cache, k, v, nt);
            }
            fz_check(st);
            if (st != QMX_OK) {
                if (kind == 1 && st == QMX_ERR_NONFINITE) {
                    /* a logit overflow midway may leave the tokens before it appended */
                    if (cache.n_tokens > before + nt) __builtin_trap();
                } else {   /* nothing appended, nothing written */
                    if (cache.n_tokens != before) __builtin_trap();
                    fz_same(storage, ssnap, bytes);
                    if (o2) fz_same(o2, osnap, nt * nh * cfg.head_dim * 4);
                }
                if (cache.n_tokens != before) { all_small = 0; hist_n = 64; }
                continue;
            }
            if (short_ws || cache.n_tokens != before + nt) __builtin_trap();
            if (!sk || !sv) all_small = 0;
            for (i = 0; i < nt && hist_n < 64; i++, hist_n++) {
                memcpy(hist_k + hist_n * per, k + i * per, per * 4);
                memcpy(hist_v + hist_n * per, v + i * per, per * 4);
            }
        } else if (kind == 2) {   /* read back */
            size_t pos = fz_u8(r) % (cache.n_tokens + 2), t, h, d;
            float *ko = (float *)fz_alloc(nt * per * 4), *vo = (float *)fz_alloc(nt * per * 4);
            void *ks = fz_snap(ko, nt * per * 4), *vs = fz_snap(vo, nt * per * 4);
            unsigned w = fz_u8(r) % 3;
            st = qmx_kv_cache_read(&cache, pos, nt, w == 1 ? NULL : ko, w == 2 ? NULL : vo);
            fz_check(st);
            if (st != QMX_OK) { fz_same(ko, ks, nt * per * 4); fz_same(vo, vs, nt * per * 4); continue; }
            if (pos + nt > cache.n_tokens) __builtin_trap();
            if (cfg.rotate || !all_small || pos + nt > hist_n) continue;
            for (t = 0; t < nt; t++)
                for (o = 0; o < 2; o++) {   /* within the format's step of the group's absmax */
                    qmx_dtype dt = o ? cfg.v_dtype : cfg.k_dtype;
                    qmx_kv_axis ax = o ? cfg.v_axis : cfg.k_axis;
                    const float *src = (o ? hist_v : hist_k) + (pos + t) * per;
                    const float *got = (o ? vo : ko) + t * per;
                    double rel = dt == QMX_FLOAT32 ? 0.0 : dt == QMX_INT4 ? 0.5 / 7.5
                               : dt == QMX_FP8_E4M3FN ? 1.0 / 16 : dt == QMX_FP8_E5M2 ? 1.0 / 8 : 0.5 / 127.5;
                    double B = dt == QMX_INT4 ? 7.5 : dt == QMX_FP8_E4M3FN ? 448 : dt == QMX_FP8_E5M2 ? 57344 : 127.5;
                    if ((o ? w == 2 : w == 1) || ax == QMX_KV_CHANNEL) continue;   /* not read */
                    for (h = 0; h < cfg.n_kv_heads; h++) {
                        double am = 0;
                        size_t h0 = ax == QMX_KV_DKV ? h : 0, h1 = ax == QMX_KV_DKV ? h + 1 : cfg.n_kv_heads;
                        for (i = h0 * cfg.head_dim; i < h1 * cfg.head_dim; i++)
                            am = src[i] > am ? src[i] : -src[i] > am ? -src[i] : am;
                        for (d = 0; d < cfg.head_dim; d++) {
                            double e = (double)got[h * cfg.head_dim + d] - src[h * cfg.head_dim + d];
                            if (e < 0) e = -e;
                            /* Qwix's guard: absmax / B < sqrt(FLT_MIN) quantizes with scale 1 */
                            double tol = dt != QMX_FLOAT32 && am / B < 1.0842022e-19 ? am : am * rel * 1.0001;
                            if (e > tol + 1e-30) __builtin_trap();
                        }
                    }
                }
        } else if (kind == 3) {   /* attention decode */
            size_t g = 1 + fz_u8(r) % 3, nh = cfg.n_kv_heads * g, need = 0, wsb, hd2 = cfg.head_dim;
            qmx_kv_attn_opts ao;
            int sq, short_ws;
            float *q, *out;
            void *ws, *osnap;
            memset(&ao, 0, sizeof ao);
            b = fz_u8(r);
            ao.causal_len = (b & 1) ? fz_u8(r) % (cache.n_tokens + 2) : 0;
            ao.window = (b & 2) ? fz_u8(r) % 6 : 0;
            ao.scale = (b & 4) ? fz_val(r, 2) : 0.0f;
            ao.float_query = (b >> 3) & 1;
            if (b & 0x10) nh++;   /* not a multiple of the KV heads (unless 1) */
            q = fk_floats(r, nh * hd2, &sq);
            st = qmx_kv_attention_workspace_size(&cfg, nh, &need);
            fz_check(st);
            if (st != QMX_OK) need = 64;
            ws = fk_ws(r, need, &wsb, &short_ws);
            out = (float *)fz_alloc(nh * hd2 * 4);
            osnap = fz_snap(out, nh * hd2 * 4);
            st = qmx_kv_attention(&cache, q, nh, (b & 0x20) ? NULL : &ao, out, ws, wsb);
            fz_check(st);
            if (st != QMX_OK) { fz_same(out, osnap, nh * hd2 * 4); continue; }
            if (short_ws) __builtin_trap();
            if (b & 0x20) memset(&ao, 0, sizeof ao);
            for (i = 0; i < nh * hd2; i++)
                if (fz_isnan(out[i])) __builtin_trap();
            /* float-query attention vs a double softmax over the read-back cache */
            if (sq && all_small && (ao.float_query || cfg.k_dtype == QMX_FP8_E4M3FN ||
                                    cfg.k_dtype == QMX_FP8_E5M2 || cfg.k_dtype == QMX_FLOAT32)) {
                size_t hi = ao.causal_len ? ao.causal_len : cache.n_tokens, lo, n, t, h, d;
                size_t win = ao.window ? ao.window : (cfg.mode == QMX_KV_RING ? cfg.capacity : 0);
                float isd = ao.scale != 0.0f ? ao.scale : qmx_kv_inv_sqrt(hd2), *kr, *vr;
                lo = win && hi > win ? hi - win : 0;
                n = hi - lo;
                kr = (float *)fz_alloc(n * per * 4);
                vr = (float *)fz_alloc(n * per * 4);
                if (qmx_kv_cache_read(&cache, lo, n, kr, vr) != QMX_OK) __builtin_trap();
                for (h = 0; h < nh; h++) {
                    size_t kh = h / (nh / cfg.n_kv_heads);
                    double mx = -1e300, S = 0, vmax = 0, lg[64 * 3];
                    if (n > 64 * 3) break;
                    for (t = 0; t < n; t++) {
                        double l = 0;
                        for (d = 0; d < hd2; d++) l += (double)q[h * hd2 + d] * kr[(t * cfg.n_kv_heads + kh) * hd2 + d];
                        lg[t] = l * isd;
                        if (lg[t] > mx) mx = lg[t];
                    }
                    for (t = 0; t < n; t++) { lg[t] = qmx_kv_exp((float)(lg[t] - mx)); S += lg[t]; }
                    /* the bound is relative to max|v| over the value scale groups (this
                     * head, or every head with one scale per token) */
                    for (t = 0; t < n; t++)
                        for (d = 0; d < (cfg.v_axis == QMX_KV_DKV ? hd2 : per); d++) {
                            double a = vr[t * per + (cfg.v_axis == QMX_KV_DKV ? kh * hd2 : 0) + d];
                            if (a < 0) a = -a;
                            if (a > vmax) vmax = a;
                        }
                    for (d = 0; d < hd2; d++) {
                        double acc = 0, e;
                        for (t = 0; t < n; t++) acc += lg[t] * vr[(t * cfg.n_kv_heads + kh) * hd2 + d];
                        e = acc / S - out[h * hd2 + d];
                        if (e < 0) e = -e;
                        if (e > 4e-3 * vmax + 1e-30) __builtin_trap();
                    }
                }
            }
        } else {   /* reset */
            if ((fz_u8(r) & 3) == 0) {
                if (qmx_kv_cache_reset(&cache) != QMX_OK || cache.n_tokens != 0) __builtin_trap();
                hist_n = 0;
                all_small = 1;
            }
        }
    }
}

/* ---- 9 (first byte 251..255): qmx_matmul_blockw_dyn_i8 ---- */
/* 2^e as a float, by exact halvings / doublings (e >= -149) */
static float fk_bwd_pow2(int e) {
    float s = 1.0f;
    for (; e > 0; e--) s = s * 2.0f;
    for (; e < 0; e++) s = s * 0.5f;
    return s;
}
/* the block scale at scale index si as the docs decode it */
static float fk_bwd_scale(const qmx_blockw *w, size_t si) {
    unsigned c;
    if (w->kind == QMX_BLOCKW_QCONFIG) return w->scales[si];
    c = w->scale_codes[si];
    if (w->mx->rule == QMX_MX_GGML && w->mx->format == QMX_NVFP4) {   /* UE4M3 / 2 */
        unsigned e = (c >> 3) & 15u, m = c & 7u;
        if (c == 0 || c == 0x7F) return 0.0f;
        return (float)(e ? 8u + m : m) * fk_bwd_pow2(e ? (int)e - 11 : -10);
    }
    if (w->mx->rule == QMX_MX_GGML) return fk_bwd_pow2((int)c - 128);
    if (w->mx->format == QMX_NVFP4) {
        float s = qmx_fp8_to_f32((uint8_t)c, QMX_FP8_E4M3FN);
        if (w->mx->tensor_scale != 0.0f && s == s) {
            volatile float t = w->mx->tensor_scale * s;
            s = t;
        }
        return s;
    }
    if (w->mx->rule == QMX_MX_QWIX)
        return c == 0 ? 0.0f : c == 255 ? fz_bits(0x7F800000u) : fk_bwd_pow2((int)c - 127);
    return c == 255 ? fz_bits(0x7FC00000u) : fk_bwd_pow2((int)c - 127);
}
/* RN_f32(S 2^-27) in integers */
static float fk_bwd_rn27(int64_t S) {
    uint64_t a = S < 0 ? 0u - (uint64_t)S : (uint64_t)S, q, rem, half;
    int L = 0, d = 0;
    float v;
    for (q = a; q; q >>= 1) L++;
    q = a;
    if (L > 24) {
        d = L - 24;
        q = a >> d; rem = a & (((uint64_t)1 << d) - 1u); half = (uint64_t)1 << (d - 1);
        if (rem > half || (rem == half && (q & 1u))) q++;
    }
    v = (float)q * fk_bwd_pow2(d - 27);   /* q <= 2^24: exact, and so is the product */
    return S < 0 ? -v : v;
}
/* qmx_matmul_blockw_f32 on the same weights and activations: outputs untouched on error, and
 * on success the documented order: W dequantized (qmx_mx_dequantize / qmx_dequantize of the
 * whole matrix, the same bits as per row), then per output sum = sum + A*W in increasing k
 * (each step one float rounding), a NaN written as 0x7FC00000 */
static void fk_bw_f32(fz_rd *r, size_t M, size_t N, size_t K, const float *X, size_t ldx,
                      const qmx_blockw *w, size_t ldy, size_t ey) {
    size_t need = 0, wsb, m, n, k;
    int short_ws;
    void *ws, *snap, *wsnap;
    float *Y, *wd;
    qmx_status st = qmx_matmul_blockw_f32_workspace_size(M, N, K, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    Y = (float *)fk_buf(ey, 4);
    snap = fz_snap(Y, ey > FK_BIG ? 1 : ey * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_blockw_f32(M, N, K, X, ldx, w, Y, ldy, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(Y, snap, ey > FK_BIG ? 1 : ey * 4);
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    wd = (float *)fz_alloc(N * K * 4);
    if (w->kind == QMX_BLOCKW_MX)
        st = qmx_mx_dequantize(w->mx, (const uint8_t *)w->data, w->data_bytes, w->scale_codes,
                               w->n_scales, N * K, wd);
    else
        st = qmx_dequantize(w->qc, w->data, w->data_bytes, N * K, w->scales, w->n_scales,
                            w->zero_points, wd);
    if (st != QMX_OK) __builtin_trap();   /* the kernel accepted these weights */
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            volatile float sum = 0.0f;
            float y = Y[m * ldy + n];
            for (k = 0; k < K; k++) {
                volatile float p = X[m * ldx + k] * wd[n * K + k];
                sum = sum + p;
            }
            if (sum != sum ? fz_fbits(y) != 0x7FC00000u : fz_fbits(y) != fz_fbits(sum)) __builtin_trap();
        }
}
/* qmx_matmul_mxfp8_f32 with the weights as both operands: a status, the output untouched on
 * error, and the same bits when run again into another buffer (integer block sums) */
static void fk_bw_mxfp8(size_t M, size_t N, size_t K, const qmx_blockw *w) {
    float *Y1 = (float *)fz_alloc(N * N * 4), *Y2 = (float *)fz_alloc(N * N * 4);
    void *snap;
    qmx_status st;
    (void)M;
    memset(Y1, 0x5A, N * N * 4);
    snap = fz_snap(Y1, N * N * 4);
    st = qmx_matmul_mxfp8_f32(N, N, K, w, w, Y1, N);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(Y1, snap, N * N * 4);
        return;
    }
    if (qmx_matmul_mxfp8_f32(N, N, K, w, w, Y2, N) != QMX_OK || memcmp(Y1, Y2, N * N * 4) != 0)
        __builtin_trap();
}
/* The prepacked blob of fk_bwd's weights (qmx_blockw_pack; formats it does not take give a
 * status from the size query, a blob one byte short BUFFER_TOO_SMALL with it untouched), its
 * info and unpack, and qmx_matmul_blockw_packed_dyn_i8 on it: Y0 of the unpacked call bit for
 * bit, or (an act_block the blob kernel does not take, a short workspace) a status with Y and
 * the workspace untouched; then qmx_matmul_blockw_packed_f32: always accepted on a blob the
 * dyn kernel ran on, and the bits of qmx_matmul_blockw_f32 whenever that accepts the weights. */
static unsigned long fk_bwd_packed_runs;   /* successful blob calls (seed search) */
static void fk_bwd_packed(fz_rd *r, size_t M, size_t N, size_t K, const float *X, size_t ldx,
                          const qmx_blockw *w, const qmx_blockw_dyn_opts *op, const float *Y0,
                          size_t ldy, size_t ey) {
    size_t bytes = 0, need = 0, wsb, i;
    unsigned b = fz_u8(r);
    unsigned char *blob;
    qmx_blockw_packed_desc desc;
    float *Y;
    void *ws, *snap, *wsnap, *bsnap;
    int short_ws;
    qmx_status st = qmx_blockw_pack_size(w, N, K, &bytes);
    fz_check(st);
    if (st != QMX_OK) return;
    if (bytes > FK_BIG) __builtin_trap();
    if (b & 1) {   /* one byte short: refused, the blob untouched */
        blob = (unsigned char *)fz_alloc_at(bytes - 1, (int)(b >> 2));
        bsnap = fz_snap(blob, bytes - 1);
        if (qmx_blockw_pack(w, N, K, blob, bytes - 1) != QMX_ERR_BUFFER_TOO_SMALL) __builtin_trap();
        fz_same(blob, bsnap, bytes - 1);
        return;
    }
    blob = (unsigned char *)fz_alloc_at(bytes, (int)(b >> 2));
    if (qmx_blockw_pack(w, N, K, blob, bytes) != QMX_OK) __builtin_trap();   /* sized: packs */
    if (qmx_blockw_packed_info(blob, bytes, &desc) != QMX_OK) __builtin_trap();
    st = qmx_blockw_packed_info(blob, bytes - 1, &desc);                 /* truncated */
    if (st == QMX_OK) __builtin_trap();
    fz_check(st);
    if (b & 2) {   /* a corrupted header byte: a status or (a don't-care byte) the same Y */
        blob[fz_u8(r) % 64] ^= (unsigned char)(1u + fz_u8(r) % 255);
    }
    st = qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, op, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    Y = (float *)fk_buf(ey, 4);
    for (i = 0; i < ey; i++) Y[i] = -7.0f;
    snap = fz_snap(Y, ey * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, ldx, blob, bytes, op, Y, ldy, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(Y, snap, ey * 4);
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    fk_bwd_packed_runs++;
    if (b & 2) return;   /* (a corrupted byte the kernel does not read: no claim on Y) */
    for (i = 0; i < M; i++) {   /* the same bits as the unpacked call; padding untouched */
        size_t n;
        for (n = 0; n < ldy && i * ldy + n < ey; n++) {
            float want = n < N ? Y0[i * ldy + n] : -7.0f;
            if (fz_fbits(Y[i * ldy + n]) != fz_fbits(want)) __builtin_trap();
        }
    }
    {   /* qmx_matmul_blockw_packed_f32: qmx_matmul_blockw_f32's bits on the unpacked weights */
        size_t na = 0, nf = 0;
        float *Ya = (float *)fk_buf(ey, 4), *Yb = (float *)fk_buf(ey, 4);
        void *wa, *wf;
        qmx_status sa, sf;
        if (qmx_matmul_blockw_f32_workspace_size(M, N, K, &na) != QMX_OK ||
            qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &nf) != QMX_OK)
            __builtin_trap();
        wa = fz_alloc(na);
        wf = fz_alloc(nf);
        for (i = 0; i < ey; i++) { Ya[i] = -7.0f; Yb[i] = -7.0f; }
        sa = qmx_matmul_blockw_f32(M, N, K, X, ldx, w, Ya, ldy, wa, na);
        sf = qmx_matmul_blockw_packed_f32(M, N, K, X, ldx, blob, bytes, Yb, ldy, wf, nf);
        fz_check(sa);
        if (sf != QMX_OK || (sa == QMX_OK && memcmp(Ya, Yb, ey * 4) != 0)) __builtin_trap();
    }
}

/* ggml Q4_1 through the blob (first byte 250): block_q4_1 = binary16 d, binary16 m, 16 bytes
 * of nibble pairs (element i low, i + 16 high), 20 bytes per 32 weights. */
static void fk_q41(fz_rd *r) {
    size_t M = 1 + fz_u8(r) % 6, N = 1 + fz_u8(r) % 40, K = 32 * (1 + fz_u8(r) % 5);
    size_t nbk = N * (K / 32), bb = 20 * nbk, bytes = 0, need = 0, nf = 0, wsb, i;
    unsigned how = fz_u8(r);
    uint8_t *blocks = (uint8_t *)fz_alloc(bb), *back, *blob;
    float *X, *Y, *Y2;
    void *ws, *snap, *wsnap;
    qmx_blockw_packed_desc desc;
    qmx_blockw_dyn_opts o;
    int short_ws;
    qmx_status st;
    for (i = 0; i < bb; i++) blocks[i] = (uint8_t)fz_u8(r);
    if (!(how & 1))   /* mostly finite, moderate d and m (exponent bits 0x3C..0x43 of the high byte) */
        for (i = 0; i < nbk; i++) {
            blocks[20 * i + 1] = (uint8_t)(0x1C + blocks[20 * i + 1] % 8 + (blocks[20 * i + 1] & 0x80));
            blocks[20 * i + 3] = (uint8_t)(0x1C + blocks[20 * i + 3] % 8 + (blocks[20 * i + 3] & 0x80));
        }
    st = qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q4_1, N, K, &bytes);
    if (st != QMX_OK || bytes > FK_BIG) __builtin_trap();
    if (how & 2) {   /* a short input or blob: refused, the blob untouched */
        blob = (uint8_t *)fz_alloc_at(bytes, (int)(how >> 2));
        snap = fz_snap(blob, bytes);
        st = (how & 4) ? qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, blocks, bb - 1, N, K, blob, bytes)
                       : qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, blocks, bb, N, K, blob, bytes - 1);
        if (st == QMX_OK) __builtin_trap();
        fz_check(st);
        fz_same(blob, snap, bytes);
        return;
    }
    blob = (uint8_t *)fz_alloc_at(bytes, (int)(how >> 2));
    if (qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, blocks, bb, N, K, blob, bytes) != QMX_OK)
        __builtin_trap();
    if (qmx_blockw_packed_info(blob, bytes, &desc) != QMX_OK || !desc.q4_1 || desc.N != N ||
        desc.K != K || desc.bytes != bytes)
        __builtin_trap();
    back = (uint8_t *)fz_alloc(bb);
    if (qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_Q4_1, back, bb) != QMX_OK ||
        memcmp(back, blocks, bb) != 0)
        __builtin_trap();   /* lossless: the same bytes back */
    X = fk_floats(r, M * K, NULL);
    memset(&o, 0, sizeof o);
    o.act_block = (how & 16) ? 32 : 0;
    st = qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, &o, &need);
    if (st != QMX_OK) __builtin_trap();
    ws = fk_ws(r, need, &wsb, &short_ws);
    Y = (float *)fz_alloc(M * N * 4);
    Y2 = (float *)fz_alloc(M * N * 4);
    for (i = 0; i < M * N; i++) Y[i] = Y2[i] = -7.0f;
    snap = fz_snap(Y, M * N * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, K, blob, bytes, &o, Y, N, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(Y, snap, M * N * 4);
        fz_same(ws, wsnap, wsb);
    } else {
        if (short_ws) __builtin_trap();
        if (qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, K, blob, bytes, &o, Y2, N, ws, wsb) != QMX_OK ||
            memcmp(Y, Y2, M * N * 4) != 0)
            __builtin_trap();   /* the same bits twice */
    }
    if (qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &nf) != QMX_OK) __builtin_trap();
    ws = fz_alloc(nf);
    for (i = 0; i < M * N; i++) Y[i] = Y2[i] = -7.0f;
    st = qmx_matmul_blockw_packed_f32(M, N, K, X, K, blob, bytes, Y, N, ws, nf);
    fz_check(st);
    if (st == QMX_OK &&
        (qmx_matmul_blockw_packed_f32(M, N, K, X, K, blob, bytes, Y2, N, ws, nf) != QMX_OK ||
         memcmp(Y, Y2, M * N * 4) != 0))
        __builtin_trap();
}

/* Several cores on the block-weight blob (first byte 245): ggml blocks of raw bytes (Q8_0,
 * Q4_0, Q4_1, MXFP4, NVFP4 (K a multiple of 64); d mostly moderate; the lossless kinds:
 * unpack_ggml gives the same bytes back; NVFP4: the blob is qmx_mx_from_ggml (rule GGML) +
 * qmx_blockw_pack's, blocks or blob one byte short refused with the blob untouched),
 * qmx_matmul_blockw_packed_dyn_i8 (act_block 0, 32,
 * 64 or 48) and _packed_f32 at shapes of 1..2 row and 1..2 column tiles: _exec through the
 * harness executor below (1..5 workers, the tasks rotated or reversed) and single-task _run
 * calls in a rotated order with the serial workspace give the serial call's status and Y
 * bits (on error: Y untouched, no task run; a range of every task: the same status); a
 * reversed range, a range past the end, a workspace one byte short: their status, Y
 * untouched. */
typedef struct fk_pex { int calls, rot, rev, workers; } fk_pex;
static void fk_pfor(void *pool, int n, void (*fn)(void *, int, int), void *arg) {
    fk_pex *p = (fk_pex *)pool;
    int i;
    p->calls++;
    for (i = 0; i < n; i++) {
        int t = (i + p->rot) % n;
        fn(arg, p->rev ? n - 1 - t : t, (i * 7 + p->rot) % p->workers);
    }
}
static void fk_bwpar(fz_rd *r) {
    static const int gt[5] = {QMX_BLOCKW_GGML_Q8_0, QMX_BLOCKW_GGML_Q4_0, QMX_BLOCKW_GGML_Q4_1,
                              QMX_BLOCKW_GGML_MXFP4, QMX_BLOCKW_GGML_NVFP4};
    static const size_t gbb[5] = {34, 18, 20, 17, 36};
    unsigned how = fz_u8(r), ty = how % 5u;
    size_t qk = ty == 4 ? 64 : 32;
    size_t M = 1 + fz_u8(r) % 80u, N = 1 + (size_t)fz_u8(r) * 2u, K = qk * (1 + fz_u8(r) % 3u);
    size_t ldx = K + ((how >> 2) & 3u), ldy = N + ((how >> 4) & 1u) * 3u;
    size_t nbk = N * (K / qk), bb = gbb[ty] * nbk, bytes = 0, i, nt = 0, t;
    size_t ey = (M - 1) * ldy + N;
    uint8_t *blocks = (uint8_t *)fz_alloc(bb), *blob;
    float *X, *Y0, *Y1, *snap;
    qmx_blockw_dyn_opts o;
    int kern;
    qmx_status st;
    for (i = 0; i < bb; i++) blocks[i] = (uint8_t)fz_u8(r);
    if (!(how & 0x80) && ty < 3)   /* moderate d (and Q4_1's m) */
        for (i = 0; i < nbk; i++) {
            uint8_t *b = blocks + gbb[ty] * i;
            b[1] = (uint8_t)(0x1C + b[1] % 8 + (b[1] & 0x80));
            if (ty == 2) b[3] = (uint8_t)(0x1C + b[3] % 8 + (b[3] & 0x80));
        }
    if (qmx_blockw_pack_ggml_size(gt[ty], N, K, &bytes) != QMX_OK || bytes > FK_BIG)
        __builtin_trap();
    blob = (uint8_t *)fz_alloc_at(bytes, (int)(how & 63u));
    if (ty == 4) {   /* NVFP4: blocks or blob one byte short: refused, the blob untouched */
        void *bsnap = fz_snap(blob, bytes);
        st = (how & 0x20) ? qmx_blockw_pack_ggml(gt[ty], blocks, bb - 1, N, K, blob, bytes)
                          : qmx_blockw_pack_ggml(gt[ty], blocks, bb, N, K, blob, bytes - 1);
        if (st != QMX_ERR_BUFFER_TOO_SMALL) __builtin_trap();
        fz_same(blob, bsnap, bytes);
    }
    st = qmx_blockw_pack_ggml(gt[ty], blocks, bb, N, K, blob, bytes);
    fz_check(st);
    if (st != QMX_OK) return;   /* e.g. a NaN d of Q8_0 / Q4_0 */
    if (ty >= 2) {   /* Q4_1, MXFP4, NVFP4: every byte kept, the same bytes back */
        uint8_t *back = (uint8_t *)fz_alloc(bb);
        if (qmx_blockw_unpack_ggml(blob, bytes, gt[ty], back, bb) != QMX_OK ||
            memcmp(back, blocks, bb) != 0)
            __builtin_trap();
    }
    if (ty == 4) {   /* the blob of qmx_mx_from_ggml (rule GGML) then qmx_blockw_pack */
        qmx_mx_config mc;
        qmx_blockw w;
        size_t b2 = 0;
        uint8_t *el = (uint8_t *)fz_alloc(N * K / 2), *sc = (uint8_t *)fz_alloc(N * K / 16);
        uint8_t *blob2;
        memset(&mc, 0, sizeof mc);
        mc.format = QMX_NVFP4; mc.rule = QMX_MX_GGML; mc.outer = N; mc.axis_len = K; mc.inner = 1;
        memset(&w, 0, sizeof w);
        w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.data = el; w.data_bytes = N * K / 2;
        w.scale_codes = sc; w.n_scales = N * K / 16;
        if (qmx_mx_from_ggml(&mc, blocks, bb, N * K, el, N * K / 2, sc, N * K / 16) != QMX_OK ||
            qmx_blockw_pack_size(&w, N, K, &b2) != QMX_OK || b2 != bytes)
            __builtin_trap();
        blob2 = (uint8_t *)fz_alloc(b2);
        if (qmx_blockw_pack(&w, N, K, blob2, b2) != QMX_OK || memcmp(blob, blob2, bytes) != 0)
            __builtin_trap();
    }
    X = fk_floats(r, (M - 1) * ldx + K, NULL);
    memset(&o, 0, sizeof o);
    i = fz_u8(r);
    o.act_block = i % 4u == 3u ? 48u : 32u * (i % 4u);
    if (qmx_matmul_tasks(M, N, &nt) != QMX_OK || nt == 0) __builtin_trap();
    Y0 = (float *)fz_alloc(ey * 4);
    Y1 = (float *)fz_alloc(ey * 4);
    for (kern = 0; kern < 2; kern++) {
        size_t need = 0, total = 0;
        void *ws;
        qmx_executor ex;
        fk_pex pool;
        qmx_status s0, s1;
        st = kern ? qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &need)
                  : qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, &o, &need);
        if (st != QMX_OK) __builtin_trap();
        for (i = 0; i < ey; i++) Y0[i] = Y1[i] = -7.0f;
        snap = (float *)fz_snap(Y0, ey * 4);
        ws = fz_alloc_at(need, (int)(fz_u8(r) & 63u));
        s0 = kern ? qmx_matmul_blockw_packed_f32(M, N, K, X, ldx, blob, bytes, Y0, ldy, ws, need)
                  : qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, ldx, blob, bytes, &o, Y0, ldy,
                                                    ws, need);
        fz_check(s0);
        if (s0 != QMX_OK) fz_same(Y0, snap, ey * 4);
        /* through the executor */
        memset(&pool, 0, sizeof pool);
        pool.workers = 1 + fz_u8(r) % 5u;
        pool.rot = (int)(fz_u8(r) % nt);
        pool.rev = (int)(how >> 6) & 1;
        ex.parallel_for = fk_pfor; ex.pool = &pool; ex.workers = pool.workers;
        if (qmx_par_workspace_size(&ex, need, need, &total) != QMX_OK) __builtin_trap();
        ws = fz_alloc(total);
        s1 = kern ? qmx_matmul_blockw_packed_f32_exec(M, N, K, X, ldx, blob, bytes, Y1, ldy, &ex,
                                                      ws, total)
                  : qmx_matmul_blockw_packed_dyn_i8_exec(M, N, K, X, ldx, blob, bytes, &o, Y1,
                                                         ldy, &ex, ws, total);
        if (s1 != s0 || memcmp(Y1, Y0, ey * 4) != 0) __builtin_trap();
        if (pool.calls != (s0 == QMX_OK && pool.workers >= 2 && nt > 1)) __builtin_trap();
        /* a workspace one byte short */
        for (i = 0; i < ey; i++) Y1[i] = -7.0f;
        s1 = kern ? qmx_matmul_blockw_packed_f32_exec(M, N, K, X, ldx, blob, bytes, Y1, ldy, &ex,
                                                      ws, total - 1)
                  : qmx_matmul_blockw_packed_dyn_i8_exec(M, N, K, X, ldx, blob, bytes, &o, Y1,
                                                         ldy, &ex, ws, total - 1);
        fz_check(s1);
        if (s1 == QMX_OK) __builtin_trap();
        fz_same(Y1, snap, ey * 4);
        /* range calls: one task at a time, rotated, with the serial workspace */
        ws = fz_alloc(need);
        if (s0 != QMX_OK) {
            s1 = kern ? qmx_matmul_blockw_packed_f32_run(M, N, K, X, ldx, blob, bytes, Y1, ldy, 0,
                                                         nt, ws, need)
                      : qmx_matmul_blockw_packed_dyn_i8_run(M, N, K, X, ldx, blob, bytes, &o, Y1,
                                                            ldy, 0, nt, ws, need);
            if (s1 != s0) __builtin_trap();
            fz_same(Y1, snap, ey * 4);
            continue;
        }
        for (i = 0; i < nt; i++) {
            t = (i + (size_t)pool.rot) % nt;
            s1 = kern ? qmx_matmul_blockw_packed_f32_run(M, N, K, X, ldx, blob, bytes, Y1, ldy, t,
                                                         t + 1, ws, need)
                      : qmx_matmul_blockw_packed_dyn_i8_run(M, N, K, X, ldx, blob, bytes, &o, Y1,
                                                            ldy, t, t + 1, ws, need);
            if (s1 != QMX_OK) __builtin_trap();
        }
        if (memcmp(Y1, Y0, ey * 4) != 0) __builtin_trap();
        for (i = 0; i < ey; i++) Y1[i] = -7.0f;
        for (t = 0; t < 3; t++) {   /* reversed, past the end, a workspace one byte short */
            size_t tb = t == 0 ? nt : 0, te = t == 0 ? nt - 1 : t == 1 ? nt + 1 : nt;
            s1 = kern ? qmx_matmul_blockw_packed_f32_run(M, N, K, X, ldx, blob, bytes, Y1, ldy,
                                                         tb, te, ws, need - (t == 2))
                      : qmx_matmul_blockw_packed_dyn_i8_run(M, N, K, X, ldx, blob, bytes, &o, Y1,
                                                            ldy, tb, te, ws, need - (t == 2));
            if (s1 != (t == 2 ? QMX_ERR_BUFFER_TOO_SMALL : QMX_ERR_ARG)) __builtin_trap();
            fz_same(Y1, snap, ey * 4);
        }
    }
}

static void fk_bwd(fz_rd *r) {
    static const qmx_dtype dts[17] = {QMX_INT2, QMX_UINT2, QMX_INT3, QMX_INT4, QMX_UINT4,
                                      QMX_INT5, QMX_INT6, QMX_INT7, QMX_INT8, QMX_UINT8,
                                      QMX_INT16, QMX_UINT16, QMX_NF4, QMX_FP8_E4M3FN,
                                      QMX_FP8_E5M2, QMX_FP8_E4M3FNUZ, QMX_FP8_E5M2FNUZ};
    size_t M = fk_dim(r), N = fk_dim(r), K = fk_dim(r), ldx, ldy, ex, ey, need = 0, wsb, nel = 0,
           ns = 0, i, m, n, k, ab, wbs;
    unsigned how = fz_u8(r);
    qmx_mx_config mc, mc1;
    qmx_qconfig qc;
    qmx_blockw w;
    qmx_blockw_dyn_opts o, *op = NULL;
    uint8_t *data, *codes = NULL, *ones;
    float *scales = NULL, *X, *Y, *ev, *sx, *ref;
    int32_t *zps = NULL;
    int8_t *q;
    int short_ws;
    void *ws, *snap, *wsnap;
    qmx_status st;
    if ((size_t)N * K > 4096) return;
    memset(&w, 0, sizeof w);
    memset(&mc, 0, sizeof mc);
    memset(&qc, 0, sizeof qc);
    if (how & 1) {   /* MX / NVFP4: any format and rule, raw element and scale codes */
        mc.format = (qmx_mx_format)fz_enum(r, 7);
        mc.rule = (qmx_mx_rule)fz_enum(r, 7);
        mc.block_size = fz_u8(r) % 40;
        if (how & 2) mc.tensor_scale = fk_scale(r);
        if (!(how & 4)) { mc.outer = N; mc.axis_len = K; mc.inner = 1; }   /* else flat */
        st = qmx_mx_storage(&mc, N * K, &nel, &ns);
        fz_check(st);
        if (st != QMX_OK) { nel = 1 + how % 7; ns = 1 + how % 5; }
        if ((how & 8) && nel) nel--;
        if ((how & 16) && ns) ns--;
        data = (uint8_t *)fz_alloc(nel);
        codes = (uint8_t *)fz_alloc(ns);
        for (i = 0; i < nel; i++) data[i] = (uint8_t)fz_u8(r);
        for (i = 0; i < ns; i++) codes[i] = (uint8_t)fz_u8(r);
        w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.scale_codes = codes;
    } else {         /* qconfig: every integer dtype, nf4, fp8; raw codes, scales, zero points */
        size_t np = 0;
        int32_t lo = 0, hi = 0;
        qc.dtype = dts[fz_u8(r) % 17];
        qc.granularity = (qmx_granularity)fz_enum(r, 3);
        qc.block_size = fz_u8(r) % 40;
        qc.recipe = (qmx_recipe)fz_enum(r, 5);
        qc.asymmetric = (how & 2) != 0;
        if (qc.granularity == QMX_PER_BLOCK) { qc.outer = N; qc.axis_len = K; qc.inner = 1; }
        else if (qc.granularity == QMX_PER_CHANNEL) { qc.outer = 1; qc.axis_len = N; qc.inner = K; }
        if ((how & 4) && qc.granularity != QMX_PER_TENSOR) {   /* the other granularity's view */
            qc.outer = N; qc.axis_len = K; qc.inner = 1;
            if (qc.granularity == QMX_PER_BLOCK) { qc.outer = 1; qc.axis_len = N; qc.inner = K; }
        }
        st = qmx_qparams_count(&qc, N * K, &np);
        fz_check(st);
        if (st != QMX_OK) np = 1 + how % 5;
        if (qmx_dtype_storage_bytes(qc.dtype, N * K, &nel) != QMX_OK) __builtin_trap();
        if ((how & 8) && nel) nel--;
        if ((how & 16) && np > 1) np--;
        data = (uint8_t *)fz_alloc(nel);
        for (i = 0; i < nel; i++) data[i] = (uint8_t)fz_u8(r);
        scales = fk_scales(r, np);
        if (qc.asymmetric || (how & 32)) {
            zps = (int32_t *)fz_alloc(np * 4);
            if (qmx_dtype_int_range(qc.dtype, &lo, &hi) != QMX_OK) { lo = 0; hi = 0; }
            for (i = 0; i < np; i++) zps[i] = fk_zp(r, lo, hi);
        }
        ns = np;
        w.kind = QMX_BLOCKW_QCONFIG; w.qc = &qc; w.scales = scales; w.zero_points = zps;
    }
    w.data = data; w.data_bytes = nel; w.n_scales = ns;
    if (how & 64) { o.act_block = fz_u8(r) % 40; op = &o; }
    ldx = fk_ld(r, K); ldy = fk_ld(r, N);
    ex = fk_ext(M, K, ldx); ey = fk_ext(M, N, ldy);
    if (fk_toobig) return;
    X = fk_floats(r, ex, NULL);
    fk_bw_f32(r, M, N, K, X, ldx, &w, ldy, ey);
    if (w.kind == QMX_BLOCKW_MX) fk_bw_mxfp8(M, N, K, &w);
    st = qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, op, &need);
    fz_check(st);
    if (st != QMX_OK) need = 64;
    ws = fk_ws(r, need, &wsb, &short_ws);
    Y = (float *)fk_buf(ey, 4);
    snap = fz_snap(Y, ey > FK_BIG ? 1 : ey * 4);
    wsnap = fz_snap(ws, wsb);
    st = qmx_matmul_blockw_dyn_i8(M, N, K, X, ldx, (how & 128) && !(how & 64) ? NULL : &w, op, Y,
                                  ldy, ws, wsb);
    fz_check(st);
    if (st != QMX_OK) {
        fz_same(Y, snap, ey > FK_BIG ? 1 : ey * 4);
        fz_same(ws, wsnap, wsb);
        return;
    }
    if (short_ws) __builtin_trap();
    /* reference. Element values without their block scale: the weights dequantized with unit
     * scales (scale codes of 1.0, scales 1.0f, the same zero points): exact values */
    ev = (float *)fz_alloc(N * K * 4);
    if (w.kind == QMX_BLOCKW_MX) {
        uint8_t one = mc.rule == QMX_MX_GGML ? (mc.format == QMX_NVFP4 ? 0x40 : 128)
                    : mc.format == QMX_NVFP4 ? 0x38 : 127;
        ones = (uint8_t *)fz_alloc(ns);
        memset(ones, one, ns);
        mc1 = mc; mc1.tensor_scale = 0.0f;
        if (qmx_mx_dequantize(&mc1, data, nel, ones, ns, N * K, ev) != QMX_OK) __builtin_trap();
        wbs = mc.block_size ? mc.block_size : (mc.format == QMX_NVFP4 ? 16u : 32u);
    } else {
        float *u = (float *)fz_alloc(ns * 4);
        for (i = 0; i < ns; i++) u[i] = 1.0f;
        if (qmx_dequantize(&qc, data, nel, N * K, u, ns, zps, ev) != QMX_OK) __builtin_trap();
        wbs = qc.granularity == QMX_PER_BLOCK ? qc.block_size : K;
    }
    if (wbs > K) wbs = K;
    ab = op && o.act_block && o.act_block < K ? o.act_block : K;
    q = (int8_t *)fz_alloc(M * K);
    sx = (float *)fz_alloc(M * K * 4);
    for (m = 0; m < M; m++)   /* TFLite int8 per activation block: absmax / 127, RNE(x / sx) */
        for (k = 0; k < K; k += ab) {
            size_t len = K - k < ab ? K - k : ab, j;
            float am = 0.0f, s;
            for (j = 0; j < len; j++) {
                float a = fz_bits(fz_fbits(X[m * ldx + k + j]) & 0x7FFFFFFFu);
                if (!fz_finite(a)) __builtin_trap();   /* NaN/Inf must have been refused */
                if (a > am) am = a;
            }
            s = am == 0.0f ? 1.0f : am / 127.0f;
            if (!(s > 0.0f)) __builtin_trap();         /* an underflow must have been refused */
            sx[m * K + k / ab] = s;
            for (j = 0; j < len; j++) {
                float t = X[m * ldx + k + j] / s, fr;
                int32_t ti;
                if (t > 127.0f) t = 127.0f;
                if (t < -127.0f) t = -127.0f;
                ti = (int32_t)t;
                fr = t - (float)ti;
                if (fr > 0.5f || (fr == 0.5f && (ti & 1))) ti++;
                else if (fr < -0.5f || (fr == -0.5f && (ti & 1))) ti--;
                q[m * K + k + j] = (int8_t)ti;
            }
        }
    ref = (float *)fz_alloc(M * N * 4);
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            volatile float y = 0.0f;
            int64_t S = 0;
            double nfs = 0.0;
            int nf = 0;
            for (k = 0; k < K; k++) {   /* segments end at weight-block and act-block ends */
                double v = ev[n * K + k], qk = q[m * K + k];
                if (!fz_finite(ev[n * K + k])) {
                    nf = 1;
                } else {
                    double e27 = v * 134217728.0;   /* exact; an integer (docs: 2^-27 steps) */
                    if ((double)(int64_t)e27 != e27) __builtin_trap();
                    S += (int64_t)q[m * K + k] * (int64_t)e27;
                }
                nfs += qk * v;
                if (k + 1 == K || (k + 1) % wbs == 0 || (k + 1) % ab == 0) {
                    size_t si;
                    volatile float p = nf ? (float)nfs : fk_bwd_rn27(S);
                    if (w.kind == QMX_BLOCKW_QCONFIG && qc.granularity != QMX_PER_BLOCK)
                        si = qc.granularity == QMX_PER_CHANNEL ? n : 0;
                    else
                        si = n * ((K + wbs - 1) / wbs) + k / wbs;
                    p = p * fk_bwd_scale(&w, si);
                    p = p * sx[m * K + k / ab];
                    y = y + p;
                    S = 0; nfs = 0.0; nf = 0;
                }
            }
            ref[m * N + n] = y;
        }
    fk_cmp_f(Y, ldy, ref, M, N, snap);
    for (m = 0; m < M; m++)   /* NaN outputs are the canonical quiet NaN */
        for (n = 0; n < N; n++)
            if (Y[m * ldy + n] != Y[m * ldy + n] && fz_fbits(Y[m * ldy + n]) != 0x7FC00000u)
                __builtin_trap();
    if (w.kind && !((how & 128) && !(how & 64))) fk_bwd_packed(r, M, N, K, X, ldx, &w, op, Y, ldy, ey);
}

/* ---- 10 (first byte 246..249): 16x8: qmx_fully_connected_i16 (+ _packed, against the plain
 * call), qmx_batch_matmul_i16 (adj_x / adj_y, batch strides incl. 0 and huge) ---- */
/* TFLite's int64 MultiplyByQuantizedMultiplier written out here (floor division by a power
 * of two, the int64 -> int32 conversion modulo 2^32); m >= 0, shift in [-31, 7]. */
static int32_t fk_mbqm64(int64_t x, int32_t m, int shift) {
    int64_t rm = m >= 0x7FFF0000 ? 0x7FFF : ((int64_t)m + 32768) / 65536;
    int64_t d = (int64_t)1 << (15 - shift), t = x * rm + d / 2, q = t / d;
    if (t % d != 0 && t < 0) q--;
    return (int32_t)(uint32_t)((uint64_t)q & 0xFFFFFFFFu);
}
static int16_t *fk_i16(fz_rd *r, size_t n) {
    int16_t *p = (int16_t *)fk_buf(n, 2);
    unsigned mode = fz_u8(r);
    size_t i;
    if (n > FK_BIG) return p;
    for (i = 0; i < n; i++) {
        unsigned b = fz_u8(r), c = mode % 3 == 0 ? fz_u8(r) : 0;
        p[i] = (int16_t)(mode % 3 == 0 ? (int32_t)(b | c << 8) - 32768
                         : mode % 3 == 1 ? (b & 1 ? 32767 : -32768) : (int32_t)(b % 17) - 8);
    }
    return p;
}
/* an output stage for N channels: multipliers / shifts / biases / clamp, sometimes invalid */
static void fk_mkrq64(fz_rd *r, size_t N, qmx_requant64_config *c) {
    unsigned how = fz_u8(r);
    size_t np, i;
    int32_t *mult;
    int *sh;
    int64_t *bias;
    memset(c, 0, sizeof *c);
    c->per_channel = (int)(how & 1);
    np = c->per_channel ? N : 1;
    mult = (int32_t *)fz_alloc(np * 4 + 4);
    sh = (int *)fz_alloc(np * sizeof(int) + sizeof(int));
    for (i = 0; i < np; i++) {
        unsigned b = fz_u8(r);
        mult[i] = b >= 0xF0 ? (int32_t)fz_u32(r) : (int32_t)(0x40000000u + (fz_u8(r) << 22));
        sh[i] = b >= 0xF0 ? (int)(b & 15) - 8 : -(int)(b % 32);   /* -31 .. 7, past both */
        if (b == 0xEF) sh[i] = 8;
    }
    c->multipliers = (how & 0x40) ? NULL : mult;
    c->shifts = sh;
    if (how & 2) {
        bias = (int64_t *)fz_alloc(N * 8 + 8);
        for (i = 0; i < N; i++) {
            unsigned b = fz_u8(r);
            bias[i] = (int64_t)(int32_t)fz_u32(r) * ((int64_t)1 << (b % 17));   /* past 2^46 too */
        }
        c->bias = bias;
    }
    if (how & 4) {
        c->act_min = (int32_t)(int16_t)(fz_u8(r) << 8) - (int32_t)(how >> 7);
        c->act_max = c->act_min + (int32_t)fz_u8(r) * 64 - 2048;
    }
}
static int16_t fk_stage64(int64_t acc, size_t n, const qmx_requant64_config *c) {
    size_t pi = c->per_channel ? n : 0;
    int32_t lo = c->act_min, hi = c->act_max, v;
    if (lo == 0 && hi == 0) { lo = -32768; hi = 32767; }
    if (c->bias) acc += c->bias[n];
    v = fk_mbqm64(acc, c->multipliers[pi], c->shifts[pi]);
    return (int16_t)(v < lo ? lo : v > hi ? hi : v);
}
static void fk_s16(fz_rd *r) {
    unsigned sel = fz_u8(r) % 3, kb;
    size_t M = fk_dim(r), N = fk_dim(r), K, need = 0, wsb, eo, m, n, k;
    int16_t *out, *snap;
    qmx_requant64_config c;
    int short_ws;
    void *ws, *wsnap;
    qmx_status st;
    kb = r->n ? *r->p : 0;   /* K: fk_dim, or the bound (0xFD) and one past it (0xFC) */
    if (kb == 0xFD || kb == 0xFC) {
        fz_u8(r);
        K = (sel == 2 ? QMX_BATCH_MATMUL_I16_MAX_K : 4096) + (kb == 0xFC);
    } else {
        K = fk_dim(r);
    }
    if (K > 64 && M * N > 16) return;   /* the naive references stay fast */
    if (sel < 2) {
        size_t lda = fk_ld(r, K), ldw = fk_ld(r, K), ldo = fk_ld(r, N), ea, ew, pb = 0;
        int32_t wzp = fk_zp(r, -128, 127);
        int16_t *A;
        int8_t *W;
        void *blob = NULL;
        ea = fk_ext(M, K, lda); ew = fk_ext(N, K, ldw); eo = fk_ext(M, N, ldo);
        if (fk_toobig) return;
        A = fk_i16(r, ea);
        W = fk_i8(r, ew);
        fk_mkrq64(r, N, &c);
        st = qmx_fully_connected_i16_workspace_size(M, N, K, &need);
        fz_check(st);
        if (st != QMX_OK) need = 64;
        ws = fk_ws(r, need, &wsb, &short_ws);
        out = (int16_t *)fk_buf(eo, 2);
        snap = (int16_t *)fz_snap(out, eo > FK_BIG ? 1 : eo * 2);
        wsnap = fz_snap(ws, wsb);
        if (sel == 1 && ew <= FK_BIG && N && K && ldw >= K &&
            qmx_matmul_i8_pack_weights_size(N, K, &pb) == QMX_OK) {
            blob = fz_alloc(pb);
            if (qmx_matmul_i8_pack_weights(W, N, K, ldw, QMX_B_NK, blob, pb) != QMX_OK)
                __builtin_trap();
        }
        if (blob)
            st = qmx_fully_connected_i16_packed(M, N, K, A, lda, blob, pb, wzp, &c, out, ldo, ws,
                                                wsb);
        else
            st = qmx_fully_connected_i16(M, N, K, A, lda, W, ldw, wzp, &c, out, ldo, ws, wsb);
        fz_check(st);
        if (st != QMX_OK) {
            fz_same(out, snap, eo > FK_BIG ? 1 : eo * 2);
            fz_same(ws, wsnap, wsb);
            return;
        }
        if (short_ws) __builtin_trap();
        for (m = 0; m < M; m++)
            for (n = 0; n < ldo; n++) {
                if (m * ldo + n >= eo) break;
                if (n < N) {
                    int64_t s = 0;
                    for (k = 0; k < K; k++)
                        s += (int64_t)A[m * lda + k] * ((int64_t)W[n * ldw + k] - wzp);
                    if (out[m * ldo + n] != fk_stage64(s, n, &c)) __builtin_trap();
                } else if (out[m * ldo + n] != snap[m * ldo + n]) {
                    __builtin_trap();
                }
            }
    } else {
        unsigned how = fz_u8(r), bsel;
        size_t batch = 1 + fz_u8(r) % 3, b, i, j;
        int ax = (int)(how & 1), ay = (int)((how >> 1) & 1);
        size_t xr = ax ? K : M, xc = ax ? M : K, yr = ay ? N : K, yc = ay ? K : N;
        size_t ldx = fk_ld(r, xc), ldy = fk_ld(r, yc), ldo = fk_ld(r, N), ex, ey, xbs, ybs, obs;
        size_t one_x = fk_ext(xr, xc, ldx), one_y = fk_ext(yr, yc, ldy), one_o = fk_ext(M, N, ldo);
        int16_t *X, *Y;
        if (fk_toobig || one_x > FK_BIG || one_y > FK_BIG || one_o > FK_BIG) return;
        bsel = fz_u8(r);   /* batch strides: exact, 0 (broadcast), +1, one short (out) or huge */
        xbs = bsel & 1 ? 0 : one_x + ((bsel >> 1) & 1);
        ybs = bsel & 4 ? 0 : one_y + ((bsel >> 3) & 1);
        obs = bsel >= 0xF0 ? ((size_t)-1) / 2 : one_o - ((bsel >> 4) & 1) * (one_o > 0);
        ex = (batch - 1) * xbs + one_x; ey = (batch - 1) * ybs + one_y;
        eo = batch > 1 && obs > FK_BIG ? FK_BIG + 1 : (batch - 1) * obs + one_o;
        if (ex > FK_BIG || ey > FK_BIG || (eo > FK_BIG && obs <= FK_BIG)) return;
        X = fk_i16(r, ex);
        Y = fk_i16(r, ey);
        fk_mkrq64(r, N, &c);
        st = qmx_batch_matmul_i16_workspace_size(M, N, K, &need);
        fz_check(st);
        if (st != QMX_OK) need = 64;
        ws = fk_ws(r, need, &wsb, &short_ws);
        out = (int16_t *)fk_buf(eo, 2);
        snap = (int16_t *)fz_snap(out, eo > FK_BIG ? 1 : eo * 2);
        wsnap = fz_snap(ws, wsb);
        if (eo > FK_BIG) {   /* the huge batch stride: must be refused */
            st = qmx_batch_matmul_i16(batch, M, N, K, X, ldx, xbs, ax, Y, ldy, ybs, ay, &c, out,
                                      ldo, obs, ws, wsb);
            fz_check(st);
            if (st == QMX_OK) __builtin_trap();
            fz_same(out, snap, 1);
            fz_same(ws, wsnap, wsb);
            return;
        }
        st = qmx_batch_matmul_i16(batch, M, N, K, X, ldx, xbs, ax, Y, ldy, ybs, ay, &c, out, ldo,
                                  obs, ws, wsb);
        fz_check(st);
        if (st != QMX_OK) {
            fz_same(out, snap, eo * 2);
            fz_same(ws, wsnap, wsb);
            return;
        }
        if (short_ws || (batch > 1 && obs < one_o)) __builtin_trap();
        for (b = 0; b < batch; b++)
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) {
                    int64_t s = 0;
                    for (k = 0; k < K; k++)
                        s += (int64_t)(ax ? X[b * xbs + k * ldx + i] : X[b * xbs + i * ldx + k]) *
                             (ay ? Y[b * ybs + j * ldy + k] : Y[b * ybs + k * ldy + j]);
                    if (out[b * obs + i * ldo + j] != fk_stage64(s, j, &c)) __builtin_trap();
                }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_rd r;
    unsigned op;
    r.p = data;
    r.n = size;
    fk_toobig = 0;
    op = fz_u8(&r);
    if (op >= 251) {   /* (no stored corpus input starts with 251..255) */
        fk_bwd(&r);
        fz_free_all();
        return 0;
    }
    if (op == 245) {   /* (stored: blockw_nvfp4_0 / _1, NVFP4 blocks) */
        fk_bwpar(&r);
        fz_free_all();
        return 0;
    }
    if (op == 250) {
        fk_q41(&r);
        fz_free_all();
        return 0;
    }
    if (op >= 246 && op <= 249) {   /* (no stored corpus input starts with 246..249) */
        fk_s16(&r);
        fz_free_all();
        return 0;
    }
    switch (op % 9) {
    case 0: fk_matmul(&r); break;
    case 1: fk_packed(&r); break;
    case 2: fk_fc(&r); break;
    case 3: fk_mm_f32(&r); break;
    case 4: fk_dyn(&r); break;
    case 5: fk_i4(&r); break;
    case 6: fk_fp8(&r); break;
    case 7: fk_einsum(&r); break;
    default: fk_kv(&r); break;
    }
    fz_free_all();
    return 0;
}
