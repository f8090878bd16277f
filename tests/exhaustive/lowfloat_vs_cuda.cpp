// lowfloat_vs_cuda.cpp - exhaustive check of qmx's fp4 / fp6 / E8M0 conversions against NVIDIA's
// cuda_fp4.h, cuda_fp6.h and the E8M0 conversions of cuda_fp8.h.
//
// Built and run by tests/exhaustive/run.sh (see README.md there). C++11, host code only: the
// CUDA conversion functions are __host__ __device__ and, without __CUDA_ARCH__, take their
// portable software path. No GPU is needed.
//
// Checks (every rounding / saturation mode CUDA offers for these formats)
//   encode  for each float32 bit pattern x (all 2^32, or a stride, below), 10 sweeps:
//             qmx_fp4_from_f32(x, rtz)          vs __nv_cvt_float_to_fp4(x, __NV_E2M1, rn / rz)
//             qmx_fp6_from_f32(x, E2M3, rtz)    vs __nv_cvt_float_to_fp6(x, __NV_E2M3, rn / rz)
//             qmx_fp6_from_f32(x, E3M2, rtz)    vs __nv_cvt_float_to_fp6(x, __NV_E3M2, rn / rz)
//             qmx_e8m0_from_f32(x, DOWN / UP, sat) vs __nv_cvt_float_to_e8m0(x, __NV_SATFINITE /
//                                                  __NV_NOSAT, cudaRoundZero / cudaRoundPosInf)
//           (rn = cudaRoundNearest, rz = cudaRoundZero; CUDA's fp4/fp6 conversions always
//           saturate). Codes must be equal, NaN inputs included: qmx follows CUDA's NaN rule
//           (fp4/fp6: +max; E8M0: 0xFF), so there is no exception.
//   decode  qmx_fp4_to_f32 / qmx_fp6_to_f32 vs float(__nv_cvt_fp4/fp6_to_halfraw) for every code
//           (16 + 64 + 64), qmx_e8m0_to_f32 vs __nv_cvt_e8m0_to_bf16raw (widened to float) for
//           the 256 codes. Float bits must be equal, with one documented, counted exception:
//           E8M0 0xFF, where CUDA gives the bf16 NaN 0x7FFF (0x7FFF0000) and qmx 0x7FC00000;
//           it passes when both are NaN and is counted on its own line.
//
// Counting: one check per (input, sweep), as every CHECK of tests/qmx_test.h counts once; the
// last line is "N passed, N failed"; the exit status is 0 only when nothing failed.
//
// Usage: lowfloat_vs_cuda [--threads N] [--stride S] [--quick]
//   --threads N  worker threads (default: std::thread::hardware_concurrency(), at least 1)
//   --stride S   S a power of two (default 1 = all 2^32 inputs): check the blocks of 2^16
//                inputs whose index b (= bits >> 16) has b % S == (b / S) % S, i.e. 2^32 / S
//                inputs: every sign and exponent, all low 16 mantissa bits, and each value of
//                the next log2(S) bits paired with every value of the log2(S) above them.
//   --quick      the inputs whose low 12 bits are 0 or 0xFFF plus [0x3F000000, 0x3F010000)
//                (a smoke test of the harness, under a second).

#include <cuda.h>       // CUDA_VERSION only
#include <cuda_fp8.h>
#include <cuda_fp6.h>
#include <cuda_fp4.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "qmx.h"   // declarations; the implementation is qmx_impl.c, compiled as C99

namespace {

const int kSweeps = 10;
const char *const kNames[kSweeps] = {
    "fp4 E2M1  rn          ", "fp4 E2M1  rz          ",
    "fp6 E2M3  rn          ", "fp6 E2M3  rz          ",
    "fp6 E3M2  rn          ", "fp6 E3M2  rz          ",
    "e8m0      rz satfinite", "e8m0      rz nosat    ",
    "e8m0      rp satfinite", "e8m0      rp nosat    ",
};

inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

struct Mismatch {
    int sweep;
    uint32_t bits;
    uint8_t qmx, cuda;
};

const int kMaxShown = 20;
const uint64_t kBlock = 1ull << 16;            // inputs per block (the stride unit)
const uint64_t kBlocksPerChunk = 64;           // blocks a thread takes at a time

std::atomic<uint64_t> g_next_chunk(0);
std::atomic<uint64_t> g_done_chunks(0);
std::atomic<uint64_t> g_fail[kSweeps];
std::atomic<uint64_t> g_checked[kSweeps];
std::mutex g_mu;
std::vector<Mismatch> g_mism;

// Checks one input against every sweep; returns a bit mask of the failing sweeps.
inline unsigned check_one(uint32_t bits, uint8_t q[kSweeps], uint8_t c[kSweeps]) {
    const float x = u2f(bits);
    q[0] = qmx_fp4_from_f32(x, 0);
    c[0] = (uint8_t)__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
    q[1] = qmx_fp4_from_f32(x, 1);
    c[1] = (uint8_t)__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero);
    q[2] = qmx_fp6_from_f32(x, QMX_FP6_E2M3, 0);
    c[2] = (uint8_t)__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest);
    q[3] = qmx_fp6_from_f32(x, QMX_FP6_E2M3, 1);
    c[3] = (uint8_t)__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundZero);
    q[4] = qmx_fp6_from_f32(x, QMX_FP6_E3M2, 0);
    c[4] = (uint8_t)__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest);
    q[5] = qmx_fp6_from_f32(x, QMX_FP6_E3M2, 1);
    c[5] = (uint8_t)__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero);
    q[6] = qmx_e8m0_from_f32(x, QMX_E8M0_ROUND_DOWN, 1);
    c[6] = (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero);
    q[7] = qmx_e8m0_from_f32(x, QMX_E8M0_ROUND_DOWN, 0);
    c[7] = (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero);
    q[8] = qmx_e8m0_from_f32(x, QMX_E8M0_ROUND_UP, 1);
    c[8] = (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf);
    q[9] = qmx_e8m0_from_f32(x, QMX_E8M0_ROUND_UP, 0);
    c[9] = (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf);
    unsigned bad = 0;
    for (int s = 0; s < kSweeps; s++)
        if (q[s] != c[s]) bad |= 1u << s;
    return bad;
}

void record(std::vector<Mismatch> &local, int *shown, uint32_t bits, unsigned bad,
            const uint8_t *q, const uint8_t *c) {
    for (int s = 0; s < kSweeps; s++) {
        if (!(bad >> s & 1u)) continue;
        g_fail[s].fetch_add(1, std::memory_order_relaxed);
        if (shown[s] < kMaxShown) {
            shown[s]++;
            Mismatch m = {s, bits, q[s], c[s]};
            local.push_back(m);
        }
    }
}

void flush(std::vector<Mismatch> &local) {
    if (local.empty()) return;
    std::lock_guard<std::mutex> lock(g_mu);
    g_mism.insert(g_mism.end(), local.begin(), local.end());
    local.clear();
}

void check_range(uint64_t lo, uint64_t hi, std::vector<Mismatch> &local, int *shown) {
    for (uint64_t b = lo; b < hi; b++) {
        uint8_t q[kSweeps], c[kSweeps];
        unsigned bad = check_one((uint32_t)b, q, c);
        if (__builtin_expect(bad != 0, 0)) record(local, shown, (uint32_t)b, bad, q, c);
    }
}

void worker(uint64_t nchunks, uint64_t stride, int stride_log2,
            std::chrono::steady_clock::time_point t0) {
    std::vector<Mismatch> local;
    for (;;) {
        uint64_t k = g_next_chunk.fetch_add(1);
        if (k >= nchunks) break;
        int shown[kSweeps] = {0};
        uint64_t n = 0;
        for (uint64_t blk = k * kBlocksPerChunk; blk < (k + 1) * kBlocksPerChunk; blk++) {
            if (stride > 1 && (blk & (stride - 1)) != ((blk >> stride_log2) & (stride - 1))) continue;
            check_range(blk * kBlock, (blk + 1) * kBlock, local, shown);
            n += kBlock;
        }
        for (int s = 0; s < kSweeps; s++) g_checked[s].fetch_add(n, std::memory_order_relaxed);
        flush(local);
        uint64_t d = g_done_chunks.fetch_add(1) + 1;
        if (d % (nchunks / 8) == 0) {
            std::lock_guard<std::mutex> lock(g_mu);
            double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf("  encode: %3u%% of the blocks, %.0f s\n", (unsigned)(100 * d / nchunks), sec);
            std::fflush(stdout);
        }
    }
}

void run_quick() {
    std::vector<Mismatch> local;
    int shown[kSweeps] = {0};
    uint64_t n = 0;
    for (uint64_t hi = 0; hi < (1ull << 20); hi++) {
        const uint32_t lows[2] = {0u, 0xFFFu};
        for (int i = 0; i < 2; i++) {
            uint32_t b = (uint32_t)(hi << 12) | lows[i];
            check_range(b, (uint64_t)b + 1, local, shown);
            n++;
        }
    }
    check_range(0x3F000000u, 0x3F010000u, local, shown);
    n += 0x10000u;
    for (int s = 0; s < kSweeps; s++) g_checked[s] += n;
    flush(local);
}

// Decoders. Returns failures; prints each one.
uint64_t decode_lowfp(const char *name, int fp4, qmx_dtype fmt, unsigned ncodes, uint64_t *checked) {
    uint64_t fails = 0;
    for (unsigned code = 0; code < ncodes; code++) {
        __half_raw hr = fp4 ? __nv_cvt_fp4_to_halfraw((__nv_fp4_storage_t)code, __NV_E2M1)
                            : __nv_cvt_fp6_to_halfraw((__nv_fp6_storage_t)code,
                                                      fmt == QMX_FP6_E2M3 ? __NV_E2M3 : __NV_E3M2);
        float want = __half2float(__half(hr));
        float got = fp4 ? qmx_fp4_to_f32((uint8_t)code) : qmx_fp6_to_f32((uint8_t)code, fmt);
        (*checked)++;
        if (f2u(got) != f2u(want)) {
            fails++;
            std::printf("  MISMATCH decode %s code 0x%02X: qmx %08" PRIX32 ", cuda %08" PRIX32 "\n",
                        name, code, f2u(got), f2u(want));
        }
    }
    return fails;
}

uint64_t decode_e8m0(uint64_t *checked, uint64_t *nan_exceptions) {
    uint64_t fails = 0;
    for (unsigned code = 0; code < 256; code++) {
        __nv_bfloat16_raw br = __nv_cvt_e8m0_to_bf16raw((__nv_fp8_storage_t)code);
        uint32_t wb = (uint32_t)br.x << 16, gb = f2u(qmx_e8m0_to_f32((uint8_t)code));
        bool wnan = (wb & 0x7FFFFFFFu) > 0x7F800000u, gnan = (gb & 0x7FFFFFFFu) > 0x7F800000u;
        bool ok;
        (*checked)++;
        if (wnan && wb != gb) {          // the documented exception: both NaN, other bits
            ok = gnan && code == 0xFFu;
            if (ok) (*nan_exceptions)++;
        } else {
            ok = wb == gb;
        }
        if (!ok) {
            fails++;
            std::printf("  MISMATCH decode e8m0 code 0x%02X: qmx %08" PRIX32 ", cuda %08" PRIX32 "\n",
                        code, gb, wb);
        }
    }
    return fails;
}

}  // namespace

int main(int argc, char **argv) {
    unsigned threads = std::thread::hardware_concurrency();
    uint64_t stride = 1;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = (unsigned)std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--stride") && i + 1 < argc) {
            stride = (uint64_t)std::strtoull(argv[++i], NULL, 10);
        } else if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else {
            std::fprintf(stderr, "usage: %s [--threads N] [--stride S] [--quick]\n", argv[0]);
            return 2;
        }
    }
    int stride_log2 = 0;
    while ((1ull << stride_log2) < stride) stride_log2++;
    if (stride == 0 || (1ull << stride_log2) != stride || stride > 256) {
        std::fprintf(stderr, "--stride must be a power of two in [1, 256]\n");
        return 2;
    }
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    for (int s = 0; s < kSweeps; s++) { g_fail[s] = 0; g_checked[s] = 0; }

    std::printf("lowfloat_vs_cuda: qmx fp4/fp6/e8m0 vs cuda_fp4.h/cuda_fp6.h/cuda_fp8.h host path "
                "(CUDA_VERSION %d), %s", (int)CUDA_VERSION,
                quick ? "QUICK subset" : stride == 1 ? "all 2^32 float32 inputs" : "stride ");
    if (!quick && stride > 1) std::printf("%u (2^32/%u inputs)", (unsigned)stride, (unsigned)stride);
    std::printf(", %u thread%s\n", threads, threads == 1 ? "" : "s");
    std::fflush(stdout);

    auto t0 = std::chrono::steady_clock::now();
    if (quick) {
        run_quick();
    } else {
        const uint64_t nchunks = (1ull << 32) / kBlock / kBlocksPerChunk;
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; t++) pool.emplace_back(worker, nchunks, stride, stride_log2, t0);
        for (auto &th : pool) th.join();
    }
    double enc_sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    uint64_t passed = 0, failed = 0;
    std::sort(g_mism.begin(), g_mism.end(), [](const Mismatch &a, const Mismatch &b) {
        return a.sweep != b.sweep ? a.sweep < b.sweep : a.bits < b.bits;
    });
    int printed[kSweeps] = {0};
    for (size_t i = 0; i < g_mism.size(); i++) {
        const Mismatch &m = g_mism[i];
        if (printed[m.sweep]++ >= kMaxShown) continue;
        std::printf("  MISMATCH encode %s input %08" PRIX32 " (%.9g): qmx 0x%02X, cuda 0x%02X\n",
                    kNames[m.sweep], m.bits, (double)u2f(m.bits), m.qmx, m.cuda);
    }
    for (int s = 0; s < kSweeps; s++) {
        uint64_t c = g_checked[s], f = g_fail[s];
        std::printf("encode %s: %" PRIu64 " inputs, %" PRIu64 " mismatches\n", kNames[s], c, f);
        passed += c - f;
        failed += f;
    }
    std::printf("encode time: %.1f s\n", enc_sec);

    uint64_t c, f, nan_exc = 0;
    c = 0; f = decode_lowfp("fp4 E2M1", 1, QMX_FP4_E2M1, 16, &c);
    std::printf("decode fp4 E2M1: %" PRIu64 " codes, %" PRIu64 " mismatches\n", c, f);
    passed += c - f; failed += f;
    c = 0; f = decode_lowfp("fp6 E2M3", 0, QMX_FP6_E2M3, 64, &c);
    std::printf("decode fp6 E2M3: %" PRIu64 " codes, %" PRIu64 " mismatches\n", c, f);
    passed += c - f; failed += f;
    c = 0; f = decode_lowfp("fp6 E3M2", 0, QMX_FP6_E3M2, 64, &c);
    std::printf("decode fp6 E3M2: %" PRIu64 " codes, %" PRIu64 " mismatches\n", c, f);
    passed += c - f; failed += f;
    c = 0; f = decode_e8m0(&c, &nan_exc);
    std::printf("decode e8m0    : %" PRIu64 " codes, %" PRIu64 " mismatches (%" PRIu64
                " documented NaN exception: 0xFF, CUDA 7FFF0000 vs qmx 7FC00000)\n", c, f, nan_exc);
    passed += c - f; failed += f;
    if (nan_exc != 1) {
        std::printf("  expected exactly 1 documented NaN exception, saw %" PRIu64 "\n", nan_exc);
        failed++;
    }
    std::printf("total time: %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::printf("%" PRIu64 " passed, %" PRIu64 " failed\n", passed, failed);
    return failed ? 1 : 0;
}
