#!/usr/bin/python3
"""gen_quant.py - golden data for tests/test_quantize.c (qmx_compute_qparams / qmx_quantize /
qmx_dequantize), computed by an independent numpy reference of each origin's published formula.

Run from the repository root with Debian's python3 + numpy (apt-get install python3-numpy):
    /usr/bin/python3 tests/gen/gen_quant.py          # rewrites tests/data/quant_*.txt
    /usr/bin/python3 tests/gen/gen_quant.py --check  # regenerates in memory, diffs the files

Everything here is written from the origins' formulas as summarised in the project's
SEMANTICS.md (AQT v2 int_numerics.py / calibration.py / aqt_tensor.py / fp8_numerics.py, Qwix
qarray.py / numerics.py, Flax fp8_ops.py) and from the qmx.h documentation of the API (view,
granularity, scale order, int4 packing, stochastic rounding stream), NOT from qmx's C code.
All arithmetic that the origins do in float32 is done here with numpy float32 scalars, one
operation at a time in the origin's order. Rounding to an integer, the fp8 cast and the RNG
are done exactly with Python integers / fractions.

Formulas (x, s, t float32; RNE = round half to even; HA = round half away from zero):
  AQT int (IntSymmetric, preserve_zero, clip, round; AbsMaxCalibration):
      B = qmax + 0.5 (preserve_max_val: qmax); absmax == 0 -> absmax = 1; s = absmax / B
      inv = 1 / s (an infinite inv -> 1);  t = x * inv;  q = RNE(clip(t, -qmax, qmax))
      (unsigned dtypes, a qmx extension: clip to [0, qmax])
  Qwix int symmetric ("absmax"): B = 127.5 int8, 7.5 int4, 255.5 uint8, 15.5 uint4 (qmx
      extension), 32768 int16; s = absmax / B; s < sqrt(FLT_MIN) = 2^-63 -> s = 1
      t = x / s;  q = saturate(RNE(t)) into the dtype's full range
  Qwix int asymmetric ("minmax"): lo = min(min x, 0), hi = max(max x, 0);
      s = (hi - lo) / (qmax - qmin) (both f32 ops); guard as above;
      zp = saturate(RNE(qmin - lo / s));  t = x / s + zp (f32 add);  q = saturate(RNE(t))
  TFLite symmetric: s = absmax / qmax (absmax == 0 -> s = 1); q = clamp(HA(x / s), -qmax, qmax)
  TFLite asymmetric: s = (hi - lo) / (qmax - qmin) (s == 0 -> 1), zp as Qwix,
      q = clamp(HA(x / s) + zp, qmin, qmax)
  narrow_range: the clamp range becomes [-qmax, qmax] (scales and zero points unchanged)
  Rounding override: NEAREST_EVEN -> RNE, HALF_AWAY -> HA, in place of the recipe's own.
  Stochastic: one draw per element in flat order, u = (next_u32 >> 8) * 2^-24, noise = u - 0.5
      (exact); added in f32 after the scale step (and after Qwix's float zp add), before the
      clip and an RNE round (TFLite's zp is added after that round, as without noise).
      RNG: xoshiro128** 1.1 (Blackman & Vigna), state = splitmix64(seed) twice, each 64-bit
      output split low 32 bits first: s0 = lo(z1), s1 = hi(z1), s2 = lo(z2), s3 = hi(z2).
  NaN -> q = zero point (0 when symmetric); +-Inf -> the ends of the clamp range.
  fp8 (AQT fp8_numerics, Qwix float qtypes, Flax fp8_ops): B = finfo.max (448, 57344, 240,
      57344); s = absmax / B with the recipe's zero guard (AQT absmax 0 -> 1; Qwix 2^-63 -> 1;
      TFLite absmax 0 -> 1); t = x * inv (AQT, inv as above) or x / s (Qwix, TFLite);
      code = RNE_cast(clip(t, -max, max)); NaN stays NaN. The cast is computed exactly here
      (nearest representable value, ties to the even code), independent of qmx_fp8_from_f32.
  Dequantize: y = f32(q - zp) * s  (fp8: f32(decode(code)) * s).
"""
import math
import os
import random
import sys
from fractions import Fraction

import numpy as np

F = np.float32
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = "tests/gen/gen_quant.py"
SQRT_FLT_MIN = F(2.0 ** -63)   # sqrt(2^-126), exact

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15),
             "int16": (-32768, 32767), "int2": (-2, 1), "uint2": (0, 3), "int3": (-4, 3),
             "int5": (-16, 15), "int6": (-32, 31), "int7": (-64, 63)}
FP8_FMT = {  # name: (exponent bits, mantissa bits, bias, kind)
    "fp8_e4m3fn": (4, 3, 7, "fn"), "fp8_e5m2": (5, 2, 15, "ieee"),
    "fp8_e4m3fnuz": (4, 3, 8, "fnuz"), "fp8_e5m2fnuz": (5, 2, 16, "fnuz")}


def f32bits(v):
    return int(np.array([v], dtype=F).view(np.uint32)[0])


def bits2f(u):
    return np.array([u], dtype=np.uint32).view(F)[0]


# ---- exact integer rounding of a float32 value ------------------------------------------
def round_rne(t):
    t = float(t)
    fl = math.floor(t)
    d = t - fl                      # exact: |t| < 2^24 after the clip
    if d > 0.5 or (d == 0.5 and fl % 2 == 1):
        fl += 1
    return int(fl)


def round_ha(t):
    t = float(t)
    a = abs(t)
    fl = math.floor(a)
    if a - fl >= 0.5:
        fl += 1
    return int(fl) if t >= 0 else -int(fl)


# ---- RNG: splitmix64 + xoshiro128** 1.1 (Blackman & Vigna, public-domain reference) ----
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def rotl32(x, k):
    return ((x << k) | (x >> (32 - k))) & M32


class Xoshiro128ss:
    def __init__(self, seed=None, state=None):
        if state is not None:
            self.s = list(state)
            return
        st, z1 = splitmix64(seed & M64)
        st, z2 = splitmix64(st)
        self.s = [z1 & M32, z1 >> 32, z2 & M32, z2 >> 32]

    def next_u32(self):
        s = self.s
        result = (rotl32((s[1] * 5) & M32, 7) * 9) & M32
        t = (s[1] << 9) & M32
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl32(s[3], 11)
        return result

    def next_noise(self):
        u = Fraction(self.next_u32() >> 8, 1 << 24) - Fraction(1, 2)
        v = F(float(u))
        assert Fraction(float(v)) == u      # exactly representable
        return v


def self_test_rng():
    # splitmix64, seed 1234567: the widely published first outputs (e.g. Rosetta Code)
    st, out = 1234567, []
    for _ in range(5):
        st, z = splitmix64(st)
        out.append(z)
    assert out == [6457827717110365317, 3203168211198807973, 9817491932198370423,
                   4593380528125082431, 16408922859458223821], out
    # xoshiro128** 1.1 from state {1, 2, 3, 4}: [11520, 0, 5927040, 70819200] (reference C)
    g = Xoshiro128ss(state=[1, 2, 3, 4])
    assert [g.next_u32() for _ in range(4)] == [11520, 0, 5927040, 70819200]


# ---- fp8: exact decode table and RNE cast ------------------------------------------------
def fp8_decode(code, fmt):
    eb, mb, bias, kind = FP8_FMT[fmt]
    sign = -1 if code & 0x80 else 1
    a = code & 0x7F
    e, m = a >> mb, a & ((1 << mb) - 1)
    emax = (1 << eb) - 1
    if kind == "fnuz" and code == 0x80:
        return float("nan")
    if kind == "fn" and a == 0x7F:
        return float("nan")
    if kind == "ieee" and e == emax:
        return sign * float("inf") if m == 0 else float("nan")
    if e == 0:
        v = Fraction(m, 1 << mb) * Fraction(2) ** (1 - bias)
    else:
        v = (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
    if kind == "fnuz" and code == 0x00:
        return 0.0
    return sign * float(v) if v != 0 or sign > 0 else -0.0


_FP8_TABLES = {}


def fp8_table(fmt):
    """Sorted list of (exact value, code) of the finite non-negative codes."""
    if fmt not in _FP8_TABLES:
        rows = []
        for c in range(0x80):
            v = fp8_decode(c, fmt)
            if math.isfinite(v):
                rows.append((Fraction(v), c))
        rows.sort()
        _FP8_TABLES[fmt] = rows
    return _FP8_TABLES[fmt]


def fp8_max(fmt):
    return F(float(fp8_table(fmt)[-1][0]))


def fp8_cast_rne(t, fmt):
    """clip(t, -max, max) then round to nearest, ties to even code. NaN -> None."""
    if math.isnan(float(t)):
        return None
    kind = FP8_FMT[fmt][3]
    mx = fp8_max(fmt)
    if t > mx:
        t = mx
    if t < -mx:
        t = -mx
    neg = math.copysign(1.0, float(t)) < 0
    a = abs(Fraction(float(t)))
    best = None
    for v, c in fp8_table(fmt):
        d = abs(v - a)
        if best is None or d < best[0] or (d == best[0] and c % 2 == 0):
            best = (d, c)
    code = best[1]
    if neg and not (kind == "fnuz" and code == 0):
        code |= 0x80
    return code


def fp8_is_nan_code(code, fmt):
    return math.isnan(fp8_decode(code, fmt))


# ---- the reference quantizer -----------------------------------------------------------
class Case:
    def __init__(self, name, dtype, gran, x, shape, axis=1, block=0, recipe="aqt",
                 rounding="default", asym=0, narrow=0, pmv=0, seed=None, scales=None, zps=None,
                 view_default=False, note=""):
        self.name, self.dtype, self.gran, self.shape = name, dtype, gran, tuple(shape)
        self.x = np.asarray(x, dtype=F).reshape(self.shape)
        self.axis, self.block, self.recipe, self.rounding = axis, block, recipe, rounding
        self.asym, self.narrow, self.pmv, self.seed = asym, narrow, pmv, seed
        self.given_scales, self.given_zps, self.view_default = scales, zps, view_default
        self.note = note
        self.rng_after = None


def groups(c):
    """(scale shape, list of index tuples/slices per group in qmx's scale order).
    Computed from the 3-D shape by slicing, independently of qmx's run iteration."""
    shp = c.shape
    if c.gran == "per_tensor":
        return [tuple(slice(None) for _ in shp)]
    k = c.axis
    if c.gran == "per_channel":
        out = []
        for i in range(shp[k]):
            sl = [slice(None)] * len(shp)
            sl[k] = i
            out.append(tuple(sl))
        return out
    bs = c.block
    nb = -(-shp[k] // bs)
    sshape = list(shp)
    sshape[k] = nb
    out = []
    for idx in np.ndindex(*sshape):       # row-major: (before k, block, after k)
        sl = [slice(i, i + 1) for i in idx]
        b = idx[k]
        sl[k] = slice(b * bs, min((b + 1) * bs, shp[k]))
        out.append(tuple(sl))
    return out


def clamp_range(c):
    lo, hi = INT_RANGE[c.dtype]
    # TFLite: symmetric weights (int8 / int4) clamp to [-qmax, qmax]; int16 is the 16x8
    # activation dtype, quantized by the QUANTIZE op (AffineQuantize), which clamps to the
    # full [-32768, 32767] (std::numeric_limits<int16_t>::min()).
    narrow = c.narrow or (not c.asym and (c.recipe == "aqt" or
                                          (c.recipe == "tflite" and c.dtype != "int16")))
    if narrow and lo < 0:
        lo = -hi
    return lo, hi


# QLoRA NormalFloat4 (Appendix E of the paper; the float32 values Qwix's numerics.py lists)
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], dtype=F)
INT_RANGE["nf4"] = (0, 15)


def sym_bound(c):
    if c.dtype in FP8_FMT:
        return fp8_max(c.dtype)
    if c.dtype == "nf4":
        return F(1.0)          # Qwix get_symmetric_bound('nf4')
    qmax = INT_RANGE[c.dtype][1]
    if c.recipe == "aqt":
        return F(qmax) if c.pmv else F(qmax + 0.5)
    if c.recipe == "qwix":
        return F(32768.0) if c.dtype == "int16" else F(qmax + 0.5)
    return F(qmax)


def group_qparams(c, g):
    """Scale and zero point of one group (g: float32 array of its finite values)."""
    with np.errstate(all="ignore"):
        if not c.asym:
            absmax = F(np.max(np.abs(g))) if g.size else F(0)
            if c.recipe == "aqt":
                if absmax == 0:
                    absmax = F(1)
                return F(absmax / sym_bound(c)), 0
            if c.recipe == "qwix":
                s = F(absmax / sym_bound(c))
                return (F(1) if s < SQRT_FLT_MIN else s), 0
            return (F(1) if absmax == 0 else F(absmax / sym_bound(c))), 0
        qmin, qmax = INT_RANGE[c.dtype]
        lo = min(F(np.min(g)), F(0)) if g.size else F(0)
        hi = max(F(np.max(g)), F(0)) if g.size else F(0)
        s = F(F(hi - lo) / F(qmax - qmin))
        if c.recipe == "qwix":
            if s < SQRT_FLT_MIN:
                s = F(1)
        elif s == 0:
            s = F(1)
        z = F(F(qmin) - F(lo / s))
        z = min(max(float(z), qmin), qmax)
        return s, round_rne(z)


def quant_one(c, x, s, zp, rng):
    """One element; returns the integer q or the fp8 code (None for a NaN code)."""
    with np.errstate(all="ignore"):
        if c.recipe == "aqt":
            inv = F(F(1) / s)
            if not math.isfinite(float(inv)):
                inv = F(1)
            t = F(x * inv)
        else:
            t = F(x / s)
        if c.dtype in FP8_FMT:
            return fp8_cast_rne(t, c.dtype)
        if c.dtype == "nf4":   # Qwix: argmin |bucket - t| in float32, the first index on ties
            if math.isnan(float(t)):
                return 7       # qmx's rule (the code of 0); not Qwix's
            return int(np.argmin(np.abs(NF4 - F(t))))
        zf = c.recipe == "qwix" and c.asym
        if zf:
            t = F(t + F(zp))
        mode = c.rounding
        if mode == "default":
            mode = "half_away" if c.recipe == "tflite" else "nearest_even"
        if mode == "stochastic":
            t = F(t + rng.next_noise())
            mode = "nearest_even"
        lo, hi = clamp_range(c)
        zi = 0 if zf else zp           # zero point added after rounding (TFLite)
        if math.isnan(float(t)):
            return zp
        t = min(max(float(t), lo - zi), hi - zi)
        r = round_rne(t) if mode == "nearest_even" else round_ha(t)
        return r + zi


def reference(c):
    """Scales, zero points, q, dequantized y; qp_mode (see the file header)."""
    grps = groups(c)
    finite = np.isfinite(c.x)
    allfinite = bool(finite.all())
    S, Z = [], []
    for sl in grps:
        g = c.x[sl]
        s, z = group_qparams(c, g[np.isfinite(g)])
        S.append(s)
        Z.append(z)
    qp_mode = 1 if allfinite else 2
    if c.given_scales is not None:
        S = [F(v) for v in c.given_scales]
        Z = list(c.given_zps) if c.given_zps is not None else [0] * len(S)
        qp_mode = 0 if allfinite else 2
    if any(not (math.isfinite(float(s)) and s > 0) for s in S):
        return S, Z, None, None, 3           # qmx's quantize takes only finite scales > 0
    gid = np.empty(c.shape, dtype=np.int64)
    for i, sl in enumerate(grps):
        gid[sl] = i
    rng = Xoshiro128ss(seed=c.seed) if c.rounding == "stochastic" else None
    xs, gs = c.x.reshape(-1), gid.reshape(-1)
    Q = [quant_one(c, xs[i], S[gs[i]], Z[gs[i]], rng) for i in range(xs.size)]
    Y = []
    with np.errstate(all="ignore"):
        for i, q in enumerate(Q):
            s = S[gs[i]]
            if c.dtype in FP8_FMT:
                Y.append(F(np.nan) if q is None else F(F(fp8_decode(q, c.dtype)) * s))
            elif c.dtype == "nf4":
                Y.append(F(NF4[q] * s))
            else:
                Y.append(F(F(q - Z[gs[i]]) * s))
    c.rng_after = rng.next_u32() if rng else None
    return S, Z, Q, Y, qp_mode


def view_of(c):
    if c.view_default:
        return 0, 0, 0
    shp = c.shape
    k = 1 if c.gran == "per_tensor" else c.axis
    return (int(np.prod(shp[:k], dtype=np.int64)), shp[k], int(np.prod(shp[k + 1:], dtype=np.int64)))


def pack2(q):
    """int2 / uint2: element 4i + k in bits 2k, 2k + 1 of byte i (ONNX INT2 order)"""
    b = bytearray((len(q) + 3) // 4)
    for i, v in enumerate(q):
        b[i // 4] |= (v & 3) << (2 * (i & 3))
    return bytes(b)


def pack4(q):
    b = bytearray((len(q) + 1) // 2)
    for i, v in enumerate(q):
        b[i // 2] |= (v & 0xF) << (4 * (i & 1))
    return bytes(b)


def emit(c, out):
    S, Z, Q, Y, qp = reference(c)
    o, a, i = view_of(c)
    n = c.x.size
    seed = "%016x" % (c.seed & M64) if c.seed is not None else "-"
    if c.note:
        out.append("# " + c.note)
    out.append("case %s" % c.name)
    out.append("cfg %s %s %d %d %d %d %s %s %d %d %d %s %d %d %d" % (
        c.dtype, c.gran, o, a, i, c.block, c.recipe, c.rounding, c.asym, c.narrow, c.pmv,
        seed, n, len(S), qp))
    out.append("x " + " ".join("%08x" % f32bits(v) for v in c.x.reshape(-1)))
    out.append("s " + " ".join("%08x" % f32bits(v) for v in S))
    if qp == 2:
        out.append("nf %d" % next(i for i, sl in enumerate(groups(c))
                                  if not np.isfinite(c.x[sl]).all()))
    if c.asym:
        out.append("z " + " ".join(str(v) for v in Z))
    if Q is not None:
        if c.dtype in FP8_FMT:
            out.append("q " + " ".join("nan" if v is None else "%02x" % v for v in Q))
        else:
            out.append("q " + " ".join(str(v) for v in Q))
            if c.dtype in ("int4", "uint4", "nf4"):
                out.append("p " + pack4(Q).hex())
            if c.dtype in ("int2", "uint2"):
                out.append("p " + pack2(Q).hex())
        out.append("y " + " ".join("%08x" % f32bits(v) for v in Y))
    if c.rng_after is not None:
        out.append("r %08x" % c.rng_after)
    out.append("end")


# ---- data -------------------------------------------------------------------------------
def normal(r, n, sigma=1.0):
    return [r.gauss(0.0, sigma) for _ in range(n)]


def mixed(r, shape, axis=None, specials=True):
    """Normal values; per-slice magnitudes 1e-3..1e4 along `axis`; outliers, zeros, -0,
    denormals, exact negative/positive maxima and an all-(+-)zero slice."""
    n = int(np.prod(shape))
    x = np.array(normal(r, n), dtype=np.float64).reshape(shape)
    if axis is not None:
        mags = [1.0, 1e-3, 50.0, 1e4, 0.25, 7.0, 3e-2, 1e2]
        for j in range(shape[axis]):
            sl = [slice(None)] * len(shape)
            sl[axis] = j
            x[tuple(sl)] *= mags[j % len(mags)]
    flat = x.reshape(-1)
    for j in range(0, n, 17):
        flat[j] *= 20.0                       # outliers
    for j in range(5, n, 23):
        flat[j] = 0.0
    for j in range(11, n, 29):
        flat[j] = -0.0
    if specials:
        flat[3 % n] = 1.0e-40                # denormal
        flat[(n // 2) % n] = -2.5e-42
    x = x.astype(F)
    if axis is not None and shape[axis] > 2:
        # an all-+0 slice and an alternating +-0 slice, away from the ragged tail
        sl = [slice(None)] * len(shape)
        sl[axis] = 2 % shape[axis]
        x[tuple(sl)] = F(0)
        sl[axis] = max(shape[axis] - 2, 1) if shape[axis] > 3 else 1
        x[tuple(sl)] = np.where(np.arange(x[tuple(sl)].size).reshape(x[tuple(sl)].shape) % 2,
                                F(-0.0), F(0.0))
    return x


def ties(scale, zp=0, span=12):
    """Values whose x / s lands exactly on k + 1/2 (and near it) for the given scale."""
    v = [k / 2.0 for k in range(-span, span + 1)]
    v += [0.49999997, -0.49999997, 1.4999999, -1.4999999, 2.5000002, -2.5000002, 0.5, -0.5]
    return np.array([F(t * scale) for t in v], dtype=F)


def recip_vs_div(fmt):
    """Inputs near fp8 ties where x * f32(1/s) and x / s give different codes, for one s."""
    tbl = [float(v) for v, _ in fp8_table(fmt)]
    mids = [(tbl[j] + tbl[j + 1]) / 2 for j in range(1, len(tbl) - 1)]
    for sv in (F(0.3), F(1.7), F(2.9e-3), F(0.011), F(5.3), F(37.1), F(0.77)):
        inv = F(F(1) / sv)
        found = []
        with np.errstate(all="ignore"):
            for m in mids:
                x0 = F(m * float(sv))
                for d in (-2, -1, 0, 1, 2):
                    x = bits2f(f32bits(x0) + d)
                    a = fp8_cast_rne(F(x / sv), fmt)
                    b = fp8_cast_rne(F(x * inv), fmt)
                    if a != b:
                        found.append(x)
        if len(found) >= 8:
            found = found[:: max(1, len(found) // 24)][:24]
            return np.array(found + [-v for v in found], dtype=F), sv
    raise AssertionError("no reciprocal/division split found for " + fmt)


def build():
    r = random.Random(20260522)
    files = {"quant_int.txt": [], "quant_fp8.txt": [], "quant_stochastic.txt": []}
    ci = files["quant_int.txt"]

    # -- granularity sweep, all three recipes, int8 ----------------------------------------
    S3 = (3, 8, 5)
    for recipe, asym in (("aqt", 0), ("qwix", 0), ("qwix", 1), ("tflite", 0), ("tflite", 1)):
        tag = "%s_%s_int8" % (recipe, "asym" if asym else "sym")
        ci.append(Case(tag + "_tensor_defaultview", "int8", "per_tensor", mixed(r, S3), S3,
                       recipe=recipe, asym=asym, view_default=True))
        ci.append(Case(tag + "_tensor_view", "int8", "per_tensor", mixed(r, S3, 1), S3,
                       recipe=recipe, asym=asym))
        for ax in (0, 1, 2):
            ci.append(Case(tag + "_channel_axis%d" % ax, "int8", "per_channel",
                           mixed(r, S3, ax), S3, axis=ax, recipe=recipe, asym=asym))
        ci.append(Case(tag + "_block4_axis1", "int8", "per_block", mixed(r, S3, 1), S3,
                       axis=1, block=4, recipe=recipe, asym=asym))
        ci.append(Case(tag + "_block3_ragged_axis1", "int8", "per_block", mixed(r, S3, 1), S3,
                       axis=1, block=3, recipe=recipe, asym=asym))
        ci.append(Case(tag + "_block2_ragged_lastaxis", "int8", "per_block", mixed(r, S3, 2),
                       S3, axis=2, block=2, recipe=recipe, asym=asym))
    ci.append(Case("aqt_sym_int8_block_larger_than_axis", "int8", "per_block",
                   mixed(r, S3, 1), S3, axis=1, block=64))
    ci.append(Case("qwix_asym_int8_block3_axis0", "int8", "per_block", mixed(r, (7, 4, 3), 0),
                   (7, 4, 3), axis=0, block=3, recipe="qwix", asym=1))

    # -- other dtypes ---------------------------------------------------------------------
    S4 = (3, 5, 7)   # 105 elements: odd count for the packed types
    for pmv in (0, 1):
        for dt in ("int8", "int4"):
            ci.append(Case("aqt_%s_pmv%d_channel_axis1" % (dt, pmv), dt, "per_channel",
                           mixed(r, S4, 1), S4, axis=1, pmv=pmv))
            ci.append(Case("aqt_%s_pmv%d_block2_axis2" % (dt, pmv), dt, "per_block",
                           mixed(r, S4, 2), S4, axis=2, block=2, pmv=pmv))
    for dt in ("int4", "uint8", "int16", "uint4"):
        ci.append(Case("qwix_sym_%s_channel_axis1" % dt, dt, "per_channel", mixed(r, S4, 1), S4,
                       axis=1, recipe="qwix",
                       note="uint4 bound 15.5 is a qmx extension (Qwix has no uint4)"
                       if dt == "uint4" else ""))
        ci.append(Case("qwix_sym_%s_tensor" % dt, dt, "per_tensor", mixed(r, S4), S4,
                       recipe="qwix"))
    for dt in ("int4", "int16", "uint8", "uint4"):
        ci.append(Case("qwix_asym_%s_block3_axis1" % dt, dt, "per_block", mixed(r, S4, 1), S4,
                       axis=1, block=3, recipe="qwix", asym=1,
                       note="Qwix has no asymmetric uint8/uint4: qmx extension, same formula"
                       if dt.startswith("u") else ""))
    ci.append(Case("qwix_asym_int4_tensor_positive", "int4", "per_tensor",
                   np.abs(mixed(r, S4)), S4, recipe="qwix", asym=1))
    ci.append(Case("qwix_asym_int8_tensor_negative", "int8", "per_tensor",
                   -np.abs(mixed(r, S4)), S4, recipe="qwix", asym=1))
    ci.append(Case("tflite_asym_int8_tensor_positive", "int8", "per_tensor",
                   np.abs(mixed(r, S4)) + F(0.5), S4, recipe="tflite", asym=1))
    for dt in ("int4", "int16"):
        ci.append(Case("tflite_sym_%s_channel_axis2" % dt, dt, "per_channel", mixed(r, S4, 2),
                       S4, axis=2, recipe="tflite"))
    ci.append(Case("aqt_int16_tensor", "int16", "per_tensor", mixed(r, S4), S4,
                   note="AQT 16-bit IntSymmetric: edge 32767.5, clip 32767"))
    ci.append(Case("aqt_uint8_tensor", "uint8", "per_tensor", mixed(r, S4), S4,
                   note="AQT has no unsigned type: qmx extension, B = 255.5, clip [0, 255]"))
    ci.append(Case("qwix_sym_int8_narrow", "int8", "per_channel", mixed(r, S3, 0), S3, axis=0,
                   recipe="qwix", narrow=1))
    ci.append(Case("qwix_asym_int8_narrow", "int8", "per_channel", mixed(r, S3, 0), S3, axis=0,
                   recipe="qwix", asym=1, narrow=1,
                   note="narrow_range with minmax: s and zp from the full range, clamp [-127, 127]"))
    ci.append(Case("tflite_asym_int4_narrow", "int4", "per_tensor", mixed(r, S3), S3,
                   recipe="tflite", asym=1, narrow=1))

    # -- zero-range guards, denormals, huge values -----------------------------------------
    Z3 = (2, 3, 4)
    zero = np.zeros(Z3, dtype=F)
    zero.reshape(-1)[1::3] = F(-0.0)
    for recipe, asym in (("aqt", 0), ("qwix", 0), ("qwix", 1), ("tflite", 0), ("tflite", 1)):
        ci.append(Case("%s_%s_int8_allzero" % (recipe, "asym" if asym else "sym"), "int8",
                       "per_channel", zero, Z3, axis=1, recipe=recipe, asym=asym))
        den = np.array([1e-38, -2e-39, 4e-39, 0, 1e-30, -5e-31, 0, 2e-31, 1e-20, -3e-20, 7e-21, 0,
                        1.3e-17, -1e-18, 1e-17, 0, 1.5e-17, -1e-17, 3e-18, 0,
                        1e-37, 3e-37, -1e-37, 0, 2e-38, -1e-40, 0, 5e-39], dtype=F)
        ci.append(Case("%s_%s_int8_tiny_groups" % (recipe, "asym" if asym else "sym"), "int8",
                       "per_block", den, (1, 28, 1), axis=1, block=4, recipe=recipe, asym=asym,
                       note="groups of denormal / tiny values: the zero guards (Qwix 2^-63 lies "
                       "between 1.3e-17/127.5 and 1.5e-17/127.5) and AQT's infinite 1/s -> 1"))
        ci.append(Case("%s_%s_int8_denorm_min" % (recipe, "asym" if asym else "sym"), "int8",
                       "per_tensor", np.array([1e-45, -1e-45, 0, 3e-45], dtype=F), (1, 4, 1),
                       recipe=recipe, asym=asym,
                       note="absmax a few denormal ulps: absmax / B underflows to 0 where no "
                       "guard catches it"))
        huge = np.array([1e30, -3e29, 1, -1, 3.0e38, -2.0e38, 1e38, 0, -3.4e38, 3.4e38, 5, 6],
                        dtype=F)
        ci.append(Case("%s_%s_int8_huge" % (recipe, "asym" if asym else "sym"), "int8",
                       "per_block", huge, (1, 12, 1), axis=1, block=4, recipe=recipe, asym=asym,
                       note="huge values; a span over FLT_MAX gives an infinite scale"))
    ci.append(Case("aqt_int8_huge_ok", "int8", "per_tensor",
                   np.array([1e30, -3e29, 1e20, -1, 0, 5e29], dtype=F), (1, 6, 1)))

    # -- non-finite inputs: compute_qparams refuses, quantize maps NaN / Inf -----------------
    for recipe, asym, dt in (("aqt", 0, "int8"), ("qwix", 0, "int8"), ("qwix", 1, "int8"),
                             ("tflite", 0, "int8"), ("tflite", 1, "int8"), ("aqt", 0, "int4"),
                             ("qwix", 1, "int4"), ("qwix", 1, "uint8"), ("tflite", 1, "int16")):
        x = mixed(r, S3, 1)
        fl = x.reshape(-1)
        fl[0], fl[7], fl[13], fl[40], fl[77], fl[119] = (F(np.nan), F(np.inf), F(-np.inf),
                                                         F(-np.nan), F(np.inf), F(np.nan))
        ci.append(Case("%s_%s_%s_nonfinite" % (recipe, "asym" if asym else "sym", dt), dt,
                       "per_channel", x, S3, axis=1, recipe=recipe, asym=asym,
                       note="scales/zps given = the reference on the finite values"))

    # -- rounding modes with exact ties ------------------------------------------------------
    for recipe in ("aqt", "qwix", "tflite"):
        for rounding in ("default", "nearest_even", "half_away"):
            for s in (1.0, 0.5):
                x = ties(s)
                ci.append(Case("%s_ties_%s_s%g" % (recipe, rounding, s), "int8", "per_tensor",
                               x, (1, x.size, 1), recipe=recipe, rounding=rounding,
                               scales=[s]))
    for recipe in ("qwix", "tflite"):
        for rounding in ("default", "nearest_even", "half_away"):
            x = np.concatenate([np.tile(ties(1.0), 2)[:70], np.tile(ties(0.25), 2)[:70]])
            ci.append(Case("%s_asym_ties_%s" % (recipe, rounding), "int8", "per_channel", x,
                           (2, x.size // 2, 1), axis=0, recipe=recipe,
                           rounding=rounding, asym=1, scales=[1.0, 0.25], zps=[5, -7],
                           note="Qwix adds zp in float before rounding (x/s = 0.49999997, "
                           "zp 5 -> 5.5 -> 6); TFLite adds it after"))
    x = ties(1.0, span=20)
    ci.append(Case("aqt_int4_ties_half_away", "int4", "per_tensor", x, (1, x.size, 1),
                   rounding="half_away", scales=[1.0]))
    ci.append(Case("qwix_uint4_asym_ties", "uint4", "per_tensor", x, (1, x.size, 1),
                   recipe="qwix", asym=1, scales=[1.0], zps=[8]))

    # -- fp8 -------------------------------------------------------------------------------
    cf = files["quant_fp8.txt"]
    for fmt in FP8_FMT:
        mx = float(fp8_max(fmt))
        for recipe in ("aqt", "qwix", "tflite"):
            cf.append(Case("%s_%s_tensor" % (fmt, recipe), fmt, "per_tensor", mixed(r, S3), S3,
                           recipe=recipe))
        cf.append(Case("%s_aqt_channel_axis2" % fmt, fmt, "per_channel", mixed(r, S3, 2), S3,
                       axis=2))
        cf.append(Case("%s_qwix_block3_ragged" % fmt, fmt, "per_block", mixed(r, S3, 1), S3,
                       axis=1, block=3, recipe="qwix"))
        cf.append(Case("%s_tflite_channel_axis0" % fmt, fmt, "per_channel", mixed(r, S3, 0), S3,
                       axis=0, recipe="tflite"))
        # exact ties of the fp8 grid (normal, subnormal, across binades), overflow, NaN/Inf
        tbl = [float(v) for v, _ in fp8_table(fmt)]
        mids = [(tbl[j] + tbl[j + 1]) / 2 for j in range(0, len(tbl) - 1)]
        pick = mids[:6] + mids[len(mids) // 2 - 3: len(mids) // 2 + 3] + mids[-4:]
        extra = [mx * 1.03, mx * 2, 1e30, tbl[1] / 2, tbl[1] / 4, tbl[1] * 0.75, 0.0, -0.0]
        vals = pick + extra
        x = np.array(vals + [-v for v in vals], dtype=F)
        for recipe in ("aqt", "qwix"):
            cf.append(Case("%s_%s_ties" % (fmt, recipe), fmt, "per_tensor", x, (1, x.size, 1),
                           recipe=recipe, scales=[1.0]))
        cf.append(Case("%s_qwix_ties_s0.5" % fmt, fmt, "per_tensor", x * F(0.5), (1, x.size, 1),
                       recipe="qwix", scales=[0.5]))
        xs, sv = recip_vs_div(fmt)
        for recipe in ("aqt", "qwix"):
            cf.append(Case("%s_%s_recip_vs_div" % (fmt, recipe), fmt, "per_tensor", xs,
                           (1, xs.size, 1), recipe=recipe, scales=[sv],
                           note="x * (1/s) (AQT) and x / s (Qwix) round to different fp8 codes"))
        xn = mixed(r, (2, 6, 3), 1)
        xn.reshape(-1)[[0, 5, 9, 30]] = [np.nan, np.inf, -np.inf, np.inf]
        cf.append(Case("%s_aqt_nonfinite" % fmt, fmt, "per_channel", xn, (2, 6, 3), axis=1))
        cf.append(Case("%s_allzero" % fmt, fmt, "per_tensor", zero, Z3, recipe="aqt"))
        cf.append(Case("%s_qwix_allzero" % fmt, fmt, "per_tensor", zero, Z3, recipe="qwix"))
        cf.append(Case("%s_tflite_tiny" % fmt, fmt, "per_block",
                       np.array([1e-45, -1e-44, 3e-30, 0, 1e-40, 2e-41], dtype=F), (1, 6, 1),
                       axis=1, block=2, recipe="tflite",
                       note="absmax 1e-45: s = absmax / fp8_max underflows to 0"))

    # -- stochastic rounding ---------------------------------------------------------------
    # -- Qwix's other widths (int2..int7, uint2): their own generator, appended, so the cases
    #    above keep their data. Qwix: B = 2^(n-1) - 0.5 = qmax + 0.5 (symmetric), minmax as int8;
    #    AQT IntSymmetric(bits=n): the same B, clip [-qmax, qmax]; TFLite: absmax / qmax.
    rw = random.Random(20261127)
    S5 = (3, 7, 5)   # 105 elements: not a multiple of 4 (the int2 tail byte)
    for dt in ("int2", "uint2", "int3", "int5", "int6", "int7"):
        ci.append(Case("aqt_%s_channel_axis1" % dt, dt, "per_channel", mixed(rw, S5, 1), S5,
                       axis=1))
        ci.append(Case("qwix_sym_%s_block3_axis2" % dt, dt, "per_block", mixed(rw, S5, 2), S5,
                       axis=2, block=3, recipe="qwix"))
        ci.append(Case("qwix_asym_%s_tensor" % dt, dt, "per_tensor", mixed(rw, S5), S5,
                       recipe="qwix", asym=1))
        ci.append(Case("tflite_asym_%s_channel_axis0" % dt, dt, "per_channel", mixed(rw, S5, 0),
                       S5, axis=0, recipe="tflite", asym=1))
        x = ties(0.25, span=6)
        ci.append(Case("qwix_%s_ties_half_away" % dt, dt, "per_tensor", x, (1, x.size, 1),
                       recipe="qwix", rounding="half_away", scales=[0.25]))
        ci.append(Case("tflite_%s_ties_nearest_even" % dt, dt, "per_tensor", x, (1, x.size, 1),
                       recipe="tflite", rounding="nearest_even", scales=[0.25]))

    # -- TFLite 16x8 activations: values beyond the calibrated range reach -32768 --------------
    x = np.array([-1.0, -0.99998, -1.00001, -1.00002, -1.5, -1e30, 1.0, 1.00002, 1e30, 0.5,
                  -0.5, 0.0, np.float32(-32768.5) / F(32767), np.float32(-32767.5) / F(32767)],
                 dtype=F)
    ci.append(Case("tflite_sym_int16_beyond_range", "int16", "per_tensor", x, (1, x.size, 1),
                   recipe="tflite", scales=[float(F(1) / F(32767))],
                   note="the QUANTIZE op's clamp is the full int16 range: below -32767 gives "
                   "-32768, above 32767 gives 32767"))
    ci.append(Case("tflite_sym_int16_beyond_range_narrow", "int16", "per_tensor", x,
                   (1, x.size, 1), recipe="tflite", narrow=1,
                   scales=[float(F(1) / F(32767))]))

    # -- nf4 (Qwix): scale = absmax (bound 1.0), nearest of the 16 values, ties low ----------
    mids = [float((F(NF4[k]) + F(NF4[k + 1])) / F(2)) for k in range(15)]
    for recipe in ("qwix", "aqt"):
        ci.append(Case("%s_nf4_block8_axis2" % recipe, "nf4", "per_block", mixed(rw, S5, 2), S5,
                       axis=2, block=8, recipe=recipe))
        ci.append(Case("%s_nf4_channel_axis0" % recipe, "nf4", "per_channel", mixed(rw, S5, 0),
                       S5, axis=0, recipe=recipe))
    x = np.array(mids + [-v for v in mids] + [float(np.nextafter(F(v), F(2))) for v in mids] +
                 [float(np.nextafter(F(v), F(-2))) for v in mids] + [1.5, -3.0, 1e30, -1e30],
                 dtype=F)
    ci.append(Case("qwix_nf4_midpoints", "nf4", "per_tensor", x, (1, x.size, 1), recipe="qwix",
                   scales=[1.0], note="float32 midpoints of the table and one ulp each side; "
                   "beyond the table (1e30: all 16 distances round alike, code 0 wins)"))

    # -- contiguous blocks (inner 1), symmetric: qmx's vector statistics path takes 16 blocks
    # at a time; 27 / 21 / 18 groups leave a tail (<= 512 values a case), block magnitudes span zero, -0, denormal, tiny
    # (Qwix's guard), huge -----------------------------------------------------------------
    r2 = random.Random(20261127)
    mags = [1.0, 0.0, 3e-3, 1e4, -0.0, 1e-40, 7.0, 1e-25, 250.0, 3e38 / 8, 0.5, 1e-18]
    for dt, bs, rows, nbk in (("int8", 32, 2, 8), ("int8", 16, 3, 9), ("int4", 16, 3, 7),
                              ("int16", 16, 2, 9), ("fp8_e4m3fn", 16, 3, 7)):
        x = np.array(normal(r2, rows * nbk * bs), dtype=np.float64).reshape(rows * nbk, bs)
        for j in range(rows * nbk):
            x[j] *= mags[(5 * j) % len(mags)]
        if bs > 16:
            x[3, 5] = -x[3, 5] * 4.0          # a negative maximum
        xs = np.array(x.reshape(-1), dtype=F)
        S = (rows, nbk * bs, 1)
        for recipe in ("aqt", "qwix", "tflite"):
            if dt.startswith("fp8") and recipe == "tflite":
                continue
            ci.append(Case("%s_sym_%s_contig_block%d" % (recipe, dt, bs), dt, "per_block", xs,
                           S, axis=1, block=bs, recipe=recipe))

    # -- NaN / Inf after the first group: qmx_compute_qparams writes the groups before the
    #    first non-finite one (its one-pass rule), on each of its loops: contiguous symmetric
    #    blocks (16 at a time on AVX-512), asymmetric blocks, channels of runs, any other view
    rn = random.Random(20261128)
    for name, dt, gran, shape, axis, bs, recipe, asym, bad in (
            ("aqt_sym_int8_block16", "int8", "per_block", (2, 256, 1), 1, 16, "aqt", 0,
             ((1, 21 * 16 - 256 + 5, 0, np.nan), (1, 27 * 16 - 256, 0, np.inf))),
            ("qwix_sym_int8_block16", "int8", "per_block", (2, 256, 1), 1, 16, "qwix", 0,
             ((0, 5 * 16 + 15, 0, -np.inf),)),
            ("tflite_sym_int8_block32", "int8", "per_block", (1, 512, 1), 1, 32, "tflite", 0,
             ((0, 9 * 32 + 31, 0, np.nan),)),
            ("qwix_asym_int8_block32", "int8", "per_block", (1, 512, 1), 1, 32, "qwix", 1,
             ((0, 9 * 32, 0, -np.inf),)),
            ("tflite_sym_int8_channel_inner8", "int8", "per_channel", (3, 10, 8), 1, 0,
             "tflite", 0, ((2, 6, 7, np.nan), (0, 8, 0, np.inf))),
            ("aqt_sym_int4_block4_inner4", "int4", "per_block", (2, 12, 4), 1, 4, "aqt", 0,
             ((1, 5, 2, np.inf),))):
        x = np.array(normal(rn, int(np.prod(shape))), dtype=F).reshape(shape)
        for o, k, i, v in bad:
            x[o, k, i] = v
        ci.append(Case("%s_nonfinite_later" % name, dt, gran, x, shape, axis=axis, block=bs,
                       recipe=recipe, asym=asym,
                       note="the first non-finite group is not group 0 (nf line)"))

    cs = files["quant_stochastic.txt"]
    seeds = [0, 1, 0x123456789ABCDEF0, 0xFFFFFFFFFFFFFFFF, 42]
    cs.append(Case("sr_aqt_int8_tensor", "int8", "per_tensor", mixed(r, (2, 40, 1)), (2, 40, 1),
                   rounding="stochastic", seed=seeds[0]))
    cs.append(Case("sr_aqt_int8_ties", "int8", "per_tensor", np.tile(ties(0.5), 2),
                   (1, 2 * ties(0.5).size, 1), rounding="stochastic", seed=seeds[1],
                   scales=[0.5]))
    cs.append(Case("sr_qwix_asym_int8_channel", "int8", "per_channel", mixed(r, S3, 1), S3,
                   axis=1, recipe="qwix", asym=1, rounding="stochastic", seed=seeds[2]))
    cs.append(Case("sr_tflite_asym_int8_block", "int8", "per_block", mixed(r, S3, 1), S3,
                   axis=1, block=3, recipe="tflite", asym=1, rounding="stochastic",
                   seed=seeds[3]))
    cs.append(Case("sr_aqt_int4_channel_axis2", "int4", "per_channel", mixed(r, S4, 2), S4,
                   axis=2, rounding="stochastic", seed=seeds[4]))
    cs.append(Case("sr_qwix_sym_uint8_tensor", "uint8", "per_tensor", mixed(r, S3), S3,
                   recipe="qwix", rounding="stochastic", seed=7))
    x = mixed(r, S3, 0)
    x.reshape(-1)[[2, 50, 99]] = [np.nan, np.inf, -np.inf]
    cs.append(Case("sr_qwix_asym_int8_nonfinite", "int8", "per_channel", x, S3, axis=0,
                   recipe="qwix", asym=1, rounding="stochastic", seed=99,
                   note="NaN/Inf still consume one draw each"))
    cs.append(Case("sr_tflite_sym_int16", "int16", "per_tensor", mixed(r, S3), S3,
                   recipe="tflite", rounding="stochastic", seed=2024))

    # rng raw streams
    rng_lines = []
    for seed in seeds + [1234567]:
        g = Xoshiro128ss(seed=seed)
        st = list(g.s)
        outs = [g.next_u32() for _ in range(12)]
        rng_lines.append("seed %016x state %s u32 %s" % (
            seed & M64, " ".join("%08x" % v for v in st), " ".join("%08x" % v for v in outs)))
    for seed in (5, 0xDEADBEEF):
        g = Xoshiro128ss(seed=seed)
        rng_lines.append("noise %016x %s" % (
            seed, " ".join("%08x" % f32bits(g.next_noise()) for _ in range(12))))
    return files, rng_lines


HEADER = """# {name} - generated by {gen}; do not edit. Regenerate: /usr/bin/python3 {gen}
# Independent numpy (float32) reference of the origins' formulas; see the generator's docstring
# for every formula (AQT int_numerics/calibration, Qwix qarray/numerics, TFLite quantize,
# AQT/Qwix/Flax fp8 clip-then-cast, xoshiro128** stochastic rounding).
# Record per case:
#   case NAME
#   cfg DTYPE GRANULARITY OUTER AXIS_LEN INNER BLOCK RECIPE ROUNDING ASYM NARROW PMV SEED COUNT N_SCALES QP
#       (OUTER AXIS_LEN INNER exactly as given to qmx_qconfig; 0 0 0 = the default [1][count][1];
#        SEED: hex u64 for stochastic, '-' otherwise)
#       QP 1: qmx_compute_qparams must return exactly the s (and z) lines;
#          0: s/z are given (not computed by qmx_compute_qparams);
#          2: the input holds NaN/Inf: qmx_compute_qparams must return QMX_ERR_NONFINITE,
#             having written the s (and z) of the groups before group NF (the nf line: the
#             first group holding NaN/Inf) and nothing else; s/z are the reference on the
#             finite values;
#          3: the reference scale is 0 or Inf (outside qmx_quantize's domain): qmx_compute_qparams
#             must return it, qmx_quantize must refuse it with QMX_ERR_ARG (no q/y lines)
#   x  COUNT float32 bit patterns (hex), flat row-major
#   s  N_SCALES float32 bit patterns, in qmx's scale order ([outer][block][inner])
#   nf NF (QP 2 only): index of the first group, in scale order, that holds NaN/Inf
#   z  N_SCALES zero points (decimal; asymmetric only)
#   q  COUNT quantized values: integers (decimal) or fp8 codes (hex; 'nan' = any NaN code)
#   p  the packed int4/uint4 storage bytes (hex, element 2i in the low nibble), or int2/uint2
#      (element 4i + k in bits 2k, 2k + 1 of byte i)
#   y  COUNT dequantized float32 bit patterns: f32(q - zp) * s (7fc00000 where q is NaN)
#   r  stochastic only: the next u32 of the stream after qmx_quantize (one draw per element)
#   end
"""


def formula_lines():
    doc = __doc__.split("Formulas", 1)[1].rstrip().split("\n")
    return ["# Formulas" + doc[0]] + ["#" + l[1:] if l.startswith(" ") else "# " + l for l in doc[1:]]


def render(files, rng_lines):
    out = {}
    for name, cases in files.items():
        lines = HEADER.format(name=name, gen=GEN).rstrip("\n").split("\n")
        lines[4:4] = formula_lines()
        for c in cases:
            emit(c, lines)
        out[name] = "\n".join(lines) + "\n"
    hdr = ["# quant_rng.txt - generated by %s; do not edit." % GEN,
           "# xoshiro128** 1.1 (Blackman & Vigna) seeded by splitmix64 twice, low 32 bits first:",
           "#   s0 = lo(z1) s1 = hi(z1) s2 = lo(z2) s3 = hi(z2); self-checked against splitmix64(1234567)",
           "#   and xoshiro128**({1,2,3,4}) -> 11520 0 5927040 70819200 (reference C).",
           "# columns: seed SEED state S0 S1 S2 S3 u32 FIRST_12_OUTPUTS          (hex)",
           "#          noise SEED FIRST_12_qmx_rng_next_noise_f32_BITS  ((u >> 8) * 2^-24 - 0.5)"]
    out["quant_rng.txt"] = "\n".join(hdr + rng_lines) + "\n"
    return out


def main():
    self_test_rng()
    files, rng_lines = build()
    out = render(files, rng_lines)
    check = "--check" in sys.argv
    bad = 0
    for name, text in out.items():
        path = os.path.join(ROOT, "tests", "data", name)
        if check:
            with open(path) as f:
                if f.read() != text:
                    print("DIFFERS: %s" % path)
                    bad = 1
        else:
            with open(path, "w") as f:
                f.write(text)
            print("%s: %d bytes" % (path, len(text)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
