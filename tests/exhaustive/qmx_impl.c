/* qmx_impl.c - the qmx implementation for tests/exhaustive, compiled as C99 (the library's own
 * language) and linked into the C++ oracle program fp8_vs_cuda. */
#define QMX_IMPLEMENTATION
#include "qmx.h"
