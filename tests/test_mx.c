/* test_mx.c - specification of qmx_mx_quantize / qmx_mx_dequantize (MX and NVFP4 block formats)
 * against tests/data/mx_golden.txt (tests/gen/gen_mx.py): for every case of an origin qmx
 * implements (torchao's FLOOR / CEIL / EVEN / RCEIL and NVFP4, the values transcribed from
 * torchao's own tests, and Qwix's mxfp8 / mxfp8_16 / mxfp4 / nvfp4), the scale codes and the
 * element codes bit for bit and the dequantized values bit for bit (any NaN equals any NaN:
 * the file writes every NaN as 7fc00000). Cases of origins qmx does not implement yet
 * (microxcaling, ggml) are counted and skipped. Then the layout, the view along an inner axis,
 * and the error contract (nothing written on error).
 */
#define QMX_IMPLEMENTATION
#include "qmx.h"
#include "qmx_test.h"

#define MAXN 4096
static char line[80000];
static char *tok[MAXN + 8];
static float xb[MAXN], yb[MAXN], yw[MAXN];
static uint8_t sw[MAXN], ew[MAXN], el[MAXN + 16], sc[MAXN + 16];

static uint32_t hexu(const char *s) { return (uint32_t)strtoul(s, NULL, 16); }
static uint32_t fb(float f) { return qmx_test_f32_bits(f); }
static int same_f(float a, float b) { return fb(a) == fb(b) || (a != a && b != b); }

static int mx_format(const char *s, qmx_mx_format *f) {
    static const struct { const char *n; qmx_mx_format f; } T[] = {
        {"mxfp8_e4m3", QMX_MXFP8_E4M3}, {"mxfp8_e5m2", QMX_MXFP8_E5M2}, {"mxfp6_e2m3", QMX_MXFP6_E2M3},
        {"mxfp6_e3m2", QMX_MXFP6_E3M2}, {"mxfp4", QMX_MXFP4}, {"nvfp4", QMX_NVFP4}};
    size_t i;
    for (i = 0; i < sizeof T / sizeof T[0]; i++) if (!strcmp(s, T[i].n)) { *f = T[i].f; return 1; }
    return 0;
}
static int mx_rule(const char *rule, const char *src, qmx_mx_rule *r) {
    if (!strcmp(src, "qwix")) { *r = QMX_MX_QWIX; return 1; }
    if (strcmp(src, "torchao") && strcmp(src, "torchao_test")) return 0;
    if (!strcmp(rule, "floor") || !strcmp(rule, "torchao")) *r = QMX_MX_FLOOR;
    else if (!strcmp(rule, "ceil")) *r = QMX_MX_CEIL;
    else if (!strcmp(rule, "even")) *r = QMX_MX_EVEN;
    else if (!strcmp(rule, "rceil")) *r = QMX_MX_RCEIL;
    else return 0;
    return 1;
}
static int split(void) {
    qmx_test_chomp(line);
    return qmx_test_split_fields(line, tok, MAXN + 8);
}

static void test_golden(void) {
    FILE *f = qmx_test_open("mx_golden.txt");
    long cases = 0, skipped = 0, elems = 0, blocks = 0;
    QMX_TEST_CASE("MX / NVFP4 golden data: scale codes, element codes and dequantized values");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char name[96], fmt[16], rule[16], rnd[16], src[24];
        unsigned blk, count;
        qmx_mx_config c = QMX_ZERO_INIT;
        int n, have_x = 0, have_s = 0, have_e = 0, skip;
        size_t i, nb = 0, ne = 0, ns = 0, bad;
        if (sscanf(line, "mx %95s %15s %15s %15s %u %u %23s", name, fmt, rule, rnd, &blk, &count,
                   src) != 7)
            continue;
        CHECK(count <= MAXN, "%s: too large", name);
        if (count > MAXN) break;
        skip = !mx_format(fmt, &c.format) || !mx_rule(rule, src, &c.rule);
        c.block_size = blk;
        while (qmx_test_next_line(f, line, sizeof line)) {
            n = split();
            if (n < 1) continue;
            if (!strcmp(tok[0], "end")) break;
            if (!strcmp(tok[0], "x")) {
                for (i = 0; i < count && (int)i + 1 < n; i++) xb[i] = qmx_test_bits_f32(hexu(tok[i + 1]));
                have_x = n == (int)count + 1;
            } else if (!strcmp(tok[0], "t") && n == 2) {
                c.tensor_scale = qmx_test_bits_f32(hexu(tok[1]));
                if (!(c.tensor_scale > 0.0f)) skip = 1;   /* 0 / 0: qmx takes P > 0 only */
            } else if (!strcmp(tok[0], "s")) {
                for (i = 0; (int)i + 1 < n && i < MAXN; i++) sw[i] = (uint8_t)hexu(tok[i + 1]);
                nb = (size_t)n - 1; have_s = 1;
            } else if (!strcmp(tok[0], "e")) {
                for (i = 0; i < count && (int)i + 1 < n; i++) ew[i] = (uint8_t)hexu(tok[i + 1]);
                have_e = n == (int)count + 1;
            } else if (!strcmp(tok[0], "y")) {
                for (i = 0; i < count && (int)i + 1 < n; i++) yw[i] = qmx_test_bits_f32(hexu(tok[i + 1]));
                if (skip) continue;
                CHECK(have_x && have_s && have_e && n == (int)count + 1, "%s: incomplete case", name);
                CHECK_EQ_INT(qmx_mx_storage(&c, count, &ne, &ns), QMX_OK, "%s: storage", name);
                CHECK(ns == nb, "%s: %u scales, the file has %u", name, (unsigned)ns, (unsigned)nb);
                memset(el, 0xA5, sizeof el); memset(sc, 0xA5, sizeof sc);
                CHECK_EQ_INT(qmx_mx_quantize(&c, xb, count, el, ne, sc, ns), QMX_OK, "%s", name);
                for (i = 0, bad = 0; i < ns && i < nb; i++)
                    if (sc[i] != sw[i] && bad++ == 0)
                        CHECK(0, "%s: scale %u got %02x want %02x", name, (unsigned)i, sc[i], sw[i]);
                CHECK(bad == 0, "%s: %u scale codes differ", name, (unsigned)bad);
                for (i = 0, bad = 0; i < count; i++) {
                    uint8_t got = c.format == QMX_MXFP4 || c.format == QMX_NVFP4
                                      ? (uint8_t)((el[i / 2] >> (4 * (i & 1))) & 15) : el[i];
                    if (got != ew[i] && bad++ == 0)
                        CHECK(0, "%s: element %u (x %08x) got %02x want %02x", name, (unsigned)i,
                              (unsigned)fb(xb[i]), got, ew[i]);
                }
                CHECK(bad == 0, "%s: %u element codes differ", name, (unsigned)bad);
                CHECK(el[ne] == 0xA5 && sc[ns] == 0xA5, "%s: written past the outputs", name);
                CHECK_EQ_INT(qmx_mx_dequantize(&c, el, ne, sc, ns, count, yb), QMX_OK, "%s: dq", name);
                for (i = 0, bad = 0; i < count; i++)
                    if (!same_f(yb[i], yw[i]) && bad++ == 0)
                        CHECK(0, "%s: y[%u] got %08x want %08x", name, (unsigned)i,
                              (unsigned)fb(yb[i]), (unsigned)fb(yw[i]));
                CHECK(bad == 0, "%s: %u dequantized values differ", name, (unsigned)bad);
                cases++; elems += (long)count; blocks += (long)nb;
            }
        }
        if (skip) skipped++;
    }
    fclose(f);
    printf("  mx_golden.txt: %ld cases checked (%ld blocks, %ld elements), %ld of other origins skipped\n",
           cases, blocks, elems, skipped);
    CHECK(cases >= 300 && elems > 10000, "checked only %ld cases", cases);
}

/* Along an inner axis: blocks of the view [outer][axis_len][inner] against the same data laid
 * out flat (one block per (outer, block, inner)), and the packed fp4 layout. */
static void test_view_and_layout(void) {
    static float x[4 * 64 * 3], xt[4 * 3 * 64], y[4 * 64 * 3], yt[4 * 3 * 64];
    static uint8_t e1[4 * 64 * 3], e2[4 * 64 * 3], s1[64], s2[64];
    qmx_mx_config c = QMX_ZERO_INIT, ct = QMX_ZERO_INIT;
    size_t o, k, i, ne = 0, ns = 0, bad = 0;
    QMX_TEST_CASE("MX blocks along an inner axis equal the same blocks laid out flat");
    qmx_test_seed(41);
    for (o = 0; o < 4; o++)
        for (k = 0; k < 64; k++)
            for (i = 0; i < 3; i++) {
                float v = (float)((int32_t)(qmx_test_rand() >> 9) - 4194304) * (1.0f / 65536.0f);
                x[(o * 64 + k) * 3 + i] = v;
                xt[(o * 3 + i) * 64 + k] = v;
            }
    c.format = QMX_MXFP8_E4M3; c.rule = QMX_MX_RCEIL; c.outer = 4; c.axis_len = 64; c.inner = 3;
    ct = c; ct.outer = 0; ct.axis_len = 0; ct.inner = 0;
    CHECK(qmx_mx_storage(&c, 768, &ne, &ns) == QMX_OK && ne == 768 && ns == 4 * 2 * 3, "storage");
    CHECK(qmx_mx_quantize(&c, x, 768, e1, ne, s1, ns) == QMX_OK, "view");
    CHECK(qmx_mx_quantize(&ct, xt, 768, e2, ne, s2, ns) == QMX_OK, "flat");
    for (o = 0; o < 4; o++)
        for (i = 0; i < 3; i++) {
            for (k = 0; k < 2; k++) bad += s1[(o * 2 + k) * 3 + i] != s2[(o * 3 + i) * 2 + k];
            for (k = 0; k < 64; k++) bad += e1[(o * 64 + k) * 3 + i] != e2[(o * 3 + i) * 64 + k];
        }
    CHECK(bad == 0, "%u codes differ", (unsigned)bad);
    CHECK(qmx_mx_dequantize(&c, e1, ne, s1, ns, 768, y) == QMX_OK &&
          qmx_mx_dequantize(&ct, e2, ne, s2, ns, 768, yt) == QMX_OK, "dequantize");
    for (o = 0, bad = 0; o < 4; o++)
        for (k = 0; k < 64; k++)
            for (i = 0; i < 3; i++) bad += fb(y[(o * 64 + k) * 3 + i]) != fb(yt[(o * 3 + i) * 64 + k]);
    CHECK(bad == 0, "%u dequantized values differ", (unsigned)bad);

    QMX_TEST_CASE("MXFP4: two codes per byte, element 2i in the low nibble; odd tail nibble 0");
    {
        float v[3] = {1.0f, -6.0f, 0.5f};   /* amax 6: FLOOR scale 2^(2 - 2) = 1 */
        uint8_t e[2] = {0xFF, 0xFF}, s[1] = {0};
        qmx_mx_config c4 = QMX_ZERO_INIT;
        c4.format = QMX_MXFP4;
        CHECK(qmx_mx_quantize(&c4, v, 3, e, 2, s, 1) == QMX_OK && s[0] == 127 && e[0] == 0xF2 &&
                  e[1] == 0x01,
              "1.0 -> 0x2, -6 -> 0xF, 0.5 -> 0x1: got %02x %02x scale %02x", e[0], e[1], s[0]);
    }
}

static void test_errors(void) {
    qmx_mx_config c = QMX_ZERO_INIT;
    float x[64] = {0}, y[64];
    uint8_t e[64], s[4];
    size_t ne = 7, ns = 7;
    QMX_TEST_CASE("MX errors: each bad input returns a status and writes nothing");
    memset(e, 0x5A, sizeof e); memset(s, 0x5A, sizeof s); y[0] = -1.0f;
    CHECK_EQ_INT(qmx_mx_quantize(NULL, x, 64, e, 64, s, 2), QMX_ERR_NULL, "NULL cfg");
    CHECK_EQ_INT(qmx_mx_quantize(&c, NULL, 64, e, 64, s, 2), QMX_ERR_NULL, "NULL x");
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 0, e, 64, s, 2), QMX_ERR_SIZE, "count 0");
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 63, s, 2), QMX_ERR_BUFFER_TOO_SMALL, "elements");
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 1), QMX_ERR_BUFFER_TOO_SMALL, "scales");
    c.format = (qmx_mx_format)9;
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 2), QMX_ERR_ARG, "format");
    c.format = QMX_MXFP8_E5M2; c.rule = QMX_MX_QWIX;
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 2), QMX_ERR_UNSUPPORTED, "Qwix has no mxfp8 e5m2");
    c.format = QMX_NVFP4; c.rule = QMX_MX_RCEIL;
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "nvfp4 has no rceil");
    c.rule = QMX_MX_FLOOR; c.tensor_scale = -1.0f;
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 4), QMX_ERR_ARG, "tensor scale < 0");
    c.format = QMX_MXFP4; c.tensor_scale = 2.0f;
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 4), QMX_ERR_ARG, "tensor scale is nvfp4's");
    c.tensor_scale = 0.0f; c.outer = 2; c.axis_len = 31; c.inner = 1;
    CHECK_EQ_INT(qmx_mx_quantize(&c, x, 64, e, 64, s, 4), QMX_ERR_SHAPE, "view of 62 != 64");
    c.outer = (size_t)-1 / 2; c.axis_len = 4; c.inner = 1;
    CHECK_EQ_INT(qmx_mx_storage(&c, 64, &ne, &ns), QMX_ERR_OVERFLOW, "view overflows");
    CHECK(ne == 7 && ns == 7, "storage written on error");
    CHECK_EQ_INT(qmx_mx_dequantize(&c, e, 64, s, 4, 64, y), QMX_ERR_OVERFLOW, "dequantize view");
    {
        size_t i;
        int clean = y[0] == -1.0f;
        for (i = 0; i < 64; i++) clean &= e[i] == 0x5A;
        for (i = 0; i < 4; i++) clean &= s[i] == 0x5A;
        CHECK(clean, "an output was written on error");
    }
}

int main(void) {
    test_golden();
    test_view_and_layout();
    test_errors();
    return QMX_TEST_END();
}
