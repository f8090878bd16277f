#!/usr/bin/python3
"""kv_int4_floor.py - how low can a 4-bit KV cache with one scale per 32 elements go on
examples/kv_decode.c's kind of data? (issue 19, item 2: "at most 1/3 of int4 dkv's error").

A measurement, not a bound: numpy float64 model of one attention layer on data drawn like
examples/kv_synth.h (sums of four uniforms; key channels 9, 70, 101 eight times the rest; each
query a noisy copy of an earlier token's key; numpy's generator, not kv_synth's xorshift),
32 query / 8 KV heads of 128, 2048 cached tokens, 64 decode steps, float queries, float32 scales.
Prints the relative L2 error of the outputs against the unquantized cache for qmx's int4 block32
(symmetric, absmax / 7) and for the asymmetric grids qmx does not have (llama.cpp q4_1: min + 15
steps), with and without a Hadamard rotation of the keys, and with exact keys or values.
Needs python3-numpy (Debian); ~1 min.
"""
import numpy as np

rng = np.random.default_rng(5)
T0, STEPS, NKV, NH, HD, B = 2048, 64, 8, 32, 128, 32
T = T0 + STEPS


def bell(*shape):
    return rng.uniform(-1.0, 1.0, shape + (4,)).sum(-1) * 0.5


K = bell(T, NKV, HD)
K[:, :, [9, 70, 101]] *= 8.0
V = bell(T, NKV, HD)
Q = np.empty((T, NH, HD))
for s in range(T):
    src = rng.integers(0, max(s, 1), NH)
    for j in range(NH):
        Q[s, j] = 0.35 * K[src[j], j // (NH // NKV)] + 0.5 * bell(HD)
H = np.array([[1.0]])
while H.shape[0] < HD:
    H = np.block([[H, H], [H, -H]])
H /= np.sqrt(HD)


def blocks(x):
    return x.reshape(*x.shape[:-1], -1, B)


def sym4(x):   # qmx int4 QMX_KV_BLOCK: codes -7..7, scale absmax / 7
    y = blocks(x)
    s = np.abs(y).max(-1, keepdims=True) / 7.0
    s[s == 0] = 1.0
    return (np.clip(np.round(y / s), -7, 7) * s).reshape(x.shape)


def asym4(x):  # q4_1-like: min + code * (max - min) / 15, codes 0..15
    y = blocks(x)
    lo, hi = y.min(-1, keepdims=True), y.max(-1, keepdims=True)
    s = (hi - lo) / 15.0
    s[s == 0] = 1.0
    return (np.clip(np.round((y - lo) / s), 0, 15) * s + lo).reshape(x.shape)


def rotated(q):  # quantize the rotated keys, rotate back (the logits are unchanged by H)
    return lambda x: q(x @ H) @ H.T


def error(kq, vq):
    Kc, Vc = kq(K), vq(V)
    num = den = 0.0
    for t in range(T0, T):
        q = Q[t].reshape(NKV, NH // NKV, HD)
        outs = []
        for kk, vv in ((K, V), (Kc, Vc)):
            lg = np.einsum('hgd,thd->hgt', q, kk[:t + 1]) / np.sqrt(HD)
            p = np.exp(lg - lg.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            outs.append(np.einsum('hgt,thd->hgd', p, vv[:t + 1]))
        num += ((outs[1] - outs[0]) ** 2).sum()
        den += (outs[0] ** 2).sum()
    return np.sqrt(num / den)


def exact(x):
    return x


rows = [("int4 block32 K and V (qmx)", sym4, sym4),
        ("int4 block32, rotated K (qmx)", rotated(sym4), sym4),
        ("asymmetric K and V", asym4, asym4),
        ("asymmetric, rotated K", rotated(asym4), asym4),
        ("exact K, int4 block32 V (qmx)", exact, sym4),
        ("exact K, asymmetric V", exact, asym4),
        ("rotated asymmetric K, exact V", rotated(asym4), exact)]
for name, kq, vq in rows:
    print("%-34s %.3f" % (name, error(kq, vq)))
