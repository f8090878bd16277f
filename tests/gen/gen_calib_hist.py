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
with the Python-float thresholds decides the search. Then 44 sequences (sequences_npot, named
np*) with bin counts that are not powers of two (NPOT_BINS), upsample rates 1..256, values on
grids that sit on histc's bin edges, batches whose linspace last edge is off the max, and lcg
batches. Then 4 sequences (sequences_neg, named neg*) of 6 to 8 lcg batches with repeated range
growths, where torch's bins go negative (see sequences_neg) and the observer carries on: more
growths and plain adds over the negative bins, then calculate_qparams.

A second file, tests/data/calib_torch_histc.txt, checks torch.histc on its own (histc_cases):
480 calls with bin counts 1..4096 and values on, next to and between the bin edges. torch's
histc reads linspace's last edge, which depends on the CPU capability (vector width): the data
is torch's AVX2 kernels (what torch 1.13 picks on an AVX2 or AVX-512 CPU); --check under
ATEN_CPU_CAPABILITY=default or avx512 reports a difference.
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
OUT_HISTC = "calib_torch_histc.txt"


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


# bin counts that are not powers of two; bins + 1 a multiple of 16 (15, 95, 207, 1023, 1951, 2047)
# puts linspace's last edge on its vector path, where it can be 1 ulp off the given max
NPOT_BINS = [77, 300, 1000, 1536, 3, 2047, 95, 207, 1951, 1023, 100, 15]


def sequences_npot():
    """Observer sequences with bin counts that are not powers of two (a second generator, so the
    sequences above keep their data). Values on coarse grids (multiples of 2^-k, integers) and
    the lcg batches sit on or next to histc's bin edges, where the float order decides the bin."""
    rng = np.random.default_rng(2718)
    nrm = lambda n, s, m=0.0: (rng.standard_normal(n) * s + m).astype(F)
    uni = lambda n, a, b: rng.uniform(a, b, n).astype(F)
    grid = lambda x, k: (np.round(x * 2.0 ** k) / 2.0 ** k).astype(F)
    seqs = []
    seqs.append(("np77_normal", 77, 128, [nrm(600, 1.0), nrm(600, 1.5), nrm(600, 0.8)]))
    seqs.append(("np77_grid", 77, 32, [grid(nrm(700, 3.0), 3), grid(nrm(700, 5.0, 2.0), 2)]))
    seqs.append(("np300_grid", 300, 128, [grid(uni(800, -6, 9), 4), grid(uni(800, -20, 4), 2),
                                         grid(uni(800, -3, 3), 5)]))
    seqs.append(("np300_up1", 300, 1, [grid(nrm(600, 2.0), 4), grid(nrm(600, 7.0), 3)]))
    seqs.append(("np1000_int", 1000, 128, [np.round(nrm(900, 40.0)).astype(F),
                                          np.round(nrm(900, 90.0, 30.0)).astype(F)]))
    seqs.append(("np1000_up256", 1000, 256, [grid(uni(700, -1, 12), 6), grid(uni(700, -9, 30), 3)]))
    seqs.append(("np1536_up16", 1536, 16, [grid(nrm(800, 4.0), 5), grid(nrm(800, 9.0, -3.0), 4),
                                          grid(uni(800, -2, 2), 7)]))
    seqs.append(("np3", 3, 128, [grid(nrm(400, 2.0), 2), grid(nrm(400, 6.0), 1), nrm(400, 1.0)]))
    seqs.append(("np2047_up1", 2047, 1, [grid(uni(900, 0, 50), 5), grid(uni(900, 0, 130), 4)]))
    seqs.append(("np2047_up256", 2047, 256, [grid(nrm(900, 3.0), 6), grid(nrm(900, 8.0), 5)]))
    seqs.append(("np95_sub_one", 95, 128, [grid(uni(600, -0.9, 0.7), 12), grid(uni(600, -0.5, 0.95), 12),
                                          uni(600, -0.3, 0.3)]))
    seqs.append(("np207_tiny", 207, 32, [grid(nrm(600, 1e-3), 20), grid(nrm(600, 2e-3), 19)]))
    seqs.append(("np1951_pos", 1951, 128, [grid(uni(800, 0.5, 6), 8), grid(uni(800, 0.2, 7), 8)]))
    seqs.append(("np1023_const", 1023, 128, [np.full(300, 0.75, F), grid(nrm(700, 2.0), 6),
                                            np.full(200, 1.0, F), grid(nrm(700, 3.0), 5)]))

    # every value on a bin edge: a grid of (max - min) / bins with both ends in the batch
    def edges(n, lo, hi, step):
        x = lo + step * rng.integers(0, int(round((hi - lo) / step)) + 1, n)
        x[:2] = lo, hi
        return x.astype(F)
    seqs.append(("np77_edges", 77, 128, [edges(600, -38, 39, 1), edges(600, -60, 80, 1),
                                        edges(600, -20, 30, 0.5)]))
    seqs.append(("np300_edges", 300, 32, [edges(700, -30, 45, 0.25), edges(700, -40, 60, 0.25)]))
    seqs.append(("np1000_edges", 1000, 128, [edges(800, 0, 125, 0.125), edges(800, -3, 140, 0.125)]))
    seqs.append(("np1536_edges", 1536, 16, [edges(800, -96, 96, 0.125), edges(800, -50, 150, 0.25)]))
    seqs.append(("np2047_edges", 2047, 1, [edges(900, 0, 2047, 1), edges(900, -100, 3000, 1)]))
    seqs.append(("np3_edges", 3, 128, [edges(300, -1, 2, 1), edges(300, -4, 5, 1)]))
    seqs.append(("np100_edges", 100, 256, [edges(600, -10, 15, 0.25), edges(600, -10, 15, 0.125)]))

    # batches inside (-1, 1), where histc takes the batch's own min / max, drawn until linspace's
    # last edge differs from the max (bins + 1 a multiple of 16): torch then leaves the max out
    # of the histogram, or counts a little above it
    def off_edge(nb, n, a, b):
        import torch
        for _ in range(10000):
            x = rng.uniform(a, b, n).astype(F)
            if torch.linspace(float(x.min()), float(x.max()), nb + 1)[-1].item() != float(x.max()):
                return x
        raise RuntimeError("npo batch with an off last edge")
    seqs.append(("np95_off_edge", 95, 128, [off_edge(95, 500, -0.9, 0.8), off_edge(95, 500, -0.6, 0.7),
                                           off_edge(95, 500, -0.95, 0.95)]))
    seqs.append(("np1951_off_edge", 1951, 32, [off_edge(1951, 700, -0.5, 0.9),
                                              off_edge(1951, 700, -0.99, 0.3)]))
    seqs.append(("np1023_off_edge", 1023, 256, [off_edge(1023, 400, 0.01, 0.9),
                                               off_edge(1023, 400, -0.9, 0.2)]))
    for c in range(16):
        bins = int(rng.choice(NPOT_BINS))
        ups = int(rng.choice([128, 32, 1, 256, 16]))
        batches = []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(50, 1000))
            sc = float(10 ** rng.uniform(-2, 2))
            m = float(rng.standard_normal() * sc * rng.choice([0, 0.5, 3]))
            x = rng.standard_normal(n) * sc + m
            if rng.random() < 0.7:   # on a grid of about 1/64 of the spread
                k = int(np.floor(6 - np.log2(sc)))
                x = np.round(x * 2.0 ** k) / 2.0 ** k
            batches.append(x.astype(F))
        seqs.append(("nprandom%d" % c, bins, ups, batches))
    for seed, (bins, ups) in enumerate(((77, 128), (1000, 32), (2047, 128), (300, 256)), 5):
        seqs.append(("nplcg%d" % seed, bins, ups, [("lcg", seed * 10 + k, 100000, 21 - k)
                                                  for k in range(2)]))
    return seqs


def sequences_neg():
    """Sequences whose bins go negative in torch (and stay so through further batches). Once a
    combine made counts fractional (an old bin split between two new ones) and the upsampled
    cumsum (about total x upsample_rate) is past 2^24, _combine_histograms subtracts the float32
    rounding of the previous cumsum from the exact float64 one, and a bin where the new batch
    adds nothing gets a small negative count (-1/128 or -1/64 and, after more growths, other
    negative values). torch keeps such bins in later combines, plain adds and the parameter
    search. Each sequence: growths by about 2x (lcg shifts going down), growths over bins that
    are already negative, and (but for neg2047_grow8) batches inside the range (the plain add).
    cases() asserts that every neg* sequence has negative bins 2 batches before its end."""
    seqs = []
    for name, bins, ups, shifts in (("neg2048", 2048, 128, [22, 21, 20, 21, 19, 18, 19]),
                                     ("neg2047", 2047, 128, [20, 21, 19, 18, 20, 17, 16]),
                                     ("neg1000_up256", 1000, 256, [21, 20, 19, 18, 17, 19]),
                                     ("neg2047_grow8", 2047, 128, [23, 22, 21, 20, 19, 18, 17, 16])):
        base = 200 + 10 * len(seqs)
        seqs.append((name, bins, ups, [("lcg", base + k, 100000, sh) for k, sh in enumerate(shifts)]))
    return seqs


def histc_cases(torch):
    """torch.histc on its own: (bins, min, max, data) with data at, next to and between bin
    edges: lo + k * (hi - lo) / bins in double rounded to float32 and 1 or 2 ulp either side,
    the ends, the values just outside them, and linspace's last edge (which histc uses as the
    upper end) with its neighbours. min == max (torch then takes the data's min / max, and widens
    a constant batch by 1 each way) included."""
    rng = np.random.default_rng(1337)
    out = []
    specials = NPOT_BINS + [1, 2, 5, 7, 31, 47, 63, 127, 255, 256, 511, 2048, 4095, 4096]
    for c in range(480):
        nb = specials[c] if c < len(specials) else int(rng.integers(1, 4097))
        if c >= len(specials) and rng.random() < 0.4:
            nb = max(15, nb - (nb + 1) % 16)           # bins + 1 a multiple of 16
        kind = c % 6
        if kind == 0:       # integer bounds, as the observer passes them
            lo = int(rng.integers(-60, 5)); hi = lo + int(rng.integers(1, 200))
        elif kind == 1:
            s = 10 ** rng.uniform(-3, 3); lo = F(rng.uniform(-s, s)); hi = F(lo + s * rng.uniform(0.01, 3))
        elif kind == 2:
            lo = 0; hi = int(2 ** rng.integers(0, 24)) + int(rng.integers(0, 1000))
        elif kind == 3:     # tiny and huge ranges
            s = 10 ** rng.uniform(-30, 30); lo = F(-s * rng.uniform(0, 1)); hi = F(s * rng.uniform(0.1, 1))
        elif kind == 4:     # min == max: the data's own min / max
            lo = hi = int(rng.integers(-3, 3))
        else:
            s = 10 ** rng.uniform(-8, 8); lo = F(s * rng.uniform(-1, 0.5)); hi = F(lo + s * rng.uniform(0.001, 1))
        lo = float(F(lo)); hi = float(F(hi))
        if not hi > lo and kind != 4:
            continue
        a, b = F(lo), F(hi)
        if kind == 4:
            a = F(rng.uniform(-5, 5)); b = F(a + 10 ** rng.uniform(-6, 1))
            if rng.random() < 0.25:
                b = a
        if b == a:
            x = np.full(int(rng.integers(1, 6)), a, F)
        else:
            e0, e1 = (a, b) if kind == 4 else (F(lo), F(hi))
            R = torch.linspace(float(e0) if kind == 4 else lo, float(e1) if kind == 4 else hi,
                               nb + 1)[-1].item() if e1 > e0 else float(e1)
            parts = [rng.uniform(a, b, int(rng.integers(6, 14))).astype(F)]
            k = rng.integers(0, nb + 1, int(rng.integers(6, 12)))
            e = (np.float64(e0) + k * (np.float64(e1) - np.float64(e0)) / nb).astype(F)
            parts += [e, np.nextafter(e, F(np.inf)), np.nextafter(e, F(-np.inf))]
            u2 = np.nextafter(np.nextafter(e[:3], F(np.inf)), F(np.inf))
            d2 = np.nextafter(np.nextafter(e[:3], F(-np.inf)), F(-np.inf))
            ends = [e0, e1, F(R)]
            ends += [np.nextafter(v, F(s)) for v in (e0, e1, F(R)) for s in (-np.inf, np.inf)]
            parts += [u2, d2, np.array(ends, F)]
            x = np.concatenate(parts).astype(F)
            if kind == 4:
                x = np.clip(x, a, b).astype(F)
            x = x[np.isfinite(x)]
            rng.shuffle(x)
        h = torch.histc(torch.from_numpy(x.copy()), nb, min=lo, max=hi).numpy()
        nz = np.nonzero(h)[0]
        out.append("hc %d %s %s %d" % (nb, hx(lo), hx(hi), len(x)))
        out.append("x %s" % " ".join(hx(v) for v in x))
        out.append("c %016x %d %s" % (fnv64(h), len(nz), " ".join("%d:%d" % (i, int(h[i])) for i in nz)))
    return out


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
           "# end",
           "# the cases named np* (sequences_npot) have bin counts that are not powers of two",
           "# the cases named neg* (sequences_neg) reach negative bins (torch's float32 cumsum in the combine)"]
    for name, bins, ups, batches in sequences() + sequences_npot() + sequences_neg():
        obs = [observer(O, torch, bins, ups, c) for c in CONFIGS]
        out.append("case %s %d %d %d" % (name, bins, ups, len(batches)))
        neg = []
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
            neg.append(int((obs[0].histogram < 0).sum()))
        if name.startswith("neg"):   # negative bins, then at least two more batches over them
            assert neg[-3] > 0 and neg[-1] > 0, "%s: negative bins %s" % (name, neg)
        for cfg, ob in zip(CONFIGS, obs):
            s, zp = ob.calculate_qparams()
            nmin, nmax = ob._non_linear_param_search()
            out.append("qp %s %s %d %d %d %s %d %s %s" % (cfg + (hx(s.item()), int(zp.item()),
                                                                  hx(nmin.item()), hx(nmax.item()))))
        out.append("end")
    return out


def histc_file():
    import torch
    torch.set_num_threads(1)
    head = ["# %s - generated by %s; do not edit. Regenerate: /usr/bin/python3 %s" % (OUT_HISTC, GEN, GEN),
            "# torch %s torch.histc(x, BINS, min=MIN, max=MAX) on CPU, float32, one thread" % torch.__version__,
            "#   (%s; histc reads linspace's last edge, which depends on the vector width)" %
            [l.strip(" -") for l in torch.__config__.show().splitlines() if "CPU capability" in l][0],
            "# hc BINS MIN MAX COUNT      MIN MAX: the float arguments (float32 bit patterns)",
            "# x HEX...                   the COUNT float32 inputs (bit patterns)",
            "# c FNV NZ BIN:COUNT...      FNV-1a 64 of the BINS float32 counts (LE bytes), the number",
            "#                            of nonzero bins, and each nonzero bin with its count"]
    return head + histc_cases(torch)


def main():
    for name, make in ((OUT, cases), (OUT_HISTC, histc_file)):
        lines = make()
        path = os.path.join(ROOT, "tests", "data", name)
        text = "\n".join(lines) + "\n"
        if "--check" in sys.argv:
            old = open(path).read() if os.path.exists(path) else ""
            if old != text:
                print("DIFFERS: %s" % path)
                sys.exit(1)
            continue
        with open(path, "w") as f:
            f.write(text)
        print("wrote %s (%d lines, %d bytes)" % (path, len(lines), len(text)))


if __name__ == "__main__":
    main()
