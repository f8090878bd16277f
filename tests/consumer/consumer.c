/* consumer.c - a program OUTSIDE the qmx tree that uses an installed (or add_subdirectory'd)
 * qmx: `make test-consumers` builds it through pkg-config, CMake find_package and CMake
 * add_subdirectory (tests/consumer/run.sh). It includes every public header with the
 * implementation, quantizes a [2][4] weight per channel to int8 (AQT recipe) and checks the
 * codes against values worked out by hand, then prints "ok". Also valid C++. */
#define QMX_IMPLEMENTATION
#include "qmx.h"
#include "qmx_kernels.h"
#include "qmx_calib.h"
#include <stdio.h>

int main(void) {
    /* Row 0: absmax 1.0 -> scale 1/127.5; 1.0 * 127.5 = 127.5 -> clip 127; 0.5 -> 63.75 -> 64;
     * -0.25 -> -31.875 -> -32; 0 -> 0. Row 1: absmax 2.0 -> scale 2/127.5; -2 -> -127 (clip);
     * 1 -> 63.75 -> 64; 0.5 -> 31.875 -> 32; -1.5 -> -95.625 -> -96. */
    static const float w[8] = {1.0f, 0.5f, -0.25f, 0.0f, -2.0f, 1.0f, 0.5f, -1.5f};
    static const int8_t want[8] = {127, 64, -32, 0, -127, 64, 32, -96};
    qmx_qconfig c = QMX_ZERO_INIT;
    float s[2];
    int8_t q[8];
    int i;
    qmx_status st;
    c.granularity = QMX_PER_CHANNEL;
    c.outer = 1;
    c.axis_len = 2;
    c.inner = 4;
    st = qmx_compute_qparams(&c, w, 8, s, 2, NULL);
    if (st == QMX_OK) st = qmx_quantize(&c, w, 8, s, 2, NULL, q, sizeof q);
    if (st != QMX_OK) {
        printf("FAIL: %s\n", qmx_status_str(st));
        return 1;
    }
    if (s[0] != 1.0f / 127.5f || s[1] != 2.0f / 127.5f) {
        printf("FAIL: scales %.9g %.9g\n", s[0], s[1]);
        return 1;
    }
    for (i = 0; i < 8; i++)
        if (q[i] != want[i]) {
            printf("FAIL: q[%d] = %d, want %d\n", i, q[i], want[i]);
            return 1;
        }
    printf("ok qmx %d.%d.%d\n", QMX_VERSION_MAJOR, QMX_VERSION_MINOR, QMX_VERSION_PATCH);
    return 0;
}
