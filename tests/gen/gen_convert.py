#!/usr/bin/python3
"""gen_convert.py - input files and golden values for tests/test_convert.c (the qmx_convert
readers, examples/qmx_convert/qmx_files.h).

Run from the repository root with Debian's python3 + numpy (apt-get install python3-numpy):
    /usr/bin/python3 tests/gen/gen_convert.py     # rewrites tests/data/convert/*

What it writes (all deterministic, fixed seeds):
  *.npy            written by numpy itself (np.save, np.lib.format.write_array for versions 2.0
                   and 3.0, big-endian '>f4' / '>f2' arrays).
  model.safetensors written with plain struct + json following the safetensors format
                   (8-byte little-endian header length, JSON header padded with spaces to a
                   multiple of 8, then the byte buffer); F32, F16 and BF16 tensors and a
                   "__metadata__" entry. The data buffer is laid out in a different order than
                   the header lists the tensors, so offsets matter.
  expected.txt     per tensor: "tensor FILE NAME DTYPE COUNT RANK DIMS..." then COUNT float32
                   bit patterns in hex, 8 per line: the values numpy reads (float16 via numpy's
                   astype(float32); bfloat16 via numpy as (uint16 << 16).view(float32), which is
                   what a bfloat16 IS: the high half of a float32).
                   "hash f16_all H" / "hash bf16_all H": FNV-1a (32-bit, over the 4
                   little-endian bytes of each float32 bit pattern) of all 65536 float16 /
                   bfloat16 codes 0..65535 converted by numpy, in code order.
  bad_*.npy, bad_*.safetensors and bad.txt: hand-made malformed files, one defect each, and
                   "FILE STATUS WORD": the qmx_status the reader must return and a word its
                   message must contain.
The test reads everything with its own readers and compares bit patterns exactly.
model_ref.h (the converter's output that test_convert.c includes) is written by qmx_convert
itself from these files, with the command recorded at its top (and in test_convert.c's
convert_argv): rerun it after regenerating the inputs.
"""
import json
import os
import struct
import sys

import numpy as np

OUT = "tests/data/convert"


def fnv1a(words):
    h = 0x811C9DC5
    for w in words:
        for k in range(4):
            h ^= (int(w) >> (8 * k)) & 0xFF
            h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def f32_bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).reshape(-1).view(np.uint32)


def npy_header(descr, fortran, shape, version=1, raw_shape=None):
    """A .npy preamble + header built by hand (for malformed files)."""
    shape_txt = raw_shape if raw_shape is not None else repr(tuple(shape))
    d = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith("[") else repr(descr), fortran, shape_txt)
    pre = 10 if version == 1 else 12
    total = pre + len(d) + 1
    pad = (64 - total % 64) % 64
    d = d + " " * pad + "\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode("latin1")
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(d)) + d.encode("latin1")


def safetensors_bytes(header, data, pad=True):
    h = json.dumps(header, separators=(",", ":")).encode("utf-8") if not isinstance(header, bytes) else header
    if pad:
        h = h + b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith((".npy", ".safetensors")) or f in ("expected.txt", "bad.txt"):
            os.remove(os.path.join(OUT, f))
    rng = np.random.default_rng(20261123)
    expected = []   # (file, name, dtype, shape, f32 bits)

    def save_npy(fname, arr, version=None, src=None):
        path = os.path.join(OUT, fname)
        with open(path, "wb") as fh:
            if version is None:
                np.save(fh, arr)
            else:
                np.lib.format.write_array(fh, arr, version=version)
        back = np.load(path)   # what numpy itself reads back
        dt = "float32" if back.dtype.itemsize == 4 else "float16"
        expected.append((fname, fname[:-4], dt, back.shape, f32_bits(back.astype(np.float32))))

    # ---- .npy files written by numpy ----
    save_npy("f32_le.npy", rng.standard_normal((4, 16)).astype("<f4"))
    save_npy("f32_be.npy", rng.standard_normal((2, 3, 4)).astype(">f4"))
    specials = np.array([0.0, -0.0, 1.0, -2.0, 65504.0, -65504.0, 6.1035156e-05, 5.9604645e-08,
                         -5.9604645e-08, 3.0517578e-05, np.inf, -np.inf, np.nan, 0.333251953125,
                         1e-7, 2049.0], dtype=np.float16)
    f16 = np.concatenate([specials, rng.standard_normal(48).astype(np.float16)])
    save_npy("f16_le.npy", f16.astype("<f2"))
    save_npy("f16_be.npy", (rng.standard_normal((8, 8)) * 4).astype(">f2"))
    save_npy("f32_v2.npy", np.array([1.5, -2.25, 3.0e-39], dtype="<f4"), version=(2, 0))
    save_npy("f32_v3.npy", np.array([[1.0, 2.0], [3.0, 4.0]], dtype="<f4"), version=(3, 0))
    save_npy("scalar.npy", np.array(0.75, dtype="<f4"))
    save_npy("empty.npy", np.zeros((0, 3), dtype="<f4"))

    # ---- model.safetensors (plain struct + json) ----
    fc1_w = (rng.standard_normal((16, 64)) * 0.2).astype("<f4")
    fc1_b = (rng.standard_normal(16) * 0.1).astype("<f4")
    fc2_w = (rng.standard_normal((10, 16)) * 0.3).astype("<f2")
    emb_f32 = (rng.standard_normal((8, 32))).astype(np.float32)
    emb_bf16 = (emb_f32.view(np.uint32) >> 16).astype("<u2")   # truncated to bf16 codes
    norm = (1.0 + rng.standard_normal(32) * 0.05).astype("<f4")
    tensors = [  # header order
        ("fc1.weight", "F32", fc1_w, fc1_w.tobytes()),
        ("fc1.bias", "F32", fc1_b, fc1_b.tobytes()),
        ("fc2.weight", "F16", fc2_w, fc2_w.tobytes()),
        ("embed.weight", "BF16", emb_bf16, emb_bf16.tobytes()),
        ("norm.scale", "F32", norm, norm.tobytes()),
    ]
    data = b""
    header = {"__metadata__": {"format": "pt", "source": "tests/gen/gen_convert.py"}}
    offsets = {}
    for name, dt, arr, raw in reversed(tensors):   # buffer order differs from header order
        offsets[name] = (len(data), len(data) + len(raw))
        data += raw
    for name, dt, arr, raw in tensors:
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": list(offsets[name])}
    with open(os.path.join(OUT, "model.safetensors"), "wb") as fh:
        fh.write(safetensors_bytes(header, data))
    for name, dt, arr, raw in tensors:
        if dt == "BF16":
            vals = (arr.astype(np.uint32) << 16).view(np.float32)
            expected.append(("model.safetensors", name, "bfloat16", arr.shape, f32_bits(vals)))
        else:
            expected.append(("model.safetensors", name, "float32" if dt == "F32" else "float16",
                             arr.shape, f32_bits(arr.astype(np.float32))))

    with open(os.path.join(OUT, "expected.txt"), "w") as fh:
        fh.write("# generated by tests/gen/gen_convert.py; see there. Values: float32 bit patterns.\n")
        allf16 = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
        allbf16 = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32).view(np.uint32)
        fh.write("hash f16_all %08x\n" % fnv1a(allf16))
        fh.write("hash bf16_all %08x\n" % fnv1a(allbf16))
        for fname, name, dt, shape, bits in expected:
            fh.write("tensor %s %s %s %d %d%s\n" % (fname, name, dt, bits.size, len(shape),
                                                  "".join(" %d" % d for d in shape)))
            for i in range(0, bits.size, 8):
                fh.write(" ".join("%08x" % b for b in bits[i:i + 8]) + "\n")

    # ---- malformed files ----
    bad = []

    def badfile(fname, content, status, word):
        with open(os.path.join(OUT, fname), "wb") as fh:
            fh.write(content)
        bad.append((fname, status, word))

    good = np.arange(16, dtype="<f4").reshape(4, 4)
    good_npy = npy_header("<f4", False, (4, 4)) + good.tobytes()
    badfile("bad_npy_short.npy", good_npy[:7], "QMX_ERR_SIZE", "truncated")
    badfile("bad_npy_magic.npy", b"\x93NUMPX" + good_npy[6:], "QMX_ERR_PARSE", "magic")
    badfile("bad_npy_version.npy", good_npy[:6] + b"\x04\x00" + good_npy[8:], "QMX_ERR_PARSE", "version")
    badfile("bad_npy_header_len.npy", good_npy[:8] + struct.pack("<H", 4000) + good_npy[10:], "QMX_ERR_SIZE", "header length")
    badfile("bad_npy_v2_header_len.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{}", "QMX_ERR_SIZE", "header length")
    badfile("bad_npy_truncated_data.npy", good_npy[:-5], "QMX_ERR_SHAPE", "shape needs")
    badfile("bad_npy_trailing.npy", good_npy + b"\0\0\0\0", "QMX_ERR_SHAPE", "shape needs")
    badfile("bad_npy_lying_shape.npy", npy_header("<f4", False, (100,)) + good.tobytes(), "QMX_ERR_SHAPE", "shape needs")
    badfile("bad_npy_overflow.npy", npy_header("<f4", False, (2**40, 2**40, 2**40)) + good.tobytes(), "QMX_ERR_OVERFLOW", "size_t")
    badfile("bad_npy_huge_dim.npy", npy_header("<f4", False, None, raw_shape="(99999999999999999999999,)") + good.tobytes(), "QMX_ERR_OVERFLOW", "size_t")
    badfile("bad_npy_fortran.npy", npy_header("<f4", True, (4, 4)) + good.tobytes(), "QMX_ERR_UNSUPPORTED", "fortran_order")
    badfile("bad_npy_object.npy", npy_header("|O", False, (4,)) + b"\x80\x04N." * 8, "QMX_ERR_DTYPE", "object")
    badfile("bad_npy_float64.npy", npy_header("<f8", False, (2, 4)) + good.tobytes(), "QMX_ERR_DTYPE", "float64")
    badfile("bad_npy_structured.npy", npy_header("[('a', '<f4')]", False, (16,)) + good.tobytes(), "QMX_ERR_DTYPE", "structured")
    badfile("bad_npy_int32.npy", npy_header("<i4", False, (4, 4)) + good.tobytes(), "QMX_ERR_DTYPE", "not supported")
    badfile("bad_npy_dict.npy", npy_header("<f4", False, None, raw_shape="(4, 4") + good.tobytes(), "QMX_ERR_PARSE", "shape")
    d = "{'descr': '<f4', 'shape': (4, 4), }".ljust(117) + "\n"
    badfile("bad_npy_missing_key.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + good.tobytes(), "QMX_ERR_PARSE", "lacks")
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), 'x': 1}".ljust(117) + "\n"
    badfile("bad_npy_extra_key.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + good.tobytes(), "QMX_ERR_PARSE", "unexpected")
    badfile("bad_npy_rank9.npy", npy_header("<f4", False, (1,) * 9) + good.tobytes()[:4], "QMX_ERR_UNSUPPORTED", "rank")
    badfile("bad_npy_negative_dim.npy", npy_header("<f4", False, None, raw_shape="(-1,)") + good.tobytes(), "QMX_ERR_PARSE", "shape")

    f = np.arange(4, dtype="<f4").tobytes()
    def st(hdr, data=f, pad=True):
        return safetensors_bytes(hdr, data, pad)
    one = {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}
    badfile("bad_st_short.safetensors", b"\x10\0\0\0\0", "QMX_ERR_SIZE", "truncated")
    badfile("bad_st_header_len.safetensors", struct.pack("<Q", 5000) + st(one)[8:], "QMX_ERR_SIZE", "header length")
    badfile("bad_st_header_len_huge.safetensors", struct.pack("<Q", 2**63) + st(one)[8:], "QMX_ERR_SIZE", "header length")
    badfile("bad_st_json.safetensors", st(b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]', pad=False), "QMX_ERR_PARSE", "expected")
    badfile("bad_st_not_object.safetensors", st(b"[1, 2]   ", data=b""), "QMX_ERR_PARSE", "object")
    badfile("bad_st_dtype.safetensors", st({"a": {"dtype": "I32", "shape": [4], "data_offsets": [0, 16]}}), "QMX_ERR_DTYPE", "I32")
    badfile("bad_st_offsets_range.safetensors", st({"a": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}}), "QMX_ERR_SIZE", "outside")
    badfile("bad_st_offsets_reversed.safetensors", st({"a": {"dtype": "F32", "shape": [4], "data_offsets": [16, 0]}}), "QMX_ERR_SIZE", "before")
    badfile("bad_st_overlap.safetensors", st({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
                                              "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}), "QMX_ERR_SIZE", "overlaps")
    badfile("bad_st_gap.safetensors", st({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                          "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}), "QMX_ERR_SIZE", "gap")
    badfile("bad_st_trailing.safetensors", st({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}}), "QMX_ERR_SIZE", "after the last")
    badfile("bad_st_lying_shape.safetensors", st({"a": {"dtype": "F32", "shape": [100], "data_offsets": [0, 16]}}), "QMX_ERR_SHAPE", "shape needs")
    badfile("bad_st_overflow.safetensors", st({"a": {"dtype": "F32", "shape": [2**32 - 1, 2**32 - 1, 2**32 - 1], "data_offsets": [0, 16]}}), "QMX_ERR_OVERFLOW", "overflow")
    badfile("bad_st_huge_dim.safetensors", st(b'{"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,16]}}'), "QMX_ERR_OVERFLOW", "64 bits")
    badfile("bad_st_duplicate.safetensors", st(b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}'), "QMX_ERR_PARSE", "duplicate")
    badfile("bad_st_missing_key.safetensors", st({"a": {"dtype": "F32", "shape": [4]}}), "QMX_ERR_PARSE", "lacks")
    badfile("bad_st_deep.safetensors", st(('{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"x":' + "[" * 100 + "]" * 100 + "}}").encode()), "QMX_ERR_PARSE", "deeply")
    badfile("bad_st_utf8.safetensors", st(b'{"a\xff":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'), "QMX_ERR_PARSE", "UTF-8")
    badfile("bad_st_metadata.safetensors", st({"__metadata__": {"a": 1}, **one}), "QMX_ERR_PARSE", "strings")
    badfile("bad_st_float_offset.safetensors", st(b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0.0,16]}}'), "QMX_ERR_PARSE", "integer")
    badfile("bad_st_negative_dim.safetensors", st(b'{"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}}'), "QMX_ERR_PARSE", "integer")
    badfile("bad_st_rank9.safetensors", st({"a": {"dtype": "F32", "shape": [1] * 8 + [4], "data_offsets": [0, 16]}}), "QMX_ERR_UNSUPPORTED", "rank")
    with open(os.path.join(OUT, "bad.txt"), "w") as fh:
        fh.write("# generated by tests/gen/gen_convert.py: FILE STATUS WORD-IN-THE-MESSAGE\n")
        for fname, status, word in bad:
            fh.write("%s %s %s\n" % (fname, status, word.replace(" ", "+")))
    print("wrote %d tensors, %d malformed files into %s" % (len(expected), len(bad), OUT))


if __name__ == "__main__":
    sys.exit(main())
