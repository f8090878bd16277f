/* qmx_kernels.h - quantized compute kernels on top of qmx.h (part of qmx).
 *
 * The compute layer of qmx: integer and low-bit matrix products with fused output stages,
 * einsum planned onto them, and a quantized KV cache with attention decode. All of it works
 * on caller memory: a kernel that needs scratch takes a workspace whose size comes from its
 * *_workspace_size() query (a pure function of the shapes, the same on every target), and
 * nothing allocates, keeps state, or needs libc or libm. Every entry point returns a
 * qmx_status and checks its arguments before it writes anything.
 *
 * CONTENTS (this comment in this order; then the declarations, then the implementation)
 *   BUILD                         configuration macros, which SIMD path is chosen
 *   INT8 x INT8 -> INT32          qmx_matmul_i8: zero points, overflow bound, weight sums,
 *                                 workspace, algorithm and SIMD paths, errors
 *   FULLY-CONNECTED               qmx_fully_connected_i8: int8/int16 out, TFLite requantization
 *   DEQUANT-ON-OUTPUT             qmx_matmul_i8_f32: per-tensor/channel/block float scales
 *   PACKED WEIGHTS                qmx_matmul_i8_pack_weights + *_packed variants (fast path)
 *   DYNAMIC                       qmx_matmul_f32_dyn_i8: float rows quantized on the fly
 *   USING SEVERAL CORES           qmx_*_run range calls, qmx_executor; private prefix qmx__par_
 *   16x8                          qmx_fully_connected_i16 (+ _packed), qmx_batch_matmul_i16:
 *                                 int16 activations, TFLite 16x8; private prefix qmx__s16_
 *   LOW-BIT MATMUL                qmx_matmul_i4*, qmx_fully_connected_i4, qmx_matmul_fp8_f32
 *   EINSUM                        qmx_einsum: spec grammar, planning, quantized operands,
 *                                 block-weight blobs (the PREPACKED BLOCK WEIGHTS kernels)
 *   KV CACHE AND ATTENTION        qmx_kv_*: storage, append, attention decode, prefill
 *   BLOCK-SCALED WEIGHTS          qmx_matmul_blockw_f32 (f32 x MX / NVFP4 / qconfig weights),
 *                                 qmx_matmul_mxfp8_f32 (MXFP8 x MXFP8), qmx_matmul_blockw_dyn_i8
 *                                 (int8 activations quantized on the fly x the same weights);
 *                                 private prefixes qmx__bw_, qmx__bwd_
 *   PREPACKED BLOCK WEIGHTS       qmx_blockw_pack* (Q8_0 / Q4_0 / Q4_1-class, MXFP4 / NVFP4 /
 *                                 MXFP8 blob) and its dynamic
 *                                 int8 matmul; private prefix qmx__bp_
 *   Tests: tests/test_matmul_{i8,out,packed,lowbit,mx}.c, test_fc_wzp.c, test_einsum.c,
 *   test_kvcache.c, test_simd_equiv.c. Benchmarks: bench/bench_{matmul,lowbit,einsum,kv}.c (make bench).
 *
 * QUICK START: the TFLite / CMSIS-NN int8 fully-connected layer, y = requant(x . W^T + bias)
 *     #define QMX_IMPLEMENTATION          // in exactly one .c file
 *     #include "qmx_kernels.h"            // includes qmx.h
 *     // per output channel n: real multiplier = s_x * s_w[n] / s_y (TFLite's recipe)
 *     for (n = 0; n < N; n++) qmx_quantize_multiplier(s_x * s_w[n] / s_y, &mult[n], &shift[n]);
 *     qmx_requant_config rq = {0};        // double rounding, int8 out, the full int8 range
 *     rq.per_channel = 1; rq.multipliers = mult; rq.shifts = shift; rq.bias = bias;
 *     rq.output_zero_point = y_zp;
 *     size_t need;
 *     qmx_fully_connected_i8_workspace_size(M, N, K, &need);   // <= sizeof arena? else stop
 *     qmx_status st = qmx_fully_connected_i8(M, N, K, x, K, x_zp, W, K, &rq, y, N,
 *                                            arena, sizeof arena);
 *     if (st != QMX_OK) report(qmx_status_str(st));          // y untouched on error
 *   For speed, pack W once (qmx_matmul_i8_pack_weights) and call qmx_fully_connected_i8_packed.
 *
 * ============================================================================================
 * BUILD
 *   As qmx.h: one translation unit defines QMX_IMPLEMENTATION before including this header;
 *   that gives the implementation of qmx.h and of qmx_kernels.h. Including qmx.h first and
 *   qmx_kernels.h afterwards in the same translation unit works as well. Same configuration
 *   macros as qmx.h (QMX_NO_SIMD, QMX_NO_AVX2, QMX_NO_AVX512, QMX_NO_NEON, QMX_NO_RVV,
 *   QMX_STATIC), plus QMX_NO_DOTPROD (aarch64: use the plain NEON path even when dotprod is
 *   targeted).
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
 *       64 + r64(4*M) + r64(4*N) + r64(max(2 * min(M, 64) * Kp, min(M, 256) * Kp))
 *          + r64(max(4*K, 32 * Kp)),      Kp = K rounded up to 4,
 *   r64(x) = x rounded up to 64 (row terms, weight sums, a panel of A laid out for the
 *   kernel: A + 128 for VNNI, int16 pairs of A - a_zp for the Cortex-M DSP, 2 bytes per
 *   element reserved on every target so that the size is the same everywhere; and a 4 x K
 *   tile of B copied out of the [K,N] layout or a packed 32-column strip of B, see PACKED
 *   WEIGHTS). The workspace may have any alignment. Too small:
 *   QMX_ERR_BUFFER_TOO_SMALL.
 *   Stack: qmx_matmul_i8 uses under 256 bytes of locals (a 4x4 int32 tile plus pointers), and
 *   about 1.5 KiB in the AVX-512 VNNI M >= 12 path (the B-strip transpose registers).
 *
 * ALGORITHM AND SIMD PATHS (chosen at compile time, as qmx.h)
 *   NK layout: cache-blocked dot products: panels of 64 rows of A (L2); for each tile of 4
 *   rows of B (L1), every row tile of the panel, so B is read from memory once per panel;
 *   register tiles of 4x4 (VNNI, NEON) or 2x4 (AVX2, portable C) outputs over the whole K,
 *   1x4 tiles for leftover rows of A (M = 1 is a GEMV over the rows of B).
 *     AVX-512 VNNI (__AVX512F__, __AVX512BW__, __AVX512VNNI__; not with QMX_NO_AVX512):
 *       vpdpbusd on (A+128) u8 x B s8, masked loads for the K tail; the exact fix-up
 *       C = dot - (a_zp + 128)*colsum(B) - b_zp*rowsum(A) + K*a_zp*b_zp. With NK weights
 *       and M >= 12, the packed-format kernels instead (see PACKED WEIGHTS).
 *     AVX2 (__AVX2__; not with QMX_NO_AVX2): sign-extend to int16, vpmaddwd (no vpmaddubsw:
 *       its int16 saturation would not be exact).
 *     NEON aarch64: vdotq_s32 with __ARM_FEATURE_DOTPROD, else vmull_s8 + vpadalq_s16.
 *     Cortex-M55/M85 MVE (not with QMX_NO_MVE): vmladavaq_s8, 1x4 and 2x4 (two 2x2 passes);
 *       the weight sums for a_zp != 0 come out of the first row's pass (vaddvaq_s8).
 *     Cortex-M4/M7/M33 DSP (not with QMX_NO_DSP; QMX_NO_DSP_ASM: C intrinsics instead of
 *       the assembly loops): each panel of A is laid out in the workspace as int16 pairs of
 *       A - a_zp, so SMLAD meets SXTB16 of the weights directly and the zero point costs
 *       nothing (no weight sums); 1x4 and 2x4.
 *       make bench-cortex-m, 1024 -> 1024 fully-connected, any input zero point,
 *       instructions per MAC batch 1 / batch 4: Cortex-M4 1.56 / 1.21 (CMSIS-NN s8 1.92);
 *       Cortex-M55 0.30 / 0.26 with zero point 0, 0.42 / 0.30 otherwise (CMSIS-NN 0.48).
 *     RISC-V Vector 1.0 (qmx.h's QMX__RVV: __riscv_vector, clang >= 16; not with QMX_NO_RVV),
 *       vector-length agnostic: vsetvl strips along K, vwmul (int8 -> int16 products) and
 *       tail-undisturbed vwadd.wv into int32 lanes, one reduction per output; 1x4 with e8m1
 *       strips, 2x4 with e8mf2 (8 accumulators of 2 registers). Column sums: vwredsum.
 *       make bench-riscv, 1024 -> 1024, input zero point -3, insns/MAC batch 1 / 4 (QEMU):
 *       VLEN 128 1.10 / 0.92, 256 0.59 / 0.48, 512 0.33 / 0.26 (portable C 9.38 / 5.10).
 *     Otherwise (armhf, Cortex-M3, s390x, ppc, i386, riscv64 without V, QMX_NO_SIMD):
 *       portable C.
 *   KN layout: AVX-512 VNNI with M >= 12 packs the 32-column strips from [K,N] with vector
 *   unpacks (against NK on this machine: 0.97x at 1024^3, 0.6x at M = 128 and 0.3x at M = 16,
 *   N = K = 4096, where reading 16 bytes from each of K rows costs more than the product);
 *   below 12 rows it streams B in memory order, 4 rows at a time interleaved in registers,
 *   the sums of column slabs as wide as the workspace holds kept there (M = 1: 0.6x NK).
 *   Elsewhere each tile of 4 columns of B is first copied into a 4 x K row tile in the
 *   workspace (once per panel of A), a scalar copy, much slower than NK for small M (GEMV).
 *   Store weights as [N,K], or pack them (either layout), for speed.
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
 *   acc[m][n] = sum_k (A[m][k] - a_zp) * (W[n*ldw + k] - w_zp)   (exact int32)
 *   A [M,K] int8 (lda >= K), a_zp in [-128, 127]; W [N,K] int8 weights with the per-tensor
 *   zero point w_zp = rq->weight_zero_point in [-128, 127] (0, the zero-initialised default:
 *   symmetric, as TFLite int8 per-channel weights); out [M,N] of rq->out_dtype (QMX_INT8, the
 *   default when 0, or QMX_INT16), row m at element m*ldo (ldo >= N; padding not written).
 *   Weight zero point: TFLite's reference_integer_ops::FullyConnected (per tensor) accumulates
 *   (filter + filter_offset) * (input + input_offset) with filter_offset = -w_zp in int32;
 *   acc above is that int32 exactly, for every w_zp and a_zp: |acc| <= K * 255^2 <= INT32_MAX
 *   for K <= QMX_MATMUL_I8_MAX_K = 33025 (the bound of every int8 kernel, so unchanged; larger
 *   K: QMX_ERR_OVERFLOW). TFLite's FullyConnectedPerChannel has no filter offset (per-channel
 *   weights are symmetric there): qmx applies w_zp with per-channel rq as well, so pass 0 to
 *   match it. How: the kernels' tiles hold sum_k (A - a_zp) * W (unchanged, every SIMD path)
 *   and the correction w_zp * (K*a_zp - rowsum(A)[m]) is added per row in uint32 (exact,
 *   since the true acc fits int32) before the output stage sees the tile: in
 *   qmx_fully_connected_i8 the shared stage adds it to each row of the tile (AVX-512 VNNI,
 *   AVX2, NEON, MVE, DSP and portable tiles alike), the row sums recomputed per tile of 256
 *   columns (O(M*K*ceil(N/256)) adds plus one vector pass over the tile: +1.5% time at
 *   M = 128, N = K = 1024 with AVX-512 VNNI, measured 2026-11-27 on the shared Zen 4, AMD
 *   family 25 model 17, not a bench row); qmx_fully_connected_i8_packed passes it as the
 *   packed kernels' row terms (once per panel of 64 rows, no extra pass). w_zp = 0 costs
 *   nothing. tests/test_fc_wzp.c checks the three fully-connected kernels bit for bit
 *   against TFLite's formulas (tests/gen/gen_fc8_wzp.py, tests/data/fc8_wzp_golden.txt).
 *   The output stage is rq (qmx_requant_config, qmx.h section 7) with exactly the semantics of
 *   qmx_requantize_array: bias (optional, [N], wrapping int32 add), per-tensor or per-channel
 *   (multiplier, shift) for double / single rounding or float scales, output zero point,
 *   act_min/act_max (both 0: the dtype's range). The result is bit-identical to qmx_matmul_i8
 *   (opts a_zp, b_zp = w_zp) followed by qmx_requantize_array, which does not read
 *   weight_zero_point (tests/test_matmul_out.c and test_fc_wzp.c check both that and
 *   the scalar qmx_requantize* + clamp on int64 dot products), on every path and target.
 *   Output zero point: any int32 (as TFLite and CMSIS-NN, which add it to the requantized int32
 *   unchecked: e.g. 128 with int8 out, then clamped); out = clamp(v + output_zero_point,
 *   act_min, act_max) computed exactly (never an int32 overflow; TFLite's own int32 addition
 *   agrees wherever it does not overflow). qmx_requantize_array still takes only zero points
 *   inside the out dtype, so the equality above is for those; the same holds for
 *   qmx_fully_connected_i8_packed and qmx_fully_connected_i4 (tests/test_matmul_out.c
 *   fc_zero_points: every SIMD stage, constant-output clamps, INT32_MIN / INT32_MAX).
 *   How: the int32 accumulators of a tile of at most 64 rows x QMX_MATMUL_TILE_N (256) columns
 *   are computed by the qmx_matmul_i8 kernels into the workspace, and the output stage is
 *   applied to that tile at once, while it is in cache; no [M,N] int32 buffer exists. With
 *   AVX-512 VNNI and M >= 16 (and K-blocks of a multiple of 4 for qmx_matmul_i8_f32) the tiles
 *   come from the packed path's 8 x 32 register tiles, each 32-column strip of B packed in
 *   1024-byte chunks of K into the workspace: about 2.3x the 4 x 4 dot tiles at M = 128.
 *   With AVX-512 the requantization runs 16 lanes at a time (the same integer steps as the
 *   scalar qmx_requantize*): the packed fully-connected at M = 128 went from 0.45x to 0.9x
 *   the raw int32 matmul. AVX2 runs it 8 lanes at a time, AArch64 NEON too (vqrdmulhq_s32
 *   and the rounding shifts of gemmlowp's NEON path); the dequant-on-output stage 8 / 4 at a
 *   time (NEON checked bit for bit under QEMU; its speed is not measured on ARM hardware).
 *   RVV runs the requantization in vsetvl strips (qmx.h's qmx__rvv_requant_row, shared with
 *   qmx_requantize_array): gemmlowp's roundings in 64-bit widened integers, not vsmul/vssra,
 *   whose vxrm rounding differs (checked on +-ties in tests/test_requant.c).
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
 *       64 + 1024 + r64(4*nb) + r64(2*mb*Kp) + r64(4*mb*nb),  mb = min(M, 64),
 *       nb = min(N, QMX_MATMUL_TILE_N), Kp = K rounded up to 4
 *   (alignment, 256 int32 zeros, the column sums of a tile of B, the panel of A laid out as
 *   for qmx_matmul_i8, the int32 tile). Any alignment. Errors of the query: NULL bytes, a zero dimension (SIZE), size_t
 *   overflow (OVERFLOW). Stack: the kernel's (under 256 bytes) plus a context of a few words;
 *   with AVX-512 the dequant-on-output stage adds 1 KiB (one block's column scales of a tile).
 *
 * ERRORS OF THE OUTPUT STAGES (checked before anything is written; on error out/C and the
 * workspace are untouched)
 *   QMX_ERR_NULL              A, W/B, out/C, rq/scales, workspace NULL; rq->multipliers or
 *                             rq->shifts NULL (fixed-point modes), rq->scales NULL (float
 *                             mode); scales->a_scales or b_scales NULL
 *   QMX_ERR_ARG               a_zp or rq->weight_zero_point (fully-connected) outside
 *                             [-128, 127]; rq->mode unknown; a (multiplier, shift)
 *                             that qmx_requantize_check rejects (shift outside [-31, 30], single
 *                             rounding with a negative multiplier), checked for every channel
 *                             used; a float requant scale or an a/b scale that is 0, negative,
 *                             -0, NaN or Inf; act_min > act_max, or either outside the out
 *                             dtype (output_zero_point: any int32, see FULLY-CONNECTED)
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
 * PACKED WEIGHTS (qmx_matmul_i8_pack_weights, qmx_matmul_i8_packed)
 *   Weights are packed once into a caller buffer (the blob), in a format that is the same
 *   bytes on every target (built anywhere, used anywhere: no alignment, endianness or SIMD
 *   dependence), and carries the weight sums so that the zero-point fix-up costs nothing:
 *     qmx_matmul_i8_pack_weights_size(N, K, &bytes):  64 + 4*Np + Np*Kp   (Np = N rounded up
 *       to 16, Kp = K rounded up to 4)
 *     qmx_matmul_i8_pack_weights(B, N, K, ldb, layout, blob, bytes)   (B either layout)
 *   Layout, byte by byte (multi-byte integers little-endian):
 *     [0, 8)    magic "QMXI8PK1"
 *     [8, 12)   N (uint32)        [12, 16)  K (uint32)        [16, 64)  zero
 *     [64, 64 + 4*Np)             sums[n] = sum_k B(n,k) (int32), 0 for n >= N
 *     then Np/16 panels of 16 output channels, panel p at 64 + 4*Np + p*16*Kp: Kp/4 groups
 *     of 64 bytes, group g at + 64*g, and within it byte 4*j + t = B(16p + j, 4g + t)
 *     (j < 16 channels, t < 4 consecutive k), 0 where 16p + j >= N or 4g + t >= K.
 *   One group is one AVX-512 register (16 int32 lanes, 4 bytes each: vpdpbusd's operand),
 *   four NEON registers (vdotq_s32), or 16 int32 dot-4 steps of the portable loop.
 *   qmx_matmul_i8_packed(M, N, K, A, lda, blob, bytes, C, ldc, opts, ws, ws_bytes) gives the
 *   same int32 C as qmx_matmul_i8 (opts a_zp, b_zp; b_layout, b_sums are not used). N and K
 *   must be the blob's (else QMX_ERR_SHAPE; a wrong magic is QMX_ERR_PARSE; bytes below the
 *   size, QMX_ERR_BUFFER_TOO_SMALL). Workspace: qmx_matmul_i8_packed_workspace_size(M, N, K):
 *       64 + r64(4*M) + r64(4*Np) + r64(min(M, 256) * Kp)
 *   (row terms, a_zp*colsum per column, the panel of A + 128). Stack: under 2 KiB along the
 *   deepest call chain (AVX-512 build, GCC 12 -fstack-usage; about 1 KiB elsewhere).
 *   AVX-512 VNNI: A is packed per panel of 256 rows as A + 128 (u8) in blocks of 8 rows x 4
 *   bytes per group (an 8 x 16 dword transpose per 64 bytes); register tile 8 rows x 32
 *   columns (16 zmm accumulators; A broadcast as one dword, two panel registers, 16 vpdpbusd
 *   per group, no spills with GCC 12); loop order panel of A > 32-column strip of B (over all
 *   of K, from L2) > 8-row block; the store adds rt[m] - (a_zp + 128)*sums[n]. M = 1 is a
 *   GEMV over 4 panels at a time (4 weight streams, 8 accumulator chains). NEON dotprod:
 *   4 rows x 16 columns (vdotq_s32 of one panel group with 4 bytes of a row duplicated);
 *   AVX2: 2 rows x 16 columns (int16 vpmaddwd, the pair sums of each column added at the
 *   end); RVV (VLEN >= 128): 4 rows x 16 columns, vl = 16 whatever the VLEN (a 4-field segment
 *   load splits a group into its 4 k, then vwmacc.vx per row and k); portable C: 1 row x 16
 *   columns. Every path gives the same int32 bits.
 *   qmx_fully_connected_i8_packed(M, N, K, A, lda, a_zp, blob, bytes, rq, out, ldo, ws, wsb):
 *   qmx_fully_connected_i8 (same rq semantics, errors and output bits) on a blob packed from
 *   its W [N,K]; int32 tiles of <= 64 rows x 256 columns from the packed kernels, each
 *   requantized while in cache. Workspace qmx_fully_connected_i8_packed_workspace_size:
 *       64 + 256 + r64(4*Np) + r64(mb * Kp) + r64(4*mb*nb)
 *   (zero row terms, a_zp*sums, panel of A, int32 tile), mb = min(M, 64), nb = min(N, 256).
 *   qmx_matmul_i8_f32_packed(M, N, K, A, lda, blob, bytes, C, ldc, scales, ws, wsb):
 *   qmx_matmul_i8_f32 (DEQUANT-ON-OUTPUT: the same float bits, order, scales and errors) on a
 *   blob packed from its B [N,K], with the same workspace size as the packed fully-connected.
 *   The K-blocks must start on a group of 4: block_size a multiple of 4, or >= K (one
 *   block); other block sizes return QMX_ERR_UNSUPPORTED. Each block's exact partial sum uses
 *   that block's column sums, taken from the blob's panels per tile (one vpdpbusd per 16
 *   columns x 4 k on AVX-512 VNNI).
 *   The same kernels also serve qmx_matmul_i8 on plain [N,K] weights with AVX-512 VNNI when
 *   M >= 12: each 32-column strip of B is transposed into a blob-format strip in the
 *   workspace (per K block and panel of A; the weight sums come out of the same pass).
 *
 * DYNAMIC (qmx_matmul_f32_dyn_i8; ggml Q8 / XNNPACK qd8 style)
 *   Y[m][n] = ((float)acc[m][n] * sx[m]) * sw[n]    (two separately rounded float products;
 *   no sum, so no FMA contraction or evaluation-method issue: the same bits on every path;
 *   RVV: vsetvl strips of vfcvt.f.x (rounds by frm, as the C conversion does) and two vfmul)
 *   acc[m][n] = sum_k q[m][k] * W(n,k) exactly (int32), W the packed symmetric int8 weights;
 *   q[m] is row m of X quantized with qmx.h (qmx_compute_qparams + qmx_quantize, TFLite
 *   recipe, nearest-even): sx[m] = absmax(row) / 127 (1 for an all-zero row),
 *   q = clamp(RNE(x / sx), -127, 127). sw = w_scales[n] (w_scales_len >= N) or w_scales[0]
 *   (w_scales_len == 1). Workspace qmx_matmul_f32_dyn_i8_workspace_size(M, N, K):
 *       64 + r64(4*M) + r64(mb*K) + r64(4*mb*N) + packed_workspace(mb, N, K),  mb = min(M, 64)
 *   (row scales, quantized rows, int32 tile, the packed matmul's workspace). Errors as
 *   qmx_matmul_i8_packed, plus: a NaN/Inf in X -> QMX_ERR_NONFINITE; a row whose absmax / 127
 *   underflows to 0 (absmax < ~1.8e-43) or a weight scale that is not finite and > 0 ->
 *   QMX_ERR_ARG; 1 < w_scales_len < N -> QMX_ERR_BUFFER_TOO_SMALL. All checked before Y is
 *   written (X is read twice: scales first, then the quantization per block of 64 rows).
 *
 * USING SEVERAL CORES (range calls and a caller-supplied executor; private prefix qmx__par_)
 *   qmx creates no thread. The int8 entry points split into TASKS that partition the OUTPUT,
 *   never a reduction: task t of an M x N output is the tile of at most QMX_TASK_M (64) rows x
 *   QMX_TASK_N (256) columns at rows 64 * (t / nc), columns 256 * (t % nc), nc = ceil(N / 256);
 *   qmx_matmul_tasks(M, N, &n) gives their number. Each output element is computed by the same
 *   code in the same order whatever tile holds it (the integer sums are exact; the float
 *   stages are per element, over K in the documented order), so the result is bit-identical
 *   for any number of workers and any order or interleaving of the tasks, on every target.
 *   Covered: qmx_matmul_i8, qmx_matmul_i8_packed, qmx_fully_connected_i8 (+ _packed),
 *   qmx_matmul_i8_f32 (+ _packed), qmx_matmul_f32_dyn_i8 (a task of rows quantizes its own
 *   rows; a row's scale depends on that row only), qmx_matmul_i4, qmx_matmul_i4_f32,
 *   qmx_fully_connected_i4 (int4 rows start on a byte: 64 m and 256 n are even),
 *   qmx_matmul_fp8_f32; the block-weight blobs (PREPACKED BLOCK WEIGHTS, SEVERAL CORES):
 *   qmx_matmul_blockw_packed_dyn_i8 (a task of rows quantizes its own rows: a row's scales
 *   depend on that row only) and qmx_matmul_blockw_packed_f32, _run and _exec (a tile's 256
 *   columns are 16 whole blob panels), and the unpacked qmx_matmul_blockw_dyn_i8 (the same
 *   row rule) and qmx_matmul_blockw_f32 (BLOCK-SCALED WEIGHTS, any qmx_blockw: a tile decodes
 *   its own weight rows), _run and _exec; qmx_fully_connected_i16 (+ _packed; 16x8), _run and
 *   _exec; qmx_matmul_mxfp8_f32 (BLOCK-SCALED WEIGHTS: a tile's outputs from its rows of a and
 *   b; no workspace: _run(..., task_begin, task_end), _exec(..., executor));
 *   qmx_batch_matmul_i16 (16x8): TASKS (batch b, tile t) numbered b * qmx_matmul_tasks(M, N)
 *   + t, counted by qmx_batch_matmul_i16_tasks(batch, M, N, &n), _run and _exec; qmx_einsum
 *   (below).
 *   Element-wise calls: TASKS of QMX_TASK_ELEMS (65536) consecutive elements of the flat
 *   index, the last one ragged (a partition that depends on the element count only; whole
 *   bytes of every packed dtype). In qmx.h: qmx_quantize_run / qmx_dequantize_run (every
 *   granularity: per tensor, per channel and per block, any inner; qmx_quantize_tasks counts
 *   them; stochastic rounding is one task, its random stream running in flat order), plus
 *   qmx_quantize_exec / qmx_dequantize_exec taking an executor (qmx_qconfig has no executor
 *   field: callers fill it field by field); qmx_fp8_quantize_array_run /
 *   qmx_fp8_dequantize_array_run (qmx_array_tasks counts them), the fp4 / fp6 arrays'
 *   qmx_fp4_quantize_array_run / qmx_fp4_dequantize_array_run / qmx_fp6_quantize_array_run /
 *   qmx_fp6_dequantize_array_run (the same tasks; fp4's bytes [t * 32768, ...)), and their
 *   _exec forms; qmx_mx_quantize_run / qmx_mx_dequantize_run (+ _exec; qmx_mx_tasks counts
 *   them): TASKS of whole (outer, block) rows of scales, about QMX_TASK_ELEMS elements each,
 *   every block computed from its own elements by the serial code. Each
 *   element is converted on its own with its group's parameters by the serial call's code
 *   (a per-channel / per-block range sends its whole [len][inner] rows to qmx_quantize /
 *   qmx_dequantize and walks the partial rows at either end from their index), so any split
 *   gives the serial call's bits. No workspace (the serial call's stack per worker). A range
 *   call checks the parameters its own elements use (per tensor: all); the _exec calls check
 *   every parameter before any task. In qmx_calib.h: qmx_absmax_f32_run (a partial max over
 *   its tasks; partials merge by qmx_absmax_f32, exactly, since a max does not depend on the
 *   order), qmx_absmax_f32_exec and qmx_fp8_delayed_update_exec (at most 64 runs of
 *   consecutive tasks, a partial each on the stack, merged by qmx_absmax_f32), and
 *   qmx_observer_update_exec: per-channel / per-block observers, TASKS = runs of consecutive
 *   groups (at most 64 runs, a function of n_groups only), each group's statistics and record
 *   by the serial call's code over its own elements, so every method (the compensated sums of
 *   rms / absmean included) keeps the serial bits; a per-tensor observer (1 group) with a
 *   min / max statistic (absmax, minmax, moving minmax, mean of absmax, fixed) takes the
 *   batch's min / max in runs of QMX_TASK_ELEMS chunks as qmx_absmax_f32_exec (exact), then
 *   the serial record update; per-tensor absmean / rms: a task per piece of the batch sum
 *   (qmx_calib.h's OBSERVERS define the sum piece by piece), merged in piece order.
 *   qmx_histogram_update_exec: tasks of QMX_TASK_ELEMS count into the bins of the worker that
 *   runs them (workspace: workers x n_bins counts), added to the histogram afterwards: integer
 *   counts, the same histogram for any worker count (the batch max by qmx_absmax_f32_exec).
 *   qmx_torch_histogram_update_exec likewise: the batch min / max in runs of chunks, histc's
 *   per-element bins counted per worker in uint64 and written as the serial float counts
 *   (saturated at 2^24, as + 1.0f is); the range and the combine stay serial.
 *   qmx_einsum: qmx_einsum_opts.executor (NULL / zero-initialised: serial); a TASK per batch
 *   index of the plan (the output labels shared by both operands that are not contracted:
 *   "bnth,bnsh->bnts" has b*n tasks; an einsum with no batch label, "bsd,fd->bsf", is 1 task
 *   and runs serially). The operands are converted once on the calling thread into the shared
 *   workspace regions, then each task computes its batch's whole [M,N] block with the serial
 *   call's code (packs, scales, matmul, scatter) in its worker's copy of the per-batch
 *   regions: the same bits for any worker count and order. qmx_einsum_workspace_size(...,
 *   opts, ...) with the executor in opts gives the converted regions + workers x the
 *   per-batch regions (+ 64); with 1 batch or workers 0 / 1, the serial size. Errors: the
 *   plan's, then workers < 0 (QMX_ERR_ARG), parallel_for NULL with workers >= 2
 *   (QMX_ERR_NULL), more than INT_MAX batches (QMX_ERR_OVERFLOW) (workspace_size reports them
 *   too), then the data checks, all before any task. Range calls: qmx_einsum_tasks /
 *   qmx_einsum_run (batch indices [task_begin, task_end), each call with the serial workspace
 *   of its own, converting the operands again: the price of needing no other call).
 *   A blob operand (EINSUM, BLOCK-WEIGHT BLOB OPERANDS; no batch label, one [M,N] product):
 *   the TASKS are the blob kernel's, qmx_matmul_tasks(M, N) tiles of its [M,N] product (rows
 *   in the plan's M order); the executor runs its _exec, a range call its _run on the tasks'
 *   tiles and scatters those tiles only (when the output is not written in place): the serial
 *   bits for any worker count, order or ranges; errors all before the first task.
 *   The KV cache (QUANTIZED KV CACHE AND ATTENTION DECODE: ATTENTION DECODE, WORKSPACE,
 *   PREFILL): qmx_kv_attention, a TASK per KV head (its query group: the g query heads that
 *   share it), opts->executor (qmx_kv_attn_opts), qmx_kv_attention_tasks / _run /
 *   _task_workspace_size / _workspace_size_exec; qmx_kv_prefill, within each tiled query
 *   block a task per KV head (the appends on the calling thread), and the decode's tasks for
 *   the tokens outside the tiled blocks; qmx_kv_prefill_workspace_size_exec. Opt-in split over
 *   token tiles too (opts->token_split: tasks = KV heads x splits, partials combined in split
 *   order; qmx_kv_attention_split_tasks / _partials_size / _run / _combine /
 *   _workspace_size; see ATTENTION DECODE, TOKEN SPLIT).
 *   Two ways in:
 *   1. Range calls, plain C (also on Cortex-M): qmx_X_run(the arguments of qmx_X, task_begin,
 *      task_end, workspace, workspace_bytes) computes tasks [task_begin, task_end) with one
 *      worker's workspace: at least qmx_X_workspace_size(min(M, 64), min(N, 256), K) bytes
 *      (the "task workspace"); given more, consecutive tiles run as one call. Each call checks
 *      the whole call first (NULLs, shapes, overflow, K against the accumulator bound, scales,
 *      the blob; as qmx_X), then the range (task_begin > task_end or task_end > n: QMX_ERR_ARG)
 *      and the workspace (QMX_ERR_BUFFER_TOO_SMALL), and writes nothing on error. The one
 *      data checks, NaN / Inf in the float rows of qmx_matmul_f32_dyn_i8_run,
 *      qmx_matmul_blockw_packed_dyn_i8_run, qmx_matmul_blockw_dyn_i8_run and in the fp8 rows
 *      of qmx_matmul_fp8_f32_run,
 *      cover the rows of the call's own tasks (all checked before it writes); a row elsewhere
 *      is not read.
 *      Concurrent range calls must use disjoint ranges and their own workspaces.
 *   2. An executor (qmx_executor, qmx.h): a synchronous parallel_for(pool, n_tasks, fn, arg)
 *      of the caller's pool, its pool pointer and worker count, given in
 *      qmx_matmul_i8_opts.executor (qmx_matmul_i8, _packed), qmx_requant_config.executor
 *      (qmx_fully_connected_i8, _packed, _i4), qmx_einsum_opts.executor (qmx_einsum),
 *      qmx_kv_attn_opts.executor (qmx_kv_attention, qmx_kv_prefill: its own workspace rule,
 *      see the KV cache's WORKSPACE), or to qmx_matmul_f32_dyn_i8_exec,
 *      qmx_matmul_blockw_packed_dyn_i8_exec, qmx_matmul_blockw_packed_f32_exec,
 *      qmx_matmul_blockw_dyn_i8_exec, qmx_matmul_blockw_f32_exec, qmx_fully_connected_i16_exec
 *      (+ _packed_exec), qmx_batch_matmul_i16_exec, qmx_matmul_mxfp8_f32_exec (no workspace)
 *      and the element-wise _exec calls above (no workspace). NULL,
 *      or workers 0 / 1: the serial call, unchanged. With workers >= 2 the call checks
 *      everything first (every float row of the dynamic path included) and then calls
 *      parallel_for once with one task per tile (not at all when there is only 1 task; its
 *      index i is the tile (i % mt, i / mt) of mt row tiles, column tiles outer, so workers
 *      on neighbouring indices share a panel of B in cache), each
 *      task computed with the workspace slice of the worker that runs it: the workspace must
 *      hold qmx_par_workspace_size(ex, serial, task, &bytes) = workers x r64(task workspace)
 *      (slices of r64(task) bytes; any alignment). Errors before any task, output untouched:
 *      workers < 0 (QMX_ERR_ARG), parallel_for NULL with workers >= 2 (QMX_ERR_NULL), the
 *      workspace too small (QMX_ERR_BUFFER_TOO_SMALL), more than INT_MAX tasks
 *      (QMX_ERR_OVERFLOW), and every error of the serial call. parallel_for must run each task
 *      once with a worker index in [0, workers), one task at a time per worker; a call outside
 *      that contract is skipped (its tile is then not written). qmx_matmul_i8_f32 (+ _packed),
 *      qmx_matmul_i4, qmx_matmul_i4_f32 and qmx_matmul_fp8_f32 take the range calls only
 *      (run them from your own pool, as tests/test_parallel.c does): their option structs
 *      have no executor field (callers fill them field by field, so a new field would be
 *      read uninitialised).
 *   Examples: examples/parallel_pthreads.c (a pthreads pool), examples/parallel_openmp.c.
 *   tests/test_parallel.c: 1, 2, 3, 4, 8 workers on real threads in shuffled orders, bit for
 *   bit against the serial call (make test-tsan: the same under ThreadSanitizer).
 *
 * ============================================================================================
 * 16x8: INT16 ACTIVATIONS x INT8 WEIGHTS -> INT16 (TFLite 16x8, CMSIS-NN s16; private prefix
 *   qmx__s16_; tests/test_matmul_i16.c with golden data from tests/gen/gen_fc16.py)
 *   qmx_fully_connected_i16(M, N, K, A, lda, W, ldw, w_zp, rq, out, ldo, ws, wsb)
 *     acc[m][n] = sum_k A[m][k] * (W[n*ldw + k] - w_zp)          exact (int64)
 *     out[m][n] = clamp(MBQM64(acc[m][n] + bias[n], mult[c], shift[c]), act_min, act_max)
 *   A [M,K] int16, symmetric (zero point 0: TFLite 16x8 requires it), row m at m*lda (lda >=
 *   K); W [N,K] int8 (ldw >= K), w_zp in [-128, 127] (TFLite's filter offset is -w_zp; 16x8
 *   weights are symmetric, w_zp = 0); out [M,N] int16, row m at m*ldo (ldo >= N, padding not
 *   written), output zero point 0. rq is a qmx_requant64_config: int64 bias (optional, [N],
 *   |bias| <= 2^46), c = n when per_channel else 0, multipliers >= 0 and shifts in [-31, 7]
 *   (TFLite's ranges for int64 accumulators; qmx_quantize_multiplier gives them for real
 *   multipliers below 128), act_min/act_max in int16 (both 0: the int16 range).
 *   MBQM64 = qmx_requantize64 = TFLite's MultiplyByQuantizedMultiplier(int64 x, m, shift),
 *   the one TFLite's reference_integer_ops::FullyConnected / FullyConnectedPerChannel and
 *   reference_ops::BatchMatMul use for int16 inputs (TFLite's int64 overload in
 *   kernels/internal/common.h):
 *     rm = m < 0x7FFF0000 ? (m + 2^15) >> 16 : 0x7FFF      (the multiplier rounded to 15 bits)
 *     r  = (x * rm + 2^(14 - shift)) >> (15 - shift)       (int64; arithmetic shift: floor)
 *     result = r modulo 2^32 as int32 (TFLite's int64 -> int32 conversion on GCC / Clang; only
 *     reached when r is outside int32, which needs a real multiplier far above 1)
 *   so the rounding is one round-half-up of x * rm / 2^(15 - shift), NOT gemmlowp's double
 *   rounding of the int32 path, and the multiplier keeps 15 bits, not 31.
 *   K bounds: |A * (W - w_zp)| <= 2^15 * 255, so K <= QMX_FC_I16_MAX_K = 2^23 keeps |acc| <
 *   2^46 and, with |bias| <= 2^46, |acc + bias| < 2^47: TFLite's precondition of MBQM64, and
 *   x * rm < 2^62 (no int64 overflow anywhere). Accumulation: int32 over runs of 256 k (exact
 *   for any w_zp: 256 * 2^15 * 255 < 2^31; with w_zp = 0 exact up to 511), the runs added in
 *   int64; the sum is the exact integer TFLite's int64 loop computes.
 *   qmx_fully_connected_i16_packed(M, N, K, A, lda, blob, bytes, w_zp, rq, out, ldo, ws,
 *   wsb): the same on the int8 blob of qmx_matmul_i8_pack_weights (PACKED WEIGHTS: pack W
 *   once, serve both the int8 and the 16x8 kernels; its K limit QMX_MATMUL_I8_MAX_K holds;
 *   the blob's weight sums are not used). The same bits as the plain call.
 *   qmx_batch_matmul_i16(batch, M, N, K, X, ldx, xbs, adj_x, Y, ldy, ybs, adj_y, rq, out, ldo,
 *   obs, ws, wsb): TFLite's BatchMatMul for int16 (int16 x int16 -> int16, zero points 0,
 *   int64 accumulator; CMSIS-NN arm_batch_matmul_s16):
 *     out_b[i][j] = clamp(MBQM64(sum_k X_b(i,k) * Y_b(k,j) + bias[j], mult[c], shift[c]))
 *     X_b(i,k) = X[b*xbs + i*ldx + k] (ldx >= K), adj_x: X[b*xbs + k*ldx + i] (ldx >= M)
 *     Y_b(k,j) = Y[b*ybs + k*ldy + j] (ldy >= N), adj_y: Y[b*ybs + j*ldy + k] (ldy >= K)
 *     out_b[i][j] at out[b*obs + i*ldo + j] (ldo >= N; obs >= (M-1)*ldo + N when batch > 1)
 *   A batch stride of 0 repeats one matrix for every batch (TFLite's broadcasting of batch
 *   dimensions of size 1; flatten the batch dimensions into batch and strides). rq as above,
 *   c = j (TFLite is per tensor: per_channel 0, no bias, no activation). K <=
 *   QMX_BATCH_MATMUL_I16_MAX_K = 2^16: |X * Y| <= 2^30, |acc| <= 2^46; int64 accumulation.
 *   Several cores (USING SEVERAL CORES): qmx_fully_connected_i16_run / _packed_run (the
 *   arguments, task_begin, task_end, workspace, workspace_bytes; tasks of qmx_matmul_tasks(M,
 *   N), the workspace of a min(M, 64) x min(N, 256) call) and _exec / _packed_exec (...,
 *   executor, workspace, workspace_bytes; NULL or workers 0 / 1: the serial call): a tile
 *   runs the serial code on its rows and its 16-column strips (exact int64 sums, the stage per
 *   element with its column's multiplier, shift and bias), so out has the serial bits for any
 *   worker count and order; every argument error before any task, out untouched.
 *   qmx_batch_matmul_i16: TASKS (batch b, tile t) = b * qmx_matmul_tasks(M, N) + t, the tile t
 *   of 64 rows x 256 columns of out_b; qmx_batch_matmul_i16_tasks(batch, M, N, &n) counts them
 *   (batch x qmx_matmul_tasks). _run (the arguments, task_begin, task_end, workspace,
 *   workspace_bytes: qmx_batch_matmul_i16_workspace_size(min(M, 64), min(N, 256), K)) and
 *   _exec (..., executor, workspace, workspace_bytes; workers x r64(that) through
 *   qmx_par_workspace_size; NULL or workers 0 / 1: the serial call): a task runs the serial
 *   code on its batch's rows and columns (exact int64 sums, the stage per element), so out has
 *   the serial bits for any worker count and order; every argument error, then the range
 *   (QMX_ERR_ARG) and workspace (QMX_ERR_BUFFER_TOO_SMALL), before any task, out untouched.
 *   Workspace (both kernels; qmx_fully_connected_i16_workspace_size, qmx_batch_matmul_i16_
 *   workspace_size, the same pure function of the shapes):
 *       64 + r64(32 * min(K, 512)) + r64(128 * min(M, 256))  bytes, any alignment
 *   (16 weight rows, or columns of op(Y), widened to int16 W - w_zp per K block of 512; the
 *   int64 accumulators of a tile of 256 rows x 16 columns). Loop order: panel of 256 rows >
 *   strip of 16 output columns > K block. SIMD tile steps, the same bits as the portable C
 *   (exact integer sums: int32 runs of <= 256 products, added in int64, so any order gives the
 *   same acc): AVX-512BW (vpdpwssd with AVX-512 VNNI, else vpmaddwd; vectorized widening and
 *   output stage too) and AVX2 (vpmaddwd) on a strip stored as k pairs, NEON (vmlal_lane) on
 *   a k-major strip; batch matmul splits any int16 y into 256 * (y >> 8) + (y & 255) for
 *   them. Cortex-M4/M7/M33 DSP (SMLAD) and Cortex-M55 MVE (VMLADAVA): the fully-connected
 *   (plain and packed) is not widened, the int16 activations meet the int8 weights in place
 *   (SXTB16 / VLDRB.S16, gathers on the blob) in int32 runs of <= 512 products, whose only
 *   overflowing sum, 2^31, is recovered exactly; w_zp enters as - w_zp * sum a; batch matmul
 *   uses the widened strip with 64-bit SMLALD / VMLALDAVA. make bench-cortex-m, K -> 1024,
 *   per-channel stage included, insns/MAC at K = 512 / 1024, batch 1 and 4: Cortex-M4 1.62 /
 *   1.53 and 1.27 / 1.20 (CMSIS-NN s16, per tensor: 2.48 / 2.99), Cortex-M55 0.56 / 0.47
 *   and 0.47 / 0.40 (0.88 / 2.44). Other targets: portable C. The result is a pure function of the inputs. Stack: a few words; the x86 /
 *   aarch64 tile step adds a buffer of 8 (AVX-512) or 4 rows of 512 int16 (the rows of a
 *   last partial tile, or of adj_x): about 9 KiB in all with AVX-512, 5 KiB else.
 *   Activations: qmx_quantize with QMX_RECIPE_TFLITE, symmetric, QMX_INT16 is TFLite's 16x8
 *   activation quantization: scale absmax / 32767, zero point 0, x / s in float rounded half
 *   away from zero, clamped to the full [-32768, 32767] (TFLite's QUANTIZE op, AffineQuantize:
 *   a value beyond the calibrated minimum gives -32768); narrow_range = 1 clamps to
 *   [-32767, 32767] instead (tests/data/quant_int.txt, tflite_sym_int16_beyond_range*).
 *   Errors (checked before anything is written; out and the workspace untouched on error):
 *     QMX_ERR_NULL              A / X, W / blob / Y, out, rq, workspace, rq->multipliers or
 *                               rq->shifts NULL
 *     QMX_ERR_ARG               w_zp outside [-128, 127]; a multiplier < 0 or a shift outside
 *                               [-31, 7] (every channel used); a bias outside [-2^46, 2^46];
 *                               act_min > act_max or either outside int16
 *     QMX_ERR_SIZE              batch, M, N or K is 0
 *     QMX_ERR_OVERFLOW          K above the kernel's bound; size_t overflow of an extent
 *     QMX_ERR_SHAPE             a leading dimension too small (above), obs too small; a blob
 *                               packed for another (N, K)
 *     QMX_ERR_PARSE             not a blob (magic); QMX_ERR_BUFFER_TOO_SMALL: blob bytes or
 *                               workspace_bytes below the size
 *
 * ============================================================================================
 * LOW-BIT MATMUL: PACKED INT4 WEIGHTS (x INT8 / x INT4 ACTIVATIONS) AND FP8 x FP8
 *   (tests/test_matmul_lowbit.c, bench/bench_lowbit.c, make bench-cortex-m)
 *
 * INT4 WEIGHTS (ggml Q4_0 x Q8_0 class, CMSIS-NN s4 class)
 *   qmx_matmul_i4      C[m][n] = sum_k (A(m,k) - a_zp) * (W(n,k) - w_zp(n,b(k)))   exact int32
 *   qmx_matmul_i4_f32  C[m][n] = the same partials per K-block, dequantized in float (below)
 *   qmx_fully_connected_i4   the TFLite / CMSIS-NN s4 fully-connected with qmx's output stage
 *   Layouts (row-major; strides in ELEMENTS, also for packed int4):
 *     W  [N,K] packed int4 in qmx.h's layout (element e of the flat nibble stream is the LOW
 *        nibble of byte e/2 when e is even, the HIGH nibble when odd), W(n,k) = element n*ldw+k
 *        (ldw >= K). params.w_dtype: QMX_INT4 (default when 0): signed [-8, 7], zero point 0;
 *        QMX_UINT4: [0, 15] with zero point w_zp (per tensor) or w_zps[n*nblk + b] (per block
 *        and row; bytes holding values in [0, 15]).
 *     A  [M,K] params.a_dtype: QMX_INT8 (default when 0): int8, A(m,k) = A[m*lda + k]; or
 *        QMX_INT4: packed int4 like W, element m*lda + k (int4 x int4). Zero point a_zp per
 *        tensor: int8 [-128, 127], int4 [-8, 7].
 *     C  [M,N] int32 / float, row m at C + m*ldc (ldc >= N; the padding is not written).
 *   K is cut into nblk = ceil(K / bs) blocks, bs = params.block_size (0: K, one block; a
 *   shorter last block is the ragged tail). P_b[m][n] = sum over block b of
 *   (A - a_zp)(W - w_zp) (exact int32). qmx_matmul_i4 returns sum_b P_b (exact).
 *   qmx_matmul_i4_f32, with sa = a_scales[(a_per_row ? m*nblk : 0) + b] and
 *   sb = w_scales[(w_per_col ? n*nblk : 0) + b] (finite, > 0):
 *       sum = 0.0f;
 *       for b = 0, 1, ..., nblk-1 (increasing):
 *           p = (float)P_b[m][n];  p = p * sa;  p = p * sb;  sum = sum + p;
 *       C[m][n] = sum;
 *   exactly the order of qmx_matmul_i8_f32 (same FMA-contraction and x87 handling), so C is
 *   the same bits on every path and target. Accuracy: |C - sum_b P_b*sa*sb| <=
 *   (nblk + 4) * 2^-24 * sum_b |P_b*sa*sb| (+ underflow).
 *
 * OVERFLOW BOUND (QMX_MATMUL_I4_MAX_K = 561433)
 *   |A - a_zp| <= 255 and |W - w_zp| <= 15, so |C| <= 3825 K <= INT32_MAX for
 *   K <= floor((2^31 - 1) / 3825) = 561433; larger K: QMX_ERR_OVERFLOW. Inside, the kernels
 *   sum a * u with u = nibble ^ 8 (int4) or nibble (uint4) in [0, 15]: |sum| <= 1920 K
 *   < 1.08e9, row sums |sum a| <= 128 K, weight sums <= 15 K, and
 *   P = D - a_zp*Su - z*Sa + a_zp*z*K (z = 8 for int4, 8 + w_zp in qmx_fully_connected_i4,
 *   else the zero point) is formed in uint32 (wrap-around is defined) and is exact because
 *   the true value fits int32.
 *
 * FAST AND GENERIC MODES
 *   Fast (every block of every row starts on a byte: ldw even and (bs even or nblk == 1)):
 *   each panel of up to 16 rows of A is laid out once per call in the workspace, per block,
 *   as chunks of 128 elements = [64 bytes: elements 0,2,..,126][64 bytes: 1,3,..,127]
 *   (zero padded), so that byte j of a chunk of W lines up with byte j of both halves:
 *   low nibbles x even elements, high nibbles x odd elements, no shuffles. Register tiles of
 *   up to 4 rows of A x 4 rows of W over each block (W is read in place: no prepacking):
 *     AVX-512 VNNI: vpdpbusd (u as u8 x a as s8, no saturation), 4x4; masked tail; for
 *       M = 1 (GEMV, weights streaming from memory) 1x4 with a software prefetch of the
 *       weight rows two tiles ahead (the hardware prefetcher alone restarts at every tile). With
 *       blocks of 32 (qmx_matmul_i4_f32, ggml Q4_0 class) A is laid out once over all of K
 *       and one pass gives every block's dot: 128-bit lane L of an accumulator holds exactly
 *       elements 32L..32L+31 of a chunk. With a_zp = 0 (any weight zero points), 16 columns
 *       at a time: the block dots of 4 columns come out of one transpose-add, 4 of those are
 *       regrouped into [block][16 columns] rows in the workspace, the columns' scales (and
 *       per-block zero points) are transposed 16 x 16 in registers, and the float order runs
 *       16 columns a lane each (the next strip's weight and scale rows prefetched); blocks of
 *       32 r sum r such dots. Otherwise (a_zp != 0) 4x4 tiles, blocks of 32 only (two in-lane
 *       shuffles + vpcompressd).
 *     AVX2: vpmaddubsw (pairs 15*128*2 < 2^15: never saturates) + vpmaddwd, 2x4.
 *     NEON aarch64: vdotq_s32 (dotprod) or vmull_s8 + vpadalq_s16, 4x4.
 *     Cortex-M55 MVE: vmladavaq_s8, predicated last step, 1x4; weight sums for a_zp != 0
 *       with vaddvaq_u8.
 *     Cortex-M4/M7/M33 DSP: A is laid out instead as int16 (A - a_zp) pairs
 *       [a0|a4][a1|a5][a2|a6][a3|a7] per 8 elements so that one 32-bit word of W gives the
 *       four SMLAD operands with one AND each ((w >> 4i) & 0x000F000F), 1x4 as two 1x2
 *       passes (an assembly loop, 13 registers); the zero point of A is then inside the dot
 *       (no weight sums).
 *     RISC-V Vector 1.0 (not with QMX_NO_RVV): vsetvl strips inside each 64-byte chunk of W,
 *       vwmul of u (0..15) and A into int16, tail-undisturbed vwadd.wv into int32 lanes, 1x4;
 *       exact at any VLEN (make bench-riscv: 1.66 / 0.88 insns/MAC batch 1 / 4 at VLEN 128).
 *     Otherwise portable C, 2x4.
 *   Every block is padded to whole chunks of 128 in the layout of A: blocks shorter than 128
 *   waste lanes (128/bs x the work) except blocks of 32 on AVX-512: prefer bs >= 128 or 32.
 *   Generic (odd ldw, or odd bs with several blocks): a portable loop that reads every nibble
 *   by index (slow; same integer results).
 *   Measured (make bench-cortex-m, instructions per MAC, 1024 -> 1024, zero point of A 0 / -3):
 *   qmx_fully_connected_i4 Cortex-M4 1.81 / 1.81 (CMSIS-NN s4: 4.92), Cortex-M55 0.54 / 0.87
 *   (CMSIS-NN: 0.39); batch 4 per MAC 1.77 (M4), 0.49 / 0.58 (M55).
 *   Configuration: QMX_NO_DSP, QMX_NO_MVE (portable C instead), QMX_NO_DSP_ASM (the DSP
 *   loops in C intrinsics instead of assembly; -O0 builds do that anyway; it also drops the
 *   16x8 kernels' MVE 2 x 3 assembly loop).
 *
 * WORKSPACE: qmx_matmul_i4_workspace_size(M, N, K, params, &bytes) (the same for the three
 *   int4 entry points; a pure function of M, N, K and block_size, the same on every target):
 *       64 + mb * R + r64(4 * mb * nblk) + r64(64 * r4(nd)),   mb = min(M, 16),
 *       R = (nblk - 1) * 2*r128(bs) + 2*r128(last block length),
 *       nd = ceil(K / 32) when bs is a multiple of 32 and nblk > 1, else nblk
 *   (r128 / r4 round up to 128 / 4; 2 bytes per element covers the int16 layout of the DSP
 *   path; the last term holds the block dots of a 4x4 tile, or of 16 columns per 32
 *   elements, on the blocks-of-32 paths).
 *   Any alignment. Stack: a 4x4 int32 tile and a few words (< 256 bytes).
 *
 * FULLY-CONNECTED s4: qmx_fully_connected_i4(M, N, K, A, lda, a_zp, W, ldw, rq, out, ldo,
 *   workspace, workspace_bytes): out = clamp(requant(acc + bias) + out_zp), acc[m][n] =
 *   sum_k (A[m][k] - a_zp) * (W(n,k) - w_zp) with W signed int4 (packed as above, row n at
 *   element n*ldw: CMSIS-NN's flat packing is ldw = K), rq exactly as qmx_fully_connected_i8.
 *   w_zp = rq->weight_zero_point in [-8, 7] (the int4 range, as the int4 values TFLite's
 *   FullyConnectedWithPackedInt4Weights unpacks before its per-tensor FullyConnected with
 *   filter_offset = -w_zp; 0 by default). |W - w_zp| <= 15, so the K bound stays
 *   QMX_MATMUL_I4_MAX_K; the driver's weight term z (above) becomes 8 + w_zp, exact on every
 *   path with no extra pass.
 *
 * ERRORS (checked before anything is written; outputs and workspace untouched on error)
 *   QMX_ERR_NULL              A, W, C/out, workspace NULL; params NULL (f32 only: NULL means
 *                             the defaults elsewhere); rq NULL; a_scales / w_scales NULL
 *                             (f32); rq's arrays as qmx_fully_connected_i8
 *   QMX_ERR_DTYPE             a_dtype not 0/INT8/INT4; w_dtype not 0/INT4/UINT4; rq out dtype
 *   QMX_ERR_ARG               a_zp outside its dtype's range; w_zp / w_zps[i] outside [0, 15]
 *                             (uint4), w_zp != 0 for int4; a scale 0, negative, NaN or Inf;
 *                             rq values as qmx_fully_connected_i8; rq->weight_zero_point
 *                             outside [-8, 7] (qmx_fully_connected_i4)
 *   QMX_ERR_SIZE              M, N or K is 0
 *   QMX_ERR_OVERFLOW          K > QMX_MATMUL_I4_MAX_K; size_t overflow of an extent or of
 *                             the workspace
 *   QMX_ERR_SHAPE             lda < K, ldw < K, ldc/ldo < N
 *   QMX_ERR_BUFFER_TOO_SMALL  workspace too small; w_zps_len < N*nblk; scales_len short
 *
 * FP8 x FP8 -> FLOAT: qmx_matmul_fp8_f32(M, N, K, A, lda, B, ldb, C, ldc, params, workspace,
 *                                         workspace_bytes)
 *   A [M,K] and B [N,K] fp8 codes (one byte each), formats params.a_fmt / params.b_fmt each
 *   QMX_FP8_E4M3FN (default when 0) or QMX_FP8_E5M2 (E4M3xE4M3, E4M3xE5M2, E5M2xE5M2, and
 *   E5M2xE4M3). Scales: sa = a_scales[a_per_row ? m : 0], sb = b_scales[b_per_col ? n : 0].
 *   Every product A(m,k)*B(n,k) is exact in float: significands of 4 (E4M3) or 3 (E5M2)
 *   bits multiply into at most 8 bits, and exponents stay within [2^-32, 2^32) (no
 *   overflow, no float subnormal). Hence an FMA gives the same bits as a multiply then an
 *   add, and contraction cannot change results. The sum has this fixed order:
 *       s[l] = +0.0f for l < 16;
 *       for k = 0, 1, ..., K-1:  s[k % 16] = s[k % 16] + A(m,k)*B(n,k);
 *       for w = 8, 4, 2, 1:  for l < w:  s[l] = s[l] + s[l + w];
 *       C[m][n] = (s[0] * sa) * sb;
 *   each step rounded to float (nearest-even): 16 lanes as one AVX-512 register (4x4 tiles,
 *   vfmadd; for M = 1 the codes of B are decoded in registers as they stream), two AVX2
 *   registers (1x4 tiles; F16C decode) or four NEON registers; elsewhere portable C. Same
 *   bits on every path and target. Codes are decoded exactly through IEEE binary16 (vcvtph2ps / vcvt_f32_f16;
 *   E5M2 is the top byte of a binary16, E4M3 shifted into one is its value times 2^-8),
 *   or a 256-entry table of qmx_fp8_to_f32 built in the workspace. Accuracy: |C - exact| <=
 *   (K/16 + 6) * 2^-24 * sum_k |A*B| * sa * sb (+ underflow).
 *   NaN and Inf codes (E4M3FN 0x7F/0xFF; E5M2 exponent field 11111) in A or B are rejected
 *   with QMX_ERR_NONFINITE (outputs untouched): a NaN result would carry no information and
 *   an Inf*0 would make the order observable. The FNUZ formats: QMX_ERR_UNSUPPORTED.
 *   Workspace: qmx_matmul_fp8_f32_workspace_size(M, N, K, &bytes) =
 *       64 + 2048 + r64(4 * min(M, 16) * r16(K)) + r64(16 * r16(K))
 *   (two 256-entry decode tables, a panel of A and a tile of 4 rows of B decoded to float).
 *   Errors as the int4 entry points, plus QMX_ERR_DTYPE for another format and
 *   QMX_ERR_NONFINITE above; K has no maximum beyond size_t (float sums).
 *
 * ============================================================================================
 * EINSUM (qmx_einsum, qmx_einsum_workspace_size, qmx_einsum_output_shape)
 *   Two-operand einsum, as numpy.einsum / jnp.einsum and AQT's/Qwix's quantized einsum:
 *       out[o...] = sum over the other labels of  A[a...] * B[b...]
 *   planned onto one batched matrix product C[t] = A'[t] (M x K) . B'[t]^T (N x K).
 *
 *   SPEC GRAMMAR  spec := term "," term [ "->" term ]     term := { label | "..." }
 *     label: a-z, A-Z (52 labels). ' ' (space) is ignored anywhere, as numpy does; every other
 *     character (tab, digit, '_', ...) is a parse error. Without "->" the output is implicit
 *     (numpy's rule): the ellipsis dims first, then every label that appears exactly once in
 *     the inputs, in ASCII order (A-Z before a-z). At most QMX_EINSUM_MAX_RANK (8) dims per
 *     term, at most QMX_EINSUM_MAX_SPEC (256) characters.
 *     "...": at most one per term; it stands for the operand's leading/middle dims not named by
 *     labels (rank - named). Ellipsis dims of the two inputs are right-aligned and broadcast
 *     numpy-style (equal sizes, or 1 against n). An explicit output must contain "..." when
 *     the ellipsis stands for at least one dim (numpy's rule; else QMX_ERR_SHAPE).
 *   LABEL CLASSES (t = batch, the matmul's M/N/K):
 *     in A, B and out: batch (one product per batch index)   in A and out only: M (rows)
 *     in B and out only: N (columns)                         not in out: K (contraction)
 *     A label not in the output that appears in one operand only is summed within that operand
 *     (it joins K; the other operand is read with stride 0 there). A label repeated in one
 *     operand ("ii,i->i") takes its diagonal (the strides add up), as numpy. Both supported.
 *     Named labels must have equal sizes wherever they appear (no size-1 broadcast of named
 *     labels, a deviation from numpy: QMX_ERR_SHAPE).
 *
 *   OPERANDS (qmx_einsum_operand, zero-init = float32, no scales, zero point 0, mx NULL)
 *     data is a dense row-major tensor of shape[0..rank-1] (rank 0: a scalar), data_bytes the
 *     bytes readable there (>= the storage of the whole tensor, qmx_dtype_storage_bytes:
 *     int4: (count + 1) / 2, int2: (count + 3) / 4). Packing follows the flat index, as qmx.h.
 *       dtype 0 / QMX_FLOAT32  float; scales must be NULL, zero_point 0
 *       QMX_INT8               int8
 *       QMX_INT3, _INT5, _INT6, _INT7  one int8_t per value: read in place as int8 (values
 *                              outside the dtype's range are not checked, as qmx_dequantize)
 *       QMX_INT4, QMX_UINT4    packed two per byte, element 2i in the low nibble; unpacked
 *                              exactly to int8 in the workspace
 *       QMX_INT2, QMX_UINT2    packed four per byte, element 4i in the lowest two bits;
 *                              unpacked exactly to int8 in the workspace
 *       fp8 (the four formats), QMX_FP6_E2M3, QMX_FP6_E3M2 (one code per byte, bits 6-7
 *                              ignored), QMX_FP4_E2M1 (two per byte, element 2i in the low
 *                              nibble), QMX_NF4 (codes two per byte like uint4, value = QLoRA
 *                              table[code] * scale): decoded exactly to float in the workspace,
 *                              then the float path; their TENSOR / CHANNEL scales apply on
 *                              output, BLOCK / CHANNEL_BLOCK scales are multiplied in first
 *                              (see SCALES)
 *       mx != NULL             a block-scaled operand (MXFP8, MXFP6, MXFP4, NVFP4, MXINT8):
 *                              below; dequantized by qmx_mx_dequantize, then the float path
 *       blockw_blob != NULL    a prepacked block-weight blob (weights [N][K]): below; read in
 *                              place by the blob kernels, the other operand float32 only
 *     Combinations (the two operands' classes; anything else QMX_ERR_UNSUPPORTED, with
 *     dtypes uint8, int16, uint16, e8m0 or unknown QMX_ERR_DTYPE):
 *       float class: float32, fp8, fp6, fp4, nf4, mx    int class: int2..int8, uint2, uint4
 *       float x float   -> float (the float path)
 *       int x int       -> float (scales, dequant on output: qmx_matmul_i8_f32)
 *                       -> int32 (opts.int32_out: raw, exact, scales must be NULL)
 *       float x int     QMX_ERR_UNSUPPORTED (dequantize first); float with int32_out: ARG
 *   BLOCK-SCALED (MX / NVFP4) OPERANDS: mx = the qmx_mx_config of qmx_mx_quantize (any format
 *     and rule, tensor_scale included), data = its elements (data_bytes >= their storage),
 *     scale_codes = its scale codes (scale_codes_len >= the count qmx_mx_storage gives). The
 *     blocks run along operand axis block_axis, which must be contracted (else QMX_ERR_ARG).
 *     The operand is the view [outer][axis_len][inner] with outer = the product of the dims
 *     before block_axis, axis_len = shape[block_axis], inner = the product of the dims after
 *     it; mx's own view must be all 0 or exactly that (else QMX_ERR_SHAPE). So the scale code
 *     of element (o, k, i) is scale_codes[(o * nblk + k / bs) * inner + i] (bs = the config's
 *     block length: 32, NVFP4 16, at most axis_len; nblk = ceil(axis_len / bs)), and the
 *     workspace copy is exactly qmx_mx_dequantize's output for that view: weights [N,K]
 *     ("bsd,fd->bsf") take block_axis 1 (qmx_mx_quantize's [N][K][1] view), weights [K,N]
 *     ("bsd,df->bsf") block_axis 0 (the view [1][K][N]). The whole operand is dequantized
 *     on every call (portable C, correctness first). dtype must be the format's
 *     element dtype (MXFP8: QMX_FP8_E4M3FN / _E5M2, MXFP6: QMX_FP6_*, MXFP4 and NVFP4:
 *     QMX_FP4_E2M1, MXINT8: QMX_INT8; else QMX_ERR_DTYPE); scales must be NULL, zero_point 0,
 *     block_size 0 or the config's block length (else QMX_ERR_ARG); scale_codes without mx:
 *     QMX_ERR_ARG. The config's own errors are qmx_mx_storage's. An element that dequantizes
 *     to NaN / Inf (a NaN scale code, an fp8 NaN, an overflow) is QMX_ERR_NONFINITE.
 *   BLOCK-WEIGHT BLOB OPERANDS (blockw_blob / blockw_blob_bytes: a blob of qmx_blockw_pack*,
 *     Q8_0 / Q4_0 / Q4_1 class, MXFP4, NVFP4, MXFP8; PREPACKED BLOCK WEIGHTS): a linear
 *     layer's weights [N][K], read in place by the blob kernels (never copied or dequantized:
 *     the reason to prepack). The operand: rank 2, shape = the blob's N, K, labels (n, k);
 *     dtype 0, data / scales / mx / scale_codes NULL, zero_point 0 (else QMX_ERR_DTYPE / ARG):
 *     the blob says what it holds; blockw_blob_bytes without a blob: QMX_ERR_ARG. Either
 *     operand may be the blob ("fd,bsd->bsf"), not both. The other must be float32 (else
 *     QMX_ERR_UNSUPPORTED): the kernel's X [M][K]. k must be contracted (its blocks run along
 *     it; a free k: QMX_ERR_ARG, as an mx block axis) and be the whole of K (no other
 *     contracted label of size > 1), n free and in the blob only (no batch label: one blob is
 *     one [N][K] matrix); else QMX_ERR_UNSUPPORTED. So "...k,nk->" with the output in any
 *     order: M = the other operand's free labels in output order. opts.blockw_act picks the
 *     kernel: QMX_EINSUM_BLOCKW_F32 (0) qmx_matmul_blockw_packed_f32, QMX_EINSUM_BLOCKW_DYN_I8
 *     qmx_matmul_blockw_packed_dyn_i8 with act_block = opts.blockw_act_block (0: a scale per
 *     row; the kernel's rule, a multiple of 32 or >= K, else QMX_ERR_UNSUPPORTED); another
 *     value QMX_ERR_ARG, int32_out QMX_ERR_ARG. out = the bits of that kernel on (M, N, K)
 *     with X the operand as [M][K] (in place when it is such a view, else packed into the
 *     workspace: "bds,fd->bsf"), written in place when the output is (M..., n) in order, else
 *     through the [M,N] tile ("bsd,fd->fbs"). The blob's errors are the kernel's and the plan
 *     finds them (qmx_einsum_workspace_size reads its 64-byte header): a wrong magic or
 *     field QMX_ERR_PARSE, bytes below its size QMX_ERR_BUFFER_TOO_SMALL, a shape not its N,
 *     K QMX_ERR_SHAPE. Data: NaN / Inf activations QMX_ERR_NONFINITE (every float32 operand);
 *     int8 activations: a block whose scale underflows QMX_ERR_ARG, checked on the operand in
 *     place before anything is written (the kernel's scale is a function of the block's
 *     absmax, so the same verdict). Several cores: the kernel's tasks (USING SEVERAL CORES).
 *   SCALES (int and float-decoded operands; NULL = one per-tensor scale 1.0). Finite, > 0.
 *     QMX_EINSUM_SCALE_TENSOR (0)       scales[0]
 *     QMX_EINSUM_SCALE_CHANNEL          scales[c], c = index along operand axis channel_axis,
 *                                       which must be a batch or free (non-contracted) axis
 *     QMX_EINSUM_SCALE_BLOCK            scales[j], j = index along block_axis / block_size
 *                                       (block_axis: a contracted axis; a ragged last block)
 *     QMX_EINSUM_SCALE_CHANNEL_BLOCK    scales[c * nblk + j], nblk = ceil(shape[block_axis] /
 *                                       block_size)   (AQT/Qwix sub-channel)
 *     Int operands: blocks become K-blocks of the matmul (dequant on output). When both
 *     operands have blocks they must use the same contracted label and block_size. When K has
 *     other contracted labels besides the blocked one, block_size must divide the blocked size
 *     (or be >= it), else QMX_ERR_UNSUPPORTED. A channel axis of size 1 that broadcasts reads
 *     scales[0].
 *     Float-decoded operands (fp8, fp6, fp4, nf4 -- nf4 normally has per-block absmax scales):
 *     BLOCK / CHANNEL_BLOCK scales are multiplied in when the operand is decoded: workspace
 *     element = f32(value * its scale), one rounding, the bits qmx_dequantize writes for the
 *     same scales (QMX_PER_BLOCK); the float path then runs without scales for that operand.
 *     The block axis must still be contracted; the other operand's blocks need not match.
 *     A product that overflows to Inf is QMX_ERR_NONFINITE.
 *   ZERO POINT: int operands, per tensor, in the dtype's own range (int8 [-128, 127], int4
 *     [-8, 7], uint4 [0, 15], int2 [-2, 1], uint2 [0, 3], int3 [-4, 3] ... int7 [-64, 63]; else
 *     QMX_ERR_ARG): the operand's real value is (q - zero_point) * scale. int32 output: both
 *     operands may have one. float output: only one (Qwix's rule; the planner makes that
 *     operand the matmul's A), both: UNSUPPORTED. Float-class operands: 0 (else QMX_ERR_ARG).
 *
 *   NUMERICS (identical bits on every target and with QMX_NO_SIMD)
 *     int -> int32: qmx_matmul_i8, exact (K <= QMX_MATMUL_I8_MAX_K, else QMX_ERR_OVERFLOW).
 *     int -> float: qmx_matmul_i8_f32 with the expanded scales: per K-block b in increasing
 *       order, sum = sum + ((float)P_b * s_lhs) * s_rhs (its documented order), where lhs is
 *       the operand the planner makes A (the one with the zero point, else the first operand
 *       unless swapping the roles copies fewer elements: packs of A and B plus the output
 *       tile); the plan is a pure function of spec and shapes, so the bits are the same
 *       everywhere.
 *     float: sum = 0.0f; for k = 0 .. K-1 in increasing order: p = a*b (rounded to float);
 *       sum = sum + p (rounded); then with output scales (fp8 / fp6 / fp4 / nf4 operands without
 *       blocks; 1.0 for the others): sum = (sum * s_lhs) * s_rhs. K runs over
 *       the contracted labels in the order they appear in A (labels of B only appended), the
 *       blocked label (if any) last. FMA contraction is off in this function (as
 *       qmx_matmul_i8_f32). Against exact arithmetic, |err| <= K * 2^-24 * sum |a*b| (+3 ulp
 *       for the scales); integer-valued data whose partial sums stay below 2^24 is exact.
 *     a, b are the workspace copies: exact decodes, baked blocks, qmx_mx_dequantize's bits.
 *     Non-finite float/fp8 input data, baked or MX elements / bad scales: QMX_ERR_NONFINITE /
 *     QMX_ERR_ARG. An overflow to Inf inside the sum is IEEE behaviour (not checked).
 *
 *   PLAN AND WORKSPACE: qmx_einsum_workspace_size(spec, a, b, opts, &bytes) reads only the
 *     dtypes, ranks, shapes, scale modes and mx configs (never data, scales or scale codes;
 *     a blob's 64-byte header): a pure function of those. Regions (each rounded up to 64
 *     bytes, plus 64 for alignment),
 *     only when needed:
 *       per converted operand: int4 / int2 -> int8 copy (count bytes), or a float copy
 *       (4*count) of an fp8 / fp6 / fp4 / nf4 (decoded, blocks baked in) or MX operand
 *       (int8 and int3..int7 are read in place);
 *       A' packed [M,K] when A's labels are not already a row-major [M,K] view with a leading
 *       dimension ("bsd,df->bsf": no copy, M = b*s);
 *       B' packed [N,K] when B is neither an [N,K] nor a [K,N] view;
 *       float: B' packed [K,N] when B is not a [K,N] view and M >= 4 (the row form below
 *       vectorises across outputs; the 4 x 4 tile form does not, about 4x slower);
 *       an [M,N] result tile when the output order is not (batch, M, N), then scattered;
 *       (M + N) * nblk expanded float scales (int -> float; float path when an operand is
 *       fp8 / fp6 / fp4 / nf4 without blocks: nblk = 1);
 *       the matmul's own workspace (qmx_matmul_i8 / qmx_matmul_i8_f32 for M, N, K), + 4*r64(K)
 *       for int -> float on a [K,N] view (the portable kernel's 4-column tile of B), and when
 *       M < 16 also 4*r64(N)*(M + 1) (the streamed kernel's sums);
 *       a blob operand: the blob kernel's own workspace for M, N, K (_f32 / _dyn_i8
 *       _workspace_size; with opts->executor of 2+ workers its _exec's, qmx_par_workspace_size
 *       of the 64 x 256 tile's), besides the A' pack and the tile above (never a B' copy).
 *     Packs and scales are per batch index (sized for one; with opts->executor of 2+ workers
 *     and 2+ batch indices, once per worker: USING SEVERAL CORES). No region needed (a float
 *     einsum whose layouts fit): 0 bytes, workspace may be NULL. Any alignment.
 *     Stack (gcc -fstack-usage): about 2.8 KiB on 64-bit hosts, 1.7 KiB on Cortex-M4, plus the
 *     int8 kernel's (under 256 bytes) during the product.
 *     Speed (bench/bench_einsum.c, x86-64 AVX-512): the int paths run the qmx_matmul_i8 /
 *     qmx_matmul_i8_f32 kernels; einsum/kernel time is 1.00 +- noise for "bsd,fd->bsf" at
 *     128x1024x1024 and "bnth,bnsh->bnts" (8 heads of 128x128x64). "bsd,df->bsf" with int8
 *     [K,N] weights reads B in place (qmx_matmul_i8_f32's tiles pack 32-column strips of it):
 *     1.2x the [N,K] kernel's time at that size, no [N,K] copy in the workspace; [N,K]
 *     ("bsd,fd->bsf") stays the fastest layout. Below 16 rows (decode) the [K,N] weights are
 *     streamed in memory order with every column's int32 sums in the workspace ((M + 1) x N
 *     int32): 4096^2 at M = 1 about 0.6x the [N,K] path (it was 0.02x with the copy).
 *     The float path is portable C without intrinsics (about 30 GFLOP/s at
 *     64x256x256 there; compilers vectorise the row form across outputs, which keeps each
 *     output's order).
 *   OUTPUT: dense row-major in the output's label order, out_len elements (float or int32);
 *     qmx_einsum_output_shape gives its shape. It must not overlap the inputs or the workspace.
 *   EXAMPLE (int8 activations [b,s,d] with a zero point and per-token scales, int8 weights
 *   [f,d] with per-channel scales, float output [b,s,f]):
 *       qmx_einsum_operand x = QMX_ZERO_INIT, w = QMX_ZERO_INIT;
 *       x.dtype = QMX_INT8; x.rank = 3; x.shape[0] = B; x.shape[1] = S; x.shape[2] = D;
 *       x.data = xq; x.data_bytes = B*S*D; x.zero_point = zp;
 *       x.scales = tok_scales; x.scales_len = S; x.scaling = QMX_EINSUM_SCALE_CHANNEL;
 *       x.channel_axis = 1;                     (w likewise: shape {F, D}, channel_axis 0)
 *       qmx_einsum_workspace_size("bsd,fd->bsf", &x, &w, NULL, &bytes, &pos);
 *       st = qmx_einsum("bsd,fd->bsf", &x, &w, NULL, y, B*S*F, ws, bytes, &pos);
 *
 *   ERRORS (all checked before anything is written; on error out and the workspace are
 *   untouched)
 *     QMX_ERR_NULL        spec, a, b, out, data (but a blob's), bytes; workspace when the plan
 *                         needs one; scale_codes of an mx operand
 *     QMX_ERR_PARSE       bad character, "..." malformed or twice in a term, '-' without '>',
 *                         '>' without '-', a second "->", ',' in the output, three operands,
 *                         more than 8 labels in a term, an output label not in the inputs, an
 *                         output label twice, spec longer than 256
 *     QMX_ERR_UNSUPPORTED one operand ("ij->ji"); see above
 *     QMX_ERR_SHAPE       rank != labels in the term (no "..." to absorb the rest, or fewer
 *                         dims than labels), a label with two sizes, ellipsis dims that do
 *                         not broadcast, ellipsis dims with an explicit output lacking "...",
 *                         an explicit output of more than 8 dims; an mx view that is not
 *                         the operand's [outer][axis_len][inner] (BLOCK-SCALED above)
 *     QMX_ERR_SIZE        a zero dimension; rank outside [0, 8]; block_size 0
 *     QMX_ERR_OVERFLOW    size_t overflow of a count, an extent or the workspace; int K too big
 *     QMX_ERR_DTYPE (a dtype outside both classes; an mx operand's dtype not its format's
 *     element), QMX_ERR_ARG (axis out of range or on the wrong label class -- an mx block
 *     axis that is not contracted too --, zero point outside the dtype's range or on a float
 *     operand, bad scale, scales with int32_out, scales / block_size on an mx operand,
 *     scale_codes without mx), the mx config's own errors (qmx_mx_storage: ARG, UNSUPPORTED),
 *     QMX_ERR_BUFFER_TOO_SMALL (data_bytes, scales_len, scale_codes_len, out_len, workspace),
 *     QMX_ERR_NONFINITE (NaN / Inf data, or an element that dequantizes to one).
 *     QMX_ERR_UNSUPPORTED also: an implicit output of more than 8 labels (err_pos -1).
 *     err_pos (may be NULL) receives the 0-based character of the spec at fault, else -1:
 *       PARSE: the offending character (for a missing '>' the '-', for a spec too long 256);
 *       SHAPE: the label occurrence whose size disagrees with the size seen before it
 *       (scanning A then B, left to right), B's "..." when ellipsis dims do not broadcast,
 *       the end of the term (one past its last character) for a rank mismatch;
 *       one operand: the "->" (or the end of the spec).
 *
 * ============================================================================================
 * QUANTIZED KV CACHE AND ATTENTION DECODE (qmx_kv_*)
 *
 * A key/value cache for autoregressive decoding over caller storage, with MaxText's
 * quantization (AI-Hypercomputer/maxtext kvcache.py, see ../shared/SEMANTICS.md section 3),
 * and the attention step that reads it without dequantizing it.
 *
 * A SIX-LINE EXAMPLE (one layer, int8 K and V, 8 KV heads of 128, 32 query heads)
 *       qmx_kv_config cfg = QMX_ZERO_INIT;   // int8/int8, "heads_and_dkv", linear
 *       cfg.capacity = 4096; cfg.n_kv_heads = 8; cfg.head_dim = 128;
 *       qmx_kv_cache_storage_size(&cfg, &bytes);             -> storage of `bytes`
 *       qmx_kv_cache_init(&cache, &cfg, storage, bytes);
 *       qmx_kv_cache_append(&cache, k, v, 1);                 // k, v: [8][128] float
 *       qmx_kv_attention(&cache, q, 32, NULL, out, ws, ws_bytes);  // q, out: [32][128]
 *
 * CONFIGURATION (qmx_kv_config; zero-initialised = the defaults in brackets)
 *   capacity      tokens the cache holds (>= 1)
 *   n_kv_heads    KV heads (>= 1); head_dim: elements per head, 1 .. QMX_KV_MAX_HEAD_DIM
 *   k_dtype, v_dtype  [QMX_INT8] QMX_INT8, QMX_INT4 (packed, head_dim even), QMX_FP8_E4M3FN,
 *                 QMX_FP8_E5M2, or QMX_FLOAT32 (unquantized reference; no scales)
 *   k_axis, v_axis    scale granularity, MaxText's kv_quant_axis:
 *     QMX_KV_HEADS_AND_DKV [default, as MaxText] one scale per token, over all heads and dims
 *     QMX_KV_DKV           one scale per token per KV head, over head_dim
 *     QMX_KV_CHANNEL       keys only (KIVI, Liu et al. 2024): one scale per channel (head, dim)
 *                          over a block of `channel_block` consecutive token positions
 *                          (block b = positions [b*G, (b+1)*G), G = channel_block [32]; the
 *                          capacity must be a multiple of G). The tokens of the block being
 *                          filled are kept in float32 ("residual") and quantized together when
 *                          the block completes, so a token's key is exact until then.
 *     QMX_KV_BLOCK         keys and values (llama.cpp's q8_0 / q4_0 caches, KIVI's values): one
 *                          scale per token per KV head per block of `dim_block` consecutive
 *                          elements along head_dim (block b = elements [b*db, (b+1)*db)).
 *                          Combines with rotate (blocks of H x) and with CHANNEL keys.
 *   dim_block     [32] QMX_KV_BLOCK's block: 32 or 64 (else QMX_ERR_ARG); head_dim must be a
 *                 multiple of it (else QMX_ERR_SHAPE). Checked even when no axis is BLOCK.
 *   block_scale   [QMX_KV_SCALE_F32] the stored format of the BLOCK scales (other axes keep
 *                 float32): QMX_KV_SCALE_F16 (IEEE binary16) or QMX_KV_SCALE_BF16 (bfloat16),
 *                 2 bytes instead of 4 per block, rounded UP (see 16-BIT BLOCK SCALES). A
 *                 16-bit format with no quantized BLOCK tensor is QMX_ERR_ARG. (A float32 K or V
 *                 has no scales: its BLOCK axis is ignored.)
 *   mode          [QMX_KV_LINEAR] positions 0 .. capacity-1, appending past the end is
 *                 QMX_ERR_BUFFER_TOO_SMALL; QMX_KV_RING: a ring buffer (sliding window),
 *                 position p lives in slot p % capacity, the last `capacity` tokens are kept.
 *   n_layers      [1] layers sharing one storage query (qmx_kv_cache_init_layer picks one)
 *   rotate        [0] 1: Hadamard rotation (as llama.cpp's default for quantized caches):
 *                 keys and values are stored as H k, H v per head (H the unnormalized
 *                 Walsh-Hadamard matrix of order head_dim, a power of two; H H = d I), which
 *                 spreads outlier channels over all channels before the per-token scale is
 *                 taken. Attention rotates the query (H q . H k = d q.k, the 1/d folded
 *                 exactly into the logit scale) and un-rotates the output (H o' / d); read-back
 *                 returns H x' / d. Fast transform, butterflies in a fixed order, adds only.
 *                 Measured (tests/test_kvcache.c test_rotation: float32 V, per-head key
 *                 scales, 2 outlier channels per head at 16x, d = 64, 100 tokens, GQA 8/2):
 *                 int4 keys 0.19 -> 0.077, int8 0.011 -> 0.0054 of max|V|; the proven
 *                 bounds (ERROR BOUNDS) do not cover rotate. Inputs with |x| > FLT_MAX / (2 head_dim):
 *                 QMX_ERR_OVERFLOW.
 *
 * QUANTIZATION (append), per scale group x (a token's heads, one head, a channel block, or a
 *   block of dim_block elements of one head):
 *   s = absmax(x) / B, B = 127.5 (int8), 7.5 (int4), 448 (E4M3FN), 57344 (E5M2), then
 *   q = saturate(RNE(x / s)) to [-128, 127] / [-8, 7], fp8: clip to +-max and RNE cast.
 *   This is qmx_compute_qparams + qmx_quantize with QMX_RECIPE_QWIX, which equals MaxText's
 *   kvcache.py up to two documented departures: (1) MaxText computes x * (B / absmax) and we
 *   x / s (the two can differ by one step on rare ties); (2) MaxText has no zero guard (an
 *   all-zero token gives 0 * Inf = NaN there); we use Qwix's guard s < sqrt(FLT_MIN) -> s = 1,
 *   so an all-zero (or all-tiny) token stores zero codes; int8 / int4 groups whose codes are
 *   all zero then store scale 0 (not the guard's 1: both read back as zeros, and scale 0
 *   keeps such a token from weighing in the integer value sums). Read-back / dequant:
 *   x' = q * s.
 *   SCALE STORAGE: float32 s = absmax / B (MaxText stores bfloat16 absmax and divides by B on
 *   read: our float32 scale removes bf16's 2^-9 relative error from every value).
 *   Bit layouts of the data are qmx.h's (int4: element 2i in the low nibble of byte i).
 *   Non-finite input (NaN, Inf) is rejected: QMX_ERR_NONFINITE and nothing is written.
 *   16-BIT BLOCK SCALES (block_scale F16 / BF16): s = absmax / B as above (guard included), then
 *   s' = the smallest binary16 / bfloat16 value >= s (qmx_f32_to_f16 / qmx_f32_to_bf16 round to
 *   nearest even; one code up when that fell below s), and the codes are computed with s'
 *   (q = saturate(RNE(x / s')), fp8 cast of x / s'), so read-back is exactly code x s' and
 *   |x / s'| <= |x / s|: rounding up never saturates more. s' <= s (1 + 2^-10) + 2^-24
 *   (binary16, whose subnormals go down to 2^-24: a tiny s gets a coarse s', never 0) or
 *   s (1 + 2^-7) (bfloat16). Overflow: binary16's largest value is 65504, so a K or V input with
 *   |x| > 65504 B (rotate: |x| > 65504 B / head_dim, which bounds |H x| exactly) is
 *   QMX_ERR_OVERFLOW before anything is written (bfloat16 reaches FLT_MAX: no limit). The zero
 *   rule holds per block (an int8 / int4 block of all-zero codes stores the code of +0).
 *   Codes of the 16-bit scales are stored as native-endian uint16 (qmx_f16_to_f32 /
 *   qmx_bf16_to_f32 give the float back exactly).
 *
 * STORAGE (qmx_kv_cache_storage_size; a pure function of the config). Per layer, each piece
 *   starting at a 64-byte boundary of the 64-byte aligned base, in this order:
 *     K data  [n_kv_heads][capacity][row_k]   row_k = bytes of head_dim elements of k_dtype
 *     V data  [n_kv_heads][capacity][row_v]   (head-major: a head's tokens are contiguous)
 *     K scales float  HEADS_AND_DKV: [capacity]; DKV: [n_kv_heads][capacity];
 *                     CHANNEL: [n_kv_heads][capacity / G][head_dim]; float32: none
 *                     BLOCK: [n_kv_heads][capacity][head_dim / dim_block] float, or uint16
 *                     codes with block_scale F16 / BF16 (2 bytes each)
 *     V scales float  HEADS_AND_DKV: [capacity]; DKV: [n_kv_heads][capacity]; BLOCK: as K's
 *     K residual float [n_kv_heads][G][head_dim]  (CHANNEL only)
 *     rotation scratch float [2][n_kv_heads][head_dim] (rotate only: the token being appended)
 *   size = 64 + n_layers * r64(that sum). The storage may have any alignment. The descriptor
 *   (qmx_kv_cache) keeps pointers into it and the token count; it is the only state.
 *   Bytes per token (qmx_kv_cache_bytes_per_token), e.g. 8 KV heads of 128, blocks of 32 with
 *   16-bit scales: int8 2 x 8 x (128 + 4 x 2) = 2176 (q8_0's 34 bytes per 32), int4 2 x 8 x
 *   (64 + 8) = 1152 (q4_0's 18 per 32); float32 block scales: 2304 / 1280.
 *
 * ATTENTION DECODE (qmx_kv_attention): query q [n_heads][head_dim] float, n_heads a multiple
 *   of n_kv_heads (GQA: query head j uses KV head j / (n_heads / n_kv_heads), MaxText's
 *   "btkgd" grouping), out [n_heads][head_dim] float. Visible positions [lo, hi):
 *   hi = opts->causal_len (0: every appended token), lo = max(0, hi - window) (opts->window,
 *   0: no window; in ring mode window 0 means window = capacity). Tokens evicted from a ring
 *   (or never appended) cannot be requested: QMX_ERR_ARG.
 *     isd = opts->scale, or 0 -> RN(1/sqrt(head_dim)), correctly rounded (qmx_kv_inv_sqrt)
 *     logit[t] per token, by K format:
 *       int8 / int4 K (default, "integer query"): the query head is quantized to int8 with
 *         qmx's AQT recipe (s_q = absmax/127, RNE, [-127, 127]), then
 *         l = (float)(sum_d q8[d]*k8[t][d]) (exact int32);  l = l * (s_q * isd);  l = l * s_k[t]
 *       float query (opts->float_query, or fp8 / float32 K):
 *         l = dot16(q, k[t]) (k[t] decoded exactly to float, unscaled);  l = l * isd;
 *         l = l * s_k[t]
 *       CHANNEL keys of a completed block b: the key scales vary along d, so they are folded
 *         into the query once per block, q'[d] = q[d] * s_b[d], and the float path runs with
 *         q' for q and s_k[t] = 1 (no multiply); residual (float) keys: the float path with q.
 *         (Always float: q' has the outlier channels' scales in it, and an int8 q' would lose
 *         the other channels.)
 *       BLOCK keys (s_b = block b's stored scale, decoded exactly; blocks b = 0, 1, .. in order,
 *         acc starting at +0):
 *         integer query: acc = acc + ((float)I_b * s_b), I_b = sum over block b of q8 * k8 (exact
 *           int32; q8 and s_q as above, one query scale per head); l = acc * (s_q * isd)
 *         float query: acc = acc + (dot16(q_b, k_b) * s_b) (dot16 over the block's dim_block
 *           elements); l = acc * isd
 *       rotate: q is H q (per head) and isd is isd / head_dim (exact) in all of the above.
 *     softmax: m = max l; e[t] = qmx_kv_exp(l[t] - m); S = sum16(e)
 *     value scales folded into the probabilities (MaxText's order): w[t] = e[t] * s_v[t]
 *       (float32 V: w[t] = e[t])
 *     out[d] = acc[d] / S, acc[d] the weighted sum of the values, by V format:
 *       float32 / fp8 V: over t in increasing order, acc = acc + (w[t] * v[t][d]), the
 *         product rounded to float first (v decoded exactly);
 *       int8 / int4 V (integer values): tiles of 64 visible tokens counted from lo (the last
 *         may be shorter), in increasing order; per tile and query head, with m = the tile's
 *         largest w (an all-zero value group stores scale 0, see QUANTIZATION, so it cannot
 *         coarsen the other weights), u = 2^64 if m < 2^-60, else 1, m' = m * u:
 *           r = 32767 / m';  P[t] = RNE((w[t] * u) * r)  (integers 0..32767);
 *           s = (m' / 32767) * (1 / u);  I[d] = sum_t P[t] * v[t][d]  (exact int32);
 *           acc[d] = acc[d] + ((float)I[d] * s)   (m = 0: P = 0, s = 0)
 *         so the weighted sum runs on integers (vpdpwssd / vpmaddwd / vmlal) and each weight
 *         is off by at most 2^-16 of its tile's largest (MaxText multiplies bfloat16 weights:
 *         2^-9 of each weight).
 *       BLOCK values: each block b of elements has its own weights w_b[t] = e[t] * s_v[t][b]
 *         and runs the scheme above on its own columns (int8 / int4: per 64-token tile from lo
 *         and per block, m / P / s from w_b; fp8: the per-token float order with w_b), so
 *         element d of block b gets exactly what a per-token scale s_v[t][b] would give it.
 *   dot16 / sum16: FIXED ORDER. Element i goes to lane i % 16 (lanes start at +0, each
 *   a = a + (x*y) or a = a + x in increasing i), then lanes are folded as a[j] += a[j+8]
 *   (j < 8), a[j] += a[j+4] (j < 4), a[j] += a[j+2], a[0] += a[1]. Every path (scalar,
 *   AVX-512, AVX2, NEON) uses this order and no FMA (contraction is switched off in these
 *   functions; x87 and s390x round each assignment under -std=c99), so the output is the same
 *   bits on every target and build. Integer dot products are exact in int32
 *   (|sum| <= 127 * 128 * QMX_KV_MAX_HEAD_DIM < 2^31).
 *   Why the integer query: the int32 dot is exact and order-free, so SIMD needs no float
 *   reduction order, and it reads the cache at int8 width; its cost in accuracy is one more
 *   rounding of the query (relative <= 2^-8 of |q|max per element), of the same size as the
 *   key's own. MaxText keeps the query in float (opts->float_query reproduces that).
 *   SEVERAL CORES (USING SEVERAL CORES): TASK h = KV head h, i.e. its query group (query heads
 *   h g .. h g + g - 1, g = n_heads / n_kv_heads), n_kv_heads tasks
 *   (qmx_kv_attention_tasks(cache, n_heads, &n); token_split > 0: TOKEN SPLIT's tasks and
 *   calls below). A task runs the serial call's code for that
 *   group (query quantization, logits, softmax, value sums, all in the orders above); the
 *   groups share no state (each reads its own head's K / V rows and the shared, read-only
 *   scales), so the output is bit-identical for any number of workers and any order of the
 *   tasks, on every target. opts->executor with workers >= 2 (NULL or workers 0 / 1: the
 *   serial call): everything is checked first (the serial call's errors, then workers < 0:
 *   QMX_ERR_ARG, parallel_for NULL: QMX_ERR_NULL, more than INT_MAX tasks: QMX_ERR_OVERFLOW,
 *   the workspace: QMX_ERR_BUFFER_TOO_SMALL, the visible range), then parallel_for runs the
 *   tasks (a single task runs on the calling thread), each into the staged output in the
 *   workspace; out is written only when every task has succeeded (a logit overflow in any
 *   task: QMX_ERR_NONFINITE, out untouched, as the serial call; a task the executor did not
 *   run: QMX_ERR_ARG, out untouched). Range calls, plain C: qmx_kv_attention_run(cache, q,
 *   n_heads, opts, out, task_begin, task_end, ws, bytes) checks the whole call (as
 *   qmx_kv_attention, minus its workspace), then the range (task_begin > task_end or
 *   task_end > n: QMX_ERR_ARG), then the workspace (>= qmx_kv_attention_task_workspace_size:
 *   QMX_ERR_BUFFER_TOO_SMALL), nothing written on these errors; it then runs its tasks in
 *   order, writing each task's g heads of out when that task is done: a logit overflow in
 *   task t returns QMX_ERR_NONFINITE with the heads of tasks [task_begin, t) written and the
 *   rest untouched. opts->executor is ignored there. Concurrent range calls: disjoint ranges,
 *   their own workspaces.
 *   TOKEN SPLIT (opts->token_split = T; flash-decoding, for long contexts with few KV heads):
 *   T = 0 (the default) is the single pass above, its bits unchanged. T > 0 must be a multiple
 *   of 64 (else QMX_ERR_ARG, before anything is written). Each head's visible tokens [lo, hi)
 *   are cut into ns = ceil((hi - lo) / T) SPLITS of T tokens counted from lo (the last may be
 *   shorter): split s = [lo + s T, min(lo + (s + 1) T, hi)). For each query head and split s
 *   the code above runs over the split alone (the same per-token logits; m_s = the max of its
 *   logits, e = qmx_kv_exp(l - m_s), S_s = sum16 over its tokens, the lanes restarted per
 *   split; acc_s = its weighted value sums in the orders above: integer values in 64-token
 *   tiles from the split's start, which are the unsplit call's tiles as T is a multiple of 64,
 *   float / fp8 values per token in order), not divided by S_s. Then the COMBINE, per query
 *   head, in split order, fixed whatever runs the splits: m = max_s m_s; S = +0, acc[d] = +0;
 *   for s = 0, 1, .., ns - 1: f = qmx_kv_exp(m_s - m), S = S + (S_s * f),
 *   acc[d] = acc[d] + (acc_s[d] * f) (each product rounded to float first, no FMA);
 *   out[d] = acc[d] / S, then the inverse rotation (rotate), as the unsplit call's final step.
 *   The serial call (no executor, or workers 0 / 1) computes the splits in order and combines
 *   them the same way, so the serial call, any executor and any range calls give the same
 *   bits, on every target. These bits differ from T = 0's (each split rounds its own exp, sum
 *   and value sums) except when one split covers the visible range (T >= hi - lo): then
 *   f = qmx_kv_exp(0) = 1 exactly and S, acc are the unsplit call's, the same bits (tested).
 *   TASKS: n_kv_heads x ns, task t = h ns + s (KV head h = t / ns, its query group, over split
 *   s = t % ns), each writing its RECORD of g (head_dim + 2) floats: [m_s of the g query
 *   heads][S_s of the g heads][acc_s, g x head_dim]; the partials are the ns records of KV
 *   head 0, then of head 1, .. (task order). Through opts->executor (workers >= 2): everything
 *   is checked first (the serial call's errors, T, workers < 0: QMX_ERR_ARG, parallel_for
 *   NULL: QMX_ERR_NULL, the workspace: QMX_ERR_BUFFER_TOO_SMALL, the visible range, more than
 *   INT_MAX tasks: QMX_ERR_OVERFLOW), the tasks write their records into the workspace
 *   (one task: on the calling thread), then the combine runs on the calling thread and writes
 *   out only when every task succeeded (a logit overflow: QMX_ERR_NONFINITE; a task not run:
 *   QMX_ERR_ARG; out untouched either way). The serial call: the same checks but the
 *   executor's, out written only on success. Workspace:
 *   qmx_kv_attention_split_workspace_size(cfg, n_heads, opts, &bytes) (WORKSPACE).
 *   Range calls, plain C (opts->executor ignored, opts->token_split must be > 0):
 *   qmx_kv_attention_split_tasks(cache, n_heads, opts, &n) (n_kv_heads x ns for the cache's
 *   current visible range), qmx_kv_attention_split_partials_size(cache, n_heads, opts, &bytes)
 *   (n x g (head_dim + 2) x 4), qmx_kv_attention_split_run(cache, q, n_heads, opts, partials,
 *   partials_bytes, task_begin, task_end, ws, ws_bytes) (checks the call as qmx_kv_attention,
 *   then T, the range (task_begin > task_end or task_end > n: QMX_ERR_ARG), partials_bytes,
 *   then ws (>= qmx_kv_attention_task_workspace_size; QMX_ERR_BUFFER_TOO_SMALL), nothing
 *   written on these errors; then its tasks in order, each record written when its task is
 *   done: a logit overflow in task t returns QMX_ERR_NONFINITE with the records of
 *   [task_begin, t) written, the rest untouched), and qmx_kv_attention_split_combine(cache,
 *   n_heads, opts, partials, partials_bytes, out) once every task has run (checks as above,
 *   then every record: m finite, S finite and >= 1, else QMX_ERR_ARG, out untouched; this
 *   catches unwritten zeroed records, not every misuse). Concurrent range calls: disjoint task
 *   ranges, their own workspaces, one partials buffer; the cache must not change between the
 *   runs and the combine. qmx_kv_prefill takes token_split = 0 only (QMX_ERR_ARG).
 *   Cost: the logits and value sums are the unsplit call's work; the combine reads the records
 *   once (n_heads x ns x (head_dim + 2) floats), and each task quantizes (and with rotate,
 *   rotates) its group's query again.
 *   ERROR BOUNDS, (a) PROVEN (rotate = 0 and token_split = 0; with rotate only the measured
 *   figures of (b) and of CONFIGURATION apply; token_split > 0: (b), TOKEN SPLIT). One query
 *   head q, its n visible tokens t, output element i; ref[i] =
 *   sum_t p[t] v[t][i], p = softmax(isd q.k[t]) in exact arithmetic on the unquantized K/V
 *   (isd = 1/sqrt(head_dim) exact, or opts->scale):
 *     |out[i] - ref[i]| <= Ev[i] + tanh(D/2) (R[i] + 2 Ev[i]) + eV (M + Ev) + EP
 *   e(A) = the largest error of one element of a scale group of absmax A (c = 1 + 2^-14):
 *     int8 c A/255, int4 c A/15 (c A/(2B)), E4M3FN c A/28, E5M2 c A/14, float32 0; a group the
 *     zero guard catches (RN(A/B) < 2^-63) reads back as zeros: e = A. The groups are the
 *     axis's: a token, a head, a channel block, or (BLOCK) a block of dim_block elements of a
 *     head, so BLOCK's e(A) uses the block's own absmax. With 16-bit block scales (s' of
 *     16-BIT BLOCK SCALES): e = min(c A, c rho s'), rho = 1/2 (int8, int4), 16 (E4M3FN), 4096
 *     (E5M2) the largest half-spacing below B in units of the scale, s' <= RN(A/B) (1 + 2^-10)
 *     + 2^-24 (binary16) or RN(A/B) (1 + 2^-7) (bfloat16); c A because a nonzero code errs by
 *     at most s'/2 <= |x| and a zero code by |x|.
 *   Ev[i] = max over the visible tokens of e(A) of the group holding v[t][i] (0 for float32 V);
 *     Ev = max_i Ev[i] (for the per-token axes all Ev[i] are equal)
 *   M = max |v[t][d]|, R[i] = max_t v[t][i] - min_t v[t][i] (<= 2M), over the visible tokens
 *   D = max_t ( isd (sum_d |q_d| ek[t][d] + eq sum_d (|k[t][d]| + ek[t][d]))
 *               + eL (1 + isd sum_d (|q_d| + eq) (|k[t][d]| + ek[t][d])) )
 *     ek[t][d] = e(A) of the key group holding k[t][d] (a KIVI residual key: 0);
 *     eq = c max_d |q_d| / 254 with the integer query (int8 / int4 K, per-token and BLOCK
 *     axes), else 0;
 *     eL = (ceil(head_dim/16) + 12) 2^-23
 *   eV = (n + ceil(n/16) + 12) 2^-23
 *   EP = (min(n, 64) - 1) cmax smax (1 + eV) / 65534 with int8 / int4 V (cmax = 128 / 8, smax
 *     the largest stored value scale among the visible tokens and blocks: A/B, or s' with
 *     16-bit block scales), else 0
 *   In units of max|V|: the values alone (D ~ 0: one token, or all logits equal) int8 1/255
 *   = 0.0039, int4 1/15 = 0.067, E4M3 1/28 = 0.036, E5M2 1/14 = 0.071; the 15-bit tile weights
 *   EP <= 63 * 128 / (127.5 * 65534) = 0.00097 (int8), 63 * 8 / (7.5 * 65534) = 0.0010 (int4)
 *   once n >= 64 (two tokens: 1.5e-5, 1.6e-5); the keys 2 tanh(D/2) <= D, with D ~ isd ||q||_1
 *   A_k / 255 (int8 keys; / 15 int4, / 28 E4M3, / 14 E5M2), plus the integer query's
 *   isd ||k||_1 max|q| / 254. The key part has no constant bound: it grows with ||q||_1 A_k.
 *   tests/test_kvcache.c evaluates the formula on every attention it runs (random data,
 *   outlier channels, causal lengths, windows, KIVI keys, both query modes: at most 0.97 of
 *   it) and on adversarial inputs that attain it within 10% for every format: one token and
 *   two tokens at
 *   the saturation edge (x/s = B) or at the largest fp8 half-spacing, all-equal logits over
 *   two value tiles, two keys with equal logits rounding apart by the largest half-spacing,
 *   63 tokens whose tile weight rounds to 0 (EP); and on keys with a 1000x outlier channel.
 *   Derivation (u = 2^-24; out = sum_t p'[t] v'[t] + the float error of the sums, p' the
 *   softmax of the logits as computed, v' = code * s):
 *   1. |sum_t p[t] (v'[t][i] - v[t][i])| <= max_t |v' - v| <= Ev (a convex combination).
 *      Integers: s = RN(A/B) <= (A/B)(1 + u), x/s is rounded within B u, RNE adds <= 1/2; the
 *      edge x/s = B rounds to B + 1/2 and saturates to B - 1/2 (127, 7), -B to -B - 1/2 (-128,
 *      -8): still s/2. fp8: |x/s| <= B (+ its rounding, which the clip to +-B removes), and the
 *      spacing below B is largest in the top binade, 2^(emax - mantissa bits): E4M3 32 (half:
 *      16 of 448 = 1/28), E5M2 8192 (4096 of 57344 = 1/14). c covers the float roundings.
 *   2. Softmax: logits off by delta_t, |delta_t| <= D, give r_t = p'[t]/p[t] = e^delta_t /
 *      sum_s p[s] e^delta_s in [a, b], b <= a e^2D, a <= 1 <= b (sum_t p[t] r_t = 1). (r - 1)+
 *      is convex, below its chord on [a, b]: TV = sum_t p[t] (r_t - 1)+ <= (b - 1)(1 - a) /
 *      (b - a), largest at b = 1/a = e^D: tanh(D/2). Then, c the midpoint of v'[.][i],
 *      |sum_t (p'[t] - p[t]) v'[t][i]| = |sum_t (p' - p)(v' - c)| <= TV (max v' - min v')
 *      <= tanh(D/2) (R[i] + 2 Ev). delta_t: isd q.(k' - k) (the key codes) + isd (q^ - q).k'
 *      (the integer query q^ = q8 s_q: |q^_d - q_d| <= c s_q / 2 = eq) + the float error of
 *      the logit (dot16: ceil(d/16) + 5 roundings per term, then * isd, * s_k, isd itself
 *      rounded: <= (ceil(d/16) + 9) u isd sum|q||k|; the integer dot is exact), of l - m
 *      (<= 2u max|l|) and of qmx_kv_exp (<= 8.2e-8 relative: the largest over every float in
 *      [-87.34, 0], exhaustively), all inside eL (1 + ...).
 *   3. The weighted sum: each term's product and up to n sequential adds (integer tiles: one
 *      add per tile, (float)I and * s), w = e s_v, sum16 of e (ceil(n/16) + 4) and the division:
 *      <= (n + ceil(n/16) + 7) u (1 + ...) of sum_t p'|v'| <= M + Ev, inside eV (M + Ev) with
 *      room for e < 2^-126 flushed to 0 and an underflowing tile scale. Integer values: with
 *      r = RN(32767/m'), P = RNE(w u r), the weight used is P s = w (1 + 3 roundings) + beta
 *      m / 32767, |beta| <= 1/2, and beta = 0 for the tile's largest (P = 32767): a tile moves by
 *      <= (n_tile - 1) cmax m / 65534 and sum over tiles of m <= smax sum_t e[t] = smax S: EP.
 *   BLOCK: step 1 holds per element (|v'[t][i] - v[t][i]| <= Ev[i]), so does step 2's range
 *      (max v' - min v' <= R[i] + 2 Ev[i]); step 3 runs per block with w_b = e s_v[.][b], the
 *      same counts per element, and each block's tiles move by <= smax S as above: EP. The
 *      block logit (float query): per term 1 product + ceil(db/16) + 4 dot16 roundings, * s_b,
 *      <= d/db block adds, * isd, isd itself: ceil(db/16) + d/db + 8 <= 1.5 ceil(d/16) + 9
 *      roundings (db >= 32), integer query: (float)I_b, * s_b, d/db adds, * (s_q isd) and its
 *      two roundings; both inside eL's 2 ceil(d/16) + 24 units of u with l - m and exp.
 *   (b) MEASURED (not bounds; tests/test_kvcache.c test_attention_formats on x86-64, which
 *   prints them): random data, q 2x, K with 2 outlier channels per head at 16x the rest,
 *   d = 64, 200 tokens, GQA 8/2, logits up to ~10, per-token and per-head scales, max |out -
 *   ref| / max|V|: keys (float32 V, integer query) int8 0.021, int4 0.24, E4M3 0.021, E5M2
 *   0.040; values (float32 K) int8 0.0018, int4 0.027, E4M3 0.016, E5M2 0.031. Per-channel
 *   (KIVI, block 8) int8 keys on the outlier data: 0.0096 vs 0.021 per token. Against float64
 *   on the dequantized cache (the arithmetic): float query 5.8e-7 (float32 / fp8 V), 3.5e-5
 *   (int8 / int4 V: the tile weights); the integer query 0.0043. Shorter contexts can measure
 *   more (fewer tokens average less): only (a) is a bound.
 *   TOKEN SPLIT (token_split = T > 0; (a) is proven for T = 0 only: the combine adds per split
 *   one qmx_kv_exp (f), two products and two adds per element, and the per-split sums round
 *   differently; no bound is claimed). Measured (a one-off run, 2026-11-28, x86-64): 8 query
 *   heads / 1 KV head of 128, context 8192, random data as above (one key channel at 8x),
 *   max |out - float64 on the dequantized cache| / max|V|, T = 0 / 64 / 256 / 1024: float32
 *   K and V, float query 5.8e-8 / 9.9e-9 / 6.0e-9 / 1.0e-8 (the splits shorten the long
 *   running sums: more accurate here); int8 K, float32 V, float query 8.6e-8 / 7.9e-9 /
 *   6.0e-9 / 1.1e-8; int8 K and V, float query 6.9e-7 for every T (the tile weights
 *   dominate); integer query 8.4e-5 for every T. The T > 0 outputs differ from T = 0's by at
 *   most 9.1e-8 max|V|. tests/test_kvcache.c test_token_split checks every T > 0 output
 *   against (a)'s formula (as a regression check, not a proof): largest err / bound 0.049
 *   with 2..6 splits, the same as unsplit on the same data.
 *   BLOCK, measured on examples/kv_decode.c's data (32/8 heads of 128, 3 outlier key channels
 *   at 8x, so 3 of 4 blocks of 32 hold one; relative L2 error of the decode outputs against
 *   the float32 cache; `make demo`: context 2048, 128 steps, 2026-11-27): int8 block32 f16
 *   0.011 (dkv 0.014), int4 block32 f16 0.183 (dkv 0.238), int4 block32 f16 + rotate 0.110,
 *   int4 KIVI keys + block32 values 0.201, E4M3 block32 0.025 (dkv 0.046). Issue 19 asked for
 *   a grouped int4 row at <= 1/3 of int4 dkv: NOT reached (best 0.46, rotated). Why (a one-off
 *   measurement on the same data, context 2048, 8 decode steps, float64 attention on caches
 *   dequantized, errors against float64 on the float data): int4 VALUES alone in blocks of 32
 *   give 0.087 (a model of llama.cpp's q4_0: 0.078), already about 1/3 of int4 dkv's total
 *   before any key error; q4_0 on both K and V gives 0.100 (0.42 of int4 dkv). The cache
 *   errors themselves track llama.cpp's (tests/test_kvcache.c test_block_llama, context 320,
 *   checked): RMS error of K / V within 11% of the q4_0 model (q4_0 keeps each block's largest
 *   element exact with its signed scale d = max / -8; qmx's symmetric s = A / 7.5 does not)
 *   and within 4% of q8_0 (B = 127.5 puts the largest element at the saturation edge).
 *
 * EXP (qmx_kv_exp): no libm. n = RNE(x * log2(e)), r = (x - n*C1) - n*C2 (Cody-Waite,
 *   C1 = 0.693359375 exact, C2 = -2.12194440e-4), e^r by a degree-7 polynomial (the classic
 *   Cephes expf coefficients, Horner, each step a rounded float op), times 2^n from the bits.
 *   x > 88.7228 -> +Inf, x < -87.3365 -> +0 (results below FLT_MIN flushed), NaN -> NaN.
 *   Max relative error over [-87.33, 88.72]: 8.1e-8 measured (0.67 ulp); over every float in
 *   [-87.3365, 0] (softmax's range, exhaustively, against glibc's double exp): 8.13e-8. The
 *   tests check <= 2e-7 on 2^21 points against the host libm's double exp. Same bits on
 *   every target.
 *
 * WORKSPACE (qmx_kv_attention_workspace_size(cfg, n_heads)): a pure function of the config
 *   and n_heads: 64 + r64(4*g*capacity) + r64(4*n_heads*head_dim) + r64(4*g*head_dim)
 *   + r64(g*head_dim) + r64(4*g) * 2 + r64(64*head_dim) * 2 + 2048 + r64(132*g),
 *   g = n_heads / n_kv_heads (logits, the staged output, the block query, the int8 query,
 *   query scales and sums, a tile of 16 decoded float rows, a tile of 64 int8 rows (int4
 *   unpacked, or int8 copied across a ring's wrap), two fp8 tables, the integer value weights
 *   P and their scales), plus r64(4*g*head_dim) with rotate (the rotated query), plus
 *   r64(256*g + 4*g*head_dim) with BLOCK values (a tile's block weights [g][64] and the
 *   block-major sums [head_dim / dim_block][g][dim_block]). BLOCK keys stage one token's block
 *   scales in the block query's space and (AVX-512 VNNI) 16 tokens' int32 block dots in the
 *   decoded-row tile. Any alignment. Stack: see SIMD.
 *   Output `out` is written only on success (it is staged in the workspace).
 *   qmx_kv_prefill_workspace_size(cfg, n_heads, n_tokens): the prefill's at full speed, the
 *   above with n_heads * B for n_heads (B = the query block of PREFILL, min(max(1, 32 / g),
 *   n_tokens)), plus 8192 bytes with AVX-512 (one packed value chunk) when B >= 2; B = 1 (the
 *   attention's size) for a config that is never tiled. qmx_kv_prefill accepts any workspace
 *   of at least qmx_kv_attention_workspace_size bytes and takes the largest block it holds
 *   (the bits do not depend on it).
 *   SEVERAL CORES: a task's workspace (qmx_kv_attention_task_workspace_size(cfg, n_heads),
 *   the range calls' minimum) is the above for a config of one KV head and g query heads (g
 *   for n_heads). Through an executor of W >= 2 workers
 *   (qmx_kv_attention_workspace_size_exec(cfg, n_heads, ex, &bytes); NULL or W 0 / 1: the
 *   serial size): 64 + r64(4 * n_heads * head_dim) (the staged output) + r64(n_kv_heads) (a
 *   status byte per task) + W x r64(task workspace), each worker using its own slice; any
 *   alignment. TOKEN SPLIT (opts->token_split = T > 0;
 *   qmx_kv_attention_split_workspace_size(cfg, n_heads, opts, &bytes), which gives the above
 *   for T = 0): 64 + r64(the records of ns_max = ceil(capacity / T) splits: 4 n_kv_heads
 *   ns_max g (head_dim + 2)) + r64(n_kv_heads ns_max) (status bytes) + W' x r64(task
 *   workspace), W' = the executor's workers (>= 2), else 1 (the serial call); any alignment.
 *   The split range calls: qmx_kv_attention_task_workspace_size per call, and the partials
 *   (qmx_kv_attention_split_partials_size, float-aligned).
 *   qmx_kv_prefill_workspace_size_exec(cfg, n_heads, n_tokens, ex, &bytes): the same with
 *   B * n_heads query heads staged and the task workspace of a block of B tokens (one KV
 *   head's R = B g rows, + 8192 with AVX-512 when B >= 2); with an executor qmx_kv_prefill
 *   accepts any workspace of at least the decode's executor size (B = 1) and
 *   takes the largest block whose executor size it holds.
 *
 * PREFILL (qmx_kv_prefill): appends the n_tokens tokens and computes the causal attention of
 *   each token's query (causal_len = its position + 1, opts->window as given; opts->causal_len
 *   must be 0). The result is BIT-IDENTICAL to appending the tokens one at a time and calling
 *   qmx_kv_attention after each (tests/test_kvcache.c test_prefill_tiled compares outputs and
 *   storage bytes with memcmp over every format, axis, query mode, GQA group, window, ring and
 *   workspace size), so the two can be swapped freely; the block size cannot change a bit.
 *   TILED PATH (flash-attention's blocking, with the decode's float order kept per query):
 *   the prompt runs in blocks of B = min(max(1, 32 / g), tokens left) tokens (fewer if the
 *   workspace holds fewer, see WORKSPACE). A block's B tokens are appended, then per KV head
 *   its R = B g query rows (all query heads of the group x the block's tokens) go through the
 *   decode's steps as one query group of R heads: (1) the logits of every row over the keys
 *   [0, hi), hi = the block's last position + 1, one pass over the key tiles (each key read
 *   once per block, not once per token), each element by the decode's own arithmetic (integer
 *   query: exact int32 dot, * (s_q isd), * s_k; float query: dot16); (2) per row, the softmax
 *   of ATTENTION DECODE over that row's own causal prefix [0, p + 1) (max, qmx_kv_exp, sum16
 *   in its lane order), the weights past the prefix set to 0; (3) one pass over the value
 *   tiles with all R rows: float / fp8 values token by token in order, integer values in the
 *   decode's tiles of 64 tokens counted from 0 (its lo) with each row's own 15-bit weights.
 *   A zero weight adds exactly nothing (integer values: zeros do not change a tile's largest
 *   weight, P = 0 adds 0 to the exact sums, a tile wholly past a row's prefix has m = 0 and
 *   adds +0; float values: acc + (+-0) = acc, acc is never -0), so every row gets the bits of
 *   its per-token step. AVX-512 VNNI: the integer-query logits as a GEMM (16 keys transposed
 *   to dwords once per block, vpdpbusd against each row's broadcast query bytes, 8 rows at a
 *   time, no horizontal sums) and the integer value sums with each 64-dim chunk of a tile
 *   widened to int16 token pairs once per block for all rows (vpdpwssd, 4 rows at a time);
 *   other targets run the decode's kernels with the R rows (same bits everywhere).
 *   Which configs are tiled: every K / V format (int8, int4, fp8, float32), the axes
 *   HEADS_AND_DKV and DKV (tested explicitly: any other axis, e.g. KIVI CHANNEL keys or a
 *   future one, takes the per-token loop), both query modes, rotate, linear and ring caches,
 *   for a block whose positions are all < capacity (nothing evicted inside the block: a later
 *   token of a ring block would evict a key an earlier query still sees) and whose rows all
 *   see from position 0 (window 0, or window >= the block's last position + 1). Every other
 *   block (ring past capacity, a window that cuts the prefix, CHANNEL keys) runs the
 *   per-token loop, token by token; the two mix freely within one call.
 *   Measured (bench/bench_kv.c, see README): the integer path is compute-bound already in the
 *   decode on an L3-resident cache (the exact order needs every product: a 512-bit VNNI op per
 *   64 key MACs and per 32 value MACs), so tiling gains little there; the float32 cache,
 *   which the decode streams from DRAM, gains more.
 *   SEVERAL CORES (opts->executor, workers >= 2): the appends run on the calling thread; in
 *   each tiled block, TASK h = KV head h's R = B g rows (steps (1)-(3) above for that head,
 *   the serial call's code, in the worker's own workspace slice, staged); a token outside the
 *   tiled blocks runs the decode's tasks (ATTENTION DECODE, SEVERAL CORES). Rows never mix
 *   heads, so outputs and cache bytes are bit-identical to the serial prefill for any worker
 *   count and order (tests/test_parallel.c compares both with memcmp). The executor and its
 *   workspace (at least the decode's executor size) are checked before anything is appended;
 *   a logit overflow leaves what the serial call leaves (the first failing token over all
 *   heads); a task the executor did not run: QMX_ERR_ARG, left as a failure at the block's
 *   first token.
 *   Errors: all inputs are checked first (an error there appends and writes nothing); only a
 *   logit overflow (a finite but huge query against a huge key: QMX_ERR_NONFINITE) can stop
 *   it midway, at token f (the earliest failing token, whichever KV head fails), and it then
 *   leaves what the per-token loop leaves when its attention for f fails: tokens before f
 *   appended, their outputs written; token f APPENDED (n_tokens counts it: f = n_tokens after
 *   - n_tokens before - 1), its output untouched; the tokens after f not appended (n_tokens
 *   excludes them) and their outputs untouched. (Token f is appended before its attention
 *   runs, and in a ring its append has evicted the oldest token: undoing it would need a copy
 *   of that slot.) One difference in the bytes, none in the cache: the tiled path appends its
 *   whole block first, so the storage slots of the block's tokens after f may hold their data;
 *   they are past n_tokens (read by nothing, rewritten whole by the next append). A caller may
 *   redo f's attention with qmx_kv_attention and prefill the rest.
 *
 * ERRORS (checked before anything is written)
 *   QMX_ERR_NULL    any required pointer NULL
 *   QMX_ERR_SIZE    capacity, n_kv_heads, head_dim, n_tokens or n_heads is 0; head_dim >
 *                   QMX_KV_MAX_HEAD_DIM; attention on an empty cache
 *   QMX_ERR_DTYPE   k/v dtype not one of the five formats
 *   QMX_ERR_ARG     unknown axis / mode; an uninitialised descriptor; layer >= n_layers;
 *                   causal_len > tokens appended; a requested position or window that is not
 *                   in the cache; opts->scale negative, NaN or Inf; read range outside the cache
 *   QMX_ERR_SHAPE   int4 with odd head_dim; QMX_KV_CHANNEL for V; capacity not a multiple of
 *                   channel_block; n_heads not a multiple of n_kv_heads; a quantized BLOCK
 *                   K or V with head_dim not a multiple of dim_block
 *   QMX_ERR_ARG (config) dim_block not 0 / 32 / 64; block_scale not one of the three; a 16-bit
 *                   block_scale with no quantized BLOCK tensor
 *   QMX_ERR_OVERFLOW size_t overflow of a size or of the token count; binary16 block scales
 *                   and an appended |x| > 65504 B (/ head_dim with rotate): nothing appended
 *   QMX_ERR_BUFFER_TOO_SMALL  storage or workspace too small; appending past the capacity of
 *                   a linear cache (nothing is appended)
 *   QMX_ERR_NONFINITE  NaN/Inf in appended keys/values or in the query; a logit that overflows
 *
 * SIMD (compile-time, as qmx.h; every path gives the scalar path's bits, tests/test_kvcache.c
 *   checks a hash of all outputs against the x86-64 value on every target):
 *   AVX-512 VNNI  int8/int4 keys with the integer query, 16 tokens at a time (4 tokens x 4
 *                 heads per tile when g = 4): vpdpbusd on (k + 128) u8 x q8 s8 (exact) -
 *                 128 * sum(q8), the 16 int32 sums reduced together, then the float steps.
 *   AVX-512       float-path keys (float32, fp8, float query, KIVI blocks), 16 tokens at a
 *                 time: each token's 16 lanes as dot16, then the 16 lane sets folded together
 *                 by shuffles in dot16's own tree. exp + sum16; max + finiteness.
 *   fp8 decoding  every fp8 value is sign | a bfloat16, so two 128-byte tables on the code's
 *                 magnitude give it exactly, NaN / Inf / subnormal codes included (the tests
 *                 check all 256 codes of both formats against qmx_fp8_to_f32). AVX-512 VBMI:
 *                 vpermi2b x 2 + vpternlogd (sign) + 4 vpermt2b (bytes to floats): 64 codes
 *                 to 4 vectors in 7 instructions, decoded in registers and each vector used
 *                 for 4 query heads, in the keys' 16-token kernel (4 tokens x 4 heads of dot16
 *                 lanes per pass, then the same tree; any head_dim: lanes past it add +0) and
 *                 in the values' kernel (4 heads x 64 dims, any run of tokens). NEON: tbl on
 *                 the same tables. AVX-512 without VBMI, AVX2: bit placement (x 2^(127 - bias),
 *                 exact), groups holding a NaN / Inf code from the table. Same floats as the
 *                 scalar table, so the float order (and the bits) do not change; the dots stay
 *                 float (an integer dot would drop the per-product rounding that dot16 has).
 *   AVX-512, AVX2, NEON (aarch64): float values in tiles of 64 (16 for fp8) tokens with the
 *                 accumulators of up to 4 query heads x 64 / 16 / 16 dims in registers (each
 *                 element still accumulates over the tokens in order); integer values as
 *                 token pairs interleaved to int16 and vpdpwssd (AVX-512 VNNI) or vpmaddwd,
 *                 or vmlal_n_s16 (NEON), 4 heads x 64 / 16 / 16 dims of int32 sums in
 *                 registers; int8 dot (NEON dotprod when targeted), dot16, axpy; AVX2: exp
 *                 + sum16.
 *   RVV 1.0       (vector-length agnostic) the keys' int8 dot in vsetvl strips (vwmul +
 *                 tail-undisturbed vwadd.wv, one vredsum) and the integer value sums in strips
 *                 of up to 64 dims x 4 heads (vwmacc.vx with P[t]); their float steps and every
 *                 float loop stay portable C (same order, same bits at any VLEN).
 *   BLOCK scales (QMX_KV_BLOCK) reuse the kernels above with the same order on every path:
 *                 keys per token and block through the int8 dot / dot16 of each path (AVX-512,
 *                 AVX2, NEON, RVV, portable), plus on AVX-512 VNNI a 16-token kernel: one
 *                 vpdpbusd per (token, head, 64 bytes), 16 vectors reduced by three levels of
 *                 the hsum tree into the two 32-element halves of each (a fourth level for
 *                 blocks of 64), exact, then the per-block float steps in scalar C; on AVX-512
 *                 VBMI fp8 keys 16 tokens x 4 heads per block in registers (the fp8 keys'
 *                 kernel over the block's codes); values per block of columns through the
 *                 integer / float value tiles of each path (on AVX-512 a block of 32 runs
 *                 256-bit vpmaddwd on 16 columns at a time; VBMI: fp8 decoded in registers).
 *                 int4 rows are unpacked by SSE2 / NEON (16 bytes at a time) for every axis.
 *                 Not vectorised: the 16-bit scale decoding and the block weights w_b.
 *   int4 is unpacked to int8 (64 rows at a time for values, 16 for keys): SSE2 / NEON, the
 *   tail in portable C.
 *   Stack: the portable path uses under 512 bytes (the VNNI block-key kernel: 384 more); the AVX-512 kernels hold up to 36 vector
 *   locals (2304 bytes if the compiler spills them); RVV's value sums add 1 KiB (4 x 64 int32).
 * SPEED (make bench, bench/bench_kv.c: context 4096, 32/8 heads, d 128, one core of this
 *   project's shared AMD EPYC VM): see README.md for the figures of the latest run. The int8
 *   step reads its 8 MiB (which fit the 32 MiB L3) faster than the 64 MiB (DRAM) read stream
 *   would deliver them only because the keys' integer dots and the integer value sums leave
 *   little float work: the softmax, one conversion and two float steps per element per tile.
 *   fp8 and float32 values keep the per-token float order (two float ops per element per
 *   query head, no FMA so that every target gives the same bits). fp8 therefore has a floor
 *   that int8 does not: keys and values each take one rounded multiply and one rounded add per
 *   (query head, token, element), 2 x 16.8 M of each at the bench shape, at best one 512-bit
 *   multiply and one add per cycle on Zen 4: 2.1 M cycles, about 0.58 ms at 3.6 GHz, before
 *   decoding (7 instructions per 64 codes) and the dot16 trees (45 per 16 dots). Measured
 *   (2026-11-27, Zen 4 VM shared with other jobs, load 5.5-7.8): make bench E4M3FN / E5M2
 *   3.3x / 3.4x float32, alternating reps 2.5-2.7x, 1.5-2.4x int8's step time (the element-
 *   wise decoding before, same conditions: 1.5-1.9x float32, 3.3-4.2x int8's time; 1.4x at
 *   load 0.3). The 4x-float32 aim is not met (README.md).
 * Not done: a 16-token K kernel for AVX2 / NEON (their fp8 rows are decoded by vector, then
 *   dot16 per head); BLOCK keys outside AVX-512 VNNI / VBMI (and BLOCK int keys with the float
 *   query) run per token and block (the int8 dot / dot16 of each path, not across tokens); SIMD for the Hadamard transform; batch > 1 (call per sequence); threads.
 *
 * ============================================================================================
 * BLOCK-SCALED WEIGHTS (qmx_matmul_blockw_f32, qmx_matmul_mxfp8_f32, qmx_matmul_blockw_dyn_i8;
 *   tests/test_matmul_mx.c; private prefixes qmx__bw_, qmx__bwd_)
 *   Correct and portable first (one portable C path on every target; no SIMD yet).
 *
 * WEIGHTS (qmx_blockw): a matrix [rows][K] stored exactly as qmx.h writes it, blocks along K.
 *   kind QMX_BLOCKW_MX: mx = the qmx_mx_config of qmx_mx_quantize (any format and rule),
 *     data = its elements (data_bytes >= their storage), scale_codes = its scale codes
 *     (n_scales >= rows * nblk); the resolved view must be [rows][K][1] (all-zero view: only
 *     for rows == 1), else QMX_ERR_SHAPE. A ragged last block is allowed where the config is.
 *   kind QMX_BLOCKW_QCONFIG: qc = the qmx_qconfig of qmx_quantize (any dtype qmx_dequantize
 *     takes: int2 .. int16, uint2 .. uint16, nf4, fp8), data = the q storage, scales (float,
 *     finite and > 0) and zero_points (NULL, or one per scale in the dtype's range, as
 *     qmx_dequantize reads them), n_scales entries. Views: QMX_PER_BLOCK [rows][K][1] (blocks
 *     along K, a ragged tail allowed), QMX_PER_CHANNEL [1][rows][K] (a scale per row),
 *     QMX_PER_TENSOR any view of rows*K elements; else QMX_ERR_SHAPE.
 *   Packed rows (2 and 4 bits) need not start on a byte (odd K): the flat element index.
 *
 * F32 ACTIVATIONS: qmx_matmul_blockw_f32(M, N, K, A, lda, &w, Y, ldy, workspace, bytes)
 *   A [M][K] float, row m at A + m*lda (lda >= K); w with rows = N; Y [M][N] float, row m at
 *   Y + m*ldy (ldy >= N; the padding is not written). FLOAT ORDER, for each n:
 *     Wdq = row n of W dequantized by qmx_mx_dequantize / qmx_dequantize on that row's own view
 *           ([1][K][1], the row's scales and zero points): exactly the bits those functions
 *           give for the whole matrix (each element is element * scale of its block);
 *     for each m:  sum = +0.0f;
 *                  for k = 0, 1, ..., K-1 (increasing):  p = A[m][k] * Wdq[k];  sum = sum + p;
 *                  Y[m][n] = sum   (a NaN is written as 0x7FC00000)
 *   every step one IEEE binary32 operation rounded to nearest even; FMA contraction is off in
 *   that function (as qmx_matmul_i8_f32: GCC optimize("fp-contract=off"), clang's pragma and
 *   an empty asm); x87 / s390x round each assignment under -std=c99. So Y is the same bits on
 *   every target and build. Non-finite A (and NaN / Inf weights: MX NaN scale codes, E5M2 Inf
 *   elements) are not errors: they propagate by IEEE arithmetic, and NaN outputs are
 *   canonicalized so that no target's NaN payload shows. Accuracy: |Y - sum_k A*Wdq| <=
 *   (K + 2) * 2^-24 * sum_k |A*Wdq| (+ underflow), as the tests check in double.
 *   WORKSPACE: qmx_matmul_blockw_f32_workspace_size(M, N, K, &bytes) =
 *       64 + r64(4*K) + r64((K + 1) / 2)
 *   (alignment, one dequantized row, one packed row copied to start on a byte). Any alignment.
 *   Cost: each weight row is dequantized once per call; A is read N times (no tiling yet).
 *
 * MXFP8 x MXFP8 (OCP MX dot product): qmx_matmul_mxfp8_f32(M, N, K, &a, &b, Y, ldy)
 *   a [M][K] and b [N][K], both QMX_BLOCKW_MX with format QMX_MXFP8_E4M3 or _E5M2 (any mix),
 *   the same resolved block length bs (default 32; a ragged last block allowed) along K. Per
 *   output, with block j of elements a_k, b_k (decoded exactly) and E8M0 codes sa, sb:
 *     S_j = sum_k a_k * b_k EXACTLY: every fp8 value is q 2^e with an integer q <= 15 and
 *       e >= -16, so each product is an integer multiple of 2^-32 below 2^32, i.e. below 2^64
 *       in those units (E5M2 x E5M2: q <= 49 shifted by <= 58); the products are added as
 *       integers in a 128-bit accumulator (two uint64). Each product alone is exact in
 *       float32 (<= 8 significant bits, 2^-32 .. 2^31.6), but their sum is not: 32 of them
 *       span up to 2^-32 .. 2^36.6 (E4M3 x E4M3 up to 41 bits, E5M2 x E5M2 up to 69);
 *     v_j = RN_f32(S_j * 2^(sa + sb - 254)): ONE rounding, nearest even, subnormals and
 *       overflow to +-Inf included (equal to RN(S_j) * 2^(sa + sb - 254) whenever that is
 *       normal); an exact zero is +0;
 *     Y = +0.0f; Y = Y + v_j for j = 0, 1, ... (increasing, float32).
 *   NaN / Inf: a scale code 0xFF (E8M0 NaN) on either side or a NaN element makes v_j NaN;
 *   an E5M2 Inf element times a nonzero is +-Inf, times 0 NaN, and +Inf with -Inf in one block
 *   NaN; the sum is IEEE; a NaN output is written as 0x7FC00000. The rule of the configs is
 *   validated but not used: codes are read as OCP MX (Qwix's 0xFF, an Inf scale in
 *   qmx_mx_dequantize, is NaN here). No workspace; integer work, same bits everywhere.
 *
 * INT8 ACTIVATIONS ON THE FLY: qmx_matmul_blockw_dyn_i8(M, N, K, X, ldx, &w, opts, Y, ldy,
 *   workspace, bytes) (issue 15 section 4: MXFP4 / NVFP4 / MXFP8 / nf4 / int2 ... weights x int8
 *   activations, ggml Q8 / XNNPACK qd8 style)
 *   X [M][K] float, row m at X + m*ldx (ldx >= K); w any weights qmx_matmul_blockw_f32 takes,
 *   rows = N; Y [M][N] float, row m at Y + m*ldy (ldy >= N; the padding is not written).
 *   opts (NULL or zero-initialised: the defaults): act_block = 0, one activation scale per
 *   row; else one per block of act_block along K (the last may be shorter; >= K: per row).
 *   ACTIVATIONS: every activation block of every row (all K elements when per row) is
 *     quantized as qmx_matmul_f32_dyn_i8 quantizes a row, with qmx.h (qmx_compute_qparams +
 *     qmx_quantize: int8, per tensor, TFLite recipe, nearest-even): sx = f32(absmax / 127)
 *     (1 for an all-zero block), q = clamp(RNE(f32(x / sx)), -127, 127).
 *   WEIGHTS AS INTEGERS: element k of row n is w = e 2^-U sw: e an integer (exact), U the
 *     format's unit, sw its block's float scale. e and U (max |e| for the bounds below):
 *       MXFP4, NVFP4 (E2M1)           2 x value: 0 1 2 3 4 6 8 12, signed    U = 1   12
 *         rule QMX_MX_GGML            ggml's kvalues (the same integers)     U = 0   12
 *       MXFP6 E2M3 / E3M2             8 x value / 16 x value                 U = 3/4 60 / 448
 *       MXFP8 E4M3, qc FP8_E4M3FN     2^9 x value                            U = 9   14 * 2^14
 *       MXFP8 E5M2, qc FP8_E5M2       2^16 x value                           U = 16  7 * 2^29
 *       qc FP8_E4M3FNUZ / E5M2FNUZ    2^10 x value / 2^17 x value            U = 10/17  15 * 2^14
 *                                                                                    / 7 * 2^30
 *       MXINT8                        the int8 code                          U = 6   128
 *       qc int2 .. int16, uint2 .. uint16   q - zero point (when qmx_dequantize
 *                                     applies one; int3 .. int7: the raw int8) U = 0 255, 16-bit:
 *                                                                                    65535
 *       qc nf4                        2^27 x table[code] (every value of the U = 27  2^27
 *                                     table is 0 or >= 2^-4 in magnitude: a multiple of 2^-27)
 *     (an fp code with E exponent bits, M mantissa bits and bias B: e = m for exponent field
 *     0, else (2^M + m) << (field - 1), U = B + M - 1; bit for bit the value qmx.h decodes)
 *     sw, the block's scale exactly as qmx_mx_dequantize / qmx_dequantize use it: E8M0 code c
 *     2^(c - 127), 0xFF NaN (rules FLOOR, CEIL, EVEN, RCEIL, MICROXCALING); QMX_MX_QWIX (not
 *     NVFP4): 2^(c - 127), c = 0 -> +0, 0xFF -> +Inf; ggml MXFP4 2^(c - 128) (0xFF: 2^127);
 *     NVFP4: the E4M3 value of the code (0x7F / 0xFF NaN; negative with the sign bit), then
 *     f32(tensor_scale * it) when tensor_scale != 0 and it is not NaN; ggml NVFP4 f32(UE4M3
 *     / 2) (0x00, 0x7F -> 0); qconfig: scales[] of the block (per block), of the row (per
 *     channel) or scales[0] (per tensor).
 *     Non-finite elements: E4M3FN 0x7F / 0xFF (NaN), E5M2 exponent 31 (Inf, NaN), FNUZ 0x80.
 *   FLOAT ORDER, for each m, n. SEGMENTS: K is cut at every multiple of the weight block
 *     length (K for per-channel / per-tensor qconfig weights) and of the activation block
 *     length, so each segment lies in one weight block b and one activation block j:
 *       Y = +0.0f
 *       for each segment s = [k0, k1), k0 = 0, ..., in increasing order:
 *         I = sum_{k in s} q[m][k] * e[n][k]     EXACT (integers, bound below)
 *         p = RN_f32(I * 2^-U)                   one rounding, nearest-even, done in integers
 *                                                (no target's int -> float conversion); I = 0
 *                                                gives +0; it never overflows or underflows
 *         p = p * sw(n, b)
 *         p = p * sx(m, j)
 *         Y = Y + p
 *       Y[m][n] = Y   (a NaN is written as 0x7FC00000)
 *     every float step one IEEE binary32 operation rounded to nearest even; FMA contraction
 *     is off in that function (GCC optimize("fp-contract=off"), clang's pragma and an empty
 *     asm on p after each product), x87 / s390x round each assignment under -std=c99, so Y is
 *     the same bits on every target and build (not -ffast-math, not x87 -std=gnu99). The
 *     weight scale comes first: an E8M0 sw is a power of two, so p * sw is exact unless it
 *     leaves the normal range, and an MX block costs two roundings and one addition.
 *     A segment holding a non-finite weight element has p = the IEEE value of sum q * w over
 *     it: NaN if an element is NaN, or an Inf meets q = 0, or +Inf and -Inf products meet;
 *     else +-Inf (the Inf's sign times q's); the finite elements do not matter. The scale
 *     steps and the sum then follow IEEE (NaN scales, Qwix's +Inf and +0 scales, negative
 *     NVFP4 scales included), as qmx_matmul_blockw_f32 lets them propagate.
 *   EXACTNESS: |q| <= 127 and |e| <= 7 * 2^30 (the table), so |q e| < 2^39.8. Products are
 *     summed in int64 in chunks of at most 2^20 (|chunk| < 2^59.8 < 2^63) and the chunks in a
 *     128-bit two's complement accumulator (|I| < 2^39.8 * 2^64 < 2^104 for any K); RN_f32
 *     then takes the magnitude's top 24 bits, rounded with the rest. (For faster paths: |I| <=
 *     127 * max|e| * segment length, e.g. MXFP4 x blocks of 32: 48768 < 2^16; MXFP6 E3M2:
 *     1820672 and MXFP8 E4M3: 932184064, both < 2^31; MXFP8 E5M2 needs more than int32.)
 *   Accuracy: Y approximates sum_k (q sx)(e 2^-U sw), the dot product of the dequantized
 *     activations with the exactly dequantized weights: |Y - that| <= (nseg + 3) 2^-24
 *     sum_s |I_s 2^-U sw sx| (+ underflow; nseg = number of segments), as the tests check.
 *   WORKSPACE: qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, opts, &bytes) =
 *       64 + r64(4 * mb * nab) + r64(8 * K) + r64(mb * K),    mb = min(M, 64),
 *     nab = ceil(K / act_block) (1 when act_block is 0 or >= K): the activation scales of a
 *     panel of mb rows, one weight row decoded to int64, the panel's int8 rows. Any alignment.
 *     How: every activation block's scale is computed and checked first (nothing is written
 *     on error; X is read again to quantize), then per panel of mb rows: quantize them, and
 *     per weight row n, decode it once and compute the panel's outputs in column n. Stack
 *     (GCC -fstack-usage): the entry point 784 bytes with its inlined helpers on x86-64, 480
 *     on Cortex-M4, plus qmx_quantize's below it (536 on Cortex-M4, 1232 in the AVX-512
 *     build). One portable C path on every target, no SIMD yet.
 *   SEVERAL CORES (USING SEVERAL CORES): qmx_matmul_blockw_dyn_i8_run / qmx_matmul_blockw_f32_run
 *     (the arguments, task_begin, task_end, workspace, workspace_bytes: tasks of
 *     qmx_matmul_tasks(M, N), tiles of 64 rows x 256 columns, with the workspace of a 64 x 256
 *     call) and _exec (..., executor, workspace, workspace_bytes; NULL or workers 0 / 1: the
 *     serial call; workers x r64(tile workspace) through qmx_par_workspace_size). A tile
 *     decodes its own weight rows and (dyn_i8) quantizes its own X rows by the serial code, so
 *     Y has the serial call's bits for any worker count and order. The errors above (the
 *     weights' and every X row's for _exec; the rows of its own tasks for _run), then the
 *     range (QMX_ERR_ARG) and workspace (QMX_ERR_BUFFER_TOO_SMALL), all before anything is
 *     written. qmx_matmul_mxfp8_f32_run(M, N, K, a, b, Y, ldy, task_begin, task_end) and
 *     _exec(..., executor) (no workspace; NULL or workers 0 / 1: the serial call): the same
 *     tiles, each output by the serial code from its row of a and row of b, so the serial
 *     bits; every operand error, then the range (QMX_ERR_ARG), before any task.
 *
 * ERRORS (checked before anything is written; Y and the workspace untouched on error)
 *   QMX_ERR_NULL              A / X, w / a / b, Y, workspace, mx / qc, data, scale_codes /
 *                             scales NULL; zero_points NULL with qc->asymmetric (opts NULL:
 *                             the defaults)
 *   QMX_ERR_ARG               kind not QMX_BLOCKW_MX / _QCONFIG; a scale 0, negative, NaN, Inf;
 *                             a zero point outside the dtype; the configs' own ARG errors;
 *                             dyn_i8: an activation block whose absmax / 127 underflows to 0
 *                             (0 < absmax < ~1.8e-43)
 *   QMX_ERR_NONFINITE         dyn_i8: a NaN or Inf among the K elements of a row of X (every
 *                             act_block is valid: 0 and values >= K mean one block per row)
 *   QMX_ERR_SIZE              M, N or K is 0 (and the configs' SIZE errors)
 *   QMX_ERR_OVERFLOW          size_t overflow of (M-1)*lda + K (ldx), of the Y extent in bytes,
 *                             of N*K, of the workspace
 *   QMX_ERR_SHAPE             lda / ldx < K, ldy < N; a view that is not the matrix (above);
 *                             mxfp8: block lengths that differ
 *   QMX_ERR_BUFFER_TOO_SMALL  data_bytes, n_scales or workspace_bytes too small
 *   QMX_ERR_DTYPE, QMX_ERR_UNSUPPORTED  as qmx_mx_storage / qmx_qparams_count for the
 *                             config; mxfp8: an operand that is not MXFP8 (or a qconfig)
 *
 * ============================================================================================
 * MIT licensed (see qmx.h).
 * ============================================================================================ */
#ifndef QMX_KERNELS_H
#define QMX_KERNELS_H
#include "qmx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- int8 matmul, output stages, packed weights, dynamic path ------------------------------ */

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
    const qmx_executor *executor; /* NULL (default): serial; see USING SEVERAL CORES */
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
/* TFLite / CMSIS-NN fully-connected: out = requant((A - a_zp) x (W - w_zp)^T + bias) (see
 * FULLY-CONNECTED; w_zp = rq->weight_zero_point, 0 by default).
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

/* ---- prepacked weights (PACKED WEIGHTS) ---------------------------------------------------- */
#define QMX_MATMUL_I8_PACK_HEADER 64 /* bytes of the blob header */
/* Bytes of the packed blob of [N,K] weights: 64 + 4*Np + Np*Kp, Np = N rounded up to 16,
 * Kp = K rounded up to 4. Errors: NULL bytes, N/K = 0 (SIZE), K > QMX_MATMUL_I8_MAX_K or
 * N > 2^32 - 16 or size_t overflow (OVERFLOW). */
QMX_API qmx_status qmx_matmul_i8_pack_weights_size(size_t N, size_t K, size_t *bytes);
/* Packs B (either layout, as qmx_matmul_i8 reads it) with its weight sums into the blob. */
QMX_API qmx_status qmx_matmul_i8_pack_weights(const int8_t *B, size_t N, size_t K, size_t ldb,
                                              qmx_b_layout layout, void *packed,
                                              size_t packed_bytes);
/* Workspace bytes of qmx_matmul_i8_packed (see PACKED WEIGHTS). */
QMX_API qmx_status qmx_matmul_i8_packed_workspace_size(size_t M, size_t N, size_t K,
                                                       size_t *bytes);
/* C = (A - a_zp)(B - b_zp)^T on packed B: the same int32 bits as qmx_matmul_i8 (opts a_zp,
 * b_zp; b_layout, b_sums and b_sums_len are ignored: the blob carries B's layout and sums). */
QMX_API qmx_status qmx_matmul_i8_packed(size_t M, size_t N, size_t K, const int8_t *A,
                                        size_t lda, const void *packed, size_t packed_bytes,
                                        int32_t *C, size_t ldc, const qmx_matmul_i8_opts *opts,
                                        void *workspace, size_t workspace_bytes);

/* Workspace bytes of qmx_fully_connected_i8_packed (see PACKED WEIGHTS). */
QMX_API qmx_status qmx_fully_connected_i8_packed_workspace_size(size_t M, size_t N, size_t K,
                                                                size_t *bytes);
/* qmx_fully_connected_i8 on packed weights (packed from the raw W [N,K]; the weight zero point
 * is rq->weight_zero_point, as there): the same output bits, the same rq semantics and errors
 * (plus the blob's, as qmx_matmul_i8_packed). */
QMX_API qmx_status qmx_fully_connected_i8_packed(size_t M, size_t N, size_t K, const int8_t *A,
                                                 size_t lda, int32_t a_zp, const void *packed,
                                                 size_t packed_bytes,
                                                 const qmx_requant_config *rq, void *out,
                                                 size_t ldo, void *workspace,
                                                 size_t workspace_bytes);

/* qmx_matmul_i8_f32 (dequant-on-output, the same float bits) on packed symmetric weights;
 * scales->block_size must be a multiple of 4 or >= K (else QMX_ERR_UNSUPPORTED). Workspace:
 * qmx_fully_connected_i8_packed_workspace_size (the same size). */
QMX_API qmx_status qmx_matmul_i8_f32_packed(size_t M, size_t N, size_t K, const int8_t *A,
                                            size_t lda, const void *packed, size_t packed_bytes,
                                            float *C, size_t ldc,
                                            const qmx_matmul_i8_f32_scales *scales,
                                            void *workspace, size_t workspace_bytes);

/* ---- dynamic quantization of float activations (DYNAMIC) ------------------------------------ */
/* Workspace bytes of qmx_matmul_f32_dyn_i8 (see DYNAMIC). */
QMX_API qmx_status qmx_matmul_f32_dyn_i8_workspace_size(size_t M, size_t N, size_t K,
                                                        size_t *bytes);
/* Y[m][n] = (float)acc[m][n] * sx[m] * w_scales[n] with acc the exact int32 dot of the row of X
 * quantized to int8 on the fly (symmetric, per row, sx[m] = absmax/127, nearest-even) and the
 * packed symmetric int8 weights; w_scales has w_scales_len >= N (per channel) or 1 entries. */
QMX_API qmx_status qmx_matmul_f32_dyn_i8(size_t M, size_t N, size_t K, const float *X,
                                         size_t ldx, const void *packed, size_t packed_bytes,
                                         const float *w_scales, size_t w_scales_len, float *Y,
                                         size_t ldy, void *workspace, size_t workspace_bytes);

/* ---- using several cores: range-split int8 kernels (USING SEVERAL CORES) -------------------- */
#define QMX_TASK_M 64   /* rows of output per task */
#define QMX_TASK_N 256  /* columns of output per task (a multiple of the packed panels' 16) */
/* Tasks of an M x N output: ceil(M / QMX_TASK_M) * ceil(N / QMX_TASK_N); task t is the tile of
 * rows from QMX_TASK_M * (t / nc) and columns from QMX_TASK_N * (t % nc), nc = ceil(N /
 * QMX_TASK_N). Errors: NULL n_tasks, M or N 0 (SIZE). */
QMX_API qmx_status qmx_matmul_tasks(size_t M, size_t N, size_t *n_tasks);
/* Workspace of a call through ex: serial_bytes when ex is NULL or has 0 / 1 workers, else
 * workers slices of task_bytes rounded up to 64. Errors: NULL bytes, workers < 0 (ARG),
 * overflow. */
QMX_API qmx_status qmx_par_workspace_size(const qmx_executor *ex, size_t serial_bytes,
                                          size_t task_bytes, size_t *bytes);
/* Range calls: the arguments of the entry point, then tasks [task_begin, task_end) of
 * qmx_matmul_tasks(M, N) and one worker's workspace (at least the entry point's workspace size
 * for min(M, QMX_TASK_M) x min(N, QMX_TASK_N); more lets consecutive tiles run as one call).
 * Only those tasks' outputs are written, with the serial call's bits. The executor of opts /
 * rq is ignored here. Errors: the entry point's (whole call), then task_begin > task_end or
 * task_end > n_tasks (ARG), workspace too small (BUFFER_TOO_SMALL); nothing written. */
QMX_API qmx_status qmx_matmul_i8_run(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                     const qmx_matmul_i8_opts *opts, size_t task_begin,
                                     size_t task_end, void *workspace, size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_i8_packed_run(size_t M, size_t N, size_t K, const int8_t *A,
                                            size_t lda, const void *packed, size_t packed_bytes,
                                            int32_t *C, size_t ldc,
                                            const qmx_matmul_i8_opts *opts, size_t task_begin,
                                            size_t task_end, void *workspace,
                                            size_t workspace_bytes);
QMX_API qmx_status qmx_fully_connected_i8_run(size_t M, size_t N, size_t K, const int8_t *A,
                                              size_t lda, int32_t a_zp, const int8_t *W,
                                              size_t ldw, const qmx_requant_config *rq,
                                              void *out, size_t ldo, size_t task_begin,
                                              size_t task_end, void *workspace,
                                              size_t workspace_bytes);
QMX_API qmx_status qmx_fully_connected_i8_packed_run(size_t M, size_t N, size_t K,
                                                     const int8_t *A, size_t lda, int32_t a_zp,
                                                     const void *packed, size_t packed_bytes,
                                                     const qmx_requant_config *rq, void *out,
                                                     size_t ldo, size_t task_begin,
                                                     size_t task_end, void *workspace,
                                                     size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_i8_f32_run(size_t M, size_t N, size_t K, const int8_t *A,
                                         size_t lda, const int8_t *B, size_t ldb, float *C,
                                         size_t ldc, const qmx_matmul_i8_f32_scales *scales,
                                         size_t task_begin, size_t task_end, void *workspace,
                                         size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_i8_f32_packed_run(size_t M, size_t N, size_t K, const int8_t *A,
                                                size_t lda, const void *packed,
                                                size_t packed_bytes, float *C, size_t ldc,
                                                const qmx_matmul_i8_f32_scales *scales,
                                                size_t task_begin, size_t task_end,
                                                void *workspace, size_t workspace_bytes);
/* The range call checks the rows of its own tasks for NaN / Inf (QMX_ERR_NONFINITE) before it
 * writes; qmx_matmul_f32_dyn_i8_exec checks every row before the first task. */
QMX_API qmx_status qmx_matmul_f32_dyn_i8_run(size_t M, size_t N, size_t K, const float *X,
                                             size_t ldx, const void *packed, size_t packed_bytes,
                                             const float *w_scales, size_t w_scales_len,
                                             float *Y, size_t ldy, size_t task_begin,
                                             size_t task_end, void *workspace,
                                             size_t workspace_bytes);
/* qmx_matmul_f32_dyn_i8 through an executor (it has no option struct); NULL: serial. */
QMX_API qmx_status qmx_matmul_f32_dyn_i8_exec(size_t M, size_t N, size_t K, const float *X,
                                              size_t ldx, const void *packed,
                                              size_t packed_bytes, const float *w_scales,
                                              size_t w_scales_len, float *Y, size_t ldy,
                                              const qmx_executor *executor, void *workspace,
                                              size_t workspace_bytes);

/* ---- low-bit matmul: int4 weights, fp8 ----------------------------------------------------- */

/* Largest K of the int4 matmuls (see OVERFLOW BOUND). */
#define QMX_MATMUL_I4_MAX_K 561433

/* Parameters of the int4 matmuls; zero-initialised = int8 A with zero point 0, signed int4 W,
 * one block over K, no scales (the f32 variant needs them). */
typedef struct qmx_matmul_i4_params {
    qmx_dtype a_dtype;        /* 0 or QMX_INT8: int8 A; QMX_INT4: packed int4 A */
    int32_t a_zp;             /* zero point of A (int8: [-128, 127]; int4: [-8, 7]) */
    qmx_dtype w_dtype;        /* 0 or QMX_INT4 (symmetric); QMX_UINT4 (with zero points) */
    int32_t w_zp;             /* uint4 per-tensor zero point in [0, 15] (w_zps == NULL) */
    const uint8_t *w_zps;     /* uint4 per-block zero points [N][nblk], or NULL */
    size_t w_zps_len;         /* entries in w_zps (>= N*nblk) */
    size_t block_size;        /* K-block length; 0 = K (one block) */
    /* qmx_matmul_i4_f32 only: */
    const float *a_scales;    /* [M][nblk] when a_per_row, else [nblk] */
    size_t a_scales_len;
    int a_per_row;
    const float *w_scales;    /* [N][nblk] when w_per_col, else [nblk] */
    size_t w_scales_len;
    int w_per_col;
} qmx_matmul_i4_params;

/* Workspace bytes of the int4 matmuls (see WORKSPACE). params may be NULL (one block). */
QMX_API qmx_status qmx_matmul_i4_workspace_size(size_t M, size_t N, size_t K,
                                                const qmx_matmul_i4_params *params,
                                                size_t *bytes);
/* Exact int32: C = sum_k (A - a_zp)(W - w_zp). params NULL: the defaults. */
QMX_API qmx_status qmx_matmul_i4(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                 const uint8_t *W, size_t ldw, int32_t *C, size_t ldc,
                                 const qmx_matmul_i4_params *params, void *workspace,
                                 size_t workspace_bytes);
/* Float: per-block partials dequantized in the documented order (scales in params). */
QMX_API qmx_status qmx_matmul_i4_f32(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                     const uint8_t *W, size_t ldw, float *C, size_t ldc,
                                     const qmx_matmul_i4_params *params, void *workspace,
                                     size_t workspace_bytes);
/* CMSIS-NN s4 fully-connected: int8 A (zero point a_zp), signed int4 W [N,K] (zero point
 * rq->weight_zero_point in [-8, 7], 0 by default), output stage rq as qmx_fully_connected_i8.
 * Workspace: qmx_matmul_i4_workspace_size(M, N, K, NULL, &b). */
QMX_API qmx_status qmx_fully_connected_i4(size_t M, size_t N, size_t K, const int8_t *A,
                                          size_t lda, int32_t a_zp, const uint8_t *W,
                                          size_t ldw, const qmx_requant_config *rq, void *out,
                                          size_t ldo, void *workspace, size_t workspace_bytes);

/* int4 weights (LOW-BIT MATMUL): the same range calls; the executor of
 * qmx_fully_connected_i4 is rq->executor (qmx_matmul_i4_params has none). */
QMX_API qmx_status qmx_matmul_i4_run(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                     const uint8_t *W, size_t ldw, int32_t *C, size_t ldc,
                                     const qmx_matmul_i4_params *params,
                                     size_t task_begin, size_t task_end, void *workspace,
                                     size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_i4_f32_run(size_t M, size_t N, size_t K, const void *A,
                                         size_t lda, const uint8_t *W, size_t ldw, float *C,
                                         size_t ldc, const qmx_matmul_i4_params *params,
                                         size_t task_begin, size_t task_end, void *workspace,
                                         size_t workspace_bytes);
QMX_API qmx_status qmx_fully_connected_i4_run(size_t M, size_t N, size_t K, const int8_t *A,
                                              size_t lda, int32_t a_zp, const uint8_t *W,
                                              size_t ldw, const qmx_requant_config *rq,
                                              void *out, size_t ldo, size_t task_begin,
                                              size_t task_end, void *workspace,
                                              size_t workspace_bytes);

/* Formats and scales of qmx_matmul_fp8_f32 (zero-initialised: E4M3FN x E4M3FN, no scales). */
typedef struct qmx_matmul_fp8_params {
    qmx_dtype a_fmt;          /* 0 or QMX_FP8_E4M3FN, or QMX_FP8_E5M2 */
    qmx_dtype b_fmt;          /* 0 or QMX_FP8_E4M3FN, or QMX_FP8_E5M2 */
    const float *a_scales;    /* [M] when a_per_row, else [1] */
    size_t a_scales_len;
    int a_per_row;
    const float *b_scales;    /* [N] when b_per_col, else [1] */
    size_t b_scales_len;
    int b_per_col;
} qmx_matmul_fp8_params;

QMX_API qmx_status qmx_matmul_fp8_f32_workspace_size(size_t M, size_t N, size_t K,
                                                     size_t *bytes);
/* C = (sum_k A*B in the documented order) * sa * sb; B is [N,K] (weights). */
QMX_API qmx_status qmx_matmul_fp8_f32(size_t M, size_t N, size_t K, const uint8_t *A,
                                      size_t lda, const uint8_t *B, size_t ldb, float *C,
                                      size_t ldc, const qmx_matmul_fp8_params *params,
                                      void *workspace, size_t workspace_bytes);
/* Range calls (USING SEVERAL CORES): the non-finite scans cover the rows of A and B of the
 * call's own tasks (checked before it writes). */
QMX_API qmx_status qmx_matmul_fp8_f32_run(size_t M, size_t N, size_t K, const uint8_t *A,
                                          size_t lda, const uint8_t *B, size_t ldb, float *C,
                                          size_t ldc, const qmx_matmul_fp8_params *params,
                                          size_t task_begin, size_t task_end, void *workspace,
                                          size_t workspace_bytes);

/* ---- einsum -------------------------------------------------------------------------------- */

#define QMX_EINSUM_MAX_RANK 8   /* dims per operand and output */
#define QMX_EINSUM_MAX_SPEC 256 /* characters of a spec */

typedef enum qmx_einsum_scaling {
    QMX_EINSUM_SCALE_TENSOR = 0,       /* scales[0] */
    QMX_EINSUM_SCALE_CHANNEL = 1,      /* scales[c] along channel_axis */
    QMX_EINSUM_SCALE_BLOCK = 2,        /* scales[j] along block_axis in blocks of block_size */
    QMX_EINSUM_SCALE_CHANNEL_BLOCK = 3 /* scales[c * nblk + j] */
} qmx_einsum_scaling;

typedef struct qmx_einsum_operand {
    qmx_dtype dtype;                   /* 0 = QMX_FLOAT32; int2..int8, uint2, uint4, fp8, fp6,
                                          fp4, nf4 (see OPERANDS) */
    int rank;                          /* 0 .. QMX_EINSUM_MAX_RANK */
    size_t shape[QMX_EINSUM_MAX_RANK]; /* dims, all >= 1 */
    const void *data;                  /* dense row-major tensor */
    size_t data_bytes;                 /* bytes readable at data */
    const float *scales;               /* NULL: per tensor 1.0 (int, fp8 only) */
    size_t scales_len;                 /* entries at scales */
    qmx_einsum_scaling scaling;        /* default per tensor */
    int channel_axis;                  /* operand axis of per-channel scales */
    int block_axis;                    /* operand axis of per-block scales (contracted) */
    size_t block_size;                 /* block length along block_axis */
    int32_t zero_point;                /* int operands: real = (q - zero_point) * scale */
    /* Block-scaled (MX / NVFP4) operand; NULL = none. data = the elements of qmx_mx_quantize,
     * scale_codes = its scale codes, blocks along the contracted axis block_axis. */
    const qmx_mx_config *mx;
    const uint8_t *scale_codes;        /* mx only: the E8M0 / E4M3 scale codes */
    size_t scale_codes_len;            /* entries at scale_codes */
    /* A prepacked block-weight blob (qmx_blockw_pack*) as the whole operand; NULL = none.
     * Weights [N][K] read in place by the blob kernels: rank 2, shape = the blob's N, K, k
     * contracted, the other operand float32 (EINSUM, BLOCK-WEIGHT BLOB OPERANDS). */
    const void *blockw_blob;
    size_t blockw_blob_bytes;          /* bytes readable at blockw_blob */
} qmx_einsum_operand;

/* How a blob operand's float32 partner is multiplied (qmx_einsum_opts.blockw_act). */
typedef enum qmx_einsum_blockw_act {
    QMX_EINSUM_BLOCKW_F32 = 0,   /* float32 activations: qmx_matmul_blockw_packed_f32 */
    QMX_EINSUM_BLOCKW_DYN_I8 = 1 /* int8 on the fly: qmx_matmul_blockw_packed_dyn_i8 */
} qmx_einsum_blockw_act;

typedef struct qmx_einsum_opts {
    int int32_out; /* int x int: raw int32 output (no scales); default 0 = float output */
    const qmx_executor *executor; /* NULL (default): serial; else a task per batch index (a
                                     blob: the kernel's tiles), the same bits (USING SEVERAL
                                     CORES). Zero-initialise opts. */
    qmx_einsum_blockw_act blockw_act; /* blob operands: the kernel (default float32) */
    size_t blockw_act_block; /* DYN_I8: qmx_blockw_dyn_opts.act_block (0: a scale per row) */
} qmx_einsum_opts;

/* Shape of the output (out_rank dims into out_shape[QMX_EINSUM_MAX_RANK]); validates spec and
 * shapes (not dtypes or data). err_pos may be NULL. */
QMX_API qmx_status qmx_einsum_output_shape(const char *spec, const qmx_einsum_operand *a,
                                           const qmx_einsum_operand *b, size_t *out_shape,
                                           int *out_rank, int *err_pos);
/* Workspace bytes of qmx_einsum (see PLAN AND WORKSPACE); opts may be NULL. */
QMX_API qmx_status qmx_einsum_workspace_size(const char *spec, const qmx_einsum_operand *a,
                                             const qmx_einsum_operand *b,
                                             const qmx_einsum_opts *opts, size_t *bytes,
                                             int *err_pos);
/* out = einsum(spec, a, b): float (out_len floats) or, with opts->int32_out, int32. */
QMX_API qmx_status qmx_einsum(const char *spec, const qmx_einsum_operand *a,
                              const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                              void *out, size_t out_len, void *workspace,
                              size_t workspace_bytes, int *err_pos);
/* Range calls (USING SEVERAL CORES): qmx_einsum_tasks gives the batch count (1 for a spec
 * without a batch label; a blob operand: qmx_matmul_tasks(M, N), the blob kernel's tiles);
 * qmx_einsum_run writes the outputs of batch indices (tiles) [task_begin, task_end) only,
 * with the serial call's bits. opts->executor is ignored: each range call takes the serial
 * workspace (qmx_einsum_workspace_size with no executor) of its own and
 * converts the shared operands itself (int4 / int2 / fp8 / MX unpacked or decoded again per
 * call: the price of a call that needs no other call). Errors: the serial call's first, then
 * a range out of bounds or reversed (QMX_ERR_ARG); nothing written on error. */
QMX_API qmx_status qmx_einsum_tasks(const char *spec, const qmx_einsum_operand *a,
                                    const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                                    size_t *n_tasks, int *err_pos);
QMX_API qmx_status qmx_einsum_run(const char *spec, const qmx_einsum_operand *a,
                                  const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                                  void *out, size_t out_len, void *workspace,
                                  size_t workspace_bytes, size_t task_begin, size_t task_end,
                                  int *err_pos);

/* ---- KV cache and attention decode --------------------------------------------------------- */

#define QMX_KV_MAX_HEAD_DIM 8192
#define QMX_KV_DEFAULT_CHANNEL_BLOCK 32
#define QMX_KV_DEFAULT_DIM_BLOCK 32

typedef enum qmx_kv_axis {
    QMX_KV_HEADS_AND_DKV = 0, /* one scale per token (MaxText default) */
    QMX_KV_DKV = 1,           /* one scale per token per KV head */
    QMX_KV_CHANNEL = 2,       /* keys only: per channel over a block of tokens (KIVI) */
    QMX_KV_BLOCK = 3          /* one scale per token per KV head per block of dim_block
                                 elements along head_dim (llama.cpp q8_0 / q4_0, KIVI values) */
} qmx_kv_axis;

/* Stored format of QMX_KV_BLOCK scales (see QUANTIZATION, 16-BIT BLOCK SCALES). */
typedef enum qmx_kv_scale_format {
    QMX_KV_SCALE_F32 = 0,     /* float32 (default) */
    QMX_KV_SCALE_F16 = 1,     /* IEEE binary16, rounded up (2 bytes per block) */
    QMX_KV_SCALE_BF16 = 2     /* bfloat16, rounded up (2 bytes per block) */
} qmx_kv_scale_format;

typedef enum qmx_kv_mode {
    QMX_KV_LINEAR = 0, /* fill once; past the capacity is an error */
    QMX_KV_RING = 1    /* ring buffer: keeps the last `capacity` tokens */
} qmx_kv_mode;

typedef struct qmx_kv_config {
    size_t capacity;        /* tokens */
    size_t n_kv_heads;
    size_t head_dim;
    qmx_dtype k_dtype;      /* 0 = QMX_INT8 */
    qmx_dtype v_dtype;      /* 0 = QMX_INT8 */
    qmx_kv_axis k_axis;
    qmx_kv_axis v_axis;
    size_t channel_block;   /* QMX_KV_CHANNEL block of tokens; 0 = 32 */
    qmx_kv_mode mode;
    size_t n_layers;        /* 0 = 1 */
    int rotate;             /* 1: Hadamard-rotate keys and values (head_dim a power of 2) */
    size_t dim_block;       /* QMX_KV_BLOCK elements per scale along head_dim: 32 or 64; 0 = 32 */
    qmx_kv_scale_format block_scale; /* format of the QMX_KV_BLOCK scales; 0 = float32 */
} qmx_kv_config;

/* The cache descriptor. Fields are read-only for the caller (n_tokens = tokens appended since
 * init/reset = the position of the next token). */
typedef struct qmx_kv_cache {
    qmx_kv_config cfg;      /* normalised copy (defaults filled in) */
    size_t row_k, row_v;    /* bytes per (head, token) row */
    size_t n_tokens;
    unsigned char *k, *v;
    float *k_scales, *v_scales, *k_resid;
    float *rot;             /* rotation scratch in the storage (rotate = 1) */
    uint32_t magic;
} qmx_kv_cache;

typedef struct qmx_kv_attn_opts {
    size_t causal_len;  /* attend to positions < causal_len; 0 = all appended tokens */
    size_t window;      /* sliding window: the last `window` positions; 0 = none */
    float scale;        /* logit scale; 0 = 1/sqrt(head_dim) */
    int float_query;    /* 1: float query against int8/int4 keys (MaxText's numerics) */
    const qmx_executor *executor; /* NULL (default): serial; else a task per KV head, the
                                     same bits (ATTENTION DECODE, USING SEVERAL CORES) */
    size_t token_split; /* 0 (default): one pass over the visible tokens per head; T > 0, a
                           multiple of 64 (else QMX_ERR_ARG): each head's visible tokens in
                           splits of T, combined in split order (ATTENTION DECODE, TOKEN
                           SPLIT); other bits than 0 unless one split covers the context */
} qmx_kv_attn_opts;

/* Bytes of storage for cfg->n_layers layers (see STORAGE). */
QMX_API qmx_status qmx_kv_cache_storage_size(const qmx_kv_config *cfg, size_t *bytes);
/* Bytes per token of one layer's K and V data and scales (without the KIVI residual), for
 * reports; 0 on an invalid config. */
QMX_API size_t qmx_kv_cache_bytes_per_token(const qmx_kv_config *cfg);
/* Descriptor of layer 0 / of layer `layer` over storage (the same storage for every layer). */
QMX_API qmx_status qmx_kv_cache_init(qmx_kv_cache *cache, const qmx_kv_config *cfg,
                                     void *storage, size_t storage_bytes);
QMX_API qmx_status qmx_kv_cache_init_layer(qmx_kv_cache *cache, const qmx_kv_config *cfg,
                                           void *storage, size_t storage_bytes, size_t layer);
/* Forget every token (n_tokens = 0). */
QMX_API qmx_status qmx_kv_cache_reset(qmx_kv_cache *cache);
/* Append n_tokens tokens: k, v are [n_tokens][n_kv_heads][head_dim] float. */
QMX_API qmx_status qmx_kv_cache_append(qmx_kv_cache *cache, const float *k, const float *v,
                                       size_t n_tokens);
/* Dequantized copy of positions [pos, pos + n_tokens) into k_out / v_out ([n][heads][dim]);
 * either may be NULL (not both). */
QMX_API qmx_status qmx_kv_cache_read(const qmx_kv_cache *cache, size_t pos, size_t n_tokens,
                                     float *k_out, float *v_out);
QMX_API qmx_status qmx_kv_attention_workspace_size(const qmx_kv_config *cfg, size_t n_heads,
                                                   size_t *bytes);
/* One decode step (see ATTENTION DECODE). opts may be NULL (defaults). */
QMX_API qmx_status qmx_kv_attention(const qmx_kv_cache *cache, const float *q, size_t n_heads,
                                    const qmx_kv_attn_opts *opts, float *out, void *workspace,
                                    size_t workspace_bytes);
/* Several cores (see WORKSPACE, USING SEVERAL CORES): tasks = KV heads (n = n_kv_heads);
 * the workspace of a call through ex (NULL or workers 0 / 1: the serial size); one worker's
 * workspace for the range calls; a range call computes the query groups of KV heads
 * [task_begin, task_end) into out (opts->executor ignored). */
QMX_API qmx_status qmx_kv_attention_tasks(const qmx_kv_cache *cache, size_t n_heads,
                                          size_t *n_tasks);
QMX_API qmx_status qmx_kv_attention_workspace_size_exec(const qmx_kv_config *cfg,
                                                        size_t n_heads, const qmx_executor *ex,
                                                        size_t *bytes);
QMX_API qmx_status qmx_kv_attention_task_workspace_size(const qmx_kv_config *cfg,
                                                        size_t n_heads, size_t *bytes);
QMX_API qmx_status qmx_kv_attention_run(const qmx_kv_cache *cache, const float *q,
                                        size_t n_heads, const qmx_kv_attn_opts *opts, float *out,
                                        size_t task_begin, size_t task_end, void *workspace,
                                        size_t workspace_bytes);
/* Token split (opts->token_split = T > 0, see ATTENTION DECODE, TOKEN SPLIT). The workspace
 * of qmx_kv_attention with these opts (any token_split, serial or through opts->executor;
 * token_split 0: qmx_kv_attention_workspace_size_exec's). Range calls: tasks = n_kv_heads x
 * n_splits of the cache's current visible range (task t: KV head t / n_splits, split
 * t % n_splits); the partials buffer (n_tasks x g x (head_dim + 2) floats); a range call
 * writes the partials of tasks [task_begin, task_end) with one worker's workspace
 * (qmx_kv_attention_task_workspace_size); the combine writes out from the partials of every
 * task. opts->executor is ignored by these calls; token_split 0: QMX_ERR_ARG. */
QMX_API qmx_status qmx_kv_attention_split_workspace_size(const qmx_kv_config *cfg,
                                                         size_t n_heads,
                                                         const qmx_kv_attn_opts *opts,
                                                         size_t *bytes);
QMX_API qmx_status qmx_kv_attention_split_tasks(const qmx_kv_cache *cache, size_t n_heads,
                                                const qmx_kv_attn_opts *opts, size_t *n_tasks);
QMX_API qmx_status qmx_kv_attention_split_partials_size(const qmx_kv_cache *cache,
                                                        size_t n_heads,
                                                        const qmx_kv_attn_opts *opts,
                                                        size_t *bytes);
QMX_API qmx_status qmx_kv_attention_split_run(const qmx_kv_cache *cache, const float *q,
                                              size_t n_heads, const qmx_kv_attn_opts *opts,
                                              float *partials, size_t partials_bytes,
                                              size_t task_begin, size_t task_end,
                                              void *workspace, size_t workspace_bytes);
QMX_API qmx_status qmx_kv_attention_split_combine(const qmx_kv_cache *cache, size_t n_heads,
                                                  const qmx_kv_attn_opts *opts,
                                                  const float *partials, size_t partials_bytes,
                                                  float *out);
/* Workspace of qmx_kv_prefill at full speed (the tiled path's largest query block, see
 * PREFILL); qmx_kv_attention_workspace_size bytes also work (smaller blocks, same bits). */
QMX_API qmx_status qmx_kv_prefill_workspace_size(const qmx_kv_config *cfg, size_t n_heads,
                                                 size_t n_tokens, size_t *bytes);
/* The same through opts->executor ex (NULL or workers 0 / 1: qmx_kv_prefill_workspace_size);
 * qmx_kv_attention_workspace_size_exec bytes also work (smaller blocks, same bits). */
QMX_API qmx_status qmx_kv_prefill_workspace_size_exec(const qmx_kv_config *cfg,
                                                      size_t n_heads, size_t n_tokens,
                                                      const qmx_executor *ex, size_t *bytes);
/* Append n_tokens tokens and compute their causal attention: q and out [n_tokens][n_heads]
 * [head_dim]. */
QMX_API qmx_status qmx_kv_prefill(qmx_kv_cache *cache, const float *k, const float *v,
                                  size_t n_tokens, const float *q, size_t n_heads,
                                  const qmx_kv_attn_opts *opts, float *out, void *workspace,
                                  size_t workspace_bytes);
/* qmx's exp (see EXP) and RN(1/sqrt(n)) for 1 <= n <= QMX_KV_MAX_HEAD_DIM (0 otherwise). */
QMX_API float qmx_kv_exp(float x);
QMX_API float qmx_kv_inv_sqrt(size_t n);

/* ---- block-scaled weights x f32 (MX / NVFP4, qconfig blocks), MXFP8 x MXFP8 ------------------ */

/* Which storage a qmx_blockw describes (0 is invalid: QMX_ERR_ARG). */
typedef enum qmx_blockw_kind {
    QMX_BLOCKW_MX = 1,        /* qmx_mx_config: elements + uint8 scale codes (qmx_mx_quantize) */
    QMX_BLOCKW_QCONFIG = 2    /* qmx_qconfig: q storage + float scales [+ zero points] */
} qmx_blockw_kind;

/* A block-scaled matrix [rows][K] exactly as qmx.h stores it (see BLOCK-SCALED WEIGHTS). */
typedef struct qmx_blockw {
    qmx_blockw_kind kind;
    const qmx_mx_config *mx;      /* QMX_BLOCKW_MX: view [rows][K][1] */
    const qmx_qconfig *qc;        /* QMX_BLOCKW_QCONFIG: view [rows][K][1] per block,
                                     [1][rows][K] per channel, any view per tensor */
    const void *data;             /* MX elements / qconfig q storage of the whole matrix */
    size_t data_bytes;            /* bytes readable at data */
    const uint8_t *scale_codes;   /* MX: E8M0 (NVFP4: E4M3) codes, [rows][nblk] */
    const float *scales;          /* QCONFIG: float scales, as qmx_dequantize reads them */
    const int32_t *zero_points;   /* QCONFIG: NULL (symmetric) or one per scale */
    size_t n_scales;              /* entries at scale_codes / scales (and zero_points) */
} qmx_blockw;

/* Workspace of qmx_matmul_blockw_f32: 64 + r64(4*K) + r64((K + 1) / 2). */
QMX_API qmx_status qmx_matmul_blockw_f32_workspace_size(size_t M, size_t N, size_t K,
                                                        size_t *bytes);
/* Y[M][N] = A[M][K] (f32) x dequant(W)^T, W = *w with rows = N, in the documented order. */
QMX_API qmx_status qmx_matmul_blockw_f32(size_t M, size_t N, size_t K, const float *A,
                                         size_t lda, const qmx_blockw *w, float *Y, size_t ldy,
                                         void *workspace, size_t workspace_bytes);
/* Y[M][N] = A x B^T, both MXFP8 (E4M3 / E5M2) of kind QMX_BLOCKW_MX: a with rows = M, b with
 * rows = N; exact block dot products, one rounding per block, blocks summed in order. */
QMX_API qmx_status qmx_matmul_mxfp8_f32(size_t M, size_t N, size_t K, const qmx_blockw *a,
                                        const qmx_blockw *b, float *Y, size_t ldy);
/* Several cores (USING SEVERAL CORES): tasks [task_begin, task_end) of qmx_matmul_tasks(M, N)
 * (tiles of 64 rows of a x 256 rows of b), or the whole call through an executor (NULL or
 * workers 0 / 1: the serial call); no workspace; the serial bits. */
QMX_API qmx_status qmx_matmul_mxfp8_f32_run(size_t M, size_t N, size_t K, const qmx_blockw *a,
                                            const qmx_blockw *b, float *Y, size_t ldy,
                                            size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_matmul_mxfp8_f32_exec(size_t M, size_t N, size_t K, const qmx_blockw *a,
                                             const qmx_blockw *b, float *Y, size_t ldy,
                                             const qmx_executor *executor);

/* Options of qmx_matmul_blockw_dyn_i8; zero-initialised (or opts == NULL) = the defaults. */
typedef struct qmx_blockw_dyn_opts {
    size_t act_block;   /* 0 (default): one activation scale per row of X; else one per block of
                           act_block along K (the last may be shorter; >= K: one per row) */
} qmx_blockw_dyn_opts;

/* Workspace of qmx_matmul_blockw_dyn_i8: 64 + r64(4*mb*nab) + r64(8*K) + r64(mb*K),
 * mb = min(M, 64), nab = activation blocks per row (see INT8 ACTIVATIONS ON THE FLY). */
QMX_API qmx_status qmx_matmul_blockw_dyn_i8_workspace_size(size_t M, size_t N, size_t K,
                                                           const qmx_blockw_dyn_opts *opts,
                                                           size_t *bytes);
/* Y[M][N] = int8(X)[M][K] x W^T: X quantized per row (or per act_block) on the fly, exact
 * integer dot products per (weight block x activation block) segment, scaled in float in the
 * documented order; W = *w with rows = N (every weight qmx_matmul_blockw_f32 takes). */
QMX_API qmx_status qmx_matmul_blockw_dyn_i8(size_t M, size_t N, size_t K, const float *X,
                                            size_t ldx, const qmx_blockw *w,
                                            const qmx_blockw_dyn_opts *opts, float *Y,
                                            size_t ldy, void *workspace, size_t workspace_bytes);
/* Several cores (USING SEVERAL CORES): tasks [task_begin, task_end) of qmx_matmul_tasks(M, N)
 * with one worker's workspace (the entry point's size for min(M, 64) x min(N, 256)), or the
 * whole call through an executor (NULL or workers 0 / 1: the serial call); the serial bits. */
QMX_API qmx_status qmx_matmul_blockw_dyn_i8_run(size_t M, size_t N, size_t K, const float *X,
                                                size_t ldx, const qmx_blockw *w,
                                                const qmx_blockw_dyn_opts *opts, float *Y,
                                                size_t ldy, size_t task_begin, size_t task_end,
                                                void *workspace, size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_blockw_dyn_i8_exec(size_t M, size_t N, size_t K, const float *X,
                                                 size_t ldx, const qmx_blockw *w,
                                                 const qmx_blockw_dyn_opts *opts, float *Y,
                                                 size_t ldy, const qmx_executor *executor,
                                                 void *workspace, size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_blockw_f32_run(size_t M, size_t N, size_t K, const float *A,
                                             size_t lda, const qmx_blockw *w, float *Y,
                                             size_t ldy, size_t task_begin, size_t task_end,
                                             void *workspace, size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_blockw_f32_exec(size_t M, size_t N, size_t K, const float *A,
                                              size_t lda, const qmx_blockw *w, float *Y,
                                              size_t ldy, const qmx_executor *executor,
                                              void *workspace, size_t workspace_bytes);

/* ---- 16x8: int16 activations x int8 weights -> int16 (see 16x8) ----------------------------- */
/* K bounds of the 16x8 kernels (the int64 accumulator plus the bias then stays inside TFLite's
 * |x| < 2^47 precondition of its int64 requantization; see 16x8). */
#define QMX_FC_I16_MAX_K 8388608          /* 2^23 */
#define QMX_BATCH_MATMUL_I16_MAX_K 65536  /* 2^16 */
/* Largest |bias| of qmx_requant64_config (2^46). */
#define QMX_REQUANT64_MAX_BIAS 70368744177664LL

/* Output stage of the 16x8 kernels: out = clamp(MBQM64(acc + bias[n], mult, shift), act_min,
 * act_max), MBQM64 = qmx_requantize64; output zero point 0 (TFLite 16x8). Per channel: one
 * (multiplier, shift) per output column n, else element 0. */
typedef struct qmx_requant64_config {
    int per_channel;
    const int32_t *multipliers;   /* each in [0, 2^31 - 1] (qmx_quantize_multiplier) */
    const int *shifts;            /* each in [-31, 7] */
    const int64_t *bias;          /* optional, [N], each in [-2^46, 2^46] */
    int32_t act_min, act_max;     /* both 0: [-32768, 32767] */
} qmx_requant64_config;

/* TFLite's MultiplyByQuantizedMultiplier for int64 accumulators (16x8 kernels): the multiplier
 * rounded to 15 bits, one rounding shift (see 16x8). Exact for multiplier >= 0, shift in
 * [-31, 7], acc in [-2^47, 2^47); total: a negative multiplier is taken as 0, the shift and
 * acc are clamped into those ranges. The int64 result is converted to int32 modulo 2^32. */
QMX_API int32_t qmx_requantize64(int64_t acc, int32_t multiplier, int shift);
/* QMX_OK when multiplier >= 0 and shift in [-31, 7], else QMX_ERR_ARG. */
QMX_API qmx_status qmx_requantize64_check(int32_t multiplier, int shift);
/* Workspace bytes of qmx_fully_connected_i16 and _i16_packed:
 * 64 + r64(32 * min(K, 512)) + r64(128 * min(M, 256)). */
QMX_API qmx_status qmx_fully_connected_i16_workspace_size(size_t M, size_t N, size_t K,
                                                          size_t *bytes);
/* TFLite 16x8 fully-connected: out[m][n] = stage(sum_k A[m][k] * (W[n*ldw + k] - w_zp)). */
QMX_API qmx_status qmx_fully_connected_i16(size_t M, size_t N, size_t K, const int16_t *A,
                                           size_t lda, const int8_t *W, size_t ldw,
                                           int32_t w_zp, const qmx_requant64_config *rq,
                                           int16_t *out, size_t ldo, void *workspace,
                                           size_t workspace_bytes);
/* The same on weights packed by qmx_matmul_i8_pack_weights (the int8 blob; K <= 33025). */
QMX_API qmx_status qmx_fully_connected_i16_packed(size_t M, size_t N, size_t K,
                                                  const int16_t *A, size_t lda,
                                                  const void *packed, size_t packed_bytes,
                                                  int32_t w_zp, const qmx_requant64_config *rq,
                                                  int16_t *out, size_t ldo, void *workspace,
                                                  size_t workspace_bytes);
/* Several cores (USING SEVERAL CORES): tasks [task_begin, task_end) of qmx_matmul_tasks(M, N)
 * with one worker's workspace (qmx_fully_connected_i16_workspace_size(min(M, 64), min(N, 256),
 * K)), or the whole call through an executor (NULL or workers 0 / 1: the serial call); the
 * serial bits (exact int64 sums, the output stage per element). */
QMX_API qmx_status qmx_fully_connected_i16_run(size_t M, size_t N, size_t K, const int16_t *A,
                                               size_t lda, const int8_t *W, size_t ldw,
                                               int32_t w_zp, const qmx_requant64_config *rq,
                                               int16_t *out, size_t ldo, size_t task_begin,
                                               size_t task_end, void *workspace,
                                               size_t workspace_bytes);
QMX_API qmx_status qmx_fully_connected_i16_exec(size_t M, size_t N, size_t K, const int16_t *A,
                                                size_t lda, const int8_t *W, size_t ldw,
                                                int32_t w_zp, const qmx_requant64_config *rq,
                                                int16_t *out, size_t ldo,
                                                const qmx_executor *executor, void *workspace,
                                                size_t workspace_bytes);
QMX_API qmx_status qmx_fully_connected_i16_packed_run(size_t M, size_t N, size_t K,
                                                      const int16_t *A, size_t lda,
                                                      const void *packed, size_t packed_bytes,
                                                      int32_t w_zp,
                                                      const qmx_requant64_config *rq,
                                                      int16_t *out, size_t ldo,
                                                      size_t task_begin, size_t task_end,
                                                      void *workspace, size_t workspace_bytes);
QMX_API qmx_status qmx_fully_connected_i16_packed_exec(size_t M, size_t N, size_t K,
                                                       const int16_t *A, size_t lda,
                                                       const void *packed, size_t packed_bytes,
                                                       int32_t w_zp,
                                                       const qmx_requant64_config *rq,
                                                       int16_t *out, size_t ldo,
                                                       const qmx_executor *executor,
                                                       void *workspace, size_t workspace_bytes);
/* Workspace bytes of qmx_batch_matmul_i16 (the same formula as the fully-connected's). */
QMX_API qmx_status qmx_batch_matmul_i16_workspace_size(size_t M, size_t N, size_t K,
                                                       size_t *bytes);
/* TFLite BatchMatMul, int16 x int16 -> int16: out_b = stage(op(X_b) x op(Y_b)), op the
 * transpose when adj_x / adj_y; batch b of each operand at b * its batch stride (0 repeats
 * one matrix: broadcasting). See 16x8 for layouts. */
QMX_API qmx_status qmx_batch_matmul_i16(size_t batch, size_t M, size_t N, size_t K,
                                        const int16_t *X, size_t ldx, size_t x_batch_stride,
                                        int adj_x, const int16_t *Y, size_t ldy,
                                        size_t y_batch_stride, int adj_y,
                                        const qmx_requant64_config *rq, int16_t *out,
                                        size_t ldo, size_t out_batch_stride, void *workspace,
                                        size_t workspace_bytes);
/* Several cores (USING SEVERAL CORES): TASKS (b, t) = b * qmx_matmul_tasks(M, N) + t, tile t of
 * 64 rows x 256 columns of out_b; *n_tasks = batch * qmx_matmul_tasks(M, N). _run: tasks
 * [task_begin, task_end) with one tile's workspace (qmx_batch_matmul_i16_workspace_size(
 * min(M, 64), min(N, 256), K)); _exec: the whole call through an executor (NULL or workers
 * 0 / 1: the serial call); the serial bits (exact int64 sums, the stage per element). */
QMX_API qmx_status qmx_batch_matmul_i16_tasks(size_t batch, size_t M, size_t N,
                                              size_t *n_tasks);
QMX_API qmx_status qmx_batch_matmul_i16_run(size_t batch, size_t M, size_t N, size_t K,
                                            const int16_t *X, size_t ldx, size_t x_batch_stride,
                                            int adj_x, const int16_t *Y, size_t ldy,
                                            size_t y_batch_stride, int adj_y,
                                            const qmx_requant64_config *rq, int16_t *out,
                                            size_t ldo, size_t out_batch_stride,
                                            size_t task_begin, size_t task_end, void *workspace,
                                            size_t workspace_bytes);
QMX_API qmx_status qmx_batch_matmul_i16_exec(size_t batch, size_t M, size_t N, size_t K,
                                             const int16_t *X, size_t ldx,
                                             size_t x_batch_stride, int adj_x, const int16_t *Y,
                                             size_t ldy, size_t y_batch_stride, int adj_y,
                                             const qmx_requant64_config *rq, int16_t *out,
                                             size_t ldo, size_t out_batch_stride,
                                             const qmx_executor *executor, void *workspace,
                                             size_t workspace_bytes);

#ifdef __cplusplus
}
#endif
#endif /* QMX_KERNELS_H */

/* ============================================================================================
 * IMPLEMENTATION: INT8 MATMUL, OUTPUT STAGES, PACKED WEIGHTS, DYNAMIC PATH
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
#  elif !defined(QMX_NO_MVE) && defined(__ARM_FEATURE_MVE) && !defined(__ARM_BIG_ENDIAN)
#    define QMX__K_MVE 1
#  elif !defined(QMX_NO_DSP) && defined(__ARM_FEATURE_DSP) && !defined(__ARM_BIG_ENDIAN) && \
        !defined(__aarch64__) && defined(__thumb2__) && defined(__GNUC__)
#    define QMX__K_DSP 1
#  elif defined(QMX__RVV)   /* qmx.h: RVV 1.0 intrinsics, not QMX_NO_RVV */
#    define QMX__K_RVV 1
#  endif
#endif
#if defined(QMX__K_VNNI) || defined(QMX__K_AVX2)
#  include <immintrin.h>
#endif
#if defined(QMX__K_NEONDOT) || defined(QMX__K_NEON)
#  include <arm_neon.h>
#endif
#if defined(QMX__K_MVE)
#  include <arm_mve.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* uint32 -> int32 by value modulo 2^32, without an implementation-defined conversion. */
static int32_t qmx__k_u2i(uint32_t u) {
    return u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(u - 0x80000000u) - 0x7FFFFFFF - 1;
}
static size_t qmx__k_r64(size_t x) { return (x + 63u) & ~(size_t)63u; }
static size_t qmx__k_r16(size_t x) { return (x + 15u) & ~(size_t)15u; }
static size_t qmx__k_r4(size_t x) { return (x + 3u) & ~(size_t)3u; }
#define QMX__K_MB 64 /* rows of A per panel (and per packed panel) */
/* modes of the inner entry points qmx__par_* (USING SEVERAL CORES) */
#define QMX__PAR_RUN 0        /* check everything, then compute */
#define QMX__PAR_CHECK 1      /* check the arguments (not the workspace size); write nothing */
#define QMX__PAR_CHECK_DATA 2 /* and the checks that need a pass over an input (dyn rows) */
/* Bytes of the panel of A that qmx__k_mm_nk lays out in the workspace: up to 64 rows of 2
 * bytes per element rounded up to 4 (the DSP layout; the other paths use at most half), the
 * same on every target so that the workspace sizes are. */
static size_t qmx__k_apanel_bytes(size_t M, size_t K) {
    return qmx__k_r64(2 * (M < QMX__K_MB ? M : QMX__K_MB) * qmx__k_r4(K));
}
#define QMX__K_PK_MC 256  /* rows of A per packed panel of A + 128 (L2) */
/* K bytes per cache block: all of K (Kp <= 33028). Blocks of 1024 or 2048 bytes with C
 * accumulated between them were 10-25 % slower on Zen 4 at every shape measured (M = 8..1024,
 * K = 4096, 8192): a strip of B over all of K streams from L2 well enough. */
#define QMX__K_PK_KC 33028

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
        o->executor = NULL;
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
    __m512i acc = _mm512_setzero_si512(), ones = _mm512_set1_epi8(1), e1 = acc, e2 = acc, e3 = acc;
    for (; k + 256 <= K; k += 256) { /* four chains: one would wait on vpdpbusd's latency */
        acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512((const void *)(p + k)));
        e1 = _mm512_dpbusd_epi32(e1, ones, _mm512_loadu_si512((const void *)(p + k + 64)));
        e2 = _mm512_dpbusd_epi32(e2, ones, _mm512_loadu_si512((const void *)(p + k + 128)));
        e3 = _mm512_dpbusd_epi32(e3, ones, _mm512_loadu_si512((const void *)(p + k + 192)));
    }
    acc = _mm512_add_epi32(_mm512_add_epi32(acc, e1), _mm512_add_epi32(e2, e3));
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
#elif defined(QMX__K_MVE)
    {   /* 64 bytes per iteration: the loop overhead is most of the cost otherwise */
        const int8_t *q = p, *qe = p + (K & ~(size_t)63);
        while (q != qe) {
            t = vaddvaq_s8(t, vld1q_s8(q));
            t = vaddvaq_s8(t, vld1q_s8(q + 16));
            t = vaddvaq_s8(t, vld1q_s8(q + 32));
            t = vaddvaq_s8(t, vld1q_s8(q + 48));
            q += 64;
        }
        k = K & ~(size_t)63;
    }
    for (; k + 16 <= K; k += 16) t = vaddvaq_s8(t, vld1q_s8(p + k));
    if (k < K) { /* predicated tail: the bytes past K are not read */
        t = vaddvaq_s8(t, vldrbq_z_s8(p + k, vctp8q((uint32_t)(K - k))));
        k = K;
    }
#elif defined(QMX__K_RVV)
    {   /* int8 -> int16, then a widening reduction into an int32 sum: exact at any VLEN */
        vint32m1_t acc = __riscv_vmv_v_x_i32m1(0, 1);
        size_t vl;
        for (; k < K; k += vl) {
            vl = __riscv_vsetvl_e8m1(K - k);
            acc = __riscv_vwredsum_vs_i16m2_i32m1(
                __riscv_vsext_vf2_i16m2(__riscv_vle8_v_i8m1(p + k, vl), vl), acc, vl);
        }
        t = __riscv_vmv_x_s_i32m1_i32(acc);
    }
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
    size_t kp, kc, parts[4], total = 64;
    int i;
    (void)opts;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (M > SIZE_MAX / 8 || N > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    if (K > (SIZE_MAX - 64) / QMX__K_PK_MC || K > SIZE_MAX / 256) return QMX_ERR_OVERFLOW;
    kp = qmx__k_r4(K);
    kc = kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC;
    parts[0] = qmx__k_r64(M * 4);
    parts[1] = qmx__k_r64(N * 4);
    parts[2] = qmx__k_apanel_bytes(M, K);                  /* 64-row panel of A, laid out */
    if (qmx__k_r64((M < QMX__K_PK_MC ? M : QMX__K_PK_MC) * kc) > parts[2])  /* or the packed */
        parts[2] = qmx__k_r64((M < QMX__K_PK_MC ? M : QMX__K_PK_MC) * kc); /* kernel's panel */
    parts[3] = qmx__k_r64(4 * K > 32 * kc ? 4 * K : 32 * kc); /* B tile / packed B strip */
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

#elif defined(QMX__K_MVE)
/* Cortex-M55/M85 MVE (Helium): vmladavaq_s8 sums 16 products into a scalar int32; one
 * predicated step (vctp8q) takes the K tail, reading nothing past K. tile_1: 1x4; tile_full:
 * 2x4 as two 2x2 passes (vmladava accumulates in even registers: 8 at once would spill).
 * make bench-cortex-m: see ALGORITHM AND SIMD PATHS at the top. */
#define QMX__K_MR 2
static void qmx__k_tile_full(const int8_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    size_t c, n16 = K / 16, r = K % 16, i;
    for (c = 0; c < 4; c += 2) { /* columns c, c+1 */
        const int8_t *p0 = a[0], *p1 = a[1], *q0 = b[c], *q1 = b[c + 1];
        int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
        int8x16_t x0, x1, y0, y1;
        for (i = 0; i < n16; i++) {
            x0 = vld1q_s8(p0); x1 = vld1q_s8(p1); y0 = vld1q_s8(q0); y1 = vld1q_s8(q1);
            p0 += 16; p1 += 16; q0 += 16; q1 += 16;
            s00 = vmladavaq_s8(s00, x0, y0); s10 = vmladavaq_s8(s10, x1, y0);
            s01 = vmladavaq_s8(s01, x0, y1); s11 = vmladavaq_s8(s11, x1, y1);
        }
        if (r) {
            mve_pred16_t p = vctp8q((uint32_t)r);
            x0 = vldrbq_z_s8(p0, p); x1 = vldrbq_z_s8(p1, p);
            y0 = vldrbq_z_s8(q0, p); y1 = vldrbq_z_s8(q1, p);
            s00 = vmladavaq_s8(s00, x0, y0); s10 = vmladavaq_s8(s10, x1, y0);
            s01 = vmladavaq_s8(s01, x0, y1); s11 = vmladavaq_s8(s11, x1, y1);
        }
        d[0][c] = s00; d[0][c + 1] = s01; d[1][c] = s10; d[1][c + 1] = s11;
    }
}
static void qmx__k_tile_1(const int8_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    const int8_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3], *ae = a + (K & ~(size_t)15);
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int8x16_t x;
    while (a != ae) {
        x = vld1q_s8(a);
        a += 16;
        s0 = vmladavaq_s8(s0, x, vld1q_s8(b0)); b0 += 16;
        s1 = vmladavaq_s8(s1, x, vld1q_s8(b1)); b1 += 16;
        s2 = vmladavaq_s8(s2, x, vld1q_s8(b2)); b2 += 16;
        s3 = vmladavaq_s8(s3, x, vld1q_s8(b3)); b3 += 16;
    }
    if (K % 16) {
        mve_pred16_t p = vctp8q((uint32_t)(K % 16));
        x = vldrbq_z_s8(a, p);
        s0 = vmladavaq_s8(s0, x, vldrbq_z_s8(b0, p));
        s1 = vmladavaq_s8(s1, x, vldrbq_z_s8(b1, p));
        s2 = vmladavaq_s8(s2, x, vldrbq_z_s8(b2, p));
        s3 = vmladavaq_s8(s3, x, vldrbq_z_s8(b3, p));
    }
    d[0] = s0; d[1] = s1; d[2] = s2; d[3] = s3;
}
/* tile_1 that also sums the 4 rows of B (the weight sums for a_zp != 0): one vaddva per
 * vector of B already in a register, instead of a second pass over B. Two passes of two rows:
 * vmladava / vaddva accumulate in even registers only, and 8 accumulators would spill. */
#define QMX__K_TILE1_SUMS 1
static void qmx__k_tile_1_sums(const int8_t *a, const int8_t *const *b, size_t K, int32_t d[4],
                               int32_t sums[4]) {
    int c;
    for (c = 0; c < 4; c += 2) {
        const int8_t *p = a, *q0 = b[c], *q1 = b[c + 1];
        int32_t s0 = 0, s1 = 0, u0 = 0, u1 = 0;
        size_t i;
        int8x16_t x, y0, y1;
        for (i = K / 16; i; i--) { /* counted: a low-overhead loop (dls / le) */
            x = vld1q_s8(p); y0 = vld1q_s8(q0); y1 = vld1q_s8(q1);
            p += 16; q0 += 16; q1 += 16;
            s0 = vmladavaq_s8(s0, x, y0); u0 = vaddvaq_s8(u0, y0);
            s1 = vmladavaq_s8(s1, x, y1); u1 = vaddvaq_s8(u1, y1);
        }
        if (K % 16) {
            mve_pred16_t pr = vctp8q((uint32_t)(K % 16));
            x = vldrbq_z_s8(p, pr); y0 = vldrbq_z_s8(q0, pr); y1 = vldrbq_z_s8(q1, pr);
            s0 = vmladavaq_s8(s0, x, y0); u0 = vaddvaq_s8(u0, y0);
            s1 = vmladavaq_s8(s1, x, y1); u1 = vaddvaq_s8(u1, y1);
        }
        d[c] = s0; d[c + 1] = s1; sums[c] = u0; sums[c + 1] = u1;
    }
}

#elif defined(QMX__K_DSP)
/* Cortex-M4/M7/M33 DSP. A is first laid out in the workspace (qmx__k_dsp_expand) as int16
 * pairs of (A - a_zp): per 4 k, word 2g = (a[4g] - zp) | (a[4g+2] - zp) << 16 and word 2g+1 =
 * (a[4g+1] - zp) | (a[4g+3] - zp) << 16, zero-padded to a multiple of 4 k. One LDRD then gives
 * the operands that SXTB16 of a word of B (bytes 0,2; with ROR #8 bytes 1,3) meets in SMLAD,
 * and the zero point of A is inside the dot: no weight sums (|A - zp| <= 255, |products| <=
 * 255 * 128, the sums stay within the int32 bounds above, the Q flag never matters). The loops
 * are assembly (GCC spills the pointers otherwise): tile_1 1x4 inline (13 registers),
 * tile_full 2x4 as two 2x2 passes of a naked function (14 registers). Unoptimised builds (-O0)
 * and QMX_NO_DSP_ASM get the same computation in C with the ACLE intrinsics.
 * make bench-cortex-m: see ALGORITHM AND SIMD PATHS at the top. */
#define QMX__K_MR 2
typedef uint32_t qmx__k_arow;
#define QMX__K_AROW_IS_DSP 1
/* bytes of one laid-out row of A (8-byte multiple: LDRD needs word alignment) */
static size_t qmx__k_arow_bytes(size_t K) { return 2 * qmx__k_r4(K); }
static void qmx__k_dsp_expand(const int8_t *src, size_t K, int32_t zp, uint32_t *dst) {
    size_t g, t, kp = qmx__k_r4(K);
    for (g = 0; g < kp; g += 4) {
        uint32_t h[4];
        for (t = 0; t < 4; t++) /* (a - zp) as int16 bits; padding 0 */
            h[t] = g + t < K ? (uint32_t)((int32_t)src[g + t] - zp) & 0xFFFFu : 0u;
        dst[g / 2] = h[0] | h[2] << 16;
        dst[g / 2 + 1] = h[1] | h[3] << 16;
    }
}
/* (A - zp) at k of a laid-out row, for the K tails */
static int32_t qmx__k_dsp_aval(const uint32_t *a, size_t k) {
    uint32_t w = a[(k >> 2) * 2 + (k & 1)], h = (k & 2) ? w >> 16 : w & 0xFFFFu;
    return (int32_t)h - (h >= 0x8000u ? 65536 : 0);
}
#if !defined(__OPTIMIZE__) || defined(QMX_NO_DSP_ASM)
#ifdef __cplusplus
}
#endif
#include <arm_acle.h>
#ifdef __cplusplus
extern "C" {
#endif
static uint32_t qmx__k_dsp_ld32(const int8_t *p) { uint32_t v; __builtin_memcpy(&v, p, 4); return v; }
/* s += (sign-extended bytes 0,2 of v) . xe + (bytes 1,3 of v) . xo */
#define QMX__K_DSP_MAC(s, v, xe, xo) \
    s = (int32_t)__smlad(__sxtb16(v), xe, (uint32_t)s); \
    s = (int32_t)__smlad(__sxtb16((v) >> 8), xo, (uint32_t)s)
static void qmx__k_tile_1(const uint32_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;
    int j;
    for (; k + 4 <= K; k += 4) {
        uint32_t xe = a[k / 2], xo = a[k / 2 + 1], v;
        v = qmx__k_dsp_ld32(b[0] + k); QMX__K_DSP_MAC(s0, v, xe, xo);
        v = qmx__k_dsp_ld32(b[1] + k); QMX__K_DSP_MAC(s1, v, xe, xo);
        v = qmx__k_dsp_ld32(b[2] + k); QMX__K_DSP_MAC(s2, v, xe, xo);
        v = qmx__k_dsp_ld32(b[3] + k); QMX__K_DSP_MAC(s3, v, xe, xo);
    }
    d[0] = s0; d[1] = s1; d[2] = s2; d[3] = s3;
    for (; k < K; k++)
        for (j = 0; j < 4; j++) d[j] += qmx__k_dsp_aval(a, k) * b[j][k];
}
static void qmx__k_tile_full(const uint32_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    qmx__k_tile_1(a[0], b, K, d[0]);
    qmx__k_tile_1(a[1], b, K, d[1]);
}
#undef QMX__K_DSP_MAC
#else
#define QMX__K_DSP_XA(A, XE, XO) "ldrd %[" XE "], %[" XO "], [%[" A "]], #8\n\t"
#define QMX__K_DSP_ROW1(B, S)                                                       \
    "ldr %[v], [%[" B "]], #4\n\tsxtb16 %[t], %[v]\n\tsmlad %[" S "], %[t], %[xe], %[" S "]\n\t" \
    "sxtb16 %[v], %[v], ror #8\n\tsmlad %[" S "], %[v], %[xo], %[" S "]\n\t"
static void qmx__k_tile_1(const uint32_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    const uint32_t *p = a;
    const int8_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = K & ~(size_t)15;
    int j;
    if (k) { /* 16 k per iteration */
        const uint32_t *volatile pe = a + k / 2; /* in memory: 13 registers */
        uint32_t xe, xo, v, t;
        __asm__("1:\n\t"
                QMX__K_DSP_XA("p", "xe", "xo")
                QMX__K_DSP_ROW1("b0", "s0") QMX__K_DSP_ROW1("b1", "s1")
                QMX__K_DSP_ROW1("b2", "s2") QMX__K_DSP_ROW1("b3", "s3")
                QMX__K_DSP_XA("p", "xe", "xo")
                QMX__K_DSP_ROW1("b0", "s0") QMX__K_DSP_ROW1("b1", "s1")
                QMX__K_DSP_ROW1("b2", "s2") QMX__K_DSP_ROW1("b3", "s3")
                QMX__K_DSP_XA("p", "xe", "xo")
                QMX__K_DSP_ROW1("b0", "s0") QMX__K_DSP_ROW1("b1", "s1")
                QMX__K_DSP_ROW1("b2", "s2") QMX__K_DSP_ROW1("b3", "s3")
                QMX__K_DSP_XA("p", "xe", "xo")
                QMX__K_DSP_ROW1("b0", "s0") QMX__K_DSP_ROW1("b1", "s1")
                QMX__K_DSP_ROW1("b2", "s2") QMX__K_DSP_ROW1("b3", "s3")
                "ldr %[t], %[pe]\n\t"
                "cmp %[p], %[t]\n\t"
                "bne 1b\n\t"
                : [p] "+r"(p), [b0] "+r"(b0), [b1] "+r"(b1), [b2] "+r"(b2), [b3] "+r"(b3),
                  [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [xe] "=&r"(xe),
                  [xo] "=&r"(xo), [v] "=&r"(v), [t] "=&r"(t)
                : [pe] "m"(pe)
                : "cc", "memory");
    }
    d[0] = s0; d[1] = s1; d[2] = s2; d[3] = s3;
    for (; k < K; k++)
        for (j = 0; j < 4; j++) d[j] += qmx__k_dsp_aval(a, k) * b[j][k];
}
/* The 2x2 loop needs 14 registers, one more than a build that keeps a frame pointer (r7)
 * leaves to inline assembly, so it is a naked function that saves and uses r4-r11 itself.
 * r0 = A row 0, r1 = A row 1 (laid out), r2 = {B row c, B row c+1}, r3 = io: io[0] =
 * 32-element steps (>= 1) on entry; io[0..3] = dots (0,c) (0,c+1) (1,c) (1,c+1) on return. */
#define QMX__K_DSP_NXA(P, XE, XO) "ldrd " XE ", " XO ", [" P "], #8\n\t"
#define QMX__K_DSP_NCOL(Q, S0, S1)                                                  \
    "ldr r12, [" Q "], #4\n\tsxtb16 lr, r12\n\tsxtb16 r12, r12, ror #8\n\t"          \
    "smlad " S0 ", lr, r8, " S0 "\n\tsmlad " S0 ", r12, r9, " S0 "\n\t"             \
    "smlad " S1 ", lr, r10, " S1 "\n\tsmlad " S1 ", r12, r11, " S1 "\n\t"
#define QMX__K_DSP_NSTEP                                                            \
    QMX__K_DSP_NXA("r0", "r8", "r9") QMX__K_DSP_NXA("r1", "r10", "r11")             \
    QMX__K_DSP_NCOL("r2", "r4", "r6") QMX__K_DSP_NCOL("r3", "r5", "r7")
#define QMX__K_UNUSED __attribute__((unused))
__attribute__((naked, noinline)) static void qmx__k_dsp_2x2(const uint32_t *a0 QMX__K_UNUSED,
                                                            const uint32_t *a1 QMX__K_UNUSED,
                                                            const int8_t *const *q QMX__K_UNUSED,
                                                            int32_t *io QMX__K_UNUSED) {
    __asm__("push {r4-r11, lr}\n\t"
            "sub sp, sp, #8\n\t"
            "str r3, [sp]\n\t"
            "ldr r12, [r3]\n\t"
            "str r12, [sp, #4]\n\t"
            "ldr r3, [r2, #4]\n\t"
            "ldr r2, [r2]\n\t"
            "movs r4, #0\n\tmovs r5, #0\n\tmovs r6, #0\n\tmovs r7, #0\n\t"
            "1:\n\t"
            QMX__K_DSP_NSTEP QMX__K_DSP_NSTEP QMX__K_DSP_NSTEP QMX__K_DSP_NSTEP
            QMX__K_DSP_NSTEP QMX__K_DSP_NSTEP QMX__K_DSP_NSTEP QMX__K_DSP_NSTEP
            "ldr r12, [sp, #4]\n\t"
            "subs r12, r12, #1\n\t"
            "str r12, [sp, #4]\n\t"
            "bne 1b\n\t"
            "ldr r3, [sp]\n\t"
            "str r4, [r3]\n\tstr r5, [r3, #4]\n\tstr r6, [r3, #8]\n\tstr r7, [r3, #12]\n\t"
            "add sp, sp, #8\n\t"
            "pop {r4-r11, pc}\n\t");
}
#undef QMX__K_UNUSED
#undef QMX__K_DSP_NXA
#undef QMX__K_DSP_NCOL
#undef QMX__K_DSP_NSTEP
static void qmx__k_tile_full(const uint32_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    size_t k = K & ~(size_t)31, c;
    int i, j;
    for (c = 0; c < 4; c += 2) { /* columns c, c+1 */
        int32_t io[4] = {0, 0, 0, 0};
        if (k) {
            io[0] = (int32_t)(k / 32);
            qmx__k_dsp_2x2(a[0], a[1], b + c, io);
        }
        d[0][c] = io[0]; d[0][c + 1] = io[1]; d[1][c] = io[2]; d[1][c + 1] = io[3];
    }
    for (; k < K; k++)
        for (i = 0; i < 2; i++)
            for (j = 0; j < 4; j++) d[i][j] += qmx__k_dsp_aval(a[i], k) * b[j][k];
}
#undef QMX__K_DSP_XA
#undef QMX__K_DSP_ROW1
#endif /* DSP: assembly or intrinsics */

#elif defined(QMX__K_RVV)
/* RISC-V Vector 1.0, vector-length agnostic: vsetvl strips along K, int8 products widened to
 * int16 (vwmul, exact) and added into int32 lanes (vwadd.wv, tail-undisturbed so that a short
 * last strip keeps the other lanes), one reduction per output at the end. Integer sums are
 * exact in any order, so every VLEN gives the same int32. tile_1: e8m1 strips, 4 x i32m4
 * accumulators; tile_full: 2x4 with e8mf2 strips (8 x i32m2: the 32 registers allow no more). */
#define QMX__K_MR 2
static int32_t qmx__k_rvv_hsum4(vint32m4_t v, size_t vlm) {
    return __riscv_vmv_x_s_i32m1_i32(__riscv_vredsum_vs_i32m4_i32m1(v, __riscv_vmv_v_x_i32m1(0, 1), vlm));
}
static int32_t qmx__k_rvv_hsum2(vint32m2_t v, size_t vlm) {
    return __riscv_vmv_x_s_i32m1_i32(__riscv_vredsum_vs_i32m2_i32m1(v, __riscv_vmv_v_x_i32m1(0, 1), vlm));
}
#define QMX__K_RVV_MAC(c, x, y, VL) c = __riscv_vwadd_wv_i32m2_tu(c, c, __riscv_vwmul_vv_i16m1(x, y, VL), VL)
static void qmx__k_tile_full(const int8_t *const *a, const int8_t *const *b, size_t K,
                             int32_t d[4][4]) {
    const size_t vlm = __riscv_vsetvlmax_e8mf2();
    const int8_t *a0 = a[0], *a1 = a[1], *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
    vint32m2_t c00 = __riscv_vmv_v_x_i32m2(0, vlm), c01 = c00, c02 = c00, c03 = c00;
    vint32m2_t c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    size_t k, vl;
    for (k = 0; k < K; k += vl) {
        vint8mf2_t x0, x1, y0, y1, y2, y3;
        vl = __riscv_vsetvl_e8mf2(K - k);
        x0 = __riscv_vle8_v_i8mf2(a0 + k, vl); x1 = __riscv_vle8_v_i8mf2(a1 + k, vl);
        y0 = __riscv_vle8_v_i8mf2(b0 + k, vl); y1 = __riscv_vle8_v_i8mf2(b1 + k, vl);
        y2 = __riscv_vle8_v_i8mf2(b2 + k, vl); y3 = __riscv_vle8_v_i8mf2(b3 + k, vl);
        QMX__K_RVV_MAC(c00, x0, y0, vl); QMX__K_RVV_MAC(c01, x0, y1, vl);
        QMX__K_RVV_MAC(c02, x0, y2, vl); QMX__K_RVV_MAC(c03, x0, y3, vl);
        QMX__K_RVV_MAC(c10, x1, y0, vl); QMX__K_RVV_MAC(c11, x1, y1, vl);
        QMX__K_RVV_MAC(c12, x1, y2, vl); QMX__K_RVV_MAC(c13, x1, y3, vl);
    }
    d[0][0] = qmx__k_rvv_hsum2(c00, vlm); d[0][1] = qmx__k_rvv_hsum2(c01, vlm);
    d[0][2] = qmx__k_rvv_hsum2(c02, vlm); d[0][3] = qmx__k_rvv_hsum2(c03, vlm);
    d[1][0] = qmx__k_rvv_hsum2(c10, vlm); d[1][1] = qmx__k_rvv_hsum2(c11, vlm);
    d[1][2] = qmx__k_rvv_hsum2(c12, vlm); d[1][3] = qmx__k_rvv_hsum2(c13, vlm);
}
#undef QMX__K_RVV_MAC
static void qmx__k_tile_1(const int8_t *a, const int8_t *const *b, size_t K, int32_t d[4]) {
    const size_t vlm = __riscv_vsetvlmax_e8m1();
    const int8_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
    vint32m4_t c0 = __riscv_vmv_v_x_i32m4(0, vlm), c1 = c0, c2 = c0, c3 = c0;
    size_t k, vl;
    for (k = 0; k < K; k += vl) {
        vint8m1_t x;
        vl = __riscv_vsetvl_e8m1(K - k);
        x = __riscv_vle8_v_i8m1(a + k, vl);
        c0 = __riscv_vwadd_wv_i32m4_tu(c0, c0, __riscv_vwmul_vv_i16m2(x, __riscv_vle8_v_i8m1(b0 + k, vl), vl), vl);
        c1 = __riscv_vwadd_wv_i32m4_tu(c1, c1, __riscv_vwmul_vv_i16m2(x, __riscv_vle8_v_i8m1(b1 + k, vl), vl), vl);
        c2 = __riscv_vwadd_wv_i32m4_tu(c2, c2, __riscv_vwmul_vv_i16m2(x, __riscv_vle8_v_i8m1(b2 + k, vl), vl), vl);
        c3 = __riscv_vwadd_wv_i32m4_tu(c3, c3, __riscv_vwmul_vv_i16m2(x, __riscv_vle8_v_i8m1(b3 + k, vl), vl), vl);
    }
    d[0] = qmx__k_rvv_hsum4(c0, vlm); d[1] = qmx__k_rvv_hsum4(c1, vlm);
    d[2] = qmx__k_rvv_hsum4(c2, vlm); d[3] = qmx__k_rvv_hsum4(c3, vlm);
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
typedef uint8_t qmx__k_arow; /* A + 128 */
#elif !defined(QMX__K_AROW_IS_DSP)
typedef int8_t qmx__k_arow;  /* A itself */
#endif


/* C[m][n] = dot + rt[m] - ca * colsum[n], in uint32 (exact: the true value fits int32). */
static void qmx__k_store(int32_t *c, int32_t dot, uint32_t rt, uint32_t ca, int32_t cs) {
    *c = qmx__k_u2i((uint32_t)dot + rt - ca * (uint32_t)cs);
}

static void qmx__k_mm_nk(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                         const int8_t *B, size_t ldb, int32_t *C, size_t ldc, const int32_t *cs,
                         int32_t *cs_fill, const uint32_t *rt, uint32_t ca, int32_t a_zp,
                         uint8_t *pack, int kn, int8_t *btile) {
    size_t m0, m, n, i, j;
    const qmx__k_arow *ar[4];
    const int8_t *br[4];
    int32_t d[4][4];
    int need_sums;
    (void)pack; (void)a_zp;
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
#elif defined(QMX__K_DSP)
        for (i = 0; i < mb; i++) /* int16 pairs of A - a_zp (the caller passes ca = 0) */
            qmx__k_dsp_expand(A + (m0 + i) * lda, K, a_zp,
                              (uint32_t *)(void *)(pack + i * qmx__k_arow_bytes(K)));
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
            need_sums = cs_fill && m0 == 0; /* weight sums while this tile of B is in cache */
#if !defined(QMX__K_TILE1_SUMS)
            if (need_sums) {
                for (j = 0; j < nv; j++) cs_fill[n + j] = qmx__k_sum_i8(br[j], K);
                need_sums = 0;
            }
#endif
            for (m = m0; m < m0 + mb;) {
                /* a kernel that also sums B takes the first row alone */
                size_t na = m0 + mb - m >= QMX__K_MR && !need_sums ? QMX__K_MR : 1;
                for (i = 0; i < na; i++) {
#if QMX__K_PACK
                    ar[i] = pack + (m - m0 + i) * K;
#elif defined(QMX__K_DSP)
                    ar[i] = (const uint32_t *)(const void *)(pack + (m - m0 + i) *
                                                             qmx__k_arow_bytes(K));
#else
                    ar[i] = A + (m + i) * lda;
#endif
                }
                if (na == 1) {
#if defined(QMX__K_TILE1_SUMS)
                    if (need_sums) {
                        int32_t sm[4];
                        qmx__k_tile_1_sums(ar[0], br, K, d[0], sm);
                        for (j = 0; j < nv; j++) cs_fill[n + j] = sm[j];
                        need_sums = 0;
                    } else
#endif
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

#if defined(QMX__K_VNNI)
static void qmx__k_vnni_plain(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                              const int8_t *B, size_t ldb, int kn, int32_t *C, size_t ldc,
                              const uint32_t *rt, const int32_t *cs, int32_t *cs_fill,
                              uint32_t ca, uint8_t *apack, int8_t *bp);
#endif
/* VNNI: from this many rows of A, strips of B are packed for the packed kernels (at 8 rows
 * both ways are as fast; below, the 4x4 dot-product tiles win) */
#define QMX__K_PLAIN_MIN_M 12
#if defined(QMX__K_VNNI)
static int qmx__k_kn_i32(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                         const int8_t *B, size_t ldb, int32_t *C, size_t ldc, const uint32_t *rt,
                         uint32_t ca, uint8_t *region, size_t nbytes);
#endif

/* qmx_matmul_i8 on one rectangle (USING SEVERAL CORES); mode QMX__PAR_CHECK: arguments only */
static qmx_status qmx__par_mm_i8(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                 const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                 const qmx_matmul_i8_opts *opts, void *workspace,
                                 size_t workspace_bytes, int mode) {
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
    if (mode != QMX__PAR_RUN) return QMX_OK;
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
#if defined(QMX__K_VNNI)
    {
        /* the workspace regions: as in qmx_matmul_i8_workspace_size */
        size_t kc = qmx__k_r4(K) < QMX__K_PK_KC ? qmx__k_r4(K) : QMX__K_PK_KC;
        size_t pa = qmx__k_apanel_bytes(M, K);
        size_t pb = qmx__k_r64((M < QMX__K_PK_MC ? M : QMX__K_PK_MC) * kc);
        if (pb > pa) pa = pb;
        if (M >= QMX__K_PLAIN_MIN_M) {
            qmx__k_vnni_plain(M, N, K, A, lda, B, ldb, o.b_layout == QMX_B_KN, C, ldc, rt, cs,
                              cs_fill, ca, ws + off, (int8_t *)(void *)(ws + off + pa));
            return QMX_OK;
        }
        /* few rows on [K,N]: B streamed in memory order (both regions hold the sums) */
        if (o.b_layout == QMX_B_KN &&
            qmx__k_kn_i32(M, N, K, A, lda, B, ldb, C, ldc, rt, ca, ws + off,
                          pa + qmx__k_r64(4 * K > 32 * kc ? 4 * K : 32 * kc)))
            return QMX_OK;
    }
#endif
#if defined(QMX__K_DSP)
    ca = 0; /* the DSP kernels subtract a_zp from A itself (the laid-out panel) */
#endif
    if (ca == 0 && cs_fill) { /* the column sums are multiplied by 0: skip computing them */
        for (m = 0; m < N; m++) cs_fill[m] = 0;
        cs_fill = NULL;
    }
    qmx__k_mm_nk(M, N, K, A, lda, B, ldb, C, ldc, cs, cs_fill, rt, ca, o.a_zp, ws + off,
                 o.b_layout == QMX_B_KN, (int8_t *)(void *)(ws + off + qmx__k_apanel_bytes(M, K)));
    return QMX_OK;
}

/* ---- output stages: int32 tiles from qmx__k_mm_nk, then the stage on each tile ------------- */
/* Workspace of the output stages (offsets from the 64-byte aligned start):
 *   zeros  1024 bytes: 256 int32 zeros (the row terms rt, b_zp = 0; the column sums when the
 *          correction factor ca is 0)
 *   cs     r64(4 * nb)       column sums of the current tile of B (filled by the kernel)
 *   pack   r64(2 * mb * Kp)  the panel of A laid out (VNNI: A + 128; DSP: int16 A - a_zp)
 *   tile   r64(4 * mb * nb)  the int32 tile [mb][nb]
 * with mb = min(M, 64), nb = min(N, QMX_MATMUL_TILE_N). */
static qmx_status qmx__k_stage_ws(size_t M, size_t N, size_t K, size_t *bytes) {
    size_t mb, nb, parts[3], total = 64 + 1024;
    int i;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    mb = M < QMX__K_MB ? M : QMX__K_MB;
    nb = N < QMX_MATMUL_TILE_N ? N : QMX_MATMUL_TILE_N;
    if (K > SIZE_MAX / 4 / (2 * mb)) return QMX_ERR_OVERFLOW;
    parts[0] = qmx__k_r64(4 * nb);
    parts[1] = qmx__k_apanel_bytes(M, K);
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

#if defined(QMX__K_VNNI)
static void qmx__k_tiled_vnni(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                              const int8_t *B, size_t ldb, int kn, int32_t a_zp, size_t bs,
                              const uint32_t *zeros, uint8_t *region, int32_t *tile,
                              qmx__k_stage_fn stage, void *ctx);
static void qmx__k_tiled_kn_rows(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                 const int8_t *B, size_t ldb, int32_t a_zp, size_t bs,
                                 int32_t *tile, int32_t *accs, qmx__k_stage_fn stage, void *ctx);
#endif
/* Extra workspace of qmx__k_tiled on [K,N] B (einsum's in-place view): the portable kernel's
 * 4 x K column tile, and below 16 rows the accumulators of qmx__k_kn_stream: [M][r64(N)] int32
 * plus r64(N) column sums. 0 on size_t overflow. */
static size_t qmx__k_kn_extra_bytes(size_t M, size_t N, size_t K) {
    size_t a = qmx__k_r64(K), b;
    if (a > SIZE_MAX / 4) return 0;
    a *= 4;
    if (M >= 16) return a;
    b = qmx__k_r64(N);
    if (b > SIZE_MAX / 4 / (M + 1) || 4 * b * (M + 1) > SIZE_MAX - a) return 0;
    return a + 4 * b * (M + 1);
}


/* Drives the existing kernel: panels of 64 rows of A x tiles of QMX_MATMUL_TILE_N columns of
 * B x K-blocks (increasing), each an int32 tile in the workspace followed at once by the stage
 * (the tile is still in cache). Arguments are already checked; B is [N,K] with zero point 0,
 * or with kn [K,N] (einsum's in-place view), then btile is qmx__k_kn_extra_bytes past the
 * workspace above (64-byte aligned).
 * VNNI, M >= 16 and K-blocks of a multiple of 4: the packed path's register tiles instead of
 * the 4 x 4 dot tiles (about 2.3x faster at M = 128 and 1024), the same int32 tiles. */
static void qmx__k_tiled(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                         const int8_t *B, size_t ldb, int kn, int8_t *btile, int32_t a_zp,
                         size_t bs, void *workspace, qmx__k_stage_fn stage, void *ctx) {
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
    off += qmx__k_apanel_bytes(mbmax, K);
    tile = (int32_t *)(void *)(ws + off);
#if defined(QMX__K_VNNI)
    if (M >= 16 && (bs >= K || bs % 4 == 0)) {
        qmx__k_tiled_vnni(M, N, K, A, lda, B, ldb, kn, a_zp, bs, zeros, pack, tile, stage, ctx);
        return;
    }
    if (kn) { /* few rows on [K,N]: B read row by row, interleaved in registers */
        qmx__k_tiled_kn_rows(M, N, K, A, lda, B, ldb, a_zp, bs, tile,
                             (int32_t *)(void *)(btile + 4 * qmx__k_r64(K)), stage, ctx);
        return;
    }
#endif
    ca = (uint32_t)a_zp;
    if (QMX__K_PACK) ca += 128u; /* dot of (A + 128): subtract 128 * colsum(B) too */
#if defined(QMX__K_DSP)
    ca = 0; /* the DSP kernels subtract a_zp from A itself (the laid-out panel) */
#endif
    for (m0 = 0; m0 < M; m0 += QMX__K_MB) {
        size_t mb = M - m0 < QMX__K_MB ? M - m0 : QMX__K_MB;
        for (n0 = 0; n0 < N; n0 += QMX_MATMUL_TILE_N) {
            size_t nb = N - n0 < QMX_MATMUL_TILE_N ? N - n0 : QMX_MATMUL_TILE_N;
            for (blk = 0, kb = 0; kb < K; blk++, kb += bs) {
                size_t kl = K - kb < bs ? K - kb : bs;
                /* column sums of this block of B are needed only when ca != 0; they are
                 * recomputed by the kernel while each 4-row tile of B is in cache */
                qmx__k_mm_nk(mb, nb, kl, A + m0 * lda + kb, lda,
                             kn ? B + kb * ldb + n0 : B + n0 * ldb + kb, ldb, tile, nb,
                             ca ? cs : (const int32_t *)(const void *)zeros, ca ? cs : NULL,
                             zeros, ca, a_zp, pack, kn, btile);
                stage(ctx, m0, mb, n0, nb, blk, tile);
                if (K - kb <= bs) break; /* last block (also avoids kb + bs overflowing) */
            }
        }
    }
}

/* finite and > 0 (NaN fails both comparisons, +Inf the second) */
static int qmx__k_scale_ok(float s) { return s > 0.0f && s <= FLT_MAX; }
/* qmx__k_scale_ok for n scales (one branch-free pass: a call may check N * nblk of them) */
static int qmx__k_scales_ok(const float *s, size_t n) {
    size_t i = 0;
    unsigned bad = 0;
#if defined(QMX__AVX512)
    const __m512 zero = _mm512_setzero_ps(), mx = _mm512_set1_ps(FLT_MAX);
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(s + i); /* ordered compares: NaN fails both */
        bad |= (unsigned)(uint16_t)~(_mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ) &
                                     _mm512_cmp_ps_mask(v, mx, _CMP_LE_OQ));
    }
#endif
    for (; i < n; i++) bad |= (unsigned)!qmx__k_scale_ok(s[i]);
    return bad == 0;
}

/* The scales of a dequant-on-output call (plain or packed weights): their count for nblk =
 * ceil(K / block_size) blocks (block_size > 0, checked before), lengths and values. */
static qmx_status qmx__k_check_f32_scales(const qmx_matmul_i8_f32_scales *s, size_t M, size_t N,
                                          size_t K, size_t *nblk_out) {
    size_t nblk = K / s->block_size + (K % s->block_size != 0), na, nb;
    /* nblk <= K <= QMX_MATMUL_I8_MAX_K: the products cannot overflow unless M or N is huge */
    na = s->a_per_row ? M : 1;
    nb = s->b_per_col ? N : 1;
    if (na > SIZE_MAX / nblk || nb > SIZE_MAX / nblk) return QMX_ERR_OVERFLOW;
    if (s->a_scales_len < na * nblk || s->b_scales_len < nb * nblk)
        return QMX_ERR_BUFFER_TOO_SMALL;
    if (!qmx__k_scales_ok(s->a_scales, na * nblk) || !qmx__k_scales_ok(s->b_scales, nb * nblk))
        return QMX_ERR_ARG;
    *nblk_out = nblk;
    return QMX_OK;
}

/* ---- fully-connected ---- */
typedef struct qmx__k_fc_ctx {
    const qmx_requant_config *rq;
    void *out;
    size_t ldo;
    int32_t amin, amax, ozp;   /* ozp: the effective output zero point (see qmx__k_fc_prep) */
    int32_t lov, hiv;          /* v + ozp clamps to amin iff v < lov, to amax iff v > hiv */
    int i16;
    /* weight zero point (rq->weight_zero_point) of the int8 kernels: the tiles hold
     * sum (A - a_zp) * W, the stage adds w_zp * (K*a_zp - rowsum(A)) (see qmx__k_fc_wzp) */
    int32_t w_zp, a_zp;
    const int8_t *A;
    size_t lda, K;
} qmx__k_fc_ctx;

#if defined(QMX__AVX512)
#if defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* The output stage, 16 lanes at a time: the integer arithmetic of qmx_requantize,
 * qmx_requantize_single_rounding and qmx_requantize_float lane by lane, so the same bits.
 * Double rounding: gemmlowp's SaturatingRoundingDoublingHighMul is (x * m + 2^30) >> 31
 * (arithmetic) for every product (its nudge-and-truncate rounds ties up, as this does), and
 * only x = m = INT32_MIN exceeds int32 (2^31: INT32_MAX after the min, as gemmlowp); then
 * RoundingDivideByPOT. Single rounding: (acc * m + 2^(30 - shift)) >> (31 - shift) in 64
 * bits, saturated. Float: (float)acc * scale, converted nearest-even (an integer-valued float
 * converts exactly; >= 2^31 is held below 2^31 first: the clamp to the output range follows). */
QMX__VINLINE __m512i qmx__k_rq16(__m512i a, __m512i mu, __m512i sh, __m512 sc, int mode) {
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    const __m512i lim = _mm512_set1_epi64(0x7FFFFFFFLL);
    if (mode == QMX_REQUANT_DOUBLE_ROUNDING) {
        const __m512i half = _mm512_set1_epi64((long long)1 << 30);
        __m512i left = _mm512_max_epi32(sh, zero), right = _mm512_max_epi32(_mm512_sub_epi32(zero, sh), zero);
        __m512i xv = _mm512_sllv_epi32(a, left), ev, od, v, mask, rem, thr;
        ev = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(xv, mu), half), 31);
        od = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(xv, 32),
                                                                 _mm512_srli_epi64(mu, 32)), half), 31);
        ev = _mm512_min_epi64(ev, lim);
        od = _mm512_min_epi64(od, lim);
        v = _mm512_mask_blend_epi32((__mmask16)0xAAAA, ev, _mm512_slli_epi64(od, 32));
        mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
        rem = _mm512_and_si512(v, mask);
        thr = _mm512_add_epi32(_mm512_srli_epi32(mask, 1), _mm512_srli_epi32(v, 31));
        v = _mm512_srav_epi32(v, right);
        return _mm512_mask_add_epi32(v, _mm512_cmpgt_epi32_mask(rem, thr), v, one);
    } else if (mode == QMX_REQUANT_SINGLE_ROUNDING) {
        const __m512i one64 = _mm512_set1_epi64(1), lo32 = _mm512_set1_epi64(0xFFFFFFFFLL);
        const __m512i nlim = _mm512_set1_epi64(-0x80000000LL);
        __m512i tot = _mm512_sub_epi32(_mm512_set1_epi32(31), sh), te, to, ev, od;
        te = _mm512_and_si512(tot, lo32);
        to = _mm512_srli_epi64(tot, 32);
        ev = _mm512_add_epi64(_mm512_mul_epi32(a, mu), _mm512_sllv_epi64(one64, _mm512_sub_epi64(te, one64)));
        od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(mu, 32)),
                              _mm512_sllv_epi64(one64, _mm512_sub_epi64(to, one64)));
        ev = _mm512_max_epi64(_mm512_min_epi64(_mm512_srav_epi64(ev, te), lim), nlim);
        od = _mm512_max_epi64(_mm512_min_epi64(_mm512_srav_epi64(od, to), lim), nlim);
        return _mm512_mask_blend_epi32((__mmask16)0xAAAA, ev, _mm512_slli_epi64(od, 32));
    } else {
        __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(a), sc);
        t = _mm512_min_ps(t, _mm512_set1_ps(2147483520.0f));
        return _mm512_cvt_roundps_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
}

QMX__VINLINE void qmx__k_fc_stage16(const qmx__k_fc_ctx *x, size_t m0, size_t mb, size_t n0,
                                    size_t nb, const int32_t *tile, int mode) {
    const qmx_requant_config *c = x->rq;
    const int pc = c->per_channel != 0, i16 = x->i16;
    const __m512i lo = _mm512_set1_epi32(x->lov), hi = _mm512_set1_epi32(x->hiv);
    const __m512i ozp = _mm512_set1_epi32(x->ozp);
    __m512i mu = _mm512_setzero_si512(), sh = mu;
    __m512 sc = _mm512_setzero_ps();
    size_t i, j;
    if (!pc) {
        if (mode == QMX_REQUANT_FLOAT) sc = _mm512_set1_ps(c->scales[0]);
        else { mu = _mm512_set1_epi32(c->multipliers[0]); sh = _mm512_set1_epi32(c->shifts[0]); }
    }
    for (j = 0; j < nb; j += 16) {  /* columns outer: the channel's parameters load once */
        __mmask16 km = nb - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nb - j)) - 1u);
        __m512i bias = c->bias ? _mm512_maskz_loadu_epi32(km, c->bias + n0 + j) : _mm512_setzero_si512();
        if (pc) {
            if (mode == QMX_REQUANT_FLOAT) sc = _mm512_maskz_loadu_ps(km, c->scales + n0 + j);
            else {
                mu = _mm512_maskz_loadu_epi32(km, c->multipliers + n0 + j);
                sh = _mm512_maskz_loadu_epi32(km, c->shifts + n0 + j);
            }
        }
        for (i = 0; i < mb; i++) {
            __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(km, tile + i * nb + j), bias);
            __m512i v = qmx__k_rq16(a, mu, sh, sc, mode);
            size_t o = (m0 + i) * x->ldo + n0 + j;
            v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi), ozp);
            if (i16) _mm512_mask_cvtepi32_storeu_epi16((void *)((int16_t *)x->out + o), km, v);
            else _mm512_mask_cvtepi32_storeu_epi8((void *)((int8_t *)x->out + o), km, v);
        }
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#endif

#if defined(QMX__AVX2) && !defined(QMX__AVX512)
/* The output stage with AVX2, 8 lanes at a time, the same bits as qmx_requantize*. Double
 * rounding: (x * m + 2^30) >> 31 as with AVX-512; the low 32 bits of a logical 64-bit shift
 * are those of the arithmetic one, and x = m = INT32_MIN (the one overflow) is set to
 * INT32_MAX by a compare. Single rounding: the 64-bit arithmetic shift is a logical one
 * between two XORs with the sign, then a saturation by 64-bit compares. Float: rounded to
 * nearest even by vroundps (not the MXCSR mode), then an exact conversion. */
static __m256i qmx__k_rq8(__m256i a, __m256i mu, __m256i sh, __m256 sc, int mode) {
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    if (mode == QMX_REQUANT_DOUBLE_ROUNDING) {
        const __m256i half = _mm256_set1_epi64x((long long)1 << 30), imin = _mm256_set1_epi32(INT32_MIN);
        __m256i left = _mm256_max_epi32(sh, zero), right = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
        __m256i xv = _mm256_sllv_epi32(a, left), ev, od, v, sat, mask, rem, thr;
        ev = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(xv, mu), half), 31);
        od = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(xv, 32),
                                                                 _mm256_srli_epi64(mu, 32)), half), 31);
        v = _mm256_blend_epi32(ev, _mm256_slli_epi64(od, 32), 0xAA);
        sat = _mm256_and_si256(_mm256_cmpeq_epi32(xv, imin), _mm256_cmpeq_epi32(mu, imin));
        v = _mm256_blendv_epi8(v, _mm256_set1_epi32(INT32_MAX), sat);
        mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
        rem = _mm256_and_si256(v, mask);
        thr = _mm256_add_epi32(_mm256_srli_epi32(mask, 1), _mm256_srli_epi32(v, 31));
        return _mm256_sub_epi32(_mm256_srav_epi32(v, right), _mm256_cmpgt_epi32(rem, thr));
    } else if (mode == QMX_REQUANT_SINGLE_ROUNDING) {
        const __m256i one64 = _mm256_set1_epi64x(1), lo32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
        const __m256i hi = _mm256_set1_epi64x(0x7FFFFFFFLL), lo = _mm256_set1_epi64x(-0x80000000LL);
        __m256i tot = _mm256_sub_epi32(_mm256_set1_epi32(31), sh), t[2], p[2];
        int h;
        t[0] = _mm256_and_si256(tot, lo32);
        t[1] = _mm256_srli_epi64(tot, 32);
        p[0] = _mm256_mul_epi32(a, mu);
        p[1] = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(mu, 32));
        for (h = 0; h < 2; h++) {
            __m256i r = _mm256_add_epi64(p[h], _mm256_sllv_epi64(one64, _mm256_sub_epi64(t[h], one64)));
            __m256i sg = _mm256_cmpgt_epi64(zero, r);
            r = _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(r, sg), t[h]), sg);
            r = _mm256_blendv_epi8(r, hi, _mm256_cmpgt_epi64(r, hi));
            p[h] = _mm256_blendv_epi8(r, lo, _mm256_cmpgt_epi64(lo, r));
        }
        return _mm256_blend_epi32(p[0], _mm256_slli_epi64(p[1], 32), 0xAA);
    } else {
        __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(a), sc);
        t = _mm256_min_ps(t, _mm256_set1_ps(2147483520.0f));
        return _mm256_cvttps_epi32(_mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
}

static void qmx__k_fc_stage_avx2(const qmx__k_fc_ctx *x, size_t m0, size_t mb, size_t n0,
                                 size_t nb, const int32_t *tile, int mode) {
    const qmx_requant_config *c = x->rq;
    const int pc = c->per_channel != 0, i16 = x->i16;
    const __m256i lo = _mm256_set1_epi32(x->lov), hi = _mm256_set1_epi32(x->hiv);
    const __m256i ozp = _mm256_set1_epi32(x->ozp);
    size_t i, j, nv = nb & ~(size_t)7;
    for (i = 0; i < mb; i++) {
        const int32_t *t = tile + i * nb;
        size_t o = (m0 + i) * x->ldo + n0;
        for (j = 0; j < nv; j += 8) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(t + j));
            __m256i mu = _mm256_setzero_si256(), sh = mu, v;
            __m256 sc = _mm256_setzero_ps();
            __m128i h;
            size_t p = pc ? n0 + j : 0;
            if (c->bias) a = _mm256_add_epi32(a, _mm256_loadu_si256((const __m256i *)(const void *)(c->bias + n0 + j)));
            if (mode == QMX_REQUANT_FLOAT) {
                sc = pc ? _mm256_loadu_ps(c->scales + p) : _mm256_set1_ps(c->scales[0]);
            } else {
                mu = pc ? _mm256_loadu_si256((const __m256i *)(const void *)(c->multipliers + p)) : _mm256_set1_epi32(c->multipliers[0]);
                sh = pc ? _mm256_loadu_si256((const __m256i *)(const void *)(c->shifts + p)) : _mm256_set1_epi32(c->shifts[0]);
            }
            v = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(qmx__k_rq8(a, mu, sh, sc, mode), lo), hi), ozp);
            h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); /* exact: in range */
            if (i16) _mm_storeu_si128((__m128i *)(void *)((int16_t *)x->out + o + j), h);
            else _mm_storel_epi64((__m128i *)(void *)((int8_t *)x->out + o + j), _mm_packs_epi16(h, h));
        }
    }
}
#endif

#if defined(QMX__NEON64) && !defined(QMX__AVX512)
/* The output stage on AArch64 NEON, 8 columns at a time, the same bits as qmx_requantize*:
 * vqrdmulhq_s32 is gemmlowp's SaturatingRoundingDoublingHighMul and the fix-up + vrshlq_s32 its
 * RoundingDivideByPOT (gemmlowp's own NEON path); single rounding is a rounding shift of the
 * 64-bit product narrowed with saturation; float: vcvtnq_s32_f32 rounds to nearest even and
 * saturates as qmx_requantize_float. */
static inline int32x4_t qmx__k_rq4(int32x4_t a, int32x4_t mu, int32x4_t sh, float32x4_t sc, int mode) {
    const int32x4_t zero = vdupq_n_s32(0);
    if (mode == QMX_REQUANT_DOUBLE_ROUNDING) {
        int32x4_t left = vmaxq_s32(sh, zero), nright = vminq_s32(sh, zero); /* -right */
        int32x4_t v = vqrdmulhq_s32(vshlq_s32(a, left), mu);
        int32x4_t fix = vshrq_n_s32(vandq_s32(v, nright), 31);
        return vrshlq_s32(vqaddq_s32(v, fix), nright);
    } else if (mode == QMX_REQUANT_SINGLE_ROUNDING) {
        int64x2_t tot_lo, tot_hi;
        int32x4_t ntot = vsubq_s32(sh, vdupq_n_s32(31)); /* -(31 - shift) */
        tot_lo = vmovl_s32(vget_low_s32(ntot));
        tot_hi = vmovl_s32(vget_high_s32(ntot));
        return vcombine_s32(vqmovn_s64(vrshlq_s64(vmull_s32(vget_low_s32(a), vget_low_s32(mu)), tot_lo)),
                            vqmovn_s64(vrshlq_s64(vmull_high_s32(a, mu), tot_hi)));
    } else {
        (void)mu; (void)sh;
        return vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(a), sc));
    }
}

static inline void qmx__k_fc_stage_neon(const qmx__k_fc_ctx *x, size_t m0, size_t mb, size_t n0,
                                        size_t nb, const int32_t *tile, int mode) {
    const qmx_requant_config *c = x->rq;
    const int pc = c->per_channel != 0, i16 = x->i16;
    const int32x4_t lo = vdupq_n_s32(x->lov), hi = vdupq_n_s32(x->hiv);
    const int32x4_t ozp = vdupq_n_s32(x->ozp);
    size_t i, j, nv = nb & ~(size_t)7;
    for (i = 0; i < mb; i++) {
        const int32_t *t = tile + i * nb;
        size_t o = (m0 + i) * x->ldo + n0;
        for (j = 0; j < nv; j += 8) {
            int32x4_t a0 = vld1q_s32(t + j), a1 = vld1q_s32(t + j + 4), mu0, mu1, sh0, sh1, v0, v1;
            float32x4_t sc0, sc1;
            size_t p = pc ? n0 + j : 0;
            if (c->bias) {
                a0 = vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(a0), vld1q_u32((const uint32_t *)(const void *)(c->bias + n0 + j))));
                a1 = vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(a1), vld1q_u32((const uint32_t *)(const void *)(c->bias + n0 + j + 4))));
            }
            if (mode == QMX_REQUANT_FLOAT) {
                sc0 = pc ? vld1q_f32(c->scales + p) : vdupq_n_f32(c->scales[0]);
                sc1 = pc ? vld1q_f32(c->scales + p + 4) : sc0;
                mu0 = mu1 = sh0 = sh1 = vdupq_n_s32(0);
            } else {
                mu0 = pc ? vld1q_s32(c->multipliers + p) : vdupq_n_s32(c->multipliers[0]);
                mu1 = pc ? vld1q_s32(c->multipliers + p + 4) : mu0;
                sh0 = pc ? vld1q_s32((const int32_t *)(const void *)(c->shifts + p)) : vdupq_n_s32(c->shifts[0]);
                sh1 = pc ? vld1q_s32((const int32_t *)(const void *)(c->shifts + p + 4)) : sh0;
                sc0 = sc1 = vdupq_n_f32(0.0f);
            }
            v0 = vaddq_s32(vminq_s32(vmaxq_s32(qmx__k_rq4(a0, mu0, sh0, sc0, mode), lo), hi), ozp);
            v1 = vaddq_s32(vminq_s32(vmaxq_s32(qmx__k_rq4(a1, mu1, sh1, sc1, mode), lo), hi), ozp);
            if (i16) {
                vst1q_s16((int16_t *)x->out + o + j, vcombine_s16(vmovn_s32(v0), vmovn_s32(v1)));
            } else {
                vst1_s8((int8_t *)x->out + o + j, vmovn_s16(vcombine_s16(vmovn_s32(v0), vmovn_s32(v1))));
            }
        }
    }
}
#endif

/* The weight zero point: TFLite's accumulator sum_k (A - a_zp)(W - w_zp) is the tile's
 * sum_k (A - a_zp) W plus w_zp * (K*a_zp - rowsum(A)), added per row in uint32 (exact: the
 * true value fits int32 for K <= QMX_MATMUL_I8_MAX_K). The tile is the caller's workspace;
 * the row sums are recomputed per tile of <= 256 columns (O(M*K*ceil(N/256)) adds). */
static void qmx__k_fc_wzp(const qmx__k_fc_ctx *x, size_t m0, size_t mb, size_t nb,
                          int32_t *tile) {
    const uint32_t wz = (uint32_t)x->w_zp, ka = (uint32_t)x->K * (uint32_t)x->a_zp;
    size_t i, j;
    for (i = 0; i < mb; i++) {
        uint32_t c = wz * (ka - (uint32_t)qmx__k_sum_i8(x->A + (m0 + i) * x->lda, x->K));
        uint32_t *t = (uint32_t *)(void *)(tile + i * nb); /* int32 as uint32: C99 6.5p7 */
        j = 0;
#if defined(QMX__AVX512)   /* (GCC -O2 leaves the loop below scalar) */
        {
            const __m512i cv = _mm512_set1_epi32((int)c);
            for (; j + 16 <= nb; j += 16)
                _mm512_storeu_si512((void *)(t + j),
                                    _mm512_add_epi32(_mm512_loadu_si512((const void *)(t + j)), cv));
        }
#elif defined(QMX__AVX2)
        {
            const __m256i cv = _mm256_set1_epi32((int)c);
            for (; j + 8 <= nb; j += 8)
                _mm256_storeu_si256((__m256i *)(void *)(t + j),
                                    _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(t + j)), cv));
        }
#elif defined(QMX__NEON64)
        {
            const uint32x4_t cv = vdupq_n_u32(c);
            for (; j + 4 <= nb; j += 4) vst1q_u32(t + j, vaddq_u32(vld1q_u32(t + j), cv));
        }
#endif
        for (; j < nb; j++) t[j] += c;
    }
}

static void qmx__k_fc_stage(void *vctx, size_t m0, size_t mb, size_t n0, size_t nb, size_t blk,
                            const int32_t *tile) {
    const qmx__k_fc_ctx *x = (const qmx__k_fc_ctx *)vctx;
    const qmx_requant_config *c = x->rq;
    /* loop invariants in locals: the int8 stores may alias anything the compiler cannot see */
    const qmx_requant_mode mode = c->mode;
    const int pc = c->per_channel != 0, i16 = x->i16;
    const int32_t *bias = c->bias ? c->bias + n0 : NULL;
    const int32_t *mu = c->multipliers, amin = x->amin, amax = x->amax, ozp = x->ozp;
    const int32_t lo = x->lov, hi = x->hiv; /* v + ozp < amin  <=>  v < amin - ozp */
    const int *sh = c->shifts;
    const float *sc = c->scales;
    const size_t p0 = pc ? n0 : 0;
    size_t i, j, j0 = 0; /* the scalar loops below do columns j0 .. nb-1 */
    (void)blk;
    if (x->w_zp != 0) qmx__k_fc_wzp(x, m0, mb, nb, (int32_t *)tile); /* before every path */
#if defined(QMX__AVX512)
    if (sizeof(int) == 4) { /* the shifts are read as int32 lanes */
        if (mode == QMX_REQUANT_DOUBLE_ROUNDING)
            qmx__k_fc_stage16(x, m0, mb, n0, nb, tile, QMX_REQUANT_DOUBLE_ROUNDING);
        else if (mode == QMX_REQUANT_SINGLE_ROUNDING)
            qmx__k_fc_stage16(x, m0, mb, n0, nb, tile, QMX_REQUANT_SINGLE_ROUNDING);
        else
            qmx__k_fc_stage16(x, m0, mb, n0, nb, tile, QMX_REQUANT_FLOAT);
        return;
    }
#elif defined(QMX__AVX2) || defined(QMX__NEON64)
    if (sizeof(int) == 4 && nb >= 8) { /* 8 columns at a time; the rest below */
        size_t nv = nb & ~(size_t)7;
#if defined(QMX__AVX2)
#  define QMX__K_FC8 qmx__k_fc_stage_avx2
#else
#  define QMX__K_FC8 qmx__k_fc_stage_neon
#endif
        if (mode == QMX_REQUANT_DOUBLE_ROUNDING)
            QMX__K_FC8(x, m0, mb, n0, nb, tile, QMX_REQUANT_DOUBLE_ROUNDING);
        else if (mode == QMX_REQUANT_SINGLE_ROUNDING)
            QMX__K_FC8(x, m0, mb, n0, nb, tile, QMX_REQUANT_SINGLE_ROUNDING);
        else
            QMX__K_FC8(x, m0, mb, n0, nb, tile, QMX_REQUANT_FLOAT);
#undef QMX__K_FC8
        if (nv == nb) return;
        j0 = nv;
    }
#elif defined(QMX__RVV)
    if (sizeof(int) == 4) { /* qmx.h's RVV output-stage row (the shifts read as int32 lanes) */
        qmx__rvv_rqrow w;
        w.mode = (int)mode; w.pc = pc; w.esize = i16 ? 2 : 1;
        w.bias = bias;
        w.mu = pc && mu ? mu + n0 : mu; w.sh = pc && sh ? sh + n0 : sh; w.sc = pc && sc ? sc + n0 : sc;
        w.lo = lo; w.hi = hi; w.ozp = ozp;
        for (i = 0; i < mb; i++) {
            size_t o = (m0 + i) * x->ldo + n0;
            w.acc = tile + i * nb;
            w.out = i16 ? (void *)((int16_t *)x->out + o) : (void *)((int8_t *)x->out + o);
            qmx__rvv_requant_row(&w, nb);
        }
        return;
    }
#endif
    /* one loop per mode (unswitched by hand), each calling the scalar qmx.h function */
#define QMX__K_FC_LOOP(REQ)                                                                 \
    for (i = 0; i < mb; i++) {                                                              \
        const int32_t *t = tile + i * nb;                                                   \
        size_t o = (m0 + i) * x->ldo + n0;                                                  \
        for (j = j0; j < nb; j++) {                                                         \
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

/* Checks the output stage of a fully-connected (as qmx_requantize_array checks it) and the
 * output extent; fills the context. */
static qmx_status qmx__k_fc_prep(size_t M, size_t N, size_t ldo, const qmx_requant_config *rq,
                                 void *out, qmx__k_fc_ctx *xp) {
    qmx__k_fc_ctx x;
    qmx_dtype od;
    int32_t lo, hi;
    size_t np, ch, ext;
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
    /* any int32 output zero point (TFLite / CMSIS-NN add it unchecked; e.g. 128 with int8
     * out): out = clamp(v + zp, amin, amax) in exact arithmetic. One that puts every v + zp
     * above amax (below amin) is replaced by the least (greatest) that does the same, so that
     * amin - zp and amax - zp, saturated to int32, bound v and v + zp never overflows. */
    {
        int64_t z = rq->output_zero_point, l, h;
        if (z > (int64_t)x.amax - INT32_MIN) z = (int64_t)x.amax - INT32_MIN;
        if (z < (int64_t)x.amin - INT32_MAX) z = (int64_t)x.amin - INT32_MAX;
        l = (int64_t)x.amin - z;
        h = (int64_t)x.amax - z;
        x.lov = l < INT32_MIN ? INT32_MIN : (int32_t)l;
        x.hiv = h > INT32_MAX ? INT32_MAX : (int32_t)h;
        x.ozp = (int32_t)z;
    }
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
    x.rq = rq; x.out = out; x.ldo = ldo; x.i16 = od == QMX_INT16;
    x.w_zp = 0; x.a_zp = 0; x.A = NULL; x.lda = 0; x.K = 0; /* the int8 callers set them */
    *xp = x;
    return QMX_OK;
}

static qmx_status qmx__par_fc_i8(size_t M, size_t N, size_t K, const int8_t *A,
                                 size_t lda, int32_t a_zp, const int8_t *W, size_t ldw,
                                 const qmx_requant_config *rq, void *out, size_t ldo,
                                 void *workspace, size_t workspace_bytes, int mode) {
    qmx__k_fc_ctx x;
    size_t need;
    qmx_status st;
    if (!A || !out || !rq || !workspace) return QMX_ERR_NULL;
    if (a_zp < -128 || a_zp > 127) return QMX_ERR_ARG;
    if (rq->weight_zero_point < -128 || rq->weight_zero_point > 127) return QMX_ERR_ARG;
    if (M == 0) return QMX_ERR_SIZE;
    st = qmx__k_check_b(W, N, K, ldw, QMX_B_NK);
    if (st != QMX_OK) return st;
    if (lda < K || ldo < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    st = qmx__k_fc_prep(M, N, ldo, rq, out, &x);
    if (st != QMX_OK) return st;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx__k_stage_ws(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.w_zp = rq->weight_zero_point; x.a_zp = a_zp; x.A = A; x.lda = lda; x.K = K;
    qmx__k_tiled(M, N, K, A, lda, W, ldw, 0, NULL, a_zp, K, workspace, qmx__k_fc_stage, &x);
    return QMX_OK;
}

/* ---- dequant-on-output ---- */
typedef struct qmx__k_f32_ctx {
    const qmx_matmul_i8_f32_scales *s;
    float *C;
    size_t ldc, nblk;
} qmx__k_f32_ctx;

#if defined(QMX__AVX512)
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* The stage below, 16 columns at a time: the same four IEEE operations per element (explicit
 * intrinsics: nothing to contract). The tile's column scales of this block are first gathered
 * into sbuf (stride nblk when per-column and per-block), then the rows run in memory order. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off"))) /* GCC contracts vector mul + add into an FMA too */
#endif
static void qmx__k_f32_stage16(const qmx__k_f32_ctx *x, size_t m0, size_t mb, size_t n0,
                               size_t nb, size_t blk, const int32_t *tile) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const qmx_matmul_i8_f32_scales *s = x->s;
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    float sbuf[QMX_MATMUL_TILE_N];   /* nb <= QMX_MATMUL_TILE_N */
    const float *sbp = sbuf;
    size_t i, j;
    if (!s->b_per_col) {
        for (j = 0; j < nb; j++) sbuf[j] = s->b_scales[blk];
    } else if (x->nblk == 1) {
        sbp = s->b_scales + n0;
    } else { /* b_scales[(n0 + j + lane) * nblk + blk]: offsets below 2^31 (checked) */
        __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)x->nblk));
        for (j = 0; j < nb; j += 16) {
            __mmask16 km = nb - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nb - j)) - 1u);
            _mm512_mask_storeu_ps(sbuf + j, km, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), km, idx,
                                                   s->b_scales + (n0 + j) * x->nblk + blk, 4));
        }
    }
    for (i = 0; i < mb; i++) {
        float *c = x->C + (m0 + i) * x->ldc + n0;
        const int32_t *t = tile + i * nb;
        __m512 sa = _mm512_set1_ps(s->a_scales[(s->a_per_row ? (m0 + i) * x->nblk : 0) + blk]);
        for (j = 0; j < nb; j += 16) {
            __mmask16 km = nb - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nb - j)) - 1u);
            __m512 p = _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(km, t + j));
            __m512 sum = blk == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(km, c + j);
            p = _mm512_mul_ps(_mm512_mul_ps(p, sa), _mm512_maskz_loadu_ps(km, sbp + j));
#if defined(__clang__)
            __asm__("" : "+v"(p)); /* as in the scalar stage: p stays a rounded product */
#endif
            _mm512_mask_storeu_ps(c + j, km, _mm512_add_ps(sum, p));
        }
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#endif

#if (defined(QMX__AVX2) || defined(QMX__NEON64)) && !defined(QMX__AVX512)
/* The stage below with AVX2 (8 columns at a time) or AArch64 NEON (4), the tail scalar in the
 * same order: the same four IEEE operations per element, contraction off as there. */
#if defined(QMX__AVX2)
#  define QMX__K_F32V 8
#  define QMX__K_F32V_T __m256
#  define QMX__K_F32V_MUL _mm256_mul_ps
#  define QMX__K_F32V_ADD _mm256_add_ps
#  define QMX__K_F32V_SET1 _mm256_set1_ps
#  define QMX__K_F32V_LD _mm256_loadu_ps
#  define QMX__K_F32V_ST _mm256_storeu_ps
#  define QMX__K_F32V_CVT(p) _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#  define QMX__K_F32V_REG "x"
#else
#  define QMX__K_F32V 4
#  define QMX__K_F32V_T float32x4_t
#  define QMX__K_F32V_MUL vmulq_f32
#  define QMX__K_F32V_ADD vaddq_f32
#  define QMX__K_F32V_SET1 vdupq_n_f32
#  define QMX__K_F32V_LD vld1q_f32
#  define QMX__K_F32V_ST vst1q_f32
#  define QMX__K_F32V_CVT(p) vcvtq_f32_s32(vld1q_s32(p))
#  define QMX__K_F32V_REG "w"
#endif
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void qmx__k_f32_stage_vec(const qmx__k_f32_ctx *x, size_t m0, size_t mb, size_t n0,
                                  size_t nb, size_t blk, const int32_t *tile) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const qmx_matmul_i8_f32_scales *s = x->s;
    float sbuf[QMX_MATMUL_TILE_N];   /* nb <= QMX_MATMUL_TILE_N */
    size_t i, j, nv = nb / QMX__K_F32V * QMX__K_F32V;
    for (j = 0; j < nb; j++) sbuf[j] = s->b_scales[(s->b_per_col ? (n0 + j) * x->nblk : 0) + blk];
    for (i = 0; i < mb; i++) {
        const int32_t *t = tile + i * nb;
        float *c = x->C + (m0 + i) * x->ldc + n0;
        float sa = s->a_scales[(s->a_per_row ? (m0 + i) * x->nblk : 0) + blk];
        QMX__K_F32V_T sav = QMX__K_F32V_SET1(sa);
        for (j = 0; j < nv; j += QMX__K_F32V) {
            QMX__K_F32V_T p = QMX__K_F32V_MUL(QMX__K_F32V_MUL(QMX__K_F32V_CVT(t + j), sav), QMX__K_F32V_LD(sbuf + j));
            QMX__K_F32V_T sum = blk == 0 ? QMX__K_F32V_SET1(0.0f) : QMX__K_F32V_LD(c + j);
#if defined(__clang__)
            __asm__("" : "+" QMX__K_F32V_REG(p)); /* p stays a rounded product */
#endif
            QMX__K_F32V_ST(c + j, QMX__K_F32V_ADD(sum, p));
        }
        for (; j < nb; j++) {
            float p = (float)t[j], sum;
            p = p * sa;
            p = p * sbuf[j];
#if defined(__clang__)
            __asm__("" : "+m"(p));
#endif
            sum = blk == 0 ? 0.0f : c[j];
            sum = sum + p;
            c[j] = sum;
        }
    }
}
#undef QMX__K_F32V
#undef QMX__K_F32V_T
#undef QMX__K_F32V_MUL
#undef QMX__K_F32V_ADD
#undef QMX__K_F32V_SET1
#undef QMX__K_F32V_LD
#undef QMX__K_F32V_ST
#undef QMX__K_F32V_CVT
#undef QMX__K_F32V_REG
#endif

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
#if defined(QMX__AVX512)
    if (x->nblk == 1 || !s->b_per_col || (n0 + nb) * x->nblk <= (size_t)0x7FFFFFFF) {
        qmx__k_f32_stage16(x, m0, mb, n0, nb, blk, tile);
        return;
    }
#elif defined(QMX__AVX2) || defined(QMX__NEON64)
    qmx__k_f32_stage_vec(x, m0, mb, n0, nb, blk, tile);
    return;
#elif defined(QMX__RVV)
    /* the same four IEEE operations per element in vsetvl strips of columns (vector
     * intrinsics: nothing to contract); per-column b scales by a strided load (nblk floats) */
    for (i = 0; i < mb; i++) {
        const int32_t *t = tile + i * nb;
        float *c = x->C + (m0 + i) * x->ldc + n0;
        float sa = s->a_scales[(s->a_per_row ? (m0 + i) * x->nblk : 0) + blk];
        size_t vl;
        for (j = 0; j < nb; j += vl) {
            vfloat32m4_t p, sb;
            vl = __riscv_vsetvl_e32m4(nb - j);
            p = __riscv_vfmul_vf_f32m4(__riscv_vfcvt_f_x_v_f32m4(__riscv_vle32_v_i32m4(t + j, vl), vl), sa, vl);
            sb = s->b_per_col ? __riscv_vlse32_v_f32m4(s->b_scales + (n0 + j) * x->nblk + blk,
                                                       (ptrdiff_t)(x->nblk * sizeof(float)), vl)
                              : __riscv_vfmv_v_f_f32m4(s->b_scales[blk], vl);
            p = __riscv_vfmul_vv_f32m4(p, sb, vl);
            p = blk == 0 ? __riscv_vfadd_vf_f32m4(p, 0.0f, vl)   /* 0.0f + p, as the scalar */
                         : __riscv_vfadd_vv_f32m4(__riscv_vle32_v_f32m4(c + j, vl), p, vl);
            __riscv_vse32_v_f32m4(c + j, p, vl);
        }
    }
    return;
#endif
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

static qmx_status qmx__par_f32(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                               const int8_t *B, size_t ldb, float *C, size_t ldc,
                               const qmx_matmul_i8_f32_scales *s, void *workspace,
                               size_t workspace_bytes, int mode) {
    qmx__k_f32_ctx x;
    size_t need, nblk = 1, ext;
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
    st = qmx__k_check_f32_scales(s, M, N, K, &nblk);
    if (st != QMX_OK) return st;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx__k_stage_ws(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.s = s; x.C = C; x.ldc = ldc; x.nblk = nblk;
    qmx__k_tiled(M, N, K, A, lda, B, ldb, 0, NULL, s->a_zp, s->block_size, workspace,
                 qmx__k_f32_stage, &x);
    return QMX_OK;
}

/* ---- prepacked weights ------------------------------------------------------------------------
 * Blob (see PACKED WEIGHTS): header 64 bytes, then Np int32 weight sums (little-endian), then
 * Np/16 panels of 16 output channels, each Kp/4 groups of 64 bytes: byte 4*j + t of group g of
 * panel p is B(16p + j, 4g + t), 0 outside [N) x [K). */

static const unsigned char qmx__k_pk_magic[8] = {'Q', 'M', 'X', 'I', '8', 'P', 'K', '1'};

static void qmx__k_st32le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static uint32_t qmx__k_ld32le(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* K bytes per cache block of the packed path */
static size_t qmx__k_pk_kc(size_t M, size_t kp) {
    (void)M;
    return kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC;
}

QMX_API qmx_status qmx_matmul_i8_pack_weights_size(size_t N, size_t K, size_t *bytes) {
    size_t np, kp;
    if (!bytes) return QMX_ERR_NULL;
    if (N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I8_MAX_K || N > (size_t)0xFFFFFFF0u) return QMX_ERR_OVERFLOW;
    np = qmx__k_r16(N);
    kp = qmx__k_r4(K);
    if (np > (SIZE_MAX - 64) / (kp + 4)) return QMX_ERR_OVERFLOW;
    *bytes = QMX_MATMUL_I8_PACK_HEADER + np * 4 + np * kp;
    return QMX_OK;
}

QMX_API qmx_status qmx_matmul_i8_pack_weights(const int8_t *B, size_t N, size_t K, size_t ldb,
                                              qmx_b_layout layout, void *packed,
                                              size_t packed_bytes) {
    size_t need, np, kp, p, j, k, i;
    uint8_t *o = (uint8_t *)packed, *w;
    qmx_status st = qmx__k_check_b(B, N, K, ldb, (int)layout);
    if (st != QMX_OK) return st;
    if (!packed) return QMX_ERR_NULL;
    st = qmx_matmul_i8_pack_weights_size(N, K, &need);
    if (st != QMX_OK) return st;
    if (packed_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    np = qmx__k_r16(N);
    kp = qmx__k_r4(K);
    for (i = 0; i < QMX_MATMUL_I8_PACK_HEADER; i++) o[i] = 0;
    for (i = 0; i < 8; i++) o[i] = qmx__k_pk_magic[i];
    qmx__k_st32le(o + 8, (uint32_t)N);
    qmx__k_st32le(o + 12, (uint32_t)K);
    w = o + QMX_MATMUL_I8_PACK_HEADER + np * 4;
    for (p = 0; p < np / 16; p++) {
        uint8_t *pan = w + p * 16 * kp;
        for (j = 0; j < 16; j++) {
            size_t n = p * 16 + j;
            int32_t s = 0;
            for (k = 0; k < kp; k++) {
                int8_t b = 0;
                if (n < N && k < K) b = layout == QMX_B_NK ? B[n * ldb + k] : B[k * ldb + n];
                pan[(k >> 2) * 64 + 4 * j + (k & 3)] = (uint8_t)b;
                s += b;
            }
            qmx__k_st32le(o + QMX_MATMUL_I8_PACK_HEADER + 4 * n, (uint32_t)s);
        }
    }
    return QMX_OK;
}

/* Workspace: 64 (alignment) + r64(4*M) row terms + r64(4*Np) corrections ca*colsum +
 * r64(max(Kp, min(M, 256) * min(Kp, 512))) the panel of A (+128 for VNNI). */
QMX_API qmx_status qmx_matmul_i8_packed_workspace_size(size_t M, size_t N, size_t K,
                                                       size_t *bytes) {
    size_t np, kp, mc, kc, a, parts[3], total = 64;
    int i;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I8_MAX_K || N > (size_t)0xFFFFFFF0u) return QMX_ERR_OVERFLOW;
    if (M > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    np = qmx__k_r16(N);
    if (np > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    kp = qmx__k_r4(K);
    mc = M < QMX__K_PK_MC ? M : QMX__K_PK_MC;
    kc = qmx__k_pk_kc(M, kp);
    a = mc * kc > kp ? mc * kc : kp;
    parts[0] = qmx__k_r64(4 * M);
    parts[1] = qmx__k_r64(4 * np);
    parts[2] = qmx__k_r64(a);
    for (i = 0; i < 3; i++) {
        if (parts[i] > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
        total += parts[i];
    }
    *bytes = total;
    return QMX_OK;
}

/* Checks a blob against (N, K) and its size. */
static qmx_status qmx__k_pk_check(const void *packed, size_t packed_bytes, size_t N, size_t K) {
    const uint8_t *p = (const uint8_t *)packed;
    size_t need, i;
    qmx_status st;
    if (!packed) return QMX_ERR_NULL;
    st = qmx_matmul_i8_pack_weights_size(N, K, &need);
    if (st != QMX_OK) return st;
    if (packed_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < 8; i++)
        if (p[i] != qmx__k_pk_magic[i]) return QMX_ERR_PARSE;
    if (qmx__k_ld32le(p + 8) != (uint32_t)N || qmx__k_ld32le(p + 12) != (uint32_t)K)
        return QMX_ERR_SHAPE;
    return QMX_OK;
}

/* The packed kernels write C[m][n] = dot(a_m, B_n) + rt[m] - cacs[n] (mod 2^32), where the dot
 * is over a_m = A (portable, AVX2, NEON) or A + 128 (VNNI), and cacs[n] = ca * colsum[n]. */
typedef struct qmx__k_pk_args {
    size_t M, N, K, lda, ldc, np, kp, pstride; /* pstride: bytes between panels (16*Kp) */
    const int8_t *A;
    const uint8_t *panels;  /* first panel */
    int32_t *C;
    const uint32_t *rt;     /* [M] */
    const uint32_t *cacs;   /* [Np] (0 past N) */
    uint8_t *apack;         /* the A panel in the workspace */
} qmx__k_pk_args;

#if defined(QMX__K_VNNI)
#if defined(__GNUC__)
#  define QMX__K_AINLINE static __inline__ __attribute__((always_inline))
#else
#  define QMX__K_AINLINE static
#endif
#define QMX__K_VMR 8 /* rows of the VNNI register tile (12 rows were not faster) */
#define QMX__K_VNR 2 /* panels of 16 columns of the register tile (3, i.e. 24 accumulators,
                       * made GCC 12 spill and run at half speed) */
static int32_t qmx__k_ld32(const uint8_t *p) { int32_t v; __builtin_memcpy(&v, p, 4); return v; }
static __mmask16 qmx__k_colmask(size_t nv) {
    return nv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nv) - 1u);
}

/* The micro-kernel: mr (<= 8) rows x nr (1 or 2) panels of 16 columns over ng groups of 4 k.
 * ap: mr x 4 bytes per group (A + 128); b0: the first panel at the first group, the second
 * at b0 + ps. acc: add C's current value (a previous K block); fin: apply
 * the zero-point fix-up. nv: valid columns (<= 16*nr). pf: the next strip of B, prefetched
 * into L2 while this one is used (8-row, 2-panel tiles), or NULL. */
QMX__K_AINLINE void qmx__k_vnni_mk(const int mr, const int nr, const uint8_t *ap,
                                   const int8_t *b0, size_t ps, size_t ng, int32_t *c,
                                   size_t ldc, int acc, int fin, const uint32_t *rt,
                                   const uint32_t *cacs, size_t nv, const int8_t *pf) {
    __m512i z = _mm512_setzero_si512();
    __m512i c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
    __m512i c40 = z, c41 = z, c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z;
    __m512i w0, w1 = z, x, k0 = z, k1 = z;
    __mmask16 m0 = qmx__k_colmask(nv), m1 = qmx__k_colmask(nv > 16 ? nv - 16 : 0);
    const int8_t *b1 = b0 + ps;
    size_t g;
    for (g = 0; g < ng; g++) {
        w0 = _mm512_loadu_si512((const void *)(b0 + 64 * g));
        if (nr > 1) w1 = _mm512_loadu_si512((const void *)(b1 + 64 * g));
        if (mr == 8 && nr == 2 && pf) { /* the next strip into L2: 15-25 % faster on Zen 4 */
            _mm_prefetch((const char *)(pf + 64 * g), _MM_HINT_T1);
            _mm_prefetch((const char *)(pf + ps + 64 * g), _MM_HINT_T1);
        }
#define QMX__K_ROW(i)                                                                       \
        if (mr > i) {                                                                       \
            x = _mm512_set1_epi32(qmx__k_ld32(ap + 4 * i));                                 \
            c##i##0 = _mm512_dpbusd_epi32(c##i##0, x, w0);                                  \
            if (nr > 1) c##i##1 = _mm512_dpbusd_epi32(c##i##1, x, w1);                      \
        }
        QMX__K_ROW(0) QMX__K_ROW(1) QMX__K_ROW(2) QMX__K_ROW(3)
        QMX__K_ROW(4) QMX__K_ROW(5) QMX__K_ROW(6) QMX__K_ROW(7)
#undef QMX__K_ROW
        ap += 4 * mr;
    }
    if (fin) {
        k0 = _mm512_maskz_loadu_epi32(m0, cacs);
        if (nr > 1) k1 = _mm512_maskz_loadu_epi32(m1, cacs + 16);
    }
#define QMX__K_ST(i)                                                                        \
    if (mr > i) {                                                                           \
        int32_t *cr = c + i * ldc;                                                          \
        __m512i v0 = c##i##0, v1 = c##i##1;                                                 \
        if (acc) {                                                                          \
            v0 = _mm512_add_epi32(v0, _mm512_maskz_loadu_epi32(m0, cr));                    \
            if (nr > 1) v1 = _mm512_add_epi32(v1, _mm512_maskz_loadu_epi32(m1, cr + 16));   \
        }                                                                                   \
        if (fin) {                                                                          \
            __m512i r = _mm512_set1_epi32((int)rt[i]);                                      \
            v0 = _mm512_sub_epi32(_mm512_add_epi32(v0, r), k0);                             \
            v1 = _mm512_sub_epi32(_mm512_add_epi32(v1, r), k1);                             \
        }                                                                                   \
        _mm512_mask_storeu_epi32(cr, m0, v0);                                               \
        if (nr > 1) _mm512_mask_storeu_epi32(cr + 16, m1, v1);                              \
    }
    QMX__K_ST(0) QMX__K_ST(1) QMX__K_ST(2) QMX__K_ST(3)
    QMX__K_ST(4) QMX__K_ST(5) QMX__K_ST(6) QMX__K_ST(7)
#undef QMX__K_ST
}

#define QMX__K_MK_CASE(MR)                                                                  \
    case MR:                                                                                \
        if (nr == 2) qmx__k_vnni_mk(MR, 2, ap, b0, ps, ng, c, ldc, acc, fin, rt, cacs, nv, pf); \
        else qmx__k_vnni_mk(MR, 1, ap, b0, ps, ng, c, ldc, acc, fin, rt, cacs, nv, pf);         \
        break;
static void qmx__k_vnni_mk_any(int mr, int nr, const uint8_t *ap, const int8_t *b0, size_t ps,
                               size_t ng, int32_t *c, size_t ldc, int acc, int fin,
                               const uint32_t *rt, const uint32_t *cacs, size_t nv,
                               const int8_t *pf) {
    switch (mr) {
    QMX__K_MK_CASE(1) QMX__K_MK_CASE(2) QMX__K_MK_CASE(3) QMX__K_MK_CASE(4)
    QMX__K_MK_CASE(5) QMX__K_MK_CASE(6) QMX__K_MK_CASE(7)
    default: QMX__K_MK_CASE(8)
    }
}
#undef QMX__K_MK_CASE

/* GEMV (M = 1): np (<= 4) panels over all ng groups, two groups per step (8 independent
 * accumulator chains). a: Kp bytes of A + 128. Memory-bound: software prefetch (512 B to
 * 4 KiB ahead) and 1 or 2 streams were measured slower than these 4 hardware-prefetched
 * streams, from L3 and from DRAM. */
QMX__K_AINLINE void qmx__k_vnni_gemv(const int np, const uint8_t *a, const int8_t *b,
                                     size_t pstride, size_t ng, int32_t *c, uint32_t rt,
                                     const uint32_t *cacs, size_t nv) {
    __m512i z = _mm512_setzero_si512();
    __m512i c0 = z, c1 = z, c2 = z, c3 = z, e0 = z, e1 = z, e2 = z, e3 = z, x, y;
    const int8_t *q0 = b, *q1 = b + pstride, *q2 = b + 2 * pstride, *q3 = b + 3 * pstride;
    size_t g = 0;
    for (; g + 2 <= ng; g += 2) {
        x = _mm512_set1_epi32(qmx__k_ld32(a + 4 * g));
        y = _mm512_set1_epi32(qmx__k_ld32(a + 4 * g + 4));
        c0 = _mm512_dpbusd_epi32(c0, x, _mm512_loadu_si512((const void *)(q0 + 64 * g)));
        e0 = _mm512_dpbusd_epi32(e0, y, _mm512_loadu_si512((const void *)(q0 + 64 * g + 64)));
        if (np > 1) {
            c1 = _mm512_dpbusd_epi32(c1, x, _mm512_loadu_si512((const void *)(q1 + 64 * g)));
            e1 = _mm512_dpbusd_epi32(e1, y, _mm512_loadu_si512((const void *)(q1 + 64 * g + 64)));
        }
        if (np > 2) {
            c2 = _mm512_dpbusd_epi32(c2, x, _mm512_loadu_si512((const void *)(q2 + 64 * g)));
            e2 = _mm512_dpbusd_epi32(e2, y, _mm512_loadu_si512((const void *)(q2 + 64 * g + 64)));
        }
        if (np > 3) {
            c3 = _mm512_dpbusd_epi32(c3, x, _mm512_loadu_si512((const void *)(q3 + 64 * g)));
            e3 = _mm512_dpbusd_epi32(e3, y, _mm512_loadu_si512((const void *)(q3 + 64 * g + 64)));
        }
    }
    if (g < ng) {
        x = _mm512_set1_epi32(qmx__k_ld32(a + 4 * g));
        c0 = _mm512_dpbusd_epi32(c0, x, _mm512_loadu_si512((const void *)(q0 + 64 * g)));
        if (np > 1) c1 = _mm512_dpbusd_epi32(c1, x, _mm512_loadu_si512((const void *)(q1 + 64 * g)));
        if (np > 2) c2 = _mm512_dpbusd_epi32(c2, x, _mm512_loadu_si512((const void *)(q2 + 64 * g)));
        if (np > 3) c3 = _mm512_dpbusd_epi32(c3, x, _mm512_loadu_si512((const void *)(q3 + 64 * g)));
    }
    {
        __m512i r = _mm512_set1_epi32((int)rt);
#define QMX__K_GV_ST(i, C, E)                                                               \
        if (np > i) {                                                                       \
            size_t nn = nv > 16 * i ? nv - 16 * i : 0;                                      \
            __mmask16 mk = qmx__k_colmask(nn);                                              \
            __m512i v = _mm512_add_epi32(_mm512_add_epi32(C, E), r);                        \
            v = _mm512_sub_epi32(v, _mm512_maskz_loadu_epi32(mk, cacs + 16 * i));           \
            _mm512_mask_storeu_epi32(c + 16 * i, mk, v);                                    \
        }
        QMX__K_GV_ST(0, c0, e0) QMX__K_GV_ST(1, c1, e1)
        QMX__K_GV_ST(2, c2, e2) QMX__K_GV_ST(3, c3, e3)
#undef QMX__K_GV_ST
    }
}

/* Packs rows 0..mc-1 of A (row r at A + r*lda), K range [kb, kb + kl) (kl a multiple of 4;
 * bytes past K are 0), as A + 128 in blocks of 8 rows: block i (rows i..i+mr-1) at ap + i*kl,
 * group g of it at + g*4*mr, row r of the block at + 4*r. */
/* A full block of 8 rows, 64 bytes (16 groups) at a time: an 8 x 16 transpose of dwords. */
static void qmx__k_vnni_packa8(const int8_t *A, size_t lda, size_t K, size_t kb, size_t kl,
                               uint8_t *dst) {
    const __mmask16 f16 = (__mmask16)0xFFFF;
    const __mmask8 f8 = (__mmask8)0xFF;
    const __m512i sign = _mm512_set1_epi8((char)0x80);
    size_t c, ngr = kl / 4;
    for (c = 0; c * 16 < ngr; c++) {
        size_t pos = kb + 64 * c, kv = K > pos ? K - pos : 0, gc = ngr - 16 * c, r;
        __m512i R[8], T[8], U[4], V[4], W[8];
        __mmask64 mk;
        int e, L;
        if (kv > 64) kv = 64;
        if (gc > 16) gc = 16;
        mk = kv >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << kv) - 1u);
        for (r = 0; r < 8; r++) /* A + 128 below K, 0 past it */
            R[r] = _mm512_maskz_mov_epi8(mk, _mm512_xor_si512(
                       _mm512_maskz_loadu_epi8(mk, A + r * lda + pos), sign));
        for (r = 0; r < 8; r += 2) {
            T[r] = _mm512_maskz_unpacklo_epi32(f16, R[r], R[r + 1]);
            T[r + 1] = _mm512_maskz_unpackhi_epi32(f16, R[r], R[r + 1]);
        }
        /* U[e] (rows 0-3) and V[e] (rows 4-7): per 128-bit lane L, group 4L + e */
        U[0] = _mm512_maskz_unpacklo_epi64(f8, T[0], T[2]);
        U[1] = _mm512_maskz_unpackhi_epi64(f8, T[0], T[2]);
        U[2] = _mm512_maskz_unpacklo_epi64(f8, T[1], T[3]);
        U[3] = _mm512_maskz_unpackhi_epi64(f8, T[1], T[3]);
        V[0] = _mm512_maskz_unpacklo_epi64(f8, T[4], T[6]);
        V[1] = _mm512_maskz_unpackhi_epi64(f8, T[4], T[6]);
        V[2] = _mm512_maskz_unpacklo_epi64(f8, T[5], T[7]);
        V[3] = _mm512_maskz_unpackhi_epi64(f8, T[5], T[7]);
        for (e = 0; e < 4; e++) { /* W[2e] = [U.l0 U.l1 V.l0 V.l1], W[2e+1] = lanes 2, 3 */
            W[2 * e] = _mm512_maskz_shuffle_i32x4(f16, U[e], V[e], 0x44);
            W[2 * e + 1] = _mm512_maskz_shuffle_i32x4(f16, U[e], V[e], 0xEE);
        }
        for (L = 0; L < 4; L++)
            for (e = 0; e < 4; e += 2) { /* groups 4L + e, 4L + e + 1: 64 bytes */
                size_t g = 4 * (size_t)L + (size_t)e;
                const __m512i *wa = &W[2 * e + (L >> 1)], *wb = &W[2 * (e + 1) + (L >> 1)];
                __m512i o = (L & 1) ? _mm512_maskz_shuffle_i32x4(f16, *wa, *wb, 0xDD)
                                    : _mm512_maskz_shuffle_i32x4(f16, *wa, *wb, 0x88);
                if (g + 1 < gc)
                    _mm512_storeu_si512((void *)(dst + (16 * c + g) * 32), o);
                else if (g < gc)
                    _mm512_mask_storeu_epi32((void *)(dst + (16 * c + g) * 32), (__mmask16)0xFF, o);
            }
    }
}

/* Packs rows 0..mc-1 of A (row r at A + r*lda), K range [kb, kb + kl) (kl a multiple of 4;
 * bytes past K are 0), as A + 128 in blocks of 8 rows: block i (rows i..i+mr-1) at ap + i*kl,
 * group g of it at + g*4*mr, row r of the block at + 4*r. */
static void qmx__k_vnni_packa(const int8_t *A, size_t lda, size_t K, size_t mc, size_t kb,
                              size_t kl, uint8_t *ap) {
    size_t i, r, q;
    for (i = 0; i < mc; i += QMX__K_VMR) {
        size_t mr = mc - i < QMX__K_VMR ? mc - i : QMX__K_VMR;
        uint8_t *dst = ap + i * kl;
        if (mr == 8) {
            qmx__k_vnni_packa8(A + i * lda, lda, K, kb, kl, dst);
            continue;
        }
        for (r = 0; r < mr; r++) {
            const int8_t *src = A + (i + r) * lda + kb;
            size_t kv = K > kb ? K - kb : 0;
            uint8_t *d = dst + 4 * r;
            if (kv > kl) kv = kl;
            for (q = 0; q + 4 <= kv; q += 4) {
                uint32_t u;
                __builtin_memcpy(&u, src + q, 4);
                u ^= 0x80808080u;
                __builtin_memcpy(d + q * mr, &u, 4);
            }
            for (; q < kl; q++)
                d[(q >> 2) * 4 * mr + (q & 3)] = q < kv ? (uint8_t)((uint8_t)src[q] ^ 0x80u) : 0;
        }
    }
}

/* Packs columns n0..n0+nv-1 (nv <= 32) of plain [N,K] B, K range [kb, kb + kl), into two
 * panels of the blob format (16 columns x kl, panel stride 16*kl; zeros past N and K): a 16x16
 * transpose of 4-byte groups per 64 bytes of 16 rows. cs != NULL: adds the column sums. */
static void qmx__k_vnni_packb(const int8_t *B, size_t ldb, size_t K, size_t nv, size_t kb,
                              size_t kl, int8_t *dst, int32_t *cs) {
    const __mmask16 f16 = (__mmask16)0xFFFF;
    const __mmask8 f8 = (__mmask8)0xFF;
    const __m512i ones = _mm512_set1_epi8(1);
    size_t p, c, j, ngr = kl / 4;
    for (p = 0; p * 16 < nv; p++) {
        __m512i sums = _mm512_setzero_si512();
        size_t pv = nv - 16 * p < 16 ? nv - 16 * p : 16;
        int8_t *pd = dst + p * 16 * kl;
        for (c = 0; c * 16 < ngr; c++) {
            size_t pos = kb + 64 * c, lim = kl - 64 * c, kv;
            __m512i r[16], t[16], u[16];
            __mmask64 mk;
            int e, L;
            kv = K > pos ? K - pos : 0;
            if (kv > lim) kv = lim;
            mk = kv >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << kv) - 1u);
            for (j = 0; j < 16; j++)
                r[j] = j < pv ? _mm512_maskz_loadu_epi8(mk, B + (16 * p + j) * ldb + pos)
                              : _mm512_setzero_si512();
            for (j = 0; j < 16; j += 2) {
                t[j] = _mm512_maskz_unpacklo_epi32(f16, r[j], r[j + 1]);
                t[j + 1] = _mm512_maskz_unpackhi_epi32(f16, r[j], r[j + 1]);
            }
            for (j = 0; j < 16; j += 4) { /* u[j + e]: element e of each lane, rows j..j+3 */
                u[j] = _mm512_maskz_unpacklo_epi64(f8, t[j], t[j + 2]);
                u[j + 1] = _mm512_maskz_unpackhi_epi64(f8, t[j], t[j + 2]);
                u[j + 2] = _mm512_maskz_unpacklo_epi64(f8, t[j + 1], t[j + 3]);
                u[j + 3] = _mm512_maskz_unpackhi_epi64(f8, t[j + 1], t[j + 3]);
            }
            for (e = 0; e < 4; e++) { /* 4x4 transpose of 128-bit lanes: group 4L + e */
                __m512i s0 = _mm512_maskz_shuffle_i32x4(f16, u[e], u[4 + e], 0x44);
                __m512i s1 = _mm512_maskz_shuffle_i32x4(f16, u[e], u[4 + e], 0xEE);
                __m512i s2 = _mm512_maskz_shuffle_i32x4(f16, u[8 + e], u[12 + e], 0x44);
                __m512i s3 = _mm512_maskz_shuffle_i32x4(f16, u[8 + e], u[12 + e], 0xEE);
                __m512i o[4];
                o[0] = _mm512_maskz_shuffle_i32x4(f16, s0, s2, 0x88);
                o[1] = _mm512_maskz_shuffle_i32x4(f16, s0, s2, 0xDD);
                o[2] = _mm512_maskz_shuffle_i32x4(f16, s1, s3, 0x88);
                o[3] = _mm512_maskz_shuffle_i32x4(f16, s1, s3, 0xDD);
                for (L = 0; L < 4; L++) {
                    size_t gi = 16 * c + 4 * (size_t)L + (size_t)e;
                    if (gi < ngr) {
                        _mm512_storeu_si512((void *)(pd + 64 * gi), o[L]);
                        if (cs) sums = _mm512_dpbusd_epi32(sums, ones, o[L]);
                    }
                }
            }
        }
        if (cs) {
            int32_t tmp[16];
            _mm512_storeu_si512((void *)tmp, sums);
            for (j = 0; j < pv; j++) cs[16 * p + j] += tmp[j];
        }
    }
}

/* qmx__k_vnni_packb for [K,N] B (element (n, k) at B[k * ldb + n], B at column 0 of the strip,
 * nv <= 32):
 * per group of 4 k, the four rows' 16 bytes of a panel are interleaved by two rounds of unpacks
 * into the 64 bytes (column j: its 4 k at bytes 4j..4j+3). Zeros past nv columns and past K.
 * Groups outer, panels inner: each row's bytes of the strip are read together (rows ldb apart
 * fall in few cache sets when ldb is a power of two). */
static void qmx__k_vnni_packb_kn(const int8_t *B, size_t ldb, size_t K, size_t nv, size_t kb,
                                 size_t kl, int8_t *dst, int32_t *cs) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i sums[2];
    __mmask16 cm[2];
    size_t p, g, ngr = kl / 4, npan = (nv + 15) / 16;
    int t;
    for (p = 0; p < npan; p++) {
        size_t pv = nv - 16 * p < 16 ? nv - 16 * p : 16;
        cm[p] = (__mmask16)(pv >= 16 ? 0xFFFFu : (1u << pv) - 1u);
        sums[p] = _mm512_setzero_si512();
    }
    for (g = 0; g < ngr; g++)
        for (p = 0; p < npan; p++) {
            __m128i r[4], a0, a1, a2, a3;
            __m512i o;
            for (t = 0; t < 4; t++) {
                size_t k = kb + 4 * g + (size_t)t;
                r[t] = k < K ? _mm_maskz_loadu_epi8(cm[p], B + k * ldb + 16 * p) : _mm_setzero_si128();
            }
            a0 = _mm_unpacklo_epi8(r[0], r[1]);
            a1 = _mm_unpackhi_epi8(r[0], r[1]);
            a2 = _mm_unpacklo_epi8(r[2], r[3]);
            a3 = _mm_unpackhi_epi8(r[2], r[3]);
            o = _mm512_castsi128_si512(_mm_unpacklo_epi16(a0, a2));
            o = _mm512_inserti32x4(o, _mm_unpackhi_epi16(a0, a2), 1);
            o = _mm512_inserti32x4(o, _mm_unpacklo_epi16(a1, a3), 2);
            o = _mm512_inserti32x4(o, _mm_unpackhi_epi16(a1, a3), 3);
            _mm512_storeu_si512((void *)(dst + p * 16 * kl + 64 * g), o);
            if (cs) sums[p] = _mm512_dpbusd_epi32(sums[p], ones, o);
        }
    if (cs)
        for (p = 0; p < npan; p++) {
            int32_t tmp[16];
            size_t j, pv = nv - 16 * p < 16 ? nv - 16 * p : 16;
            _mm512_storeu_si512((void *)tmp, sums[p]);
            for (j = 0; j < pv; j++) cs[16 * p + j] += tmp[j];
        }
}

/* qmx_matmul_i8 on plain [N,K] B with the packed kernels: as qmx__k_pk_run, with each 32-column
 * strip of B packed into the workspace (bp, 32*KC bytes) per K block and panel of A. cs: the
 * column sums; cs_fill != NULL (then cs == cs_fill): computed here, on the first panel. */
static void qmx__k_vnni_plain(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                              const int8_t *B, size_t ldb, int kn, int32_t *C, size_t ldc,
                              const uint32_t *rt, const int32_t *cs, int32_t *cs_fill,
                              uint32_t ca, uint8_t *apack, int8_t *bp) {
    size_t kp = qmx__k_r4(K), kb, m0, n0, i;
    uint32_t cacs[32];
    if (cs_fill)
        for (n0 = 0; n0 < N; n0++) cs_fill[n0] = 0;
    for (kb = 0; kb < kp; kb += QMX__K_PK_KC) {
        size_t kl = kp - kb < QMX__K_PK_KC ? kp - kb : QMX__K_PK_KC, ng = kl / 4;
        int acc = kb != 0, fin = kb + kl >= kp;
        for (m0 = 0; m0 < M; m0 += QMX__K_PK_MC) {
            size_t mc = M - m0 < QMX__K_PK_MC ? M - m0 : QMX__K_PK_MC;
            qmx__k_vnni_packa(A + m0 * lda, lda, K, mc, kb, kl, apack);
            for (n0 = 0; n0 < N; n0 += 32) {
                size_t nv = N - n0 < 32 ? N - n0 : 32;
                int nr = nv > 16 ? 2 : 1;
                if (kn)
                    qmx__k_vnni_packb_kn(B + n0, ldb, K, nv, kb, kl, bp,
                                         cs_fill && m0 == 0 ? cs_fill + n0 : NULL);
                else
                    qmx__k_vnni_packb(B + n0 * ldb, ldb, K, nv, kb, kl, bp,
                                      cs_fill && m0 == 0 ? cs_fill + n0 : NULL);
                if (fin)
                    for (i = 0; i < 32; i++) cacs[i] = i < nv ? ca * (uint32_t)cs[n0 + i] : 0u;
                for (i = 0; i < mc; i += QMX__K_VMR) {
                    int mr = mc - i < QMX__K_VMR ? (int)(mc - i) : QMX__K_VMR;
                    qmx__k_vnni_mk_any(mr, nr, apack + i * kl, bp, 16 * kl, ng,
                                       C + (m0 + i) * ldc + n0, ldc, acc, fin, rt + m0 + i,
                                       cacs, nv, NULL);
                }
            }
        }
    }
}

/* qmx__k_tiled on the packed path's kernels. Per panel of up to 64 rows, A + 128 is laid out
 * once over all of K in the first half of the panel region (mbmax * Kp bytes); per tile, K-block
 * and strip of sw columns, the strip of B is packed into the second half (sw <= mbmax, so it
 * fits) with its column sums, and the 8 x 32 register tiles write the block's exact sums of
 * (A - a_zp) * B: dot(A + 128, B) - (a_zp + 128) * colsum, wrap-free in uint32. */
#define QMX__K_TV_KC 1024 /* K bytes per chunk of a strip: 32 KiB, L1 (1.3-1.4x faster than
                           * the whole strip at once from L2, Zen 5) */
static void qmx__k_tiled_vnni(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                              const int8_t *B, size_t ldb, int kn, int32_t a_zp, size_t bs,
                              const uint32_t *zeros, uint8_t *region, int32_t *tile,
                              qmx__k_stage_fn stage, void *ctx) {
    size_t kp = qmx__k_r4(K), mbmax = M < QMX__K_MB ? M : QMX__K_MB;
    size_t sw = mbmax >= 32 ? 32 : 16, m0, n0, s0, kb, blk, i, j;
    uint8_t *ap = region;
    int8_t *bp = (int8_t *)(void *)(region + mbmax * kp);
    uint32_t ca = (uint32_t)a_zp + 128u, cacs[32];
    int32_t cs[32];
    for (m0 = 0; m0 < M; m0 += QMX__K_MB) {
        size_t mb = M - m0 < QMX__K_MB ? M - m0 : QMX__K_MB;
        qmx__k_vnni_packa(A + m0 * lda, lda, K, mb, 0, kp, ap);
        for (n0 = 0; n0 < N; n0 += QMX_MATMUL_TILE_N) {
            size_t nb = N - n0 < QMX_MATMUL_TILE_N ? N - n0 : QMX_MATMUL_TILE_N;
            for (blk = 0, kb = 0; kb < K; blk++, kb += bs) {
                size_t kl = K - kb < bs ? K - kb : bs, kl4 = qmx__k_r4(kl);
                for (s0 = 0; s0 < nb; s0 += sw) {
                    size_t nv = nb - s0 < sw ? nb - s0 : sw, c0, cl;
                    for (j = 0; j < 32; j++) cs[j] = 0;
                    for (c0 = 0; c0 < kl4; c0 += cl) { /* chunks of the strip that stay in L1 */
                        int fin;
                        cl = kl4 - c0 < QMX__K_TV_KC ? kl4 - c0 : QMX__K_TV_KC;
                        fin = c0 + cl >= kl4;
                        if (kn)
                            qmx__k_vnni_packb_kn(B + n0 + s0, ldb, K, nv, kb + c0, cl, bp, cs);
                        else
                            qmx__k_vnni_packb(B + (n0 + s0) * ldb, ldb, K, nv, kb + c0, cl, bp, cs);
                        if (fin)
                            for (j = 0; j < 32; j++) cacs[j] = j < nv ? ca * (uint32_t)cs[j] : 0u;
                        for (i = 0; i < mb; i += QMX__K_VMR) {
                            int mr = mb - i < QMX__K_VMR ? (int)(mb - i) : QMX__K_VMR;
                            /* group (kb + c0) / 4 of the row block: kb, c0 multiples of 4 */
                            qmx__k_vnni_mk_any(mr, nv > 16 ? 2 : 1, ap + i * kp + (kb + c0) * (size_t)mr,
                                               bp, 16 * cl, cl / 4, tile + i * nb + s0, nb, c0 != 0,
                                               fin, zeros, cacs, nv, NULL);
                        }
                    }
                }
                stage(ctx, m0, mb, n0, nb, blk, tile);
                if (K - kb <= bs) break; /* last block (also avoids kb + bs overflowing) */
            }
        }
    }
}

#if defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* 4 x 4 transpose of 128-bit lanes: v[q] lane L <- v[L] lane q (in place). */
QMX__VINLINE void qmx__k_lanes4x4(__m512i *v) {
    __m512i s0 = _mm512_shuffle_i32x4(v[0], v[1], 0x44), s1 = _mm512_shuffle_i32x4(v[0], v[1], 0xEE);
    __m512i s2 = _mm512_shuffle_i32x4(v[2], v[3], 0x44), s3 = _mm512_shuffle_i32x4(v[2], v[3], 0xEE);
    v[0] = _mm512_shuffle_i32x4(s0, s2, 0x88);
    v[1] = _mm512_shuffle_i32x4(s0, s2, 0xDD);
    v[2] = _mm512_shuffle_i32x4(s1, s3, 0x88);
    v[3] = _mm512_shuffle_i32x4(s1, s3, 0xDD);
}
/* The first cv (<= 64) of 64 int32 columns held in the unpacks' order (vector q: column
 * 16 L + 4 q + j at dword 4 L + j) to out in column order. */
QMX__VINLINE void qmx__k_store64_cols(__m512i *v, size_t cv, int32_t *out) {
    size_t q;
    qmx__k_lanes4x4(v);
    for (q = 0; q < 4 && 16 * q < cv; q++) {
        size_t left = cv - 16 * q;
        __mmask16 km = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        _mm512_mask_storeu_epi32(out + 16 * q, km, v[q]);
    }
}
/* 4 bytes of A from g, each + 128 (as uint8), packed in an int32; 0 at and past ke (B is 0
 * there too) */
static int32_t qmx__k_a4_plus128(const int8_t *a, size_t g, size_t ke) {
    uint8_t a4[4];
    size_t e;
    int32_t w;
    if (g + 4 <= ke) return qmx__k_u2i((uint32_t)qmx__k_ld32((const uint8_t *)(a + g)) ^ 0x80808080u);
    for (e = 0; e < 4; e++) a4[e] = g + e < ke ? (uint8_t)((uint8_t)a[g + e] ^ 0x80u) : 0;
    __builtin_memcpy(&w, a4, 4);
    return w;
}

/* qmx__k_tiled for [K,N] B and fewer than 16 rows: no packing. Per group of 4 k and 64
 * columns, the 4 rows' 64 bytes are interleaved in registers (unpacks: dword j of 128-bit lane L
 * of u[q] is column 16L + 4q + j, its 4 k) and met by up to 4 rows of A + 128 (broadcast) in
 * vpdpbusd, the column sums alongside; at the end a 4 x 4 transpose of 128-bit lanes restores
 * column order. Exact block sums (A - a_zp) * B, as the other paths. mr is a compile-time
 * constant in each instance, so the accumulators stay in registers. */
QMX__K_AINLINE void qmx__k_kn_chunk(const int mr, const int8_t *ar, size_t lda, const int8_t *bc,
                                    size_t ldb, size_t kb, size_t ke, size_t cv, uint32_t ca,
                                    int32_t *t, size_t ldt) {
    const __m512i ones = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
    const __mmask64 cm = cv >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << cv) - 1u);
    __m512i a00 = zero, a01 = zero, a02 = zero, a03 = zero, a10 = zero, a11 = zero, a12 = zero;
    __m512i a13 = zero, a20 = zero, a21 = zero, a22 = zero, a23 = zero, a30 = zero, a31 = zero;
    __m512i a32 = zero, a33 = zero, c0 = zero, c1 = zero, c2 = zero, c3 = zero;
    size_t g;
    for (g = kb; g < ke; g += 4) {
        __m512i r0, r1, r2, r3, t0, t1, t2, t3, u0, u1, u2, u3;
        r0 = _mm512_maskz_loadu_epi8(cm, bc + g * ldb);
        r1 = g + 1 < ke ? _mm512_maskz_loadu_epi8(cm, bc + (g + 1) * ldb) : zero;
        r2 = g + 2 < ke ? _mm512_maskz_loadu_epi8(cm, bc + (g + 2) * ldb) : zero;
        r3 = g + 3 < ke ? _mm512_maskz_loadu_epi8(cm, bc + (g + 3) * ldb) : zero;
        t0 = _mm512_unpacklo_epi8(r0, r1);
        t1 = _mm512_unpackhi_epi8(r0, r1);
        t2 = _mm512_unpacklo_epi8(r2, r3);
        t3 = _mm512_unpackhi_epi8(r2, r3);
        u0 = _mm512_unpacklo_epi16(t0, t2);
        u1 = _mm512_unpackhi_epi16(t0, t2);
        u2 = _mm512_unpacklo_epi16(t1, t3);
        u3 = _mm512_unpackhi_epi16(t1, t3);
        c0 = _mm512_dpbusd_epi32(c0, ones, u0);
        c1 = _mm512_dpbusd_epi32(c1, ones, u1);
        c2 = _mm512_dpbusd_epi32(c2, ones, u2);
        c3 = _mm512_dpbusd_epi32(c3, ones, u3);
#define QMX__K_KN_ROW(i)                                                                    \
        if (mr > i) {                                                                       \
            __m512i x = _mm512_set1_epi32(qmx__k_a4_plus128(ar + i * lda, g, ke));          \
            a##i##0 = _mm512_dpbusd_epi32(a##i##0, x, u0);                                  \
            a##i##1 = _mm512_dpbusd_epi32(a##i##1, x, u1);                                  \
            a##i##2 = _mm512_dpbusd_epi32(a##i##2, x, u2);                                  \
            a##i##3 = _mm512_dpbusd_epi32(a##i##3, x, u3);                                  \
        }
        QMX__K_KN_ROW(0) QMX__K_KN_ROW(1) QMX__K_KN_ROW(2) QMX__K_KN_ROW(3)
#undef QMX__K_KN_ROW
    }
    {
        const __m512i cav = _mm512_set1_epi32((int)ca);
        c0 = _mm512_mullo_epi32(c0, cav); c1 = _mm512_mullo_epi32(c1, cav);
        c2 = _mm512_mullo_epi32(c2, cav); c3 = _mm512_mullo_epi32(c3, cav);
    }
#define QMX__K_KN_ST(i)                                                                     \
    if (mr > i) { /* - (a_zp + 128) * column sum (mod 2^32), then column order */           \
        __m512i v[4];                                                                       \
        v[0] = _mm512_sub_epi32(a##i##0, c0); v[1] = _mm512_sub_epi32(a##i##1, c1);         \
        v[2] = _mm512_sub_epi32(a##i##2, c2); v[3] = _mm512_sub_epi32(a##i##3, c3);         \
        qmx__k_store64_cols(v, cv, t + i * ldt);                                            \
    }
    QMX__K_KN_ST(0) QMX__K_KN_ST(1) QMX__K_KN_ST(2) QMX__K_KN_ST(3)
#undef QMX__K_KN_ST
}

/* One K block [kb, ke) of [K,N] B for M < 16 rows: B is read 4 rows at a time across all N
 * columns, in memory order (a narrower column tile would visit each 4 KiB row once per tile,
 * and for large N every visit costs a TLB miss). acc [M][r64(N)] and cs [r64(N)] (in the
 * workspace) accumulate in the unpacks' order: within each 64 columns, vector q holds column
 * 16L + 4q + j at dword 4L + j. */
static void qmx__k_kn_stream(size_t M, size_t N, const int8_t *A, size_t lda, const int8_t *B,
                             size_t ldb, size_t kb, size_t ke, int32_t *acc, int32_t *cs) {
    const __m512i ones = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
    const size_t ld = qmx__k_r64(N); /* N: the columns of this call (a slab of B's) */
    size_t g, c, m, i;
    int32_t w[16];
    for (i = 0; i < ld; i++) cs[i] = 0;
    for (i = 0; i < M * ld; i++) acc[i] = 0;
    for (g = kb; g < ke; g += 4) {
        const int8_t *b0 = B + g * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        for (m = 0; m < M; m++) w[m] = qmx__k_a4_plus128(A + m * lda, g, ke);
        for (c = 0; c < N; c += 64) {
            size_t cv = N - c < 64 ? N - c : 64;
            __mmask64 cm = cv >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << cv) - 1u);
            __m512i r0, r1, r2, r3, t0, t1, t2, t3, u[4];
            int q;
            r0 = _mm512_maskz_loadu_epi8(cm, b0 + c);
            r1 = g + 1 < ke ? _mm512_maskz_loadu_epi8(cm, b1 + c) : zero;
            r2 = g + 2 < ke ? _mm512_maskz_loadu_epi8(cm, b2 + c) : zero;
            r3 = g + 3 < ke ? _mm512_maskz_loadu_epi8(cm, b3 + c) : zero;
            t0 = _mm512_unpacklo_epi8(r0, r1);
            t1 = _mm512_unpackhi_epi8(r0, r1);
            t2 = _mm512_unpacklo_epi8(r2, r3);
            t3 = _mm512_unpackhi_epi8(r2, r3);
            u[0] = _mm512_unpacklo_epi16(t0, t2);
            u[1] = _mm512_unpackhi_epi16(t0, t2);
            u[2] = _mm512_unpacklo_epi16(t1, t3);
            u[3] = _mm512_unpackhi_epi16(t1, t3);
            for (q = 0; q < 4; q++) {
                int32_t *cp = cs + c + 16 * q;
                _mm512_storeu_si512((void *)cp, _mm512_dpbusd_epi32(_mm512_loadu_si512((const void *)cp), ones, u[q]));
            }
            for (m = 0; m < M; m++) {
                __m512i x = _mm512_set1_epi32(w[m]);
                int32_t *ap = acc + m * ld + c;
                for (q = 0; q < 4; q++)
                    _mm512_storeu_si512((void *)(ap + 16 * q),
                                        _mm512_dpbusd_epi32(_mm512_loadu_si512((const void *)(ap + 16 * q)), x, u[q]));
            }
        }
    }
}

/* cv (<= 64) columns of one row from qmx__k_kn_stream's order: out[j] = acc - ca * cs + rt
 * (mod 2^32), column order restored by a 4 x 4 transpose of 128-bit lanes. */
static void qmx__k_kn_finish64(const int32_t *ap, const int32_t *cp, uint32_t ca, uint32_t rt,
                               size_t cv, int32_t *out) {
    const __m512i cav = _mm512_set1_epi32((int)ca), r = _mm512_set1_epi32((int)rt);
    __m512i v[4];
    size_t q;
    for (q = 0; q < 4; q++)
        v[q] = _mm512_add_epi32(_mm512_sub_epi32(_mm512_loadu_si512((const void *)(ap + 16 * q)),
                                                 _mm512_mullo_epi32(_mm512_loadu_si512((const void *)(cp + 16 * q)), cav)), r);
    qmx__k_store64_cols(v, cv, out);
}

/* qmx_matmul_i8 on [K,N] B below QMX__K_PLAIN_MIN_M rows: qmx__k_kn_stream over slabs of sw
 * columns (as many as the workspace region of nbytes holds: (M + 1) * sw int32), all of K at
 * once (exact: K <= QMX_MATMUL_I8_MAX_K). Returns 0 (nothing done) when not even 64 columns
 * fit. C = the sums of (A - a_zp) * B + rt[m]. */
static int qmx__k_kn_i32(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                         const int8_t *B, size_t ldb, int32_t *C, size_t ldc, const uint32_t *rt,
                         uint32_t ca, uint8_t *region, size_t nbytes) {
    size_t sw = nbytes / 4 / (M + 1) / 64 * 64, c0, m, c;
    int32_t *acc = (int32_t *)(void *)region;
    if (sw < 64) return 0;
    if (sw > qmx__k_r64(N)) sw = qmx__k_r64(N);
    for (c0 = 0; c0 < N; c0 += sw) {
        size_t nc = N - c0 < sw ? N - c0 : sw, ld = qmx__k_r64(nc);
        int32_t *cs = acc + M * ld;
        qmx__k_kn_stream(M, nc, A, lda, B + c0, ldb, 0, K, acc, cs);
        for (m = 0; m < M; m++)
            for (c = 0; c < nc; c += 64)
                qmx__k_kn_finish64(acc + m * ld + c, cs + c, ca, rt[m], nc - c < 64 ? nc - c : 64,
                                   C + m * ldc + c0 + c);
    }
    return 1;
}

static void qmx__k_tiled_kn_rows(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                 const int8_t *B, size_t ldb, int32_t a_zp, size_t bs,
                                 int32_t *tile, int32_t *accs, qmx__k_stage_fn stage, void *ctx) {
    const uint32_t ca = (uint32_t)a_zp + 128u;
    size_t p0, n0, kb, blk, m0, c;
    if (M < 16) { /* B streamed in memory order, all columns' accumulators in the workspace */
        const size_t ld = qmx__k_r64(N);
        int32_t *cs = accs + M * ld;
        for (blk = 0, kb = 0; kb < K; blk++, kb += bs) {
            size_t kl = K - kb < bs ? K - kb : bs;
            qmx__k_kn_stream(M, N, A, lda, B, ldb, kb, kb + kl, accs, cs);
            for (n0 = 0; n0 < N; n0 += QMX_MATMUL_TILE_N) {
                size_t nb = N - n0 < QMX_MATMUL_TILE_N ? N - n0 : QMX_MATMUL_TILE_N, m;
                for (m = 0; m < M; m++)
                    for (c = 0; c < nb; c += 64) /* - (a_zp + 128) * sums, column order */
                        qmx__k_kn_finish64(accs + m * ld + n0 + c, cs + n0 + c, ca, 0u,
                                           nb - c < 64 ? nb - c : 64, tile + m * nb + c);
                stage(ctx, 0, M, n0, nb, blk, tile);
            }
            if (K - kb <= bs) break; /* last block (also avoids kb + bs overflowing) */
        }
        return;
    }
    for (p0 = 0; p0 < M; p0 += QMX__K_MB)   /* panels of 64 rows: the tile's height */
        for (n0 = 0; n0 < N; n0 += QMX_MATMUL_TILE_N) {
            size_t nb = N - n0 < QMX_MATMUL_TILE_N ? N - n0 : QMX_MATMUL_TILE_N;
            size_t mb = M - p0 < QMX__K_MB ? M - p0 : QMX__K_MB;
            for (blk = 0, kb = 0; kb < K; blk++, kb += bs) {
                size_t kl = K - kb < bs ? K - kb : bs;
                for (m0 = 0; m0 < mb; m0 += 4) {
                    const int8_t *ar = A + (p0 + m0) * lda;
                    for (c = 0; c < nb; c += 64) {
                        size_t cv = nb - c < 64 ? nb - c : 64;
                        int32_t *t = tile + m0 * nb + c;
                        switch (mb - m0 < 4 ? (int)(mb - m0) : 4) {
                        case 1: qmx__k_kn_chunk(1, ar, lda, B + n0 + c, ldb, kb, kb + kl, cv, ca, t, nb); break;
                        case 2: qmx__k_kn_chunk(2, ar, lda, B + n0 + c, ldb, kb, kb + kl, cv, ca, t, nb); break;
                        case 3: qmx__k_kn_chunk(3, ar, lda, B + n0 + c, ldb, kb, kb + kl, cv, ca, t, nb); break;
                        default: qmx__k_kn_chunk(4, ar, lda, B + n0 + c, ldb, kb, kb + kl, cv, ca, t, nb); break;
                        }
                    }
                }
                stage(ctx, p0, mb, n0, nb, blk, tile);
                if (K - kb <= bs) break; /* last block (also avoids kb + bs overflowing) */
            }
        }
}

#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif

#define QMX__K_GV_NP 4 /* panels per GEMV pass (4 weight streams: faster than 1, 2 or 3) */
static void qmx__k_pk_run(const qmx__k_pk_args *g) {
    const size_t npan = g->np / 16, kp = g->kp, pstride = g->pstride;
    size_t kb, m0, p, i, k;
    if (g->M == 1) {
        uint8_t *a = g->apack;
        for (k = 0; k < g->K; k++) a[k] = (uint8_t)((uint8_t)g->A[k] ^ 0x80u);
        for (; k < kp; k++) a[k] = 0;
        for (p = 0; p < npan; p += QMX__K_GV_NP) {
            size_t n0 = 16 * p, nv = g->N - n0;
            const int8_t *b = (const int8_t *)(const void *)(g->panels + p * pstride);
            switch (npan - p >= QMX__K_GV_NP ? QMX__K_GV_NP : (int)(npan - p)) {
            case 1: qmx__k_vnni_gemv(1, a, b, pstride, kp / 4, g->C + n0, g->rt[0], g->cacs + n0, nv); break;
            case 2: qmx__k_vnni_gemv(2, a, b, pstride, kp / 4, g->C + n0, g->rt[0], g->cacs + n0, nv); break;
            case 3: qmx__k_vnni_gemv(3, a, b, pstride, kp / 4, g->C + n0, g->rt[0], g->cacs + n0, nv); break;
            default: qmx__k_vnni_gemv(4, a, b, pstride, kp / 4, g->C + n0, g->rt[0], g->cacs + n0, nv); break;
            }
        }
        return;
    }
    /* K blocks of QMX__K_PK_KC (today: one block, all of K), panels of 256 rows of A packed
     * as A + 128 interleaved by blocks of 8 rows (4 bytes per row per group), strips of 32
     * columns of B (from L2 across the row blocks of the panel, the next strip prefetched).
     * With several K blocks C would accumulate the raw dot and the last block apply the
     * fix-up (acc / fin). */
    const size_t kcb = qmx__k_pk_kc(g->M, kp);
    for (kb = 0; kb < kp; kb += kcb) {
        size_t kl = kp - kb < kcb ? kp - kb : kcb, ng = kl / 4;
        int acc = kb != 0, fin = kb + kl >= kp;
        for (m0 = 0; m0 < g->M; m0 += QMX__K_PK_MC) {
            size_t mc = g->M - m0 < QMX__K_PK_MC ? g->M - m0 : QMX__K_PK_MC;
            qmx__k_vnni_packa(g->A + m0 * g->lda, g->lda, g->K, mc, kb, kl, g->apack);
            for (p = 0; p < npan; p += QMX__K_VNR) {
                int nr = npan - p < QMX__K_VNR ? (int)(npan - p) : QMX__K_VNR;
                size_t n0 = 16 * p, nv = g->N - n0;
                const int8_t *b0 = (const int8_t *)(const void *)(g->panels + p * pstride + kb * 16);
                if (nv > 16 * QMX__K_VNR) nv = 16 * QMX__K_VNR;
                for (i = 0; i < mc; i += QMX__K_VMR) {
                    int mr = mc - i < QMX__K_VMR ? (int)(mc - i) : QMX__K_VMR;
                    /* the first row block prefetches the next strip into L2 */
                    qmx__k_vnni_mk_any(mr, nr, g->apack + i * kl, b0, pstride, ng,
                                       g->C + (m0 + i) * g->ldc + n0, g->ldc, acc, fin,
                                       g->rt + m0 + i, g->cacs + n0, nv,
                                       i == 0 && p + 2 * QMX__K_VNR <= npan
                                           ? b0 + QMX__K_VNR * pstride : NULL);
                }
            }
        }
    }
}
#define QMX__K_PK_CA 128u /* the dot is of A + 128 */

#else
/* Other targets: a block of up to QMX__K_PK_R rows of A x one panel (16 columns) over all of K:
 * acc[r][j] = sum_k A[r][k] * B(16p + j, k). The last, partial group of 4 k reads only A's
 * bytes below K (the blob's bytes past K are 0). */
#if defined(QMX__K_NEONDOT) || defined(QMX__K_AVX2)
static int32_t qmx__k_pk_ld4(const int8_t *a) { int32_t v; __builtin_memcpy(&v, a, 4); return v; }
#endif
#if defined(QMX__K_NEONDOT)
#define QMX__K_PK_R 4
static void qmx__k_pk_rows(const int8_t *const *a, int nr, const int8_t *w, size_t K,
                           int32_t acc[QMX__K_PK_R][16]) {
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00;
    int32x4_t c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00;
    int32x4_t c31 = c00, c32 = c00, c33 = c00;
    size_t k;
    int r, t;
    for (k = 0; k < K; k += 4, w += 64) {
        int8x16_t w0 = vld1q_s8(w), w1 = vld1q_s8(w + 16), w2 = vld1q_s8(w + 32);
        int8x16_t w3 = vld1q_s8(w + 48), x[4];
        for (r = 0; r < 4; r++) {
            int32_t v = 0;
            if (r < nr) {
                if (k + 4 <= K) {
                    v = qmx__k_pk_ld4(a[r] + k);
                } else { /* the tail: bytes past K are zeros */
                    int8_t tb[4] = {0, 0, 0, 0};
                    for (t = 0; k + (size_t)t < K; t++) tb[t] = a[r][k + (size_t)t];
                    v = qmx__k_pk_ld4(tb);
                }
            }
            x[r] = vreinterpretq_s8_s32(vdupq_n_s32(v));
        }
        c00 = vdotq_s32(c00, w0, x[0]); c01 = vdotq_s32(c01, w1, x[0]);
        c02 = vdotq_s32(c02, w2, x[0]); c03 = vdotq_s32(c03, w3, x[0]);
        if (nr > 1) {
            c10 = vdotq_s32(c10, w0, x[1]); c11 = vdotq_s32(c11, w1, x[1]);
            c12 = vdotq_s32(c12, w2, x[1]); c13 = vdotq_s32(c13, w3, x[1]);
        }
        if (nr > 2) {
            c20 = vdotq_s32(c20, w0, x[2]); c21 = vdotq_s32(c21, w1, x[2]);
            c22 = vdotq_s32(c22, w2, x[2]); c23 = vdotq_s32(c23, w3, x[2]);
        }
        if (nr > 3) {
            c30 = vdotq_s32(c30, w0, x[3]); c31 = vdotq_s32(c31, w1, x[3]);
            c32 = vdotq_s32(c32, w2, x[3]); c33 = vdotq_s32(c33, w3, x[3]);
        }
    }
    vst1q_s32(acc[0], c00); vst1q_s32(acc[0] + 4, c01); vst1q_s32(acc[0] + 8, c02); vst1q_s32(acc[0] + 12, c03);
    vst1q_s32(acc[1], c10); vst1q_s32(acc[1] + 4, c11); vst1q_s32(acc[1] + 8, c12); vst1q_s32(acc[1] + 12, c13);
    vst1q_s32(acc[2], c20); vst1q_s32(acc[2] + 4, c21); vst1q_s32(acc[2] + 8, c22); vst1q_s32(acc[2] + 12, c23);
    vst1q_s32(acc[3], c30); vst1q_s32(acc[3] + 4, c31); vst1q_s32(acc[3] + 8, c32); vst1q_s32(acc[3] + 12, c33);
}
#elif defined(QMX__K_AVX2)
#define QMX__K_PK_R 2
/* 4 k of A as int16 lanes [a0 a1 a2 a3] repeated (bytes past K are 0) */
static __m256i qmx__k_pk_a16(const int8_t *a, size_t k, size_t K) {
    uint64_t v = 0;
    int t;
    for (t = 0; t < 4 && k + (size_t)t < K; t++)
        v |= (uint64_t)(uint16_t)(int16_t)a[k + (size_t)t] << (16 * t);
    return _mm256_set1_epi64x((long long)v);
}
/* 4 bytes of A from k, widened to int16 and broadcast: one load and two shuffles while all 4
 * are below K, else assembled byte by byte (zeros past K) */
#define QMX__K_PK_X(row) (k + 4 <= K ? _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(   \
                              (int)qmx__k_pk_ld4((row) + k)))) : qmx__k_pk_a16((row), k, K))
/* vpmaddwd of int16 (from int8) pairs: lane 2i of acc_q sums k = 4g, 4g+1 and lane 2i+1
 * k = 4g+2, 4g+3 of column 4q+i (|pair| <= 2*16384, no saturation); added at the end. */
static void qmx__k_pk_rows(const int8_t *const *a, int nr, const int8_t *w, size_t K,
                           int32_t acc[QMX__K_PK_R][16]) {
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c02 = c00, c03 = c00;
    __m256i c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    int32_t tmp[32];
    size_t k;
    int j;
    for (k = 0; k < K; k += 4, w += 64) {
        __m256i w0 = QMX__K_LD16(w), w1 = QMX__K_LD16(w + 16);
        __m256i w2 = QMX__K_LD16(w + 32), w3 = QMX__K_LD16(w + 48);
        __m256i x = QMX__K_PK_X(a[0]);
        c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(w0, x));
        c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(w1, x));
        c02 = _mm256_add_epi32(c02, _mm256_madd_epi16(w2, x));
        c03 = _mm256_add_epi32(c03, _mm256_madd_epi16(w3, x));
        if (nr > 1) {
            x = QMX__K_PK_X(a[1]);
            c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(w0, x));
            c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(w1, x));
            c12 = _mm256_add_epi32(c12, _mm256_madd_epi16(w2, x));
            c13 = _mm256_add_epi32(c13, _mm256_madd_epi16(w3, x));
        }
    }
    _mm256_storeu_si256((__m256i *)(void *)tmp, c00);
    _mm256_storeu_si256((__m256i *)(void *)(tmp + 8), c01);
    _mm256_storeu_si256((__m256i *)(void *)(tmp + 16), c02);
    _mm256_storeu_si256((__m256i *)(void *)(tmp + 24), c03);
    for (j = 0; j < 16; j++) acc[0][j] = tmp[2 * j] + tmp[2 * j + 1];
    _mm256_storeu_si256((__m256i *)(void *)tmp, c10);
    _mm256_storeu_si256((__m256i *)(void *)(tmp + 8), c11);
    _mm256_storeu_si256((__m256i *)(void *)(tmp + 16), c12);
    _mm256_storeu_si256((__m256i *)(void *)(tmp + 24), c13);
    for (j = 0; j < 16; j++) acc[1][j] = tmp[2 * j] + tmp[2 * j + 1];
}
#elif defined(QMX__K_RVV) && defined(__riscv_v_min_vlen) && __riscv_v_min_vlen >= 128
/* RVV: 4 rows x one panel. A group (64 bytes) is split by a 4-field segment load into its 4 k
 * (byte 4j + t -> field t, lane j), each widened to int16, and every row adds a[k + t] * field t
 * with vwmacc.vx into 16 int32 lanes (vl = 16 at any VLEN >= 128: the blob layout stays). */
#define QMX__K_PK_R 4
#define QMX__K_RVV_PKMAC(c, r)                                                         \
    c = __riscv_vwmacc_vx_i32m4(c, (int16_t)x[r][0], w0, 16);                          \
    c = __riscv_vwmacc_vx_i32m4(c, (int16_t)x[r][1], w1, 16);                          \
    c = __riscv_vwmacc_vx_i32m4(c, (int16_t)x[r][2], w2, 16);                          \
    c = __riscv_vwmacc_vx_i32m4(c, (int16_t)x[r][3], w3, 16)
QMX__VINLINE void qmx__k_rvv_pk(const int8_t *const *a, const int nr, const int8_t *w, size_t K,
                                int32_t acc[QMX__K_PK_R][16]) {
    vint32m4_t c0 = __riscv_vmv_v_x_i32m4(0, 16), c1 = c0, c2 = c0, c3 = c0;
    size_t k;
    int r, t;
    for (k = 0; k < K; k += 4, w += 64) {
        vint8m1_t b0, b1, b2, b3;
        vint16m2_t w0, w1, w2, w3;
        int8_t x[QMX__K_PK_R][4];
        for (r = 0; r < nr; r++)   /* bytes past K are zeros (the blob's are too) */
            for (t = 0; t < 4; t++) x[r][t] = k + (size_t)t < K ? a[r][k + (size_t)t] : 0;
        __riscv_vlseg4e8_v_i8m1(&b0, &b1, &b2, &b3, w, 16);
        w0 = __riscv_vsext_vf2_i16m2(b0, 16); w1 = __riscv_vsext_vf2_i16m2(b1, 16);
        w2 = __riscv_vsext_vf2_i16m2(b2, 16); w3 = __riscv_vsext_vf2_i16m2(b3, 16);
        QMX__K_RVV_PKMAC(c0, 0);
        if (nr > 1) { QMX__K_RVV_PKMAC(c1, 1); }
        if (nr > 2) { QMX__K_RVV_PKMAC(c2, 2); }
        if (nr > 3) { QMX__K_RVV_PKMAC(c3, 3); }
    }
    __riscv_vse32_v_i32m4(acc[0], c0, 16);
    if (nr > 1) __riscv_vse32_v_i32m4(acc[1], c1, 16);
    if (nr > 2) __riscv_vse32_v_i32m4(acc[2], c2, 16);
    if (nr > 3) __riscv_vse32_v_i32m4(acc[3], c3, 16);
}
#undef QMX__K_RVV_PKMAC
static void qmx__k_pk_rows(const int8_t *const *a, int nr, const int8_t *w, size_t K,
                           int32_t acc[QMX__K_PK_R][16]) {
    if (nr >= 4) qmx__k_rvv_pk(a, 4, w, K, acc);   /* the row count fixed per instance */
    else if (nr == 3) qmx__k_rvv_pk(a, 3, w, K, acc);
    else if (nr == 2) qmx__k_rvv_pk(a, 2, w, K, acc);
    else qmx__k_rvv_pk(a, 1, w, K, acc);
}
#else
/* Portable C: one row (the Cortex-M kernels of the plain path may come here too) */
#define QMX__K_PK_R 1
static void qmx__k_pk_rows(const int8_t *const *ap, int nr, const int8_t *w, size_t K,
                           int32_t acc[QMX__K_PK_R][16]) {
    const int8_t *a = ap[0];
    const size_t kfull = K & ~(size_t)3;
    size_t q, j, t;
    (void)nr;
    for (j = 0; j < 16; j++) acc[0][j] = 0;
    for (q = 0; q < kfull; q += 4, w += 64) {
        int32_t a0 = a[q], a1 = a[q + 1], a2 = a[q + 2], a3 = a[q + 3];
        for (j = 0; j < 16; j++)
            acc[0][j] += a0 * w[4 * j] + a1 * w[4 * j + 1] + a2 * w[4 * j + 2] + a3 * w[4 * j + 3];
    }
    if (q < K)
        for (j = 0; j < 16; j++)
            for (t = 0; q + t < K; t++) acc[0][j] += (int32_t)a[q + t] * w[4 * j + t];
}
#endif

static void qmx__k_pk_run(const qmx__k_pk_args *g) {
    const size_t npan = g->np / 16;
    size_t m, p, j;
    int r, nr;
    const int8_t *a[QMX__K_PK_R];
    int32_t acc[QMX__K_PK_R][16];
    for (m = 0; m < g->M; m += (size_t)nr) {
        nr = g->M - m < QMX__K_PK_R ? (int)(g->M - m) : QMX__K_PK_R;
        for (r = 0; r < nr; r++) a[r] = g->A + (m + (size_t)r) * g->lda;
        for (p = 0; p < npan; p++) {
            size_t nv = g->N - 16 * p;
            if (nv > 16) nv = 16;
            qmx__k_pk_rows(a, nr, (const int8_t *)(const void *)(g->panels + p * g->pstride),
                           g->K, acc);
            for (r = 0; r < nr; r++)
                for (j = 0; j < nv; j++)
                    g->C[(m + (size_t)r) * g->ldc + 16 * p + j] = qmx__k_u2i(
                        (uint32_t)acc[r][j] + g->rt[m + (size_t)r] - g->cacs[16 * p + j]);
        }
    }
}
#define QMX__K_PK_CA 0u
#endif

/* Columns [n_off, n_off + N) of a blob of n_blob columns (n_off a multiple of 16). */
static qmx_status qmx__par_mm_i8p(size_t M, size_t N, size_t K, const int8_t *A,
                                  size_t lda, const void *packed, size_t packed_bytes,
                                  int32_t *C, size_t ldc, const qmx_matmul_i8_opts *opts,
                                  void *workspace, size_t workspace_bytes, size_t n_off,
                                  size_t n_blob, int mode) {
    qmx_matmul_i8_opts o;
    qmx__k_pk_args g;
    size_t need, off, m, n, ce;
    uint8_t *ws;
    uint32_t *rt, *cacs, ca, kab;
    const uint8_t *pk = (const uint8_t *)packed;
    qmx_status st;
    if (opts) {
        o = *opts;
    } else {
        o.a_zp = 0; o.b_zp = 0;
    }
    if (!A || !C || !workspace) return QMX_ERR_NULL;
    if (o.a_zp < -128 || o.a_zp > 127 || o.b_zp < -128 || o.b_zp > 127) return QMX_ERR_ARG;
    if (M == 0) return QMX_ERR_SIZE;
    st = qmx__k_pk_check(packed, packed_bytes, n_blob, K);
    if (st != QMX_OK) return st;
    if (lda < K || ldc < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    ce = qmx__k_extent(M, N, ldc);
    if (!ce || ce > SIZE_MAX / sizeof(int32_t)) return QMX_ERR_OVERFLOW;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx_matmul_i8_packed_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;

    g.M = M; g.N = N; g.K = K; g.lda = lda; g.ldc = ldc;
    g.np = qmx__k_r16(N); g.kp = qmx__k_r4(K); g.pstride = 16 * g.kp;
    g.A = A; g.C = C;
    g.panels = pk + QMX_MATMUL_I8_PACK_HEADER + 4 * qmx__k_r16(n_blob) + (n_off / 16) * g.pstride;
    ws = (uint8_t *)workspace;
    off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u);
    rt = (uint32_t *)(void *)(ws + off);
    off += qmx__k_r64(4 * M);
    cacs = (uint32_t *)(void *)(ws + off);
    off += qmx__k_r64(4 * g.np);
    g.apack = ws + off;
    /* rt[m] = K*a_zp*b_zp - b_zp*rowsum(A)[m];  cacs[n] = (a_zp [+ 128]) * colsum(B)[n] */
    kab = (uint32_t)K * (uint32_t)o.a_zp * (uint32_t)o.b_zp;
    for (m = 0; m < M; m++) {
        int32_t s = o.b_zp != 0 ? qmx__k_sum_i8(A + m * lda, K) : 0;
        rt[m] = kab - (uint32_t)o.b_zp * (uint32_t)s;
    }
    ca = (uint32_t)o.a_zp + QMX__K_PK_CA;
    for (n = 0; n < g.np; n++)
        cacs[n] = n < N ? ca * qmx__k_ld32le(pk + QMX_MATMUL_I8_PACK_HEADER + 4 * (n_off + n)) : 0u;
    g.rt = rt; g.cacs = cacs;
    qmx__k_pk_run(&g);
    return QMX_OK;
}


/* ---- fully-connected on packed weights: int32 tiles of <= 64 rows x QMX_MATMUL_TILE_N
 * columns from the packed kernels, then the same output stage as qmx_fully_connected_i8 ---- */
/* Workspace: 64 + 256 (zero row terms) + r64(4*Np) (a_zp*sums) + r64(mb * Kp) (panel of A)
 * + r64(4*mb*nb) (int32 tile), mb = min(M, 64), nb = min(N, 256). */
QMX_API qmx_status qmx_fully_connected_i8_packed_workspace_size(size_t M, size_t N, size_t K,
                                                                size_t *bytes) {
    size_t np, kp, mb, nb, a, parts[3], total = 64 + 256;
    int i;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I8_MAX_K || N > (size_t)0xFFFFFFF0u) return QMX_ERR_OVERFLOW;
    np = qmx__k_r16(N);
    if (np > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    kp = qmx__k_r4(K);
    mb = M < QMX__K_MB ? M : QMX__K_MB;
    nb = N < QMX_MATMUL_TILE_N ? N : QMX_MATMUL_TILE_N;
    a = mb * (kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC);
    if (a < kp) a = kp;
    parts[0] = qmx__k_r64(4 * np);
    parts[1] = qmx__k_r64(a);
    parts[2] = qmx__k_r64(4 * mb * nb);
    for (i = 0; i < 3; i++) {
        if (parts[i] > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
        total += parts[i];
    }
    *bytes = total;
    return QMX_OK;
}

static qmx_status qmx__par_fc_i8p(size_t M, size_t N, size_t K, const int8_t *A,
                                  size_t lda, int32_t a_zp, const void *packed,
                                  size_t packed_bytes, const qmx_requant_config *rq, void *out,
                                  size_t ldo, void *workspace, size_t workspace_bytes,
                                  size_t n_off, size_t n_blob, int mode) {
    qmx__k_fc_ctx x;
    qmx__k_pk_args g;
    size_t need, off, np, kp, m0, n0, n;
    uint8_t *ws;
    uint32_t *zeros, *cacs, ca;
    int32_t *tile;
    const uint8_t *pk = (const uint8_t *)packed;
    qmx_status st;
    if (!A || !out || !rq || !workspace) return QMX_ERR_NULL;
    if (a_zp < -128 || a_zp > 127) return QMX_ERR_ARG;
    if (rq->weight_zero_point < -128 || rq->weight_zero_point > 127) return QMX_ERR_ARG;
    if (M == 0) return QMX_ERR_SIZE;
    st = qmx__k_pk_check(packed, packed_bytes, n_blob, K);
    if (st != QMX_OK) return st;
    if (lda < K || ldo < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    st = qmx__k_fc_prep(M, N, ldo, rq, out, &x);
    if (st != QMX_OK) return st;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx_fully_connected_i8_packed_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    np = qmx__k_r16(N);
    kp = qmx__k_r4(K);
    ws = (uint8_t *)workspace;
    off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u);
    zeros = (uint32_t *)(void *)(ws + off);
    for (n = 0; n < 64; n++) zeros[n] = 0; /* the row terms: b_zp = 0 */
    off += 256;
    cacs = (uint32_t *)(void *)(ws + off);
    off += qmx__k_r64(4 * np);
    ca = (uint32_t)a_zp + QMX__K_PK_CA;
    for (n = 0; n < np; n++)
        cacs[n] = n < N ? ca * qmx__k_ld32le(pk + QMX_MATMUL_I8_PACK_HEADER + 4 * (n_off + n)) : 0u;
    g.apack = ws + off;
    off += qmx__k_r64(kp > (M < QMX__K_MB ? M : QMX__K_MB) * (kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC)
                          ? kp : (M < QMX__K_MB ? M : QMX__K_MB) * (kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC));
    tile = (int32_t *)(void *)(ws + off);
    g.K = K; g.lda = lda; g.kp = kp; g.pstride = 16 * kp; g.rt = zeros;
    for (m0 = 0; m0 < M; m0 += QMX__K_MB) {
        size_t mb = M - m0 < QMX__K_MB ? M - m0 : QMX__K_MB;
        /* the weight zero point as the packed kernels' row terms (added in their stores, every
         * path), once per panel: rt[i] = w_zp * (K*a_zp - rowsum(A)[m0 + i]) (mod 2^32; the
         * stage's own correction stays off: x.w_zp = 0) */
        if (rq->weight_zero_point != 0)
            for (n = 0; n < mb; n++)
                zeros[n] = (uint32_t)rq->weight_zero_point *
                           ((uint32_t)K * (uint32_t)a_zp -
                            (uint32_t)qmx__k_sum_i8(A + (m0 + n) * lda, K));
        for (n0 = 0; n0 < N; n0 += QMX_MATMUL_TILE_N) {
            size_t nb = N - n0 < QMX_MATMUL_TILE_N ? N - n0 : QMX_MATMUL_TILE_N;
            /* the tile's panels: n0 is a multiple of 16; full-K panels (stride 16*Kp) */
            g.M = mb; g.N = nb; g.ldc = nb; g.np = qmx__k_r16(nb);
            g.A = A + m0 * lda;
            g.panels = pk + QMX_MATMUL_I8_PACK_HEADER + 4 * qmx__k_r16(n_blob) +
                       ((n_off + n0) / 16) * 16 * kp;
            g.C = tile;
            g.cacs = cacs + n0;
            qmx__k_pk_run(&g);
            qmx__k_fc_stage(&x, m0, mb, n0, nb, 0, tile);
        }
    }
    return QMX_OK;
}

/* ---- dequant-on-output on packed weights ---- */
/* sums[j] = sum over groups [g0, g0 + ng) of panel column j, for npan panels (16 each). */
static void qmx__k_pk_blocksums(const uint8_t *panels, size_t pstride, size_t npan, size_t g0,
                                size_t ng, int32_t *sums) {
    size_t p = 0, g, j;
#if defined(QMX__K_VNNI)
    const __m512i ones = _mm512_set1_epi8(1);
    for (; p + 4 <= npan; p += 4) { /* four panels at once: four independent vpdpbusd chains */
        const int8_t *w = (const int8_t *)(const void *)(panels + p * pstride + 64 * g0);
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
        for (g = 0; g < ng; g++) {
            a0 = _mm512_dpbusd_epi32(a0, ones, _mm512_loadu_si512((const void *)(w + 64 * g)));
            a1 = _mm512_dpbusd_epi32(a1, ones, _mm512_loadu_si512((const void *)(w + pstride + 64 * g)));
            a2 = _mm512_dpbusd_epi32(a2, ones, _mm512_loadu_si512((const void *)(w + 2 * pstride + 64 * g)));
            a3 = _mm512_dpbusd_epi32(a3, ones, _mm512_loadu_si512((const void *)(w + 3 * pstride + 64 * g)));
        }
        _mm512_storeu_si512((void *)(sums + 16 * p), a0);
        _mm512_storeu_si512((void *)(sums + 16 * p + 16), a1);
        _mm512_storeu_si512((void *)(sums + 16 * p + 32), a2);
        _mm512_storeu_si512((void *)(sums + 16 * p + 48), a3);
    }
#endif
    for (; p < npan; p++) {
        const int8_t *w = (const int8_t *)(const void *)(panels + p * pstride + 64 * g0);
#if defined(QMX__K_VNNI)
        __m512i acc = _mm512_setzero_si512();
        for (g = 0; g < ng; g++)
            acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512((const void *)(w + 64 * g)));
        _mm512_storeu_si512((void *)(sums + 16 * p), acc);
        (void)j;
#else
        for (j = 0; j < 16; j++) sums[16 * p + j] = 0;
        for (g = 0; g < ng; g++)
            for (j = 0; j < 16; j++)
                sums[16 * p + j] += w[64 * g + 4 * j] + w[64 * g + 4 * j + 1] +
                                    w[64 * g + 4 * j + 2] + w[64 * g + 4 * j + 3];
#endif
    }
}

static qmx_status qmx__par_f32p(size_t M, size_t N, size_t K, const int8_t *A,
                                size_t lda, const void *packed, size_t packed_bytes,
                                float *C, size_t ldc, const qmx_matmul_i8_f32_scales *s,
                                void *workspace, size_t workspace_bytes, size_t n_off,
                                size_t n_blob, int mode) {
    qmx__k_f32_ctx x;
    qmx__k_pk_args g;
    size_t need, nblk = 1, i, ext, off, np, kp, m0, n0, kb, blk, bs, tn;
    uint8_t *ws;
    uint32_t *zeros, *cacs, ca;
    int32_t *tile;
    const uint8_t *pk = (const uint8_t *)packed, *pan;
    qmx_status st;
    if (!A || !C || !s || !workspace) return QMX_ERR_NULL;
    if (!s->a_scales || !s->b_scales) return QMX_ERR_NULL;
    if (s->a_zp < -128 || s->a_zp > 127) return QMX_ERR_ARG;
    if (M == 0 || s->block_size == 0) return QMX_ERR_SIZE;
    st = qmx__k_pk_check(packed, packed_bytes, n_blob, K);
    if (st != QMX_OK) return st;
    if (lda < K || ldc < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldc);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    bs = s->block_size;
    if (bs < K && bs % 4 != 0) return QMX_ERR_UNSUPPORTED; /* blocks must start on a group */
    st = qmx__k_check_f32_scales(s, M, N, K, &nblk);
    if (st != QMX_OK) return st;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx_fully_connected_i8_packed_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.s = s; x.C = C; x.ldc = ldc; x.nblk = nblk;
    np = qmx__k_r16(N);
    kp = qmx__k_r4(K);
    ws = (uint8_t *)workspace;
    off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u);
    zeros = (uint32_t *)(void *)(ws + off);
    for (i = 0; i < 64; i++) zeros[i] = 0; /* the row terms: b_zp = 0 */
    off += 256;
    cacs = (uint32_t *)(void *)(ws + off); /* a_zp [+128] * block column sums of the tile */
    off += qmx__k_r64(4 * np);
    g.apack = ws + off;
    off += qmx__k_r64(kp > (M < QMX__K_MB ? M : QMX__K_MB) * (kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC)
                          ? kp : (M < QMX__K_MB ? M : QMX__K_MB) * (kp < QMX__K_PK_KC ? kp : QMX__K_PK_KC));
    tile = (int32_t *)(void *)(ws + off);
    ca = (uint32_t)s->a_zp + QMX__K_PK_CA;
    pan = pk + QMX_MATMUL_I8_PACK_HEADER + 4 * qmx__k_r16(n_blob) + (n_off / 16) * 16 * kp;
    g.lda = lda; g.pstride = 16 * kp; g.rt = zeros; g.cacs = cacs; g.C = tile;
    /* a few rows and several K blocks: tiles of 4 panels, so that the blocks of each panel are
     * read one after the other (4 long streams instead of 16 short ones per block) */
    tn = M <= 4 && nblk > 1 ? 64 : QMX_MATMUL_TILE_N;
    for (m0 = 0; m0 < M; m0 += QMX__K_MB) {
        size_t mb = M - m0 < QMX__K_MB ? M - m0 : QMX__K_MB;
        for (n0 = 0; n0 < N; n0 += tn) {
            size_t ntile = N - n0 < tn ? N - n0 : tn;
            size_t npt = qmx__k_r16(ntile) / 16;
            for (blk = 0, kb = 0; kb < K; blk++, kb += bs) {
                size_t kl = K - kb < bs ? K - kb : bs;
                const uint8_t *bp = pan + (n0 / 16) * g.pstride + (kb / 4) * 64;
                /* the exact partial sum over this block: the kernels' fix-up with this block's
                 * column sums (bytes of the blob past K are 0, so a last block may end there) */
                if (ca != 0 && kl == K) { /* one block: the blob's column sums (header) */
                    for (i = 0; i < 16 * npt; i++)
                        cacs[i] = n0 + i < N ? ca * qmx__k_ld32le(pk + QMX_MATMUL_I8_PACK_HEADER +
                                                                    4 * (n_off + n0 + i)) : 0u;
                } else if (ca != 0) { /* this block's sums: its panels are in cache next */
                    qmx__k_pk_blocksums(bp, g.pstride, npt, 0, qmx__k_r4(kl) / 4,
                                        (int32_t *)(void *)cacs);
                    for (i = 0; i < 16 * npt; i++) cacs[i] *= ca;
                } else {
                    for (i = 0; i < 16 * npt; i++) cacs[i] = 0;
                }
                g.M = mb; g.N = ntile; g.ldc = ntile; g.np = 16 * npt;
                g.K = kl; g.kp = qmx__k_r4(kl);
                g.A = A + m0 * lda + kb;
                g.panels = bp;
                qmx__k_pk_run(&g);
                qmx__k_f32_stage(&x, m0, mb, n0, ntile, blk, tile);
                if (K - kb <= bs) break; /* last block (also avoids kb + bs overflowing) */
            }
        }
    }
    return QMX_OK;
}

/* ---- dynamic quantization of float activations ---------------------------------------------- */
#define QMX__K_DYN_MB 64 /* rows of X per block (quantized rows + int32 tile in the workspace) */

/* The qmx.h config of the activation rows: int8, symmetric, s = absmax / 127 (absmax 0 -> 1),
 * q = clamp(RNE(x / s), -127, 127) (TFLite recipe, nearest-even forced). */
static void qmx__k_dyn_cfg(qmx_qconfig *c) {
    qmx_qconfig z = QMX_ZERO_INIT;   /* every field set, also those added later */
    *c = z;
    c->dtype = QMX_INT8; c->granularity = QMX_PER_TENSOR;
    c->recipe = QMX_RECIPE_TFLITE; c->rounding = QMX_ROUND_NEAREST_EVEN;
}

QMX_API qmx_status qmx_matmul_f32_dyn_i8_workspace_size(size_t M, size_t N, size_t K,
                                                        size_t *bytes) {
    size_t mb, inner, parts[4], total = 64;
    int i;
    qmx_status st;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    mb = M < QMX__K_DYN_MB ? M : QMX__K_DYN_MB;
    st = qmx_matmul_i8_packed_workspace_size(mb, N, K, &inner);
    if (st != QMX_OK) return st;
    if (M > SIZE_MAX / 8 || N > SIZE_MAX / 4 / QMX__K_DYN_MB) return QMX_ERR_OVERFLOW;
    parts[0] = qmx__k_r64(4 * M);        /* row scales */
    parts[1] = qmx__k_r64(mb * K);       /* quantized rows (K <= QMX_MATMUL_I8_MAX_K) */
    parts[2] = qmx__k_r64(4 * mb * N);   /* int32 tile */
    parts[3] = inner;                    /* qmx_matmul_i8_packed's workspace */
    for (i = 0; i < 4; i++) {
        if (parts[i] > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
        total += parts[i];
    }
    *bytes = total;
    return QMX_OK;
}

/* mode QMX__PAR_CHECK_DATA: the arguments and every row's scale (nothing written) */
static qmx_status qmx__par_dyn(size_t M, size_t N, size_t K, const float *X,
                               size_t ldx, const void *packed, size_t packed_bytes,
                               const float *w_scales, size_t w_scales_len, float *Y,
                               size_t ldy, void *workspace, size_t workspace_bytes, size_t n_off,
                               size_t n_blob, int mode) {
    qmx_qconfig cfg;
    size_t need, inner, mb, off, m, m0, n, ext, nsc;
    uint8_t *ws;
    float *sx;
    int8_t *q;
    int32_t *tile;
    qmx_status st;
    if (!X || !Y || !w_scales || !workspace) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I8_MAX_K) return QMX_ERR_OVERFLOW;
    st = qmx__k_pk_check(packed, packed_bytes, n_blob, K);
    if (st != QMX_OK) return st;
    if (ldx < K || ldy < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, ldx)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldy);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    if (w_scales_len != 1 && w_scales_len < N) return QMX_ERR_BUFFER_TOO_SMALL;
    nsc = w_scales_len == 1 ? 1 : N;
    for (n = 0; n < nsc; n++)
        if (!qmx__k_scale_ok(w_scales[n])) return QMX_ERR_ARG;
    qmx__k_dyn_cfg(&cfg);
    for (m = 0; mode == QMX__PAR_CHECK_DATA && m < M; m++) { /* pass 1 below, kept nowhere */
        float s1;
        st = qmx_compute_qparams(&cfg, X + m * ldx, K, &s1, 1, NULL);
        if (st != QMX_OK) return st;
        if (!qmx__k_scale_ok(s1)) return QMX_ERR_ARG;
    }
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx_matmul_f32_dyn_i8_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    mb = M < QMX__K_DYN_MB ? M : QMX__K_DYN_MB;
    ws = (uint8_t *)workspace;
    off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u);
    sx = (float *)(void *)(ws + off);
    off += qmx__k_r64(4 * M);
    q = (int8_t *)(void *)(ws + off);
    off += qmx__k_r64(mb * K);
    tile = (int32_t *)(void *)(ws + off);
    off += qmx__k_r64(4 * mb * N);
    (void)qmx_matmul_i8_packed_workspace_size(mb, N, K, &inner);
    qmx__k_dyn_cfg(&cfg);
    /* pass 1: every row's scale (NaN/Inf -> QMX_ERR_NONFINITE before Y is written) */
    for (m = 0; m < M; m++) {
        st = qmx_compute_qparams(&cfg, X + m * ldx, K, sx + m, 1, NULL);
        if (st != QMX_OK) return st;
        if (!qmx__k_scale_ok(sx[m])) return QMX_ERR_ARG; /* absmax / 127 underflowed to 0 */
    }
    /* pass 2: blocks of 64 rows: quantize, integer matmul on the packed weights, scale */
    for (m0 = 0; m0 < M; m0 += mb) {
        size_t rows = M - m0 < mb ? M - m0 : mb, i;
        for (i = 0; i < rows; i++) {
            st = qmx_quantize(&cfg, X + (m0 + i) * ldx, K, sx + m0 + i, 1, NULL, q + i * K, K);
            if (st != QMX_OK) return st; /* not reached: the config and scales are checked */
        }
        st = qmx__par_mm_i8p(rows, N, K, q, K, packed, packed_bytes, tile, N, NULL, ws + off,
                             inner, n_off, n_blob, QMX__PAR_RUN);
        if (st != QMX_OK) return st; /* not reached */
        for (i = 0; i < rows; i++) {
            const int32_t *t = tile + i * N;
            float *y = Y + (m0 + i) * ldy, s = sx[m0 + i];
#if defined(QMX__RVV)
            size_t vl;   /* vsetvl strips, each lane the scalar's two rounded products */
            for (n = 0; n < N; n += vl) {
                vfloat32m4_t p;
                vl = __riscv_vsetvl_e32m4(N - n);
                p = __riscv_vfcvt_f_x_v_f32m4(__riscv_vle32_v_i32m4(t + n, vl), vl);
                p = __riscv_vfmul_vf_f32m4(p, s, vl);
                p = nsc == 1 ? __riscv_vfmul_vf_f32m4(p, w_scales[0], vl)
                             : __riscv_vfmul_vv_f32m4(p, __riscv_vle32_v_f32m4(w_scales + n, vl), vl);
                __riscv_vse32_v_f32m4(y + n, p, vl);
            }
#else
            if (nsc == 1) {
                float sw = w_scales[0];
                for (n = 0; n < N; n++) {
                    float p = (float)t[n];
                    p = p * s;
                    p = p * sw;
                    y[n] = p;
                }
            } else {
                for (n = 0; n < N; n++) {
                    float p = (float)t[n];
                    p = p * s;
                    p = p * w_scales[n];
                    y[n] = p;
                }
            }
#endif
        }
    }
    return QMX_OK;
}

/* ---- USING SEVERAL CORES: tasks, range calls, the executor -----------------------------------
 * Every covered entry point is an inner function qmx__par_X(args, ..., mode) above, computing
 * one rectangle of its output (packed blobs: columns from n_off of n_blob). qmx__par_call maps
 * a rectangle of tiles onto it (sub-views of A, B, C and the per-row / per-column arrays), so
 * the serial call, a range call and a task all run the same code, and since every output
 * element is computed the same way whatever rectangle holds it (integers are exact; the float
 * stages are per element, in a fixed order over K), the bits never depend on the split. */
enum { QMX__PAR_MM, QMX__PAR_MMP, QMX__PAR_FC, QMX__PAR_FCP, QMX__PAR_F32, QMX__PAR_F32P,
       QMX__PAR_DYN, QMX__PAR_I4, QMX__PAR_I4F, QMX__PAR_FC4, QMX__PAR_FP8, QMX__PAR_BPD,
       QMX__PAR_BPF, QMX__PAR_BWD, QMX__PAR_BWF, QMX__PAR_S16, QMX__PAR_S16P, QMX__PAR_MX8 };
/* the 16x8 fully-connected (16x8 implementation, below) */
static qmx_status qmx__s16_fc(size_t M, size_t N, size_t K, const int16_t *A, size_t lda,
                              const int8_t *W, size_t ldw, const void *packed,
                              size_t packed_bytes, int32_t w_zp,
                              const qmx_requant64_config *rq, int16_t *out, size_t ldo,
                              void *workspace, size_t workspace_bytes, size_t n_off,
                              size_t n_blob, int mode);
/* the unpacked block-scaled kernels (BLOCK-SCALED WEIGHTS implementation, below) */
static qmx_status qmx__bw_f32(size_t M, size_t N, size_t K, const float *A, size_t lda,
                              const qmx_blockw *w, float *Y, size_t ldy, void *workspace,
                              size_t workspace_bytes, size_t n_off, size_t n_blob, int mode);
static qmx_status qmx__bw_mx8(size_t M, size_t N, size_t K, const qmx_blockw *a,
                              const qmx_blockw *b, float *Y, size_t ldy, size_t m_off,
                              size_t m_all, size_t n_off, size_t n_all, int mode);
static qmx_status qmx__bwd_dyn(size_t M, size_t N, size_t K, const float *X, size_t ldx,
                               const qmx_blockw *w, const qmx_blockw_dyn_opts *opts, float *Y,
                               size_t ldy, void *workspace, size_t workspace_bytes,
                               size_t n_off, size_t n_blob, int mode);
/* the block-weight blob kernels (PREPACKED BLOCK WEIGHTS implementation, below) */
static qmx_status qmx__bp_dyn(size_t M, size_t N, size_t K, const float *X, size_t ldx,
                              const void *blob, size_t blob_bytes,
                              const qmx_blockw_dyn_opts *opts, float *Y, size_t ldy,
                              void *workspace, size_t workspace_bytes, size_t n_off,
                              size_t n_blob, int mode);
static qmx_status qmx__bp_f32(size_t M, size_t N, size_t K, const float *X, size_t ldx,
                              const void *blob, size_t blob_bytes, float *Y, size_t ldy,
                              void *workspace, size_t workspace_bytes, size_t n_off,
                              size_t n_blob, int mode);
static qmx_status qmx__bp_par_ws(size_t M, size_t N, size_t K, const qmx_blockw_dyn_opts *opts,
                                 int f32, size_t *bytes);
static qmx_status qmx__par_fp8(size_t M, size_t N, size_t K, const uint8_t *A,
                               size_t lda, const uint8_t *B, size_t ldb, float *C,
                               size_t ldc, const qmx_matmul_fp8_params *params,
                               void *workspace, size_t workspace_bytes, int mode);
/* the int4 inner entry points (LOW-BIT MATMUL implementation, below) */
static qmx_status qmx__par_i4(size_t M, size_t N, size_t K, const void *A, size_t lda,
                              const uint8_t *W, size_t ldw, int32_t *C, size_t ldc,
                              const qmx_matmul_i4_params *params, void *workspace,
                              size_t workspace_bytes, int mode);
static qmx_status qmx__par_i4f(size_t M, size_t N, size_t K, const void *A, size_t lda,
                               const uint8_t *W, size_t ldw, float *C, size_t ldc,
                               const qmx_matmul_i4_params *params, void *workspace,
                               size_t workspace_bytes, int mode);
static qmx_status qmx__par_fc4(size_t M, size_t N, size_t K, const int8_t *A,
                               size_t lda, int32_t a_zp, const uint8_t *W,
                               size_t ldw, const qmx_requant_config *rq, void *out,
                               size_t ldo, void *workspace, size_t workspace_bytes, int mode);

typedef struct qmx__par_mm {
    int kind;
    size_t M, N, K;
    const void *A; size_t lda;          /* int8 A, or float X (DYN) */
    const void *B; size_t ldb;          /* int8 B / W and its ldb, or the blob and its bytes */
    void *C; size_t ldc;                /* the output and its leading dimension */
    int32_t a_zp;                       /* FC, FCP */
    const qmx_matmul_i8_opts *opts;     /* MM, MMP (executor ignored here) */
    const qmx_requant_config *rq;       /* FC, FCP */
    const qmx_matmul_i8_f32_scales *sc; /* F32, F32P */
    const float *w_scales;              /* DYN */
    size_t w_scales_len;
    const qmx_matmul_i4_params *p4;     /* I4, I4F */
    const qmx_matmul_fp8_params *p8;    /* FP8 */
    const qmx_blockw_dyn_opts *bwo;     /* BPD, BWD */
    const qmx_blockw *bw;               /* BWD, BWF; MX8: a (b in B) */
    const qmx_requant64_config *rq64;   /* S16, S16P (w_zp in a_zp) */
} qmx__par_mm;

static qmx__par_mm qmx__par_mk(int kind, size_t M, size_t N, size_t K, const void *A,
                               size_t lda, const void *B, size_t ldb, void *C, size_t ldc) {
    qmx__par_mm c;
    c.kind = kind; c.M = M; c.N = N; c.K = K; c.A = A; c.lda = lda; c.B = B; c.ldb = ldb;
    c.C = C; c.ldc = ldc; c.a_zp = 0; c.opts = NULL; c.rq = NULL; c.sc = NULL;
    c.w_scales = NULL; c.w_scales_len = 0; c.p4 = NULL; c.p8 = NULL; c.bwo = NULL;
    c.bw = NULL; c.rq64 = NULL;
    return c;
}

/* p + off bytes, NULL kept (the whole-call check sees the caller's NULLs) */
static const void *qmx__par_at(const void *p, size_t off) {
    return p ? (const void *)((const unsigned char *)p + off) : p;
}

static qmx_status qmx__par_wsz(const qmx__par_mm *c, size_t M, size_t N, size_t K,
                               size_t *bytes) {
    switch (c->kind) {
    case QMX__PAR_I4: case QMX__PAR_I4F:
        return qmx_matmul_i4_workspace_size(M, N, K, c->p4, bytes);
    case QMX__PAR_FC4: return qmx_matmul_i4_workspace_size(M, N, K, NULL, bytes);
    case QMX__PAR_FP8: return qmx_matmul_fp8_f32_workspace_size(M, N, K, bytes);
    case QMX__PAR_BPD: case QMX__PAR_BPF:
        return qmx__bp_par_ws(M, N, K, c->bwo, c->kind == QMX__PAR_BPF, bytes);
    case QMX__PAR_BWD: return qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, c->bwo, bytes);
    case QMX__PAR_BWF: return qmx_matmul_blockw_f32_workspace_size(M, N, K, bytes);
    case QMX__PAR_MX8: *bytes = 0; return QMX_OK;   /* no workspace */
    case QMX__PAR_S16: case QMX__PAR_S16P:
        return qmx_fully_connected_i16_workspace_size(M, N, K, bytes);
    case QMX__PAR_MM: return qmx_matmul_i8_workspace_size(M, N, K, NULL, bytes);
    case QMX__PAR_MMP: return qmx_matmul_i8_packed_workspace_size(M, N, K, bytes);
    case QMX__PAR_FC: case QMX__PAR_F32: return qmx__k_stage_ws(M, N, K, bytes);
    case QMX__PAR_FCP: case QMX__PAR_F32P:
        return qmx_fully_connected_i8_packed_workspace_size(M, N, K, bytes);
    default: return qmx_matmul_f32_dyn_i8_workspace_size(M, N, K, bytes);
    }
}

/* The entry point on rows [m0, m1) x columns [n0, n1) (n0 a multiple of QMX_TASK_N). */
static qmx_status qmx__par_call(const qmx__par_mm *c, size_t m0, size_t m1, size_t n0,
                                size_t n1, int mode, void *ws, size_t bytes) {
    size_t M = m1 - m0, N = n1 - n0, K = c->K, ra = m0 * c->lda;
    /* int8 A (int4 and float A are offset in their cases) */
    const int8_t *A = c->kind == QMX__PAR_I4 || c->kind == QMX__PAR_I4F ||
                              c->kind == QMX__PAR_DYN || c->kind == QMX__PAR_FP8 ||
                              c->kind == QMX__PAR_BPD || c->kind == QMX__PAR_BPF ||
                              c->kind == QMX__PAR_BWD || c->kind == QMX__PAR_BWF ||
                              c->kind == QMX__PAR_S16 || c->kind == QMX__PAR_S16P ||
                              c->kind == QMX__PAR_MX8
                          ? NULL : (const int8_t *)qmx__par_at(c->A, ra);
    switch (c->kind) {
    case QMX__PAR_S16: case QMX__PAR_S16P: { /* W / the blob and rq over all columns */
        const int16_t *A16 = (const int16_t *)qmx__par_at(c->A, ra * sizeof(int16_t));
        int16_t *out = (int16_t *)c->C;
        if (out) out += m0 * c->ldc + n0;
        if (c->kind == QMX__PAR_S16P)
            return c->B ? qmx__s16_fc(M, N, K, A16, c->lda, NULL, 0, c->B, c->ldb, c->a_zp,
                                      c->rq64, out, c->ldc, ws, bytes, n0, c->N, mode)
                        : QMX_ERR_NULL;
        return c->B ? qmx__s16_fc(M, N, K, A16, c->lda, (const int8_t *)c->B, c->ldb, NULL, 0,
                                  c->a_zp, c->rq64, out, c->ldc, ws, bytes, n0, c->N, mode)
                    : QMX_ERR_NULL;
    }
    case QMX__PAR_MX8: { /* rows [m0, m1) of a, rows [n0, n1) of b */
        float *Y = (float *)c->C;
        if (Y) Y += m0 * c->ldc + n0;
        (void)ws; (void)bytes;
        return qmx__bw_mx8(M, N, K, c->bw, (const qmx_blockw *)c->B, Y, c->ldc, m0, c->M, n0,
                           c->N, mode);
    }
    case QMX__PAR_BWD: case QMX__PAR_BWF: { /* weight rows [n0, n1) */
        const float *X = (const float *)qmx__par_at(c->A, ra * sizeof(float));
        float *Y = (float *)c->C;
        if (Y) Y += m0 * c->ldc + n0;
        if (c->kind == QMX__PAR_BWD)
            return qmx__bwd_dyn(M, N, K, X, c->lda, c->bw, c->bwo, Y, c->ldc, ws, bytes, n0,
                                c->N, mode);
        return qmx__bw_f32(M, N, K, X, c->lda, c->bw, Y, c->ldc, ws, bytes, n0, c->N, mode);
    }
    case QMX__PAR_BPD: case QMX__PAR_BPF: { /* blob panels of 16: n0 is a multiple of 256 */
        const float *X = (const float *)qmx__par_at(c->A, ra * sizeof(float));
        float *Y = (float *)c->C;
        if (Y) Y += m0 * c->ldc + n0;
        if (c->kind == QMX__PAR_BPD)
            return qmx__bp_dyn(M, N, K, X, c->lda, c->B, c->ldb, c->bwo, Y, c->ldc, ws, bytes,
                               n0, c->N, mode);
        return qmx__bp_f32(M, N, K, X, c->lda, c->B, c->ldb, Y, c->ldc, ws, bytes, n0, c->N,
                           mode);
    }
    case QMX__PAR_MM: case QMX__PAR_MMP: {
        qmx_matmul_i8_opts o = QMX_ZERO_INIT;
        int32_t *C = (int32_t *)(void *)c->C;
        if (c->opts) o = *c->opts;
        o.executor = NULL;
        if (o.b_sums && n0) { o.b_sums += n0; o.b_sums_len = o.b_sums_len > n0 ? o.b_sums_len - n0 : 0; }
        if (C) C += m0 * c->ldc + n0;
        if (c->kind == QMX__PAR_MMP)
            return qmx__par_mm_i8p(M, N, K, A, c->lda, c->B, c->ldb, C, c->ldc, &o, ws, bytes, n0,
                                   c->N, mode);
        return qmx__par_mm_i8(M, N, K, A, c->lda,
                              (const int8_t *)qmx__par_at(c->B, o.b_layout == QMX_B_KN ? n0 : n0 * c->ldb),
                              c->ldb, C, c->ldc, &o, ws, bytes, mode);
    }
    case QMX__PAR_FC: case QMX__PAR_FCP: {
        qmx_requant_config r = QMX_ZERO_INIT;
        void *out = c->C;
        if (!c->rq) return QMX_ERR_NULL;
        r = *c->rq;
        r.executor = NULL;
        if (r.per_channel && n0) {
            if (r.multipliers) r.multipliers += n0;
            if (r.shifts) r.shifts += n0;
            if (r.scales) r.scales += n0;
        }
        if (r.bias) r.bias += n0;
        if (out) out = (void *)((unsigned char *)out + (m0 * c->ldc + n0) *
                                                      (r.out_dtype == QMX_INT16 ? 2u : 1u));
        if (c->kind == QMX__PAR_FCP)
            return qmx__par_fc_i8p(M, N, K, A, c->lda, c->a_zp, c->B, c->ldb, &r, out, c->ldc,
                                   ws, bytes, n0, c->N, mode);
        return qmx__par_fc_i8(M, N, K, A, c->lda, c->a_zp,
                              (const int8_t *)qmx__par_at(c->B, n0 * c->ldb), c->ldb, &r, out,
                              c->ldc, ws, bytes, mode);
    }
    case QMX__PAR_F32: case QMX__PAR_F32P: {
        qmx_matmul_i8_f32_scales s;
        float *C = (float *)c->C;
        size_t nblk, o;
        if (!c->sc) return QMX_ERR_NULL;
        s = *c->sc;
        nblk = s.block_size ? K / s.block_size + (K % s.block_size != 0) : 1;
        if (s.a_per_row && m0) {
            o = m0 * nblk;
            s.a_scales = s.a_scales ? s.a_scales + o : s.a_scales;
            s.a_scales_len = s.a_scales_len > o ? s.a_scales_len - o : 0;
        }
        if (s.b_per_col && n0) {
            o = n0 * nblk;
            s.b_scales = s.b_scales ? s.b_scales + o : s.b_scales;
            s.b_scales_len = s.b_scales_len > o ? s.b_scales_len - o : 0;
        }
        if (C) C += m0 * c->ldc + n0;
        if (c->kind == QMX__PAR_F32P)
            return qmx__par_f32p(M, N, K, A, c->lda, c->B, c->ldb, C, c->ldc, &s, ws, bytes, n0,
                                 c->N, mode);
        return qmx__par_f32(M, N, K, A, c->lda, (const int8_t *)qmx__par_at(c->B, n0 * c->ldb),
                            c->ldb, C, c->ldc, &s, ws, bytes, mode);
    }
    case QMX__PAR_FP8: {
        qmx_matmul_fp8_params p;
        float *C = (float *)c->C;
        if (!c->p8) return QMX_ERR_NULL;
        p = *c->p8;
        if (p.a_per_row && m0 && p.a_scales) {
            p.a_scales += m0;
            p.a_scales_len = p.a_scales_len > m0 ? p.a_scales_len - m0 : 0;
        }
        if (p.b_per_col && n0 && p.b_scales) {
            p.b_scales += n0;
            p.b_scales_len = p.b_scales_len > n0 ? p.b_scales_len - n0 : 0;
        }
        if (C) C += m0 * c->ldc + n0;
        return qmx__par_fp8(M, N, K, (const uint8_t *)qmx__par_at(c->A, ra), c->lda,
                            (const uint8_t *)qmx__par_at(c->B, n0 * c->ldb), c->ldb, C, c->ldc,
                            &p, ws, bytes, mode);
    }
    case QMX__PAR_I4: case QMX__PAR_I4F: case QMX__PAR_FC4: {
        /* int4 operands: m0 * lda and n0 * ldw nibbles are even (m0, n0 multiples of 64) */
        qmx_matmul_i4_params p = QMX_ZERO_INIT;
        size_t nblk, o, es = 4;
        const void *A4;
        const uint8_t *W = (const uint8_t *)qmx__par_at(c->B, n0 * c->ldb / 2);
        void *C = c->C;
        if (c->kind == QMX__PAR_FC4) {
            qmx_requant_config r = QMX_ZERO_INIT;
            if (!c->rq) return QMX_ERR_NULL;
            r = *c->rq;
            r.executor = NULL;
            if (r.per_channel && n0) {
                if (r.multipliers) r.multipliers += n0;
                if (r.shifts) r.shifts += n0;
                if (r.scales) r.scales += n0;
            }
            if (r.bias) r.bias += n0;
            es = r.out_dtype == QMX_INT16 ? 2u : 1u;
            if (C) C = (void *)((unsigned char *)C + (m0 * c->ldc + n0) * es);
            return qmx__par_fc4(M, N, K, A, c->lda, c->a_zp, W, c->ldb, &r, C, c->ldc, ws, bytes,
                                mode);
        }
        if (c->p4) p = *c->p4;
        A4 = qmx__par_at(c->A, p.a_dtype == QMX_INT4 ? ra / 2 : ra);
        nblk = p.block_size == 0 || p.block_size >= K ? 1 : K / p.block_size + (K % p.block_size != 0);
        if (p.w_zps && n0) {
            o = n0 * nblk;
            p.w_zps += o;
            p.w_zps_len = p.w_zps_len > o ? p.w_zps_len - o : 0;
        }
        if (p.a_per_row && m0 && p.a_scales) {
            o = m0 * nblk;
            p.a_scales += o;
            p.a_scales_len = p.a_scales_len > o ? p.a_scales_len - o : 0;
        }
        if (p.w_per_col && n0 && p.w_scales) {
            o = n0 * nblk;
            p.w_scales += o;
            p.w_scales_len = p.w_scales_len > o ? p.w_scales_len - o : 0;
        }
        if (C) C = (void *)((unsigned char *)C + (m0 * c->ldc + n0) * es);
        if (c->kind == QMX__PAR_I4)
            return qmx__par_i4(M, N, K, A4, c->lda, W, c->ldb, (int32_t *)C, c->ldc,
                               c->p4 ? &p : NULL, ws, bytes, mode);
        return qmx__par_i4f(M, N, K, A4, c->lda, W, c->ldb, (float *)C, c->ldc,
                            c->p4 ? &p : NULL, ws, bytes, mode);
    }
    default: {
        const float *X = (const float *)qmx__par_at(c->A, ra * sizeof(float));
        const float *w = c->w_scales;
        size_t wl = c->w_scales_len;
        float *Y = (float *)c->C;
        if (wl != 1 && n0) { w = w ? w + n0 : w; wl = wl > n0 ? wl - n0 : 0; }
        if (Y) Y += m0 * c->ldc + n0;
        return qmx__par_dyn(M, N, K, X, c->lda, c->B, c->ldb, w, wl, Y, c->ldc, ws, bytes, n0,
                            c->N, mode);
    }
    }
}

QMX_API qmx_status qmx_matmul_tasks(size_t M, size_t N, size_t *n_tasks) {
    size_t mt, nt;
    if (!n_tasks) return QMX_ERR_NULL;
    if (M == 0 || N == 0) return QMX_ERR_SIZE;
    mt = M / QMX_TASK_M + (M % QMX_TASK_M != 0);
    nt = N / QMX_TASK_N + (N % QMX_TASK_N != 0);
    if (mt > SIZE_MAX / nt) return QMX_ERR_OVERFLOW;
    *n_tasks = mt * nt;
    return QMX_OK;
}

QMX_API qmx_status qmx_par_workspace_size(const qmx_executor *ex, size_t serial_bytes,
                                          size_t task_bytes, size_t *bytes) {
    size_t slice;
    if (!bytes) return QMX_ERR_NULL;
    if (ex && ex->workers < 0) return QMX_ERR_ARG;
    if (!ex || ex->workers <= 1) {
        *bytes = serial_bytes;
        return QMX_OK;
    }
    if (task_bytes > SIZE_MAX - 63) return QMX_ERR_OVERFLOW;
    slice = qmx__k_r64(task_bytes);
    if (slice > SIZE_MAX / (size_t)ex->workers) return QMX_ERR_OVERFLOW;
    *bytes = slice * (size_t)ex->workers;
    return QMX_OK;
}

/* Tasks [tb, te) with one worker's workspace; the whole call is already checked. Runs of
 * consecutive tiles become one call when the workspace holds it (same bits, fewer passes). */
static qmx_status qmx__par_range(const qmx__par_mm *c, size_t tb, size_t te, void *ws,
                                 size_t bytes) {
    size_t nc = c->N / QMX_TASK_N + (c->N % QMX_TASK_N != 0), nt, need, t;
    qmx_status st = qmx_matmul_tasks(c->M, c->N, &nt);
    if (st != QMX_OK) return st;
    if (tb > te || te > nt) return QMX_ERR_ARG;
    st = qmx__par_wsz(c, c->M < QMX_TASK_M ? c->M : QMX_TASK_M,
                      c->N < QMX_TASK_N ? c->N : QMX_TASK_N, c->K, &need);
    if (st != QMX_OK) return st;
    if (bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    for (t = tb; t < te;) {
        size_t j = t % nc, m0 = t / nc * QMX_TASK_M, m1, n0 = j * QMX_TASK_N, n1, span = 0;
        if (j == 0 && te - t >= nc) { /* whole rows of tiles */
            size_t rows = (te - t) / nc;
            m1 = c->M - m0 <= rows * QMX_TASK_M ? c->M : m0 + rows * QMX_TASK_M;
            if (qmx__par_wsz(c, m1 - m0, c->N, c->K, &need) == QMX_OK && need <= bytes) {
                span = rows * nc;
                n1 = c->N;
            }
        }
        if (span == 0) { /* tiles of one row */
            m1 = c->M - m0 < QMX_TASK_M ? c->M : m0 + QMX_TASK_M;
            span = nc - j < te - t ? nc - j : te - t;
            n1 = c->N - n0 <= span * QMX_TASK_N ? c->N : n0 + span * QMX_TASK_N;
            if (span > 1 &&
                (qmx__par_wsz(c, m1 - m0, n1 - n0, c->K, &need) != QMX_OK || need > bytes)) {
                span = 1;
                n1 = c->N - n0 < QMX_TASK_N ? c->N : n0 + QMX_TASK_N;
            }
        }
        st = qmx__par_call(c, m0, m1, n0, n1, QMX__PAR_RUN, ws, bytes);
        if (st != QMX_OK) return st;
        t += span;
    }
    return QMX_OK;
}

/* A range call: the whole call's arguments, then the range and the workspace. */
static qmx_status qmx__par_run(const qmx__par_mm *c, size_t tb, size_t te, void *ws,
                               size_t bytes) {
    size_t nc = c->N / QMX_TASK_N + (c->N % QMX_TASK_N != 0), nt = 0, need = 0;
    qmx_status st = qmx__par_call(c, 0, c->M, 0, c->N, QMX__PAR_CHECK, ws, bytes);
    if (st != QMX_OK) return st;
    /* float rows quantized on the fly: a range over several rows of tiles checks all its rows
     * before the first tile is written (one row of tiles: its tile's own pass 1 does) */
    if ((c->kind == QMX__PAR_DYN || c->kind == QMX__PAR_BPD || c->kind == QMX__PAR_BWD) &&
        tb < te &&
        qmx_matmul_tasks(c->M, c->N, &nt) == QMX_OK && te <= nt && tb / nc != (te - 1) / nc &&
        qmx__par_wsz(c, c->M < QMX_TASK_M ? c->M : QMX_TASK_M,
                     c->N < QMX_TASK_N ? c->N : QMX_TASK_N, c->K, &need) == QMX_OK &&
        bytes >= need) {
        size_t m0 = tb / nc * QMX_TASK_M, m1 = ((te - 1) / nc + 1) * QMX_TASK_M;
        st = qmx__par_call(c, m0, m1 < c->M ? m1 : c->M, 0, c->N, QMX__PAR_CHECK_DATA, ws,
                           bytes);
        if (st != QMX_OK) return st;
    }
    return qmx__par_range(c, tb, te, ws, bytes);
}

typedef struct qmx__par_job {
    const qmx__par_mm *c;
    unsigned char *ws;
    size_t slice, nt, mt, nc;   /* nt = mt row tiles x nc column tiles */
    int workers;
} qmx__par_job;

/* parallel_for's index i runs tile (i % mt, i / mt): the tiles of one column tile (one panel
 * of B) come one after another, so workers that take neighbouring indices (a shared counter,
 * or OpenMP's static chunks) share that panel in cache instead of each streaming all of B. */
static void qmx__par_task(void *arg, int task, int worker) {
    const qmx__par_job *j = (const qmx__par_job *)arg;
    size_t i = (size_t)task;
    /* outside the executor contract: nothing to run it with (documented) */
    if (task < 0 || i >= j->nt || worker < 0 || worker >= j->workers) return;
    i = i % j->mt * j->nc + i / j->mt;
    (void)qmx__par_range(j->c, i, i + 1, j->ws + (size_t)worker * j->slice, j->slice);
}

/* The entry point through an executor: everything is checked (data included) before the
 * first task, so a bad call writes nothing, and no task can fail after that. */
static qmx_status qmx__par_exec(const qmx__par_mm *c, const qmx_executor *ex, void *ws,
                                size_t bytes) {
    qmx__par_job job;
    size_t nt, need, total;
    qmx_status st;
    if (ex->workers == 0 || ex->workers == 1)
        return qmx__par_call(c, 0, c->M, 0, c->N, QMX__PAR_RUN, ws, bytes);
    st = qmx__par_call(c, 0, c->M, 0, c->N, QMX__PAR_CHECK_DATA, ws, bytes);
    if (st != QMX_OK) return st;
    if (ex->workers < 0) return QMX_ERR_ARG;
    if (!ex->parallel_for) return QMX_ERR_NULL;
    st = qmx_matmul_tasks(c->M, c->N, &nt);
    if (st != QMX_OK) return st;
    if (nt > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
    st = qmx__par_wsz(c, c->M < QMX_TASK_M ? c->M : QMX_TASK_M,
                      c->N < QMX_TASK_N ? c->N : QMX_TASK_N, c->K, &need);
    if (st != QMX_OK) return st;
    st = qmx_par_workspace_size(ex, 0, need, &total);
    if (st != QMX_OK) return st;
    if (bytes < total) return QMX_ERR_BUFFER_TOO_SMALL;
    job.c = c; job.ws = (unsigned char *)ws; job.slice = total / (size_t)ex->workers;
    job.nt = nt; job.workers = ex->workers;
    job.nc = c->N / QMX_TASK_N + (c->N % QMX_TASK_N != 0); job.mt = nt / job.nc;
    if (nt == 1) return qmx__par_range(c, 0, 1, ws, job.slice); /* nothing to share */
    ex->parallel_for(ex->pool, (int)nt, qmx__par_task, &job);
    return QMX_OK;
}

/* ---- the public entry points and their range calls ---- */
QMX_API qmx_status qmx_matmul_i8(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                 const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                 const qmx_matmul_i8_opts *opts, void *workspace,
                                 size_t workspace_bytes) {
    qmx__par_mm c;
    if (!opts || !opts->executor)
        return qmx__par_mm_i8(M, N, K, A, lda, B, ldb, C, ldc, opts, workspace, workspace_bytes,
                              QMX__PAR_RUN);
    c = qmx__par_mk(QMX__PAR_MM, M, N, K, A, lda, B, ldb, C, ldc);
    c.opts = opts;
    return qmx__par_exec(&c, opts->executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_i8_run(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, int32_t *C, size_t ldc,
                                     const qmx_matmul_i8_opts *opts, size_t task_begin,
                                     size_t task_end, void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_MM, M, N, K, A, lda, B, ldb, C, ldc);
    c.opts = opts;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

QMX_API qmx_status qmx_matmul_i8_packed(size_t M, size_t N, size_t K, const int8_t *A,
                                        size_t lda, const void *packed, size_t packed_bytes,
                                        int32_t *C, size_t ldc, const qmx_matmul_i8_opts *opts,
                                        void *workspace, size_t workspace_bytes) {
    qmx__par_mm c;
    if (!opts || !opts->executor)
        return qmx__par_mm_i8p(M, N, K, A, lda, packed, packed_bytes, C, ldc, opts, workspace,
                               workspace_bytes, 0, N, QMX__PAR_RUN);
    c = qmx__par_mk(QMX__PAR_MMP, M, N, K, A, lda, packed, packed_bytes, C, ldc);
    c.opts = opts;
    return qmx__par_exec(&c, opts->executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_i8_packed_run(size_t M, size_t N, size_t K, const int8_t *A,
                                            size_t lda, const void *packed, size_t packed_bytes,
                                            int32_t *C, size_t ldc,
                                            const qmx_matmul_i8_opts *opts, size_t task_begin,
                                            size_t task_end, void *workspace,
                                            size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_MMP, M, N, K, A, lda, packed, packed_bytes, C, ldc);
    c.opts = opts;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

QMX_API qmx_status qmx_fully_connected_i8(size_t M, size_t N, size_t K, const int8_t *A,
                                          size_t lda, int32_t a_zp, const int8_t *W, size_t ldw,
                                          const qmx_requant_config *rq, void *out, size_t ldo,
                                          void *workspace, size_t workspace_bytes) {
    qmx__par_mm c;
    if (!rq || !rq->executor)
        return qmx__par_fc_i8(M, N, K, A, lda, a_zp, W, ldw, rq, out, ldo, workspace,
                              workspace_bytes, QMX__PAR_RUN);
    c = qmx__par_mk(QMX__PAR_FC, M, N, K, A, lda, W, ldw, out, ldo);
    c.a_zp = a_zp; c.rq = rq;
    return qmx__par_exec(&c, rq->executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i8_run(size_t M, size_t N, size_t K, const int8_t *A,
                                              size_t lda, int32_t a_zp, const int8_t *W,
                                              size_t ldw, const qmx_requant_config *rq,
                                              void *out, size_t ldo, size_t task_begin,
                                              size_t task_end, void *workspace,
                                              size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_FC, M, N, K, A, lda, W, ldw, out, ldo);
    c.a_zp = a_zp; c.rq = rq;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

QMX_API qmx_status qmx_fully_connected_i8_packed(size_t M, size_t N, size_t K, const int8_t *A,
                                                 size_t lda, int32_t a_zp, const void *packed,
                                                 size_t packed_bytes,
                                                 const qmx_requant_config *rq, void *out,
                                                 size_t ldo, void *workspace,
                                                 size_t workspace_bytes) {
    qmx__par_mm c;
    if (!rq || !rq->executor)
        return qmx__par_fc_i8p(M, N, K, A, lda, a_zp, packed, packed_bytes, rq, out, ldo,
                               workspace, workspace_bytes, 0, N, QMX__PAR_RUN);
    c = qmx__par_mk(QMX__PAR_FCP, M, N, K, A, lda, packed, packed_bytes, out, ldo);
    c.a_zp = a_zp; c.rq = rq;
    return qmx__par_exec(&c, rq->executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i8_packed_run(size_t M, size_t N, size_t K,
                                                     const int8_t *A, size_t lda, int32_t a_zp,
                                                     const void *packed, size_t packed_bytes,
                                                     const qmx_requant_config *rq, void *out,
                                                     size_t ldo, size_t task_begin,
                                                     size_t task_end, void *workspace,
                                                     size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_FCP, M, N, K, A, lda, packed, packed_bytes, out, ldo);
    c.a_zp = a_zp; c.rq = rq;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

QMX_API qmx_status qmx_matmul_i8_f32(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     const int8_t *B, size_t ldb, float *C, size_t ldc,
                                     const qmx_matmul_i8_f32_scales *scales, void *workspace,
                                     size_t workspace_bytes) {
    return qmx__par_f32(M, N, K, A, lda, B, ldb, C, ldc, scales, workspace, workspace_bytes,
                        QMX__PAR_RUN);
}
QMX_API qmx_status qmx_matmul_i8_f32_run(size_t M, size_t N, size_t K, const int8_t *A,
                                         size_t lda, const int8_t *B, size_t ldb, float *C,
                                         size_t ldc, const qmx_matmul_i8_f32_scales *scales,
                                         size_t task_begin, size_t task_end, void *workspace,
                                         size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_F32, M, N, K, A, lda, B, ldb, C, ldc);
    c.sc = scales;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

QMX_API qmx_status qmx_matmul_i8_f32_packed(size_t M, size_t N, size_t K, const int8_t *A,
                                            size_t lda, const void *packed, size_t packed_bytes,
                                            float *C, size_t ldc,
                                            const qmx_matmul_i8_f32_scales *scales,
                                            void *workspace, size_t workspace_bytes) {
    return qmx__par_f32p(M, N, K, A, lda, packed, packed_bytes, C, ldc, scales, workspace,
                         workspace_bytes, 0, N, QMX__PAR_RUN);
}
QMX_API qmx_status qmx_matmul_i8_f32_packed_run(size_t M, size_t N, size_t K, const int8_t *A,
                                                size_t lda, const void *packed,
                                                size_t packed_bytes, float *C, size_t ldc,
                                                const qmx_matmul_i8_f32_scales *scales,
                                                size_t task_begin, size_t task_end,
                                                void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_F32P, M, N, K, A, lda, packed, packed_bytes, C, ldc);
    c.sc = scales;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

QMX_API qmx_status qmx_matmul_f32_dyn_i8(size_t M, size_t N, size_t K, const float *X,
                                         size_t ldx, const void *packed, size_t packed_bytes,
                                         const float *w_scales, size_t w_scales_len, float *Y,
                                         size_t ldy, void *workspace, size_t workspace_bytes) {
    return qmx__par_dyn(M, N, K, X, ldx, packed, packed_bytes, w_scales, w_scales_len, Y, ldy,
                        workspace, workspace_bytes, 0, N, QMX__PAR_RUN);
}
QMX_API qmx_status qmx_matmul_f32_dyn_i8_exec(size_t M, size_t N, size_t K, const float *X,
                                              size_t ldx, const void *packed,
                                              size_t packed_bytes, const float *w_scales,
                                              size_t w_scales_len, float *Y, size_t ldy,
                                              const qmx_executor *executor, void *workspace,
                                              size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_DYN, M, N, K, X, ldx, packed, packed_bytes, Y, ldy);
    c.w_scales = w_scales; c.w_scales_len = w_scales_len;
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_f32_dyn_i8_run(size_t M, size_t N, size_t K, const float *X,
                                             size_t ldx, const void *packed, size_t packed_bytes,
                                             const float *w_scales, size_t w_scales_len,
                                             float *Y, size_t ldy, size_t task_begin,
                                             size_t task_end, void *workspace,
                                             size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_DYN, M, N, K, X, ldx, packed, packed_bytes, Y, ldy);
    c.w_scales = w_scales; c.w_scales_len = w_scales_len;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION (kernels) */

/* ============================================================================================
 * IMPLEMENTATION: LOW-BIT MATMUL (INT4 WEIGHTS, FP8)
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__LOWBIT_IMPLEMENTATION_DONE)
#if defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define QMX__LOWBIT_IMPLEMENTATION_DONE

/* ---- path selection (as qmx_kernels.h; Cortex-M DSP / MVE in addition) ---- */
#if !defined(QMX_NO_SIMD)
#  if !defined(QMX_NO_AVX512) && defined(__AVX512F__) && defined(__AVX512BW__) && \
      defined(__AVX512VNNI__)
#    define QMX__LB_VNNI 1
#  elif !defined(QMX_NO_AVX2) && defined(__AVX2__)
#    define QMX__LB_AVX2 1
#  elif !defined(QMX_NO_NEON) && (defined(__ARM_NEON) || defined(__ARM_NEON__)) && \
        defined(__aarch64__)
#    if defined(__ARM_FEATURE_DOTPROD) && !defined(QMX_NO_DOTPROD)
#      define QMX__LB_NEONDOT 1
#    else
#      define QMX__LB_NEON 1
#    endif
#  elif defined(__ARM_FEATURE_MVE) && !defined(__ARM_BIG_ENDIAN) && !defined(QMX_NO_MVE)
#    define QMX__LB_MVE 1
#  elif defined(__ARM_FEATURE_DSP) && !defined(__ARM_BIG_ENDIAN) && !defined(QMX_NO_DSP) && \
        !defined(__aarch64__)
#    define QMX__LB_DSP 1
#  elif defined(QMX__RVV)   /* qmx.h: RVV 1.0 intrinsics, not QMX_NO_RVV */
#    define QMX__LB_RVV 1
#  endif
#endif
#if defined(QMX__LB_VNNI) || defined(QMX__LB_AVX2)
#  include <immintrin.h>
#endif
#if defined(QMX__LB_NEONDOT) || defined(QMX__LB_NEON)
#  include <arm_neon.h>
#endif
#if defined(QMX__LB_MVE)
#  include <arm_mve.h>
#endif
#if defined(QMX__LB_DSP)
#  include <arm_acle.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define QMX__LB_MB 16 /* rows of A per laid-out panel */

/* (qmx__k_u2i, qmx__k_r64, qmx__k_extent, qmx__k_scales_ok and qmx__k_fc_prep come from the
 * int8 part above) */
static size_t qmx__lb_r128(size_t x) { return (x + 127u) & ~(size_t)127u; }
static uint32_t qmx__lb_ld32(const uint8_t *p) {   /* little-endian word, any alignment */
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
/* element e of a packed int4 stream: signed (two's complement nibble) or unsigned */
static int32_t qmx__lb_nib(const uint8_t *p, size_t e, int is_signed) {
    int32_t v = (int32_t)((p[e >> 1] >> ((e & 1u) * 4u)) & 0xFu);
    return is_signed ? (v ^ 8) - 8 : v;
}

/* ================================ int4 kernels ================================
 * qmx__lb_tile(a, na, w, nb, x, d): d[i][j] = sum over one block of a_i[k] * u_j[k],
 * i < na (1 <= na <= QMX__LB_MR), j < 4, u = nibble ^ x (x = 0x88 for int4, 0 for uint4)
 * read from the nb = ceil(kl/2) bytes at w[j] (never past them); a[i] is row i's block laid
 * out by qmx__lb_prep_block (zero padding makes the high nibble of an odd last byte count 0).
 * pf != 0 (M = 1): w[j] + pf is the next tile's row j; paths may prefetch it.
 * On the DSP path a is (A - a_zp) as int16 pairs, so the zero point of A is already in d. */

#if defined(QMX__LB_VNNI)
#define QMX__LB_MR 4
static int32_t qmx__lb_hsum512(__m512i v) {
    __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), xv = _mm512_set1_epi8((char)x);
    size_t c, i, j;
    if (na == 4) {
        __m512i acc[4][4];
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++) acc[i][j] = _mm512_setzero_si512();
        for (c = 0; c * 64 < nb; c++) {
            size_t rem = nb - c * 64;
            __mmask64 msk = rem >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << rem) - 1u);
            __m512i lo[4], hi[4];
            for (j = 0; j < 4; j++) {
                __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(msk, w[j] + c * 64), xv);
                lo[j] = _mm512_and_si512(v, m4);
                hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
            }
            for (i = 0; i < 4; i++) {
                __m512i ae = _mm512_loadu_si512((const void *)(a[i] + c * 128));
                __m512i ao = _mm512_loadu_si512((const void *)(a[i] + c * 128 + 64));
                for (j = 0; j < 4; j++) {
                    acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], lo[j], ae);
                    acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], hi[j], ao);
                }
            }
        }
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++) d[i][j] = qmx__lb_hsum512(acc[i][j]);
        return;
    }
    for (i = 0; i < na; i++) {
        __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
        const uint8_t *ap = a[i];
        for (c = 0; c * 64 < nb; c++) {
            size_t rem = nb - c * 64;
            __mmask64 msk = rem >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << rem) - 1u);
            __m512i ae = _mm512_loadu_si512((const void *)(ap + c * 128));
            __m512i ao = _mm512_loadu_si512((const void *)(ap + c * 128 + 64));
            __m512i v0, v1, v2, v3;
            if (pf) { /* GEMV: pull the next tile's rows in while this one streams */
                _mm_prefetch((const char *)(w[0] + c * 64 + pf), _MM_HINT_T1);
                _mm_prefetch((const char *)(w[1] + c * 64 + pf), _MM_HINT_T1);
                _mm_prefetch((const char *)(w[2] + c * 64 + pf), _MM_HINT_T1);
                _mm_prefetch((const char *)(w[3] + c * 64 + pf), _MM_HINT_T1);
            }
            v0 = _mm512_xor_si512(_mm512_maskz_loadu_epi8(msk, w[0] + c * 64), xv);
            v1 = _mm512_xor_si512(_mm512_maskz_loadu_epi8(msk, w[1] + c * 64), xv);
            v2 = _mm512_xor_si512(_mm512_maskz_loadu_epi8(msk, w[2] + c * 64), xv);
            v3 = _mm512_xor_si512(_mm512_maskz_loadu_epi8(msk, w[3] + c * 64), xv);
            c0 = _mm512_dpbusd_epi32(c0, _mm512_and_si512(v0, m4), ae);
            c1 = _mm512_dpbusd_epi32(c1, _mm512_and_si512(v1, m4), ae);
            c2 = _mm512_dpbusd_epi32(c2, _mm512_and_si512(v2, m4), ae);
            c3 = _mm512_dpbusd_epi32(c3, _mm512_and_si512(v3, m4), ae);
            c0 = _mm512_dpbusd_epi32(c0, _mm512_and_si512(_mm512_srli_epi16(v0, 4), m4), ao);
            c1 = _mm512_dpbusd_epi32(c1, _mm512_and_si512(_mm512_srli_epi16(v1, 4), m4), ao);
            c2 = _mm512_dpbusd_epi32(c2, _mm512_and_si512(_mm512_srli_epi16(v2, 4), m4), ao);
            c3 = _mm512_dpbusd_epi32(c3, _mm512_and_si512(_mm512_srli_epi16(v3, 4), m4), ao);
        }
        d[i][0] = qmx__lb_hsum512(c0); d[i][1] = qmx__lb_hsum512(c1);
        d[i][2] = qmx__lb_hsum512(c2); d[i][3] = qmx__lb_hsum512(c3);
    }
}

#elif defined(QMX__LB_AVX2)
#define QMX__LB_MR 2
static int32_t qmx__lb_hsum256(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}
/* sum of u*a for 32 bytes: maddubs pairs (|.| <= 3840, no saturation) then madd to int32 */
#define QMX__LB_DOT2(acc, u, a, ones) \
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, a), ones))
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), xv = _mm256_set1_epi8((char)x);
    const __m256i ones = _mm256_set1_epi16(1);
    size_t i = 0, j, q, o;
    (void)pf;
    while (i < na) {
        size_t nr = na - i >= 2 ? 2 : 1, r;
        __m256i acc[2][4];
        for (r = 0; r < 2; r++)
            for (j = 0; j < 4; j++) acc[r][j] = _mm256_setzero_si256();
        for (q = 0; q + 32 <= nb; q += 32) { /* byte q of W: chunk q/64, offset q%64 */
            size_t ao = (q >> 6) * 128 + (q & 63);
            __m256i lo[4], hi[4];
            for (j = 0; j < 4; j++) {
                __m256i v = _mm256_xor_si256(
                    _mm256_loadu_si256((const __m256i *)(const void *)(w[j] + q)), xv);
                lo[j] = _mm256_and_si256(v, m4);
                hi[j] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
            }
            for (r = 0; r < nr; r++) {
                __m256i ae = _mm256_loadu_si256((const __m256i *)(const void *)(a[i + r] + ao));
                __m256i aod =
                    _mm256_loadu_si256((const __m256i *)(const void *)(a[i + r] + ao + 64));
                for (j = 0; j < 4; j++) {
                    QMX__LB_DOT2(acc[r][j], lo[j], ae, ones);
                    QMX__LB_DOT2(acc[r][j], hi[j], aod, ones);
                }
            }
        }
        for (r = 0; r < nr; r++)
            for (j = 0; j < 4; j++) d[i + r][j] = qmx__lb_hsum256(acc[r][j]);
        for (; q < nb; q++) {
            o = (q >> 6) * 128 + (q & 63);
            for (r = 0; r < nr; r++)
                for (j = 0; j < 4; j++) {
                    uint32_t v = (uint32_t)(w[j][q] ^ x);
                    d[i + r][j] += (int32_t)(v & 15u) * (int8_t)a[i + r][o] +
                                   (int32_t)(v >> 4) * (int8_t)a[i + r][o + 64];
                }
        }
        i += nr;
    }
}

#elif defined(QMX__LB_NEONDOT) || defined(QMX__LB_NEON)
#define QMX__LB_MR 4
#if defined(QMX__LB_NEONDOT)
#  define QMX__LB_MAC(c, u, y) c = vdotq_s32(c, u, y)
#else
#  define QMX__LB_MAC(c, u, y) \
     c = vpadalq_s16(vpadalq_s16(c, vmull_s8(vget_low_s8(u), vget_low_s8(y))), vmull_high_s8(u, y))
#endif
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F), xv = vdupq_n_u8(x);
    size_t i, j, q, o;
    int32x4_t acc[4][4];
    (void)pf;
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) acc[i][j] = vdupq_n_s32(0);
    for (q = 0; q + 16 <= nb; q += 16) {
        size_t ao = (q >> 6) * 128 + (q & 63);
        int8x16_t lo[4], hi[4];
        for (j = 0; j < 4; j++) {
            uint8x16_t v = veorq_u8(vld1q_u8(w[j] + q), xv);
            lo[j] = vreinterpretq_s8_u8(vandq_u8(v, m4));
            hi[j] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
        }
        for (i = 0; i < na; i++) {
            int8x16_t ae = vld1q_s8((const int8_t *)(const void *)(a[i] + ao));
            int8x16_t aod = vld1q_s8((const int8_t *)(const void *)(a[i] + ao + 64));
            for (j = 0; j < 4; j++) {
                QMX__LB_MAC(acc[i][j], lo[j], ae);
                QMX__LB_MAC(acc[i][j], hi[j], aod);
            }
        }
    }
    for (i = 0; i < na; i++)
        for (j = 0; j < 4; j++) d[i][j] = vaddvq_s32(acc[i][j]);
    for (; q < nb; q++) {
        o = (q >> 6) * 128 + (q & 63);
        for (i = 0; i < na; i++)
            for (j = 0; j < 4; j++) {
                uint32_t v = (uint32_t)(w[j][q] ^ x);
                d[i][j] += (int32_t)(v & 15u) * (int8_t)a[i][o] +
                           (int32_t)(v >> 4) * (int8_t)a[i][o + 64];
            }
    }
}

#elif defined(QMX__LB_RVV)
/* RVV, vector-length agnostic: per 64-byte chunk of W (whose bytes pair with bytes q % 64 and
 * 64 + q % 64 of the laid-out A chunk q / 64), vsetvl strips inside the chunk; u = nibble ^ x
 * (0..15) times A as int8 -> int16 products (vwmul), added into int32 lanes (vwadd.wv,
 * tail-undisturbed), one reduction per output: exact at any VLEN. One row, 4 x i32m4. */
#define QMX__LB_MR 1
static int32_t qmx__lb_rvv_hsum(vint32m4_t v, size_t vlm) {
    return __riscv_vmv_x_s_i32m1_i32(__riscv_vredsum_vs_i32m4_i32m1(v, __riscv_vmv_v_x_i32m1(0, 1), vlm));
}
#define QMX__LB_RVV_ROW(c, wr)                                                                  \
    v = __riscv_vxor_vx_u8m1(__riscv_vle8_v_u8m1((wr) + q + o, vl), x, vl);                     \
    c = __riscv_vwadd_wv_i32m4_tu(c, c, __riscv_vwmul_vv_i16m2(__riscv_vreinterpret_v_u8m1_i8m1( \
            __riscv_vand_vx_u8m1(v, 15, vl)), ae, vl), vl);                                     \
    c = __riscv_vwadd_wv_i32m4_tu(c, c, __riscv_vwmul_vv_i16m2(__riscv_vreinterpret_v_u8m1_i8m1( \
            __riscv_vsrl_vx_u8m1(v, 4, vl)), ao, vl), vl)
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    const size_t vlm = __riscv_vsetvlmax_e8m1();
    const int8_t *ap = (const int8_t *)(const void *)a[0];
    vint32m4_t c0 = __riscv_vmv_v_x_i32m4(0, vlm), c1 = c0, c2 = c0, c3 = c0;
    size_t q, o, len, vl;
    (void)na; (void)pf;
    for (q = 0; q < nb; q += 64, ap += 128) {
        len = nb - q < 64 ? nb - q : 64;
        for (o = 0; o < len; o += vl) {
            vuint8m1_t v;
            vint8m1_t ae, ao;
            vl = __riscv_vsetvl_e8m1(len - o);
            ae = __riscv_vle8_v_i8m1(ap + o, vl);
            ao = __riscv_vle8_v_i8m1(ap + 64 + o, vl);
            QMX__LB_RVV_ROW(c0, w[0]);
            QMX__LB_RVV_ROW(c1, w[1]);
            QMX__LB_RVV_ROW(c2, w[2]);
            QMX__LB_RVV_ROW(c3, w[3]);
        }
    }
    d[0][0] = qmx__lb_rvv_hsum(c0, vlm); d[0][1] = qmx__lb_rvv_hsum(c1, vlm);
    d[0][2] = qmx__lb_rvv_hsum(c2, vlm); d[0][3] = qmx__lb_rvv_hsum(c3, vlm);
}
#undef QMX__LB_RVV_ROW

#elif defined(QMX__LB_MVE)
#define QMX__LB_MR 1
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    const uint8x16_t xv = vdupq_n_u8(x), m4 = vdupq_n_u8(15);
    size_t i, q, o;
    (void)pf;
    for (i = 0; i < na; i++) {
        const int8_t *ap = (const int8_t *)(const void *)a[i];
        const uint8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        uint8x16_t v;
        int8x16_t ae, ao;
        /* byte q of a W row pairs with byte q%64 of both halves of A chunk q/64 */
#define QMX__LB_MVE_ROW(s, LOAD)                                                    \
        v = veorq_u8(LOAD, xv);                                                      \
        s = vmladavaq_s8(s, vreinterpretq_s8_u8(vandq_u8(v, m4)), ae);               \
        s = vmladavaq_s8(s, vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), ao);
        for (q = 0; q + 64 <= nb; q += 64) { /* whole chunks: constant offsets */
            for (o = 0; o < 64; o += 16) {
                ae = vld1q_s8(ap + o); ao = vld1q_s8(ap + 64 + o);
                QMX__LB_MVE_ROW(s0, vld1q_u8(w0 + o))
                QMX__LB_MVE_ROW(s1, vld1q_u8(w1 + o))
                QMX__LB_MVE_ROW(s2, vld1q_u8(w2 + o))
                QMX__LB_MVE_ROW(s3, vld1q_u8(w3 + o))
            }
            ap += 128; w0 += 64; w1 += 64; w2 += 64; w3 += 64;
        }
        for (o = 0; q + o < nb; o += 16) { /* the last chunk, predicated */
            mve_pred16_t p = vctp8q((uint32_t)(nb - q - o));
            ae = vld1q_s8(ap + o); ao = vld1q_s8(ap + 64 + o);
            QMX__LB_MVE_ROW(s0, vldrbq_z_u8(w0 + o, p))
            QMX__LB_MVE_ROW(s1, vldrbq_z_u8(w1 + o, p))
            QMX__LB_MVE_ROW(s2, vldrbq_z_u8(w2 + o, p))
            QMX__LB_MVE_ROW(s3, vldrbq_z_u8(w3 + o, p))
        }
#undef QMX__LB_MVE_ROW
        d[i][0] = s0; d[i][1] = s1; d[i][2] = s2; d[i][3] = s3;
    }
}
/* sum of u over the nb = kl/2 whole bytes (vaddvaq), for the zero point of A */
#define QMX__LB_USUM_BYTES 1
static uint32_t qmx__lb_usum_bytes(const uint8_t *w, size_t nb, uint8_t x) {
    const uint8x16_t xv = vdupq_n_u8(x), m4 = vdupq_n_u8(15);
    uint32_t s = 0;
    size_t q;
    for (q = 0; q + 16 <= nb; q += 16) {
        uint8x16_t v = veorq_u8(vld1q_u8(w + q), xv);
        s = vaddvaq_u8(s, vandq_u8(v, m4));
        s = vaddvaq_u8(s, vshrq_n_u8(v, 4));
    }
    for (; q < nb; q++) s += (uint32_t)((w[q] ^ x) & 15u) + (uint32_t)((w[q] ^ x) >> 4);
    return s;
}

#elif defined(QMX__LB_DSP)
#define QMX__LB_MR 1
#define QMX__LB_AZP_IN_A 1 /* a is int16 (A - a_zp): d already holds the zero point of A */
/* One A row against W rows wa, wb: per 8 elements, 4 words of A pairs and one word of each W
 * row, u = (w >> 4i) & 0x000F000F (one AND with a shifted operand), 4 SMLAD. The main loop is
 * inline assembly (13 registers: also builds that keep a frame pointer); C does the rest. */
static void qmx__lb_dsp_pair(const uint8_t *ap, const uint8_t *wa, const uint8_t *wb,
                             size_t nb, uint8_t x, int32_t *ra, int32_t *rb) {
    const uint32_t xx = (uint32_t)x * 0x01010101u, mk = 0x000F000Fu;
    const uint32_t *aw = (const uint32_t *)(const void *)ap;
    const uint8_t *wa0 = wa, *wb0 = wb;
    const int16_t *a16 = (const int16_t *)(const void *)ap;
    size_t nw = nb / 4, q = 0;
    int32_t s0 = 0, s1 = 0;
#if defined(__OPTIMIZE__) && !defined(QMX_NO_DSP_ASM) && defined(__thumb2__) && \
    defined(__GNUC__)
    if (nw >= 2) { /* 16 elements per iteration */
        const uint32_t *volatile ae = aw + 4 * (nw & ~(size_t)1);
        uint32_t p0, p1, p2, p3, v, t;
#define QMX__LB_DSP_W(W, S)                                                         \
        "ldr %[v], [%[" W "]], #4\n\teor %[v], %[v], %[xx]\n\t"                     \
        "and %[t], %[mk], %[v]\n\tsmlad %[" S "], %[t], %[p0], %[" S "]\n\t"        \
        "and %[t], %[mk], %[v], lsr #4\n\tsmlad %[" S "], %[t], %[p1], %[" S "]\n\t" \
        "and %[t], %[mk], %[v], lsr #8\n\tsmlad %[" S "], %[t], %[p2], %[" S "]\n\t" \
        "and %[t], %[mk], %[v], lsr #12\n\tsmlad %[" S "], %[t], %[p3], %[" S "]\n\t"
#define QMX__LB_DSP_STEP                                                            \
        "ldr %[p0], [%[aw]], #4\n\tldr %[p1], [%[aw]], #4\n\t"                      \
        "ldr %[p2], [%[aw]], #4\n\tldr %[p3], [%[aw]], #4\n\t"                      \
        QMX__LB_DSP_W("wa", "s0") QMX__LB_DSP_W("wb", "s1")
        __asm__("1:\n\t" QMX__LB_DSP_STEP QMX__LB_DSP_STEP
                "ldr %[t], %[ae]\n\tcmp %[aw], %[t]\n\tbne 1b\n\t"
                : [aw] "+r"(aw), [wa] "+r"(wa), [wb] "+r"(wb), [s0] "+r"(s0), [s1] "+r"(s1),
                  [p0] "=&r"(p0), [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3),
                  [v] "=&r"(v), [t] "=&r"(t)
                : [ae] "m"(ae), [mk] "r"(mk), [xx] "r"(xx)
                : "cc", "memory");
#undef QMX__LB_DSP_STEP
#undef QMX__LB_DSP_W
        q = nw & ~(size_t)1;
    }
#endif
    for (; q < nw; q++) {
        uint32_t p0 = aw[0], p1 = aw[1], p2 = aw[2], p3 = aw[3], v;
        aw += 4;
        v = qmx__lb_ld32(wa) ^ xx; wa += 4;
        s0 = (int32_t)__smlad(v & mk, p0, (uint32_t)s0);
        s0 = (int32_t)__smlad((v >> 4) & mk, p1, (uint32_t)s0);
        s0 = (int32_t)__smlad((v >> 8) & mk, p2, (uint32_t)s0);
        s0 = (int32_t)__smlad((v >> 12) & mk, p3, (uint32_t)s0);
        v = qmx__lb_ld32(wb) ^ xx; wb += 4;
        s1 = (int32_t)__smlad(v & mk, p0, (uint32_t)s1);
        s1 = (int32_t)__smlad((v >> 4) & mk, p1, (uint32_t)s1);
        s1 = (int32_t)__smlad((v >> 8) & mk, p2, (uint32_t)s1);
        s1 = (int32_t)__smlad((v >> 12) & mk, p3, (uint32_t)s1);
    }
    for (q = nw * 4; q < nb; q++) { /* tail bytes: elements 2q, 2q+1 */
        size_t e = 2 * q, g = (e >> 3) * 8, r = e & 7u;
        int32_t xe = a16[g + 2 * (r & 3u) + (r >> 2)];
        int32_t xo = a16[g + 2 * ((r + 1) & 3u) + ((r + 1) >> 2)];
        s0 += xe * (int32_t)((wa0[q] ^ x) & 15u) + xo * (int32_t)((wa0[q] ^ x) >> 4);
        s1 += xe * (int32_t)((wb0[q] ^ x) & 15u) + xo * (int32_t)((wb0[q] ^ x) >> 4);
    }
    *ra = s0;
    *rb = s1;
}
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    size_t i;
    (void)pf;
    for (i = 0; i < na; i++) {
        qmx__lb_dsp_pair(a[i], w[0], w[1], nb, x, &d[i][0], &d[i][1]);
        qmx__lb_dsp_pair(a[i], w[2], w[3], nb, x, &d[i][2], &d[i][3]);
    }
}

#else
#define QMX__LB_MR 2
static void qmx__lb_tile(const uint8_t *const *a, size_t na, const uint8_t *const *w, size_t nb,
                         uint8_t x, int32_t d[4][4], size_t pf) {
    size_t i, j, q;
    (void)pf;
    for (i = 0; i < na; i++) {
        const int8_t *ap = (const int8_t *)(const void *)a[i];
        for (j = 0; j < 4; j++) {
            const uint8_t *wp = w[j];
            int32_t s = 0;
            for (q = 0; q < nb; q++) {
                uint32_t v = (uint32_t)(wp[q] ^ x);
                size_t o = (q >> 6) * 128 + (q & 63);
                s += (int32_t)(v & 15u) * ap[o] + (int32_t)(v >> 4) * ap[o + 64];
            }
            d[i][j] = s;
        }
    }
}
#endif

#ifndef QMX__LB_AZP_IN_A
#define QMX__LB_AZP_IN_A 0
#endif


/* Lays out elements [k0, k0 + kl) of row m of A for qmx__lb_tile; returns sum of the values
 * laid out (A - a_zp on the DSP path, raw A otherwise). src: int8 row or packed int4 stream. */
static int32_t qmx__lb_prep_block(uint8_t *dst, const void *A, int a_i4, size_t row_start,
                                  size_t k0, size_t kl, int32_t a_zp) {
    size_t k, pad = qmx__lb_r128(kl);
    int32_t s = 0;
#if QMX__LB_AZP_IN_A
    int16_t *d16 = (int16_t *)(void *)dst;
    for (k = 0; k < pad; k++) d16[k] = 0;
    for (k = 0; k < kl; k++) {
        int32_t v = a_i4 ? qmx__lb_nib((const uint8_t *)A, row_start + k0 + k, 1)
                         : (int32_t)((const int8_t *)A)[row_start + k0 + k];
        size_t g = (k >> 3) * 8, r = k & 7u;
        v -= a_zp;
        d16[g + 2 * (r & 3u) + (r >> 2)] = (int16_t)v;
        s += v;
    }
#else
    int8_t *d8 = (int8_t *)(void *)dst;
    (void)a_zp;
    for (k = 0; k < pad; k++) d8[k] = 0;
    for (k = 0; k < kl; k++) {
        int32_t v = a_i4 ? qmx__lb_nib((const uint8_t *)A, row_start + k0 + k, 1)
                         : (int32_t)((const int8_t *)A)[row_start + k0 + k];
        d8[(k >> 7) * 128 + ((k & 127u) >> 1) + (k & 1u) * 64] = (int8_t)v;
        s += v;
    }
#endif
    return s;
}

/* sum of u = nibble ^ x over elements [0, kl) of a byte-aligned stream (SWAR, 4 bytes) */
static int32_t qmx__lb_usum(const uint8_t *w, size_t kl, uint8_t x) {
    size_t nb = kl / 2, q = 0;
    uint32_t s = 0, xx = (uint32_t)x * 0x01010101u;
#if defined(QMX__LB_USUM_BYTES)
    s = qmx__lb_usum_bytes(w, nb, x);
    q = nb;
#endif
    for (; q + 4 <= nb; q += 4) {
        uint32_t v = qmx__lb_ld32(w + q) ^ xx;
        s += (((v & 0x0F0F0F0Fu) + ((v >> 4) & 0x0F0F0F0Fu)) * 0x01010101u) >> 24;
    }
    for (; q < nb; q++) s += (uint32_t)((w[q] ^ x) & 15u) + (uint32_t)((w[q] ^ x) >> 4);
    if (kl & 1u) s += (uint32_t)((w[nb] ^ x) & 15u);
    return (int32_t)s;
}

/* ---- the int4 driver: validates, then calls the stage for every 4x4 (or smaller) tile ---- */
typedef struct qmx__lb_args {
    size_t M, N, K, lda, ldw, bs, nblk;
    const void *A;
    const uint8_t *W;
    int a_i4, w_u4;
    int32_t a_zp, w_zp;
    const uint8_t *w_zps;
} qmx__lb_args;

/* stage(ctx, m, nm, n, nn, blk, P): P[i][j] = exact partial of block blk for (m+i, n+j) */
typedef void (*qmx__lb_stage_fn)(void *ctx, size_t m, size_t nm, size_t n, size_t nn,
                                 size_t blk, int32_t P[4][4]);

static qmx_status qmx__lb_ws(size_t M, size_t K, size_t bs, size_t *bytes) {
    size_t nblk, mb, last, R, t, total;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I4_MAX_K) return QMX_ERR_OVERFLOW;
    if (bs == 0 || bs > K) bs = K;
    nblk = K / bs + (K % bs != 0);
    last = K - (nblk - 1) * bs;
    mb = M < QMX__LB_MB ? M : QMX__LB_MB;
    /* K <= 561433: every term below is < 2^40 only on 64-bit size_t; check on 32-bit */
    R = 2 * qmx__lb_r128(last);
    t = 2 * qmx__lb_r128(bs);
    if (nblk - 1 != 0 && t > (SIZE_MAX - R) / (nblk - 1)) return QMX_ERR_OVERFLOW;
    R += (nblk - 1) * t;
    if (R > (SIZE_MAX - 64) / mb) return QMX_ERR_OVERFLOW;
    total = 64 + mb * R;
    if (nblk > (SIZE_MAX / 4 - 64) / mb) return QMX_ERR_OVERFLOW;
    /* block dots: a 4x4 tile's per block, or (blocks of 32 r) 16 columns' per 32 elements */
    t = bs % 32 == 0 && nblk > 1 ? (K + 31) / 32 : nblk;
    t = qmx__k_r64(4 * mb * nblk) + qmx__k_r64(64 * ((t + 3) / 4 * 4));
    if (t > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
    *bytes = total + t;
    return QMX_OK;
}

QMX_API qmx_status qmx_matmul_i4_workspace_size(size_t M, size_t N, size_t K,
                                                const qmx_matmul_i4_params *params,
                                                size_t *bytes) {
    if (!bytes) return QMX_ERR_NULL;
    if (N == 0) return QMX_ERR_SIZE;
    return qmx__lb_ws(M, K, params ? params->block_size : 0, bytes);
}

/* Checks the operands common to the int4 entry points (not the output, not the stage). */
static qmx_status qmx__lb_check(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                const uint8_t *W, size_t ldw, const qmx_matmul_i4_params *p,
                                qmx__lb_args *g) {
    qmx_dtype ad = p->a_dtype == QMX_DTYPE_INVALID ? QMX_INT8 : p->a_dtype;
    qmx_dtype wd = p->w_dtype == QMX_DTYPE_INVALID ? QMX_INT4 : p->w_dtype;
    size_t ext, i;
    if (!A || !W) return QMX_ERR_NULL;
    if (ad != QMX_INT8 && ad != QMX_INT4) return QMX_ERR_DTYPE;
    if (wd != QMX_INT4 && wd != QMX_UINT4) return QMX_ERR_DTYPE;
    if (ad == QMX_INT8 ? (p->a_zp < -128 || p->a_zp > 127) : (p->a_zp < -8 || p->a_zp > 7))
        return QMX_ERR_ARG;
    if (wd == QMX_INT4 ? (p->w_zp != 0 || p->w_zps != NULL) : (p->w_zp < 0 || p->w_zp > 15))
        return QMX_ERR_ARG;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_MATMUL_I4_MAX_K) return QMX_ERR_OVERFLOW;
    if (lda < K || ldw < K) return QMX_ERR_SHAPE;
    ext = qmx__k_extent(M, K, lda);
    if (!ext || (ad == QMX_INT4 && ext > SIZE_MAX - 1)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(N, K, ldw);
    if (!ext || ext > SIZE_MAX - 1) return QMX_ERR_OVERFLOW;
    g->bs = (p->block_size == 0 || p->block_size > K) ? K : p->block_size;
    g->nblk = K / g->bs + (K % g->bs != 0);
    if (p->w_zps) {
        if (N > SIZE_MAX / g->nblk) return QMX_ERR_OVERFLOW;
        if (p->w_zps_len < N * g->nblk) return QMX_ERR_BUFFER_TOO_SMALL;
        {   /* every zero point in [0, 15]: an OR of the high nibbles, no early exit (vectorises) */
            unsigned hi = 0;
            for (i = 0; i < N * g->nblk; i++) hi |= p->w_zps[i];
            if (hi > 15) return QMX_ERR_ARG;
        }
    }
    g->M = M; g->N = N; g->K = K; g->lda = lda; g->ldw = ldw; g->A = A; g->W = W;
    g->a_i4 = ad == QMX_INT4; g->w_u4 = wd == QMX_UINT4;
    g->a_zp = p->a_zp; g->w_zp = p->w_zp; g->w_zps = p->w_zps;
    return QMX_OK;
}

static void qmx__lb_run(const qmx__lb_args *g, void *workspace, qmx__lb_stage_fn stage,
                        void *ctx) {
    const size_t M = g->M, N = g->N, K = g->K, bs = g->bs, nblk = g->nblk;
    const uint8_t x = g->w_u4 ? 0u : 0x88u;
    const uint32_t azp = (uint32_t)g->a_zp;
    const int fast = (g->ldw % 2 == 0) && (bs % 2 == 0 || nblk == 1);
    const int a_i4 = g->a_i4;
    int32_t P[4][4], D[4][4];
    size_t m0, m, n, i, j, b;
    if (!fast) { /* generic: every nibble by index */
        for (m = 0; m < M; m++)
            for (n = 0; n < N; n += 4) {
                size_t nn = N - n < 4 ? N - n : 4;
                for (b = 0; b < nblk; b++) {
                    size_t k0 = b * bs, kl = K - k0 < bs ? K - k0 : bs, k;
                    for (j = 0; j < nn; j++) {
                        int32_t z = g->w_u4 ? (g->w_zps ? (int32_t)g->w_zps[(n + j) * nblk + b]
                                                        : g->w_zp)
                                            : g->w_zp; /* int4: 0, or the FC's w_zp */
                        uint32_t s = 0;
                        for (k = k0; k < k0 + kl; k++) {
                            int32_t av = a_i4 ? qmx__lb_nib((const uint8_t *)g->A,
                                                            m * g->lda + k, 1)
                                              : ((const int8_t *)g->A)[m * g->lda + k];
                            int32_t wv = qmx__lb_nib(g->W, (n + j) * g->ldw + k, !g->w_u4);
                            s += (uint32_t)((av - g->a_zp) * (wv - z));
                        }
                        P[0][j] = qmx__k_u2i(s);
                    }
                    stage(ctx, m, 1, n, nn, b, P);
                }
            }
        return;
    }
    {
        uint8_t *ws = (uint8_t *)workspace;
        size_t off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u);
        const size_t blkb = 2 * qmx__lb_r128(bs);
        const size_t last = K - (nblk - 1) * bs;
        const size_t rowb = (nblk - 1) * blkb + 2 * qmx__lb_r128(last);
        const size_t mbmax = M < QMX__LB_MB ? M : QMX__LB_MB;
        uint8_t *panel = ws + off;
        int32_t *sa = (int32_t *)(void *)(ws + off + mbmax * rowb);
        for (m0 = 0; m0 < M; m0 += QMX__LB_MB) {
            size_t mb = M - m0 < QMX__LB_MB ? M - m0 : QMX__LB_MB;
            for (i = 0; i < mb; i++)
                for (b = 0; b < nblk; b++) {
                    size_t k0 = b * bs, kl = K - k0 < bs ? K - k0 : bs;
                    sa[i * nblk + b] = qmx__lb_prep_block(panel + i * rowb + b * blkb, g->A,
                                                          a_i4, (m0 + i) * g->lda, k0, kl,
                                                          g->a_zp);
                }
            for (n = 0; n < N; n += 4) {
                size_t nn = N - n < 4 ? N - n : 4;
                for (b = 0; b < nblk; b++) {
                    size_t k0 = b * bs, kl = K - k0 < bs ? K - k0 : bs, nbytes = (kl + 1) / 2;
                    const uint8_t *wr[4];
                    uint32_t su[4], z[4];
                    for (j = 0; j < 4; j++) {
                        size_t jj = j < nn ? j : 0;
                        wr[j] = g->W + ((n + jj) * g->ldw + k0) / 2;
                        z[j] = g->w_u4 ? (uint32_t)(g->w_zps ? g->w_zps[(n + jj) * nblk + b]
                                                             : (uint8_t)g->w_zp)
                                       : 8u + (uint32_t)g->w_zp; /* int4: u = W + 8 */
                        su[j] = (!QMX__LB_AZP_IN_A && azp != 0)
                                    ? (uint32_t)qmx__lb_usum(wr[j], kl, x) : 0u;
                    }
                    for (m = 0; m < mb;) {
                        size_t na = mb - m >= QMX__LB_MR ? QMX__LB_MR : 1;
                        const uint8_t *ar[4];
                        for (i = 0; i < na; i++) ar[i] = panel + (m + i) * rowb + b * blkb;
                        /* GEMV: the kernel prefetches rows n+8..n+11 (4*ldw bytes on) */
                        qmx__lb_tile(ar, na, wr, nbytes, x, D,
                                     (M == 1 && n + 12 <= N) ? 4 * g->ldw : 0);
                        for (i = 0; i < na; i++) {
                            uint32_t s_a = (uint32_t)sa[(m + i) * nblk + b];
                            for (j = 0; j < nn; j++) {
                                /* P = D - azp*Su - z*Sa + azp*z*kl (DSP: A - a_zp already) */
                                uint32_t v = (uint32_t)D[i][j] - z[j] * s_a;
                                if (!QMX__LB_AZP_IN_A)
                                    v = v - azp * su[j] + azp * z[j] * (uint32_t)kl;
                                P[i][j] = qmx__k_u2i(v);
                            }
                        }
                        stage(ctx, m0 + m, na, n, nn, b, P);
                        m += na;
                    }
                }
            }
        }
    }
}

/* ---- stages ---- */
typedef struct qmx__lb_i32_ctx { int32_t *C; size_t ldc; } qmx__lb_i32_ctx;
static void qmx__lb_i32_stage(void *vctx, size_t m, size_t nm, size_t n, size_t nn, size_t blk,
                              int32_t P[4][4]) {
    const qmx__lb_i32_ctx *x = (const qmx__lb_i32_ctx *)vctx;
    size_t i, j;
    for (i = 0; i < nm; i++) {
        int32_t *c = x->C + (m + i) * x->ldc + n;
        for (j = 0; j < nn; j++)
            c[j] = blk == 0 ? P[i][j] : qmx__k_u2i((uint32_t)c[j] + (uint32_t)P[i][j]);
    }
}

typedef struct qmx__lb_f32_ctx {
    float *C;
    size_t ldc, nblk;
    const qmx_matmul_i4_params *p;
} qmx__lb_f32_ctx;
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void qmx__lb_f32_stage(void *vctx, size_t m, size_t nm, size_t n, size_t nn, size_t blk,
                              int32_t P[4][4]) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const qmx__lb_f32_ctx *x = (const qmx__lb_f32_ctx *)vctx;
    const qmx_matmul_i4_params *p = x->p;
    size_t i, j;
    for (i = 0; i < nm; i++) {
        float *c = x->C + (m + i) * x->ldc + n;
        float sa = p->a_scales[(p->a_per_row ? (m + i) * x->nblk : 0) + blk];
        for (j = 0; j < nn; j++) {
            float sb = p->w_scales[(p->w_per_col ? (n + j) * x->nblk : 0) + blk];
            float q = (float)P[i][j], sum;
            q = q * sa;
            q = q * sb;
#if defined(__clang__)
            __asm__("" : "+m"(q));
#endif
            sum = blk == 0 ? 0.0f : c[j];
            sum = sum + q;
            c[j] = sum;
        }
    }
}

#if defined(QMX__LB_VNNI)
/* Blocks of 32 (ggml Q4_0 class) in one pass over K: a 128-element chunk holds 4 blocks, and
 * 128-bit lane L of a vpdpbusd accumulator sums exactly elements 32L..32L+31 of the chunk
 * (int32 lane l holds even bytes 4l..4l+3 and odd bytes 4l..4l+3, elements 8l..8l+7), so two
 * in-lane shuffles give the 4 block dots. P[(i*4 + j)*ps + b] = raw dot of block b. */
static void qmx__lb_tile_b32(const uint8_t *const *a, size_t na, const uint8_t *const *w,
                             size_t nb, uint8_t x, int32_t *P, size_t ps) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), xv = _mm512_set1_epi8((char)x);
    const __m512i z = _mm512_setzero_si512();
    const __mmask16 f = (__mmask16)0xFFFF;
    size_t c, i, j;
    for (c = 0; c * 64 < nb; c++) {
        size_t rem = nb - c * 64;
        __mmask64 msk = rem >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << rem) - 1u);
        __m512i lo[4], hi[4];
        for (j = 0; j < 4; j++) {
            __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(msk, w[j] + c * 64), xv);
            lo[j] = _mm512_and_si512(v, m4);
            hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        }
        for (i = 0; i < na; i++) {
            __m512i ae = _mm512_loadu_si512((const void *)(a[i] + c * 128));
            __m512i ao = _mm512_loadu_si512((const void *)(a[i] + c * 128 + 64));
            for (j = 0; j < 4; j++) {
                __m512i t = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(z, lo[j], ae), hi[j], ao);
                t = _mm512_add_epi32(t, _mm512_maskz_shuffle_epi32(f, t, (_MM_PERM_ENUM)0x4E));
                t = _mm512_add_epi32(t, _mm512_maskz_shuffle_epi32(f, t, (_MM_PERM_ENUM)0xB1));
                _mm_storeu_si128((__m128i *)(void *)(P + (i * 4 + j) * ps + c * 4),
                                 _mm512_castsi512_si128(
                                     _mm512_maskz_compress_epi32((__mmask16)0x1111, t)));
            }
        }
    }
}
#define QMX__LB_HAVE_B32 1

/* a_zp = 0 (the weight zero points go to the float stage): the block dots of 16 weight rows
 * (columns) for one laid-out row a of A over all of K, stored transposed: Pt[b * 16 + j] =
 * raw dot of block b, column j (rows b past the last block are written too, 0 from A's zero
 * padding). The 4 block dots of 4 columns come out of one transpose-add (unpacks), and 4 of
 * those are regrouped by 128-bit lanes into 16 columns per block: full 64-byte stores, read
 * back whole. */
static void qmx__lb_b32_strip16(const uint8_t *a, const uint8_t *const *w, size_t nb, uint8_t x,
                                int32_t *Pt, const uint8_t *const *wnext) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), xv = _mm512_set1_epi8((char)x);
    const __m512i xh = _mm512_set1_epi8((char)(x >> 4)), z = _mm512_setzero_si512();
    size_t c;
    int g;
    for (c = 0; c * 64 < nb; c++) {
        size_t rem = nb - c * 64, o = c * 64;
        __mmask64 msk = rem >= 64 ? ~(__mmask64)0 : (__mmask64)((((uint64_t)1) << rem) - 1u);
        const __m512i ae = _mm512_loadu_si512((const void *)(a + c * 128));
        const __m512i ao = _mm512_loadu_si512((const void *)(a + c * 128 + 64));
        __m512i R0, R1, R2, R3, s0, s1, s2, s3;
        if (wnext)   /* the next strip's rows: 16 streams the hardware prefetcher starts late */
            for (g = 0; g < 16; g += 4) {
                _mm_prefetch((const char *)(wnext[g] + o), _MM_HINT_T0);
                _mm_prefetch((const char *)(wnext[g + 1] + o), _MM_HINT_T0);
                _mm_prefetch((const char *)(wnext[g + 2] + o), _MM_HINT_T0);
                _mm_prefetch((const char *)(wnext[g + 3] + o), _MM_HINT_T0);
            }
/* t = block dots of row j of the chunk: (low nibbles ^ x) x even elements + (high ^ x) x odd */
#define QMX__LB_S16_DOT(t, j)                                                                      \
        do {                                                                                       \
            __m512i v_ = _mm512_maskz_loadu_epi8(msk, w[j] + o);                                   \
            t = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(z, _mm512_ternarylogic_epi32(v_, xv, m4, 0x28), ae), \
                                    _mm512_ternarylogic_epi32(_mm512_srli_epi16(v_, 4), xh, m4, 0x28), ao); \
        } while (0)
/* R = per 128-bit lane L (block 4c + L): rows g0..g0+3 summed over their 4 partials */
#define QMX__LB_S16_GROUP(R, g0)                                                                   \
        do {                                                                                       \
            __m512i t0, t1, t2, t3, u0, u1;                                                        \
            QMX__LB_S16_DOT(t0, (g0)); QMX__LB_S16_DOT(t1, (g0) + 1);                              \
            QMX__LB_S16_DOT(t2, (g0) + 2); QMX__LB_S16_DOT(t3, (g0) + 3);                          \
            u0 = _mm512_add_epi32(_mm512_unpacklo_epi32(t0, t1), _mm512_unpackhi_epi32(t0, t1));   \
            u1 = _mm512_add_epi32(_mm512_unpacklo_epi32(t2, t3), _mm512_unpackhi_epi32(t2, t3));   \
            R = _mm512_add_epi32(_mm512_unpacklo_epi64(u0, u1), _mm512_unpackhi_epi64(u0, u1));    \
        } while (0)
        QMX__LB_S16_GROUP(R0, 0);
        QMX__LB_S16_GROUP(R1, 4);
        QMX__LB_S16_GROUP(R2, 8);
        QMX__LB_S16_GROUP(R3, 12);
#undef QMX__LB_S16_GROUP
#undef QMX__LB_S16_DOT
        /* qmx__k_lanes4x4 written out (through its array it measured slower here) */
        s0 = _mm512_shuffle_i32x4(R0, R1, 0x44);
        s1 = _mm512_shuffle_i32x4(R0, R1, 0xEE);
        s2 = _mm512_shuffle_i32x4(R2, R3, 0x44);
        s3 = _mm512_shuffle_i32x4(R2, R3, 0xEE);
        _mm512_storeu_si512((void *)(Pt + (4 * c + 0) * 16), _mm512_shuffle_i32x4(s0, s2, 0x88));
        _mm512_storeu_si512((void *)(Pt + (4 * c + 1) * 16), _mm512_shuffle_i32x4(s0, s2, 0xDD));
        _mm512_storeu_si512((void *)(Pt + (4 * c + 2) * 16), _mm512_shuffle_i32x4(s1, s3, 0x88));
        _mm512_storeu_si512((void *)(Pt + (4 * c + 3) * 16), _mm512_shuffle_i32x4(s1, s3, 0xDD));
    }
}

/* 16 x 16 transpose of 32-bit elements: out[k] element j = r[j] element k (r is clobbered). */
QMX__VINLINE void qmx__lb_tr16(__m512 *r, __m512 *out) {
    __m512 t[16];
    int k, e;
    for (k = 0; k < 16; k += 2) {
        t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
    }
    for (k = 0; k < 16; k += 4) {   /* r[k + e] lane l: rows k..k+3, element 4l + e */
        r[k] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[k]), _mm512_castps_pd(t[k + 2])));
        r[k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[k]), _mm512_castps_pd(t[k + 2])));
        r[k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[k + 1]), _mm512_castps_pd(t[k + 3])));
        r[k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[k + 1]), _mm512_castps_pd(t[k + 3])));
    }
    for (e = 0; e < 4; e++) {   /* 128-bit lanes: out[4l + e] = element 4l + e of the 16 rows */
        __m512 v0 = _mm512_shuffle_f32x4(r[e], r[4 + e], 0x44);
        __m512 v1 = _mm512_shuffle_f32x4(r[e], r[4 + e], 0xEE);
        __m512 v2 = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0x44);
        __m512 v3 = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0xEE);
        out[e] = _mm512_shuffle_f32x4(v0, v2, 0x88);
        out[4 + e] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
        out[8 + e] = _mm512_shuffle_f32x4(v1, v3, 0x88);
        out[12 + e] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
    }
}

/* The float stage of 16 columns from Pt, in the documented order (per column: sum = 0, then
 * for b increasing q = (float)P_b; q = q * sa_b; q = q * sb_b; sum = sum + q), 16 columns
 * a lane each: the same operations, so the same bits as qmx__lb_blocks_f32. Block b of
 * 32 r elements is Pt rows b r .. b r + r - 1 (below nsub, the rows written); P_b is their
 * raw dot minus z * (block sum of A) (uint32 wrap-around, as the scalar path), z the weight
 * zero point, or per column and block from zps ([column][nblk] bytes) when not NULL. sb: the
 * columns' scales at stride sb_step (0: one scale per block for every column); lanes past nn
 * are not stored. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void qmx__lb_b32_f32_16(const int32_t *Pt, size_t nblk, size_t r, size_t nsub,
                               const int32_t *asum, uint32_t z, const uint8_t *zps,
                               const float *sa, const float *sb, size_t sb_step, size_t nn,
                               float *C, const float *sbnext) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const __mmask16 km = nn >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nn) - 1u);
    __m512 sum = _mm512_setzero_ps(), T[16], Z[16];
    size_t b0, k;
    for (b0 = 0; b0 < nblk; b0 += 16) {
        size_t nk = nblk - b0 < 16 ? nblk - b0 : 16;
        const __mmask16 kb = (__mmask16)(nk >= 16 ? 0xFFFFu : (1u << nk) - 1u);
        __m512 rows[16];
        if (sb_step) {   /* 16 columns x 16 blocks of scales (columns past nn repeat column 0) */
            for (k = 0; k < 16; k++) {
                rows[k] = _mm512_maskz_loadu_ps(kb, sb + (k < nn ? k : 0) * sb_step + b0);
                if (sbnext) _mm_prefetch((const char *)(sbnext + k * sb_step + b0), _MM_HINT_T0);
            }
            qmx__lb_tr16(rows, T);
        }
        if (zps) {   /* per-block zero points: bytes [column][nblk], widened and transposed */
            for (k = 0; k < 16; k++)
                rows[k] = _mm512_castsi512_ps(_mm512_cvtepu8_epi32(
                    _mm_maskz_loadu_epi8(kb, zps + (k < nn ? k : 0) * nblk + b0)));
            qmx__lb_tr16(rows, Z);
        }
        for (k = 0; k < nk; k++) {
            size_t b = b0 + k, u = b * r, ue = u + r < nsub ? u + r : nsub;
            __m512i p = _mm512_loadu_si512((const void *)(Pt + u * 16));
            for (u++; u < ue; u++)   /* blocks of 32 r: the exact sum of their r dots */
                p = _mm512_add_epi32(p, _mm512_loadu_si512((const void *)(Pt + u * 16)));
            p = _mm512_sub_epi32(p, zps ? _mm512_mullo_epi32(_mm512_castps_si512(Z[k]),
                                                             _mm512_set1_epi32(asum[b]))
                                        : _mm512_set1_epi32((int)(z * (uint32_t)asum[b])));
            {
                __m512 q = _mm512_mul_ps(_mm512_cvtepi32_ps(p), _mm512_set1_ps(sa[b]));
                q = _mm512_mul_ps(q, sb_step ? T[k] : _mm512_set1_ps(sb[b]));
#if defined(__clang__)
                __asm__("" : "+v"(q));
#endif
                sum = _mm512_add_ps(sum, q);
            }
        }
    }
    _mm512_mask_storeu_ps(C, km, sum);
}
#define QMX__LB_HAVE_STRIP16 1
#endif

#if defined(QMX__LB_HAVE_B32)
/* sum of A over elements [k0, k0 + kl) of the row starting at element row_start */
static int32_t qmx__lb_asum(const void *A, int a_i4, size_t row_start, size_t k0, size_t kl) {
    int32_t s = 0;
    size_t k;
    for (k = k0; k < k0 + kl; k++)
        s += a_i4 ? qmx__lb_nib((const uint8_t *)A, row_start + k, 1)
                  : (int32_t)((const int8_t *)A)[row_start + k];
    return s;
}

/* C[m][n] for one (m, n): the documented float order over the nblk block partials */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static float qmx__lb_blocks_f32(const int32_t *P, size_t nblk, const float *sa,
                                const float *sb, size_t sb_step) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    float sum = 0.0f, q;
    size_t b;
    for (b = 0; b < nblk; b++) {
        q = (float)P[b];
        q = q * sa[b];
        q = q * sb[b * sb_step];
#if defined(__clang__)
        __asm__("" : "+m"(q));
#endif
        sum = sum + q;
    }
    return sum;
}

/* qmx_matmul_i4_f32 with blocks of 32 on the fast layout: A laid out once over K (chunks of
 * 128 hold 4 blocks), block dots for a 4x4 tile over all of K, then the float order per
 * output. Same integers, same float operations as the per-block path. */
static void qmx__lb_run_b32(const qmx__lb_args *g, void *workspace, const qmx__lb_f32_ctx *x) {
    const size_t M = g->M, N = g->N, K = g->K, nblk = g->nblk, ps = (nblk + 3) / 4 * 4;
    const size_t bs = g->bs, nsub = (K + 31) / 32;   /* bs: 32, or 32 r on the strip path only */
    const uint8_t xr = g->w_u4 ? 0u : 0x88u;
    const uint32_t azp = (uint32_t)g->a_zp;
    const qmx_matmul_i4_params *p = x->p;
    uint8_t *ws = (uint8_t *)workspace;
    size_t off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u), R, m0, m, n, i, j, b;
    size_t mbmax = M < QMX__LB_MB ? M : QMX__LB_MB;
    uint8_t *panel;
    int32_t *sa, *P;
    R = (nblk - 1) * 2 * qmx__lb_r128(bs) + 2 * qmx__lb_r128(K - (nblk - 1) * bs); /* as WORKSPACE */
    panel = ws + off;
    sa = (int32_t *)(void *)(ws + off + mbmax * R);
    P = (int32_t *)(void *)(ws + off + mbmax * R + qmx__k_r64(4 * mbmax * nblk));
    for (m0 = 0; m0 < M; m0 += QMX__LB_MB) {
        size_t mb = M - m0 < QMX__LB_MB ? M - m0 : QMX__LB_MB;
        for (i = 0; i < mb; i++) {
            qmx__lb_prep_block(panel + i * R, g->A, g->a_i4, (m0 + i) * g->lda, 0, K, g->a_zp);
            for (b = 0; b < nblk; b++)
                sa[i * nblk + b] = qmx__lb_asum(g->A, g->a_i4, (m0 + i) * g->lda, b * bs,
                                                K - b * bs < bs ? K - b * bs : bs);
        }
#if defined(QMX__LB_HAVE_STRIP16)
        if (!azp) {
            /* a_zp = 0: strips of 16 columns (read from L1 again for each row), each
             * row's block dots transposed in P, the float stage 16 columns at a time
             * (4096^2: M = 1 37 -> 116 GOPS, M = 128 57 -> 138) */
            const uint32_t z = g->w_u4 ? (uint32_t)g->w_zp : 8u;
            for (n = 0; n < N; n += 16) {
                size_t nn = N - n < 16 ? N - n : 16;
                /* the next strip when it is whole (prefetched during the last row's pass) */
                const int nx = N - n >= 32;
                const uint8_t *wr[16], *wx[16];
                for (j = 0; j < 16; j++) {
                    wr[j] = g->W + ((n + (j < nn ? j : 0)) * g->ldw) / 2;
                    wx[j] = nx ? g->W + ((n + 16 + j) * g->ldw) / 2 : NULL;
                }
                for (i = 0; i < mb; i++) {
                    const int last = nx && i + 1 == mb;
                    qmx__lb_b32_strip16(panel + i * R, wr, (K + 1) / 2, xr, P, last ? wx : NULL);
                    qmx__lb_b32_f32_16(P, nblk, bs / 32, nsub, sa + i * nblk, z,
                                       g->w_zps ? g->w_zps + n * nblk : NULL,
                                       p->a_scales + (p->a_per_row ? (m0 + i) * nblk : 0),
                                       p->w_scales + (p->w_per_col ? n * nblk : 0),
                                       p->w_per_col ? nblk : 0, nn, x->C + (m0 + i) * x->ldc + n,
                                       last && p->w_per_col ? p->w_scales + (n + 16) * nblk : NULL);
                }
            }
            continue;
        }
#endif
        QMX_ASSERT(bs == 32);   /* the 4x4 tiles below: blocks of 32 only */
        for (n = 0; n < N; n += 4) {
            size_t nn = N - n < 4 ? N - n : 4;
            const uint8_t *wr[4];
            for (j = 0; j < 4; j++) wr[j] = g->W + ((n + (j < nn ? j : 0)) * g->ldw) / 2;
            for (m = 0; m < mb;) {
                size_t na = mb - m >= 4 ? 4 : mb - m;
                const uint8_t *ar[4];
                for (i = 0; i < na; i++) ar[i] = panel + (m + i) * R;
                qmx__lb_tile_b32(ar, na, wr, (K + 1) / 2, xr, P, ps);
                for (j = 0; j < nn; j++) /* exact partials, as the per-block path */
                    for (i = 0; i < na; i++) {
                        int32_t *q = P + (i * 4 + j) * ps;
                        const int32_t *s_a = sa + (m + i) * nblk;
                        if (!azp && !g->w_zps) { /* one zero point: a loop that vectorises */
                            const uint32_t z = g->w_u4 ? (uint32_t)g->w_zp : 8u;
                            for (b = 0; b < nblk; b++)
                                q[b] = qmx__k_u2i((uint32_t)q[b] - z * (uint32_t)s_a[b]);
                            continue;
                        }
                        for (b = 0; b < nblk; b++) {
                            size_t kl = K - b * 32 < 32 ? K - b * 32 : 32;
                            uint32_t z = g->w_u4 ? (uint32_t)(g->w_zps ? g->w_zps[(n + j) * nblk + b]
                                                                        : (uint8_t)g->w_zp) : 8u;
                            uint32_t su = azp ? (uint32_t)qmx__lb_usum(wr[j] + b * 16, kl, xr) : 0u;
                            q[b] = qmx__k_u2i((uint32_t)q[b] - z * (uint32_t)s_a[b] - azp * su +
                                               azp * z * (uint32_t)kl);
                        }
                    }
                for (i = 0; i < na; i++)
                    for (j = 0; j < nn; j++)
                        x->C[(m0 + m + i) * x->ldc + n + j] = qmx__lb_blocks_f32(
                            P + (i * 4 + j) * ps, nblk,
                            p->a_scales + (p->a_per_row ? (m0 + m + i) * nblk : 0),
                            p->w_scales + (p->w_per_col ? (n + j) * nblk : 0), 1);
                m += na;
            }
        }
    }
}
#endif

static qmx_status qmx__par_i4(size_t M, size_t N, size_t K, const void *A, size_t lda,
                              const uint8_t *W, size_t ldw, int32_t *C, size_t ldc,
                              const qmx_matmul_i4_params *params, void *workspace,
                              size_t workspace_bytes, int mode) {
    qmx_matmul_i4_params dflt;
    qmx__lb_args g;
    qmx__lb_i32_ctx x;
    size_t need, ext;
    qmx_status st;
    if (!params) {
        qmx_matmul_i4_params z = QMX_ZERO_INIT;
        dflt = z;
        params = &dflt;
    }
    if (!C || !workspace) return QMX_ERR_NULL;
    st = qmx__lb_check(M, N, K, A, lda, W, ldw, params, &g);
    if (st != QMX_OK) return st;
    if (ldc < N) return QMX_ERR_SHAPE;
    ext = qmx__k_extent(M, N, ldc);
    if (!ext || ext > SIZE_MAX / 4) return QMX_ERR_OVERFLOW;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx__lb_ws(M, K, g.bs, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.C = C; x.ldc = ldc;
    qmx__lb_run(&g, workspace, qmx__lb_i32_stage, &x);
    return QMX_OK;
}

static qmx_status qmx__par_i4f(size_t M, size_t N, size_t K, const void *A, size_t lda,
                               const uint8_t *W, size_t ldw, float *C, size_t ldc,
                               const qmx_matmul_i4_params *params, void *workspace,
                               size_t workspace_bytes, int mode) {
    qmx__lb_args g;
    qmx__lb_f32_ctx x;
    size_t need, ext, na, nw;
    qmx_status st;
    if (!C || !workspace || !params) return QMX_ERR_NULL;
    if (!params->a_scales || !params->w_scales) return QMX_ERR_NULL;
    st = qmx__lb_check(M, N, K, A, lda, W, ldw, params, &g);
    if (st != QMX_OK) return st;
    if (ldc < N) return QMX_ERR_SHAPE;
    ext = qmx__k_extent(M, N, ldc);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    na = params->a_per_row ? M : 1;
    nw = params->w_per_col ? N : 1;
    if (na > SIZE_MAX / g.nblk || nw > SIZE_MAX / g.nblk) return QMX_ERR_OVERFLOW;
    if (params->a_scales_len < na * g.nblk || params->w_scales_len < nw * g.nblk)
        return QMX_ERR_BUFFER_TOO_SMALL;
    if (!qmx__k_scales_ok(params->a_scales, na * g.nblk) ||
        !qmx__k_scales_ok(params->w_scales, nw * g.nblk))
        return QMX_ERR_ARG;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx__lb_ws(M, K, g.bs, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    x.C = C; x.ldc = ldc; x.nblk = g.nblk; x.p = params;
#if defined(QMX__LB_HAVE_B32)
    if (g.nblk > 1 && g.ldw % 2 == 0 &&
        (g.bs == 32 || (g.bs % 32 == 0 && g.a_zp == 0))) {
        qmx__lb_run_b32(&g, workspace, &x);   /* blocks of 32 r: the strips only */
        return QMX_OK;
    }
#endif
    qmx__lb_run(&g, workspace, qmx__lb_f32_stage, &x);
    return QMX_OK;
}

/* ---- fully-connected s4 ---- */
typedef qmx__k_fc_ctx qmx__lb_fc_ctx;   /* the int8 fully-connected's output stage */
static void qmx__lb_fc_stage(void *vctx, size_t m, size_t nm, size_t n, size_t nn, size_t blk,
                             int32_t P[4][4]) {
    const qmx__lb_fc_ctx *x = (const qmx__lb_fc_ctx *)vctx;
    const qmx_requant_config *c = x->rq;
    size_t i, j;
    (void)blk;
    for (i = 0; i < nm; i++)
        for (j = 0; j < nn; j++) {
            size_t ch = c->per_channel ? n + j : 0, o = (m + i) * x->ldo + n + j;
            int32_t a = P[i][j], v;
            if (c->bias) a = qmx__k_u2i((uint32_t)a + (uint32_t)c->bias[n + j]);
            if (c->mode == QMX_REQUANT_DOUBLE_ROUNDING)
                v = qmx_requantize(a, c->multipliers[ch], c->shifts[ch]);
            else if (c->mode == QMX_REQUANT_SINGLE_ROUNDING)
                v = qmx_requantize_single_rounding(a, c->multipliers[ch], c->shifts[ch]);
            else
                v = qmx_requantize_float(a, c->scales[ch]);
            /* v + ozp, clamped, without overflowing int32 */
            v = v < x->lov ? x->amin : (v > x->hiv ? x->amax : v + x->ozp);
            if (x->i16) ((int16_t *)x->out)[o] = (int16_t)v;
            else ((int8_t *)x->out)[o] = (int8_t)v;
        }
}

static qmx_status qmx__par_fc4(size_t M, size_t N, size_t K, const int8_t *A,
                               size_t lda, int32_t a_zp, const uint8_t *W,
                               size_t ldw, const qmx_requant_config *rq, void *out,
                               size_t ldo, void *workspace, size_t workspace_bytes, int mode) {
    qmx_matmul_i4_params p = QMX_ZERO_INIT;
    qmx__lb_args g;
    qmx__lb_fc_ctx x;
    size_t need;
    qmx_status st;
    if (!out || !rq || !workspace) return QMX_ERR_NULL;
    if (rq->weight_zero_point < -8 || rq->weight_zero_point > 7) return QMX_ERR_ARG;
    p.a_zp = a_zp;
    st = qmx__lb_check(M, N, K, A, lda, W, ldw, &p, &g);
    if (st != QMX_OK) return st;
    /* int4 W with zero point w_zp: W - w_zp = u - (8 + w_zp), u = nibble ^ 8 in [0, 15], so
     * the driver's z = 8 + w_zp (qmx__lb_run; qmx__lb_check leaves w_zp = 0 for int4) */
    g.w_zp = rq->weight_zero_point;
    if (ldo < N) return QMX_ERR_SHAPE;
    st = qmx__k_fc_prep(M, N, ldo, rq, out, &x);   /* the same checks as qmx_fully_connected_i8 */
    if (st != QMX_OK) return st;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx__lb_ws(M, K, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx__lb_run(&g, workspace, qmx__lb_fc_stage, &x);
    return QMX_OK;
}

/* the int4 entry points and their range calls (USING SEVERAL CORES) */
QMX_API qmx_status qmx_matmul_i4(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                 const uint8_t *W, size_t ldw, int32_t *C, size_t ldc,
                                 const qmx_matmul_i4_params *params, void *workspace,
                                 size_t workspace_bytes) {
    return qmx__par_i4(M, N, K, A, lda, W, ldw, C, ldc, params, workspace, workspace_bytes,
                       QMX__PAR_RUN);
}
QMX_API qmx_status qmx_matmul_i4_run(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                     const uint8_t *W, size_t ldw, int32_t *C, size_t ldc,
                                     const qmx_matmul_i4_params *params, size_t task_begin,
                                     size_t task_end, void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_I4, M, N, K, A, lda, W, ldw, C, ldc);
    c.p4 = params;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_i4_f32(size_t M, size_t N, size_t K, const void *A, size_t lda,
                                     const uint8_t *W, size_t ldw, float *C, size_t ldc,
                                     const qmx_matmul_i4_params *params, void *workspace,
                                     size_t workspace_bytes) {
    return qmx__par_i4f(M, N, K, A, lda, W, ldw, C, ldc, params, workspace, workspace_bytes,
                        QMX__PAR_RUN);
}
QMX_API qmx_status qmx_matmul_i4_f32_run(size_t M, size_t N, size_t K, const void *A,
                                         size_t lda, const uint8_t *W, size_t ldw, float *C,
                                         size_t ldc, const qmx_matmul_i4_params *params,
                                         size_t task_begin, size_t task_end, void *workspace,
                                         size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_I4F, M, N, K, A, lda, W, ldw, C, ldc);
    c.p4 = params;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i4(size_t M, size_t N, size_t K, const int8_t *A,
                                          size_t lda, int32_t a_zp, const uint8_t *W,
                                          size_t ldw, const qmx_requant_config *rq, void *out,
                                          size_t ldo, void *workspace, size_t workspace_bytes) {
    qmx__par_mm c;
    if (!rq || !rq->executor)
        return qmx__par_fc4(M, N, K, A, lda, a_zp, W, ldw, rq, out, ldo, workspace,
                            workspace_bytes, QMX__PAR_RUN);
    c = qmx__par_mk(QMX__PAR_FC4, M, N, K, A, lda, W, ldw, out, ldo);
    c.a_zp = a_zp; c.rq = rq;
    return qmx__par_exec(&c, rq->executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i4_run(size_t M, size_t N, size_t K, const int8_t *A,
                                              size_t lda, int32_t a_zp, const uint8_t *W,
                                              size_t ldw, const qmx_requant_config *rq,
                                              void *out, size_t ldo, size_t task_begin,
                                              size_t task_end, void *workspace,
                                              size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_FC4, M, N, K, A, lda, W, ldw, out, ldo);
    c.a_zp = a_zp; c.rq = rq;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

/* ================================ fp8 x fp8 -> float ================================ */
#define QMX__LB_FMB 16 /* rows of A per decoded panel */

QMX_API qmx_status qmx_matmul_fp8_f32_workspace_size(size_t M, size_t N, size_t K,
                                                     size_t *bytes) {
    size_t k16, mb, t, total = 64 + 2048;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > SIZE_MAX - 16) return QMX_ERR_OVERFLOW;
    k16 = qmx__k_r16(K);
    mb = M < QMX__LB_FMB ? M : QMX__LB_FMB;
    if (k16 > (SIZE_MAX / 4 - 64) / (mb + 4)) return QMX_ERR_OVERFLOW;
    t = qmx__k_r64(4 * mb * k16) + qmx__k_r64(16 * k16);
    if (t > SIZE_MAX - total) return QMX_ERR_OVERFLOW;
    *bytes = total + t;
    return QMX_OK;
}


#if defined(QMX__LB_VNNI)
/* E4M3 codes (16-bit lanes) -> binary16 bits of value * 2^-8 */
static __m256i qmx__lb_e4m3_h(__m256i c, __m256i m7f, __m256i m80) {
    return _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(c, m80), 8),
                           _mm256_slli_epi16(_mm256_and_si256(c, m7f), 7));
}
#endif
/* 1 when one of src[0..n) is a NaN/Inf code of the format (SIMD: 64/32/16 codes a step) */
static int qmx__lb_fp8_any_nonfinite(const uint8_t *src, size_t n, int e5) {
    const uint8_t mk = e5 ? 0x7Cu : 0x7Fu;
    size_t k = 0;
#if defined(QMX__LB_VNNI)
    const __m512i m = _mm512_set1_epi8((char)mk);
    for (; k + 64 <= n; k += 64)
        if (_mm512_cmpeq_epi8_mask(_mm512_and_si512(_mm512_loadu_si512((const void *)(src + k)), m), m))
            return 1;
#elif defined(QMX__LB_AVX2)
    const __m256i m = _mm256_set1_epi8((char)mk);
    for (; k + 32 <= n; k += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src + k));
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, m), m))) return 1;
    }
#elif defined(QMX__LB_NEONDOT) || defined(QMX__LB_NEON)
    const uint8x16_t m = vdupq_n_u8(mk);
    for (; k + 16 <= n; k += 16)
        if (vmaxvq_u8(vceqq_u8(vandq_u8(vld1q_u8(src + k), m), m))) return 1;
#endif
    for (; k < n; k++)
        if ((src[k] & mk) == mk) return 1;
    return 0;
}

/* dst[k] = value of src[k] for k < K, +0 up to r16(K) (tab: the 256 decoded values). The SIMD
 * paths go through IEEE half precision, exactly: an E5M2 code is the top byte of a binary16;
 * an E4M3 code shifted into a binary16's exponent and mantissa is its value times 2^-8
 * (subnormals included), so the float is scaled back by 256, exactly. */
static void qmx__lb_fp8_decode(float *dst, const uint8_t *src, size_t K, const float *tab,
                               int e5) {
    size_t k = 0, k16 = qmx__k_r16(K);
#if defined(QMX__LB_VNNI)
    const __m256i m7f = _mm256_set1_epi16(0x7F), m80 = _mm256_set1_epi16(0x80);
    const __m512 s256 = _mm512_set1_ps(256.0f);
    for (; k + 16 <= K; k += 16) {
        __m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(src + k)));
        if (e5) {
            _mm512_storeu_ps(dst + k, _mm512_cvtph_ps(_mm256_slli_epi16(c, 8)));
        } else {
            _mm512_storeu_ps(dst + k, _mm512_mul_ps(_mm512_cvtph_ps(qmx__lb_e4m3_h(c, m7f, m80)), s256));
        }
    }
#elif defined(QMX__LB_AVX2) && defined(__F16C__)
    const __m128i m7f = _mm_set1_epi16(0x7F), m80 = _mm_set1_epi16(0x80);
    const __m256 s256 = _mm256_set1_ps(256.0f);
    for (; k + 8 <= K; k += 8) {
        __m128i c = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(src + k)));
        if (e5) {
            _mm256_storeu_ps(dst + k, _mm256_cvtph_ps(_mm_slli_epi16(c, 8)));
        } else {
            __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(c, m80), 8),
                                     _mm_slli_epi16(_mm_and_si128(c, m7f), 7));
            _mm256_storeu_ps(dst + k, _mm256_mul_ps(_mm256_cvtph_ps(h), s256));
        }
    }
#elif (defined(QMX__LB_NEONDOT) || defined(QMX__LB_NEON)) && defined(__ARM_FP16_FORMAT_IEEE)
    const uint16x8_t m7f = vdupq_n_u16(0x7F), m80 = vdupq_n_u16(0x80);
    for (; k + 8 <= K; k += 8) {
        uint16x8_t c = vmovl_u8(vld1_u8(src + k)), h;
        float32x4_t lo, hi;
        if (e5) h = vshlq_n_u16(c, 8);
        else h = vorrq_u16(vshlq_n_u16(vandq_u16(c, m80), 8), vshlq_n_u16(vandq_u16(c, m7f), 7));
        lo = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(h)));
        hi = vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(h)));
        if (!e5) { lo = vmulq_n_f32(lo, 256.0f); hi = vmulq_n_f32(hi, 256.0f); }
        vst1q_f32(dst + k, lo);
        vst1q_f32(dst + k + 4, hi);
    }
#endif
    (void)e5;
    for (; k < K; k++) dst[k] = tab[src[k]];
    for (; k < k16; k++) dst[k] = 0.0f;
}

/* s[j] = the documented 16-lane sum of a[k]*b_j[k] over k < k16 (padding is +0 and adds
 * nothing: no lane sum is ever -0, as +0 + -0 = +0 and exact cancellation gives +0). */
#if defined(QMX__LB_VNNI)
static float qmx__lb_fold16(__m512 v) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));              /* l + (l + 2) */
    q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 0x55));       /* l0 + l1 */
    return _mm_cvtss_f32(q);
}
#define QMX__LB_FMR 4
#define QMX__LB_FP8_GEMV 1
/* M = 1: the 4 rows of B are decoded in registers as they stream (no decoded copy); the
 * same 16 lanes (lane = k % 16, masked tail codes decode to +0) and the same fold. */
static void qmx__lb_fp8_gemv(const float *a, const uint8_t *const *b, size_t K, int e5,
                             float s[4]) {
    const __m256i m7f = _mm256_set1_epi16(0x7F), m80 = _mm256_set1_epi16(0x80);
    const __m512 sc = _mm512_set1_ps(e5 ? 1.0f : 256.0f);
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    size_t k;
#define QMX__LB_DEC16(p, m)                                                              \
    (e5 ? _mm512_cvtph_ps(_mm256_slli_epi16(                                             \
              _mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, p)), 8))                      \
        : _mm512_mul_ps(_mm512_cvtph_ps(qmx__lb_e4m3_h(                                  \
              _mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, p)), m7f, m80)), sc))
    for (k = 0; k < K; k += 16) {
        __mmask16 m = K - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (K - k)) - 1u);
        __m512 av = _mm512_loadu_ps(a + k); /* the decoded row is zero padded to r16(K) */
        c0 = _mm512_fmadd_ps(av, QMX__LB_DEC16(b[0] + k, m), c0);
        c1 = _mm512_fmadd_ps(av, QMX__LB_DEC16(b[1] + k, m), c1);
        c2 = _mm512_fmadd_ps(av, QMX__LB_DEC16(b[2] + k, m), c2);
        c3 = _mm512_fmadd_ps(av, QMX__LB_DEC16(b[3] + k, m), c3);
    }
#undef QMX__LB_DEC16
    s[0] = qmx__lb_fold16(c0); s[1] = qmx__lb_fold16(c1);
    s[2] = qmx__lb_fold16(c2); s[3] = qmx__lb_fold16(c3);
}
static void qmx__lb_fp8_tile(const float *const *a, size_t na, const float *const *b,
                             size_t k16, float s[4][4]) {
    size_t i, j, k;
    if (na == 4) {
        __m512 c[4][4];
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++) c[i][j] = _mm512_setzero_ps();
        for (k = 0; k < k16; k += 16) {
            __m512 bv[4];
            for (j = 0; j < 4; j++) bv[j] = _mm512_loadu_ps(b[j] + k);
            for (i = 0; i < 4; i++) {
                __m512 av = _mm512_loadu_ps(a[i] + k);
                /* the product is exact: an FMA rounds once, as the add does */
                for (j = 0; j < 4; j++) c[i][j] = _mm512_fmadd_ps(av, bv[j], c[i][j]);
            }
        }
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++) s[i][j] = qmx__lb_fold16(c[i][j]);
        return;
    }
    for (i = 0; i < na; i++) {
        __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
        for (k = 0; k < k16; k += 16) {
            __m512 av = _mm512_loadu_ps(a[i] + k);
            c0 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b[0] + k), c0);
            c1 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b[1] + k), c1);
            c2 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b[2] + k), c2);
            c3 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b[3] + k), c3);
        }
        s[i][0] = qmx__lb_fold16(c0); s[i][1] = qmx__lb_fold16(c1);
        s[i][2] = qmx__lb_fold16(c2); s[i][3] = qmx__lb_fold16(c3);
    }
}
#elif defined(QMX__LB_AVX2)
#define QMX__LB_FMR 1
/* The 16 lanes as two ymm registers (lanes 0-7, 8-15); the fold is the AVX-512 one. */
static float qmx__lb_fold16_avx2(__m256 lo, __m256 hi) {
    __m256 h = _mm256_add_ps(lo, hi);                                         /* l + (l + 8) */
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)); /* + (l + 4) */
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));                                   /* l + (l + 2) */
    q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 0x55));                            /* l0 + l1 */
    return _mm_cvtss_f32(q);
}
/* the product is exact: an FMA and a multiply-then-add give the same bits */
#if defined(__FMA__)
#  define QMX__LB_MADD8(a, b, c) _mm256_fmadd_ps(a, b, c)
#else
#  define QMX__LB_MADD8(a, b, c) _mm256_add_ps(c, _mm256_mul_ps(a, b))
#endif
static void qmx__lb_fp8_tile(const float *const *a, size_t na, const float *const *b,
                             size_t k16, float s[4][4]) {
    size_t i, j, k;
    for (i = 0; i < na; i++) {   /* 1 row x 4 columns: 8 accumulators of 16 registers */
        __m256 lo[4], hi[4];
        for (j = 0; j < 4; j++) lo[j] = hi[j] = _mm256_setzero_ps();
        for (k = 0; k < k16; k += 16) {
            __m256 al = _mm256_loadu_ps(a[i] + k), ah = _mm256_loadu_ps(a[i] + k + 8);
            for (j = 0; j < 4; j++) {
                lo[j] = QMX__LB_MADD8(al, _mm256_loadu_ps(b[j] + k), lo[j]);
                hi[j] = QMX__LB_MADD8(ah, _mm256_loadu_ps(b[j] + k + 8), hi[j]);
            }
        }
        for (j = 0; j < 4; j++) s[i][j] = qmx__lb_fold16_avx2(lo[j], hi[j]);
    }
}
#undef QMX__LB_MADD8
#elif defined(QMX__LB_NEONDOT) || defined(QMX__LB_NEON)
#define QMX__LB_FMR 1
static void qmx__lb_fp8_tile(const float *const *a, size_t na, const float *const *b,
                             size_t k16, float s[4][4]) {
    size_t i, j, k, q;
    for (i = 0; i < na; i++) {
        float32x4_t c[4][4];
        float l[16];
        for (j = 0; j < 4; j++)
            for (q = 0; q < 4; q++) c[j][q] = vdupq_n_f32(0.0f);
        for (k = 0; k < k16; k += 16)
            for (q = 0; q < 4; q++) {
                float32x4_t av = vld1q_f32(a[i] + k + 4 * q);
                for (j = 0; j < 4; j++)  /* exact product: vmul then vadd (no fused form) */
                    c[j][q] = vaddq_f32(c[j][q], vmulq_f32(av, vld1q_f32(b[j] + k + 4 * q)));
            }
        for (j = 0; j < 4; j++) {
            float32x4_t h0 = vaddq_f32(c[j][0], c[j][2]), h1 = vaddq_f32(c[j][1], c[j][3]);
            float32x4_t g = vaddq_f32(h0, h1);               /* l + (l + 8), then + (l + 4) */
            vst1q_f32(l, g);
            l[0] = l[0] + l[2]; l[1] = l[1] + l[3];
            s[i][j] = l[0] + l[1];
        }
    }
}
#else
#define QMX__LB_FMR 1
static void qmx__lb_fp8_tile(const float *const *a, size_t na, const float *const *b,
                             size_t k16, float s[4][4]) {
    size_t i, j, k, l, w;
    for (i = 0; i < na; i++)
        for (j = 0; j < 4; j++) {
            float t[16], p;
            const float *ap = a[i], *bp = b[j];
            for (l = 0; l < 16; l++) t[l] = 0.0f;
            for (k = 0; k < k16; k += 16)
                for (l = 0; l < 16; l++) {
                    p = ap[k + l] * bp[k + l];   /* exact */
                    t[l] = t[l] + p;
                }
            for (w = 8; w >= 1; w /= 2)
                for (l = 0; l < w; l++) t[l] = t[l] + t[l + w];
            s[i][j] = t[0];
        }
}
#endif

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void qmx__lb_fp8_store(float *c, float s, float sa, float sb) {
    float v = s * sa;
    v = v * sb;
    *c = v;
}

/* mode QMX__PAR_CHECK_DATA: the arguments and the non-finite scans (USING SEVERAL CORES) */
static qmx_status qmx__par_fp8(size_t M, size_t N, size_t K, const uint8_t *A,
                               size_t lda, const uint8_t *B, size_t ldb, float *C,
                               size_t ldc, const qmx_matmul_fp8_params *params,
                               void *workspace, size_t workspace_bytes, int mode) {
    qmx_dtype af, bf;
    size_t need, ext, m, n, i, j, m0, k16, mbmax, off;
    int ae5, be5;
    float *ta, *tb, *pa, *pb;
    uint8_t *ws;
    qmx_status st;
    if (!A || !B || !C || !params || !workspace) return QMX_ERR_NULL;
    if (!params->a_scales || !params->b_scales) return QMX_ERR_NULL;
    af = params->a_fmt == QMX_DTYPE_INVALID ? QMX_FP8_E4M3FN : params->a_fmt;
    bf = params->b_fmt == QMX_DTYPE_INVALID ? QMX_FP8_E4M3FN : params->b_fmt;
    if (af == QMX_FP8_E4M3FNUZ || af == QMX_FP8_E5M2FNUZ || bf == QMX_FP8_E4M3FNUZ ||
        bf == QMX_FP8_E5M2FNUZ)
        return QMX_ERR_UNSUPPORTED;
    if ((af != QMX_FP8_E4M3FN && af != QMX_FP8_E5M2) ||
        (bf != QMX_FP8_E4M3FN && bf != QMX_FP8_E5M2))
        return QMX_ERR_DTYPE;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (lda < K || ldb < K || ldc < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda) || !qmx__k_extent(N, K, ldb)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldc);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    if (params->a_scales_len < (params->a_per_row ? M : 1) ||
        params->b_scales_len < (params->b_per_col ? N : 1))
        return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < (params->a_per_row ? M : 1); i++)
        if (!qmx__k_scale_ok(params->a_scales[i])) return QMX_ERR_ARG;
    for (i = 0; i < (params->b_per_col ? N : 1); i++)
        if (!qmx__k_scale_ok(params->b_scales[i])) return QMX_ERR_ARG;
    if (mode == QMX__PAR_CHECK) return QMX_OK;
    if (mode == QMX__PAR_RUN) {
        st = qmx_matmul_fp8_f32_workspace_size(M, N, K, &need);
        if (st != QMX_OK) return st;
        if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    }
    ae5 = af == QMX_FP8_E5M2;
    be5 = bf == QMX_FP8_E5M2;
    for (m = 0; m < M; m++)
        if (qmx__lb_fp8_any_nonfinite(A + m * lda, K, ae5)) return QMX_ERR_NONFINITE;
    for (n = 0; n < N; n++)
        if (qmx__lb_fp8_any_nonfinite(B + n * ldb, K, be5)) return QMX_ERR_NONFINITE;
    if (mode != QMX__PAR_RUN) return QMX_OK;

    ws = (uint8_t *)workspace;
    off = (size_t)((64u - ((uintptr_t)ws & 63u)) & 63u);
    ta = (float *)(void *)(ws + off);
    tb = ta + 256;
    for (i = 0; i < 256; i++) {
        ta[i] = qmx_fp8_to_f32((uint8_t)i, af);
        tb[i] = qmx_fp8_to_f32((uint8_t)i, bf);
    }
    k16 = qmx__k_r16(K);
    mbmax = M < QMX__LB_FMB ? M : QMX__LB_FMB;
    pa = (float *)(void *)(ws + off + 2048);
    pb = (float *)(void *)(ws + off + 2048 + qmx__k_r64(4 * mbmax * k16));
    for (m0 = 0; m0 < M; m0 += QMX__LB_FMB) {
        size_t mb = M - m0 < QMX__LB_FMB ? M - m0 : QMX__LB_FMB;
        for (i = 0; i < mb; i++) qmx__lb_fp8_decode(pa + i * k16, A + (m0 + i) * lda, K, ta, ae5);
        for (n = 0; n < N; n += 4) {
            size_t nn = N - n < 4 ? N - n : 4;
            const float *br[4];
#if defined(QMX__LB_FP8_GEMV)
            if (mb == 1) {
                const uint8_t *bc[4];
                float s1[4];
                for (j = 0; j < 4; j++) bc[j] = B + (n + (j < nn ? j : 0)) * ldb;
                qmx__lb_fp8_gemv(pa, bc, K, be5, s1);
                for (j = 0; j < nn; j++)
                    qmx__lb_fp8_store(C + m0 * ldc + n + j, s1[j],
                                      params->a_scales[params->a_per_row ? m0 : 0],
                                      params->b_scales[params->b_per_col ? n + j : 0]);
                continue;
            }
#endif
            for (j = 0; j < 4; j++) {
                if (j < nn) qmx__lb_fp8_decode(pb + j * k16, B + (n + j) * ldb, K, tb, be5);
                br[j] = pb + (j < nn ? j : 0) * k16;
            }
            for (m = 0; m < mb;) {
                size_t na = mb - m >= QMX__LB_FMR ? QMX__LB_FMR : 1;
                const float *ar[4];
                float s[4][4];
                for (i = 0; i < na; i++) ar[i] = pa + (m + i) * k16;
                qmx__lb_fp8_tile(ar, na, br, k16, s);
                for (i = 0; i < na; i++) {
                    float sa = params->a_scales[params->a_per_row ? m0 + m + i : 0];
                    for (j = 0; j < nn; j++)
                        qmx__lb_fp8_store(C + (m0 + m + i) * ldc + n + j, s[i][j], sa,
                                          params->b_scales[params->b_per_col ? n + j : 0]);
                }
                m += na;
            }
        }
    }
    return QMX_OK;
}

QMX_API qmx_status qmx_matmul_fp8_f32(size_t M, size_t N, size_t K, const uint8_t *A,
                                      size_t lda, const uint8_t *B, size_t ldb, float *C,
                                      size_t ldc, const qmx_matmul_fp8_params *params,
                                      void *workspace, size_t workspace_bytes) {
    return qmx__par_fp8(M, N, K, A, lda, B, ldb, C, ldc, params, workspace, workspace_bytes,
                        QMX__PAR_RUN);
}
QMX_API qmx_status qmx_matmul_fp8_f32_run(size_t M, size_t N, size_t K, const uint8_t *A,
                                          size_t lda, const uint8_t *B, size_t ldb, float *C,
                                          size_t ldc, const qmx_matmul_fp8_params *params,
                                          size_t task_begin, size_t task_end, void *workspace,
                                          size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_FP8, M, N, K, A, lda, B, ldb, C, ldc);
    c.p8 = params;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}

#ifdef __cplusplus
}
#endif
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#endif /* QMX_IMPLEMENTATION (lowbit) */

/* ============================================================================================
 * IMPLEMENTATION: EINSUM
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__EINSUM_IMPLEMENTATION_DONE)
#define QMX__EINSUM_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

#define QMX__ES_NCODE 60 /* label codes: 52 letters (A-Z = 0..25, a-z = 26..51) + 8 "..." dims */
#define QMX__ES_NLAB 16  /* label ids: every label is a dim of an input (8 + 8) */
#define QMX__ES_MAXG 16 /* labels per group: at most 8 + 8 distinct input dims */

typedef struct qmx__es_term {
    int n;                                    /* named labels */
    unsigned char lab[QMX_EINSUM_MAX_RANK];   /* label codes */
    int pos[QMX_EINSUM_MAX_RANK];             /* their characters */
    int ell, ellpos, end;                     /* "..." before lab[ell] (-1: none), its char */
} qmx__es_term;

typedef struct qmx__es_parsed {
    qmx__es_term t[3]; /* A, B, out */
    int explicit_out;
} qmx__es_parsed;

/* Everything bound to shapes: label sizes, strides per operand (elements), groups. */
typedef struct qmx__es_plan {
    size_t size[QMX__ES_NLAB];
    size_t st[2][QMX__ES_NLAB];  /* operand strides; 0 = absent or broadcast */
    size_t ost[QMX__ES_NLAB];    /* output strides */
    unsigned char in[2][QMX__ES_NLAB], inout[QMX__ES_NLAB];
    unsigned char lab[2][QMX_EINSUM_MAX_RANK]; /* per operand axis: label */
    int rank[2];
    int olab_n;
    unsigned char olab[QMX_EINSUM_MAX_RANK];
    int nb, nm, nn, nk; /* group sizes; M = free of lhs, N = free of rhs (after the swap) */
    unsigned char gb[QMX__ES_MAXG], gm[QMX__ES_MAXG], gn[QMX__ES_MAXG], gk[QMX__ES_MAXG];
    size_t Bt, M, N, K, count[2], out_count;
    int swap;                  /* lhs = operand swap, rhs = operand 1 - swap */
    int kind;                  /* QMX__ES_F32, _I32, _Q */
    int conv[2];               /* QMX__ES_CV_*: how the operand reaches the workspace */
    int fsc;                   /* float kind: scales applied on output (fp8 / fp4 / fp6 / nf4) */
    int a_direct, b_mode;      /* b_mode: 0 NK view, 1 KN view, 2 pack to NK, 3 pack to KN */
    size_t lda, ldb;
    int out_direct;
    size_t nblk, bs, nbax;     /* K-blocks of the matmul, block size, blocks per blocked label */
    int blk_label;             /* -1 none */
    size_t off_conv[2], off_pa, off_pb, off_c, off_sa, off_sb, off_mm, mm_bytes, total;
    size_t batch_off, slice;   /* the per-batch regions start at batch_off; a worker's copy */
    int workers;               /* >= 2: a task per batch index on the executor */
    int blob;                  /* the blob operand (-1 none): the kernel's tasks, not batches */
    int blob_f32;              /* 1: qmx_matmul_blockw_packed_f32, 0: _dyn_i8 */
    size_t ntask;              /* qmx_einsum_tasks: Bt, or qmx_matmul_tasks(M, N) with a blob */
    qmx_blockw_dyn_opts bwo;   /* the blob kernel's opts (dyn int8) */
} qmx__es_plan;

enum { QMX__ES_F32 = 0, QMX__ES_I32 = 1, QMX__ES_Q = 2 };
/* Operand conversions into the workspace: none (read in place: float32, int8, int3..int7),
 * int4 / uint4 and int2 / uint2 unpacked to int8, fp8 / fp4 / fp6 / nf4 decoded to float
 * (their scales applied on output), the same with per-block scales multiplied in (BAKE), an MX
 * / NVFP4 operand dequantized by qmx_mx_dequantize. */
enum {
    QMX__ES_CV_NONE = 0, QMX__ES_CV_I4 = 1, QMX__ES_CV_F8 = 2, QMX__ES_CV_I2 = 3,
    QMX__ES_CV_DEC = 4, QMX__ES_CV_BAKE = 5, QMX__ES_CV_MX = 6
};

static int qmx__es_code(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -1;
}

static qmx_status qmx__es_fail(qmx_status st, int pos, int *err_pos) {
    if (err_pos) *err_pos = pos;
    return st;
}

/* Syntax: fills p; PARSE/UNSUPPORTED with the character position. */
static qmx_status qmx__es_parse(const char *s, qmx__es_parsed *p, int *err_pos) {
    int i, ti = 0, arrow = -1, ncomma = 0, k, j;
    for (k = 0; k < 3; k++) { p->t[k].n = 0; p->t[k].ell = -1; p->t[k].ellpos = -1; p->t[k].end = 0; }
    p->explicit_out = 0;
    for (i = 0; s[i]; i++) {
        char c = s[i];
        qmx__es_term *t = &p->t[ti];
        if (i >= QMX_EINSUM_MAX_SPEC) return qmx__es_fail(QMX_ERR_PARSE, i, err_pos);
        if (c == ' ') continue;
        if (qmx__es_code(c) >= 0) {
            if (t->n >= QMX_EINSUM_MAX_RANK) return qmx__es_fail(QMX_ERR_PARSE, i, err_pos);
            t->lab[t->n] = (unsigned char)qmx__es_code(c);
            t->pos[t->n++] = i;
            t->end = i + 1;
        } else if (c == '.') {
            if (s[i + 1] != '.' || s[i + 2] != '.' || t->ell >= 0)
                return qmx__es_fail(QMX_ERR_PARSE, i, err_pos);
            t->ell = t->n; t->ellpos = i; i += 2; t->end = i + 1;
        } else if (c == ',') {
            if (ti != 0) return qmx__es_fail(QMX_ERR_PARSE, i, err_pos);
            ncomma++; ti = 1; p->t[1].end = i + 1;
        } else if (c == '-') {
            if (s[i + 1] != '>' || arrow >= 0) return qmx__es_fail(QMX_ERR_PARSE, i, err_pos);
            arrow = i; ti = 2; p->t[2].end = i + 2; i++;
        } else {
            return qmx__es_fail(QMX_ERR_PARSE, i, err_pos); /* '>' alone, tab, digit, ... */
        }
    }
    if (ncomma == 0) return qmx__es_fail(QMX_ERR_UNSUPPORTED, arrow >= 0 ? arrow : i, err_pos);
    p->explicit_out = arrow >= 0;
    if (p->explicit_out) {
        qmx__es_term *o = &p->t[2];
        for (k = 0; k < o->n; k++) {
            int found = 0;
            for (j = 0; j < 2 && !found; j++) {
                int q;
                for (q = 0; q < p->t[j].n; q++) found |= p->t[j].lab[q] == o->lab[k];
            }
            if (!found) return qmx__es_fail(QMX_ERR_PARSE, o->pos[k], err_pos);
            for (j = 0; j < k; j++)
                if (o->lab[j] == o->lab[k]) return qmx__es_fail(QMX_ERR_PARSE, o->pos[k], err_pos);
        }
    }
    return QMX_OK;
}

static int qmx__es_mul(size_t a, size_t b, size_t *r) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *r = a * b;
    return 1;
}
static int qmx__es_add(size_t a, size_t b, size_t *r) {
    if (b > SIZE_MAX - a) return 0;
    *r = a + b;
    return 1;
}
static int qmx__es_r64add(size_t *total, size_t x, size_t *off) {
    size_t r;
    if (x > SIZE_MAX - 63) return 0;
    r = (x + 63u) & ~(size_t)63u;
    *off = *total;
    return qmx__es_add(*total, r, total);
}

/* Binds the parsed spec to the operands' ranks and shapes: label ids (dense, in order of first
 * appearance; at most 16 since every label is a dim of an input), sizes, strides, output
 * labels. Label codes: A-Z 0..25, a-z 26..51, ellipsis dim e (of NE, right-aligned) 52 + e.
 * No dtype checks. */
static qmx_status qmx__es_bind(const qmx__es_parsed *p, const qmx_einsum_operand *const ops[2],
                               qmx__es_plan *pl, int *err_pos) {
    int ne[2], NE = 0, o, i, L, nid = 0;
    size_t esz[2][QMX_EINSUM_MAX_RANK]; /* ellipsis dim sizes per operand (0: absent) */
    signed char id[QMX__ES_NCODE];
    unsigned char cnt[QMX__ES_NCODE];
    for (L = 0; L < QMX__ES_NLAB; L++) {
        pl->size[L] = 0; pl->st[0][L] = pl->st[1][L] = 0; pl->ost[L] = 0;
        pl->in[0][L] = pl->in[1][L] = 0; pl->inout[L] = 0;
    }
    for (L = 0; L < QMX__ES_NCODE; L++) { id[L] = -1; cnt[L] = 0; }
    for (L = 0; L < QMX_EINSUM_MAX_RANK; L++) esz[0][L] = esz[1][L] = 0;
    for (o = 0; o < 2; o++) {
        const qmx_einsum_operand *op = ops[o];
        const qmx__es_term *t = &p->t[o];
        if (op->rank < 0 || op->rank > QMX_EINSUM_MAX_RANK)
            return qmx__es_fail(QMX_ERR_SIZE, -1, err_pos);
        for (i = 0; i < op->rank; i++)
            if (op->shape[i] == 0) return qmx__es_fail(QMX_ERR_SIZE, -1, err_pos);
        if (qmx_shape_count(op->shape, op->rank, &pl->count[o]) != QMX_OK)
            return qmx__es_fail(QMX_ERR_OVERFLOW, -1, err_pos);
        pl->rank[o] = op->rank;
        ne[o] = op->rank - t->n;
        if (ne[o] < 0 || (t->ell < 0 && ne[o] != 0))
            return qmx__es_fail(QMX_ERR_SHAPE, t->end, err_pos);
        if (ne[o] > NE) NE = ne[o];
    }
    for (o = 0; o < 2; o++) {
        const qmx_einsum_operand *op = ops[o];
        const qmx__es_term *t = &p->t[o];
        size_t stride[QMX_EINSUM_MAX_RANK], s = 1;
        unsigned char code[QMX_EINSUM_MAX_RANK];
        int ax;
        for (ax = 0, i = 0; i <= t->n; i++) { /* axis -> code; ellipsis dims right-aligned */
            int e;
            if (i == t->ell)
                for (e = 0; e < ne[o]; e++) code[ax++] = (unsigned char)(52 + NE - ne[o] + e);
            if (i < t->n) code[ax++] = t->lab[i];
        }
        for (ax = op->rank - 1; ax >= 0; ax--) { stride[ax] = s; s *= op->shape[ax]; }
        for (ax = 0; ax < op->rank; ax++) {
            size_t d = op->shape[ax];
            int c = code[ax];
            if (id[c] < 0) id[c] = (signed char)nid++;
            L = id[c];
            pl->lab[o][ax] = (unsigned char)L;
            if (c >= 52) {
                esz[o][c - 52] = d;
                if (d > 1) pl->st[o][L] = stride[ax];
            } else {
                if (pl->size[L] != 0 && pl->size[L] != d) {
                    int q = (t->ell >= 0 && ax >= t->ell + ne[o]) ? ax - ne[o] : ax;
                    return qmx__es_fail(QMX_ERR_SHAPE, t->pos[q], err_pos);
                }
                pl->size[L] = d;
                pl->st[o][L] += stride[ax]; /* a repeated label: the diagonal */
                cnt[c]++;
            }
            pl->in[o][L] = 1;
        }
    }
    for (i = 0; i < NE; i++) { /* ellipsis dims broadcast numpy-style */
        size_t a = esz[0][i], b = esz[1][i];
        if (a > 1 && b > 1 && a != b)
            return qmx__es_fail(QMX_ERR_SHAPE, p->t[1].ellpos, err_pos);
        L = id[52 + i];
        pl->size[L] = a > b ? a : b;
    }
    pl->olab_n = 0;
    if (p->explicit_out) {
        const qmx__es_term *t = &p->t[2];
        if (t->n + (t->ell >= 0 ? NE : 0) > QMX_EINSUM_MAX_RANK || (t->ell < 0 && NE > 0))
            return qmx__es_fail(QMX_ERR_SHAPE, t->end, err_pos); /* numpy rejects too */
        for (i = 0; i <= t->n; i++) {
            int e;
            if (i == t->ell)
                for (e = 0; e < NE; e++) pl->olab[pl->olab_n++] = (unsigned char)id[52 + e];
            if (i < t->n) pl->olab[pl->olab_n++] = (unsigned char)id[t->lab[i]];
        }
    } else {
        int e;
        for (e = 0; e < NE; e++) pl->olab[pl->olab_n++] = (unsigned char)id[52 + e];
        for (L = 0; L < 52; L++)
            if (cnt[L] == 1) {
                if (pl->olab_n >= QMX_EINSUM_MAX_RANK)
                    return qmx__es_fail(QMX_ERR_UNSUPPORTED, -1, err_pos);
                pl->olab[pl->olab_n++] = (unsigned char)id[L];
            }
    }
    {
        size_t s = 1;
        for (i = pl->olab_n - 1; i >= 0; i--) {
            L = pl->olab[i];
            pl->inout[L] = 1;
            pl->ost[L] = s;
            if (!qmx__es_mul(s, pl->size[L], &s)) return qmx__es_fail(QMX_ERR_OVERFLOW, -1, err_pos);
        }
        pl->out_count = s;
    }
    return QMX_OK;
}

/* Groups for a role assignment (lhs = operand sw): batch, M, N in output order; K in the
 * order of A's axes, then B's; the blocked label blk (>= 0) last. Also their products. */
static int qmx__es_groups(qmx__es_plan *pl, int sw, int blk) {
    int i, o, L;
    unsigned char seen[QMX__ES_NLAB];
    pl->nb = pl->nm = pl->nn = pl->nk = 0;
    pl->swap = sw;
    for (i = 0; i < pl->olab_n; i++) {
        L = pl->olab[i];
        if (pl->in[0][L] && pl->in[1][L]) pl->gb[pl->nb++] = (unsigned char)L;
        else if (pl->in[sw][L]) pl->gm[pl->nm++] = (unsigned char)L;
        else pl->gn[pl->nn++] = (unsigned char)L; /* every output label is an input's */
    }
    for (L = 0; L < QMX__ES_NLAB; L++) seen[L] = 0;
    for (o = 0; o < 2; o++)
        for (i = 0; i < pl->rank[o]; i++) {
            L = pl->lab[o][i];
            if (!pl->inout[L] && !seen[L] && L != blk) {
                seen[L] = 1;
                pl->gk[pl->nk++] = (unsigned char)L;
            }
        }
    if (blk >= 0) pl->gk[pl->nk++] = (unsigned char)blk;
    pl->Bt = pl->M = pl->N = pl->K = 1;
    for (i = 0; i < pl->nb; i++) if (!qmx__es_mul(pl->Bt, pl->size[pl->gb[i]], &pl->Bt)) return 0;
    for (i = 0; i < pl->nm; i++) if (!qmx__es_mul(pl->M, pl->size[pl->gm[i]], &pl->M)) return 0;
    for (i = 0; i < pl->nn; i++) if (!qmx__es_mul(pl->N, pl->size[pl->gn[i]], &pl->N)) return 0;
    for (i = 0; i < pl->nk; i++) if (!qmx__es_mul(pl->K, pl->size[pl->gk[i]], &pl->K)) return 0;
    return 1;
}

/* Is the operand (strides st) a row-major [R,C] matrix view over row labels r[] and column
 * labels c[] (C = product of c sizes)? Column stride 1, row stride *ld >= C. Size-1 labels
 * do not matter. */
static int qmx__es_view(const qmx__es_plan *pl, const size_t *st, const unsigned char *r, int nr,
                        const unsigned char *c, int nc, size_t C, size_t *ld) {
    size_t want = 1;
    int i, first = 1;
    for (i = nc - 1; i >= 0; i--) {
        size_t d = pl->size[c[i]];
        if (d == 1) continue;
        if (st[c[i]] != want) return 0;
        want *= d;
    }
    *ld = C;
    for (i = nr - 1; i >= 0; i--) {
        size_t d = pl->size[r[i]];
        if (d == 1) continue;
        if (first) { /* the innermost row label sets ld */
            if (st[r[i]] < C) return 0;
            want = *ld = st[r[i]];
            first = 0;
        } else if (st[r[i]] != want) {
            return 0;
        }
        want *= d; /* <= the operand's extent: no overflow */
    }
    return 1;
}

/* Is the output (batch..., M..., N...) in row-major order, i.e. writable in place? */
static int qmx__es_out_direct(const qmx__es_plan *pl) {
    size_t want = 1;
    int i;
    const unsigned char *g[3];
    int n[3], q;
    g[0] = pl->gb; g[1] = pl->gm; g[2] = pl->gn;
    n[0] = pl->nb; n[1] = pl->nm; n[2] = pl->nn;
    for (q = 2; q >= 0; q--)
        for (i = n[q] - 1; i >= 0; i--) {
            size_t d = pl->size[g[q][i]];
            if (d == 1) continue;
            if (pl->ost[g[q][i]] != want) return 0;
            want *= d;
        }
    return 1;
}

/* One element of esz bytes (1 or 4). */
#define QMX__ES_COPY1(d, s, esz)                                                          \
    do {                                                                                   \
        (d)[0] = (s)[0];                                                                   \
        if ((esz) == 4) { (d)[1] = (s)[1]; (d)[2] = (s)[2]; (d)[3] = (s)[3]; }             \
    } while (0)

/* Strided copy of esz-byte elements (1 or 4) over the labels r... then c... (an odometer, the
 * last label fastest): the packs of A and B and the output scatter. The innermost label runs in
 * the inner loop; when the source is more contiguous along the next label (a transpose, e.g.
 * [K,N] weights packed to [N,K]) the two run in 16 x 16 tiles so both sides stay in cache. */
static void qmx__es_copy2d(const qmx__es_plan *pl, size_t esz, const unsigned char *src,
                           const size_t *ss, unsigned char *dst, const size_t *ds,
                           const unsigned char *r, int nr, const unsigned char *c, int nc) {
    unsigned char lab[2 * QMX__ES_MAXG];
    size_t idx[2 * QMX__ES_MAXG], so = 0, dof = 0, cnt = 1, si = 0, di = 0, cnt2 = 1, si2 = 0,
           di2 = 0, j, k, jb, kb, je, ke;
    int n = 0, i;
    for (i = 0; i < nr; i++) lab[n++] = r[i];
    for (i = 0; i < nc; i++) lab[n++] = c[i];
    if (n > 0) {
        n--;
        cnt = pl->size[lab[n]]; si = ss[lab[n]] * esz; di = ds[lab[n]] * esz;
        if (n > 0 && ss[lab[n - 1]] < ss[lab[n]]) { /* transpose: tile the two inner labels */
            n--;
            cnt2 = pl->size[lab[n]]; si2 = ss[lab[n]] * esz; di2 = ds[lab[n]] * esz;
        }
    }
    for (i = 0; i < n; i++) idx[i] = 0;
    for (;;) {
        const unsigned char *s = src + so * esz;
        unsigned char *d = dst + dof * esz;
        for (jb = 0; jb < cnt2; jb += 16) {
            je = cnt2 - jb < 16 ? cnt2 : jb + 16;
            for (kb = 0; kb < cnt; kb += 16) {
                ke = cnt2 == 1 ? cnt : (cnt - kb < 16 ? cnt : kb + 16);
                for (j = jb; j < je; j++)
                    for (k = kb; k < ke; k++)
                        QMX__ES_COPY1(d + j * di2 + k * di, s + j * si2 + k * si, esz);
                if (cnt2 == 1) break; /* a plain row: one pass */
            }
        }
        for (i = n - 1; i >= 0; i--) {
            int L = lab[i];
            so += ss[L]; dof += ds[L];
            if (++idx[i] < pl->size[L]) break;
            so -= ss[L] * pl->size[L]; dof -= ds[L] * pl->size[L];
            idx[i] = 0;
        }
        if (i < 0) break;
    }
}

/* Dense row-major strides (into ds, by label) of an [R,C] matrix over labels r then c. */
static void qmx__es_dense(const qmx__es_plan *pl, size_t *ds, const unsigned char *r, int nr,
                          const unsigned char *c, int nc) {
    size_t s = 1;
    int i;
    for (i = nc - 1; i >= 0; i--) { ds[c[i]] = s; s *= pl->size[c[i]]; }
    for (i = nr - 1; i >= 0; i--) { ds[r[i]] = s; s *= pl->size[r[i]]; }
}

static int qmx__es_is_int(qmx_dtype d) {
    return d == QMX_INT8 || d == QMX_INT4 || d == QMX_UINT4 || d == QMX_INT2 || d == QMX_UINT2 ||
           d == QMX_INT3 || d == QMX_INT5 || d == QMX_INT6 || d == QMX_INT7;
}
/* Element-only float formats, decoded exactly to float (scales on output or baked in). */
static int qmx__es_is_fdec(qmx_dtype d) {
    return qmx_dtype_is_fp8(d) || d == QMX_FP4_E2M1 || d == QMX_FP6_E2M3 || d == QMX_FP6_E3M2 ||
           d == QMX_NF4;
}
static qmx_dtype qmx__es_dt(const qmx_einsum_operand *op) {
    return op->dtype == QMX_DTYPE_INVALID ? QMX_FLOAT32 : op->dtype;
}
static int qmx__es_has_block(const qmx_einsum_operand *op) {
    return op->scales && (op->scaling == QMX_EINSUM_SCALE_BLOCK ||
                          op->scaling == QMX_EINSUM_SCALE_CHANNEL_BLOCK);
}
static int qmx__es_has_chan(const qmx_einsum_operand *op) {
    return op->scales && (op->scaling == QMX_EINSUM_SCALE_CHANNEL ||
                          op->scaling == QMX_EINSUM_SCALE_CHANNEL_BLOCK);
}

/* Element e of a float-decoded operand (qmx__es_is_fdec), exact: fp4 and nf4 nibbles by flat
 * index (element 2i in the low nibble), fp6 / fp8 one code per byte. */
static float qmx__es_fdec(qmx_dtype d, const unsigned char *p, size_t e) {
    if (d == QMX_FP4_E2M1) return qmx_fp4_to_f32((uint8_t)((p[e / 2] >> (4u * (e & 1u))) & 15u));
    if (d == QMX_NF4) return qmx__nf4_table[(p[e / 2] >> (4u * (e & 1u))) & 15u];
    if (d == QMX_FP6_E2M3 || d == QMX_FP6_E3M2) return qmx_fp6_to_f32(p[e], d);
    return qmx_fp8_to_f32(p[e], d);
}

/* A float-decoded operand with per-block scales (QMX__ES_CV_BAKE): element e times the scale
 * of its channel and block, one rounding, as qmx_dequantize writes it; into dst, or with dst
 * NULL only whether every product is finite (1) or not (0). The scales are checked. */
static int qmx__es_bake(const qmx_einsum_operand *op, size_t count, float *dst) {
    const unsigned char *p = (const unsigned char *)op->data;
    qmx_dtype d = op->dtype;
    size_t len = op->shape[op->block_axis], inner = 1, cin = 1, clen = 1, nb, outer, o, k, i,
           e = 0, bs = op->block_size;
    int ax, chan = qmx__es_has_chan(op);
    for (ax = op->block_axis + 1; ax < op->rank; ax++) inner *= op->shape[ax];
    outer = count / (len * inner);
    nb = len / bs + (len % bs != 0);
    if (chan) {
        clen = op->shape[op->channel_axis];
        for (ax = op->channel_axis + 1; ax < op->rank; ax++) cin *= op->shape[ax];
    }
    for (o = 0; o < outer; o++)
        for (k = 0; k < len; k++) {
            const float *s = op->scales + k / bs;
            for (i = 0; i < inner; i++, e++) {
                float v = qmx__es_fdec(d, p, e) * s[chan ? (e / cin) % clen * nb : 0];
                if (dst) dst[e] = v;
                else if (!qmx__isfinite(v)) return 0;
            }
        }
    return 1;
}

/* The element dtype an MX / NVFP4 operand must declare; QMX_DTYPE_INVALID for a bad format. */
static qmx_dtype qmx__es_mx_elem(qmx_mx_format f) {
    switch (f) {
    case QMX_MXFP8_E4M3: return QMX_FP8_E4M3FN;
    case QMX_MXFP8_E5M2: return QMX_FP8_E5M2;
    case QMX_MXFP6_E2M3: return QMX_FP6_E2M3;
    case QMX_MXFP6_E3M2: return QMX_FP6_E3M2;
    case QMX_MXFP4: case QMX_NVFP4: return QMX_FP4_E2M1;
    case QMX_MXINT8: return QMX_INT8;
    }
    return QMX_DTYPE_INVALID;
}

/* The operand's MX config with the view [outer][axis_len][inner] around block_axis (the
 * operand's dims before / at / after it); block_axis must be in range. */
static qmx_mx_config qmx__es_mx_cfg(const qmx_einsum_operand *op) {
    qmx_mx_config c = *op->mx;
    int ax;
    c.outer = c.inner = 1;
    c.axis_len = op->shape[op->block_axis];
    for (ax = 0; ax < op->block_axis; ax++) c.outer *= op->shape[ax];
    for (ax = op->block_axis + 1; ax < op->rank; ax++) c.inner *= op->shape[ax];
    return c;
}

/* Is every element qmx_mx_dequantize gives finite? Reads the data, writes nothing: per block,
 * a NaN / Inf element code (fp8) makes it non-finite, else the element of largest magnitude
 * dequantized alone (a one-element view, the same rule, scale code and tensor scale) decides,
 * since |element * scale| rounded is monotone in |element| (0 * Inf is NaN either way). */
static int qmx__es_mx_finite(const qmx_mx_config *c, qmx_dtype d, const uint8_t *el,
                             const uint8_t *codes) {
    qmx_mx_config one = *c;
    size_t bs = c->block_size ? c->block_size : (c->format == QMX_NVFP4 ? 16u : 32u), nbk, o, b,
           i, k;
    one.outer = one.axis_len = one.inner = 1;
    if (bs > c->axis_len) bs = c->axis_len;
    nbk = c->axis_len / bs + (c->axis_len % bs != 0);
    for (o = 0; o < c->outer; o++)
        for (b = 0; b < nbk; b++)
            for (i = 0; i < c->inner; i++) {
                size_t k1 = (b + 1) * bs < c->axis_len ? (b + 1) * bs : c->axis_len;
                uint8_t best = 0, sc = codes[(o * nbk + b) * c->inner + i];
                float bm = -1.0f, y = 0.0f;
                for (k = b * bs; k < k1; k++) {
                    size_t e = (o * c->axis_len + k) * c->inner + i;
                    uint8_t q = d == QMX_FP4_E2M1 ? (uint8_t)((el[e / 2] >> (4u * (e & 1u))) & 15u)
                                                  : el[e];
                    float v = d == QMX_INT8 ? (float)(int8_t)q : qmx__es_fdec(d, &q, 0);
                    if (!qmx__isfinite(v)) return 0;
                    if (v < 0.0f) v = -v;
                    if (v > bm) { bm = v; best = q; }
                }
                if (qmx_mx_dequantize(&one, &best, 1, &sc, 1, 1, &y) != QMX_OK ||
                    !qmx__isfinite(y))
                    return 0;
            }
    return 1;
}

/* Groups and matrix views for the roles sw (lhs = operand sw): whether A' is a view, how B'
 * is read (b_mode), whether the output is written in place; *cost = the elements copied per
 * batch index (packs and the output tile). 0 on size_t overflow. */
static int qmx__es_layouts(qmx__es_plan *pl, int sw, int blk, size_t *cost) {
    int lhs = sw, rhs = 1 - sw;
    size_t x;
    if (!qmx__es_groups(pl, sw, blk)) return 0;
    pl->a_direct = qmx__es_view(pl, pl->st[lhs], pl->gm, pl->nm, pl->gk, pl->nk, pl->K, &pl->lda);
    if (!pl->a_direct) pl->lda = pl->K;
    if (qmx__es_view(pl, pl->st[rhs], pl->gk, pl->nk, pl->gn, pl->nn, pl->N, &pl->ldb)) {
        pl->b_mode = 1; /* [K,N] in place: every kind reads it (the int8 kernels pack strips) */
    } else if (pl->kind == QMX__ES_F32 && pl->M >= 4) {
        pl->b_mode = 3; pl->ldb = pl->N; /* the float row form vectorises: worth a transpose */
    } else if (qmx__es_view(pl, pl->st[rhs], pl->gn, pl->nn, pl->gk, pl->nk, pl->K, &pl->ldb)) {
        pl->b_mode = 0;
    } else {
        pl->b_mode = 2; pl->ldb = pl->K;
    }
    pl->out_direct = qmx__es_out_direct(pl);
    *cost = 0;
    if (!pl->a_direct && (!qmx__es_mul(pl->M, pl->K, &x) || !qmx__es_add(*cost, x, cost))) return 0;
    if (pl->b_mode >= 2 && (!qmx__es_mul(pl->N, pl->K, &x) || !qmx__es_add(*cost, x, cost))) return 0;
    if (!pl->out_direct && (!qmx__es_mul(pl->M, pl->N, &x) || !qmx__es_add(*cost, x, cost))) return 0;
    return 1;
}

/* Parse, bind, check dtypes and scale modes, choose the roles and layouts, lay out the
 * workspace. Reads no data. */
static qmx_status qmx__es_plan_all(const char *spec, const qmx_einsum_operand *a,
                                   const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                                   qmx__es_plan *pl, int *err_pos) {
    qmx__es_parsed p;
    const qmx_einsum_operand *ops[2];
    qmx_status st;
    int o, sw, blk = -1, isf[2], int32_out = opts ? opts->int32_out : 0;
    size_t x, esz;
    if (err_pos) *err_pos = -1;
    if (!spec || !a || !b) return QMX_ERR_NULL;
    ops[0] = a; ops[1] = b;
    st = qmx__es_parse(spec, &p, err_pos);
    if (st != QMX_OK) return st;
    st = qmx__es_bind(&p, ops, pl, err_pos);
    if (st != QMX_OK) return st;
    pl->blob = -1;   /* a block-weight blob operand (at most one) */
    for (o = 0; o < 2; o++) {
        if (!ops[o]->blockw_blob) {
            if (ops[o]->blockw_blob_bytes) return QMX_ERR_ARG;
            continue;
        }
        if (pl->blob >= 0) return QMX_ERR_UNSUPPORTED;
        pl->blob = o;
    }
    /* dtypes -> kind */
    for (o = 0; o < 2; o++) {
        const qmx_einsum_operand *op = ops[o];
        qmx_dtype d = qmx__es_dt(op);
        if (o == pl->blob) { /* the blob is the whole operand: it says what it holds */
            if (op->dtype != QMX_DTYPE_INVALID) return QMX_ERR_DTYPE;
            if (op->rank != 2) return QMX_ERR_SHAPE;
            if (op->data || op->scales || op->mx || op->scale_codes || op->zero_point)
                return QMX_ERR_ARG;
            isf[o] = 1;
            pl->conv[o] = QMX__ES_CV_NONE;
            continue;
        }
        if (op->mx) { /* block-scaled: the view around a contracted block axis, the config */
            qmx_mx_config c;
            size_t eb, ns;
            if (op->block_axis < 0 || op->block_axis >= op->rank) return QMX_ERR_ARG;
            if (pl->inout[pl->lab[o][op->block_axis]]) return QMX_ERR_ARG;
            c = qmx__es_mx_cfg(op);
            if ((op->mx->outer || op->mx->axis_len || op->mx->inner) &&
                (op->mx->outer != c.outer || op->mx->axis_len != c.axis_len ||
                 op->mx->inner != c.inner))
                return QMX_ERR_SHAPE;
            st = qmx_mx_storage(&c, pl->count[o], &eb, &ns);
            if (st != QMX_OK) return st;
            if (d != qmx__es_mx_elem(op->mx->format)) return QMX_ERR_DTYPE;
            isf[o] = 1;
            pl->conv[o] = QMX__ES_CV_MX;
            continue;
        }
        isf[o] = d == QMX_FLOAT32 || qmx__es_is_fdec(d);
        if (!isf[o] && !qmx__es_is_int(d)) return QMX_ERR_DTYPE;
        pl->conv[o] = (d == QMX_INT4 || d == QMX_UINT4)   ? QMX__ES_CV_I4
                      : (d == QMX_INT2 || d == QMX_UINT2) ? QMX__ES_CV_I2
                      : qmx_dtype_is_fp8(d)               ? QMX__ES_CV_F8
                      : qmx__es_is_fdec(d)                ? QMX__ES_CV_DEC
                                                          : QMX__ES_CV_NONE;
    }
    if (isf[0] != isf[1]) return QMX_ERR_UNSUPPORTED;
    if (isf[0]) {
        if (int32_out) return QMX_ERR_ARG;
        pl->kind = QMX__ES_F32;
    } else {
        pl->kind = int32_out ? QMX__ES_I32 : QMX__ES_Q;
    }
    if (pl->blob >= 0) { /* the kernels take float32 activations only; the kernel choice */
        const qmx_einsum_operand *x = ops[1 - pl->blob];
        if (x->mx || qmx__es_dt(x) != QMX_FLOAT32) return QMX_ERR_UNSUPPORTED;
        if (opts && (unsigned)opts->blockw_act > 1u) return QMX_ERR_ARG;
        pl->blob_f32 = !opts || opts->blockw_act == QMX_EINSUM_BLOCKW_F32;
        pl->bwo.act_block = opts && !pl->blob_f32 ? opts->blockw_act_block : 0;
    }
    /* scale modes, axes, zero points */
    for (o = 0; o < 2; o++) {
        const qmx_einsum_operand *op = ops[o];
        qmx_dtype d = qmx__es_dt(op);
        if (o == pl->blob) continue;
        if (d == QMX_FLOAT32 && (op->scales || op->zero_point)) return QMX_ERR_ARG;
        if (isf[o] && op->zero_point) return QMX_ERR_ARG;
        if (!op->mx && op->scale_codes) return QMX_ERR_ARG;
        if (op->mx) { /* its scales are the codes; block_size 0 or the config's */
            if (op->scales || (op->block_size != 0 &&
                               op->block_size != (op->mx->block_size ? op->mx->block_size
                                                  : op->mx->format == QMX_NVFP4 ? 16u : 32u)))
                return QMX_ERR_ARG;
            continue;
        }
        if (pl->kind == QMX__ES_I32 && op->scales) return QMX_ERR_ARG;
        if (!isf[o]) { /* the dtype's own range */
            int32_t lo = 0, hi = 0;
            (void)qmx_dtype_int_range(d, &lo, &hi);
            if (op->zero_point < lo || op->zero_point > hi) return QMX_ERR_ARG;
        }
        if (!op->scales) continue;
        if ((unsigned)op->scaling > 3u) return QMX_ERR_ARG; /* any enum representation */
        if (qmx__es_has_chan(op)) {
            if (op->channel_axis < 0 || op->channel_axis >= op->rank) return QMX_ERR_ARG;
            if (!pl->inout[pl->lab[o][op->channel_axis]]) return QMX_ERR_ARG;
        }
        if (qmx__es_has_block(op)) {
            int L;
            if (op->block_axis < 0 || op->block_axis >= op->rank) return QMX_ERR_ARG;
            L = pl->lab[o][op->block_axis];
            if (pl->inout[L]) return QMX_ERR_ARG;
            if (op->block_size == 0) return QMX_ERR_SIZE;
            if (isf[o]) { /* float-decoded: dequantized into the workspace, scales and all */
                pl->conv[o] = QMX__ES_CV_BAKE;
                continue;
            }
            if (blk >= 0 && (blk != L || op->block_size != ops[0]->block_size))
                return QMX_ERR_UNSUPPORTED;
            blk = L;
            pl->bs = op->block_size;
        }
    }
    pl->blk_label = blk;
    /* float kind: an operand decoded without its scales has them applied on output */
    pl->fsc = 0;
    for (o = 0; o < 2; o++)
        if (pl->conv[o] == QMX__ES_CV_F8 || pl->conv[o] == QMX__ES_CV_DEC) pl->fsc = 1;
    /* roles: Qwix's single zero point goes to the matmul's A; else the assignment that copies
     * fewer elements (packs of A and B, the output tile), the first operand as A on a tie */
    if (pl->kind == QMX__ES_Q && a->zero_point && b->zero_point) return QMX_ERR_UNSUPPORTED;
    if (pl->blob >= 0) {
        sw = 1 - pl->blob; /* the float32 operand is the kernel's X, the blob its weights */
    } else if (pl->kind == QMX__ES_Q && (a->zero_point || b->zero_point)) {
        sw = b->zero_point ? 1 : 0;
    } else {
        size_t c0, c1;
        if (!qmx__es_layouts(pl, 1, blk, &c1) || !qmx__es_layouts(pl, 0, blk, &c0))
            return QMX_ERR_OVERFLOW;
        sw = c1 < c0 ? 1 : 0;
    }
    if (!qmx__es_layouts(pl, sw, blk, &x)) return QMX_ERR_OVERFLOW;
    pl->ntask = pl->Bt;
    if (pl->blob >= 0) { /* labels (n, k): n free of the blob only, k the whole of K */
        const qmx_einsum_operand *w = ops[pl->blob];
        int Ln = pl->lab[pl->blob][0], Lk = pl->lab[pl->blob][1];
        float dummy = 0.0f; /* the kernels' argument checks read no X, Y or workspace */
        if (pl->inout[Lk]) return QMX_ERR_ARG; /* blocks along a free label: as an mx axis */
        if (Ln == Lk || !pl->inout[Ln] || pl->in[sw][Ln] || !pl->in[sw][Lk] ||
            pl->size[Lk] != pl->K)
            return QMX_ERR_UNSUPPORTED;
        pl->b_mode = 0; pl->ldb = pl->K; /* read by the kernel, never copied */
        st = pl->blob_f32
                 ? qmx__bp_f32(pl->M, pl->N, pl->K, &dummy, pl->lda, w->blockw_blob,
                               w->blockw_blob_bytes, &dummy, pl->N, &dummy, 0, 0, pl->N,
                               QMX__PAR_CHECK)
                 : qmx__bp_dyn(pl->M, pl->N, pl->K, &dummy, pl->lda, w->blockw_blob,
                               w->blockw_blob_bytes, &pl->bwo, &dummy, pl->N, &dummy, 0, 0,
                               pl->N, QMX__PAR_CHECK);
        if (st != QMX_OK) return st;
        st = qmx_matmul_tasks(pl->M, pl->N, &pl->ntask);
        if (st != QMX_OK) return st;
    }
    if (pl->kind != QMX__ES_F32 && pl->K > QMX_MATMUL_I8_MAX_K) return QMX_ERR_OVERFLOW;
    /* K-blocks: the blocked label is the innermost of K */
    if (blk >= 0) {
        size_t kax = pl->size[blk], bs = pl->bs < kax ? pl->bs : kax, kouter = pl->K / kax;
        if (kouter > 1 && kax % bs != 0) return QMX_ERR_UNSUPPORTED;
        pl->bs = bs;
        pl->nbax = kax / bs + (kax % bs != 0);
        pl->nblk = kouter * pl->nbax; /* <= K */
    } else {
        pl->bs = pl->K; pl->nbax = 1; pl->nblk = 1;
    }
    /* workspace: the regions, at offsets from the 64-byte aligned base (qmx_einsum rounds the
     * workspace up to it), then 64 bytes of slack for that rounding */
    pl->total = 0;
    esz = pl->kind == QMX__ES_F32 ? 4 : 1;
    for (o = 0; o < 2; o++) {
        pl->off_conv[o] = 0;
        if (pl->conv[o]) {
            int i8 = pl->conv[o] == QMX__ES_CV_I4 || pl->conv[o] == QMX__ES_CV_I2;
            if (!qmx__es_mul(pl->count[o], i8 ? 1 : 4, &x)) return QMX_ERR_OVERFLOW;
            if (!qmx__es_r64add(&pl->total, x, &pl->off_conv[o])) return QMX_ERR_OVERFLOW;
        }
    }
    pl->off_pa = pl->off_pb = pl->off_c = pl->off_sa = pl->off_sb = pl->off_mm = 0;
    pl->mm_bytes = 0;
    pl->batch_off = pl->total;   /* the regions below are per batch index */
    if (!pl->a_direct) {
        if (!qmx__es_mul(pl->M, pl->K, &x) || !qmx__es_mul(x, esz, &x) ||
            !qmx__es_r64add(&pl->total, x, &pl->off_pa)) return QMX_ERR_OVERFLOW;
    }
    if (pl->b_mode >= 2) {
        if (!qmx__es_mul(pl->N, pl->K, &x) || !qmx__es_mul(x, esz, &x) ||
            !qmx__es_r64add(&pl->total, x, &pl->off_pb)) return QMX_ERR_OVERFLOW;
    }
    if (!pl->out_direct) {
        if (!qmx__es_mul(pl->M, pl->N, &x) || !qmx__es_mul(x, 4, &x) ||
            !qmx__es_r64add(&pl->total, x, &pl->off_c)) return QMX_ERR_OVERFLOW;
    }
    if (pl->kind == QMX__ES_Q || pl->fsc) {
        if (!qmx__es_mul(pl->M, pl->nblk, &x) || !qmx__es_mul(x, 4, &x) ||
            !qmx__es_r64add(&pl->total, x, &pl->off_sa)) return QMX_ERR_OVERFLOW;
        if (!qmx__es_mul(pl->N, pl->nblk, &x) || !qmx__es_mul(x, 4, &x) ||
            !qmx__es_r64add(&pl->total, x, &pl->off_sb)) return QMX_ERR_OVERFLOW;
    }
    if (pl->kind != QMX__ES_F32) {
        st = pl->kind == QMX__ES_I32
                 ? qmx_matmul_i8_workspace_size(pl->M, pl->N, pl->K, NULL, &pl->mm_bytes)
                 : qmx_matmul_i8_f32_workspace_size(pl->M, pl->N, pl->K, &pl->mm_bytes);
        if (st != QMX_OK) return st;
        /* dequant-on-output on a [K,N] view: + the column tile / accumulators of the kernels */
        if (pl->kind == QMX__ES_Q && pl->b_mode == 1 &&
            ((x = qmx__k_kn_extra_bytes(pl->M, pl->N, pl->K)) == 0 ||
             !qmx__es_add(pl->mm_bytes, x, &pl->mm_bytes)))
            return QMX_ERR_OVERFLOW;
        if (!qmx__es_r64add(&pl->total, pl->mm_bytes, &pl->off_mm)) return QMX_ERR_OVERFLOW;
    } else if (pl->blob >= 0) { /* the kernel's: serial (a range call's too), or its _exec's */
        const qmx_executor *ex = opts ? opts->executor : NULL;
        size_t tw;
        st = qmx__bp_par_ws(pl->M, pl->N, pl->K, &pl->bwo, pl->blob_f32, &pl->mm_bytes);
        if (st == QMX_OK && ex && ex->workers >= 2) {
            if (pl->ntask > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
            st = qmx__bp_par_ws(pl->M < QMX_TASK_M ? pl->M : QMX_TASK_M,
                                pl->N < QMX_TASK_N ? pl->N : QMX_TASK_N, pl->K, &pl->bwo,
                                pl->blob_f32, &tw);
            if (st == QMX_OK) st = qmx_par_workspace_size(ex, 0, tw, &pl->mm_bytes);
        }
        if (st != QMX_OK) return st;
        if (!qmx__es_r64add(&pl->total, pl->mm_bytes, &pl->off_mm)) return QMX_ERR_OVERFLOW;
    }
    /* several cores: a task per batch index, each worker with its own copy (slice) of the
     * per-batch regions, the converted operands shared */
    pl->workers = 1;
    pl->slice = pl->total - pl->batch_off;   /* a multiple of 64 */
    if (opts && opts->executor && opts->executor->workers != 0 && opts->executor->workers != 1) {
        const qmx_executor *ex = opts->executor;
        if (ex->workers < 0) return QMX_ERR_ARG;
        if (!ex->parallel_for) return QMX_ERR_NULL;
        if (pl->Bt > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
        if (pl->Bt >= 2) {
            pl->workers = ex->workers;
            if (pl->slice > (SIZE_MAX - pl->batch_off) / (size_t)ex->workers)
                return QMX_ERR_OVERFLOW;
            pl->total = pl->batch_off + pl->slice * (size_t)ex->workers;
        }
    }
    if (pl->total != 0 && !qmx__es_add(pl->total, 64, &pl->total)) return QMX_ERR_OVERFLOW;
    return QMX_OK;   /* (total 0: nothing to copy, no workspace at all) */
}

QMX_API qmx_status qmx_einsum_output_shape(const char *spec, const qmx_einsum_operand *a,
                                           const qmx_einsum_operand *b, size_t *out_shape,
                                           int *out_rank, int *err_pos) {
    qmx__es_parsed p;
    qmx__es_plan pl;
    const qmx_einsum_operand *ops[2];
    qmx_status st;
    int i;
    if (err_pos) *err_pos = -1;
    if (!spec || !a || !b || !out_shape || !out_rank) return QMX_ERR_NULL;
    ops[0] = a; ops[1] = b;
    st = qmx__es_parse(spec, &p, err_pos);
    if (st == QMX_OK) st = qmx__es_bind(&p, ops, &pl, err_pos);
    if (st != QMX_OK) return st;
    for (i = 0; i < pl.olab_n; i++) out_shape[i] = pl.size[pl.olab[i]];
    *out_rank = pl.olab_n;
    return QMX_OK;
}

QMX_API qmx_status qmx_einsum_workspace_size(const char *spec, const qmx_einsum_operand *a,
                                             const qmx_einsum_operand *b,
                                             const qmx_einsum_opts *opts, size_t *bytes,
                                             int *err_pos) {
    qmx__es_plan pl;
    qmx_status st;
    if (err_pos) *err_pos = -1;
    if (!bytes) return QMX_ERR_NULL;
    st = qmx__es_plan_all(spec, a, b, opts, &pl, err_pos);
    if (st != QMX_OK) return st;
    *bytes = pl.total;
    return QMX_OK;
}

/* The float product of the documented order: per output, k increasing, p = a*b and sum = sum
 * + p each rounded to float; FMA contraction off (see NUMERICS). kn: B(n,k) = B[k*ldb + n].
 * Blocking changes which outputs advance together, never an output's order:
 *   [K,N] B: columns in chunks of 256 (the chunk of B, K x 256 floats, is reused by every row
 *     tile from L2), rows in tiles of 4 that share each load of B's row k; the sums live in C
 *     (the row form vectorises across n without reassociation);
 *   [N,K] B: 4 x 4 register tiles of sums over the whole K (A and B rows reused 4 times). */
#if defined(__clang__)
#  define QMX__ES_OPAQUE(p) __asm__("" : "+m"(p)) /* clang -ffp-contract=fast ignores the pragma */
#else
#  define QMX__ES_OPAQUE(p) ((void)0)
#endif
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void qmx__es_sgemm(size_t M, size_t N, size_t K, const float *A, size_t lda,
                          const float *B, size_t ldb, int kn, float *C, size_t ldc) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    size_t m, n, k, n0, nb, r, mr;
    if (kn) {
        for (n0 = 0; n0 < N; n0 += 256) {
            nb = N - n0 < 256 ? N - n0 : 256;
            for (m = 0; m < M; m += mr) {
                float *c[4];
                mr = M - m < 4 ? M - m : 4;
                for (r = 0; r < mr; r++) {
                    c[r] = C + (m + r) * ldc + n0;
                    for (n = 0; n < nb; n++) c[r][n] = 0.0f;
                }
                for (k = 0; k < K; k++) {
                    const float *bk = B + k * ldb + n0;
                    for (r = 0; r < mr; r++) {
                        float ak = A[(m + r) * lda + k], *cr = c[r];
                        for (n = 0; n < nb; n++) {
                            float p = ak * bk[n], sum;
                            QMX__ES_OPAQUE(p);
                            sum = cr[n];
                            sum = sum + p;
                            cr[n] = sum;
                        }
                    }
                }
            }
        }
        return;
    }
    for (m = 0; m < M; m += 4) {
        const float *a0 = A + m * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        if (M - m < 4) break;
        for (n = 0; n + 4 <= N; n += 4) {
            const float *b0 = B + n * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
            float s[16], p;
            for (r = 0; r < 16; r++) s[r] = 0.0f;
            for (k = 0; k < K; k++) {
                float x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
                float y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
#define QMX__ES_MAC(i, x, y) do { p = (x) * (y); QMX__ES_OPAQUE(p); s[i] = s[i] + p; } while (0)
                QMX__ES_MAC(0, x0, y0); QMX__ES_MAC(1, x0, y1); QMX__ES_MAC(2, x0, y2); QMX__ES_MAC(3, x0, y3);
                QMX__ES_MAC(4, x1, y0); QMX__ES_MAC(5, x1, y1); QMX__ES_MAC(6, x1, y2); QMX__ES_MAC(7, x1, y3);
                QMX__ES_MAC(8, x2, y0); QMX__ES_MAC(9, x2, y1); QMX__ES_MAC(10, x2, y2); QMX__ES_MAC(11, x2, y3);
                QMX__ES_MAC(12, x3, y0); QMX__ES_MAC(13, x3, y1); QMX__ES_MAC(14, x3, y2); QMX__ES_MAC(15, x3, y3);
#undef QMX__ES_MAC
            }
            for (r = 0; r < 16; r++) C[(m + r / 4) * ldc + n + r % 4] = s[r];
        }
        for (; n < N; n++) { /* leftover columns of this row tile */
            for (r = 0; r < 4; r++) {
                const float *a = A + (m + r) * lda, *b = B + n * ldb;
                float sum = 0.0f, p;
                for (k = 0; k < K; k++) { p = a[k] * b[k]; QMX__ES_OPAQUE(p); sum = sum + p; }
                C[(m + r) * ldc + n] = sum;
            }
        }
    }
    for (; m < M; m++) { /* leftover rows */
        const float *a = A + m * lda;
        for (n = 0; n < N; n++) {
            const float *b = B + n * ldb;
            float sum = 0.0f, p;
            for (k = 0; k < K; k++) { p = a[k] * b[k]; QMX__ES_OPAQUE(p); sum = sum + p; }
            C[m * ldc + n] = sum;
        }
    }
}

/* sum = (sum * sa[m]) * sb[n], two rounded products (fp8 dequant on output). */
static void qmx__es_scale_out(size_t M, size_t N, float *C, size_t ldc, const float *sa,
                              const float *sb) {
    size_t m, n;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            float v = C[m * ldc + n];
            v = v * sa[m];
            v = v * sb[n];
            C[m * ldc + n] = v;
        }
}

/* Scales needed by an operand (entries), 0 on overflow; sets *nbax_op. */
static size_t qmx__es_scales_need(const qmx_einsum_operand *op, const qmx__es_plan *pl) {
    size_t need = 1, c = 1;
    (void)pl;
    if (!op->scales) return 1;
    if (qmx__es_has_chan(op)) c = op->shape[op->channel_axis];
    if (qmx__es_has_block(op)) {
        size_t d = op->shape[op->block_axis];
        size_t nb = d / op->block_size + (d % op->block_size != 0);
        if (!qmx__es_mul(c, nb, &need)) return 0;
        return need;
    }
    return c;
}

/* Expanded scales of one role for one batch index: dst[i*nblk + f] for the R rows of the
 * group g (M or N labels), bidx = the batch labels' indices (by label). 1.0 for an operand
 * whose scales are already in the workspace copy (baked blocks, MX). */
static void qmx__es_expand(const qmx__es_plan *pl, const qmx_einsum_operand *op, int o,
                           const unsigned char *g, int ng, size_t R, const size_t *bidx,
                           float *dst) {
    size_t i, f, inner = 1, csz = 1, cidx = 0;
    int none = !op->scales || pl->conv[o] == QMX__ES_CV_BAKE || pl->conv[o] == QMX__ES_CV_MX;
    int Lc = -1, gi = -1, q, chan = !none && qmx__es_has_chan(op);
    int block = !none && qmx__es_has_block(op);
    if (chan) {
        Lc = pl->lab[o][op->channel_axis];
        csz = op->shape[op->channel_axis];
        for (q = 0; q < ng; q++) if (g[q] == Lc) gi = q;
        if (gi >= 0) for (q = gi + 1; q < ng; q++) inner *= pl->size[g[q]];
        else cidx = bidx[Lc]; /* a batch label */
    }
    for (i = 0; i < R; i++) {
        size_t c = 0;
        if (chan) c = csz == 1 ? 0 : gi >= 0 ? (i / inner) % pl->size[Lc] : cidx;
        for (f = 0; f < pl->nblk; f++) {
            float s;
            if (none) s = 1.0f;
            else if (block) s = op->scales[c * pl->nbax + f % pl->nbax];
            else s = op->scales[c];
            dst[i * pl->nblk + f] = s;
        }
    }
}

/* One task: batch index bi of the plan (its output block is written by it alone). ws: the
 * aligned workspace, moved by worker * slice for a worker's copy of the per-batch regions. */
typedef struct qmx__es_job {
    const qmx__es_plan *pl;
    const qmx_einsum_operand *ops[2];
    const unsigned char *data[2];
    size_t dst_a[QMX__ES_NLAB], dst_b[QMX__ES_NLAB], dst_c[QMX__ES_NLAB], esz;
    void *out;
    unsigned char *ws;
    int lhs, rhs;
} qmx__es_job;
static void qmx__es_batch(const qmx__es_job *j, size_t bi, unsigned char *ws) {
    const qmx__es_plan *pl = j->pl;
    const qmx_einsum_operand *const *ops = j->ops;
    const unsigned char *const *data = j->data;
    const size_t *dst_a = j->dst_a, *dst_b = j->dst_b, *dst_c = j->dst_c;
    size_t esz = j->esz, bidx[QMX__ES_NLAB];
    int lhs = j->lhs, rhs = j->rhs, i;
    void *out = j->out;
    qmx_status st = QMX_OK;
    for (i = 0; i < QMX__ES_NLAB; i++) bidx[i] = 0;
    {
        size_t offl = 0, offr = 0, offo = 0, r = bi;
        const unsigned char *A, *B;
        unsigned char *C;
        for (i = pl->nb - 1; i >= 0; i--) {
            int L = pl->gb[i];
            bidx[L] = r % pl->size[L];
            r /= pl->size[L];
            offl += bidx[L] * pl->st[lhs][L];
            offr += bidx[L] * pl->st[rhs][L];
            offo += bidx[L] * pl->ost[L];
        }
        A = data[lhs] + offl * esz;
        B = data[rhs] + offr * esz;
        if (!pl->a_direct) {
            qmx__es_copy2d(pl, esz, A, pl->st[lhs], ws + pl->off_pa, dst_a, pl->gm, pl->nm, pl->gk, pl->nk);
            A = ws + pl->off_pa;
        }
        if (pl->b_mode == 2) {
            qmx__es_copy2d(pl, esz, B, pl->st[rhs], ws + pl->off_pb, dst_b, pl->gn, pl->nn, pl->gk, pl->nk);
            B = ws + pl->off_pb;
        } else if (pl->b_mode == 3) {
            qmx__es_copy2d(pl, esz, B, pl->st[rhs], ws + pl->off_pb, dst_b, pl->gk, pl->nk, pl->gn, pl->nn);
            B = ws + pl->off_pb;
        }
        C = pl->out_direct ? (unsigned char *)out + offo * 4 : ws + pl->off_c;
        if (pl->kind == QMX__ES_F32) {
            qmx__es_sgemm(pl->M, pl->N, pl->K, (const float *)(const void *)A, pl->lda,
                          (const float *)(const void *)B, pl->ldb, pl->b_mode == 1 || pl->b_mode == 3,
                          (float *)(void *)C, pl->N);
            if (pl->fsc) {
                float *sa = (float *)(void *)(ws + pl->off_sa), *sb = (float *)(void *)(ws + pl->off_sb);
                qmx__es_expand(pl, ops[lhs], lhs, pl->gm, pl->nm, pl->M, bidx, sa);
                qmx__es_expand(pl, ops[rhs], rhs, pl->gn, pl->nn, pl->N, bidx, sb);
                qmx__es_scale_out(pl->M, pl->N, (float *)(void *)C, pl->N, sa, sb);
            }
        } else if (pl->kind == QMX__ES_I32) {
            qmx_matmul_i8_opts mo;
            mo.a_zp = ops[lhs]->zero_point; mo.b_zp = ops[rhs]->zero_point;
            mo.b_layout = pl->b_mode == 1 ? QMX_B_KN : QMX_B_NK;
            mo.b_sums = NULL; mo.b_sums_len = 0; mo.executor = NULL;
            st = qmx_matmul_i8(pl->M, pl->N, pl->K, (const int8_t *)A, pl->lda, (const int8_t *)B,
                               pl->ldb, (int32_t *)(void *)C, pl->N, &mo, ws + pl->off_mm,
                               pl->mm_bytes);
            QMX_ASSERT(st == QMX_OK);
        } else {
            qmx_matmul_i8_f32_scales sc;
            float *sa = (float *)(void *)(ws + pl->off_sa), *sb = (float *)(void *)(ws + pl->off_sb);
            qmx__es_expand(pl, ops[lhs], lhs, pl->gm, pl->nm, pl->M, bidx, sa);
            qmx__es_expand(pl, ops[rhs], rhs, pl->gn, pl->nn, pl->N, bidx, sb);
            sc.a_scales = sa; sc.a_scales_len = pl->M * pl->nblk; sc.a_per_row = 1;
            sc.a_zp = ops[lhs]->zero_point;
            sc.b_scales = sb; sc.b_scales_len = pl->N * pl->nblk; sc.b_per_col = 1;
            sc.block_size = pl->bs;
            if (pl->b_mode == 1) { /* [K,N] view: qmx_matmul_i8_f32's tiles, B read in place */
                qmx__k_f32_ctx fx;
                size_t sw = 0;
                st = qmx__k_check_f32_scales(&sc, pl->M, pl->N, pl->K, &fx.nblk);
                QMX_ASSERT(st == QMX_OK);
                st = qmx_matmul_i8_f32_workspace_size(pl->M, pl->N, pl->K, &sw);
                QMX_ASSERT(st == QMX_OK);
                fx.s = &sc; fx.C = (float *)(void *)C; fx.ldc = pl->N;
                qmx__k_tiled(pl->M, pl->N, pl->K, (const int8_t *)A, pl->lda, (const int8_t *)B,
                             pl->ldb, 1, (int8_t *)(void *)(ws + pl->off_mm + sw), sc.a_zp, pl->bs,
                             ws + pl->off_mm, qmx__k_f32_stage, &fx);
            } else {
                st = qmx_matmul_i8_f32(pl->M, pl->N, pl->K, (const int8_t *)A, pl->lda,
                                       (const int8_t *)B, pl->ldb, (float *)(void *)C, pl->N, &sc,
                                       ws + pl->off_mm, pl->mm_bytes);
                QMX_ASSERT(st == QMX_OK);
            }
        }
        if (!pl->out_direct)
            qmx__es_copy2d(pl, 4, C, dst_c, (unsigned char *)out + offo * 4, pl->ost, pl->gm,
                           pl->nm, pl->gn, pl->nn);
    }
    (void)st;
}
static void qmx__es_task(void *arg, int task, int worker) {
    const qmx__es_job *j = (const qmx__es_job *)arg;
    /* outside the executor contract: nothing to run it with (documented) */
    if (task < 0 || (size_t)task >= j->pl->Bt || worker < 0 || worker >= j->pl->workers) return;
    qmx__es_batch(j, (size_t)task, j->ws ? j->ws + (size_t)worker * j->pl->slice : NULL);
}

/* Offset (elements, strides st by label) of index i of the group g (last label fastest). */
static size_t qmx__es_goff(const qmx__es_plan *pl, const unsigned char *g, int ng,
                           const size_t *st, size_t i) {
    size_t off = 0;
    int q;
    for (q = ng - 1; q >= 0; q--) {
        size_t d = pl->size[g[q]];
        off += (i % d) * st[g[q]];
        i /= d;
    }
    return off;
}

/* Blob with int8 activations: the kernel's pass 1 verdict on every activation block of X (in
 * place, through the plan's strides), before A is packed: qmx_compute_qparams per tensor
 * symmetric int8 gives a scale from the block's absmax alone, so the absmax's own is the same. */
static qmx_status qmx__es_bp_rows(const qmx__es_plan *pl, const float *X, const size_t *st) {
    qmx_qconfig cfg;
    size_t K = pl->K, sk = st[pl->lab[pl->blob][1]], m, k0, k,
           ab = pl->bwo.act_block && pl->bwo.act_block < K ? pl->bwo.act_block : K;
    qmx__k_dyn_cfg(&cfg);
    for (m = 0; m < pl->M; m++) {
        const float *x = X + qmx__es_goff(pl, pl->gm, pl->nm, st, m);
        for (k0 = 0; k0 < K; k0 += ab) {
            size_t k1 = K - k0 < ab ? K : k0 + ab;
            float am = 0.0f, s = 0.0f;
            for (k = k0; k < k1; k++) {
                float v = x[k * sk];
                if (v < 0.0f) v = -v;
                if (v > am) am = v;
            }
            if (qmx_compute_qparams(&cfg, &am, 1, &s, 1, NULL) != QMX_OK || !qmx__k_scale_ok(s))
                return QMX_ERR_ARG;
        }
    }
    return QMX_OK;
}

/* A blob operand (everything checked): A' packed if it is not an [M,K] view, then the blob
 * kernel on [M,N] (serial, tasks [tb, te) of qmx_matmul_tasks(M, N), or its _exec), into out
 * or the [M,N] tile, whose outputs (a range call's: its tasks' tiles) are then scattered. */
static void qmx__es_blob(const qmx__es_plan *pl, const qmx_einsum_operand *const ops[2],
                         const qmx_einsum_opts *opts, void *out, unsigned char *ws, int ranged,
                         size_t tb, size_t te) {
    const qmx_einsum_operand *w = ops[pl->blob];
    const float *X = (const float *)ops[pl->swap]->data;
    float *Y = pl->out_direct ? (float *)out : (float *)(void *)(ws + pl->off_c);
    size_t ds[QMX__ES_NLAB], t, m, n;
    qmx__par_mm c;
    qmx_status st;
    int i;
    for (i = 0; i < QMX__ES_NLAB; i++) ds[i] = 0;
    if (!pl->a_direct) {
        qmx__es_dense(pl, ds, pl->gm, pl->nm, pl->gk, pl->nk);
        qmx__es_copy2d(pl, 4, (const unsigned char *)X, pl->st[pl->swap], ws + pl->off_pa, ds,
                       pl->gm, pl->nm, pl->gk, pl->nk);
        X = (const float *)(const void *)(ws + pl->off_pa);
    }
    c = qmx__par_mk(pl->blob_f32 ? QMX__PAR_BPF : QMX__PAR_BPD, pl->M, pl->N, pl->K, X,
                    pl->lda, w->blockw_blob, w->blockw_blob_bytes, Y, pl->N);
    c.bwo = &pl->bwo;
    if (ranged)
        st = qmx__par_run(&c, tb, te, ws + pl->off_mm, pl->mm_bytes);
    else if (opts && opts->executor && opts->executor->workers >= 2)
        st = qmx__par_exec(&c, opts->executor, ws + pl->off_mm, pl->mm_bytes);
    else
        st = qmx__par_call(&c, 0, pl->M, 0, pl->N, QMX__PAR_RUN, ws + pl->off_mm, pl->mm_bytes);
    QMX_ASSERT(st == QMX_OK);
    (void)st;
    if (pl->out_direct) return;
    if (!ranged) {
        for (i = 0; i < QMX__ES_NLAB; i++) ds[i] = 0;
        qmx__es_dense(pl, ds, pl->gm, pl->nm, pl->gn, pl->nn);
        qmx__es_copy2d(pl, 4, (const unsigned char *)Y, ds, (unsigned char *)out, pl->ost,
                       pl->gm, pl->nm, pl->gn, pl->nn);
        return;
    }
    for (t = tb; t < te; t++) { /* task t: the tile at rows 64 (t / nc), columns 256 (t % nc) */
        size_t nc = pl->N / QMX_TASK_N + (pl->N % QMX_TASK_N != 0);
        size_t m0 = t / nc * QMX_TASK_M, n0 = t % nc * QMX_TASK_N;
        size_t m1 = pl->M - m0 < QMX_TASK_M ? pl->M : m0 + QMX_TASK_M;
        size_t n1 = pl->N - n0 < QMX_TASK_N ? pl->N : n0 + QMX_TASK_N;
        for (m = m0; m < m1; m++) {
            float *o = (float *)out + qmx__es_goff(pl, pl->gm, pl->nm, pl->ost, m);
            for (n = n0; n < n1; n++)
                o[qmx__es_goff(pl, pl->gn, pl->nn, pl->ost, n)] = Y[m * pl->N + n];
        }
    }
}

/* qmx_einsum (ranged 0) and qmx_einsum_run (ranged 1: batch indices [tb, te), the executor
 * of opts ignored) */
static qmx_status qmx__es_call(const char *spec, const qmx_einsum_operand *a,
                               const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                               void *out, size_t out_len, void *workspace,
                               size_t workspace_bytes, int *err_pos, int ranged, size_t tb,
                               size_t te) {
    qmx__es_plan pl;
    qmx__es_job job;
    qmx_einsum_opts serial;
    const qmx_einsum_operand *ops[2];
    qmx_status st;
    unsigned char *ws;
    const unsigned char *data[2];
    size_t bi;
    int o, i;
    if (err_pos) *err_pos = -1;
    if (ranged && opts) { serial = *opts; serial.executor = NULL; opts = &serial; }
    st = qmx__es_plan_all(spec, a, b, opts, &pl, err_pos);
    if (st != QMX_OK) return st;
    if (!out || (!workspace && pl.total) || (!a->data && pl.blob != 0) ||
        (!b->data && pl.blob != 1))
        return QMX_ERR_NULL;
    if ((a->mx && !a->scale_codes) || (b->mx && !b->scale_codes)) return QMX_ERR_NULL;
    ops[0] = a; ops[1] = b;
    if (out_len < pl.out_count) return QMX_ERR_BUFFER_TOO_SMALL;
    if (workspace_bytes < pl.total) return QMX_ERR_BUFFER_TOO_SMALL;
    /* data and scales: lengths, values */
    for (o = 0; o < 2; o++) {
        const qmx_einsum_operand *op = ops[o];
        qmx_dtype d = qmx__es_dt(op);
        size_t need, k;
        if (o == pl.blob) continue; /* its header and bytes: checked by the plan */
        if (pl.conv[o] == QMX__ES_CV_MX) { /* elements and codes as qmx_mx_storage counts them */
            qmx_mx_config c = qmx__es_mx_cfg(op);
            size_t ns = 0;
            st = qmx_mx_storage(&c, pl.count[o], &need, &ns);
            if (st != QMX_OK) return st; /* checked by the plan already */
            if (op->data_bytes < need || op->scale_codes_len < ns) return QMX_ERR_BUFFER_TOO_SMALL;
            if (!qmx__es_mx_finite(&c, d, (const uint8_t *)op->data, op->scale_codes))
                return QMX_ERR_NONFINITE;
            continue;
        }
        if (qmx_dtype_storage_bytes(d, pl.count[o], &need) != QMX_OK) return QMX_ERR_OVERFLOW;
        if (d == QMX_FLOAT32 && !qmx__es_mul(pl.count[o], 4, &need)) return QMX_ERR_OVERFLOW;
        if (op->data_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
        if (op->scales) {
            need = qmx__es_scales_need(op, &pl);
            if (need == 0) return QMX_ERR_OVERFLOW;
            if (op->scales_len < need) return QMX_ERR_BUFFER_TOO_SMALL;
            for (k = 0; k < need; k++) {
                float s = op->scales[k];
                if (!qmx__isfinite(s) || !(s > 0.0f)) return QMX_ERR_ARG;
            }
        }
        if (d == QMX_FLOAT32) {
            const float *p = (const float *)op->data;
            for (k = 0; k < pl.count[o]; k++)
                if (!qmx__isfinite(p[k])) return QMX_ERR_NONFINITE;
        } else if (pl.conv[o] == QMX__ES_CV_F8) {
            const uint8_t *p = (const uint8_t *)op->data;
            for (k = 0; k < pl.count[o]; k++)
                if (!qmx__isfinite(qmx_fp8_to_f32(p[k], d))) return QMX_ERR_NONFINITE;
        } else if (pl.conv[o] == QMX__ES_CV_BAKE) { /* NaN / Inf codes, products that overflow */
            if (!qmx__es_bake(op, pl.count[o], NULL)) return QMX_ERR_NONFINITE;
        }
    }
    if (pl.blob >= 0 && !pl.blob_f32) { /* int8 activations: every row's scales */
        st = qmx__es_bp_rows(&pl, (const float *)ops[pl.swap]->data, pl.st[pl.swap]);
        if (st != QMX_OK) return st;
    }
    if (ranged && (tb > te || te > pl.ntask)) return QMX_ERR_ARG;
    if (ranged && tb == te) return QMX_OK;
    /* from here on nothing can fail */
    ws = (unsigned char *)workspace; /* NULL when total is 0: then no region is used */
    if (ws) ws += (64u - ((size_t)((uintptr_t)ws & 63u))) & 63u;
    if (pl.blob >= 0) {
        qmx__es_blob(&pl, ops, opts, out, ws, ranged, tb, te);
        return QMX_OK;
    }
    for (o = 0; o < 2; o++) {
        qmx_dtype d = qmx__es_dt(ops[o]);
        float *f = pl.conv[o] ? (float *)(void *)(ws + pl.off_conv[o]) : NULL;
        data[o] = (const unsigned char *)ops[o]->data;
        if (pl.conv[o] == QMX__ES_CV_I4) {
            size_t pb = pl.count[o] / 2 + (pl.count[o] & 1);
            (void)qmx_unpack_int4(d, data[o], pb, pl.count[o], (int8_t *)(void *)(ws + pl.off_conv[o]));
        } else if (pl.conv[o] == QMX__ES_CV_I2) {
            size_t pb = pl.count[o] / 4 + ((pl.count[o] & 3) != 0);
            (void)qmx_unpack_int2(d, data[o], pb, pl.count[o], (int8_t *)(void *)f);
        } else if (pl.conv[o] == QMX__ES_CV_F8 || pl.conv[o] == QMX__ES_CV_DEC) {
            size_t k;
            for (k = 0; k < pl.count[o]; k++) f[k] = qmx__es_fdec(d, data[o], k);
        } else if (pl.conv[o] == QMX__ES_CV_BAKE) {
            (void)qmx__es_bake(ops[o], pl.count[o], f);
        } else if (pl.conv[o] == QMX__ES_CV_MX) {
            qmx_mx_config c = qmx__es_mx_cfg(ops[o]);
            st = qmx_mx_dequantize(&c, data[o], ops[o]->data_bytes, ops[o]->scale_codes,
                                   ops[o]->scale_codes_len, pl.count[o], f);
            QMX_ASSERT(st == QMX_OK);
        }
        if (pl.conv[o]) data[o] = ws + pl.off_conv[o];
    }
    job.pl = &pl; job.ops[0] = a; job.ops[1] = b; job.data[0] = data[0]; job.data[1] = data[1];
    job.out = out; job.ws = ws;
    job.lhs = pl.swap; job.rhs = 1 - pl.swap;
    job.esz = pl.kind == QMX__ES_F32 ? 4 : 1;
    for (i = 0; i < QMX__ES_NLAB; i++) job.dst_a[i] = job.dst_b[i] = job.dst_c[i] = 0;
    qmx__es_dense(&pl, job.dst_a, pl.gm, pl.nm, pl.gk, pl.nk);
    if (pl.b_mode == 3) qmx__es_dense(&pl, job.dst_b, pl.gk, pl.nk, pl.gn, pl.nn); /* [K,N] */
    else qmx__es_dense(&pl, job.dst_b, pl.gn, pl.nn, pl.gk, pl.nk);
    qmx__es_dense(&pl, job.dst_c, pl.gm, pl.nm, pl.gn, pl.nn);
    if (ranged)
        for (bi = tb; bi < te; bi++) qmx__es_batch(&job, bi, ws);
    else if (pl.workers >= 2)   /* a task per batch index (USING SEVERAL CORES) */
        opts->executor->parallel_for(opts->executor->pool, (int)pl.Bt, qmx__es_task, &job);
    else
        for (bi = 0; bi < pl.Bt; bi++) qmx__es_batch(&job, bi, ws);
    (void)st;
    return QMX_OK;
}
QMX_API qmx_status qmx_einsum(const char *spec, const qmx_einsum_operand *a,
                              const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                              void *out, size_t out_len, void *workspace,
                              size_t workspace_bytes, int *err_pos) {
    return qmx__es_call(spec, a, b, opts, out, out_len, workspace, workspace_bytes, err_pos, 0,
                        0, 0);
}
QMX_API qmx_status qmx_einsum_tasks(const char *spec, const qmx_einsum_operand *a,
                                    const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                                    size_t *n_tasks, int *err_pos) {
    qmx__es_plan pl;
    qmx_einsum_opts serial;
    qmx_status st;
    if (err_pos) *err_pos = -1;
    if (!n_tasks) return QMX_ERR_NULL;
    if (opts) { serial = *opts; serial.executor = NULL; opts = &serial; }
    st = qmx__es_plan_all(spec, a, b, opts, &pl, err_pos);
    if (st == QMX_OK) *n_tasks = pl.ntask;
    return st;
}
QMX_API qmx_status qmx_einsum_run(const char *spec, const qmx_einsum_operand *a,
                                  const qmx_einsum_operand *b, const qmx_einsum_opts *opts,
                                  void *out, size_t out_len, void *workspace,
                                  size_t workspace_bytes, size_t task_begin, size_t task_end,
                                  int *err_pos) {
    return qmx__es_call(spec, a, b, opts, out, out_len, workspace, workspace_bytes, err_pos, 1,
                        task_begin, task_end);
}

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION && !QMX__EINSUM_IMPLEMENTATION_DONE */

/* ============================================================================================
 * IMPLEMENTATION: KV CACHE AND ATTENTION DECODE
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__KV_IMPLEMENTATION_DONE)
#define QMX__KV_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

#define QMX__KV_MAGIC 0x716D786Bu

/* g++ 12 reports its own _mm512_undefined_* helpers as (maybe-)uninitialized once they are
 * inlined into functions with an optimize attribute: a false positive in the intrinsic
 * headers, silenced for this section only. */
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#  pragma GCC diagnostic ignored "-Wuninitialized"
#endif

/* Float functions below run with FMA contraction off (see ATTENTION DECODE). */
#if defined(__GNUC__) && !defined(__clang__)
#  define QMX__KV_STRICT __attribute__((optimize("fp-contract=off")))
#else
#  define QMX__KV_STRICT
#endif
#if defined(__clang__)
#  define QMX__KV_NOCONTRACT _Pragma("clang fp contract(off)")
/* clang's -ffp-contract=fast ignores the pragma: a product that feeds an add goes through an
 * empty asm (in its register), which no contraction can see through */
#  if defined(__x86_64__) || (defined(__i386__) && defined(__SSE_MATH__))
#    define QMX__KV_BAR(x) __asm__("" : "+x"(x))
#  elif defined(__aarch64__)
#    define QMX__KV_BAR(x) __asm__("" : "+w"(x))
#  else
#    define QMX__KV_BAR(x) __asm__("" : "+m"(x))
#  endif
#else
#  define QMX__KV_NOCONTRACT
#  define QMX__KV_BAR(x) ((void)0)
#endif

/* unaligned integer vector loads */
#define QMX__KV_L128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define QMX__KV_L64(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))
#define QMX__KV_L256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* a * b with overflow detection: 0 on overflow (callers pass nonzero a, b). */
static size_t qmx__kv_mul(size_t a, size_t b) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    return a * b;
}
static size_t qmx__kv_add(size_t a, size_t b) { return a > SIZE_MAX - b ? 0 : a + b; }

static int qmx__kv_dtype_ok(qmx_dtype d) {
    return d == QMX_INT8 || d == QMX_INT4 || d == QMX_FP8_E4M3FN || d == QMX_FP8_E5M2 ||
           d == QMX_FLOAT32;
}

/* Layout of one layer. */
typedef struct qmx__kv_layout {
    size_t row_k, row_v, n_ks, n_vs, n_res;
    size_t off_v, off_ks, off_vs, off_res, off_rot, layer_bytes;
} qmx__kv_layout;

static size_t qmx__kv_row_bytes(qmx_dtype d, size_t dim) {
    return d == QMX_INT4 ? dim / 2 : (d == QMX_FLOAT32 ? dim * 4 : dim);
}
/* bytes of one stored scale of a tensor with axis ax: 2 for 16-bit block scales, else 4 */
static size_t qmx__kv_sbytes(const qmx_kv_config *n, qmx_kv_axis ax) {
    return ax == QMX_KV_BLOCK && n->block_scale != QMX_KV_SCALE_F32 ? 2 : 4;
}

/* Normalises cfg into *n and computes the layout; every size checked for overflow. */
static qmx_status qmx__kv_plan(const qmx_kv_config *cfg, qmx_kv_config *n, qmx__kv_layout *L) {
    size_t rows, a, kd, vd;
    if (!cfg) return QMX_ERR_NULL;
    *n = *cfg;
    if (n->k_dtype == QMX_DTYPE_INVALID) n->k_dtype = QMX_INT8;
    if (n->v_dtype == QMX_DTYPE_INVALID) n->v_dtype = QMX_INT8;
    if (n->channel_block == 0) n->channel_block = QMX_KV_DEFAULT_CHANNEL_BLOCK;
    if (n->n_layers == 0) n->n_layers = 1;
    if (n->capacity == 0 || n->n_kv_heads == 0 || n->head_dim == 0) return QMX_ERR_SIZE;
    if (n->head_dim > QMX_KV_MAX_HEAD_DIM) return QMX_ERR_SIZE;
    if (!qmx__kv_dtype_ok(n->k_dtype) || !qmx__kv_dtype_ok(n->v_dtype)) return QMX_ERR_DTYPE;
    if ((unsigned)n->k_axis > 3u || (unsigned)n->v_axis > 3u || (unsigned)n->mode > 1u)
        return QMX_ERR_ARG;
    if (n->dim_block == 0) n->dim_block = QMX_KV_DEFAULT_DIM_BLOCK;
    if ((n->dim_block != 32 && n->dim_block != 64) || (unsigned)n->block_scale > 2u)
        return QMX_ERR_ARG;
    if (n->v_axis == QMX_KV_CHANNEL) return QMX_ERR_SHAPE;
    if ((n->k_dtype == QMX_INT4 || n->v_dtype == QMX_INT4) && (n->head_dim & 1u))
        return QMX_ERR_SHAPE;
    if (n->k_dtype == QMX_FLOAT32 && n->k_axis == QMX_KV_CHANNEL) n->k_axis = QMX_KV_HEADS_AND_DKV;
    /* float32 has no scales: a block axis on it is the default axis */
    if (n->k_dtype == QMX_FLOAT32 && n->k_axis == QMX_KV_BLOCK) n->k_axis = QMX_KV_HEADS_AND_DKV;
    if (n->v_dtype == QMX_FLOAT32 && n->v_axis == QMX_KV_BLOCK) n->v_axis = QMX_KV_HEADS_AND_DKV;
    if ((n->k_axis == QMX_KV_BLOCK || n->v_axis == QMX_KV_BLOCK) && n->head_dim % n->dim_block)
        return QMX_ERR_SHAPE;
    /* 16-bit scales are for block scales only: without a (quantized) block axis, an error */
    if (n->block_scale != QMX_KV_SCALE_F32 && n->k_axis != QMX_KV_BLOCK &&
        n->v_axis != QMX_KV_BLOCK)
        return QMX_ERR_ARG;
    if (n->k_axis == QMX_KV_CHANNEL && n->capacity % n->channel_block != 0) return QMX_ERR_SHAPE;
    if (n->rotate != 0 && n->rotate != 1) return QMX_ERR_ARG;
    if (n->rotate && (n->head_dim & (n->head_dim - 1))) return QMX_ERR_SHAPE;
    L->row_k = qmx__kv_row_bytes(n->k_dtype, n->head_dim);
    L->row_v = qmx__kv_row_bytes(n->v_dtype, n->head_dim);
    rows = qmx__kv_mul(n->n_kv_heads, n->capacity);
    if (!rows || !qmx__kv_mul(n->head_dim, 4)) return QMX_ERR_OVERFLOW;
    kd = qmx__kv_mul(rows, L->row_k);
    vd = qmx__kv_mul(rows, L->row_v);
    if (!kd || !vd) return QMX_ERR_OVERFLOW;
    L->n_ks = n->k_dtype == QMX_FLOAT32 ? 0
            : n->k_axis == QMX_KV_HEADS_AND_DKV ? n->capacity
            : n->k_axis == QMX_KV_DKV ? rows
            : n->k_axis == QMX_KV_BLOCK ? rows * (n->head_dim / n->dim_block)  /* < kd */
            : qmx__kv_mul(n->n_kv_heads * (n->capacity / n->channel_block), n->head_dim);
    L->n_vs = n->v_dtype == QMX_FLOAT32 ? 0
            : n->v_axis == QMX_KV_HEADS_AND_DKV ? n->capacity
            : n->v_axis == QMX_KV_BLOCK ? rows * (n->head_dim / n->dim_block) : rows;
    L->n_res = n->k_axis == QMX_KV_CHANNEL
             ? qmx__kv_mul(qmx__kv_mul(n->n_kv_heads, n->channel_block), n->head_dim) : 0;
    if (n->k_axis == QMX_KV_CHANNEL && (!L->n_ks || !L->n_res)) return QMX_ERR_OVERFLOW;
    if (!qmx__kv_mul(L->n_ks, 4) && L->n_ks) return QMX_ERR_OVERFLOW;
    if (!qmx__kv_mul(L->n_res, 4) && L->n_res) return QMX_ERR_OVERFLOW;
    if (L->n_vs > SIZE_MAX / 4) return QMX_ERR_OVERFLOW;
    /* every r64 below adds < 64 to a value < SIZE_MAX - 64 * 8: check the sums */
    a = qmx__k_r64(kd);                           if (a < kd) return QMX_ERR_OVERFLOW;
    L->off_v = a;
    a = qmx__kv_add(a, qmx__k_r64(vd));           if (!a) return QMX_ERR_OVERFLOW;
    L->off_ks = a;
    a = qmx__kv_add(a, qmx__k_r64(L->n_ks * qmx__kv_sbytes(n, n->k_axis)));
    if (!a) return QMX_ERR_OVERFLOW;
    L->off_vs = a;
    a = qmx__kv_add(a, qmx__k_r64(L->n_vs * qmx__kv_sbytes(n, n->v_axis)));
    if (!a) return QMX_ERR_OVERFLOW;
    L->off_res = a;
    a = qmx__kv_add(a, qmx__k_r64(L->n_res * 4)); if (!a) return QMX_ERR_OVERFLOW;
    L->off_rot = a;
    if (n->rotate) {   /* one token of K and V: [2][n_kv_heads][head_dim] float */
        size_t r = qmx__kv_mul(qmx__kv_mul(2 * n->n_kv_heads, n->head_dim), 4);
        if (!r || r > SIZE_MAX - 64) return QMX_ERR_OVERFLOW;
        a = qmx__kv_add(a, qmx__k_r64(r));        if (!a) return QMX_ERR_OVERFLOW;
    }
    if (a > SIZE_MAX - 64) return QMX_ERR_OVERFLOW;
    L->layer_bytes = a;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_cache_storage_size(const qmx_kv_config *cfg, size_t *bytes) {
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t t;
    qmx_status st;
    if (!cfg || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    t = qmx__kv_mul(n.n_layers, L.layer_bytes);
    if (!t || t > SIZE_MAX - 64) return QMX_ERR_OVERFLOW;
    *bytes = 64 + t;
    return QMX_OK;
}

QMX__DEF size_t qmx_kv_cache_bytes_per_token(const qmx_kv_config *cfg) {
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t b;
    if (!cfg || qmx__kv_plan(cfg, &n, &L) != QMX_OK) return 0;
    b = n.n_kv_heads * (L.row_k + L.row_v) + qmx__kv_sbytes(&n, n.v_axis) * (L.n_vs / n.capacity);
    if (n.k_axis == QMX_KV_CHANNEL) b += 4 * n.n_kv_heads * n.head_dim / n.channel_block;
    else b += qmx__kv_sbytes(&n, n.k_axis) * (L.n_ks / n.capacity);
    return b;
}

QMX__DEF qmx_status qmx_kv_cache_init_layer(qmx_kv_cache *c, const qmx_kv_config *cfg,
                                            void *storage, size_t storage_bytes, size_t layer) {
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t need;
    unsigned char *base;
    qmx_status st;
    if (!c || !cfg || !storage) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    st = qmx_kv_cache_storage_size(cfg, &need);
    if (st != QMX_OK) return st;
    if (layer >= n.n_layers) return QMX_ERR_ARG;
    if (storage_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    base = (unsigned char *)storage;
    base += (64u - ((size_t)((uintptr_t)base & 63u))) & 63u;
    base += layer * L.layer_bytes;
    c->cfg = n;
    c->row_k = L.row_k;
    c->row_v = L.row_v;
    c->n_tokens = 0;
    c->k = base;
    c->v = base + L.off_v;
    c->k_scales = L.n_ks ? (float *)(void *)(base + L.off_ks) : NULL;
    c->v_scales = L.n_vs ? (float *)(void *)(base + L.off_vs) : NULL;
    c->k_resid = L.n_res ? (float *)(void *)(base + L.off_res) : NULL;
    c->rot = n.rotate ? (float *)(void *)(base + L.off_rot) : NULL;
    c->magic = QMX__KV_MAGIC;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_cache_init(qmx_kv_cache *c, const qmx_kv_config *cfg, void *storage,
                                      size_t storage_bytes) {
    return qmx_kv_cache_init_layer(c, cfg, storage, storage_bytes, 0);
}

static int qmx__kv_valid(const qmx_kv_cache *c) { return c->magic == QMX__KV_MAGIC && c->k; }

QMX__DEF qmx_status qmx_kv_cache_reset(qmx_kv_cache *c) {
    if (!c) return QMX_ERR_NULL;
    if (!qmx__kv_valid(c)) return QMX_ERR_ARG;
    c->n_tokens = 0;
    return QMX_OK;
}

/* ---- quantize on append ---- */
static void qmx__kv_qcfg(qmx_qconfig *q, qmx_dtype dt) {
    qmx_qconfig z = QMX_ZERO_INIT;
    *q = z;
    q->dtype = dt;
    q->recipe = QMX_RECIPE_QWIX;
}

/* ---- QMX_KV_BLOCK: per-block scales, float32 or 16-bit (see 16-BIT BLOCK SCALES) ---- */
static float qmx__kv_s16_val(uint16_t h, qmx_kv_scale_format f) {
    if (f == QMX_KV_SCALE_F16) {   /* normal binary16 inline (qmx_f16_to_f32's own formula) */
        uint32_t e = (h >> 10) & 0x1Fu;
        if (e != 0 && e != 0x1Fu)
            return qmx__bits_f32(((uint32_t)(h & 0x8000u) << 16) | ((e + 112u) << 23) |
                                 ((uint32_t)(h & 0x3FFu) << 13));
        return qmx_f16_to_f32(h);
    }
    return qmx_bf16_to_f32(h);
}
/* The 16-bit code of the smallest value >= s (s > 0 finite, not above the format's largest
 * finite value: see qmx__kv_check_append): round to nearest even, then one code up if that
 * fell below s (positive codes are ordered like their values). */
static uint16_t qmx__kv_s16_up(float s, qmx_kv_scale_format f) {
    uint16_t h = f == QMX_KV_SCALE_F16 ? qmx_f32_to_f16(s) : qmx_f32_to_bf16(s);
    if (qmx__kv_s16_val(h, f) < s) h = (uint16_t)(h + 1u);
    return h;
}
/* Block scale i of a tensor's scale array (float32 or 16-bit codes), exactly as a float. */
static float qmx__kv_bscale(const qmx_kv_config *n, const float *sc, size_t i) {
    if (n->block_scale == QMX_KV_SCALE_F32) return sc[i];
    return qmx__kv_s16_val(((const uint16_t *)(const void *)sc)[i], n->block_scale);
}
/* One token x [heads][dim] with block scales: per head h and block b (dim_block elements),
 * s = absmax / B (Qwix, as the other axes), rounded up to the 16-bit format when it is one,
 * codes = quantize(x, s) with that stored s; an int8 / int4 block of all-zero codes stores
 * scale 0. Row of head h at row0 + h * capacity * row; scale at ((h * cap + slot) * nb + b). */
static void qmx__kv_store_blocks(const qmx_kv_cache *c, qmx_dtype dt, const float *x,
                                 unsigned char *row0, size_t row, float *sc, size_t slot) {
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, db = n->dim_block, nb = d / db, h, b, i;
    size_t bb = dt == QMX_INT4 ? db / 2 : db;   /* bytes of one block */
    uint16_t *s16 = (uint16_t *)(void *)sc;
    qmx_qconfig q;
    qmx__kv_qcfg(&q, dt);
    for (h = 0; h < n->n_kv_heads; h++)
        for (b = 0; b < nb; b++) {
            const float *xb = x + h * d + b * db;
            unsigned char *dst = row0 + h * n->capacity * row + b * bb;
            size_t si = (h * n->capacity + slot) * nb + b;
            uint16_t code = 0;
            float s = 1.0f;
            int nz = 1;
            (void)qmx_compute_qparams(&q, xb, db, &s, 1, NULL);
            if (n->block_scale != QMX_KV_SCALE_F32) {
                code = qmx__kv_s16_up(s, n->block_scale);
                s = qmx__kv_s16_val(code, n->block_scale);
            }
            (void)qmx_quantize(&q, xb, db, &s, 1, NULL, dst, bb);
            if (dt == QMX_INT8 || dt == QMX_INT4) {
                nz = 0;
                for (i = 0; i < bb; i++) nz |= dst[i];
            }
            if (n->block_scale == QMX_KV_SCALE_F32) sc[si] = nz ? s : 0.0f;
            else s16[si] = nz ? code : (uint16_t)0;
        }
}

/* Stores one token x [heads][dim] of one tensor (K or V) at `slot`, per-token scales. */
static void qmx__kv_store_token(const qmx_kv_cache *c, int is_k, const float *x, size_t slot) {
    const qmx_kv_config *n = &c->cfg;
    qmx_dtype dt = is_k ? n->k_dtype : n->v_dtype;
    qmx_kv_axis ax = is_k ? n->k_axis : n->v_axis;
    unsigned char *data = is_k ? c->k : c->v;
    float *sc = is_k ? c->k_scales : c->v_scales;
    size_t row = is_k ? c->row_k : c->row_v, d = n->head_dim, h;
    qmx_qconfig q;
    float s_tok = 1.0f;
    if (dt == QMX_FLOAT32) {
        for (h = 0; h < n->n_kv_heads; h++) {
            float *dst = (float *)(void *)(data + (h * n->capacity + slot) * row);
            size_t i;
            for (i = 0; i < d; i++) dst[i] = x[h * d + i];
        }
        return;
    }
    qmx__kv_qcfg(&q, dt);
    if (ax == QMX_KV_BLOCK) {
        qmx__kv_store_blocks(c, dt, x, data + slot * row, row, sc, slot);
        return;
    }
    if (ax == QMX_KV_HEADS_AND_DKV) {
        (void)qmx_compute_qparams(&q, x, n->n_kv_heads * d, &s_tok, 1, NULL);
        sc[slot] = s_tok;
    }
    for (h = 0; h < n->n_kv_heads; h++) {
        float s = s_tok;
        if (ax == QMX_KV_DKV) {
            (void)qmx_compute_qparams(&q, x + h * d, d, &s, 1, NULL);
            sc[h * n->capacity + slot] = s;
        }
        (void)qmx_quantize(&q, x + h * d, d, &s, 1, NULL, data + (h * n->capacity + slot) * row,
                           row);
    }
    if (dt == QMX_INT8 || dt == QMX_INT4) {
        /* a group whose codes are all zero stores scale 0 (it reads back as zeros either
         * way): in the integer value sums its tokens then weigh 0 instead of the guard's 1 */
        int any = 0;
        for (h = 0; h < n->n_kv_heads; h++) {
            const unsigned char *r = data + (h * n->capacity + slot) * row;
            size_t i;
            int nz = 0;
            for (i = 0; i < row; i++) nz |= r[i];
            if (ax == QMX_KV_DKV && !nz) sc[h * n->capacity + slot] = 0.0f;
            any |= nz;
        }
        if (ax == QMX_KV_HEADS_AND_DKV && !any) sc[slot] = 0.0f;
    }
}

/* KIVI: key of position p into the residual; quantize the block when it completes. */
static void qmx__kv_store_key_channel(const qmx_kv_cache *c, const float *x, size_t p) {
    const qmx_kv_config *n = &c->cfg;
    size_t G = n->channel_block, d = n->head_dim, h, i;
    size_t r = p % G;
    for (h = 0; h < n->n_kv_heads; h++)
        for (i = 0; i < d; i++) c->k_resid[(h * G + r) * d + i] = x[h * d + i];
    if (r == G - 1) {
        size_t slot0 = (p + 1 - G) % n->capacity, blk = slot0 / G;
        qmx_qconfig q;
        qmx__kv_qcfg(&q, n->k_dtype);
        q.granularity = QMX_PER_CHANNEL;
        q.outer = G; q.axis_len = d; q.inner = 1;
        for (h = 0; h < n->n_kv_heads; h++) {
            const float *res = c->k_resid + h * G * d;
            float *s = c->k_scales + (h * (n->capacity / G) + blk) * d;
            (void)qmx_compute_qparams(&q, res, G * d, s, d, NULL);
            (void)qmx_quantize(&q, res, G * d, s, d, NULL,
                               c->k + (h * n->capacity + slot0) * c->row_k, G * c->row_k);
        }
    }
}

static int qmx__kv_all_finite(const float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (!qmx__isfinite(x[i])) return 0;
    return 1;
}

static qmx_status qmx__kv_check_append(const qmx_kv_cache *c, const float *k, const float *v,
                                       size_t n_tok) {
    size_t per, tot;
    if (!c || !k || !v) return QMX_ERR_NULL;
    if (!qmx__kv_valid(c)) return QMX_ERR_ARG;
    if (n_tok == 0) return QMX_ERR_SIZE;
    if (c->n_tokens > SIZE_MAX - n_tok) return QMX_ERR_OVERFLOW;
    if (c->cfg.mode == QMX_KV_LINEAR && c->n_tokens + n_tok > c->cfg.capacity)
        return QMX_ERR_BUFFER_TOO_SMALL;
    per = c->cfg.n_kv_heads * c->cfg.head_dim;    /* fits: the storage holds it */
    tot = qmx__kv_mul(per, n_tok);
    if (!tot || tot > SIZE_MAX / 4) return QMX_ERR_OVERFLOW;
    if (!qmx__kv_all_finite(k, tot) || !qmx__kv_all_finite(v, tot)) return QMX_ERR_NONFINITE;
    if (c->cfg.rotate) {   /* |H x| <= d max|x|: keep it finite */
        float lim = FLT_MAX / (float)(2 * c->cfg.head_dim);
        size_t i;
        for (i = 0; i < tot; i++)
            if (qmx__fabs(k[i]) > lim || qmx__fabs(v[i]) > lim) return QMX_ERR_OVERFLOW;
    }
    if (c->cfg.block_scale == QMX_KV_SCALE_F16) {
        /* binary16 block scales: absmax / B must not exceed 65504 (rotate: d max|x| bounds
         * |H x|, exactly, the rounded butterflies included); 65504 B / d is exact */
        int w;
        for (w = 0; w < 2; w++) {
            qmx_dtype dt = w ? c->cfg.v_dtype : c->cfg.k_dtype;
            const float *x = w ? v : k;
            float lim;
            size_t i, dd;
            if ((w ? c->cfg.v_axis : c->cfg.k_axis) != QMX_KV_BLOCK) continue;
            lim = 65504.0f * (dt == QMX_INT8 ? 127.5f : dt == QMX_INT4 ? 7.5f
                              : dt == QMX_FP8_E4M3FN ? 448.0f : 57344.0f);
            if (c->cfg.rotate)
                for (dd = c->cfg.head_dim; dd > 1; dd >>= 1) lim = lim * 0.5f;
            for (i = 0; i < tot; i++)
                if (qmx__fabs(x[i]) > lim) return QMX_ERR_OVERFLOW;
        }
    }
    return QMX_OK;
}

/* In-place fast Walsh-Hadamard transform (unnormalized: H H = d I), butterflies in the fixed
 * order h = 1, 2, 4, ...; adds and subtracts only. */
QMX__KV_STRICT static void qmx__kv_fwht(float *x, size_t d) {
    QMX__KV_NOCONTRACT
    size_t len, i, j;
    for (len = 1; len < d; len <<= 1)
        for (i = 0; i < d; i += len << 1)
            for (j = i; j < i + len; j++) {
                float a = x[j], b = x[j + len], s = a + b, t = a - b;
                x[j] = s;
                x[j + len] = t;
            }
}
/* 1/d for d a power of two, exactly. */
static float qmx__kv_inv_pow2(size_t d) {
    int e = 0;
    while (((size_t)1 << e) < d) e++;
    return qmx__bits_f32((uint32_t)(127 - e) << 23);
}
/* x [heads][d] <- H x / d per head (the inverse of the rotation). */
QMX__KV_STRICT static void qmx__kv_unrotate(float *x, size_t heads, size_t d) {
    QMX__KV_NOCONTRACT
    float s = qmx__kv_inv_pow2(d);
    size_t h, i;
    for (h = 0; h < heads; h++) {
        qmx__kv_fwht(x + h * d, d);
        for (i = 0; i < d; i++) x[h * d + i] = x[h * d + i] * s;
    }
}

static void qmx__kv_append_one(qmx_kv_cache *c, const float *k, const float *v) {
    size_t p = c->n_tokens, slot = p % c->cfg.capacity;
    if (c->cfg.rotate) {   /* H k and H v per head, in the storage's scratch token */
        size_t per = c->cfg.n_kv_heads * c->cfg.head_dim, i, hh;
        float *rk = c->rot, *rv = c->rot + per;
        for (i = 0; i < per; i++) { rk[i] = k[i]; rv[i] = v[i]; }
        for (hh = 0; hh < c->cfg.n_kv_heads; hh++) {
            qmx__kv_fwht(rk + hh * c->cfg.head_dim, c->cfg.head_dim);
            qmx__kv_fwht(rv + hh * c->cfg.head_dim, c->cfg.head_dim);
        }
        k = rk;
        v = rv;
    }
    if (c->cfg.k_axis == QMX_KV_CHANNEL && c->cfg.k_dtype != QMX_FLOAT32)
        qmx__kv_store_key_channel(c, k, p);
    else
        qmx__kv_store_token(c, 1, k, slot);
    qmx__kv_store_token(c, 0, v, slot);
    c->n_tokens = p + 1;
}

QMX__DEF qmx_status qmx_kv_cache_append(qmx_kv_cache *c, const float *k, const float *v,
                                        size_t n_tok) {
    size_t per, t;
    qmx_status st = qmx__kv_check_append(c, k, v, n_tok);
    if (st != QMX_OK) return st;
    per = c->cfg.n_kv_heads * c->cfg.head_dim;
    for (t = 0; t < n_tok; t++) qmx__kv_append_one(c, k + t * per, v + t * per);
    return QMX_OK;
}

/* Oldest position still held. */
static size_t qmx__kv_oldest(const qmx_kv_cache *c) {
    return c->n_tokens > c->cfg.capacity ? c->n_tokens - c->cfg.capacity : 0;
}
/* First position of the KIVI block still in the residual. */
static size_t qmx__kv_completed(const qmx_kv_cache *c) {
    return c->n_tokens / c->cfg.channel_block * c->cfg.channel_block;
}
static int qmx__kv_is_channel(const qmx_kv_cache *c) {
    return c->cfg.k_axis == QMX_KV_CHANNEL && c->cfg.k_dtype != QMX_FLOAT32;
}

/* Decodes one stored row (no scale) to float. */
static void qmx__kv_decode_row(qmx_dtype dt, const unsigned char *src, size_t d, float *y) {
    size_t i;
    if (dt == QMX_FLOAT32) {
        const float *f = (const float *)(const void *)src;
        for (i = 0; i < d; i++) y[i] = f[i];
    } else if (dt == QMX_INT8) {
        for (i = 0; i < d; i++) y[i] = (float)(int8_t)src[i];
    } else if (dt == QMX_INT4) {
        for (i = 0; i < d; i++) y[i] = (float)qmx__get_nibble(src, i, 1);
    } else {
        for (i = 0; i < d; i++) y[i] = qmx_fp8_to_f32(src[i], dt);
    }
}

QMX__DEF qmx_status qmx_kv_cache_read(const qmx_kv_cache *c, size_t pos, size_t n_tok,
                                      float *k_out, float *v_out) {
    const qmx_kv_config *n;
    size_t t, h, i, d, per;
    if (!c || (!k_out && !v_out)) return QMX_ERR_NULL;
    if (!qmx__kv_valid(c)) return QMX_ERR_ARG;
    if (n_tok == 0) return QMX_ERR_SIZE;
    if (pos > SIZE_MAX - n_tok || pos < qmx__kv_oldest(c) || pos + n_tok > c->n_tokens)
        return QMX_ERR_ARG;
    n = &c->cfg;
    d = n->head_dim;
    per = n->n_kv_heads * d;
    for (t = 0; t < n_tok; t++) {
        size_t p = pos + t, slot = p % n->capacity;
        for (h = 0; h < n->n_kv_heads; h++) {
            if (k_out) {
                float *y = k_out + t * per + h * d;
                if (qmx__kv_is_channel(c) && p >= qmx__kv_completed(c)) {
                    const float *r = c->k_resid + (h * n->channel_block + p % n->channel_block) * d;
                    for (i = 0; i < d; i++) y[i] = r[i];
                } else {
                    qmx__kv_decode_row(n->k_dtype, c->k + (h * n->capacity + slot) * c->row_k, d,
                                       y);
                    if (qmx__kv_is_channel(c)) {
                        const float *s = c->k_scales +
                            (h * (n->capacity / n->channel_block) + slot / n->channel_block) * d;
                        for (i = 0; i < d; i++) y[i] = y[i] * s[i];
                    } else if (n->k_axis == QMX_KV_BLOCK) {   /* code x stored block scale */
                        size_t db = n->dim_block, s0 = (h * n->capacity + slot) * (d / db);
                        for (i = 0; i < d; i++)
                            y[i] = y[i] * qmx__kv_bscale(n, c->k_scales, s0 + i / db);
                    } else if (n->k_dtype != QMX_FLOAT32) {
                        size_t si = n->k_axis == QMX_KV_DKV ? h * n->capacity + slot : slot;
                        float s = c->k_scales[si];
                        for (i = 0; i < d; i++) y[i] = y[i] * s;
                    }
                }
            }
            if (v_out) {
                float *y = v_out + t * per + h * d;
                qmx__kv_decode_row(n->v_dtype, c->v + (h * n->capacity + slot) * c->row_v, d, y);
                if (n->v_axis == QMX_KV_BLOCK) {
                    size_t db = n->dim_block, s0 = (h * n->capacity + slot) * (d / db);
                    for (i = 0; i < d; i++)
                        y[i] = y[i] * qmx__kv_bscale(n, c->v_scales, s0 + i / db);
                } else if (n->v_dtype != QMX_FLOAT32) {
                    float s = c->v_scales[n->v_axis == QMX_KV_DKV ? h * n->capacity + slot : slot];
                    for (i = 0; i < d; i++) y[i] = y[i] * s;
                }
            }
        }
        if (n->rotate) {   /* back from the rotated basis */
            if (k_out) qmx__kv_unrotate(k_out + t * per, n->n_kv_heads, d);
            if (v_out) qmx__kv_unrotate(v_out + t * per, n->n_kv_heads, d);
        }
    }
    return QMX_OK;
}

/* ---- exp and 1/sqrt ---- */
/* Every float constant is written as the exact decimal value of a float: under x87
 * (FLT_EVAL_METHOD 2) or s390x a constant that is not a float would be used with excess
 * precision and change the bits. */
#define QMX__KV_EXP_LO (-87.3365020751953125f)      /* 0xC2AEAC4A */
#define QMX__KV_EXP_HI 88.72283172607421875f        /* 0x42B17217 */
#define QMX__KV_LOG2E 1.44269502162933349609375f    /* 0x3FB8AA3B */
#define QMX__KV_C2 (-0.000212194441701285541057586669921875f)
#define QMX__KV_P0 0.000198756912141107022762298583984375f
#define QMX__KV_P1 0.00139819993637502193450927734375f
#define QMX__KV_P2 0.008333452045917510986328125f
#define QMX__KV_P3 0.0416657961905002593994140625f
#define QMX__KV_P4 0.1666666567325592041015625f
#define QMX__KV_P5 0.5f

/* e^x for x in [QMX__KV_EXP_LO, 88.37]: the documented sequence, one rounded op per line. */
QMX__KV_STRICT static float qmx__kv_exp_core(float x, int *n_out) {
    QMX__KV_NOCONTRACT
    float t, n, r, p, z, a;
    t = x * QMX__KV_LOG2E;
    n = t + 12582912.0f;
    n = n - 12582912.0f;
    a = n * 0.693359375f; QMX__KV_BAR(a);
    r = x - a;
    a = n * QMX__KV_C2; QMX__KV_BAR(a);
    r = r - a;
    z = r * r;
    p = QMX__KV_P0;
    p = p * r; QMX__KV_BAR(p); p = p + QMX__KV_P1;
    p = p * r; QMX__KV_BAR(p); p = p + QMX__KV_P2;
    p = p * r; QMX__KV_BAR(p); p = p + QMX__KV_P3;
    p = p * r; QMX__KV_BAR(p); p = p + QMX__KV_P4;
    p = p * r; QMX__KV_BAR(p); p = p + QMX__KV_P5;
    p = p * z; QMX__KV_BAR(p);
    p = p + r;
    p = p + 1.0f;
    *n_out = (int)n;
    return p;
}

QMX__KV_STRICT QMX__DEF float qmx_kv_exp(float x) {
    QMX__KV_NOCONTRACT
    int n;
    float p;
    if (qmx__isnan(x)) return x;
    if (x > QMX__KV_EXP_HI) return qmx__bits_f32(0x7F800000u);
    if (x < QMX__KV_EXP_LO) return 0.0f;
    p = qmx__kv_exp_core(x, &n);
    if (n > 127) {
        p = p * qmx__bits_f32((uint32_t)(127 + 127) << 23);
        return p * 2.0f;
    }
    return p * qmx__bits_f32((uint32_t)(n + 127) << 23);
}

/* RN(1/sqrt(n)): Newton in float, then an exact integer correction to the nearest float. */
QMX__KV_STRICT QMX__DEF float qmx_kv_inv_sqrt(size_t nn) {
    QMX__KV_NOCONTRACT
    float x, y, h;
    uint32_t b, M;
    int e, k, it;
    uint64_t d, lim;
    if (nn == 0 || nn > QMX_KV_MAX_HEAD_DIM) return 0.0f;
    x = (float)nn;
    y = qmx__bits_f32(0x5F3759DFu - (qmx__f32_bits(x) >> 1));
    for (it = 0; it < 4; it++) {
        h = x * y; h = h * y; h = h * 0.5f; QMX__KV_BAR(h); h = 1.5f - h; y = y * h;
    }
    b = qmx__f32_bits(y);
    e = (int)(b >> 23) - 127;
    M = (b & 0x7FFFFFu) | 0x800000u;  /* y = M * 2^-k */
    k = 23 - e;
    if (k < 23 || k > 30) return y;   /* cannot happen for n in range (y in (2^-7, 1]) */
    d = (uint64_t)nn;
    lim = (uint64_t)1 << (2 * k + 2); /* 1/sqrt(n) vs (2M +- 1) 2^-(k+1): compare squares */
    while ((uint64_t)(2 * M + 1) * (2 * M + 1) * d < lim) M++;
    while (M > 0 && (uint64_t)(2 * M - 1) * (2 * M - 1) * d > lim) M--;
    return (float)M * qmx__bits_f32((uint32_t)(127 - k) << 23);
}

/* ---- hot loops: each has a scalar definition and SIMD paths with the same bits ---- */

/* Exact int32 dot of two int8 rows. */
static int32_t qmx__kv_dot_i8(const int8_t *a, const int8_t *b, size_t n) {
    size_t i = 0;
    int32_t s = 0;
#if defined(QMX__AVX512)
    {
        __m512i acc = _mm512_setzero_si512();
        for (; i + 32 <= n; i += 32) {
            __m512i x = _mm512_cvtepi8_epi16(QMX__KV_L256((a + i)));
            __m512i y = _mm512_cvtepi8_epi16(QMX__KV_L256((b + i)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, y));
        }
        s = _mm512_reduce_add_epi32(acc);
    }
#elif defined(QMX__AVX2)
    {
        __m256i acc = _mm256_setzero_si256();
        __m128i t;
        for (; i + 16 <= n; i += 16) {
            __m256i x = _mm256_cvtepi8_epi16(QMX__KV_L128((a + i)));
            __m256i y = _mm256_cvtepi8_epi16(QMX__KV_L128((b + i)));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
        }
        t = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
        t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
        s = _mm_cvtsi128_si32(t);
    }
#elif defined(QMX__NEON64)
    {
        int32x4_t acc = vdupq_n_s32(0);
        for (; i + 16 <= n; i += 16) {
            int8x16_t x = vld1q_s8(a + i), y = vld1q_s8(b + i);
#if defined(QMX__K_NEONDOT)
            acc = vdotq_s32(acc, x, y);
#else
            acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
            acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(x), vget_high_s8(y)));
#endif
        }
        s = vaddvq_s32(acc);
    }
#elif defined(QMX__RVV)
    {   /* vsetvl strips: vwmul (int16 products), tail-undisturbed vwadd.wv, one vredsum */
        const size_t vlm = __riscv_vsetvlmax_e8m1();
        vint32m4_t acc = __riscv_vmv_v_x_i32m4(0, vlm);
        size_t vl;
        for (; i < n; i += vl) {
            vint8m1_t x, y;
            vl = __riscv_vsetvl_e8m1(n - i);
            x = __riscv_vle8_v_i8m1(a + i, vl);
            y = __riscv_vle8_v_i8m1(b + i, vl);
            acc = __riscv_vwadd_wv_i32m4_tu(acc, acc, __riscv_vwmul_vv_i16m2(x, y, vl), vl);
        }
        s = __riscv_vmv_x_s_i32m1_i32(
            __riscv_vredsum_vs_i32m4_i32m1(acc, __riscv_vmv_v_x_i32m1(0, 1), vlm));
    }
#endif
    for (; i < n; i++) s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

/* Folds 16 lanes in the documented order. */
QMX__KV_STRICT static float qmx__kv_fold16(float *l) {
    QMX__KV_NOCONTRACT
    int j;
    for (j = 0; j < 8; j++) l[j] = l[j] + l[j + 8];
    for (j = 0; j < 4; j++) l[j] = l[j] + l[j + 4];
    for (j = 0; j < 2; j++) l[j] = l[j] + l[j + 2];
    l[0] = l[0] + l[1];
    return l[0];
}

/* dot16 of two float rows. */
QMX__KV_STRICT static float qmx__kv_dot_f32(const float *a, const float *b, size_t n) {
    QMX__KV_NOCONTRACT
    float l[16];
    size_t i = 0, j;
    for (j = 0; j < 16; j++) l[j] = 0.0f;
#if defined(QMX__AVX512)
    {
        __m512 acc = _mm512_setzero_ps();
        for (; i + 16 <= n; i += 16) {
            __m512 t = _mm512_mul_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
            QMX__KV_BAR(t);
            acc = _mm512_add_ps(acc, t);
        }
        _mm512_storeu_ps(l, acc);
    }
#elif defined(QMX__AVX2)
    {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (; i + 16 <= n; i += 16) {
            __m256 t0 = _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
            __m256 t1 = _mm256_mul_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
            QMX__KV_BAR(t0);
            QMX__KV_BAR(t1);
            a0 = _mm256_add_ps(a0, t0);
            a1 = _mm256_add_ps(a1, t1);
        }
        _mm256_storeu_ps(l, a0);
        _mm256_storeu_ps(l + 8, a1);
    }
#elif defined(QMX__NEON64)
    {
        float32x4_t c[4];
        int r;
        for (r = 0; r < 4; r++) c[r] = vdupq_n_f32(0.0f);
        for (; i + 16 <= n; i += 16)
            for (r = 0; r < 4; r++) {
                float32x4_t t = vmulq_f32(vld1q_f32(a + i + 4 * r), vld1q_f32(b + i + 4 * r));
                QMX__KV_BAR(t);
                c[r] = vaddq_f32(c[r], t);
            }
        for (r = 0; r < 4; r++) vst1q_f32(l + 4 * r, c[r]);
    }
#endif
    for (; i < n; i++) {
        float t = a[i] * b[i];
        QMX__KV_BAR(t);
        l[i & 15] = l[i & 15] + t;
    }
    return qmx__kv_fold16(l);
}

/* acc[i] = acc[i] + w * v[i] */
QMX__KV_STRICT static void qmx__kv_axpy_f32(float *acc, float w, const float *v, size_t n) {
    QMX__KV_NOCONTRACT
    size_t i = 0;
#if defined(QMX__AVX512)
    {
        __m512 ww = _mm512_set1_ps(w);
        for (; i + 16 <= n; i += 16) {
            __m512 t = _mm512_mul_ps(ww, _mm512_loadu_ps(v + i));
            QMX__KV_BAR(t);
            _mm512_storeu_ps(acc + i, _mm512_add_ps(_mm512_loadu_ps(acc + i), t));
        }
    }
#elif defined(QMX__AVX2)
    {
        __m256 ww = _mm256_set1_ps(w);
        for (; i + 8 <= n; i += 8) {
            __m256 t = _mm256_mul_ps(ww, _mm256_loadu_ps(v + i));
            QMX__KV_BAR(t);
            _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i), t));
        }
    }
#elif defined(QMX__NEON64)
    {
        float32x4_t ww = vdupq_n_f32(w);
        for (; i + 4 <= n; i += 4) {
            float32x4_t t = vmulq_f32(ww, vld1q_f32(v + i));
            QMX__KV_BAR(t);
            vst1q_f32(acc + i, vaddq_f32(vld1q_f32(acc + i), t));
        }
    }
#endif
    for (; i < n; i++) {
        float t = w * v[i];
        QMX__KV_BAR(t);
        acc[i] = acc[i] + t;
    }
}

#if defined(QMX__AVX512) || defined(QMX__AVX2)
/* The vector exp, written once over a few lane-width macros (16 lanes on AVX-512, 8 on AVX2):
 * qmx__kv_exp_core + scaling on every lane, for x in [LO, 0]; lanes below LO give +0. */
#  if defined(QMX__AVX512)
typedef __m512 qmx__kvf;
typedef __m512i qmx__kvi;
#    define QMX__KVF(op) _mm512_##op##_ps
#    define QMX__KVI(op) _mm512_##op##_epi32
#    define QMX__KVF_AS_I _mm512_castps_si512
#    define QMX__KVI_AS_F _mm512_castsi512_ps
#    define QMX__KV_ZERO_BELOW(p, x, lo) \
        _mm512_maskz_mov_ps((__mmask16)~_mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), p)
#  else
typedef __m256 qmx__kvf;
typedef __m256i qmx__kvi;
#    define QMX__KVF(op) _mm256_##op##_ps
#    define QMX__KVI(op) _mm256_##op##_epi32
#    define QMX__KVF_AS_I _mm256_castps_si256
#    define QMX__KVI_AS_F _mm256_castsi256_ps
#    define QMX__KV_ZERO_BELOW(p, x, lo) _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), p)
#  endif
QMX__KV_STRICT static qmx__kvf qmx__kv_expv(qmx__kvf x0) {
    const qmx__kvf lo = QMX__KVF(set1)(QMX__KV_EXP_LO), magic = QMX__KVF(set1)(12582912.0f);
    qmx__kvf x = QMX__KVF(max)(x0, lo), t, n, r, p, z;
    qmx__kvi e;
    t = QMX__KVF(mul)(x, QMX__KVF(set1)(QMX__KV_LOG2E));
    n = QMX__KVF(add)(t, magic);
    e = QMX__KVI(sub)(QMX__KVF_AS_I(n), QMX__KVF_AS_I(magic));
    n = QMX__KVF(sub)(n, magic);
    t = QMX__KVF(mul)(n, QMX__KVF(set1)(0.693359375f)); QMX__KV_BAR(t);
    r = QMX__KVF(sub)(x, t);
    t = QMX__KVF(mul)(n, QMX__KVF(set1)(QMX__KV_C2)); QMX__KV_BAR(t);
    r = QMX__KVF(sub)(r, t);
    z = QMX__KVF(mul)(r, r);
    p = QMX__KVF(set1)(QMX__KV_P0);
#  define QMX__KV_HORNER(c) \
    p = QMX__KVF(mul)(p, r); QMX__KV_BAR(p); p = QMX__KVF(add)(p, QMX__KVF(set1)(c))
    QMX__KV_HORNER(QMX__KV_P1); QMX__KV_HORNER(QMX__KV_P2); QMX__KV_HORNER(QMX__KV_P3);
    QMX__KV_HORNER(QMX__KV_P4); QMX__KV_HORNER(QMX__KV_P5);
#  undef QMX__KV_HORNER
    p = QMX__KVF(mul)(p, z); QMX__KV_BAR(p);
    p = QMX__KVF(add)(QMX__KVF(add)(p, r), QMX__KVF(set1)(1.0f));
    e = QMX__KVI(slli)(QMX__KVI(add)(e, QMX__KVI(set1)(127)), 23);
    p = QMX__KVF(mul)(p, QMX__KVI_AS_F(e));
    QMX__KV_BAR(p);
    return QMX__KV_ZERO_BELOW(p, x0, lo);
}
#  undef QMX__KVF
#  undef QMX__KVI
#  undef QMX__KVF_AS_I
#  undef QMX__KVI_AS_F
#  undef QMX__KV_ZERO_BELOW
#endif

/* x[i] = exp(x[i] - m) (x[i] - m <= 0), returns sum16 of the results. */
QMX__KV_STRICT static float qmx__kv_exp_sum(float *x, size_t n, float m) {
    QMX__KV_NOCONTRACT
    float l[16];
    size_t i = 0, j;
    for (j = 0; j < 16; j++) l[j] = 0.0f;
#if defined(QMX__AVX512)
    {
        __m512 acc = _mm512_setzero_ps(), mm = _mm512_set1_ps(m);
        for (; i + 16 <= n; i += 16) {
            __m512 e = qmx__kv_expv(_mm512_sub_ps(_mm512_loadu_ps(x + i), mm));
            _mm512_storeu_ps(x + i, e);
            acc = _mm512_add_ps(acc, e);
        }
        _mm512_storeu_ps(l, acc);
    }
#elif defined(QMX__AVX2)
    {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), mm = _mm256_set1_ps(m);
        for (; i + 16 <= n; i += 16) {
            __m256 e0 = qmx__kv_expv(_mm256_sub_ps(_mm256_loadu_ps(x + i), mm));
            __m256 e1 = qmx__kv_expv(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mm));
            _mm256_storeu_ps(x + i, e0);
            _mm256_storeu_ps(x + i + 8, e1);
            a0 = _mm256_add_ps(a0, e0);
            a1 = _mm256_add_ps(a1, e1);
        }
        _mm256_storeu_ps(l, a0);
        _mm256_storeu_ps(l + 8, a1);
    }
#endif
    for (; i < n; i++) {
        float t = x[i] - m, e;
        if (t < QMX__KV_EXP_LO) {
            e = 0.0f;
        } else {
            int k;
            e = qmx__kv_exp_core(t, &k);
            e = e * qmx__bits_f32((uint32_t)(k + 127) << 23);
            QMX__KV_BAR(e);
        }
        x[i] = e;
        l[i & 15] = l[i & 15] + e;
    }
    return qmx__kv_fold16(l);
}

/* INTEGER VALUES (int8 rows; int4 values are unpacked to int8 first): the weights of a tile of
 * n <= 64 tokens (w[j*ldw + t] >= 0, head j < g) become 15-bit integers per head, the weighted
 * sum over the tile is exact in int32, and one float step per element adds it in:
 *   m_j = max_t w[j][t] (an all-zero group stores scale 0, so its tokens weigh 0 here); u = 2^64 if m_j < 2^-60 else 1 (keeps r_j finite), m' = m_j * u;
 *   r_j = 32767 / m'; P[j][t] = RNE((w[j][t] * u) * r_j)  (0 .. 32767; never above 32767.01);
 *   s_j = (m' / 32767) * (1 / u)                        (m_j = 0: P = 0 and s_j = 0)
 *   I[j][e] = sum_t P[j][t] * v[t][e]                  (exact: |I| <= 64 * 32767 * 128 < 2^28)
 *   acc[j][e] = acc[j][e] + ((float)I[j][e] * s_j)     (each step rounded to float)
 * every float step one IEEE operation (no FMA), so the bits are the same on every path. */
QMX__KV_STRICT static void qmx__kv_vq_weights(const float *w, size_t ldw, size_t g, size_t n,
                                              int16_t *P, float *sc) {
    QMX__KV_NOCONTRACT
    size_t j, t;
    for (j = 0; j < g; j++) {
        const float *wj = w + j * ldw;
        int16_t *pj = P + j * 64;
        float m = 0.0f, u = 1.0f, du = 1.0f, r, s;
        size_t t0 = 0;
#if defined(QMX__AVX512)
        {   /* the max is exact in any order */
            __m512 mv = _mm512_setzero_ps();
            for (t = 0; t < n; t += 16) {
                __mmask16 k = n - t >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - t)) - 1u);
                mv = _mm512_max_ps(mv, _mm512_maskz_loadu_ps(k, wj + t));
            }
            m = _mm512_reduce_max_ps(mv);
        }
#else
        {
            float m1 = 0.0f, m2 = 0.0f, m3 = 0.0f;
            for (t = 0; t + 4 <= n; t += 4) {
                if (wj[t] > m) m = wj[t];
                if (wj[t + 1] > m1) m1 = wj[t + 1];
                if (wj[t + 2] > m2) m2 = wj[t + 2];
                if (wj[t + 3] > m3) m3 = wj[t + 3];
            }
            for (; t < n; t++)
                if (wj[t] > m) m = wj[t];
            if (m1 > m) m = m1;
            if (m2 > m) m = m2;
            if (m3 > m) m = m3;
        }
#endif
        for (t = n; t < 64; t++) pj[t] = 0;
        if (!(m > 0.0f)) {
            for (t = 0; t < n; t++) pj[t] = 0;
            sc[j] = 0.0f;
            continue;
        }
        if (m < 8.673617379884035e-19f) {  /* 2^-60: scale by 2^64 (exact) */
            u = 18446744073709551616.0f;
            du = 5.421010862427522e-20f;   /* 2^-64 */
            m = m * u;
        }
        r = 32767.0f / m;
#if defined(QMX__AVX512)
        {   /* the same two products, then cvtps2dq rounds to nearest even like the magic */
            __m512 uv = _mm512_set1_ps(u), rv = _mm512_set1_ps(r);
            for (; t0 + 16 <= n; t0 += 16) {
                __m512 y = _mm512_mul_ps(_mm512_loadu_ps(wj + t0), uv);
                y = _mm512_mul_ps(y, rv);
                _mm256_storeu_si256((__m256i *)(void *)(pj + t0),
                                    _mm512_cvtepi32_epi16(_mm512_cvtps_epi32(y)));
            }
        }
#endif
        for (t = t0; t < n; t++) {
            float y = wj[t] * u;
            y = y * r;
            QMX__KV_BAR(y);        /* no FMA with the add below (clang -ffp-contract=fast) */
            y = y + 12582912.0f;   /* 1.5 * 2^23: rounds 0 <= y < 2^22 to an integer, RNE */
            y = y - 12582912.0f;
            pj[t] = (int16_t)(int32_t)y;
        }
        s = m / 32767.0f;
        s = s * du;
        sc[j] = s;
    }
}

/* acc[j][e] (+)= the tile's integer sum I[j][e] times s_j, for e in [c0, d): portable */
QMX__KV_STRICT static void qmx__kv_v_int_tail(float *acc, size_t d, size_t c0, size_t g,
                                              const int8_t *rows, size_t stride, size_t n,
                                              const int16_t *P, const float *sc) {
    QMX__KV_NOCONTRACT
    size_t j, e, t;
    for (j = 0; j < g; j++)
        for (e = c0; e < d; e++) {
            int32_t I = 0;
            float f;
            for (t = 0; t < n; t++) I += (int32_t)P[j * 64 + t] * rows[t * stride + e];
            f = (float)I;
            f = f * sc[j];
            QMX__KV_BAR(f);
            acc[j * d + e] = acc[j * d + e] + f;
        }
}

#if defined(QMX__AVX512) || defined(QMX__AVX2)
/* acc[j][e] (+)= I[j][e] * s_j for the columns e in [c0, c0 + 16 floor((d - c0) / 16)), 16 at
 * a time: token pairs (v[t][e], v[t+1][e]) widened to int16 and vpmaddwd with (P[t], P[t+1]).
 * The AVX2 path's value tile, and the AVX-512 path's columns after its 64-column chunks (the
 * blocks of 32 of QMX_KV_BLOCK values). Returns the first column not done. */
QMX__KV_STRICT static size_t qmx__kv_v_cols16(float *acc, size_t d, size_t c0, size_t g,
                                             const int8_t *rows, size_t stride, size_t n,
                                             const int16_t *P, const float *sc) {
    QMX__KV_NOCONTRACT
    size_t j0, j, k, t, c = c0;
    for (j0 = 0; j0 < g; j0 += 4) {
        size_t hb = g - j0 < 4 ? g - j0 : 4;
        for (c = c0; c + 16 <= d; c += 16) {
            __m256i I[4][2], zero = _mm256_setzero_si256();
            for (j = 0; j < 4; j++) I[j][0] = I[j][1] = zero;
            for (t = 0; t < n; t += 2) {
                __m128i r0 = QMX__KV_L128(rows + t * stride + c);
                __m128i r1 = t + 1 < n ? QMX__KV_L128(rows + (t + 1) * stride + c)
                                       : _mm_setzero_si128();
                __m256i x[2];
                x[0] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(r0, r1));
                x[1] = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(r0, r1));
                for (j = 0; j < hb; j++) {
                    __m256i p = _mm256_broadcastd_epi32(_mm_loadu_si32(P + (j0 + j) * 64 + t));
                    for (k = 0; k < 2; k++)
                        I[j][k] = _mm256_add_epi32(I[j][k], _mm256_madd_epi16(x[k], p));
                }
            }
            for (j = 0; j < hb; j++) {
                __m256 s = _mm256_set1_ps(sc[j0 + j]);
                float *aj = acc + (j0 + j) * d + c;
                for (k = 0; k < 2; k++) {
                    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(I[j][k]), s);
                    QMX__KV_BAR(f);
                    _mm256_storeu_ps(aj + 8 * k, _mm256_add_ps(_mm256_loadu_ps(aj + 8 * k), f));
                }
            }
        }
    }
    return c;
}
#endif

/* One tile of values (see INTEGER VALUES), P / sc: workspace for g x 64 int16 and g floats. */
QMX__KV_STRICT static void qmx__kv_v_tile_i8(float *acc, size_t d, const float *w, size_t ldw,
                                             size_t g, const int8_t *rows, size_t stride,
                                             size_t n, int16_t *P, float *sc) {
    QMX__KV_NOCONTRACT
    size_t c = 0, t, j;
    qmx__kv_vq_weights(w, ldw, g, n, P, sc);
#if defined(QMX__AVX512)
    {
        size_t j0, k;
        for (j0 = 0; j0 < g; j0 += 4) {
            size_t hb = g - j0 < 4 ? g - j0 : 4;
            for (c = 0; c + 64 <= d; c += 64) {
                /* token pairs: bytes of rows t, t+1 interleaved (within 128-bit lanes) and
                 * widened, so each dword is (v[t][e], v[t+1][e]) as int16: x[0] holds
                 * elements 0-7 and 16-23 of the chunk, x[1] 32-39 / 48-55, x[2] 8-15 / 24-31,
                 * x[3] 40-47 / 56-63; vpdpwssd (or vpmaddwd) with (P[t], P[t+1]) */
                __m512i I[4][4], zero = _mm512_setzero_si512();
                for (j = 0; j < 4; j++)
                    for (k = 0; k < 4; k++) I[j][k] = zero;
                for (t = 0; t < n; t += 2) {
                    __m512i r0 = _mm512_loadu_si512((const void *)(rows + t * stride + c));
                    __m512i r1 = t + 1 < n ? _mm512_loadu_si512((const void *)(rows + (t + 1) * stride + c))
                                           : zero;
                    __m512i lo = _mm512_unpacklo_epi8(r0, r1), hi = _mm512_unpackhi_epi8(r0, r1);
                    __m512i x[4];
                    x[0] = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(lo));
                    x[1] = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(lo, 1));
                    x[2] = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(hi));
                    x[3] = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(hi, 1));
                    /* (P[t], P[t+1]) of head j as one dword (t even: 4-byte aligned) */
#define QMX__KV_PPAIR(j) _mm512_broadcastd_epi32(_mm_loadu_si32(P + (j0 + (j)) * 64 + t))
#if defined(__AVX512VNNI__)
#  define QMX__KV_IDOT(acc, x, p) acc = _mm512_dpwssd_epi32(acc, x, p)
#else
#  define QMX__KV_IDOT(acc, x, p) acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, p))
#endif
                    if (hb == 4) { /* the usual GQA group: no per-head test */
                        __m512i p0 = QMX__KV_PPAIR(0), p1 = QMX__KV_PPAIR(1);
                        __m512i p2 = QMX__KV_PPAIR(2), p3 = QMX__KV_PPAIR(3);
                        for (k = 0; k < 4; k++) {
                            QMX__KV_IDOT(I[0][k], x[k], p0); QMX__KV_IDOT(I[1][k], x[k], p1);
                            QMX__KV_IDOT(I[2][k], x[k], p2); QMX__KV_IDOT(I[3][k], x[k], p3);
                        }
                    } else {
                        for (j = 0; j < hb; j++) {
                            __m512i p = QMX__KV_PPAIR(j);
                            for (k = 0; k < 4; k++) QMX__KV_IDOT(I[j][k], x[k], p);
                        }
                    }
#undef QMX__KV_PPAIR
#undef QMX__KV_IDOT
                }
                for (j = 0; j < hb; j++) {
                    __m512 s = _mm512_set1_ps(sc[j0 + j]);
                    __m512i nat[4];
                    float *aj = acc + (j0 + j) * d + c;
                    nat[0] = _mm512_shuffle_i64x2(I[j][0], I[j][2], 0x44);   /* 0-15 */
                    nat[1] = _mm512_shuffle_i64x2(I[j][0], I[j][2], 0xEE);   /* 16-31 */
                    nat[2] = _mm512_shuffle_i64x2(I[j][1], I[j][3], 0x44);   /* 32-47 */
                    nat[3] = _mm512_shuffle_i64x2(I[j][1], I[j][3], 0xEE);   /* 48-63 */
                    for (k = 0; k < 4; k++) {
                        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(nat[k]), s);
                        QMX__KV_BAR(f);
                        _mm512_storeu_ps(aj + 16 * k, _mm512_add_ps(_mm512_loadu_ps(aj + 16 * k), f));
                    }
                }
            }
        }
        /* the rest (the blocks of 32 of QMX_KV_BLOCK values): 16 columns at a time, the
         * AVX2 loop */
        c = qmx__kv_v_cols16(acc, d, c, g, rows, stride, n, P, sc);
    }
#elif defined(QMX__AVX2)
    c = qmx__kv_v_cols16(acc, d, 0, g, rows, stride, n, P, sc);
#elif defined(QMX__NEON64)
    {
        size_t j0, k;
        for (j0 = 0; j0 < g; j0 += 4) {
            size_t hb = g - j0 < 4 ? g - j0 : 4;
            for (c = 0; c + 16 <= d; c += 16) {
                int32x4_t I[4][4];
                for (j = 0; j < 4; j++)
                    for (k = 0; k < 4; k++) I[j][k] = vdupq_n_s32(0);
                for (t = 0; t < n; t++) {
                    int8x16_t b = vld1q_s8(rows + t * stride + c);
                    int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_s8(vget_high_s8(b));
                    for (j = 0; j < hb; j++) {
                        int16_t p = P[(j0 + j) * 64 + t];
                        I[j][0] = vmlal_n_s16(I[j][0], vget_low_s16(lo), p);
                        I[j][1] = vmlal_n_s16(I[j][1], vget_high_s16(lo), p);
                        I[j][2] = vmlal_n_s16(I[j][2], vget_low_s16(hi), p);
                        I[j][3] = vmlal_n_s16(I[j][3], vget_high_s16(hi), p);
                    }
                }
                for (j = 0; j < hb; j++) {
                    float *aj = acc + (j0 + j) * d + c;
                    for (k = 0; k < 4; k++) {
                        float32x4_t f = vmulq_n_f32(vcvtq_f32_s32(I[j][k]), sc[j0 + j]);
                        QMX__KV_BAR(f);
                        vst1q_f32(aj + 4 * k, vaddq_f32(vld1q_f32(aj + 4 * k), f));
                    }
                }
            }
        }
    }
#elif defined(QMX__RVV)
    {   /* vsetvl strips of at most 64 dims: rows sign-extended to int16, vwmacc.vx with P[t]
         * into int32 lanes (4 heads x one strip in registers), then the float steps per
         * element in scalar C (the tail's order: (float)I, * s, + acc) */
        int32_t Ib[4][64];
        size_t j0, vl, e;
        for (j0 = 0; j0 < g; j0 += 4) {
            size_t hb = g - j0 < 4 ? g - j0 : 4;
            for (c = 0; c < d; c += vl) {
                vint32m4_t I0, I1, I2, I3;
                vl = __riscv_vsetvl_e8m1(d - c < 64 ? d - c : 64);
                I0 = __riscv_vmv_v_x_i32m4(0, vl); I1 = I0; I2 = I0; I3 = I0;
                for (t = 0; t < n; t++) {
                    vint16m2_t x = __riscv_vsext_vf2_i16m2(
                        __riscv_vle8_v_i8m1(rows + t * stride + c, vl), vl);
                    const int16_t *pt = P + j0 * 64 + t;
                    I0 = __riscv_vwmacc_vx_i32m4(I0, pt[0], x, vl);
                    if (hb > 1) I1 = __riscv_vwmacc_vx_i32m4(I1, pt[64], x, vl);
                    if (hb > 2) I2 = __riscv_vwmacc_vx_i32m4(I2, pt[128], x, vl);
                    if (hb > 3) I3 = __riscv_vwmacc_vx_i32m4(I3, pt[192], x, vl);
                }
                __riscv_vse32_v_i32m4(Ib[0], I0, vl); __riscv_vse32_v_i32m4(Ib[1], I1, vl);
                __riscv_vse32_v_i32m4(Ib[2], I2, vl); __riscv_vse32_v_i32m4(Ib[3], I3, vl);
                for (j = 0; j < hb; j++) {
                    float *aj = acc + (j0 + j) * d + c;
                    for (e = 0; e < vl; e++) {
                        float f = (float)Ib[j][e];
                        f = f * sc[j0 + j];
                        QMX__KV_BAR(f);
                        aj[e] = aj[e] + f;
                    }
                }
            }
        }
    }
#endif
    (void)t; (void)j;
    if (c < d) qmx__kv_v_int_tail(acc, d, c, g, rows, stride, n, P, sc);
}

/* The same for float rows (row t at rows + t * stride floats): qmx__kv_axpy_f32's order. */
QMX__KV_STRICT static void qmx__kv_v_tile_f32(float *acc, size_t d, const float *w, size_t ldw,
                                              size_t g, const float *rows, size_t stride,
                                              size_t n) {
    QMX__KV_NOCONTRACT
    size_t c = 0, t, j;
#if defined(QMX__AVX512) || defined(QMX__AVX2) || defined(QMX__NEON64)
    size_t j0;
#  if defined(QMX__AVX512)
#    define QMX__KV_VF __m512
#    define QMX__KV_VW 16
#    define QMX__KV_VN 4
#    define QMX__KV_LD _mm512_loadu_ps
#    define QMX__KV_ST _mm512_storeu_ps
#    define QMX__KV_SET1 _mm512_set1_ps
#    define QMX__KV_MUL _mm512_mul_ps
#    define QMX__KV_ADD _mm512_add_ps
#  elif defined(QMX__AVX2)
#    define QMX__KV_VF __m256
#    define QMX__KV_VW 8
#    define QMX__KV_VN 2
#    define QMX__KV_LD _mm256_loadu_ps
#    define QMX__KV_ST _mm256_storeu_ps
#    define QMX__KV_SET1 _mm256_set1_ps
#    define QMX__KV_MUL _mm256_mul_ps
#    define QMX__KV_ADD _mm256_add_ps
#  else
#    define QMX__KV_VF float32x4_t
#    define QMX__KV_VW 4
#    define QMX__KV_VN 4
#    define QMX__KV_LD vld1q_f32
#    define QMX__KV_ST vst1q_f32
#    define QMX__KV_SET1 vdupq_n_f32
#    define QMX__KV_MUL vmulq_f32
#    define QMX__KV_ADD vaddq_f32
#  endif
    for (j0 = 0; j0 < g; j0 += 4) {
        size_t hb = g - j0 < 4 ? g - j0 : 4;
        for (c = 0; c + QMX__KV_VW * QMX__KV_VN <= d; c += QMX__KV_VW * QMX__KV_VN) {
            QMX__KV_VF a[4][QMX__KV_VN];
            size_t k;
            for (j = 0; j < 4; j++)
                for (k = 0; k < QMX__KV_VN; k++)
                    a[j][k] = QMX__KV_SET1(0.0f);
            for (j = 0; j < hb; j++)
                for (k = 0; k < QMX__KV_VN; k++)
                    a[j][k] = QMX__KV_LD(acc + (j0 + j) * d + c + QMX__KV_VW * k);
            for (t = 0; t < n; t++) {
                const float *r = rows + t * stride + c;
                QMX__KV_VF x[QMX__KV_VN];
                for (k = 0; k < QMX__KV_VN; k++) x[k] = QMX__KV_LD(r + QMX__KV_VW * k);
                for (j = 0; j < 4; j++) {
                    if (j < hb) {
                        QMX__KV_VF ww = QMX__KV_SET1(w[(j0 + j) * ldw + t]);
                        for (k = 0; k < QMX__KV_VN; k++) {
                            QMX__KV_VF p = QMX__KV_MUL(ww, x[k]);
                            QMX__KV_BAR(p);
                            a[j][k] = QMX__KV_ADD(a[j][k], p);
                        }
                    }
                }
            }
            for (j = 0; j < hb; j++)
                for (k = 0; k < QMX__KV_VN; k++)
                    QMX__KV_ST(acc + (j0 + j) * d + c + QMX__KV_VW * k, a[j][k]);
        }
    }
#  undef QMX__KV_VF
#  undef QMX__KV_VW
#  undef QMX__KV_VN
#  undef QMX__KV_LD
#  undef QMX__KV_ST
#  undef QMX__KV_SET1
#  undef QMX__KV_MUL
#  undef QMX__KV_ADD
#endif
    if (c < d)
        for (t = 0; t < n; t++)
            for (j = 0; j < g; j++)
                qmx__kv_axpy_f32(acc + j * d + c, w[j * ldw + t], rows + t * stride + c, d - c);
}

/* m = max x[i]; 0 when some x[i] is NaN or Inf (x - x is NaN exactly then). */
QMX__KV_STRICT static int qmx__kv_max_finite(const float *x, size_t n, float *m_out) {
    QMX__KV_NOCONTRACT
    size_t i = 0;
    float m = x[0], z = 0.0f;
#if defined(QMX__AVX512)
    if (n >= 16) {
        __m512 mm = _mm512_loadu_ps(x), zz = _mm512_setzero_ps();
        float t[16];
        int k;
        for (; i + 16 <= n; i += 16) {
            __m512 v = _mm512_loadu_ps(x + i);
            mm = _mm512_max_ps(mm, v);
            zz = _mm512_add_ps(zz, _mm512_sub_ps(v, v));
        }
        _mm512_storeu_ps(t, zz);
        for (k = 0; k < 16; k++) z = z + t[k];
        _mm512_storeu_ps(t, mm);
        for (k = 0; k < 16; k++) if (t[k] > m) m = t[k];
    }
#endif
    for (; i < n; i++) {
        float v = x[i], t = v - v;
        z = z + t;
        if (v > m) m = v;
    }
    *m_out = m;
    return z == z && qmx__isfinite(m);
}

/* ---- attention ---- */
typedef struct qmx__kv_ws {
    float *logits, *stage, *qf, *qsc, *sums, *rowf, *lut_k, *lut_v, *qrot, *vsc;
    int8_t *q8, *row8;
    int16_t *vp;   /* integer value weights P [g][64], then vsc: their scales [g] */
    float *bw, *bacc;   /* QMX_KV_BLOCK values: a tile's block weights [g][64], sums [nb][g][db] */
} qmx__kv_ws;

static qmx_status qmx__kv_ws_size(const qmx_kv_config *n, size_t n_heads, size_t *bytes,
                                  size_t off[12]) {
    size_t g, d = n->head_dim, t, a = 64, i, part[12];
    if (n_heads == 0) return QMX_ERR_SIZE;
    if (n_heads % n->n_kv_heads) return QMX_ERR_SHAPE;
    g = n_heads / n->n_kv_heads;
    t = qmx__kv_mul(qmx__kv_mul(g, n->capacity), 4);
    part[0] = t;
    part[1] = qmx__kv_mul(qmx__kv_mul(n_heads, d), 4);
    part[2] = qmx__kv_mul(qmx__kv_mul(g, d), 4);
    part[3] = qmx__kv_mul(g, d);
    part[4] = qmx__kv_mul(g, 4);
    part[5] = part[4];
    part[6] = qmx__kv_mul(64, d);   /* 16 decoded float rows */
    part[7] = qmx__kv_mul(64, d);   /* 64 unpacked int4 rows */
    part[8] = 2048;
    part[9] = n->rotate ? part[2] : 0;   /* the rotated query */
    part[10] = qmx__kv_mul(g, 132);      /* integer value weights: g x 64 int16 + g floats */
    /* block-scaled values: the tile's block weights [g][64] and the block-major sums
     * [d / dim_block][g][dim_block] (fits: part[2] is 4 g d) */
    t = qmx__kv_mul(g, 256);
    part[11] = t && part[2] ? qmx__kv_add(t, part[2]) : 0;
    for (i = 0; i < 12; i++) {
        if ((i == 9 && !n->rotate) || (i == 11 && n->v_axis != QMX_KV_BLOCK)) {
            if (off) off[i] = a;
            continue;
        }
        if (!part[i] || part[i] > SIZE_MAX - 64) return QMX_ERR_OVERFLOW;
        if (off) off[i] = a;
        a = qmx__kv_add(a, qmx__k_r64(part[i]));
        if (!a) return QMX_ERR_OVERFLOW;
    }
    *bytes = a;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_attention_workspace_size(const qmx_kv_config *cfg, size_t n_heads,
                                                    size_t *bytes) {
    qmx_kv_config n;
    qmx__kv_layout L;
    qmx_status st;
    if (!cfg || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    return qmx__kv_ws_size(&n, n_heads, bytes, NULL);
}

/* Quantizes a query row to int8 (AQT, absmax/127, RNE, [-127, 127]); returns its scale. */
static float qmx__kv_quant_query(const float *q, size_t d, int8_t *q8) {
    qmx_qconfig c;
    float s = 1.0f;
#if defined(QMX__AVX512)
    {   /* the same steps as qmx.h's AQT recipe (absmax / 127, x * (1/s), clip, RNE), inline:
         * this runs once per query head and KV head, on finite data (checked before) */
        __m512 mx = _mm512_setzero_ps(), inv, lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
        size_t i;
        float a, r;
        for (i = 0; i < d; i += 16) {
            __mmask16 k = d - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (d - i)) - 1u);
            mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_maskz_loadu_ps(k, q + i)));
        }
        a = _mm512_reduce_max_ps(mx);
        if (a == 0.0f) a = 1.0f;
        s = a / 127.0f;
        r = 1.0f / s;
        if (!(r <= FLT_MAX)) r = 1.0f;   /* an infinite reciprocal -> 1, as qmx.h */
        inv = _mm512_set1_ps(r);
        for (i = 0; i < d; i += 16) {
            __mmask16 k = d - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (d - i)) - 1u);
            __m512 t = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, q + i), inv);
            t = _mm512_min_ps(hi, _mm512_max_ps(lo, t));
            _mm512_mask_cvtsepi32_storeu_epi8(q8 + i, k, _mm512_cvtps_epi32(t));
        }
        (void)c;
        return s;
    }
#endif
    qmx__kv_qcfg(&c, QMX_INT8);
    c.recipe = QMX_RECIPE_AQT;
    c.preserve_max_val = 1;
    (void)qmx_compute_qparams(&c, q, d, &s, 1, NULL);
    (void)qmx_quantize(&c, q, d, &s, 1, NULL, q8, d);
    return s;
}

/* int4 nibbles (d even; element 2i low) to int8: (nibble ^ 8) - 8 sign-extends. */
static void qmx__kv_unpack4(const unsigned char *src, size_t d, int8_t *dst) {
    size_t i = 0;
#if defined(QMX__AVX512) || defined(QMX__AVX2)
    {   /* 16 bytes -> 32 int8: low / high nibbles interleaved, (x ^ 8) - 8 (exact) */
        const __m128i m15 = _mm_set1_epi8(15), e8 = _mm_set1_epi8(8);
        for (; i + 16 <= d / 2; i += 16) {
            __m128i b = QMX__KV_L128(src + i);
            __m128i lo = _mm_and_si128(b, m15), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m15);
            __m128i x0 = _mm_unpacklo_epi8(lo, hi), x1 = _mm_unpackhi_epi8(lo, hi);
            x0 = _mm_sub_epi8(_mm_xor_si128(x0, e8), e8);
            x1 = _mm_sub_epi8(_mm_xor_si128(x1, e8), e8);
            _mm_storeu_si128((__m128i *)(void *)(dst + 2 * i), x0);
            _mm_storeu_si128((__m128i *)(void *)(dst + 2 * i + 16), x1);
        }
    }
#elif defined(QMX__NEON64)
    {
        const uint8x16_t m15 = vdupq_n_u8(15);
        const int8x16_t e8 = vdupq_n_s8(8);
        for (; i + 16 <= d / 2; i += 16) {
            uint8x16_t b = vld1q_u8(src + i);
            uint8x16x2_t z;
            z.val[0] = vandq_u8(b, m15);
            z.val[1] = vshrq_n_u8(b, 4);
            z = vzipq_u8(z.val[0], z.val[1]);
            vst1q_s8(dst + 2 * i, vsubq_s8(veorq_s8(vreinterpretq_s8_u8(z.val[0]), e8), e8));
            vst1q_s8(dst + 2 * i + 16, vsubq_s8(veorq_s8(vreinterpretq_s8_u8(z.val[1]), e8), e8));
        }
    }
#endif
    for (; i < d / 2; i++) {
        int b = src[i];
        dst[2 * i] = (int8_t)(((b & 15) ^ 8) - 8);
        dst[2 * i + 1] = (int8_t)(((b >> 4) ^ 8) - 8);
    }
}

/* Pointer to the stored row (head h, slot); for int4 unpacked into w->row8. */
static const int8_t *qmx__kv_row_i8(qmx_dtype dt, const unsigned char *src, size_t d,
                                    int8_t *row8) {
    if (dt == QMX_INT8) return (const int8_t *)(const void *)src;
    qmx__kv_unpack4(src, d, row8);
    return row8;
}
/* fp8 codes (E4M3FN / E5M2) to float: y[i] = lut[src[i]] (lut = qmx_fp8_to_f32 of every
 * code); the vector paths give the same floats, NaN / Inf / subnormal codes included.
 * Every decoded value is sign | a bfloat16 (low 16 bits zero), so two byte tables indexed by
 * the code's 7 magnitude bits give it exactly (qmx__kv_f8tab: bits 16-23 and 24-30; the sign
 * is the code's bit 7): AVX-512 VBMI looks them up with vpermi2b (64 codes at a time), NEON
 * with tbl. AVX-512 without VBMI and AVX2: the code's exponent and mantissa bits placed at the
 * top of a float's and that float multiplied by 2^(127 - bias) (exact: a power of two,
 * subnormal codes included), sign OR-ed in; a group holding a NaN/Inf code takes the table. */
#if defined(QMX__AVX512) && defined(__AVX512VBMI__)
#  define QMX__KV_VBMI 1
#endif
#if defined(QMX__KV_VBMI) || defined(QMX__NEON64)
/* [format: E4M3FN, E5M2][bits 16-23, bits 24-30] of qmx_fp8_to_f32(code), code 0..127
 * (tests/test_kvcache.c test_fp8_decode checks every code against qmx_fp8_to_f32) */
static const unsigned char qmx__kv_f8tab[2][2][128] = {
    {{0x00, 0x00, 0x80, 0xC0, 0x00, 0x20, 0x40, 0x60, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
      0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xC0},
     {0x00, 0x3B, 0x3B, 0x3B, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C,
      0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D,
      0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E,
      0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F,
      0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40,
      0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41,
      0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42,
      0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x7F}},
    {{0x00, 0x80, 0x00, 0x40, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0,
      0x00, 0x20, 0x40, 0x60, 0x80, 0xA0, 0xC0, 0xE0, 0x00, 0x20, 0x40, 0x60, 0x80, 0xC0, 0xC0, 0xC0},
     {0x00, 0x37, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39,
      0x3A, 0x3A, 0x3A, 0x3A, 0x3A, 0x3A, 0x3A, 0x3A, 0x3B, 0x3B, 0x3B, 0x3B, 0x3B, 0x3B, 0x3B, 0x3B,
      0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3C, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D, 0x3D,
      0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F,
      0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41,
      0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43,
      0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x45, 0x45, 0x45, 0x45, 0x45, 0x45, 0x45, 0x45,
      0x46, 0x46, 0x46, 0x46, 0x46, 0x46, 0x46, 0x46, 0x47, 0x47, 0x47, 0x47, 0x7F, 0x7F, 0x7F, 0x7F}}};
#endif

#if defined(QMX__KV_VBMI)
/* The tables in registers: t[0..1] bits 16-23 (codes 0-63, 64-127), t[2..3] bits 24-30; sp[k]
 * spreads looked-up bytes e of vector k (16k + e) to bytes 2 (low table) and 3 (high) of
 * float e. */
typedef struct qmx__kv_f8v {
    __m512i t[4], sp[4], sgn;
} qmx__kv_f8v;
static void qmx__kv_f8v_init(qmx__kv_f8v *v, qmx_dtype dt) {
    const unsigned char *tb = qmx__kv_f8tab[dt == QMX_FP8_E5M2 ? 1 : 0][0];
    unsigned char sp[64];
    int k, e;
    for (k = 0; k < 4; k++) v->t[k] = _mm512_loadu_si512((const void *)(tb + 64 * k));
    for (k = 0; k < 4; k++) {
        for (e = 0; e < 16; e++) {
            sp[4 * e] = sp[4 * e + 1] = 0;
            sp[4 * e + 2] = (unsigned char)(16 * k + e);
            sp[4 * e + 3] = (unsigned char)(64 + 16 * k + e);
        }
        v->sp[k] = _mm512_loadu_si512((const void *)sp);
    }
    v->sgn = _mm512_set1_epi8((char)0x80);
}
/* 64 codes to 4 vectors of 16 floats (codes 16k .. 16k+15 in x[k]), exact for every code */
#  define QMX__KV_F8X64(V, c, x) do {                                                          \
        __m512i lo_ = _mm512_permutex2var_epi8((V)->t[0], (c), (V)->t[1]);                     \
        __m512i hi_ = _mm512_permutex2var_epi8((V)->t[2], (c), (V)->t[3]);                     \
        hi_ = _mm512_ternarylogic_epi32(hi_, (c), (V)->sgn, 0xF8);  /* hi | (c & 0x80) */      \
        (x)[0] = _mm512_castsi512_ps(_mm512_maskz_permutex2var_epi8(                          \
            (__mmask64)0xCCCCCCCCCCCCCCCCull, lo_, (V)->sp[0], hi_));                          \
        (x)[1] = _mm512_castsi512_ps(_mm512_maskz_permutex2var_epi8(                          \
            (__mmask64)0xCCCCCCCCCCCCCCCCull, lo_, (V)->sp[1], hi_));                          \
        (x)[2] = _mm512_castsi512_ps(_mm512_maskz_permutex2var_epi8(                          \
            (__mmask64)0xCCCCCCCCCCCCCCCCull, lo_, (V)->sp[2], hi_));                          \
        (x)[3] = _mm512_castsi512_ps(_mm512_maskz_permutex2var_epi8(                          \
            (__mmask64)0xCCCCCCCCCCCCCCCCull, lo_, (V)->sp[3], hi_));                          \
    } while (0)
/* the first n <= 64 codes at p (bytes past n are not read; their floats are +0) */
#  define QMX__KV_F8LOAD(p, n) \
    ((n) >= 64 ? _mm512_loadu_si512((const void *)(p)) \
               : _mm512_maskz_loadu_epi8((((__mmask64)1) << (n)) - 1, (const void *)(p)))
#endif

static void qmx__kv_fp8_decode(const unsigned char *src, size_t n, qmx_dtype dt,
                               const float *lut, float *y) {
    size_t i = 0;
#if defined(QMX__KV_VBMI)
    {
        qmx__kv_f8v V;
        qmx__kv_f8v_init(&V, dt);
        for (; i < n; i += 64) {
            size_t r = n - i < 64 ? n - i : 64, k;
            __m512 x[4];
            QMX__KV_F8X64(&V, QMX__KV_F8LOAD(src + i, r), x);
            for (k = 0; k < 4 && 16 * k < r; k++) {
                size_t m = r - 16 * k;
                _mm512_mask_storeu_ps(y + i + 16 * k,
                                      m >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1u), x[k]);
            }
        }
        (void)lut;
    }
#elif defined(QMX__AVX512)
    {
        int e4 = dt == QMX_FP8_E4M3FN;
        __m512 mul = _mm512_set1_ps(e4 ? 1.329227995784915872903807060280344576e36f    /* 2^120 */
                                       : 5.192296858534827628530496329220096e33f);     /* 2^112 */
        __m512i lim = _mm512_set1_epi32(e4 ? 0x7F : 0x7C);
        for (; i + 16 <= n; i += 16) {
            __m512i c = _mm512_cvtepu8_epi32(QMX__KV_L128((src + i)));
            __m512i mag = _mm512_and_si512(c, _mm512_set1_epi32(0x7F));
            __m512i sgn = _mm512_slli_epi32(_mm512_and_si512(c, _mm512_set1_epi32(0x80)), 24);
            __m512 v;
            if (_mm512_cmpge_epi32_mask(mag, lim)) {          /* NaN / Inf codes: the table */
                size_t k;
                for (k = 0; k < 16; k++) y[i + k] = lut[src[i + k]];
                continue;
            }
            v = _mm512_castsi512_ps(_mm512_slli_epi32(mag, e4 ? 20 : 21));
            v = _mm512_mul_ps(v, mul);
            v = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), sgn));
            _mm512_storeu_ps(y + i, v);
        }
    }
#elif defined(QMX__AVX2)
    {   /* 32 codes per check; sign-extended codes shifted so that the sign stays at bit 31 */
        int e4 = dt == QMX_FP8_E4M3FN;
        __m256 mul = _mm256_set1_ps(e4 ? 1.329227995784915872903807060280344576e36f    /* 2^120 */
                                       : 5.192296858534827628530496329220096e33f);     /* 2^112 */
        __m256i keep = _mm256_set1_epi32(e4 ? (int)0x87F00000u : (int)0x8FE00000u);
        __m256i lim = _mm256_set1_epi8((char)(e4 ? 0x7E : 0x7B)), m7f = _mm256_set1_epi8(0x7F);
        for (; i + 32 <= n; i += 32) {
            __m256i c = QMX__KV_L256(src + i);
            size_t k;
            if (_mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_and_si256(c, m7f), lim))) {
                for (k = 0; k < 32; k++) y[i + k] = lut[src[i + k]];   /* NaN / Inf codes */
                continue;
            }
            for (k = 0; k < 32; k += 8) {
                __m256i x = _mm256_cvtepi8_epi32(QMX__KV_L64(src + i + k));
                x = _mm256_and_si256(e4 ? _mm256_slli_epi32(x, 20) : _mm256_slli_epi32(x, 21), keep);
                _mm256_storeu_ps(y + i + k, _mm256_mul_ps(_mm256_castsi256_ps(x), mul));
            }
        }
    }
#elif defined(QMX__NEON64)
    {   /* 16 codes: tbl on the 7 magnitude bits (two 64-byte halves), sign OR-ed in, then the
         * byte pairs widened to the top 16 bits of each float */
        const unsigned char *tb = qmx__kv_f8tab[dt == QMX_FP8_E5M2 ? 1 : 0][0];
        uint8x16x4_t t0, t1, t2, t3;
        uint8x16_t m7f = vdupq_n_u8(0x7F), b64 = vdupq_n_u8(64);
        int k;
        for (k = 0; k < 4; k++) {
            t0.val[k] = vld1q_u8(tb + 16 * k);
            t1.val[k] = vld1q_u8(tb + 64 + 16 * k);
            t2.val[k] = vld1q_u8(tb + 128 + 16 * k);
            t3.val[k] = vld1q_u8(tb + 192 + 16 * k);
        }
        for (; i + 16 <= n; i += 16) {
            uint8x16_t c = vld1q_u8(src + i), a = vandq_u8(c, m7f), a2 = veorq_u8(a, b64);
            uint8x16_t lo = vqtbx4q_u8(vqtbl4q_u8(t0, a), t1, a2);
            uint8x16_t hi = vqtbx4q_u8(vqtbl4q_u8(t2, a), t3, a2);
            uint16x8_t w0, w1;
            hi = vorrq_u8(hi, vbicq_u8(c, m7f));
            w0 = vreinterpretq_u16_u8(vzip1q_u8(lo, hi));
            w1 = vreinterpretq_u16_u8(vzip2q_u8(lo, hi));
            vst1q_f32(y + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(w0), 16)));
            vst1q_f32(y + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(w0, 16)));
            vst1q_f32(y + i + 8, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(w1), 16)));
            vst1q_f32(y + i + 12, vreinterpretq_f32_u32(vshll_high_n_u16(w1, 16)));
        }
    }
#else
    (void)dt;
#endif
    for (; i < n; i++) y[i] = lut[src[i]];
}

static const float *qmx__kv_row_f32(qmx_dtype dt, const unsigned char *src, size_t d,
                                    const float *lut, float *rowf, int8_t *row8) {
    size_t i;
    if (dt == QMX_FLOAT32) return (const float *)(const void *)src;
    if (dt == QMX_INT8 || dt == QMX_INT4) {
        const int8_t *r = qmx__kv_row_i8(dt, src, d, row8);
        for (i = 0; i < d; i++) rowf[i] = (float)r[i];
    } else {
        qmx__kv_fp8_decode(src, d, dt, lut, rowf);
    }
    return rowf;
}

#if defined(QMX__K_VNNI)
/* The 16 int32 lane sums of a[0..15] as one vector, lane i = sum of a[i]'s lanes (exact
 * integers: the tree's shape does not matter, this one is the cheapest in shuffles). */
QMX__VINLINE __m512i qmx__kv_hsum16(const __m512i a[16]) {
    __m512i b[8], c4[4], d2[2];
    int t;
    for (t = 0; t < 8; t++)
        b[t] = _mm512_add_epi32(_mm512_unpacklo_epi32(a[2 * t], a[2 * t + 1]),
                                _mm512_unpackhi_epi32(a[2 * t], a[2 * t + 1]));
    for (t = 0; t < 4; t++)
        c4[t] = _mm512_add_epi32(_mm512_unpacklo_epi64(b[2 * t], b[2 * t + 1]),
                                 _mm512_unpackhi_epi64(b[2 * t], b[2 * t + 1]));
    for (t = 0; t < 2; t++)
        d2[t] = _mm512_add_epi32(_mm512_shuffle_i32x4(c4[2 * t], c4[2 * t + 1], 0x88),
                                 _mm512_shuffle_i32x4(c4[2 * t], c4[2 * t + 1], 0xDD));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(d2[0], d2[1], 0x88),
                            _mm512_shuffle_i32x4(d2[0], d2[1], 0xDD));
}
/* The integer-query logits of the g heads for 16 consecutive int8 key rows, AVX-512 VNNI:
 * vpdpbusd on (k + 128) as u8 times q8 as s8 (exact, no saturation), minus 128 * sum(q8);
 * the 16 accumulators are reduced together (integers: any order is exact). Then the same
 * float steps as the scalar path: l = (float)dot; l = l * qsc; l = l * ks. */
QMX__KV_STRICT static void qmx__kv_k16_vnni(const int8_t *rows, size_t stride, size_t d,
                                            const int8_t *q8, const int32_t *qsum,
                                            const float *qsc, size_t g, const float *ks,
                                            float *logits, size_t ldl) {
    QMX__KV_NOCONTRACT
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    size_t j, e, t;
    if (g == 4) {
        /* The usual GQA group: tiles of 4 tokens x 4 heads, so each row of K is loaded and
         * flipped once for the 4 heads. The integer dots are exact, so the tree may sum them in
         * any layout: lane 4h + u holds (head h, token t0 + u); then the same float steps per
         * element as below (convert, * qsc[h], * ks[t]). */
        const __m512i qs = _mm512_setr_epi32(128 * qsum[0], 128 * qsum[0], 128 * qsum[0],
                                             128 * qsum[0], 128 * qsum[1], 128 * qsum[1],
                                             128 * qsum[1], 128 * qsum[1], 128 * qsum[2],
                                             128 * qsum[2], 128 * qsum[2], 128 * qsum[2],
                                             128 * qsum[3], 128 * qsum[3], 128 * qsum[3],
                                             128 * qsum[3]);
        const __m512 qc = _mm512_setr_ps(qsc[0], qsc[0], qsc[0], qsc[0], qsc[1], qsc[1], qsc[1],
                                         qsc[1], qsc[2], qsc[2], qsc[2], qsc[2], qsc[3], qsc[3],
                                         qsc[3], qsc[3]);
        size_t t0, h, u;
        __m512i q128[8];   /* head_dim 128 (the common case): the query held in registers */
        if (d == 128)
            for (h = 0; h < 8; h++) q128[h] = _mm512_loadu_si512((const void *)(q8 + (h >> 1) * 128 + 64 * (h & 1)));
        for (t0 = 0; t0 < 16; t0 += 4) {
            __m512i a[16];
            __m512 f;
            for (t = 0; t < 16; t++) a[t] = _mm512_setzero_si512();
            if (d == 128) {
                for (u = 0; u < 4; u++) {
                    const int8_t *ru = rows + (t0 + u) * stride;
                    __m512i k0 = _mm512_xor_si512(_mm512_loadu_si512((const void *)ru), flip);
                    __m512i k1 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(ru + 64)), flip);
                    for (h = 0; h < 4; h++) {
                        a[4 * h + u] = _mm512_dpbusd_epi32(a[4 * h + u], k0, q128[2 * h]);
                        a[4 * h + u] = _mm512_dpbusd_epi32(a[4 * h + u], k1, q128[2 * h + 1]);
                    }
                }
            } else
            for (e = 0; e < d; e += 64) {
                __mmask64 m = d - e >= 64 ? ~(__mmask64)0 : (((__mmask64)1) << (d - e)) - 1;
                __m512i qq[4];
                for (h = 0; h < 4; h++) qq[h] = _mm512_maskz_loadu_epi8(m, q8 + h * d + e);
                for (u = 0; u < 4; u++) {
                    __m512i kk = _mm512_xor_si512(
                        _mm512_maskz_loadu_epi8(m, rows + (t0 + u) * stride + e), flip);
                    for (h = 0; h < 4; h++) a[4 * h + u] = _mm512_dpbusd_epi32(a[4 * h + u], kk, qq[h]);
                }
            }
            f = _mm512_cvtepi32_ps(_mm512_sub_epi32(qmx__kv_hsum16(a), qs));
            f = _mm512_mul_ps(f, qc);
            if (ks) f = _mm512_mul_ps(f, _mm512_broadcast_f32x4(_mm_loadu_ps(ks + t0)));
            _mm_storeu_ps(logits + t0, _mm512_castps512_ps128(f));
            _mm_storeu_ps(logits + ldl + t0, _mm512_extractf32x4_ps(f, 1));
            _mm_storeu_ps(logits + 2 * ldl + t0, _mm512_extractf32x4_ps(f, 2));
            _mm_storeu_ps(logits + 3 * ldl + t0, _mm512_extractf32x4_ps(f, 3));
        }
        return;
    }
    for (j = 0; j < g; j++) {
        __m512i a[16], s;
        __m512 f;
        for (t = 0; t < 16; t++) a[t] = _mm512_setzero_si512();
        for (e = 0; e < d; e += 64) {
            __mmask64 m = d - e >= 64 ? ~(__mmask64)0 : (((__mmask64)1) << (d - e)) - 1;
            __m512i qq = _mm512_maskz_loadu_epi8(m, q8 + j * d + e);
            for (t = 0; t < 16; t++) {
                __m512i kk = _mm512_maskz_loadu_epi8(m, rows + t * stride + e);
                a[t] = _mm512_dpbusd_epi32(a[t], _mm512_xor_si512(kk, flip), qq);
            }
        }
        s = _mm512_sub_epi32(qmx__kv_hsum16(a), _mm512_set1_epi32(128 * qsum[j]));
        f = _mm512_cvtepi32_ps(s);
        f = _mm512_mul_ps(f, _mm512_set1_ps(qsc[j]));
        if (ks) f = _mm512_mul_ps(f, _mm512_loadu_ps(ks));
        _mm512_storeu_ps(logits + j * ldl, f);
    }
}
#endif

#if defined(QMX__AVX512)
/* dot16(q, row t) for 16 rows (row t at rows + t * d, d a multiple of 16): each token's 16
 * lanes accumulate as in qmx__kv_dot_f32, then the 16 lane sets are folded together with the
 * same tree (a[j] += a[j+8], += a[j+4], += a[j+2], a[0] += a[1]) by shuffles, so every dot is
 * bit-identical to qmx__kv_dot_f32's. */
/* rows are float (rows8 == NULL) or int8 (rows8, converted exactly on the fly), stride d */
QMX__KV_STRICT static void qmx__kv_kf16(const float *q, const float *rows, const int8_t *rows8,
                                        size_t d, float dots[16]) {
    QMX__KV_NOCONTRACT
    __m512 a[16], b[8], c4[4], d2[2], e;
    float tmp[16];
    size_t t, i;
    for (t = 0; t < 16; t++) a[t] = _mm512_setzero_ps();
    for (i = 0; i < d; i += 16) {
        __m512 qq = _mm512_loadu_ps(q + i);
        for (t = 0; t < 16; t++) {
            __m512 k = rows8
                ? _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(QMX__KV_L128(rows8 + t * d + i)))
                : _mm512_loadu_ps(rows + t * d + i);
            __m512 p = _mm512_mul_ps(qq, k);
            QMX__KV_BAR(p);
            a[t] = _mm512_add_ps(a[t], p);
        }
    }
    for (t = 0; t < 8; t++)   /* l[j] + l[j+8]: tokens 2t, 2t+1 as 256-bit halves */
        b[t] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * t], a[2 * t + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * t], a[2 * t + 1], 0xEE));
    for (t = 0; t < 4; t++)   /* l[j] + l[j+4]: tokens 4t..4t+3 as 128-bit lanes */
        c4[t] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * t], b[2 * t + 1], 0x88),
                              _mm512_shuffle_f32x4(b[2 * t], b[2 * t + 1], 0xDD));
    for (t = 0; t < 2; t++)   /* l[j] + l[j+2] */
        d2[t] = _mm512_add_ps(_mm512_shuffle_ps(c4[2 * t], c4[2 * t + 1], 0x44),
                              _mm512_shuffle_ps(c4[2 * t], c4[2 * t + 1], 0xEE));
    e = _mm512_add_ps(_mm512_shuffle_ps(d2[0], d2[1], 0x88),   /* l[0] + l[1] */
                      _mm512_shuffle_ps(d2[0], d2[1], 0xDD));
    _mm512_storeu_ps(tmp, e);
    for (i = 0; i < 4; i++)      /* element 4L + m holds token 4m + L */
        for (t = 0; t < 4; t++) dots[4 * t + i] = tmp[4 * i + t];
}
#endif

#if defined(QMX__KV_VBMI)
/* dot16 of 4 query heads (qh[h], for h < 4) with 16 fp8 rows (row t at src + t * stride, d
 * codes, any d), the rows decoded in registers (QMX__KV_F8X64) and each decoded vector used
 * for the 4 heads: per 4 tokens, accumulator 4u + h holds (token u, head h), each lane
 * accumulating as in qmx__kv_dot_f32 (lanes past d add +0, which changes no lane: a lane
 * that starts at +0 is never -0), then qmx__kv_kf16's tree, so dots[h][u] is bit-identical to
 * qmx__kv_dot_f32(qh[h], row u, d). */
QMX__KV_STRICT static void qmx__kv_kf16_fp8(const float *const qh[4], const unsigned char *src,
                                            size_t stride, size_t d, const qmx__kv_f8v *V,
                                            float dots[4][16]) {
    QMX__KV_NOCONTRACT
    size_t t0, u, h, e, s;
    for (t0 = 0; t0 < 16; t0 += 4) {
        __m512 a[16], b[8], c4[4], d2[2], f;
        for (u = 0; u < 4; u += 2) {   /* whole chunks, a token pair per pass: each q vector
                                        * loaded once for 2 tokens, constant trip counts */
            __m512 y0[4], y1[4];
            for (h = 0; h < 4; h++) y0[h] = y1[h] = _mm512_setzero_ps();
            for (e = 0; e + 64 <= d; e += 64) {
                __m512 x0[4], x1[4];
                QMX__KV_F8X64(V, _mm512_loadu_si512((const void *)(src + (t0 + u) * stride + e)), x0);
                QMX__KV_F8X64(V, _mm512_loadu_si512((const void *)(src + (t0 + u + 1) * stride + e)), x1);
                for (s = 0; s < 4; s++)
                    for (h = 0; h < 4; h++) {
                        __m512 qv = _mm512_loadu_ps(qh[h] + e + 16 * s), p0, p1;
#if defined(__GNUC__)
                        __asm__("" : "+v"(qv));   /* one load for both products */
#endif
                        p0 = _mm512_mul_ps(qv, x0[s]);
                        p1 = _mm512_mul_ps(qv, x1[s]);
                        QMX__KV_BAR(p0);
                        QMX__KV_BAR(p1);
                        y0[h] = _mm512_add_ps(y0[h], p0);
                        y1[h] = _mm512_add_ps(y1[h], p1);
                    }
            }
            for (h = 0; h < 4; h++) {
                a[4 * u + h] = y0[h];
                a[4 * u + 4 + h] = y1[h];
            }
        }
        e = d & ~(size_t)63;
        if (e < d) {   /* the last d % 64 dims: masked (lanes past d: q = 0, code 0) */
            size_t r = d - e, ns = (r + 15) / 16;
            for (u = 0; u < 4; u++) {
                __m512 x[4];
                QMX__KV_F8X64(V, QMX__KV_F8LOAD(src + (t0 + u) * stride + e, r), x);
                for (s = 0; s < ns; s++) {
                    size_t m = r - 16 * s;
                    __mmask16 k = m >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1u);
                    for (h = 0; h < 4; h++) {
                        __m512 p = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, qh[h] + e + 16 * s), x[s]);
                        QMX__KV_BAR(p);
                        a[4 * u + h] = _mm512_add_ps(a[4 * u + h], p);
                    }
                }
            }
        }
        for (u = 0; u < 8; u++)
            b[u] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * u], a[2 * u + 1], 0x44),
                                 _mm512_shuffle_f32x4(a[2 * u], a[2 * u + 1], 0xEE));
        for (u = 0; u < 4; u++)
            c4[u] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * u], b[2 * u + 1], 0x88),
                                  _mm512_shuffle_f32x4(b[2 * u], b[2 * u + 1], 0xDD));
        for (u = 0; u < 2; u++)
            d2[u] = _mm512_add_ps(_mm512_shuffle_ps(c4[2 * u], c4[2 * u + 1], 0x44),
                                  _mm512_shuffle_ps(c4[2 * u], c4[2 * u + 1], 0xEE));
        f = _mm512_add_ps(_mm512_shuffle_ps(d2[0], d2[1], 0x88), _mm512_shuffle_ps(d2[0], d2[1], 0xDD));
        /* lane 4i + t holds accumulator 4t + i: (token t, head i) */
        _mm_storeu_ps(dots[0] + t0, _mm512_castps512_ps128(f));
        _mm_storeu_ps(dots[1] + t0, _mm512_extractf32x4_ps(f, 1));
        _mm_storeu_ps(dots[2] + t0, _mm512_extractf32x4_ps(f, 2));
        _mm_storeu_ps(dots[3] + t0, _mm512_extractf32x4_ps(f, 3));
    }
}

/* The float-value sum of qmx__kv_v_tile_f32 (acc[j][e] = acc[j][e] + w[j][t] * v[t][e], tokens
 * in order) over n fp8 rows (row t at rows + t * stride), decoded in registers: 4 heads x 64
 * dims of accumulators, each decoded vector used for the 4 heads; any d, any n. */
QMX__KV_STRICT static void qmx__kv_v_fp8(float *acc, size_t d, const float *w, size_t ldw,
                                         size_t g, const unsigned char *rows, size_t stride,
                                         size_t n, const qmx__kv_f8v *V) {
    QMX__KV_NOCONTRACT
    size_t j0, j, c, t, k;
    for (j0 = 0; j0 < g; j0 += 4) {
        size_t hb = g - j0 < 4 ? g - j0 : 4;
        for (c = 0; c < d; c += 64) {
            size_t r = d - c < 64 ? d - c : 64, ns = (r + 15) / 16;
            __mmask16 km[4];
            __m512 a[4][4];
            for (k = 0; k < 4; k++) {
                size_t m = r > 16 * k ? r - 16 * k : 0;
                km[k] = m >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1u);
            }
            for (j = 0; j < 4; j++)
                for (k = 0; k < 4; k++)
                    a[j][k] = j < hb ? _mm512_maskz_loadu_ps(km[k], acc + (j0 + j) * d + c + 16 * k)
                                     : _mm512_setzero_ps();
            if (hb == 4 && ns == 4) {   /* the usual case: no per-head or per-vector test */
                for (t = 0; t < n; t++) {
                    __m512 x[4];
                    if (t + 16 < n)   /* a strided walk (row halves): ask for it ahead */
                        _mm_prefetch((const char *)(rows + (t + 16) * stride + c), _MM_HINT_T0);
                    QMX__KV_F8X64(V, _mm512_loadu_si512((const void *)(rows + t * stride + c)), x);
                    for (j = 0; j < 4; j++) {
                        __m512 ww = _mm512_set1_ps(w[(j0 + j) * ldw + t]);
                        for (k = 0; k < 4; k++) {
                            __m512 p = _mm512_mul_ps(ww, x[k]);
                            QMX__KV_BAR(p);
                            a[j][k] = _mm512_add_ps(a[j][k], p);
                        }
                    }
                }
            } else {
                for (t = 0; t < n; t++) {
                    __m512 x[4];
                    QMX__KV_F8X64(V, QMX__KV_F8LOAD(rows + t * stride + c, r), x);
                    for (j = 0; j < hb; j++) {
                        __m512 ww = _mm512_set1_ps(w[(j0 + j) * ldw + t]);
                        for (k = 0; k < ns; k++) {
                            __m512 p = _mm512_mul_ps(ww, x[k]);
                            QMX__KV_BAR(p);
                            a[j][k] = _mm512_add_ps(a[j][k], p);
                        }
                    }
                }
            }
            for (j = 0; j < hb; j++)
                for (k = 0; k < ns; k++)
                    _mm512_mask_storeu_ps(acc + (j0 + j) * d + c + 16 * k, km[k], a[j][k]);
        }
    }
}
#endif

/* BLOCK KEYS: the logits of the g query heads against the key row at `slot` (blocks of db
 * along d, block b's stored scale s_b decoded exactly to float), into l[j * ldl]:
 *   integer query: acc = 0; for b = 0, 1, ..: acc = acc + ((float)I_b * s_b), I_b the exact
 *     int32 dot of the block; l = acc * (s_q * isd)
 *   float query:   acc = 0; for b = 0, 1, ..: acc = acc + (dot16(q_b, k_b) * s_b); l = acc * isd
 * (dot16 over the block's db elements, qmx__kv_dot_f32; the block scales are staged in w->qf) */
QMX__KV_STRICT static void qmx__kv_logit_blocks(const qmx_kv_cache *c, size_t h, size_t slot,
                                                const unsigned char *src, const float *q,
                                                size_t g, float isd, int use_int,
                                                const qmx__kv_ws *w, float *l, size_t ldl) {
    QMX__KV_NOCONTRACT
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, db = n->dim_block, nb = d / db, s0 = (h * n->capacity + slot) * nb;
    size_t j, b;
    float *sb = w->qf;
    for (b = 0; b < nb; b++) sb[b] = qmx__kv_bscale(n, c->k_scales, s0 + b);
    if (use_int) {
        const int8_t *kr = qmx__kv_row_i8(n->k_dtype, src, d, w->row8);
        for (j = 0; j < g; j++) {
            float acc = 0.0f;
            for (b = 0; b < nb; b++) {
                float f = (float)qmx__kv_dot_i8(w->q8 + j * d + b * db, kr + b * db, db);
                f = f * sb[b];
                QMX__KV_BAR(f);
                acc = acc + f;
            }
            acc = acc * w->qsc[j];
            l[j * ldl] = acc;
        }
    } else {
        const float *kr = qmx__kv_row_f32(n->k_dtype, src, d, w->lut_k, w->rowf, w->row8);
        for (j = 0; j < g; j++) {
            float acc = 0.0f;
            for (b = 0; b < nb; b++) {
                float f = qmx__kv_dot_f32(q + j * d + b * db, kr + b * db, db);
                f = f * sb[b];
                QMX__KV_BAR(f);
                acc = acc + f;
            }
            acc = acc * isd;
            l[j * ldl] = acc;
        }
    }
}

#if defined(QMX__K_VNNI)
/* BLOCK KEYS, AVX-512 VNNI: the exact int32 block dots I[t][j][b] of nt <= 16 int8 key rows
 * (row t at rows + t * stride, d a multiple of 64) with the g int8 query heads. One vpdpbusd
 * per (token, head, 64-byte chunk) on (k + 128) u8 x q8 s8; 16 such vectors are reduced
 * together by qmx__kv_hsum16's first three levels, after which 128-bit lane 2p + hf, dword m
 * holds the sum of bytes [32 hf, 32 hf + 32) of vector 8 (lane pair) + 4p + m: the two blocks
 * of 32 of each vector (a fourth level adds them for blocks of 64); then - 128 * (the block's
 * sum of q8). Integers throughout: exact in any order. */
static void qmx__kv_kblk_vnni(const int8_t *rows, size_t stride, size_t d, size_t db,
                              const int8_t *q8, const int32_t *qs, size_t g, size_t nt,
                              int32_t *I) {
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    size_t nch = d / 64, nb = d / db, V = nt * g * nch, v0, i, jn = 0, cn = 0, tn = 0;
    int32_t tmp[32];   /* qs[j * nb + b]: 128 * block b's sum of head j's q8 (by the caller) */
    for (v0 = 0; v0 < V; v0 += 16) {
        __m512i a[16], bq[8], c4[4], d2[2];
        /* vector v = (t * g + j) * nch + ch: counters instead of divisions */
        size_t jv = jn, cv = cn, tv = tn;
        for (i = 0; i < 16; i++) {
            if (v0 + i >= V) { a[i] = _mm512_setzero_si512(); continue; }
            a[i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                _mm512_xor_si512(_mm512_loadu_si512((const void *)(rows + tv * stride + 64 * cv)), flip),
                _mm512_loadu_si512((const void *)(q8 + jv * d + 64 * cv)));
            if (++cv == nch) { cv = 0; if (++jv == g) { jv = 0; tv++; } }
        }
        for (i = 0; i < 8; i++)
            bq[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(a[2 * i], a[2 * i + 1]),
                                     _mm512_unpackhi_epi32(a[2 * i], a[2 * i + 1]));
        for (i = 0; i < 4; i++)
            c4[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(bq[2 * i], bq[2 * i + 1]),
                                     _mm512_unpackhi_epi64(bq[2 * i], bq[2 * i + 1]));
        for (i = 0; i < 2; i++)
            d2[i] = _mm512_add_epi32(_mm512_shuffle_i32x4(c4[2 * i], c4[2 * i + 1], 0x88),
                                     _mm512_shuffle_i32x4(c4[2 * i], c4[2 * i + 1], 0xDD));
        if (db == 32) {
            _mm512_storeu_si512((void *)tmp, d2[0]);
            _mm512_storeu_si512((void *)(tmp + 16), d2[1]);
        } else {
            _mm512_storeu_si512((void *)tmp,
                _mm512_add_epi32(_mm512_shuffle_i32x4(d2[0], d2[1], 0x88),
                                 _mm512_shuffle_i32x4(d2[0], d2[1], 0xDD)));
        }
        /* I[(t * g + j) * nb + b]: with b = 2 ch + hf (32) or ch (64) that is I[2 v + hf] / I[v] */
        for (i = 0; i < 16 && v0 + i < V; i++) {
            size_t v = v0 + i;
            if (db == 32) {
                size_t k0 = (i >> 3) * 16 + 8 * ((i & 7) >> 2) + (i & 3);
                I[2 * v] = tmp[k0] - qs[jn * nb + 2 * cn];
                I[2 * v + 1] = tmp[k0 + 4] - qs[jn * nb + 2 * cn + 1];
            } else {
                I[v] = tmp[i] - qs[jn * nb + cn];
            }
            if (++cn == nch) { cn = 0; if (++jn == g) { jn = 0; tn++; } }
        }
    }
}
#endif

/* BLOCK VALUES: acc[j][e] = sum over the visible tokens of (e[j][t] * s_v[t][b(e)]) v[t][e], in
 * tiles of 64 (int8 / int4: the integer tiles of qmx__kv_v_tile_i8, one per block, with the
 * block's weights) or 16 tokens (fp8: decoded, then qmx__kv_v_tile_f32's per-token order)
 * counted from lo; block b's sums accumulate in w->bacc [b][g][db] and are copied out last. */
QMX__KV_STRICT static void qmx__kv_v_blocks(const qmx_kv_cache *c, size_t h, size_t lo,
                                            size_t cnt, size_t g, const qmx__kv_ws *w,
                                            float *acc) {
    QMX__KV_NOCONTRACT
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, db = n->dim_block, nb = d / db, cap = n->capacity;
    qmx_dtype dt = n->v_dtype;
    int integer = dt == QMX_INT8 || dt == QMX_INT4;
    size_t T = integer ? 64 : 16, i0, b, j, t, e, nt;
    int inreg = 0;   /* fp8 decoded in registers (VBMI), tiles of 64 cut at a ring's wrap */
#if defined(QMX__KV_VBMI)
    qmx__kv_f8v f8;
    if (qmx_dtype_is_fp8(dt)) {
        qmx__kv_f8v_init(&f8, dt);
        inreg = 1;
        T = 64;
    }
#endif
    for (e = 0; e < g * d; e++) w->bacc[e] = 0.0f;
    for (i0 = 0; i0 < cnt; i0 += nt) {
        size_t slot = (lo + i0) % cap;
        const int8_t *rows8 = w->row8;
        nt = cnt - i0 < T ? cnt - i0 : T;
        if (inreg && slot + nt > cap) nt = cap - slot;   /* fp8: a per-token order, any cut */
        if (inreg) {
            /* rows read in place by qmx__kv_v_fp8 below */
        } else if (dt == QMX_INT8 && slot + nt <= cap) {
            rows8 = (const int8_t *)(const void *)(c->v + (h * cap + slot) * c->row_v);
        } else {
            for (t = 0; t < nt; t++) {
                const unsigned char *src = c->v + (h * cap + (slot + t) % cap) * c->row_v;
                if (dt == QMX_INT4) qmx__kv_unpack4(src, d, w->row8 + t * d);
                else if (dt == QMX_INT8)
                    for (e = 0; e < d; e++) w->row8[t * d + e] = (int8_t)src[e];
                else qmx__kv_fp8_decode(src, d, dt, w->lut_v, w->rowf + t * d);
            }
        }
        for (b = 0; b < nb; b++) {
            for (t = 0; t < nt; t++) {
                float s = qmx__kv_bscale(n, c->v_scales, (h * cap + (slot + t) % cap) * nb + b);
                for (j = 0; j < g; j++) {
                    float x = w->logits[j * cnt + i0 + t];
                    x = x * s;
                    w->bw[j * 64 + t] = x;
                }
            }
#if defined(QMX__KV_VBMI)
            if (inreg) {
                qmx__kv_v_fp8(w->bacc + b * g * db, db, w->bw, 64, g,
                              c->v + (h * cap + slot) * c->row_v + b * db, c->row_v, nt, &f8);
                continue;
            }
#endif
            if (integer)
                qmx__kv_v_tile_i8(w->bacc + b * g * db, db, w->bw, 64, g, rows8 + b * db, d, nt,
                                  w->vp, w->vsc);
            else
                qmx__kv_v_tile_f32(w->bacc + b * g * db, db, w->bw, 64, g, w->rowf + b * db, d,
                                   nt);
        }
    }
    for (j = 0; j < g; j++)
        for (b = 0; b < nb; b++)
            for (e = 0; e < db; e++) acc[j * d + b * db + e] = w->bacc[(b * g + j) * db + e];
}

/* Logits of the g query heads of KV head h over positions [lo, hi) into w->logits[j][i]. */
QMX__KV_STRICT static void qmx__kv_logits(const qmx_kv_cache *c, size_t h, const float *q,
                                          size_t g, size_t lo, size_t hi, float isd, int int_q,
                                          const qmx__kv_ws *w) {
    QMX__KV_NOCONTRACT
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, cap = n->capacity, cnt = hi - lo, i, j, blk_cur = (size_t)-1;
    int chan = qmx__kv_is_channel(c);
    size_t G = n->channel_block, completed = chan ? qmx__kv_completed(c) : 0;
    qmx_dtype dt = n->k_dtype;
    int use_int = int_q && !chan && (dt == QMX_INT8 || dt == QMX_INT4);
#if defined(QMX__K_VNNI)
    int32_t qsb[64];   /* BLOCK keys on VNNI: 128 * the block sums of q8 (g * blocks <= 64) */
    int qs_done = 0;
#endif
#if defined(QMX__KV_VBMI)
    qmx__kv_f8v f8;
    if (qmx_dtype_is_fp8(dt)) qmx__kv_f8v_init(&f8, dt);
#endif
    if (use_int && !chan)
        for (j = 0; j < g; j++) w->qsc[j] = qmx__kv_quant_query(q + j * d, d, w->q8 + j * d) * isd;
#if defined(QMX__K_VNNI)
    if (use_int)
        for (j = 0; j < g; j++) {   /* sum(q8) of each head, for the +128 correction */
            int32_t sq = 0;
            for (i = 0; i < d; i++) sq += w->q8[j * d + i];
            ((int32_t *)(void *)w->sums)[j] = sq;
        }
#endif
    for (i = 0; i < cnt; i++) {
        size_t p = lo + i, slot = p < cap ? p : p % cap;  /* no division in the linear case */
        const unsigned char *src = c->k + (h * cap + slot) * c->row_k;
        float ks = 1.0f;
        int scaled = 0;
        if (n->k_axis == QMX_KV_BLOCK) {   /* see BLOCK KEYS */
#if defined(QMX__K_VNNI)
            size_t nbk = d / n->dim_block;
            if (use_int && (d & 63) == 0 && g * nbk <= 64 && i + 16 <= cnt && slot + 16 <= cap) {
                /* 16 tokens: the block dots on VNNI (into rowf), then the same float steps */
                int32_t *I = (int32_t *)(void *)w->rowf;
                const int8_t *rows = (const int8_t *)(const void *)src;
                size_t r, b;
                if (dt == QMX_INT4) {
                    for (r = 0; r < 16; r++) qmx__kv_unpack4(src + r * c->row_k, d, w->row8 + r * d);
                    rows = w->row8;
                }
                if (!qs_done) {   /* once per KV head: 128 * each block's sum of q8 */
                    for (j = 0; j < g * nbk; j++) {
                        int32_t sq = 0;
                        for (r = 0; r < n->dim_block; r++) sq += w->q8[j * n->dim_block + r];
                        qsb[j] = 128 * sq;
                    }
                    qs_done = 1;
                }
                qmx__kv_kblk_vnni(rows, dt == QMX_INT4 ? d : c->row_k, d, n->dim_block, w->q8, qsb,
                                  g, 16, I);
                for (r = 0; r < 16; r++) {
                    size_t s0 = (h * cap + slot + r) * nbk;
                    for (b = 0; b < nbk; b++) w->qf[b] = qmx__kv_bscale(n, c->k_scales, s0 + b);
                    for (j = 0; j < g; j++) {
                        float acc = 0.0f;
                        for (b = 0; b < nbk; b++) {
                            float f = (float)I[(r * g + j) * nbk + b];
                            f = f * w->qf[b];
                            QMX__KV_BAR(f);
                            acc = acc + f;
                        }
                        acc = acc * w->qsc[j];
                        w->logits[j * cnt + i + r] = acc;
                    }
                }
                i += 15;
                continue;
            }
#endif
#if defined(QMX__KV_VBMI)
            if (!use_int && qmx_dtype_is_fp8(dt) && (g & 3) == 0 && g <= d && i + 16 <= cnt &&
                slot + 16 <= cap) {
                /* fp8 keys, 16 tokens: each block's dot16 for 4 heads x 16 tokens decoded in
                 * registers (qmx__kv_kf16_fp8 over the block's codes, row stride row_k), the
                 * block terms added in block order into ls (rowf) [g][16], then * isd */
                float dots[4][16], sb[16], *ls = w->rowf;
                size_t r, b, j0, jj, nbk = d / n->dim_block, db = n->dim_block;
                for (r = 0; r < g * 16; r++) ls[r] = 0.0f;
                for (b = 0; b < nbk; b++) {
                    for (r = 0; r < 16; r++)
                        sb[r] = qmx__kv_bscale(n, c->k_scales, (h * cap + slot + r) * nbk + b);
                    for (j0 = 0; j0 < g; j0 += 4) {
                        const float *qh[4];
                        for (r = 0; r < 4; r++) qh[r] = q + (j0 + r) * d + b * db;
                        qmx__kv_kf16_fp8(qh, src + b * db, c->row_k, db, &f8, dots);
                        for (jj = 0; jj < 4; jj++)
                            for (r = 0; r < 16; r++) {
                                float f = dots[jj][r] * sb[r];
                                QMX__KV_BAR(f);
                                ls[(j0 + jj) * 16 + r] = ls[(j0 + jj) * 16 + r] + f;
                            }
                    }
                }
                for (j = 0; j < g; j++)
                    for (r = 0; r < 16; r++) {
                        float l = ls[j * 16 + r] * isd;
                        w->logits[j * cnt + i + r] = l;
                    }
                i += 15;
                continue;
            }
#endif
            qmx__kv_logit_blocks(c, h, slot, src, q, g, isd, use_int, w, w->logits + i, cnt);
            continue;
        }
#if defined(QMX__K_VNNI)
        if (use_int && i + 16 <= cnt && slot + 16 <= cap) {
            const float *kss = c->k_scales + (n->k_axis == QMX_KV_DKV ? h * cap + slot : slot);
            const int8_t *rows = (const int8_t *)(const void *)src;
            size_t r;
            if (dt == QMX_INT4) {   /* 16 rows unpacked to int8 */
                for (r = 0; r < 16; r++) qmx__kv_unpack4(src + r * c->row_k, d, w->row8 + r * d);
                rows = w->row8;
            }
            qmx__kv_k16_vnni(rows, dt == QMX_INT4 ? d : c->row_k, d, w->q8,
                             (const int32_t *)(const void *)w->sums, w->qsc, g, kss,
                             w->logits + i, cnt);
            i += 15;
            continue;
        }
#endif
        if (chan && p >= completed) {         /* residual: exact float key */
            const float *kr = c->k_resid + (h * G + p % G) * d;
            for (j = 0; j < g; j++) {
                float l = qmx__kv_dot_f32(q + j * d, kr, d);
                l = l * isd;
                w->logits[j * cnt + i] = l;
            }
            continue;
        }
        if (chan) {
            size_t blk = slot / G;
            if (blk != blk_cur) {   /* fold this block's channel scales into the query */
                const float *s = c->k_scales + (h * (cap / G) + blk) * d;
                size_t e;
                blk_cur = blk;
                for (j = 0; j < g; j++) {
                    float *qf = w->qf + j * d;
                    for (e = 0; e < d; e++) qf[e] = q[j * d + e] * s[e];
                              }
            }
        } else if (dt != QMX_FLOAT32) {
            ks = c->k_scales[n->k_axis == QMX_KV_DKV ? h * cap + slot : slot];
            scaled = 1;
        }
#if defined(QMX__KV_VBMI)
        if (qmx_dtype_is_fp8(dt) && i + 16 <= cnt && slot + 16 <= cap &&
            (!chan || (p + 16 <= completed && slot / G == (slot + 15) / G))) {
            /* fp8 rows decoded in registers, 4 query heads per pass (any head_dim) */
            const float *qq = chan ? w->qf : q;
            const float *kss = !scaled ? NULL
                             : c->k_scales + (n->k_axis == QMX_KV_DKV ? h * cap + slot : slot);
            float dots[4][16];
            size_t j0, r;
            for (j0 = 0; j0 + 4 <= g; j0 += 4) {
                const float *qh[4];
                for (r = 0; r < 4; r++) qh[r] = qq + (j0 + r) * d;
                qmx__kv_kf16_fp8(qh, src, c->row_k, d, &f8, dots);
                for (j = 0; j < 4; j++)
                    for (r = 0; r < 16; r++) {
                        float l = dots[j][r] * isd;
                        if (scaled) l = l * kss[r];
                        w->logits[(j0 + j) * cnt + i + r] = l;
                    }
            }
            if (j0 < g) {   /* the g % 4 other heads: the rows decoded once, dot16 per head */
                qmx__kv_fp8_decode(src, 16 * d, dt, w->lut_k, w->rowf);
                for (; j0 < g; j0++)
                    for (r = 0; r < 16; r++) {
                        float l;
                        if (r == 0 && (d & 15) == 0)
                            qmx__kv_kf16(qq + j0 * d, w->rowf, NULL, d, dots[0]);
                        l = (d & 15) == 0 ? dots[0][r] : qmx__kv_dot_f32(qq + j0 * d, w->rowf + r * d, d);
                        l = l * isd;
                        if (scaled) l = l * kss[r];
                        w->logits[j0 * cnt + i + r] = l;
                    }
            }
            i += 15;
            continue;
        }
#endif
#if defined(QMX__AVX512)
        if (!use_int && (d & 15) == 0 && i + 16 <= cnt && slot + 16 <= cap &&
            (!chan || (p + 16 <= completed && slot / G == (slot + 15) / G))) {
            const float *qq = chan ? w->qf : q, *rows = w->rowf;
            const float *kss = !scaled ? NULL
                             : c->k_scales + (n->k_axis == QMX_KV_DKV ? h * cap + slot : slot);
            const int8_t *rows8 = NULL;
            float dots[16];
            size_t r;
            if (dt == QMX_FLOAT32) {
                rows = (const float *)(const void *)src;
            } else if (dt == QMX_INT8) {
                rows8 = (const int8_t *)(const void *)src;
            } else if (dt == QMX_INT4) {
                for (r = 0; r < 16; r++) qmx__kv_unpack4(src + r * c->row_k, d, w->row8 + r * d);
                rows8 = w->row8;
            } else {
                qmx__kv_fp8_decode(src, 16 * d, dt, w->lut_k, w->rowf);
            }
            for (j = 0; j < g; j++) {
                qmx__kv_kf16(qq + j * d, rows, rows8, d, dots);
                for (r = 0; r < 16; r++) {
                    float l = dots[r] * isd;
                    if (scaled) l = l * kss[r];
                    w->logits[j * cnt + i + r] = l;
                }
            }
            i += 15;
            continue;
        }
#endif
        if (use_int) {
            const int8_t *kr = qmx__kv_row_i8(dt, src, d, w->row8);
            for (j = 0; j < g; j++) {
                float l = (float)qmx__kv_dot_i8(w->q8 + j * d, kr, d);
                l = l * w->qsc[j];
                if (scaled) l = l * ks;
                w->logits[j * cnt + i] = l;
            }
        } else {
            const float *kr = qmx__kv_row_f32(dt, src, d, w->lut_k, w->rowf, w->row8);
            const float *qq = chan ? w->qf : q;
            for (j = 0; j < g; j++) {
                float l = qmx__kv_dot_f32(qq + j * d, kr, d);
                l = l * isd;
                if (scaled) l = l * ks;
                w->logits[j * cnt + i] = l;
            }
        }
    }
}

/* Resolves the visible range; QMX_OK or QMX_ERR_ARG. */
static qmx_status qmx__kv_range(const qmx_kv_cache *c, const qmx_kv_attn_opts *o, size_t *lo,
                                size_t *hi) {
    size_t h = o->causal_len ? o->causal_len : c->n_tokens, l, old = qmx__kv_oldest(c);
    size_t win = o->window ? o->window : (c->cfg.mode == QMX_KV_RING ? c->cfg.capacity : 0);
    if (h > c->n_tokens || h == 0) return QMX_ERR_ARG;
    l = (win && win < h) ? h - win : 0;
    if (l < old) return QMX_ERR_ARG;
    *lo = l;
    *hi = h;
    return QMX_OK;
}

static void qmx__kv_bind_ws(const qmx_kv_config *n, size_t n_heads, void *ws, qmx__kv_ws *w) {
    size_t off[12], bytes;
    unsigned char *b = (unsigned char *)ws;
    b += (64u - ((size_t)((uintptr_t)b & 63u))) & 63u;
    (void)qmx__kv_ws_size(n, n_heads, &bytes, off);
    /* the offsets count the leading 64 bytes of alignment slack */
    w->logits = (float *)(void *)(b + (off[0] - 64));
    w->stage = (float *)(void *)(b + (off[1] - 64));
    w->qf = (float *)(void *)(b + (off[2] - 64));
    w->q8 = (int8_t *)(void *)(b + (off[3] - 64));
    w->qsc = (float *)(void *)(b + (off[4] - 64));
    w->sums = (float *)(void *)(b + (off[5] - 64));
    w->rowf = (float *)(void *)(b + (off[6] - 64));
    w->row8 = (int8_t *)(void *)(b + (off[7] - 64));
    w->lut_k = (float *)(void *)(b + (off[8] - 64));
    w->lut_v = w->lut_k + 256;
    w->qrot = (float *)(void *)(b + (off[9] - 64));
    w->vp = (int16_t *)(void *)(b + (off[10] - 64));
    w->vsc = (float *)(void *)(b + (off[10] - 64) + 128 * (n_heads / n->n_kv_heads));
    w->bw = (float *)(void *)(b + (off[11] - 64));                        /* block values */
    w->bacc = w->bw + 64 * (n_heads / n->n_kv_heads);
}

static qmx_status qmx__kv_check_attn(const qmx_kv_cache *c, const float *q, size_t n_heads,
                                     const qmx_kv_attn_opts *o, const float *out, const void *ws,
                                     size_t ws_bytes, int prefill, size_t n_tok) {
    size_t need, nq;
    qmx_status st;
    if (!c || !q || !out || !ws) return QMX_ERR_NULL;
    if (!qmx__kv_valid(c)) return QMX_ERR_ARG;
    st = qmx__kv_ws_size(&c->cfg, n_heads, &need, NULL);
    if (st != QMX_OK) return st;
    if (!(o->scale >= 0.0f) || !qmx__isfinite(o->scale)) return QMX_ERR_ARG;
    if (prefill) {
        if (o->causal_len != 0 || o->token_split != 0) return QMX_ERR_ARG;
        if (c->cfg.mode == QMX_KV_RING && o->window > c->cfg.capacity) return QMX_ERR_ARG;
    } else if (c->n_tokens == 0) {
        return QMX_ERR_SIZE;
    }
    nq = qmx__kv_mul(qmx__kv_mul(n_heads, c->cfg.head_dim), n_tok);
    if (!nq || nq > SIZE_MAX / 4) return QMX_ERR_OVERFLOW;
    if (!qmx__kv_all_finite(q, nq)) return QMX_ERR_NONFINITE;
    if (ws_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    return QMX_OK;
}

/* The logit scale of a call (exact with rotate) and the fp8 tables of a bound workspace. */
QMX__KV_STRICT static float qmx__kv_isd(const qmx_kv_config *n, const qmx_kv_attn_opts *o) {
    QMX__KV_NOCONTRACT
    float isd = o->scale > 0.0f ? o->scale : qmx_kv_inv_sqrt(n->head_dim);
    if (n->rotate) isd = isd * qmx__kv_inv_pow2(n->head_dim);   /* (Hq).(Hk) = d q.k; exact */
    return isd;
}
static void qmx__kv_luts(const qmx_kv_config *n, qmx__kv_ws *w) {
    size_t i;
    if (qmx_dtype_is_fp8(n->k_dtype))
        for (i = 0; i < 256; i++) w->lut_k[i] = qmx_fp8_to_f32((uint8_t)i, n->k_dtype);
    if (qmx_dtype_is_fp8(n->v_dtype))
        for (i = 0; i < 256; i++) w->lut_v[i] = qmx_fp8_to_f32((uint8_t)i, n->v_dtype);
}

/* The query group of KV head h (its g query heads at qg) over [lo, hi) into acc [g][d]; the
 * same code for the serial call and for every task (USING SEVERAL CORES). ms NULL: acc is the
 * output (divided by S, unrotated). ms non-NULL (TOKEN SPLIT, [lo, hi) one split): acc is the
 * unnormalised partial (the value sums, not divided, not unrotated), ms[j] = m and
 * ms[g + j] = S of query head j; ms written only on success. */
QMX__KV_STRICT static qmx_status qmx__kv_attend_head(const qmx_kv_cache *c, size_t h,
                                                     const float *qg, size_t g, size_t lo,
                                                     size_t hi, float isd, int use_int,
                                                     qmx__kv_ws *wp, float *acc, float *ms) {
    QMX__KV_NOCONTRACT
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_ws w = *wp;
    size_t cnt = hi - lo, d = n->head_dim, i, j, cap = n->capacity;
    {
        const float *qh = qg;
        if (n->rotate) {
            for (i = 0; i < g * d; i++) w.qrot[i] = qh[i];
            for (j = 0; j < g; j++) qmx__kv_fwht(w.qrot + j * d, d);
            qh = w.qrot;
        }
        qmx__kv_logits(c, h, qh, g, lo, hi, isd, use_int, &w);
        for (j = 0; j < g; j++) {
            float *l = w.logits + j * cnt, m;
            if (!qmx__kv_max_finite(l, cnt, &m)) return QMX_ERR_NONFINITE;
            w.sums[j] = qmx__kv_exp_sum(l, cnt, m);
            if (ms) w.qsc[j] = m;   /* the query scales are dead once the logits are done */
            for (i = 0; i < d; i++) acc[j * d + i] = 0.0f;
        }
        /* value scales into the probabilities: w[t] = e[t] * s_v[t], in place, over the
         * (at most two) runs of consecutive slots (block values: per block, below) */
        if (n->v_dtype != QMX_FLOAT32 && n->v_axis != QMX_KV_BLOCK) {
            size_t i0 = 0;
            while (i0 < cnt) {
                size_t slot = (lo + i0) % cap, run = cap - slot;
                const float *vs = c->v_scales + (n->v_axis == QMX_KV_DKV ? h * cap + slot : slot);
                if (run > cnt - i0) run = cnt - i0;
                for (j = 0; j < g; j++) {
                    float *l = w.logits + j * cnt + i0;
                    for (i = 0; i < run; i++) {
                        float wt = l[i];
                        wt = wt * vs[i];
                        l[i] = wt;
                    }
                }
                i0 += run;
            }
        }
        if (n->v_axis == QMX_KV_BLOCK) {
            qmx__kv_v_blocks(c, h, lo, cnt, g, &w, acc);
        } else if (n->v_dtype == QMX_INT8 || n->v_dtype == QMX_INT4) {
            /* integer values: tiles of 64 visible tokens counted from lo (so a ring and a
             * linear cache holding the same tokens tile them alike); a tile is read in place
             * when its slots are consecutive, else (it straddles the ring's wrap) copied, as
             * int4 tiles are unpacked, row by row into the workspace */
            size_t i0, r;
            for (i0 = 0; i0 < cnt; i0 += 64) {
                size_t nt = cnt - i0 < 64 ? cnt - i0 : 64, slot = (lo + i0) % cap;
                const int8_t *rows = w.row8;
                if (n->v_dtype == QMX_INT8 && slot + nt <= cap) {
                    rows = (const int8_t *)(const void *)(c->v + (h * cap + slot) * c->row_v);
                } else {
                    for (r = 0; r < nt; r++) {
                        const unsigned char *src = c->v + (h * cap + (slot + r) % cap) * c->row_v;
                        if (n->v_dtype == QMX_INT4) {
                            qmx__kv_unpack4(src, d, w.row8 + r * d);
                        } else {
                            size_t e;
                            for (e = 0; e < d; e++) w.row8[r * d + e] = (int8_t)src[e];
                        }
                    }
                }
                qmx__kv_v_tile_i8(acc, d, w.logits + i0, cnt, g, rows, d, nt, w.vp, w.vsc);
            }
        } else {   /* runs of consecutive slots (a ring wraps once at most), in tiles of tokens
                    * (fp8: 16 decoded; float32: 64 in place): a per-token order, so the tile
                    * boundaries do not change the result */
            size_t i0 = 0, T = n->v_dtype == QMX_FLOAT32 ? 64 : 16;
#if defined(QMX__KV_VBMI)
            if (qmx_dtype_is_fp8(n->v_dtype)) {   /* decoded in registers, whole runs */
                qmx__kv_f8v f8;
                qmx__kv_f8v_init(&f8, n->v_dtype);
                while (i0 < cnt) {
                    size_t slot = (lo + i0) % cap, run = cap - slot;
                    if (run > cnt - i0) run = cnt - i0;
                    qmx__kv_v_fp8(acc, d, w.logits + i0, cnt, g, c->v + (h * cap + slot) * c->row_v,
                                  c->row_v, run, &f8);
                    i0 += run;
                }
            }
#endif
            while (i0 < cnt) {
                size_t slot = (lo + i0) % cap, run = cap - slot, t0;
                if (run > cnt - i0) run = cnt - i0;
                for (t0 = 0; t0 < run; t0 += T) {
                    size_t nt = run - t0 < T ? run - t0 : T;
                    const unsigned char *src = c->v + (h * cap + slot + t0) * c->row_v;
                    const float *wt = w.logits + i0 + t0;
                    if (n->v_dtype == QMX_FLOAT32) {
                        qmx__kv_v_tile_f32(acc, d, wt, cnt, g, (const float *)(const void *)src, d,
                                           nt);
                    } else {
                        qmx__kv_fp8_decode(src, nt * d, n->v_dtype, w.lut_v, w.rowf);
                        qmx__kv_v_tile_f32(acc, d, wt, cnt, g, w.rowf, d, nt);
                    }
                }
                i0 += run;
            }
        }
        if (ms) {   /* a split's partial: the combine divides and unrotates */
            for (j = 0; j < g; j++) {
                ms[j] = w.qsc[j];
                ms[g + j] = w.sums[j];
            }
            return QMX_OK;
        }
        for (j = 0; j < g; j++)
            for (i = 0; i < d; i++) acc[j * d + i] = acc[j * d + i] / w.sums[j];
        if (n->rotate) qmx__kv_unrotate(acc, g, d);
    }
    return QMX_OK;
}

/* The step itself, arguments checked. */
static qmx_status qmx__kv_attend(const qmx_kv_cache *c, const float *q, size_t n_heads,
                                 const qmx_kv_attn_opts *o, float *out, void *ws) {
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_ws w;
    size_t lo, hi, g, d = n->head_dim, h, i;
    float isd;
    qmx_status st = qmx__kv_range(c, o, &lo, &hi);
    if (st != QMX_OK) return st;
    qmx__kv_bind_ws(n, n_heads, ws, &w);
    g = n_heads / n->n_kv_heads;
    isd = qmx__kv_isd(n, o);
    qmx__kv_luts(n, &w);
    for (h = 0; h < n->n_kv_heads; h++) {
        st = qmx__kv_attend_head(c, h, q + h * g * d, g, lo, hi, isd, !o->float_query, &w,
                                 w.stage + h * g * d, NULL);
        if (st != QMX_OK) return st;
    }
    for (i = 0; i < n_heads * d; i++) out[i] = w.stage[i];
    return QMX_OK;
}

/* ---- several cores (ATTENTION DECODE, USING SEVERAL CORES): a task per KV head ---------------
 * Task h computes the query group of KV head h with qmx__kv_attend_head, the serial call's code,
 * in its worker's workspace bound as a one-KV-head config (n_kv_heads = 1, g query heads):
 * the heads do not share any state, so any split and order gives the serial bits. */
static qmx_status qmx__kv_task_ws(const qmx_kv_config *n, size_t n_heads, size_t *bytes) {
    qmx_kv_config n1 = *n;
    if (n_heads == 0) return QMX_ERR_SIZE;
    if (n_heads % n->n_kv_heads) return QMX_ERR_SHAPE;
    n1.n_kv_heads = 1;
    return qmx__kv_ws_size(&n1, n_heads / n->n_kv_heads, bytes, NULL);
}

/* Through an executor of workers >= 2: 64 + r64(4 n_heads d) (the staged output) + r64(n_kv_heads)
 * (a status byte per task) + workers x r64(task workspace); *slice = r64(task workspace). */
static qmx_status qmx__kv_x_ws(const qmx_kv_config *n, size_t n_heads, int workers,
                               size_t *bytes, size_t *slice) {
    size_t t, s, a;
    qmx_status st = qmx__kv_task_ws(n, n_heads, &t);
    if (st != QMX_OK) return st;
    s = qmx__kv_mul(qmx__kv_mul(n_heads, n->head_dim), 4);
    if (!s || s > SIZE_MAX - 64 || t > SIZE_MAX - 64 || n->n_kv_heads > SIZE_MAX - 64)
        return QMX_ERR_OVERFLOW;
    t = qmx__k_r64(t);
    a = qmx__kv_add(64 + qmx__k_r64(s), qmx__k_r64(n->n_kv_heads));
    a = a ? qmx__kv_add(a, qmx__kv_mul(t, (size_t)workers)) : 0;
    if (!a || !qmx__kv_mul(t, (size_t)workers)) return QMX_ERR_OVERFLOW;
    *bytes = a;
    *slice = t;
    return QMX_OK;
}

/* 1 if the call goes through its executor (workers other than 0 / 1) */
static int qmx__kv_use_x(const qmx_kv_attn_opts *o) {
    return o->executor && o->executor->workers != 0 && o->executor->workers != 1;
}

/* Task h (KV head h) with one worker's workspace ws (qmx__kv_task_ws bytes); its g query heads
 * to dst [g][d], written only when the task succeeds. */
static qmx_status qmx__kv_task(const qmx_kv_cache *c, size_t h, const float *q, size_t g,
                               size_t lo, size_t hi, float isd, int use_int, void *ws,
                               float *dst) {
    qmx_kv_config n1 = c->cfg;
    qmx__kv_ws w;
    size_t i, d = c->cfg.head_dim;
    qmx_status st;
    n1.n_kv_heads = 1;
    qmx__kv_bind_ws(&n1, g, ws, &w);
    qmx__kv_luts(&n1, &w);
    st = qmx__kv_attend_head(c, h, q + h * g * d, g, lo, hi, isd, use_int, &w, w.stage, NULL);
    if (st != QMX_OK) return st;
    for (i = 0; i < g * d; i++) dst[i] = w.stage[i];
    return QMX_OK;
}

static qmx_status qmx__kv_split_task(const qmx_kv_cache *c, size_t t, size_t ns, size_t T,
                                     const float *q, size_t g, size_t lo, size_t hi, float isd,
                                     int use_int, void *ws, float *rec);   /* (TOKEN SPLIT) */
/* A decode through an executor: unsplit (T = 0: task h = KV head h, into its rows of the staged
 * output) or split (task t = h * ns + s, into its record of the partials). */
typedef struct qmx__kv_job {
    const qmx_kv_cache *c;
    const float *q;
    float *dst;              /* T = 0: the staged output [n_heads][d]; else the records [nt][rec] */
    unsigned char *status;   /* per task: 0 not run, 1 failed, 2 done (a byte each: no race) */
    unsigned char *slices;   /* workers x slice bytes */
    size_t slice, g, lo, hi, nt, ns, T, rec;
    float isd;
    int use_int, workers;
} qmx__kv_job;

static void qmx__kv_xtask(void *arg, int task, int worker) {
    const qmx__kv_job *j = (const qmx__kv_job *)arg;
    size_t t = (size_t)task;
    unsigned char *slice;
    /* outside the executor contract: not run (its status stays 0: QMX_ERR_ARG) */
    if (task < 0 || t >= j->nt || worker < 0 || worker >= j->workers) return;
    slice = j->slices + (size_t)worker * j->slice;
    j->status[t] = (j->T ? qmx__kv_split_task(j->c, t, j->ns, j->T, j->q, j->g, j->lo, j->hi,
                                              j->isd, j->use_int, slice, j->dst + t * j->rec)
                         : qmx__kv_task(j->c, t, j->q, j->g, j->lo, j->hi, j->isd, j->use_int,
                                        slice, j->dst + t * j->g * j->c->cfg.head_dim))
                   == QMX_OK ? 2 : 1;
}

/* The decode through an executor (workers >= 2 or < 0), the call's arguments checked: the
 * executor and the workspace, then a task per KV head into the staged output, copied to out
 * when every task has succeeded (out written only on success, as the serial call). */
static qmx_status qmx__kv_attend_x(const qmx_kv_cache *c, const float *q, size_t n_heads,
                                   const qmx_kv_attn_opts *o, float *out, void *ws,
                                   size_t ws_bytes) {
    const qmx_executor *ex = o->executor;
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_job j;
    size_t need, i, nt = n->n_kv_heads, d = n->head_dim;
    unsigned char *b = (unsigned char *)ws;
    qmx_status st;
    if (ex->workers < 0) return QMX_ERR_ARG;
    if (!ex->parallel_for) return QMX_ERR_NULL;
    if (nt > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
    st = qmx__kv_x_ws(n, n_heads, ex->workers, &need, &j.slice);
    if (st != QMX_OK) return st;
    if (ws_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    st = qmx__kv_range(c, o, &j.lo, &j.hi);
    if (st != QMX_OK) return st;
    b += (64u - ((size_t)((uintptr_t)b & 63u))) & 63u;
    j.c = c; j.q = q; j.nt = nt; j.workers = ex->workers;
    j.ns = 1; j.T = 0; j.rec = 0;
    j.g = n_heads / nt;
    j.isd = qmx__kv_isd(n, o);
    j.use_int = !o->float_query;
    j.dst = (float *)(void *)b;
    j.status = b + qmx__k_r64(4 * n_heads * d);
    j.slices = j.status + qmx__k_r64(nt);
    for (i = 0; i < nt; i++) j.status[i] = 0;
    if (nt == 1) qmx__kv_xtask(&j, 0, 0);   /* nothing to share */
    else ex->parallel_for(ex->pool, (int)nt, qmx__kv_xtask, &j);
    for (i = 0; i < nt; i++)
        if (j.status[i] != 2) return j.status[i] == 1 ? QMX_ERR_NONFINITE : QMX_ERR_ARG;
    for (i = 0; i < n_heads * d; i++) out[i] = j.dst[i];
    return QMX_OK;
}

/* ---- token split (ATTENTION DECODE, TOKEN SPLIT) ---------------------------------------------
 * Task t = h * ns + s (ns splits of the visible range [lo, hi)): the query group of KV head h
 * over split s, tokens [lo + s T, min(lo + (s + 1) T, hi)), by qmx__kv_attend_head in partial
 * mode, in its worker's workspace bound as a one-KV-head config, into its RECORD of the
 * partials: g (head_dim + 2) floats, [m_j (g)][S_j (g)][acc_j (g x head_dim)]. T is a multiple
 * of 64, so the integer values' 64-token tiles of a split are the unsplit call's tiles. */
static size_t qmx__kv_nsplit(size_t cnt, size_t T) { return cnt / T + (cnt % T != 0); }

/* Bytes of the records of KV heads x splits (0 on overflow). */
static size_t qmx__kv_part_bytes(const qmx_kv_config *n, size_t n_heads, size_t ns) {
    size_t rec = qmx__kv_mul(n_heads / n->n_kv_heads, qmx__kv_add(n->head_dim, 2));
    return qmx__kv_mul(qmx__kv_mul(qmx__kv_mul(n->n_kv_heads, ns), rec), 4);
}

/* Workspace of a split call with W >= 1 workers (W = 1: the serial call): 64 + r64(the records
 * of ns_max = ceil(capacity / T) splits) + r64(n_kv_heads ns_max) (a status byte per task)
 * + W x r64(task workspace); *slice = r64(task workspace). */
static qmx_status qmx__kv_split_ws(const qmx_kv_config *n, size_t n_heads, size_t T,
                                   int workers, size_t *bytes, size_t *slice) {
    size_t t, nt, p, a, ns = qmx__kv_nsplit(n->capacity, T);
    qmx_status st = qmx__kv_task_ws(n, n_heads, &t);
    if (st != QMX_OK) return st;
    nt = qmx__kv_mul(n->n_kv_heads, ns);
    p = qmx__kv_part_bytes(n, n_heads, ns);
    if (!p || p > SIZE_MAX - 64 || !nt || nt > SIZE_MAX - 64 || t > SIZE_MAX - 64)
        return QMX_ERR_OVERFLOW;
    t = qmx__k_r64(t);
    a = qmx__kv_add(64 + qmx__k_r64(p), qmx__k_r64(nt));
    a = a && qmx__kv_mul(t, (size_t)workers) ? qmx__kv_add(a, qmx__kv_mul(t, (size_t)workers)) : 0;
    if (!a) return QMX_ERR_OVERFLOW;
    *bytes = a;
    *slice = t;
    return QMX_OK;
}

/* Task t of a split call with one worker's workspace ws (qmx__kv_task_ws bytes) into its record
 * rec, written only when the task succeeds. */
static qmx_status qmx__kv_split_task(const qmx_kv_cache *c, size_t t, size_t ns, size_t T,
                                     const float *q, size_t g, size_t lo, size_t hi, float isd,
                                     int use_int, void *ws, float *rec) {
    qmx_kv_config n1 = c->cfg;
    qmx__kv_ws w;
    size_t h = t / ns, a = lo + (t % ns) * T, b = hi - a > T ? a + T : hi, i;
    size_t d = c->cfg.head_dim;
    qmx_status st;
    n1.n_kv_heads = 1;
    qmx__kv_bind_ws(&n1, g, ws, &w);
    qmx__kv_luts(&n1, &w);
    st = qmx__kv_attend_head(c, h, q + h * g * d, g, a, b, isd, use_int, &w, w.stage, rec);
    if (st != QMX_OK) return st;
    for (i = 0; i < g * d; i++) rec[2 * g + i] = w.stage[i];
    return QMX_OK;
}

/* 1 if every record looks written by a successful task: m finite, S finite and >= 1 (the
 * split's largest logit gives e = qmx_kv_exp(0) = 1, every other e >= 0). */
static int qmx__kv_split_sane(const float *part, size_t n_rec, size_t g, size_t d) {
    size_t r, j, rec = g * (d + 2);
    for (r = 0; r < n_rec; r++)
        for (j = 0; j < g; j++) {
            float m = part[r * rec + j], S = part[r * rec + g + j];
            if (!qmx__isfinite(m) || !(S >= 1.0f) || !qmx__isfinite(S)) return 0;
        }
    return 1;
}

/* The combine: per query head (KV head h, group member j), m = max_s m_s, then in split order
 * s = 0, 1, ..: f = qmx_kv_exp(m_s - m), S = S + (S_s * f), acc[i] = acc[i] + (acc_s[i] * f)
 * (S, acc from +0, products rounded first), out = acc / S, then unrotated (rotate); into out
 * [n_heads][d] (accumulated in place). */
QMX__KV_STRICT static void qmx__kv_split_combine(const qmx_kv_config *n, size_t g, size_t ns,
                                                 const float *part, float *out) {
    QMX__KV_NOCONTRACT
    size_t d = n->head_dim, rec = g * (d + 2), h, j, s, i;
    for (h = 0; h < n->n_kv_heads; h++) {
        const float *ph = part + h * ns * rec;
        for (j = 0; j < g; j++) {
            float *o = out + (h * g + j) * d, m = ph[j], S = 0.0f;
            for (s = 1; s < ns; s++)
                if (ph[s * rec + j] > m) m = ph[s * rec + j];
            for (i = 0; i < d; i++) o[i] = 0.0f;
            for (s = 0; s < ns; s++) {
                const float *r = ph + s * rec, *a = r + 2 * g + j * d;
                float f = qmx_kv_exp(r[j] - m), p = r[g + j] * f;
                QMX__KV_BAR(p);
                S = S + p;
                for (i = 0; i < d; i++) {
                    float x = a[i] * f;
                    QMX__KV_BAR(x);
                    o[i] = o[i] + x;
                }
            }
            for (i = 0; i < d; i++) o[i] = o[i] / S;
        }
        if (n->rotate) qmx__kv_unrotate(out + h * g * d, g, d);
    }
}

/* qmx_kv_attention with token_split T > 0, the call's arguments checked: T, the executor (used
 * when workers >= 2 or < 0, else the serial call, W = 1), the workspace, the visible range, the
 * task count; then the tasks (serial: in task order; else through parallel_for) into their
 * records and the combine on the calling thread, into out only when every task succeeded. */
static qmx_status qmx__kv_attend_split(const qmx_kv_cache *c, const float *q, size_t n_heads,
                                       const qmx_kv_attn_opts *o, float *out, void *ws,
                                       size_t ws_bytes) {
    const qmx_executor *ex = qmx__kv_use_x(o) ? o->executor : NULL;
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_job j;
    size_t need, t, nsmax;
    unsigned char *b = (unsigned char *)ws;
    qmx_status st;
    if (o->token_split % 64) return QMX_ERR_ARG;
    if (ex && ex->workers < 0) return QMX_ERR_ARG;
    if (ex && !ex->parallel_for) return QMX_ERR_NULL;
    j.workers = ex ? ex->workers : 1;
    j.T = o->token_split;
    st = qmx__kv_split_ws(n, n_heads, j.T, j.workers, &need, &j.slice);
    if (st != QMX_OK) return st;
    if (ws_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    st = qmx__kv_range(c, o, &j.lo, &j.hi);
    if (st != QMX_OK) return st;
    j.ns = qmx__kv_nsplit(j.hi - j.lo, j.T);
    j.nt = n->n_kv_heads * j.ns;   /* <= the workspace's n_kv_heads ns_max: no overflow */
    if (ex && j.nt > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
    nsmax = qmx__kv_nsplit(n->capacity, j.T);
    b += (64u - ((size_t)((uintptr_t)b & 63u))) & 63u;
    j.c = c; j.q = q;
    j.g = n_heads / n->n_kv_heads;
    j.rec = j.g * (n->head_dim + 2);
    j.isd = qmx__kv_isd(n, o);
    j.use_int = !o->float_query;
    j.dst = (float *)(void *)b;
    j.status = b + qmx__k_r64(qmx__kv_part_bytes(n, n_heads, nsmax));
    j.slices = j.status + qmx__k_r64(n->n_kv_heads * nsmax);
    for (t = 0; t < j.nt; t++) j.status[t] = 0;
    if (!ex || j.nt == 1) {   /* the serial call (or nothing to share): tasks in order */
        for (t = 0; t < j.nt; t++) {
            st = qmx__kv_split_task(c, t, j.ns, j.T, q, j.g, j.lo, j.hi, j.isd, j.use_int,
                                    j.slices, j.dst + t * j.rec);
            if (st != QMX_OK) return st;
        }
    } else {
        ex->parallel_for(ex->pool, (int)j.nt, qmx__kv_xtask, &j);
        for (t = 0; t < j.nt; t++)
            if (j.status[t] != 2) return j.status[t] == 1 ? QMX_ERR_NONFINITE : QMX_ERR_ARG;
    }
    qmx__kv_split_combine(n, j.g, j.ns, j.dst, out);
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_attention(const qmx_kv_cache *c, const float *q, size_t n_heads,
                                     const qmx_kv_attn_opts *opts, float *out, void *ws,
                                     size_t ws_bytes) {
    qmx_kv_attn_opts o0 = QMX_ZERO_INIT;
    const qmx_kv_attn_opts *o = opts ? opts : &o0;
    qmx_status st;
    if (o->token_split) {   /* TOKEN SPLIT: its workspace is checked by qmx__kv_attend_split */
        st = qmx__kv_check_attn(c, q, n_heads, o, out, ws, SIZE_MAX, 0, 1);
        if (st != QMX_OK) return st;
        return qmx__kv_attend_split(c, q, n_heads, o, out, ws, ws_bytes);
    }
    if (qmx__kv_use_x(o)) {   /* the executor's workspace is checked by qmx__kv_attend_x */
        st = qmx__kv_check_attn(c, q, n_heads, o, out, ws, SIZE_MAX, 0, 1);
        if (st != QMX_OK) return st;
        return qmx__kv_attend_x(c, q, n_heads, o, out, ws, ws_bytes);
    }
    st = qmx__kv_check_attn(c, q, n_heads, o, out, ws, ws_bytes, 0, 1);
    if (st != QMX_OK) return st;
    return qmx__kv_attend(c, q, n_heads, o, out, ws);
}

QMX__DEF qmx_status qmx_kv_attention_tasks(const qmx_kv_cache *c, size_t n_heads,
                                           size_t *n_tasks) {
    if (!c || !n_tasks) return QMX_ERR_NULL;
    if (!qmx__kv_valid(c)) return QMX_ERR_ARG;
    if (n_heads == 0) return QMX_ERR_SIZE;
    if (n_heads % c->cfg.n_kv_heads) return QMX_ERR_SHAPE;
    *n_tasks = c->cfg.n_kv_heads;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_attention_workspace_size_exec(const qmx_kv_config *cfg,
                                                         size_t n_heads, const qmx_executor *ex,
                                                         size_t *bytes) {
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t slice;
    qmx_status st;
    if (!cfg || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    if (ex && ex->workers < 0) return QMX_ERR_ARG;
    if (!ex || ex->workers <= 1) return qmx__kv_ws_size(&n, n_heads, bytes, NULL);
    return qmx__kv_x_ws(&n, n_heads, ex->workers, bytes, &slice);
}

QMX__DEF qmx_status qmx_kv_attention_task_workspace_size(const qmx_kv_config *cfg,
                                                         size_t n_heads, size_t *bytes) {
    qmx_kv_config n;
    qmx__kv_layout L;
    qmx_status st;
    if (!cfg || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    return qmx__kv_task_ws(&n, n_heads, bytes);
}

QMX__DEF qmx_status qmx_kv_attention_run(const qmx_kv_cache *c, const float *q, size_t n_heads,
                                         const qmx_kv_attn_opts *opts, float *out,
                                         size_t task_begin, size_t task_end, void *ws,
                                         size_t ws_bytes) {
    qmx_kv_attn_opts o0 = QMX_ZERO_INIT;
    const qmx_kv_attn_opts *o = opts ? opts : &o0;
    size_t lo, hi, need, h, g;
    float isd;
    qmx_status st = qmx__kv_check_attn(c, q, n_heads, o, out, ws, SIZE_MAX, 0, 1);
    if (st != QMX_OK) return st;
    st = qmx__kv_range(c, o, &lo, &hi);
    if (st != QMX_OK) return st;
    if (task_begin > task_end || task_end > c->cfg.n_kv_heads) return QMX_ERR_ARG;
    st = qmx__kv_task_ws(&c->cfg, n_heads, &need);
    if (st != QMX_OK) return st;
    if (ws_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    g = n_heads / c->cfg.n_kv_heads;
    isd = qmx__kv_isd(&c->cfg, o);
    for (h = task_begin; h < task_end; h++) {   /* each task's heads written when it is done */
        st = qmx__kv_task(c, h, q, g, lo, hi, isd, !o->float_query, ws,
                          out + h * g * c->cfg.head_dim);
        if (st != QMX_OK) return st;
    }
    return QMX_OK;
}

/* ---- token split, range calls (TOKEN SPLIT) ---- */
QMX__DEF qmx_status qmx_kv_attention_split_workspace_size(const qmx_kv_config *cfg,
                                                          size_t n_heads,
                                                          const qmx_kv_attn_opts *opts,
                                                          size_t *bytes) {
    qmx_kv_attn_opts o0 = QMX_ZERO_INIT;
    const qmx_kv_attn_opts *o = opts ? opts : &o0;
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t slice;
    qmx_status st;
    if (!o->token_split) return qmx_kv_attention_workspace_size_exec(cfg, n_heads, o->executor,
                                                                     bytes);
    if (!cfg || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    if (o->token_split % 64) return QMX_ERR_ARG;
    if (o->executor && o->executor->workers < 0) return QMX_ERR_ARG;
    return qmx__kv_split_ws(&n, n_heads, o->token_split, qmx__kv_use_x(o) ? o->executor->workers
                                                                          : 1, bytes, &slice);
}

/* The split range calls' common checks (after their NULL checks): the cache, n_heads, T > 0 a
 * multiple of 64, tokens, the visible range; its split count and partials bytes. */
static qmx_status qmx__kv_split_plan(const qmx_kv_cache *c, size_t n_heads,
                                     const qmx_kv_attn_opts *o, size_t *lo, size_t *hi,
                                     size_t *ns, size_t *pbytes) {
    qmx_status st;
    if (!qmx__kv_valid(c)) return QMX_ERR_ARG;
    if (n_heads == 0) return QMX_ERR_SIZE;
    if (n_heads % c->cfg.n_kv_heads) return QMX_ERR_SHAPE;
    if (o->token_split == 0 || o->token_split % 64) return QMX_ERR_ARG;
    if (c->n_tokens == 0) return QMX_ERR_SIZE;
    st = qmx__kv_range(c, o, lo, hi);
    if (st != QMX_OK) return st;
    *ns = qmx__kv_nsplit(*hi - *lo, o->token_split);
    *pbytes = qmx__kv_part_bytes(&c->cfg, n_heads, *ns);
    return *pbytes ? QMX_OK : QMX_ERR_OVERFLOW;
}

QMX__DEF qmx_status qmx_kv_attention_split_tasks(const qmx_kv_cache *c, size_t n_heads,
                                                 const qmx_kv_attn_opts *opts, size_t *n_tasks) {
    size_t lo, hi, ns, pb;
    qmx_status st;
    if (!c || !opts || !n_tasks) return QMX_ERR_NULL;
    st = qmx__kv_split_plan(c, n_heads, opts, &lo, &hi, &ns, &pb);
    if (st != QMX_OK) return st;
    *n_tasks = c->cfg.n_kv_heads * ns;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_attention_split_partials_size(const qmx_kv_cache *c, size_t n_heads,
                                                         const qmx_kv_attn_opts *opts,
                                                         size_t *bytes) {
    size_t lo, hi, ns, pb;
    qmx_status st;
    if (!c || !opts || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_split_plan(c, n_heads, opts, &lo, &hi, &ns, &pb);
    if (st != QMX_OK) return st;
    *bytes = pb;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_attention_split_run(const qmx_kv_cache *c, const float *q,
                                               size_t n_heads, const qmx_kv_attn_opts *opts,
                                               float *partials, size_t partials_bytes,
                                               size_t task_begin, size_t task_end, void *ws,
                                               size_t ws_bytes) {
    size_t lo, hi, ns, pb, need, t, g;
    float isd;
    qmx_status st;
    if (!opts) return QMX_ERR_NULL;
    st = qmx__kv_check_attn(c, q, n_heads, opts, partials, ws, SIZE_MAX, 0, 1);
    if (st != QMX_OK) return st;
    st = qmx__kv_split_plan(c, n_heads, opts, &lo, &hi, &ns, &pb);
    if (st != QMX_OK) return st;
    if (task_begin > task_end || task_end > c->cfg.n_kv_heads * ns) return QMX_ERR_ARG;
    if (partials_bytes < pb) return QMX_ERR_BUFFER_TOO_SMALL;
    st = qmx__kv_task_ws(&c->cfg, n_heads, &need);
    if (st != QMX_OK) return st;
    if (ws_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    g = n_heads / c->cfg.n_kv_heads;
    isd = qmx__kv_isd(&c->cfg, opts);
    for (t = task_begin; t < task_end; t++) {   /* each task's record written when it is done */
        st = qmx__kv_split_task(c, t, ns, opts->token_split, q, g, lo, hi, isd,
                                !opts->float_query, ws, partials + t * g * (c->cfg.head_dim + 2));
        if (st != QMX_OK) return st;
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_kv_attention_split_combine(const qmx_kv_cache *c, size_t n_heads,
                                                   const qmx_kv_attn_opts *opts,
                                                   const float *partials, size_t partials_bytes,
                                                   float *out) {
    size_t lo, hi, ns, pb, g;
    qmx_status st;
    if (!c || !opts || !partials || !out) return QMX_ERR_NULL;
    st = qmx__kv_split_plan(c, n_heads, opts, &lo, &hi, &ns, &pb);
    if (st != QMX_OK) return st;
    if (partials_bytes < pb) return QMX_ERR_BUFFER_TOO_SMALL;
    g = n_heads / c->cfg.n_kv_heads;
    if (!qmx__kv_split_sane(partials, c->cfg.n_kv_heads * ns, g, c->cfg.head_dim))
        return QMX_ERR_ARG;
    qmx__kv_split_combine(&c->cfg, g, ns, partials, out);
    return QMX_OK;
}

/* ---- tiled prefill (see PREFILL) ------------------------------------------------------------
 * A block of B prompt tokens at positions [p0, p0 + B) is appended first; then, per KV head h,
 * its R = B * g query rows (row i * g + j: token i, query head h * g + j) run through the
 * decode's kernels as ONE query group of R heads: the logits of the R rows over [0, hi),
 * hi = p0 + B, in one pass over the key tiles (the integer dots as R x 16 tiles on VNNI), each
 * row's softmax over its own causal prefix [0, p0 + i + 1) exactly as the decode computes it
 * (max, qmx__kv_exp_sum over that prefix), the weights past the prefix set to 0, then one pass
 * over the value tiles (integer values: tiles of 64 tokens counted from 0, as the decode's from
 * lo = 0) with the R rows' weights. A zero weight adds exactly nothing (integer values: the
 * tile's largest weight and P are unchanged by zeros and P = 0 adds 0 to the exact sum; a tile
 * wholly past a row's prefix has m = 0, P = 0, s = 0 and adds +0; float values: acc + (+-0) =
 * acc, and acc is never -0), so every row gets the per-token loop's bits. Taken only when no
 * slot of the cache is reused inside the block and every row sees from position 0 (see
 * qmx__kv_pf_tiled); everything else runs the per-token loop. */

/* Query rows per block at full speed: B = max(1, QMX__KV_PF_ROWS / g), at most n_tokens. */
#define QMX__KV_PF_ROWS 32

static size_t qmx__kv_pf_full_block(size_t g, size_t n_tok) {
    size_t b = g >= QMX__KV_PF_ROWS ? 1 : QMX__KV_PF_ROWS / g;
    return b < n_tok ? b : n_tok;
}

/* 1 if the config is one the tiled path knows (explicit list: any other axis, dtype or mode,
 * present or future, takes the per-token loop). */
static int qmx__kv_pf_cfg_ok(const qmx_kv_config *n) {
    return qmx__kv_dtype_ok(n->k_dtype) && qmx__kv_dtype_ok(n->v_dtype) &&
           (n->k_axis == QMX_KV_HEADS_AND_DKV || n->k_axis == QMX_KV_DKV) &&
           (n->v_axis == QMX_KV_HEADS_AND_DKV || n->v_axis == QMX_KV_DKV) &&
           (n->mode == QMX_KV_LINEAR || n->mode == QMX_KV_RING) &&
           (n->rotate == 0 || n->rotate == 1);
}

/* 1 if the block of B tokens appended at [p0, p0 + B) is tiled: B >= 2, no slot reused in the
 * block (p0 + B <= capacity: nothing evicted, slot = position) and every row's visible range
 * starts at 0 (no window, or a window covering the block's last position). */
static int qmx__kv_pf_tiled(const qmx_kv_cache *c, const qmx_kv_attn_opts *o, size_t p0,
                            size_t B) {
    const qmx_kv_config *n = &c->cfg;
    if (B < 2 || !qmx__kv_pf_cfg_ok(n)) return 0;
    if (p0 > n->capacity || B > n->capacity - p0) return 0;
    if (o->window != 0 && o->window < p0 + B) return 0;
    return 1;
}

#if defined(QMX__K_VNNI)
/* acc[r] = the 16 dots (u8 keys kt, s8 query row r at q8 + r * d), 8 rows (integers only,
 * outside QMX__KV_STRICT: see qmx__kv_pf_v_int4). */
#  if defined(__GNUC__)
__attribute__((noinline))
#  endif
static void qmx__kv_pf_k_int8(const uint32_t *kt, size_t d4, const int8_t *q8, size_t d,
                              __m512i acc[8]) {
    __m512i a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    __m512i a4 = acc[4], a5 = acc[5], a6 = acc[6], a7 = acc[7];
    size_t e;
    for (e = 0; e < d4; e++) {
        __m512i kv = _mm512_loadu_si512((const void *)(kt + e * 16));
        int32_t q;
#define QMX__KV_PF_Q(A, r)                                                                  \
        __builtin_memcpy(&q, q8 + (r) * d + 4 * e, 4);                                        \
        A = _mm512_dpbusd_epi32(A, kv, _mm512_set1_epi32(q))
        QMX__KV_PF_Q(a0, 0); QMX__KV_PF_Q(a1, 1); QMX__KV_PF_Q(a2, 2); QMX__KV_PF_Q(a3, 3);
        QMX__KV_PF_Q(a4, 4); QMX__KV_PF_Q(a5, 5); QMX__KV_PF_Q(a6, 6); QMX__KV_PF_Q(a7, 7);
#undef QMX__KV_PF_Q
    }
    acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
    acc[4] = a4; acc[5] = a5; acc[6] = a6; acc[7] = a7;
}

/* The integer-query logits of the R rows (w->q8, qsc, sums: int32 sum(q8)) over the int8
 * (int4: unpacked) keys [0, hi) of KV head h, AVX-512 VNNI, as a GEMM: 16 keys at a time are
 * transposed into dwords (lane t of vector e = key t's bytes 4e .. 4e + 3, + 128 as u8), then
 * each row's 16 dots accumulate by vpdpbusd against the row's 4 query bytes broadcast, 8 rows
 * at a time: no horizontal sums. The same exact int32 dots as qmx__kv_logits (minus 128 *
 * sum(q8)), then its float steps per element: l = (float)dot; l = l * qsc; l = l * ks[t].
 * d % 4 == 0; the transposed keys use w->rowf (16 * d bytes of its 64 * d). */
QMX__KV_STRICT static void qmx__kv_pf_logits_vnni(const qmx_kv_cache *c, size_t h, size_t R,
                                                  size_t hi, const qmx__kv_ws *w) {
    QMX__KV_NOCONTRACT
    const qmx_kv_config *n = &c->cfg;
    size_t d = n->head_dim, cap = n->capacity, d4 = d / 4, t0, t, e, r0, rr;
    const float *ks = c->k_scales + (n->k_axis == QMX_KV_DKV ? h * cap : 0);
    uint32_t *kt = (uint32_t *)(void *)w->rowf;
    const int32_t *qsum = (const int32_t *)(const void *)w->sums;
    for (t0 = 0; t0 < hi; t0 += 16) {
        size_t nt = hi - t0 < 16 ? hi - t0 : 16;
        __mmask16 km = (__mmask16)((1u << nt) - 1u);
        const unsigned char *src[16];
        size_t e64 = (d / 64) * 16;   /* dwords transposed 16 x 16 in registers */
        for (t = 0; t < 16; t++) {   /* lanes past the keys read key t0 again: discarded */
            src[t] = c->k + (h * cap + t0 + (t < nt ? t : 0)) * c->row_k;
            if (n->k_dtype == QMX_INT4) {
                qmx__kv_unpack4(src[t], d, w->row8 + t * d);
                src[t] = (const unsigned char *)w->row8 + t * d;
            }
        }
        if (t0 + 32 <= hi && n->k_dtype == QMX_INT8)   /* the next 16 keys, from L2 / L3 */
            for (t = 0; t < 16; t++)
                for (e = 0; e < d; e += 64)
                    _mm_prefetch((const char *)(src[t] + 16 * c->row_k + e), _MM_HINT_T0);
        for (e = 0; e < e64; e += 16) {
            const __m512i flip = _mm512_set1_epi8((char)0x80);
            __m512i a[16], b[16];
            size_t m;
            for (t = 0; t < 16; t++)
                a[t] = _mm512_xor_si512(_mm512_loadu_si512((const void *)(src[t] + 4 * e)), flip);
            for (t = 0; t < 16; t += 2) {
                b[t] = _mm512_unpacklo_epi32(a[t], a[t + 1]);
                b[t + 1] = _mm512_unpackhi_epi32(a[t], a[t + 1]);
            }
            for (t = 0; t < 16; t += 4) {   /* lane L of a[t + m]: dword 4L + m of rows t..t+3 */
                a[t] = _mm512_unpacklo_epi64(b[t], b[t + 2]);
                a[t + 1] = _mm512_unpackhi_epi64(b[t], b[t + 2]);
                a[t + 2] = _mm512_unpacklo_epi64(b[t + 1], b[t + 3]);
                a[t + 3] = _mm512_unpackhi_epi64(b[t + 1], b[t + 3]);
            }
            for (m = 0; m < 4; m++) {
                __m512i c1 = _mm512_shuffle_i32x4(a[m], a[4 + m], 0x88);
                __m512i c2 = _mm512_shuffle_i32x4(a[m], a[4 + m], 0xDD);
                __m512i d1 = _mm512_shuffle_i32x4(a[8 + m], a[12 + m], 0x88);
                __m512i d2 = _mm512_shuffle_i32x4(a[8 + m], a[12 + m], 0xDD);
                _mm512_storeu_si512((void *)(kt + (e + m) * 16), _mm512_shuffle_i32x4(c1, d1, 0x88));
                _mm512_storeu_si512((void *)(kt + (e + 4 + m) * 16), _mm512_shuffle_i32x4(c2, d2, 0x88));
                _mm512_storeu_si512((void *)(kt + (e + 8 + m) * 16), _mm512_shuffle_i32x4(c1, d1, 0xDD));
                _mm512_storeu_si512((void *)(kt + (e + 12 + m) * 16), _mm512_shuffle_i32x4(c2, d2, 0xDD));
            }
        }
        for (t = 0; t < 16; t++)   /* the dwords past the last 64 bytes */
            for (e = e64; e < d4; e++) {
                uint32_t x;
                __builtin_memcpy(&x, src[t] + 4 * e, 4);
                kt[e * 16 + t] = x ^ 0x80808080u;
            }
        for (r0 = 0; r0 < R; r0 += 8) {
            size_t rb = R - r0 < 8 ? R - r0 : 8;
            const int8_t *q8 = w->q8 + r0 * d;
            __m512i acc[8];
            for (rr = 0; rr < 8; rr++) acc[rr] = _mm512_setzero_si512();
            if (rb == 8) {
                qmx__kv_pf_k_int8(kt, d4, q8, d, acc);
            } else {
                for (e = 0; e < d4; e++) {
                    __m512i kv = _mm512_loadu_si512((const void *)(kt + e * 16));
                    for (rr = 0; rr < rb; rr++) {
                        int32_t qv;
                        __builtin_memcpy(&qv, q8 + rr * d + 4 * e, 4);
                        acc[rr] = _mm512_dpbusd_epi32(acc[rr], kv, _mm512_set1_epi32(qv));
                    }
                }
            }
            for (rr = 0; rr < rb; rr++) {
                __m512 f = _mm512_cvtepi32_ps(
                    _mm512_sub_epi32(acc[rr], _mm512_set1_epi32(128 * qsum[r0 + rr])));
                f = _mm512_mul_ps(f, _mm512_set1_ps(w->qsc[r0 + rr]));
                f = _mm512_mul_ps(f, _mm512_maskz_loadu_ps(km, ks + t0));
                _mm512_mask_storeu_ps(w->logits + (r0 + rr) * hi + t0, km, f);
            }
        }
    }
}
#endif

#if defined(QMX__AVX512)
/* Bytes of the tiled path's packed value tile (after qmx__kv_ws_size's parts): one 64-dim
 * chunk of 64 tokens as int16 token pairs. */
#  define QMX__KV_PF_EXTRA 8192
/* I[j][k] = the int32 sums of 4 rows (P rows 64 apart) over np packed token pairs (integers
 * only: outside QMX__KV_STRICT, whose optimize attribute costs gcc its register allocation
 * of the accumulators here). */
#  if defined(__GNUC__)
__attribute__((noinline))
#  endif
static void qmx__kv_pf_v_int4(const __m512i *pk, size_t np, const int16_t *p0, __m512i I[4][4]) {
    const __m512i zero = _mm512_setzero_si512();
    __m512i a00 = zero, a01 = zero, a02 = zero, a03 = zero, a10 = zero, a11 = zero;
    __m512i a12 = zero, a13 = zero, a20 = zero, a21 = zero, a22 = zero, a23 = zero;
    __m512i a30 = zero, a31 = zero, a32 = zero, a33 = zero;
    size_t t;
#if defined(__AVX512VNNI__)
#  define QMX__KV_IDOT(acc, x, p) acc = _mm512_dpwssd_epi32(acc, x, p)
#else
#  define QMX__KV_IDOT(acc, x, p) acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, p))
#endif
    for (t = 0; t < np; t++) {
        const __m512i *x = pk + 4 * t;
        __m512i x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], b;
        int32_t q;
#define QMX__KV_PF_ROW(j, A0, A1, A2, A3)                                                   \
        __builtin_memcpy(&q, p0 + 64 * (j) + 2 * t, 4);                                       \
        b = _mm512_set1_epi32(q);                                                             \
        QMX__KV_IDOT(A0, x0, b); QMX__KV_IDOT(A1, x1, b);                                     \
        QMX__KV_IDOT(A2, x2, b); QMX__KV_IDOT(A3, x3, b)
        QMX__KV_PF_ROW(0, a00, a01, a02, a03);
        QMX__KV_PF_ROW(1, a10, a11, a12, a13);
        QMX__KV_PF_ROW(2, a20, a21, a22, a23);
        QMX__KV_PF_ROW(3, a30, a31, a32, a33);
#undef QMX__KV_PF_ROW
    }
#undef QMX__KV_IDOT
    I[0][0] = a00; I[0][1] = a01; I[0][2] = a02; I[0][3] = a03;
    I[1][0] = a10; I[1][1] = a11; I[1][2] = a12; I[1][3] = a13;
    I[2][0] = a20; I[2][1] = a21; I[2][2] = a22; I[2][3] = a23;
    I[3][0] = a30; I[3][1] = a31; I[3][2] = a32; I[3][3] = a33;
}

/* The integer value sums of one tile for the R rows (qmx__kv_v_tile_i8's numbers, see INTEGER
 * VALUES): per 64-dim chunk, the token pairs are interleaved to int16 once for all the rows
 * (qmx__kv_v_tile_i8's layout: x[0] elements 0-7 / 16-23, x[1] 32-39 / 48-55, x[2] 8-15 /
 * 24-31, x[3] 40-47 / 56-63), then 4 rows at a time take vpdpwssd (or vpmaddwd) with their
 * (P[t], P[t+1]) broadcast; the exact int32 sums, then acc = acc + ((float)I * s) per element.
 * Dims past the last full chunk: qmx__kv_v_int_tail. pk: QMX__KV_PF_EXTRA bytes, 64-aligned. */
QMX__KV_STRICT static void qmx__kv_pf_v_tile(float *acc, size_t d, const float *wts, size_t ldw,
                                             size_t R, const int8_t *rows, size_t nt,
                                             int16_t *P, float *sc, __m512i *pk) {
    QMX__KV_NOCONTRACT
    size_t c, t, k, r0, rr, np = (nt + 1) / 2;
    const __m512i zero = _mm512_setzero_si512();
    qmx__kv_vq_weights(wts, ldw, R, nt, P, sc);
    for (c = 0; c + 64 <= d; c += 64) {
        for (t = 0; t < nt; t += 2) {
            __m512i a = _mm512_loadu_si512((const void *)(rows + t * d + c));
            if (nt == 64) {   /* the next tile's rows (int8 in place: contiguous) */
                _mm_prefetch((const char *)(rows + (t + 64) * d + c), _MM_HINT_T0);
                _mm_prefetch((const char *)(rows + (t + 65) * d + c), _MM_HINT_T0);
            }
            __m512i b = t + 1 < nt ? _mm512_loadu_si512((const void *)(rows + (t + 1) * d + c))
                                   : zero;
            __m512i lo = _mm512_unpacklo_epi8(a, b), hi = _mm512_unpackhi_epi8(a, b);
            pk[2 * t + 0] = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(lo));
            pk[2 * t + 1] = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(lo, 1));
            pk[2 * t + 2] = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(hi));
            pk[2 * t + 3] = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(hi, 1));
        }
        for (r0 = 0; r0 < R; r0 += 4) {
            size_t rb = R - r0 < 4 ? R - r0 : 4;
            __m512i I[4][4];
            for (rr = 0; rr < 4; rr++)
                for (k = 0; k < 4; k++) I[rr][k] = zero;
#if defined(__AVX512VNNI__)
#  define QMX__KV_IDOT(acc, x, p) acc = _mm512_dpwssd_epi32(acc, x, p)
#else
#  define QMX__KV_IDOT(acc, x, p) acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, p))
#endif
            if (rb == 4) {
                qmx__kv_pf_v_int4(pk, np, P + r0 * 64, I);
            } else {
                for (t = 0; t < np; t++)
                    for (rr = 0; rr < rb; rr++) {
                        int32_t q0;
                        __m512i b0;
                        __builtin_memcpy(&q0, P + (r0 + rr) * 64 + 2 * t, 4);
                        b0 = _mm512_set1_epi32(q0);
                        for (k = 0; k < 4; k++) QMX__KV_IDOT(I[rr][k], pk[4 * t + k], b0);
                    }
            }
#undef QMX__KV_IDOT
            for (rr = 0; rr < rb; rr++) {
                __m512 s = _mm512_set1_ps(sc[r0 + rr]);
                __m512i nat[4];
                float *aj = acc + (r0 + rr) * d + c;
                nat[0] = _mm512_shuffle_i64x2(I[rr][0], I[rr][2], 0x44);   /* 0-15 */
                nat[1] = _mm512_shuffle_i64x2(I[rr][0], I[rr][2], 0xEE);   /* 16-31 */
                nat[2] = _mm512_shuffle_i64x2(I[rr][1], I[rr][3], 0x44);   /* 32-47 */
                nat[3] = _mm512_shuffle_i64x2(I[rr][1], I[rr][3], 0xEE);   /* 48-63 */
                for (k = 0; k < 4; k++) {
                    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(nat[k]), s);
                    QMX__KV_BAR(f);
                    _mm512_storeu_ps(aj + 16 * k, _mm512_add_ps(_mm512_loadu_ps(aj + 16 * k), f));
                }
            }
        }
    }
    if (c < d) qmx__kv_v_int_tail(acc, d, c, R, rows, d, nt, P, sc);
}
#else
#  define QMX__KV_PF_EXTRA 0
#endif

/* Workspace of a block of B >= 2 tokens: the decode's for B * n_heads query heads (R rows per
 * KV head), then QMX__KV_PF_EXTRA bytes. */
static qmx_status qmx__kv_pf_ws_size(const qmx_kv_config *n, size_t B, size_t n_heads,
                                     size_t *bytes) {
    qmx_status st;
    if (!qmx__kv_mul(B, n_heads)) return QMX_ERR_OVERFLOW;
    st = qmx__kv_ws_size(n, B * n_heads, bytes, NULL);
    if (st != QMX_OK) return st;
    if (B >= 2) {
        if (*bytes > SIZE_MAX - QMX__KV_PF_EXTRA) return QMX_ERR_OVERFLOW;
        *bytes += QMX__KV_PF_EXTRA;
    }
    return QMX_OK;
}

/* The R = B g rows of KV head h of a block at [p0, p0 + B) (appended) into acc [R][d], with a
 * workspace bound for B x (its heads) query heads (nl: the config it was bound with: the
 * cache's, or a one-KV-head copy for a task); returns the first failing token of the block
 * (B: none). The same code for the serial call and for every task (USING SEVERAL CORES). */
QMX__KV_STRICT static size_t qmx__kv_pf_head(const qmx_kv_cache *c, const qmx_kv_config *nl,
                                             size_t h, size_t B, const float *q,
                                             size_t n_heads, const qmx_kv_attn_opts *o,
                                             float isd, qmx__kv_ws *wp, void *ws, float *acc) {
    QMX__KV_NOCONTRACT
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_ws w = *wp;
    size_t d = n->head_dim, cap = n->capacity, g = n_heads / n->n_kv_heads, R = B * g;
    size_t qper = n_heads * d, p0 = c->n_tokens - B, hi = p0 + B;
    size_t fail = B, i, j, r, t;
#if defined(QMX__AVX512)
    __m512i *pk;   /* the packed value tile, after the decode's parts */
    {
        size_t base = 0;
        unsigned char *b = (unsigned char *)ws;
        b += (64u - ((size_t)((uintptr_t)b & 63u))) & 63u;
        (void)qmx__kv_ws_size(nl, B * nl->n_kv_heads * g, &base, NULL);
        pk = (__m512i *)(void *)(b + (base - 64));
    }
#else
    (void)nl; (void)ws;
#endif
    {
        /* the block's query rows, contiguous (qf: free, no KIVI keys here) */
        for (i = 0; i < B; i++)
            for (j = 0; j < g; j++) {
                const float *src = q + i * qper + (h * g + j) * d;
                float *dst = w.qf + (i * g + j) * d;
                for (t = 0; t < d; t++) dst[t] = src[t];
                if (n->rotate) qmx__kv_fwht(dst, d);
            }
#if defined(QMX__K_VNNI)
        if (!o->float_query && (n->k_dtype == QMX_INT8 || n->k_dtype == QMX_INT4) &&
            (d & 3) == 0) {   /* the query rows quantized as qmx__kv_logits does */
            for (r = 0; r < R; r++) {
                int32_t sq = 0;
                w.qsc[r] = qmx__kv_quant_query(w.qf + r * d, d, w.q8 + r * d) * isd;
                for (t = 0; t < d; t++) sq += w.q8[r * d + t];
                ((int32_t *)(void *)w.sums)[r] = sq;
            }
            qmx__kv_pf_logits_vnni(c, h, R, hi, &w);
        } else
#endif
        qmx__kv_logits(c, h, w.qf, R, 0, hi, isd, !o->float_query, &w);
        for (r = 0; r < R; r++) {   /* softmax of each row over its own prefix */
            size_t cnt = p0 + r / g + 1;
            float *l = w.logits + r * hi, m;
            if (r / g < fail && qmx__kv_max_finite(l, cnt, &m)) {
                w.sums[r] = qmx__kv_exp_sum(l, cnt, m);
            } else {   /* token r / g fails (or follows a failed one): its row weighs 0 */
                if (r / g < fail) fail = r / g;
                cnt = 0;
                w.sums[r] = 1.0f;
            }
            for (t = cnt; t < hi; t++) l[t] = 0.0f;
            for (t = 0; t < d; t++) acc[r * d + t] = 0.0f;
        }
        if (n->v_dtype != QMX_FLOAT32) {   /* w[t] = e[t] * s_v[t] (slot = position here) */
            const float *vs = c->v_scales + (n->v_axis == QMX_KV_DKV ? h * cap : 0);
            for (r = 0; r < R; r++) {
                float *l = w.logits + r * hi;
                size_t cnt = p0 + r / g + 1;
                for (t = 0; t < cnt; t++) {
                    float wt = l[t];
                    wt = wt * vs[t];
                    l[t] = wt;
                }
            }
        }
        if (n->v_dtype == QMX_INT8 || n->v_dtype == QMX_INT4) {   /* tiles of 64 from 0 */
            size_t i0;
            for (i0 = 0; i0 < hi; i0 += 64) {
                size_t nt = hi - i0 < 64 ? hi - i0 : 64;
                const unsigned char *src = c->v + (h * cap + i0) * c->row_v;
                const int8_t *rows = (const int8_t *)(const void *)src;
                if (n->v_dtype == QMX_INT4) {
                    for (t = 0; t < nt; t++)
                        qmx__kv_unpack4(src + t * c->row_v, d, w.row8 + t * d);
                    rows = w.row8;
                }
#if defined(QMX__AVX512)
                qmx__kv_pf_v_tile(acc, d, w.logits + i0, hi, R, rows, nt, w.vp, w.vsc, pk);
#else
                qmx__kv_v_tile_i8(acc, d, w.logits + i0, hi, R, rows, d, nt, w.vp, w.vsc);
#endif
            }
        } else {   /* float values: every token in order (the tiles do not change the bits) */
            const unsigned char *vb = c->v + h * cap * c->row_v;
            size_t t0 = 0, T = n->v_dtype == QMX_FLOAT32 ? 64 : 16;
#if defined(QMX__KV_VBMI)
            if (qmx_dtype_is_fp8(n->v_dtype)) {   /* decoded in registers */
                qmx__kv_f8v f8;
                qmx__kv_f8v_init(&f8, n->v_dtype);
                qmx__kv_v_fp8(acc, d, w.logits, hi, R, vb, c->row_v, hi, &f8);
                t0 = hi;
            }
#endif
            for (; t0 < hi; t0 += T) {
                size_t nt = hi - t0 < T ? hi - t0 : T;
                const unsigned char *src = vb + t0 * c->row_v;
                if (n->v_dtype == QMX_FLOAT32) {
                    qmx__kv_v_tile_f32(acc, d, w.logits + t0, hi, R,
                                       (const float *)(const void *)src, d, nt);
                } else {
                    qmx__kv_fp8_decode(src, nt * d, n->v_dtype, w.lut_v, w.rowf);
                    qmx__kv_v_tile_f32(acc, d, w.logits + t0, hi, R, w.rowf, d, nt);
                }
            }
        }
        for (r = 0; r < R; r++)
            for (t = 0; t < d; t++) acc[r * d + t] = acc[r * d + t] / w.sums[r];
        if (n->rotate) qmx__kv_unrotate(acc, R, d);
    }
    return fail;
}

/* The staged rows [n_kv_heads][R][d] of the tokens before fail to out; on a failure at token
 * f = fail < B, as the per-token loop: token f appended, the later ones not. */
static qmx_status qmx__kv_pf_out(qmx_kv_cache *c, const float *stage, size_t B, size_t n_heads,
                                 size_t fail, float *out) {
    size_t d = c->cfg.head_dim, nkv = c->cfg.n_kv_heads, g = n_heads / nkv, R = B * g;
    size_t qper = n_heads * d, i, h, j, t;
    for (i = 0; i < fail; i++)   /* out[i][h * g + j] = row i * g + j of head h */
        for (h = 0; h < nkv; h++)
            for (j = 0; j < g; j++) {
                const float *src = stage + (h * R + i * g + j) * d;
                float *dst = out + i * qper + (h * g + j) * d;
                for (t = 0; t < d; t++) dst[t] = src[t];
            }
    if (fail < B) {
        c->n_tokens = c->n_tokens - B + fail + 1;
        return QMX_ERR_NONFINITE;
    }
    return QMX_OK;
}

/* One block (checked by qmx__kv_pf_tiled; workspace of qmx__kv_pf_ws_size). On a
 * logit overflow at token f of the block: outputs of the tokens before f written, n_tokens =
 * p0 + f + 1, QMX_ERR_NONFINITE (see PREFILL). */
static qmx_status qmx__kv_prefill_tiled(qmx_kv_cache *c, const float *k, const float *v,
                                        size_t B, const float *q, size_t n_heads,
                                        const qmx_kv_attn_opts *o, float *out, void *ws) {
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_ws w;
    size_t d = n->head_dim, R = B * (n_heads / n->n_kv_heads), per = n->n_kv_heads * d;
    size_t fail = B, h, i;
    float isd = qmx__kv_isd(n, o);
    for (i = 0; i < B; i++) qmx__kv_append_one(c, k + i * per, v + i * per);
    qmx__kv_bind_ws(n, B * n_heads, ws, &w);
    qmx__kv_luts(n, &w);
    for (h = 0; h < n->n_kv_heads; h++) {
        size_t f = qmx__kv_pf_head(c, n, h, B, q, n_heads, o, isd, &w, ws, w.stage + h * R * d);
        if (f < fail) fail = f;
    }
    return qmx__kv_pf_out(c, w.stage, B, n_heads, fail, out);
}

/* ---- several cores (PREFILL, USING SEVERAL CORES): within a tiled block, a task per KV head
 * (qmx__kv_pf_head, the serial code, in its worker's workspace bound as a one-KV-head config);
 * the appends and the untiled tokens' steps (the decode's tasks) stay on the calling thread. */
static qmx_status qmx__kv_pf_x_ws(const qmx_kv_config *n, size_t B, size_t n_heads,
                                  int workers, size_t *bytes, size_t *slice) {
    qmx_kv_config n1 = *n;
    size_t t, s, a;
    qmx_status st;
    if (n_heads == 0) return QMX_ERR_SIZE;
    if (n_heads % n->n_kv_heads) return QMX_ERR_SHAPE;
    n1.n_kv_heads = 1;
    st = qmx__kv_pf_ws_size(&n1, B, n_heads / n->n_kv_heads, &t);   /* B = 1: the decode's */
    if (st != QMX_OK) return st;
    s = qmx__kv_mul(qmx__kv_mul(qmx__kv_mul(B, n_heads), n->head_dim), 4);
    if (!s || s > SIZE_MAX - 64 || t > SIZE_MAX - 64 || n->n_kv_heads > SIZE_MAX - 64)
        return QMX_ERR_OVERFLOW;
    t = qmx__k_r64(t);
    a = qmx__kv_add(64 + qmx__k_r64(s), qmx__k_r64(n->n_kv_heads));
    a = a ? qmx__kv_add(a, qmx__kv_mul(t, (size_t)workers)) : 0;
    if (!a || !qmx__kv_mul(t, (size_t)workers)) return QMX_ERR_OVERFLOW;
    *bytes = a;
    *slice = t;
    return QMX_OK;
}

typedef struct qmx__kv_pf_job {
    const qmx_kv_cache *c;
    const float *q;
    const qmx_kv_attn_opts *o;
    float *stage;            /* [n_kv_heads][R][d] */
    unsigned char *status;   /* per task: 0 not run, else 1 + its first failing token */
    unsigned char *slices;
    size_t slice, B, n_heads, nt;
    float isd;
    int workers;
} qmx__kv_pf_job;

static void qmx__kv_pf_xtask(void *arg, int task, int worker) {
    const qmx__kv_pf_job *j = (const qmx__kv_pf_job *)arg;
    size_t h = (size_t)task, g, R, d, i, f;
    qmx_kv_config n1;
    qmx__kv_ws w;
    void *ws;
    if (task < 0 || h >= j->nt || worker < 0 || worker >= j->workers) return;
    n1 = j->c->cfg;
    n1.n_kv_heads = 1;
    g = j->n_heads / j->c->cfg.n_kv_heads;
    R = j->B * g;
    d = n1.head_dim;
    ws = j->slices + (size_t)worker * j->slice;
    qmx__kv_bind_ws(&n1, R, ws, &w);
    qmx__kv_luts(&n1, &w);
    f = qmx__kv_pf_head(j->c, &n1, h, j->B, j->q, j->n_heads, j->o, j->isd, &w, ws, w.stage);
    for (i = 0; i < R * d; i++) j->stage[h * R * d + i] = w.stage[i];
    j->status[h] = (unsigned char)(1 + f);   /* f <= B <= QMX__KV_PF_ROWS */
}

/* qmx__kv_prefill_tiled through the executor (checked by qmx_kv_prefill: the workspace holds
 * qmx__kv_pf_x_ws(B)). A task the executor did not run: QMX_ERR_ARG, left as a failure at the
 * block's first token. */
static qmx_status qmx__kv_prefill_tiled_x(qmx_kv_cache *c, const float *k, const float *v,
                                          size_t B, const float *q, size_t n_heads,
                                          const qmx_kv_attn_opts *o, float *out, void *ws) {
    const qmx_executor *ex = o->executor;
    const qmx_kv_config *n = &c->cfg;
    qmx__kv_pf_job j;
    size_t need, i, fail = B, per = n->n_kv_heads * n->head_dim, nt = n->n_kv_heads;
    unsigned char *b = (unsigned char *)ws;
    int skipped = 0;
    qmx_status st;
    (void)qmx__kv_pf_x_ws(n, B, n_heads, ex->workers, &need, &j.slice);
    b += (64u - ((size_t)((uintptr_t)b & 63u))) & 63u;
    for (i = 0; i < B; i++) qmx__kv_append_one(c, k + i * per, v + i * per);
    j.c = c; j.q = q; j.o = o; j.B = B; j.n_heads = n_heads; j.nt = nt;
    j.workers = ex->workers;
    j.isd = qmx__kv_isd(n, o);
    j.stage = (float *)(void *)b;
    j.status = b + qmx__k_r64(4 * B * n_heads * n->head_dim);
    j.slices = j.status + qmx__k_r64(nt);
    for (i = 0; i < nt; i++) j.status[i] = 0;
    if (nt == 1) qmx__kv_pf_xtask(&j, 0, 0);
    else ex->parallel_for(ex->pool, (int)nt, qmx__kv_pf_xtask, &j);
    for (i = 0; i < nt; i++) {
        if (j.status[i] == 0) skipped = 1;
        else if ((size_t)j.status[i] - 1 < fail) fail = (size_t)j.status[i] - 1;
    }
    st = qmx__kv_pf_out(c, j.stage, B, n_heads, skipped ? 0 : fail, out);
    return skipped ? QMX_ERR_ARG : st;
}

QMX__DEF qmx_status qmx_kv_prefill_workspace_size_exec(const qmx_kv_config *cfg,
                                                      size_t n_heads, size_t n_tokens,
                                                      const qmx_executor *ex, size_t *bytes) {
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t B, slice;
    qmx_status st;
    if (!cfg || !bytes) return QMX_ERR_NULL;
    if (ex && ex->workers < 0) return QMX_ERR_ARG;
    if (!ex || ex->workers <= 1) return qmx_kv_prefill_workspace_size(cfg, n_heads, n_tokens, bytes);
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    if (n_heads == 0 || n_tokens == 0) return QMX_ERR_SIZE;
    if (n_heads % n.n_kv_heads) return QMX_ERR_SHAPE;
    B = qmx__kv_pf_cfg_ok(&n) ? qmx__kv_pf_full_block(n_heads / n.n_kv_heads, n_tokens) : 1;
    return qmx__kv_pf_x_ws(&n, B, n_heads, ex->workers, bytes, &slice);
}

QMX__DEF qmx_status qmx_kv_prefill_workspace_size(const qmx_kv_config *cfg, size_t n_heads,
                                                  size_t n_tokens, size_t *bytes) {
    qmx_kv_config n;
    qmx__kv_layout L;
    size_t B;
    qmx_status st;
    if (!cfg || !bytes) return QMX_ERR_NULL;
    st = qmx__kv_plan(cfg, &n, &L);
    if (st != QMX_OK) return st;
    if (n_heads == 0 || n_tokens == 0) return QMX_ERR_SIZE;
    if (n_heads % n.n_kv_heads) return QMX_ERR_SHAPE;
    B = qmx__kv_pf_cfg_ok(&n) ? qmx__kv_pf_full_block(n_heads / n.n_kv_heads, n_tokens) : 1;
    return qmx__kv_pf_ws_size(&n, B, n_heads, bytes);
}

QMX__DEF qmx_status qmx_kv_prefill(qmx_kv_cache *c, const float *k, const float *v,
                                   size_t n_tok, const float *q, size_t n_heads,
                                   const qmx_kv_attn_opts *opts, float *out, void *ws,
                                   size_t ws_bytes) {
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    size_t t, per, qper, bmax, need, slice;
    int x;
    qmx_status st;
    if (opts) o = *opts;
    x = qmx__kv_use_x(&o);
    st = qmx__kv_check_append(c, k, v, n_tok);
    if (st != QMX_OK) return st;
    st = qmx__kv_check_attn(c, q, n_heads, &o, out, ws, x ? SIZE_MAX : ws_bytes, 1, n_tok);
    if (st != QMX_OK) return st;
    if (x) {   /* the executor and its workspace (a block of 1), before anything is appended */
        if (o.executor->workers < 0) return QMX_ERR_ARG;
        if (!o.executor->parallel_for) return QMX_ERR_NULL;
        if (c->cfg.n_kv_heads > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
        st = qmx__kv_pf_x_ws(&c->cfg, 1, n_heads, o.executor->workers, &need, &slice);
        if (st != QMX_OK) return st;
        if (ws_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    }
    per = c->cfg.n_kv_heads * c->cfg.head_dim;
    qper = n_heads * c->cfg.head_dim;
    /* the largest block (at most the full-speed one) whose workspace the caller gave; the
     * block size cannot change the result (see PREFILL) */
    bmax = qmx__kv_pf_cfg_ok(&c->cfg)
         ? qmx__kv_pf_full_block(n_heads / c->cfg.n_kv_heads, n_tok) : 1;
    while (bmax > 1 &&
           ((x ? qmx__kv_pf_x_ws(&c->cfg, bmax, n_heads, o.executor->workers, &need, &slice)
               : qmx__kv_pf_ws_size(&c->cfg, bmax, n_heads, &need)) != QMX_OK ||
            need > ws_bytes))
        bmax--;
    t = 0;
    while (t < n_tok) {
        size_t B = n_tok - t < bmax ? n_tok - t : bmax;
        if (qmx__kv_pf_tiled(c, &o, c->n_tokens, B)) {
            st = x ? qmx__kv_prefill_tiled_x(c, k + t * per, v + t * per, B, q + t * qper,
                                             n_heads, &o, out + t * qper, ws)
                   : qmx__kv_prefill_tiled(c, k + t * per, v + t * per, B, q + t * qper,
                                           n_heads, &o, out + t * qper, ws);
            if (st != QMX_OK) return st;
            t += B;
            continue;
        }
        qmx__kv_append_one(c, k + t * per, v + t * per);
        o.causal_len = c->n_tokens;
        st = x ? qmx__kv_attend_x(c, q + t * qper, n_heads, &o, out + t * qper, ws, ws_bytes)
               : qmx__kv_attend(c, q + t * qper, n_heads, &o, out + t * qper, ws);
        if (st != QMX_OK) return st;
        t++;
    }
    return QMX_OK;
}

#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION: KV CACHE AND ATTENTION DECODE */

/* ============================================================================================
 * IMPLEMENTATION: BLOCK-SCALED WEIGHTS (qmx__bw_, qmx__bwd_)
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__BW_IMPLEMENTATION_DONE)
#define QMX__BW_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

#define QMX__BW_QNAN 0x7FC00000u /* every NaN output is written as this */

/* A validated descriptor and the per-row configuration that dequantizes row n. */
typedef struct qmx__bw {
    const qmx_blockw *w;
    int mx;                /* 1: qmx_mx_dequantize, 0: qmx_dequantize */
    qmx_mx_config mc;      /* the row's config, view [1][K][1] */
    qmx_qconfig qc;        /* the row's config, view [1][K][1] */
    int bits;              /* storage bits per element (2, 4, 8, 16) */
    size_t row_scales;     /* scales of one row */
    size_t scale_step;     /* first scale of row n: n * scale_step */
    size_t block;          /* MX: the resolved block length */
    int fmt;               /* MX: the format */
} qmx__bw;

/* Checks *w as a [R][K] matrix (R, K >= 1) and fills b; nothing is read beyond the sizes. */
static qmx_status qmx__bw_check(const qmx_blockw *w, size_t R, size_t K, qmx__bw *b) {
    size_t count;
    qmx_status st;
    if (!w) return QMX_ERR_NULL;
    if (!qmx__mul_ok(R, K, &count)) return QMX_ERR_OVERFLOW;
    b->w = w;
    if (w->kind == QMX_BLOCKW_MX) {
        qmx__mxv v;
        if (!w->mx) return QMX_ERR_NULL;
        st = qmx__mx_resolve(w->mx, count, &v);
        if (st != QMX_OK) return st;
        if (!w->data || !w->scale_codes) return QMX_ERR_NULL;
        if (v.outer != R || v.len != K || v.inner != 1) return QMX_ERR_SHAPE;
        if (w->data_bytes < v.elem_bytes || w->n_scales < v.n_scales)
            return QMX_ERR_BUFFER_TOO_SMALL;
        b->mx = 1;
        b->mc = *w->mx;
        b->mc.outer = 1; b->mc.axis_len = K; b->mc.inner = 1;
        b->bits = v.fp4 ? 4 : 8;
        b->row_scales = b->scale_step = v.nblocks;
        b->block = v.block;
        b->fmt = (int)w->mx->format;
    } else if (w->kind == QMX_BLOCKW_QCONFIG) {
        qmx__view v;
        const qmx_qconfig *c = w->qc;
        if (!c) return QMX_ERR_NULL;
        st = qmx__resolve(c, count, &v);
        if (st != QMX_OK) return st;
        if (!w->data) return QMX_ERR_NULL;
        b->mx = 0;
        b->qc = *c;
        b->qc.outer = 1; b->qc.axis_len = K; b->qc.inner = 1;
        if (c->granularity == QMX_PER_BLOCK) {
            if (v.outer != R || v.len != K || v.inner != 1) return QMX_ERR_SHAPE;
            b->row_scales = b->scale_step = v.nblocks;
        } else if (c->granularity == QMX_PER_CHANNEL) {
            if (v.outer != 1 || v.len != R || v.inner != K) return QMX_ERR_SHAPE;
            b->qc.granularity = QMX_PER_TENSOR;
            b->row_scales = 1; b->scale_step = 1;
        } else {
            b->row_scales = 1; b->scale_step = 0;
        }
        st = qmx__check_params(c, &v, w->scales, w->n_scales, w->zero_points, count,
                               w->data_bytes);
        if (st != QMX_OK) return st;
        b->bits = qmx_dtype_bits(v.dtype);
        b->block = 0; b->fmt = -1;
    } else {
        return QMX_ERR_ARG;
    }
    return QMX_OK;
}

/* Row n (K elements) dequantized into out by qmx_mx_dequantize / qmx_dequantize on the row's
 * own view; sub-byte rows are first copied to start on a byte (pack: (K + 1) / 2 bytes). */
static qmx_status qmx__bw_row(const qmx__bw *b, size_t n, size_t K, uint8_t *pack, float *out) {
    const uint8_t *d = (const uint8_t *)b->w->data, *src;
    size_t e0 = n * K, bytes, k, si = n * b->scale_step;
    if (b->bits >= 8) {
        size_t eb = (size_t)b->bits / 8;
        src = d + e0 * eb;
        bytes = K * eb;
    } else {
        unsigned bits = (unsigned)b->bits, per = 8u / bits, mask = (1u << bits) - 1u;
        bytes = (K * bits + 7u) / 8u;
        for (k = 0; k < bytes; k++) pack[k] = 0;
        for (k = 0; k < K; k++) {
            size_t e = e0 + k;
            unsigned c = ((unsigned)d[e / per] >> ((unsigned)(e % per) * bits)) & mask;
            pack[k / per] = (uint8_t)(pack[k / per] | (c << ((unsigned)(k % per) * bits)));
        }
        src = pack;
    }
    if (b->mx)
        return qmx_mx_dequantize(&b->mc, src, bytes, b->w->scale_codes + si, b->row_scales, K,
                                 out);
    return qmx_dequantize(&b->qc, src, bytes, K, b->w->scales + si, b->row_scales,
                          b->w->zero_points ? b->w->zero_points + si : NULL, out);
}

/* sum = 0; sum = sum + RN(a[k] * w[k]) for k = 0 .. K-1; NaN -> QMX__BW_QNAN. FMA contraction
 * is off here (as qmx__k_f32_stage). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static float qmx__bw_dot(const float *a, const float *w, size_t K) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    float sum = 0.0f;
    size_t k;
    for (k = 0; k < K; k++) {
        float p = a[k] * w[k];
#if defined(__clang__)
        __asm__("" : "+m"(p));
#endif
        sum = sum + p;
    }
    if (sum != sum) sum = qmx__bits_f32(QMX__BW_QNAN);
    return sum;
}

QMX_API qmx_status qmx_matmul_blockw_f32_workspace_size(size_t M, size_t N, size_t K,
                                                        size_t *bytes) {
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > (SIZE_MAX - 512u) / 5u) return QMX_ERR_OVERFLOW;
    *bytes = 64u + qmx__k_r64(4u * K) + qmx__k_r64((K + 1u) / 2u);
    return QMX_OK;
}

/* The argument checks both block-scaled-weight kernels share (in the documented error order):
 * pointers, sizes, leading dimensions, the extents of A and Y, then the weights (into *b). */
/* USING SEVERAL CORES: Y holds columns [n_off, n_off + N) of an output of n_blob columns (the
 * weights have n_blob rows); the serial call: 0, N. */
static qmx_status qmx__bw_args(size_t M, size_t N, size_t K, const float *A, size_t lda,
                               const qmx_blockw *w, const float *Y, size_t ldy,
                               const void *workspace, size_t n_off, size_t n_blob, qmx__bw *b) {
    size_t ext;
    if (!A || !w || !Y || !workspace) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (lda < K || ldy < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldy);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    if (n_off > n_blob || N > n_blob - n_off) return QMX_ERR_SHAPE;   /* not reached */
    return qmx__bw_check(w, n_blob, K, b);
}

/* qmx_matmul_blockw_f32 on rows of A x columns [n_off, n_off + N) (qmx__bw_args); mode
 * QMX__PAR_CHECK / _CHECK_DATA: the arguments only. */
static qmx_status qmx__bw_f32(size_t M, size_t N, size_t K, const float *A, size_t lda,
                              const qmx_blockw *w, float *Y, size_t ldy, void *workspace,
                              size_t workspace_bytes, size_t n_off, size_t n_blob, int mode) {
    qmx__bw b;
    size_t need, off, m, n;
    float *row;
    uint8_t *pack;
    qmx_status st;
    st = qmx__bw_args(M, N, K, A, lda, w, Y, ldy, workspace, n_off, n_blob, &b);
    if (st != QMX_OK || mode != QMX__PAR_RUN) return st;
    st = qmx_matmul_blockw_f32_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    off = (size_t)((64u - ((uintptr_t)workspace & 63u)) & 63u);
    row = (float *)(void *)((unsigned char *)workspace + off);
    pack = (uint8_t *)workspace + off + qmx__k_r64(4u * K);
    for (n = n_off; n < n_off + N; n++) {
        st = qmx__bw_row(&b, n, K, pack, row);   /* cannot fail: everything checked above */
        if (st != QMX_OK) return st;
        for (m = 0; m < M; m++) Y[m * ldy + n - n_off] = qmx__bw_dot(A + m * lda, row, K);
    }
    return QMX_OK;
}
QMX_API qmx_status qmx_matmul_blockw_f32(size_t M, size_t N, size_t K, const float *A,
                                         size_t lda, const qmx_blockw *w, float *Y, size_t ldy,
                                         void *workspace, size_t workspace_bytes) {
    return qmx__bw_f32(M, N, K, A, lda, w, Y, ldy, workspace, workspace_bytes, 0, N,
                       QMX__PAR_RUN);
}

/* ---- MXFP8 x MXFP8 ---- */

/* fp8 code -> value q 2^e (q integer, sign in *neg); returns 0 finite, 1 Inf, 2 NaN. */
static int qmx__bw_fp8(uint8_t c, int e5m2, unsigned *neg, uint32_t *q, int *e) {
    uint32_t ex, man;
    *neg = (unsigned)(c >> 7);
    if (e5m2) {
        ex = (c >> 2) & 31u; man = c & 3u;
        if (ex == 31u) return man ? 2 : 1;
        if (ex) { *q = 4u + man; *e = (int)ex - 17; } else { *q = man; *e = -16; }
    } else {
        ex = (c >> 3) & 15u; man = c & 7u;
        if ((c & 0x7Fu) == 0x7Fu) return 2;
        if (ex) { *q = 8u + man; *e = (int)ex - 10; } else { *q = man; *e = -9; }
    }
    return 0;
}

/* (hi 2^64 + lo) >> s for 1 <= s <= 127 (the low 64 bits of the result) */
static uint64_t qmx__bw_shr(uint64_t hi, uint64_t lo, int s) {
    if (s >= 64) return hi >> (s - 64);
    return (lo >> s) | (hi << (64 - s));
}

/* RN_f32(+-(hi 2^64 + lo) 2^E), nearest-even, subnormals, overflow to Inf; the magnitude is
 * below 2^127 (so every shift is 1 .. 127): below 2^80 in qmx__bw_mx8_dot, 2^104 in
 * qmx__bwd_seg. An exact zero is +0. */
static float qmx__bw_round(uint64_t hi, uint64_t lo, int E, unsigned neg) {
    int L = 0, x, u, s;
    uint64_t q, t;
    uint32_t bits, sign = (uint32_t)neg << 31;
    if (!hi && !lo) return 0.0f;
    if (hi) { L = 64; t = hi; } else { t = lo; }
    while (t) { L++; t >>= 1; }
    x = L - 1 + E;                       /* exponent of the leading bit */
    if (x > 127) return qmx__bits_f32(sign | 0x7F800000u);
    u = x - 23 < -149 ? -149 : x - 23;   /* exponent of the result's last bit */
    s = u - E;                           /* bits dropped */
    if (s <= 0) {
        q = lo << -s;                    /* L <= 24 here: exact */
    } else if (s > L) {
        return qmx__bits_f32(sign);      /* below half of the smallest step */
    } else {
        int half = (int)((s == 1 ? lo : qmx__bw_shr(hi, lo, s - 1)) & 1u), sticky;
        q = qmx__bw_shr(hi, lo, s);
        if (s - 1 == 0) sticky = 0;
        else if (s - 1 < 64) sticky = (lo & (((uint64_t)1 << (s - 1)) - 1u)) != 0;
        else sticky = lo != 0 || (hi & (((uint64_t)1 << (s - 65)) - 1u)) != 0;
        if (half && (sticky || (q & 1u))) q++;
    }
    /* q 2^u, q < 2^24 (2^24 after a carry; below 2^23 only for u = -149, a subnormal) */
    bits = ((uint32_t)(u + 150) << 23) + (uint32_t)q - 0x800000u;
    if (bits >= 0x7F800000u) bits = 0x7F800000u;
    return qmx__bits_f32(sign | bits);
}

/* One output: blocks of bs along K, each exact, rounded once at 2^(sa + sb - 254), summed in
 * increasing order from +0. */
static float qmx__bw_mx8_dot(const uint8_t *a, const uint8_t *as, int a5, const uint8_t *b,
                             const uint8_t *bs_, int b5, size_t K, size_t bs) {
    float sum = 0.0f;
    size_t blk, k0, k;
    for (blk = 0, k0 = 0; k0 < K; blk++, k0 += bs) {
        size_t k1 = K - k0 < bs ? K : k0 + bs;
        uint64_t lo = 0, hi = 0;
        int nan = as[blk] == 0xFFu || bs_[blk] == 0xFFu, pinf = 0, ninf = 0;
        float v;
        for (k = k0; k < k1 && !nan; k++) {
            unsigned na, nb;
            uint32_t qa = 0, qb = 0;
            int ea = 0, eb = 0;
            int ca = qmx__bw_fp8(a[k], a5, &na, &qa, &ea), cb = qmx__bw_fp8(b[k], b5, &nb, &qb, &eb);
            if (ca == 2 || cb == 2) { nan = 1; break; }
            if (ca == 1 || cb == 1) {      /* Inf times: 0 -> NaN, else +-Inf */
                if ((ca == 0 && qa == 0) || (cb == 0 && qb == 0)) { nan = 1; break; }
                if (na ^ nb) ninf = 1; else pinf = 1;
                continue;
            }
            {
                uint64_t p = (uint64_t)(qa * qb) << (ea + eb + 32);  /* < 2^64: units 2^-32 */
                if (na ^ nb) { hi -= (uint64_t)(lo < p); lo -= p; }
                else { lo += p; hi += (uint64_t)(lo < p); }
            }
        }
        if (nan || (pinf && ninf)) {
            v = qmx__bits_f32(QMX__BW_QNAN);
        } else if (pinf || ninf) {
            v = qmx__bits_f32(ninf ? 0xFF800000u : 0x7F800000u);
        } else {
            unsigned neg = (unsigned)(hi >> 63);
            if (neg) { lo = ~lo + 1u; hi = ~hi + (uint64_t)(lo == 0); }
            v = qmx__bw_round(hi, lo, (int)as[blk] + (int)bs_[blk] - 254 - 32, neg);
        }
        sum = sum + v;
    }
    if (sum != sum) sum = qmx__bits_f32(QMX__BW_QNAN);
    return sum;
}

/* qmx_matmul_mxfp8_f32 on rows [m_off, m_off + M) of a (m_all rows) x rows [n_off, n_off + N)
 * of b (n_all rows), Y at the tile; mode QMX__PAR_CHECK / _CHECK_DATA: the arguments only. */
static qmx_status qmx__bw_mx8(size_t M, size_t N, size_t K, const qmx_blockw *a,
                              const qmx_blockw *b, float *Y, size_t ldy, size_t m_off,
                              size_t m_all, size_t n_off, size_t n_all, int mode) {
    qmx__bw ba, bb;
    size_t ext, m, n;
    qmx_status st;
    if (!a || !b || !Y) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (ldy < N) return QMX_ERR_SHAPE;
    ext = qmx__k_extent(M, N, ldy);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    if (m_off > m_all || M > m_all - m_off || n_off > n_all || N > n_all - n_off)
        return QMX_ERR_SHAPE;   /* not reached */
    st = qmx__bw_check(a, m_all, K, &ba);
    if (st != QMX_OK) return st;
    st = qmx__bw_check(b, n_all, K, &bb);
    if (st != QMX_OK) return st;
    if (!ba.mx || !bb.mx) return QMX_ERR_UNSUPPORTED;
    if ((ba.fmt != QMX_MXFP8_E4M3 && ba.fmt != QMX_MXFP8_E5M2) ||
        (bb.fmt != QMX_MXFP8_E4M3 && bb.fmt != QMX_MXFP8_E5M2))
        return QMX_ERR_UNSUPPORTED;
    if (ba.block != bb.block) return QMX_ERR_SHAPE;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    for (m = m_off; m < m_off + M; m++)
        for (n = n_off; n < n_off + N; n++)
            Y[(m - m_off) * ldy + n - n_off] = qmx__bw_mx8_dot(
                (const uint8_t *)a->data + m * K, a->scale_codes + m * ba.row_scales,
                ba.fmt == QMX_MXFP8_E5M2, (const uint8_t *)b->data + n * K,
                b->scale_codes + n * bb.row_scales, bb.fmt == QMX_MXFP8_E5M2, K, ba.block);
    return QMX_OK;
}
QMX_API qmx_status qmx_matmul_mxfp8_f32(size_t M, size_t N, size_t K, const qmx_blockw *a,
                                        const qmx_blockw *b, float *Y, size_t ldy) {
    return qmx__bw_mx8(M, N, K, a, b, Y, ldy, 0, M, 0, N, QMX__PAR_RUN);
}

/* ---- block-scaled weights x int8 activations quantized on the fly (qmx__bwd_) ---- */

#define QMX__BWD_MB 64                /* rows of X per panel */
#define QMX__BWD_CHUNK 1048576u       /* products per int64 partial sum (2^20) */
/* non-finite elements in a decoded row: outside every finite |e| (< 2^33) */
#define QMX__BWD_PINF ((int64_t)1 << 40)
#define QMX__BWD_NINF (-((int64_t)1 << 40))
#define QMX__BWD_NAN ((int64_t)1 << 41)

/* How the elements and block scales of a validated qmx__bw decode (see the table in INT8
 * ACTIVATIONS ON THE FLY): element e is an integer worth 2^-unit, times its block's scale. */
enum { QMX__BWD_SINT, QMX__BWD_UINT, QMX__BWD_LOWFP, QMX__BWD_NF4 };          /* ek */
enum { QMX__BWD_NOSPECIAL, QMX__BWD_E4M3FN, QMX__BWD_E5M2, QMX__BWD_FNUZ };     /* special */
enum { QMX__BWD_SQC, QMX__BWD_SE8M0, QMX__BWD_SQWIX, QMX__BWD_SGGML8, QMX__BWD_SGGML4,
       QMX__BWD_SNVFP4 };                                                       /* sk */
typedef struct qmx__bwd {
    const qmx__bw *b;     /* the validated weights */
    int ek;               /* element kind */
    int bits;             /* code bits read per element: 2, 4, 8, 16 (MXFP6: 8, then & 0x3F) */
    int nbits, mbits;     /* LOWFP: code width (4, 6, 8) and mantissa bits */
    int special;          /* LOWFP: which codes are NaN / Inf */
    int use_zp;           /* QCONFIG integers: subtract zero_points[scale index] */
    int unit;             /* U */
    int sk;               /* block scale kind */
    size_t wblock;        /* weight block length along K (K: one per row) */
} qmx__bwd;

/* NF4 code c -> table[c] 2^27, an exact integer: every table value is 0 or at least 2^-4 in
 * magnitude (exponent field >= 123), so t 2^27 = significand << (field - 123) */
static int64_t qmx__bwd_nf4(uint32_t c) {
    uint32_t u = qmx__f32_bits(qmx__nf4_table[c & 15u]), ex = (u >> 23) & 0xFFu;
    int64_t m = ex ? (int64_t)((u & 0x7FFFFFu) | 0x800000u) << (ex - 123u) : 0;
    return (u >> 31) ? -m : m;
}

/* Fills d from a validated b (qmx__bw_check passed for [N][K]). */
static void qmx__bwd_setup(const qmx__bw *b, size_t N, size_t K, qmx__bwd *d) {
    d->b = b;
    d->use_zp = 0; d->special = QMX__BWD_NOSPECIAL; d->nbits = d->mbits = 0; d->unit = 0;
    if (b->mx) {
        const qmx_mx_config *c = b->w->mx;
        int ggml = c->rule == QMX_MX_GGML;
        d->wblock = b->block;
        d->ek = QMX__BWD_LOWFP; d->bits = 8;
        switch (c->format) {
        case QMX_MXFP8_E4M3:
            d->nbits = 8; d->mbits = 3; d->unit = 9; d->special = QMX__BWD_E4M3FN; break;
        case QMX_MXFP8_E5M2:
            d->nbits = 8; d->mbits = 2; d->unit = 16; d->special = QMX__BWD_E5M2; break;
        case QMX_MXFP6_E2M3: d->nbits = 6; d->mbits = 3; d->unit = 3; break;
        case QMX_MXFP6_E3M2: d->nbits = 6; d->mbits = 2; d->unit = 4; break;
        case QMX_MXINT8: d->ek = QMX__BWD_SINT; d->unit = 6; break;
        default: d->bits = 4; d->nbits = 4; d->mbits = 1; d->unit = ggml ? 0 : 1; break;
        }
        if (ggml) d->sk = c->format == QMX_NVFP4 ? QMX__BWD_SGGML4 : QMX__BWD_SGGML8;
        else if (c->format == QMX_NVFP4) d->sk = QMX__BWD_SNVFP4;
        else if (c->rule == QMX_MX_QWIX) d->sk = QMX__BWD_SQWIX;
        else d->sk = QMX__BWD_SE8M0;
    } else {
        const qmx_qconfig *c = b->w->qc;
        qmx__view v;
        (void)qmx__resolve(c, N * K, &v);   /* cannot fail: qmx__bw_check resolved it */
        d->sk = QMX__BWD_SQC;
        d->wblock = c->granularity == QMX_PER_BLOCK ? v.block : K;
        d->bits = qmx_dtype_bits(v.dtype);
        if (v.nf4) {
            d->ek = QMX__BWD_NF4; d->unit = 27;
        } else if (v.fp8) {
            d->ek = QMX__BWD_LOWFP; d->nbits = 8; d->mbits = v.f.mbits;
            d->unit = v.f.bias + v.f.mbits - 1;
            d->special = v.f.fnuz ? QMX__BWD_FNUZ : v.f.has_inf ? QMX__BWD_E5M2 : QMX__BWD_E4M3FN;
        } else {
            d->ek = v.qmin < 0 ? QMX__BWD_SINT : QMX__BWD_UINT;
            d->use_zp = v.use_zp && b->w->zero_points != NULL;
        }
    }
}

/* code of flat element e (the bits of qmx.h's storage: crumbs and nibbles by flat index) */
static uint32_t qmx__bwd_code(const qmx__bwd *d, size_t e) {
    const uint8_t *p = (const uint8_t *)d->b->w->data;
    switch (d->bits) {
    case 2: return ((uint32_t)p[e / 4] >> (2u * (unsigned)(e & 3u))) & 3u;
    case 4: return (uint32_t)qmx__get_nibble(p, e, 0);
    case 16: return (uint32_t)((const uint16_t *)d->b->w->data)[e];
    default: return p[e];
    }
}

/* Row n's K elements as integers e (units 2^-unit) into w, non-finite ones as the sentinels;
 * returns 1 when the row holds a non-finite element. Integers only. */
static int qmx__bwd_row(const qmx__bwd *d, size_t n, size_t K, int64_t *w) {
    size_t k, e0 = n * K, si0 = n * d->b->scale_step;
    int nf = 0;
    for (k = 0; k < K; k++) {
        uint32_t c = qmx__bwd_code(d, e0 + k);
        int64_t v;
        if (d->ek == QMX__BWD_SINT) {          /* sign-extend the code's bits */
            uint32_t sb = 1u << (d->bits - 1);
            v = (int64_t)(c ^ sb) - (int64_t)sb;
        } else if (d->ek == QMX__BWD_UINT) {
            v = (int64_t)c;
        } else if (d->ek == QMX__BWD_NF4) {
            v = qmx__bwd_nf4(c);
        } else {                               /* sign-magnitude float: integer in 2^-unit */
            uint32_t sb = 1u << (d->nbits - 1), mag, ex, man;
            c &= (sb << 1) - 1u;               /* fp6: the low 6 bits of the byte */
            mag = c & (sb - 1u);
            ex = mag >> d->mbits;
            man = mag & ((1u << d->mbits) - 1u);
            if ((d->special == QMX__BWD_E4M3FN && mag == 0x7Fu) ||
                (d->special == QMX__BWD_FNUZ && c == 0x80u) ||
                (d->special == QMX__BWD_E5M2 && ex == 31u && man != 0u)) {
                w[k] = QMX__BWD_NAN; nf = 1; continue;
            }
            if (d->special == QMX__BWD_E5M2 && ex == 31u) {
                w[k] = (c & sb) ? QMX__BWD_NINF : QMX__BWD_PINF; nf = 1; continue;
            }
            v = ex ? (int64_t)((1u << d->mbits) | man) << (ex - 1u) : (int64_t)man;
            if (c & sb) v = -v;
        }
        if (d->use_zp) v -= d->b->w->zero_points[si0 + k / d->wblock];
        w[k] = v;
    }
    return nf;
}

/* The float scale of the weight block at scale index si, as qmx_mx_dequantize / qmx_dequantize
 * decode it. */
static float qmx__bwd_scale(const qmx__bwd *d, size_t si) {
    uint8_t c;
    float s;
    if (d->sk == QMX__BWD_SQC) return d->b->w->scales[si];
    c = d->b->w->scale_codes[si];
    switch (d->sk) {
    case QMX__BWD_SE8M0: return qmx__e8m0_pow2(c);                   /* 0xFF: NaN */
    case QMX__BWD_SQWIX: return qmx__bits_f32((uint32_t)c << 23);    /* 0: +0, 0xFF: +Inf */
    case QMX__BWD_SGGML8: return qmx__ggml_e8m0_half(c);
    case QMX__BWD_SGGML4: return qmx__ggml_ue4m3_half(c);
    default:
        s = qmx_fp8_to_f32(c, QMX_FP8_E4M3FN);
        if (d->b->w->mx->tensor_scale != 0.0f && s == s) s = d->b->w->mx->tensor_scale * s;
        return s;
    }
}

/* The segment's exact sum I = sum q[j] w[j] (finite w), rounded once: RN_f32(I 2^-unit). */
static float qmx__bwd_seg(const int8_t *q, const int64_t *w, size_t len, int unit) {
    uint64_t hi = 0, lo = 0;
    unsigned neg;
    while (len) {
        size_t c = len < QMX__BWD_CHUNK ? len : QMX__BWD_CHUNK, j;
        int64_t s = 0;
        uint64_t u;
        /* |q w| <= 127 * 7 * 2^30 < 2^39.8 and c <= 2^20: |s| < 2^59.8, no int64 overflow */
        for (j = 0; j < c; j++) s += (int64_t)q[j] * w[j];
        u = (uint64_t)s;                   /* (hi, lo) += s sign-extended to 128 bits */
        lo += u;
        hi += (uint64_t)(lo < u) + (s < 0 ? ~(uint64_t)0 : 0u);
        q += c; w += c; len -= c;
    }
    /* |I| < 2^39.8 * len < 2^104: a two's complement 128-bit value; magnitude and sign */
    neg = (unsigned)(hi >> 63);
    if (neg) { lo = ~lo + 1u; hi = ~hi + (uint64_t)(lo == 0); }
    return qmx__bw_round(hi, lo, -unit, neg);
}

/* The IEEE value of sum q[j] w[j] over a segment that may hold non-finite elements: 0 when
 * every element is finite, else 1 (+Inf), 2 (-Inf), 3 (NaN). */
static int qmx__bwd_nonfinite(const int8_t *q, const int64_t *w, size_t len) {
    size_t j;
    int pinf = 0, ninf = 0;
    for (j = 0; j < len; j++) {
        if (w[j] == QMX__BWD_NAN) return 3;
        if (w[j] == QMX__BWD_PINF || w[j] == QMX__BWD_NINF) {
            if (q[j] == 0) return 3;                   /* Inf * 0 */
            if ((w[j] == QMX__BWD_NINF) != (q[j] < 0)) ninf = 1; else pinf = 1;
        }
    }
    return pinf && ninf ? 3 : pinf ? 1 : ninf ? 2 : 0;
}

/* One output: Y = +0; per segment in increasing k: p = RN(I 2^-U); p = p * sw; p = p * sx;
 * Y = Y + p; NaN -> QMX__BW_QNAN. FMA contraction is off here (as qmx__bw_dot). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static float qmx__bwd_dot(const qmx__bwd *d, size_t n, const int8_t *q, const float *sx,
                          size_t ab, const int64_t *w, int row_nf, size_t K) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    float y = 0.0f;
    size_t k0 = 0, si0 = n * d->b->scale_step;
    while (k0 < K) {
        size_t rw = d->wblock - k0 % d->wblock, ra = ab - k0 % ab, len = K - k0;
        float p;
        int nf;
        if (rw < len) len = rw;
        if (ra < len) len = ra;
        nf = row_nf ? qmx__bwd_nonfinite(q + k0, w + k0, len) : 0;
        if (nf == 0) p = qmx__bwd_seg(q + k0, w + k0, len, d->unit);
        else p = qmx__bits_f32(nf == 1 ? 0x7F800000u : nf == 2 ? 0xFF800000u : QMX__BW_QNAN);
        p = p * qmx__bwd_scale(d, si0 + k0 / d->wblock);
#if defined(__clang__)
        __asm__("" : "+m"(p));
#endif
        p = p * sx[k0 / ab];
#if defined(__clang__)
        __asm__("" : "+m"(p));
#endif
        y = y + p;
        k0 += len;
    }
    if (y != y) y = qmx__bits_f32(QMX__BW_QNAN);
    return y;
}

/* activation block length (K for one per row) and blocks per row */
static size_t qmx__bwd_ab(size_t K, const qmx_blockw_dyn_opts *opts, size_t *nab) {
    size_t ab = opts && opts->act_block && opts->act_block < K ? opts->act_block : K;
    *nab = K / ab + (K % ab != 0);
    return ab;
}

QMX_API qmx_status qmx_matmul_blockw_dyn_i8_workspace_size(size_t M, size_t N, size_t K,
                                                           const qmx_blockw_dyn_opts *opts,
                                                           size_t *bytes) {
    size_t mb, nab;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    (void)qmx__bwd_ab(K, opts, &nab);
    mb = M < QMX__BWD_MB ? M : QMX__BWD_MB;
    /* nab <= K and mb <= 64: the total is at most 64 + 3 * 63 + (256 + 8 + 64) K */
    if (K > (SIZE_MAX - 512u) / 328u) return QMX_ERR_OVERFLOW;
    *bytes = 64u + qmx__k_r64(4u * mb * nab) + qmx__k_r64(8u * K) + qmx__k_r64(mb * K);
    return QMX_OK;
}

/* qmx_matmul_blockw_dyn_i8 on rows of X x columns [n_off, n_off + N) (qmx__bw_args); mode
 * QMX__PAR_CHECK: the arguments, QMX__PAR_CHECK_DATA: and every activation block's scale. */
static qmx_status qmx__bwd_dyn(size_t M, size_t N, size_t K, const float *X, size_t ldx,
                               const qmx_blockw *w, const qmx_blockw_dyn_opts *opts, float *Y,
                               size_t ldy, void *workspace, size_t workspace_bytes,
                               size_t n_off, size_t n_blob, int mode) {
    qmx__bw b;
    qmx__bwd d;
    qmx_qconfig cfg;
    size_t need, off, m, m0, n, ab, nab, mb, j;
    float *sx;
    int64_t *wrow;
    int8_t *q;
    qmx_status st;
    st = qmx__bw_args(M, N, K, X, ldx, w, Y, ldy, workspace, n_off, n_blob, &b);
    if (st != QMX_OK || mode == QMX__PAR_CHECK) return st;
    if (mode == QMX__PAR_RUN) {
        st = qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, opts, &need);
        if (st != QMX_OK) return st;
        if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    }
    ab = qmx__bwd_ab(K, opts, &nab);
    qmx__k_dyn_cfg(&cfg);   /* int8, per tensor, TFLite, nearest-even: qmx_matmul_f32_dyn_i8's */
    /* pass 1: every activation block's scale (NaN/Inf, underflow) before anything is written */
    for (m = 0; m < M; m++)
        for (j = 0; j < nab; j++) {
            size_t k0 = j * ab, len = K - k0 < ab ? K - k0 : ab;
            float s;
            st = qmx_compute_qparams(&cfg, X + m * ldx + k0, len, &s, 1, NULL);
            if (st != QMX_OK) return st;
            if (!qmx__k_scale_ok(s)) return QMX_ERR_ARG;   /* absmax / 127 underflowed to 0 */
        }
    if (mode != QMX__PAR_RUN) return QMX_OK;
    qmx__bwd_setup(&b, n_blob, K, &d);
    mb = M < QMX__BWD_MB ? M : QMX__BWD_MB;
    off = (size_t)((64u - ((uintptr_t)workspace & 63u)) & 63u);
    sx = (float *)(void *)((unsigned char *)workspace + off);
    off += qmx__k_r64(4u * mb * nab);
    wrow = (int64_t *)(void *)((unsigned char *)workspace + off);
    off += qmx__k_r64(8u * K);
    q = (int8_t *)(void *)((unsigned char *)workspace + off);
    /* pass 2: panels of mb rows: quantize them, then per weight row n (decoded once per panel)
     * every row's dot */
    for (m0 = 0; m0 < M; m0 += mb) {
        size_t rows = M - m0 < mb ? M - m0 : mb, i;
        for (i = 0; i < rows; i++)
            for (j = 0; j < nab; j++) {
                size_t k0 = j * ab, len = K - k0 < ab ? K - k0 : ab;
                const float *x = X + (m0 + i) * ldx + k0;
                st = qmx_compute_qparams(&cfg, x, len, sx + i * nab + j, 1, NULL);
                if (st == QMX_OK)
                    st = qmx_quantize(&cfg, x, len, sx + i * nab + j, 1, NULL, q + i * K + k0, len);
                if (st != QMX_OK) return st;   /* not reached: checked in pass 1 */
            }
        for (n = n_off; n < n_off + N; n++) {
            int nf = qmx__bwd_row(&d, n, K, wrow);
            for (i = 0; i < rows; i++)
                Y[(m0 + i) * ldy + n - n_off] = qmx__bwd_dot(&d, n, q + i * K, sx + i * nab, ab,
                                                             wrow, nf, K);
        }
    }
    return QMX_OK;
}
QMX_API qmx_status qmx_matmul_blockw_dyn_i8(size_t M, size_t N, size_t K, const float *X,
                                            size_t ldx, const qmx_blockw *w,
                                            const qmx_blockw_dyn_opts *opts, float *Y,
                                            size_t ldy, void *workspace, size_t workspace_bytes) {
    return qmx__bwd_dyn(M, N, K, X, ldx, w, opts, Y, ldy, workspace, workspace_bytes, 0, N,
                        QMX__PAR_RUN);
}
/* USING SEVERAL CORES: range calls and executor calls (qmx__par_, KERNELS implementation) */
QMX_API qmx_status qmx_matmul_blockw_dyn_i8_run(size_t M, size_t N, size_t K, const float *X,
                                                size_t ldx, const qmx_blockw *w,
                                                const qmx_blockw_dyn_opts *opts, float *Y,
                                                size_t ldy, size_t task_begin, size_t task_end,
                                                void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BWD, M, N, K, X, ldx, NULL, 0, Y, ldy);
    c.bw = w; c.bwo = opts;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_blockw_dyn_i8_exec(size_t M, size_t N, size_t K, const float *X,
                                                 size_t ldx, const qmx_blockw *w,
                                                 const qmx_blockw_dyn_opts *opts, float *Y,
                                                 size_t ldy, const qmx_executor *executor,
                                                 void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BWD, M, N, K, X, ldx, NULL, 0, Y, ldy);
    c.bw = w; c.bwo = opts;
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_blockw_f32_run(size_t M, size_t N, size_t K, const float *A,
                                             size_t lda, const qmx_blockw *w, float *Y,
                                             size_t ldy, size_t task_begin, size_t task_end,
                                             void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BWF, M, N, K, A, lda, NULL, 0, Y, ldy);
    c.bw = w;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_blockw_f32_exec(size_t M, size_t N, size_t K, const float *A,
                                              size_t lda, const qmx_blockw *w, float *Y,
                                              size_t ldy, const qmx_executor *executor,
                                              void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BWF, M, N, K, A, lda, NULL, 0, Y, ldy);
    c.bw = w;
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_mxfp8_f32_run(size_t M, size_t N, size_t K, const qmx_blockw *a,
                                            const qmx_blockw *b, float *Y, size_t ldy,
                                            size_t task_begin, size_t task_end) {
    unsigned char none[1];   /* no workspace: 0 bytes at a valid address */
    qmx__par_mm c = qmx__par_mk(QMX__PAR_MX8, M, N, K, NULL, 0, b, 0, Y, ldy);
    c.bw = a;
    return qmx__par_run(&c, task_begin, task_end, none, 0);
}
QMX_API qmx_status qmx_matmul_mxfp8_f32_exec(size_t M, size_t N, size_t K, const qmx_blockw *a,
                                             const qmx_blockw *b, float *Y, size_t ldy,
                                             const qmx_executor *executor) {
    unsigned char none[1];
    qmx__par_mm c = qmx__par_mk(QMX__PAR_MX8, M, N, K, NULL, 0, b, 0, Y, ldy);
    c.bw = a;
    if (!executor) return qmx__bw_mx8(M, N, K, a, b, Y, ldy, 0, M, 0, N, QMX__PAR_RUN);
    return qmx__par_exec(&c, executor, none, 0);
}

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION: BLOCK-SCALED WEIGHTS */

/* ============================================================================================
 * PREPACKED BLOCK WEIGHTS (qmx_blockw_pack*, qmx_blockw_unpack*, qmx_matmul_blockw_packed_dyn_i8;
 *   issue 16 items 1-2, first slice; tests/test_blockw_packed.c; private prefix qmx__bp_)
 *   A blob like the int8 blob of PACKED WEIGHTS, for the block-scaled weights of LLM
 *   checkpoints: ggml Q8_0 class (QMX_INT8 per block of 32), Q4_0 / GPTQ class (QMX_UINT4 with
 *   per-block zero points, QMX_INT4 with or without them), MXFP4 (qmx_mx_config QMX_MXFP4,
 *   blocks of 32, any rule), NVFP4 (QMX_NVFP4, blocks of 16, E4M3 scales with the optional
 *   tensor scale, or ggml's UE4M3 rule), MXFP8 (QMX_MXFP8_E4M3 / _E5M2, blocks of 32, OCP or
 *   Qwix rules), ggml Q4_1 (from ggml's blocks only: binary16 d and minimum m per block of
 *   32); ggml's block_q8_0 / q4_0 / q4_1 / mxfp4 / nvfp4 pack directly (qmx_blockw_pack_ggml).
 *   Not in this slice: MXFP6 / qconfig fp8 / nf4 weights, other block lengths,
 *   NEON / MVE / DSP paths of the f32 x blob kernel; SIMD paths other than AVX-512, AVX2 and
 *   NEON (aarch64) for NVFP4 and Q4_1 (the other targets run their portable code: the same
 *   bits); SIMD paths for MXFP8 x int8 other than AVX-512 VNNI + VBMI, AVX2 and NEON for E4M3
 *   (E5M2 and the other targets run portable C: exact int64 block sums rounded once, about
 *   the speed of the unpacked kernel).
 *
 * BLOB, byte by byte (the same bytes on every target; multi-byte values little-endian)
 *   [0, 8)   magic "QMXBWPK1"        [8, 12) N (uint32)        [12, 16) K (uint32)
 *   [16]     element: 1 int8, 2 int4, 3 uint4, 4 MXFP4 (E2M1), 5 NVFP4 (E2M1), 6 MXFP8 E4M3,
 *            7 MXFP8 E5M2, 8 ggml Q4_1 (uint4 codes, binary16 d, binary16 minimum m)
 *   [17]     block length L: 32 (elements 1-4, 6-8), 16 (NVFP4)
 *   [18]     scales: 0 float32, 1 binary16 (elements 1-3; Q4_1: 1, ggml's d bytes as they
 *            are, NaN / Inf included); MXFP4: E8M0 codes read as
 *            2 OCP (2^(c - 127), 0: 2^-127, 0xFF: NaN; rules FLOOR .. RCEIL, MICROXCALING),
 *            3 QMX_MX_QWIX (0: +0, 0xFF: +Inf), 4 QMX_MX_GGML (2^(c - 128)); MXFP8: 2 or 3
 *            (E5M2: 2 only); NVFP4: one byte per block read as 5 E4M3 (the value, 0x7F / 0xFF NaN, negative with the
 *            sign bit; then f32(ts x it) when ts != 0 and it is not NaN: rules FLOOR, QWIX),
 *            6 QMX_MX_GGML (f32(UE4M3 / 2), the sign bit ignored, 0x00 / 0x7F: 0)
 *   [19]     zero points: 0 none, 1 stored (never for MXFP4 / NVFP4 / MXFP8)
 *   [20, 24) NVFP4 with scales 5: ts, qmx_mx_config's tensor_scale (float32; +0: none;
 *            negative, Inf or NaN: QMX_ERR_PARSE); zero in every other blob
 *   [24, 64) zero
 *   then Np / 16 panels of 16 rows (Np = N rounded up to 16), panel p at 64 + p * nb * S,
 *   nb = ceil(K / L) blocks each, block b of panel p at + b * S:
 *     codes  CB bytes (CB = 512 for int8 and MXFP8, 8 L for 4-bit: 256, NVFP4 128), groups of
 *            64 bytes = 16 rows x 4 k:
 *              int8, MXFP8:  byte 64 g + 4 j + t = u(16p + j, 32b + 4g + t)         g < 8
 *              4-bit: byte 64 g + 4 j + t, g < L / 8: low nibble u(16p + j, Lb + 4g + t),
 *                     high nibble u(16p + j, Lb + L / 2 + 4g + t)
 *            u = the code + 128 (int8), + 8 (int4), the code (uint4): an unsigned integer
 *            (vpdpbusd's unsigned operand); 0 for rows >= N and for k >= K (ragged last block).
 *            MXFP4 and NVFP4 store the E2M1 code itself (lossless: -0 stays -0), and the kernels
 *            read u = 12 + 2 x its value (0 .. 24; a vpshufb table), z = 12; MXFP8 stores the
 *            fp8 code itself (NaN / Inf codes included)
 *     scales 16 x 4 (float32), 16 x 2 (binary16) or 16 x 1 (E8M0 / E4M3 code) bytes: the
 *            scale of block b of row 16p + j (0 for rows >= N). binary16 is chosen when every
 *            scale converts to it exactly (always from ggml: its d), so scales are lossless.
 *     zero points (only when stored) 16 bytes: z(16p + j, b) = the block's zero point + 128
 *            (int8), + 8 (int4), as is (uint4); without them z is 128 / 8 / 0.
 *     minima (Q4_1 only) 16 x 2 bytes: ggml's m of block b of row 16p + j (binary16 bytes)
 *   So block element e = u - z (the integer of INT8 ACTIVATIONS ON THE FLY: U = 0; MXFP4 and
 *   NVFP4 U = 1, ggml rules U = 0), and with S = CB + 64, 32 or 16 (+ 16 with zero points):
 *   ggml Q4_0 packs into 4.75 bits per weight (Q4_0 itself: 4.5), Q8_0 into 8.5 (as Q8_0),
 *   MXFP4 into 4.25 (as MXFP4), NVFP4 into 4.5 (S = 144 per 256 weights; as NVFP4, plus the
 *   4-byte ts once), MXFP8 into 8.25 (as MXFP8), Q4_1 into 5.0 (S = 256 + 32 + 32; as Q4_1).
 *   VERSIONS: the magic stays "QMXBWPK1": every blob an older qmx wrote (elements 1-4, block
 *   32, bytes [20, 64) zero) reads as before; a reader from before NVFP4 / MXFP8 / Q4_1
 *   refuses such a blob (element 5-8) with QMX_ERR_PARSE, never misreads it.
 *
 * PACKING AND UNPACKING (every function checks everything before it writes)
 *   qmx_blockw_pack_size(&w, N, K, &bytes), qmx_blockw_pack(&w, N, K, blob, bytes): w a
 *     qmx_blockw that qmx_matmul_blockw_dyn_i8 takes with rows N: kind QMX_BLOCKW_QCONFIG,
 *     dtype QMX_INT8 / QMX_INT4 / QMX_UINT4, QMX_PER_BLOCK with block_size 32 along K (view
 *     [N][K][1], K >= 32, a ragged last block allowed); zero points are stored when qmx_dequantize
 *     applies them (asymmetric, torch / ONNX recipes, zero_points != NULL); or kind
 *     QMX_BLOCKW_MX with format QMX_MXFP4 and blocks of 32 (any rule), QMX_MXFP8_E4M3 /
 *     _E5M2 with blocks of 32 (a row shorter than 32: its one block), or QMX_NVFP4 with
 *     blocks of 16 (a row shorter than 16: its one block; FLOOR with or without
 *     tensor_scale, QWIX, GGML); scale codes kept as they are. Other weights:
 *     QMX_ERR_UNSUPPORTED; the qmx_blockw errors of BLOCK-SCALED WEIGHTS; N or K >= 2^32:
 *     QMX_ERR_OVERFLOW; bytes below the size: QMX_ERR_BUFFER_TOO_SMALL.
 *   qmx_blockw_packed_info(blob, bytes, &desc): dtype, N, K, block, nblk, has_zp, f16_scales,
 *     bytes, mxfp4, scale_kind, nvfp4, tensor_scale of a blob (everything a caller needs to
 *     size unpack's outputs and build the config: per block 32, asymmetric = has_zp; NVFP4
 *     block 16, rule GGML for scale_kind 6, else FLOOR with tensor_scale). A blob shorter than 64 bytes
 *     or than its size: QMX_ERR_BUFFER_TOO_SMALL; a wrong magic, an unknown field, nonzero
 *     reserved bytes, N or K of 0: QMX_ERR_PARSE.
 *   qmx_blockw_unpack(blob, bytes, data, data_bytes, scales, zero_points, n_scales): back to
 *     qmx.h's storage (int8 codes, or packed nibbles by flat index), float scales [N][nblk]
 *     and, when the blob has them, zero points [N][nblk] (zero_points NULL then: QMX_ERR_NULL;
 *     otherwise it may be NULL). pack then unpack gives the same bits back. MXFP4, NVFP4 and
 *     MXFP8 blobs: qmx_blockw_unpack_mx(blob, bytes, data, data_bytes, scale_codes, n_scales)
 *     (E2M1 nibbles by flat index / fp8 bytes, E8M0 / E4M3 codes [N][nblk]; NVFP4's tensor
 *     scale from info);
 *     each function on the other kind of blob: QMX_ERR_UNSUPPORTED.
 *   qmx_blockw_pack_ggml_size / qmx_blockw_pack_ggml(type, blocks, blocks_bytes, N, K, blob,
 *     bytes): rows of N x K / 32 ggml blocks (K a multiple of 32, else QMX_ERR_SHAPE; NVFP4:
 *     N x K / 64, below), N rows of K, type
 *     QMX_BLOCKW_GGML_Q8_0 (-> int8, no zero points) or QMX_BLOCKW_GGML_Q4_0 (-> uint4 with
 *     zero points), each block mapped as qmx_ggml_q8_0_to_qmx / qmx_ggml_q4_0_to_qmx map it
 *     (see qmx.h INTEROP, with its errors), scales binary16. qmx_blockw_unpack_ggml(blob,
 *     bytes, type, blocks, blocks_bytes) writes the ggml blocks back through
 *     qmx_ggml_*_from_qmx: byte-identical to the blocks packed, except what those functions
 *     document (a d = +-0 block comes back with d = 1; a Q8_0 block with d < 0 as (-q, -d)).
 *     QMX_BLOCKW_GGML_MXFP4 (39, block_mxfp4: the E8M0 byte, then qs[16] with element j in
 *     the low and j + 16 in the high nibble): the codes and scale byte as they are, scales
 *     read as QMX_MX_GGML (2^(c - 128)), lossless both ways; unpack writes any MXFP4 blob's
 *     codes (the bytes qmx_mx_to_ggml gives). QMX_BLOCKW_GGML_Q4_1 (3, block_q4_1: binary16
 *     d, binary16 m, qs[16] as Q4_0's; x = q d + m): codes, d and m bytes as they are (any
 *     bytes), lossless both ways; element 8, which only unpack_ggml gives back (qmx_blockw_unpack
 *     and _unpack_mx: QMX_ERR_UNSUPPORTED; info: dtype QMX_UINT4, q4_1 = 1).
 *     QMX_BLOCKW_GGML_NVFP4 (40, block_nvfp4, QK_NVFP4 = 64: the UE4M3 bytes d[0..3], one per
 *     16, then qs[32], qs[8 s + t] = element 16 s + t (low nibble) | 16 s + t + 8 (high)): K a
 *     multiple of 64 (else QMX_ERR_SHAPE), N x K / 64 blocks of 36 bytes; element 5, scales 6
 *     (f32(UE4M3 / 2), ts 0), ggml block i of a row = the blob's blocks 4 i .. 4 i + 3 of it
 *     (the nibble pairs land as whole bytes: qs[8 s + t] is byte 64 (t / 4) + 4 j + t % 4 of
 *     blob block 4 i + s); every byte is accepted and kept as it is (scale bytes with the sign
 *     bit, 0x7F / 0xFF, -0 codes), so the blob is byte for byte the one qmx_mx_from_ggml (rule
 *     QMX_MX_GGML) then qmx_blockw_pack gives, and unpack_ggml gives the same bytes back.
 *     unpack_ggml(40) takes any NVFP4 blob without a tensor scale (scale kind 6, or 5 with ts
 *     = +0: the codes and scale bytes as they are, the bytes qmx_mx_to_ggml gives, which ggml
 *     reads as UE4M3); ts != 0 (no place in block_nvfp4): QMX_ERR_UNSUPPORTED.
 *     A blob of another kind: QMX_ERR_UNSUPPORTED. Other types: QMX_ERR_ARG. Every type: NULL
 *     blocks or blob QMX_ERR_NULL; pack_ggml / _size: N or K 0 QMX_ERR_SIZE, N or K >= 2^32
 *     or a size past SIZE_MAX QMX_ERR_OVERFLOW; blocks_bytes below N x K / QK x the block's
 *     bytes (QK 32, NVFP4 64), or blob / blocks output below its size:
 *     QMX_ERR_BUFFER_TOO_SMALL; nothing is written on error.
 *
 * INT8 ACTIVATIONS ON THE BLOB: qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, ldx, blob, bytes,
 *   opts, Y, ldy, workspace, workspace_bytes)
 *   Y = the bits qmx_matmul_blockw_dyn_i8 gives on the weights the blob was packed from (same
 *   X, ldx, opts, Y layout; the same activation quantization, FLOAT ORDER and NaN output),
 *   on every path and target. opts->act_block must be 0, >= K or a multiple of 32 (so every
 *   segment is one weight block; others: QMX_ERR_UNSUPPORTED). Per output and block b:
 *       I = sum_k q * u - z * qsum_b    (int32, exact: |I| <= 32 * 127 * 510 < 2^21)
 *       p = (float)I (exact);  [MXFP4, NVFP4, U = 1: p = p * 0.5f (exact)]
 *       p = p * sw;  p = p * sx;  Y = Y + p      (b increasing)
 *   (NVFP4: blocks b of 16 k, so two weight blocks per 32 k, each its own segment as in
 *   qmx_matmul_blockw_dyn_i8; sw the decoded E4M3 [x ts] / UE4M3 / 2 scale. MXFP8: e the
 *   integer of INT8 ACTIVATIONS ON THE FLY (U = 9 E4M3, 16 E5M2), I = sum q e exact in int64,
 *   p = RN_f32(I 2^-U) once (qmx_matmul_blockw_dyn_i8's own routine), a block with NaN / Inf
 *   codes p = the IEEE value of its products as documented there; then the same p * sw,
 *   p * sx, Y + p. ggml Q4_1, which qmx_matmul_blockw_dyn_i8 cannot express (a float
 *   minimum): the order is defined here, per block b in increasing k:
 *       I = sum_k q * u (u the 4-bit code; int32, exact), qsum = sum_k q (int32, exact)
 *       p = (float)I;  p = p * d;  p = p * sx;  Y = Y + p
 *       t = (float)qsum;  t = t * sx;  t = t * m;  Y = Y + t
 *   (m times the block's activations as the int8 path sees them, sx qsum, as ggml's Q8_1 s
 *   term; every step one binary32 rounding, no FMA; AVX-512 VNNI: the codes split as uint4,
 *   8 vpdpbusd per block, d and m by vcvtph2ps (exact), the steps above in vector registers,
 *   one row at a time; NEON (qmx__bp41_panel_neon): the nibbles as signed bytes in sdot (or
 *   vmull_s8 + pairwise adds), d and m by vcvt_f32_f16 (exact), (float)qsum * sx once per
 *   block, the steps above on 4 x 4 lanes; AVX2 (qmx__bp41_panel_avx2): p by the uint4 block
 *   of qmx__bp_blk_avx2 (vpmaddubsw(u, q), int16 sums <= 30480, vpmaddwd; z = 0), d and m by
 *   vcvtph2ps with F16C (else scalar), (float)qsum * sx once per block, 2 panels of 2 x 8
 *   lanes per row; elsewhere portable C; the test writes this order independently.)
 *   WORKSPACE: qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, opts, &bytes) =
 *       64 + 2 r64(4 mb nb) + r64(mb 32 nb),    mb = min(M, 64), nb = ceil(K / 32)
 *   (per row and block of 32: sx and sum q (NVFP4: two int16 sums, one per block of 16); the
 *   panel's rows quantized, zero-padded to 32 nb), the same for every kind of blob.
 *   Any alignment. How: all activation scales are computed and checked first (nothing is
 *   written on error), then per panel of mb rows: quantize them, then per group of panels
 *   (4 with AVX-512 VNNI, 2 with AVX2, else 1) and per row m, the blocks in increasing k, 16
 *   accumulators per panel (the group, at most 4 nb 592 bytes, stays in L2 across the rows).
 *   Paths: AVX-512 VNNI (QMX__K_VNNI): per block 8 vpdpbusd of 16 lanes (one per row; u as
 *   the unsigned operand, q broadcast 4 bytes at a time; 4-bit codes split by and / shift),
 *   then vpmulld / vpsubd for z * qsum, vcvtdq2ps (exact), vmulps, vmulps, vaddps (no FMA:
 *   contraction off), binary16 scales by vcvtph2ps (exact), E8M0 codes by shift and two
 *   masked fix-ups; one row: 4 panels at once, so a GEMV reads 4 sequential weight streams
 *   (as the int8 GEMV); 4 or more rows: register tiles of 4 rows x 1 panel, the weights
 *   loaded and split once per 4 rows; int4 / uint4 codes: tiles of 8 (then 4) rows x 1 panel
 *   (qmx__bp4_tile_vnni), q as the signed operand broadcast from memory, the nibbles u as the
 *   unsigned one with the accumulator started at -8 qsum when the panel's z are all 8 (ggml
 *   Q4_0, int4 without zero points), else u - z + 128 started at -128 qsum (the same exact I,
 *   no z qsum multiply per row), the last row tile prefetching the next group's panels into
 *   L2 (then the float steps above). AVX2 (QMX__K_AVX2, not VNNI): 8 lanes, 2 panels at a
 *   time; int8: vpmaddubsw(|w|, sign(q, w)) + vpmaddwd (pairs <= 32512: no saturation);
 *   4-bit: vpmaddubsw(u, q) summed in int16 (uint4 / int4: <= 30480; MXFP4 two groups at a
 *   time, <= 12192), then vpmaddwd; binary16 by vcvtph2ps with F16C, else scalar. NEON
 *   (aarch64): 16 lanes as 4 x 4 per block, sdot with dotprod (else vmull_s8 + pairwise
 *   adds) on the codes as signed bytes (int8: u ^ 0x80, so I = dot + (128 - z) qsum; 4-bit
 *   u as is, MXFP4 through vqtbl1q), then the same float steps (vcvtq, vmulq, vaddq, no
 *   FMA). Cortex-M55 MVE: per row one VLDRB gather of its 16 bytes (4 groups) and VMLADAV
 *   against q; Cortex-M4 DSP: UXTB16 / SXTB16 and SMLAD per word of codes (MXFP4: the portable
 *   dots); RVV 1.0: per row an indexed byte load of its codes, vwmulsu and one vwredsum
 *   (any VLEN); the float steps of the portable path. Elsewhere portable C, the same integer
 *   and float steps one lane at a time. NVFP4: AVX-512 VNNI as MXFP4 with 4 vpdpbusd per
 *   block of 16 (two 64-byte loads split into low / high nibbles, vpshufb to u), the 16 E4M3
 *   scale codes decoded in registers (normal codes as float bits (mag << 20) + (120 << 23),
 *   subnormal mag x 2^-9, 0x7F NaN, the sign, then a masked vmulps by ts where not NaN; ggml
 *   UE4M3 / 2 likewise), 4 panels per row or tiles of 4 rows x 1 panel; NEON
 *   (qmx__bp16_panel_neon): the E2M1 codes by vqtbl1q_s8 to 2 x value (-12 .. 12, = u - 12),
 *   4 sdot (or vmull_s8 + pairwise adds) per 4 rows and block of 16, so the dot is I itself,
 *   then the float steps on 4 x 4 lanes (the E4M3 / UE4M3 scale codes decoded in registers as
 *   above, qmx__bp16_sw_neon); AVX2 (qmx__bp16_panel_avx2): u = 12 + 2 x value by vpshufb,
 *   4 vpmaddubsw(u, q) per 8 rows and block of 16 (pairs <= 6096, their int16 sum <= 24384),
 *   vpmaddwd, I = dot - 12 qsum, the scale codes decoded as above on 8 lanes
 *   (qmx__bp16_sw_avx2), 2 panels per row; every other path runs the portable NVFP4 code
 *   (qmx__bp16_panel_c). MXFP8 E4M3 with AVX-512 VNNI and VBMI
 *   (qmx__bp8_blk_vnni): e = W[c & 0x7F] x 32^a, a = (c & 0x7F >= 48) + (>= 88), W <= 240
 *   from one vpermi2b of a 128-byte table, split by a and by the sign bit into 6 unsigned
 *   operands (masked moves), 6 vpdpbusd against q and -q per group of 4 k, I = A0 + 32 (A1 +
 *   32 A2) (exact, < 2^30), p = vcvtdq2ps(I) x 2^-9 (= RN(I 2^-9)), NaN lanes from the 0x7F
 *   codes, then vmulps by sw and sx, vaddps; one row at a time. MXFP8 E4M3 on NEON
 *   (qmx__bp8_panel_neon): e = m 2^s (m = 8 | mantissa, s = exponent - 1; subnormal: m =
 *   mantissa, s = 0) = (m << (s & 3)) x 16^(s >> 2), m << (s & 3) <= 120 a signed byte with
 *   the code's sign, one of 4 operands by s >> 2, 4 sdot (or vmull_s8 + pairwise adds) per
 *   group of 4 k and 4 rows, I = A0 + 16 (A1 + 16 (A2 + 16 A3)) (exact, |I| <= 2^30), p =
 *   vcvtq(I) x 2^-9, NaN lanes from the 0x7F codes, then p * sw, p * sx, y + p. MXFP8 E4M3 on
 *   AVX2 (qmx__bp8_blk_avx2): the same split, w = m << (s & 3) <= 120 built by vpshufb tables
 *   of the exponent field, doublings and byte blends, unsigned, q with the code's sign
 *   (vpsignb), per group of 4 k and a one vpmaddubsw (pairs <= 30480) and one vpmaddwd by
 *   16^a into one int32 sum (every partial sum part of the exact dot: |.| < 2^30), p =
 *   vcvtdq2ps(I) x 2^-9, NaN lanes, p * sw (E8M0 on 8 lanes), p * sx, y + p; 2 panels of 2 x
 *   8 lanes per row. MXFP8 otherwise (E5M2, other targets): portable C (qmx__bp8_panel_c:
 *   qmx_matmul_blockw_dyn_i8's int64 segment routine).
 *   SPEED (bench/bench_matmul.c, bench_blockw; QMX_BENCH_MATMUL_ONLY=blockw runs only it),
 *   one core of the project's shared AMD Zen 4 VM (family 25), other jobs running, so the
 *   ratios moved run to run (the stream itself 11-21 GB/s). GEMV M = 1, N = K = 8192, weights
 *   from DRAM, weight bytes/s over the read stream timed in alternation, quietest run (the
 *   others): Q8_0 class 0.99x (0.73-1.06x), Q4_0 class 1.26x (0.93-1.32x), MXFP4 1.22x
 *   (0.99-1.17x), qmx_matmul_f32_dyn_i8 per channel 1.25x (1.01-1.20x); the unpacked
 *   qmx_matmul_blockw_dyn_i8 0.00-0.03x. GEMM, 4096 x 4096 Q4_0 class against
 *   qmx_matmul_i8_packed's MAC rate in the same run (int4 / uint4 tiles of 8 rows, 2026-11-28):
 *   M = 16 0.66x, M = 128 0.67x (quietest run, load 1.8; under load 2.2-3.0 M = 16 0.58-0.69x,
 *   M = 128 0.56-0.69x; the 4-row tiles before them 0.40-0.57x and 0.44-0.57x in the same
 *   sessions); ggml's repacked Q4_0 was measured at about 0.33x of it (issue 16). AVX2 build (-march=x86-64-v3): GEMV Q8_0 8.6 GB/s, Q4_0 6.8 GB/s in a loaded
 *   run (no AVX2 read stream to compare with). AVX2 paths of NVFP4 / MXFP8 E4M3 / Q4_1
 *   (2026-11-28 03:55 UTC, load 1.9-2.2, two runs): GEMV NVFP4 14.3-14.6 GB/s, MXFP8 E4M3
 *   7.3-8.4 GB/s (compute-bound: 4 vpmaddubsw + 4 vpmaddwd per 32 codes), Q4_1 19.3-19.6
 *   GB/s, with Q8_0 class 26-28 GB/s in the same runs (their portable code before, same
 *   build: 0.50-0.78, 0.29-0.32, 0.96-1.08 GB/s).
 *   NVFP4 / MXFP8 / Q4_1 (measured 2026-11-27 16:51-17:42 UTC, same machine, ratios to the
 *   read stream timed in alternation in the same run): quietest run (17:41, load 2.7, stream
 *   22 GB/s): NVFP4 (4.5 bits per weight) 0.98x (aim 0.9x), MXFP8 E4M3 (8.25 bits, VNNI +
 *   VBMI) 0.51x (compute-bound: 6 vpdpbusd and 6 masked moves per 64 codes), ggml Q4_1 (5.0
 *   bits, 4 panel streams) 1.43x, with MXFP4 1.19x, Q4_0 class 1.20x, Q8_0 class 1.21x in the
 *   same run; packed_f32 NVFP4 0.25x, MXFP8 0.26x, Q4_1 0.25x; the unpacked kernel on NVFP4 /
 *   MXFP8 0.00x / 0.01x. Runs under load 3.9-6.0 (other jobs on both cores, stream 11-15
 *   GB/s): NVFP4 0.88x, 0.93x, 0.88x, 0.99x; MXFP8 0.46-0.61x. A best-of-12 NVFP4 GEMV alone
 *   read 16-22 GB/s with and without the E4M3 scale decoding (the decode is not the limit).
 * FLOAT32 ACTIVATIONS ON THE BLOB: qmx_matmul_blockw_packed_f32(M, N, K, X, ldx, blob, bytes, Y,
 *   ldy, workspace, workspace_bytes): Y = the bits qmx_matmul_blockw_f32 gives on the weights
 *   the blob was packed from: per output sum = +0, then for k increasing sum = sum + X[m][k] *
 *   Wdq[n][k] (one rounding each, no FMA), NaN written as 0x7FC00000, where Wdq is what
 *   qmx_dequantize / qmx_mx_dequantize give: (float)(u - z) * s for the integer codes,
 *   value(E2M1 code) * s for MXFP4 and NVFP4 (ggml rules: ggml's integer values * the ggml
 *   scale), f32(f32(u * d) + m) for Q4_1 (ggml's dequantize_row_q4_1 without contraction;
 *   AVX-512: vcvtph2ps of d and m, vmulps, vaddps), value(fp8 code) * s for MXFP8 (qmx_fp8_to_f32's value; AVX-512: normal codes by
 *   bit placement, subnormal ones by vcvtdq2ps x 2^-9 / 2^-16, NaN / Inf codes masked, the
 *   sign or-ed in). How: per panel and per 64 rows of X, each block is decoded once into an L x 16
 *   float tile, then every row adds its L (or, last, K mod L) products to 16 lane accumulators: the 16 rows of
 *   the panel in the lanes, each lane's sum in increasing k. AVX-512 (QMX__K_VNNI): the tile by
 *   shifts / masks (int codes), vpermps of the 16 E2M1 values (MXFP4), vcvtdq2ps, vmulps; the
 *   rows by vbroadcastss, vmulps, vaddps. Elsewhere portable C, the same operations.
 *   SPEED (bench_matmul, GEMV 8192^2 from DRAM, Zen 4 under load, 2026-11-27): 0.34x (Q8_0
 *   class), 0.24x (Q4_0 class), 0.25x (MXFP4) of the read stream: one dependent float add per
 *   16 weights and row, after a float dequantization of each weight; the int8-activation
 *   kernel above reads the same blob at about the stream.
 *   WORKSPACE: qmx_matmul_blockw_packed_f32_workspace_size = 64 + 2048 + 4096 bytes, any M, N, K.
 * SEVERAL CORES (USING SEVERAL CORES): qmx_matmul_blockw_packed_dyn_i8_run / _f32_run(the
 *   kernel's arguments, task_begin, task_end, workspace, workspace_bytes) compute tasks
 *   [task_begin, task_end) of qmx_matmul_tasks(M, N) (tiles of 64 rows x 256 columns = 16
 *   whole panels), qmx_matmul_blockw_packed_dyn_i8_exec / _f32_exec(..., executor, workspace,
 *   workspace_bytes) the whole call through a qmx_executor (NULL, workers 0 / 1: the serial
 *   call). A tile runs the serial code on its rows and panels: the dyn_i8 kernel quantizes
 *   the tile's rows only (a row's scales and codes depend on that row and act_block only),
 *   every output is the same integer and float steps in the same order, so Y has the serial
 *   call's bits for any worker count and task order. Workspace: a range call takes the serial
 *   workspace size (it depends on min(M, 64) and K only, f32: a constant), an executor call
 *   qmx_par_workspace_size(ex, serial, serial, &bytes) (workers x r64(serial)). Errors: the
 *   serial call's (the blob's included), then task_begin > task_end or task_end > n
 *   (QMX_ERR_ARG), the workspace (QMX_ERR_BUFFER_TOO_SMALL); _exec: workers < 0 (QMX_ERR_ARG),
 *   parallel_for NULL with workers >= 2 (QMX_ERR_NULL), every X row's scale (dyn_i8); all
 *   before any task, Y untouched. A range call checks the X rows of its own tasks before it
 *   writes.
 *   ERRORS: those below for both kernels (the f32 one has no act_block and no activation
 *   checks: non-finite X propagates as in qmx_matmul_blockw_f32).
 *   ERRORS (Y and workspace untouched): QMX_ERR_NULL X, blob, Y, workspace; QMX_ERR_SIZE M, N
 *   or K 0; QMX_ERR_SHAPE ldx < K, ldy < N, N or K not the blob's; QMX_ERR_OVERFLOW extents;
 *   the info errors of the blob; QMX_ERR_UNSUPPORTED act_block; QMX_ERR_BUFFER_TOO_SMALL
 *   workspace; QMX_ERR_NONFINITE / QMX_ERR_ARG for X as qmx_matmul_blockw_dyn_i8. A blob
 *   whose codes or scales were altered gives other numbers, never undefined behaviour.
 * ============================================================================================ */
#ifndef QMX_KERNELS_BP_H
#define QMX_KERNELS_BP_H
#ifdef __cplusplus
extern "C" {
#endif

#define QMX_BLOCKW_PACK_HEADER 64
#define QMX_BLOCKW_GGML_Q4_0 2   /* ggml's type ids */
#define QMX_BLOCKW_GGML_Q4_1 3
#define QMX_BLOCKW_GGML_Q8_0 8
#define QMX_BLOCKW_GGML_MXFP4 39
#define QMX_BLOCKW_GGML_NVFP4 40

/* What a blob holds (qmx_blockw_packed_info). */
typedef struct qmx_blockw_packed_desc {
    qmx_dtype dtype;    /* QMX_INT8, QMX_INT4 or QMX_UINT4 */
    size_t N, K;        /* rows and columns */
    size_t block;       /* 32 (NVFP4: 16) */
    size_t nblk;        /* blocks per row: ceil(K / block); scales [N][nblk] */
    int has_zp;         /* 1: zero points stored ([N][nblk]) */
    int f16_scales;     /* 1: scales stored as binary16 (exactly) */
    size_t bytes;       /* the blob's size */
    int mxfp4;          /* 1: MXFP4 (dtype QMX_DTYPE_INVALID): qmx_blockw_unpack_mx */
    int scale_kind;     /* 0 float32, 1 binary16, 2 E8M0 (OCP rules), 3 E8M0 (QMX_MX_QWIX),
                           4 E8M0 (QMX_MX_GGML), 5 E4M3 (NVFP4, times tensor_scale when not 0),
                           6 UE4M3 (NVFP4, QMX_MX_GGML) */
    int nvfp4;          /* 1: NVFP4, blocks of 16 (dtype QMX_DTYPE_INVALID): unpack_mx */
    int mxfp8;          /* 1: MXFP8 E4M3, 2: MXFP8 E5M2 (dtype QMX_DTYPE_INVALID): unpack_mx */
    int q4_1;           /* 1: ggml Q4_1 (dtype QMX_UINT4, binary16 d and minimum m per block):
                           qmx_blockw_unpack_ggml only */
    float tensor_scale; /* NVFP4 scale_kind 5: qmx_mx_config's tensor_scale (0: none) */
} qmx_blockw_packed_desc;

/* Blob bytes for *w as [N][K] (see PREPACKED BLOCK WEIGHTS). */
QMX_API qmx_status qmx_blockw_pack_size(const qmx_blockw *w, size_t N, size_t K, size_t *bytes);
QMX_API qmx_status qmx_blockw_pack(const qmx_blockw *w, size_t N, size_t K, void *blob,
                                   size_t blob_bytes);
/* From N x K / 32 ggml blocks (QMX_BLOCKW_GGML_Q8_0 / _Q4_0 / _Q4_1 / _MXFP4) or N x K / 64
 * (QMX_BLOCKW_GGML_NVFP4), row by row. */
QMX_API qmx_status qmx_blockw_pack_ggml_size(int ggml_type, size_t N, size_t K, size_t *bytes);
QMX_API qmx_status qmx_blockw_pack_ggml(int ggml_type, const void *blocks, size_t blocks_bytes,
                                        size_t N, size_t K, void *blob, size_t blob_bytes);
QMX_API qmx_status qmx_blockw_packed_info(const void *blob, size_t blob_bytes,
                                          qmx_blockw_packed_desc *desc);
/* Back to qmx.h storage: codes (data), scales [N][nblk], zero points [N][nblk] if stored. */
QMX_API qmx_status qmx_blockw_unpack(const void *blob, size_t blob_bytes, void *data,
                                     size_t data_bytes, float *scales, int32_t *zero_points,
                                     size_t n_scales);
QMX_API qmx_status qmx_blockw_unpack_ggml(const void *blob, size_t blob_bytes, int ggml_type,
                                          void *blocks, size_t blocks_bytes);
/* An MXFP4 blob back to qmx_mx_quantize's storage: E2M1 nibbles, E8M0 scale codes [N][nblk]. */
QMX_API qmx_status qmx_blockw_unpack_mx(const void *blob, size_t blob_bytes, void *data,
                                        size_t data_bytes, uint8_t *scale_codes,
                                        size_t n_scales);
/* 64 + 2 r64(4 mb nb) + r64(32 mb nb), mb = min(M, 64), nb = ceil(K / 32). */
QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8_workspace_size(size_t M, size_t N, size_t K,
                                                                  const qmx_blockw_dyn_opts *opts,
                                                                  size_t *bytes);
/* 64 + 2048 + 4096 bytes (a decoded block tile and 64 rows of accumulators). */
QMX_API qmx_status qmx_matmul_blockw_packed_f32_workspace_size(size_t M, size_t N, size_t K,
                                                               size_t *bytes);
/* qmx_matmul_blockw_f32 on a blob: the same Y bits. */
QMX_API qmx_status qmx_matmul_blockw_packed_f32(size_t M, size_t N, size_t K, const float *X,
                                                size_t ldx, const void *blob, size_t blob_bytes,
                                                float *Y, size_t ldy, void *workspace,
                                                size_t workspace_bytes);
/* qmx_matmul_blockw_dyn_i8 on a blob: the same Y bits. */
QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8(size_t M, size_t N, size_t K, const float *X,
                                                   size_t ldx, const void *blob,
                                                   size_t blob_bytes,
                                                   const qmx_blockw_dyn_opts *opts, float *Y,
                                                   size_t ldy, void *workspace,
                                                   size_t workspace_bytes);
/* Several cores (SEVERAL CORES below): tasks [task_begin, task_end) of qmx_matmul_tasks(M, N)
 * with one worker's workspace (the serial size: it depends on min(M, 64) and K only), or the
 * whole call through an executor (NULL or workers 0 / 1: the serial call); the serial bits. */
QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8_run(size_t M, size_t N, size_t K,
                                                       const float *X, size_t ldx,
                                                       const void *blob, size_t blob_bytes,
                                                       const qmx_blockw_dyn_opts *opts,
                                                       float *Y, size_t ldy, size_t task_begin,
                                                       size_t task_end, void *workspace,
                                                       size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8_exec(size_t M, size_t N, size_t K,
                                                        const float *X, size_t ldx,
                                                        const void *blob, size_t blob_bytes,
                                                        const qmx_blockw_dyn_opts *opts,
                                                        float *Y, size_t ldy,
                                                        const qmx_executor *executor,
                                                        void *workspace,
                                                        size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_blockw_packed_f32_run(size_t M, size_t N, size_t K,
                                                    const float *X, size_t ldx,
                                                    const void *blob, size_t blob_bytes,
                                                    float *Y, size_t ldy, size_t task_begin,
                                                    size_t task_end, void *workspace,
                                                    size_t workspace_bytes);
QMX_API qmx_status qmx_matmul_blockw_packed_f32_exec(size_t M, size_t N, size_t K,
                                                     const float *X, size_t ldx,
                                                     const void *blob, size_t blob_bytes,
                                                     float *Y, size_t ldy,
                                                     const qmx_executor *executor,
                                                     void *workspace, size_t workspace_bytes);
#ifdef __cplusplus
}
#endif
#endif /* QMX_KERNELS_BP_H */

/* ============================================================================================
 * IMPLEMENTATION: PREPACKED BLOCK WEIGHTS (qmx__bp_)
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__BP_IMPLEMENTATION_DONE)
#define QMX__BP_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

static const unsigned char qmx__bp_magic[8] = {'Q', 'M', 'X', 'B', 'W', 'P', 'K', '1'};

/* A parsed header and the sizes that follow from it. */
typedef struct qmx__bp {
    int elem;            /* 1 int8, 2 int4, 3 uint4, 4 MXFP4, 5 NVFP4 (E2M1 codes),
                            6 MXFP8 E4M3, 7 MXFP8 E5M2 (fp8 codes) */
    int f16, zp;         /* scales binary16; zero points stored */
    int sk;              /* scale storage: 0 float32, 1 binary16, 2 E8M0 (OCP), 3 E8M0 Qwix,
                            4 E8M0 ggml, 5 E4M3 (NVFP4, times ts), 6 UE4M3 / 2 (ggml NVFP4) */
    int unit;            /* U: 1 for OCP / Qwix MXFP4 and NVFP4 (sk 5), else 0 */
    float ts;            /* NVFP4 sk 5: the tensor scale (0: none) */
    size_t bl;           /* block length: 32, NVFP4 16 */
    size_t N, K, nb, np; /* np: panels */
    size_t cb, sb, S;    /* code bytes per block, bytes per scale, bytes per block */
    uint32_t off;        /* u = code + off; the zero point without stored ones */
    size_t bytes;
} qmx__bp;

/* Fills the sizes of h from elem, f16, zp, N, K; 0 on size_t overflow. */
static int qmx__bp_sizes(qmx__bp *h) {
    size_t pb;
    h->bl = h->elem == 5 ? 16u : 32u;
    h->nb = h->K / h->bl + (h->K % h->bl != 0);
    h->np = h->N / 16u + (h->N % 16u != 0);
    h->cb = h->elem == 1 || h->elem == 6 || h->elem == 7 ? 512u : 8u * h->bl;
    if (h->elem < 4) h->sk = h->f16;
    if (h->sk != 5) h->ts = 0.0f;
    h->sb = h->sk >= 2 ? 1u : h->f16 ? 2u : 4u;
    h->S = h->cb + 16u * h->sb + (h->zp ? 16u : 0u) + (h->elem == 8 ? 32u : 0u);   /* mins */
    h->off = h->elem == 1 ? 128u : h->elem == 2 ? 8u : h->elem == 4 || h->elem == 5 ? 12u : 0u;
    h->unit = h->elem < 6 && (h->sk == 2 || h->sk == 3 || h->sk == 5);
    if (h->nb > SIZE_MAX / h->S) return 0;
    pb = h->nb * h->S;
    if (h->np > (SIZE_MAX - QMX_BLOCKW_PACK_HEADER) / pb) return 0;
    h->bytes = QMX_BLOCKW_PACK_HEADER + h->np * pb;
    return 1;
}

static qmx_status qmx__bp_parse(const void *blob, size_t bytes, qmx__bp *h) {
    const uint8_t *p = (const uint8_t *)blob;
    size_t i;
    if (!blob) return QMX_ERR_NULL;
    if (bytes < QMX_BLOCKW_PACK_HEADER) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < 8; i++)
        if (p[i] != qmx__bp_magic[i]) return QMX_ERR_PARSE;
    for (i = 20; i < QMX_BLOCKW_PACK_HEADER; i++)   /* [20, 24): NVFP4's tensor scale */
        if (p[i] && !(i < 24 && p[16] == 5 && p[18] == 5)) return QMX_ERR_PARSE;
    if (p[16] < 1 || p[16] > 8 || p[17] != (p[16] == 5 ? 16 : 32) || p[19] > 1)
        return QMX_ERR_PARSE;
    if (p[16] == 8 ? (p[18] != 1 || p[19])
        : p[16] >= 6 ? (p[18] < 2 || p[18] > 3 || p[19] || (p[16] == 7 && p[18] == 3))
        : p[16] == 5 ? (p[18] < 5 || p[18] > 6 || p[19])
        : p[16] == 4 ? (p[18] < 2 || p[18] > 4 || p[19]) : p[18] > 1)
        return QMX_ERR_PARSE;
    h->elem = p[16]; h->sk = p[18]; h->f16 = p[18] == 1; h->zp = p[19];
    h->ts = qmx__bits_f32(qmx__k_ld32le(p + 20));   /* +0 or finite > 0 */
    if ((qmx__k_ld32le(p + 20) >> 31) || ((qmx__k_ld32le(p + 20) >> 23) & 0xFFu) == 0xFFu)
        return QMX_ERR_PARSE;
    h->N = (size_t)qmx__k_ld32le(p + 8);
    h->K = (size_t)qmx__k_ld32le(p + 12);
    if (h->N == 0 || h->K == 0) return QMX_ERR_PARSE;
    if (!qmx__bp_sizes(h)) return QMX_ERR_OVERFLOW;
    if (bytes < h->bytes) return QMX_ERR_BUFFER_TOO_SMALL;
    return QMX_OK;
}

static void qmx__bp_header(const qmx__bp *h, uint8_t *p) {
    size_t i;
    for (i = 0; i < QMX_BLOCKW_PACK_HEADER; i++) p[i] = 0;
    for (i = 0; i < 8; i++) p[i] = qmx__bp_magic[i];
    qmx__k_st32le(p + 8, (uint32_t)h->N);
    qmx__k_st32le(p + 12, (uint32_t)h->K);
    p[16] = (uint8_t)h->elem; p[17] = (uint8_t)h->bl; p[18] = (uint8_t)h->sk;
    p[19] = (uint8_t)h->zp;
    if (h->sk == 5) qmx__k_st32le(p + 20, qmx__f32_bits(h->ts));
}

/* block b of row n: its bytes, and row j of its panel */
static uint8_t *qmx__bp_blk(const qmx__bp *h, const void *blob, size_t n, size_t b) {
    return (uint8_t *)blob + QMX_BLOCKW_PACK_HEADER + ((n / 16u) * h->nb + b) * h->S;
}
/* u of element t (< bl) of row j (< 16) of a block (4-bit: the low nibbles hold t < bl / 2) */
static uint32_t qmx__bp_getu(const qmx__bp *h, const uint8_t *blk, size_t j, size_t t) {
    size_t hb = h->bl / 2u;
    if (h->elem == 1 || h->elem == 6 || h->elem == 7) return blk[64u * (t / 4u) + 4u * j + t % 4u];
    return ((uint32_t)blk[64u * ((t % hb) / 4u) + 4u * j + t % 4u] >> (t < hb ? 0 : 4)) & 15u;
}
static void qmx__bp_setu(const qmx__bp *h, uint8_t *blk, size_t j, size_t t, uint32_t u) {
    uint8_t *c;
    size_t hb = h->bl / 2u;
    if (h->elem == 1 || h->elem == 6 || h->elem == 7) {
        blk[64u * (t / 4u) + 4u * j + t % 4u] = (uint8_t)u;
        return;
    }
    c = blk + 64u * ((t % hb) / 4u) + 4u * j + t % 4u;
    *c = (uint8_t)(t < hb ? ((*c & 0xF0u) | u) : ((*c & 0x0Fu) | (u << 4)));
}
/* E2M1 code -> u = 12 + 2 x value (ggml's kvalues: the same integers), z = 12 */
static const uint8_t qmx__bp_e2m1u[16] = {12, 13, 14, 15, 16, 18, 20, 24,
                                          12, 11, 10, 9, 8, 6, 4, 0};
#if !defined(QMX__K_VNNI) && !defined(QMX__K_AVX2) && !defined(QMX__K_NEON) && \
    !defined(QMX__K_NEONDOT) && !defined(QMX__K_MVE) && \
    !defined(QMX__RVV)   /* the portable dots' identity table */
static const uint8_t qmx__bp_idu[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#endif
static float qmx__bp_getscale(const qmx__bp *h, const uint8_t *blk, size_t j) {
    const uint8_t *s = blk + h->cb + h->sb * j;
    if (h->sk == 2) return qmx__e8m0_pow2(s[0]);                  /* 0xFF: NaN */
    if (h->sk == 3) return qmx__bits_f32((uint32_t)s[0] << 23);   /* 0: +0, 0xFF: +Inf */
    if (h->sk == 4) return qmx__ggml_e8m0_half(s[0]);             /* 2^(c - 128) */
    if (h->sk == 6) return qmx__ggml_ue4m3_half(s[0]);            /* ggml NVFP4 */
    if (h->sk == 5) {                                             /* NVFP4: E4M3 [x ts] */
        float v = qmx_fp8_to_f32(s[0], QMX_FP8_E4M3FN);
        if (h->ts != 0.0f && v == v) v = h->ts * v;
        return v;
    }
    if (h->f16) return qmx_f16_to_f32((uint16_t)(s[0] | (s[1] << 8)));
    return qmx__bits_f32(qmx__k_ld32le(s));
}
static void qmx__bp_setscale(const qmx__bp *h, uint8_t *blk, size_t j, float v) {
    uint8_t *s = blk + h->cb + h->sb * j;
    if (h->f16) {
        uint16_t c = qmx_f32_to_f16(v);
        s[0] = (uint8_t)c; s[1] = (uint8_t)(c >> 8);
    } else {
        qmx__k_st32le(s, qmx__f32_bits(v));
    }
}
/* z of row j of a block (the zero point + off, or off) */
static uint32_t qmx__bp_getz(const qmx__bp *h, const uint8_t *blk, size_t j) {
    return h->zp ? blk[h->cb + 16u * h->sb + j] : h->off;
}
#if !defined(QMX__K_VNNI)   /* (AVX-512 reads the minima by vcvtph2ps) */
/* ggml Q4_1: the binary16 minimum m of row j of a block (after the 16 binary16 d) */
static float qmx__bp_getmin(const qmx__bp *h, const uint8_t *blk, size_t j) {
    const uint8_t *s = blk + h->cb + 32u + 2u * j;
    return qmx_f16_to_f32((uint16_t)(s[0] | (s[1] << 8)));
}
#endif
static void qmx__bp_zero(const qmx__bp *h, void *blob) {
    uint8_t *p = (uint8_t *)blob;
    size_t i;
    for (i = QMX_BLOCKW_PACK_HEADER; i < h->bytes; i++) p[i] = 0;
}
static int qmx__bp_f16_exact(float s) {
    return qmx__f32_bits(qmx_f16_to_f32(qmx_f32_to_f16(s))) == qmx__f32_bits(s);
}

/* Validates w for packing as [N][K] and fills h (f16: every scale exact in binary16). */
static qmx_status qmx__bp_from_w(const qmx_blockw *w, size_t N, size_t K, qmx__bw *b,
                                 qmx__bwd *d, qmx__bp *h) {
    qmx__view v;
    qmx_status st;
    size_t i, ns;
    if (!w) return QMX_ERR_NULL;
    if (N == 0 || K == 0) return QMX_ERR_SIZE;
    if (w->kind != QMX_BLOCKW_QCONFIG && w->kind != QMX_BLOCKW_MX) return QMX_ERR_ARG;
    st = qmx__bw_check(w, N, K, b);
    if (st != QMX_OK) return st;
    if (b->mx) {   /* MXFP4, MXFP8 in blocks of 32 (E8M0 scale codes kept as they are), NVFP4
                    * of 16 */
        int nv = w->mx->format == QMX_NVFP4, f8 = w->mx->format == QMX_MXFP8_E4M3 ? 6
                                                 : w->mx->format == QMX_MXFP8_E5M2 ? 7 : 0;
        if (!(nv ? b->block == 16u || (b->block == K && K < 16u)   /* one short block */
              : f8 ? b->block == 32u || (b->block == K && K < 32u)
                   : w->mx->format == QMX_MXFP4 && b->block == 32u))
            return QMX_ERR_UNSUPPORTED;
        if ((N >> 16) >> 16 || (K >> 16) >> 16) return QMX_ERR_OVERFLOW;
        qmx__bwd_setup(b, N, K, d);
        h->elem = nv ? 5 : f8 ? f8 : 4; h->zp = 0; h->f16 = 0;
        h->sk = nv ? (w->mx->rule == QMX_MX_GGML ? 6 : 5)
               : w->mx->rule == QMX_MX_GGML ? 4 : w->mx->rule == QMX_MX_QWIX ? 3 : 2;
        h->ts = w->mx->tensor_scale;   /* sk 5 only (qmx__bp_sizes clears it otherwise) */
        h->N = N; h->K = K;
        return qmx__bp_sizes(h) ? QMX_OK : QMX_ERR_OVERFLOW;
    }
    (void)qmx__resolve(w->qc, N * K, &v);
    if (w->qc->granularity != QMX_PER_BLOCK || v.block != 32u) return QMX_ERR_UNSUPPORTED;
    if (v.dtype != QMX_INT8 && v.dtype != QMX_INT4 && v.dtype != QMX_UINT4)
        return QMX_ERR_UNSUPPORTED;
    if ((N >> 16) >> 16 || (K >> 16) >> 16) return QMX_ERR_OVERFLOW;   /* uint32 fields */
    qmx__bwd_setup(b, N, K, d);
    h->elem = v.dtype == QMX_INT8 ? 1 : v.dtype == QMX_INT4 ? 2 : 3;
    h->zp = d->use_zp;
    h->sk = 0;
    h->N = N; h->K = K;
    h->f16 = 1;
    ns = N * (K / 32u + (K % 32u != 0));
    for (i = 0; i < ns && h->f16; i++) h->f16 = qmx__bp_f16_exact(w->scales[i]);
    if (!qmx__bp_sizes(h)) return QMX_ERR_OVERFLOW;
    return QMX_OK;
}

QMX_API qmx_status qmx_blockw_pack_size(const qmx_blockw *w, size_t N, size_t K, size_t *bytes) {
    qmx__bw b;
    qmx__bwd d;
    qmx__bp h;
    qmx_status st;
    if (!bytes) return QMX_ERR_NULL;
    st = qmx__bp_from_w(w, N, K, &b, &d, &h);
    if (st == QMX_OK) *bytes = h.bytes;
    return st;
}

QMX_API qmx_status qmx_blockw_pack(const qmx_blockw *w, size_t N, size_t K, void *blob,
                                   size_t blob_bytes) {
    qmx__bw b;
    qmx__bwd d;
    qmx__bp h;
    size_t n, bk, t;
    uint32_t cmask;
    qmx_status st;
    if (!blob) return QMX_ERR_NULL;
    st = qmx__bp_from_w(w, N, K, &b, &d, &h);
    if (st != QMX_OK) return st;
    if (blob_bytes < h.bytes) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx__bp_header(&h, (uint8_t *)blob);
    qmx__bp_zero(&h, blob);
    cmask = h.elem == 1 ? 0xFFu : 0xFu;
    for (n = 0; n < N; n++)
        for (bk = 0; bk < h.nb; bk++) {
            uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
            size_t j = n % 16u, si = n * h.nb + bk;
            for (t = 0; t < h.bl && h.bl * bk + t < K; t++) {
                uint32_t c = qmx__bwd_code(&d, n * K + h.bl * bk + t);
                qmx__bp_setu(&h, blk, j, t,
                             h.elem >= 6 ? (c & 0xFFu) : h.elem >= 4 ? (c & 15u)
                                                       : ((c & cmask) + h.off) & cmask);
            }
            if (h.elem >= 4) blk[h.cb + j] = w->scale_codes[si];   /* the E8M0 / E4M3 code */
            else qmx__bp_setscale(&h, blk, j, w->scales[si]);
            if (h.zp)
                blk[h.cb + 16u * h.sb + j] = (uint8_t)((uint32_t)(w->zero_points[si] +
                                                                  (int32_t)h.off));
        }
    return QMX_OK;
}

QMX_API qmx_status qmx_blockw_packed_info(const void *blob, size_t blob_bytes,
                                          qmx_blockw_packed_desc *desc) {
    qmx__bp h;
    qmx_status st;
    if (!desc) return QMX_ERR_NULL;
    st = qmx__bp_parse(blob, blob_bytes, &h);
    if (st != QMX_OK) return st;
    desc->dtype = h.elem == 1 ? QMX_INT8 : h.elem == 2 ? QMX_INT4
                : h.elem == 3 || h.elem == 8 ? QMX_UINT4 : QMX_DTYPE_INVALID;
    desc->mxfp4 = h.elem == 4;
    desc->nvfp4 = h.elem == 5;
    desc->mxfp8 = h.elem == 6 || h.elem == 7 ? h.elem - 5 : 0;
    desc->q4_1 = h.elem == 8;
    desc->tensor_scale = h.ts;
    desc->scale_kind = h.sk;
    desc->N = h.N; desc->K = h.K; desc->block = h.bl; desc->nblk = h.nb;
    desc->has_zp = h.zp; desc->f16_scales = h.f16; desc->bytes = h.bytes;
    return QMX_OK;
}

QMX_API qmx_status qmx_blockw_unpack(const void *blob, size_t blob_bytes, void *data,
                                     size_t data_bytes, float *scales, int32_t *zero_points,
                                     size_t n_scales) {
    qmx__bp h;
    qmx_status st;
    size_t n, bk, t, need, ns;
    uint8_t *q = (uint8_t *)data;
    st = qmx__bp_parse(blob, blob_bytes, &h);
    if (st != QMX_OK) return st;
    if (h.elem >= 4) return QMX_ERR_UNSUPPORTED;   /* MXFP4, NVFP4: qmx_blockw_unpack_mx */
    if (!data || !scales || (h.zp && !zero_points)) return QMX_ERR_NULL;
    if (!qmx__mul_ok(h.N, h.K, &need)) return QMX_ERR_OVERFLOW;
    if (h.elem != 1) need = need / 2u + (need & 1u);
    ns = h.N * h.nb;
    if (data_bytes < need || n_scales < ns) return QMX_ERR_BUFFER_TOO_SMALL;
    if (h.elem != 1) q[need - 1u] = 0;   /* an odd count leaves the last high nibble 0 */
    for (n = 0; n < h.N; n++)
        for (bk = 0; bk < h.nb; bk++) {
            const uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
            size_t j = n % 16u, si = n * h.nb + bk;
            for (t = 0; t < 32u && 32u * bk + t < h.K; t++) {
                size_t e = n * h.K + 32u * bk + t;
                uint32_t u = qmx__bp_getu(&h, blk, j, t);
                if (h.elem == 1) q[e] = (uint8_t)(u ^ 0x80u);
                else qmx__set_nibble(q, e, (int32_t)(h.elem == 2 ? u ^ 8u : u));
            }
            scales[si] = qmx__bp_getscale(&h, blk, j);
            if (h.zp) zero_points[si] = (int32_t)qmx__bp_getz(&h, blk, j) - (int32_t)h.off;
        }
    return QMX_OK;
}

QMX_API qmx_status qmx_blockw_unpack_mx(const void *blob, size_t blob_bytes, void *data,
                                        size_t data_bytes, uint8_t *scale_codes,
                                        size_t n_scales) {
    qmx__bp h;
    qmx_status st;
    size_t n, bk, t, need;
    uint8_t *q = (uint8_t *)data;
    st = qmx__bp_parse(blob, blob_bytes, &h);
    if (st != QMX_OK) return st;
    if (h.elem < 4 || h.elem == 8) return QMX_ERR_UNSUPPORTED;
    if (!data || !scale_codes) return QMX_ERR_NULL;
    if (!qmx__mul_ok(h.N, h.K, &need)) return QMX_ERR_OVERFLOW;
    if (h.elem < 6) need = need / 2u + (need & 1u);   /* MXFP8: one byte per code */
    if (data_bytes < need || n_scales < h.N * h.nb) return QMX_ERR_BUFFER_TOO_SMALL;
    q[need - 1u] = 0;
    for (n = 0; n < h.N; n++)
        for (bk = 0; bk < h.nb; bk++) {
            const uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
            size_t j = n % 16u;
            for (t = 0; t < h.bl && h.bl * bk + t < h.K; t++) {
                size_t e = n * h.K + h.bl * bk + t;
                if (h.elem >= 6) q[e] = (uint8_t)qmx__bp_getu(&h, blk, j, t);
                else qmx__set_nibble(q, e, (int32_t)qmx__bp_getu(&h, blk, j, t));
            }
            scale_codes[n * h.nb + bk] = blk[h.cb + j];
        }
    return QMX_OK;
}

/* ---- ggml blocks ---- */
static size_t qmx__bp_ggml_bb(int type) {
    return type == QMX_BLOCKW_GGML_Q8_0 ? QMX_GGML_Q8_0_BLOCK_BYTES
         : type == QMX_BLOCKW_GGML_Q4_0 ? QMX_GGML_Q4_0_BLOCK_BYTES
         : type == QMX_BLOCKW_GGML_MXFP4 ? 17u
         : type == QMX_BLOCKW_GGML_NVFP4 ? 36u
         : type == QMX_BLOCKW_GGML_Q4_1 ? 20u : 0u;
}
/* elements per ggml block: QK_NVFP4 = 64 (4 sub-blocks of 16, one blob block each), else 32 */
static size_t qmx__bp_ggml_qk(int type) { return type == QMX_BLOCKW_GGML_NVFP4 ? 64u : 32u; }

static qmx_status qmx__bp_ggml_h(int type, size_t N, size_t K, qmx__bp *h, size_t *in_bytes) {
    size_t bb = qmx__bp_ggml_bb(type), nbt;
    if (!bb) return QMX_ERR_ARG;
    if (N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K % qmx__bp_ggml_qk(type)) return QMX_ERR_SHAPE;
    if ((N >> 16) >> 16 || (K >> 16) >> 16) return QMX_ERR_OVERFLOW;   /* uint32 fields */
    h->elem = type == QMX_BLOCKW_GGML_Q8_0 ? 1 : type == QMX_BLOCKW_GGML_Q4_0 ? 3
            : type == QMX_BLOCKW_GGML_Q4_1 ? 8 : type == QMX_BLOCKW_GGML_NVFP4 ? 5 : 4;
    h->zp = type == QMX_BLOCKW_GGML_Q4_0;
    h->f16 = h->elem < 4 || h->elem == 8;
    h->sk = h->elem == 4 ? 4 : h->elem == 5 ? 6 : 1;   /* ggml's 2^(c - 128), UE4M3 / 2 */
    h->ts = 0.0f;
    h->N = N; h->K = K;
    if (!qmx__bp_sizes(h)) return QMX_ERR_OVERFLOW;
    if (!qmx__mul_ok(N, K / qmx__bp_ggml_qk(type), &nbt) || !qmx__mul_ok(nbt, bb, in_bytes))
        return QMX_ERR_OVERFLOW;
    return QMX_OK;
}

QMX_API qmx_status qmx_blockw_pack_ggml_size(int ggml_type, size_t N, size_t K, size_t *bytes) {
    qmx__bp h;
    size_t in;
    qmx_status st;
    if (!bytes) return QMX_ERR_NULL;
    st = qmx__bp_ggml_h(ggml_type, N, K, &h, &in);
    if (st == QMX_OK) *bytes = h.bytes;
    return st;
}

/* One ggml block -> 32 u codes (one per byte), its scale and z; the qmx.h converters. */
static qmx_status qmx__bp_ggml_one(int type, const uint8_t *in, uint8_t *u, float *s,
                                   uint32_t *z) {
    qmx_status st;
    size_t t;
    if (type == QMX_BLOCKW_GGML_Q4_1) {   /* block_q4_1: d, m (binary16), qs[16]; any bytes */
        for (t = 0; t < 32u; t++) u[t] = (uint8_t)(t < 16u ? in[4u + t] & 15u : in[t - 12u] >> 4);
        *s = 0.0f;
        *z = 0;
        st = QMX_OK;
    } else if (type == QMX_BLOCKW_GGML_Q8_0) {
        int8_t q[32];
        st = qmx_ggml_q8_0_to_qmx(in, QMX_GGML_Q8_0_BLOCK_BYTES, 32, q, 32, s, 1);
        for (t = 0; t < 32u; t++) u[t] = (uint8_t)((uint8_t)q[t] ^ 0x80u);
        *z = 128u;
    } else if (type == QMX_BLOCKW_GGML_MXFP4) {   /* block_mxfp4: e, qs[16]; z: the E8M0 code */
        for (t = 0; t < 32u; t++) u[t] = (uint8_t)(t < 16u ? in[1u + t] & 15u : in[t - 15u] >> 4);
        *s = 0.0f;
        *z = in[0];
        st = QMX_OK;
    } else {
        uint8_t q[16];
        int32_t zp = 0;
        st = qmx_ggml_q4_0_to_qmx(in, QMX_GGML_Q4_0_BLOCK_BYTES, 32, q, 16, s, &zp, 1);
        for (t = 0; t < 32u; t++) u[t] = (uint8_t)((q[t / 2u] >> (4u * (t & 1u))) & 15u);
        *z = (uint32_t)zp;
    }
    return st;
}

QMX_API qmx_status qmx_blockw_pack_ggml(int ggml_type, const void *blocks, size_t blocks_bytes,
                                        size_t N, size_t K, void *blob, size_t blob_bytes) {
    qmx__bp h;
    size_t in, n, bk, t, bb = qmx__bp_ggml_bb(ggml_type);
    const uint8_t *src = (const uint8_t *)blocks;
    qmx_status st;
    uint8_t u[32];
    float s;
    uint32_t z;
    if (!blocks || !blob) return QMX_ERR_NULL;
    st = qmx__bp_ggml_h(ggml_type, N, K, &h, &in);
    if (st != QMX_OK) return st;
    if (blocks_bytes < in || blob_bytes < h.bytes) return QMX_ERR_BUFFER_TOO_SMALL;
    if (ggml_type == QMX_BLOCKW_GGML_NVFP4) {   /* any bytes: nothing to refuse */
        qmx__bp_header(&h, (uint8_t *)blob);
        qmx__bp_zero(&h, blob);
        for (n = 0; n < N; n++)
            for (bk = 0; bk < h.nb; bk++) {   /* blob block bk = sub-block bk % 4 of ggml's */
                uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
                const uint8_t *g = src + ((n * h.nb + bk) / 4u) * bb;
                size_t j = n % 16u, sb = bk % 4u;
                /* qs[8 sb + t]: element t (low nibble) and t + 8 (high) of the sub-block, as
                 * the blob's byte 64 (t / 4) + 4 j + t % 4 holds them */
                for (t = 0; t < 8u; t++)
                    blk[64u * (t / 4u) + 4u * j + t % 4u] = g[4u + 8u * sb + t];
                blk[h.cb + j] = g[sb];   /* the UE4M3 byte as it is */
            }
        return QMX_OK;
    }
    for (n = 0; n < in / bb; n++) {   /* every block converts before anything is written */
        st = qmx__bp_ggml_one(ggml_type, src + n * bb, u, &s, &z);
        if (st != QMX_OK) return st;
    }
    qmx__bp_header(&h, (uint8_t *)blob);
    qmx__bp_zero(&h, blob);
    for (n = 0; n < N; n++)
        for (bk = 0; bk < h.nb; bk++) {
            uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
            size_t j = n % 16u;
            (void)qmx__bp_ggml_one(ggml_type, src + (n * h.nb + bk) * bb, u, &s, &z);
            for (t = 0; t < 32u; t++) qmx__bp_setu(&h, blk, j, t, u[t]);
            if (h.elem == 8) {   /* Q4_1: d and m, their binary16 bytes as they are */
                const uint8_t *g = src + (n * h.nb + bk) * bb;
                blk[h.cb + 2u * j] = g[0]; blk[h.cb + 2u * j + 1u] = g[1];
                blk[h.cb + 32u + 2u * j] = g[2]; blk[h.cb + 32u + 2u * j + 1u] = g[3];
            } else if (h.elem == 4) {
                blk[h.cb + j] = (uint8_t)z;   /* the E8M0 code */
            } else {
                qmx__bp_setscale(&h, blk, j, s);   /* |d| of a binary16, or 1: exact */
            }
            if (h.zp) blk[h.cb + 16u * h.sb + j] = (uint8_t)z;
        }
    return QMX_OK;
}

QMX_API qmx_status qmx_blockw_unpack_ggml(const void *blob, size_t blob_bytes, int ggml_type,
                                          void *blocks, size_t blocks_bytes) {
    qmx__bp h;
    size_t n, bk, t, bb = qmx__bp_ggml_bb(ggml_type), nbt, need;
    uint8_t *dst = (uint8_t *)blocks;
    qmx_status st;
    int pass;
    st = qmx__bp_parse(blob, blob_bytes, &h);
    if (st != QMX_OK) return st;
    if (!blocks) return QMX_ERR_NULL;
    if (!bb) return QMX_ERR_ARG;
    if (!(ggml_type == QMX_BLOCKW_GGML_Q8_0 ? h.elem == 1 && !h.zp
          : ggml_type == QMX_BLOCKW_GGML_Q4_0 ? h.elem == 2 || h.elem == 3
          : ggml_type == QMX_BLOCKW_GGML_Q4_1 ? h.elem == 8
          : ggml_type == QMX_BLOCKW_GGML_NVFP4 ? h.elem == 5 && h.ts == 0.0f
          : h.elem == 4))
        return QMX_ERR_UNSUPPORTED;   /* (NVFP4 with a tensor scale: none in block_nvfp4) */
    if (h.K % qmx__bp_ggml_qk(ggml_type)) return QMX_ERR_SHAPE;
    if (!qmx__mul_ok(h.N, h.K / qmx__bp_ggml_qk(ggml_type), &nbt) || !qmx__mul_ok(nbt, bb, &need))
        return QMX_ERR_OVERFLOW;
    if (blocks_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    if (ggml_type == QMX_BLOCKW_GGML_NVFP4) {   /* the bytes as they are: nothing to refuse */
        for (n = 0; n < h.N; n++)
            for (bk = 0; bk < h.nb; bk++) {
                const uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
                uint8_t *g = dst + ((n * h.nb + bk) / 4u) * bb;
                size_t j = n % 16u, sb = bk % 4u;
                for (t = 0; t < 8u; t++)
                    g[4u + 8u * sb + t] = blk[64u * (t / 4u) + 4u * j + t % 4u];
                g[sb] = blk[h.cb + j];
            }
        return QMX_OK;
    }
    /* pass 0 checks every block (into a local), pass 1 writes */
    for (pass = 0; pass < 2; pass++)
        for (n = 0; n < h.N; n++)
            for (bk = 0; bk < h.nb; bk++) {
                const uint8_t *blk = qmx__bp_blk(&h, blob, n, bk);
                size_t j = n % 16u;
                uint8_t tmp[QMX_GGML_Q8_0_BLOCK_BYTES];
                uint8_t *out = pass ? dst + (n * h.nb + bk) * bb : tmp;
                float s = qmx__bp_getscale(&h, blk, j);
                if (h.elem == 8) {   /* Q4_1: the bytes as they were packed */
                    out[0] = blk[h.cb + 2u * j]; out[1] = blk[h.cb + 2u * j + 1u];
                    out[2] = blk[h.cb + 32u + 2u * j]; out[3] = blk[h.cb + 32u + 2u * j + 1u];
                    for (t = 0; t < 16u; t++)
                        out[4u + t] = (uint8_t)(qmx__bp_getu(&h, blk, j, t) |
                                                (qmx__bp_getu(&h, blk, j, t + 16u) << 4));
                    st = QMX_OK;
                } else if (h.elem == 1) {
                    int8_t q[32];
                    for (t = 0; t < 32u; t++) q[t] = (int8_t)(qmx__bp_getu(&h, blk, j, t) ^ 0x80u);
                    st = qmx_ggml_q8_0_from_qmx(q, 32, &s, 1, out, bb);
                } else if (h.elem == 4) {   /* the codes as they are (qmx_mx_to_ggml's bytes) */
                    out[0] = blk[h.cb + j];
                    for (t = 0; t < 16u; t++)
                        out[1u + t] = (uint8_t)(qmx__bp_getu(&h, blk, j, t) |
                                                (qmx__bp_getu(&h, blk, j, t + 16u) << 4));
                    st = QMX_OK;
                } else {
                    uint8_t q[16];
                    int32_t zp = (int32_t)qmx__bp_getz(&h, blk, j) - (int32_t)h.off;
                    uint32_t x8 = h.elem == 2 ? 0x88u : 0u;   /* int4: the code is u ^ 8 */
                    for (t = 0; t < 16u; t++)
                        q[t] = (uint8_t)((qmx__bp_getu(&h, blk, j, 2u * t) ^
                                          (qmx__bp_getu(&h, blk, j, 2u * t + 1u) << 4)) ^ x8);
                    st = qmx_ggml_q4_0_from_qmx(h.elem == 2 ? QMX_INT4 : QMX_UINT4, q, 32, &s,
                                                h.zp ? &zp : NULL, 1, out, bb);
                }
                if (st != QMX_OK) return st;   /* only in pass 0 */
            }
    return QMX_OK;
}

/* ---- the kernel ---- */
#define QMX__BP_MB 64   /* rows of X per panel */
#if defined(QMX__K_VNNI)
#  define QMX__BP_PANELS 4u   /* weight panels read at once (4 streams) */
#elif defined(QMX__K_AVX2)
#  define QMX__BP_PANELS 2u
#else
#  define QMX__BP_PANELS 1u
#endif

static qmx_status qmx__bp_ab(size_t K, const qmx_blockw_dyn_opts *opts, size_t *ab,
                             size_t *nab) {
    *ab = qmx__bwd_ab(K, opts, nab);
    return *ab == K || *ab % 32u == 0 ? QMX_OK : QMX_ERR_UNSUPPORTED;
}

QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8_workspace_size(size_t M, size_t N, size_t K,
                                                                  const qmx_blockw_dyn_opts *opts,
                                                                  size_t *bytes) {
    size_t mb, nb;
    (void)opts;
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    nb = K / 32u + (K % 32u != 0);
    mb = M < QMX__BP_MB ? M : QMX__BP_MB;
    /* at most 64 + 2 * 63 + 63 + 64 * 40 nb */
    if (nb > (SIZE_MAX - 512u) / 2560u) return QMX_ERR_OVERFLOW;
    *bytes = 64u + 2u * qmx__k_r64(4u * mb * nb) + qmx__k_r64(32u * mb * nb);
    return QMX_OK;
}

#if !defined(QMX__K_VNNI) && !defined(QMX__K_AVX2) && !defined(QMX__K_NEON) && \
    !defined(QMX__K_NEONDOT)
#if !defined(QMX__K_MVE) && !defined(QMX__RVV)
/* dot[j] = sum over the block's 32 k of q * u (row j of the panel), exact int32. Portable C;
 * qsum (the sum of q) is for the Cortex-M paths below. */
static void qmx__bp_dots_c(const qmx__bp *h, const uint8_t *blk, const int8_t *qb, int32_t qsum,
                           int32_t dot[16]) {
    size_t g, j, t;
    (void)qsum;
    for (j = 0; j < 16u; j++) dot[j] = 0;
    if (h->elem == 1) {
        for (g = 0; g < 8u; g++)
            for (j = 0; j < 16u; j++)
                for (t = 0; t < 4u; t++)
                    dot[j] += (int32_t)qb[4u * g + t] * (int32_t)blk[64u * g + 4u * j + t];
    } else {
        const uint8_t *lut = h->elem == 4 ? qmx__bp_e2m1u : qmx__bp_idu;
        for (g = 0; g < 4u; g++)
            for (j = 0; j < 16u; j++)
                for (t = 0; t < 4u; t++) {
                    uint32_t c = blk[64u * g + 4u * j + t];
                    dot[j] += (int32_t)qb[4u * g + t] * (int32_t)lut[c & 15u] +
                              (int32_t)qb[16u + 4u * g + t] * (int32_t)lut[c >> 4];
                }
    }
}
#endif

#if defined(QMX__K_MVE)
/* Cortex-M55 MVE: row j's 16 bytes of 4 groups gathered at 64 g + 4 j + t (one VLDRB gather),
 * VMLADAV against q. int8: (u ^ 0x80) is the signed code, so dot = sum + 128 qsum; 4-bit: the
 * nibbles as they are, MXFP4 through a gather from the u table. */
static const uint8_t qmx__bp_goff[16] = {0, 1, 2, 3, 64, 65, 66, 67,
                                         128, 129, 130, 131, 192, 193, 194, 195};
static void qmx__bp_dots(const qmx__bp *h, const uint8_t *blk, const int8_t *qb, int32_t qsum,
                         int32_t dot[16]) {
    const uint8x16_t off = vld1q_u8(qmx__bp_goff), x80 = vdupq_n_u8(0x80u), m4 = vdupq_n_u8(15u);
    const int8x16_t q0 = vld1q_s8(qb), q1 = vld1q_s8(qb + 16);
    size_t j;
    for (j = 0; j < 16u; j++) {
        uint8x16_t r = vldrbq_gather_offset_u8(blk + 4u * j, off);
        if (h->elem == 1) {
            uint8x16_t r1 = vldrbq_gather_offset_u8(blk + 256u + 4u * j, off);
            int32_t d = vmladavq_s8(vreinterpretq_s8_u8(veorq_u8(r, x80)), q0);
            d = vmladavaq_s8(d, vreinterpretq_s8_u8(veorq_u8(r1, x80)), q1);
            dot[j] = d + 128 * qsum;
        } else {
            uint8x16_t lo = vandq_u8(r, m4), hi = vshrq_n_u8(r, 4);
            if (h->elem == 4) {
                lo = vldrbq_gather_offset_u8(qmx__bp_e2m1u, lo);
                hi = vldrbq_gather_offset_u8(qmx__bp_e2m1u, hi);
            }
            dot[j] = vmladavaq_s8(vmladavq_s8(vreinterpretq_s8_u8(lo), q0),
                                  vreinterpretq_s8_u8(hi), q1);
        }
    }
}
#elif defined(QMX__K_DSP)
#ifdef __cplusplus
}
#endif
#include <arm_acle.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Cortex-M4 DSP: per row and group the 4 code bytes (one word) meet the 4 q bytes in two SMLAD
 * (UXTB16 of the codes, SXTB16 of q: bytes 0,2 then 1,3); 4-bit codes split into their
 * nibble words first. |u q| <= 255 x 128: exact. MXFP4 (a table per nibble): portable. */
static void qmx__bp_dots(const qmx__bp *h, const uint8_t *blk, const int8_t *qb, int32_t qsum,
                         int32_t dot[16]) {
    const uint8_t *qu = (const uint8_t *)qb;
    uint32_t qe[8], qo[8];
    size_t g, j, ng = h->elem == 1 ? 8u : 4u;
    if (h->elem == 4) { qmx__bp_dots_c(h, blk, qb, qsum, dot); return; }
    for (g = 0; g < 8u; g++) {
        uint32_t w = qmx__k_ld32le(qu + 4u * g);
        qe[g] = __sxtb16(w);
        qo[g] = __sxtb16(w >> 8);
    }
    for (j = 0; j < 16u; j++) {
        uint32_t s = 0;
        for (g = 0; g < ng; g++) {
            uint32_t w = qmx__k_ld32le(blk + 64u * g + 4u * j);
            if (h->elem == 1) {
                s = __smlad(__uxtb16(w), qe[g], s);
                s = __smlad(__uxtb16(w >> 8), qo[g], s);
            } else {   /* low nibbles: k = 4 g + t (q group g), high: k = 16 + 4 g + t (g + 4) */
                uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;
                s = __smlad(lo & 0x00FF00FFu, qe[g], s);
                s = __smlad((lo >> 8) & 0x00FF00FFu, qo[g], s);
                s = __smlad(hi & 0x00FF00FFu, qe[g + 4u], s);
                s = __smlad((hi >> 8) & 0x00FF00FFu, qo[g + 4u], s);
            }
        }
        dot[j] = qmx__k_u2i(s);
    }
}
#elif defined(QMX__RVV)
/* RVV 1.0: row j's codes are 4 bytes every 64 (an indexed byte load, so no alignment is
 * assumed: int8 32 bytes = k 0..31 in order, 4-bit 16 bytes whose low / high nibbles are k
 * 0..15 / 16..31), then vwmulsu (signed q x unsigned u, |products| <= 128 x 255 fits int16)
 * and one vwredsum; MXFP4 codes through vrgather on the u table. Exact integers: the same dot
 * at any VLEN (>= 128, so 32 bytes always fit one e8m2 group). */
static const uint16_t qmx__bp_rvv_off[32] = {0,   1,   2,   3,   64,  65,  66,  67,
                                             128, 129, 130, 131, 192, 193, 194, 195,
                                             256, 257, 258, 259, 320, 321, 322, 323,
                                             384, 385, 386, 387, 448, 449, 450, 451};
static const uint8_t qmx__bp_rvv_off8[16] = {0,   1,   2,   3,   64,  65,  66,  67,
                                             128, 129, 130, 131, 192, 193, 194, 195};
static void qmx__bp_dots(const qmx__bp *h, const uint8_t *blk, const int8_t *qb, int32_t qsum,
                         int32_t dot[16]) {
    const vint32m1_t z = __riscv_vmv_v_x_i32m1(0, 1);
    size_t j;
    (void)qsum;
    if (h->elem == 1) {
        const vint8m2_t q = __riscv_vle8_v_i8m2(qb, 32);
        const vuint16m4_t off = __riscv_vle16_v_u16m4(qmx__bp_rvv_off, 32);
        for (j = 0; j < 16u; j++) {
            vuint8m2_t u = __riscv_vluxei16_v_u8m2(blk + 4u * j, off, 32);
            vint16m4_t p = __riscv_vwmulsu_vv_i16m4(q, u, 32);
            dot[j] = __riscv_vmv_x_s_i32m1_i32(__riscv_vwredsum_vs_i16m4_i32m1(p, z, 32));
        }
    } else {
        const vint8m1_t q0 = __riscv_vle8_v_i8m1(qb, 16), q1 = __riscv_vle8_v_i8m1(qb + 16, 16);
        const vuint8m1_t lut = __riscv_vle8_v_u8m1(qmx__bp_e2m1u, 16);
        const vuint8m1_t off = __riscv_vle8_v_u8m1(qmx__bp_rvv_off8, 16);
        for (j = 0; j < 16u; j++) {
            vuint8m1_t c = __riscv_vluxei8_v_u8m1(blk + 4u * j, off, 16);
            vuint8m1_t lo = __riscv_vand_vx_u8m1(c, 15u, 16), hi = __riscv_vsrl_vx_u8m1(c, 4, 16);
            vint16m2_t p;
            if (h->elem == 4) {
                lo = __riscv_vrgather_vv_u8m1(lut, lo, 16);
                hi = __riscv_vrgather_vv_u8m1(lut, hi, 16);
            }
            p = __riscv_vwmulsu_vv_i16m2(q0, lo, 16);
            p = __riscv_vadd_vv_i16m2(p, __riscv_vwmulsu_vv_i16m2(q1, hi, 16), 16);
            dot[j] = __riscv_vmv_x_s_i32m1_i32(__riscv_vwredsum_vs_i16m2_i32m1(p, z, 16));
        }
    }
}
#else
#define qmx__bp_dots qmx__bp_dots_c
#endif

/* One row of X against one panel: y[16] (the lanes of the panel): the block dots of the path
 * (qmx__bp_dots), then the documented integer and float steps in portable C. */
QMX__NOFMA
static void qmx__bp_panel_c(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                            const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, j;
    for (j = 0; j < 16u; j++) y[j] = 0.0f;
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        int32_t dot[16];
        qmx__bp_dots(h, blk, q + 32u * bk, qs[bk], dot);
        for (j = 0; j < 16u; j++) {
            float p = (float)(dot[j] - (int32_t)qmx__bp_getz(h, blk, j) * qs[bk]);
            if (h->unit) p = p * 0.5f;   /* RN(I 2^-1): exact */
            p = p * qmx__bp_getscale(h, blk, j);
            QMX__OPAQUE(p);
            p = p * sxb[bk];
            QMX__OPAQUE(p);
            y[j] = y[j] + p;
        }
    }
}
#endif

/* MXFP8 code c -> e (units 2^-9 for E4M3, 2^-16 for E5M2) exactly as qmx__bwd_row decodes it,
 * non-finite codes as its sentinels (E4M3 0x7F / 0xFF NaN; E5M2 exponent 31: Inf, NaN). */
static int64_t qmx__bp_fp8e(uint32_t c, int e5) {
    uint32_t mag = c & 0x7Fu, mb = e5 ? 2u : 3u, ex = mag >> mb, man = mag & ((1u << mb) - 1u);
    int64_t v;
    if (!e5 && mag == 0x7Fu) return QMX__BWD_NAN;
    if (e5 && ex == 31u) return man ? QMX__BWD_NAN : (c & 0x80u) ? QMX__BWD_NINF : QMX__BWD_PINF;
    v = ex ? (int64_t)((1u << mb) | man) << (ex - 1u) : (int64_t)man;
    return (c & 0x80u) ? -v : v;
}
/* MXFP8 (elements 6, 7; blocks of 32): one row of X against one panel, y[16], portable C on
 * every path: per block and row the 32 codes decoded to integers e, then qmx_matmul_blockw_dyn_i8's
 * own segment steps (qmx__bwd_nonfinite, qmx__bwd_seg: the exact sum rounded once, RN(I 2^-U)),
 * p = p * sw, p = p * sx, y = y + p. Codes past K are 0 and so are their q. */
QMX__NOFMA
static void qmx__bp8_panel_c(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                             const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, j, t;
    int e5 = h->elem == 7;
    for (j = 0; j < 16u; j++) y[j] = 0.0f;
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const int8_t *qb = q + 32u * bk;
        for (j = 0; j < 16u; j++) {
            int64_t w[32];
            int nf = 0;
            float p;
            for (t = 0; t < 32u; t++) {
                w[t] = qmx__bp_fp8e(blk[64u * (t / 4u) + 4u * j + t % 4u], e5);
                nf |= w[t] >= QMX__BWD_PINF || w[t] <= QMX__BWD_NINF;
            }
            nf = nf ? qmx__bwd_nonfinite(qb, w, 32u) : 0;
            if (nf == 0) p = qmx__bwd_seg(qb, w, 32u, e5 ? 16 : 9);
            else p = qmx__bits_f32(nf == 1 ? 0x7F800000u : nf == 2 ? 0xFF800000u : QMX__BW_QNAN);
            p = p * qmx__bp_getscale(h, blk, j);
            QMX__OPAQUE(p);
            p = p * sxb[bk];
            QMX__OPAQUE(p);
            y[j] = y[j] + p;
        }
    }
}

#if !defined(QMX__K_VNNI) && !defined(QMX__K_AVX2) && !defined(QMX__K_NEON) && \
    !defined(QMX__K_NEONDOT)
/* ggml Q4_1 (element 8): one row of X against one panel, y[16], portable C on every path but
 * AVX-512 VNNI, AVX2 (qmx__bp41_panel_avx2) and NEON (qmx__bp41_panel_neon): per
 * block I = sum_k q u (u the 4-bit code, exact), then p = (float)I, p = p * d, p = p * sx,
 * y = y + p; t = (float)qsum, t = t * sx, t = t * m, y = y + t (the minimum's term). */
QMX__NOFMA
static void qmx__bp41_panel_c(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                              const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, g, j, t;
    for (j = 0; j < 16u; j++) y[j] = 0.0f;
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const int8_t *qb = q + 32u * bk;
        for (j = 0; j < 16u; j++) {
            int32_t dot = 0;
            float p, tm;
            for (g = 0; g < 4u; g++)
                for (t = 0; t < 4u; t++) {
                    uint32_t c = blk[64u * g + 4u * j + t];
                    dot += (int32_t)qb[4u * g + t] * (int32_t)(c & 15u) +
                           (int32_t)qb[16u + 4u * g + t] * (int32_t)(c >> 4);
                }
            p = (float)dot;
            p = p * qmx__bp_getscale(h, blk, j);
            QMX__OPAQUE(p);
            p = p * sxb[bk];
            QMX__OPAQUE(p);
            y[j] = y[j] + p;
            tm = (float)qs[bk];
            tm = tm * sxb[bk];
            QMX__OPAQUE(tm);
            tm = tm * qmx__bp_getmin(h, blk, j);
            QMX__OPAQUE(tm);
            y[j] = y[j] + tm;
        }
    }
}
#endif

#if !defined(QMX__K_VNNI) && !defined(QMX__K_AVX2) && !defined(QMX__K_NEON) && \
    !defined(QMX__K_NEONDOT)
/* NVFP4 (element 5, blocks of 16): one row of X against one panel, y[16], portable C on every
 * path but AVX-512 VNNI, AVX2 (qmx__bp16_panel_avx2) and NEON (qmx__bp16_panel_neon): per block dot = sum_k q u (u = 12 +
 * 2 x value), I = dot - 12 qsum, then the float steps of qmx__bp_panel_c. qs16: the row's
 * int16 sums of q per block of 16;
 * sxb: its activation scales per block of 32 (act_block is 0, >= K or a multiple of 32). */
QMX__NOFMA
static void qmx__bp16_panel_c(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                              const int16_t *qs16, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, g, j, t;
    for (j = 0; j < 16u; j++) y[j] = 0.0f;
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const int8_t *qb = q + 16u * bk;
        for (j = 0; j < 16u; j++) {
            int32_t dot = 0;
            float p;
            for (g = 0; g < 2u; g++)
                for (t = 0; t < 4u; t++) {
                    uint32_t c = blk[64u * g + 4u * j + t];
                    dot += (int32_t)qb[4u * g + t] * (int32_t)qmx__bp_e2m1u[c & 15u] +
                           (int32_t)qb[8u + 4u * g + t] * (int32_t)qmx__bp_e2m1u[c >> 4];
                }
            p = (float)(dot - 12 * (int32_t)qs16[bk]);
            if (h->unit) p = p * 0.5f;   /* RN(I 2^-1): exact */
            p = p * qmx__bp_getscale(h, blk, j);
            QMX__OPAQUE(p);
            p = p * sxb[bk / 2u];
            QMX__OPAQUE(p);
            y[j] = y[j] + p;
        }
    }
}
#endif

#if defined(QMX__K_NEON) || defined(QMX__K_NEONDOT)
/* acc + the 4-byte dots of a (16 bytes: 4 lanes x 4 k) with b (the same 4 bytes in each
 * lane): sdot with dotprod, else vmull_s8 and pairwise adds (products <= 2^14: exact). */
static inline int32x4_t qmx__bp_dot_neon(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(QMX__K_NEONDOT)
    return vdotq_s32(acc, a, b);
#else
    int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    int16x8_t hi = vmull_high_s8(a, b);
    return vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi)));
#endif
}

/* qmx__bp_panel_c on NEON: 16 lanes as 4 x 4, one block at a time. Codes go to the signed
 * dot as they are (4-bit u <= 24) or as u - 128 (int8: u ^ 0x80), so the block integer is
 * I = dot + (c - z) qsum, c = 128 for int8 else 0: the same exact int32; then the same float
 * steps (p = (float)I, [p * 0.5], p * sw, p * sx, y + p; contraction off). */
QMX__NOFMA
static void qmx__bp_panel_neon(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                               const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    const uint8x16_t lut = vld1q_u8(qmx__bp_e2m1u), m4 = vdupq_n_u8(15u), x80 = vdupq_n_u8(0x80u);
    const int32_t corr = h->elem == 1 ? 128 : 0;
    float32x4_t yv[4];
    size_t bk, g, v;
    for (v = 0; v < 4u; v++) yv[v] = vdupq_n_f32(0.0f);
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const uint8_t *qb = (const uint8_t *)q + 32u * bk;   /* bytes for qmx__k_ld32le */
        int32x4_t d[4], zv[4];
        float sw[16];
        for (v = 0; v < 4u; v++) d[v] = vdupq_n_s32(0);
        if (h->elem == 1) {
            for (g = 0; g < 8u; g++) {
                int8x16_t b = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 4u * g)));
                for (v = 0; v < 4u; v++)
                    d[v] = qmx__bp_dot_neon(
                        d[v], vreinterpretq_s8_u8(veorq_u8(vld1q_u8(blk + 64u * g + 16u * v), x80)),
                        b);
            }
        } else {
            for (g = 0; g < 4u; g++) {
                int8x16_t bl = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 4u * g)));
                int8x16_t bh = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 16u + 4u * g)));
                for (v = 0; v < 4u; v++) {
                    uint8x16_t c = vld1q_u8(blk + 64u * g + 16u * v);
                    uint8x16_t lo = vandq_u8(c, m4), hi = vshrq_n_u8(c, 4);
                    if (h->elem == 4) { lo = vqtbl1q_u8(lut, lo); hi = vqtbl1q_u8(lut, hi); }
                    d[v] = qmx__bp_dot_neon(d[v], vreinterpretq_s8_u8(lo), bl);
                    d[v] = qmx__bp_dot_neon(d[v], vreinterpretq_s8_u8(hi), bh);
                }
            }
        }
        if (h->zp) {
            uint8x16_t z8 = vld1q_u8(blk + h->cb + 16u * h->sb);
            uint16x8_t zl = vmovl_u8(vget_low_u8(z8)), zh = vmovl_u8(vget_high_u8(z8));
            zv[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(zl)));
            zv[1] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(zl)));
            zv[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(zh)));
            zv[3] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(zh)));
        } else {
            for (v = 0; v < 4u; v++) zv[v] = vdupq_n_s32((int32_t)h->off);
        }
        for (v = 0; v < 16u; v++) sw[v] = qmx__bp_getscale(h, blk, v);
        for (v = 0; v < 4u; v++) {
            int32x4_t i = vmlaq_s32(d[v], vsubq_s32(vdupq_n_s32(corr), zv[v]), vdupq_n_s32(qs[bk]));
            float32x4_t p = vcvtq_f32_s32(i);   /* |I| < 2^21: exact */
            if (h->unit) p = vmulq_f32(p, vdupq_n_f32(0.5f));
            p = vmulq_f32(p, vld1q_f32(sw + 4u * v));
            p = vmulq_f32(p, vdupq_n_f32(sxb[bk]));
            yv[v] = vaddq_f32(yv[v], p);
        }
    }
    for (v = 0; v < 4u; v++) vst1q_f32(y + 4u * v, yv[v]);
}

/* NVFP4 (element 5, blocks of 16) on NEON: qmx__bp16_panel_c's value. The E2M1 codes go
 * through vqtbl1q_s8 to 2 x value (-12 .. 12, the signed u - 12), so the dot is I = sum q u -
 * 12 qsum itself (exact: |I| <= 16 x 128 x 12); low nibbles k = 4 g + t, high k = 8 + 4 g + t.
 * Then the same float steps per lane: p = (float)I, [p * 0.5], p * sw, p * sx (sxb per 32 k),
 * y + p. */
static const int8_t qmx__bp_e2m1s[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
/* The 16 NVFP4 block scales as qmx__bp_getscale decodes them (as qmx__bp16_sw_vnni): E4M3
 * normal codes as float bits (mag << 20) + (120 << 23), subnormal mag x 2^-9 (exact), 0x7F
 * NaN, the sign or-ed in, then ts x that where not NaN; ggml (sk 6): (mag << 20) + (119 <<
 * 23), exponent 0: mag x 2^-10, codes 0x00 / 0x7F: +0, bit 7 ignored. */
QMX__NOFMA
static inline void qmx__bp16_sw_neon(const qmx__bp *h, const uint8_t *blk, float32x4_t sw[4]) {
    QMX__PRAGMA_NOFMA
    const uint8x16_t c8 = vld1q_u8(blk + h->cb);
    const uint16x8_t c16[2] = {vmovl_u8(vget_low_u8(c8)), vmovl_u8(vget_high_u8(c8))};
    const uint32x4_t m7 = vdupq_n_u32(0x7Fu), eight = vdupq_n_u32(8u);
    size_t v;
    for (v = 0; v < 4u; v++) {
        const uint32x4_t c = (v & 1u) ? vmovl_u16(vget_high_u16(c16[v / 2u]))
                                      : vmovl_u16(vget_low_u16(c16[v / 2u]));
        const uint32x4_t mag = vandq_u32(c, m7), sub = vcltq_u32(mag, eight);
        const float32x4_t fm = vcvtq_f32_u32(mag);
        float32x4_t d;
        if (h->sk == 6) {
            d = vreinterpretq_f32_u32(vaddq_u32(vshlq_n_u32(mag, 20), vdupq_n_u32(119u << 23)));
            d = vbslq_f32(sub, vmulq_f32(fm, vdupq_n_f32(0.0009765625f)), d);
            sw[v] = vbslq_f32(vceqq_u32(c, m7), vdupq_n_f32(0.0f), d);
            continue;
        }
        d = vreinterpretq_f32_u32(vaddq_u32(vshlq_n_u32(mag, 20), vdupq_n_u32(120u << 23)));
        d = vbslq_f32(sub, vmulq_f32(fm, vdupq_n_f32(0.001953125f)), d);
        d = vbslq_f32(vceqq_u32(mag, m7), vreinterpretq_f32_u32(vdupq_n_u32(0x7FC00000u)), d);
        d = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(d),
                                            vandq_u32(vshlq_n_u32(c, 24), vdupq_n_u32(0x80000000u))));
        if (h->ts != 0.0f) d = vbslq_f32(vceqq_u32(mag, m7), d, vmulq_f32(vdupq_n_f32(h->ts), d));
        sw[v] = d;
    }
}
QMX__NOFMA
static void qmx__bp16_panel_neon(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                                 const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    const int8x16_t lut = vld1q_s8(qmx__bp_e2m1s);
    const uint8x16_t m4 = vdupq_n_u8(15u);
    float32x4_t yv[4];
    size_t bk, g, v;
    for (v = 0; v < 4u; v++) yv[v] = vdupq_n_f32(0.0f);
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const uint8_t *qb = (const uint8_t *)q + 16u * bk;
        const float32x4_t sx = vdupq_n_f32(sxb[bk / 2u]);
        int32x4_t d[4];
        float32x4_t sw[4];
        for (v = 0; v < 4u; v++) d[v] = vdupq_n_s32(0);
        for (g = 0; g < 2u; g++) {
            int8x16_t bl = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 4u * g)));
            int8x16_t bh = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 8u + 4u * g)));
            for (v = 0; v < 4u; v++) {
                uint8x16_t c = vld1q_u8(blk + 64u * g + 16u * v);
                d[v] = qmx__bp_dot_neon(d[v], vqtbl1q_s8(lut, vandq_u8(c, m4)), bl);
                d[v] = qmx__bp_dot_neon(d[v], vqtbl1q_s8(lut, vshrq_n_u8(c, 4)), bh);
            }
        }
        qmx__bp16_sw_neon(h, blk, sw);
        for (v = 0; v < 4u; v++) {
            float32x4_t p = vcvtq_f32_s32(d[v]);   /* exact */
            if (h->unit) p = vmulq_f32(p, vdupq_n_f32(0.5f));
            p = vmulq_f32(p, sw[v]);
            p = vmulq_f32(p, sx);
            yv[v] = vaddq_f32(yv[v], p);
        }
    }
    for (v = 0; v < 4u; v++) vst1q_f32(y + 4u * v, yv[v]);
}

/* ggml Q4_1 (element 8) on NEON: qmx__bp41_panel_c's value. I = sum q u by dots on the
 * nibbles (u <= 15 as signed bytes), d and m by vcvt_f32_f16 (exact), then per lane p =
 * (float)I, p * d, p * sx, y + p; t = ((float)qsum * sx) (one value for the 16 lanes), t * m,
 * y + t. */
QMX__NOFMA
static void qmx__bp41_panel_neon(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                                 const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    const uint8x16_t m4 = vdupq_n_u8(15u);
    float32x4_t yv[4];
    size_t bk, g, v;
    for (v = 0; v < 4u; v++) yv[v] = vdupq_n_f32(0.0f);
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const uint8_t *qb = (const uint8_t *)q + 32u * bk;
        const float32x4_t sx = vdupq_n_f32(sxb[bk]);
        float tm = (float)qs[bk];
        float32x4_t tv;
        int32x4_t d[4];
        tm = tm * sxb[bk];
        QMX__OPAQUE(tm);
        tv = vdupq_n_f32(tm);
        for (v = 0; v < 4u; v++) d[v] = vdupq_n_s32(0);
        for (g = 0; g < 4u; g++) {
            int8x16_t bl = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 4u * g)));
            int8x16_t bh = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 16u + 4u * g)));
            for (v = 0; v < 4u; v++) {
                uint8x16_t c = vld1q_u8(blk + 64u * g + 16u * v);
                d[v] = qmx__bp_dot_neon(d[v], vreinterpretq_s8_u8(vandq_u8(c, m4)), bl);
                d[v] = qmx__bp_dot_neon(d[v], vreinterpretq_s8_u8(vshrq_n_u8(c, 4)), bh);
            }
        }
        for (v = 0; v < 4u; v++) {
            float32x4_t dv = vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(blk + h->cb + 8u * v)));
            float32x4_t mv = vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(blk + h->cb + 32u + 8u * v)));
            float32x4_t p = vcvtq_f32_s32(d[v]);   /* |I| <= 32 x 128 x 15: exact */
            p = vmulq_f32(p, dv);
            p = vmulq_f32(p, sx);
            yv[v] = vaddq_f32(yv[v], p);
            yv[v] = vaddq_f32(yv[v], vmulq_f32(tv, mv));
        }
    }
    for (v = 0; v < 4u; v++) vst1q_f32(y + 4u * v, yv[v]);
}

/* MXFP8 E4M3 (element 6) on NEON: qmx__bp8_panel_c's value with exact int32 dots. The
 * integer e (units 2^-9) of magnitude code c (exponent x, mantissa f) is m 2^s, m = 8 | f, s
 * = x - 1 (x = 0: m = f, s = 0), s <= 14; written as (m << (s & 3)) x 16^(s >> 2), m << (s &
 * 3) <= 120: a signed byte with the code's sign, one of 4 operands by a = s >> 2 (the others
 * 0), dot with q each; I = A0 + 16 (A1 + 16 (A2 + 16 A3)) (every partial sum a part of the
 * exact dot, |I| <= 32 x 128 x 245760 = 2^30: no overflow); p = (float)I x 2^-9 =
 * RN_f32(I 2^-9) (the power of two exact: |I| >= 1 or I = +0), NaN on a row whose block holds
 * a 0x7F / 0xFF code (E4M3 has no Inf), then p * sw, p * sx, y + p. */
QMX__NOFMA
static void qmx__bp8_panel_neon(const qmx__bp *h, const uint8_t *pp, const int8_t *q,
                                const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    const uint8x16_t m7 = vdupq_n_u8(0x7Fu), x78 = vdupq_n_u8(0x78u), c8 = vdupq_n_u8(8u);
    const uint8x16_t c7 = vdupq_n_u8(7u), c3 = vdupq_n_u8(3u), one = vdupq_n_u8(1u);
    const uint8x16_t two = vdupq_n_u8(2u), zero = vdupq_n_u8(0u);
    const float32x4_t qnan = vreinterpretq_f32_u32(vdupq_n_u32(0x7FC00000u));
    float32x4_t yv[4];
    size_t bk, g, v;
    for (v = 0; v < 4u; v++) yv[v] = vdupq_n_f32(0.0f);
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const uint8_t *qb = (const uint8_t *)q + 32u * bk;
        const float32x4_t sx = vdupq_n_f32(sxb[bk]);
        int8x16_t b[8];
        float sw[16];
        for (g = 0; g < 8u; g++)
            b[g] = vreinterpretq_s8_u32(vdupq_n_u32(qmx__k_ld32le(qb + 4u * g)));
        for (v = 0; v < 16u; v++) sw[v] = qmx__bp_getscale(h, blk, v);
        for (v = 0; v < 4u; v++) {   /* rows 4 v .. 4 v + 3 */
            int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
            uint8x16_t nan = zero;
            uint32x4_t nl;
            float32x4_t p;
            for (g = 0; g < 8u; g++) {
                const uint8x16_t c = vld1q_u8(blk + 64u * g + 16u * v);
                const uint8x16_t mag = vandq_u8(c, m7);
                const uint8x16_t m = vorrq_u8(vandq_u8(mag, c7), vandq_u8(vtstq_u8(mag, x78), c8));
                const uint8x16_t s = vqsubq_u8(vshrq_n_u8(mag, 3), one);
                const uint8x16_t a = vshrq_n_u8(s, 2);
                const int8x16_t neg = vshrq_n_s8(vreinterpretq_s8_u8(c), 7);
                int8x16_t w = vreinterpretq_s8_u8(vshlq_u8(m, vreinterpretq_s8_u8(vandq_u8(s, c3))));
                w = vsubq_s8(veorq_s8(w, neg), neg);
                nan = vorrq_u8(nan, vceqq_u8(mag, m7));
                a0 = qmx__bp_dot_neon(a0, vandq_s8(w, vreinterpretq_s8_u8(vceqq_u8(a, zero))), b[g]);
                a1 = qmx__bp_dot_neon(a1, vandq_s8(w, vreinterpretq_s8_u8(vceqq_u8(a, one))), b[g]);
                a2 = qmx__bp_dot_neon(a2, vandq_s8(w, vreinterpretq_s8_u8(vceqq_u8(a, two))), b[g]);
                a3 = qmx__bp_dot_neon(a3, vandq_s8(w, vreinterpretq_s8_u8(vceqq_u8(a, c3))), b[g]);
            }
            a2 = vaddq_s32(a2, vshlq_n_s32(a3, 4));
            a1 = vaddq_s32(a1, vshlq_n_s32(a2, 4));
            a0 = vaddq_s32(a0, vshlq_n_s32(a1, 4));
            p = vmulq_f32(vcvtq_f32_s32(a0), vdupq_n_f32(0.001953125f));
            nl = vtstq_u32(vreinterpretq_u32_u8(nan), vreinterpretq_u32_u8(nan));
            p = vbslq_f32(nl, qnan, p);
            p = vmulq_f32(p, vld1q_f32(sw + 4u * v));
            p = vmulq_f32(p, sx);
            yv[v] = vaddq_f32(yv[v], p);
        }
    }
    for (v = 0; v < 4u; v++) vst1q_f32(y + 4u * v, yv[v]);
}
#endif

#if defined(QMX__K_VNNI)
#if defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* The 16 block scales of a block as floats: float32, binary16 (vcvtph2ps, exact) or E8M0
 * codes decoded as qmx__bp_getscale does. */
QMX__K_AINLINE __m512 qmx__bp_sw_vnni(const qmx__bp *h, const uint8_t *blk) {
    if (h->sk >= 2) {
        const __m512i c = _mm512_maskz_cvtepu8_epi32(
            (__mmask16)0xFFFFu, _mm_loadu_si128((const __m128i *)(const void *)(blk + h->cb)));
        __m512i b;
        if (h->sk == 3) {
            b = _mm512_slli_epi32(c, 23);                        /* 0: +0, 0xFF: +Inf */
        } else if (h->sk == 2) {
            b = _mm512_slli_epi32(c, 23);
            b = _mm512_mask_mov_epi32(b, _mm512_cmpeq_epi32_mask(c, _mm512_setzero_si512()),
                                      _mm512_set1_epi32(0x00400000));
            b = _mm512_mask_mov_epi32(b, _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(255)),
                                      _mm512_set1_epi32(0x7FC00000));
        } else {                                                 /* ggml: 2^(c - 128) */
            b = _mm512_slli_epi32(_mm512_sub_epi32(c, _mm512_set1_epi32(1)), 23);
            b = _mm512_mask_mov_epi32(b, _mm512_cmpeq_epi32_mask(c, _mm512_setzero_si512()),
                                      _mm512_set1_epi32(0x00200000));
            b = _mm512_mask_mov_epi32(b, _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(1)),
                                      _mm512_set1_epi32(0x00400000));
        }
        return _mm512_castsi512_ps(b);
    }
    return h->f16 ? _mm512_maskz_cvtph_ps((__mmask16)0xFFFFu, _mm256_loadu_si256(
                                              (const __m256i *)(const void *)(blk + h->cb)))
                  : _mm512_loadu_ps((const void *)(blk + h->cb));
}

/* The 8 code vectors of a block (group g: 16 rows x 4 k as u bytes, vpdpbusd's unsigned
 * operand): int8 as stored; 4-bit codes split by and / shift (groups 4-7 the high nibbles);
 * MXFP4 codes to u = 12 + 2 x value by vpshufb. */
QMX__K_AINLINE void qmx__bp_codes_vnni(const qmx__bp *h, const uint8_t *blk, __m512i w[8]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    int g;
    if (h->elem == 1) {
        for (g = 0; g < 8; g++) w[g] = _mm512_loadu_si512((const void *)(blk + 64 * g));
        return;
    }
    for (g = 0; g < 4; g++) {
        __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
        w[g] = _mm512_and_si512(v, m4);
        w[g + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
    if (h->elem == 4) {
        const __m512i lut = _mm512_broadcast_i32x4(
            _mm_loadu_si128((const __m128i *)(const void *)qmx__bp_e2m1u));
        for (g = 0; g < 8; g++) w[g] = _mm512_shuffle_epi8(lut, w[g]);
    }
}
/* z of the 16 rows of a block: stored zero points, or the dtype's offset */
QMX__K_AINLINE __m512i qmx__bp_z_vnni(const qmx__bp *h, const uint8_t *blk) {
    return h->zp ? _mm512_maskz_cvtepu8_epi32(   /* zero-masked: no GCC PR 105593 warning */
                       (__mmask16)0xFFFFu,
                       _mm_loadu_si128((const __m128i *)(const void *)(blk + h->cb + 16u * h->sb)))
                 : _mm512_set1_epi32((int32_t)h->off);
}
/* One row of X (its 32 bytes of the block at xb) against a decoded block on 16 lanes (lane j =
 * row j of the panel): p = ((float)(sum q u - z qsum) [* 0.5]) * sw) * sx, the value added to
 * the lane's output. */
QMX__NOFMA
QMX__K_AINLINE __m512 qmx__bp_row_vnni(const qmx__bp *h, const __m512i w[8], __m512i zv,
                                      __m512 sw, const uint8_t *xb, int32_t qsum, float sx) {
    QMX__PRAGMA_NOFMA
    __m512i a0 = _mm512_setzero_si512(), a1 = a0;
    __m512 p;
    int g;
    for (g = 0; g < 8; g += 2) {   /* 4 activations per broadcast dword, two chains */
        a0 = _mm512_dpbusd_epi32(a0, w[g], _mm512_set1_epi32((int)qmx__k_ld32le(xb + 4 * g)));
        a1 = _mm512_dpbusd_epi32(a1, w[g + 1],
                                 _mm512_set1_epi32((int)qmx__k_ld32le(xb + 4 * g + 4)));
    }
    a0 = _mm512_sub_epi32(_mm512_add_epi32(a0, a1),
                          _mm512_mullo_epi32(zv, _mm512_set1_epi32(qsum)));
    p = _mm512_cvtepi32_ps(a0);
    if (h->unit) p = _mm512_mul_ps(p, _mm512_set1_ps(0.5f));   /* RN(I 2^-1): exact */
    p = _mm512_mul_ps(p, sw);
    return _mm512_mul_ps(p, _mm512_set1_ps(sx));
}
/* One block of one panel against one row of X. */
QMX__NOFMA
QMX__K_AINLINE __m512 qmx__bp_blk_vnni(const qmx__bp *h, const uint8_t *blk, const uint8_t *xb,
                                      int32_t qsum, float sx) {
    __m512i w[8];
    qmx__bp_codes_vnni(h, blk, w);
    return qmx__bp_row_vnni(h, w, qmx__bp_z_vnni(h, blk), qmx__bp_sw_vnni(h, blk), xb, qsum, sx);
}

/* Four rows of X (q + r kp, r < 4) against one panel: y[16 r + j]; per block the weights
 * are loaded (and 4-bit codes split) once for the four rows. */
QMX__NOFMA
static void qmx__bp_tile4_vnni(const qmx__bp *h, const uint8_t *pp, const int8_t *q, size_t kp,
                               const int32_t *qs, const float *sxb, size_t nb, float *y) {
    QMX__PRAGMA_NOFMA
    __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
    const uint8_t *x = (const uint8_t *)q;
    size_t bk;
    for (bk = 0; bk < nb; bk++) {
        const uint8_t *blk = pp + bk * h->S, *xb = x + 32u * bk;
        __m512i w[8], zv = qmx__bp_z_vnni(h, blk);
        __m512 sw = qmx__bp_sw_vnni(h, blk);
        qmx__bp_codes_vnni(h, blk, w);
        y0 = _mm512_add_ps(y0, qmx__bp_row_vnni(h, w, zv, sw, xb, qs[bk], sxb[bk]));
        y1 = _mm512_add_ps(y1, qmx__bp_row_vnni(h, w, zv, sw, xb + kp, qs[nb + bk],
                                                sxb[nb + bk]));
        y2 = _mm512_add_ps(y2, qmx__bp_row_vnni(h, w, zv, sw, xb + 2u * kp, qs[2u * nb + bk],
                                                sxb[2u * nb + bk]));
        y3 = _mm512_add_ps(y3, qmx__bp_row_vnni(h, w, zv, sw, xb + 3u * kp, qs[3u * nb + bk],
                                                sxb[3u * nb + bk]));
    }
    _mm512_storeu_ps(y, y0);
    _mm512_storeu_ps(y + 16, y1);
    _mm512_storeu_ps(y + 32, y2);
    _mm512_storeu_ps(y + 48, y3);
}

/* One row of X against np (1 .. 4) consecutive panels at once (np weight streams, as the
 * int8 GEMV reads 4 panels): y[16 t + j] = lane j of panel t. Blocks in increasing k. */
QMX__NOFMA
static void qmx__bp_panel_vnni(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                               const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, ps = h->nb * h->S;
    __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
    if (np == 4) {
        for (bk = 0; bk < h->nb; bk++) {
            const uint8_t *blk = pp + bk * h->S, *xb = (const uint8_t *)(q + 32u * bk);
            y0 = _mm512_add_ps(y0, qmx__bp_blk_vnni(h, blk, xb, qs[bk], sxb[bk]));
            y1 = _mm512_add_ps(y1, qmx__bp_blk_vnni(h, blk + ps, xb, qs[bk], sxb[bk]));
            y2 = _mm512_add_ps(y2, qmx__bp_blk_vnni(h, blk + 2u * ps, xb, qs[bk], sxb[bk]));
            y3 = _mm512_add_ps(y3, qmx__bp_blk_vnni(h, blk + 3u * ps, xb, qs[bk], sxb[bk]));
        }
        _mm512_storeu_ps(y + 16, y1);
        _mm512_storeu_ps(y + 32, y2);
        _mm512_storeu_ps(y + 48, y3);
    } else {
        size_t t;
        for (t = 0; t < np; t++) {
            for (bk = 0; bk < h->nb; bk++)
                y0 = _mm512_add_ps(y0, qmx__bp_blk_vnni(h, pp + t * ps + bk * h->S,
                                                        (const uint8_t *)(q + 32u * bk), qs[bk],
                                                        sxb[bk]));
            _mm512_storeu_ps(y + 16u * t, y0);
            y0 = _mm512_setzero_ps();
        }
        return;
    }
    _mm512_storeu_ps(y, y0);
}

/* ---- int4 / uint4 codes (elements 2, 3) in register tiles of 8 or 4 rows x 1 panel ----
 * The same exact integer as qmx__bp_row_vnni, I = sum_k q u - z qsum, with q as vpdpbusd's
 * signed operand broadcast from memory (embedded {1to16}) and every row's accumulator started
 * at a multiple of qsum (qmx__bp_dyn stores -8 qsum in place of qsum for the tiles' rows):
 * a panel whose zero points are all 8 (ggml Q4_0, int4 without zero points) takes the
 * nibbles u as they are and starts at -8 qsum; any other panel takes u - z + 128 (= u - (z ^
 * 0x80) in bytes, 0 .. 255 while z <= 128) and starts at 16 (-8 qsum) = -128 qsum. So per row
 * and block: one broadcast and 8 vpdpbusd (no z qsum multiply), then the float steps of
 * qmx__bp_row_vnni (vcvtdq2ps, vmulps sw, vmulps sx, vaddps; no FMA). A block with a zero
 * point byte >= 128 (no valid blob has one) sends the whole tile to qmx__bp4_tile_c, the same
 * steps in C. */
QMX__NOFMA
static void qmx__bp4_tile_c(const qmx__bp *h, const uint8_t *pp, const int8_t *x, size_t kp,
                            const float *sxb, size_t nb, size_t R, float *y) {
    QMX__PRAGMA_NOFMA
    size_t r, bk, j, t;
    for (r = 0; r < R; r++)
        for (j = 0; j < 16u; j++) {
            float acc = 0.0f;
            for (bk = 0; bk < nb; bk++) {
                const uint8_t *blk = pp + bk * h->S;
                const int8_t *xb = x + r * kp + 32u * bk;
                int32_t I = 0, z = (int32_t)qmx__bp_getz(h, blk, j);
                float p;
                for (t = 0; t < 32u; t++)
                    I += (int32_t)xb[t] * ((int32_t)qmx__bp_getu(h, blk, j, t) - z);
                p = (float)I;
                p = p * qmx__bp_getscale(h, blk, j);
                QMX__OPAQUE(p);
                p = p * sxb[r * nb + bk];
                QMX__OPAQUE(p);
                acc = acc + p;
            }
            y[16u * r + j] = acc;
        }
}
/* a + the dot of w (unsigned bytes) with the 4 signed bytes at p broadcast (GCC does not fold
 * the broadcast into vpdpbusd's m32bcst operand: inline assembly there) */
QMX__K_AINLINE __m512i qmx__bp4_dp_vnni(__m512i a, __m512i w, const int8_t *p) {
#if defined(__GNUC__) && !defined(__clang__)
    __asm__("vpdpbusd %2%{1to16%}, %1, %0"
            : "+v"(a)
            : "v"(w), "m"(*(const int32_t *)(const void *)p));
    return a;
#else
    return _mm512_dpbusd_epi32(a, w, _mm512_set1_epi32((int)qmx__k_ld32le((const uint8_t *)p)));
#endif
}
/* 1 when every zero point of the panel's nb blocks is 8 (ggml Q4_0, int4 without zero
 * points): the tile then takes the nibbles as they are */
static int qmx__bp4_all8(const qmx__bp *h, const uint8_t *pp, size_t nb) {
    __m128i d = _mm_setzero_si128();
    size_t bk;
    if (!h->zp) return h->off == 8u;
    for (bk = 0; bk < nb; bk++)
        d = _mm_or_si128(d, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(
                                              pp + bk * h->S + h->cb + 16u * h->sb)),
                                          _mm_set1_epi8(8)));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xFFFF;
}
/* A block's 8 weight vectors (group g: 16 rows x 4 k; groups 4-7 the high nibbles): u (gen
 * 0: every z is 8), else u - z + 128 (*bad |= the sign bits of z). */
QMX__K_AINLINE void qmx__bp4_dec_vnni(const qmx__bp *h, const uint8_t *blk, __m512i w[8],
                                     unsigned *bad, const int gen) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    int g;
    for (g = 0; g < 4; g++) {
        __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
        w[g] = _mm512_and_si512(v, m4);
        w[g + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
    if (gen) {
        const __m512i zidx = _mm512_set_epi32(
            0x0F0F0F0F, 0x0E0E0E0E, 0x0D0D0D0D, 0x0C0C0C0C, 0x0B0B0B0B, 0x0A0A0A0A, 0x09090909,
            0x08080808, 0x07070707, 0x06060606, 0x05050505, 0x04040404, 0x03030303, 0x02020202,
            0x01010101, 0x00000000);   /* byte 4 j + t: z of row j */
        const __m128i z16 = h->zp ? _mm_loadu_si128((const __m128i *)(const void *)(
                                        blk + h->cb + 16u * h->sb))
                                  : _mm_set1_epi8((char)h->off);
        const __m512i zb = _mm512_shuffle_epi8(
            _mm512_broadcast_i32x4(_mm_xor_si128(z16, _mm_set1_epi8((char)0x80))), zidx);
        *bad |= (unsigned)_mm_movemask_epi8(z16);
        for (g = 0; g < 8; g++) w[g] = _mm512_sub_epi8(w[g], zb);
    }
}
/* One row (its 32 bytes of q at xb, -8 qsum in qn; gen: the weights are u - z + 128, start
 * at 16 qn): y + ((float)I * sw) * sx. */
QMX__NOFMA
QMX__K_AINLINE __m512 qmx__bp4_row_vnni(__m512 y, const __m512i w[8], __m512 sw,
                                       const int8_t *xb, int32_t qn, float sx, const int gen) {
    QMX__PRAGMA_NOFMA
    __m512i a = gen ? _mm512_slli_epi32(_mm512_set1_epi32(qn), 4) : _mm512_set1_epi32(qn);
    __m512 p;
    int g;
    for (g = 0; g < 8; g++) a = qmx__bp4_dp_vnni(a, w[g], xb + 4 * g);
    p = _mm512_mul_ps(_mm512_cvtepi32_ps(a), sw);
    return _mm512_add_ps(y, _mm512_mul_ps(p, _mm512_set1_ps(sx)));
}
/* R (8 or 4) rows (x + r kp; -8 qsum at qn + r nb) against one panel: y[16 r + j]; pf
 * (or NULL): another panel whose block bk is prefetched (into L2) with block bk of pp; gen:
 * see qmx__bp4_dec_vnni. */
QMX__NOFMA
QMX__K_AINLINE void qmx__bp4_tile_vnni(const qmx__bp *h, const uint8_t *pp, const int8_t *x,
                                      size_t kp, const int32_t *qn, const float *sxb,
                                      size_t nb, float *y, const uint8_t *pf, const int R,
                                      const int gen) {
    QMX__PRAGMA_NOFMA
    __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0, y4 = y0, y5 = y0, y6 = y0,
           y7 = y0;
    unsigned bad = 0;
    size_t bk;
    for (bk = 0; bk < nb; bk++) {
        const uint8_t *blk = pp + bk * h->S;
        const int8_t *xb = x + 32u * bk;
        const float *sx = sxb + bk;
        const int32_t *qb = qn + bk;
        __m512i w[8];
        __m512 sw = qmx__bp_sw_vnni(h, blk);
        if (pf) {
            const char *f = (const char *)(pf + bk * h->S);
            size_t o;
            for (o = 0; o < h->S; o += 64u) _mm_prefetch(f + o, _MM_HINT_T1);
        }
        qmx__bp4_dec_vnni(h, blk, w, &bad, gen);
        y0 = qmx__bp4_row_vnni(y0, w, sw, xb, qb[0], sx[0], gen);
        y1 = qmx__bp4_row_vnni(y1, w, sw, xb + kp, qb[nb], sx[nb], gen);
        y2 = qmx__bp4_row_vnni(y2, w, sw, xb + 2u * kp, qb[2u * nb], sx[2u * nb], gen);
        y3 = qmx__bp4_row_vnni(y3, w, sw, xb + 3u * kp, qb[3u * nb], sx[3u * nb], gen);
        if (R == 8) {
            y4 = qmx__bp4_row_vnni(y4, w, sw, xb + 4u * kp, qb[4u * nb], sx[4u * nb], gen);
            y5 = qmx__bp4_row_vnni(y5, w, sw, xb + 5u * kp, qb[5u * nb], sx[5u * nb], gen);
            y6 = qmx__bp4_row_vnni(y6, w, sw, xb + 6u * kp, qb[6u * nb], sx[6u * nb], gen);
            y7 = qmx__bp4_row_vnni(y7, w, sw, xb + 7u * kp, qb[7u * nb], sx[7u * nb], gen);
        }
    }
    if (bad) {
        qmx__bp4_tile_c(h, pp, x, kp, sxb, nb, (size_t)R, y);
        return;
    }
    _mm512_storeu_ps(y, y0);
    _mm512_storeu_ps(y + 16, y1);
    _mm512_storeu_ps(y + 32, y2);
    _mm512_storeu_ps(y + 48, y3);
    if (R == 8) {
        _mm512_storeu_ps(y + 64, y4);
        _mm512_storeu_ps(y + 80, y5);
        _mm512_storeu_ps(y + 96, y6);
        _mm512_storeu_ps(y + 112, y7);
    }
}
/* R = 8 or 4 rows; each (R, all zero points 8 or not) pair an instance of its own (the tile
 * body needs them as constants) */
QMX__NOFMA
static void qmx__bp4_tiles_vnni(const qmx__bp *h, const uint8_t *pp, const int8_t *x,
                                size_t kp, const int32_t *qn, const float *sxb, size_t nb,
                                float *y, const uint8_t *pf, size_t R) {
    QMX__PRAGMA_NOFMA
    int any_z = !qmx__bp4_all8(h, pp, nb);
    if (R == 8u && any_z) qmx__bp4_tile_vnni(h, pp, x, kp, qn, sxb, nb, y, pf, 8, 1);
    else if (R == 8u) qmx__bp4_tile_vnni(h, pp, x, kp, qn, sxb, nb, y, pf, 8, 0);
    else if (any_z) qmx__bp4_tile_vnni(h, pp, x, kp, qn, sxb, nb, y, pf, 4, 1);
    else qmx__bp4_tile_vnni(h, pp, x, kp, qn, sxb, nb, y, pf, 4, 0);
}

/* ---- NVFP4 (element 5, blocks of 16) on AVX-512 VNNI ---- */
/* The 16 block scales as qmx__bp_getscale decodes them: E4M3 (normal codes as float bits
 * (mag << 20) + (120 << 23), subnormal mag 2^-9, 0x7F NaN, then the sign) times ts where not
 * NaN; ggml (sk 6): (mag << 20) + (119 << 23), e = 0: m 2^-10, codes 0x00 / 0x7F: +0. */
QMX__K_AINLINE __m512 qmx__bp16_sw_vnni(const qmx__bp *h, const uint8_t *blk) {
    const __m512i c = _mm512_maskz_cvtepu8_epi32(
        (__mmask16)0xFFFFu, _mm_loadu_si128((const __m128i *)(const void *)(blk + h->cb)));
    const __m512i mag = _mm512_and_si512(c, _mm512_set1_epi32(0x7F));
    const __mmask16 sub = _mm512_cmplt_epu32_mask(mag, _mm512_set1_epi32(8));
    __m512 d;
    if (h->sk == 6) {
        d = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(mag, 20),
                                                 _mm512_set1_epi32(119 << 23)));
        d = _mm512_mask_mul_ps(d, sub, _mm512_cvtepi32_ps(mag), _mm512_set1_ps(0.0009765625f));
        return _mm512_mask_mov_ps(d, _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(0x7F)),
                                  _mm512_setzero_ps());
    }
    d = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(mag, 20),
                                             _mm512_set1_epi32(120 << 23)));
    d = _mm512_mask_mul_ps(d, sub, _mm512_cvtepi32_ps(mag), _mm512_set1_ps(0.001953125f));
    d = _mm512_mask_mov_ps(d, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7F)),
                           _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
    d = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(d),
        _mm512_and_si512(_mm512_slli_epi32(c, 24), _mm512_set1_epi32((int32_t)0x80000000u))));
    if (h->ts != 0.0f)
        d = _mm512_mask_mul_ps(d, _mm512_cmp_ps_mask(d, d, _CMP_ORD_Q), _mm512_set1_ps(h->ts), d);
    return d;
}
/* The 4 code vectors of a block (16 rows x 4 k each, k = 0-3, 4-7 from the low nibbles of the
 * two 64-byte groups, 8-11, 12-15 from the high), as u = 12 + 2 x value by vpshufb. */
QMX__K_AINLINE void qmx__bp16_codes_vnni(const uint8_t *blk, __m512i w[4]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i lut = _mm512_broadcast_i32x4(
        _mm_loadu_si128((const __m128i *)(const void *)qmx__bp_e2m1u));
    const __m512i v0 = _mm512_loadu_si512((const void *)blk);
    const __m512i v1 = _mm512_loadu_si512((const void *)(blk + 64));
    w[0] = _mm512_shuffle_epi8(lut, _mm512_and_si512(v0, m4));
    w[1] = _mm512_shuffle_epi8(lut, _mm512_and_si512(v1, m4));
    w[2] = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(v0, 4), m4));
    w[3] = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(v1, 4), m4));
}
/* One row of X (its 16 bytes of the block at xb): ((float)(sum q u - 12 qsum) [* 0.5]) * sw
 * * sx on the 16 lanes. */
QMX__NOFMA
QMX__K_AINLINE __m512 qmx__bp16_row_vnni(const qmx__bp *h, const __m512i w[4], __m512 sw,
                                        const uint8_t *xb, int32_t qsum, float sx) {
    QMX__PRAGMA_NOFMA
    __m512i a0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[0],
                                     _mm512_set1_epi32((int)qmx__k_ld32le(xb)));
    __m512i a1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[1],
                                     _mm512_set1_epi32((int)qmx__k_ld32le(xb + 4)));
    __m512 p;
    a0 = _mm512_dpbusd_epi32(a0, w[2], _mm512_set1_epi32((int)qmx__k_ld32le(xb + 8)));
    a1 = _mm512_dpbusd_epi32(a1, w[3], _mm512_set1_epi32((int)qmx__k_ld32le(xb + 12)));
    a0 = _mm512_sub_epi32(_mm512_add_epi32(a0, a1), _mm512_set1_epi32(12 * qsum));
    p = _mm512_cvtepi32_ps(a0);
    if (h->unit) p = _mm512_mul_ps(p, _mm512_set1_ps(0.5f));   /* RN(I 2^-1): exact */
    p = _mm512_mul_ps(p, sw);
    return _mm512_mul_ps(p, _mm512_set1_ps(sx));
}
QMX__NOFMA
QMX__K_AINLINE __m512 qmx__bp16_blk_vnni(const qmx__bp *h, const uint8_t *blk, const uint8_t *xb,
                                        int32_t qsum, float sx) {
    __m512i w[4];
    qmx__bp16_codes_vnni(blk, w);
    return qmx__bp16_row_vnni(h, w, qmx__bp16_sw_vnni(h, blk), xb, qsum, sx);
}
/* Four rows of X (q + r kp, qs16 + r qst, sxb + r sst) against one panel: y[16 r + j]. */
QMX__NOFMA
static void qmx__bp16_tile4_vnni(const qmx__bp *h, const uint8_t *pp, const int8_t *q, size_t kp,
                                 const int16_t *qs16, size_t qst, const float *sxb, size_t sst,
                                 float *y) {
    QMX__PRAGMA_NOFMA
    __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
    const uint8_t *x = (const uint8_t *)q;
    size_t bk;
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *blk = pp + bk * h->S, *xb = x + 16u * bk;
        const float *s = sxb + bk / 2u;
        __m512i w[4];
        __m512 sw = qmx__bp16_sw_vnni(h, blk);
        qmx__bp16_codes_vnni(blk, w);
        y0 = _mm512_add_ps(y0, qmx__bp16_row_vnni(h, w, sw, xb, qs16[bk], s[0]));
        y1 = _mm512_add_ps(y1, qmx__bp16_row_vnni(h, w, sw, xb + kp, qs16[qst + bk], s[sst]));
        y2 = _mm512_add_ps(y2, qmx__bp16_row_vnni(h, w, sw, xb + 2u * kp, qs16[2u * qst + bk],
                                                  s[2u * sst]));
        y3 = _mm512_add_ps(y3, qmx__bp16_row_vnni(h, w, sw, xb + 3u * kp, qs16[3u * qst + bk],
                                                  s[3u * sst]));
    }
    _mm512_storeu_ps(y, y0);
    _mm512_storeu_ps(y + 16, y1);
    _mm512_storeu_ps(y + 32, y2);
    _mm512_storeu_ps(y + 48, y3);
}
/* One row of X against np (1 .. 4) consecutive panels (np weight streams): y[16 t + j]. */
QMX__NOFMA
static void qmx__bp16_panel_vnni(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                                 const int16_t *qs16, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, ps = h->nb * h->S;
    __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
    if (np == 4) {
        for (bk = 0; bk < h->nb; bk++) {
            const uint8_t *blk = pp + bk * h->S, *xb = (const uint8_t *)(q + 16u * bk);
            int32_t qsum = qs16[bk];
            float sx = sxb[bk / 2u];
            y0 = _mm512_add_ps(y0, qmx__bp16_blk_vnni(h, blk, xb, qsum, sx));
            y1 = _mm512_add_ps(y1, qmx__bp16_blk_vnni(h, blk + ps, xb, qsum, sx));
            y2 = _mm512_add_ps(y2, qmx__bp16_blk_vnni(h, blk + 2u * ps, xb, qsum, sx));
            y3 = _mm512_add_ps(y3, qmx__bp16_blk_vnni(h, blk + 3u * ps, xb, qsum, sx));
        }
        _mm512_storeu_ps(y, y0);
        _mm512_storeu_ps(y + 16, y1);
        _mm512_storeu_ps(y + 32, y2);
        _mm512_storeu_ps(y + 48, y3);
        return;
    }
    for (t = 0; t < np; t++) {
        for (bk = 0; bk < h->nb; bk++)
            y0 = _mm512_add_ps(y0, qmx__bp16_blk_vnni(h, pp + t * ps + bk * h->S,
                                                      (const uint8_t *)(q + 16u * bk), qs16[bk],
                                                      sxb[bk / 2u]));
        _mm512_storeu_ps(y + 16u * t, y0);
        y0 = _mm512_setzero_ps();
    }
}

#if defined(__AVX512VBMI__)
#  define QMX__BP8_VNNI 1
/* ---- MXFP8 E4M3 (element 6) on AVX-512 VNNI + VBMI ---- */
/* The E4M3 integer e (units 2^-9) of magnitude code c is W[c] 32^a, a = (c >= 48) + (c >= 88),
 * W[c] <= 240 (0 for the NaN code 0x7F): three unsigned byte operands per sign. */
static const uint8_t qmx__bp8_w[128] = {
      0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,  15,
     16,  18,  20,  22,  24,  26,  28,  30,  32,  36,  40,  44,  48,  52,  56,  60,
     64,  72,  80,  88,  96, 104, 112, 120, 128, 144, 160, 176, 192, 208, 224, 240,
      8,   9,  10,  11,  12,  13,  14,  15,  16,  18,  20,  22,  24,  26,  28,  30,
     32,  36,  40,  44,  48,  52,  56,  60,  64,  72,  80,  88,  96, 104, 112, 120,
    128, 144, 160, 176, 192, 208, 224, 240,   8,   9,  10,  11,  12,  13,  14,  15,
     16,  18,  20,  22,  24,  26,  28,  30,  32,  36,  40,  44,  48,  52,  56,  60,
     64,  72,  80,  88,  96, 104, 112, 120, 128, 144, 160, 176, 192, 208, 224,   0};
/* One row of X (its 32 bytes at xb) against one E4M3 block on 16 lanes: per group of 4 k,
 * W by vpermi2b, split by a and by the code's sign into 6 unsigned operands, vpdpbusd with q
 * (positive codes) and -q (negative), I = A0 + 32 (A1 + 32 A2), exact (|I| <= 32 x 127 x
 * 229376 < 2^30); p = (float)I x 2^-9 = RN_f32(I 2^-9) (vcvtdq2ps rounds to nearest even, the
 * power of two is exact: |I| >= 1 or I = +0); NaN on a row whose block holds a 0x7F / 0xFF
 * code (qmx__bwd_nonfinite: E4M3 has no Inf); then p * sw, p * sx. */
QMX__NOFMA
QMX__K_AINLINE __m512 qmx__bp8_blk_vnni(const qmx__bp *h, const uint8_t *blk, const uint8_t *xb,
                                       float sx) {
    QMX__PRAGMA_NOFMA
    const __m512i t0 = _mm512_loadu_si512((const void *)qmx__bp8_w);
    const __m512i t1 = _mm512_loadu_si512((const void *)(qmx__bp8_w + 64));
    const __m512i m7 = _mm512_set1_epi8(0x7F), zero = _mm512_setzero_si512();
    __m512i a0 = zero, a1 = zero, a2 = zero, nb;
    __mmask64 nan = 0;
    __mmask16 nanl;
    __m512 p;
    int g;
    for (g = 0; g < 8; g++) {
        const __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
        const __m512i mag = _mm512_and_si512(v, m7);
        const __m512i w = _mm512_permutex2var_epi8(t0, mag, t1);
        const __mmask64 neg = _mm512_movepi8_mask(v);
        const __mmask64 h1 = _mm512_cmpge_epu8_mask(mag, _mm512_set1_epi8(48));
        const __mmask64 h2 = _mm512_cmpge_epu8_mask(mag, _mm512_set1_epi8(88));
        const __mmask64 s0 = ~h1, s1 = h1 & ~h2;
        const __m512i qp = _mm512_set1_epi32((int)qmx__k_ld32le(xb + 4 * g));
        const __m512i qn = _mm512_sub_epi8(zero, qp);
        a0 = _mm512_dpbusd_epi32(a0, _mm512_maskz_mov_epi8(s0 & ~neg, w), qp);
        a0 = _mm512_dpbusd_epi32(a0, _mm512_maskz_mov_epi8(s0 & neg, w), qn);
        a1 = _mm512_dpbusd_epi32(a1, _mm512_maskz_mov_epi8(s1 & ~neg, w), qp);
        a1 = _mm512_dpbusd_epi32(a1, _mm512_maskz_mov_epi8(s1 & neg, w), qn);
        a2 = _mm512_dpbusd_epi32(a2, _mm512_maskz_mov_epi8(h2 & ~neg, w), qp);
        a2 = _mm512_dpbusd_epi32(a2, _mm512_maskz_mov_epi8(h2 & neg, w), qn);
        nan |= _mm512_cmpeq_epi8_mask(mag, m7);
    }
    a0 = _mm512_add_epi32(a0, _mm512_slli_epi32(_mm512_add_epi32(a1, _mm512_slli_epi32(a2, 5)), 5));
    p = _mm512_mul_ps(_mm512_cvtepi32_ps(a0), _mm512_set1_ps(0.001953125f));
    nb = _mm512_movm_epi8(nan);
    nanl = _mm512_test_epi32_mask(nb, nb);
    p = _mm512_mask_mov_ps(p, nanl, _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
    p = _mm512_mul_ps(p, qmx__bp_sw_vnni(h, blk));
    return _mm512_mul_ps(p, _mm512_set1_ps(sx));
}
/* One row of X against np (1 .. 4) consecutive E4M3 panels: y[16 t + j], blocks increasing. */
QMX__NOFMA
static void qmx__bp8_panel_vnni(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                                const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, ps = h->nb * h->S;
    for (t = 0; t < np; t++) {
        __m512 y0 = _mm512_setzero_ps();
        for (bk = 0; bk < h->nb; bk++)
            y0 = _mm512_add_ps(y0, qmx__bp8_blk_vnni(h, pp + t * ps + bk * h->S,
                                                     (const uint8_t *)(q + 32u * bk), sxb[bk]));
        _mm512_storeu_ps(y + 16u * t, y0);
    }
}
#endif
/* ---- ggml Q4_1 (element 8) on AVX-512 VNNI ---- */
/* One row of X against np (1 .. 4) consecutive Q4_1 panels: per block the codes split as
 * uint4 (qmx__bp_codes_vnni), I by 8 vpdpbusd, d and m by vcvtph2ps (exact), then the
 * documented order: p = ((float)I * d) * sx, y = y + p, t = ((float)qsum * sx) * m, y = y + t. */
QMX__NOFMA
static void qmx__bp41_panel_vnni(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                                 const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, ps = h->nb * h->S;
    __m512 acc[4];
    for (t = 0; t < np; t++) acc[t] = _mm512_setzero_ps();
    for (bk = 0; bk < h->nb; bk++)   /* the np panels' blocks in turn: np weight streams */
        for (t = 0; t < np; t++) {
            const uint8_t *blk = pp + t * ps + bk * h->S, *xb = (const uint8_t *)(q + 32u * bk);
            const __m512 sx = _mm512_set1_ps(sxb[bk]);
            __m512i w[8], a0 = _mm512_setzero_si512(), a1 = a0;
            __m512 p, tm, y0 = acc[t];
            int g;
            qmx__bp_codes_vnni(h, blk, w);
            for (g = 0; g < 8; g += 2) {
                a0 = _mm512_dpbusd_epi32(a0, w[g], _mm512_set1_epi32((int)qmx__k_ld32le(xb + 4 * g)));
                a1 = _mm512_dpbusd_epi32(a1, w[g + 1],
                                         _mm512_set1_epi32((int)qmx__k_ld32le(xb + 4 * g + 4)));
            }
            p = _mm512_cvtepi32_ps(_mm512_add_epi32(a0, a1));
            p = _mm512_mul_ps(p, _mm512_maskz_cvtph_ps((__mmask16)0xFFFFu, _mm256_loadu_si256(
                                     (const __m256i *)(const void *)(blk + h->cb))));
            p = _mm512_mul_ps(p, sx);
            y0 = _mm512_add_ps(y0, p);
            tm = _mm512_mul_ps(_mm512_set1_ps((float)qs[bk]), sx);
            tm = _mm512_mul_ps(tm, _mm512_maskz_cvtph_ps((__mmask16)0xFFFFu, _mm256_loadu_si256(
                                       (const __m256i *)(const void *)(blk + h->cb + 32u))));
            acc[t] = _mm512_add_ps(y0, tm);
        }
    for (t = 0; t < np; t++) _mm512_storeu_ps(y + 16u * t, acc[t]);
}
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#endif

#if defined(QMX__K_AVX2)
/* The 8 E8M0 scales (sk 2, 3, 4) of rows 8 hf .. 8 hf + 7 as qmx__bp_getscale decodes them. */
static inline __m256 qmx__bp_e8m0_avx2(const qmx__bp *h, const uint8_t *blk, size_t hf) {
    const __m256i cc = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64((const __m128i *)(const void *)(blk + h->cb + 8u * hf)));
    __m256i b;
    if (h->sk == 3) {
        b = _mm256_slli_epi32(cc, 23);
    } else if (h->sk == 2) {
        b = _mm256_slli_epi32(cc, 23);
        b = _mm256_blendv_epi8(b, _mm256_set1_epi32(0x00400000),
                               _mm256_cmpeq_epi32(cc, _mm256_setzero_si256()));
        b = _mm256_blendv_epi8(b, _mm256_set1_epi32(0x7FC00000),
                               _mm256_cmpeq_epi32(cc, _mm256_set1_epi32(255)));
    } else {
        b = _mm256_slli_epi32(_mm256_sub_epi32(cc, _mm256_set1_epi32(1)), 23);
        b = _mm256_blendv_epi8(b, _mm256_set1_epi32(0x00200000),
                               _mm256_cmpeq_epi32(cc, _mm256_setzero_si256()));
        b = _mm256_blendv_epi8(b, _mm256_set1_epi32(0x00400000),
                               _mm256_cmpeq_epi32(cc, _mm256_set1_epi32(1)));
    }
    return _mm256_castsi256_ps(b);
}
/* One block, rows 8 hf .. 8 hf + 7 of a panel on 8 lanes: the same value as qmx__bp_blk_vnni.
 * int8: w = u ^ 0x80 (the signed code), vpmaddubsw(|w|, sign(q, w)) (pairs <= 2 * 128 * 127,
 * no saturation), I = sum q w - (z - 128) qsum; 4-bit: vpmaddubsw(u, q) (pairs <= 2 * 15 *
 * 127; the 8 groups' int16 sums <= 30480, no saturation), I = sum q u - z qsum. */
QMX__NOFMA
static inline __m256 qmx__bp_blk_avx2(const qmx__bp *h, const uint8_t *blk, size_t hf,
                                      const uint8_t *xb, int32_t qsum, float sx) {
    QMX__PRAGMA_NOFMA
    const __m256i ones = _mm256_set1_epi16(1);
    const uint8_t *c = blk + 32u * hf;
    __m256i acc, z;
    __m256 p, sw;
    size_t g;
    if (h->elem == 1) {
        const __m256i x80 = _mm256_set1_epi8((char)0x80);
        acc = _mm256_setzero_si256();
        for (g = 0; g < 8u; g++) {
            __m256i w = _mm256_xor_si256(
                _mm256_loadu_si256((const __m256i *)(const void *)(c + 64u * g)), x80);
            __m256i x = _mm256_set1_epi32((int)qmx__k_ld32le(xb + 4u * g));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
                _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w)), ones));
        }
        z = h->zp ? _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64(
                        (const __m128i *)(const void *)(blk + h->cb + 16u * h->sb + 8u * hf))),
                                     _mm256_set1_epi32(128))
                  : _mm256_setzero_si256();
    } else {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        const __m256i lut = _mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)(const void *)qmx__bp_e2m1u));
        __m256i s16 = _mm256_setzero_si256();
        acc = _mm256_setzero_si256();
        for (g = 0; g < 4u; g++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(c + 64u * g));
            __m256i lo = _mm256_and_si256(v, m4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
            if (h->elem == 4) {   /* E2M1: u = 12 + 2 x value <= 24, pairs <= 6096 */
                lo = _mm256_shuffle_epi8(lut, lo);
                hi = _mm256_shuffle_epi8(lut, hi);
            }
            s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(
                lo, _mm256_set1_epi32((int)qmx__k_ld32le(xb + 4u * g))));
            s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(
                hi, _mm256_set1_epi32((int)qmx__k_ld32le(xb + 16u + 4u * g))));
            if (h->elem == 4) {   /* two groups' int16 sums <= 12192; then to int32 */
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(s16, ones));
                s16 = _mm256_setzero_si256();
            }
        }
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(s16, ones));
        z = h->zp ? _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                        (const __m128i *)(const void *)(blk + h->cb + 16u * h->sb + 8u * hf)))
                  : _mm256_set1_epi32((int32_t)h->off);
    }
    acc = _mm256_sub_epi32(acc, _mm256_mullo_epi32(z, _mm256_set1_epi32(qsum)));
    if (h->sk >= 2) {   /* E8M0 codes, decoded as qmx__bp_getscale */
        sw = qmx__bp_e8m0_avx2(h, blk, hf);
    } else if (h->f16) {
#if defined(__F16C__)
        sw = _mm256_cvtph_ps(
            _mm_loadu_si128((const __m128i *)(const void *)(blk + h->cb + 16u * hf)));
#else
        float t[8];
        for (g = 0; g < 8u; g++) t[g] = qmx__bp_getscale(h, blk, 8u * hf + g);
        sw = _mm256_loadu_ps(t);
#endif
    } else {
        sw = _mm256_loadu_ps((const float *)(const void *)(blk + h->cb + 32u * hf));
    }
    p = _mm256_cvtepi32_ps(acc);
    if (h->unit) p = _mm256_mul_ps(p, _mm256_set1_ps(0.5f));   /* RN(I 2^-1): exact */
    p = _mm256_mul_ps(p, sw);
    return _mm256_mul_ps(p, _mm256_set1_ps(sx));
}

/* One row of X against np (1 or 2) consecutive panels: y[16 t + j] = lane j of panel t. */
QMX__NOFMA
static void qmx__bp_panel_avx2(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                               const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, ps = h->nb * h->S;
    __m256 y0 = _mm256_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
    if (np == 2) {
        for (bk = 0; bk < h->nb; bk++) {
            const uint8_t *blk = pp + bk * h->S, *xb = (const uint8_t *)(q + 32u * bk);
            y0 = _mm256_add_ps(y0, qmx__bp_blk_avx2(h, blk, 0, xb, qs[bk], sxb[bk]));
            y1 = _mm256_add_ps(y1, qmx__bp_blk_avx2(h, blk, 1, xb, qs[bk], sxb[bk]));
            y2 = _mm256_add_ps(y2, qmx__bp_blk_avx2(h, blk + ps, 0, xb, qs[bk], sxb[bk]));
            y3 = _mm256_add_ps(y3, qmx__bp_blk_avx2(h, blk + ps, 1, xb, qs[bk], sxb[bk]));
        }
        _mm256_storeu_ps(y, y0); _mm256_storeu_ps(y + 8, y1);
        _mm256_storeu_ps(y + 16, y2); _mm256_storeu_ps(y + 24, y3);
        return;
    }
    for (t = 0; t < np; t++) {
        y0 = _mm256_setzero_ps(); y1 = y0;
        for (bk = 0; bk < h->nb; bk++) {
            const uint8_t *blk = pp + t * ps + bk * h->S, *xb = (const uint8_t *)(q + 32u * bk);
            y0 = _mm256_add_ps(y0, qmx__bp_blk_avx2(h, blk, 0, xb, qs[bk], sxb[bk]));
            y1 = _mm256_add_ps(y1, qmx__bp_blk_avx2(h, blk, 1, xb, qs[bk], sxb[bk]));
        }
        _mm256_storeu_ps(y + 16u * t, y0); _mm256_storeu_ps(y + 16u * t + 8, y1);
    }
}

/* ---- NVFP4 (element 5), MXFP8 E4M3 (element 6), ggml Q4_1 (element 8) on AVX2 ---- */
/* The 8 NVFP4 block scales of rows 8 hf .. 8 hf + 7 as qmx__bp_getscale decodes them (as
 * qmx__bp16_sw_vnni): E4M3 normal codes as float bits (mag << 20) + (120 << 23), subnormal
 * mag x 2^-9 (exact), 0x7F NaN, the sign or-ed in, then ts x that where not NaN; ggml (sk 6):
 * (mag << 20) + (119 << 23), exponent 0: mag x 2^-10, code 0x7F: +0. */
QMX__NOFMA
static inline __m256 qmx__bp16_sw_avx2(const qmx__bp *h, const uint8_t *blk, size_t hf) {
    QMX__PRAGMA_NOFMA
    const __m256i c = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64((const __m128i *)(const void *)(blk + h->cb + 8u * hf)));
    const __m256i m7 = _mm256_set1_epi32(0x7F), mag = _mm256_and_si256(c, m7);
    const __m256 sub = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(8), mag));
    const __m256 fm = _mm256_cvtepi32_ps(mag);
    __m256 d;
    if (h->sk == 6) {
        d = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(mag, 20),
                                                 _mm256_set1_epi32(119 << 23)));
        d = _mm256_blendv_ps(d, _mm256_mul_ps(fm, _mm256_set1_ps(0.0009765625f)), sub);
        return _mm256_blendv_ps(d, _mm256_setzero_ps(),
                                _mm256_castsi256_ps(_mm256_cmpeq_epi32(c, m7)));
    }
    d = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(mag, 20),
                                             _mm256_set1_epi32(120 << 23)));
    d = _mm256_blendv_ps(d, _mm256_mul_ps(fm, _mm256_set1_ps(0.001953125f)), sub);
    d = _mm256_blendv_ps(d, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)),
                         _mm256_castsi256_ps(_mm256_cmpeq_epi32(mag, m7)));
    d = _mm256_castsi256_ps(_mm256_or_si256(
        _mm256_castps_si256(d),
        _mm256_and_si256(_mm256_slli_epi32(c, 24), _mm256_set1_epi32((int32_t)0x80000000u))));
    if (h->ts != 0.0f)
        d = _mm256_blendv_ps(d, _mm256_mul_ps(_mm256_set1_ps(h->ts), d),
                             _mm256_cmp_ps(d, d, _CMP_ORD_Q));
    return d;
}
/* NVFP4, one block of 16 k, rows 8 hf .. 8 hf + 7 (qmx__bp16_panel_c's value): u = 12 + 2 x
 * value <= 24 by vpshufb, vpmaddubsw(u, q) (pairs <= 2 x 24 x 127; the four groups' int16 sums
 * <= 24384: no saturation), vpmaddwd, I = sum q u - 12 qsum (exact), then p = (float)I,
 * [p * 0.5], p * sw, p * sx. Low nibbles k = 4 g + t, high k = 8 + 4 g + t. */
QMX__NOFMA
static inline __m256 qmx__bp16_blk_avx2(const qmx__bp *h, const uint8_t *blk, size_t hf,
                                        const uint8_t *xb, int32_t qsum, float sx) {
    QMX__PRAGMA_NOFMA
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i lut = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(const void *)qmx__bp_e2m1u));
    const __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)(blk + 32u * hf));
    const __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(blk + 64u + 32u * hf));
    __m256i s16, acc;
    __m256 p;
    s16 = _mm256_maddubs_epi16(_mm256_shuffle_epi8(lut, _mm256_and_si256(v0, m4)),
                               _mm256_set1_epi32((int)qmx__k_ld32le(xb)));
    s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(
        _mm256_shuffle_epi8(lut, _mm256_and_si256(v1, m4)),
        _mm256_set1_epi32((int)qmx__k_ld32le(xb + 4u))));
    s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(
        _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v0, 4), m4)),
        _mm256_set1_epi32((int)qmx__k_ld32le(xb + 8u))));
    s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(
        _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v1, 4), m4)),
        _mm256_set1_epi32((int)qmx__k_ld32le(xb + 12u))));
    acc = _mm256_sub_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)),
                           _mm256_set1_epi32(12 * qsum));
    p = _mm256_cvtepi32_ps(acc);   /* |I| <= 16 x 127 x 12: exact */
    if (h->unit) p = _mm256_mul_ps(p, _mm256_set1_ps(0.5f));   /* RN(I 2^-1): exact */
    p = _mm256_mul_ps(p, qmx__bp16_sw_avx2(h, blk, hf));
    return _mm256_mul_ps(p, _mm256_set1_ps(sx));
}
/* NVFP4: one row of X against np (1 or 2) consecutive panels (np weight streams), blocks
 * increasing: y[16 t + j]. */
QMX__NOFMA
static void qmx__bp16_panel_avx2(const qmx__bp *h, const uint8_t *pp, size_t np,
                                 const int8_t *q, const int16_t *qs16, const float *sxb,
                                 float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, ps = h->nb * h->S;
    __m256 a[4];
    for (t = 0; t < 4u; t++) a[t] = _mm256_setzero_ps();
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *xb = (const uint8_t *)(q + 16u * bk);
        for (t = 0; t < np; t++) {
            const uint8_t *blk = pp + t * ps + bk * h->S;
            a[2u * t] = _mm256_add_ps(a[2u * t], qmx__bp16_blk_avx2(h, blk, 0, xb, qs16[bk],
                                                                    sxb[bk / 2u]));
            a[2u * t + 1u] = _mm256_add_ps(a[2u * t + 1u],
                                           qmx__bp16_blk_avx2(h, blk, 1, xb, qs16[bk],
                                                              sxb[bk / 2u]));
        }
    }
    for (t = 0; t < np; t++) {
        _mm256_storeu_ps(y + 16u * t, a[2u * t]);
        _mm256_storeu_ps(y + 16u * t + 8u, a[2u * t + 1u]);
    }
}

/* ggml Q4_1: the 8 binary16 minima m of rows 8 hf .. 8 hf + 7 (exact). */
static inline __m256 qmx__bp41_m_avx2(const qmx__bp *h, const uint8_t *blk, size_t hf) {
#if defined(__F16C__)
    return _mm256_cvtph_ps(
        _mm_loadu_si128((const __m128i *)(const void *)(blk + h->cb + 32u + 16u * hf)));
#else
    float t[8];
    size_t j;
    for (j = 0; j < 8u; j++) t[j] = qmx__bp_getmin(h, blk, 8u * hf + j);
    return _mm256_loadu_ps(t);
#endif
}
/* ggml Q4_1: one row of X against np (1 or 2) consecutive panels, qmx__bp41_panel_c's value:
 * per block p = ((float)I * d) * sx by qmx__bp_blk_avx2 (uint4 codes, z = 0, d its binary16
 * scale: vpmaddubsw(u, q), the 8 groups' int16 sums <= 30480), y = y + p, then t = (float)qsum
 * * sx (once per block, scalar), t * m, y = y + t. */
QMX__NOFMA
static void qmx__bp41_panel_avx2(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                                 const int32_t *qs, const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, hf, ps = h->nb * h->S;
    __m256 a[4];
    for (t = 0; t < 4u; t++) a[t] = _mm256_setzero_ps();
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *xb = (const uint8_t *)(q + 32u * bk);
        float tm = (float)qs[bk];
        __m256 tv;
        tm = tm * sxb[bk];
        QMX__OPAQUE(tm);
        tv = _mm256_set1_ps(tm);
        for (t = 0; t < np; t++) {
            const uint8_t *blk = pp + t * ps + bk * h->S;
            for (hf = 0; hf < 2u; hf++) {
                __m256 v = _mm256_add_ps(a[2u * t + hf],
                                         qmx__bp_blk_avx2(h, blk, hf, xb, qs[bk], sxb[bk]));
                a[2u * t + hf] = _mm256_add_ps(v, _mm256_mul_ps(tv, qmx__bp41_m_avx2(h, blk, hf)));
            }
        }
    }
    for (t = 0; t < np; t++) {
        _mm256_storeu_ps(y + 16u * t, a[2u * t]);
        _mm256_storeu_ps(y + 16u * t + 8u, a[2u * t + 1u]);
    }
}

/* MXFP8 E4M3 (element 6): the integer e (units 2^-9) of magnitude code c (exponent field x,
 * mantissa f) is m 2^s, m = 8 | f, s = x - 1 (x = 0: m = f, s = 0), s <= 14, written as
 * w 16^a, w = m << (s & 3) <= 120, a = s >> 2 (as qmx__bp8_panel_neon). By x: bit 7 of
 * qmx__bp8_sh = s & 1, bit 6 = s & 2 (w by doublings and byte blends); qmx__bp8_a = a;
 * qmx__bp8_m8 = 8 for x > 0. */
static const uint8_t qmx__bp8_sh[16] = {0x00, 0x00, 0x80, 0x40, 0xC0, 0x00, 0x80, 0x40,
                                        0xC0, 0x00, 0x80, 0x40, 0xC0, 0x00, 0x80, 0x40};
static const uint8_t qmx__bp8_a[16] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3};
static const uint8_t qmx__bp8_m8[16] = {0, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
/* MXFP8 E4M3, one block of 32 k, rows 8 hf .. 8 hf + 7 (qmx__bp8_panel_c's value): per group
 * of 4 k, w (unsigned, <= 120) and q with the code's sign (vpsignb; |q| <= 127), per a one
 * vpmaddubsw of the w with that a (pairs <= 2 x 120 x 127 = 30480: no saturation) and one
 * vpmaddwd by 16^a (<= 2 x 30480 x 4096 < 2^31) into one int32 sum: every partial sum a sum
 * of some of the exact products q e, so |.| <= 32 x 127 x 229376 < 2^30, I exact; p =
 * (float)I x 2^-9 = RN_f32(I 2^-9), NaN on a row whose block holds a 0x7F / 0xFF code, then
 * p * sw (E8M0), p * sx. */
QMX__NOFMA
static inline __m256 qmx__bp8_blk_avx2(const qmx__bp *h, const uint8_t *blk, size_t hf,
                                       const uint8_t *xb, float sx) {
    QMX__PRAGMA_NOFMA
    const __m256i tsh = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(const void *)qmx__bp8_sh));
    const __m256i ta = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(const void *)qmx__bp8_a));
    const __m256i tm8 = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(const void *)qmx__bp8_m8));
    const __m256i m7 = _mm256_set1_epi8(0x7F), m4 = _mm256_set1_epi8(0x0F);
    const __m256i c7 = _mm256_set1_epi8(7), zero = _mm256_setzero_si256();
    __m256i acc = zero, nan = zero;
    __m256 p;
    size_t g;
    for (g = 0; g < 8u; g++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(blk + 64u * g +
                                                                              32u * hf));
        const __m256i x = _mm256_and_si256(_mm256_srli_epi16(v, 3), m4);
        const __m256i sh = _mm256_shuffle_epi8(tsh, x), a = _mm256_shuffle_epi8(ta, x);
        const __m256i qg = _mm256_sign_epi8(_mm256_set1_epi32((int)qmx__k_ld32le(xb + 4u * g)), v);
        __m256i w = _mm256_or_si256(_mm256_and_si256(v, c7), _mm256_shuffle_epi8(tm8, x)), w4;
        w = _mm256_blendv_epi8(w, _mm256_add_epi8(w, w), sh);            /* << (s & 1) */
        w4 = _mm256_add_epi8(w, w);
        w4 = _mm256_add_epi8(w4, w4);
        w = _mm256_blendv_epi8(w, w4, _mm256_add_epi8(sh, sh));          /* << (s & 2) */
        nan = _mm256_or_si256(nan, _mm256_cmpeq_epi8(_mm256_and_si256(v, m7), m7));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
            _mm256_maddubs_epi16(_mm256_and_si256(w, _mm256_cmpeq_epi8(a, zero)), qg),
            _mm256_set1_epi16(1)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
            _mm256_maddubs_epi16(_mm256_and_si256(w, _mm256_cmpeq_epi8(a, _mm256_set1_epi8(1))),
                                 qg),
            _mm256_set1_epi16(16)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
            _mm256_maddubs_epi16(_mm256_and_si256(w, _mm256_cmpeq_epi8(a, _mm256_set1_epi8(2))),
                                 qg),
            _mm256_set1_epi16(256)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
            _mm256_maddubs_epi16(_mm256_and_si256(w, _mm256_cmpeq_epi8(a, _mm256_set1_epi8(3))),
                                 qg),
            _mm256_set1_epi16(4096)));
    }
    p = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(0.001953125f));
    p = _mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)), p,
                         _mm256_castsi256_ps(_mm256_cmpeq_epi32(nan, zero)));
    p = _mm256_mul_ps(p, qmx__bp_e8m0_avx2(h, blk, hf));
    return _mm256_mul_ps(p, _mm256_set1_ps(sx));
}
/* MXFP8 E4M3: one row of X against np (1 or 2) consecutive panels, blocks increasing:
 * y[16 t + j]. */
QMX__NOFMA
static void qmx__bp8_panel_avx2(const qmx__bp *h, const uint8_t *pp, size_t np, const int8_t *q,
                                const float *sxb, float *y) {
    QMX__PRAGMA_NOFMA
    size_t bk, t, ps = h->nb * h->S;
    __m256 a[4];
    for (t = 0; t < 4u; t++) a[t] = _mm256_setzero_ps();
    for (bk = 0; bk < h->nb; bk++) {
        const uint8_t *xb = (const uint8_t *)(q + 32u * bk);
        for (t = 0; t < np; t++) {
            const uint8_t *blk = pp + t * ps + bk * h->S;
            a[2u * t] = _mm256_add_ps(a[2u * t], qmx__bp8_blk_avx2(h, blk, 0, xb, sxb[bk]));
            a[2u * t + 1u] = _mm256_add_ps(a[2u * t + 1u],
                                           qmx__bp8_blk_avx2(h, blk, 1, xb, sxb[bk]));
        }
    }
    for (t = 0; t < np; t++) {
        _mm256_storeu_ps(y + 16u * t, a[2u * t]);
        _mm256_storeu_ps(y + 16u * t + 8u, a[2u * t + 1u]);
    }
}
#endif

/* qmx_matmul_blockw_packed_dyn_i8 on the rectangle of M rows x columns [n_off, n_off + N) of
 * an n_blob-row blob (USING SEVERAL CORES: n_off a multiple of 16, Y / X at the rectangle);
 * mode QMX__PAR_CHECK: arguments only, QMX__PAR_CHECK_DATA: and every row's scales. */
static qmx_status qmx__bp_dyn(size_t M, size_t N, size_t K, const float *X, size_t ldx,
                              const void *blob, size_t blob_bytes,
                              const qmx_blockw_dyn_opts *opts, float *Y, size_t ldy,
                              void *workspace, size_t workspace_bytes, size_t n_off,
                              size_t n_blob, int mode) {
    qmx__bp h;
    qmx_qconfig cfg;
    size_t need, off, ext, ab, nab, mb, m, m0, j, p, kp, nb32 = K / 32u + (K % 32u != 0);
    size_t p1 = (n_off + N + 15u) / 16u;   /* panels [n_off / 16, p1) */
    float *sxb;
    int32_t *qs;
    int8_t *q;
    qmx_status st;
    if (!X || !blob || !Y || !workspace) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (ldx < K || ldy < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, ldx)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldy);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    st = qmx__bp_parse(blob, blob_bytes, &h);
    if (st != QMX_OK) return st;
    if (h.N != n_blob || h.K != K || n_off % 16u || n_off > n_blob || N > n_blob - n_off)
        return QMX_ERR_SHAPE;
    st = qmx__bp_ab(K, opts, &ab, &nab);
    if (st != QMX_OK) return st;
    if (mode == QMX__PAR_CHECK) return QMX_OK;
    qmx__k_dyn_cfg(&cfg);
    for (m = 0; mode == QMX__PAR_CHECK_DATA && m < M; m++) /* pass 1 below, kept nowhere */
        for (j = 0; j < nab; j++) {
            size_t k0 = j * ab, len = K - k0 < ab ? K - k0 : ab;
            float s;
            st = qmx_compute_qparams(&cfg, X + m * ldx + k0, len, &s, 1, NULL);
            if (st != QMX_OK) return st;
            if (!qmx__k_scale_ok(s)) return QMX_ERR_ARG;
        }
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, opts, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx__k_dyn_cfg(&cfg);   /* qmx_matmul_blockw_dyn_i8's activation quantization */
    for (m = 0; m < M; m++)   /* pass 1: every scale before anything is written */
        for (j = 0; j < nab; j++) {
            size_t k0 = j * ab, len = K - k0 < ab ? K - k0 : ab;
            float s;
            st = qmx_compute_qparams(&cfg, X + m * ldx + k0, len, &s, 1, NULL);
            if (st != QMX_OK) return st;
            if (!qmx__k_scale_ok(s)) return QMX_ERR_ARG;
        }
    mb = M < QMX__BP_MB ? M : QMX__BP_MB;
    /* sxb and qs per row: nb32 entries (NVFP4: qs as 2 nb32 int16 sums per block of 16) */
    kp = 32u * nb32;
    off = (size_t)((64u - ((uintptr_t)workspace & 63u)) & 63u);
    sxb = (float *)(void *)((unsigned char *)workspace + off);
    off += qmx__k_r64(4u * mb * nb32);
    qs = (int32_t *)(void *)((unsigned char *)workspace + off);
    off += qmx__k_r64(4u * mb * nb32);
    q = (int8_t *)(void *)((unsigned char *)workspace + off);
    for (m0 = 0; m0 < M; m0 += mb) {
        size_t rows = M - m0 < mb ? M - m0 : mb, i, bk, k;
        for (i = 0; i < rows; i++) {
            int8_t *qi = q + i * kp;
            for (k = K; k < kp; k++) qi[k] = 0;
            for (j = 0; j < nab; j++) {
                size_t k0 = j * ab, len = K - k0 < ab ? K - k0 : ab;
                const float *x = X + (m0 + i) * ldx + k0;
                float s = 1.0f;
                st = qmx_compute_qparams(&cfg, x, len, &s, 1, NULL);
                if (st == QMX_OK) st = qmx_quantize(&cfg, x, len, &s, 1, NULL, qi + k0, len);
                if (st != QMX_OK) return st;   /* not reached: checked in pass 1 */
                for (bk = k0 / 32u; bk * 32u < k0 + len; bk++) sxb[i * nb32 + bk] = s;
            }
            if (h.elem == 5) {   /* |sum| <= 16 * 127: int16 */
                int16_t *qs16 = (int16_t *)(void *)(qs + i * nb32);
                for (bk = 0; bk < h.nb; bk++) {
                    int32_t sum = 0;
                    for (k = 0; k < 16u; k++) sum += qi[16u * bk + k];
                    qs16[bk] = (int16_t)sum;
                }
            } else {
                for (bk = 0; bk < h.nb; bk++) {
                    int32_t sum = 0;
                    for (k = 0; k < 32u; k++) sum += qi[32u * bk + k];
                    qs[i * nb32 + bk] = sum;
                }
            }
        }
#if defined(QMX__K_VNNI)
        if (h.elem == 2 || h.elem == 3)   /* the 4- / 8-row tiles' rows: -8 qsum (qmx__bp4_) */
            for (i = 0; i < rows / 4u * 4u; i++)
                for (bk = 0; bk < h.nb; bk++) qs[i * nb32 + bk] *= -8;
#endif
        for (p = n_off / 16u; p < p1; p += QMX__BP_PANELS) {   /* QMX__BP_PANELS at a time */
            const uint8_t *pp = (const uint8_t *)blob + QMX_BLOCKW_PACK_HEADER + p * h.nb * h.S;
            size_t npn = p1 - p < QMX__BP_PANELS ? p1 - p : QMX__BP_PANELS;
            size_t pc = 16u * p - n_off;   /* the panel's first column in Y */
            size_t cols = N - pc < 16u * npn ? N - pc : 16u * npn;
            i = 0;
            if (h.elem == 8) {   /* ggml Q4_1: AVX-512 VNNI, AVX2, NEON, else C */
                for (; i < rows; i++) {
                    float y[16u * QMX__BP_PANELS];
                    float *yo = Y + (m0 + i) * ldy + pc;
#if defined(QMX__K_VNNI)
                    qmx__bp41_panel_vnni(&h, pp, npn, q + i * kp, qs + i * nb32, sxb + i * nb32, y);
#elif defined(QMX__K_AVX2)
                    qmx__bp41_panel_avx2(&h, pp, npn, q + i * kp, qs + i * nb32, sxb + i * nb32, y);
#elif defined(QMX__K_NEON) || defined(QMX__K_NEONDOT)
                    qmx__bp41_panel_neon(&h, pp, q + i * kp, qs + i * nb32, sxb + i * nb32, y);
#else
                    size_t t;
                    for (t = 0; t < npn; t++)
                        qmx__bp41_panel_c(&h, pp + t * h.nb * h.S, q + i * kp, qs + i * nb32,
                                          sxb + i * nb32, y + 16u * t);
#endif
                    for (j = 0; j < cols; j++)
                        yo[j] = y[j] != y[j] ? qmx__bits_f32(QMX__BW_QNAN) : y[j];
                }
                continue;
            }
            if (h.elem >= 6) {   /* MXFP8: E4M3 VNNI + VBMI, AVX2, NEON; else C */
                for (; i < rows; i++) {
                    float y[16u * QMX__BP_PANELS];
                    float *yo = Y + (m0 + i) * ldy + pc;
                    size_t t;
#if defined(QMX__BP8_VNNI)
                    if (h.elem == 6)
                        qmx__bp8_panel_vnni(&h, pp, npn, q + i * kp, sxb + i * nb32, y);
                    else
#elif defined(QMX__K_AVX2)
                    if (h.elem == 6)
                        qmx__bp8_panel_avx2(&h, pp, npn, q + i * kp, sxb + i * nb32, y);
                    else
#elif defined(QMX__K_NEON) || defined(QMX__K_NEONDOT)
                    if (h.elem == 6)
                        qmx__bp8_panel_neon(&h, pp, q + i * kp, sxb + i * nb32, y);
                    else
#endif
                    for (t = 0; t < npn; t++)
                        qmx__bp8_panel_c(&h, pp + t * h.nb * h.S, q + i * kp, sxb + i * nb32,
                                         y + 16u * t);
                    for (j = 0; j < cols; j++)
                        yo[j] = y[j] != y[j] ? qmx__bits_f32(QMX__BW_QNAN) : y[j];
                }
                continue;
            }
            if (h.elem == 5) {   /* NVFP4: blocks of 16 */
#if defined(QMX__K_VNNI)
                for (; i + 4u <= rows; i += 4u) {
                    size_t t, r;
                    for (t = 0; t < npn; t++) {
                        float y[64];
                        size_t c0 = 16u * (p + t) - n_off, ct = N - c0 < 16u ? N - c0 : 16u;
                        qmx__bp16_tile4_vnni(&h, pp + t * h.nb * h.S, q + i * kp, kp,
                                             (const int16_t *)(const void *)(qs + i * nb32),
                                             2u * nb32, sxb + i * nb32, nb32, y);
                        for (r = 0; r < 4u; r++)
                            for (j = 0; j < ct; j++)
                                Y[(m0 + i + r) * ldy + c0 + j] =
                                    y[16u * r + j] != y[16u * r + j]
                                        ? qmx__bits_f32(QMX__BW_QNAN) : y[16u * r + j];
                    }
                }
#endif
                for (; i < rows; i++) {
                    float y[16u * QMX__BP_PANELS];
                    float *yo = Y + (m0 + i) * ldy + pc;
                    const int16_t *qs16 = (const int16_t *)(const void *)(qs + i * nb32);
#if defined(QMX__K_VNNI)
                    qmx__bp16_panel_vnni(&h, pp, npn, q + i * kp, qs16, sxb + i * nb32, y);
#elif defined(QMX__K_AVX2)
                    qmx__bp16_panel_avx2(&h, pp, npn, q + i * kp, qs16, sxb + i * nb32, y);
#elif defined(QMX__K_NEON) || defined(QMX__K_NEONDOT)
                    (void)qs16;
                    qmx__bp16_panel_neon(&h, pp, q + i * kp, sxb + i * nb32, y);
#else
                    size_t t;
                    for (t = 0; t < npn; t++)
                        qmx__bp16_panel_c(&h, pp + t * h.nb * h.S, q + i * kp, qs16,
                                          sxb + i * nb32, y + 16u * t);
#endif
                    for (j = 0; j < cols; j++)
                        yo[j] = y[j] != y[j] ? qmx__bits_f32(QMX__BW_QNAN) : y[j];
                }
                continue;
            }
#if defined(QMX__K_VNNI)
            /* int4 / uint4: 8 (then 4) rows x 1 panel tiles (qmx__bp4_; qs: -8 qsum) */
            while ((h.elem == 2 || h.elem == 3) && i + 4u <= rows) {
                size_t t, r, R = rows - i >= 8u ? 8u : 4u;
                for (t = 0; t < npn; t++) {
                    float y[128];
                    size_t c0 = 16u * (p + t) - n_off, ct = N - c0 < 16u ? N - c0 : 16u;
                    /* the last tile of the rows brings the next group's panel into L2 (when
                     * two groups fit in 512 KiB) */
                    const uint8_t *pf = i + R + 4u > rows && p + QMX__BP_PANELS + t < p1 &&
                                                h.nb * h.S <= 65536u
                                            ? pp + (QMX__BP_PANELS + t) * h.nb * h.S : NULL;
                    qmx__bp4_tiles_vnni(&h, pp + t * h.nb * h.S, q + i * kp, kp,
                                        qs + i * nb32, sxb + i * nb32, h.nb, y, pf, R);
                    for (r = 0; r < R; r++)
                        for (j = 0; j < ct; j++)
                            Y[(m0 + i + r) * ldy + c0 + j] =
                                y[16u * r + j] != y[16u * r + j] ? qmx__bits_f32(QMX__BW_QNAN)
                                                                 : y[16u * r + j];
                }
                i += R;
            }
            /* 4 rows x 1 panel register tiles (the weights decoded once per 4 rows) */
            for (; i + 4u <= rows; i += 4u) {
                size_t t, r;
                for (t = 0; t < npn; t++) {
                    float y[64];
                    size_t c0 = 16u * (p + t) - n_off, ct = N - c0 < 16u ? N - c0 : 16u;
                    qmx__bp_tile4_vnni(&h, pp + t * h.nb * h.S, q + i * kp, kp, qs + i * nb32,
                                       sxb + i * nb32, h.nb, y);
                    for (r = 0; r < 4u; r++)
                        for (j = 0; j < ct; j++)
                            Y[(m0 + i + r) * ldy + c0 + j] =
                                y[16u * r + j] != y[16u * r + j] ? qmx__bits_f32(QMX__BW_QNAN)
                                                                 : y[16u * r + j];
                }
            }
#endif
            for (; i < rows; i++) {
                float y[16u * QMX__BP_PANELS];
                float *yo = Y + (m0 + i) * ldy + pc;
#if defined(QMX__K_VNNI)
                qmx__bp_panel_vnni(&h, pp, npn, q + i * kp, qs + i * h.nb, sxb + i * h.nb, y);
#elif defined(QMX__K_AVX2)
                qmx__bp_panel_avx2(&h, pp, npn, q + i * kp, qs + i * h.nb, sxb + i * h.nb, y);
#elif defined(QMX__K_NEON) || defined(QMX__K_NEONDOT)
                qmx__bp_panel_neon(&h, pp, q + i * kp, qs + i * h.nb, sxb + i * h.nb, y);
#else
                qmx__bp_panel_c(&h, pp, q + i * kp, qs + i * h.nb, sxb + i * h.nb, y);
#endif
                for (j = 0; j < cols; j++)
                    yo[j] = y[j] != y[j] ? qmx__bits_f32(QMX__BW_QNAN) : y[j];
            }
        }
    }
    return QMX_OK;
}

QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8(size_t M, size_t N, size_t K, const float *X,
                                                   size_t ldx, const void *blob,
                                                   size_t blob_bytes,
                                                   const qmx_blockw_dyn_opts *opts, float *Y,
                                                   size_t ldy, void *workspace,
                                                   size_t workspace_bytes) {
    return qmx__bp_dyn(M, N, K, X, ldx, blob, blob_bytes, opts, Y, ldy, workspace,
                       workspace_bytes, 0, N, QMX__PAR_RUN);
}

/* ---- float32 activations on the blob (qmx__bpf_) ---- */
#if defined(QMX__K_VNNI) && defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define QMX__BPF_MB 64u   /* rows of X per pass over a panel */
static const float qmx__bpf_ggml_kv[16] = {0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  6.0f,  8.0f,  12.0f,
                                           0.0f, -1.0f, -2.0f, -3.0f, -4.0f, -6.0f, -8.0f, -12.0f};
#if !defined(QMX__K_VNNI)
/* T[16 t + j] = Wdq of row j, k = bl b + t: exactly qmx_dequantize's / qmx_mx_dequantize's;
 * ggml Q4_1: f32(f32(u d) + m). */
QMX__NOFMA
static void qmx__bpf_tile_c(const qmx__bp *h, const uint8_t *blk, float *T) {
    QMX__PRAGMA_NOFMA
    size_t j, t;
    for (j = 0; j < 16u; j++) {
        float sc = qmx__bp_getscale(h, blk, j);
        int32_t z = (int32_t)qmx__bp_getz(h, blk, j);
        if (h->elem == 8) {
            float mn = qmx__bp_getmin(h, blk, j);
            for (t = 0; t < 32u; t++) {
                float v = (float)qmx__bp_getu(h, blk, j, t) * sc;
                QMX__OPAQUE(v);
                T[16u * t + j] = v + mn;
            }
            continue;
        }
        for (t = 0; t < h->bl; t++) {
            uint32_t u = qmx__bp_getu(h, blk, j, t);
            float v = h->elem == 6 || h->elem == 7 ? qmx_fp8_to_f32((uint8_t)u, h->elem == 7 ? QMX_FP8_E5M2
                                                                             : QMX_FP8_E4M3FN)
                      : h->elem < 4 ? (float)((int32_t)u - z)
                      : h->sk == 4 || h->sk == 6 ? qmx__bpf_ggml_kv[u]
                                                 : qmx__bits_f32(qmx__fp4_bits[u]);
            T[16u * t + j] = v * sc;
        }
    }
}
#define qmx__bpf_tile qmx__bpf_tile_c
/* acc[16 r + j] += X[r][t] * T[16 t + j] for t < kn, r < rows, in increasing t. */
QMX__NOFMA
static void qmx__bpf_rows(const float *T, size_t kn, const float *X, size_t ldx, size_t rows,
                          float *acc) {
    QMX__PRAGMA_NOFMA
    size_t r, t, j;
    for (r = 0; r < rows; r++)
        for (t = 0; t < kn; t++) {
            float a = X[r * ldx + t];
            for (j = 0; j < 16u; j++) {
                float p = a * T[16u * t + j];
                QMX__OPAQUE(p);
                acc[16u * r + j] = acc[16u * r + j] + p;
            }
        }
}
#else
QMX__NOFMA
static void qmx__bpf_tile(const qmx__bp *h, const uint8_t *blk, float *T) {
    QMX__PRAGMA_NOFMA
    __m512 sw;
    const __m512i zv = qmx__bp_z_vnni(h, blk);
    const __m512i m8 = _mm512_set1_epi32(0xFF), m4 = _mm512_set1_epi32(0x0F);
    int g, t;
    sw = h->elem == 5 ? qmx__bp16_sw_vnni(h, blk) : qmx__bp_sw_vnni(h, blk);
    if (h->elem == 6 || h->elem == 7) {   /* MXFP8: qmx_fp8_to_f32's value (exact), times sw */
        const int e5 = h->elem == 7;
        const __m512i m7 = _mm512_set1_epi32(0x7F);
        for (g = 0; g < 8; g++) {
            __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
            for (t = 0; t < 4; t++) {
                __m512i c = _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32(8 * t)), m8);
                __m512i mag = _mm512_and_si512(c, m7);
                __m512 d = _mm512_castsi512_ps(_mm512_add_epi32(
                    _mm512_slli_epi32(mag, e5 ? 21 : 20), _mm512_set1_epi32(e5 ? 112 << 23 : 120 << 23)));
                d = _mm512_mask_mul_ps(d, _mm512_cmplt_epu32_mask(mag, _mm512_set1_epi32(e5 ? 4 : 8)),
                                       _mm512_cvtepi32_ps(mag),
                                       _mm512_set1_ps(e5 ? 1.52587890625e-05f : 0.001953125f));
                if (e5) {
                    d = _mm512_mask_mov_ps(d, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7C)),
                                           _mm512_castsi512_ps(_mm512_set1_epi32(0x7F800000)));
                    d = _mm512_mask_mov_ps(d, _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7C)),
                                           _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
                } else {
                    d = _mm512_mask_mov_ps(d, _mm512_cmpeq_epi32_mask(mag, m7),
                                           _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
                }
                d = _mm512_castsi512_ps(_mm512_or_si512(
                    _mm512_castps_si512(d),
                    _mm512_and_si512(_mm512_slli_epi32(c, 24), _mm512_set1_epi32((int32_t)0x80000000u))));
                _mm512_storeu_ps(T + 16 * (4 * g + t), _mm512_mul_ps(d, sw));
            }
        }
        return;
    }
    if (h->elem == 5) {   /* NVFP4: 2 groups, low nibbles k = 4 g + t, high k = 8 + 4 g + t */
        const __m512 lut = h->sk == 6 ? _mm512_loadu_ps(qmx__bpf_ggml_kv)
                                      : _mm512_castsi512_ps(_mm512_loadu_si512(
                                            (const void *)qmx__fp4_bits));
        for (g = 0; g < 2; g++) {
            __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
            for (t = 0; t < 8; t++) {
                __m512i c = _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32(4 * t)), m4);
                _mm512_storeu_ps(T + 16 * ((t & 1) ? 8 + 4 * g + t / 2 : 4 * g + t / 2),
                                 _mm512_mul_ps(_mm512_permutexvar_ps(c, lut), sw));
            }
        }
        return;
    }
    if (h->elem == 1) {
        for (g = 0; g < 8; g++) {   /* dword j = row j's 4 codes, k = 4 g + t */
            __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
            for (t = 0; t < 4; t++) {
                __m512i c = _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32(8 * t)), m8);
                _mm512_storeu_ps(T + 16 * (4 * g + t),
                                 _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(c, zv)), sw));
            }
        }
        return;
    }
    for (g = 0; g < 4; g++) {   /* low nibbles k = 4 g + t, high k = 16 + 4 g + t */
        __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * g));
        for (t = 0; t < 8; t++) {
            __m512i c = _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32(4 * t)), m4);
            __m512 w;
            if (h->elem == 4)
                w = _mm512_permutexvar_ps(
                    c, h->sk == 4 ? _mm512_loadu_ps(qmx__bpf_ggml_kv)
                                  : _mm512_castsi512_ps(_mm512_loadu_si512(
                                        (const void *)qmx__fp4_bits)));
            else
                w = _mm512_cvtepi32_ps(_mm512_sub_epi32(c, zv));
            /* nibble t: byte t / 2, low (t even) or high half; Q4_1: f32(f32(u d) + m) */
            w = _mm512_mul_ps(w, sw);
            if (h->elem == 8)
                w = _mm512_add_ps(w, _mm512_maskz_cvtph_ps((__mmask16)0xFFFFu, _mm256_loadu_si256(
                                         (const __m256i *)(const void *)(blk + h->cb + 32u))));
            _mm512_storeu_ps(T + 16 * ((t & 1) ? 16 + 4 * g + t / 2 : 4 * g + t / 2), w);
        }
    }
}
QMX__NOFMA
static void qmx__bpf_rows(const float *T, size_t kn, const float *X, size_t ldx, size_t rows,
                          float *acc) {
    QMX__PRAGMA_NOFMA
    size_t r, t;
    for (r = 0; r < rows; r++) {
        const float *x = X + r * ldx;
        __m512 y = _mm512_loadu_ps(acc + 16u * r);
        for (t = 0; t < kn; t++)
            y = _mm512_add_ps(y, _mm512_mul_ps(_mm512_set1_ps(x[t]), _mm512_loadu_ps(T + 16u * t)));
        _mm512_storeu_ps(acc + 16u * r, y);
    }
}
#endif

QMX_API qmx_status qmx_matmul_blockw_packed_f32_workspace_size(size_t M, size_t N, size_t K,
                                                               size_t *bytes) {
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    *bytes = 64u + 32u * 16u * sizeof(float) + QMX__BPF_MB * 16u * sizeof(float);
    return QMX_OK;
}

/* qmx_matmul_blockw_packed_f32 on the rectangle of M rows x columns [n_off, n_off + N) of an
 * n_blob-row blob (as qmx__bp_dyn); mode QMX__PAR_CHECK / _CHECK_DATA: arguments only. */
static qmx_status qmx__bp_f32(size_t M, size_t N, size_t K, const float *X, size_t ldx,
                              const void *blob, size_t blob_bytes, float *Y, size_t ldy,
                              void *workspace, size_t workspace_bytes, size_t n_off,
                              size_t n_blob, int mode) {
    qmx__bp h;
    size_t need, ext, p, m0, bk, r, j, p1 = (n_off + N + 15u) / 16u;
    float *T, *acc;
    qmx_status st;
    if (!X || !blob || !Y || !workspace) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (ldx < K || ldy < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, ldx)) return QMX_ERR_OVERFLOW;
    ext = qmx__k_extent(M, N, ldy);
    if (!ext || ext > SIZE_MAX / sizeof(float)) return QMX_ERR_OVERFLOW;
    st = qmx__bp_parse(blob, blob_bytes, &h);
    if (st != QMX_OK) return st;
    if (h.N != n_blob || h.K != K || n_off % 16u || n_off > n_blob || N > n_blob - n_off)
        return QMX_ERR_SHAPE;
    if (mode != QMX__PAR_RUN) return QMX_OK;
    st = qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    T = (float *)(void *)((unsigned char *)workspace +
                          ((64u - ((uintptr_t)workspace & 63u)) & 63u));
    acc = T + 32u * 16u;
    for (p = n_off / 16u; p < p1; p++) {
        const uint8_t *pp = (const uint8_t *)blob + QMX_BLOCKW_PACK_HEADER + p * h.nb * h.S;
        size_t c0 = 16u * p - n_off, ct = N - c0 < 16u ? N - c0 : 16u;
        for (m0 = 0; m0 < M; m0 += QMX__BPF_MB) {
            size_t rows = M - m0 < QMX__BPF_MB ? M - m0 : QMX__BPF_MB;
            for (j = 0; j < 16u * rows; j++) acc[j] = 0.0f;
            for (bk = 0; bk < h.nb; bk++) {
                size_t kn = K - h.bl * bk < h.bl ? K - h.bl * bk : h.bl;
                qmx__bpf_tile(&h, pp + bk * h.S, T);
                qmx__bpf_rows(T, kn, X + m0 * ldx + h.bl * bk, ldx, rows, acc);
            }
            for (r = 0; r < rows; r++)
                for (j = 0; j < ct; j++) {
                    float v = acc[16u * r + j];
                    Y[(m0 + r) * ldy + c0 + j] = v != v ? qmx__bits_f32(QMX__BW_QNAN) : v;
                }
        }
    }
    return QMX_OK;
}
QMX_API qmx_status qmx_matmul_blockw_packed_f32(size_t M, size_t N, size_t K, const float *X,
                                                size_t ldx, const void *blob, size_t blob_bytes,
                                                float *Y, size_t ldy, void *workspace,
                                                size_t workspace_bytes) {
    return qmx__bp_f32(M, N, K, X, ldx, blob, blob_bytes, Y, ldy, workspace, workspace_bytes, 0,
                       N, QMX__PAR_RUN);
}
/* USING SEVERAL CORES: range calls and executor calls (qmx__par_, KERNELS implementation) */
static qmx_status qmx__bp_par_ws(size_t M, size_t N, size_t K, const qmx_blockw_dyn_opts *opts,
                                 int f32, size_t *bytes) {
    return f32 ? qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, bytes)
               : qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, opts, bytes);
}
QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8_run(size_t M, size_t N, size_t K,
                                                       const float *X, size_t ldx,
                                                       const void *blob, size_t blob_bytes,
                                                       const qmx_blockw_dyn_opts *opts,
                                                       float *Y, size_t ldy, size_t task_begin,
                                                       size_t task_end, void *workspace,
                                                       size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BPD, M, N, K, X, ldx, blob, blob_bytes, Y, ldy);
    c.bwo = opts;
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_blockw_packed_dyn_i8_exec(size_t M, size_t N, size_t K,
                                                        const float *X, size_t ldx,
                                                        const void *blob, size_t blob_bytes,
                                                        const qmx_blockw_dyn_opts *opts,
                                                        float *Y, size_t ldy,
                                                        const qmx_executor *executor,
                                                        void *workspace,
                                                        size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BPD, M, N, K, X, ldx, blob, blob_bytes, Y, ldy);
    c.bwo = opts;
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_blockw_packed_f32_run(size_t M, size_t N, size_t K,
                                                    const float *X, size_t ldx,
                                                    const void *blob, size_t blob_bytes,
                                                    float *Y, size_t ldy, size_t task_begin,
                                                    size_t task_end, void *workspace,
                                                    size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BPF, M, N, K, X, ldx, blob, blob_bytes, Y, ldy);
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_matmul_blockw_packed_f32_exec(size_t M, size_t N, size_t K,
                                                     const float *X, size_t ldx,
                                                     const void *blob, size_t blob_bytes,
                                                     float *Y, size_t ldy,
                                                     const qmx_executor *executor,
                                                     void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__par_mk(QMX__PAR_BPF, M, N, K, X, ldx, blob, blob_bytes, Y, ldy);
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}
#if defined(QMX__K_VNNI) && defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION: PREPACKED BLOCK WEIGHTS */

/* ============================================================================================
 * IMPLEMENTATION: 16x8 (qmx__s16_): int16 x int8 fully-connected, int16 batch matmul
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__S16_IMPLEMENTATION_DONE)
#define QMX__S16_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

#define QMX__S16_STRIP 16     /* weight rows / output columns widened into the workspace at once */
#define QMX__S16_CHUNK 256    /* K run whose int16 x [-255, 255] products sum exactly in int32 */
#define QMX__S16_KB 512       /* K block of the widened strip */
#define QMX__S16_MB 256       /* rows of the int64 accumulator tile (a panel of A) */

/* Arithmetic shift right of an int64 (C leaves >> of negatives to the implementation). */
static int64_t qmx__s16_asr64(int64_t x, int s) {
    return x >= 0 ? (int64_t)((uint64_t)x >> s) : -(int64_t)(((uint64_t)(-(x + 1)) >> s)) - 1;
}

/* TFLite's int64 MultiplyByQuantizedMultiplier on checked arguments (m >= 0, shift in
 * [-31, 7], |x| < 2^47): |x * rm| < 2^62, no int64 overflow. */
static int32_t qmx__s16_mbqm(int64_t x, int32_t m, int shift) {
    int64_t rm = m < 0x7FFF0000 ? ((int64_t)m + 32768) / 65536 : 0x7FFF, r;
    int ts = 15 - shift;                                   /* 8 .. 46 */
    r = x * rm + ((int64_t)1 << (ts - 1));
    r = qmx__s16_asr64(r, ts);
    return qmx__k_u2i((uint32_t)((uint64_t)r & 0xFFFFFFFFu));  /* modulo 2^32, as TFLite */
}

QMX_API int32_t qmx_requantize64(int64_t acc, int32_t multiplier, int shift) {
    const int64_t lim = (int64_t)1 << 47;
    if (multiplier < 0) multiplier = 0;
    if (shift < -31) shift = -31;
    if (shift > 7) shift = 7;
    if (acc < -lim) acc = -lim;
    if (acc > lim - 1) acc = lim - 1;
    return qmx__s16_mbqm(acc, multiplier, shift);
}

QMX_API qmx_status qmx_requantize64_check(int32_t multiplier, int shift) {
    return multiplier >= 0 && shift >= -31 && shift <= 7 ? QMX_OK : QMX_ERR_ARG;
}

static qmx_status qmx__s16_ws(size_t M, size_t N, size_t K, size_t maxk, size_t *bytes) {
    if (!bytes) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > maxk) return QMX_ERR_OVERFLOW;
    *bytes = 64 + qmx__k_r64(2u * QMX__S16_STRIP * (K < QMX__S16_KB ? K : QMX__S16_KB)) +
             qmx__k_r64(8u * QMX__S16_STRIP * (M < QMX__S16_MB ? M : QMX__S16_MB));
    return QMX_OK;
}
QMX_API qmx_status qmx_fully_connected_i16_workspace_size(size_t M, size_t N, size_t K,
                                                          size_t *bytes) {
    return qmx__s16_ws(M, N, K, QMX_FC_I16_MAX_K, bytes);
}
QMX_API qmx_status qmx_batch_matmul_i16_workspace_size(size_t M, size_t N, size_t K,
                                                       size_t *bytes) {
    return qmx__s16_ws(M, N, K, QMX_BATCH_MATMUL_I16_MAX_K, bytes);
}

/* Checks rq for N output columns (every channel used, every bias); gives the clamp range. */
static qmx_status qmx__s16_rq_check(const qmx_requant64_config *rq, size_t N, int32_t *amin,
                                    int32_t *amax) {
    size_t np = rq->per_channel ? N : 1, ch;
    if (!rq->multipliers || !rq->shifts) return QMX_ERR_NULL;
    for (ch = 0; ch < np; ch++)
        if (qmx_requantize64_check(rq->multipliers[ch], rq->shifts[ch]) != QMX_OK)
            return QMX_ERR_ARG;
    if (rq->bias)
        for (ch = 0; ch < N; ch++)
            if (rq->bias[ch] < -QMX_REQUANT64_MAX_BIAS || rq->bias[ch] > QMX_REQUANT64_MAX_BIAS)
                return QMX_ERR_ARG;
    *amin = rq->act_min; *amax = rq->act_max;
    if (*amin == 0 && *amax == 0) { *amin = -32768; *amax = 32767; }
    if (*amin < -32768 || *amax > 32767 || *amin > *amax) return QMX_ERR_ARG;
    return QMX_OK;
}

/* The output stage of one accumulator of column n. */
static int16_t qmx__s16_stage(int64_t acc, size_t n, const qmx_requant64_config *rq,
                              int32_t amin, int32_t amax) {
    size_t pi = rq->per_channel ? n : 0;
    int32_t v;
    if (rq->bias) acc += rq->bias[n];
    v = qmx__s16_mbqm(acc, rq->multipliers[pi], rq->shifts[pi]);
    if (v < amin) v = amin;
    if (v > amax) v = amax;
    return (int16_t)v;
}

/* sum_k a[k] * w[k] with |w[k]| <= 255: int32 runs of QMX__S16_CHUNK (exact: 256 * 2^15 * 255
 * < 2^31), added in int64. */
static int64_t qmx__s16_dot(const int16_t *a, const int16_t *w, size_t K) {
    int64_t s = 0;
    size_t k0, k;
    for (k0 = 0; k0 < K; k0 += QMX__S16_CHUNK) {
        size_t k1 = K - k0 < QMX__S16_CHUNK ? K : k0 + QMX__S16_CHUNK;
        int32_t p = 0;
        for (k = k0; k < k1; k++) p += (int32_t)a[k] * (int32_t)w[k];
        s += p;
    }
    return s;
}

/* The tile step shared by both kernels, the one place a SIMD path plugs in:
 *   for m < mb, j < nb:  d = sum_{k < kl} a[m * a_row + k * a_k] * wt[j * kl + k]  (exact)
 *                        acc[m * QMX__S16_STRIP + j] = first ? d : acc[...] + d
 * a: int16 activations at (row m0, k0); wt: the widened strip (column j contiguous in k).
 * w_narrow != 0 promises |wt| <= 255 (the fully-connected's W - w_zp), so int32 runs of
 * QMX__S16_CHUNK products are exact; w_narrow == 0 (batch matmul: any int16) sums each
 * product in int64. Exact integers: any path and any order give the same acc. */
static void qmx__s16_tile_portable(size_t mb, size_t nb, size_t kl, const int16_t *a,
                                   size_t a_row, size_t a_k, const int16_t *wt, int w_narrow,
                                   int64_t *acc, int first) {
    size_t m, j, k;
    for (m = 0; m < mb; m++)
        for (j = 0; j < nb; j++) {
            const int16_t *w = wt + j * kl, *x = a + m * a_row;
            int64_t d;
            if (w_narrow && a_k == 1) {
                d = qmx__s16_dot(x, w, kl);
            } else {
                d = 0;
                for (k = 0; k < kl; k++) d += (int32_t)x[k * a_k] * (int32_t)w[k];
            }
            acc[m * QMX__S16_STRIP + j] = first ? d : acc[m * QMX__S16_STRIP + j] + d;
        }
}

/* ---- 16x8 SIMD: AVX-512 / AVX2 / NEON (x86 and aarch64) ------------------------------------ */
/* x86 (AVX-512BW, AVX2): the strip is stored as k pairs, pair p = 32 int16 = 16 columns x
 * (k = 2p, 2p + 1), so one vpmaddwd / vpdpwssd of a broadcast activation pair against a pair
 * row adds two products per column into int32 lanes (16 with AVX-512, 8 with AVX2). Exact:
 * w_narrow (|w| <= 255): a pair is <= 2 * 2^15 * 255 and 128 pairs (256 k) sum below 2^31,
 * then the lanes are added to the int64 tile. w_narrow == 0 (batch matmul, any int16 w): w =
 * 256 * (w >> 8) + (w & 255), two streams with |w| <= 255 (the same bound), recombined in
 * int64. Columns >= nb and the pad of an odd kl are masked off (never read unmasked).
 * aarch64 (NEON): the strip is k-major, [kl][16] (16 columns of one k contiguous), vmlal_lane
 * per activation into int32 lanes (one product per k per lane: 256 k of |w| <= 255 stay below
 * 2^31), the same split for w_narrow == 0. Rows in register tiles of 8 (AVX-512) / 4 (AVX2,
 * NEON); the rows of a last partial tile, or of a_k != 1 (batch matmul adj_x), are first
 * copied into a local buffer. */
#if defined(QMX__AVX512) || defined(QMX__AVX2)
#  define QMX__S16_WIDX(j, k, kl) (((k) >> 1) * 32 + (j) * 2 + ((k) & 1))
#  define QMX__S16_TILE_SIMD 1

/* The int32 pair of a row at k (k + 1 < kl), as one 32-bit value. */
static int32_t qmx__s16_x_pair(const int16_t *p) {
#  if defined(__GNUC__) || defined(__clang__)
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
#  else
    return _mm_cvtsi128_si32(
        _mm_unpacklo_epi16(_mm_cvtsi32_si128(p[0]), _mm_cvtsi32_si128(p[1])));
#  endif
}
/* The last k of an odd kl, paired with 0 (the pad of the strip is masked too). */
static int32_t qmx__s16_x_last(const int16_t *p) {
    return (int32_t)(uint16_t)p[0];
}
#endif

#if defined(QMX__AVX512)
#  define QMX__S16_XR 8          /* rows of the register tile */
#  define QMX__S16_WIDEN_SIMD 1
/* all-lanes masks: the zero-masked intrinsic forms on purpose (GCC 12's unmasked ones trip
 * -Wmaybe-uninitialized in C++ through _mm512_undefined_*, as the int8 kernels note) */
#  define QMX__S16_F8 ((__mmask8)0xFF)
#  define QMX__S16_F16 ((__mmask16)0xFFFF)
#  if defined(__AVX512VNNI__)
#    define QMX__S16_ZDOT(c, a, w) _mm512_dpwssd_epi32(c, a, w)
#  else
#    define QMX__S16_ZDOT(c, a, w) _mm512_add_epi32(c, _mm512_madd_epi16(a, w))
#  endif
/* acc[0..15] (=, or += when !set) the int32 lanes of c, times 256 when hi. */
static void qmx__s16_z_flush(int64_t *acc, __m512i c, int hi, int set) {
    __m512i l = _mm512_maskz_cvtepi32_epi64(
        QMX__S16_F8, _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, c, 0));
    __m512i h = _mm512_maskz_cvtepi32_epi64(
        QMX__S16_F8, _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, c, 1));
    if (hi) {
        l = _mm512_maskz_slli_epi64(QMX__S16_F8, l, 8);
        h = _mm512_maskz_slli_epi64(QMX__S16_F8, h, 8);
    }
    if (!set) {
        l = _mm512_add_epi64(l, _mm512_loadu_si512((const void *)acc));
        h = _mm512_add_epi64(h, _mm512_loadu_si512((const void *)(acc + 8)));
    }
    _mm512_storeu_si512((void *)acc, l);
    _mm512_storeu_si512((void *)(acc + 8), h);
}

/* 8 rows (row r at a + r * lda, k contiguous; rows >= nr are not stored) x 16 columns over kl
 * of the pair strip wt; the columns >= nb are masked off. w_narrow: one int32 stream. */
#  define QMX__S16_Z8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#  define QMX__S16_ZDECL(r) __m512i s##r = _mm512_setzero_si512();
#  if defined(__AVX512VNNI__) && (defined(__GNUC__) || defined(__clang__))
/* vpdpwssd with the pair as an embedded broadcast operand: 8 instructions for 8 rows where the
 * intrinsics give 8 broadcasts and (GCC 12) 16 register copies besides, which halves the
 * speed when the core's other hardware thread is busy (measured on Zen 4) */
typedef int32_t qmx__s16_a32 __attribute__((may_alias));
#    define QMX__S16_ZPAIR(r)                                                                  \
    __asm__("vpdpwssd {%2%{1to16%}, %1, %0|%0, %1, %2%{1to16%}}"                            \
            : "+v"(s##r) : "v"(w), "m"(*(const qmx__s16_a32 *)(const void *)(q + (r) * lda)));
#  else
#    define QMX__S16_ZPAIR(r) \
    s##r = QMX__S16_ZDOT(s##r, _mm512_set1_epi32(qmx__s16_x_pair(q + (r) * lda)), w);
#  endif
#  define QMX__S16_ZLAST(r) \
    s##r = QMX__S16_ZDOT(s##r, _mm512_set1_epi32(qmx__s16_x_last(q + (r) * lda)), w);
#  define QMX__S16_ZOUT(r) \
    if ((r) < nr) qmx__s16_z_flush(acc + (r) * QMX__S16_STRIP, s##r, 0, set);
static void qmx__s16_z8(const int16_t *a, size_t lda, size_t nr, size_t kl, const int16_t *wt,
                        size_t nb, int64_t *acc, int first) {
    const __mmask32 cm = nb >= 16 ? 0xFFFFFFFFu : (__mmask32)((1u << (2 * nb)) - 1u);
    size_t c0, p;
    for (c0 = 0; c0 < kl; c0 += QMX__S16_CHUNK) {
        size_t c1 = kl - c0 < QMX__S16_CHUNK ? kl : c0 + QMX__S16_CHUNK, pe = c1 >> 1;
        const int16_t *q = a + c0;
        int set = first && c0 == 0;
        __m512i w;
        QMX__S16_Z8(QMX__S16_ZDECL)
        for (p = c0 >> 1; p < pe; p++, q += 2) {
            w = _mm512_maskz_loadu_epi16(cm, (const void *)(wt + p * 32));
            QMX__S16_Z8(QMX__S16_ZPAIR)
        }
        if (c1 & 1) {
            w = _mm512_maskz_loadu_epi16(cm & 0x55555555u, (const void *)(wt + pe * 32));
            QMX__S16_Z8(QMX__S16_ZLAST)
        }
        QMX__S16_Z8(QMX__S16_ZOUT)
    }
}
#  undef QMX__S16_ZDECL
#  undef QMX__S16_ZPAIR
#  undef QMX__S16_ZLAST
#  undef QMX__S16_ZOUT

/* The same for w_narrow == 0: w = 256 * (w >> 8) + (w & 255), two int32 streams. */
#  define QMX__S16_ZDECL(r) __m512i s##r = _mm512_setzero_si512(), t##r = s##r;
#  define QMX__S16_ZPAIR(r)                                                    \
    x = _mm512_set1_epi32(p < pe ? qmx__s16_x_pair(q + (r) * lda)              \
                                 : qmx__s16_x_last(q + (r) * lda));            \
    s##r = QMX__S16_ZDOT(s##r, x, wl); t##r = QMX__S16_ZDOT(t##r, x, wh);
#  define QMX__S16_ZOUT(r)                                                     \
    if ((r) < nr) {                                                            \
        qmx__s16_z_flush(acc + (r) * QMX__S16_STRIP, s##r, 0, set);            \
        qmx__s16_z_flush(acc + (r) * QMX__S16_STRIP, t##r, 1, 0);              \
    }
static void qmx__s16_z8w(const int16_t *a, size_t lda, size_t nr, size_t kl, const int16_t *wt,
                         size_t nb, int64_t *acc, int first) {
    const __mmask32 cm = nb >= 16 ? 0xFFFFFFFFu : (__mmask32)((1u << (2 * nb)) - 1u);
    const __m512i lo8 = _mm512_set1_epi16(0xFF);
    size_t c0, p;
    for (c0 = 0; c0 < kl; c0 += QMX__S16_CHUNK) {
        size_t c1 = kl - c0 < QMX__S16_CHUNK ? kl : c0 + QMX__S16_CHUNK, pe = c1 >> 1;
        const int16_t *q = a + c0;
        int set = first && c0 == 0;
        QMX__S16_Z8(QMX__S16_ZDECL)
        for (p = c0 >> 1; p < pe + (c1 & 1); p++, q += 2) {
            __m512i w = _mm512_maskz_loadu_epi16(p < pe ? cm : cm & 0x55555555u,
                                                 (const void *)(wt + p * 32));
            __m512i wl = _mm512_and_si512(w, lo8), wh = _mm512_srai_epi16(w, 8), x;
            QMX__S16_Z8(QMX__S16_ZPAIR)
        }
        QMX__S16_Z8(QMX__S16_ZOUT)
    }
}
#  undef QMX__S16_ZDECL
#  undef QMX__S16_ZPAIR
#  undef QMX__S16_ZOUT
#  undef QMX__S16_Z8

/* One row (a, k contiguous), two chains. */
static void qmx__s16_z1(const int16_t *a, size_t kl, const int16_t *wt, size_t nb, int wide,
                        int64_t *acc, int first) {
    const __mmask32 cm = nb >= 16 ? 0xFFFFFFFFu : (__mmask32)((1u << (2 * nb)) - 1u);
    const __m512i lo8 = _mm512_set1_epi16(0xFF);
    size_t c0, p;
    for (c0 = 0; c0 < kl; c0 += QMX__S16_CHUNK) {
        size_t c1 = kl - c0 < QMX__S16_CHUNK ? kl : c0 + QMX__S16_CHUNK, pe = c1 >> 1;
        __m512i s0 = _mm512_setzero_si512(), s1 = s0, t0 = s0, t1 = s0, w, x;
        if (!wide) {
            for (p = c0 >> 1; p + 1 < pe; p += 2) {
                s0 = QMX__S16_ZDOT(s0, _mm512_set1_epi32(qmx__s16_x_pair(a + 2 * p)),
                                   _mm512_maskz_loadu_epi16(cm, (const void *)(wt + p * 32)));
                s1 = QMX__S16_ZDOT(s1, _mm512_set1_epi32(qmx__s16_x_pair(a + 2 * p + 2)),
                                   _mm512_maskz_loadu_epi16(cm, (const void *)(wt + p * 32 + 32)));
            }
            for (; p < pe + (c1 & 1); p++) {
                w = _mm512_maskz_loadu_epi16(p < pe ? cm : cm & 0x55555555u,
                                             (const void *)(wt + p * 32));
                x = _mm512_set1_epi32(p < pe ? qmx__s16_x_pair(a + 2 * p)
                                             : qmx__s16_x_last(a + c1 - 1));
                s0 = QMX__S16_ZDOT(s0, x, w);
            }
            qmx__s16_z_flush(acc, _mm512_add_epi32(s0, s1), 0, first && c0 == 0);
        } else {
            for (p = c0 >> 1; p < pe + (c1 & 1); p++) {
                w = _mm512_maskz_loadu_epi16(p < pe ? cm : cm & 0x55555555u,
                                             (const void *)(wt + p * 32));
                x = _mm512_set1_epi32(p < pe ? qmx__s16_x_pair(a + 2 * p)
                                             : qmx__s16_x_last(a + c1 - 1));
                if (p & 1) {
                    s1 = QMX__S16_ZDOT(s1, x, _mm512_and_si512(w, lo8));
                    t1 = QMX__S16_ZDOT(t1, x, _mm512_srai_epi16(w, 8));
                } else {
                    s0 = QMX__S16_ZDOT(s0, x, _mm512_and_si512(w, lo8));
                    t0 = QMX__S16_ZDOT(t0, x, _mm512_srai_epi16(w, 8));
                }
            }
            qmx__s16_z_flush(acc, _mm512_add_epi32(s0, s1), 0, first && c0 == 0);
            qmx__s16_z_flush(acc, _mm512_add_epi32(t0, t1), 1, 0);
        }
    }
}

/* Rows n0 .. n0+nb-1 of W - w_zp into the pair strip, 4 k at a time: 16 rows x 4 bytes (one
 * 64-byte group of the packed blob, or a gather of the plain rows) sign-extended, the two
 * pairs of each column split by two permutes. 0: not handled (the scalar loop then runs). */
static int qmx__s16_widen_simd(const int8_t *W, size_t ldw, const uint8_t *panels, size_t kp,
                               size_t n0, size_t nb, size_t k0, size_t kl, int32_t w_zp,
                               int16_t *wt) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28,
                                         30);
    const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    const __m512i zp = _mm512_set1_epi16((short)w_zp);
    __m512i vidx = _mm512_setzero_si512();
    __mmask16 rm = (__mmask16)((1u << nb) - 1u);
    size_t k, j, kv;
    if (panels) {
        kv = (kl + 3u) & ~(size_t)3u;   /* the blob is padded to a multiple of 4 k */
        panels += (n0 / 16) * 16 * kp + k0 / 4 * 64;
    } else {
        if (ldw > 0x7FFFFFFF / 16) return 0;
        kv = kl & ~(size_t)3u;
        vidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                    13, 14, 15), _mm512_set1_epi32((int)ldw));
        W += n0 * ldw + k0;
    }
    k = 0;
    if (!panels && nb == 16)   /* 16 full rows: 16 k of each by 16-byte loads, transposed */
        for (; k + 16 <= kl; k += 16) {
            __m512i z[4], t0, t1, t2, t3, g[4];
            size_t i, q;
            for (i = 0; i < 4; i++) {
                const int8_t *r = W + i * ldw + k;
                __m512i v = _mm512_maskz_broadcast_i32x4(
                    QMX__S16_F16, _mm_loadu_si128((const __m128i *)(const void *)r));
                for (q = 1; q < 4; q++)   /* lane q: row i + 4q */
                    v = _mm512_mask_broadcast_i32x4(
                        v, (__mmask16)(0xFu << (4 * q)),
                        _mm_loadu_si128((const __m128i *)(const void *)(r + 4 * q * ldw)));
                z[i] = v;
            }
            /* 4x4 dword transposes per 128-bit lane: g[c] = dword c (k + 4c .. + 3) of rows
             * 0 .. 15 in order */
            t0 = _mm512_maskz_unpacklo_epi32(QMX__S16_F16, z[0], z[1]);
            t1 = _mm512_maskz_unpackhi_epi32(QMX__S16_F16, z[0], z[1]);
            t2 = _mm512_maskz_unpacklo_epi32(QMX__S16_F16, z[2], z[3]);
            t3 = _mm512_maskz_unpackhi_epi32(QMX__S16_F16, z[2], z[3]);
            g[0] = _mm512_maskz_unpacklo_epi64(QMX__S16_F8, t0, t2);
            g[1] = _mm512_maskz_unpackhi_epi64(QMX__S16_F8, t0, t2);
            g[2] = _mm512_maskz_unpacklo_epi64(QMX__S16_F8, t1, t3);
            g[3] = _mm512_maskz_unpackhi_epi64(QMX__S16_F8, t1, t3);
            for (i = 0; i < 4; i++) {
                __m512i lo = _mm512_sub_epi16(_mm512_cvtepi8_epi16(
                    _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, g[i], 0)), zp);
                __m512i hi = _mm512_sub_epi16(_mm512_cvtepi8_epi16(
                    _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, g[i], 1)), zp);
                _mm512_storeu_si512((void *)(wt + (k + 4 * i) / 2 * 32),
                                    _mm512_permutex2var_epi32(lo, ie, hi));
                _mm512_storeu_si512((void *)(wt + (k + 4 * i) / 2 * 32 + 32),
                                    _mm512_permutex2var_epi32(lo, io, hi));
            }
        }
    for (; k < kv; k += 4) {
        __m512i g = panels ? _mm512_loadu_si512((const void *)(panels + k / 4 * 64))
                           : _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), rm, vidx,
                                                         (const void *)(W + k), 1);
        __m512i lo = _mm512_sub_epi16(
            _mm512_cvtepi8_epi16(_mm512_maskz_extracti64x4_epi64((__mmask8)0xF, g, 0)), zp);
        __m512i hi = _mm512_sub_epi16(
            _mm512_cvtepi8_epi16(_mm512_maskz_extracti64x4_epi64((__mmask8)0xF, g, 1)), zp);
        _mm512_storeu_si512((void *)(wt + k / 2 * 32), _mm512_permutex2var_epi32(lo, ie, hi));
        if (k + 2 < kl)
            _mm512_storeu_si512((void *)(wt + k / 2 * 32 + 32),
                                _mm512_permutex2var_epi32(lo, io, hi));
    }
    for (; k < kl; k++)   /* plain: the last kl % 4 */
        for (j = 0; j < nb; j++)
            wt[QMX__S16_WIDX(j, k, kl)] = (int16_t)(W[j * ldw + k] - w_zp);
    {   /* the next call's weights towards the cache while the tile step runs (the loads above
         * otherwise wait on memory): the blob is read in order; plain rows, their next K block
         * or the next strip. A prefetch never faults, the addresses are plain integers. */
        uintptr_t nx = panels ? (uintptr_t)(panels + kv / 4 * 64)
                              : (k0 + kl < ldw ? (uintptr_t)(W + kl)
                                               : (uintptr_t)(W - k0) + 16u * ldw);
        size_t span = panels ? kv * 16 : kl, o;
        for (j = 0; j < (panels ? 1u : 16u); j++)
            for (o = 0; o < span; o += 64)
                _mm_prefetch((const char *)(nx + j * ldw + o), _MM_HINT_T1);
    }
    return 1;
}
#  define QMX__S16_X8(a, lda, nr, kl, wt, nb, wide, acc, first)                              \
    ((wide) ? qmx__s16_z8w(a, lda, nr, kl, wt, nb, acc, first)                              \
            : qmx__s16_z8(a, lda, nr, kl, wt, nb, acc, first))
#  define QMX__S16_X1 qmx__s16_z1

/* The output stage of a tile (rows m < mb, columns j < nb of acc, column n0 + j), as
 * qmx__s16_stage lane by lane: x * rm as xh * rm * 2^32 + xl * rm (|x| < 2^47, rm < 2^15:
 * exact), the rounding shift by vpsravq, the int32 result modulo 2^32 (vpmovqd), clamped. */
#  define QMX__S16_STAGE_SIMD 1
static void qmx__s16_stage_simd(const int64_t *acc, size_t mb, size_t nb, size_t n0,
                                const qmx_requant64_config *rq, int32_t amin, int32_t amax,
                                int16_t *out, size_t ldo) {
    int64_t rmv[16], tsv[16], rdv[16], bv[16];
    __m512i rm[2], ts[2], rd[2], b[2];
    const __m512i lo = _mm512_set1_epi32(amin), hi = _mm512_set1_epi32(amax);
    const __mmask16 om = (__mmask16)((1u << nb) - 1u);
    size_t j, m, h;
    (void)&qmx__s16_stage;   /* the scalar stage, lane by lane the same */
    for (j = 0; j < 16; j++) {
        size_t pi = rq->per_channel ? n0 + (j < nb ? j : 0) : 0;
        int32_t mu = rq->multipliers[pi];
        int t = 15 - rq->shifts[pi];
        rmv[j] = mu < 0x7FFF0000 ? ((int64_t)mu + 32768) / 65536 : 0x7FFF;
        tsv[j] = t;
        rdv[j] = (int64_t)1 << (t - 1);
        bv[j] = rq->bias && j < nb ? rq->bias[n0 + j] : 0;
    }
    for (h = 0; h < 2; h++) {
        rm[h] = _mm512_loadu_si512((const void *)(rmv + 8 * h));
        ts[h] = _mm512_loadu_si512((const void *)(tsv + 8 * h));
        rd[h] = _mm512_loadu_si512((const void *)(rdv + 8 * h));
        b[h] = _mm512_loadu_si512((const void *)(bv + 8 * h));
    }
    for (m = 0; m < mb; m++) {
        __m256i v[2];
        __m512i r;
        for (h = 0; h < 2; h++) {
            __m512i x = _mm512_add_epi64(
                _mm512_loadu_si512((const void *)(acc + m * QMX__S16_STRIP + 8 * h)), b[h]);
            __m512i p = _mm512_add_epi64(
                _mm512_maskz_mul_epu32(QMX__S16_F8, x, rm[h]),
                _mm512_maskz_slli_epi64(QMX__S16_F8, _mm512_maskz_mul_epi32(QMX__S16_F8,
                    _mm512_maskz_srai_epi64(QMX__S16_F8, x, 32), rm[h]), 32));
            v[h] = _mm512_maskz_cvtepi64_epi32(QMX__S16_F8, _mm512_maskz_srav_epi64(QMX__S16_F8,
                _mm512_add_epi64(p, rd[h]), ts[h]));
        }
        r = _mm512_maskz_inserti64x4(QMX__S16_F8, _mm512_maskz_inserti64x4(QMX__S16_F8,
                _mm512_setzero_si512(), v[0], 0), v[1], 1);
        r = _mm512_maskz_max_epi32(QMX__S16_F16, _mm512_maskz_min_epi32(QMX__S16_F16, r, hi), lo);
        if (nb == 16)   /* a masked store is slow on some cores (Zen 4) */
            _mm256_storeu_si256((__m256i *)(void *)(out + m * ldo),
                                _mm512_maskz_cvtepi32_epi16(QMX__S16_F16, r));
        else
            _mm256_mask_storeu_epi16((void *)(out + m * ldo), om,
                                     _mm512_maskz_cvtepi32_epi16(QMX__S16_F16, r));
    }
}
#endif /* QMX__AVX512 */

#if defined(QMX__AVX2) && !defined(QMX__AVX512)
#  define QMX__S16_XR 4          /* rows of the register tile */
/* acc[0..7] (=, or += when !set) the int32 lanes of c, times 256 when hi. */
static void qmx__s16_y_flush(int64_t *acc, __m256i c, int hi, int set) {
    __m256i l = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(c));
    __m256i h = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(c, 1));
    if (hi) { l = _mm256_slli_epi64(l, 8); h = _mm256_slli_epi64(h, 8); }
    if (!set) {
        l = _mm256_add_epi64(l, _mm256_loadu_si256((const __m256i *)(const void *)acc));
        h = _mm256_add_epi64(h, _mm256_loadu_si256((const __m256i *)(const void *)(acc + 4)));
    }
    _mm256_storeu_si256((__m256i *)(void *)acc, l);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 4), h);
}
#  define QMX__S16_YDOT(c, a, w) _mm256_add_epi32(c, _mm256_madd_epi16(a, w))
#  define QMX__S16_YW(p) _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)( \
                             wt + (p) * 32 + h * 16)), (p) < pe ? cm : cmt)
#  define QMX__S16_YA(q, p) _mm256_set1_epi32((p) < pe ? qmx__s16_x_pair((q) + 2 * (p)) \
                                                      : qmx__s16_x_last((q) + c1 - 1))

/* 4 rows (row r at a + r * lda, k contiguous; rows >= nr are not stored) x 16 columns, as
 * two halves of 8, over kl of the pair strip wt; columns >= nb masked off. */
static void qmx__s16_y4(const int16_t *a, size_t lda, size_t nr, size_t kl, const int16_t *wt,
                        size_t nb, int wide, int64_t *acc, int first) {
    const int16_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i lo8 = _mm256_set1_epi16(0xFF), ev = _mm256_set1_epi32(0xFFFF);
    size_t c0, p, r, h;
    for (h = 0; h < 2 && h * 8 < nb; h++) {
        const __m256i cm = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(nb - 8 * h)), lane);
        const __m256i cmt = _mm256_and_si256(cm, ev);
        for (c0 = 0; c0 < kl; c0 += QMX__S16_CHUNK) {
            size_t c1 = kl - c0 < QMX__S16_CHUNK ? kl : c0 + QMX__S16_CHUNK, pe = c1 >> 1;
            __m256i z = _mm256_setzero_si256(), s0 = z, s1 = z, s2 = z, s3 = z;
            __m256i t0 = z, t1 = z, t2 = z, t3 = z, c[4], d[4];
            if (!wide) {
                for (p = c0 >> 1; p < pe; p++) {
                    __m256i w = QMX__S16_YW(p);
                    s0 = QMX__S16_YDOT(s0, _mm256_set1_epi32(qmx__s16_x_pair(a0 + 2 * p)), w);
                    s1 = QMX__S16_YDOT(s1, _mm256_set1_epi32(qmx__s16_x_pair(a1 + 2 * p)), w);
                    s2 = QMX__S16_YDOT(s2, _mm256_set1_epi32(qmx__s16_x_pair(a2 + 2 * p)), w);
                    s3 = QMX__S16_YDOT(s3, _mm256_set1_epi32(qmx__s16_x_pair(a3 + 2 * p)), w);
                }
                if (c1 & 1) {
                    __m256i w = QMX__S16_YW(pe);
                    s0 = QMX__S16_YDOT(s0, QMX__S16_YA(a0, pe), w);
                    s1 = QMX__S16_YDOT(s1, QMX__S16_YA(a1, pe), w);
                    s2 = QMX__S16_YDOT(s2, QMX__S16_YA(a2, pe), w);
                    s3 = QMX__S16_YDOT(s3, QMX__S16_YA(a3, pe), w);
                }
            } else {
                for (p = c0 >> 1; p < pe + (c1 & 1); p++) {
                    __m256i w = QMX__S16_YW(p), x;
                    __m256i wl = _mm256_and_si256(w, lo8), wh = _mm256_srai_epi16(w, 8);
                    x = QMX__S16_YA(a0, p);
                    s0 = QMX__S16_YDOT(s0, x, wl); t0 = QMX__S16_YDOT(t0, x, wh);
                    x = QMX__S16_YA(a1, p);
                    s1 = QMX__S16_YDOT(s1, x, wl); t1 = QMX__S16_YDOT(t1, x, wh);
                    x = QMX__S16_YA(a2, p);
                    s2 = QMX__S16_YDOT(s2, x, wl); t2 = QMX__S16_YDOT(t2, x, wh);
                    x = QMX__S16_YA(a3, p);
                    s3 = QMX__S16_YDOT(s3, x, wl); t3 = QMX__S16_YDOT(t3, x, wh);
                }
            }
            c[0] = s0; c[1] = s1; c[2] = s2; c[3] = s3;
            d[0] = t0; d[1] = t1; d[2] = t2; d[3] = t3;
            for (r = 0; r < nr; r++) {
                int64_t *ac = acc + r * QMX__S16_STRIP + h * 8;
                qmx__s16_y_flush(ac, c[r], 0, first && c0 == 0);
                if (wide) qmx__s16_y_flush(ac, d[r], 1, 0);
            }
        }
    }
}
#  undef QMX__S16_YDOT
#  undef QMX__S16_YW
#  undef QMX__S16_YA
#  define QMX__S16_X8 qmx__s16_y4
#endif /* QMX__AVX2 */

#if defined(QMX__NEON64) && !defined(QMX__AVX512) && !defined(QMX__AVX2)
#  define QMX__S16_WIDX(j, k, kl) ((k) * 16 + (j))
#  define QMX__S16_TILE_SIMD 1
#  define QMX__S16_XR 4          /* rows of the register tile */
/* acc[0..3] (=, or += when !set) the int32 lanes of c, times 256 when hi. */
static void qmx__s16_n_flush(int64_t *acc, int32x4_t c, int hi, int set) {
    int64x2_t l = vmovl_s32(vget_low_s32(c)), h = vmovl_high_s32(c);
    if (hi) { l = vshlq_n_s64(l, 8); h = vshlq_n_s64(h, 8); }
    if (!set) { l = vaddq_s64(l, vld1q_s64(acc)); h = vaddq_s64(h, vld1q_s64(acc + 2)); }
    vst1q_s64(acc, l);
    vst1q_s64(acc + 2, h);
}
#  define QMX__S16_N4(X) X(0) X(1) X(2) X(3)
#  define QMX__S16_N8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
/* 4 rows (row r at a + r * lda; rows >= nr not stored) x 16 columns over kl of the k-major
 * strip wt (w_narrow): per k, 16 products per row by vmlal_lane into 4 int32x4. */
#  define QMX__S16_NDECL(r) int32x4_t c##r##0 = z, c##r##1 = z, c##r##2 = z, c##r##3 = z;
#  define QMX__S16_NLD(r) const int16x8_t v##r = vld1q_s16(a + (r) * lda + k);
#  define QMX__S16_NROW(r, l)                                                  \
    c##r##0 = vmlal_laneq_s16(c##r##0, vget_low_s16(w0), v##r, l);             \
    c##r##1 = vmlal_high_laneq_s16(c##r##1, w0, v##r, l);                      \
    c##r##2 = vmlal_laneq_s16(c##r##2, vget_low_s16(w1), v##r, l);             \
    c##r##3 = vmlal_high_laneq_s16(c##r##3, w1, v##r, l);
#  define QMX__S16_NK(l)                                                       \
    w0 = vld1q_s16(wt + (k + (l)) * 16); w1 = vld1q_s16(wt + (k + (l)) * 16 + 8); \
    QMX__S16_NROW(0, l) QMX__S16_NROW(1, l) QMX__S16_NROW(2, l) QMX__S16_NROW(3, l)
#  define QMX__S16_NONE(r)                                                     \
    { int16_t x = a[(r) * lda + k];                                            \
      c##r##0 = vmlal_n_s16(c##r##0, vget_low_s16(w0), x);                     \
      c##r##1 = vmlal_high_n_s16(c##r##1, w0, x);                              \
      c##r##2 = vmlal_n_s16(c##r##2, vget_low_s16(w1), x);                     \
      c##r##3 = vmlal_high_n_s16(c##r##3, w1, x); }
#  define QMX__S16_NOUT(r)                                                     \
    if ((r) < nr) {                                                            \
        qmx__s16_n_flush(acc + (r) * QMX__S16_STRIP, c##r##0, 0, set);         \
        qmx__s16_n_flush(acc + (r) * QMX__S16_STRIP + 4, c##r##1, 0, set);     \
        qmx__s16_n_flush(acc + (r) * QMX__S16_STRIP + 8, c##r##2, 0, set);     \
        qmx__s16_n_flush(acc + (r) * QMX__S16_STRIP + 12, c##r##3, 0, set);    \
    }
static void qmx__s16_n4(const int16_t *a, size_t lda, size_t nr, size_t kl, const int16_t *wt,
                        int64_t *acc, int first) {
    const int32x4_t z = vdupq_n_s32(0);
    size_t c0, k;
    for (c0 = 0; c0 < kl; c0 += QMX__S16_CHUNK) {
        size_t c1 = kl - c0 < QMX__S16_CHUNK ? kl : c0 + QMX__S16_CHUNK;
        int set = first && c0 == 0;
        int16x8_t w0, w1;
        QMX__S16_N4(QMX__S16_NDECL)
        for (k = c0; k + 8 <= c1; k += 8) {
            QMX__S16_N4(QMX__S16_NLD)
            QMX__S16_N8(QMX__S16_NK)
        }
        for (; k < c1; k++) {
            w0 = vld1q_s16(wt + k * 16); w1 = vld1q_s16(wt + k * 16 + 8);
            QMX__S16_N4(QMX__S16_NONE)
        }
        QMX__S16_N4(QMX__S16_NOUT)
    }
}
#  undef QMX__S16_NDECL
#  undef QMX__S16_NROW
#  undef QMX__S16_NK
#  undef QMX__S16_NONE
#  undef QMX__S16_NOUT

/* The same for w_narrow == 0, per half of 8 columns: w = 256 * (w >> 8) + (w & 255), two
 * int32 streams. */
#  define QMX__S16_NDECL(r) int32x4_t s##r##0 = z, s##r##1 = z, t##r##0 = z, t##r##1 = z;
#  define QMX__S16_NROW(r, l)                                                  \
    s##r##0 = vmlal_laneq_s16(s##r##0, vget_low_s16(wl), v##r, l);             \
    s##r##1 = vmlal_high_laneq_s16(s##r##1, wl, v##r, l);                      \
    t##r##0 = vmlal_laneq_s16(t##r##0, vget_low_s16(wh), v##r, l);             \
    t##r##1 = vmlal_high_laneq_s16(t##r##1, wh, v##r, l);
#  define QMX__S16_NK(l)                                                       \
    w = vld1q_s16(wt + (k + (l)) * 16 + 8 * h);                                \
    wl = vandq_s16(w, lo8); wh = vshrq_n_s16(w, 8);                            \
    QMX__S16_NROW(0, l) QMX__S16_NROW(1, l) QMX__S16_NROW(2, l) QMX__S16_NROW(3, l)
#  define QMX__S16_NONE(r)                                                     \
    { int16_t x = a[(r) * lda + k];                                            \
      s##r##0 = vmlal_n_s16(s##r##0, vget_low_s16(wl), x);                     \
      s##r##1 = vmlal_high_n_s16(s##r##1, wl, x);                              \
      t##r##0 = vmlal_n_s16(t##r##0, vget_low_s16(wh), x);                     \
      t##r##1 = vmlal_high_n_s16(t##r##1, wh, x); }
#  define QMX__S16_NOUT(r)                                                     \
    if ((r) < nr) {                                                            \
        int64_t *ac = acc + (r) * QMX__S16_STRIP + 8 * h;                      \
        qmx__s16_n_flush(ac, s##r##0, 0, set);                                 \
        qmx__s16_n_flush(ac + 4, s##r##1, 0, set);                             \
        qmx__s16_n_flush(ac, t##r##0, 1, 0);                                   \
        qmx__s16_n_flush(ac + 4, t##r##1, 1, 0);                               \
    }
static void qmx__s16_n4w(const int16_t *a, size_t lda, size_t nr, size_t kl, const int16_t *wt,
                         size_t nb, int64_t *acc, int first) {
    const int32x4_t z = vdupq_n_s32(0);
    const int16x8_t lo8 = vdupq_n_s16(0xFF);
    size_t c0, k, h;
    for (h = 0; h < 2 && 8 * h < nb; h++)
        for (c0 = 0; c0 < kl; c0 += QMX__S16_CHUNK) {
            size_t c1 = kl - c0 < QMX__S16_CHUNK ? kl : c0 + QMX__S16_CHUNK;
            int set = first && c0 == 0;
            int16x8_t w, wl, wh;
            QMX__S16_N4(QMX__S16_NDECL)
            for (k = c0; k + 8 <= c1; k += 8) {
                QMX__S16_N4(QMX__S16_NLD)
                QMX__S16_N8(QMX__S16_NK)
            }
            for (; k < c1; k++) {
                w = vld1q_s16(wt + k * 16 + 8 * h);
                wl = vandq_s16(w, lo8); wh = vshrq_n_s16(w, 8);
                QMX__S16_N4(QMX__S16_NONE)
            }
            QMX__S16_N4(QMX__S16_NOUT)
        }
}
#  undef QMX__S16_NDECL
#  undef QMX__S16_NLD
#  undef QMX__S16_NROW
#  undef QMX__S16_NK
#  undef QMX__S16_NONE
#  undef QMX__S16_NOUT
#  undef QMX__S16_N4
#  undef QMX__S16_N8
#  define QMX__S16_X8(a, lda, nr, kl, wt, nb, wide, acc, first)                              \
    ((wide) ? qmx__s16_n4w(a, lda, nr, kl, wt, nb, acc, first)                              \
            : qmx__s16_n4(a, lda, nr, kl, wt, acc, first))
#endif /* QMX__NEON64 */

#if defined(QMX__AVX512) || defined(QMX__AVX2) || defined(QMX__NEON64)
/* The tile step on the strip: register tiles of QMX__S16_XR rows; a_k != 1 (rows not
 * contiguous in k) and a last block of fewer rows first copy the block's rows into tmp (the
 * missing rows repeat the last one and are not stored). */
static void qmx__s16_tile_simd(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                               size_t a_k, const int16_t *wt, int w_narrow, int64_t *acc,
                               int first) {
    int16_t tmp[QMX__S16_XR * QMX__S16_KB];
    size_t m, r, k;
    (void)&qmx__s16_tile_portable;   /* the reference of the default layout: not used here */
    for (m = 0; m < mb; m += QMX__S16_XR) {
        size_t nr = mb - m < QMX__S16_XR ? mb - m : QMX__S16_XR;
        int64_t *ac = acc + m * QMX__S16_STRIP;
        if (a_k == 1 && nr == QMX__S16_XR) {
            QMX__S16_X8(a + m * a_row, a_row, nr, kl, wt, nb, !w_narrow, ac, first);
            continue;
        }
#  if defined(QMX__S16_X1)
        if (a_k == 1 && nr == 1) {
            QMX__S16_X1(a + m * a_row, kl, wt, nb, !w_narrow, ac, first);
            continue;
        }
#  endif
        for (r = 0; r < QMX__S16_XR; r++) {
            const int16_t *src = a + (m + (r < nr ? r : nr - 1)) * a_row;
            for (k = 0; k < kl; k++) tmp[r * kl + k] = src[k * a_k];
        }
        QMX__S16_X8(tmp, kl, nr, kl, wt, nb, !w_narrow, ac, first);
    }
}
#endif

/* ---- 16x8 SIMD: Cortex-M4 DSP / Cortex-M55 MVE ------------------------------------------- */
/* (a path defines qmx__s16_tile_simd and QMX__S16_TILE_SIMD here) */
#if defined(QMX__K_DSP) || defined(QMX__K_MVE)
/* Fully-connected on Cortex-M: the int8 weights are read in place, not widened. Widening costs
 * about one instruction per weight, per call at batch 1 (as much as the dot itself), so
 * qmx__s16_widen hands over (QMX__S16_WIDEN_SIMD) and this writes a descriptor of the plain W
 * strip into the workspace instead: a tag no widened value can take (|W - w_zp| <= 255), w_zp,
 * the address of W[n0][k0] in plain W or in the packed blob (16-row panels of 4-k groups),
 * its strides, n0 and k0. The tile step sees the tag and dots the int16 activations with the
 * int8 weights directly, in int32 runs of up to 512 k (QMX__S16_RUN); w_zp enters exactly as
 * - w_zp * sum_k a[k] (int64). Batch matmul (any int16 x int16) takes the widened strip, with
 * 64-bit accumulation (SMLALD / VMLALDAVA: a pair sum of int16 products can reach 2^31). */
#define QMX__S16_DESC_TAG 0x7FFF
typedef struct qmx__s16_desc {
    int16_t tag, pad;
    int32_t w_zp;
    const int8_t *w;  /* W[n0][k0]; byte (c, k) of the strip: w[c * cs + (k / 4) * gs + k % 4] */
    size_t cs, gs, n0, k0;   /* plain W: cs = ldw, gs = 4; packed blob: cs = 4, gs = 64 */
} qmx__s16_desc;
#define QMX__S16_DESC_BYTES 32  /* the descriptor's room at the start of the workspace strip */
/* A run of n <= 512 products a * w, a int16 and w int8 (not W - w_zp), summed in int32 with
 * wraparound (SMLAD, VMLADAVA): each product is in [-2^22 + 2^7, 2^22], so the sum S is in
 * [-2^31 + 2^16, 2^31], and only S = 2^31 wraps, to INT32_MIN, which no other S gives. The
 * exact sum of a run, from its int32 d: */
#define QMX__S16_RUN(d) ((int64_t)(d) + ((d) == INT32_MIN ? ((int64_t)1 << 32) : 0))
static int qmx__s16_widen_simd(const int8_t *W, size_t ldw, const uint8_t *panels, size_t kp,
                               size_t n0, size_t nb, size_t k0, size_t kl, int32_t w_zp,
                               int16_t *wt) {
    qmx__s16_desc d;
    (void)nb; (void)kl;
    d.tag = QMX__S16_DESC_TAG; d.pad = 0; d.w_zp = w_zp; d.n0 = n0; d.k0 = k0;
    if (panels) {   /* 16-row panels of 4-k groups of 64 bytes (n0, k0: multiples of 16, 4) */
        d.w = (const int8_t *)(const void *)(panels + (n0 / 16) * 16 * kp + (k0 / 4) * 64);
        d.cs = 4; d.gs = 64;
    } else {
        d.w = W + n0 * ldw + k0; d.cs = ldw; d.gs = 4;
    }
    __builtin_memcpy(wt, &d, sizeof d);
    return 1;
}
#define QMX__S16_WIDEN_SIMD 1
#endif

#if defined(QMX__K_DSP)
/* Cortex-M4/M7/M33 DSP. Fully-connected: each activation row is laid out in the workspace
 * strip (once per panel and K block when the rows fit, see qmx__s16_dsp_fc) as int16 pairs
 * (a[4g], a[4g+2]), (a[4g+1], a[4g+3]) (as qmx__k_dsp_expand for int8), so that one LDR of 4
 * weights, SXTB16 (bytes 0,2) and SXTB16 ROR #8 (bytes 1,3) feed two SMLADs: 5 instructions
 * per 4 MACs for one row, 7 per 8 for two rows sharing the SXTB16s. int32 runs of up to 512 k
 * (QMX__S16_RUN), added in int64. Loops: 1 row x 4 columns (inline assembly, 13 registers)
 * and 2 rows x 2 columns (naked function, 14 registers), 16 k per iteration; -O0 and
 * QMX_NO_DSP_ASM get the same sums in C with the ACLE intrinsics. Batch matmul (widened
 * strip): SMLALD on int16 pairs of A and of the strip, 64-bit. */
#ifdef __cplusplus
}
#endif
#include <arm_acle.h>
#ifdef __cplusplus
extern "C" {
#endif
static uint32_t qmx__s16_ld32(const void *p) { uint32_t v; __builtin_memcpy(&v, p, 4); return v; }
/* row of kl int16 as pairs (a0,a2),(a1,a3) per 4 k, zero-padded to a multiple of 4 */
static void qmx__s16_dsp_expand(const int16_t *src, size_t kl, uint32_t *dst) {
    size_t g;
    for (g = 0; g + 4 <= kl; g += 4) {
        uint32_t lo = qmx__s16_ld32(src + g), hi = qmx__s16_ld32(src + g + 2);
        dst[g / 2] = (lo & 0xFFFFu) | (hi << 16);
        dst[g / 2 + 1] = (lo >> 16) | (hi & 0xFFFF0000u);
    }
    if (g < kl) {
        uint32_t h[4], t;
        for (t = 0; t < 4; t++) h[t] = g + t < kl ? (uint32_t)(uint16_t)src[g + t] : 0u;
        dst[g / 2] = h[0] | h[2] << 16;
        dst[g / 2 + 1] = h[1] | h[3] << 16;
    }
}
static int32_t qmx__s16_dsp_aval(const uint32_t *x, size_t k) {
    uint32_t w = x[(k >> 2) * 2 + (k & 1)], h = (k & 2) ? w >> 16 : w & 0xFFFFu;
    return (int32_t)h - (h >= 0x8000u ? 65536 : 0);
}
/* d[i][c] += sum over 16 * steps k of x_i[k] * w_c[k], rows i < nr, columns c < nc, in C;
 * the 4 bytes of k group g of column c at w[c] + g * gs */
static void qmx__s16_dsp_c(int nr, int nc, const uint32_t *const *x, const int8_t *const *w,
                           size_t gs, size_t steps, int32_t d[2][4]) {
    size_t k;
    int i, c;
    for (k = 0; k < 16 * steps; k += 4)
        for (c = 0; c < nc; c++) {
            uint32_t v = qmx__s16_ld32(w[c] + (k >> 2) * gs);
            int16x2_t e = __sxtb16(v), o = __sxtb16(v >> 8);
            for (i = 0; i < nr; i++) {
                d[i][c] = __smlad(e, (int16x2_t)x[i][k / 2], d[i][c]);
                d[i][c] = __smlad(o, (int16x2_t)x[i][k / 2 + 1], d[i][c]);
            }
        }
}
#if defined(__OPTIMIZE__) && !defined(QMX_NO_DSP_ASM)
#define QMX__S16_DSP_XA "ldrd %[xe], %[xo], [%[p]], #8\n\t"
#define QMX__S16_DSP_COL(B, S, GS)                                                          \
    "ldr %[v], [%[" B "]], #" GS "\n\tsxtb16 %[t], %[v]\n\t"                                \
    "smlad %[" S "], %[t], %[xe], %[" S "]\n\t"                                             \
    "sxtb16 %[v], %[v], ror #8\n\tsmlad %[" S "], %[v], %[xo], %[" S "]\n\t"
#define QMX__S16_DSP_STEP1(GS)                                                              \
    QMX__S16_DSP_XA QMX__S16_DSP_COL("b0", "s0", GS) QMX__S16_DSP_COL("b1", "s1", GS)       \
    QMX__S16_DSP_COL("b2", "s2", GS) QMX__S16_DSP_COL("b3", "s3", GS)
/* 1 row x 4 columns, steps >= 1 iterations of 16 k: d[0][c] = the sums; the next 4 weights of
 * a column GS bytes on (4: plain W; 64: the packed blob) */
#define QMX__S16_DSP_1X4(NAME, GS)                                                          \
    static void NAME(const uint32_t *x, const int8_t *const *w, size_t steps,               \
                     int32_t d[2][4]) {                                                     \
        const uint32_t *p = x, *volatile pe = x + 8 * steps; /* in memory: 13 registers */  \
        const int8_t *b0 = w[0], *b1 = w[1], *b2 = w[2], *b3 = w[3];                        \
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                             \
        uint32_t xe, xo, v, t;                                                              \
        __asm__("1:\n\t"                                                                    \
                QMX__S16_DSP_STEP1(GS) QMX__S16_DSP_STEP1(GS)                               \
                QMX__S16_DSP_STEP1(GS) QMX__S16_DSP_STEP1(GS)                               \
                "ldr %[t], %[pe]\n\t"                                                       \
                "cmp %[p], %[t]\n\t"                                                        \
                "bne 1b\n\t"                                                                \
                : [p] "+r"(p), [b0] "+r"(b0), [b1] "+r"(b1), [b2] "+r"(b2), [b3] "+r"(b3),  \
                  [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3),               \
                  [xe] "=&r"(xe), [xo] "=&r"(xo), [v] "=&r"(v), [t] "=&r"(t)                \
                : [pe] "m"(pe)                                                              \
                : "cc", "memory");                                                          \
        d[0][0] = s0; d[0][1] = s1; d[0][2] = s2; d[0][3] = s3;                             \
    }
QMX__S16_DSP_1X4(qmx__s16_dsp_1x4, "4")
QMX__S16_DSP_1X4(qmx__s16_dsp_1x4p, "64")
#undef QMX__S16_DSP_1X4
#undef QMX__S16_DSP_XA
#undef QMX__S16_DSP_COL
#undef QMX__S16_DSP_STEP1
/* 2 rows x 2 columns: 14 registers, more than inline assembly gets with a frame pointer, so a
 * naked function saving r4-r11 itself. r0, r1 = the laid-out rows; r2 = {W column c, c+1}; r3
 * = io: io[0] = iterations of 16 k (>= 1) on entry; io[0..3] = (0,c) (0,c+1) (1,c) (1,c+1). */
#define QMX__S16_DSP_NCOL(Q, S0, S1, GS)                                                    \
    "ldr r12, [" Q "], #" GS "\n\tsxtb16 lr, r12\n\tsxtb16 r12, r12, ror #8\n\t"            \
    "smlad " S0 ", lr, r8, " S0 "\n\tsmlad " S0 ", r12, r9, " S0 "\n\t"                     \
    "smlad " S1 ", lr, r10, " S1 "\n\tsmlad " S1 ", r12, r11, " S1 "\n\t"
#define QMX__S16_DSP_NSTEP(GS)                                                              \
    "ldrd r8, r9, [r0], #8\n\tldrd r10, r11, [r1], #8\n\t"                                  \
    QMX__S16_DSP_NCOL("r2", "r4", "r6", GS) QMX__S16_DSP_NCOL("r3", "r5", "r7", GS)
#define QMX__S16_UNUSED __attribute__((unused))
#define QMX__S16_DSP_2X2(NAME, GS)                                                          \
    __attribute__((naked, noinline)) static void NAME(                                      \
        const uint32_t *x0 QMX__S16_UNUSED, const uint32_t *x1 QMX__S16_UNUSED,             \
        const int8_t *const *q QMX__S16_UNUSED, int32_t *io QMX__S16_UNUSED) {              \
        __asm__("push {r4-r11, lr}\n\t"                                                     \
                "sub sp, sp, #8\n\t"                                                        \
                "str r3, [sp]\n\t"                                                          \
                "ldr r12, [r3]\n\t"                                                         \
                "add r12, r0, r12, lsl #5\n\t"                                              \
                "str r12, [sp, #4]\n\t"                                                     \
                "ldr r3, [r2, #4]\n\t"                                                      \
                "ldr r2, [r2]\n\t"                                                          \
                "movs r4, #0\n\tmovs r5, #0\n\tmovs r6, #0\n\tmovs r7, #0\n\t"              \
                "1:\n\t"                                                                    \
                QMX__S16_DSP_NSTEP(GS) QMX__S16_DSP_NSTEP(GS)                               \
                QMX__S16_DSP_NSTEP(GS) QMX__S16_DSP_NSTEP(GS)                               \
                "ldr r12, [sp, #4]\n\t"                                                     \
                "cmp r0, r12\n\t"                                                           \
                "bne 1b\n\t"                                                                \
                "ldr r3, [sp]\n\t"                                                          \
                "str r4, [r3]\n\tstr r5, [r3, #4]\n\t"                                      \
                "str r6, [r3, #8]\n\tstr r7, [r3, #12]\n\t"                                 \
                "add sp, sp, #8\n\t"                                                        \
                "pop {r4-r11, pc}\n\t");                                                    \
    }
QMX__S16_DSP_2X2(qmx__s16_dsp_2x2, "4")
QMX__S16_DSP_2X2(qmx__s16_dsp_2x2p, "64")
#undef QMX__S16_DSP_2X2
#undef QMX__S16_UNUSED
#undef QMX__S16_DSP_NCOL
#undef QMX__S16_DSP_NSTEP
#define QMX__S16_DSP_ASM 1
#endif
/* d[i][c] = sum_{k < cl} x_i[k] * w_c[k] (x laid out; w int8, k group g of column c at w[c] +
 * g * gs, gs 4 or 64; cl <= 512: QMX__S16_RUN) */
static void qmx__s16_dsp_run(int nr, int nc, const uint32_t *const *x, const int8_t *const *w,
                             size_t gs, size_t cl, int32_t d[2][4]) {
    size_t steps = cl / 16, k;
    int i, c;
#if defined(QMX__S16_DSP_ASM)
    if (steps && nr == 1 && nc == 4) {
        if (gs == 4) qmx__s16_dsp_1x4(x[0], w, steps, d);
        else qmx__s16_dsp_1x4p(x[0], w, steps, d);
    } else if (steps && nr == 2 && nc == 2) {
        int32_t io[4];
        io[0] = (int32_t)steps;
        if (gs == 4) qmx__s16_dsp_2x2(x[0], x[1], w, io);
        else qmx__s16_dsp_2x2p(x[0], x[1], w, io);
        d[0][0] = io[0]; d[0][1] = io[1]; d[1][0] = io[2]; d[1][1] = io[3];
    } else
#endif
    {
        for (i = 0; i < nr; i++)
            for (c = 0; c < nc; c++) d[i][c] = 0;
        qmx__s16_dsp_c(nr, nc, x, w, gs, steps, d);
    }
    for (k = 16 * steps; k < cl; k++)
        for (i = 0; i < nr; i++)
            for (c = 0; c < nc; c++)
                d[i][c] += qmx__s16_dsp_aval(x[i], k) * w[c][(k >> 2) * gs + (k & 3)];
}
/* The laid-out rows live in the workspace strip after the descriptor. When they fit, those of
 * the whole panel are kept for every K block (slot k0 / 512, from byte 64): laid out by the
 * strip n0 == 0 (the first the fully-connected visits for each panel and K block) and reused
 * by the others, which saves the layout per strip. Else two rows at a time, per strip, in the
 * last 2 * rowb bytes of the strip, which no slot reaches (a slot fits or not the same way for
 * every strip; with several K blocks some slots may fit and later ones not). */
static void qmx__s16_dsp_fc(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                            const int16_t *wt, int64_t *acc, int first) {
    qmx__s16_desc dsc;
    unsigned char *base = (unsigned char *)(uintptr_t)wt;
    size_t m, j, k, pitch = 2 * qmx__k_r4(kl), cap, rowb, stride, slot;
    int i, c, cached;
    __builtin_memcpy(&dsc, wt, sizeof dsc);
    /* bytes of the strip (qmx__s16_ws): the first K block has kl = min(K, QMX__S16_KB) */
    cap = qmx__k_r64(2u * QMX__S16_STRIP * (dsc.k0 ? QMX__S16_KB : kl));
    rowb = 2 * qmx__k_r4(dsc.k0 ? QMX__S16_KB : kl);   /* >= pitch; cap - 2 * rowb >= 48 */
    stride = mb * rowb;
    slot = dsc.k0 / QMX__S16_KB;
    cached = 64 + 2 * rowb <= cap && stride <= (cap - 64 - 2 * rowb) / (slot + 1);
    if (cached && dsc.n0 == 0)
        for (m = 0; m < mb; m++)
            qmx__s16_dsp_expand(a + m * a_row, kl,
                                (uint32_t *)(void *)(base + 64 + slot * stride + m * pitch));
    for (m = 0; m < mb; m += 2) {
        int nr = mb - m >= 2 ? 2 : 1;
        int64_t corr[2] = {0, 0};
        uint32_t *xb[2];
        for (i = 0; i < nr; i++) {
            if (cached) {
                xb[i] = (uint32_t *)(void *)(base + 64 + slot * stride + (m + (size_t)i) * pitch);
            } else {   /* after the descriptor (32 bytes) and every slot */
                xb[i] = (uint32_t *)(void *)(base + cap - 2 * rowb + (size_t)i * pitch);
                qmx__s16_dsp_expand(a + (m + (size_t)i) * a_row, kl, xb[i]);
            }
            if (dsc.w_zp) {
                int32_t sa = 0;   /* |sa| <= 512 * 2^15 */
                for (k = 0; k < pitch / 4; k++) sa = __smlad((int16x2_t)xb[i][k], 0x00010001, sa);
                corr[i] = (int64_t)dsc.w_zp * sa;
            }
        }
        j = 0;
        if (kl <= 512) {   /* the common cases, lean */
            const uint32_t *xc[2];
            int64_t *o = acc + m * QMX__S16_STRIP, b0 = corr[0], b1 = corr[1];
            const int8_t *wc[4];
            int32_t d[2][4];
            xc[0] = xb[0]; xc[1] = xb[nr - 1];
            if (nr == 1) {
                for (; j + 4 <= nb; j += 4, o += 4) {
                    wc[0] = dsc.w + j * dsc.cs; wc[1] = wc[0] + dsc.cs;
                    wc[2] = wc[1] + dsc.cs; wc[3] = wc[2] + dsc.cs;
                    qmx__s16_dsp_run(1, 4, xc, wc, dsc.gs, kl, d);
                    if (first) {
                        o[0] = QMX__S16_RUN(d[0][0]) - b0; o[1] = QMX__S16_RUN(d[0][1]) - b0;
                        o[2] = QMX__S16_RUN(d[0][2]) - b0; o[3] = QMX__S16_RUN(d[0][3]) - b0;
                    } else {
                        o[0] += QMX__S16_RUN(d[0][0]) - b0; o[1] += QMX__S16_RUN(d[0][1]) - b0;
                        o[2] += QMX__S16_RUN(d[0][2]) - b0; o[3] += QMX__S16_RUN(d[0][3]) - b0;
                    }
                }
            } else {
                for (; j + 2 <= nb; j += 2, o += 2) {
                    wc[0] = dsc.w + j * dsc.cs; wc[1] = wc[0] + dsc.cs;
                    qmx__s16_dsp_run(2, 2, xc, wc, dsc.gs, kl, d);
                    if (first) {
                        o[0] = QMX__S16_RUN(d[0][0]) - b0; o[1] = QMX__S16_RUN(d[0][1]) - b0;
                        o[QMX__S16_STRIP] = QMX__S16_RUN(d[1][0]) - b1;
                        o[QMX__S16_STRIP + 1] = QMX__S16_RUN(d[1][1]) - b1;
                    } else {
                        o[0] += QMX__S16_RUN(d[0][0]) - b0; o[1] += QMX__S16_RUN(d[0][1]) - b0;
                        o[QMX__S16_STRIP] += QMX__S16_RUN(d[1][0]) - b1;
                        o[QMX__S16_STRIP + 1] += QMX__S16_RUN(d[1][1]) - b1;
                    }
                }
            }
        }
        while (j < nb) {
            int nc = nr == 2 ? (nb - j >= 2 ? 2 : 1) : (nb - j >= 4 ? 4 : 1);
            const int8_t *wc[4];
            const uint32_t *xc[2];
            size_t c0;
            for (c0 = 0; c0 < kl; c0 += 512) {   /* int32 runs of 512 k (QMX__S16_RUN) */
                size_t cl = kl - c0 < 512 ? kl - c0 : 512;
                int32_t d[2][4];
                for (i = 0; i < nr; i++) xc[i] = xb[i] + c0 / 2;
                for (c = 0; c < nc; c++)
                    wc[c] = dsc.w + (j + (size_t)c) * dsc.cs + (c0 >> 2) * dsc.gs;
                qmx__s16_dsp_run(nr, nc, xc, wc, dsc.gs, cl, d);
                for (i = 0; i < nr; i++) {
                    int64_t *o = acc + (m + (size_t)i) * QMX__S16_STRIP + j;
                    int64_t b = c0 ? 0 : corr[i];
                    if (c0 == 0 && first)
                        for (c = 0; c < nc; c++) o[c] = QMX__S16_RUN(d[i][c]) - b;
                    else
                        for (c = 0; c < nc; c++) o[c] += QMX__S16_RUN(d[i][c]) - b;
                }
            }
            j += (size_t)nc;
        }
    }
}
/* widened strip, a_k == 1: SMLALD on int16 pairs, 1 row x 2 columns */
static void qmx__s16_dsp_wide(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                              const int16_t *wt, int64_t *acc, int first) {
    size_t m, j, k;
    for (m = 0; m < mb; m++) {
        const int16_t *x = a + m * a_row;
        for (j = 0; j < nb; j += 2) {
            const int16_t *w0 = wt + j * kl, *w1 = j + 1 < nb ? w0 + kl : w0;
            int64_t s0 = 0, s1 = 0, *o = acc + m * QMX__S16_STRIP + j;
            for (k = 0; k + 8 <= kl; k += 8) {
                int16x2_t x0 = (int16x2_t)qmx__s16_ld32(x + k);
                int16x2_t x1 = (int16x2_t)qmx__s16_ld32(x + k + 2);
                int16x2_t x2 = (int16x2_t)qmx__s16_ld32(x + k + 4);
                int16x2_t x3 = (int16x2_t)qmx__s16_ld32(x + k + 6);
                s0 = __smlald(x0, (int16x2_t)qmx__s16_ld32(w0 + k), s0);
                s1 = __smlald(x0, (int16x2_t)qmx__s16_ld32(w1 + k), s1);
                s0 = __smlald(x1, (int16x2_t)qmx__s16_ld32(w0 + k + 2), s0);
                s1 = __smlald(x1, (int16x2_t)qmx__s16_ld32(w1 + k + 2), s1);
                s0 = __smlald(x2, (int16x2_t)qmx__s16_ld32(w0 + k + 4), s0);
                s1 = __smlald(x2, (int16x2_t)qmx__s16_ld32(w1 + k + 4), s1);
                s0 = __smlald(x3, (int16x2_t)qmx__s16_ld32(w0 + k + 6), s0);
                s1 = __smlald(x3, (int16x2_t)qmx__s16_ld32(w1 + k + 6), s1);
            }
            for (; k + 2 <= kl; k += 2) {
                int16x2_t xv = (int16x2_t)qmx__s16_ld32(x + k);
                s0 = __smlald(xv, (int16x2_t)qmx__s16_ld32(w0 + k), s0);
                s1 = __smlald(xv, (int16x2_t)qmx__s16_ld32(w1 + k), s1);
            }
            if (k < kl) { s0 += (int32_t)x[k] * w0[k]; s1 += (int32_t)x[k] * w1[k]; }
            o[0] = first ? s0 : o[0] + s0;
            if (j + 1 < nb) o[1] = first ? s1 : o[1] + s1;
        }
    }
}
static void qmx__s16_tile_simd(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                               size_t a_k, const int16_t *wt, int w_narrow, int64_t *acc,
                               int first) {
    if (w_narrow && a_k == 1 && wt[0] == QMX__S16_DESC_TAG)
        qmx__s16_dsp_fc(mb, nb, kl, a, a_row, wt, acc, first);
    else if (a_k == 1)
        qmx__s16_dsp_wide(mb, nb, kl, a, a_row, wt, acc, first);
    else
        qmx__s16_tile_portable(mb, nb, kl, a, a_row, a_k, wt, w_narrow, acc, first);
}
#define QMX__S16_TILE_SIMD 1

#elif defined(QMX__K_MVE)
/* Cortex-M55 MVE. Fully-connected: one VLDRH of 8 int16 activations per row, and per column
 * a widening VLDRB.S16 of 8 int8 weights and VMLADAVA (int32 dot of 8 pairs; runs of up to
 * 512 k, QMX__S16_RUN), added in int64; the K tail predicated (VCTP). 1 row x 4 columns (C
 * intrinsics: 10 instructions per 32 MACs) and 2 rows x 3 columns (assembly: 12 per 48).
 * Widened strips (packed blob, batch matmul): VMLALDAVA (64-bit) on int16 x int16, 1 row x 2
 * columns. */
/* d[c] = sum_{k < cl} x[k] * w_c[k], c < nc (4 or 1); cl <= 512: QMX__S16_RUN */
static void qmx__s16_mve_run(int nc, const int16_t *x, const int8_t *const *w, size_t cl,
                             int32_t d[4]) {
    const int8_t *p0 = w[0];
    int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    size_t n = cl / 8;
    if (nc == 4) {
        const int8_t *p1 = w[1], *p2 = w[2], *p3 = w[3];
        while (n--) {
            int16x8_t xv = vld1q_s16(x);
            x += 8;
            d0 = vmladavaq_s16(d0, xv, vldrbq_s16(p0)); p0 += 8;
            d1 = vmladavaq_s16(d1, xv, vldrbq_s16(p1)); p1 += 8;
            d2 = vmladavaq_s16(d2, xv, vldrbq_s16(p2)); p2 += 8;
            d3 = vmladavaq_s16(d3, xv, vldrbq_s16(p3)); p3 += 8;
        }
        if (cl & 7) { /* predicated: nothing past cl is read */
            mve_pred16_t p = vctp16q((uint32_t)(cl & 7));
            int16x8_t xv = vldrhq_z_s16(x, p);
            d0 = vmladavaq_s16(d0, xv, vldrbq_z_s16(p0, p));
            d1 = vmladavaq_s16(d1, xv, vldrbq_z_s16(p1, p));
            d2 = vmladavaq_s16(d2, xv, vldrbq_z_s16(p2, p));
            d3 = vmladavaq_s16(d3, xv, vldrbq_z_s16(p3, p));
        }
        d[1] = d1; d[2] = d2; d[3] = d3;
    } else {
        while (n--) {
            d0 = vmladavaq_s16(d0, vld1q_s16(x), vldrbq_s16(p0));
            x += 8; p0 += 8;
        }
        if (cl & 7) {
            mve_pred16_t p = vctp16q((uint32_t)(cl & 7));
            d0 = vmladavaq_s16(d0, vldrhq_z_s16(x, p), vldrbq_z_s16(p0, p));
        }
    }
    d[0] = d0;
}
/* The same on the packed blob: k group g (4 k) of column c at p + 64 g + 4 c, so 8 k of a
 * column are one gather (VLDRB.S16 with offsets 0..3, 64..67), all columns off one pointer */
static void qmx__s16_mve_runp(int nc, const int16_t *x, const int8_t *p, size_t cl,
                              int32_t d[4]) {
    uint16x8_t i = vidupq_n_u16(0, 1);
    uint16x8_t o0 = vaddq_u16(vandq_u16(i, vdupq_n_u16(3)), vshlq_n_u16(vshrq_n_u16(i, 2), 6));
    uint16x8_t o1 = vaddq_n_u16(o0, 4), o2 = vaddq_n_u16(o0, 8), o3 = vaddq_n_u16(o0, 12);
    int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    size_t n = cl / 8;
    while (n--) {
        int16x8_t xv = vld1q_s16(x);
        x += 8;
        d0 = vmladavaq_s16(d0, xv, vldrbq_gather_offset_s16(p, o0));
        if (nc == 4) {
            d1 = vmladavaq_s16(d1, xv, vldrbq_gather_offset_s16(p, o1));
            d2 = vmladavaq_s16(d2, xv, vldrbq_gather_offset_s16(p, o2));
            d3 = vmladavaq_s16(d3, xv, vldrbq_gather_offset_s16(p, o3));
        }
        p += 128;
    }
    if (cl & 7) { /* predicated: nothing past cl is read */
        mve_pred16_t q = vctp16q((uint32_t)(cl & 7));
        int16x8_t xv = vldrhq_z_s16(x, q);
        d0 = vmladavaq_s16(d0, xv, vldrbq_gather_offset_z_s16(p, o0, q));
        if (nc == 4) {
            d1 = vmladavaq_s16(d1, xv, vldrbq_gather_offset_z_s16(p, o1, q));
            d2 = vmladavaq_s16(d2, xv, vldrbq_gather_offset_z_s16(p, o2, q));
            d3 = vmladavaq_s16(d3, xv, vldrbq_gather_offset_z_s16(p, o3, q));
        }
    }
    d[0] = d0; d[1] = d1; d[2] = d2; d[3] = d3;
}
#if defined(__OPTIMIZE__) && !defined(QMX_NO_DSP_ASM)
/* 2 rows x 3 columns, 8 k per iteration: 6 accumulators (VMLADAVA takes even registers only,
 * r0-r10), 5 pointers in odd registers, the low-overhead loop in lr: a naked function.
 * r0, r1 = the activation rows; r2 = {W column c, c+1, c+2}; r3 = io: io[0] = iterations (>=
 * 1) on entry; io[0..5] = (0,c) (0,c+1) (0,c+2) (1,c) (1,c+1) (1,c+2) on return. */
#define QMX__S16_UNUSED __attribute__((unused))
__attribute__((naked, noinline)) static void qmx__s16_mve_2x3(const int16_t *x0 QMX__S16_UNUSED,
                                                              const int16_t *x1 QMX__S16_UNUSED,
                                                              const int8_t *const *q QMX__S16_UNUSED,
                                                              int32_t *io QMX__S16_UNUSED) {
    __asm__("push {r4-r11, lr}\n\t"
            "mov r11, r0\n\t"
            "mov r12, r3\n\t"
            "ldr r9, [r3]\n\t"
            "ldr r3, [r2]\n\t"
            "ldr r5, [r2, #4]\n\t"
            "ldr r7, [r2, #8]\n\t"
            "movs r0, #0\n\tmovs r2, #0\n\tmovs r4, #0\n\tmovs r6, #0\n\t"
            "mov r8, r0\n\tmov r10, r0\n\t"
            "dls lr, r9\n\t"
            "1:\n\t"
            "vldrh.u16 q0, [r11], #16\n\t"
            "vldrh.u16 q1, [r1], #16\n\t"
            "vldrb.s16 q2, [r3], #8\n\t"
            "vmlava.s16 r0, q0, q2\n\t"
            "vmlava.s16 r6, q1, q2\n\t"
            "vldrb.s16 q3, [r5], #8\n\t"
            "vmlava.s16 r2, q0, q3\n\t"
            "vmlava.s16 r8, q1, q3\n\t"
            "vldrb.s16 q2, [r7], #8\n\t"
            "vmlava.s16 r4, q0, q2\n\t"
            "vmlava.s16 r10, q1, q2\n\t"
            "le lr, 1b\n\t"
            "str r0, [r12]\n\tstr r2, [r12, #4]\n\tstr r4, [r12, #8]\n\t"
            "str r6, [r12, #12]\n\tstr r8, [r12, #16]\n\tstr r10, [r12, #20]\n\t"
            "pop {r4-r11, pc}\n\t");
}
#undef QMX__S16_UNUSED
#define QMX__S16_MVE_ASM 1
#endif
/* Rows in pairs (2 x 3 columns, the assembly above) when built with it and W is plain, else
 * one at a time (1 x 4 columns; gathers on the packed blob); leftover columns one at a time. */
static void qmx__s16_mve_fc(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                            const int16_t *wt, int64_t *acc, int first) {
    qmx__s16_desc dsc;
    size_t m, j, k;
    int nr, i, c;
    __builtin_memcpy(&dsc, wt, sizeof dsc);
    for (m = 0; m < mb; m += (size_t)nr) {
        const int16_t *x[2];
        int64_t corr[2] = {0, 0};
#if defined(QMX__S16_MVE_ASM)
        nr = mb - m >= 2 && dsc.gs == 4 ? 2 : 1;
#else
        nr = 1;
#endif
        for (i = 0; i < nr; i++) {
            x[i] = a + (m + (size_t)i) * a_row;
            if (dsc.w_zp) {
                int32_t sa = 0;   /* |sa| <= 512 * 2^15 */
                for (k = 0; k + 8 <= kl; k += 8) sa = vaddvaq_s16(sa, vld1q_s16(x[i] + k));
                for (; k < kl; k++) sa += x[i][k];
                corr[i] = (int64_t)dsc.w_zp * sa;
            }
        }
        j = 0;
        if (nr == 1 && kl <= 512) {   /* the common case at batch 1, lean */
            int64_t *o = acc + m * QMX__S16_STRIP, b = corr[0];
            for (; j + 4 <= nb; j += 4, o += 4) {
                const int8_t *wc[4];
                int32_t d[4];
                wc[0] = dsc.w + j * dsc.cs; wc[1] = wc[0] + dsc.cs;
                wc[2] = wc[1] + dsc.cs; wc[3] = wc[2] + dsc.cs;
                if (dsc.gs == 4) qmx__s16_mve_run(4, x[0], wc, kl, d);
                else qmx__s16_mve_runp(4, x[0], wc[0], kl, d);
                if (first) {
                    o[0] = QMX__S16_RUN(d[0]) - b; o[1] = QMX__S16_RUN(d[1]) - b;
                    o[2] = QMX__S16_RUN(d[2]) - b; o[3] = QMX__S16_RUN(d[3]) - b;
                } else {
                    o[0] += QMX__S16_RUN(d[0]) - b; o[1] += QMX__S16_RUN(d[1]) - b;
                    o[2] += QMX__S16_RUN(d[2]) - b; o[3] += QMX__S16_RUN(d[3]) - b;
                }
            }
        }
#if defined(QMX__S16_MVE_ASM)
        if (nr == 2 && kl >= 8 && kl % 8 == 0 && kl <= 512) {   /* batch > 1, lean */
            int64_t *o = acc + m * QMX__S16_STRIP, b0 = corr[0], b1 = corr[1];
            int32_t io[6];
            for (; j + 3 <= nb; j += 3, o += 3) {
                const int8_t *wc[3];
                wc[0] = dsc.w + j * dsc.cs; wc[1] = wc[0] + dsc.cs; wc[2] = wc[1] + dsc.cs;
                io[0] = (int32_t)(kl / 8);
                qmx__s16_mve_2x3(x[0], x[1], wc, io);
                if (first) {
                    o[0] = QMX__S16_RUN(io[0]) - b0; o[1] = QMX__S16_RUN(io[1]) - b0;
                    o[2] = QMX__S16_RUN(io[2]) - b0;
                    o[QMX__S16_STRIP] = QMX__S16_RUN(io[3]) - b1;
                    o[QMX__S16_STRIP + 1] = QMX__S16_RUN(io[4]) - b1;
                    o[QMX__S16_STRIP + 2] = QMX__S16_RUN(io[5]) - b1;
                } else {
                    o[0] += QMX__S16_RUN(io[0]) - b0; o[1] += QMX__S16_RUN(io[1]) - b0;
                    o[2] += QMX__S16_RUN(io[2]) - b0;
                    o[QMX__S16_STRIP] += QMX__S16_RUN(io[3]) - b1;
                    o[QMX__S16_STRIP + 1] += QMX__S16_RUN(io[4]) - b1;
                    o[QMX__S16_STRIP + 2] += QMX__S16_RUN(io[5]) - b1;
                }
            }
        }
#endif
        while (j < nb) {
            int nc = nb - j >= (nr == 2 ? 3u : 4u) ? (nr == 2 ? 3 : 4) : 1;
            const int8_t *wc[4];
            size_t c0;
            for (c0 = 0; c0 < kl; c0 += 512) {   /* int32 runs of 512 k (QMX__S16_RUN) */
                size_t cl = kl - c0 < 512 ? kl - c0 : 512, k8 = 0;
                int32_t d[2][4];
                for (c = 0; c < nc; c++)
                    wc[c] = dsc.w + (j + (size_t)c) * dsc.cs + (c0 >> 2) * dsc.gs;
#if defined(QMX__S16_MVE_ASM)
                if (nr == 2 && nc == 3) {
                    int32_t io[6];
                    k8 = cl & ~(size_t)7;
                    for (c = 0; c < 3; c++) d[0][c] = d[1][c] = 0;
                    if (k8) {
                        io[0] = (int32_t)(k8 / 8);
                        qmx__s16_mve_2x3(x[0] + c0, x[1] + c0, wc, io);
                        for (c = 0; c < 3; c++) { d[0][c] = io[c]; d[1][c] = io[3 + c]; }
                    }
                }
#endif
                for (i = 0; i < nr; i++) {
                    int64_t *o = acc + (m + (size_t)i) * QMX__S16_STRIP + j;
                    int64_t b = c0 ? 0 : corr[i];
                    if (nc != 3 && dsc.gs != 4) {
                        qmx__s16_mve_runp(nc, x[i] + c0, wc[0], cl, d[i]);
                    } else if (nc != 3) {
                        qmx__s16_mve_run(nc, x[i] + c0, wc, cl, d[i]);
                    } else if (k8 < cl) {   /* the 2 x 3 tail (plain W) */
                        for (c = 0; c < nc; c++) {
                            const int8_t *wt1 = wc[c] + k8;
                            int32_t t[4];
                            qmx__s16_mve_run(1, x[i] + c0 + k8, &wt1, cl - k8, t);
                            d[i][c] = (int32_t)((uint32_t)d[i][c] + (uint32_t)t[0]);
                        }
                    }
                    if (c0 == 0 && first)
                        for (c = 0; c < nc; c++) o[c] = QMX__S16_RUN(d[i][c]) - b;
                    else
                        for (c = 0; c < nc; c++) o[c] += QMX__S16_RUN(d[i][c]) - b;
                }
            }
            j += (size_t)nc;
        }
    }
}
static void qmx__s16_mve_wide(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                              const int16_t *wt, int64_t *acc, int first) {
    size_t m, j, k;
    for (m = 0; m < mb; m++) {
        const int16_t *x = a + m * a_row;
        for (j = 0; j < nb; j += 2) {
            const int16_t *w0 = wt + j * kl, *w1 = j + 1 < nb ? w0 + kl : w0;
            int64_t s0 = 0, s1 = 0, *o = acc + m * QMX__S16_STRIP + j;
            for (k = 0; k + 8 <= kl; k += 8) {
                int16x8_t xv = vld1q_s16(x + k);
                s0 = vmlaldavaq_s16(s0, xv, vld1q_s16(w0 + k));
                s1 = vmlaldavaq_s16(s1, xv, vld1q_s16(w1 + k));
            }
            if (k < kl) {
                mve_pred16_t p = vctp16q((uint32_t)(kl - k));
                int16x8_t xv = vldrhq_z_s16(x + k, p);
                s0 = vmlaldavaq_s16(s0, xv, vldrhq_z_s16(w0 + k, p));
                s1 = vmlaldavaq_s16(s1, xv, vldrhq_z_s16(w1 + k, p));
            }
            o[0] = first ? s0 : o[0] + s0;
            if (j + 1 < nb) o[1] = first ? s1 : o[1] + s1;
        }
    }
}
static void qmx__s16_tile_simd(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                               size_t a_k, const int16_t *wt, int w_narrow, int64_t *acc,
                               int first) {
    if (w_narrow && a_k == 1 && wt[0] == QMX__S16_DESC_TAG)
        qmx__s16_mve_fc(mb, nb, kl, a, a_row, wt, acc, first);
    else if (a_k == 1)
        qmx__s16_mve_wide(mb, nb, kl, a, a_row, wt, acc, first);
    else
        qmx__s16_tile_portable(mb, nb, kl, a, a_row, a_k, wt, w_narrow, acc, first);
}
#define QMX__S16_TILE_SIMD 1
#endif /* 16x8: DSP / MVE */

/* Index of (column j, k) in the widened strip of kl k values; a SIMD path above may define
 * its own layout (then its tile step handles every case, the portable one is not called). */
#ifndef QMX__S16_WIDX
#  define QMX__S16_WIDX(j, k, kl) ((j) * (kl) + (k))
#endif

static void qmx__s16_tile(size_t mb, size_t nb, size_t kl, const int16_t *a, size_t a_row,
                          size_t a_k, const int16_t *wt, int w_narrow, int64_t *acc,
                          int first) {
#if defined(QMX__S16_TILE_SIMD)
    qmx__s16_tile_simd(mb, nb, kl, a, a_row, a_k, wt, w_narrow, acc, first);
#else
    qmx__s16_tile_portable(mb, nb, kl, a, a_row, a_k, wt, w_narrow, acc, first);
#endif
}

/* Rows n0 .. n0+nb-1, k in [k0, k0 + kl), of W - w_zp (plain [N,K] with stride ldw, or the
 * int8 blob) as int16 [nb][kl] into wt. */
static void qmx__s16_widen(const int8_t *W, size_t ldw, const uint8_t *panels, size_t kp,
                           size_t n0, size_t nb, size_t k0, size_t kl, int32_t w_zp,
                           int16_t *wt) {
    size_t j, k;
#if defined(QMX__S16_WIDEN_SIMD)
    if (qmx__s16_widen_simd(W, ldw, panels, kp, n0, nb, k0, kl, w_zp, wt)) return;
#endif
    for (j = 0; j < nb; j++) {
        size_t n = n0 + j;
        for (k = k0; k < k0 + kl; k++) {
            int32_t w;
            if (panels) {
                const uint8_t *g = panels + (n / 16) * 16 * kp + (k / 4) * 64;
                w = (int32_t)g[4 * (n % 16) + k % 4];
                if (w > 127) w -= 256;
            } else {
                w = W[n * ldw + k];
            }
            wt[QMX__S16_WIDX(j, k - k0, kl)] = (int16_t)(w - w_zp);
        }
    }
}

/* out holds columns [n_off, n_off + N) of an n_blob-column output (USING SEVERAL CORES: W, the
 * blob and rq cover all n_blob; n_off a multiple of 16); the serial call: 0, N. Mode
 * QMX__PAR_CHECK / _CHECK_DATA: the arguments only. */
static qmx_status qmx__s16_fc(size_t M, size_t N, size_t K, const int16_t *A, size_t lda,
                              const int8_t *W, size_t ldw, const void *packed,
                              size_t packed_bytes, int32_t w_zp,
                              const qmx_requant64_config *rq, int16_t *out, size_t ldo,
                              void *workspace, size_t workspace_bytes, size_t n_off,
                              size_t n_blob, int mode) {
    size_t need, m, m0, n0, k0, j, kp = 0;
    int32_t amin, amax;
    int16_t *wt;
    int64_t *acc;
    const uint8_t *panels = NULL;
    qmx_status st;
    if (!A || (!W && !packed) || !out || !rq || !workspace) return QMX_ERR_NULL;
    if (w_zp < -128 || w_zp > 127) return QMX_ERR_ARG;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_FC_I16_MAX_K) return QMX_ERR_OVERFLOW;
    if (n_off % QMX__S16_STRIP || n_off > n_blob || N > n_blob - n_off)
        return QMX_ERR_SHAPE;   /* not reached */
    if (packed) {
        st = qmx__k_pk_check(packed, packed_bytes, n_blob, K);
        if (st != QMX_OK) return st;
        kp = qmx__k_r4(K);
        panels = (const uint8_t *)packed + QMX_MATMUL_I8_PACK_HEADER + 4u * qmx__k_r16(n_blob);
    }
    if (lda < K || (!packed && ldw < K) || ldo < N) return QMX_ERR_SHAPE;
    if (!qmx__k_extent(M, K, lda) || qmx__k_extent(M, K, lda) > SIZE_MAX / 2 ||
        (!packed && !qmx__k_extent(n_blob, K, ldw)) || !qmx__k_extent(M, N, ldo) ||
        qmx__k_extent(M, N, ldo) > SIZE_MAX / 2)
        return QMX_ERR_OVERFLOW;
    st = qmx__s16_rq_check(rq, n_blob, &amin, &amax);
    if (st != QMX_OK || mode != QMX__PAR_RUN) return st;
    st = qmx_fully_connected_i16_workspace_size(M, N, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    wt = (int16_t *)(void *)((unsigned char *)workspace +
                             ((64u - ((uintptr_t)workspace & 63u)) & 63u));
    acc = (int64_t *)(void *)((unsigned char *)wt +
                              qmx__k_r64(2u * QMX__S16_STRIP *
                                         (K < QMX__S16_KB ? K : QMX__S16_KB)));
    /* panel of <= 64 rows > strip of 16 columns > K block of 512 (widened once per panel) */
    for (m0 = 0; m0 < M; m0 += QMX__S16_MB) {
        size_t mb = M - m0 < QMX__S16_MB ? M - m0 : QMX__S16_MB;
        for (n0 = n_off; n0 < n_off + N; n0 += QMX__S16_STRIP) {   /* n0: a column of W */
            size_t nb = n_off + N - n0 < QMX__S16_STRIP ? n_off + N - n0 : QMX__S16_STRIP;
            for (k0 = 0; k0 < K; k0 += QMX__S16_KB) {
                size_t kl = K - k0 < QMX__S16_KB ? K - k0 : QMX__S16_KB;
                /* W from row n_off, strips numbered from the call's first (the Cortex-M
                 * paths lay out the activation rows at strip 0 and reuse them) */
                qmx__s16_widen(W ? W + n_off * ldw : W, ldw,
                               panels ? panels + n_off * kp : panels, kp, n0 - n_off, nb, k0, kl,
                               w_zp, wt);
                qmx__s16_tile(mb, nb, kl, A + m0 * lda + k0, lda, 1, wt, 1, acc, k0 == 0);
            }
#if defined(QMX__S16_STAGE_SIMD)
            qmx__s16_stage_simd(acc, mb, nb, n0, rq, amin, amax, out + m0 * ldo + (n0 - n_off),
                                ldo);
            (void)m; (void)j;
#else
            for (m = 0; m < mb; m++)
                for (j = 0; j < nb; j++)
                    out[(m0 + m) * ldo + (n0 - n_off) + j] =
                        qmx__s16_stage(acc[m * QMX__S16_STRIP + j], n0 + j, rq, amin, amax);
#endif
        }
    }
    return QMX_OK;
}

QMX_API qmx_status qmx_fully_connected_i16(size_t M, size_t N, size_t K, const int16_t *A,
                                           size_t lda, const int8_t *W, size_t ldw,
                                           int32_t w_zp, const qmx_requant64_config *rq,
                                           int16_t *out, size_t ldo, void *workspace,
                                           size_t workspace_bytes) {
    if (!W) return QMX_ERR_NULL;
    return qmx__s16_fc(M, N, K, A, lda, W, ldw, NULL, 0, w_zp, rq, out, ldo, workspace,
                       workspace_bytes, 0, N, QMX__PAR_RUN);
}

QMX_API qmx_status qmx_fully_connected_i16_packed(size_t M, size_t N, size_t K,
                                                  const int16_t *A, size_t lda,
                                                  const void *packed, size_t packed_bytes,
                                                  int32_t w_zp, const qmx_requant64_config *rq,
                                                  int16_t *out, size_t ldo, void *workspace,
                                                  size_t workspace_bytes) {
    if (!packed) return QMX_ERR_NULL;
    return qmx__s16_fc(M, N, K, A, lda, NULL, 0, packed, packed_bytes, w_zp, rq, out, ldo,
                       workspace, workspace_bytes, 0, N, QMX__PAR_RUN);
}
/* USING SEVERAL CORES: range calls and executor calls (qmx__par_, KERNELS implementation) */
static qmx__par_mm qmx__s16_par(int packed, size_t M, size_t N, size_t K, const int16_t *A,
                                size_t lda, const void *W, size_t ldw, int32_t w_zp,
                                const qmx_requant64_config *rq, int16_t *out, size_t ldo) {
    qmx__par_mm c = qmx__par_mk(packed ? QMX__PAR_S16P : QMX__PAR_S16, M, N, K, A, lda, W, ldw,
                                out, ldo);
    c.a_zp = w_zp; c.rq64 = rq;
    return c;
}
QMX_API qmx_status qmx_fully_connected_i16_run(size_t M, size_t N, size_t K, const int16_t *A,
                                               size_t lda, const int8_t *W, size_t ldw,
                                               int32_t w_zp, const qmx_requant64_config *rq,
                                               int16_t *out, size_t ldo, size_t task_begin,
                                               size_t task_end, void *workspace,
                                               size_t workspace_bytes) {
    qmx__par_mm c = qmx__s16_par(0, M, N, K, A, lda, W, ldw, w_zp, rq, out, ldo);
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i16_exec(size_t M, size_t N, size_t K, const int16_t *A,
                                                size_t lda, const int8_t *W, size_t ldw,
                                                int32_t w_zp, const qmx_requant64_config *rq,
                                                int16_t *out, size_t ldo,
                                                const qmx_executor *executor, void *workspace,
                                                size_t workspace_bytes) {
    qmx__par_mm c = qmx__s16_par(0, M, N, K, A, lda, W, ldw, w_zp, rq, out, ldo);
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i16_packed_run(size_t M, size_t N, size_t K,
                                                      const int16_t *A, size_t lda,
                                                      const void *packed, size_t packed_bytes,
                                                      int32_t w_zp,
                                                      const qmx_requant64_config *rq,
                                                      int16_t *out, size_t ldo,
                                                      size_t task_begin, size_t task_end,
                                                      void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__s16_par(1, M, N, K, A, lda, packed, packed_bytes, w_zp, rq, out, ldo);
    return qmx__par_run(&c, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_fully_connected_i16_packed_exec(size_t M, size_t N, size_t K,
                                                       const int16_t *A, size_t lda,
                                                       const void *packed, size_t packed_bytes,
                                                       int32_t w_zp,
                                                       const qmx_requant64_config *rq,
                                                       int16_t *out, size_t ldo,
                                                       const qmx_executor *executor,
                                                       void *workspace, size_t workspace_bytes) {
    qmx__par_mm c = qmx__s16_par(1, M, N, K, A, lda, packed, packed_bytes, w_zp, rq, out, ldo);
    if (!executor)
        return qmx__par_call(&c, 0, M, 0, N, QMX__PAR_RUN, workspace, workspace_bytes);
    return qmx__par_exec(&c, executor, workspace, workspace_bytes);
}

/* Extent in elements of one operand over all batches: (batch-1)*bs + (rows-1)*ld + cols;
 * 0 on size_t overflow or above SIZE_MAX / 2 (bytes of int16). */
static size_t qmx__s16_bext(size_t batch, size_t bs, size_t rows, size_t cols, size_t ld) {
    size_t e = qmx__k_extent(rows, cols, ld), b;
    if (!e) return 0;
    if (batch - 1 != 0 && bs > (SIZE_MAX - e) / (batch - 1)) return 0;
    b = (batch - 1) * bs + e;
    return b > SIZE_MAX / 2 ? 0 : b;
}

/* qmx_batch_matmul_i16 on batches [b0, b1) x rows [r0, r1) x columns [c0, c1) of out (the
 * whole call's checks first; mode QMX__PAR_CHECK: the arguments only, nothing written). */
static qmx_status qmx__s16_bmm(size_t batch, size_t M, size_t N, size_t K, const int16_t *X,
                               size_t ldx, size_t x_batch_stride, int adj_x, const int16_t *Y,
                               size_t ldy, size_t y_batch_stride, int adj_y,
                               const qmx_requant64_config *rq, int16_t *out, size_t ldo,
                               size_t out_batch_stride, void *workspace,
                               size_t workspace_bytes, size_t b0, size_t b1, size_t r0,
                               size_t r1, size_t c0, size_t c1, int mode) {
    size_t need, b, i, j, k, m0, n0, k0, xr, xc, yr, yc;
    int32_t amin, amax;
    int16_t *wt;
    int64_t *acc;
    qmx_status st;
    if (!X || !Y || !out || !rq || !workspace) return QMX_ERR_NULL;
    if (batch == 0 || M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_BATCH_MATMUL_I16_MAX_K) return QMX_ERR_OVERFLOW;
    xr = adj_x ? K : M; xc = adj_x ? M : K;   /* stored X: xr rows of xc */
    yr = adj_y ? N : K; yc = adj_y ? K : N;   /* stored Y: yr rows of yc */
    if (ldx < xc || ldy < yc || ldo < N) return QMX_ERR_SHAPE;
    if (batch > 1 && out_batch_stride < qmx__k_extent(M, N, ldo)) return QMX_ERR_SHAPE;
    if (!qmx__s16_bext(batch, x_batch_stride, xr, xc, ldx) ||
        !qmx__s16_bext(batch, y_batch_stride, yr, yc, ldy) ||
        !qmx__s16_bext(batch, out_batch_stride, M, N, ldo))
        return QMX_ERR_OVERFLOW;
    st = qmx__s16_rq_check(rq, N, &amin, &amax);
    if (st != QMX_OK || mode != QMX__PAR_RUN) return st;
    if (b0 > b1 || b1 > batch || r0 > r1 || r1 > M || c0 > c1 || c1 > N)
        return QMX_ERR_ARG;   /* not reached */
    if (b0 == b1 || r0 == r1 || c0 == c1) return QMX_OK;
    st = qmx_batch_matmul_i16_workspace_size(r1 - r0, c1 - c0, K, &need);
    if (st != QMX_OK) return st;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    wt = (int16_t *)(void *)((unsigned char *)workspace +
                             ((64u - ((uintptr_t)workspace & 63u)) & 63u));
    acc = (int64_t *)(void *)((unsigned char *)wt +
                              qmx__k_r64(2u * QMX__S16_STRIP *
                                         (K < QMX__S16_KB ? K : QMX__S16_KB)));
    for (b = b0; b < b1; b++) {
        const int16_t *xb = X + b * x_batch_stride, *yb = Y + b * y_batch_stride;
        int16_t *ob = out + b * out_batch_stride;
        for (m0 = r0; m0 < r1; m0 += QMX__S16_MB) {
            size_t mb = r1 - m0 < QMX__S16_MB ? r1 - m0 : QMX__S16_MB;
            for (n0 = c0; n0 < c1; n0 += QMX__S16_STRIP) {
                size_t nb = c1 - n0 < QMX__S16_STRIP ? c1 - n0 : QMX__S16_STRIP;
                for (k0 = 0; k0 < K; k0 += QMX__S16_KB) {
                    size_t kl = K - k0 < QMX__S16_KB ? K - k0 : QMX__S16_KB;
                    for (j = 0; j < nb; j++)   /* column n0 + j of op(Y), contiguous in k */
                        for (k = 0; k < kl; k++)
                            wt[QMX__S16_WIDX(j, k, kl)] = adj_y ? yb[(n0 + j) * ldy + k0 + k]
                                                   : yb[(k0 + k) * ldy + n0 + j];
                    if (adj_x)   /* X(i, k) = xb[k * ldx + i] */
                        qmx__s16_tile(mb, nb, kl, xb + k0 * ldx + m0, 1, ldx, wt, 0, acc,
                                      k0 == 0);
                    else
                        qmx__s16_tile(mb, nb, kl, xb + m0 * ldx + k0, ldx, 1, wt, 0, acc,
                                      k0 == 0);
                }
#if defined(QMX__S16_STAGE_SIMD)
                qmx__s16_stage_simd(acc, mb, nb, n0, rq, amin, amax, ob + m0 * ldo + n0, ldo);
                (void)i;
#else
                for (i = 0; i < mb; i++)
                    for (j = 0; j < nb; j++)
                        ob[(m0 + i) * ldo + n0 + j] =
                            qmx__s16_stage(acc[i * QMX__S16_STRIP + j], n0 + j, rq, amin, amax);
#endif
            }
        }
    }
    return QMX_OK;
}
QMX_API qmx_status qmx_batch_matmul_i16(size_t batch, size_t M, size_t N, size_t K,
                                        const int16_t *X, size_t ldx, size_t x_batch_stride,
                                        int adj_x, const int16_t *Y, size_t ldy,
                                        size_t y_batch_stride, int adj_y,
                                        const qmx_requant64_config *rq, int16_t *out,
                                        size_t ldo, size_t out_batch_stride, void *workspace,
                                        size_t workspace_bytes) {
    return qmx__s16_bmm(batch, M, N, K, X, ldx, x_batch_stride, adj_x, Y, ldy, y_batch_stride,
                        adj_y, rq, out, ldo, out_batch_stride, workspace, workspace_bytes, 0,
                        batch, 0, M, 0, N, QMX__PAR_RUN);
}

/* USING SEVERAL CORES: TASKS (batch b, tile r) = b * qmx_matmul_tasks(M, N) + r, the tile of
 * QMX_TASK_M rows x QMX_TASK_N columns of out_b, each by qmx__s16_bmm on its rectangle. */
typedef struct qmx__s16_bjob {
    size_t batch, M, N, K;
    const int16_t *X; size_t ldx, xbs; int adj_x;
    const int16_t *Y; size_t ldy, ybs; int adj_y;
    const qmx_requant64_config *rq;
    int16_t *out; size_t ldo, obs;
    unsigned char *ws; size_t slice;
    size_t nt, workers;
} qmx__s16_bjob;

/* tasks [tb, te) (already checked), the workspace of one tile at ws */
static qmx_status qmx__s16_btasks(const qmx__s16_bjob *j, size_t tb, size_t te, void *ws,
                                  size_t bytes) {
    size_t nc = j->N / QMX_TASK_N + (j->N % QMX_TASK_N != 0), ntile, t;
    qmx_status st = qmx_matmul_tasks(j->M, j->N, &ntile);
    if (st != QMX_OK) return st;
    for (t = tb; t < te; t++) {
        size_t b = t / ntile, r = t % ntile, m0 = r / nc * QMX_TASK_M, n0 = r % nc * QMX_TASK_N;
        size_t m1 = j->M - m0 < QMX_TASK_M ? j->M : m0 + QMX_TASK_M;
        size_t n1 = j->N - n0 < QMX_TASK_N ? j->N : n0 + QMX_TASK_N;
        st = qmx__s16_bmm(j->batch, j->M, j->N, j->K, j->X, j->ldx, j->xbs, j->adj_x, j->Y,
                          j->ldy, j->ybs, j->adj_y, j->rq, j->out, j->ldo, j->obs, ws, bytes, b,
                          b + 1, m0, m1, n0, n1, QMX__PAR_RUN);
        if (st != QMX_OK) return st;
    }
    return QMX_OK;
}
static void qmx__s16_btask(void *arg, int task, int worker) {
    const qmx__s16_bjob *j = (const qmx__s16_bjob *)arg;
    /* outside the executor contract: nothing to run it with (documented) */
    if (task < 0 || (size_t)task >= j->nt || worker < 0 || (size_t)worker >= j->workers) return;
    (void)qmx__s16_btasks(j, (size_t)task, (size_t)task + 1, j->ws + (size_t)worker * j->slice,
                          j->slice);
}
/* the job of a call (after the whole call's checks) and its task workspace */
static qmx_status qmx__s16_bsetup(qmx__s16_bjob *j, size_t batch, size_t M, size_t N, size_t K,
                                  const int16_t *X, size_t ldx, size_t xbs, int adj_x,
                                  const int16_t *Y, size_t ldy, size_t ybs, int adj_y,
                                  const qmx_requant64_config *rq, int16_t *out, size_t ldo,
                                  size_t obs, size_t *task_ws) {
    j->batch = batch; j->M = M; j->N = N; j->K = K;
    j->X = X; j->ldx = ldx; j->xbs = xbs; j->adj_x = adj_x;
    j->Y = Y; j->ldy = ldy; j->ybs = ybs; j->adj_y = adj_y;
    j->rq = rq; j->out = out; j->ldo = ldo; j->obs = obs;
    j->ws = NULL; j->slice = 0; j->workers = 0;
    if (qmx_batch_matmul_i16_tasks(batch, M, N, &j->nt) != QMX_OK) return QMX_ERR_OVERFLOW;
    return qmx_batch_matmul_i16_workspace_size(M < QMX_TASK_M ? M : QMX_TASK_M,
                                               N < QMX_TASK_N ? N : QMX_TASK_N, K, task_ws);
}
QMX_API qmx_status qmx_batch_matmul_i16_tasks(size_t batch, size_t M, size_t N,
                                              size_t *n_tasks) {
    size_t nt;
    qmx_status st;
    if (!n_tasks) return QMX_ERR_NULL;
    if (batch == 0) return QMX_ERR_SIZE;
    st = qmx_matmul_tasks(M, N, &nt);
    if (st != QMX_OK) return st;
    if (nt > SIZE_MAX / batch) return QMX_ERR_OVERFLOW;
    *n_tasks = nt * batch;
    return QMX_OK;
}
QMX_API qmx_status qmx_batch_matmul_i16_run(size_t batch, size_t M, size_t N, size_t K,
                                            const int16_t *X, size_t ldx, size_t x_batch_stride,
                                            int adj_x, const int16_t *Y, size_t ldy,
                                            size_t y_batch_stride, int adj_y,
                                            const qmx_requant64_config *rq, int16_t *out,
                                            size_t ldo, size_t out_batch_stride,
                                            size_t task_begin, size_t task_end, void *workspace,
                                            size_t workspace_bytes) {
    qmx__s16_bjob j;
    size_t need = 0;
    qmx_status st = qmx__s16_bmm(batch, M, N, K, X, ldx, x_batch_stride, adj_x, Y, ldy,
                                 y_batch_stride, adj_y, rq, out, ldo, out_batch_stride,
                                 workspace, workspace_bytes, 0, 0, 0, 0, 0, 0, QMX__PAR_CHECK);
    if (st != QMX_OK) return st;
    st = qmx__s16_bsetup(&j, batch, M, N, K, X, ldx, x_batch_stride, adj_x, Y, ldy,
                         y_batch_stride, adj_y, rq, out, ldo, out_batch_stride, &need);
    if (st != QMX_OK) return st;
    if (task_begin > task_end || task_end > j.nt) return QMX_ERR_ARG;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    return qmx__s16_btasks(&j, task_begin, task_end, workspace, workspace_bytes);
}
QMX_API qmx_status qmx_batch_matmul_i16_exec(size_t batch, size_t M, size_t N, size_t K,
                                             const int16_t *X, size_t ldx,
                                             size_t x_batch_stride, int adj_x, const int16_t *Y,
                                             size_t ldy, size_t y_batch_stride, int adj_y,
                                             const qmx_requant64_config *rq, int16_t *out,
                                             size_t ldo, size_t out_batch_stride,
                                             const qmx_executor *executor, void *workspace,
                                             size_t workspace_bytes) {
    qmx__s16_bjob j;
    size_t need = 0, total = 0;
    qmx_status st;
    if (!executor || executor->workers == 0 || executor->workers == 1)
        return qmx_batch_matmul_i16(batch, M, N, K, X, ldx, x_batch_stride, adj_x, Y, ldy,
                                    y_batch_stride, adj_y, rq, out, ldo, out_batch_stride,
                                    workspace, workspace_bytes);
    st = qmx__s16_bmm(batch, M, N, K, X, ldx, x_batch_stride, adj_x, Y, ldy, y_batch_stride,
                      adj_y, rq, out, ldo, out_batch_stride, workspace, workspace_bytes, 0, 0, 0,
                      0, 0, 0, QMX__PAR_CHECK);
    if (st != QMX_OK) return st;
    if (executor->workers < 0) return QMX_ERR_ARG;
    if (!executor->parallel_for) return QMX_ERR_NULL;
    st = qmx__s16_bsetup(&j, batch, M, N, K, X, ldx, x_batch_stride, adj_x, Y, ldy,
                         y_batch_stride, adj_y, rq, out, ldo, out_batch_stride, &need);
    if (st != QMX_OK) return st;
    if (j.nt > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
    st = qmx_par_workspace_size(executor, 0, need, &total);
    if (st != QMX_OK) return st;
    if (workspace_bytes < total) return QMX_ERR_BUFFER_TOO_SMALL;
    j.ws = (unsigned char *)workspace; j.slice = total / (size_t)executor->workers;
    j.workers = (size_t)executor->workers;
    if (j.nt == 1) return qmx__s16_btasks(&j, 0, 1, workspace, j.slice); /* nothing to share */
    executor->parallel_for(executor->pool, (int)j.nt, qmx__s16_btask, &j);
    return QMX_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION: 16x8 */
