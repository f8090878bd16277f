/* demo_mcu.c - the digits model as firmware: the int8 integer-only model exported by
 * `demo --export` (weights, biases, multipliers and shifts as const arrays in flash, plus the
 * 360 held-out images quantized to int8) classified with qmx_fully_connected_i8 on a
 * microcontroller. It checks its predictions against the host run's, which the header holds.
 * make demo-cortex-m builds it for a Cortex-M4 and runs it under QEMU. */
#define QMX_IMPLEMENTATION
#include "demo_int8.h"
#include "demo_model.h"   /* generated: build/demo_model.h */
#include <stdio.h>

int main(void) {
    static unsigned char ws[DEMO_INT8_WORKSPACE];
    int i, ok = 0, same = 0;
    for (i = 0; i < DEMO_NTEST; i++) {
        int p = demo_int8_classify(&demo_model, demo_test_x[i], ws);
        ok += p == demo_test_y[i];
        same += p == demo_host_pred[i];
    }
    printf("mcu: %d held-out digits, accuracy %d.%02d%%, predictions identical to the host run: %d/%d\n",
           DEMO_NTEST, ok * 100 / DEMO_NTEST, (ok * 10000 / DEMO_NTEST) % 100, same, DEMO_NTEST);
    return same == DEMO_NTEST ? 0 : 1;
}
