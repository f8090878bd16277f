/* test_calib.c - specification of qmx_calib.h's observers, fp8 delayed scaling, method strings
 * and decimal parser.
 *
 * References (independent of qmx's C code):
 *   tests/data/calib_torch.txt    PyTorch 1.13 MinMaxObserver, PerChannelMinMaxObserver,
 *       MovingAverage(PerChannel)MinMaxObserver (tests/gen/gen_calib.py). Tolerance: the tracked
 *       min/max are compared bit for bit (min/max are exact; the EMA is the same three float32
 *       operations); scale bit for bit (torch's formula equals qmx's Qwix recipe for these
 *       dtypes, in the same float32 operations, and scale > torch's eps here); zero point exactly.
 *   tests/data/calib_delayed.txt  Flax / AQT delayed-scaling sequences from the published
 *       formulas in numpy float32: scales bit for bit (the same float32 operations).
 *   tests/data/calib_parse.txt    exact rational rounding of decimal strings: bit for bit (the
 *       parser is documented as correctly rounded).
 *   Hand-worked cases for every Qwix method string (exact float expressions written out here).
 *   Double-precision references for the sum-based methods: within 4 ulp (Neumaier's sum is
 *   within ~2 ulp of the exact sum, the root within 2 ulp, the clip multiply 0.5 ulp); past
 *   65536 elements (several pieces), integer-valued data whose exact sum double holds: the
 *   record's sum + comp within 2 ulp of it, the bound within 4 ulp.
 */
#define QMX_IMPLEMENTATION
#include "qmx_calib.h"
#include "qmx_test.h"
#include <float.h>  /* FLT_EVAL_METHOD */
#include <math.h>   /* the test's references only (libm log / exp); the library uses none */

#define SMALL_TARGET QMX_TEST_SMALL_TARGET

/* one float operation each, rounded by the return (no constant folding in excess precision) */
static float fdiv(float a, float b) { float r = a / b; return r; }
static uint32_t fb(float f) { return qmx_test_f32_bits(f); }
static float hexf(const char *s) { return qmx_test_bits_f32((uint32_t)strtoul(s, NULL, 16)); }

/* ---- PyTorch observers ---------------------------------------------------------------------- */
#define TMAXN 2048
static float t_batches[8][TMAXN];

static void test_torch(void) {
    FILE *f = qmx_test_open("calib_torch.txt");
    static char line[40000];
    int cases = 0;
    QMX_TEST_CASE("PyTorch observers: min/max tracked bit-exactly, scale and zero point equal");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char name[64], kind[16], dt[16], qs[16], mom[16];
        unsigned outer, len, inner, nb, b;
        size_t count, g, ng;
        qmx_calib_config cc = QMX_ZERO_INIT;
        qmx_qconfig q = QMX_ZERO_INIT;
        qmx_observer obs = QMX_ZERO_INIT;
        qmx_calib_stat stats[64];
        float scales[64];
        int32_t zps[64];
        int pc;
        if (sscanf(line, "case %63s %15s %15s %15s %15s %u %u %u %u", name, kind, dt, qs, mom,
                   &outer, &len, &inner, &nb) != 9) continue;
        count = (size_t)outer * len * inner;
        CHECK(count <= TMAXN && nb <= 8, "case %s too large", name);
        if (count > TMAXN || nb > 8) break;
        for (b = 0; b < nb; b++) {
            char *p;
            size_t i;
            if (!qmx_test_next_line(f, line, sizeof line) || line[0] != 'x') break;
            p = line + 1;
            for (i = 0; i < count; i++) {
                t_batches[b][i] = qmx_test_bits_f32((uint32_t)strtoul(p, &p, 16));
            }
        }
        pc = strstr(name, "_pc") != NULL;
        cc.method = strcmp(kind, "moving") == 0 ? QMX_CALIB_MOVING_MINMAX : QMX_CALIB_MINMAX;
        cc.momentum = hexf(mom);
        q.dtype = strcmp(dt, "uint8") == 0 ? QMX_UINT8 : QMX_INT8;
        q.recipe = QMX_RECIPE_QWIX;
        q.asymmetric = strcmp(qs, "affine") == 0;
        q.granularity = pc ? QMX_PER_CHANNEL : QMX_PER_TENSOR;
        q.outer = outer; q.axis_len = len; q.inner = inner;
        CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, count, stats, 64), QMX_OK, "%s init", name);
        for (b = 0; b < nb; b++)
            CHECK_EQ_INT(qmx_observer_update(&obs, t_batches[b], count), QMX_OK, "%s update", name);
        CHECK_EQ_INT(qmx_observer_finalize(&obs, scales, 64, zps), QMX_OK, "%s finalize", name);
        ng = obs.n_groups;
        CHECK_EQ_INT(ng, pc ? len : 1, "%s groups", name);
        while (qmx_test_next_line(f, line, sizeof line) && strncmp(line, "end", 3) != 0) {
            char h1[16], h2[16];
            unsigned gi;
            long zp;
            if (sscanf(line, "mm %u %15s %15s", &gi, h1, h2) == 3) {
                g = gi;
                CHECK(g < ng && fb(stats[g].min) == fb(hexf(h1)) && fb(stats[g].max) == fb(hexf(h2)),
                      "%s group %u min/max %.9g %.9g want %.9g %.9g", name, gi, stats[g].min,
                      stats[g].max, hexf(h1), hexf(h2));
            } else if (sscanf(line, "qp %u %15s %ld", &gi, h1, &zp) == 3) {
                g = gi;
                CHECK(g < ng && fb(scales[g]) == fb(hexf(h1)), "%s group %u scale %.9g want %.9g",
                      name, gi, scales[g], hexf(h1));
                if (q.asymmetric) CHECK_EQ_INT(zps[g], zp, "%s group %u zero point", name, gi);
                else CHECK_EQ_INT(zps[g], 0, "%s group %u symmetric zero point", name, gi);
            }
        }
        cases++;
    }
    fclose(f);
    CHECK(cases >= 11, "only %d torch cases", cases);
}

/* ---- fp8 delayed scaling ---------------------------------------------------------------------- */
static void test_delayed_golden(void) {
    FILE *f = qmx_test_open("calib_delayed.txt");
    char line[256];
    int seqs = 0;
    QMX_TEST_CASE("fp8 delayed scaling follows Flax fp8_ops / AQT bit for bit over scripted amaxes");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char mode[8], fmt[16];
        int margin, steps, i;
        unsigned L;
        float hist[16];
        qmx_fp8_delayed d;
        qmx_dtype dt;
        if (sscanf(line, "seq %7s %15s %d %u %d", mode, fmt, &margin, &L, &steps) != 5) continue;
        dt = strcmp(fmt, "e4m3fn") == 0 ? QMX_FP8_E4M3FN : strcmp(fmt, "e5m2") == 0 ? QMX_FP8_E5M2
           : strcmp(fmt, "e4m3fnuz") == 0 ? QMX_FP8_E4M3FNUZ : QMX_FP8_E5M2FNUZ;
        CHECK_EQ_INT(qmx_fp8_delayed_init(&d, dt, strcmp(mode, "aqt") == 0 ? QMX_DELAYED_AQT
                                                                          : QMX_DELAYED_FLAX,
                                          margin, hist, L), QMX_OK, "init");
        for (i = 0; i < steps; i++) {
            char a[16], s[16];
            float got = -1.0f;
            if (!qmx_test_next_line(f, line, sizeof line) || sscanf(line, "%15s %15s", a, s) != 2) break;
            CHECK_EQ_INT(qmx_fp8_delayed_step(&d, hexf(a), &got), QMX_OK, "step");
            CHECK(fb(got) == fb(hexf(s)), "%s %s margin %d L %u step %d amax %g: scale %.9g want %.9g",
                  mode, fmt, margin, L, i, hexf(a), got, hexf(s));
        }
        seqs++;
    }
    fclose(f);
    CHECK(seqs >= 60, "only %d sequences", seqs);
}

static void test_delayed_spec(void) {
    float hist[3], s = 0.0f, x[4] = {1.0f, -7.0f, 2.0f, 0.0f}, a;
    qmx_fp8_delayed d;
    QMX_TEST_CASE("delayed scaling: first step keeps 1.0, then max of the PREVIOUS amaxes / fp8_max");
    CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E4M3FN, QMX_DELAYED_FLAX, 0, hist, 3), QMX_OK, "init");
    CHECK_EQ_INT(qmx_fp8_delayed_update(&d, x, 4, &s), QMX_OK, "update");
    CHECK(s == 1.0f, "first scale %g", s);                 /* history all zero: keep */
    CHECK(hist[0] == 7.0f, "amax pushed %g", hist[0]);
    x[1] = 0.5f;
    CHECK_EQ_INT(qmx_fp8_delayed_update(&d, x, 4, &s), QMX_OK, "update 2");
    CHECK(s == fdiv(1.0f, fdiv(448.0f, 7.0f)), "second scale %.9g", s); /* uses 7 from step 1 */
    CHECK_EQ_INT(qmx_fp8_delayed_update(&d, x, 4, &s), QMX_OK, "update 3");
    CHECK(s == fdiv(1.0f, fdiv(448.0f, 7.0f)), "7 still in history: %.9g", s);
    CHECK_EQ_INT(qmx_fp8_delayed_update(&d, x, 4, &s), QMX_OK, "update 4");
    CHECK(s == fdiv(1.0f, fdiv(448.0f, 7.0f)), "7 still in history (length 3): %.9g", s);
    CHECK_EQ_INT(qmx_fp8_delayed_update(&d, x, 4, &s), QMX_OK, "update 5");
    CHECK(s == fdiv(1.0f, fdiv(448.0f, 2.0f)), "7 rolled out: %.9g", s);
    QMX_TEST_CASE("qmx_absmax_f32 propagates NaN like jnp.max; errors");
    x[2] = qmx_test_bits_f32(0x7FC00001u);
    CHECK(qmx_absmax_f32(x, 4, &a) == QMX_OK && a != a, "NaN expected");
    x[2] = qmx_test_bits_f32(0xFF800000u);
    CHECK(qmx_absmax_f32(x, 4, &a) == QMX_OK && fb(a) == 0x7F800000u, "-Inf gives +Inf");
    CHECK_EQ_INT(qmx_absmax_f32(x, 0, &a), QMX_ERR_SIZE, "n 0");
    CHECK_EQ_INT(qmx_absmax_f32(NULL, 4, &a), QMX_ERR_NULL, "NULL");
    CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_INT8, QMX_DELAYED_FLAX, 0, hist, 3), QMX_ERR_DTYPE, "int8");
    CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E5M2, QMX_DELAYED_FLAX, 65, hist, 3), QMX_ERR_ARG, "margin");
    CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E5M2, (qmx_delayed_mode)7, 0, hist, 3), QMX_ERR_ARG, "mode");
    CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E5M2, QMX_DELAYED_FLAX, 0, hist, 0), QMX_ERR_SIZE, "L 0");
    CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E5M2, QMX_DELAYED_FLAX, 0, NULL, 3), QMX_ERR_NULL, "NULL");
    CHECK_EQ_INT(qmx_fp8_delayed_update(&d, x, 0, &s), QMX_ERR_SIZE, "update n 0");
}

/* ---- decimal parser ----------------------------------------------------------------------- */
static void test_parse_golden(void) {
    FILE *f = qmx_test_open("calib_parse.txt");
    char line[512];
    int n = 0;
    QMX_TEST_CASE("qmx_parse_f32 rounds decimal strings correctly (exact rational reference)");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char s[256], h[16];
        float v = 12345.0f;
        if (sscanf(line, "ok %255s %15s", s, h) == 2) {
            qmx_status st = qmx_parse_f32(s, strlen(s), &v);
            CHECK(st == QMX_OK && fb(v) == fb(hexf(h)), "'%s' -> status %d %08x want %s", s, st,
                  (unsigned)fb(v), h);
            n++;
        } else if (sscanf(line, "bad %255s", s) == 1) {
            qmx_status st = qmx_parse_f32(s, strlen(s), &v);
            CHECK(st == QMX_ERR_PARSE && v == 12345.0f, "'%s' -> status %d (want parse error, out untouched)", s, st);
            n++;
        }
    }
    fclose(f);
    CHECK(n >= 400, "only %d strings", n);
}

/* ---- hand-worked Qwix method strings -------------------------------------------------------- */
typedef struct mcase {
    const char *str;
    qmx_dtype dtype;
    int asym;
    float x[4];
    float want_bound;   /* bound (absmax, or hi - lo); stored as float, so rounded once */
    float divisor;      /* B (symmetric) or qmax - qmin (asymmetric) */
    int32_t want_zp;
} mcase;

static void test_methods_hand(void) {
    /* x and the expected scale are worked by hand from Qwix's definitions (SEMANTICS.md 2.3,
     * 2.4): symmetric s = bound / 127.5 (int8), asymmetric s = (hi - lo) / 255,
     * zp = RNE(-128 - lo / s) (int8) or RNE(0 - lo / s) (uint8). */
    static const mcase cs[] = {
        {"absmax", QMX_INT8, 0, {-3, 1, 2, 0.5f}, 3.0f, 127.5f, 0},
        {"absmax,0.9", QMX_INT8, 0, {-3, 1, 2, 0.5f}, 2.69999981f, 127.5f, 0},
        /* 3 * float(0.9) = 3 * 0.89999998 = 2.69999993 (26 bits) rounds, a tie, to even 2.69999981 */
        {"AbsMax,0.5", QMX_INT8, 0, {-3, 1, 2, 0.5f}, 1.5f, 127.5f, 0},
        {"absmax,2", QMX_INT4, 0, {-3, 1, 2, 0.5f}, 6.0f, 7.5f, 0},
        {"minmax", QMX_INT8, 1, {-3, 1, 2, 0.5f}, 5.0f, 255.0f, 25},       /* -3/s = -153 */
        {"minmax,2", QMX_INT8, 1, {-3, 1, 2, 0.5f}, 10.0f, 255.0f, 25},
        {"minmax", QMX_UINT8, 1, {1, 2, 3, 4}, 4.0f, 255.0f, 0},          /* lo = min(1,0) = 0 */
        {"minmax", QMX_UINT8, 1, {-1, -2, -3, -4}, 4.0f, 255.0f, 255},    /* hi = 0 */
        {"rms,3", QMX_INT8, 0, {3, -4, 0, 0}, 7.5f, 127.5f, 0},            /* sqrt(25/4)*3 */
        {"RMS,1", QMX_INT8, 0, {1, 1, -1, -1}, 1.0f, 127.5f, 0},
        {"rms,0.5", QMX_INT16, 0, {2, 2, 2, 2}, 1.0f, 32768.0f, 0},
        {"fixed,4", QMX_INT8, 0, {100, 0, 0, 0}, 4.0f, 127.5f, 0},         /* data ignored */
        {"fixed,-2,2", QMX_INT8, 0, {0, 0, 0, 0}, 2.0f, 127.5f, 0},        /* lo+hi=0: symmetric */
        {"fixed,-1,3", QMX_INT8, 1, {0, 0, 0, 0}, 4.0f, 255.0f, -64},      /* -128 + 63.75 */
        {"fixed,0,6", QMX_UINT8, 1, {9, 9, 9, 9}, 6.0f, 255.0f, 0},
        {"fixed,-6,0", QMX_UINT8, 1, {9, 9, 9, 9}, 6.0f, 255.0f, 255},
        {"fixed,1e1", QMX_FP8_E4M3FN, 0, {0, 0, 0, 0}, 10.0f, 448.0f, 0},
        {"absmax", QMX_FP8_E5M2, 0, {-3, 1, 2, 0.5f}, 3.0f, 57344.0f, 0},
    };
    size_t i;
    QMX_TEST_CASE("every Qwix method string, hand-worked (Qwix recipe)");
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        qmx_calib_config cc;
        qmx_qconfig q = QMX_ZERO_INIT;
        qmx_observer obs = QMX_ZERO_INIT;
        qmx_calib_stat st[1];
        float s = -1.0f, want;
        int32_t zp = 999;
        q.dtype = cs[i].dtype; q.recipe = QMX_RECIPE_QWIX; q.asymmetric = cs[i].asym;
        CHECK_EQ_INT(qmx_calib_parse_method(cs[i].str, strlen(cs[i].str), &cc), QMX_OK, "%s", cs[i].str);
        CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 4, st, 1), QMX_OK, "%s init", cs[i].str);
        CHECK_EQ_INT(qmx_observer_update(&obs, cs[i].x, 4), QMX_OK, "%s update", cs[i].str);
        CHECK_EQ_INT(qmx_observer_finalize(&obs, &s, 1, &zp), QMX_OK, "%s finalize", cs[i].str);
        want = cs[i].want_bound;
        want = want / cs[i].divisor;   /* one float division, rounded by the assignment */
        CHECK(fb(s) == fb(want), "%s: scale %.9g want %.9g", cs[i].str, s, want);
        CHECK_EQ_INT(zp, cs[i].want_zp, "%s zero point", cs[i].str);
    }
    {
        qmx_calib_config cc;
        QMX_TEST_CASE("parsed configs hold the documented fields");
        CHECK(qmx_calib_parse_method("fixed,-1.5,3", 12, &cc) == QMX_OK && cc.method == QMX_CALIB_FIXED &&
              cc.lo == -1.5f && cc.hi == 3.0f, "fixed,-1.5,3");
        CHECK(qmx_calib_parse_method("fixed,2", 7, &cc) == QMX_OK && cc.lo == -2.0f && cc.hi == 2.0f, "fixed,2");
        CHECK(qmx_calib_parse_method("absmax", 6, &cc) == QMX_OK && cc.method == QMX_CALIB_ABSMAX &&
              cc.clip == 0.0f, "absmax: clip 0 = 1");
        CHECK(qmx_calib_parse_method("minmax,0.25", 11, &cc) == QMX_OK && cc.method == QMX_CALIB_MINMAX &&
              cc.clip == 0.25f, "minmax,0.25");
        CHECK(qmx_calib_parse_method("rms,3xyz", 5, &cc) == QMX_OK && cc.method == QMX_CALIB_RMS &&
              cc.clip == 3.0f, "len bounds the string");
    }
}

/* ---- malformed method strings ------------------------------------------------------------- */
static int bad_method(const char *s, size_t len) {
    qmx_calib_config cc;
    memset(&cc, 0x5A, sizeof cc);
    {
        unsigned char before[sizeof cc];
        memcpy(before, &cc, sizeof cc);
        if (qmx_calib_parse_method(s, len, &cc) != QMX_ERR_PARSE) return 0;
        return memcmp(before, &cc, sizeof cc) == 0;
    }
}

static void test_methods_malformed(void) {
    static const char *bad[] = {
        "", "absmax,", ",absmax", "absmax,,1", "absmax,1,2", "absmax,0", "absmax,-1", "absmax,-0",
        "absmax,inf", "absmax,nan", "absmax,1e39", "absmax,0x1", "absmax, 1", "absmax ,1",
        " absmax", "absmax ", "absmax,1 ", "absmax,1.2.3", "absmax,e3", "absmax,1e", "absmax,+",
        "absmax,-", "absmax,.", "absmax,1e-99", "absmaxx", "absma", "abs max", "max", "min",
        "minmax,", "minmax,0", "minmax,1,1", "minmax,-2", "minmax,1e400",
        "rms", "rms,", "rms,0", "rms,-3", "rms,3,4", "rms,three", "rmsx,3",
        "fixed", "fixed,", "fixed,0", "fixed,-4", "fixed,1,2", "fixed,-2,-1", "fixed,2,1",
        "fixed,0,0", "fixed,-0,0", "fixed,-1,2,3", "fixed,,2", "fixed,-1,", "fixed,a,b",
        "fixed,1e39,2", "fixed,-1e39,1e39", "percentile,99", "mse", "kl", "absmean", "ABSMAX,",
        "absmax;0.9", "absmax:0.9", "absmax,0.9,", "absmax,0,9", "absmax,1_0", "absmax,١",
        "absmax,12345678901234567891", "absmax,0.12345678901234567891", "absmax,--1",
        "absmax,+-1", "absmax,1e+", "absmax,1e-", "absmax,1ee5", "absmax,1e5.5", "fixed,-1e-50,0",
        "fixed,-1e-50,1e-50", "absmax\t", "\nabsmax", "absmax,\x01", "rms,1\x7f", "a", ",", ",,",
        ",,,", "absmax,1,2,3,4", "fixed,-1,1,1,1", "minmax,1;", "absmax,0e0", "fixed,1e-46",
    };
    size_t i, n = 0;
    char buf[700];
    QMX_TEST_CASE("every malformed method string is QMX_ERR_PARSE and leaves the output untouched");
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++, n++)
        CHECK(bad_method(bad[i], strlen(bad[i])), "'%s' accepted", bad[i]);
    /* embedded NUL at every position of valid strings */
    {
        static const char *good[] = {"absmax,0.9", "fixed,-2,2", "rms,3", "minmax"};
        size_t g, p;
        for (g = 0; g < 4; g++) {
            size_t L = strlen(good[g]);
            for (p = 0; p < L; p++, n++) {
                memcpy(buf, good[g], L);
                buf[p] = '\0';
                CHECK(bad_method(buf, L), "NUL at %u of '%s' accepted", (unsigned)p, good[g]);
            }
            /* truncations that are invalid: every proper prefix except valid ones */
            for (p = 0; p < L; p++) {
                qmx_calib_config cc;
                qmx_status st = qmx_calib_parse_method(good[g], p, &cc);
                CHECK(st == QMX_OK || st == QMX_ERR_PARSE, "prefix %u of '%s' status %d",
                      (unsigned)p, good[g], st);
                n++;
            }
        }
    }
    /* overlong strings and numbers */
    memset(buf, '1', sizeof buf);
    memcpy(buf, "absmax,", 7);
    CHECK(bad_method(buf, 300), "300-char string accepted"); n++;
    memcpy(buf, "absmax,0.", 9);
    memset(buf + 9, '0', 200); buf[209] = '1';
    CHECK(bad_method(buf, 210), "overlong number accepted"); n++;
    CHECK(bad_method(buf, QMX_CALIB_METHOD_MAX + 1), "len > max accepted"); n++;
    CHECK_EQ_INT(qmx_calib_parse_method(NULL, 3, NULL), QMX_ERR_NULL, "NULL"); n++;
    CHECK(n >= 100, "only %u malformed strings", (unsigned)n);
}

/* ---- sum-based methods against double references -------------------------------------------- */
static double dsqrt(double v) {   /* Newton in double, for the reference only */
    double r = v > 1.0 ? v : 1.0;
    int i;
    if (v <= 0.0) return 0.0;
    for (i = 0; i < 200; i++) r = 0.5 * (r + v / r);
    return r;
}
static double droot(double v, int p) {
    double lo = 0.0, hi = v > 1.0 ? v : 1.0;
    int i;
    if (p == 1) return v;
    if (p == 2) return dsqrt(v);
    for (i = 0; i < 200; i++) {
        double m = 0.5 * (lo + hi), y = m;
        int j;
        for (j = 1; j < p; j++) y *= m;
        if (y <= v) lo = m; else hi = m;
    }
    return lo;
}
static int close_ulps(float got, double want, double ulps) {
    double d = (double)got - want, tol = ulps * (want < 0 ? -want : want) * (1.0 / 8388608.0);
    return (d < 0 ? -d : d) <= tol;
}

static float rdata[6][1024];
static void test_sum_methods(void) {
    uint32_t seed = 12345u;
    size_t b, i, c, n = SMALL_TARGET ? 256 : 1024, C = 4;
    int p;
    QMX_TEST_CASE("mean-of-absmax, absmean p=1..4 and rms match double references within 4 ulp");
    for (b = 0; b < 6; b++)
        for (i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            rdata[b][i] = ((float)(int32_t)(seed >> 8) - 8388608.0f) * (1.0f / 1048576.0f) *
                          (float)(b + 1);
            if (i % 7 == 3) rdata[b][i] = 0.0f;             /* zeros: absmean skips them */
        }
    for (p = 0; p <= 6; p++) {   /* 0: mean-absmax, 1..4: absmean, 5: rms, 6: rms with clip */
        qmx_calib_config cc = QMX_ZERO_INIT;
        qmx_qconfig q = QMX_ZERO_INIT;
        qmx_observer obs = QMX_ZERO_INIT;
        qmx_calib_stat st[4];
        q.granularity = QMX_PER_CHANNEL; q.outer = 1; q.axis_len = C; q.inner = n / C;
        cc.method = p == 0 ? QMX_CALIB_MEAN_ABSMAX : p <= 4 ? QMX_CALIB_ABSMEAN : QMX_CALIB_RMS;
        cc.p = p >= 1 && p <= 4 ? p : 0;
        cc.clip = p == 6 ? 0.75f : 0.0f;
        CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, n, st, 4), QMX_OK, "init %d", p);
        for (b = 0; b < 6; b++) CHECK_EQ_INT(qmx_observer_update(&obs, rdata[b], n), QMX_OK, "upd");
        for (c = 0; c < C; c++) {
            double acc = 0.0, cnt = 0.0, want;
            float lo = 0.0f, hi = 0.0f;
            for (b = 0; b < 6; b++) {
                double am = 0.0;
                for (i = c * (n / C); i < (c + 1) * (n / C); i++) {
                    double v = rdata[b][i] < 0 ? -(double)rdata[b][i] : (double)rdata[b][i];
                    if (p == 0) { if (v > am) am = v; }
                    else if (p <= 4) { if (v != 0.0) { double y = v; int j; for (j = 1; j < p; j++) y *= v; acc += y; cnt += 1; } }
                    else { acc += v * v; cnt += 1; }
                }
                if (p == 0) { acc += am; cnt += 1; }
            }
            want = p == 0 ? acc / cnt : p <= 4 ? droot(acc / cnt, p) : dsqrt(acc / cnt);
            if (p == 6) want *= 0.75;
            CHECK(qmx_observer_bounds(&obs, c, &lo, &hi) == QMX_OK && lo == -hi &&
                  close_ulps(hi, want, 4.0), "method %d group %u: %.9g want %.12g", p,
                  (unsigned)c, hi, want);
        }
    }
}

/* ---- granularity, recipes, zero data, errors ------------------------------------------------ */
static void test_granularity(void) {
    /* [outer=2][len=5][inner=3], per block of 2 along len: groups (o, b, i) = 2*3*3 = 18 */
    float x[30], x2[30], scales[18], ref[18];
    qmx_calib_stat st[18];
    qmx_calib_config cc = QMX_ZERO_INIT;
    qmx_qconfig q = QMX_ZERO_INIT;
    qmx_observer obs = QMX_ZERO_INIT;
    size_t i, o, k, in, g;
    QMX_TEST_CASE("per-block groups are (outer, block, inner), ragged tail, absmax over batches");
    for (i = 0; i < 30; i++) { x[i] = (float)((int)(i * 7 % 11) - 5) * 0.25f; x2[i] = (float)((int)(i * 5 % 13) - 6) * 0.2f; }
    q.granularity = QMX_PER_BLOCK; q.outer = 2; q.axis_len = 5; q.inner = 3; q.block_size = 2;
    q.recipe = QMX_RECIPE_AQT;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 30, st, 18), QMX_OK, "init");
    CHECK_EQ_INT(obs.n_groups, 18, "groups");
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 30), QMX_OK, "update 1");
    CHECK_EQ_INT(qmx_observer_update(&obs, x2, 30), QMX_OK, "update 2");
    CHECK_EQ_INT(qmx_observer_finalize(&obs, scales, 18, NULL), QMX_OK, "finalize");
    for (g = 0; g < 18; g++) ref[g] = 0.0f;
    for (o = 0; o < 2; o++) for (k = 0; k < 5; k++) for (in = 0; in < 3; in++) {
        size_t gi = (o * 3 + k / 2) * 3 + in, e = (o * 5 + k) * 3 + in;
        float a = x[e] < 0 ? -x[e] : x[e], b = x2[e] < 0 ? -x2[e] : x2[e];
        if (a > ref[gi]) ref[gi] = a;
        if (b > ref[gi]) ref[gi] = b;
    }
    for (g = 0; g < 18; g++) {
        float want = (ref[g] == 0.0f ? 1.0f : ref[g]) / 127.5f;   /* AQT: absmax 0 -> 1 */
        CHECK(fb(scales[g]) == fb(want), "group %u: %.9g want %.9g", (unsigned)g, scales[g], want);
    }
    QMX_TEST_CASE("a single-batch absmax/minmax observer equals qmx_compute_qparams");
    {
        qmx_qconfig qs[3];
        int r;
        for (r = 0; r < 3; r++) {
            float s1[18], s2[18];
            int32_t z1[18], z2[18];
            size_t np = 0;
            qs[r] = q;
            qs[r].recipe = (qmx_recipe)r;
            qs[r].asymmetric = r != 0;
            cc.method = r != 0 ? QMX_CALIB_MINMAX : QMX_CALIB_ABSMAX;
            CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &qs[r], 30, st, 18), QMX_OK, "init");
            CHECK_EQ_INT(qmx_observer_update(&obs, x, 30), QMX_OK, "update");
            CHECK_EQ_INT(qmx_observer_finalize(&obs, s1, 18, z1), QMX_OK, "finalize");
            CHECK_EQ_INT(qmx_compute_qparams(&qs[r], x, 30, s2, 18, z2), QMX_OK, "core");
            qmx_qparams_count(&qs[r], 30, &np);
            for (g = 0; g < np; g++)
                CHECK(fb(s1[g]) == fb(s2[g]) && z1[g] == z2[g], "recipe %d group %u", r, (unsigned)g);
        }
    }
}

static void test_zero_and_errors(void) {
    float z[8] = {0}, s = -1.0f, x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, sc[8];
    int32_t zp = 7, zps[8];
    qmx_calib_config cc = QMX_ZERO_INIT;
    qmx_qconfig q = QMX_ZERO_INIT;
    qmx_observer obs = QMX_ZERO_INIT;
    qmx_calib_stat st[8], snap[8];
    int m;
    memset(st, 0, sizeof st);   /* entries past the groups in use are compared below */
    QMX_TEST_CASE("all-zero data gives the recipe's guarded scale for every method");
    for (m = QMX_CALIB_ABSMAX; m <= QMX_CALIB_RMS; m++) {
        int r;
        for (r = 0; r < 3; r++) {
            float want = r == 0 ? 1.0f / 127.5f : 1.0f;
            cc.method = (qmx_calib_method)m;
            q.recipe = (qmx_recipe)r;
            q.asymmetric = 0;
            CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 1), QMX_OK, "init");
            CHECK_EQ_INT(qmx_observer_update(&obs, z, 8), QMX_OK, "update");
            CHECK(qmx_observer_finalize(&obs, &s, 1, NULL) == QMX_OK && s == want,
                  "method %d recipe %d: %g want %g", m, r, s, want);
        }
    }
    QMX_TEST_CASE("NaN/Inf batches are QMX_ERR_NONFINITE and leave the state untouched");
    cc.method = QMX_CALIB_MINMAX; q.recipe = QMX_RECIPE_QWIX; q.asymmetric = 1;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_OK, "init");
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_OK, "update");
    memcpy(snap, st, sizeof st);
    x[5] = qmx_test_bits_f32(0x7FC00000u);
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_ERR_NONFINITE, "NaN");
    x[5] = qmx_test_bits_f32(0xFF800000u);
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_ERR_NONFINITE, "-Inf");
    CHECK(memcmp(snap, st, sizeof st) == 0, "state changed");
    x[5] = 6.0f;
    QMX_TEST_CASE("observer argument errors");
    s = -1.0f;
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 7), QMX_ERR_SHAPE, "count differs");
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 0), QMX_ERR_SIZE, "count 0");
    CHECK_EQ_INT(qmx_observer_update(&obs, NULL, 8), QMX_ERR_NULL, "NULL x");
    CHECK_EQ_INT(qmx_observer_finalize(&obs, &s, 1, NULL), QMX_ERR_NULL, "asymmetric needs zps");
    CHECK_EQ_INT(qmx_observer_finalize(&obs, &s, 0, &zp), QMX_ERR_BUFFER_TOO_SMALL, "n_scales 0");
    CHECK(s == -1.0f && zp == 7, "outputs written on error");
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_OK, "re-init");
    CHECK_EQ_INT(qmx_observer_finalize(&obs, &s, 1, &zp), QMX_ERR_SIZE, "finalize before data");
    CHECK_EQ_INT(qmx_observer_init(NULL, &cc, &q, 8, st, 8), QMX_ERR_NULL, "NULL obs");
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 0, st, 8), QMX_ERR_SIZE, "count 0");
    q.granularity = QMX_PER_CHANNEL; q.outer = 1; q.axis_len = 4; q.inner = 2;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 3), QMX_ERR_BUFFER_TOO_SMALL, "stats");
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 9, st, 8), QMX_ERR_SHAPE, "view");
    q.granularity = QMX_PER_TENSOR; q.outer = q.axis_len = q.inner = 0;
    cc.clip = -1.0f;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "clip < 0");
    cc.clip = qmx_test_bits_f32(0x7F800000u);
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "clip Inf");
    cc.clip = 0.0f; cc.momentum = 1.5f;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "momentum");
    cc.momentum = 0.0f; cc.p = 5;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "p");
    cc.p = 0; cc.method = QMX_CALIB_FIXED; cc.lo = 1.0f; cc.hi = 2.0f;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "fixed lo > 0");
    cc.method = (qmx_calib_method)99;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "method");
    cc.method = QMX_CALIB_ABSMAX;
    q.dtype = QMX_FP8_E4M3FN;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_ARG, "asymmetric fp8");
    q.dtype = QMX_FLOAT32; q.asymmetric = 0;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_ERR_DTYPE, "float32");
    QMX_TEST_CASE("a bound that overflows float is QMX_ERR_NONFINITE, outputs untouched");
    q.dtype = QMX_INT8; cc.clip = 3e38f;
    x[0] = 100.0f;
    CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 8), QMX_OK, "init");
    CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_OK, "update");
    sc[0] = -1.0f; zps[0] = 3;
    CHECK_EQ_INT(qmx_observer_finalize(&obs, sc, 8, zps), QMX_ERR_NONFINITE, "overflow");
    CHECK(sc[0] == -1.0f && zps[0] == 3, "written on error");
}

/* Non-finite STATE (issue 14): finite batches whose statistics overflow float, and records or
 * structs holding NaN / Inf, are refused with a status; nothing returns QMX_OK with a made-up
 * scale, and a refused update leaves every record as it was. */
static void fill(float *x, size_t n, float v) { size_t i; for (i = 0; i < n; i++) x[i] = v; }
static void test_nonfinite_state(void) {
    float lo[8], hi[8], x[8], sc[4], h[3], so;
    int32_t zps[4];
    qmx_calib_config cc = QMX_ZERO_INIT;
    qmx_qconfig q = QMX_ZERO_INIT;
    qmx_observer obs = QMX_ZERO_INIT;
    qmx_calib_stat st[4], snap[4];
    qmx_fp8_delayed d;
    int m, g;
    fill(lo, 8, -3.3e38f); fill(hi, 8, 3.3e38f);
    memset(st, 0, sizeof st);

    QMX_TEST_CASE("moving min/max: an average that overflows (then Inf - Inf) is refused");
    for (g = 1; g <= 2; g++) {   /* one group, and two per-channel groups (the copy pass) */
        cc.method = QMX_CALIB_MOVING_MINMAX; cc.momentum = 1.0f;
        q.recipe = QMX_RECIPE_QWIX; q.asymmetric = 1;
        q.granularity = g == 1 ? QMX_PER_TENSOR : QMX_PER_CHANNEL;
        q.outer = g == 1 ? 0 : 1; q.axis_len = g == 1 ? 0 : 2; q.inner = g == 1 ? 0 : 4;
        CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 4), QMX_OK, "init");
        CHECK_EQ_INT(qmx_observer_update(&obs, lo, 8), QMX_OK, "first batch");
        memcpy(snap, st, sizeof st);
        /* with two groups the second one overflows only: the first must not be written */
        if (g == 2) fill(x, 4, -3.0e38f), fill(x + 4, 4, 3.3e38f);
        CHECK_EQ_INT(qmx_observer_update(&obs, g == 1 ? hi : x, 8), QMX_ERR_NONFINITE,
                     "groups %d: min + c * (3.3e38 - -3.3e38) overflows", g);
        CHECK(memcmp(snap, st, sizeof st) == 0, "groups %d: a record changed", g);
        sc[0] = sc[1] = -1.0f; zps[0] = zps[1] = 5;
        CHECK_EQ_INT(qmx_observer_finalize(&obs, sc, 4, zps), QMX_OK, "the kept state finalizes");
        CHECK(sc[0] > 1e36f && sc[0] < 1e37f, "groups %d: scale %g from [-3.3e38, 0]", g, sc[0]);
        CHECK_EQ_INT(qmx_observer_update(&obs, lo, 8), QMX_OK, "a finite update goes on");
    }
    q.granularity = QMX_PER_TENSOR; q.outer = q.axis_len = q.inner = 0;

    QMX_TEST_CASE("sums that overflow float (x^2, |x|^p, sum of absmax) are refused");
    for (m = QMX_CALIB_MEAN_ABSMAX; m <= QMX_CALIB_RMS; m++) {
        cc.method = (qmx_calib_method)m; cc.momentum = 0.0f; cc.p = 4;
        q.recipe = QMX_RECIPE_AQT; q.asymmetric = 0;
        fill(x, 8, m == QMX_CALIB_MEAN_ABSMAX ? 3e38f : 2e20f);
        CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 4), QMX_OK, "init");
        if (m == QMX_CALIB_MEAN_ABSMAX) CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_OK, "1st");
        memcpy(snap, st, sizeof st);
        CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_ERR_NONFINITE, "method %d", m);
        CHECK(memcmp(snap, st, sizeof st) == 0, "method %d: record changed", m);
    }
    cc.p = 0;

    QMX_TEST_CASE("a record holding NaN / Inf never finalizes to a scale");
    for (m = QMX_CALIB_ABSMAX; m <= QMX_CALIB_RMS; m++) {
        int f;
        for (f = 0; f < 4; f++) {
            float bad = f & 1 ? qmx_test_bits_f32(0x7FC00000u) : qmx_test_bits_f32(0xFF800000u);
            cc.method = (qmx_calib_method)m;
            q.asymmetric = m == QMX_CALIB_MINMAX || m == QMX_CALIB_MOVING_MINMAX;
            q.recipe = q.asymmetric ? QMX_RECIPE_QWIX : QMX_RECIPE_AQT;
            fill(x, 8, 1.0f);
            CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 8, st, 4), QMX_OK, "init");
            CHECK_EQ_INT(qmx_observer_update(&obs, x, 8), QMX_OK, "update");
            if (f < 2) st[0].min = bad; else st[0].max = bad;
            if (m >= QMX_CALIB_MEAN_ABSMAX && m <= QMX_CALIB_RMS) {
                if (f < 2) st[0].sum = bad; else st[0].comp = bad;
            }
            sc[0] = -1.0f; zps[0] = 5;
            CHECK_EQ_INT(qmx_observer_finalize(&obs, sc, 4, zps), QMX_ERR_NONFINITE,
                         "method %d field %d", m, f);
            CHECK(sc[0] == -1.0f && zps[0] == 5, "method %d: written on error", m);
            CHECK_EQ_INT(qmx_observer_bounds(&obs, 0, &sc[1], &sc[2]), QMX_ERR_NONFINITE, "bounds");
            /* an update may refuse, or replace the bad field (a -Inf max by the batch max),
             * but never keep a non-finite record with QMX_OK */
            if (qmx_observer_update(&obs, x, 8) == QMX_OK)
                CHECK(st[0].min == st[0].min && st[0].max - st[0].max == 0.0f &&
                      st[0].sum - st[0].sum == 0.0f && st[0].comp - st[0].comp == 0.0f,
                      "method %d field %d: update kept a non-finite record", m, f);
        }
    }

    QMX_TEST_CASE("fp8 delayed scaling: a scale float cannot hold is refused, the amax recorded");
    {
        struct { qmx_delayed_mode mode; int margin; float amax; } bad[4] = {
            {QMX_DELAYED_FLAX, 64, 3e38f},     /* 448 / 3e38 / 2^64 underflows: 1/sf = Inf */
            {QMX_DELAYED_FLAX, -64, 1e-30f},   /* 448 / 1e-30 * 2^64 overflows: scale 0 */
            {QMX_DELAYED_FLAX, 0, 1e-44f},     /* subnormal amax: sf = Inf, scale 0 */
            {QMX_DELAYED_AQT, 0, 1e-44f}};     /* bound 1e-44 / 448 underflows to 0 */
        int k;
        for (k = 0; k < 4; k++) {
            float s0;
            int st5;
            CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E4M3FN, bad[k].mode, bad[k].margin, h, 3),
                         QMX_OK, "init");
            CHECK_EQ_INT(qmx_fp8_delayed_step(&d, bad[k].amax, &so), QMX_OK, "case %d step 1", k);
            s0 = d.scale; so = -1.0f;
            /* later amaxes of 0 do not hide it: h = max(history) stays the bad amax while it
             * is among the 3 entries (steps 2..4), and the kept scale comes back at step 5 */
            for (st5 = 2; st5 <= 4; st5++) {
                CHECK_EQ_INT(qmx_fp8_delayed_step(&d, 0.0f, &so), QMX_ERR_NONFINITE,
                             "case %d step %d", k, st5);
                CHECK(so == -1.0f && d.scale == s0, "case %d: scale changed to %g", k, d.scale);
                if (st5 == 3) CHECK(h[2] == bad[k].amax, "case %d: amax not recorded", k);
            }
            CHECK_EQ_INT(qmx_fp8_delayed_step(&d, 0.0f, &so), QMX_OK, "case %d: left the history", k);
            CHECK(qmx_test_f32_bits(so) == qmx_test_f32_bits(s0), "case %d: scale %g", k, so);
        }
        for (k = 0; k < 3; k++) {   /* a struct no step can leave */
            CHECK_EQ_INT(qmx_fp8_delayed_init(&d, QMX_FP8_E5M2, k == 2 ? QMX_DELAYED_AQT
                                              : QMX_DELAYED_FLAX, 0, h, 3), QMX_OK, "init");
            if (k == 0) d.scale = qmx_test_bits_f32(0x7FC00000u);
            if (k == 1) d.scale = 0.0f;
            if (k == 2) d.bound = qmx_test_bits_f32(0x7F800000u);
            h[0] = 2.0f; so = -1.0f;
            CHECK_EQ_INT(qmx_fp8_delayed_step(&d, 1.0f, &so), QMX_ERR_NONFINITE, "state %d", k);
            CHECK(so == -1.0f && h[0] == 2.0f, "state %d: written", k);
        }
    }

    QMX_TEST_CASE("SNR search: a signal energy beyond float is refused, not guessed");
    {
        float xs[4] = {3e20f, -1e20f, 2e19f, 1.0f}, cand[3] = {0.5f, 0.9f, 1.0f}, f = -1.0f;
        q.recipe = QMX_RECIPE_AQT; q.asymmetric = 0; sc[0] = -1.0f;
        CHECK_EQ_INT(qmx_calib_snr_search(&q, xs, 4, cand, 3, sc, 1, &f), QMX_ERR_NONFINITE, "x^2");
        CHECK(sc[0] == -1.0f && f == -1.0f, "written on error");
    }

    QMX_TEST_CASE("|x| histogram: a struct holding NaN / Inf is refused");
    {
        uint64_t bins[8];
        qmx_histogram hh;
        float b = -1.0f;
        fill(x, 8, 1.5f);
        CHECK_EQ_INT(qmx_histogram_init(&hh, bins, 8), QMX_OK, "init");
        CHECK_EQ_INT(qmx_histogram_update(&hh, x, 8), QMX_OK, "update");
        hh.absmax = qmx_test_bits_f32(0x7FC00000u);
        CHECK_EQ_INT(qmx_histogram_percentile(&hh, 999000u, &b), QMX_ERR_NONFINITE, "percentile");
        CHECK_EQ_INT(qmx_histogram_kl_bound(&hh, 2, &b), QMX_ERR_NONFINITE, "kl");
        CHECK_EQ_INT(qmx_histogram_mse_bound(&hh, &q, &b), QMX_ERR_NONFINITE, "mse");
        CHECK_EQ_INT(qmx_histogram_update(&hh, x, 8), QMX_ERR_NONFINITE, "update");
        hh.absmax = 1.5f; hh.width = qmx_test_bits_f32(0x7F800000u);
        CHECK_EQ_INT(qmx_histogram_percentile(&hh, 999000u, &b), QMX_ERR_NONFINITE, "width Inf");
        CHECK(b == -1.0f, "written on error");
    }
}

static void test_sqrt(void) {
    uint32_t seed = 99u;
    int i, bad = 0;
    QMX_TEST_CASE("the internal square root is correctly rounded (exact midpoint test in double)");
    for (i = 0; i < (SMALL_TARGET ? 300 : 20000); i++) {
        float v, r;
        double dr, lo, hi;
        seed = seed * 1664525u + 1013904223u;
        v = qmx_test_bits_f32(seed % 0x7F800000u);
        r = qmx__cb_sqrt(v);
        /* r is correct iff (r - ulp/2)^2 <= v <= (r + ulp/2)^2 (ties cannot occur) */
        dr = (double)r;
        lo = (dr + (double)qmx_test_bits_f32(fb(r) - (fb(r) ? 1u : 0u))) * 0.5;
        hi = (dr + (double)qmx_test_bits_f32(fb(r) + 1u)) * 0.5;
        if (!(lo * lo <= (double)v && (double)v <= hi * hi)) bad++;
    }
    CHECK(bad == 0, "%d incorrectly rounded roots", bad);
    CHECK(qmx__cb_sqrt(6.25f) == 2.5f && qmx__cb_sqrt(0.0f) == 0.0f && qmx__cb_sqrt(1.0f) == 1.0f,
          "exact squares");
    CHECK(qmx__cb_root(8.0f, 3) == 2.0f && qmx__cb_root(81.0f, 4) == 3.0f, "exact cubes / 4th powers");
}

static void test_moving_spec(void) {
    float a[4] = {-1, 0, 1, 2}, b[4] = {-3, 0, 1, 6}, lo, hi;
    qmx_calib_config cc = QMX_ZERO_INIT;
    qmx_qconfig q = QMX_ZERO_INIT;
    qmx_observer obs = QMX_ZERO_INIT;
    qmx_calib_stat st[1];
    QMX_TEST_CASE("moving-average min/max: first batch sets, later batches move by momentum");
    cc.method = QMX_CALIB_MOVING_MINMAX; cc.momentum = 0.5f;
    q.recipe = QMX_RECIPE_QWIX; q.asymmetric = 1;
    qmx_observer_init(&obs, &cc, &q, 4, st, 1);
    qmx_observer_update(&obs, a, 4);
    CHECK(st[0].min == -1.0f && st[0].max == 2.0f, "first batch");
    qmx_observer_update(&obs, b, 4);
    CHECK(st[0].min == -2.0f && st[0].max == 4.0f, "-1 + 0.5*(-3 - -1) = -2, 2 + 0.5*(6-2) = 4");
    CHECK(qmx_observer_bounds(&obs, 0, &lo, &hi) == QMX_OK && lo == -2.0f && hi == 4.0f, "bounds");
    CHECK_EQ_INT(qmx_observer_bounds(&obs, 1, &lo, &hi), QMX_ERR_ARG, "group out of range");
}

/* ---- histogram, MSE and SNR searches -------------------------------------------------------- */
static double rne_d(double t) {   /* round half to even, for the references */
    double n = (double)(long long)t, fr = t - n;
    long long ni = (long long)t;
    if (fr > 0.5 || (fr == 0.5 && (ni & 1))) n += 1.0;
    else if (fr < -0.5 || (fr == -0.5 && (ni & 1))) n -= 1.0;
    return n;
}
static float hdata[4][512];
static uint64_t hbins[64], hbins_ref[64];

static void test_histogram(void) {
    qmx_histogram h;
    uint32_t seed = 777u;
    size_t b, i, nb = 64;
    double am = 0.0, w;
    float bound = -1.0f;
    QMX_TEST_CASE("histogram range growth merges bins exactly (= direct binning at the final width)");
    for (b = 0; b < 4; b++)
        for (i = 0; i < 512; i++) {
            float u;
            seed = seed * 1664525u + 1013904223u;
            u = ((float)(int32_t)(seed >> 8) - 8388608.0f) * (1.0f / 8388608.0f);
            hdata[b][i] = u * (float)(1u << (3 * b));      /* the range grows 8x per batch */
            if (i == 100 && b == 3) hdata[b][i] = 4000.0f;  /* an outlier */
        }
    CHECK_EQ_INT(qmx_histogram_init(&h, hbins, nb), QMX_OK, "init");
    for (b = 0; b < 4; b++) CHECK_EQ_INT(qmx_histogram_update(&h, hdata[b], 512), QMX_OK, "update");
    for (b = 0; b < 4; b++) for (i = 0; i < 512; i++) {
        double a = hdata[b][i] < 0 ? -(double)hdata[b][i] : (double)hdata[b][i];
        if (a > am) am = a;
    }
    for (w = 1.0 / 1024.0 / 1024.0; !((double)nb * w > am); w *= 2.0) {}
    CHECK(h.width == (float)w, "width %g want %g", h.width, w);
    memset(hbins_ref, 0, sizeof hbins_ref);
    for (b = 0; b < 4; b++) for (i = 0; i < 512; i++) {
        double a = hdata[b][i] < 0 ? -(double)hdata[b][i] : (double)hdata[b][i];
        size_t k = (size_t)(a / w);
        hbins_ref[k < nb ? k : nb - 1]++;
    }
    CHECK(memcmp(hbins, hbins_ref, sizeof hbins) == 0 && h.total == 2048, "bins differ");
    CHECK(h.absmax == 4000.0f, "absmax %g", h.absmax);
    QMX_TEST_CASE("percentile: upper edge of the first bin whose cumulative count reaches ppm");
    {
        uint64_t cum = 0;
        size_t k;
        for (k = 0; k < nb; k++) { cum += hbins_ref[k]; if (cum * 1000000u >= (uint64_t)990000u * 2048u) break; }
        CHECK(qmx_histogram_percentile(&h, 990000u, &bound) == QMX_OK &&
              (double)bound == (double)(k + 1) * w, "99%%: %g want %g", bound, (double)(k + 1) * w);
        CHECK(qmx_histogram_percentile(&h, 1000000u, &bound) == QMX_OK && bound == 4000.0f,
              "100%% is absmax: %g", bound);
        CHECK_EQ_INT(qmx_histogram_percentile(&h, 0, &bound), QMX_ERR_ARG, "ppm 0");
        CHECK_EQ_INT(qmx_histogram_percentile(&h, 1000001u, &bound), QMX_ERR_ARG, "ppm > 1e6");
    }
    QMX_TEST_CASE("MSE search picks the clip with the least (double-precision) bin error");
    {
        qmx_qconfig q = QMX_ZERO_INIT;   /* int4 AQT: s = c / 7.5, q = clip(RNE(x * (1/s)), +-7) */
        double best_e = -1.0, best_c = 0.0, second = -1.0;
        size_t k;
        q.dtype = QMX_INT4;
        CHECK_EQ_INT(qmx_histogram_mse_bound(&h, &q, &bound), QMX_OK, "mse");
        for (k = 0; k <= nb; k++) {
            float c = k < nb ? (float)((double)(k + 1) * w) : h.absmax, s, inv;
            double e = 0.0;
            size_t j;
            if (k < nb && !(c < h.absmax)) continue;
            s = c / 7.5f; inv = 1.0f / s;
            for (j = 0; j < nb; j++) {
                float xc = (float)(((double)j + 0.5) * w), t = xc * inv;
                double d;
                if (t > 7.0f) t = 7.0f;
                d = (double)xc - rne_d((double)t) * (double)s;
                e += (double)hbins_ref[j] * d * d;
            }
            if (best_e < 0 || e < best_e) { second = best_e; best_e = e; best_c = c; }
            else if (second < 0 || e < second) second = e;
        }
        CHECK((double)bound == best_c || (second - best_e) < 1e-5 * best_e,
              "mse bound %g want %g (err %g, next %g)", bound, best_c, best_e, second);
        CHECK(bound < 4000.0f, "int4: the outlier is clipped: %g", bound);
    }
    QMX_TEST_CASE("histogram errors and all-zero data");
    CHECK_EQ_INT(qmx_histogram_init(&h, hbins, 7), QMX_ERR_SIZE, "too few bins");
    CHECK_EQ_INT(qmx_histogram_init(&h, NULL, 64), QMX_ERR_NULL, "NULL bins");
    CHECK_EQ_INT(qmx_histogram_init(&h, hbins, 64), QMX_OK, "init");
    CHECK_EQ_INT(qmx_histogram_percentile(&h, 5, &bound), QMX_ERR_SIZE, "empty");
    {
        float z[5] = {0, 0, 0, 0, 0}, bad[2] = {1.0f, 0.0f};
        qmx_qconfig q = QMX_ZERO_INIT;
        bad[1] = qmx_test_bits_f32(0x7FC00000u);
        CHECK_EQ_INT(qmx_histogram_update(&h, bad, 2), QMX_ERR_NONFINITE, "NaN");
        CHECK(h.total == 0 && hbins[0] == 0, "state changed on error");
        CHECK_EQ_INT(qmx_histogram_update(&h, z, 5), QMX_OK, "zeros");
        CHECK(h.width == 0.0f && hbins[0] == 5, "zeros counted in bin 0 with no range");
        CHECK(qmx_histogram_percentile(&h, 500000u, &bound) == QMX_OK && bound == 0.0f, "zero bound");
        CHECK(qmx_histogram_mse_bound(&h, &q, &bound) == QMX_OK && bound == 0.0f, "zero mse bound");
        z[2] = 3.0f;
        CHECK_EQ_INT(qmx_histogram_update(&h, z, 5), QMX_OK, "then data");
        CHECK(hbins[0] == 9 && h.width == 0.0625f, "bin 0 keeps the zeros, w = 2^-4 (64*w > 3)");
        q.asymmetric = 1; q.recipe = QMX_RECIPE_QWIX;
        CHECK_EQ_INT(qmx_histogram_mse_bound(&h, &q, &bound), QMX_ERR_ARG, "asymmetric");
    }
}

static void test_snr(void) {
    /* per channel [2][512], int4 AQT */
    float x[1024], s[2], f[2];
    static const float cand[] = {0.3f, 0.5f, 0.7f, 0.9f, 1.0f};
    qmx_qconfig q = QMX_ZERO_INIT;
    uint32_t seed = 4242u;
    size_t i, c, g;
    QMX_TEST_CASE("SNR clip search (AQT) keeps the factor with the smallest error, scale from it");
    for (i = 0; i < 1024; i++) {   /* channel 0 uniform, channel 1 ~Gaussian (sum of 4 uniforms) */
        float u = 0.0f;
        int r;
        for (r = 0; r < (i < 512 ? 1 : 4); r++) {
            seed = seed * 1664525u + 1013904223u;
            u = u + ((float)(int32_t)(seed >> 8) - 8388608.0f) * (1.0f / 8388608.0f);
        }
        x[i] = u;
    }
    q.dtype = QMX_INT4; q.granularity = QMX_PER_CHANNEL; q.outer = 1; q.axis_len = 2; q.inner = 512;
    CHECK_EQ_INT(qmx_calib_snr_search(&q, x, 1024, cand, 5, s, 2, f), QMX_OK, "search");
    for (g = 0; g < 2; g++) {
        float am = 0.0f, best_f = 1.0f;
        double best = -1.0, x2 = 0.0;
        for (i = g * 512; i < g * 512 + 512; i++) {
            float a = x[i] < 0 ? -x[i] : x[i];
            if (a > am) am = a;
            x2 += (double)x[i] * x[i];
        }
        for (c = 0; c < 5; c++) {   /* int4 AQT: s = b / 7.5, q = clip(RNE(x * (1/s)), +-7) */
            float b = am * cand[c], sc = b / 7.5f, inv = 1.0f / sc;
            double err = 0.0, snr;
            for (i = g * 512; i < g * 512 + 512; i++) {
                float t = x[i] * inv;
                double qv;
                if (t > 7.0f) t = 7.0f;
                if (t < -7.0f) t = -7.0f;
                qv = rne_d((double)t);
                err += ((double)x[i] - qv * sc) * ((double)x[i] - qv * sc);
            }
            snr = x2 / err;               /* log(1 + r) is increasing in r */
            if (snr > best) { best = snr; best_f = cand[c]; }
        }
        CHECK(f[g] == best_f, "group %u factor %g want %g", (unsigned)g, f[g], best_f);
        {
            float b = am * best_f, want = b / 7.5f;
            CHECK(fb(s[g]) == fb(want), "group %u scale %g want %g", (unsigned)g, s[g], want);
        }
    }
    CHECK(f[0] < 1.0f || f[1] < 1.0f, "a discriminating case: factors %g %g", f[0], f[1]);
    {
        float bad = -1.0f;
        CHECK_EQ_INT(qmx_calib_snr_search(&q, x, 1024, &bad, 1, s, 2, f), QMX_ERR_ARG, "negative factor");
        CHECK_EQ_INT(qmx_calib_snr_search(&q, x, 1024, cand, 5, s, 1, f), QMX_ERR_BUFFER_TOO_SMALL, "n_scales");
        CHECK_EQ_INT(qmx_calib_snr_search(&q, x, 1023, cand, 5, s, 2, f), QMX_ERR_SHAPE, "count");
        x[3] = qmx_test_bits_f32(0x7F800000u);
        CHECK_EQ_INT(qmx_calib_snr_search(&q, x, 1024, cand, 5, s, 2, f), QMX_ERR_NONFINITE, "Inf");
    }
}

static uint64_t kbins[512];
static void test_kl(void) {
    qmx_histogram h;
    size_t i, j, g, best_i = 0, qb = 128, nb = 512;
    double best = 0.0, second = -1.0;
    float bound = -1.0f;
    uint32_t sd = 5u;
    int bad = 0;
    QMX_TEST_CASE("qmx's float log is within 2^-22 (1 + |ln v|) of libm's");
    for (i = 0; i < (SMALL_TARGET ? 2000u : 100000u); i++) {
        float v, l;
        double r;
        sd = sd * 1664525u + 1013904223u;
        v = qmx_test_bits_f32(1u + sd % 0x7F7FFFFFu);
        l = qmx__cb_logf(v);
        r = log((double)v);
        if (fabs((double)l - r) > (1.0 + fabs(r)) * (1.0 / 4194304.0)) bad++;
    }
    CHECK(bad == 0, "%d logs out of bound", bad);
    QMX_TEST_CASE("KL (entropy) clip search picks the candidate a double-precision reference picks");
    for (j = 0; j < nb; j++) {
        double x = (double)j / 70.0;
        kbins[j] = (uint64_t)(200000.0 * exp(-x * x) + 0.5);
    }
    kbins[400] = 3; kbins[450] = 0; kbins[511] = 2;
    h.bins = kbins; h.n_bins = nb; h.width = 0.5f; h.absmax = 255.9f; h.total = 0;
    for (j = 0; j < nb; j++) h.total += kbins[j];
    CHECK_EQ_INT(qmx_histogram_kl_bound(&h, 128, &bound), QMX_OK, "kl");
    for (i = qb; i <= nb; i++) {   /* the documented algorithm, in double with libm */
        double P = 0, Qs = 0, kl = 0, outl = 0;
        int valid = 1;
        for (j = i; j < nb; j++) outl += (double)kbins[j];
        for (j = 0; j < i; j++) P += (double)kbins[j];
        P += outl;
        for (g = 0; g < qb; g++) {
            size_t lo = g * i / qb, hi = (g + 1) * i / qb, nz = 0;
            double gs = 0;
            for (j = lo; j < hi; j++) { gs += (double)kbins[j]; nz += kbins[j] != 0; }
            if (nz) Qs += gs;
        }
        for (g = 0; g < qb && valid; g++) {
            size_t lo = g * i / qb, hi = (g + 1) * i / qb, nz = 0;
            double gs = 0, q;
            for (j = lo; j < hi; j++) { gs += (double)kbins[j]; nz += kbins[j] != 0; }
            q = nz ? gs / (double)nz / Qs : 0.0;
            for (j = lo; j < hi; j++) {
                double pc = (double)kbins[j] + (j == i - 1 ? outl : 0.0), p;
                if (pc == 0) continue;
                if (kbins[j] == 0) { valid = 0; break; }
                p = pc / P;
                kl += p * log(p / q);
            }
        }
        if (!valid) continue;
        if (best_i == 0 || kl < best) { second = best_i ? best : -1.0; best = kl; best_i = i; }
        else if (second < 0 || kl < second) second = kl;
    }
    CHECK(bound == (float)best_i * 0.5f || (second - best) < 1e-5 * (best > 1e-3 ? best : 1e-3),
          "kl bound %g want %g (kl %g, next %g)", bound, (double)best_i * 0.5, best, second);
    CHECK(bound < 255.9f, "the sparse tail is clipped: %g", bound);
    CHECK_EQ_INT(qmx_histogram_kl_bound(&h, 1, &bound), QMX_ERR_ARG, "1 quant bin");
    CHECK_EQ_INT(qmx_histogram_kl_bound(&h, 1024, &bound), QMX_ERR_SIZE, "more quant bins than bins");
}

/* ---- PyTorch HistogramObserver (qmx_torch_histogram_*) ------------------------------------- */
/* Against tests/data/calib_torch_hist.txt (torch 1.13, tests/gen/gen_calib_hist.py; 82 batch
 * sequences x 5 qparams configurations; the 44 named np* have bin counts that are not powers of
 * two: 3, 15, 77, 95, 100, 207, 300, 1000, 1023, 1536, 1951, 2047, with upsample rates 1, 16,
 * 32, 128 and 256, mostly on value grids that meet histc's bin edges; the 4 named neg* (6 to 8
 * batches of 10^5 values, repeated range growths) reach negative bins, as torch does, and then
 * run more updates and the qparams over them: every update must be QMX_OK, and neg_cases
 * counts the cases where one ran over negative bins). Tolerance: none.
 * min_val / max_val after every batch and the whole histogram (FNV-1a of its float32 bit
 * patterns) bit for bit, new_min /
 * new_max and scale bit for bit, zero point exactly; only a zero min/max may differ in sign.
 * Why exact is expected: qmx repeats torch's float32 tensor steps one rounded operation at a
 * time and its float64 steps (cumsum, Python floats) in exact soft double. The one step it does
 * not copy is torch.sum's vectorised float32 order (the total and each candidate's norm in the
 * search); a different last bit there can only matter when two candidate norms tie within a
 * few ulp, which moves the chosen range by one bin (>= 1/2048 of it), and this check would then
 * fail rather than hide it. None of this data, nor 299 further random sequences (1495 qparams)
 * run while writing the observer, has such a tie. */
static float th_batch[8][1024];
/* Large batches are not stored in the data file but generated, the same in the generator:
 * xorshift32; value i = (a + b) * 2^-shift with a, b = (next >> 8) - 2^23 (exact in float32),
 * times 8 when i % 997 == 0. 10^5 values make totals where cSum values and the Python-float
 * quantile thresholds meet at float32 rounding distance (torch compares them in float32). */
#define TH_BIG 100000
static float th_big[TH_BIG];
static void th_lcg(uint32_t s, unsigned n, unsigned shift) {
    float scale = 1.0f;
    unsigned i, k;
    for (k = 0; k < shift; k++) scale = scale * 0.5f;
    for (i = 0; i < n; i++) {
        int32_t v = 0;
        for (k = 0; k < 2; k++) {
            s ^= s << 13; s ^= s >> 17; s ^= s << 5;
            v += (int32_t)(s >> 8) - (1 << 23);
        }
        if (i % 997 == 0) v *= 8;
        th_big[i] = (float)v * scale;
    }
}
static float th_buf[2 * 2048];

/* bit for bit, except that a zero min/max may have either sign (qmx stores +0; torch's aminmax
 * returns whichever zero its vectorised reduction meets; no result depends on it) */
static int th_same(float got, float want) {
    return fb(got) == fb(want) || (got == 0.0f && want == 0.0f);
}
/* FNV-1a 64 over the little-endian bytes of the float32 bit patterns, as the generator */
static unsigned long long th_fnv(const float *v, size_t n) {
    unsigned long long h = 0xCBF29CE484222325ull;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        uint32_t u = fb(v[i]);
        for (k = 0; k < 4; k++) { h ^= (u >> (8 * k)) & 0xFFu; h *= 0x100000001B3ull; }
    }
    return h;
}

static void test_torch_hist(void) {
    FILE *f = qmx_test_open("calib_torch_hist.txt");
    static char line[40000];
    int cases = 0, qps = 0, hists = 0, neg_cases = 0;
    QMX_TEST_CASE("torch 1.13 HistogramObserver: min/max bit-exact, search range, scale, zp");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char name[64];
        unsigned bins, ups, nb, b;
        size_t cnt[8];
        qmx_torch_histogram h;
        int from_neg = 0;   /* an update (or the qparams) ran over negative bins */
        if (sscanf(line, "case %63s %u %u %u", name, &bins, &ups, &nb) != 4) continue;
        CHECK(bins <= 2048 && nb <= 8, "case %s too large", name);
        if (bins > 2048 || nb > 8) break;
        CHECK_EQ_INT(qmx_torch_histogram_init(&h, th_buf, 2 * 2048, bins, ups), QMX_OK, "%s init", name);
        for (b = 0; b < nb; b++) {
            char *p;
            unsigned n, i;
            char h1[16], h2[16], hs[24];
            unsigned seed, shift;
            const float *xb = th_batch[b];
            if (!qmx_test_next_line(f, line, sizeof line)) break;
            if (sscanf(line, "lcg %u %u %u", &seed, &n, &shift) == 3 && n <= TH_BIG) {
                th_lcg(seed, n, shift);
                xb = th_big;
            } else if (sscanf(line, "x %u", &n) == 1 && n <= 1024) {
                p = strchr(line + 2, ' ');
                for (i = 0; i < n && p; i++) th_batch[b][i] = qmx_test_bits_f32((uint32_t)strtoul(p, &p, 16));
            } else {
                break;
            }
            cnt[b] = n;
            for (i = 0; i < bins && !from_neg; i++) from_neg = h.bins[i] < 0.0f;
            CHECK_EQ_INT(qmx_torch_histogram_update(&h, xb, cnt[b]), QMX_OK, "%s update %u", name, b);
            if (!qmx_test_next_line(f, line, sizeof line) || sscanf(line, "mm %15s %15s", h1, h2) != 2) break;
            CHECK(th_same(h.min_val, hexf(h1)) && th_same(h.max_val, hexf(h2)),
                  "%s batch %u min/max %.9g %.9g want %.9g %.9g", name, b, h.min_val, h.max_val,
                  hexf(h1), hexf(h2));
            if (!qmx_test_next_line(f, line, sizeof line) || sscanf(line, "hist %16s", hs) != 1) break;
            CHECK(th_fnv(h.bins, h.n_bins) == strtoull(hs, NULL, 16),
                  "%s batch %u: histogram differs from torch's", name, b);
            hists++;
        }
        while (qmx_test_next_line(f, line, sizeof line) && strncmp(line, "end", 3) != 0) {
            char dt[16], qs[16], hs[16], hmin[16], hmax[16];
            int rr, qmin, qmax;
            long zp;
            float s = -1.0f, nmin = 0.0f, nmax = 0.0f;
            int32_t z = -999;
            if (sscanf(line, "qp %15s %15s %d %d %d %15s %ld %15s %15s", dt, qs, &rr, &qmin, &qmax,
                       hs, &zp, hmin, hmax) != 9) continue;
            CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, strcmp(dt, "uint8") == 0 ? QMX_UINT8 : QMX_INT8,
                                                     strcmp(qs, "symmetric") == 0, rr, qmin, qmax,
                                                     &s, &z, &nmin, &nmax), QMX_OK, "%s qparams", name);
            CHECK(th_same(nmin, hexf(hmin)) && th_same(nmax, hexf(hmax)),
                  "%s %s %s: search range [%.9g, %.9g] want [%.9g, %.9g]", name, dt, qs, nmin, nmax,
                  hexf(hmin), hexf(hmax));
            CHECK(fb(s) == fb(hexf(hs)), "%s %s %s rr %d q [%d,%d]: scale %.9g want %.9g",
                  name, dt, qs, rr, qmin, qmax, s, hexf(hs));
            CHECK_EQ_INT(z, zp, "%s %s %s rr %d q [%d,%d] zero point", name, dt, qs, rr, qmin, qmax);
            qps++;
        }
        neg_cases += from_neg;
        cases++;
    }
    fclose(f);
    CHECK(cases >= 82 && qps >= 410 && hists >= 211, "only %d cases, %d qparams, %d histograms",
          cases, qps, hists);
    CHECK(neg_cases >= 4, "only %d cases reach negative bins", neg_cases);
}

/* The soft double against the hardware's IEEE double (references where double arithmetic is
 * correctly rounded: not under x87 excess precision, where the check is skipped). */
static qmx__cb_dbl th_d(uint64_t u) {   /* a normal double's bits -> soft double */
    qmx__cb_dbl r;
    r.neg = (int)(u >> 63);
    r.e = (int)((u >> 52) & 0x7FF) - 1075;
    r.m = (u & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    return r;
}
static uint64_t th_u(qmx__cb_dbl a) {   /* soft -> bits (normal range) */
    if (a.m == 0) return 0;
    return ((uint64_t)a.neg << 63) | ((uint64_t)(a.e + 1075) << 52) | (a.m & 0xFFFFFFFFFFFFFull);
}
static void test_soft_double(void) {
    uint64_t st = 0x9E3779B97F4A7C15ull;
    int i, bad_add = 0, bad_mul = 0, bad_div = 0, bad_f = 0, bad_lt = 0;
    QMX_TEST_CASE("soft double (+, *, /, <, to float) rounds as IEEE double");
#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD < 0 || FLT_EVAL_METHOD > 1)
    printf("soft double check skipped: FLT_EVAL_METHOD %d\n", (int)FLT_EVAL_METHOD);
    return;
#endif
    for (i = 0; i < 20000; i++) {
        uint64_t ua, ub, r;
        double da, db, dr;
        float fr;
        st ^= st << 13; st ^= st >> 7; st ^= st << 17; ua = st;
        st ^= st << 13; st ^= st >> 7; st ^= st << 17; ub = st;
        /* exponents within +-60 of 1 (and a few far apart), so results stay normal */
        ua = (ua & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 - 60 + (int)((ua >> 52) % 121)) << 52);
        ub = (ub & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 - 60 + (int)((ub >> 52) % 121)) << 52);
        if (i % 7 == 0) ub = (ub & 0x800FFFFFFFFFFFFFull) | (ua & 0x7FF0000000000000ull);  /* cancellation */
        if (i % 11 == 0) ub &= 0xFFFFFFFFE0000000ull;                                    /* float-like */
        memcpy(&da, &ua, 8); memcpy(&db, &ub, 8);
        dr = da + db; memcpy(&r, &dr, 8); bad_add += th_u(qmx__cb_dadd(th_d(ua), th_d(ub))) != r;
        dr = da * db; memcpy(&r, &dr, 8); bad_mul += th_u(qmx__cb_dmul(th_d(ua), th_d(ub))) != r;
        dr = da / db; memcpy(&r, &dr, 8); bad_div += th_u(qmx__cb_ddiv(th_d(ua), th_d(ub))) != r;
        bad_lt += qmx__cb_dlt(th_d(ua), th_d(ub)) != (da < db);
        /* to float: scale into float's normal and subnormal ranges */
        {
            uint64_t uc = (ua & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 - 155 + (int)(i % 290)) << 52);
            double dc;
            if (i % 3 == 0) uc = (uc & ~0x1FFFFFFFull) | 0x10000000ull;   /* a tie for normals */
            memcpy(&dc, &uc, 8);
            fr = (float)dc;
            bad_f += fb(qmx__cb_dtof(th_d(uc))) != fb(fr);
        }
    }
    CHECK(bad_add == 0 && bad_mul == 0 && bad_div == 0 && bad_lt == 0 && bad_f == 0,
          "mismatches: add %d mul %d div %d lt %d to-float %d", bad_add, bad_mul, bad_div, bad_lt,
          bad_f);
}

static void test_torch_hist_errors(void) {
    static float buf[2 * 64], save[2 * 64];
    qmx_torch_histogram h, hs;
    float x[8] = {0.5f, -1.25f, 3.0f, 0.0f, 2.0f, -0.75f, 1.5f, 2.5f}, s = 7.0f, a = 7.0f, b = 7.0f;
    int32_t z = 77;
    size_t i;
    QMX_TEST_CASE("torch histogram: argument errors leave everything untouched");
    CHECK_EQ_INT(qmx_torch_histogram_buffer_size(2048), 4096, "buffer size");
    CHECK_EQ_INT(qmx_torch_histogram_buffer_size(1), 0, "1 bin");
    CHECK_EQ_INT(qmx_torch_histogram_init(NULL, buf, 128, 64, 128), QMX_ERR_NULL, "NULL h");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, NULL, 128, 64, 128), QMX_ERR_NULL, "NULL buf");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 0, 128), QMX_ERR_SIZE, "0 bins");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 1, 128), QMX_ERR_SIZE, "1 bin");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, ((size_t)1 << 20) + 1, 1), QMX_ERR_SIZE, "2^20 + 1 bins");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 0), QMX_ERR_ARG, "upsample 0");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 100), QMX_ERR_ARG, "upsample not 2^k");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 131072), QMX_ERR_ARG, "upsample 2^17");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, (size_t)1 << 20, 32), QMX_ERR_ARG, "bins * upsample > 2^24");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 127, 64, 128), QMX_ERR_BUFFER_TOO_SMALL, "buffer");
    CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 128), QMX_OK, "init");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_SIZE,
                 "qparams before data (torch: warning and (1.0, 0))");
    CHECK(s == 7.0f && z == 77 && a == 7.0f && b == 7.0f, "outputs untouched");
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, NULL, 8), QMX_ERR_NULL, "NULL x");
    CHECK_EQ_INT(qmx_torch_histogram_update(NULL, x, 8), QMX_ERR_NULL, "NULL h");
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 0), QMX_ERR_SIZE, "n 0");
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 8), QMX_OK, "update");
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 4), QMX_OK, "update 2 (inside the range)");
    memcpy(save, buf, sizeof buf);
    hs = h;
    x[5] = qmx_test_bits_f32(0x7FC00000u);
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 8), QMX_ERR_NONFINITE, "NaN (torch: poisons min/max)");
    x[5] = qmx_test_bits_f32(0xFF800000u);
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 8), QMX_ERR_NONFINITE, "-Inf");
    x[5] = -0.75f;
    CHECK(memcmp(save, buf, sizeof buf) == 0 && memcmp(&hs, &h, sizeof h) == 0, "state untouched");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_INT4, 0, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_DTYPE, "int4");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_FP8_E4M3FN, 1, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_DTYPE, "fp8");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 2, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_ARG, "qscheme 2");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 1, 15, &s, &z, &a, &b), QMX_ERR_ARG, "range without 0");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_INT8, 0, 0, -200, 100, &s, &z, &a, &b), QMX_ERR_ARG, "range > 256");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, NULL, &z, &a, &b), QMX_ERR_NULL, "NULL scale");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, NULL, &a, &b), QMX_ERR_NULL, "NULL zp");
    CHECK(s == 7.0f && z == 77 && a == 7.0f && b == 7.0f, "outputs untouched");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, NULL, NULL), QMX_OK, "NULL range ok");
    CHECK(memcmp(save, buf, 64 * sizeof(float)) == 0, "qparams leaves the histogram alone");
    hs = h;
    h.max_val = -5.0f;
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 8), QMX_ERR_ARG, "corrupted range (update)");
    CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_ARG,
                 "corrupted range (qparams)");
    h = hs;
    h.upsample_rate = 3;
    CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 8), QMX_ERR_ARG, "corrupted upsample rate");
    h = hs;
    QMX_TEST_CASE("torch histogram: a range growth torch could not allocate is QMX_ERR_SIZE");
    {
        float t[2] = {0.0f, 1e-30f}, big[2] = {-1e30f, 1e30f};
        CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 128), QMX_OK, "init");
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, t, 2), QMX_OK, "tiny range");
        memcpy(save, buf, sizeof buf);
        hs = h;
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, big, 2), QMX_ERR_SIZE, "growth 1e60");
        big[0] = -3e38f; big[1] = 3e38f;
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, big, 2), QMX_ERR_NONFINITE, "range beyond FLT_MAX");
        CHECK(memcmp(save, buf, sizeof buf) == 0 && memcmp(&hs, &h, sizeof h) == 0, "state untouched");
    }
    QMX_TEST_CASE("torch histogram: all-zero data gives torch's eps scale; constant data restarts");
    {
        float zs[5] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, c3[3] = {3.0f, 3.0f, 3.0f};
        CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 128), QMX_OK, "init");
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, zs, 5), QMX_OK, "zeros");
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, zs, 5), QMX_OK, "zeros again");
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_OK, "qp");
        CHECK(fb(s) == 0x34000000u && z == 0 && a == 0.0f && b == 0.0f, "u8 affine: %g %d [%g, %g]", s, (int)z, a, b);
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 1, 0, 0, 0, &s, &z, &a, &b), QMX_OK, "qp sym");
        CHECK(fb(s) == 0x34000000u && z == 128, "u8 symmetric: %g %d", s, (int)z);
        /* min_val == max_val: torch restarts from this batch; histc over [2, 4] (widened by 1) */
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, c3, 3), QMX_OK, "constant 3");
        CHECK(h.min_val == 3.0f && h.max_val == 3.0f && h.bins[32] == 3.0f, "restart from the batch");
        for (i = 0, s = 0.0f; i < 64; i++) s += h.bins[i];
        CHECK(s == 3.0f, "the zero batches are dropped, as in torch: %g", s);
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_INT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_OK, "qp");
        CHECK(a == 3.0f && b == 3.0f && s == fdiv(3.0f, 255.0f) && z == -128, "i8 affine %g %d", s, (int)z);
    }
}

/* torch.histc alone against tests/data/calib_torch_histc.txt (torch 1.13 CPU, AVX2 kernels, one
 * thread; tests/gen/gen_calib_hist.py): 480 calls, bin counts 1..4096 (most not powers of two,
 * many with bins + 1 a multiple of 16, where linspace's last edge, histc's upper end, can be 1
 * ulp off max), values on, 1 and 2 ulp next to the bin edges, the ends and just outside them,
 * integer, float, tiny (1e-30) and huge (1e30) ranges, min == max (the data's own range, a
 * constant batch widened by 1). Tolerance: none: every count and the FNV-1a of all of them. */
static float thc_x[256], thc_got[4096], thc_want[4096];
static void test_torch_histc(void) {
    FILE *f = qmx_test_open("calib_torch_histc.txt");
    static char line[8192];
    int cases = 0, bad = 0;
    QMX_TEST_CASE("torch 1.13 torch.histc (qmx__cb_histc): every count bit-exact");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        unsigned nb, n, i, nz, bin, cnt;
        char slo[16], shi[16], sf[24];
        float lo, hi, mn, mx;
        char *p;
        int ok = 1;
        if (sscanf(line, "hc %u %15s %15s %u", &nb, slo, shi, &n) != 4) continue;
        CHECK(nb >= 1 && nb <= 4096 && n >= 1 && n <= 256, "histc case %d too large", cases);
        if (nb < 1 || nb > 4096 || n < 1 || n > 256) break;
        lo = hexf(slo); hi = hexf(shi);
        if (!qmx_test_next_line(f, line, sizeof line) || line[0] != 'x') break;
        p = line + 1;
        for (i = 0; i < n; i++) thc_x[i] = qmx_test_bits_f32((uint32_t)strtoul(p, &p, 16));
        if (!qmx_test_next_line(f, line, sizeof line) || sscanf(line, "c %23s %u", sf, &nz) != 2) break;
        p = strchr(line + 2, ' ');
        p = p ? strchr(p + 1, ' ') : NULL;
        for (i = 0; i < nb; i++) { thc_want[i] = 0.0f; thc_got[i] = 0.0f; }
        for (i = 0; i < nz && p; i++) {
            bin = (unsigned)strtoul(p, &p, 10);
            cnt = (unsigned)strtoul(p + 1, &p, 10);   /* skips the ':' */
            if (bin < nb) thc_want[bin] = (float)cnt;
        }
        CHECK(th_fnv(thc_want, nb) == strtoull(sf, NULL, 16), "histc case %d: data line garbled", cases);
        mn = mx = thc_x[0];                              /* torch's aminmax, for min == max */
        for (i = 1; i < n; i++) { mn = thc_x[i] < mn ? thc_x[i] : mn; mx = thc_x[i] > mx ? thc_x[i] : mx; }
        qmx__cb_histc(thc_x, n, nb, lo, hi, mn, mx, thc_got);
        for (i = 0; i < nb && ok; i++)
            if (thc_got[i] != thc_want[i]) {
                ok = 0;
                CHECK(0, "histc case %d (bins %u, [%.9g, %.9g]): bin %u has %g, torch %g", cases, nb,
                      lo, hi, i, thc_got[i], thc_want[i]);
            }
        bad += !ok;
        cases++;
    }
    fclose(f);
    CHECK(cases >= 480, "only %d histc cases", cases);
    if (bad) printf("torch histc: %d of %d cases differ\n", bad, cases);
}

/* Non-finite state: a first batch whose range is beyond FLT_MAX (max - min = +Inf), a growth
 * whose relaxed range is, and caller-corrupted structs (NaN / Inf min, max or count; min > max
 * is QMX_ERR_ARG, in test_torch_hist_errors). Each is a status, never QMX_OK with a made-up
 * scale (Inf bin width, NaN from Inf * 0, the eps clamp turning a NaN scale into eps), and
 * nothing is written. A negative finite count is not corrupted (torch reaches it): QMX_OK. */
static void test_torch_hist_nonfinite(void) {
    static float buf[2 * 64], save[2 * 64];
    qmx_torch_histogram h, hs;
    float s = 7.0f, a = 7.0f, b = 7.0f;
    int32_t z = 77;
    int k;
    QMX_TEST_CASE("torch histogram: NaN / Inf state is QMX_ERR_NONFINITE, nothing written");
    {   /* first batch spanning -3.3e38 .. 3.3e38 */
        float wide[3] = {-3.3e38f, 0.0f, 3.3e38f};
        CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 128), QMX_OK, "init");
        memcpy(save, buf, sizeof buf);
        hs = h;
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, wide, 3), QMX_ERR_NONFINITE, "first batch max - min = Inf");
        CHECK(memcmp(save, buf, sizeof buf) == 0 && memcmp(&hs, &h, sizeof h) == 0, "state untouched");
        /* the state such a batch would leave (what qmx before the check stored) */
        h.min_val = -3.3e38f; h.max_val = 3.3e38f; h.seen = 1; buf[32] = 3.0f;
        for (k = 0; k < 8; k++) {
            qmx_dtype dt = (k & 1) ? QMX_INT8 : QMX_UINT8;
            CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, dt, (k >> 1) & 1, k >> 2, 0, 0, &s, &z, &a, &b),
                         QMX_ERR_NONFINITE, "qparams over an Inf range (config %d)", k);
        }
        CHECK(s == 7.0f && z == 77 && a == 7.0f && b == 7.0f, "outputs untouched: %g %d %g %g", s, (int)z, a, b);
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, wide + 1, 1), QMX_ERR_NONFINITE, "update over an Inf range");
    }
    {   /* a growth to a range of 3.4e38 (finite) whose relaxed range, D whole widths of
         * 1.75e38 / 128, passes FLT_MAX */
        float x1[2] = {-1e38f, 0.75e38f}, x2[2] = {0.0f, 2.4e38f};
        CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 128), QMX_OK, "init");
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, x1, 2), QMX_OK, "range 1.75e38");
        memcpy(save, buf, sizeof buf);
        hs = h;
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, x2, 2), QMX_ERR_NONFINITE, "relaxed range beyond FLT_MAX");
        CHECK(memcmp(save, buf, sizeof buf) == 0 && memcmp(&hs, &h, sizeof h) == 0, "state untouched");
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_OK,
                     "the kept state still gives qparams");
        CHECK(qmx__isfinite(s) && s > 0.0f, "finite scale %g", s);
    }
    {   /* caller-corrupted structs */
        float x[4] = {0.5f, -1.25f, 3.0f, 2.0f};
        static const uint32_t bad_bits[3] = {0x7FC00000u, 0x7F800000u, 0xFF800000u};
        CHECK_EQ_INT(qmx_torch_histogram_init(&h, buf, 128, 64, 128), QMX_OK, "init");
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 4), QMX_OK, "update");
        hs = h;
        memcpy(save, buf, sizeof buf);
        s = 7.0f; z = 77; a = 7.0f; b = 7.0f;
        for (k = 0; k < 3; k++) {
            float v = qmx_test_bits_f32(bad_bits[k]);
            h = hs; h.min_val = v;
            CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_NONFINITE,
                         "min_val %08x (qparams)", (unsigned)bad_bits[k]);
            CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 4), QMX_ERR_NONFINITE, "min_val %08x (update)",
                         (unsigned)bad_bits[k]);
            h = hs; h.max_val = v;
            CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_INT8, 1, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_NONFINITE,
                         "max_val %08x (qparams)", (unsigned)bad_bits[k]);
            CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 4), QMX_ERR_NONFINITE, "max_val %08x (update)",
                         (unsigned)bad_bits[k]);
            h = hs; buf[17] = v;
            CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_NONFINITE,
                         "count %08x (qparams)", (unsigned)bad_bits[k]);
            CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 4), QMX_ERR_NONFINITE, "count %08x (update)",
                         (unsigned)bad_bits[k]);
            memcpy(buf, save, sizeof buf);
        }
        /* a negative finite count is a state torch reaches (its combine's float32 cumsum; the
         * neg* cases of test_torch_hist): accepted, not a corrupted struct */
        h = hs; buf[17] = -2.0f;
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_OK,
                     "negative count (qparams)");
        CHECK(qmx__isfinite(s) && s > 0.0f && a <= b, "negative count: scale %g, range [%g, %g]", s, a, b);
        CHECK_EQ_INT(qmx_torch_histogram_update(&h, x, 4), QMX_OK, "negative count (update)");
        CHECK(buf[17] == -2.0f, "the plain add keeps the negative count: %g", buf[17]);
        memcpy(buf, save, sizeof buf);
        s = 7.0f; z = 77; a = 7.0f; b = 7.0f;
        h = hs; h.min_val = -3e38f; h.max_val = 3e38f;   /* each finite, max - min = Inf */
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_INT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_ERR_NONFINITE,
                     "corrupted range with max - min = Inf (qparams)");
        CHECK(s == 7.0f && z == 77 && a == 7.0f && b == 7.0f, "outputs untouched: %g %d %g %g", s, (int)z, a, b);
        CHECK(memcmp(save, buf, 64 * sizeof(float)) == 0, "histogram untouched");
        h = hs;
        CHECK_EQ_INT(qmx_torch_histogram_qparams(&h, QMX_UINT8, 0, 0, 0, 0, &s, &z, &a, &b), QMX_OK, "restored");
    }
}

/* The min / max statistics over long runs (the vector paths: bodies of 16 or 32, then tails):
 * a plain loop gives the reference bounds; one NaN or Inf anywhere, in a single-group or a
 * per-channel observer, is QMX_ERR_NONFINITE with every record left as it was. */
static void test_long_runs_nonfinite(void) {
    static const uint32_t bad[] = { 0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7F800000u, 0xFF800000u };
    static const size_t lens[] = { 15, 16, 31, 33, 63, 64, 65, 95, 96, 97, 1000, 4099 };
    static float x[4099 * 2];
    qmx_calib_stat st[2], snap[2];
    size_t li, i, pos[6];
    int m;
    QMX_TEST_CASE("long runs: min/max observers match a plain loop; one NaN/Inf anywhere is "
                  "QMX_ERR_NONFINITE, records untouched (every method but fixed)");
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li], bi, pi, ch;
        for (i = 0; i < 2 * n; i++)
            x[i] = (float)((int32_t)(qmx_test_rand() % 200001u) - 100000) * 1.0e-3f;
        x[qmx_test_rand() % (2 * n)] = 250.0f;   /* one clear maximum, one clear minimum */
        x[qmx_test_rand() % (2 * n)] = -300.0f;
        for (m = QMX_CALIB_ABSMAX; m <= QMX_CALIB_RMS; m++)   /* sums: values in test_sum_order */
            for (ch = 1; ch <= 2; ch++) {   /* 1: per tensor over 2n; 2: two channels of n */
                qmx_calib_config cc;
                qmx_qconfig q;
                qmx_observer obs;
                float mn[2], mx[2];
                size_t c;
                memset(&cc, 0, sizeof cc);
                memset(&q, 0, sizeof q);
                memset(&obs, 0, sizeof obs);
                cc.method = (qmx_calib_method)m;
                if (ch == 2) {
                    q.granularity = QMX_PER_CHANNEL;
                    q.outer = 1; q.axis_len = 2; q.inner = n;
                }
                memset(st, 0, sizeof st);   /* one group leaves st[1] alone: compared below */
                CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, 2 * n, st, 2), QMX_OK, "init");
                CHECK_EQ_INT(qmx_observer_update(&obs, x, 2 * n), QMX_OK, "update n %zu", n);
                for (c = 0; c < ch; c++) {   /* the reference: a plain loop */
                    size_t len = 2 * n / ch;
                    mn[c] = mx[c] = x[c * len];
                    for (i = 0; i < len; i++) {
                        float e = x[c * len + i];
                        mn[c] = e < mn[c] ? e : mn[c];
                        mx[c] = e > mx[c] ? e : mx[c];
                    }
                    if (m == QMX_CALIB_ABSMAX)
                        CHECK(st[c].max == (-mn[c] > mx[c] ? -mn[c] : mx[c]),
                              "absmax n %zu ch %zu: %g", n, c, (double)st[c].max);
                    else if (m == QMX_CALIB_MINMAX || m == QMX_CALIB_MOVING_MINMAX)
                        CHECK(st[c].min == mn[c] && st[c].max == mx[c],
                              "method %d n %zu ch %zu: [%g, %g] want [%g, %g]", m, n, c,
                              (double)st[c].min, (double)st[c].max, (double)mn[c], (double)mx[c]);
                    CHECK(st[c].seen == (uint64_t)len, "seen");
                }
                memcpy(snap, st, sizeof st);
                pos[0] = 0; pos[1] = 2 * n - 1; pos[2] = n; pos[3] = n - 1;
                pos[4] = qmx_test_rand() % (2 * n); pos[5] = (2 * n) & ~(size_t)31;
                for (bi = 0; bi < sizeof bad / sizeof bad[0]; bi++)
                    for (pi = 0; pi < 6; pi++) {
                        size_t p = pos[pi] < 2 * n ? pos[pi] : 2 * n - 1;
                        float keep = x[p];
                        x[p] = qmx_test_bits_f32(bad[bi]);
                        CHECK_EQ_INT(qmx_observer_update(&obs, x, 2 * n), QMX_ERR_NONFINITE,
                                     "bits %08x at %zu of %zu", (unsigned)bad[bi], p, 2 * n);
                        x[p] = keep;
                    }
                CHECK(memcmp(snap, st, sizeof st) == 0, "records changed on error (method %d)", m);
            }
    }
}

/* The summation order of absmean / rms, written out here from the documentation: a group's
 * batch of m elements is cut, in its element order, into pieces of 65536 * ceil(chunks / 64)
 * elements (chunks = ceil(m / 65536)); term j of a piece goes to lane j mod 32 (a Neumaier sum
 * per lane, fresh lanes per piece), the lanes fold in order into (0, 0) (sums, then
 * compensations); the batch's pair is the first piece's, each later piece adds its sum then its
 * compensation; and the batch merges into the record (sum, then compensation). The records
 * must match it bit for bit on every path and target (vector or scalar). volatile: no
 * contraction and no excess precision in this reference. */
static size_t ref_piece_len(size_t m) {
    size_t chunks = (m + 65535) / 65536, per = (chunks + 63) / 64;
    return (per ? per : 1) * 65536;
}
static void ref_neumaier(float *s, float *c, float v) {
    volatile float t = *s + v, d, e;
    if ((*s < 0 ? -*s : *s) >= (v < 0 ? -v : v)) { d = *s - t; e = d + v; }
    else { d = v - t; e = d + *s; }
    *c = *c + e;
    *s = t;
}
/* One group's batch: runs of len elements at x + r * stride, r < runs, in that order, summed
 * in pieces of `piece` elements (ref_piece_len: the documented order; the batch's count: one
 * piece, the order before pieces). */
static void ref_lane_batch_pieces(const float *x, size_t len, size_t runs, size_t stride, int rms,
                                  int p, size_t piece, qmx_calib_stat *st) {
    float ls[32], lc[32], bs = 0.0f, bc = 0.0f;
    size_t i, j, pos = 0, used, m = len * runs, e0;
    for (e0 = 0; e0 < m; e0 += piece) {
        float ps = 0.0f, pc = 0.0f;
        for (j = 0; j < 32; j++) ls[j] = lc[j] = 0.0f;
        for (i = e0, pos = 0; i < m && i - e0 < piece; i++) {
            float xi = x[(i / len) * stride + i % len], a = xi < 0 ? -xi : xi;
            volatile float t = a;
            int q;
            j = pos++ % 32;
            if (rms) t = a * a;
            else if (a == 0.0f) continue;
            else for (q = 1; q < p; q++) t = t * a;
            st->n++;
            ref_neumaier(&ls[j], &lc[j], t);
        }
        used = pos < 32 ? pos : 32;
        for (j = 0; j < used; j++) ref_neumaier(&ps, &pc, ls[j]);
        for (j = 0; j < used; j++) ref_neumaier(&ps, &pc, lc[j]);
        if (e0 == 0) { bs = ps; bc = pc; }
        else { ref_neumaier(&bs, &bc, ps); ref_neumaier(&bs, &bc, pc); }
    }
    ref_neumaier(&st->sum, &st->comp, bs);
    ref_neumaier(&st->sum, &st->comp, bc);
    st->seen += m;
}
static void ref_lane_batch(const float *x, size_t len, size_t runs, size_t stride, int rms, int p,
                           qmx_calib_stat *st) {
    ref_lane_batch_pieces(x, len, runs, stride, rms, p, ref_piece_len(len * runs), st);
}

static void test_sum_order(void) {
    static const size_t lens[] = { 1, 31, 32, 33, 63, 64, 100, 1000, 4099 };
    static float x[6 * 4099];
    size_t li, i, b;
    int p;
    QMX_TEST_CASE("absmean p=1..4 and rms: records bit-exact with the documented 32-lane order");
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (p = 1; p <= 5; p++) {   /* 5: rms */
            size_t n = lens[li], ch;
            for (ch = 1; ch <= 3; ch++) {   /* per tensor; two channels of n; two channels of
                                              * 3 runs of n (outer 3): runs not on lane 0 */
                qmx_calib_config cc;
                qmx_qconfig q;
                qmx_observer obs;
                qmx_calib_stat st[2], want[2];
                size_t cnt = ch == 3 ? 6 * n : 2 * n;
                memset(&cc, 0, sizeof cc);
                memset(&q, 0, sizeof q);
                memset(&obs, 0, sizeof obs);
                memset(want, 0, sizeof want);
                cc.method = p == 5 ? QMX_CALIB_RMS : QMX_CALIB_ABSMEAN;
                cc.p = p == 5 ? 0 : p;
                if (ch >= 2) {
                    q.granularity = QMX_PER_CHANNEL; q.outer = ch == 3 ? 3 : 1; q.axis_len = 2; q.inner = n;
                }
                memset(st, 0, sizeof st);   /* one group leaves st[1] alone: compared below */
                CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, cnt, st, 2), QMX_OK, "init");
                for (b = 0; b < 3; b++) {   /* three batches: the record carries over */
                    size_t c;
                    for (i = 0; i < cnt; i++) {
                        uint32_t r = qmx_test_rand();
                        x[i] = r % 5 == 0 ? 0.0f   /* zeros: absmean skips them */
                             : (float)((int32_t)(r >> 8) - 8388608) * (1.0f / 1048576.0f) *
                                   (float)(1u << (r % 7));
                    }
                    CHECK_EQ_INT(qmx_observer_update(&obs, x, cnt), QMX_OK, "update");
                    if (ch == 1) ref_lane_batch(x, 2 * n, 1, 0, p == 5, p, &want[0]);
                    else
                        for (c = 0; c < 2; c++)   /* channel c: row (o, c) of every outer o */
                            ref_lane_batch(x + c * n, n, ch == 3 ? 3 : 1, 2 * n, p == 5, p, &want[c]);
                    for (c = 0; c < (ch == 1 ? 1u : 2u); c++)
                        CHECK(memcmp(&st[c].sum, &want[c].sum, sizeof(float)) == 0 &&
                              memcmp(&st[c].comp, &want[c].comp, sizeof(float)) == 0 &&
                              st[c].n == want[c].n,
                              "p %d n %zu ch %zu batch %zu: sum %.9g comp %.9g n %lu, want %.9g %.9g %lu",
                              p, n, c, b, (double)st[c].sum, (double)st[c].comp, (unsigned long)st[c].n,
                              (double)want[c].sum, (double)want[c].comp, (unsigned long)want[c].n);
                }
            }
        }
}

/* Batches past one piece: every group shape (per tensor; per channel with rows that cross a
 * piece boundary; per block with rows of one element), more than 64 chunks (natively), and one
 * piece of 65536 elements = the order before pieces (the whole batch's lanes, one fold). */
static void test_sum_pieces(void) {
    enum { T = 65536 };
    static const struct { int g; size_t outer, len, inner, block, cnt; } lay[5] = {
        {QMX_PER_TENSOR, 0, 0, 0, 0, T},                          /* one piece */
        {QMX_PER_TENSOR, 0, 0, 0, 0, 3 * T + 77},                 /* 4 pieces */
        {QMX_PER_CHANNEL, 3, 2, 40007, 0, 3 * 2 * 40007},         /* 2 groups of 2 pieces */
        {QMX_PER_BLOCK, 1, 70001, 2, 70000, 70001 * 2},           /* strided 2-piece groups */
        {QMX_PER_TENSOR, 0, 0, 0, 0, 130 * (size_t)T + 77},       /* 44 pieces of 3 chunks */
    };
    /* the 8.5M-element case (pieces of several chunks) natively on x86 only: under QEMU it
     * took most of this program's time (20-30 s per target); the piece logic is target-free C
     * and each piece's lane sums (the SIMD paths) are covered by the smaller cases */
#if defined(__x86_64__) || defined(__i386__)
    const size_t nl = SMALL_TARGET ? 4 : 5;
#else
    const size_t nl = 4;
#endif
    size_t l, i, maxc = 0;
    float *x;
    for (l = 0; l < nl; l++) maxc = lay[l].cnt > maxc ? lay[l].cnt : maxc;   /* the largest used */
    x = (float *)malloc(maxc * sizeof(float));
    QMX_TEST_CASE("absmean p=1..4 and rms past 65536 elements: the documented piece order, bit-exact");
    if (!x) { CHECK(0, "malloc"); return; }
    for (l = 0; l < nl; l++) {
        int p;
        for (p = 1; p <= 5; p++) {   /* 5: rms */
            qmx_calib_config cc = QMX_ZERO_INIT;
            qmx_qconfig q = QMX_ZERO_INIT;
            qmx_observer obs = QMX_ZERO_INIT;
            qmx_calib_stat st[4], want[4], old;
            size_t cnt = lay[l].cnt, ng = 0, b, g;
            if (l == 4 && p != 2 && p != 5) continue;   /* 8.5M elements: two methods */
            /* Cortex-M (soft or single-precision float under QEMU: the slowest): rms and one p
             * per layout, p = 1..4 over the four layouts */
            if (SMALL_TARGET && p != 5 && p != 1 + (int)(l % 4)) continue;
            cc.method = p == 5 ? QMX_CALIB_RMS : QMX_CALIB_ABSMEAN;
            cc.p = p == 5 ? 0 : p;
            q.granularity = (qmx_granularity)lay[l].g;
            q.outer = lay[l].outer; q.axis_len = lay[l].len; q.inner = lay[l].inner;
            q.block_size = lay[l].block;
            memset(want, 0, sizeof want);
            memset(&old, 0, sizeof old);
            CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, cnt, st, 4), QMX_OK, "init layout %u",
                         (unsigned)l);
            ng = obs.n_groups;
            for (b = 0; b < 2; b++) {
                for (i = 0; i < cnt; i++) {
                    uint32_t r = qmx_test_rand();
                    x[i] = r % 5 == 0 ? 0.0f
                         : (float)((int32_t)(r >> 8) - 8388608) * (1.0f / 1048576.0f) *
                               (float)(1u << (r % 7));
                }
                CHECK_EQ_INT(qmx_observer_update(&obs, x, cnt), QMX_OK, "update");
                for (g = 0; g < ng; g++) {
                    if (l <= 1 || l == 4) ref_lane_batch(x, cnt, 1, 0, p == 5, p, &want[g]);
                    else if (l == 2)   /* channel g: rows (o, g) */
                        ref_lane_batch(x + g * lay[l].inner, lay[l].inner, 3, 2 * lay[l].inner,
                                       p == 5, p, &want[g]);
                    else if (g < 2)    /* block 0 at inner index g: 70000 rows of 1 */
                        ref_lane_batch(x + g, 1, 70000, 2, p == 5, p, &want[g]);
                    else               /* block 1 (ragged): 1 element */
                        ref_lane_batch(x + 140000 + (g - 2), 1, 1, 0, p == 5, p, &want[g]);
                    CHECK(memcmp(&st[g].sum, &want[g].sum, sizeof(float)) == 0 &&
                              memcmp(&st[g].comp, &want[g].comp, sizeof(float)) == 0 &&
                              st[g].n == want[g].n && st[g].seen == want[g].seen,
                          "layout %u p %d group %u batch %u: sum %a comp %a n %lu, want %a %a %lu",
                          (unsigned)l, p, (unsigned)g, (unsigned)b, (double)st[g].sum,
                          (double)st[g].comp, (unsigned long)st[g].n, (double)want[g].sum,
                          (double)want[g].comp, (unsigned long)want[g].n);
                }
                if (l == 0) {   /* one piece: the batch's 32 lanes folded once, as before */
                    ref_lane_batch_pieces(x, cnt, 1, 0, p == 5, p, (size_t)-1, &old);
                    CHECK(memcmp(&st[0].sum, &old.sum, sizeof(float)) == 0 &&
                              memcmp(&st[0].comp, &old.comp, sizeof(float)) == 0 && st[0].n == old.n,
                          "65536 elements, p %d batch %u: not the one-fold bits", p, (unsigned)b);
                }
            }
        }
    }

    QMX_TEST_CASE("absmean p=1..4 and rms over 3 x 65536 + 77 integers: within 2 ulp of the exact sum");
    {
        const size_t cnt = 3 * (size_t)T + 77;
        int p;
        for (p = 1; p <= 5; p++) {
            qmx_calib_config cc = QMX_ZERO_INIT;
            qmx_qconfig q = QMX_ZERO_INIT;
            qmx_observer obs = QMX_ZERO_INIT;
            qmx_calib_stat st;
            double exact = 0.0, nz = 0.0, want;
            volatile float t;
            float lo = 0.0f, hi = 0.0f;
            size_t b;
            cc.method = p == 5 ? QMX_CALIB_RMS : QMX_CALIB_ABSMEAN;
            cc.p = p == 5 ? 0 : p;
            CHECK_EQ_INT(qmx_observer_init(&obs, &cc, &q, cnt, &st, 1), QMX_OK, "init");
            for (b = 0; b < 2; b++) {
                for (i = 0; i < cnt; i++) {   /* |x| <= 64: |x|^4 <= 2^24, exact in float */
                    int v = (int)(qmx_test_rand() % 129u) - 64;
                    double a = v < 0 ? -(double)v : (double)v, y = a;
                    int j;
                    x[i] = (float)v * (b ? 1.0f : 0.5f);   /* batch 0: halves, still exact */
                    a = b ? a : a * 0.5;
                    y = a;
                    for (j = 1; j < (p == 5 ? 2 : p); j++) y *= a;
                    exact += y;   /* multiples of 2^-4 below 2^43: exact in double */
                    nz += (p == 5 || v != 0) ? 1.0 : 0.0;
                }
                CHECK_EQ_INT(qmx_observer_update(&obs, x, cnt), QMX_OK, "update");
            }
            t = st.sum + st.comp;
            CHECK(close_ulps(t, exact, 2.0) && (double)st.n == nz && st.seen == 2 * cnt,
                  "p %d: sum + comp %.9g, exact %.17g; n %lu want %.0f", p, (double)t, exact,
                  (unsigned long)st.n, nz);
            want = p == 5 ? dsqrt(exact / nz) : droot(exact / nz, p);
            CHECK(qmx_observer_bounds(&obs, 0, &lo, &hi) == QMX_OK && close_ulps(hi, want, 4.0),
                  "p %d: bound %.9g want %.12g", p, (double)hi, want);
        }
    }
    free(x);
}

int main(void) {
    test_torch();
    test_delayed_golden();
    test_delayed_spec();
    test_parse_golden();
    test_methods_hand();
    test_methods_malformed();
    test_sum_methods();
    test_sum_order();
    test_sum_pieces();
    test_granularity();
    test_zero_and_errors();
    test_nonfinite_state();
    test_long_runs_nonfinite();
    test_sqrt();
    test_moving_spec();
    test_histogram();
    test_snr();
    test_kl();
    test_torch_hist();
    test_torch_hist_errors();
    test_torch_histc();
    test_torch_hist_nonfinite();
    test_soft_double();
    return QMX_TEST_END();
}
