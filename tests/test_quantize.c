/* test_quantize.c - qmx_compute_qparams / qmx_quantize / qmx_dequantize / qmx_qparams_count
 * against golden data from an independent numpy reference of each origin's formula, plus the
 * error contract.
 *
 * Data (tests/data, written by tests/gen/gen_quant.py; each file's '#' header names the record
 * layout and the generator's docstring every formula):
 *   quant_int.txt         AQT / Qwix / TFLite integer recipes: every granularity, dtype,
 *                         zero-range guard, denormal, huge, NaN/Inf and exact-tie case
 *   quant_fp8.txt         the four fp8 dtypes through qmx_quantize (clip, then an exact RNE cast
 *                         computed with fractions in the generator, not with qmx's converter)
 *   quant_stochastic.txt  QMX_ROUND_STOCHASTIC with seeded xoshiro128** streams
 *   quant_rng.txt         raw qmx_rng_seed / qmx_rng_next_u32 / qmx_rng_next_noise streams
 * Every record is streamed (one line at a time; cases are at most a few hundred elements) so
 * that the test also runs on 16 MiB Cortex-M targets. Floats are compared by bit pattern; no
 * float arithmetic is done here, so the test means the same on x87, s390x and soft-float.
 * Error cases: every bad argument returns its status and leaves every output (sentinel-filled)
 * untouched; NaN/Inf data makes qmx_compute_qparams write exactly the groups before the first
 * group holding one (its one-pass rule; the data's nf line names that group). */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_test.h"

#define MAXN 512            /* elements per case */
#define MAXS 512            /* scales per case */
#define GUARD 16            /* sentinel slots after every output */
#define LINE 8192

static char line_buf[LINE];
static float xs[MAXN], sc[MAXS], sc_exp[MAXS], ys[MAXN + GUARD];
static uint32_t y_exp[MAXN];
static int32_t zp[MAXS + GUARD], zp_exp[MAXS], q_exp[MAXN];
static int q_nan[MAXN];
static uint8_t qbuf[2 * MAXN + GUARD], pk_exp[MAXN], qin[2 * MAXN + GUARD];
static float sc_out[MAXS + GUARD];

static uint32_t fbits(const float *p) { uint32_t u; memcpy(&u, p, 4); return u; }
static void setf(float *p, uint32_t u) { memcpy(p, &u, 4); }
static int is_nan_bits(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

/* ---- tokenizer over one line ---- */
static char *tok_p;
static char *tok_next(void) {
    char *s = tok_p, *t;
    while (*s == ' ' || *s == '\t') s++;
    if (!*s || *s == '\n' || *s == '\r') return NULL;
    t = s;
    while (*t && *t != ' ' && *t != '\t' && *t != '\n' && *t != '\r') t++;
    if (*t) { *t = 0; tok_p = t + 1; } else tok_p = t;
    return s;
}
static uint64_t parse_hex64(const char *s, int *ok) {
    uint64_t v = 0;
    int n = 0;
    for (; *s; s++, n++) {
        int d;
        if (*s >= '0' && *s <= '9') d = *s - '0';
        else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
        else { *ok = 0; return 0; }
        v = (v << 4) | (uint64_t)d;
    }
    if (n == 0 || n > 16) *ok = 0;
    return v;
}
static long parse_dec(const char *s, int *ok) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end) *ok = 0;
    return v;
}

/* ---- names -> enums (from the qmx.h declarations) ---- */
static int dtype_of(const char *s, qmx_dtype *d) {
    static const struct { const char *n; qmx_dtype d; } T[] = {
        { "int8", QMX_INT8 }, { "uint8", QMX_UINT8 }, { "int4", QMX_INT4 }, { "uint4", QMX_UINT4 },
        { "int16", QMX_INT16 }, { "int2", QMX_INT2 }, { "uint2", QMX_UINT2 }, { "int3", QMX_INT3 },
        { "int5", QMX_INT5 }, { "int6", QMX_INT6 }, { "int7", QMX_INT7 }, { "nf4", QMX_NF4 },
        { "fp8_e4m3fn", QMX_FP8_E4M3FN }, { "fp8_e5m2", QMX_FP8_E5M2 },
        { "fp8_e4m3fnuz", QMX_FP8_E4M3FNUZ }, { "fp8_e5m2fnuz", QMX_FP8_E5M2FNUZ } };
    size_t i;
    for (i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(s, T[i].n)) { *d = T[i].d; return 1; }
    return 0;
}
static int gran_of(const char *s, qmx_granularity *g) {
    if (!strcmp(s, "per_tensor")) *g = QMX_PER_TENSOR;
    else if (!strcmp(s, "per_channel")) *g = QMX_PER_CHANNEL;
    else if (!strcmp(s, "per_block")) *g = QMX_PER_BLOCK;
    else return 0;
    return 1;
}
static int recipe_of(const char *s, qmx_recipe *r) {
    if (!strcmp(s, "aqt")) *r = QMX_RECIPE_AQT;
    else if (!strcmp(s, "qwix")) *r = QMX_RECIPE_QWIX;
    else if (!strcmp(s, "tflite")) *r = QMX_RECIPE_TFLITE;
    else return 0;
    return 1;
}
static int round_of(const char *s, qmx_round *r) {
    if (!strcmp(s, "default")) *r = QMX_ROUND_DEFAULT;
    else if (!strcmp(s, "nearest_even")) *r = QMX_ROUND_NEAREST_EVEN;
    else if (!strcmp(s, "half_away")) *r = QMX_ROUND_HALF_AWAY;
    else if (!strcmp(s, "stochastic")) *r = QMX_ROUND_STOCHASTIC;
    else return 0;
    return 1;
}

/* fp8 NaN codes, from the format definitions in the qmx.h doc block */
static int fp8_code_is_nan(qmx_dtype d, unsigned c) {
    c &= 0xFFu;
    if (d == QMX_FP8_E4M3FNUZ || d == QMX_FP8_E5M2FNUZ) return c == 0x80u;
    if (d == QMX_FP8_E5M2) return (c & 0x7Fu) > 0x7Cu;
    return (c & 0x7Fu) == 0x7Fu;
}
static int is_fp8(qmx_dtype d) { return d >= QMX_FP8_E4M3FN && d <= QMX_FP8_E5M2FNUZ; }
static int is_packed(qmx_dtype d) {
    return d == QMX_INT4 || d == QMX_UINT4 || d == QMX_INT2 || d == QMX_UINT2 || d == QMX_NF4;
}
static size_t storage_bytes(qmx_dtype d, size_t n) {
    if (d == QMX_INT2 || d == QMX_UINT2) return (n + 3) / 4;
    if (is_packed(d)) return (n + 1) / 2;
    if (d == QMX_INT16) return 2 * n;
    return n;
}
/* element i of a qmx storage buffer, decoded here (not with qmx's helpers) */
static int32_t storage_get(qmx_dtype d, const uint8_t *b, size_t i) {
    switch (d) {
    case QMX_INT8: case QMX_INT3: case QMX_INT5: case QMX_INT6: case QMX_INT7:
        return (int32_t)(int8_t)b[i];
    case QMX_INT2: { int32_t c = (b[i / 4] >> (2 * (i & 3))) & 3; return c >= 2 ? c - 4 : c; }
    case QMX_UINT2: return (b[i / 4] >> (2 * (i & 3))) & 3;
    case QMX_INT16: { int16_t v; memcpy(&v, b + 2 * i, 2); return v; }
    case QMX_INT4: { int32_t n = (b[i / 2] >> (4 * (i & 1))) & 15; return n >= 8 ? n - 16 : n; }
    case QMX_UINT4: case QMX_NF4: return (b[i / 2] >> (4 * (i & 1))) & 15;
    default: return b[i];   /* uint8, fp8 codes */
    }
}
static void storage_set(qmx_dtype d, uint8_t *b, size_t i, int32_t v) {
    switch (d) {
    case QMX_INT16: { int16_t s = (int16_t)v; memcpy(b + 2 * i, &s, 2); break; }
    case QMX_INT4: case QMX_UINT4: case QMX_NF4:
        b[i / 2] = (uint8_t)((b[i / 2] & (0xF0u >> (4 * (i & 1)))) | (((uint32_t)v & 15u) << (4 * (i & 1))));
        break;
    case QMX_INT2: case QMX_UINT2:
        b[i / 4] = (uint8_t)((b[i / 4] & ~(3u << (2 * (i & 3)))) | (((uint32_t)v & 3u) << (2 * (i & 3))));
        break;
    default: b[i] = (uint8_t)v; break;
    }
}

/* ---- one golden record ---- */
typedef struct rec {
    char name[128];
    qmx_qconfig cfg;
    char seed_s[24];
    uint64_t seed;
    int stochastic;
    size_t count, n_scales;
    int qp;
    size_t nf;              /* QP 2: the first group holding NaN/Inf */
    int has_z, has_q, has_p, has_y, has_r, has_nf;
    size_t n_p;
    uint32_t r_exp;
} rec;

static long n_cases, n_elems;

/* Reads the lines of one record after "case NAME". Returns 0 on a malformed record. */
static int read_record(FILE *f, const char *file, rec *r) {
    int ok = 1;
    r->has_z = r->has_q = r->has_p = r->has_y = r->has_r = r->has_nf = 0;
    while (qmx_test_next_line(f, line_buf, LINE)) {
        char *key;
        size_t len = strlen(line_buf), i;
        if (len == LINE - 1 && line_buf[len - 1] != '\n') {
            CHECK(0, "%s: line too long in case %s", file, r->name);
            return 0;
        }
        tok_p = line_buf;
        key = tok_next();
        if (!key) continue;
        if (!strcmp(key, "end")) break;
        if (!strcmp(key, "cfg")) {
            char *t[15];
            qmx_qconfig c = QMX_ZERO_INIT;
            for (i = 0; i < 15; i++) { t[i] = tok_next(); if (!t[i]) { ok = 0; break; } }
            if (!ok) break;
            ok &= dtype_of(t[0], &c.dtype);
            ok &= gran_of(t[1], &c.granularity);
            c.outer = (size_t)parse_dec(t[2], &ok);
            c.axis_len = (size_t)parse_dec(t[3], &ok);
            c.inner = (size_t)parse_dec(t[4], &ok);
            c.block_size = (size_t)parse_dec(t[5], &ok);
            ok &= recipe_of(t[6], &c.recipe);
            ok &= round_of(t[7], &c.rounding);
            c.asymmetric = (int)parse_dec(t[8], &ok);
            c.narrow_range = (int)parse_dec(t[9], &ok);
            c.preserve_max_val = (int)parse_dec(t[10], &ok);
            r->stochastic = strcmp(t[11], "-") != 0;
            r->seed = r->stochastic ? parse_hex64(t[11], &ok) : 0;
            r->count = (size_t)parse_dec(t[12], &ok);
            r->n_scales = (size_t)parse_dec(t[13], &ok);
            r->qp = (int)parse_dec(t[14], &ok);
            r->cfg = c;
            if (r->count == 0 || r->count > MAXN || r->n_scales == 0 || r->n_scales > MAXS) ok = 0;
        } else if (!strcmp(key, "x") || !strcmp(key, "s") || !strcmp(key, "y")) {
            size_t n = key[0] == 's' ? r->n_scales : r->count;
            for (i = 0; i < n && ok; i++) {
                char *t = tok_next();
                uint32_t u;
                if (!t) { ok = 0; break; }
                u = (uint32_t)parse_hex64(t, &ok);
                if (key[0] == 'x') setf(&xs[i], u);
                else if (key[0] == 's') setf(&sc_exp[i], u);
                else y_exp[i] = u;
            }
            if (key[0] == 'y') r->has_y = 1;
        } else if (!strcmp(key, "nf")) {
            char *t = tok_next();
            if (!t) { ok = 0; break; }
            r->nf = (size_t)parse_dec(t, &ok);
            if (r->nf >= r->n_scales) ok = 0;
            r->has_nf = 1;
        } else if (!strcmp(key, "z")) {
            for (i = 0; i < r->n_scales && ok; i++) {
                char *t = tok_next();
                if (!t) { ok = 0; break; }
                zp_exp[i] = (int32_t)parse_dec(t, &ok);
            }
            r->has_z = 1;
        } else if (!strcmp(key, "q")) {
            int fp8 = is_fp8(r->cfg.dtype);
            for (i = 0; i < r->count && ok; i++) {
                char *t = tok_next();
                if (!t) { ok = 0; break; }
                q_nan[i] = fp8 && !strcmp(t, "nan");
                q_exp[i] = q_nan[i] ? 0 : (fp8 ? (int32_t)parse_hex64(t, &ok) : (int32_t)parse_dec(t, &ok));
            }
            r->has_q = 1;
        } else if (!strcmp(key, "p")) {
            char *t = tok_next();
            size_t n = t ? strlen(t) / 2 : 0;
            if (!t || n > MAXN) { ok = 0; break; }
            for (i = 0; i < n && ok; i++) {
                char h[3];
                h[0] = t[2 * i]; h[1] = t[2 * i + 1]; h[2] = 0;
                pk_exp[i] = (uint8_t)parse_hex64(h, &ok);
            }
            r->n_p = n;
            r->has_p = 1;
        } else if (!strcmp(key, "r")) {
            char *t = tok_next();
            if (!t) { ok = 0; break; }
            r->r_exp = (uint32_t)parse_hex64(t, &ok);
            r->has_r = 1;
        } else {
            ok = 0;
        }
        if (!ok) break;
    }
    CHECK(ok, "%s: malformed record %s", file, r->name);
    return ok;
}

static void fill_sentinels(void) {
    size_t i;
    for (i = 0; i < MAXS + GUARD; i++) { setf(&sc_out[i], 0x7FA5A5A5u); zp[i] = (int32_t)0xA5A5A5A5u; }
    for (i = 0; i < MAXN + GUARD; i++) setf(&ys[i], 0x7FA55A5Au);
    memset(qbuf, 0x5A, sizeof qbuf);
}

static void run_record(const char *file, rec *r) {
    qmx_qconfig c = r->cfg;
    qmx_rng rng, rng0;
    size_t n = r->count, ns = r->n_scales, i, need = storage_bytes(c.dtype, n), np_ = 0;
    const int32_t *zuse;
    qmx_status st;
    int asym = c.asymmetric, bad;

    memset(&rng, 0, sizeof rng);
    n_cases++;
    n_elems += (long)n;
    if (r->stochastic) { qmx_rng_seed(&rng, r->seed); c.rng = &rng; }
    rng0 = rng;

    /* qparams_count agrees with the reference's number of groups */
    st = qmx_qparams_count(&c, n, &np_);
    CHECK(st == QMX_OK && np_ == ns, "%s %s: qparams_count status %d n %lu, want %lu", file, r->name,
          (int)st, (unsigned long)np_, (unsigned long)ns);

    /* compute_qparams */
    fill_sentinels();
    st = qmx_compute_qparams(&c, xs, n, sc_out, ns, asym ? zp : NULL);
    if (r->qp == 1 || r->qp == 3) {
        CHECK(st == QMX_OK, "%s %s: compute_qparams status %d", file, r->name, (int)st);
        for (i = 0, bad = 0; i < ns; i++) {
            if (fbits(&sc_out[i]) != fbits(&sc_exp[i]) && bad++ < 4)
                CHECK(0, "%s %s: scale[%lu] got %08" PRIx32 " want %08" PRIx32, file, r->name,
                      (unsigned long)i, fbits(&sc_out[i]), fbits(&sc_exp[i]));
            if (asym && zp[i] != zp_exp[i] && bad++ < 4)
                CHECK(0, "%s %s: zero_point[%lu] got %" PRId32 " want %" PRId32, file, r->name,
                      (unsigned long)i, zp[i], zp_exp[i]);
        }
        CHECK(bad == 0, "%s %s: %d qparams mismatches", file, r->name, bad);
        for (i = ns, bad = 0; i < ns + GUARD; i++)
            bad |= fbits(&sc_out[i]) != 0x7FA5A5A5u || zp[i] != (int32_t)0xA5A5A5A5u;
        CHECK(!bad, "%s %s: compute_qparams wrote past n_scales", file, r->name);
    } else if (r->qp == 2) {
        /* one pass: the groups before the first non-finite one are written, no other */
        CHECK(st == QMX_ERR_NONFINITE, "%s %s: compute_qparams on NaN/Inf gave %d, want NONFINITE",
              file, r->name, (int)st);
        CHECK(r->has_nf, "%s %s: QP 2 record without its nf line", file, r->name);
        for (i = 0, bad = 0; r->has_nf && i < r->nf; i++)
            bad += fbits(&sc_out[i]) != fbits(&sc_exp[i]) || (asym && zp[i] != zp_exp[i]);
        CHECK(!bad, "%s %s: %d of the %lu groups before the first NaN/Inf one not written as the "
              "reference", file, r->name, bad, (unsigned long)r->nf);
        for (i = r->has_nf ? r->nf : 0, bad = 0; i < ns + GUARD; i++)
            bad |= fbits(&sc_out[i]) != 0x7FA5A5A5u || zp[i] != (int32_t)0xA5A5A5A5u;
        CHECK(!bad, "%s %s: compute_qparams wrote group %lu (holds NaN/Inf) or a later one",
              file, r->name, (unsigned long)(r->has_nf ? r->nf : 0));
    }
    if (r->stochastic)
        CHECK(!memcmp(&rng, &rng0, sizeof rng), "%s %s: compute_qparams consumed random draws",
              file, r->name);

    /* quantize with the reference's parameters */
    for (i = 0; i < ns; i++) sc[i] = sc_exp[i];
    zuse = asym ? zp_exp : NULL;
    fill_sentinels();
    st = qmx_quantize(&c, xs, n, sc, ns, zuse, qbuf, need);
    if (r->qp == 3) {
        CHECK(st == QMX_ERR_ARG, "%s %s: quantize with a 0/Inf scale gave %d, want ARG", file,
              r->name, (int)st);
        for (i = 0, bad = 0; i < sizeof qbuf; i++) bad |= qbuf[i] != 0x5A;
        CHECK(!bad, "%s %s: quantize wrote q on error", file, r->name);
        return;
    }
    CHECK(st == QMX_OK, "%s %s: quantize status %d", file, r->name, (int)st);
    if (!r->has_q || !r->has_y) { CHECK(0, "%s %s: record without q/y", file, r->name); return; }
    for (i = 0, bad = 0; i < n; i++) {
        int32_t got = storage_get(c.dtype, qbuf, i);
        int okq = q_nan[i] ? fp8_code_is_nan(c.dtype, (unsigned)got) : got == q_exp[i];
        if (!okq && bad++ < 6)
            CHECK(0, "%s %s: q[%lu] (x %08" PRIx32 ") got %" PRId32 " want %" PRId32 "%s", file,
                  r->name, (unsigned long)i, fbits(&xs[i]), got, q_exp[i], q_nan[i] ? " (NaN)" : "");
    }
    CHECK(bad == 0, "%s %s: %d q mismatches", file, r->name, bad);
    if (r->has_p) {
        CHECK(r->n_p == need && !memcmp(qbuf, pk_exp, need), "%s %s: packed int4 bytes differ",
              file, r->name);
    }
    for (i = need, bad = 0; i < need + GUARD; i++) bad |= qbuf[i] != 0x5A;
    CHECK(!bad, "%s %s: quantize wrote past q_bytes", file, r->name);
    if (r->stochastic) {
        uint32_t nx = qmx_rng_next_u32(&rng);
        CHECK(r->has_r && nx == r->r_exp, "%s %s: rng after quantize %08" PRIx32 " want %08" PRIx32
              " (one draw per element)", file, r->name, nx, r->r_exp);
    }

    /* dequantize the reference's q (rebuilt here, independently of qmx's output) */
    memset(qin, 0, sizeof qin);
    for (i = 0; i < n; i++) {
        int32_t v = q_exp[i];
        if (q_nan[i]) v = (c.dtype == QMX_FP8_E4M3FNUZ || c.dtype == QMX_FP8_E5M2FNUZ) ? 0x80 : 0x7F;
        storage_set(c.dtype, qin, i, v);
    }
    if (r->has_p) CHECK(!memcmp(qin, pk_exp, need), "%s %s: p line disagrees with q line", file, r->name);
    fill_sentinels();
    st = qmx_dequantize(&c, qin, need, n, sc, ns, zuse, ys);
    CHECK(st == QMX_OK, "%s %s: dequantize status %d", file, r->name, (int)st);
    for (i = 0, bad = 0; i < n; i++) {
        uint32_t g = fbits(&ys[i]);
        int oky = is_nan_bits(y_exp[i]) ? is_nan_bits(g) : g == y_exp[i];
        if (!oky && bad++ < 6)
            CHECK(0, "%s %s: y[%lu] (q %" PRId32 ") got %08" PRIx32 " want %08" PRIx32, file,
                  r->name, (unsigned long)i, q_exp[i], g, y_exp[i]);
    }
    CHECK(bad == 0, "%s %s: %d y mismatches", file, r->name, bad);
    for (i = n, bad = 0; i < n + GUARD; i++) bad |= fbits(&ys[i]) != 0x7FA55A5Au;
    CHECK(!bad, "%s %s: dequantize wrote past count", file, r->name);
}

static void run_file(const char *file) {
    FILE *f;
    rec r;
    long before = n_cases;
    char title[96];
    snprintf(title, sizeof title, "golden %s", file);
    QMX_TEST_CASE(title);
    f = qmx_test_open(file);
    if (!f) return;
    while (qmx_test_next_line(f, line_buf, LINE)) {
        char *k;
        tok_p = line_buf;
        k = tok_next();
        if (!k) continue;
        if (strcmp(k, "case") != 0) { CHECK(0, "%s: unexpected line '%s'", file, k); break; }
        k = tok_next();
        snprintf(r.name, sizeof r.name, "%s", k ? k : "?");
        if (!read_record(f, file, &r)) break;
        run_record(file, &r);
    }
    fclose(f);
    CHECK(n_cases - before > 0, "%s: no cases", file);
    printf("  %-24s %ld cases\n", file, n_cases - before);
}

/* ---- raw RNG streams ---- */
static void test_rng(void) {
    FILE *f;
    long rows = 0;
    QMX_TEST_CASE("rng streams (quant_rng.txt) and the xoshiro128** reference vector");
    {   /* Blackman & Vigna reference C from state {1,2,3,4} */
        qmx_rng g;
        static const uint32_t want[4] = { 11520u, 0u, 5927040u, 70819200u };
        int i;
        g.s[0] = 1; g.s[1] = 2; g.s[2] = 3; g.s[3] = 4;
        for (i = 0; i < 4; i++) CHECK_EQ_INT(qmx_rng_next_u32(&g), want[i], "xoshiro128** {1,2,3,4} #%d", i);
    }
    f = qmx_test_open("quant_rng.txt");
    if (!f) return;
    while (qmx_test_next_line(f, line_buf, LINE)) {
        char *k, *t;
        int ok = 1, i;
        qmx_rng g;
        uint64_t seed;
        tok_p = line_buf;
        k = tok_next();
        t = tok_next();
        if (!k || !t) continue;
        seed = parse_hex64(t, &ok);
        qmx_rng_seed(&g, seed);
        if (!strcmp(k, "seed")) {
            t = tok_next();
            ok &= t && !strcmp(t, "state");
            for (i = 0; i < 4 && ok; i++) {
                t = tok_next();
                if (!t) { ok = 0; break; }
                CHECK(g.s[i] == (uint32_t)parse_hex64(t, &ok), "seed %08lx%08lx: state word %d",
                      (unsigned long)(seed >> 32), (unsigned long)(seed & 0xFFFFFFFFu), i);
            }
            t = tok_next();
            ok &= t && !strcmp(t, "u32");
            for (i = 0; ok && (t = tok_next()) != NULL; i++) {
                uint32_t w = (uint32_t)parse_hex64(t, &ok), gt = qmx_rng_next_u32(&g);
                CHECK(gt == w, "seed %08lx%08lx: output %d got %08" PRIx32 " want %08" PRIx32,
                      (unsigned long)(seed >> 32), (unsigned long)(seed & 0xFFFFFFFFu), i, gt, w);
            }
        } else if (!strcmp(k, "noise")) {
            for (i = 0; ok && (t = tok_next()) != NULL; i++) {
                uint32_t w = (uint32_t)parse_hex64(t, &ok);
                float nz = qmx_rng_next_noise(&g);
                CHECK(fbits(&nz) == w, "noise seed %08lx: #%d got %08" PRIx32 " want %08" PRIx32,
                      (unsigned long)(seed & 0xFFFFFFFFu), i, fbits(&nz), w);
            }
        } else {
            ok = 0;
        }
        CHECK(ok, "quant_rng.txt: malformed line");
        rows++;
    }
    fclose(f);
    CHECK(rows >= 8, "quant_rng.txt: %ld rows", rows);
}

/* ---- error contract ---- */
#define EN 24   /* baseline: [2][3][4] per channel over the middle axis */
static float e_x[EN], e_s[8 + GUARD], e_y[EN + GUARD], e_sout[8 + GUARD];
static int32_t e_z[8 + GUARD], e_zout[8 + GUARD];
static uint8_t e_q[2 * EN + GUARD];

static qmx_qconfig base_cfg(void) {
    qmx_qconfig c = QMX_ZERO_INIT;
    c.dtype = QMX_INT8;
    c.granularity = QMX_PER_CHANNEL;
    c.outer = 2; c.axis_len = 3; c.inner = 4;
    return c;
}
static void e_reset(void) {
    int i;
    for (i = 0; i < EN; i++) e_x[i] = (float)(i - 11) * 0.25f;
    for (i = 0; i < 8 + GUARD; i++) { e_s[i] = 0.125f; e_z[i] = 3; }
    for (i = 0; i < 8 + GUARD; i++) { setf(&e_sout[i], 0x7FA5A5A5u); e_zout[i] = (int32_t)0xA5A5A5A5u; }
    for (i = 0; i < EN + GUARD; i++) setf(&e_y[i], 0x7FA55A5Au);
    memset(e_q, 0x5A, sizeof e_q);
}
static int e_untouched(void) {
    int i, bad = 0;
    for (i = 0; i < 8 + GUARD; i++) bad |= fbits(&e_sout[i]) != 0x7FA5A5A5u || e_zout[i] != (int32_t)0xA5A5A5A5u;
    for (i = 0; i < EN + GUARD; i++) bad |= fbits(&e_y[i]) != 0x7FA55A5Au;
    for (i = 0; i < (int)sizeof e_q; i++) bad |= e_q[i] != 0x5A;
    return !bad;
}

/* Calls all four entry points with (cfg, count, n_scales, q_bytes) and the given pointers;
 * each must return one of want1/want2 and leave every output untouched. which: bit mask of
 * the calls to make (1 count, 2 compute_qparams, 4 quantize, 8 dequantize). */
#define C_CNT 1
#define C_QP 2
#define C_Q 4
#define C_DQ 8
#define C_ALL 15
static void expect_err(const char *what, int which, const qmx_qconfig *c, size_t count,
                       size_t n_scales, size_t q_bytes, qmx_status want1, qmx_status want2) {
    qmx_status st;
    size_t np_ = 12345;
    qmx_rng snap;
    int has_rng = c && c->rng;
    memset(&snap, 0, sizeof snap);
    if (has_rng) snap = *c->rng;
    if (which & C_CNT) {
        e_reset();
        st = qmx_qparams_count(c, count, &np_);
        CHECK((st == want1 || st == want2) && np_ == 12345,
              "%s: qparams_count gave %d (%s), n_params %lu; want %d/%d, untouched", what,
              (int)st, qmx_status_str(st), (unsigned long)np_, (int)want1, (int)want2);
    }
    if (which & C_QP) {
        e_reset();
        st = qmx_compute_qparams(c, e_x, count, e_sout, n_scales, e_zout);
        CHECK((st == want1 || st == want2) && e_untouched(),
              "%s: compute_qparams gave %d (%s); want %d/%d and outputs untouched", what, (int)st,
              qmx_status_str(st), (int)want1, (int)want2);
    }
    if (which & C_Q) {
        e_reset();
        st = qmx_quantize(c, e_x, count, e_s, n_scales, e_z, e_q, q_bytes);
        CHECK((st == want1 || st == want2) && e_untouched(),
              "%s: quantize gave %d (%s); want %d/%d and q untouched", what, (int)st,
              qmx_status_str(st), (int)want1, (int)want2);
    }
    if (which & C_DQ) {
        e_reset();
        memset(e_q, 0, (size_t)EN);   /* a valid input (all zero) */
        st = qmx_dequantize(c, e_q, q_bytes, count, e_s, n_scales, e_z, e_y);
        memset(e_q, 0x5A, (size_t)EN);
        CHECK((st == want1 || st == want2) && e_untouched(),
              "%s: dequantize gave %d (%s); want %d/%d and y untouched", what, (int)st,
              qmx_status_str(st), (int)want1, (int)want2);
    }
    if (has_rng) CHECK(!memcmp(&snap, c->rng, sizeof snap), "%s: the rng advanced on error", what);
}

static void test_errors(void) {
    qmx_qconfig c;
    qmx_status st;
    size_t np_;
    qmx_rng rng;
    int i;
    static const uint32_t bad_scales[] = { 0x00000000u, 0x80000000u, 0xBF800000u, 0x7FC00000u,
                                           0xFFC00000u, 0x7F800000u, 0xFF800000u, 0xFF7FFFFFu };

    QMX_TEST_CASE("errors: NULL pointers");
    c = base_cfg();
    expect_err("cfg NULL", C_ALL, NULL, EN, 3, EN, QMX_ERR_NULL, QMX_ERR_NULL);
    e_reset();
    CHECK_EQ_INT(qmx_qparams_count(&c, EN, NULL), QMX_ERR_NULL, "n_params NULL");
    e_reset();
    CHECK_EQ_INT(qmx_compute_qparams(&c, NULL, EN, e_sout, 3, NULL), QMX_ERR_NULL, "x NULL");
    CHECK(e_untouched(), "x NULL: untouched");
    CHECK_EQ_INT(qmx_compute_qparams(&c, e_x, EN, NULL, 3, NULL), QMX_ERR_NULL, "scales NULL");
    CHECK_EQ_INT(qmx_quantize(&c, NULL, EN, e_s, 3, NULL, e_q, EN), QMX_ERR_NULL, "quantize x NULL");
    CHECK_EQ_INT(qmx_quantize(&c, e_x, EN, NULL, 3, NULL, e_q, EN), QMX_ERR_NULL, "quantize scales NULL");
    CHECK(e_untouched(), "quantize NULLs: untouched");
    CHECK_EQ_INT(qmx_quantize(&c, e_x, EN, e_s, 3, NULL, NULL, EN), QMX_ERR_NULL, "quantize q NULL");
    CHECK_EQ_INT(qmx_dequantize(&c, NULL, EN, EN, e_s, 3, NULL, e_y), QMX_ERR_NULL, "dequantize q NULL");
    CHECK_EQ_INT(qmx_dequantize(&c, e_q, EN, EN, NULL, 3, NULL, e_y), QMX_ERR_NULL, "dequantize scales NULL");
    CHECK_EQ_INT(qmx_dequantize(&c, e_q, EN, EN, e_s, 3, NULL, NULL), QMX_ERR_NULL, "dequantize y NULL");
    CHECK(e_untouched(), "dequantize NULLs: untouched");
    c.recipe = QMX_RECIPE_QWIX; c.asymmetric = 1;
    e_reset();
    CHECK_EQ_INT(qmx_compute_qparams(&c, e_x, EN, e_sout, 3, NULL), QMX_ERR_NULL, "asym zps NULL");
    CHECK_EQ_INT(qmx_quantize(&c, e_x, EN, e_s, 3, NULL, e_q, EN), QMX_ERR_NULL, "quantize asym zps NULL");
    CHECK_EQ_INT(qmx_dequantize(&c, e_q, EN, EN, e_s, 3, NULL, e_y), QMX_ERR_NULL, "dequantize asym zps NULL");
    CHECK(e_untouched(), "asym zps NULL: untouched");
    c = base_cfg();
    c.rounding = QMX_ROUND_STOCHASTIC;   /* rng NULL */
    expect_err("stochastic without rng", C_QP | C_Q | C_DQ, &c, EN, 3, EN, QMX_ERR_NULL, QMX_ERR_NULL);
    expect_err("stochastic without rng (count)", C_CNT, &c, EN, 3, EN, QMX_ERR_NULL, QMX_ERR_ARG);

    QMX_TEST_CASE("errors: sizes, views, overflow");
    c = base_cfg();
    expect_err("count 0", C_ALL, &c, 0, 3, EN, QMX_ERR_SIZE, QMX_ERR_SIZE);
    c.inner = 5;
    expect_err("view 2x3x5 != 24", C_ALL, &c, EN, 3, EN, QMX_ERR_SHAPE, QMX_ERR_SHAPE);
    c = base_cfg(); c.outer = 0;
    expect_err("view 0x3x4", C_ALL, &c, EN, 3, EN, QMX_ERR_SIZE, QMX_ERR_SHAPE);
    c = base_cfg(); c.inner = 0;
    expect_err("view 2x3x0", C_ALL, &c, EN, 3, EN, QMX_ERR_SIZE, QMX_ERR_SHAPE);
    c = base_cfg(); c.outer = SIZE_MAX / 2 + 1; c.axis_len = 2; c.inner = 2;
    expect_err("view overflows size_t", C_ALL, &c, EN, 3, EN, QMX_ERR_OVERFLOW, QMX_ERR_OVERFLOW);
    /* (2^(N-1) + 12) * 2 * 1 wraps to exactly 24 = count */
    c = base_cfg(); c.granularity = QMX_PER_TENSOR; c.outer = SIZE_MAX / 2 + 1 + 12; c.axis_len = 2; c.inner = 1;
    expect_err("view product wraps to count", C_ALL, &c, EN, 3, EN, QMX_ERR_OVERFLOW, QMX_ERR_OVERFLOW);
    c = base_cfg(); c.outer = 1; c.axis_len = 2; c.inner = SIZE_MAX / 2 + 1 + 12;
    expect_err("view product wraps to count (inner)", C_ALL, &c, EN, 3, EN, QMX_ERR_OVERFLOW, QMX_ERR_OVERFLOW);
    c = base_cfg();
    expect_err("n_scales 2 < 3 (compute_qparams)", C_QP, &c, EN, 2, EN, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_BUFFER_TOO_SMALL);
    expect_err("n_scales 2 < 3 (quantize, dequantize)", C_Q | C_DQ, &c, EN, 2, EN, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_SHAPE);
    expect_err("n_scales 0", C_QP | C_Q | C_DQ, &c, EN, 0, EN, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_SHAPE);
    expect_err("q_bytes 23 < 24 (quantize)", C_Q, &c, EN, 3, EN - 1, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_BUFFER_TOO_SMALL);
    expect_err("q_bytes 23 < 24 (dequantize)", C_DQ, &c, EN, 3, EN - 1, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_SHAPE);
    c.dtype = QMX_INT16;
    expect_err("int16 q_bytes 47 < 48", C_Q | C_DQ, &c, EN, 3, 2 * EN - 1, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_SHAPE);
    c = base_cfg(); c.dtype = QMX_INT4; c.outer = 1; c.axis_len = 1; c.inner = 23;
    expect_err("int4 23 elements in 11 bytes", C_Q | C_DQ, &c, 23, 1, 11, QMX_ERR_BUFFER_TOO_SMALL, QMX_ERR_SHAPE);
    {   /* storage size overflows size_t: must fail before touching x / q */
        c = base_cfg(); c.dtype = QMX_INT16; c.granularity = QMX_PER_TENSOR;
        c.outer = 0; c.axis_len = 0; c.inner = 0;
        expect_err("int16 storage of SIZE_MAX/2+1 elements", C_Q | C_DQ, &c, SIZE_MAX / 2 + 1, 1, SIZE_MAX,
                   QMX_ERR_OVERFLOW, QMX_ERR_OVERFLOW);
    }
    c = base_cfg(); c.granularity = QMX_PER_BLOCK; c.block_size = 0;
    expect_err("block_size 0", C_ALL, &c, EN, 12, EN, QMX_ERR_SIZE, QMX_ERR_ARG);

    QMX_TEST_CASE("errors: scales and zero points");
    for (i = 0; i < (int)(sizeof bad_scales / sizeof bad_scales[0]); i++) {
        char what[64];
        int nonfinite = (bad_scales[i] & 0x7F800000u) == 0x7F800000u;
        c = base_cfg();
        snprintf(what, sizeof what, "scale[2] = %08" PRIx32, bad_scales[i]);
        e_reset();
        {
            float keep = e_s[2];
            /* expect_err resets e_s; patch it by hand around each call */
            qmx_status s1, s2;
            setf(&e_s[2], bad_scales[i]);
            s1 = qmx_quantize(&c, e_x, EN, e_s, 3, NULL, e_q, EN);
            CHECK((s1 == QMX_ERR_ARG || (nonfinite && s1 == QMX_ERR_NONFINITE)) && e_untouched(),
                  "%s: quantize gave %d (%s), q untouched %d", what, (int)s1, qmx_status_str(s1), e_untouched());
            memset(e_q, 0, EN);
            s2 = qmx_dequantize(&c, e_q, EN, EN, e_s, 3, NULL, e_y);
            memset(e_q, 0x5A, EN);
            CHECK((s2 == QMX_ERR_ARG || (nonfinite && s2 == QMX_ERR_NONFINITE)) && e_untouched(),
                  "%s: dequantize gave %d (%s)", what, (int)s2, qmx_status_str(s2));
            c.dtype = QMX_FP8_E4M3FN;
            s1 = qmx_quantize(&c, e_x, EN, e_s, 3, NULL, e_q, EN);
            CHECK((s1 == QMX_ERR_ARG || (nonfinite && s1 == QMX_ERR_NONFINITE)) && e_untouched(),
                  "%s: fp8 quantize gave %d (%s)", what, (int)s1, qmx_status_str(s1));
            e_s[2] = keep;
        }
    }
    {   /* valid extremes: a denormal and FLT_MAX scale are accepted */
        c = base_cfg();
        e_reset();
        setf(&e_s[0], 0x00000001u); setf(&e_s[1], 0x7F7FFFFFu);
        st = qmx_quantize(&c, e_x, EN, e_s, 3, NULL, e_q, EN);
        CHECK_EQ_INT(st, QMX_OK, "denormal / FLT_MAX scales are valid");
    }
    {
        static const struct { qmx_dtype d; int32_t z; } badz[] = {
            { QMX_INT8, 128 }, { QMX_INT8, -129 }, { QMX_INT4, 8 }, { QMX_INT4, -9 },
            { QMX_UINT8, -1 }, { QMX_UINT8, 256 }, { QMX_UINT4, 16 }, { QMX_INT16, 32768 },
            { QMX_INT16, -32769 } };
        for (i = 0; i < (int)(sizeof badz / sizeof badz[0]); i++) {
            qmx_status s1, s2;
            size_t qb;
            c = base_cfg(); c.dtype = badz[i].d; c.recipe = QMX_RECIPE_QWIX; c.asymmetric = 1;
            qb = storage_bytes(c.dtype, EN);
            e_reset();
            e_z[1] = badz[i].z;
            s1 = qmx_quantize(&c, e_x, EN, e_s, 3, e_z, e_q, qb);
            CHECK(s1 == QMX_ERR_ARG && e_untouched(), "zp %" PRId32 " for %s: quantize gave %d",
                  badz[i].z, qmx_dtype_name(badz[i].d), (int)s1);
            memset(e_q, 0, qb);
            s2 = qmx_dequantize(&c, e_q, qb, EN, e_s, 3, e_z, e_y);
            memset(e_q, 0x5A, qb);
            CHECK(s2 == QMX_ERR_ARG && e_untouched(), "zp %" PRId32 " for %s: dequantize gave %d",
                  badz[i].z, qmx_dtype_name(badz[i].d), (int)s2);
            /* the range ends themselves are valid */
            e_reset();
            e_z[1] = badz[i].z > 0 ? badz[i].z - 1 : badz[i].z + 1;
            s1 = qmx_quantize(&c, e_x, EN, e_s, 3, e_z, e_q, qb);
            CHECK_EQ_INT(s1, QMX_OK, "zp %" PRId32 " at the end of the %s range", e_z[1], qmx_dtype_name(badz[i].d));
        }
    }

    QMX_TEST_CASE("errors: invalid or unsupported configurations");
    c = base_cfg(); c.asymmetric = 1;   /* AQT is symmetric only */
    expect_err("asymmetric AQT", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_UNSUPPORTED);
    c.dtype = QMX_FP8_E4M3FN; c.recipe = QMX_RECIPE_QWIX;
    expect_err("asymmetric fp8 (qwix)", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_UNSUPPORTED);
    c.recipe = QMX_RECIPE_TFLITE;
    expect_err("asymmetric fp8 (tflite)", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_UNSUPPORTED);
    c = base_cfg(); c.dtype = (qmx_dtype)99;
    expect_err("dtype 99", C_ALL, &c, EN, 3, EN, QMX_ERR_DTYPE, QMX_ERR_DTYPE);
    c.dtype = QMX_FLOAT32;
    expect_err("dtype float32", C_ALL, &c, EN, 3, 4 * EN, QMX_ERR_DTYPE, QMX_ERR_DTYPE);
    c.dtype = (qmx_dtype)-1;
    expect_err("dtype -1", C_ALL, &c, EN, 3, EN, QMX_ERR_DTYPE, QMX_ERR_DTYPE);
    c = base_cfg(); c.granularity = (qmx_granularity)3;
    expect_err("granularity 3", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    c.granularity = (qmx_granularity)-1;
    expect_err("granularity -1", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    c = base_cfg(); c.recipe = (qmx_recipe)5;   /* QMX_RECIPE_ONNX is the last */
    expect_err("recipe 5", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    c = base_cfg(); c.dtype = QMX_NF4; c.asymmetric = 1; c.recipe = QMX_RECIPE_QWIX;
    expect_err("nf4 asymmetric", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    c = base_cfg(); c.dtype = QMX_NF4; c.recipe = QMX_RECIPE_ONNX;
    expect_err("nf4 has no ONNX type", C_ALL, &c, EN, 3, EN, QMX_ERR_DTYPE, QMX_ERR_DTYPE);
    c = base_cfg(); c.dtype = QMX_NF4; c.rounding = QMX_ROUND_HALF_AWAY;
    expect_err("nf4 rounds to the nearest value only", C_ALL, &c, EN, 3, EN, QMX_ERR_UNSUPPORTED,
               QMX_ERR_UNSUPPORTED);
    c = base_cfg(); c.dtype = QMX_FP4_E2M1;
    expect_err("fp4 through qmx_quantize: not yet", C_ALL, &c, EN, 3, EN, QMX_ERR_DTYPE,
               QMX_ERR_DTYPE);
    c = base_cfg(); c.recipe = (qmx_recipe)-1;
    expect_err("recipe -1", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    c = base_cfg(); c.rounding = (qmx_round)4;
    expect_err("rounding 4", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    c.rounding = (qmx_round)-1;
    expect_err("rounding -1", C_ALL, &c, EN, 3, EN, QMX_ERR_ARG, QMX_ERR_ARG);
    /* fp8 is cast nearest-even only (the doc: "cast nearest-even"); other roundings are refused */
    qmx_rng_seed(&rng, 1);
    c = base_cfg(); c.dtype = QMX_FP8_E5M2; c.rounding = QMX_ROUND_HALF_AWAY;
    expect_err("fp8 half-away", C_Q, &c, EN, 3, EN, QMX_ERR_UNSUPPORTED, QMX_ERR_ARG);
    c.rounding = QMX_ROUND_STOCHASTIC; c.rng = &rng;
    expect_err("fp8 stochastic", C_Q, &c, EN, 3, EN, QMX_ERR_UNSUPPORTED, QMX_ERR_ARG);

    QMX_TEST_CASE("qparams_count per granularity");
    c = base_cfg(); c.outer = 2; c.axis_len = 10; c.inner = 3;
    c.granularity = QMX_PER_TENSOR;
    st = qmx_qparams_count(&c, 60, &np_); CHECK(st == QMX_OK && np_ == 1, "per tensor");
    c.granularity = QMX_PER_CHANNEL;
    st = qmx_qparams_count(&c, 60, &np_); CHECK(st == QMX_OK && np_ == 10, "per channel");
    c.granularity = QMX_PER_BLOCK;
    {
        static const size_t bs[] = { 1, 3, 4, 5, 9, 10, 11, 1000 };
        static const size_t want[] = { 60, 24, 18, 12, 12, 6, 6, 6 };
        for (i = 0; i < 8; i++) {
            c.block_size = bs[i];
            np_ = 0;
            st = qmx_qparams_count(&c, 60, &np_);
            CHECK(st == QMX_OK && np_ == want[i], "per block %lu: %lu want %lu", (unsigned long)bs[i],
                  (unsigned long)np_, (unsigned long)want[i]);
        }
    }
    c = base_cfg(); c.outer = 0; c.axis_len = 0; c.inner = 0; c.granularity = QMX_PER_CHANNEL;
    st = qmx_qparams_count(&c, 60, &np_);
    CHECK(st == QMX_OK && np_ == 60, "per channel, default view [1][60][1]: %lu", (unsigned long)np_);
}

int main(void) {
    test_rng();
    run_file("quant_int.txt");
    run_file("quant_fp8.txt");
    run_file("quant_stochastic.txt");
    printf("  golden total: %ld cases, %ld elements\n", n_cases, n_elems);
    test_errors();
    return QMX_TEST_END();
}
