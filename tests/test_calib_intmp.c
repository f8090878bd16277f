/* test_calib_intmp.c - specification of qmx_calib.h's MaxText intmp mixed-precision rules:
 * the JSON parser, inheritance from __default__, last-match-wins lookup, the regex subset
 * (checked against Python re.fullmatch: tests/data/calib_regex.txt from tests/gen/gen_calib.py,
 * exact 0/1 agreement) and the status of every malformed config.
 */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_calib.h"
#include "qmx_test.h"

static qmx_intmp_rule rules[16];
static char names[1024];
static qmx_intmp_config cfg;

static qmx_status parse(const char *j) {
    return qmx_intmp_parse(j, strlen(j), rules, 16, names, sizeof names, &cfg);
}
static const qmx_intmp_rule *look(const char *layer) {
    const qmx_intmp_rule *r = NULL;
    if (qmx_intmp_lookup(&cfg, layer, strlen(layer), &r) != QMX_OK) return NULL;
    return r;
}

static void test_semantics(void) {
    const qmx_intmp_rule *r;
    QMX_TEST_CASE("README example: keys inherit unspecified fields from __default__");
    CHECK_EQ_INT(parse("{\n  \".*/query\": {\"w_bits\": 4, \"tile_size\": 128},\n"
                       "  \"__default__\": {\"w_bits\": 8, \"a_bits\": 8}\n}"), QMX_OK, "parse");
    CHECK_EQ_INT(cfg.n_rules, 2, "rules");
    r = look("decoder/layers_0/self_attention/query");
    CHECK(r && r->w_bits == 4 && r->a_bits == 8 && r->tile_size == 128 && r->w_scale == 1.0f &&
          r->a_scale == 1.0f, "query rule: w4 a8 tile 128");
    r = look("decoder/layers_0/mlp/wi_0");
    CHECK(r && r->is_default && r->w_bits == 8 && r->a_bits == 8 && r->tile_size == -1,
          "unmatched layer uses __default__");
    QMX_TEST_CASE("the last matching pattern wins (MaxText scans every key, no break)");
    CHECK_EQ_INT(parse("{\"decoder/.*\": {\"w_bits\": 8, \"a_bits\": 8},"
                       " \"decoder/layers_\\\\d+/mlp/.*\": {\"w_bits\": 4, \"w_scale\": 0.9},"
                       " \"decoder/layers_1/.*\": {\"a_bits\": null}}"), QMX_OK, "parse");
    r = look("decoder/layers_1/mlp/wo");
    CHECK(r && r->w_bits == 0 && r->a_bits == 0 && r->pattern[16] == '/', "layers_1 rule (last)");
    r = look("decoder/layers_2/mlp/wo");
    CHECK(r && r->w_bits == 4 && r->a_bits == 0 && qmx_test_f32_bits(r->w_scale) == 0x3F666666u /* float(0.9) */, "mlp rule: no default, "
          "so unspecified fields are the built-in defaults (null bits)");
    r = look("decoder/layers_2/self_attention/key");
    CHECK(r && r->w_bits == 8 && r->a_bits == 8, "decoder rule");
    CHECK(look("encoder/layers_0/query") == NULL, "no match, no __default__: a status");
    {
        const qmx_intmp_rule *rr = NULL;
        CHECK_EQ_INT(qmx_intmp_lookup(&cfg, "encoder/x", 9, &rr), QMX_ERR_ARG, "status of no match");
        CHECK_EQ_INT(qmx_intmp_lookup(&cfg, "dec\0oder", 8, &rr), QMX_ERR_ARG, "NUL in layer name");
        CHECK_EQ_INT(qmx_intmp_lookup(NULL, "x", 1, &rr), QMX_ERR_NULL, "NULL cfg");
    }
    QMX_TEST_CASE("built-in defaults, null bits, escapes in keys, empty config");
    CHECK_EQ_INT(parse("{\"__default__\": {\"w_bits\": 8, \"a_bits\": null, \"a_scale\": 0.5}}"),
                 QMX_OK, "int8 weight only");
    r = look("anything/at/all");
    CHECK(r && r->w_bits == 8 && r->a_bits == 0 && r->a_scale == 0.5f && r->w_scale == 1.0f &&
          r->tile_size == -1 && r->present == 11u, "weight-only default");
    CHECK_EQ_INT(parse("{\"a\\/b\\u0063\": {}}"), QMX_OK, "escaped key");
    CHECK(cfg.rules[0].pattern_len == 4 && strcmp(cfg.rules[0].pattern, "a/bc") == 0, "unescaped key");
    r = look("a/bc");
    CHECK(r && r->w_bits == 0 && r->tile_size == -1 && r->w_scale == 1.0f, "empty rule: built-ins");
    CHECK_EQ_INT(parse(" { } "), QMX_OK, "empty object");
    CHECK(look("x") == NULL, "empty config matches nothing");
    CHECK_EQ_INT(parse("{\"\\u00e9\\ud83d\\ude00\": {\"tile_size\": -1}}"), QMX_OK, "unicode key");
    CHECK(cfg.rules[0].pattern_len == 6 && (unsigned char)cfg.rules[0].pattern[0] == 0xC3 &&
          (unsigned char)cfg.rules[0].pattern[2] == 0xF0, "UTF-8 of the key");
}

static int unhex(const char *h, char *out) {
    int n = 0;
    if (h[0] == '-') return 0;
    while (h[0] && h[1] && h[0] != ' ') {
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (char)v;
        h += 2;
    }
    return n;
}

static void test_regex_golden(void) {
    FILE *f = qmx_test_open("calib_regex.txt");
    static char line[4096];
    int n = 0, pos = 0;
    QMX_TEST_CASE("qmx_intmp_fullmatch agrees with Python re.fullmatch on the supported subset");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        char ph[1024], sh[1024], p[512], s[512];
        int want, pl, sl, got;
        if (sscanf(line, "m %1023s %1023s %d", ph, sh, &want) != 3) continue;
        pl = unhex(ph, p); sl = unhex(sh, s);
        got = qmx_intmp_fullmatch(p, (size_t)pl, s, (size_t)sl);
        CHECK(got == want, "pattern '%.*s' string '%.*s': %d want %d", pl, p, sl, s, got, want);
        n++; pos += want;
    }
    fclose(f);
    CHECK(n >= 1000 && pos >= 50, "only %d cases (%d matches)", n, pos);
}

static void test_regex_subset(void) {
    static const struct { const char *p; qmx_status st; } pc[] = {
        {"a|b", QMX_ERR_UNSUPPORTED}, {"(ab)", QMX_ERR_UNSUPPORTED}, {"a{2}", QMX_ERR_UNSUPPORTED},
        {"a(?:b)", QMX_ERR_UNSUPPORTED}, {"\\b", QMX_ERR_UNSUPPORTED}, {"\\1", QMX_ERR_UNSUPPORTED},
        {"a^b", QMX_ERR_UNSUPPORTED}, {"a$b", QMX_ERR_UNSUPPORTED}, {"[[:alpha:]]", QMX_ERR_UNSUPPORTED},
        {"a*{2}", QMX_ERR_UNSUPPORTED}, {"\\A", QMX_ERR_UNSUPPORTED},
        {"*a", QMX_ERR_PARSE}, {"a**", QMX_ERR_PARSE}, {"a+*", QMX_ERR_PARSE}, {"?", QMX_ERR_PARSE},
        {"[abc", QMX_ERR_PARSE}, {"[z-a]", QMX_ERR_PARSE}, {"a\\", QMX_ERR_PARSE}, {"[", QMX_ERR_PARSE},
        {"a*?", QMX_OK}, {"^a$", QMX_OK}, {"[]]", QMX_OK}, {"\\$", QMX_OK}, {"", QMX_OK},
        {"[\\d_]+", QMX_OK}, {"a??", QMX_OK},
    };
    size_t i;
    char big[300];
    QMX_TEST_CASE("the regex subset: unsupported features and malformed patterns are statuses");
    for (i = 0; i < sizeof pc / sizeof pc[0]; i++)
        CHECK_EQ_INT(qmx_intmp_pattern_check(pc[i].p, strlen(pc[i].p)), pc[i].st, "'%s'", pc[i].p);
    memset(big, 'a', sizeof big);
    CHECK_EQ_INT(qmx_intmp_pattern_check(big, 200), QMX_ERR_UNSUPPORTED, "200 atoms > 128");
    CHECK_EQ_INT(qmx_intmp_pattern_check(big, 257), QMX_ERR_PARSE, "longer than 256");
    CHECK_EQ_INT(qmx_intmp_pattern_check("a\0b", 3), QMX_ERR_PARSE, "NUL in pattern");
    CHECK_EQ_INT(qmx_intmp_fullmatch("a|b", 3, "a", 1), QMX_ERR_UNSUPPORTED, "fullmatch status");
    QMX_TEST_CASE("no exponential blow-up: nested stars over a long non-matching name");
    memset(big, 'a', 250);
    CHECK_EQ_INT(qmx_intmp_fullmatch("a*a*a*a*a*a*a*a*a*a*a*a*b", 25, big, 250), 0, "NFA, linear");
}

static void test_malformed(void) {
    static const char *bad[] = {
        "", " ", "{", "}", "[]", "[{}]", "\"x\"", "1", "null", "{\"a\"}", "{\"a\":}", "{\"a\":1}",
        "{\"a\":null}", "{\"a\":[]}", "{\"a\":{}", "{\"a\":{}}}", "{\"a\":{}} x", "{\"a\":{},}",
        "{,\"a\":{}}", "{\"a\":{},,\"b\":{}}", "{'a':{}}", "{a:{}}", "{\"a\" {}}",
        "{\"a\":{\"w_bits\":8,}}", "{\"a\":{\"w_bits\":}}", "{\"a\":{\"w_bits\" 8}}",
        "{\"a\":{\"w_bits\":8 \"a_bits\":8}}", "{\"a\":{\"w_bits\":0}}", "{\"a\":{\"w_bits\":17}}",
        "{\"a\":{\"w_bits\":-8}}", "{\"a\":{\"w_bits\":8.0}}", "{\"a\":{\"w_bits\":8e0}}",
        "{\"a\":{\"w_bits\":\"8\"}}", "{\"a\":{\"w_bits\":true}}", "{\"a\":{\"w_bits\":08}}",
        "{\"a\":{\"w_bits\":99999999999999999999}}", "{\"a\":{\"tile_size\":0}}",
        "{\"a\":{\"tile_size\":-2}}", "{\"a\":{\"tile_size\":null}}", "{\"a\":{\"tile_size\":2147483648}}",
        "{\"a\":{\"w_scale\":0}}", "{\"a\":{\"w_scale\":-1}}", "{\"a\":{\"w_scale\":1e39}}",
        "{\"a\":{\"w_scale\":.5}}", "{\"a\":{\"w_scale\":1.}}", "{\"a\":{\"w_scale\":+1}}",
        "{\"a\":{\"w_scale\":NaN}}", "{\"a\":{\"w_scale\":Infinity}}", "{\"a\":{\"w_scale\":null}}",
        "{\"a\":{\"w_scale\":0.12345678901234567891}}", "{\"a\":{\"w_scale\":1e-99}}",
        "{\"a\":{\"W_BITS\":8}}", "{\"a\":{\"bits\":8}}", "{\"a\":{\"w_bits\":8,\"w_bits\":4}}",
        "{\"a\":{},\"a\":{}}", "{\"__default__\":{},\"__default__\":{}}",
        "{\"a\":{\"w_bits\":{\"x\":1}}}", "{\"a\":{\"w_bits\":[8]}}", "{\"a\":{\"x\":{}}}",
        "{\"a\\q\":{}}", "{\"a\\u00g0\":{}}", "{\"a\\u12\":{}}", "{\"a\\u0000\":{}}",
        "{\"a\\ud800\":{}}", "{\"a\\udc00\":{}}", "{\"a\\ud800\\u0041\":{}}", "{\"a\tb\":{}}",
        "{\"a\nb\":{}}", "{\"a", "{\"a\\", "{\"a\":{\"w_", "{\"(a|b)\":{}}", "{\"a{3}\":{}}",
        "{\"*\":{}}", "{\"[a\":{}}", "{\"a\":{\"w_bits\":8}", "{\"a\":{\"w_bits\":8}}}",
        "{\"a\":{\"w_bits\":8}}\"", "\xef\xbb\xbf{}", "{\"a\":{\"w_bits\":-}}", "{\"a\":{\"w_bits\":1-}}",
        "{\"a\":{\"w_scale\":1e}}", "{\"a\":{\"w_scale\":1e+}}", "{\"a\":{\"w_scale\":-0}}",
        "{\"a\":{\"w_bits\":nul}}", "{\"a\":{\"w_bits\":nulll}}", "{/*c*/}", "{\"a\":{}}//",
    };
    size_t i, n = 0;
    static char deep[20000], big[2000];
    QMX_TEST_CASE("every malformed intmp JSON is a status (parse / unsupported), out untouched");
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++, n++) {
        qmx_status st;
        cfg.n_rules = 77;
        st = parse(bad[i]);
        CHECK(st == QMX_ERR_PARSE || st == QMX_ERR_UNSUPPORTED, "'%s' -> %d", bad[i], st);
        CHECK(cfg.n_rules == 77, "'%s' wrote the output", bad[i]);
    }
    /* deep nesting, both at the top and in a value */
    for (i = 0; i < sizeof deep - 1; i++) deep[i] = '[';
    CHECK_EQ_INT(qmx_intmp_parse(deep, sizeof deep - 1, rules, 16, names, sizeof names, &cfg),
                 QMX_ERR_PARSE, "deep arrays"); n++;
    memcpy(deep, "{\"a\":", 5);
    for (i = 5; i < sizeof deep - 1; i++) deep[i] = i % 2 ? '{' : '[';
    CHECK_EQ_INT(qmx_intmp_parse(deep, sizeof deep - 1, rules, 16, names, sizeof names, &cfg),
                 QMX_ERR_PARSE, "deep objects"); n++;
    /* embedded NUL bytes at every position of a valid config */
    {
        const char *ok = "{\"a.*\":{\"w_bits\":8,\"a_scale\":0.5}}";
        size_t L = strlen(ok), p;
        for (p = 0; p < L; p++, n++) {
            memcpy(big, ok, L);
            big[p] = '\0';
            CHECK(qmx_intmp_parse(big, L, rules, 16, names, sizeof names, &cfg) == QMX_ERR_PARSE,
                  "NUL at %u accepted", (unsigned)p);
        }
        for (p = 0; p < L; p++, n++)   /* every truncation */
            CHECK(qmx_intmp_parse(ok, p, rules, 16, names, sizeof names, &cfg) == QMX_ERR_PARSE,
                  "truncation at %u accepted", (unsigned)p);
    }
    /* overlong names */
    memcpy(big, "{\"", 2);
    memset(big + 2, 'a', 300);
    memcpy(big + 302, "\":{}}", 5);
    CHECK_EQ_INT(qmx_intmp_parse(big, 307, rules, 16, names, sizeof names, &cfg), QMX_ERR_PARSE,
                 "300-byte key"); n++;
    CHECK(n >= 150, "only %u malformed configs", (unsigned)n);
    QMX_TEST_CASE("caller buffers too small are QMX_ERR_BUFFER_TOO_SMALL; NULLs");
    CHECK_EQ_INT(qmx_intmp_parse("{\"a\":{},\"b\":{}}", 15, rules, 1, names, sizeof names, &cfg),
                 QMX_ERR_BUFFER_TOO_SMALL, "rules");
    CHECK_EQ_INT(qmx_intmp_parse("{\"abc\":{}}", 10, rules, 16, names, 3, &cfg),
                 QMX_ERR_BUFFER_TOO_SMALL, "names");
    CHECK_EQ_INT(qmx_intmp_parse("{\"abc\":{}}", 10, rules, 16, names, 4, &cfg), QMX_OK, "exact fit");
    CHECK_EQ_INT(qmx_intmp_parse(NULL, 10, rules, 16, names, 4, &cfg), QMX_ERR_NULL, "NULL json");
    CHECK_EQ_INT(qmx_intmp_parse("{}", 2, NULL, 16, names, 4, &cfg), QMX_ERR_NULL, "NULL rules");
}

int main(void) {
    test_semantics();
    test_regex_golden();
    test_regex_subset();
    test_malformed();
    return QMX_TEST_END();
}
