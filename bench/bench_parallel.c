/* bench_parallel.c - the int8 kernels on 1 and 2 workers (qmx_kernels.h, USING SEVERAL CORES),
 * through a small persistent pthreads pool given to qmx as a qmx_executor (`make bench`, or
 * BENCH=parallel). Rows, each pair of figures timed in alternation in this run:
 *   - qmx_matmul_i8_packed GEMM 1024^3 and (128, 4096, 4096): 1 worker (the serial call) vs 2
 *     workers, GOPS = 2*M*N*K / s (aim: 2 workers >= 1.85x 1 worker);
 *   - the cold GEMV, M = 1, N = K = 8192 (64 MiB blob, 2x the L3): 1 vs 2 workers, and 2
 *     workers vs a 2-thread read stream of the same 64 MiB through the same pool (aim >= 0.9x);
 *   - the int4 GEMV, qmx_fully_connected_i4 with M = 1, N = K = 8192 (32 MiB of packed signed
 *     int4 weights, two per byte, two copies used in turn so that each call reads from memory;
 *     rq.executor: 32 tasks of 256 columns): 1 vs 2 workers, and 2 workers vs a 2-thread read
 *     stream of the same bytes (both copies, 64 MiB, per byte) (aim >= 0.9x);
 *   - int8 per-tensor quantize of 64 MiB of floats: qmx_quantize (1 worker) vs two
 *     qmx_quantize_run halves on the pool, and vs a 2-thread read pass of the 64 MiB;
 *   - int8 per-channel quantize (last axis, 4096 channels) of 64 MiB: qmx_quantize_exec with
 *     no executor (the serial call) vs the 2-worker pool (256 tasks of QMX_TASK_ELEMS);
 *   - per-tensor absmax observer of 64 MiB of floats: qmx_observer_update_exec with no
 *     executor (the serial call) vs the 2-worker pool (64 runs of 4 chunks, min / max merged);
 *   - KV decode (qmx_kv_attention), context 4096, 32 query / 8 KV heads of 128, int8 K and V:
 *     1 worker (the serial call) vs 2 workers (opts.executor: 8 tasks, one per KV head),
 *     tokens/s (aim: 2 workers >= 1.6x), and 2 workers vs a 2-thread read stream of the
 *     cache's bytes (aim >= 0.9x; bytes/s of the cache read per step / the stream's).
 *   - KV decode split over token tiles (opts.token_split), context 32768, 8 query heads / 1 KV
 *     head of 128, int8 K and V (a KV-head split has 1 task here): token_split 1024 on 1
 *     worker (the serial call) vs 2 workers (32 tasks, one per split), and 2 workers vs the
 *     unsplit serial call (token_split 0), tokens/s; the 2-worker output is checked bit for
 *     bit against the 1-worker token_split output.
 * Every 2-worker result is compared bit for bit with the serial one before it is timed.
 * With oneDNN installed (make bench-peers: Debian's libdnnl-dev, OpenMP threading), each GEMM
 * row also times oneDNN's s8 x s8 -> s32 matmul (its own packed weights, reordered untimed) on
 * the same data at 1 and 2 OpenMP threads (omp_set_num_threads), in alternation with qmx at the
 * same worker count; its outputs are checked against qmx's first. libgomp's idle threads are
 * made passive (OMP_WAIT_POLICY, set by restarting the program) so that they do not spin on
 * the cores while qmx runs. */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "qmx_calib.h"
#include "bench_util.h"
#include <pthread.h>
#include <stdint.h>
#if defined(QMX_BENCH_HAVE_DNNL)
#  include <unistd.h>
#endif

#ifndef QMX_BENCH_CFLAGS
#  define QMX_BENCH_CFLAGS "(not recorded; build with `make bench`)"
#endif

/* ---- the pool: the caller is worker 0, helper threads are 1.. ----
 * A job is over when its n tasks are done (a helper that wakes late finds none left and
 * holds nobody up). A thread that waits first polls for up to SPIN_S (a helper for the next
 * job, the caller for the tasks still running), then blocks on a condition variable, as most
 * pools do (OpenMP's default wait policy, llama.cpp's threadpool): blocking at once costs a
 * job up to two wake-ups (the helper's at the start, the caller's at the end), ~30 us each in
 * this VM, 1/4 of a 2-worker KV decode step (~220 us); the millisecond rows barely notice.
 * gen, n, done and quit are written under the mutex (atomically: the polls read them
 * without it). */
#define MAXW 8
#define SPIN_S 100e-6
typedef struct pool {
    pthread_t th[MAXW];
    int helpers, quit, n, next, done;
    unsigned gen;
    pthread_mutex_t mu;
    pthread_cond_t go, fin;
    void (*fn)(void *, int, int);
    void *arg;
} pool;
typedef struct seat { pool *p; int worker; } seat;
static seat seats[MAXW];

static void pool_work(pool *p, int worker) {
    pthread_mutex_lock(&p->mu);
    while (p->next < p->n) {
        int t = p->next++;
        void (*fn)(void *, int, int) = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, t, worker);
        pthread_mutex_lock(&p->mu);
        __atomic_store_n(&p->done, p->done + 1, __ATOMIC_RELEASE);
        if (p->done == p->n) pthread_cond_signal(&p->fin);
    }
    pthread_mutex_unlock(&p->mu);
}
static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/* polls (no lock) until a new job or quit (helper: seen = its last gen) or until every task
 * is done (caller: helper = 0), at most SPIN_S; the locked waits below decide */
static void pool_spin(pool *p, int helper, unsigned seen) {
    double t0 = bqu_now();
    int k;
    for (;;) {
        for (k = 0; k < 64; k++) {
            if (helper ? __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) != seen ||
                             __atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)
                       : __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) ==
                             __atomic_load_n(&p->n, __ATOMIC_RELAXED))
                return;
            cpu_relax();
        }
        if (bqu_now() - t0 > SPIN_S) return;
    }
}
static void *pool_main(void *v) {
    seat *s = (seat *)v;
    pool *p = s->p;
    unsigned seen = 0;
    for (;;) {
        pool_spin(p, 1, seen);
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        seen = p->gen;
        if (p->quit) { pthread_mutex_unlock(&p->mu); return NULL; }
        pthread_mutex_unlock(&p->mu);
        pool_work(p, s->worker);
    }
}
static void pool_for(void *vp, int n, void (*fn)(void *, int, int), void *arg) {
    pool *p = (pool *)vp;
    pthread_mutex_lock(&p->mu);
    p->fn = fn; p->arg = arg; p->next = 0;
    __atomic_store_n(&p->n, n, __ATOMIC_RELAXED);
    __atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    pool_work(p, 0);
    pool_spin(p, 0, 0);
    pthread_mutex_lock(&p->mu);
    while (p->done < p->n) pthread_cond_wait(&p->fin, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
static void pool_start(pool *p, int workers) {
    int i;
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->fin, NULL);
    p->helpers = workers - 1;
    for (i = 1; i < workers; i++) {
        seats[i].p = p; seats[i].worker = i;
        pthread_create(&p->th[i], NULL, pool_main, &seats[i]);
    }
}
static void pool_stop(pool *p) {
    int i;
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (i = 1; i <= p->helpers; i++) pthread_join(p->th[i], NULL);
}

/* ---- the timed operations ---- */
typedef struct mm {
    size_t M, N, K, pb, wsb;
    int8_t *A, *B;   /* B: [N][K], kept for oneDNN */
    void *blob, *ws;
    int32_t *C;
    const qmx_executor *ex;   /* NULL: the serial call */
} mm;
static void run_mm(void *v) {
    mm *c = (mm *)v;
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    o.executor = c->ex;
    if (qmx_matmul_i8_packed(c->M, c->N, c->K, c->A, c->K, c->blob, c->pb, c->C, c->N, &o, c->ws,
                             c->wsb) != QMX_OK) {
        fprintf(stderr, "bench_parallel: qmx_matmul_i8_packed failed\n");
        exit(1);
    }
}
/* int4 GEMV: qmx_fully_connected_i4, M = 1, W [N][K] signed int4 packed two per byte (ldw = K),
 * per-tensor requantization to int8; rq.executor NULL (the serial call) or the pool. W holds
 * two copies of the weights (wb bytes each), used in turn: a call reads from memory, not L3 */
typedef struct fc4 {
    size_t N, K, wb, wsb, turn;
    int8_t *A, *out;
    uint8_t *W;
    void *ws;
    int32_t mult;
    int shift;
    const qmx_executor *ex;
} fc4;
static void run_fc4(void *v) {
    fc4 *c = (fc4 *)v;
    qmx_requant_config rq;
    memset(&rq, 0, sizeof rq);
    rq.multipliers = &c->mult; rq.shifts = &c->shift; rq.executor = c->ex;
    c->turn ^= 1;
    if (qmx_fully_connected_i4(1, c->N, c->K, c->A, c->K, 0, c->W + c->turn * c->wb, c->K, &rq,
                               c->out, c->N, c->ws, c->wsb) != QMX_OK) {
        fprintf(stderr, "bench_parallel: qmx_fully_connected_i4 failed\n");
        exit(1);
    }
}
/* the read stream: task t sums half t of the buffer (one task per worker) */
typedef struct rs { const uint64_t *p; size_t n; uint64_t sink[MAXW * 8]; const qmx_executor *ex; } rs;
static void rs_task(void *v, int task, int worker) {
    rs *r = (rs *)v;
    size_t h = r->n / 2, i, b = (size_t)task * h;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (i = b; i + 4 <= b + h; i += 4) { a0 += r->p[i]; a1 += r->p[i + 1]; a2 += r->p[i + 2]; a3 += r->p[i + 3]; }
    r->sink[worker * 8] = a0 + a1 + a2 + a3;   /* one cache line per worker */
}
static void run_rs(void *v) {
    rs *r = (rs *)v;
    r->ex->parallel_for(r->ex->pool, 2, rs_task, r);
}

/* int8 quantize: half `task` of the tasks per worker (a contiguous run: one call) */
typedef struct qz { qmx_qconfig c; const float *x; size_t n; float s; int8_t *q; const qmx_executor *ex; size_t nt; } qz;
static void qz_task(void *v, int task, int worker) {
    qz *z = (qz *)v;
    size_t h = z->nt / 2, b = task ? h : 0, e = task ? z->nt : h;
    (void)worker;
    if (qmx_quantize_run(&z->c, z->x, z->n, &z->s, 1, NULL, z->q, z->n, b, e) != QMX_OK) exit(1);
}
static void run_qz(void *v) {
    qz *z = (qz *)v;
    if (!z->ex) {
        if (qmx_quantize(&z->c, z->x, z->n, &z->s, 1, NULL, z->q, z->n) != QMX_OK) exit(1);
    } else {
        z->ex->parallel_for(z->ex->pool, 2, qz_task, z);
    }
}

/* int8 per-channel quantize through qmx_quantize_exec (NULL executor: the serial call) */
typedef struct qc { qmx_qconfig c; const float *x; size_t n; const float *s; int8_t *q; const qmx_executor *ex; } qc;
static void run_qc(void *v) {
    qc *z = (qc *)v;
    if (qmx_quantize_exec(&z->c, z->x, z->n, z->s, z->c.axis_len, NULL, z->q, z->n, z->ex) != QMX_OK)
        exit(1);
}

/* per-tensor absmax observer: qmx_observer_update_exec (NULL executor: the serial call) */
typedef struct obt { qmx_observer o; qmx_calib_stat st; const float *x; size_t n; const qmx_executor *ex; } obt;
static void run_obt(void *v) {
    obt *z = (obt *)v;
    if (qmx_observer_update_exec(&z->o, z->x, z->n, z->ex) != QMX_OK) exit(1);
}

/* KV decode: qmx_kv_attention, opts.executor NULL (the serial call) or the pool */
typedef struct kvd {
    qmx_kv_cache c;
    qmx_kv_attn_opts o;
    void *storage, *ws;
    size_t wsb;
    float *q, *out;
} kvd;
static void run_kvd(void *v) {
    kvd *k = (kvd *)v;
    if (qmx_kv_attention(&k->c, k->q, 32, &k->o, k->out, k->ws, k->wsb) != QMX_OK) {
        fprintf(stderr, "bench_parallel: qmx_kv_attention failed\n");
        exit(1);
    }
}
/* the same with 8 query heads (the token-split row) */
static void run_kvd8(void *v) {
    kvd *k = (kvd *)v;
    if (qmx_kv_attention(&k->c, k->q, 8, &k->o, k->out, k->ws, k->wsb) != QMX_OK) {
        fprintf(stderr, "bench_parallel: qmx_kv_attention (token split) failed\n");
        exit(1);
    }
}

/* ---- oneDNN with 2 threads (QMX_BENCH_HAVE_DNNL: make bench links Debian's libdnnl) ---- */
#if defined(QMX_BENCH_HAVE_DNNL)
#include <dnnl.h>
void omp_set_num_threads(int n);   /* libgomp, oneDNN's threading runtime in Debian's build */
typedef struct dn2 {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c;
    dnnl_exec_arg_t args[3];
    int threads;
} dn2;
static void run_dn2(void *v) {
    dn2 *d = (dn2 *)v;
    omp_set_num_threads(d->threads);
    dnnl_primitive_execute(d->prim, d->strm, 3, d->args);
    dnnl_stream_wait(d->strm);
}
/* oneDNN s8 x s8 -> s32 on mm c's data, weights in oneDNN's own packed layout (format any, an
 * untimed reorder: its prepacked fast path); every output checked against qmx's C */
static int dn2_setup(dn2 *d, const mm *c, const int8_t *B_nk) {
    dnnl_dims_t ad, bd, cd;
    dnnl_memory_desc_t amd, bumd, bmd, cmd;
    dnnl_matmul_desc_t mmd;
    dnnl_primitive_desc_t pd, rpd;
    dnnl_primitive_t rp;
    dnnl_memory_t bu;
    dnnl_exec_arg_t ra[2];
    int32_t *out;
    size_t n, k, i;
    int8_t *bkn = (int8_t *)bqu_alloc(c->N * c->K);
    int ok = 1;
    for (n = 0; n < c->N; n++)
        for (k = 0; k < c->K; k++) bkn[k * c->N + n] = B_nk[n * c->K + k];
    ad[0] = (dnnl_dim_t)c->M; ad[1] = (dnnl_dim_t)c->K;
    bd[0] = (dnnl_dim_t)c->K; bd[1] = (dnnl_dim_t)c->N;
    cd[0] = (dnnl_dim_t)c->M; cd[1] = (dnnl_dim_t)c->N;
    ok &= dnnl_engine_create(&d->eng, dnnl_cpu, 0) == dnnl_success;
    ok &= dnnl_stream_create(&d->strm, d->eng, dnnl_stream_default_flags) == dnnl_success;
    ok &= dnnl_memory_desc_init_by_tag(&amd, 2, ad, dnnl_s8, dnnl_ab) == dnnl_success;
    ok &= dnnl_memory_desc_init_by_tag(&bumd, 2, bd, dnnl_s8, dnnl_ab) == dnnl_success;
    ok &= dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_s8, dnnl_format_tag_any) == dnnl_success;
    ok &= dnnl_memory_desc_init_by_tag(&cmd, 2, cd, dnnl_s32, dnnl_ab) == dnnl_success;
    ok &= dnnl_matmul_desc_init(&mmd, &amd, &bmd, NULL, &cmd) == dnnl_success;
    ok &= dnnl_primitive_desc_create(&pd, &mmd, NULL, d->eng, NULL) == dnnl_success;
    if (!ok) return 0;
    ok &= dnnl_memory_create(&d->a, &amd, d->eng, c->A) == dnnl_success;
    ok &= dnnl_memory_create(&bu, &bumd, d->eng, bkn) == dnnl_success;
    ok &= dnnl_memory_create(&d->b, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                             d->eng, DNNL_MEMORY_ALLOCATE) == dnnl_success;
    ok &= dnnl_memory_create(&d->c, &cmd, d->eng, DNNL_MEMORY_ALLOCATE) == dnnl_success;
    ok &= dnnl_reorder_primitive_desc_create(&rpd, &bumd, d->eng,
                                             dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                                             d->eng, NULL) == dnnl_success;
    if (!ok) return 0;
    ok &= dnnl_primitive_create(&rp, rpd) == dnnl_success;
    ra[0].arg = DNNL_ARG_FROM; ra[0].memory = bu;
    ra[1].arg = DNNL_ARG_TO; ra[1].memory = d->b;
    ok &= ok && dnnl_primitive_execute(rp, d->strm, 2, ra) == dnnl_success;
    ok &= ok && dnnl_stream_wait(d->strm) == dnnl_success;
    ok &= dnnl_primitive_create(&d->prim, pd) == dnnl_success;
    if (!ok) return 0;
    dnnl_primitive_destroy(rp);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(bu);
    free(bkn);
    d->args[0].arg = DNNL_ARG_SRC; d->args[0].memory = d->a;
    d->args[1].arg = DNNL_ARG_WEIGHTS; d->args[1].memory = d->b;
    d->args[2].arg = DNNL_ARG_DST; d->args[2].memory = d->c;
    d->threads = 2;
    run_dn2(d);
    if (dnnl_memory_get_data_handle(d->c, (void **)&out) != dnnl_success) return 0;
    for (i = 0; i < c->M * c->N; i++)
        if (out[i] != c->C[i]) return 0;
    return 1;
}
static void dn2_free(dn2 *d) {
    dnnl_primitive_destroy(d->prim);
    dnnl_memory_destroy(d->a); dnnl_memory_destroy(d->b); dnnl_memory_destroy(d->c);
    dnnl_stream_destroy(d->strm);
    dnnl_engine_destroy(d->eng);
}
#endif

typedef struct pair { double ta, tb, ratio; } pair;  /* medians of seconds/call; ratio ta/tb */
static pair measure_pair(bqu_fn fa, void *ca, bqu_fn fb, void *cb) {
    double a[BQU_MAX_REPS], b[BQU_MAX_REPS], r[BQU_MAX_REPS], target = bqu_rep_seconds();
    int reps = bqu_reps(), i;
    long na = bqu_calls_for(fa, ca, target), nb = bqu_calls_for(fb, cb, target);
    pair res;
    for (i = 0; i < reps; i++) {
        if (i & 1) { b[i] = bqu_rep(fb, cb, nb, target); a[i] = bqu_rep(fa, ca, na, target); }
        else       { a[i] = bqu_rep(fa, ca, na, target); b[i] = bqu_rep(fb, cb, nb, target); }
        r[i] = a[i] / b[i];
    }
    res.ta = bqu_summarize(a, reps).med;
    res.tb = bqu_summarize(b, reps).med;
    res.ratio = bqu_summarize(r, reps).med;
    return res;
}

static void mm_setup(mm *c, size_t M, size_t N, size_t K, const qmx_executor *ex2) {
    unsigned seed = 17u;
    size_t i, serial = 0, task = 0, par = 0;
    int8_t *B = (int8_t *)bqu_alloc(N * K);
    c->M = M; c->N = N; c->K = K; c->ex = NULL;
    c->A = (int8_t *)bqu_alloc(M * K);
    c->C = (int32_t *)bqu_alloc(M * N * 4);
    for (i = 0; i < M * K; i++) c->A[i] = (int8_t)bqu_rng(&seed);
    for (i = 0; i < N * K; i++) B[i] = (int8_t)bqu_rng(&seed);
    qmx_matmul_i8_pack_weights_size(N, K, &c->pb);
    c->blob = bqu_alloc(c->pb);
    if (qmx_matmul_i8_pack_weights(B, N, K, K, QMX_B_NK, c->blob, c->pb) != QMX_OK) exit(1);
    c->B = B;
    qmx_matmul_i8_packed_workspace_size(M, N, K, &serial);
    qmx_matmul_i8_packed_workspace_size(M < QMX_TASK_M ? M : QMX_TASK_M,
                                        N < QMX_TASK_N ? N : QMX_TASK_N, K, &task);
    qmx_par_workspace_size(ex2, serial, task, &par);
    c->wsb = serial > par ? serial : par;
    c->ws = bqu_alloc(c->wsb);
}
static int same_bits(mm *c, const qmx_executor *ex2) {
    int32_t *ref = (int32_t *)bqu_alloc(c->M * c->N * 4);
    int ok;
    c->ex = NULL; run_mm(c);
    memcpy(ref, c->C, c->M * c->N * 4);
    memset(c->C, 0x5A, c->M * c->N * 4);
    c->ex = ex2; run_mm(c);
    ok = memcmp(ref, c->C, c->M * c->N * 4) == 0;
    free(ref);
    return ok;
}

int main(int argc, char **argv) {
    static const size_t shapes[2][3] = {{1024, 1024, 1024}, {128, 4096, 4096}};
    pool p;
    qmx_executor ex2;
    double load[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    int i, bad = 0;
#if defined(QMX_BENCH_HAVE_DNNL)
    /* libgomp reads its environment when it is loaded: set it and start again */
    if (!getenv("QMX_BENCH_PARALLEL_ENV")) {
        setenv("QMX_BENCH_PARALLEL_ENV", "1", 1);
        setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
        unsetenv("OMP_NUM_THREADS");
        execv("/proc/self/exe", argv);
        printf("bench_parallel: could not restart with OMP_WAIT_POLICY=PASSIVE\n");
    }
#endif
    (void)argc; (void)argv;
    if (f) { if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1; fclose(f); }
    pool_start(&p, 2);
    ex2.parallel_for = pool_for; ex2.pool = &p; ex2.workers = 2;
    printf("bench_parallel: qmx_matmul_i8_packed, 1 worker (serial call) vs 2 workers (a pthreads\n"
           "                pool as qmx_executor), alternating reps, median of %d; load average\n"
           "                %.2f %.2f %.2f at the start\n", bqu_reps(), load[0], load[1], load[2]);
    printf("build:    compiler %s; flags: %s\n", __VERSION__, QMX_BENCH_CFLAGS);
    printf("%-22s %10s %10s %8s\n", "M,N,K", "1w GOPS", "2w GOPS", "2w/1w");
    for (i = 0; i < 2; i++) {
        mm a, b;
        pair pr;
        double work;
        char nm[40];
        mm_setup(&a, shapes[i][0], shapes[i][1], shapes[i][2], &ex2);
        if (!same_bits(&a, &ex2)) { printf("MISMATCH 2 workers vs serial\n"); bad = 1; }
        b = a; a.ex = NULL; b.ex = &ex2;
        work = 2.0 * (double)(a.M * a.N) * (double)a.K;
        pr = measure_pair(run_mm, &a, run_mm, &b);
        snprintf(nm, sizeof nm, "%zu,%zu,%zu", a.M, a.N, a.K);
        printf("%-22s %10.1f %10.1f %7.2fx\n", nm, work / pr.ta / 1e9, work / pr.tb / 1e9, pr.ratio);
        fflush(stdout);
#if defined(QMX_BENCH_HAVE_DNNL)
        {   /* oneDNN on the same data, 1 and 2 OpenMP threads, each against qmx's same count */
            dn2 d;
            pair pd1, pd2;
            if (!dn2_setup(&d, &b, a.B)) { printf("oneDNN setup failed or differs from qmx\n"); bad = 1; }
            else {
                pd2 = measure_pair(run_mm, &b, run_dn2, &d);
                d.threads = 1;
                pd1 = measure_pair(run_mm, &a, run_dn2, &d);
                printf("%-22s oneDNN 1 thread %.1f GOPS: qmx 1w %.2fx; 2 threads %.1f GOPS: qmx 2w %.2fx\n",
                       "", work / pd1.tb / 1e9, 1.0 / pd1.ratio, work / pd2.tb / 1e9, 1.0 / pd2.ratio);
                fflush(stdout);
                dn2_free(&d);
            }
        }
#endif
        free(a.A); free(a.B); free(a.C); free(a.blob); free(a.ws);
    }
    {
        mm a, b;
        rs r;
        pair p12, ps;
        mm_setup(&a, 1, 8192, 8192, &ex2);
        if (!same_bits(&a, &ex2)) { printf("MISMATCH 2 workers vs serial (GEMV)\n"); bad = 1; }
        b = a; a.ex = NULL; b.ex = &ex2;
        r.n = a.pb / 8 / 8 * 8;
        r.p = (const uint64_t *)bqu_alloc(r.n * 8);
        r.ex = &ex2;
        p12 = measure_pair(run_mm, &a, run_mm, &b);
        ps = measure_pair(run_mm, &b, run_rs, &r);
        printf("GEMV 1,8192,8192 (64 MiB blob): 1w %.1f GB/s of weights, 2w %.1f GB/s (%.2fx 1w);\n"
               "    2w vs a 2-thread read stream of the same bytes (%.1f GB/s), alternating: %.2fx\n",
               (double)a.pb / p12.ta / 1e9, (double)a.pb / p12.tb / 1e9, p12.ratio,
               (double)r.n * 8 / ps.tb / 1e9, (double)a.pb / ((double)r.n * 8) / ps.ratio);
        /* (ps.ratio is t(2w) / t(stream): the speed ratio is bytes over bytes divided by it) */
        free((void *)(uintptr_t)r.p);
        free(a.A); free(a.B); free(a.C); free(a.blob); free(a.ws);
    }
    {   /* int4 GEMV, M = 1, N = K = 8192: 32 MiB of packed weights, two copies (2x the L3) */
        fc4 a, b;
        rs r;
        pair p12, ps;
        unsigned seed = 23u;
        size_t i, serial = 0, task = 0, par = 0;
        int8_t *o1;
        memset(&a, 0, sizeof a);
        a.N = 8192; a.K = 8192; a.wb = a.N * a.K / 2;
        a.A = (int8_t *)bqu_alloc(a.K);
        a.W = (uint8_t *)bqu_alloc(2 * a.wb);
        a.out = (int8_t *)bqu_alloc(a.N);
        o1 = (int8_t *)bqu_alloc(a.N);
        for (i = 0; i < a.K; i++) a.A[i] = (int8_t)bqu_rng(&seed);
        for (i = 0; i < a.wb; i++) a.W[i] = (uint8_t)bqu_rng(&seed);
        memcpy(a.W + a.wb, a.W, a.wb);
        if (qmx_quantize_multiplier(1.0 / 65536.0, &a.mult, &a.shift) != QMX_OK) exit(1);
        qmx_matmul_i4_workspace_size(1, a.N, a.K, NULL, &serial);
        qmx_matmul_i4_workspace_size(1, QMX_TASK_N, a.K, NULL, &task);
        qmx_par_workspace_size(&ex2, serial, task, &par);
        a.wsb = serial > par ? serial : par;
        a.ws = bqu_alloc(a.wsb);
        b = a; a.ex = NULL; b.ex = &ex2; b.out = o1;
        run_fc4(&a); run_fc4(&b);
        if (memcmp(a.out, b.out, a.N) != 0) { printf("MISMATCH int4 GEMV 2 workers vs serial\n"); bad = 1; }
        run_fc4(&a); run_fc4(&b);   /* the other copy */
        if (memcmp(a.out, b.out, a.N) != 0) { printf("MISMATCH int4 GEMV 2 workers vs serial\n"); bad = 1; }
        /* the stream reads both copies per call (from memory too); the ratio is per byte */
        r.n = 2 * a.wb / 8 / 8 * 8; r.p = (const uint64_t *)(const void *)a.W; r.ex = &ex2;
        p12 = measure_pair(run_fc4, &a, run_fc4, &b);
        ps = measure_pair(run_fc4, &b, run_rs, &r);
        printf("int4 GEMV 1,8192,8192 (qmx_fully_connected_i4, 32 MiB of weights, 2 copies in turn):\n"
               "    1w %.1f GB/s of weights, 2w %.1f GB/s (%.2fx 1w);\n"
               "    2w vs a 2-thread read stream of the same bytes (%.1f GB/s), alternating: %.2fx\n",
               (double)a.wb / p12.ta / 1e9, (double)a.wb / p12.tb / 1e9, p12.ratio,
               (double)r.n * 8 / ps.tb / 1e9, (double)a.wb / ((double)r.n * 8) / ps.ratio);
        free(a.A); free(a.W); free(a.out); free(o1); free(a.ws);
    }
    {
        qz a, b;
        rs r;
        pair p12, ps;
        size_t i;
        int8_t *q1;
        qmx_qconfig z = QMX_ZERO_INIT;
        a.c = z; a.n = (size_t)16 << 20; a.s = 0.01f; a.ex = NULL;
        a.x = (const float *)bqu_alloc(a.n * 4);
        a.q = (int8_t *)bqu_alloc(a.n);
        q1 = (int8_t *)bqu_alloc(a.n);
        for (i = 0; i < a.n; i++) ((float *)(uintptr_t)a.x)[i] = (float)((int)(i * 2654435761u >> 20) - 2048) * 0.001f;
        qmx_quantize_tasks(&a.c, a.n, &a.nt);
        b = a; b.ex = &ex2; b.q = q1;
        run_qz(&a); run_qz(&b);
        if (memcmp(a.q, b.q, a.n) != 0) { printf("MISMATCH quantize 2 workers vs serial\n"); bad = 1; }
        r.n = a.n * 4 / 8; r.p = (const uint64_t *)(const void *)a.x; r.ex = &ex2;
        p12 = measure_pair(run_qz, &a, run_qz, &b);
        ps = measure_pair(run_qz, &b, run_rs, &r);
        printf("int8 quantize, 64 MiB of floats: 1w %.1f GB/s of floats, 2w %.1f GB/s (%.2fx 1w);\n"
               "    2w vs a 2-thread read pass of the 64 MiB (%.1f GB/s), alternating: %.2fx\n",
               (double)a.n * 4 / p12.ta / 1e9, (double)a.n * 4 / p12.tb / 1e9, p12.ratio,
               (double)a.n * 4 / ps.tb / 1e9, 1.0 / ps.ratio);   /* the same bytes: 1 / t ratio */
        free((void *)(uintptr_t)a.x); free(a.q); free(q1);
    }
    {   /* per channel along the last axis: [4096 rows][4096 channels] */
        qc a, b;
        pair p12;
        size_t i;
        float *s = (float *)bqu_alloc(4096 * 4);
        int8_t *q1;
        qmx_qconfig z = QMX_ZERO_INIT;
        a.c = z; a.c.granularity = QMX_PER_CHANNEL; a.c.outer = 4096; a.c.axis_len = 4096;
        a.c.inner = 1; a.n = (size_t)16 << 20; a.ex = NULL;
        for (i = 0; i < 4096; i++) s[i] = 0.005f + (float)(i % 37) * 0.0003f;
        a.s = s;
        a.x = (const float *)bqu_alloc(a.n * 4);
        a.q = (int8_t *)bqu_alloc(a.n);
        q1 = (int8_t *)bqu_alloc(a.n);
        for (i = 0; i < a.n; i++) ((float *)(uintptr_t)a.x)[i] = (float)((int)(i * 2654435761u >> 20) - 2048) * 0.001f;
        b = a; b.ex = &ex2; b.q = q1;
        run_qc(&a); run_qc(&b);
        if (memcmp(a.q, b.q, a.n) != 0) { printf("MISMATCH per-channel quantize 2 workers vs serial\n"); bad = 1; }
        p12 = measure_pair(run_qc, &a, run_qc, &b);
        printf("int8 per-channel quantize (4096 x 4096 channels, qmx_quantize_exec), 64 MiB of floats:\n"
               "    1w %.1f GB/s of floats, 2w %.1f GB/s (%.2fx 1w)\n",
               (double)a.n * 4 / p12.ta / 1e9, (double)a.n * 4 / p12.tb / 1e9, p12.ratio);
        free((void *)(uintptr_t)a.x); free(a.q); free(q1); free(s);
    }
    {   /* per-tensor absmax observer: the batch min / max in runs of chunks */
        obt a, b;
        pair p12;
        size_t i, n = (size_t)16 << 20;
        qmx_qconfig z = QMX_ZERO_INIT;
        qmx_calib_config cc = QMX_ZERO_INIT;
        float *x = (float *)bqu_alloc(n * 4);
        for (i = 0; i < n; i++) x[i] = (float)((int)(i * 2654435761u >> 20) - 2048) * 0.001f;
        a.x = b.x = x; a.n = b.n = n; a.ex = NULL; b.ex = &ex2;
        if (qmx_observer_init(&a.o, &cc, &z, n, &a.st, 1) != QMX_OK ||
            qmx_observer_init(&b.o, &cc, &z, n, &b.st, 1) != QMX_OK) exit(1);
        run_obt(&a); run_obt(&b);
        if (memcmp(&a.st, &b.st, sizeof a.st) != 0) { printf("MISMATCH absmax observer 2 workers vs serial\n"); bad = 1; }
        p12 = measure_pair(run_obt, &a, run_obt, &b);
        printf("per-tensor absmax observer (qmx_observer_update_exec), 64 MiB of floats:\n"
               "    1w %.1f GB/s of floats, 2w %.1f GB/s (%.2fx 1w)\n",
               (double)n * 4 / p12.ta / 1e9, (double)n * 4 / p12.tb / 1e9, p12.ratio);
        free(x);
    }
    {   /* KV decode: context 4096, 32 query / 8 KV heads of 128, int8 K and V */
        kvd a, b;
        rs r;
        pair p12, ps;
        size_t sb = 0, ws1 = 0, ws2 = 0, i, nb;
        qmx_kv_config cfg;
        unsigned seed = 29u;
        float *kv;
        memset(&cfg, 0, sizeof cfg);
        memset(&a, 0, sizeof a);
        cfg.capacity = 4096; cfg.n_kv_heads = 8; cfg.head_dim = 128;
        qmx_kv_cache_storage_size(&cfg, &sb);
        a.storage = bqu_alloc(sb);
        kv = (float *)bqu_alloc(2 * 64 * 8 * 128 * 4);
        a.q = (float *)bqu_alloc(32 * 128 * 4);
        a.out = (float *)bqu_alloc(32 * 128 * 4);
        for (i = 0; i < 32 * 128; i++) a.q[i] = (float)((int)(bqu_rng(&seed) % 2001u) - 1000) * 0.001f;
        if (qmx_kv_cache_init(&a.c, &cfg, a.storage, sb) != QMX_OK) exit(1);
        for (i = 0; i < 4096 / 64; i++) {   /* 64 tokens per append */
            size_t e;
            for (e = 0; e < 2 * 64 * 8 * 128; e++)
                kv[e] = (float)((int)(bqu_rng(&seed) % 2001u) - 1000) * 0.002f;
            if (qmx_kv_cache_append(&a.c, kv, kv + 64 * 8 * 128, 64) != QMX_OK) exit(1);
        }
        qmx_kv_attention_workspace_size(&cfg, 32, &ws1);
        qmx_kv_attention_workspace_size_exec(&cfg, 32, &ex2, &ws2);
        a.wsb = ws1 > ws2 ? ws1 : ws2;
        a.ws = bqu_alloc(a.wsb);
        b = a; b.out = (float *)bqu_alloc(32 * 128 * 4);
        a.o.executor = NULL; b.o.executor = &ex2;
        run_kvd(&a); run_kvd(&b);
        if (memcmp(a.out, b.out, 32 * 128 * 4) != 0) { printf("MISMATCH KV decode 2 workers vs serial\n"); bad = 1; }
        nb = qmx_kv_cache_bytes_per_token(&cfg) * 4096;   /* the K and V bytes a step reads */
        r.n = sb / 8 / 8 * 8; r.p = (const uint64_t *)a.storage; r.ex = &ex2;
        p12 = measure_pair(run_kvd, &a, run_kvd, &b);
        ps = measure_pair(run_kvd, &b, run_rs, &r);
        printf("KV decode, context 4096, 32/8 heads of 128, int8 K and V (%.1f MiB of cache):\n"
               "    1w %.0f tokens/s, 2w %.0f tokens/s (%.2fx 1w; aim 1.6x);\n"
               "    2w vs a 2-thread read stream of the cache bytes (%.1f GB/s), alternating: %.2fx (aim 0.9x)\n",
               (double)nb / 1048576.0, 1.0 / p12.ta, 1.0 / p12.tb, p12.ratio,
               (double)r.n * 8 / ps.tb / 1e9, (double)nb / ((double)r.n * 8) / ps.ratio);   /* ratio: t(2w) / t(stream) */
        free(kv); free(a.storage); free(a.q); free(a.out); free(b.out); free(a.ws);
    }
    {   /* KV decode, token split: context 32768, 8 query / 1 KV head of 128, int8 K and V */
        enum { CTX = 32768, NQ = 8, D = 128, TS = 1024 };
        kvd a, b, z;
        pair p12, pz, pz1;
        size_t sb = 0, ws0 = 0, ws1 = 0, ws2 = 0, i, wmax;
        qmx_kv_config cfg;
        unsigned seed = 31u;
        float *kv;
        memset(&cfg, 0, sizeof cfg);
        memset(&a, 0, sizeof a);
        cfg.capacity = CTX; cfg.n_kv_heads = 1; cfg.head_dim = D;
        qmx_kv_cache_storage_size(&cfg, &sb);
        a.storage = bqu_alloc(sb);
        kv = (float *)bqu_alloc(2 * 256 * D * 4);
        a.q = (float *)bqu_alloc(NQ * D * 4);
        a.out = (float *)bqu_alloc(NQ * D * 4);
        for (i = 0; i < NQ * D; i++) a.q[i] = (float)((int)(bqu_rng(&seed) % 2001u) - 1000) * 0.001f;
        if (qmx_kv_cache_init(&a.c, &cfg, a.storage, sb) != QMX_OK) exit(1);
        for (i = 0; i < CTX / 256; i++) {   /* 256 tokens per append */
            size_t e;
            for (e = 0; e < 2 * 256 * D; e++)
                kv[e] = (float)((int)(bqu_rng(&seed) % 2001u) - 1000) * 0.002f;
            if (qmx_kv_cache_append(&a.c, kv, kv + 256 * D, 256) != QMX_OK) exit(1);
        }
        a.o.token_split = TS;
        qmx_kv_attention_workspace_size(&cfg, NQ, &ws0);
        qmx_kv_attention_split_workspace_size(&cfg, NQ, &a.o, &ws1);
        a.o.executor = &ex2;
        qmx_kv_attention_split_workspace_size(&cfg, NQ, &a.o, &ws2);
        wmax = ws0 > ws1 ? ws0 : ws1;
        a.wsb = wmax > ws2 ? wmax : ws2;
        a.ws = bqu_alloc(a.wsb);
        a.o.executor = NULL;
        b = a; b.out = (float *)bqu_alloc(NQ * D * 4); b.o.executor = &ex2;
        z = a; z.out = (float *)bqu_alloc(NQ * D * 4); z.o.token_split = 0;
        b.ws = bqu_alloc(b.wsb); z.ws = bqu_alloc(z.wsb);
        run_kvd8(&a); run_kvd8(&b); run_kvd8(&z);
        if (memcmp(a.out, b.out, NQ * D * 4) != 0) { printf("MISMATCH KV token split 2 workers vs serial\n"); bad = 1; }
        p12 = measure_pair(run_kvd8, &a, run_kvd8, &b);
        pz = measure_pair(run_kvd8, &z, run_kvd8, &b);
        pz1 = measure_pair(run_kvd8, &z, run_kvd8, &a);
        printf("KV decode split over tokens, context %d, %d/1 heads of %d, int8 K and V, token_split %d (%d tasks):\n"
               "    unsplit serial (token_split 0) %.0f tokens/s; token_split 1w %.0f tokens/s (%.2fx unsplit);\n"
               "    token_split 2w %.0f tokens/s (%.2fx token_split 1w, %.2fx unsplit serial)\n",
               CTX, NQ, D, TS, CTX / TS, 1.0 / pz.ta, 1.0 / p12.ta, pz1.ratio, 1.0 / p12.tb,
               p12.ratio, pz.ratio);
        free(kv); free(a.storage); free(a.q); free(a.out); free(b.out); free(z.out);
        free(a.ws); free(b.ws); free(z.ws);
    }
    f = fopen("/proc/loadavg", "r");
    if (f) { if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1; fclose(f); }
    printf("aims: GEMM 2w >= 1.85x 1w and >= 1.0x oneDNN 2 threads; int8 and int4 GEMV, quantize and KV decode 2w >= 0.9x\n"
           "      the 2-thread stream; KV decode 2w >= 1.6x 1w; load average at the end "
           "%.2f %.2f %.2f\n", load[0], load[1], load[2]);
    pool_stop(&p);
    return bad;
}
