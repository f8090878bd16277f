/* qmx_calib.h - on-device calibration on top of qmx.h (part of qmx).
 *
 * This header is the home of qmx's calibration layer. Its contents land issue by issue; what
 * is here today is only the include structure, so that programs can already include the full
 * qmx set. The one-shot scale recipes of AQT, Qwix and TFLite (absmax, min-max with a zero
 * point) already live in qmx.h: qmx_compute_qparams().
 *
 * Planned (tracked in the project's issues): streaming observers with caller-owned state
 * (absmax, min-max, moving average, percentile, MSE/KL/SNR clip search, fixed bounds), fp8
 * delayed scaling with an amax history, Qwix method strings, MaxText intmp mixed-precision
 * rules, and N:M structured sparsity.
 *
 * Build: as qmx.h, one translation unit defines QMX_IMPLEMENTATION before including it.
 * MIT licensed (see qmx.h).
 */
#ifndef QMX_CALIB_H
#define QMX_CALIB_H
#include "qmx.h"
#endif /* QMX_CALIB_H */
