/* test_mx.c - specification of qmx_mx_quantize / qmx_mx_dequantize (MX and NVFP4 block formats)
 * against tests/data/mx_golden.txt (tests/gen/gen_mx.py): for every case of an origin qmx
 * implements (torchao's FLOOR / CEIL / EVEN / RCEIL and NVFP4, the values transcribed from
 * torchao's own tests, Qwix's mxfp8 / mxfp8_16 / mxfp4 / nvfp4, microxcaling's MX formats and
 * MXINT8, ggml's MXFP4 / NVFP4), the scale codes and the element codes bit for bit and the
 * dequantized values bit for bit (any NaN equals any NaN: the file writes every NaN as
 * 7fc00000; the one documented exception: microxcaling MXINT8's -0.0 from code 00), and ggml's
 * block bytes (gmx / gnv lines) byte for byte, both ways. The one case qmx refuses (a two-level
 * NVFP4 tensor scale of 0) is counted and skipped. Then the layout, the view along an inner
 * axis, the ggml round trips, the floor(log2f) emulation against the host's log2, and the
 * error contract (nothing written on error).
 */
#include <math.h>
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
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
        {"mxfp6_e3m2", QMX_MXFP6_E3M2}, {"mxfp4", QMX_MXFP4}, {"nvfp4", QMX_NVFP4},
        {"mxint8", QMX_MXINT8}};
    size_t i;
    for (i = 0; i < sizeof T / sizeof T[0]; i++) if (!strcmp(s, T[i].n)) { *f = T[i].f; return 1; }
    return 0;
}
static int mx_rule(const char *rule, const char *src, qmx_mx_rule *r) {
    if (!strcmp(src, "qwix")) { *r = QMX_MX_QWIX; return 1; }
    if (!strcmp(src, "microxcaling")) { *r = QMX_MX_MICROXCALING; return 1; }
    if (!strcmp(src, "ggml")) { *r = QMX_MX_GGML; return 1; }
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

/* The last checked case, for the gmx / gnv line that follows a ggml case. */
static struct { char name[96]; qmx_mx_config c; unsigned count; size_t ne, ns; int ok; } last;
static uint8_t gb[MAXN], gw[MAXN], el2[MAXN], sc2[MAXN];

/* "gmx NAME COUNT HEX" / "gnv ...": qmx_mx_to_ggml of the case's codes equals HEX byte for byte,
 * and qmx_mx_from_ggml of HEX gives the case's codes back. */
static int check_ggml_line(void) {
    char kind[4], name[96];
    unsigned count;
    size_t nbytes = 0, i, bad, hl;
    const char *hex;
    if (sscanf(line, "%3s %95s %u", kind, name, &count) != 3) return 0;
    hex = strrchr(line, ' ');
    CHECK(hex && last.ok && !strcmp(name, last.name) && count == last.count,
          "%s: no checked case before the %s line", name, kind);
    if (!hex || !last.ok || strcmp(name, last.name) || count != last.count) return 0;
    hex++;
    hl = strlen(hex);
    CHECK((last.c.format == QMX_NVFP4) == !strcmp(kind, "gnv"), "%s: %s line for this format", name, kind);
    CHECK_EQ_INT(qmx_mx_ggml_bytes(&last.c, count, &nbytes), QMX_OK, "%s: ggml bytes", name);
    CHECK(nbytes * 2 == hl && nbytes <= MAXN, "%s: %u ggml bytes, the file has %u", name,
          (unsigned)nbytes, (unsigned)(hl / 2));
    if (nbytes * 2 != hl || nbytes > MAXN) return 0;
    for (i = 0; i < nbytes; i++) {
        char h[3] = {hex[2 * i], hex[2 * i + 1], 0};
        gw[i] = (uint8_t)strtoul(h, NULL, 16);
    }
    memset(gb, 0xA5, sizeof gb);
    CHECK_EQ_INT(qmx_mx_to_ggml(&last.c, el, last.ne, sc, last.ns, count, gb, nbytes), QMX_OK,
                 "%s: to_ggml", name);
    for (i = 0, bad = 0; i < nbytes; i++)
        if (gb[i] != gw[i] && bad++ == 0)
            CHECK(0, "%s: ggml byte %u got %02x want %02x", name, (unsigned)i, gb[i], gw[i]);
    CHECK(bad == 0 && gb[nbytes] == 0xA5, "%s: %u ggml bytes differ (or written past)", name, (unsigned)bad);
    memset(el2, 0xA5, sizeof el2); memset(sc2, 0xA5, sizeof sc2);
    CHECK_EQ_INT(qmx_mx_from_ggml(&last.c, gw, nbytes, count, el2, last.ne, sc2, last.ns), QMX_OK,
                 "%s: from_ggml", name);
    CHECK(!memcmp(el2, el, last.ne) && !memcmp(sc2, sc, last.ns) && el2[last.ne] == 0xA5 &&
              sc2[last.ns] == 0xA5,
          "%s: from_ggml does not give the case's codes back", name);
    return 1;
}

static void test_golden(void) {
    FILE *f = qmx_test_open("mx_golden.txt");
    long cases = 0, skipped = 0, elems = 0, blocks = 0, ggml_lines = 0, int8_neg0 = 0;
    QMX_TEST_CASE("MX / NVFP4 golden data: scale codes, element codes and dequantized values");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char name[96], fmt[16], rule[16], rnd[16], src[24];
        unsigned blk, count;
        qmx_mx_config c = QMX_ZERO_INIT;
        int n, have_x = 0, have_s = 0, have_e = 0, skip;
        size_t i, nb = 0, ne = 0, ns = 0, bad;
        if (!strncmp(line, "gmx ", 4) || !strncmp(line, "gnv ", 4)) {
            qmx_test_chomp(line);
            ggml_lines += check_ggml_line();
            continue;
        }
        last.ok = 0;
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
                for (i = 0, bad = 0; i < count; i++) {
                    /* microxcaling MXINT8 keeps -0.0 for a negative rounded to 0 in its float
                     * pipeline; the code (00) cannot hold it, qmx decodes +0 (documented) */
                    if (c.format == QMX_MXINT8 && el[i] == 0 && fb(yw[i]) == 0x80000000u &&
                        fb(yb[i]) == 0) {
                        int8_neg0++;
                        continue;
                    }
                    if (!same_f(yb[i], yw[i]) && bad++ == 0)
                        CHECK(0, "%s: y[%u] got %08x want %08x", name, (unsigned)i,
                              (unsigned)fb(yb[i]), (unsigned)fb(yw[i]));
                }
                CHECK(bad == 0, "%s: %u dequantized values differ", name, (unsigned)bad);
                cases++; elems += (long)count; blocks += (long)nb;
                strcpy(last.name, name); last.c = c; last.count = count;
                last.ne = ne; last.ns = ns; last.ok = 1;
            }
        }
        if (skip) skipped++;
    }
    fclose(f);
    printf("  mx_golden.txt: %ld cases checked (%ld blocks, %ld elements), %ld skipped; %ld ggml "
           "byte lines; %ld MXINT8 -0.0 values decoded +0\n",
           cases, blocks, elems, skipped, ggml_lines, int8_neg0);
    CHECK(cases >= 465 && elems > 10000 && skipped <= 1, "checked only %ld cases", cases);
    CHECK(ggml_lines >= 17, "checked only %ld ggml byte lines", ggml_lines);
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

/* ggml layouts both ways: codes -> bytes -> codes and bytes -> codes -> bytes, on quantized
 * data and on arbitrary bytes, rows of a [3][K] view. */
static void test_ggml_round_trip(void) {
    static float x[3 * 128];
    static uint8_t e1[192], s1[24], g1[3 * 4 * 36], e2[192], s2[24], g2[3 * 4 * 36];
    int f;
    QMX_TEST_CASE("ggml block_mxfp4 / block_nvfp4: lossless both ways");
    qmx_test_seed(15);
    for (f = 0; f < 2; f++) {
        qmx_mx_config c = QMX_ZERO_INIT;
        size_t ne = 0, ns = 0, nb = 0, i, round;
        c.format = f ? QMX_NVFP4 : QMX_MXFP4; c.rule = QMX_MX_GGML;
        c.outer = 3; c.axis_len = 128; c.inner = 1;
        CHECK(qmx_mx_storage(&c, 384, &ne, &ns) == QMX_OK && ne == 192 && ns == (f ? 24u : 12u) &&
                  qmx_mx_ggml_bytes(&c, 384, &nb) == QMX_OK && nb == (f ? 6u * 36 : 12u * 17),
              "sizes %u %u %u", (unsigned)ne, (unsigned)ns, (unsigned)nb);
        for (round = 0; round < 20; round++) {
            for (i = 0; i < 384; i++)
                x[i] = (float)((int32_t)(qmx_test_rand() >> 8) - 8388608) * (round + 1) * (1.0f / 1048576.0f);
            if (round & 1) {
                for (i = 0; i < ne; i++) e1[i] = (uint8_t)qmx_test_rand();
                for (i = 0; i < ns; i++) s1[i] = (uint8_t)qmx_test_rand();
            } else {
                CHECK(qmx_mx_quantize(&c, x, 384, e1, ne, s1, ns) == QMX_OK, "quantize");
            }
            CHECK(qmx_mx_to_ggml(&c, e1, ne, s1, ns, 384, g1, nb) == QMX_OK &&
                      qmx_mx_from_ggml(&c, g1, nb, 384, e2, ne, s2, ns) == QMX_OK &&
                      !memcmp(e1, e2, ne) && !memcmp(s1, s2, ns),
                  "%s round %u: codes -> ggml -> codes", f ? "nvfp4" : "mxfp4", (unsigned)round);
            for (i = 0; i < nb; i++) g1[i] = (uint8_t)qmx_test_rand();
            CHECK(qmx_mx_from_ggml(&c, g1, nb, 384, e2, ne, s2, ns) == QMX_OK &&
                      qmx_mx_to_ggml(&c, e2, ne, s2, ns, 384, g2, nb) == QMX_OK && !memcmp(g1, g2, nb),
                  "%s round %u: ggml -> codes -> ggml", f ? "nvfp4" : "mxfp4", (unsigned)round);
        }
        /* the layout itself: element j and j + 16 (NVFP4: j + 8) share a byte */
        memset(e1, 0, ne); memset(s1, 0, ns);
        e1[0] = 0x21; e1[f ? 4 : 8] = 0x43; s1[0] = 0x7A;
        CHECK(qmx_mx_to_ggml(&c, e1, ne, s1, ns, 384, g1, nb) == QMX_OK &&
                  g1[0] == 0x7A && g1[f ? 4 : 1] == 0x31 && g1[f ? 5 : 2] == 0x42,
              "%s layout: %02x %02x %02x", f ? "nvfp4" : "mxfp4", g1[0], g1[f ? 4 : 1], g1[f ? 5 : 2]);
    }
}

/* floor(log2f(a)) as qmx emulates it, read through the scale codes of one-element blocks
 * (ggml MXFP4: c = floor + 125 mod 256; microxcaling MXFP8 E4M3: c = floor - 8 + 127), against
 * the host's double log2 rounded to float (exact here: near an integer the float32 rounding
 * boundary is far from any double error). Every exponent, the 200 significands just below a
 * power of two, and random ones. */
static void test_floor_log2(void) {
    qmx_mx_config g = QMX_ZERO_INIT, m = QMX_ZERO_INIT;
    long n = 0, bad = 0;
    int ex;
    uint32_t t;
    QMX_TEST_CASE("floor(log2f) emulation (ggml and microxcaling scales) against the host's log2");
    g.format = QMX_MXFP4; g.rule = QMX_MX_GGML;
    m.format = QMX_MXFP8_E4M3; m.rule = QMX_MX_MICROXCALING;
    qmx_test_seed(2);
    for (ex = 0; ex < 255; ex++)
        for (t = 0; t < 260; t++) {
            uint32_t sig = t < 200 ? 0x1000000u - 1 - t : t == 200 ? 0x800000u : 0x800000u | (qmx_test_rand() >> 9);
            uint32_t b = ex ? (uint32_t)ex << 23 | (sig & 0x7FFFFFu) : sig >> (1 + (t % 23));
            float a = qmx_test_bits_f32(b), y;
            int want, got;
            uint8_t e, s = 0xFF;
            if (b == 0) continue;
            y = (float)log2((double)a);
            want = (int)floorf(y);
            if (want <= 106)
                got = qmx_mx_quantize(&g, &a, 1, &e, 1, &s, 1) != QMX_OK ? 999
                      : (int)s - 125 - (s >= 232 ? 256 : 0);
            else
                got = qmx_mx_quantize(&m, &a, 1, &e, 1, &s, 1) != QMX_OK ? 999 : (int)s - 127 + 8;
            n++;
            if (got != want && bad++ < 5)
                CHECK(0, "a = %08x: floor(log2f) %d, the host says %d", (unsigned)b, got, want);
        }
    for (ex = 0; ex < 23; ex++)              /* subnormals just below 2^-(126 + ex) */
        for (t = 1; t <= 150 && t < (0x800000u >> ex); t++) {
            uint32_t b = (0x800000u >> ex) - t;
            float a = qmx_test_bits_f32(b);
            int want = (int)floorf((float)log2((double)a)), got;
            uint8_t e, s = 0;
            got = qmx_mx_quantize(&g, &a, 1, &e, 1, &s, 1) != QMX_OK ? 999
                  : (int)s - 125 - (s >= 232 ? 256 : 0);
            n++;
            if (got != want && bad++ < 5)
                CHECK(0, "a = %08x: floor(log2f) %d, the host says %d", (unsigned)b, got, want);
        }
    printf("  floor(log2f): %ld values, %ld differ\n", n, bad);
    CHECK(bad == 0 && n > 60000, "%ld of %ld differ", bad, n);
}

/* ggml's UE4M3 below 2^-6 ((int)f32(f32(b 512) + 0.5), whose float32 sum rounds) and the scale
 * codes its decoder maps to 0, which the golden data does not reach. */
static void test_ggml_details(void) {
    static const struct { uint32_t amax, b; uint8_t code; } T[] = {   /* b = f32(amax / 6) */
        {0x3CF00000u, 0x3BA00000u, 3},    /* b 512 = 2.5: half up */
        {0x3CCC0000u, 0x3B880000u, 2},    /* 2.125 */
        {0x3BBFFFFFu, 0x3A7FFFFFu, 1},    /* 0.5 - 2^-25: the sum 1 - 2^-25 ties to even: 1 */
        {0x3BBFFFFDu, 0x3A7FFFFCu, 0},    /* 0.5 - 2^-23: the sum 1 - 2^-23 is exact: 0 */
        {0x3B400000u, 0x3A000000u, 0},    /* 0.25 */
        {0x3DBD0000u, 0x3C7C0000u, 7}};   /* 7.875: 8 -> 7 */
    qmx_mx_config c = QMX_ZERO_INIT;
    float x[16], y[16];
    uint8_t e[8], s[1];
    size_t i, k;
    QMX_TEST_CASE("ggml NVFP4: UE4M3 below 2^-6, and the scales ggml decodes as 0");
    c.format = QMX_NVFP4; c.rule = QMX_MX_GGML;
    for (i = 0; i < sizeof T / sizeof T[0]; i++) {
        float a = qmx_test_bits_f32(T[i].amax);
        for (k = 0; k < 16; k++) x[k] = k == 5 ? -a : a * 0.125f;
        s[0] = 0xAA;
        CHECK(qmx_mx_quantize(&c, x, 16, e, 8, s, 1) == QMX_OK, "quantize");
        CHECK(s[0] == T[i].code, "b %08x: UE4M3 %02x, want %02x", (unsigned)T[i].b, s[0], T[i].code);
    }
    for (i = 0; i < 8; i++) e[i] = 0x71;    /* +-1, 2 */
    for (k = 0; k < 2; k++) {
        s[0] = k ? 0x7F : 0x00;
        CHECK(qmx_mx_dequantize(&c, e, 8, s, 1, 16, y) == QMX_OK, "dequantize");
        for (i = 0; i < 16; i++) CHECK(qmx_test_f32_bits(y[i]) == 0, "scale %02x: y %08x", s[0],
                                       (unsigned)qmx_test_f32_bits(y[i]));
    }
    c.format = QMX_MXFP4; s[0] = 0xFF;                /* ggml's E8M0 has no NaN: 0xFF is 2^127 */
    CHECK(qmx_mx_dequantize(&c, e, 8, s, 1, 16, y) == QMX_OK &&
              y[0] == qmx_test_bits_f32(0x7F000000u) && qmx_test_f32_bits(y[1]) == 0x7F800000u,
          "0xFF: y %08x %08x", (unsigned)qmx_test_f32_bits(y[0]), (unsigned)qmx_test_f32_bits(y[1]));
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
    {   /* microxcaling, ggml, MXINT8 and the ggml layouts */
        qmx_mx_config m = QMX_ZERO_INIT;
        uint8_t g[80], gin[80] = {0};
        size_t nb = 7, i;
        int clean;
        memset(g, 0x5A, sizeof g);
        m.format = QMX_MXFP4; m.rule = (qmx_mx_rule)7;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_ARG, "rule 7");
        m.format = (qmx_mx_format)7; m.rule = QMX_MX_MICROXCALING;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_ARG, "format 7");
        m.format = QMX_MXINT8; m.rule = QMX_MX_FLOOR;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "MXINT8 is microxcaling's");
        m.rule = QMX_MX_GGML;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "ggml has no MXINT8");
        m.rule = QMX_MX_MICROXCALING;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 63, s, 4), QMX_ERR_BUFFER_TOO_SMALL, "MXINT8: a byte each");
        m.format = QMX_NVFP4;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "microxcaling has no NVFP4");
        m.format = QMX_MXFP6_E2M3; m.rule = QMX_MX_GGML;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "ggml has no MXFP6");
        m.format = QMX_MXFP4; m.block_size = 16;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "ggml MXFP4 blocks are 32");
        m.format = QMX_NVFP4; m.block_size = 32;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_UNSUPPORTED, "ggml NVFP4 scales are per 16");
        m.block_size = 0; m.tensor_scale = 1.0f;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 64, s, 4), QMX_ERR_ARG, "ggml NVFP4 is single level");
        m.tensor_scale = 0.0f;
        CHECK_EQ_INT(qmx_mx_quantize(&m, x, 64, e, 32, s, 3), QMX_ERR_BUFFER_TOO_SMALL, "4 scales");
        /* layouts: NVFP4 64 -> 36 bytes, MXFP4 64 -> 34 */
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 64, NULL), QMX_ERR_NULL, "ggml_bytes NULL");
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 48, &nb), QMX_ERR_SHAPE, "NVFP4 48 is not whole blocks");
        m.outer = 2; m.axis_len = 32; m.inner = 1;
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 64, &nb), QMX_ERR_SHAPE, "NVFP4 rows of 32");
        m.outer = 1; m.axis_len = 32; m.inner = 2; m.format = QMX_MXFP4;
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 64, &nb), QMX_ERR_UNSUPPORTED, "blocks along an inner axis");
        m.outer = 0; m.axis_len = 0; m.inner = 0; m.rule = QMX_MX_RCEIL; m.block_size = 16;
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 64, &nb), QMX_ERR_UNSUPPORTED, "block_mxfp4 holds 32");
        m.block_size = 0; m.format = QMX_MXFP8_E4M3;
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 64, &nb), QMX_ERR_UNSUPPORTED, "no ggml MXFP8 block");
        CHECK_EQ_INT(qmx_mx_ggml_bytes(&m, 0, &nb), QMX_ERR_SIZE, "count 0");
        CHECK(nb == 7, "ggml_bytes written on error");
        m.format = QMX_MXFP4;     /* any E8M0 rule converts */
        CHECK_EQ_INT(qmx_mx_to_ggml(&m, e, 32, s, 2, 64, g, 33), QMX_ERR_BUFFER_TOO_SMALL, "out 33 < 34");
        CHECK_EQ_INT(qmx_mx_to_ggml(&m, e, 31, s, 2, 64, g, 34), QMX_ERR_BUFFER_TOO_SMALL, "elements");
        CHECK_EQ_INT(qmx_mx_to_ggml(&m, e, 32, s, 1, 64, g, 34), QMX_ERR_BUFFER_TOO_SMALL, "scales");
        CHECK_EQ_INT(qmx_mx_to_ggml(&m, NULL, 32, s, 2, 64, g, 34), QMX_ERR_NULL, "NULL elements");
        CHECK_EQ_INT(qmx_mx_to_ggml(&m, e, 32, s, 2, 64, NULL, 34), QMX_ERR_NULL, "NULL out");
        CHECK_EQ_INT(qmx_mx_to_ggml(&m, e, 32, s, 2, 40, g, 34), QMX_ERR_SHAPE, "40 elements");
        CHECK_EQ_INT(qmx_mx_from_ggml(&m, gin, 33, 64, e, 32, s, 2), QMX_ERR_BUFFER_TOO_SMALL, "in 33 < 34");
        CHECK_EQ_INT(qmx_mx_from_ggml(&m, gin, 34, 64, e, 31, s, 2), QMX_ERR_BUFFER_TOO_SMALL, "elements");
        CHECK_EQ_INT(qmx_mx_from_ggml(&m, gin, 34, 64, e, 32, s, 1), QMX_ERR_BUFFER_TOO_SMALL, "scales");
        CHECK_EQ_INT(qmx_mx_from_ggml(&m, NULL, 34, 64, e, 32, s, 2), QMX_ERR_NULL, "NULL in");
        CHECK_EQ_INT(qmx_mx_from_ggml(&m, gin, 34, 64, e, 32, NULL, 2), QMX_ERR_NULL, "NULL scales");
        CHECK_EQ_INT(qmx_mx_from_ggml(NULL, gin, 34, 64, e, 32, s, 2), QMX_ERR_NULL, "NULL cfg");
        m.format = QMX_MXFP6_E3M2;
        CHECK_EQ_INT(qmx_mx_from_ggml(&m, gin, 34, 64, e, 64, s, 2), QMX_ERR_UNSUPPORTED, "MXFP6");
        for (i = 0, clean = 1; i < sizeof g; i++) clean &= g[i] == 0x5A;
        CHECK(clean, "ggml bytes written on error");
    }
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
    test_ggml_round_trip();
    test_floor_log2();
    test_ggml_details();
    test_errors();
    return QMX_TEST_END();
}
