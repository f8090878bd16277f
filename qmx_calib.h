/* qmx_calib.h - on-device calibration on top of qmx.h (part of qmx).
 *
 * Streaming, allocation-free calibration: the caller owns every byte of state, feeds batches
 * of float data, and asks for quantization parameters (scale, zero point) whenever it wants.
 * Every C peer delegates this to an offline converter; AQT, Qwix, Flax and PyTorch do it in the
 * framework. The final scale formulas are qmx.h's recipes (qmx_qconfig: AQT, Qwix, TFLite), so a
 * calibrated scale is exactly what qmx_compute_qparams would give for the same statistics.
 *
 * ============================================================================================
 * BUILD
 *   As qmx.h: one translation unit defines QMX_IMPLEMENTATION before including this header;
 *   that gives the implementation of qmx.h and of qmx_calib.h. Freestanding C99: no libc, no
 *   libm (square roots and the decimal parser are written here, exact), no allocation, no
 *   static state. Same configuration macros as qmx.h. Stack: every function < 1 KiB
 *   (the regex matcher's atom table, ~0.5 KiB, and the decimal parser's three 320-bit
 *   integers are the largest frames).
 *
 * OBSERVERS (qmx_observer_init / _update / _finalize / _bounds)
 *   The tensor is viewed as qmx.h does: [outer][axis_len][inner] with a granularity (per
 *   tensor, per channel = per index of axis_len, per block of block_size along axis_len), so
 *   there are n_groups = qmx_qparams_count(qcfg, count) groups. The caller supplies one
 *   qmx_calib_stat per group; an all-zero qmx_calib_stat is an empty group (init zeroes them).
 *   Each update is one batch: a whole tensor of `count` floats in that view. Methods (all
 *   statistics in float32, in flat element order within a batch, batches in call order):
 *     QMX_CALIB_ABSMAX        bound = max|x| over all batches * clip        (AQT, Qwix absmax)
 *     QMX_CALIB_MINMAX        lo = min(min x, 0) * clip, hi = max(max x, 0) * clip (Qwix minmax,
 *                             PyTorch MinMaxObserver / PerChannelMinMaxObserver)
 *     QMX_CALIB_MOVING_MINMAX PyTorch MovingAverageMinMaxObserver: the first batch sets (min,
 *                             max); every later batch does min = min + c * (bmin - min) (three
 *                             float ops in that order, no FMA), same for max; c = momentum
 *                             (averaging_constant, default 0.01). Bounds as MINMAX.
 *     QMX_CALIB_MEAN_ABSMAX   AQT MeanOfAbsMaxCalibration: bound = (sum of per-batch max|x|) /
 *                             batches * clip
 *     QMX_CALIB_ABSMEAN       AQT AbsMeanCalibration: bound = clip * (sum |x|^p / n_nonzero)^(1/p),
 *                             zeros excluded from the count (a count of 0 is 1); p in 1..4
 *     QMX_CALIB_RMS           Qwix "rms,k": bound = sqrt(sum x^2 / count) * clip
 *     QMX_CALIB_FIXED         Qwix "fixed": the data is ignored; lo + hi == 0 gives the
 *                             symmetric bound hi, else [lo, hi]; every group gets the same
 *                             parameters (Qwix makes fixed per-tensor)
 *   Min/max reductions have AVX-512 / AVX2 / NEON / RVV paths (exact; a zero min or max is
 *   stored as +0, since SIMD and scalar reductions may meet -0 and +0 in different orders), and
 *   with one group they check for NaN/Inf in the same pass. Sums use Neumaier's compensated
 *   summation in float32 over 32 lanes, in PIECES: a group's batch of m elements is cut, in
 *   the group's element order, into consecutive pieces of P = QMX_TASK_ELEMS * ceil(chunks /
 *   64) elements, chunks = ceil(m / QMX_TASK_ELEMS) (P = 65536 for m up to 64 x 65536; at
 *   most 64 pieces, the last shorter; a function of m only). In each piece, term j goes to
 *   lane j mod 32 (lanes start at 0 in every piece) and the lanes fold in order into (sum,
 *   comp) = (0, 0): every lane's sum, then every lane's compensation. The batch's (sum, comp)
 *   is piece 0's pair; each later piece, in order, adds its sum and then its compensation by
 *   the compensated add. Then the batch merges into the record the same way (sum, then
 *   compensation). A group of at most 65536 elements is one piece: its whole batch's 32 lanes
 *   folded once, the plain lane order (the bits qmx gave before the pieces). The order
 *   depends on m only, never on the worker count: qmx_observer_update_exec runs the pieces of
 *   a one-group batch as tasks and gives the same bits.
 *   Every path (AVX-512, AVX2, NEON, RVV at any VLEN with TwoSum, the scalar loop) follows that
 *   order: accurate to a few ulp for any count and the same bits on every target (no double:
 *   x87 would round twice). Products are kept out of FMA contraction. The square root is correctly
 *   rounded (exact integer-checked bisection); the p-th root for p = 3, 4 is the largest float r
 *   with r^p <= v (r^p by repeated float products), within 2 ulp.
 *   Finalize: each group's bounds (lo, hi, absmax = max(-lo, hi)) go through qmx.h's recipe
 *   of qcfg (qmx__group_qparams: AQT absmax/(qmax+0.5) with 0 -> 1, Qwix absmax/B with the
 *   sqrt(FLT_MIN) guard and minmax zero point, TFLite absmax/qmax, torch's and ONNX's
 *   formulas), for any qmx dtype (fp8: absmax / fp8_max, symmetric only). A symmetric qcfg
 *   turns [lo, hi] into absmax; an asymmetric one turns a symmetric bound b into [-b, b].
 *   MINMAX / MOVING_MINMAX with QMX_RECIPE_TORCH are torch's MinMaxObserver,
 *   PerChannelMinMaxObserver and MovingAverage(PerChannel)MinMaxObserver: tracked min/max,
 *   scales and zero points bit for bit (tests/test_recipes.c, 446 torch 1.13 cases).
 *   All-zero data: the bound is 0 and the recipe's zero guard gives a usable scale (AQT 1/127.5,
 *   Qwix 1, TFLite 1). NaN/Inf in a batch: QMX_ERR_NONFINITE and the state is untouched
 *   (the batch is scanned first). Finalize before any update: QMX_ERR_SIZE (except FIXED).
 *   A bound that overflows float (clip * huge): QMX_ERR_NONFINITE, outputs untouched.
 *   Non-finite STATE is refused too, never turned into a scale: a batch of finite values that
 *   would make a record Inf or NaN (the moving average of a batch near -3e38 and one near
 *   +3e38 overflows, then Inf - Inf; a sum of x^2 or |x|^p beyond FLT_MAX) returns
 *   QMX_ERR_NONFINITE and leaves every record as it was (with several groups, MOVING_MINMAX,
 *   MEAN_ABSMAX, ABSMEAN and RMS first update copies: the data is read twice). PyTorch's
 *   MovingAverageMinMaxObserver would keep the Inf / NaN. _bounds and _finalize return
 *   QMX_ERR_NONFINITE for a record with a non-finite field (only a caller can write one).
 *
 * FP8 DELAYED SCALING (qmx_fp8_delayed_init / _step / _update)
 *   The caller owns the amax history (length L >= 1 floats). One step with the current amax a:
 *     h = max(history)                     (the PREVIOUS amaxes; NaN if any is NaN)
 *     QMX_DELAYED_FLAX (flax.linen.fp8_ops, default; initial scale 1.0):
 *       h > 0 and finite: sf = fp8_max / h; sf = sf / 2^margin      else: sf = 1 / scale
 *       scale = 1 / sf                     (each step one float32 operation, as JAX does)
 *     QMX_DELAYED_AQT (aqt DelayedScalingCalibration; initial bound 0, so scale 0 until a
 *       positive finite amax is in the history; a 0 scale means "dequantize to 0" in AQT):
 *       h > 0 and finite: bound = h       else: bound stays;   scale = bound / fp8_max
 *     then the history rolls: history[1..L-1] = history[0..L-2], history[0] = a (Flax's
 *     roll(-1) then [0] = a keeps the same multiset; qmx keeps the newest first).
 *   fp8_max: E4M3FN 448, E5M2 57344, E4M3FNUZ 240, E5M2FNUZ 57344. _update takes a = max|x|
 *   of the data (NaN if any element is NaN, as jnp.max); a non-finite amax enters the history
 *   and freezes the scale for L steps, exactly as in Flax (status QMX_OK: that is the defined
 *   behaviour, not an error). margin in [-64, 64].
 *   A scale that float cannot hold is refused, where Flax would carry it on: when sf or 1/sf
 *   overflows or underflows (a subnormal amax, a margin of +-64 against a large or small
 *   amax) or an AQT bound / fp8_max underflows, the step returns QMX_ERR_NONFINITE, records
 *   the amax in the history (so it leaves after L steps) and keeps the previous scale. A struct
 *   whose scale (Flax) is not finite and > 0, or whose bound (AQT) is not finite and >= 0, is
 *   QMX_ERR_NONFINITE with nothing written.
 *
 * METHOD STRINGS (qmx_calib_parse_method; Qwix HowToQuantize.calibration_method)
 *   ASCII letters are case-insensitive (Qwix lower-cases); fields split on ','; no spaces.
 *     "absmax" | "absmax,k"     -> ABSMAX, clip k       (k finite, > 0)
 *     "minmax" | "minmax,k"     -> MINMAX, clip k       (k finite, > 0)
 *     "rms,k"                   -> RMS, clip k          (k required, finite, > 0)
 *     "fixed,M"                 -> FIXED, [-M, M]       (M finite, > 0)
 *     "fixed,lo,hi"             -> FIXED, [lo, hi]      (lo <= 0 <= hi, lo < hi)
 *   Anything else is QMX_ERR_PARSE: unknown names, missing/extra/empty fields, bad numbers,
 *   values out of the ranges above, a NUL byte inside len, len > QMX_CALIB_METHOD_MAX (256).
 *   qmx rejects k <= 0, which Qwix would accept and turn into a zero/negative bound.
 * NUMBERS (qmx_parse_f32): a strict decimal grammar, correctly rounded (nearest, ties to even)
 *   to float32 by exact integer arithmetic (no strtod, no libm, same bits everywhere):
 *       [+|-] ( digits [ "." digits* ] | "." digits ) [ (e|E) [+|-] digits ]
 *   At most 19 significant digits (leading and trailing zeros do not count) and 128
 *   characters; no spaces, "inf", "nan", hex or '_'. A value that rounds beyond FLT_MAX is
 *   QMX_ERR_PARSE; one below half the smallest subnormal rounds to a signed zero.
 *
 * HISTOGRAM (qmx_histogram_init / _update / _percentile / _mse_bound)
 *   A histogram of |x| (symmetric clipping, as TensorRT's calibrators) over caller-owned
 *   uint64_t bins (8 .. 2^20). Bin i counts |x| in [i*w, (i+1)*w) with w a power of two, the
 *   smallest with n_bins * w > max|x| seen so far. Range growth (PyTorch HistogramObserver
 *   grows its range by an integer factor and merges bins; qmx uses factors 2^k): when a batch
 *   exceeds the range, w doubles k times and every 2^k adjacent bins merge, in place. Counts are
 *   integers and binning |x| * (1/w) is exact, so the result equals binning all the data at the
 *   final width directly: independent of how the data was batched. All-zero data is counted in
 *   bin 0 with w = 0 (no range yet). NaN/Inf: QMX_ERR_NONFINITE, state untouched.
 *   Percentile: the upper edge of the first bin whose cumulative count reaches ppm / 10^6 of
 *   the total (exact 128-bit integer comparison), capped at max|x|.
 *   MSE: an exact search (not PyTorch's non-uniform search) over the candidate bounds "bin
 *   edges below max|x|, and max|x|", minimising sum_i count_i * (c_i - qdq(c_i))^2 over the bin
 *   centres c_i with qmx.h's symmetric recipe and dtype of the given qconfig (int or fp8),
 *   float32 compensated sums; ties keep the smaller bound. Cost O(n_bins^2).
 *   KL (qmx_histogram_kl_bound): TensorRT-style entropy calibration over the same bins, see
 *   the declaration; float32 with qmx's own logarithm and compensated sums.
 *   The |x| histogram above is qmx's own algorithm; for PyTorch's, see the next section.
 *
 * TORCH HISTOGRAM (qmx_torch_histogram_init / _update / _qparams; torch 1.13 HistogramObserver)
 *   A reimplementation of torch.ao.quantization.HistogramObserver (1.13) that gives torch's
 *   bits: caller-owned float32 bins (n_bins, torch's `bins`, default 2048) plus n_bins floats of
 *   scratch (qmx_torch_histogram_buffer_size), upsample_rate (default 128; qmx needs a power of
 *   two, 1..2^16, n_bins * upsample_rate <= 2^24). Per batch (forward):
 *     first batch, or min_val == max_val so far: restart: min/max = the batch's, histogram =
 *       histc(batch) (torch drops the earlier constant batches the same way);
 *     else: combined range [min(min), max(max)], _adjust_min_max (downsample_rate D = ceil(
 *       range / (n_bins * old_width / upsample_rate)), the max relaxed so that the new range is
 *       D * n_bins of those widths, start_idx = round-half-even(offset of the old min)), the
 *       batch's histc over it, plus the old histogram: added when the range did not change,
 *       else _combine_histograms (upsample by repetition, shift by start_idx, sum D at a time).
 *   torch quirks kept on purpose, so that the bins match: histc's range is int() of the float
 *   bounds (toward zero: values outside [trunc(min), trunc(max)] are not counted); when both
 *   truncate to the same integer histc uses the batch's own min / max, and when those are equal
 *   it widens them by 1 each way; combine reads the shifted cumsum through a float32 tensor.
 *   NEGATIVE COUNTS: that float32 read makes bins negative. Once a combine has split old bins
 *   (fractional counts) and the upsampled cumsum (about total x upsample_rate) is past 2^24,
 *   interpolated[k] = (I(k) - float32(I(k-1))) / U is negative where float32 rounded I(k-1) up
 *   and the batch adds nothing: a few ulp of the cumsum over U at first (-1/128, -1/64 for U =
 *   128), other small negative values after further growths (torch 1.13, measured: 222 of
 *   2047 bins at -1/128 in test_parallel's sequence; in the neg* data up to 903 bins, down to
 *   -0.118 after 3 growths). torch carries on: later combines upsample them, plain adds keep
 *   them, and _non_linear_param_search uses them in the cumsum, the total and the norms. qmx
 *   gives the same bits (the combine and the search are signed) and accepts such a state.
 *   STATE CHECK (_update, _update_exec and _qparams, after their argument checks, before the
 *   data is read or anything written): refused as a caller-corrupted struct are only sizes
 *   that init refuses (QMX_ERR_ARG) and, once a batch was seen, min_val > max_val
 *   (QMX_ERR_ARG) and NaN / Inf in min_val, max_val, max_val - min_val or a count
 *   (QMX_ERR_NONFINITE: every float step would carry it). Any finite count is accepted,
 *   negative included: the deficit has no fixed lower limit (it grows with the total and
 *   with each growth), so a limit would refuse states torch reaches. Caller-written counts so
 *   large that a sum overflows float32 (beyond about FLT_MAX / 2^24 = 2^104) are outside what
 *   data can reach and give meaningless counts or Inf (the next call then refuses the Inf).
 *   histc's float order (torch 1.13 CPU, the AVX2 kernels): bin = (int64)(((x - lo) / (R -
 *   lo)) * n_bins), divide first, each step one float32 operation, R the last edge of
 *   linspace(lo, hi, n_bins + 1), x outside [lo, R] not counted, x == R in the last bin. R is
 *   hi except when n_bins + 1 is a multiple of 16: linspace's vector loop then makes it
 *   fl(fma(-step, 7, hi) + fl(7 * step)), step = fl((hi - lo) / n_bins), up to 1 ulp off hi
 *   (qmx emulates the FMA exactly in integers). For a power-of-two n_bins the older order
 *   ((x - lo) * n_bins) / (R - lo) gives the same bins; for others it put values at or next to
 *   an edge in the neighbouring bin. The edge depends on torch's vector width: torch's DEFAULT
 *   and AVX512 kernels differ (measured on tests/data/calib_torch_histc.txt: in 4 and 14 of its
 *   480 calls); beyond n_bins + 1 = 32768 also on the thread count (qmx follows one thread).
 *   The upsampled array (n_bins * D floats in torch) is never built: one pass over the old bins
 *   in position order, O(n_bins * upsample_rate) soft-double additions, no other memory.
 *   _qparams runs _non_linear_param_search (alpha / beta steps of 1e-5, the cSum quantile scans,
 *   _compute_quantization_error's L2 norm of every candidate, stop at the first increase) and
 *   then the MinMaxObserver formulas (affine: scale = (max(hi,0) - min(lo,0)) / (qmax - qmin),
 *   zp = qmin - round(min(lo,0) / scale) clamped; symmetric: scale = max(-min(lo,0), max(hi,0))
 *   / ((qmax - qmin) / 2), zp 0 for qint8, 128 (or the custom range's floored midpoint) for
 *   quint8; scale = max(scale, 2^-23)), with reduce_range and custom quant_min / quant_max as
 *   torch. new_min / new_max are the searched range.
 *   Precision: every float32 tensor step of torch is one float32 operation here in the same
 *   order (no FMA, but for linspace's one above); every float64 step (cumsum(dtype=double),
 *   the Python floats alpha, beta, bin widths, thresholds) is done in a soft double (integers,
 *   nearest-even), so x87 and soft-float targets give the same bits as SSE2. torch compares a
 *   float32 cSum with a Python float by rounding the float to float32; qmx does the same. Not
 *   copied: torch.sum's vectorised float32 order for the histogram total and each candidate's
 *   norm; qmx rounds the float64 sum instead (the total is exact while the counts are integers
 *   below 2^24; with fractional or negative counts the two can differ in the last bits). That
 *   can only matter when two candidate norms tie within a few ulp (the range then moves by one
 *   bin), or a quantile threshold lands within an ulp of a cSum. Measured against torch 1.13
 *   (Debian's python3-torch, AVX2): tests/data/calib_torch_hist.txt, 82 sequences (44 with
 *   n_bins 3, 15, 77, 95, 100, 207, 300, 1000, 1023, 1536, 1951, 2047; 4 (neg*) that reach
 *   negative counts and run 2 to 4 more batches and the qparams over them), 211 histograms,
 *   410 qparams; tests/data/calib_torch_histc.txt, 480
 *   histc calls (n_bins 1..4096, values on and next to the edges); while writing the observer,
 *   299 more random sequences (1495 qparams); while fixing histc's order, 20480 more histc
 *   calls (every n_bins 1..4096, 75 million values, also on i386 x87 and s390x): histograms,
 *   counts, min/max, searched ranges, scales and zero points all bit-exact; test_calib checks
 *   the two files with no tolerance.
 *   Differences by design: NaN/Inf in a batch is QMX_ERR_NONFINITE, state untouched (torch
 *   poisons min/max), and so is a batch whose range max - min (or the relaxed range) is beyond
 *   FLT_MAX (torch keeps it, and its histc then indexes with NaN); a struct holding NaN / Inf
 *   (min, max, max - min, a count: caller-corrupted) is QMX_ERR_NONFINITE in _update and
 *   _qparams (see STATE CHECK above; negative counts are not refused), and _qparams never
 *   clamps a NaN scale to eps; an empty batch is QMX_ERR_SIZE
 *   (torch ignores it); qparams before data is QMX_ERR_SIZE (torch warns and returns scale 1,
 *   zp 0); a zero min/max is stored as +0 (torch may keep -0; nothing depends on it); a range
 *   growth with D > 2^32 (torch would allocate n_bins * D floats) or a zero old width is
 *   QMX_ERR_SIZE; where the shifted old histogram would pass the end of the new range (torch
 *   raises) qmx clips it; a constant batch of |x| >= 2^24 whose widened histc range rounds to
 *   one float (torch indexes with a NaN) counts in bin 0; more than 2^24 values of one batch in
 *   one bin stop counting exactly in float32 in both, at points that differ (torch sums
 *   per-thread partial histograms).
 *   Several cores: qmx_torch_histogram_update_exec gives the serial call's bits for any worker
 *   count (the histc counts per worker in integers, written as the serial float count, which
 *   stays at 2^24 once there; the range and the combine on the calling thread).
 *   All-zero data: min = max = 0, scale = 2^-23 (torch's eps), zp 0 (128 for symmetric
 *   quint8), as torch. Cost: _update O(n + n_bins * upsample_rate); _qparams O(n_bins) per
 *   candidate range tried (a few to a few hundred) plus up to 10^5 alpha / beta steps of a few
 *   soft-double operations each; no allocation, stack < 1 KiB.
 * SNR CLIP SEARCH (qmx_calib_snr_search): AQT SnrBasedAutoCalibration per group of a qconfig
 *   (see the declaration); one pass over the data per candidate.
 *
 * MIXED PRECISION RULES (qmx_intmp_parse / _lookup; MaxText quantization="intmp")
 *   JSON: one object whose keys are layer-path patterns (Python re.fullmatch) or "__default__",
 *   each mapping to an object with any of the fields w_bits, a_bits (integer 1..16 or null =
 *   not quantized), w_scale, a_scale (JSON number, finite, > 0), tile_size (-1 or >= 1).
 *   Built-in defaults: bits null, scales 1.0, tile_size -1. Every key inherits the fields it
 *   does not give from "__default__" (wherever it appears in the object), else the built-ins.
 *   Lookup scans every key in JSON order and the LAST full match wins; no match gives the
 *   __default__ rule; no match and no __default__ is QMX_ERR_ARG (MaxText: KeyError).
 *   No allocation: rules go to the caller's array (in JSON order) and the unescaped,
 *   NUL-terminated patterns to the caller's name buffer (sum of key lengths + 1 each).
 *   Strict JSON (RFC 8259): whitespace, strings with all escapes (\uXXXX incl. surrogate pairs,
 *   written as UTF-8; \u0000 rejected), numbers; no comments, no trailing commas, no BOM.
 *   Rejected with QMX_ERR_PARSE: any syntax error, truncation, raw control bytes or NUL,
 *   duplicate keys or fields (Python would silently keep the last), unknown fields, values of
 *   the wrong type or range (w_bits 8.0, "8", 17, tile_size 0), nested values (deep nesting is
 *   rejected at the first unexpected '{' or '[', no recursion), keys > QMX_INTMP_NAME_MAX
 *   bytes. Too few rules or name bytes: QMX_ERR_BUFFER_TOO_SMALL.
 *   Regex subset (bytes, ASCII classes): literals; '.' (any byte but newline); escapes \d \D
 *   \w \W \s \S and an escaped punctuation character; classes [abc], [a-z], [^...], with a
 *   leading ']' literal and \d \w \s inside; quantifiers * + ? and their lazy forms *? +? ??
 *   (the same for a full match); '^' at the start and '$' at the end (no-ops for a full
 *   match). QMX_ERR_UNSUPPORTED for valid Python syntax outside it: groups ( ), alternation |,
 *   counted repeats {m,n}, anchors inside, \b \A \1 and other letter escapes, POSIX [: :].
 *   QMX_ERR_PARSE for malformed patterns (nothing to repeat, multiple repeat, unterminated
 *   class, reversed range, trailing backslash). Matching is a Thompson NFA simulation:
 *   O(len(name) * atoms), no backtracking, no recursion, at most QMX_INTMP_MAX_ATOMS atoms.
 *   Stack: about 0.5 KiB (atom table and two state sets).
 *
 * N:M STRUCTURED SPARSITY (qmx_nm_*; Qwix sparsity.py)
 *   Weights W [rows][K] (the [N,K] "weights" layout of qmx_kernels.h); along K every group of
 *   m consecutive elements keeps its n largest |w| (1 <= n < m <= 256, K % m == 0); ties go to
 *   the lower index (lax.top_k, Qwix); zeros count like any value. Compressed form:
 *     values  [rows][K/m * n], the kept values of each group in increasing index order
 *     meta    per row ceil(K/m * n * b / 8) bytes, b = ceil(log2 m); index j of the row (group
 *             j / n) occupies bits [j*b, j*b + b) of the row's little-endian bit stream (bit t
 *             of the stream is bit t%8 of byte t/8). 2:4: one byte = two groups, indices
 *             i0 | i1 << 2 | i2 << 4 | i3 << 6; 4:8: 3 bits per index.
 *   qmx_nm_matmul_i8: C = sum_k (A - a_zp) * Wp exactly (int32; A . v - a_zp * sum(v), wrap-free
 *   for K <= QMX_NM_MAX_K), equal to qmx_matmul_i8 over the pruned dense weights. With m not a
 *   power of two every index is checked (< m) first; other metadata cannot read out of bounds.
 *   Paths (2:4 only; other n:m portable C): AVX-512 VBMI + VNNI, register tiles of 4 rows of
 *   A x 4 weight rows (2 x 8, 1 x 16 for the last rows; M = 1: 1 x 8): per 128 k each A row is
 *   loaded and flipped (a ^ 0x80) once for the 4 weight rows, each weight row's 64 indices
 *   are decoded once for the 4 A rows (vpbroadcastq, vpmultishiftqb, vpternlogd), then one
 *   vpermt2b gather and one vpdpbusd per (A row, weight row); 16 accumulators along k are
 *   reduced by one transpose-add tree, and (128 + a_zp) * sum(v) is taken off (sum(v): a
 *   vpdpbusd pass per block of 16 weight rows; for M = 1 inside the tile). Rows of A in blocks
 *   of about 256 KiB stay in L2 while blocks of 16 weight rows pass; a K tail loads with
 *   masks. AVX-512 VBMI without VNNI (vpmultishiftqb decodes 32 indices, vpermb gathers the
 *   kept bytes of 16 groups, vpmaddwd), AVX2 (pshufb gathers 4 groups per lane, vpmaddwd),
 *   portable C; integer arithmetic, the same bits everywhere. qmx_nm_matmul_f32: documented
 *   float order (kept k increasing, one rounded multiply and add each, no FMA; on x87 each is
 *   stored as float).
 *   Speed (bench/bench_calib.c on a Zen 5 at 4.3 GHz, AVX-512 VNNI build; plain dense =
 *   qmx_matmul_i8 on the same shapes, packed = the pruned weights prepacked for
 *   qmx_matmul_i8_packed): M = 1, 4096 x 4096: 1.6-1.7x plain, 1.2-1.3x packed (0.625x the
 *   bytes); M = 8, 4096 x 4096: 1.5x plain but 0.7x packed; M = 64, N = K = 1024: 0.8x plain,
 *   0.7x packed. From M = 8 the 2:4 kernel is compute-bound and slower than the packed dense
 *   one: on this CPU vpermt2b and vpdpbusd each issue 2 per cycle but compete for the same
 *   pipes, so the gather + dot per 64 kept products (0.9 cycle) costs about as much as the two
 *   dense vpdpbusd it replaces (1.0 cycle), and the index decode, the flips, sum(v) and the
 *   reduction add about 40 % (the 4 x 4 tile: 1.25-1.3 cycles per pair in L1). Use it there
 *   for the memory footprint.
 *   Without AVX-512 VBMI (AVX2, NEON, Cortex-M, portable C) the 2:4 kernel is slower than the
 *   dense one: use it there for the memory footprint.
 *
 * ERRORS
 *   QMX_ERR_NULL         a required pointer is NULL
 *   QMX_ERR_SIZE         count 0; finalize before any batch; history length 0; torch histogram:
 *                        n_bins out of range, qparams before any batch, a range growth > 2^32x
 *   QMX_ERR_SHAPE        count disagrees with the view; update count differs from init
 *   QMX_ERR_BUFFER_TOO_SMALL  fewer stats / scales than groups
 *   QMX_ERR_ARG          bad method, clip/momentum/p/bounds out of range, bad margin, a qcfg
 *                        that qmx.h rejects (unknown recipe, asymmetric fp8, ...)
 *   QMX_ERR_DTYPE        a dtype that is not an integer or fp8 dtype (or not fp8 for delayed)
 *   QMX_ERR_NONFINITE    NaN/Inf in an observer batch or in a computed bound
 *   QMX_ERR_PARSE        a malformed method string, number, JSON config or pattern
 *   QMX_ERR_UNSUPPORTED  a valid regex feature outside the supported subset
 *   Every function validates before writing: on error, outputs and state are untouched.
 *
 * MIT licensed (see qmx.h).
 * ============================================================================================ */
#ifndef QMX_CALIB_H
#define QMX_CALIB_H
#include "qmx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- C1. observers ------------------------------------------------------------------------- */
typedef enum qmx_calib_method {
    QMX_CALIB_ABSMAX = 0,        /* default */
    QMX_CALIB_MINMAX = 1,
    QMX_CALIB_MOVING_MINMAX = 2,
    QMX_CALIB_MEAN_ABSMAX = 3,
    QMX_CALIB_ABSMEAN = 4,
    QMX_CALIB_RMS = 5,
    QMX_CALIB_FIXED = 6
} qmx_calib_method;

/* How statistics become a bound. Zero-initialised: absmax, clip 1. */
typedef struct qmx_calib_config {
    qmx_calib_method method;
    float clip;       /* bound multiplier (AQT clipping_scale, Qwix k); 0 means 1; else > 0 */
    float momentum;   /* MOVING_MINMAX averaging constant in (0, 1]; 0 means 0.01 */
    int p;            /* ABSMEAN power 1..4; 0 means 1 */
    float lo, hi;     /* FIXED bounds: lo <= 0 <= hi, lo < hi */
} qmx_calib_config;

/* Statistics of one group. All-zero = empty. Fields are method-specific (documented above). */
typedef struct qmx_calib_stat {
    float min, max;   /* min / max (ABSMAX: max is max|x|; MOVING: the averaged values) */
    float sum, comp;  /* compensated sum and its compensation */
    uint64_t n;       /* divisor: elements, non-zero elements or batches */
    uint64_t seen;    /* elements observed (0 = empty) */
} qmx_calib_stat;

typedef struct qmx_observer {
    qmx_calib_config calib;
    qmx_qconfig q;           /* dtype, granularity, view, recipe, asymmetric, ... */
    size_t count;            /* elements per batch */
    qmx_calib_stat *stats;   /* caller-owned, n_groups entries */
    size_t n_groups;
} qmx_observer;

/* Validates the configs, stores them in obs and zeroes stats[0..n_groups). n_stats must be at
 * least qmx_qparams_count(q, count). */
QMX_API qmx_status qmx_observer_init(qmx_observer *obs, const qmx_calib_config *calib,
                                     const qmx_qconfig *q, size_t count, qmx_calib_stat *stats,
                                     size_t n_stats);
/* One batch of obs->count floats. */
QMX_API qmx_status qmx_observer_update(qmx_observer *obs, const float *x, size_t count);
/* qmx_observer_update through an executor (qmx.h; qmx_kernels.h, USING SEVERAL CORES). NULL or
 * workers 0 / 1: the serial call itself. The serial call's bits for every method, layout,
 * worker count and task order:
 *   One group (per tensor, or any view with n_groups 1), methods ABSMAX, MINMAX,
 *   MOVING_MINMAX, MEAN_ABSMAX, FIXED: the batch statistic is a min / max. TASKS:
 *   qmx_array_tasks(count) chunks of QMX_TASK_ELEMS elements, at most 64 runs of ceil(chunks /
 *   64) consecutive chunks (a function of count only); each run's min, max and largest |x| bit
 *   pattern (the serial pass's non-finite test) on the stack (~800 bytes), merged on the
 *   calling thread: exact, since a min / max of finite floats does not depend on the grouping
 *   and a zero min / max is +0 in every partial as in the serial pass. Then the serial
 *   record update, once, on the calling thread. One chunk: the serial pass there.
 *   One group, ABSMEAN and RMS: the batch sum is defined piece by piece (OBSERVERS above:
 *   pieces of QMX_TASK_ELEMS * ceil(chunks / 64) elements, the same runs of chunks as above,
 *   at most 64). TASKS: one per piece; each computes its piece's folded (sum, comp), its
 *   divisor count and its non-finite test with the serial call's code, stored on the stack
 *   (64 x 12 bytes); the calling thread merges them in piece order (piece 0's pair, then each
 *   later piece's sum and compensation by the compensated add), exactly as the serial call
 *   does, then updates the record once. So the same bits, not by associativity (the piece
 *   sums are not exact) but because the serial call evaluates the same pieces in the same
 *   merge order. One piece (count <= 65536): the serial group update on the calling thread;
 *   so too a group of more than 2^38 - 2^22 elements (pieces of 2^32 elements or more, beyond
 *   the 32-bit counts of the partials).
 *   Several groups: the TASKS partition the groups (the records): runs of ceil(n_groups / 64)
 *   consecutive groups (at most 64, the last shorter), a function of n_groups only; each
 *   group's batch statistics and record update are the serial call's code over the same
 *   elements in the same order (compensated sums included). So min(n_groups, 64) tasks: a
 *   per-channel observer with 2 channels uses at most 2 workers, whatever the channel length.
 * Errors before any record is written, all records untouched: the serial call's argument
 * errors (NULL, count, shape, view), then workers < 0 (QMX_ERR_ARG), parallel_for NULL
 * (QMX_ERR_NULL) (for every layout and method, also where no task would run; these before any
 * task), then the data's (QMX_ERR_NONFINITE): non-finite input (one group: found by the
 * tasks; several: a serial scan first), then a record that the update would make non-finite
 * (one group: the serial record update; several: the EMA / sum methods by a first parallel
 * pass over copies, as the serial call does, min / max / absmax / fixed by checking the
 * records). A piece or run that the executor failed to run reads as non-finite input. Stack:
 * 64 statuses (several groups), 64 (min, max, bits) partials (one group, min / max methods,
 * ~800 bytes) or 64 (sum, comp, count) partials (one group, ABSMEAN / RMS, 768 bytes), each
 * in a frame of its own (< 1 KiB: 0.86 and 0.98 KiB, gcc 12 -O2 -march=native, AVX-512). */
QMX_API qmx_status qmx_observer_update_exec(qmx_observer *obs, const float *x, size_t count,
                                            const qmx_executor *executor);
/* scales[g] (and zero_points[g] when obs->q.asymmetric) for every group. */
QMX_API qmx_status qmx_observer_finalize(const qmx_observer *obs, float *scales, size_t n_scales,
                                         int32_t *zero_points);
/* The bounds of group g after the method and clip: lo, hi (lo = -hi for symmetric methods). */
QMX_API qmx_status qmx_observer_bounds(const qmx_observer *obs, size_t group, float *lo,
                                       float *hi);

/* ---- C2. fp8 delayed scaling --------------------------------------------------------------- */
typedef enum qmx_delayed_mode {
    QMX_DELAYED_FLAX = 0,  /* flax.linen.fp8_ops (default) */
    QMX_DELAYED_AQT = 1    /* aqt DelayedScalingCalibration */
} qmx_delayed_mode;

typedef struct qmx_fp8_delayed {
    qmx_dtype fmt;
    qmx_delayed_mode mode;
    int margin;
    float *history;     /* caller-owned, length floats, newest first */
    size_t length;
    float scale;        /* the current scale */
    float bound;        /* AQT mode: the current bound */
} qmx_fp8_delayed;

/* Zeroes the history; scale = 1 (Flax) or 0 (AQT). */
QMX_API qmx_status qmx_fp8_delayed_init(qmx_fp8_delayed *d, qmx_dtype fmt, qmx_delayed_mode mode,
                                        int margin, float *history, size_t length);
/* One step with a given amax (any float; non-finite and <= 0 are handled as documented).
 * scale_out (may be NULL) receives the new scale, the one to quantize the current tensor with.
 * QMX_ERR_NONFINITE, with the amax still recorded in the history and the scale and bound
 * kept, when the new scale would not be a positive finite float (Flax: fp8_max / h / 2^margin
 * overflows or underflows; AQT: a positive bound / fp8_max underflows to 0); QMX_ERR_NONFINITE
 * with nothing written when the struct's scale or bound is not one a step can leave. */
QMX_API qmx_status qmx_fp8_delayed_step(qmx_fp8_delayed *d, float amax, float *scale_out);
/* One step with amax = max|x| over n > 0 floats. */
QMX_API qmx_status qmx_fp8_delayed_update(qmx_fp8_delayed *d, const float *x, size_t n,
                                          float *scale_out);
/* max|x| with NaN propagation (the bits of a NaN element are returned as a quiet NaN). */
QMX_API qmx_status qmx_absmax_f32(const float *x, size_t n, float *amax);
/* Several cores (qmx_kernels.h, USING SEVERAL CORES). Tasks: qmx_array_tasks(n, &t) chunks of
 * QMX_TASK_ELEMS elements (the last one ragged), a function of n only. qmx_absmax_f32_run
 * writes the partial max|x| over the elements of tasks [task_begin, task_end) (0 for an empty
 * range; NaN as above); partials merge by qmx_absmax_f32 over them, exactly: a max does not
 * depend on the order or grouping, so any split gives the serial call's bits. Errors: those of
 * qmx_absmax_f32, then a range out of bounds or reversed (QMX_ERR_ARG); amax untouched.
 * qmx_absmax_f32_exec and qmx_fp8_delayed_update_exec: the serial calls through an executor
 * (NULL or workers 0 / 1: the serial call itself): at most 64 runs of consecutive tasks (runs
 * of ceil(tasks / 64) tasks, a function of n only), a partial each on the stack (256 bytes),
 * merged by qmx_absmax_f32; the same bits as the serial call. Errors before any task, nothing
 * written: the serial call's, then workers < 0 (QMX_ERR_ARG), parallel_for NULL (QMX_ERR_NULL). */
QMX_API qmx_status qmx_absmax_f32_run(const float *x, size_t n, size_t task_begin,
                                      size_t task_end, float *amax);
QMX_API qmx_status qmx_absmax_f32_exec(const float *x, size_t n, float *amax,
                                       const qmx_executor *executor);
QMX_API qmx_status qmx_fp8_delayed_update_exec(qmx_fp8_delayed *d, const float *x, size_t n,
                                               float *scale_out, const qmx_executor *executor);

/* ---- C4. histogram observer and clip searches ----------------------------------------------- */
/* Histogram of |x| with caller-owned bins; zero-init of the struct plus zeroed bins = empty
 * (qmx_histogram_init does both). Bin i counts |x| in [i*w, (i+1)*w), w a power of two. */
typedef struct qmx_histogram {
    uint64_t *bins;     /* caller-owned, n_bins counts */
    size_t n_bins;      /* 8 .. 2^20 */
    float width;        /* w (a power of two); 0 while every value seen was 0 */
    float absmax;       /* max |x| seen */
    uint64_t total;     /* values seen */
} qmx_histogram;
QMX_API qmx_status qmx_histogram_init(qmx_histogram *h, uint64_t *bins, size_t n_bins);
QMX_API qmx_status qmx_histogram_update(qmx_histogram *h, const float *x, size_t n);
/* qmx_histogram_update through an executor (qmx_kernels.h, USING SEVERAL CORES; NULL or workers
 * 0 / 1: the serial call itself, workspace unused). TASKS: qmx_array_tasks(n) chunks of
 * QMX_TASK_ELEMS elements. The batch's max |x| is taken by qmx_absmax_f32_exec (exact), the
 * bins grow as in the serial call, then each task counts its elements into the bins of the
 * worker that runs it (workspace: workers x n_bins uint64 counts, zeroed first), which are
 * added to h->bins in worker order: integer counts, so the same bins, width, absmax and total
 * as the serial call for any worker count (1 task: counted into h->bins directly). Workspace:
 * qmx_histogram_exec_workspace_size (workers * n_bins * 8 bytes, 8-byte aligned; 0 for
 * workers 0 / 1). Errors, h untouched: the serial call's argument checks, then workers < 0
 * (QMX_ERR_ARG), parallel_for NULL (QMX_ERR_NULL), more than INT_MAX tasks
 * (QMX_ERR_OVERFLOW), workspace NULL (QMX_ERR_NULL) or too small (QMX_ERR_BUFFER_TOO_SMALL)
 * or not 8-byte aligned (QMX_ERR_ARG), then the data (NaN / Inf, a range past 2^127:
 * QMX_ERR_NONFINITE). */
QMX_API qmx_status qmx_histogram_exec_workspace_size(size_t n_bins, const qmx_executor *executor,
                                                     size_t *bytes);
QMX_API qmx_status qmx_histogram_update_exec(qmx_histogram *h, const float *x, size_t n,
                                             const qmx_executor *executor, void *workspace,
                                             size_t workspace_bytes);
/* The upper edge (i+1)*w of the first bin i whose cumulative count reaches ppm/1e6 of the total
 * (ppm in 1..1000000, e.g. 999900 = 99.99 %), capped at absmax. */
QMX_API qmx_status qmx_histogram_percentile(const qmx_histogram *h, uint32_t ppm, float *bound);
/* The clip bound c minimising sum_i count_i * (x_i - qdq(x_i; c))^2 over the bin centres
 * x_i = (i + 0.5) w, where qdq is qmx.h's symmetric recipe of q (per tensor, q->dtype) with
 * scale from absmax c; candidates are the bin edges (i+1) w below absmax and absmax itself;
 * ties keep the smaller c. An exact search over those candidates (not PyTorch's non-uniform
 * search). O(n_bins * candidates). */
QMX_API qmx_status qmx_histogram_mse_bound(const qmx_histogram *h, const qmx_qconfig *q,
                                           float *bound);
/* KL / entropy clipping (TensorRT's entropy calibration): for every candidate i = qbins ..
 * n_bins (qbins = num_quant_bins, 0 means 128), P = bins[0..i) with the counts of bins >= i
 * added to P[i-1]; Q = bins[0..i) merged into qbins groups (group g = bins [g*i/qbins,
 * (g+1)*i/qbins) in integer arithmetic) whose sums are spread evenly over the group's non-empty
 * bins; KL(P || Q) of the normalised P, Q (terms with P = 0 skipped; a term with P > 0, Q = 0
 * makes the candidate invalid). The smallest KL wins (ties: the smaller i); bound = i * w,
 * capped at absmax. Needs n_bins >= qbins, else QMX_ERR_SIZE. O(n_bins^2). Logarithms are
 * qmx's own (float32; |error| <= 2^-22 (1 + |ln v|), tested against libm). */
QMX_API qmx_status qmx_histogram_kl_bound(const qmx_histogram *h, int num_quant_bins, float *bound);
/* AQT SnrBasedAutoCalibration: for every group of q (symmetric), for each candidate factor c
 * (finite, > 0), quantize the group with bound = absmax * c by q's recipe and keep the c with
 * the largest SNR = log(1 + sum x^2 / sum (x - dq(q(x)))^2) (strictly larger wins; the start is
 * c = 1 with SNR 0). qmx compares the error sums (same order as the SNR, no log needed): a
 * candidate wins when sum x^2 > 0 and its error is strictly below the best so far. Writes
 * scales[g] and, if factors != NULL, the chosen factor of each group. A group whose sum x^2
 * overflows float is QMX_ERR_NONFINITE (nothing written; AQT's float32 SNR would be NaN); a
 * candidate whose error sum overflows is skipped. */
QMX_API qmx_status qmx_calib_snr_search(const qmx_qconfig *q, const float *x, size_t count,
                                        const float *candidates, size_t n_candidates,
                                        float *scales, size_t n_scales, float *factors);

/* ---- C4b. PyTorch-compatible histogram observer (torch 1.13 HistogramObserver) -------------- */
/* State of torch.ao.quantization.HistogramObserver: a float32 histogram over [min_val, max_val]
 * in caller-owned memory (2 * n_bins floats: the histogram, then scratch for update / qparams).
 * Zero-initialised struct = not set up; qmx_torch_histogram_init sets it up empty. */
#define QMX_TORCH_HIST_BINS 2048      /* torch's default bins */
#define QMX_TORCH_HIST_UPSAMPLE 128   /* torch's default upsample_rate */
typedef struct qmx_torch_histogram {
    float *bins;              /* n_bins float32 counts (torch's `histogram` buffer) */
    float *work;              /* n_bins floats of scratch */
    size_t n_bins;            /* 2 .. 2^20 */
    uint32_t upsample_rate;   /* a power of two, 1 .. 2^16; n_bins * upsample_rate <= 2^24 */
    float min_val, max_val;   /* torch's min_val / max_val (meaningful once seen) */
    int seen;                 /* 0 before the first batch (torch: min_val inf, max_val -inf) */
} qmx_torch_histogram;
/* Floats the caller must provide for n_bins bins (2 * n_bins); 0 when n_bins is out of range. */
QMX_API size_t qmx_torch_histogram_buffer_size(size_t n_bins);
QMX_API qmx_status qmx_torch_histogram_init(qmx_torch_histogram *h, float *buf, size_t buf_len,
                                            size_t n_bins, uint32_t upsample_rate);
/* HistogramObserver.forward over one batch of n > 0 floats (any shape: torch flattens).
 * QMX_ERR_NONFINITE for NaN/Inf in x or a range beyond FLT_MAX, QMX_ERR_SIZE for n == 0 or a
 * range growth torch could not allocate; on error the state is untouched. A corrupted struct
 * (as for qmx_torch_histogram_qparams) is QMX_ERR_ARG or QMX_ERR_NONFINITE; negative finite
 * counts are not corrupted (torch reaches them). */
QMX_API qmx_status qmx_torch_histogram_update(qmx_torch_histogram *h, const float *x, size_t n);
/* qmx_torch_histogram_update through an executor (qmx_kernels.h, USING SEVERAL CORES; NULL or
 * workers 0 / 1: the serial call itself, workspace unused). TASKS: qmx_array_tasks(n) chunks
 * of QMX_TASK_ELEMS elements. The batch's min / max: at most 64 runs of consecutive chunks,
 * partials on the stack merged on the calling thread (exact: a min / max does not depend on
 * the grouping). The histc pass: each task finds its elements' bins by the serial call's
 * float expression (the same edges, computed once) and counts them into the uint64 bins of
 * the worker that runs it (workspace, zeroed first); the counts are added in worker order and
 * written as floats, saturated at 2^24, which is exactly what the serial call's + 1.0f per
 * element gives (exact to 2^24, where 2^24 + 1 rounds back to 2^24): the same bins for any n
 * (1 task: the serial pass). Everything else (the range, the combine with the old histogram)
 * is the serial call's code on the calling thread, so bins, min_val and max_val are the serial
 * call's bits for any worker count and task order. Workspace:
 * qmx_torch_histogram_exec_workspace_size (workers * n_bins * 8 bytes, 8-byte aligned; 0 for
 * workers 0 / 1; QMX_ERR_SIZE for n_bins outside 2 .. 2^20). Errors, h untouched: the serial
 * call's argument and state checks, then workers < 0 (QMX_ERR_ARG), parallel_for NULL
 * (QMX_ERR_NULL), more than INT_MAX tasks (QMX_ERR_OVERFLOW), workspace NULL (QMX_ERR_NULL),
 * too small (QMX_ERR_BUFFER_TOO_SMALL) or not 8-byte aligned (QMX_ERR_ARG), then the data's
 * (NaN / Inf: QMX_ERR_NONFINITE; a range the serial call refuses: its status). */
QMX_API qmx_status qmx_torch_histogram_exec_workspace_size(size_t n_bins,
                                                           const qmx_executor *executor,
                                                           size_t *bytes);
QMX_API qmx_status qmx_torch_histogram_update_exec(qmx_torch_histogram *h, const float *x,
                                                   size_t n, const qmx_executor *executor,
                                                   void *workspace, size_t workspace_bytes);
/* HistogramObserver.calculate_qparams: _non_linear_param_search, then the MinMaxObserver
 * formulas. dtype QMX_UINT8 (torch.quint8) or QMX_INT8 (torch.qint8); symmetric 0 =
 * per_tensor_affine, 1 = per_tensor_symmetric; quant_min == quant_max == 0 means torch's
 * default range (None), else the customized range (quant_min <= 0 <= quant_max, quant_min <
 * quant_max, within the dtype's 256 values). new_min / new_max (may be NULL) receive the range
 * the search chose. QMX_ERR_NONFINITE for NaN / Inf in the state (min, max, max - min, a count:
 * a caller-corrupted struct) or in the result; QMX_ERR_ARG for min > max or sizes init refuses.
 * Negative finite counts are valid state (torch's combine leaves some; TORCH HISTOGRAM in the
 * documentation block): update and qparams take them as torch does.
 * Writes nothing on error; the histogram is not changed (work is). */
QMX_API qmx_status qmx_torch_histogram_qparams(const qmx_torch_histogram *h, qmx_dtype dtype,
                                               int symmetric, int reduce_range,
                                               int32_t quant_min, int32_t quant_max,
                                               float *scale, int32_t *zero_point,
                                               float *new_min, float *new_max);

/* ---- C5. MaxText intmp mixed-precision rules ---------------------------------------------- */
#define QMX_INTMP_NAME_MAX 256    /* longest key (pattern) in bytes, after unescaping */
#define QMX_INTMP_MAX_ATOMS 128   /* longest pattern in atoms (a+ counts twice) */
typedef struct qmx_intmp_rule {
    const char *pattern;   /* NUL-terminated, in the caller's names buffer */
    size_t pattern_len;
    int w_bits;            /* 0: null (weights not quantized); else 1..16 */
    int a_bits;            /* 0: null (activations not quantized); else 1..16 */
    float w_scale;         /* clipping scale, default 1.0 */
    float a_scale;
    int32_t tile_size;     /* -1: no sub-channel tiling; else >= 1 */
    unsigned present;      /* bit mask of the fields given in the JSON (1 w_bits, 2 a_bits,
                              4 w_scale, 8 a_scale, 16 tile_size) */
    int is_default;        /* the "__default__" entry */
} qmx_intmp_rule;
typedef struct qmx_intmp_config {
    const qmx_intmp_rule *rules;   /* n_rules entries in JSON order (incl. __default__) */
    size_t n_rules;
    const qmx_intmp_rule *deflt;   /* the __default__ rule, or NULL */
} qmx_intmp_config;
QMX_API qmx_status qmx_intmp_parse(const char *json, size_t len, qmx_intmp_rule *rules,
                                   size_t max_rules, char *names, size_t names_bytes,
                                   qmx_intmp_config *out);
/* The rule for a layer path (last matching pattern wins, else __default__). */
QMX_API qmx_status qmx_intmp_lookup(const qmx_intmp_config *cfg, const char *layer, size_t len,
                                    const qmx_intmp_rule **rule);
/* Validates a pattern of the supported subset: QMX_OK, QMX_ERR_PARSE (malformed) or
 * QMX_ERR_UNSUPPORTED (valid Python regex outside the subset). */
QMX_API qmx_status qmx_intmp_pattern_check(const char *pattern, size_t len);
/* Python re.fullmatch(pattern, s) for the supported subset: 1 match, 0 no match, or a
 * negative status for a pattern qmx_intmp_pattern_check rejects. */
QMX_API int qmx_intmp_fullmatch(const char *pattern, size_t plen, const char *s, size_t slen);

/* ---- C6. N:M structured sparsity ------------------------------------------------------------ */
/* Sizes of the compressed form of rows x K weights at n:m (1 <= n < m <= 256, K % m == 0):
 * values_count = rows * (K/m) * n elements; meta_bytes = rows * ceil((K/m) * n * b / 8) with
 * b = ceil(log2 m) bits per index. */
QMX_API qmx_status qmx_nm_storage_size(size_t rows, size_t K, int n, int m, size_t *values_count,
                                       size_t *meta_bytes);
/* Prune W [rows][K] (row r at W + r*ldw) to the n largest |w| of every m consecutive elements
 * along K (ties: the lower index wins) and write the compressed form. */
QMX_API qmx_status qmx_nm_compress_i8(const int8_t *W, size_t rows, size_t K, size_t ldw, int n,
                                      int m, int8_t *values, size_t values_count, uint8_t *meta,
                                      size_t meta_bytes);
QMX_API qmx_status qmx_nm_compress_f32(const float *W, size_t rows, size_t K, size_t ldw, int n,
                                       int m, float *values, size_t values_count, uint8_t *meta,
                                       size_t meta_bytes);
/* The dense pruned weights [rows][K] (row r at W + r*ldw) from the compressed form. */
QMX_API qmx_status qmx_nm_decompress_i8(const int8_t *values, size_t values_count,
                                        const uint8_t *meta, size_t meta_bytes, size_t rows,
                                        size_t K, int n, int m, int8_t *W, size_t ldw);
/* C[i][j] = sum_k (A[i][k] - a_zp) * Wp(j,k), exact int32, Wp = the pruned [N][K] weights given
 * compressed: equal to qmx_matmul_i8 (b_zp 0, NK layout) over Wp. K <= QMX_NM_MAX_K. */
#define QMX_NM_MAX_K 33025
QMX_API qmx_status qmx_nm_matmul_i8(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                    int32_t a_zp, int n, int m, const int8_t *values,
                                    size_t values_count, const uint8_t *meta, size_t meta_bytes,
                                    int32_t *C, size_t ldc);
/* C[i][j] = sum over kept k in increasing order of A[i][k] * value (float, each step one
 * rounded operation, no FMA): the same bits as the dense loop over the pruned weights in
 * increasing k (the pruned terms add exact zeros) for finite A, up to the sign of a zero sum. */
QMX_API qmx_status qmx_nm_matmul_f32(size_t M, size_t N, size_t K, const float *A, size_t lda,
                                     int n, int m, const float *values, size_t values_count,
                                     const uint8_t *meta, size_t meta_bytes, float *C,
                                     size_t ldc);

/* ---- C3. method strings and numbers -------------------------------------------------------- */
#define QMX_CALIB_METHOD_MAX 256
#define QMX_PARSE_NUMBER_MAX 128
/* s[0..len) (need not be NUL-terminated) -> *out; out untouched on error. */
QMX_API qmx_status qmx_calib_parse_method(const char *s, size_t len, qmx_calib_config *out);
QMX_API qmx_status qmx_parse_f32(const char *s, size_t len, float *out);

#ifdef __cplusplus
}
#endif
#endif /* QMX_CALIB_H */

/* ============================================================================================
 * IMPLEMENTATION
 * ============================================================================================ */
#if defined(QMX_IMPLEMENTATION) && !defined(QMX__CALIB_IMPLEMENTATION_DONE)
#define QMX__CALIB_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

/* FMA contraction off in the functions that multiply and add (see qmx_kernels.h): GCC by
 * attribute, clang by pragma plus an opaque copy (clang's -ffp-contract=fast ignores the pragma). */
#if defined(__GNUC__) && !defined(__clang__)
#  define QMX__CB_NOFMA __attribute__((optimize("fp-contract=off")))
#else
#  define QMX__CB_NOFMA
#endif
#if defined(__clang__)
#  define QMX__CB_PRAGMA_NOFMA _Pragma("clang fp contract(off)")
#  define QMX__CB_OPAQUE(v) __asm__("" : "+m"(v))
#else
#  define QMX__CB_PRAGMA_NOFMA
#  define QMX__CB_OPAQUE(v) ((void)0)
#endif

/* Neumaier compensated add: (*sum + *comp) tracks the exact sum closely. Adds and subtracts only. */
static void qmx__cb_add(float *sum, float *comp, float v) {
    float s = *sum, t = s + v, c;
    if (qmx__fabs(s) >= qmx__fabs(v)) { c = s - t; c = c + v; }
    else { c = v - t; c = c + s; }
    *comp = *comp + c;
    *sum = t;
}

/* Correctly rounded sqrt of a finite v >= 0: bisection on the bit pattern for the largest r
 * with r*r <= v (exact in double: 48-bit products), then the midpoint test m*m < v (m has 25
 * significant bits, m*m 50: exact; a tie m*m == v is impossible for a 24-bit v > 0). */
static float qmx__cb_sqrt(float v) {
    uint32_t lo = 0, hi = 0x7F800000u;   /* invariant: f(lo)^2 <= v < f(hi)^2 */
    double dv = (double)v, r, rn, m;
    if (!(v > 0.0f)) return 0.0f;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        double f = (double)qmx__bits_f32(mid);
        if (f * f <= dv) lo = mid; else hi = mid;
    }
    r = (double)qmx__bits_f32(lo);
    rn = (double)qmx__bits_f32(lo + 1);
    m = (r + rn) * 0.5;
    return (m * m < dv) ? qmx__bits_f32(lo + 1) : qmx__bits_f32(lo);
}
static float qmx__cb_powi(float r, int p) {
    float y = r;
    int i;
    for (i = 1; i < p; i++) y = y * r;
    return y;
}
/* p-th root (p = 1..4) of a finite v >= 0. */
static float qmx__cb_root(float v, int p) {
    uint32_t lo = 0, hi = 0x7F800000u;
    if (p == 1) return v;
    if (p == 2) return qmx__cb_sqrt(v);
    if (!(v > 0.0f)) return 0.0f;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (qmx__cb_powi(qmx__bits_f32(mid), p) <= v) lo = mid; else hi = mid;
    }
    return qmx__bits_f32(lo);
}

/* The element ranges of group g (as qmx_compute_qparams enumerates them). */
typedef struct qmx__cb_grp { size_t o0, o1, k0, k1, i0, i1; } qmx__cb_grp;
static void qmx__cb_group(const qmx_qconfig *c, const qmx__view *v, size_t g, qmx__cb_grp *r) {
    r->o0 = 0; r->o1 = v->outer; r->k0 = 0; r->k1 = v->len; r->i0 = 0; r->i1 = v->inner;
    if (c->granularity == QMX_PER_CHANNEL) { r->k0 = g; r->k1 = g + 1; }
    else if (c->granularity == QMX_PER_BLOCK) {
        size_t b = (g / v->inner) % v->nblocks;
        r->o0 = g / (v->inner * v->nblocks); r->o1 = r->o0 + 1;
        r->i0 = g % v->inner; r->i1 = r->i0 + 1;
        r->k0 = b * v->block; r->k1 = r->k0 + v->block < v->len ? r->k0 + v->block : v->len;
    }
}

static qmx_status qmx__cb_check_calib(const qmx_calib_config *k) {
    if ((unsigned)k->method > (unsigned)QMX_CALIB_FIXED) return QMX_ERR_ARG;
    if (k->clip != 0.0f && !(qmx__isfinite(k->clip) && k->clip > 0.0f)) return QMX_ERR_ARG;
    if (k->momentum != 0.0f && !(k->momentum > 0.0f && k->momentum <= 1.0f)) return QMX_ERR_ARG;
    if (k->p < 0 || k->p > 4) return QMX_ERR_ARG;
    if (k->method == QMX_CALIB_FIXED) {
        if (!qmx__isfinite(k->lo) || !qmx__isfinite(k->hi)) return QMX_ERR_ARG;
        if (!(k->lo <= 0.0f && k->hi >= 0.0f && k->lo < k->hi)) return QMX_ERR_ARG;
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_observer_init(qmx_observer *obs, const qmx_calib_config *calib,
                                      const qmx_qconfig *q, size_t count, qmx_calib_stat *stats,
                                      size_t n_stats) {
    qmx__view v;
    qmx_status st;
    size_t g;
    if (!obs || !calib || !q || !stats) return QMX_ERR_NULL;
    st = qmx__resolve(q, count, &v);
    if (st != QMX_OK) return st;
    if (v.dtype == QMX_FLOAT32) return QMX_ERR_DTYPE;
    st = qmx__cb_check_calib(calib);
    if (st != QMX_OK) return st;
    if (n_stats < v.n_params) return QMX_ERR_BUFFER_TOO_SMALL;
    obs->calib = *calib;
    obs->q = *q;
    obs->count = count;
    obs->stats = stats;
    obs->n_groups = v.n_params;
    for (g = 0; g < v.n_params; g++) {
        qmx_calib_stat z = {0.0f, 0.0f, 0.0f, 0.0f, 0, 0};
        stats[g] = z;
    }
    return QMX_OK;
}

/* min, max and the largest |x| bit pattern of n >= 1 floats in one pass: qmx.h's
 * qmx__st_minmax (the same bits on every path; a zero min / max is +0). */
static uint32_t qmx__cb_minmax(const float *x, size_t n, float *pmn, float *pmx) {
    return qmx__st_minmax(x, n, pmn, pmx);
}

#if defined(QMX__AVX512) && defined(__GNUC__) && !defined(__clang__)
/* g++ 12: false -Wmaybe-uninitialized inside the AVX-512 intrinsics (GCC PR 105593) */
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#  define QMX__CB_MINMAX_POP 1
#endif
/* Sums of |x|^p (absmean, p = 1..4) or x^2 (rms) over 32 lanes, one PIECE of a group's batch
 * at a time (qmx__cb_piece; pieces: qmx__cb_piece_len): the j-th term of the piece goes to
 * lane j mod 32 (a compensated sum per lane), and the lanes are folded in lane order when the
 * piece ends (qmx__cb_lanes_fold). Every path uses this order, so the bits are the same
 * everywhere; a piece of at most 32 terms is the plain sequential compensated sum. The vector
 * paths use TwoSum, whose error term is exact like the scalar Neumaier step's, so both give
 * the same bits (and feeding a piece in several calls, e.g. row by row, changes nothing). A
 * zero term (absmean skips |x| = 0) changes no lane: s + 0 = s and the error is +0. */
#define QMX__CB_LANES 32
#if defined(QMX__AVX512) || defined(QMX__AVX2)
static unsigned qmx__popcount32(uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_popcount(v);
#else
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    return (unsigned)((((v + (v >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
#endif
}
#endif
typedef struct qmx__cb_lanes {
    float s[QMX__CB_LANES], c[QMX__CB_LANES];
    uint64_t pos;   /* terms so far in this batch: the next lane is pos mod 32 */
    uint64_t nz;    /* terms that count in the divisor */
} qmx__cb_lanes;

#if defined(__clang__) && (defined(QMX__AVX512) || defined(QMX__AVX2))
#  define QMX__CB_VOPAQUE(v) __asm__("" : "+v"(v))   /* no contraction of the term into the add */
#elif defined(__clang__) && defined(QMX__NEON64)
#  define QMX__CB_VOPAQUE(v) __asm__("" : "+w"(v))
#else
#  define QMX__CB_VOPAQUE(v) ((void)0)
#endif

/* One term into its lane (the scalar path, and the vector paths' heads and tails). */
QMX__CB_NOFMA
static void qmx__cb_lane_step(qmx__cb_lanes *L, float x, int rms, int p, uint32_t *mb) {
    QMX__CB_PRAGMA_NOFMA
    float a = qmx__fabs(x), t;
    size_t j = (size_t)(L->pos++ & 31u);
    uint32_t b = qmx__f32_bits(x) & 0x7FFFFFFFu;
    *mb = b > *mb ? b : *mb;
    if (rms) t = a * a;
    else if (a != 0.0f) t = qmx__cb_powi(a, p);
    else return;
    L->nz++;
    QMX__CB_OPAQUE(t);
    qmx__cb_add(&L->s[j], &L->c[j], t);
}

QMX__CB_NOFMA
static uint32_t qmx__cb_lanes_add(qmx__cb_lanes *L, const float *x, size_t len, int rms, int p) {
    QMX__CB_PRAGMA_NOFMA
    size_t i = 0, i0;
    uint32_t mb = 0;   /* the largest |x| bit pattern, as qmx__cb_minmax */
    /* terms up to lane 0 one at a time, so that a vector body starts on it */
    for (; i < len && (L->pos & 31u) != 0; i++) qmx__cb_lane_step(L, x[i], rms, p, &mb);
    i0 = i;
    (void)i0;   /* used by the vector paths only */
#if defined(QMX__AVX512)
    if (len - i >= 32) {
        __m512 s0 = _mm512_loadu_ps(L->s), s1 = _mm512_loadu_ps(L->s + 16);
        __m512 c0 = _mm512_loadu_ps(L->c), c1 = _mm512_loadu_ps(L->c + 16);
        const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF);
        __m512i m0 = _mm512_setzero_si512();
        uint64_t nz = 0;
        for (; i + 32 <= len; i += 32) {
            __m512 a0 = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512((const void *)(x + i)), absm));
            __m512 a1 = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512((const void *)(x + i + 16)), absm));
            __m512 v0 = a0, v1 = a1, t0, t1, b0, b1;
            int j;
            m0 = _mm512_max_epu32(m0, _mm512_max_epu32(_mm512_castps_si512(a0), _mm512_castps_si512(a1)));
            if (rms) { v0 = _mm512_mul_ps(a0, a0); v1 = _mm512_mul_ps(a1, a1); }
            else {
                for (j = 1; j < p; j++) { v0 = _mm512_mul_ps(v0, a0); v1 = _mm512_mul_ps(v1, a1); }
                nz += (uint64_t)qmx__popcount32((uint32_t)_mm512_cmp_ps_mask(a0, _mm512_setzero_ps(), _CMP_NEQ_OQ) |
                                                ((uint32_t)_mm512_cmp_ps_mask(a1, _mm512_setzero_ps(), _CMP_NEQ_OQ) << 16));
            }
            QMX__CB_VOPAQUE(v0); QMX__CB_VOPAQUE(v1);
            /* TwoSum: t = s + v, error ((s - (t - b)) + (v - b)) with b = t - s */
            t0 = _mm512_add_ps(s0, v0); t1 = _mm512_add_ps(s1, v1);
            b0 = _mm512_sub_ps(t0, s0); b1 = _mm512_sub_ps(t1, s1);
            c0 = _mm512_add_ps(c0, _mm512_add_ps(_mm512_sub_ps(s0, _mm512_sub_ps(t0, b0)), _mm512_sub_ps(v0, b0)));
            c1 = _mm512_add_ps(c1, _mm512_add_ps(_mm512_sub_ps(s1, _mm512_sub_ps(t1, b1)), _mm512_sub_ps(v1, b1)));
            s0 = t0; s1 = t1;
        }
        _mm512_storeu_ps(L->s, s0); _mm512_storeu_ps(L->s + 16, s1);
        _mm512_storeu_ps(L->c, c0); _mm512_storeu_ps(L->c + 16, c1);
        mb = (uint32_t)_mm512_reduce_max_epu32(m0);
        L->pos += i - i0;
        L->nz += rms ? (uint64_t)(i - i0) : nz;
    }
#elif defined(QMX__AVX2)
    if (len - i >= 32) {
        __m256 sv[4], cv[4];
        const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
        __m256i m0 = _mm256_setzero_si256();
        uint32_t tb[8];
        uint64_t nz = 0;
        int q, j;
        for (q = 0; q < 4; q++) { sv[q] = _mm256_loadu_ps(L->s + 8 * q); cv[q] = _mm256_loadu_ps(L->c + 8 * q); }
        for (; i + 32 <= len; i += 32)
            for (q = 0; q < 4; q++) {
                __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + i + 8 * q), absm), v = a, t, b;
                m0 = _mm256_max_epu32(m0, _mm256_castps_si256(a));
                if (rms) v = _mm256_mul_ps(a, a);
                else {
                    for (j = 1; j < p; j++) v = _mm256_mul_ps(v, a);
                    nz += (uint64_t)qmx__popcount32((uint32_t)_mm256_movemask_ps(
                        _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_NEQ_OQ)));
                }
                QMX__CB_VOPAQUE(v);
                t = _mm256_add_ps(sv[q], v);
                b = _mm256_sub_ps(t, sv[q]);
                cv[q] = _mm256_add_ps(cv[q], _mm256_add_ps(_mm256_sub_ps(sv[q], _mm256_sub_ps(t, b)),
                                                           _mm256_sub_ps(v, b)));
                sv[q] = t;
            }
        for (q = 0; q < 4; q++) { _mm256_storeu_ps(L->s + 8 * q, sv[q]); _mm256_storeu_ps(L->c + 8 * q, cv[q]); }
        _mm256_storeu_si256((__m256i *)(void *)tb, m0);
        for (q = 0; q < 8; q++) mb = tb[q] > mb ? tb[q] : mb;
        L->pos += i - i0;
        L->nz += rms ? (uint64_t)(i - i0) : nz;
    }
#elif defined(QMX__NEON64)
    if (len - i >= 32) {
        float32x4_t sv[8], cv[8];
        uint32x4_t nzv = vdupq_n_u32(0), m0 = nzv;
        int q, j;
        for (q = 0; q < 8; q++) { sv[q] = vld1q_f32(L->s + 4 * q); cv[q] = vld1q_f32(L->c + 4 * q); }
        for (; i + 32 <= len; i += 32)
            for (q = 0; q < 8; q++) {
                float32x4_t a = vabsq_f32(vld1q_f32(x + i + 4 * q)), v = a, t, b;
                m0 = vmaxq_u32(m0, vreinterpretq_u32_f32(a));
                if (rms) v = vmulq_f32(a, a);
                else {
                    for (j = 1; j < p; j++) v = vmulq_f32(v, a);
                    nzv = vsubq_u32(nzv, vmvnq_u32(vceqq_f32(a, vdupq_n_f32(0.0f))));
                }
                QMX__CB_VOPAQUE(v);
                t = vaddq_f32(sv[q], v);
                b = vsubq_f32(t, sv[q]);
                cv[q] = vaddq_f32(cv[q], vaddq_f32(vsubq_f32(sv[q], vsubq_f32(t, b)), vsubq_f32(v, b)));
                sv[q] = t;
            }
        for (q = 0; q < 8; q++) { vst1q_f32(L->s + 4 * q, sv[q]); vst1q_f32(L->c + 4 * q, cv[q]); }
        mb = vmaxvq_u32(m0);
        L->pos += i - i0;
        L->nz += rms ? (uint64_t)(i - i0) : (uint64_t)vaddvq_u32(nzv);
    }
#elif defined(QMX__RVV)
    if (len - i >= 32) {   /* the 32 lanes in vsetvl strips (any VLEN), the same steps */
        uint64_t nz = 0;
        size_t j0, vl;
        int j;
        for (; i + 32 <= len; i += 32)
            for (j0 = 0; j0 < 32u; j0 += vl) {
                vuint32m4_t ab;
                vfloat32m4_t a, v, sv, cv, t, b;
                vl = __riscv_vsetvl_e32m4(32u - j0);
                ab = __riscv_vand_vx_u32m4(
                    __riscv_vle32_v_u32m4((const uint32_t *)(const void *)(x + i + j0), vl),
                    0x7FFFFFFFu, vl);
                mb = __riscv_vmv_x_s_u32m1_u32(__riscv_vredmaxu_vs_u32m4_u32m1(
                    ab, __riscv_vmv_s_x_u32m1(mb, 1), vl));
                a = __riscv_vreinterpret_v_u32m4_f32m4(ab);
                v = a;
                if (rms) v = __riscv_vfmul_vv_f32m4(a, a, vl);
                else {   /* |x| != 0 counts (NaN too, as the scalar step) */
                    for (j = 1; j < p; j++) v = __riscv_vfmul_vv_f32m4(v, a, vl);
                    nz += (uint64_t)__riscv_vcpop_m_b8(__riscv_vmfne_vf_f32m4_b8(a, 0.0f, vl), vl);
                }
                sv = __riscv_vle32_v_f32m4(L->s + j0, vl);
                cv = __riscv_vle32_v_f32m4(L->c + j0, vl);
                t = __riscv_vfadd_vv_f32m4(sv, v, vl);   /* TwoSum, as the other paths */
                b = __riscv_vfsub_vv_f32m4(t, sv, vl);
                cv = __riscv_vfadd_vv_f32m4(
                    cv, __riscv_vfadd_vv_f32m4(__riscv_vfsub_vv_f32m4(sv, __riscv_vfsub_vv_f32m4(t, b, vl), vl),
                                               __riscv_vfsub_vv_f32m4(v, b, vl), vl), vl);
                __riscv_vse32_v_f32m4(L->s + j0, t, vl);
                __riscv_vse32_v_f32m4(L->c + j0, cv, vl);
            }
        L->pos += i - i0;
        L->nz += rms ? (uint64_t)(i - i0) : nz;
    }
#endif
    for (; i < len; i++) qmx__cb_lane_step(L, x[i], rms, p, &mb);
    return mb;
}

/* The lanes in order into (sum, comp): every lane's sum, then every lane's compensation. Lanes
 * never reached hold zeros and are skipped (adding them would change nothing). */
static void qmx__cb_lanes_fold(const qmx__cb_lanes *L, float *sum, float *comp) {
    size_t j, used = L->pos < QMX__CB_LANES ? (size_t)L->pos : QMX__CB_LANES;
    for (j = 0; j < used; j++) qmx__cb_add(sum, comp, L->s[j]);
    for (j = 0; j < used; j++) qmx__cb_add(sum, comp, L->c[j]);
}

#if defined(QMX__CB_MINMAX_POP)
#  pragma GCC diagnostic pop
#  undef QMX__CB_MINMAX_POP
#endif

/* A group's elements as rows, in the group's element order: o from o0 to o1 - 1, k from k0 to
 * k0 + nk - 1 (o outer), each row rl elements at x + (o * len + k) * inner + i0 (a group that
 * spans whole rows is one contiguous row per o: the same flat order). */
typedef struct qmx__cb_rows { size_t o0, o1, k0, nk, rl, i0; } qmx__cb_rows;
static void qmx__cb_rows_of(const qmx__view *v, const qmx__cb_grp *r, qmx__cb_rows *g) {
    g->o0 = r->o0; g->o1 = r->o1; g->k0 = r->k0; g->i0 = r->i0;
    if (r->i0 == 0 && r->i1 == v->inner) { g->nk = 1; g->rl = (r->k1 - r->k0) * v->inner; }
    else { g->nk = r->k1 - r->k0; g->rl = r->i1 - r->i0; }
}

/* The pieces of a group's absmean / rms batch sum: a group of m >= 1 elements is cut, in its
 * element order, into pieces of QMX_TASK_ELEMS * ceil(chunks / 64) elements, chunks =
 * ceil(m / QMX_TASK_ELEMS) (so 65536 up to 64 chunks; at most 64 pieces, the last shorter; a
 * function of m only, the runs of chunks of the one-group min / max split). */
#define QMX__CB_PIECES 64
static size_t qmx__cb_piece_len(size_t m) {
    size_t nt = m / QMX_TASK_ELEMS + (m % QMX_TASK_ELEMS != 0);
    size_t per = nt / QMX__CB_PIECES + (nt % QMX__CB_PIECES != 0);
    return (per ? per : 1) * (size_t)QMX_TASK_ELEMS;
}
/* Elements [e0, e1) of group g (0 <= e0 < e1 <= its count): fresh lanes, the terms in order,
 * folded into (*ps, *pc) from (0, 0); *pnz the terms counted in the divisor. Returns the
 * largest |x| bit pattern (non-finite input when >= 0x7F800000; the partials then meaningless).
 * The serial call and the tasks both take a piece's partials from here. */
QMX__CB_NOFMA
static uint32_t qmx__cb_piece(const qmx__view *v, const qmx__cb_rows *g, const float *x,
                              size_t e0, size_t e1, int rms, int p, float *ps, float *pc,
                              uint64_t *pnz) {
    QMX__CB_PRAGMA_NOFMA
    qmx__cb_lanes L;
    uint32_t mb = 0;
    size_t q = e0 / g->rl, off = e0 % g->rl, o = g->o0 + q / g->nk, k = g->k0 + q % g->nk, j;
    for (j = 0; j < QMX__CB_LANES; j++) { L.s[j] = 0.0f; L.c[j] = 0.0f; }
    L.pos = 0; L.nz = 0;
    while (e0 < e1) {
        size_t take = g->rl - off < e1 - e0 ? g->rl - off : e1 - e0;
        uint32_t rb = qmx__cb_lanes_add(&L, x + (o * v->len + k) * v->inner + g->i0 + off, take,
                                        rms, p);
        mb = rb > mb ? rb : mb;
        e0 += take;
        off = 0;
        if (++k == g->k0 + g->nk) { k = g->k0; o++; }
    }
    *ps = 0.0f; *pc = 0.0f;
    qmx__cb_lanes_fold(&L, ps, pc);
    *pnz = L.nz;
    return mb;
}
/* Piece k's partials (ps, pc) into the batch's (sum, comp), pieces in order: piece 0's pair as
 * it is (a one-piece batch is the fold itself, as before pieces), each later piece's sum and
 * then its compensation by the compensated add (as a batch merges into its record). */
static void qmx__cb_piece_merge(float *sum, float *comp, size_t k, float ps, float pc) {
    if (k == 0) { *sum = ps; *comp = pc; return; }
    qmx__cb_add(sum, comp, ps);
    qmx__cb_add(sum, comp, pc);
}

static qmx_status qmx__cb_record(const qmx_observer *obs, float mn, float mx, float sum,
                                 float comp, uint64_t n, uint64_t cnt, qmx_calib_stat *s);
/* Batch statistics of one group, then merged into its record. */
QMX__CB_NOFMA
static qmx_status qmx__cb_update_group(const qmx_observer *obs, const qmx__view *v,
                                       const qmx__cb_grp *r, const float *x, qmx_calib_stat *s) {
    QMX__CB_PRAGMA_NOFMA
    qmx_calib_method m = obs->calib.method;
    float mn = 0.0f, mx = 0.0f, sum = 0.0f, comp = 0.0f;
    uint64_t n = 0;
    uint32_t bits = 0;   /* the largest |x| bit pattern seen by the pass over x */
    qmx__cb_rows g;
    size_t o, k, cnt;
    int first = 1;
    qmx__cb_rows_of(v, r, &g);
    cnt = (g.o1 - g.o0) * g.nk * g.rl;
    if (m == QMX_CALIB_ABSMEAN || m == QMX_CALIB_RMS) {   /* pieces, merged in order */
        size_t len = qmx__cb_piece_len(cnt), e0, e1;
        int p = obs->calib.p ? obs->calib.p : 1;
        for (e0 = 0, k = 0; e0 < cnt; e0 = e1, k++) {
            float ps, pc;
            uint64_t nz;
            uint32_t rb;
            e1 = cnt - e0 < len ? cnt : e0 + len;
            rb = qmx__cb_piece(v, &g, x, e0, e1, m == QMX_CALIB_RMS, p, &ps, &pc, &nz);
            bits = rb > bits ? rb : bits;
            qmx__cb_piece_merge(&sum, &comp, k, ps, pc);
            n += nz;
        }
    } else
        for (o = g.o0; o < g.o1; o++)
            for (k = g.k0; k < g.k0 + g.nk; k++) {
                float a, b;
                uint32_t rb = qmx__cb_minmax(x + (o * v->len + k) * v->inner + g.i0, g.rl, &a, &b);
                bits = rb > bits ? rb : bits;
                if (first) { mn = a; mx = b; first = 0; }
                mn = a < mn ? a : mn;
                mx = b > mx ? b : mx;
            }
    if (bits >= 0x7F800000u) return QMX_ERR_NONFINITE;   /* before s is written */
    return qmx__cb_record(obs, mn, mx, sum, comp, n, (uint64_t)cnt, s);
}

/* A group's batch statistics (finite: min / max, or the folded sum, compensation and divisor
 * count; cnt elements) merged into its record s, written only when the result is finite. */
QMX__CB_NOFMA
static qmx_status qmx__cb_record(const qmx_observer *obs, float mn, float mx, float sum,
                                 float comp, uint64_t n, uint64_t cnt, qmx_calib_stat *s) {
    QMX__CB_PRAGMA_NOFMA
    qmx_calib_method m = obs->calib.method;
    qmx_calib_stat ns = *s;
    switch (m) {
    case QMX_CALIB_ABSMAX: {
        float am = qmx__fabs(mn) > qmx__fabs(mx) ? qmx__fabs(mn) : qmx__fabs(mx);
        if (ns.seen == 0 || am > ns.max) ns.max = am;
        ns.n += cnt;
        break;
    }
    case QMX_CALIB_MINMAX:
        if (ns.seen == 0 || mn < ns.min) ns.min = mn;
        if (ns.seen == 0 || mx > ns.max) ns.max = mx;
        ns.n += cnt;
        break;
    case QMX_CALIB_MOVING_MINMAX:
        if (ns.seen == 0) { ns.min = mn; ns.max = mx; }
        else {
            float c = obs->calib.momentum != 0.0f ? obs->calib.momentum : 0.01f, t;
            t = mn - ns.min; t = c * t; QMX__CB_OPAQUE(t); ns.min = ns.min + t;
            t = mx - ns.max; t = c * t; QMX__CB_OPAQUE(t); ns.max = ns.max + t;
        }
        ns.n += 1;
        break;
    case QMX_CALIB_MEAN_ABSMAX: {
        float am = qmx__fabs(mn) > qmx__fabs(mx) ? qmx__fabs(mn) : qmx__fabs(mx);
        qmx__cb_add(&ns.sum, &ns.comp, am);
        ns.n += 1;
        break;
    }
    case QMX_CALIB_ABSMEAN:
    case QMX_CALIB_RMS:
        /* batch sums are merged compensated: sum first, then the batch compensation */
        qmx__cb_add(&ns.sum, &ns.comp, sum);
        qmx__cb_add(&ns.sum, &ns.comp, comp);
        ns.n += n;
        break;
    case QMX_CALIB_FIXED:
        break;
    }
    /* the state stays finite: an update that would make it Inf / NaN (an EMA or a sum that
     * overflows float) is refused like non-finite input, and the record is left as it was */
    if (!qmx__isfinite(ns.min) || !qmx__isfinite(ns.max) || !qmx__isfinite(ns.sum) ||
        !qmx__isfinite(ns.comp))
        return QMX_ERR_NONFINITE;
    ns.seen += cnt;
    *s = ns;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_observer_update(qmx_observer *obs, const float *x, size_t count) {
    qmx__view v;
    qmx_status st;
    size_t g, i;
    if (!obs || !x || !obs->stats) return QMX_ERR_NULL;
    if (count == 0) return QMX_ERR_SIZE;
    if (count != obs->count) return QMX_ERR_SHAPE;
    st = qmx__resolve(&obs->q, count, &v);
    if (st != QMX_OK) return st;
    /* Non-finite input leaves every record untouched. One group checks in its own (single)
     * pass; several groups are checked first: every |x| bit pattern below Inf's, an integer
     * max, which compilers vectorise. */
    if (obs->n_groups != 1) {
        uint32_t mb = 0;
        for (i = 0; i < count; i++) {
            uint32_t b = qmx__f32_bits(x[i]) & 0x7FFFFFFFu;
            mb = b > mb ? b : mb;
        }
        if (mb >= 0x7F800000u) return QMX_ERR_NONFINITE;
    }
    /* An EMA or a sum can overflow float in any group: with several groups, those methods
     * first update a copy of every record (the data is read twice), so that a refused batch
     * leaves every record as it was. MINMAX and ABSMAX cannot overflow. */
    if (obs->n_groups != 1 && obs->calib.method != QMX_CALIB_MINMAX &&
        obs->calib.method != QMX_CALIB_ABSMAX && obs->calib.method != QMX_CALIB_FIXED) {
        for (g = 0; g < obs->n_groups; g++) {
            qmx__cb_grp r;
            qmx_calib_stat copy = obs->stats[g];
            qmx__cb_group(&obs->q, &v, g, &r);
            st = qmx__cb_update_group(obs, &v, &r, x, &copy);
            if (st != QMX_OK) return st;
        }
    }
    for (g = 0; g < obs->n_groups; g++) {
        qmx__cb_grp r;
        qmx__cb_group(&obs->q, &v, g, &r);
        st = qmx__cb_update_group(obs, &v, &r, x, &obs->stats[g]);
        if (st != QMX_OK) return st;   /* only with one group or a corrupted record */
    }
    return QMX_OK;
}

/* ---- several cores: min / max in chunks, merged exactly (USING SEVERAL CORES) ---- */
/* qmx__cb_minmax of x[0 .. n), n >= 1, through an executor already checked (workers > 1,
 * parallel_for set): qmx_array_tasks(n) chunks of QMX_TASK_ELEMS, at most 64 runs of
 * ceil(chunks / 64) consecutive chunks (a function of n only), each run's min, max and largest
 * |x| bit pattern on the stack, merged on the calling thread. Exact: the min / max of finite
 * floats does not depend on the grouping, every partial stores a zero min / max as +0 as the
 * serial pass does, and the bit pattern max is an integer max; so the serial pass's min, max
 * and return value (min / max meaningless when it is >= 0x7F800000, as there). One run: the
 * serial pass on the calling thread. A run the executor failed to run reads as non-finite. */
#define QMX__CB_MM_RUNS 64
typedef struct qmx__cb_mm_job {
    const float *x;
    size_t n, nt, per;
    int runs;
    float mn[QMX__CB_MM_RUNS], mx[QMX__CB_MM_RUNS];   /* each entry written by its task only */
    uint32_t mb[QMX__CB_MM_RUNS];
} qmx__cb_mm_job;
static void qmx__cb_mm_task(void *arg, int task, int worker) {
    qmx__cb_mm_job *j = (qmx__cb_mm_job *)arg;
    size_t tb, te, e0, e1;
    (void)worker;   /* no workspace */
    if (task < 0 || task >= j->runs) return;   /* outside the executor contract */
    tb = (size_t)task * j->per;
    te = j->nt - tb < j->per ? j->nt : tb + j->per;
    e0 = tb * QMX_TASK_ELEMS;
    e1 = te == j->nt ? j->n : te * QMX_TASK_ELEMS;
    j->mb[task] = qmx__cb_minmax(j->x + e0, e1 - e0, &j->mn[task], &j->mx[task]);
}
/* not inlined: its 64 partials (~800 bytes) stay out of the callers' frames (< 1 KiB each) */
#if defined(__GNUC__) || defined(__clang__)
#  define QMX__CB_MM_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#  define QMX__CB_MM_NOINLINE __declspec(noinline)
#else
#  define QMX__CB_MM_NOINLINE
#endif
QMX__CB_MM_NOINLINE
static uint32_t qmx__cb_minmax_exec(const float *x, size_t n, const qmx_executor *ex,
                                    float *pmn, float *pmx) {
    qmx__cb_mm_job j;
    float mn, mx;
    uint32_t mb;
    int r;
    j.x = x; j.n = n;
    j.nt = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    j.per = j.nt / QMX__CB_MM_RUNS + (j.nt % QMX__CB_MM_RUNS != 0);
    j.runs = (int)(j.nt / j.per + (j.nt % j.per != 0));
    if (j.runs == 1) return qmx__cb_minmax(x, n, pmn, pmx);
    for (r = 0; r < j.runs; r++) { j.mn[r] = 0.0f; j.mx[r] = 0.0f; j.mb[r] = 0xFFFFFFFFu; }
    ex->parallel_for(ex->pool, j.runs, qmx__cb_mm_task, &j);
    mn = j.mn[0]; mx = j.mx[0]; mb = j.mb[0];
    for (r = 1; r < j.runs; r++) {
        mn = j.mn[r] < mn ? j.mn[r] : mn;
        mx = j.mx[r] > mx ? j.mx[r] : mx;
        mb = j.mb[r] > mb ? j.mb[r] : mb;
    }
    *pmn = mn; *pmx = mx;
    return mb;
}

/* ---- several cores: the pieces of one group's absmean / rms sum (USING SEVERAL CORES) ---- */
/* The one group's batch through an executor already checked (workers > 1, parallel_for set):
 * a task per piece (qmx__cb_piece_len), its partials on the stack (768 bytes), merged in
 * piece order on the calling thread by qmx__cb_piece_merge, then the record update there: the
 * serial call's code and order, so its bits. One piece, or pieces too long for the 32-bit
 * counts (a group of more than 2^38 - 2^22 elements): the serial call's group update on the
 * calling thread. A piece the executor failed to run reads as non-finite. */
typedef struct qmx__cb_sum_job {
    const qmx__view *v;
    const qmx__cb_rows *g;
    const float *x;
    size_t cnt, len;
    int pieces, rms, p;
    float s[QMX__CB_PIECES], c[QMX__CB_PIECES];   /* each entry written by its task only */
    uint32_t nz[QMX__CB_PIECES];                  /* 0xFFFFFFFF: non-finite input or not run */
} qmx__cb_sum_job;
static void qmx__cb_sum_task(void *arg, int task, int worker) {
    qmx__cb_sum_job *j = (qmx__cb_sum_job *)arg;
    size_t e0, e1;
    uint64_t nz;
    uint32_t mb;
    (void)worker;   /* no workspace */
    if (task < 0 || task >= j->pieces) return;   /* outside the executor contract */
    e0 = (size_t)task * j->len;
    e1 = j->cnt - e0 < j->len ? j->cnt : e0 + j->len;
    mb = qmx__cb_piece(j->v, j->g, j->x, e0, e1, j->rms, j->p, &j->s[task], &j->c[task], &nz);
    j->nz[task] = mb >= 0x7F800000u ? 0xFFFFFFFFu : (uint32_t)nz;
}
QMX__CB_MM_NOINLINE
static qmx_status qmx__cb_sum_exec(qmx_observer *obs, const qmx__view *v, const float *x,
                                   const qmx_executor *ex) {
    qmx__cb_sum_job j;
    qmx__cb_grp r;
    qmx__cb_rows g;
    float sum = 0.0f, comp = 0.0f;
    uint64_t n = 0;
    int k;
    qmx__cb_group(&obs->q, v, 0, &r);
    qmx__cb_rows_of(v, &r, &g);
    j.cnt = (g.o1 - g.o0) * g.nk * g.rl;
    j.len = qmx__cb_piece_len(j.cnt);
    if (j.cnt <= j.len || j.len >= 0xFFFFFFFFu)
        return qmx__cb_update_group(obs, v, &r, x, obs->stats);
    j.v = v; j.g = &g; j.x = x;
    j.pieces = (int)((j.cnt - 1) / j.len + 1);
    j.rms = obs->calib.method == QMX_CALIB_RMS;
    j.p = obs->calib.p ? obs->calib.p : 1;
    for (k = 0; k < j.pieces; k++) { j.s[k] = 0.0f; j.c[k] = 0.0f; j.nz[k] = 0xFFFFFFFFu; }
    ex->parallel_for(ex->pool, j.pieces, qmx__cb_sum_task, &j);
    for (k = 0; k < j.pieces; k++)
        if (j.nz[k] == 0xFFFFFFFFu) return QMX_ERR_NONFINITE;   /* before the record */
    for (k = 0; k < j.pieces; k++) {
        qmx__cb_piece_merge(&sum, &comp, (size_t)k, j.s[k], j.c[k]);
        n += j.nz[k];
    }
    return qmx__cb_record(obs, 0.0f, 0.0f, sum, comp, n, (uint64_t)j.cnt, obs->stats);
}

/* ---- several cores: runs of groups (USING SEVERAL CORES) ---- */
#define QMX__CB_OBS_RUNS 64
typedef struct qmx__cb_obs_job {
    const qmx_observer *obs;
    qmx_calib_stat *stats;
    const qmx__view *v;
    const float *x;
    size_t per, runs;
    int dry;                            /* update copies only, record the status */
    qmx_status st[QMX__CB_OBS_RUNS];    /* one per run, each written by its task only */
} qmx__cb_obs_job;
static void qmx__cb_obs_task(void *arg, int task, int worker) {
    qmx__cb_obs_job *j = (qmx__cb_obs_job *)arg;
    size_t g, g0, g1;
    (void)worker;   /* no workspace */
    if (task < 0 || (size_t)task >= j->runs) return;   /* outside the executor contract */
    g0 = (size_t)task * j->per;
    g1 = j->obs->n_groups - g0 < j->per ? j->obs->n_groups : g0 + j->per;
    for (g = g0; g < g1; g++) {
        qmx__cb_grp r;
        qmx_calib_stat copy = j->stats[g];
        qmx_status st;
        qmx__cb_group(&j->obs->q, j->v, g, &r);
        st = qmx__cb_update_group(j->obs, j->v, &r, j->x, j->dry ? &copy : &j->stats[g]);
        if (st != QMX_OK) { j->st[task] = st; return; }
    }
}
QMX__DEF qmx_status qmx_observer_update_exec(qmx_observer *obs, const float *x, size_t count,
                                             const qmx_executor *executor) {
    qmx__cb_obs_job j;
    qmx__view v;
    qmx_status st;
    size_t g, i;
    uint32_t mb = 0;
    if (!executor || executor->workers == 0 || executor->workers == 1 || !obs)
        return qmx_observer_update(obs, x, count);
    if (!x || !obs->stats) return QMX_ERR_NULL;   /* the serial call's checks, in order */
    if (count == 0) return QMX_ERR_SIZE;
    if (count != obs->count) return QMX_ERR_SHAPE;
    st = qmx__resolve(&obs->q, count, &v);
    if (st != QMX_OK) return st;
    if (executor->workers < 0) return QMX_ERR_ARG;
    if (!executor->parallel_for) return QMX_ERR_NULL;
    if (obs->n_groups == 1) {   /* the group is the whole batch, in flat order */
        float mn = 0.0f, mx = 0.0f;
        if (obs->calib.method == QMX_CALIB_ABSMEAN || obs->calib.method == QMX_CALIB_RMS)
            return qmx__cb_sum_exec(obs, &v, x, executor);   /* pieces, merged in order */
        if (qmx__cb_minmax_exec(x, count, executor, &mn, &mx) >= 0x7F800000u)
            return QMX_ERR_NONFINITE;
        return qmx__cb_record(obs, mn, mx, 0.0f, 0.0f, 0, (uint64_t)count, obs->stats);
    }
    for (i = 0; i < count; i++) {
        uint32_t b = qmx__f32_bits(x[i]) & 0x7FFFFFFFu;
        mb = b > mb ? b : mb;
    }
    if (mb >= 0x7F800000u) return QMX_ERR_NONFINITE;
    j.obs = obs; j.stats = obs->stats; j.v = &v; j.x = x;
    j.per = obs->n_groups / QMX__CB_OBS_RUNS + (obs->n_groups % QMX__CB_OBS_RUNS != 0);
    j.runs = obs->n_groups / j.per + (obs->n_groups % j.per != 0);
    for (i = 0; i < QMX__CB_OBS_RUNS; i++) j.st[i] = QMX_OK;
    if (obs->calib.method == QMX_CALIB_MINMAX || obs->calib.method == QMX_CALIB_ABSMAX ||
        obs->calib.method == QMX_CALIB_FIXED) {
        /* finite input keeps a finite record finite: only a non-finite record fails */
        for (g = 0; g < obs->n_groups; g++) {
            const qmx_calib_stat *r = &obs->stats[g];
            if (!qmx__isfinite(r->min) || !qmx__isfinite(r->max) || !qmx__isfinite(r->sum) ||
                !qmx__isfinite(r->comp))
                return QMX_ERR_NONFINITE;
        }
    } else {   /* an EMA or a sum may overflow: a first pass over copies (as the serial call) */
        j.dry = 1;
        executor->parallel_for(executor->pool, (int)j.runs, qmx__cb_obs_task, &j);
        for (i = 0; i < j.runs; i++)
            if (j.st[i] != QMX_OK) return j.st[i];
    }
    j.dry = 0;
    executor->parallel_for(executor->pool, (int)j.runs, qmx__cb_obs_task, &j);
    return QMX_OK;
}

/* Bounds of one group; QMX_ERR_SIZE when empty, QMX_ERR_NONFINITE when not finite. */
QMX__CB_NOFMA
static qmx_status qmx__cb_bounds(const qmx_observer *obs, const qmx_calib_stat *s, float *lo,
                                 float *hi) {
    QMX__CB_PRAGMA_NOFMA
    const qmx_calib_config *k = &obs->calib;
    float clip = k->clip != 0.0f ? k->clip : 1.0f, b = 0.0f, l, h;
    int sym = 1;
    if (k->method == QMX_CALIB_FIXED) {
        if (!qmx__isfinite(k->lo) || !qmx__isfinite(k->hi)) return QMX_ERR_NONFINITE;
        if (k->lo + k->hi == 0.0f) { b = k->hi; }
        else { *lo = k->lo; *hi = k->hi; return QMX_OK; }
        *lo = -b; *hi = b;
        return QMX_OK;
    }
    if (s->seen == 0) return QMX_ERR_SIZE;
    /* update never stores a non-finite record; a caller-written one is refused here rather
     * than turned into a bound (NaN compares false and would pass for 0) */
    if (!qmx__isfinite(s->min) || !qmx__isfinite(s->max) || !qmx__isfinite(s->sum) ||
        !qmx__isfinite(s->comp))
        return QMX_ERR_NONFINITE;
    switch (k->method) {
    case QMX_CALIB_ABSMAX: b = s->max; break;
    case QMX_CALIB_MINMAX:
    case QMX_CALIB_MOVING_MINMAX:
        sym = 0;
        l = s->min < 0.0f ? s->min : 0.0f;
        h = s->max > 0.0f ? s->max : 0.0f;
        if (clip != 1.0f) { l = l * clip; h = h * clip; }
        if (!qmx__isfinite(l) || !qmx__isfinite(h)) return QMX_ERR_NONFINITE;
        *lo = l; *hi = h;
        break;
    case QMX_CALIB_MEAN_ABSMAX: b = (s->sum + s->comp) / (float)s->n; break;
    case QMX_CALIB_ABSMEAN: {
        float t = s->sum + s->comp, d = (float)(s->n ? s->n : 1);
        t = t / d;
        if (!qmx__isfinite(t)) return QMX_ERR_NONFINITE;
        if (t < 0.0f) return QMX_ERR_ARG;             /* a record no update can write */
        b = qmx__cb_root(t, k->p ? k->p : 1);
        break;
    }
    case QMX_CALIB_RMS: {
        float t = s->sum + s->comp;
        t = t / (float)s->n;
        if (!qmx__isfinite(t)) return QMX_ERR_NONFINITE;   /* also n == 0 (0 / 0) */
        if (t < 0.0f) return QMX_ERR_ARG;
        b = qmx__cb_sqrt(t);
        break;
    }
    default: return QMX_ERR_ARG;
    }
    if (sym) {
        if (!qmx__isfinite(b)) return QMX_ERR_NONFINITE;
        if (clip != 1.0f) b = b * clip;
        if (!qmx__isfinite(b)) return QMX_ERR_NONFINITE;
        *lo = -b; *hi = b;
    }
    return QMX_OK;
}

QMX__DEF qmx_status qmx_observer_bounds(const qmx_observer *obs, size_t group, float *lo,
                                        float *hi) {
    float l, h;
    qmx_status st;
    if (!obs || !lo || !hi || !obs->stats) return QMX_ERR_NULL;
    if (group >= obs->n_groups) return QMX_ERR_ARG;
    st = qmx__cb_bounds(obs, &obs->stats[group], &l, &h);
    if (st == QMX_OK) { *lo = l; *hi = h; }
    return st;
}

QMX__DEF qmx_status qmx_observer_finalize(const qmx_observer *obs, float *scales, size_t n_scales,
                                          int32_t *zps) {
    qmx__view v;
    qmx_status st;
    size_t g;
    if (!obs || !scales || !obs->stats) return QMX_ERR_NULL;
    st = qmx__resolve(&obs->q, obs->count, &v);
    if (st != QMX_OK) return st;
    if (qmx__qparams_zp(&obs->q, &v) && !zps) return QMX_ERR_NULL;   /* a zp could be lost */
    if (n_scales < obs->n_groups) return QMX_ERR_BUFFER_TOO_SMALL;
    for (g = 0; g < obs->n_groups; g++) {      /* pass 1: every group has valid bounds */
        float l, h;
        st = qmx__cb_bounds(obs, &obs->stats[g], &l, &h);
        if (st != QMX_OK) return st;
    }
    for (g = 0; g < obs->n_groups; g++) {
        float l = 0.0f, h = 0.0f, am;
        int32_t zp;
        qmx__cb_bounds(obs, &obs->stats[g], &l, &h);
        am = -l > h ? -l : h;
        qmx__group_qparams(&obs->q, &v, l, h, am, &scales[g], &zp);
        if (zps) zps[g] = zp;
    }
    return QMX_OK;
}

/* ---- C2. fp8 delayed scaling ---- */
QMX__DEF qmx_status qmx_absmax_f32(const float *x, size_t n, float *amax) {
    uint32_t m = 0;
    size_t i;
    if (!x || !amax) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    /* |x| bit patterns order like the values, and every NaN is above +Inf: an integer max
     * propagates NaN like jnp.max */
    for (i = 0; i < n; i++) {
        uint32_t b = qmx__f32_bits(x[i]) & 0x7FFFFFFFu;
        m = b > m ? b : m;
    }
    if (m > 0x7F800000u) m = 0x7FC00000u;
    *amax = qmx__bits_f32(m);
    return QMX_OK;
}

QMX__DEF qmx_status qmx_fp8_delayed_init(qmx_fp8_delayed *d, qmx_dtype fmt, qmx_delayed_mode mode,
                                         int margin, float *history, size_t length) {
    size_t i;
    if (!d || !history) return QMX_ERR_NULL;
    if (!qmx_dtype_is_fp8(fmt)) return QMX_ERR_DTYPE;
    if (mode != QMX_DELAYED_FLAX && mode != QMX_DELAYED_AQT) return QMX_ERR_ARG;
    if (margin < -64 || margin > 64) return QMX_ERR_ARG;
    if (length == 0) return QMX_ERR_SIZE;
    for (i = 0; i < length; i++) history[i] = 0.0f;
    d->fmt = fmt; d->mode = mode; d->margin = margin;
    d->history = history; d->length = length;
    d->scale = mode == QMX_DELAYED_FLAX ? 1.0f : 0.0f;
    d->bound = 0.0f;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_fp8_delayed_step(qmx_fp8_delayed *d, float amax, float *scale_out) {
    float h, fmax, scale, bound;
    size_t i;
    int ok;
    if (!d || !d->history) return QMX_ERR_NULL;
    if (d->length == 0) return QMX_ERR_SIZE;
    if (!qmx_dtype_is_fp8(d->fmt)) return QMX_ERR_DTYPE;
    if ((d->mode != QMX_DELAYED_FLAX && d->mode != QMX_DELAYED_AQT) || d->margin < -64 ||
        d->margin > 64)
        return QMX_ERR_ARG;
    fmax = qmx_fp8_max(d->fmt);
    {   /* h = max(history) over the raw values, NaN when any entry is NaN (as jnp.max) */
        float mx = d->history[0];
        int nan = 0;
        for (i = 0; i < d->length; i++) {
            if (qmx__isnan(d->history[i])) nan = 1;
            else if (d->history[i] > mx) mx = d->history[i];
        }
        h = nan ? qmx__bits_f32(0x7FC00000u) : mx;
    }
    bound = d->bound;
    /* the state must be what init and earlier steps can leave: a positive finite Flax scale,
     * a finite AQT bound >= 0 */
    if (d->mode == QMX_DELAYED_FLAX ? !(qmx__isfinite(d->scale) && d->scale > 0.0f)
                                    : !(qmx__isfinite(d->bound) && d->bound >= 0.0f))
        return QMX_ERR_NONFINITE;
    if (d->mode == QMX_DELAYED_FLAX) {
        float sf;
        if (h > 0.0f && qmx__isfinite(h)) {
            float p2 = 1.0f;
            int j;
            sf = fmax / h;
            if (d->margin >= 0) for (j = 0; j < d->margin; j++) p2 = p2 * 2.0f;
            else for (j = 0; j < -d->margin; j++) p2 = p2 * 0.5f;
            sf = sf / p2;
        } else {
            sf = 1.0f / d->scale;
        }
        scale = 1.0f / sf;
        ok = qmx__isfinite(scale) && scale > 0.0f;     /* sf overflowed or underflowed */
    } else {
        if (h > 0.0f && qmx__isfinite(h)) bound = h;
        scale = bound / fmax;
        ok = scale > 0.0f || bound == 0.0f;             /* a positive bound underflowed */
    }
    /* the amax is recorded either way (it leaves the history after length steps); a scale
     * that float cannot hold is refused and the previous scale (and bound) kept */
    for (i = d->length - 1; i > 0; i--) d->history[i] = d->history[i - 1];
    d->history[0] = amax;
    if (!ok) return QMX_ERR_NONFINITE;
    d->scale = scale; d->bound = bound;
    if (scale_out) *scale_out = d->scale;
    return QMX_OK;
}

/* ---- several cores: absmax in tasks of QMX_TASK_ELEMS (USING SEVERAL CORES) ---- */
QMX__DEF qmx_status qmx_absmax_f32_run(const float *x, size_t n, size_t task_begin,
                                       size_t task_end, float *amax) {
    size_t nt, e0, e1;
    if (!x || !amax) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    nt = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    if (task_begin > task_end || task_end > nt) return QMX_ERR_ARG;
    if (task_begin == task_end) {
        *amax = 0.0f;
        return QMX_OK;
    }
    e0 = task_begin * QMX_TASK_ELEMS;
    e1 = task_end == nt ? n : task_end * QMX_TASK_ELEMS;
    return qmx_absmax_f32(x + e0, e1 - e0, amax);
}
#define QMX__CB_PAR_RUNS 64
typedef struct qmx__cb_amax_job {
    const float *x;
    size_t n, nt, per, runs;
    float part[QMX__CB_PAR_RUNS];   /* one per run of tasks, each written by its task only */
} qmx__cb_amax_job;
static void qmx__cb_amax_task(void *arg, int task, int worker) {
    qmx__cb_amax_job *j = (qmx__cb_amax_job *)arg;
    size_t tb, te;
    (void)worker;   /* no workspace */
    if (task < 0 || (size_t)task >= j->runs) return;   /* outside the executor contract */
    tb = (size_t)task * j->per;
    te = j->nt - tb < j->per ? j->nt : tb + j->per;
    (void)qmx_absmax_f32_run(j->x, j->n, tb, te, &j->part[task]);
}
static int qmx__cb_par_serial(const qmx_executor *ex) {
    return !ex || ex->workers == 0 || ex->workers == 1;
}
QMX__DEF qmx_status qmx_absmax_f32_exec(const float *x, size_t n, float *amax,
                                        const qmx_executor *executor) {
    qmx__cb_amax_job j;
    size_t r;
    if (qmx__cb_par_serial(executor)) return qmx_absmax_f32(x, n, amax);
    if (!x || !amax) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (executor->workers < 0) return QMX_ERR_ARG;
    if (!executor->parallel_for) return QMX_ERR_NULL;
    j.x = x; j.n = n;
    j.nt = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    j.per = j.nt / QMX__CB_PAR_RUNS + (j.nt % QMX__CB_PAR_RUNS != 0);
    j.runs = j.nt / j.per + (j.nt % j.per != 0);
    if (j.runs == 1) return qmx_absmax_f32(x, n, amax);
    for (r = 0; r < QMX__CB_PAR_RUNS; r++) j.part[r] = 0.0f;
    executor->parallel_for(executor->pool, (int)j.runs, qmx__cb_amax_task, &j);
    return qmx_absmax_f32(j.part, j.runs, amax);
}
QMX__DEF qmx_status qmx_fp8_delayed_update_exec(qmx_fp8_delayed *d, const float *x, size_t n,
                                                float *scale_out, const qmx_executor *executor) {
    float a;
    qmx_status st;
    if (!d || !x) return QMX_ERR_NULL;
    st = qmx_absmax_f32_exec(x, n, &a, executor);
    if (st != QMX_OK) return st;
    return qmx_fp8_delayed_step(d, a, scale_out);
}

QMX__DEF qmx_status qmx_fp8_delayed_update(qmx_fp8_delayed *d, const float *x, size_t n,
                                           float *scale_out) {
    float a;
    qmx_status st;
    if (!d || !x) return QMX_ERR_NULL;
    st = qmx_absmax_f32(x, n, &a);
    if (st != QMX_OK) return st;
    return qmx_fp8_delayed_step(d, a, scale_out);
}

/* ---- C4. histogram ---- */
QMX__DEF qmx_status qmx_histogram_init(qmx_histogram *h, uint64_t *bins, size_t n_bins) {
    size_t i;
    if (!h || !bins) return QMX_ERR_NULL;
    if (n_bins < 8 || n_bins > ((size_t)1 << 20)) return QMX_ERR_SIZE;
    for (i = 0; i < n_bins; i++) bins[i] = 0;
    h->bins = bins; h->n_bins = n_bins; h->width = 0.0f; h->absmax = 0.0f; h->total = 0;
    return QMX_OK;
}

/* width and absmax as update leaves them: finite, >= 0, width 0 or a power of two; a caller's
 * struct with a NaN / Inf / negative field would otherwise turn into a made-up bound */
static int qmx__cb_hist_state_ok(const qmx_histogram *h) {
    uint32_t wb = qmx__f32_bits(h->width);
    return qmx__isfinite(h->absmax) && h->absmax >= 0.0f && qmx__isfinite(h->width) &&
           (wb == 0 || (wb < 0x7F800000u && (wb & 0x007FFFFFu) == 0 && wb >= 0x00800000u));
}

/* The bins grown for a batch whose max |x| is am (finite); the reciprocal of the width. Nothing
 * is written when there is no room (QMX_ERR_NONFINITE). */
static qmx_status qmx__cb_hist_grow(qmx_histogram *h, float am, float *inv) {
    float w, nb;
    nb = (float)h->n_bins;                 /* exact: n_bins <= 2^20 */
    w = h->width;
    if (am > 0.0f && !(w > 0.0f && nb * w > am)) {
        /* grow: the smallest power of two w' >= w with n_bins * w' > am; merge 2^k bins */
        float nw = w > 0.0f ? w : qmx__bits_f32(0x00800000u);   /* from FLT_MIN upwards */
        size_t k = 0, j, step;
        while (!(nb * nw > am)) {
            if (nw >= 1.7e38f) return QMX_ERR_NONFINITE;           /* 2^127: no room left */
            nw = nw * 2.0f; k++;
        }
        if (w > 0.0f) {
            /* in place, ascending: new bin j reads old bins j*step.. >= j (k >= 1). Any
             * step >= 2^20 >= n_bins merges everything into bin 0, so the shift is capped. */
            step = (size_t)1 << (k < 21 ? k : 21);
            for (j = 0; j < h->n_bins; j++) {
                uint64_t sum = 0;
                size_t t;
                if (j < (h->n_bins + step - 1) / step) {
                    size_t lo = j * step, hi = lo + step < h->n_bins ? lo + step : h->n_bins;
                    for (t = lo; t < hi; t++) sum += h->bins[t];
                }
                h->bins[j] = sum;
            }
        }
        h->width = w = nw;
    }
    *inv = w > 0.0f ? 1.0f / w : 0.0f;      /* exact: w is a power of two */
    return QMX_OK;
}
static void qmx__cb_hist_count(uint64_t *bins, size_t n_bins, float inv, const float *x,
                               size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        float t = qmx__fabs(x[i]) * inv;   /* exact (scaling by a power of two, no overflow) */
        size_t b = (size_t)t;
        if (b >= n_bins) b = n_bins - 1;
        bins[b]++;
    }
}

QMX__DEF qmx_status qmx_histogram_update(qmx_histogram *h, const float *x, size_t n) {
    float am = 0.0f, inv;
    size_t i;
    qmx_status st;
    if (!h || !x || !h->bins) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    if (!qmx__cb_hist_state_ok(h)) return QMX_ERR_NONFINITE;
    if (h->n_bins < 8 || h->n_bins > ((size_t)1 << 20)) return QMX_ERR_SIZE;
    for (i = 0; i < n; i++) {
        float a = qmx__fabs(x[i]);
        if (!qmx__isfinite(a)) return QMX_ERR_NONFINITE;
        am = a > am ? a : am;
    }
    st = qmx__cb_hist_grow(h, am, &inv);
    if (st != QMX_OK) return st;
    qmx__cb_hist_count(h->bins, h->n_bins, inv, x, n);
    if (am > h->absmax) h->absmax = am;
    h->total += n;
    return QMX_OK;
}

/* ---- several cores: counts per worker, added in worker order (USING SEVERAL CORES) ---- */
/* Both histograms' exec workspace: workers x n_bins 64-bit counts (min_bins: 8 |x| bins, 2
 * torch bins). */
static qmx_status qmx__cb_hist_ws(size_t n_bins, size_t min_bins, const qmx_executor *executor,
                                  size_t *bytes) {
    if (!bytes) return QMX_ERR_NULL;
    if (n_bins < min_bins || n_bins > ((size_t)1 << 20)) return QMX_ERR_SIZE;
    if (executor && executor->workers < 0) return QMX_ERR_ARG;
    if (!executor || executor->workers <= 1) {
        *bytes = 0;
        return QMX_OK;
    }
    if ((size_t)executor->workers > SIZE_MAX / 8 / n_bins) return QMX_ERR_OVERFLOW;
    *bytes = (size_t)executor->workers * n_bins * 8;
    return QMX_OK;
}
/* The checks both histograms' exec calls make after the serial call's own, in order: the
 * executor, the task count, the workspace (present, large enough, 8-byte aligned). */
static qmx_status qmx__cb_hist_exec_check(size_t n, size_t n_bins, size_t min_bins,
                                          const qmx_executor *executor, const void *workspace,
                                          size_t workspace_bytes) {
    size_t need = 0;
    qmx_status st;
    if (executor->workers < 0) return QMX_ERR_ARG;
    if (!executor->parallel_for) return QMX_ERR_NULL;
    if (n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0) > (size_t)INT_MAX) return QMX_ERR_OVERFLOW;
    st = qmx__cb_hist_ws(n_bins, min_bins, executor, &need);
    if (st != QMX_OK) return st;
    if (!workspace) return QMX_ERR_NULL;
    if (workspace_bytes < need) return QMX_ERR_BUFFER_TOO_SMALL;
    if (((uintptr_t)workspace & 7u) != 0) return QMX_ERR_ARG;
    return QMX_OK;
}
QMX__DEF qmx_status qmx_histogram_exec_workspace_size(size_t n_bins, const qmx_executor *executor,
                                                      size_t *bytes) {
    return qmx__cb_hist_ws(n_bins, 8, executor, bytes);
}
typedef struct qmx__cb_hist_job {
    const float *x;
    size_t n, nt, n_bins;
    uint64_t *wb;   /* workers x n_bins counts */
    float inv;
    int workers;
} qmx__cb_hist_job;
static void qmx__cb_hist_task(void *arg, int task, int worker) {
    const qmx__cb_hist_job *j = (const qmx__cb_hist_job *)arg;
    size_t e0, e1;
    /* outside the executor contract: nothing to count it with (documented) */
    if (task < 0 || (size_t)task >= j->nt || worker < 0 || worker >= j->workers) return;
    e0 = (size_t)task * QMX_TASK_ELEMS;
    e1 = j->n - e0 < QMX_TASK_ELEMS ? j->n : e0 + QMX_TASK_ELEMS;
    qmx__cb_hist_count(j->wb + (size_t)worker * j->n_bins, j->n_bins, j->inv, j->x + e0,
                       e1 - e0);
}
QMX__DEF qmx_status qmx_histogram_update_exec(qmx_histogram *h, const float *x, size_t n,
                                              const qmx_executor *executor, void *workspace,
                                              size_t workspace_bytes) {
    qmx__cb_hist_job j;
    size_t need, i, w;
    float am = 0.0f, inv = 0.0f;
    qmx_status st;
    if (!executor || executor->workers == 0 || executor->workers == 1)
        return qmx_histogram_update(h, x, n);
    if (!h || !x || !h->bins) return QMX_ERR_NULL;   /* the serial call's checks, in order */
    if (n == 0) return QMX_ERR_SIZE;
    if (!qmx__cb_hist_state_ok(h)) return QMX_ERR_NONFINITE;
    if (h->n_bins < 8 || h->n_bins > ((size_t)1 << 20)) return QMX_ERR_SIZE;
    st = qmx__cb_hist_exec_check(n, h->n_bins, 8, executor, workspace, workspace_bytes);
    if (st != QMX_OK) return st;
    j.nt = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    need = (size_t)executor->workers * h->n_bins * 8;
    st = qmx_absmax_f32_exec(x, n, &am, executor);   /* exact: the serial call's max */
    if (st != QMX_OK) return st;
    if (!qmx__isfinite(am)) return QMX_ERR_NONFINITE;
    st = qmx__cb_hist_grow(h, am, &inv);
    if (st != QMX_OK) return st;
    if (j.nt == 1) {
        qmx__cb_hist_count(h->bins, h->n_bins, inv, x, n);
    } else {
        j.x = x; j.n = n; j.n_bins = h->n_bins; j.wb = (uint64_t *)workspace; j.inv = inv;
        j.workers = executor->workers;
        for (i = 0; i < need / 8; i++) j.wb[i] = 0;
        executor->parallel_for(executor->pool, (int)j.nt, qmx__cb_hist_task, &j);
        for (w = 0; w < (size_t)j.workers; w++)   /* integer sums: any order gives the same */
            for (i = 0; i < h->n_bins; i++) h->bins[i] += j.wb[w * h->n_bins + i];
    }
    if (am > h->absmax) h->absmax = am;
    h->total += n;
    return QMX_OK;
}

/* a*b >= c*d for 64-bit unsigned values, exactly (128-bit products from 32-bit halves) */
static void qmx__cb_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    *lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
static int qmx__cb_ge128(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    uint64_t h1, l1, h2, l2;
    qmx__cb_mul128(a, b, &h1, &l1);
    qmx__cb_mul128(c, d, &h2, &l2);
    return h1 > h2 || (h1 == h2 && l1 >= l2);
}

QMX__DEF qmx_status qmx_histogram_percentile(const qmx_histogram *h, uint32_t ppm, float *bound) {
    uint64_t cum = 0;
    size_t i;
    if (!h || !bound || !h->bins) return QMX_ERR_NULL;
    if (!qmx__cb_hist_state_ok(h)) return QMX_ERR_NONFINITE;
    if (ppm == 0 || ppm > 1000000u) return QMX_ERR_ARG;
    if (h->total == 0) return QMX_ERR_SIZE;
    if (h->width == 0.0f) { *bound = 0.0f; return QMX_OK; }
    for (i = 0; i < h->n_bins; i++) {
        cum += h->bins[i];
        if (qmx__cb_ge128(cum, 1000000u, ppm, h->total)) break;
    }
    {
        float e = (float)(i + 1) * h->width;   /* exact: i + 1 <= 2^20 times a power of two */
        *bound = e < h->absmax ? e : h->absmax;
    }
    return QMX_OK;
}

/* Sum over bins of count * (centre - qdq(centre))^2 with the recipe's scale for bound c. */
QMX__CB_NOFMA
static float qmx__cb_hist_err(const qmx_histogram *h, const qmx_qconfig *q, const qmx__view *v,
                              float c) {
    QMX__CB_PRAGMA_NOFMA
    float s, sum = 0.0f, comp = 0.0f;
    int32_t zp;
    qmx__run run;
    size_t i;
    qmx__group_qparams(q, v, -c, c, c, &s, &zp);
    qmx__make_run(q, v, s, zp, &run);
    for (i = 0; i < h->n_bins; i++) {
        float xc, d, e;
        if (!h->bins[i]) continue;
        xc = ((float)i + 0.5f) * h->width;
        if (v->nf4) {
            float t = run.use_div ? xc / s : xc * run.inv;
            d = qmx__nf4_table[qmx__nf4_encode(t)] * s;
        } else if (v->fp8) {
            float t = run.use_div ? xc / s : xc * run.inv;
            d = qmx__bits_f32(qmx__fp8_decode_bits(qmx__fp8_encode(qmx__f32_bits(t), &v->f, 1),
                                                   &v->f)) * s;
        } else {
            d = (float)(qmx__quant_one(xc, &run) - zp) * s;   /* zp: torch / ONNX uint */
        }
        d = xc - d;
        e = d * d;
        QMX__CB_OPAQUE(e);
        e = e * (float)h->bins[i];
        QMX__CB_OPAQUE(e);
        qmx__cb_add(&sum, &comp, e);
    }
    return sum + comp;
}

QMX__DEF qmx_status qmx_histogram_mse_bound(const qmx_histogram *h, const qmx_qconfig *q,
                                            float *bound) {
    qmx__view v;
    qmx_qconfig pq;
    qmx_status st;
    float best_c, best_e;
    size_t i;
    if (!h || !q || !bound || !h->bins) return QMX_ERR_NULL;
    if (!qmx__cb_hist_state_ok(h)) return QMX_ERR_NONFINITE;
    if (q->asymmetric || q->rounding == QMX_ROUND_STOCHASTIC) return QMX_ERR_ARG;
    pq = *q;
    pq.granularity = QMX_PER_TENSOR; pq.outer = pq.axis_len = pq.inner = 0;
    st = qmx__resolve(&pq, 1, &v);
    if (st != QMX_OK) return st;
    if (v.dtype == QMX_FLOAT32) return QMX_ERR_DTYPE;
    if (h->total == 0) return QMX_ERR_SIZE;
    if (h->width == 0.0f || h->absmax == 0.0f) { *bound = 0.0f; return QMX_OK; }
    best_c = h->absmax;
    best_e = qmx__cb_hist_err(h, &pq, &v, best_c);
    for (i = 0; i < h->n_bins; i++) {
        float c = (float)(i + 1) * h->width, e;
        if (!(c < h->absmax)) break;
        e = qmx__cb_hist_err(h, &pq, &v, c);
        if (e < best_e || (e == best_e && c < best_c)) { best_e = e; best_c = c; }
    }
    *bound = best_c;
    return QMX_OK;
}

/* Natural logarithm of a finite v > 0, float32 only: v = m * 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.1716, by its series to t^11 (truncation
 * < 3e-10). Subnormals are scaled up first. */
QMX__CB_NOFMA
static float qmx__cb_logf(float v) {
    QMX__CB_PRAGMA_NOFMA
    uint32_t b = qmx__f32_bits(v);
    int e = 0;
    float m, t, t2, sum;
    if (b < 0x00800000u) { v = v * 16777216.0f; b = qmx__f32_bits(v); e = -24; }
    e += (int)(b >> 23) - 127;
    m = qmx__bits_f32((b & 0x007FFFFFu) | 0x3F800000u);
    if (m > 1.41421356f) { m = m * 0.5f; e++; }
    t = (m - 1.0f) / (m + 1.0f);
    t2 = t * t;
    sum = 1.0f / 11.0f;
    sum = sum * t2; QMX__CB_OPAQUE(sum); sum = sum + 1.0f / 9.0f;
    sum = sum * t2; QMX__CB_OPAQUE(sum); sum = sum + 1.0f / 7.0f;
    sum = sum * t2; QMX__CB_OPAQUE(sum); sum = sum + 1.0f / 5.0f;
    sum = sum * t2; QMX__CB_OPAQUE(sum); sum = sum + 1.0f / 3.0f;
    sum = sum * t2; QMX__CB_OPAQUE(sum); sum = sum + 1.0f;
    sum = sum * t; sum = sum * 2.0f;
    t = (float)e * 0.693147182f;     /* ln 2 rounded to float; e * ln2 has |e| <= 150 */
    QMX__CB_OPAQUE(t);
    return t + sum;
}

QMX__CB_NOFMA
QMX__DEF qmx_status qmx_histogram_kl_bound(const qmx_histogram *h, int num_quant_bins, float *bound) {
    QMX__CB_PRAGMA_NOFMA
    size_t qb, i, j, best_i = 0;
    float best_kl = 0.0f;
    if (!h || !bound || !h->bins) return QMX_ERR_NULL;
    if (!qmx__cb_hist_state_ok(h)) return QMX_ERR_NONFINITE;
    if (num_quant_bins < 0 || num_quant_bins == 1) return QMX_ERR_ARG;
    qb = num_quant_bins ? (size_t)num_quant_bins : 128;
    if (h->total == 0) return QMX_ERR_SIZE;
    if (h->n_bins < qb) return QMX_ERR_SIZE;
    if (h->width == 0.0f || h->absmax == 0.0f) { *bound = 0.0f; return QMX_OK; }
    for (i = qb; i <= h->n_bins; i++) {
        uint64_t outl = 0, psum = 0;
        float kl = 0.0f, klc = 0.0f, ps, qs = 0.0f;
        size_t g;
        int valid = 1;
        for (j = i; j < h->n_bins; j++) outl += h->bins[j];
        for (j = 0; j < i; j++) psum += h->bins[j];
        psum += outl;
        ps = (float)psum;
        if (psum == 0) continue;
        /* Q's total equals P's minus the outliers that land on an empty last bin; normalise Q by
         * its own sum, as the reference does */
        for (g = 0; g < qb; g++) {
            size_t lo = g * i / qb, hi = (g + 1) * i / qb, nz = 0;
            uint64_t gs = 0;
            for (j = lo; j < hi; j++) { gs += h->bins[j]; nz += h->bins[j] != 0; }
            if (nz) qs = qs + (float)gs;
        }
        if (!(qs > 0.0f)) continue;
        for (g = 0; g < qb && valid; g++) {
            size_t lo = g * i / qb, hi = (g + 1) * i / qb, nz = 0;
            uint64_t gs = 0;
            float qv;
            for (j = lo; j < hi; j++) { gs += h->bins[j]; nz += h->bins[j] != 0; }
            qv = nz ? ((float)gs / (float)nz) / qs : 0.0f;
            for (j = lo; j < hi; j++) {
                uint64_t pc = h->bins[j] + (j == i - 1 ? outl : 0);
                float pv, term;
                if (pc == 0) continue;
                if (h->bins[j] == 0) { valid = 0; break; }   /* P > 0 where Q = 0 */
                pv = (float)pc / ps;
                term = qmx__cb_logf(pv / qv);
                term = pv * term;
                QMX__CB_OPAQUE(term);
                qmx__cb_add(&kl, &klc, term);
            }
        }
        if (!valid) continue;
        kl = kl + klc;
        if (best_i == 0 || kl < best_kl) { best_kl = kl; best_i = i; }
    }
    if (best_i == 0) { *bound = h->absmax; return QMX_OK; }
    {
        float e = (float)best_i * h->width;
        *bound = e < h->absmax ? e : h->absmax;
    }
    return QMX_OK;
}

QMX__CB_NOFMA
QMX__DEF qmx_status qmx_calib_snr_search(const qmx_qconfig *q, const float *x, size_t count,
                                         const float *cand, size_t n_cand, float *scales,
                                         size_t n_scales, float *factors) {
    QMX__CB_PRAGMA_NOFMA
    qmx__view v;
    qmx_status st = qmx__resolve(q, count, &v);
    size_t g, i, c;
    if (st != QMX_OK) return st;
    if (v.dtype == QMX_FLOAT32) return QMX_ERR_DTYPE;
    if (!x || !scales || (n_cand && !cand)) return QMX_ERR_NULL;
    if (q->asymmetric || q->rounding == QMX_ROUND_STOCHASTIC) return QMX_ERR_ARG;
    if (n_scales < v.n_params) return QMX_ERR_BUFFER_TOO_SMALL;
    for (c = 0; c < n_cand; c++)
        if (!qmx__isfinite(cand[c]) || !(cand[c] > 0.0f)) return QMX_ERR_ARG;
    for (i = 0; i < count; i++)
        if (!qmx__isfinite(x[i])) return QMX_ERR_NONFINITE;
    /* pass 1: every group's signal energy sum x^2 is finite (else no SNR can be compared and
     * the choice would be made up): refused before any scale is written */
    for (g = 0; g < v.n_params; g++) {
        qmx__cb_grp r;
        size_t o, k;
        float x2 = 0.0f, x2c = 0.0f;
        qmx__cb_group(q, &v, g, &r);
        for (o = r.o0; o < r.o1; o++)
            for (k = r.k0; k < r.k1; k++)
                for (i = r.i0; i < r.i1; i++) {
                    float e = x[(o * v.len + k) * v.inner + i], t = e * e;
                    QMX__CB_OPAQUE(t);
                    qmx__cb_add(&x2, &x2c, t);
                }
        x2 = x2 + x2c;
        if (!qmx__isfinite(x2)) return QMX_ERR_NONFINITE;
    }
    for (g = 0; g < v.n_params; g++) {
        qmx__cb_grp r;
        size_t o, k;
        float am = 0.0f, x2 = 0.0f, x2c = 0.0f, best_f = 1.0f, best_e = 0.0f, s1;
        int32_t zp;
        int have = 0;
        qmx__cb_group(q, &v, g, &r);
        for (o = r.o0; o < r.o1; o++)
            for (k = r.k0; k < r.k1; k++)
                for (i = r.i0; i < r.i1; i++) {
                    float e = x[(o * v.len + k) * v.inner + i], a = qmx__fabs(e), t;
                    am = a > am ? a : am;
                    t = e * e;
                    QMX__CB_OPAQUE(t);
                    qmx__cb_add(&x2, &x2c, t);
                }
        x2 = x2 + x2c;
        for (c = 0; c < n_cand && x2 > 0.0f; c++) {
            float b = am * cand[c], s, err = 0.0f, errc = 0.0f;
            qmx__run run;
            if (!qmx__isfinite(b)) continue;
            qmx__group_qparams(q, &v, -b, b, b, &s, &zp);
            if (!qmx__isfinite(s) || !(s > 0.0f)) continue;
            qmx__make_run(q, &v, s, zp, &run);
            for (o = r.o0; o < r.o1; o++)
                for (k = r.k0; k < r.k1; k++)
                    for (i = r.i0; i < r.i1; i++) {
                        float e = x[(o * v.len + k) * v.inner + i], d, t;
                        if (v.nf4) {
                            float tt = run.use_div ? e / s : e * run.inv;
                            d = qmx__nf4_table[qmx__nf4_encode(tt)] * s;
                        } else if (v.fp8) {
                            float tt = run.use_div ? e / s : e * run.inv;
                            d = qmx__bits_f32(qmx__fp8_decode_bits(
                                    qmx__fp8_encode(qmx__f32_bits(tt), &v.f, 1), &v.f)) * s;
                        } else {
                            d = (float)(qmx__quant_one(e, &run) - zp) * s;
                        }
                        d = e - d;
                        t = d * d;
                        QMX__CB_OPAQUE(t);
                        qmx__cb_add(&err, &errc, t);
                    }
            err = err + errc;
            if (!qmx__isfinite(err)) continue;    /* an error beyond float: not comparable */
            if (!have || err < best_e) { have = 1; best_e = err; best_f = cand[c]; }
        }
        {
            float b = am * best_f;
            if (!qmx__isfinite(b)) b = am;
            qmx__group_qparams(q, &v, -b, b, b, &s1, &zp);
        }
        scales[g] = s1;
        if (factors) factors[g] = best_f;
    }
    return QMX_OK;
}

static char qmx__cb_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }
static int qmx__cb_word(const char *s, size_t len, const char *w) {
    size_t i;
    for (i = 0; i < len; i++) if (!w[i] || qmx__cb_lower(s[i]) != w[i]) return 0;
    return w[len] == '\0';
}

/* ---- C5. intmp rules ---- */
/* Pattern atoms: one matchable unit (literal, '.', escape class, [class]) with a quantifier. */
typedef struct qmx__cb_atoms {
    uint16_t off[QMX_INTMP_MAX_ATOMS];   /* start of the atom's text */
    uint8_t quant[QMX_INTMP_MAX_ATOMS];  /* '1', '?', '*' ('+' is split into 1 then '*') */
    int n;
} qmx__cb_atoms;

static int qmx__cb_is_punct(char c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}
/* Length of the escape at p[0] == '\\' (2) or a status. */
static int qmx__cb_escape_ok(const char *p, size_t left) {
    char c;
    if (left < 2) return QMX_ERR_PARSE;
    c = p[1];
    if (c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S' || qmx__cb_is_punct(c))
        return 2;
    return QMX_ERR_UNSUPPORTED;     /* \\b, \\A, \\1, \\n, ... */
}
/* Length of the atom at p, or a status. */
static int qmx__cb_atom_len(const char *p, size_t left) {
    if (p[0] == '\\') return qmx__cb_escape_ok(p, left);
    if (p[0] == '[') {
        size_t i = 1;
        if (i < left && p[i] == '^') i++;
        if (i < left && p[i] == ']') i++;          /* a leading ']' is literal */
        while (i < left && p[i] != ']') {
            if (p[i] == '\\') {
                int e = qmx__cb_escape_ok(p + i, left - i);
                if (e < 0) return e;
                i += (size_t)e;
            } else if (p[i] == '[' && i + 1 < left && (p[i + 1] == ':' || p[i + 1] == '=' || p[i + 1] == '.')) {
                return QMX_ERR_UNSUPPORTED;
            } else {
                if (i + 2 < left && p[i + 1] == '-' && p[i + 2] != ']' && p[i + 2] != '\\' &&
                    (unsigned char)p[i + 2] < (unsigned char)p[i])
                    return QMX_ERR_PARSE;                   /* bad character range z-a */
                i++;
            }
        }
        if (i >= left) return QMX_ERR_PARSE;        /* unterminated class */
        return (int)(i + 1);
    }
    if (p[0] == '(' || p[0] == ')' || p[0] == '|' || p[0] == '{') return QMX_ERR_UNSUPPORTED;
    if (p[0] == '*' || p[0] == '+' || p[0] == '?') return QMX_ERR_PARSE;   /* nothing to repeat */
    if (p[0] == '^' || p[0] == '$') return QMX_ERR_UNSUPPORTED;           /* anchors inside */
    return 1;
}
static qmx_status qmx__cb_compile(const char *p, size_t len, qmx__cb_atoms *a) {
    size_t i = 0, end = len;
    a->n = 0;
    if (len > QMX_INTMP_NAME_MAX) return QMX_ERR_PARSE;
    if (i < end && p[i] == '^') i++;                         /* fullmatch: anchors are no-ops */
    if (end > i && p[end - 1] == '$' && !(end >= 2 && p[end - 2] == '\\')) end--;
    while (i < end) {
        int l = qmx__cb_atom_len(p + i, end - i);
        char q = '1';
        if (l < 0) return (qmx_status)l;
        if (i + (size_t)l < end && (p[i + l] == '*' || p[i + l] == '+' || p[i + l] == '?')) {
            q = p[i + l];
            if (i + (size_t)l + 1 < end && p[i + l + 1] == '?') l++;   /* lazy: same for fullmatch */
            if (i + (size_t)l + 1 < end &&
                (p[i + l + 1] == '*' || p[i + l + 1] == '+' || p[i + l + 1] == '?'))
                return QMX_ERR_PARSE;                       /* multiple repeat */
            if (i + (size_t)l + 1 < end && p[i + l + 1] == '{') return QMX_ERR_UNSUPPORTED;
        }
        if (a->n + (q == '+' ? 2 : 1) > QMX_INTMP_MAX_ATOMS) return QMX_ERR_UNSUPPORTED;
        a->off[a->n] = (uint16_t)i; a->quant[a->n] = (uint8_t)(q == '+' ? '1' : q); a->n++;
        if (q == '+') { a->off[a->n] = (uint16_t)i; a->quant[a->n] = '*'; a->n++; }
        i += (size_t)l + (q != '1' ? 1 : 0);
    }
    return QMX_OK;
}
static int qmx__cb_class_esc(char e, unsigned char c) {
    int d = c >= '0' && c <= '9';
    int w = d || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    int sp = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    switch (e) {
    case 'd': return d;
    case 'D': return !d;
    case 'w': return w;
    case 'W': return !w;
    case 's': return sp;
    case 'S': return !sp;
    default: return (unsigned char)e == c;
    }
}
static int qmx__cb_atom_match(const char *p, unsigned char c) {
    if (p[0] == '.') return c != '\n';
    if (p[0] == '\\') return qmx__cb_class_esc(p[1], c);
    if (p[0] == '[') {
        size_t i = 1;
        int neg = 0, hit = 0;
        if (p[i] == '^') { neg = 1; i++; }
        do {   /* a leading ']' is literal, hence do-while */
            unsigned char lo;
            if (p[i] == '\\') {
                if (p[i + 1] == 'd' || p[i + 1] == 'D' || p[i + 1] == 'w' || p[i + 1] == 'W' ||
                    p[i + 1] == 's' || p[i + 1] == 'S') {
                    hit |= qmx__cb_class_esc(p[i + 1], c);
                    i += 2;
                    continue;
                }
                lo = (unsigned char)p[i + 1]; i += 2;
            } else {
                lo = (unsigned char)p[i]; i++;
            }
            if (p[i] == '-' && p[i + 1] != ']') {          /* range lo-hi */
                unsigned char hi = (unsigned char)(p[i + 1] == '\\' ? p[i + 2] : p[i + 1]);
                i += p[i + 1] == '\\' ? 3 : 2;
                hit |= c >= lo && c <= hi;
            } else {
                hit |= c == lo;
            }
        } while (p[i] != ']');
        return hit != neg;
    }
    return (unsigned char)p[0] == c;
}
/* Thompson NFA simulation over the atoms: states are bits (atom index = "before atom i"). */
static void qmx__cb_closure(const qmx__cb_atoms *a, uint32_t *set) {
    int i;
    for (i = 0; i < a->n; i++)      /* skippable atoms pass the state on (in increasing order) */
        if ((set[i >> 5] >> (i & 31)) & 1u)
            if (a->quant[i] != '1') set[(i + 1) >> 5] |= 1u << ((i + 1) & 31);
}
QMX__DEF qmx_status qmx_intmp_pattern_check(const char *p, size_t len) {
    qmx__cb_atoms a;
    size_t i;
    if (!p) return QMX_ERR_NULL;
    for (i = 0; i < len; i++) if (p[i] == '\0') return QMX_ERR_PARSE;
    return qmx__cb_compile(p, len, &a);
}
QMX__DEF int qmx_intmp_fullmatch(const char *p, size_t plen, const char *s, size_t slen) {
    qmx__cb_atoms a;
    uint32_t cur[(QMX_INTMP_MAX_ATOMS + 32) / 32], nxt[(QMX_INTMP_MAX_ATOMS + 32) / 32];
    size_t k;
    int i, w, nw = (QMX_INTMP_MAX_ATOMS + 32) / 32;
    qmx_status st;
    if (!p || (!s && slen)) return QMX_ERR_NULL;
    st = qmx_intmp_pattern_check(p, plen);
    if (st != QMX_OK) return st;
    qmx__cb_compile(p, plen, &a);
    for (w = 0; w < nw; w++) cur[w] = 0;
    cur[0] = 1u;
    qmx__cb_closure(&a, cur);
    for (k = 0; k < slen; k++) {
        int any = 0;
        for (w = 0; w < nw; w++) nxt[w] = 0;
        for (i = 0; i < a.n; i++) {
            if (!((cur[i >> 5] >> (i & 31)) & 1u)) continue;
            if (!qmx__cb_atom_match(p + a.off[i], (unsigned char)s[k])) continue;
            if (a.quant[i] == '*') nxt[i >> 5] |= 1u << (i & 31);
            else nxt[(i + 1) >> 5] |= 1u << ((i + 1) & 31);
            any = 1;
        }
        if (!any) return 0;
        qmx__cb_closure(&a, nxt);
        for (w = 0; w < nw; w++) cur[w] = nxt[w];
    }
    return (int)((cur[a.n >> 5] >> (a.n & 31)) & 1u);
}

/* JSON reader state */
typedef struct qmx__cb_js { const char *s; size_t n, i; } qmx__cb_js;
static void qmx__cb_ws(qmx__cb_js *j) {
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
                           j->s[j->i] == '\r'))
        j->i++;
}
static int qmx__cb_hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}
static int qmx__cb_u4(qmx__cb_js *j, uint32_t *u) {
    int k;
    *u = 0;
    if (j->n - j->i < 4) return 0;
    for (k = 0; k < 4; k++) {
        int h = qmx__cb_hex(j->s[j->i + (size_t)k]);
        if (h < 0) return 0;
        *u = *u * 16u + (uint32_t)h;
    }
    j->i += 4;
    return 1;
}
/* Reads a JSON string (at '"') into out[0..cap), unescaped, NUL-terminated; *len its length.
 * out may be NULL (validate only, cap ignored). */
static qmx_status qmx__cb_string(qmx__cb_js *j, char *out, size_t cap, size_t *len) {
    size_t l = 0;
    if (j->i >= j->n || j->s[j->i] != '"') return QMX_ERR_PARSE;
    j->i++;
    for (;;) {
        unsigned char c;
        uint32_t cp;
        char buf[4];
        int nb, k;
        if (j->i >= j->n) return QMX_ERR_PARSE;
        c = (unsigned char)j->s[j->i++];
        if (c == '"') break;
        if (c < 0x20) return QMX_ERR_PARSE;                   /* raw control char or NUL */
        if (c != '\\') { buf[0] = (char)c; nb = 1; }
        else {
            if (j->i >= j->n) return QMX_ERR_PARSE;
            c = (unsigned char)j->s[j->i++];
            switch (c) {
            case '"': case '\\': case '/': buf[0] = (char)c; nb = 1; break;
            case 'b': buf[0] = '\b'; nb = 1; break;
            case 'f': buf[0] = '\f'; nb = 1; break;
            case 'n': buf[0] = '\n'; nb = 1; break;
            case 'r': buf[0] = '\r'; nb = 1; break;
            case 't': buf[0] = '\t'; nb = 1; break;
            case 'u':
                if (!qmx__cb_u4(j, &cp)) return QMX_ERR_PARSE;
                if (cp >= 0xDC00u && cp <= 0xDFFFu) return QMX_ERR_PARSE;   /* lone low surrogate */
                if (cp >= 0xD800u && cp <= 0xDBFFu) {
                    uint32_t lo;
                    if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u') return QMX_ERR_PARSE;
                    j->i += 2;
                    if (!qmx__cb_u4(j, &lo) || lo < 0xDC00u || lo > 0xDFFFu) return QMX_ERR_PARSE;
                    cp = 0x10000u + ((cp - 0xD800u) << 10) + (lo - 0xDC00u);
                }
                if (cp == 0) return QMX_ERR_PARSE;                /* embedded NUL */
                if (cp < 0x80u) { buf[0] = (char)cp; nb = 1; }
                else {   /* UTF-8: lead byte, then 6-bit continuation bytes */
                    int lead = cp < 0x800u ? 2 : (cp < 0x10000u ? 3 : 4);
                    static const unsigned char marks[5] = {0, 0, 0xC0u, 0xE0u, 0xF0u};
                    nb = lead;
                    for (k = lead - 1; k > 0; k--) { buf[k] = (char)(0x80u | (cp & 0x3Fu)); cp >>= 6; }
                    buf[0] = (char)(marks[lead] | cp);
                }
                break;
            default: return QMX_ERR_PARSE;                       /* bad escape */
            }
        }
        if (l + (size_t)nb > QMX_INTMP_NAME_MAX) return QMX_ERR_PARSE;  /* overlong name */
        if (out) {
            if (l + (size_t)nb + 1 > cap) return QMX_ERR_BUFFER_TOO_SMALL;
            for (k = 0; k < nb; k++) out[l + (size_t)k] = buf[k];
        }
        l += (size_t)nb;
    }
    if (out) out[l] = '\0';
    *len = l;
    return QMX_OK;
}
/* A JSON number token; *is_int when it has no fraction and no exponent. */
static qmx_status qmx__cb_number(qmx__cb_js *j, size_t *start, size_t *len, int *is_int) {
    size_t i = j->i;
    *is_int = 1;
    *start = i;
    if (i < j->n && j->s[i] == '-') i++;
    if (i >= j->n) return QMX_ERR_PARSE;
    if (j->s[i] == '0') i++;
    else if (j->s[i] >= '1' && j->s[i] <= '9') { while (i < j->n && j->s[i] >= '0' && j->s[i] <= '9') i++; }
    else return QMX_ERR_PARSE;
    if (i < j->n && j->s[i] == '.') {
        *is_int = 0; i++;
        if (i >= j->n || j->s[i] < '0' || j->s[i] > '9') return QMX_ERR_PARSE;
        while (i < j->n && j->s[i] >= '0' && j->s[i] <= '9') i++;
    }
    if (i < j->n && (j->s[i] == 'e' || j->s[i] == 'E')) {
        *is_int = 0; i++;
        if (i < j->n && (j->s[i] == '+' || j->s[i] == '-')) i++;
        if (i >= j->n || j->s[i] < '0' || j->s[i] > '9') return QMX_ERR_PARSE;
        while (i < j->n && j->s[i] >= '0' && j->s[i] <= '9') i++;
    }
    *len = i - *start;
    j->i = i;
    return QMX_OK;
}
static int qmx__cb_lit(qmx__cb_js *j, const char *w) {
    size_t k = 0;
    while (w[k]) { if (j->i + k >= j->n || j->s[j->i + k] != w[k]) return 0; k++; }
    j->i += k;
    return 1;
}
/* An integer field value (or null when nullable): range [lo, hi]. null gives *v = 0. */
static qmx_status qmx__cb_int_field(qmx__cb_js *j, int nullable, long lo, long hi, long *v) {
    size_t st, ln, k;
    int is_int;
    long acc = 0;
    qmx_status s;
    if (nullable && qmx__cb_lit(j, "null")) { *v = 0; return QMX_OK; }
    s = qmx__cb_number(j, &st, &ln, &is_int);
    if (s != QMX_OK) return s;
    if (!is_int) return QMX_ERR_PARSE;
    for (k = j->s[st] == '-' ? 1 : 0; k < ln; k++) {
        acc = acc * 10 + (j->s[st + k] - '0');
        if (acc > 2147483647L) return QMX_ERR_PARSE;
    }
    if (j->s[st] == '-') acc = -acc;
    if (acc < lo || acc > hi) return QMX_ERR_PARSE;
    *v = acc;
    return QMX_OK;
}
static qmx_status qmx__cb_scale_field(qmx__cb_js *j, float *v) {
    size_t st, ln;
    int is_int;
    float f;
    qmx_status s = qmx__cb_number(j, &st, &ln, &is_int);
    if (s != QMX_OK) return s;
    if (qmx_parse_f32(j->s + st, ln, &f) != QMX_OK) return QMX_ERR_PARSE;
    if (!(f > 0.0f)) return QMX_ERR_PARSE;
    *v = f;
    return QMX_OK;
}
static int qmx__cb_streq(const char *a, size_t al, const char *b, size_t bl) {
    size_t i;
    if (al != bl) return 0;
    for (i = 0; i < al; i++) if (a[i] != b[i]) return 0;
    return 1;
}
/* One rule object {"w_bits": ..., ...} into r (fields + present mask). */
static qmx_status qmx__cb_rule(qmx__cb_js *j, qmx_intmp_rule *r) {
    static const char *const names[5] = {"w_bits", "a_bits", "w_scale", "a_scale", "tile_size"};
    qmx_status s;
    qmx__cb_ws(j);
    if (j->i >= j->n || j->s[j->i] != '{') return QMX_ERR_PARSE;
    j->i++;
    qmx__cb_ws(j);
    if (j->i < j->n && j->s[j->i] == '}') { j->i++; return QMX_OK; }
    for (;;) {
        char key[16];
        size_t kl = 0, ks;
        int f;
        long iv = 0;
        qmx__cb_ws(j);
        ks = j->i;
        s = qmx__cb_string(j, NULL, 0, &kl);
        if (s != QMX_OK) return s;
        if (kl >= sizeof key) return QMX_ERR_PARSE;               /* no field name is that long */
        j->i = ks;
        s = qmx__cb_string(j, key, sizeof key, &kl);
        if (s != QMX_OK) return QMX_ERR_PARSE;
        for (f = 0; f < 5; f++) {
            size_t nl = 0;
            while (names[f][nl]) nl++;
            if (qmx__cb_streq(key, kl, names[f], nl)) break;   /* case-sensitive, as Python */
        }
        if (f == 5) return QMX_ERR_PARSE;                           /* unknown field */
        if (r->present & (1u << f)) return QMX_ERR_PARSE;          /* duplicate field */
        qmx__cb_ws(j);
        if (j->i >= j->n || j->s[j->i] != ':') return QMX_ERR_PARSE;
        j->i++;
        qmx__cb_ws(j);
        switch (f) {
        case 0: s = qmx__cb_int_field(j, 1, 1, 16, &iv); r->w_bits = (int)iv; break;
        case 1: s = qmx__cb_int_field(j, 1, 1, 16, &iv); r->a_bits = (int)iv; break;
        case 2: s = qmx__cb_scale_field(j, &r->w_scale); break;
        case 3: s = qmx__cb_scale_field(j, &r->a_scale); break;
        default:
            s = qmx__cb_int_field(j, 0, -1, 2147483647L, &iv);
            if (s == QMX_OK && iv == 0) s = QMX_ERR_PARSE;
            r->tile_size = (int32_t)iv;
            break;
        }
        if (s != QMX_OK) return s;
        r->present |= 1u << f;
        qmx__cb_ws(j);
        if (j->i < j->n && j->s[j->i] == ',') { j->i++; continue; }
        if (j->i < j->n && j->s[j->i] == '}') { j->i++; return QMX_OK; }
        return QMX_ERR_PARSE;
    }
}

QMX__DEF qmx_status qmx_intmp_parse(const char *json, size_t len, qmx_intmp_rule *rules,
                                    size_t max_rules, char *names, size_t names_bytes,
                                    qmx_intmp_config *out) {
    qmx__cb_js j;
    size_t nr = 0, used = 0, r, q;
    int def = -1;
    qmx_status s;
    if (!json || !rules || !names || !out) return QMX_ERR_NULL;
    if (len == 0) return QMX_ERR_PARSE;
    j.s = json; j.n = len; j.i = 0;
    qmx__cb_ws(&j);
    if (j.i >= j.n || j.s[j.i] != '{') return QMX_ERR_PARSE;
    j.i++;
    qmx__cb_ws(&j);
    if (j.i < j.n && j.s[j.i] == '}') j.i++;
    else for (;;) {
        size_t kl = 0, ks;
        qmx_intmp_rule z;
        qmx__cb_ws(&j);
        ks = j.i;
        s = qmx__cb_string(&j, NULL, 0, &kl);     /* validate first: BUFFER errors only for valid keys */
        if (s != QMX_OK) return s;
        if (nr >= max_rules) return QMX_ERR_BUFFER_TOO_SMALL;
        if (used + kl + 1 > names_bytes) return QMX_ERR_BUFFER_TOO_SMALL;
        j.i = ks;
        qmx__cb_string(&j, names + used, names_bytes - used, &kl);
        z.pattern = names + used; z.pattern_len = kl;
        z.w_bits = 0; z.a_bits = 0; z.w_scale = 1.0f; z.a_scale = 1.0f; z.tile_size = -1;
        z.present = 0;
        z.is_default = qmx__cb_streq(names + used, kl, "__default__", 11);
        for (q = 0; q < nr; q++)
            if (qmx__cb_streq(rules[q].pattern, rules[q].pattern_len, names + used, kl))
                return QMX_ERR_PARSE;                          /* duplicate key */
        if (!z.is_default) {
            s = qmx_intmp_pattern_check(names + used, kl);
            if (s != QMX_OK) return s;
        }
        qmx__cb_ws(&j);
        if (j.i >= j.n || j.s[j.i] != ':') return QMX_ERR_PARSE;
        j.i++;
        s = qmx__cb_rule(&j, &z);
        if (s != QMX_OK) return s;
        if (z.is_default) def = (int)nr;
        rules[nr++] = z;
        used += kl + 1;
        qmx__cb_ws(&j);
        if (j.i < j.n && j.s[j.i] == ',') { j.i++; continue; }
        if (j.i < j.n && j.s[j.i] == '}') { j.i++; break; }
        return QMX_ERR_PARSE;
    }
    qmx__cb_ws(&j);
    if (j.i != j.n) return QMX_ERR_PARSE;                       /* trailing bytes */
    /* inherit: fields a rule does not give come from __default__ (else the built-in ones) */
    if (def >= 0)
        for (r = 0; r < nr; r++) {
            const qmx_intmp_rule *d = &rules[def];
            if ((int)r == def) continue;
            if (!(rules[r].present & 1u)) rules[r].w_bits = d->w_bits;
            if (!(rules[r].present & 2u)) rules[r].a_bits = d->a_bits;
            if (!(rules[r].present & 4u)) rules[r].w_scale = d->w_scale;
            if (!(rules[r].present & 8u)) rules[r].a_scale = d->a_scale;
            if (!(rules[r].present & 16u)) rules[r].tile_size = d->tile_size;
        }
    out->rules = rules; out->n_rules = nr;
    out->deflt = def >= 0 ? &rules[def] : NULL;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_intmp_lookup(const qmx_intmp_config *cfg, const char *layer, size_t len,
                                     const qmx_intmp_rule **rule) {
    const qmx_intmp_rule *hit = NULL;
    size_t r, i;
    if (!cfg || !layer || !rule || (cfg->n_rules && !cfg->rules)) return QMX_ERR_NULL;
    for (i = 0; i < len; i++) if (layer[i] == '\0') return QMX_ERR_ARG;
    for (r = 0; r < cfg->n_rules; r++) {            /* no break: the last match wins */
        int m;
        if (cfg->rules[r].is_default) continue;
        m = qmx_intmp_fullmatch(cfg->rules[r].pattern, cfg->rules[r].pattern_len, layer, len);
        if (m < 0) return (qmx_status)m;
        if (m) hit = &cfg->rules[r];
    }
    if (!hit) hit = cfg->deflt;
    if (!hit) return QMX_ERR_ARG;                   /* no match and no __default__ */
    *rule = hit;
    return QMX_OK;
}

/* ---- C6. N:M sparsity ---- */
/* g++ 12 reports the self-initialised `__Y = __Y` of _mm512_undefined_*() inside AVX-512
 * intrinsics as uninitialised once inlined (GCC PR 105593; qmx.h does the same). */
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
static int qmx__cb_nm_bits(int m) { int b = 0; while ((1 << b) < m) b++; return b; }

/* Shape checks and sizes; *vpr = values per row, *mpr = meta bytes per row. */
static qmx_status qmx__cb_nm_shape(size_t rows, size_t K, int n, int m, size_t *vpr, size_t *mpr) {
    size_t groups, bits;
    if (rows == 0 || K == 0) return QMX_ERR_SIZE;
    if (m < 2 || m > 256 || n < 1 || n >= m) return QMX_ERR_ARG;
    if (K % (size_t)m != 0) return QMX_ERR_SHAPE;
    groups = K / (size_t)m;
    *vpr = groups * (size_t)n;                              /* <= K: no overflow */
    if (*vpr > SIZE_MAX / 8) return QMX_ERR_OVERFLOW;
    bits = *vpr * (size_t)qmx__cb_nm_bits(m);
    *mpr = bits / 8 + (bits % 8 != 0);
    return QMX_OK;
}
QMX__DEF qmx_status qmx_nm_storage_size(size_t rows, size_t K, int n, int m, size_t *vc,
                                        size_t *mb) {
    size_t vpr, mpr;
    qmx_status st;
    if (!vc || !mb) return QMX_ERR_NULL;
    st = qmx__cb_nm_shape(rows, K, n, m, &vpr, &mpr);
    if (st != QMX_OK) return st;
    if (vpr > SIZE_MAX / rows || mpr > SIZE_MAX / rows) return QMX_ERR_OVERFLOW;
    *vc = vpr * rows; *mb = mpr * rows;
    return QMX_OK;
}
static qmx_status qmx__cb_nm_check(size_t rows, size_t K, size_t ld, int n, int m, size_t vc,
                                   size_t mb, size_t *vpr, size_t *mpr) {
    size_t need_v, need_m;
    qmx_status st = qmx_nm_storage_size(rows, K, n, m, &need_v, &need_m);
    if (st != QMX_OK) return st;
    if (ld < K) return QMX_ERR_SHAPE;
    if ((rows - 1) > (SIZE_MAX - K) / ld) return QMX_ERR_OVERFLOW;
    if (vc < need_v || mb < need_m) return QMX_ERR_BUFFER_TOO_SMALL;
    return qmx__cb_nm_shape(rows, K, n, m, vpr, mpr);
}
static void qmx__cb_put_bits(uint8_t *row, size_t j, int b, unsigned v) {
    size_t bit = j * (size_t)b;
    int t;
    for (t = 0; t < b; t++, bit++) {
        uint8_t mask = (uint8_t)(1u << (bit & 7));
        if ((v >> t) & 1u) row[bit >> 3] |= mask; else row[bit >> 3] &= (uint8_t)~mask;
    }
}
static unsigned qmx__cb_get_bits(const uint8_t *row, size_t j, int b) {
    size_t bit = j * (size_t)b;
    unsigned v = 0;
    int t;
    for (t = 0; t < b; t++, bit++) v |= (unsigned)((row[bit >> 3] >> (bit & 7)) & 1u) << t;
    return v;
}
/* Keep flag of element i of a group: fewer than n elements rank before it (larger magnitude,
 * or equal magnitude and lower index). mag(i) is a uint32 key (int8: |w|; float: |bits|). */
#define QMX__CB_NM_COMPRESS(T, MAGEXPR)                                                         \
    size_t r, g, vpr = vpr0, mpr = mpr0, groups = K / (size_t)m;                                \
    int b = qmx__cb_nm_bits(m);                                                                 \
    for (r = 0; r < rows; r++) {                                                                \
        const T *w = W + r * ldw;                                                               \
        T *vo = values + r * vpr;                                                               \
        uint8_t *mo = meta + r * mpr;                                                           \
        size_t j = 0;                                                                           \
        if (mpr) mo[mpr - 1] = 0;                                                               \
        for (g = 0; g < groups; g++) {                                                          \
            const T *gw = w + g * (size_t)m;                                                    \
            int i, t;                                                                           \
            for (i = 0; i < m; i++) {                                                           \
                uint32_t mi = MAGEXPR(gw[i]);                                                   \
                int rank = 0;                                                                   \
                for (t = 0; t < m && rank < n; t++) {                                           \
                    uint32_t mt = MAGEXPR(gw[t]);                                               \
                    if (mt > mi || (mt == mi && t < i)) rank++;                                 \
                }                                                                               \
                if (rank < n) { vo[j] = gw[i]; qmx__cb_put_bits(mo, j, b, (unsigned)i); j++; }  \
            }                                                                                   \
        }                                                                                       \
    }
#define QMX__CB_MAG_I8(v) ((uint32_t)((v) < 0 ? -(int32_t)(v) : (int32_t)(v)))
#define QMX__CB_MAG_F32(v) (qmx__f32_bits(v) & 0x7FFFFFFFu)

QMX__DEF qmx_status qmx_nm_compress_i8(const int8_t *W, size_t rows, size_t K, size_t ldw, int n,
                                       int m, int8_t *values, size_t vc, uint8_t *meta,
                                       size_t mb) {
    qmx_status st;
    size_t vpr0, mpr0;
    if (!W || !values || !meta) return QMX_ERR_NULL;
    st = qmx__cb_nm_check(rows, K, ldw, n, m, vc, mb, &vpr0, &mpr0);
    if (st != QMX_OK) return st;
    {
        QMX__CB_NM_COMPRESS(int8_t, QMX__CB_MAG_I8)
    }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_nm_compress_f32(const float *W, size_t rows, size_t K, size_t ldw, int n,
                                        int m, float *values, size_t vc, uint8_t *meta,
                                        size_t mb) {
    qmx_status st;
    size_t vpr0, mpr0, r, k;
    if (!W || !values || !meta) return QMX_ERR_NULL;
    st = qmx__cb_nm_check(rows, K, ldw, n, m, vc, mb, &vpr0, &mpr0);
    if (st != QMX_OK) return st;
    for (r = 0; r < rows; r++)
        for (k = 0; k < K; k++)
            if (!qmx__isfinite(W[r * ldw + k])) return QMX_ERR_NONFINITE;
    {
        QMX__CB_NM_COMPRESS(float, QMX__CB_MAG_F32)
    }
    return QMX_OK;
}
/* With m not a power of two, b bits can encode indices >= m; such metadata is rejected by the
 * matmuls (an index < m that compress would not write, e.g. a repeated one, only gives other
 * numbers, never an out-of-bounds read). Decompress also requires strictly increasing indices. */
static qmx_status qmx__cb_nm_meta_ok(const uint8_t *meta, size_t rows, size_t groups, int n, int m,
                                     size_t mpr) {
    size_t r, g;
    int b = qmx__cb_nm_bits(m), t;
    for (r = 0; r < rows; r++)
        for (g = 0; g < groups; g++) {
            int prev = -1;
            for (t = 0; t < n; t++) {
                int idx = (int)qmx__cb_get_bits(meta + r * mpr, g * (size_t)n + (size_t)t, b);
                if (idx >= m || idx <= prev) return QMX_ERR_ARG;
                prev = idx;
            }
        }
    return QMX_OK;
}
QMX__DEF qmx_status qmx_nm_decompress_i8(const int8_t *values, size_t vc, const uint8_t *meta,
                                         size_t mb, size_t rows, size_t K, int n, int m,
                                         int8_t *W, size_t ldw) {
    size_t vpr, mpr, r, k, g, groups;
    int b, t;
    qmx_status st;
    if (!values || !meta || !W) return QMX_ERR_NULL;
    st = qmx__cb_nm_check(rows, K, ldw, n, m, vc, mb, &vpr, &mpr);
    if (st != QMX_OK) return st;
    groups = K / (size_t)m;
    st = qmx__cb_nm_meta_ok(meta, rows, groups, n, m, mpr);
    if (st != QMX_OK) return st;
    b = qmx__cb_nm_bits(m);
    for (r = 0; r < rows; r++) {
        int8_t *w = W + r * ldw;
        for (k = 0; k < K; k++) w[k] = 0;
        for (g = 0; g < groups; g++)
            for (t = 0; t < n; t++) {
                size_t j = g * (size_t)n + (size_t)t;
                w[g * (size_t)m + qmx__cb_get_bits(meta + r * mpr, j, b)] = values[r * vpr + j];
            }
    }
    return QMX_OK;
}

static qmx_status qmx__cb_nm_mm_check(size_t M, size_t N, size_t K, size_t lda, size_t ldc,
                                      int n, int m, size_t vc, size_t mb, size_t *vpr,
                                      size_t *mpr) {
    qmx_status st;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    if (K > QMX_NM_MAX_K) return QMX_ERR_OVERFLOW;
    st = qmx__cb_nm_check(N, K, K, n, m, vc, mb, vpr, mpr);
    if (st != QMX_OK) return st;
    if (lda < K || ldc < N) return QMX_ERR_SHAPE;
    if ((M - 1) > (SIZE_MAX - K) / lda || (M - 1) > (SIZE_MAX / 4 - N) / ldc) return QMX_ERR_OVERFLOW;
    return QMX_OK;
}

/* 2:4 inner loop: one metadata byte holds two groups (4 indices of 2 bits, low bits first). */
#if defined(QMX__AVX512) && defined(__AVX512VBMI__) && defined(__AVX512VNNI__)
#define QMX__CB_VNNI 1
#endif
#if (defined(QMX__AVX2) || defined(QMX__AVX512)) && !defined(QMX__CB_VNNI)
/* 16 2-bit fields -> 8 bytes, field f in byte f (portable bit spread, no BMI2 needed). */
static uint64_t qmx__cb_spread2(uint32_t m16) {
    uint64_t y = m16;
    y = (y | (y << 24)) & 0x000000FF000000FFull;
    y = (y | (y << 12)) & 0x000F000F000F000Full;
    y = (y | (y << 6)) & 0x0303030303030303ull;
    return y;
}
/* AVX2: 8 groups (32 bytes of A, 16 values, 4 metadata bytes) per step. Each 128-bit lane
 * holds 4 groups; pshufb gathers the 2 kept bytes of each (index + 4 * group), the two 8-byte
 * halves are joined, widened to int16 and multiplied pairwise (vpmaddwd, exact: |a*v| <= 2^14). */
static size_t qmx__cb_nm24_dot_avx2(const int8_t *a, const int8_t *v, const uint8_t *meta,
                                    size_t groups, int32_t *out) {
    const uint64_t base = 0x0C0C080804040000ull;   /* byte offsets 4 * group within a lane */
    __m256i acc = _mm256_setzero_si256();
    size_t g = 0;
    for (; g + 8 <= groups; g += 8) {
        uint32_t m32 = (uint32_t)meta[g >> 1] | ((uint32_t)meta[(g >> 1) + 1] << 8) |
                       ((uint32_t)meta[(g >> 1) + 2] << 16) | ((uint32_t)meta[(g >> 1) + 3] << 24);
        uint64_t lo = qmx__cb_spread2(m32 & 0xFFFFu) + base, hi = qmx__cb_spread2(m32 >> 16) + base;
        __m256i mask = _mm256_set_epi64x(0, (long long)hi, 0, (long long)lo);
        __m256i av = _mm256_loadu_si256((const __m256i *)(const void *)(a + g * 4));
        __m256i sel = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(av, mask), 0x08);
        __m256i s16 = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(sel));
        __m256i v16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(v + g * 2)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(s16, v16));
    }
    {
        __m128i x = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4E));
        x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xB1));
        *out = _mm_cvtsi128_si32(x);
    }
    return g;
}
#endif
#if defined(QMX__AVX512) && defined(__AVX512VBMI__) && !defined(QMX__CB_VNNI)
#define QMX__CB_VBMI 1
/* AVX-512 VBMI: 16 groups (64 bytes of A, 32 values, 8 metadata bytes) per step.
 * vpmultishiftqb pulls index t out of bits [2t, 2t+2) of the broadcast metadata word, + 4 *
 * group gives the byte, vpermb gathers the 32 kept bytes, then int16 widening and vpmaddwd. */
static size_t qmx__cb_nm24_dot_vbmi(const int8_t *a, const int8_t *v, const uint8_t *meta,
                                    size_t groups, int32_t *out) {
    uint8_t cbuf[64], obuf[64];
    __m512i ctrl, offs, three = _mm512_set1_epi8(3), acc = _mm512_setzero_si512();
    size_t g = 0;
    int t;
    for (t = 0; t < 64; t++) {
        cbuf[t] = (uint8_t)(t < 32 ? 2 * t : 0);
        obuf[t] = (uint8_t)(t < 32 ? 4 * (t / 2) : 0);
    }
    ctrl = _mm512_loadu_si512((const void *)cbuf);
    offs = _mm512_loadu_si512((const void *)obuf);
    for (; g + 16 <= groups; g += 16) {
        __m512i mw = _mm512_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(meta + (g >> 1))));
        __m512i idx = _mm512_add_epi8(_mm512_and_si512(_mm512_multishift_epi64_epi8(ctrl, mw), three), offs);
        __m512i av = _mm512_loadu_si512((const void *)(a + g * 4));
        __m512i sel = _mm512_permutexvar_epi8(idx, av);
        __m512i s16 = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(sel));
        __m512i v16 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(v + g * 2)));
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(s16, v16));
    }
    *out += _mm512_reduce_add_epi32(acc);
    return g;
}
#endif
#if defined(QMX__CB_VNNI)
/* AVX-512 VBMI + VNNI register tiles of mr rows of A x nr weight rows (4 x 4, 2 x 8, 1 x 16;
 * for M = 1, 1 x 8 plus the 8 sums of v), 32 groups per step (128 bytes of each A row, 64
 * values and 16 metadata bytes of each weight row). Each A row is loaded and flipped
 * (a ^ 0x80 = a + 128 as u8) once per step for the nr weight rows; each weight row's 64
 * indices are decoded once per step for the mr A rows (two vpbroadcastq loads put metadata
 * word 0 in the low and word 1 in the high 256 bits, vpmultishiftqb brings index t to the
 * low bits of byte t, and (x & 3) | 4 * (t / 2) is one vpternlogd: the offsets have zero low
 * bits); then one vpermt2b and one vpdpbusd per (A row, weight row). The 16 accumulators
 * s0..s15 (s[r * nr + c]) hold lanes along K: exact int32 sums of (a + 128) * v (|.| <= 2^31
 * by the K bound), reduced by one transpose-add tree per tile. The step past the end of K (K
 * not a multiple of 128) loads A and v with masks (the missing values read as 0 and add
 * nothing; their indices still select inside the two zero-filled A registers) and takes the
 * metadata from a zero-padded copy: no byte outside the rows is read. Named variables, one
 * loop: GCC 12 keeps an array of accumulators in memory and copies them around a separate
 * tail step. */
#define QMX__CB_NM24_DECL                                                                     \
    const __m512i ctrl = _mm512_set_epi64(0x3E3C3A3836343230LL, 0x2E2C2A2826242220LL,         \
                                          0x1E1C1A1816141210LL, 0x0E0C0A0806040200LL,         \
                                          0x3E3C3A3836343230LL, 0x2E2C2A2826242220LL,         \
                                          0x1E1C1A1816141210LL, 0x0E0C0A0806040200LL);        \
    const __m512i offs = _mm512_set_epi64(0x7C7C787874747070LL, 0x6C6C686864646060LL,         \
                                          0x5C5C585854545050LL, 0x4C4C484844444040LL,         \
                                          0x3C3C383834343030LL, 0x2C2C282824242020LL,         \
                                          0x1C1C181814141010LL, 0x0C0C080804040000LL);        \
    const __m512i three = _mm512_set1_epi8(3), flip = _mm512_set1_epi8((char)0x80);           \
    __m512i s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, x, w;       \
    __mmask64 ka0, ka1, kv;                                                                   \
    const uint8_t *mp[16];                                                                    \
    size_t g, mo
/* A row r (at a + r * lda) -> l##r, h##r (flipped) */
#define QMX__CB_NM24_LA(r)                                                                    \
    __m512i l##r = _mm512_xor_si512(                                                          \
        _mm512_maskz_loadu_epi8(ka0, (const void *)(a + (r) * lda + g * 4)), flip);           \
    __m512i h##r = _mm512_xor_si512(                                                          \
        _mm512_maskz_loadu_epi8(ka1, (const void *)(a + (r) * lda + g * 4 + 64)), flip);
/* weight row c -> x (64 gather indices), w (64 values) */
#define QMX__CB_NM24_DW(c)                                                                    \
    x = _mm512_mask_broadcastq_epi64(                                                         \
        _mm512_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(mp[c] + mo))), \
        0xF0, _mm_loadl_epi64((const __m128i *)(const void *)(mp[c] + mo + 8)));              \
    x = _mm512_ternarylogic_epi32(_mm512_multishift_epi64_epi8(ctrl, x), three, offs, 0xEA);  \
    w = _mm512_maskz_loadu_epi8(kv, (const void *)(v[c] + g * 2));
#define QMX__CB_NM24_P(r, k) s##k = _mm512_dpbusd_epi32(s##k, _mm512_permutex2var_epi8(l##r, x, h##r), w);
#define QMX__CB_NM24_S44                                                                      \
    { QMX__CB_NM24_LA(0) QMX__CB_NM24_LA(1) QMX__CB_NM24_LA(2) QMX__CB_NM24_LA(3)             \
      QMX__CB_NM24_DW(0) QMX__CB_NM24_P(0, 0) QMX__CB_NM24_P(1, 4) QMX__CB_NM24_P(2, 8) QMX__CB_NM24_P(3, 12) \
      QMX__CB_NM24_DW(1) QMX__CB_NM24_P(0, 1) QMX__CB_NM24_P(1, 5) QMX__CB_NM24_P(2, 9) QMX__CB_NM24_P(3, 13) \
      QMX__CB_NM24_DW(2) QMX__CB_NM24_P(0, 2) QMX__CB_NM24_P(1, 6) QMX__CB_NM24_P(2, 10) QMX__CB_NM24_P(3, 14) \
      QMX__CB_NM24_DW(3) QMX__CB_NM24_P(0, 3) QMX__CB_NM24_P(1, 7) QMX__CB_NM24_P(2, 11) QMX__CB_NM24_P(3, 15) }
#define QMX__CB_NM24_S28                                                                      \
    { QMX__CB_NM24_LA(0) QMX__CB_NM24_LA(1)                                                   \
      QMX__CB_NM24_DW(0) QMX__CB_NM24_P(0, 0) QMX__CB_NM24_P(1, 8)                            \
      QMX__CB_NM24_DW(1) QMX__CB_NM24_P(0, 1) QMX__CB_NM24_P(1, 9)                            \
      QMX__CB_NM24_DW(2) QMX__CB_NM24_P(0, 2) QMX__CB_NM24_P(1, 10)                           \
      QMX__CB_NM24_DW(3) QMX__CB_NM24_P(0, 3) QMX__CB_NM24_P(1, 11)                           \
      QMX__CB_NM24_DW(4) QMX__CB_NM24_P(0, 4) QMX__CB_NM24_P(1, 12)                           \
      QMX__CB_NM24_DW(5) QMX__CB_NM24_P(0, 5) QMX__CB_NM24_P(1, 13)                           \
      QMX__CB_NM24_DW(6) QMX__CB_NM24_P(0, 6) QMX__CB_NM24_P(1, 14)                           \
      QMX__CB_NM24_DW(7) QMX__CB_NM24_P(0, 7) QMX__CB_NM24_P(1, 15) }
#define QMX__CB_NM24_S116                                                                     \
    { QMX__CB_NM24_LA(0)                                                                      \
      QMX__CB_NM24_DW(0) QMX__CB_NM24_P(0, 0) QMX__CB_NM24_DW(1) QMX__CB_NM24_P(0, 1)         \
      QMX__CB_NM24_DW(2) QMX__CB_NM24_P(0, 2) QMX__CB_NM24_DW(3) QMX__CB_NM24_P(0, 3)         \
      QMX__CB_NM24_DW(4) QMX__CB_NM24_P(0, 4) QMX__CB_NM24_DW(5) QMX__CB_NM24_P(0, 5)         \
      QMX__CB_NM24_DW(6) QMX__CB_NM24_P(0, 6) QMX__CB_NM24_DW(7) QMX__CB_NM24_P(0, 7)         \
      QMX__CB_NM24_DW(8) QMX__CB_NM24_P(0, 8) QMX__CB_NM24_DW(9) QMX__CB_NM24_P(0, 9)         \
      QMX__CB_NM24_DW(10) QMX__CB_NM24_P(0, 10) QMX__CB_NM24_DW(11) QMX__CB_NM24_P(0, 11)     \
      QMX__CB_NM24_DW(12) QMX__CB_NM24_P(0, 12) QMX__CB_NM24_DW(13) QMX__CB_NM24_P(0, 13)     \
      QMX__CB_NM24_DW(14) QMX__CB_NM24_P(0, 14) QMX__CB_NM24_DW(15) QMX__CB_NM24_P(0, 15) }
/* M = 1: 8 weight rows, and their sums of v in s8..s15 (no separate pass over v, so the
 * weight stream overlaps the arithmetic) */
#define QMX__CB_NM24_VS(c, k) s##k = _mm512_dpbusd_epi32(s##k, ones, w);
#define QMX__CB_NM24_S18                                                                      \
    { QMX__CB_NM24_LA(0)                                                                      \
      QMX__CB_NM24_DW(0) QMX__CB_NM24_P(0, 0) QMX__CB_NM24_VS(0, 8)                           \
      QMX__CB_NM24_DW(1) QMX__CB_NM24_P(0, 1) QMX__CB_NM24_VS(1, 9)                           \
      QMX__CB_NM24_DW(2) QMX__CB_NM24_P(0, 2) QMX__CB_NM24_VS(2, 10)                          \
      QMX__CB_NM24_DW(3) QMX__CB_NM24_P(0, 3) QMX__CB_NM24_VS(3, 11)                          \
      QMX__CB_NM24_DW(4) QMX__CB_NM24_P(0, 4) QMX__CB_NM24_VS(4, 12)                          \
      QMX__CB_NM24_DW(5) QMX__CB_NM24_P(0, 5) QMX__CB_NM24_VS(5, 13)                          \
      QMX__CB_NM24_DW(6) QMX__CB_NM24_P(0, 6) QMX__CB_NM24_VS(6, 14)                          \
      QMX__CB_NM24_DW(7) QMX__CB_NM24_P(0, 7) QMX__CB_NM24_VS(7, 15) }
/* All of K for one tile (nr weight rows): the steps, the last one (partial or not) with
 * masks; then sum = the 16 lane sums (lane t = s##t, one transpose-add tree). */
#define QMX__CB_NM24_RUN(STEP, nr)                                                            \
    s0 = _mm512_setzero_si512(); s1 = s0; s2 = s0; s3 = s0; s4 = s0; s5 = s0; s6 = s0;        \
    s7 = s0; s8 = s0; s9 = s0; s10 = s0; s11 = s0; s12 = s0; s13 = s0; s14 = s0; s15 = s0;    \
    ka0 = ~(__mmask64)0; ka1 = ka0; kv = ka0;                                                 \
    for (g = 0; g < (nr); g++) mp[g] = mt[g];                                                 \
    for (g = 0; g < groups; g += 32) {                                                        \
        uint8_t mtail[16][16];   /* in the loop's scope: may share the tree's stack slots */  \
        mo = g / 2;                                                                           \
        if (groups - g < 32) {                                                                \
            size_t gt = groups - g, e, c;                                                     \
            ka0 = qmx__cb_lowmask(gt * 4);                                                    \
            ka1 = qmx__cb_lowmask(gt * 4 > 64 ? gt * 4 - 64 : 0);                             \
            kv = qmx__cb_lowmask(gt * 2);                                                     \
            for (c = 0; c < (nr); c++) {                                                      \
                for (e = 0; e < 16; e++) mtail[c][e] = e < (gt + 1) / 2 ? mt[c][mo + e] : 0;  \
                mp[c] = mtail[c];                                                             \
            }                                                                                 \
            mo = 0;                                                                           \
        }                                                                                     \
        STEP                                                                                  \
    }                                                                                         \
    {   /* the tree's last level joins two halves (lane t = sum of s##t's lanes) */            \
        __m512i sv[8], d0, d1;                                                                \
        sv[0] = s0; sv[1] = s1; sv[2] = s2; sv[3] = s3; sv[4] = s4; sv[5] = s5; sv[6] = s6;   \
        sv[7] = s7;                                                                           \
        d0 = qmx__cb_hsum8(sv);                                                               \
        sv[0] = s8; sv[1] = s9; sv[2] = s10; sv[3] = s11; sv[4] = s12; sv[5] = s13;           \
        sv[6] = s14; sv[7] = s15;                                                             \
        d1 = qmx__cb_hsum8(sv);                                                               \
        sum = _mm512_add_epi32(QMX__CB_H4(d0, d1), _mm512_permutexvar_epi32(                  \
            _mm512_add_epi32(_mm512_set1_epi32((int)jj), _mm512_and_si512(                    \
                _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),       \
                _mm512_set1_epi32((nr) - 1))),                                                \
            _mm512_loadu_si512((const void *)nc)));                                           \
    }
#if defined(__GNUC__) || defined(__clang__)
#  define QMX__CB_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#  define QMX__CB_NOINLINE __declspec(noinline)
#else
#  define QMX__CB_NOINLINE
#endif
static __mmask64 qmx__cb_lowmask(size_t n) {
    return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}
/* Transpose-add tree (exact integers: any order gives the same sums). hsum8: its first three
 * levels on a[0..7] (overwritten); QMX__CB_H4 of the results for a[0..7] and a[8..15] has in
 * lane t the sum of the lanes of accumulator t. */
#define QMX__CB_H2(x, y, W) _mm512_add_epi32(_mm512_unpacklo_##W(x, y), _mm512_unpackhi_##W(x, y))
#define QMX__CB_H4(x, y) \
    _mm512_add_epi32(_mm512_shuffle_i32x4(x, y, 0x88), _mm512_shuffle_i32x4(x, y, 0xDD))
QMX__VINLINE __m512i qmx__cb_hsum8(__m512i *a) {
    int t;
    for (t = 0; t < 4; t++) a[t] = QMX__CB_H2(a[2 * t], a[2 * t + 1], epi32);
    for (t = 0; t < 2; t++) a[t] = QMX__CB_H2(a[2 * t], a[2 * t + 1], epi64);
    return QMX__CB_H4(a[0], a[1]);
}
/* One tile: C[r][c] (r < mr, c < ncols) for the rows of A at a + r * lda and the weight rows
 * v[c], mt[c] (columns up to nr past ncols are computed from a repeated row, not stored):
 * sum of (a + 128) * v plus nc[r * nr + c] = -(128 + a_zp) * sum(v), mod 2^32 (exact: the
 * result fits int32). Not inlined: inside the callers' loops GCC 12 spills the accumulators. */
QMX__CB_NOINLINE static void qmx__cb_nm24_t44(const int8_t *a, size_t lda, const int8_t *const *v,
                                              const uint8_t *const *mt, size_t groups,
                                              const int32_t *nc, size_t jj, int32_t *C,
                                              size_t ldc, size_t ncols) {
    QMX__CB_NM24_DECL;
    const __mmask8 cm = (__mmask8)((1u << ncols) - 1u);
    __m512i sum;
    QMX__CB_NM24_RUN(QMX__CB_NM24_S44, 4)
    _mm_mask_storeu_epi32(C, cm, _mm512_extracti32x4_epi32(sum, 0));
    _mm_mask_storeu_epi32(C + ldc, cm, _mm512_extracti32x4_epi32(sum, 1));
    _mm_mask_storeu_epi32(C + 2 * ldc, cm, _mm512_extracti32x4_epi32(sum, 2));
    _mm_mask_storeu_epi32(C + 3 * ldc, cm, _mm512_extracti32x4_epi32(sum, 3));
}
QMX__CB_NOINLINE static void qmx__cb_nm24_t28(const int8_t *a, size_t lda, const int8_t *const *v,
                                              const uint8_t *const *mt, size_t groups,
                                              const int32_t *nc, size_t jj, int32_t *C,
                                              size_t ldc, size_t ncols) {
    QMX__CB_NM24_DECL;
    const __mmask8 cm = (__mmask8)((1u << ncols) - 1u);
    __m512i sum;
    QMX__CB_NM24_RUN(QMX__CB_NM24_S28, 8)
    _mm256_mask_storeu_epi32(C, cm, _mm512_extracti64x4_epi64(sum, 0));
    _mm256_mask_storeu_epi32(C + ldc, cm, _mm512_extracti64x4_epi64(sum, 1));
}
QMX__CB_NOINLINE static void qmx__cb_nm24_t116(const int8_t *a, const int8_t *const *v,
                                               const uint8_t *const *mt, size_t groups,
                                               const int32_t *nc, int32_t *C, size_t ncols) {
    const size_t lda = 0, jj = 0;
    QMX__CB_NM24_DECL;
    __m512i sum;
    QMX__CB_NM24_RUN(QMX__CB_NM24_S116, 16)
    _mm512_mask_storeu_epi32(C, (__mmask16)((1u << ncols) - 1u), sum);
}
/* M = 1, 8 weight rows: the fix-up from the sums of v in lanes 8..15, zpf = 128 + a_zp */
QMX__CB_NOINLINE static void qmx__cb_nm24_t18(const int8_t *a, const int8_t *const *v,
                                              const uint8_t *const *mt, size_t groups,
                                              int32_t zpf, int32_t *C, size_t ncols) {
    const size_t lda = 0;
    const __m512i ones = _mm512_set1_epi8(1);
    static const int32_t nc[16] = {0};
    const size_t jj = 0;
    QMX__CB_NM24_DECL;
    __m512i sum;
    QMX__CB_NM24_RUN(QMX__CB_NM24_S18, 8)
    sum = _mm512_sub_epi32(sum, _mm512_mullo_epi32(_mm512_shuffle_i64x2(sum, sum, 0xEE),
                                                   _mm512_set1_epi32(zpf)));
    _mm256_mask_storeu_epi32(C, (__mmask8)((1u << ncols) - 1u), _mm512_castsi512_si256(sum));
}
/* sum(v) of one weight row (cnt values) */
QMX__CB_NOINLINE static int32_t qmx__cb_nm24_vsum(const int8_t *v, size_t cnt) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i s = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + 64 <= cnt; k += 64) s = _mm512_dpbusd_epi32(s, ones, _mm512_loadu_si512((const void *)(v + k)));
    if (k < cnt) s = _mm512_dpbusd_epi32(s, ones, _mm512_maskz_loadu_epi8(qmx__cb_lowmask(cnt - k), (const void *)(v + k)));
    return _mm512_reduce_add_epi32(s);
}
/* out[t] (t < n) = -(128 + a_zp) * sum(v) of weight row min(j + t, N - 1), as int32 mod 2^32:
 * (A - zp) . v = (A + 128) . v - (128 + zp) * sum(v). */
static void qmx__cb_nm24_fixups(const int8_t *values, size_t vpr, size_t N, size_t j, size_t n,
                                int32_t a_zp, int32_t *out) {
    size_t t;
    for (t = 0; t < n; t++) {
        size_t jr = j + t < N ? j + t : N - 1;
        uint32_t u = 0u - (uint32_t)(128 + a_zp) * (uint32_t)qmx__cb_nm24_vsum(values + jr * vpr, vpr);
        out[t] = u <= 0x7FFFFFFFu ? (int32_t)u : -(int32_t)(0xFFFFFFFFu - u) - 1;
    }
}
/* v[t], mt[t] (t < n): weight row min(j + t, N - 1). Scalar on purpose: vectorized, GCC 12
 * kept its vector constants across the tile calls in a 1.5 KiB frame. */
static void qmx__cb_nm24_rows(const int8_t *values, size_t vpr, const uint8_t *meta, size_t mpr,
                              size_t j, size_t N, size_t n, const int8_t **v,
                              const uint8_t **mt) {
    size_t t;
    for (t = 0; t < n; t++) {
        v[t] = values + j * vpr;
        mt[t] = meta + j * mpr;
        if (j + 1 < N) j++;
    }
}
/* The 2:4 matmul. M = 1: 1 x 8 tiles along N. Else blocks of rows of A small enough to stay
 * in L2 (about 256 KiB) while blocks of 16 weight rows pass over them: 4 x 4 tiles, then 2 x 8
 * and 1 x 16 for the last rows. Weight rows past N repeat row N - 1 (computed, not stored),
 * so the tiles have no row tests. */
static void qmx__cb_nm24_matmul_vnni(size_t M, size_t N, const int8_t *A, size_t lda,
                                     int32_t a_zp, const int8_t *values, size_t vpr,
                                     const uint8_t *meta, size_t mpr, size_t groups, int32_t *C,
                                     size_t ldc) {
    size_t rb = ((size_t)1 << 18) / (groups * 4), i0, j0;
    const int8_t *v[16];
    const uint8_t *mt[16];
    if (M == 1) {
        for (j0 = 0; j0 < N; j0 += 8) {
            size_t nj = N - j0 < 8 ? N - j0 : 8;
            qmx__cb_nm24_rows(values, vpr, meta, mpr, j0, N, 8, v, mt);
            qmx__cb_nm24_t18(A, v, mt, groups, 128 + a_zp, C + j0, nj);
        }
        return;
    }
    rb = rb < 4 ? 4 : rb & ~(size_t)3;
    for (i0 = 0; i0 < M; i0 += rb) {
        size_t i1 = M - i0 < rb ? M : i0 + rb, mbk = i1 - i0, i;
        for (j0 = 0; j0 < N; j0 += 16) {
            int32_t nc[16];
            size_t nj = N - j0 < 16 ? N - j0 : 16, jj;
            qmx__cb_nm24_rows(values, vpr, meta, mpr, j0, N, 16, v, mt);
            qmx__cb_nm24_fixups(values, vpr, N, j0, 16, a_zp, nc);
            for (i = i0; i + 4 <= i1; i += 4)
                for (jj = 0; jj < nj; jj += 4)
                    qmx__cb_nm24_t44(A + i * lda, lda, v + jj, mt + jj, groups, nc, jj,
                                     C + i * ldc + j0 + jj, ldc, nj - jj < 4 ? nj - jj : 4);
            i = i0 + (mbk & ~(size_t)3);
            if (i + 2 <= i1) {
                for (jj = 0; jj < nj; jj += 8)
                    qmx__cb_nm24_t28(A + i * lda, lda, v + jj, mt + jj, groups, nc, jj,
                                     C + i * ldc + j0 + jj, ldc, nj - jj < 8 ? nj - jj : 8);
                i += 2;
            }
            if (i < i1) qmx__cb_nm24_t116(A + i * lda, v, mt, groups, nc, C + i * ldc + j0, nj);
        }
    }
}
#endif
#if !defined(QMX__CB_VNNI)
static int32_t qmx__cb_nm24_dot(const int8_t *a, const int8_t *v, const uint8_t *meta, size_t groups) {
    int32_t acc0 = 0, acc1 = 0;
    size_t g = 0;
#if defined(QMX__CB_VBMI)
    g = qmx__cb_nm24_dot_vbmi(a, v, meta, groups, &acc1);
#endif
#if defined(QMX__AVX2) || defined(QMX__AVX512)
    g += qmx__cb_nm24_dot_avx2(a + g * 4, v + g * 2, meta + g / 2, groups - g, &acc0);
#endif
    for (; g + 2 <= groups; g += 2) {
        unsigned mb = meta[g >> 1];
        const int8_t *a0 = a + g * 4, *vv = v + g * 2;
        acc0 += (int32_t)a0[mb & 3u] * vv[0] + (int32_t)a0[(mb >> 2) & 3u] * vv[1];
        acc1 += (int32_t)a0[4 + ((mb >> 4) & 3u)] * vv[2] + (int32_t)a0[4 + (mb >> 6)] * vv[3];
    }
    if (g < groups) {
        unsigned mb = meta[g >> 1];
        acc0 += (int32_t)a[g * 4 + (mb & 3u)] * v[g * 2] + (int32_t)a[g * 4 + ((mb >> 2) & 3u)] * v[g * 2 + 1];
    }
    return acc0 + acc1;
}

#endif

QMX__DEF qmx_status qmx_nm_matmul_i8(size_t M, size_t N, size_t K, const int8_t *A, size_t lda,
                                     int32_t a_zp, int n, int m, const int8_t *values, size_t vc,
                                     const uint8_t *meta, size_t mb, int32_t *C, size_t ldc) {
    size_t vpr, mpr, i, j, g, groups;
    int b, t;
    qmx_status st;
    if (!A || !values || !meta || !C) return QMX_ERR_NULL;
    if (a_zp < -128 || a_zp > 127) return QMX_ERR_ARG;
    st = qmx__cb_nm_mm_check(M, N, K, lda, ldc, n, m, vc, mb, &vpr, &mpr);
    if (st != QMX_OK) return st;
    groups = K / (size_t)m;
    b = qmx__cb_nm_bits(m);
    if ((m & (m - 1)) != 0) {   /* b bits can encode indices >= m: validate them first */
        st = qmx__cb_nm_meta_ok(meta, N, groups, n, m, mpr);
        if (st != QMX_OK) return st;
    }
#if defined(QMX__CB_VNNI)
    if (n == 2 && m == 4) {
        qmx__cb_nm24_matmul_vnni(M, N, A, lda, a_zp, values, vpr, meta, mpr, groups, C, ldc);
        return QMX_OK;
    }
#endif
    for (j = 0; j < N; j++) {
        const int8_t *v = values + j * vpr;
        const uint8_t *mr = meta + j * mpr;
        int32_t vsum = 0; /* sum(v), needed only for a_zp != 0 */
        int have_vsum = a_zp == 0;
        for (i = 0; i < M; i++) {
            const int8_t *a = A + i * lda;
            int32_t acc = 0;
#if !defined(QMX__CB_VNNI)
            if (n == 2 && m == 4) acc = qmx__cb_nm24_dot(a, v, mr, groups);
            else
#endif
            {
                for (g = 0; g < groups; g++)
                    for (t = 0; t < n; t++) {
                        size_t jj = g * (size_t)n + (size_t)t;
                        acc += (int32_t)a[g * (size_t)m + qmx__cb_get_bits(mr, jj, b)] * v[jj];
                    }
            }
            if (!have_vsum) {
                for (g = 0; g < vpr; g++) vsum += v[g];
                have_vsum = 1;
            }
            /* (A - zp) . v = A . v - zp * sum(v); |each| <= 2^31 by the K bound, wrap-free in
             * uint32 and exact after conversion, as qmx_matmul_i8 does */
            {
                uint32_t u = (uint32_t)acc - (uint32_t)a_zp * (uint32_t)vsum;
                C[i * ldc + j] = u <= 0x7FFFFFFFu ? (int32_t)u : -(int32_t)(0xFFFFFFFFu - u) - 1;
            }
        }
    }
    return QMX_OK;
}

/* Excess precision (x87: GCC -m32 without SSE math keeps floats in 80-bit registers): each
 * product and sum goes through memory, i.e. is rounded to float, as on every other target. */
#if defined(__GNUC__) && defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0
#  define QMX__CB_NM_ROUND(v) __asm__("" : "+m"(v))
#else
#  define QMX__CB_NM_ROUND(v) ((void)0)
#endif
QMX__CB_NOFMA
QMX__DEF qmx_status qmx_nm_matmul_f32(size_t M, size_t N, size_t K, const float *A, size_t lda,
                                      int n, int m, const float *values, size_t vc,
                                      const uint8_t *meta, size_t mb, float *C, size_t ldc) {
    QMX__CB_PRAGMA_NOFMA
    size_t vpr, mpr, i, j, g, groups;
    int b, t;
    qmx_status st;
    if (!A || !values || !meta || !C) return QMX_ERR_NULL;
    if (M == 0 || N == 0 || K == 0) return QMX_ERR_SIZE;
    st = qmx__cb_nm_check(N, K, K, n, m, vc, mb, &vpr, &mpr);
    if (st != QMX_OK) return st;
    if (lda < K || ldc < N) return QMX_ERR_SHAPE;
    if ((M - 1) > (SIZE_MAX / 4 - K) / lda || (M - 1) > (SIZE_MAX / 4 - N) / ldc) return QMX_ERR_OVERFLOW;
    groups = K / (size_t)m;
    b = qmx__cb_nm_bits(m);
    if ((m & (m - 1)) != 0) {
        st = qmx__cb_nm_meta_ok(meta, N, groups, n, m, mpr);
        if (st != QMX_OK) return st;
    }
    for (j = 0; j < N; j++) {
        const float *v = values + j * vpr;
        const uint8_t *mr = meta + j * mpr;
        for (i = 0; i < M; i++) {
            const float *a = A + i * lda;
            float acc = 0.0f;
            for (g = 0; g < groups; g++)
                for (t = 0; t < n; t++) {
                    size_t jj = g * (size_t)n + (size_t)t;
                    float p = a[g * (size_t)m + qmx__cb_get_bits(mr, jj, b)] * v[jj];
                    QMX__CB_OPAQUE(p);
                    QMX__CB_NM_ROUND(p);
                    acc = acc + p;
                    QMX__CB_NM_ROUND(acc);
                }
            C[i * ldc + j] = acc;
        }
    }
    return QMX_OK;
}

#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif

/* ---- C3. numbers and method strings ---- */
#define QMX__CB_LIMBS 10   /* 320-bit unsigned integers, little-endian 32-bit limbs */
typedef struct qmx__cb_big { uint32_t w[QMX__CB_LIMBS]; } qmx__cb_big;

static void qmx__cb_big_set(qmx__cb_big *a, uint64_t v) {
    int i;
    for (i = 0; i < QMX__CB_LIMBS; i++) a->w[i] = 0;
    a->w[0] = (uint32_t)v; a->w[1] = (uint32_t)(v >> 32);
}
static void qmx__cb_big_mul10(qmx__cb_big *a) {
    uint64_t carry = 0;
    int i;
    for (i = 0; i < QMX__CB_LIMBS; i++) {
        uint64_t t = (uint64_t)a->w[i] * 10u + carry;
        a->w[i] = (uint32_t)t; carry = t >> 32;
    }
}
static void qmx__cb_big_shl1(qmx__cb_big *a) {
    int i;
    for (i = QMX__CB_LIMBS - 1; i > 0; i--) a->w[i] = (a->w[i] << 1) | (a->w[i - 1] >> 31);
    a->w[0] <<= 1;
}
static int qmx__cb_big_cmp(const qmx__cb_big *a, const qmx__cb_big *b) {
    int i;
    for (i = QMX__CB_LIMBS - 1; i >= 0; i--)
        if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}
static void qmx__cb_big_sub(qmx__cb_big *a, const qmx__cb_big *b) {   /* a -= b, a >= b */
    uint32_t borrow = 0;
    int i;
    for (i = 0; i < QMX__CB_LIMBS; i++) {
        uint32_t x = a->w[i], y = b->w[i], r = x - y - borrow;
        borrow = (x < y || (x == y && borrow)) ? 1u : 0u;
        a->w[i] = r;
    }
}
static int qmx__cb_big_zero(const qmx__cb_big *a) {
    int i;
    for (i = 0; i < QMX__CB_LIMBS; i++) if (a->w[i]) return 0;
    return 1;
}

QMX__DEF qmx_status qmx_parse_f32(const char *s, size_t len, float *out) {
    size_t i = 0;
    int neg = 0, after_point = 0, any_digit = 0, nd = 0, z = 0, scale = 0, e, mag, bits, k;
    long ex = 0;
    uint64_t D = 0;
    qmx__cb_big num, den, t;
    uint32_t m = 0, fb;
    if (!s || !out) return QMX_ERR_NULL;
    if (len == 0 || len > QMX_PARSE_NUMBER_MAX) return QMX_ERR_PARSE;
    if (s[i] == '+' || s[i] == '-') { neg = s[i] == '-'; i++; }
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (after_point) return QMX_ERR_PARSE;
            after_point = 1;
            continue;
        }
        if (c < '0' || c > '9') break;
        any_digit = 1;
        if (after_point) scale--;
        if (D == 0 && c == '0') continue;           /* leading zero */
        if (c == '0') { z++; continue; }            /* pending zero */
        if (nd + z + 1 > 19) return QMX_ERR_PARSE;  /* too many significant digits */
        for (k = 0; k <= z; k++) D *= 10u;
        D += (uint64_t)(c - '0');
        nd += z + 1; z = 0;
    }
    if (!any_digit) return QMX_ERR_PARSE;
    if (i < len) {
        int eneg = 0, edig = 0;
        if (s[i] != 'e' && s[i] != 'E') return QMX_ERR_PARSE;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) { eneg = s[i] == '-'; i++; }
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            edig = 1;
            if (ex < 100000) ex = ex * 10 + (s[i] - '0');
        }
        if (!edig || i != len) return QMX_ERR_PARSE;
        if (eneg) ex = -ex;
    }
    if (D == 0) { *out = neg ? -0.0f : 0.0f; return QMX_OK; }
    e = (int)(ex + z + scale);                       /* value = D * 10^e; |ex| <= 1e5 */
    mag = e + nd - 1;                                /* 10^mag <= value < 10^(mag+1) */
    if (mag > 38) return QMX_ERR_PARSE;              /* >= 1e39 > FLT_MAX */
    if (mag < -46) { *out = neg ? -0.0f : 0.0f; return QMX_OK; } /* < 1e-46: rounds to 0 */
    qmx__cb_big_set(&num, D);
    qmx__cb_big_set(&den, 1);
    for (k = 0; k < e; k++) qmx__cb_big_mul10(&num);     /* num < 2^64 * 10^38 < 2^191 */
    for (k = 0; k < -e; k++) qmx__cb_big_mul10(&den);    /* den <= 10^64 < 2^213 */
    /* normalise num/den into [1, 2): value = (num/den) * 2^bexp */
    {
        int bexp = 0;
        while (qmx__cb_big_cmp(&num, &den) < 0) { qmx__cb_big_shl1(&num); bexp--; }
        for (;;) {
            t = den; qmx__cb_big_shl1(&t);
            if (qmx__cb_big_cmp(&num, &t) < 0) break;
            den = t; bexp++;
        }
        if (bexp > 127) return QMX_ERR_PARSE;
        if (bexp < -150) { *out = neg ? -0.0f : 0.0f; return QMX_OK; }
        bits = bexp >= -126 ? 24 : 150 + bexp;       /* significant bits available (0..23) */
        for (k = 0; k < bits; k++) {
            m <<= 1;
            if (qmx__cb_big_cmp(&num, &den) >= 0) { qmx__cb_big_sub(&num, &den); m |= 1u; }
            qmx__cb_big_shl1(&num);
        }
        {   /* round to nearest, ties to even */
            int half = 0, sticky;
            if (qmx__cb_big_cmp(&num, &den) >= 0) { qmx__cb_big_sub(&num, &den); half = 1; }
            sticky = !qmx__cb_big_zero(&num);
            if (half && (sticky || (m & 1u))) m++;
        }
        if (bits == 24) {
            if (m == (1u << 24)) { m >>= 1; bexp++; }
            if (bexp > 127) return QMX_ERR_PARSE;
            fb = ((uint32_t)(bexp + 127) << 23) | (m & 0x7FFFFFu);
        } else {
            fb = m;                                  /* m * 2^-149; 2^23 is the smallest normal */
        }
    }
    if (neg) fb |= 0x80000000u;
    *out = qmx__bits_f32(fb);
    return QMX_OK;
}


QMX__DEF qmx_status qmx_calib_parse_method(const char *s, size_t len, qmx_calib_config *out) {
    size_t start[4], flen[4], i, nf = 0, f0 = 0;
    float a[3];
    qmx_calib_config c;
    int n_args, j;
    if (!s || !out) return QMX_ERR_NULL;
    if (len == 0 || len > QMX_CALIB_METHOD_MAX) return QMX_ERR_PARSE;
    for (i = 0; i <= len; i++) {
        if (i < len && s[i] == '\0') return QMX_ERR_PARSE;
        if (i == len || s[i] == ',') {
            if (nf == 4) return QMX_ERR_PARSE;
            if (i == f0) return QMX_ERR_PARSE;       /* empty field */
            start[nf] = f0; flen[nf] = i - f0; nf++;
            f0 = i + 1;
        }
    }
    n_args = (int)nf - 1;
    for (j = 0; j < n_args; j++) {
        qmx_status st = qmx_parse_f32(s + start[j + 1], flen[j + 1], &a[j]);
        if (st != QMX_OK) return QMX_ERR_PARSE;
    }
    {
        qmx_calib_config z = {QMX_CALIB_ABSMAX, 0.0f, 0.0f, 0, 0.0f, 0.0f};
        c = z;
    }
    if (qmx__cb_word(s, flen[0], "absmax") || qmx__cb_word(s, flen[0], "minmax") ||
        qmx__cb_word(s, flen[0], "rms")) {
        c.method = qmx__cb_word(s, flen[0], "absmax") ? QMX_CALIB_ABSMAX
                 : qmx__cb_word(s, flen[0], "minmax") ? QMX_CALIB_MINMAX : QMX_CALIB_RMS;
        if (n_args > 1 || (c.method == QMX_CALIB_RMS && n_args != 1)) return QMX_ERR_PARSE;
        if (n_args == 1) {
            if (!(a[0] > 0.0f)) return QMX_ERR_PARSE;
            c.clip = a[0];
        }
    } else if (qmx__cb_word(s, flen[0], "fixed")) {
        c.method = QMX_CALIB_FIXED;
        if (n_args == 1) {
            if (!(a[0] > 0.0f)) return QMX_ERR_PARSE;
            c.lo = -a[0]; c.hi = a[0];
        } else if (n_args == 2) {
            if (!(a[0] <= 0.0f && a[1] >= 0.0f && a[0] < a[1])) return QMX_ERR_PARSE;
            c.lo = a[0]; c.hi = a[1];
        } else {
            return QMX_ERR_PARSE;
        }
    } else {
        return QMX_ERR_PARSE;
    }
    *out = c;
    return QMX_OK;
}

/* ---- C4b. PyTorch-compatible histogram observer ---- */
/* Soft double: (-1)^neg * m * 2^e with m == 0 or 2^52 <= m < 2^53 and an unbounded exponent.
 * torch does part of this observer in float64 (cumsum, Python floats); qmx rounds every such
 * step to nearest-even with integers, so x87 (double rounding) and soft-float targets give the
 * same bits as SSE2. The values met here never come near double's subnormal or overflow range,
 * where the unbounded exponent would differ from IEEE. */
typedef struct qmx__cb_dbl { uint64_t m; int e; int neg; } qmx__cb_dbl;

static int qmx__cb_bitlen(uint64_t v) {
    int n = 0, k;
    for (k = 32; k; k >>= 1)
        if (v >> k) { v >>= k; n += k; }
    return n + (int)v;
}
/* v = X * 2^e (X > 0, any sticky bit below the rounding position already ORed into bit 0),
 * rounded to 53 bits, nearest-even */
static qmx__cb_dbl qmx__cb_dpack(int neg, uint64_t X, int e) {
    qmx__cb_dbl r;
    int L = qmx__cb_bitlen(X);
    r.neg = neg;
    if (X == 0) { r.m = 0; r.e = 0; r.neg = 0; return r; }
    if (L <= 53) { r.m = X << (53 - L); r.e = e - (53 - L); return r; }
    {
        int sh = L - 53;
        uint64_t m = X >> sh, rem = X & (((uint64_t)1 << sh) - 1), half = (uint64_t)1 << (sh - 1);
        if (rem > half || (rem == half && (m & 1))) m++;
        if (m == ((uint64_t)1 << 53)) { m >>= 1; sh++; }
        r.m = m; r.e = e + sh;
    }
    return r;
}
static qmx__cb_dbl qmx__cb_dfromf(float f) {
    uint32_t b = qmx__f32_bits(f), E = (b >> 23) & 0xFFu, F = b & 0x7FFFFFu;
    if (E == 0) return qmx__cb_dpack((int)(b >> 31), F, -149);
    return qmx__cb_dpack((int)(b >> 31), F | 0x800000u, (int)E - 150);
}
static qmx__cb_dbl qmx__cb_dfromu(uint64_t v) { return qmx__cb_dpack(0, v, 0); } /* v < 2^53 */
static int qmx__cb_dmag_lt(qmx__cb_dbl a, qmx__cb_dbl b) {   /* |a| < |b| */
    if (a.m == 0) return b.m != 0;
    if (b.m == 0) return 0;
    return a.e < b.e || (a.e == b.e && a.m < b.m);
}
/* a + b for nonzero a, b as X * 2^*e with the sign returned: X < 2^63 carries 9 guard bits
 * and a sticky bit in bit 0, enough to round correctly to 53 bits or fewer */
static int qmx__cb_dsum(qmx__cb_dbl a, qmx__cb_dbl b, uint64_t *X, int *e) {
    uint64_t A, B;
    int d;
    if (qmx__cb_dmag_lt(a, b)) { qmx__cb_dbl t = a; a = b; b = t; }
    A = a.m << 9;                       /* 9 guard bits; B keeps a sticky bit below them */
    d = a.e - b.e;
    if (d >= 62) B = 1;
    else {
        B = b.m << 9;
        B = (B >> d) | ((B & (((uint64_t)1 << d) - 1)) != 0);
    }
    *X = a.neg == b.neg ? A + B : A - B;          /* exact cancellation gives 0 */
    *e = a.e - 9;
    return a.neg;
}
static qmx__cb_dbl qmx__cb_dadd(qmx__cb_dbl a, qmx__cb_dbl b) {
    uint64_t X;
    int e, neg;
    if (b.m == 0) return a.m == 0 ? qmx__cb_dpack(0, 0, 0) : a;
    if (a.m == 0) return b;
    neg = qmx__cb_dsum(a, b, &X, &e);
    return qmx__cb_dpack(neg, X, e);              /* X == 0 gives +0 */
}
static qmx__cb_dbl qmx__cb_dneg(qmx__cb_dbl a) { if (a.m) a.neg = !a.neg; return a; }
static qmx__cb_dbl qmx__cb_dmul(qmx__cb_dbl a, qmx__cb_dbl b) {
    uint64_t hi, lo, X;
    int L, s;
    if (a.m == 0 || b.m == 0) return qmx__cb_dpack(0, 0, 0);
    qmx__cb_mul128(a.m, b.m, &hi, &lo);            /* 105 or 106 bits */
    L = 64 + qmx__cb_bitlen(hi);
    s = L - 62;                                    /* keep 62 bits, the rest as sticky */
    X = (hi << (64 - s)) | (lo >> s);
    X |= (lo & (((uint64_t)1 << s) - 1)) != 0;
    return qmx__cb_dpack(a.neg ^ b.neg, X, a.e + b.e + s);
}
/* |a| / |b| * 2^-(a.e - b.e - 62) for a.m, b.m != 0: floor(a.m * 2^62 / b.m) >= 2^61 with a
 * sticky bit in bit 0 */
static uint64_t qmx__cb_dquot(qmx__cb_dbl a, qmx__cb_dbl b) {
    uint64_t r = a.m, q = 0;
    int i;
    for (i = 0; i < 63; i++) {
        q <<= 1;
        if (r >= b.m) { r -= b.m; q |= 1; }
        r <<= 1;
    }
    return q | (r != 0);
}
static qmx__cb_dbl qmx__cb_ddiv(qmx__cb_dbl a, qmx__cb_dbl b) {   /* b != 0 */
    if (a.m == 0) return qmx__cb_dpack(0, 0, 0);
    return qmx__cb_dpack(a.neg ^ b.neg, qmx__cb_dquot(a, b), a.e - b.e - 62);
}
static int qmx__cb_dlt(qmx__cb_dbl a, qmx__cb_dbl b) {   /* a < b */
    if (a.m == 0 && b.m == 0) return 0;
    if (a.neg != b.neg) return a.neg;
    return a.neg ? qmx__cb_dmag_lt(b, a) : qmx__cb_dmag_lt(a, b);
}
/* round to float32, nearest-even (subnormals, overflow to Inf) */
static float qmx__cb_dtof(qmx__cb_dbl a) {
    int E = a.e + 52, sh;
    uint64_t f, rem, half;
    uint32_t bits, sign = (uint32_t)a.neg << 31;
    if (a.m == 0) return 0.0f;
    if (E > 128) return qmx__bits_f32(sign | 0x7F800000u);
    sh = E >= -126 ? 29 : 29 + (-126 - E);
    if (sh > 54) return qmx__bits_f32(sign);
    f = a.m >> sh; rem = a.m & (((uint64_t)1 << sh) - 1); half = (uint64_t)1 << (sh - 1);
    if (rem > half || (rem == half && (f & 1))) f++;
    if (E >= -126) bits = ((uint32_t)(E + 127) << 23) + (uint32_t)(f - 0x800000u);
    else bits = (uint32_t)f;
    if (bits >= 0x7F800000u) bits = 0x7F800000u;
    return qmx__bits_f32(sign | bits);
}

/* (-1)^neg * X * 2^e (X < 2^64, any sticky bit ORed into bit 0) rounded once to float32,
 * nearest-even, with subnormals and overflow to Inf: a single rounding where a soft double
 * and then float would round twice */
static float qmx__cb_xtof(int neg, uint64_t X, int e) {
    int L, lsb, sh;
    uint64_t f, rem, half;
    uint32_t bits, sign = (uint32_t)neg << 31;
    if (X == 0) return qmx__bits_f32(sign);
    L = qmx__cb_bitlen(X);
    if (e + L - 1 > 127) return qmx__bits_f32(sign | 0x7F800000u);
    lsb = e + L - 24;                                   /* weight of the last kept bit */
    if (lsb < -149) lsb = -149;
    sh = lsb - e;
    if (sh <= 0) f = X << -sh;                          /* exact: at most 24 bits */
    else if (sh > 64) f = 0;                            /* below half the smallest subnormal */
    else {
        f = sh == 64 ? 0 : X >> sh;
        rem = sh == 64 ? X : X & (((uint64_t)1 << sh) - 1);
        half = (uint64_t)1 << (sh - 1);
        if (rem > half || (rem == half && (f & 1))) f++;
    }
    bits = ((uint32_t)(lsb + 149) << 23) + (uint32_t)f;  /* normal, subnormal and carry alike */
    if (bits >= 0x7F800000u) bits = 0x7F800000u;
    return qmx__bits_f32(sign | bits);
}
/* fmaf(a, b, c) for finite a, b, c: a * b + c rounded once (the product is exact in a soft
 * double), on every target */
static float qmx__cb_fmaf(float a, float b, float c) {
    qmx__cb_dbl p = qmx__cb_dmul(qmx__cb_dfromf(a), qmx__cb_dfromf(b)), q = qmx__cb_dfromf(c);
    uint64_t X;
    int e, neg;
    if (p.m == 0) return q.m == 0 ? a * b + c : c;   /* zeros: the IEEE sign rules */
    if (q.m == 0) return qmx__cb_dtof(p);
    neg = qmx__cb_dsum(p, q, &X, &e);
    return qmx__cb_xtof(X ? neg : 0, X, e);
}

/* Python's int(x) of a finite float (toward zero), as a float; +0 for zero */
static float qmx__cb_truncf(float x) {
    if (!(qmx__fabs(x) < 8388608.0f)) return x;
    return (float)(int32_t)x;
}

/* torch.histc(x, bins, min=lo, max=hi) on CPU, float32, torch 1.13 with the AVX2 kernels
 * (histogramdd_cpu_contiguous, LINEAR_INTERPOLATION, no local search). The range is [lo, hi]
 * as doubles; lo == hi takes the batch's min / max, still equal widens by 1 each way (double).
 * The edges are linspace(lo_f, hi_f, bins + 1) (lo_f, hi_f the float32 roundings), of which
 * histc reads the first (lo_f) and the last, R: linspace's vectorised loop writes blocks of
 * 2 x 8 floats, and when bins + 1 is a multiple of 16 the last edge is lane 7 of a vector
 * based 7 steps before the end, R = fl(fma(-step, 7, hi_f) + fl(7 * step)) with step =
 * fl(fl(hi_f - lo_f) / bins) (GCC contracts the base into an FMA, not the lane), which can be
 * hi_f +- 1 ulp; otherwise R = hi_f (the scalar tail). (One thread, or bins + 1 <= 32768: beyond
 * torch's grain size several threads split linspace into other blocks.) x outside [lo_f, R]
 * is not counted; the bin is (int64)(((x - lo_f) / (R - lo_f)) * bins), divide first, each
 * step one float32 operation, the last edge counted in the last bin. Adds the counts to out.
 * The FMA and the step division are exact soft-double roundings (x87 would round a subnormal
 * quotient twice); the other steps are exact or correctly rounded in float32 everywhere. */
/* The edges and width once per call (qmx__cb_histc_setup), then the bin of each element
 * (qmx__cb_histc_bin, nb for "not counted"): one expression for the serial count and the
 * executor's per-worker counts. */
typedef struct qmx__cb_hc { float lof, hif, w, fnb; size_t nb; } qmx__cb_hc;
QMX__CB_NOFMA
static void qmx__cb_histc_setup(qmx__cb_hc *c, size_t nb, float lo, float hi, float bmin,
                                float bmax) {
    QMX__CB_PRAGMA_NOFMA
    float lof, hif, w, fnb = (float)nb;
    if (lo == hi) { lo = bmin; hi = bmax; }
    if (lo == hi) {
        qmx__cb_dbl one = qmx__cb_dfromu(1);
        lof = qmx__cb_dtof(qmx__cb_dadd(qmx__cb_dfromf(lo), qmx__cb_dneg(one)));
        hif = qmx__cb_dtof(qmx__cb_dadd(qmx__cb_dfromf(hi), one));
    } else { lof = lo; hif = hi; }
    w = hif - lof;
    if ((nb + 1) % 16 == 0 && w > 0.0f && qmx__isfinite(w)) {
        /* linspace's last edge from its vector path: step = w / bins rounded once */
        qmx__cb_dbl wd = qmx__cb_dfromf(w), nd = qmx__cb_dfromu(nb);
        float step = qmx__cb_xtof(0, qmx__cb_dquot(wd, nd), wd.e - nd.e - 62), base, t;
        base = qmx__cb_fmaf(-step, 7.0f, hif);
        t = 7.0f * step;
        QMX__CB_OPAQUE(t);                            /* the lane is not an FMA */
        hif = base + t;
        w = hif - lof;
    }
    c->lof = lof; c->hif = hif; c->w = w; c->fnb = fnb; c->nb = nb;
}
QMX__CB_NOFMA
static size_t qmx__cb_histc_bin(const qmx__cb_hc *c, float v) {
    QMX__CB_PRAGMA_NOFMA
    float t;
    if (!(v >= c->lof && v <= c->hif)) return c->nb;   /* not counted */
    if (!(c->w > 0.0f)) return 0;                      /* torch: NaN index (|x| >= 2^24) */
    t = v - c->lof;
    t = t / c->w;
    t = t * c->fnb;
    /* 0 <= t <= nb, unless v - lof overflowed (a range near FLT_MAX: Inf / Inf = NaN): that
     * counts in the last bin instead of converting out of range */
    return t < c->fnb ? (size_t)t : c->nb - 1;
}
QMX__CB_NOFMA   /* as qmx__cb_histc_bin: GCC inlines only between equal optimize attributes */
static void qmx__cb_histc(const float *x, size_t n, size_t nb, float lo, float hi, float bmin,
                          float bmax, float *out) {
    QMX__CB_PRAGMA_NOFMA
    qmx__cb_hc c;
    size_t i;
    qmx__cb_histc_setup(&c, nb, lo, hi, bmin, bmax);
    for (i = 0; i < n; i++) {
        size_t b = qmx__cb_histc_bin(&c, x[i]);
        if (b < nb) out[b] += 1.0f;
    }
}

/* the sizes that init accepts */
static int qmx__cb_th_ok(const qmx_torch_histogram *h) {
    uint32_t u = h->upsample_rate;
    return h->n_bins >= 2 && h->n_bins <= ((size_t)1 << 20) && u >= 1 && u <= 65536u &&
           (u & (u - 1)) == 0 && (uint64_t)h->n_bins * u <= ((uint64_t)1 << 24);
}
/* refuse only what no data can produce (caller-corrupted): sizes init refuses or min > max are
 * QMX_ERR_ARG; NaN / Inf in min, max, max - min or a count is QMX_ERR_NONFINITE (update never
 * stores one from data). Any finite count is accepted, negative ones included: torch's combine
 * leaves small negative counts (the float32 rounding of its cumsum, see TORCH HISTOGRAM), and
 * no finite lower limit covers every reachable state (the deficit grows with the total and
 * with each further growth). O(n_bins). */
QMX__CB_NOFMA
static qmx_status qmx__cb_th_state(const qmx_torch_histogram *h) {
    QMX__CB_PRAGMA_NOFMA
    size_t i;
    float span;
    if (!qmx__cb_th_ok(h)) return QMX_ERR_ARG;
    if (!h->seen) return QMX_OK;
    span = h->max_val - h->min_val;
    if (!(qmx__isfinite(h->min_val) && qmx__isfinite(h->max_val))) return QMX_ERR_NONFINITE;
    if (!(h->min_val <= h->max_val)) return QMX_ERR_ARG;
    if (!qmx__isfinite(span)) return QMX_ERR_NONFINITE;
    for (i = 0; i < h->n_bins; i++) {
        float c = h->bins[i];
        if (!qmx__isfinite(c)) return QMX_ERR_NONFINITE;
    }
    return QMX_OK;
}

QMX__DEF size_t qmx_torch_histogram_buffer_size(size_t n_bins) {
    return (n_bins >= 2 && n_bins <= ((size_t)1 << 20)) ? 2 * n_bins : 0;
}

QMX__DEF qmx_status qmx_torch_histogram_init(qmx_torch_histogram *h, float *buf, size_t buf_len,
                                             size_t n_bins, uint32_t upsample_rate) {
    qmx_torch_histogram t;
    size_t i;
    if (!h || !buf) return QMX_ERR_NULL;
    t.n_bins = n_bins; t.upsample_rate = upsample_rate; t.seen = 0;
    if (n_bins < 2 || n_bins > ((size_t)1 << 20)) return QMX_ERR_SIZE;
    if (!qmx__cb_th_ok(&t)) return QMX_ERR_ARG;
    if (buf_len < 2 * n_bins) return QMX_ERR_BUFFER_TOO_SMALL;
    for (i = 0; i < 2 * n_bins; i++) buf[i] = 0.0f;
    t.bins = buf; t.work = buf + n_bins;
    t.min_val = 0.0f; t.max_val = 0.0f; t.seen = 0;
    *h = t;
    return QMX_OK;
}

/* The batch's histc over [lo, hi] into out (n_bins floats, zeroed first): serially (par NULL)
 * or through the executor of qmx_torch_histogram_update_exec. */
typedef struct qmx__cb_thpar {
    const qmx_executor *ex;
    uint64_t *wb;   /* workers x n_bins counts */
} qmx__cb_thpar;
static void qmx__cb_th_count(const qmx__cb_thpar *par, const float *x, size_t n, size_t nb,
                             float lo, float hi, float bmin, float bmax, float *out);

/* HistogramObserver.forward after the checks, given the batch's (finite) min and max; every
 * error returns before anything is written */
QMX__CB_NOFMA
static qmx_status qmx__cb_th_forward(qmx_torch_histogram *h, const float *x, size_t n, float mn,
                                     float mx, const qmx__cb_thpar *par) {
    QMX__CB_PRAGMA_NOFMA
    float cmin, cmax, hbw, t, span, q, e;
    size_t nb, k;
    uint64_t D, s, U;
    nb = h->n_bins;
    U = h->upsample_rate;
    if (!h->seen || h->min_val == h->max_val) {
        /* first batch, or every value so far equal: torch restarts from this batch. A range
         * beyond FLT_MAX (max - min = Inf) would poison every later step: rejected */
        span = mx - mn;
        if (!qmx__isfinite(span)) return QMX_ERR_NONFINITE;
        qmx__cb_th_count(par, x, n, nb, qmx__cb_truncf(mn), qmx__cb_truncf(mx), mn, mx, h->bins);
        h->min_val = mn; h->max_val = mx; h->seen = 1;
        return QMX_OK;
    }
    /* _adjust_min_max, float32 tensor arithmetic */
    cmin = mn < h->min_val ? mn : h->min_val;
    cmax = mx > h->max_val ? mx : h->max_val;
    t = h->max_val - h->min_val;
    hbw = t / (float)((uint64_t)nb * U);              /* exact divisor: <= 2^24 */
    t = (float)nb * hbw;
    span = cmax - cmin;
    if (!qmx__isfinite(span)) return QMX_ERR_NONFINITE;
    if (!(t > 0.0f)) return QMX_ERR_SIZE;             /* torch: int(inf) fails */
    q = span / t;
    if (!(q <= 4294967296.0f)) return QMX_ERR_SIZE;    /* torch could not allocate bins * D */
    D = (uint64_t)q;
    if ((float)D < q) D++;                            /* ceil */
    if (D == 0) D = 1;
    e = (float)D * t;
    QMX__CB_OPAQUE(e);
    e = e - span;
    cmax = cmax + e;
    if (!qmx__isfinite(cmax)) return QMX_ERR_NONFINITE;
    t = cmax - cmin;                                  /* the relaxed range stays finite */
    if (!qmx__isfinite(t)) return QMX_ERR_NONFINITE;
    t = h->min_val - cmin;
    t = t / hbw;                                      /* >= 0, <= ~ nb * D * U */
    {   /* torch.round: half to even */
        float fl = (float)(uint64_t)t, fr = t - fl;
        s = (uint64_t)t;
        if (fr > 0.5f || (fr == 0.5f && (s & 1))) s++;
    }
    /* the batch's histogram over the truncated combined range, into work */
    qmx__cb_th_count(par, x, n, nb, qmx__cb_truncf(cmin), qmx__cb_truncf(cmax), mn, mx,
                     h->work);
    if (cmin == h->min_val && cmax == h->max_val) {
        for (k = 0; k < nb; k++) h->bins[k] = h->work[k] + h->bins[k];
    } else {
        /* _combine_histograms without the nb * D array: old bin j repeated U times sits at
         * positions [s + jU, s + (j+1)U) (clipped at nb * D, where torch would raise); new bin
         * k ends at position (k+1)D; I(k) is the sequential float64 cumsum up to there,
         * interpolated[k] = float((I(k) - float(I(k-1))) / U) (torch stores the shifted
         * cumsum in a float32 tensor). The old histogram is swapped into work first. */
        qmx__cb_dbl acc = qmx__cb_dpack(0, 0, 0);
        uint64_t pos = s, pend = s + (uint64_t)nb * U, rep = 0, ndw = (uint64_t)nb * D;
        size_t j = 0;
        float prev = 0.0f;
        int lu = qmx__cb_bitlen(U) - 1;
        if (pend > ndw) pend = ndw;
        for (k = 0; k < nb; k++) { float a = h->bins[k]; h->bins[k] = h->work[k]; h->work[k] = a; }
        for (k = 0; k < nb; k++) {
            uint64_t P = (uint64_t)(k + 1) * D;
            qmx__cb_dbl d;
            float interp;
            while (pos < P && pos < pend) {
                uint64_t lim = P < pend ? P : pend, c = lim - pos, r;
                if (c > U - rep) c = U - rep;
                if (h->work[j] != 0.0f) {
                    qmx__cb_dbl v = qmx__cb_dfromf(h->work[j]);
                    for (r = 0; r < c; r++) acc = qmx__cb_dadd(acc, v);
                }
                pos += c; rep += c;
                if (rep == U) { rep = 0; j++; }
            }
            d = qmx__cb_dadd(acc, qmx__cb_dneg(qmx__cb_dfromf(prev)));
            if (d.m) d.e -= lu;                           /* / U, exact (power of two) */
            interp = qmx__cb_dtof(d);
            prev = qmx__cb_dtof(acc);
            h->bins[k] = h->bins[k] + interp;
        }
    }
    h->min_val = cmin; h->max_val = cmax;
    return QMX_OK;
}

QMX__DEF qmx_status qmx_torch_histogram_update(qmx_torch_histogram *h, const float *x, size_t n) {
    float mn, mx;
    qmx_status st;
    if (!h || !x || !h->bins || !h->work) return QMX_ERR_NULL;
    if (n == 0) return QMX_ERR_SIZE;
    st = qmx__cb_th_state(h);
    if (st != QMX_OK) return st;
    if (qmx__cb_minmax(x, n, &mn, &mx) >= 0x7F800000u) return QMX_ERR_NONFINITE;
    return qmx__cb_th_forward(h, x, n, mn, mx, NULL);
}

/* ---- several cores: histc counted per worker, added in worker order (USING SEVERAL CORES) ---- */
typedef struct qmx__cb_thc_job {
    const float *x;
    size_t n, nt;
    uint64_t *wb;   /* workers x nb counts */
    qmx__cb_hc c;
    int workers;
} qmx__cb_thc_job;
QMX__CB_NOFMA
static void qmx__cb_thc_task(void *arg, int task, int worker) {
    QMX__CB_PRAGMA_NOFMA
    const qmx__cb_thc_job *j = (const qmx__cb_thc_job *)arg;
    qmx__cb_hc c = j->c;   /* a local copy: the counts cannot alias it */
    uint64_t *cnt;
    size_t e0, e1, i;
    /* outside the executor contract: nothing to count it with */
    if (task < 0 || (size_t)task >= j->nt || worker < 0 || worker >= j->workers) return;
    e0 = (size_t)task * QMX_TASK_ELEMS;
    e1 = j->n - e0 < QMX_TASK_ELEMS ? j->n : e0 + QMX_TASK_ELEMS;
    cnt = j->wb + (size_t)worker * c.nb;
    for (i = e0; i < e1; i++) {
        size_t b = qmx__cb_histc_bin(&c, j->x[i]);
        if (b < c.nb) cnt[b]++;
    }
}
static void qmx__cb_th_count(const qmx__cb_thpar *par, const float *x, size_t n, size_t nb,
                             float lo, float hi, float bmin, float bmax, float *out) {
    qmx__cb_thc_job j;
    size_t k, w, nt = n / QMX_TASK_ELEMS + (n % QMX_TASK_ELEMS != 0);
    if (!par || nt == 1) {   /* the serial count: + 1.0f per element */
        for (k = 0; k < nb; k++) out[k] = 0.0f;
        qmx__cb_histc(x, n, nb, lo, hi, bmin, bmax, out);
        return;
    }
    j.x = x; j.n = n; j.nt = nt; j.wb = par->wb; j.workers = par->ex->workers;
    qmx__cb_histc_setup(&j.c, nb, lo, hi, bmin, bmax);
    for (k = 0; k < (size_t)j.workers * nb; k++) j.wb[k] = 0;
    par->ex->parallel_for(par->ex->pool, (int)nt, qmx__cb_thc_task, &j);
    for (k = 0; k < nb; k++) {
        uint64_t c = 0;
        for (w = 0; w < (size_t)j.workers; w++) c += j.wb[w * nb + k];
        /* the serial count adds 1.0f from 0: exact up to 2^24, where 2^24 + 1 rounds back to
         * 2^24 (ties to even) and stays: the integer count, saturated at 2^24 */
        out[k] = c < 16777216u ? (float)c : 16777216.0f;
    }
}
QMX__DEF qmx_status qmx_torch_histogram_exec_workspace_size(size_t n_bins,
                                                            const qmx_executor *executor,
                                                            size_t *bytes) {
    return qmx__cb_hist_ws(n_bins, 2, executor, bytes);
}
QMX__DEF qmx_status qmx_torch_histogram_update_exec(qmx_torch_histogram *h, const float *x,
                                                    size_t n, const qmx_executor *executor,
                                                    void *workspace, size_t workspace_bytes) {
    qmx__cb_thpar par;
    float mn = 0.0f, mx = 0.0f;
    qmx_status st;
    if (qmx__cb_par_serial(executor)) return qmx_torch_histogram_update(h, x, n);
    if (!h || !x || !h->bins || !h->work) return QMX_ERR_NULL;   /* the serial call's checks */
    if (n == 0) return QMX_ERR_SIZE;
    st = qmx__cb_th_state(h);
    if (st != QMX_OK) return st;
    st = qmx__cb_hist_exec_check(n, h->n_bins, 2, executor, workspace, workspace_bytes);
    if (st != QMX_OK) return st;
    if (qmx__cb_minmax_exec(x, n, executor, &mn, &mx) >= 0x7F800000u) return QMX_ERR_NONFINITE;
    par.ex = executor; par.wb = (uint64_t *)workspace;
    return qmx__cb_th_forward(h, x, n, mn, mx, &par);
}

/* floor(a / b) clamped to [0, hi] for finite float32 a and b > 0, exactly (torch's
 * div(rounding_mode='floor') equals the exact floor here: its rounding error is far below 1/2) */
static float qmx__cb_floordiv_clamp(float a, float b, int hi) {
    uint32_t ba = qmx__f32_bits(a), bb = qmx__f32_bits(b), Ea, Eb;
    uint64_t ma, mb, qv;
    int d;
    if (!(a > 0.0f)) return 0.0f;
    Ea = (ba >> 23) & 0xFFu; Eb = (bb >> 23) & 0xFFu;
    ma = (ba & 0x7FFFFFu) | (Ea ? 0x800000u : 0); mb = (bb & 0x7FFFFFu) | (Eb ? 0x800000u : 0);
    d = (int)(Ea ? Ea : 1) - (int)(Eb ? Eb : 1);       /* a / b = ma / mb * 2^d */
    if (d > 9 + 24) return (float)hi;                  /* a / b >= 2^9 > hi */
    if (d >= 0) qv = (ma << d) / mb;
    else if (d > -40) qv = ma / (mb << -d);
    else qv = 0;
    return qv > (uint64_t)hi ? (float)hi : (float)qv;
}

/* _compute_quantization_error(start, end): float32 tensor arithmetic per bin as torch, the
 * Python-float parts (bin_width, dst_bin_width) in soft double; the sum over bins is the
 * float64 sequential sum rounded to float32 (torch's float32 cascade sum may differ in the
 * last bits). */
QMX__CB_NOFMA
static float qmx__cb_th_error(const qmx_torch_histogram *h, size_t sb, size_t eb) {
    QMX__CB_PRAGMA_NOFMA
    qmx__cb_dbl bwd, dst, half_d;
    float bwf, dstf, half, c, c3, n2base0;
    qmx__cb_dbl acc = qmx__cb_dpack(0, 0, 0);
    size_t i, nb = h->n_bins;
    const float *hist = h->bins;
    bwd = qmx__cb_dadd(qmx__cb_dfromf(h->max_val), qmx__cb_dneg(qmx__cb_dfromf(h->min_val)));
    bwd = qmx__cb_ddiv(bwd, qmx__cb_dfromu(nb));
    dst = qmx__cb_dmul(bwd, qmx__cb_dfromu((uint64_t)(eb - sb + 1)));
    if (dst.m) dst.e -= 8;                            /* / dst_nbins = 256 */
    if (dst.m == 0) return 0.0f;
    half_d = dst; half_d.e -= 1;
    bwf = qmx__cb_dtof(bwd); dstf = qmx__cb_dtof(dst); half = qmx__cb_dtof(half_d);
    if (!(dstf > 0.0f)) return 0.0f;                  /* below float32: torch divides by 0 */
    c = half * half; c = c * half; QMX__CB_OPAQUE(c);                  /* (dst/2)^3; (-dst/2)^3 = -c */
    c3 = c + c; c3 = c3 / 3.0f;                       /* _get_norm(-dst/2, dst/2) / density */
    n2base0 = c3;
    for (i = 0; i < nb; i++) {
        float sbb, sbe, kb, ke, db, de, dens, t1, t2, norm, coef, ec;
        if (i >= sb) sbb = (float)(i - sb); else sbb = -(float)(sb - i);
        sbb = sbb * bwf; QMX__CB_OPAQUE(sbb);
        sbe = sbb + bwf;
        kb = qmx__cb_floordiv_clamp(sbb, dstf, 255);
        ke = qmx__cb_floordiv_clamp(sbe, dstf, 255);
        dens = hist[i] / bwf;
        /* norm = density * (half^3 - db^3) / 3 */
        t1 = kb + 0.5f; t1 = t1 * dstf; QMX__CB_OPAQUE(t1);
        db = sbb - t1;
        t2 = db * db; t2 = t2 * db; QMX__CB_OPAQUE(t2);
        t1 = c - t2; t1 = t1 / 3.0f;
        t1 = dens * t1; QMX__CB_OPAQUE(t1);
        norm = 0.0f + t1;
        /* + (ke - kb - 1) * density * (2 c / 3) */
        coef = ke - kb; coef = coef - 1.0f;
        t1 = dens * n2base0;
        t1 = coef * t1; QMX__CB_OPAQUE(t1);
        norm = norm + t1;
        /* + density * (de^3 - (-half)^3) / 3, de = src_end - (ke * dst + half) */
        ec = ke * dstf; QMX__CB_OPAQUE(ec);
        ec = ec + half;
        de = sbe - ec;
        t2 = de * de; t2 = t2 * de; QMX__CB_OPAQUE(t2);
        t1 = t2 + c; t1 = t1 / 3.0f;
        t1 = dens * t1; QMX__CB_OPAQUE(t1);
        norm = norm + t1;
        if (norm != 0.0f) acc = qmx__cb_dadd(acc, qmx__cb_dfromf(norm));
    }
    return qmx__cb_dtof(acc);
}

QMX__CB_NOFMA
QMX__DEF qmx_status qmx_torch_histogram_qparams(const qmx_torch_histogram *h, qmx_dtype dtype,
                                                int symmetric, int reduce_range,
                                                int32_t quant_min, int32_t quant_max,
                                                float *scale, int32_t *zero_point,
                                                float *new_min, float *new_max) {
    QMX__CB_PRAGMA_NOFMA
    int32_t qmin, qmax, zp = 0;
    int custom = quant_min != 0 || quant_max != 0;
    float bw, nmin, nmax, s, mneg, mpos;
    size_t nb, i;
    if (!h || !scale || !zero_point || !h->bins || !h->work) return QMX_ERR_NULL;
    if (dtype != QMX_UINT8 && dtype != QMX_INT8) return QMX_ERR_DTYPE;
    if ((symmetric != 0 && symmetric != 1) || (reduce_range != 0 && reduce_range != 1))
        return QMX_ERR_ARG;
    if (custom) {   /* torch's _validate_qmin_qmax and calculate_qmin_qmax */
        if (!(quant_min <= 0 && 0 <= quant_max && quant_min < quant_max)) return QMX_ERR_ARG;
        if ((int64_t)quant_max - quant_min + 1 > 256) return QMX_ERR_ARG;
        qmin = quant_min; qmax = quant_max;
        if (reduce_range) {   /* Python // floors */
            qmin = qmin >= 0 ? qmin / 2 : -((-qmin + 1) / 2);
            qmax = qmax / 2;
        }
    } else if (dtype == QMX_INT8) { qmin = reduce_range ? -64 : -128; qmax = reduce_range ? 63 : 127; }
    else { qmin = 0; qmax = reduce_range ? 127 : 255; }
    {
        qmx_status st = qmx__cb_th_state(h);          /* also NaN / Inf in a corrupted state */
        if (st != QMX_OK) return st;
    }
    if (!h->seen) return QMX_ERR_SIZE;                /* torch warns and returns (1.0, 0) */
    nb = h->n_bins;
    bw = h->max_val - h->min_val;
    bw = bw / (float)nb;
    if (bw == 0.0f) {
        /* every candidate range is [min_val, min_val]: the search cannot move it */
        nmin = h->min_val + 0.0f; nmax = nmin;
    } else {
        /* _non_linear_param_search. cSum = float32(float64 sequential cumsum) -> work;
         * total = torch.sum(histogram) is taken as the last cSum (torch sums in float32 in
         * a vectorised order; the two agree for integer counts below 2^24) */
        qmx__cb_dbl acc = qmx__cb_dpack(0, 0, 0), alpha, beta, step, total;
        size_t sb = 0, eb = nb - 1;
        float norm_min = qmx__bits_f32(0x7F800000u);
        for (i = 0; i < nb; i++) {
            if (h->bins[i] != 0.0f) acc = qmx__cb_dadd(acc, qmx__cb_dfromf(h->bins[i]));
            h->work[i] = qmx__cb_dtof(acc);
        }
        total = qmx__cb_dfromf(h->work[nb - 1]);
        alpha = qmx__cb_dpack(0, 0, 0);
        beta = qmx__cb_dfromu(1);
        step.neg = 0; step.m = 0x14F8B588E368F1u; step.e = -69;   /* 1e-5 as a double */
        while (qmx__cb_dlt(alpha, beta)) {
            qmx__cb_dbl na = qmx__cb_dadd(alpha, step), nbt = qmx__cb_dadd(beta, qmx__cb_dneg(step));
            /* the Python-float thresholds meet float32 cSum: torch compares in float32 */
            float ta = qmx__cb_dtof(qmx__cb_dmul(na, total));
            float tb = qmx__cb_dtof(qmx__cb_dmul(nbt, total));
            size_t l = sb, r = eb, ns = sb, ne = eb;
            float norm;
            while (l < eb && h->work[l] < ta) l++;
            while (r > sb && h->work[r] > tb) r--;
            if (l - sb > eb - r) { ns = l; alpha = na; }
            else { ne = r; beta = nbt; }
            if (ns == sb && ne == eb) continue;
            norm = qmx__cb_th_error(h, ns, ne);
            if (norm > norm_min) break;
            norm_min = norm; sb = ns; eb = ne;
        }
        s = bw * (float)sb; QMX__CB_OPAQUE(s);
        nmin = h->min_val + s;
        s = bw * (float)(eb + 1); QMX__CB_OPAQUE(s);
        nmax = h->min_val + s;
    }
    /* _calculate_qparams (MinMaxObserver's formulas, float32) */
    mneg = nmin < 0.0f ? nmin : 0.0f;
    mpos = nmax > 0.0f ? nmax : 0.0f;
    if (symmetric) {
        float am = -mneg > mpos ? -mneg : mpos;
        s = am / ((float)(qmax - qmin) / 2.0f);
        int32_t sum = qmin + qmax;   /* Python // floors */
        zp = dtype == QMX_UINT8 ? (custom ? (sum >= 0 ? sum / 2 : -((-sum + 1) / 2)) : 128) : 0;
    } else {
        s = mpos - mneg;
        s = s / (float)(qmax - qmin);
    }
    /* before the eps clamp, which would turn a NaN scale into eps */
    if (!qmx__isfinite(s) || !qmx__isfinite(nmin) || !qmx__isfinite(nmax))
        return QMX_ERR_NONFINITE;
    {   /* torch.max(scale, eps = 2^-23); from bits: a decimal float constant can carry excess
         * precision on x87 */
        float eps = qmx__bits_f32(0x34000000u);
        if (!(s >= eps)) s = eps;
    }
    if (!symmetric) {
        float t = mneg / s;                                /* in [-(qmax - qmin), 0] */
        int32_t ri = (int32_t)t;
        float fr = t - (float)ri;
        if (fr < -0.5f || (fr == -0.5f && (ri & 1))) ri--;
        zp = qmin - ri;
        zp = zp < qmin ? qmin : zp > qmax ? qmax : zp;
    }
    *scale = s; *zero_point = zp;
    if (new_min) *new_min = nmin;
    if (new_max) *new_max = nmax;
    return QMX_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* QMX_IMPLEMENTATION */
