/* qmx_kernels.h - quantized compute kernels on top of qmx.h (part of qmx).
 *
 * This header is the home of qmx's compute layer. Its contents land issue by issue; what
 * is here today is only the include structure, so that programs can already include the
 * full qmx set. Nothing below is a placeholder function: every declared entry point is
 * implemented and tested.
 *
 * Planned (tracked in the project's issues):
 *   - tiled matmul: int8 x int8 -> int32 / requantized int8/int16 / float with per-tensor,
 *     per-channel and per-block scales; packed int4 weights; fp8 x fp8 -> float; GEMV paths;
 *     prepacked weights with *_workspace_size() queries (CMSIS-NN get_buffer_size pattern);
 *   - einsum: parsed two-operand specs planned onto the tiled kernels;
 *   - KV-cache quantization and quantized attention decode.
 *
 * Build: as qmx.h, one translation unit defines QMX_IMPLEMENTATION before including it.
 * MIT licensed (see qmx.h).
 */
#ifndef QMX_KERNELS_H
#define QMX_KERNELS_H
#include "qmx.h"
#endif /* QMX_KERNELS_H */
