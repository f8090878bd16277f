#!/usr/bin/python3
"""gen_quant_torch.py - golden data for qmx's QMX_RECIPE_TORCH, from PyTorch 1.13's observers
(torch.ao.quantization.observer) and its quantize / dequantize kernels.

Run from the repository root with Debian's python3 + numpy + torch (python3-torch 1.13):
    /usr/bin/python3 tests/gen/gen_quant_torch.py          # rewrites tests/data/quant_torch.txt
    /usr/bin/python3 tests/gen/gen_quant_torch.py --check  # regenerates in memory, diffs the file

Every float is written as its 8-hex-digit IEEE binary32 bit pattern, so nothing depends on a
decimal parser. The file format is described in its header (HEADER below).

Each case feeds seeded batches to one of MinMaxObserver, PerChannelMinMaxObserver,
MovingAverageMinMaxObserver or MovingAveragePerChannelMinMaxObserver (dtype quint8 / qint8,
qscheme per_tensor_affine / per_tensor_symmetric / per_channel_affine / per_channel_symmetric,
reduce_range False / True, averaging_constant 0.01 (torch's default), 0.1, 0.3, 0.5, 1.0), records
torch's min_val / max_val and calculate_qparams(), then quantizes the LAST batch with those
qparams (torch.quantize_per_tensor(x, float(scale), int(zp), dtype) or
torch.quantize_per_channel(x, scales, zps, axis, dtype)) and records int_repr() and dequantize().
Cases with OBS none give the scale / zero point directly and pin down quantize / dequantize:
exact float32 ties (x * float32(1/s) == k + 0.5 exactly in float32, checked with numpy), odd and
even zero points (rounding happens before the zero point is added), saturation, +-0, scales that
are not powers of two.

The generator asserts that torch agrees with this model (all float32 arithmetic, round half even):
  range     quint8 [0, 255], qint8 [-128, 127]; reduce_range: quint8 [0, 127], qint8 [-64, 63]
  min/max   MinMax*: min / max over all batches (per channel: over all but the channel axis)
            MovingAverage*: the first batch sets min / max; later ones
            min = min + c * (batch_min - min) (three float32 ops, c = float32(averaging_constant))
  affine    scale = (max(max, 0) - min(min, 0)) / float(qmax - qmin); scale = max(scale, 2^-23)
            zp = clamp(qmin - round_half_even(min(min, 0) / scale), qmin, qmax)
  symmetric scale = max(-min(min, 0), max(max, 0)) / (float(qmax - qmin) / 2) (127.5 or 63.5);
            scale = max(scale, 2^-23); zp = 0 (qint8) or 128 (quint8)
  quantize  q = clamp(zp + nearbyint(x * float32(1.0f / scale)), dtype's full range) - the clamp
            is to the dtype's range even with reduce_range (quantize does not know about it)
  dequant   float32(q - zp) * scale, one float32 rounding
Known (and recorded) torch behaviour that the model above does not state:
  * reduce_range=True with quint8 and a symmetric qscheme is rejected by torch's constructors
    (NotImplementedError), so those combinations are absent.
  * the sign of a zero min_val / max_val depends on torch's reduction order (aminmax over
    [+0, -0, -0] returns -0 / -0, over [-0, +0, -0, -0, +0, -0, +0] returns +0 / +0; a sequential
    "if (x < min) min = x" loop keeps the first zero); mm lines are torch's bits, and the
    generator compares them with the model as values (== on floats), so a C reader should too.
    The file header lists the cases where this can matter (data with both +0 and -0).
  * the "overflow" cases: max(max,0) - min(min,0) overflows to +inf, torch's scale is +inf and
    zp = qmin; quantize then gives q = zp everywhere (1/inf = 0) and dequantize gives NaN
    (0 * inf); the dq lines hold torch's NaN bit pattern (ffc00000, x86's default NaN).
Apart from these, torch agreed with the model everywhere (asserted).
"""
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
F = np.float32
EPS = F(2.0 ** -23)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = "tests/gen/gen_quant_torch.py"
OUT = "quant_torch.txt"
INLINE_MAX = 4096

HEADER = [
    "torch %s (Debian python3-torch), torch.ao.quantization.observer + quantize_per_tensor /",
    "quantize_per_channel / int_repr / dequantize. Tokens are separated by single spaces.",
    "case NAME OBS DTYPE QSCHEME REDUCE MOMENTUM OUTER LEN INNER NBATCH",
    "  OBS: minmax | moving | none   (none: the qp line is given, not computed; no mm line)",
    "  DTYPE: quint8 | qint8",
    "  QSCHEME: per_tensor_affine | per_tensor_symmetric | per_channel_affine |",
    "           per_channel_symmetric",
    "  REDUCE: 0 | 1 (reduce_range: quint8 [0,127], qint8 [-64,63]; quantize still clamps to the",
    "          dtype's full range)",
    "  MOMENTUM: averaging_constant as float32 hex bits (moving), else 00000000",
    "  OUTER LEN INNER: the tensor as [OUTER][LEN][INNER] row-major; per channel = one scale per",
    "    index of LEN (torch ch_axis: shape (A,B,C) axis 0 -> 1 A B*C; axis 1 -> A B C;",
    "    (A,B) axis 0 -> 1 A B; axis 1 -> A B 1; per tensor -> 1 N 1)",
    "  NBATCH: number of batch lines that follow",
    "x HEX HEX ...       one batch, OUTER*LEN*INNER float32 bit patterns (count <= 4096)",
    "g SEED COUNT SHIFT  one batch of COUNT values (count > 4096): xorshift32, state = SEED",
    "    (nonzero); per element: state ^= state << 13; state ^= state >> 17; state ^= state << 5",
    "    (all mod 2^32); r = state; x = float32(int32(r >> 8) - 8388608) * 2^-SHIFT (exact)",
    "mm MIN MAX [MIN MAX ...]  torch min_val / max_val after all batches, hex (per channel: LEN",
    "    pairs); absent for OBS none. Compare as values: the sign of a zero follows torch's",
    "    reduction order",
    "qp SCALE ZP [SCALE ZP ...]  scale hex, zero point decimal (per channel: LEN pairs)",
    "q V V ...           int_repr() of the quantized last batch, decimal (count <= 4096)",
    "qh FNV              FNV-1a 64 (16 hex digits) over the int_repr bytes, one byte per element",
    "                    (int8 as two's complement) (count > 4096)",
    "dq HEX ...          dequantize() bit patterns (count <= 4096)",
    "dqh FNV             FNV-1a 64 over the dequantize() float32 bits, 4 little-endian bytes each",
    "                    (count > 4096)",
    "end",
    "FNV-1a 64: h = 0xcbf29ce484222325; per byte: h ^= byte; h *= 0x100000001b3 (mod 2^64)",
    "Names containing 'overflow': max(max,0) - min(min,0) overflows, torch's scale is inf and",
    "dequantize() is NaN (bits as torch gives them).",
]


def hx(v):
    return "%08x" % int(np.array(v, dtype=np.float32).view(np.uint32))


def xorshift(seed, n, shift):
    s = seed & 0xFFFFFFFF
    assert s != 0
    out = np.empty(n, np.int64)
    for i in range(n):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        out[i] = (s >> 8) - 8388608
    return (out.astype(np.float32) * F(2.0 ** -shift)).astype(np.float32)


def fnv64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def qrange(dtype, reduce):
    if dtype == "quint8":
        return (0, 127) if reduce else (0, 255)
    return (-64, 63) if reduce else (-128, 127)


def drange(dtype):
    return (0, 255) if dtype == "quint8" else (-128, 127)


# ---- the model ------------------------------------------------------------------------------
def model_minmax(obs, c, batches, per_channel):
    """batches: list of [OUTER][LEN][INNER] float32 arrays; returns min, max (LEN or 1 values)."""
    mn = mx = None
    cf = F(c)
    with np.errstate(all="ignore"):
        for b in batches:
            if per_channel:
                bmin = b.min(axis=(0, 2)).astype(F)
                bmax = b.max(axis=(0, 2)).astype(F)
            else:
                bmin = np.array([b.min()], F)
                bmax = np.array([b.max()], F)
            if mn is None:
                mn, mx = bmin, bmax
            elif obs == "minmax":
                mn, mx = np.minimum(mn, bmin), np.maximum(mx, bmax)
            else:
                mn = (mn + (cf * (bmin - mn).astype(F)).astype(F)).astype(F)
                mx = (mx + (cf * (bmax - mx).astype(F)).astype(F)).astype(F)
    return mn, mx


def model_qparams(mn, mx, dtype, qscheme, reduce):
    qmin, qmax = qrange(dtype, reduce)
    with np.errstate(all="ignore"):
        mneg = np.minimum(mn, F(0)).astype(F)
        mpos = np.maximum(mx, F(0)).astype(F)
        if qscheme.endswith("symmetric"):
            s = (np.maximum(-mneg, mpos) / F((qmax - qmin) / 2.0)).astype(F)
            s = np.maximum(s, EPS)
            zp = np.full(s.shape, 128 if dtype == "quint8" else 0, np.int64)
        else:
            s = ((mpos - mneg).astype(F) / F(qmax - qmin)).astype(F)
            s = np.maximum(s, EPS)
            zp = qmin - np.rint((mneg / s).astype(F)).astype(np.int64)
            zp = np.clip(zp, qmin, qmax)
    return s, zp


def model_quant(x, scales, zps, dtype):
    """x: [OUTER][LEN][INNER]; scales / zps: LEN values (or 1 for per tensor)."""
    lo, hi = drange(dtype)
    s = np.asarray(scales, F).reshape(1, -1, 1)
    z = np.asarray(zps, np.int64).reshape(1, -1, 1)
    with np.errstate(all="ignore"):
        inv = (F(1) / s).astype(F)
        t = (x * inv).astype(F)
        assert np.all(np.abs(t) < 2.0 ** 31)
        q = np.clip(np.rint(t).astype(np.int64) + z, lo, hi)
        dq = ((q - z).astype(F) * s).astype(F)
    return q, dq


# ---- data -----------------------------------------------------------------------------------
def ties(s, ks):
    """Float32 x with float32(x * float32(1/s)) == k + 0.5 exactly, one per k where found."""
    s = F(s)
    inv = F(F(1) / s)
    out = []
    for k in ks:
        t = F(k + 0.5)
        x0 = F(np.float64(t) / np.float64(inv))
        bits = int(np.array(x0).view(np.uint32))
        for d in (0, 1, -1, 2, -2, 3, -3):
            x = np.array(bits + d, np.uint32).view(np.float32)[()]
            if F(x * inv) == t:
                out.append(F(x))
                break
    return out


class Case:
    def __init__(self, name, obs, dtype, qscheme, reduce, mom, shape, axis, batches, qp=None):
        self.name, self.obs, self.dtype, self.qscheme = name, obs, dtype, qscheme
        self.reduce, self.mom, self.shape, self.axis = reduce, mom, tuple(shape), axis
        self.batches = batches      # list of float32 arrays of `shape`, or ("g", seed, shift)
        self.qp = qp                # (scales, zps) for obs none

    def dims(self):
        sh = self.shape
        if not self.qscheme.startswith("per_channel"):
            return 1, int(np.prod(sh)), 1
        a = self.axis
        return int(np.prod(sh[:a])), sh[a], int(np.prod(sh[a + 1:]))


def g(seed, shift):
    return ("g", seed, shift)


def specs():
    rng = np.random.default_rng(20240613)
    nrm = lambda shape, sc=1.0, m=0.0: (rng.standard_normal(shape) * sc + m).astype(F)
    uni = lambda shape, a, b: rng.uniform(a, b, shape).astype(F)
    cases = []
    add = cases.append

    # -- per-tensor observer data sets: (name, length, batches) --
    def outlier(n, big):
        x = nrm(n, 0.05)
        x[n // 3] = big
        return x
    pt = [
        ("mixed100", [nrm(100, 1.0), nrm(100, 1.5, 0.2), nrm(100, 0.8, -0.1)]),
        ("pos17", [uni(17, 0.5, 3.0), uni(17, 0.2, 4.0)]),
        ("neg7", [uni(7, -5.0, -0.25), uni(7, -3.0, -1.0)]),
        ("constpos3", [np.full(3, 2.5, F)]),
        ("constneg2", [np.full(2, -0.75, F), np.full(2, -0.75, F)]),
        ("constzero7", [np.zeros(7, F)]),
        ("negzero7", [np.array([-0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 0.0], F)]),
        ("negzero_last3", [np.array([0.0, -0.0, -0.0], F)]),
        ("tiny1e30_17", [nrm(17, 1e-30)]),
        ("tiny1e38_7", [nrm(7, 1e-38), nrm(7, 1e-38)]),
        ("tiny1e42_3", [np.array([1e-42, -3e-42, 2e-42], F)]),
        ("tinypos1e42_2", [np.array([1e-42, 7e-42], F)]),
        ("outlier100", [outlier(100, 1.0e4)]),
        ("outlierneg1000", [nrm(1000, 0.1), outlier(1000, -3.0e3)]),
        ("single1", [np.array([0.37], F)]),
        ("singleneg1", [np.array([-1234.5], F)]),
        ("pair2", [np.array([-1.0, 3.0], F), np.array([0.5, 2.0], F)]),
        ("len1000", [nrm(1000, 2.0), nrm(1000, 3.0, 1.0), nrm(1000, 1.0), nrm(1000, 0.5)]),
        ("five_batches17", [nrm(17, 1.0 + 0.5 * i, 0.3 * i) for i in range(5)]),
        # zp ties: min / scale = -k.5 exactly; torch rounds half to even
        ("zptie_a", [np.array([-0.5, 254.5, 3.0], F)]),
        ("zptie_b", [np.array([-1.5, 253.5, 7.25], F)]),
        ("zptie_c", [np.array([-2.5, 252.5, -1.0, 100.5], F)]),
        ("halfint17", [(np.arange(17, dtype=F) - F(8.5))]),
        ("fltmax_pos7", [uni(7, 1e38, 3.4e38)]),
        ("fltmax_neg7", [uni(7, -3.4e38, -1e38)]),
        ("fltmax_mixed7", [np.array([3e38, -3e38, 1.0, 0.0, -2.5, 1e38, -1e37], F)]),
        ("big4097", [g(11, 20), g(12, 18)]),
        ("big65536", [g(21, 23)]),
        ("big100000", [g(31, 16), g(32, 17)]),
    ]
    MINMAX_CFG = [(d, q, r) for d in ("quint8", "qint8") for q in ("affine", "symmetric")
                  for r in (0, 1) if not (d == "quint8" and q == "symmetric" and r == 1)]
    MOVING_CFG = [("quint8", "affine", 0, 0.01), ("qint8", "symmetric", 0, 0.1),
                  ("qint8", "affine", 1, 0.5), ("quint8", "symmetric", 0, 1.0),
                  ("quint8", "affine", 0, 0.3), ("qint8", "symmetric", 1, 0.01)]
    big = {"big4097", "big65536", "big100000", "len1000", "outlierneg1000"}
    for i, (dn, batches) in enumerate(pt):
        shape = (batches[0].shape[0],) if not isinstance(batches[0], tuple) else None
        if shape is None:
            shape = ({"big4097": 4097, "big65536": 65536, "big100000": 100000}[dn],)
        mm = MINMAX_CFG if dn not in big else MINMAX_CFG[i % 2::2]
        if dn == "fltmax_mixed7":      # only 2-3 overflow cases: the affine ones without reduce
            mm = [c for c in MINMAX_CFG if c[1] == "symmetric" or c[2] == 0]
        for d, q, r in mm:
            sfx = "_overflow" if dn == "fltmax_mixed7" and q == "affine" else ""
            add(Case("pt_%s_minmax_%s_%s_r%d%s" % (dn, d, q, r, sfx), "minmax", d,
                     "per_tensor_" + q, r, 0.0, shape, None, batches))
        if len(batches) > 1 or dn in ("constpos3", "tiny1e30_17", "zptie_a"):
            mv = MOVING_CFG if dn not in big else MOVING_CFG[i % 3::3]
            for d, q, r, c in mv:
                add(Case("pt_%s_moving%s_%s_%s_r%d" % (dn, str(c).replace(".", ""), d, q, r),
                         "moving", d, "per_tensor_" + q, r, c, shape, None, batches))
    # moving averages over near-FLT_MAX data without overflow of the differences
    fm = [uni(7, 1e38, 3.0e38), uni(7, 2e38, 3.4e38), uni(7, 1.5e38, 3.3e38)]
    for c in (0.01, 0.5, 0.3):
        add(Case("pt_fltmax_pos_moving%s_quint8_affine_r0" % str(c).replace(".", ""), "moving",
                 "quint8", "per_tensor_affine", 0, c, (7,), None, fm))
        add(Case("pt_fltmax_neg_moving%s_qint8_symmetric_r0" % str(c).replace(".", ""),
                 "moving", "qint8", "per_tensor_symmetric", 0, c, (7,), None, [-b for b in fm]))

    # -- per-channel observer data sets: (name, shape, axis, batches) --
    def chan(shape, axis, scales, means=None):
        """Normal data with a per-channel spread (and mean) along `axis`."""
        x = rng.standard_normal(shape)
        bs = [1] * len(shape)
        bs[axis] = shape[axis]
        x = x * np.asarray(scales, np.float64).reshape(bs)
        if means is not None:
            x = x + np.asarray(means, np.float64).reshape(bs)
        return x.astype(F)

    def special(shape, axis):
        """Channels: constant positive, constant negative, zero, tiny, positive, negative,
        mixed, outlier (cycled)."""
        x = chan(shape, axis, [1.0] * shape[axis])
        xm = np.moveaxis(x, axis, 0)
        for ch in range(shape[axis]):
            k = ch % 8
            v = xm[ch]
            if k == 0:
                v[...] = 1.75
            elif k == 1:
                v[...] = -0.3
            elif k == 2:
                v[...] = 0.0
            elif k == 3:
                v[...] = (rng.standard_normal(v.shape) * 1e-38).astype(F)
            elif k == 4:
                v[...] = np.abs(v) + 0.5
            elif k == 5:
                v[...] = -np.abs(v) * 3 - 0.1
            elif k == 7:
                v[...] = v * 0.01
                v.reshape(-1)[0] = 50.0
        return np.moveaxis(xm, 0, axis).copy()

    pc = [
        ("2d_ax0", (5, 9), 0, lambda s, a: [chan(s, a, [0.1, 1, 10, 0.5, 3]),
                                            chan(s, a, [0.2, 1, 5, 1, 2], [0, 1, -2, 0, 3])]),
        ("2d_ax1", (6, 4), 1, lambda s, a: [chan(s, a, [1, 2, 0.01, 7]) for _ in range(3)]),
        ("3d_ax0", (3, 4, 5), 0, lambda s, a: [chan(s, a, [1, 0.1, 4]),
                                               chan(s, a, [2, 0.3, 1], [1, 0, -1])]),
        ("3d_ax1", (2, 6, 3), 1, lambda s, a: [chan(s, a, [1, 2, 3, 0.5, 0.25, 8])
                                               for _ in range(4)]),
        ("3d_ax2", (2, 3, 5), 2, lambda s, a: [chan(s, a, [1, 2, 3, 4, 5])]),
        ("special_2d_ax1", (4, 8), 1, lambda s, a: [special(s, a), special(s, a)]),
        ("special_3d_ax0", (8, 2, 3), 0, lambda s, a: [special(s, a)]),
        ("special_3d_ax1", (2, 8, 3), 1, lambda s, a: [special(s, a), special(s, a),
                                                      special(s, a)]),
        ("len1_3d_ax1", (3, 1, 7), 1, lambda s, a: [chan(s, a, [2.0]), chan(s, a, [3.0])]),
        ("five_2d_ax0", (3, 7), 0, lambda s, a: [chan(s, a, [1, 2, 3], [0.1 * i, 0, -0.1 * i])
                                                 for i in range(5)]),
        ("wide_2d_ax1", (64, 16), 1, lambda s, a: [chan(s, a, [2.0 ** (k - 8) for k in
                                                              range(16)])]),
    ]
    PC_MINMAX = [("quint8", "affine", 0), ("qint8", "symmetric", 0), ("qint8", "affine", 1),
                 ("quint8", "symmetric", 0), ("qint8", "symmetric", 1), ("quint8", "affine", 1),
                 ("qint8", "affine", 0)]
    PC_MOVING = [("quint8", "affine", 0, 0.01), ("qint8", "symmetric", 0, 0.5),
                 ("qint8", "affine", 1, 0.3), ("quint8", "symmetric", 0, 1.0),
                 ("quint8", "affine", 0, 0.1)]
    for dn, shape, axis, mk in pc:
        batches = mk(shape, axis)
        for d, q, r in PC_MINMAX:
            add(Case("pc_%s_minmax_%s_%s_r%d" % (dn, d, q, r), "minmax", d,
                     "per_channel_" + q, r, 0.0, shape, axis, batches))
        if len(batches) > 1:
            for d, q, r, c in PC_MOVING:
                add(Case("pc_%s_moving%s_%s_%s_r%d" % (dn, str(c).replace(".", ""), d, q, r),
                         "moving", d, "per_channel_" + q, r, c, shape, axis, batches))
    # large per-channel tensors (generated batches): (4, 1025) axis 0 and (2, 3, 2000) axis 1
    add(Case("pc_big_2d_ax0_minmax_quint8_affine_r0", "minmax", "quint8", "per_channel_affine",
             0, 0.0, (4, 1025), 0, [g(41, 19), g(42, 21)]))
    add(Case("pc_big_3d_ax1_minmax_qint8_symmetric_r0", "minmax", "qint8",
             "per_channel_symmetric", 0, 0.0, (2, 3, 2000), 1, [g(43, 22)]))
    add(Case("pc_big_3d_ax1_moving01_qint8_affine_r1", "moving", "qint8", "per_channel_affine",
             1, 0.1, (2, 3, 2000), 1, [g(44, 22), g(45, 20), g(46, 23)]))
    add(Case("pc_big_2d_ax1_moving001_quint8_symmetric_r0", "moving", "quint8",
             "per_channel_symmetric", 0, 0.01, (4097, 2), 1, [g(47, 10), g(48, 12)]))
    # per-channel overflow: one channel spans +-3e38
    xo = chan((3, 4), 0, [1.0, 2.0, 3.0])
    xo[1, 0], xo[1, 2] = F(3e38), F(-3e38)
    add(Case("pc_2d_ax0_minmax_quint8_affine_r0_overflow", "minmax", "quint8",
             "per_channel_affine", 0, 0.0, (3, 4), 0, [xo]))
    add(Case("pc_2d_ax0_minmax_qint8_symmetric_r0_fltmax", "minmax", "qint8",
             "per_channel_symmetric", 0, 0.0, (3, 4), 0, [xo]))

    # -- no observer: given scale / zero point --
    scales = [0.25, 1.0, 2.0 ** -10, 0.1, 1.0 / 3.0, 0.0123, 3.7, 2.5, 7e-4, 1e-3, 0.3, 17.0,
              1e-5, 6.02e3]
    zps = {"quint8": [0, 1, 37, 128, 255, 100], "qint8": [0, -1, 5, -128, 127, 33]}
    n = 0
    for si, s in enumerate(scales):
        s = F(s)
        for d in ("quint8", "qint8"):
            for zi in ((si + (d == "qint8")) % 6, (si + 3) % 6):
                zp = zps[d][zi]
                lo, hi = drange(d)
                ks = list(range(-8, 8)) + [lo - zp - 1, lo - zp, hi - zp - 1, hi - zp,
                                           hi - zp - 2, lo - zp + 1]
                tv = ties(s, ks)
                sat = [F(s * F(v)) for v in (300.5, -300.5, 1e4, -1e4, 2e9, -2e9, 256.0, -256.0)]
                extra = [F(0.0), F(-0.0), F(s * F(0.49999997)), F(-s * F(0.49999997)),
                         F(s * F(0.5)), F(-s * F(0.5)), F(s * F(1.5)), F(-s * F(2.5))]
                rnd = list(nrm(20, float(s) * 40.0))
                x = np.array(tv + sat + extra + rnd, F)
                add(Case("none_%s_s%s_zp%d_n%d" % (d, hx(s), zp, len(x)), "none", d,
                         "per_tensor_affine", 0, 0.0, (len(x),), None, [x], ([s], [zp])))
                n += 1
    # exact ties where the real product is not a tie (only the float32 rounding makes it one)
    s = F(0.1)
    x = np.array(ties(s, range(-40, 40)), F)
    add(Case("none_qint8_tie_rounded_s01", "none", "qint8", "per_tensor_affine", 0, 0.0,
             (len(x),), None, [x], ([s], [3])))
    add(Case("none_quint8_tie_rounded_s01", "none", "quint8", "per_tensor_affine", 0, 0.0,
             (len(x),), None, [x], ([s], [128])))
    # tiny and eps scales, inf-free
    add(Case("none_quint8_eps", "none", "quint8", "per_tensor_affine", 0, 0.0, (7,), None,
             [np.array([1e-30, -1e-30, 1e-7, -1e-7, 6e-8, 5.9604645e-08, 1e-6], F)],
             ([EPS], [128])))
    # larger tensors, hashed
    add(Case("none_qint8_big4097", "none", "qint8", "per_tensor_affine", 0, 0.0, (4097,), None,
             [g(51, 23)], ([F(1.0 / 127.0)], [-3])))
    add(Case("none_quint8_big65536", "none", "quint8", "per_tensor_affine", 0, 0.0, (65536,),
             None, [g(52, 24)], ([F(0.00390625)], [128])))   # exact ties at every odd value
    add(Case("none_quint8_big100000", "none", "quint8", "per_tensor_affine", 0, 0.0, (100000,),
             None, [g(53, 20)], ([F(0.037)], [77])))
    # per-channel, given qparams (including ties per channel)
    for ci, (shape, axis, d, sc, zp) in enumerate([
            ((3, 5), 1, "quint8", [0.1, 0.5, 2.0 ** -6, 1.0 / 3.0, 7.5], [0, 1, 128, 255, 37]),
            ((4, 3, 2), 0, "qint8", [0.05, 1.0, 0.3, 2.0], [0, -1, 5, 127]),
            ((2, 4, 3), 1, "qint8", [0.0123, 3.7, 0.25, 1e-3], [-128, 33, 0, 7]),
            ((5, 2), 0, "quint8", [0.2, 0.07, 1.0, 0.5, 2.5e-4], [128, 3, 0, 254, 64])]):
        sc = [F(v) for v in sc]
        x = np.moveaxis(rng.standard_normal(shape), axis, 0).astype(F)
        for ch in range(shape[axis]):
            v = x[ch].reshape(-1)
            tv = ties(sc[ch], range(-3 - ch, 3 + ch))
            v[:] = v * F(sc[ch] * 60.0)
            v[:min(len(tv), len(v) - 2)] = tv[:len(v) - 2]
            v[-1] = F(sc[ch] * F(1000.0)) if ch % 2 else F(-0.0)
        x = np.moveaxis(x, 0, axis).copy()
        add(Case("none_pc%d_%s_ax%d" % (ci, d, axis), "none", d, "per_channel_affine", 0, 0.0,
                 shape, axis, [x], (sc, zp)))
    return cases


# ---- running torch --------------------------------------------------------------------------
def run(torch, O, c, problems):
    outer, ln, inner = c.dims()
    count = outer * ln * inner
    assert count == int(np.prod(c.shape))
    per_channel = c.qscheme.startswith("per_channel")
    tdt = torch.quint8 if c.dtype == "quint8" else torch.qint8
    tqs = getattr(torch, c.qscheme)
    lines = []
    arrays = []
    blines = []
    for b in c.batches:
        if isinstance(b, tuple):
            assert count > INLINE_MAX
            blines.append("g %d %d %d" % (b[1], count, b[2]))
            arrays.append(xorshift(b[1], count, b[2]).reshape(c.shape))
        else:
            assert count <= INLINE_MAX and b.shape == c.shape and b.dtype == F
            blines.append("x " + " ".join(hx(v) for v in b.reshape(-1)))
            arrays.append(b)
    assert all(np.all(np.isfinite(a)) for a in arrays)
    view = [a.reshape(outer, ln, inner) for a in arrays]
    if c.obs != "none":
        kw = dict(dtype=tdt, qscheme=tqs, reduce_range=bool(c.reduce))
        if per_channel:
            kw["ch_axis"] = c.axis
        if c.obs == "minmax":
            ob = (O.PerChannelMinMaxObserver if per_channel else O.MinMaxObserver)(**kw)
        else:
            ob = (O.MovingAveragePerChannelMinMaxObserver if per_channel
                  else O.MovingAverageMinMaxObserver)(averaging_constant=c.mom, **kw)
        for a in arrays:
            ob(torch.from_numpy(a.copy()))
        tmn = ob.min_val.reshape(-1).numpy().astype(F)
        tmx = ob.max_val.reshape(-1).numpy().astype(F)
        ts, tz = ob.calculate_qparams()
        ts = ts.reshape(-1).numpy().astype(F)
        tz = tz.reshape(-1).numpy().astype(np.int64)
        mmn, mmx = model_minmax(c.obs, c.mom, view, per_channel)
        assert np.array_equal(tmn, mmn) and np.array_equal(tmx, mmx), (c.name, tmn, mmn, tmx, mmx)
        # a zero min / max whose channel saw both +0 and -0: its sign is torch's choice
        allv = np.concatenate(view, axis=0)
        for ch in range(len(tmn)):
            v = allv[:, ch, :] if per_channel else allv
            both = np.any((v == 0) & np.signbit(v)) and np.any((v == 0) & ~np.signbit(v))
            if both and (tmn[ch] == 0 or tmx[ch] == 0):
                problems["signed_zero_mm"].append(c.name)
                break
        ms, mz = model_qparams(tmn, tmx, c.dtype, c.qscheme, c.reduce)
        if not (np.array_equal(ts.view(np.uint32), ms.view(np.uint32))
                and np.array_equal(tz, mz)):
            problems["qparams"].append((c.name, ts, tz, ms, mz))
        if per_channel:
            qt = torch.quantize_per_channel(torch.from_numpy(arrays[-1].copy()),
                                            torch.from_numpy(ts.copy()),
                                            torch.from_numpy(tz.copy()), c.axis, tdt)
        else:
            qt = torch.quantize_per_tensor(torch.from_numpy(arrays[-1].copy()), float(ts[0]),
                                           int(tz[0]), tdt)
        lines.append("mm " + " ".join("%s %s" % (hx(a), hx(b)) for a, b in zip(tmn, tmx)))
    else:
        ts = np.asarray(c.qp[0], F)
        tz = np.asarray(c.qp[1], np.int64)
        if per_channel:
            qt = torch.quantize_per_channel(torch.from_numpy(arrays[-1].copy()),
                                            torch.from_numpy(ts.astype(np.float64)),
                                            torch.from_numpy(tz.copy()), c.axis, tdt)
        else:
            qt = torch.quantize_per_tensor(torch.from_numpy(arrays[-1].copy()), float(ts[0]),
                                           int(tz[0]), tdt)
    assert len(ts) == (ln if per_channel else 1)
    lines.append("qp " + " ".join("%s %d" % (hx(s), z) for s, z in zip(ts, tz)))
    ir = qt.int_repr().numpy()
    dq = qt.dequantize().numpy().astype(F)
    mq, mdq = model_quant(view[-1], ts, tz, c.dtype)
    mq = mq.reshape(c.shape)
    mdq = mdq.reshape(c.shape)
    if not np.array_equal(ir.astype(np.int64), mq):
        bad = np.nonzero(ir.reshape(-1).astype(np.int64) != mq.reshape(-1))[0]
        problems["quant"].append((c.name, bad[:5], arrays[-1].reshape(-1)[bad[:5]],
                                  ir.reshape(-1)[bad[:5]], mq.reshape(-1)[bad[:5]]))
    same = (dq.view(np.uint32) == mdq.view(np.uint32)) | (np.isnan(dq) & np.isnan(mdq))
    if not same.all():
        bad = np.nonzero(~same.reshape(-1))[0]
        problems["dequant"].append((c.name, bad[:5], dq.reshape(-1)[bad[:5]],
                                    mdq.reshape(-1)[bad[:5]]))
    if np.isinf(ts).any():
        problems["overflow"].append(c.name)
        assert "overflow" in c.name, c.name
    else:
        assert "overflow" not in c.name, c.name
    if np.isnan(dq).any():
        problems["nan_bits"].add(hx(dq[np.isnan(dq)][0]))
    if count <= INLINE_MAX:
        lines.append("q " + " ".join(str(int(v)) for v in ir.reshape(-1)))
        lines.append("dq " + " ".join(hx(v) for v in dq.reshape(-1)))
    else:
        lines.append("qh %016x" % fnv64(ir.reshape(-1).astype(ir.dtype).tobytes()))
        lines.append("dqh %016x" % fnv64(dq.reshape(-1).astype("<f4").tobytes()))
    head = "case %s %s %s %s %d %s %d %d %d %d" % (
        c.name, c.obs, c.dtype, c.qscheme, c.reduce,
        hx(F(c.mom)) if c.obs == "moving" else "00000000", outer, ln, inner, len(blines))
    return [head] + blines + lines + ["end"]


def generate():
    import torch
    from torch.ao.quantization import observer as O
    torch.set_num_threads(1)
    cases = specs()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    problems = {"signed_zero_mm": [], "qparams": [], "quant": [], "dequant": [], "overflow": [],
                "nan_bits": set()}
    out = ["# %s - generated by %s; do not edit. Regenerate: /usr/bin/python3 %s"
           % (OUT, GEN, GEN)]
    out += ["# " + (l % torch.__version__ if "%s" in l else l) for l in HEADER]
    body = []
    for c in cases:
        body += run(torch, O, c, problems)
    out.append("# %d cases. Cases whose mm holds a zero of either sign while the data held both"
               % len(cases))
    sz = problems["signed_zero_mm"]
    for i in range(0, len(sz), 3):
        out.append("#   " + " ".join(sz[i:i + 3]))
    for k in ("qparams", "quant", "dequant"):
        for p in problems[k]:
            print("DISAGREE %s: %r" % (k, p), file=sys.stderr)
    assert not (problems["qparams"] or problems["quant"] or problems["dequant"]), \
        "torch disagrees with the model (see above)"
    return out + body, cases, problems


def main():
    lines, cases, problems = generate()
    path = os.path.join(ROOT, "tests", "data", OUT)
    text = "\n".join(lines) + "\n"
    if "--check" in sys.argv:
        old = open(path).read() if os.path.exists(path) else ""
        if old != text:
            print("DIFFERS: %s" % path)
            sys.exit(1)
        print("OK: %s (%d cases)" % (path, len(cases)))
        return
    with open(path, "w") as f:
        f.write(text)
    kinds = {}
    for c in cases:
        k = "%s %s" % (c.obs, "per_channel" if c.qscheme.startswith("per_channel") else
                       "per_tensor")
        kinds[k] = kinds.get(k, 0) + 1
    print("wrote %s (%d cases, %d lines, %d bytes)" % (path, len(cases), len(lines), len(text)))
    print("kinds: %r" % kinds)
    print("overflow cases: %r; NaN bits: %r" % (problems["overflow"], problems["nan_bits"]))
    print("signed-zero mm cases: %r" % problems["signed_zero_mm"])


if __name__ == "__main__":
    main()
