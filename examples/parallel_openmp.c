/* parallel_openmp.c - qmx on several cores with OpenMP (qmx_kernels.h, USING SEVERAL CORES):
 * the executor's parallel_for is one "omp parallel for"; the worker index is the OpenMP
 * thread number, which selects that thread's workspace slice. A fully-connected layer with
 * float activations quantized per row on the fly (qmx_matmul_f32_dyn_i8_exec).
 * Build: cc -std=c99 -O2 -fopenmp -I. examples/parallel_openmp.c -lm */
#define QMX_IMPLEMENTATION
#include "qmx_kernels.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 8, N = 4096, K = 1024 };

static void parallel_for(void *pool, int n, void (*fn)(void *, int, int), void *arg) {
    int t;
    (void)pool;
#pragma omp parallel for schedule(dynamic, 1)
    for (t = 0; t < n; t++) fn(arg, t, omp_get_thread_num());
}

int main(void) {
    static float X[M * K], Y1[M * N], Yp[M * N], sw[N];
    static int8_t W[N * K];
    qmx_executor ex = {parallel_for, NULL, 1};
    size_t blob_bytes, serial, task, need, i;
    void *blob, *ws;
    int ok;
    ex.workers = omp_get_max_threads();
    for (i = 0; i < M * K; i++) X[i] = (float)((int)(i * 37 % 2001) - 1000) * 0.001f;
    for (i = 0; i < N * K; i++) W[i] = (int8_t)(i * 13 % 241 - 120);
    for (i = 0; i < N; i++) sw[i] = 0.01f + 0.0001f * (float)(i % 97);
    qmx_matmul_i8_pack_weights_size(N, K, &blob_bytes);
    blob = malloc(blob_bytes);
    if (!blob) return 1;
    qmx_matmul_i8_pack_weights(W, N, K, K, QMX_B_NK, blob, blob_bytes);
    qmx_matmul_f32_dyn_i8_workspace_size(M, N, K, &serial);
    qmx_matmul_f32_dyn_i8_workspace_size(M, QMX_TASK_N, K, &task);  /* one 8 x 256 task */
    qmx_par_workspace_size(&ex, serial, task, &need);
    ws = malloc(need > serial ? need : serial);
    if (!ws) return 1;
    ok = qmx_matmul_f32_dyn_i8(M, N, K, X, K, blob, blob_bytes, sw, N, Y1, N, ws, serial) ==
         QMX_OK;
    ok &= qmx_matmul_f32_dyn_i8_exec(M, N, K, X, K, blob, blob_bytes, sw, N, Yp, N, &ex, ws,
                                     need) == QMX_OK;
    ok &= memcmp(Y1, Yp, sizeof Y1) == 0;
    printf("%d OpenMP threads: %s\n", ex.workers, ok ? "same bits as 1 thread" : "MISMATCH");
    free(blob); free(ws);
    return ok ? 0 : 1;
}
