/* qmx_kernels.h - quantized compute kernels on top of qmx.h (part of qmx).
 *
 * This header is the home of qmx's compute layer. Its contents land issue by issue; every
 * declared entry point is implemented and tested (tests/test_matmul_i8.c,
 * tests/test_matmul_out.c).
 *
 * ============================================================================================
 * BUILD
 *   As qmx.h: one translation unit defines QMX_IMPLEMENTATION before including this header;
 *   that gives the implementation of qmx.h and of qmx_kernels.h. Including qmx.h first and
 *   qmx_kernels.h afterwards in the same translation unit works as well. Same configuration
 *   macros as qmx.h (QMX_NO_SIMD, QMX_NO_AVX2, QMX_NO_AVX512, QMX_NO_NEON, QMX_STATIC), plus
 *   QMX_NO_DOTPROD (aarch64: use the plain NEON path even when dotprod is targeted).
 *   Freestanding C99: no libc, no libm, no allocation, no static state.
 *
 * INT8 x INT8 -> INT32 MATMUL WITH ZERO POINTS (qmx_matmul_i8, qmx_matmul_i8_ref)
 *   C[m][n] = sum_k (A[m][k] - a_zp) * (B(n,k) - b_zp)       exactly, for 0<=m<M, 0<=n<N
 *   Layouts (all row-major, element strides in int8/int32 elements, not bytes):
 *     A  [M,K] int8, row m starts at A + m*lda              (lda >= K)
 *     B  QMX_B_NK (default): "weights" [N,K], B(n,k) = B[n*ldb + k]   (ldb >= K)
 *        QMX_B_KN:           [K,N],          B(n,k) = B[k*ldb + n]   (ldb >= N)
 *     C  [M,N] int32, row m starts at C + m*ldc             (ldc >= N)
 *   a_zp, b_zp are int32 values in [-128, 127] (qmx_matmul_i8_opts; zero-initialised = 0, 0,
 *   QMX_B_NK, no precomputed weight sums). opts == NULL means those defaults.
 *   How (gemmlowp's decomposition): with raw = sum_k A*B, rowsum(A)[m] = sum_k A[m][k] and
 *   colsum(B)[n] = sum_k B(n,k),
 *       C = raw - a_zp*colsum(B)[n] - b_zp*rowsum(A)[m] + K*a_zp*b_zp.
 *   The combination is done in uint32_t (wrap-around arithmetic is defined) and converted back
 *   without implementation-defined casts; since the true result fits int32 (below) the result is
 *   exact. Every path (scalar, AVX-512 VNNI, AVX2, NEON with/without dotprod) gives the same
 *   int32 bits: integers, exact by construction.
 *
 * OVERFLOW BOUND (QMX_MATMUL_I8_MAX_K = 33025)
 *   |A - a_zp| and |B - b_zp| are at most 255, so |C| <= K * 255^2 <= INT32_MAX exactly when
 *   K <= floor((2^31 - 1) / 65025) = 33025. Larger K returns QMX_ERR_OVERFLOW (whatever the
 *   zero points). The internal sums stay within int32 without wrapping for K <= 33025:
 *     raw dot (scalar, AVX2 vpmaddwd, NEON):  |sum A*B| <= K * 128*128 = 16384 K <= 5.42e8
 *       (vpmaddwd pair sums <= 2^15; NEON vmull_s8 products are int16 (|p| <= 16384), added
 *       pairwise into int32 by vpadalq_s16, never into int16 twice)
 *     VNNI dot of (A+128) as u8 with B as s8 (vpdpbusd, non-saturating):
 *       |sum| <= K * 255*128 = 32640 K <= 1.078e9; the fix-up subtracts 128*colsum(B)
 *     rowsum(A), colsum(B): |s| <= 128 K <= 4.23e6
 *   Every partial sum is a sum of a subset of those terms, so the bounds hold for partials too.
 *
 * WEIGHT SUMS (cacheable): qmx_matmul_i8_weight_sums(B, N, K, ldb, layout, sums, sums_len)
 *   writes sums[n] = sum_k B(n,k) (int32, raw, independent of zero points and of the build);
 *   qmx_matmul_i8_weight_sums_size(N) gives the bytes (N * 4). Computed once per weight
 *   matrix and passed in opts.b_sums/b_sums_len, they save the O(N*K) pass of each call.
 *   opts.b_sums == NULL: the sums are computed into the workspace, fused into the kernel's
 *   first pass over each tile of B (B is streamed once). Sums that do not belong to B give
 *   wrong numbers, never undefined behaviour.
 *
 * WORKSPACE: qmx_matmul_i8_workspace_size(M, N, K, opts, &bytes), a pure function of the
 *   shapes (the same on every target and build):
 *       64 + r64(4*M) + r64(4*N) + r64(min(M, 64) * K) + r64(4*K),
 *   r64(x) = x rounded up to 64 (row terms, weight sums, a 64-row panel of A repacked as
 *   A+128 for VNNI, and a 4 x K tile of B copied out of the [K,N] layout). The
 *   workspace may have any alignment. Too small: QMX_ERR_BUFFER_TOO_SMALL.
 *   Stack: qmx_matmul_i8 uses under 256 bytes of locals (a 4x4 int32 tile plus pointers).
 *
 * ALGORITHM AND SIMD PATHS (chosen at compile time, as qmx.h)
 *   NK layout: cache-blocked dot products: panels of 64 rows of A (L2); for each tile of 4
 *   rows of B (L1), every row tile of the panel, so B is read from memory once per panel;
 *   register tiles of 4x4 (VNNI, NEON) or 2x4 (AVX2, portable C) outputs over the whole K,
 *   1x4 tiles for leftover rows of A (M = 1 is a GEMV over the rows of B).
 *     AVX-512 VNNI (__AVX512F__, __AVX512BW__, __AVX512VNNI__; not with QMX_NO_AVX512):
 *       vpdpbusd on (A+128) u8 x B s8, masked loads for the K tail; the exact fix-up
 *       C = dot - (a_zp + 128)*colsum(B) - b_zp*rowsum(A) + K*a_zp*b_zp.
 *     AVX2 (__AVX2__; not with QMX_NO_AVX2): sign-extend to int16, vpmaddwd (no vpmaddubsw:
 *       its int16 saturation would not be exact).
 *     NEON aarch64: vdotq_s32 with __ARM_FEATURE_DOTPROD, else vmull_s8 + vpadalq_s16.
 *     Otherwise (armhf, Cortex-M, s390x, ppc, i386, riscv64, QMX_NO_SIMD): portable C.
 *   KN layout: the same kernels; each tile of 4 columns of B is first copied into a 4 x K
 *   row tile in the workspace (once per panel of A). The copy is scalar, so KN is much slower
 *   than NK for small M (GEMV): store weights as [N,K] (or pack them) for speed.
 *
 * ERRORS (checked before anything is written; on error C, sums and workspace are untouched)
 *   QMX_ERR_NULL              A, B, C, workspace (or sums) NULL
 *   QMX_ERR_ARG               a_zp or b_zp outside [-128, 127]; unknown b_layout
 *   QMX_ERR_SIZE              M, N or K is 0
 *   QMX_ERR_OVERFLOW          K > QMX_MATMUL_I8_MAX_K; size_t overflow of an extent
 *                             ((M-1)*lda + K, the B extent, ((M-1)*ldc + N) * 4, workspace)
 *   QMX_ERR_SHAPE             lda < K, ldb < K (NK) or < N (KN), ldc < N
 *   QMX_ERR_BUFFER_TOO_SMALL  workspace_bytes too small; b_sums_len < N; sums_len < N
 *
 * FULLY-CONNECTED (TFLite / CMSIS-NN): qmx_fully_connected_i8(M, N, K, A, lda, a_zp, W, ldw,
 *                                      rq, out, ldo, workspace, workspace_bytes)
 *   out[m][n] = clamp(requant(acc[m][n] + bias[n]) + output_zero_point, act_min, act_max)
 *   acc[m][n] = sum_k (A[m][k] - a_zp) * W[n*ldw + k]   (exact int32, as qmx_matmul_i8)
 *   A [M,K] int8 (lda >= K), a_zp in [-128, 127]; W [N,K] int8 weights, symmetric (zero point
 *   0, as TFLite int8 per-channel weights); out [M,N] of rq->out_dtype (QMX_INT8, the default
 *   when 0, or QMX_INT16), row m at element m*ldo (ldo >= N; the padding is not written).
 *   The output stage is rq (qmx_requant_config, qmx.h section 7) with exactly the semantics of
 *   qmx_requantize_array: bias (optional, [N], wrapping int32 add), per-tensor or per-channel
 *   (multiplier, shift) for double / single rounding or float scales, output zero point,
 *   act_min/act_max (both 0: the dtype's range). The result is bit-identical to qmx_matmul_i8
 *   (opts a_zp) followed by qmx_requantize_array (tests/test_matmul_out.c checks both that and
 *   the scalar qmx_requantize* + clamp on int64 dot products), on every path and target.
 *   How: the int32 accumulators of a tile of at most 64 rows x QMX_MATMUL_TILE_N (256) columns
 *   are computed by the qmx_matmul_i8 kernels into the workspace, and the output stage is
 *   applied to that tile at once, while it is in cache; no [M,N] int32 buffer exists.
 *
 * DEQUANT-ON-OUTPUT (AQT / Qwix): qmx_matmul_i8_f32(M, N, K, A, lda, B, ldb, C, ldc, scales,
 *                                                   workspace, workspace_bytes)
 *   K is cut into nblk = ceil(K / bs) blocks of bs = scales->block_size (the last may be
 *   shorter: a ragged tail; bs >= K is one block, the per-tensor / per-channel case). With
 *   P_b[m][n] = sum_{k in block b} (A[m][k] - a_zp) * B[n*ldb + k]   (exact int32),
 *   sa = a_scales[(a_per_row ? m*nblk : 0) + b], sb = b_scales[(b_per_col ? n*nblk : 0) + b]:
 *       sum = 0.0f;
 *       for b = 0, 1, ..., nblk-1 (increasing):
 *           p = (float)P_b[m][n];  p = p * sa;  p = p * sb;  sum = sum + p;
 *       C[m][n] = sum;
 *   every step one IEEE binary32 operation rounded to nearest (the int32 -> float conversion
 *   included). The function that evaluates it is compiled with FMA contraction off (GCC
 *   optimize("fp-contract=off"); clang: "#pragma clang fp contract(off)" and an empty asm that
 *   takes p through memory), so -ffp-contract=fast cannot fuse p * sb + sum; x87 (i386) and
 *   s390x evaluate in wider precision but round each assignment under -std=c99
 *   (FLT_EVAL_METHOD 2/1, -fexcess-precision=standard), and a wider product or sum of two
 *   floats rounded to float equals the float operation (53 and 64 bits are >= 2*24 + 2).
 *   So C is the same bits on every path and target; do not build with -ffast-math or x87
 *   -std=gnu99 (GCC then keeps excess precision across assignments).
 *   Scales are float, finite and > 0; A has a per-tensor zero point a_zp in [-128, 127]; B is
 *   symmetric (zero point 0), [N,K] only. C [M,N] float, row m at C + m*ldc (ldc >= N; the
 *   padding is not written). Accuracy against exact arithmetic: |C - sum_b P_b*sa*sb| <=
 *   (nblk + 4) * 2^-24 * sum_b |P_b*sa*sb| (+ underflow), as the tests check in double.
 *   How: per tile of <= 64 rows x 256 columns, for each block in increasing order, the int32
 *   partial tile P_b comes from the qmx_matmul_i8 kernels (over the K-range of the block, with
 *   the zero-point correction on that block's column sums) into the workspace, and is scaled
 *   and added into C's rows of the tile at once (C is the float accumulator; the first block
 *   writes it). Small blocks cost speed (each block is a separate pass of the register tiles
 *   with its horizontal sums): prefer blocks of 64 or more along K.
 *
 * WORKSPACE OF THE OUTPUT STAGES: qmx_fully_connected_i8_workspace_size(M, N, K, &bytes) and
 *   qmx_matmul_i8_f32_workspace_size(M, N, K, &bytes), the same pure function of the shapes:
 *       64 + 1024 + r64(4*nb) + r64(mb*K) + r64(4*mb*nb),  mb = min(M, 64),
 *       nb = min(N, QMX_MATMUL_TILE_N)
 *   (alignment, 256 int32 zeros, the column sums of a tile of B, the VNNI panel of A + 128, the
 *   int32 tile). Any alignment. Errors of the query: NULL bytes, a zero dimension (SIZE), size_t
 *   overflow (OVERFLOW). Stack: the kernel's (under 256 bytes) plus a context of a few words.
 *
 * ERRORS OF THE OUTPUT STAGES (checked before anything is written; on error out/C and the
 * workspace are untouched)
 *   QMX_ERR_NULL              A, W/B, out/C, rq/scales, workspace NULL; rq->multipliers or
 *                             rq->shifts NULL (fixed-point modes), rq->scales NULL (float
 *                             mode); scales->a_scales or b_scales NULL
 *   QMX_ERR_ARG               a_zp outside [-128, 127]; rq->mode unknown; a (multiplier, shift)
 *                             that qmx_requantize_check rejects (shift outside [-31, 30], single
 *                             rounding with a negative multiplier), checked for every channel
 *                             used; a float requant scale or an a/b scale that is 0, negative,
 *                             -0, NaN or Inf; act_min > act_max, or either outside the out
 *                             dtype; output_zero_point outside the out dtype
 *   QMX_ERR_DTYPE             rq->out_dtype other than 0, QMX_INT8, QMX_INT16
 *   QMX_ERR_SIZE              M, N or K is 0; block_size is 0
 *   QMX_ERR_OVERFLOW          K > QMX_MATMUL_I8_MAX_K; size_t overflow of an extent
 *                             ((M-1)*lda + K, (N-1)*ldw + K, the output extent in bytes,
 *                             M*nblk or N*nblk scales, the workspace)
 *   QMX_ERR_SHAPE             lda < K, ldw/ldb < K, ldo/ldc < N
 *   QMX_ERR_BUFFER_TOO_SMALL  workspace_bytes too small; a_scales_len < (a_per_row ? M : 1) *
 *                             nblk; b_scales_len < (b_per_col ? N : 1) * nblk
 *   The lengths of rq's per-channel arrays and of the bias are N (as qmx_requantize_array:
 *   they carry no length). Output buffers must not overlap the inputs or the workspace.
 *
 * Not yet here (issue 3): prepacked weights, int4/fp8 operands, weight zero points and KN
 * weights in the output stages, einsum, AVX-VNNI (256-bit), Cortex-M DSP/MVE kernels.
 * MIT licensed (see qmx.h).
 * ============================================================================================ */
#ifndef QMX_KERNELS_H
#define QMX_KERNELS_H
#include "qmx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest K for which C = sum (A - a_zp)(B - b_zp) always fits int32 (see OVERFLOW BOUND). */
#define QMX_MATMUL_I8_MAX_K 33025

typedef enum qmx_b_layout {
    QMX_B_NK = 0, /* B is [N,K] row-major ("weights", transposed): B(n,k) = B[n*ldb + k] */
    QMX_B_KN = 1  /* B is [K,N] row-major:                          B(n,k) = B[k*ldb + n] */
} qmx_b_layout;

typedef struct qmx_matmul_i8_opts {
    int32_t a_zp;           /* zero point of A, in [-128, 127]; default 0 */
    int32_t b_zp;           /* zero point of B, in [-128, 127]; default 0 */
    qmx_b_layout b_layout;  /* default QMX_B_NK */
    const int32_t *b_sums;  /* NULL (default), or sums from qmx_matmul_i8_weight_sums */
    size_t b_sums_len;      /* entries in b_sums (>= N) */
} qmx_matmul_i8_opts;

/* Bytes of the weight-sum array for N output channels (N * 4); 0 when that overflows. */
QMX_API size_t qmx_matmul_i8_weight_sums_size(size_t N);
/* sums[n] = sum_k B(n,k) for the given layout. Errors: NULL, N/K = 0 (SIZE), K > max
 * (OVERFLOW), ldb too small (SHAPE), extent overflow (OVERFLOW), sums_len < N (BUFFER). */
QMX_API qmx_status qmx_matmul_i8_weight_sums(const int8_t *B, size_t N, size_t K, size_t ldb,
                                             qmx_b_layout layout, int32_t *sums, size_t sums_len);
/* Workspace bytes of qmx_matmul_i8 (see WORKSPACE); QMX_ERR_SIZE for a zero dimension,
 * QMX_ERR_OVERFLOW when it does not fit size_t, QMX_ERR_NULL when bytes is NULL. opts may be
 * NULL and does not change the size. */
QMX_API qmx_status qmx_matmul_i8_workspace_size(size_t M, size_t N, size_t K,
                                                const qmx_matmul_i8_opts *opts, size_t *bytes);
/* The optimised matmul (see above). */
QMX_API qmx_status qmx_matmul_i8(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                 const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                 const qmx_matmul_i8_opts *opts, void *workspace,
                                 size_t workspace_bytes);
/* The scalar reference: a naive triple loop sum_k (A - a_zp)(B - b_zp) in int32 (exact for
 * K <= QMX_MATMUL_I8_MAX_K), same arguments and errors, no workspace; opts.b_sums is ignored. */
QMX_API qmx_status qmx_matmul_i8_ref(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                     const qmx_matmul_i8_opts *opts);

/* ---- output stages on the int8 matmul (FULLY-CONNECTED, DEQUANT-ON-OUTPUT) ---------------- */
/* Columns of B per int32 tile of the fused output stages (see WORKSPACE OF THE OUTPUT STAGES). */
#define QMX_MATMUL_TILE_N 256

/* Workspace bytes of qmx_fully_connected_i8 (see its section); the same errors as
 * qmx_matmul_i8_workspace_size. */
QMX_API qmx_status qmx_fully_connected_i8_workspace_size(size_t M, size_t N, size_t K,
                                                         size_t *bytes);
/* TFLite / CMSIS-NN fully-connected: out = requant(A x W^T + bias) (see FULLY-CONNECTED).
 * out is int8 or int16 (rq->out_dtype), row m at out + m*ldo elements. */
QMX_API qmx_status qmx_fully_connected_i8(size_t M, size_t N, size_t K, const int8_t *A,
                                          size_t lda, int32_t a_zp, const int8_t *W, size_t ldw,
                                          const qmx_requant_config *rq, void *out, size_t ldo,
                                          void *workspace, size_t workspace_bytes);

/* Scales of qmx_matmul_i8_f32 (see DEQUANT-ON-OUTPUT). nblk = ceil(K / block_size). */
typedef struct qmx_matmul_i8_f32_scales {
    const float *a_scales;   /* [M][nblk] when a_per_row, else [nblk] (per tensor) */
    size_t a_scales_len;     /* entries in a_scales (>= M*nblk or nblk) */
    int a_per_row;           /* nonzero: one scale per row of A (per token) and block */
    int32_t a_zp;            /* zero point of A, in [-128, 127] (per tensor) */
    const float *b_scales;   /* [N][nblk] when b_per_col, else [nblk] (per tensor) */
    size_t b_scales_len;     /* entries in b_scales (>= N*nblk or nblk) */
    int b_per_col;           /* nonzero: one scale per output column n (per channel) and block */
    size_t block_size;       /* K-block length (sub-channel); K (or more) = one block; 0: error */
} qmx_matmul_i8_f32_scales;

/* Workspace bytes of qmx_matmul_i8_f32 (the same formula as the fully-connected). */
QMX_API qmx_status qmx_matmul_i8_f32_workspace_size(size_t M, size_t N, size_t K, size_t *bytes);
/* AQT/Qwix dequant-on-output: C[m][n] = sum over K-blocks of (float)partial * sa * sb in the
 * documented float order. C is float [M,N], row m at C + m*ldc. */
QMX_API qmx_status qmx_matmul_i8_f32(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, float *C, size_t ldc,
                                     const qmx_matmul_i8_f32_scales *scales, void *workspace,
                                     size_t workspace_bytes);

#ifdef __cplusplus
}
#endif
#endif /* QMX_KERNELS_H */

/* ============================================================================================
 * IMPLEMENTATION
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX_KERNELS_IMPLEMENTATION_DONE)
#define QMX_KERNELS_IMPLEMENTATION_DONE

#if !defined(QMX_NO_SIMD)
#  if !defined(QMX_NO_AVX512) && defined(__AVX512F__) && defined(__AVX512BW__) && \
      defined(__AVX512VNNI__)
#    define QMX__K_VNNI 1
#  elif !defined(QMX_NO_AVX2) && defined(__AVX2__)
#    define QMX__K_AVX2 1
#  elif !defined(QMX_NO_NEON) && (defined(__ARM_NEON) || defined(__ARM_NEON__)) && \
        defined(__aarch64__)
#    if defined(__ARM_FEATURE_DOTPROD) && !defined(QMX_NO_DOTPROD)
#      define QMX__K_NEONDOT 1
#    else
#      define QMX__K_NEON 1
#    endif
#  endif
#endif
#if defined(QMX__K_VNNI) || defined(QMX__K_AVX2)
#  include <immintrin.h>
#endif
#if defined(QMX__K_NEONDOT) || defined(QMX__K_NEON)
#  include <arm_neon.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* uint32 -> int32 by value modulo 2^32, without an implementation-defined conversion. */
static int32_t qmx__k_u2i(uint32_t u) {
    return u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(u - 0x80000000u) - 0x7FFFFFFF - 1;
}
static size_t qmx__k_r64(size_t x) { return (x + 63u) & ~(size_t)63u; }

/* Extent of a row-major [rows, cols] view with leading dimension ld: (rows-1)*ld + cols
 * elements; 0 on size_t overflow (rows, cols >= 1). */
static size_t qmx__k_extent(size_t rows, size_t cols, size_t ld) {
    if (rows - 1 != 0 && ld > (SIZE_MAX - cols) / (rows - 1)) return 0;
    return (rows - 1) * ld + cols;
}

static qmx_status qmx__k_check_b(const int8_t *B, size_t N, size_t K, size_t ldb, int layout) {
    if (!B) return QMX_ERR_NULL;
    if (layout != QMX_B_NK && layout != QMX_B_KN) return QMX_ERR_ARG;
    if (N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I8_MAX_K) return QMX_ERR_OVERFLOW;
    if (layout == QMX_B_NK) {
        if (ldb < K) return QMX_ERR_SHAPE;
        if (!qmx__k_extent(N, K, ldb)) return QMX_ERR_OVERFLOW;
    } else {
        if (ldb < N) return QMX_ERR_SHAPE;
        if (!qmx__k_extent(K, N, ldb)) return QMX_ERR_OVERFLOW;
    }
    return QMX_OK;
}

/* Checks everything but the workspace; fills defaults. */
static qmx_status qmx__k_check_mm(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                  const int8_t *B, size_t ldb, const int32_t *C, size_t ldc,
                                  const qmx_matmul_i8_opts *opts, qmx_matmul_i8_opts *o) {
    size_t ce;
    qmx_status st;
    if (opts) {
        *o = *opts;
    } else {
        o->a_zp = 0; o->b_zp = 0; o->b_layout = QMX_B_NK; o->b_sums = NULL; o->b_sums_len = 0;
    }
    if (!A || !C) return QMX_ERR_NULL;
    if (o->a_zp < -128 || o->a_zp > 127 || o->b_zp < -128 || o->b_zp > 127) return QMX_ERR_ARG;
    if (M == 0) return QMX_ERR_SIZE;
    st = qmx__k_check_b(B, N, K, ldb, (int)o->b_layout);
    if (st != QMX_OK) return st;
    if (lda < K || ldc < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    ce = qmx__k_extent(M, N, ldc);
    if (!ce || ce > SIZE_MAX / sizeof(int32_t)) return QMX_ERR_OVERFLOW;
    return QMX_OK;
}

QMX_API size_t qmx_matmul_i8_weight_sums_size(size_t N) {
    return N > SIZE_MAX / sizeof(int32_t) ? 0 : N * sizeof(int32_t);
}

/* sum_k p[k] (|sum| <= 128 K); SIMD where available. */
static int32_t qmx__k_sum_i8(const int8_t *p, size_t K) {
    int32_t t = 0;
    size_t k = 0;
#if defined(QMX__K_VNNI)
    __m512i acc = _mm512_setzero_si512(), ones = _mm512_set1_epi8(1);
    for (; k + 64 <= K; k += 64)
        acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512((const void *)(p + k)));
    if (k < K) { /* masked tail: the bytes past K are not read */
        __mmask64 msk = (__mmask64)((((uint64_t)1) << (K - k)) - 1u);
        acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(msk, p + k));
        k = K;
    }
    {   /* horizontal sum (zero-masked shuffles: see qmx__k_hsum4x512) */
        __m512i v = acc;
        v = _mm512_add_epi32(v, _mm512_maskz_shuffle_i64x2((__mmask8)0xFF, v, v, 0x4E));
        v = _mm512_add_epi32(v, _mm512_maskz_shuffle_i64x2((__mmask8)0xFF, v, v, 0xB1));
        v = _mm512_add_epi32(v, _mm512_maskz_shuffle_epi32((__mmask16)0xFFFF, v, (_MM_PERM_ENUM)0x4E));
        v = _mm512_add_epi32(v, _mm512_maskz_shuffle_epi32((__mmask16)0xFFFF, v, (_MM_PERM_ENUM)0xB1));
        t += (int32_t)_mm512_cvtsi512_si32(v);
    }
#elif defined(QMX__K_AVX2)
    __m256i acc = _mm256_setzero_si256(), ones = _mm256_set1_epi16(1);
    __m128i s4;
    for (; k + 16 <= K; k += 16)
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_cvtepi8_epi16(
                  _mm_loadu_si128((const __m128i *)(const void *)(p + k))), ones));
    s4 = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    t = _mm_cvtsi128_si32(s4);
#elif defined(QMX__K_NEONDOT) || defined(QMX__K_NEON)
    int32x4_t acc = vdupq_n_s32(0);
    for (; k + 16 <= K; k += 16) acc = vpadalq_s16(acc, vpaddlq_s8(vld1q_s8(p + k)));
    t = vaddvq_s32(acc);
#endif
    for (; k < K; k++) t += p[k];
    return t;
}

static void qmx__k_colsums(const int8_t *B, size_t N, size_t K, size_t ldb, int layout,
                           int32_t *s) {
    size_t n, k;
    if (layout == QMX_B_NK) {
        for (n = 0; n < N; n++) {
            s[n] = qmx__k_sum_i8(B + n * ldb, K);
        }
    } else {
        for (n = 0; n < N; n++) s[n] = 0;
        for (k = 0; k < K; k++) {
            const int8_t *b = B + k * ldb;
            for (n = 0; n < N; n++) s[n] += b[n];
        }
    }
}

QMX_API qmx_status qmx_matmul_i8_weight_sums(const int8_t *B, size_t N, size_t K, size_t ldb,
                                             qmx_b_layout layout, int32_t *sums,
                                             size_t sums_len) {
    qmx_status st = qmx__k_check_b(B, N, K, ldb, (int)layout);
    if (st != QMX_OK) return st;
    if (!sums) return QMX_ERR_NULL;
    if (sums_len < N) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx__k_colsums(B, N, K, ldb, (int)layout, sums);
    return QMX_OK;
}

QMX_API qmx_status qmx_matmul_i8_workspace_size(size_t M, size_t N, size_t K,
                                                const qmx_matmul_i8_opts *opts, size_t *bytes) {
    size_t mb, parts[4], total = 64;
    int i;
    (void)opts;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (M > SIZE_MAX / 8 || N > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    mb = M < 64 ? M : 64;
    if (K > (SIZE_MAX - 64) / mb || K > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    parts[0] = qmx__k_r64(M * 4);
    parts[1] = qmx__k_r64(N * 4);
    parts[2] = qmx__k_r64(mb * K);
    parts[3] = qmx__k_r64(4 * K);
    for (i = 0; i < 4; i++) {
        if (parts[i] > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
        total += parts[i];
    }
    *bytes = total;
    return QMX_OK;
}

QMX_API qmx_status qmx_matmul_i8_ref(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                     const qmx_matmul_i8_opts *opts) {
    qmx_matmul_i8_opts o;
    size_t m, n, k;
    qmx_status st = qmx__k_check_mm(M, N, K, A, lda, B, ldb, C, ldc, opts, &o);
    if (st != QMX_OK) return st;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            int32_t s = 0; /* |partial| <= k * 255^2 <= INT32_MAX for K <= 33025 */
            for (k = 0; k < K; k++) {
                int32_t b = o.b_layout == QMX_B_NK ? B[n * ldb + k] : B[k * ldb + n];
                s += ((int32_t)A[m * lda + k] - o.a_zp) * (b - o.b_zp);
            }
            C[m * ldc + n] = s;
        }
    return QMX_OK;
}

/* ---- register tiles: dots[i][j] = sum_k a_i[k] * b_j[k] (raw), i < MR (full) or 1 ---- */
#define QMX__K_NR 4

#if defined(QMX__K_VNNI)
/* a rows are the packed A + 128 as uint8; dots are sum (A+128)*B. */
#define QMX__K_MR 4
#define QMX__K_PACK 1
static __mmask64 qmx__k_tailmask(size_t r) { return (__mmask64)((((uint64_t)1) << r) - 1u); }
/* out[j] = horizontal sum of c_j, j < 4 (transpose-and-add). The zero-masked intrinsic forms
 * on purpose: GCC 12's unmasked ones (and _mm512_reduce_add_epi32) trip -Wmaybe-uninitialized
 * in C++ through _mm512_undefined_*. */
static void qmx__k_hsum4x512(__m512i c0, __m512i c1, __m512i c2, __m512i c3, int32_t out[4]) {
    const __mmask16 f16 = (__mmask16)0xFFFF;
    const __mmask8 f8 = (__mmask8)0xFF;
    __m512i t01 = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(f16, c0, c1),
                                   _mm512_maskz_unpackhi_epi32(f16, c0, c1));
    __m512i t23 = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(f16, c2, c3),
                                   _mm512_maskz_unpackhi_epi32(f16, c2, c3));
    /* per 128-bit lane: t01 = [c0, c1, c0, c1] partials, t23 = [c2, c3, c2, c3] */
    __m512i u = _mm512_add_epi32(_mm512_maskz_unpacklo_epi64(f8, t01, t23),
                                 _mm512_maskz_unpackhi_epi64(f8, t01, t23));
    /* per lane: [c0, c1, c2, c3]; add the four lanes */
    u = _mm512_add_epi32(u, _mm512_maskz_shuffle_i64x2(f8, u, u, 0x4E));
    u = _mm512_add_epi32(u, _mm512_maskz_shuffle_i64x2(f8, u, u, 0xB1));
    _mm_storeu_si128((__m128i *)(void *)out, _mm512_maskz_extracti32x4_epi32((__mmask8)0xF, u, 0));
}
static void qmx__k_tile_full(const uint8_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    __m512i c00 = _mm512_setzero_si512(), c01 = c00, c02 = c00, c03 = c00;
    __m512i c10 = c00, c11 = c00, c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00;
    __m512i c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    __m512i a0, a1, a2, a3, b0, b1, b2, b3;
    size_t k = 0;
    __mmask64 msk = ~(__mmask64)0;
#define QMX__K_VNNI_STEP(LOAD)                                                                  \
    a0 = LOAD(a[0] + k); a1 = LOAD(a[1] + k); a2 = LOAD(a[2] + k); a3 = LOAD(a[3] + k);      \
    b0 = LOAD(b[0] + k); b1 = LOAD(b[1] + k); b2 = LOAD(b[2] + k); b3 = LOAD(b[3] + k);      \
    c00 = _mm512_dpbusd_epi32(c00, a0, b0); c01 = _mm512_dpbusd_epi32(c01, a0, b1);            \
    c02 = _mm512_dpbusd_epi32(c02, a0, b2); c03 = _mm512_dpbusd_epi32(c03, a0, b3);            \
    c10 = _mm512_dpbusd_epi32(c10, a1, b0); c11 = _mm512_dpbusd_epi32(c11, a1, b1);            \
    c12 = _mm512_dpbusd_epi32(c12, a1, b2); c13 = _mm512_dpbusd_epi32(c13, a1, b3);            \
    c20 = _mm512_dpbusd_epi32(c20, a2, b0); c21 = _mm512_dpbusd_epi32(c21, a2, b1);            \
    c22 = _mm512_dpbusd_epi32(c22, a2, b2); c23 = _mm512_dpbusd_epi32(c23, a2, b3);            \
    c30 = _mm512_dpbusd_epi32(c30, a3, b0); c31 = _mm512_dpbusd_epi32(c31, a3, b1);            \
    c32 = _mm512_dpbusd_epi32(c32, a3, b2); c33 = _mm512_dpbusd_epi32(c33, a3, b3);
#define QMX__K_LDU(p) _mm512_loadu_si512((const void *)(p))
#define QMX__K_LDM(p) _mm512_maskz_loadu_epi8(msk, (p))
    for (; k + 64 <= K; k += 64) {
        QMX__K_VNNI_STEP(QMX__K_LDU)
    }
    if (k < K) { /* masked tail: bytes past K are neither read nor counted */
        msk = qmx__k_tailmask(K - k);
        QMX__K_VNNI_STEP(QMX__K_LDM)
    }
#undef QMX__K_VNNI_STEP
#undef QMX__K_LDU
#undef QMX__K_LDM
    qmx__k_hsum4x512(c00, c01, c02, c03, d[0]);
    qmx__k_hsum4x512(c10, c11, c12, c13, d[1]);
    qmx__k_hsum4x512(c20, c21, c22, c23, d[2]);
    qmx__k_hsum4x512(c30, c31, c32, c33, d[3]);
}
static void qmx__k_tile_1(const uint8_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
    __m512i e0 = c0, e1 = c0, e2 = c0, e3 = c0;
    __m512i x, y;
    size_t k = 0;
    for (; k + 128 <= K; k += 128) {
        x = _mm512_loadu_si512((const void *)(a + k));
        y = _mm512_loadu_si512((const void *)(a + k + 64));
        c0 = _mm512_dpbusd_epi32(c0, x, _mm512_loadu_si512((const void *)(b[0] + k)));
        c1 = _mm512_dpbusd_epi32(c1, x, _mm512_loadu_si512((const void *)(b[1] + k)));
        c2 = _mm512_dpbusd_epi32(c2, x, _mm512_loadu_si512((const void *)(b[2] + k)));
        c3 = _mm512_dpbusd_epi32(c3, x, _mm512_loadu_si512((const void *)(b[3] + k)));
        e0 = _mm512_dpbusd_epi32(e0, y, _mm512_loadu_si512((const void *)(b[0] + k + 64)));
        e1 = _mm512_dpbusd_epi32(e1, y, _mm512_loadu_si512((const void *)(b[1] + k + 64)));
        e2 = _mm512_dpbusd_epi32(e2, y, _mm512_loadu_si512((const void *)(b[2] + k + 64)));
        e3 = _mm512_dpbusd_epi32(e3, y, _mm512_loadu_si512((const void *)(b[3] + k + 64)));
    }
    for (; k < K; k += 64) {
        __mmask64 msk = K - k >= 64 ? ~(__mmask64)0 : qmx__k_tailmask(K - k);
        x = _mm512_maskz_loadu_epi8(msk, a + k);
        c0 = _mm512_dpbusd_epi32(c0, x, _mm512_maskz_loadu_epi8(msk, b[0] + k));
        c1 = _mm512_dpbusd_epi32(c1, x, _mm512_maskz_loadu_epi8(msk, b[1] + k));
        c2 = _mm512_dpbusd_epi32(c2, x, _mm512_maskz_loadu_epi8(msk, b[2] + k));
        c3 = _mm512_dpbusd_epi32(c3, x, _mm512_maskz_loadu_epi8(msk, b[3] + k));
    }
    qmx__k_hsum4x512(_mm512_add_epi32(c0, e0), _mm512_add_epi32(c1, e1),
                     _mm512_add_epi32(c2, e2), _mm512_add_epi32(c3, e3), d);
}

#elif defined(QMX__K_AVX2)
#define QMX__K_MR 2
static int32_t qmx__k_hsum256(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}
#define QMX__K_LD16(p) _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p)))
static void qmx__k_tile_full(const int8_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c02 = c00, c03 = c00;
    __m256i c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    size_t k = 0;
    int i, j;
    for (; k + 16 <= K; k += 16) {
        __m256i a0 = QMX__K_LD16(a[0] + k), a1 = QMX__K_LD16(a[1] + k);
        __m256i b0 = QMX__K_LD16(b[0] + k), b1 = QMX__K_LD16(b[1] + k);
        __m256i b2 = QMX__K_LD16(b[2] + k), b3 = QMX__K_LD16(b[3] + k);
        c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(a0, b0));
        c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(a0, b1));
        c02 = _mm256_add_epi32(c02, _mm256_madd_epi16(a0, b2));
        c03 = _mm256_add_epi32(c03, _mm256_madd_epi16(a0, b3));
        c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(a1, b0));
        c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(a1, b1));
        c12 = _mm256_add_epi32(c12, _mm256_madd_epi16(a1, b2));
        c13 = _mm256_add_epi32(c13, _mm256_madd_epi16(a1, b3));
    }
    d[0][0] = qmx__k_hsum256(c00); d[0][1] = qmx__k_hsum256(c01);
    d[0][2] = qmx__k_hsum256(c02); d[0][3] = qmx__k_hsum256(c03);
    d[1][0] = qmx__k_hsum256(c10); d[1][1] = qmx__k_hsum256(c11);
    d[1][2] = qmx__k_hsum256(c12); d[1][3] = qmx__k_hsum256(c13);
    for (; k < K; k++)
        for (i = 0; i < 2; i++)
            for (j = 0; j < 4; j++) d[i][j] += (int32_t)a[i][k] * b[j][k];
}
static void qmx__k_tile_1(const int8_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
    size_t k = 0;
    int j;
    for (; k + 16 <= K; k += 16) {
        __m256i x = QMX__K_LD16(a + k);
        c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(x, QMX__K_LD16(b[0] + k)));
        c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(x, QMX__K_LD16(b[1] + k)));
        c2 = _mm256_add_epi32(c2, _mm256_madd_epi16(x, QMX__K_LD16(b[2] + k)));
        c3 = _mm256_add_epi32(c3, _mm256_madd_epi16(x, QMX__K_LD16(b[3] + k)));
    }
    d[0] = qmx__k_hsum256(c0); d[1] = qmx__k_hsum256(c1);
    d[2] = qmx__k_hsum256(c2); d[3] = qmx__k_hsum256(c3);
    for (; k < K; k++)
        for (j = 0; j < 4; j++) d[j] += (int32_t)a[k] * b[j][k];
}

#elif defined(QMX__K_NEONDOT) || defined(QMX__K_NEON)
#define QMX__K_MR 4
#if defined(QMX__K_NEONDOT)
#  define QMX__K_MAC(c, x, y) c = vdotq_s32(c, x, y)
#else
/* int8 products fit int16 (|p| <= 16384); each is added into int32 pairwise. */
#  define QMX__K_MAC(c, x, y) \
     c = vpadalq_s16(vpadalq_s16(c, vmull_s8(vget_low_s8(x), vget_low_s8(y))), \
                     vmull_high_s8(x, y))
#endif
static void qmx__k_tile_full(const int8_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00;
    int32x4_t c10 = c00, c11 = c00, c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00;
    int32x4_t c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    size_t k = 0;
    int i, j;
    for (; k + 16 <= K; k += 16) {
        int8x16_t a0 = vld1q_s8(a[0] + k), a1 = vld1q_s8(a[1] + k);
        int8x16_t a2 = vld1q_s8(a[2] + k), a3 = vld1q_s8(a[3] + k);
        int8x16_t b0 = vld1q_s8(b[0] + k), b1 = vld1q_s8(b[1] + k);
        int8x16_t b2 = vld1q_s8(b[2] + k), b3 = vld1q_s8(b[3] + k);
        QMX__K_MAC(c00, a0, b0); QMX__K_MAC(c01, a0, b1);
        QMX__K_MAC(c02, a0, b2); QMX__K_MAC(c03, a0, b3);
        QMX__K_MAC(c10, a1, b0); QMX__K_MAC(c11, a1, b1);
        QMX__K_MAC(c12, a1, b2); QMX__K_MAC(c13, a1, b3);
        QMX__K_MAC(c20, a2, b0); QMX__K_MAC(c21, a2, b1);
        QMX__K_MAC(c22, a2, b2); QMX__K_MAC(c23, a2, b3);
        QMX__K_MAC(c30, a3, b0); QMX__K_MAC(c31, a3, b1);
        QMX__K_MAC(c32, a3, b2); QMX__K_MAC(c33, a3, b3);
    }
    d[0][0] = vaddvq_s32(c00); d[0][1] = vaddvq_s32(c01);
    d[0][2] = vaddvq_s32(c02); d[0][3] = vaddvq_s32(c03);
    d[1][0] = vaddvq_s32(c10); d[1][1] = vaddvq_s32(c11);
    d[1][2] = vaddvq_s32(c12); d[1][3] = vaddvq_s32(c13);
    d[2][0] = vaddvq_s32(c20); d[2][1] = vaddvq_s32(c21);
    d[2][2] = vaddvq_s32(c22); d[2][3] = vaddvq_s32(c23);
    d[3][0] = vaddvq_s32(c30); d[3][1] = vaddvq_s32(c31);
    d[3][2] = vaddvq_s32(c32); d[3][3] = vaddvq_s32(c33);
    for (; k < K; k++)
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++) d[i][j] += (int32_t)a[i][k] * b[j][k];
}
static void qmx__k_tile_1(const int8_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    int32x4_t c0 = vdupq_n_s32(0), c1 = c0, c2 = c0, c3 = c0;
    size_t k = 0;
    int j;
    for (; k + 16 <= K; k += 16) {
        int8x16_t x = vld1q_s8(a + k);
        QMX__K_MAC(c0, x, vld1q_s8(b[0] + k)); QMX__K_MAC(c1, x, vld1q_s8(b[1] + k));
        QMX__K_MAC(c2, x, vld1q_s8(b[2] + k)); QMX__K_MAC(c3, x, vld1q_s8(b[3] + k));
    }
    d[0] = vaddvq_s32(c0); d[1] = vaddvq_s32(c1); d[2] = vaddvq_s32(c2); d[3] = vaddvq_s32(c3);
    for (; k < K; k++)
        for (j = 0; j < 4; j++) d[j] += (int32_t)a[k] * b[j][k];
}

#else
/* Portable C: 2x4 tile, 8 int32 accumulators. */
#define QMX__K_MR 2
static void qmx__k_tile_full(const int8_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    const int8_t *a0 = a[0], *a1 = a[1], *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
    int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    size_t k;
    for (k = 0; k < K; k++) {
        int32_t x0 = a0[k], x1 = a1[k], y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
        s00 += x0 * y0; s01 += x0 * y1; s02 += x0 * y2; s03 += x0 * y3;
        s10 += x1 * y0; s11 += x1 * y1; s12 += x1 * y2; s13 += x1 * y3;
    }
    d[0][0] = s00; d[0][1] = s01; d[0][2] = s02; d[0][3] = s03;
    d[1][0] = s10; d[1][1] = s11; d[1][2] = s12; d[1][3] = s13;
}
static void qmx__k_tile_1(const int8_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    const int8_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k;
    for (k = 0; k < K; k++) {
        int32_t x = a[k];
        s0 += x * b0[k]; s1 += x * b1[k]; s2 += x * b2[k]; s3 += x * b3[k];
    }
    d[0] = s0; d[1] = s1; d[2] = s2; d[3] = s3;
}
#endif

#ifndef QMX__K_PACK
#define QMX__K_PACK 0
#endif
#if QMX__K_PACK
typedef uint8_t qmx__k_arow;
#else
typedef int8_t qmx__k_arow;
#endif

#define QMX__K_MB 64 /* rows of A per panel (and per packed panel) */

/* C[m][n] = dot + rt[m] - ca * colsum[n], in uint32 (exact: the true value fits int32). */
static void qmx__k_store(int32_t *c, int32_t dot, uint32_t rt, uint32_t ca, int32_t cs) {
    *c = qmx__k_u2i((uint32_t)dot + rt - ca * (uint32_t)cs);
}

static void qmx__k_mm_nk(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                         const int8_t *B, size_t ldb, int32_t *C, size_t ldc, const int32_t *cs,
                         int32_t *cs_fill, const uint32_t *rt, uint32_t ca, uint8_t *pack,
                         int kn, int8_t *btile) {
    size_t m0, m, n, i, j;
    const qmx__k_arow *ar[4];
    const int8_t *br[4];
    int32_t d[4][4];
    (void)pack;
    /* Panels of QMX__K_MB rows of A (L2); for each tile of 4 rows of B (L1 for K <= ~8K),
     * every row tile of the panel: B is read from memory once per panel. */
    for (m0 = 0; m0 < M; m0 += QMX__K_MB) {
        size_t mb = M - m0 < QMX__K_MB ? M - m0 : QMX__K_MB;
#if QMX__K_PACK
        for (i = 0; i < mb; i++) {
            const int8_t *src = A + (m0 + i) * lda;
            uint8_t *dst = pack + i * K;
            size_t k;
            for (k = 0; k < K; k++) dst[k] = (uint8_t)((uint8_t)src[k] ^ 0x80u);
        }
#endif
        for (n = 0; n < N; n += QMX__K_NR) {
            size_t nv = N - n < QMX__K_NR ? N - n : QMX__K_NR;
            if (kn) { /* [K,N]: copy the 4 columns into a 4 x K row tile */
                size_t k;
                for (j = 0; j < QMX__K_NR; j++) br[j] = btile + j * K;
                for (k = 0; k < K; k++) {
                    const int8_t *src = B + k * ldb + n;
                    for (j = 0; j < QMX__K_NR; j++) btile[j * K + k] = src[j < nv ? j : 0];
                }
            } else {
                for (j = 0; j < QMX__K_NR; j++) br[j] = B + (j < nv ? n + j : n) * ldb;
            }
            if (cs_fill && m0 == 0) /* weight sums while this tile of B is in cache */
                for (j = 0; j < nv; j++) cs_fill[n + j] = qmx__k_sum_i8(br[j], K);
            for (m = m0; m < m0 + mb;) {
                size_t na = m0 + mb - m >= QMX__K_MR ? QMX__K_MR : 1;
                for (i = 0; i < na; i++) {
#if QMX__K_PACK
                    ar[i] = pack + (m - m0 + i) * K;
#else
                    ar[i] = A + (m + i) * lda;
#endif
                }
                if (na == 1) {
                    qmx__k_tile_1(ar[0], br, K, d[0]);
                } else {
                    qmx__k_tile_full(ar, br, K, d);
                }
                for (i = 0; i < na; i++)
                    for (j = 0; j < nv; j++)
                        qmx__k_store(C + (m + i) * ldc + n + j, d[i][j], rt[m + i], ca,
                                     cs[n + j]);
                m += na;
            }
        }
    }
}

QMX_API qmx_status qmx_matmul_i8(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                 const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                 const qmx_matmul_i8_opts *opts, void *workspace,
                                 size_t workspace_bytes) {
    qmx_matmul_i8_opts o;
    size_t need, m, off;
    uint8_t *ws;
    uint32_t *rt, ca, kab;
    const int32_t *cs;
    int32_t *cs_fill;
    qmx_status st = qmx__k_check_mm(M, N, K, A, lda, B, ldb, C, ldc, opts, &o);
    if (st != QMX_OK) return st;
    if (!workspace) return QMX_ERR_NULL;
    if (o.b_sums && o.b_sums_len < N) return QMX_ERR_BUFFER_TOO_SMALL;
    st = qmx_matmul_i8_workspace_size(M, N, K, &o, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;

    ws = (uint8_t *)workspace;
    off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u); /* align the regions to 64 bytes */
    rt = (uint32_t *)(void *)(ws + off);
    off += qmx__k_r64(M * 4);
    cs_fill = NULL;
    if (o.b_sums) {
        cs = o.b_sums;
    } else {
        cs_fill = (int32_t *)(void *)(ws + off); /* filled on the first pass over B */
        cs = cs_fill;
    }
    off += qmx__k_r64(N * 4);

    /* rt[m] = K*a_zp*b_zp - b_zp*rowsum(A)[m]   (mod 2^32) */
    kab = (uint32_t)K * (uint32_t)o.a_zp * (uint32_t)o.b_zp;
    for (m = 0; m < M; m++) {
        int32_t s = o.b_zp != 0 ? qmx__k_sum_i8(A + m * lda, K) : 0;
        rt[m] = kab - (uint32_t)o.b_zp * (uint32_t)s;
    }
    ca = (uint32_t)o.a_zp;
    if (QMX__K_PACK) ca += 128u; /* dot of (A + 128): subtract 128 * colsum(B) too */
    qmx__k_mm_nk(M, N, K, A, lda, B, ldb, C, ldc, cs, cs_fill, rt, ca, ws + off,
                 o.b_layout == QMX_B_KN,
                 (int8_t *)(void *)(ws + off + qmx__k_r64((M < QMX__K_MB ? M : QMX__K_MB) * K)));
    return QMX_OK;
}

/* ---- output stages: int32 tiles from qmx__k_mm_nk, then the stage on each tile ------------- */
/* Workspace of the output stages (offsets from the 64-byte aligned start):
 *   zeros  1024 bytes: 256 int32 zeros (the row terms rt, b_zp = 0; the column sums when the
 *          correction factor ca is 0)
 *   cs     r64(4 * nb)       column sums of the current tile of B (filled by the kernel)
 *   pack   r64(mb * K)       the VNNI panel of A + 128
 *   tile   r64(4 * mb * nb)  the int32 tile [mb][nb]
 * with mb = min(M, 64), nb = min(N, QMX_MATMUL_TILE_N). */
static qmx_status qmx__k_stage_ws(size_t M, size_t N, size_t K, size_t *bytes) {
    size_t mb, nb, parts[3], total = 64 + 1024;
    int i;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    mb = M < QMX__K_MB ? M : QMX__K_MB;
    nb = N < QMX_MATMUL_TILE_N ? N : QMX_MATMUL_TILE_N;
    if (K > (SIZE_MAX - 64) / mb) return QMX_ERR_OVERFLOW;
    parts[0] = qmx__k_r64(4 * nb);
    parts[1] = qmx__k_r64(mb * K);
    parts[2] = qmx__k_r64(4 * mb * nb);
    for (i = 0; i < 3; i++) {
        if (parts[i] > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
        total += parts[i];
    }
    *bytes = total;
    return QMX_OK;
}
QMX_API qmx_status qmx_fully_connected_i8_workspace_size(size_t M, size_t N, size_t K,
                                                         size_t *bytes) {
    return qmx__k_stage_ws(M, N, K, bytes);
}
QMX_API qmx_status qmx_matmul_i8_f32_workspace_size(size_t M, size_t N, size_t K,
                                                    size_t *bytes) {
    return qmx__k_stage_ws(M, N, K, bytes);
}

/* One tile of an output stage: rows m0..m0+mb-1, columns n0..n0+nb-1, K-block blk; tile is
 * [mb][nb] int32 (exact partial sums of (A - a_zp) * B over the block). */
typedef void (*qmx__k_stage_fn)(void *ctx, size_t m0, size_t mb, size_t n0, size_t nb,
                                size_t blk, const int32_t *tile);

/* Drives the existing kernel: panels of 64 rows of A x tiles of QMX_MATMUL_TILE_N columns of
 * B x K-blocks (increasing), each an int32 tile in the workspace followed at once by the stage
 * (the tile is still in cache). Arguments are already checked; B is [N,K] with zero point 0. */
static void qmx__k_tiled(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                         const int8_t *B, size_t ldb, int32_t a_zp, size_t bs, void *workspace,
                         qmx__k_stage_fn stage, void *ctx) {
    uint8_t *ws = (uint8_t *)workspace;
    size_t off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u), mbmax, nbmax, m0, n0, kb, blk, i;
    uint32_t *zeros, ca;
    int32_t *cs, *tile;
    uint8_t *pack;
    mbmax = M < QMX__K_MB ? M : QMX__K_MB;
    nbmax = N < QMX_MATMUL_TILE_N ? N : QMX_MATMUL_TILE_N;
    zeros = (uint32_t *)(void *)(ws + off);
    for (i = 0; i < 256; i++) zeros[i] = 0;
    off += 1024;
    cs = (int32_t *)(void *)(ws + off);
    off += qmx__k_r64(4 * nbmax);
    pack = ws + off;
    off += qmx__k_r64(mbmax * K);
    tile = (int32_t *)(void *)(ws + off);
    ca = (uint32_t)a_zp;
    if (QMX__K_PACK) ca += 128u; /* dot of (A + 128): subtract 128 * colsum(B) too */
    for (m0 = 0; m0 < M; m0 += QMX__K_MB) {
        size_t mb = M - m0 < QMX__K_MB ? M - m0 : QMX__K_MB;
        for (n0 = 0; n0 < N; n0 += QMX_MATMUL_TILE_N) {
            size_t nb = N - n0 < QMX_MATMUL_TILE_N ? N - n0 : QMX_MATMUL_TILE_N;
            for (blk = 0, kb = 0; kb < K; blk++, kb += bs) {
                size_t kl = K - kb < bs ? K - kb : bs;
                /* column sums of this block of B are needed only when ca != 0; they are
                 * recomputed by the kernel while each 4-row tile of B is in cache */
                qmx__k_mm_nk(mb, nb, kl, A + m0 * lda + kb, lda, B + n0 * ldb + kb, ldb, tile, nb,
                             ca ? cs : (const int32_t *)(const void *)zeros, ca ? cs : NULL,
                             zeros, ca, pack, 0, NULL);
                stage(ctx, m0, mb, n0, nb, blk, tile);
                if (K - kb <= bs) break; /* last block (also avoids kb + bs overflowing) */
            }
        }
    }
}

/* finite and > 0 (NaN fails both comparisons, +Inf the second) */
static int qmx__k_scale_ok(float s) { return s > 0.0f && s <= FLT_MAX; }

/* ---- fully-connected ---- */
typedef struct qmx__k_fc_ctx {
    const qmx_requant_config *rq;
    void *out;
    size_t ldo;
    int32_t amin, amax, ozp;
    int i16;
} qmx__k_fc_ctx;

static void qmx__k_fc_stage(void *vctx, size_t m0, size_t mb, size_t n0, size_t nb, size_t blk,
                            const int32_t *tile) {
    const qmx__k_fc_ctx *x = (const qmx__k_fc_ctx *)vctx;
    const qmx_requant_config *c = x->rq;
    /* loop invariants in locals: the int8 stores may alias anything the compiler cannot see */
    const qmx_requant_mode mode = c->mode;
    const int pc = c->per_channel != 0, i16 = x->i16;
    const int32_t *bias = c->bias ? c->bias + n0 : NULL;
    const int32_t *mu = c->multipliers, amin = x->amin, amax = x->amax, ozp = x->ozp;
    const int32_t lo = amin - ozp, hi = amax - ozp; /* v + ozp < amin  <=>  v < amin - ozp */
    const int *sh = c->shifts;
    const float *sc = c->scales;
    const size_t p0 = pc ? n0 : 0;
    size_t i, j;
    (void)blk;
    /* one loop per mode (unswitched by hand), each calling the scalar qmx.h function */
#define QMX__K_FC_LOOP(REQ)                                                                 \
    for (i = 0; i < mb; i++) {                                                              \
        const int32_t *t = tile + i * nb;                                                   \
        size_t o = (m0 + i) * x->ldo + n0;                                                  \
        for (j = 0; j < nb; j++) {                                                          \
            size_t pi = p0 + (pc ? j : 0);                                                  \
            int32_t a = t[j], v, w;                                                         \
            if (bias) a = qmx__k_u2i((uint32_t)a + (uint32_t)bias[j]); /* wrapping add */   \
            v = REQ;                                                                        \
            w = v < lo ? amin : (v > hi ? amax : v + ozp);                                  \
            if (i16) ((int16_t *)x->out)[o + j] = (int16_t)w;                               \
            else ((int8_t *)x->out)[o + j] = (int8_t)w;                                     \
        }                                                                                   \
    }
    if (mode == QMX_REQUANT_DOUBLE_ROUNDING) {
        QMX__K_FC_LOOP(qmx_requantize(a, mu[pi], sh[pi]))
    } else if (mode == QMX_REQUANT_SINGLE_ROUNDING) {
        QMX__K_FC_LOOP(qmx_requantize_single_rounding(a, mu[pi], sh[pi]))
    } else {
        QMX__K_FC_LOOP(qmx_requantize_float(a, sc[pi]))
    }
#undef QMX__K_FC_LOOP
}

QMX_API qmx_status qmx_fully_connected_i8(size_t M, size_t N, size_t K, const int8_t *A,
                                          size_t lda, int32_t a_zp, const int8_t *W, size_t ldw,
                                          const qmx_requant_config *rq, void *out, size_t ldo,
                                          void *workspace, size_t workspace_bytes) {
    qmx__k_fc_ctx x;
    qmx_dtype od;
    int32_t lo, hi;
    size_t need, np, ch, ext;
    qmx_status st;
    if (!A || !out || !rq || !workspace) return QMX_ERR_NULL;
    if (a_zp < -128 || a_zp > 127) return QMX_ERR_ARG;
    if (M == 0) return QMX_ERR_SIZE;
    st = qmx__k_check_b(W, N, K, ldw, QMX_B_NK);
    if (st != QMX_OK) return st;
    if (lda < K || ldo < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    /* the output stage, as qmx_requantize_array checks it */
    od = rq->out_dtype == QMX_DTYPE_INVALID ? QMX_INT8 : rq->out_dtype;
    if (od != QMX_INT8 && od != QMX_INT16) return QMX_ERR_DTYPE;
    if ((unsigned)rq->mode > (unsigned)QMX_REQUANT_FLOAT) return QMX_ERR_ARG;
    ext = qmx__k_extent(M, N, ldo);
    if (!ext || ext > SIZE_MAX / 2) return QMX_ERR_OVERFLOW;
    lo = od == QMX_INT8 ? -128 : -32768;
    hi = od == QMX_INT8 ? 127 : 32767;
    x.amin = rq->act_min; x.amax = rq->act_max;
    if (x.amin == 0 && x.amax == 0) { x.amin = lo; x.amax = hi; }
    if (x.amin < lo || x.amax > hi || x.amin > x.amax) return QMX_ERR_ARG;
    if (rq->output_zero_point < lo || rq->output_zero_point > hi) return QMX_ERR_ARG;
    np = rq->per_channel ? N : 1;
    if (rq->mode == QMX_REQUANT_FLOAT) {
        if (!rq->scales) return QMX_ERR_NULL;
        for (ch = 0; ch < np; ch++)
            if (!qmx__k_scale_ok(rq->scales[ch])) return QMX_ERR_ARG;
    } else {
        if (!rq->multipliers || !rq->shifts) return QMX_ERR_NULL;
        for (ch = 0; ch < np; ch++)
            if (qmx_requantize_check(rq->mode, rq->multipliers[ch], rq->shifts[ch]) != QMX_OK)
                return QMX_ERR_ARG;
    }
    st = qmx__k_stage_ws(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.rq = rq; x.out = out; x.ldo = ldo; x.ozp = rq->output_zero_point; x.i16 = od == QMX_INT16;
    qmx__k_tiled(M, N, K, A, lda, W, ldw, a_zp, K, workspace, qmx__k_fc_stage, &x);
    return QMX_OK;
}

/* ---- dequant-on-output ---- */
typedef struct qmx__k_f32_ctx {
    const qmx_matmul_i8_f32_scales *s;
    float *C;
    size_t ldc, nblk;
} qmx__k_f32_ctx;

/* The documented float order, each step a separately rounded float operation. FMA contraction
 * is switched off here (GCC contracts across statements under -ffp-contract=fast; clang 14's
 * -ffp-contract=fast ignores "#pragma clang fp contract(off)", hence the empty asm). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void qmx__k_f32_stage(void *vctx, size_t m0, size_t mb, size_t n0, size_t nb,
                             size_t blk, const int32_t *tile) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const qmx__k_f32_ctx *x = (const qmx__k_f32_ctx *)vctx;
    const qmx_matmul_i8_f32_scales *s = x->s;
    size_t i, j;
    for (i = 0; i < mb; i++) {
        const int32_t *t = tile + i * nb;
        float *c = x->C + (m0 + i) * x->ldc + n0;
        float sa = s->a_scales[(s->a_per_row ? (m0 + i) * x->nblk : 0) + blk];
        for (j = 0; j < nb; j++) {
            float sb = s->b_scales[(s->b_per_col ? (n0 + j) * x->nblk : 0) + blk];
            float p = (float)t[j];
            float sum;
            p = p * sa;
            p = p * sb;
#if defined(__clang__)
            /* clang's -ffp-contract=fast ignores the pragma: make p opaque to the add */
            __asm__("" : "+m"(p));
#endif
            sum = blk == 0 ? 0.0f : c[j];
            sum = sum + p;
            c[j] = sum;
        }
    }
}

QMX_API qmx_status qmx_matmul_i8_f32(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, float *C, size_t ldc,
                                     const qmx_matmul_i8_f32_scales *s, void *workspace,
                                     size_t workspace_bytes) {
    qmx__k_f32_ctx x;
    size_t need, nblk, na, nb, i, ext;
    qmx_status st;
    if (!A || !C || !s || !workspace) return QMX_ERR_NULL;
    if (!s->a_scales || !s->b_scales) return QMX_ERR_NULL;
    if (s->a_zp < -128 || s->a_zp > 127) return QMX_ERR_ARG;
    if (M == 0 || s->block_size == 0) return QMX_ERR_SIZE;
    st = qmx__k_check_b(B, N, K, ldb, QMX_B_NK);
    if (st != QMX_OK) return st;
    if (lda < K || ldc < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldc);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    nblk = K / s->block_size + (K % s->block_size != 0);
    /* nblk <= K <= QMX_MATMUL_I8_MAX_K: the products cannot overflow unless M or N is huge */
    na = s->a_per_row ? M : 1;
    nb = s->b_per_col ? N : 1;
    if (na > SIZE_MAX / nblk || nb > SIZE_MAX / nblk) return QMX_ERR_OVERFLOW;
    if (s->a_scales_len < na * nblk || s->b_scales_len < nb * nblk)
        return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < na * nblk; i++)
        if (!qmx__k_scale_ok(s->a_scales[i])) return QMX_ERR_ARG;
    for (i = 0; i < nb * nblk; i++)
        if (!qmx__k_scale_ok(s->b_scales[i])) return QMX_ERR_ARG;
    st = qmx__k_stage_ws(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.s = s; x.C = C; x.ldc = ldc; x.nblk = nblk;
    qmx__k_tiled(M, N, K, A, lda, B, ldb, s->a_zp, s->block_size, workspace, qmx__k_f32_stage,
                 &x);
    return QMX_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION (kernels) */
