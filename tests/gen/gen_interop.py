#!/usr/bin/python3
"""gen_interop.py - golden data for tests/test_interop.c (qmx.h section 8), from independent
references:
  binary16: numpy's astype(np.float16) (and .view(np.uint16)) on float32 inputs;
  bfloat16: PyTorch's tensor.to(torch.bfloat16) (round to nearest even) on non-NaN inputs;
  ggml Q8_0 / Q4_0: ggml's reference quantizers (quantize_row_q8_0_ref / quantize_row_q4_0_ref,
    ggml-quants.c) and dequantizers written out here in numpy float32 arithmetic, giving the
    block bytes a GGUF file holds and the floats llama.cpp dequantizes them to.
Run from the repository root with Debian's python3, python3-numpy and python3-torch:
    /usr/bin/python3 tests/gen/gen_interop.py
Writes tests/data/interop_f16.txt, interop_bf16.txt and interop_ggml.txt (formats in each
file's header)."""
import numpy as np
import torch

rng = np.random.default_rng(20261123)
f32 = np.float32


def bits(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


# ---- binary16 --------------------------------------------------------------------------------
def f16_inputs():
    xs = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
          0x7FA00000, 0xFF801FFF, 0x7F802000, 0x7FFFFFFF, 0x477FE000, 0x477FEFFF, 0x477FF000,
          0x477FF001, 0x47800000, 0x7F7FFFFF, 0x38800000, 0x387FFFFF, 0x33000000, 0x33000001,
          0x32FFFFFF, 0x33800000, 0x33C00000, 0x00000001, 0x807FFFFF]
    # every binary16 value and the float32 midpoints to its neighbour, +-1 ulp (a sample)
    hs = rng.integers(0, 0x7C00, size=600, dtype=np.uint32)
    lo = np.array(hs, dtype=np.uint16).view(np.float16).astype(np.float32)
    hi = np.array(hs + 1, dtype=np.uint16).view(np.float16).astype(np.float32)
    mid = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2).astype(np.float32)
    for arr in (lo, mid):
        b = bits(arr)
        xs += list(b) + list(b + 1) + list(b - 1)
    xs += list(rng.integers(0, 2**32, size=800, dtype=np.uint64).astype(np.uint32))
    xs += list(bits(rng.normal(0, 1, 200).astype(np.float32) * f32(1e-5)))
    out = []
    for x in xs:
        x = int(x) & 0xFFFFFFFF
        out.append(x)
        out.append(x ^ 0x80000000)
    return out


def write_f16(path):
    xs = f16_inputs()
    a = np.array(xs, dtype=np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = a.astype(np.float16).view(np.uint16)
    with open(path, "w") as f:
        f.write("# binary16 encode golden: numpy %s astype(float16); columns: float32 bits, "
                "binary16 bits (hex)\n" % np.__version__)
        for x, y in zip(xs, h):
            f.write("%08x %04x\n" % (x, int(y)))


# ---- bfloat16 --------------------------------------------------------------------------------
def write_bf16(path):
    xs = [x for x in f16_inputs() if (x & 0x7FFFFFFF) <= 0x7F800000]
    ties = list(rng.integers(0, 0xFF00, size=400, dtype=np.uint32) << 16 | 0x8000)
    xs += [int(t) for t in ties] + [int(t) ^ 0x80000000 for t in ties]
    xs += [0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x00008000, 0x00018000]
    xs = [x for x in xs if (x & 0x7FFFFFFF) <= 0x7F800000]   # torch writes 0x7FC0 for any NaN
    a = torch.from_numpy(np.array(xs, dtype=np.uint32).view(np.float32).copy())
    b = a.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    with open(path, "w") as f:
        f.write("# bfloat16 encode golden: torch %s tensor.to(torch.bfloat16); columns: float32 "
                "bits, bfloat16 bits (hex); NaN inputs excluded (torch writes 0x7FC0)\n"
                % torch.__version__)
        for x, y in zip(xs, b):
            f.write("%08x %04x\n" % (x, int(y)))


# ---- ggml ------------------------------------------------------------------------------------
QK = 32


def fp16_bits(x):
    return int(np.array([x], dtype=np.float32).astype(np.float16).view(np.uint16)[0])


def fp16_value(h):
    return np.array([h], dtype=np.uint16).view(np.float16).astype(np.float32)[0]


def q8_0_block(x):
    """quantize_row_q8_0_ref + dequantize_row_q8_0 for one block of 32 float32."""
    amax = f32(0)
    for v in x:
        amax = max(amax, abs(f32(v)))
    d = f32(amax / f32(127))
    idv = f32(f32(1) / d) if d != 0 else f32(0)
    qs = []
    for v in x:
        t = f32(f32(v) * idv)
        r = np.floor(abs(float(t)) + 0.5) * (1 if t >= 0 else -1)   # roundf: half away
        qs.append(int(r))
    h = fp16_bits(d)
    dd = fp16_value(h)
    raw = bytes([h & 0xFF, h >> 8]) + bytes([q & 0xFF for q in qs])
    y = [f32(f32(q) * dd) for q in qs]
    return raw, y


def q4_0_block(x):
    """quantize_row_q4_0_ref + dequantize_row_q4_0 for one block of 32 float32."""
    amax, mx = f32(0), f32(0)
    for v in x:
        if amax < abs(f32(v)):
            amax, mx = abs(f32(v)), f32(v)
    d = f32(mx / f32(-8))
    idv = f32(f32(1) / d) if d != 0 else f32(0)
    h = fp16_bits(d)
    qs = []
    for j in range(QK // 2):
        x0 = f32(f32(x[j]) * idv)
        x1 = f32(f32(x[QK // 2 + j]) * idv)
        xi0 = min(15, int(f32(x0 + f32(8.5))))   # (int8_t) truncates toward zero
        xi1 = min(15, int(f32(x1 + f32(8.5))))
        qs.append(xi0 | (xi1 << 4))
    dd = fp16_value(h)
    raw = bytes([h & 0xFF, h >> 8]) + bytes(qs)
    y = [f32(0)] * QK
    for j in range(QK // 2):
        y[j] = f32(f32((qs[j] & 0x0F) - 8) * dd)
        y[j + QK // 2] = f32(f32((qs[j] >> 4) - 8) * dd)
    return raw, y


def ggml_blocks():
    blocks = []
    for i in range(40):
        x = rng.normal(0, 1, QK).astype(np.float32) * f32(10.0 ** rng.uniform(-4, 3))
        if i % 5 == 1:
            x[rng.integers(0, QK)] = f32(abs(x).max() * 7)         # positive outlier: d < 0
        if i % 5 == 2:
            x[rng.integers(0, QK)] = f32(-abs(x).max() * 7)        # negative outlier: d > 0
        blocks.append(x)
    blocks.append(np.zeros(QK, dtype=np.float32))                  # d = 0
    blocks.append(np.full(QK, 3.0, dtype=np.float32))
    blocks.append(np.full(QK, -3.0, dtype=np.float32))
    return blocks


def write_ggml(path):
    with open(path, "w") as f:
        f.write("# ggml Q8_0 / Q4_0 golden: ggml-quants.c reference quantizers and dequantizers "
                "transcribed in numpy %s float32.\n" % np.__version__)
        f.write("# line: q8_0|q4_0 <block bytes hex> <32 dequantized float32 bits hex>\n")
        for x in ggml_blocks():
            for name, fn in (("q8_0", q8_0_block), ("q4_0", q4_0_block)):
                raw, y = fn(x)
                f.write("%s %s %s\n" % (name, raw.hex(), " ".join("%08x" % int(bits([v])[0]) for v in y)))


write_f16("tests/data/interop_f16.txt")
write_bf16("tests/data/interop_bf16.txt")
write_ggml("tests/data/interop_ggml.txt")
