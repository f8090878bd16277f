#!/usr/bin/python3
"""gen_mx.py - golden data for microscaling (MX) and NVFP4 block formats: input floats, per-block
scale codes, element codes and dequantized floats, as each origin computes them.

Run from the repository root with Debian's python3 + numpy (no torch / jax / ml_dtypes needed):
    /usr/bin/python3 tests/gen/gen_mx.py          # rewrites tests/data/mx_golden.txt
    /usr/bin/python3 tests/gen/gen_mx.py --check  # regenerates in memory, diffs the file

Sources read (models written from them; no code copied):
  pytorch/ao @36027d82 (2026-08-21) torchao/prototype/mx_formats/{mx_tensor.py (to_mx,
      _to_mx_rceil, _f32_to_e8m0_rceil, _e8m0_scale_to_reciprocal_fp32, get_fp_scale, to_dtype),
      config.py (ScaleCalculationMode), constants.py, kernels.py, nvfp4_tensor.py (nvfp4_quantize,
      per_tensor_amax_to_scale, dequantize)}, torchao/prototype/custom_fp_utils.py
      (_f32_to_floatx_unpacked), torchao/testing/_mxfp8_test_utils.py and
      test/prototype/mx_formats/test_mx_tensor.py (test_to_mx_rceil): the expected values of the
      `src torchao_test` cases are transcribed from these two test files.
  google/qwix @aa623acb (2026-08-13) qwix/_src/core/qarray.py (calibrate,
      compute_scale_zero_point, quantize_with_scale_zero_point, dequantize), numerics.py
      (get_symmetric_bound, convert_to). JAX is not installed: implemented from the source, not run.
  microsoft/microxcaling @7bc41952 (2024-08-19) mx/mx_ops.py (_shared_exponents, _quantize_mx),
      mx/elemwise_ops.py (_quantize_elemwise_core, _round_mantissa), mx/formats.py.
  ggml-org/ggml @d99724f2 (2026-08-21) src/ggml-quants.c (quantize_row_mxfp4_ref,
      quantize_row_nvfp4_ref, best_index_mxfp4, dequantize_row_mxfp4/nvfp4), src/ggml-impl.h
      (ggml_e8m0_to_fp32_half, ggml_fp32_to_ue4m3, ggml_ue4m3_to_fp32), src/ggml-common.h
      (block_mxfp4, block_nvfp4, kvalues_fp4).
  The OCP MX v1.0 spec text was not available; OCP's rule is the one torchao FLOOR implements.
Cross-checks done when this data was made (scratch copies outside the repository, not needed to
regenerate): ggml's reference functions compiled with gcc 12 -O0/-O2/-O3 on x86-64 (glibc 2.36
log2f) reproduce every `ggml` case byte for byte; microxcaling's own _quantize_mx run under
torch 1.13 (CPU) reproduces every `microxcaling` y; the torchao model reproduces every
`torchao_test` expectation.

Notation: all arithmetic the origins do in float32 is done here in numpy float32 scalars, one
operation at a time in the origin's order; casts to element formats are exact (Fractions).
amax = max |x| over the block; E = the element format's emax (e4m3 8, e5m2 15, e2m3 2, e3m2 4,
e2m1 2, int8 0); M = its largest normal (448, 57344, 7.5, 28, 6; int8 127/64); mb = mantissa bits.
RNE = round to nearest, ties to even code; AWAY = ties away from zero; cast(t) saturates at +-M.
E8M0 code c means 2^(c-127) (c = 0 is 2^-127, 0xff NaN).

Formulas:
torchao MX (to_mx; block 32, the length must be a multiple of 32):
    amax NaN if any element is NaN. eb = the biased exponent field of amax, m = its mantissa field.
    floor: u = eb - 127 - E          ceil: u = eb - 127 + (m != 0) - E
    even:  amax' = bits(amax) + (1 << (22 - mb)) masked to 0xff800000 (round amax to mb bits,
           ties up), then floor on amax'; amax' may become +inf (amax >= 2^127 (2 - 2^-(mb+1)))
    c = clamp(u, -127, 128) + 127; c = 0xff when amax (amax' for even) is not finite.
    rceil: d = f32(amax * f32(1 / M)); c = biased exponent of d + (mantissa != 0) for normal d,
           + (mantissa > 0x400000) for subnormal d; 0xff for NaN / Inf d.
    r = 2^(127 - c) as float32 (c = 254: 2^-127 subnormal; c = 0xff: NaN); t = f32(x * r);
    e5m2 (floor/ceil/even): t = clamp(t, -M, M). Element: fp8 cast RNE saturating, NaN -> 0x7f
    (| sign of the NaN); fp6/fp4: _f32_to_floatx_unpacked bit algorithm (RNE, saturating; a NaN
    goes through its 'normal' branch: +NaN -> e2m1 0x3, e2m3 0x0c, e3m2 0x0e).
    In a block with c = 0xff every t is the quiet NaN of r (x86: a*b returns the NaN operand, a
    NaN x keeps its own), so every element of such a block gets the NaN code above.
    y = f32(v * 2^(c - 127)) (NaN for c = 0xff).
torchao NVFP4 (nvfp4_quantize; block 16): single level: b = f32(amax / 6);
    sc = e4m3_RNE(clamp(b, 2^-6, 448)) (NaN stays NaN -> 0x7f); s = decode(sc);
    t = f32(x * f32(1 / s)); t = clamp(t, -6, 6); element = _f32_to_floatx_unpacked(t).
    y = f32(v * s).  Two level (`t` line, P = f32(tensor_amax / 2688) unless stated):
    sc = e4m3_RNE(clamp(f32(b / P), 2^-6, 448)); t = f32(x * f32(f32(1 / P) / s));
    y = f32(v * f32(P * s)).
microxcaling MX (_quantize_mx, round="nearest", block 32, a ragged tail is zero-padded):
    u = floor(log2f(amax + 2^-126 * (amax == 0))) - E (float32 log2 correctly rounded here;
    NOTE a float32 log2 rounds up to the next integer for amax just below 2^k, |k| >= 3, and
    log2f(FLT_MAX) = 128); u > 127 or NaN -> scale NaN (0xff); u < -127 -> -127; c = u + 127.
    A = f32(x / 2^u); per element (floats): p = max(floor(log2f(|A| + (A == 0))), 2 - 2^(eb-1));
    q = f32(f32(A / 2^p) * 2^mb); q = sign(q) * floor(f32(|q| + 0.5)) (torch.sign(-0.0) = 0);
    v = clamp(f32(f32(q / 2^mb) * 2^p), -M, M); int8: q = f32(A * 64), v = clamp(round(q)/64).
    y = f32(v * 2^u). Codes are the element encodings of v (int8: v * 64 two's complement).
    microxcaling outputs only y: in a block with scale 0xff (NaN/Inf input) the element codes are
    not observable and are written 00 here (compare s and y only there).
Qwix MX ('mxfp8' block 32, 'mxfp8_16' block 16 -> e4m3; 'mxfp4' block 32 -> e2m1):
    s = f32(amax / Q) (Q = 448 or 6); s < 2^-63 (incl. amax 0) -> s = 1;
    s = f32(s * f32(C)) with C = 60/31 (mxfp8) or 12/7 (mxfp4); s = bf16_RNE(s) & 0x7f80
    (sign and mantissa cleared: a power of two; NaN -> +Inf). Written code: the exponent field
    (0xff for +Inf). t = f32(x / s); element = cast_RNE(clip(t, -M, M)) (NaN -> e4m3 0x7f | sign;
    e2m1 has no NaN: ml_dtypes' rule +NaN -> 0x8, -NaN -> 0x0 is assumed, XLA was not run).
    x86 convention for NaNs made by the division: Inf / Inf -> default NaN (sign set).
    y = f32(v * s) (Inf scale: 0 * Inf = NaN, v * Inf = +-Inf).
Qwix NVFP4 (block 16): s = f32(amax / 6); s < 2^-63 -> 1; sc = e4m3_RNE(clip(s, -448, 448))
    (subnormals kept; s < 2^-10 rounds to code 0 = scale 0); d = decode(sc); t = f32(x / d)
    (x / 0 = +-Inf); element = e2m1 RNE of clip(t, -6, 6); y = f32(v * d).
ggml MXFP4 (quantize_row_mxfp4_ref, block 32, length a multiple of 32):
    amax starts at 0 and is replaced only when amax < |x| (a NaN never enters; Inf does);
    c = amax > 0 ? (uint8_t)(floorf(log2f(amax)) - 2 + 127) : 0, the float -> uint8 cast as
    x86-64 gcc does it (via int32, low byte): negative values wrap (amax 2^-126 -> 0xff,
    2^-149 -> 0xe8), Inf -> 0x00. d = 2^(c - 128) (ggml_e8m0_to_fp32_half; c < 2: 2^-128 << c);
    element = first i in 0..15 minimising f32|f32(K[i] * d) - x| (strict <), K = 0 1 2 3 4 6 8 12
    0 -1 -2 -3 -4 -6 -8 -12 (= 2 x e2m1): ties go to the smaller magnitude, a rounded-to-zero
    negative gets code 0, NaN and +-Inf elements get code 0. y = f32(K[code] * d).
ggml NVFP4 (quantize_row_nvfp4_ref, block 64 = 4 x 16, one UE4M3 per 16):
    amax as above per 16; b = f32(amax / 6); ue = ggml_fp32_to_ue4m3(b): !(b > 0) -> 0;
    b > 448 -> 448; e = exponent(b) + 7; e <= 0: man = (int)f32(f32(b * 512) + 0.5), > 7 -> 7,
    < 1 -> 0; e >= 15 -> 0x7e (so every b in [256, 448] -> 448); else m = mantissa bits 22..20
    + bit 19 (round half up), carry into e (e >= 15 -> 0x7e). d = f32(decode(ue) * 0.5)
    (0x00 / 0x7f -> 0); element = best index as for MXFP4 with d; y = f32(K[code] * d).
"""
import math
import os
import random
import sys
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np

F = np.float32
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = "tests/gen/gen_mx.py"
getcontext().prec = 60
LN2 = Decimal(2).ln()
NAN = 0x7FC00000


def fb(u):
    """float32 from bit pattern"""
    return np.array([u & 0xFFFFFFFF], dtype=np.uint32).view(F)[0]


def bf(v):
    """bit pattern of a float32"""
    return int(np.array([v], dtype=F).view(np.uint32)[0])


def f32_round(q):
    """Fraction -> nearest float32 (ties to even), exact. Overflow -> inf."""
    if q == 0:
        return F(0.0)
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -126)                      # subnormals share the 2^-149 quantum
    quantum = Fraction(2) ** (e - 23)
    n = a / quantum
    fl = n.numerator // n.denominator
    rem = n - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1):
        fl += 1
    v = fl * quantum
    r = F(np.inf) if v >= Fraction(2) ** 128 else F(float(v))
    return -r if neg else r


def log2f(x):
    """correctly rounded float32 log2 of a positive finite float32"""
    d = Decimal(float(x)).ln() / LN2
    return f32_round(Fraction(d))


def is_neg(v):
    return bf(v) >> 31 == 1


# ---- element formats ------------------------------------------------------------------------
FMT = {  # name: (ebits, mbits, bias, kind, emax, max normal)
    "mxfp8_e4m3": (4, 3, 7, "fn", 8, 448.0),
    "mxfp8_e5m2": (5, 2, 15, "ieee", 15, 57344.0),
    "mxfp6_e2m3": (2, 3, 1, "none", 2, 7.5),
    "mxfp6_e3m2": (3, 2, 3, "none", 4, 28.0),
    "mxfp4": (2, 1, 1, "none", 2, 6.0),
    "nvfp4": (2, 1, 1, "none", 2, 6.0),
    "e4m3": (4, 3, 7, "fn", 8, 448.0),
}


def decode(code, fmt):
    """exact value (Fraction) of an element code; None for NaN, +-'inf' for Inf"""
    if fmt == "mxint8":
        return Fraction(code - 256 if code >= 128 else code, 64)
    eb, mb, bias, kind, _, _ = FMT[fmt]
    sgn = code >> (eb + mb) & 1
    a = code & ((1 << (eb + mb)) - 1)
    e, m = a >> mb, a & ((1 << mb) - 1)
    if kind == "fn" and a == (1 << (eb + mb)) - 1:
        return None
    if kind == "ieee" and e == (1 << eb) - 1:
        return None if m else ("-inf" if sgn else "inf")
    v = Fraction(m, 1 << mb) * Fraction(2) ** (1 - bias) if e == 0 else \
        (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
    return -v if sgn else v


def decode_f32(code, fmt):
    """float32 value of an element code (NaN / Inf / signed zero kept)"""
    v = decode(code, fmt)
    if v is None:
        return F(np.nan)
    if isinstance(v, str):
        return F(-np.inf) if v[0] == "-" else F(np.inf)
    r = F(float(v))
    if v == 0 and fmt != "mxint8" and code & sign_bit(fmt):
        r = F(-0.0)
    return r


_TAB = {}


def table(fmt):
    """sorted (value, code) of the finite non-negative codes"""
    if fmt not in _TAB:
        eb, mb = FMT[fmt][0], FMT[fmt][1]
        rows = []
        for c in range(1 << (eb + mb)):
            v = decode(c, fmt)
            if isinstance(v, Fraction):
                rows.append((v, c))
        rows.sort()
        _TAB[fmt] = rows
    return _TAB[fmt]


def sign_bit(fmt):
    eb, mb = FMT[fmt][0], FMT[fmt][1]
    return 1 << (eb + mb)


def cast(t, fmt, tie="even"):
    """float32 t -> element code: nearest, ties even / away, saturating at +-max. NaN -> None."""
    if np.isnan(t):
        return None
    neg = is_neg(t)
    tab = table(fmt)
    if np.isinf(t):
        c = tab[-1][1]
    else:
        a = abs(Fraction(float(t)))
        c = tab[-1][1]
        for (lo, clo), (hi, chi) in zip(tab, tab[1:]):
            if lo <= a <= hi:
                if a - lo < hi - a:
                    c = clo
                elif a - lo > hi - a:
                    c = chi
                elif tie == "away":
                    c = chi
                else:
                    c = clo if clo % 2 == 0 else chi
                break
    return c | (sign_bit(fmt) if neg else 0)


def torch_fp8_nan(t, fmt):
    return 0x7F | (0x80 if is_neg(t) else 0)


def torchao_floatx(t, fmt):
    """torchao custom_fp_utils._f32_to_floatx_unpacked on one float32 (fp6 / fp4)"""
    eb, mb = FMT[fmt][0], FMT[fmt][1]
    exp_bias = (1 << (eb - 1)) - 1
    max_int = (1 << (eb + mb)) - 1
    sign_mask = 1 << (eb + mb)
    magic = (1 << (23 - mb - 1)) - 1
    max_normal = 2.0 ** ((1 << eb) - 1 - exp_bias) * ((1 << (mb + 1)) - 1) / 2 ** mb
    min_normal = 2.0 ** (1 - exp_bias)
    denorm_exp = (127 - exp_bias) + (23 - mb) + 1
    denorm_int = denorm_exp << 23
    u = bf(t)
    sign = u & 0x80000000
    x = u ^ sign
    xf = fb(x)
    if xf >= F(max_normal):
        r = max_int
    elif xf < F(min_normal):
        r = (bf(F(xf + fb(denorm_int))) - denorm_int) & 0xFF
    else:                                   # normal branch (also NaN: no comparison holds)
        n = x + ((exp_bias - 127) << 23) + magic
        n += (x >> (23 - mb)) & 1
        r = (n >> (23 - mb)) & 0xFF
    return r | (sign_mask if sign else 0)


# ---- float32 helpers -------------------------------------------------------------------------
def p2(k):
    """2^k as float32 (k >= -149)"""
    return f32_round(Fraction(2) ** k)


def amax_nan(xs):
    """max |x|, NaN if any NaN (torch.amax / jnp.max / torch.max)"""
    m = F(0.0)
    for v in xs:
        if np.isnan(v):
            return F(np.nan)
        m = max(m, abs(v))
    return m


def blocks(n, bs):
    return [(i, min(i + bs, n)) for i in range(0, n, bs)]


# ---- torchao MX ------------------------------------------------------------------------------
def torchao_mx(x, fmt, rule):
    eb, mb, bias, kind, E, M = FMT[fmt]
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), 32):
        xs = x[lo:hi]
        amax = amax_nan(xs)
        if rule == "rceil":
            d = F(amax * F(1.0 / M))
            u = bf(d)
            ex, man = (u >> 23) & 0xFF, u & 0x7FFFFF
            c = 255 if not np.isfinite(d) else ex + ((man > 0x400000) if ex == 0 else (man != 0))
        else:
            a = amax
            if rule == "even" and not np.isnan(a):
                a = fb((bf(a) + (1 << (23 - mb - 1))) & 0xFF800000)
            u = bf(a)
            e = ((u >> 23) & 0xFF) - 127
            if rule == "ceil":
                e += (u & 0x7FFFFF) > 0
            c = min(max(e - E, -127), 128) + 127
            if not np.isfinite(a):
                c = 255
        S.append(c)
        r = F(np.nan) if c == 255 else p2(127 - c)
        for v in xs:
            if c == 255:
                t = v if np.isnan(v) else F(np.nan)      # quiet NaN, sign of the NaN operand
                t = fb(bf(t) | 0x00400000)
            else:
                t = F(v * r)
                if fmt == "mxfp8_e5m2" and rule != "rceil":
                    t = F(min(max(t, F(-M)), F(M)))
            if fmt in ("mxfp8_e4m3", "mxfp8_e5m2"):
                q = torch_fp8_nan(t, fmt) if np.isnan(t) else cast(t, fmt)
            else:
                q = torchao_floatx(t, fmt)
            Q.append(q)
            Y.append(F(np.nan) if c == 255 else F(decode_f32(q, fmt) * p2(c - 127)))
    return S, Q, Y


# ---- torchao NVFP4 ---------------------------------------------------------------------------
E4M3_TINY = F(2.0 ** -6)


def x86_mul(a, b):
    """float32 a * b, x86 NaN rule: the first NaN operand, quieted"""
    for v in (a, b):
        if np.isnan(v):
            return fb(bf(v) | 0x00400000)
    return F(a * b)


def x86_div(a, b):
    """float32 a / b with x86's NaN results: a NaN operand is returned quieted (the first one);
    Inf/Inf and 0/0 give the default NaN 0xffc00000"""
    for v in (a, b):
        if np.isnan(v):
            return fb(bf(v) | 0x00400000)
    if (np.isinf(a) and np.isinf(b)) or (a == 0 and b == 0):
        return fb(0xFFC00000)
    return F(a / b)


def torchao_nvfp4(x, pts=None):
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), 16):
        xs = x[lo:hi]
        b = x86_div(amax_nan(xs), F(6.0))
        if pts is not None:
            b = x86_div(b, pts)
        bc = b if np.isnan(b) else F(min(max(b, E4M3_TINY), F(448.0)))
        sc = torch_fp8_nan(bc, "e4m3") if np.isnan(bc) else cast(bc, "e4m3")
        s = decode_f32(sc, "e4m3")
        if sc & 0x80:
            s = fb(bf(s) | 0x80000000)
        r = x86_div(F(1.0), s) if pts is None else x86_div(x86_div(F(1.0), pts), s)
        ss = s if pts is None else x86_mul(pts, s)
        S.append(sc)
        for v in xs:
            t = x86_mul(v, r)
            if not np.isnan(t):
                t = F(min(max(t, F(-6.0)), F(6.0)))
            q = torchao_floatx(t, "nvfp4")
            Q.append(q)
            Y.append(F(decode_f32(q, "nvfp4") * ss))
    return S, Q, Y


# ---- microxcaling MX -------------------------------------------------------------------------
MXC = {  # name: (ebits, 'bits' incl. sign and implicit one, emax, max_norm)
    "mxfp8_e4m3": (4, 5, 8, 448.0), "mxfp8_e5m2": (5, 4, 15, 57344.0),
    "mxfp6_e3m2": (3, 4, 4, 28.0), "mxfp6_e2m3": (2, 5, 2, 7.5), "mxfp4": (2, 3, 2, 6.0),
    "mxint8": (0, 8, 0, 127.0 / 64.0)}


def flog2_floor(a):
    return math.floor(float(log2f(a)))


def mxc_elem(A, fmt):
    eb, bits, _, mn = MXC[fmt]
    mn = F(mn)
    if eb == 0:
        q = F(A * F(2.0 ** (bits - 2)))
        r = F(math.floor(float(F(abs(q) + F(0.5)))))
        q = r if q > 0 else (-r if q < 0 else F(0.0))
        out = F(q / F(2.0 ** (bits - 2)))
    else:
        pe = flog2_floor(F(abs(A) + (F(1.0) if A == 0 else F(0.0))))
        pe = max(pe, -(2 ** (eb - 1)) + 2)
        q = F(F(A / p2(pe)) * F(2.0 ** (bits - 2)))
        r = F(math.floor(float(F(abs(q) + F(0.5)))))
        q = r if q > 0 else (-r if q < 0 else F(0.0))    # torch.sign(+-0) = 0
        out = F(F(q / F(2.0 ** (bits - 2))) * p2(pe))
    return F(min(max(out, -mn), mn))


def mxc_code(v, fmt):
    if fmt == "mxint8":
        return int(Fraction(float(v)) * 64) & 0xFF
    a = abs(Fraction(float(v)))
    for val, c in table(fmt):
        if val == a:
            return c | (sign_bit(fmt) if is_neg(v) else 0)
    raise AssertionError("not representable")


def microxcaling_mx(x, fmt):
    E = MXC[fmt][2]
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), 32):
        xs = x[lo:hi]
        amax = amax_nan(xs)
        if np.isnan(amax) or np.isinf(amax):
            S.append(255)
            Q += [0] * len(xs)
            Y += [F(np.nan)] * len(xs)
            continue
        u = flog2_floor(amax if amax != 0 else F(2.0 ** -126)) - E
        if u > 127:
            S.append(255)
            Q += [0] * len(xs)
            Y += [F(np.nan)] * len(xs)
            continue
        u = max(u, -127)
        S.append(u + 127)
        sc = p2(u)
        for v in xs:
            A = F(v / sc)
            w = mxc_elem(A, fmt)
            Q.append(mxc_code(w, fmt))
            Y.append(F(w * sc))
    return S, Q, Y


# ---- Qwix ------------------------------------------------------------------------------------
def bf16_rne_mask(s):
    u = bf(s)
    if np.isnan(s):
        b = (u >> 16) | 0x40
    else:
        b = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return fb((b & 0x7F80) << 16)


def mldtypes_e2m1_nan(t):
    return 0x0 if is_neg(t) else 0x8


def qwix_mx(x, qtype):
    fmt, bs, Qm, C = {"mxfp8": ("mxfp8_e4m3", 32, 448.0, 60.0 / 31.0),
                      "mxfp8_16": ("mxfp8_e4m3", 16, 448.0, 60.0 / 31.0),
                      "mxfp4": ("mxfp4", 32, 6.0, 12.0 / 7.0)}[qtype]
    M = F(FMT[fmt][5])
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), bs):
        xs = x[lo:hi]
        s = F(amax_nan(xs) / F(Qm))
        if s < F(2.0 ** -63):
            s = F(1.0)
        s = F(s * F(C))
        s = bf16_rne_mask(s)
        S.append((bf(s) >> 23) & 0xFF)
        for v in xs:
            t = x86_div(v, s)
            if np.isnan(t):
                q = 0x7F | (0x80 if is_neg(t) else 0) if fmt == "mxfp8_e4m3" else mldtypes_e2m1_nan(t)
            else:
                q = cast(F(min(max(t, -M), M)), fmt)
            Q.append(q)
            Y.append(F(decode_f32(q, fmt) * s))
    return S, Q, Y


def qwix_nvfp4(x):
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), 16):
        xs = x[lo:hi]
        s = F(amax_nan(xs) / F(6.0))
        if s < F(2.0 ** -63):
            s = F(1.0)
        sc = 0x7F if np.isnan(s) else cast(F(min(max(s, F(-448.0)), F(448.0))), "e4m3")
        d = decode_f32(sc, "e4m3")
        S.append(sc)
        for v in xs:
            t = x86_div(v, d)
            q = mldtypes_e2m1_nan(t) if np.isnan(t) else cast(F(min(max(t, F(-6.0)), F(6.0))), "nvfp4")
            Q.append(q)
            Y.append(F(decode_f32(q, "nvfp4") * d))
    return S, Q, Y


# ---- ggml ------------------------------------------------------------------------------------
KV = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]


def ggml_best(v, d):
    best, best_err = 0, F(abs(F(F(KV[0]) * d) - v))
    for i in range(1, 16):
        err = F(abs(F(F(KV[i]) * d) - v))
        if err < best_err:
            best, best_err = i, err
    return best


def ggml_amax(xs):
    m = F(0.0)
    for v in xs:
        if m < abs(v):
            m = abs(v)
    return m


def ggml_e8m0_half(c):
    return fb(0x00200000 << c) if c < 2 else fb((c - 1) << 23)


def ggml_mxfp4(x):
    assert len(x) % 32 == 0
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), 32):
        xs = x[lo:hi]
        amax = ggml_amax(xs)
        if not amax > 0:
            c = 0
        elif np.isinf(amax):
            c = 0                       # (uint8_t)(int32)inf: cvttss2si gives 0x80000000
        else:
            c = (flog2_floor(amax) - 2 + 127) & 0xFF
        d = ggml_e8m0_half(c)
        S.append(c)
        for v in xs:
            q = ggml_best(v, d)
            Q.append(q)
            Y.append(F(F(KV[q]) * d))
    return S, Q, Y


def ggml_fp32_to_ue4m3(x):
    if not x > 0:
        return 0
    if x > F(448.0):
        x = F(448.0)
    u = bf(x)
    e = ((u >> 23) & 0xFF) - 127 + 7
    if e <= 0:
        man = int(F(F(x * F(512.0)) + F(0.5)))
        man = min(man, 7)
        return 0 if man < 1 else man
    if e >= 15:
        return 0x7E
    m = ((u >> 20) & 7) + ((u >> 19) & 1)
    if m > 7:
        m = 0
        e += 1
        if e >= 15:
            return 0x7E
    return (e << 3) | m


def ggml_ue4m3_half(c):
    if c == 0 or c == 0x7F:
        return F(0.0)
    e, m = (c >> 3) & 0xF, c & 7
    raw = F(m) * p2(-9) if e == 0 else F(F(1.0) + F(F(m) / F(8.0))) * p2(e - 7)
    return F(F(raw) * F(0.5))


def ggml_nvfp4(x):
    assert len(x) % 64 == 0
    S, Q, Y = [], [], []
    for lo, hi in blocks(len(x), 16):
        xs = x[lo:hi]
        ue = ggml_fp32_to_ue4m3(F(ggml_amax(xs) / F(6.0)))
        d = ggml_ue4m3_half(ue)
        S.append(ue)
        for v in xs:
            q = ggml_best(v, d)
            Q.append(q)
            Y.append(F(F(KV[q]) * d))
    return S, Q, Y


def ggml_bytes_mx(S, Q):
    out = []
    for b, c in enumerate(S):
        q = Q[32 * b:32 * b + 32]
        out.append(c)
        out += [q[j] | (q[j + 16] << 4) for j in range(16)]
    return "".join("%02x" % v for v in out)


def ggml_bytes_nv(S, Q):
    out = []
    for b in range(len(Q) // 64):
        out += S[4 * b:4 * b + 4]
        for s in range(4):
            q = Q[64 * b + 16 * s:64 * b + 16 * s + 16]
            out += [q[j] | (q[j + 8] << 4) for j in range(8)]
    return "".join("%02x" % v for v in out)


# ---- inputs ----------------------------------------------------------------------------------
def f(v):
    return F(v)


def fill(rng, n, mag):
    """n pseudo-random float32 in (-mag, mag) (Python's Mersenne Twister: stable)"""
    return [F(rng.uniform(-1.0, 1.0) * mag) for _ in range(n)]


def block_with(rng, specials, mag, n=32):
    """a block of n: random fill of magnitude mag, with specials placed at fixed positions"""
    xs = fill(rng, n, mag)
    pos = [p for p in (3, 17, 30, 8, 22, 11, 1, 12, 27, 5, 19, 14, 25, 10, 29, 0) if p < n]
    pos = pos[:len(specials)]
    for p, v in zip(pos, specials):
        xs[p] = F(v)
    return xs


def gauss(rng, n, sigma):
    return [F(rng.gauss(0.0, 1.0) * sigma) for _ in range(n)]


FLT_MAX = fb(0x7F7FFFFF)


def midpoints(fmt, lim=None):
    tab = table(fmt)
    mids = [float((a + b) / 2) for (a, _), (b, _) in zip(tab, tab[1:])]
    if lim and len(mids) > lim:
        step = len(mids) / lim
        mids = [mids[int(i * step)] for i in range(lim)]
    return mids


def mx_scenarios(fmt, bs):
    """(name, x list, note) for an MX format; amax values chosen where the rules differ"""
    eb, mb, bias, kind, E, M = FMT[fmt] if fmt != "mxint8" else (0, 6, 0, "int", 0, 127 / 64)
    rng = random.Random(hash_seed(fmt))
    sc = []
    two_e = 2.0 ** E
    sc.append(("pow2", block_with(rng, [two_e, -two_e / 2], two_e / 2) +
               block_with(rng, [-(2.0 ** (E + 3)), 2.0 ** (E + 2)], 2.0 ** (E + 2)),
               "amax exactly 2^E (blk0) and -2^(E+3) (blk1)"))
    sc.append(("pow2_below", block_with(rng, [fb(bf(F(2 * two_e)) - 1)], two_e) +
               block_with(rng, [fb(0x417FFFFF)], 4.0) +
               block_with(rng, [-fb(0x3E7FFFFF)], 0.0625),
               "amax one ulp below 2^(E+1), below 16, below 0.25 (a float32 log2 rounds up)"))
    sc.append(("pow2_above", block_with(rng, [fb(bf(F(two_e)) + 1)], two_e / 2) +
               block_with(rng, [-fb(0x3E000001)], 0.0625),
               "amax one ulp above 2^E and above 2^-3"))
    if fmt != "mxint8":
        ev = two_e * (2.0 - 2.0 ** -(mb + 1))
        sc.append(("even_cross", block_with(rng, [ev], two_e) +
                   block_with(rng, [-float(np.nextafter(F(ev), F(0)))], two_e) +
                   block_with(rng, [ev * 2.0 ** -20], two_e * 2.0 ** -20),
                   "amax = 2^E (2 - 2^-(mb+1)) (EVEN rounds it to 2^(E+1)) and one ulp below"))
    sc.append(("max_normal", block_with(rng, [M, -M / 3], M) +
               block_with(rng, [float(np.nextafter(F(M), F(1e30)))], M) +
               block_with(rng, [M * 2.0 ** 5, 1.0], M * 16) +
               block_with(rng, [(M + 2 * two_e) / 2, -M], M),
               "amax = M, M + ulp, 32 M, (M + 2^(E+1)) / 2 (RCEIL vs FLOOR; element saturation)"))
    zb = [F(0.0)] * 32
    for p in (2, 9, 31):
        zb[p] = F(-0.0)
    sc.append(("zero", zb, "all +0 with -0 at 2, 9, 31"))
    sc.append(("nan", block_with(rng, [np.nan, -3.0, 2.5], 2.0) + block_with(rng, [3.0], 2.0),
               "blk0 holds a NaN (+ quiet 7fc00000), blk1 finite"))
    sc.append(("inf", block_with(rng, [np.inf, -2.0], 1.0) + block_with(rng, [-np.inf, 5.0], 1.0),
               "+Inf in blk0, -Inf in blk1"))
    sc.append(("subnormal",
               block_with(rng, [fb(0x00300000), -fb(0x00000001)], float(fb(0x00100000))) +
               [fb(0x00000001)] * 16 + [fb(0x80000001)] * 16 +
               block_with(rng, [fb(0x00800000)], float(fb(0x00400000))) +
               block_with(rng, [2.0 ** -120, -2.0 ** -121], 2.0 ** -122),
               "amax 0x00300000 (subnormal), 2^-149, 2^-126, 2^-120 (scale clamps at code 0)"))
    sc.append(("fltmax", block_with(rng, [FLT_MAX, -FLT_MAX / 2, 1.0], 1e38) +
               block_with(rng, [-FLT_MAX / 1.5], 1e38),
               "amax FLT_MAX (log2f rounds to 128) and FLT_MAX / 1.5"))
    if fmt == "mxint8":
        ties = [(k + 0.5) / 64 for k in (0, 1, 2, 5, 63, 100, 126)]
    else:
        ties = midpoints(fmt, 14)
    tb = [F(M)] + [F(t) for t in ties] + [F(-t) for t in ties]
    tb += [F(0.0)] * (32 - len(tb) % 32 if len(tb) % 32 else 0)
    tb[31] = fb(0x3E7FFFFF)
    sc.append(("ties", tb, "amax = M (scale 1 under FLOOR), then the midpoints between "
               "consecutive element values, + and -; last 0x3e7fffff"))
    sc.append(("random", gauss(rng, 32, 1.0) + gauss(rng, 32, 1000.0) + gauss(rng, 32, 1e-3),
               "gauss x 1, 1000, 1e-3"))
    return sc


def hash_seed(s):
    return sum((i + 1) * ord(ch) for i, ch in enumerate(s))


# ---- torchao_test transcriptions -------------------------------------------------------------
def torchao_semantic_cases(rule, dtype):
    """torchao/testing/_mxfp8_test_utils.make_mxfp8_semantic_cases, one 32-block per name:
    (name, inputs, expected scale, expected data bytes); inputs as float32 (bf16 widened)."""
    floor = rule == "floor"
    bfl = dtype == "bf16"

    def hp(v):
        v = F(v)
        if bfl and not np.isnan(v):
            u = bf(v)
            u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
            v = fb(u)
        return v
    fmax = fb(0x7F7F0000) if bfl else FLT_MAX
    sub = fb(0x00010000) if bfl else fb(1)
    subd = 0x08 if bfl else 0x00
    mx_s, mx_d = (246, 0x7E) if floor else (247, 0x78)
    out = []

    def add(name, xs, s, d):
        out.append((name, [hp(v) for v in xs], s, d))
    add("zero", [0.0] * 32, 0, [0] * 32)
    add("smallest_normal", [2.0 ** -126] * 32, 0, [0x40] * 32)
    add("mixed_inf", [np.inf] + [1.0] * 31, 255, [0x7F] * 32)
    add("mixed_nan", [np.nan] + [1.0] * 31, 255, [0x7F] * 32)
    add("positive_fp8_max", [448.0] * 32, 127, [0x7E] * 32)
    add("negative_fp8_max", [-448.0] * 32, 127, [0xFE] * 32)
    add("positive_dtype_max", [fmax] * 32, mx_s, [mx_d] * 32)
    add("negative_dtype_max", [-fmax] * 32, mx_s, [mx_d | 0x80] * 32)
    add("positive_smallest_subnormal", [sub] * 32, 0, [subd] * 32)
    add("negative_smallest_subnormal", [-sub] * 32, 0, [subd | 0x80] * 32)
    add("mixed_positive_underflow", [sub] + [1.0] * 31, 119, [0x00] + [0x78] * 31)
    add("mixed_negative_underflow", [-sub] + [1.0] * 31, 119, [0x80] + [0x78] * 31)
    add("mixed_saturation_and_underflow", [fmax] + [1.0] * 31, mx_s, [mx_d] + [0x00] * 31)
    b = fb(0x40600001)
    if not floor and not bfl:
        add("rceil_premature_bf16_lowers_scale", [b] * 32, 121, [0x76] * 32)
    else:
        add("rceil_premature_bf16_lowers_scale", [b] * 32, 120, [0x7E] * 32)
    b = fb(0x43FFFFFF)
    if floor and not bfl:
        add("floor_premature_bf16_raises_scale", [b] * 32, 127, [0x7E] * 32)
    else:
        add("floor_premature_bf16_raises_scale", [b] * 32, 128, [0x78] * 32)
    add("all_nan", [np.nan] * 32, 255, [0x7F] * 32)
    add("positive_satfinite", [480.0] * 32, 127 if floor else 128, [0x7E if floor else 0x77] * 32)
    add("negative_satfinite", [-480.0] * 32, 127 if floor else 128, [0xFE if floor else 0xF7] * 32)
    return out


# test/prototype/mx_formats/test_mx_tensor.py test_to_mx_rceil: (label, bits, width, scale, fp8)
RCEIL_TESTS = [
    ("fp32_denorm", 32, [
        6142315, 5096174, 3345704, 6178415, 5728750, 419002, 1716691, 4335089,
        5785800, 6234845, 1697524, 33075, 3975816, 3714822, 5411407, 3040844,
        7400945, 4474166, 7257182, 1273750, 5872176, 4694081, 2096530, 6273621,
        67028, 7585260, 4532315, 4599275, 6133942, 4542483, 5992199, 6862780], 0, [
        60, 58, 53, 60, 59, 29, 45, 56, 59, 60, 45, 4, 55, 54, 58, 52,
        62, 57, 62, 42, 59, 57, 48, 60, 8, 62, 57, 57, 60, 57, 59, 61]),
    ("bf16_denorm", 16, [
        101, 3, 47, 54, 36, 19, 70, 79, 35, 95, 28, 120, 84, 94, 20, 92,
        18, 42, 98, 58, 3, 26, 64, 86, 60, 86, 52, 23, 61, 70, 59, 74], 0, [
        61, 20, 52, 54, 49, 42, 57, 58, 49, 60, 46, 63, 58, 60, 42, 60,
        41, 50, 60, 54, 20, 45, 56, 59, 55, 59, 53, 44, 55, 57, 55, 57]),
    ("fp32_some_denorm", 32, [
        8388608, 1063716449, 1064039365, 1063568877, 1051091338, 1062185569, 1034449408,
        1060813641, 1054893736, 1034907680, 1036660744, 1023639888, 1058536559, 1050896496,
        1049237634, 1064950601, 1051852994, 1059794063, 1054011102, 1062023602, 1059467900,
        1062276774, 1059155029, 1053287574, 1064378711, 1055768540, 1045266076, 1059575077,
        1054928758, 1040468200, 1058061961, 1053066436], 119, [
        0, 118, 119, 118, 106, 117, 91, 116, 110, 91, 93, 80, 113, 106, 105, 120,
        107, 115, 109, 117, 114, 117, 114, 108, 119, 111, 101, 114, 110, 96, 113, 108]),
    ("bf16_some_denorm", 16, [
        128, 16118, 16143, 16074, 16187, 16002, 16193, 16217, 15680, 16183, 16092, 16158,
        16251, 15876, 15896, 16194, 16135, 16214, 16205, 16110, 16122, 15960, 15824, 16106,
        16220, 16230, 15952, 15896, 16000, 16144, 16232, 16157], 119, [
        0, 111, 113, 109, 116, 104, 116, 118, 84, 115, 110, 114, 120, 96, 98, 116,
        112, 117, 117, 111, 112, 102, 93, 111, 118, 118, 101, 98, 104, 113, 118, 114]),
    ("zero", 32, [0] * 32, 0, [0] * 32),
    ("fp32_normal", 32, [
        1037408064, 1058534842, 1053630662, 1063310394, 994704128, 1057245441, 1060663708,
        1058053571, 1052395648, 1064831570, 1038427336, 1064777688, 1059248393, 1060959028,
        1062878286, 1057799482, 1057854101, 1053562724, 1027482352, 1060498324, 1063238522,
        1060472055, 1054346794, 1029092912, 1056687298, 1059146141, 1037992128, 1064097772,
        1056522806, 1059255744, 1064364912, 1060606252], 119, [
        93, 113, 109, 118, 53, 112, 116, 113, 108, 120, 94, 119, 114, 116, 118, 113,
        113, 109, 84, 115, 118, 115, 110, 85, 112, 114, 94, 119, 112, 114, 119, 115]),
    ("bf16_normal", 16, [
        15752, 16143, 16182, 15896, 16195, 16186, 16048, 16223, 15988, 16231, 16140, 16088,
        16032, 16240, 16228, 16133, 16210, 16024, 16248, 16187, 16050, 15696, 16060, 15956,
        16131, 16251, 15896, 16014, 15808, 16024, 16159, 16186], 119, [
        88, 113, 115, 98, 116, 116, 107, 118, 103, 118, 113, 110, 106, 119, 118, 112,
        117, 106, 120, 116, 107, 85, 108, 101, 112, 120, 98, 105, 92, 106, 114, 116]),
]


# ---- case list -------------------------------------------------------------------------------
class Case:
    def __init__(self, name, fmt, rule, rnd, bs, src, x, S, Q, Y, note="", t=None, g=None):
        self.name, self.fmt, self.rule, self.rnd, self.bs, self.src = name, fmt, rule, rnd, bs, src
        self.x, self.S, self.Q, self.Y, self.note, self.t, self.g = x, S, Q, Y, note, t, g


def nvfp4_scenarios():
    rng = random.Random(4242)
    sc = []
    sc.append(("random", gauss(rng, 16, 1.0) + gauss(rng, 16, 100.0) + gauss(rng, 16, 1e-3) +
               gauss(rng, 16, 1000.0), "gauss x 1, 100, 1e-3, 1000"))
    sc.append(("scale_round",
               block_with(rng, [6.375, -1.0], 3.0, 16) +          # amax/6 = 1.0625 (tie)
               block_with(rng, [0.093], 0.05, 16) +               # amax/6 = 0.0155 < 2^-6
               block_with(rng, [1800.0, -900.0], 500.0, 16) +     # amax/6 = 300 in [256, 448]
               block_with(rng, [0.003, -0.002], 0.002, 16),       # amax/6 = 0.0005 < 2^-10
               "amax/6 = 1.0625, 0.0155, 300, 0.0005 (UE4M3 rounding, saturation, tiny)"))
    z = [F(0.0)] * 16
    z[5] = F(-0.0)
    sc.append(("special", z + block_with(rng, [np.nan, 2.0], 1.0, 16) +
               block_with(rng, [np.inf, -3.0], 1.0, 16) + block_with(rng, [-np.inf, 1.5], 1.0, 16),
               "zero (with -0), NaN, +Inf, -Inf blocks"))
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    tb = [F(6.0)] + [F(v) for v in ties] + [F(-v) for v in ties] + [F(0.0), fb(0x3E7FFFFF)]
    tb += [F(v) for v in (6.0, 0.2, 0.3, 0.7, 0.8, 1.2, 1.3, 2.4, 2.6, 3.4, 3.6, 4.9, 5.1, 5.9,
                          -5.5)]
    sc.append(("ties", tb + gauss(rng, 32, 2.0), "amax 6 (scale 1): e2m1 ties 0.25 .. 5 and "
               "neighbours; then random"))
    sc.append(("range", block_with(rng, [FLT_MAX, -1e38], 1e38, 16) +
               block_with(rng, [fb(0x00300000)], float(fb(0x00100000)), 16) +
               block_with(rng, [2.0 ** -126], 2.0 ** -127, 16) +
               block_with(rng, [2688.0, -448.0], 100.0, 16),
               "amax FLT_MAX, subnormal, 2^-126, 2688 (= 448 x 6)"))
    return sc


def build():
    cases = []
    # -- MX formats --
    mxfmts = ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4"]
    for fmt in mxfmts + ["mxint8"]:
        for sname, x, note in mx_scenarios(fmt, 32):
            x = [F(v) for v in x]
            if fmt != "mxint8":
                for rule in ("floor", "ceil", "even", "rceil"):
                    S, Q, Y = torchao_mx(x, fmt, rule)
                    cases.append(Case("torchao_%s_%s_%s" % (rule, fmt, sname), fmt, rule, "rne",
                                      32, "torchao", x, S, Q, Y, note))
            S, Q, Y = microxcaling_mx(x, fmt)
            cases.append(Case("microxcaling_%s_%s" % (fmt, sname), fmt, "floor", "away", 32,
                              "microxcaling", x, S, Q, Y, note))
            if fmt == "mxfp8_e4m3":
                for qt, bs in (("mxfp8", 32), ("mxfp8_16", 16)):
                    S, Q, Y = qwix_mx(x, qt)
                    cases.append(Case("qwix_%s_%s" % (qt, sname), fmt, "qwix", "rne", bs, "qwix",
                                      x, S, Q, Y, note))
            if fmt == "mxfp4":
                S, Q, Y = qwix_mx(x, "mxfp4")
                cases.append(Case("qwix_mxfp4_%s" % sname, fmt, "qwix", "rne", 32, "qwix",
                                  x, S, Q, Y, note))
                if len(x) % 32 == 0:
                    S, Q, Y = ggml_mxfp4(x)
                    cases.append(Case("ggml_mxfp4_%s" % sname, fmt, "ggml", "ggml", 32, "ggml",
                                      x, S, Q, Y, note, g=("gmx", ggml_bytes_mx(S, Q))))
    # ragged tail (microxcaling pads with zeros; torchao / Qwix / ggml require whole blocks)
    rng = random.Random(777)
    for fmt in mxfmts + ["mxint8"]:
        x = gauss(rng, 45, 3.0)
        S, Q, Y = microxcaling_mx(x, fmt)
        cases.append(Case("microxcaling_%s_ragged45" % fmt, fmt, "floor", "away", 32,
                          "microxcaling", x, S, Q, Y, "45 elements: blocks of 32 and 13"))
    # -- NVFP4 --
    for sname, x, note in nvfp4_scenarios():
        x = [F(v) for v in x]
        S, Q, Y = torchao_nvfp4(x)
        cases.append(Case("torchao_nvfp4_%s" % sname, "nvfp4", "torchao", "rne", 16, "torchao",
                          x, S, Q, Y, note + "; single level"))
        ta = F(0.0)
        for v in x:
            if not np.isnan(v):
                ta = max(ta, abs(v))
        if np.isfinite(ta):
            pts = F(ta / F(2688.0))
            S, Q, Y = torchao_nvfp4(x, pts)
            cases.append(Case("torchao_nvfp4_2lvl_%s" % sname, "nvfp4", "torchao", "rne", 16,
                              "torchao", x, S, Q, Y, note + "; two level, t = tensor amax / 2688",
                              t=pts))
        S, Q, Y = qwix_nvfp4(x)
        cases.append(Case("qwix_nvfp4_%s" % sname, "nvfp4", "qwix", "rne", 16, "qwix",
                          x, S, Q, Y, note))
        S, Q, Y = ggml_nvfp4(x)
        cases.append(Case("ggml_nvfp4_%s" % sname, "nvfp4", "ggml", "ggml", 16, "ggml",
                          x, S, Q, Y, note, g=("gnv", ggml_bytes_nv(S, Q))))
    # two-level with a given per-tensor scale (calibrated elsewhere), and an all-zero tensor
    rng = random.Random(99)
    x = gauss(rng, 32, 5.0)
    for pts in (F(1.0), F(0.0123)):
        S, Q, Y = torchao_nvfp4(x, pts)
        cases.append(Case("torchao_nvfp4_2lvl_given_%08x" % bf(pts), "nvfp4", "torchao", "rne", 16,
                          "torchao", x, S, Q, Y, "two level with the given per-tensor scale",
                          t=pts))
    x = [F(0.0)] * 32
    S, Q, Y = torchao_nvfp4(x, F(0.0))
    cases.append(Case("torchao_nvfp4_2lvl_zero_tensor", "nvfp4", "torchao", "rne", 16, "torchao",
                      x, S, Q, Y, "all-zero tensor: t = 0, block scale 0/0 = x86 default NaN "
                      "(sign set) -> 0xff, every element from -NaN, y NaN", t=F(0.0)))
    # -- torchao_test transcriptions, checked against the torchao model --
    for rule in ("floor", "rceil"):
        for dt in ("fp32", "bf16"):
            for name, x, s, d in torchao_semantic_cases(rule, dt):
                S, Q, Y = torchao_mx(x, "mxfp8_e4m3", rule)
                assert S == [s], (rule, dt, name, S, s)
                assert [0x7F if q == 0xFF else q for q in Q] == d, (rule, dt, name, Q, d)
                Yd = [F(np.nan) if s == 255 else F(decode_f32(q, "mxfp8_e4m3") * p2(s - 127))
                      for q in d]
                cases.append(Case("torchao_test_%s_%s_%s" % (rule, dt, name), "mxfp8_e4m3", rule,
                                  "rne", 32, "torchao_test", x, [s], d, Yd,
                                  "_mxfp8_test_utils.make_mxfp8_semantic_cases(%s) %s" % (dt, name)))
    for label, width, bits, s, d in RCEIL_TESTS:
        x = [fb(b << 16) if width == 16 else fb(b) for b in bits]
        S, Q, Y = torchao_mx(x, "mxfp8_e4m3", "rceil")
        assert S == [s] and Q == d, (label, S, Q)
        Yd = [F(decode_f32(q, "mxfp8_e4m3") * p2(s - 127)) for q in d]
        cases.append(Case("torchao_test_to_mx_rceil_%s" % label, "mxfp8_e4m3", "rceil", "rne", 32,
                          "torchao_test", x, [s], d, Yd, "test_mx_tensor.test_to_mx_rceil %s" % label))
    return cases


def self_test():
    # torchao's bit-level fp4/fp6 cast equals the exact RNE saturating cast on finite values
    rng = random.Random(5)
    for fmt in ("mxfp4", "mxfp6_e2m3", "mxfp6_e3m2"):
        M = FMT[fmt][5]
        pts = [F(float(v)) for v, _ in table(fmt)] + [F(m) for m in midpoints(fmt)]
        pts += [F(rng.uniform(-1.2, 1.2) * M) for _ in range(400)] + [F(2.0 ** -20), F(1e30)]
        for v in pts + [-p for p in pts]:
            assert torchao_floatx(v, fmt) == cast(v, fmt), (fmt, v)
    # torchao kernels test expectations (test_kernels.py test_fp4_*, test_fp6_e3m2_rounding)
    for v, c in ((0.25, 0), (0.75, 2), (1.25, 2), (1.75, 4), (2.5, 4), (3.5, 6), (5.0, 6)):
        assert torchao_floatx(F(v), "mxfp4") == c and torchao_floatx(F(-v), "mxfp4") == c | 8
    for v, c in ((29.0, 0b011111), (26.0, 0b011110), (0.1251, 0b000010), (0.0314, 0b000001),
                 (0.03, 0)):
        assert torchao_floatx(F(v), "mxfp6_e3m2") == c
    # _f32_to_e8m0_rceil boundary table (torchao/testing/_mxfp8_test_utils.py)
    for u, c in ((0, 0), (1, 0), (0x400000, 0), (0x400001, 1), (0x7FFFFF, 1), (0x800000, 1),
                 (0x1F800000, 63), (0x1F800001, 64), (0x3F7FFFFF, 127), (0x3F800000, 127),
                 (0x3F800001, 128), (0x5F800000, 191), (0x5F800001, 192), (0x7F000000, 254),
                 (0x7F000001, 255), (0x7F7FFFFF, 255), (0x7F800000, 255), (0x7FC00000, 255)):
        ex, man = (u >> 23) & 0xFF, u & 0x7FFFFF
        got = 255 if ex == 255 else ex + ((man > 0x400000) if ex == 0 else (man != 0))
        assert min(got, 255) == c, (hex(u), got, c)


# ---- output ----------------------------------------------------------------------------------
def hx(v):
    u = bf(v)
    return "%08x" % (NAN if np.isnan(v) else u)


HEADER = """mx_golden.txt - generated by {gen}; do not edit. Regenerate: /usr/bin/python3 {gen}
Golden data for microscaling block formats: per case the float32 inputs, the per-block scale codes,
the UNPACKED element codes and the dequantized float32 values, as the named origin computes them.
Independent numpy reference of each origin's formula (see the generator's docstring, repeated below);
ggml cases were reproduced by compiling ggml's own reference C (x86-64, gcc 12, glibc 2.36), the
microxcaling y by running its Python under torch 1.13; `torchao_test` cases are expectations
transcribed from torchao's published tests (y there is the plain decode v * 2^(s-127)).
Records (tokens separated by single spaces):
mx NAME FORMAT RULE ROUND BLOCK COUNT SRC
    FORMAT: mxfp8_e4m3 mxfp8_e5m2 mxfp6_e2m3 mxfp6_e3m2 mxfp4 mxint8 nvfp4
    RULE: floor ceil even rceil qwix ggml (nvfp4: torchao qwix ggml)
    ROUND: rne away ggml
    BLOCK: elements per scale (32, 16); blocks are consecutive runs of the flat array; the last
           block may be shorter when COUNT is not a multiple
    SRC: the origin whose behaviour the case records (torchao, microxcaling, qwix, ggml,
         torchao_test)
Lines starting with '#' are comments (the one before each mx record says what the case probes).
x HEX ...      COUNT float32 inputs (8-hex-digit bit patterns)
t HEX          nvfp4 two-level only: the fp32 per-tensor scale (absent otherwise)
s HEX2 ...     one scale code per block: E8M0 byte (MX), E4M3 byte (nvfp4), two hex digits each
e HEX2 ...     COUNT element codes, one per element, UNPACKED (fp4: 0..f, fp6: 00..3f, fp8 byte,
               int8 byte two's complement), two hex digits
y HEX ...      COUNT dequantized float32 values as the origin computes them (any NaN as 7fc00000)
end
gmx NAME COUNT HEX   ggml block_mxfp4 bytes for the x of the preceding mx case (17 bytes per 32
               elements: e8m0 byte, then 16 bytes where byte j holds element j in the low nibble
               and element j+16 in the high nibble), hex string without spaces
gnv NAME COUNT HEX   the same for ggml block_nvfp4 (36 bytes per 64 elements: the 4 UE4M3 scale
               bytes d[0..3], then qs[32]: qs[8s + j] holds element 16s + j in the low nibble and
               element 16s + j + 8 in the high nibble)
NaN-code notes: element codes produced from a NaN follow x86-64 semantics (a*b / a/b return the
NaN operand quieted; Inf/Inf and 0/0 give the default NaN 0xffc00000) and torch's fp8 casts
(NaN -> 0x7f | sign); torchao's own test treats e4m3 0x7f and 0xff as equal. In microxcaling
blocks with s = ff the element codes are not observable (written 00). Qwix e2m1 NaN codes assume
ml_dtypes' cast (+NaN -> 8, -NaN -> 0); XLA was not run. microxcaling mxint8: an element
that rounds to zero from a negative value has code 00 but y = -0.0 (its float pipeline keeps the sign).
"""


def render(cases):
    lines = [("# " + l).rstrip() for l in HEADER.format(gen=GEN).rstrip("\n").split("\n")]
    doc = __doc__.split("Notation:", 1)[1].rstrip().split("\n")
    lines += ["# Notation:" + doc[0]] + [("# " + l).rstrip() for l in doc[1:]]
    names = set()
    for c in cases:
        assert c.name not in names, c.name
        names.add(c.name)
        n = len(c.x)
        nb = (n + c.bs - 1) // c.bs
        assert len(c.S) == nb and len(c.Q) == n and len(c.Y) == n, c.name
        if c.note:
            lines.append("# " + c.note)
        lines.append("mx %s %s %s %s %d %d %s" % (c.name, c.fmt, c.rule, c.rnd, c.bs, n, c.src))
        lines.append("x " + " ".join(hx(v) for v in c.x))
        if c.t is not None:
            lines.append("t " + hx(c.t))
        lines.append("s " + " ".join("%02x" % v for v in c.S))
        lines.append("e " + " ".join("%02x" % v for v in c.Q))
        lines.append("y " + " ".join(hx(v) for v in c.Y))
        lines.append("end")
        if c.g:
            lines.append("%s %s %d %s" % (c.g[0], c.name, n, c.g[1]))
    return "\n".join(lines) + "\n"


def main():
    np.seterr(all="ignore")
    self_test()
    text = render(build())
    path = os.path.join(ROOT, "tests", "data", "mx_golden.txt")
    if "--check" in sys.argv:
        with open(path) as fh:
            if fh.read() != text:
                print("DIFFERS: %s" % path)
                return 1
        print("OK: %s" % path)
        return 0
    with open(path, "w") as fh:
        fh.write(text)
    print("%s: %d bytes" % (path, len(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
