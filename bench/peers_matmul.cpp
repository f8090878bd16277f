// peers_matmul.cpp - gemmlowp, the C++-only peer of bench_matmul.c (oneDNN and OpenBLAS have C
// APIs and are timed inside bench_matmul, in alternation with qmx). Same timing rules
// (bench_util.h: median of QMX_BENCH_REPS reps of >= QMX_BENCH_REP_MS ms, one warm-up call).
// Built by `make bench` when Debian's libgemmlowp-dev is installed (Makefile block
// "bench-peers"); bench_matmul runs `peers_matmul M N K` once per shape and reads the line
//   PEER <tab> name <tab> M <tab> N <tab> K <tab> median <tab> min <tab> max <tab> unit <tab> note
// gemmlowp_u8u8s32: u8 x u8 -> s32 with offsets -128/-128 (the signed product), one thread
// (set_max_num_threads(1)), the AVX2 kernel (-DGEMMLOWP_ENABLE_AVX2); gemmlowp has no
// prepacking API, so it packs both operands in every call. The result is spot-checked against
// a scalar dot product before it is timed.
#include <gemmlowp/public/gemmlowp.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <vector>
extern "C" {
#include "bench_util.h"
}

struct LowpCtx {
    gemmlowp::GemmContext *gc;
    const uint8_t *a, *b;
    int32_t *c;
    int M, N, K;
};
static void lowp_run(void *p) {
    LowpCtx *x = (LowpCtx *)p;
    gemmlowp::MatrixMap<const uint8_t, gemmlowp::MapOrder::RowMajor> lhs(x->a, x->M, x->K);
    gemmlowp::MatrixMap<const uint8_t, gemmlowp::MapOrder::ColMajor> rhs(x->b, x->K, x->N);
    gemmlowp::MatrixMap<int32_t, gemmlowp::MapOrder::ColMajor> res(x->c, x->M, x->N);
    std::tuple<> pipeline;
    gemmlowp::GemmWithOutputPipeline<uint8_t, int32_t, gemmlowp::DefaultL8R8BitDepthParams>(
        x->gc, lhs, rhs, &res, -128, -128, pipeline);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: peers_matmul M N K\n");
        return 2;
    }
    int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
    if (M < 1 || N < 1 || K < 1) return 2;
    gemmlowp::GemmContext gc;
    gc.set_max_num_threads(1);
    std::vector<uint8_t> a((size_t)M * K), b((size_t)K * N);
    std::vector<int32_t> c((size_t)M * N);
    unsigned seed = 11;
    for (auto &v : a) v = (uint8_t)bqu_rng(&seed);
    for (auto &v : b) v = (uint8_t)bqu_rng(&seed);
    LowpCtx ctx{&gc, a.data(), b.data(), c.data(), M, N, K};
    lowp_run(&ctx);
    int i = M - 1, j = N / 3;
    long long ref = 0;
    for (int k = 0; k < K; k++)
        ref += (long long)((int)a[(size_t)i * K + k] - 128) * ((int)b[(size_t)j * K + k] - 128);
    if (c[(size_t)j * M + i] != ref) {
        std::printf("INFO\tgemmlowp: MISMATCH\n");
        return 1;
    }
    bqu_stats s = bqu_measure(lowp_run, &ctx);
    double work = 2.0 * M * N * K;
#if defined(GEMMLOWP_AVX2_64)
    const char *kern = "avx2_24x8 kernel, packs both operands per call";
#else
    const char *kern = "sse4_12x4 kernel, packs both operands per call";
#endif
    std::printf("PEER\tgemmlowp_u8u8s32\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\tGOPS\t%s\n", M, N, K,
                work / s.med / 1e9, work / s.max / 1e9, work / s.min / 1e9, kern);
    (void)bqu_alloc; (void)bqu_clock_ghz; (void)bqu_measure_ratio;
    return 0;
}
