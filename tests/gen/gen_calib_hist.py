#!/usr/bin/python3
"""gen_calib_hist.py - golden data for qmx_calib.h's torch-compatible histogram observer
(qmx_torch_histogram_*), from PyTorch 1.13's torch.ao.quantization.HistogramObserver.

Run from the repository root with Debian's python3 + numpy + torch (python3-torch 1.13):
    /usr/bin/python3 tests/gen/gen_calib_hist.py          # rewrites tests/data/calib_torch_hist.txt
    /usr/bin/python3 tests/gen/gen_calib_hist.py --check  # regenerates in memory, diffs the file

Each case is one sequence of seeded batches (float32, written as 8-hex-digit bit patterns) fed
to one HistogramObserver per qparams configuration (forward does not depend on the dtype or
qscheme; every observer tracks the same min_val / max_val, which the generator asserts).
Recorded: min_val / max_val after every batch, then per configuration torch's
calculate_qparams() scale / zero point and the range _non_linear_param_search() chose.
The sequences cover: several batches (so _combine_histograms runs), range growth downwards,
upwards and both, batches inside the range (the plain add), an outlier, one-sided data,
ranges inside (-1, 1) (torch's int() of the range is 0 for both ends and histc falls back to
the batch's own min / max), constant batches (the restart when min_val == max_val, and the
histc range widened by 1), all-zero data, bins 2048, 1000, 512, 256 and 64, upsample rates
256, 128, 32, 16 and 1, 16 seeded random sequences, and four pairs of 10^5-value batches made
by a generator the C test repeats (lcg()), large enough that the float32 comparison of cSum
with the Python-float thresholds decides the search.
"""
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
F = np.float32
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = "tests/gen/gen_calib_hist.py"
OUT = "calib_torch_hist.txt"


def hx(v):
    return "%08x" % int(np.array(v, dtype=np.float32).view(np.uint32))


def sequences():
    rng = np.random.default_rng(4321)
    nrm = lambda n, s, m=0.0: (rng.standard_normal(n) * s + m).astype(F)
    uni = lambda n, a, b: rng.uniform(a, b, n).astype(F)
    seqs = []
    # name, bins, upsample, batches
    seqs.append(("normal", 2048, 128, [nrm(600, 1.0), nrm(600, 1.5), nrm(600, 0.8)]))
    x = nrm(600, 0.5); x[17] = 20.0
    seqs.append(("outlier", 2048, 128, [nrm(600, 0.5), x, nrm(600, 0.5)]))
    seqs.append(("down_up", 2048, 128, [uni(500, -3, 5), uni(500, -10, 2), uni(500, -1, 1),
                                         uni(500, 0, 30)]))
    seqs.append(("positive", 2048, 128, [uni(500, 0.5, 6), uni(500, 0.2, 7), uni(500, 1, 9)]))
    seqs.append(("asym_mean", 2048, 128, [nrm(500, 2.0, 5.0), nrm(500, 3.0, 4.0)]))
    seqs.append(("tiny", 2048, 128, [nrm(500, 1e-3), nrm(500, 2e-3), nrm(500, 5e-4)]))
    seqs.append(("sub_one", 2048, 128, [uni(500, -0.9, 0.7), uni(500, -0.5, 0.95)]))
    seqs.append(("zeros", 2048, 128, [np.zeros(300, F), np.zeros(300, F)]))
    seqs.append(("const_then", 2048, 128, [np.full(300, 2.5, F), nrm(500, 1.0)]))
    seqs.append(("const_mid", 2048, 128, [uni(500, 0.1, 0.6), np.full(200, 0.3, F),
                                          uni(500, 0.2, 0.4)]))
    seqs.append(("grow_x40", 2048, 128, [nrm(400, 0.1), nrm(400, 4.0)]))
    seqs.append(("bins256", 256, 128, [nrm(500, 1.0), nrm(500, 2.0, 1.0), uni(500, -6, 1)]))
    seqs.append(("bins256_up16", 256, 16, [nrm(500, 1.0), nrm(500, 2.5), nrm(500, 0.7)]))
    seqs.append(("single", 2048, 128, [nrm(700, 1.3, -0.4)]))
    # seeded random sequences: other bin counts (also not powers of two) and upsample rates,
    # heavy tails, integer-valued data, constant batches anywhere
    for c in range(16):
        bins = int(rng.choice([2048, 1000, 512, 256, 64]))
        ups = int(rng.choice([128, 32, 1, 256]))
        batches = []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(20, 300))
            kind = int(rng.integers(0, 6))
            sc = float(10 ** rng.uniform(-3, 2))
            m = float(rng.standard_normal() * sc * rng.choice([0, 0.5, 3]))
            if kind == 0:
                x = rng.standard_normal(n) * sc + m
            elif kind == 1:
                x = rng.uniform(-sc, sc * rng.uniform(0, 2), n) + m
            elif kind == 2:
                x = rng.standard_t(2, n) * sc + m
            elif kind == 3:
                x = np.full(n, m)
            elif kind == 4:
                x = np.abs(rng.standard_normal(n)) * sc
            else:
                x = np.round(rng.standard_normal(n) * sc)
            batches.append(x.astype(F))
        seqs.append(("random%d" % c, bins, ups, batches))
    # 10^5-value batches, generated on both sides (see lcg): totals large enough that float32
    # cSum values meet the Python-float quantile thresholds at float32 rounding distance
    for seed, shift in ((1, 20), (2, 22), (3, 23), (4, 21)):
        seqs.append(("lcg%d" % seed, 2048, 128, [("lcg", seed * 10 + k, 100000, shift - k)
                                                 for k in range(2)]))
    return seqs


def lcg(seed, n, shift):
    """xorshift32 (13, 17, 5); value i = (a + b) * 2^-shift with a, b = (next >> 8) - 2^23,
    times 8 when i % 997 == 0: exact in float32, so tests/test_calib.c regenerates the bits."""
    s = seed & 0xFFFFFFFF
    out = np.empty(n, np.float32)
    for i in range(n):
        v = 0
        for _ in range(2):
            s ^= (s << 13) & 0xFFFFFFFF
            s ^= s >> 17
            s ^= (s << 5) & 0xFFFFFFFF
            v += (s >> 8) - (1 << 23)
        if i % 997 == 0:
            v *= 8
        out[i] = np.float32(v) * np.float32(2.0 ** -shift)
    return out


def fnv64(hist):
    """FNV-1a 64 over the float32 bit patterns of the histogram (little-endian bytes)."""
    h = 0xCBF29CE484222325
    for b in np.asarray(hist, dtype=np.float32).tobytes():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


# (dtype, qscheme, reduce_range, quant_min, quant_max); (0, 0) = torch's default range
CONFIGS = [("uint8", "affine", 0, 0, 0), ("int8", "symmetric", 0, 0, 0),
           ("uint8", "symmetric", 0, 0, 0), ("int8", "affine", 1, 0, 0),
           ("uint8", "affine", 0, 0, 15)]


def observer(O, torch, bins, ups, cfg):
    dt, qs, rr, qmin, qmax = cfg
    kw = {}
    if (qmin, qmax) != (0, 0):
        kw = dict(quant_min=qmin, quant_max=qmax)
    return O.HistogramObserver(bins=bins, upsample_rate=ups,
                               dtype=torch.quint8 if dt == "uint8" else torch.qint8,
                               qscheme=torch.per_tensor_affine if qs == "affine"
                               else torch.per_tensor_symmetric,
                               reduce_range=bool(rr), **kw)


def cases():
    import torch
    from torch.ao.quantization import observer as O
    torch.set_num_threads(1)
    out = ["# %s - generated by %s; do not edit. Regenerate: /usr/bin/python3 %s" % (OUT, GEN, GEN),
           "# torch %s HistogramObserver" % torch.__version__,
           "# case NAME BINS UPSAMPLE_RATE BATCHES",
           "# x COUNT HEX...        one batch (float32 bit patterns)",
           "# lcg SEED COUNT SHIFT  one batch from the generator's lcg() (the C test has a copy)",
           "# mm MIN MAX            torch min_val / max_val after that batch",
           "# hist FNV              FNV-1a 64 of the histogram's float32 bit patterns (LE bytes)",
           "# qp DTYPE QSCHEME REDUCE_RANGE QMIN QMAX SCALE ZP NEW_MIN NEW_MAX",
           "#   QMIN QMAX 0 0 = torch's default range; NEW_MIN NEW_MAX from _non_linear_param_search",
           "# end"]
    for name, bins, ups, batches in sequences():
        obs = [observer(O, torch, bins, ups, c) for c in CONFIGS]
        out.append("case %s %d %d %d" % (name, bins, ups, len(batches)))
        for x in batches:
            if isinstance(x, tuple):
                out.append("lcg %d %d %d" % x[1:])
                x = lcg(*x[1:])
            else:
                out.append("x %d %s" % (len(x), " ".join(hx(v) for v in x)))
            for ob in obs:
                ob(torch.from_numpy(x.copy()))
            mm = {(hx(ob.min_val), hx(ob.max_val)) for ob in obs}
            assert len(mm) == 1, "observers disagree on min/max"
            out.append("mm %s %s" % mm.pop())
            hs = {fnv64(ob.histogram.numpy()) for ob in obs}
            assert len(hs) == 1, "observers disagree on the histogram"
            out.append("hist %016x" % hs.pop())
        for cfg, ob in zip(CONFIGS, obs):
            s, zp = ob.calculate_qparams()
            nmin, nmax = ob._non_linear_param_search()
            out.append("qp %s %s %d %d %d %s %d %s %s" % (cfg + (hx(s.item()), int(zp.item()),
                                                                  hx(nmin.item()), hx(nmax.item()))))
        out.append("end")
    return out


def main():
    lines = cases()
    path = os.path.join(ROOT, "tests", "data", OUT)
    text = "\n".join(lines) + "\n"
    if "--check" in sys.argv:
        old = open(path).read() if os.path.exists(path) else ""
        if old != text:
            print("DIFFERS: %s" % path)
            sys.exit(1)
        return
    with open(path, "w") as f:
        f.write(text)
    print("wrote %s (%d lines, %d bytes)" % (path, len(lines), len(text)))


if __name__ == "__main__":
    main()
