/* parallel_pthreads.c - qmx on several cores with a small pthreads pool (qmx_kernels.h, USING
 * SEVERAL CORES). qmx owns no thread: the pool below is the caller's, handed to qmx as a
 * qmx_executor. Prints whether 1 and 4 workers give the same bits (they always do).
 * Build: cc -std=c99 -O2 -I. examples/parallel_pthreads.c -lm  (glibc >= 2.34; else -pthread) */
#define _POSIX_C_SOURCE 200809L
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WORKERS = 4, M = 96, N = 1000, K = 512 };

/* One parallel_for call: each thread takes the next task until none is left. */
typedef struct job { void (*fn)(void *, int, int); void *arg; int n, next; pthread_mutex_t mu; } job;
typedef struct seat { job *j; int worker; } seat;

static void *worker_main(void *p) {
    seat *s = (seat *)p;
    for (;;) {
        int t;
        pthread_mutex_lock(&s->j->mu);
        t = s->j->next < s->j->n ? s->j->next++ : -1;
        pthread_mutex_unlock(&s->j->mu);
        if (t < 0) return NULL;
        s->j->fn(s->j->arg, t, s->worker);   /* worker indexes its workspace slice */
    }
}

static void parallel_for(void *pool, int n, void (*fn)(void *, int, int), void *arg) {
    pthread_t th[WORKERS];
    seat seats[WORKERS];
    job j;
    int i;
    (void)pool;   /* a real pool keeps its threads; this one starts them per call */
    j.fn = fn; j.arg = arg; j.n = n; j.next = 0;
    pthread_mutex_init(&j.mu, NULL);
    for (i = 1; i < WORKERS; i++) {
        seats[i].j = &j; seats[i].worker = i;
        pthread_create(&th[i], NULL, worker_main, &seats[i]);
    }
    seats[0].j = &j; seats[0].worker = 0;
    worker_main(&seats[0]);                   /* the calling thread is worker 0 */
    for (i = 1; i < WORKERS; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&j.mu);
}

int main(void) {
    static int8_t A[M * K], W[N * K];
    static int32_t C1[M * N], C4[M * N];
    qmx_executor ex = {parallel_for, NULL, WORKERS};
    qmx_matmul_i8_opts o = QMX_ZERO_INIT;
    size_t blob_bytes, serial, task, need;
    void *blob, *ws;
    int i, ok;
    for (i = 0; i < M * K; i++) A[i] = (int8_t)(i * 7 % 251 - 125);
    for (i = 0; i < N * K; i++) W[i] = (int8_t)(i * 13 % 241 - 120);
    qmx_matmul_i8_pack_weights_size(N, K, &blob_bytes);
    blob = malloc(blob_bytes);
    qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob, blob_bytes);
    /* workspace: the serial call's, or WORKERS slices of one task's (64 x 256 outputs) */
    qmx_matmul_i8_packed_workspace_size(M, N, K, &serial);
    qmx_matmul_i8_packed_workspace_size(M < QMX_TASK_M ? M : QMX_TASK_M, QMX_TASK_N, K, &task);
    qmx_par_workspace_size(&ex, serial, task, &need);
    ws = malloc(need > serial ? need : serial);
    if (!blob || !ws) return 1;
    ok = qmx_matmul_i8_packed(M, N, K, A, K, blob, blob_bytes, C1, N, &o, ws, serial) == QMX_OK;
    o.executor = &ex;
    ok &= qmx_matmul_i8_packed(M, N, K, A, K, blob, blob_bytes, C4, N, &o, ws, need) == QMX_OK;
    printf("%d workers: %s\n", WORKERS,
           ok && memcmp(C1, C4, sizeof C1) == 0 ? "same bits as 1 worker" : "MISMATCH");
    free(blob); free(ws);
    return ok && memcmp(C1, C4, sizeof C1) == 0 ? 0 : 1;
}
