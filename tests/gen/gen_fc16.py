#!/usr/bin/python3
"""gen_fc16.py - golden data for the 16x8 kernels of qmx_kernels.h (qmx_fully_connected_i16,
_i16_packed, qmx_batch_matmul_i16, qmx_requantize64): TFLite's int16-activation reference
formulas, modelled independently in Python (numpy int64 for the dot products, Python integers
with explicit int64 / int32 checks for the requantization).

Run from the repository root with Debian's python3 + numpy:
    /usr/bin/python3 tests/gen/gen_fc16.py          # rewrites tests/data/fc16_golden.txt
    /usr/bin/python3 tests/gen/gen_fc16.py --check  # regenerates in memory, diffs the file

Sources read (the formulas below are written from them; no code copied): tensorflow/tensorflow
tensorflow/lite/kernels/internal/common.h (MultiplyByQuantizedMultiplier for an int64 x: the
multiplier rounded to 15 bits, (x * rm + 2^(total_shift - 1)) >> total_shift with total_shift =
15 - shift, the int64 result converted to int32; its asserts: multiplier >= 0, shift in [-31, 7],
-2^47 <= x < 2^47), reference/integer_ops/fully_connected.h (the int16-input FullyConnected and
FullyConnectedPerChannel: int64 acc += (filter + filter_offset) * input, + int64 bias, requantize,
clamp; filter_offset = -filter zero point, input and output offsets 0 in 16x8),
reference/batch_matmul.h (BatchMatMul<int16, int64>: the same accumulate-requantize-clamp, no
bias, per tensor) and lite/kernels/fully_connected.cc (FullyConnectedInt16).

Inputs are not stored: both this script and tests/test_matmul_i16.c fill them from the same
xorshift32 stream (seeded per case, as tests/qmx_test.h's qmx_test_rand), so the file holds the
shapes, the requantization parameters, the biases and the expected outputs.

File format (one record per line, first field its tag):
  r acc multiplier shift want                      qmx_requantize64 (TFLite MBQM, int64 x)
  case kind batch M N K lda ldw ldo xbs ybs obs adj_x adj_y per_channel has_bias w_zp act_min
       act_max fill_a fill_w seed big              kind fc (plain and packed) or bmm; for bmm,
                                                   lda/ldw are ldx/ldy and fill_w fills Y (int16)
  q multiplier shift                               one per channel (per_channel) or one
  b bias                                           N lines when has_bias
  o v v ...                                        the outputs [batch][M][N], 16 per line
  end
fill modes: 0 random, 1 only the two extremes, 2 all minimum, 3 all maximum, 4 small (-8..8);
modes 2 and 3 draw nothing from the stream. big = 1: skipped on the Cortex-M targets (RAM).
"""
import sys
import numpy as np

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
OUT = "tests/data/fc16_golden.txt"


def mbqm64(x, m, shift):
    """TFLite MultiplyByQuantizedMultiplier(int64_t x, int32_t m, int shift)."""
    assert 0 <= m <= 0x7FFFFFFF and -31 <= shift <= 7
    assert -(1 << 47) <= x < (1 << 47)
    rm = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    ts = 15 - shift
    t = x * rm + (1 << (ts - 1))
    assert INT64_MIN <= t <= INT64_MAX
    r = t >> ts                       # Python >>: floor, as the arithmetic shift
    return ((r + (1 << 31)) % (1 << 32)) - (1 << 31)   # int64 -> int32 modulo 2^32


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
    for i in range(n):
        r = rng.next()
        if mode == 0:
            out[i] = (r & mask) + lo
        elif mode == 1:
            out[i] = hi if r & 1 else lo
        else:
            out[i] = r % 17 - 8
    return out


def extent(batch, bs, rows, cols, ld):
    return (batch - 1) * bs + (rows - 1) * ld + cols


def stage(acc, n, c):
    pi = n if c["per_channel"] else 0
    x = int(acc) + (c["bias"][n] if c["has_bias"] else 0)
    v = mbqm64(x, c["mult"][pi], c["shift"][pi])
    amin, amax = c["act_min"], c["act_max"]
    if amin == 0 and amax == 0:
        amin, amax = -32768, 32767
    return min(max(v, amin), amax)


def run_fc(c):
    M, N, K = c["M"], c["N"], c["K"]
    rng = Rng(c["seed"])
    a = fill(rng, extent(1, 0, M, K, c["lda"]), c["fill_a"], 16)
    w = fill(rng, extent(1, 0, N, K, c["ldw"]), c["fill_w"], 8)
    A = np.stack([a[m * c["lda"]: m * c["lda"] + K] for m in range(M)])
    W = np.stack([w[n * c["ldw"]: n * c["ldw"] + K] for n in range(N)]) - c["w_zp"]
    acc = A @ W.T                      # int64, exact: |acc| < 2^46
    return [stage(acc[m, n], n, c) for m in range(M) for n in range(N)]


def run_bmm(c):
    B, M, N, K = c["batch"], c["M"], c["N"], c["K"]
    ldx, ldy = c["lda"], c["ldw"]
    rng = Rng(c["seed"])
    xr, xc = (K, M) if c["adj_x"] else (M, K)
    yr, yc = (N, K) if c["adj_y"] else (K, N)
    x = fill(rng, extent(B, c["xbs"], xr, xc, ldx), c["fill_a"], 16)
    y = fill(rng, extent(B, c["ybs"], yr, yc, ldy), c["fill_w"], 16)
    res = []
    for b in range(B):
        xs = np.stack([x[b * c["xbs"] + r * ldx: b * c["xbs"] + r * ldx + xc] for r in range(xr)])
        ys = np.stack([y[b * c["ybs"] + r * ldy: b * c["ybs"] + r * ldy + yc] for r in range(yr)])
        X = xs.T if c["adj_x"] else xs          # [M, K]
        Y = ys.T if c["adj_y"] else ys          # [K, N]
        acc = X @ Y
        res += [stage(acc[i, j], j, c) for i in range(M) for j in range(N)]
    return res


EXT_MULTS = [0, 1, 32767, 32768, 1 << 30, 0x7FFEFFFF, 0x7FFF0000, 0x7FFFFFFF]
EXT_SHIFTS = [-31, -30, -17, -1, 0, 1, 6, 7]


def case(kind, M, N, K, seed, **kw):
    c = dict(kind=kind, batch=1, M=M, N=N, K=K, lda=None, ldw=None, ldo=N, xbs=0, ybs=0, obs=0,
             adj_x=0, adj_y=0, per_channel=0, has_bias=0, w_zp=0, act_min=0, act_max=0,
             fill_a=0, fill_w=0, seed=seed, big=0, mult=None, shift=None, bias=None)
    c.update(kw)
    if c["lda"] is None:
        c["lda"] = (M if c["adj_x"] else K) if kind == "bmm" else K
    if c["ldw"] is None:
        c["ldw"] = (K if c["adj_y"] else N) if kind == "bmm" else K
    rng = Rng(seed ^ 0x5A5A5A5A)
    np_ = N if c["per_channel"] else 1
    if c["mult"] is None:   # real multipliers ~ 2^-12 .. 2^-20: outputs mostly inside int16
        c["mult"] = [(1 << 30) + rng.next() % (1 << 30) for _ in range(np_)]
        c["shift"] = [-(12 + rng.next() % 9) for _ in range(np_)]
    if c["has_bias"] and c["bias"] is None:
        c["bias"] = [int(rng.next() % (1 << 24)) - (1 << 23) for _ in range(N)]
    return c


def cases():
    cs = []
    cs.append(case("fc", 1, 1, 1, 11))
    cs.append(case("fc", 3, 17, 37, 12, lda=40, ldw=39, ldo=20, per_channel=1, has_bias=1))
    cs.append(case("fc", 5, 33, 300, 13, has_bias=1, w_zp=-5))
    # extreme multipliers / shifts per channel, extreme data: saturation at both ends, wrapping
    cs.append(case("fc", 2, 16, 1030, 14, per_channel=1, has_bias=1, w_zp=127, fill_a=1,
                   fill_w=1, mult=[EXT_MULTS[i % 8] for i in range(16)],
                   shift=[EXT_SHIFTS[(i * 3) % 8] for i in range(16)]))
    cs.append(case("fc", 3, 16, 200, 15, per_channel=1, fill_a=4, fill_w=4,
                   mult=[EXT_MULTS[(i * 5) % 8] for i in range(16)],
                   shift=[EXT_SHIFTS[i % 8] for i in range(16)]))
    cs.append(case("fc", 70, 20, 64, 16, per_channel=1, has_bias=1, act_min=-1000, act_max=2000,
                   bias=[((i * 0x9E3779B1) % (1 << 41)) - (1 << 40) for i in range(20)]))
    cs.append(case("fc", 4, 3, 511, 17, fill_a=2, fill_w=2, mult=[1 << 30], shift=[-25]))
    cs.append(case("fc", 2, 5, 700, 18, w_zp=-128, fill_a=0, fill_w=3, has_bias=1,
                   bias=[(1 << 46), -(1 << 46), 0, 123456789, -987654321]))
    cs.append(case("fc", 9, 40, 1500, 19, per_channel=1, has_bias=1, w_zp=3, ldo=41, lda=1501))
    # K at the documented bound 2^23 with the largest products and biases: |acc + bias| < 2^47
    cs.append(case("fc", 1, 2, 1 << 23, 20, fill_a=2, fill_w=2, w_zp=127, has_bias=1,
                   per_channel=1, bias=[(1 << 46), -(1 << 46)], mult=[1 << 30, 0x7FFFFFFF],
                   shift=[-31, -31], big=1))
    cs.append(case("fc", 1, 2, 1 << 23, 21, fill_a=3, fill_w=2, w_zp=127, has_bias=1,
                   bias=[-(1 << 46), (1 << 46)], mult=[1 << 30], shift=[-31], big=1))
    # batch matmul: both transpose flags, batch > 1, broadcasting, strides
    cs.append(case("bmm", 1, 1, 1, 31))
    cs.append(case("bmm", 4, 5, 7, 32, batch=3, xbs=28, ybs=35, obs=20))
    cs.append(case("bmm", 3, 18, 520, 33, batch=2, adj_x=1, xbs=3 * 520, ybs=520 * 18, obs=54))
    cs.append(case("bmm", 5, 4, 33, 34, batch=2, adj_y=1, lda=35, ldw=34, ldo=6, xbs=0,
                   ybs=4 * 34, obs=31))
    cs.append(case("bmm", 66, 3, 9, 35, batch=2, adj_x=1, adj_y=1, lda=67, ldw=10, ldo=3,
                   xbs=9 * 67, ybs=0, obs=66 * 3, per_channel=1, has_bias=1, act_min=-300,
                   act_max=300))
    cs.append(case("bmm", 2, 17, 40, 36, batch=2, fill_a=1, fill_w=1, xbs=80, ybs=40 * 17,
                   obs=34, per_channel=1, mult=[EXT_MULTS[i % 8] for i in range(17)],
                   shift=[EXT_SHIFTS[(i * 3) % 8] for i in range(17)]))
    cs.append(case("bmm", 1, 2, 1 << 16, 37, adj_y=1, fill_a=2, fill_w=2, per_channel=1,
                   mult=[1 << 30, 0x7FFFFFFF], shift=[-31, -31]))
    cs.append(case("bmm", 1, 1, 1 << 16, 38, fill_a=2, fill_w=3, ldw=1, mult=[1 << 30],
                   shift=[-31]))
    return cs


def scalar_rows():
    rows = []
    accs = [0, 1, -1, 2, -2, 127, -128, 32767, -32768, (1 << 31) - 1, -(1 << 31), (1 << 40) + 3,
            -(1 << 40) - 5, (1 << 46), -(1 << 46), (1 << 47) - 1, -(1 << 47)]
    mults = EXT_MULTS + [1518500250, 1073774592, 1073807360]
    for a in accs:
        for m in mults:
            for s in EXT_SHIFTS:
                rows.append((a, m, s, mbqm64(a, m, s)))
    rng = Rng(0xC0FFEE)
    for _ in range(2000):
        a = ((rng.next() << 16) ^ rng.next()) % (1 << 48) - (1 << 47)
        m = rng.next() & 0x7FFFFFFF
        s = rng.next() % 39 - 31
        rows.append((a, m, s, mbqm64(a, m, s)))
    return rows


def main():
    lines = ["# golden data of the 16x8 kernels (tests/test_matmul_i16.c); made by "
             "tests/gen/gen_fc16.py, see its docstring for the format and the sources",
             "# columns: tag fields"]
    for a, m, s, v in scalar_rows():
        lines.append("r %d %d %d %d" % (a, m, s, v))
    for c in cases():
        out = run_fc(c) if c["kind"] == "fc" else run_bmm(c)
        lines.append("case %s %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d" % (
            c["kind"], c["batch"], c["M"], c["N"], c["K"], c["lda"], c["ldw"], c["ldo"],
            c["xbs"], c["ybs"], c["obs"], c["adj_x"], c["adj_y"], c["per_channel"],
            c["has_bias"], c["w_zp"], c["act_min"], c["act_max"], c["fill_a"], c["fill_w"],
            c["seed"], c["big"]))
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
