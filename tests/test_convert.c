/* test_convert.c - specification of the qmx_convert weight converter (examples/qmx_convert.c):
 * its .npy / .safetensors readers, float16/bfloat16 conversion, rule syntax, exact float
 * printing, and the C header it emits.
 *
 * Independent references:
 *   - the .npy files in tests/data/convert were written by numpy and model.safetensors by plain struct+json
 *     (tests/gen/gen_convert.py); expected.txt holds the float32 bits numpy reads from each,
 *     and FNV-1a hashes of numpy's float16 -> float32 and bfloat16 -> float32 conversion of all
 *     65536 codes. Reader values must equal numpy's bit for bit (NaN payloads included).
 *   - float16 is also checked against a reference written differently here (m * 2^e by exact
 *     float scaling).
 *   - bad.txt lists hand-made malformed files with the status and a word of the message each
 *     must give; every prefix of every valid file must be refused as well (no crash: this
 *     program runs in the sanitizer build too).
 *   - The emitted header: tests/data/convert/model_ref.h was written by
 *         build/qmx_convert <CONVERT_ARGS below> -o tests/data/convert/model_ref.h
 *     This program regenerates it in memory from the same arguments and requires the same
 *     bytes (the emitter is deterministic on every target: integer-only float printing),
 *     then INCLUDES it (so it compiles in every build: C99 pedantic, C++11, every target) and
 *     checks each descriptor against configs built by hand here, its data and scales against
 *     qmx_quantize of numpy's values, and qmx_dequantize of it against numpy's values within
 *     each format's error bound:
 *         integer formats (AQT, TFLite, Qwix asym): |x - y| <= s/2 (the rounding step; AQT's
 *           clip at 127 of absmax/127.5 also costs exactly s/2), + 1e-6 |x| for float32 ops
 *         fp8 e4m3fn: |x - y| <= 2^-4 |x| (3 mantissa bits, half an ulp) + 2^-10 s (half the
 *           smallest subnormal step), + 1e-6 |x|
 */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx.h"
#include "qmx_test.h"
#include "../examples/qmx_convert/qmx_files.h"
#include "../examples/qmx_convert/qmx_convert_core.h"
#include "data/convert/model_ref.h"

#define DATA "tests/data/convert/"

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float fabs_(float x) { return x < 0 ? -x : x; }

static uint32_t fnv1a_words(const uint32_t *w, size_t n) {
    uint32_t h = 0x811C9DC5u;
    size_t i;
    int k;
    for (i = 0; i < n; i++)
        for (k = 0; k < 4; k++) {
            h ^= (w[i] >> (8 * k)) & 0xFFu;
            h *= 0x01000193u;
        }
    return h;
}

static const char *status_name(qmx_status s) {
    switch (s) {
    case QMX_OK: return "QMX_OK";
    case QMX_ERR_NULL: return "QMX_ERR_NULL";
    case QMX_ERR_SIZE: return "QMX_ERR_SIZE";
    case QMX_ERR_SHAPE: return "QMX_ERR_SHAPE";
    case QMX_ERR_BUFFER_TOO_SMALL: return "QMX_ERR_BUFFER_TOO_SMALL";
    case QMX_ERR_OVERFLOW: return "QMX_ERR_OVERFLOW";
    case QMX_ERR_DTYPE: return "QMX_ERR_DTYPE";
    case QMX_ERR_ARG: return "QMX_ERR_ARG";
    case QMX_ERR_NONFINITE: return "QMX_ERR_NONFINITE";
    case QMX_ERR_PARSE: return "QMX_ERR_PARSE";
    case QMX_ERR_UNSUPPORTED: return "QMX_ERR_UNSUPPORTED";
    }
    return "?";
}

static const qmxf_tensor *find(const qmxf_list *l, const char *name) {
    size_t i;
    for (i = 0; i < l->n; i++)
        if (strcmp(l->t[i].name, name) == 0) return &l->t[i];
    return NULL;
}

/* ---- float16 / bfloat16 ---- */
static void test_half_conversions(FILE *exp) {
    static uint32_t bits[65536];
    char line[256], what[64];
    unsigned long want_f16 = 0, want_bf16 = 0;
    uint32_t i;
    long mism = 0;
    rewind(exp);
    while (qmx_test_next_line(exp, line, sizeof line)) {
        unsigned long h;
        if (sscanf(line, "hash %63s %lx", what, &h) == 2) {
            if (strcmp(what, "f16_all") == 0) want_f16 = h;
            if (strcmp(what, "bf16_all") == 0) want_bf16 = h;
        }
    }
    QMX_TEST_CASE("float16 -> float32 equals numpy's astype for all 65536 codes (FNV-1a of the bits)");
    for (i = 0; i < 65536; i++) bits[i] = qmxf_f16_to_f32_bits((uint16_t)i);
    CHECK(want_f16 != 0 && fnv1a_words(bits, 65536) == (uint32_t)want_f16, "hash %08lx, numpy %08lx",
          (unsigned long)fnv1a_words(bits, 65536), want_f16);

    QMX_TEST_CASE("float16 -> float32 equals m * 2^(e-25) for every finite code (independent reference)");
    for (i = 0; i < 65536; i++) {
        uint32_t e = (i >> 10) & 0x1F, m = i & 0x3FF;
        volatile float v;
        int k, p;
        if (e == 31) { /* Inf/NaN: exponent all ones, payload shifted, sign kept */
            if (bits[i] != (((i & 0x8000u) << 16) | 0x7F800000u | (m << 13))) mism++;
            continue;
        }
        v = (float)(e ? (m | 0x400u) : m);
        p = (e ? (int)e : 1) - 25; /* value = mant * 2^(e - 25) */
        for (k = 0; k < (p < 0 ? -p : p); k++) v = p < 0 ? v * 0.5f : v * 2.0f; /* exact */
        if (i & 0x8000u) v = -v;
        if (fbits(v) != bits[i]) mism++;
    }
    CHECK(mism == 0, "%ld codes differ", mism);

    QMX_TEST_CASE("bfloat16 -> float32 equals numpy's (code << 16) for all 65536 codes");
    for (i = 0; i < 65536; i++) bits[i] = qmxf_bf16_to_f32_bits((uint16_t)i);
    CHECK(want_bf16 != 0 && fnv1a_words(bits, 65536) == (uint32_t)want_bf16, "hash mismatch");
    CHECK(fbits(qmxf_bf16_to_f32(0x3F80)) == 0x3F800000u, "bf16 1.0");
    CHECK(fbits(qmxf_f16_to_f32(0x3C00)) == 0x3F800000u, "f16 1.0");
    CHECK(qmxf_f16_to_f32_bits(0x7C01) == 0x7F802000u,
          "f16 signalling NaN keeps its payload (numpy: 0x7f802000)");
}

/* ---- the readers against numpy ---- */
static void test_values_equal_numpy(FILE *exp) {
    char line[512], file[64], name[64], dt[16], path[128], err[512];
    unsigned long count;
    int rank;
    rewind(exp);
    QMX_TEST_CASE(
        "every tensor read from numpy-written .npy / .safetensors equals numpy's values bit for bit");
    while (qmx_test_next_line(exp, line, sizeof line)) {
        qmxf_list l;
        const qmxf_tensor *t;
        unsigned long dims[8] = {0};
        size_t i;
        int k, n;
        qmx_status st;
        if (strncmp(line, "tensor ", 7) != 0) continue;
        n = sscanf(line, "tensor %63s %63s %15s %lu %d %lu %lu %lu %lu %lu %lu %lu %lu", file, name, dt,
                   &count, &rank, &dims[0], &dims[1], &dims[2], &dims[3], &dims[4], &dims[5], &dims[6],
                   &dims[7]);
        CHECK(n == 5 + rank, "malformed expected.txt line: %s", line);
        memset(&l, 0, sizeof l);
        snprintf(path, sizeof path, DATA "%s", file);
        st = qmxf_read_file(path, &l, err, sizeof err);
        CHECK(st == QMX_OK, "%s: %s", path, err);
        t = find(&l, name);
        CHECK(t != NULL, "%s: tensor %s not found", file, name);
        if (t) {
            CHECK(strcmp(qmxf_source_dtype_name(t->source_dtype), dt) == 0, "%s %s: dtype %s, numpy %s", file,
                  name, qmxf_source_dtype_name(t->source_dtype), dt);
            CHECK(t->rank == rank && t->count == count, "%s %s: rank %d count %lu, numpy %d %lu", file, name,
                  t->rank, (unsigned long)t->count, rank, count);
            for (k = 0; k < rank && k < t->rank; k++)
                CHECK(t->dims[k] == dims[k], "%s %s: dim %d", file, name, k);
        }
        for (i = 0; i < count; i++) {
            unsigned long w;
            if (fscanf(exp, "%lx", &w) != 1) {
                CHECK(0, "expected.txt ends early");
                break;
            }
            if (t && i < t->count) {
                uint32_t got;
                memcpy(&got, &t->data[i], 4);
                CHECK(got == (uint32_t)w, "%s %s[%lu]: %08lx, numpy %08lx", file, name, (unsigned long)i,
                      (unsigned long)got, w);
            }
        }
        qmxf_list_free(&l);
    }
    { /* a safetensors file keeps the header's tensor order */
        qmxf_list l;
        static const char *order[] = {"fc1.weight", "fc1.bias", "fc2.weight", "embed.weight", "norm.scale"};
        size_t i;
        memset(&l, 0, sizeof l);
        QMX_TEST_CASE("safetensors tensors come in header order, whatever the buffer order");
        CHECK(qmxf_read_file(DATA "model.safetensors", &l, err, sizeof err) == QMX_OK && l.n == 5, "%s", err);
        for (i = 0; i < l.n && i < 5; i++)
            CHECK(strcmp(l.t[i].name, order[i]) == 0, "tensor %lu is %s", (unsigned long)i, l.t[i].name);
        qmxf_list_free(&l);
    }
}

/* ---- malformed files ---- */
static void test_malformed_files(void) {
    FILE *f = qmx_test_open("convert/bad.txt");
    char line[256], file[96], want[32], word[64], path[160], err[512];
    int files = 0;
    QMX_TEST_CASE("each hand-made malformed file gives its status and a message naming the defect");
    while (f && qmx_test_next_line(f, line, sizeof line)) {
        qmxf_list l;
        qmx_status st;
        char *u;
        if (sscanf(line, "%95s %31s %63s", file, want, word) != 3) {
            CHECK(0, "bad.txt: %s", line);
            continue;
        }
        for (u = word; *u; u++)
            if (*u == '+') *u = ' '; /* '+' stands for a space */
        memset(&l, 0, sizeof l);
        snprintf(path, sizeof path, DATA "%s", file);
        err[0] = 0;
        st = qmxf_read_file(path, &l, err, sizeof err);
        CHECK(strcmp(status_name(st), want) == 0, "%s: %s (%s), want %s", file, status_name(st), err, want);
        CHECK(strstr(err, word) != NULL, "%s: message '%s' lacks '%s'", file, err, word);
        CHECK(l.n == 0 && l.t == NULL, "%s: the list was touched on error", file);
        qmxf_list_free(&l);
        files++;
    }
    CHECK(files >= 40, "only %d malformed files", files);
    if (f) fclose(f);
}

/* Every strict prefix of a valid file, and a few single-byte corruptions, must be refused
 * or read without crashing; prefixes must be refused. */
static void test_prefixes(const char *file, int is_npy) {
    uint8_t *buf = NULL, *cp;
    size_t len = 0, n, i;
    char err[512];
    long accepted = 0;
    qmx_status st;
    QMX_TEST_CASE("every strict prefix of a valid file is refused with a message, never a crash");
    st = qmxf_slurp(file, &buf, &len, err, sizeof err);
    CHECK(st == QMX_OK, "%s", err);
    if (st) return;
    cp = (uint8_t *)malloc(len);
    for (n = 0; n < len; n++) {
        qmxf_list l;
        memset(&l, 0, sizeof l);
        memcpy(cp, buf, n); /* an exact-size copy so that ASan sees any over-read */
        err[0] = 0;
        st = is_npy ? qmxf_read_npy(cp, n, "x", &l, err, sizeof err)
                    : qmxf_read_safetensors(cp, n, &l, err, sizeof err);
        if (st == QMX_OK)
            accepted++;
        else if (!err[0])
            CHECK(0, "%s: prefix %lu: error without a message", file, (unsigned long)n);
        qmxf_list_free(&l);
    }
    CHECK(accepted == 0, "%s: %ld strict prefixes accepted", file, accepted);
    QMX_TEST_CASE("single-byte corruptions of a valid file never crash and leave no partial result");
    for (i = 0; i < len && i < 600; i++) {
        static const uint8_t vals[] = {0x00, 0xFF, '"', '[', '9', ','};
        size_t v;
        for (v = 0; v < sizeof vals; v++) {
            qmxf_list l;
            memset(&l, 0, sizeof l);
            memcpy(cp, buf, len);
            cp[i] = vals[v];
            st = is_npy ? qmxf_read_npy(cp, len, "x", &l, err, sizeof err)
                        : qmxf_read_safetensors(cp, len, &l, err, sizeof err);
            if (st != QMX_OK) CHECK(l.n == 0, "partial result on error");
            qmxf_list_free(&l);
        }
    }
    free(cp);
    free(buf);
}

static void test_reader_arguments(void) {
    qmxf_list l;
    char err[256];
    uint8_t hdr[8 + 128];
    const char *json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},\"__metadata__\":{}}";
    size_t jl = strlen(json);
    memset(&l, 0, sizeof l);
    QMX_TEST_CASE("NULL buffers and lists are QMX_ERR_NULL");
    CHECK(qmxf_read_npy(NULL, 0, "x", &l, err, sizeof err) == QMX_ERR_NULL, "npy NULL buf");
    CHECK(qmxf_read_npy(hdr, 8, "x", NULL, err, sizeof err) == QMX_ERR_NULL, "npy NULL list");
    CHECK(qmxf_read_safetensors(NULL, 0, &l, err, sizeof err) == QMX_ERR_NULL, "st NULL buf");
    CHECK(qmxf_read_file("tests/data/convert/does_not_exist.npy", &l, err, sizeof err) == QMX_ERR_ARG,
          "missing file");
    QMX_TEST_CASE("a zero-size safetensors tensor and empty __metadata__ are valid");
    CHECK(jl <= 128, "test json too long");
    memset(hdr, 0, 8);
    hdr[0] = (uint8_t)jl;
    memcpy(hdr + 8, json, jl);
    CHECK(qmxf_read_safetensors(hdr, 8 + jl, &l, err, sizeof err) == QMX_OK, "%s", err);
    CHECK(l.n == 1 && l.t[0].count == 0 && l.t[0].data == NULL && l.t[0].rank == 1, "zero-size tensor");
    qmxf_list_free(&l);
    QMX_TEST_CASE("an empty safetensors header {} is a file with no tensors");
    memset(hdr, 0, 8);
    hdr[0] = 2;
    hdr[8] = '{';
    hdr[9] = '}';
    CHECK(qmxf_read_safetensors(hdr, 10, &l, err, sizeof err) == QMX_OK && l.n == 0, "%s", err);
    qmxf_list_free(&l);
}

/* ---- rules ---- */
static void test_rules(void) {
    qmxc_spec s;
    qmxc_rule r;
    char err[256];
    static const char *bad[] = {"",
                                "int9",
                                "int8:per_block=0",
                                "int8:per_block=x",
                                "int8:axis=9",
                                "int8:per_tensor:axis=0",
                                "float:per_channel",
                                "int8:per_tensor:per_channel",
                                "int8:wat",
                                "int8:axis=1:axis=0",
                                "int8:per_block=99999999999",
                                "mxfp4:asym",
                                "mxfp4:rule=nearest",
                                "mxfp4:per_block=0",
                                "mxfp4:per_block=2048",
                                "mxfp8:two_level",
                                "mxfp4:per_block=32:per_block=16",
                                "mxfp6"};
    size_t i;
    QMX_TEST_CASE("spec int4:per_block=32:axis=-1:recipe=qwix:asym parses field by field");
    CHECK(qmxc_parse_spec("int4:per_block=32:axis=-1:recipe=qwix:asym", &s, err, sizeof err) == QMX_OK, "%s",
          err);
    CHECK(s.kind == QMXC_QUANT && s.dtype == QMX_INT4 && s.granularity == QMX_PER_BLOCK &&
              s.block_size == 32 && s.axis_set && s.axis == -1 && s.recipe == QMX_RECIPE_QWIX &&
              s.asymmetric && !s.narrow_range,
          "fields");
    QMX_TEST_CASE("a bare dtype is per channel, AQT, symmetric; fp8 aliases; float and skip");
    CHECK(qmxc_parse_spec("int8", &s, err, sizeof err) == QMX_OK && s.granularity == QMX_PER_CHANNEL &&
              s.recipe == QMX_RECIPE_AQT && !s.asymmetric,
          "int8");
    CHECK(qmxc_parse_spec("e4m3:per_tensor", &s, err, sizeof err) == QMX_OK && s.dtype == QMX_FP8_E4M3FN &&
              s.granularity == QMX_PER_TENSOR,
          "e4m3");
    CHECK(qmxc_parse_spec("fp8_e5m2", &s, err, sizeof err) == QMX_OK && s.dtype == QMX_FP8_E5M2, "e5m2");
    CHECK(qmxc_parse_spec("float", &s, err, sizeof err) == QMX_OK && s.kind == QMXC_FLOAT, "float");
    CHECK(qmxc_parse_spec("skip", &s, err, sizeof err) == QMX_OK && s.kind == QMXC_SKIP, "skip");
    QMX_TEST_CASE("block-scaled specs: OCP FLOOR and the format's block by default; rule, axis, two_level");
    CHECK(qmxc_parse_spec("mxfp4", &s, err, sizeof err) == QMX_OK && s.kind == QMXC_MX && s.mx_format == QMX_MXFP4 &&
              s.mx_rule == QMX_MX_FLOOR && s.block_size == 0 && !s.axis_set && !s.two_level,
          "mxfp4: %s", err);
    CHECK(qmxc_parse_spec("nvfp4:two_level:rule=ggml:axis=0", &s, err, sizeof err) == QMX_OK &&
              s.mx_format == QMX_NVFP4 && s.two_level && s.mx_rule == QMX_MX_GGML && s.axis_set && s.axis == 0,
          "nvfp4: %s", err);
    CHECK(qmxc_parse_spec("mxfp8_e5m2:per_block=16:rule=rceil", &s, err, sizeof err) == QMX_OK &&
              s.mx_format == QMX_MXFP8_E5M2 && s.block_size == 16 && s.mx_rule == QMX_MX_RCEIL,
          "mxfp8_16: %s", err);
    CHECK(qmxc_parse_spec("mxint8", &s, err, sizeof err) == QMX_OK && s.mx_format == QMX_MXINT8 &&
              s.mx_rule == QMX_MX_MICROXCALING,
          "mxint8 defaults to microxcaling's rule (its only origin): %s", err);
    CHECK(qmxc_parse_spec("mxfp6_e3m2:rule=microxcaling", &s, err, sizeof err) == QMX_OK &&
              s.mx_format == QMX_MXFP6_E3M2 && s.mx_rule == QMX_MX_MICROXCALING,
          "mxfp6: %s", err);
    QMX_TEST_CASE("malformed specs are QMX_ERR_PARSE with a message");
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK(qmxc_parse_spec(bad[i], &s, err, sizeof err) == QMX_ERR_PARSE && err[0], "spec '%s' accepted",
              bad[i]);
    }
    QMX_TEST_CASE("a rule splits at the first '=' and needs a pattern");
    CHECK(qmxc_parse_rule("layers.*.w=int4:per_block=64", &r, err, sizeof err) == QMX_OK &&
              strcmp(r.pattern, "layers.*.w") == 0 && r.spec.block_size == 64,
          "rule");
    CHECK(qmxc_parse_rule("=int8", &r, err, sizeof err) == QMX_ERR_PARSE, "empty pattern");
    CHECK(qmxc_parse_rule("int8", &r, err, sizeof err) == QMX_ERR_PARSE, "no =");
    QMX_TEST_CASE("glob: * spans any run including dots, ? one character, the whole name must match");
    CHECK(qmxc_glob("*", "") && qmxc_glob("*", "a.b.c"), "*");
    CHECK(qmxc_glob("layers.*.weight", "layers.10.attn.weight"), "* over dots");
    CHECK(!qmxc_glob("layers.*.weight", "layers.1.weight.bias"), "anchored end");
    CHECK(qmxc_glob("fc?.w", "fc1.w") && !qmxc_glob("fc?.w", "fc12.w"), "?");
    CHECK(qmxc_glob("*a*a*a*", "xaxaxax") &&
              !qmxc_glob("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
          "backtracking");
    CHECK(!qmxc_glob("abc", "ab") && !qmxc_glob("ab", "abc"), "lengths");
}

/* ---- exact float printing ---- */
static void test_float_printing(void) {
    char s[220];
    uint32_t x = 12345u;
    int i;
    long bad = 0;
    QMX_TEST_CASE("floats are printed as their exact decimal value");
    qmxc_fmt_float_bits(0x3F000000u, s);
    CHECK(strcmp(s, "0.5f") == 0, "0.5 -> %s", s);
    qmxc_fmt_float_bits(0x3F800000u, s);
    CHECK(strcmp(s, "1.0f") == 0, "1 -> %s", s);
    qmxc_fmt_float_bits(0xC1200000u, s);
    CHECK(strcmp(s, "-10.0f") == 0, "-10 -> %s", s);
    qmxc_fmt_float_bits(0x80000000u, s);
    CHECK(strcmp(s, "-0.0f") == 0, "-0 -> %s", s);
    qmxc_fmt_float_bits(0x00000000u, s);
    CHECK(strcmp(s, "0.0f") == 0, "0 -> %s", s);
    qmxc_fmt_float_bits(0x3DCCCCCDu, s);
    CHECK(strcmp(s, "0.100000001490116119384765625f") == 0, "0.1f -> %s", s);
    qmxc_fmt_float_bits(0x7F7FFFFFu, s);
    CHECK(strcmp(s, "340282346638528859811704183484516925440.0f") == 0, "FLT_MAX -> %s", s);
    qmxc_fmt_float_bits(0x00000001u, s);
    CHECK(strcmp(s, "0."
                    "0000000000000000000000000000000000000000000014012984643248170709237295832899161312802619"
                    "4187651577175706828388979108268586060148663818836212158203125f") == 0,
          "2^-149 -> %s", s);
    qmxc_fmt_float_bits(0x00800000u, s);
    CHECK(strcmp(s, "0."
                    "0000000000000000000000000000000000000117549435082228750796873653722224567781866555677208"
                    "75215087517062784172594547271728515625f") == 0,
          "FLT_MIN -> %s", s);
    QMX_TEST_CASE("printed floats read back (strtod) to the same bits");
    for (i = 0; i < 3000; i++) {
        uint32_t b;
        float f;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = x;
        if ((b & 0x7F800000u) == 0x7F800000u) continue;
        qmxc_fmt_float_bits(b, s);
        s[strlen(s) - 1] = 0;       /* drop the f suffix */
        f = (float)strtod(s, NULL); /* exact value: double holds it exactly, the cast is exact */
        if (fbits(f) != b) {
            if (bad++ < 5) CHECK(0, "%08lx -> %s -> %08lx", (unsigned long)b, s, (unsigned long)fbits(f));
        }
    }
    CHECK(bad == 0, "%ld round trips failed", bad);
}

/* ---- the emitted header ---- */
/* clang-format off */
static char *convert_argv[] = {
    (char *)"qmx_convert", (char *)"--prefix", (char *)"model_ref",
    (char *)"--rule", (char *)"fc1.weight=int8:per_channel",
    (char *)"--rule", (char *)"fc2.weight=int4:per_block=8",
    (char *)"--rule", (char *)"embed.*=fp8_e4m3fn:per_tensor",
    (char *)"--rule", (char *)"*.bias=float",
    (char *)"--rule", (char *)"norm.scale=uint8:per_tensor:asym:recipe=qwix",
    (char *)"--rule", (char *)"f32_le=int16:per_channel:axis=1:recipe=tflite",
    (char *)"--rule", (char *)"scalar=float",
    (char *)"--rule", (char *)"f32_be=mxfp4:rule=ggml",
    (char *)"--rule", (char *)"f32_v3=nvfp4:two_level:axis=0",
    (char *)"--rule", (char *)"f32_v2=mxfp8_e5m2:per_block=2:rule=rceil",
    (char *)"--default", (char *)"int8:per_tensor:narrow:recipe=tflite",
    (char *)DATA "model.safetensors", (char *)DATA "f32_le.npy", (char *)DATA "f16_be.npy",
    (char *)DATA "scalar.npy", (char *)DATA "empty.npy", (char *)DATA "f32_v2.npy",
    (char *)DATA "f32_be.npy", (char *)DATA "f32_v3.npy",
    (char *)"-o", (char *)DATA "model_ref.h"
};
/* clang-format on */

/* What each tensor's rule means, written out by hand (not derived from the converter). */
typedef struct want_t {
    const char *name;
    qmx_dtype dtype;
    qmx_granularity gran;
    size_t outer, axis_len, inner, block;
    qmx_recipe recipe;
    int asym, narrow;
    int mx; /* 1: block-scaled with the format and rule below */
    qmx_mx_format mx_format;
    qmx_mx_rule mx_rule;
} want_t;
static const want_t wants[] = {
    {"fc1.weight", QMX_INT8, QMX_PER_CHANNEL, 1, 16, 64, 0, QMX_RECIPE_AQT, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"fc1.bias", QMX_FLOAT32, QMX_PER_TENSOR, 1, 16, 1, 0, QMX_RECIPE_AQT, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"fc2.weight", QMX_INT4, QMX_PER_BLOCK, 10, 16, 1, 8, QMX_RECIPE_AQT, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"embed.weight", QMX_FP8_E4M3FN, QMX_PER_TENSOR, 1, 256, 1, 0, QMX_RECIPE_AQT, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"norm.scale", QMX_UINT8, QMX_PER_TENSOR, 1, 32, 1, 0, QMX_RECIPE_QWIX, 1, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"f32_le", QMX_INT16, QMX_PER_CHANNEL, 4, 16, 1, 0, QMX_RECIPE_TFLITE, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"f16_be", QMX_INT8, QMX_PER_TENSOR, 1, 64, 1, 0, QMX_RECIPE_TFLITE, 0, 1, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"scalar", QMX_FLOAT32, QMX_PER_TENSOR, 1, 1, 1, 0, QMX_RECIPE_AQT, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    {"empty", QMX_FLOAT32, QMX_PER_TENSOR, 1, 0, 1, 0, QMX_RECIPE_AQT, 0, 0, 0, QMX_MXFP8_E4M3, QMX_MX_FLOOR},
    /* block-scaled: elements of the format's dtype, blocks along the axis */
    {"f32_v2", QMX_FP8_E5M2, QMX_PER_BLOCK, 1, 3, 1, 2, QMX_RECIPE_AQT, 0, 0, 1, QMX_MXFP8_E5M2, QMX_MX_RCEIL},
    {"f32_be", QMX_FP4_E2M1, QMX_PER_BLOCK, 6, 4, 1, 32, QMX_RECIPE_AQT, 0, 0, 1, QMX_MXFP4, QMX_MX_GGML},
    {"f32_v3", QMX_FP4_E2M1, QMX_PER_BLOCK, 1, 2, 2, 16, QMX_RECIPE_AQT, 0, 0, 1, QMX_NVFP4, QMX_MX_FLOOR},
};

static void test_emitted_header(void) {
    qmxc_options o;
    qmxf_list l;
    qmxc_buf out;
    char err[512];
    uint8_t *ref = NULL;
    size_t ref_len = 0, i, k;
    qmx_status st;
    int argc = (int)(sizeof convert_argv / sizeof convert_argv[0]);

    memset(&l, 0, sizeof l);
    memset(&out, 0, sizeof out);
    QMX_TEST_CASE("the converter regenerates tests/data/convert/model_ref.h byte for byte");
    st = qmxc_parse_args(argc, convert_argv, &o, err, sizeof err);
    CHECK(st == QMX_OK && o.n_inputs == 8 && o.n_rules == 10, "%s", err);
    if (st) return;
    for (i = 0; i < o.n_inputs && st == QMX_OK; i++) st = qmxf_read_file(o.inputs[i], &l, err, sizeof err);
    CHECK(st == QMX_OK, "%s", err);
    if (!st) st = qmxc_convert(&o, &l, &out, NULL, err, sizeof err);
    CHECK(st == QMX_OK, "%s", err);
    CHECK(qmxf_slurp(DATA "model_ref.h", &ref, &ref_len, err, sizeof err) == QMX_OK, "%s", err);
    if (st == QMX_OK && ref) {
        size_t first = 0;
        while (first < out.n && first < ref_len && out.p[first] == (char)ref[first]) first++;
        CHECK(out.n == ref_len && first == ref_len, "differs from byte %lu (sizes %lu / %lu)",
              (unsigned long)first, (unsigned long)out.n, (unsigned long)ref_len);
    }
    free(ref);
    qmxc_buf_free(&out);

    QMX_TEST_CASE("the included header: descriptors as the rules say, data = qmx_quantize of numpy's values");
    CHECK(MODEL_REF_TENSOR_COUNT == sizeof wants / sizeof wants[0], "tensor count %d",
          MODEL_REF_TENSOR_COUNT);
    for (k = 0; k < MODEL_REF_TENSOR_COUNT && k < sizeof wants / sizeof wants[0]; k++) {
        const qmx_model_tensor *d = model_ref_tensors[k];
        const want_t *w = &wants[k];
        const qmxf_tensor *t = find(&l, w->name);
        qmx_qconfig c = QMX_ZERO_INIT;
        size_t np = 0, qb = 0, j;
        float *sc, *y;
        int32_t *zp;
        uint8_t *q;
        double worst = 0;
        CHECK(strcmp(d->name, w->name) == 0, "tensor %lu is %s, want %s", (unsigned long)k, d->name, w->name);
        CHECK(t != NULL, "source tensor %s", w->name);
        if (!t) continue;
        CHECK(d->dtype == w->dtype && d->granularity == w->gran && d->outer == w->outer &&
                  d->axis_len == w->axis_len && d->inner == w->inner && d->block_size == w->block &&
                  d->recipe == w->recipe && d->asymmetric == w->asym && d->narrow_range == w->narrow &&
                  d->preserve_max_val == 0,
              "%s: descriptor fields", w->name);
        CHECK(d->rank == t->rank && d->count == t->count, "%s: rank/count", w->name);
        for (j = 0; j < (size_t)t->rank; j++)
            CHECK(d->shape[j] == t->dims[j], "%s: shape[%lu]", w->name, (unsigned long)j);
#if defined(__GNUC__) || defined(__clang__)
        if (d->data) CHECK(((uintptr_t)d->data & 15u) == 0, "%s: data not 16-byte aligned", w->name);
#endif
        CHECK(d->mx == w->mx, "%s: mx flag", w->name);
        if (w->mx) {
            /* the header's codes = qmx_mx_quantize with a config built here; its dequantized
               values within half the block's absmax of numpy's (a sanity bound: the codecs and
               rules are checked bit for bit against CUDA / torchao / ggml in test_mx.c) */
            qmx_mx_config mc = QMX_ZERO_INIT;
            size_t eb = 0, ns = 0;
            float ts = 0.0f;
            CHECK(d->mx_format == w->mx_format && d->mx_rule == w->mx_rule && d->scales == NULL &&
                      d->scale_codes != NULL && d->zero_points == NULL,
                  "%s: mx descriptor", w->name);
            if (w->mx_format == QMX_NVFP4) { /* two_level: torchao's amax / (F8E4M3_MAX * F4_E2M1_MAX) */
                volatile float am = 0.0f, q_;
                for (j = 0; j < t->count; j++) am = fabs_(t->data[j]) > am ? fabs_(t->data[j]) : am;
                q_ = am / 2688.0f;
                ts = q_;
            }
            CHECK(d->mx_tensor_scale == ts, "%s: tensor scale %g, want %g", w->name, (double)d->mx_tensor_scale,
                  (double)ts);
            mc.format = w->mx_format;
            mc.rule = w->mx_rule;
            mc.block_size = w->block;
            mc.outer = w->outer;
            mc.axis_len = w->axis_len;
            mc.inner = w->inner;
            mc.tensor_scale = ts;
            CHECK(qmx_mx_storage(&mc, t->count, &eb, &ns) == QMX_OK && eb == d->data_bytes && ns == d->n_scales,
                  "%s: storage %lu bytes %lu codes", w->name, (unsigned long)d->data_bytes,
                  (unsigned long)d->n_scales);
            if (eb != d->data_bytes || ns != d->n_scales) continue;
            q = (uint8_t *)malloc(eb + ns);
            y = (float *)malloc(t->count * sizeof(float));
            CHECK(qmx_mx_quantize(&mc, t->data, t->count, q, eb, q + eb, ns) == QMX_OK &&
                      memcmp(q, d->data, eb) == 0 && memcmp(q + eb, d->scale_codes, ns) == 0,
                  "%s: elements / codes differ from qmx_mx_quantize", w->name);
            CHECK(qmx_mx_dequantize(&mc, (const uint8_t *)d->data, d->data_bytes, d->scale_codes, d->n_scales,
                                    d->count, y) == QMX_OK,
                  "%s: dequantize", w->name);
            for (j = 0; j < t->count; j++) {
                size_t o_ = j / (w->axis_len * w->inner), a = (j / w->inner) % w->axis_len, in = j % w->inner, e;
                float am = 0.0f;
                for (e = a / w->block * w->block; e < a / w->block * w->block + w->block && e < w->axis_len; e++) {
                    float v = fabs_(t->data[(o_ * w->axis_len + e) * w->inner + in]);
                    am = v > am ? v : am;
                }
                CHECK(fabs_(t->data[j] - y[j]) <= 0.5f * am, "%s[%lu]: x %.9g, dequantized %.9g (block amax %g)",
                      w->name, (unsigned long)j, (double)t->data[j], (double)y[j], (double)am);
                if (fabs_(t->data[j] - y[j]) > worst) worst = fabs_(t->data[j] - y[j]);
            }
            CHECK(worst > 0, "%s: quantization error is exactly zero everywhere (suspicious)", w->name);
            free(q);
            free(y);
            continue;
        }
        if (w->dtype == QMX_FLOAT32) {
            CHECK(d->n_scales == 0 && d->scales == NULL && d->data_bytes == 4 * t->count, "%s: float layout",
                  w->name);
            if (d->data)
                CHECK(memcmp(d->data, t->data, 4 * t->count) == 0, "%s: kept floats differ from numpy's",
                      w->name);
            else
                CHECK(t->count == 0, "%s: no data", w->name);
            continue;
        }
        c.dtype = w->dtype;
        c.granularity = w->gran;
        c.outer = w->outer;
        c.axis_len = w->axis_len;
        c.inner = w->inner;
        c.block_size = w->block;
        c.recipe = w->recipe;
        c.asymmetric = w->asym;
        c.narrow_range = w->narrow;
        CHECK(qmx_qparams_count(&c, t->count, &np) == QMX_OK && np == d->n_scales, "%s: %lu scales, want %lu",
              w->name, (unsigned long)d->n_scales, (unsigned long)np);
        CHECK(qmx_dtype_storage_bytes(c.dtype, t->count, &qb) == QMX_OK && qb == d->data_bytes,
              "%s: data bytes", w->name);
        CHECK((d->zero_points != NULL) == (w->asym != 0), "%s: zero points", w->name);
        if (np != d->n_scales || qb != d->data_bytes) continue;
        sc = (float *)malloc(np * sizeof(float));
        zp = (int32_t *)malloc(np * sizeof(int32_t));
        q = (uint8_t *)malloc(qb);
        y = (float *)malloc(t->count * sizeof(float));
        CHECK(qmx_compute_qparams(&c, t->data, t->count, sc, np, w->asym ? zp : NULL) == QMX_OK,
              "%s: qparams", w->name);
        CHECK(qmx_quantize(&c, t->data, t->count, sc, np, w->asym ? zp : NULL, q, qb) == QMX_OK,
              "%s: quantize", w->name);
        CHECK(memcmp(sc, d->scales, np * sizeof(float)) == 0, "%s: scales differ from qmx_compute_qparams",
              w->name);
        if (w->asym)
            CHECK(memcmp(zp, d->zero_points, np * sizeof(int32_t)) == 0, "%s: zero points differ", w->name);
        CHECK(memcmp(q, d->data, qb) == 0, "%s: data differ from qmx_quantize", w->name);
        /* dequantize the header's arrays, compare with numpy's values within the format's bound */
        CHECK(qmx_dequantize(&c, d->data, d->data_bytes, d->count, d->scales, d->n_scales, d->zero_points,
                             y) == QMX_OK,
              "%s: dequantize", w->name);
        for (j = 0; j < t->count; j++) {
            size_t g; /* the scale index of element j, from the view by hand */
            size_t o_ = j / (w->axis_len * w->inner), a = (j / w->inner) % w->axis_len, in = j % w->inner;
            float s, x = t->data[j], err_, bound;
            if (w->gran == QMX_PER_TENSOR)
                g = 0;
            else if (w->gran == QMX_PER_CHANNEL)
                g = a;
            else
                g = (o_ * ((w->axis_len + w->block - 1) / w->block) + a / w->block) * w->inner + in;
            s = d->scales[g];
            err_ = fabs_(x - y[j]);
            bound = qmx_dtype_is_fp8(w->dtype) ? fabs_(x) / 16.0f + s / 1024.0f : 0.5f * s;
            bound += 1e-6f * fabs_(x) + 1e-7f * s;
            if (err_ / s > worst) worst = err_ / s;
            CHECK(err_ <= bound, "%s[%lu]: x %.9g, dequantized %.9g, scale %.9g", w->name, (unsigned long)j,
                  x, y[j], s);
        }
        CHECK(worst > 0, "%s: quantization error is exactly zero everywhere (suspicious)", w->name);
        free(sc);
        free(zp);
        free(q);
        free(y);
    }
    QMX_TEST_CASE(
        "converter errors: NaN in a kept-float tensor, bad axis, all skipped, bad prefix, no inputs");
    {
        qmxf_tensor *t = (qmxf_tensor *)find(&l, "fc1.bias");
        qmxc_spec sp;
        qmxc_result r;
        char *args1[] = {(char *)"qmx_convert", (char *)"--prefix", (char *)"9bad", (char *)"x.npy"};
        char *args2[] = {(char *)"qmx_convert", (char *)"--rule", (char *)"a=int9"};
        char *args3[] = {(char *)"qmx_convert", (char *)"--default"};
        char *args4[] = {(char *)"qmx_convert", (char *)"--default", (char *)"skip", (char *)"x.npy"};
        qmxc_options o2;
        uint32_t nan_bits = 0x7FC00000u, saved;
        if (t) {
            memcpy(&saved, &t->data[3], 4);
            memcpy(&t->data[3], &nan_bits, 4);
            qmxc_parse_spec("float", &sp, err, sizeof err);
            CHECK(qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_ERR_NONFINITE &&
                      strstr(err, "fc1.bias"),
                  "float NaN: %s", err);
            qmxc_parse_spec("int8", &sp, err, sizeof err);
            CHECK(qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_ERR_NONFINITE &&
                      strstr(err, "NaN"),
                  "int8 NaN: %s", err);
            qmxc_parse_spec("mxfp4", &sp, err, sizeof err);
            CHECK(qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_ERR_NONFINITE &&
                      strstr(err, "NaN"),
                  "mxfp4 NaN (a converter refuses it although qmx_mx_quantize encodes it): %s", err);
            memcpy(&t->data[3], &saved, 4);
            /* uint16 and the torch / ONNX recipes: a zero-point array even when symmetric
             * (the middle of the unsigned range), values as ONNX's QuantizeLinear */
            CHECK(qmxc_parse_spec("uint16:per_tensor:recipe=onnx", &sp, err, sizeof err) == QMX_OK &&
                      qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_OK,
                  "uint16 onnx: %s", err);
            if (r.q) {
                size_t e;
                float am = 0.0f;
                int bad = 0;
                for (e = 0; e < t->count; e++) {
                    float a = t->data[e] < 0.0f ? -t->data[e] : t->data[e];
                    am = a > am ? a : am;
                }
                volatile float want_s = am + am;   /* one float32 rounding per step */
                want_s = want_s / 65535.0f;
                CHECK(r.cfg.dtype == QMX_UINT16 && r.zp && r.zp[0] == 32768 && r.n_scales == 1 &&
                          r.scales[0] == want_s,
                      "uint16 onnx parameters %g %d", (double)r.scales[0], r.zp ? (int)r.zp[0] : -1);
                for (e = 0; e < t->count; e++) {
                    volatile float v = t->data[e] / r.scales[0];
                    double fl = (double)(long)v, fr = (double)v - fl;   /* |v| <= 32767.5 */
                    long k = (long)fl + (fr > 0.5 || (fr == 0.5 && ((long)fl & 1))) -
                             (fr < -0.5 || (fr == -0.5 && ((long)fl & 1))) + 32768;
                    k = k < 0 ? 0 : k > 65535 ? 65535 : k;
                    bad += ((const uint16_t *)r.q)[e] != (uint16_t)k;
                }
                CHECK(bad == 0, "uint16 onnx: %d values", bad);
                qmxc_result_free(&r);
            }
            /* Qwix's widths and nf4: the dtype, the storage size, the values within range */
            CHECK(qmxc_parse_spec("int3:per_tensor:recipe=qwix", &sp, err, sizeof err) == QMX_OK &&
                      sp.dtype == QMX_INT3 && qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_OK &&
                      r.q_bytes == t->count,
                  "int3: %s", err);
            if (r.q) {
                size_t e;
                int bad = 0;
                for (e = 0; e < t->count; e++) bad += ((const int8_t *)r.q)[e] < -4 || ((const int8_t *)r.q)[e] > 3;
                CHECK(bad == 0, "int3 values outside [-4, 3]: %d", bad);
                qmxc_result_free(&r);
            }
            CHECK(qmxc_parse_spec("nf4:per_tensor", &sp, err, sizeof err) == QMX_OK && sp.dtype == QMX_NF4 &&
                      qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_OK &&
                      r.q_bytes == (t->count + 1) / 2,
                  "nf4: %s", err);
            if (r.q) qmxc_result_free(&r);
            CHECK(qmxc_parse_spec("uint8:per_tensor:recipe=torch", &sp, err, sizeof err) == QMX_OK &&
                      qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_OK && r.zp &&
                      r.zp[0] == 128 && r.cfg.recipe == QMX_RECIPE_TORCH,
                  "uint8 torch symmetric: zero point 128: %s", err);
            if (r.q) qmxc_result_free(&r);
            /* block-scaled: a rule the format's origin does not define is refused by qmx_mx_storage */
            CHECK(qmxc_parse_spec("mxint8:rule=floor", &sp, err, sizeof err) == QMX_OK &&
                      qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_ERR_UNSUPPORTED && r.q == NULL,
                  "mxint8 floor: %s", err);
            CHECK(qmxc_parse_spec("mxfp4:axis=3", &sp, err, sizeof err) == QMX_OK &&
                      qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_ERR_SHAPE && strstr(err, "axis"),
                  "mxfp4 axis: %s", err);
            qmxc_parse_spec("int8:axis=1", &sp, err, sizeof err);
            CHECK(qmxc_quantize_tensor(t, &sp, &r, err, sizeof err) == QMX_ERR_SHAPE && strstr(err, "axis"),
                  "axis: %s", err);
        }
        CHECK(qmxc_parse_args(4, args1, &o2, err, sizeof err) == QMX_ERR_ARG && strstr(err, "prefix"),
              "prefix: %s", err);
        CHECK(qmxc_parse_args(3, args2, &o2, err, sizeof err) == QMX_ERR_PARSE && strstr(err, "int9"),
              "rule: %s", err);
        CHECK(qmxc_parse_args(2, args3, &o2, err, sizeof err) == QMX_ERR_ARG, "missing value");
        CHECK(qmxc_parse_args(1, args3, &o2, err, sizeof err) == QMX_ERR_ARG && strstr(err, "no input"),
              "no inputs");
        CHECK(qmxc_parse_args(4, args4, &o2, err, sizeof err) == QMX_OK, "skip default");
        CHECK(qmxc_convert(&o2, &l, &out, NULL, err, sizeof err) == QMX_ERR_ARG && strstr(err, "skipped") &&
                  out.p == NULL,
              "all skipped: %s", err);
        qmxc_options_free(&o2);
    }
    qmxf_list_free(&l);
    qmxc_options_free(&o);

    QMX_TEST_CASE("C identifiers: sanitised names never collide with another tensor's arrays or the table");
    {
        static const char *names[] = {"w", "w_q", "w.q", "tensors", "0abc", "a-b/c d"};
        static const char *want[] = {"model_w = {",         "model_w_q_2 = {",  "model_w_q_3 = {",
                                     "model_tensors_2 = {", "model_t_0abc = {", "model_a_b_c_d = {",
                                     "model_w_q[1]",        "\"a-b/c d\""};
        char *args[] = {(char *)"qmx_convert", (char *)"--default", (char *)"float", (char *)"x"};
        qmxf_list m;
        qmxc_options o3;
        size_t n;
        float one = 1.0f;
        memset(&m, 0, sizeof m);
        m.n = m.cap = sizeof names / sizeof names[0];
        m.t = (qmxf_tensor *)calloc(m.n, sizeof(qmxf_tensor));
        for (n = 0; m.t && n < m.n; n++) {
            strcpy(m.t[n].name, names[n]);
            m.t[n].source_dtype = QMXF_F32;
            m.t[n].count = 1;
            m.t[n].data = (float *)malloc(sizeof(float));
            if (m.t[n].data) m.t[n].data[0] = one;
        }
        CHECK(qmxc_parse_args(4, args, &o3, err, sizeof err) == QMX_OK, "%s", err);
        CHECK(qmxc_convert(&o3, &m, &out, NULL, err, sizeof err) == QMX_OK, "%s", err);
        for (n = 0; out.p && n < sizeof want / sizeof want[0]; n++)
            CHECK(strstr(out.p, want[n]) != NULL, "no '%s' in the header", want[n]);
        qmxc_buf_free(&out);
        qmxc_options_free(&o3);
        qmxf_list_free(&m);
    }
}

/* ---- MaxText intmp rules (--intmp) ---- */
static void test_intmp(void) {
    uint8_t *json = NULL;
    size_t len = 0;
    char err[512];
    qmxc_intmp im;
    qmxc_spec sp;
    int found = -1;
    memset(&im, 0, sizeof im);
    QMX_TEST_CASE(
        "intmp: the LAST matching regex wins, fields inherit from __default__, null bits keep float");
    CHECK(qmxf_slurp(DATA "intmp.json", &json, &len, err, sizeof err) == QMX_OK, "%s", err);
    if (!json) return;
    CHECK(qmxc_intmp_load((const char *)json, len, &im, err, sizeof err) == QMX_OK, "%s", err);
    /* fc1.weight matches fc[0-9]\.weight (w4, tile 8) and later fc1\.weight (w8): w8, no tile */
    CHECK(qmxc_intmp_spec(&im, "fc1.weight", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.kind == QMXC_QUANT && sp.dtype == QMX_INT8 && sp.granularity == QMX_PER_CHANNEL &&
              sp.recipe == QMX_RECIPE_AQT && !sp.asymmetric,
          "fc1.weight");
    CHECK(qmxc_intmp_spec(&im, "fc2.weight", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.dtype == QMX_INT4 && sp.granularity == QMX_PER_BLOCK && sp.block_size == 8,
          "fc2.weight: int4 tile 8");
    CHECK(qmxc_intmp_spec(&im, "fc1.bias", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.kind == QMXC_FLOAT,
          "bias: null -> float");
    CHECK(qmxc_intmp_spec(&im, "norm.scale", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.dtype == QMX_INT16 && sp.granularity == QMX_PER_CHANNEL,
          "norm: w16, w_scale 1.5 ignored");
    CHECK(qmxc_intmp_spec(&im, "embed.weight", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.dtype == QMX_INT8 && sp.granularity == QMX_PER_BLOCK && sp.block_size == 16,
          "embed: w_bits 8 inherited, tile 16");
    CHECK(qmxc_intmp_spec(&im, "xyz", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.dtype == QMX_INT8 && sp.granularity == QMX_PER_CHANNEL,
          "no match: __default__");
    CHECK(qmxc_intmp_spec(&im, "fc1xweight", &sp, &found, err, sizeof err) == QMX_OK && found &&
              sp.dtype == QMX_INT8 && sp.granularity == QMX_PER_CHANNEL,
          "an escaped dot is literal: fc1xweight gets __default__");
    qmxc_intmp_free(&im);
    free(json);
    QMX_TEST_CASE("intmp: unsupported widths, clipping scales and malformed JSON are refused with a message");
    {
        static const char *bad[] = {"{\"__default__\": {\"w_bits\": 9}}",
                                    "{\"a\": {\"w_bits\": 8, \"w_scale\": 0.5}}"};
        static const qmx_status want[] = {QMX_ERR_UNSUPPORTED, QMX_ERR_UNSUPPORTED};
        size_t i;
        for (i = 0; i < 2; i++) {
            CHECK(qmxc_intmp_load(bad[i], strlen(bad[i]), &im, err, sizeof err) == QMX_OK, "%s", err);
            CHECK(qmxc_intmp_spec(&im, "a", &sp, &found, err, sizeof err) == want[i] && err[0], "%s", bad[i]);
            qmxc_intmp_free(&im);
        }
        CHECK(qmxc_intmp_load("{\"a\": {\"w_bits\": 3}}", 20, &im, err, sizeof err) == QMX_OK &&
                  qmxc_intmp_spec(&im, "a", &sp, &found, err, sizeof err) == QMX_OK &&
                  sp.dtype == QMX_INT3 && sp.recipe == QMX_RECIPE_AQT,
              "w_bits 3 -> int3 (AQT IntSymmetric(bits=3)): %s", err);
        qmxc_intmp_free(&im);
        CHECK(qmxc_intmp_load("{\"a\": {\"w_bits\": 8", 15, &im, err, sizeof err) == QMX_ERR_PARSE &&
                  strstr(err, "intmp"),
              "truncated");
        CHECK(qmxc_intmp_load("{\"a\": {}}", 9, &im, err, sizeof err) == QMX_OK, "%s", err);
        found = -1;
        CHECK(qmxc_intmp_spec(&im, "b", &sp, &found, err, sizeof err) == QMX_OK && found == 0,
              "no match, no __default__: not found");
        qmxc_intmp_free(&im);
    }
}

int main(void) {
    FILE *exp = qmx_test_open("convert/expected.txt");
    if (exp) {
        test_half_conversions(exp);
        test_values_equal_numpy(exp);
        fclose(exp);
    }
    test_malformed_files();
    test_prefixes(DATA "f32_v2.npy", 1);
    test_prefixes(DATA "f16_le.npy", 1);
    test_prefixes(DATA "model.safetensors", 0);
    test_reader_arguments();
    test_rules();
    test_float_printing();
    test_emitted_header();
    test_intmp();
    return QMX_TEST_END();
}
