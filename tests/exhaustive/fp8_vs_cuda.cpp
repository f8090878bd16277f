// fp8_vs_cuda.cpp - exhaustive check of qmx's fp8 conversions against NVIDIA's cuda_fp8.h.
//
// Built and run by tests/exhaustive/run.sh (see README.md there). C++11, host code only: the
// CUDA conversion functions are __host__ __device__ and, without __CUDA_ARCH__, take their
// portable software path (the same one a CUDA program's host code gets). No GPU is needed.
//
// Checks
//   encode  qmx_fp8_from_f32(x, fmt, sat) == __nv_cvt_float_to_fp8(x, sat', interp)
//           for every one of the 2^32 float32 bit patterns x, for
//             QMX_FP8_E4M3FN <-> __NV_E4M3 and QMX_FP8_E5M2 <-> __NV_E5M2, and
//             saturate=1 <-> __NV_SATFINITE, saturate=0 <-> __NV_NOSAT  (4 sweeps).
//           Codes must be equal, except for NaN inputs: CUDA writes 0x7F for every NaN (it
//           drops the sign), qmx keeps the sign, so for a NaN input any NaN code is accepted
//           as long as qmx's code is a NaN code of that format (E4M3FN: x.1111.111;
//           E5M2: x.11111.{01,10,11}) and CUDA's is one too.
//   decode  qmx_fp8_to_f32(c, fmt) vs float(__nv_cvt_fp8_to_halfraw(c, interp)) (through
//           __half2float) for the 256 codes of each format (2 sweeps). The float bits must be
//           equal, except that when CUDA gives NaN (sign dropped) qmx must give a NaN of
//           either sign. The __nv_fp8_e4m3 / __nv_fp8_e5m2 operator float is checked to agree
//           with that CUDA value too (it is the same conversion; a disagreement is an oracle
//           problem and is reported as such).
//
// Counting: one check per (input, format, mode) conversion, as every CHECK of tests/qmx_test.h
// counts once: 4 * 2^32 encode checks + 2 * 256 decode checks = 17179869696. The last line is
// "N passed, N failed" over those; the exit status is 0 only when nothing failed.
//
// Usage: fp8_vs_cuda [--threads N] [--quick]
//   --threads N  worker threads (default: std::thread::hardware_concurrency(), at least 1)
//   --quick      encode only the inputs whose low 12 bits are 0 or 0xFFF and every input in
//                [0x3F000000, 0x3F010000) (a smoke test of the harness, seconds; the counts are
//                then smaller). The full run is the default and the one make test-exhaustive uses.

#include <cuda.h>       // CUDA_VERSION only
#include <cuda_fp8.h>

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

struct Sweep {
    const char *name;
    qmx_dtype fmt;
    int saturate;
    __nv_fp8_interpretation_t interp;
    __nv_saturation_t sat;
};

const Sweep kSweeps[4] = {
    {"E4M3FN satfinite", QMX_FP8_E4M3FN, 1, __NV_E4M3, __NV_SATFINITE},
    {"E4M3FN nosat    ", QMX_FP8_E4M3FN, 0, __NV_E4M3, __NV_NOSAT},
    {"E5M2   satfinite", QMX_FP8_E5M2, 1, __NV_E5M2, __NV_SATFINITE},
    {"E5M2   nosat    ", QMX_FP8_E5M2, 0, __NV_E5M2, __NV_NOSAT},
};

inline bool is_nan_code(uint8_t c, bool e4m3) {
    return e4m3 ? (c & 0x7F) == 0x7F : ((c & 0x7C) == 0x7C && (c & 0x03) != 0);
}

inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

struct Mismatch {
    int sweep;
    uint32_t bits;
    uint8_t qmx, cuda;
};

const int kMaxShown = 20;
const uint64_t kChunk = 1ull << 22;            // 1024 chunks of 2^22 inputs

std::atomic<uint64_t> g_next_chunk(0);
std::atomic<uint64_t> g_done_chunks(0);
std::atomic<uint64_t> g_fail[4];
std::atomic<uint64_t> g_checked[4];
std::mutex g_mu;
std::vector<Mismatch> g_mism;                  // up to kMaxShown per sweep, lowest bits kept

// Checks one input against every sweep. Returns a bit mask of the failing sweeps and the
// codes in q[] / c[]. Everything is inlined with constant formats and modes.
inline unsigned check_one(uint32_t bits, uint8_t q[4], uint8_t c[4]) {
    const float x = u2f(bits);
    const bool xnan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
    unsigned bad = 0;
    for (int s = 0; s < 4; s++) {
        q[s] = qmx_fp8_from_f32(x, kSweeps[s].fmt, kSweeps[s].saturate);
        c[s] = (uint8_t)__nv_cvt_float_to_fp8(x, kSweeps[s].sat, kSweeps[s].interp);
        bool ok;
        if (xnan) {
            const bool e4 = kSweeps[s].interp == __NV_E4M3;
            ok = is_nan_code(q[s], e4) && is_nan_code(c[s], e4);
        } else {
            ok = q[s] == c[s];
        }
        if (!ok) bad |= 1u << s;
    }
    return bad;
}

void record(std::vector<Mismatch> &local, int *shown, uint32_t bits, unsigned bad,
            const uint8_t q[4], const uint8_t c[4]) {
    for (int s = 0; s < 4; s++) {
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

void progress(uint64_t done, uint64_t total, std::chrono::steady_clock::time_point t0) {
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  encode: %3u%% of the inputs, %.0f s\n", (unsigned)(100 * done / total), sec);
    std::fflush(stdout);
}

void worker_full(uint64_t nchunks, std::chrono::steady_clock::time_point t0) {
    std::vector<Mismatch> local;
    for (;;) {
        uint64_t k = g_next_chunk.fetch_add(1);
        if (k >= nchunks) break;
        int shown[4] = {0, 0, 0, 0};           // per chunk: the lowest failing bits are kept
        uint64_t lo = k * kChunk, hi = lo + kChunk;
        for (uint64_t b = lo; b < hi; b++) {
            uint8_t q[4], c[4];
            unsigned bad = check_one((uint32_t)b, q, c);
            if (__builtin_expect(bad != 0, 0)) record(local, shown, (uint32_t)b, bad, q, c);
        }
        for (int s = 0; s < 4; s++) g_checked[s].fetch_add(kChunk, std::memory_order_relaxed);
        flush(local);
        uint64_t d = g_done_chunks.fetch_add(1) + 1;
        if (d % (nchunks / 8) == 0) {
            std::lock_guard<std::mutex> lock(g_mu);
            progress(d, nchunks, t0);
        }
    }
}

// --quick: a fixed, small subset (see the header comment).
void run_quick() {
    std::vector<Mismatch> local;
    int shown[4] = {0, 0, 0, 0};
    uint64_t n = 0;
    for (uint64_t hi = 0; hi < (1ull << 20); hi++) {
        const uint32_t lows[2] = {0u, 0xFFFu};
        for (int i = 0; i < 2; i++) {
            uint32_t b = (uint32_t)(hi << 12) | lows[i];
            uint8_t q[4], c[4];
            unsigned bad = check_one(b, q, c);
            if (bad) record(local, shown, b, bad, q, c);
            n++;
        }
    }
    for (uint32_t b = 0x3F000000u; b < 0x3F010000u; b++) {
        uint8_t q[4], c[4];
        unsigned bad = check_one(b, q, c);
        if (bad) record(local, shown, b, bad, q, c);
        n++;
    }
    for (int s = 0; s < 4; s++) g_checked[s] += n;
    flush(local);
}

// Decode: 256 codes per format. Returns the number of failures; prints each (at most 256).
uint64_t run_decode(const char *name, qmx_dtype fmt, __nv_fp8_interpretation_t interp,
                    uint64_t *checked) {
    uint64_t fails = 0;
    for (unsigned code = 0; code < 256; code++) {
        __half_raw hr = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, interp);
        float want = __half2float(__half(hr));
        float cls;
        if (interp == __NV_E4M3) {
            __nv_fp8_e4m3 v; v.__x = (__nv_fp8_storage_t)code; cls = static_cast<float>(v);
        } else {
            __nv_fp8_e5m2 v; v.__x = (__nv_fp8_storage_t)code; cls = static_cast<float>(v);
        }
        float got = qmx_fp8_to_f32((uint8_t)code, fmt);
        uint32_t wb = f2u(want), gb = f2u(got), cb = f2u(cls);
        bool wnan = want != want, gnan = got != got;
        bool ok = wnan ? gnan : gb == wb;
        (*checked)++;
        if (wnan ? !(cls != cls) : cb != wb) {   // the two CUDA host conversions disagree
            std::printf("  ORACLE %s code 0x%02X: __nv_cvt_fp8_to_halfraw -> %08" PRIX32
                        ", operator float -> %08" PRIX32 "\n", name, code, wb, cb);
            ok = false;
        }
        if (!ok) {
            fails++;
            std::printf("  MISMATCH decode %s code 0x%02X: qmx %08" PRIX32 " (%.9g), cuda %08"
                        PRIX32 " (%.9g)\n", name, code, gb, (double)got, wb, (double)want);
        }
    }
    return fails;
}

}  // namespace

int main(int argc, char **argv) {
    unsigned threads = std::thread::hardware_concurrency();
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = (unsigned)std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else {
            std::fprintf(stderr, "usage: %s [--threads N] [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    for (int s = 0; s < 4; s++) { g_fail[s] = 0; g_checked[s] = 0; }

    std::printf("fp8_vs_cuda: qmx_fp8_from_f32 / qmx_fp8_to_f32 vs cuda_fp8.h host path "
                "(CUDA_VERSION %d), %s, %u thread%s\n", (int)CUDA_VERSION,
                quick ? "QUICK subset" : "all 2^32 float32 inputs", threads,
                threads == 1 ? "" : "s");
    std::fflush(stdout);

    auto t0 = std::chrono::steady_clock::now();
    if (quick) {
        run_quick();
    } else {
        const uint64_t nchunks = (1ull << 32) / kChunk;
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; t++) pool.emplace_back(worker_full, nchunks, t0);
        for (auto &th : pool) th.join();
    }
    double enc_sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    uint64_t passed = 0, failed = 0;
    std::sort(g_mism.begin(), g_mism.end(), [](const Mismatch &a, const Mismatch &b) {
        return a.sweep != b.sweep ? a.sweep < b.sweep : a.bits < b.bits;
    });
    int printed[4] = {0, 0, 0, 0};             // the first kMaxShown of each sweep
    for (size_t i = 0; i < g_mism.size(); i++) {
        const Mismatch &m = g_mism[i];
        if (printed[m.sweep]++ >= kMaxShown) continue;
        std::printf("  MISMATCH encode %s input %08" PRIX32 " (%.9g): qmx 0x%02X, cuda 0x%02X\n",
                    kSweeps[m.sweep].name, m.bits, (double)u2f(m.bits), m.qmx, m.cuda);
    }
    for (int s = 0; s < 4; s++) {
        uint64_t c = g_checked[s], f = g_fail[s];
        std::printf("encode %s: %" PRIu64 " inputs, %" PRIu64 " mismatches\n", kSweeps[s].name,
                    c, f);
        passed += c - f;
        failed += f;
    }
    std::printf("encode time: %.1f s\n", enc_sec);

    struct { const char *name; qmx_dtype fmt; __nv_fp8_interpretation_t interp; } dec[2] = {
        {"E4M3FN", QMX_FP8_E4M3FN, __NV_E4M3}, {"E5M2  ", QMX_FP8_E5M2, __NV_E5M2}};
    for (int d = 0; d < 2; d++) {
        uint64_t c = 0, f = run_decode(dec[d].name, dec[d].fmt, dec[d].interp, &c);
        std::printf("decode %s: %" PRIu64 " codes, %" PRIu64 " mismatches\n", dec[d].name, c, f);
        passed += c - f;
        failed += f;
    }
    std::printf("total time: %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::printf("%" PRIu64 " passed, %" PRIu64 " failed\n", passed, failed);
    return failed ? 1 : 0;
}
