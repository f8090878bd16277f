/* test_parallel.c - USING SEVERAL CORES (qmx_kernels.h): the range calls qmx_*_run, the
 * executor of the option structs and qmx_matmul_f32_dyn_i8_exec.
 * Specifications checked, for qmx_matmul_i8 (both B layouts, zero points, cached sums),
 * qmx_matmul_i8_packed, qmx_fully_connected_i8 (+ _packed; int8 and int16 out, weight zero
 * point), qmx_matmul_i8_f32 (+ _packed), qmx_matmul_f32_dyn_i8, qmx_matmul_i4 (int8 / int4
 * A, int4 / uint4 W with block zero points), qmx_matmul_i4_f32, qmx_fully_connected_i4,
 * qmx_matmul_fp8_f32, and in qmx.h qmx_quantize_run / qmx_dequantize_run:
 *   - through an executor of 1, 2, 3, 4 and 8 workers that runs the tasks in a shuffled order
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
#include "qmx_test.h"

#if !defined(PAR_NO_THREADS) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#  define PAR_THREADS 1
#  include <pthread.h>
#else
#  define PAR_THREADS 0
#endif

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
static void par_for(void *pool, int n, void (*fn)(void *, int, int), void *arg) {
    par_pool *p = (par_pool *)pool;
    int i, w = par_workers_now;
    p->calls++;
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
enum { K_MM, K_MMP, K_FC, K_FCP, K_F32, K_F32P, K_DYN, K_I4, K_I4F, K_FC4, K_FP8, K_COUNT };
static const char *const kind_name[K_COUNT] = {
    "qmx_matmul_i8", "qmx_matmul_i8_packed", "qmx_fully_connected_i8",
    "qmx_fully_connected_i8_packed", "qmx_matmul_i8_f32", "qmx_matmul_i8_f32_packed",
    "qmx_matmul_f32_dyn_i8", "qmx_matmul_i4", "qmx_matmul_i4_f32", "qmx_fully_connected_i4",
    "qmx_matmul_fp8_f32"};

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
} par_case;

static size_t out_esize(const par_case *c) {
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

static size_t out_bytes(const par_case *c) { return c->M * c->ldc * out_esize(c); }
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
    static const int workers[5] = {1, 2, 3, 4, 8};
    size_t ob = out_bytes(c), need = 0, tile = tile_ws(c), nt = 0, t, total = 0;
    qmx_status st;
    int wi;
    CHECK(ob <= g_out_bytes, "%s %s: output buffer too small", kind_name[c->kind], shape);
    if (ob > g_out_bytes) return;
    CHECK(qmx_matmul_tasks(c->M, c->N, &nt) == QMX_OK && nt >= 1 && nt <= PAR_MAX_TASKS,
          "%s %s: qmx_matmul_tasks", kind_name[c->kind], shape);
    (void)ws_size(c, c->M, c->N, &need);
    out_fill(g_ref, ob);
    st = par_do(c, 0, NULL, 0, 0, g_ref, g_ws, need);
    CHECK_EQ_INT(st, QMX_OK, "%s %s: serial call", kind_name[c->kind], shape);

    for (wi = 0; wi < 5 && has_exec(c); wi++) {
        qmx_executor ex = QMX_ZERO_INIT;
        int calls0 = g_pool.calls, tasks0 = g_pool.tasks;
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

    /* range calls, one per task, on 1..8 threads in a shuffled order */
    for (wi = 0; wi < 5; wi++) {
        range_job j;
        int k, bad = 0;
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
    for (wi = 1; wi < 5; wi++) {
        size_t cut[PAR_MAX_WORKERS + 1];
        int w = workers[wi], k;
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
        st = par_do(c, 2, NULL, 0, nt, g_out, g_ws, tile - 1);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && out_untouched(c),
              "%s %s: range call, workspace one byte short: %d", kind_name[c->kind], shape,
              (int)st);
        st = par_do(c, 2, NULL, nt, nt, g_out, g_ws, tile);
        CHECK(st == QMX_OK && out_untouched(c), "%s %s: empty range: %d", kind_name[c->kind],
              shape, (int)st);
        if (has_exec(c)) {
            calls0 = g_pool.calls;
            (void)qmx_par_workspace_size(&ex, need, tile, &total);
            st = par_do(c, 1, &ex, 0, 0, g_out, g_ws, total - 1);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && out_untouched(c),
                  "%s %s: executor, workspace one byte short: %d", kind_name[c->kind], shape,
                  (int)st);
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
#if QMX_TEST_SMALL_TARGET
    const size_t count = 2 * QMX_TASK_ELEMS + 1001;
#else
    const size_t count = 3 * QMX_TASK_ELEMS + 1001;
#endif
    float *x = (float *)malloc(count * 4), *y0 = (float *)malloc(count * 4),
          *y1 = (float *)malloc(count * 4);
    unsigned char *q0 = (unsigned char *)malloc(count * 2), *q1 = (unsigned char *)malloc(count * 2);
    size_t i, nt = 0, qb = 0;
    int d, w;
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
        if (d == 6) { /* per channel: one task (not split) */
            c.granularity = QMX_PER_CHANNEL; c.outer = 1; c.axis_len = 1; c.inner = count;
        }
        CHECK(qmx_compute_qparams(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL) == QMX_OK,
              "qparams dtype %d", (int)c.dtype);
        CHECK(qmx_dtype_storage_bytes(c.dtype, count, &qb) == QMX_OK, "storage");
        want = d == 6 ? 1 : count / QMX_TASK_ELEMS + 1;
        CHECK(qmx_quantize_tasks(&c, count, &nt) == QMX_OK && nt == want,
              "dtype %d: %u tasks, want %u", (int)c.dtype, (unsigned)nt, (unsigned)want);
        memset(q0, 0xA5, count * 2);
        CHECK(qmx_quantize(&c, x, count, &s, 1, c.asymmetric ? &zp : NULL, q0, qb) == QMX_OK,
              "serial quantize");
        memset(y0, 0xA5, count * 4);
        CHECK(qmx_dequantize(&c, q0, qb, count, &s, 1, c.asymmetric ? &zp : NULL, y0) == QMX_OK,
              "serial dequantize");
        for (w = 1; w <= 8; w *= 2) { /* tasks on w threads, shuffled */
            q_job j;
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
#if !QMX_TEST_SMALL_TARGET
    QMX_TEST_CASE("ragged row and column tiles (140 x 530 x 70)");
    run_shape(140, 530, 70, "140x530x70");
#else
    QMX_TEST_CASE("ragged row and column tiles (70 x 300 x 20)");
    run_shape(70, 300, 20, "70x300x20");
#endif

    QMX_TEST_CASE("qmx_quantize_run / qmx_dequantize_run: chunks on threads, same bits");
    quantize_cases();

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

    free(g_ref); free(g_out); free(g_ws);
    return QMX_TEST_END();
}
