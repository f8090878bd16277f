#!/usr/bin/python3
"""make_seeds.py - writes the seed corpora of fuzz_array_api and fuzz_kernels_api.

Each seed is a small valid call of one API selector, encoded the way the harness reads its
input stream (see the harness's helpers: dims are byte d-1 for d in 1..16, fk_zp/fa enums are
plain bytes, float data is a mode byte then one byte per value in mode 1 or 2). Run from the
repository root after changing a harness's input format; then refresh tests/fuzz/corpus.lst
(tools/fuzz.sh --list). Seeds are data: the tests never run Python.
"""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def dim(d):   # fa_dim / fk_dim for 1..16
    assert 1 <= d <= 16
    return bytes([d - 1])


def small(vals):   # float data, mode 1: (int8)b * 0.125
    return bytes([1]) + bytes([(int(v * 8)) & 0xFF for v in vals])


def ints(vals, mode=0):   # fk_i8 mode 0: b - 128
    return bytes([mode]) + bytes([(v + 128) & 0xFF for v in vals])


def write(name, seeds):
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    for k, v in seeds.items():
        with open(os.path.join(d, k), "wb") as f:
            f.write(v)


def wave(n, a=3, b=7, m=17):
    return [((i * a + b) % m - m // 2) * 0.5 for i in range(n)]


# ---- fuzz_array_api ---------------------------------------------------------------------------
def qcfg(dt, gran, recipe, rnd, flags, block, view, o, l, i):
    return bytes([dt, gran, recipe, rnd, flags, block, view]) + dim(o) + dim(l) + dim(i)


A = {}
# 0 quantize: seed u32, qcfg, how (bit 0: compute_qparams), data
A["q_int8_tensor_aqt"] = b"\x00" + u32(1) + qcfg(1, 0, 0, 0, 0, 0, 1, 1, 8, 4) + b"\x01" + small(wave(32))
A["q_int4_channel_qwix_asym"] = b"\x00" + u32(2) + qcfg(3, 1, 1, 1, 1, 0, 1, 2, 3, 5) + b"\x01" + small(wave(30, 5))
A["q_uint4_block_tflite_odd"] = b"\x00" + u32(3) + qcfg(4, 2, 2, 0, 1, 3, 1, 1, 7, 3) + b"\x01" + small(wave(21, 2))
A["q_int16_stochastic"] = b"\x00" + u32(4) + qcfg(5, 0, 1, 3, 0, 0, 0, 1, 16, 1) + b"\x01" + small(wave(16))
A["q_fp8_e4m3_channel"] = b"\x00" + u32(5) + qcfg(6, 1, 0, 0, 0, 0, 1, 1, 4, 8) + b"\x01" + small(wave(32, 7))
A["q_uint8_given_scales"] = (b"\x00" + u32(6) + qcfg(2, 1, 2, 2, 1, 0, 1, 1, 2, 4) + b"\x00" +
                             small(wave(8)) + bytes([3, 10, 1, 12]) + bytes([0x10, 0x20]))
A["q_int8_block_specials"] = (b"\x00" + u32(7) + qcfg(1, 2, 1, 0, 0, 4, 1, 2, 6, 2) + b"\x01" +
                              bytes([2]) + bytes([0x70, 0xF0, 0xF1, 0xF2, 0xF3, 0x80, 0x90, 0xF6] * 3))
# 1 dequantize raw codes: qcfg, how, scales (2 bytes each), zero points, codes
A["dq_int8_channel"] = b"\x01" + qcfg(1, 1, 0, 0, 0, 0, 1, 1, 4, 4) + b"\x00" + bytes([3, 10] * 4) + bytes(range(0, 160, 10))
A["dq_int4_asym"] = b"\x01" + qcfg(3, 0, 1, 0, 1, 0, 1, 1, 9, 1) + b"\x00" + bytes([2, 9]) + bytes([0x18]) + bytes([0x12, 0x34, 0x56, 0x78, 0x9A])
A["dq_fp8_e5m2"] = b"\x01" + qcfg(7, 0, 1, 0, 0, 0, 1, 1, 8, 1) + b"\x00" + bytes([1, 8]) + bytes([0x00, 0x3C, 0x7B, 0x7C, 0x7E, 0x80, 0xBC, 0x01])
# 2 fp8 arrays: fmt, 3 dims, saturate + 1, scale, data, codes
A["fp8_e4m3_sat"] = b"\x02" + bytes([6]) + dim(1) + dim(2) + dim(8) + b"\x02" + bytes([3, 10]) + small(wave(16, 11)) + bytes(range(0, 256, 16))
A["fp8_e5m2fnuz_nosat"] = b"\x02" + bytes([9]) + dim(1) + dim(1) + dim(8) + b"\x01" + bytes([0, 30]) + bytes([0]) + u32(0x7F800000) * 4 + u32(0x47000000) * 4 + bytes(range(0x78, 0x88, 2))
# 3 requantize: rows, ch, how, mode, out dtype bytes, params, bias, out zp, acc
def rq_params(n, shift=5):
    return b"".join(bytes([shift + 31]) + u32(0x12345678 * (k + 1)) + bytes([2, 8]) for k in range(n))
A["rq_double_perchannel_bias"] = (b"\x03" + dim(2) + dim(4) + bytes([0x03, 0, 1, 0]) + rq_params(4, 2) +
                                  b"".join(u32(1000 * k) + b"\x00" for k in range(4)) + bytes([5]) +
                                  b"".join(u32(-7000 + 1234 * k) + b"\x02" for k in range(8)))
A["rq_single_int16"] = (b"\x03" + dim(3) + dim(2) + bytes([0x10, 1, 0]) + rq_params(1, 30) + bytes([0xFB]) +
                        bytes([0x80, 0x7F, 0]) + b"".join(u32(-(1 << 30) + 77777 * k) + b"\x00" for k in range(6)))
A["rq_float"] = (b"\x03" + dim(1) + dim(8) + bytes([0x01, 2, 1, 0]) + rq_params(8, 0) + bytes([0]) +
                 b"".join(u32(3 ** k) + b"\x00" for k in range(8)))
# 4 observers: method, how, [clip], [momentum], p, lo, hi, qcfg, batches
def obs(method, how, extra, q, nb, batches):
    return b"\x04" + bytes([method, how]) + extra + q + bytes([nb - 1]) + b"".join(small(x) for x in batches)
A["obs_absmax_channel"] = obs(0, 0, bytes([1, 0x70, 0x90]), qcfg(1, 1, 0, 0, 0, 0, 1, 1, 4, 4), 1, [wave(16)])
A["obs_minmax_asym_uint8"] = obs(1, 0, bytes([1, 0x70, 0x90]), qcfg(2, 0, 1, 0, 1, 0, 1, 1, 8, 1), 1, [wave(8, 3, 2)])
A["obs_moving_3batches"] = obs(2, 2, bytes([3, 1, 0x70, 0x90]), qcfg(1, 0, 2, 0, 1, 0, 1, 1, 8, 1), 3, [wave(8), wave(8, 5), wave(8, 7, 1)])
A["obs_absmean_p2_block"] = obs(4, 1, bytes([4, 12, 3, 0x70, 0x90]), qcfg(3, 2, 1, 0, 0, 2, 1, 1, 8, 2), 2, [wave(16), wave(16, 3)])
A["obs_rms_fp8"] = obs(5, 1, bytes([0, 15, 1, 0x70, 0x90]), qcfg(6, 0, 0, 0, 0, 0, 1, 1, 8, 1), 1, [wave(8)])
A["obs_fixed"] = obs(6, 0, bytes([1, 0x50, 0x98]), qcfg(1, 0, 1, 0, 1, 0, 1, 1, 4, 1), 1, [wave(4)])
A["obs_mean_absmax"] = obs(3, 0, bytes([1, 0x70, 0x90]), qcfg(1, 0, 0, 0, 0, 0, 1, 1, 4, 1), 2, [wave(4), wave(4, 9)])
# 5 histogram: how, nb, n_bins byte, batches (3 dims + data), ppm, qcfg, kl bins
def hist(how, nbb, batches, ppm, q, kl):
    out = b"\x05" + bytes([how, len(batches) - 1, nbb])
    for x in batches:
        out += dim(1) + dim(1) + dim(len(x)) + small(x)
    return out + u32(ppm) + q + bytes([kl])
A["hist_percentile_mse_kl"] = hist(1, 64, [wave(16), wave(12, 5)], 999000, qcfg(1, 0, 0, 0, 0, 0, 0, 1, 1, 1), 16 + 8)
A["hist_fp8_mse"] = hist(0, 20, [wave(16, 3), [0.0] * 8, wave(9, 1, 13)], 500000, qcfg(6, 0, 0, 0, 0, 0, 0, 1, 1, 1), 8)
# 6 delayed scaling: fmt, mode, margin, length, steps, per step
A["delayed_flax_e4m3"] = b"\x06" + bytes([6, 0, 1, 3, 5]) + bytes([0, 0x40, 0, 0x20, 1]) + dim(4) + small([1, -2, 3, 0.5]) + bytes([0, 0xF0, 0, 0x50])
A["delayed_aqt_e5m2"] = b"\x06" + bytes([7, 1, 0, 2, 4]) + bytes([0, 0x10, 2, 0x30, 0, 0x00, 3]) + dim(2) + small([4, -8])
# 7 N:M: how, pattern, rows, groups, ldw extra, W, then M, lda, ldc, A
def nm(how, pat, rows, groups, m, extra_after):
    K = groups * m
    W = bytes([(i * 37 + 11) & 0xFF for i in range(rows * K)])
    return b"\x07" + bytes([how, pat]) + dim(rows) + dim(groups) + b"\x00" + W + extra_after(K)
A["nm_2of4"] = nm(0, 0, 3, 2, 4, lambda K: dim(2) + b"\x00\x00" + bytes([(i * 13) & 0xFF for i in range(2 * K)]))
A["nm_4of8_ties_azp"] = nm(0x14, 2, 2, 2, 8, lambda K: dim(3) + b"\x00\x00" + bytes([0x85]) + bytes([(i * 7) & 0xFF for i in range(3 * K)]))
A["nm_3of5_float"] = nm(0x40, 4, 2, 2, 5, lambda K: dim(1) + b"\x00\x00" + bytes([(i * 5) & 0xFF for i in range(K)]) + bytes([(i * 29) % 0xF0 for i in range(2 * K)]))
# 8 int4 pack / unpack, ggml blocks: dtype, 2 dims, how, values, blocks
q80 = b"".join(bytes([0x00, 0x3C]) + bytes([(j * 9) & 0xFF for j in range(32)]) for _ in range(2))
A["pack_int4_ggml"] = b"\x08" + bytes([3]) + dim(3) + dim(5) + b"\x00" + bytes(range(15)) + bytes([2]) + q80
A["pack_uint4_q4_0"] = b"\x08" + bytes([4]) + dim(2) + dim(4) + b"\x00" + bytes(range(8)) + bytes([1]) + bytes([0x00, 0xBC]) + bytes(range(16)) + bytes(16)
# 9 SNR search: n candidates, qcfg, how, data, candidates
A["snr_channel"] = b"\x09" + bytes([4]) + qcfg(1, 1, 0, 0, 0, 0, 1, 1, 4, 8) + b"\x00" + small(wave(32)) + bytes([15, 13, 11, 9])

# ---- fuzz_kernels_api -------------------------------------------------------------------------
def mat(n, a=5, b=3, m=251):
    return [((i * a + b) % m) - 125 for i in range(n)]


Z = bytes([128])   # fk_zp(-128, 127) = 0
K = {}
# 0 matmul: M N K how layout azp bzp lda ldb ldc A B ws
K["mm_nk_zp"] = b"\x00" + dim(4) + dim(5) + dim(7) + b"\x00\x00" + bytes([131, 126]) + b"\x00\x00\x00" + ints(mat(28)) + ints(mat(35, 7)) + b"\x00"
K["mm_kn_sums_ld"] = b"\x00" + dim(3) + dim(6) + dim(9) + b"\x01\x01" + Z + Z + b"\x01\x02\x01" + ints(mat(2 * 10 + 9)) + ints(mat(8 * 8 + 6, 3)) + b"\x00"
K["mm_short_ws"] = b"\x00" + dim(2) + dim(2) + dim(3) + b"\x00\x00" + Z + Z + b"\x00\x00\x00" + ints(mat(6)) + ints(mat(6)) + b"\xF0"
K["mm_gemv_k70"] = b"\x00" + dim(1) + dim(16) + bytes([0xF2]) + b"\x00\x00" + bytes([120]) + Z + b"\x00\x00\x00" + ints(mat(27)) + ints(mat(16 * 27, 11)) + b"\x00"
# K = QMX_MATMUL_I8_MAX_K (byte 0xFD), every value -128 and both zero points 127 (0xDF): the
# largest |C| = K * 255^2 that still fits int32 (the missing bytes read as 0 = -128)
K["mm_maxk_extremes"] = b"\x00" + dim(2) + dim(3) + b"\xfd" + b"\x00\x00" + b"\xdf\xdf" + b"\x00\x00\x00" + b"\x01"
K["mm_maxk_plus_one"] = b"\x00" + dim(1) + dim(1) + b"\xfc" + b"\x00\x00" + b"\xdf\xdf" + b"\x00\x00\x00" + b"\x01"
K["fc_maxk_extremes"] = b"\x02" + dim(1) + dim(2) + b"\xfd" + b"\x00\x00\x00" + b"\xdf" + b"\x01"
# 1 packed: M N K layout how lda ldb ldc A B azp bzp ws rq ws scales ws
rq_ok = bytes([0x01, 0, 0]) + b"".join(bytes([5]) + u32(0x2345678 * k) + bytes([1, 4]) for k in range(3)) + bytes([20])
K["packed_all"] = (b"\x01" + dim(5) + dim(3) + dim(8) + b"\x00\x00" + b"\x00\x00\x00" + ints(mat(40)) + ints(mat(24, 9)) +
                   bytes([125]) + Z + b"\x00" + rq_ok + b"\x00" + bytes([0x01 | 0x04 | 0x08]) + bytes([3, 4] * 5 + [2, 6] * 3) + Z)
K["packed_kn_blocks"] = (b"\x01" + dim(2) + dim(17 - 1) + dim(12) + b"\x01\x00" + b"\x00\x00\x00" + ints(mat(24)) + ints(mat(12 * 16, 3)) +
                         Z + Z + b"\x00" + bytes([0x00, 1, 0xC5]) + bytes([7]) + u32(0x5555555) + bytes([1, 4]) + bytes([20]) +
                         b"\x00" + bytes([0x02 | 0x08, 1, 1]) + bytes([3, 4] * 2 + [2, 6] * 16 * 2) + Z)
# 2 fully-connected: M N K lda ldw ldo azp A W rq ws
K["fc_int8_perchannel"] = b"\x02" + dim(3) + dim(3) + dim(10) + b"\x00\x00\x00" + bytes([100]) + ints(mat(30)) + ints(mat(30, 13)) + rq_ok + b"\x00"
K["fc_int16_float_rq"] = (b"\x02" + dim(2) + dim(4) + dim(6) + b"\x00\x00\x01" + Z + ints(mat(12)) + ints(mat(24, 3)) +
                          bytes([0x02, 2, 0xD0]) + bytes([0]) + u32(1) + bytes([3, 6]) + b"".join(u32(k * 99) + b"\x00" for k in range(4)) + bytes([20]) + b"\x00")
# the fully-connected weight zero point (rq how bit 0x20; with 0x40 in the int4 range): -77,
# 128 (QMX_ERR_ARG, nothing written), 127 on the packed blob, -8 for int4
def rq_wzp(how, zp, sh=5):   # sh: shift byte (shift = sh % 24 - 20)
    return (bytes([how, 0, 0]) + b"".join(bytes([sh]) + u32(0x2345678 * k) + bytes([1, 4]) for k in range(3)) +
            bytes([20, zp]))
K["fc_wzp_int8"] = b"\x02" + dim(3) + dim(3) + dim(10) + b"\x00\x00\x00" + bytes([100]) + ints(mat(30)) + ints(mat(30, 13)) + rq_wzp(0x21, 51) + b"\x00"
K["fc_wzp_bad"] = b"\x02" + dim(3) + dim(3) + dim(10) + b"\x00\x00\x00" + bytes([100]) + ints(mat(30)) + ints(mat(30, 13)) + rq_wzp(0x21, 0xE0) + b"\x00"
K["packed_wzp"] = (b"\x01" + dim(5) + dim(3) + dim(8) + b"\x00\x00" + b"\x00\x00\x00" + ints(mat(40)) + ints(mat(24, 9)) +
                   bytes([125]) + Z + b"\x00" + rq_wzp(0x21, 0xDF) + b"\x00" + bytes([0x01 | 0x04 | 0x08]) + bytes([3, 4] * 5 + [2, 6] * 3) + Z)
K["i4_fc_wzp"] = b"\x05" + dim(2) + dim(3) + dim(6) + b"\x00\x02" + b"\x00\x01" + b"\x00\x01" + Z + bytes([131]) + b"\x00\x00\x00" + ints(mat(12)) + bytes(range(9)) + b"\x00" + rq_wzp(0x61, 0, 10)
# 3 dequant-on-output: M N K lda ldb ldc A B scales ws null
K["mmf32_block_rowcol"] = b"\x03" + dim(3) + dim(4) + dim(9) + b"\x00\x00\x00" + ints(mat(27)) + ints(mat(36, 7)) + bytes([0x0C, 3]) + bytes([3, 4] * 9 + [2, 5] * 12) + bytes([130]) + b"\x00\x00"
K["mmf32_tensor"] = b"\x03" + dim(2) + dim(2) + dim(5) + b"\x00\x00\x00" + ints(mat(10)) + ints(mat(10, 3)) + bytes([0x01]) + bytes([1, 4, 2, 5]) + Z + b"\x00\x00"
# 4 dynamic: M N K how ldx ldy X W w_scales ws
K["dyn_perchannel"] = b"\x04" + dim(3) + dim(4) + dim(8) + b"\x00\x00\x00" + small(wave(24)) + ints(mat(32)) + bytes([1, 4] * 4) + b"\x00"
K["dyn_tensor_zero_row"] = b"\x04" + dim(2) + dim(2) + dim(4) + b"\x01\x00\x00" + small([0, 0, 0, 0, 1, -2, 3, -4]) + ints(mat(8)) + bytes([1, 4]) + b"\x00"
# 5 int4: M N K how sel a_dtype w_dtype azp [wzp] [block] lda ldw ldc A W [zps] [scales] ws [rq]
K["i4_int8a_int4w"] = b"\x05" + dim(3) + dim(4) + dim(8) + b"\x00\x00" + b"\x00\x01" + b"\x00\x01" + Z + b"\x00\x00\x00" + ints(mat(24)) + bytes(range(0, 256, 16)) + b"\x00"
K["i4_int4a_uint4w_zps_f32"] = (b"\x05" + dim(2) + dim(3) + dim(8) + bytes([0x02 | 0x04 | 0x20 | 0x40, 1]) + b"\x01" + b"\x01" + bytes([10, 8, 3]) +
                               b"\x00\x00\x00" + bytes(range(0x10, 0x10 + 8)) + bytes(range(0x31, 0x31 + 12)) + bytes(range(9)) +
                               bytes([3, 4] * 6 + [2, 5] * 9) + b"\x00")
K["i4_fc"] = b"\x05" + dim(2) + dim(3) + dim(6) + b"\x00\x02" + b"\x00\x01" + b"\x00\x01" + Z + bytes([131]) + b"\x00\x00\x00" + ints(mat(12)) + bytes(range(9)) + b"\x00" + rq_ok
# 6 fp8: M N K how a_fmt b_fmt lda ldb ldc A B a_scales b_scales ws
K["fp8_e4m3_e5m2_rowcol"] = b"\x06" + dim(3) + dim(2) + dim(17 - 1) + bytes([0x06, 0, 0, 1]) + b"\x00\x00\x00" + bytes([(i * 7) & 0xBB for i in range(48)]) + bytes([(i * 5) & 0xBB for i in range(32)]) + bytes([3, 4] * 3 + [2, 5] * 2) + b"\x00"
K["fp8_nan_code"] = b"\x06" + dim(1) + dim(1) + dim(4) + bytes([0x01, 0, 0, 0, 0]) + b"\x00\x00\x00" + bytes([0x38, 0x7F, 0x38, 0x38]) + bytes([0x38] * 4) + bytes([3, 4, 2, 5]) + b"\x00"
# 7 einsum: spec index, how, 52 label sizes, per operand dtype + data [+ zp] [+ scales], ws
def es(spec, how, sizes, ops):
    return b"\x07" + bytes([spec, how]) + bytes(sizes) + b"".join(ops) + b"\x00"
sz = [1, 2, 3, 2, 1, 3, 2, 1, 2, 3, 1, 2, 3] * 4
K["es_matmul_i32"] = es(0, 0x01, sz, [b"\x00" + bytes(range(1, 60)), b"\x01" + bytes(range(7, 60))])
K["es_batched_i4_f32"] = es(2, 0x00, sz, [b"\x02" + bytes(range(1, 60)), b"\x03" + bytes(range(9, 60))])
K["es_float_exact"] = es(5, 0x00, sz, [b"\x04" + bytes(range(3, 200)), b"\x04" + bytes(range(5, 200))])
K["es_attn_scales"] = es(9, 0x60, sz, [b"\x00" + bytes(range(1, 90)) + bytes([2, 3, 4, 2, 5, 0, 3, 1, 1]), b"\x06" + bytes(range(2, 90)) + bytes([0, 3, 4, 1, 2, 1, 1])])
K["es_diag_zp"] = es(7, 0x09, sz, [b"\x00" + bytes(range(1, 30)) + bytes([130]), b"\x00" + bytes(range(4, 30))])
# 8 KV cache: how cap heads hd kdt vdt kax vax [cblock] mode layers layer nops ops
def tok(n, a=3):
    return small(wave(n, a))
def kv(how, cap, heads, hd, kdt, vdt, kax, vax, extra, mode, layers, layer, ops):
    return (b"\x08" + bytes([how, cap - 1, heads - 1, hd, kdt, vdt, kax, vax]) + extra +
            bytes([mode, layers, layer, len(ops) - 1]) + b"".join(ops))
def app(nt, per, g=0):
    return bytes([0, nt - 1]) + tok(nt * per) + tok(nt * per, 5) + bytes([g])
def att(g, b, extra, nh, hd):
    return bytes([3, 0, g, b]) + extra + tok(nh * hd, 7) + b"\x00"
K["kv_int8_append_read_attn"] = kv(0, 8, 2, 3, 1, 1, 0, 0, b"", 0, 1, 0,
                                   [app(3, 8), bytes([2, 1, 0, 0]), att(1, 0x08, b"", 4, 4), att(0, 0x00, b"", 2, 4)])
K["kv_int4_dkv_ring_rotate"] = kv(0x09, 3, 1, 2, 2, 3, 1, 1, b"", 1, 2, 1,
                                  [app(3, 4), app(2, 4), bytes([2, 1, 3, 0]), att(1, 0x0A, bytes([2]), 2, 4)])
K["kv_kivi_channel_prefill"] = kv(0x02, 1, 1, 7, 1, 5, 2, 0, bytes([1]), 0, 0, 0,
                                  [app(2, 8), bytes([1, 1]) + tok(16) + tok(16, 5) + bytes([0]) + tok(16, 9) + b"\x00",
                                   att(0, 0x09, bytes([3]), 1, 8), bytes([2, 2, 0, 0]), bytes([4, 0, 0])])
K["kv_fp8_e5m2_float_k"] = kv(0x00, 4, 2, 3, 4, 5, 0, 1, b"", 0, 1, 0, [app(2, 8), att(2, 0x04, bytes([0x88]), 6, 4)])

write("fuzz_array_api", A)
write("fuzz_kernels_api", K)
print("fuzz_array_api: %d seeds, fuzz_kernels_api: %d seeds" % (len(A), len(K)))
