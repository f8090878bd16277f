/* test_parallel.c - USING SEVERAL CORES (qmx_kernels.h): the range calls qmx_*_run, the
 * executor of the option structs and qmx_matmul_f32_dyn_i8_exec.
 * Specifications checked, for qmx_matmul_i8 (both B layouts, zero points, cached sums),
 * qmx_matmul_i8_packed, qmx_fully_connected_i8 (+ _packed; int8 and int16 out, weight zero
 * point), qmx_matmul_i8_f32 (+ _packed), qmx_matmul_f32_dyn_i8, qmx_matmul_i4 (int8 / int4
 * A, int4 / uint4 W with block zero points), qmx_matmul_i4_f32, qmx_fully_connected_i4,
 * qmx_matmul_fp8_f32, qmx_matmul_blockw_packed_dyn_i8 / _f32 (_run and _exec; every blob kind:
 * ggml Q8_0, Q4_0, Q4_1, MXFP4, NVFP4 with a tensor scale, MXFP8 E4M3 / E5M2 with a ragged
 * last block; act_block 0 / 32 / 64; a bad magic, a short blob, another N, act_block 48),
 * qmx_matmul_blockw_dyn_i8 / _f32 (_run and _exec; qconfig uint4 + zero points per block, MXFP4,
 * MXFP6 E2M3, NVFP4, MXFP8 E4M3 weights; n_scales one short), qmx_fully_connected_i16 (+ _packed;
 * _run and _exec; per tensor and per channel with bias, w_zp, clamps),
 * qmx_einsum (opts.executor: a task per batch index; int8 -> int32,
 * int8 -> float with channel scales and a zero point on [N,K] and [K,N] weights, float with a
 * direct and a scattered output, a 1-batch spec; a Q4_0 / MXFP4 block-weight blob operand,
 * float32 and dynamic int8 activations: the blob kernel's tiles, in place and scattered
 * outputs, einsum_blob_cases), in qmx.h qmx_quantize_run /
 * qmx_dequantize_run (per tensor; per channel and per block with inner 1 and > 1, ragged
 * blocks and rows that straddle chunks; int8, uint8 with zero points, int4, int2, int16,
 * fp8 E4M3, nf4, ONNX fp8 E5M2 with a NaN) and their _exec calls, the fp8, fp4 and fp6
 * array range and _exec calls (odd counts, NaN / Inf, both fp4 / fp6 rounding modes), the
 * MX / NVFP4 array range and _exec calls (every format, FLOOR / CEIL / EVEN / RCEIL / Qwix /
 * microxcaling / ggml rules, NVFP4 two-level, views with inner > 1 and ragged blocks, an odd
 * fp4 block x inner as one task; task 0 alone writes exactly its documented elements), and in qmx_calib.h qmx_absmax_f32_run / _exec and qmx_fp8_delayed_update_exec
 * (NaN and -Inf; more than 64 tasks) and qmx_observer_update_exec (every method; per channel
 * with fewer and more groups than 64, per block; a refused overflowing batch) and
 * qmx_histogram_update_exec (64 and 2048 bins, growing ranges that merge bins, 1-task batch),
 * per-tensor qmx_observer_update_exec (every method, absmean with p = 1..4; 1 chunk, a ragged
 * last chunk, > 64 chunks; the only min / max in the last or first chunk, -0, NaN / Inf in late
 * chunks, an EMA and sums that overflow; one task per run / piece; the executor's errors
 * before the data's) and
 * qmx_torch_histogram_update_exec (2047, 1536 and 100 bins; restart, added and combined
 * ranges, constant batches, a bin past 2^24 values, negative combined bins; bad workspaces),
 * and qmx_kv_attention (a task per KV head: executor and qmx_kv_attention_run; with
 * opts.token_split 64 / 128 / 256, tasks = KV heads x token splits: executor and
 * qmx_kv_attention_split_run + _combine, kv_split_cases) and
 * qmx_kv_prefill (executor; full and decode-sized workspaces, outputs and cache bytes) over
 * int8, int4, fp8, float32 and QMX_KV_BLOCK caches, rotate, a window, the float query, GQA
 * groups 1 / 4 with 1, 3 and 8 KV heads:
 *   - through an executor of 1, 2, 3, 4 and 8 workers (PAR_SMALL, the cross targets and
 *     valgrind: 1 and 3 for the matmuls, 1, 3 and 8 elsewhere) that runs the tasks in a shuffled order
 *     on real threads (pthreads, where glibc >= 2.34 has them in libc, so no link flag is
 *     needed; elsewhere, e.g. Cortex-M, the same shuffled order on one thread), the output
 *     buffer (padding included) is bit for bit the serial call's;
 *   - the same through the range calls: single tasks in a shuffled order with the smallest
 *     workspace, and uneven contiguous ranges with one workspace each;
 *   - shapes with 1 task, fewer tasks than workers, ragged last row and column tiles;
 *   - bad input returns a status with the output untouched and no task run: a range out of
 *     bounds or reversed, a workspace one byte short (range call and executor), a NULL
 *     callback with workers > 1, negative workers, a bad argument of the whole call (checked
 *     before any task), K past the accumulator bound, a non-finite activation row (dynamic
 *     int8, fp8).
 * Define PAR_NO_THREADS to use the one-thread executor on any target. */
#if !defined(_POSIX_C_SOURCE) && !defined(__cplusplus)
#define _POSIX_C_SOURCE 200809L /* pthreads under -std=c99 */
#endif
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_calib.h"
#include "qmx_test.h"

/* Real threads where the tests run natively (x86 hosts); under QEMU user mode and valgrind
 * every thread start is costly (minutes over the thousands of executor calls here), so the
 * cross targets and the valgrind build run the one-thread shuffled executor: the same task
 * orders and per-worker workspaces (ThreadSanitizer checks the threaded runs). */
#if !defined(PAR_NO_THREADS) && !defined(QMX_TEST_VALGRIND) && defined(__GLIBC__) && \
    (defined(__x86_64__) || defined(__i386__)) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#  define PAR_THREADS 1
#  include <pthread.h>
#else
#  define PAR_THREADS 0
#endif

/* The smaller shapes (still ragged, still several tasks) everywhere but x86-64 (where the
 * tests run natively; i386 runs natively too, on real threads, but with x87 float and as one
 * of the cross targets it takes the small shapes: 54 s -> a few): under QEMU every target is slow with several threads (the KV cases at the
 * large shapes took over 3 minutes on armhf), RVV emulates each vector instruction element by
 * element, and the Cortex-M targets have one slow core and 16 MiB. ThreadSanitizer (gcc's
 * __SANITIZE_THREAD__, `make test-tsan`) takes them too, on real threads: it looks for races,
 * which the small shapes reach as well (several tasks per worker, ragged tiles), while the
 * 1, 2, 3, 4, 8-worker determinism runs natively in every `make test` configuration. */
#if QMX_TEST_SMALL_TARGET || defined(QMX_TEST_VALGRIND) || defined(__SANITIZE_THREAD__) || \
    !defined(__x86_64__)
#  define PAR_SMALL 1
#else
#  define PAR_SMALL 0
#endif

/* The worker counts of every case. With PAR_SMALL (cross targets: one thread anyway; valgrind:
 * threads serialised; TSan: real threads) 1, 3 and 8: one worker, uneven groups, more workers
 * than tasks; the full list runs on the x86 hosts on real threads. */
#if PAR_SMALL
static const int par_wlist[] = {1, 3, 8};
#else
static const int par_wlist[] = {1, 2, 3, 4, 8};
#endif
#define PAR_NW ((int)(sizeof par_wlist / sizeof par_wlist[0]))

#define PAR_MAX_TASKS 4096
#define PAR_MAX_WORKERS 8

/* ---- the test executor: tasks in a shuffled order, on `workers` threads ---- */
typedef struct par_pool {
    int calls;   /* parallel_for calls */
    int tasks;   /* tasks run (counted by the caller's thread after the join) */
} par_pool;

typedef struct par_shared {
    void (*fn)(void *, int, int);
    void *arg;
    const int *order;
    int n, next;
#if PAR_THREADS
    pthread_mutex_t mu;
#endif
} par_shared;

static int par_order[PAR_MAX_TASKS];

static void par_shuffle(int *o, int n) {
    int i;
    for (i = 0; i < n; i++) o[i] = i;
    for (i = n - 1; i > 0; i--) {
        int j = (int)(qmx_test_rand() % (uint32_t)(i + 1)), t = o[i];
        o[i] = o[j]; o[j] = t;
    }
}

#if PAR_THREADS
typedef struct par_thread_arg { par_shared *sh; int worker, ran; } par_thread_arg;
static void *par_thread(void *p) {
    par_thread_arg *t = (par_thread_arg *)p;
    par_shared *sh = t->sh;
    for (;;) {
        int k = -1;
        pthread_mutex_lock(&sh->mu);
        if (sh->next < sh->n) k = sh->order[sh->next++];
        pthread_mutex_unlock(&sh->mu);
        if (k < 0) break;
        sh->fn(sh->arg, k, t->worker);
        t->ran++;
    }
    return NULL;
}
#endif

/* parallel_for with the executor's worker count in pool_workers (set per call below) */
static int par_workers_now = 1;
static unsigned long par_runs_by_workers[PAR_MAX_WORKERS + 1];   /* par_for calls, printed */
static void par_for(void *pool, int n, void (*fn)(void *, int, int), void *arg) {
    par_pool *p = (par_pool *)pool;
    int i, w = par_workers_now;
    p->calls++;
    if (w >= 1 && w <= PAR_MAX_WORKERS) par_runs_by_workers[w]++;
    if (n > PAR_MAX_TASKS) return; /* the test's shapes stay below */
    par_shuffle(par_order, n);
#if PAR_THREADS
    {
        par_shared sh;
        pthread_t th[PAR_MAX_WORKERS];
        par_thread_arg ta[PAR_MAX_WORKERS];
        int started = 0;
        sh.fn = fn; sh.arg = arg; sh.order = par_order; sh.n = n; sh.next = 0;
        pthread_mutex_init(&sh.mu, NULL);
        for (i = 0; i < w; i++) {
            ta[i].sh = &sh; ta[i].worker = i; ta[i].ran = 0;
            if (pthread_create(&th[i], NULL, par_thread, &ta[i]) != 0) break;
            started++;
        }
        if (started == 0) { /* no thread could start: run them here as worker 0 */
            ta[0].ran = 0;
            (void)par_thread(&ta[0]);
            p->tasks += ta[0].ran;
        }
        for (i = 0; i < started; i++) {
            pthread_join(th[i], NULL);
            p->tasks += ta[i].ran;
        }
        pthread_mutex_destroy(&sh.mu);
    }
#else
    for (i = 0; i < n; i++) { /* one thread, shuffled order, the workers in turn */
        fn(arg, par_order[i], (i * 5 + 3) % w);
        p->tasks++;
    }
#endif
}

/* ---- the entry points under test, one call shape ---- */
/* K_BPD, K_BPF: the block-weight blob kernels (blockw_cases, not run_shape's loop) */
enum { K_MM, K_MMP, K_FC, K_FCP, K_F32, K_F32P, K_DYN, K_I4, K_I4F, K_FC4, K_FP8, K_COUNT,
       K_BPD = K_COUNT, K_BPF, K_BWD, K_BWF, K_S16, K_S16P, K_MX8, K_BMM, K_ALL };
static const char *const kind_name[K_ALL] = {
    "qmx_matmul_i8", "qmx_matmul_i8_packed", "qmx_fully_connected_i8",
    "qmx_fully_connected_i8_packed", "qmx_matmul_i8_f32", "qmx_matmul_i8_f32_packed",
    "qmx_matmul_f32_dyn_i8", "qmx_matmul_i4", "qmx_matmul_i4_f32", "qmx_fully_connected_i4",
    "qmx_matmul_fp8_f32", "qmx_matmul_blockw_packed_dyn_i8", "qmx_matmul_blockw_packed_f32",
    "qmx_matmul_blockw_dyn_i8", "qmx_matmul_blockw_f32", "qmx_fully_connected_i16",
    "qmx_fully_connected_i16_packed", "qmx_matmul_mxfp8_f32", "qmx_batch_matmul_i16"};

typedef struct par_case {
    int kind;
    size_t M, N, K, lda, ldb, ldc;
    const int8_t *A, *B;
    const float *X;
    const void *blob;
    size_t blob_bytes;
    qmx_matmul_i8_opts opts;
    qmx_requant_config rq;
    int32_t a_zp;
    qmx_matmul_i8_f32_scales sc;
    const float *w_scales;
    size_t w_scales_len;
    qmx_matmul_i4_params p4;
    qmx_matmul_fp8_params p8;
    const qmx_blockw_dyn_opts *bwo;   /* K_BPD, K_BWD */
    const qmx_blockw *bw;             /* K_BWD, K_BWF; K_MX8: b */
    const qmx_blockw *bwa;            /* K_MX8: a */
    /* K_BMM: X in A16 (ldx in lda), Y16 (ldy in ldb), out (ldo in ldc) */
    const int16_t *Y16;
    size_t batch, xbs, ybs, obs;
    int adj_x, adj_y;
    const int16_t *A16;               /* K_S16, K_S16P (w_zp in a_zp) */
    qmx_requant64_config rq64;
} par_case;

static size_t out_esize(const par_case *c) {
    if (c->kind == K_S16 || c->kind == K_S16P || c->kind == K_BMM) return 2;
    if (c->kind == K_FC || c->kind == K_FCP || c->kind == K_FC4)
        return c->rq.out_dtype == QMX_INT16 ? 2 : 1;
    return 4;
}

static qmx_status ws_size(const par_case *c, size_t M, size_t N, size_t *b) {
    switch (c->kind) {
    case K_MM: return qmx_matmul_i8_workspace_size(M, N, c->K, NULL, b);
    case K_MMP: return qmx_matmul_i8_packed_workspace_size(M, N, c->K, b);
    case K_FC: return qmx_fully_connected_i8_workspace_size(M, N, c->K, b);
    case K_FCP: case K_F32P: return qmx_fully_connected_i8_packed_workspace_size(M, N, c->K, b);
    case K_F32: return qmx_matmul_i8_f32_workspace_size(M, N, c->K, b);
    case K_I4: case K_I4F: return qmx_matmul_i4_workspace_size(M, N, c->K, &c->p4, b);
    case K_FC4: return qmx_matmul_i4_workspace_size(M, N, c->K, NULL, b);
    case K_FP8: return qmx_matmul_fp8_f32_workspace_size(M, N, c->K, b);
    case K_BPD: return qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, c->K, c->bwo, b);
    case K_BPF: return qmx_matmul_blockw_packed_f32_workspace_size(M, N, c->K, b);
    case K_BWD: return qmx_matmul_blockw_dyn_i8_workspace_size(M, N, c->K, c->bwo, b);
    case K_BWF: return qmx_matmul_blockw_f32_workspace_size(M, N, c->K, b);
    case K_S16: case K_S16P: return qmx_fully_connected_i16_workspace_size(M, N, c->K, b);
    case K_MX8: *b = 0; return QMX_OK;   /* no workspace */
    case K_BMM: return qmx_batch_matmul_i16_workspace_size(M, N, c->K, b);
    default: return qmx_matmul_f32_dyn_i8_workspace_size(M, N, c->K, b);
    }
}
static size_t tile_ws(const par_case *c) {
    size_t b = 0;
    (void)ws_size(c, c->M < QMX_TASK_M ? c->M : QMX_TASK_M, c->N < QMX_TASK_N ? c->N : QMX_TASK_N, &b);
    return b;
}

/* how: 0 serial, 1 executor ex, 2 range [tb, te) */
static qmx_status par_do(const par_case *c, int how, const qmx_executor *ex, size_t tb,
                         size_t te, void *out, void *ws, size_t bytes) {
    qmx_matmul_i8_opts o = c->opts;
    qmx_requant_config rq = c->rq;
    o.executor = how == 1 ? ex : NULL;
    rq.executor = how == 1 ? ex : NULL;
    switch (c->kind) {
    case K_MM:
        if (how == 2)
            return qmx_matmul_i8_run(c->M, c->N, c->K, c->A, c->lda, c->B, c->ldb,
                                     (int32_t *)out, c->ldc, &o, tb, te, ws, bytes);
        return qmx_matmul_i8(c->M, c->N, c->K, c->A, c->lda, c->B, c->ldb, (int32_t *)out,
                             c->ldc, &o, ws, bytes);
    case K_MMP:
        if (how == 2)
            return qmx_matmul_i8_packed_run(c->M, c->N, c->K, c->A, c->lda, c->blob,
                                            c->blob_bytes, (int32_t *)out, c->ldc, &o, tb, te,
                                            ws, bytes);
        return qmx_matmul_i8_packed(c->M, c->N, c->K, c->A, c->lda, c->blob, c->blob_bytes,
                                    (int32_t *)out, c->ldc, &o, ws, bytes);
    case K_FC:
        if (how == 2)
            return qmx_fully_connected_i8_run(c->M, c->N, c->K, c->A, c->lda, c->a_zp, c->B,
                                              c->ldb, &rq, out, c->ldc, tb, te, ws, bytes);
        return qmx_fully_connected_i8(c->M, c->N, c->K, c->A, c->lda, c->a_zp, c->B, c->ldb, &rq,
                                      out, c->ldc, ws, bytes);
    case K_FCP:
        if (how == 2)
            return qmx_fully_connected_i8_packed_run(c->M, c->N, c->K, c->A, c->lda, c->a_zp,
                                                     c->blob, c->blob_bytes, &rq, out, c->ldc,
                                                     tb, te, ws, bytes);
        return qmx_fully_connected_i8_packed(c->M, c->N, c->K, c->A, c->lda, c->a_zp, c->blob,
                                             c->blob_bytes, &rq, out, c->ldc, ws, bytes);
    case K_F32:
        if (how == 2)
            return qmx_matmul_i8_f32_run(c->M, c->N, c->K, c->A, c->lda, c->B, c->ldb,
                                         (float *)out, c->ldc, &c->sc, tb, te, ws, bytes);
        if (how == 1) return QMX_ERR_UNSUPPORTED; /* no executor field in its scales */
        return qmx_matmul_i8_f32(c->M, c->N, c->K, c->A, c->lda, c->B, c->ldb, (float *)out,
                                 c->ldc, &c->sc, ws, bytes);
    case K_F32P:
        if (how == 2)
            return qmx_matmul_i8_f32_packed_run(c->M, c->N, c->K, c->A, c->lda, c->blob,
                                                c->blob_bytes, (float *)out, c->ldc, &c->sc, tb,
                                                te, ws, bytes);
        if (how == 1) return QMX_ERR_UNSUPPORTED;
        return qmx_matmul_i8_f32_packed(c->M, c->N, c->K, c->A, c->lda, c->blob, c->blob_bytes,
                                        (float *)out, c->ldc, &c->sc, ws, bytes);
    case K_I4:
        if (how == 2)
            return qmx_matmul_i4_run(c->M, c->N, c->K, c->A, c->lda, (const uint8_t *)c->B,
                                     c->ldb, (int32_t *)out, c->ldc, &c->p4, tb, te, ws, bytes);
        if (how == 1) return QMX_ERR_UNSUPPORTED;
        return qmx_matmul_i4(c->M, c->N, c->K, c->A, c->lda, (const uint8_t *)c->B, c->ldb,
                             (int32_t *)out, c->ldc, &c->p4, ws, bytes);
    case K_I4F:
        if (how == 2)
            return qmx_matmul_i4_f32_run(c->M, c->N, c->K, c->A, c->lda, (const uint8_t *)c->B,
                                         c->ldb, (float *)out, c->ldc, &c->p4, tb, te, ws, bytes);
        if (how == 1) return QMX_ERR_UNSUPPORTED;
        return qmx_matmul_i4_f32(c->M, c->N, c->K, c->A, c->lda, (const uint8_t *)c->B, c->ldb,
                                 (float *)out, c->ldc, &c->p4, ws, bytes);
    case K_FC4:
        if (how == 2)
            return qmx_fully_connected_i4_run(c->M, c->N, c->K, c->A, c->lda, c->a_zp,
                                              (const uint8_t *)c->B, c->ldb, &rq, out, c->ldc,
                                              tb, te, ws, bytes);
        return qmx_fully_connected_i4(c->M, c->N, c->K, c->A, c->lda, c->a_zp,
                                      (const uint8_t *)c->B, c->ldb, &rq, out, c->ldc, ws, bytes);
    case K_FP8:
        if (how == 2)
            return qmx_matmul_fp8_f32_run(c->M, c->N, c->K, (const uint8_t *)c->A, c->lda,
                                          (const uint8_t *)c->B, c->ldb, (float *)out, c->ldc,
                                          &c->p8, tb, te, ws, bytes);
        if (how == 1) return QMX_ERR_UNSUPPORTED;
        return qmx_matmul_fp8_f32(c->M, c->N, c->K, (const uint8_t *)c->A, c->lda,
                                  (const uint8_t *)c->B, c->ldb, (float *)out, c->ldc, &c->p8,
                                  ws, bytes);
    case K_BPD:
        if (how == 2)
            return qmx_matmul_blockw_packed_dyn_i8_run(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                                       c->blob_bytes, c->bwo, (float *)out,
                                                       c->ldc, tb, te, ws, bytes);
        if (how == 1)
            return qmx_matmul_blockw_packed_dyn_i8_exec(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                                        c->blob_bytes, c->bwo, (float *)out,
                                                        c->ldc, ex, ws, bytes);
        return qmx_matmul_blockw_packed_dyn_i8(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                               c->blob_bytes, c->bwo, (float *)out, c->ldc, ws,
                                               bytes);
    case K_BPF:
        if (how == 2)
            return qmx_matmul_blockw_packed_f32_run(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                                    c->blob_bytes, (float *)out, c->ldc, tb, te,
                                                    ws, bytes);
        if (how == 1)
            return qmx_matmul_blockw_packed_f32_exec(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                                     c->blob_bytes, (float *)out, c->ldc, ex, ws,
                                                     bytes);
        return qmx_matmul_blockw_packed_f32(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                            c->blob_bytes, (float *)out, c->ldc, ws, bytes);
    case K_BWD:
        if (how == 2)
            return qmx_matmul_blockw_dyn_i8_run(c->M, c->N, c->K, c->X, c->lda, c->bw, c->bwo,
                                                (float *)out, c->ldc, tb, te, ws, bytes);
        if (how == 1)
            return qmx_matmul_blockw_dyn_i8_exec(c->M, c->N, c->K, c->X, c->lda, c->bw, c->bwo,
                                                 (float *)out, c->ldc, ex, ws, bytes);
        return qmx_matmul_blockw_dyn_i8(c->M, c->N, c->K, c->X, c->lda, c->bw, c->bwo,
                                        (float *)out, c->ldc, ws, bytes);
    case K_BWF:
        if (how == 2)
            return qmx_matmul_blockw_f32_run(c->M, c->N, c->K, c->X, c->lda, c->bw, (float *)out,
                                             c->ldc, tb, te, ws, bytes);
        if (how == 1)
            return qmx_matmul_blockw_f32_exec(c->M, c->N, c->K, c->X, c->lda, c->bw,
                                              (float *)out, c->ldc, ex, ws, bytes);
        return qmx_matmul_blockw_f32(c->M, c->N, c->K, c->X, c->lda, c->bw, (float *)out, c->ldc,
                                     ws, bytes);
    case K_S16:
        if (how == 2)
            return qmx_fully_connected_i16_run(c->M, c->N, c->K, c->A16, c->lda, c->B, c->ldb,
                                               c->a_zp, &c->rq64, (int16_t *)out, c->ldc, tb,
                                               te, ws, bytes);
        if (how == 1)
            return qmx_fully_connected_i16_exec(c->M, c->N, c->K, c->A16, c->lda, c->B, c->ldb,
                                                c->a_zp, &c->rq64, (int16_t *)out, c->ldc, ex,
                                                ws, bytes);
        return qmx_fully_connected_i16(c->M, c->N, c->K, c->A16, c->lda, c->B, c->ldb, c->a_zp,
                                       &c->rq64, (int16_t *)out, c->ldc, ws, bytes);
    case K_S16P:
        if (how == 2)
            return qmx_fully_connected_i16_packed_run(c->M, c->N, c->K, c->A16, c->lda, c->blob,
                                                      c->blob_bytes, c->a_zp, &c->rq64,
                                                      (int16_t *)out, c->ldc, tb, te, ws, bytes);
        if (how == 1)
            return qmx_fully_connected_i16_packed_exec(c->M, c->N, c->K, c->A16, c->lda, c->blob,
                                                       c->blob_bytes, c->a_zp, &c->rq64,
                                                       (int16_t *)out, c->ldc, ex, ws, bytes);
        return qmx_fully_connected_i16_packed(c->M, c->N, c->K, c->A16, c->lda, c->blob,
                                              c->blob_bytes, c->a_zp, &c->rq64, (int16_t *)out,
                                              c->ldc, ws, bytes);
    case K_MX8:   /* no workspace */
        (void)ws; (void)bytes;
        if (how == 2)
            return qmx_matmul_mxfp8_f32_run(c->M, c->N, c->K, c->bwa, c->bw, (float *)out,
                                            c->ldc, tb, te);
        if (how == 1)
            return qmx_matmul_mxfp8_f32_exec(c->M, c->N, c->K, c->bwa, c->bw, (float *)out,
                                             c->ldc, ex);
        return qmx_matmul_mxfp8_f32(c->M, c->N, c->K, c->bwa, c->bw, (float *)out, c->ldc);
    case K_BMM:
        if (how == 2)
            return qmx_batch_matmul_i16_run(c->batch, c->M, c->N, c->K, c->A16, c->lda, c->xbs,
                                            c->adj_x, c->Y16, c->ldb, c->ybs, c->adj_y,
                                            &c->rq64, (int16_t *)out, c->ldc, c->obs, tb, te,
                                            ws, bytes);
        if (how == 1)
            return qmx_batch_matmul_i16_exec(c->batch, c->M, c->N, c->K, c->A16, c->lda,
                                             c->xbs, c->adj_x, c->Y16, c->ldb, c->ybs,
                                             c->adj_y, &c->rq64, (int16_t *)out, c->ldc, c->obs,
                                             ex, ws, bytes);
        return qmx_batch_matmul_i16(c->batch, c->M, c->N, c->K, c->A16, c->lda, c->xbs,
                                    c->adj_x, c->Y16, c->ldb, c->ybs, c->adj_y, &c->rq64,
                                    (int16_t *)out, c->ldc, c->obs, ws, bytes);
    default:
        if (how == 2)
            return qmx_matmul_f32_dyn_i8_run(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                             c->blob_bytes, c->w_scales, c->w_scales_len,
                                             (float *)out, c->ldc, tb, te, ws, bytes);
        if (how == 1)
            return qmx_matmul_f32_dyn_i8_exec(c->M, c->N, c->K, c->X, c->lda, c->blob,
                                              c->blob_bytes, c->w_scales, c->w_scales_len,
                                              (float *)out, c->ldc, ex, ws, bytes);
        return qmx_matmul_f32_dyn_i8(c->M, c->N, c->K, c->X, c->lda, c->blob, c->blob_bytes,
                                     c->w_scales, c->w_scales_len, (float *)out, c->ldc, ws,
                                     bytes);
    }
}
static int has_exec(const par_case *c) {
    return c->kind != K_F32 && c->kind != K_F32P && c->kind != K_I4 && c->kind != K_I4F &&
           c->kind != K_FP8;
}

/* Buffers, allocated once for the largest shape. */
static unsigned char *g_ref, *g_out, *g_ws;
static size_t g_out_bytes, g_ws_bytes;

static size_t out_bytes(const par_case *c) {
    if (c->kind == K_BMM) return c->batch * c->obs * out_esize(c);   /* obs >= M * ldc */
    return c->M * c->ldc * out_esize(c);
}
/* the tasks of a case: qmx_matmul_tasks, batch x that for qmx_batch_matmul_i16 */
static qmx_status case_tasks(const par_case *c, size_t *nt) {
    if (c->kind == K_BMM) return qmx_batch_matmul_i16_tasks(c->batch, c->M, c->N, nt);
    return qmx_matmul_tasks(c->M, c->N, nt);
}
static void out_fill(void *o, size_t n) { memset(o, 0xA5, n); }
static int out_untouched(const par_case *c) {
    size_t i, n = out_bytes(c);
    for (i = 0; i < n; i++)
        if (g_out[i] != 0xA5) return 0;
    return 1;
}

static par_pool g_pool;

/* A range call per task on the test executor's threads: how the range-only entry points
 * (and any caller's own pool) use several cores. Each worker has its own workspace slice and
 * failure flag. */
typedef struct range_job {
    const par_case *c;
    unsigned char *out;
    size_t slice;
    unsigned char bad[PAR_MAX_WORKERS];
} range_job;
static void range_task(void *arg, int task, int worker) {
    range_job *j = (range_job *)arg;
    if (par_do(j->c, 2, NULL, (size_t)task, (size_t)task + 1, j->out,
               g_ws + (size_t)worker * j->slice, j->slice) != QMX_OK)
        j->bad[worker] = 1;
}

/* Every worker count through the executor and the range calls, against the serial call. */
static void check_case(const par_case *c, const char *shape) {
    const int *workers = par_wlist;
    size_t ob = out_bytes(c), need = 0, tile = tile_ws(c), nt = 0, t, total = 0;
    qmx_status st;
    int wi;
    CHECK(ob <= g_out_bytes, "%s %s: output buffer too small", kind_name[c->kind], shape);
    if (ob > g_out_bytes) return;
    CHECK(case_tasks(c, &nt) == QMX_OK && nt >= 1 && nt <= PAR_MAX_TASKS,
          "%s %s: qmx_matmul_tasks", kind_name[c->kind], shape);
    (void)ws_size(c, c->M, c->N, &need);
    out_fill(g_ref, ob);
    st = par_do(c, 0, NULL, 0, 0, g_ref, g_ws, need);
    CHECK_EQ_INT(st, QMX_OK, "%s %s: serial call", kind_name[c->kind], shape);

    /* PAR_SMALL (emulated targets, valgrind: one thread): the executor with 3 workers, the
     * range calls on 3; 1 worker (the serial call itself) and 8 (more than the tasks) are the
     * same C on every target, run natively and under TSan */
    for (wi = 0; wi < PAR_NW && has_exec(c); wi++) {
        qmx_executor ex = QMX_ZERO_INIT;
        int calls0 = g_pool.calls, tasks0 = g_pool.tasks;
        if (PAR_SMALL && workers[wi] == 8) continue;
        if (PAR_SMALL && !PAR_THREADS && workers[wi] == 1) continue;
        ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = workers[wi];
        par_workers_now = workers[wi];
        CHECK(qmx_par_workspace_size(&ex, need, tile, &total) == QMX_OK && total <= g_ws_bytes,
              "%s %s: qmx_par_workspace_size", kind_name[c->kind], shape);
        out_fill(g_out, ob);
        st = par_do(c, 1, &ex, 0, 0, g_out, g_ws, total);
        CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
              "%s %s, %d workers: status %d, output differs from the serial call",
              kind_name[c->kind], shape, workers[wi], (int)st);
        if (workers[wi] >= 2 && nt > 1)
            CHECK(g_pool.calls == calls0 + 1 && g_pool.tasks == tasks0 + (int)nt,
                  "%s %s, %d workers: %d calls, %d tasks (want 1, %d)", kind_name[c->kind],
                  shape, workers[wi], g_pool.calls - calls0, g_pool.tasks - tasks0, (int)nt);
        else
            CHECK(g_pool.calls == calls0, "%s %s: parallel_for called for %d workers, %d tasks",
                  kind_name[c->kind], shape, workers[wi], (int)nt);
    }

    /* range calls, one per task, on 1..8 threads in a shuffled order (on one thread this is
     * the single-task pass below with a larger workspace: threads only) */
    for (wi = 0; wi < PAR_NW && PAR_THREADS; wi++) {
        range_job j;
        int k, bad = 0;
        if (PAR_SMALL && workers[wi] != 3) continue;
        memset(&j, 0, sizeof j);
        j.c = c; j.out = g_out; j.slice = g_ws_bytes / PAR_MAX_WORKERS;
        par_workers_now = workers[wi];
        out_fill(g_out, ob);
        par_for(&g_pool, (int)nt, range_task, &j);
        for (k = 0; k < PAR_MAX_WORKERS; k++) bad |= j.bad[k];
        CHECK(tile <= j.slice && !bad && memcmp(g_out, g_ref, ob) == 0,
              "%s %s: range calls on %d threads differ from the serial call", kind_name[c->kind],
              shape, workers[wi]);
    }

    /* range calls: every task alone, shuffled, with exactly the tile workspace */
    out_fill(g_out, ob);
    par_shuffle(par_order, (int)nt);
    for (t = 0, st = QMX_OK; t < nt && st == QMX_OK; t++)
        st = par_do(c, 2, NULL, (size_t)par_order[t], (size_t)par_order[t] + 1, g_out, g_ws, tile);
    CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
          "%s %s: single-task range calls in a shuffled order: status %d", kind_name[c->kind],
          shape, (int)st);
    /* uneven contiguous ranges, last first, each with its own (ample) workspace */
    for (wi = 1; wi < PAR_NW; wi++) {
        size_t cut[PAR_MAX_WORKERS + 1];
        int w = workers[wi], k;
        if (PAR_SMALL && w != 3) continue;
        cut[0] = 0; cut[w] = nt;
        for (k = 1; k < w; k++) cut[k] = (size_t)qmx_test_rand_range(cut[k - 1], nt);
        out_fill(g_out, ob);
        for (k = w - 1, st = QMX_OK; k >= 0 && st == QMX_OK; k--) {
            size_t slice = g_ws_bytes / (size_t)w;
            st = par_do(c, 2, NULL, cut[k], cut[k + 1], g_out, g_ws + (size_t)k * slice,
                        k & 1 ? tile : slice);
        }
        CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
              "%s %s: %d uneven ranges: status %d", kind_name[c->kind], shape, w, (int)st);
    }

    /* bad calls: a status each, the output untouched, no task run */
    {
        qmx_executor ex = QMX_ZERO_INIT;
        int calls0;
        ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 2;
        par_workers_now = 2;
        out_fill(g_out, ob);
        st = par_do(c, 2, NULL, 0, nt + 1, g_out, g_ws, tile);
        CHECK(st == QMX_ERR_ARG && out_untouched(c), "%s %s: range past the tasks: %d",
              kind_name[c->kind], shape, (int)st);
        st = par_do(c, 2, NULL, nt, nt - 1, g_out, g_ws, tile);
        CHECK(st == QMX_ERR_ARG && out_untouched(c), "%s %s: reversed range: %d",
              kind_name[c->kind], shape, (int)st);
        if (tile > 0) {   /* (qmx_matmul_mxfp8_f32: no workspace) */
            st = par_do(c, 2, NULL, 0, nt, g_out, g_ws, tile - 1);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && out_untouched(c),
                  "%s %s: range call, workspace one byte short: %d", kind_name[c->kind], shape,
                  (int)st);
        }
        st = par_do(c, 2, NULL, nt, nt, g_out, g_ws, tile);
        CHECK(st == QMX_OK && out_untouched(c), "%s %s: empty range: %d", kind_name[c->kind],
              shape, (int)st);
        if (has_exec(c)) {
            calls0 = g_pool.calls;
            (void)qmx_par_workspace_size(&ex, need, tile, &total);
            if (tile > 0) {
                st = par_do(c, 1, &ex, 0, 0, g_out, g_ws, total - 1);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && out_untouched(c),
                      "%s %s: executor, workspace one byte short: %d", kind_name[c->kind],
                      shape, (int)st);
            }
            ex.parallel_for = NULL;
            st = par_do(c, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes);
            CHECK(st == QMX_ERR_NULL && out_untouched(c), "%s %s: NULL parallel_for: %d",
                  kind_name[c->kind], shape, (int)st);
            ex.parallel_for = par_for; ex.workers = -1;
            st = par_do(c, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes);
            CHECK(st == QMX_ERR_ARG && out_untouched(c), "%s %s: workers -1: %d",
                  kind_name[c->kind], shape, (int)st);
            CHECK(g_pool.calls == calls0, "%s %s: parallel_for called on a bad call",
                  kind_name[c->kind], shape);
        }
        /* a bad argument of the whole call (ldc < N): found before any task */
        {
            par_case b = *c;
            b.ldc = c->N - 1;
            if (b.ldc > 0) {
                calls0 = g_pool.calls;
                ex.workers = 3; par_workers_now = 3;
                st = par_do(&b, 2, NULL, 0, nt, g_out, g_ws, g_ws_bytes);
                CHECK(st == QMX_ERR_SHAPE && out_untouched(c), "%s %s: ldc < N, range: %d",
                      kind_name[c->kind], shape, (int)st);
                if (has_exec(c)) {
                    st = par_do(&b, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes);
                    CHECK(st == QMX_ERR_SHAPE && out_untouched(c) && g_pool.calls == calls0,
                          "%s %s: ldc < N, executor: %d", kind_name[c->kind], shape, (int)st);
                }
            }
        }
    }
}

/* Data of the largest shape; each case views a prefix. */
#define MAXM 140
#define MAXN 600
#define MAXK 72
static int8_t gA[MAXM * (MAXK + 3)], gB[(MAXN + 5) * (MAXK + 3)];
static uint8_t gA8[MAXM * (MAXK + 3)], gB8[(MAXN + 5) * (MAXK + 3)]; /* finite fp8 codes */
static float gX[MAXM * (MAXK + 3)];
static int32_t gmult[MAXN], gbias[MAXN], gsums[MAXN];
static int gshift[MAXN];
static float gsa[MAXM * 8], gsb[MAXN * 8], gws[MAXN];
static uint8_t gzp[MAXN * 8];

static void run_shape(size_t M, size_t N, size_t K, const char *shape) {
    size_t lda = K + 3, ldb = K + 1, blob_bytes = 0;
    void *blob;
    par_case c;
    int kind, variant;
    CHECK(qmx_matmul_i8_pack_weights_size(N, K, &blob_bytes) == QMX_OK, "pack size");
    blob = malloc(blob_bytes);
    if (!blob) { CHECK(0, "malloc"); return; }
    CHECK(qmx_matmul_i8_pack_weights(gB, N, K, ldb, QMX_B_NK, blob, blob_bytes) == QMX_OK, "pack");
    CHECK(qmx_matmul_i8_weight_sums(gB, N, K, ldb, QMX_B_NK, gsums, N) == QMX_OK, "sums");
    for (kind = 0; kind < K_COUNT; kind++) {
        for (variant = 0; variant < 2; variant++) {
            memset(&c, 0, sizeof c);
            c.kind = kind; c.M = M; c.N = N; c.K = K; c.lda = lda; c.ldb = ldb;
            c.ldc = N + (size_t)variant * 3;
            c.A = gA; c.B = gB; c.X = gX; c.blob = blob; c.blob_bytes = blob_bytes;
            c.opts.a_zp = variant ? -7 : 0; c.opts.b_zp = variant ? 5 : 0;
            if (kind == K_MM && variant) { c.opts.b_sums = gsums; c.opts.b_sums_len = N; }
            c.a_zp = variant ? 11 : -3;
            c.rq.per_channel = 1; c.rq.multipliers = gmult; c.rq.shifts = gshift;
            c.rq.bias = gbias; c.rq.output_zero_point = variant ? 3 : -2;
            c.rq.out_dtype = variant ? QMX_INT16 : QMX_INT8;
            c.rq.weight_zero_point = variant ? -4 : 0;
            if (kind == K_FCP) c.rq.weight_zero_point = variant ? 6 : 0;
            c.sc.a_scales = gsa; c.sc.a_scales_len = MAXM * 8; c.sc.a_per_row = 1;
            c.sc.a_zp = variant ? 9 : 0;
            c.sc.b_scales = gsb; c.sc.b_scales_len = MAXN * 8; c.sc.b_per_col = 1;
            c.sc.block_size = variant ? 16 : K;
            c.w_scales = gws; c.w_scales_len = variant ? 1 : N;
            if (kind == K_I4 || kind == K_I4F || kind == K_FC4) { /* int4 W: gB's bytes */
                c.ldb = variant ? K + 1 : K; /* odd: the nibble-by-index path */
                c.rq.weight_zero_point = variant ? -3 : 0;
                c.p4.a_zp = variant ? 3 : -5;
                c.p4.block_size = variant ? 16 : 0;
                if (variant && kind != K_FC4) {
                    c.p4.a_dtype = QMX_INT4; /* gA's bytes as packed int4 */
                    c.p4.w_dtype = QMX_UINT4; c.p4.w_zps = gzp; c.p4.w_zps_len = MAXN * 8;
                }
                c.p4.a_scales = gsa; c.p4.a_scales_len = MAXM * 8; c.p4.a_per_row = 1;
                c.p4.w_scales = gsb; c.p4.w_scales_len = MAXN * 8; c.p4.w_per_col = 1;
            }
            if (kind == K_FP8) {
                c.A = (const int8_t *)(const void *)gA8; c.B = (const int8_t *)(const void *)gB8;
                c.p8.a_fmt = variant ? QMX_FP8_E5M2 : QMX_FP8_E4M3FN;
                c.p8.b_fmt = QMX_FP8_E4M3FN;
                c.p8.a_scales = gsa; c.p8.a_scales_len = variant ? 1 : M; c.p8.a_per_row = !variant;
                c.p8.b_scales = gsb; c.p8.b_scales_len = variant ? 1 : N; c.p8.b_per_col = !variant;
            }
            check_case(&c, shape);
        }
        if (kind == K_MM) { /* B as [K,N] */
            static int8_t bkn[MAXK * (MAXN + 2)];
            size_t n, k;
            for (k = 0; k < K; k++)
                for (n = 0; n < N; n++) bkn[k * (N + 2) + n] = gB[n * ldb + k];
            memset(&c, 0, sizeof c);
            c.kind = K_MM; c.M = M; c.N = N; c.K = K; c.lda = lda; c.ldb = N + 2; c.ldc = N;
            c.A = gA; c.B = bkn; c.opts.b_layout = QMX_B_KN; c.opts.a_zp = 3; c.opts.b_zp = -1;
            check_case(&c, shape);
        }
    }
    /* a NaN in the last row of X: the executor finds it before any task; a range call finds
     * it in its own rows only */
    {
        size_t nt = 0, need = 0, tile;
        qmx_executor ex = QMX_ZERO_INIT;
        qmx_status st;
        float keep = gX[(M - 1) * lda + K / 2];
        memset(&c, 0, sizeof c);
        c.kind = K_DYN; c.M = M; c.N = N; c.K = K; c.lda = lda; c.ldc = N; c.X = gX;
        c.blob = blob; c.blob_bytes = blob_bytes; c.w_scales = gws; c.w_scales_len = N;
        (void)qmx_matmul_tasks(M, N, &nt);
        (void)ws_size(&c, M, N, &need);
        tile = tile_ws(&c);
        gX[(M - 1) * lda + K / 2] = qmx_test_bits_f32(0x7FC00000u);
        ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 2; par_workers_now = 2;
        out_fill(g_out, out_bytes(&c));
        st = par_do(&c, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes);
        CHECK(st == QMX_ERR_NONFINITE && out_untouched(&c), "dyn %s: NaN row, executor: %d",
              shape, (int)st);
        st = par_do(&c, 2, NULL, nt - 1, nt, g_out, g_ws, tile);
        CHECK(st == QMX_ERR_NONFINITE && out_untouched(&c), "dyn %s: NaN row, its range: %d",
              shape, (int)st);
        st = par_do(&c, 0, NULL, 0, 0, g_out, g_ws, need);
        CHECK(st == QMX_ERR_NONFINITE && out_untouched(&c), "dyn %s: NaN row, serial: %d",
              shape, (int)st);
        gX[(M - 1) * lda + K / 2] = keep;
    }
    /* a NaN code (E4M3FN 0x7F) in the last row of the fp8 A: found by the serial call and by
     * the range call of that row's tasks, before anything is written */
    {
        size_t nt = 0, need = 0;
        qmx_status st;
        uint8_t keep = gA8[(M - 1) * lda + K - 1];
        memset(&c, 0, sizeof c);
        c.kind = K_FP8; c.M = M; c.N = N; c.K = K; c.lda = lda; c.ldb = ldb; c.ldc = N;
        c.A = (const int8_t *)(const void *)gA8; c.B = (const int8_t *)(const void *)gB8;
        c.p8.a_scales = gsa; c.p8.a_scales_len = 1; c.p8.b_scales = gsb; c.p8.b_scales_len = 1;
        (void)qmx_matmul_tasks(M, N, &nt);
        (void)ws_size(&c, M, N, &need);
        gA8[(M - 1) * lda + K - 1] = 0x7F;
        out_fill(g_out, out_bytes(&c));
        st = par_do(&c, 2, NULL, nt - 1, nt, g_out, g_ws, g_ws_bytes);
        CHECK(st == QMX_ERR_NONFINITE && out_untouched(&c), "fp8 %s: NaN row, its range: %d",
              shape, (int)st);
        st = par_do(&c, 0, NULL, 0, 0, g_out, g_ws, need);
        CHECK(st == QMX_ERR_NONFINITE && out_untouched(&c), "fp8 %s: NaN row, serial: %d",
              shape, (int)st);
        gA8[(M - 1) * lda + K - 1] = keep;
    }
    free(blob);
}

/* ---- the block-weight blobs (PREPACKED BLOCK WEIGHTS): every blob kind, both kernels ---- */
enum { BW_Q8_0, BW_Q4_0, BW_Q4_1, BW_MXFP4, BW_NVFP4, BW_E4M3, BW_E5M2, BW_KINDS };
static const char *const bw_name[BW_KINDS] = {"Q8_0", "Q4_0", "Q4_1", "MXFP4 (ggml)",
                                              "NVFP4 (tensor scale)", "MXFP8 E4M3", "MXFP8 E5M2"};

/* A blob of kind k for [N][K] from random codes and scales (ggml kinds: K a multiple of 32;
 * NVFP4 and MXFP8 through qmx_blockw_pack, any K), malloc'ed; NULL on failure. */
static uint8_t *bw_blob(int k, size_t N, size_t K, size_t *bytes) {
    static const int gt[4] = {QMX_BLOCKW_GGML_Q8_0, QMX_BLOCKW_GGML_Q4_0, QMX_BLOCKW_GGML_Q4_1,
                              QMX_BLOCKW_GGML_MXFP4};
    static const size_t gb[4] = {34, 18, 20, 17};
    uint8_t *blob = NULL, *in, *codes = NULL;
    size_t i, j, eb = 0, ns = 0;
    *bytes = 0;
    if (k < BW_NVFP4) {   /* rows of ggml blocks */
        size_t nb = N * (K / 32);
        in = (uint8_t *)malloc(nb * gb[k]);
        if (!in) return NULL;
        for (i = 0; i < nb; i++) {
            uint8_t *b = in + i * gb[k];
            uint16_t d = qmx_f32_to_f16(0.001f + (float)(qmx_test_rand() % 1000u) * 1e-5f);
            for (j = 0; j < gb[k]; j++) b[j] = (uint8_t)qmx_test_rand();
            if (k == BW_MXFP4) { b[0] = (uint8_t)(118 + qmx_test_rand() % 12u); continue; }
            b[0] = (uint8_t)d; b[1] = (uint8_t)(d >> 8);
            if (k == BW_Q4_1) {
                uint16_t m = qmx_f32_to_f16((float)((int)(qmx_test_rand() % 201u) - 100) * 1e-4f);
                b[2] = (uint8_t)m; b[3] = (uint8_t)(m >> 8);
            }
        }
        if (qmx_blockw_pack_ggml_size(gt[k], N, K, bytes) == QMX_OK &&
            (blob = (uint8_t *)malloc(*bytes)) != NULL &&
            qmx_blockw_pack_ggml(gt[k], in, nb * gb[k], N, K, blob, *bytes) != QMX_OK) {
            free(blob);
            blob = NULL;
        }
        free(in);
        return blob;
    }
    {
        qmx_mx_config cfg;
        qmx_blockw w;
        memset(&cfg, 0, sizeof cfg);
        memset(&w, 0, sizeof w);
        cfg.format = k == BW_NVFP4 ? QMX_NVFP4 : k == BW_E4M3 ? QMX_MXFP8_E4M3 : QMX_MXFP8_E5M2;
        cfg.rule = QMX_MX_FLOOR;
        cfg.tensor_scale = k == BW_NVFP4 ? 0.0123f : 0.0f;
        cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
        if (qmx_mx_storage(&cfg, N * K, &eb, &ns) != QMX_OK) return NULL;
        in = (uint8_t *)malloc(eb + 1);
        codes = (uint8_t *)malloc(ns + 1);
        if (in && codes) {
            for (i = 0; i < eb; i++) {
                uint8_t cd = (uint8_t)qmx_test_rand();
                if (k != BW_NVFP4 && ((cd & 0x7F) == 0x7F || (k == BW_E5M2 && (cd & 0x7C) == 0x7C)))
                    cd = (uint8_t)(cd & 0xBB);   /* finite elements */
                in[i] = cd;
            }
            for (i = 0; i < ns; i++)
                codes[i] = (uint8_t)(k == BW_NVFP4 ? 0x20 + qmx_test_rand() % 0x40u
                                                   : 110 + qmx_test_rand() % 30u);
            w.kind = QMX_BLOCKW_MX; w.mx = &cfg; w.data = in; w.data_bytes = eb;
            w.scale_codes = codes; w.n_scales = ns;
            if (qmx_blockw_pack_size(&w, N, K, bytes) == QMX_OK &&
                (blob = (uint8_t *)malloc(*bytes)) != NULL &&
                qmx_blockw_pack(&w, N, K, blob, *bytes) != QMX_OK) {
                free(blob);
                blob = NULL;
            }
        }
        free(in);
        free(codes);
        return blob;
    }
}

/* qmx_matmul_blockw_packed_dyn_i8 / _f32 _run and _exec: every blob kind on 1 task, 2 tasks
 * (fewer than the workers) and ragged row and column tiles; act_block 0, 32 and 64; bad blobs;
 * a NaN activation row. */
static void blockw_cases(void) {
#if PAR_SMALL && (defined(__riscv_vector) || QMX_TEST_SMALL_TARGET)   /* RVV, Cortex-M: slowest */
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 264, 32}, {65, 257, 64}};
#elif PAR_SMALL
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 300, 96}, {66, 270, 64}};
#else
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 300, 160}, {140, 530, 128}};
#endif
    static const char *const shn[3] = {"1 task", "2 tasks", "ragged tiles"};
    const size_t maxm = shp[2][0], maxk = 160 + 3;
    qmx_blockw_dyn_opts ab[2];
    float *X = (float *)malloc(maxm * maxk * sizeof(float));
    size_t i;
    int s, k;
    if (!X) { CHECK(0, "malloc"); return; }
    for (i = 0; i < maxm * maxk; i++)
        X[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.00037f;
    ab[0].act_block = 32; ab[1].act_block = 64;
    for (s = 0; s < 3; s++) {
        for (k = 0; k < BW_KINDS; k++) {
            size_t M = shp[s][0], N = shp[s][1], K = shp[s][2], bytes = 0, nt = 0;
            /* NVFP4 / MXFP8 rows with a ragged last block: K + 8 */
            size_t Kk = k >= BW_NVFP4 && s > 0 ? K + 8 : K;
            uint8_t *blob = bw_blob(k, N, Kk, &bytes);
            char shape[96];
            par_case c;
            snprintf(shape, sizeof shape, "%s, %s (%ux%ux%u)", bw_name[k], shn[s], (unsigned)M,
                     (unsigned)N, (unsigned)Kk);
            CHECK(blob != NULL, "%s: blob", shape);
            if (!blob) continue;
            memset(&c, 0, sizeof c);
            c.kind = K_BPD; c.M = M; c.N = N; c.K = Kk; c.lda = Kk + 3;
            c.ldc = N + (size_t)(k & 1) * 3; c.X = X; c.blob = blob; c.blob_bytes = bytes;
            c.bwo = (k + s) % 3 == 0 ? NULL : &ab[(k + s) % 3 - 1];
#if PAR_SMALL && (defined(__riscv_vector) || QMX_TEST_SMALL_TARGET)
            /* RVV (QEMU runs it element by element), Cortex-M: the ragged-tiles shape runs
             * every third kind (the tiling is the same C for all; each kind's kernel is
             * test_blockw_packed's), the bad blobs below every kind */
            if (s < 2 || k % 3 == 0)
#endif
            {
                check_case(&c, shape);
                c.kind = K_BPF; c.bwo = NULL;
                check_case(&c, shape);
            }
            c.kind = K_BPF; c.bwo = NULL;
            (void)qmx_matmul_tasks(M, N, &nt);
            /* bad blobs: the status of the whole call, before any task, output untouched */
            if (s == 2) {
                uint8_t *bad = (uint8_t *)malloc(bytes);
                qmx_executor ex = QMX_ZERO_INIT;
                int kd, calls0 = g_pool.calls;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 2; par_workers_now = 2;
                if (!bad) { CHECK(0, "malloc"); free(blob); continue; }
                memcpy(bad, blob, bytes);
                bad[3] ^= 0x20;   /* the magic */
                for (kd = K_BPD; kd <= K_BPF; kd++) {
                    par_case b = c;
                    b.kind = kd; b.bwo = NULL;
                    out_fill(g_out, out_bytes(&b));
                    b.blob = bad;
                    CHECK(par_do(&b, 2, NULL, 0, nt, g_out, g_ws, g_ws_bytes) == QMX_ERR_PARSE &&
                          par_do(&b, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes) == QMX_ERR_PARSE &&
                          par_do(&b, 2, NULL, nt - 1, nt, g_out, g_ws, g_ws_bytes) ==
                              QMX_ERR_PARSE &&
                          out_untouched(&b), "%s %s: bad magic", kind_name[kd], shape);
                    b.blob = blob; b.blob_bytes = bytes - 1;
                    CHECK(par_do(&b, 2, NULL, 0, 1, g_out, g_ws, g_ws_bytes) ==
                              QMX_ERR_BUFFER_TOO_SMALL &&
                          par_do(&b, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes) ==
                              QMX_ERR_BUFFER_TOO_SMALL && out_untouched(&b),
                          "%s %s: blob one byte short", kind_name[kd], shape);
                    b.blob_bytes = bytes; b.N = N - 16; /* not the blob's N */
                    CHECK(par_do(&b, 2, NULL, 0, 1, g_out, g_ws, g_ws_bytes) == QMX_ERR_SHAPE &&
                          par_do(&b, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes) == QMX_ERR_SHAPE &&
                          out_untouched(&c), "%s %s: N not the blob's", kind_name[kd], shape);
                    if (kd == K_BPD) { /* act_block not a multiple of 32 */
                        qmx_blockw_dyn_opts o;
                        o.act_block = 48;
                        b.N = N; b.bwo = &o;
                        CHECK(par_do(&b, 2, NULL, 0, 1, g_out, g_ws, g_ws_bytes) ==
                                  QMX_ERR_UNSUPPORTED &&
                              par_do(&b, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes) ==
                                  QMX_ERR_UNSUPPORTED && out_untouched(&b),
                              "%s %s: act_block 48", kind_name[kd], shape);
                    }
                }
                CHECK(g_pool.calls == calls0, "%s: parallel_for called on a bad blob", shape);
                free(bad);
            }
            /* a NaN in the last row of X (dyn): the executor and every range that holds that
             * row find it before writing (a range over both rows of tiles included); a range
             * of the first row of tiles does not read it */
            if (s == 2 && (k == BW_Q4_0 || k == BW_NVFP4)) {
                size_t nc = (N + QMX_TASK_N - 1) / QMX_TASK_N, tile = 0, need = 0;
                float keep = X[(M - 1) * c.lda + 5];
                qmx_executor ex = QMX_ZERO_INIT;
                int calls0 = g_pool.calls;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 3; par_workers_now = 3;
                c.kind = K_BPD; c.bwo = NULL;
                tile = tile_ws(&c);
                (void)ws_size(&c, M, N, &need);
                X[(M - 1) * c.lda + 5] = qmx_test_bits_f32(0x7FC00000u);
                out_fill(g_out, out_bytes(&c));
                CHECK(par_do(&c, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes) == QMX_ERR_NONFINITE &&
                      g_pool.calls == calls0 && out_untouched(&c), "%s: NaN row, executor", shape);
                CHECK(par_do(&c, 2, NULL, 0, nt, g_out, g_ws, tile) == QMX_ERR_NONFINITE &&
                      out_untouched(&c), "%s: NaN row, all tasks, tile workspace", shape);
                CHECK(par_do(&c, 2, NULL, nc - 1, nt, g_out, g_ws, tile) == QMX_ERR_NONFINITE &&
                      out_untouched(&c), "%s: NaN row, a range from the last tile of row 0", shape);
                CHECK(par_do(&c, 2, NULL, nt - 1, nt, g_out, g_ws, tile) == QMX_ERR_NONFINITE &&
                      out_untouched(&c), "%s: NaN row, its task", shape);
                CHECK(par_do(&c, 0, NULL, 0, 0, g_out, g_ws, need) == QMX_ERR_NONFINITE &&
                      out_untouched(&c), "%s: NaN row, serial", shape);
                CHECK(nt > nc && par_do(&c, 2, NULL, 0, nc, g_out, g_ws, tile) == QMX_OK &&
                      !out_untouched(&c), "%s: NaN row elsewhere: the first row of tiles", shape);
                X[(M - 1) * c.lda + 5] = keep;
            }
            free(blob);
        }
    }
    free(X);
}

/* ---- unpacked block-scaled weights (BLOCK-SCALED WEIGHTS): qmx_blockw of every storage ---- */
enum { UW_QC4, UW_MXFP4, UW_MXFP6, UW_NVFP4, UW_E4M3, UW_KINDS };
static const char *const uw_name[UW_KINDS] = {"qconfig uint4+zp / 32", "MXFP4", "MXFP6 E2M3",
                                              "NVFP4", "MXFP8 E4M3"};
typedef struct uw_set {
    qmx_blockw w;
    qmx_mx_config mx;
    qmx_qconfig qc;
    uint8_t *data, *codes;
    float *sc;
    int32_t *zp;
} uw_set;

/* Weights [N][K] of kind k from random codes and scales; 0 on failure. */
static int uw_make(uw_set *u, int k, size_t N, size_t K) {
    size_t eb = 0, ns = 0, i;
    memset(u, 0, sizeof *u);
    if (k == UW_QC4) {
        eb = (N * K + 1) / 2; ns = N * ((K + 31) / 32);
        u->qc.dtype = QMX_UINT4; u->qc.granularity = QMX_PER_BLOCK;
        u->qc.outer = N; u->qc.axis_len = K; u->qc.inner = 1; u->qc.block_size = 32;
        u->qc.asymmetric = 1; u->qc.recipe = QMX_RECIPE_TFLITE;
        u->sc = (float *)malloc(ns * sizeof(float));
        u->zp = (int32_t *)malloc(ns * sizeof(int32_t));
        if (!u->sc || !u->zp) return 0;
        for (i = 0; i < ns; i++) {
            u->sc[i] = 0.001f + (float)(qmx_test_rand() % 1000u) * 1e-4f;
            u->zp[i] = (int32_t)(qmx_test_rand() % 16u);
        }
        u->w.kind = QMX_BLOCKW_QCONFIG; u->w.qc = &u->qc; u->w.scales = u->sc;
        u->w.zero_points = u->zp;
    } else {
        u->mx.format = k == UW_MXFP4 ? QMX_MXFP4 : k == UW_MXFP6 ? QMX_MXFP6_E2M3
                     : k == UW_NVFP4 ? QMX_NVFP4 : QMX_MXFP8_E4M3;
        u->mx.rule = QMX_MX_FLOOR;
        u->mx.outer = N; u->mx.axis_len = K; u->mx.inner = 1;
        if (qmx_mx_storage(&u->mx, N * K, &eb, &ns) != QMX_OK) return 0;
        u->codes = (uint8_t *)malloc(ns + 1);
        if (!u->codes) return 0;
        for (i = 0; i < ns; i++)
            u->codes[i] = (uint8_t)(k == UW_NVFP4 ? 0x20 + qmx_test_rand() % 0x40u
                                                  : 110 + qmx_test_rand() % 30u);
        u->w.kind = QMX_BLOCKW_MX; u->w.mx = &u->mx; u->w.scale_codes = u->codes;
    }
    u->data = (uint8_t *)malloc(eb + 1);
    if (!u->data) return 0;
    for (i = 0; i < eb; i++) {
        uint8_t cd = (uint8_t)qmx_test_rand();
        if (k == UW_E4M3 && (cd & 0x7F) == 0x7F) cd = (uint8_t)(cd & 0xBB);   /* finite */
        u->data[i] = cd;
    }
    u->w.data = u->data; u->w.data_bytes = eb; u->w.n_scales = ns;
    return 1;
}
static void uw_free(uw_set *u) { free(u->data); free(u->codes); free(u->sc); free(u->zp); }

/* qmx_matmul_blockw_dyn_i8 / _f32 _run and _exec on every weight storage: 1 task, 2 tasks,
 * ragged tiles (K with a ragged last block); act_block 0 / 32; a bad weight description and a
 * NaN activation row. */
static void blockw_unpacked_cases(void) {
#if PAR_SMALL
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 300, 40}, {66, 270, 40}};
#else
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 300, 72}, {140, 530, 72}};
#endif
    static const char *const shn[3] = {"1 task", "2 tasks", "ragged tiles"};
    const size_t maxm = shp[2][0], maxk = 72 + 3;
    qmx_blockw_dyn_opts ab;
    float *X = (float *)malloc(maxm * maxk * sizeof(float));
    size_t i;
    int s, k;
    if (!X) { CHECK(0, "malloc"); return; }
    for (i = 0; i < maxm * maxk; i++)
        X[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.00037f;
    ab.act_block = 32;
    for (s = 0; s < 3; s++) {
        for (k = 0; k < UW_KINDS; k++) {
            size_t M = shp[s][0], N = shp[s][1], K = shp[s][2], nt = 0;
            uw_set u;
            char shape[96];
            par_case c;
            snprintf(shape, sizeof shape, "%s, %s (%ux%ux%u)", uw_name[k], shn[s], (unsigned)M,
                     (unsigned)N, (unsigned)K);
            if (!uw_make(&u, k, N, K)) { CHECK(0, "%s: weights", shape); uw_free(&u); continue; }
            memset(&c, 0, sizeof c);
            c.kind = K_BWD; c.M = M; c.N = N; c.K = K; c.lda = K + 3;
            c.ldc = N + (size_t)(k & 1) * 3; c.X = X; c.bw = &u.w;
            c.bwo = (k + s) % 2 ? &ab : NULL;
            check_case(&c, shape);
            c.kind = K_BWF; c.bwo = NULL;
            check_case(&c, shape);
            (void)qmx_matmul_tasks(M, N, &nt);
            if (s == 2 && k == UW_QC4) {
                /* a bad weight description (n_scales one short): before any task */
                qmx_executor ex = QMX_ZERO_INIT;
                int kd, calls0 = g_pool.calls;
                size_t nc = (N + QMX_TASK_N - 1) / QMX_TASK_N, tile;
                float keep = X[(M - 1) * c.lda + 3];
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 3; par_workers_now = 3;
                u.w.n_scales--;
                for (kd = K_BWD; kd <= K_BWF; kd++) {
                    par_case b = c;
                    qmx_status s1, s2, s3;
                    b.kind = kd;
                    out_fill(g_out, out_bytes(&b));
                    s1 = par_do(&b, 0, NULL, 0, 0, g_out, g_ws, g_ws_bytes);
                    s2 = par_do(&b, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes);
                    s3 = par_do(&b, 2, NULL, nt - 1, nt, g_out, g_ws, g_ws_bytes);
                    CHECK(s1 != QMX_OK && s2 == s1 && s3 == s1 && out_untouched(&b),
                          "%s %s: n_scales one short: %d %d %d", kind_name[kd], shape, (int)s1,
                          (int)s2, (int)s3);
                }
                u.w.n_scales++;
                CHECK(g_pool.calls == calls0, "%s: parallel_for called on bad weights", shape);
                /* a NaN in the last row of X (dyn) */
                c.kind = K_BWD; c.bwo = NULL;
                tile = tile_ws(&c);
                X[(M - 1) * c.lda + 3] = qmx_test_bits_f32(0x7F800000u);
                out_fill(g_out, out_bytes(&c));
                CHECK(par_do(&c, 1, &ex, 0, 0, g_out, g_ws, g_ws_bytes) == QMX_ERR_NONFINITE &&
                      g_pool.calls == calls0 && out_untouched(&c), "%s: Inf row, executor", shape);
                CHECK(par_do(&c, 2, NULL, nc - 1, nt, g_out, g_ws, tile) == QMX_ERR_NONFINITE &&
                      out_untouched(&c), "%s: Inf row, a range from the last tile of row 0",
                      shape);
                CHECK(nt > nc && par_do(&c, 2, NULL, 0, nc, g_out, g_ws, tile) == QMX_OK &&
                      !out_untouched(&c), "%s: Inf row elsewhere: the first row of tiles", shape);
                X[(M - 1) * c.lda + 3] = keep;
            }
            uw_free(&u);
        }
    }
    free(X);
}

/* ---- qmx_matmul_mxfp8_f32 _run and _exec (no workspace): 1 task, 2 tasks, ragged tiles (K
 * with a ragged last block); a E4M3 or E5M2 (random codes: NaN / Inf elements too) ---- */
static void mx8_cases(void) {
#if PAR_SMALL
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 300, 40}, {66, 270, 40}};
#else
    static const size_t shp[3][3] = {{5, 40, 64}, {3, 300, 72}, {140, 530, 72}};
#endif
    static const char *const shn[3] = {"1 task", "2 tasks", "ragged tiles"};
    int s, v;
    for (s = 0; s < 3; s++) {
        for (v = 0; v < 2; v++) {
            size_t M = shp[s][0], N = shp[s][1], K = shp[s][2], nt = 0;
            uw_set ua, ub;
            char shape[96];
            par_case c;
            snprintf(shape, sizeof shape, "mxfp8 a %s, %s (%ux%ux%u)", v ? "E5M2" : "E4M3",
                     shn[s], (unsigned)M, (unsigned)N, (unsigned)K);
            memset(&ub, 0, sizeof ub);
            if (!uw_make(&ua, UW_E4M3, M, K) || !uw_make(&ub, UW_E4M3, N, K)) {
                CHECK(0, "%s: operands", shape);
                uw_free(&ua); uw_free(&ub);
                continue;
            }
            if (v) ua.mx.format = QMX_MXFP8_E5M2;
            memset(&c, 0, sizeof c);
            c.kind = K_MX8; c.M = M; c.N = N; c.K = K; c.ldc = N + (size_t)v * 3;
            c.bwa = &ua.w; c.bw = &ub.w;
            check_case(&c, shape);
            (void)qmx_matmul_tasks(M, N, &nt);
            if (s == 2 && v == 0) {
                /* bad operands (b's n_scales one short; blocks that differ): before any task */
                qmx_executor ex = QMX_ZERO_INIT;
                int calls0 = g_pool.calls, bad;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 3; par_workers_now = 3;
                for (bad = 0; bad < 2; bad++) {
                    qmx_status s1, s2, s3;
                    if (bad == 0) ub.w.n_scales--; else ua.mx.block_size = 16;
                    out_fill(g_out, out_bytes(&c));
                    s1 = par_do(&c, 0, NULL, 0, 0, g_out, g_ws, 0);
                    s2 = par_do(&c, 1, &ex, 0, 0, g_out, g_ws, 0);
                    s3 = par_do(&c, 2, NULL, nt - 1, nt, g_out, g_ws, 0);
                    CHECK(s1 != QMX_OK && s2 == s1 && s3 == s1 && out_untouched(&c),
                          "%s: bad operands %d: %d %d %d", shape, bad, (int)s1, (int)s2,
                          (int)s3);
                    if (bad == 0) ub.w.n_scales++; else ua.mx.block_size = 0;
                }
                CHECK(g_pool.calls == calls0, "%s: parallel_for called on bad operands", shape);
            }
            uw_free(&ua); uw_free(&ub);
        }
    }
}

/* ---- 16x8: qmx_fully_connected_i16 (+ _packed) _run and _exec ---- */
static int16_t gA16[MAXM * (MAXK + 3)];
static int64_t gbias64[MAXN];
static void s16_shape(size_t M, size_t N, size_t K, const char *shape) {
    size_t ldb = K + 1, blob_bytes = 0, i;
    void *blob;
    par_case c;
    int v;
    CHECK(qmx_matmul_i8_pack_weights_size(N, K, &blob_bytes) == QMX_OK, "pack size");
    blob = malloc(blob_bytes);
    if (!blob) { CHECK(0, "malloc"); return; }
    CHECK(qmx_matmul_i8_pack_weights(gB, N, K, ldb, QMX_B_NK, blob, blob_bytes) == QMX_OK, "pack");
    for (i = 0; i < MAXN; i++) gbias64[i] = (int64_t)gbias[i] * 1000;
    for (v = 0; v < 4; v++) { /* plain / packed x per tensor, no bias, w_zp 0 / per channel */
        memset(&c, 0, sizeof c);
        c.kind = v & 1 ? K_S16P : K_S16; c.M = M; c.N = N; c.K = K; c.lda = K + 3; c.ldb = ldb;
        c.ldc = N + (size_t)(v >> 1) * 3; c.A16 = gA16; c.B = gB;
        c.blob = blob; c.blob_bytes = blob_bytes;
        c.a_zp = v >> 1 ? -3 : 0;
        c.rq64.per_channel = v >> 1; c.rq64.multipliers = gmult; c.rq64.shifts = gshift;
        c.rq64.bias = v >> 1 ? gbias64 : NULL;
        c.rq64.act_min = v >> 1 ? -20000 : 0; c.rq64.act_max = v >> 1 ? 21000 : 0;
        check_case(&c, shape);
    }
    free(blob);
}
static void s16_cases(void) {
    size_t i;
    for (i = 0; i < sizeof gA16 / sizeof gA16[0]; i++)
        gA16[i] = (int16_t)(qmx_test_rand() & 0xFFFFu);
    s16_shape(1, 5, 7, "16x8 1x5x7");
    s16_shape(3, 300, 33, "16x8 3x300x33");
#if PAR_SMALL
    s16_shape(70, 300, 20, "16x8 70x300x20");
#else
    s16_shape(140, 530, 70, "16x8 140x530x70");
#endif
}

/* ---- qmx_batch_matmul_i16 _tasks / _run / _exec: TASKS (batch, tile) ---- */
static void bmm_shape(size_t batch, size_t M, size_t N, size_t K, const char *name) {
    static int s16sh[MAXN];
    size_t i;
    int v;
    for (i = 0; i < MAXN; i++) s16sh[i] = -(int)(17 + i % 6);
    for (v = 0; v < 2; v++) { /* v 0: plain, per tensor; 1: adj_x, adj_y, per channel, bias,
                                 Y broadcast (stride 0) */
        par_case c;
        int16_t *X, *Y;
        size_t xr = v ? K : M, xc = v ? M : K, yr = v ? N : K, yc = v ? K : N;
        size_t ldx = xc + 2, ldy = yc + 1, xbs = xr * ldx + 3, ybs = v ? 0 : yr * ldy + 1;
        size_t nx = batch * xbs, ny = v ? yr * ldy : batch * ybs;
        char shape[96];
        snprintf(shape, sizeof shape, "%s%s", name, v ? ", adj_x adj_y, per channel" : "");
        X = (int16_t *)malloc(nx * sizeof *X);
        Y = (int16_t *)malloc(ny * sizeof *Y);
        if (!X || !Y) { CHECK(0, "malloc"); free(X); free(Y); return; }
        for (i = 0; i < nx; i++) X[i] = (int16_t)(qmx_test_rand() & 0xFFFFu);
        for (i = 0; i < ny; i++) Y[i] = (int16_t)(qmx_test_rand() & 0xFFFFu);
        memset(&c, 0, sizeof c);
        c.kind = K_BMM; c.batch = batch; c.M = M; c.N = N; c.K = K;
        c.A16 = X; c.lda = ldx; c.xbs = xbs; c.adj_x = v;
        c.Y16 = Y; c.ldb = ldy; c.ybs = ybs; c.adj_y = v;
        c.ldc = N + (size_t)v * 3; c.obs = M * c.ldc + 5;
        c.rq64.per_channel = v; c.rq64.multipliers = gmult; c.rq64.shifts = s16sh;
        c.rq64.bias = v ? gbias64 : NULL;
        c.rq64.act_min = v ? -20000 : 0; c.rq64.act_max = v ? 21000 : 0;
        check_case(&c, shape);
        free(X); free(Y);
    }
}
static void bmm_cases(void) {
    size_t n = 0;
    CHECK(qmx_batch_matmul_i16_tasks(3, 65, 257, &n) == QMX_OK && n == 12, "tasks 3 x 65 x 257");
    CHECK(qmx_batch_matmul_i16_tasks(0, 5, 5, &n) == QMX_ERR_SIZE, "tasks: batch 0");
    CHECK(qmx_batch_matmul_i16_tasks(2, 5, 5, NULL) == QMX_ERR_NULL, "tasks: NULL");
    CHECK(qmx_batch_matmul_i16_tasks((size_t)-1, 65, 5, &n) == QMX_ERR_OVERFLOW, "tasks: overflow");
    bmm_shape(1, 1, 5, 7, "bmm 1 x 1x5x7 (1 task)");
    bmm_shape(2, 3, 40, 33, "bmm 2 x 3x40x33 (2 tasks)");
#if PAR_SMALL
    bmm_shape(3, 70, 300, 20, "bmm 3 x 70x300x20 (ragged tiles)");
#else
    bmm_shape(2, 140, 530, 40, "bmm 2 x 140x530x40 (ragged tiles)");
#endif
}

/* ---- qmx.h arrays: tasks of QMX_TASK_ELEMS elements, run by the test executor ---- */
typedef struct q_job {
    const qmx_qconfig *cfg;
    const float *x;
    size_t count;
    const float *sc;
    const int32_t *zp;
    unsigned char *q;
    size_t qb;
    float *y;
    int deq;
    int bad;   /* a task that failed (each task writes only its own flag) */
    unsigned char failed[64];
} q_job;
static void q_task(void *arg, int task, int worker) {
    q_job *j = (q_job *)arg;
    qmx_status st = j->deq ? qmx_dequantize_run(j->cfg, j->q, j->qb, j->count, j->sc, 1, j->zp,
                                                 j->y, (size_t)task, (size_t)task + 1)
                           : qmx_quantize_run(j->cfg, j->x, j->count, j->sc, 1, j->zp, j->q,
                                              j->qb, (size_t)task, (size_t)task + 1);
    (void)worker;
    if (st != QMX_OK && task < 64) j->failed[task] = 1;
}
static void quantize_cases(void) {
    static const qmx_dtype dts[6] = {QMX_INT8, QMX_UINT8, QMX_INT4, QMX_INT2, QMX_INT16,
                                     QMX_FP8_E4M3FN};
#if PAR_SMALL
    const size_t count = 2 * QMX_TASK_ELEMS + 1001;
#else
    const size_t count = 3 * QMX_TASK_ELEMS + 1001;
#endif
    float *x = (float *)malloc(count * 4), *y0 = (float *)malloc(count * 4),
          *y1 = (float *)malloc(count * 4);
    unsigned char *q0 = (unsigned char *)malloc(count * 2), *q1 = (unsigned char *)malloc(count * 2);
    size_t i, nt = 0, qb = 0;
    int d, w, wi;
    if (!x || !y0 || !y1 || !q0 || !q1) { CHECK(0, "malloc"); return; }
    for (i = 0; i < count; i++) x[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.013f;
    for (d = 0; d < 7; d++) {
        qmx_qconfig c = QMX_ZERO_INIT;
        float s = 1.0f;
        int32_t zp = 0;
        size_t want;
        qmx_status st;
        c.dtype = d < 6 ? dts[d] : QMX_INT8;
        c.asymmetric = c.dtype == QMX_UINT8;
        if (c.asymmetric) c.recipe = QMX_RECIPE_TFLITE; /* AQT is symmetric only */
        if (d == 6) { /* per channel, one group */
            c.granularity = QMX_PER_CHANNEL; c.outer = 1; c.axis_len = 1; c.inner = count;
        }
        CHECK(qmx_compute_qparams(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL) == QMX_OK,
              "qparams dtype %d", (int)c.dtype);
        CHECK(qmx_dtype_storage_bytes(c.dtype, count, &qb) == QMX_OK, "storage");
        want = count / QMX_TASK_ELEMS + 1;
        CHECK(qmx_quantize_tasks(&c, count, &nt) == QMX_OK && nt == want,
              "dtype %d: %u tasks, want %u", (int)c.dtype, (unsigned)nt, (unsigned)want);
        memset(q0, 0xA5, count * 2);
        CHECK(qmx_quantize(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL, q0, qb) == QMX_OK,
              "serial quantize");
        memset(y0, 0xA5, count * 4);
        CHECK(qmx_dequantize(&c, q0, qb, count, &s, 1, c.asymmetric ? &zp : NULL, y0) == QMX_OK,
              "serial dequantize");
        for (wi = 0; wi < PAR_NW; wi++) { /* tasks on w threads, shuffled */
            q_job j;
            w = par_wlist[wi];
            /* one thread (emulated targets, valgrind): 1, 3 and 8 workers are the same shuffled
             * range calls, so 3 only (the chunk kernels at every offset) */
            if (PAR_SMALL && !PAR_THREADS && w != 3) continue;
            memset(&j, 0, sizeof j);
            j.cfg = &c; j.x = x; j.count = count; j.sc = &s; j.zp = c.asymmetric ? &zp : NULL;
            j.q = q1; j.qb = qb; j.y = y1;
            par_workers_now = w;
            memset(q1, 0xA5, count * 2);
            par_for(&g_pool, (int)nt, q_task, &j);
            j.deq = 1;
            memset(y1, 0xA5, count * 4);
            j.q = q0;
            par_for(&g_pool, (int)nt, q_task, &j);
            for (i = 0; i < 64; i++) j.bad |= j.failed[i];
            CHECK(!j.bad && memcmp(q0, q1, count * 2) == 0 && memcmp(y0, y1, count * 4) == 0,
                  "dtype %d, %d workers: quantize / dequantize differ from the serial call",
                  (int)c.dtype, w);
        }
        /* bad calls: a status, nothing written */
        memset(q1, 0xA5, count * 2);
        memset(y1, 0xA5, count * 4);
        st = qmx_quantize_run(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL, q1, qb, 0, nt + 1);
        CHECK(st == QMX_ERR_ARG, "range past the tasks: %d", (int)st);
        st = qmx_quantize_run(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL, q1, qb, 1, 0);
        CHECK(st == QMX_ERR_ARG, "reversed range: %d", (int)st);
        st = qmx_quantize_run(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL, q1, qb - 1, 0, 1);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "q one byte short: %d", (int)st);
        st = qmx_dequantize_run(&c, q0, qb - 1, count, &s, 1, c.asymmetric ? &zp : NULL, y1, 0, 1);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "dequantize, q one byte short: %d", (int)st);
        st = qmx_dequantize_run(&c, q0, qb, count, &s, 1, c.asymmetric ? &zp : NULL, y1, nt, nt - 1);
        CHECK(st == QMX_ERR_ARG, "dequantize, reversed range: %d", (int)st);
        s = -1.0f;
        st = qmx_quantize_run(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL, q1, qb, 0, nt);
        CHECK(st == QMX_ERR_ARG, "negative scale: %d", (int)st);
        for (i = 0; i < count * 2 && q1[i] == 0xA5; i++) {}
        CHECK(i == count * 2, "dtype %d: q written by a bad call", (int)c.dtype);
        for (i = 0; i < count * 4 && ((unsigned char *)y1)[i] == 0xA5; i++) {}
        CHECK(i == count * 4, "dtype %d: y written by a bad call", (int)c.dtype);
    }
    free(x); free(y0); free(y1); free(q0); free(q1);
}

/* ---- per channel / per block, and the fp8 arrays: range calls and the _exec calls ---- */
typedef struct g_job {
    const qmx_qconfig *cfg;
    const float *x;
    size_t count, ns;
    const float *sc;
    const int32_t *zp;
    unsigned char *q;
    size_t qb;
    float *y;
    int deq, fp8; /* fp8: the fp8 arrays (cfg->dtype, scale sc[0]) */
    unsigned char failed[64];
} g_job;
static void g_task(void *arg, int task, int worker) {
    g_job *j = (g_job *)arg;
    size_t t = (size_t)task;
    qmx_status st;
    (void)worker;
    if (j->fp8)
        st = j->deq ? qmx_fp8_dequantize_array_run(j->cfg->dtype, j->q, j->count, j->sc[0], j->y,
                                                   t, t + 1)
                    : qmx_fp8_quantize_array_run(j->cfg->dtype, j->x, j->count, j->sc[0], 1, j->q,
                                                 t, t + 1);
    else
        st = j->deq ? qmx_dequantize_run(j->cfg, j->q, j->qb, j->count, j->sc, j->ns, j->zp, j->y,
                                         t, t + 1)
                    : qmx_quantize_run(j->cfg, j->x, j->count, j->sc, j->ns, j->zp, j->q, j->qb, t,
                                       t + 1);
    if (st != QMX_OK && task < 64) j->failed[task] = 1;
}
static int g_bad(const g_job *j) {
    int i, b = 0;
    for (i = 0; i < 64; i++) b |= j->failed[i];
    return b;
}
static int all_a5(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n && b[i] == 0xA5; i++) {}
    return i == n;
}

/* layouts [outer][len][inner] (granularity, block) giving ragged chunks and partial rows */
typedef struct g_layout { int g; size_t outer, len, inner, block; const char *name; } g_layout;
static void granular_cases(void) {
#if PAR_SMALL   /* two tasks each (the last ragged), but one */
    static const g_layout lay[] = {
        {QMX_PER_CHANNEL, 67, 1001, 1, 0, "per channel, last axis, 67 x 1001"},
        {QMX_PER_CHANNEL, 3, 13, 1723, 0, "per channel, inner 1723, 3 x 13"},
        {QMX_PER_BLOCK, 71, 933, 1, 32, "per block 32, last axis, 71 x 933"},
        {QMX_PER_BLOCK, 2, 41, 851, 16, "per block 16, inner 851"},
        {QMX_PER_CHANNEL, 4, 10, 3, 0, "per channel, 1 task (4 x 10 x 3)"},
    };
#else
    static const g_layout lay[] = {
        {QMX_PER_CHANNEL, 197, 1001, 1, 0, "per channel, last axis, 197 x 1001"},
        {QMX_PER_CHANNEL, 5, 13, 3001, 0, "per channel, inner 3001, 5 x 13"},
        {QMX_PER_BLOCK, 211, 933, 1, 32, "per block 32, last axis, 211 x 933"},
        {QMX_PER_BLOCK, 3, 77, 851, 16, "per block 16, inner 851"},
        {QMX_PER_CHANNEL, 4, 10, 3, 0, "per channel, 1 task (4 x 10 x 3)"},
    };
#endif
    static const qmx_dtype dts[8] = {QMX_INT8, QMX_UINT8, QMX_INT4, QMX_INT2, QMX_INT16,
                                     QMX_FP8_E4M3FN, QMX_NF4, QMX_FP8_E5M2};
    size_t maxc = 0, maxp = 0, l;
    float *x, *y0, *y1, *sc;
    int32_t *zp;
    unsigned char *q0, *q1;
    for (l = 0; l < sizeof lay / sizeof lay[0]; l++) {
        size_t c = lay[l].outer * lay[l].len * lay[l].inner, np = 0;
        qmx_qconfig q = QMX_ZERO_INIT;
        q.granularity = (qmx_granularity)lay[l].g;
        q.outer = lay[l].outer; q.axis_len = lay[l].len; q.inner = lay[l].inner;
        q.block_size = lay[l].block;
        CHECK(qmx_qparams_count(&q, c, &np) == QMX_OK, "params of layout %u", (unsigned)l);
        if (c > maxc) maxc = c;
        if (np > maxp) maxp = np;
    }
    x = (float *)malloc(maxc * 4); y0 = (float *)malloc(maxc * 4); y1 = (float *)malloc(maxc * 4);
    q0 = (unsigned char *)malloc(maxc * 2); q1 = (unsigned char *)malloc(maxc * 2);
    sc = (float *)malloc(maxp * 4); zp = (int32_t *)malloc(maxp * 4);
    if (!x || !y0 || !y1 || !q0 || !q1 || !sc || !zp) { CHECK(0, "malloc"); return; }
    for (l = 0; l < maxc; l++) x[l] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.0071f;
    for (l = 0; l < sizeof lay / sizeof lay[0]; l++) {
        int d;
        for (d = 0; d < 8; d++) {
            qmx_qconfig c = QMX_ZERO_INIT;
            size_t count = lay[l].outer * lay[l].len * lay[l].inner, np = 0, qb = 0, nt = 0, i;
#if defined(__riscv_vector) || QMX_TEST_SMALL_TARGET
            /* QEMU runs RVV element by element, Cortex-M3 in soft float: int2, int16, nf4 (no
             * path of their own there; their range calls are the same C) natively only */
            if (dts[d] == QMX_INT2 || dts[d] == QMX_INT16 || dts[d] == QMX_NF4) continue;
#endif
            const int32_t *z;
            qmx_executor ex = QMX_ZERO_INIT;
            qmx_status st;
            int w, wi, calls0;
            c.dtype = dts[d];
            c.granularity = (qmx_granularity)lay[l].g;
            c.outer = lay[l].outer; c.axis_len = lay[l].len; c.inner = lay[l].inner;
            c.block_size = lay[l].block;
            c.asymmetric = c.dtype == QMX_UINT8;
            if (c.asymmetric) c.recipe = QMX_RECIPE_TFLITE;
            if (c.dtype == QMX_FP8_E5M2) c.recipe = QMX_RECIPE_ONNX; /* its NaN code fix-up */
            z = c.asymmetric ? zp : NULL;
            CHECK(qmx_qparams_count(&c, count, &np) == QMX_OK && np <= maxp, "params");
            CHECK(qmx_compute_qparams(&c, x, count, sc, np, z ? zp : NULL) == QMX_OK,
                  "%s, dtype %d: qparams", lay[l].name, (int)c.dtype);
            for (i = 0; i < np; i++) sc[i] *= 0.75f; /* some clipping */
            CHECK(qmx_dtype_storage_bytes(c.dtype, count, &qb) == QMX_OK, "storage");
            CHECK(qmx_quantize_tasks(&c, count, &nt) == QMX_OK &&
                      nt == (count + QMX_TASK_ELEMS - 1) / QMX_TASK_ELEMS,
                  "%s: %u tasks", lay[l].name, (unsigned)nt);
            if (c.dtype == QMX_FP8_E5M2 && count > 100) x[77] = 0.0f / (x[0] - x[0]); /* a NaN */
            memset(q0, 0xA5, maxc * 2); memset(y0, 0xA5, maxc * 4);
            CHECK(qmx_quantize(&c, x, count, sc, np, z, q0, qb) == QMX_OK, "serial quantize");
            CHECK(qmx_dequantize(&c, q0, qb, count, sc, np, z, y0) == QMX_OK, "serial dequantize");
            for (wi = 0; wi < PAR_NW; wi++) {
                g_job j;
                w = par_wlist[wi];
                if (PAR_SMALL && !PAR_THREADS && w != 3) continue;   /* one thread: as 1, 8 */
                memset(&j, 0, sizeof j);
                j.cfg = &c; j.x = x; j.count = count; j.sc = sc; j.ns = np; j.zp = z;
                j.q = q1; j.qb = qb; j.y = y1;
                par_workers_now = w;
                memset(q1, 0xA5, maxc * 2); memset(y1, 0xA5, maxc * 4);
                par_for(&g_pool, (int)nt, g_task, &j);
                j.deq = 1; j.q = q0;
                par_for(&g_pool, (int)nt, g_task, &j);
                CHECK(!g_bad(&j) && memcmp(q0, q1, maxc * 2) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                      "%s, dtype %d, %d workers (range calls): differ from the serial call",
                      lay[l].name, (int)c.dtype, w);
                /* the same through the _exec calls (PAR_SMALL: with 3 workers only) */
                if (PAR_SMALL && w != 3) continue;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
                memset(q1, 0xA5, maxc * 2); memset(y1, 0xA5, maxc * 4);
                st = qmx_quantize_exec(&c, x, count, sc, np, z, q1, qb, &ex);
                CHECK(st == QMX_OK, "quantize_exec: %d", (int)st);
                st = qmx_dequantize_exec(&c, q0, qb, count, sc, np, z, y1, &ex);
                CHECK(st == QMX_OK, "dequantize_exec: %d", (int)st);
                CHECK(memcmp(q0, q1, maxc * 2) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                      "%s, dtype %d, %d workers (_exec): differ from the serial call",
                      lay[l].name, (int)c.dtype, w);
            }
            if (nt > 1) { /* uneven contiguous ranges, in reverse order */
                memset(q1, 0xA5, maxc * 2); memset(y1, 0xA5, maxc * 4);
                CHECK(qmx_quantize_run(&c, x, count, sc, np, z, q1, qb, 1, nt) == QMX_OK &&
                          qmx_quantize_run(&c, x, count, sc, np, z, q1, qb, 0, 1) == QMX_OK &&
                          qmx_dequantize_run(&c, q0, qb, count, sc, np, z, y1, 1, nt) == QMX_OK &&
                          qmx_dequantize_run(&c, q0, qb, count, sc, np, z, y1, 0, 1) == QMX_OK &&
                          memcmp(q0, q1, maxc * 2) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                      "%s, dtype %d: ranges [1, n) then [0, 1)", lay[l].name, (int)c.dtype);
            }
            /* bad calls: a status each, nothing written, no task run */
            memset(q1, 0xA5, maxc * 2); memset(y1, 0xA5, maxc * 4);
            st = qmx_quantize_run(&c, x, count, sc, np, z, q1, qb, 0, nt + 1);
            CHECK(st == QMX_ERR_ARG, "range past the tasks: %d", (int)st);
            st = qmx_dequantize_run(&c, q0, qb, count, sc, np, z, y1, 1, 0);
            CHECK(st == QMX_ERR_ARG, "reversed range: %d", (int)st);
            st = qmx_quantize_run(&c, x, count, sc, np, z, q1, qb - 1, nt - 1, nt);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "q one byte short: %d", (int)st);
            st = qmx_dequantize_run(&c, q0, qb - 1, count, sc, np, z, y1, 0, 1);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "dequantize, q one byte short: %d", (int)st);
            st = qmx_quantize_run(&c, x, count, sc, np - 1, z, q1, qb, 0, 1);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "n_scales one short: %d", (int)st);
            ex.parallel_for = NULL; ex.pool = &g_pool; ex.workers = 2;
            calls0 = g_pool.calls;
            st = qmx_quantize_exec(&c, x, count, sc, np, z, q1, qb, &ex);
            CHECK(st == QMX_ERR_NULL, "NULL parallel_for: %d", (int)st);
            ex.parallel_for = par_for; ex.workers = -1;
            st = qmx_dequantize_exec(&c, q0, qb, count, sc, np, z, y1, &ex);
            CHECK(st == QMX_ERR_ARG, "negative workers: %d", (int)st);
            ex.workers = 3;
            {   /* a bad scale in the last task's elements: that task and the _exec call fail */
                size_t pi = np - 1;
                float keep = sc[pi];
                sc[pi] = -1.0f;
                st = qmx_quantize_run(&c, x, count, sc, np, z, q1, qb, nt - 1, nt);
                CHECK(st == QMX_ERR_ARG, "bad scale, its task: %d", (int)st);
                st = qmx_dequantize_run(&c, q0, qb, count, sc, np, z, y1, nt - 1, nt);
                CHECK(st == QMX_ERR_ARG, "bad scale, its task (dequantize): %d", (int)st);
                st = qmx_quantize_exec(&c, x, count, sc, np, z, q1, qb, &ex);
                CHECK(st == QMX_ERR_ARG, "bad scale, _exec: %d", (int)st);
                st = qmx_dequantize_exec(&c, q0, qb, count, sc, np, z, y1, &ex);
                CHECK(st == QMX_ERR_ARG, "bad scale, dequantize _exec: %d", (int)st);
                sc[pi] = keep;
            }
            CHECK(g_pool.calls == calls0, "parallel_for called by a bad call");
            CHECK(all_a5(q1, maxc * 2) && all_a5(y1, maxc * 4), "%s, dtype %d: written by a bad call",
                  lay[l].name, (int)c.dtype);
            if (c.dtype == QMX_FP8_E5M2 && count > 100) x[77] = 1.0f;
        }
    }
    /* the fp8 arrays */
    {
#if PAR_SMALL   /* within the layouts' largest buffer */
        static const size_t ns[3] = {1000, QMX_TASK_ELEMS, QMX_TASK_ELEMS + 5};
#else
        static const size_t ns[3] = {1000, 2 * QMX_TASK_ELEMS, 2 * QMX_TASK_ELEMS + 5};
#endif
        int k, w, wi;
        for (k = 0; k < 3; k++) {
            size_t n = ns[k], nt = 0;
            qmx_qconfig c = QMX_ZERO_INIT;
            qmx_executor ex = QMX_ZERO_INIT;
            float s = 0.37f;
            qmx_status st;
            int calls0;
            c.dtype = k == 1 ? QMX_FP8_E5M2FNUZ : QMX_FP8_E4M3FN;
            CHECK(n <= maxc, "size");
            CHECK(qmx_array_tasks(n, &nt) == QMX_OK && nt == (n + QMX_TASK_ELEMS - 1) / QMX_TASK_ELEMS,
                  "fp8 array tasks");
            memset(q0, 0xA5, maxc); memset(y0, 0xA5, maxc * 4);
            CHECK(qmx_fp8_quantize_array(c.dtype, x, n, s, 1, q0) == QMX_OK &&
                      qmx_fp8_dequantize_array(c.dtype, q0, n, s, y0) == QMX_OK, "serial fp8");
            for (wi = 0; wi < PAR_NW; wi++) {
                g_job j;
                w = par_wlist[wi];
                if (PAR_SMALL && !PAR_THREADS && w != 3) continue;   /* one thread: as 1, 8 */
                memset(&j, 0, sizeof j);
                j.cfg = &c; j.x = x; j.count = n; j.sc = &s; j.q = q1; j.y = y1; j.fp8 = 1;
                par_workers_now = w;
                memset(q1, 0xA5, maxc); memset(y1, 0xA5, maxc * 4);
                par_for(&g_pool, (int)nt, g_task, &j);
                j.deq = 1; j.q = q0;
                par_for(&g_pool, (int)nt, g_task, &j);
                CHECK(!g_bad(&j) && memcmp(q0, q1, maxc) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                      "fp8 array n %u, %d workers (range calls)", (unsigned)n, w);
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
                memset(q1, 0xA5, maxc); memset(y1, 0xA5, maxc * 4);
                CHECK(qmx_fp8_quantize_array_exec(c.dtype, x, n, s, 1, q1, &ex) == QMX_OK &&
                          qmx_fp8_dequantize_array_exec(c.dtype, q0, n, s, y1, &ex) == QMX_OK &&
                          memcmp(q0, q1, maxc) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                      "fp8 array n %u, %d workers (_exec)", (unsigned)n, w);
            }
            memset(q1, 0xA5, maxc); memset(y1, 0xA5, maxc * 4);
            calls0 = g_pool.calls;
            st = qmx_fp8_quantize_array_run(c.dtype, x, n, s, 1, q1, 0, nt + 1);
            CHECK(st == QMX_ERR_ARG, "fp8: range past the tasks: %d", (int)st);
            st = qmx_fp8_dequantize_array_run(c.dtype, q0, n, s, y1, nt, nt - 1);
            CHECK(st == QMX_ERR_ARG, "fp8: reversed range: %d", (int)st);
            st = qmx_fp8_quantize_array_run(c.dtype, x, n, 0.0f, 1, q1, 0, 1);
            CHECK(st == QMX_ERR_ARG, "fp8: bad scale: %d", (int)st);
            st = qmx_fp8_quantize_array_run(QMX_INT8, x, n, s, 1, q1, 0, 1);
            CHECK(st == QMX_ERR_DTYPE, "fp8: dtype: %d", (int)st);
            ex.parallel_for = NULL; ex.pool = &g_pool; ex.workers = 2;
            st = qmx_fp8_quantize_array_exec(c.dtype, x, n, s, 1, q1, &ex);
            CHECK(st == QMX_ERR_NULL, "fp8: NULL parallel_for: %d", (int)st);
            ex.parallel_for = par_for; ex.workers = -3;
            st = qmx_fp8_dequantize_array_exec(c.dtype, q0, n, s, y1, &ex);
            CHECK(st == QMX_ERR_ARG, "fp8: negative workers: %d", (int)st);
            ex.workers = 2;
            st = qmx_fp8_dequantize_array_exec(c.dtype, q0, n, -s, y1, &ex);
            CHECK(st == QMX_ERR_ARG, "fp8: bad scale, _exec: %d", (int)st);
            CHECK(g_pool.calls == calls0 && all_a5(q1, maxc) && all_a5(y1, maxc * 4),
                  "fp8 n %u: a bad call wrote or ran tasks", (unsigned)n);
        }
    }
    {
        size_t nt0 = 0;
        CHECK(qmx_array_tasks(0, &nt0) == QMX_ERR_SIZE && qmx_array_tasks(1, NULL) == QMX_ERR_NULL,
              "qmx_array_tasks: bad input");
    }
    free(x); free(y0); free(y1); free(q0); free(q1); free(sc); free(zp);
}

/* ---- fp4 / fp6 arrays: range calls and _exec ---- */
typedef struct lf_job {
    qmx_dtype fmt;   /* QMX_FP4_E2M1: the fp4 calls */
    const float *x;
    const uint8_t *codes;
    size_t n;
    float scale;
    int rtz, deq;
    uint8_t *q;
    float *y;
    unsigned char failed[8];
} lf_job;
static void lf_task(void *arg, int task, int worker) {
    lf_job *j = (lf_job *)arg;
    size_t t = (size_t)task;
    qmx_status st;
    (void)worker;
    if (j->fmt == QMX_FP4_E2M1)
        st = j->deq ? qmx_fp4_dequantize_array_run(j->codes, j->n, j->scale, j->y, t, t + 1)
                    : qmx_fp4_quantize_array_run(j->x, j->n, j->scale, j->rtz, j->q, t, t + 1);
    else
        st = j->deq ? qmx_fp6_dequantize_array_run(j->fmt, j->codes, j->n, j->scale, j->y, t, t + 1)
                    : qmx_fp6_quantize_array_run(j->fmt, j->x, j->n, j->scale, j->rtz, j->q, t, t + 1);
    if (st != QMX_OK) j->failed[task & 7] = 1;
}
static qmx_status lf_exec(qmx_dtype fmt, int deq, const float *x, const uint8_t *c, size_t n,
                          float s, int rtz, uint8_t *q, float *y, const qmx_executor *ex) {
    if (fmt == QMX_FP4_E2M1)
        return deq ? qmx_fp4_dequantize_array_exec(c, n, s, y, ex)
                   : qmx_fp4_quantize_array_exec(x, n, s, rtz, q, ex);
    return deq ? qmx_fp6_dequantize_array_exec(fmt, c, n, s, y, ex)
               : qmx_fp6_quantize_array_exec(fmt, x, n, s, rtz, q, ex);
}
/* elements [t * QMX_TASK_ELEMS, ...) per task; odd n (fp4's last byte half used), 1 task,
 * NaN / Inf / values past the format's max; both rounding modes; bad calls write nothing */
static void lowfloat_array_cases(void) {
    static const qmx_dtype fmts[3] = {QMX_FP4_E2M1, QMX_FP6_E2M3, QMX_FP6_E3M2};
    static const size_t ns[3] = {999, QMX_TASK_ELEMS + 7, PAR_SMALL ? QMX_TASK_ELEMS : 2 * QMX_TASK_ELEMS + 3};
    const size_t maxn = PAR_SMALL ? QMX_TASK_ELEMS + 7 : 2 * QMX_TASK_ELEMS + 3;
    float *x = (float *)malloc(maxn * 4), *y0 = (float *)malloc(maxn * 4), *y1 = (float *)malloc(maxn * 4);
    uint8_t *q0 = (uint8_t *)malloc(maxn), *q1 = (uint8_t *)malloc(maxn);
    size_t i;
    int f, k;
    if (!x || !y0 || !y1 || !q0 || !q1) { CHECK(0, "malloc"); return; }
    for (i = 0; i < maxn; i++) x[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.0013f;
    x[5] = 0.0f / (x[0] - x[0]); x[70000 % maxn] = 1e30f; x[maxn - 1] = -1.0f / (x[1] - x[1]);
    for (f = 0; f < 3; f++)
        for (k = 0; k < 3; k++) {
            qmx_dtype fm = fmts[f];
            size_t n = ns[k], nt = 0, qb = fm == QMX_FP4_E2M1 ? (n + 1) / 2 : n;
            const float s = 0.61f;
            int rtz = (f + k) & 1, wi, calls0;
            qmx_executor ex = QMX_ZERO_INIT;
            lf_job j;
            qmx_status st;
            CHECK(qmx_array_tasks(n, &nt) == QMX_OK, "tasks");
            memset(q0, 0xA5, maxn); memset(y0, 0xA5, maxn * 4);
            CHECK(lf_exec(fm, 0, x, NULL, n, s, rtz, q0, NULL, NULL) == QMX_OK &&
                      lf_exec(fm, 1, NULL, q0, n, s, 0, NULL, y0, NULL) == QMX_OK, "serial calls");
            for (wi = 0; wi < PAR_NW; wi++) {
                memset(&j, 0, sizeof j);
                j.fmt = fm; j.x = x; j.codes = q0; j.n = n; j.scale = s; j.rtz = rtz; j.q = q1; j.y = y1;
                par_workers_now = par_wlist[wi];
                memset(q1, 0xA5, maxn); memset(y1, 0xA5, maxn * 4);
                par_for(&g_pool, (int)nt, lf_task, &j);
                j.deq = 1;
                par_for(&g_pool, (int)nt, lf_task, &j);
                CHECK(!memchr(j.failed, 1, sizeof j.failed) && memcmp(q0, q1, maxn) == 0 &&
                          memcmp(y0, y1, maxn * 4) == 0,
                      "fmt %d n %u, %d workers (range calls): differ from the serial call", (int)fm,
                      (unsigned)n, par_wlist[wi]);
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = par_wlist[wi];
                memset(q1, 0xA5, maxn); memset(y1, 0xA5, maxn * 4);
                CHECK(lf_exec(fm, 0, x, NULL, n, s, rtz, q1, NULL, &ex) == QMX_OK &&
                          lf_exec(fm, 1, NULL, q0, n, s, 0, NULL, y1, &ex) == QMX_OK &&
                          memcmp(q0, q1, maxn) == 0 && memcmp(y0, y1, maxn * 4) == 0,
                      "fmt %d n %u, %d workers (_exec): differ from the serial call", (int)fm,
                      (unsigned)n, par_wlist[wi]);
            }
            CHECK(all_a5(q0 + qb, maxn - qb), "fmt %d n %u: serial wrote past its bytes", (int)fm, (unsigned)n);
            /* empty ranges, the one at the end included (a ragged n once made it wrap) */
            memset(q1, 0xA5, maxn); memset(y1, 0xA5, maxn * 4);
            st = fm == QMX_FP4_E2M1 ? qmx_fp4_quantize_array_run(x, n, s, 0, q1, nt, nt)
                                    : qmx_fp6_quantize_array_run(fm, x, n, s, 0, q1, nt, nt);
            CHECK(st == QMX_OK, "fmt %d: empty range at the end: %d", (int)fm, (int)st);
            st = fm == QMX_FP4_E2M1 ? qmx_fp4_dequantize_array_run(q0, n, s, y1, nt, nt)
                                    : qmx_fp6_dequantize_array_run(fm, q0, n, s, y1, 0, 0);
            CHECK(st == QMX_OK, "fmt %d: empty range (dequantize): %d", (int)fm, (int)st);
            st = qmx_fp8_quantize_array_run(QMX_FP8_E4M3FN, x, n, s, 1, q1, nt, nt);
            CHECK(st == QMX_OK, "fp8: empty range at the end: %d", (int)st);
            st = qmx_fp8_dequantize_array_run(QMX_FP8_E5M2, q0, n, s, y1, nt, nt);
            CHECK(st == QMX_OK, "fp8: empty range at the end (dequantize): %d", (int)st);
            CHECK(all_a5(q1, maxn) && all_a5(y1, maxn * 4), "fmt %d n %u: an empty range wrote", (int)fm, (unsigned)n);
            /* bad calls: a status each, nothing written, no task run */
            memset(q1, 0xA5, maxn); memset(y1, 0xA5, maxn * 4);
            calls0 = g_pool.calls;
            memset(&j, 0, sizeof j);
            j.fmt = fm; j.x = x; j.codes = q0; j.n = n; j.scale = s; j.q = q1; j.y = y1;
            st = fm == QMX_FP4_E2M1 ? qmx_fp4_quantize_array_run(x, n, s, 0, q1, 0, nt + 1)
                                    : qmx_fp6_quantize_array_run(fm, x, n, s, 0, q1, 0, nt + 1);
            CHECK(st == QMX_ERR_ARG, "fmt %d: range past the tasks: %d", (int)fm, (int)st);
            st = fm == QMX_FP4_E2M1 ? qmx_fp4_dequantize_array_run(q0, n, s, y1, 1, 0)
                                    : qmx_fp6_dequantize_array_run(fm, q0, n, s, y1, 1, 0);
            CHECK(st == QMX_ERR_ARG, "fmt %d: reversed range: %d", (int)fm, (int)st);
            st = fm == QMX_FP4_E2M1 ? qmx_fp4_quantize_array_run(x, n, -s, 0, q1, 0, 1)
                                    : qmx_fp6_quantize_array_run(fm, x, n, -s, 0, q1, 0, 1);
            CHECK(st == QMX_ERR_ARG, "fmt %d: bad scale: %d", (int)fm, (int)st);
            st = fm == QMX_FP4_E2M1 ? qmx_fp4_quantize_array_run(x, 0, s, 0, q1, 0, 0)
                                    : qmx_fp6_dequantize_array_run(fm, NULL, n, s, y1, 0, 1);
            CHECK(st == (fm == QMX_FP4_E2M1 ? QMX_ERR_SIZE : QMX_ERR_NULL), "fmt %d: n 0 / NULL: %d", (int)fm, (int)st);
            CHECK(qmx_fp6_quantize_array_run(QMX_FP4_E2M1, x, n, s, 0, q1, 0, 1) == QMX_ERR_DTYPE &&
                      qmx_fp6_dequantize_array_exec(QMX_INT8, q0, n, s, y1, &ex) == QMX_ERR_DTYPE,
                  "fp6 calls with a non-fp6 dtype");
            ex.parallel_for = NULL; ex.pool = &g_pool; ex.workers = 2;
            st = lf_exec(fm, 0, x, NULL, n, s, 0, q1, NULL, &ex);
            CHECK(st == QMX_ERR_NULL, "fmt %d: NULL parallel_for: %d", (int)fm, (int)st);
            ex.parallel_for = par_for; ex.workers = -2;
            st = lf_exec(fm, 1, NULL, q0, n, s, 0, NULL, y1, &ex);
            CHECK(st == QMX_ERR_ARG, "fmt %d: negative workers: %d", (int)fm, (int)st);
            ex.workers = 3;
            st = lf_exec(fm, 1, NULL, q0, n, 0.0f, 0, NULL, y1, &ex);
            CHECK(st == QMX_ERR_ARG, "fmt %d: scale 0, _exec: %d", (int)fm, (int)st);
            CHECK(g_pool.calls == calls0 && all_a5(q1, maxn) && all_a5(y1, maxn * 4),
                  "fmt %d n %u: a bad call wrote or ran tasks", (int)fm, (unsigned)n);
        }
    free(x); free(y0); free(y1); free(q0); free(q1);
}

/* ---- MX / NVFP4 arrays: range calls and _exec ---- */
typedef struct mxp_job {
    const qmx_mx_config *c;
    const float *x;
    size_t count, eb, ns;
    uint8_t *el, *sc;
    const uint8_t *el_in, *sc_in;
    float *y;
    int deq;
    unsigned char failed[8];
} mxp_job;
static void mxp_task(void *arg, int task, int worker) {
    mxp_job *j = (mxp_job *)arg;
    size_t t = (size_t)task;
    qmx_status st = j->deq ? qmx_mx_dequantize_run(j->c, j->el_in, j->eb, j->sc_in, j->ns, j->count, j->y, t, t + 1)
                           : qmx_mx_quantize_run(j->c, j->x, j->count, j->el, j->eb, j->sc, j->ns, t, t + 1);
    (void)worker;
    if (st != QMX_OK) j->failed[task & 7] = 1;
}
/* every format and rule family, flat arrays of several tasks, [outer][len][inner] views with
 * inner > 1 and ragged last blocks, odd fp4 counts (one task), NaN / Inf / huge elements */
static void mx_array_cases(void) {
    typedef struct { qmx_mx_format f; qmx_mx_rule r; size_t block, outer, len, inner; float ts; int tasks; } mxc;
    static const mxc C[] = {
        {QMX_MXFP8_E4M3, QMX_MX_FLOOR, 0, 0, 0, 0, 0.0f, 3},               /* flat, 2 T + 96 */
        {QMX_MXFP8_E5M2, QMX_MX_RCEIL, 32, 3, 100, 401, 0.0f, 0},          /* inner 401, ragged block */
        {QMX_MXFP4, QMX_MX_EVEN, 32, 0, 0, 0, 0.0f, 3},
        {QMX_MXFP4, QMX_MX_GGML, 32, 5, 64 * 419, 1, 0.0f, 0},
        {QMX_NVFP4, QMX_MX_FLOOR, 16, 0, 0, 0, 0.037f, 3},                 /* two-level */
        {QMX_NVFP4, QMX_MX_QWIX, 16, 2, 30000, 2, 0.0f, 0},
        {QMX_MXFP6_E3M2, QMX_MX_CEIL, 32, 7, 9001, 2, 0.0f, 0},
        {QMX_MXINT8, QMX_MX_MICROXCALING, 32, 0, 0, 0, 0.0f, 3},
        {QMX_MXFP4, QMX_MX_FLOOR, 7, 3, 701, 33, 0.0f, 1},                 /* odd block x inner: 1 task */
        {QMX_MXFP8_E4M3, QMX_MX_QWIX, 32, 1, 50, 1, 0.0f, 1},              /* one small task */
    };
    const size_t maxc = 2 * QMX_TASK_ELEMS + 96 > 5 * 64 * 419 ? 2 * QMX_TASK_ELEMS + 96 : 5 * 64 * 419;
    float *x = (float *)malloc(maxc * 4), *y0 = (float *)malloc(maxc * 4), *y1 = (float *)malloc(maxc * 4);
    uint8_t *e0 = (uint8_t *)malloc(maxc), *e1 = (uint8_t *)malloc(maxc);
    uint8_t *s0 = (uint8_t *)malloc(maxc / 4), *s1 = (uint8_t *)malloc(maxc / 4);
    size_t ci, i;
    if (!x || !y0 || !y1 || !e0 || !e1 || !s0 || !s1) { CHECK(0, "malloc"); return; }
    for (i = 0; i < maxc; i++) x[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.00097f;
    x[3] = 0.0f / (x[0] - x[0]); x[100000] = 1e30f; x[maxc - 5] = -1.0f / (x[1] - x[1]);
    for (ci = 0; ci < sizeof C / sizeof C[0]; ci++) {
        qmx_mx_config c = QMX_ZERO_INIT;
        size_t count, eb = 0, ns = 0, nt = 0;
        qmx_executor ex = QMX_ZERO_INIT;
        qmx_status st;
        int wi, calls0;
        mxp_job j;
        c.format = C[ci].f; c.rule = C[ci].r; c.block_size = C[ci].block;
        c.outer = C[ci].outer; c.axis_len = C[ci].len; c.inner = C[ci].inner; c.tensor_scale = C[ci].ts;
        count = C[ci].outer ? C[ci].outer * C[ci].len * C[ci].inner : 2 * QMX_TASK_ELEMS + 96;
        if (PAR_SMALL && count > QMX_TASK_ELEMS + 4096) {   /* two tasks at most */
            if (!C[ci].outer) count = QMX_TASK_ELEMS + 96;
            else continue;
        }
        CHECK(count <= maxc, "case %u: size", (unsigned)ci);
        if (count > maxc) continue;
        CHECK(qmx_mx_storage(&c, count, &eb, &ns) == QMX_OK && ns <= maxc / 4, "case %u: storage", (unsigned)ci);
        CHECK(qmx_mx_tasks(&c, count, &nt) == QMX_OK, "case %u: tasks", (unsigned)ci);
        if (C[ci].tasks == 1) CHECK(nt == 1, "case %u: %u tasks, want 1", (unsigned)ci, (unsigned)nt);
        else CHECK(nt >= 2 && nt <= 8, "case %u: %u tasks", (unsigned)ci, (unsigned)nt);
        memset(e0, 0xA5, maxc); memset(s0, 0xA5, maxc / 4); memset(y0, 0xA5, maxc * 4);
        st = qmx_mx_quantize(&c, x, count, e0, eb, s0, ns);
        CHECK(st == QMX_OK, "case %u: serial quantize %d", (unsigned)ci, (int)st);
        CHECK(qmx_mx_dequantize(&c, e0, eb, s0, ns, count, y0) == QMX_OK, "serial dequantize");
        for (wi = 0; wi < PAR_NW; wi++) {
            memset(&j, 0, sizeof j);
            j.c = &c; j.x = x; j.count = count; j.eb = eb; j.ns = ns; j.el = e1; j.sc = s1;
            j.el_in = e0; j.sc_in = s0; j.y = y1;
            par_workers_now = par_wlist[wi];
            memset(e1, 0xA5, maxc); memset(s1, 0xA5, maxc / 4); memset(y1, 0xA5, maxc * 4);
            par_for(&g_pool, (int)nt, mxp_task, &j);
            j.deq = 1;
            par_for(&g_pool, (int)nt, mxp_task, &j);
            CHECK(!memchr(j.failed, 1, sizeof j.failed) && memcmp(e0, e1, maxc) == 0 &&
                      memcmp(s0, s1, maxc / 4) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                  "case %u, %d workers (range calls): differ from the serial call", (unsigned)ci, par_wlist[wi]);
            ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = par_wlist[wi];
            memset(e1, 0xA5, maxc); memset(s1, 0xA5, maxc / 4); memset(y1, 0xA5, maxc * 4);
            CHECK(qmx_mx_quantize_exec(&c, x, count, e1, eb, s1, ns, &ex) == QMX_OK &&
                      qmx_mx_dequantize_exec(&c, e0, eb, s0, ns, count, y1, &ex) == QMX_OK &&
                      memcmp(e0, e1, maxc) == 0 && memcmp(s0, s1, maxc / 4) == 0 &&
                      memcmp(y0, y1, maxc * 4) == 0,
                  "case %u, %d workers (_exec): differ from the serial call", (unsigned)ci, par_wlist[wi]);
        }
        if (nt > 1) {   /* task 0 alone writes exactly the documented partition's first part */
            size_t blk = C[ci].block ? C[ci].block : (C[ci].f == QMX_NVFP4 ? 16 : 32);
            size_t in = C[ci].outer ? C[ci].inner : 1, len = C[ci].outer ? C[ci].len : count;
            size_t nb, g, es, ebytes, fp4 = C[ci].f == QMX_MXFP4 || C[ci].f == QMX_NVFP4;
            if (blk > len) blk = len;
            nb = (len + blk - 1) / blk;
            g = blk * in >= QMX_TASK_ELEMS ? 1 : QMX_TASK_ELEMS / (blk * in);   /* rows of scales per task */
            es = g / nb * len * in + g % nb * blk * in;                          /* task 1's first element */
            ebytes = fp4 ? es / 2 : es;
            memset(e1, 0xA5, maxc); memset(s1, 0xA5, maxc / 4); memset(y1, 0xA5, maxc * 4);
            CHECK(qmx_mx_quantize_run(&c, x, count, e1, eb, s1, ns, 0, 1) == QMX_OK &&
                      qmx_mx_dequantize_run(&c, e0, eb, s0, ns, count, y1, 0, 1) == QMX_OK, "task 0");
            CHECK(memcmp(e0, e1, ebytes) == 0 && all_a5(e1 + ebytes, maxc - ebytes) &&
                      memcmp(s0, s1, g * in) == 0 && all_a5(s1 + g * in, maxc / 4 - g * in) &&
                      memcmp(y0, y1, es * 4) == 0 && all_a5(y1 + es, (maxc - es) * 4),
                  "case %u: task 0 wrote other than elements [0, %u) and scales [0, %u)", (unsigned)ci,
                  (unsigned)es, (unsigned)(g * in));
        }
        if (nt > 1) {   /* uneven ranges, last first */
            memset(e1, 0xA5, maxc); memset(s1, 0xA5, maxc / 4); memset(y1, 0xA5, maxc * 4);
            CHECK(qmx_mx_quantize_run(&c, x, count, e1, eb, s1, ns, 1, nt) == QMX_OK &&
                      qmx_mx_quantize_run(&c, x, count, e1, eb, s1, ns, 0, 1) == QMX_OK &&
                      qmx_mx_dequantize_run(&c, e0, eb, s0, ns, count, y1, 1, nt) == QMX_OK &&
                      qmx_mx_dequantize_run(&c, e0, eb, s0, ns, count, y1, 0, 1) == QMX_OK &&
                      memcmp(e0, e1, maxc) == 0 && memcmp(s0, s1, maxc / 4) == 0 && memcmp(y0, y1, maxc * 4) == 0,
                  "case %u: ranges [1, n) then [0, 1)", (unsigned)ci);
        }
        /* bad calls: a status each, nothing written, no task run */
        memset(e1, 0xA5, maxc); memset(s1, 0xA5, maxc / 4); memset(y1, 0xA5, maxc * 4);
        calls0 = g_pool.calls;
        st = qmx_mx_quantize_run(&c, x, count, e1, eb, s1, ns, 0, nt + 1);
        CHECK(st == QMX_ERR_ARG, "case %u: range past the tasks: %d", (unsigned)ci, (int)st);
        st = qmx_mx_dequantize_run(&c, e0, eb, s0, ns, count, y1, 1, 0);
        CHECK(st == QMX_ERR_ARG, "case %u: reversed range: %d", (unsigned)ci, (int)st);
        st = qmx_mx_quantize_run(&c, x, count, e1, eb - 1, s1, ns, nt - 1, nt);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "case %u: elements one byte short: %d", (unsigned)ci, (int)st);
        st = qmx_mx_dequantize_run(&c, e0, eb, s0, ns - 1, count, y1, 0, 1);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "case %u: scales one short: %d", (unsigned)ci, (int)st);
        if (C[ci].outer) {
            st = qmx_mx_quantize_run(&c, x, count + 1, e1, eb + 1, s1, ns + 1, 0, 1);
            CHECK(st == QMX_ERR_SHAPE, "case %u: count not the view's: %d", (unsigned)ci, (int)st);
        }
        ex.parallel_for = NULL; ex.pool = &g_pool; ex.workers = 2;
        st = qmx_mx_quantize_exec(&c, x, count, e1, eb, s1, ns, &ex);
        CHECK(st == QMX_ERR_NULL, "case %u: NULL parallel_for: %d", (unsigned)ci, (int)st);
        ex.parallel_for = par_for; ex.workers = -1;
        st = qmx_mx_dequantize_exec(&c, e0, eb, s0, ns, count, y1, &ex);
        CHECK(st == QMX_ERR_ARG, "case %u: negative workers: %d", (unsigned)ci, (int)st);
        ex.workers = 3;
        st = qmx_mx_dequantize_exec(&c, e0, eb, NULL, ns, count, y1, &ex);
        CHECK(st == QMX_ERR_NULL, "case %u: NULL scales, _exec: %d", (unsigned)ci, (int)st);
        CHECK(g_pool.calls == calls0 && all_a5(e1, maxc) && all_a5(s1, maxc / 4) && all_a5(y1, maxc * 4),
              "case %u: a bad call wrote or ran tasks", (unsigned)ci);
        CHECK(qmx_mx_tasks(&c, count, NULL) == QMX_ERR_NULL && qmx_mx_tasks(&c, 0, &nt) == QMX_ERR_SIZE,
              "qmx_mx_tasks: bad input");
    }
    free(x); free(y0); free(y1); free(e0); free(e1); free(s0); free(s1);
}

/* ---- qmx_einsum through an executor: a task per batch index ---- */
typedef struct es_case {
    const char *spec;
    int rank_a, rank_b;
    size_t sa[4], sb[4];
    qmx_dtype dt;   /* QMX_FLOAT32 or QMX_INT8 */
    int i32, scaled;
    size_t tasks;   /* the batch count */
} es_case;
static void einsum_cases(void) {
    static const es_case cs[] = {
        {"bnth,bnsh->bnts", 4, 4, {1, 3, 17, 24}, {1, 3, 13, 24}, QMX_INT8, 1, 0, 3},
        {"bij,bjk->bik", 3, 3, {5, 7, 11}, {5, 11, 9}, QMX_FLOAT32, 0, 0, 5},
        {"bij,bjk->ikb", 3, 3, {4, 6, 10}, {4, 10, 5}, QMX_FLOAT32, 0, 0, 4},
        {"bij,bkj->bik", 3, 3, {9, 5, 40}, {9, 7, 40}, QMX_INT8, 0, 1, 9},
        {"bij,bjk->bik", 3, 3, {2, 3, 33}, {2, 33, 60}, QMX_INT8, 0, 1, 2},
        {"bsd,fd->bsf", 3, 2, {2, 5, 16}, {6, 16, 0}, QMX_INT8, 0, 1, 1},
    };
    static float fa[4096], fb[4096], sca[64], scb[64];
    static int8_t ia[4096], ib[4096];
    static unsigned char ref[8192 * 4], got[8192 * 4];
    size_t c, i;
    for (i = 0; i < 4096; i++) {
        fa[i] = (float)((int)(qmx_test_rand() % 2001u) - 1000) * 0.0137f;
        fb[i] = (float)((int)(qmx_test_rand() % 2001u) - 1000) * 0.0071f;
        ia[i] = (int8_t)(qmx_test_rand() & 0xFF);
        ib[i] = (int8_t)(qmx_test_rand() & 0xFF);
    }
    for (i = 0; i < 64; i++) {
        sca[i] = 0.01f + (float)(qmx_test_rand() % 100u) * 1e-4f;
        scb[i] = 0.02f + (float)(qmx_test_rand() % 100u) * 1e-4f;
    }
    for (c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        const es_case *e = &cs[c];
        qmx_einsum_operand a = QMX_ZERO_INIT, b = QMX_ZERO_INIT;
        qmx_einsum_opts o = QMX_ZERO_INIT;
        qmx_executor ex = QMX_ZERO_INIT;
        size_t na = 1, nb = 1, shape[QMX_EINSUM_MAX_RANK], out_n = 1, ws0 = 0, wsp = 0;
        int r, pos, w, orank = 0, calls0;
        qmx_status st;
        size_t esz = e->dt == QMX_FLOAT32 ? 4 : 1;
        a.dtype = b.dtype = e->dt; a.rank = e->rank_a; b.rank = e->rank_b;
        for (r = 0; r < a.rank; r++) { a.shape[r] = e->sa[r]; na *= e->sa[r]; }
        for (r = 0; r < b.rank; r++) { b.shape[r] = e->sb[r]; nb *= e->sb[r]; }
        CHECK(na <= 4096 && nb <= 4096, "einsum test sizes");
        a.data = e->dt == QMX_FLOAT32 ? (const void *)fa : (const void *)ia;
        b.data = e->dt == QMX_FLOAT32 ? (const void *)fb : (const void *)ib;
        a.data_bytes = na * esz; b.data_bytes = nb * esz;
        if (e->scaled) { /* per channel on a's axis 1 (a batch or free axis), per tensor b */
            a.scales = sca; a.scales_len = 64; a.scaling = QMX_EINSUM_SCALE_CHANNEL;
            a.channel_axis = 1; a.zero_point = 3;
            b.scales = scb; b.scales_len = 1;
        }
        o.int32_out = e->i32;
        CHECK(qmx_einsum_output_shape(e->spec, &a, &b, shape, &orank, &pos) == QMX_OK, "shape");
        for (r = 0; r < orank; r++) out_n *= shape[r];
        CHECK(out_n * 4 + 16 <= sizeof ref, "einsum out size");
        CHECK(qmx_einsum_workspace_size(e->spec, &a, &b, &o, &ws0, &pos) == QMX_OK, "ws");
        memset(ref, 0xA5, sizeof ref);
        st = qmx_einsum(e->spec, &a, &b, &o, ref, out_n, g_ws, ws0, &pos);
        CHECK(st == QMX_OK, "%s: serial einsum %d", e->spec, (int)st);
        for (w = 1; w <= 8; w++) {
            if (w > 4 && w < 8) continue;
            ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
            par_workers_now = w;
            o.executor = &ex;
            CHECK(qmx_einsum_workspace_size(e->spec, &a, &b, &o, &wsp, &pos) == QMX_OK &&
                      wsp <= g_ws_bytes && (w == 1 || e->tasks == 1 ? wsp == ws0 : wsp >= ws0),
                  "%s, %d workers: workspace %u (serial %u)", e->spec, w, (unsigned)wsp,
                  (unsigned)ws0);
            memset(got, 0xA5, sizeof got);
            calls0 = g_pool.calls;
            st = qmx_einsum(e->spec, &a, &b, &o, got, out_n, g_ws, wsp, &pos);
            CHECK(st == QMX_OK && memcmp(ref, got, sizeof ref) == 0,
                  "%s, %d workers: differs from the serial call (%d)", e->spec, w, (int)st);
            CHECK(g_pool.calls == calls0 + (w >= 2 && e->tasks >= 2), "%s, %d workers: %d calls",
                  e->spec, w, g_pool.calls - calls0);
            if (wsp > 0) { /* a workspace one byte short */
                memset(got, 0xA5, sizeof got);
                st = qmx_einsum(e->spec, &a, &b, &o, got, out_n, g_ws, wsp - 1, &pos);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(got, sizeof got),
                      "%s, %d workers: workspace one byte short: %d", e->spec, w, (int)st);
            }
        }
        {   /* range calls: every batch index alone, shuffled, with the serial workspace (the
             * executor in opts ignored); uneven ranges last first; bad ranges write nothing */
            size_t nt = 0, t;
            int k;
            o.executor = &ex; ex.workers = 3;
            CHECK(qmx_einsum_tasks(e->spec, &a, &b, &o, &nt, &pos) == QMX_OK && nt == e->tasks,
                  "%s: qmx_einsum_tasks %u, want %u", e->spec, (unsigned)nt, (unsigned)e->tasks);
            memset(got, 0xA5, sizeof got);
            par_shuffle(par_order, (int)nt);
            for (t = 0, st = QMX_OK; t < nt && st == QMX_OK; t++)
                st = qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0,
                                    (size_t)par_order[t], (size_t)par_order[t] + 1, &pos);
            CHECK(st == QMX_OK && memcmp(ref, got, sizeof ref) == 0,
                  "%s: single-task range calls in a shuffled order (%d)", e->spec, (int)st);
            if (nt > 1) {   /* one batch index writes only its outputs: the rest stays 0xA5 */
                size_t un = 0;
                memset(got, 0xA5, sizeof got);
                CHECK(qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0, nt - 1, nt, &pos) == QMX_OK,
                      "%s: last task alone", e->spec);
                for (t = 0; t < out_n * 4; t++) un += got[t] == 0xA5;
                CHECK(un >= out_n * 4 / nt * (nt - 1), "%s: the last task wrote %u of %u bytes", e->spec,
                      (unsigned)(out_n * 4 - un), (unsigned)(out_n * 4));
            }
            memset(got, 0xA5, sizeof got);
            k = nt > 1 ? 1 : 0;
            CHECK(qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0, (size_t)k, nt, &pos) == QMX_OK &&
                      qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0, 0, (size_t)k, &pos) == QMX_OK &&
                      memcmp(ref, got, sizeof ref) == 0, "%s: ranges [1, n) then [0, 1)", e->spec);
            memset(got, 0xA5, sizeof got);
            calls0 = g_pool.calls;
            st = qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0, 0, nt + 1, &pos);
            CHECK(st == QMX_ERR_ARG, "%s: range past the tasks: %d", e->spec, (int)st);
            st = qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0, nt, nt - 1, &pos);
            CHECK(st == QMX_ERR_ARG, "%s: reversed range: %d", e->spec, (int)st);
            if (ws0 > 0) {
                st = qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0 - 1, 0, 1, &pos);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "%s: range call, workspace one byte short: %d",
                      e->spec, (int)st);
            }
            st = qmx_einsum_run(e->spec, &a, &b, &o, got, out_n, g_ws, ws0, nt, nt, &pos);
            CHECK(st == QMX_OK, "%s: empty range at the end: %d", e->spec, (int)st);
            st = qmx_einsum_run("bij,bjk->bi?", &a, &b, &o, got, out_n, g_ws, ws0, 0, 1, &pos);
            CHECK(st != QMX_OK, "%s: a malformed spec", e->spec);
            CHECK(all_a5(got, sizeof got) && g_pool.calls == calls0, "%s: a bad range call wrote", e->spec);
            CHECK(qmx_einsum_tasks(e->spec, &a, &b, &o, NULL, &pos) == QMX_ERR_NULL, "tasks: NULL");
        }
        /* bad executors: a status, nothing written, no task */
        memset(got, 0xA5, sizeof got);
        calls0 = g_pool.calls;
        ex.parallel_for = NULL; ex.workers = 2; o.executor = &ex;
        st = qmx_einsum(e->spec, &a, &b, &o, got, out_n, g_ws, g_ws_bytes, &pos);
        CHECK(st == QMX_ERR_NULL, "%s: NULL parallel_for: %d", e->spec, (int)st);
        CHECK(qmx_einsum_workspace_size(e->spec, &a, &b, &o, &wsp, &pos) == QMX_ERR_NULL,
              "%s: NULL parallel_for, workspace size", e->spec);
        ex.parallel_for = par_for; ex.workers = -1;
        st = qmx_einsum(e->spec, &a, &b, &o, got, out_n, g_ws, g_ws_bytes, &pos);
        CHECK(st == QMX_ERR_ARG, "%s: negative workers: %d", e->spec, (int)st);
        ex.workers = 3;
        st = qmx_einsum(e->spec, &a, &b, &o, got, out_n - 1, g_ws, g_ws_bytes, &pos);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "%s: out one short: %d", e->spec, (int)st);
        CHECK(all_a5(got, sizeof got) && g_pool.calls == calls0, "%s: a bad call wrote", e->spec);
    }
}

/* ---- qmx_einsum with a block-weight blob operand: the tasks are the blob kernel's
 * qmx_matmul_tasks(M, N) tiles (rows 64 (t / nc), columns 256 (t % nc)), the executor runs its
 * _exec, a range call its _run on the range's tiles (then scatters those tiles only when the
 * output is transposed) ---- */
typedef struct eb_job {   /* a range call per task on the test executor's threads */
    const char *spec;
    const qmx_einsum_operand *x, *w;
    const qmx_einsum_opts *o;
    unsigned char *out;
    size_t out_n, slice, ws0;
    unsigned char bad[PAR_MAX_WORKERS];
} eb_job;
static void eb_task(void *arg, int task, int worker) {
    eb_job *j = (eb_job *)arg;
    int pos;
    if (qmx_einsum_run(j->spec, j->x, j->w, j->o, j->out, j->out_n,
                       g_ws + (size_t)worker * j->slice, j->ws0, (size_t)task, (size_t)task + 1,
                       &pos) != QMX_OK)
        j->bad[worker] = 1;
}
/* Q4_0 and MXFP4 blobs (weights [N][K]) x float32 activations [B][S][K], M = B * S rows: a
 * ragged last row tile and a ragged last column tile, 4 tasks; "bsd,fd->bsf" (the kernel
 * writes the output in place) and "bsd,fd->fbs" (the [M,N] tile, scattered); blockw_act F32,
 * DYN_I8 per row and per 32. The serial call against: the executor (every worker count,
 * shuffled, real threads), a range call per task on threads, single tasks in a shuffled order
 * (each writes exactly its tile), uneven contiguous ranges in both orders, each with its own
 * serial-size workspace; bad calls write nothing and run no task. Its own seed: the data of
 * the cases after it do not change. */
static void einsum_blob_cases(void) {
#if PAR_SMALL
    enum { EB_B = 2, EB_S = 33, EB_N = 264, EB_K = 64 };   /* M 66: tiles 64 + 2, 256 + 8 */
#else
    enum { EB_B = 2, EB_S = 35, EB_N = 300, EB_K = 64 };   /* M 70: tiles 64 + 6, 256 + 44 */
#endif
    enum { EB_M = EB_B * EB_S };
    static const int kinds[2] = {BW_Q4_0, BW_MXFP4};
    static const char *const specs[2] = {"bsd,fd->bsf", "bsd,fd->fbs"};
    static const char *const actn[3] = {"f32", "dyn_i8 per row", "dyn_i8 per 32"};
    const size_t out_n = (size_t)EB_M * EB_N, ob = out_n * 4, slice = g_ws_bytes / PAR_MAX_WORKERS;
    const size_t nc = (EB_N + QMX_TASK_N - 1) / QMX_TASK_N;
    uint32_t rng = qmx_test_rng_state;
    int ki, si, ai;
    qmx_test_seed(0xB10BE175u);
    CHECK(ob <= g_out_bytes && (size_t)EB_M * EB_K <= sizeof gX / sizeof gX[0],
          "blob einsum: test sizes");
    for (ki = 0; ki < 2; ki++) {
        size_t bytes = 0;
        uint8_t *blob = bw_blob(kinds[ki], EB_N, EB_K, &bytes);
        CHECK(blob != NULL, "%s: blob", bw_name[kinds[ki]]);
        if (!blob) continue;
        for (si = 0; si < 2; si++)
            for (ai = 0; ai < 3; ai++) {
                const char *spec = specs[si];
                qmx_einsum_operand X = QMX_ZERO_INIT, W = QMX_ZERO_INIT;
                qmx_einsum_opts o = QMX_ZERO_INIT;
                qmx_executor ex = QMX_ZERO_INIT;
                size_t nt = 0, want_nt = 0, ws0 = 0, wsp = 0, t, m, n;
                int wi, k, pos, calls0, tasks0;
                qmx_status st;
                unsigned char tdone[4];
                char nm[96];
                snprintf(nm, sizeof nm, "%s %s %s (%ux%ux%u)", bw_name[kinds[ki]], spec, actn[ai],
                         (unsigned)EB_M, (unsigned)EB_N, (unsigned)EB_K);
                X.rank = 3; X.shape[0] = EB_B; X.shape[1] = EB_S; X.shape[2] = EB_K;
                X.data = gX; X.data_bytes = (size_t)EB_M * EB_K * sizeof(float);
                W.rank = 2; W.shape[0] = EB_N; W.shape[1] = EB_K;
                W.blockw_blob = blob; W.blockw_blob_bytes = bytes;
                o.blockw_act = ai ? QMX_EINSUM_BLOCKW_DYN_I8 : QMX_EINSUM_BLOCKW_F32;
                o.blockw_act_block = ai == 2 ? 32 : 0;
                (void)qmx_matmul_tasks(EB_M, EB_N, &want_nt);
                st = qmx_einsum_tasks(spec, &X, &W, &o, &nt, &pos);
                CHECK(st == QMX_OK && nt == want_nt && nt == 4 && nt <= PAR_MAX_TASKS,
                      "%s: qmx_einsum_tasks %u, want qmx_matmul_tasks' %u (%d)", nm, (unsigned)nt,
                      (unsigned)want_nt, (int)st);
                st = qmx_einsum_workspace_size(spec, &X, &W, &o, &ws0, &pos);
                CHECK(st == QMX_OK && ws0 > 0 && ws0 <= slice, "%s: workspace %u (%d)", nm,
                      (unsigned)ws0, (int)st);
                if (st != QMX_OK || nt != 4 || ws0 > slice) continue;
                out_fill(g_ref, ob);
                st = qmx_einsum(spec, &X, &W, &o, g_ref, out_n, g_ws, ws0, &pos);
                CHECK_EQ_INT(st, QMX_OK, "%s: serial einsum", nm);

                /* the executor: the kernel's _exec, one parallel_for of nt tasks */
                for (wi = 0; wi < PAR_NW; wi++) {
                    int w = par_wlist[wi];
                    if (PAR_SMALL && !PAR_THREADS && w != 3) continue;
                    ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
                    par_workers_now = w;
                    o.executor = &ex;
                    st = qmx_einsum_workspace_size(spec, &X, &W, &o, &wsp, &pos);
                    CHECK(st == QMX_OK && wsp > 0 && wsp <= g_ws_bytes && (w >= 2 || wsp == ws0),
                          "%s, %d workers: workspace %u (serial %u): %d", nm, w, (unsigned)wsp,
                          (unsigned)ws0, (int)st);
                    if (st != QMX_OK || wsp == 0 || wsp > g_ws_bytes) continue;
                    out_fill(g_out, ob);
                    calls0 = g_pool.calls; tasks0 = g_pool.tasks;
                    st = qmx_einsum(spec, &X, &W, &o, g_out, out_n, g_ws, wsp, &pos);
                    CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                          "%s, %d workers: differs from the serial call (%d)", nm, w, (int)st);
                    CHECK(g_pool.calls == calls0 + (w >= 2) &&
                              g_pool.tasks == tasks0 + (w >= 2 ? (int)nt : 0),
                          "%s, %d workers: %d parallel_for calls, %d tasks", nm, w,
                          g_pool.calls - calls0, g_pool.tasks - tasks0);
                    /* a workspace one byte short: nothing written, no task */
                    out_fill(g_out, ob);
                    calls0 = g_pool.calls; tasks0 = g_pool.tasks;
                    st = qmx_einsum(spec, &X, &W, &o, g_out, out_n, g_ws, wsp - 1, &pos);
                    CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(g_out, ob) &&
                              g_pool.calls == calls0 && g_pool.tasks == tasks0,
                          "%s, %d workers: workspace one byte short: %d", nm, w, (int)st);
                }

                /* range calls, one per task, on 1..8 threads in a shuffled order, each worker
                 * with its own serial-size workspace (threads only) */
                o.executor = NULL;
                for (wi = 0; wi < PAR_NW && PAR_THREADS; wi++) {
                    eb_job j;
                    int bad = 0;
                    if (PAR_SMALL && par_wlist[wi] != 3) continue;
                    memset(&j, 0, sizeof j);
                    j.spec = spec; j.x = &X; j.w = &W; j.o = &o; j.out = g_out;
                    j.out_n = out_n; j.slice = slice; j.ws0 = ws0;
                    par_workers_now = par_wlist[wi];
                    out_fill(g_out, ob);
                    par_for(&g_pool, (int)nt, eb_task, &j);
                    for (k = 0; k < PAR_MAX_WORKERS; k++) bad |= j.bad[k];
                    CHECK(!bad && memcmp(g_out, g_ref, ob) == 0,
                          "%s: range calls on %d threads differ from the serial call", nm,
                          par_wlist[wi]);
                }

                /* the executor in opts is ignored by range calls: no parallel_for from here */
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 3;
                par_workers_now = 3;
                o.executor = &ex;
                calls0 = g_pool.calls; tasks0 = g_pool.tasks;
                /* every task alone, shuffled: each writes exactly its tile (the rest keeps
                 * 0xA5), together the serial bits */
                out_fill(g_out, ob);
                par_shuffle(par_order, (int)nt);
                memset(tdone, 0, sizeof tdone);
                for (t = 0; t < nt; t++) {
                    size_t tk = (size_t)par_order[t], wrong = 0;
                    st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0, tk, tk + 1,
                                        &pos);
                    tdone[tk] = 1; /* the tiles of the tasks run so far: the serial bits */
                    for (m = 0; m < EB_M; m++)
                        for (n = 0; n < EB_N; n++) {
                            size_t p = si ? n * EB_M + m : m * EB_N + n;
                            if (tdone[m / QMX_TASK_M * nc + n / QMX_TASK_N]
                                    ? memcmp(g_out + 4 * p, g_ref + 4 * p, 4) != 0
                                    : !all_a5(g_out + 4 * p, 4))
                                wrong++;
                        }
                    CHECK(st == QMX_OK && wrong == 0,
                          "%s: task %u alone (after %u others): %d, %u outputs wrong", nm,
                          (unsigned)tk, (unsigned)t, (int)st, (unsigned)wrong);
                }
                CHECK(memcmp(g_out, g_ref, ob) == 0,
                      "%s: single-task range calls in a shuffled order differ", nm);
                /* [0, 1), [1, n - 1), [n - 1, n): forward, then last first; own workspaces */
                for (k = 0; k < 2; k++) {
                    const size_t cut[4] = {0, 1, nt - 1, nt};
                    int r;
                    out_fill(g_out, ob);
                    for (r = 0, st = QMX_OK; r < 3 && st == QMX_OK; r++) {
                        int q = k ? 2 - r : r;
                        st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n,
                                            g_ws + (size_t)q * slice, ws0, cut[q], cut[q + 1],
                                            &pos);
                    }
                    CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                          "%s: ranges [0,1) [1,n-1) [n-1,n) %s: %d, differ", nm,
                          k ? "last first" : "in order", (int)st);
                }
                /* uneven contiguous ranges at random cuts, last first */
                for (wi = 1; wi < PAR_NW; wi++) {
                    size_t cut[PAR_MAX_WORKERS + 1];
                    int w = par_wlist[wi];
                    if (PAR_SMALL && w != 3) continue;
                    cut[0] = 0; cut[w] = nt;
                    for (k = 1; k < w; k++) cut[k] = (size_t)qmx_test_rand_range(cut[k - 1], nt);
                    out_fill(g_out, ob);
                    for (k = w - 1, st = QMX_OK; k >= 0 && st == QMX_OK; k--)
                        st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n,
                                            g_ws + (size_t)k * slice, ws0, cut[k], cut[k + 1], &pos);
                    CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                          "%s: %d uneven ranges: %d, differ", nm, w, (int)st);
                }
                CHECK(g_pool.calls == calls0 && g_pool.tasks == tasks0,
                      "%s: a range call ran the executor of opts", nm);

                /* bad calls: a status each, the output untouched, no task run */
                out_fill(g_out, ob);
                st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0, 0, nt + 1, &pos);
                CHECK(st == QMX_ERR_ARG && all_a5(g_out, ob), "%s: range past the tasks: %d", nm,
                      (int)st);
                st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0, nt, nt + 1, &pos);
                CHECK(st == QMX_ERR_ARG && all_a5(g_out, ob), "%s: range [n, n + 1): %d", nm,
                      (int)st);
                st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0, nt, nt - 1, &pos);
                CHECK(st == QMX_ERR_ARG && all_a5(g_out, ob), "%s: reversed range: %d", nm,
                      (int)st);
                st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0, 2, 1, &pos);
                CHECK(st == QMX_ERR_ARG && all_a5(g_out, ob), "%s: reversed range [2, 1): %d",
                      nm, (int)st);
                st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0 - 1, 0, nt, &pos);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(g_out, ob),
                      "%s: range call, workspace one byte short: %d", nm, (int)st);
                st = qmx_einsum_run(spec, &X, &W, &o, g_out, out_n, g_ws, ws0, nt, nt, &pos);
                CHECK(st == QMX_OK && all_a5(g_out, ob), "%s: empty range: %d", nm, (int)st);
                ex.workers = 2; par_workers_now = 2;
                st = qmx_einsum_workspace_size(spec, &X, &W, &o, &wsp, &pos);
                CHECK(st == QMX_OK && wsp > 0, "%s, 2 workers: workspace %d", nm, (int)st);
                st = qmx_einsum(spec, &X, &W, &o, g_out, out_n, g_ws, wsp - 1, &pos);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(g_out, ob),
                      "%s: executor, workspace one byte short: %d", nm, (int)st);
                ex.parallel_for = NULL;
                st = qmx_einsum(spec, &X, &W, &o, g_out, out_n, g_ws, g_ws_bytes, &pos);
                CHECK(st == QMX_ERR_NULL && all_a5(g_out, ob), "%s: NULL parallel_for: %d", nm,
                      (int)st);
                CHECK(qmx_einsum_workspace_size(spec, &X, &W, &o, &wsp, &pos) == QMX_ERR_NULL,
                      "%s: NULL parallel_for, workspace size", nm);
                ex.parallel_for = par_for; ex.workers = -1;
                st = qmx_einsum(spec, &X, &W, &o, g_out, out_n, g_ws, g_ws_bytes, &pos);
                CHECK(st == QMX_ERR_ARG && all_a5(g_out, ob), "%s: workers -1: %d", nm, (int)st);
                CHECK(g_pool.calls == calls0 && g_pool.tasks == tasks0,
                      "%s: a bad call ran %d parallel_for calls, %d tasks", nm,
                      g_pool.calls - calls0, g_pool.tasks - tasks0);
            }
        free(blob);
    }
    qmx_test_rng_state = rng;
}

/* ---- qmx_calib.h: absmax (and fp8 delayed scaling) in tasks, merged exactly ---- */
static void absmax_task(void *arg, int task, int worker) {
    g_job *j = (g_job *)arg;
    (void)worker;
    if (task < 64 &&
        qmx_absmax_f32_run(j->x, j->count, (size_t)task, (size_t)task + 1, j->y + task) != QMX_OK)
        j->failed[task] = 1;
}
static void absmax_cases(void) {
#if PAR_SMALL
    static const size_t ns[4] = {1, 1000, 2 * QMX_TASK_ELEMS, 2 * QMX_TASK_ELEMS + 5};
#else
    static const size_t ns[5] = {1, 1000, 2 * QMX_TASK_ELEMS, 3 * QMX_TASK_ELEMS + 5,
                                 130 * QMX_TASK_ELEMS + 77}; /* > 64 tasks: runs of 3 */
#endif
    size_t maxn = ns[sizeof ns / sizeof ns[0] - 1], k, i;
    float *x = (float *)malloc(maxn * 4), part[64];
    if (!x) { CHECK(0, "malloc"); return; }
    for (i = 0; i < maxn; i++) x[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.013f;
    for (k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int v;
        for (v = 0; v < 3; v++) { /* plain, a -Inf near the end, a NaN in the middle */
            size_t n = ns[k], nt = 0;
            float ref = -1.0f, got, keep = 0.0f;
            size_t at = v == 1 ? n - 1 : n / 2;
            int w, wi, calls0;
            qmx_executor ex = QMX_ZERO_INIT;
            qmx_fp8_delayed d0, d1;
            float h0[4], h1[4], s0 = 0.0f, s1 = 0.0f;
            qmx_status st;
            if (v) { /* -Inf and NaN computed at run time */
                keep = x[at];
                x[at] = v == 1 ? -(x[1] * 0.0f + 3.0e38f) * 4.0f : (x[0] - x[0]) / (x[1] - x[1]);
            }
            CHECK(qmx_absmax_f32(x, n, &ref) == QMX_OK, "serial absmax");
            CHECK(qmx_array_tasks(n, &nt) == QMX_OK, "tasks");
            for (wi = 0; wi < PAR_NW; wi++) {
                g_job j;
                w = par_wlist[wi];
                par_workers_now = w;
                if (nt <= 64) { /* range calls: a partial per task, merged by qmx_absmax_f32 */
                    memset(&j, 0, sizeof j);
                    j.x = x; j.count = n; j.y = part;
                    par_for(&g_pool, (int)nt, absmax_task, &j);
                    got = 7.0f;
                    CHECK(!g_bad(&j) && qmx_absmax_f32(part, nt, &got) == QMX_OK &&
                              memcmp(&got, &ref, 4) == 0,
                          "absmax n %u (case %d), %d workers, range calls", (unsigned)n, v, w);
                }
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
                got = 7.0f;
                st = qmx_absmax_f32_exec(x, n, &got, &ex);
                CHECK(st == QMX_OK && memcmp(&got, &ref, 4) == 0,
                      "absmax n %u (case %d), %d workers, _exec: %d", (unsigned)n, v, w, (int)st);
                CHECK(qmx_fp8_delayed_init(&d0, QMX_FP8_E4M3FN, QMX_DELAYED_AQT, 0, h0, 4) == QMX_OK &&
                          qmx_fp8_delayed_init(&d1, QMX_FP8_E4M3FN, QMX_DELAYED_AQT, 0, h1, 4) == QMX_OK,
                      "delayed init");
                st = qmx_fp8_delayed_update(&d0, x, n, &s0);
                CHECK(qmx_fp8_delayed_update_exec(&d1, x, n, &s1, &ex) == st &&
                          memcmp(&s0, &s1, 4) == 0 && memcmp(h0, h1, sizeof h0) == 0 &&
                          memcmp(&d0.scale, &d1.scale, 4) == 0 && memcmp(&d0.bound, &d1.bound, 4) == 0,
                      "fp8 delayed n %u (case %d), %d workers", (unsigned)n, v, w);
            }
            /* bad calls */
            got = 7.0f;
            calls0 = g_pool.calls;
            CHECK(qmx_absmax_f32_run(x, n, 0, nt + 1, &got) == QMX_ERR_ARG && got == 7.0f,
                  "absmax: range past the tasks");
            CHECK(qmx_absmax_f32_run(x, n, nt, nt - 1, &got) == QMX_ERR_ARG && got == 7.0f,
                  "absmax: reversed range");
            CHECK(qmx_absmax_f32_run(x, 0, 0, 0, &got) == QMX_ERR_SIZE && got == 7.0f,
                  "absmax: n 0");
            ex.parallel_for = NULL; ex.workers = 2;
            CHECK(qmx_absmax_f32_exec(x, n, &got, &ex) == QMX_ERR_NULL && got == 7.0f,
                  "absmax: NULL parallel_for");
            ex.parallel_for = par_for; ex.workers = -2;
            CHECK(qmx_absmax_f32_exec(x, n, &got, &ex) == QMX_ERR_ARG && got == 7.0f,
                  "absmax: negative workers");
            CHECK(qmx_fp8_delayed_update_exec(&d1, x, n, &s1, &ex) == QMX_ERR_ARG &&
                      memcmp(h0, h1, sizeof h0) == 0, "delayed: negative workers");
            CHECK(g_pool.calls == calls0, "absmax: a bad call ran tasks");
            if (v) x[at] = keep;
        }
    }
    free(x);
}

/* ---- qmx_observer_update_exec: runs of groups, the serial call's bits for every method ---- */
static void observer_cases(void) {
    static const struct { int g; size_t outer, len, inner, block; } lay[4] = {
        {QMX_PER_CHANNEL, 300, 37, 1, 0},   /* 37 groups: 37 tasks of 1 */
        {QMX_PER_CHANNEL, 3, 150, 25, 0},   /* 150 groups: 50 tasks of 3 */
        {QMX_PER_BLOCK, 41, 100, 1, 16},    /* 41 * 7 groups, ragged blocks */
        {QMX_PER_TENSOR, 0, 0, 0, 0},       /* 1 group: the serial call */
    };
    static const qmx_calib_method ms[7] = {QMX_CALIB_ABSMAX, QMX_CALIB_MINMAX,
                                           QMX_CALIB_MOVING_MINMAX, QMX_CALIB_MEAN_ABSMAX,
                                           QMX_CALIB_ABSMEAN, QMX_CALIB_RMS, QMX_CALIB_FIXED};
    enum { NX = 12000, NG = 300 };
    static float x[3][NX];
    static qmx_calib_stat s0[NG], s1[NG], keep[NG];
    size_t l, i;
    int b;
    for (b = 0; b < 3; b++)
        for (i = 0; i < NX; i++)
            x[b][i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * (0.0013f + 0.001f * (float)b);
    for (l = 0; l < 4; l++) {
        int m;
        for (m = 0; m < 7; m++) {
            qmx_qconfig q = QMX_ZERO_INIT;
            qmx_calib_config cc = QMX_ZERO_INIT;
            qmx_observer o0, o1;
            qmx_executor ex = QMX_ZERO_INIT;
            size_t count = lay[l].g == QMX_PER_TENSOR ? 5000 : lay[l].outer * lay[l].len * lay[l].inner;
            size_t ng = 0;
            int w, calls0;
            qmx_status st;
            q.granularity = (qmx_granularity)lay[l].g;
            q.outer = lay[l].outer; q.axis_len = lay[l].len; q.inner = lay[l].inner;
            q.block_size = lay[l].block;
            cc.method = ms[m];
            if (ms[m] == QMX_CALIB_ABSMEAN) cc.p = 2;
            if (ms[m] == QMX_CALIB_MOVING_MINMAX) cc.momentum = 0.3f;
            if (ms[m] == QMX_CALIB_FIXED) { cc.lo = -2.0f; cc.hi = 3.0f; }
            CHECK(count <= NX && qmx_qparams_count(&q, count, &ng) == QMX_OK && ng <= NG,
                  "observer layout %u", (unsigned)l);
            CHECK(qmx_observer_init(&o0, &cc, &q, count, s0, NG) == QMX_OK, "init");
            for (b = 0; b < 3; b++)
                CHECK(qmx_observer_update(&o0, x[b], count) == QMX_OK, "serial update");
            for (w = 1; w <= 8; w++) {
                if (w > 4 && w < 8) continue;
                par_workers_now = w;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
                CHECK(qmx_observer_init(&o1, &cc, &q, count, s1, NG) == QMX_OK, "init");
                for (b = 0; b < 3; b++) {
                    st = qmx_observer_update_exec(&o1, x[b], count, &ex);
                    CHECK(st == QMX_OK, "update_exec: %d", (int)st);
                }
                CHECK(memcmp(s0, s1, ng * sizeof s0[0]) == 0,
                      "observer layout %u, method %d, %d workers: records differ from the serial call",
                      (unsigned)l, (int)ms[m], w);
            }
            /* bad calls: a status, every record untouched, no task */
            memcpy(keep, s1, sizeof keep);
            calls0 = g_pool.calls;
            ex.parallel_for = NULL; ex.workers = 2;
            st = qmx_observer_update_exec(&o1, x[0], count, &ex);
            CHECK(st == QMX_ERR_NULL, "observer: NULL parallel_for: %d", (int)st);
            memcpy(s1, keep, sizeof keep);
            ex.parallel_for = par_for; ex.workers = -1;
            st = qmx_observer_update_exec(&o1, x[0], count, &ex);
            CHECK(st == QMX_ERR_ARG, "observer: negative workers: %d", (int)st);
            memcpy(s1, keep, sizeof keep);
            ex.workers = 3;
            st = qmx_observer_update_exec(&o1, x[0], count - 1, &ex);
            CHECK(st == QMX_ERR_SHAPE, "observer: count: %d", (int)st);
            x[1][count / 2] = x[1][0] / (x[2][0] - x[2][0]); /* +-Inf */
            st = qmx_observer_update_exec(&o1, x[1], count, &ex);
            CHECK(st == QMX_ERR_NONFINITE, "observer: Inf input: %d", (int)st);
            x[1][count / 2] = 1.0f;
            CHECK(memcmp(keep, s1, sizeof keep) == 0 &&
                      g_pool.calls == calls0,
                  "observer layout %u, method %d: a bad call wrote or ran tasks", (unsigned)l,
                  (int)ms[m]);
            if (lay[l].g != QMX_PER_TENSOR && ms[m] >= QMX_CALIB_MOVING_MINMAX &&
                ms[m] != QMX_CALIB_FIXED) { /* a batch that overflows one record: refused */
                size_t at = count - 1;
                float big = x[2][0] * 0.0f + 3.0e38f;
                float sv = x[2][at];
                x[2][at] = ms[m] == QMX_CALIB_MOVING_MINMAX ? -big : big;
                if (ms[m] == QMX_CALIB_MOVING_MINMAX || ms[m] == QMX_CALIB_MEAN_ABSMAX)
                    s1[ng - 1].min = s1[ng - 1].max = s1[ng - 1].sum = big; /* EMA / sum overflow */
                memcpy(keep, s1, sizeof keep);
                calls0 = g_pool.calls;
                st = qmx_observer_update_exec(&o1, x[2], count, &ex);
                CHECK(st == QMX_ERR_NONFINITE && memcmp(keep, s1, sizeof keep) == 0,
                      "observer layout %u, method %d: overflow refused: %d", (unsigned)l,
                      (int)ms[m], (int)st);
                memcpy(s0, keep, sizeof keep);
                st = qmx_observer_update(&o0, x[2], count);
                CHECK(st == QMX_ERR_NONFINITE, "serial: overflow refused too: %d", (int)st);
                x[2][at] = sv;
            }
        }
    }
}

/* ---- qmx_histogram_update_exec: counts per worker, the serial call's histogram ---- */
static void histogram_cases(void) {
    enum { NB = 2048 };
    static uint64_t b0[NB], b1[NB], kb[NB];
    static uint64_t hws[PAR_MAX_WORKERS * NB];
    const size_t n1 = 2 * QMX_TASK_ELEMS + 123, n2 = QMX_TASK_ELEMS + 7, n3 = 1000;
    float *x = (float *)malloc(n1 * 4);
    size_t i, nbins;
    int k;
    if (!x) { CHECK(0, "malloc"); return; }
    for (k = 0; k < 2; k++) {
        int w;
        nbins = k ? NB : 64;
        for (w = 1; w <= 8; w++) {
            qmx_histogram h0, h1;
            qmx_executor ex = QMX_ZERO_INIT;
            size_t need = 0;
            int b, calls0;
            qmx_status st;
            if (w > 4 && w < 8) continue;
            par_workers_now = w;
            ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
            CHECK(qmx_histogram_exec_workspace_size(nbins, &ex, &need) == QMX_OK &&
                      need == (w > 1 ? (size_t)w * nbins * 8 : 0) && need <= sizeof hws,
                  "histogram workspace %u", (unsigned)need);
            CHECK(qmx_histogram_init(&h0, b0, nbins) == QMX_OK &&
                      qmx_histogram_init(&h1, b1, nbins) == QMX_OK, "histogram init");
            for (b = 0; b < 3; b++) { /* growing ranges: the bins merge between batches */
                size_t n = b == 0 ? n1 : b == 1 ? n2 : n3;
                for (i = 0; i < n; i++)
                    x[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * (0.001f + 0.05f * (float)b);
                CHECK(qmx_histogram_update(&h0, x, n) == QMX_OK, "serial histogram");
                st = qmx_histogram_update_exec(&h1, x, n, &ex, hws, need);
                CHECK(st == QMX_OK && memcmp(b0, b1, nbins * 8) == 0 &&
                          memcmp(&h0.width, &h1.width, 4) == 0 &&
                          memcmp(&h0.absmax, &h1.absmax, 4) == 0 && h0.total == h1.total,
                      "histogram %u bins, batch %d, %d workers: differs from the serial call (%d)",
                      (unsigned)nbins, b, w, (int)st);
            }
            /* bad calls: a status, h untouched, no task */
            memcpy(kb, b1, sizeof kb);
            calls0 = g_pool.calls;
            x[5] = x[0] / (x[1] - x[1]); /* +-Inf or NaN */
            st = qmx_histogram_update_exec(&h1, x, n1, &ex, hws, need);
            CHECK(st == QMX_ERR_NONFINITE, "histogram: non-finite: %d", (int)st);
            x[5] = 1.0f;
            if (w > 1) {
                calls0 = g_pool.calls;
                st = qmx_histogram_update_exec(&h1, x, n1, &ex, hws, need - 1);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "histogram: workspace one byte short: %d",
                      (int)st);
                st = qmx_histogram_update_exec(&h1, x, n1, &ex, NULL, need);
                CHECK(st == QMX_ERR_NULL, "histogram: NULL workspace: %d", (int)st);
                ex.parallel_for = NULL;
                st = qmx_histogram_update_exec(&h1, x, n1, &ex, hws, need);
                CHECK(st == QMX_ERR_NULL, "histogram: NULL parallel_for: %d", (int)st);
                ex.parallel_for = par_for; ex.workers = -1;
                st = qmx_histogram_update_exec(&h1, x, n1, &ex, hws, need);
                CHECK(st == QMX_ERR_ARG, "histogram: negative workers: %d", (int)st);
                CHECK(g_pool.calls == calls0, "histogram: a bad call ran tasks");
            }
            CHECK(memcmp(kb, b1, sizeof kb) == 0 && h1.total == h0.total,
                  "histogram: a bad call wrote");
        }
    }
    free(x);
}

/* ---- per-tensor qmx_observer_update_exec: chunk min / max merged, the serial call's bits ---- */
/* Batch b of n floats: mixed signs with the only min in the middle of the last chunk;
 * non-negative with -0 entries (min +0); a NaN in the middle of the last chunk, a -Inf in the
 * middle of the one before, a +Inf last; all +3e38 (an EMA near FLT_MAX); +3e38 with one
 * -3e38 in the last chunk (the EMA of the min overflows, a mean-of-absmax sum overflows);
 * mixed again with the only max first. */
#define OBT_BATCHES 8
static void obt_fill(float *x, size_t n, int b) {
    size_t i, last0 = (n - 1) / QMX_TASK_ELEMS * QMX_TASK_ELEMS, late = last0 + (n - last0) / 2;
    size_t prev = last0 >= QMX_TASK_ELEMS ? last0 - QMX_TASK_ELEMS / 2 : n / 3;
    float s = 0.0013f * (float)(b + 1);
    for (i = 0; i < n; i++) {
        uint32_t h = (uint32_t)i * 2654435761u + (uint32_t)b * 40503u;
        int v = (int)((h >> 11) % 20001u) - 10000;
        x[i] = (float)v * s;
        if (b == 1) x[i] = i % 7 == 3 ? -0.0f : qmx_test_bits_f32(qmx_test_f32_bits(x[i]) & 0x7FFFFFFFu);
        if (b == 5 || b == 6) x[i] = 3.0e38f;
    }
    if (b == 0) x[late] = -20.0f;                           /* below every other value */
    if (b == 2) x[late] = qmx_test_bits_f32(0x7FC00000u);   /* NaN */
    if (b == 3) x[prev] = qmx_test_bits_f32(0xFF800000u);   /* -Inf */
    if (b == 4) x[n - 1] = qmx_test_bits_f32(0x7F800000u);  /* +Inf */
    if (b == 6) x[late] = -3.0e38f;
    if (b == 7) x[0] = 1000.0f;                             /* above every other value */
}
static void observer_tensor_cases(void) {
#if PAR_SMALL
    static const size_t ns[2] = {1000, 2 * QMX_TASK_ELEMS + 5};
#else
    static const size_t ns[3] = {1000, 3 * QMX_TASK_ELEMS + 5,
                                 130 * QMX_TASK_ELEMS + 77}; /* > 64 chunks: runs of 3 */
#endif
    /* every method; absmean with each p (the sums: pieces merged in order, one task each) */
    enum { NM = 10 };
    static const qmx_calib_method ms[NM] = {QMX_CALIB_ABSMAX, QMX_CALIB_MINMAX,
                                            QMX_CALIB_MOVING_MINMAX, QMX_CALIB_MEAN_ABSMAX,
                                            QMX_CALIB_ABSMEAN, QMX_CALIB_RMS, QMX_CALIB_FIXED,
                                            QMX_CALIB_ABSMEAN, QMX_CALIB_ABSMEAN, QMX_CALIB_ABSMEAN};
    static const int ps[NM] = {0, 0, 0, 0, 3, 0, 0, 1, 2, 4};
    const size_t maxn = ns[sizeof ns / sizeof ns[0] - 1];
    float *x = (float *)malloc(maxn * 4);
    size_t k;
    if (!x) { CHECK(0, "malloc"); return; }
    for (k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        const size_t n = ns[k];
        qmx_observer o0[NM], o1[NM][PAR_NW];
        qmx_calib_stat s0[NM], s1[NM][PAR_NW], keep;
        qmx_qconfig q = QMX_ZERO_INIT;
        int m, wi, b;
        for (m = 0; m < NM; m++) {
            qmx_calib_config cc = QMX_ZERO_INIT;
            cc.method = ms[m];
            cc.p = ps[m];
            if (ms[m] == QMX_CALIB_MOVING_MINMAX) cc.momentum = 0.3f;
            if (ms[m] == QMX_CALIB_FIXED) { cc.lo = -2.0f; cc.hi = 3.0f; }
            CHECK(qmx_observer_init(&o0[m], &cc, &q, n, &s0[m], 1) == QMX_OK, "init");
            for (wi = 0; wi < PAR_NW; wi++)
                CHECK(qmx_observer_init(&o1[m][wi], &cc, &q, n, &s1[m][wi], 1) == QMX_OK, "init");
        }
        for (b = 0; b < OBT_BATCHES; b++) {
            obt_fill(x, n, b);
            for (m = 0; m < NM; m++) {
                qmx_status st0 = qmx_observer_update(&o0[m], x, n);
                if (b >= 2 && b <= 4)
                    CHECK(st0 == QMX_ERR_NONFINITE, "serial: non-finite batch %d: %d", b, (int)st0);
                if (b == 6 && (ms[m] == QMX_CALIB_MOVING_MINMAX || ms[m] == QMX_CALIB_MEAN_ABSMAX))
                    CHECK(st0 == QMX_ERR_NONFINITE, "serial: overflowing batch: %d", (int)st0);
                if (b == 5 && (ms[m] == QMX_CALIB_ABSMEAN || ms[m] == QMX_CALIB_RMS))
                    CHECK(st0 == QMX_ERR_NONFINITE, "serial: overflowing sum: %d", (int)st0);
                for (wi = 0; wi < PAR_NW; wi++) {
                    qmx_executor ex = QMX_ZERO_INIT;
                    qmx_status st1;
                    int calls0 = g_pool.calls, tasks0 = g_pool.tasks;
                    size_t nt = (n + QMX_TASK_ELEMS - 1) / QMX_TASK_ELEMS, per = (nt + 63) / 64;
                    int split = par_wlist[wi] > 1 && nt > 1;   /* ceil(nt / per) runs / pieces */
                    /* one thread (emulated targets, valgrind): the runs are a function of n
                     * only, so 1, 3 and 8 workers are the same calls: 3 only */
                    if (PAR_SMALL && !PAR_THREADS && par_wlist[wi] != 3) continue;
                    par_workers_now = par_wlist[wi];
                    ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = par_wlist[wi];
                    st1 = qmx_observer_update_exec(&o1[m][wi], x, n, &ex);
                    CHECK(g_pool.calls == calls0 + split &&
                              g_pool.tasks == tasks0 + (split ? (int)((nt + per - 1) / per) : 0),
                          "per tensor, n %u, method %d, %d workers: %d calls, %d tasks", (unsigned)n,
                          (int)ms[m], par_wlist[wi], g_pool.calls - calls0, g_pool.tasks - tasks0);
                    CHECK(st1 == st0 && memcmp(&s0[m], &s1[m][wi], sizeof s0[m]) == 0,
                          "per tensor, n %u, method %d, batch %d, %d workers: status %d / %d, "
                          "min %a / %a max %a / %a sum %a / %a comp %a / %a p %d", (unsigned)n,
                          (int)ms[m], b, par_wlist[wi], (int)st1, (int)st0,
                          (double)s1[m][wi].min, (double)s0[m].min, (double)s1[m][wi].max,
                          (double)s0[m].max, (double)s1[m][wi].sum, (double)s0[m].sum,
                          (double)s1[m][wi].comp, (double)s0[m].comp, ps[m]);
                }
            }
        }
        /* bad calls: a status, the record untouched, no task */
        for (m = 0; m < NM; m++) {
            qmx_executor ex = QMX_ZERO_INIT;
            qmx_observer *o = &o1[m][PAR_NW - 1];
            int calls0 = g_pool.calls;
            keep = s1[m][PAR_NW - 1];
            obt_fill(x, n, 2);   /* NaN: the executor's errors come first */
            ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = -1;
            CHECK(qmx_observer_update_exec(o, x, n, &ex) == QMX_ERR_ARG, "negative workers");
            ex.workers = 3; ex.parallel_for = NULL;
            CHECK(qmx_observer_update_exec(o, x, n, &ex) == QMX_ERR_NULL, "NULL parallel_for");
            ex.parallel_for = par_for;
            CHECK(qmx_observer_update_exec(o, x, n - 1, &ex) == QMX_ERR_SHAPE, "count");
            CHECK(qmx_observer_update_exec(o, NULL, n, &ex) == QMX_ERR_NULL, "NULL x");
            CHECK(memcmp(&keep, &s1[m][PAR_NW - 1], sizeof keep) == 0 && g_pool.calls == calls0,
                  "per tensor, n %u, method %d: a bad call wrote or ran tasks", (unsigned)n,
                  (int)ms[m]);
        }
    }
    free(x);
}

/* ---- qmx_torch_histogram_update_exec: histc counted per worker, the serial histogram ---- */
static int th_same(const qmx_torch_histogram *a, const qmx_torch_histogram *b) {
    return a->seen == b->seen && memcmp(&a->min_val, &b->min_val, 4) == 0 &&
           memcmp(&a->max_val, &b->max_val, 4) == 0 &&
           memcmp(a->bins, b->bins, a->n_bins * sizeof(float)) == 0;
}
/* update u of sequence sq: its length and values */
static size_t th_fill(float *x, int sq, int u) {
    static const size_t len[2][5] = {
        {2 * QMX_TASK_ELEMS + 123, QMX_TASK_ELEMS + 7, 3 * QMX_TASK_ELEMS + 5, 2 * QMX_TASK_ELEMS, 1000},
        {2 * QMX_TASK_ELEMS + 1, QMX_TASK_ELEMS + 9, 2 * QMX_TASK_ELEMS + 77, 1000, 3 * QMX_TASK_ELEMS}};
    size_t i, n = len[sq][u];
    for (i = 0; i < n; i++) {
        uint32_t hh = (uint32_t)i * 2654435761u + (uint32_t)(sq * 5 + u) * 97531u;
        int v = (int)((hh >> 11) % 20001u) - 10000;   /* the same data for every worker count */
        float r = (float)v * 0.0013f;
        if (sq == 0) {   /* spread; inside the range (bins added); growth (combine); equal; small */
            x[i] = u == 0 ? r : u == 1 ? r * 0.5f : u == 2 ? r * 5.0f + 3.0f : u == 3 ? 2.5f : r * 9.0f;
        } else {         /* constant, constant again (restart), spread, spread wider, narrower */
            x[i] = u <= 1 ? 3.0f : u == 2 ? r : u == 3 ? r * 40.0f : r * 0.25f;
        }
    }
    if (sq == 0 && u == 0) x[n - 2] = -14.5f;   /* the only min, in the last chunk */
    if (sq == 1 && u == 2) x[n - 2] = 14.5f;    /* the only max, in the last chunk */
    return n;
}
static void torch_histogram_cases(void) {
#if PAR_SMALL
    static const size_t nbs[1] = {2047};
    const int nsq = 2;
#else
    static const size_t nbs[3] = {2047, 1536, 100};   /* 2047: linspace's vector last edge */
    const int nsq = 3;
#endif
    static float buf0[2 * 2048], buf1[2 * 2048], kb[2 * 2048];
    static uint64_t hws[PAR_MAX_WORKERS * 2048];
    const size_t maxn = 3 * QMX_TASK_ELEMS + 5;
    float *x = (float *)malloc(maxn * 4);
    size_t k, need = 0;
    int wi;
    qmx_executor ex = QMX_ZERO_INIT;
    if (!x) { CHECK(0, "malloc"); return; }
    CHECK(qmx_torch_histogram_exec_workspace_size(2047, NULL, &need) == QMX_OK && need == 0,
          "workspace, no executor");
    ex.workers = 3;
    CHECK(qmx_torch_histogram_exec_workspace_size(2047, &ex, &need) == QMX_OK &&
              need == 3 * 2047 * 8, "workspace, 3 workers: %u", (unsigned)need);
    CHECK(qmx_torch_histogram_exec_workspace_size(1, &ex, &need) == QMX_ERR_SIZE, "1 bin");
    ex.workers = -1;
    CHECK(qmx_torch_histogram_exec_workspace_size(2047, &ex, &need) == QMX_ERR_ARG, "workers -1");
    for (k = 0; k < sizeof nbs / sizeof nbs[0]; k++) {
        int sq;
        /* sequences 0 and 1 with upsample_rate 16: the cumsum of the upsampled counts (total x
         * 16) stays below 2^24, exact in float32, so no bin goes negative; sequence 2 (upsample
         * 128, torch's default, and 6 updates) also goes past 2^24: the combine's float32 cumsum
         * then leaves bins of -1/128 (2047 bins: 222 after update 4, as torch 1.13 does), and
         * update 5 runs over them (QMX_OK, as torch): the executor must give the same state */
        for (sq = 0; sq < nsq; sq++)   /* PAR_SMALL: sequences 0 and 1 */
            for (wi = 0; wi < PAR_NW; wi++) {
                qmx_torch_histogram h0, h1;
                int u, w = par_wlist[wi], calls0, from_neg = 0;
                uint32_t ur = sq == 2 ? 128u : 16u;
                qmx_status st0, st1;
                if (PAR_SMALL && !PAR_THREADS && w != 3) continue;   /* one thread: as 1, 8 */
                par_workers_now = w;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = w;
                CHECK(qmx_torch_histogram_exec_workspace_size(nbs[k], &ex, &need) == QMX_OK &&
                          need == (w > 1 ? (size_t)w * nbs[k] * 8 : 0), "workspace");
                CHECK(qmx_torch_histogram_init(&h0, buf0, sizeof buf0 / 4, nbs[k], ur) == QMX_OK &&
                          qmx_torch_histogram_init(&h1, buf1, sizeof buf1 / 4, nbs[k], ur) == QMX_OK,
                      "torch histogram init");
                for (u = 0; u < (sq == 2 ? 6 : 5); u++) {
                    size_t n = th_fill(x, sq == 2 ? 0 : sq, u % 5), b;
                    for (b = 0; b < nbs[k] && !from_neg; b++) from_neg = h0.bins[b] < 0.0f;
                    st0 = qmx_torch_histogram_update(&h0, x, n);
                    st1 = qmx_torch_histogram_update_exec(&h1, x, n, &ex, hws, need);
                    CHECK(st0 == QMX_OK && st1 == st0 && th_same(&h0, &h1),
                          "torch histogram %u bins, sequence %d, update %d, %d workers: %d / %d, "
                          "min %a / %a, max %a / %a", (unsigned)nbs[k], sq, u, w, (int)st1,
                          (int)st0, (double)h1.min_val, (double)h0.min_val,
                          (double)h1.max_val, (double)h0.max_val);
                }
                CHECK(from_neg == (sq == 2 && nbs[k] == 2047),
                      "torch histogram %u bins, sequence %d: an update over negative bins: %d",
                      (unsigned)nbs[k], sq, from_neg);
                if (sq == 2) continue;
                /* bad calls: a status, the histogram untouched, no task (but the NaN scan) */
                memcpy(kb, buf1, nbs[k] * 4);
                st1 = qmx_torch_histogram_update_exec(&h1, x, 0, &ex, hws, need);
                CHECK(st1 == QMX_ERR_SIZE, "torch histogram: n 0: %d", (int)st1);
                x[maxn - 3] = qmx_test_bits_f32(0x7FC00000u);   /* NaN in the last chunk */
                st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex, hws, need);
                CHECK(st1 == QMX_ERR_NONFINITE, "torch histogram: NaN: %d", (int)st1);
                calls0 = g_pool.calls;
                if (w > 1) {
                    st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex, hws, need - 1);
                    CHECK(st1 == QMX_ERR_BUFFER_TOO_SMALL, "torch histogram: 1 byte short: %d",
                          (int)st1);
                    st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex, NULL, need);
                    CHECK(st1 == QMX_ERR_NULL, "torch histogram: NULL workspace: %d", (int)st1);
                    st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex,
                                                          (unsigned char *)hws + 4, need);
                    CHECK(st1 == QMX_ERR_ARG, "torch histogram: misaligned workspace: %d",
                          (int)st1);
                    ex.parallel_for = NULL;
                    st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex, hws, need);
                    CHECK(st1 == QMX_ERR_NULL, "torch histogram: NULL parallel_for: %d", (int)st1);
                    ex.parallel_for = par_for; ex.workers = -1;
                    st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex, hws, need);
                    CHECK(st1 == QMX_ERR_ARG, "torch histogram: negative workers: %d", (int)st1);
                    h1.work = NULL;
                    st1 = qmx_torch_histogram_update_exec(&h1, x, maxn, &ex, hws, need);
                    CHECK(st1 == QMX_ERR_NULL, "torch histogram: NULL work: %d", (int)st1);
                    h1.work = buf1 + nbs[k];
                }
                CHECK(th_same(&h0, &h1) && memcmp(kb, buf1, nbs[k] * 4) == 0 &&
                          g_pool.calls == calls0,
                      "torch histogram %u bins, %d workers: a bad call wrote or ran tasks",
                      (unsigned)nbs[k], w);
            }
    }
    free(x);
#if !PAR_SMALL
    {   /* one bin past 2^24: the serial + 1.0f stops at 2^24, the integer counts are saturated */
        const size_t n = ((size_t)1 << 24) + 5;
        float *y = (float *)malloc(n * 4);
        qmx_torch_histogram h0, h1;
        size_t i;
        if (!y) { CHECK(0, "malloc"); return; }
        /* bin 0: 2^24 + 3 values (the serial float count: 2^24; (float)(2^24 + 3) would be
         * 2^24 + 4), the last bin 2 */
        for (i = 0; i < n; i++) y[i] = i < 2 ? 7.25f : 7.0f;
        CHECK(qmx_torch_histogram_init(&h0, buf0, sizeof buf0 / 4, 2048, 128) == QMX_OK &&
                  qmx_torch_histogram_init(&h1, buf1, sizeof buf1 / 4, 2048, 128) == QMX_OK,
              "torch histogram init");
        par_workers_now = 4;
        ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 4;
        CHECK(qmx_torch_histogram_exec_workspace_size(2048, &ex, &need) == QMX_OK, "workspace");
        CHECK(qmx_torch_histogram_update(&h0, y, n) == QMX_OK &&
                  qmx_torch_histogram_update_exec(&h1, y, n, &ex, hws, need) == QMX_OK &&
                  th_same(&h0, &h1) && h0.bins[0] == 16777216.0f,
              "torch histogram, 2^24 + 5 values: bin 0 %a / %a", (double)h1.bins[0],
              (double)h0.bins[0]);
        free(y);
    }
#endif
}

/* ---- KV-cache attention decode: a task per KV head (its query group) ---- */
typedef struct kv_fmt {
    qmx_dtype k, v;
    qmx_kv_axis kax, vax;
    int rotate, float_query;
    size_t window;
} kv_fmt;
static const kv_fmt kv_fmts[] = {
    {QMX_INT8, QMX_INT8, QMX_KV_HEADS_AND_DKV, QMX_KV_HEADS_AND_DKV, 0, 0, 0},
    {QMX_INT4, QMX_INT4, QMX_KV_DKV, QMX_KV_DKV, 0, 0, 0},
    {QMX_FP8_E4M3FN, QMX_FP8_E5M2, QMX_KV_DKV, QMX_KV_HEADS_AND_DKV, 0, 0, 0},
    {QMX_FLOAT32, QMX_FLOAT32, QMX_KV_HEADS_AND_DKV, QMX_KV_HEADS_AND_DKV, 0, 0, 0},
    {QMX_INT8, QMX_INT8, QMX_KV_BLOCK, QMX_KV_BLOCK, 0, 0, 0},
    {QMX_INT4, QMX_INT8, QMX_KV_BLOCK, QMX_KV_DKV, 0, 1, 0},
    {QMX_INT8, QMX_INT4, QMX_KV_DKV, QMX_KV_DKV, 1, 0, 23},
};
static const char *const kv_fmt_name[] = {"int8", "int4 dkv", "e4m3/e5m2", "float32",
                                          "int8 block", "int4 block, float query",
                                          "int8/int4 rotate, window"};

typedef struct kv_job {
    const qmx_kv_cache *c;
    const float *q;
    size_t nh;
    const qmx_kv_attn_opts *o;
    float *out;
    size_t slice;
    unsigned char bad[PAR_MAX_WORKERS];
} kv_job;
static void kv_task(void *arg, int task, int worker) {
    kv_job *j = (kv_job *)arg;
    if (qmx_kv_attention_run(j->c, j->q, j->nh, j->o, j->out, (size_t)task, (size_t)task + 1,
                             g_ws + (size_t)worker * j->slice, j->slice) != QMX_OK)
        j->bad[worker] = 1;
}

static void kv_fill(float *x, size_t n, float amp) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)((int)(qmx_test_rand() % 2001u) - 1000) * amp;
}

/* qmx_kv_prefill of P tokens through the executor (tiled blocks: a task per KV head; untiled
 * tokens: the decode's tasks), full and minimal workspaces, against the serial prefill: outputs
 * and cache storage bit for bit. kv: [T][nkv][d] keys then values. */
static void kv_prefill_case(const qmx_kv_config *cfg, const kv_fmt *F, const float *kv,
                            size_t T, size_t nh, const char *name) {
    const int *workers = par_wlist;
    const size_t P = PAR_SMALL ? 19 : 45, d = cfg->head_dim, nkv = cfg->n_kv_heads;
    size_t sb = 0, ws0 = 0, wsx = 0, ob = P * nh * d * 4;
    unsigned char *st_ref = NULL, *st_got = NULL, *o_ref = NULL, *o_got = NULL;
    float *q = NULL;
    qmx_kv_cache c, cref;
    qmx_kv_attn_opts o = QMX_ZERO_INIT;
    qmx_executor ex = QMX_ZERO_INIT;
    qmx_status st;
    int wi, small;
    o.float_query = F->float_query; o.window = F->window;
    CHECK(qmx_kv_cache_storage_size(cfg, &sb) == QMX_OK, "kv prefill %s: storage", name);
    st_ref = (unsigned char *)malloc(sb); st_got = (unsigned char *)malloc(sb);
    o_ref = (unsigned char *)malloc(ob); o_got = (unsigned char *)malloc(ob);
    q = (float *)malloc(ob);
    if (!st_ref || !st_got || !o_ref || !o_got || !q) { CHECK(0, "malloc"); goto done; }
    kv_fill(q, P * nh * d, 0.002f);
    memset(st_ref, 0, sb);
    memset(o_ref, 0xA5, ob);
    CHECK(qmx_kv_prefill_workspace_size(cfg, nh, P, &ws0) == QMX_OK && ws0 <= g_ws_bytes,
          "kv prefill %s: workspace", name);
    st = qmx_kv_cache_init(&c, cfg, st_ref, sb);
    if (st == QMX_OK)
        st = qmx_kv_prefill(&c, kv, kv + T * nkv * d, P, q, nh, &o, (float *)(void *)o_ref,
                            g_ws, ws0);
    CHECK_EQ_INT(st, QMX_OK, "kv prefill %s %ux%u: serial", name, (unsigned)nkv,
                 (unsigned)(nh / nkv));
    cref = c;
    for (wi = 0; wi < PAR_NW; wi++)
        for (small = 0; small < 2; small++) {
            int calls0 = g_pool.calls;
            ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = workers[wi];
            par_workers_now = workers[wi];
            o.executor = &ex;
            /* small: the decode's workspace, blocks of 1 token (the decode's tasks) */
            st = small ? qmx_kv_attention_workspace_size_exec(cfg, nh, &ex, &wsx)
                       : qmx_kv_prefill_workspace_size_exec(cfg, nh, P, &ex, &wsx);
            CHECK(st == QMX_OK && wsx <= g_ws_bytes, "kv prefill %s: workspace %d", name, (int)st);
            memset(st_got, 0, sb);
            memset(o_got, 0xA5, ob);
            st = qmx_kv_cache_init(&c, cfg, st_got, sb);
            if (st == QMX_OK)
                st = qmx_kv_prefill(&c, kv, kv + T * nkv * d, P, q, nh, &o,
                                    (float *)(void *)o_got, g_ws + 5, wsx);
            CHECK(st == QMX_OK && c.n_tokens == P && memcmp(o_got, o_ref, ob) == 0 &&
                      memcmp(c.k, cref.k, sb - 64) == 0,   /* the storage from its aligned base */
                  "kv prefill %s %ux%u, %d workers%s: status %d, differs from the serial call",
                  name, (unsigned)nkv, (unsigned)(nh / nkv), workers[wi],
                  small ? ", small workspace" : "", (int)st);
            CHECK(workers[wi] >= 2 && nkv >= 2 ? g_pool.calls > calls0 : g_pool.calls == calls0,
                  "kv prefill %s, %d workers: parallel_for calls %d", name, workers[wi],
                  g_pool.calls - calls0);
            if (workers[wi] >= 2 && small) {   /* one byte short of the least: nothing done */
                memset(o_got, 0xA5, ob);
                st = qmx_kv_cache_init(&c, cfg, st_got, sb);
                if (st == QMX_OK)
                    st = qmx_kv_prefill(&c, kv, kv + T * nkv * d, P, q, nh, &o,
                                        (float *)(void *)o_got, g_ws, wsx - 1);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && c.n_tokens == 0 && all_a5(o_got, ob),
                      "kv prefill %s, %d workers: workspace one byte short: %d", name,
                      workers[wi], (int)st);
            }
        }
    /* bad executors: a status, nothing appended, out untouched */
    memset(o_got, 0xA5, ob);
    st = qmx_kv_cache_init(&c, cfg, st_got, sb);
    ex.parallel_for = NULL; ex.workers = 2; o.executor = &ex;
    if (st == QMX_OK)
        st = qmx_kv_prefill(&c, kv, kv + T * nkv * d, P, q, nh, &o, (float *)(void *)o_got,
                            g_ws, g_ws_bytes);
    CHECK(st == QMX_ERR_NULL && c.n_tokens == 0, "kv prefill: NULL parallel_for: %d", (int)st);
    ex.parallel_for = par_for; ex.workers = -3;
    st = qmx_kv_prefill(&c, kv, kv + T * nkv * d, P, q, nh, &o, (float *)(void *)o_got,
                        g_ws, g_ws_bytes);
    CHECK(st == QMX_ERR_ARG && c.n_tokens == 0 && all_a5(o_got, ob) &&
              qmx_kv_prefill_workspace_size_exec(cfg, nh, P, &ex, &wsx) == QMX_ERR_ARG,
          "kv prefill: negative workers: %d", (int)st);
done:
    free(st_ref); free(st_got); free(o_ref); free(o_got); free(q);
}

static void kv_cases(void) {
    static const size_t shapes[][2] = {{1, 4}, {3, 1}, {3, 4}, {8, 1}, {8, 4}}; /* kv, g */
    const int *workers = par_wlist;
    const size_t d = PAR_SMALL ? 32 : 64, T = PAR_SMALL ? 37 : 140;
    size_t f, s;
    for (f = 0; f < sizeof kv_fmts / sizeof kv_fmts[0]; f++)
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const kv_fmt *F = &kv_fmts[f];
            size_t nkv = shapes[s][0], g = shapes[s][1], nh = nkv * g, sb = 0, ws0 = 0, tws = 0;
            size_t nt = 0, ob = nh * d * 4, t, wsx = 0;
            qmx_kv_config cfg = QMX_ZERO_INIT;
            qmx_kv_cache c;
            qmx_kv_attn_opts o = QMX_ZERO_INIT;
            qmx_executor ex = QMX_ZERO_INIT;
            float *kv = NULL, *q = NULL;
            void *storage = NULL;
            int wi, calls0;
            qmx_status st;
            cfg.capacity = T + 3; cfg.n_kv_heads = nkv; cfg.head_dim = d;
            cfg.k_dtype = F->k; cfg.v_dtype = F->v; cfg.k_axis = F->kax; cfg.v_axis = F->vax;
            cfg.rotate = F->rotate;
            if (F->kax == QMX_KV_BLOCK && F->vax == QMX_KV_BLOCK) cfg.block_scale = QMX_KV_SCALE_F16;
            o.float_query = F->float_query; o.window = F->window;
            CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK, "kv %s: storage", kv_fmt_name[f]);
            storage = malloc(sb);
            kv = (float *)malloc(2 * T * nkv * d * sizeof(float));
            q = (float *)malloc(nh * d * sizeof(float));
            if (!storage || !kv || !q) { CHECK(0, "malloc"); free(storage); free(kv); free(q); return; }
            kv_fill(kv, 2 * T * nkv * d, 0.003f);
            kv_fill(q, nh * d, 0.002f);
            CHECK(qmx_kv_cache_init(&c, &cfg, storage, sb) == QMX_OK &&
                      qmx_kv_cache_append(&c, kv, kv + T * nkv * d, T) == QMX_OK,
                  "kv %s: init / append", kv_fmt_name[f]);
            CHECK(qmx_kv_attention_workspace_size(&cfg, nh, &ws0) == QMX_OK && ws0 <= g_ws_bytes &&
                      qmx_kv_attention_task_workspace_size(&cfg, nh, &tws) == QMX_OK &&
                      qmx_kv_attention_tasks(&c, nh, &nt) == QMX_OK && nt == nkv &&
                      tws * PAR_MAX_WORKERS <= g_ws_bytes && ob <= g_out_bytes,
                  "kv %s %ux%u: sizes", kv_fmt_name[f], (unsigned)nkv, (unsigned)g);
            out_fill(g_ref, ob);
            st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_ref, g_ws, ws0);
            CHECK_EQ_INT(st, QMX_OK, "kv %s %ux%u: serial", kv_fmt_name[f], (unsigned)nkv,
                         (unsigned)g);
            for (wi = 0; wi < PAR_NW; wi++) {   /* through the executor */
                /* one thread (emulated targets, valgrind): 3 workers (1 is the serial call, 8
                 * the same one-thread C with more workspace slices) */
                if (PAR_SMALL && !PAR_THREADS && workers[wi] != 3) continue;
                ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = workers[wi];
                par_workers_now = workers[wi];
                o.executor = &ex;
                CHECK(qmx_kv_attention_workspace_size_exec(&cfg, nh, &ex, &wsx) == QMX_OK &&
                          wsx <= g_ws_bytes && (workers[wi] >= 2 || wsx == ws0),
                      "kv %s: workspace, %d workers", kv_fmt_name[f], workers[wi]);
                out_fill(g_out, ob);
                calls0 = g_pool.calls;
                st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, wsx);
                CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                      "kv %s %ux%u, %d workers: status %d, differs from the serial call",
                      kv_fmt_name[f], (unsigned)nkv, (unsigned)g, workers[wi], (int)st);
                CHECK(g_pool.calls == calls0 + (workers[wi] >= 2 && nt >= 2),
                      "kv %s, %d workers: %d parallel_for calls", kv_fmt_name[f], workers[wi],
                      g_pool.calls - calls0);
                if (workers[wi] >= 2) {   /* one byte short: a status, out untouched */
                    out_fill(g_out, ob);
                    st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, wsx - 1);
                    CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(g_out, ob) &&
                              g_pool.calls == calls0 + (nt >= 2),
                          "kv %s, %d workers: workspace one byte short: %d", kv_fmt_name[f],
                          workers[wi], (int)st);
                }
            }
            o.executor = NULL;
            for (wi = 0; wi < PAR_NW && PAR_THREADS; wi++) {   /* range calls, a task each, on
                                                                 * 1..8 threads (one thread:
                                                                 * the single-task pass below) */
                kv_job j;
                int k, bad = 0;
                memset(&j, 0, sizeof j);
                j.c = &c; j.q = q; j.nh = nh; j.o = &o; j.out = (float *)(void *)g_out;
                j.slice = tws;
                par_workers_now = workers[wi];
                out_fill(g_out, ob);
                par_for(&g_pool, (int)nt, kv_task, &j);
                for (k = 0; k < PAR_MAX_WORKERS; k++) bad |= j.bad[k];
                CHECK(!bad && memcmp(g_out, g_ref, ob) == 0,
                      "kv %s %ux%u: range calls on %d threads differ", kv_fmt_name[f],
                      (unsigned)nkv, (unsigned)g, workers[wi]);
            }
            /* single tasks in a shuffled order, the exact task workspace at an odd address */
            out_fill(g_out, ob);
            par_shuffle(par_order, (int)nt);
            for (t = 0, st = QMX_OK; t < nt && st == QMX_OK; t++)
                st = qmx_kv_attention_run(&c, q, nh, &o, (float *)(void *)g_out,
                                          (size_t)par_order[t], (size_t)par_order[t] + 1,
                                          g_ws + 3, tws);
            CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                  "kv %s %ux%u: shuffled single tasks: %d", kv_fmt_name[f], (unsigned)nkv,
                  (unsigned)g, (int)st);
            /* bad calls: a status each, out untouched, no task run */
            out_fill(g_out, ob);
            calls0 = g_pool.calls;
            st = qmx_kv_attention_run(&c, q, nh, &o, (float *)(void *)g_out, 0, nt + 1, g_ws, tws);
            CHECK(st == QMX_ERR_ARG, "kv: range past the tasks: %d", (int)st);
            st = qmx_kv_attention_run(&c, q, nh, &o, (float *)(void *)g_out, nt, nt - 1, g_ws, tws);
            CHECK(st == QMX_ERR_ARG, "kv: reversed range: %d", (int)st);
            st = qmx_kv_attention_run(&c, q, nh, &o, (float *)(void *)g_out, 0, nt, g_ws, tws - 1);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "kv: range, workspace one byte short: %d",
                  (int)st);
            ex.parallel_for = NULL; ex.workers = 2; o.executor = &ex;
            st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, g_ws_bytes);
            CHECK(st == QMX_ERR_NULL, "kv: NULL parallel_for: %d", (int)st);
            ex.parallel_for = par_for; ex.workers = -1;
            st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, g_ws_bytes);
            CHECK(st == QMX_ERR_ARG &&
                      qmx_kv_attention_workspace_size_exec(&cfg, nh, &ex, &wsx) == QMX_ERR_ARG,
                  "kv: negative workers: %d", (int)st);
            ex.workers = 2; o.causal_len = T + 1;   /* past the appended tokens */
            st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, g_ws_bytes);
            CHECK(st == QMX_ERR_ARG, "kv: causal_len past the tokens: %d", (int)st);
            o.causal_len = 0;
            CHECK(all_a5(g_out, ob) && g_pool.calls == calls0, "kv %s %ux%u: a bad call wrote",
                  kv_fmt_name[f], (unsigned)nkv, (unsigned)g);
            kv_prefill_case(&cfg, F, kv, T, nh, kv_fmt_name[f]);
            free(storage); free(kv); free(q);
        }
}

/* ---- KV-cache attention decode split over token tiles (opts.token_split) ----
 * Per format (kv_fmts) and shape: token_split 64, 128 and one >= the context; the serial call
 * is the reference; the executor on 1..8 workers, range calls (single tasks shuffled, uneven
 * runs of tasks on threads) followed by the combine: bit for bit; a split >= the visible
 * length: the token_split = 0 bits; bad calls: a status, nothing written. */
typedef struct kvs_job {
    const qmx_kv_cache *c;
    const float *q;
    size_t nh, pbytes, slice;
    const qmx_kv_attn_opts *o;
    float *part;
    const size_t *cut;   /* range k: tasks [cut[k], cut[k + 1]) */
    unsigned char bad[PAR_MAX_WORKERS];
} kvs_job;
static void kvs_task(void *arg, int k, int worker) {
    kvs_job *j = (kvs_job *)arg;
    if (qmx_kv_attention_split_run(j->c, j->q, j->nh, j->o, j->part, j->pbytes, j->cut[k],
                                   j->cut[k + 1], g_ws + (size_t)worker * j->slice,
                                   j->slice) != QMX_OK)
        j->bad[worker] = 1;
}

static void kv_split_cases(void) {
    static const size_t shapes[][2] = {{1, 4}, {3, 1}, {2, 2}}; /* kv, g */
    const int *workers = par_wlist;
    const size_t d = PAR_SMALL ? 32 : 64, N = PAR_SMALL ? 70 : 140;
    const size_t splits[3] = {64, 128, 256};
    size_t f, s, k;
    for (f = 0; f < sizeof kv_fmts / sizeof kv_fmts[0]; f++)
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const kv_fmt *F = &kv_fmts[f];
            size_t nkv = shapes[s][0], g = shapes[s][1], nh = nkv * g, sb = 0, ws0 = 0, tws = 0;
            size_t ob = nh * d * 4, wsx = 0, vis = F->window && F->window < N ? F->window : N;
            qmx_kv_config cfg = QMX_ZERO_INIT;
            qmx_kv_cache c;
            qmx_executor ex = QMX_ZERO_INIT;
            float *kv = NULL, *q = NULL, *part = NULL;
            unsigned char *o0 = NULL;
            void *storage = NULL;
            qmx_status st;
            cfg.capacity = N + 3; cfg.n_kv_heads = nkv; cfg.head_dim = d;
            cfg.k_dtype = F->k; cfg.v_dtype = F->v; cfg.k_axis = F->kax; cfg.v_axis = F->vax;
            cfg.rotate = F->rotate;
            if (F->kax == QMX_KV_BLOCK && F->vax == QMX_KV_BLOCK) cfg.block_scale = QMX_KV_SCALE_F16;
            CHECK(qmx_kv_cache_storage_size(&cfg, &sb) == QMX_OK, "kvs %s: storage", kv_fmt_name[f]);
            storage = malloc(sb);
            kv = (float *)malloc(2 * N * nkv * d * sizeof(float));
            q = (float *)malloc(nh * d * sizeof(float));
            o0 = (unsigned char *)malloc(ob);
            part = (float *)malloc(g_ws_bytes / 4);
            if (!storage || !kv || !q || !o0 || !part) {
                CHECK(0, "malloc");
                free(storage); free(kv); free(q); free(o0); free(part);
                return;
            }
            kv_fill(kv, 2 * N * nkv * d, 0.003f);
            kv_fill(q, nh * d, 0.004f);
            CHECK(qmx_kv_cache_init(&c, &cfg, storage, sb) == QMX_OK &&
                      qmx_kv_cache_append(&c, kv, kv + N * nkv * d, N) == QMX_OK,
                  "kvs %s: init / append", kv_fmt_name[f]);
            {   /* the token_split = 0 reference */
                qmx_kv_attn_opts oz = QMX_ZERO_INIT;
                oz.float_query = F->float_query; oz.window = F->window;
                CHECK(qmx_kv_attention_workspace_size(&cfg, nh, &ws0) == QMX_OK &&
                          qmx_kv_attention(&c, q, nh, &oz, (float *)(void *)o0, g_ws, ws0) == QMX_OK,
                      "kvs %s: token_split 0", kv_fmt_name[f]);
            }
            for (k = 0; k < 3; k++) {
                size_t T = splits[k], ns = vis / T + (vis % T != 0), nt = 0, pb = 0, t, wsr = 0;
                qmx_kv_attn_opts o = QMX_ZERO_INIT;
                int wi, calls0;
                o.float_query = F->float_query; o.window = F->window; o.token_split = T;
                CHECK(qmx_kv_attention_split_workspace_size(&cfg, nh, &o, &wsr) == QMX_OK &&
                          wsr <= g_ws_bytes &&
                          qmx_kv_attention_task_workspace_size(&cfg, nh, &tws) == QMX_OK &&
                          tws * PAR_MAX_WORKERS <= g_ws_bytes &&
                          qmx_kv_attention_split_tasks(&c, nh, &o, &nt) == QMX_OK &&
                          nt == nkv * ns &&
                          qmx_kv_attention_split_partials_size(&c, nh, &o, &pb) == QMX_OK &&
                          pb == nt * g * (d + 2) * 4 && pb <= g_ws_bytes / 4 && ob <= g_out_bytes,
                      "kvs %s %ux%u T %u: sizes (tasks %u)", kv_fmt_name[f], (unsigned)nkv,
                      (unsigned)g, (unsigned)T, (unsigned)nt);
                out_fill(g_ref, ob);
                st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_ref, g_ws + 1, wsr);
                CHECK_EQ_INT(st, QMX_OK, "kvs %s %ux%u T %u: serial", kv_fmt_name[f],
                             (unsigned)nkv, (unsigned)g, (unsigned)T);
                if (ns == 1)   /* one split: f = qmx_kv_exp(0) = 1, the unsplit bits */
                    CHECK(memcmp(g_ref, o0, ob) == 0, "kvs %s %ux%u T %u >= %u visible: differs "
                          "from token_split 0", kv_fmt_name[f], (unsigned)nkv, (unsigned)g,
                          (unsigned)T, (unsigned)vis);
                /* serial workspace one byte short */
                out_fill(g_out, ob);
                st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, wsr - 1);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(g_out, ob),
                      "kvs %s: serial workspace one byte short: %d", kv_fmt_name[f], (int)st);
                for (wi = 0; wi < PAR_NW; wi++) {   /* through the executor */
                    ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = workers[wi];
                    par_workers_now = workers[wi];
                    o.executor = &ex;
                    CHECK(qmx_kv_attention_split_workspace_size(&cfg, nh, &o, &wsx) == QMX_OK &&
                              wsx <= g_ws_bytes && (workers[wi] >= 2 || wsx == wsr),
                          "kvs %s: workspace, %d workers", kv_fmt_name[f], workers[wi]);
                    out_fill(g_out, ob);
                    calls0 = g_pool.calls;
                    st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws + 7, wsx);
                    CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                          "kvs %s %ux%u T %u, %d workers: status %d, differs from the serial call",
                          kv_fmt_name[f], (unsigned)nkv, (unsigned)g, (unsigned)T, workers[wi],
                          (int)st);
                    CHECK(g_pool.calls == calls0 + (workers[wi] >= 2 && nt >= 2),
                          "kvs %s, %d workers: %d parallel_for calls", kv_fmt_name[f],
                          workers[wi], g_pool.calls - calls0);
                    if (workers[wi] >= 2) {   /* one byte short: a status, out untouched */
                        out_fill(g_out, ob);
                        st = qmx_kv_attention(&c, q, nh, &o, (float *)(void *)g_out, g_ws, wsx - 1);
                        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && all_a5(g_out, ob) &&
                                  g_pool.calls == calls0 + (nt >= 2),
                              "kvs %s, %d workers: workspace one byte short: %d", kv_fmt_name[f],
                              workers[wi], (int)st);
                    }
                }
                o.executor = NULL;
                for (wi = 0; wi < PAR_NW; wi++) {   /* uneven runs of tasks on 1..8 threads */
                    kvs_job j;
                    size_t cut[66], nr = 0, at = 0;   /* nt <= 9 here */
                    int bad = 0, w;
                    memset(&j, 0, sizeof j);
                    cut[0] = 0;
                    while (at < nt) {   /* runs of 1..3 tasks, a last empty run */
                        at += 1 + qmx_test_rand() % 3u;
                        if (at > nt) at = nt;
                        cut[++nr] = at;
                    }
                    cut[nr + 1] = nt;
                    nr++;
                    j.c = &c; j.q = q; j.nh = nh; j.o = &o; j.part = part; j.pbytes = pb;
                    j.cut = cut; j.slice = tws;
                    par_workers_now = workers[wi];
                    memset(part, 0, pb);
                    out_fill(g_out, ob);
                    par_for(&g_pool, (int)nr, kvs_task, &j);
                    for (w = 0; w < PAR_MAX_WORKERS; w++) bad |= j.bad[w];
                    st = qmx_kv_attention_split_combine(&c, nh, &o, part, pb,
                                                        (float *)(void *)g_out);
                    CHECK(!bad && st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                          "kvs %s %ux%u T %u: range calls on %d threads + combine differ (%d)",
                          kv_fmt_name[f], (unsigned)nkv, (unsigned)g, (unsigned)T, workers[wi],
                          (int)st);
                }
                /* single tasks in a shuffled order, the exact task workspace at an odd address */
                memset(part, 0, pb);
                out_fill(g_out, ob);
                par_shuffle(par_order, (int)nt);
                for (t = 0, st = QMX_OK; t < nt && st == QMX_OK; t++)
                    st = qmx_kv_attention_split_run(&c, q, nh, &o, part, pb, (size_t)par_order[t],
                                                    (size_t)par_order[t] + 1, g_ws + 3, tws);
                if (st == QMX_OK)
                    st = qmx_kv_attention_split_combine(&c, nh, &o, part, pb,
                                                        (float *)(void *)g_out);
                CHECK(st == QMX_OK && memcmp(g_out, g_ref, ob) == 0,
                      "kvs %s %ux%u T %u: shuffled single tasks + combine: %d", kv_fmt_name[f],
                      (unsigned)nkv, (unsigned)g, (unsigned)T, (int)st);
                /* bad calls: a status each, nothing written, no task run */
                {
                    size_t nb = 0;
                    float *p2 = part + pb / 4;   /* a second, poisoned partials buffer */
                    qmx_kv_attn_opts ob2 = o;
                    memset(p2, 0xA5, pb);
                    out_fill(g_out, ob);
                    calls0 = g_pool.calls;
                    CHECK(qmx_kv_attention_split_run(&c, q, nh, &o, p2, pb, 0, nt + 1, g_ws, tws) ==
                              QMX_ERR_ARG, "kvs: range past the tasks");
                    CHECK(qmx_kv_attention_split_run(&c, q, nh, &o, p2, pb, nt, nt - 1, g_ws, tws) ==
                              QMX_ERR_ARG, "kvs: reversed range");
                    CHECK(qmx_kv_attention_split_run(&c, q, nh, &o, p2, pb - 1, 0, nt, g_ws, tws) ==
                              QMX_ERR_BUFFER_TOO_SMALL, "kvs: partials one byte short");
                    CHECK(qmx_kv_attention_split_run(&c, q, nh, &o, p2, pb, 0, nt, g_ws, tws - 1) ==
                              QMX_ERR_BUFFER_TOO_SMALL, "kvs: task workspace one byte short");
                    CHECK(qmx_kv_attention_split_run(&c, NULL, nh, &o, p2, pb, 0, nt, g_ws, tws) ==
                              QMX_ERR_NULL &&
                              qmx_kv_attention_split_run(&c, q, nh, &o, NULL, pb, 0, nt, g_ws, tws) ==
                              QMX_ERR_NULL &&
                              qmx_kv_attention_split_run(&c, q, nh, NULL, p2, pb, 0, nt, g_ws, tws) ==
                              QMX_ERR_NULL, "kvs: NULL run arguments");
                    CHECK(qmx_kv_attention_split_combine(&c, nh, &o, part, pb - 1,
                                                         (float *)(void *)g_out) ==
                              QMX_ERR_BUFFER_TOO_SMALL &&
                              qmx_kv_attention_split_combine(&c, nh, &o, NULL, pb,
                                                             (float *)(void *)g_out) == QMX_ERR_NULL &&
                              qmx_kv_attention_split_combine(&c, nh, &o, part, pb, NULL) ==
                              QMX_ERR_NULL,
                          "kvs: combine, partials one byte short / NULL");
                    /* a partials buffer no task wrote (0xA5: S is negative) */
                    CHECK(qmx_kv_attention_split_combine(&c, nh, &o, p2, pb,
                                                         (float *)(void *)g_out) == QMX_ERR_ARG,
                          "kvs: combine of unwritten partials");
                    ob2.token_split = 32;
                    CHECK(qmx_kv_attention(&c, q, nh, &ob2, (float *)(void *)g_out, g_ws,
                                           g_ws_bytes) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_tasks(&c, nh, &ob2, &nb) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_workspace_size(&cfg, nh, &ob2, &nb) ==
                              QMX_ERR_ARG &&
                              qmx_kv_attention_split_run(&c, q, nh, &ob2, p2, pb, 0, 1, g_ws,
                                                         tws) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_combine(&c, nh, &ob2, part, pb,
                                                             (float *)(void *)g_out) == QMX_ERR_ARG,
                          "kvs: token_split 32");
                    ob2.token_split = 65;
                    CHECK(qmx_kv_attention(&c, q, nh, &ob2, (float *)(void *)g_out, g_ws,
                                           g_ws_bytes) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_partials_size(&c, nh, &ob2, &nb) == QMX_ERR_ARG,
                          "kvs: token_split 65");
                    ob2.token_split = 0;   /* the range calls need a split */
                    CHECK(qmx_kv_attention_split_tasks(&c, nh, &ob2, &nb) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_run(&c, q, nh, &ob2, p2, pb, 0, 1, g_ws,
                                                         tws) == QMX_ERR_ARG,
                          "kvs: range calls with token_split 0");
                    ob2.token_split = T;
                    ex.parallel_for = NULL; ex.workers = 2; ob2.executor = &ex;
                    CHECK(qmx_kv_attention(&c, q, nh, &ob2, (float *)(void *)g_out, g_ws,
                                           g_ws_bytes) == QMX_ERR_NULL,
                          "kvs: NULL parallel_for");
                    ex.parallel_for = par_for; ex.workers = -1;
                    CHECK(qmx_kv_attention(&c, q, nh, &ob2, (float *)(void *)g_out, g_ws,
                                           g_ws_bytes) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_workspace_size(&cfg, nh, &ob2, &nb) ==
                              QMX_ERR_ARG, "kvs: negative workers");
                    ex.workers = 2; ob2.causal_len = N + 1;   /* past the appended tokens */
                    CHECK(qmx_kv_attention(&c, q, nh, &ob2, (float *)(void *)g_out, g_ws,
                                           g_ws_bytes) == QMX_ERR_ARG &&
                              qmx_kv_attention_split_combine(&c, nh, &ob2, part, pb,
                                                             (float *)(void *)g_out) == QMX_ERR_ARG,
                          "kvs: causal_len past the tokens");
                    CHECK(all_a5(g_out, ob) && all_a5(p2, pb) && g_pool.calls == calls0,
                          "kvs %s %ux%u T %u: a bad call wrote or ran tasks", kv_fmt_name[f],
                          (unsigned)nkv, (unsigned)g, (unsigned)T);
                }
            }
            free(storage); free(kv); free(q); free(o0); free(part);
        }
}

int main(void) {
    size_t i;
    qmx_test_seed(0x9A7A11E1u);
    qmx_test_fill_i8(gA, sizeof gA, 0);
    qmx_test_fill_i8(gB, sizeof gB, 0);
    for (i = 0; i < sizeof gA8; i++) gA8[i] = (uint8_t)(qmx_test_rand() & 0xBF); /* exponent */
    for (i = 0; i < sizeof gB8; i++) gB8[i] = (uint8_t)(qmx_test_rand() & 0xBF); /* < max */
    for (i = 0; i < sizeof gX / sizeof gX[0]; i++)
        gX[i] = (float)((int)(qmx_test_rand() % 20001u) - 10000) * 0.00037f;
    for (i = 0; i < MAXN; i++) {
        gmult[i] = (int32_t)(0x40000000u + (qmx_test_rand() & 0x3FFFFFFFu));
        gshift[i] = -(int)(qmx_test_rand() % 12u);
        gbias[i] = (int32_t)(qmx_test_rand() % 20001u) - 10000;
        gws[i] = 0.001f + (float)(qmx_test_rand() % 1000u) * 1e-5f;
    }
    for (i = 0; i < MAXN * 8; i++) gzp[i] = (uint8_t)(qmx_test_rand() % 16u);
    for (i = 0; i < MAXN * 8; i++) gsb[i] = 0.002f + (float)(qmx_test_rand() % 1000u) * 1e-5f;
    for (i = 0; i < MAXM * 8; i++) gsa[i] = 0.01f + (float)(qmx_test_rand() % 1000u) * 1e-4f;
    g_out_bytes = MAXM * (MAXN + 3) * 4;
    g_ws_bytes = 2u << 20;
    g_ref = (unsigned char *)malloc(g_out_bytes);
    g_out = (unsigned char *)malloc(g_out_bytes);
    g_ws = (unsigned char *)malloc(g_ws_bytes);
    if (!g_ref || !g_out || !g_ws) { CHECK(0, "malloc"); return QMX_TEST_END(); }
    printf("test_parallel: %s executor\n", PAR_THREADS ? "pthreads" : "one-thread shuffled");

    QMX_TEST_CASE("qmx_matmul_tasks and qmx_par_workspace_size");
    {
        size_t n = 0, b = 0;
        qmx_executor ex = QMX_ZERO_INIT;
        CHECK(qmx_matmul_tasks(1, 1, &n) == QMX_OK && n == 1, "1 x 1: %u", (unsigned)n);
        CHECK(qmx_matmul_tasks(65, 257, &n) == QMX_OK && n == 4, "65 x 257: %u", (unsigned)n);
        CHECK(qmx_matmul_tasks(64, 256, &n) == QMX_OK && n == 1, "64 x 256: %u", (unsigned)n);
        CHECK(qmx_matmul_tasks(0, 5, &n) == QMX_ERR_SIZE, "M = 0");
        CHECK(qmx_matmul_tasks(5, 5, NULL) == QMX_ERR_NULL, "NULL");
        CHECK(qmx_par_workspace_size(NULL, 1000, 100, &b) == QMX_OK && b == 1000, "no executor");
        ex.workers = 1;
        CHECK(qmx_par_workspace_size(&ex, 1000, 100, &b) == QMX_OK && b == 1000, "1 worker");
        ex.workers = 3;
        CHECK(qmx_par_workspace_size(&ex, 1000, 100, &b) == QMX_OK && b == 3 * 128, "3 workers");
        ex.workers = -2;
        CHECK(qmx_par_workspace_size(&ex, 1000, 100, &b) == QMX_ERR_ARG, "negative workers");
        ex.workers = 2;
        CHECK(qmx_par_workspace_size(&ex, 1, (size_t)-1, &b) == QMX_ERR_OVERFLOW, "overflow");
    }

    QMX_TEST_CASE("one task (1 x 5 x 7)");
    run_shape(1, 5, 7, "1x5x7");
    QMX_TEST_CASE("fewer tasks than workers (3 x 300 x 33)");
    run_shape(3, 300, 33, "3x300x33");
    QMX_TEST_CASE("GEMV, ragged last column tile (1 x 600 x 72)");
    run_shape(1, 600, 72, "1x600x72");
#if !PAR_SMALL
    QMX_TEST_CASE("ragged row and column tiles (140 x 530 x 70)");
    run_shape(140, 530, 70, "140x530x70");
#else
    QMX_TEST_CASE("ragged row and column tiles (70 x 300 x 20)");
    run_shape(70, 300, 20, "70x300x20");
#endif

    QMX_TEST_CASE("block-weight blobs (every kind): _run and _exec, same bits, bad blobs");
    blockw_cases();
    QMX_TEST_CASE("unpacked block-scaled weights: _run and _exec, same bits, bad weights");
    blockw_unpacked_cases();
    QMX_TEST_CASE("qmx_matmul_mxfp8_f32: _run and _exec, same bits, bad operands");
    mx8_cases();
    QMX_TEST_CASE("16x8 fully-connected (+ packed): _run and _exec, same bits");
    s16_cases();
    QMX_TEST_CASE("qmx_batch_matmul_i16: (batch, tile) tasks, _run and _exec, same bits");
    bmm_cases();

    QMX_TEST_CASE("qmx_quantize_run / qmx_dequantize_run: chunks on threads, same bits");
    quantize_cases();
    QMX_TEST_CASE("per channel / per block quantize, fp8 arrays: range calls and _exec, same bits");
    granular_cases();
    QMX_TEST_CASE("fp4 / fp6 arrays: range calls and _exec, same bits, bad calls");
    lowfloat_array_cases();
    QMX_TEST_CASE("MX / NVFP4 arrays: qmx_mx_quantize_run / _dequantize_run and _exec, same bits");
    mx_array_cases();
    QMX_TEST_CASE("qmx_einsum through an executor and qmx_einsum_run: a task per batch index, same bits");
    einsum_cases();
    QMX_TEST_CASE("qmx_einsum with a block-weight blob operand: tiles of the blob kernel, executor and range calls, same bits");
    einsum_blob_cases();
    QMX_TEST_CASE("qmx_absmax_f32 / fp8 delayed scaling: chunks, partials merged exactly");
    absmax_cases();
    QMX_TEST_CASE("qmx_observer_update_exec: runs of groups, same records for every method");
    observer_cases();
    QMX_TEST_CASE("qmx_histogram_update_exec: counts per worker, the serial histogram");
    histogram_cases();
    QMX_TEST_CASE("per-tensor qmx_observer_update_exec: chunk min / max merged, same records");
    observer_tensor_cases();
    QMX_TEST_CASE("qmx_torch_histogram_update_exec: histc per worker, the serial histogram");
    torch_histogram_cases();
    QMX_TEST_CASE("qmx_kv_attention: a task per KV head, executor and range calls, same bits");
    kv_cases();
    QMX_TEST_CASE("qmx_kv_attention token_split: serial, executor, split range calls + combine, same bits");
    kv_split_cases();

    QMX_TEST_CASE("K past the accumulator bound: QMX_ERR_OVERFLOW before any task");
    {
        static int8_t a1[QMX_MATMUL_I8_MAX_K + 1], b1[QMX_MATMUL_I8_MAX_K + 1];
        size_t K = QMX_MATMUL_I8_MAX_K + 1;
        int32_t c1 = 77;
        qmx_executor ex = QMX_ZERO_INIT;
        qmx_matmul_i8_opts o = QMX_ZERO_INIT;
        int calls0 = g_pool.calls;
        ex.parallel_for = par_for; ex.pool = &g_pool; ex.workers = 2; o.executor = &ex;
        CHECK(qmx_matmul_i8(1, 1, K, a1, K, b1, K, &c1, 1, &o, g_ws, g_ws_bytes) ==
                  QMX_ERR_OVERFLOW && c1 == 77 && g_pool.calls == calls0, "executor");
        CHECK(qmx_matmul_i8_run(1, 1, K, a1, K, b1, K, &c1, 1, NULL, 0, 1, g_ws, g_ws_bytes) ==
                  QMX_ERR_OVERFLOW && c1 == 77, "range call");
    }

    {   /* the runs whose results the cases above compare with the serial call's */
        int w;
        printf("  parallel_for runs (executor calls and range calls on threads) by workers:");
        for (w = 1; w <= PAR_MAX_WORKERS; w++)
            if (par_runs_by_workers[w]) printf(" %d: %lu", w, par_runs_by_workers[w]);
        printf("\n");
    }
    free(g_ref); free(g_out); free(g_ws);
    return QMX_TEST_END();
}
