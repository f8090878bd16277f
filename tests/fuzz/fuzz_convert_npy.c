/* fuzz_convert_npy.c - libFuzzer harness for qmx_convert's .npy reader
 * (examples/qmx_convert/qmx_files.h: qmxf_read_npy) over arbitrary bytes.
 * Run: FUZZ=fuzz_convert_npy FUZZ_SECONDS=30 make fuzz. Seeds: tests/fuzz/corpus/fuzz_convert_npy/.
 * Checks beyond "no crash / no sanitizer report": an error always comes with a message and
 * leaves the list empty; a success yields one tensor whose element count is the product of its
 * dimensions and whose data bytes fit in the input. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "../../examples/qmx_convert/qmx_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qmxf_list l;
    char err[512];
    qmx_status st;
    memset(&l, 0, sizeof l);
    err[0] = 0;
    st = qmxf_read_npy(data, size, "t", &l, err, sizeof err);
    if (st != QMX_OK) {
        if (!err[0] || l.n != 0) __builtin_trap();
    } else {
        size_t c = 1;
        int i;
        if (l.n != 1) __builtin_trap();
        for (i = 0; i < l.t[0].rank; i++) c *= l.t[0].dims[i];
        if (c != l.t[0].count || c * (l.t[0].source_dtype == QMXF_F32 ? 4 : 2) > size) __builtin_trap();
        if (c && !l.t[0].data) __builtin_trap();
    }
    qmxf_list_free(&l);
    return 0;
}
