/* test_requant.c - qmx's fixed-point requantization against reference data nobody on the qmx
 * team wrote, plus the array output stage built on it.
 *
 * References (tests/data, copied unchanged from the golden set; the '#' lines name the source):
 *   requant_mbqm.txt   TFLite MultiplyByQuantizedMultiplier(acc, multiplier, shift):
 *       dr = gemmlowp double rounding (SaturatingRoundingDoublingHighMul of acc * 2^max(shift,0),
 *            wrapping mod 2^32, then RoundingDivideByPOT by max(-shift,0));
 *       wrapped = 1 when acc * 2^max(shift,0) left the int32 range;
 *       sr = the TFLITE_SINGLE_ROUNDING formula (acc * m + 2^(30 - shift)) >> (31 - shift),
 *            "NA" where TFLite's DCHECKs fire (multiplier < 0, or a result outside int32).
 *   requant_quantize_multiplier.txt  TFLite QuantizeMultiplier(double) in the default build
 *       (multiplier, shift) and the TFLITE_SINGLE_ROUNDING build (sr_multiplier, sr_shift).
 *
 * For an "NA" single-rounding row qmx's documented contract applies instead of TFLite's DCHECK:
 *   - multiplier < 0: qmx_requantize_check(SINGLE_ROUNDING, m, shift) rejects it, and
 *     qmx_requantize_single_rounding treats m as 0, so the result is
 *     (0 + 2^(30 - shift)) >> (31 - shift) = 0;
 *   - otherwise the exact result lies outside int32 and qmx saturates. The test recomputes the
 *     exact value in int64 without __int128: |acc * m| <= 2^31 * (2^31 - 1) < 2^62 and the
 *     rounding term is at most 2^61, so acc * m + 2^(30 - shift) fits int64 exactly; the floor
 *     shift is done on that exact value. The test checks that this value really is outside
 *     int32 (why the row is NA) and that qmx returns INT32_MAX / INT32_MIN by its sign.
 * The data files are streamed line by line (the test also runs on 16 MiB Cortex-M targets). */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_test.h"


/* Decimal field within [lo, hi]; *ok cleared when malformed or out of range. */
static long long parse_dec(const char *s, long long lo, long long hi, int *ok) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != 0 || v < lo || v > hi) *ok = 0;
    return v;
}

/* floor(v / 2^s) for any int64 v > INT64_MIN, 0 <= s <= 62, without relying on >> of negatives. */
static int64_t floor_shift(int64_t v, int s) {
    if (v >= 0) return (int64_t)((uint64_t)v >> s);
    return -(int64_t)((uint64_t)(-(v + 1)) >> s) - 1;
}

/* The exact single-rounding value (acc * m + 2^(30 - shift)) >> (31 - shift), m >= 0, shift in
 * [-31, 30]; the sum fits int64 (see the top of the file). */
static int64_t exact_single_rounding(int32_t acc, int32_t m, int shift) {
    int total = 31 - shift;                                   /* 1 .. 62 */
    int64_t v = (int64_t)acc * (int64_t)m + ((int64_t)1 << (total - 1));
    return floor_shift(v, total);
}

/* ---- 1. MultiplyByQuantizedMultiplier rows ------------------------------------------------- */
static void requantize_matches_tflite_gemmlowp_rows(void) {
    qmx_test_table t;
    char line[256], *fld[8];
    long na_negative = 0, na_saturated = 0, wrapped_rows = 0;
    QMX_TEST_CASE("MultiplyByQuantizedMultiplier: double rounding == gemmlowp, single rounding == TFLite");
    if (!qmx_test_table_open(&t, "requant_mbqm.txt", "# columns: acc multiplier shift dr wrapped sr")) return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int ok = 1;
        int32_t acc, m, dr;
        int shift, wrapped, left;
        int64_t scaled;
        if (qmx_test_split_fields(line, fld, 8) != 6) { CHECK(0, "line %ld: malformed", t.line_no); continue; }
        acc = (int32_t)parse_dec(fld[0], INT32_MIN, INT32_MAX, &ok);
        m = (int32_t)parse_dec(fld[1], INT32_MIN, INT32_MAX, &ok);
        shift = (int)parse_dec(fld[2], -31, 30, &ok);
        dr = (int32_t)parse_dec(fld[3], INT32_MIN, INT32_MAX, &ok);
        wrapped = (int)parse_dec(fld[4], 0, 1, &ok);
        if (!ok) { CHECK(0, "line %ld: malformed", t.line_no); continue; }

        /* the wrapped column is what our reading of the columns says it is */
        left = shift > 0 ? shift : 0;
        scaled = (int64_t)acc * ((int64_t)1 << left);
        CHECK(wrapped == (scaled < INT32_MIN || scaled > INT32_MAX), "line %ld: wrapped column", t.line_no);
        wrapped_rows += wrapped;

        CHECK_EQ_INT(qmx_requantize(acc, m, shift), dr, "line %ld: qmx_requantize(%lld, %lld, %d)",
                     t.line_no, (long long)acc, (long long)m, shift);

        if (strcmp(fld[5], "NA") != 0) {
            int32_t sr = (int32_t)parse_dec(fld[5], INT32_MIN, INT32_MAX, &ok);
            if (!ok) { CHECK(0, "line %ld: malformed sr", t.line_no); continue; }
            /* our own 64-bit formula is TFLite's on every defined row (validates it for use below) */
            CHECK(m >= 0 && exact_single_rounding(acc, m, shift) == sr, "line %ld: reference formula", t.line_no);
            CHECK_EQ_INT(qmx_requantize_single_rounding(acc, m, shift), sr,
                         "line %ld: qmx_requantize_single_rounding(%lld, %lld, %d)", t.line_no,
                         (long long)acc, (long long)m, shift);
            CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, m, shift) == QMX_OK,
                  "line %ld: valid single-rounding parameters rejected", t.line_no);
        } else if (m < 0) {
            /* TFLite DCHECK(multiplier >= 0): qmx rejects the pair, and the scalar treats m as 0 */
            na_negative++;
            CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, m, shift) == QMX_ERR_ARG,
                  "line %ld: negative multiplier %lld not rejected", t.line_no, (long long)m);
            CHECK_EQ_INT(qmx_requantize_single_rounding(acc, m, shift), 0,
                         "line %ld: negative multiplier is treated as 0", t.line_no);
        } else {
            /* TFLite DCHECK(result in int32): the exact value overflows and qmx saturates */
            int64_t exact = exact_single_rounding(acc, m, shift);
            na_saturated++;
            CHECK(exact < INT32_MIN || exact > INT32_MAX, "line %ld: NA row whose exact value fits", t.line_no);
            CHECK_EQ_INT(qmx_requantize_single_rounding(acc, m, shift), exact > 0 ? INT32_MAX : INT32_MIN,
                         "line %ld: single rounding saturates (%lld, %lld, %d)", t.line_no,
                         (long long)acc, (long long)m, shift);
        }
    }
    qmx_test_table_close(&t, 10000);
    CHECK(na_negative > 0 && na_saturated > 0 && wrapped_rows > 0,
          "the golden rows cover negative multipliers (%ld), saturation (%ld) and wrapping (%ld)",
          na_negative, na_saturated, wrapped_rows);
}

/* ---- 2. QuantizeMultiplier rows ------------------------------------------------------------ */
static void quantize_multiplier_matches_tflite_rows(void) {
    qmx_test_table t;
    char line[256], *fld[8];
    QMX_TEST_CASE("QuantizeMultiplier: default and TFLITE_SINGLE_ROUNDING builds, bit-exact");
    if (!qmx_test_table_open(&t, "requant_quantize_multiplier.txt",
                    "# columns: f64bits value multiplier shift sr_multiplier sr_shift"))
        return;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        int ok = 1;
        char *end;
        unsigned long long bits;
        double real;
        int32_t want_m, want_srm, m = 12345;
        int want_s, want_srs, s = 12345;
        qmx_status st;
        if (qmx_test_split_fields(line, fld, 8) != 6) { CHECK(0, "line %ld: malformed", t.line_no); continue; }
        bits = strtoull(fld[0], &end, 16);
        if (end == fld[0] || *end != 0) ok = 0;
        want_m = (int32_t)parse_dec(fld[2], INT32_MIN, INT32_MAX, &ok);
        want_s = (int)parse_dec(fld[3], -100000, 100000, &ok);
        want_srm = (int32_t)parse_dec(fld[4], INT32_MIN, INT32_MAX, &ok);
        want_srs = (int)parse_dec(fld[5], -100000, 100000, &ok);
        if (!ok) { CHECK(0, "line %ld: malformed", t.line_no); continue; }
        {
            uint64_t b64 = (uint64_t)bits;
            memcpy(&real, &b64, 8);
        }
        st = qmx_quantize_multiplier(real, &m, &s);
        CHECK(st == QMX_OK && m == want_m && s == want_s,
              "line %ld: QuantizeMultiplier(%s = %s) = status %d (%lld, %d), want (%lld, %d)",
              t.line_no, fld[0], fld[1], (int)st, (long long)m, s, (long long)want_m, want_s);
        m = 12345; s = 12345;
        st = qmx_quantize_multiplier_single_rounding(real, &m, &s);
        CHECK(st == QMX_OK && m == want_srm && s == want_srs,
              "line %ld: single-rounding QuantizeMultiplier(%s = %s) = status %d (%lld, %d), want (%lld, %d)",
              t.line_no, fld[0], fld[1], (int)st, (long long)m, s, (long long)want_srm, want_srs);
    }
    qmx_test_table_close(&t, 2000);
}

static void quantize_multiplier_rejects_nonfinite_and_null(void) {
    static const uint64_t bad[4] = { 0x7FF8000000000000ull, 0xFFF8000000000000ull,
                                     0x7FF0000000000000ull, 0xFFF0000000000000ull };
    int i, single;
    QMX_TEST_CASE("QuantizeMultiplier: NaN/Inf -> QMX_ERR_NONFINITE, NULL -> QMX_ERR_NULL, outputs untouched");
    for (single = 0; single <= 1; single++) {
        for (i = 0; i < 4; i++) {
            double d;
            int32_t m = 777;
            int s = 888;
            qmx_status st;
            memcpy(&d, &bad[i], 8);
            st = single ? qmx_quantize_multiplier_single_rounding(d, &m, &s) : qmx_quantize_multiplier(d, &m, &s);
            CHECK(st == QMX_ERR_NONFINITE && m == 777 && s == 888,
                  "single=%d input 0x%016llx: status %d, outputs (%lld, %d)", single,
                  (unsigned long long)bad[i], (int)st, (long long)m, s);
        }
        {
            int32_t m = 777;
            int s = 888;
            qmx_status st1 = single ? qmx_quantize_multiplier_single_rounding(0.5, NULL, &s)
                                    : qmx_quantize_multiplier(0.5, NULL, &s);
            qmx_status st2 = single ? qmx_quantize_multiplier_single_rounding(0.5, &m, NULL)
                                    : qmx_quantize_multiplier(0.5, &m, NULL);
            CHECK(st1 == QMX_ERR_NULL && s == 888, "single=%d NULL multiplier: status %d", single, (int)st1);
            CHECK(st2 == QMX_ERR_NULL && m == 777, "single=%d NULL shift: status %d", single, (int)st2);
        }
    }
}

/* ---- 3. parameter validity ----------------------------------------------------------------- */
static void requantize_check_bounds(void) {
    QMX_TEST_CASE("requantize_check: shift in [-31, 30]; single rounding needs m >= 0; mode enum");
    CHECK(qmx_requantize_check(QMX_REQUANT_DOUBLE_ROUNDING, 1 << 30, -31) == QMX_OK, "DR shift -31");
    CHECK(qmx_requantize_check(QMX_REQUANT_DOUBLE_ROUNDING, 1 << 30, 30) == QMX_OK, "DR shift 30");
    CHECK(qmx_requantize_check(QMX_REQUANT_DOUBLE_ROUNDING, 1 << 30, -32) == QMX_ERR_ARG, "DR shift -32");
    CHECK(qmx_requantize_check(QMX_REQUANT_DOUBLE_ROUNDING, 1 << 30, 31) == QMX_ERR_ARG, "DR shift 31");
    CHECK(qmx_requantize_check(QMX_REQUANT_DOUBLE_ROUNDING, INT32_MIN, 0) == QMX_OK, "DR any multiplier");
    CHECK(qmx_requantize_check(QMX_REQUANT_DOUBLE_ROUNDING, -1, 0) == QMX_OK, "DR negative multiplier");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, 1 << 30, -31) == QMX_OK, "SR shift -31");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, 1 << 30, 30) == QMX_OK, "SR shift 30");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, 1 << 30, -32) == QMX_ERR_ARG, "SR shift -32");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, 1 << 30, 31) == QMX_ERR_ARG, "SR shift 31");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, 0, 0) == QMX_OK, "SR m = 0");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, INT32_MAX, 0) == QMX_OK, "SR m = INT32_MAX");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, -1, 0) == QMX_ERR_ARG, "SR m = -1");
    CHECK(qmx_requantize_check(QMX_REQUANT_SINGLE_ROUNDING, INT32_MIN, 0) == QMX_ERR_ARG, "SR m = INT32_MIN");
    CHECK(qmx_requantize_check(QMX_REQUANT_FLOAT, 0, 0) == QMX_OK, "float mode");
    CHECK(qmx_requantize_check((qmx_requant_mode)4, 1 << 30, 0) == QMX_ERR_ARG, "mode 4 is unknown");
    CHECK(qmx_requantize_check(QMX_REQUANT_FLOAT_EXACT, -5, 99) == QMX_OK, "float modes ignore m, shift");
#ifndef __cplusplus   /* C++ leaves casts to enum values outside the enum's bit range unspecified */
    CHECK(qmx_requantize_check((qmx_requant_mode)-1, 1 << 30, 0) == QMX_ERR_ARG, "mode -1 is unknown");
    CHECK(qmx_requantize_check((qmx_requant_mode)100, 1 << 30, 0) == QMX_ERR_ARG, "mode 100 is unknown");
#endif
}

static void scalar_requantize_clamps_the_shift(void) {
    static const int32_t accs[5] = { 0, 1, -7, INT32_MAX, INT32_MIN };
    static const int32_t ms[3] = { 1 << 30, INT32_MAX, 1518500250 };
    int i, j;
    QMX_TEST_CASE("scalar requantize is total: a shift outside [-31, 30] is clamped into it");
    for (i = 0; i < 5; i++) {
        for (j = 0; j < 3; j++) {
            CHECK(qmx_requantize(accs[i], ms[j], -32) == qmx_requantize(accs[i], ms[j], -31), "DR -32");
            CHECK(qmx_requantize(accs[i], ms[j], -1000) == qmx_requantize(accs[i], ms[j], -31), "DR -1000");
            CHECK(qmx_requantize(accs[i], ms[j], 31) == qmx_requantize(accs[i], ms[j], 30), "DR 31");
            CHECK(qmx_requantize(accs[i], ms[j], INT_MAX) == qmx_requantize(accs[i], ms[j], 30), "DR INT_MAX");
            CHECK(qmx_requantize_single_rounding(accs[i], ms[j], -32) ==
                  qmx_requantize_single_rounding(accs[i], ms[j], -31), "SR -32");
            CHECK(qmx_requantize_single_rounding(accs[i], ms[j], INT_MIN) ==
                  qmx_requantize_single_rounding(accs[i], ms[j], -31), "SR INT_MIN");
            CHECK(qmx_requantize_single_rounding(accs[i], ms[j], 31) ==
                  qmx_requantize_single_rounding(accs[i], ms[j], 30), "SR 31");
        }
    }
}

/* ---- 4. hand-worked values ----------------------------------------------------------------- */
/* gemmlowp, as the golden rows confirm:
 *   SRDHM(a, b) = (a*b + nudge) / 2^31, C division truncating toward zero, with
 *                 nudge = 2^30 when a*b >= 0 and 1 - 2^30 otherwise; SRDHM(MIN, MIN) = MAX.
 *                 A tie therefore rounds toward +Inf: 1.5 -> 2 but -1.5 -> -1.
 *   RDBPOT(x, e) = (x >> e) + (remainder > threshold), remainder = x & (2^e - 1),
 *                 threshold = (2^e - 1) >> 1, plus 1 when x < 0: ties round away from zero.
 *   The multiplier m stands for m / 2^31, so m = 2^30 is 0.5 and shift s multiplies by 2^s. */
static void hand_worked_values(void) {
    QMX_TEST_CASE("hand-worked: gemmlowp's two roundings, single rounding, float mode");
    /* acc=100, m=2^30 (0.5), shift 0: SRDHM = (100*2^30 + 2^30)/2^31 = 50.5 -> 50 (trunc) */
    CHECK_EQ_INT(qmx_requantize(100, 1 << 30, 0), 50, "100 * 0.5");
    /* single: (100*2^30 + 2^30) >> 31 = floor(50.5) = 50 */
    CHECK_EQ_INT(qmx_requantize_single_rounding(100, 1 << 30, 0), 50, "100 * 0.5 single");
    /* tie acc=3, real 0.5: SRDHM = (3*2^30 + 2^30)/2^31 = 2 exactly -> 2 (golden row "3 ... 0 2") */
    CHECK_EQ_INT(qmx_requantize(3, 1 << 30, 0), 2, "3 * 0.5 = 1.5 -> 2");
    /* tie acc=-3, real 0.5: SRDHM = (-3*2^30 + 1 - 2^30)/2^31 = (-2^32 + 1)/2^31 = -1.99.. -> -1
     * (truncation toward zero; golden row "-3 1073741824 0 -1 0 -1") */
    CHECK_EQ_INT(qmx_requantize(-3, 1 << 30, 0), -1, "-3 * 0.5 = -1.5 -> -1");
    /* single: (-3*2^30 + 2^30) >> 31 = floor(-1) = -1 */
    CHECK_EQ_INT(qmx_requantize_single_rounding(-3, 1 << 30, 0), -1, "-1.5 single -> -1");
    /* double rounding error: acc=5, real 0.25 = (2^30, shift -1). SRDHM(5, 2^30) = 2.5 -> 3,
     * RDBPOT(3, 1) = 1 + (1 > 0) = 2; exact 1.25. Single: (5*2^30 + 2^31) >> 32 = floor(1.75) = 1 */
    CHECK_EQ_INT(qmx_requantize(5, 1 << 30, -1), 2, "5 * 0.25 double rounding -> 2");
    CHECK_EQ_INT(qmx_requantize_single_rounding(5, 1 << 30, -1), 1, "5 * 0.25 single -> 1");
    /* acc=-3, m=2^31-1, shift -1 (exact -1.4999999993): SRDHM = (-3*(2^31-1) + 1 - 2^30)/2^31
     * = -3.5 + 2^-29 -> -3; RDBPOT(-3, 1): -3 >> 1 = -2, rem 1, thr 0 + 1 = 1, 1 > 1 no -> -2.
     * Single: (-3*(2^31-1) + 2^31) >> 32 = floor(-0.4999..) = -1 (golden row "-3 2147483647 -1 -2 0 -1") */
    CHECK_EQ_INT(qmx_requantize(-3, INT32_MAX, -1), -2, "double rounding -1.4999 -> -2");
    CHECK_EQ_INT(qmx_requantize_single_rounding(-3, INT32_MAX, -1), -1, "single rounding -1.4999 -> -1");
    /* RDBPOT tie away from zero: acc=INT32_MIN, m=2^30, shift -31, exact -0.5.
     * SRDHM = (-2^61 + 1 - 2^30)/2^31 -> -2^30; RDBPOT(-2^30, 31): -2^30 >> 31 = -1, rem 2^30,
     * thr (2^31-1 >> 1) + 1 = 2^30, 2^30 > 2^30 no -> -1. Single: (-2^61 + 2^61) >> 62 = 0. */
    CHECK_EQ_INT(qmx_requantize(INT32_MIN, 1 << 30, -31), -1, "-0.5 rounds away from zero (RDBPOT)");
    CHECK_EQ_INT(qmx_requantize_single_rounding(INT32_MIN, 1 << 30, -31), 0, "-0.5 single -> 0");
    /* SRDHM saturation: INT32_MIN * INT32_MIN (1.0 * 1.0 overflow) -> INT32_MAX */
    CHECK_EQ_INT(qmx_requantize(INT32_MIN, INT32_MIN, 0), INT32_MAX, "SRDHM(MIN, MIN) = MAX");
    /* ...and then RDBPOT(INT32_MAX, 31) = 0 + (2^31-1 > 2^30-1) = 1 (golden row) */
    CHECK_EQ_INT(qmx_requantize(INT32_MIN, INT32_MIN, -31), 1, "SRDHM(MIN, MIN) >> 31 -> 1");
    /* left shift wraps like TFLite: acc=2^30, shift 1 -> 2^31 wraps to INT32_MIN; * 0.5:
     * SRDHM(INT32_MIN, 2^30) = (-2^61 + 1 - 2^30)/2^31 -> -2^30. Single rounding has no wrap:
     * (2^30 * 2^30 + 2^29) >> 30 = 2^30. */
    CHECK_EQ_INT(qmx_requantize(1 << 30, 1 << 30, 1), -1073741824, "acc << shift wraps mod 2^32");
    CHECK_EQ_INT(qmx_requantize_single_rounding(1 << 30, 1 << 30, 1), 1073741824, "single: no wrap");
    /* single rounding saturates: INT32_MAX * (2^31-1)/2^31 * 2^30 ~ 2^61 -> INT32_MAX */
    CHECK_EQ_INT(qmx_requantize_single_rounding(INT32_MAX, INT32_MAX, 30), INT32_MAX, "SR saturates up");
    CHECK_EQ_INT(qmx_requantize_single_rounding(INT32_MIN, INT32_MAX, 30), INT32_MIN, "SR saturates down");
    /* negative multiplier in single rounding is read as 0: 2^(30-s) >> (31-s) = 0 */
    CHECK_EQ_INT(qmx_requantize_single_rounding(1000, -5, 0), 0, "SR negative multiplier -> 0");

    /* float mode, XNNPACK: RNE((float)acc * scale), saturated; NaN gives 0 */
    CHECK_EQ_INT(qmx_requantize_float(3, 0.5f), 2, "1.5 -> 2 (ties to even)");
    CHECK_EQ_INT(qmx_requantize_float(5, 0.5f), 2, "2.5 -> 2 (ties to even)");
    CHECK_EQ_INT(qmx_requantize_float(-5, 0.5f), -2, "-2.5 -> -2 (ties to even)");
    CHECK_EQ_INT(qmx_requantize_float(7, 0.5f), 4, "3.5 -> 4 (ties to even)");
    CHECK_EQ_INT(qmx_requantize_float(100, 0.3f), 30, "100 * 0.3f = 30.000001 -> 30");
    /* 16777217 is not a float: (float)acc = 16777216 */
    CHECK_EQ_INT(qmx_requantize_float(16777217, 1.0f), 16777216, "(float)acc rounds first");
    CHECK_EQ_INT(qmx_requantize_float(INT32_MAX, 1.0f), INT32_MAX, "2^31 saturates to INT32_MAX");
    CHECK_EQ_INT(qmx_requantize_float(INT32_MIN, 1.0f), INT32_MIN, "-2^31 is INT32_MIN");
    CHECK_EQ_INT(qmx_requantize_float(1000000, 1e6f), INT32_MAX, "1e12 saturates");
    CHECK_EQ_INT(qmx_requantize_float(-1000000, 1e6f), INT32_MIN, "-1e12 saturates");
    CHECK_EQ_INT(qmx_requantize_float(5, qmx_test_bits_f32(0x7FC00000u)), 0, "NaN scale gives 0");
}

/* ---- 5. the array output stage ------------------------------------------------------------- */
#define MAX_ROWS 4
#define MAX_CH 33
#define GUARD 8
static int32_t rq_acc[MAX_ROWS * MAX_CH];
static int32_t rq_bias[MAX_CH];
static int32_t rq_mult[MAX_CH];
static int rq_shift[MAX_CH];
static float rq_scale[MAX_CH];
static int8_t out8[MAX_ROWS * MAX_CH + GUARD];
static int16_t out16[MAX_ROWS * MAX_CH + GUARD];

static uint32_t lcg_state = 0x716d78u;
static uint32_t lcg_next(void) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state ^ (lcg_state >> 15);
}

static int32_t u32_to_i32(uint32_t u) {   /* two's complement reinterpretation, portably */
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}
static int32_t wrap_add(int32_t a, int32_t b) { return u32_to_i32((uint32_t)a + (uint32_t)b); }

/* XNNPACK fp32 requantization computed independently: (float)acc * scale is exact in double
 * (24 x 24 significand bits < 53), so one conversion to float gives the float product without
 * any FMA or excess-precision question; then round half to even and saturate to int32. */
static int32_t reference_float_requant(int32_t acc, float scale) {
    volatile float af = (float)acc;
    volatile float t = (float)((double)af * (double)scale);
    double d = t, frac;
    long long i;
    if (d != d) return 0;
    if (d >= 2147483648.0) return INT32_MAX;
    if (d <= -2147483648.0) return INT32_MIN;
    i = (long long)d;                      /* toward zero, |d| < 2^31 */
    frac = d - (double)i;                  /* exact */
    if (frac > 0.5 || (frac == 0.5 && (i & 1))) i++;
    if (frac < -0.5 || (frac == -0.5 && (i & 1))) i--;
    return (int32_t)i;
}

static void float_requantize_matches_exact_reference(void) {
    int i, bad = 0;
    QMX_TEST_CASE("float mode: RNE((float)acc * scale) saturated, vs an exact double computation");
    for (i = 0; i < 40000; i++) {
        int32_t acc;
        float scale;
        uint32_t r = lcg_next();
        if (i < 4002) {                    /* every tie: odd acc * 0.5 and acc * 0.25 */
            acc = i / 2 - 1000;
            scale = (i & 1) ? 0.25f : 0.5f;
        } else if (i < 4010) {             /* the int32 ends and the 2^24 boundary, at run time */
            static const int32_t ends[8] = { INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN,
                                             16777217, -16777217, 33554431, 1073741823 };
            acc = ends[i - 4002];
            scale = (i < 4004) ? 1.0f : (i < 4006 ? 0.5f : 1.5f);
        } else {
            acc = (r & 3u) == 0 ? (int32_t)(lcg_next() % 2000001u) - 1000000 : u32_to_i32(lcg_next());
            scale = qmx_test_bits_f32(0x2B800000u + lcg_next() % 0x1F000000u);  /* 2^-40 .. 2^22 */
        }
        {
            int32_t got = qmx_requantize_float(acc, scale), want = reference_float_requant(acc, scale);
            if (got != want && bad++ < 5)
                CHECK(0, "qmx_requantize_float(%lld, 0x%08lx) = %lld, want %lld", (long long)acc,
                      (unsigned long)qmx_test_f32_bits(scale), (long long)got, (long long)want);
        }
    }
    CHECK(bad == 0, "%d float-mode results differ", bad);
}

/* The documented formula, written plainly:
 *   out = clamp(requant(acc + bias[c]) + output_zero_point, act_min, act_max),
 *   bias added with int32 wrap-around, (act_min, act_max) = (0, 0) meaning the full range. */
static int32_t reference_output(const qmx_requant_config *c, int32_t a, size_t ch) {
    size_t pi = c->per_channel ? ch : 0;
    int32_t v, lo, hi;
    int64_t w;
    int is16 = c->out_dtype == QMX_INT16;
    if (c->bias) a = wrap_add(a, c->bias[ch]);
    if (c->mode == QMX_REQUANT_DOUBLE_ROUNDING) v = qmx_requantize(a, c->multipliers[pi], c->shifts[pi]);
    else if (c->mode == QMX_REQUANT_SINGLE_ROUNDING) v = qmx_requantize_single_rounding(a, c->multipliers[pi], c->shifts[pi]);
    else v = qmx_requantize_float(a, c->scales[pi]);
    lo = c->act_min; hi = c->act_max;
    if (lo == 0 && hi == 0) { lo = is16 ? -32768 : -128; hi = is16 ? 32767 : 127; }
    w = (int64_t)v + c->output_zero_point;
    if (w < lo) w = lo;
    if (w > hi) w = hi;
    return (int32_t)w;
}

static void fill_params(void) {
    size_t i;
    for (i = 0; i < MAX_ROWS * MAX_CH; i++) {
        uint32_t r = lcg_next();
        switch (r % 4u) {   /* small, medium, any int32, extremes */
        case 0: rq_acc[i] = (int32_t)(lcg_next() % 2001u) - 1000; break;
        case 1: rq_acc[i] = (int32_t)(lcg_next() % 2000001u) - 1000000; break;
        case 2: rq_acc[i] = u32_to_i32(lcg_next()); break;
        default: rq_acc[i] = (lcg_next() & 1u) ? INT32_MAX : INT32_MIN; break;
        }
    }
    for (i = 0; i < MAX_CH; i++) {
        rq_bias[i] = (i % 5 == 4) ? INT32_MAX : (int32_t)(lcg_next() % 200001u) - 100000;
        rq_mult[i] = (int32_t)(0x40000000u + (lcg_next() & 0x3FFFFFFFu));   /* [2^30, 2^31) */
        if (i % 7 == 3) rq_mult[i] = 0;
        rq_shift[i] = (int)(lcg_next() % 25u) - 20;                          /* [-20, 4] */
        if (i % 6 == 2) rq_shift[i] = (i % 12 == 2) ? -31 : 30;
        rq_scale[i] = qmx_test_bits_f32(0x30000000u + (lcg_next() % 0x0E000000u)); /* ~2^-31 .. 2^-3 */
        if (i % 9 == 5) rq_scale[i] = 1.0f;
    }
}

static void run_array_config(qmx_requant_config *c, size_t rows, size_t channels, int negative_m,
                             const char *label) {
    int is16 = c->out_dtype == QMX_INT16;
    size_t n = rows * channels, i, esize = is16 ? 2 : 1;
    qmx_status st;
    int bad = 0, guard_bad = 0;
    if (negative_m) for (i = 0; i < MAX_CH; i += 2) rq_mult[i] = -rq_mult[i];
    memset(out8, 0x5A, sizeof out8);
    memset(out16, 0x5A, sizeof out16);
    st = qmx_requantize_array(c, rq_acc, rows, channels, is16 ? (void *)out16 : (void *)out8, n * esize);
    CHECK(st == QMX_OK, "%s: status %d", label, (int)st);
    if (st == QMX_OK) {
        for (i = 0; i < n; i++) {
            int32_t want = reference_output(c, rq_acc[i], i % channels);
            int32_t got = is16 ? out16[i] : out8[i];
            if (got != want && bad++ < 3)
                CHECK(0, "%s: rows=%lu ch=%lu element %lu acc %lld: got %lld want %lld", label,
                      (unsigned long)rows, (unsigned long)channels, (unsigned long)i,
                      (long long)rq_acc[i], (long long)got, (long long)want);
        }
        CHECK(bad == 0, "%s: %d elements differ from the documented formula", label, bad);
    }
    for (i = n * esize; i < (is16 ? sizeof out16 : sizeof out8) && i < n * esize + GUARD; i++)
        if ((is16 ? ((unsigned char *)out16)[i] : ((unsigned char *)out8)[i]) != 0x5A) guard_bad++;
    CHECK(guard_bad == 0, "%s: bytes past the output written", label);
    if (negative_m) for (i = 0; i < MAX_CH; i += 2) rq_mult[i] = -rq_mult[i];
}

static void requantize_array_matches_documented_formula(void) {
    static const size_t chans[5] = { 1, 3, 16, 17, 33 };
    static const size_t rowss[2] = { 1, MAX_ROWS };
    /* (zero point, act_min, act_max) for int8; int16 multiplies each by 256 (127 -> 32767) */
    static const int32_t zp_act[6][3] = {
        { 0, 0, 0 },          /* full range */
        { -5, -100, 100 },
        { 17, -128, 127 },    /* explicit full range (int8) */
        { -128, -128, -118 },
        { 127, 0, 127 },      /* ReLU-like */
        { 3, 5, 5 }           /* act_min == act_max */
    };
    int mode, pc, dt, bias, za, ci, ri;
    QMX_TEST_CASE("requantize_array == clamp(requant(acc + bias) + zp, act_min, act_max), all modes");
    for (mode = 0; mode < 3; mode++)
    for (pc = 0; pc <= 1; pc++)
    for (dt = 0; dt < 3; dt++)
    for (bias = 0; bias <= 1; bias++)
    for (za = 0; za < 6; za++)
    for (ci = 0; ci < 5; ci++)
    for (ri = 0; ri < 2; ri++) {
        qmx_requant_config c = QMX_ZERO_INIT;
        char label[96];
        int k = dt == 2 ? 256 : 1;   /* int16: widen the zero point and clamps */
        c.mode = (qmx_requant_mode)mode;
        c.per_channel = pc;
        c.multipliers = rq_mult;
        c.shifts = rq_shift;
        c.scales = rq_scale;
        c.bias = bias ? rq_bias : NULL;
        c.out_dtype = dt == 0 ? QMX_DTYPE_INVALID : (dt == 1 ? QMX_INT8 : QMX_INT16);
        c.output_zero_point = zp_act[za][0] * k;
        c.act_min = zp_act[za][1] * k;
        c.act_max = zp_act[za][2] * k + (k > 1 && zp_act[za][2] == 127 ? 255 : 0);
        snprintf(label, sizeof label, "mode %d per_channel %d dtype %d bias %d zp/act %d", mode, pc,
                 (int)c.out_dtype, bias, za);
        run_array_config(&c, rowss[ri], chans[ci], mode == QMX_REQUANT_DOUBLE_ROUNDING && ci == 4, label);
    }
}

static void requantize_array_hand_worked(void) {
    qmx_requant_config c = QMX_ZERO_INIT;
    int32_t acc[4], m = 1 << 30, mvec[2], b[2];
    int s = 0, svec[2];
    int8_t o8[4];
    int16_t o16[2];
    QMX_TEST_CASE("requantize_array hand-worked: zero point, clamps, wrapping bias, per-tensor element 0");
    acc[0] = 100; acc[1] = -100; acc[2] = 3; acc[3] = -3;
    c.multipliers = &m; c.shifts = &s; c.output_zero_point = 10;
    /* x * 0.5 by gemmlowp: 50, -50, 2 (1.5 up), -1 (-1.5 toward +Inf); + 10 */
    CHECK(qmx_requantize_array(&c, acc, 1, 4, o8, 4) == QMX_OK, "status");
    CHECK(o8[0] == 60 && o8[1] == -40 && o8[2] == 12 && o8[3] == 9, "got %d %d %d %d, want 60 -40 12 9",
          o8[0], o8[1], o8[2], o8[3]);
    c.act_min = 0; c.act_max = 50;   /* clamp after the zero point */
    CHECK(qmx_requantize_array(&c, acc, 1, 4, o8, 4) == QMX_OK, "status");
    CHECK(o8[0] == 50 && o8[1] == 0 && o8[2] == 12 && o8[3] == 9, "got %d %d %d %d, want 50 0 12 9",
          o8[0], o8[1], o8[2], o8[3]);
    /* the int8 range clamps without act limits: 1000 * 0.5 + 10 = 510 -> 127 */
    c.act_min = 0; c.act_max = 0;
    acc[0] = 1000; acc[1] = -1000;
    CHECK(qmx_requantize_array(&c, acc, 2, 1, o8, 2) == QMX_OK && o8[0] == 127 && o8[1] == -128,
          "int8 saturation: %d %d", o8[0], o8[1]);
    /* bias wraps as int32: INT32_MAX + 1 = INT32_MIN; * 0.5 * 2^-16 -> SRDHM = -2^30,
     * RDBPOT(-2^30, 16) = -16384 (a saturating add would give +16384); channel 1: 0 + 0 */
    acc[0] = INT32_MAX; acc[1] = 0;
    b[0] = 1; b[1] = 0;
    s = -16;
    c.bias = b; c.output_zero_point = 0; c.out_dtype = QMX_INT16;
    CHECK(qmx_requantize_array(&c, acc, 1, 2, o16, sizeof o16) == QMX_OK && o16[0] == -16384 && o16[1] == 0,
          "wrapping bias: %d %d, want -16384 0", o16[0], o16[1]);
    /* per-tensor reads only element 0: an invalid shift in element 1 is never looked at */
    mvec[0] = 1 << 30; mvec[1] = -1;
    svec[0] = 0; svec[1] = 99;
    c.multipliers = mvec; c.shifts = svec; c.bias = NULL; c.per_channel = 0;
    c.mode = QMX_REQUANT_SINGLE_ROUNDING; c.out_dtype = QMX_INT8;
    acc[0] = 100; acc[1] = -100;
    CHECK(qmx_requantize_array(&c, acc, 1, 2, o8, 2) == QMX_OK && o8[0] == 50 && o8[1] == -50,
          "per-tensor element 0: %d %d, want 50 -50", o8[0], o8[1]);
}

static int out_untouched(void) {
    size_t i;
    for (i = 0; i < sizeof out8; i++) if ((unsigned char)out8[i] != 0x5A) return 0;
    for (i = 0; i < sizeof out16; i++) if (((unsigned char *)out16)[i] != 0x5A) return 0;
    return 1;
}

/* One call with one defect: the status and an untouched output. */
static void expect_error(const qmx_requant_config *c, const int32_t *acc, size_t rows, size_t channels,
                         int to_null, size_t out_bytes, qmx_status want, const char *what) {
    qmx_status st;
    void *out = to_null ? NULL : (c && c->out_dtype == QMX_INT16 ? (void *)out16 : (void *)out8);
    memset(out8, 0x5A, sizeof out8);
    memset(out16, 0x5A, sizeof out16);
    st = qmx_requantize_array(c, acc, rows, channels, out, out_bytes);
    CHECK(st == want, "%s: status %d (%s), want %d (%s)", what, (int)st, qmx_status_str(st), (int)want,
          qmx_status_str(want));
    CHECK(out_untouched(), "%s: output written on error", what);
}

static void requantize_array_rejects_bad_input(void) {
    qmx_requant_config base = QMX_ZERO_INIT, c;
    int32_t m3[3], ms[3];
    int s3[3], sb[3];
    float f3[3], fb[3];
    int i;
    QMX_TEST_CASE("requantize_array: each bad input -> its status, output untouched");
    for (i = 0; i < 3; i++) { m3[i] = 1 << 30; s3[i] = -2; f3[i] = 0.25f; }
    base.mode = QMX_REQUANT_DOUBLE_ROUNDING;
    base.per_channel = 1;
    base.multipliers = m3;
    base.shifts = s3;
    base.scales = f3;
    base.out_dtype = QMX_INT8;
    /* the base itself is valid */
    memset(out8, 0x5A, sizeof out8);
    CHECK(qmx_requantize_array(&base, rq_acc, 2, 3, out8, 6) == QMX_OK, "base config is valid");

    expect_error(NULL, rq_acc, 2, 3, 0, 6, QMX_ERR_NULL, "NULL config");
    expect_error(&base, NULL, 2, 3, 0, 6, QMX_ERR_NULL, "NULL acc");
    expect_error(&base, rq_acc, 2, 3, 1, 6, QMX_ERR_NULL, "NULL out");
    c = base; c.multipliers = NULL;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_NULL, "NULL multipliers");
    c = base; c.mode = QMX_REQUANT_SINGLE_ROUNDING; c.shifts = NULL;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_NULL, "NULL shifts");
    c = base; c.mode = QMX_REQUANT_FLOAT; c.scales = NULL;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_NULL, "NULL scales (float mode)");

    expect_error(&base, rq_acc, 0, 3, 0, 6, QMX_ERR_SIZE, "rows 0");
    expect_error(&base, rq_acc, 2, 0, 0, 6, QMX_ERR_SIZE, "channels 0");

    expect_error(&base, rq_acc, 2, 3, 0, 5, QMX_ERR_BUFFER_TOO_SMALL, "int8 out_bytes 5 < 6");
    expect_error(&base, rq_acc, 2, 3, 0, 0, QMX_ERR_BUFFER_TOO_SMALL, "out_bytes 0");
    c = base; c.out_dtype = QMX_INT16;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_BUFFER_TOO_SMALL, "int16 needs 12 bytes, got 6");
    expect_error(&c, rq_acc, 2, 3, 0, 11, QMX_ERR_BUFFER_TOO_SMALL, "int16 needs 12 bytes, got 11");

    c = base; c.per_channel = 0;   /* one parameter, so nothing per channel is read */
    expect_error(&c, rq_acc, SIZE_MAX / 2 + 1, 2, 0, sizeof out8, QMX_ERR_OVERFLOW, "rows * channels overflows");
    expect_error(&c, rq_acc, 2, SIZE_MAX, 0, sizeof out8, QMX_ERR_OVERFLOW, "2 * SIZE_MAX overflows");
    c.out_dtype = QMX_INT16;
    expect_error(&c, rq_acc, SIZE_MAX / 4 + 1, 2, 0, sizeof out16, QMX_ERR_OVERFLOW, "int16 bytes overflow");

    c = base; c.act_min = 10; c.act_max = -10;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "act_min > act_max");
    c = base; c.act_min = -128; c.act_max = 128;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "act_max above int8");
    c = base; c.act_min = -129; c.act_max = 127;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "act_min below int8");
    c = base; c.output_zero_point = 128;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "int8 zero point 128");
    c = base; c.output_zero_point = -129;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "int8 zero point -129");
    c = base; c.out_dtype = QMX_INT16; c.output_zero_point = 32768;
    expect_error(&c, rq_acc, 2, 3, 0, 12, QMX_ERR_ARG, "int16 zero point 32768");
    c = base; c.out_dtype = QMX_INT16; c.output_zero_point = -32769;
    expect_error(&c, rq_acc, 2, 3, 0, 12, QMX_ERR_ARG, "int16 zero point -32769");

    for (i = 0; i < 3; i++) sb[i] = s3[i];
    sb[2] = 31;
    c = base; c.shifts = sb;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "per-channel shift 31 in channel 2");
    sb[2] = -2; sb[1] = -32;
    c.mode = QMX_REQUANT_SINGLE_ROUNDING;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "per-channel shift -32 in channel 1");
    sb[1] = 31; sb[0] = 31;
    c = base; c.per_channel = 0; c.shifts = sb;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "per-tensor shift 31");
    for (i = 0; i < 3; i++) ms[i] = m3[i];
    ms[1] = -1;
    c = base; c.mode = QMX_REQUANT_SINGLE_ROUNDING; c.multipliers = ms;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "single rounding, negative multiplier in channel 1");
    c.mode = QMX_REQUANT_DOUBLE_ROUNDING;   /* the same multipliers are fine for double rounding */
    memset(out8, 0x5A, sizeof out8);
    CHECK(qmx_requantize_array(&c, rq_acc, 2, 3, out8, 6) == QMX_OK, "double rounding accepts m < 0");

    for (i = 0; i < 3; i++) fb[i] = f3[i];
    fb[1] = qmx_test_bits_f32(0x7FC00000u);
    c = base; c.mode = QMX_REQUANT_FLOAT; c.scales = fb;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "float mode, NaN scale in channel 1");
    fb[1] = qmx_test_bits_f32(0x7F800000u);
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "float mode, Inf scale in channel 1");
    fb[1] = -0.25f;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "float mode, negative scale in channel 1");

    c = base; c.mode = (qmx_requant_mode)4;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "mode 4 is unknown");
#ifndef __cplusplus
    c = base; c.mode = (qmx_requant_mode)-1;
    expect_error(&c, rq_acc, 2, 3, 0, 6, QMX_ERR_ARG, "mode -1 is unknown");
#endif
    {
        static const qmx_dtype bad_dt[6] = { QMX_INT4, QMX_UINT4, QMX_FP8_E4M3FN, QMX_FP8_E5M2,
                                             QMX_FLOAT32, (qmx_dtype)15 };
        for (i = 0; i < 6; i++) {
            char what[48];
            c = base; c.out_dtype = bad_dt[i];
            snprintf(what, sizeof what, "out_dtype %d is not [u]int8/[u]int16", (int)bad_dt[i]);
            expect_error(&c, rq_acc, 2, 3, 0, sizeof out8, QMX_ERR_DTYPE, what);
        }
    }
}

/* Ties of both gemmlowp roundings, positive and negative, in every lane position of the
 * vector output stages (37 channels: strip tails at any vector length) and SRDHM(MIN, MIN):
 * qmx_requantize_array against the scalar functions element by element, every mode. Channel j
 * has exponent k = j % 8: double / single rounding m = 2^30 (0.5), shift -k, and acc = +-odd *
 * 2^k, so SRDHM (k = 0) or RoundingDivideByPOT (k > 0) meets an exact .5; float scale 2^-(k+1).
 * Row 3 is INT32_MIN everywhere, with m = INT32_MIN on every ninth channel (double rounding). */
static void requantize_array_ties(void) {
    enum { CH = 37, ROWS = 4 };
    static int32_t acc[ROWS * CH], mult[CH], mult_sr[CH];
    static int shift[CH];
    static float scale[CH];
    static int16_t out[ROWS * CH];
    int mode, pc;
    size_t r, j;
    QMX_TEST_CASE("requantize_array: +-ties of SRDHM and RoundingDivideByPOT, SRDHM(MIN, MIN), every lane");
    for (j = 0; j < CH; j++) {
        int k = (int)(j % 8);
        mult[j] = j % 9 == 8 ? INT32_MIN : 1 << 30;
        mult_sr[j] = 1 << 30;
        shift[j] = -k;
        scale[j] = qmx_test_bits_f32((uint32_t)(126 - k) << 23);
        for (r = 0; r < 3; r++) {
            int32_t odd = (int32_t)(2 * (r * CH + j) + 1);
            acc[r * CH + j] = (r == 1 ? -odd : odd) * (1 << k);
        }
        acc[3 * CH + j] = INT32_MIN;
    }
    for (mode = 0; mode < 3; mode++)
    for (pc = 0; pc <= 1; pc++) {
        qmx_requant_config c = QMX_ZERO_INIT;
        int bad = 0;
        c.mode = (qmx_requant_mode)mode;
        c.per_channel = pc;
        c.multipliers = mode == QMX_REQUANT_SINGLE_ROUNDING ? mult_sr : mult;
        c.shifts = shift;
        c.scales = scale;
        c.out_dtype = QMX_INT16;
        memset(out, 0x5A, sizeof out);
        CHECK(qmx_requantize_array(&c, acc, ROWS, CH, out, sizeof out) == QMX_OK, "mode %d pc %d status", mode, pc);
        for (r = 0; r < ROWS; r++)
            for (j = 0; j < CH; j++) {
                size_t p = pc ? j : 0;
                int32_t a = acc[r * CH + j], v;
                if (mode == QMX_REQUANT_DOUBLE_ROUNDING) v = qmx_requantize(a, c.multipliers[p], shift[p]);
                else if (mode == QMX_REQUANT_SINGLE_ROUNDING) v = qmx_requantize_single_rounding(a, c.multipliers[p], shift[p]);
                else v = qmx_requantize_float(a, scale[p]);
                v = v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
                if (out[r * CH + j] != v && bad++ < 3)
                    CHECK(0, "mode %d pc %d row %u channel %u acc %ld: got %d want %ld", mode, pc,
                          (unsigned)r, (unsigned)j, (long)a, (int)out[r * CH + j], (long)v);
            }
        CHECK(bad == 0, "mode %d pc %d: %d elements differ from the scalar functions", mode, pc, bad);
    }
}

int main(void) {
    fill_params();
    requantize_matches_tflite_gemmlowp_rows();
    quantize_multiplier_matches_tflite_rows();
    quantize_multiplier_rejects_nonfinite_and_null();
    requantize_check_bounds();
    scalar_requantize_clamps_the_shift();
    hand_worked_values();
    float_requantize_matches_exact_reference();
    requantize_array_matches_documented_formula();
    requantize_array_hand_worked();
    requantize_array_ties();
    requantize_array_rejects_bad_input();
    return QMX_TEST_END();
}
