#!/usr/bin/python3
"""gen_quant_onnx.py - golden data for qmx's QMX_RECIPE_ONNX (ONNX QuantizeLinear,
DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul), written to tests/data/quant_onnx.txt.

Run from the repository root with Debian's python3 + numpy:
    /usr/bin/python3 tests/gen/gen_quant_onnx.py          # rewrites tests/data/quant_onnx.txt
    /usr/bin/python3 tests/gen/gen_quant_onnx.py --check  # regenerates in memory, diffs the file

Source: the ONNX operator specification (docs/Operators.md) and the ONNX reference
implementation (onnx/reference/ops/op_quantize_linear.py, op_dequantize_linear.py,
op_dynamic_quantize_linear.py, op_qlinear_matmul.py, _quant_utils.py; numpy_helper.saturate_cast)
of onnx/onnx@f7546912001b (VERSION_NUMBER 1.23.0; QuantizeLinear/DequantizeLinear opset 25,
semantics unchanged since opset 21 for the types here). The formulas below are re-implemented
here in numpy float32, one operation at a time in the reference's order; the fp8 cast is done
exactly (Python floats hold every float32 exactly), round to nearest even. Cases named spec_*
are the worked examples published in Operators.md with their published outputs.
The numpy here was cross-checked element by element against the onnx reference ops
themselves (run with small stand-ins for onnx.helper / ml_dtypes, outside the repository):
integer QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and QLinearMatMul agree on
every case. The fp8 cast/decode here equals ml_dtypes (which the reference uses) on the
ml_dtypes samples in tests/data/fp8_*_{encode,decode}.txt, bit for bit; onnx's older
pure-python converters (helper.float32_to_float8e4m3/e5m2, removed in 1.20) differ on three
points, where this file follows ml_dtypes and the spec: e4m3fn saturate=0 maps [480, 496) to
448 instead of NaN; e5m2 saturate=0 maps the tie 61440 to NaN instead of Inf; e5m2 NaN is
0x7f there, 0x7e in ml_dtypes.

Semantics (x, s float32; RNE = round half to even; elementwise s/zp after broadcasting):
  QuantizeLinear, integer T:  y = clip(RNE(x / s) + zp, qmin, qmax)
      x / s is ONE float32 division (not x * (1/s)); RNE is applied to the float32 quotient
      BEFORE the integer zero point is added (adding zp in float32 first can move a value onto
      a tie: see the *_zptrap cases). int4 [-8,7], uint4 [0,15], int16, uint16 as in the spec.
      NaN / Inf inputs are not defined for integer T and are not generated.
  QuantizeLinear, fp8 T (zp = 0):  saturate=1: the reference clips x / s to [-max, max] first
      (numpy_helper.saturate_cast: np.clip, so +-Inf -> +-max, NaN stays NaN), then RNE cast;
      saturate=0: plain RNE cast (ml_dtypes astype): a value whose RNE result is above max
      becomes NaN (e4m3fn: 0x7f|sign, fnuz: 0x80) or Inf (e5m2: 0x7c|sign). NaN input ->
      e4m3fn 0x7f|sign, e5m2 0x7e|sign (ml_dtypes' quiet NaN), fnuz 0x80. -0 -> 0x80 for
      e4m3fn/e5m2, 0x00 for the fnuz types; tiny values round to a signed zero the same way.
      Max: e4m3fn 448, e4m3fnuz 240, e5m2 57344, e5m2fnuz 57344.
  DequantizeLinear:  y = (float32(q) - float32(zp)) * s, two float32 operations; fp8 codes are
      decoded exactly first (NaN/Inf codes give NaN/Inf; a NaN code decodes to 0x7fc00000, or
      0xffc00000 if its sign bit is set, fnuz 0x80 included, as ml_dtypes; the float32 multiply
      keeps those bits on x86).
  Blocked: s and zp have the axis cut to ceil(LEN/BLOCK); element i of the axis uses
      parameter i // BLOCK (np.repeat then truncate: the last block may be ragged).
  DynamicQuantizeLinear (uint8), exactly the reference order, all float32:
      maxx = max(0, max(x)); minx = min(0, min(x))
      s = (maxx == minx ? 1.0f : maxx - minx) / 255.0f        (all-zero x -> s = 1/255;
      the spec text gives 0/255 there, and the reference's comment quotes ORT's 1.0f)
      izp = 0.0f - minx / s;  zp = RNE(clamp(izp, 0, 255))    (clamp before rounding)
      y = clip(RNE(x / s) + zp, 0, 255)
  QLinearMatMul (per tensor, int8/uint8):
      C = sum_k (a - a_zp) * (b - b_zp) in int32 (exact here)
      m = float32(float32(a_scale * b_scale) / y_scale)   (float32, left to right)
      D = double(C) * double(m)   -- numpy promotes int32 array * float32 to FLOAT64
      D = D + y_zp (float64, zero point added BEFORE rounding), y = clip(RNE(D), qmin, qmax)
      (the double product C*m is exact for |C| < 2^29, so rint(D)+zp == rint(D+zp) here;
      a float32 product float32(C)*m differs on some elements: see the *_f32trap cases.)

File format: see the header written by header_lines() (the C reader is written against it).
Every float is the 8-hex-digit IEEE binary32 bit pattern.
"""
import math
import os
import sys

import numpy as np

F = np.float32
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = "tests/gen/gen_quant_onnx.py"
OUT = "quant_onnx.txt"

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
             "uint16": (0, 65535), "int4": (-8, 7), "uint4": (0, 15)}
INT_TYPES = ["int8", "uint8", "int16", "uint16", "int4", "uint4"]
# name: (exponent bits, mantissa bits, bias, fnuz)
FP8 = {"e4m3fn": (4, 3, 7, False), "e4m3fnuz": (4, 3, 8, True),
       "e5m2": (5, 2, 15, False), "e5m2fnuz": (5, 2, 16, True)}
FP8_TYPES = ["e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz"]


def hx(v):
    return "%08x" % int(np.array(v, dtype=np.float32).view(np.uint32))


def f32(a):
    return np.asarray(a, dtype=np.float32)


def bits(u):
    return np.array(u, dtype=np.uint32).view(np.float32)


# ---- fp8 ---------------------------------------------------------------------------------------
def fp8_decode_scalar(code, fmt):
    eb, mb, bias, uz = FP8[fmt]
    sign = -1.0 if code & 0x80 else 1.0
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    if uz:
        if code == 0x80:
            return float("nan")
    elif fmt == "e4m3fn":
        if (code & 0x7f) == 0x7f:
            return sign * float("nan")
    else:  # e5m2: IEEE-like
        if e == 31:
            return sign * (float("inf") if m == 0 else float("nan"))
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - mb)
    return sign * math.ldexp((1 << mb) | m, e - bias - mb)


def fp8_max(fmt):
    return max(v for v in (fp8_decode_scalar(c, fmt) for c in range(128)) if math.isfinite(v))


_F8TAB = {}


def fp8_table(fmt):
    """value -> code for the positive finite nonzero values."""
    if fmt not in _F8TAB:
        _F8TAB[fmt] = {fp8_decode_scalar(c, fmt): c for c in range(1, 128)
                       if math.isfinite(fp8_decode_scalar(c, fmt))}
    return _F8TAB[fmt]


def fp8_overflow_code(fmt, neg):
    if FP8[fmt][3]:
        return 0x80
    if fmt == "e4m3fn":
        return 0xff if neg else 0x7f
    return 0xfc if neg else 0x7c


def fp8_encode_scalar(v, fmt, sat):
    """float32 v -> fp8 code, as the reference: saturate -> np.clip(v, -max, max) then cast."""
    eb, mb, bias, uz = FP8[fmt]
    v = float(v)
    neg = math.copysign(1.0, v) < 0
    if math.isnan(v):
        if uz:
            return 0x80
        return (0x80 if neg else 0) | (0x7f if fmt == "e4m3fn" else 0x7e)
    mx = fp8_max(fmt)
    if sat:
        v = min(max(v, -mx), mx)
    a = abs(v)
    if math.isinf(a):
        return fp8_overflow_code(fmt, neg)
    if a == 0.0:
        return 0 if (uz or not neg) else 0x80
    e = max(math.frexp(a)[1] - 1, 1 - bias)      # binade exponent, subnormals share emin
    q = math.ldexp(1.0, e - mb)                   # spacing of the fp8 grid there
    n = a / q                                     # exact (power-of-two scaling)
    r = round(n)                                  # Python round: ties to even, exact
    val = r * q
    if val > mx:
        return fp8_overflow_code(fmt, neg)
    if val == 0.0:
        return 0 if (uz or not neg) else 0x80
    return fp8_table(fmt)[val] | (0x80 if neg else 0)


def fp8_encode(arr, fmt, sat):
    return np.array([fp8_encode_scalar(v, fmt, sat) for v in np.asarray(arr, np.float32).ravel()],
                    dtype=np.int64)


def fp8_decode_f32(code, fmt):
    """float32 of a code; NaN codes give ml_dtypes' bits: 0x7fc00000, or 0xffc00000 when the
    code's sign bit is set (the fnuz NaN 0x80 included)"""
    v = fp8_decode_scalar(code, fmt)
    if math.isnan(v):
        return bits(0xffc00000 if code & 0x80 else 0x7fc00000)[()]
    return F(v)


def fp8_decode(codes, fmt):
    return np.array([fp8_decode_f32(int(c), fmt) for c in np.asarray(codes).ravel()],
                    dtype=np.float32)


# ---- the operators (numpy float32, reference order) ------------------------------------------
def expand(p, outer, ln, inner, block, nparam):
    """parameters -> elementwise [outer][ln][inner]"""
    p = np.asarray(p)
    if nparam == 1:
        return np.broadcast_to(p.reshape(1, 1, 1), (outer, ln, inner))
    if block == 0:
        return np.broadcast_to(p.reshape(1, ln, 1), (outer, ln, inner))
    nb = -(-ln // block)
    return np.repeat(p.reshape(outer, nb, inner), block, axis=1)[:, :ln, :]


def quantize(x, s, z, dtype, sat, outer, ln, inner, block):
    nparam = s.size
    x3 = f32(x).reshape(outer, ln, inner)
    sE = expand(f32(s), outer, ln, inner, block, nparam)
    with np.errstate(all="ignore"):
        t = np.divide(x3, sE, dtype=np.float32)
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        zE = expand(np.asarray(z, np.int64), outer, ln, inner, block, nparam)
        assert np.all(np.isfinite(t)) and np.all(np.abs(t) < 2.0 ** 31)
        r = np.rint(t).astype(np.int64) + zE
        return np.clip(r, lo, hi).reshape(-1)
    assert np.all(np.asarray(z) == 0)
    return fp8_encode(t, dtype, sat)


def dequantize(q, s, z, dtype, outer, ln, inner, block):
    nparam = s.size
    if dtype in INT_RANGE:
        d = f32(np.asarray(q, np.int64).reshape(outer, ln, inner))
        zE = f32(expand(np.asarray(z, np.int64), outer, ln, inner, block, nparam))
        d = np.subtract(d, zE, dtype=np.float32)
    else:
        assert np.all(np.asarray(z) == 0)
        d = fp8_decode(q, dtype).reshape(outer, ln, inner)
    sE = expand(f32(s), outer, ln, inner, block, nparam)
    with np.errstate(all="ignore"):
        return np.multiply(d, sE, dtype=np.float32).reshape(-1)


def dynamic_quantize(x):
    x = f32(x)
    maxx = F(max(F(0), np.max(x)))
    minx = F(min(F(0), np.min(x)))
    s = F(F(1.0) if maxx == minx else F(maxx - minx)) / F(255)
    s = F(s)
    izp = F(F(0) - F(minx / s))
    zp = F(min(max(izp, F(0)), F(255)))
    zpi = int(np.rint(zp))
    t = np.divide(x, s, dtype=np.float32)
    y = np.clip(np.rint(t).astype(np.int64) + zpi, 0, 255)
    return s, zpi, y


def qmatmul(a, b, sc, zp, dtype):
    A = np.asarray(a, np.int64) - zp[0]
    B = np.asarray(b, np.int64) - zp[1]
    C = A @ B
    assert np.all(np.abs(C) < 2 ** 29)
    m = F(F(F(sc[0]) * F(sc[1])) / F(sc[2]))
    D = C.astype(np.float64) * np.float64(m) + np.float64(zp[2])
    lo, hi = INT_RANGE[dtype]
    return np.clip(np.rint(D), lo, hi).astype(np.int64)


# ---- case construction --------------------------------------------------------------------------
CASES = []


def add_ql(name, dtype, sat, shape, axis, block, x, s, z, expect=None):
    """shape/axis are the ONNX tensor's; mode from s: scalar (per tensor), 1-D (per axis),
    same rank as x (blocked)."""
    x = f32(x).reshape(shape)
    s = f32(s)
    z = np.asarray(z, np.int64).reshape(s.shape)
    if s.ndim == 0:
        outer, ln, inner, block = 1, x.size, 1, 0
    else:
        outer = int(np.prod(shape[:axis], dtype=np.int64))
        ln = shape[axis]
        inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    if s.ndim == 1 and s.size == ln and block == 0:
        pass
    elif s.ndim > 0:
        assert block > 0 and s.size == outer * (-(-ln // block)) * inner
    y = quantize(x, s, z, dtype, sat, outer, ln, inner, block)
    if expect is not None:
        assert list(y) == list(expect), (name, list(y), list(expect))
    CASES.append(dict(op="ql", name=name, dtype=dtype, sat=sat, shape=tuple(shape), axis=axis,
                      block=block, outer=outer, ln=ln, inner=inner, x=x, s=s, z=z, y=y))


def add_dl(name, dtype, shape, axis, block, q, s, z, expect=None):
    q = np.asarray(q, np.int64).reshape(shape)
    s = f32(s)
    z = np.asarray(z, np.int64).reshape(s.shape)
    if s.ndim == 0:
        outer, ln, inner, block = 1, q.size, 1, 0
    else:
        outer = int(np.prod(shape[:axis], dtype=np.int64))
        ln = shape[axis]
        inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
        if block:
            assert s.size == outer * (-(-ln // block)) * inner
        else:
            assert s.ndim == 1 and s.size == ln
    y = dequantize(q, s, z, dtype, outer, ln, inner, block)
    if expect is not None:
        assert np.array_equal(y, f32(expect).reshape(-1)), (name, y, expect)
    CASES.append(dict(op="dl", name=name, dtype=dtype, shape=tuple(shape), axis=axis,
                      block=block, outer=outer, ln=ln, inner=inner, q=q, s=s, z=z, y=y))


def add_dql(name, x, expect=None):
    x = f32(x)
    s, zp, y = dynamic_quantize(x)
    if expect is not None:
        es, ez, ey = expect
        assert s == es and zp == ez and list(y) == list(ey), (name, s, zp, y, expect)
    CASES.append(dict(op="dql", name=name, x=x, s=s, z=zp, y=y))


def add_qmm(name, dtype, a, b, sc, zp, expect=None):
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    sc = [F(v) for v in sc]
    y = qmatmul(a, b, sc, zp, dtype)
    if expect is not None:
        assert np.array_equal(y, np.asarray(expect)), (name, y, expect)
    CASES.append(dict(op="qmm", name=name, dtype=dtype, a=a, b=b, sc=sc, zp=list(zp), y=y))


def spec_cases():
    """Operators.md worked examples (expected outputs as published / as the example computes)."""
    # QuantizeLinear
    add_ql("spec_quantizelinear", "uint8", 1, (6,), 0, 0, [0, 2, 3, 1000, -254, -1000], F(2),
           128, expect=[128, 129, 130, 255, 1, 0])
    x = f32([[[[-162, 10], [-100, 232], [-20, -50]], [[-76, 0], [0, 252], [32, -44]],
              [[245, -485], [-960, -270], [-375, -470]]]])
    s = f32([2, 4, 5])
    zp = np.array([84, 24, 196], dtype=np.uint8)
    ex = (x / s.reshape(1, 3, 1, 1) + zp.reshape(1, 3, 1, 1)).astype(np.uint8)
    add_ql("spec_quantizelinear_axis", "uint8", 1, x.shape, 1, 0, x, s, zp, expect=ex.ravel())
    x = f32([[6.0, 12.0, 50.0, 5.0], [1.0, 8.0, 4.0, 5.0], [0.0, 20.0, 10.0, 4.0]])
    s = f32([[1.5, 2.5], [3.0, 4.9], [5.1, 6.9]])
    zp = np.array([[0, 1], [1, 0], [2, 3]], dtype=np.uint8)
    ex = np.rint(x / np.repeat(s, 2, axis=1) + np.repeat(zp, 2, axis=1)).astype(np.uint8)
    add_ql("spec_quantizelinear_blocked_asymmetric", "uint8", 1, x.shape, 1, 2, x, s, zp,
           expect=ex.ravel())
    x = f32([[6.0, -8, -10, 5.0], [1.0, 8.0, 4.0, 5.0], [0.0, 20.0, 10.0, 4.0]])
    ex = np.clip(np.rint(x / np.repeat(s, 2, axis=1)), -32768, 32767).astype(np.int16)
    add_ql("spec_quantizelinear_blocked_symmetric", "int16", 1, x.shape, 1, 2, x, s,
           np.zeros(s.shape, np.int64), expect=ex.ravel())
    # fp8 examples: outputs published as values [0, 0.5, 1, 448, 96] / [0, 0.5, 1, 49152, 96]
    add_ql("spec_quantizelinear_e4m3fn", "e4m3fn", 1, (5,), 0, 0, [0.0, 1.0, 2.0, 100000.0, 200.0],
           F(2), 0, expect=fp8_encode([0, 0.5, 1, 448, 96], "e4m3fn", 1))
    add_ql("spec_quantizelinear_e5m2", "e5m2", 1, (5,), 0, 0, [0.0, 1.0, 2.0, 100000.0, 200.0],
           F(2), 0, expect=fp8_encode([0, 0.5, 1, 49152, 96], "e5m2", 1))
    add_ql("spec_quantizelinear_int16", "int16", 1, (16,), 0, 0,
           [0.0, -514.0, 3.0, -3.0, 2.9, -2.9, 3.1, -3.1, 65022.0, -66046.0, 65023.0, -66047.0,
            65024.0, -66048.0, 70000.0, -70000.0], F(2), 256,
           expect=[256, -1, 258, 254, 257, 255, 258, 254, 32767, -32767, 32767, -32768, 32767,
                   -32768, 32767, -32768])
    x4 = [[0.0, 2.5, 4.8, 8.6], [-30, -20, 6, 9], [12, 15, 16, 40]]
    add_ql("spec_quantizelinear_int4", "int4", 1, (3, 4), 0, 0, x4, f32([2.0, 3.0, 4.0]),
           [1, 1, 1], expect=[1, 2, 3, 5, -8, -6, 3, 4, 4, 5, 5, 7])
    add_ql("spec_quantizelinear_uint16", "uint16", 1, (12,), 0, 0,
           [0.0, -128.0, 3.0, -3.0, 2.9, -2.9, 3.1, -3.1, 65536.0, -65534.0, 70000.0, -70000.0],
           F(2), 32767, expect=[32767, 32703, 32769, 32765, 32768, 32766, 32769, 32765, 65535, 0,
                                65535, 0])
    add_ql("spec_quantizelinear_uint4", "uint4", 1, (3, 4), 0, 0, x4, f32([2.0, 3.0, 4.0]),
           [1, 1, 1], expect=[1, 2, 3, 5, 0, 0, 3, 4, 4, 5, 5, 11])
    # DequantizeLinear
    add_dl("spec_dequantizelinear", "uint8", (4,), 0, 0, [0, 3, 128, 255], F(2), 128,
           expect=[-256, -250, 0, 254])
    q = np.array([[[[3, 89], [34, 200], [74, 59]], [[5, 24], [24, 87], [32, 13]],
                   [[245, 99], [4, 142], [121, 102]]]])
    s = f32([2, 4, 5])
    zp = np.array([84, 24, 196])
    ex = (q.astype(np.float32) - zp.reshape(1, 3, 1, 1).astype(np.float32)) * s.reshape(1, 3, 1, 1)
    add_dl("spec_dequantizelinear_axis", "uint8", q.shape, 1, 0, q, s, zp, expect=ex)
    q = np.array([[[[3, 89], [34, 200], [74, 59]], [[5, 24], [24, 87], [32, 13]],
                   [[5, 12], [12, 33], [65, 42]], [[245, 99], [4, 142], [121, 102]]]])
    s = f32([[[[3.0, 2.0], [4.0, 1.0], [2.0, 2.0]], [[5.0, 2.0], [4.0, 3.0], [5.0, 2.0]]]])
    zp = np.array([[[[1, 0], [0, 1], [2, 20]], [[3, 2], [4, 3], [15, 2]]]])
    ex = (q.astype(np.float32) - np.repeat(zp, 2, axis=1).astype(np.float32)) * \
        np.repeat(s, 2, axis=1)
    add_dl("spec_dequantizelinear_blocked", "uint8", q.shape, 1, 2, q, s, zp, expect=ex)
    c = fp8_encode([0, 0.5, 1, 448, -104], "e4m3fn", 1)
    add_dl("spec_dequantizelinear_e4m3fn", "e4m3fn", (5,), 0, 0, c, F(2), 0,
           expect=[0.0, 1.0, 2.0, 896.0, -208.0])
    add_dl("spec_dequantizelinear_e4m3fn_zero_point", "e4m3fn", (5,), 0, 0, c, F(2), 0,
           expect=[0.0, 1.0, 2.0, 896.0, -208.0])
    c = fp8_encode([0, 0.5, 1, 49152, -96], "e5m2", 1)
    add_dl("spec_dequantizelinear_e5m2", "e5m2", (5,), 0, 0, c, F(2), 0,
           expect=[0.0, 1.0, 2.0, 98304.0, -192.0])
    add_dl("spec_dequantizelinear_int16", "int16", (4,), 0, 0, [-300, -30, -1025, 1270], F(2),
           -1024, expect=[1448.0, 1988.0, -2.0, 4588.0])
    add_dl("spec_dequantizelinear_int4", "int4", (5,), 0, 0, [0, 1, 7, -4, -8], F(2), 1,
           expect=[-2, 0, 12, -10, -18])
    add_dl("spec_dequantizelinear_uint16", "uint16", (4,), 0, 0, [30000, 31000, 32768, 33000],
           F(2), 32767, expect=[-5534.0, -3534.0, 2.0, 466.0])
    add_dl("spec_dequantizelinear_uint4", "uint4", (5,), 0, 0, [0, 1, 7, 10, 15], F(2), 1,
           expect=[-2, 0, 12, 18, 28])
    # DynamicQuantizeLinear: published comments give the scale and zero point; y as the
    # example computes it (np.round(X / Y_Scale) + Y_ZeroPoint, clipped)
    for nm, X, es, ez in [
            ("spec_dynamicquantizelinear", [0, 2, -3, -2.5, 1.34, 0.5], "0.0196078438", 153),
            ("spec_dynamicquantizelinear_max_adjusted", [-1.0, -2.1, -1.3, -2.5, -3.34, -4.0],
             "0.0156862754", 255),
            ("spec_dynamicquantizelinear_min_adjusted",
             [1, 2.1, 1.3, 2.5, 3.34, 4.0, 1.5, 2.6, 3.9, 4.0, 3.0, 2.345], "0.0156862754", 0)]:
        X = f32(X)
        x_min = np.minimum(0, np.min(X))
        x_max = np.maximum(0, np.max(X))
        Y_Scale = np.float32((x_max - x_min) / (255 - 0))
        Y_ZeroPoint = np.clip(round((0 - x_min) / Y_Scale), 0, 255).astype(np.uint8)
        Y = np.clip(np.round(X / Y_Scale) + Y_ZeroPoint, 0, 255).astype(np.uint8)
        assert "%.9g" % Y_Scale == es and int(Y_ZeroPoint) == ez, (nm, Y_Scale, Y_ZeroPoint)
        add_dql(nm, X, expect=(Y_Scale, ez, Y))
    # QLinearMatMul 2D example (the 3D example is the same matrices twice)
    for dt in ("uint8", "int8"):
        a = np.array([[208, 236, 0, 238], [3, 214, 255, 29]])
        b = np.array([[152, 51, 244], [60, 26, 255], [0, 127, 246], [127, 254, 247]])
        off = 127 if dt == "int8" else 0
        out = [[41, -12, -9], [1, -75, -128]] if dt == "int8" else [[168, 115, 255], [1, 66, 151]]
        # the example subtracts 127 then casts with .astype(np.int8): 255 - 127 = 128 wraps
        a = (a - off).astype(getattr(np, dt))
        b = (b - off).astype(getattr(np, dt))
        add_qmm("spec_qlinearmatmul_2D_" + dt, dt, a, b, [0.0066, 0.00705, 0.0107],
                [113 - off, 114 - off, 118 - off], expect=out)


def logu(rng, lo, hi, n=None):
    return f32(np.exp(rng.uniform(np.log(lo), np.log(hi), n)))


def nd_params(rng, shape, axis, block, gen):
    """parameter array shaped for ONNX: 1-D (block 0) or shape with axis cut (block > 0)"""
    if block == 0:
        return gen(shape[axis])
    ps = list(shape)
    ps[axis] = -(-shape[axis] // block)
    return gen(int(np.prod(ps))).reshape(ps)


def int_ql_cases(rng):
    for dt in INT_TYPES:
        lo, hi = INT_RANGE[dt]
        span = hi - lo
        mid = (lo + hi) // 2

        def rand_x(n, s, z, margin=0.1):
            t = rng.uniform(lo - z - margin * span, hi - z + margin * span, n)
            return f32(t * np.float64(s))

        # per tensor, random
        for i, n in enumerate([1, 17, 300, 1000] + ([5000] if dt in ("int8", "uint8") else [])):
            s = logu(rng, 1e-3, 10.0)[()] if i != 2 else F(1.0)
            z = int(rng.integers(lo, hi + 1))
            add_ql("ql_pt_%s_n%d" % (dt, n), dt, 1, (n,), 0, 0, rand_x(n, s, z), s, z)
        # exact ties x / s == k + 0.5 (checked in float32), every zero point position
        for zname, z in (("zmid", mid), ("zlo", lo), ("zhi", hi)):
            xs, s_list = [], [F(1.0), F(0.25), F(3.0), F(0.1), F(7.3)]
            s = s_list[len(CASES) % len(s_list)]
            ks = list(range(-12, 12)) + [lo - z - 1, lo - z, hi - z - 1, hi - z]
            for k in ks:
                for cand in (F((k + 0.5) * np.float64(s)),):
                    if F(cand / s) == F(k + 0.5):
                        xs.append(cand)
            # search for more ties with this s
            tries = 0
            while len(xs) < 40 and tries < 20000:
                tries += 1
                k = int(rng.integers(lo - z - 3, hi - z + 3))
                cand = F((k + 0.5) * np.float64(s))
                for c in (cand, np.nextafter(cand, F(np.inf)), np.nextafter(cand, F(-np.inf))):
                    if F(c / s) == F(k + 0.5):
                        xs.append(c)
                        break
            xs = f32(xs)
            t = xs / s
            assert np.all(t - np.floor(t) == F(0.5))
            add_ql("ql_ties_%s_%s" % (dt, zname), dt, 1, (len(xs),), 0, 0, xs, s, z)
        # float32-division traps: exact x/s is not a tie but the float32 quotient is, and
        # values where x * (1/s) rounds differently from x / s
        s = F(0.1) if dt not in ("int4", "uint4") else F(0.3)
        z = 0 if lo < 0 else mid
        xs = []
        tries = 0
        while len(xs) < 48 and tries < 400000:
            tries += 1
            k = int(rng.integers(max(lo - z, -3000), min(hi - z, 3000)))
            c = F((k + 0.5) * np.float64(s))
            for d in range(-3, 4):
                cc = c
                for _ in range(abs(d)):
                    cc = np.nextafter(cc, F(np.inf) if d > 0 else F(-np.inf))
                q1 = F(cc / s)
                q2 = F(cc * F(F(1) / s))
                qd = np.float64(cc) / np.float64(s)
                if (np.rint(q1) != np.rint(q2)) or (q1 - np.floor(q1) == F(0.5)
                                                    and qd - np.floor(qd) != 0.5):
                    xs.append(cc)
        add_ql("ql_divtrap_%s" % dt, dt, 1, (len(xs),), 0, 0, f32(xs), s, z)
        # zero point added after rounding: q = k + 0.5 +- a few ulps, large |zp| (float32
        # q + zp would round onto the tie)
        z = hi - 2 if hi > 20 else hi
        zz = lo + 2 if lo < -20 else lo
        xs = []
        for zp_ in (z,):
            for k in (0, 1, -1, 2, -2, -3):
                for d in (1, 2, 3, -1, -2, -3):
                    q = F(k + 0.5)
                    for _ in range(abs(d)):
                        q = np.nextafter(q, F(np.inf) if d > 0 else F(-np.inf))
                    xs.append(q)
        add_ql("ql_zptrap_%s_zhi" % dt, dt, 1, (len(xs),), 0, 0, f32(xs), F(1.0), z)
        add_ql("ql_zptrap_%s_zlo" % dt, dt, 1, (len(xs),), 0, 0, f32(xs), F(1.0), zz)
        # saturation + signed zero + boundaries
        s = F(0.5)
        z = int(rng.integers(lo, hi + 1))
        b = [lo - z, hi - z]
        xs = [0.0, -0.0, 1e-30, -1e-30, 1e9, -1e9, 3e8, -3e8]
        for e in b:
            for d in (-1.5, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.5, 2, 100):
                xs.append((e + d) * 0.5)
        add_ql("ql_sat_%s" % dt, dt, 1, (len(xs),), 0, 0, f32(xs), s, z)
        # per axis
        for shape, axis in (((4, 6), 0), ((4, 6), 1), ((3, 4, 5), 0), ((3, 4, 5), 1),
                            ((3, 4, 5), 2), ((2, 33, 3), 1)):
            n = int(np.prod(shape))
            s = nd_params(rng, shape, axis, 0, lambda k: logu(rng, 1e-2, 4.0, k))
            z = nd_params(rng, shape, axis, 0, lambda k: rng.integers(lo, hi + 1, k))
            sE = np.moveaxis(np.broadcast_to(s, shape[:axis] + shape[axis + 1:] + (shape[axis],)),
                             -1, axis)
            zE = np.moveaxis(np.broadcast_to(z, shape[:axis] + shape[axis + 1:] + (shape[axis],)),
                             -1, axis)
            t = rng.uniform(lo - 0.1 * span, hi + 0.1 * span, shape) - zE
            add_ql("ql_axis_%s_%s_ax%d" % (dt, "x".join(map(str, shape)), axis), dt, 1, shape,
                   axis, 0, f32(t * sE), s, z)
        # blocked
        for shape, axis, blk in (((4, 37), 1, 16), ((70, 3), 0, 32), ((2, 7, 3), 1, 2),
                                 ((2, 7, 3), 1, 3), ((5, 6), 1, 1), ((3, 2, 64), 2, 32),
                                 ((3, 5, 40), 2, 16), ((9, 4), 0, 3)):
            s = nd_params(rng, shape, axis, blk, lambda k: logu(rng, 1e-2, 4.0, k))
            z = nd_params(rng, shape, axis, blk, lambda k: rng.integers(lo, hi + 1, k))
            sE = np.repeat(s, blk, axis=axis).take(range(shape[axis]), axis=axis)
            zE = np.repeat(z, blk, axis=axis).take(range(shape[axis]), axis=axis)
            t = rng.uniform(lo - 0.1 * span, hi + 0.1 * span, shape) - zE
            add_ql("ql_block_%s_%s_ax%d_b%d" % (dt, "x".join(map(str, shape)), axis, blk), dt, 1,
                   shape, axis, blk, f32(t * sE), s, z)


def fp8_specials(fmt):
    """float32 values around every interesting point of fmt (as x / s with s = 1)."""
    mx = fp8_max(fmt)
    _, mb, bias, _ = FP8[fmt]
    tiny = math.ldexp(1.0, 1 - bias - mb)         # smallest subnormal
    vals = [0.0, -0.0, float("nan"), -float("nan"), float("inf"), -float("inf"), mx, -mx,
            1e30, -1e30, 3.4e38, -3.4e38, tiny, -tiny, tiny / 2, -tiny / 2, tiny * 0.75,
            -tiny * 0.75, tiny * 0.25, -tiny * 0.25, tiny * 1.5, tiny * 2.5, -tiny * 2.5,
            tiny * 3.5, math.ldexp(1.0, 1 - bias), math.ldexp(1.0, 1 - bias) * (1 - 2 ** -10),
            1e-30, -1e-30, 1.0, -1.0]
    ulp_max = math.ldexp(1.0, math.frexp(mx)[1] - 1 - mb)
    for d in (0.25, 0.5, 0.5000001, 0.75, 1.0, 1.5, 2.0, 4.0, 64.0):
        vals += [mx + d * ulp_max, -(mx + d * ulp_max)]
    vals += [mx - ulp_max / 2, mx - ulp_max / 4, mx - ulp_max * 0.75]
    # ties inside the grid: midpoint between consecutive values, and +-1 float32 ulp
    tab = sorted(fp8_table(fmt))
    for i in range(0, len(tab) - 1, max(1, len(tab) // 24)):
        m = (tab[i] + tab[i + 1]) / 2
        fm = F(m)
        vals += [m, -m, float(np.nextafter(fm, F(np.inf))), float(np.nextafter(fm, F(-np.inf)))]
    return f32(vals)


def fp8_ql_cases(rng):
    for fmt in FP8_TYPES:
        mx = fp8_max(fmt)
        _, mb, bias, _ = FP8[fmt]
        for sat in (1, 0):
            xs = fp8_specials(fmt)
            add_ql("ql_special_%s_sat%d" % (fmt, sat), fmt, sat, (len(xs),), 0, 0, xs, F(1.0), 0)
            s = F(0.37)
            xs2 = f32(np.float64(fp8_specials(fmt)) * np.float64(s))
            add_ql("ql_special_s037_%s_sat%d" % (fmt, sat), fmt, sat, (len(xs2),), 0, 0, xs2, s, 0)
            for n in (64, 1500):
                s = logu(rng, 1e-3, 1e3)[()]
                e = rng.uniform(-bias - mb - 2, math.log2(mx) + 1.5, n)
                xs = f32(np.where(rng.random(n) < 0.5, -1, 1) * np.exp2(e) * np.float64(s))
                add_ql("ql_rand_%s_sat%d_n%d" % (fmt, sat, n), fmt, sat, (n,), 0, 0, xs, s, 0)
            for shape, axis, blk in (((4, 6), 1, 0), ((3, 4, 5), 2, 0), ((3, 4, 5), 0, 0),
                                     ((4, 37), 1, 16), ((2, 70, 2), 1, 32), ((5, 7), 1, 3)):
                s = nd_params(rng, shape, axis, blk, lambda k: logu(rng, 1e-3, 1e2, k))
                sE = (np.repeat(s, blk, axis=axis).take(range(shape[axis]), axis=axis) if blk
                      else np.moveaxis(np.broadcast_to(
                          s, shape[:axis] + shape[axis + 1:] + (shape[axis],)), -1, axis))
                e = rng.uniform(-bias - mb - 1, math.log2(mx) + 1, shape)
                xs = f32(np.where(rng.random(shape) < 0.5, -1, 1) * np.exp2(e) * sE)
                kind = "block" if blk else "axis"
                add_ql("ql_%s_%s_sat%d_%s_ax%d%s" % (kind, fmt, sat, "x".join(map(str, shape)),
                                                     axis, "_b%d" % blk if blk else ""),
                       fmt, sat, shape, axis, blk, xs, s, np.zeros(s.shape, np.int64))


def dl_cases(rng):
    for dt in INT_TYPES:
        lo, hi = INT_RANGE[dt]
        n = hi - lo + 1
        if n <= 256:
            q = np.arange(lo, hi + 1)
        else:
            q = np.concatenate([np.arange(lo, lo + 40), np.arange(hi - 39, hi + 1),
                                rng.integers(lo, hi + 1, 920)])
        for zname, z in (("zlo", lo), ("zhi", hi), ("zmid", (lo + hi) // 2), ("zr", None)):
            zz = int(rng.integers(lo, hi + 1)) if z is None else z
            s = logu(rng, 1e-4, 10.0)[()] if z is None else F(0.1)
            add_dl("dl_pt_%s_%s" % (dt, zname), dt, (len(q),), 0, 0, q, s, zz)
        for shape, axis, blk in (((4, 6), 0, 0), ((3, 4, 5), 1, 0), ((3, 4, 5), 2, 0),
                                 ((4, 37), 1, 16), ((70, 3), 0, 32), ((2, 7, 3), 1, 2),
                                 ((2, 7, 3), 1, 3), ((5, 6), 1, 1), ((3, 2, 64), 2, 32)):
            s = nd_params(rng, shape, axis, blk, lambda k: logu(rng, 1e-3, 10.0, k))
            z = nd_params(rng, shape, axis, blk, lambda k: rng.integers(lo, hi + 1, k))
            q = rng.integers(lo, hi + 1, shape)
            kind = "block" if blk else "axis"
            add_dl("dl_%s_%s_%s_ax%d%s" % (kind, dt, "x".join(map(str, shape)), axis,
                                           "_b%d" % blk if blk else ""), dt, shape, axis, blk, q,
                   s, z)
    for fmt in FP8_TYPES:
        q = np.arange(256)
        add_dl("dl_allcodes_%s_s1" % fmt, fmt, (256,), 0, 0, q, F(1.0), 0)
        add_dl("dl_allcodes_%s_s" % fmt, fmt, (256,), 0, 0, q, F(0.0123), 0)
        add_dl("dl_allcodes_%s_big" % fmt, fmt, (256,), 0, 0, q, F(3e35), 0)
        for shape, axis, blk in (((4, 64), 0, 0), ((2, 64, 2), 1, 0), ((4, 64), 1, 16),
                                 ((2, 128), 1, 3), ((128, 2), 0, 32)):
            s = nd_params(rng, shape, axis, blk, lambda k: logu(rng, 1e-3, 10.0, k))
            q = np.arange(256).reshape(shape) if np.prod(shape) == 256 else \
                rng.integers(0, 256, shape)
            kind = "block" if blk else "axis"
            add_dl("dl_%s_%s_%s_ax%d%s" % (kind, fmt, "x".join(map(str, shape)), axis,
                                           "_b%d" % blk if blk else ""), fmt, shape, axis, blk, q,
                   s, np.zeros(s.shape, np.int64))


def dql_zp_tie(rng, want):
    """x with min/max making izp = 0 - minx / s an exact .5 in float32"""
    found = []
    tries = 0
    while len(found) < want and tries < 200000:
        tries += 1
        mn = -F(rng.integers(1, 4000)) / F(2 ** int(rng.integers(0, 8)))
        mx = F(rng.integers(1, 4000)) / F(2 ** int(rng.integers(0, 8)))
        s = F(F(mx - mn) / F(255))
        izp = F(F(0) - F(mn / s))
        if izp - np.floor(izp) == F(0.5) and 0 < izp < 255:
            found.append((mn, mx))
    return found


def dql_cases(rng):
    add_dql("dql_zeros", np.zeros(10))
    add_dql("dql_negzero", f32([-0.0, 0.0, -0.0]))
    add_dql("dql_single_pos", [3.0])
    add_dql("dql_single_neg", [-3.0])
    add_dql("dql_const_pos", np.full(50, 2.75))
    add_dql("dql_const_neg", np.full(50, -0.3))
    add_dql("dql_all_pos", rng.uniform(0.5, 7.0, 200))
    add_dql("dql_all_neg", rng.uniform(-9.0, -0.01, 200))
    add_dql("dql_tiny", f32(rng.uniform(-1e-30, 2e-30, 100)))
    add_dql("dql_huge", f32(rng.uniform(-1e37, 3e37, 100)))
    add_dql("dql_sym", f32([-1, 1, 0.5, -0.5, 0.25, 0.75]))
    for i, n in enumerate((7, 100, 1000, 5000)):
        add_dql("dql_rand_n%d" % n, f32(rng.standard_normal(n) * (i + 1) + 0.3 * i))
    for j, (mn, mx) in enumerate(dql_zp_tie(rng, 8)):
        x = f32(np.concatenate([[mn, mx], rng.uniform(mn, mx, 30)]))
        s = F(F(mx - mn) / F(255))
        # include exact ties of x / s too
        k = rng.integers(-100, 100, 10)
        xt = f32((k + 0.5) * np.float64(s))
        xt = xt[(xt >= mn) & (xt <= mx) & (f32(xt / s) - np.floor(f32(xt / s)) == F(0.5))]
        add_dql("dql_zptie_%d" % j, np.concatenate([x, xt]))


def qmm_cases(rng):
    shapes = [(1, 1, 1), (2, 3, 4), (3, 7, 2), (4, 16, 4), (5, 16, 3), (8, 8, 8), (8, 33, 5),
              (6, 32, 5), (7, 1, 3)]
    for dt in ("int8", "uint8"):
        lo, hi = INT_RANGE[dt]
        for (M, K, N) in shapes:
            a = rng.integers(lo, hi + 1, (M, K))
            b = rng.integers(lo, hi + 1, (K, N))
            zp = [int(v) for v in rng.integers(lo, hi + 1, 3)]
            as_, bs = logu(rng, 1e-3, 0.1)[()], logu(rng, 1e-3, 0.1)[()]
            A = a - zp[0]
            B = b - zp[1]
            C = A @ B
            # y_scale chosen so the output spans the range, with some saturation
            ys = F(np.float64(as_) * np.float64(bs) * max(1, np.abs(C).max()) / 100.0)
            add_qmm("qmm_%s_%dx%dx%d" % (dt, M, K, N), dt, a, b, [as_, bs, ys], zp)
        # saturation (small y_scale)
        a = rng.integers(lo, hi + 1, (4, 9))
        b = rng.integers(lo, hi + 1, (9, 3))
        add_qmm("qmm_%s_saturate" % dt, dt, a, b, [F(0.05), F(0.02), F(0.001)],
                [lo + 3, hi - 3, (lo + hi) // 2])
        # traps: float32 products (float32(C) * m) would round differently than the double
        # product on some element; search seeds
        for j in range(3):
            for _ in range(20000):
                M, K, N = 8, 33, 5
                a = rng.integers(lo, hi + 1, (M, K))
                b = rng.integers(lo, hi + 1, (K, N))
                zp = [int(v) for v in rng.integers(lo, hi + 1, 3)]
                sc = [logu(rng, 1e-4, 1.0)[()] for _ in range(3)]
                C = (a - zp[0]) @ (b - zp[1])
                m = F(F(sc[0] * sc[1]) / sc[2])
                if not (1e-7 < m < 1e-2):
                    continue
                yd = np.rint(C.astype(np.float64) * np.float64(m) + zp[2])
                y32 = np.rint(F(f32(C) * m) + F(zp[2]))
                y32b = np.rint(f32(C) * m) + zp[2]
                inr = (yd >= lo) & (yd <= hi)
                if np.any(inr & ((y32 != yd) | (y32b != yd))):
                    add_qmm("qmm_%s_f32trap_%d" % (dt, j), dt, a, b, sc, zp)
                    break


def build():
    del CASES[:]
    rng = np.random.default_rng(20240611)
    spec_cases()
    int_ql_cases(rng)
    fp8_ql_cases(rng)
    dl_cases(rng)
    dql_cases(rng)
    qmm_cases(rng)
    return CASES


def header_lines(cases):
    cnt = {}
    for c in cases:
        k = c["op"] + " " + c.get("dtype", "uint8")
        cnt[k] = cnt.get(k, 0) + 1
    lines = [
        "%s - generated by %s; do not edit. Regenerate: /usr/bin/python3 %s" % (OUT, GEN, GEN),
        "ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear / QLinearMatMul golden",
        "data from the ONNX spec (docs/Operators.md) and reference implementation",
        "(onnx/reference/ops, onnx/onnx@f7546912001b, 1.23.0); formulas in the generator's docstring.",
        "Tokens are separated by single spaces; floats are float32 bit patterns (8 hex digits).",
        "ql NAME DTYPE SAT OUTER LEN INNER BLOCK NPARAM      QuantizeLinear",
        "    DTYPE: int8 uint8 int16 uint16 int4 uint4 e4m3fn e4m3fnuz e5m2 e5m2fnuz; SAT 1|0"
        " (integer types: 1)",
        "    the input as [OUTER][LEN][INNER] row-major (axis = LEN); per tensor: NPARAM 1, BLOCK 0;",
        "    per axis: BLOCK 0, NPARAM = LEN; blocked: BLOCK > 0, NPARAM = OUTER*ceil(LEN/BLOCK)*INNER,",
        "    parameters stored [OUTER][ceil(LEN/BLOCK)][INNER] row-major",
        "s HEX ...        y_scale, NPARAM float32 bit patterns",
        "z INT ...        y_zero_point, NPARAM decimal integers (fp8: 0)",
        "x HEX ...        input",
        "y INT ...        output, one decimal per element (integer types: the value, not packed;"
        " fp8: the code 0..255)",
        "end",
        "dl NAME DTYPE OUTER LEN INNER BLOCK NPARAM         DequantizeLinear (same layout), then"
        " lines s, z, q (INT per element), y (HEX per element), end",
        "dql NAME COUNT                                     DynamicQuantizeLinear, then x HEX...,"
        " s HEX, z INT, y INT..., end",
        "qmm NAME DTYPE M K N                               QLinearMatMul, DTYPE int8|uint8 for a,"
        " b and y; then lines a INT... (MxK row-major), b INT... (KxN), p HEX HEX HEX (a_scale"
        " b_scale y_scale), zp INT INT INT (a_zp b_zp y_zp), y INT... (MxN), end",
        "NaN outputs of dl: a NaN code decodes to 7fc00000 (ffc00000 with the code's sign bit, fnuz"
        " 0x80 included, as ml_dtypes); NaN * s keeps it. A C test may compare NaN as NaN.",
        "cases: %d total; %s" % (len(cases), ", ".join("%s %d" % (k, v)
                                                        for k, v in sorted(cnt.items()))),
    ]
    return ["# " + l for l in lines]


def ints(a):
    return " ".join(str(int(v)) for v in np.asarray(a).reshape(-1))


def hexs(a):
    return " ".join(hx(v) for v in np.asarray(a, dtype=np.float32).reshape(-1))


def render(cases):
    out = header_lines(cases)
    for c in cases:
        op = c["op"]
        if op == "ql":
            out.append("ql %s %s %d %d %d %d %d %d" % (c["name"], c["dtype"], c["sat"], c["outer"],
                                                     c["ln"], c["inner"], c["block"], c["s"].size))
            out += ["s " + hexs(c["s"]), "z " + ints(c["z"]), "x " + hexs(c["x"]),
                    "y " + ints(c["y"]), "end"]
        elif op == "dl":
            out.append("dl %s %s %d %d %d %d %d" % (c["name"], c["dtype"], c["outer"], c["ln"],
                                                  c["inner"], c["block"], c["s"].size))
            out += ["s " + hexs(c["s"]), "z " + ints(c["z"]), "q " + ints(c["q"]),
                    "y " + hexs(c["y"]), "end"]
        elif op == "dql":
            out.append("dql %s %d" % (c["name"], c["x"].size))
            out += ["x " + hexs(c["x"]), "s " + hx(c["s"]), "z %d" % c["z"], "y " + ints(c["y"]),
                    "end"]
        else:
            M, K = c["a"].shape
            N = c["b"].shape[1]
            out.append("qmm %s %s %d %d %d" % (c["name"], c["dtype"], M, K, N))
            out += ["a " + ints(c["a"]), "b " + ints(c["b"]), "p " + hexs(c["sc"]),
                    "zp " + ints(c["zp"]), "y " + ints(c["y"]), "end"]
    return out


def main():
    check = "--check" in sys.argv
    lines = render(build())
    path = os.path.join(ROOT, "tests", "data", OUT)
    text = "\n".join(lines) + "\n"
    if check:
        old = open(path).read() if os.path.exists(path) else ""
        if old != text:
            print("DIFFERS: %s" % path)
            sys.exit(1)
        print("ok: %s reproduces (%d cases)" % (path, len(CASES)))
        sys.exit(0)
    with open(path, "w") as f:
        f.write(text)
    print("wrote %s (%d lines, %d cases, %d bytes)" % (path, len(lines), len(CASES), len(text)))


if __name__ == "__main__":
    main()
