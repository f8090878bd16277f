#!/usr/bin/python3
"""gen_fc8_wzp.py - golden data for the int8-activation fully-connected kernels of
qmx_kernels.h with a weight zero point (qmx_requant_config.weight_zero_point):
qmx_fully_connected_i8, qmx_fully_connected_i8_packed (int8 weights) and
qmx_fully_connected_i4 (int4 weights). TFLite's int32 reference formulas, modelled
independently in Python (numpy int64 for the dot products, Python integers with explicit
int32 checks for the requantization).

Run from the repository root with Debian's python3 + numpy:
    /usr/bin/python3 tests/gen/gen_fc8_wzp.py          # rewrites tests/data/fc8_wzp_golden.txt
    /usr/bin/python3 tests/gen/gen_fc8_wzp.py --check  # regenerates in memory, diffs the file

Sources read (the formulas below are written from them; no code copied): tensorflow/tflite-micro
tensorflow/lite/kernels/internal/reference/integer_ops/fully_connected.h:
  FullyConnected (per tensor; also FullyConnectedGeneral for int16 outputs and
  FullyConnectedWithPackedInt4Weights, which unpacks int4 to int8 and calls it):
      int32 acc = 0; acc += (filter + filter_offset) * (input + input_offset) over depth;
      acc += bias (int32); acc = MultiplyByQuantizedMultiplier(acc, multiplier, shift);
      acc += output_offset; clamp to [act_min, act_max]; cast
  with filter_offset = -filter zero point, input_offset = -input zero point (kernels/
  fully_connected.cc). FullyConnectedPerChannel is the same with per-channel (multiplier,
  shift) but no filter offset: TFLite's quantization spec makes per-channel weights symmetric.
  qmx applies weight_zero_point in both; the per-channel cases with a nonzero zero point model
  that generalisation (the per-tensor formula with per-channel multipliers), the per-channel
  cases with zero point 0 are FullyConnectedPerChannel itself.
tensorflow/lite/kernels/internal/common.h, MultiplyByQuantizedMultiplier(int32 x, m, shift):
  default build (gemmlowp double rounding):
      left = max(shift, 0), right = max(-shift, 0)
      RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2^left, m), right)
    SaturatingRoundingDoublingHighMul(a, b): INT32_MAX if a = b = INT32_MIN, else
      (a*b + (a*b >= 0 ? 2^30 : 1 - 2^30)) / 2^31, the division truncating toward zero;
    RoundingDivideByPOT(x, e): mask = 2^e - 1, rem = x & mask, thr = (mask >> 1) + (x < 0),
      (x >> e) + (rem > thr)   (>> arithmetic)
  TFLITE_SINGLE_ROUNDING build: (x * m + 2^(30 - shift)) >> (31 - shift) in int64, m >= 0,
  shift in [-31, 30], the result inside int32 (a DCHECK).
TFLite's int32 arithmetic must not overflow (undefined behaviour in C++): every case below is
asserted to stay inside int32 at each step (acc, acc + bias, x * 2^left, + output_offset).

Inputs are not stored: both this script and tests/test_fc_wzp.c fill them from the same
xorshift32 stream (seeded per case, as tests/qmx_test.h's qmx_test_rand), A first, then W.

File format (one record per line, first field its tag):
  case kind M N K lda ldw ldo per_channel has_bias a_zp w_zp out_zp act_min act_max i16
       mode fill_a fill_w seed
      kind i8 (qmx_fully_connected_i8 and _packed) or i4 (qmx_fully_connected_i4: W holds
      int4 values, packed by the test two per byte by flat index n*ldw + k, element 2i in
      the low nibble); i16: int16 output (else int8); mode 0 double rounding, 1 single
  q multiplier shift                               one per channel (per_channel) or one
  b bias                                           N lines when has_bias
  o v v ...                                        the outputs [M][N], 16 per line
  end
fill modes: 0 random, 1 only the two extremes, 2 all minimum, 3 all maximum, 4 small (-8..8;
int4: -4..4); of the dtype (int8 for A, int8 or int4 for W); modes 2 and 3 draw nothing.
"""
import sys
import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
OUT = "tests/data/fc8_wzp_golden.txt"


def i32(v):
    assert INT32_MIN <= v <= INT32_MAX, v
    return v


def srdhm(a, b):
    if a == INT32_MIN and b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    num = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    q = abs(num) >> 31                      # truncation toward zero
    return i32(q if num >= 0 else -q)


def rdbpot(x, e):
    mask = (1 << e) - 1
    rem = x & mask                          # Python &: two's complement of any width
    thr = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if rem > thr else 0)


def mbqm(x, m, shift, mode):
    """TFLite MultiplyByQuantizedMultiplier(int32 x, int32 m, int shift)."""
    i32(x)
    if mode == 0:
        left, right = max(shift, 0), max(-shift, 0)
        return i32(rdbpot(srdhm(i32(x * (1 << left)), m), right))
    assert m >= 0 and -31 <= shift <= 30
    ts = 31 - shift
    return i32((x * m + (1 << (ts - 1))) >> ts)


class Rng:
    def __init__(self, seed):
        self.s = seed if seed else 1

    def next(self):
        x = self.s
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.s = x
        return x


def fill(rng, n, mode, bits):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if mode == 2:
        return np.full(n, lo, dtype=np.int64)
    if mode == 3:
        return np.full(n, hi, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    mask = (1 << bits) - 1
    small = 17 if bits == 8 else 9
    for i in range(n):
        r = rng.next()
        if mode == 0:
            out[i] = (r & mask) + lo
        elif mode == 1:
            out[i] = hi if r & 1 else lo
        else:
            out[i] = r % small - small // 2
    return out


def run(c):
    M, N, K = c["M"], c["N"], c["K"]
    rng = Rng(c["seed"])
    a = fill(rng, (M - 1) * c["lda"] + K, c["fill_a"], 8)
    w = fill(rng, (N - 1) * c["ldw"] + K, c["fill_w"], 8 if c["kind"] == "i8" else 4)
    A = np.stack([a[m * c["lda"]: m * c["lda"] + K] for m in range(M)]) - c["a_zp"]
    W = np.stack([w[n * c["ldw"]: n * c["ldw"] + K] for n in range(N)]) - c["w_zp"]
    # TFLite's int32 loop: |term| <= 255 * 255, so no partial sum overflows when the bound
    # K * max|term| fits int32 (asserted); the final sum is then exact
    assert K * int(np.abs(A).max()) * int(np.abs(W).max()) <= INT32_MAX
    acc = A @ W.T                      # int64, exact
    lo, hi = (-32768, 32767) if c["i16"] else (-128, 127)
    amin, amax = c["act_min"], c["act_max"]
    if amin == 0 and amax == 0:
        amin, amax = lo, hi
    out = []
    for m in range(M):
        for n in range(N):
            pi = n if c["per_channel"] else 0
            x = i32(int(acc[m, n]))
            if c["has_bias"]:
                x = i32(x + c["bias"][n])
            v = i32(mbqm(x, c["mult"][pi], c["shift"][pi], c["mode"]) + c["out_zp"])
            out.append(min(max(v, amin), amax))
    return out


EXT_MULTS = [0, 1, 1 << 30, 0x40000001, 1518500250, 0x7FFFFFFF, 1073774592, 2000000000]
EXT_SHIFTS = [-31, -30, -17, -8, -1, 0, 1, 2]


def case(kind, M, N, K, seed, sh=(6, 14), **kw):
    c = dict(kind=kind, M=M, N=N, K=K, lda=K, ldw=K, ldo=N, per_channel=0, has_bias=0, a_zp=0,
             w_zp=0, out_zp=0, act_min=0, act_max=0, i16=0, mode=0, fill_a=0, fill_w=0,
             seed=seed, mult=None, shift=None, bias=None)
    c.update(kw)
    rng = Rng(seed ^ 0x3C3C3C3C)
    np_ = N if c["per_channel"] else 1
    if c["mult"] is None:   # real multipliers ~ 2^-sh[0] .. 2^-sh[1] (outputs spread)
        c["mult"] = [(1 << 30) + rng.next() % (1 << 30) for _ in range(np_)]
        c["shift"] = [-(sh[0] + rng.next() % (sh[1] - sh[0] + 1)) for _ in range(np_)]
    if c["has_bias"] and c["bias"] is None:
        c["bias"] = [int(rng.next() % (1 << 20)) - (1 << 19) for _ in range(N)]
    return c


def cases():
    cs = []
    # int8 weights (plain and packed)
    cs.append(case("i8", 1, 1, 1, 101, w_zp=5, a_zp=-3))
    cs.append(case("i8", 3, 17, 37, 102, lda=40, ldw=39, ldo=20, has_bias=1, a_zp=-3, w_zp=-7,
                   out_zp=5))
    cs.append(case("i8", 5, 33, 300, 103, per_channel=1, w_zp=127, a_zp=127, out_zp=-128,
                   sh=(15, 17)))
    cs.append(case("i8", 4, 19, 300, 104, per_channel=1, has_bias=1, w_zp=0, a_zp=9))
    # extremes: only -128 / 127 in A and W, extreme zero points, multipliers and shifts
    cs.append(case("i8", 2, 16, 1030, 105, per_channel=1, has_bias=1, w_zp=-128, a_zp=127,
                   fill_a=1, fill_w=1, bias=[(i * 7919) % 40000 - 20000 for i in range(16)],
                   mult=[EXT_MULTS[i % 8] for i in range(16)],
                   shift=[EXT_SHIFTS[(i * 3) % 8] for i in range(16)]))
    cs.append(case("i8", 3, 16, 200, 106, per_channel=1, w_zp=-128, a_zp=-128, fill_a=4,
                   fill_w=4, mult=[EXT_MULTS[(i * 5) % 8] for i in range(16)],
                   shift=[EXT_SHIFTS[i % 8] for i in range(16)], i16=1, out_zp=-300))
    # > 64 rows (two row panels), >= 16 rows (the packed register tiles), > 256 columns
    cs.append(case("i8", 66, 258, 64, 107, has_bias=1, w_zp=3, a_zp=-128, act_min=-100,
                   act_max=90, out_zp=7))
    cs.append(case("i8", 20, 40, 129, 108, per_channel=1, has_bias=1, w_zp=-1, a_zp=1, i16=1,
                   ldo=43, lda=131, ldw=130))
    # M = 1 (GEMV), N not a multiple of 16, int16 out with saturation
    cs.append(case("i8", 1, 100, 513, 109, w_zp=-77, a_zp=-50, i16=1, mult=[0x7FFFFFFF],
                   shift=[-6]))
    # single rounding (TFLITE_SINGLE_ROUNDING)
    cs.append(case("i8", 7, 21, 96, 110, mode=1, per_channel=1, has_bias=1, w_zp=100, a_zp=-20))
    cs.append(case("i8", 13, 9, 250, 111, mode=1, w_zp=-128, a_zp=127, i16=1, out_zp=1000))
    # K at the bound QMX_MATMUL_I8_MAX_K = 33025 with the largest products: acc = +-65025 K
    # = +-2147450625, with the bias exactly INT32_MAX (first case) and INT32_MIN (second)
    cs.append(case("i8", 2, 3, 33025, 112, fill_a=2, fill_w=2, a_zp=127, w_zp=127, has_bias=1,
                   bias=[33022, -5, 0], per_channel=1, mult=[1 << 30, 0x7FFFFFFF, 1],
                   shift=[-24, -31, 0]))
    cs.append(case("i8", 2, 3, 33025, 113, fill_a=3, fill_w=2, a_zp=-128, w_zp=127, has_bias=1,
                   bias=[-33023, 5, 0], per_channel=1, mult=[1 << 30, 0x7FFFFFFF, 1518500250],
                   shift=[-30, -31, -24], i16=1))
    cs.append(case("i8", 4, 8, 33025, 114, w_zp=-100, a_zp=60, has_bias=1, mult=[1 << 30],
                   shift=[-14], i16=1))
    # int4 weights: even K and ldw (the fast path), odd (the generic path), > 16 rows
    cs.append(case("i4", 1, 1, 2, 201, w_zp=3, a_zp=-3))
    cs.append(case("i4", 5, 13, 64, 202, has_bias=1, w_zp=-8, a_zp=127, out_zp=3))
    cs.append(case("i4", 3, 10, 37, 203, per_channel=1, w_zp=7, a_zp=-128, i16=1))
    cs.append(case("i4", 17, 9, 256, 204, per_channel=1, has_bias=1, w_zp=-3, a_zp=5,
                   ldw=258, lda=260, ldo=11))
    cs.append(case("i4", 2, 16, 300, 205, per_channel=1, w_zp=7, a_zp=-128, fill_a=1,
                   fill_w=1, mult=[EXT_MULTS[i % 8] for i in range(16)],
                   shift=[EXT_SHIFTS[(i * 3) % 8] for i in range(16)]))
    cs.append(case("i4", 6, 7, 200, 206, mode=1, has_bias=1, w_zp=-5, a_zp=-1, fill_w=4,
                   sh=(10, 12)))
    cs.append(case("i4", 4, 5, 99, 207, w_zp=0, a_zp=20, per_channel=1, ldw=99))
    # K at QMX_MATMUL_I4_MAX_K = 561433 with the largest products: acc = -3825 K = -2147481225
    # (odd K: the generic path), and K - 1 (even: the fast path), 3825 (K - 1) + 6247 = INT32_MAX
    cs.append(case("i4", 1, 2, 561433, 208, fill_a=3, fill_w=2, a_zp=-128, w_zp=7,
                   per_channel=1, mult=[1 << 30, 0x7FFFFFFF], shift=[-31, -20], has_bias=1,
                   bias=[-2423, 2423], i16=1))
    cs.append(case("i4", 2, 2, 561432, 209, fill_a=2, fill_w=2, a_zp=127, w_zp=7,
                   per_channel=1, mult=[1 << 30, 0x7FFFFFFF], shift=[-31, -22], has_bias=1,
                   bias=[-6248, 6247]))
    return cs


def main():
    lines = ["# golden data of the fully-connected kernels with a weight zero point "
             "(tests/test_fc_wzp.c); made by tests/gen/gen_fc8_wzp.py, see its docstring for "
             "the format and the sources",
             "# columns: tag fields"]
    for c in cases():
        out = run(c)
        lines.append("case %s %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d" % (
            c["kind"], c["M"], c["N"], c["K"], c["lda"], c["ldw"], c["ldo"], c["per_channel"],
            c["has_bias"], c["a_zp"], c["w_zp"], c["out_zp"], c["act_min"], c["act_max"],
            c["i16"], c["mode"], c["fill_a"], c["fill_w"], c["seed"]))
        for m, s in zip(c["mult"], c["shift"]):
            lines.append("q %d %d" % (m, s))
        if c["has_bias"]:
            for b in c["bias"]:
                lines.append("b %d" % b)
        for i in range(0, len(out), 16):
            lines.append("o " + " ".join(str(v) for v in out[i:i + 16]))
        lines.append("end")
    text = "\n".join(lines) + "\n"
    if "--check" in sys.argv:
        with open(OUT) as f:
            old = f.read()
        print("same" if old == text else "DIFFERS")
        return 0 if old == text else 1
    with open(OUT, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
