/* fuzz_calib_method.c - libFuzzer harness for qmx_calib_parse_method and qmx_parse_f32.
 * Any input must give QMX_OK or QMX_ERR_PARSE, never a crash or a sanitizer report; the output
 * is written only on success; an accepted method satisfies the documented ranges and an
 * accepted number is finite. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_calib.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qmx_calib_config c, before;
    float f = 12345.0f;
    qmx_status st;
    memset(&c, 0x5A, sizeof c);
    before = c;
    st = qmx_calib_parse_method((const char *)data, size, &c);
    if (st != QMX_OK && st != QMX_ERR_PARSE) abort();
    if (st != QMX_OK && memcmp(&c, &before, sizeof c) != 0) abort();
    if (st == QMX_OK) {
        if ((unsigned)c.method > (unsigned)QMX_CALIB_FIXED) abort();
        if (c.method == QMX_CALIB_FIXED && !(c.lo <= 0.0f && c.hi >= 0.0f && c.lo < c.hi)) abort();
        if (c.method != QMX_CALIB_FIXED && c.clip < 0.0f) abort();
    }
    st = qmx_parse_f32((const char *)data, size, &f);
    if (st != QMX_OK && st != QMX_ERR_PARSE) abort();
    if (st != QMX_OK && f != 12345.0f) abort();
    if (st == QMX_OK && !(f - f == 0.0f)) abort();   /* finite */
    return 0;
}
