/* qmx.h - quantization core: dtypes, fp8, quantize/dequantize, fixed-point requantization.
 *         Header-only, allocation-free, freestanding C99. Part of qmx (qmx.h, qmx_kernels.h,
 *         qmx_calib.h). MIT licensed, see the end of this file.
 *
 * ============================================================================================
 * BUILD
 *   In exactly one C or C++ file of your program:
 *       #define QMX_IMPLEMENTATION
 *       #include "qmx.h"
 *   Every other file includes "qmx.h" without the define and sees only declarations.
 *   Define QMX_STATIC as well to make every function static to that one file.
 *   The core needs no libc and no libm: <stddef.h>, <stdint.h>, <limits.h> and <float.h>
 *   only, so it builds with -ffreestanding for Cortex-M. It never allocates and keeps no
 *   static state; the deepest stack frame is documented beside each function (all < 1 KiB).
 *
 * CONFIGURATION (define before including the implementation)
 *   QMX_NO_SIMD        scalar code only (every SIMD path gives the same bits anyway)
 *   QMX_NO_AVX2, QMX_NO_AVX512, QMX_NO_NEON, QMX_NO_RVV
 *                      disable one instruction set; by default a path is compiled when the
 *                      compiler targets it (-mavx2, -mavx512f/bw/vl, -march=native, NEON on
 *                      ARM, RVV 1.0 on RISC-V: __riscv_vector with the intrinsics of clang >= 16,
 *                      e.g. -march=rv64gcv). There is no run-time CPU detection: build for the
 *                      CPU you run on. The RVV paths are vector-length agnostic (vsetvl strips,
 *                      private prefix qmx__rvv_): the same bits at every VLEN.
 *   QMX_ASSERT(x)      internal invariant check; defaults to nothing. Bad *input* never
 *                      asserts: it returns a status.
 *   QMX_STATIC         all functions static (private copy in one translation unit).
 *   QMX_NT_STORE_MIN   int8 and fp8 quantize runs of at least this many elements (default 4 Mi) store
 *                      around the caches (AVX-512 non-temporal stores); only speed changes.
 *   Do not build qmx with -ffast-math / -Ofast: the bit-exact contracts below rely on IEEE
 *   single-precision arithmetic (FMA contraction and x87 excess precision are handled).
 *
 * A FIVE-LINE EXAMPLE (int8, per-channel weights [N=4][K=64], AQT recipe)
 *       qmx_qconfig c = QMX_ZERO_INIT;        // int8, per tensor, AQT, nearest-even
 *       c.granularity = QMX_PER_CHANNEL; c.outer = 1; c.axis_len = 4; c.inner = 64;
 *       float s[4]; int8_t q[256];
 *       qmx_status st = qmx_compute_qparams(&c, w, 256, s, 4, NULL);
 *       if (st == QMX_OK) st = qmx_quantize(&c, w, 256, s, 4, NULL, q, sizeof q);
 *
 * ERROR CONTRACT
 *   Every function that can fail returns qmx_status (QMX_OK == 0, errors < 0) and checks all
 *   of its arguments before it writes anything: on error every output is left untouched.
 *   One documented exception, for speed: qmx_compute_qparams reads the data once, so a group
 *   holding NaN / Inf is found only when its turn comes; the groups before it (in parameter
 *   order) have their scales / zero points written, that group and the later ones do not.
 *   NULL pointers, zero sizes, size_t overflow, shapes that disagree, buffers too small,
 *   non-finite or non-positive scales and invalid enum values all return a status; nothing
 *   reads or writes past a buffer. qmx_status_str() names each status.
 *
 * DTYPES AND BIT LAYOUTS
 *   QMX_INT8 / QMX_UINT8   one value per byte, two's complement / unsigned.
 *   QMX_INT16 / QMX_UINT16 native-endian int16_t / uint16_t array.
 *   QMX_INT2 / QMX_UINT2   four values per byte: element 4i + k in bits 2k, 2k + 1 of byte i
 *                          (ONNX INT2 / UINT2 order); [-2, 1] / [0, 3]; the unused high bits
 *                          of the last byte are written as 0 and ignored on read.
 *   QMX_NF4                QLoRA NormalFloat4: codes 0..15 packed as uint4 (element 2i low
 *                          nibble), value = table[code] * scale with the 16 float32 values of
 *                          QLoRA Appendix E (-1, -0.6961928, ..., 0, 0.0795803, ..., 1).
 *                          Symmetric only; scale = absmax (Qwix's bound 1.0) with the recipe's
 *                          zero guard; t = x / s (AQT: x * (1/s)); code = argmin |table - t|
 *                          over all 16 in float32, ties to the lower code (Qwix; bitsandbytes'
 *                          midpoint thresholds can differ within an ulp of a midpoint); NaN
 *                          -> the code of 0 (7). Not for the torch / ONNX recipes.
 *   QMX_INT3, QMX_INT5, QMX_INT6, QMX_INT7   Qwix's widths: one int8_t per value, range
 *                          [-2^(b-1), 2^(b-1) - 1]; every recipe, granularity and rounding as
 *                          int8 (AQT's bound qmax + 0.5, e.g. int3: absmax / 3.5).
 *   QMX_INT4 / QMX_UINT4   two values per byte. Element 2i is the LOW nibble of byte i,
 *                          element 2i+1 the HIGH nibble (the order of ggml, CMSIS-NN s4 and
 *                          ml_dtypes' packed int4). int4 nibbles are two's complement
 *                          [-8, 7]; uint4 nibbles are [0, 15]. An odd count needs
 *                          (n + 1) / 2 bytes and the unused high nibble of the last byte is
 *                          written as 0 and ignored on read. Packing follows the flat element
 *                          index of the whole tensor, so rows need not start on a byte.
 *   fp8 (one uint8_t code each; s = sign, e = exponent, m = mantissa, bits s eeee mmm / s eeeee mm)
 *     QMX_FP8_E4M3FN    bias 7,  no Inf, NaN = s.1111.111,  max 448,   min subnormal 2^-9
 *     QMX_FP8_E5M2      bias 15, IEEE-like: Inf = s.11111.00, NaN = s.11111.{01,10,11},
 *                       max 57344, min subnormal 2^-16
 *     QMX_FP8_E4M3FNUZ  bias 8,  no Inf, no -0, the single NaN is 0x80, max 240, min sub 2^-10
 *     QMX_FP8_E5M2FNUZ  bias 16, no Inf, no -0, the single NaN is 0x80, max 57344, min 2^-17
 *
 * FP8 CONVERSION (qmx_fp8_from_f32 / qmx_fp8_to_f32)
 *   Round to nearest, ties to even, subnormals included (exact integer arithmetic, no FPU).
 *   saturate != 0: finite values beyond +-max and +-Inf become +-max; NaN stays NaN.
 *     This is "clip to +-max, then cast", as AQT and Flax fp8_ops do. It equals CUDA's
 *     __NV_SATFINITE. NOTE: ml_dtypes' own saturating cast keeps Inf (E5M2) or turns Inf
 *     into NaN (E4M3FN, FNUZ); qmx follows AQT/Flax/CUDA instead.
 *   saturate == 0: the OCP / ml_dtypes astype cast: overflow (after rounding) and Inf become
 *     NaN for E4M3FN and both FNUZ formats, +-Inf for E5M2. This equals CUDA's __NV_NOSAT.
 *   NaN input: E4M3FN -> 0x7F with the input's sign (0xFF when negative), E5M2 -> 0x7F with
 *     the input's sign, FNUZ -> 0x80. (CUDA writes 0x7F for every NaN; ml_dtypes keeps the
 *     sign; both are NaN.) The scaled paths (qmx_fp8_quantize_array, qmx_quantize) encode a
 *     NaN element itself rather than x / s, so its sign survives on every target (RISC-V's
 *     division returns the canonical +NaN). -0.0 -> 0x80 except FNUZ (-0 does not exist there:
 *     0x00).
 *   Verified against NVIDIA cuda_fp8.h for all 2^32 float inputs (make test-exhaustive) and
 *   against ml_dtypes tables for the FNUZ formats.
 *
 * FP4 / FP6 / E8M0 (section 4b: the OCP MX v1.0 element and scale formats)
 *   QMX_FP4_E2M1  s.ee.m,    bias 1, values 0, 0.5, 1, 1.5, 2, 3, 4, 6; packed two per byte,
 *                 element 2i in the LOW nibble (as int4)
 *   QMX_FP6_E2M3  s.ee.mmm,  bias 1, max 7.5, min subnormal 2^-3; one code per byte, low 6 bits
 *   QMX_FP6_E3M2  s.eee.mm,  bias 3, max 28,  min subnormal 2^-4; one code per byte, low 6 bits
 *     No Inf, no NaN; exponent field 0 is subnormal, the top field is an ordinary binade.
 *     Packed fp6 (qmx_pack_fp6): 4 codes in 3 bytes, little-endian bit stream (code i in
 *     stream bits 6i..6i+5), the order of AMD ROCm/rocRoller's getFp6 / setFp6.
 *   QMX_E8M0      eeeeeeee,  bias 127, value 2^(c - 127) for c = 0..254 (0x00 = 2^-127, a
 *                 float32 subnormal), 0xFF NaN; no sign, no zero, no Inf.
 *   fp4/fp6 encode (qmx_fp4_from_f32, qmx_fp6_from_f32): exact integer arithmetic; round to
 *     nearest even, or toward zero (round_toward_zero != 0; CUDA cudaRoundNearest /
 *     cudaRoundZero, ml_dtypes rne / rtz). Overflow after rounding and +-Inf give +-max
 *     ALWAYS: CUDA offers only saturating conversions for these formats, and ml_dtypes' astype
 *     (non-saturating) and its saturating cast give the same codes as each other (there is no
 *     Inf or NaN to overflow to), so qmx has no saturate flag. -0.0 and values that round to 0
 *     keep their sign (-0 code), as both references. NaN: the references differ. CUDA writes
 *     +max (0x7 / 0x1F) for every NaN (documented in cuda_fp4.h / cuda_fp6.h: "NaN input values
 *     result in positive MAXNORM", one contract for host and device code); ml_dtypes writes
 *     the -0 code for +NaN and +0 for -NaN (a sign-flipped placeholder). qmx follows CUDA: it
 *     is the documented hardware contract, and it does not depend on a NaN's sign.
 *   E8M0 encode (qmx_e8m0_from_f32): rounds |x| to a power of two. DOWN = floor(log2 |x|) (OCP MX,
 *     CUDA cudaRoundZero), UP = ceil (CUDA cudaRoundPosInf). NEAREST = ml_dtypes
 *     float8_e8m0fnu astype: between 2^e and 2^(e+1) the tie is at 1.5 * 2^e (the linear
 *     midpoint) and goes UP; float32 subnormals round to 2^-126 when x > 2^-127, else to 2^-127.
 *     Results below 2^-127 clamp to 0x00; above 2^127 (and +-Inf) give 0xFE with saturate,
 *     else 0xFF (NaN); NaN -> 0xFF. CUDA and ml_dtypes differ for x <= 0 and for Inf. CUDA
 *     rounds |x|, so zero -> 0x00 and -x == x; ml_dtypes gives NaN without saturation and 0x00
 *     with it for every x <= 0, and keeps Inf -> 0xFF even when saturating. qmx follows CUDA,
 *     whose header documents "the absolute value is rounded" and NaN only for NaN, for every
 *     mode: a block whose amax is 0 still gets a usable scale.
 *   Decoding is exact. E8M0 0xFF decodes to 0x7FC00000 (ml_dtypes; CUDA's bf16 path gives
 *     0x7FFF0000, also a NaN). The scaled arrays (qmx_fp4/fp6_quantize_array) encode
 *     x / scale, or x itself when that is NaN, as the fp8 arrays do.
 *   Verified (measurements): every row of the golden tables in tests/test_lowfloat.c: CUDA
 *     13.0 host path, 3 x 20000 fp4/fp6 rows (rn, rz) and 20000 E8M0 rows (rz, rp, sat, nosat)
 *     all equal; ml_dtypes v0.6.0, 4 x 20000 rows x 4 columns: all equal except the
 *     documented differences, which are checked to be exactly those (460 fp4/fp6 NaN cells,
 *     39580 E8M0 x <= 0 cells, 436 E8M0 Inf cells). make test-exhaustive: all 2^32 float32
 *     inputs x 10 CUDA modes (fp4, fp6 x 2: rn, rz; E8M0: rz, rp x satfinite, nosat)
 *     = 42,949,672,960 encodes, 0 mismatches; every code decoded, and the only difference is
 *     the 0xFF NaN bits, which is counted.
 *
 * BLOCK-SCALED FORMATS (section 6b: qmx_mx_config; qmx_mx_storage, _quantize, _dequantize,
 *   qmx_mx_ggml_bytes, _to_ggml, _from_ggml)
 *   MXFP8 (E4M3, E5M2), MXFP6 (E2M3, E3M2), MXFP4, MXINT8: one E8M0 scale per block (default 32)
 *   of consecutive elements along axis_len; NVFP4: E2M1 elements, an E4M3 scale per 16, and with
 *   tensor_scale > 0 torchao's two-level form. amax = max |x| of the block (NaN if any is NaN).
 *   Each rule is one origin's code path, bit for bit, NaN / Inf / zero blocks included:
 *     QMX_MX_FLOOR  OCP MX v1.0 / torchao FLOOR: c = clamp(exp(amax) - emax, -127, 128) + 127 from
 *                   the exponent bits (emax: E4M3 8, E5M2 15, E2M3 2, E3M2 4, E2M1 2)
 *     QMX_MX_CEIL   torchao CEIL: + 1 when amax's mantissa is nonzero
 *     QMX_MX_EVEN   torchao EVEN: amax first rounded to the element's mantissa width (ties up)
 *     QMX_MX_RCEIL  torchao RCEIL = cuBLAS / TransformerEngine: the E8M0 of f32(amax * f32(1 /
 *                   max)) rounded up
 *     (these four: c = 0xFF for a non-finite amax; elements = RNE cast of f32(x * 2^(127 - c)),
 *     saturating; a NaN element (every element of a 0xFF block) gets the NaN code of torchao's
 *     casts: fp8 0x7F | sign, e2m1 0x3 | sign, e2m3 0x0C | sign, e3m2 0x0E | sign; NVFP4:
 *     scale = E4M3(clamp(f32(amax / 6) [/ P], 2^-6, 448)), elements = fp4(clamp(f32(x *
 *     f32(1 / s)) [x f32(f32(1 / P) / s)], -6, 6)))
 *     QMX_MX_QWIX   Qwix (mxfp8 E4M3 block 32 or 16, mxfp4, nvfp4): s = f32(amax / Q) (Q 448, 6),
 *                   s < 2^-63 -> 1, times f32(60/31) (mxfp8) or f32(12/7) (mxfp4), rounded to
 *                   bfloat16 and its mantissa cleared (a power of two; NaN -> Inf, code 0xFF);
 *                   nvfp4: E4M3(s) with subnormals; elements = RNE cast of clip(f32(x / s)) (a NaN
 *                   made by Inf / Inf or 0 / 0 is x86's default NaN, with the sign set; fp4 NaN:
 *                   ml_dtypes' +NaN -> 0x8, -NaN -> 0x0); dequantize v * s with s = +Inf for 0xFF.
 *     QMX_MX_MICROXCALING  microsoft/microxcaling _quantize_mx, round 'nearest' (MXFP8, MXFP6,
 *                   MXFP4, and QMX_MXINT8: int8 elements worth q * 2^-6, emax 0, max 127/64):
 *                   u = floor(log2f(amax)) - emax (amax 0: log2f(2^-126)), log2f correctly rounded
 *                   as torch's (it rounds UP to k for amax within a few ulps below 2^k, k >= 3
 *                   or k <= -2, e.g. log2f(FLT_MAX) = 128; emulated in integers, proof at
 *                   qmx__mx_floor_log2);
 *                   NaN / Inf amax or u > 127 -> 0xFF (its NaN scale; element codes 0); u < -127
 *                   -> -127. Elements: A = f32(x / 2^u), p = max(floor(log2f |A|), 2 - 2^(ebits-1)),
 *                   r = floor(f32(|A| 2^(mb - p) + 0.5)) (ties away, but that float32 sum rounds:
 *                   0.5 - 2^-25 gives 1), v = min(r 2^(p - mb), max) with A's sign (-0 -> +0, a
 *                   negative rounded to 0 -> the -0 code); MXINT8 r = floor(f32(|A| 64 + 0.5)) <= 127.
 *                   A ragged last block is microxcaling's zero padding (same amax). The one
 *                   loss: MXINT8's -0.0 from a negative rounded to 0 decodes as +0 (code 0).
 *     QMX_MX_GGML   ggml quantize_row_mxfp4_ref / _nvfp4_ref (MXFP4 blocks of 32, NVFP4 UE4M3 per
 *                   16): amax ignores NaN (Inf enters); MXFP4 c = (uint8_t)(floorf(log2f(amax)) +
 *                   125), 0 for amax 0, with the float -> uint8 cast as x86-64 gcc compiles it
 *                   (via int32, the low byte: negative values wrap, +Inf -> 0) -- qmx's choice,
 *                   as C leaves that cast undefined; d = 2^(c - 128). NVFP4: ggml_fp32_to_ue4m3
 *                   of f32(amax / 6) (> 448 -> 448; >= 256 -> 0x7E; mantissa rounded half up;
 *                   below 2^-6 (int)f32(f32(b 512) + 0.5) clamped to 0..7), d = f32(ue4m3 / 2)
 *                   (0x00, 0x7F -> 0). Element = the first i minimising f32|f32(K[i] d) - x| over
 *                   K = 0 1 2 3 4 6 8 12 0 -1 .. -12 (ties to the smaller magnitude, NaN / Inf
 *                   -> 0); dequantize f32(K[code] d) (E8M0 0xFF is 2^127 there, code 8 is +0).
 *                   Byte layouts block_mxfp4 / block_nvfp4: qmx_mx_to_ggml / qmx_mx_from_ggml.
 *   NaN signs follow the origin on x86 whatever the target. Dequantize: v * 2^(c - 127) (0xFF:
 *   NaN), NVFP4 v * decode(scale) [* P]. Verified against tests/data/mx_golden.txt (465 cases,
 *   1067 blocks, from torchao's formulas and transcribed tests, Qwix's source, microxcaling's
 *   formulas (its y reproduced by running it) and ggml's (reproduced by compiling ggml), with
 *   17 ggml block byte strings; measured: 0 mismatches; one case, a two-level NVFP4 tensor
 *   scale of 0, is refused). Matmul on these weights (f32 activations) and MXFP8 x MXFP8:
 *   qmx_kernels.h, BLOCK-SCALED WEIGHTS (portable code; fast paths are a later step).
 *   Speed, same bits: blocks contiguous along the last axis (inner = 1) of 16 x 2^k elements
 *   (AVX-512; AVX2 8 x 2^k, NEON 4 x 2^k; k <= 6) go through vector kernels for MXFP4, NVFP4,
 *   MXFP8 E4M3 / E5M2 quantize (every rule but microxcaling and ggml) and dequantize (every
 *   rule): per group of 16 (8, 4) blocks, amax on the bits, every scale at once lane by lane,
 *   elements x * 2^(127 - c) (Qwix: x / s, which is that product; NVFP4 Qwix divides) encoded
 *   with an explicitly rounded operation. A block whose amax is NaN or Inf, or whose multiplier
 *   is NaN, 0 or Inf (0xFF codes, zero NVFP4 scales), is redone by the scalar code; every other
 *   block has no NaN in its scaled elements, where the vector and scalar arithmetic agree. Other
 *   blocks take specialised scalar loops (the same test), else the per-element reference.
 *   tests/test_simd_equiv.c compares all three paths in one binary (random, tie, threshold,
 *   NaN / Inf, denormal, FLT_MAX, ragged and strided blocks, every format and rule).
 *   Private names: qmx__mx* (qmx__mx_ scalar and walk, qmx__mxc_ microxcaling, qmx__mxq /
 *   qmx__mxblk / qmx__mxs per-call, per-block and scale state, qmx__mx512_ / qmx__mx256_ /
 *   qmx__mxn_ the AVX-512 / AVX2 / NEON kernels), qmx__ggml_, qmx__fp4_ (E2M1 codec), and the
 *   macros QMX__MX_* (paths), QMX__MXE_* / QMX__MXS_* (element / scale kinds), QMX__MXL, QMX__MXV;
 *   qmx__fp8_dec512 / _dec256 / _dec128 (fp8 lanes to float32, shared with qmx_kernels.h).
 *
 * INTEGER QUANTIZATION (qmx_qconfig; qmx_compute_qparams, qmx_quantize, qmx_dequantize)
 *   dequant:  x' = (q - zero_point) * scale    (scale multiplies, as in AQT/Qwix/TFLite)
 *   The tensor is viewed as [outer][axis_len][inner] (row-major). Granularity:
 *     QMX_PER_TENSOR   one scale
 *     QMX_PER_CHANNEL  one scale per index of the middle axis (axis_len scales), e.g. per
 *                      output row of a [N,K] weight: outer=1, axis_len=N, inner=K
 *     QMX_PER_BLOCK    sub-channel: the middle axis is cut into blocks of block_size; one
 *                      scale per (outer, block, inner) = outer * ceil(axis_len/block_size) *
 *                      inner scales, stored in that row-major order. Every other axis is
 *                      channelwise (AQT tiling / Qwix tiled_axes). A ragged tail (axis_len not
 *                      a multiple of block_size) is its own, shorter block with its own scale.
 *   Recipes (qmx_recipe) reproduce each origin exactly, in float32:
 *     QMX_RECIPE_AQT    (default) symmetric only. s = absmax / (qmax + 0.5), or absmax / qmax
 *                       with preserve_max_val; absmax == 0 -> absmax = 1. quantize:
 *                       t = x * (1/s) (reciprocal, an infinite 1/s -> 1), clip to +-qmax,
 *                       round. int8 range [-127, 127]. (google/aqt int_numerics.py)
 *     QMX_RECIPE_QWIX   symmetric: s = absmax / B, B = 127.5 (int8), 7.5 (int4), 255.5 (uint8),
 *                       15.5 (uint4), 32768 (int16); asymmetric ("minmax"): lo = min(x, 0),
 *                       hi = max(x, 0), s = (hi - lo) / (qmax - qmin), zp = sat(RNE(qmin - lo/s)).
 *                       Guard: s < sqrt(FLT_MIN) -> s = 1. quantize: t = x / s (+ zp, in float,
 *                       before rounding), round, saturate to the full range [-128, 127].
 *                       (google/qwix qarray.py, numerics.py)
 *     QMX_RECIPE_TFLITE symmetric: s = absmax / qmax, narrow range [-127, 127] (weights),
 *                       except int16 (16x8 activations): s = absmax / 32767, clamp to the full
 *                       [-32768, 32767] as the QUANTIZE op does; asymmetric:
 *                       s = (hi - lo) / (qmax - qmin), zp as Qwix. absmax == 0 -> s = 1.
 *                       quantize: t = x / s, round half away from zero, + zp after rounding,
 *                       clamp (TFLite AffineQuantize / QUANTIZE op).
 *     QMX_RECIPE_TORCH  int8 (torch.qint8) and uint8 (torch.quint8) only. torch.ao observers'
 *                       calculate_qparams (torch/ao/quantization/observer.py, 1.13): range
 *                       [qmin, qmax], with reduce_range int8 [-64, 63], uint8 [0, 127];
 *                       asymmetric (per_*_affine): s = (hi - lo) / (qmax - qmin); symmetric:
 *                       s = max(-lo, hi) / ((qmax - qmin) / 2); then s = max(s, 2^-23) (torch's
 *                       eps: an all-zero tensor gets s = 2^-23, not qmx's usual guard);
 *                       zp = qmin - RNE(lo / s) clamped (affine), 0 (qint8) or 128 (quint8)
 *                       symmetric (quint8 symmetric with reduce_range: QMX_ERR_UNSUPPORTED,
 *                       as torch's NotImplementedError). quantize as torch.quantize_per_tensor
 *                       / _per_channel (aten quantize_val): t = x * (1.0f / s) (no 1/s -> 1
 *                       rule), RNE, + zp after rounding, clamp to the FULL dtype range
 *                       (reduce_range changes only the parameters). dequantize (q - zp) * s.
 *                       Observers (qmx_calib.h MINMAX / MOVING_MINMAX) with this recipe are
 *                       torch's MinMax / PerChannelMinMax / MovingAverage*MinMaxObserver.
 *     QMX_RECIPE_ONNX   ONNX QuantizeLinear (opset 21; onnx/reference/ops/op_quantize_linear.py,
 *                       op_dequantize_linear.py): t = x / s, RNE, + zp after rounding,
 *                       saturate to the dtype range (any integer dtype, UINT16 included);
 *                       fp8: x / s cast with saturate (default) or, with fp8_no_saturate,
 *                       ONNX saturate=0; E5M2 NaN is 0x7E | sign (ml_dtypes', which ONNX's
 *                       reference uses). DequantizeLinear: (q - zp) * s. Parameters:
 *                       asymmetric = DynamicQuantizeLinear's formulas (onnx/reference
 *                       op_dynamic_quantize_linear.py) for any integer dtype: hi = max(max, 0),
 *                       lo = min(min, 0), s = (hi == lo ? 1 : hi - lo) / (qmax - qmin), zp =
 *                       RNE(clamp(qmin - lo / s)); symmetric (no ONNX operator defines one; the
 *                       shape of onnxruntime's quantizer): lo = -absmax, hi = absmax, zp = the
 *                       middle of the range (0 signed, 128 uint8, 32768 uint16, 8 uint4).
 *   Zero points: AQT, Qwix and TFLite read them only when asymmetric. torch and ONNX tensors
 *     always carry one, so with those recipes quantize / dequantize apply the zero points
 *     whenever the pointer is given (NULL = all 0) and compute_qparams needs it whenever a
 *     zero point can be nonzero (asymmetric, or symmetric of an unsigned dtype).
 *   Rounding (qmx_round): QMX_ROUND_DEFAULT is the recipe's own (AQT, Qwix: nearest-even;
 *     TFLite: half away from zero). QMX_ROUND_NEAREST_EVEN, QMX_ROUND_HALF_AWAY force one.
 *     QMX_ROUND_STOCHASTIC adds u - 0.5 with u uniform in [0,1) (24 random bits) to the
 *     scaled value before the clip and a nearest-even round (AQT's order); the caller's
 *     qmx_rng supplies one draw per element in flat element order: the same stream and the
 *     same bits on every target.
 *   Non-finite input: for integer dtypes NaN quantizes to the zero point and +-Inf to the
 *     ends of the range; for fp8 NaN gives the format's NaN code and +-Inf gives +-max.
 *     qmx_compute_qparams returns QMX_ERR_NONFINITE when a group contains NaN or Inf,
 *     having written the parameters of the groups before the first such group only.
 *   Extreme ranges: qmx_compute_qparams returns the origin's scale even where it is not
 *     usable: a group whose absmax is so small (below ~1e-43) that absmax / B underflows to
 *     0 (AQT, TFLite), or whose max - min overflows float (asymmetric, |x| ~ 3e38) giving
 *     Inf. qmx_quantize and qmx_dequantize then return QMX_ERR_ARG (scales must be finite
 *     and > 0; a NaN or Inf scale is QMX_ERR_ARG too) rather than produce garbage.
 *   asymmetric + narrow_range: scale and zero point use the full range, only the clamp
 *     narrows. fp8 accepts only nearest-even rounding (else QMX_ERR_UNSUPPORTED).
 *   fp8 dtypes use the same calls: s = absmax / fp8_max (AQT, ONNX: absmax 0 -> 1; Qwix/TFLite: the
 *     guard above); quantize t = x / s (AQT: x * (1/s)), clip to +-max, cast nearest-even.
 *   Several cores: qmx_quantize_run / qmx_dequantize_run compute tasks of QMX_TASK_ELEMS
 *     elements (every granularity; stochastic rounding is one task) with the serial call's
 *     bits, on the caller's threads; qmx_quantize_exec / qmx_dequantize_exec take an executor
 *     (qmx_kernels.h, USING SEVERAL CORES; private prefix qmx__par_).
 *
 * FIXED-POINT REQUANTIZATION
 *   qmx_quantize_multiplier(real, &m, &shift) gives TFLite's QuantizeMultiplier exactly (no
 *   libm): real = m * 2^(shift - 31), m in [2^30, 2^31) (or 0).
 *   qmx_requantize(acc, m, shift) is TFLite's MultiplyByQuantizedMultiplier with gemmlowp's
 *   double rounding (SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT), bit-exact
 *   for every int32 acc, every int32 m and shift in [-31, 30] (acc << shift wraps mod 2^32
 *   like TFLite's). Other contracts (qmx_requant_mode): single rounding (TFLite
 *   TFLITE_SINGLE_ROUNDING / CMSIS-NN option; saturates where TFLite's DCHECK would fire) and
 *   float round-to-nearest-even (XNNPACK "fp32" requantization).
 *
 * INTEROP (section 8): peer layouts, byte by byte
 *   CMSIS-NN s4 / TFLite Micro packed int4 (arm_fully_connected_s4, PackInt8IntoDenseInt4):
 *     IDENTICAL to QMX_INT4: the whole [rows][cols] tensor is packed by flat index, element
 *     2i in the low nibble of byte i, so a row of odd length ends in the low nibble of a byte
 *     whose high nibble starts the next row (CMSIS-NN's "spillover"). No conversion needed:
 *     pass qmx's packed weights as CMSIS-NN's packed_rhs.
 *   AQT / Qwix int4 (jnp.int4, one value per byte in memory): qmx_unpack_int4 / qmx_pack_int4.
 *   ggml Q8_0 (34 bytes per 32 elements): bytes 0-1 the scale d as IEEE binary16, little
 *     endian; bytes 2-33 qs[j], int8, element j of the block. Value = qs[j] * d.
 *     qmx side: QMX_INT8, QMX_PER_BLOCK, block_size 32 along the flat array (outer = 1,
 *     axis_len = n, inner = 1), scale = d. to_qmx rejects a NaN/Inf d (QMX_ERR_NONFINITE) and a
 *     negative d with a -128 (QMX_ERR_UNSUPPORTED; ggml never writes either); a negative d is
 *     stored as (-q, -d); a zero d becomes q = 0, scale 1 (the same values). from_qmx needs
 *     scales exactly representable in binary16 (else QMX_ERR_ARG: round scales with
 *     qmx_f16_to_f32(qmx_f32_to_f16(s)) before quantizing).
 *   ggml Q4_0 (18 bytes per 32 elements): bytes 0-1 d (binary16, little endian); bytes 2-17
 *     qs[j]: element j in the low nibble, element j + 16 in the high nibble; value =
 *     (nibble - 8) * d. ggml's own quantizer writes d = max / -8, so d is usually NEGATIVE and
 *     the nibble 0 (-8) present: negating it needs +8, which int4 cannot hold. Q4_0 therefore
 *     maps losslessly to QMX_UINT4 with a per-block zero point: d > 0: u = nibble, zp = 8,
 *     scale d; d < 0: u = 15 - nibble, zp = 7, scale -d (then (u - zp) * scale equals
 *     (nibble - 8) * d bit for bit, except that ggml's zero elements of a d < 0 block are
 *     -0.0 and qmx's +0.0); d = 0: u = 8, zp = 8, scale 1. from_qmx accepts QMX_INT4
 *     (nibble = v + 8, d = scale) or QMX_UINT4 with zero points 8 or 7 (the inverse map).
 *     Round trips ggml -> qmx -> ggml are byte-identical except a block with d = +-0, whose
 *     d comes back as 1.0 (its 32 values are 0 either way).
 *   binary16: qmx_f32_to_f16 rounds to nearest even (overflow -> +-Inf, subnormals exact),
 *     NaN keeps its sign and top 10 payload bits (a payload that would vanish becomes 1), as
 *     numpy's astype(float16). bfloat16: round to nearest even as PyTorch; a NaN becomes the
 *     quiet NaN 0x7FC0 with the input's sign (PyTorch always writes 0x7FC0). Decoding is exact,
 *     except that a signaling NaN decodes quiet (payload and sign kept, quiet bit set) as
 *     F16C's vcvtph2ps does: an x87 target could not return a signaling NaN bit-exactly.
 *
 * SECTIONS: 1 config  2 status  3 dtypes  4 fp8  4b fp4/fp6/e8m0  5 rng  6 quantize
 *           6b block-scaled formats (MX, NVFP4)  7 requantize  8 interop  9 implementation
 *           (scalar reference, then SIMD paths that give the same bits; the MX / NVFP4 vector
 *           kernels sit in 6b, beside their scalar reference; the RVV paths, private prefix
 *           qmx__rvv_, close section 9)
 * ============================================================================================ */
#ifndef QMX_H
#define QMX_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <float.h>

#define QMX_VERSION_MAJOR 0
#define QMX_VERSION_MINOR 1
#define QMX_VERSION_PATCH 0

/* ---- 1. configuration ---------------------------------------------------------------------- */
#ifndef QMX_API
#  ifdef QMX_STATIC
#    define QMX_API static
#  else
#    define QMX_API extern
#  endif
#endif
#ifndef QMX_ASSERT
#  define QMX_ASSERT(x) ((void)0)
#endif

/* Zero-initialiser for qmx option structs in both C ({0}) and C++ ({}). */
#ifdef __cplusplus
#  define QMX_ZERO_INIT {}
#else
#  define QMX_ZERO_INIT {0}
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A caller's thread pool, for the kernels that split into tasks (qmx_kernels.h, USING SEVERAL
 * CORES). qmx creates no thread: parallel_for must call fn(arg, task, worker) once for every
 * task in [0, n_tasks), in any order and on any threads, with worker in [0, workers) and no
 * two concurrent calls sharing a worker, and return when all are done. Zero-initialised or
 * workers 0 / 1: serial (parallel_for not called). The result bits never depend on it. */
typedef struct qmx_executor {
    void (*parallel_for)(void *pool, int n_tasks, void (*fn)(void *arg, int task, int worker),
                         void *arg);
    void *pool;    /* passed to parallel_for as it is */
    int workers;   /* >= 2 to use parallel_for; negative: QMX_ERR_ARG */
} qmx_executor;

/* ---- 2. status ------------------------------------------------------------------------------ */
typedef enum qmx_status {
    QMX_OK = 0,
    QMX_ERR_NULL = -1,             /* a required pointer is NULL */
    QMX_ERR_SIZE = -2,             /* a size or count is zero or out of range */
    QMX_ERR_SHAPE = -3,            /* shapes, counts or granularity disagree */
    QMX_ERR_BUFFER_TOO_SMALL = -4, /* an output or workspace buffer is smaller than required */
    QMX_ERR_OVERFLOW = -5,         /* size_t arithmetic or int32 accumulation would overflow */
    QMX_ERR_DTYPE = -6,            /* the dtype is unknown or not valid for this operation */
    QMX_ERR_ARG = -7,              /* an argument value is invalid (enum, shift, scale, ...) */
    QMX_ERR_NONFINITE = -8,        /* NaN or Inf where a finite value is required */
    QMX_ERR_PARSE = -9,            /* a spec, config or string is malformed */
    QMX_ERR_UNSUPPORTED = -10      /* a valid combination that qmx does not implement */
} qmx_status;

/* A short English name of a status ("ok", "NULL pointer", ...); never NULL. */
QMX_API const char *qmx_status_str(qmx_status status);

/* ---- 3. dtypes ------------------------------------------------------------------------------ */
typedef enum qmx_dtype {
    QMX_DTYPE_INVALID = 0,
    QMX_INT8 = 1,
    QMX_UINT8 = 2,
    QMX_INT4 = 3,          /* packed two per byte, low nibble first */
    QMX_UINT4 = 4,         /* packed two per byte, low nibble first */
    QMX_INT16 = 5,
    QMX_FP8_E4M3FN = 6,
    QMX_FP8_E5M2 = 7,
    QMX_FP8_E4M3FNUZ = 8,
    QMX_FP8_E5M2FNUZ = 9,
    QMX_FLOAT32 = 10,
    QMX_UINT16 = 11,       /* native-endian uint16_t (ONNX's UINT16) */
    QMX_FP4_E2M1 = 12,     /* packed two per byte, low nibble first (OCP MX FP4) */
    QMX_FP6_E2M3 = 13,     /* one per byte, low 6 bits (OCP MX FP6) */
    QMX_FP6_E3M2 = 14,     /* one per byte, low 6 bits (OCP MX FP6) */
    QMX_E8M0 = 15,         /* the MX shared scale: 2^(code - 127), 0xFF NaN */
    QMX_INT2 = 16,         /* packed four per byte, element 4i in the lowest bits */
    QMX_UINT2 = 17,        /* packed four per byte, element 4i in the lowest bits */
    QMX_INT3 = 18,         /* int3 .. int7: one per byte (int8_t) with their own range */
    QMX_INT5 = 19,
    QMX_INT6 = 20,
    QMX_INT7 = 21,
    QMX_NF4 = 22           /* QLoRA NormalFloat4 codes, packed two per byte like uint4 */
} qmx_dtype;

QMX_API const char *qmx_dtype_name(qmx_dtype dtype);   /* "int8", "fp8_e4m3fn", ...; "invalid" */
QMX_API int qmx_dtype_bits(qmx_dtype dtype);           /* storage bits per element: 2, 4, 8,
                                                          16, 32 (int3..int7, fp6: 8); 0 invalid */
QMX_API int qmx_dtype_is_fp8(qmx_dtype dtype);
QMX_API int qmx_dtype_is_int(qmx_dtype dtype);         /* int2..int16, uint2/4/8/16 */
/* Integer range of an integer dtype (int4 -> [-8, 7]); QMX_ERR_DTYPE otherwise. */
QMX_API qmx_status qmx_dtype_int_range(qmx_dtype dtype, int32_t *qmin, int32_t *qmax);
/* Bytes needed to store count elements (int4: (count + 1) / 2). QMX_ERR_OVERFLOW when that
 * does not fit size_t; count 0 gives 0 bytes and QMX_OK. */
QMX_API qmx_status qmx_dtype_storage_bytes(qmx_dtype dtype, size_t count, size_t *bytes);
/* Product of dims[0..rank-1] with overflow detection; rank 0 is a scalar (count 1). */
QMX_API qmx_status qmx_shape_count(const size_t *dims, int rank, size_t *count);
/* Pack int8 values in [-8, 7] (int4) or [0, 15] (uint4) into nibbles and back. */
QMX_API qmx_status qmx_pack_int4(qmx_dtype dtype, const int8_t *values, size_t count,
                                 uint8_t *packed, size_t packed_bytes);
QMX_API qmx_status qmx_unpack_int4(qmx_dtype dtype, const uint8_t *packed, size_t packed_bytes,
                                   size_t count, int8_t *values);
/* The same for int2 [-2, 1] / uint2 [0, 3], four per byte ((count + 3) / 4 bytes). */
QMX_API qmx_status qmx_pack_int2(qmx_dtype dtype, const int8_t *values, size_t count,
                                 uint8_t *packed, size_t packed_bytes);
QMX_API qmx_status qmx_unpack_int2(qmx_dtype dtype, const uint8_t *packed, size_t packed_bytes,
                                   size_t count, int8_t *values);

/* ---- 4. fp8 --------------------------------------------------------------------------------- */
/* Scalar conversions. fmt must be one of the four fp8 dtypes; any other fmt returns 0 / NaN. */
QMX_API uint8_t qmx_fp8_from_f32(float x, qmx_dtype fmt, int saturate);
QMX_API float qmx_fp8_to_f32(uint8_t code, qmx_dtype fmt);
/* Largest finite value of an fp8 format (448, 57344, 240, 57344); 0 for other dtypes. */
QMX_API float qmx_fp8_max(qmx_dtype fmt);
/* Scaled arrays, as AQT/Qwix/Flax use fp8: out[i] = fp8(x[i] / scale) (saturate as above),
 * and y[i] = f32(code[i]) * scale. scale must be finite and > 0. */
QMX_API qmx_status qmx_fp8_quantize_array(qmx_dtype fmt, const float *x, size_t n, float scale,
                                          int saturate, uint8_t *out);
QMX_API qmx_status qmx_fp8_dequantize_array(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                            float scale, float *y);
/* Several cores (qmx_kernels.h, USING SEVERAL CORES): qmx_array_tasks(n, &t) = ceil(n /
 * QMX_TASK_ELEMS) tasks (n == 0: QMX_ERR_SIZE), task t = elements [t * QMX_TASK_ELEMS, ...),
 * the last one ragged, whatever the worker count. The _run calls take the arguments plus
 * tasks [task_begin, task_end) and write only those elements: the serial call's errors first
 * (dtype, NULL, n, scale), then a range out of bounds or reversed (QMX_ERR_ARG); nothing
 * written on error. The _exec calls run the tasks through an executor (NULL or workers 0 / 1:
 * the serial call; else after the serial checks: workers < 0 QMX_ERR_ARG, parallel_for NULL
 * QMX_ERR_NULL, more than INT_MAX tasks QMX_ERR_OVERFLOW). Each element is converted on its
 * own: the serial call's bits for any split, order and worker count. */
QMX_API qmx_status qmx_array_tasks(size_t n, size_t *n_tasks);
QMX_API qmx_status qmx_fp8_quantize_array_run(qmx_dtype fmt, const float *x, size_t n,
                                              float scale, int saturate, uint8_t *out,
                                              size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_fp8_dequantize_array_run(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                float scale, float *y, size_t task_begin,
                                                size_t task_end);
QMX_API qmx_status qmx_fp8_quantize_array_exec(qmx_dtype fmt, const float *x, size_t n,
                                               float scale, int saturate, uint8_t *out,
                                               const qmx_executor *executor);
QMX_API qmx_status qmx_fp8_dequantize_array_exec(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                 float scale, float *y,
                                                 const qmx_executor *executor);

/* ---- 4b. fp4 / fp6 / E8M0 (OCP MX element and scale formats) ------------------------------- */
/* Scalar element codecs (contract: "FP4 / FP6 / E8M0" in the doc block above). Encoders round
 * to nearest even, or toward zero when round_toward_zero != 0 (CUDA cudaRoundNearest /
 * cudaRoundZero); they always saturate (overflow and +-Inf -> +-max: the formats have no Inf,
 * and CUDA and ml_dtypes both clamp); every NaN -> the positive max code (CUDA's rule).
 * fp4 codes are 4 bits (s.ee.m, a decoder ignores bits 4-7), fp6 codes 6 bits (s.ee.mmm /
 * s.eee.mm, a decoder ignores bits 6-7). fmt must be QMX_FP6_E2M3 or QMX_FP6_E3M2; any other
 * fmt encodes to 0 and decodes to NaN. Decoding is exact. */
QMX_API uint8_t qmx_fp4_from_f32(float x, int round_toward_zero);
QMX_API float qmx_fp4_to_f32(uint8_t code);
QMX_API uint8_t qmx_fp6_from_f32(float x, qmx_dtype fmt, int round_toward_zero);
QMX_API float qmx_fp6_to_f32(uint8_t code, qmx_dtype fmt);

/* E8M0 (the MX shared scale): code c is 2^(c - 127), 0xFF is NaN; no zero, no sign, no Inf.
 * The encoder rounds |x| to a power of two:
 *   DOWN     toward zero: 2^floor(log2 |x|) (the OCP MX rule; CUDA cudaRoundZero)
 *   UP       toward +Inf: 2^ceil(log2 |x|) (CUDA cudaRoundPosInf, Blackwell cvt.rp.ue8m0x2)
 *   NEAREST  ml_dtypes float8_e8m0fnu astype: between 2^e and 2^(e+1) the tie is 1.5 * 2^e and
 *            goes UP; below 2^-126 (float32 subnormals) x > 2^-127 -> 2^-126, else 2^-127.
 * Results below 2^-127 (zero included) give 0x00 (2^-127); results above 2^127 give 0xFE
 * (saturate != 0) or 0xFF (NaN); +-Inf -> 0xFE / 0xFF likewise; NaN -> 0xFF. An invalid mode
 * gives 0xFF. Decoding: 0x00 -> 2^-127 (a float32 subnormal), 0xFF -> +NaN (0x7FC00000). */
typedef enum qmx_e8m0_round {
    QMX_E8M0_ROUND_DOWN = 0,     /* toward zero: floor(log2 |x|), OCP MX */
    QMX_E8M0_ROUND_UP = 1,       /* toward +Inf: ceil(log2 |x|), CUDA cudaRoundPosInf */
    QMX_E8M0_ROUND_NEAREST = 2   /* ml_dtypes astype (ties at 1.5 * 2^e go up) */
} qmx_e8m0_round;
QMX_API uint8_t qmx_e8m0_from_f32(float x, qmx_e8m0_round mode, int saturate);
QMX_API float qmx_e8m0_to_f32(uint8_t code);

/* Scaled arrays, as qmx_fp8_quantize_array: code = encode(x[i] / scale), and
 * y[i] = decode(code) * scale; scale must be finite and > 0. A NaN x[i] is encoded itself,
 * not the quotient (which RISC-V makes the canonical +NaN), as qmx_fp8_quantize_array does.
 * fp4 output is PACKED: element 2i in the LOW nibble of packed[i], 2i + 1 in the high nibble;
 * (n + 1) / 2 bytes, an odd n's unused high nibble written 0 (QMX_FP4_E2M1's layout, as int4).
 * fp6: one code per byte (bits 6-7 are 0), n bytes. Errors (nothing written): QMX_ERR_NULL,
 * QMX_ERR_SIZE (n == 0), QMX_ERR_ARG (scale), QMX_ERR_DTYPE (fp6 fmt). */
QMX_API qmx_status qmx_fp4_quantize_array(const float *x, size_t n, float scale,
                                          int round_toward_zero, uint8_t *packed);
QMX_API qmx_status qmx_fp4_dequantize_array(const uint8_t *packed, size_t n, float scale,
                                            float *y);
QMX_API qmx_status qmx_fp6_quantize_array(qmx_dtype fmt, const float *x, size_t n, float scale,
                                          int round_toward_zero, uint8_t *out);
QMX_API qmx_status qmx_fp6_dequantize_array(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                            float scale, float *y);
/* Several cores: the fp8 arrays' tasks (qmx_array_tasks: elements [t * QMX_TASK_ELEMS, ...),
 * the last ragged; fp4's packed bytes [t * QMX_TASK_ELEMS / 2, ...), QMX_TASK_ELEMS being
 * even, so no byte is shared by two tasks) and the same contract: the serial call's errors
 * first, then a range out of bounds or reversed (QMX_ERR_ARG); nothing written on error; the
 * serial call's bits for any split, order and worker count (each element converted on its
 * own). _exec: NULL or workers 0 / 1 is the serial call. */
QMX_API qmx_status qmx_fp4_quantize_array_run(const float *x, size_t n, float scale,
                                              int round_toward_zero, uint8_t *packed,
                                              size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_fp4_dequantize_array_run(const uint8_t *packed, size_t n, float scale,
                                                float *y, size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_fp6_quantize_array_run(qmx_dtype fmt, const float *x, size_t n,
                                              float scale, int round_toward_zero, uint8_t *out,
                                              size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_fp6_dequantize_array_run(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                float scale, float *y, size_t task_begin,
                                                size_t task_end);
QMX_API qmx_status qmx_fp4_quantize_array_exec(const float *x, size_t n, float scale,
                                               int round_toward_zero, uint8_t *packed,
                                               const qmx_executor *executor);
QMX_API qmx_status qmx_fp4_dequantize_array_exec(const uint8_t *packed, size_t n, float scale,
                                                 float *y, const qmx_executor *executor);
QMX_API qmx_status qmx_fp6_quantize_array_exec(qmx_dtype fmt, const float *x, size_t n,
                                               float scale, int round_toward_zero, uint8_t *out,
                                               const qmx_executor *executor);
QMX_API qmx_status qmx_fp6_dequantize_array_exec(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                 float scale, float *y,
                                                 const qmx_executor *executor);

/* Packed fp6: four 6-bit codes in three bytes, little-endian bit stream (code i in bits
 * 6i .. 6i + 5 of the stream, bit 0 = the lowest bit of byte 0), the layout of AMD's
 * ROCm/rocRoller (getFp6 / setFp6, packFP6x16). Per group of four codes c0..c3:
 *     byte 0 = c0 | (c1 & 3) << 6,  byte 1 = c1 >> 2 | (c2 & 15) << 4,  byte 2 = c2 >> 4 | c3 << 2
 * qmx_fp6_packed_bytes(count) = ceil(6 * count / 8) = 3 * (count / 4) + {0, 1, 2, 3}[count % 4]
 * (never overflows). The unused high bits of the last byte are written 0 and ignored on read.
 * pack: codes must be < 64 (else QMX_ERR_ARG); QMX_ERR_NULL, QMX_ERR_SIZE (count 0),
 * QMX_ERR_BUFFER_TOO_SMALL (packed_bytes < qmx_fp6_packed_bytes(count)); nothing is written
 * on error. The buffers must not overlap. */
QMX_API size_t qmx_fp6_packed_bytes(size_t count);
QMX_API qmx_status qmx_pack_fp6(const uint8_t *codes, size_t count, uint8_t *packed,
                                size_t packed_bytes);
QMX_API qmx_status qmx_unpack_fp6(const uint8_t *packed, size_t packed_bytes, size_t count,
                                  uint8_t *codes);

/* ---- 5. portable random numbers (stochastic rounding) --------------------------------------- */
/* xoshiro128** over four 32-bit words, seeded through splitmix64: 32-bit arithmetic only, the
 * same stream on every target. The caller owns the state; qmx never keeps one. */
typedef struct qmx_rng { uint32_t s[4]; } qmx_rng;
QMX_API void qmx_rng_seed(qmx_rng *rng, uint64_t seed);
QMX_API uint32_t qmx_rng_next_u32(qmx_rng *rng);
/* u - 0.5 for u = (next_u32 >> 8) * 2^-24: a float in [-0.5, 0.5), exactly representable. */
QMX_API float qmx_rng_next_noise(qmx_rng *rng);

/* ---- 6. quantize / dequantize --------------------------------------------------------------- */
typedef enum qmx_granularity {
    QMX_PER_TENSOR = 0,
    QMX_PER_CHANNEL = 1,
    QMX_PER_BLOCK = 2
} qmx_granularity;

typedef enum qmx_recipe {
    QMX_RECIPE_AQT = 0,     /* default */
    QMX_RECIPE_QWIX = 1,
    QMX_RECIPE_TFLITE = 2,
    QMX_RECIPE_TORCH = 3,   /* torch.ao observers + torch.quantize_per_tensor / _per_channel */
    QMX_RECIPE_ONNX = 4     /* ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear */
} qmx_recipe;

typedef enum qmx_round {
    QMX_ROUND_DEFAULT = 0,      /* the recipe's own rounding */
    QMX_ROUND_NEAREST_EVEN = 1,
    QMX_ROUND_HALF_AWAY = 2,
    QMX_ROUND_STOCHASTIC = 3
} qmx_round;

/* How a tensor is quantized. Zero-initialise and set what you need: {0} is int8, per tensor,
 * symmetric, AQT recipe, nearest-even, over count elements as one run. */
typedef struct qmx_qconfig {
    qmx_dtype dtype;             /* 0 (invalid) is read as QMX_INT8 */
    qmx_granularity granularity;
    size_t outer, axis_len, inner; /* the [outer][axis_len][inner] view; all 0 = [1][count][1] */
    size_t block_size;           /* QMX_PER_BLOCK: block length along axis_len */
    qmx_recipe recipe;
    qmx_round rounding;
    int asymmetric;              /* 1: zero points (Qwix/TFLite/TORCH/ONNX, integer dtypes) */
    int narrow_range;            /* 1: force [-qmax, qmax] (e.g. [-127, 127]) for any recipe */
    int preserve_max_val;        /* AQT: scale = absmax / qmax instead of absmax / (qmax + 0.5) */
    qmx_rng *rng;                /* required with QMX_ROUND_STOCHASTIC */
    int reduce_range;            /* QMX_RECIPE_TORCH: qparams for a range one bit narrower
                                    (int8 [-64, 63], uint8 [0, 127]); quantize still clamps to
                                    the full range, as torch. Other recipes: must be 0 */
    int fp8_no_saturate;         /* fp8 quantize: 1 = overflow and Inf become NaN (Inf for
                                    E5M2), ONNX saturate=0 / CUDA __NV_NOSAT; 0 = clip to +-max */
} qmx_qconfig;

/* Number of scales (and zero points) the config needs for count elements. Validates the
 * config against count (the view must multiply to count). */
QMX_API qmx_status qmx_qparams_count(const qmx_qconfig *cfg, size_t count, size_t *n_params);
/* Scale (and zero point when cfg->asymmetric; zero_points may be NULL otherwise) of every
 * group, by the config's recipe. QMX_ERR_NONFINITE when a group holds NaN or Inf: groups
 * 0 .. g-1 before the first such group g are written, g and later untouched (one pass). */
QMX_API qmx_status qmx_compute_qparams(const qmx_qconfig *cfg, const float *x, size_t count,
                                       float *scales, size_t n_scales, int32_t *zero_points);
/* q (storage of cfg->dtype, q_bytes long) = quantize(x) with the given parameters. Scales
 * must be finite and > 0; zero points within the dtype range. zero_points may be NULL
 * (symmetric). Stack: a 256-byte stage (int4, int16), and on AVX-512 a 512-byte buffer of
 * multipliers for a scale per column (per channel along the last axis). */
QMX_API qmx_status qmx_quantize(const qmx_qconfig *cfg, const float *x, size_t count,
                                const float *scales, size_t n_scales, const int32_t *zero_points,
                                void *q, size_t q_bytes);
QMX_API qmx_status qmx_dequantize(const qmx_qconfig *cfg, const void *q, size_t q_bytes,
                                  size_t count, const float *scales, size_t n_scales,
                                  const int32_t *zero_points, float *y);
/* Range calls for several cores (qmx_kernels.h, USING SEVERAL CORES; private prefix qmx__par_).
 * A config without stochastic rounding (per tensor, per channel or per block, any dtype) splits
 * into ceil(count / QMX_TASK_ELEMS) tasks, task t = elements [t * QMX_TASK_ELEMS, ...) of the
 * flat index (whole bytes of every dtype; the last task ragged); the partition depends on
 * count only, never on the worker count. Stochastic rounding is 1 task (its random stream
 * runs in flat order). Each element is quantized or dequantized on its own with the
 * parameters of its group, so any split, order or interleaving of the tasks gives the serial
 * call's bits. The _run calls take the arguments of qmx_quantize / qmx_dequantize plus tasks
 * [task_begin, task_end) and write only those elements (a run of tasks as one call). Errors:
 * those of the whole call that need no data (NULLs, the view, n_scales, the storage), then a
 * range out of bounds or reversed (QMX_ERR_ARG), then the scales and zero points: per tensor
 * all of them, per channel / per block those the call's own elements use (a bad one used only
 * by other tasks is theirs to report); nothing written on error.
 * qmx_quantize_exec / qmx_dequantize_exec: qmx_quantize / qmx_dequantize through an executor
 * (qmx_executor above; NULL or workers 0 / 1: the serial call itself). With workers >= 2 every
 * error of the serial call is checked first (all scales and zero points), then workers < 0
 * (QMX_ERR_ARG), parallel_for NULL (QMX_ERR_NULL), more than INT_MAX tasks
 * (QMX_ERR_OVERFLOW); then parallel_for runs the tasks (not called for 1 task). No workspace:
 * the stack use of the serial call per worker. Same bits as the serial call. */
#define QMX_TASK_ELEMS 65536
QMX_API qmx_status qmx_quantize_tasks(const qmx_qconfig *cfg, size_t count, size_t *n_tasks);
QMX_API qmx_status qmx_quantize_run(const qmx_qconfig *cfg, const float *x, size_t count,
                                    const float *scales, size_t n_scales,
                                    const int32_t *zero_points, void *q, size_t q_bytes,
                                    size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_dequantize_run(const qmx_qconfig *cfg, const void *q, size_t q_bytes,
                                      size_t count, const float *scales, size_t n_scales,
                                      const int32_t *zero_points, float *y, size_t task_begin,
                                      size_t task_end);
QMX_API qmx_status qmx_quantize_exec(const qmx_qconfig *cfg, const float *x, size_t count,
                                     const float *scales, size_t n_scales,
                                     const int32_t *zero_points, void *q, size_t q_bytes,
                                     const qmx_executor *executor);
QMX_API qmx_status qmx_dequantize_exec(const qmx_qconfig *cfg, const void *q, size_t q_bytes,
                                       size_t count, const float *scales, size_t n_scales,
                                       const int32_t *zero_points, float *y,
                                       const qmx_executor *executor);

/* ---- 6b. block-scaled formats: MX (OCP microscaling) and NVFP4 --------------------------------
 * One scale per block of consecutive elements along axis_len of the [outer][axis_len][inner]
 * view (inner = 1: the last axis); elements and scales are separate arrays (torchao / OCP
 * layout). Elements: MXFP8 one fp8 code per byte, MXFP6 one fp6 code per byte (low 6 bits),
 * MXFP4 / NVFP4 two fp4 codes per byte by flat element index (element 2i in the low nibble).
 * Scales, in [outer][block][inner] order: an E8M0 byte per block (MX), an E4M3 byte (NVFP4). */
typedef enum qmx_mx_format {
    QMX_MXFP8_E4M3 = 0,
    QMX_MXFP8_E5M2 = 1,
    QMX_MXFP6_E2M3 = 2,
    QMX_MXFP6_E3M2 = 3,
    QMX_MXFP4 = 4,           /* E2M1 elements */
    QMX_NVFP4 = 5,           /* E2M1 elements, an E4M3 scale per 16, optional fp32 tensor scale */
    QMX_MXINT8 = 6           /* int8 elements, value q * 2^-6 (emax 0): QMX_MX_MICROXCALING only */
} qmx_mx_format;

/* Each value reproduces one origin bit for bit (see "BLOCK-SCALED FORMATS" at the top). */
typedef enum qmx_mx_rule {
    QMX_MX_FLOOR = 0,        /* OCP MX v1.0 = torchao FLOOR (default); NVFP4: torchao */
    QMX_MX_CEIL = 1,         /* torchao CEIL */
    QMX_MX_EVEN = 2,         /* torchao EVEN */
    QMX_MX_RCEIL = 3,        /* torchao RCEIL = cuBLAS / TransformerEngine */
    QMX_MX_QWIX = 4,         /* Qwix 'mxfp8', 'mxfp8_16', 'mxfp4', 'nvfp4' */
    QMX_MX_MICROXCALING = 5, /* microsoft/microxcaling _quantize_mx (round 'nearest'): every
                                MX format but NVFP4, and MXINT8 */
    QMX_MX_GGML = 6          /* ggml quantize_row_mxfp4_ref / _nvfp4_ref: MXFP4 (block 32),
                                NVFP4 (UE4M3 per 16) */
} qmx_mx_rule;

/* Zero-initialised: MXFP8 E4M3, FLOOR, blocks of 32 along a flat array. */
typedef struct qmx_mx_config {
    qmx_mx_format format;
    qmx_mx_rule rule;
    size_t block_size;               /* 0: 32 (NVFP4: 16); 1 .. 1024; QMX_MX_GGML: 0 or that */
    size_t outer, axis_len, inner;   /* the view; all 0 = [1][count][1] */
    float tensor_scale;              /* NVFP4 two-level (torchao): the fp32 per-tensor scale;
                                        0 = single level. Finite and > 0 when given */
} qmx_mx_config;

/* Bytes of elements and number of scales for count elements. */
QMX_API qmx_status qmx_mx_storage(const qmx_mx_config *cfg, size_t count, size_t *element_bytes,
                                  size_t *n_scales);
/* Scales and elements of x by the config's rule. Writes nothing on error. NaN / Inf in x is not
 * an error: each rule writes what its origin writes (documented at the top). Stack: under 512
 * bytes scalar; the vector kernels about 1.7 KiB (AVX-512: 16 block maxima and the constants in
 * 64-byte registers), 1.1 KiB (AVX2). */
QMX_API qmx_status qmx_mx_quantize(const qmx_mx_config *cfg, const float *x, size_t count,
                                   uint8_t *elements, size_t element_bytes, uint8_t *scales,
                                   size_t n_scales);
/* y = element * scale as the rule's origin dequantizes (NaN scale codes give NaN). */
QMX_API qmx_status qmx_mx_dequantize(const qmx_mx_config *cfg, const uint8_t *elements,
                                     size_t element_bytes, const uint8_t *scales,
                                     size_t n_scales, size_t count, float *y);
/* Several cores (qmx_kernels.h, USING SEVERAL CORES): qmx_mx_tasks gives the task count, a
 * function of the config and count only: tasks of whole (outer, block) rows of scales (inner
 * scales each, contiguous elements), max(1, QMX_TASK_ELEMS / (block x inner)) rows per task,
 * the last task ragged; fp4 formats with an odd block x inner or axis_len x inner are one
 * task (a byte would hold two tasks' nibbles). The _run calls write only their tasks'
 * elements and scales (the unused high nibble of an odd fp4 count: the last task): the
 * serial call's errors first, then a range out of bounds or reversed (QMX_ERR_ARG); nothing
 * written on error. Each block is computed from its own elements only, by the serial call's
 * code, so any split, order and worker count gives the serial call's bits. _exec: NULL or
 * workers 0 / 1 is the serial call; else the serial call's checks, then workers < 0
 * (QMX_ERR_ARG), parallel_for NULL (QMX_ERR_NULL), then the tasks. */
QMX_API qmx_status qmx_mx_tasks(const qmx_mx_config *cfg, size_t count, size_t *n_tasks);
QMX_API qmx_status qmx_mx_quantize_run(const qmx_mx_config *cfg, const float *x, size_t count,
                                       uint8_t *elements, size_t element_bytes, uint8_t *scales,
                                       size_t n_scales, size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_mx_dequantize_run(const qmx_mx_config *cfg, const uint8_t *elements,
                                         size_t element_bytes, const uint8_t *scales,
                                         size_t n_scales, size_t count, float *y,
                                         size_t task_begin, size_t task_end);
QMX_API qmx_status qmx_mx_quantize_exec(const qmx_mx_config *cfg, const float *x, size_t count,
                                        uint8_t *elements, size_t element_bytes,
                                        uint8_t *scales, size_t n_scales,
                                        const qmx_executor *executor);
QMX_API qmx_status qmx_mx_dequantize_exec(const qmx_mx_config *cfg, const uint8_t *elements,
                                          size_t element_bytes, const uint8_t *scales,
                                          size_t n_scales, size_t count, float *y,
                                          const qmx_executor *executor);
/* ggml's block layouts (ggml-common.h), lossless both ways for MXFP4 and NVFP4 (any rule):
 *   block_mxfp4  17 bytes per 32 elements: the E8M0 scale, then qs[16], qs[j] = element j (low
 *                nibble) | element j + 16 (high nibble)
 *   block_nvfp4  36 bytes per 64 elements: the four scale bytes d[0..3] (one per 16), then
 *                qs[32], qs[8s + j] = element 16s + j (low nibble) | element 16s + j + 8 (high)
 * The config must have blocks of 32 (MXFP4) / 16 (NVFP4) along a last axis (inner 1) whose
 * length is a multiple of 32 / 64 (else QMX_ERR_UNSUPPORTED / QMX_ERR_SHAPE); other formats:
 * QMX_ERR_UNSUPPORTED. NVFP4's tensor_scale is not part of the block and is not stored.
 * qmx_mx_ggml_bytes gives the size (count / 32 * 17, count / 64 * 36). Element and scale
 * buffers are those of qmx_mx_quantize; the buffers must not overlap. Nothing is written on
 * error (QMX_ERR_NULL, QMX_ERR_BUFFER_TOO_SMALL, and the config's errors). */
QMX_API qmx_status qmx_mx_ggml_bytes(const qmx_mx_config *cfg, size_t count, size_t *ggml_bytes);
QMX_API qmx_status qmx_mx_to_ggml(const qmx_mx_config *cfg, const uint8_t *elements,
                                  size_t element_bytes, const uint8_t *scales, size_t n_scales,
                                  size_t count, uint8_t *out, size_t out_bytes);
QMX_API qmx_status qmx_mx_from_ggml(const qmx_mx_config *cfg, const uint8_t *in, size_t in_bytes,
                                    size_t count, uint8_t *elements, size_t element_bytes,
                                    uint8_t *scales, size_t n_scales);

/* ---- 7. fixed-point requantization ---------------------------------------------------------- */
typedef enum qmx_requant_mode {
    QMX_REQUANT_DOUBLE_ROUNDING = 0, /* TFLite default / gemmlowp (default) */
    QMX_REQUANT_SINGLE_ROUNDING = 1, /* TFLITE_SINGLE_ROUNDING, CMSIS-NN option */
    QMX_REQUANT_FLOAT = 2,           /* XNNPACK fp32: RNE((float)acc * scale) */
    QMX_REQUANT_FLOAT_EXACT = 3      /* RNE(acc * scale) of the exact product: ONNX QLinearMatMul /
                                        QLinearConv (qmx_requantize_array only) */
} qmx_requant_mode;

/* TFLite QuantizeMultiplier (default build). NaN/Inf -> QMX_ERR_NONFINITE. A multiplier
 * whose shift would fall below -31 gives (0, 0) as in TFLite. */
QMX_API qmx_status qmx_quantize_multiplier(double real_multiplier, int32_t *multiplier, int *shift);
/* The TFLITE_SINGLE_ROUNDING build of the same: shift > 30 saturates to (2^31 - 1, 30). */
QMX_API qmx_status qmx_quantize_multiplier_single_rounding(double real_multiplier,
                                                           int32_t *multiplier, int *shift);
/* Double rounding (see the top). Total: a shift outside [-31, 30] is clamped into it. */
QMX_API int32_t qmx_requantize(int32_t acc, int32_t multiplier, int shift);
/* Single rounding: (acc * m + 2^(30 - shift)) >> (31 - shift), saturated to int32. A negative
 * multiplier is treated as 0 and the shift clamped, as qmx_requantize_check rejects both. */
QMX_API int32_t qmx_requantize_single_rounding(int32_t acc, int32_t multiplier, int shift);
/* XNNPACK-style: RNE((float)acc * scale), saturated to int32 (NaN scale gives 0). */
QMX_API int32_t qmx_requantize_float(int32_t acc, float scale);
/* RNE of the exact real product acc * scale (one rounding, integer arithmetic, no FPU),
 * saturated to int32; scale must be finite and >= 0 (else 0). This is ONNX's QLinearMatMul:
 * its reference multiplies the int32 accumulator by the float32 multiplier
 * float32(float32(a_scale * b_scale) / y_scale) in float64 (exact while |acc| < 2^29, so equal
 * to this) and rounds half to even; y = saturate(that + y_zero_point). */
QMX_API int32_t qmx_requantize_float_exact(int32_t acc, float scale);
/* QMX_OK when (multiplier, shift) is valid for the mode: shift in [-31, 30]; single rounding
 * also needs multiplier >= 0. */
QMX_API qmx_status qmx_requantize_check(qmx_requant_mode mode, int32_t multiplier, int shift);

/* The output stage of a quantized layer (CMSIS-NN / TFLite fully-connected):
 *   out[r][c] = clamp(requant(acc[r][c] + bias[c]) + output_zero_point, act_min, act_max)
 * acc is [rows][channels]. Parameters are per channel when per_channel, else element 0. */
typedef struct qmx_requant_config {
    qmx_requant_mode mode;
    int per_channel;
    const int32_t *multipliers;   /* fixed-point modes */
    const int *shifts;            /* fixed-point modes */
    const float *scales;          /* QMX_REQUANT_FLOAT */
    const int32_t *bias;          /* optional, per channel, added to acc (wrapping, as int32) */
    int32_t output_zero_point;
    int32_t act_min, act_max;     /* both 0: the output dtype's full range */
    qmx_dtype out_dtype;          /* QMX_INT8 (default when 0), QMX_INT16, and in
                                     qmx_requantize_array only QMX_UINT8, QMX_UINT16 */
    int32_t weight_zero_point;    /* the fully-connected kernels of qmx_kernels.h only (their
                                     acc is sum (A - a_zp)(W - weight_zero_point); TFLite's
                                     filter offset is its negation): [-128, 127] for int8 W,
                                     [-8, 7] for int4 W; 0 = symmetric weights. Not read by
                                     qmx_requantize_array (acc is given there) */
    const qmx_executor *executor; /* the fully-connected kernels only: NULL = serial (see
                                     qmx_kernels.h USING SEVERAL CORES) */
} qmx_requant_config;
QMX_API qmx_status qmx_requantize_array(const qmx_requant_config *cfg, const int32_t *acc,
                                        size_t rows, size_t channels, void *out, size_t out_bytes);

/* ---- 8. half floats and peer formats (interop) ---------------------------------------------- */
/* IEEE binary16 and bfloat16 <-> float (see INTEROP at the top for NaN and rounding). */
QMX_API float qmx_f16_to_f32(uint16_t h);
QMX_API uint16_t qmx_f32_to_f16(float x);
QMX_API float qmx_bf16_to_f32(uint16_t b);
QMX_API uint16_t qmx_f32_to_bf16(float x);

/* ggml / llama.cpp / GGUF blocks of 32 elements (see INTEROP at the top for the bytes). */
#define QMX_GGML_BLOCK 32
#define QMX_GGML_Q8_0_BLOCK_BYTES 34
#define QMX_GGML_Q4_0_BLOCK_BYTES 18
/* int8, per block of 32 (scales[n/32]) -> Q8_0 blocks, and back. n must be a multiple of 32. */
QMX_API qmx_status qmx_ggml_q8_0_from_qmx(const int8_t *q, size_t n, const float *scales,
                                          size_t n_scales, uint8_t *blocks, size_t blocks_bytes);
QMX_API qmx_status qmx_ggml_q8_0_to_qmx(const uint8_t *blocks, size_t blocks_bytes, size_t n,
                                        int8_t *q, size_t q_len, float *scales, size_t n_scales);
/* Packed int4 (zero_points NULL) or uint4 with per-block zero points 7 or 8, per block of 32
 * -> Q4_0 blocks; and Q4_0 -> uint4 + per-block zero points (always lossless). */
QMX_API qmx_status qmx_ggml_q4_0_from_qmx(qmx_dtype dtype, const uint8_t *q, size_t n,
                                          const float *scales, const int32_t *zero_points,
                                          size_t n_params, uint8_t *blocks, size_t blocks_bytes);
QMX_API qmx_status qmx_ggml_q4_0_to_qmx(const uint8_t *blocks, size_t blocks_bytes, size_t n,
                                        uint8_t *q_uint4, size_t q_bytes, float *scales,
                                        int32_t *zero_points, size_t n_params);

#ifdef __cplusplus
}
#endif
#endif /* QMX_H */

/* ============================================================================================
 * 9. IMPLEMENTATION
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX_IMPLEMENTATION_DONE)
#define QMX_IMPLEMENTATION_DONE

/* Compile-time SIMD selection: a path is built when the compiler targets its ISA. */
#if !defined(QMX_NO_SIMD)
#  if !defined(QMX_NO_AVX512) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#    define QMX__AVX512 1
#  endif
#  if !defined(QMX_NO_AVX2) && defined(__AVX2__)
#    define QMX__AVX2 1
#  endif
#  if !defined(QMX_NO_NEON) && (defined(__ARM_NEON) || defined(__ARM_NEON__)) && defined(__aarch64__)
#    define QMX__NEON64 1
#  endif
#  if !defined(QMX_NO_RVV) && defined(__riscv_vector) && defined(__riscv_v_intrinsic) && \
      __riscv_v_intrinsic >= 11000 && defined(__riscv_v_elen) && __riscv_v_elen >= 64
#    define QMX__RVV 1   /* RVV 1.0 with 64-bit elements (the widening requantization) */
#  endif
#endif
#if defined(QMX__AVX512) || defined(QMX__AVX2)
#  include <immintrin.h>
#endif
#if defined(QMX__NEON64)
#  include <arm_neon.h>
#endif
#if defined(QMX__RVV)
#  include <riscv_vector.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define QMX__DEF QMX_API

/* FMA contraction off where a product is compared or subtracted (GCC contracts a * b - c across
 * statements in C++ and in GNU C modes): GCC by attribute, clang by pragma plus an opaque copy
 * (clang's -ffp-contract=fast ignores the pragma). The same scheme as qmx_calib.h / qmx_kernels.h. */
#if defined(__GNUC__) && !defined(__clang__)
#  define QMX__NOFMA __attribute__((optimize("fp-contract=off")))
#else
#  define QMX__NOFMA
#endif
#if defined(__clang__)
#  define QMX__PRAGMA_NOFMA _Pragma("clang fp contract(off)")
#  define QMX__OPAQUE(v) __asm__("" : "+m"(v))
#else
#  define QMX__PRAGMA_NOFMA
#  define QMX__OPAQUE(v) ((void)0)
#endif
/* The same for SIMD vectors (in their registers): intrinsic multiplies and adds are plain fmul /
 * fadd to clang, so -ffp-contract=fast fuses vaddq_f32(y, vmulq_f32(p, s)) into fmla too. In
 * inner loops one asm for several vectors (VOPAQUE2 / 4): each asm statement counts against
 * clang's unrolling and unswitching, one per product halved the AVX2 f32 x 4-bit blob GEMV. */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#  define QMX__VOPAQUE(v) __asm__("" : "+v"(v))
#  define QMX__VOPAQUE2(a, b) __asm__("" : "+v"(a), "+v"(b))
#  define QMX__VOPAQUE4(a, b, c, d) __asm__("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d))
#elif defined(__clang__) && defined(__aarch64__)
#  define QMX__VOPAQUE(v) __asm__("" : "+w"(v))
#  define QMX__VOPAQUE2(a, b) __asm__("" : "+w"(a), "+w"(b))
#  define QMX__VOPAQUE4(a, b, c, d) __asm__("" : "+w"(a), "+w"(b), "+w"(c), "+w"(d))
#else
#  define QMX__VOPAQUE(v) ((void)0)
#  define QMX__VOPAQUE2(a, b) ((void)0)
#  define QMX__VOPAQUE4(a, b, c, d) ((void)0)
#endif

/* ---- bit casts (no libc): memcpy builtins where available, a union otherwise ---- */
static uint32_t qmx__f32_bits(float f) {
#if defined(__GNUC__) || defined(__clang__)
    uint32_t u; __builtin_memcpy(&u, &f, 4); return u;
#else
    union { float f; uint32_t u; } v; v.f = f; return v.u;
#endif
}
static float qmx__bits_f32(uint32_t u) {
#if defined(__GNUC__) || defined(__clang__)
    float f; __builtin_memcpy(&f, &u, 4); return f;
#else
    union { float f; uint32_t u; } v; v.u = u; return v.f;
#endif
}
static uint64_t qmx__f64_bits(double d) {
#if defined(__GNUC__) || defined(__clang__)
    uint64_t u; __builtin_memcpy(&u, &d, 8); return u;
#else
    union { double d; uint64_t u; } v; v.d = d; return v.u;
#endif
}

static int qmx__isfinite(float x) { return (qmx__f32_bits(x) & 0x7F800000u) != 0x7F800000u; }
static int qmx__isnan(float x) { return (qmx__f32_bits(x) & 0x7FFFFFFFu) > 0x7F800000u; }
static float qmx__fabs(float x) { return qmx__bits_f32(qmx__f32_bits(x) & 0x7FFFFFFFu); }

/* ---- 2. status ---- */
QMX__DEF const char *qmx_status_str(qmx_status status) {
    switch (status) {
    case QMX_OK: return "ok";
    case QMX_ERR_NULL: return "NULL pointer";
    case QMX_ERR_SIZE: return "invalid size";
    case QMX_ERR_SHAPE: return "shape mismatch";
    case QMX_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case QMX_ERR_OVERFLOW: return "overflow";
    case QMX_ERR_DTYPE: return "invalid dtype";
    case QMX_ERR_ARG: return "invalid argument";
    case QMX_ERR_NONFINITE: return "NaN or Inf";
    case QMX_ERR_PARSE: return "parse error";
    case QMX_ERR_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

/* ---- 3. dtypes ---- */
QMX__DEF const char *qmx_dtype_name(qmx_dtype d) {
    switch (d) {
    case QMX_INT8: return "int8";
    case QMX_UINT8: return "uint8";
    case QMX_INT4: return "int4";
    case QMX_UINT4: return "uint4";
    case QMX_INT16: return "int16";
    case QMX_FP8_E4M3FN: return "fp8_e4m3fn";
    case QMX_FP8_E5M2: return "fp8_e5m2";
    case QMX_FP8_E4M3FNUZ: return "fp8_e4m3fnuz";
    case QMX_FP8_E5M2FNUZ: return "fp8_e5m2fnuz";
    case QMX_FLOAT32: return "float32";
    case QMX_UINT16: return "uint16";
    case QMX_FP4_E2M1: return "fp4_e2m1";
    case QMX_FP6_E2M3: return "fp6_e2m3";
    case QMX_FP6_E3M2: return "fp6_e3m2";
    case QMX_E8M0: return "e8m0";
    case QMX_INT2: return "int2";
    case QMX_UINT2: return "uint2";
    case QMX_INT3: return "int3";
    case QMX_INT5: return "int5";
    case QMX_INT6: return "int6";
    case QMX_INT7: return "int7";
    case QMX_NF4: return "nf4";
    case QMX_DTYPE_INVALID: break;
    }
    return "invalid";
}
QMX__DEF int qmx_dtype_bits(qmx_dtype d) {
    switch (d) {
    case QMX_INT2: case QMX_UINT2: return 2;
    case QMX_INT4: case QMX_UINT4: case QMX_FP4_E2M1: case QMX_NF4: return 4;
    case QMX_INT8: case QMX_UINT8: case QMX_FP8_E4M3FN: case QMX_FP8_E5M2:
    case QMX_FP8_E4M3FNUZ: case QMX_FP8_E5M2FNUZ: case QMX_FP6_E2M3: case QMX_FP6_E3M2:
    case QMX_E8M0: case QMX_INT3: case QMX_INT5: case QMX_INT6: case QMX_INT7: return 8;
    case QMX_INT16: case QMX_UINT16: return 16;
    case QMX_FLOAT32: return 32;
    case QMX_DTYPE_INVALID: break;
    }
    return 0;
}
QMX__DEF int qmx_dtype_is_fp8(qmx_dtype d) {
    return d == QMX_FP8_E4M3FN || d == QMX_FP8_E5M2 || d == QMX_FP8_E4M3FNUZ || d == QMX_FP8_E5M2FNUZ;
}
QMX__DEF int qmx_dtype_is_int(qmx_dtype d) {
    int32_t lo, hi;
    return qmx_dtype_int_range(d, &lo, &hi) == QMX_OK;
}
QMX__DEF qmx_status qmx_dtype_int_range(qmx_dtype d, int32_t *qmin, int32_t *qmax) {
    int32_t lo, hi;
    switch (d) {
    case QMX_INT8: lo = -128; hi = 127; break;
    case QMX_UINT8: lo = 0; hi = 255; break;
    case QMX_INT4: lo = -8; hi = 7; break;
    case QMX_UINT4: lo = 0; hi = 15; break;
    case QMX_INT16: lo = -32768; hi = 32767; break;
    case QMX_UINT16: lo = 0; hi = 65535; break;
    case QMX_INT2: lo = -2; hi = 1; break;
    case QMX_UINT2: lo = 0; hi = 3; break;
    case QMX_INT3: lo = -4; hi = 3; break;
    case QMX_INT5: lo = -16; hi = 15; break;
    case QMX_INT6: lo = -32; hi = 31; break;
    case QMX_INT7: lo = -64; hi = 63; break;
    default: return QMX_ERR_DTYPE;
    }
    if (!qmin || !qmax) return QMX_ERR_NULL;
    *qmin = lo; *qmax = hi;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_dtype_storage_bytes(qmx_dtype d, size_t count, size_t *bytes) {
    size_t b;
    if (!bytes) return QMX_ERR_NULL;
    switch (qmx_dtype_bits(d)) {
    case 2: b = count / 4 + ((count & 3) != 0); break;
    case 4: b = count / 2 + (count & 1); break;
    case 8: b = count; break;
    case 16: if (count > SIZE_MAX / 2) return QMX_ERR_OVERFLOW; b = count * 2; break;
    case 32: if (count > SIZE_MAX / 4) return QMX_ERR_OVERFLOW; b = count * 4; break;
    default: return QMX_ERR_DTYPE;
    }
    *bytes = b;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_shape_count(const size_t *dims, int rank, size_t *count) {
    size_t n = 1;
    int i;
    if (!count || (rank > 0 && !dims)) return QMX_ERR_NULL;
    if (rank < 0) return QMX_ERR_SIZE;
    for (i = 0; i < rank; i++) {
        if (dims[i] != 0 && n > SIZE_MAX / dims[i]) return QMX_ERR_OVERFLOW;
        n *= dims[i];
    }
    *count = n;
    return QMX_OK;
}
static void qmx__set_nibble(uint8_t *p, size_t i, int32_t v) {
    uint8_t *b = p + i / 2;
    uint8_t nib = (uint8_t)((uint32_t)v & 0xFu);
    if (i & 1) *b = (uint8_t)((*b & 0x0Fu) | (nib << 4));
    else *b = (uint8_t)((*b & 0xF0u) | nib);
}
static int32_t qmx__get_nibble(const uint8_t *p, size_t i, int is_signed) {
    int32_t nib = (int32_t)((p[i / 2] >> ((i & 1) * 4)) & 0xFu);
    return is_signed ? (nib ^ 8) - 8 : nib;
}
QMX__DEF qmx_status qmx_pack_int4(qmx_dtype d, const int8_t *v, size_t n, uint8_t *packed,
                                  size_t packed_bytes) {
    size_t i;
    int32_t lo = d == QMX_INT4 ? -8 : 0, hi = d == QMX_INT4 ? 7 : 15;
    if (d != QMX_INT4 && d != QMX_UINT4) return QMX_ERR_DTYPE;
    if (!v || !packed) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (packed_bytes < n / 2 + (n & 1)) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi) return QMX_ERR_ARG;
    for (i = 0; i + 1 < n; i += 2)
        packed[i / 2] = (uint8_t)(((uint32_t)v[i] & 0xFu) | (((uint32_t)v[i + 1] & 0xFu) << 4));
    if (n & 1) packed[n / 2] = (uint8_t)((uint32_t)v[n - 1] & 0xFu);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_pack_int2(qmx_dtype d, const int8_t *v, size_t n, uint8_t *packed,
                                  size_t packed_bytes) {
    size_t i;
    int32_t lo = d == QMX_INT2 ? -2 : 0, hi = d == QMX_INT2 ? 1 : 3;
    if (d != QMX_INT2 && d != QMX_UINT2) return QMX_ERR_DTYPE;
    if (!v || !packed) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (packed_bytes < n / 4 + ((n & 3) != 0)) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi) return QMX_ERR_ARG;
    for (i = 0; i < n; i += 4) {
        uint32_t b = 0;
        size_t k;
        for (k = 0; k < 4 && i + k < n; k++) b |= ((uint32_t)v[i + k] & 3u) << (2 * k);
        packed[i / 4] = (uint8_t)b;
    }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_unpack_int2(qmx_dtype d, const uint8_t *packed, size_t packed_bytes,
                                    size_t n, int8_t *v) {
    size_t i;
    if (d != QMX_INT2 && d != QMX_UINT2) return QMX_ERR_DTYPE;
    if (!v || !packed) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (packed_bytes < n / 4 + ((n & 3) != 0)) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < n; i++) {
        int32_t c = (int32_t)((packed[i / 4] >> (2 * (i & 3))) & 3u);
        v[i] = (int8_t)(d == QMX_INT2 ? (c ^ 2) - 2 : c);
    }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_unpack_int4(qmx_dtype d, const uint8_t *packed, size_t packed_bytes,
                                    size_t n, int8_t *v) {
    size_t i;
    if (d != QMX_INT4 && d != QMX_UINT4) return QMX_ERR_DTYPE;
    if (!v || !packed) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (packed_bytes < n / 2 + (n & 1)) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < n; i++) v[i] = (int8_t)qmx__get_nibble(packed, i, d == QMX_INT4);
    return QMX_OK;
}

/* ---- 4. fp8 ---- */
typedef struct qmx__fp8fmt {
    int mbits;          /* mantissa bits */
    int bias;
    uint32_t max_code;  /* largest finite positive code */
    int fnuz;           /* 0x80 is the only NaN, no -0, no Inf */
    int has_inf;        /* E5M2 */
} qmx__fp8fmt;

static int qmx__fp8_format(qmx_dtype fmt, qmx__fp8fmt *f) {
    switch (fmt) {
    case QMX_FP8_E4M3FN: f->mbits = 3; f->bias = 7; f->max_code = 0x7E; f->fnuz = 0; f->has_inf = 0; return 1;
    case QMX_FP8_E5M2: f->mbits = 2; f->bias = 15; f->max_code = 0x7B; f->fnuz = 0; f->has_inf = 1; return 1;
    case QMX_FP8_E4M3FNUZ: f->mbits = 3; f->bias = 8; f->max_code = 0x7F; f->fnuz = 1; f->has_inf = 0; return 1;
    case QMX_FP8_E5M2FNUZ: f->mbits = 2; f->bias = 16; f->max_code = 0x7F; f->fnuz = 1; f->has_inf = 0; return 1;
    default: return 0;
    }
}

/* Encode from the float32 bit pattern with integer arithmetic only (exact RNE). */
static uint8_t qmx__fp8_encode(uint32_t bits, const qmx__fp8fmt *f, int saturate) {
    uint32_t sign = (bits >> 24) & 0x80u;
    uint32_t a = bits & 0x7FFFFFFFu;
    uint32_t code;
    int e = (int)(a >> 23) - 127;            /* unbiased exponent (f32 normals) */
    int emin = 1 - f->bias;                  /* smallest normal fp8 exponent */
    uint8_t nan_code = f->fnuz ? 0x80u : (uint8_t)(sign | 0x7Fu);
    uint8_t ovf_code = saturate ? (uint8_t)(sign | f->max_code)
                                : (f->has_inf ? (uint8_t)(sign | 0x7Cu) : nan_code);
    if (a > 0x7F800000u) return nan_code;
    if (a == 0x7F800000u) return ovf_code;   /* Inf: clip (saturate) or the overflow code */
    if (a < 0x00800000u) {
        code = 0;                            /* f32 zero or subnormal: far below fp8's range */
    } else if (e >= emin) {                  /* lands on the fp8 normal grid */
        int drop = 23 - f->mbits;
        uint32_t half = (1u << (drop - 1)) - 1u + ((a >> drop) & 1u);
        uint32_t r = (a + half) >> drop;     /* RNE; a carry moves into the exponent */
        code = r - ((uint32_t)(127 - f->bias) << f->mbits);
        if (code > f->max_code) return ovf_code;
    } else {                                 /* fp8 subnormal: count 2^(emin - mbits) quanta */
        int sh = 23 + emin - f->mbits - e;   /* >= 24 - mbits */
        uint32_t sig = (a & 0x7FFFFFu) | 0x800000u;
        if (sh >= 25) {
            code = 0;
        } else {
            uint32_t q = sig >> sh, rem = sig & ((1u << sh) - 1u), half = 1u << (sh - 1);
            if (rem > half || (rem == half && (q & 1u))) q++;
            code = q;                        /* q == 2^mbits is exactly the smallest normal */
        }
    }
    if (code == 0 && f->fnuz) return 0;      /* FNUZ has no -0 */
    return (uint8_t)(sign | code);
}

static uint32_t qmx__fp8_decode_bits(uint8_t c, const qmx__fp8fmt *f) {
    uint32_t sign = (uint32_t)(c & 0x80u) << 24;
    uint32_t a = c & 0x7Fu;
    uint32_t e = a >> f->mbits, m = a & ((1u << f->mbits) - 1u);
    uint32_t emax_field = (1u << (7 - f->mbits)) - 1u;
    if (f->fnuz) {
        if (c == 0x80u) return 0x7FC00000u;
    } else if (f->has_inf) {
        if (e == emax_field) return sign | (m ? 0x7FC00000u : 0x7F800000u);
    } else if (a == 0x7Fu) {
        return sign | 0x7FC00000u;
    }
    if (e == 0) {
        int sh;
        if (m == 0) return sign;
        /* subnormal: m * 2^(1 - bias - mbits); normalise m to 1.xxx */
        sh = 0;
        while (!(m & (1u << f->mbits))) { m <<= 1; sh++; }
        m &= (1u << f->mbits) - 1u;
        return sign | ((uint32_t)(1 - f->bias - sh + 127) << 23) | (m << (23 - f->mbits));
    }
    return sign | ((e - (uint32_t)f->bias + 127u) << 23) | (m << (23 - f->mbits));
}

QMX__DEF uint8_t qmx_fp8_from_f32(float x, qmx_dtype fmt, int saturate) {
    qmx__fp8fmt f;
    if (!qmx__fp8_format(fmt, &f)) return 0;
    return qmx__fp8_encode(qmx__f32_bits(x), &f, saturate);
}
QMX__DEF float qmx_fp8_to_f32(uint8_t code, qmx_dtype fmt) {
    qmx__fp8fmt f;
    if (!qmx__fp8_format(fmt, &f)) return qmx__bits_f32(0x7FC00000u);
    return qmx__bits_f32(qmx__fp8_decode_bits(code, &f));
}
QMX__DEF float qmx_fp8_max(qmx_dtype fmt) {
    qmx__fp8fmt f;
    if (!qmx__fp8_format(fmt, &f)) return 0.0f;
    return qmx__bits_f32(qmx__fp8_decode_bits((uint8_t)f.max_code, &f));
}

/* ---- 4b. fp4 / fp6 / E8M0 ---- */
/* A sign-magnitude float of nbits = 1 + ebits + mbits bits with no Inf and no NaN (OCP MX
 * FP4 / FP6): exponent field 0 is subnormal, the all-ones field is an ordinary binade. */
typedef struct qmx__lowfp {
    int mbits;          /* mantissa bits */
    int bias;
    int nbits;          /* 4 or 6; the sign is bit nbits - 1 */
} qmx__lowfp;

static int qmx__lowfp_format(qmx_dtype fmt, qmx__lowfp *f) {
    switch (fmt) {
    case QMX_FP4_E2M1: f->mbits = 1; f->bias = 1; f->nbits = 4; return 1;
    case QMX_FP6_E2M3: f->mbits = 3; f->bias = 1; f->nbits = 6; return 1;
    case QMX_FP6_E3M2: f->mbits = 2; f->bias = 3; f->nbits = 6; return 1;
    default: return 0;
    }
}

/* Encode from the float32 bit pattern with integer arithmetic only: RNE, or truncation
 * (rtz != 0); always saturating; every NaN -> +max (CUDA's rule, see the doc block). */
static uint8_t qmx__lowfp_encode(uint32_t bits, const qmx__lowfp *f, int rtz) {
    uint32_t maxc = (1u << (f->nbits - 1)) - 1u;   /* the positive code with every bit set */
    uint32_t sign = (bits >> 31) << (f->nbits - 1);
    uint32_t a = bits & 0x7FFFFFFFu;
    uint32_t code;
    int e = (int)(a >> 23) - 127;                  /* unbiased exponent (f32 normals) */
    int emin = 1 - f->bias;                        /* smallest normal exponent of the format */
    if (a > 0x7F800000u) return (uint8_t)maxc;     /* NaN: +max whatever its sign */
    if (a == 0x7F800000u) return (uint8_t)(sign | maxc);
    if (a < 0x00800000u) {
        code = 0;                                  /* f32 zero or subnormal: far below the grid */
    } else if (e >= emin) {                        /* on the normal grid */
        int drop = 23 - f->mbits;
        uint32_t r = rtz ? a >> drop
                         : (a + (1u << (drop - 1)) - 1u + ((a >> drop) & 1u)) >> drop;
        code = r - ((uint32_t)(127 - f->bias) << f->mbits);   /* a carry moves into the exponent */
        if (code > maxc) code = maxc;              /* saturate (beyond max after rounding) */
    } else {                                       /* subnormal: count 2^(emin - mbits) quanta */
        int sh = 23 + emin - f->mbits - e;         /* >= 24 - mbits */
        uint32_t sig = (a & 0x7FFFFFu) | 0x800000u;
        if (sh >= 25) {
            code = 0;                              /* below half the smallest subnormal */
        } else {
            uint32_t q = sig >> sh, rem = sig & ((1u << sh) - 1u), half = 1u << (sh - 1);
            if (!rtz && (rem > half || (rem == half && (q & 1u)))) q++;
            code = q;                              /* q == 2^mbits is the smallest normal */
        }
    }
    return (uint8_t)(sign | code);
}

static uint32_t qmx__lowfp_decode_bits(uint32_t c, const qmx__lowfp *f) {
    uint32_t sign = ((c >> (f->nbits - 1)) & 1u) << 31;
    uint32_t e = (c >> f->mbits) & ((1u << (f->nbits - 1 - f->mbits)) - 1u);
    uint32_t m = c & ((1u << f->mbits) - 1u);
    if (e == 0) {
        int sh = 0;
        if (m == 0) return sign;
        /* subnormal m * 2^(1 - bias - mbits): normalise m to 1.xxx */
        while (!(m & (1u << f->mbits))) { m <<= 1; sh++; }
        m &= (1u << f->mbits) - 1u;
        return sign | ((uint32_t)(1 - f->bias - sh + 127) << 23) | (m << (23 - f->mbits));
    }
    return sign | ((e + 127u - (uint32_t)f->bias) << 23) | (m << (23 - f->mbits));
}

/* Helpers forced inline (the fp4 codec's and the MX paths' per-element and per-vector code). */
#if defined(__GNUC__) || defined(__clang__)
#  define QMX__MXV static __inline__ __attribute__((always_inline))
#elif defined(_MSC_VER)
#  define QMX__MXV static __forceinline
#else
#  define QMX__MXV static
#endif

/* fp8 E4M3FN (e5 = 0) / E5M2 (e5 = 1) codes c, one per 32-bit lane (< 256), to their float32
 * values, the bits of qmx__fp8_decode_bits: normal codes as float bits (mag << (23 - mbits)) +
 * ((127 - bias) << 23), subnormal ones (float)mag x 2^(1 - bias - mbits) (exact), NaN (E4M3FN
 * 0x7F; E5M2 above 0x7C) and Inf (E5M2 0x7C) by blends or masks, then the sign. One per vector
 * ISA, built whenever that ISA is: the MX dequantize below and qmx_kernels.h's block-weight
 * kernels share them (QMX__LANEV: forced inline, and no warning in a build that uses none). */
#if defined(__GNUC__) || defined(__clang__)
#  define QMX__LANEV __attribute__((unused)) QMX__MXV
#else
#  define QMX__LANEV QMX__MXV
#endif
#if defined(QMX__AVX512)
QMX__LANEV __m512 qmx__fp8_dec512(__m512i c, int e5) {
    __m512i mag = _mm512_and_si512(c, _mm512_set1_epi32(0x7F));
    __m512 d = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(mag, e5 ? 21 : 20),
                                                    _mm512_set1_epi32(e5 ? 112 << 23 : 120 << 23)));
    d = _mm512_mask_mul_ps(d, _mm512_cmplt_epu32_mask(mag, _mm512_set1_epi32(e5 ? 4 : 8)),
                           _mm512_cvtepi32_ps(mag), _mm512_set1_ps(e5 ? 1.52587890625e-05f : 0.001953125f));
    if (e5) {
        d = _mm512_mask_mov_ps(d, _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7C)),
                               _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
        d = _mm512_mask_mov_ps(d, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7C)),
                               _mm512_castsi512_ps(_mm512_set1_epi32(0x7F800000)));
    } else {
        d = _mm512_mask_mov_ps(d, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7F)),
                               _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
    }
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(d), _mm512_slli_epi32(c, 24),
                                                         _mm512_set1_epi32((int32_t)0x80000000u), 0xF8));
}
#endif
#if defined(QMX__AVX2)
QMX__LANEV __m256 qmx__fp8_dec256(__m256i c, int e5) {
    __m256i mag = _mm256_and_si256(c, _mm256_set1_epi32(0x7F));
    __m256 d = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(mag, e5 ? 21 : 20),
                                                    _mm256_set1_epi32(e5 ? 112 << 23 : 120 << 23)));
    d = _mm256_blendv_ps(d, _mm256_mul_ps(_mm256_cvtepi32_ps(mag),
                                          _mm256_set1_ps(e5 ? 1.52587890625e-05f : 0.001953125f)),
                         _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(e5 ? 4 : 8), mag)));
    if (e5) {
        d = _mm256_blendv_ps(d, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)),
                             _mm256_castsi256_ps(_mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7C))));
        d = _mm256_blendv_ps(d, _mm256_castsi256_ps(_mm256_set1_epi32(0x7F800000)),
                             _mm256_castsi256_ps(_mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7C))));
    } else {
        d = _mm256_blendv_ps(d, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)),
                             _mm256_castsi256_ps(_mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7F))));
    }
    return _mm256_or_ps(d, _mm256_castsi256_ps(_mm256_and_si256(_mm256_slli_epi32(c, 24),
                                                                _mm256_set1_epi32((int32_t)0x80000000u))));
}
#endif
#if defined(QMX__NEON64)
QMX__LANEV float32x4_t qmx__fp8_dec128(uint32x4_t c, int e5) {
    uint32x4_t mag = vandq_u32(c, vdupq_n_u32(0x7F));
    float32x4_t d = vreinterpretq_f32_u32(vaddq_u32(e5 ? vshlq_n_u32(mag, 21) : vshlq_n_u32(mag, 20),
                                                    vdupq_n_u32(e5 ? 112u << 23 : 120u << 23)));
    d = vbslq_f32(vcltq_u32(mag, vdupq_n_u32(e5 ? 4 : 8)),
                  vmulq_f32(vcvtq_f32_u32(mag), vdupq_n_f32(e5 ? 1.52587890625e-05f : 0.001953125f)), d);
    if (e5) {
        d = vbslq_f32(vcgtq_u32(mag, vdupq_n_u32(0x7C)), vreinterpretq_f32_u32(vdupq_n_u32(0x7FC00000u)), d);
        d = vbslq_f32(vceqq_u32(mag, vdupq_n_u32(0x7C)), vreinterpretq_f32_u32(vdupq_n_u32(0x7F800000u)), d);
    } else {
        d = vbslq_f32(vceqq_u32(mag, vdupq_n_u32(0x7F)), vreinterpretq_f32_u32(vdupq_n_u32(0x7FC00000u)), d);
    }
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(d),
                                           vandq_u32(vshlq_n_u32(c, 24), vdupq_n_u32(0x80000000u))));
}
#endif
/* E2M1 codes of a = |x| (f32 bits, not NaN), the same as qmx__lowfp_encode's (verified for all
 * 2^32 inputs when written; tests/test_simd_equiv.c compares the two on every 16-bit-aligned
 * pattern and around each threshold). Nearest-even: every decision point (the midpoints 0.25
 * 0.75 1.25 1.75 2.5 3.5 5, a tie staying on the even code) has at most two mantissa bits, so the
 * code is constant on each 2^21-wide step of the bits (exponent and top two mantissa bits,
 * a >> 21) but at the step's first value: a table of both codes (inside | first << 4) for the
 * steps from 0.234375 (below: 0) to 8 (above: 7, +Inf included); branch-free. Toward zero: the
 * number of the values 0.5 1 1.5 2 3 4 6 that a reaches. */
static const uint8_t qmx__fp4_rne_steps[22] = {
    0x00, 0x01, 0x11, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x23, 0x33, 0x44, 0x44, 0x45,
    0x55, 0x66, 0x66, 0x67, 0x77, 0x77, 0x77};
QMX__MXV uint32_t qmx__fp4_rne_mag(uint32_t a) {
    uint32_t i = a >> 21, e;
    i = i < 499u ? 499u : i > 520u ? 520u : i;
    e = qmx__fp4_rne_steps[i - 499u];
    return (a & 0x1FFFFFu) ? e & 15u : e >> 4;
}
static uint32_t qmx__fp4_rtz_mag(uint32_t a) {
    return (uint32_t)((a >= 0x3F000000u) + (a >= 0x3F800000u) + (a >= 0x3FC00000u) +
                      (a >= 0x40000000u) + (a >= 0x40400000u) + (a >= 0x40800000u) +
                      (a >= 0x40C00000u));
}
/* The 16 E2M1 values as float32 bits, by code (decoding is a lookup) */
static const uint32_t qmx__fp4_bits[16] = {
    0x00000000u, 0x3F000000u, 0x3F800000u, 0x3FC00000u, 0x40000000u, 0x40400000u, 0x40800000u,
    0x40C00000u, 0x80000000u, 0xBF000000u, 0xBF800000u, 0xBFC00000u, 0xC0000000u, 0xC0400000u,
    0xC0800000u, 0xC0C00000u};
QMX__DEF uint8_t qmx_fp4_from_f32(float x, int round_toward_zero) {
    uint32_t b = qmx__f32_bits(x), a = b & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return 0x7u;                       /* NaN: +max (CUDA) */
    return (uint8_t)(((b >> 28) & 8u) | (round_toward_zero ? qmx__fp4_rtz_mag(a)
                                                           : qmx__fp4_rne_mag(a)));
}
QMX__DEF float qmx_fp4_to_f32(uint8_t code) {
    return qmx__bits_f32(qmx__fp4_bits[code & 0xFu]);
}
QMX__DEF uint8_t qmx_fp6_from_f32(float x, qmx_dtype fmt, int round_toward_zero) {
    qmx__lowfp f;
    if (fmt == QMX_FP4_E2M1 || !qmx__lowfp_format(fmt, &f)) return 0;
    return qmx__lowfp_encode(qmx__f32_bits(x), &f, round_toward_zero != 0);
}
QMX__DEF float qmx_fp6_to_f32(uint8_t code, qmx_dtype fmt) {
    qmx__lowfp f;
    if (fmt == QMX_FP4_E2M1 || !qmx__lowfp_format(fmt, &f)) return qmx__bits_f32(0x7FC00000u);
    return qmx__bits_f32(qmx__lowfp_decode_bits(code & 0x3Fu, &f));
}

/* E8M0 from the float32 bit pattern: the exponent field is already the E8M0 code (same bias),
 * the sign is ignored (CUDA: "the absolute value is rounded"). */
static uint8_t qmx__e8m0_encode(uint32_t bits, qmx_e8m0_round mode, int saturate) {
    uint32_t a = bits & 0x7FFFFFFFu, e = a >> 23, frac = a & 0x7FFFFFu, c;
    if (a > 0x7F800000u) return 0xFFu;                      /* NaN */
    if (a == 0x7F800000u) return saturate ? 0xFEu : 0xFFu; /* Inf */
    switch (mode) {
    case QMX_E8M0_ROUND_DOWN: c = e; break;                 /* zero, subnormal -> 0 (2^-127) */
    case QMX_E8M0_ROUND_UP: c = e == 0 ? (uint32_t)(a > 0x400000u) : e + (frac != 0); break;
    case QMX_E8M0_ROUND_NEAREST:
        c = e == 0 ? (uint32_t)(a > 0x400000u) : e + (frac >= 0x400000u); break;
    default: return 0xFFu;
    }
    if (c == 0xFFu && saturate) c = 0xFEu;                  /* rounded beyond 2^127 */
    return (uint8_t)c;
}
QMX__DEF uint8_t qmx_e8m0_from_f32(float x, qmx_e8m0_round mode, int saturate) {
    return qmx__e8m0_encode(qmx__f32_bits(x), mode, saturate != 0);
}
QMX__DEF float qmx_e8m0_to_f32(uint8_t code) {
    if (code == 0xFFu) return qmx__bits_f32(0x7FC00000u);
    if (code == 0) return qmx__bits_f32(0x00400000u);      /* 2^-127, a float32 subnormal */
    return qmx__bits_f32((uint32_t)code << 23);
}

/* One scaled element: encode x / scale, or x itself when the quotient is NaN (x is NaN). */
static uint32_t qmx__lowfp_quant_one(float x, float scale, const qmx__lowfp *f, int rtz) {
    float t = x / scale;
    if (t != t) t = x;
    return qmx__lowfp_encode(qmx__f32_bits(t), f, rtz);
}
static qmx_status qmx__lowfp_check(const void *in, size_t n, float scale, const void *out) {
    if (!in || !out) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (!qmx__isfinite(scale) || !(scale > 0.0f)) return QMX_ERR_ARG;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_fp4_quantize_array(const float *x, size_t n, float scale,
                                           int round_toward_zero, uint8_t *packed) {
    qmx__lowfp f;
    size_t i;
    int rtz = round_toward_zero != 0;
    qmx_status st = qmx__lowfp_check(x, n, scale, packed);
    if (st != QMX_OK) return st;
    qmx__lowfp_format(QMX_FP4_E2M1, &f);
    for (i = 0; i + 1 < n; i += 2)
        packed[i / 2] = (uint8_t)(qmx__lowfp_quant_one(x[i], scale, &f, rtz) |
                                  qmx__lowfp_quant_one(x[i + 1], scale, &f, rtz) << 4);
    if (n & 1) packed[n / 2] = (uint8_t)qmx__lowfp_quant_one(x[n - 1], scale, &f, rtz);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_fp4_dequantize_array(const uint8_t *packed, size_t n, float scale,
                                             float *y) {
    qmx__lowfp f;
    size_t i;
    qmx_status st = qmx__lowfp_check(packed, n, scale, y);
    if (st != QMX_OK) return st;
    qmx__lowfp_format(QMX_FP4_E2M1, &f);
    for (i = 0; i < n; i++)
        y[i] = qmx__bits_f32(qmx__lowfp_decode_bits((packed[i / 2] >> ((i & 1) * 4)) & 0xFu, &f))
               * scale;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_fp6_quantize_array(qmx_dtype fmt, const float *x, size_t n, float scale,
                                           int round_toward_zero, uint8_t *out) {
    qmx__lowfp f;
    size_t i;
    int rtz = round_toward_zero != 0;
    qmx_status st;
    if (fmt == QMX_FP4_E2M1 || !qmx__lowfp_format(fmt, &f)) return QMX_ERR_DTYPE;
    st = qmx__lowfp_check(x, n, scale, out);
    if (st != QMX_OK) return st;
    for (i = 0; i < n; i++) out[i] = (uint8_t)qmx__lowfp_quant_one(x[i], scale, &f, rtz);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_fp6_dequantize_array(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                             float scale, float *y) {
    qmx__lowfp f;
    size_t i;
    qmx_status st;
    if (fmt == QMX_FP4_E2M1 || !qmx__lowfp_format(fmt, &f)) return QMX_ERR_DTYPE;
    st = qmx__lowfp_check(codes, n, scale, y);
    if (st != QMX_OK) return st;
    for (i = 0; i < n; i++)
        y[i] = qmx__bits_f32(qmx__lowfp_decode_bits(codes[i] & 0x3Fu, &f)) * scale;
    return QMX_OK;
}

/* Packed fp6 (ROCm/rocRoller order): a group of four codes is the 24-bit little-endian word
 * c0 | c1 << 6 | c2 << 12 | c3 << 18; a partial last group keeps only its count % 4 bytes. */
QMX__DEF size_t qmx_fp6_packed_bytes(size_t count) { return count / 4 * 3 + count % 4; }
QMX__DEF qmx_status qmx_pack_fp6(const uint8_t *codes, size_t count, uint8_t *packed,
                                 size_t packed_bytes) {
    size_t i, g;
    if (!codes || !packed) return QMX_ERR_NULL;
    if (count == 0) return QMX_ERR_SIZE;
    if (packed_bytes < qmx_fp6_packed_bytes(count)) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < count; i++)
        if (codes[i] > 63u) return QMX_ERR_ARG;
    for (g = 0; g < count; g += 4) {
        size_t k, r = count - g < 4 ? count - g : 4, nb = r == 4 ? 3 : r;
        uint32_t w = 0;
        for (k = 0; k < r; k++) w |= (uint32_t)codes[g + k] << (6 * k);
        for (k = 0; k < nb; k++) packed[g / 4 * 3 + k] = (uint8_t)(w >> (8 * k));
    }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_unpack_fp6(const uint8_t *packed, size_t packed_bytes, size_t count,
                                   uint8_t *codes) {
    size_t g;
    if (!codes || !packed) return QMX_ERR_NULL;
    if (count == 0) return QMX_ERR_SIZE;
    if (packed_bytes < qmx_fp6_packed_bytes(count)) return QMX_ERR_BUFFER_TOO_SMALL;
    for (g = 0; g < count; g += 4) {
        size_t k, r = count - g < 4 ? count - g : 4, nb = r == 4 ? 3 : r;
        uint32_t w = 0;
        for (k = 0; k < nb; k++) w |= (uint32_t)packed[g / 4 * 3 + k] << (8 * k);
        for (k = 0; k < r; k++) codes[g + k] = (uint8_t)((w >> (6 * k)) & 0x3Fu);
    }
    return QMX_OK;
}

/* ---- 5. rng ---- */
QMX__DEF void qmx_rng_seed(qmx_rng *rng, uint64_t seed) {
    int i;
    if (!rng) return;
    for (i = 0; i < 2; i++) {                /* splitmix64, two outputs -> four words */
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        rng->s[2 * i] = (uint32_t)z;
        rng->s[2 * i + 1] = (uint32_t)(z >> 32);
    }
    if (!(rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3])) rng->s[0] = 1u; /* never all zero */
}
static uint32_t qmx__rotl32(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
QMX__DEF uint32_t qmx_rng_next_u32(qmx_rng *rng) {
    uint32_t *s = rng->s;
    uint32_t result = qmx__rotl32(s[1] * 5u, 7) * 9u;
    uint32_t t = s[1] << 9;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = qmx__rotl32(s[3], 11);
    return result;
}
QMX__DEF float qmx_rng_next_noise(qmx_rng *rng) {
    /* (r >> 8) * 2^-24 is exact; subtracting 0.5 is exact too (both in [0, 1) on a 2^-24 grid) */
    float u = (float)(int32_t)(qmx_rng_next_u32(rng) >> 8) * (1.0f / 16777216.0f);
    return u - 0.5f;
}

/* ---- 6. quantize ---- */
/* Rounding of a float already clamped to |t| <= 2^24. Written with a truncating conversion
 * and an exact fraction so that it needs no libm, no FPU rounding mode and no magic constant
 * (which -ffast-math or x87 excess precision could break). */
static int32_t qmx__round_rne(float t) {
    int32_t i = (int32_t)t;                  /* toward zero; exact fraction below */
    float fr = t - (float)i;
    if (fr > 0.5f || (fr == 0.5f && (i & 1))) i++;
    else if (fr < -0.5f || (fr == -0.5f && (i & 1))) i--;
    return i;
}
static int32_t qmx__round_half_away(float t) {
    int32_t i = (int32_t)t;
    float fr = t - (float)i;
    if (fr >= 0.5f) i++;
    else if (fr <= -0.5f) i--;
    return i;
}

/* Everything one run of elements sharing a scale needs; filled by qmx__run_params. */
typedef struct qmx__run {
    float scale;          /* divide by this (use_div) ... */
    float inv;            /* ... or multiply by this */
    int use_div;
    float zp_f;           /* zero point added in float before rounding (Qwix) */
    int32_t zp_i;         /* zero point added after rounding (TFLite, AQT none) */
    float lo_f, hi_f;     /* clamp bounds of the rounded value, before zp_i */
    int32_t lo, hi;       /* final integer range */
    qmx_round round;      /* resolved: never QMX_ROUND_DEFAULT */
    qmx_rng *rng;
} qmx__run;

static int32_t qmx__quant_one(float x, const qmx__run *p) {
    float t;
    int32_t r;
    if (p->use_div) t = x / p->scale;
    else t = x * p->inv;
    if (p->zp_f != 0.0f) t = t + p->zp_f;
    if (p->round == QMX_ROUND_STOCHASTIC) {
        float u = qmx_rng_next_noise(p->rng);
        t = t + u;
    }
    if (qmx__isnan(t)) return p->zp_i + (int32_t)p->zp_f;
    if (t < p->lo_f) t = p->lo_f;
    if (t > p->hi_f) t = p->hi_f;
    r = p->round == QMX_ROUND_HALF_AWAY ? qmx__round_half_away(t) : qmx__round_rne(t);
    return r + p->zp_i;
}

/* Scalar reference kernels for one run; SIMD versions below must match them bit for bit. */
static void qmx__quant_run_s8_scalar(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    size_t i;
    for (i = 0; i < n; i++) q[i] = (int8_t)qmx__quant_one(x[i], p);
}
static void qmx__dequant_run_s8_scalar(const int8_t *q, size_t n, int32_t zp, float s, float *y) {
    size_t i;
    for (i = 0; i < n; i++) y[i] = (float)((int32_t)q[i] - zp) * s;
}
static void qmx__fp8_quant_run_scalar(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out) {
    size_t i;
    for (i = 0; i < n; i++) {
        float t = use_div ? x[i] / scale : x[i] * scale;
        /* t is NaN only for a NaN x (scale is finite, > 0): encode x itself, whose sign every
         * target keeps (RISC-V arithmetic returns the canonical +NaN) */
        if (t != t) t = x[i];
        out[i] = qmx__fp8_encode(qmx__f32_bits(t), f, saturate);
    }
}
static void qmx__fp8_dequant_run_scalar(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y) {
    size_t i;
    for (i = 0; i < n; i++) y[i] = qmx__bits_f32(qmx__fp8_decode_bits(c[i], f)) * scale;
}

/* SIMD paths (defined in the SIMD section at the end); each returns how many leading elements
 * it handled, the scalar kernel finishes the rest. */
static size_t qmx__quant_run_s8_simd(const float *x, size_t n, const qmx__run *p, int8_t *q);
static size_t qmx__dequant_run_s8_simd(const int8_t *q, size_t n, int32_t zp, float s, float *y);
static size_t qmx__fp8_quant_run_simd(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out);
static size_t qmx__fp8_dequant_run_simd(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y);
/* Nibble pairs: out[k] = (s[2k] & 0xF) | (s[2k+1] << 4), and back (sign-extended for int4). */
static size_t qmx__pack_nibbles_simd(const int8_t *s, size_t pairs, uint8_t *out);
static size_t qmx__unpack_nibbles_simd(const uint8_t *in, size_t pairs, int is_signed, int8_t *s);

static void qmx__quant_run_s8(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    size_t done = p->round == QMX_ROUND_STOCHASTIC ? 0 : qmx__quant_run_s8_simd(x, n, p, q);
    qmx__quant_run_s8_scalar(x + done, n - done, p, q + done);
}

/* Store m 4-bit values s[0..m) as elements at, at+1, ... of a packed int4/uint4 array: whole
 * bytes in pairs (vectorised), a leading or trailing half byte through qmx__set_nibble. */
static void qmx__put_nibbles(uint8_t *q, size_t at, const int8_t *s, size_t m) {
    size_t j = 0, pairs, k, d;
    uint8_t *o;
    if (m && (at & 1)) { qmx__set_nibble(q, at, s[0]); j = 1; }
    pairs = (m - j) / 2;
    o = q + (at + j) / 2;
    d = qmx__pack_nibbles_simd(s + j, pairs, o);
    for (k = d; k < pairs; k++)
        o[k] = (uint8_t)(((uint32_t)s[j + 2 * k] & 0xFu) | (((uint32_t)s[j + 2 * k + 1] & 0xFu) << 4));
    j += 2 * pairs;
    if (j < m) qmx__set_nibble(q, at + j, s[j]);
}
/* Read elements at .. at+m-1 of a packed int4/uint4 array into s[0..m) as int8. */
static void qmx__take_nibbles(const uint8_t *q, size_t at, int is_signed, int8_t *s, size_t m) {
    size_t j = 0, pairs, k, d;
    const uint8_t *i;
    if (m && (at & 1)) { s[0] = (int8_t)qmx__get_nibble(q, at, is_signed); j = 1; }
    pairs = (m - j) / 2;
    i = q + (at + j) / 2;
    d = qmx__unpack_nibbles_simd(i, pairs, is_signed, s + j);
    for (k = d; k < pairs; k++) {
        s[j + 2 * k] = (int8_t)qmx__get_nibble(i, 2 * k, is_signed);
        s[j + 2 * k + 1] = (int8_t)qmx__get_nibble(i, 2 * k + 1, is_signed);
    }
    j += 2 * pairs;
    if (j < m) s[j] = (int8_t)qmx__get_nibble(q, at + j, is_signed);
}
/* int2 / uint2: element i in bits 2(i mod 4) .. 2(i mod 4) + 1 of byte i / 4 (ONNX's order). */
static void qmx__put_crumbs(uint8_t *q, size_t at, const int8_t *s, size_t m) {
    size_t j;
    for (j = 0; j < m; j++) {
        size_t e = at + j;
        unsigned sh = 2u * (unsigned)(e & 3u);
        q[e / 4] = (uint8_t)((q[e / 4] & ~(3u << sh)) | (((uint32_t)s[j] & 3u) << sh));
    }
}
static void qmx__take_crumbs(const uint8_t *q, size_t at, int is_signed, int8_t *s, size_t m) {
    size_t j;
    for (j = 0; j < m; j++) {
        size_t e = at + j;
        int32_t c = (int32_t)((q[e / 4] >> (2u * (unsigned)(e & 3u))) & 3u);
        s[j] = (int8_t)(is_signed ? (c ^ 2) - 2 : c);
    }
}
/* int3 .. int7 are stored one per byte as int8_t: the int8 kernels serve them (their clamp is
 * the dtype's range) */
static int qmx__byte_int(qmx_dtype d) {
    return d == QMX_INT8 || d == QMX_INT3 || d == QMX_INT5 || d == QMX_INT6 || d == QMX_INT7;
}

/* The config with defaults applied and the view resolved. */
typedef struct qmx__view {
    qmx_dtype dtype;
    size_t outer, len, inner;   /* [outer][len][inner] */
    size_t block, nblocks;      /* per block: block length and blocks per axis */
    size_t n_params;
    int32_t qmin, qmax;         /* full integer range of the dtype */
    int use_zp;                 /* quantize / dequantize read zero points (when given) */
    int nf4;                    /* QMX_NF4: codes index qmx__nf4_table */
    int fp8;
    qmx__fp8fmt f;
} qmx__view;

static int qmx__mul_ok(size_t a, size_t b, size_t *r) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *r = a * b;
    return 1;
}

static qmx_status qmx__resolve(const qmx_qconfig *c, size_t count, qmx__view *v) {
    size_t prod;
    if (!c) return QMX_ERR_NULL;
    if (count == 0) return QMX_ERR_SIZE;
    v->dtype = c->dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c->dtype;
    v->fp8 = qmx_dtype_is_fp8(v->dtype);
    v->nf4 = v->dtype == QMX_NF4;
    if (v->fp8 || v->nf4) {
        if (v->fp8) qmx__fp8_format(v->dtype, &v->f);
        v->qmin = 0; v->qmax = v->nf4 ? 15 : 0;
        if (c->asymmetric) return QMX_ERR_ARG;
        /* a lookup table: no ONNX / torch type, no rounding but the nearest value */
        if (v->nf4 && (c->recipe == QMX_RECIPE_TORCH || c->recipe == QMX_RECIPE_ONNX))
            return QMX_ERR_DTYPE;
    } else if (qmx_dtype_int_range(v->dtype, &v->qmin, &v->qmax) != QMX_OK) {
        return QMX_ERR_DTYPE;
    }
    if ((unsigned)c->recipe > (unsigned)QMX_RECIPE_ONNX) return QMX_ERR_ARG;
    /* torch quantizes to quint8 / qint8 only; reduce_range is torch's */
    if (c->recipe == QMX_RECIPE_TORCH && v->dtype != QMX_INT8 && v->dtype != QMX_UINT8)
        return QMX_ERR_DTYPE;
    if (c->reduce_range != 0 && (c->reduce_range != 1 || c->recipe != QMX_RECIPE_TORCH))
        return QMX_ERR_ARG;
    /* torch's observers raise NotImplementedError for quint8 symmetric with reduce_range */
    if (c->reduce_range && !c->asymmetric && v->dtype == QMX_UINT8) return QMX_ERR_UNSUPPORTED;
    if (c->fp8_no_saturate != 0 && c->fp8_no_saturate != 1) return QMX_ERR_ARG;
    /* torch and ONNX tensors always carry a zero point: it applies whenever one is given */
    v->use_zp = !v->fp8 && (c->asymmetric || c->recipe == QMX_RECIPE_TORCH ||
                            c->recipe == QMX_RECIPE_ONNX);
    if ((unsigned)c->rounding > (unsigned)QMX_ROUND_STOCHASTIC) return QMX_ERR_ARG;
    if (c->rounding == QMX_ROUND_STOCHASTIC && !c->rng) return QMX_ERR_NULL;
    if ((v->fp8 || v->nf4) && c->rounding != QMX_ROUND_DEFAULT &&
        c->rounding != QMX_ROUND_NEAREST_EVEN)
        return QMX_ERR_UNSUPPORTED;
    if (c->asymmetric && c->recipe == QMX_RECIPE_AQT) return QMX_ERR_ARG; /* AQT is symmetric */
    if (c->outer == 0 && c->axis_len == 0 && c->inner == 0) {
        v->outer = 1; v->len = count; v->inner = 1;
    } else {
        v->outer = c->outer; v->len = c->axis_len; v->inner = c->inner;
        if (!v->outer || !v->len || !v->inner) return QMX_ERR_SIZE;
        if (!qmx__mul_ok(v->outer, v->len, &prod) || !qmx__mul_ok(prod, v->inner, &prod))
            return QMX_ERR_OVERFLOW;
        if (prod != count) return QMX_ERR_SHAPE;
    }
    v->block = v->len; v->nblocks = 1;
    switch (c->granularity) {
    case QMX_PER_TENSOR: v->n_params = 1; break;
    case QMX_PER_CHANNEL: v->n_params = v->len; break;
    case QMX_PER_BLOCK:
        if (c->block_size == 0) return QMX_ERR_SIZE;
        v->block = c->block_size < v->len ? c->block_size : v->len;
        v->nblocks = v->len / v->block + (v->len % v->block != 0);
        if (!qmx__mul_ok(v->outer, v->nblocks, &prod) || !qmx__mul_ok(prod, v->inner, &prod))
            return QMX_ERR_OVERFLOW;
        v->n_params = prod;
        break;
    default: return QMX_ERR_ARG;
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_qparams_count(const qmx_qconfig *c, size_t count, size_t *n) {
    qmx__view v;
    qmx_status st;
    if (!n) return QMX_ERR_NULL;
    st = qmx__resolve(c, count, &v);
    if (st == QMX_OK) *n = v.n_params;
    return st;
}

/* Walks the groups of a view. Each group is a set of runs of contiguous elements:
 *   per tensor: one run of count; per channel: outer runs of inner (stride len*inner);
 *   per block:  for each (o, b): the block's rows, each a strided set of inner-length rows.
 * To keep one simple loop for all three, the iterator below yields (param index, offset,
 * length) for every maximal contiguous run in flat order, so quantize can stream the input
 * once in memory order. */
typedef struct qmx__runit {
    const qmx__view *v;
    qmx_granularity g;
    size_t o, k, i;       /* position: outer, axis index, inner offset */
} qmx__runit;

/* Next run in flat order: returns 0 at the end. When inner == 1 and the granularity is per
 * channel, every element is its own run (scales change each element). */
static int qmx__next_run(qmx__runit *it, size_t *param, size_t *off, size_t *len) {
    const qmx__view *v = it->v;
    if (it->o >= v->outer) return 0;
    *off = (it->o * v->len + it->k) * v->inner;
    switch (it->g) {
    case QMX_PER_TENSOR:
        *param = 0; *len = v->outer * v->len * v->inner;
        it->o = v->outer;
        return 1;
    case QMX_PER_CHANNEL:
        *param = it->k; *len = v->inner;
        it->k++;
        break;
    default: { /* per block: rows k..k_end-1 of one block share a scale only per inner index;
                  when inner == 1 the whole block is one contiguous run. */
        size_t b = it->k / v->block;
        if (v->inner == 1) {
            size_t end = (b + 1) * v->block;
            if (end > v->len) end = v->len;
            *param = it->o * v->nblocks + b;
            *len = end - it->k;
            it->k = end;
        } else {
            /* one row of inner elements, each with its own scale: param is the first of them */
            *param = (it->o * v->nblocks + b) * v->inner;
            *len = v->inner;
            it->k++;
        }
        break;
    }
    }
    if (it->k >= v->len) { it->k = 0; it->o++; }
    return 1;
}

static float qmx__sqrt_flt_min(void) { return 1.0842021724855044e-19f; } /* sqrt(2^-126) */

/* The integer range a config quantizes into (before any zero point). */
static void qmx__range(const qmx_qconfig *c, const qmx__view *v, int32_t *lo, int32_t *hi) {
    /* TFLite: symmetric weights clamp narrow; int16 is the 16x8 activation dtype, which
     * TFLite's QUANTIZE op clamps to the full [-32768, 32767]. */
    int narrow = c->narrow_range ||
                 (!c->asymmetric && (c->recipe == QMX_RECIPE_AQT ||
                                     (c->recipe == QMX_RECIPE_TFLITE && v->dtype != QMX_INT16)));
    *lo = v->qmin; *hi = v->qmax;
    if (narrow && v->qmin < 0) *lo = -v->qmax;
}

/* Symmetric bound B: scale = absmax / B. */
static float qmx__sym_bound(const qmx_qconfig *c, const qmx__view *v) {
    float qmax = (float)v->qmax;
    if (v->fp8) return qmx_fp8_max(v->dtype);
    if (v->nf4) return 1.0f;                     /* the table spans [-1, 1]: s = absmax (Qwix) */
    switch (c->recipe) {
    case QMX_RECIPE_AQT: return c->preserve_max_val ? qmax : qmax + 0.5f;
    case QMX_RECIPE_QWIX: return v->dtype == QMX_INT16 ? 32768.0f : qmax + 0.5f;
    default: return qmax;
    }
}

/* torch.ao.quantization observers' _calculate_qparams (torch 1.13, observer.py), float32 tensor
 * arithmetic step by step: range [qmin, qmax] of the dtype, halved by reduce_range
 * (_calculate_qmin_qmax); affine: s = (max(mx,0) - min(mn,0)) / (qmax - qmin), symmetric:
 * s = max(-min(mn,0), max(mx,0)) / ((qmax - qmin) / 2); s = max(s, eps = 2^-23); zp affine =
 * qmin - round_half_even(min(mn,0) / s), clamped; symmetric 0 (qint8) or 128 (quint8). */
static void qmx__torch_qparams(const qmx_qconfig *c, const qmx__view *v, float mn, float mx,
                               float *scale, int32_t *zp) {
    int32_t qmin = v->qmin, qmax = v->qmax;
    float mneg = mn < 0.0f ? mn : 0.0f, mpos = mx > 0.0f ? mx : 0.0f, s, t;
    const float eps = 1.1920928955078125e-07f;   /* 2^-23, torch.finfo(float32).eps */
    if (c->reduce_range) { if (qmin < 0) { qmin = -64; qmax = 63; } else qmax = 127; }
    if (c->asymmetric) {
        s = mpos - mneg;
        s = s / (float)(qmax - qmin);
    } else {
        float am = -mneg > mpos ? -mneg : mpos;
        s = am / ((float)(qmax - qmin) / 2.0f);   /* the divisor 127.5 / 63.5 is exact */
    }
    if (s < eps) s = eps;                         /* torch.max(scale, eps); Inf stays */
    *scale = s;
    if (!c->asymmetric) { *zp = v->qmin < 0 ? 0 : 128; return; }
    t = mneg / s;                                 /* in [-(qmax - qmin), 0]: fits int32 */
    *zp = qmin - qmx__round_rne(t);
    if (*zp < qmin) *zp = qmin;
    if (*zp > qmax) *zp = qmax;
}

/* ONNX. Asymmetric: DynamicQuantizeLinear's formulas (opset 11+, onnx/reference
 * op_dynamic_quantize_linear.py) for any integer dtype: mx = max(0, max x), mn = min(0, min x),
 * s = (mx == mn ? 1 : mx - mn) / (qmax - qmin); zp = round_half_even(clamp(qmin - mn / s)),
 * each step float32. Symmetric (no ONNX operator defines it; onnxruntime's quantizer shape):
 * the same with mn = -absmax, mx = absmax, so s = 2 absmax / (qmax - qmin) and the zero point
 * is the middle of the range, (qmin + qmax + 1) >> 1 (0 signed, 128 uint8, 32768 uint16).
 * fp8: s = absmax / fp8_max as the other recipes (ONNX leaves the scale to the caller). */
static void qmx__onnx_qparams(const qmx_qconfig *c, const qmx__view *v, float mn, float mx,
                              float absmax, float *scale, int32_t *zp) {
    float lo = mn < 0.0f ? mn : 0.0f, hi = mx > 0.0f ? mx : 0.0f, s, z;
    if (v->fp8) {
        *scale = absmax == 0.0f ? 1.0f : absmax / qmx_fp8_max(v->dtype);
        *zp = 0;
        return;
    }
    if (!c->asymmetric) { lo = -absmax; hi = absmax; }
    s = hi == lo ? 1.0f : hi - lo;
    s = s / (float)(v->qmax - v->qmin);
    *scale = s;
    if (!c->asymmetric) { *zp = (v->qmin + v->qmax + 1) >> 1; return; }
    z = lo / s;
    z = (float)v->qmin - z;
    if (!(z == z)) z = (float)v->qmin;   /* 0 / 0: a span below ~1e-40 made s underflow to 0 */
    if (z < (float)v->qmin) z = (float)v->qmin;
    if (z > (float)v->qmax) z = (float)v->qmax;
    *zp = qmx__round_rne(z);
}

/* Whether qparams can give a nonzero zero point (the caller must then take them): asymmetric,
 * or torch / ONNX symmetric of an unsigned dtype (the middle of the range). */
static int qmx__qparams_zp(const qmx_qconfig *c, const qmx__view *v) {
    return c->asymmetric || (v->use_zp && v->qmin == 0);
}

/* Scale and zero point of one group from its statistics (min, max, absmax). */
static void qmx__group_qparams(const qmx_qconfig *c, const qmx__view *v, float mn, float mx,
                               float absmax, float *scale, int32_t *zp) {
    float s;
    *zp = 0;
    if (c->recipe == QMX_RECIPE_TORCH) { qmx__torch_qparams(c, v, mn, mx, scale, zp); return; }
    if (c->recipe == QMX_RECIPE_ONNX) { qmx__onnx_qparams(c, v, mn, mx, absmax, scale, zp); return; }
    if (!c->asymmetric) {
        if (c->recipe == QMX_RECIPE_AQT) {
            if (absmax == 0.0f) absmax = 1.0f;
            s = absmax / qmx__sym_bound(c, v);
        } else if (c->recipe == QMX_RECIPE_QWIX) {
            s = absmax / qmx__sym_bound(c, v);
            if (s < qmx__sqrt_flt_min()) s = 1.0f;
        } else {
            s = absmax == 0.0f ? 1.0f : absmax / qmx__sym_bound(c, v);
        }
    } else {
        float lo = mn < 0.0f ? mn : 0.0f, hi = mx > 0.0f ? mx : 0.0f, z;
        float span = hi - lo;
        s = span / (float)(v->qmax - v->qmin);
        if (c->recipe == QMX_RECIPE_QWIX ? s < qmx__sqrt_flt_min() : s == 0.0f) s = 1.0f;
        z = lo / s;
        z = (float)v->qmin - z;
        if (z < (float)v->qmin) z = (float)v->qmin;
        if (z > (float)v->qmax) z = (float)v->qmax;
        *zp = qmx__round_rne(z);
    }
    *scale = s;
}

/* ---- group statistics (qmx__st_): the min / max (and the NaN / Inf flag) of contiguous runs ---- */
/* min and max are exact and order-free, so the vector paths give the scalar scan's values; only
 * the sign of a zero min / max may differ, and every qparams rule compares them with 0 (and
 * absmax = max(-min, max) is max |x| exactly), so the scales and zero points are the same bits. */

/* min and max of x[0 .. n), n >= 1, and the largest |x| bit pattern (>= 0x7F800000: a NaN or
 * an Inf is among them, and min / max are then meaningless), in one pass. A zero min / max is
 * stored as +0 (lanes may meet +0 and -0 in another order than a scan); every other value is
 * exact, so every path gives the same bits. qmx_calib.h's observers use it too. */
#if defined(QMX__AVX512) && defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#  define QMX__ST_MINMAX_POP 1
#endif
static uint32_t qmx__st_minmax(const float *x, size_t n, float *pmn, float *pmx) {
    float mn = x[0], mx = x[0];
    uint32_t mb = 0;
    size_t i = 0;
#if defined(QMX__AVX512)
    if (n >= 16) {   /* two chains of min, max and the bit max; a masked tail */
        const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF);
        __m512 a0 = _mm512_loadu_ps(x), b0 = a0, a1 = a0, b1 = a0;
        __m512i m0 = _mm512_and_si512(_mm512_castps_si512(a0), absm), m1 = m0;
        for (i = 16; i + 32 <= n; i += 32) {
            __m512 u = _mm512_loadu_ps(x + i), w = _mm512_loadu_ps(x + i + 16);
            a0 = _mm512_min_ps(a0, u); b0 = _mm512_max_ps(b0, u);
            a1 = _mm512_min_ps(a1, w); b1 = _mm512_max_ps(b1, w);
            m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_castps_si512(u), absm));
            m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_castps_si512(w), absm));
        }
        for (; i < n; i += 16) {   /* 1 .. 31 left: masked-off lanes keep their values */
            __mmask16 m = (__mmask16)(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1u);
            __m512 u = _mm512_maskz_loadu_ps(m, x + i);
            a0 = _mm512_mask_min_ps(a0, m, a0, u); b0 = _mm512_mask_max_ps(b0, m, b0, u);
            m0 = _mm512_mask_max_epu32(m0, m, m0, _mm512_and_si512(_mm512_castps_si512(u), absm));
        }
        i = n;
        mn = _mm512_reduce_min_ps(_mm512_min_ps(a0, a1));
        mx = _mm512_reduce_max_ps(_mm512_max_ps(b0, b1));
        mb = (uint32_t)_mm512_reduce_max_epu32(_mm512_max_epu32(m0, m1));
    }
#elif defined(QMX__AVX2)
    if (n >= 16) {
        const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
        __m256 a0 = _mm256_loadu_ps(x), b0 = a0, a1 = a0, b1 = a0;
        __m256i m0 = _mm256_setzero_si256(), m1 = m0;
        __m128 l, h;
        __m128i q;
        for (; i + 16 <= n; i += 16) {
            __m256 u = _mm256_loadu_ps(x + i), w = _mm256_loadu_ps(x + i + 8);
            a0 = _mm256_min_ps(a0, u); b0 = _mm256_max_ps(b0, u);
            a1 = _mm256_min_ps(a1, w); b1 = _mm256_max_ps(b1, w);
            m0 = _mm256_max_epu32(m0, _mm256_and_si256(_mm256_castps_si256(u), absm));
            m1 = _mm256_max_epu32(m1, _mm256_and_si256(_mm256_castps_si256(w), absm));
        }
        a0 = _mm256_min_ps(a0, a1); b0 = _mm256_max_ps(b0, b1); m0 = _mm256_max_epu32(m0, m1);
        l = _mm_min_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
        h = _mm_max_ps(_mm256_castps256_ps128(b0), _mm256_extractf128_ps(b0, 1));
        q = _mm_max_epu32(_mm256_castsi256_si128(m0), _mm256_extracti128_si256(m0, 1));
        l = _mm_min_ps(l, _mm_movehl_ps(l, l)); h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        q = _mm_max_epu32(q, _mm_shuffle_epi32(q, 0x4E));
        l = _mm_min_ss(l, _mm_shuffle_ps(l, l, 1)); h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        q = _mm_max_epu32(q, _mm_shuffle_epi32(q, 0xB1));
        mn = _mm_cvtss_f32(l); mx = _mm_cvtss_f32(h); mb = (uint32_t)_mm_cvtsi128_si32(q);
    }
#elif defined(QMX__NEON64)
    if (n >= 8) {
        const uint32x4_t absm = vdupq_n_u32(0x7FFFFFFFu);
        float32x4_t a0 = vld1q_f32(x), b0 = a0, a1 = a0, b1 = a0;
        uint32x4_t m0 = vdupq_n_u32(0), m1 = m0;
        for (; i + 8 <= n; i += 8) {
            float32x4_t u = vld1q_f32(x + i), w = vld1q_f32(x + i + 4);
            a0 = vminq_f32(a0, u); b0 = vmaxq_f32(b0, u);
            a1 = vminq_f32(a1, w); b1 = vmaxq_f32(b1, w);
            m0 = vmaxq_u32(m0, vandq_u32(vreinterpretq_u32_f32(u), absm));
            m1 = vmaxq_u32(m1, vandq_u32(vreinterpretq_u32_f32(w), absm));
        }
        mn = vminvq_f32(vminq_f32(a0, a1));
        mx = vmaxvq_f32(vmaxq_f32(b0, b1));
        mb = vmaxvq_u32(vmaxq_u32(m0, m1));
    }
#elif defined(QMX__RVV)
    if (n >= 8) {   /* vsetvl strips into tail-undisturbed lanes, then one reduction each */
        const size_t vlm = __riscv_vsetvlmax_e32m4();
        vfloat32m4_t a = __riscv_vfmv_v_f_f32m4(x[0], vlm), b = a;
        vuint32m4_t m = __riscv_vmv_v_x_u32m4(0, vlm);
        size_t vl;
        for (; i < n; i += vl) {
            vfloat32m4_t u;
            vl = __riscv_vsetvl_e32m4(n - i);
            u = __riscv_vle32_v_f32m4(x + i, vl);
            a = __riscv_vfmin_vv_f32m4_tu(a, a, u, vl);
            b = __riscv_vfmax_vv_f32m4_tu(b, b, u, vl);
            m = __riscv_vmaxu_vv_u32m4_tu(m, m, __riscv_vand_vx_u32m4(
                    __riscv_vreinterpret_v_f32m4_u32m4(u), 0x7FFFFFFFu, vl), vl);
        }
        mn = __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredmin_vs_f32m4_f32m1(a, __riscv_vfmv_s_f_f32m1(x[0], 1), vlm));
        mx = __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredmax_vs_f32m4_f32m1(b, __riscv_vfmv_s_f_f32m1(x[0], 1), vlm));
        mb = __riscv_vmv_x_s_u32m1_u32(__riscv_vredmaxu_vs_u32m4_u32m1(m, __riscv_vmv_s_x_u32m1(0, 1), vlm));
    }
#endif
    for (; i < n; i++) {
        float e = x[i];
        uint32_t b = qmx__f32_bits(e) & 0x7FFFFFFFu;
        mn = e < mn ? e : mn;
        mx = e > mx ? e : mx;
        mb = b > mb ? b : mb;
    }
    *pmn = mn == 0.0f ? 0.0f : mn;
    *pmx = mx == 0.0f ? 0.0f : mx;
    return mb;
}

#if defined(QMX__AVX512)
/* Symmetric AQT / Qwix / TFLite scales of contiguous blocks (inner == 1, block a multiple of
 * 16, len a multiple of block), 16 blocks at a time: absmax as the integer max of |x|'s bits
 * (finite values: the same order as the floats), the 16 maxima gathered by a transposing tree,
 * then the recipe's s = absmax / B and its guard on 16 lanes (the same IEEE division as
 * qmx__group_qparams). Returns the number of groups done (a multiple of 16). */
static size_t qmx__st_sym_blocks512(const qmx_qconfig *c, const qmx__view *v, const float *x,
                                    float *scales, int32_t *zps, int *nonfinite) {
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512 bound = _mm512_set1_ps(qmx__sym_bound(c, v));
    const __m512 one = _mm512_set1_ps(1.0f), guard = _mm512_set1_ps(qmx__sqrt_flt_min());
    size_t ng = v->n_params - v->n_params % 16, g, bs = v->block;
    for (g = 0; g < ng; g += 16) {
        __m512i a[16], r;
        __m512 am, sc;
        __mmask16 fix, bad;
        int j, h;
        for (j = 0; j < 16; j++) {
            /* tree order: output lane p holds group 4 * (p % 4) + p / 4 (fixed by `order`) */
            const float *b = x + (g + j) * bs;
            size_t k;
            __m512i m = _mm512_and_si512(_mm512_loadu_si512((const void *)b), absm);
            for (k = 16; k < bs; k += 16)
                m = _mm512_max_epi32(m, _mm512_and_si512(
                                            _mm512_loadu_si512((const void *)(b + k)), absm));
            a[j] = m;
        }
        for (j = 0; j < 8; j++)   /* 16 -> 8: [A 8 lanes | B 8 lanes] */
            a[j] = _mm512_max_epi32(_mm512_shuffle_i32x4(a[2 * j], a[2 * j + 1], 0x44),
                                    _mm512_shuffle_i32x4(a[2 * j], a[2 * j + 1], 0xEE));
        for (j = 0; j < 4; j++)   /* 8 -> 4: [A 4 | B 4 | C 4 | D 4] */
            a[j] = _mm512_max_epi32(_mm512_shuffle_i32x4(a[2 * j], a[2 * j + 1], 0x88),
                                    _mm512_shuffle_i32x4(a[2 * j], a[2 * j + 1], 0xDD));
        for (j = 0; j < 2; j++)   /* 4 -> 2: 128-bit lane q holds [P_q 2 | Q_q 2] */
            a[j] = _mm512_max_epi32(_mm512_unpacklo_epi64(a[2 * j], a[2 * j + 1]),
                                    _mm512_unpackhi_epi64(a[2 * j], a[2 * j + 1]));
        {   /* 2 -> 1: 128-bit lane q holds one lane of each of 4 groups */
            __m512 p = _mm512_castsi512_ps(a[0]), q = _mm512_castsi512_ps(a[1]);
            r = _mm512_max_epi32(_mm512_castps_si512(_mm512_shuffle_ps(p, q, 0x88)),
                                 _mm512_castps_si512(_mm512_shuffle_ps(p, q, 0xDD)));
        }
        /* lane p of r is the group with tree position p: 16 groups in the order
         * 0,4,8,12 | 1,5,9,13 | ... of the inputs a[]; `order` puts group g + i in lane i */
        r = _mm512_permutexvar_epi32(order, r);
        bad = _mm512_cmpge_epu32_mask(r, _mm512_set1_epi32(0x7F800000));
        am = _mm512_castsi512_ps(r);
        if (c->recipe == QMX_RECIPE_AQT) {   /* absmax 0 -> 1, then the division */
            am = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(am, _mm512_setzero_ps(), _CMP_EQ_OQ),
                                      am, one);
            sc = _mm512_div_ps(am, bound);
        } else {                             /* Qwix: s < sqrt(FLT_MIN) -> 1; TFLite: 0 -> 1 */
            sc = _mm512_div_ps(am, bound);
            if (c->recipe == QMX_RECIPE_QWIX)
                fix = _mm512_cmp_ps_mask(sc, guard, _CMP_LT_OQ);
            else
                fix = _mm512_cmp_ps_mask(am, _mm512_setzero_ps(), _CMP_EQ_OQ);
            sc = _mm512_mask_blend_ps(fix, sc, one);
        }
        if (bad) {   /* NaN / Inf: the groups before the first bad one are written, no more */
            int first = 0;
            while (!((bad >> first) & 1)) first++;
            _mm512_mask_storeu_ps(scales + g, (__mmask16)((1u << first) - 1u), sc);
            if (zps) for (h = 0; h < first; h++) zps[g + h] = 0;
            *nonfinite = 1;
            return g + (size_t)first;
        }
        _mm512_storeu_ps(scales + g, sc);
        if (zps) for (h = 0; h < 16; h++) zps[g + h] = 0;
    }
    return ng;
}
#endif

QMX__DEF qmx_status qmx_compute_qparams(const qmx_qconfig *c, const float *x, size_t count,
                                        float *scales, size_t n_scales, int32_t *zps) {
    qmx__view v;
    qmx_status st = qmx__resolve(c, count, &v);
    size_t g, o, k, i;
    if (st != QMX_OK) return st;
    if (!x || !scales || (qmx__qparams_zp(c, &v) && !zps)) return QMX_ERR_NULL;
    if (n_scales < v.n_params) return QMX_ERR_BUFFER_TOO_SMALL;
    /* One pass, group by group in parameter order; a group holding NaN / Inf stops the call
     * (the documented prefix rule: the groups before it keep what was written). A separate
     * finite pass first would read the data twice: 0.74x quantize's speed at 64 MiB instead
     * of ~1x (measured, bench_quant qparams rows). */
    /* groups made of contiguous runs of >= 8 values (per tensor; per channel with inner >= 8;
     * per block with inner == 1): min / max run by run, absmax = max(-min, max). */
    if (c->granularity == QMX_PER_TENSOR || (c->granularity == QMX_PER_CHANNEL && v.inner >= 8) ||
        (c->granularity == QMX_PER_BLOCK && v.inner == 1)) {
        g = 0;
#if defined(QMX__AVX512)
        if (c->granularity == QMX_PER_BLOCK && !c->asymmetric &&
            (c->recipe == QMX_RECIPE_AQT || c->recipe == QMX_RECIPE_QWIX ||
             c->recipe == QMX_RECIPE_TFLITE) && v.block % 16 == 0 && v.len % v.block == 0) {
            int nonfinite = 0;
            g = qmx__st_sym_blocks512(c, &v, x, scales, zps, &nonfinite);
            if (nonfinite) return QMX_ERR_NONFINITE;
        }
#endif
        for (; g < v.n_params; g++) {
            float mn = 0.0f, mx = 0.0f;
            uint32_t mb = 0;
            int32_t zp;
            if (c->granularity == QMX_PER_TENSOR) {
                mb = qmx__st_minmax(x, count, &mn, &mx);
            } else if (c->granularity == QMX_PER_CHANNEL) {
                for (o = 0; o < v.outer; o++) {
                    float a, b;
                    uint32_t m = qmx__st_minmax(x + (o * v.len + g) * v.inner, v.inner, &a, &b);
                    if (o == 0 || a < mn) mn = a;
                    if (o == 0 || b > mx) mx = b;
                    if (m > mb) mb = m;
                }
            } else {
                size_t b = g % v.nblocks, k0 = b * v.block;
                mb = qmx__st_minmax(x + (g / v.nblocks) * v.len + k0,
                                    k0 + v.block < v.len ? v.block : v.len - k0, &mn, &mx);
            }
            if (mb >= 0x7F800000u) return QMX_ERR_NONFINITE;
            qmx__group_qparams(c, &v, mn, mx, -mn > mx ? -mn : mx, &scales[g], &zp);
            if (zps) zps[g] = zp;
        }
        return QMX_OK;
    }
    /* any other view: statistics per group, enumerated by parameter index. */
    for (g = 0; g < v.n_params; g++) {
        float mn = 0.0f, mx = 0.0f, am = 0.0f;
        int first = 1, finite = 1;
        size_t o0 = 0, o1 = v.outer, k0 = 0, k1 = v.len, i0 = 0, i1 = v.inner;
        if (c->granularity == QMX_PER_CHANNEL) { k0 = g; k1 = g + 1; }
        else if (c->granularity == QMX_PER_BLOCK) {
            size_t b = (g / v.inner) % v.nblocks;
            o0 = g / (v.inner * v.nblocks); o1 = o0 + 1;
            i0 = g % v.inner; i1 = i0 + 1;
            k0 = b * v.block; k1 = k0 + v.block < v.len ? k0 + v.block : v.len;
        }
        for (o = o0; o < o1; o++)
            for (k = k0; k < k1; k++)
                for (i = i0; i < i1; i++) {
                    float e = x[(o * v.len + k) * v.inner + i], a = qmx__fabs(e);
                    finite &= qmx__isfinite(e);
                    if (first) { mn = mx = e; am = a; first = 0; }
                    if (e < mn) mn = e;
                    if (e > mx) mx = e;
                    if (a > am) am = a;
                }
        if (!finite) return QMX_ERR_NONFINITE;
        {
            int32_t zp;
            qmx__group_qparams(c, &v, mn, mx, am, &scales[g], &zp);
            if (zps) zps[g] = zp;   /* 0 when symmetric (except torch / ONNX unsigned) */
        }
    }
    return QMX_OK;
}
/* (the diagnostic push above covers the functions the intrinsics inline into) */
#if defined(QMX__ST_MINMAX_POP)
#  pragma GCC diagnostic pop
#  undef QMX__ST_MINMAX_POP
#endif

/* Checks shared by quantize and dequantize: sizes, scales, zero points. */
static qmx_status qmx__check_params(const qmx_qconfig *c, const qmx__view *v, const float *scales,
                                    size_t n_scales, const int32_t *zps, size_t count, size_t q_bytes) {
    size_t need, g;
    int32_t lo, hi;
    if (!scales) return QMX_ERR_NULL;
    if (c->asymmetric && !zps) return QMX_ERR_NULL;   /* torch / ONNX: NULL means all 0 */
    if (n_scales < v->n_params) return QMX_ERR_BUFFER_TOO_SMALL;
    if (qmx_dtype_storage_bytes(v->dtype, count, &need) != QMX_OK) return QMX_ERR_OVERFLOW;
    if (q_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    lo = v->qmin; hi = v->qmax;
    for (g = 0; g < v->n_params; g++) {
        if (!qmx__isfinite(scales[g]) || !(scales[g] > 0.0f)) return QMX_ERR_ARG;
        if (zps && v->use_zp && (zps[g] < lo || zps[g] > hi)) return QMX_ERR_ARG;
    }
    return QMX_OK;
}

/* QLoRA NormalFloat4 (Dettmers et al. 2023, Appendix E; the float32 values Qwix's
 * numerics.py and bitsandbytes list), code k = table[k]. */
static const float qmx__nf4_table[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
/* Qwix's encoder: argmin_k |table[k] - t| in float32, the first (lowest) k on ties. NaN: the
 * code of 0 (qmx's rule; jnp.argmin would give code 0, -1.0). All 16 distances are compared,
 * as Qwix does: far outside [-1, 1] they round alike and the lowest code wins. */
static int32_t qmx__nf4_encode(float t) {
    int32_t k, best = 0;
    float bd;
    if (t != t) return 7;
    bd = qmx__fabs(qmx__nf4_table[0] - t);
    for (k = 1; k < 16; k++) {
        float d = qmx__fabs(qmx__nf4_table[k] - t);
        if (d < bd) { bd = d; best = k; }
    }
    return best;
}

static void qmx__make_run(const qmx_qconfig *c, const qmx__view *v, float s, int32_t zp,
                          qmx__run *p) {
    int32_t lo, hi;
    qmx__range(c, v, &lo, &hi);
    p->scale = s;
    p->use_div = c->recipe != QMX_RECIPE_AQT && c->recipe != QMX_RECIPE_TORCH;
    p->inv = 1.0f / s;
    /* AQT: an infinite reciprocal becomes 1; torch multiplies by 1.0f / scale as it is */
    if (!qmx__isfinite(p->inv) && c->recipe == QMX_RECIPE_AQT) p->inv = 1.0f;
    p->round = c->rounding != QMX_ROUND_DEFAULT ? c->rounding
             : (c->recipe == QMX_RECIPE_TFLITE ? QMX_ROUND_HALF_AWAY : QMX_ROUND_NEAREST_EVEN);
    p->rng = c->rng;
    p->lo = lo; p->hi = hi;
    if (c->recipe == QMX_RECIPE_QWIX) {         /* zp in float before rounding, then saturate */
        p->zp_f = (float)zp; p->zp_i = 0;
        p->lo_f = (float)lo; p->hi_f = (float)hi;
    } else {                                    /* zp added to the rounded integer */
        p->zp_f = 0.0f; p->zp_i = zp;
        p->lo_f = (float)(lo - zp); p->hi_f = (float)(hi - zp);
    }
}

/* Stack use: a 256-byte staging buffer for int4 and int16 outputs. */
#define QMX__STAGE 256
/* x86 SIMD builds: software prefetch of x[at + 2048 .. at + 2048 + m) (8 KiB ahead of the m
 * floats about to be read at x + at) while that lies inside x[0 .. n). Where a loop walks its
 * input in short pieces (int4 stages, MX groups read twice, per-block rows) the hardware
 * prefetchers lose the stream from DRAM. Measured on a Zen 5 EPYC at 64 MiB (a timing program
 * of ours, best of 7), GB/s of float without / with: int4 quantize 24 / 37, MXFP4 and MXFP8
 * blocks of 32 10.5 / 37-41, per-block(32) int8 27 / 34; README has the make bench rows. */
#if defined(QMX__AVX512) || defined(QMX__AVX2)
/* forced inline: as an out-of-line call GCC 12 deems it side-effect free and drops it */
QMX__MXV void qmx__prefetch_ahead(const float *x, size_t at, size_t m, size_t n) {
    size_t i;
    if (n - at < 2048u + m) return;
    for (i = 0; i < m; i += 16) _mm_prefetch((const char *)(x + at + 2048u + i), _MM_HINT_T0);
}
#else
#  define qmx__prefetch_ahead(x, at, m, n) ((void)0)
#endif

#if defined(QMX__AVX512)   /* short runs: per channel / per block with scales in lanes, int8 */
static int qmx__quant_shortrun_s8_simd(const qmx_qconfig *c, const qmx__view *v, const float *x,
                                       const float *scales, void *q);
static int qmx__quant_shortrun_f8_simd(const qmx_qconfig *c, const qmx__view *v, const float *x,
                                       const float *scales, uint8_t *q);
static int qmx__dequant_shortrun_simd(const qmx_qconfig *c, const qmx__view *v, const void *q,
                                         const float *scales, const int32_t *zps, float *y);
#endif
/* One run of qmx_quantize's walk: n elements from flat index at, with the parameters of
 * index pi (each element is quantized on its own, so any split of the runs gives the same
 * bits; the range calls below walk from any index) */
static void qmx__quant_piece(const qmx_qconfig *c, const qmx__view *v, const float *x,
                             const float *scales, const int32_t *zps, void *qv, size_t pi,
                             size_t at, size_t n) {
    float s = scales[pi];
    const float *xs = x + at;
    size_t j;
    if (v->nf4) {
        /* t as the recipe scales (AQT: x * (1/s), an infinite 1/s -> 1; else x / s),
         * then the nearest table value, through the 4-bit stage */
        int8_t stage[QMX__STAGE];
        float m = 1.0f / s;
        size_t done = 0;
        if (!qmx__isfinite(m)) m = 1.0f;
        while (done < n) {
            size_t k, cnt = n - done < QMX__STAGE ? n - done : QMX__STAGE;
            for (k = 0; k < cnt; k++) {
                float t = c->recipe == QMX_RECIPE_AQT ? xs[done + k] * m : xs[done + k] / s;
                stage[k] = (int8_t)qmx__nf4_encode(t);
            }
            qmx__put_nibbles((uint8_t *)qv, at + done, stage, cnt);
            done += cnt;
        }
    } else if (v->fp8) {
        uint8_t *out = (uint8_t *)qv + at;
        int div = c->recipe != QMX_RECIPE_AQT;
        float m = s;
        size_t d;
        if (!div) { m = 1.0f / s; if (!qmx__isfinite(m)) m = 1.0f; }
        /* clip to +-max then cast == saturating cast */
        d = qmx__fp8_quant_run_simd(xs, n, m, div, &v->f, !c->fp8_no_saturate, out);
        qmx__fp8_quant_run_scalar(xs + d, n - d, m, div, &v->f, !c->fp8_no_saturate,
                                  out + d);
    } else {
        qmx__run p;
        qmx__make_run(c, v, s, zps && v->use_zp ? zps[pi] : 0, &p);
        if (qmx__byte_int(v->dtype)) {
            qmx__quant_run_s8(xs, n, &p, (int8_t *)qv + at);
        } else if (v->dtype == QMX_UINT8) {
            uint8_t *out = (uint8_t *)qv + at;
            for (j = 0; j < n; j++) out[j] = (uint8_t)qmx__quant_one(xs[j], &p);
        } else if (v->dtype == QMX_INT16) {
            int16_t *out = (int16_t *)qv + at;
            for (j = 0; j < n; j++) out[j] = (int16_t)qmx__quant_one(xs[j], &p);
        } else if (v->dtype == QMX_UINT16) {
            uint16_t *out = (uint16_t *)qv + at;
            for (j = 0; j < n; j++) out[j] = (uint16_t)qmx__quant_one(xs[j], &p);
        } else { /* int4 / uint4 / int2 / uint2: every value fits int8, so the int8
                  * kernels quantize into a stack stage, then the bits are packed */
            int8_t stage[QMX__STAGE];
            size_t done = 0;
            int two = v->dtype == QMX_INT2 || v->dtype == QMX_UINT2;
            while (done < n) {
                size_t m = n - done < QMX__STAGE ? n - done : QMX__STAGE;
                qmx__prefetch_ahead(xs, done, m, n);
                qmx__quant_run_s8(xs + done, m, &p, stage);
                if (two) qmx__put_crumbs((uint8_t *)qv, at + done, stage, m);
                else qmx__put_nibbles((uint8_t *)qv, at + done, stage, m);
                done += m;
            }
        }
    }
}
QMX__DEF qmx_status qmx_quantize(const qmx_qconfig *c, const float *x, size_t count,
                                 const float *scales, size_t n_scales, const int32_t *zps,
                                 void *qv, size_t q_bytes) {
    qmx__view v;
    qmx__runit it;
    size_t param, off, len, j;
    int done = 0;   /* by the short-run vector path */
    qmx_status st = qmx__resolve(c, count, &v);
    if (st != QMX_OK) return st;
    if (!x || !qv) return QMX_ERR_NULL;
    st = qmx__check_params(c, &v, scales, n_scales, zps, count, q_bytes);
    if (st != QMX_OK) return st;
#if defined(QMX__AVX512)
    done = v.fp8 ? qmx__quant_shortrun_f8_simd(c, &v, x, scales, (uint8_t *)qv)
                 : qmx__quant_shortrun_s8_simd(c, &v, x, scales, qv);
#endif
    it.v = &v; it.g = c->granularity; it.o = it.k = it.i = 0;
    while (!done && qmx__next_run(&it, &param, &off, &len)) {
        /* per-block with inner > 1: each element of the row has its own scale */
        size_t per_elem = (c->granularity == QMX_PER_BLOCK && v.inner > 1) ? 1 : 0;
        size_t e = 0;
        while (e < len) {
            size_t n = per_elem ? 1 : len - e;
            qmx__quant_piece(c, &v, x, scales, zps, qv, param + (per_elem ? e : 0), off + e, n);
            e += n;
        }
    }
    if ((v.dtype == QMX_INT4 || v.dtype == QMX_UINT4 || v.nf4) && (count & 1))
        qmx__set_nibble((uint8_t *)qv, count, 0);  /* the unused high nibble */
    if ((v.dtype == QMX_INT2 || v.dtype == QMX_UINT2) && (count & 3))   /* the unused high bits */
        ((uint8_t *)qv)[count / 4] &= (uint8_t)((1u << (2u * (unsigned)(count & 3u))) - 1u);
    if (c->recipe == QMX_RECIPE_ONNX && v.dtype == QMX_FP8_E5M2) {
        /* ONNX's reference casts through ml_dtypes, whose E5M2 NaN is 0x7E | sign; qmx's
         * encoder writes 0x7F | sign, and only for NaN */
        uint8_t *o = (uint8_t *)qv;
        for (j = 0; j < count; j++) o[j] = (uint8_t)(o[j] - ((o[j] & 0x7Fu) == 0x7Fu));
    }
    return QMX_OK;
}

/* One run of qmx_dequantize's walk: n elements from flat index at, parameters of index pi */
static void qmx__dequant_piece(const qmx__view *v, const void *qv, const float *scales,
                               const int32_t *zps, float *y, size_t pi, size_t at,
                               size_t n) {
    float s = scales[pi];
    int32_t zp = zps && v->use_zp ? zps[pi] : 0;
    float *ys = y + at;
    size_t j;
    if (v->nf4) {
        for (j = 0; j < n; j++)
            ys[j] = qmx__nf4_table[qmx__get_nibble((const uint8_t *)qv, at + j, 0)] * s;
    } else if (v->fp8) {
        const uint8_t *in = (const uint8_t *)qv + at;
        size_t d = qmx__fp8_dequant_run_simd(in, n, s, &v->f, ys);
        qmx__fp8_dequant_run_scalar(in + d, n - d, s, &v->f, ys + d);
    } else if (qmx__byte_int(v->dtype)) {
        const int8_t *in = (const int8_t *)qv + at;
        size_t d = qmx__dequant_run_s8_simd(in, n, zp, s, ys);
        qmx__dequant_run_s8_scalar(in + d, n - d, zp, s, ys + d);
    } else if (v->dtype == QMX_UINT8) {
        const uint8_t *in = (const uint8_t *)qv + at;
        for (j = 0; j < n; j++) ys[j] = (float)((int32_t)in[j] - zp) * s;
    } else if (v->dtype == QMX_INT16) {
        const int16_t *in = (const int16_t *)qv + at;
        for (j = 0; j < n; j++) ys[j] = (float)((int32_t)in[j] - zp) * s;
    } else if (v->dtype == QMX_UINT16) {
        const uint16_t *in = (const uint16_t *)qv + at;
        for (j = 0; j < n; j++) ys[j] = (float)((int32_t)in[j] - zp) * s;
    } else {   /* int4 / uint4 / int2 / uint2: unpack into an int8 stack stage, then the
                * int8 kernels */
        int8_t stage[QMX__STAGE];
        size_t done = 0;
        while (done < n) {
            size_t m = n - done < QMX__STAGE ? n - done : QMX__STAGE, d;
            if (v->dtype == QMX_INT2 || v->dtype == QMX_UINT2)
                qmx__take_crumbs((const uint8_t *)qv, at + done, v->dtype == QMX_INT2, stage, m);
            else
                qmx__take_nibbles((const uint8_t *)qv, at + done, v->dtype == QMX_INT4, stage, m);
            d = qmx__dequant_run_s8_simd(stage, m, zp, s, ys + done);
            qmx__dequant_run_s8_scalar(stage + d, m - d, zp, s, ys + done + d);
            done += m;
        }
    }
}
QMX__DEF qmx_status qmx_dequantize(const qmx_qconfig *c, const void *qv, size_t q_bytes,
                                   size_t count, const float *scales, size_t n_scales,
                                   const int32_t *zps, float *y) {
    qmx__view v;
    qmx__runit it;
    size_t param, off, len;
    qmx_status st = qmx__resolve(c, count, &v);
    if (st != QMX_OK) return st;
    if (!qv || !y) return QMX_ERR_NULL;
    st = qmx__check_params(c, &v, scales, n_scales, zps, count, q_bytes);
    if (st != QMX_OK) return st;
#if defined(QMX__AVX512)
    if (qmx__dequant_shortrun_simd(c, &v, qv, scales, zps, y)) return QMX_OK;
#endif
    it.v = &v; it.g = c->granularity; it.o = it.k = it.i = 0;
    while (qmx__next_run(&it, &param, &off, &len)) {
        size_t per_elem = (c->granularity == QMX_PER_BLOCK && v.inner > 1) ? 1 : 0;
        size_t e = 0;
        while (e < len) {
            size_t n = per_elem ? 1 : len - e;
            qmx__dequant_piece(&v, qv, scales, zps, y, param + (per_elem ? e : 0), off + e, n);
            e += n;
        }
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_fp8_quantize_array(qmx_dtype fmt, const float *x, size_t n, float scale,
                                           int saturate, uint8_t *out) {
    qmx__fp8fmt f;
    size_t d;
    if (!qmx__fp8_format(fmt, &f)) return QMX_ERR_DTYPE;
    if (!x || !out) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (!qmx__isfinite(scale) || !(scale > 0.0f)) return QMX_ERR_ARG;
    d = qmx__fp8_quant_run_simd(x, n, scale, 1, &f, saturate != 0, out);
    qmx__fp8_quant_run_scalar(x + d, n - d, scale, 1, &f, saturate != 0, out + d);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_fp8_dequantize_array(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                             float scale, float *y) {
    qmx__fp8fmt f;
    size_t d;
    if (!qmx__fp8_format(fmt, &f)) return QMX_ERR_DTYPE;
    if (!codes || !y) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (!qmx__isfinite(scale) || !(scale > 0.0f)) return QMX_ERR_ARG;
    d = qmx__fp8_dequant_run_simd(codes, n, scale, &f, y);
    qmx__fp8_dequant_run_scalar(codes + d, n - d, scale, &f, y + d);
    return QMX_OK;
}

/* ---- range calls of qmx_quantize / qmx_dequantize (USING SEVERAL CORES) ---- */
/* The whole call's checks that a chunk's own call cannot see (the view against count, the
 * storage of all count elements), the task count, and the config of one chunk. */
static qmx_status qmx__par_q_prep(const qmx_qconfig *cfg, const void *in, const void *out,
                                  size_t count, size_t q_bytes, size_t tb, size_t te,
                                  qmx_qconfig *sub, size_t *nt) {
    size_t np, need;
    qmx_status st;
    if (!cfg || !in || !out) return QMX_ERR_NULL;
    st = qmx_qparams_count(cfg, count, &np);
    if (st != QMX_OK) return st;
    st = qmx_dtype_storage_bytes(cfg->dtype == QMX_DTYPE_INVALID ? QMX_INT8 : cfg->dtype, count,
                                 &need);
    if (st != QMX_OK) return st;
    if (q_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    *sub = *cfg;
    *nt = 1;
    if (cfg->rounding != QMX_ROUND_STOCHASTIC) {
        if (cfg->granularity == QMX_PER_TENSOR) {
            sub->outer = 0; sub->axis_len = 0; sub->inner = 0;   /* [1][chunk][1] */
        }
        *nt = count / QMX_TASK_ELEMS + (count % QMX_TASK_ELEMS != 0);
    }
    if (tb > te || te > *nt) return QMX_ERR_ARG;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_quantize_tasks(const qmx_qconfig *cfg, size_t count, size_t *n_tasks) {
    qmx_qconfig sub;
    size_t nt = 0;
    qmx_status st;
    if (!n_tasks) return QMX_ERR_NULL;
    /* no buffers here (cfg stands in for them), and no storage limit */
    st = qmx__par_q_prep(cfg, cfg, cfg, count, SIZE_MAX, 0, 0, &sub, &nt);
    if (st == QMX_OK) *n_tasks = nt;
    return st;
}
/* elements [e0, e1) of tasks [tb, te) and the byte offset of e0 (e0 a multiple of 4) */
static void qmx__par_q_span(const qmx_qconfig *c, size_t count, size_t nt, size_t tb, size_t te,
                            size_t *e0, size_t *e1, size_t *b0) {
    int bits = qmx_dtype_bits(c->dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c->dtype);
    *e0 = nt == 1 ? 0 : tb * QMX_TASK_ELEMS;
    *e1 = nt == 1 || te == nt ? count : te * QMX_TASK_ELEMS;
    *b0 = *e0 / 8 * (size_t)bits;
}
/* The run of the walk (qmx__next_run) holding flat index f, from f and clipped to f1: its
 * parameter index and length (per channel or per block) */
static size_t qmx__par_q_seek(const qmx_qconfig *c, const qmx__view *v, size_t f, size_t f1,
                              size_t *pi) {
    size_t i = f % v->inner, r = f / v->inner, k = r % v->len, o = r / v->len, n;
    if (c->granularity == QMX_PER_CHANNEL) {
        *pi = k;
        n = v->inner - i;
    } else if (v->inner == 1) {
        size_t b = k / v->block, end = (b + 1) * v->block;
        if (end > v->len) end = v->len;
        *pi = o * v->nblocks + b;
        n = end - k;
    } else {
        *pi = (o * v->nblocks + k / v->block) * v->inner + i;
        n = 1;
    }
    return n < f1 - f ? n : f1 - f;
}
/* The tail fix-ups of qmx_quantize for elements [a, b) */
static void qmx__par_q_fix(const qmx_qconfig *c, const qmx__view *v, void *qv, size_t count,
                           size_t a, size_t b) {
    uint8_t *o = (uint8_t *)qv;
    size_t j;
    if (b == count && a < b && (v->dtype == QMX_INT4 || v->dtype == QMX_UINT4 || v->nf4) &&
        (count & 1))
        qmx__set_nibble(o, count, 0);
    if (b == count && a < b && (v->dtype == QMX_INT2 || v->dtype == QMX_UINT2) && (count & 3))
        o[count / 4] &= (uint8_t)((1u << (2u * (unsigned)(count & 3u))) - 1u);
    if (c->recipe == QMX_RECIPE_ONNX && v->dtype == QMX_FP8_E5M2)
        for (j = a; j < b; j++) o[j] = (uint8_t)(o[j] - ((o[j] & 0x7Fu) == 0x7Fu));
}
/* Elements [f0, f1) of a per-channel or per-block call: the whole [len][inner] rows of the
 * view inside the range go to qmx_quantize / qmx_dequantize as a call of their own (its fast
 * paths included; packed dtypes when the rows start on a byte), the partial rows at either
 * end go through the walk's runs from their index. The parameters of those runs are checked
 * before anything is written; the call on whole rows checks its own first. */
static qmx_status qmx__par_q_rows(int deq, const qmx_qconfig *c, const void *in, size_t count,
                                  const float *scales, size_t n_scales, const int32_t *zps,
                                  void *out, size_t q_bytes, size_t f0, size_t f1) {
    qmx__view v;
    size_t row, o0, o1, seg[4], f, n, pi, epb;
    int g, bits;
    qmx_status st = qmx__resolve(c, count, &v);
    if (st != QMX_OK) return st;
    if (!scales) return QMX_ERR_NULL;
    if (c->asymmetric && !zps) return QMX_ERR_NULL;
    if (n_scales < v.n_params) return QMX_ERR_BUFFER_TOO_SMALL;
    bits = qmx_dtype_bits(v.dtype);
    epb = bits < 8 ? (size_t)(8 / bits) : 1;   /* elements per byte */
    row = v.len * v.inner;
    o0 = f0 / row + (f0 % row != 0);
    o1 = f1 / row;
    if (o0 >= o1 || (o0 * row) % epb != 0) o0 = o1 = 0;   /* no whole rows: runs only */
    seg[0] = f0; seg[1] = o0 < o1 ? o0 * row : f1;
    seg[2] = o0 < o1 ? o1 * row : f1; seg[3] = f1;
    for (g = 0; g < 4; g += 2)
        for (f = seg[g]; f < seg[g + 1]; f += n) {
            n = qmx__par_q_seek(c, &v, f, seg[g + 1], &pi);
            if (!qmx__isfinite(scales[pi]) || !(scales[pi] > 0.0f)) return QMX_ERR_ARG;
            if (zps && v.use_zp && (zps[pi] < v.qmin || zps[pi] > v.qmax)) return QMX_ERR_ARG;
        }
    if (o0 < o1) {
        qmx_qconfig sub = *c;
        size_t e0 = o0 * row, b0 = bits < 8 ? e0 / epb : e0 * (size_t)(bits / 8);
        size_t po = c->granularity == QMX_PER_BLOCK ? o0 * v.nblocks * v.inner : 0;
        sub.outer = o1 - o0; sub.axis_len = v.len; sub.inner = v.inner;
        st = deq ? qmx_dequantize(&sub, (const unsigned char *)in + b0, q_bytes - b0,
                                  (o1 - o0) * row, scales + po, n_scales - po,
                                  zps ? zps + po : NULL, (float *)out + e0)
                 : qmx_quantize(&sub, (const float *)in + e0, (o1 - o0) * row, scales + po,
                                n_scales - po, zps ? zps + po : NULL,
                                (unsigned char *)out + b0, q_bytes - b0);
        if (st != QMX_OK) return st;
    }
    for (g = 0; g < 4; g += 2) {
        for (f = seg[g]; f < seg[g + 1]; f += n) {
            n = qmx__par_q_seek(c, &v, f, seg[g + 1], &pi);
            if (deq) qmx__dequant_piece(&v, in, scales, zps, (float *)out, pi, f, n);
            else qmx__quant_piece(c, &v, (const float *)in, scales, zps, out, pi, f, n);
        }
        if (!deq) qmx__par_q_fix(c, &v, out, count, seg[g], seg[g + 1]);
    }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_quantize_run(const qmx_qconfig *cfg, const float *x, size_t count,
                                     const float *scales, size_t n_scales,
                                     const int32_t *zero_points, void *q, size_t q_bytes,
                                     size_t task_begin, size_t task_end) {
    qmx_qconfig sub;
    size_t nt, e0, e1, b0;
    qmx_status st = qmx__par_q_prep(cfg, x, q, count, q_bytes, task_begin, task_end, &sub, &nt);
    if (st != QMX_OK || task_begin == task_end) return st;
    qmx__par_q_span(cfg, count, nt, task_begin, task_end, &e0, &e1, &b0);
    if (nt > 1 && cfg->granularity != QMX_PER_TENSOR)
        return qmx__par_q_rows(0, cfg, x, count, scales, n_scales, zero_points, q, q_bytes, e0,
                               e1);
    return qmx_quantize(&sub, x + e0, e1 - e0, scales, n_scales, zero_points,
                        (unsigned char *)q + b0, q_bytes - b0);
}
QMX__DEF qmx_status qmx_dequantize_run(const qmx_qconfig *cfg, const void *q, size_t q_bytes,
                                       size_t count, const float *scales, size_t n_scales,
                                       const int32_t *zero_points, float *y, size_t task_begin,
                                       size_t task_end) {
    qmx_qconfig sub;
    size_t nt, e0, e1, b0;
    qmx_status st = qmx__par_q_prep(cfg, q, y, count, q_bytes, task_begin, task_end, &sub, &nt);
    if (st != QMX_OK || task_begin == task_end) return st;
    qmx__par_q_span(cfg, count, nt, task_begin, task_end, &e0, &e1, &b0);
    if (nt > 1 && cfg->granularity != QMX_PER_TENSOR)
        return qmx__par_q_rows(1, cfg, q, count, scales, n_scales, zero_points, y, q_bytes, e0,
                               e1);
    return qmx_dequantize(&sub, (const unsigned char *)q + b0, q_bytes - b0, e1 - e0, scales,
                          n_scales, zero_points, y + e0);
}

/* ---- executors of the element-wise calls: tasks of QMX_TASK_ELEMS, no workspace ---- */
typedef qmx_status (*qmx__par_efn)(const void *args, size_t tb, size_t te);
typedef struct qmx__par_ejob {
    qmx__par_efn run;
    const void *args;
    size_t nt;
} qmx__par_ejob;
static void qmx__par_etask(void *arg, int task, int worker) {
    const qmx__par_ejob *j = (const qmx__par_ejob *)arg;
    (void)worker;   /* no workspace: any worker index will do */
    if (task < 0 || (size_t)task >= j->nt) return;   /* outside the executor contract */
    (void)j->run(j->args, (size_t)task, (size_t)task + 1);
}
/* After the whole call is checked: the executor's own checks, then nt tasks */
static qmx_status qmx__par_eexec(const qmx_executor *ex, size_t nt, qmx__par_efn run,
                                 const void *args) {
    qmx__par_ejob j;
    if (ex->workers < 0) return QMX_ERR_ARG;
    if (!ex->parallel_for) return QMX_ERR_NULL;
    if (nt > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
    if (nt == 1) return run(args, 0, 1);
    j.run = run; j.args = args; j.nt = nt;
    ex->parallel_for(ex->pool, (int)nt, qmx__par_etask, &j);
    return QMX_OK;
}
static int qmx__par_serial(const qmx_executor *ex) {
    return !ex || ex->workers == 0 || ex->workers == 1;
}
typedef struct qmx__par_qargs {
    const qmx_qconfig *c;
    const void *in;
    void *out;
    const float *scales;
    const int32_t *zps;
    size_t count, n_scales, q_bytes;
    int deq;
} qmx__par_qargs;
static qmx_status qmx__par_qtask(const void *args, size_t tb, size_t te) {
    const qmx__par_qargs *a = (const qmx__par_qargs *)args;
    return a->deq ? qmx_dequantize_run(a->c, a->in, a->q_bytes, a->count, a->scales, a->n_scales,
                                       a->zps, (float *)a->out, tb, te)
                  : qmx_quantize_run(a->c, (const float *)a->in, a->count, a->scales,
                                     a->n_scales, a->zps, a->out, a->q_bytes, tb, te);
}
static qmx_status qmx__par_qexec(const qmx__par_qargs *a, const qmx_executor *ex) {
    qmx__view v;
    size_t nt;
    qmx_status st = qmx__resolve(a->c, a->count, &v);   /* the serial call's checks, in order */
    if (st != QMX_OK) return st;
    if (!a->in || !a->out) return QMX_ERR_NULL;
    st = qmx__check_params(a->c, &v, a->scales, a->n_scales, a->zps, a->count, a->q_bytes);
    if (st != QMX_OK) return st;
    st = qmx_quantize_tasks(a->c, a->count, &nt);
    if (st != QMX_OK) return st;
    return qmx__par_eexec(ex, nt, qmx__par_qtask, a);
}
QMX__DEF qmx_status qmx_quantize_exec(const qmx_qconfig *cfg, const float *x, size_t count,
                                      const float *scales, size_t n_scales,
                                      const int32_t *zero_points, void *q, size_t q_bytes,
                                      const qmx_executor *executor) {
    qmx__par_qargs a;
    if (qmx__par_serial(executor))
        return qmx_quantize(cfg, x, count, scales, n_scales, zero_points, q, q_bytes);
    a.c = cfg; a.in = x; a.out = q; a.scales = scales; a.zps = zero_points; a.count = count;
    a.n_scales = n_scales; a.q_bytes = q_bytes; a.deq = 0;
    return qmx__par_qexec(&a, executor);
}
QMX__DEF qmx_status qmx_dequantize_exec(const qmx_qconfig *cfg, const void *q, size_t q_bytes,
                                        size_t count, const float *scales, size_t n_scales,
                                        const int32_t *zero_points, float *y,
                                        const qmx_executor *executor) {
    qmx__par_qargs a;
    if (qmx__par_serial(executor))
        return qmx_dequantize(cfg, q, q_bytes, count, scales, n_scales, zero_points, y);
    a.c = cfg; a.in = q; a.out = y; a.scales = scales; a.zps = zero_points; a.count = count;
    a.n_scales = n_scales; a.q_bytes = q_bytes; a.deq = 1;
    return qmx__par_qexec(&a, executor);
}

/* ---- fp8 arrays: range calls and executors ---- */
QMX__DEF qmx_status qmx_array_tasks(size_t n, size_t *n_tasks) {
    if (!n_tasks) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    *n_tasks = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    return QMX_OK;
}
/* The whole call's checks of an fp8 (fam 0), fp4 (1, fmt ignored) or fp6 (2) array call, in the
 * serial call's order, then the range: elements [e0, e1) */
static qmx_status qmx__par_arr_prep(int fam, qmx_dtype fmt, const void *in, const void *out,
                                    size_t n, float scale, size_t tb, size_t te, size_t *e0,
                                    size_t *e1) {
    qmx__fp8fmt f8;
    qmx__lowfp lf;
    size_t nt;
    if (fam == 0 ? !qmx__fp8_format(fmt, &f8)
                 : fam == 2 && (fmt == QMX_FP4_E2M1 || !qmx__lowfp_format(fmt, &lf)))
        return QMX_ERR_DTYPE;
    if (!in || !out) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (!qmx__isfinite(scale) || !(scale > 0.0f)) return QMX_ERR_ARG;
    nt = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    if (tb > te || te > nt) return QMX_ERR_ARG;
    *e0 = tb == nt ? n : tb * QMX_TASK_ELEMS;   /* (an empty range at the end: e0 = e1 = n) */
    *e1 = te == nt ? n : te * QMX_TASK_ELEMS;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_fp8_quantize_array_run(qmx_dtype fmt, const float *x, size_t n,
                                               float scale, int saturate, uint8_t *out,
                                               size_t task_begin, size_t task_end) {
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(0, fmt, x, out, n, scale, task_begin, task_end, &e0, &e1);
    if (st != QMX_OK || e0 == e1) return st;
    return qmx_fp8_quantize_array(fmt, x + e0, e1 - e0, scale, saturate, out + e0);
}
QMX__DEF qmx_status qmx_fp8_dequantize_array_run(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                 float scale, float *y, size_t task_begin,
                                                 size_t task_end) {
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(0, fmt, codes, y, n, scale, task_begin, task_end, &e0,
                                      &e1);
    if (st != QMX_OK || e0 == e1) return st;
    return qmx_fp8_dequantize_array(fmt, codes + e0, e1 - e0, scale, y + e0);
}
/* An fp8 / fp4 / fp6 array call through an executor (fam as qmx__par_arr_prep; saturate: fp8's
 * saturate, fp4 / fp6's round_toward_zero). */
typedef struct qmx__par_arrargs {
    int fam;
    qmx_dtype fmt;
    const void *in;
    void *out;
    size_t n;
    float scale;
    int saturate, deq;
} qmx__par_arrargs;
static qmx_status qmx__par_arrtask(const void *args, size_t tb, size_t te);
static qmx_status qmx__par_arrexec(int fam, qmx_dtype fmt, const void *in, size_t n,
                                   float scale, int saturate, void *out, int deq,
                                   const qmx_executor *ex) {
    qmx__par_arrargs a;
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(fam, fmt, in, out, n, scale, 0, 0, &e0, &e1);
    if (st != QMX_OK) return st;
    a.fam = fam; a.fmt = fmt; a.in = in; a.out = out; a.n = n; a.scale = scale;
    a.saturate = saturate; a.deq = deq;
    return qmx__par_eexec(ex, n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0), qmx__par_arrtask,
                          &a);
}
QMX__DEF qmx_status qmx_fp8_quantize_array_exec(qmx_dtype fmt, const float *x, size_t n,
                                                float scale, int saturate, uint8_t *out,
                                                const qmx_executor *executor) {
    if (qmx__par_serial(executor)) return qmx_fp8_quantize_array(fmt, x, n, scale, saturate, out);
    return qmx__par_arrexec(0, fmt, x, n, scale, saturate, out, 0, executor);
}
QMX__DEF qmx_status qmx_fp8_dequantize_array_exec(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                  float scale, float *y,
                                                  const qmx_executor *executor) {
    if (qmx__par_serial(executor)) return qmx_fp8_dequantize_array(fmt, codes, n, scale, y);
    return qmx__par_arrexec(0, fmt, codes, n, scale, 0, y, 1, executor);
}

/* ---- fp4 / fp6 arrays: range calls and executors (fmt QMX_FP4_E2M1: the fp4 calls) ---- */
QMX__DEF qmx_status qmx_fp4_quantize_array_run(const float *x, size_t n, float scale,
                                               int round_toward_zero, uint8_t *packed,
                                               size_t task_begin, size_t task_end) {
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(1, QMX_FP4_E2M1, x, packed, n, scale, task_begin, task_end,
                                     &e0, &e1);
    if (st != QMX_OK || e0 == e1) return st;
    return qmx_fp4_quantize_array(x + e0, e1 - e0, scale, round_toward_zero, packed + e0 / 2);
}
QMX__DEF qmx_status qmx_fp4_dequantize_array_run(const uint8_t *packed, size_t n, float scale,
                                                 float *y, size_t task_begin, size_t task_end) {
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(1, QMX_FP4_E2M1, packed, y, n, scale, task_begin, task_end,
                                     &e0, &e1);
    if (st != QMX_OK || e0 == e1) return st;
    return qmx_fp4_dequantize_array(packed + e0 / 2, e1 - e0, scale, y + e0);
}
QMX__DEF qmx_status qmx_fp6_quantize_array_run(qmx_dtype fmt, const float *x, size_t n,
                                               float scale, int round_toward_zero, uint8_t *out,
                                               size_t task_begin, size_t task_end) {
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(2, fmt, x, out, n, scale, task_begin, task_end, &e0, &e1);
    if (st != QMX_OK || e0 == e1) return st;
    return qmx_fp6_quantize_array(fmt, x + e0, e1 - e0, scale, round_toward_zero, out + e0);
}
QMX__DEF qmx_status qmx_fp6_dequantize_array_run(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                 float scale, float *y, size_t task_begin,
                                                 size_t task_end) {
    size_t e0, e1;
    qmx_status st = qmx__par_arr_prep(2, fmt, codes, y, n, scale, task_begin, task_end, &e0,
                                      &e1);
    if (st != QMX_OK || e0 == e1) return st;
    return qmx_fp6_dequantize_array(fmt, codes + e0, e1 - e0, scale, y + e0);
}
static qmx_status qmx__par_arrtask(const void *args, size_t tb, size_t te) {
    const qmx__par_arrargs *a = (const qmx__par_arrargs *)args;
    const uint8_t *codes = (const uint8_t *)a->in;
    const float *x = (const float *)a->in;
    if (a->fam == 0)
        return a->deq ? qmx_fp8_dequantize_array_run(a->fmt, codes, a->n, a->scale,
                                                     (float *)a->out, tb, te)
                      : qmx_fp8_quantize_array_run(a->fmt, x, a->n, a->scale, a->saturate,
                                                   (uint8_t *)a->out, tb, te);
    if (a->fam == 1)
        return a->deq ? qmx_fp4_dequantize_array_run(codes, a->n, a->scale, (float *)a->out, tb,
                                                     te)
                      : qmx_fp4_quantize_array_run(x, a->n, a->scale, a->saturate,
                                                   (uint8_t *)a->out, tb, te);
    return a->deq ? qmx_fp6_dequantize_array_run(a->fmt, codes, a->n, a->scale, (float *)a->out,
                                                 tb, te)
                  : qmx_fp6_quantize_array_run(a->fmt, x, a->n, a->scale, a->saturate,
                                               (uint8_t *)a->out, tb, te);
}
QMX__DEF qmx_status qmx_fp4_quantize_array_exec(const float *x, size_t n, float scale,
                                                int round_toward_zero, uint8_t *packed,
                                                const qmx_executor *executor) {
    if (qmx__par_serial(executor))
        return qmx_fp4_quantize_array(x, n, scale, round_toward_zero, packed);
    return qmx__par_arrexec(1, QMX_FP4_E2M1, x, n, scale, round_toward_zero != 0, packed, 0,
                            executor);
}
QMX__DEF qmx_status qmx_fp4_dequantize_array_exec(const uint8_t *packed, size_t n, float scale,
                                                  float *y, const qmx_executor *executor) {
    if (qmx__par_serial(executor)) return qmx_fp4_dequantize_array(packed, n, scale, y);
    return qmx__par_arrexec(1, QMX_FP4_E2M1, packed, n, scale, 0, y, 1, executor);
}
QMX__DEF qmx_status qmx_fp6_quantize_array_exec(qmx_dtype fmt, const float *x, size_t n,
                                                float scale, int round_toward_zero, uint8_t *out,
                                                const qmx_executor *executor) {
    if (qmx__par_serial(executor))
        return qmx_fp6_quantize_array(fmt, x, n, scale, round_toward_zero, out);
    return qmx__par_arrexec(2, fmt, x, n, scale, round_toward_zero != 0, out, 0, executor);
}
QMX__DEF qmx_status qmx_fp6_dequantize_array_exec(qmx_dtype fmt, const uint8_t *codes, size_t n,
                                                  float scale, float *y,
                                                  const qmx_executor *executor) {
    if (qmx__par_serial(executor)) return qmx_fp6_dequantize_array(fmt, codes, n, scale, y);
    return qmx__par_arrexec(2, fmt, codes, n, scale, 0, y, 1, executor);
}

/* ---- 6b. block-scaled formats (MX, NVFP4) ---- */
typedef struct qmx__mxf {
    qmx_dtype elem;      /* element dtype */
    int emax;            /* exponent of the largest power of two of the element format */
    int mbits;           /* mantissa bits */
    float maxv;          /* largest finite element */
    uint8_t nan_code;    /* torchao's fp4 / fp6 code for a NaN (its bit algorithm's normal
                            branch); fp8: the format's own NaN */
} qmx__mxf;
static void qmx__mx_format(qmx_mx_format f, qmx__mxf *m) {
    switch (f) {
    case QMX_MXFP8_E4M3: m->elem = QMX_FP8_E4M3FN; m->emax = 8; m->mbits = 3; m->maxv = 448.0f; m->nan_code = 0x7F; break;
    case QMX_MXFP8_E5M2: m->elem = QMX_FP8_E5M2; m->emax = 15; m->mbits = 2; m->maxv = 57344.0f; m->nan_code = 0x7F; break;
    case QMX_MXFP6_E2M3: m->elem = QMX_FP6_E2M3; m->emax = 2; m->mbits = 3; m->maxv = 7.5f; m->nan_code = 0x0C; break;
    case QMX_MXFP6_E3M2: m->elem = QMX_FP6_E3M2; m->emax = 4; m->mbits = 2; m->maxv = 28.0f; m->nan_code = 0x0E; break;
    case QMX_MXINT8: m->elem = QMX_INT8; m->emax = 0; m->mbits = 6; m->maxv = 1.984375f; m->nan_code = 0; break;
    default: m->elem = QMX_FP4_E2M1; m->emax = 2; m->mbits = 1; m->maxv = 6.0f; m->nan_code = 0x03; break;
    }
}
static int qmx__mx_sign_bit(qmx_dtype d) { return d == QMX_FP4_E2M1 ? 0x8 : (d == QMX_FP6_E2M3 || d == QMX_FP6_E3M2) ? 0x20 : 0x80; }
static uint8_t qmx__mx_encode(const qmx__mxf *m, float t, int nan_rule) {
    /* nan_rule 0: torchao (fp8 NaN code | sign; fp4/fp6 its normal-branch code | sign);
     * 1: ml_dtypes / Qwix (fp8 NaN code | sign; fp4 +NaN -> 0x8, -NaN -> 0x0) */
    if (t != t) {
        int neg = (qmx__f32_bits(t) >> 31) != 0;
        if (qmx_dtype_is_fp8(m->elem)) return (uint8_t)(m->nan_code | (neg ? 0x80 : 0));
        if (nan_rule == 1) return (uint8_t)(neg ? 0x0 : qmx__mx_sign_bit(m->elem));
        return (uint8_t)(m->nan_code | (neg ? qmx__mx_sign_bit(m->elem) : 0));
    }
    if (qmx_dtype_is_fp8(m->elem)) return qmx_fp8_from_f32(t, m->elem, 1);
    if (m->elem == QMX_FP4_E2M1) return qmx_fp4_from_f32(t, 0);
    return qmx_fp6_from_f32(t, m->elem, 0);
}
static float qmx__mx_decode(const qmx__mxf *m, uint8_t code) {
    if (m->elem == QMX_INT8) return (float)((int32_t)code - (code & 0x80 ? 256 : 0)) * 0.015625f;
    if (qmx_dtype_is_fp8(m->elem)) return qmx_fp8_to_f32(code, m->elem);
    if (m->elem == QMX_FP4_E2M1) return qmx_fp4_to_f32(code);
    return qmx_fp6_to_f32(code, m->elem);
}
/* the E8M0 code of a block by torchao's to_mx (FLOOR / CEIL / EVEN / RCEIL); 0xFF for a NaN
 * or infinite amax (or one EVEN rounds to Inf) */
static uint8_t qmx__mx_torchao_code(const qmx__mxf *m, qmx_mx_rule r, float amax) {
    uint32_t b = qmx__f32_bits(amax), eb, man;
    int u;
    if (b >= 0x7F800000u) return 0xFF;                      /* NaN or Inf (amax >= 0) */
    if (r == QMX_MX_RCEIL) {                                /* e8m0 of amax / max, rounded up */
        float inv = 1.0f / m->maxv, d = amax * inv;
        uint32_t db = qmx__f32_bits(d);
        eb = (db >> 23) & 0xFFu; man = db & 0x7FFFFFu;
        if (eb == 0xFFu) return 0xFF;
        if (eb) return (uint8_t)(eb + (man != 0) > 254u ? 0xFFu : eb + (man != 0));
        return (uint8_t)(man > 0x400000u);                  /* 2^-127 or 2^-126 */
    }
    if (r == QMX_MX_EVEN) {                                 /* amax to mbits, ties up */
        b = (b + (1u << (22 - m->mbits))) & 0xFF800000u;
        if (b >= 0x7F800000u) return 0xFF;
    }
    eb = (b >> 23) & 0xFFu; man = b & 0x7FFFFFu;
    u = (int)eb - 127 - m->emax + (r == QMX_MX_CEIL && man != 0);
    if (u < -127) u = -127;
    if (u > 128) u = 128;
    return (uint8_t)(u + 127);
}
/* 2^(c - 127) as a float32 (c = 0: 2^-127, subnormal); NaN for 0xFF */
static float qmx__e8m0_pow2(uint8_t c) {
    if (c == 0xFF) return qmx__bits_f32(0x7FC00000u);
    return c ? qmx__bits_f32((uint32_t)c << 23) : qmx__bits_f32(0x00400000u);
}

/* floor(log2 v) of an integer v >= 1 */
static int qmx__mx_ilog2(uint32_t v) { int j = 0; while (v >>= 1) j++; return j; }
/* floor(log2f(a)) with log2f correctly rounded to float32 (as microxcaling's torch.log2 and
 * ggml's glibc log2f give it), for a > 0 finite with bits b; integers only, no libm.
 * Proof. Write a = m 2^e, m in [1, 2) (subnormals normalised), y = log2 a = e + log2 m in
 * [e, e + 1). e is a float and rounding is monotone, so RN(y) is e or k = e + 1; it is k
 * exactly when k - y < h, half the spacing of the floats just below k (y is irrational when
 * m > 1, so never a tie). Those floats lie in the binade [2^j, 2^(j+1)) with 2^j < k <= 2^(j+1)
 * for k > 0, or 2^j <= |k| < 2^(j+1) for k < 0 (they are of magnitude just above |k|): spacing
 * 2^(j-23), h = 2^(j-24). For k = 0, y = log2 m - 1 <= log2(2 - 2^-23) - 1 < -2^-24 is far
 * from 0 against its own spacing, so RN(y) < 0. With m = 2 - t 2^-23 (t = 2^24 - 24-bit
 * significand, 1 <= t <= 2^23): k - y = -log2(1 - t 2^-24) < h  <=>  t < B = 2^24 (1 - 2^-h).
 * With c = h ln 2, 1 - e^-c lies in (c - c^2 / 2, c), so B lies in (2^j ln2 (1 - c / 2), 2^j ln2),
 * an interval narrower than 4e-4 for j <= 7 (|k| <= 148); the fractional parts of 2^j ln 2,
 * j = -1 .. 7, are 0.35 0.69 0.39 0.77 0.55 0.09 0.18 0.36 0.72, so no integer lies in it and
 * RN(y) = k exactly when t <= floor(2^j ln 2) = the table below. E.g. every a within 5 ulps
 * below 2^5 has log2f(a) = 5; a = FLT_MAX (t = 1, k = 128, j = 6) gives 128. */
static int qmx__mx_floor_log2(uint32_t b) {
    static const uint8_t tmax[9] = {0, 0, 1, 2, 5, 11, 22, 44, 88};   /* j = -1 .. 7 */
    int e = (int)(b >> 23) - 127, k, j;
    uint32_t sig = b & 0x7FFFFFu;
    if (b >> 23) sig |= 0x800000u;
    else for (e = -126; !(sig & 0x800000u); e--) sig <<= 1;
    if (sig == 0x800000u) return e;                         /* a power of two: exact */
    k = e + 1;
    if (k == 0) return e;
    j = k > 0 ? (k == 1 ? -1 : qmx__mx_ilog2((uint32_t)(k - 1))) : qmx__mx_ilog2((uint32_t)-k);
    return 0x1000000u - sig <= tmax[j + 1] ? k : e;
}
/* floor(f32(w + 0.5)) for w = |a| 2^k (a finite, bits mag without the sign; w < 2^8): the float32
 * addition rounds (e.g. w = 0.5 - 2^-25 gives 1), emulated exactly in integers. w = sig 2^-n
 * = i + f; f >= 1/2: the sum is in [i + 1, i + 1.5), whatever its rounding the floor is i + 1.
 * f < 1/2: the sum S is in [i + 1/2, i + 1) in the binade 2^j (j = floor(log2 i), -1 for i = 0),
 * and rounds up to i + 1 when (i + 1) - S <= 2^(j-24), half the spacing there (a tie goes to
 * i + 1, whose last mantissa bit is 0), i.e. when 2^(n-1) - frac <= 2^(n + j - 24). */
static int32_t qmx__mx_floor_half_up(uint32_t mag, int k) {
    uint32_t sig = mag & 0x7FFFFFu;
    uint64_t frac, half;
    int32_t i;
    int sh = (int)(mag >> 23), n, j;
    if (sh) { sig |= 0x800000u; sh -= 150; } else sh = -149;   /* |a| = sig 2^sh */
    sh += k;
    if (sh >= 0) return (int32_t)(sig << sh);               /* an integer: w + 0.5 is exact */
    n = -sh;
    if (n > 48) return 0;                                   /* w < 2^-24: the sum is < 1 */
    i = (int32_t)((uint64_t)sig >> n);
    frac = (uint64_t)sig & (((uint64_t)1 << n) - 1);
    half = (uint64_t)1 << (n - 1);
    if (frac >= half) return i + 1;
    j = i ? qmx__mx_ilog2((uint32_t)i) : -1;
    if (n + j - 24 < 0) return i;
    return half - frac <= (uint64_t)1 << (n + j - 24) ? i + 1 : i;
}
/* microxcaling's shared scale: u = floor(log2f(amax, 2^-126 for 0)) - emax; NaN / Inf amax or
 * u > 127 -> 0xFF; u < -127 -> -127; code u + 127 */
static uint8_t qmx__mxc_code(const qmx__mxf *m, float amax) {
    uint32_t b = qmx__f32_bits(amax);
    int u;
    if (b >= 0x7F800000u) return 0xFF;
    u = qmx__mx_floor_log2(b ? b : 0x00800000u) - m->emax;
    if (u > 127) return 0xFF;
    return (uint8_t)((u < -127 ? -127 : u) + 127);
}
/* microxcaling's element (_quantize_elemwise_core, round 'nearest' = its floor(|q| + 0.5)):
 * A = f32(x / 2^u); p = max(floor(log2f |A|), 2 - 2^(ebits-1)); q = |A| 2^(mb - p) (exact);
 * r = floor(f32(q + 0.5)); v = min(r 2^(p - mb), max) with A's sign (A = -0 gives +0, a
 * negative A rounded to 0 gives -0); MXINT8: r = floor(f32(|A| 64 + 0.5)) <= 127, v = r / 64. */
static uint8_t qmx__mxc_elem(const qmx__mxf *m, float x, int u) {
    float a = u >= 0 ? x / qmx__bits_f32((uint32_t)(u + 127) << 23)
                     : x * qmx__bits_f32((uint32_t)(127 - u) << 23);
    uint32_t mag = qmx__f32_bits(a) & 0x7FFFFFFFu;
    int neg = (qmx__f32_bits(a) >> 31) != 0 && mag != 0, p;
    int32_t r;
    float v;
    if (m->elem == QMX_INT8) {
        r = mag ? qmx__mx_floor_half_up(mag, 6) : 0;
        if (r > 127) r = 127;
        return (uint8_t)((uint32_t)(neg ? -r : r) & 0xFFu);
    }
    if (!mag) return 0;
    p = qmx__mx_floor_log2(mag);
    if (m->elem == QMX_FP8_E4M3FN && p < -6) p = -6;
    else if (m->elem == QMX_FP8_E5M2 && p < -14) p = -14;
    else if (m->elem == QMX_FP6_E3M2 && p < -2) p = -2;
    else if ((m->elem == QMX_FP6_E2M3 || m->elem == QMX_FP4_E2M1) && p < 0) p = 0;
    r = qmx__mx_floor_half_up(mag, m->mbits - p);
    v = (float)r * qmx__bits_f32((uint32_t)(p - m->mbits + 127) << 23);   /* exact */
    if (v > m->maxv) v = m->maxv;
    return qmx__mx_encode(m, neg ? -v : v, 0);             /* v is a value of the format */
}

/* ggml (quantize_row_mxfp4_ref / _nvfp4_ref): kvalues_fp4 = 2 x e2m1, so d is half the scale */
static const int8_t qmx__ggml_kv[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
/* (uint8_t)(floorf(log2f(amax)) - 2 + 127), amax > 0 (0 -> 0), the cast as x86-64 gcc compiles
 * it (cvttss2si to int32, low byte): a negative value wraps, +Inf (int32 0x80000000) gives 0 */
static uint8_t qmx__ggml_e8m0(float amax) {
    uint32_t b = qmx__f32_bits(amax);
    if (b == 0 || b >= 0x7F800000u) return 0;
    return (uint8_t)((uint32_t)(qmx__mx_floor_log2(b) + 125) & 0xFFu);
}
/* ggml_e8m0_to_fp32_half: 2^(c - 128) */
static float qmx__ggml_e8m0_half(uint8_t c) {
    return qmx__bits_f32(c < 2 ? 0x00200000u << c : (uint32_t)(c - 1) << 23);
}
/* ggml_fp32_to_ue4m3: !(b > 0) -> 0, b > 448 -> 448; unbiased e = exp + 7; e <= 0: man =
 * (int)f32(f32(b 512) + 0.5) clamped to 0 .. 7; e >= 15 -> 0x7E; else 3 mantissa bits rounded
 * half up (bit 19), a carry into e, e >= 15 -> 0x7E */
static uint8_t qmx__ggml_ue4m3(float b) {
    uint32_t u = qmx__f32_bits(b), m;
    int e;
    if (!(b > 0.0f)) return 0;
    if (b > 448.0f) u = 0x43E00000u;                        /* 448 */
    e = (int)(u >> 23) - 120;
    if (e <= 0) {
        int32_t man = qmx__mx_floor_half_up(u, 9);
        return (uint8_t)(man > 7 ? 7 : man < 1 ? 0 : man);
    }
    if (e >= 15) return 0x7E;
    m = ((u >> 20) & 7u) + ((u >> 19) & 1u);
    if (m > 7) { m = 0; if (++e >= 15) return 0x7E; }
    return (uint8_t)((uint32_t)e << 3 | m);
}
/* f32(ggml_ue4m3_to_fp32(c) * 0.5): 0x00 and 0x7F -> 0; bit 7 is ignored (ggml's model) */
static float qmx__ggml_ue4m3_half(uint8_t c) {
    uint32_t e = (c >> 3) & 15u, m = c & 7u;
    if (c == 0 || c == 0x7F) return 0.0f;
    if (!e) return (float)m * 0.0009765625f;                /* m 2^-10 */
    return qmx__bits_f32((e + 119u) << 23 | m << 20);       /* (1 + m / 8) 2^(e - 8) */
}
/* best_index_mxfp4: the first i minimising f32|f32(K[i] d) - x| (strict <): ties go to the
 * smaller magnitude, NaN and +-Inf give 0. K[i] d is exact; the subtraction is one float32
 * operation, correctly rounded on every target (x87: 64-bit then 24-bit rounding of one
 * operation is innocuous) */
QMX__NOFMA
static uint8_t qmx__ggml_best(float x, float d) {
    QMX__PRAGMA_NOFMA
    float z = 0.0f * d, best, t, err;
    uint8_t code = 0;
    int i;
    QMX__OPAQUE(z);
    best = qmx__fabs(z - x);
    for (i = 1; i < 16; i++) {
        t = (float)qmx__ggml_kv[i] * d;
        QMX__OPAQUE(t);                 /* |f32(K d) - x|: the product rounded, as ggml */
        err = qmx__fabs(t - x);
        if (err < best) { best = err; code = (uint8_t)i; }
    }
    return code;
}

typedef struct qmx__mxv {
    qmx__mxf m;
    size_t outer, len, inner, block, nblocks, n_scales, elem_bytes;
    int nvfp4, fp4;
} qmx__mxv;
static qmx_status qmx__mx_resolve(const qmx_mx_config *c, size_t count, qmx__mxv *v) {
    size_t prod;
    if (!c) return QMX_ERR_NULL;
    if (count == 0) return QMX_ERR_SIZE;
    if ((unsigned)c->format > (unsigned)QMX_MXINT8 || (unsigned)c->rule > (unsigned)QMX_MX_GGML)
        return QMX_ERR_ARG;
    v->nvfp4 = c->format == QMX_NVFP4;
    v->fp4 = c->format == QMX_MXFP4 || v->nvfp4;
    qmx__mx_format(v->nvfp4 ? QMX_MXFP4 : c->format, &v->m);
    /* Qwix has mxfp8 (E4M3), mxfp4 and nvfp4; torchao's NVFP4 is the FLOOR entry; MXINT8 is
     * microxcaling's, which has no NVFP4; ggml has MXFP4 in blocks of 32 and NVFP4 */
    if (c->rule == QMX_MX_QWIX && c->format != QMX_MXFP8_E4M3 && !v->fp4) return QMX_ERR_UNSUPPORTED;
    if (v->nvfp4 && c->rule != QMX_MX_FLOOR && c->rule != QMX_MX_QWIX && c->rule != QMX_MX_GGML)
        return QMX_ERR_UNSUPPORTED;
    if (c->format == QMX_MXINT8 && c->rule != QMX_MX_MICROXCALING) return QMX_ERR_UNSUPPORTED;
    if (c->rule == QMX_MX_GGML &&
        (!v->fp4 || (c->block_size != 0 && c->block_size != (v->nvfp4 ? 16u : 32u))))
        return QMX_ERR_UNSUPPORTED;
    if (c->tensor_scale != 0.0f) {
        if (!v->nvfp4 || c->rule != QMX_MX_FLOOR) return QMX_ERR_ARG;
        if (!qmx__isfinite(c->tensor_scale) || !(c->tensor_scale > 0.0f)) return QMX_ERR_ARG;
    }
    if (c->outer == 0 && c->axis_len == 0 && c->inner == 0) {
        v->outer = 1; v->len = count; v->inner = 1;
    } else {
        v->outer = c->outer; v->len = c->axis_len; v->inner = c->inner;
        if (!v->outer || !v->len || !v->inner) return QMX_ERR_SIZE;
        if (!qmx__mul_ok(v->outer, v->len, &prod) || !qmx__mul_ok(prod, v->inner, &prod))
            return QMX_ERR_OVERFLOW;
        if (prod != count) return QMX_ERR_SHAPE;
    }
    v->block = c->block_size ? c->block_size : (v->nvfp4 ? 16 : 32);
    if (v->block > v->len) v->block = v->len;
    v->nblocks = v->len / v->block + (v->len % v->block != 0);
    if (!qmx__mul_ok(v->outer, v->nblocks, &prod) || !qmx__mul_ok(prod, v->inner, &prod))
        return QMX_ERR_OVERFLOW;
    v->n_scales = prod;
    v->elem_bytes = v->fp4 ? count / 2 + (count & 1) : count;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_mx_storage(const qmx_mx_config *c, size_t count, size_t *element_bytes,
                                   size_t *n_scales) {
    qmx__mxv v;
    qmx_status st;
    if (!element_bytes || !n_scales) return QMX_ERR_NULL;
    st = qmx__mx_resolve(c, count, &v);
    if (st != QMX_OK) return st;
    *element_bytes = v.elem_bytes; *n_scales = v.n_scales;
    return QMX_OK;
}

/* One block's scale: its code, and the multiplier (or divisor) its elements are scaled by. */
typedef struct qmx__mxs { uint8_t code; float mul; int div; float tmul; } qmx__mxs;
static void qmx__mx_block_scale(const qmx_mx_config *c, const qmx__mxv *v, float amax,
                                qmx__mxs *s) {
    s->div = 0; s->tmul = 1.0f;
    if (c->rule == QMX_MX_QWIX) {
        /* s = amax / Q; tiny -> 1; s * C; bf16 RNE, mantissa cleared (NaN -> +Inf) */
        float q = v->fp4 ? 6.0f : 448.0f, sc = amax / q, k;
        uint32_t b;
        if (sc < 1.0842021724855044e-19f) sc = 1.0f;        /* 2^-63 */
        if (v->nvfp4) {                                     /* an E4M3 scale, no power of two */
            s->code = qmx_fp8_from_f32(sc, QMX_FP8_E4M3FN, 1);
            s->mul = qmx_fp8_to_f32(s->code, QMX_FP8_E4M3FN);
            s->div = 1;
            return;
        }
        k = v->fp4 ? 1.71428573131561279296875f : 1.93548381328582763671875f;   /* f32(12/7), f32(60/31) */
        sc = sc * k;
        b = qmx__f32_bits(sc);
        if ((b & 0x7FFFFFFFu) > 0x7F800000u) b = 0x7F800000u;
        else b = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
        b &= 0x7F800000u;
        s->code = (uint8_t)(b >> 23);
        s->mul = qmx__bits_f32(b);
        s->div = 1;
        return;
    }
    if (v->nvfp4) {                                         /* torchao nvfp4_quantize */
        float b6 = amax / 6.0f, t;
        if (c->tensor_scale != 0.0f) b6 = b6 / c->tensor_scale;
        t = b6;
        if (t < 0.015625f) t = 0.015625f;                   /* clamp(, 2^-6, 448); NaN stays */
        if (t > 448.0f) t = 448.0f;
        s->code = qmx_fp8_from_f32(t, QMX_FP8_E4M3FN, 1);
        t = qmx_fp8_to_f32(s->code, QMX_FP8_E4M3FN);
        if (c->tensor_scale != 0.0f) {
            float ip = 1.0f / c->tensor_scale;
            s->mul = ip / t;
        } else {
            s->mul = 1.0f / t;
        }
        return;
    }
    s->code = qmx__mx_torchao_code(&v->m, (qmx_mx_rule)c->rule, amax);
    /* elements are x * 2^(127 - c) */
    s->mul = s->code == 0xFF ? qmx__bits_f32(0x7FC00000u) : qmx__e8m0_pow2((uint8_t)(254 - s->code));
}

/* The scaled element t of x as the rule's origin computes it on x86, NaN signs included (so
 * every target gives the same codes): torchao multiplies (x * NaN keeps x's NaN, else the
 * scale's +NaN); Qwix divides (x / NaN likewise; Inf / Inf and 0 / 0 give x86's default NaN,
 * which has the sign bit set). */
static float qmx__mx_scaled(const qmx_mx_config *c, const qmx__mxv *v, const qmx__mxs *s, float x) {
    float t = s->div ? x / s->mul : x * s->mul;
    if (t != t) {
        if (x != x) t = x;
        else if (s->mul != s->mul || !s->div) t = qmx__bits_f32(0x7FC00000u);
        else t = qmx__bits_f32(0xFFC00000u);
    }
    if (v->fp4 || c->rule == QMX_MX_QWIX) {              /* clamp(t, -max, max); NaN passes */
        if (t > v->m.maxv) t = v->m.maxv;
        if (t < -v->m.maxv) t = -v->m.maxv;
    }
    return t;
}

static void qmx__mx_put(const qmx__mxv *v, uint8_t *el, size_t e, uint8_t code) {
    if (v->fp4) qmx__set_nibble(el, e, code);
    else el[e] = code;
}
static uint8_t qmx__mx_get(const qmx__mxv *v, const uint8_t *el, size_t e) {
    return v->fp4 ? (uint8_t)qmx__get_nibble(el, e, 0) : el[e];
}

/* ---- one walk for quantize and dequantize, the per-call constants, the scalar blocks ---- */
/* The walk visits the blocks in the order of their scales: scales[si] for si = 0, 1, ...,
 * block (o, b, i) = si in [outer][nblocks][inner] order; its n elements are e0 + j * inner. */
typedef struct qmx__mxblk { size_t o, b, i, si, e0, n; } qmx__mxblk;
static void qmx__mx_place(const qmx__mxv *v, qmx__mxblk *k) {
    size_t k0 = k->b * v->block;
    k->n = v->len - k0 < v->block ? v->len - k0 : v->block;
    k->e0 = (k->o * v->len + k0) * v->inner + k->i;
}
static void qmx__mx_seek(const qmx__mxv *v, size_t si, qmx__mxblk *k) {
    size_t ob = si / v->inner;
    k->si = si; k->i = si % v->inner; k->o = ob / v->nblocks; k->b = ob % v->nblocks;
    qmx__mx_place(v, k);
}
/* the next block (0 past the last one) */
static int qmx__mx_next(const qmx__mxv *v, qmx__mxblk *k) {
    if (++k->si >= v->n_scales) return 0;
    if (++k->i == v->inner) {
        k->i = 0;
        if (++k->b == v->nblocks) { k->b = 0; k->o++; }
    }
    qmx__mx_place(v, k);
    return 1;
}

/* Paths through qmx__mx_quant / qmx__mx_dequant. The public calls take QMX__MX_VEC; tests
 * compare every path with QMX__MX_REF on the same data, the bench times QMX__MX_SCALES.
 *   REF     every block by the per-element reference code (qmx__mx_qblock_ref, and the last
 *           loop of qmx__mx_dqblock)
 *   FAST    a block with a finite amax and a finite, nonzero multiplier (dequantize: a finite,
 *           nonzero scale) by the specialised scalar loops; any other block by the reference
 *   VEC     FAST, and blocks contiguous along the last axis by the vector kernels
 *   SCALES  (quantize, with FAST or VEC) amax and the scale codes only; elements untouched */
#define QMX__MX_REF 0
#define QMX__MX_FAST 1
#define QMX__MX_VEC 3
#define QMX__MX_SCALES 4

/* Element codecs of the fast paths */
#define QMX__MXE_FP4 0
#define QMX__MXE_FP6 1
#define QMX__MXE_FP8 2
#define QMX__MXE_INT8 3

/* What a call resolves once. fast: the rule's scale is one qmx__mx_fast_scale computes (all but
 * microxcaling and ggml); maxb: the bits of the largest element value. */
typedef struct qmx__mxq {
    const qmx_mx_config *c;
    qmx__mxv v;
    int kind, fast;
    uint32_t maxb;
    qmx__fp8fmt f8;
    qmx__lowfp lf;
} qmx__mxq;
static void qmx__mxq_init(const qmx_mx_config *c, const qmx__mxv *v, qmx__mxq *q) {
    q->c = c; q->v = *v;
    q->kind = v->fp4 ? QMX__MXE_FP4 : qmx_dtype_is_fp8(v->m.elem) ? QMX__MXE_FP8
              : v->m.elem == QMX_INT8 ? QMX__MXE_INT8 : QMX__MXE_FP6;
    q->fast = c->rule != QMX_MX_MICROXCALING && c->rule != QMX_MX_GGML;
    q->maxb = qmx__f32_bits(v->m.maxv);
    if (!qmx__fp8_format(v->m.elem, &q->f8)) qmx__fp8_format(QMX_FP8_E4M3FN, &q->f8);
    if (!qmx__lowfp_format(v->m.elem, &q->lf)) qmx__lowfp_format(QMX_FP4_E2M1, &q->lf);
}

/* The scale of a block whose amax (bits m) is finite, by qmx__mx_block_scale, in the form of
 * the fast paths: elements x * mul, or x / mul (div: NVFP4 Qwix, an E4M3 scale). Qwix's MX
 * scales are powers of two, for which x / s equals x * (1 / s) exactly (the same real number,
 * rounded once), so they become a multiplier. 0: the block takes the reference path, because its
 * multiplier is NaN, 0 or Inf (the 0xFF code, a zero NVFP4 scale, an infinite 1 / P), with
 * which x * mul could be NaN; else no scaled element of the block is NaN. */
static int qmx__mx_fast_scale(const qmx__mxq *q, uint32_t m, qmx__mxs *s) {
    qmx__mx_block_scale(q->c, &q->v, qmx__bits_f32(m), s);
    if (s->div && !q->v.nvfp4) {
        if (s->code == 0 || s->code == 0xFF) return 0;
        s->mul = qmx__e8m0_pow2((uint8_t)(254 - s->code));
        s->div = 0;
    }
    return qmx__f32_bits(s->mul) - 1u < 0x7F7FFFFFu;
}

/* The reference: amax with a NaN flag, the rule's scale, and each element through
 * qmx__mx_scaled and qmx__mx_encode (or microxcaling's / ggml's element code). */
static void qmx__mx_qblock_ref(const qmx__mxq *q, const float *x, size_t stride, size_t n,
                               uint8_t *el, size_t e0, uint8_t *sc, int mode) {
    const qmx_mx_config *c = q->c;
    const qmx__mxv *v = &q->v;
    float amax = 0.0f;
    int nan = 0;
    size_t k;
    qmx__mxs s;
    for (k = 0; k < n; k++) {                               /* max |x|, NaN if any is NaN */
        float a = qmx__fabs(x[k * stride]);
        if (a != a) nan = 1;
        else if (a > amax) amax = a;
    }
    if (c->rule == QMX_MX_MICROXCALING || c->rule == QMX_MX_GGML) {
        /* microxcaling: amax NaN if any is NaN; ggml: a NaN never enters amax */
        uint8_t code;
        float d = 0.0f;
        if (c->rule == QMX_MX_GGML) {
            float b6 = amax / 6.0f;
            code = v->nvfp4 ? qmx__ggml_ue4m3(b6) : qmx__ggml_e8m0(amax);
            d = v->nvfp4 ? qmx__ggml_ue4m3_half(code) : qmx__ggml_e8m0_half(code);
        } else {
            code = qmx__mxc_code(&v->m, nan ? qmx__bits_f32(0x7FC00000u) : amax);
        }
        *sc = code;
        if (mode & QMX__MX_SCALES) return;
        for (k = 0; k < n; k++) {                           /* a 0xFF microxcaling block: codes 0 */
            float xe = x[k * stride];
            uint8_t e = c->rule == QMX_MX_GGML ? qmx__ggml_best(xe, d)
                        : code == 0xFF ? 0 : qmx__mxc_elem(&v->m, xe, (int)code - 127);
            qmx__mx_put(v, el, e0 + k * stride, e);
        }
        return;
    }
    if (nan) amax = qmx__bits_f32(0x7FC00000u);
    qmx__mx_block_scale(c, v, amax, &s);
    *sc = s.code;
    if (mode & QMX__MX_SCALES) return;
    for (k = 0; k < n; k++) {
        float t = qmx__mx_scaled(c, v, &s, x[k * stride]);
        qmx__mx_put(v, el, e0 + k * stride, qmx__mx_encode(&v->m, t, c->rule == QMX_MX_QWIX));
    }
}

/* A fast block's elements: t = x * mul (or x / mul) is finite or +-Inf, never NaN; |t| clipped
 * to the largest element (the fp4 / Qwix clip and the saturating casts agree on it), encoded
 * nearest-even, the sign of t added. One loop per element format and operation, so that the
 * per-element work has no branch on them (fp4: the branch-free qmx__fp4_rne_mag). */
QMX__MXV uint8_t qmx__mx_fast_fp4(float t) {   /* (the step table saturates by itself) */
    uint32_t tb = qmx__f32_bits(t);
    return (uint8_t)(((tb >> 28) & 8u) | qmx__fp4_rne_mag(tb & 0x7FFFFFFFu));
}
/* fp8 / fp6: a magnitude a <= max of a format of mbits and bias, nearest-even: a normal element
 * rounds the f32 significand at bit 23 - mbits (qmx__fp8_encode's arithmetic); below, a counts
 * quanta 2^(emin - mbits): a * 2^(mbits - emin) is exact and below 2^mbits, rounded by
 * qmx__round_rne (qmx__fp8_encode's shift-and-round of the significand gives that integer). */
QMX__MXV uint8_t qmx__mx_fast_lowfp(float t, uint32_t maxb, int mbits, int bias, int sbit) {
    uint32_t tb = qmx__f32_bits(t), a = tb & 0x7FFFFFFFu, drop = (uint32_t)(23 - mbits), c;
    if (a > maxb) a = maxb;
    if (a >= (uint32_t)(128 - bias) << 23)
        c = ((a + (1u << (drop - 1)) - 1u + ((a >> drop) & 1u)) >> drop) - ((uint32_t)(127 - bias) << mbits);
    else
        c = (uint32_t)qmx__round_rne(qmx__bits_f32(a) * qmx__bits_f32((uint32_t)(126 + bias + mbits) << 23));
    return (uint8_t)(((tb >> 31) << sbit) | c);
}
static void qmx__mx_fast_elems(const qmx__mxq *q, const qmx__mxs *s, const float *x,
                               size_t stride, size_t n, uint8_t *el, size_t e0) {
    const float mul = s->mul;
    size_t k = 0;
    if (q->kind != QMX__MXE_FP4) {
        int fp8 = q->kind == QMX__MXE_FP8, mb = fp8 ? q->f8.mbits : q->lf.mbits;
        int bias = fp8 ? q->f8.bias : q->lf.bias, sbit = fp8 ? 7 : 5;
        QMX_ASSERT(!s->div);      /* Qwix divides for NVFP4 only */
        for (; k < n; k++)
            el[e0 + k * stride] = qmx__mx_fast_lowfp(x[k * stride] * mul, q->maxb, mb, bias, sbit);
        return;
    }
    if (stride == 1 && !(e0 & 1)) {                         /* whole bytes */
        uint8_t *o = el + e0 / 2;
        if (s->div)
            for (; k + 1 < n; k += 2)
                o[k / 2] = (uint8_t)(qmx__mx_fast_fp4(x[k] / mul) | qmx__mx_fast_fp4(x[k + 1] / mul) << 4);
        else
            for (; k + 1 < n; k += 2)
                o[k / 2] = (uint8_t)(qmx__mx_fast_fp4(x[k] * mul) | qmx__mx_fast_fp4(x[k + 1] * mul) << 4);
    }
    for (; k < n; k++) {
        float xe = x[k * stride];
        qmx__set_nibble(el, e0 + k * stride, qmx__mx_fast_fp4(s->div ? xe / mul : xe * mul));
    }
}
/* One block: the fast path when it applies, else the reference. */
static void qmx__mx_qblock(const qmx__mxq *q, const float *x, size_t stride, size_t n,
                           uint8_t *el, size_t e0, uint8_t *sc, int mode) {
    uint32_t m = 0;
    size_t k;
    qmx__mxs s;
    if (!(mode & QMX__MX_FAST) || !q->fast || q->kind == QMX__MXE_INT8) {
        qmx__mx_qblock_ref(q, x, stride, n, el, e0, sc, mode);
        return;
    }
    for (k = 0; k < n; k++) {                               /* max |x| on the bits; NaN is above */
        uint32_t a = qmx__f32_bits(x[k * stride]) & 0x7FFFFFFFu;
        if (a > m) m = a;
    }
    if (m >= 0x7F800000u || !qmx__mx_fast_scale(q, m, &s)) {
        qmx__mx_qblock_ref(q, x, stride, n, el, e0, sc, mode);
        return;
    }
    *sc = s.code;
    if (!(mode & QMX__MX_SCALES)) qmx__mx_fast_elems(q, &s, x, stride, n, el, e0);
}

/* A block's scale as the rule's origin dequantizes with it */
static float qmx__mx_dq_scale(const qmx__mxq *q, uint8_t code) {
    const qmx_mx_config *c = q->c;
    float s;
    if (c->rule == QMX_MX_GGML)                             /* y = f32(K[code] * d) */
        return q->v.nvfp4 ? qmx__ggml_ue4m3_half(code) : qmx__ggml_e8m0_half(code);
    if (q->v.nvfp4) {
        s = qmx_fp8_to_f32(code, QMX_FP8_E4M3FN);
        if (c->tensor_scale != 0.0f && s == s) s = c->tensor_scale * s;
        return s;
    }
    if (c->rule == QMX_MX_QWIX) return qmx__bits_f32((uint32_t)code << 23);   /* 0xFF = Inf */
    return qmx__e8m0_pow2(code);
}
/* One block of dequantize. Reference: a NaN element keeps its own bits, a NaN product is +NaN:
 * the same on every target (RISC-V arithmetic would return the canonical NaN). Fast (a finite,
 * nonzero scale): y = d * s is NaN only when the element d is (fp8), whose bits it keeps. */
static void qmx__mx_dqblock(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t stride,
                            size_t n, uint8_t code, float *y, int mode) {
    float s = qmx__mx_dq_scale(q, code);
    size_t k;
    if (q->c->rule == QMX_MX_GGML) {
        for (k = 0; k < n; k++)
            y[k * stride] = (float)qmx__ggml_kv[qmx__mx_get(&q->v, el, e0 + k * stride)] * s;
        return;
    }
    if ((mode & QMX__MX_FAST) && (qmx__f32_bits(s) & 0x7FFFFFFFu) - 1u < 0x7F7FFFFFu) {
        /* the decoders of qmx__mx_decode, the format resolved once per block */
        if (q->kind == QMX__MXE_FP4) {
            for (k = 0; k < n; k++) {
                size_t e = e0 + k * stride;
                y[k * stride] = qmx__bits_f32(qmx__fp4_bits[(el[e / 2] >> ((e & 1) * 4)) & 0xFu]) * s;
            }
        } else if (q->kind == QMX__MXE_FP8) {
            for (k = 0; k < n; k++) {       /* NaN only for a NaN element: it keeps its bits
                                               (r opaque: clang -O2 folds d != d ? d : d * s
                                               into d * s, RISC-V's canonical NaN) */
                float d = qmx__bits_f32(qmx__fp8_decode_bits(el[e0 + k * stride], &q->f8)), r = d * s;
                QMX__OPAQUE(r);
                y[k * stride] = d != d ? d : r;
            }
        } else if (q->kind == QMX__MXE_FP6) {
            for (k = 0; k < n; k++)
                y[k * stride] =
                    qmx__bits_f32(qmx__lowfp_decode_bits(el[e0 + k * stride] & 0x3Fu, &q->lf)) * s;
        } else {
            for (k = 0; k < n; k++) {
                uint8_t c = el[e0 + k * stride];
                y[k * stride] = (float)((int32_t)c - (c & 0x80 ? 256 : 0)) * 0.015625f * s;
            }
        }
        return;
    }
    for (k = 0; k < n; k++) {
        float d = qmx__mx_decode(&q->v.m, qmx__mx_get(&q->v, el, e0 + k * stride)), r;
        if (d != d) r = d;
        else { r = d * s; if (r != r) r = qmx__bits_f32(0x7FC00000u); }
        y[k * stride] = r;
    }
}

/* Vector kernels (below, per instruction set): the number of blocks from walk position k that
 * one kernel call may take (0: none), and the calls; each returns the blocks it did. */
static size_t qmx__mx_vec_run(const qmx__mxq *q, const qmx__mxblk *k, int dq);
static size_t qmx__mx_quant_vec(const qmx__mxq *q, const float *x, size_t nblk, uint8_t *el,
                                size_t e0, uint8_t *sc, int mode);
static size_t qmx__mx_dequant_vec(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                  const uint8_t *sc, float *y);

/* ---- vector kernels ----
 * They take runs of whole blocks along the last axis (inner == 1; fp4 runs start on a byte) of
 * 16 * 2^k elements (AVX-512; AVX2 8 * 2^k, NEON 4 * 2^k), k <= 6, in groups of 16 (8, 4) blocks:
 *  1. amax of each block on the bits (|x| as an integer: the order of the non-negative floats,
 *     NaN above +Inf) and a transposed reduction that leaves block j's amax in lane j;
 *  2. the scale codes and multipliers of all the group's blocks at once, lane by lane the
 *     scalar formulas (qmx__mx_block_scale: the same IEEE operations, the same integer code
 *     arithmetic), and a mask of the blocks the fast path cannot take: a NaN or Inf amax, or a
 *     multiplier (divisor) that is NaN, 0 or Inf, as in qmx__mx_fast_scale;
 *  3. every element t = x * mul (x / s for NVFP4 Qwix), |t| clipped to the largest element and
 *     encoded nearest-even with an explicitly rounded operation (never the MXCSR / FPCR mode);
 *  4. the masked blocks again through qmx__mx_qblock (which hands them to the reference), which
 *     rewrites their scale and elements.
 * No scaled element of a block that stays is NaN, so the result is the scalar path's bit for
 * bit. Dequantize: the group's scales lane by lane as qmx__mx_dq_scale; elements decoded exactly
 * and multiplied; blocks whose scale is NaN, 0 or Inf go to qmx__mx_dqblock. */
#define QMX__MXS_E8M0 0      /* FLOOR, CEIL, EVEN, RCEIL on an MX format */
#define QMX__MXS_QWIX 1      /* Qwix MXFP4 / MXFP8: a power of two from a bfloat16 */
#define QMX__MXS_NV 2        /* NVFP4 torchao (with or without tensor_scale) */
#define QMX__MXS_NVQ 3       /* NVFP4 Qwix: an E4M3 divisor */
#if defined(QMX__AVX512) || defined(QMX__AVX2) || defined(QMX__NEON64)
#if defined(QMX__AVX512)
#  define QMX__MXL 16        /* elements per vector */
#elif defined(QMX__AVX2)
#  define QMX__MXL 8
#else
#  define QMX__MXL 4
#endif
/* A compiler barrier after each block of a group's first pass, so that its loads stay in address
 * order: GCC otherwise interleaves the unrolled blocks' vectors (all even vectors of the group,
 * then the odd ones), which at DRAM sizes defeats the hardware prefetchers (measured on Zen 4:
 * the 64 MiB scale pass of blocks of 32 at 0.8x the read stream instead of 1.1x). It orders the
 * loads, never changes a value. */
#if defined(__GNUC__) || defined(__clang__)
#  define QMX__MX_ORDER() __asm__ __volatile__("" ::: "memory")
#else
#  define QMX__MX_ORDER() ((void)0)
#endif
static int qmx__mx_srule(const qmx__mxq *q) {
    if (q->c->rule == QMX_MX_QWIX) return q->v.nvfp4 ? QMX__MXS_NVQ : QMX__MXS_QWIX;
    return q->v.nvfp4 ? QMX__MXS_NV : QMX__MXS_E8M0;
}
/* log2 of the vectors per block, or -1 when the block is not QMX__MXL * 2^k, k <= 6 */
static int qmx__mx_vec_lg(size_t block) {
    int lg;
    for (lg = 0; lg <= 6; lg++)
        if (block == (size_t)QMX__MXL << lg) return lg;
    return -1;
}
static size_t qmx__mx_vec_run(const qmx__mxq *q, const qmx__mxblk *k, int dq) {
    const qmx__mxv *v = &q->v;
    size_t nfull;
    if (v->inner != 1 || qmx__mx_vec_lg(v->block) < 0 || (v->fp4 && (k->e0 & 1))) return 0;
    if (q->kind != QMX__MXE_FP4 && q->kind != QMX__MXE_FP8) return 0;
    if (!dq && !q->fast) return 0;                          /* microxcaling, ggml quantize */
    if (v->len % v->block == 0) return v->n_scales - k->si; /* the rest of the tensor */
    nfull = v->len / v->block;                              /* the row's whole blocks */
    return k->b < nfull ? nfull - k->b : 0;
}
#endif

#if defined(QMX__AVX512)
/* ---- AVX-512: groups of 16 blocks, a block's amax in lane j ---- */
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* Element encoder (the fp8 encoder of the SIMD section, for fp4 too): a = min(|t|, max),
 * E = max(exponent(a), emin) and M = 2^E (1 + ((E - emin) << mbits) 2^-23) from a 32-entry
 * table by biased E mod 32; the {rn-sae} FMA a 2^-(23 - mbits) + M (one rounding, the product
 * exact) stays in M's binade, whose ulp is the element quantum at a times 2^-(23 - mbits), so
 * its bits are bits(M) + k, k the quanta of a nearest-even (M's mantissa is even), and its low
 * byte is the element code without the sign: k + ((E - emin) << mbits) <= 0x7E. */
typedef struct qmx__mx512 {
    __m512i tlo, thi, thr, absm, maxb;
    __m512 sdrop;
    int srule, rule, lg, emax, mbits, hasts;
    float inv, num, ts, qd, qk;
} qmx__mx512;

static void qmx__mx512_init(const qmx__mxq *q, qmx__mx512 *k) {
    int32_t tab[32];
    int i, mbits = q->v.m.mbits, eminb = 128 - (q->kind == QMX__MXE_FP8 ? q->f8.bias : q->lf.bias);
    for (i = 0; i < 32; i++) {
        int eb = eminb + ((i - eminb) & 31);
        tab[i] = (int32_t)(((uint32_t)eb << 23) | ((uint32_t)(eb - eminb) << mbits));
    }
    k->tlo = _mm512_loadu_si512((const void *)tab);
    k->thi = _mm512_loadu_si512((const void *)(tab + 16));
    k->thr = _mm512_set1_epi32(eminb << 23);
    k->absm = _mm512_set1_epi32(0x7FFFFFFF);
    k->maxb = _mm512_set1_epi32((int32_t)q->maxb);
    k->sdrop = _mm512_set1_ps(qmx__bits_f32((uint32_t)(104 + mbits) << 23));   /* 2^(mbits - 23) */
    k->srule = qmx__mx_srule(q);
    k->rule = (int)q->c->rule;
    k->lg = qmx__mx_vec_lg(q->v.block);
    k->emax = q->v.m.emax;
    k->mbits = mbits;
    k->inv = 1.0f / q->v.m.maxv;                            /* RCEIL: as qmx__mx_torchao_code */
    k->hasts = q->c->tensor_scale != 0.0f;
    k->ts = q->c->tensor_scale;
    k->num = k->hasts ? 1.0f / q->c->tensor_scale : 1.0f;   /* NVFP4: as qmx__mx_block_scale */
    k->qd = q->v.fp4 ? 6.0f : 448.0f;                       /* Qwix */
    k->qk = q->v.fp4 ? 1.71428573131561279296875f : 1.93548381328582763671875f;
}

QMX__MXV __m512i qmx__mx512_enc(__m512 t, const qmx__mx512 *k) {
    __m512i a, eb;
#if defined(__AVX512DQ__)
    a = _mm512_castps_si512(_mm512_range_ps(t, _mm512_castsi512_ps(k->maxb), 0x0A));
#else
    a = _mm512_min_epu32(_mm512_and_si512(_mm512_castps_si512(t), k->absm), k->maxb);
#endif
    eb = _mm512_srli_epi32(_mm512_max_epi32(a, k->thr), 23);
    eb = _mm512_permutex2var_epi32(k->tlo, eb, k->thi);
    return _mm512_castps_si512(_mm512_fmadd_round_ps(_mm512_castsi512_ps(a), k->sdrop,
                                                     _mm512_castsi512_ps(eb),
                                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* r[s] (16 lanes each) -> lane L = the max of r[s] for s = 4 (L & 3) + (L >> 2): pairs of
 * halves, quarters, then within the 128-bit lanes (45 operations for 16 blocks) */
#define QMX__MX512_SHUFPS(a, b, imm) \
    _mm512_castps_si512(_mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), imm))
QMX__MXV __m512i qmx__mx512_hmax(__m512i *r) {
    int p;
    for (p = 0; p < 8; p++)
        r[p] = _mm512_max_epu32(_mm512_shuffle_i64x2(r[2 * p], r[2 * p + 1], 0x44),
                                _mm512_shuffle_i64x2(r[2 * p], r[2 * p + 1], 0xEE));
    for (p = 0; p < 4; p++)
        r[p] = _mm512_max_epu32(_mm512_shuffle_i64x2(r[2 * p], r[2 * p + 1], 0x88),
                                _mm512_shuffle_i64x2(r[2 * p], r[2 * p + 1], 0xDD));
    for (p = 0; p < 2; p++)
        r[p] = _mm512_max_epu32(QMX__MX512_SHUFPS(r[2 * p], r[2 * p + 1], 0x44),
                                QMX__MX512_SHUFPS(r[2 * p], r[2 * p + 1], 0xEE));
    return _mm512_max_epu32(QMX__MX512_SHUFPS(r[0], r[1], 0x88), QMX__MX512_SHUFPS(r[0], r[1], 0xDD));
}

/* The scale codes and multipliers (NVQ: divisors) of 16 blocks from their amax bits m, lane by
 * lane qmx__mx_block_scale + qmx__mx_fast_scale; *bad: the lanes the fast path cannot take. */
QMX__MXV __m512 qmx__mx512_scales(const qmx__mx512 *k, __m512i m, __m512i *code, __mmask16 *bad) {
    const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
    __mmask16 b = _mm512_cmpge_epu32_mask(m, _mm512_set1_epi32(0x7F800000));
    __m512 mf = _mm512_castsi512_ps(m), mul;
    __m512i c, e;
    if (k->srule == QMX__MXS_E8M0 || k->srule == QMX__MXS_QWIX) {
        if (k->srule == QMX__MXS_QWIX) {        /* s = amax / Q (tiny -> 1) * K, bf16, 2^e */
            __m512 sc = _mm512_div_ps(mf, _mm512_set1_ps(k->qd));
            sc = _mm512_mask_mov_ps(sc, _mm512_cmp_ps_mask(sc, _mm512_set1_ps(1.0842021724855044e-19f), _CMP_LT_OQ),
                                    _mm512_set1_ps(1.0f));
            e = _mm512_castps_si512(_mm512_mul_ps(sc, _mm512_set1_ps(k->qk)));
            e = _mm512_add_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(0x7FFF)),
                                 _mm512_and_si512(_mm512_srli_epi32(e, 16), one));
            c = _mm512_srli_epi32(_mm512_and_si512(e, _mm512_set1_epi32(0x7F800000)), 23);
            b |= _mm512_cmpeq_epi32_mask(c, zero) | _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(255));
        } else if (k->rule == QMX_MX_RCEIL) {    /* the E8M0 of f32(amax * f32(1 / max)), up */
            __m512i db = _mm512_castps_si512(_mm512_mul_ps(mf, _mm512_set1_ps(k->inv)));
            __m512i man = _mm512_and_si512(db, _mm512_set1_epi32(0x7FFFFF));
            e = _mm512_srli_epi32(db, 23);
            c = _mm512_add_epi32(e, _mm512_min_epu32(man, one));
            c = _mm512_mask_mov_epi32(c, _mm512_cmpeq_epi32_mask(e, zero),   /* d subnormal */
                                      _mm512_maskz_mov_epi32(
                                          _mm512_cmpgt_epu32_mask(man, _mm512_set1_epi32(0x400000)), one));
            b |= _mm512_cmpgt_epu32_mask(c, _mm512_set1_epi32(254));
        } else {                                 /* FLOOR, CEIL, EVEN: exp(amax) - emax */
            e = m;
            if (k->rule == QMX_MX_EVEN) {
                e = _mm512_and_si512(_mm512_add_epi32(m, _mm512_set1_epi32(1 << (22 - k->mbits))),
                                     _mm512_set1_epi32((int32_t)0xFF800000u));
                b |= _mm512_cmpge_epu32_mask(e, _mm512_set1_epi32(0x7F800000));
            }
            c = _mm512_sub_epi32(_mm512_srli_epi32(e, 23), _mm512_set1_epi32(k->emax));
            if (k->rule == QMX_MX_CEIL)
                c = _mm512_add_epi32(c, _mm512_min_epu32(_mm512_and_si512(e, _mm512_set1_epi32(0x7FFFFF)), one));
            c = _mm512_max_epi32(c, zero);
        }
        /* 2^(127 - c), 2^-127 for c = 254 */
        mul = _mm512_castsi512_ps(_mm512_max_epi32(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(254), c), 23),
                                                   _mm512_set1_epi32(0x00400000)));
    } else if (k->srule == QMX__MXS_NV) {        /* E4M3(clamp(amax / 6 [/ P], 2^-6, 448)) */
        __m512 t = _mm512_div_ps(mf, _mm512_set1_ps(6.0f));
        if (k->hasts) t = _mm512_div_ps(t, _mm512_set1_ps(k->ts));
        t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps(0.015625f)), _mm512_set1_ps(448.0f));
        e = _mm512_castps_si512(t);              /* normal E4M3, nearest-even: code + 960 */
        e = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(0x7FFFF)),
                                               _mm512_and_si512(_mm512_srli_epi32(e, 20), one)), 20);
        c = _mm512_sub_epi32(e, _mm512_set1_epi32(960));
        mul = _mm512_div_ps(_mm512_set1_ps(k->num), _mm512_castsi512_ps(_mm512_slli_epi32(e, 20)));
        b |= _mm512_cmpge_epu32_mask(_mm512_sub_epi32(_mm512_castps_si512(mul), one),
                                     _mm512_set1_epi32(0x7F7FFFFF));
    } else {                                     /* NVQ: E4M3(amax / 6, tiny -> 1), subnormals */
        __m512 sc = _mm512_div_ps(mf, _mm512_set1_ps(6.0f));
        __m512i cs;
        sc = _mm512_mask_mov_ps(sc, _mm512_cmp_ps_mask(sc, _mm512_set1_ps(1.0842021724855044e-19f), _CMP_LT_OQ),
                                _mm512_set1_ps(1.0f));
        e = _mm512_castps_si512(_mm512_min_ps(sc, _mm512_set1_ps(448.0f)));
        c = _mm512_sub_epi32(_mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(0x7FFFF)),
                                                                _mm512_and_si512(_mm512_srli_epi32(e, 20), one)), 20),
                             _mm512_set1_epi32(960));
        cs = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_castsi512_ps(e), _mm512_set1_ps(512.0f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        c = _mm512_mask_mov_epi32(c, _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(0x3C800000)), cs);
        mul = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(c, 20), _mm512_set1_epi32(120 << 23)));
        mul = _mm512_mask_mul_ps(mul, _mm512_cmplt_epu32_mask(c, _mm512_set1_epi32(8)),
                                 _mm512_cvtepi32_ps(c), _mm512_set1_ps(0.001953125f));
        b |= _mm512_cmpeq_epi32_mask(c, zero);
    }
    *code = c;
    *bad = b;
    return mul;
}

/* 4 scaled vectors t and their codes y -> the output bytes (32 fp4, 64 fp8) in v */
QMX__MXV __m512i qmx__mx512_pack(const __m512i *y, const __m512 *t, int fp8) {
#if defined(__AVX512VBMI__)
    /* byte 0 of y (the codes) and byte 3 of t (the signs) across the registers (vpermt2b) */
    const __m512i bidx = _mm512_set_epi32(0x7C787470, 0x6C686460, 0x5C585450, 0x4C484440, 0x3C383430,
        0x2C282420, 0x1C181410, 0x0C080400, 0x7C787470, 0x6C686460, 0x5C585450, 0x4C484440,
        0x3C383430, 0x2C282420, 0x1C181410, 0x0C080400);
    const __m512i sidx = _mm512_add_epi8(bidx, _mm512_set1_epi8(3));
    __m512i c = _mm512_mask_blend_epi64(0xF0, _mm512_permutex2var_epi8(y[0], bidx, y[1]),
                                        _mm512_permutex2var_epi8(y[2], bidx, y[3]));
    __m512i s = _mm512_mask_blend_epi64(
        0xF0, _mm512_permutex2var_epi8(_mm512_castps_si512(t[0]), sidx, _mm512_castps_si512(t[1])),
        _mm512_permutex2var_epi8(_mm512_castps_si512(t[2]), sidx, _mm512_castps_si512(t[3])));
    if (fp8) return _mm512_ternarylogic_epi32(c, s, _mm512_set1_epi8(0x7F), 0xF4);   /* c | s & 0x80 */
    /* fp4: c | (sign >> 4) per byte, then byte pairs lo + 16 hi (vpmaddubsw), the low bytes */
    c = _mm512_ternarylogic_epi32(c, _mm512_srli_epi16(s, 4), _mm512_set1_epi8(8), 0xF8);
    c = _mm512_maddubs_epi16(c, _mm512_set1_epi16(0x1001));
    return _mm512_permutexvar_epi8(_mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0x3E3C3A38, 0x36343230,
        0x2E2C2A28, 0x26242220, 0x1E1C1A18, 0x16141210, 0x0E0C0A08, 0x06040200), c);
#else
    __m512i r[4];
    int j;
    if (fp8) {
        for (j = 0; j < 4; j++)   /* code | sign (0..255), packed with exact unsigned saturation */
            r[j] = _mm512_ternarylogic_epi32(y[j], _mm512_srli_epi32(_mm512_castps_si512(t[j]), 24),
                                             _mm512_set1_epi32(0x7F), 0xE4);
        return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
                                        _mm512_packus_epi16(_mm512_packus_epi32(r[0], r[1]),
                                                            _mm512_packus_epi32(r[2], r[3])));
    }
    for (j = 0; j < 4; j++) {   /* nibble = code | sign << 3; a qword's two nibbles in byte 0 */
        r[j] = _mm512_ternarylogic_epi32(y[j], _mm512_srli_epi32(_mm512_castps_si512(t[j]), 28),
                                         _mm512_set1_epi32(7), 0xE4);
        r[j] = _mm512_or_si512(r[j], _mm512_srli_epi64(r[j], 28));
    }
    return _mm512_castsi256_si512(_mm256_setr_m128i(
        _mm_unpacklo_epi64(_mm512_cvtepi64_epi8(r[0]), _mm512_cvtepi64_epi8(r[1])),
        _mm_unpacklo_epi64(_mm512_cvtepi64_epi8(r[2]), _mm512_cvtepi64_epi8(r[3]))));
#endif
}

/* Vectors u .. u + cnt - 1 (cnt <= 4) of a group: scaled by their block's multiplier (ms[] by
 * vector >> lg), encoded, stored (8 bytes a vector for fp4, 16 for fp8) */
QMX__MXV void qmx__mx512_unit(const float *x, const float *ms, int u, int cnt, uint8_t *o, int lg,
                              const qmx__mx512 *k, int fp8, int div) {
    __m512 t[4];
    __m512i y[4], v;
    int r;
    for (r = 0; r < 4; r++) {
        if (r < cnt) {
            __m512 s = _mm512_set1_ps(ms[(u + r) >> lg]), xv = _mm512_loadu_ps(x + 16 * (u + r));
            t[r] = div ? _mm512_div_ps(xv, s) : _mm512_mul_ps(xv, s);
        } else {
            t[r] = _mm512_setzero_ps();
        }
        y[r] = qmx__mx512_enc(t[r], k);
    }
    v = qmx__mx512_pack(y, t, fp8);
    if (cnt == 4 && !fp8) _mm256_storeu_si256((__m256i *)(void *)(o + 8 * u), _mm512_castsi512_si256(v));
    else if (cnt == 4) _mm512_storeu_si512((void *)(o + 16 * u), v);
    else _mm512_mask_storeu_epi8(o + (fp8 ? 16 : 8) * u, ((__mmask64)1 << ((fp8 ? 16 : 8) * cnt)) - 1u, v);
}

/* One group of nb <= 16 blocks at x: scale codes to sc, elements to o; returns the blocks the
 * scalar path must redo */
/* The amax bits of nb <= 16 blocks of 16 << lg elements at x, block j in lane j: each block's
 * vectors max-ed lane-wise (|x| as an integer), then qmx__mx512_hmax across the blocks (block
 * s in slot s, in address order), and its lane order undone with one permute */
QMX__MXV __m512i qmx__mx512_amax(const float *x, int nb, int lg, __m512i absm) {
    __m512i r[16];
    int s, j;
    for (s = 0; s < 16; s++) {
        __m512i acc = _mm512_setzero_si512();
        if (nb == 16 || s < nb) {
            const float *p = x + ((size_t)s << (lg + 4));
            acc = _mm512_and_si512(_mm512_loadu_si512((const void *)p), absm);
            for (j = 1; j < (1 << lg); j++)   /* (not vrangeps: it drops a quiet NaN) */
                acc = _mm512_max_epu32(acc, _mm512_and_si512(_mm512_loadu_si512((const void *)(p + 16 * j)), absm));
        }
        r[s] = acc;
        QMX__MX_ORDER();
    }
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
                                    qmx__mx512_hmax(r));
}
QMX__MXV __mmask16 qmx__mx512_qgroup(const qmx__mx512 *k, const float *x, int nb, uint8_t *o,
                                     uint8_t *sc, int lg, int fp8, int div, int scales_only) {
    __m512i code;
    __m512 mul;
    float ms[16];
    __mmask16 bad, valid = (__mmask16)((1u << nb) - 1u);
    int nvec = nb << lg, u;
    mul = nb == 16 ? qmx__mx512_scales(k, qmx__mx512_amax(x, 16, lg, k->absm), &code, &bad)
                   : qmx__mx512_scales(k, qmx__mx512_amax(x, nb, lg, k->absm), &code, &bad);
    /* (a register vpmovdb and a byte-masked store: the memory form is microcoded on Zen 4) */
    _mm_mask_storeu_epi8(sc, valid, _mm512_cvtepi32_epi8(code));
    if (scales_only) return bad & valid;
    _mm512_storeu_ps(ms, mul);
    for (u = 0; u + 4 <= nvec; u += 4) qmx__mx512_unit(x, ms, u, 4, o, lg, k, fp8, div);
    if (u < nvec) qmx__mx512_unit(x, ms, u, nvec - u, o, lg, k, fp8, div);
    return bad & valid;
}

/* lgc: the block's log2 vectors as a constant (blocks of 16 and 32 elements), -1: k->lg */
QMX__MXV void qmx__mx512_qloop(const qmx__mxq *q, const qmx__mx512 *k, const float *x, size_t nblk,
                               uint8_t *el, size_t e0, uint8_t *sc, int mode, int lgc, int fp8,
                               int div, int scales_only) {
    /* a local copy: byte stores may alias *k, and the constants should stay in registers */
    qmx__mx512 kl = *k;
    size_t g, B = q->v.block, per = fp8 ? B : B / 2;
    int lg = lgc >= 0 ? lgc : k->lg, gmax = lg <= 2 ? 16 : 16 >> (lg - 2);   /* <= 4 KiB a group */
    uint8_t *o = el + (fp8 ? e0 : e0 / 2);
    for (g = 0; g < nblk; g += (size_t)gmax) {
        int nb = nblk - g < (size_t)gmax ? (int)(nblk - g) : gmax, b;
        unsigned bad;
        qmx__prefetch_ahead(x, g * B, (size_t)nb * B, nblk * B);
        bad = qmx__mx512_qgroup(&kl, x + g * B, nb, o + g * per, sc + g, lg, fp8, div, scales_only);
        for (b = 0; bad; b++, bad >>= 1)
            if (bad & 1u)
                qmx__mx_qblock(q, x + (g + (size_t)b) * B, 1, B, el, e0 + (g + (size_t)b) * B,
                               sc + g + (size_t)b, mode);
    }
}
/* the instances: element kind x divide x block of 16 / 32 / other, and the scale-only pass */
#define QMX__MX512_Q(name, lgc, fp8, div, so)                                                   \
    static void name(const qmx__mxq *q, const qmx__mx512 *k, const float *x, size_t nblk,    \
                     uint8_t *el, size_t e0, uint8_t *sc, int mode) {                         \
        qmx__mx512_qloop(q, k, x, nblk, el, e0, sc, mode, lgc, fp8, div, so);                \
    }
QMX__MX512_Q(qmx__mx512_q_fp4_16, 0, 0, 0, 0)
QMX__MX512_Q(qmx__mx512_q_fp4_32, 1, 0, 0, 0)
QMX__MX512_Q(qmx__mx512_q_fp4_n, -1, 0, 0, 0)
QMX__MX512_Q(qmx__mx512_q_fp4d_16, 0, 0, 1, 0)
QMX__MX512_Q(qmx__mx512_q_fp4d_n, -1, 0, 1, 0)
QMX__MX512_Q(qmx__mx512_q_fp8_16, 0, 1, 0, 0)
QMX__MX512_Q(qmx__mx512_q_fp8_32, 1, 1, 0, 0)
QMX__MX512_Q(qmx__mx512_q_fp8_n, -1, 1, 0, 0)
QMX__MX512_Q(qmx__mx512_q_sc_16, 0, 0, 0, 1)
QMX__MX512_Q(qmx__mx512_q_sc_32, 1, 0, 0, 1)
QMX__MX512_Q(qmx__mx512_q_sc_n, -1, 0, 0, 1)
static size_t qmx__mx_quant_vec(const qmx__mxq *q, const float *x, size_t nblk, uint8_t *el,
                                size_t e0, uint8_t *sc, int mode) {
    qmx__mx512 k;
    void (*f)(const qmx__mxq *, const qmx__mx512 *, const float *, size_t, uint8_t *, size_t,
              uint8_t *, int);
    qmx__mx512_init(q, &k);
    if (mode & QMX__MX_SCALES)
        f = k.lg == 0 ? qmx__mx512_q_sc_16 : k.lg == 1 ? qmx__mx512_q_sc_32 : qmx__mx512_q_sc_n;
    else if (q->kind == QMX__MXE_FP8)
        f = k.lg == 0 ? qmx__mx512_q_fp8_16 : k.lg == 1 ? qmx__mx512_q_fp8_32 : qmx__mx512_q_fp8_n;
    else if (k.srule == QMX__MXS_NVQ)
        f = k.lg == 0 ? qmx__mx512_q_fp4d_16 : qmx__mx512_q_fp4d_n;
    else
        f = k.lg == 0 ? qmx__mx512_q_fp4_16 : k.lg == 1 ? qmx__mx512_q_fp4_32 : qmx__mx512_q_fp4_n;
    f(q, &k, x, nblk, el, e0, sc, mode);
    return nblk;
}

/* Dequantize. Scales of a group lane by lane as qmx__mx_dq_scale: E8M0 2^(c - 127) (0x00:
 * 2^-127; 0xFF: NaN, a bad lane), Qwix c << 23 as float bits, NVFP4 the E4M3 value times P
 * when not NaN; ggml's through qmx__mx_dq_scale itself. A block whose scale is NaN, 0 or Inf
 * goes to qmx__mx_dqblock; with the others d * s is NaN only for a NaN element d (fp8), which
 * keeps its own bits as in the scalar code. */
QMX__MXV __mmask16 qmx__mx512_dqgroup(const qmx__mxq *q, int lg, const uint8_t *el, int nb,
                                      const uint8_t *sc, float *y, __m512 lut, int fp8, int e5) {
    const qmx_mx_config *c = q->c;
    __mmask16 valid = (__mmask16)((1u << nb) - 1u), bad;
    __m512i code = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(valid, sc)), sb;
    __m512 s;
    float ms[16];
    int vi, nvec = nb << lg;
    if (c->rule == QMX_MX_GGML) {
        int b;
        for (b = 0; b < nb; b++) ms[b] = qmx__mx_dq_scale(q, sc[b]);
        bad = 0;
    } else {
        if (q->v.nvfp4) {
            s = qmx__fp8_dec512(code, 0);
            if (c->tensor_scale != 0.0f)
                s = _mm512_mask_mul_ps(s, _mm512_cmp_ps_mask(s, s, _CMP_ORD_Q), _mm512_set1_ps(c->tensor_scale), s);
        } else if (c->rule == QMX_MX_QWIX) {
            s = _mm512_castsi512_ps(_mm512_slli_epi32(code, 23));
        } else {
            s = _mm512_castsi512_ps(_mm512_mask_mov_epi32(_mm512_slli_epi32(code, 23),
                                                          _mm512_cmpeq_epi32_mask(code, _mm512_setzero_si512()),
                                                          _mm512_set1_epi32(0x00400000)));
        }
        sb = _mm512_and_si512(_mm512_castps_si512(s), _mm512_set1_epi32(0x7FFFFFFF));
        bad = _mm512_cmpge_epu32_mask(_mm512_sub_epi32(sb, _mm512_set1_epi32(1)),
                                      _mm512_set1_epi32(0x7F7FFFFF)) & valid;
        _mm512_storeu_ps(ms, s);
    }
    for (vi = 0; vi < nvec; vi++) {
        __m512 sv = _mm512_set1_ps(ms[vi >> lg]), d, r;
        if (fp8) {
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(el + 16 * vi));
            d = qmx__fp8_dec512(_mm512_cvtepu8_epi32(b), e5);
            r = _mm512_mul_ps(d, sv);
            r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), d);
        } else {   /* 8 bytes -> 16 nibble indices (a qword's low dword: the low nibble, high: high) */
            __m512i b = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(el + 8 * vi)));
            d = _mm512_permutexvar_ps(_mm512_or_si512(b, _mm512_slli_epi64(b, 28)), lut);
            r = _mm512_mul_ps(d, sv);
        }
        _mm512_storeu_ps(y + 16 * vi, r);
    }
    return bad;
}
QMX__MXV void qmx__mx512_dqloop(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                const uint8_t *sc, float *y, int fp8, int e5) {
    size_t g, B = q->v.block, per = fp8 ? B : B / 2;
    int lg = qmx__mx_vec_lg(B), gmax = lg <= 2 ? 16 : 16 >> (lg - 2);
    const uint8_t *o = el + (fp8 ? e0 : e0 / 2);
    __m512 lut;
    if (q->c->rule == QMX_MX_GGML) {
        float kv[16];
        int i;
        for (i = 0; i < 16; i++) kv[i] = (float)qmx__ggml_kv[i];
        lut = _mm512_loadu_ps(kv);
    } else {
        lut = _mm512_castsi512_ps(_mm512_loadu_si512((const void *)qmx__fp4_bits));
    }
    for (g = 0; g < nblk; g += (size_t)gmax) {
        int nb = nblk - g < (size_t)gmax ? (int)(nblk - g) : gmax, b;
        unsigned bad = qmx__mx512_dqgroup(q, lg, o + g * per, nb, sc + g, y + g * B, lut, fp8, e5);
        for (b = 0; bad; b++, bad >>= 1)
            if (bad & 1u)
                qmx__mx_dqblock(q, el, e0 + (g + (size_t)b) * B, 1, B, sc[g + (size_t)b],
                                y + (g + (size_t)b) * B, QMX__MX_FAST);
    }
}
static size_t qmx__mx_dequant_vec(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                  const uint8_t *sc, float *y) {
    if (q->kind == QMX__MXE_FP4) qmx__mx512_dqloop(q, el, e0, nblk, sc, y, 0, 0);
    else if (q->v.m.elem == QMX_FP8_E5M2) qmx__mx512_dqloop(q, el, e0, nblk, sc, y, 1, 1);
    else qmx__mx512_dqloop(q, el, e0, nblk, sc, y, 1, 0);
    return nblk;
}
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#elif defined(QMX__AVX2)
/* ---- AVX2: groups of 8 blocks, a block's amax in lane j ---- */
/* Element encoder with an explicit rounding (AVX2 has no embedded one): for a = min(|t|, max)
 * and E = max(exponent(a), emin), the code is ((E - emin) << mbits) + RNE(a 2^(mbits - E)); the
 * product is exact (a power of two times a, at most 2^(mbits + 1)), vroundps rounds it to
 * nearest-even whatever the MXCSR mode, and a carry to 2^(mbits + 1) is the next binade's first
 * code, as in qmx__lowfp_encode / qmx__fp8_encode. */
typedef struct qmx__mx256 {
    __m256i absm, maxb, thr, kexp, off;
    __m128i mb;
    int srule, rule, lg, emax, mbits, hasts;
    float inv, num, ts, qd, qk;
} qmx__mx256;

static void qmx__mx256_init(const qmx__mxq *q, qmx__mx256 *k) {
    int mbits = q->v.m.mbits, eminb = 128 - (q->kind == QMX__MXE_FP8 ? q->f8.bias : q->lf.bias);
    k->absm = _mm256_set1_epi32(0x7FFFFFFF);
    k->maxb = _mm256_set1_epi32((int32_t)q->maxb);
    k->thr = _mm256_set1_epi32(eminb << 23);
    k->kexp = _mm256_set1_epi32(254 + mbits);               /* biased exponent of 2^(mbits - E) */
    k->off = _mm256_set1_epi32(eminb << mbits);
    k->mb = _mm_cvtsi32_si128(mbits);
    k->srule = qmx__mx_srule(q);
    k->rule = (int)q->c->rule;
    k->lg = qmx__mx_vec_lg(q->v.block);
    k->emax = q->v.m.emax;
    k->mbits = mbits;
    k->inv = 1.0f / q->v.m.maxv;
    k->hasts = q->c->tensor_scale != 0.0f;
    k->ts = q->c->tensor_scale;
    k->num = k->hasts ? 1.0f / q->c->tensor_scale : 1.0f;
    k->qd = q->v.fp4 ? 6.0f : 448.0f;
    k->qk = q->v.fp4 ? 1.71428573131561279296875f : 1.93548381328582763671875f;
}

QMX__MXV __m256i qmx__mx256_enc(__m256 t, const qmx__mx256 *k) {
    __m256i a = _mm256_min_epu32(_mm256_and_si256(_mm256_castps_si256(t), k->absm), k->maxb);
    __m256i eb = _mm256_srli_epi32(_mm256_max_epi32(a, k->thr), 23);
    __m256 m = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(k->kexp, eb), 23));
    __m256i r = _mm256_cvttps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_castsi256_ps(a), m),
                                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return _mm256_add_epi32(r, _mm256_sub_epi32(_mm256_sll_epi32(eb, k->mb), k->off));
}

/* r[s] -> lane L = the max of r[s] for s = 2 (L & 3) + (L >> 2) */
#define QMX__MX256_SHUFPS(a, b, imm) \
    _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), imm))
QMX__MXV __m256i qmx__mx256_hmax(__m256i *r) {
    int p;
    for (p = 0; p < 4; p++)
        r[p] = _mm256_max_epu32(_mm256_permute2x128_si256(r[2 * p], r[2 * p + 1], 0x20),
                                _mm256_permute2x128_si256(r[2 * p], r[2 * p + 1], 0x31));
    for (p = 0; p < 2; p++)
        r[p] = _mm256_max_epu32(QMX__MX256_SHUFPS(r[2 * p], r[2 * p + 1], 0x44),
                                QMX__MX256_SHUFPS(r[2 * p], r[2 * p + 1], 0xEE));
    return _mm256_max_epu32(QMX__MX256_SHUFPS(r[0], r[1], 0x88), QMX__MX256_SHUFPS(r[0], r[1], 0xDD));
}

/* x >= c as unsigned 32-bit lanes (all ones / zero) */
QMX__MXV __m256i qmx__mx256_geu(__m256i x, __m256i c) {
    return _mm256_cmpeq_epi32(_mm256_max_epu32(x, c), x);
}

/* As qmx__mx512_scales: 8 blocks; *bad: all-ones lanes the fast path cannot take */
QMX__MXV __m256 qmx__mx256_scales(const qmx__mx256 *k, __m256i m, __m256i *code, __m256i *bad) {
    const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    __m256i b = _mm256_cmpgt_epi32(m, _mm256_set1_epi32(0x7F7FFFFF)), c, e;
    __m256 mf = _mm256_castsi256_ps(m), mul;
    const __m256 tiny = _mm256_set1_ps(1.0842021724855044e-19f);
    if (k->srule == QMX__MXS_E8M0 || k->srule == QMX__MXS_QWIX) {
        if (k->srule == QMX__MXS_QWIX) {
            __m256 sc = _mm256_div_ps(mf, _mm256_set1_ps(k->qd));
            sc = _mm256_blendv_ps(sc, _mm256_set1_ps(1.0f), _mm256_cmp_ps(sc, tiny, _CMP_LT_OQ));
            e = _mm256_castps_si256(_mm256_mul_ps(sc, _mm256_set1_ps(k->qk)));
            e = _mm256_add_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(0x7FFF)),
                                 _mm256_and_si256(_mm256_srli_epi32(e, 16), one));
            c = _mm256_srli_epi32(_mm256_and_si256(e, _mm256_set1_epi32(0x7F800000)), 23);
            b = _mm256_or_si256(b, _mm256_or_si256(_mm256_cmpeq_epi32(c, zero),
                                                   _mm256_cmpeq_epi32(c, _mm256_set1_epi32(255))));
        } else if (k->rule == QMX_MX_RCEIL) {
            __m256i db = _mm256_castps_si256(_mm256_mul_ps(mf, _mm256_set1_ps(k->inv)));
            __m256i man = _mm256_and_si256(db, _mm256_set1_epi32(0x7FFFFF));
            e = _mm256_srli_epi32(db, 23);
            c = _mm256_blendv_epi8(_mm256_add_epi32(e, _mm256_min_epu32(man, one)),
                                   _mm256_and_si256(_mm256_cmpgt_epi32(man, _mm256_set1_epi32(0x400000)), one),
                                   _mm256_cmpeq_epi32(e, zero));
            b = _mm256_or_si256(b, _mm256_cmpgt_epi32(c, _mm256_set1_epi32(254)));
        } else {
            e = m;
            if (k->rule == QMX_MX_EVEN) {
                e = _mm256_and_si256(_mm256_add_epi32(m, _mm256_set1_epi32(1 << (22 - k->mbits))),
                                     _mm256_set1_epi32((int32_t)0xFF800000u));
                b = _mm256_or_si256(b, _mm256_cmpgt_epi32(e, _mm256_set1_epi32(0x7F7FFFFF)));
            }
            c = _mm256_sub_epi32(_mm256_srli_epi32(e, 23), _mm256_set1_epi32(k->emax));
            if (k->rule == QMX_MX_CEIL)
                c = _mm256_add_epi32(c, _mm256_min_epu32(_mm256_and_si256(e, _mm256_set1_epi32(0x7FFFFF)), one));
            c = _mm256_max_epi32(c, zero);
        }
        mul = _mm256_castsi256_ps(_mm256_max_epi32(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(254), c), 23),
                                                   _mm256_set1_epi32(0x00400000)));
    } else if (k->srule == QMX__MXS_NV) {
        __m256 t = _mm256_div_ps(mf, _mm256_set1_ps(6.0f));
        if (k->hasts) t = _mm256_div_ps(t, _mm256_set1_ps(k->ts));
        t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(0.015625f)), _mm256_set1_ps(448.0f));
        e = _mm256_castps_si256(t);
        e = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(0x7FFFF)),
                                               _mm256_and_si256(_mm256_srli_epi32(e, 20), one)), 20);
        c = _mm256_sub_epi32(e, _mm256_set1_epi32(960));
        mul = _mm256_div_ps(_mm256_set1_ps(k->num), _mm256_castsi256_ps(_mm256_slli_epi32(e, 20)));
        b = _mm256_or_si256(b, qmx__mx256_geu(_mm256_sub_epi32(_mm256_castps_si256(mul), one),
                                              _mm256_set1_epi32(0x7F7FFFFF)));
    } else {
        __m256 sc = _mm256_div_ps(mf, _mm256_set1_ps(6.0f));
        __m256i cs;
        sc = _mm256_blendv_ps(sc, _mm256_set1_ps(1.0f), _mm256_cmp_ps(sc, tiny, _CMP_LT_OQ));
        e = _mm256_castps_si256(_mm256_min_ps(sc, _mm256_set1_ps(448.0f)));
        c = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(0x7FFFF)),
                                                                _mm256_and_si256(_mm256_srli_epi32(e, 20), one)), 20),
                             _mm256_set1_epi32(960));
        cs = _mm256_cvttps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_castsi256_ps(e), _mm256_set1_ps(512.0f)),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        c = _mm256_blendv_epi8(c, cs, _mm256_cmpgt_epi32(_mm256_set1_epi32(0x3C800000), e));
        mul = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(c, 20), _mm256_set1_epi32(120 << 23)));
        mul = _mm256_blendv_ps(mul, _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_set1_ps(0.001953125f)),
                               _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(8), c)));
        b = _mm256_or_si256(b, _mm256_cmpeq_epi32(c, zero));
    }
    *code = c;
    *bad = b;
    return mul;
}

/* 4 vectors: codes y (no sign) and scaled values t -> 16 fp4 bytes / 32 fp8 bytes (low lanes) */
QMX__MXV __m256i qmx__mx256_pack(const __m256i *y, const __m256 *t, int fp8) {
    __m256i r[4], p;
    int j;
    for (j = 0; j < 4; j++)   /* code | sign (fp4 bit 3, fp8 bit 7) */
        r[j] = _mm256_or_si256(y[j], _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(t[j]), fp8 ? 24 : 28),
                                                      _mm256_set1_epi32(fp8 ? 0x80 : 0x08)));
    p = _mm256_packus_epi16(_mm256_packus_epi32(r[0], r[1]), _mm256_packus_epi32(r[2], r[3]));
    if (fp8) return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    /* fp4: byte pairs lo + 16 hi, to bytes; the two 128-bit lanes hold elements 0-3 / 4-7 of
     * each vector: interleave their 2-byte units */
    p = _mm256_maddubs_epi16(p, _mm256_set1_epi16(0x1001));
    p = _mm256_packus_epi16(p, p);
    return _mm256_castsi128_si256(_mm_unpacklo_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}

QMX__MXV void qmx__mx256_unit(const float *x, const float *ms, int u, int cnt, uint8_t *o, int lg,
                              const qmx__mx256 *k, int fp8, int div) {
    __m256 t[4];
    __m256i y[4], v;
    int r;
    for (r = 0; r < 4; r++) {
        if (r < cnt) {
            __m256 s = _mm256_broadcast_ss(ms + ((u + r) >> lg)), xv = _mm256_loadu_ps(x + 8 * (u + r));
            t[r] = div ? _mm256_div_ps(xv, s) : _mm256_mul_ps(xv, s);
        } else {
            t[r] = _mm256_setzero_ps();
        }
        y[r] = qmx__mx256_enc(t[r], k);
    }
    v = qmx__mx256_pack(y, t, fp8);
    if (cnt == 4 && fp8) {
        _mm256_storeu_si256((__m256i *)(void *)(o + 8 * u), v);
    } else if (cnt == 4) {
        _mm_storeu_si128((__m128i *)(void *)(o + 4 * u), _mm256_castsi256_si128(v));
    } else {   /* a group's last 1..3 vectors */
        uint8_t tmp[32];
        int i, per = fp8 ? 8 : 4;
        _mm256_storeu_si256((__m256i *)(void *)tmp, v);
        for (i = 0; i < per * cnt && i < 32; i++) o[per * u + i] = tmp[i];
    }
}

QMX__MXV unsigned qmx__mx256_qgroup(const qmx__mx256 *k, const float *x, int nb, uint8_t *o,
                                    uint8_t *sc, int lg, int fp8, int div, int scales_only) {
    __m256i r[8], code, bad;
    __m256 mul;
    float ms[8];
    int32_t cs[8];
    int s, j, nvec = nb << lg, u;
    for (s = 0; s < 8; s++) {    /* block s, in address order, into slot 2 (s & 3) + (s >> 2) */
        __m256i acc = _mm256_setzero_si256();
        if (s < nb) {
            const float *p = x + ((size_t)s << (lg + 3));
            acc = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)p), k->absm);
            for (j = 1; j < (1 << lg); j++)
                acc = _mm256_max_epu32(acc, _mm256_and_si256(
                                                _mm256_loadu_si256((const __m256i *)(const void *)(p + 8 * j)), k->absm));
        }
        r[2 * (s & 3) + (s >> 2)] = acc;
        QMX__MX_ORDER();
    }
    mul = qmx__mx256_scales(k, qmx__mx256_hmax(r), &code, &bad);
    _mm256_storeu_si256((__m256i *)(void *)cs, code);
    for (s = 0; s < nb; s++) sc[s] = (uint8_t)cs[s];
    if (!scales_only) {
        _mm256_storeu_ps(ms, mul);
        for (u = 0; u + 4 <= nvec; u += 4) qmx__mx256_unit(x, ms, u, 4, o, lg, k, fp8, div);
        if (u < nvec) qmx__mx256_unit(x, ms, u, nvec - u, o, lg, k, fp8, div);
    }
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(bad)) & ((1u << nb) - 1u);
}

QMX__MXV void qmx__mx256_qloop(const qmx__mxq *q, const qmx__mx256 *k, const float *x, size_t nblk,
                               uint8_t *el, size_t e0, uint8_t *sc, int mode, int lgc, int fp8,
                               int div, int scales_only) {
    qmx__mx256 kl = *k;   /* a local copy: byte stores may alias *k */
    size_t g, B = q->v.block, per = fp8 ? B : B / 2;
    int lg = lgc >= 0 ? lgc : k->lg, gmax = lg <= 3 ? 8 : 8 >> (lg - 3);   /* <= 2 KiB a group */
    uint8_t *o = el + (fp8 ? e0 : e0 / 2);
    for (g = 0; g < nblk; g += (size_t)gmax) {
        int nb = nblk - g < (size_t)gmax ? (int)(nblk - g) : gmax, b;
        unsigned bad = qmx__mx256_qgroup(&kl, x + g * B, nb, o + g * per, sc + g, lg, fp8, div, scales_only);
        for (b = 0; bad; b++, bad >>= 1)
            if (bad & 1u)
                qmx__mx_qblock(q, x + (g + (size_t)b) * B, 1, B, el, e0 + (g + (size_t)b) * B,
                               sc + g + (size_t)b, mode);
    }
}
#define QMX__MX256_Q(name, lgc, fp8, div, so)                                                   \
    static void name(const qmx__mxq *q, const qmx__mx256 *k, const float *x, size_t nblk,    \
                     uint8_t *el, size_t e0, uint8_t *sc, int mode) {                         \
        qmx__mx256_qloop(q, k, x, nblk, el, e0, sc, mode, lgc, fp8, div, so);                \
    }
QMX__MX256_Q(qmx__mx256_q_fp4_16, 1, 0, 0, 0)
QMX__MX256_Q(qmx__mx256_q_fp4_32, 2, 0, 0, 0)
QMX__MX256_Q(qmx__mx256_q_fp4_n, -1, 0, 0, 0)
QMX__MX256_Q(qmx__mx256_q_fp4d_16, 1, 0, 1, 0)
QMX__MX256_Q(qmx__mx256_q_fp4d_n, -1, 0, 1, 0)
QMX__MX256_Q(qmx__mx256_q_fp8_32, 2, 1, 0, 0)
QMX__MX256_Q(qmx__mx256_q_fp8_n, -1, 1, 0, 0)
QMX__MX256_Q(qmx__mx256_q_sc_n, -1, 0, 0, 1)
static size_t qmx__mx_quant_vec(const qmx__mxq *q, const float *x, size_t nblk, uint8_t *el,
                                size_t e0, uint8_t *sc, int mode) {
    qmx__mx256 k;
    void (*f)(const qmx__mxq *, const qmx__mx256 *, const float *, size_t, uint8_t *, size_t,
              uint8_t *, int);
    qmx__mx256_init(q, &k);
    if (mode & QMX__MX_SCALES) f = qmx__mx256_q_sc_n;
    else if (q->kind == QMX__MXE_FP8) f = k.lg == 2 ? qmx__mx256_q_fp8_32 : qmx__mx256_q_fp8_n;
    else if (k.srule == QMX__MXS_NVQ) f = k.lg == 1 ? qmx__mx256_q_fp4d_16 : qmx__mx256_q_fp4d_n;
    else f = k.lg == 1 ? qmx__mx256_q_fp4_16 : k.lg == 2 ? qmx__mx256_q_fp4_32 : qmx__mx256_q_fp4_n;
    f(q, &k, x, nblk, el, e0, sc, mode);
    return nblk;
}

/* Dequantize, as the AVX-512 kernel: 8 blocks a group */
QMX__MXV unsigned qmx__mx256_dqgroup(const qmx__mxq *q, int lg, const uint8_t *el, int nb,
                                     const uint8_t *sc, float *y, __m256 lpos, __m256 lneg,
                                     int fp8, int e5) {
    const qmx_mx_config *c = q->c;
    float ms[8];
    unsigned bad = 0;
    int vi, nvec = nb << lg;
    if (c->rule == QMX_MX_GGML) {
        int b;
        for (b = 0; b < nb; b++) ms[b] = qmx__mx_dq_scale(q, sc[b]);
    } else {
        int32_t cb[8];
        int b;
        __m256i code, sb;
        __m256 s;
        for (b = 0; b < 8; b++) cb[b] = b < nb ? sc[b] : 0x7F;
        code = _mm256_loadu_si256((const __m256i *)(const void *)cb);
        if (q->v.nvfp4) {
            s = qmx__fp8_dec256(code, 0);
            if (c->tensor_scale != 0.0f)
                s = _mm256_blendv_ps(s, _mm256_mul_ps(_mm256_set1_ps(c->tensor_scale), s),
                                     _mm256_cmp_ps(s, s, _CMP_ORD_Q));
        } else if (c->rule == QMX_MX_QWIX) {
            s = _mm256_castsi256_ps(_mm256_slli_epi32(code, 23));
        } else {
            s = _mm256_castsi256_ps(_mm256_blendv_epi8(_mm256_slli_epi32(code, 23), _mm256_set1_epi32(0x00400000),
                                                       _mm256_cmpeq_epi32(code, _mm256_setzero_si256())));
        }
        sb = _mm256_and_si256(_mm256_castps_si256(s), _mm256_set1_epi32(0x7FFFFFFF));
        bad = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                  qmx__mx256_geu(_mm256_sub_epi32(sb, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7F7FFFFF)))) &
              ((1u << nb) - 1u);
        _mm256_storeu_ps(ms, s);
    }
    for (vi = 0; vi < nvec; vi++) {
        __m256 sv = _mm256_broadcast_ss(ms + (vi >> lg)), d, r;
        if (fp8) {
            __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(el + 8 * vi));
            d = qmx__fp8_dec256(_mm256_cvtepu8_epi32(b), e5);
            r = _mm256_mul_ps(d, sv);
            r = _mm256_blendv_ps(r, d, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));
        } else {   /* 4 bytes -> 8 nibbles; bit 3 (the sign) picks the table */
            uint32_t w = (uint32_t)el[4 * vi] | (uint32_t)el[4 * vi + 1] << 8 |
                         (uint32_t)el[4 * vi + 2] << 16 | (uint32_t)el[4 * vi + 3] << 24;
            __m256i ix = _mm256_srlv_epi32(_mm256_set1_epi32((int32_t)w),
                                           _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
            d = _mm256_blendv_ps(_mm256_permutevar8x32_ps(lpos, ix), _mm256_permutevar8x32_ps(lneg, ix),
                                 _mm256_castsi256_ps(_mm256_slli_epi32(ix, 28)));
            r = _mm256_mul_ps(d, sv);
        }
        _mm256_storeu_ps(y + 8 * vi, r);
    }
    return bad;
}
QMX__MXV void qmx__mx256_dqloop(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                const uint8_t *sc, float *y, int fp8, int e5) {
    size_t g, B = q->v.block, per = fp8 ? B : B / 2;
    int lg = qmx__mx_vec_lg(B), gmax = lg <= 3 ? 8 : 8 >> (lg - 3), i;
    const uint8_t *o = el + (fp8 ? e0 : e0 / 2);
    float kv[16];
    __m256 lpos, lneg;
    for (i = 0; i < 16; i++)
        kv[i] = q->c->rule == QMX_MX_GGML ? (float)qmx__ggml_kv[i] : qmx__bits_f32(qmx__fp4_bits[i]);
    lpos = _mm256_loadu_ps(kv);
    lneg = _mm256_loadu_ps(kv + 8);
    for (g = 0; g < nblk; g += (size_t)gmax) {
        int nb = nblk - g < (size_t)gmax ? (int)(nblk - g) : gmax, b;
        unsigned bad = qmx__mx256_dqgroup(q, lg, o + g * per, nb, sc + g, y + g * B, lpos, lneg, fp8, e5);
        for (b = 0; bad; b++, bad >>= 1)
            if (bad & 1u)
                qmx__mx_dqblock(q, el, e0 + (g + (size_t)b) * B, 1, B, sc[g + (size_t)b],
                                y + (g + (size_t)b) * B, QMX__MX_FAST);
    }
}
static size_t qmx__mx_dequant_vec(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                  const uint8_t *sc, float *y) {
    if (q->kind == QMX__MXE_FP4) qmx__mx256_dqloop(q, el, e0, nblk, sc, y, 0, 0);
    else if (q->v.m.elem == QMX_FP8_E5M2) qmx__mx256_dqloop(q, el, e0, nblk, sc, y, 1, 1);
    else qmx__mx256_dqloop(q, el, e0, nblk, sc, y, 1, 0);
    return nblk;
}
#elif defined(QMX__NEON64)
/* ---- NEON (AArch64): groups of 4 blocks, a block's amax in lane j ---- */
/* Element encoder as the AVX2 one: ((E - emin) << mbits) + RNE(a 2^(mbits - E)), the
 * product exact, rounded by fcvtns (nearest-even whatever the FPCR mode). */
typedef struct qmx__mxn {
    uint32x4_t absm, maxb, thr, kexp, off;
    int32x4_t mb;
    int srule, rule, lg, emax, mbits, hasts;
    float inv, num, ts, qd, qk;
} qmx__mxn;

static void qmx__mxn_init(const qmx__mxq *q, qmx__mxn *k) {
    int mbits = q->v.m.mbits, eminb = 128 - (q->kind == QMX__MXE_FP8 ? q->f8.bias : q->lf.bias);
    k->absm = vdupq_n_u32(0x7FFFFFFFu);
    k->maxb = vdupq_n_u32(q->maxb);
    k->thr = vdupq_n_u32((uint32_t)eminb << 23);
    k->kexp = vdupq_n_u32((uint32_t)(254 + mbits));
    k->off = vdupq_n_u32((uint32_t)eminb << mbits);
    k->mb = vdupq_n_s32(mbits);
    k->srule = qmx__mx_srule(q);
    k->rule = (int)q->c->rule;
    k->lg = qmx__mx_vec_lg(q->v.block);
    k->emax = q->v.m.emax;
    k->mbits = mbits;
    k->inv = 1.0f / q->v.m.maxv;
    k->hasts = q->c->tensor_scale != 0.0f;
    k->ts = q->c->tensor_scale;
    k->num = k->hasts ? 1.0f / q->c->tensor_scale : 1.0f;
    k->qd = q->v.fp4 ? 6.0f : 448.0f;
    k->qk = q->v.fp4 ? 1.71428573131561279296875f : 1.93548381328582763671875f;
}

QMX__MXV uint32x4_t qmx__mxn_enc(float32x4_t t, const qmx__mxn *k) {
    uint32x4_t a = vminq_u32(vandq_u32(vreinterpretq_u32_f32(t), k->absm), k->maxb);
    uint32x4_t eb = vshrq_n_u32(vmaxq_u32(a, k->thr), 23);
    float32x4_t m = vreinterpretq_f32_u32(vshlq_n_u32(vsubq_u32(k->kexp, eb), 23));
    uint32x4_t r = vreinterpretq_u32_s32(vcvtnq_s32_f32(vmulq_f32(vreinterpretq_f32_u32(a), m)));
    return vaddq_u32(r, vsubq_u32(vshlq_u32(eb, k->mb), k->off));
}

/* As qmx__mx512_scales: 4 blocks; *bad: all-ones lanes the fast path cannot take */
QMX__MXV float32x4_t qmx__mxn_scales(const qmx__mxn *k, uint32x4_t m, uint32x4_t *code, uint32x4_t *bad) {
    const uint32x4_t one = vdupq_n_u32(1), zero = vdupq_n_u32(0);
    const float32x4_t tiny = vdupq_n_f32(1.0842021724855044e-19f), onef = vdupq_n_f32(1.0f);
    uint32x4_t b = vcgeq_u32(m, vdupq_n_u32(0x7F800000u)), c, e;
    float32x4_t mf = vreinterpretq_f32_u32(m), mul;
    if (k->srule == QMX__MXS_E8M0 || k->srule == QMX__MXS_QWIX) {
        if (k->srule == QMX__MXS_QWIX) {
            float32x4_t sc = vdivq_f32(mf, vdupq_n_f32(k->qd));
            sc = vbslq_f32(vcltq_f32(sc, tiny), onef, sc);
            e = vreinterpretq_u32_f32(vmulq_f32(sc, vdupq_n_f32(k->qk)));
            e = vaddq_u32(vaddq_u32(e, vdupq_n_u32(0x7FFFu)), vandq_u32(vshrq_n_u32(e, 16), one));
            c = vshrq_n_u32(vandq_u32(e, vdupq_n_u32(0x7F800000u)), 23);
            b = vorrq_u32(b, vorrq_u32(vceqq_u32(c, zero), vceqq_u32(c, vdupq_n_u32(255))));
        } else if (k->rule == QMX_MX_RCEIL) {
            uint32x4_t db = vreinterpretq_u32_f32(vmulq_f32(mf, vdupq_n_f32(k->inv)));
            uint32x4_t man = vandq_u32(db, vdupq_n_u32(0x7FFFFFu));
            e = vshrq_n_u32(db, 23);
            c = vbslq_u32(vceqq_u32(e, zero), vandq_u32(vcgtq_u32(man, vdupq_n_u32(0x400000u)), one),
                          vaddq_u32(e, vminq_u32(man, one)));
            b = vorrq_u32(b, vcgtq_u32(c, vdupq_n_u32(254)));
        } else {
            int32x4_t ci;
            e = m;
            if (k->rule == QMX_MX_EVEN) {
                e = vandq_u32(vaddq_u32(m, vdupq_n_u32(1u << (22 - k->mbits))), vdupq_n_u32(0xFF800000u));
                b = vorrq_u32(b, vcgeq_u32(e, vdupq_n_u32(0x7F800000u)));
            }
            ci = vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(e, 23)), vdupq_n_s32(k->emax));
            if (k->rule == QMX_MX_CEIL)
                ci = vaddq_s32(ci, vreinterpretq_s32_u32(vminq_u32(vandq_u32(e, vdupq_n_u32(0x7FFFFFu)), one)));
            c = vreinterpretq_u32_s32(vmaxq_s32(ci, vdupq_n_s32(0)));
        }
        mul = vreinterpretq_f32_u32(vmaxq_u32(vshlq_n_u32(vsubq_u32(vdupq_n_u32(254), c), 23),
                                              vdupq_n_u32(0x00400000u)));
    } else if (k->srule == QMX__MXS_NV) {
        float32x4_t t = vdivq_f32(mf, vdupq_n_f32(6.0f));
        if (k->hasts) t = vdivq_f32(t, vdupq_n_f32(k->ts));
        t = vminq_f32(vmaxq_f32(t, vdupq_n_f32(0.015625f)), vdupq_n_f32(448.0f));
        e = vreinterpretq_u32_f32(t);
        e = vshrq_n_u32(vaddq_u32(vaddq_u32(e, vdupq_n_u32(0x7FFFFu)), vandq_u32(vshrq_n_u32(e, 20), one)), 20);
        c = vsubq_u32(e, vdupq_n_u32(960));
        mul = vdivq_f32(vdupq_n_f32(k->num), vreinterpretq_f32_u32(vshlq_n_u32(e, 20)));
        b = vorrq_u32(b, vcgeq_u32(vsubq_u32(vreinterpretq_u32_f32(mul), one), vdupq_n_u32(0x7F7FFFFFu)));
    } else {
        float32x4_t sc = vdivq_f32(mf, vdupq_n_f32(6.0f));
        uint32x4_t cs;
        sc = vbslq_f32(vcltq_f32(sc, tiny), onef, sc);
        e = vreinterpretq_u32_f32(vminq_f32(sc, vdupq_n_f32(448.0f)));
        c = vshrq_n_u32(vaddq_u32(vaddq_u32(e, vdupq_n_u32(0x7FFFFu)), vandq_u32(vshrq_n_u32(e, 20), one)), 20);
        c = vsubq_u32(c, vdupq_n_u32(960));
        cs = vreinterpretq_u32_s32(vcvtnq_s32_f32(vmulq_f32(vreinterpretq_f32_u32(e), vdupq_n_f32(512.0f))));
        c = vbslq_u32(vcltq_u32(e, vdupq_n_u32(0x3C800000u)), cs, c);
        mul = vbslq_f32(vcltq_u32(c, vdupq_n_u32(8)),
                        vmulq_f32(vcvtq_f32_u32(c), vdupq_n_f32(0.001953125f)),
                        vreinterpretq_f32_u32(vaddq_u32(vshlq_n_u32(c, 20), vdupq_n_u32(120u << 23))));
        b = vorrq_u32(b, vceqq_u32(c, zero));
    }
    *code = c;
    *bad = b;
    return mul;
}

/* 4 vectors: codes y (no sign) and scaled values t -> 8 fp4 bytes / 16 fp8 bytes */
QMX__MXV uint8x16_t qmx__mxn_pack(const uint32x4_t *y, const float32x4_t *t, int fp8) {
    uint32x4_t r[4];
    uint8x16_t c;
    int j;
    for (j = 0; j < 4; j++)   /* code | sign (fp4 bit 3, fp8 bit 7) */
        r[j] = vbslq_u32(vdupq_n_u32(fp8 ? 0x80u : 0x08u),   /* literal shift counts (C++) */
                         fp8 ? vshrq_n_u32(vreinterpretq_u32_f32(t[j]), 24)
                             : vshrq_n_u32(vreinterpretq_u32_f32(t[j]), 28), y[j]);
    c = vuzp1q_u8(vreinterpretq_u8_u16(vuzp1q_u16(vreinterpretq_u16_u32(r[0]), vreinterpretq_u16_u32(r[1]))),
                  vreinterpretq_u8_u16(vuzp1q_u16(vreinterpretq_u16_u32(r[2]), vreinterpretq_u16_u32(r[3]))));
    if (fp8) return c;
    /* fp4: byte pairs lo | hi << 4 in the low byte of each halfword */
    return vcombine_u8(vmovn_u16(vsraq_n_u16(vreinterpretq_u16_u8(c), vreinterpretq_u16_u8(c), 4)),
                       vdup_n_u8(0));
}

QMX__MXV void qmx__mxn_unit(const float *x, const float *ms, int u, int cnt, uint8_t *o, int lg,
                            const qmx__mxn *k, int fp8, int div) {
    float32x4_t t[4];
    uint32x4_t y[4];
    uint8x16_t v;
    int r;
    for (r = 0; r < 4; r++) {
        if (r < cnt) {
            float32x4_t s = vdupq_n_f32(ms[(u + r) >> lg]), xv = vld1q_f32(x + 4 * (u + r));
            t[r] = div ? vdivq_f32(xv, s) : vmulq_f32(xv, s);
        } else {
            t[r] = vdupq_n_f32(0.0f);
        }
        y[r] = qmx__mxn_enc(t[r], k);
    }
    v = qmx__mxn_pack(y, t, fp8);
    if (cnt == 4 && fp8) {
        vst1q_u8(o + 4 * u, v);
    } else if (cnt == 4) {
        vst1_u8(o + 2 * u, vget_low_u8(v));
    } else {
        uint8_t tmp[16];
        int i, per = fp8 ? 4 : 2;
        vst1q_u8(tmp, v);
        for (i = 0; i < per * cnt && i < 16; i++) o[per * u + i] = tmp[i];
    }
}

QMX__MXV unsigned qmx__mxn_qgroup(const qmx__mxn *k, const float *x, int nb, uint8_t *o,
                                  uint8_t *sc, int lg, int fp8, int div, int scales_only) {
    uint32x4_t r[4], code, bad;
    float32x4_t mul;
    float ms[4];
    uint32_t cs[4], bd[4];
    int s, j, nvec = nb << lg, u;
    for (s = 0; s < 4; s++) {
        uint32x4_t acc = vdupq_n_u32(0);
        if (s < nb) {
            const float *p = x + ((size_t)s << (lg + 2));
            acc = vandq_u32(vreinterpretq_u32_f32(vld1q_f32(p)), k->absm);
            for (j = 1; j < (1 << lg); j++)
                acc = vmaxq_u32(acc, vandq_u32(vreinterpretq_u32_f32(vld1q_f32(p + 4 * j)), k->absm));
        }
        r[s] = acc;
        QMX__MX_ORDER();
    }
    /* pairwise maxima: lane j = block j */
    mul = qmx__mxn_scales(k, vpmaxq_u32(vpmaxq_u32(r[0], r[1]), vpmaxq_u32(r[2], r[3])), &code, &bad);
    vst1q_u32(cs, code);
    vst1q_u32(bd, bad);
    for (s = 0; s < nb; s++) sc[s] = (uint8_t)cs[s];
    if (!scales_only) {
        vst1q_f32(ms, mul);
        for (u = 0; u + 4 <= nvec; u += 4) qmx__mxn_unit(x, ms, u, 4, o, lg, k, fp8, div);
        if (u < nvec) qmx__mxn_unit(x, ms, u, nvec - u, o, lg, k, fp8, div);
    }
    return ((bd[0] & 1u) | (bd[1] & 2u) | (bd[2] & 4u) | (bd[3] & 8u)) & ((1u << nb) - 1u);
}

QMX__MXV void qmx__mxn_qloop(const qmx__mxq *q, const qmx__mxn *k, const float *x, size_t nblk,
                             uint8_t *el, size_t e0, uint8_t *sc, int mode, int lgc, int fp8,
                             int div, int scales_only) {
    qmx__mxn kl = *k;   /* a local copy: byte stores may alias *k */
    size_t g, B = q->v.block, per = fp8 ? B : B / 2;
    int lg = lgc >= 0 ? lgc : k->lg;
    uint8_t *o = el + (fp8 ? e0 : e0 / 2);
    for (g = 0; g < nblk; g += 4) {
        int nb = nblk - g < 4 ? (int)(nblk - g) : 4, b;
        unsigned bad = qmx__mxn_qgroup(&kl, x + g * B, nb, o + g * per, sc + g, lg, fp8, div, scales_only);
        for (b = 0; bad; b++, bad >>= 1)
            if (bad & 1u)
                qmx__mx_qblock(q, x + (g + (size_t)b) * B, 1, B, el, e0 + (g + (size_t)b) * B,
                               sc + g + (size_t)b, mode);
    }
}
#define QMX__MXN_Q(name, lgc, fp8, div, so)                                                     \
    static void name(const qmx__mxq *q, const qmx__mxn *k, const float *x, size_t nblk,      \
                     uint8_t *el, size_t e0, uint8_t *sc, int mode) {                         \
        qmx__mxn_qloop(q, k, x, nblk, el, e0, sc, mode, lgc, fp8, div, so);                  \
    }
QMX__MXN_Q(qmx__mxn_q_fp4_16, 2, 0, 0, 0)
QMX__MXN_Q(qmx__mxn_q_fp4_32, 3, 0, 0, 0)
QMX__MXN_Q(qmx__mxn_q_fp4_n, -1, 0, 0, 0)
QMX__MXN_Q(qmx__mxn_q_fp4d_n, -1, 0, 1, 0)
QMX__MXN_Q(qmx__mxn_q_fp8_32, 3, 1, 0, 0)
QMX__MXN_Q(qmx__mxn_q_fp8_n, -1, 1, 0, 0)
QMX__MXN_Q(qmx__mxn_q_sc_n, -1, 0, 0, 1)
static size_t qmx__mx_quant_vec(const qmx__mxq *q, const float *x, size_t nblk, uint8_t *el,
                                size_t e0, uint8_t *sc, int mode) {
    qmx__mxn k;
    void (*f)(const qmx__mxq *, const qmx__mxn *, const float *, size_t, uint8_t *, size_t,
              uint8_t *, int);
    qmx__mxn_init(q, &k);
    if (mode & QMX__MX_SCALES) f = qmx__mxn_q_sc_n;
    else if (q->kind == QMX__MXE_FP8) f = k.lg == 3 ? qmx__mxn_q_fp8_32 : qmx__mxn_q_fp8_n;
    else if (k.srule == QMX__MXS_NVQ) f = qmx__mxn_q_fp4d_n;
    else f = k.lg == 2 ? qmx__mxn_q_fp4_16 : k.lg == 3 ? qmx__mxn_q_fp4_32 : qmx__mxn_q_fp4_n;
    f(q, &k, x, nblk, el, e0, sc, mode);
    return nblk;
}

/* Dequantize, as the AVX-512 kernel: 4 blocks a group */
QMX__MXV unsigned qmx__mxn_dqgroup(const qmx__mxq *q, int lg, const uint8_t *el, int nb,
                                   const uint8_t *sc, float *y, const float *lut, uint8x16_t t2,
                                   uint8x16_t t3, int fp8, int e5) {
    const qmx_mx_config *c = q->c;
    float ms[4];
    unsigned bad = 0;
    int vi, j, nvec = nb << lg;
    if (c->rule == QMX_MX_GGML) {
        int b;
        for (b = 0; b < nb; b++) ms[b] = qmx__mx_dq_scale(q, sc[b]);
    } else {
        uint32_t cb[4], bd[4];
        int b;
        uint32x4_t code, sb;
        float32x4_t s;
        for (b = 0; b < 4; b++) cb[b] = b < nb ? sc[b] : 0x7F;
        code = vld1q_u32(cb);
        if (q->v.nvfp4) {
            s = qmx__fp8_dec128(code, 0);
            if (c->tensor_scale != 0.0f)
                s = vbslq_f32(vceqq_f32(s, s), vmulq_f32(vdupq_n_f32(c->tensor_scale), s), s);
        } else if (c->rule == QMX_MX_QWIX) {
            s = vreinterpretq_f32_u32(vshlq_n_u32(code, 23));
        } else {
            s = vreinterpretq_f32_u32(vbslq_u32(vceqq_u32(code, vdupq_n_u32(0)), vdupq_n_u32(0x00400000u),
                                                vshlq_n_u32(code, 23)));
        }
        sb = vandq_u32(vreinterpretq_u32_f32(s), vdupq_n_u32(0x7FFFFFFFu));
        vst1q_u32(bd, vcgeq_u32(vsubq_u32(sb, vdupq_n_u32(1)), vdupq_n_u32(0x7F7FFFFFu)));
        bad = ((bd[0] & 1u) | (bd[1] & 2u) | (bd[2] & 4u) | (bd[3] & 8u)) & ((1u << nb) - 1u);
        vst1q_f32(ms, s);
    }
    for (vi = 0; vi + 4 <= nvec; vi += 4) {
        float32x4_t d[4];
        if (fp8) {                            /* 16 codes */
            uint8x16_t b16 = vld1q_u8(el + 4 * vi);
            uint16x8_t lo = vmovl_u8(vget_low_u8(b16)), hi = vmovl_high_u8(b16);
            d[0] = qmx__fp8_dec128(vmovl_u16(vget_low_u16(lo)), e5);
            d[1] = qmx__fp8_dec128(vmovl_high_u16(lo), e5);
            d[2] = qmx__fp8_dec128(vmovl_u16(vget_low_u16(hi)), e5);
            d[3] = qmx__fp8_dec128(vmovl_high_u16(hi), e5);
            for (j = 0; j < 4; j++) {         /* a NaN element keeps its bits */
                float32x4_t r = vmulq_f32(d[j], vdupq_n_f32(ms[(vi + j) >> lg]));
                vst1q_f32(y + 4 * (vi + j), vbslq_f32(vceqq_f32(d[j], d[j]), r, d[j]));
            }
        } else {   /* 8 bytes -> 16 nibbles -> the top two bytes of each value (the rest are 0) */
            uint8x8_t b8 = vld1_u8(el + 2 * vi), l8 = vand_u8(b8, vdup_n_u8(15)), h8 = vshr_n_u8(b8, 4);
            uint8x16_t n = vcombine_u8(vzip1_u8(l8, h8), vzip2_u8(l8, h8));
            uint8x16_t h2 = vqtbl1q_u8(t2, n), h3 = vqtbl1q_u8(t3, n);
            uint16x8_t lo = vreinterpretq_u16_u8(vzip1q_u8(h2, h3));
            uint16x8_t hi = vreinterpretq_u16_u8(vzip2q_u8(h2, h3));
            d[0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(lo), 16));
            d[1] = vreinterpretq_f32_u32(vshll_high_n_u16(lo, 16));
            d[2] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(hi), 16));
            d[3] = vreinterpretq_f32_u32(vshll_high_n_u16(hi, 16));
            for (j = 0; j < 4; j++)
                vst1q_f32(y + 4 * (vi + j), vmulq_f32(d[j], vdupq_n_f32(ms[(vi + j) >> lg])));
        }
    }
    for (j = 4 * vi; j < 4 * nvec; j++) {     /* the last 1..3 vectors (blocks of 4) */
        float s = ms[(j / 4) >> lg], d, r;
        if (fp8) {
            d = qmx__bits_f32(qmx__fp8_decode_bits(el[j], &q->f8));
            r = d * s;
            y[j] = d != d ? d : r;
        } else {
            y[j] = lut[(el[j / 2] >> ((j & 1) * 4)) & 15] * s;
        }
    }
    return bad;
}
QMX__MXV void qmx__mxn_dqloop(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                              const uint8_t *sc, float *y, int fp8, int e5) {
    size_t g, B = q->v.block, per = fp8 ? B : B / 2;
    int lg = qmx__mx_vec_lg(B), i;
    const uint8_t *o = el + (fp8 ? e0 : e0 / 2);
    float lut[16];
    uint8_t b2[16], b3[16];
    uint8x16_t t2, t3;
    for (i = 0; i < 16; i++) {   /* the values' bits have only their top two bytes set */
        uint32_t u;
        lut[i] = q->c->rule == QMX_MX_GGML ? (float)qmx__ggml_kv[i] : qmx__bits_f32(qmx__fp4_bits[i]);
        u = qmx__f32_bits(lut[i]);
        b2[i] = (uint8_t)(u >> 16);
        b3[i] = (uint8_t)(u >> 24);
    }
    t2 = vld1q_u8(b2);
    t3 = vld1q_u8(b3);
    for (g = 0; g < nblk; g += 4) {
        int nb = nblk - g < 4 ? (int)(nblk - g) : 4, b;
        unsigned bad = qmx__mxn_dqgroup(q, lg, o + g * per, nb, sc + g, y + g * B, lut, t2, t3, fp8, e5);
        for (b = 0; bad; b++, bad >>= 1)
            if (bad & 1u)
                qmx__mx_dqblock(q, el, e0 + (g + (size_t)b) * B, 1, B, sc[g + (size_t)b],
                                y + (g + (size_t)b) * B, QMX__MX_FAST);
    }
}
static size_t qmx__mx_dequant_vec(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                  const uint8_t *sc, float *y) {
    if (q->kind == QMX__MXE_FP4) qmx__mxn_dqloop(q, el, e0, nblk, sc, y, 0, 0);
    else if (q->v.m.elem == QMX_FP8_E5M2) qmx__mxn_dqloop(q, el, e0, nblk, sc, y, 1, 1);
    else qmx__mxn_dqloop(q, el, e0, nblk, sc, y, 1, 0);
    return nblk;
}
#else
/* ---- vector kernels: none on this target ---- */
static size_t qmx__mx_vec_run(const qmx__mxq *q, const qmx__mxblk *k, int dq) {
    (void)q; (void)k; (void)dq;
    return 0;
}
static size_t qmx__mx_quant_vec(const qmx__mxq *q, const float *x, size_t nblk, uint8_t *el,
                                size_t e0, uint8_t *sc, int mode) {
    (void)q; (void)x; (void)nblk; (void)el; (void)e0; (void)sc; (void)mode;
    return 0;
}
static size_t qmx__mx_dequant_vec(const qmx__mxq *q, const uint8_t *el, size_t e0, size_t nblk,
                                  const uint8_t *sc, float *y) {
    (void)q; (void)el; (void)e0; (void)nblk; (void)sc; (void)y;
    return 0;
}
#endif

/* Several cores: the scale indices of tasks [tb, te) (groups of whole (outer, block) rows of
 * scales, QMX_TASK_ELEMS elements or more each; see qmx_mx_tasks). */
static size_t qmx__mx_groups_per_task(const qmx__mxv *v) {
    size_t per = v->block * v->inner;                       /* <= count: no overflow */
    return per >= QMX_TASK_ELEMS ? 1 : QMX_TASK_ELEMS / per;
}
static size_t qmx__mx_ntasks(const qmx__mxv *v) {
    size_t ng = v->n_scales / v->inner, g = qmx__mx_groups_per_task(v);
    /* fp4 with an odd group or row size: a byte could hold two tasks' nibbles: one task */
    if (v->fp4 && (((v->block * v->inner) & 1) || ((v->len * v->inner) & 1))) return 1;
    return ng / g + (ng % g != 0);
}
static void qmx__mx_task_scales(const qmx__mxv *v, size_t tb, size_t te, size_t *s0, size_t *s1) {
    size_t ng = v->n_scales / v->inner, g = qmx__mx_groups_per_task(v), nt = qmx__mx_ntasks(v);
    if (nt == 1) { *s0 = tb ? v->n_scales : 0; *s1 = te ? v->n_scales : 0; return; }
    *s0 = (tb >= nt ? ng : tb * g) * v->inner;
    *s1 = (te >= nt ? ng : te * g) * v->inner;
}
/* The blocks of scale indices [s0, s1) (the serial calls: all of them), after the call's checks */
static void qmx__mx_quant_blocks(const qmx_mx_config *c, const qmx__mxv *v, const float *x,
                                 size_t count, uint8_t *el, uint8_t *scales, int mode, size_t s0,
                                 size_t s1) {
    qmx__mxq q;
    qmx__mxblk k;
    if (s0 >= s1) return;
    qmx__mxq_init(c, v, &q);
    qmx__mx_seek(v, s0, &k);
    for (;;) {
        size_t run = (mode & QMX__MX_VEC) == QMX__MX_VEC ? qmx__mx_vec_run(&q, &k, 0) : 0;
        if (run > s1 - k.si) run = s1 - k.si;
        if (run) run = qmx__mx_quant_vec(&q, x + k.e0, run, el, k.e0, scales + k.si, mode);
        if (run) {                                          /* 0: the kernel declined */
            if (k.si + run >= s1) break;
            qmx__mx_seek(v, k.si + run, &k);
            continue;
        }
        qmx__mx_qblock(&q, x + k.e0, v->inner, k.n, el, k.e0, scales + k.si, mode);
        if (!qmx__mx_next(v, &k) || k.si >= s1) break;
    }
    if (v->fp4 && (count & 1) && s1 == v->n_scales && !(mode & QMX__MX_SCALES))
        qmx__set_nibble(el, count, 0);                      /* the unused high nibble */
}
static qmx_status qmx__mx_quant(const qmx_mx_config *c, const float *x, size_t count,
                                uint8_t *el, size_t element_bytes, uint8_t *scales,
                                size_t n_scales, int mode) {
    qmx__mxv v;
    qmx_status st = qmx__mx_resolve(c, count, &v);
    if (st != QMX_OK) return st;
    if (!x || !el || !scales) return QMX_ERR_NULL;
    if (element_bytes < v.elem_bytes || n_scales < v.n_scales) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx__mx_quant_blocks(c, &v, x, count, el, scales, mode, 0, v.n_scales);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_mx_quantize(const qmx_mx_config *c, const float *x, size_t count,
                                    uint8_t *el, size_t element_bytes, uint8_t *scales,
                                    size_t n_scales) {
    return qmx__mx_quant(c, x, count, el, element_bytes, scales, n_scales, QMX__MX_VEC);
}

static void qmx__mx_dequant_blocks(const qmx_mx_config *c, const qmx__mxv *v, const uint8_t *el,
                                   const uint8_t *scales, float *y, int mode, size_t s0,
                                   size_t s1) {
    qmx__mxq q;
    qmx__mxblk k;
    if (s0 >= s1) return;
    qmx__mxq_init(c, v, &q);
    qmx__mx_seek(v, s0, &k);
    for (;;) {
        size_t run = (mode & QMX__MX_VEC) == QMX__MX_VEC ? qmx__mx_vec_run(&q, &k, 1) : 0;
        if (run > s1 - k.si) run = s1 - k.si;
        if (run) run = qmx__mx_dequant_vec(&q, el, k.e0, run, scales + k.si, y + k.e0);
        if (run) {                                          /* 0: the kernel declined */
            if (k.si + run >= s1) break;
            qmx__mx_seek(v, k.si + run, &k);
            continue;
        }
        qmx__mx_dqblock(&q, el, k.e0, v->inner, k.n, scales[k.si], y + k.e0, mode);
        if (!qmx__mx_next(v, &k) || k.si >= s1) break;
    }
}
static qmx_status qmx__mx_dequant(const qmx_mx_config *c, const uint8_t *el,
                                  size_t element_bytes, const uint8_t *scales, size_t n_scales,
                                  size_t count, float *y, int mode) {
    qmx__mxv v;
    qmx_status st = qmx__mx_resolve(c, count, &v);
    if (st != QMX_OK) return st;
    if (!el || !scales || !y) return QMX_ERR_NULL;
    if (element_bytes < v.elem_bytes || n_scales < v.n_scales) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx__mx_dequant_blocks(c, &v, el, scales, y, mode, 0, v.n_scales);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_mx_dequantize(const qmx_mx_config *c, const uint8_t *el,
                                      size_t element_bytes, const uint8_t *scales,
                                      size_t n_scales, size_t count, float *y) {
    return qmx__mx_dequant(c, el, element_bytes, scales, n_scales, count, y, QMX__MX_VEC);
}

/* ---- MX / NVFP4 arrays: range calls and executors ---- */
QMX__DEF qmx_status qmx_mx_tasks(const qmx_mx_config *c, size_t count, size_t *n_tasks) {
    qmx__mxv v;
    qmx_status st;
    if (!n_tasks) return QMX_ERR_NULL;
    st = qmx__mx_resolve(c, count, &v);
    if (st == QMX_OK) *n_tasks = qmx__mx_ntasks(&v);
    return st;
}
/* The serial call's checks (any_null: a NULL buffer), then the range: its scale indices */
static qmx_status qmx__mx_run_prep(const qmx_mx_config *c, size_t count, int any_null,
                                   size_t element_bytes, size_t n_scales, size_t tb, size_t te,
                                   qmx__mxv *v, size_t *s0, size_t *s1) {
    qmx_status st = qmx__mx_resolve(c, count, v);
    if (st != QMX_OK) return st;
    if (any_null) return QMX_ERR_NULL;
    if (element_bytes < v->elem_bytes || n_scales < v->n_scales) return QMX_ERR_BUFFER_TOO_SMALL;
    if (tb > te || te > qmx__mx_ntasks(v)) return QMX_ERR_ARG;
    qmx__mx_task_scales(v, tb, te, s0, s1);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_mx_quantize_run(const qmx_mx_config *c, const float *x, size_t count,
                                        uint8_t *el, size_t element_bytes, uint8_t *scales,
                                        size_t n_scales, size_t task_begin, size_t task_end) {
    qmx__mxv v;
    size_t s0, s1;
    qmx_status st = qmx__mx_run_prep(c, count, !x || !el || !scales, element_bytes, n_scales,
                                     task_begin, task_end, &v, &s0, &s1);
    if (st == QMX_OK) qmx__mx_quant_blocks(c, &v, x, count, el, scales, QMX__MX_VEC, s0, s1);
    return st;
}
QMX__DEF qmx_status qmx_mx_dequantize_run(const qmx_mx_config *c, const uint8_t *el,
                                          size_t element_bytes, const uint8_t *scales,
                                          size_t n_scales, size_t count, float *y,
                                          size_t task_begin, size_t task_end) {
    qmx__mxv v;
    size_t s0, s1;
    qmx_status st = qmx__mx_run_prep(c, count, !el || !scales || !y, element_bytes, n_scales,
                                     task_begin, task_end, &v, &s0, &s1);
    if (st == QMX_OK) qmx__mx_dequant_blocks(c, &v, el, scales, y, QMX__MX_VEC, s0, s1);
    return st;
}
typedef struct qmx__par_mxargs {
    const qmx_mx_config *c;
    const void *in;       /* x, or the elements */
    uint8_t *el;          /* quantize: the elements written */
    const uint8_t *sc_in; /* dequantize: the scales read */
    uint8_t *sc;          /* quantize: the scales written */
    float *y;
    size_t count, eb, ns;
    int deq;
} qmx__par_mxargs;
static qmx_status qmx__par_mxtask(const void *args, size_t tb, size_t te) {
    const qmx__par_mxargs *a = (const qmx__par_mxargs *)args;
    return a->deq ? qmx_mx_dequantize_run(a->c, (const uint8_t *)a->in, a->eb, a->sc_in, a->ns,
                                          a->count, a->y, tb, te)
                  : qmx_mx_quantize_run(a->c, (const float *)a->in, a->count, a->el, a->eb,
                                        a->sc, a->ns, tb, te);
}
static qmx_status qmx__par_mxexec(const qmx__par_mxargs *a, const qmx_executor *ex) {
    qmx__mxv v;
    size_t s0, s1;
    qmx_status st = qmx__mx_run_prep(a->c, a->count,   /* the serial call's checks */
                                     !a->in || (a->deq ? !a->sc_in || !a->y : !a->el || !a->sc),
                                     a->eb, a->ns, 0, 0, &v, &s0, &s1);
    if (st != QMX_OK) return st;
    return qmx__par_eexec(ex, qmx__mx_ntasks(&v), qmx__par_mxtask, a);
}
QMX__DEF qmx_status qmx_mx_quantize_exec(const qmx_mx_config *c, const float *x, size_t count,
                                         uint8_t *el, size_t element_bytes, uint8_t *scales,
                                         size_t n_scales, const qmx_executor *executor) {
    qmx__par_mxargs a;
    if (qmx__par_serial(executor))
        return qmx_mx_quantize(c, x, count, el, element_bytes, scales, n_scales);
    a.c = c; a.in = x; a.el = el; a.sc_in = NULL; a.sc = scales; a.y = NULL; a.count = count;
    a.eb = element_bytes; a.ns = n_scales; a.deq = 0;
    return qmx__par_mxexec(&a, executor);
}
QMX__DEF qmx_status qmx_mx_dequantize_exec(const qmx_mx_config *c, const uint8_t *el,
                                           size_t element_bytes, const uint8_t *scales,
                                           size_t n_scales, size_t count, float *y,
                                           const qmx_executor *executor) {
    qmx__par_mxargs a;
    if (qmx__par_serial(executor))
        return qmx_mx_dequantize(c, el, element_bytes, scales, n_scales, count, y);
    a.c = c; a.in = el; a.el = NULL; a.sc_in = scales; a.sc = NULL; a.y = y; a.count = count;
    a.eb = element_bytes; a.ns = n_scales; a.deq = 1;
    return qmx__par_mxexec(&a, executor);
}

/* ggml block layouts: the config must be MXFP4 blocks of 32 / NVFP4 blocks of 16 along a last
 * axis whose length holds whole ggml blocks (32 / 64 elements) */
static qmx_status qmx__mx_ggml_view(const qmx_mx_config *c, size_t count, qmx__mxv *v,
                                    size_t *bytes) {
    size_t per;
    qmx_status st = qmx__mx_resolve(c, count, v);
    if (st != QMX_OK) return st;
    if (!v->fp4) return QMX_ERR_UNSUPPORTED;
    per = v->nvfp4 ? 64 : 32;
    if (v->inner != 1) return QMX_ERR_UNSUPPORTED;
    if (v->len % per) return QMX_ERR_SHAPE;
    if (v->block != (v->nvfp4 ? 16u : 32u)) return QMX_ERR_UNSUPPORTED;
    *bytes = count / per * (v->nvfp4 ? 36 : 17);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_mx_ggml_bytes(const qmx_mx_config *c, size_t count, size_t *ggml_bytes) {
    qmx__mxv v;
    size_t n;
    qmx_status st;
    if (!ggml_bytes) return QMX_ERR_NULL;
    st = qmx__mx_ggml_view(c, count, &v, &n);
    if (st == QMX_OK) *ggml_bytes = n;
    return st;
}
QMX__DEF qmx_status qmx_mx_to_ggml(const qmx_mx_config *c, const uint8_t *el, size_t element_bytes,
                                   const uint8_t *scales, size_t n_scales, size_t count,
                                   uint8_t *out, size_t out_bytes) {
    qmx__mxv v;
    size_t n, b, j, s;
    qmx_status st = qmx__mx_ggml_view(c, count, &v, &n);
    if (st != QMX_OK) return st;
    if (!el || !scales || !out) return QMX_ERR_NULL;
    if (element_bytes < v.elem_bytes || n_scales < v.n_scales || out_bytes < n)
        return QMX_ERR_BUFFER_TOO_SMALL;
    if (!v.nvfp4) {
        for (b = 0; b < count / 32; b++) {                  /* block_mxfp4 */
            uint8_t *o = out + 17 * b;
            o[0] = scales[b];
            for (j = 0; j < 16; j++)
                o[1 + j] = (uint8_t)(qmx__get_nibble(el, 32 * b + j, 0) |
                                     qmx__get_nibble(el, 32 * b + j + 16, 0) << 4);
        }
        return QMX_OK;
    }
    for (b = 0; b < count / 64; b++) {                      /* block_nvfp4 */
        uint8_t *o = out + 36 * b;
        for (s = 0; s < 4; s++) {
            size_t e = 64 * b + 16 * s;
            o[s] = scales[4 * b + s];
            for (j = 0; j < 8; j++)
                o[4 + 8 * s + j] = (uint8_t)(qmx__get_nibble(el, e + j, 0) |
                                             qmx__get_nibble(el, e + j + 8, 0) << 4);
        }
    }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_mx_from_ggml(const qmx_mx_config *c, const uint8_t *in, size_t in_bytes,
                                     size_t count, uint8_t *el, size_t element_bytes,
                                     uint8_t *scales, size_t n_scales) {
    qmx__mxv v;
    size_t n, b, j, s;
    qmx_status st = qmx__mx_ggml_view(c, count, &v, &n);
    if (st != QMX_OK) return st;
    if (!in || !el || !scales) return QMX_ERR_NULL;
    if (in_bytes < n || element_bytes < v.elem_bytes || n_scales < v.n_scales)
        return QMX_ERR_BUFFER_TOO_SMALL;
    if (!v.nvfp4) {
        for (b = 0; b < count / 32; b++) {
            const uint8_t *p = in + 17 * b;
            scales[b] = p[0];
            for (j = 0; j < 16; j++) {
                qmx__set_nibble(el, 32 * b + j, p[1 + j] & 15);
                qmx__set_nibble(el, 32 * b + j + 16, p[1 + j] >> 4);
            }
        }
        return QMX_OK;
    }
    for (b = 0; b < count / 64; b++) {
        const uint8_t *p = in + 36 * b;
        for (s = 0; s < 4; s++) {
            size_t e = 64 * b + 16 * s;
            scales[4 * b + s] = p[s];
            for (j = 0; j < 8; j++) {
                qmx__set_nibble(el, e + j, p[4 + 8 * s + j] & 15);
                qmx__set_nibble(el, e + j + 8, p[4 + 8 * s + j] >> 4);
            }
        }
    }
    return QMX_OK;
}

/* ---- 7. requantization ---- */
/* frexp without libm: real = q * 2^e with |q| in [0.5, 1); returns the 53-bit significand of
 * |real| as an integer (q = sig * 2^-53) and e. real must be finite and non-zero. */
static uint64_t qmx__frexp_sig(double real, int *e) {
    uint64_t b = qmx__f64_bits(real);
    int be = (int)((b >> 52) & 0x7FF);
    uint64_t m = b & 0xFFFFFFFFFFFFFull;
    if (be == 0) {                     /* subnormal: normalise */
        int sh = 0;
        while (!(m & (1ull << 52))) { m <<= 1; sh++; }
        *e = -1022 - sh + 1;
        return m;
    }
    *e = be - 1022;
    return m | (1ull << 52);
}

static qmx_status qmx__quantize_multiplier(double real, int32_t *mult, int *shift, int single) {
    uint64_t sig, qf;
    int e, neg;
    int64_t q;
    if (!mult || !shift) return QMX_ERR_NULL;
    if ((qmx__f64_bits(real) & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) return QMX_ERR_NONFINITE;
    if (real == 0.0) { *mult = 0; *shift = 0; return QMX_OK; }
    neg = real < 0.0;
    sig = qmx__frexp_sig(real, &e);
    /* TfLiteRound(q * 2^31) with q = sig * 2^-53: round half away on sig * 2^-22 */
    qf = (sig + (1ull << 21)) >> 22;
    q = neg ? -(int64_t)qf : (int64_t)qf;
    /* TFLite halves only +2^31, which does not fit int32; -2^31 does and is kept */
    if (q == ((int64_t)1 << 31)) { q /= 2; e++; }
    if (e < -31) { e = 0; q = 0; }
    if (single && e > 30) { e = 30; q = 0x7FFFFFFF; }
    *mult = (int32_t)q;
    *shift = e;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_quantize_multiplier(double real, int32_t *mult, int *shift) {
    return qmx__quantize_multiplier(real, mult, shift, 0);
}
QMX__DEF qmx_status qmx_quantize_multiplier_single_rounding(double real, int32_t *mult, int *shift) {
    return qmx__quantize_multiplier(real, mult, shift, 1);
}

/* Arithmetic shift right of a signed 64-bit value, portable (C leaves >> of negatives to the
 * implementation). */
static int64_t qmx__asr64(int64_t x, int s) {
    return x >= 0 ? (int64_t)((uint64_t)x >> s) : -(int64_t)(((uint64_t)(-(x + 1)) >> s)) - 1;
}
static int32_t qmx__srdhm(int32_t a, int32_t b) {  /* gemmlowp SaturatingRoundingDoublingHighMul */
    int64_t ab, nudge, num;
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    ab = (int64_t)a * (int64_t)b;
    nudge = ab >= 0 ? (int64_t)1 << 30 : 1 - ((int64_t)1 << 30);
    num = ab + nudge;
    /* C division truncates toward zero, as gemmlowp's does */
    return (int32_t)(num / ((int64_t)1 << 31));
}
static int32_t qmx__rdbpot(int32_t x, int exponent) { /* gemmlowp RoundingDivideByPOT */
    int32_t mask, rem, thr, q;
    if (exponent == 0) return x;
    mask = (int32_t)(((uint32_t)1 << exponent) - 1u);
    rem = x & mask;
    thr = (mask >> 1) + (x < 0 ? 1 : 0);
    q = (int32_t)qmx__asr64(x, exponent);
    return q + (rem > thr ? 1 : 0);
}
static int qmx__clamp_shift(int shift) { return shift < -31 ? -31 : (shift > 30 ? 30 : shift); }

QMX__DEF int32_t qmx_requantize(int32_t acc, int32_t m, int shift) {
    int left, right;
    int32_t x;
    shift = qmx__clamp_shift(shift);
    left = shift > 0 ? shift : 0;
    right = shift > 0 ? 0 : -shift;
    x = (int32_t)((uint32_t)acc << left);  /* wraps mod 2^32 like TFLite's x * (1 << left) */
    return qmx__rdbpot(qmx__srdhm(x, m), right);
}
QMX__DEF int32_t qmx_requantize_single_rounding(int32_t acc, int32_t m, int shift) {
    int total;
    int64_t r;
    shift = qmx__clamp_shift(shift);
    if (m < 0) m = 0;
    total = 31 - shift;                    /* 1 .. 62 */
    r = (int64_t)acc * (int64_t)m + ((int64_t)1 << (total - 1));
    r = qmx__asr64(r, total);
    if (r > INT32_MAX) return INT32_MAX;
    if (r < INT32_MIN) return INT32_MIN;
    return (int32_t)r;
}
QMX__DEF int32_t qmx_requantize_float(int32_t acc, float scale) {
    float t = (float)acc;
    t = t * scale;
    if (qmx__isnan(t)) return 0;
    if (t >= 2147483648.0f) return INT32_MAX;
    if (t <= -2147483648.0f) return INT32_MIN;
    if (t > 16777216.0f || t < -16777216.0f) return (int32_t)t; /* already an integer */
    return qmx__round_rne(t);
}
QMX__DEF int32_t qmx_requantize_float_exact(int32_t acc, float scale) {
    uint32_t b = qmx__f32_bits(scale), e = (b >> 23) & 0xFFu;
    int64_t m = (int64_t)(b & 0x7FFFFFu), p, q, rem, half;
    int k;
    if (b >= 0x7F800000u) return 0;          /* negative, Inf, NaN: refused by the callers */
    if (e) m |= 0x800000;
    k = (e ? (int)e : 1) - 150;              /* scale = m * 2^k exactly */
    p = (int64_t)acc * m;                    /* |p| < 2^55 */
    if (k >= 0) {
        if (p == 0) return 0;
        if (k >= 31 || p > ((int64_t)INT32_MAX >> k) || p < ((int64_t)INT32_MIN >> k))
            return p > 0 ? INT32_MAX : INT32_MIN;
        return (int32_t)(p * ((int64_t)1 << k));
    }
    k = -k;
    if (k > 60) return 0;                    /* |p| / 2^k < 1/2 */
    q = qmx__asr64(p, k);                    /* floor */
    rem = p - q * ((int64_t)1 << k);         /* in [0, 2^k) */
    half = (int64_t)1 << (k - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    if (q > INT32_MAX) return INT32_MAX;
    if (q < INT32_MIN) return INT32_MIN;
    return (int32_t)q;
}
QMX__DEF qmx_status qmx_requantize_check(qmx_requant_mode mode, int32_t m, int shift) {
    if ((unsigned)mode > (unsigned)QMX_REQUANT_FLOAT_EXACT) return QMX_ERR_ARG;
    if (mode == QMX_REQUANT_FLOAT || mode == QMX_REQUANT_FLOAT_EXACT) return QMX_OK;
    if (shift < -31 || shift > 30) return QMX_ERR_ARG;
    if (mode == QMX_REQUANT_SINGLE_ROUNDING && m < 0) return QMX_ERR_ARG;
    return QMX_OK;
}

#if defined(QMX__RVV)
/* One row of an output stage on RVV (qmx_requantize_array; qmx_kernels.h's fully-connected
 * stage): out[j] = clamp(requant(acc[j] + bias[j]), lo, hi) + ozp, its low esize (1, 2) bytes
 * stored; mu / sh / sc per column when pc, else element 0. Defined in the SIMD section. */
typedef struct qmx__rvv_rqrow {
    int mode, pc, esize;
    const int32_t *acc, *bias, *mu;
    const int *sh;
    const float *sc;
    int32_t lo, hi, ozp;
    void *out;
} qmx__rvv_rqrow;
static void qmx__rvv_requant_row(const qmx__rvv_rqrow *r, size_t n);
#endif

QMX__DEF qmx_status qmx_requantize_array(const qmx_requant_config *c, const int32_t *acc,
                                         size_t rows, size_t channels, void *out, size_t out_bytes) {
    qmx_dtype od;
    int32_t lo = 0, hi = 0, amin, amax;
    size_t r, ch, n, need, np;
    if (!c || !acc || !out) return QMX_ERR_NULL;
    if (rows == 0 || channels == 0) return QMX_ERR_SIZE;
    od = c->out_dtype == QMX_DTYPE_INVALID ? QMX_INT8 : c->out_dtype;
    if (od != QMX_INT8 && od != QMX_INT16 && od != QMX_UINT8 && od != QMX_UINT16)
        return QMX_ERR_DTYPE;
    if ((unsigned)c->mode > (unsigned)QMX_REQUANT_FLOAT_EXACT) return QMX_ERR_ARG;
    if (!qmx__mul_ok(rows, channels, &n)) return QMX_ERR_OVERFLOW;
    if (qmx_dtype_storage_bytes(od, n, &need) != QMX_OK) return QMX_ERR_OVERFLOW;
    if (out_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    qmx_dtype_int_range(od, &lo, &hi);
    amin = c->act_min; amax = c->act_max;
    if (amin == 0 && amax == 0) { amin = lo; amax = hi; }
    if (amin < lo || amax > hi || amin > amax) return QMX_ERR_ARG;
    if (c->output_zero_point < lo || c->output_zero_point > hi) return QMX_ERR_ARG;
    np = c->per_channel ? channels : 1;
    if (c->mode == QMX_REQUANT_FLOAT || c->mode == QMX_REQUANT_FLOAT_EXACT) {
        if (!c->scales) return QMX_ERR_NULL;
        for (ch = 0; ch < np; ch++)
            if (!qmx__isfinite(c->scales[ch]) || !(c->scales[ch] > 0.0f)) return QMX_ERR_ARG;
    } else {
        if (!c->multipliers || !c->shifts) return QMX_ERR_NULL;
        for (ch = 0; ch < np; ch++)
            if (qmx_requantize_check(c->mode, c->multipliers[ch], c->shifts[ch]) != QMX_OK)
                return QMX_ERR_ARG;
    }
#if defined(QMX__RVV)
    if (c->mode != QMX_REQUANT_FLOAT_EXACT && sizeof(int) == 4) {   /* shifts read as int32 */
        qmx__rvv_rqrow w;   /* clamp(v, amin - zp, amax - zp) + zp: no overflow, zp in range */
        w.mode = (int)c->mode; w.pc = c->per_channel != 0;
        w.esize = od == QMX_INT16 || od == QMX_UINT16 ? 2 : 1;
        w.bias = c->bias; w.mu = c->multipliers; w.sh = c->shifts; w.sc = c->scales;
        w.lo = amin - c->output_zero_point; w.hi = amax - c->output_zero_point;
        w.ozp = c->output_zero_point;
        for (r = 0; r < rows; r++) {
            w.acc = acc + r * channels;
            w.out = (uint8_t *)out + r * channels * (size_t)w.esize;
            qmx__rvv_requant_row(&w, channels);
        }
        return QMX_OK;
    }
#endif
    for (r = 0; r < rows; r++) {
        for (ch = 0; ch < channels; ch++) {
            size_t pi = c->per_channel ? ch : 0;
            int32_t a = acc[r * channels + ch], v;
            int64_t w;
            if (c->bias) a = (int32_t)((uint32_t)a + (uint32_t)c->bias[ch]);
            if (c->mode == QMX_REQUANT_DOUBLE_ROUNDING)
                v = qmx_requantize(a, c->multipliers[pi], c->shifts[pi]);
            else if (c->mode == QMX_REQUANT_SINGLE_ROUNDING)
                v = qmx_requantize_single_rounding(a, c->multipliers[pi], c->shifts[pi]);
            else if (c->mode == QMX_REQUANT_FLOAT)
                v = qmx_requantize_float(a, c->scales[pi]);
            else
                v = qmx_requantize_float_exact(a, c->scales[pi]);
            w = (int64_t)v + c->output_zero_point;
            if (w < amin) w = amin;
            if (w > amax) w = amax;
            switch (od) {
            case QMX_INT8: ((int8_t *)out)[r * channels + ch] = (int8_t)w; break;
            case QMX_UINT8: ((uint8_t *)out)[r * channels + ch] = (uint8_t)w; break;
            case QMX_UINT16: ((uint16_t *)out)[r * channels + ch] = (uint16_t)w; break;
            default: ((int16_t *)out)[r * channels + ch] = (int16_t)w; break;
            }
        }
    }
    return QMX_OK;
}

/* ---- 8. interop ---- */
QMX__DEF float qmx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) return qmx__bits_f32(sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u));
    if (e) return qmx__bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    if (!m) return qmx__bits_f32(sign);
    e = 113;                                 /* subnormal m * 2^-24: normalise */
    while (!(m & 0x400u)) { m <<= 1; e--; }
    return qmx__bits_f32(sign | (e << 23) | ((m & 0x3FFu) << 13));
}
QMX__DEF uint16_t qmx_f32_to_f16(float x) {
    uint32_t u = qmx__f32_bits(x), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    uint32_t m, k, sh, rem, half;
    if (a > 0x7F800000u) {                    /* NaN: sign and top payload bits, as numpy */
        m = (a & 0x7FFFFFu) >> 13;
        return (uint16_t)(sign | 0x7C00u | (m ? m : 1u));
    }
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);  /* >= 65520: Inf */
    if (a >= 0x38800000u) {                   /* normal binary16: rebias, round on 13 bits */
        uint32_t r = a - 0x38000000u;
        return (uint16_t)(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13));
    }
    if (a <= 0x33000000u) return (uint16_t)sign;              /* <= 2^-25: zero (ties even) */
    m = (a & 0x7FFFFFu) | 0x800000u;          /* value m * 2^(e - 150); subnormal k * 2^-24 */
    sh = 126u - (a >> 23);                    /* 14 .. 24 */
    k = m >> sh;
    rem = m & ((1u << sh) - 1u);
    half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (k & 1u))) k++;
    return (uint16_t)(sign | k);
}
QMX__DEF float qmx_bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    return qmx__bits_f32((u & 0x7FFFFFFFu) > 0x7F800000u ? u | 0x400000u : u);   /* quiet NaN */
}
QMX__DEF uint16_t qmx_f32_to_bf16(float x) {
    uint32_t u = qmx__f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* Shared checks of the ggml converters: n a non-zero multiple of 32, enough blocks and
 * parameters; the number of blocks in *nb. */
static qmx_status qmx__ggml_check(size_t n, size_t blocks_bytes, size_t block_bytes,
                                  size_t n_params, size_t *nb) {
    if (n == 0) return QMX_ERR_SIZE;
    if (n % QMX_GGML_BLOCK) return QMX_ERR_SHAPE;
    *nb = n / QMX_GGML_BLOCK;
    if (n_params < *nb || blocks_bytes / block_bytes < *nb) return QMX_ERR_BUFFER_TOO_SMALL;
    return QMX_OK;
}
/* binary16 bits of a scale that is exactly representable, or QMX_ERR_ARG. */
static qmx_status qmx__ggml_scale_f16(float s, uint16_t *h) {
    if (!qmx__isfinite(s) || !(s > 0.0f)) return QMX_ERR_ARG;
    *h = qmx_f32_to_f16(s);
    return qmx__f32_bits(qmx_f16_to_f32(*h)) == qmx__f32_bits(s) ? QMX_OK : QMX_ERR_ARG;
}
static float qmx__ggml_d(const uint8_t *blk) {
    return qmx_f16_to_f32((uint16_t)(blk[0] | ((uint16_t)blk[1] << 8)));
}

QMX__DEF qmx_status qmx_ggml_q8_0_from_qmx(const int8_t *q, size_t n, const float *scales,
                                           size_t n_scales, uint8_t *blocks, size_t blocks_bytes) {
    size_t nb, b, j;
    uint16_t h;
    qmx_status st;
    if (!q || !scales || !blocks) return QMX_ERR_NULL;
    st = qmx__ggml_check(n, blocks_bytes, QMX_GGML_Q8_0_BLOCK_BYTES, n_scales, &nb);
    if (st != QMX_OK) return st;
    for (b = 0; b < nb; b++)
        if (qmx__ggml_scale_f16(scales[b], &h) != QMX_OK) return QMX_ERR_ARG;
    for (b = 0; b < nb; b++) {
        uint8_t *o = blocks + b * QMX_GGML_Q8_0_BLOCK_BYTES;
        qmx__ggml_scale_f16(scales[b], &h);
        o[0] = (uint8_t)(h & 0xFFu); o[1] = (uint8_t)(h >> 8);
        for (j = 0; j < QMX_GGML_BLOCK; j++) o[2 + j] = (uint8_t)q[b * QMX_GGML_BLOCK + j];
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_ggml_q8_0_to_qmx(const uint8_t *blocks, size_t blocks_bytes, size_t n,
                                         int8_t *q, size_t q_len, float *scales, size_t n_scales) {
    size_t nb, b, j;
    qmx_status st;
    if (!blocks || !q || !scales) return QMX_ERR_NULL;
    st = qmx__ggml_check(n, blocks_bytes, QMX_GGML_Q8_0_BLOCK_BYTES, n_scales, &nb);
    if (st != QMX_OK) return st;
    if (q_len < n) return QMX_ERR_BUFFER_TOO_SMALL;
    for (b = 0; b < nb; b++) {   /* validate every block before writing */
        const uint8_t *blk = blocks + b * QMX_GGML_Q8_0_BLOCK_BYTES;
        float d = qmx__ggml_d(blk);
        if (!qmx__isfinite(d)) return QMX_ERR_NONFINITE;
        if (d < 0.0f)
            for (j = 0; j < QMX_GGML_BLOCK; j++)
                if (blk[2 + j] == 0x80u) return QMX_ERR_UNSUPPORTED;
    }
    for (b = 0; b < nb; b++) {
        const uint8_t *blk = blocks + b * QMX_GGML_Q8_0_BLOCK_BYTES;
        float d = qmx__ggml_d(blk);
        int8_t *o = q + b * QMX_GGML_BLOCK;
        for (j = 0; j < QMX_GGML_BLOCK; j++) {
            int32_t v = (int32_t)(int8_t)blk[2 + j];
            o[j] = (int8_t)(d > 0.0f ? v : (d < 0.0f ? -v : 0));
        }
        scales[b] = d > 0.0f ? d : (d < 0.0f ? -d : 1.0f);
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_ggml_q4_0_from_qmx(qmx_dtype dtype, const uint8_t *q, size_t n,
                                           const float *scales, const int32_t *zero_points,
                                           size_t n_params, uint8_t *blocks, size_t blocks_bytes) {
    size_t nb, b, j;
    uint16_t h;
    qmx_status st;
    if (!q || !scales || !blocks) return QMX_ERR_NULL;
    if (dtype != QMX_INT4 && dtype != QMX_UINT4) return QMX_ERR_DTYPE;
    if (dtype == QMX_UINT4 && !zero_points) return QMX_ERR_NULL;
    st = qmx__ggml_check(n, blocks_bytes, QMX_GGML_Q4_0_BLOCK_BYTES, n_params, &nb);
    if (st != QMX_OK) return st;
    for (b = 0; b < nb; b++) {
        if (qmx__ggml_scale_f16(scales[b], &h) != QMX_OK) return QMX_ERR_ARG;
        if (dtype == QMX_UINT4 && zero_points[b] != 7 && zero_points[b] != 8) return QMX_ERR_ARG;
    }
    for (b = 0; b < nb; b++) {
        uint8_t *o = blocks + b * QMX_GGML_Q4_0_BLOCK_BYTES;
        /* nibble of element e: int4 v -> v + 8 (= bits ^ 8); uint4 zp 8: u; zp 7: 15 - u */
        uint32_t x = dtype == QMX_INT4 ? 8u : (zero_points[b] == 8 ? 0u : 15u);
        qmx__ggml_scale_f16(scales[b], &h);
        if (dtype == QMX_UINT4 && zero_points[b] == 7) h |= 0x8000u;   /* d = -scale */
        o[0] = (uint8_t)(h & 0xFFu); o[1] = (uint8_t)(h >> 8);
        for (j = 0; j < QMX_GGML_BLOCK / 2; j++) {
            size_t e = b * QMX_GGML_BLOCK + j;
            uint32_t lo = ((q[e / 2] >> ((e & 1) * 4)) & 0xFu) ^ x;
            uint32_t hi = ((q[(e + 16) / 2] >> (((e + 16) & 1) * 4)) & 0xFu) ^ x;
            o[2 + j] = (uint8_t)(lo | (hi << 4));
        }
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_ggml_q4_0_to_qmx(const uint8_t *blocks, size_t blocks_bytes, size_t n,
                                         uint8_t *q_uint4, size_t q_bytes, float *scales,
                                         int32_t *zero_points, size_t n_params) {
    size_t nb, b, j;
    qmx_status st;
    if (!blocks || !q_uint4 || !scales || !zero_points) return QMX_ERR_NULL;
    st = qmx__ggml_check(n, blocks_bytes, QMX_GGML_Q4_0_BLOCK_BYTES, n_params, &nb);
    if (st != QMX_OK) return st;
    if (q_bytes < n / 2) return QMX_ERR_BUFFER_TOO_SMALL;
    for (b = 0; b < nb; b++)
        if (!qmx__isfinite(qmx__ggml_d(blocks + b * QMX_GGML_Q4_0_BLOCK_BYTES))) return QMX_ERR_NONFINITE;
    for (b = 0; b < nb; b++) {
        const uint8_t *blk = blocks + b * QMX_GGML_Q4_0_BLOCK_BYTES;
        float d = qmx__ggml_d(blk);
        uint8_t *o = q_uint4 + b * (QMX_GGML_BLOCK / 2);
        /* element j < 16 is the low nibble of qs[j], element 16 + j the high one; qmx pairs
         * elements 2i, 2i+1 in byte i */
        for (j = 0; j < QMX_GGML_BLOCK / 2; j++) {
            uint32_t e0 = (uint32_t)(j < 8 ? blk[2 + 2 * j] : blk[2 + 2 * j - 16] >> 4) & 0xFu;
            uint32_t e1 = (uint32_t)(j < 8 ? blk[3 + 2 * j] : blk[3 + 2 * j - 16] >> 4) & 0xFu;
            if (d < 0.0f) { e0 = 15u - e0; e1 = 15u - e1; }
            else if (!(d > 0.0f)) { e0 = 8u; e1 = 8u; }
            o[j] = (uint8_t)(e0 | (e1 << 4));
        }
        scales[b] = d > 0.0f ? d : (d < 0.0f ? -d : 1.0f);
        zero_points[b] = d < 0.0f ? 7 : 8;
    }
    return QMX_OK;
}

/* ============================================================================================
 * SIMD paths. Each handles a prefix of the run and returns its length; the scalar reference
 * finishes the tail. Every path computes exactly the scalar expression: the same IEEE
 * operations (multiply or divide, add), the same clamp, nearest-even with an explicit
 * rounding mode (never the MXCSR/FPCR state), so the bits are identical.
 * ============================================================================================ */
/* Helpers of the vector kernels are forced inline: each kernel is instantiated once per
 * combination of its compile-time flags (divide or multiply, rounding, saturation, format),
 * so the loops carry no run-time branches. */
#if defined(__GNUC__) || defined(__clang__)
#  define QMX__VINLINE static __inline__ __attribute__((always_inline))
#elif defined(_MSC_VER)
#  define QMX__VINLINE static __forceinline
#else
#  define QMX__VINLINE static
#endif

/* How each kernel matches its scalar reference bit for bit:
 * - int8 quantize: the same t = x / scale or x * inv (+ zp_f) as IEEE single operations, clamp
 *   with max(lo, t) and min(hi, t), then an integer conversion with an explicit rounding mode:
 *   nearest-even directly; half away from zero as trunc(t + (t - trunc(t))), exact for the
 *   clamped |t| < 2^22 (t - trunc(t) is exact, and adding it back doubles the fraction without
 *   rounding). The clamp's operand order lets a NaN t through; converting it gives 0x80000000
 *   on x86 (low byte 0) and 0 on AArch64, so with + zp_i and the truncating narrow to int8 a NaN
 *   becomes zp_i, the scalar's NaN result. Only Qwix's zp_f needs an explicit NaN mask.
 * - x * inv + zp_f is never produced by qmx__make_run (only Qwix adds zp_f, and Qwix divides);
 *   a compiler allowed to contract could fuse it into an FMA in either path, so that
 *   combination is left to the scalar kernel.
 * - fp8 encode (AVX2, NEON) mirrors qmx__fp8_encode on 32-bit lanes: a = |bits|; normal lanes
 *   round with (a + half - 1 + lsb) >> drop (the exponent rebias folded into the constant);
 *   fp8-subnormal lanes (|t| < 2^emin, f32 zero and subnormals included) are |t| * 2^(mbits -
 *   emin), an exact power-of-two scaling, converted with an explicit nearest-even rounding: the
 *   same integer as the scalar's shift-and-round. Saturation clips |t| to max first (equal to
 *   clipping the rounded code); otherwise overflow (Inf included: its rounded code exceeds the
 *   max) becomes the overflow code. NaN becomes the NaN code, and the sign goes on last (FNUZ:
 *   not on a zero code; its NaN/overflow code 0x80 absorbs the sign). AVX-512 rounds with one
 *   explicitly rounded FMA instead (see there).
 * - fp8 decode builds the float bits: normal (a << (23 - mbits)) + ((127 - bias) << 23); with
 *   exponent field 0 that reads 2^-bias * (1 + m / 2^mbits), and the subnormal value is twice that
 *   minus 2^emin (both steps exact); specials by mask, then the sign. */
#if defined(QMX__AVX512) || defined(QMX__AVX2) || defined(QMX__NEON64) || defined(QMX__RVV)
typedef struct qmx__f8c {
    int32_t drop;        /* 23 - mbits */
    uint32_t kadd;       /* 2^(drop-1) - 1 - ((127 - bias) << 23), wrapping */
    uint32_t thr;        /* |bits| >= thr: normal fp8 grid ((128 - bias) << 23) */
    float subk;          /* 2^(mbits - emin) = 2^(mbits + bias - 1) */
    uint32_t maxc;       /* largest finite code */
    uint32_t ovf;        /* overflow code magnitude without saturation */
    uint32_t nan;        /* NaN code magnitude */
    float maxf;          /* largest finite value */
    uint32_t nanb;       /* bits of the value 2^(e - bias) * 1.m whose code is the NaN code */
    uint32_t tovf;       /* |bits| >= tovf rounds beyond the largest code */
    float sdrop;         /* AVX-512: 2^-drop */
    uint32_t adj;        /* decode: (127 - bias) << 23 */
    float eminf;         /* decode: 2^emin, the smallest normal */
    int kind;            /* 0 E4M3FN, 1 E5M2, 2 FNUZ */
} qmx__f8c;

static void qmx__f8c_init(const qmx__fp8fmt *f, qmx__f8c *k) {
    int drop = 23 - f->mbits;
    k->drop = drop;
    k->kadd = ((1u << (drop - 1)) - 1u) - ((uint32_t)(127 - f->bias) << 23);
    k->thr = (uint32_t)(128 - f->bias) << 23;
    k->subk = qmx__bits_f32((uint32_t)(127 + f->mbits + f->bias - 1) << 23);
    k->maxc = f->max_code;
    k->ovf = f->has_inf ? 0x7Cu : (f->fnuz ? 0x80u : 0x7Fu);
    k->nan = f->fnuz ? 0x80u : 0x7Fu;
    k->maxf = qmx__bits_f32(qmx__fp8_decode_bits((uint8_t)f->max_code, f));
    k->nanb = (k->nan << drop) + ((uint32_t)(127 - f->bias) << 23);
    k->tovf = qmx__f32_bits(k->maxf) + (1u << (drop - 1)) + ((f->max_code & 1u) ? 0u : 1u);
    k->sdrop = qmx__bits_f32((uint32_t)(127 - drop) << 23);
    k->adj = (uint32_t)(127 - f->bias) << 23;
    k->eminf = qmx__bits_f32((uint32_t)(128 - f->bias) << 23);
    k->kind = f->fnuz ? 2 : (f->has_inf ? 1 : 0);
}

#endif

#if defined(QMX__AVX512)
/* ---- AVX-512 (F + BW + VL): 16 lanes, masked loads/stores finish every run ---- */
/* g++ 12 reports the self-initialised `__Y = __Y` of _mm512_undefined_*() inside the intrinsics
 * as uninitialised once they are inlined (GCC PR 105593); the pragma covers these call sites. */
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
typedef struct qmx__q512 {
    __m512 s, zpf, lo, hi;
    __m512i zpi, nanv, zp16, ff, perm, m128, lo8, hi8;
} qmx__q512;

/* One vector: the clamped, rounded value before zp_i. */
QMX__VINLINE __m512i qmx__q512_one_s(__m512 v, __m512 s, const qmx__q512 *k, int div, int addz,
                                     int away) {
    __m512 t = div ? _mm512_div_ps(v, s) : _mm512_mul_ps(v, s);
    __mmask16 nan = 0;
    __m512i r;
    if (addz) {
        t = _mm512_add_ps(t, k->zpf);
        nan = _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q);
    }
    t = _mm512_min_ps(k->hi, _mm512_max_ps(k->lo, t));  /* vmaxps/vminps pass a NaN t through */
    if (away) {
        __m512 fr = _mm512_sub_ps(t, _mm512_roundscale_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
        r = _mm512_cvtt_roundps_epi32(_mm512_add_ps(t, fr), _MM_FROUND_NO_EXC);
    } else {
        r = _mm512_cvt_roundps_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    if (addz) r = _mm512_mask_mov_epi32(r, nan, k->nanv);
    return r;
}
QMX__VINLINE __m512i qmx__q512_one(__m512 v, const qmx__q512 *k, int div, int addz, int away) {
    return qmx__q512_one_s(v, k->s, k, div, addz, away);
}

/* 64 results to 64 bytes: int16 packs (exact for the clamped |r| <= 2^15; 0x80000000 -> 0x8000),
 * + zp_i, keep the low byte, pack, restore element order. */
QMX__VINLINE __m512i qmx__q512_pack(__m512i r0, __m512i r1, __m512i r2, __m512i r3,
                                    const qmx__q512 *k, int zpi) {
    __m512i ab = _mm512_packs_epi32(r0, r1), cd = _mm512_packs_epi32(r2, r3);
    if (zpi) {
        ab = _mm512_add_epi16(ab, k->zp16);
        cd = _mm512_add_epi16(cd, k->zp16);
    }
    ab = _mm512_and_si512(ab, k->ff);
    cd = _mm512_and_si512(cd, k->ff);
    return _mm512_permutexvar_epi32(k->perm, _mm512_packus_epi16(ab, cd));
}

/* The multiply-round-narrow path (x * s, nearest-even, no zero point, integer bounds within
 * [-127, 127]) leaves the clamp to the saturating packs and two byte min/max per 64: 2 ops per
 * 16 floats and 6 per 64 instead of 4 and 6. Clamping to integer bounds commutes with rounding
 * to an integer, so the bits are the same, except where vcvtps2dq gives 0x80000000 (NaN,
 * |t| >= 2^31: zero point and clamp in the scalar rule) or t rounds below -127 (which a
 * bound of -127 or above clamps): both leave a byte -128, which no in-range result has, and
 * such a 64 is redone by qmx__q512_one. On Zen 5: 1.4x faster in L1; in L2 the memory
 * traffic bounds both. */
QMX__VINLINE int qmx__q512_narrow64(const float *x, const qmx__q512 *k, __m512i *c) {
    __m512i r0 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x), k->s),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i r1 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16), k->s),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i r2 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 32), k->s),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i r3 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 48), k->s),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i b = _mm512_packs_epi16(_mm512_packs_epi32(r0, r1), _mm512_packs_epi32(r2, r3));
    if (_mm512_cmpeq_epi8_mask(b, k->m128)) {   /* rare: NaN, huge, or clamped at -127 */
        *c = qmx__q512_pack(qmx__q512_one(_mm512_loadu_ps(x), k, 0, 0, 0),
                            qmx__q512_one(_mm512_loadu_ps(x + 16), k, 0, 0, 0),
                            qmx__q512_one(_mm512_loadu_ps(x + 32), k, 0, 0, 0),
                            qmx__q512_one(_mm512_loadu_ps(x + 48), k, 0, 0, 0), k, 0);
        return 1;
    }
    b = _mm512_min_epi8(_mm512_max_epi8(b, k->lo8), k->hi8);
    *c = _mm512_permutexvar_epi32(k->perm, b);
    return 0;
}

/* Runs this long (bytes of int8 output; the float input is 4x that) store with non-temporal
 * stores: the output of a quantization larger than the caches is not read back soon, and
 * writing it around the caches leaves them to the input (only the speed differs). */
/* Software prefetch distance of those runs, in floats (8 KiB). */
#define QMX__Q512_PF_DIST 2048u
#ifndef QMX_NT_STORE_MIN
#define QMX_NT_STORE_MIN ((size_t)4 << 20)
#endif
/* Streaming runs: the 256 input bytes QMX__Q512_PF_DIST floats ahead of x + i, with the
 * non-temporal hint (the run is read once), when they are still inside x[0..n). */
QMX__VINLINE void qmx__q512_prefetch(const float *x, size_t i, size_t n) {
    if (n - i >= QMX__Q512_PF_DIST + 64) {
        const char *pf = (const char *)(x + i + QMX__Q512_PF_DIST);
        _mm_prefetch(pf, _MM_HINT_NTA);
        _mm_prefetch(pf + 64, _MM_HINT_NTA);
        _mm_prefetch(pf + 128, _MM_HINT_NTA);
        _mm_prefetch(pf + 192, _MM_HINT_NTA);
    }
}
QMX__VINLINE size_t qmx__q512_loop(const float *x, size_t n, const qmx__q512 *k, int8_t *q,
                                   int div, int addz, int away, int zpi, int narrow) {
    size_t i = 0;
    if (n >= QMX_NT_STORE_MIN && n >= 64) {   /* n >= 64: the head below stays inside q */
        /* masked plain stores up to a 64-byte boundary of q (< 64 elements), then streaming */
        size_t head = (size_t)((64u - ((uintptr_t)q & 63u)) & 63u);
        while (i < head) {
            size_t c = head - i < 16 ? head - i : 16;
            __mmask16 m = (__mmask16)((1u << c) - 1u);
            __m512i r = qmx__q512_one(_mm512_maskz_loadu_ps(m, x + i), k, div, addz, away);
            if (zpi) r = _mm512_add_epi32(r, k->zpi);
            _mm512_mask_cvtepi32_storeu_epi8(q + i, m, r);
            i += c;
        }
        for (; narrow && i + 64 <= n; i += 64) {
            __m512i c;
            qmx__q512_prefetch(x, i, n);
            qmx__q512_narrow64(x + i, k, &c);
            _mm512_stream_si512((__m512i *)(void *)(q + i), c);
        }
        for (; i + 64 <= n; i += 64) {
            __m512i r0, r1, r2, r3;
            qmx__q512_prefetch(x, i, n);
            r0 = qmx__q512_one(_mm512_loadu_ps(x + i), k, div, addz, away);
            r1 = qmx__q512_one(_mm512_loadu_ps(x + i + 16), k, div, addz, away);
            r2 = qmx__q512_one(_mm512_loadu_ps(x + i + 32), k, div, addz, away);
            r3 = qmx__q512_one(_mm512_loadu_ps(x + i + 48), k, div, addz, away);
            _mm512_stream_si512((__m512i *)(void *)(q + i), qmx__q512_pack(r0, r1, r2, r3, k, zpi));
        }
        _mm_sfence();
    }
    for (; narrow && i + 64 <= n; i += 64) {
        __m512i c;
        qmx__q512_narrow64(x + i, k, &c);
        _mm512_storeu_si512((void *)(q + i), c);
    }
    for (; i + 64 <= n; i += 64) {
        __m512i r0 = qmx__q512_one(_mm512_loadu_ps(x + i), k, div, addz, away);
        __m512i r1 = qmx__q512_one(_mm512_loadu_ps(x + i + 16), k, div, addz, away);
        __m512i r2 = qmx__q512_one(_mm512_loadu_ps(x + i + 32), k, div, addz, away);
        __m512i r3 = qmx__q512_one(_mm512_loadu_ps(x + i + 48), k, div, addz, away);
        _mm512_storeu_si512((void *)(q + i), qmx__q512_pack(r0, r1, r2, r3, k, zpi));
    }
    for (; i < n; i += 16) {  /* + zp_i in 32 bits, vpmovdb keeps the low byte */
        __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        __m512i r = qmx__q512_one(_mm512_maskz_loadu_ps(m, x + i), k, div, addz, away);
        if (zpi) r = _mm512_add_epi32(r, k->zpi);
        _mm512_mask_cvtepi32_storeu_epi8(q + i, m, r);
    }
    return n;
}

static size_t qmx__quant_run_s8_simd(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    qmx__q512 k;
    int div = p->use_div != 0, addz = p->zp_f != 0.0f, away = p->round == QMX_ROUND_HALF_AWAY;
    int zpi = p->zp_i != 0;
    if (p->round == QMX_ROUND_STOCHASTIC || (addz && !div)) return 0;
    if (!(p->lo_f >= -32767.0f && p->hi_f <= 32767.0f)) return 0;  /* int16 packing range */
    k.s = _mm512_set1_ps(div ? p->scale : p->inv);
    k.zpf = _mm512_set1_ps(p->zp_f);
    k.lo = _mm512_set1_ps(p->lo_f);
    k.hi = _mm512_set1_ps(p->hi_f);
    k.zpi = _mm512_set1_epi32(p->zp_i);
    k.nanv = _mm512_set1_epi32((int32_t)p->zp_f);   /* + zp_i later: zp_i + (int32_t)zp_f */
    k.zp16 = _mm512_set1_epi16((short)(p->zp_i & 0xFF));
    k.ff = _mm512_set1_epi16(0xFF);
    k.perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    k.m128 = _mm512_set1_epi8(-128);
    if (!div && !addz && !away && !zpi && p->lo_f >= -127.0f && p->hi_f <= 127.0f) {
        k.lo8 = _mm512_set1_epi8((char)(int)p->lo_f);   /* integers in [-127, 127] */
        k.hi8 = _mm512_set1_epi8((char)(int)p->hi_f);
        return qmx__q512_loop(x, n, &k, q, 0, 0, 0, 0, 1);
    }
    switch ((div << 3) | (addz << 2) | (away << 1) | zpi) {
    case 0: return qmx__q512_loop(x, n, &k, q, 0, 0, 0, 0, 0);
    case 1: return qmx__q512_loop(x, n, &k, q, 0, 0, 0, 1, 0);
    case 2: return qmx__q512_loop(x, n, &k, q, 0, 0, 1, 0, 0);
    case 3: return qmx__q512_loop(x, n, &k, q, 0, 0, 1, 1, 0);
    case 8: return qmx__q512_loop(x, n, &k, q, 1, 0, 0, 0, 0);
    case 9: return qmx__q512_loop(x, n, &k, q, 1, 0, 0, 1, 0);
    case 10: return qmx__q512_loop(x, n, &k, q, 1, 0, 1, 0, 0);
    case 11: return qmx__q512_loop(x, n, &k, q, 1, 0, 1, 1, 0);
    case 12: return qmx__q512_loop(x, n, &k, q, 1, 1, 0, 0, 0);
    case 13: return qmx__q512_loop(x, n, &k, q, 1, 1, 0, 1, 0);
    case 14: return qmx__q512_loop(x, n, &k, q, 1, 1, 1, 0, 0);
    default: return qmx__q512_loop(x, n, &k, q, 1, 1, 1, 1, 0);
    }
}

QMX__VINLINE __m512 qmx__dq512_one(__m128i b, __m512i z, __m512 s) {
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(b), z)), s);
}
static size_t qmx__dequant_run_s8_simd(const int8_t *q, size_t n, int32_t zp, float s, float *y) {
    __m512i z = _mm512_set1_epi32(zp);
    __m512 vs = _mm512_set1_ps(s);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 y0 = qmx__dq512_one(_mm_loadu_si128((const __m128i *)(const void *)(q + i)), z, vs);
        __m512 y1 = qmx__dq512_one(_mm_loadu_si128((const __m128i *)(const void *)(q + i + 16)), z, vs);
        __m512 y2 = qmx__dq512_one(_mm_loadu_si128((const __m128i *)(const void *)(q + i + 32)), z, vs);
        __m512 y3 = qmx__dq512_one(_mm_loadu_si128((const __m128i *)(const void *)(q + i + 48)), z, vs);
        _mm512_storeu_ps(y + i, y0);
        _mm512_storeu_ps(y + i + 16, y1);
        _mm512_storeu_ps(y + i + 32, y2);
        _mm512_storeu_ps(y + i + 48, y3);
    }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, qmx__dq512_one(_mm_maskz_loadu_epi8(m, q + i), z, vs));
    }
    return n;
}

typedef struct qmx__f8q512 {
    __m512 s, maxf, sdrop;
    __m512i absm, maxb, thr, tlo, thi, low7, d7f, nani, bidx, sidx, ff, perm, nzlo, nzhi;
} qmx__f8q512;

/* fp8 encode with one explicitly rounded fused multiply-add. For a = |t| clipped to maxf, let
 * E = max(exponent(a), emin) and M = 2^E * (1 + ((E - emin) << mbits) / 2^23) (looked up from a
 * 32-entry table by the biased E mod 32). a * 2^-drop + M stays in M's binade, whose ulp
 * 2^(E - 23) is the fp8 quantum at a (normal or subnormal) times 2^-drop, so the {rn-sae} FMA
 * (one rounding; the product is exact) rounds a to the fp8 grid nearest-even: its bits are
 * bits(M) + k, k the number of quanta (M's mantissa is even, so ties go to even k), and the low
 * byte of bits(M) + k is the code k + ((E - emin) << mbits).
 * Saturation and overflow need no compare-and-select: maxf is the largest finite value when
 * saturating, else the value whose code is the overflow code (E4M3FN 480 -> 0x7F, E5M2 2^16 ->
 * 0x7C Inf, FNUZ -> 0x80), and every a in (max, maxf) rounds up to that code as in the scalar
 * code (both nearest-even). A NaN is clipped to maxf as well but takes the spare table entry
 * 31 (masked index), whose M turns maxf into the NaN code.
 * Returns bits(M) + k (code in byte 0; bit 7 clear but for the FNUZ 0x80); the sign is merged
 * per 64 codes by qmx__f8q512_pack. 7 ops per 16 lanes (6 when the caller has found no NaN
 * in t: nan_check = 0): no per-lane select of the overflow / NaN codes and no per-lane sign
 * merge. */
QMX__VINLINE __m512i qmx__f8q512_one(__m512 t, const qmx__f8q512 *k, int nan_check) {
    __m512i a, eb;
#if defined(__AVX512DQ__)
    /* a = min(|t|, maxf) in one op (vrangeps min-abs, sign cleared); a NaN gives maxf */
    a = _mm512_castps_si512(_mm512_range_ps(t, k->maxf, 0x0A));
#else   /* the same on the bits: |t| as unsigned, a NaN is above maxf */
    a = _mm512_min_epu32(_mm512_and_si512(_mm512_castps_si512(t), k->absm), k->maxb);
#endif
    eb = _mm512_max_epi32(a, k->thr);                                  /* max(E, emin) */
    eb = nan_check ? _mm512_mask_srli_epi32(k->nani, _mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), eb, 23)
                   : _mm512_srli_epi32(eb, 23);
    eb = _mm512_permutex2var_epi32(k->tlo, eb, k->thi);          /* M, by E mod 32 */
    return _mm512_castps_si512(_mm512_fmadd_round_ps(
        _mm512_castsi512_ps(a), k->sdrop, _mm512_castsi512_ps(eb),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* 64 results y (codes in byte 0) and the scaled inputs u (sign in bit 31) to 64 output bytes:
 * code | sign (bit 7 of a code is clear but for the FNUZ NaN code 0x80, which a sign leaves as
 * it is). FNUZ: a zero code gets no sign (no -0): the sign is masked by a 128-entry lookup of
 * the code (0 for code 0, else 0x80; vpermt2b ignores bit 7, so 0x80 looks up 0 and stays
 * 0x80). A byte mask (vptestmb, then zero-masked sign gathers) gives the same bits, 7 % slower
 * on Zen 5. */
QMX__VINLINE __m512i qmx__f8q512_pack(const __m512i *y, const __m512i *u, const qmx__f8q512 *k,
                                      int fnuz) {
    __m512i c;
#if defined(__AVX512VBMI__)
    /* gather byte 0 of the codes and byte 3 of the inputs across registers (vpermi2b, two
     * per 64): 5 ops per 64 with the merge, against a shift and a merge per 16 and 4 packing
     * ops per 64. No blend: the first gather fills bytes 0..31 and passes the index's bytes
     * 32..63 through (merge masking, vpermi2b writes its index register), which index the
     * second gather into bytes 32..63. Zen 4 (512-bit ops double-pumped, the encode bound by
     * its op count in L2): 1.78 -> 1.64x the int8 AQT time against blends, same bits */
    __m512i s;
    const __mmask64 lo = (__mmask64)0xFFFFFFFFu;
    c = _mm512_mask2_permutex2var_epi8(y[0], k->bidx, lo, y[1]);
    c = _mm512_mask2_permutex2var_epi8(y[2], c, ~lo, y[3]);
    s = _mm512_mask2_permutex2var_epi8(u[0], k->sidx, lo, u[1]);
    s = _mm512_mask2_permutex2var_epi8(u[2], s, ~lo, u[3]);
    if (fnuz)   /* c | s & (0x80 if c & 0x7F) */
        return _mm512_ternarylogic_epi32(c, s, _mm512_permutex2var_epi8(k->nzlo, c, k->nzhi), 0xF8);
    return _mm512_ternarylogic_epi32(c, s, k->low7, 0xF4);   /* c | s & 0x80 */
#else
    __m512i r[4];
    int j;
    for (j = 0; j < 4; j++) {   /* c & 0x7F | sign (0..255); FNUZ: c where c & 0x7F == 0 */
        r[j] = _mm512_ternarylogic_epi32(y[j], _mm512_srli_epi32(u[j], 24), k->d7f, 0xE4);
        if (fnuz)
            r[j] = _mm512_mask_and_epi32(r[j], _mm512_testn_epi32_mask(y[j], k->d7f), y[j], k->ff);
    }
    /* unsigned-saturating packs are exact on 0..255 */
    c = _mm512_packus_epi16(_mm512_packus_epi32(r[0], r[1]), _mm512_packus_epi32(r[2], r[3]));
    return _mm512_permutexvar_epi32(k->perm, c);
#endif
}

/* A run of 64 * nb floats (nb = 1 or 2) at x, or, with full = 0 and nb = 1, the elements
 * in m (masked loads; zeros elsewhere), scaled: x / s or x * s. */
QMX__VINLINE void qmx__f8q512_scale(const float *x, __mmask64 m, const qmx__f8q512 *k, int div,
                                    int full, int nb, __m512 *t) {
    int j;
    for (j = 0; j < 4 * nb; j++) {
        __m512 v = full ? _mm512_loadu_ps(x + 16 * j)
                        : _mm512_maskz_loadu_ps((__mmask16)(m >> (16 * j)), x + 16 * j);
        t[j] = div ? _mm512_div_ps(v, k->s) : _mm512_mul_ps(v, k->s);
    }
}

/* The codes of a scaled run t (as above) in r[0..nb). A full run looks for NaN with ordered
 * compares of register pairs (a pair is ordered when neither lane is NaN), chained through
 * the mask, and, finding none, encodes without the per-lane NaN select: one check and branch
 * per 128 lanes, about 10 % faster in L2 on Zen 5 than a select per 16 lanes (8 % with a
 * check per 64). A run with a NaN takes the per-lane path: the same bits either way. */
QMX__VINLINE void qmx__f8q512_codes(const __m512 *t, const qmx__f8q512 *k, int fnuz, int full,
                                    int nb, __m512i *r) {
    __m512i y[8], u[8];
    int j, nan_check = 1;
    for (j = 0; j < 4 * nb; j++) u[j] = _mm512_castps_si512(t[j]);
    if (full) {
        __mmask16 ord = _mm512_cmp_ps_mask(t[0], t[1], _CMP_ORD_Q);
        for (j = 2; j < 4 * nb; j += 2) ord = _mm512_mask_cmp_ps_mask(ord, t[j], t[j + 1], _CMP_ORD_Q);
        nan_check = ord != (__mmask16)0xFFFF;
    }
    if (nan_check)
        for (j = 0; j < 4 * nb; j++) y[j] = qmx__f8q512_one(t[j], k, 1);
    else
        for (j = 0; j < 4 * nb; j++) y[j] = qmx__f8q512_one(t[j], k, 0);
    for (j = 0; j < nb; j++) r[j] = qmx__f8q512_pack(y + 4 * j, u + 4 * j, k, fnuz);
}

QMX__VINLINE void qmx__f8q512_run(const float *x, __mmask64 m, const qmx__f8q512 *k, int div,
                                  int fnuz, int full, int nb, __m512i *r) {
    __m512 t[8];
    qmx__f8q512_scale(x, m, k, div, full, nb, t);
    qmx__f8q512_codes(t, k, fnuz, full, nb, r);
}

QMX__VINLINE size_t qmx__f8q512_loop(const float *x, size_t n, const qmx__f8q512 *k, uint8_t *out,
                                     int div, int fnuz) {
    size_t i = 0;
    __mmask64 m;
    __m512i r[2];
    if (n >= QMX_NT_STORE_MIN && n >= 64) {   /* as qmx__q512_loop (n >= 64 bounds the head) */
        size_t head = (size_t)((64u - ((uintptr_t)out & 63u)) & 63u);
        if (head) {   /* a masked plain store up to a 64-byte boundary of out */
            m = ((__mmask64)1 << head) - 1u;
            qmx__f8q512_run(x, m, k, div, fnuz, 0, 1, r);
            _mm512_mask_storeu_epi8(out, m, r[0]);
            i = head;
        }
        for (; i + 128 <= n; i += 128) {
            qmx__q512_prefetch(x, i, n);
            qmx__q512_prefetch(x, i + 64, n);
            qmx__f8q512_run(x + i, 0, k, div, fnuz, 1, 2, r);
            _mm512_stream_si512((__m512i *)(void *)(out + i), r[0]);
            _mm512_stream_si512((__m512i *)(void *)(out + i + 64), r[1]);
        }
        if (i + 64 <= n) {
            qmx__f8q512_run(x + i, 0, k, div, fnuz, 1, 1, r);
            _mm512_stream_si512((__m512i *)(void *)(out + i), r[0]);
            i += 64;
        }
        _mm_sfence();
    }
    if (n - i >= 256) {
        /* software-pipelined: the next run is scaled before this one is encoded, so that the
         * divisions of x / s (one vdivps per 16 lanes, 2.6 cycles each on Zen 5) overlap the
         * encoding instead of stalling it: x / s 2.27 -> 1.87x the int8 AQT time in L2 (x * s
         * 1.47 -> 1.45x) */
        __m512 t[8], tn[8];
        int j;
        qmx__f8q512_scale(x + i, 0, k, div, 1, 2, t);
        for (; i + 256 <= n; i += 128) {
            qmx__f8q512_scale(x + i + 128, 0, k, div, 1, 2, tn);
            qmx__f8q512_codes(t, k, fnuz, 1, 2, r);
            _mm512_storeu_si512((void *)(out + i), r[0]);
            _mm512_storeu_si512((void *)(out + i + 64), r[1]);
            for (j = 0; j < 8; j++) t[j] = tn[j];
        }
        qmx__f8q512_codes(t, k, fnuz, 1, 2, r);
        _mm512_storeu_si512((void *)(out + i), r[0]);
        _mm512_storeu_si512((void *)(out + i + 64), r[1]);
        i += 128;
    }
    if (i + 128 <= n) {   /* what is left is below 256 */
        qmx__f8q512_run(x + i, 0, k, div, fnuz, 1, 2, r);
        _mm512_storeu_si512((void *)(out + i), r[0]);
        _mm512_storeu_si512((void *)(out + i + 64), r[1]);
        i += 128;
    }
    if (i + 64 <= n) {
        qmx__f8q512_run(x + i, 0, k, div, fnuz, 1, 1, r);
        _mm512_storeu_si512((void *)(out + i), r[0]);
        i += 64;
    }
    if (i < n) {   /* the last 1..63: masked loads, one masked store */
        m = ((__mmask64)1 << (n - i)) - 1u;
        qmx__f8q512_run(x + i, m, k, div, fnuz, 0, 1, r);
        _mm512_mask_storeu_epi8(out + i, m, r[0]);
    }
    return n;
}

/* The encoder's constants for format f (scale: qmx__f8q512_scale's multiplier or divisor) */
static void qmx__f8q512_init(const qmx__fp8fmt *f, int saturate, float scale, qmx__f8q512 *k) {
    qmx__f8c c;
    qmx__f8c_init(f, &c);
    k->s = _mm512_set1_ps(scale);
    k->absm = _mm512_set1_epi32(0x7FFFFFFF);
    k->thr = _mm512_set1_epi32((int32_t)c.thr);
    k->sdrop = _mm512_set1_ps(c.sdrop);
    {   /* saturating: clip to the largest finite value; else to the value whose code is the
         * overflow code (every a in (max, that) rounds up to it as in the scalar code) */
        uint32_t mb = saturate ? qmx__f32_bits(c.maxf) : (c.ovf << c.drop) + c.adj;
        uint32_t mcode = saturate ? f->max_code : c.ovf;
        /* M for each biased exponent eb = emin_b .. emin_b + 31, at index eb mod 32 */
        int32_t tab[32];
        int i, eminb = 128 - f->bias;
        for (i = 0; i < 32; i++) {
            int eb = eminb + ((i - eminb) & 31);
            tab[i] = (int32_t)(((uint32_t)eb << 23) | ((uint32_t)(eb - eminb) << f->mbits));
        }
        /* NaN lanes (a = mb) take entry E - emin = 31: M of mb's exponent + (NaN code - mb's
         * code) gives them the NaN code. No a <= mb has E - emin = 31, except for E5M2FNUZ
         * without saturation, where it is mb's own entry and the two codes are equal (0x80). */
        i = (eminb + 31) & 31;
        tab[i] = (int32_t)((((mb >> 23) << 23) | ((uint32_t)((int)(mb >> 23) - eminb) << f->mbits))
                           + (c.nan - mcode));
        k->nani = _mm512_set1_epi32(i);
        k->maxf = _mm512_set1_ps(qmx__bits_f32(mb));
        k->maxb = _mm512_set1_epi32((int32_t)mb);
        k->tlo = _mm512_loadu_si512((const void *)tab);
        k->thi = _mm512_loadu_si512((const void *)(tab + 16));
    }
    {   /* vpermt2b indices: byte 0 (codes) / byte 3 (signs) of the dwords of a register pair,
         * into bytes 0..31 and again 32..63 (bytes 32..63 index the pack's second gather) */
        int8_t bi[64], si[64];
        int i;
        for (i = 0; i < 64; i++) {
            bi[i] = (int8_t)(4 * (i & 31));
            si[i] = (int8_t)(4 * (i & 31) + 3);
        }
        k->bidx = _mm512_loadu_si512((const void *)bi);
        k->sidx = _mm512_loadu_si512((const void *)si);
        for (i = 0; i < 64; i++) bi[i] = (int8_t)(i ? -128 : 0);   /* FNUZ sign lookup */
        k->nzlo = _mm512_loadu_si512((const void *)bi);
        k->nzhi = _mm512_set1_epi8((char)0x80);
    }
    k->low7 = _mm512_set1_epi8(0x7F);
    k->ff = _mm512_set1_epi32(0xFF);
    k->d7f = _mm512_set1_epi32(0x7F);
    k->perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

static size_t qmx__fp8_quant_run_simd(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out) {
    qmx__f8q512 k;
    int div = use_div != 0, fnuz = f->fnuz != 0;
    qmx__f8q512_init(f, saturate, scale, &k);
    switch ((div << 1) | fnuz) {
    case 0: return qmx__f8q512_loop(x, n, &k, out, 0, 0);
    case 1: return qmx__f8q512_loop(x, n, &k, out, 0, 1);
    case 2: return qmx__f8q512_loop(x, n, &k, out, 1, 0);
    default: return qmx__f8q512_loop(x, n, &k, out, 1, 1);
    }
}

/* Short runs, quantize (int8, int4, fp8; symmetric; rounding not stochastic): per channel
 * along the last axis (inner == 1: [rows][len], a scale per column), per channel with
 * 16 <= inner < 4096, and per block (16 <= block < 4096) along the last axis. The generic walk
 * makes one run per column, channel or block there (8 GB/s for 16-element channels, 12 GB/s
 * for blocks of 32, int8; fp8 and int4 4-7x slower still); this puts
 * the multipliers in lanes instead: per column, a 16-lane vector of 1/s (or s) per 16 columns
 * from a stack buffer of QMX__SHORTRUN_CHUNK columns (512 bytes) filled once per chunk and
 * reused by every row; per channel or block of >= 16 elements, one or two broadcasts per 16
 * lanes. The same lane rule as qmx__q512_one, so the same bits as the scalar path. Returns 0
 * for any other case. */
#define QMX__SHORTRUN_CHUNK 128
QMX__VINLINE __m512 qmx__shortrun_mult(__m512 s, int div) {
    /* what qmx__make_run keeps: s to divide by, or 1/s with an infinite reciprocal -> 1 */
    const __m512 inf = _mm512_castsi512_ps(_mm512_set1_epi32(0x7F800000));
    __m512 r;
    if (div) return s;
    r = _mm512_div_ps(_mm512_set1_ps(1.0f), s);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(r, inf, _CMP_EQ_OQ), r, _mm512_set1_ps(1.0f));
}
/* 1/s (AQT) or s (divide) of one scale, as qmx__make_run keeps it */
static float qmx__shortrun_mult1(float s, int div) {
    float r;
    if (div) return s;
    r = 1.0f / s;
    return qmx__isfinite(r) ? r : 1.0f;
}
/* A row's walk over its blocks of bl >= 16 (quantize and dequantize): the block of the next
 * column and the column's offset in it (no division per vector), and the multiplier of the
 * last block looked up (quantize: one 1/s per block) */
typedef struct qmx__srpos {
    size_t b, off, cb;
    float cm;
} qmx__srpos;
static void qmx__srpos_start(qmx__srpos *p) {
    p->b = 0; p->off = 0; p->cb = (size_t)-1; p->cm = 0.0f;
}
/* The next 16 columns: their first block b0; lanes from edge on are in block b0 + 1 */
static void qmx__srpos_next(qmx__srpos *p, size_t bl, size_t *b0, size_t *edge) {
    *b0 = p->b;
    *edge = bl - p->off;
    p->off += 16;
    if (p->off >= bl) { p->off -= bl; p->b++; }
}
/* The 16 lanes' multipliers at columns j..j+15 of a row: from the chunk buffer (a scale per
 * column, mv[j]), or per block (at most two blocks in 16 lanes). */
QMX__VINLINE __m512 qmx__shortrun_lanes(const float *mv, size_t j, const float *srow, size_t nb,
                                        size_t bl, qmx__srpos *p, int div) {
    size_t b0, edge;
    if (mv) return _mm512_loadu_ps(mv + j);
    qmx__srpos_next(p, bl, &b0, &edge);
    if (p->cb != b0) { p->cb = b0; p->cm = qmx__shortrun_mult1(srow[b0], div); }
    if (edge >= 16 || b0 + 1 >= nb) return _mm512_set1_ps(p->cm);
    return _mm512_mask_blend_ps((__mmask16)(0xFFFFu << edge), _mm512_set1_ps(p->cm),
                                _mm512_set1_ps(qmx__shortrun_mult1(srow[b0 + 1], div)));
}
/* 64 int8 codes (-8..7) to 32 bytes of int4 pairs, low nibble first (qmx__put_nibbles' order):
 * in each 16-bit word, (w & 0x0F) | ((w >> 4) & 0xF0), then its low byte (vpmovwb) */
QMX__VINLINE __m256i qmx__nibbles64(__m512i c) {
    return _mm512_cvtepi16_epi8(_mm512_ternarylogic_epi32(c, _mm512_srli_epi16(c, 4),
                                                          _mm512_set1_epi8(0x0F), 0xE4));
}
/* n elements of one row, the row's first element being element `at` of the output (int8, or
 * packed int4 when nib, at even): 64 at a time into full stores, then 16-lane tails (int4:
 * through a 64-byte stage and qmx__put_nibbles). pfn > 0: x[0 .. pfn) are the rows still to
 * come, contiguous, prefetched ahead (qmx__prefetch_ahead); 0: none (the column-chunk walk). */
QMX__VINLINE void qmx__shortrun_row(const float *x, size_t n, const float *mv, const float *srow,
                                    size_t nb, size_t bl, const qmx__q512 *k, int div, int away,
                                    int nib, void *qv, size_t at, size_t pfn) {
    size_t j = 0, jt;
    qmx__srpos pos;
    int8_t stage[64];
    int8_t *q = nib ? stage : (int8_t *)qv + at;
    qmx__srpos_start(&pos);
    for (; j + 64 <= n; j += 64) {
        __m512i r[4], c;
        int t;
        if (pfn) qmx__prefetch_ahead(x, j, 64, pfn);
        for (t = 0; t < 4; t++)
            r[t] = qmx__q512_one_s(_mm512_loadu_ps(x + j + 16 * t),
                                   qmx__shortrun_lanes(mv, j + 16 * t, srow, nb, bl, &pos, div),
                                   k, div, 0, away);
        c = qmx__q512_pack(r[0], r[1], r[2], r[3], k, 0);
        if (nib)
            _mm256_storeu_si256((__m256i *)(void *)((uint8_t *)qv + (at + j) / 2), qmx__nibbles64(c));
        else _mm512_storeu_si512((void *)(q + j), c);
    }
    for (jt = j; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1u);
        __m512 s = qmx__shortrun_lanes(mv, j, srow, nb, bl, &pos, div);
        /* vpmovdb keeps the low byte: the clamped value, or 0 for NaN (0x80000000) */
        __m512i r = qmx__q512_one_s(_mm512_maskz_loadu_ps(m, x + j), s, k, div, 0, away);
        _mm512_mask_cvtepi32_storeu_epi8(nib ? stage + (j - jt) : q + j, m, r);
    }
    if (nib && jt < n) qmx__put_nibbles((uint8_t *)qv, at + jt, stage, n - jt);
}
/* The same row for an fp8 output (k8: the encoder's constants, saturating): 64 lanes scaled
 * by their multipliers (x * m or x / s), then qmx__f8q512_codes */
QMX__VINLINE void qmx__shortrun_row_f8(const float *x, size_t n, const float *mv, const float *srow,
                                       size_t nb, size_t bl, const qmx__f8q512 *k8, int div,
                                       int fnuz, uint8_t *q) {
    size_t j = 0;
    qmx__srpos pos;
    __m512 t[4];
    __m512i r[1];
    int u;
    qmx__srpos_start(&pos);
    for (; j + 64 <= n; j += 64) {
        for (u = 0; u < 4; u++) {
            __m512 v = _mm512_loadu_ps(x + j + 16 * u);
            __m512 s = qmx__shortrun_lanes(mv, j + 16 * u, srow, nb, bl, &pos, div);
            t[u] = div ? _mm512_div_ps(v, s) : _mm512_mul_ps(v, s);
        }
        qmx__f8q512_codes(t, k8, fnuz, 1, 1, r);
        _mm512_storeu_si512((void *)(q + j), r[0]);
    }
    if (j < n) {   /* 1..63: masked loads (zeros past n), one masked store */
        __mmask64 m = ((__mmask64)1 << (n - j)) - 1u;
        for (u = 0; u < 4; u++) {
            __m512 v = _mm512_maskz_loadu_ps((__mmask16)(m >> (16 * u)), x + j + 16 * u);
            /* multipliers only for vectors with a lane in the row (the block walk stops there) */
            __m512 s = _mm512_set1_ps(1.0f);
            if (16 * (size_t)u < n - j) s = qmx__shortrun_lanes(mv, j + 16 * u, srow, nb, bl, &pos, div);
            t[u] = div ? _mm512_div_ps(v, s) : _mm512_mul_ps(v, s);
        }
        qmx__f8q512_codes(t, k8, fnuz, 0, 1, r);
        _mm512_mask_storeu_epi8(q + j, m, r[0]);
    }
}
#define QMX__SHORTRUN_ROW(xr, n, mv, srow, nb, bl, at, pfn)                                     \
    (k8 ? qmx__shortrun_row_f8(xr, n, mv, srow, nb, bl, k8, div, fnuz, (uint8_t *)q + (at))      \
        : qmx__shortrun_row(xr, n, mv, srow, nb, bl, k, div, away, nib, q, at, pfn))
/* The three layouts, row by row, into int8 / int4 (k) or fp8 (k8) codes */
QMX__VINLINE void qmx__shortrun_walk(const qmx__view *v, int per_block, const float *x,
                                     const float *scales, const qmx__q512 *k, const qmx__f8q512 *k8,
                                     int div, int away, int nib, int fnuz, void *q) {
    size_t o, rows = v->outer, len = v->len;
    if (!per_block && v->inner == 1) {   /* a scale per column */
        float mv[QMX__SHORTRUN_CHUNK];
        size_t c0, j;
        for (c0 = 0; c0 < len; c0 += QMX__SHORTRUN_CHUNK) {
            size_t cn = len - c0 < QMX__SHORTRUN_CHUNK ? len - c0 : QMX__SHORTRUN_CHUNK;
            for (j = 0; j < cn; j += 16) {   /* whole vectors: lanes past cn are 1 */
                __mmask16 m = cn - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cn - j)) - 1u);
                _mm512_storeu_ps(mv + j, qmx__shortrun_mult(
                    _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, scales + c0 + j), div));
            }
            for (o = 0; o < rows; o++)
                QMX__SHORTRUN_ROW(x + o * len + c0, cn, mv, NULL, 0, 16, o * len + c0, 0);
        }
    } else if (!per_block) {   /* inner >= 16: [len][inner] per outer index, blocks of inner */
        size_t row = len * v->inner;
        for (o = 0; o < rows; o++)
            QMX__SHORTRUN_ROW(x + o * row, row, NULL, scales, len, v->inner, o * row, (rows - o) * row);
    } else {                   /* blocks of block >= 16 along each row */
        for (o = 0; o < rows; o++)
            QMX__SHORTRUN_ROW(x + o * len, len, NULL, scales + o * v->nblocks, v->nblocks, v->block,
                              o * len, (rows - o) * len);
    }
}
#undef QMX__SHORTRUN_ROW
/* The layouts the short-run paths take: per channel along the last axis or of 16..4095
 * elements, per block of 16..4095 along the last axis (runs of 4096 and more already go at
 * full speed one by one, with non-temporal stores too) */
static int qmx__shortrun_layout(const qmx_qconfig *c, const qmx__view *v) {
    if (c->granularity == QMX_PER_BLOCK) return v->inner == 1 && v->block >= 16 && v->block < 4096;
    return c->granularity == QMX_PER_CHANNEL && (v->inner == 1 || (v->inner >= 16 && v->inner < 4096));
}
static int qmx__quant_shortrun_f8_simd(const qmx_qconfig *c, const qmx__view *v, const float *x,
                                       const float *scales, uint8_t *q) {
    qmx__f8q512 k8;
    int div = c->recipe != QMX_RECIPE_AQT, fnuz = v->f.fnuz != 0;
    int per_block = c->granularity == QMX_PER_BLOCK;
    if (!v->fp8 || c->fp8_no_saturate || !qmx__shortrun_layout(c, v)) return 0;
    qmx__f8q512_init(&v->f, 1, 1.0f, &k8);   /* saturating, as qmx_quantize's fp8 runs */
    switch ((div << 1) | fnuz) {
    case 0: qmx__shortrun_walk(v, per_block, x, scales, NULL, &k8, 0, 0, 0, 0, q); break;
    case 1: qmx__shortrun_walk(v, per_block, x, scales, NULL, &k8, 0, 0, 0, 1, q); break;
    case 2: qmx__shortrun_walk(v, per_block, x, scales, NULL, &k8, 1, 0, 0, 0, q); break;
    default: qmx__shortrun_walk(v, per_block, x, scales, NULL, &k8, 1, 0, 0, 1, q); break;
    }
    return 1;
}
static int qmx__quant_shortrun_s8_simd(const qmx_qconfig *c, const qmx__view *v, const float *x,
                                       const float *scales, void *q) {
    qmx__run p;
    qmx__q512 k;
    int div, away, per_block = c->granularity == QMX_PER_BLOCK, nib = v->dtype == QMX_INT4;
    /* zero points (asymmetric, torch, ONNX) and torch's unguarded 1/s take the generic walk */
    if ((v->dtype != QMX_INT8 && !nib) || v->use_zp || !qmx__shortrun_layout(c, v)) return 0;
    if (nib && v->outer > 1 && ((v->len * v->inner) & 1)) return 0;   /* int4: rows start on a byte */
    qmx__make_run(c, v, 1.0f, 0, &p);
    if (p.round == QMX_ROUND_STOCHASTIC) return 0;
    div = p.use_div != 0;
    away = p.round == QMX_ROUND_HALF_AWAY;
    k.s = k.zpf = _mm512_setzero_ps();   /* unused here (the scales come in lanes); set */
    k.zpi = k.nanv = k.zp16 = k.m128 = k.lo8 = k.hi8 = _mm512_setzero_si512();
    k.ff = _mm512_set1_epi16(0xFF);   /* for qmx__q512_pack */
    k.perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    k.lo = _mm512_set1_ps(p.lo_f);
    k.hi = _mm512_set1_ps(p.hi_f);
    switch ((div << 1) | away) {
    case 0: qmx__shortrun_walk(v, per_block, x, scales, &k, NULL, 0, 0, nib, 0, q); break;
    case 1: qmx__shortrun_walk(v, per_block, x, scales, &k, NULL, 0, 1, nib, 0, q); break;
    case 2: qmx__shortrun_walk(v, per_block, x, scales, &k, NULL, 1, 0, nib, 0, q); break;
    default: qmx__shortrun_walk(v, per_block, x, scales, &k, NULL, 1, 1, nib, 0, q); break;
    }
    return 1;
}

typedef struct qmx__f8d512 {
    __m512 s, two, emin;
    __m512i m7f, msh, adj, mlim, c7c, qnan, spec, sgn, c80;
} qmx__f8d512;

QMX__VINLINE __m512 qmx__f8d512_one_s(__m128i b, __m512 s, const qmx__f8d512 *k, int kind) {
    __m512i c = _mm512_cvtepu8_epi32(b);
    __m512i a = _mm512_and_si512(c, k->m7f);
    __m512i v = _mm512_add_epi32(_mm512_sllv_epi32(a, k->msh), k->adj);
    /* exponent field 0: v decodes as 2^-bias * (1 + m/2^mbits); the subnormal value is
     * 2v - 2^emin (both steps exact) */
    v = _mm512_castps_si512(_mm512_mask_fmsub_ps(_mm512_castsi512_ps(v), _mm512_cmplt_epi32_mask(a, k->mlim),
                                                 k->two, k->emin));
    if (kind == 0) {
        v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(a, k->m7f), k->qnan);
    } else if (kind == 1) {   /* 0x7C..0x7F: Inf, NaN, NaN, NaN by the low 4 bits (12..15) */
        v = _mm512_mask_permutexvar_epi32(v, _mm512_cmpge_epi32_mask(a, k->c7c), a, k->spec);
    }
    v = _mm512_ternarylogic_epi32(v, _mm512_slli_epi32(c, 24), k->sgn, 0xF8); /* v | sign */
    if (kind == 2) v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(c, k->c80), k->qnan);
    return _mm512_mul_ps(_mm512_castsi512_ps(v), s);
}
QMX__VINLINE __m512 qmx__f8d512_one(__m128i b, const qmx__f8d512 *k, int kind) {
    return qmx__f8d512_one_s(b, k->s, k, kind);
}

QMX__VINLINE size_t qmx__f8d512_loop(const uint8_t *c, size_t n, const qmx__f8d512 *k, float *y,
                                     int kind) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 y0 = qmx__f8d512_one(_mm_loadu_si128((const __m128i *)(const void *)(c + i)), k, kind);
        __m512 y1 = qmx__f8d512_one(_mm_loadu_si128((const __m128i *)(const void *)(c + i + 16)), k, kind);
        __m512 y2 = qmx__f8d512_one(_mm_loadu_si128((const __m128i *)(const void *)(c + i + 32)), k, kind);
        __m512 y3 = qmx__f8d512_one(_mm_loadu_si128((const __m128i *)(const void *)(c + i + 48)), k, kind);
        _mm512_storeu_ps(y + i, y0);
        _mm512_storeu_ps(y + i + 16, y1);
        _mm512_storeu_ps(y + i + 32, y2);
        _mm512_storeu_ps(y + i + 48, y3);
    }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, qmx__f8d512_one(_mm_maskz_loadu_epi8(m, c + i), k, kind));
    }
    return n;
}

/* The decoder's constants for format f and scale; returns its kind (0 E4M3FN, 1 E5M2, 2 FNUZ) */
static int qmx__f8d512_init(const qmx__fp8fmt *f, float scale, qmx__f8d512 *k) {
    qmx__f8c cc;
    qmx__f8c_init(f, &cc);
    k->s = _mm512_set1_ps(scale);
    k->two = _mm512_set1_ps(2.0f);
    k->emin = _mm512_set1_ps(cc.eminf);
    k->m7f = _mm512_set1_epi32(0x7F);
    k->msh = _mm512_set1_epi32(cc.drop);
    k->adj = _mm512_set1_epi32((int32_t)cc.adj);
    k->mlim = _mm512_set1_epi32(1 << f->mbits);
    k->c7c = _mm512_set1_epi32(0x7C);
    k->qnan = _mm512_set1_epi32(0x7FC00000);
    k->spec = _mm512_mask_blend_epi32((__mmask16)0x1000, k->qnan, _mm512_set1_epi32(0x7F800000));
    k->sgn = _mm512_set1_epi32((int32_t)0x80000000u);
    k->c80 = _mm512_set1_epi32(0x80);
    return cc.kind;
}
static size_t qmx__fp8_dequant_run_simd(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y) {
    qmx__f8d512 k;
    int kind = qmx__f8d512_init(f, scale, &k);
    if (kind == 0) return qmx__f8d512_loop(c, n, &k, y, 0);
    if (kind == 1) return qmx__f8d512_loop(c, n, &k, y, 1);
    return qmx__f8d512_loop(c, n, &k, y, 2);
}

/* Dequantize of the same short-run layouts (int8, int4 and uint4, symmetric or not, and fp8):
 * y = (q - zp) * s, or f32(code) * s, with the scale and zero point in lanes; per column they
 * load straight from the caller's arrays. Per block of 32 at 256 KiB, time / the per-tensor
 * dequantize's: int8 7x -> 3x, int4 27x -> 4x, fp8 8.5x -> 1.7x. */
QMX__VINLINE void qmx__dq_shortrun_lanes(const float *scol, const int32_t *zcol, const float *srow,
                                         const int32_t *zrow, size_t nb, size_t bl, size_t j,
                                         __mmask16 m, qmx__srpos *p, __m512 *s, __m512i *z) {
    size_t b0, edge;
    __mmask16 hi;
    if (scol) {
        *s = _mm512_maskz_loadu_ps(m, scol + j);
        *z = zcol ? _mm512_maskz_loadu_epi32(m, zcol + j) : _mm512_setzero_si512();
        return;
    }
    qmx__srpos_next(p, bl, &b0, &edge);
    hi = (edge >= 16 || b0 + 1 >= nb) ? (__mmask16)0 : (__mmask16)(0xFFFFu << edge);
    *s = _mm512_mask_blend_ps(hi, _mm512_set1_ps(srow[b0]), _mm512_set1_ps(srow[hi ? b0 + 1 : b0]));
    *z = zrow ? _mm512_mask_blend_epi32(hi, _mm512_set1_epi32(zrow[b0]),
                                        _mm512_set1_epi32(zrow[hi ? b0 + 1 : b0]))
              : _mm512_setzero_si512();
}
/* 16 codes from element at (even) of a packed int4 (sgn) / uint4 array, as int8 lanes */
QMX__VINLINE __m128i qmx__nibbles16(const uint8_t *q, size_t at, int sgn) {
    const __m128i f = _mm_set1_epi8(0x0F);
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(q + at / 2)), e;
    e = _mm_unpacklo_epi8(_mm_and_si128(b, f), _mm_and_si128(_mm_srli_epi16(b, 4), f));
    return sgn ? _mm_sub_epi8(_mm_xor_si128(e, _mm_set1_epi8(8)), _mm_set1_epi8(8)) : e;
}
/* n elements of one row whose first is element at of the codes: int8 (nib 0), packed int4
 * (nib 1) / uint4 (nib 2) with at even (the 4-bit tail goes through qmx__take_nibbles), or
 * fp8 (nib 3, decoder kd of kind fk: y = f32(code) * s). */
QMX__VINLINE __m512 qmx__dq_shortrun_one(__m128i c, __m512 s, __m512i z, int nib,
                                         const qmx__f8d512 *kd, int fk) {
    if (nib == 3) return qmx__f8d512_one_s(c, s, kd, fk);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(c), z)), s);
}
QMX__VINLINE void qmx__dq_shortrun_row(const void *qv, size_t at, int nib, const qmx__f8d512 *kd,
                                       int fk, size_t n, const float *scol, const int32_t *zcol,
                                       const float *srow, const int32_t *zrow, size_t nb, size_t bl,
                                       float *y) {
    /* byte codes (int8, fp8) at q; the 4-bit codes are addressed by element from qv */
    const int8_t *q = (nib == 1 || nib == 2) ? (const int8_t *)qv : (const int8_t *)qv + at;
    size_t j = 0;
    qmx__srpos pos;
    __m512 s;
    __m512i z;
    qmx__srpos_start(&pos);
    for (; j + 16 <= n; j += 16) {
        __m128i c = (nib == 1 || nib == 2) ? qmx__nibbles16((const uint8_t *)qv, at + j, nib == 1)
                                           : _mm_loadu_si128((const __m128i *)(const void *)(q + j));
        qmx__dq_shortrun_lanes(scol, zcol, srow, zrow, nb, bl, j, (__mmask16)0xFFFF, &pos, &s, &z);
        _mm512_storeu_ps(y + j, qmx__dq_shortrun_one(c, s, z, nib, kd, fk));
    }
    if (j < n) {
        __mmask16 m = (__mmask16)((1u << (n - j)) - 1u);
        int8_t stage[16];
        __m128i c;
        if (nib == 1 || nib == 2) {
            qmx__take_nibbles((const uint8_t *)qv, at + j, nib == 1, stage, n - j);
            c = _mm_maskz_loadu_epi8(m, stage);
        } else {
            c = _mm_maskz_loadu_epi8(m, q + j);
        }
        qmx__dq_shortrun_lanes(scol, zcol, srow, zrow, nb, bl, j, m, &pos, &s, &z);
        _mm512_mask_storeu_ps(y + j, m, qmx__dq_shortrun_one(c, s, z, nib, kd, fk));
    }
}
QMX__VINLINE void qmx__dq_shortrun_walk(const qmx_qconfig *c, const qmx__view *v, const void *q,
                                        int nib, const qmx__f8d512 *kd, int fk,
                                        const float *scales, const int32_t *z, float *y) {
    size_t o, rows = v->outer, len = v->len, inner = v->inner, row = len * inner;
    if (c->granularity == QMX_PER_CHANNEL && inner == 1) {
        for (o = 0; o < rows; o++)
            qmx__dq_shortrun_row(q, o * len, nib, kd, fk, len, scales, z, NULL, NULL, 0, 16,
                                 y + o * len);
    } else if (c->granularity == QMX_PER_CHANNEL) {   /* 16 <= inner < 4096 */
        for (o = 0; o < rows; o++)
            qmx__dq_shortrun_row(q, o * row, nib, kd, fk, row, NULL, NULL, scales, z, len, inner,
                                 y + o * row);
    } else {                                            /* per block along the last axis */
        for (o = 0; o < rows; o++)
            qmx__dq_shortrun_row(q, o * len, nib, kd, fk, len, NULL, NULL, scales + o * v->nblocks,
                                 z ? z + o * v->nblocks : NULL, v->nblocks, v->block, y + o * len);
    }
}
static int qmx__dequant_shortrun_simd(const qmx_qconfig *c, const qmx__view *v, const void *q,
                                         const float *scales, const int32_t *zps, float *y) {
    const int32_t *z = v->use_zp ? zps : NULL;
    int nib = v->fp8 ? 3 : (v->dtype == QMX_INT4 ? 1 : (v->dtype == QMX_UINT4 ? 2 : 0));
    qmx__f8d512 kd;
    int fk;
    if (v->dtype != QMX_INT8 && nib == 0) return 0;
    if ((nib == 1 || nib == 2) && v->outer > 1 && ((v->len * v->inner) & 1))
        return 0;   /* 4-bit: every row starts on a byte */
    if (!qmx__shortrun_layout(c, v)) return 0;
    if (nib != 3) {
        qmx__dq_shortrun_walk(c, v, q, nib, NULL, 0, scales, z, y);
        return 1;
    }
    fk = qmx__f8d512_init(&v->f, 1.0f, &kd);
    if (fk == 0) qmx__dq_shortrun_walk(c, v, q, 3, &kd, 0, scales, NULL, y);
    else if (fk == 1) qmx__dq_shortrun_walk(c, v, q, 3, &kd, 1, scales, NULL, y);
    else qmx__dq_shortrun_walk(c, v, q, 3, &kd, 2, scales, NULL, y);
    return 1;
}

/* Nibble pairs (x86 is little-endian: 16-bit lane = s[2k] | s[2k+1] << 8). */
static size_t qmx__pack_nibbles_simd(const int8_t *s, size_t pairs, uint8_t *out) {
    const __m512i m0f = _mm512_set1_epi16(0x0F), mf0 = _mm512_set1_epi16(0xF0);
    size_t i = 0;
    for (; i + 32 <= pairs; i += 32) {
        __m512i w = _mm512_loadu_si512((const void *)(s + 2 * i));
        __m512i r = _mm512_or_si512(_mm512_and_si512(w, m0f), _mm512_and_si512(_mm512_srli_epi16(w, 4), mf0));
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi16_epi8(r));
    }
    return i;
}
static size_t qmx__unpack_nibbles_simd(const uint8_t *in, size_t pairs, int is_signed, int8_t *s) {
    const __m512i m0f = _mm512_set1_epi16(0x0F), mf00 = _mm512_set1_epi16(0x0F00);
    const __m512i x8 = _mm512_set1_epi8(8);
    size_t i = 0;
    for (; i + 32 <= pairs; i += 32) {
        __m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(in + i)));
        __m512i r = _mm512_or_si512(_mm512_and_si512(w, m0f), _mm512_and_si512(_mm512_slli_epi16(w, 4), mf00));
        if (is_signed) r = _mm512_sub_epi8(_mm512_xor_si512(r, x8), x8);   /* (v ^ 8) - 8 */
        _mm512_storeu_si512((void *)(s + 2 * i), r);
    }
    return i;
}
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif

#elif defined(QMX__AVX2)
/* ---- AVX2: 8 lanes; each kernel handles whole vectors and leaves < 8 to the scalar ---- */
typedef struct qmx__q256 {
    __m256 s, zpf, lo, hi;
    __m256i zpi, nanv, zp16, ff, ff32;
} qmx__q256;

/* One vector: the clamped, rounded value before zp_i (see the AVX-512 kernel). */
QMX__VINLINE __m256i qmx__q256_one(__m256 v, const qmx__q256 *k, int div, int addz, int away) {
    __m256 t = div ? _mm256_div_ps(v, k->s) : _mm256_mul_ps(v, k->s);
    __m256 nan = _mm256_setzero_ps();
    __m256i r;
    if (addz) {
        t = _mm256_add_ps(t, k->zpf);
        nan = _mm256_cmp_ps(t, t, _CMP_UNORD_Q);
    }
    t = _mm256_min_ps(k->hi, _mm256_max_ps(k->lo, t));  /* vmaxps/vminps pass a NaN t through */
    if (away) {
        __m256 fr = _mm256_sub_ps(t, _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
        r = _mm256_cvttps_epi32(_mm256_add_ps(t, fr));
    } else {
        r = _mm256_cvttps_epi32(_mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    if (addz) r = _mm256_blendv_epi8(r, k->nanv, _mm256_castps_si256(nan));
    return r;
}

/* Low bytes of four vectors of 8 int32 (values 0..255) as 32 bytes in order. */
QMX__VINLINE __m256i qmx__pack4_u8(__m256i r0, __m256i r1, __m256i r2, __m256i r3) {
    __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(r0, r1), _mm256_packus_epi32(r2, r3));
    return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
/* Low bytes of one vector of 8 int32 (values 0..255) as 8 bytes. */
QMX__VINLINE __m128i qmx__pack1_u8(__m256i r) {
    __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(r, r), _mm256_setzero_si256());
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
}

QMX__VINLINE size_t qmx__q256_loop(const float *x, size_t n, const qmx__q256 *k, int8_t *q,
                                   int div, int addz, int away, int zpi) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        /* int16 packs (exact for the clamped |r| <= 2^15; 0x80000000 -> 0x8000), + zp_i, low byte */
        __m256i r0 = qmx__q256_one(_mm256_loadu_ps(x + i), k, div, addz, away);
        __m256i r1 = qmx__q256_one(_mm256_loadu_ps(x + i + 8), k, div, addz, away);
        __m256i r2 = qmx__q256_one(_mm256_loadu_ps(x + i + 16), k, div, addz, away);
        __m256i r3 = qmx__q256_one(_mm256_loadu_ps(x + i + 24), k, div, addz, away);
        __m256i ab = _mm256_packs_epi32(r0, r1), cd = _mm256_packs_epi32(r2, r3), p;
        if (zpi) {
            ab = _mm256_add_epi16(ab, k->zp16);
            cd = _mm256_add_epi16(cd, k->zp16);
        }
        p = _mm256_packus_epi16(_mm256_and_si256(ab, k->ff), _mm256_and_si256(cd, k->ff));
        _mm256_storeu_si256((__m256i *)(void *)(q + i),
                            _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    }
    for (; i + 8 <= n; i += 8) {
        __m256i r = qmx__q256_one(_mm256_loadu_ps(x + i), k, div, addz, away);
        if (zpi) r = _mm256_add_epi32(r, k->zpi);
        _mm_storel_epi64((__m128i *)(void *)(q + i), qmx__pack1_u8(_mm256_and_si256(r, k->ff32)));
    }
    return i;
}

static size_t qmx__quant_run_s8_simd(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    qmx__q256 k;
    int div = p->use_div != 0, addz = p->zp_f != 0.0f, away = p->round == QMX_ROUND_HALF_AWAY;
    int zpi = p->zp_i != 0;
    if (p->round == QMX_ROUND_STOCHASTIC || (addz && !div) || n < 8) return 0;
    if (!(p->lo_f >= -32767.0f && p->hi_f <= 32767.0f)) return 0;  /* int16 packing range */
    k.s = _mm256_set1_ps(div ? p->scale : p->inv);
    k.zpf = _mm256_set1_ps(p->zp_f);
    k.lo = _mm256_set1_ps(p->lo_f);
    k.hi = _mm256_set1_ps(p->hi_f);
    k.zpi = _mm256_set1_epi32(p->zp_i);
    k.nanv = _mm256_set1_epi32((int32_t)p->zp_f);   /* + zp_i later: zp_i + (int32_t)zp_f */
    k.zp16 = _mm256_set1_epi16((short)(p->zp_i & 0xFF));
    k.ff = _mm256_set1_epi16(0xFF);
    k.ff32 = _mm256_set1_epi32(0xFF);
    switch ((div << 3) | (addz << 2) | (away << 1) | zpi) {
    case 0: return qmx__q256_loop(x, n, &k, q, 0, 0, 0, 0);
    case 1: return qmx__q256_loop(x, n, &k, q, 0, 0, 0, 1);
    case 2: return qmx__q256_loop(x, n, &k, q, 0, 0, 1, 0);
    case 3: return qmx__q256_loop(x, n, &k, q, 0, 0, 1, 1);
    case 8: return qmx__q256_loop(x, n, &k, q, 1, 0, 0, 0);
    case 9: return qmx__q256_loop(x, n, &k, q, 1, 0, 0, 1);
    case 10: return qmx__q256_loop(x, n, &k, q, 1, 0, 1, 0);
    case 11: return qmx__q256_loop(x, n, &k, q, 1, 0, 1, 1);
    case 12: return qmx__q256_loop(x, n, &k, q, 1, 1, 0, 0);
    case 13: return qmx__q256_loop(x, n, &k, q, 1, 1, 0, 1);
    case 14: return qmx__q256_loop(x, n, &k, q, 1, 1, 1, 0);
    default: return qmx__q256_loop(x, n, &k, q, 1, 1, 1, 1);
    }
}

QMX__VINLINE __m256 qmx__dq256_one(__m128i b, __m256i z, __m256 s) {
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(b), z)), s);
}
static size_t qmx__dequant_run_s8_simd(const int8_t *q, size_t n, int32_t zp, float s, float *y) {
    __m256i z = _mm256_set1_epi32(zp);
    __m256 vs = _mm256_set1_ps(s);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(q + i));
        __m128i lo = _mm256_castsi256_si128(b), hi = _mm256_extracti128_si256(b, 1);
        _mm256_storeu_ps(y + i, qmx__dq256_one(lo, z, vs));
        _mm256_storeu_ps(y + i + 8, qmx__dq256_one(_mm_unpackhi_epi64(lo, lo), z, vs));
        _mm256_storeu_ps(y + i + 16, qmx__dq256_one(hi, z, vs));
        _mm256_storeu_ps(y + i + 24, qmx__dq256_one(_mm_unpackhi_epi64(hi, hi), z, vs));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, qmx__dq256_one(_mm_loadl_epi64((const __m128i *)(const void *)(q + i)), z, vs));
    return i;
}

typedef struct qmx__f8q256 {
    __m256 s, subk, maxf;
    __m256i absm, drop, kadd, one, thr1, maxc, ovf, infb, nan, sgn, zero;
} qmx__f8q256;

QMX__VINLINE __m256i qmx__f8q256_one(__m256 v, const qmx__f8q256 *k, int div, int sat, int fnuz) {
    __m256 t = div ? _mm256_div_ps(v, k->s) : _mm256_mul_ps(v, k->s);
    __m256i u = _mm256_castps_si256(t);
    __m256 af = _mm256_castsi256_ps(_mm256_and_si256(u, k->absm));
    __m256i a, lsb, rn, code, sg;
    __m256 ss;
    if (sat) af = _mm256_min_ps(k->maxf, af);    /* clip |t| to max first; a NaN passes */
    a = _mm256_castps_si256(af);
    lsb = _mm256_and_si256(_mm256_srlv_epi32(a, k->drop), k->one);
    rn = _mm256_srlv_epi32(_mm256_add_epi32(_mm256_add_epi32(a, k->kadd), lsb), k->drop);
    ss = _mm256_round_ps(_mm256_mul_ps(af, k->subk), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    code = _mm256_blendv_epi8(_mm256_cvttps_epi32(ss), rn, _mm256_cmpgt_epi32(a, k->thr1));
    if (sat) {
        code = _mm256_min_epi32(code, k->nan);
    } else {
        code = _mm256_blendv_epi8(code, k->ovf, _mm256_cmpgt_epi32(code, k->maxc));
        code = _mm256_blendv_epi8(code, k->nan, _mm256_cmpgt_epi32(a, k->infb));
    }
    sg = _mm256_and_si256(_mm256_srli_epi32(u, 24), k->sgn);
    if (fnuz) sg = _mm256_andnot_si256(_mm256_cmpeq_epi32(code, k->zero), sg);
    return _mm256_or_si256(code, sg);
}

QMX__VINLINE size_t qmx__f8q256_loop(const float *x, size_t n, const qmx__f8q256 *k, uint8_t *out,
                                     int div, int sat, int fnuz) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i r0 = qmx__f8q256_one(_mm256_loadu_ps(x + i), k, div, sat, fnuz);
        __m256i r1 = qmx__f8q256_one(_mm256_loadu_ps(x + i + 8), k, div, sat, fnuz);
        __m256i r2 = qmx__f8q256_one(_mm256_loadu_ps(x + i + 16), k, div, sat, fnuz);
        __m256i r3 = qmx__f8q256_one(_mm256_loadu_ps(x + i + 24), k, div, sat, fnuz);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), qmx__pack4_u8(r0, r1, r2, r3));
    }
    for (; i + 8 <= n; i += 8)
        _mm_storel_epi64((__m128i *)(void *)(out + i),
                         qmx__pack1_u8(qmx__f8q256_one(_mm256_loadu_ps(x + i), k, div, sat, fnuz)));
    return i;
}

static size_t qmx__fp8_quant_run_simd(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out) {
    qmx__f8c c;
    qmx__f8q256 k;
    int div = use_div != 0, sat = saturate != 0, fnuz = f->fnuz != 0;
    if (n < 8) return 0;
    qmx__f8c_init(f, &c);
    k.s = _mm256_set1_ps(scale);
    k.subk = _mm256_set1_ps(c.subk);
    k.maxf = _mm256_set1_ps(c.maxf);
    k.absm = _mm256_set1_epi32(0x7FFFFFFF);
    k.drop = _mm256_set1_epi32(c.drop);
    k.kadd = _mm256_set1_epi32((int32_t)c.kadd);
    k.one = _mm256_set1_epi32(1);
    k.thr1 = _mm256_set1_epi32((int32_t)c.thr - 1);
    k.maxc = _mm256_set1_epi32((int32_t)c.maxc);
    k.ovf = _mm256_set1_epi32((int32_t)c.ovf);
    k.infb = _mm256_set1_epi32(0x7F800000);
    k.nan = _mm256_set1_epi32((int32_t)c.nan);
    k.sgn = _mm256_set1_epi32(0x80);
    k.zero = _mm256_setzero_si256();
    switch ((div << 2) | (sat << 1) | fnuz) {
    case 0: return qmx__f8q256_loop(x, n, &k, out, 0, 0, 0);
    case 1: return qmx__f8q256_loop(x, n, &k, out, 0, 0, 1);
    case 2: return qmx__f8q256_loop(x, n, &k, out, 0, 1, 0);
    case 3: return qmx__f8q256_loop(x, n, &k, out, 0, 1, 1);
    case 4: return qmx__f8q256_loop(x, n, &k, out, 1, 0, 0);
    case 5: return qmx__f8q256_loop(x, n, &k, out, 1, 0, 1);
    case 6: return qmx__f8q256_loop(x, n, &k, out, 1, 1, 0);
    default: return qmx__f8q256_loop(x, n, &k, out, 1, 1, 1);
    }
}

typedef struct qmx__f8d256 {
    __m256 s, emin;
    __m256i m7f, msh, adj, mlim, c7c, qnan, inf, sgn, c80;
} qmx__f8d256;

QMX__VINLINE __m256 qmx__f8d256_one(__m128i b, const qmx__f8d256 *k, int kind) {
    __m256i c = _mm256_cvtepu8_epi32(b);
    __m256i a = _mm256_and_si256(c, k->m7f);
    __m256i v = _mm256_add_epi32(_mm256_sllv_epi32(a, k->msh), k->adj);
    __m256 vf = _mm256_castsi256_ps(v);
    __m256 sub = _mm256_sub_ps(_mm256_add_ps(vf, vf), k->emin);  /* exponent field 0: 2v - 2^emin */
    v = _mm256_blendv_epi8(v, _mm256_castps_si256(sub), _mm256_cmpgt_epi32(k->mlim, a));
    if (kind == 0) {
        v = _mm256_blendv_epi8(v, k->qnan, _mm256_cmpeq_epi32(a, k->m7f));
    } else if (kind == 1) {
        v = _mm256_blendv_epi8(v, k->qnan, _mm256_cmpgt_epi32(a, k->c7c));
        v = _mm256_blendv_epi8(v, k->inf, _mm256_cmpeq_epi32(a, k->c7c));
    }
    v = _mm256_or_si256(v, _mm256_and_si256(_mm256_slli_epi32(c, 24), k->sgn));
    if (kind == 2) v = _mm256_blendv_epi8(v, k->qnan, _mm256_cmpeq_epi32(c, k->c80));
    return _mm256_mul_ps(_mm256_castsi256_ps(v), k->s);
}

QMX__VINLINE size_t qmx__f8d256_loop(const uint8_t *c, size_t n, const qmx__f8d256 *k, float *y,
                                     int kind) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(c + i));
        __m128i lo = _mm256_castsi256_si128(b), hi = _mm256_extracti128_si256(b, 1);
        _mm256_storeu_ps(y + i, qmx__f8d256_one(lo, k, kind));
        _mm256_storeu_ps(y + i + 8, qmx__f8d256_one(_mm_unpackhi_epi64(lo, lo), k, kind));
        _mm256_storeu_ps(y + i + 16, qmx__f8d256_one(hi, k, kind));
        _mm256_storeu_ps(y + i + 24, qmx__f8d256_one(_mm_unpackhi_epi64(hi, hi), k, kind));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, qmx__f8d256_one(_mm_loadl_epi64((const __m128i *)(const void *)(c + i)), k, kind));
    return i;
}

static size_t qmx__fp8_dequant_run_simd(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y) {
    qmx__f8c cc;
    qmx__f8d256 k;
    if (n < 8) return 0;
    qmx__f8c_init(f, &cc);
    k.s = _mm256_set1_ps(scale);
    k.emin = _mm256_set1_ps(cc.eminf);
    k.m7f = _mm256_set1_epi32(0x7F);
    k.msh = _mm256_set1_epi32(cc.drop);
    k.adj = _mm256_set1_epi32((int32_t)cc.adj);
    k.mlim = _mm256_set1_epi32(1 << f->mbits);
    k.c7c = _mm256_set1_epi32(0x7C);
    k.qnan = _mm256_set1_epi32(0x7FC00000);
    k.inf = _mm256_set1_epi32(0x7F800000);
    k.sgn = _mm256_set1_epi32((int32_t)0x80000000u);
    k.c80 = _mm256_set1_epi32(0x80);
    if (cc.kind == 0) return qmx__f8d256_loop(c, n, &k, y, 0);
    if (cc.kind == 1) return qmx__f8d256_loop(c, n, &k, y, 1);
    return qmx__f8d256_loop(c, n, &k, y, 2);
}


/* Nibble pairs (see the AVX-512 kernels). */
static size_t qmx__pack_nibbles_simd(const int8_t *s, size_t pairs, uint8_t *out) {
    const __m256i m0f = _mm256_set1_epi16(0x0F), mf0 = _mm256_set1_epi16(0xF0);
    size_t i = 0;
    for (; i + 32 <= pairs; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + 2 * i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 2 * i + 32));
        a = _mm256_or_si256(_mm256_and_si256(a, m0f), _mm256_and_si256(_mm256_srli_epi16(a, 4), mf0));
        b = _mm256_or_si256(_mm256_and_si256(b, m0f), _mm256_and_si256(_mm256_srli_epi16(b, 4), mf0));
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8));
    }
    return i;
}
static size_t qmx__unpack_nibbles_simd(const uint8_t *in, size_t pairs, int is_signed, int8_t *s) {
    const __m256i m0f = _mm256_set1_epi16(0x0F), mf00 = _mm256_set1_epi16(0x0F00);
    const __m256i x8 = _mm256_set1_epi8(8);
    size_t i = 0;
    for (; i + 16 <= pairs; i += 16) {
        __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(in + i)));
        __m256i r = _mm256_or_si256(_mm256_and_si256(w, m0f), _mm256_and_si256(_mm256_slli_epi16(w, 4), mf00));
        if (is_signed) r = _mm256_sub_epi8(_mm256_xor_si256(r, x8), x8);
        _mm256_storeu_si256((__m256i *)(void *)(s + 2 * i), r);
    }
    return i;
}
#elif defined(QMX__NEON64)
/* ---- NEON (AArch64): 4 lanes, unrolled to 16; runs of < 8 are left to the scalar ---- */
typedef struct qmx__qn {
    float32x4_t s, zpf, lo, hi;
    int32x4_t zpi, nanv;
} qmx__qn;

QMX__VINLINE int32x4_t qmx__qn_one(float32x4_t v, const qmx__qn *k, int div, int addz, int away) {
    float32x4_t t = div ? vdivq_f32(v, k->s) : vmulq_f32(v, k->s);
    uint32x4_t ok = vdupq_n_u32(0u);
    int32x4_t r;
    if (addz) {
        t = vaddq_f32(t, k->zpf);
        ok = vceqq_f32(t, t);             /* false on NaN */
    }
    t = vminq_f32(vmaxq_f32(t, k->lo), k->hi);   /* FMAX/FMIN keep a NaN ... */
    r = away ? vcvtaq_s32_f32(t) : vcvtnq_s32_f32(t);  /* ... and FCVT*S turns it into 0 */
    r = vaddq_s32(r, k->zpi);
    if (addz) r = vbslq_s32(ok, r, k->nanv);
    return r;
}

QMX__VINLINE size_t qmx__qn_loop(const float *x, size_t n, const qmx__qn *k, int8_t *q,
                                 int div, int addz, int away) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {     /* vmovn truncates, as the (int8_t) cast */
        int32x4_t r0 = qmx__qn_one(vld1q_f32(x + i), k, div, addz, away);
        int32x4_t r1 = qmx__qn_one(vld1q_f32(x + i + 4), k, div, addz, away);
        int32x4_t r2 = qmx__qn_one(vld1q_f32(x + i + 8), k, div, addz, away);
        int32x4_t r3 = qmx__qn_one(vld1q_f32(x + i + 12), k, div, addz, away);
        int16x8_t h0 = vmovn_high_s32(vmovn_s32(r0), r1), h1 = vmovn_high_s32(vmovn_s32(r2), r3);
        vst1q_s8(q + i, vmovn_high_s16(vmovn_s16(h0), h1));
    }
    for (; i + 8 <= n; i += 8) {
        int32x4_t r0 = qmx__qn_one(vld1q_f32(x + i), k, div, addz, away);
        int32x4_t r1 = qmx__qn_one(vld1q_f32(x + i + 4), k, div, addz, away);
        vst1_s8(q + i, vmovn_s16(vmovn_high_s32(vmovn_s32(r0), r1)));
    }
    return i;
}

static size_t qmx__quant_run_s8_simd(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    qmx__qn k;
    int div = p->use_div != 0, addz = p->zp_f != 0.0f;
    if (p->round == QMX_ROUND_STOCHASTIC || (addz && !div) || n < 8) return 0;
    k.s = vdupq_n_f32(div ? p->scale : p->inv);
    k.zpf = vdupq_n_f32(p->zp_f);
    k.lo = vdupq_n_f32(p->lo_f);
    k.hi = vdupq_n_f32(p->hi_f);
    k.zpi = vdupq_n_s32(p->zp_i);
    k.nanv = vdupq_n_s32(p->zp_i + (int32_t)p->zp_f);
    if (p->round == QMX_ROUND_HALF_AWAY) {
        if (!div) return qmx__qn_loop(x, n, &k, q, 0, 0, 1);
        return addz ? qmx__qn_loop(x, n, &k, q, 1, 1, 1) : qmx__qn_loop(x, n, &k, q, 1, 0, 1);
    }
    if (!div) return qmx__qn_loop(x, n, &k, q, 0, 0, 0);
    return addz ? qmx__qn_loop(x, n, &k, q, 1, 1, 0) : qmx__qn_loop(x, n, &k, q, 1, 0, 0);
}

QMX__VINLINE float32x4_t qmx__dqn_one(int16x4_t h, int32x4_t z, float32x4_t s) {
    return vmulq_f32(vcvtq_f32_s32(vsubq_s32(vmovl_s16(h), z)), s);
}
static size_t qmx__dequant_run_s8_simd(const int8_t *q, size_t n, int32_t zp, float s, float *y) {
    int32x4_t z = vdupq_n_s32(zp);
    float32x4_t vs = vdupq_n_f32(s);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int8x16_t b = vld1q_s8(q + i);
        int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_s8(vget_high_s8(b));
        vst1q_f32(y + i, qmx__dqn_one(vget_low_s16(lo), z, vs));
        vst1q_f32(y + i + 4, qmx__dqn_one(vget_high_s16(lo), z, vs));
        vst1q_f32(y + i + 8, qmx__dqn_one(vget_low_s16(hi), z, vs));
        vst1q_f32(y + i + 12, qmx__dqn_one(vget_high_s16(hi), z, vs));
    }
    for (; i + 8 <= n; i += 8) {
        int16x8_t h = vmovl_s8(vld1_s8(q + i));
        vst1q_f32(y + i, qmx__dqn_one(vget_low_s16(h), z, vs));
        vst1q_f32(y + i + 4, qmx__dqn_one(vget_high_s16(h), z, vs));
    }
    return i;
}

typedef struct qmx__f8qn {
    float32x4_t s, subk, maxf;
    uint32x4_t absm, one, kadd, thr, maxc, ovf, infb, nan, sgn;
    int32x4_t ndrop;
} qmx__f8qn;

QMX__VINLINE uint32x4_t qmx__f8qn_one(float32x4_t v, const qmx__f8qn *k, int div, int sat, int fnuz) {
    float32x4_t t = div ? vdivq_f32(v, k->s) : vmulq_f32(v, k->s);
    uint32x4_t u = vreinterpretq_u32_f32(t);
    float32x4_t af = vreinterpretq_f32_u32(vandq_u32(u, k->absm));
    uint32x4_t a, lsb, rn, rs, code, sg;
    if (sat) af = vminq_f32(k->maxf, af);        /* clip |t| to max first; a NaN passes */
    a = vreinterpretq_u32_f32(af);
    lsb = vandq_u32(vshlq_u32(a, k->ndrop), k->one);
    rn = vshlq_u32(vaddq_u32(vaddq_u32(a, k->kadd), lsb), k->ndrop);
    rs = vreinterpretq_u32_s32(vcvtnq_s32_f32(vmulq_f32(af, k->subk)));
    code = vbslq_u32(vcgeq_u32(a, k->thr), rn, rs);
    if (sat) {
        code = vminq_u32(code, k->nan);          /* finite codes are <= max already; NaN */
    } else {
        code = vbslq_u32(vcgtq_u32(code, k->maxc), k->ovf, code);
        code = vbslq_u32(vcgtq_u32(a, k->infb), k->nan, code);
    }
    sg = vandq_u32(vshrq_n_u32(u, 24), k->sgn);
    if (fnuz) sg = vandq_u32(sg, vtstq_u32(code, code));
    return vorrq_u32(code, sg);
}

QMX__VINLINE size_t qmx__f8qn_loop(const float *x, size_t n, const qmx__f8qn *k, uint8_t *out,
                                   int div, int sat, int fnuz) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32x4_t r0 = qmx__f8qn_one(vld1q_f32(x + i), k, div, sat, fnuz);
        uint32x4_t r1 = qmx__f8qn_one(vld1q_f32(x + i + 4), k, div, sat, fnuz);
        uint32x4_t r2 = qmx__f8qn_one(vld1q_f32(x + i + 8), k, div, sat, fnuz);
        uint32x4_t r3 = qmx__f8qn_one(vld1q_f32(x + i + 12), k, div, sat, fnuz);
        uint16x8_t h0 = vmovn_high_u32(vmovn_u32(r0), r1), h1 = vmovn_high_u32(vmovn_u32(r2), r3);
        vst1q_u8(out + i, vmovn_high_u16(vmovn_u16(h0), h1));
    }
    for (; i + 8 <= n; i += 8) {
        uint32x4_t r0 = qmx__f8qn_one(vld1q_f32(x + i), k, div, sat, fnuz);
        uint32x4_t r1 = qmx__f8qn_one(vld1q_f32(x + i + 4), k, div, sat, fnuz);
        vst1_u8(out + i, vmovn_u16(vmovn_high_u32(vmovn_u32(r0), r1)));
    }
    return i;
}

static size_t qmx__fp8_quant_run_simd(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out) {
    qmx__f8c c;
    qmx__f8qn k;
    int div = use_div != 0, sat = saturate != 0, fnuz = f->fnuz != 0;
    if (n < 8) return 0;
    qmx__f8c_init(f, &c);
    k.s = vdupq_n_f32(scale);
    k.subk = vdupq_n_f32(c.subk);
    k.maxf = vdupq_n_f32(c.maxf);
    k.absm = vdupq_n_u32(0x7FFFFFFFu);
    k.one = vdupq_n_u32(1u);
    k.kadd = vdupq_n_u32(c.kadd);
    k.thr = vdupq_n_u32(c.thr);
    k.maxc = vdupq_n_u32(c.maxc);
    k.ovf = vdupq_n_u32(c.ovf);
    k.infb = vdupq_n_u32(0x7F800000u);
    k.nan = vdupq_n_u32(c.nan);
    k.sgn = vdupq_n_u32(0x80u);
    k.ndrop = vdupq_n_s32(-c.drop);
    if (div) {
        if (sat) return fnuz ? qmx__f8qn_loop(x, n, &k, out, 1, 1, 1) : qmx__f8qn_loop(x, n, &k, out, 1, 1, 0);
        return fnuz ? qmx__f8qn_loop(x, n, &k, out, 1, 0, 1) : qmx__f8qn_loop(x, n, &k, out, 1, 0, 0);
    }
    if (sat) return fnuz ? qmx__f8qn_loop(x, n, &k, out, 0, 1, 1) : qmx__f8qn_loop(x, n, &k, out, 0, 1, 0);
    return fnuz ? qmx__f8qn_loop(x, n, &k, out, 0, 0, 1) : qmx__f8qn_loop(x, n, &k, out, 0, 0, 0);
}

typedef struct qmx__f8dn {
    float32x4_t s, emin;
    uint32x4_t m7f, adj, mlim, c7c, qnan, inf, sgn, c80;
    int32x4_t msh;
} qmx__f8dn;

QMX__VINLINE float32x4_t qmx__f8dn_one(uint16x4_t h, const qmx__f8dn *k, int kind) {
    uint32x4_t c = vmovl_u16(h);
    uint32x4_t a = vandq_u32(c, k->m7f);
    uint32x4_t v = vaddq_u32(vshlq_u32(a, k->msh), k->adj);
    float32x4_t vf = vreinterpretq_f32_u32(v);
    float32x4_t sub = vsubq_f32(vaddq_f32(vf, vf), k->emin);   /* exponent field 0: 2v - 2^emin */
    v = vbslq_u32(vcltq_u32(a, k->mlim), vreinterpretq_u32_f32(sub), v);
    if (kind == 0) {
        v = vbslq_u32(vceqq_u32(a, k->m7f), k->qnan, v);
    } else if (kind == 1) {
        v = vbslq_u32(vcgtq_u32(a, k->c7c), k->qnan, v);
        v = vbslq_u32(vceqq_u32(a, k->c7c), k->inf, v);
    }
    v = vorrq_u32(v, vandq_u32(vshlq_n_u32(c, 24), k->sgn));
    if (kind == 2) v = vbslq_u32(vceqq_u32(c, k->c80), k->qnan, v);
    return vmulq_f32(vreinterpretq_f32_u32(v), k->s);
}

QMX__VINLINE size_t qmx__f8dn_loop(const uint8_t *c, size_t n, const qmx__f8dn *k, float *y, int kind) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint8x16_t b = vld1q_u8(c + i);
        uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_u8(vget_high_u8(b));
        vst1q_f32(y + i, qmx__f8dn_one(vget_low_u16(lo), k, kind));
        vst1q_f32(y + i + 4, qmx__f8dn_one(vget_high_u16(lo), k, kind));
        vst1q_f32(y + i + 8, qmx__f8dn_one(vget_low_u16(hi), k, kind));
        vst1q_f32(y + i + 12, qmx__f8dn_one(vget_high_u16(hi), k, kind));
    }
    for (; i + 8 <= n; i += 8) {
        uint16x8_t h = vmovl_u8(vld1_u8(c + i));
        vst1q_f32(y + i, qmx__f8dn_one(vget_low_u16(h), k, kind));
        vst1q_f32(y + i + 4, qmx__f8dn_one(vget_high_u16(h), k, kind));
    }
    return i;
}

static size_t qmx__fp8_dequant_run_simd(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y) {
    qmx__f8c cc;
    qmx__f8dn k;
    if (n < 8) return 0;
    qmx__f8c_init(f, &cc);
    k.s = vdupq_n_f32(scale);
    k.emin = vdupq_n_f32(cc.eminf);
    k.m7f = vdupq_n_u32(0x7Fu);
    k.msh = vdupq_n_s32(cc.drop);
    k.adj = vdupq_n_u32(cc.adj);
    k.mlim = vdupq_n_u32(1u << f->mbits);
    k.c7c = vdupq_n_u32(0x7Cu);
    k.qnan = vdupq_n_u32(0x7FC00000u);
    k.inf = vdupq_n_u32(0x7F800000u);
    k.sgn = vdupq_n_u32(0x80000000u);
    k.c80 = vdupq_n_u32(0x80u);
    if (cc.kind == 0) return qmx__f8dn_loop(c, n, &k, y, 0);
    if (cc.kind == 1) return qmx__f8dn_loop(c, n, &k, y, 1);
    return qmx__f8dn_loop(c, n, &k, y, 2);
}


/* Nibble pairs: vld2q / vst2q (de)interleave even and odd elements. */
static size_t qmx__pack_nibbles_simd(const int8_t *s, size_t pairs, uint8_t *out) {
    size_t i = 0;
    for (; i + 16 <= pairs; i += 16) {
        uint8x16x2_t v = vld2q_u8((const uint8_t *)s + 2 * i);
        vst1q_u8(out + i, vorrq_u8(vandq_u8(v.val[0], vdupq_n_u8(0x0F)), vshlq_n_u8(v.val[1], 4)));
    }
    return i;
}
static size_t qmx__unpack_nibbles_simd(const uint8_t *in, size_t pairs, int is_signed, int8_t *s) {
    size_t i = 0;
    for (; i + 16 <= pairs; i += 16) {
        uint8x16_t b = vld1q_u8(in + i);
        int8x16x2_t r;
        r.val[0] = vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(0x0F)));
        r.val[1] = vreinterpretq_s8_u8(vshrq_n_u8(b, 4));
        if (is_signed) {   /* (v ^ 8) - 8 */
            r.val[0] = vsubq_s8(veorq_s8(r.val[0], vdupq_n_s8(8)), vdupq_n_s8(8));
            r.val[1] = vsubq_s8(veorq_s8(r.val[1], vdupq_n_s8(8)), vdupq_n_s8(8));
        }
        vst2q_s8(s + 2 * i, r);
    }
    return i;
}
#elif defined(QMX__RVV)
/* ---- RISC-V Vector 1.0 (qmx__rvv_): vector-length agnostic, one vsetvl strip after another,
 * every lane the scalar expression, so no result depends on VLEN. Conversions to integer
 * truncate (vfcvt.rtz) and round as the scalar qmx__round_rne / _half_away do, from the exact
 * fraction, never through the frm rounding mode; a NaN lane (RVV converts it to INT32_MAX and
 * vfmax/vfmin drop it) is merged to the scalar's NaN result explicitly. ---- */
/* The scalar rounding of t (|t| < 2^31, not NaN): i = trunc(t), fr = t - i (exact), then +-1. */
QMX__VINLINE vint32m4_t qmx__rvv_round_m4(vfloat32m4_t t, int away, size_t vl) {
    vint32m4_t i = __riscv_vfcvt_rtz_x_f_v_i32m4(t, vl);
    vfloat32m4_t fr = __riscv_vfsub_vv_f32m4(t, __riscv_vfcvt_f_x_v_f32m4(i, vl), vl);
    vbool8_t up, dn;
    if (away) {
        up = __riscv_vmfge_vf_f32m4_b8(fr, 0.5f, vl);
        dn = __riscv_vmfle_vf_f32m4_b8(fr, -0.5f, vl);
    } else {
        vbool8_t odd = __riscv_vmsne_vx_i32m4_b8(__riscv_vand_vx_i32m4(i, 1, vl), 0, vl);
        up = __riscv_vmor_mm_b8(__riscv_vmfgt_vf_f32m4_b8(fr, 0.5f, vl),
                                __riscv_vmand_mm_b8(__riscv_vmfeq_vf_f32m4_b8(fr, 0.5f, vl), odd, vl), vl);
        dn = __riscv_vmor_mm_b8(__riscv_vmflt_vf_f32m4_b8(fr, -0.5f, vl),
                                __riscv_vmand_mm_b8(__riscv_vmfeq_vf_f32m4_b8(fr, -0.5f, vl), odd, vl), vl);
    }
    i = __riscv_vadd_vx_i32m4_mu(up, i, i, 1, vl);
    return __riscv_vsub_vx_i32m4_mu(dn, i, i, 1, vl);
}

QMX__VINLINE size_t qmx__rvv_quant_loop(const float *x, size_t n, const qmx__run *p, int8_t *q,
                                        int div, int addz, int away) {
    const float s = div ? p->scale : p->inv, zpf = p->zp_f, lo = p->lo_f, hi = p->hi_f;
    const int32_t zpi = p->zp_i, nanv = p->zp_i + (int32_t)p->zp_f;
    size_t i = 0, vl;
    for (; i < n; i += vl) {
        vfloat32m4_t t;
        vint32m4_t r;
        vbool8_t ok;
        vl = __riscv_vsetvl_e32m4(n - i);
        t = __riscv_vle32_v_f32m4(x + i, vl);
        t = div ? __riscv_vfdiv_vf_f32m4(t, s, vl) : __riscv_vfmul_vf_f32m4(t, s, vl);
        if (addz) t = __riscv_vfadd_vf_f32m4(t, zpf, vl);
        ok = __riscv_vmfeq_vv_f32m4_b8(t, t, vl);                /* false on NaN */
        t = __riscv_vfmin_vf_f32m4(__riscv_vfmax_vf_f32m4(t, lo, vl), hi, vl);
        r = __riscv_vadd_vx_i32m4(qmx__rvv_round_m4(t, away, vl), zpi, vl);
        r = __riscv_vmerge_vvm_i32m4(__riscv_vmv_v_x_i32m4(nanv, vl), r, ok, vl);
        /* the low byte, as the (int8_t) cast */
        __riscv_vse8_v_i8m1(q + i, __riscv_vncvt_x_x_w_i8m1(__riscv_vncvt_x_x_w_i16m2(r, vl), vl), vl);
    }
    return n;
}

static size_t qmx__quant_run_s8_simd(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    int div = p->use_div != 0, addz = p->zp_f != 0.0f;
    /* |t| < 2^31 after the clamp (the integer round trip of qmx__rvv_round_m4) */
    if (p->round == QMX_ROUND_STOCHASTIC || (addz && !div)) return 0;
    if (!(p->lo_f >= -2147483520.0f && p->hi_f <= 2147483520.0f)) return 0;
    if (p->round == QMX_ROUND_HALF_AWAY) {
        if (!div) return qmx__rvv_quant_loop(x, n, p, q, 0, 0, 1);
        return addz ? qmx__rvv_quant_loop(x, n, p, q, 1, 1, 1) : qmx__rvv_quant_loop(x, n, p, q, 1, 0, 1);
    }
    if (!div) return qmx__rvv_quant_loop(x, n, p, q, 0, 0, 0);
    return addz ? qmx__rvv_quant_loop(x, n, p, q, 1, 1, 0) : qmx__rvv_quant_loop(x, n, p, q, 1, 0, 0);
}

static size_t qmx__dequant_run_s8_simd(const int8_t *q, size_t n, int32_t zp, float s, float *y) {
    size_t i = 0, vl;
    for (; i < n; i += vl) {   /* (float)(q - zp) * s: the int32 difference as the scalar's */
        vint32m4_t d;
        vl = __riscv_vsetvl_e32m4(n - i);
        d = __riscv_vsub_vx_i32m4(__riscv_vsext_vf4_i32m4(__riscv_vle8_v_i8m1(q + i, vl), vl), zp, vl);
        __riscv_vse32_v_f32m4(y + i, __riscv_vfmul_vf_f32m4(__riscv_vfcvt_f_x_v_f32m4(d, vl), s, vl), vl);
    }
    return n;
}

/* fp8 encode, the NEON kernel's integer steps (see "How each kernel matches" above) on e32m4
 * lanes, with RISC-V's differences made explicit: a NaN quotient is replaced by x itself (as
 * the scalar does: RISC-V arithmetic returns the canonical +NaN), the saturating clip is an
 * unsigned min on |bits| that spares NaN (vfmin would drop it), and the fp8-subnormal lanes
 * round |t| * 2^(mbits - emin) to nearest even from the exact fraction (qmx__rvv_round_m4). */
QMX__VINLINE size_t qmx__rvv_f8q_loop(const float *x, size_t n, float s, const qmx__f8c *k,
                                      uint8_t *out, int div, int sat, int fnuz) {
    const uint32_t maxb = qmx__f32_bits(k->maxf);
    size_t i = 0, vl;
    for (; i < n; i += vl) {
        vfloat32m4_t xv, t;
        vuint32m4_t u, a, rn, rs, code, sg;
        vl = __riscv_vsetvl_e32m4(n - i);
        xv = __riscv_vle32_v_f32m4(x + i, vl);
        t = div ? __riscv_vfdiv_vf_f32m4(xv, s, vl) : __riscv_vfmul_vf_f32m4(xv, s, vl);
        t = __riscv_vmerge_vvm_f32m4(xv, t, __riscv_vmfeq_vv_f32m4_b8(t, t, vl), vl);
        u = __riscv_vreinterpret_v_f32m4_u32m4(t);
        a = __riscv_vand_vx_u32m4(u, 0x7FFFFFFFu, vl);
        if (sat)   /* |t| clipped to max (bit order = value order); a NaN stays */
            a = __riscv_vmerge_vvm_u32m4(a, __riscv_vminu_vx_u32m4(a, maxb, vl),
                                         __riscv_vmsleu_vx_u32m4_b8(a, 0x7F800000u, vl), vl);
        rn = __riscv_vadd_vv_u32m4(__riscv_vadd_vx_u32m4(a, k->kadd, vl),
                                   __riscv_vand_vx_u32m4(__riscv_vsrl_vx_u32m4(a, (size_t)k->drop, vl), 1u, vl), vl);
        rn = __riscv_vsrl_vx_u32m4(rn, (size_t)k->drop, vl);
        rs = __riscv_vreinterpret_v_i32m4_u32m4(qmx__rvv_round_m4(
            __riscv_vfmul_vf_f32m4(__riscv_vreinterpret_v_u32m4_f32m4(a), k->subk, vl), 0, vl));
        code = __riscv_vmerge_vvm_u32m4(rs, rn, __riscv_vmsgeu_vx_u32m4_b8(a, k->thr, vl), vl);
        if (sat) {
            code = __riscv_vminu_vx_u32m4(code, k->nan, vl);
        } else {
            code = __riscv_vmerge_vxm_u32m4(code, k->ovf, __riscv_vmsgtu_vx_u32m4_b8(code, k->maxc, vl), vl);
            code = __riscv_vmerge_vxm_u32m4(code, k->nan, __riscv_vmsgtu_vx_u32m4_b8(a, 0x7F800000u, vl), vl);
        }
        sg = __riscv_vand_vx_u32m4(__riscv_vsrl_vx_u32m4(u, 24, vl), 0x80u, vl);
        if (fnuz) sg = __riscv_vmerge_vxm_u32m4(sg, 0u, __riscv_vmseq_vx_u32m4_b8(code, 0u, vl), vl);
        code = __riscv_vor_vv_u32m4(code, sg, vl);
        __riscv_vse8_v_u8m1(out + i, __riscv_vncvt_x_x_w_u8m1(__riscv_vncvt_x_x_w_u16m2(code, vl), vl), vl);
    }
    return n;
}
static size_t qmx__fp8_quant_run_simd(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out) {
    qmx__f8c k;
    int div = use_div != 0, sat = saturate != 0, fnuz = f->fnuz != 0;
    qmx__f8c_init(f, &k);
    if (div) {
        if (sat) return fnuz ? qmx__rvv_f8q_loop(x, n, scale, &k, out, 1, 1, 1) : qmx__rvv_f8q_loop(x, n, scale, &k, out, 1, 1, 0);
        return fnuz ? qmx__rvv_f8q_loop(x, n, scale, &k, out, 1, 0, 1) : qmx__rvv_f8q_loop(x, n, scale, &k, out, 1, 0, 0);
    }
    if (sat) return fnuz ? qmx__rvv_f8q_loop(x, n, scale, &k, out, 0, 1, 1) : qmx__rvv_f8q_loop(x, n, scale, &k, out, 0, 1, 0);
    return fnuz ? qmx__rvv_f8q_loop(x, n, scale, &k, out, 0, 0, 1) : qmx__rvv_f8q_loop(x, n, scale, &k, out, 0, 0, 0);
}
/* fp8 decode: the float bits as the NEON kernel builds them, then * scale (a NaN code gives
 * the canonical NaN there, as the scalar's multiply does on RISC-V). */
QMX__VINLINE size_t qmx__rvv_f8d_loop(const uint8_t *c, size_t n, float s, const qmx__f8c *k,
                                      uint32_t mlim, float *y, int kind) {
    size_t i = 0, vl;
    for (; i < n; i += vl) {
        vuint32m4_t cv, a, v;
        vfloat32m4_t vf;
        vl = __riscv_vsetvl_e32m4(n - i);
        cv = __riscv_vzext_vf4_u32m4(__riscv_vle8_v_u8m1(c + i, vl), vl);
        a = __riscv_vand_vx_u32m4(cv, 0x7Fu, vl);
        v = __riscv_vadd_vx_u32m4(__riscv_vsll_vx_u32m4(a, (size_t)k->drop, vl), k->adj, vl);
        vf = __riscv_vreinterpret_v_u32m4_f32m4(v);   /* exponent field 0: 2v - 2^emin, exact */
        vf = __riscv_vfsub_vf_f32m4(__riscv_vfadd_vv_f32m4(vf, vf, vl), k->eminf, vl);
        v = __riscv_vmerge_vvm_u32m4(v, __riscv_vreinterpret_v_f32m4_u32m4(vf),
                                     __riscv_vmsltu_vx_u32m4_b8(a, mlim, vl), vl);
        if (kind == 0) {
            v = __riscv_vmerge_vxm_u32m4(v, 0x7FC00000u, __riscv_vmseq_vx_u32m4_b8(a, 0x7Fu, vl), vl);
        } else if (kind == 1) {
            v = __riscv_vmerge_vxm_u32m4(v, 0x7FC00000u, __riscv_vmsgtu_vx_u32m4_b8(a, 0x7Cu, vl), vl);
            v = __riscv_vmerge_vxm_u32m4(v, 0x7F800000u, __riscv_vmseq_vx_u32m4_b8(a, 0x7Cu, vl), vl);
        }
        v = __riscv_vor_vv_u32m4(v, __riscv_vand_vx_u32m4(__riscv_vsll_vx_u32m4(cv, 24, vl), 0x80000000u, vl), vl);
        if (kind == 2) v = __riscv_vmerge_vxm_u32m4(v, 0x7FC00000u, __riscv_vmseq_vx_u32m4_b8(cv, 0x80u, vl), vl);
        __riscv_vse32_v_f32m4(y + i, __riscv_vfmul_vf_f32m4(__riscv_vreinterpret_v_u32m4_f32m4(v), s, vl), vl);
    }
    return n;
}
static size_t qmx__fp8_dequant_run_simd(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y) {
    qmx__f8c k;
    uint32_t mlim = 1u << f->mbits;
    qmx__f8c_init(f, &k);
    if (k.kind == 0) return qmx__rvv_f8d_loop(c, n, scale, &k, mlim, y, 0);
    if (k.kind == 1) return qmx__rvv_f8d_loop(c, n, scale, &k, mlim, y, 1);
    return qmx__rvv_f8d_loop(c, n, scale, &k, mlim, y, 2);
}
/* The fixed-point and float requantization, lane by lane the integer steps of qmx_requantize /
 * _single_rounding / _float (not vsmul / vssra: their vxrm rounding is not gemmlowp's).
 * Double rounding: SRDHM(x, m) = (x * m + 2^30) >> 31 in 64 bits for every product (gemmlowp's
 * nudge-and-truncate gives exactly that, negative ties included), the narrowing shift keeps
 * the low 32 bits, and only x = m = INT32_MIN reaches 2^31 (the one lane that reads INT32_MIN
 * afterwards: -1 wraps it to INT32_MAX); then RoundingDivideByPOT with its remainder and
 * threshold (ties away from zero). Single: (acc * m + 2^(total - 1)) >> total in 64 bits,
 * saturated. Float: (float)acc * scale held in [-2^31, 2^31 - 128], then qmx__round_rne's
 * steps (trunc, exact fraction, +-1). */
QMX__VINLINE vint32m2_t qmx__rvv_rq_m2(vint32m2_t a, vint32m2_t mu, vint32m2_t sh, vfloat32m2_t sc,
                                       int mode, size_t vl) {
    if (mode == QMX_REQUANT_DOUBLE_ROUNDING) {
        vuint32m2_t left = __riscv_vreinterpret_v_i32m2_u32m2(__riscv_vmax_vx_i32m2(sh, 0, vl));
        vuint32m2_t right = __riscv_vreinterpret_v_i32m2_u32m2(
            __riscv_vmax_vx_i32m2(__riscv_vrsub_vx_i32m2(sh, 0, vl), 0, vl));
        vint32m2_t x = __riscv_vsll_vv_i32m2(a, left, vl), v, mask, rem, thr;
        vint64m4_t p = __riscv_vadd_vx_i64m4(__riscv_vwmul_vv_i64m4(x, mu, vl), (int64_t)1 << 30, vl);
        v = __riscv_vnsra_wx_i32m2(p, 31, vl);
        v = __riscv_vsub_vx_i32m2_mu(__riscv_vmseq_vx_i32m2_b16(v, INT32_MIN, vl), v, v, 1, vl);
        mask = __riscv_vsub_vx_i32m2(__riscv_vsll_vv_i32m2(__riscv_vmv_v_x_i32m2(1, vl), right, vl), 1, vl);
        rem = __riscv_vand_vv_i32m2(v, mask, vl);
        thr = __riscv_vadd_vv_i32m2(__riscv_vsra_vx_i32m2(mask, 1, vl),
                                    __riscv_vreinterpret_v_u32m2_i32m2(__riscv_vsrl_vx_u32m2(
                                        __riscv_vreinterpret_v_i32m2_u32m2(v), 31, vl)), vl);
        v = __riscv_vsra_vv_i32m2(v, right, vl);
        return __riscv_vadd_vx_i32m2_mu(__riscv_vmsgt_vv_i32m2_b16(rem, thr, vl), v, v, 1, vl);
    } else if (mode == QMX_REQUANT_SINGLE_ROUNDING) {
        vint64m4_t tot = __riscv_vsext_vf2_i64m4(__riscv_vrsub_vx_i32m2(sh, 31, vl), vl);   /* 1..62 */
        vuint64m4_t ut = __riscv_vreinterpret_v_i64m4_u64m4(tot);
        vint64m4_t r = __riscv_vsll_vv_i64m4(__riscv_vmv_v_x_i64m4(1, vl),
                                             __riscv_vsub_vx_u64m4(ut, 1, vl), vl);
        r = __riscv_vadd_vv_i64m4(__riscv_vwmul_vv_i64m4(a, mu, vl), r, vl);
        r = __riscv_vsra_vv_i64m4(r, ut, vl);
        r = __riscv_vmax_vx_i64m4(__riscv_vmin_vx_i64m4(r, INT32_MAX, vl), INT32_MIN, vl);
        return __riscv_vncvt_x_x_w_i32m2(r, vl);
    } else {
        vfloat32m2_t t = __riscv_vfmul_vv_f32m2(__riscv_vfcvt_f_x_v_f32m2(a, vl), sc, vl), fr;
        vint32m2_t i;
        vbool16_t odd, up, dn;
        t = __riscv_vfmax_vf_f32m2(__riscv_vfmin_vf_f32m2(t, 2147483520.0f, vl), -2147483648.0f, vl);
        i = __riscv_vfcvt_rtz_x_f_v_i32m2(t, vl);
        fr = __riscv_vfsub_vv_f32m2(t, __riscv_vfcvt_f_x_v_f32m2(i, vl), vl);
        odd = __riscv_vmsne_vx_i32m2_b16(__riscv_vand_vx_i32m2(i, 1, vl), 0, vl);
        up = __riscv_vmor_mm_b16(__riscv_vmfgt_vf_f32m2_b16(fr, 0.5f, vl),
                                 __riscv_vmand_mm_b16(__riscv_vmfeq_vf_f32m2_b16(fr, 0.5f, vl), odd, vl), vl);
        dn = __riscv_vmor_mm_b16(__riscv_vmflt_vf_f32m2_b16(fr, -0.5f, vl),
                                 __riscv_vmand_mm_b16(__riscv_vmfeq_vf_f32m2_b16(fr, -0.5f, vl), odd, vl), vl);
        i = __riscv_vadd_vx_i32m2_mu(up, i, i, 1, vl);
        return __riscv_vsub_vx_i32m2_mu(dn, i, i, 1, vl);
    }
}

QMX__VINLINE void qmx__rvv_requant_loop(const qmx__rvv_rqrow *r, size_t n, int mode) {
    size_t j, vl;
    for (j = 0; j < n; j += vl) {
        vint32m2_t a, mu, sh, v;
        vfloat32m2_t sc;
        vl = __riscv_vsetvl_e32m2(n - j);
        a = __riscv_vle32_v_i32m2(r->acc + j, vl);
        if (r->bias) a = __riscv_vadd_vv_i32m2(a, __riscv_vle32_v_i32m2(r->bias + j, vl), vl); /* wraps */
        if (mode == QMX_REQUANT_FLOAT) {
            sc = r->pc ? __riscv_vle32_v_f32m2(r->sc + j, vl) : __riscv_vfmv_v_f_f32m2(r->sc[0], vl);
            mu = sh = __riscv_vmv_v_x_i32m2(0, vl);
        } else {
            mu = r->pc ? __riscv_vle32_v_i32m2(r->mu + j, vl) : __riscv_vmv_v_x_i32m2(r->mu[0], vl);
            sh = r->pc ? __riscv_vle32_v_i32m2((const int32_t *)(const void *)(r->sh + j), vl)
                       : __riscv_vmv_v_x_i32m2(r->sh[0], vl);
            sc = __riscv_vfmv_v_f_f32m2(0.0f, vl);
        }
        v = qmx__rvv_rq_m2(a, mu, sh, sc, mode, vl);
        v = __riscv_vadd_vx_i32m2(__riscv_vmin_vx_i32m2(__riscv_vmax_vx_i32m2(v, r->lo, vl), r->hi, vl),
                                  r->ozp, vl);
        if (r->esize == 2)
            __riscv_vse16_v_i16m1((int16_t *)r->out + j, __riscv_vncvt_x_x_w_i16m1(v, vl), vl);
        else
            __riscv_vse8_v_i8mf2((int8_t *)r->out + j,
                                 __riscv_vncvt_x_x_w_i8mf2(__riscv_vncvt_x_x_w_i16m1(v, vl), vl), vl);
    }
}
static void qmx__rvv_requant_row(const qmx__rvv_rqrow *r, size_t n) {
    if (r->mode == QMX_REQUANT_DOUBLE_ROUNDING) qmx__rvv_requant_loop(r, n, QMX_REQUANT_DOUBLE_ROUNDING);
    else if (r->mode == QMX_REQUANT_SINGLE_ROUNDING) qmx__rvv_requant_loop(r, n, QMX_REQUANT_SINGLE_ROUNDING);
    else qmx__rvv_requant_loop(r, n, QMX_REQUANT_FLOAT);
}

/* Nibble pairs: segment loads / stores (de)interleave even and odd elements. */
static size_t qmx__pack_nibbles_simd(const int8_t *s, size_t pairs, uint8_t *out) {
    size_t i = 0, vl;
    for (; i < pairs; i += vl) {
        vuint8m2_t e, o;
        vl = __riscv_vsetvl_e8m2(pairs - i);
        __riscv_vlseg2e8_v_u8m2(&e, &o, (const uint8_t *)s + 2 * i, vl);
        __riscv_vse8_v_u8m2(out + i, __riscv_vor_vv_u8m2(__riscv_vand_vx_u8m2(e, 0x0F, vl),
                                                         __riscv_vsll_vx_u8m2(o, 4, vl), vl), vl);
    }
    return pairs;
}
static size_t qmx__unpack_nibbles_simd(const uint8_t *in, size_t pairs, int is_signed, int8_t *s) {
    size_t i = 0, vl;
    for (; i < pairs; i += vl) {
        vuint8m2_t b;
        vint8m2_t e, o;
        vl = __riscv_vsetvl_e8m2(pairs - i);
        b = __riscv_vle8_v_u8m2(in + i, vl);
        if (is_signed) {   /* shift the nibble to the top, then arithmetic shift back */
            vint8m2_t sb = __riscv_vreinterpret_v_u8m2_i8m2(b);
            e = __riscv_vsra_vx_i8m2(__riscv_vsll_vx_i8m2(sb, 4, vl), 4, vl);
            o = __riscv_vsra_vx_i8m2(sb, 4, vl);
        } else {
            e = __riscv_vreinterpret_v_u8m2_i8m2(__riscv_vand_vx_u8m2(b, 0x0F, vl));
            o = __riscv_vreinterpret_v_u8m2_i8m2(__riscv_vsrl_vx_u8m2(b, 4, vl));
        }
        __riscv_vsseg2e8_v_i8m2(s + 2 * i, e, o, vl);
    }
    return pairs;
}
#else
/* ---- no vector unit: the scalar reference does everything ---- */
static size_t qmx__quant_run_s8_simd(const float *x, size_t n, const qmx__run *p, int8_t *q) {
    (void)x; (void)n; (void)p; (void)q;
    return 0;
}
static size_t qmx__dequant_run_s8_simd(const int8_t *q, size_t n, int32_t zp, float s, float *y) {
    (void)q; (void)n; (void)zp; (void)s; (void)y;
    return 0;
}
static size_t qmx__fp8_quant_run_simd(const float *x, size_t n, float scale, int use_div,
                                      const qmx__fp8fmt *f, int saturate, uint8_t *out) {
    (void)x; (void)n; (void)scale; (void)use_div; (void)f; (void)saturate; (void)out;
    return 0;
}
static size_t qmx__fp8_dequant_run_simd(const uint8_t *c, size_t n, float scale,
                                        const qmx__fp8fmt *f, float *y) {
    (void)c; (void)n; (void)scale; (void)f; (void)y;
    return 0;
}
static size_t qmx__pack_nibbles_simd(const int8_t *s, size_t pairs, uint8_t *out) {
    (void)s; (void)pairs; (void)out;
    return 0;
}
static size_t qmx__unpack_nibbles_simd(const uint8_t *in, size_t pairs, int is_signed, int8_t *s) {
    (void)in; (void)pairs; (void)is_signed; (void)s;
    return 0;
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION */

/* --------------------------------------------------------------------------------------------
 * MIT License. Copyright (c) 2026 the qmx authors.
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 * and associated documentation files (the "Software"), to deal in the Software without
 * restriction, including without limitation the rights to use, copy, modify, merge, publish,
 * distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions: The above copyright
 * notice and this permission notice shall be included in all copies or substantial portions of
 * the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
 * -------------------------------------------------------------------------------------------- */
