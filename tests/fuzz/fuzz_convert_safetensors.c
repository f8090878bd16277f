/* fuzz_convert_safetensors.c - libFuzzer harness for qmx_convert's .safetensors reader
 * (examples/qmx_convert/qmx_files.h: qmxf_read_safetensors) over arbitrary bytes, then the
 * converter's quantize + header emission on whatever it accepted (int8 per channel).
 * Run: FUZZ=fuzz_convert_safetensors FUZZ_SECONDS=30 make fuzz.
 * Seeds: tests/fuzz/corpus/fuzz_convert_safetensors/.
 * Checks beyond "no crash / no sanitizer report": an error always comes with a message and
 * leaves the list empty; on success every tensor's count is the product of its dimensions and
 * the tensors' data together fit in the input. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "../../examples/qmx_convert/qmx_files.h"
#include "../../examples/qmx_convert/qmx_convert_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qmxf_list l;
    char err[512];
    qmx_status st;
    memset(&l, 0, sizeof l);
    err[0] = 0;
    st = qmxf_read_safetensors(data, size, &l, err, sizeof err);
    if (st != QMX_OK) {
        if (!err[0] || l.n != 0) __builtin_trap();
    } else {
        size_t k, total = 0;
        for (k = 0; k < l.n; k++) {
            size_t c = 1;
            int i;
            for (i = 0; i < l.t[k].rank; i++) c *= l.t[k].dims[i];
            if (c != l.t[k].count) __builtin_trap();
            total += c * (l.t[k].source_dtype == QMXF_F32 ? 4 : 2);
        }
        if (total > size) __builtin_trap();
        if (l.n && l.n < 16) { /* the emitter on what the reader accepted */
            static char *argv[] = {(char *)"qmx_convert",          (char *)"--rule",
                                   (char *)"*b*=int4:per_block=3", (char *)"--default",
                                   (char *)"int8:per_channel",     (char *)"x"};
            qmxc_options o;
            qmxc_buf out;
            memset(&out, 0, sizeof out);
            if (qmxc_parse_args(6, argv, &o, err, sizeof err) != QMX_OK) __builtin_trap();
            st = qmxc_convert(&o, &l, &out, NULL, err, sizeof err);
            if (st == QMX_OK && (!out.p || !strstr(out.p, "_TENSOR_COUNT"))) __builtin_trap();
            qmxc_buf_free(&out);
            qmxc_options_free(&o);
        }
    }
    qmxf_list_free(&l);
    return 0;
}
