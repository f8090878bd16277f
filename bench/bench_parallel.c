/* bench_parallel.c - the int8 kernels on 1 and 2 workers (qmx_kernels.h, USING SEVERAL CORES),
 * through a small persistent pthreads pool given to qmx as a qmx_executor (`make bench`, or
 * BENCH=parallel). Rows, each pair of figures timed in alternation in this run:
 *   - qmx_matmul_i8_packed GEMM 1024^3 and (128, 4096, 4096): 1 worker (the serial call) vs 2
 *     workers, GOPS = 2*M*N*K / s (aim: 2 workers >= 1.85x 1 worker);
 *   - the cold GEMV, M = 1, N = K = 8192 (64 MiB blob, 2x the L3): 1 vs 2 workers, and 2
 *     workers vs a 2-thread read stream of the same 64 MiB through the same pool (aim >= 0.9x);
 *   - int8 per-tensor quantize of 64 MiB of floats: qmx_quantize (1 worker) vs two
 *     qmx_quantize_run halves on the pool, and vs a 2-thread read pass of the 64 MiB.
 * Every 2-worker result is compared bit for bit with the serial one before it is timed.
 * oneDNN with 2 threads is not timed here (bench_matmul times it single-threaded). */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include "bench_util.h"
#include <pthread.h>
#include <stdint.h>

#ifndef QMX_BENCH_CFLAGS
#  define QMX_BENCH_CFLAGS "(not recorded; build with `make bench`)"
#endif

/* ---- the pool: the caller is worker 0, helper threads are 1.. ---- */
#define MAXW 8
typedef struct pool {
    pthread_t th[MAXW];
    int helpers, quit, pending, n, next;
    unsigned gen;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    void (*fn)(void *, int, int);
    void *arg;
} pool;
typedef struct seat { pool *p; int worker; } seat;
static seat seats[MAXW];

static void pool_work(pool *p, int worker) {
    for (;;) {
        int t;
        pthread_mutex_lock(&p->mu);
        t = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (t < 0) return;
        p->fn(p->arg, t, worker);
    }
}
static void *pool_main(void *v) {
    seat *s = (seat *)v;
    pool *p = s->p;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        seen = p->gen;
        if (p->quit) { pthread_mutex_unlock(&p->mu); return NULL; }
        pthread_mutex_unlock(&p->mu);
        pool_work(p, s->worker);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}
static void pool_for(void *vp, int n, void (*fn)(void *, int, int), void *arg) {
    pool *p = (pool *)vp;
    pthread_mutex_lock(&p->mu);
    p->fn = fn; p->arg = arg; p->n = n; p->next = 0; p->pending = p->helpers; p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    pool_work(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
static void pool_start(pool *p, int workers) {
    int i;
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->helpers = workers - 1;
    for (i = 1; i < workers; i++) {
        seats[i].p = p; seats[i].worker = i;
        pthread_create(&p->th[i], NULL, pool_main, &seats[i]);
    }
}
static void pool_stop(pool *p) {
    int i;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (i = 1; i <= p->helpers; i++) pthread_join(p->th[i], NULL);
}

/* ---- the timed operations ---- */
typedef struct mm {
    size_t M, N, K, pb, wsb;
    int8_t *A;
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
    free(B);
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

int main(void) {
    static const size_t shapes[2][3] = {{1024, 1024, 1024}, {128, 4096, 4096}};
    pool p;
    qmx_executor ex2;
    double load[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    int i, bad = 0;
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
        free(a.A); free(a.C); free(a.blob); free(a.ws);
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
               (double)r.n * 8 / ps.tb / 1e9, ps.ratio * (double)a.pb / ((double)r.n * 8));
        free((void *)(uintptr_t)r.p);
        free(a.A); free(a.C); free(a.blob); free(a.ws);
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
               (double)a.n * 4 / ps.tb / 1e9, ps.ratio);
        free((void *)(uintptr_t)a.x); free(a.q); free(q1);
    }
    f = fopen("/proc/loadavg", "r");
    if (f) { if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1; fclose(f); }
    printf("aims: GEMM 2w >= 1.85x 1w, GEMV and quantize 2w >= 0.9x the 2-thread stream; load average at the end "
           "%.2f %.2f %.2f\n", load[0], load[1], load[2]);
    pool_stop(&p);
    return bad;
}
