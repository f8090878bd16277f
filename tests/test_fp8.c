/* test_fp8.c - qmx's fp8 conversions against reference data nobody on the qmx team wrote.
 *
 * References (tests/data, copied unchanged from the golden set; each file's '#' lines name
 * its source):
 *   cuda_fp8_e4m3_*.txt, cuda_fp8_e5m2_*.txt   NVIDIA CUDA 13.0 cuda_fp8.hpp, host path:
 *       decode tables and __nv_cvt_float_to_fp8 with __NV_SATFINITE (sat) / __NV_NOSAT (nosat)
 *   fp8_<fmt>_decode.txt / fp8_<fmt>_encode.txt  jax-ml/ml_dtypes v0.6.0 float8.h: decode
 *       tables and ConvertFrom<kSaturate, kTruncate>: rne = numpy astype, rne_sat (the rtz
 *       columns are truncation, which qmx does not offer, and are ignored)
 *   fp8_edge_cases.txt  the explicit edge list (both signs) with CUDA and ml_dtypes columns
 *
 * Rules (the qmx.h doc block, "FP8 CONVERSION"):
 *   - decode is bit-exact; a NaN code only has to decode to some NaN.
 *   - saturate == 0 equals CUDA __NV_NOSAT and numpy astype (ml_dtypes rne).
 *   - saturate != 0 equals CUDA __NV_SATFINITE, and ml_dtypes rne_sat for every input except
 *     +-Inf: there qmx clips to +-max (AQT/Flax clip-then-cast) while ml_dtypes keeps Inf
 *     (E5M2) or makes NaN (E4M3FN, FNUZ). That documented departure is checked exactly.
 *   - a NaN input gives a NaN code; the references differ on which (CUDA: always 0x7F,
 *     ml_dtypes keeps the sign), so any NaN code of the format is accepted against them, and
 *     qmx's own documented choice is checked separately.
 * Every data file is streamed line by line (the test also runs on 16 MiB Cortex-M targets). */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_test.h"

/* ---- format facts, written from the OCP / ml_dtypes definitions, not taken from qmx ---- */
typedef struct fmt_info {
    qmx_dtype fmt;
    const char *name;
    unsigned max_code;   /* largest finite positive code */
    uint32_t max_bits;   /* its value as float32 bits */
    int fnuz;            /* single NaN 0x80, no -0, no Inf */
    int has_inf;         /* E5M2: s.11111.00 */
} fmt_info;

static const fmt_info FMT_E4M3FN = { QMX_FP8_E4M3FN, "e4m3fn", 0x7Eu, 0x43E00000u, 0, 0 };     /* 448 */
static const fmt_info FMT_E5M2 = { QMX_FP8_E5M2, "e5m2", 0x7Bu, 0x47600000u, 0, 1 };           /* 57344 */
static const fmt_info FMT_E4M3FNUZ = { QMX_FP8_E4M3FNUZ, "e4m3fnuz", 0x7Fu, 0x43700000u, 1, 0 }; /* 240 */
static const fmt_info FMT_E5M2FNUZ = { QMX_FP8_E5M2FNUZ, "e5m2fnuz", 0x7Fu, 0x47600000u, 1, 0 }; /* 57344 */

static const fmt_info *const ALL_FMTS[4] = { &FMT_E4M3FN, &FMT_E5M2, &FMT_E4M3FNUZ, &FMT_E5M2FNUZ };

static int is_nan_code(const fmt_info *f, unsigned c) {
    c &= 0xFFu;
    if (f->fnuz) return c == 0x80u;
    if (f->has_inf) return (c & 0x7Fu) > 0x7Cu;   /* s.11111.{01,10,11} */
    return (c & 0x7Fu) == 0x7Fu;                   /* s.1111.111 */
}
static int is_inf_code(const fmt_info *f, unsigned c) { return f->has_inf && (c & 0x7Fu) == 0x7Cu; }
static int f32_bits_is_nan(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }
static int f32_bits_is_inf(uint32_t b) { return (b & 0x7FFFFFFFu) == 0x7F800000u; }


/* Hex field ("0x7f", "7f", "7f800000") -> value; *ok cleared on a malformed field. */
static uint32_t parse_hex(const char *s, int *ok) {
    char *end;
    unsigned long v = strtoul(s, &end, 16);
    if (end == s || *end != 0 || v > 0xFFFFFFFFul) *ok = 0;
    return (uint32_t)v;
}

/* ---- one encode expectation ---------------------------------------------------------------- */
enum ref_kind {
    REF_EXACT,     /* CUDA sat / nosat, ml_dtypes rne: qmx must match (NaN input: any NaN code) */
    REF_ML_SAT     /* ml_dtypes rne_sat: as REF_EXACT except +-Inf input -> qmx gives +-max */
};

static void check_encode(const fmt_info *f, uint32_t xbits, unsigned want, int saturate,
                         enum ref_kind kind, const qmx_test_table *t) {
    float x = qmx_test_bits_f32(xbits);
    unsigned got = qmx_fp8_from_f32(x, f->fmt, saturate);
    if (f32_bits_is_nan(xbits)) {
        CHECK(is_nan_code(f, want), "%s line %ld: reference code 0x%02x for NaN is not a NaN code",
              t->name, t->line_no, want);
        CHECK(is_nan_code(f, got), "%s line %ld: %s NaN input 0x%08lx (sat=%d) gave 0x%02x, not a NaN code",
              t->name, t->line_no, f->name, (unsigned long)xbits, saturate, got);
    } else if (kind == REF_ML_SAT && f32_bits_is_inf(xbits)) {
        /* documented departure: qmx clips Inf to +-max; ml_dtypes keeps Inf or makes NaN */
        unsigned want_max = ((xbits >> 24) & 0x80u) | f->max_code;
        CHECK(is_nan_code(f, want) || is_inf_code(f, want),
              "%s line %ld: ml_dtypes' saturating cast of Inf was expected to be Inf/NaN, is 0x%02x",
              t->name, t->line_no, want);
        CHECK(got == want_max, "%s line %ld: %s saturate(Inf 0x%08lx) = 0x%02x, want sign|max 0x%02x",
              t->name, t->line_no, f->name, (unsigned long)xbits, got, want_max);
    } else {
        CHECK(got == want, "%s line %ld: %s from_f32(0x%08lx, sat=%d) = 0x%02x, want 0x%02x",
              t->name, t->line_no, f->name, (unsigned long)xbits, saturate, got, want);
    }
}

/* ---- 1. decode tables ---------------------------------------------------------------------- */
static void decode_matches_table(const fmt_info *f, const char *file) {
    qmx_test_table t;
    char line[256], *fld[4];
    int seen[256];
    int i;
    memset(seen, 0, sizeof seen);
    if (!qmx_test_table_open(&t, file, "# columns: code(hex) float32_bits(hex) value")) return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int ok = 1;
        uint32_t code, want, got;
        if (qmx_test_split_fields(line, fld, 4) < 2) { CHECK(0, "%s line %ld: malformed", file, t.line_no); continue; }
        code = parse_hex(fld[0], &ok);
        want = parse_hex(fld[1], &ok);
        if (!ok || code > 255u) { CHECK(0, "%s line %ld: malformed", file, t.line_no); continue; }
        seen[code]++;
        got = qmx_test_f32_bits(qmx_fp8_to_f32((uint8_t)code, f->fmt));
        CHECK(f32_bits_is_nan(want) == is_nan_code(f, code),
              "%s: code 0x%02x NaN-ness of the table disagrees with the %s definition", file,
              (unsigned)code, f->name);
        if (f32_bits_is_nan(want))
            CHECK(f32_bits_is_nan(got), "%s: NaN code 0x%02x decoded to 0x%08lx", file,
                  (unsigned)code, (unsigned long)got);
        else
            CHECK(got == want, "%s: code 0x%02x decoded to 0x%08lx, want 0x%08lx", file,
                  (unsigned)code, (unsigned long)got, (unsigned long)want);
    }
    qmx_test_table_close(&t, 256);
    for (i = 0; i < 256; i++) CHECK(seen[i] == 1, "%s: code 0x%02x appears %d times", file, i, seen[i]);
}

static void decode_all_codes_match_cuda_and_ml_dtypes(void) {
    QMX_TEST_CASE("decode: all 256 codes bit-exact vs CUDA and ml_dtypes tables (NaN: any NaN)");
    decode_matches_table(&FMT_E4M3FN, "cuda_fp8_e4m3_decode.txt");
    decode_matches_table(&FMT_E5M2, "cuda_fp8_e5m2_decode.txt");
    decode_matches_table(&FMT_E4M3FN, "fp8_e4m3fn_decode.txt");
    decode_matches_table(&FMT_E5M2, "fp8_e5m2_decode.txt");
    decode_matches_table(&FMT_E4M3FNUZ, "fp8_e4m3fnuz_decode.txt");
    decode_matches_table(&FMT_E5M2FNUZ, "fp8_e5m2fnuz_decode.txt");
}

/* ---- 2. encode samples --------------------------------------------------------------------- */
/* CUDA: saturate=1 == __NV_SATFINITE (sat), saturate=0 == __NV_NOSAT (nosat), Inf included. */
static void encode_matches_cuda_file(const fmt_info *f, const char *file) {
    qmx_test_table t;
    char line[256], *fld[4];
    if (!qmx_test_table_open(&t, file, "# columns: f32bits sat nosat")) return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int ok = 1;
        uint32_t x, sat, nosat;
        if (qmx_test_split_fields(line, fld, 4) != 3) { CHECK(0, "%s line %ld: malformed", file, t.line_no); continue; }
        x = parse_hex(fld[0], &ok);
        sat = parse_hex(fld[1], &ok);
        nosat = parse_hex(fld[2], &ok);
        if (!ok || sat > 255u || nosat > 255u) { CHECK(0, "%s line %ld: malformed", file, t.line_no); continue; }
        check_encode(f, x, sat, 1, REF_EXACT, &t);
        check_encode(f, x, nosat, 0, REF_EXACT, &t);
    }
    qmx_test_table_close(&t, 20000);
}

static void encode_matches_cuda_satfinite_and_nosat(void) {
    QMX_TEST_CASE("encode: saturate=1 == CUDA __NV_SATFINITE, saturate=0 == CUDA __NV_NOSAT");
    encode_matches_cuda_file(&FMT_E4M3FN, "cuda_fp8_e4m3_encode.txt");
    encode_matches_cuda_file(&FMT_E5M2, "cuda_fp8_e5m2_encode.txt");
}

/* ml_dtypes: saturate=0 == rne (numpy astype); saturate=1 == rne_sat except +-Inf -> +-max. */
static void encode_matches_ml_dtypes_file(const fmt_info *f, const char *file) {
    qmx_test_table t;
    char line[256], *fld[6];
    if (!qmx_test_table_open(&t, file, "# columns: f32bits rne rne_sat rtz rtz_sat")) return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int ok = 1;
        uint32_t x, rne, rne_sat;
        if (qmx_test_split_fields(line, fld, 6) != 5) { CHECK(0, "%s line %ld: malformed", file, t.line_no); continue; }
        x = parse_hex(fld[0], &ok);
        rne = parse_hex(fld[1], &ok);
        rne_sat = parse_hex(fld[2], &ok);
        if (!ok || rne > 255u || rne_sat > 255u) { CHECK(0, "%s line %ld: malformed", file, t.line_no); continue; }
        check_encode(f, x, rne, 0, REF_EXACT, &t);
        check_encode(f, x, rne_sat, 1, REF_ML_SAT, &t);
    }
    qmx_test_table_close(&t, 20000);
}

static void encode_matches_ml_dtypes_astype_and_saturating_cast(void) {
    QMX_TEST_CASE("encode: saturate=0 == ml_dtypes astype; saturate=1 == ml_dtypes saturating cast except Inf -> +-max");
    encode_matches_ml_dtypes_file(&FMT_E4M3FN, "fp8_e4m3fn_encode.txt");
    encode_matches_ml_dtypes_file(&FMT_E5M2, "fp8_e5m2_encode.txt");
    encode_matches_ml_dtypes_file(&FMT_E4M3FNUZ, "fp8_e4m3fnuz_encode.txt");
    encode_matches_ml_dtypes_file(&FMT_E5M2FNUZ, "fp8_e5m2fnuz_encode.txt");
}

/* ---- 3. the explicit edge list ------------------------------------------------------------- */
static void edge_cases_match_every_reference_column(void) {
    /* column i (after f32bits) -> format, saturate flag, reference kind */
    static const struct { const fmt_info *f; int saturate; enum ref_kind kind; } cols[12] = {
        { &FMT_E4M3FN, 1, REF_EXACT },     /* cuda_e4m3_sat */
        { &FMT_E4M3FN, 0, REF_EXACT },     /* cuda_e4m3_nosat */
        { &FMT_E4M3FN, 0, REF_EXACT },     /* ml_e4m3fn */
        { &FMT_E4M3FN, 1, REF_ML_SAT },    /* ml_e4m3fn_sat */
        { &FMT_E5M2, 1, REF_EXACT },       /* cuda_e5m2_sat */
        { &FMT_E5M2, 0, REF_EXACT },       /* cuda_e5m2_nosat */
        { &FMT_E5M2, 0, REF_EXACT },       /* ml_e5m2 */
        { &FMT_E5M2, 1, REF_ML_SAT },      /* ml_e5m2_sat */
        { &FMT_E4M3FNUZ, 0, REF_EXACT },   /* ml_e4m3fnuz */
        { &FMT_E4M3FNUZ, 1, REF_ML_SAT },  /* ml_e4m3fnuz_sat */
        { &FMT_E5M2FNUZ, 0, REF_EXACT },   /* ml_e5m2fnuz */
        { &FMT_E5M2FNUZ, 1, REF_ML_SAT }   /* ml_e5m2fnuz_sat */
    };
    qmx_test_table t;
    char line[512], *fld[16];
    QMX_TEST_CASE("edge cases: every CUDA and ml_dtypes column, all four formats, both signs");
    if (!qmx_test_table_open(&t, "fp8_edge_cases.txt",
                    "# columns: f32bits cuda_e4m3_sat cuda_e4m3_nosat ml_e4m3fn ml_e4m3fn_sat "
                    "cuda_e5m2_sat cuda_e5m2_nosat ml_e5m2 ml_e5m2_sat ml_e4m3fnuz ml_e4m3fnuz_sat "
                    "ml_e5m2fnuz ml_e5m2fnuz_sat label"))
        return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int ok = 1, i;
        uint32_t x;
        if (qmx_test_split_fields(line, fld, 16) != 14) { CHECK(0, "edge line %ld: malformed", t.line_no); continue; }
        x = parse_hex(fld[0], &ok);
        for (i = 0; i < 12; i++) {
            uint32_t want = parse_hex(fld[1 + i], &ok);
            if (!ok || want > 255u) { CHECK(0, "edge line %ld: malformed column %d", t.line_no, i + 1); break; }
            check_encode(cols[i].f, x, want, cols[i].saturate, cols[i].kind, &t);
        }
    }
    qmx_test_table_close(&t, 134);
}

/* ---- 4. qmx's own documented choices (no reference disagrees; they only differ on NaN) ---- */
static void nan_input_keeps_sign_and_fnuz_has_no_negative_zero(void) {
    static const uint32_t nans[4] = { 0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA00000u };
    int k, i, sat;
    QMX_TEST_CASE("NaN input: 0x7F|sign (E4M3FN, E5M2), 0x80 (FNUZ); -0 -> 0x80, FNUZ -> 0x00");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        for (i = 0; i < 4; i++) {
            for (sat = 0; sat <= 1; sat++) {
                unsigned pos = qmx_fp8_from_f32(qmx_test_bits_f32(nans[i]), f->fmt, sat);
                unsigned neg = qmx_fp8_from_f32(qmx_test_bits_f32(nans[i] | 0x80000000u), f->fmt, sat);
                CHECK(pos == (f->fnuz ? 0x80u : 0x7Fu), "%s +NaN 0x%08lx sat=%d -> 0x%02x", f->name,
                      (unsigned long)nans[i], sat, pos);
                CHECK(neg == (f->fnuz ? 0x80u : 0xFFu), "%s -NaN 0x%08lx sat=%d -> 0x%02x", f->name,
                      (unsigned long)nans[i], sat, neg);
            }
        }
        for (sat = 0; sat <= 1; sat++) {
            unsigned nz = qmx_fp8_from_f32(qmx_test_bits_f32(0x80000000u), f->fmt, sat);
            unsigned ntiny = qmx_fp8_from_f32(-1e-30f, f->fmt, sat);  /* rounds to -0 */
            CHECK(nz == (f->fnuz ? 0x00u : 0x80u), "%s -0.0 sat=%d -> 0x%02x", f->name, sat, nz);
            CHECK(ntiny == (f->fnuz ? 0x00u : 0x80u), "%s -1e-30 sat=%d -> 0x%02x", f->name, sat, ntiny);
        }
    }
}

static void saturate_is_any_nonzero_value(void) {
    int k;
    QMX_TEST_CASE("saturate != 0 (not just 1) clips; saturate == 0 overflows");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        float inf = qmx_test_bits_f32(0x7F800000u);
        CHECK(qmx_fp8_from_f32(inf, f->fmt, 7) == f->max_code, "%s saturate=7 +Inf", f->name);
        CHECK(qmx_fp8_from_f32(-inf, f->fmt, -1) == (0x80u | f->max_code), "%s saturate=-1 -Inf", f->name);
        CHECK(qmx_fp8_from_f32(1e6f, f->fmt, 2) == f->max_code, "%s saturate=2 1e6", f->name);
        CHECK(is_nan_code(f, qmx_fp8_from_f32(1e6f, f->fmt, 0)) || is_inf_code(f, qmx_fp8_from_f32(1e6f, f->fmt, 0)),
              "%s saturate=0 1e6 overflows to NaN/Inf", f->name);
    }
}

/* ---- 5. round trip -------------------------------------------------------------------------- */
static void every_finite_code_round_trips(void) {
    int k;
    unsigned c;
    QMX_TEST_CASE("round trip: from_f32(to_f32(c)) == c for every non-NaN code, both saturate modes");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        for (c = 0; c < 256; c++) {
            float v;
            unsigned nosat, sat;
            if (is_nan_code(f, c)) continue;   /* FNUZ: 0x80 is the NaN, so there is no -0 */
            v = qmx_fp8_to_f32((uint8_t)c, f->fmt);
            nosat = qmx_fp8_from_f32(v, f->fmt, 0);
            sat = qmx_fp8_from_f32(v, f->fmt, 1);
            CHECK(nosat == c, "%s code 0x%02x -> 0x%02x (saturate=0)", f->name, c, nosat);
            if (is_inf_code(f, c))  /* E5M2 Inf saturates to +-max by the documented rule */
                CHECK(sat == ((c & 0x80u) | f->max_code), "%s Inf code 0x%02x saturates to 0x%02x", f->name, c, sat);
            else
                CHECK(sat == c, "%s code 0x%02x -> 0x%02x (saturate=1)", f->name, c, sat);
        }
    }
}

/* ---- 6. max values and non-fp8 dtypes ------------------------------------------------------- */
static void max_values_and_non_fp8_dtypes(void) {
    int k;
    QMX_TEST_CASE("qmx_fp8_max: 448, 57344, 240, 57344; non-fp8 dtypes give 0 / NaN / 0");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        uint32_t m = qmx_test_f32_bits(qmx_fp8_max(f->fmt));
        CHECK(m == f->max_bits, "%s max bits 0x%08lx, want 0x%08lx", f->name, (unsigned long)m,
              (unsigned long)f->max_bits);
        CHECK(qmx_test_f32_bits(qmx_fp8_to_f32((uint8_t)f->max_code, f->fmt)) == f->max_bits,
              "%s max code decodes to max", f->name);
    }
    CHECK(qmx_fp8_max(QMX_INT8) == 0.0f, "int8 has no fp8 max");
    CHECK(qmx_fp8_max(QMX_FLOAT32) == 0.0f, "float32 has no fp8 max");
    CHECK(qmx_fp8_max(QMX_DTYPE_INVALID) == 0.0f, "invalid dtype");
    CHECK(qmx_fp8_max((qmx_dtype)15) == 0.0f, "unknown dtype");
    CHECK(qmx_fp8_from_f32(1.0f, QMX_INT8, 0) == 0, "from_f32 with a non-fp8 dtype gives 0");
    CHECK(qmx_fp8_from_f32(1.0f, (qmx_dtype)15, 1) == 0, "from_f32 with an unknown dtype gives 0");
    CHECK(f32_bits_is_nan(qmx_test_f32_bits(qmx_fp8_to_f32(0x38, QMX_INT8))), "to_f32 non-fp8 -> NaN");
    CHECK(f32_bits_is_nan(qmx_test_f32_bits(qmx_fp8_to_f32(0x38, (qmx_dtype)15))), "to_f32 unknown -> NaN");
}

/* ---- 7. scaled arrays ----------------------------------------------------------------------- */
#define ARR_N 1000
#define GUARD 16
static float arr_x[ARR_N + 1];
static uint8_t arr_q[ARR_N + GUARD];
static uint8_t arr_codes[ARR_N + 1];
static float arr_y[ARR_N + GUARD];

static uint32_t lcg_state = 12345u;
static uint32_t lcg_next(void) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state;
}

/* Inputs: specials first, then random floats whose exponents span far beyond every fp8
 * range, so that scaling produces overflow, subnormals and underflow. */
static void fill_inputs(void) {
    static const uint32_t specials[] = {
        0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
        0x7F7FFFFFu, 0xFF7FFFFFu, 0x00000001u, 0x80000001u, 0x00800000u, 0x3F800000u,
        0x43E00000u, 0x43E80000u, 0x43E80001u, 0x47600000u, 0x47700000u, 0x43700000u,
        0x3F880000u, 0x3F980000u, 0xBF880000u, 0x3A800000u, 0x3B000000u, 0x37000000u
    };
    size_t i, ns = sizeof specials / sizeof specials[0];
    for (i = 0; i < ARR_N + 1; i++) {
        uint32_t b;
        if (i < ns) {
            b = specials[i];
        } else {
            uint32_t r = lcg_next();
            uint32_t e = 127u - 40u + (r >> 8) % 81u;   /* 2^-40 .. 2^40 */
            b = (r & 0x80000000u) | (e << 23) | (lcg_next() & 0x7FFFFFu);
        }
        arr_x[i] = qmx_test_bits_f32(b);
    }
    for (i = 0; i < ARR_N + 1; i++) arr_codes[i] = (uint8_t)((i * 37u + (i >> 8)) & 0xFFu);
}

static void fp8_quantize_array_is_scalar_cast_of_x_over_scale(void) {
    static const size_t lens[] = { 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, ARR_N };
    static const uint32_t scale_bits[] = {
        0x3F800000u, /* 1 */ 0x3F000000u, /* 0.5 */ 0x406CCCCDu, /* 3.7 */ 0x3A83126Fu, /* 1e-3 */
        0x447A0000u, /* 1000 */ 0x35800000u, /* 2^-20 */ 0x00800000u, /* FLT_MIN */
        0x00000001u, /* smallest subnormal: finite and > 0, so valid */ 0x7F7FFFFFu /* FLT_MAX */
    };
    size_t li, si, i, off;
    int k, sat;
    QMX_TEST_CASE("fp8 quantize array: out[i] == from_f32(x[i] / scale) in float, tails untouched");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        for (si = 0; si < sizeof scale_bits / sizeof scale_bits[0]; si++) {
            float scale = qmx_test_bits_f32(scale_bits[si]);
            for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                for (off = 0; off <= 1; off++) {   /* aligned and misaligned input */
                    size_t n = lens[li];
                    for (sat = 0; sat <= 1; sat++) {
                        qmx_status st;
                        int bad = 0;
                        memset(arr_q, 0xA5, sizeof arr_q);
                        st = qmx_fp8_quantize_array(f->fmt, arr_x + off, n, scale, sat, arr_q);
                        CHECK(st == QMX_OK, "%s n=%lu status %d", f->name, (unsigned long)n, (int)st);
                        for (i = 0; i < n; i++) {
                            volatile float t = arr_x[off + i] / scale;  /* rounded to float */
                            /* a NaN keeps the input's sign on every target (RISC-V division
                             * returns the canonical +NaN) */
                            unsigned want = qmx_fp8_from_f32(t != t ? arr_x[off + i] : t, f->fmt, sat);
                            if (arr_q[i] != want) {
                                if (bad++ < 3)
                                    CHECK(0, "%s scale 0x%08lx n=%lu off=%lu sat=%d: x[%lu]=0x%08lx -> 0x%02x, want 0x%02x",
                                          f->name, (unsigned long)scale_bits[si], (unsigned long)n,
                                          (unsigned long)off, sat, (unsigned long)i,
                                          (unsigned long)qmx_test_f32_bits(arr_x[off + i]),
                                          (unsigned)arr_q[i], want);
                            }
                        }
                        CHECK(bad == 0, "%s: %d elements differ from the scalar cast", f->name, bad);
                        bad = 0;
                        for (i = n; i < n + GUARD && i < sizeof arr_q; i++)
                            if (arr_q[i] != 0xA5) bad++;
                        CHECK(bad == 0, "%s n=%lu: bytes past n written", f->name, (unsigned long)n);
                    }
                }
            }
        }
    }
}

static void fp8_dequantize_array_is_decode_times_scale(void) {
    static const size_t lens[] = { 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, ARR_N };
    static const uint32_t scale_bits[] = {
        0x3F800000u, 0x3F000000u, 0x406CCCCDu, 0x3A83126Fu, 0x447A0000u, 0x35800000u,
        0x00800000u, 0x00000001u, 0x7F7FFFFFu
    };
    size_t li, si, i, off;
    int k;
    QMX_TEST_CASE("fp8 dequantize array: y[i] == to_f32(code[i]) * scale in float, tails untouched");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        for (si = 0; si < sizeof scale_bits / sizeof scale_bits[0]; si++) {
            float scale = qmx_test_bits_f32(scale_bits[si]);
            for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                for (off = 0; off <= 1; off++) {
                    size_t n = lens[li];
                    qmx_status st;
                    int bad = 0;
                    for (i = 0; i < sizeof arr_y / sizeof arr_y[0]; i++) arr_y[i] = -12345.0f;
                    st = qmx_fp8_dequantize_array(f->fmt, arr_codes + off, n, scale, arr_y);
                    CHECK(st == QMX_OK, "%s n=%lu status %d", f->name, (unsigned long)n, (int)st);
                    for (i = 0; i < n; i++) {
                        volatile float want = qmx_fp8_to_f32(arr_codes[off + i], f->fmt) * scale;
                        uint32_t wb = qmx_test_f32_bits(want), gb = qmx_test_f32_bits(arr_y[i]);
                        int same = f32_bits_is_nan(wb) ? f32_bits_is_nan(gb) : gb == wb;
                        if (!same && bad++ < 3)
                            CHECK(0, "%s scale 0x%08lx code 0x%02x -> 0x%08lx, want 0x%08lx", f->name,
                                  (unsigned long)scale_bits[si], (unsigned)arr_codes[off + i],
                                  (unsigned long)gb, (unsigned long)wb);
                    }
                    CHECK(bad == 0, "%s: %d elements differ from decode * scale", f->name, bad);
                    bad = 0;
                    for (i = n; i < n + GUARD && i < sizeof arr_y / sizeof arr_y[0]; i++)
                        if (arr_y[i] != -12345.0f) bad++;
                    CHECK(bad == 0, "%s n=%lu: floats past n written", f->name, (unsigned long)n);
                }
            }
        }
    }
}

static int q_untouched(void) {
    int i;
    for (i = 0; i < 8; i++) if (arr_q[i] != 0x5A) return 0;
    return 1;
}
static int y_untouched(void) {
    int i;
    for (i = 0; i < 8; i++) if (arr_y[i] != 777.0f) return 0;
    return 1;
}

static void fp8_array_errors_leave_output_untouched(void) {
    static const uint32_t bad_scales[] = { 0x00000000u, 0x80000000u, 0xBF800000u, 0x7FC00000u,
                                           0xFFC00000u, 0x7F800000u, 0xFF800000u };
    static const qmx_dtype bad_dtypes[] = { QMX_DTYPE_INVALID, QMX_INT8, QMX_UINT8, QMX_INT4,
                                            QMX_INT16, QMX_FLOAT32, (qmx_dtype)15 };
    size_t i;
    int k;
    QMX_TEST_CASE("fp8 arrays: NULL, n=0, bad scale, bad dtype -> status, output untouched");
    for (k = 0; k < 4; k++) {
        const fmt_info *f = ALL_FMTS[k];
        memset(arr_q, 0x5A, 8);
        CHECK(qmx_fp8_quantize_array(f->fmt, NULL, 8, 1.0f, 1, arr_q) == QMX_ERR_NULL, "%s NULL x", f->name);
        CHECK(qmx_fp8_quantize_array(f->fmt, arr_x, 8, 1.0f, 1, NULL) == QMX_ERR_NULL, "%s NULL out", f->name);
        CHECK(qmx_fp8_quantize_array(f->fmt, arr_x, 0, 1.0f, 1, arr_q) == QMX_ERR_SIZE, "%s n=0", f->name);
        for (i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++)
            CHECK(qmx_fp8_quantize_array(f->fmt, arr_x, 8, qmx_test_bits_f32(bad_scales[i]), 0, arr_q) == QMX_ERR_ARG,
                  "%s quantize scale 0x%08lx must be rejected", f->name, (unsigned long)bad_scales[i]);
        CHECK(q_untouched(), "%s quantize output written on error", f->name);

        for (i = 0; i < 8; i++) arr_y[i] = 777.0f;
        CHECK(qmx_fp8_dequantize_array(f->fmt, NULL, 8, 1.0f, arr_y) == QMX_ERR_NULL, "%s NULL codes", f->name);
        CHECK(qmx_fp8_dequantize_array(f->fmt, arr_codes, 8, 1.0f, NULL) == QMX_ERR_NULL, "%s NULL y", f->name);
        CHECK(qmx_fp8_dequantize_array(f->fmt, arr_codes, 0, 1.0f, arr_y) == QMX_ERR_SIZE, "%s n=0", f->name);
        for (i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++)
            CHECK(qmx_fp8_dequantize_array(f->fmt, arr_codes, 8, qmx_test_bits_f32(bad_scales[i]), arr_y) == QMX_ERR_ARG,
                  "%s dequantize scale 0x%08lx must be rejected", f->name, (unsigned long)bad_scales[i]);
        CHECK(y_untouched(), "%s dequantize output written on error", f->name);
    }
    memset(arr_q, 0x5A, 8);
    for (i = 0; i < 8; i++) arr_y[i] = 777.0f;
    for (i = 0; i < sizeof bad_dtypes / sizeof bad_dtypes[0]; i++) {
        CHECK(qmx_fp8_quantize_array(bad_dtypes[i], arr_x, 8, 1.0f, 1, arr_q) == QMX_ERR_DTYPE,
              "quantize dtype %d is not fp8", (int)bad_dtypes[i]);
        CHECK(qmx_fp8_dequantize_array(bad_dtypes[i], arr_codes, 8, 1.0f, arr_y) == QMX_ERR_DTYPE,
              "dequantize dtype %d is not fp8", (int)bad_dtypes[i]);
    }
    CHECK(q_untouched() && y_untouched(), "outputs written on a dtype error");
}

int main(void) {
    fill_inputs();
    decode_all_codes_match_cuda_and_ml_dtypes();
    encode_matches_cuda_satfinite_and_nosat();
    encode_matches_ml_dtypes_astype_and_saturating_cast();
    edge_cases_match_every_reference_column();
    nan_input_keeps_sign_and_fnuz_has_no_negative_zero();
    saturate_is_any_nonzero_value();
    every_finite_code_round_trips();
    max_values_and_non_fp8_dtypes();
    fp8_quantize_array_is_scalar_cast_of_x_over_scale();
    fp8_dequantize_array_is_decode_times_scale();
    fp8_array_errors_leave_output_untouched();
    return QMX_TEST_END();
}
