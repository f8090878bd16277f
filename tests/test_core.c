/* test_core.c - the core contracts of qmx.h that need no reference data: status names,
 * dtype facts, storage sizes with overflow detection, the int4 nibble layout, and the
 * portable random stream. Each case names the rule it checks. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_test.h"

static void status_codes_have_names(void) {
    int s;
    QMX_TEST_CASE("every status has a distinct name; QMX_OK is 0");
    CHECK(QMX_OK == 0, "QMX_OK must be 0");
    CHECK(strcmp(qmx_status_str(QMX_OK), "ok") == 0, "QMX_OK name");
    for (s = -10; s <= 0; s++) {
        int t;
        CHECK(strcmp(qmx_status_str((qmx_status)s), "unknown status") != 0, "status %d unnamed", s);
        for (t = -10; t < s; t++)
            CHECK(strcmp(qmx_status_str((qmx_status)s), qmx_status_str((qmx_status)t)) != 0,
                  "statuses %d and %d share a name", s, t);
    }
    CHECK(strcmp(qmx_status_str((qmx_status)-99), "unknown status") == 0, "out-of-range status");
}

static void dtype_facts(void) {
    int32_t lo = 1, hi = 1;
    QMX_TEST_CASE("dtype bits, names and integer ranges");
    CHECK(qmx_dtype_bits(QMX_INT4) == 4 && qmx_dtype_bits(QMX_UINT4) == 4, "int4 bits");
    CHECK(qmx_dtype_bits(QMX_INT8) == 8 && qmx_dtype_bits(QMX_FP8_E5M2FNUZ) == 8, "8-bit");
    CHECK(qmx_dtype_bits(QMX_INT16) == 16 && qmx_dtype_bits(QMX_FLOAT32) == 32, "wide");
    CHECK(qmx_dtype_bits((qmx_dtype)42) == 0, "unknown dtype has 0 bits");
    CHECK(strcmp(qmx_dtype_name(QMX_FP8_E4M3FNUZ), "fp8_e4m3fnuz") == 0, "fp8 name");
    CHECK(strcmp(qmx_dtype_name((qmx_dtype)42), "invalid") == 0, "unknown name");
    CHECK(qmx_dtype_is_fp8(QMX_FP8_E4M3FN) && !qmx_dtype_is_fp8(QMX_INT8), "is_fp8");
    CHECK(qmx_dtype_is_int(QMX_UINT4) && !qmx_dtype_is_int(QMX_FLOAT32), "is_int");
    CHECK(qmx_dtype_int_range(QMX_INT4, &lo, &hi) == QMX_OK && lo == -8 && hi == 7, "int4 range");
    CHECK(qmx_dtype_int_range(QMX_UINT8, &lo, &hi) == QMX_OK && lo == 0 && hi == 255, "uint8 range");
    CHECK(qmx_dtype_int_range(QMX_INT16, &lo, &hi) == QMX_OK && lo == -32768 && hi == 32767, "int16");
    lo = hi = 99;
    CHECK(qmx_dtype_int_range(QMX_FP8_E5M2, &lo, &hi) == QMX_ERR_DTYPE && lo == 99 && hi == 99,
          "fp8 has no integer range; outputs untouched");
    CHECK(qmx_dtype_int_range(QMX_INT8, NULL, &hi) == QMX_ERR_NULL, "NULL output");
}

static void storage_sizes_detect_overflow(void) {
    size_t b = 7, n = 0;
    size_t dims[3];
    QMX_TEST_CASE("storage bytes: int4 packs two per byte, overflow is a status");
    CHECK(qmx_dtype_storage_bytes(QMX_INT4, 5, &b) == QMX_OK && b == 3, "5 int4 -> 3 bytes");
    CHECK(qmx_dtype_storage_bytes(QMX_UINT4, 4, &b) == QMX_OK && b == 2, "4 uint4 -> 2 bytes");
    CHECK(qmx_dtype_storage_bytes(QMX_INT4, SIZE_MAX, &b) == QMX_OK && b == SIZE_MAX / 2 + 1,
          "SIZE_MAX int4 fits");
    CHECK(qmx_dtype_storage_bytes(QMX_INT16, 3, &b) == QMX_OK && b == 6, "int16 bytes");
    CHECK(qmx_dtype_storage_bytes(QMX_INT2, 5, &b) == QMX_OK && b == 2, "5 int2 -> 2 bytes");
    CHECK(qmx_dtype_storage_bytes(QMX_UINT2, 8, &b) == QMX_OK && b == 2, "8 uint2 -> 2 bytes");
    CHECK(qmx_dtype_storage_bytes(QMX_INT2, SIZE_MAX, &b) == QMX_OK && b == SIZE_MAX / 4 + 1,
          "int2 byte count never overflows");
    CHECK(qmx_dtype_storage_bytes(QMX_INT5, 7, &b) == QMX_OK && b == 7, "int3..int7: a byte each");
    {   /* the ranges of Qwix's widths: [-2^(b-1), 2^(b-1) - 1] */
        static const qmx_dtype w[] = {QMX_INT2, QMX_INT3, QMX_INT4, QMX_INT5, QMX_INT6, QMX_INT7};
        int k;
        for (k = 0; k < 6; k++) {
            int32_t lo = 0, hi = 0;
            CHECK(qmx_dtype_int_range(w[k], &lo, &hi) == QMX_OK && lo == -(1 << (k + 1)) &&
                      hi == (1 << (k + 1)) - 1 && qmx_dtype_is_int(w[k]),
                  "int%d range [%d, %d]", k + 2, (int)lo, (int)hi);
        }
    }
    b = 7;
    CHECK(qmx_dtype_storage_bytes(QMX_INT16, SIZE_MAX / 2 + 1, &b) == QMX_ERR_OVERFLOW && b == 7,
          "int16 overflow, output untouched");
    CHECK(qmx_dtype_storage_bytes(QMX_FLOAT32, SIZE_MAX / 4 + 1, &b) == QMX_ERR_OVERFLOW, "f32 overflow");
    CHECK(qmx_dtype_storage_bytes(QMX_DTYPE_INVALID, 1, &b) == QMX_ERR_DTYPE, "invalid dtype");
    CHECK(qmx_dtype_storage_bytes(QMX_INT8, 1, NULL) == QMX_ERR_NULL, "NULL");
    dims[0] = 3; dims[1] = 5; dims[2] = 7;
    CHECK(qmx_shape_count(dims, 3, &n) == QMX_OK && n == 105, "3*5*7");
    CHECK(qmx_shape_count(dims, 0, &n) == QMX_OK && n == 1, "rank 0 is a scalar");
    dims[0] = SIZE_MAX / 2; dims[1] = 3;
    n = 9;
    CHECK(qmx_shape_count(dims, 2, &n) == QMX_ERR_OVERFLOW && n == 9, "product overflow");
    CHECK(qmx_shape_count(dims, -1, &n) == QMX_ERR_SIZE, "negative rank");
    CHECK(qmx_shape_count(NULL, 2, &n) == QMX_ERR_NULL, "NULL dims");
}

static void int4_nibble_layout(void) {
    /* element 2i -> low nibble of byte i, element 2i+1 -> high nibble; two's complement */
    const int8_t v[5] = { 1, -2, 7, -8, -1 };
    uint8_t p[4] = { 0xAA, 0xAA, 0xAA, 0xAA };
    int8_t back[5];
    int i;
    QMX_TEST_CASE("int4 packing: low nibble first, odd tail's high nibble is 0");
    CHECK(qmx_pack_int4(QMX_INT4, v, 5, p, 3) == QMX_OK, "pack");
    CHECK(p[0] == 0xE1, "byte 0: elements 1 (0x1) and -2 (0xE) -> 0xE1, got 0x%02X", p[0]);
    CHECK(p[1] == 0x87, "byte 1: 7 and -8 -> 0x87, got 0x%02X", p[1]);
    CHECK(p[2] == 0x0F, "byte 2: -1 and the unused nibble 0 -> 0x0F, got 0x%02X", p[2]);
    CHECK(p[3] == 0xAA, "nothing written past the packed size");
    CHECK(qmx_unpack_int4(QMX_INT4, p, 3, 5, back) == QMX_OK, "unpack");
    for (i = 0; i < 5; i++) CHECK(back[i] == v[i], "round trip %d", i);
    {
        const int8_t u[3] = { 15, 0, 9 };
        CHECK(qmx_pack_int4(QMX_UINT4, u, 3, p, 2) == QMX_OK && p[0] == 0x0F && p[1] == 0x09,
              "uint4: 15,0 -> 0x0F; 9 -> 0x09");
        CHECK(qmx_unpack_int4(QMX_UINT4, p, 2, 3, back) == QMX_OK && back[0] == 15 && back[2] == 9,
              "uint4 unpack is unsigned");
    }
    {
        const int8_t bad[2] = { 8, 0 };
        p[0] = 0x55;
        CHECK(qmx_pack_int4(QMX_INT4, bad, 2, p, 1) == QMX_ERR_ARG && p[0] == 0x55,
              "8 is outside int4; output untouched");
        CHECK(qmx_pack_int4(QMX_INT4, v, 5, p, 2) == QMX_ERR_BUFFER_TOO_SMALL && p[0] == 0x55,
              "5 nibbles need 3 bytes");
        CHECK(qmx_pack_int4(QMX_INT8, v, 2, p, 1) == QMX_ERR_DTYPE, "int8 is not packed");
        CHECK(qmx_pack_int4(QMX_INT4, v, 0, p, 1) == QMX_ERR_SIZE, "count 0");
        CHECK(qmx_unpack_int4(QMX_INT4, NULL, 1, 1, back) == QMX_ERR_NULL, "NULL");
    }
}

static void int2_layout(void) {
    /* element 4i + k -> bits 2k, 2k + 1 of byte i (ONNX INT2); two's complement */
    const int8_t v[5] = { 1, -2, 0, -1, 1 };
    uint8_t p[3] = { 0xAA, 0xAA, 0xAA };
    int8_t back[5];
    int i;
    QMX_TEST_CASE("int2 packing: element 4i in the lowest bits, the tail's unused bits 0");
    CHECK(qmx_pack_int2(QMX_INT2, v, 5, p, 2) == QMX_OK, "pack");
    CHECK(p[0] == 0xC9, "byte 0: 1 (01), -2 (10), 0 (00), -1 (11) -> 0b11001001, got 0x%02X", p[0]);
    CHECK(p[1] == 0x01 && p[2] == 0xAA, "byte 1: 1 and three unused zeros; nothing past it");
    CHECK(qmx_unpack_int2(QMX_INT2, p, 2, 5, back) == QMX_OK, "unpack");
    for (i = 0; i < 5; i++) CHECK(back[i] == v[i], "round trip %d", i);
    {
        const int8_t u[2] = { 3, 2 }, bad[1] = { 2 };
        CHECK(qmx_pack_int2(QMX_UINT2, u, 2, p, 1) == QMX_OK && p[0] == 0x0B &&
                  qmx_unpack_int2(QMX_UINT2, p, 1, 2, back) == QMX_OK && back[0] == 3 && back[1] == 2,
              "uint2: 3, 2 -> 0x0B and back unsigned");
        p[0] = 0x55;
        CHECK(qmx_pack_int2(QMX_INT2, bad, 1, p, 1) == QMX_ERR_ARG && p[0] == 0x55, "2 is not int2");
        CHECK(qmx_pack_int2(QMX_INT2, v, 5, p, 1) == QMX_ERR_BUFFER_TOO_SMALL && p[0] == 0x55,
              "5 values need 2 bytes");
        CHECK(qmx_pack_int2(QMX_INT4, v, 2, p, 1) == QMX_ERR_DTYPE, "int4 is not int2");
        CHECK(qmx_unpack_int2(QMX_INT2, p, 1, 0, back) == QMX_ERR_SIZE, "count 0");
    }
    {   /* through qmx_quantize: 5 int2 values, the last byte's unused bits written 0 */
        qmx_qconfig c = QMX_ZERO_INIT;
        float x[5] = { 1.0f, -2.0f, 0.0f, -1.0f, 1.0f }, s = 1.0f, y[5];
        c.dtype = QMX_INT2; c.recipe = QMX_RECIPE_QWIX;
        p[0] = p[1] = 0xFF;
        CHECK(qmx_quantize(&c, x, 5, &s, 1, NULL, p, 2) == QMX_OK && p[0] == 0xC9 && p[1] == 0x01,
              "qmx_quantize int2: 0x%02X 0x%02X", p[0], p[1]);
        CHECK(qmx_dequantize(&c, p, 2, 5, &s, 1, NULL, y) == QMX_OK && y[1] == -2.0f && y[4] == 1.0f,
              "qmx_dequantize int2");
    }
}

/* xoshiro128** reference values: first outputs for a state set directly (the algorithm as
 * published by Blackman and Vigna, computed by hand from its definition for s = {1,2,3,4}). */
static void rng_stream_is_portable(void) {
    qmx_rng r, r2;
    uint32_t a, b;
    int i, same = 1;
    float lo = 1.0f, hi = -1.0f;
    QMX_TEST_CASE("rng: xoshiro128** stream, seeded, noise in [-0.5, 0.5)");
    r.s[0] = 1; r.s[1] = 2; r.s[2] = 3; r.s[3] = 4;
    /* first output: rotl(s1 * 5, 7) * 9 = rotl(10, 7) * 9 = 1280 * 9 = 11520 */
    CHECK(qmx_rng_next_u32(&r) == 11520u, "first xoshiro128** output");
    /* state after one step: t = 2<<9 = 1024; s2 ^= s0 -> 2; s3 ^= s1 -> 6; s1 ^= s2 -> 0;
     * s0 ^= s3 -> 7; s2 ^= t -> 1026; s3 = rotl(6, 11) = 12288. second output:
     * rotl(0 * 5, 7) * 9 = 0 */
    CHECK(r.s[0] == 7u && r.s[1] == 0u && r.s[2] == 1026u && r.s[3] == 12288u, "state step");
    CHECK(qmx_rng_next_u32(&r) == 0u, "second output");
    qmx_rng_seed(&r, 42);
    qmx_rng_seed(&r2, 42);
    for (i = 0; i < 1000; i++) {
        a = qmx_rng_next_u32(&r);
        b = qmx_rng_next_u32(&r2);
        if (a != b) same = 0;
    }
    CHECK(same, "same seed, same stream");
    qmx_rng_seed(&r2, 43);
    CHECK(qmx_rng_next_u32(&r2) != qmx_rng_next_u32(&r), "different seeds differ");
    for (i = 0; i < 100000; i++) {
        float u = qmx_rng_next_noise(&r);
        if (u < lo) lo = u;
        if (u > hi) hi = u;
    }
    CHECK(lo >= -0.5f && hi < 0.5f && lo < -0.49f && hi > 0.49f, "noise range [%g, %g]", lo, hi);
}

int main(void) {
    status_codes_have_names();
    dtype_facts();
    storage_sizes_detect_overflow();
    int4_nibble_layout();
    int2_layout();
    rng_stream_is_portable();
    return QMX_TEST_END();
}
