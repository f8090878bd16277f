/* qmx_convert_core.h - the rules, quantization and C-header emitter of qmx_convert.
 *
 * Host code (libc allowed), every function static; include after "qmx.h" (with the
 * implementation somewhere) and "qmx_files.h". examples/qmx_convert.c is the command-line
 * wrapper; tests/test_convert.c drives the same functions.
 *
 * RULES
 *   Each tensor gets the SPEC of the first rule whose PATTERN matches its whole name, else
 *   the default (--default, itself defaulting to int8:per_channel).
 *     --rule 'PATTERN=SPEC'   PATTERN: '*' matches any run of characters (dots too), '?' one
 *                             character, everything else itself. Split at the first '='.
 *     SPEC = DTYPE[:OPTION]...
 *       DTYPE   int8 uint8 int16 uint16 int4 uint4 int2 uint2 int3 int5 int6 int7 nf4 |
 *               fp8_e4m3fn (e4m3) fp8_e5m2 (e5m2) fp8_e4m3fnuz
 *               fp8_e5m2fnuz | float (keep float32) | skip (leave the tensor out) |
 *               block-scaled (qmx_mx_quantize): mxfp8 (mxfp8_e4m3) mxfp8_e5m2 mxfp6_e2m3
 *               mxfp6_e3m2 mxfp4 nvfp4 mxint8, OPTIONs per_block=N (default 32, nvfp4 16),
 *               axis=A (the blocked axis, default the last), rule=floor|ceil|even|rceil|qwix|
 *               microxcaling|ggml (default floor = OCP MX; mxint8: microxcaling), and for
 *               nvfp4 two_level (torchao's fp32 tensor scale amax / (448 * 6))
 *       OPTION  per_tensor | per_channel | per_block=N (sub-channel blocks of N) |
 *               axis=A (negative counts from the end) | recipe=aqt|qwix|tflite|torch|onnx |
 *               asym | narrow | preserve_max
 *     The quantized axis: per_channel defaults to axis 0 (one scale per output row of a
 *     [N, K] weight), per_block to the last axis (blocks along K, one scale per row per
 *     block). The qmx view is outer = prod(shape[:axis]), axis_len = shape[axis],
 *     inner = prod(shape[axis+1:]); see qmx.h "INTEGER QUANTIZATION". The default
 *     granularity is per_channel; recipe AQT (qmx's default).
 *   Examples: --rule '*.bias=float' --rule 'layers.*.mlp.*=int4:per_block=32'
 *             --rule 'embed*=fp8_e4m3fn:per_tensor' --default int8:per_channel
 *
 * MAXTEXT INTMP RULES (--intmp FILE.json; parsed by qmx_calib.h's qmx_intmp_parse)
 *   Precedence: the --rule list first, then the intmp file (its keys are Python regexes
 *   fully matched against the tensor name, the LAST matching key wins, else "__default__"),
 *   then --default (only when the file has no "__default__" and no key matches).
 *   An intmp entry becomes a spec as MaxText's AQT config means it for weights:
 *     w_bits null -> float (not quantized); 2..8 -> int2..int8, 16 -> int16, AQT recipe,
 *     symmetric, AbsMax per channel (axis 0: one scale per output row of [N, K]); other
 *     bit widths are QMX_ERR_UNSUPPORTED.
 *     tile_size T >= 1 -> per_block=T along the last axis (the contraction axis K of [N, K]).
 *     w_scale < 1 (AbsMax clipping) -> QMX_ERR_UNSUPPORTED (qmx_qconfig has no clipping
 *     scale); w_scale >= 1 is ignored, as MaxText does. a_bits / a_scale concern activations
 *     and are ignored here.
 *   For JAX kernels stored [K, N] (contraction first) put an explicit --rule with axis= first.
 *
 * THE GENERATED HEADER (one per model; several may be included in one program)
 *   #include "qmx.h" (for the enums), then per tensor, in input order:
 *     static const <type> PREFIX_<ident>_q[]        the data: int8_t / uint8_t / int16_t /
 *                                                   uint16_t values,
 *                                                   packed int4 bytes or fp8 codes as uint8_t,
 *                                                   or float (kept float32)
 *     static const float  PREFIX_<ident>_scales[]   qmx_qparams_count scales, qmx's order
 *     static const int32_t PREFIX_<ident>_zp[]      when asym, or recipe torch / onnx (whose
 *                                                   symmetric unsigned zero point is the middle)
 *     static const uint8_t PREFIX_<ident>_scale_codes[]  block-scaled formats, instead of
 *                                                   _scales: qmx_mx_quantize's codes (mx = 1)
 *     static const qmx_model_tensor PREFIX_<ident>  the descriptor (struct below)
 *   and the table PREFIX_tensors[PREFIX_TENSOR_COUNT] of pointers to the descriptors.
 *   Arrays carry QMX_WEIGHTS_ATTR (default __attribute__((aligned(16))) on GCC/Clang; define
 *   it before the include to add a section, e.g. to place weights in a flash region).
 *   Floats are written as their EXACT decimal value (no printf rounding), so the compiler
 *   reproduces every scale and float bit for bit, on every host. <ident> is the name with
 *   every character outside [A-Za-z0-9_] replaced by '_' (and _2, _3... on collisions).
 *   Non-finite floats in a kept-float tensor are an error (no C constant spells NaN without
 *   libm); qmx_compute_qparams refuses NaN/Inf in quantized tensors (QMX_ERR_NONFINITE).
 */
#ifndef QMX_CONVERT_CORE_H
#define QMX_CONVERT_CORE_H

#include "qmx_files.h"
#include "qmx_calib.h" /* qmx_intmp_parse / qmx_intmp_lookup for --intmp */

#define QMXC_VERSION "2" /* 2: block-scaled formats, qmx_model_tensor gains mx fields */

/* ---- a growable text buffer ---- */
typedef struct qmxc_buf {
    char *p;
    size_t n, cap;
    int oom;
} qmxc_buf;

QMXF_FN void qmxc_buf_free(qmxc_buf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->oom = 0;
}

QMXF_FN void qmxc_put(qmxc_buf *b, const char *s, size_t len) {
    if (b->oom) return;
    if (len >= b->cap - b->n || !b->p) {
        size_t nc = b->cap ? b->cap : 4096;
        char *np;
        while (nc - b->n <= len) {
            if (nc > SIZE_MAX / 2) {
                b->oom = 1;
                return;
            }
            nc *= 2;
        }
        np = (char *)realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}
QMXF_FN void qmxc_puts(qmxc_buf *b, const char *s) { qmxc_put(b, s, strlen(s)); }
QMXF_FN QMXF_PRINTF(2, 3) void qmxc_printf(qmxc_buf *b, const char *fmt, ...) {
    char tmp[512], *big;
    va_list ap, ap2;
    int k;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (k < 0)
        b->oom = 1;
    else if ((size_t)k < sizeof tmp)
        qmxc_put(b, tmp, (size_t)k);
    else if ((big = (char *)malloc((size_t)k + 1)) == NULL)
        b->oom = 1;
    else { /* long names: format again into a buffer of the exact size */
        vsnprintf(big, (size_t)k + 1, fmt, ap2);
        qmxc_put(b, big, (size_t)k);
        free(big);
    }
    va_end(ap2);
    va_end(ap);
}

/* ---- exact decimal of a float ----
 * f = m * 2^e with m odd (or 0): for e >= 0 the integer m * 2^e; for e < 0 the digits of
 * m * 5^-e with the point -e places from the right, which is exactly m / 2^-e. Big integers in
 * base 10^9 limbs; at most 45 digits before and 149 after the point. */
QMXF_FN void qmxc_fmt_float_bits(uint32_t bits, char *out /* >= 200 bytes */) {
    uint32_t limb[24]; /* little-endian base 10^9: 24 limbs = 216 digits */
    int nl = 1, e, i, k, neg = (int)(bits >> 31), nd = 0, pointpos;
    uint32_t ef = (bits >> 23) & 0xFFu, m = bits & 0x7FFFFFu;
    char dig[220], *o = out;
    if (ef == 0)
        e = -149;
    else {
        m |= 0x800000u;
        e = (int)ef - 150;
    }
    if (neg) *o++ = '-';
    if (m == 0) {
        strcpy(o, "0.0f");
        return;
    }
    while (!(m & 1u) && e < 0) {
        m >>= 1;
        e++;
    }
    limb[0] = m % 1000000000u;
    if (m >= 1000000000u) {
        limb[1] = m / 1000000000u;
        nl = 2;
    }
    for (k = 0; k < (e >= 0 ? e : -e); k++) { /* multiply by 2 or by 5 */
        uint32_t carry = 0, f = e >= 0 ? 2u : 5u;
        for (i = 0; i < nl; i++) {
            uint64_t v = (uint64_t)limb[i] * f + carry;
            limb[i] = (uint32_t)(v % 1000000000u);
            carry = (uint32_t)(v / 1000000000u);
        }
        if (carry) limb[nl++] = carry;
    }
    for (i = 0; i < nl; i++) { /* digits, least significant first */
        uint32_t v = limb[i];
        for (k = 0; k < 9; k++) {
            dig[nd++] = (char)('0' + v % 10);
            v /= 10;
        }
    }
    while (nd > 1 && dig[nd - 1] == '0') nd--;
    pointpos = e >= 0 ? 0 : -e; /* digits after the point */
    if (nd <= pointpos) {
        *o++ = '0';
        *o++ = '.';
        for (k = pointpos; k > nd; k--) *o++ = '0';
        for (k = nd - 1; k >= 0; k--) *o++ = dig[k];
    } else {
        for (k = nd - 1; k >= pointpos; k--) *o++ = dig[k];
        *o++ = '.';
        if (pointpos == 0) *o++ = '0';
        for (k = pointpos - 1; k >= 0; k--) *o++ = dig[k];
    }
    *o++ = 'f';
    *o = 0;
}

/* ---- specs and rules ---- */
typedef enum qmxc_kind { QMXC_QUANT = 0, QMXC_FLOAT = 1, QMXC_SKIP = 2, QMXC_MX = 3 } qmxc_kind;

typedef struct qmxc_spec {
    qmxc_kind kind;
    qmx_dtype dtype;
    qmx_granularity granularity;
    size_t block_size;
    int axis, axis_set;
    qmx_recipe recipe;
    int asymmetric, narrow_range, preserve_max_val;
    qmx_mx_format mx_format; /* QMXC_MX: the block-scaled format, its shared-scale rule */
    qmx_mx_rule mx_rule;
    int two_level;           /* QMXC_MX, NVFP4: torchao's fp32 per-tensor scale */
} qmxc_spec;

typedef struct qmxc_rule {
    char pattern[QMXF_MAX_NAME];
    qmxc_spec spec;
} qmxc_rule;

static const struct {
    const char *name;
    qmx_dtype dtype;
} qmxc__dtypes[] = {{"int8", QMX_INT8},
                    {"uint8", QMX_UINT8},
                    {"int16", QMX_INT16},
                    {"uint16", QMX_UINT16},
                    {"int2", QMX_INT2},
                    {"uint2", QMX_UINT2},
                    {"int3", QMX_INT3},
                    {"int5", QMX_INT5},
                    {"int6", QMX_INT6},
                    {"int7", QMX_INT7},
                    {"nf4", QMX_NF4},
                    {"int4", QMX_INT4},
                    {"uint4", QMX_UINT4},
                    {"fp8_e4m3fn", QMX_FP8_E4M3FN},
                    {"fp8_e4m3", QMX_FP8_E4M3FN},
                    {"e4m3", QMX_FP8_E4M3FN},
                    {"e4m3fn", QMX_FP8_E4M3FN},
                    {"fp8_e5m2", QMX_FP8_E5M2},
                    {"e5m2", QMX_FP8_E5M2},
                    {"fp8_e4m3fnuz", QMX_FP8_E4M3FNUZ},
                    {"e4m3fnuz", QMX_FP8_E4M3FNUZ},
                    {"fp8_e5m2fnuz", QMX_FP8_E5M2FNUZ},
                    {"e5m2fnuz", QMX_FP8_E5M2FNUZ}};

/* Block-scaled formats (qmx_mx_quantize): elements + one scale code per block. */
static const struct {
    const char *name;
    qmx_mx_format format;
} qmxc__mx_formats[] = {{"mxfp8", QMX_MXFP8_E4M3},      {"mxfp8_e4m3", QMX_MXFP8_E4M3},
                        {"mxfp8_e5m2", QMX_MXFP8_E5M2}, {"mxfp6_e2m3", QMX_MXFP6_E2M3},
                        {"mxfp6_e3m2", QMX_MXFP6_E3M2}, {"mxfp4", QMX_MXFP4},
                        {"nvfp4", QMX_NVFP4},           {"mxint8", QMX_MXINT8}};
static const char *const qmxc__mx_rules[] = {"floor", "ceil", "even", "rceil", "qwix", "microxcaling", "ggml"};

/* Parses a decimal int (optionally negative) that must end the string. */
QMXF_FN int qmxc__parse_int(const char *s, long *v) {
    long x = 0;
    int neg = 0, d = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        if (x > 100000000L) return 0;
        x = x * 10 + (*s++ - '0');
        d++;
    }
    if (!d || *s) return 0;
    *v = neg ? -x : x;
    return 1;
}

/* SPEC (see the top) into *spec. */
QMXF_FN qmx_status qmxc_parse_spec(const char *text, qmxc_spec *spec, char *err, size_t err_size) {
    char buf[256], *field, *next;
    qmxc_spec s;
    size_t i;
    int first = 1, have_gran = 0;
    if (!text || !spec) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    if (strlen(text) >= sizeof buf) return qmxf__fail(err, err_size, QMX_ERR_PARSE, "spec too long");
    strcpy(buf, text);
    memset(&s, 0, sizeof s);
    s.granularity = QMX_PER_CHANNEL;
    for (field = buf; field; field = next) {
        next = strchr(field, ':');
        if (next) *next++ = 0;
        if (first) {
            first = 0;
            if (strcmp(field, "float") == 0 || strcmp(field, "f32") == 0 || strcmp(field, "float32") == 0) {
                s.kind = QMXC_FLOAT;
                continue;
            }
            if (strcmp(field, "skip") == 0) {
                s.kind = QMXC_SKIP;
                continue;
            }
            for (i = 0; i < sizeof qmxc__mx_formats / sizeof qmxc__mx_formats[0]; i++)
                if (strcmp(field, qmxc__mx_formats[i].name) == 0) {
                    s.kind = QMXC_MX;
                    s.mx_format = qmxc__mx_formats[i].format;
                    s.mx_rule = s.mx_format == QMX_MXINT8 ? QMX_MX_MICROXCALING : QMX_MX_FLOOR;
                    s.granularity = QMX_PER_BLOCK;
                    break;
                }
            if (s.kind == QMXC_MX) continue;
            for (i = 0; i < sizeof qmxc__dtypes / sizeof qmxc__dtypes[0]; i++)
                if (strcmp(field, qmxc__dtypes[i].name) == 0) {
                    s.dtype = qmxc__dtypes[i].dtype;
                    break;
                }
            if (i == sizeof qmxc__dtypes / sizeof qmxc__dtypes[0])
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "spec '%s': unknown dtype '%s' (int8 uint8 int16 uint16 int4 uint4 int2 uint2 int3..int7 nf4 "
                                  "fp8_e4m3fn fp8_e5m2 fp8_e4m3fnuz fp8_e5m2fnuz mxfp8 mxfp8_e5m2 mxfp6_e2m3 "
                                  "mxfp6_e3m2 mxfp4 nvfp4 mxint8 float skip)",
                                  text, field);
            continue;
        }
        if (s.kind == QMXC_FLOAT || s.kind == QMXC_SKIP)
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "spec '%s': '%s' takes no options", text,
                              s.kind == QMXC_FLOAT ? "float" : "skip");
        if (s.kind == QMXC_MX) { /* block-scaled: per_block=N, axis=A, rule=R, two_level */
            long v;
            if (strncmp(field, "per_block=", 10) == 0) {
                if (have_gran++ || !qmxc__parse_int(field + 10, &v) || v <= 0 || v > 1024)
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "spec '%s': per_block needs one block size in 1..1024", text);
                s.block_size = (size_t)v;
            } else if (strncmp(field, "axis=", 5) == 0) {
                if (s.axis_set++ || !qmxc__parse_int(field + 5, &v) || v < -QMXF_MAX_RANK || v >= QMXF_MAX_RANK)
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "spec '%s': axis needs one integer in [-8, 7]", text);
                s.axis = (int)v;
            } else if (strncmp(field, "rule=", 5) == 0) {
                for (i = 0; i < sizeof qmxc__mx_rules / sizeof qmxc__mx_rules[0]; i++)
                    if (strcmp(field + 5, qmxc__mx_rules[i]) == 0) break;
                if (i == sizeof qmxc__mx_rules / sizeof qmxc__mx_rules[0])
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "spec '%s': unknown rule '%s' (floor ceil even rceil qwix microxcaling ggml)",
                                      text, field + 5);
                s.mx_rule = (qmx_mx_rule)i;
            } else if (strcmp(field, "two_level") == 0 && s.mx_format == QMX_NVFP4) {
                s.two_level = 1;
            } else {
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "spec '%s': unknown option '%s' for a block-scaled format (per_block=N axis=A "
                                  "rule=floor|ceil|even|rceil|qwix|microxcaling|ggml, nvfp4: two_level)",
                                  text, field);
            }
            continue;
        }
        if (strcmp(field, "per_tensor") == 0 || strcmp(field, "per_channel") == 0) {
            if (have_gran++)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "spec '%s': more than one granularity", text);
            s.granularity = field[4] == 't' ? QMX_PER_TENSOR : QMX_PER_CHANNEL;
        } else if (strncmp(field, "per_block=", 10) == 0) {
            long v;
            if (have_gran++)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "spec '%s': more than one granularity", text);
            if (!qmxc__parse_int(field + 10, &v) || v <= 0)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "spec '%s': per_block needs a positive block size", text);
            s.granularity = QMX_PER_BLOCK;
            s.block_size = (size_t)v;
        } else if (strncmp(field, "axis=", 5) == 0) {
            long v;
            if (s.axis_set++ || !qmxc__parse_int(field + 5, &v) || v < -QMXF_MAX_RANK || v >= QMXF_MAX_RANK)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "spec '%s': axis needs one integer in [-8, 7]", text);
            s.axis = (int)v;
        } else if (strcmp(field, "recipe=aqt") == 0) {
            s.recipe = QMX_RECIPE_AQT;
        } else if (strcmp(field, "recipe=qwix") == 0) {
            s.recipe = QMX_RECIPE_QWIX;
        } else if (strcmp(field, "recipe=tflite") == 0) {
            s.recipe = QMX_RECIPE_TFLITE;
        } else if (strcmp(field, "recipe=torch") == 0) {
            s.recipe = QMX_RECIPE_TORCH;
        } else if (strcmp(field, "recipe=onnx") == 0) {
            s.recipe = QMX_RECIPE_ONNX;
        } else if (strcmp(field, "asym") == 0) {
            s.asymmetric = 1;
        } else if (strcmp(field, "narrow") == 0) {
            s.narrow_range = 1;
        } else if (strcmp(field, "preserve_max") == 0) {
            s.preserve_max_val = 1;
        } else {
            return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                              "spec '%s': unknown option '%s' (per_tensor per_channel per_block=N "
                              "axis=A recipe=aqt|qwix|tflite|torch|onnx asym narrow preserve_max)",
                              text, field);
        }
    }
    if (first || (s.kind == QMXC_QUANT && !s.dtype))
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "spec '%s': empty", text);
    if (s.kind == QMXC_QUANT && s.granularity == QMX_PER_TENSOR && s.axis_set)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "spec '%s': axis= has no meaning per_tensor", text);
    *spec = s;
    return QMX_OK;
}

/* 'PATTERN=SPEC' into *rule. */
QMXF_FN qmx_status qmxc_parse_rule(const char *text, qmxc_rule *rule, char *err, size_t err_size) {
    const char *eq;
    qmxc_rule r;
    qmx_status st;
    if (!text || !rule) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    eq = strchr(text, '=');
    if (!eq || eq == text)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "rule '%s': expected PATTERN=SPEC", text);
    if ((size_t)(eq - text) >= sizeof r.pattern)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "rule '%s': pattern too long", text);
    memset(&r, 0, sizeof r);
    memcpy(r.pattern, text, (size_t)(eq - text));
    st = qmxc_parse_spec(eq + 1, &r.spec, err, err_size);
    if (st) return st;
    *rule = r;
    return QMX_OK;
}

/* Whole-string glob match: '*' any run, '?' any one character. Iterative, no recursion. */
QMXF_FN int qmxc_glob(const char *pat, const char *s) {
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            resume = s;
        } else if (*pat == '?' || *pat == *s) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++resume;
        } else
            return 0;
    }
    while (*pat == '*') pat++;
    return *pat == 0;
}

/* ---- quantizing one tensor ---- */
typedef struct qmxc_result {
    const qmxf_tensor *t;
    qmxc_spec spec;
    int axis; /* -1 when per tensor or float */
    qmx_qconfig cfg;
    void *q; /* quantized data (or a float copy) */
    size_t q_bytes;
    float *scales;
    size_t n_scales;
    int32_t *zp;
    qmx_mx_config mx;     /* QMXC_MX: the config of qmx_mx_quantize (cfg holds the element dtype) */
    uint8_t *scale_codes; /* QMXC_MX: n_scales codes (E8M0; NVFP4: E4M3) */
    char ident[QMXF_MAX_NAME + 16];
} qmxc_result;

QMXF_FN void qmxc_result_free(qmxc_result *r) {
    free(r->q);
    free(r->scales);
    free(r->zp);
    free(r->scale_codes);
    r->q = NULL;
    r->scales = NULL;
    r->zp = NULL;
    r->scale_codes = NULL;
}

/* The spec of tensor name: first matching rule, else def. */
QMXF_FN const qmxc_spec *qmxc_match(const qmxc_rule *rules, size_t n_rules, const qmxc_spec *def,
                                    const char *name) {
    size_t i;
    for (i = 0; i < n_rules; i++)
        if (qmxc_glob(rules[i].pattern, name)) return &rules[i].spec;
    return def;
}

/* The element dtype of a block-scaled format (the descriptor's dtype). */
QMXF_FN qmx_dtype qmxc__mx_element_dtype(qmx_mx_format f) {
    switch (f) {
    case QMX_MXFP8_E4M3: return QMX_FP8_E4M3FN;
    case QMX_MXFP8_E5M2: return QMX_FP8_E5M2;
    case QMX_MXFP6_E2M3: return QMX_FP6_E2M3;
    case QMX_MXFP6_E3M2: return QMX_FP6_E3M2;
    case QMX_MXINT8: return QMX_INT8;
    default: return QMX_FP4_E2M1; /* MXFP4, NVFP4 */
    }
}

/* A block-scaled tensor: blocks along the axis (default the last), qmx_mx_quantize. NVFP4
 * two_level: tensor_scale = amax / (448 * 6) in float32, as torchao's per_tensor_amax_to_scale
 * (an all-zero tensor keeps the single-level form: no scale can be 0). */
QMXF_FN qmx_status qmxc__quantize_mx(const qmxf_tensor *t, const qmxc_spec *spec, qmxc_result *x, qmxc_result *r,
                                     char *err, size_t err_size) {
    size_t i, outer = 1, inner = 1, dims1 = 1;
    const size_t *dims = t->rank ? t->dims : &dims1;
    int rank = t->rank ? t->rank : 1, a = spec->axis_set ? spec->axis : rank - 1;
    qmx_status st;
    if (a < 0) a += rank;
    if (a < 0 || a >= rank)
        return qmxf__fail(err, err_size, QMX_ERR_SHAPE, "tensor '%s': axis %d out of range for rank %d", t->name,
                          spec->axis, t->rank);
    for (i = 0; i < (size_t)a; i++) outer *= dims[i];
    for (i = (size_t)a + 1; i < (size_t)rank; i++) inner *= dims[i];
    x->axis = a;
    x->mx.format = spec->mx_format;
    x->mx.rule = spec->mx_rule;
    x->mx.block_size = spec->block_size;
    x->mx.outer = outer;
    x->mx.axis_len = dims[a];
    x->mx.inner = inner;
    { /* finite data only, as for every quantized tensor of the converter */
        float amax = 0.0f;
        for (i = 0; i < t->count; i++) {
            float v = t->data[i] < 0.0f ? -t->data[i] : t->data[i];
            if (!(v <= 3.4028234663852886e38f))
                return qmxf__fail(err, err_size, QMX_ERR_NONFINITE,
                                  "tensor '%s': %s (the tensor holds NaN or Inf)", t->name,
                                  qmx_status_str(QMX_ERR_NONFINITE));
            if (v > amax) amax = v;
        }
        if (spec->two_level && amax > 0.0f) {
            volatile float ts = amax / 2688.0f; /* one float32 division, as torchao */
            x->mx.tensor_scale = ts;
        }
    }
    st = qmx_mx_storage(&x->mx, t->count, &x->q_bytes, &x->n_scales);
    if (st) return qmxf__fail(err, err_size, st, "tensor '%s': %s for this rule", t->name, qmx_status_str(st));
    x->cfg.dtype = qmxc__mx_element_dtype(spec->mx_format);
    x->cfg.granularity = QMX_PER_BLOCK;
    x->cfg.outer = outer;
    x->cfg.axis_len = dims[a];
    x->cfg.inner = inner;
    x->cfg.block_size = spec->block_size ? spec->block_size : spec->mx_format == QMX_NVFP4 ? 16 : 32;
    x->q = malloc(x->q_bytes ? x->q_bytes : 1);
    x->scale_codes = (uint8_t *)malloc(x->n_scales ? x->n_scales : 1);
    if (!x->q || !x->scale_codes) {
        qmxc_result_free(x);
        return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory");
    }
    st = qmx_mx_quantize(&x->mx, t->data, t->count, (uint8_t *)x->q, x->q_bytes, x->scale_codes, x->n_scales);
    if (st) {
        qmxc_result_free(x);
        return qmxf__fail(err, err_size, st, "tensor '%s': %s", t->name, qmx_status_str(st));
    }
    *r = *x;
    return QMX_OK;
}

/* Quantizes t per spec into r (r owns its buffers on success; untouched on error). */
QMXF_FN qmx_status qmxc_quantize_tensor(const qmxf_tensor *t, const qmxc_spec *spec, qmxc_result *r,
                                        char *err, size_t err_size) {
    qmxc_result x;
    size_t i, outer = 1, inner = 1, axis_len;
    size_t dims1 = 1;
    const size_t *dims = t->rank ? t->dims : &dims1;
    int rank = t->rank ? t->rank : 1, want_zp;
    qmx_status st;

    memset(&x, 0, sizeof x);
    x.t = t;
    x.spec = *spec;
    x.axis = -1;
    x.cfg.dtype = QMX_FLOAT32;
    x.cfg.granularity = QMX_PER_TENSOR;
    x.cfg.outer = 1;
    x.cfg.axis_len = t->count;
    x.cfg.inner = 1;
    if (spec->kind == QMXC_SKIP) {
        *r = x;
        return QMX_OK;
    }
    if (t->count == 0) { /* nothing to quantize: an empty float tensor */
        x.spec.kind = QMXC_FLOAT;
        *r = x;
        return QMX_OK;
    }
    if (spec->kind == QMXC_FLOAT) {
        for (i = 0; i < t->count; i++) {
            uint32_t b;
            memcpy(&b, &t->data[i], 4);
            if ((b & 0x7F800000u) == 0x7F800000u)
                return qmxf__fail(
                    err, err_size, QMX_ERR_NONFINITE,
                    "tensor '%s': element %lu is NaN or Inf; a kept-float tensor must be finite", t->name,
                    (unsigned long)i);
        }
        x.q = malloc(t->count * sizeof(float));
        if (!x.q) return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory");
        memcpy(x.q, t->data, t->count * sizeof(float));
        x.q_bytes = t->count * sizeof(float);
        *r = x;
        return QMX_OK;
    }
    if (spec->kind == QMXC_MX) return qmxc__quantize_mx(t, spec, &x, r, err, err_size);
    x.cfg.dtype = spec->dtype;
    x.cfg.granularity = spec->granularity;
    x.cfg.recipe = spec->recipe;
    x.cfg.asymmetric = spec->asymmetric;
    x.cfg.narrow_range = spec->narrow_range;
    x.cfg.preserve_max_val = spec->preserve_max_val;
    if (spec->granularity != QMX_PER_TENSOR) {
        int a = spec->axis_set ? spec->axis : spec->granularity == QMX_PER_BLOCK ? rank - 1 : 0;
        if (a < 0) a += rank;
        if (a < 0 || a >= rank)
            return qmxf__fail(err, err_size, QMX_ERR_SHAPE, "tensor '%s': axis %d out of range for rank %d",
                              t->name, spec->axis, t->rank);
        for (i = 0; i < (size_t)a; i++) outer *= dims[i]; /* cannot overflow: product <= count */
        axis_len = dims[a];
        for (i = (size_t)a + 1; i < (size_t)rank; i++) inner *= dims[i];
        x.axis = a;
        x.cfg.outer = outer;
        x.cfg.axis_len = axis_len;
        x.cfg.inner = inner;
        x.cfg.block_size = spec->granularity == QMX_PER_BLOCK ? spec->block_size : 0;
    }
    st = qmx_qparams_count(&x.cfg, t->count, &x.n_scales);
    if (!st) st = qmx_dtype_storage_bytes(x.cfg.dtype, t->count, &x.q_bytes);
    if (st)
        return qmxf__fail(err, err_size, st, "tensor '%s': %s for this rule", t->name, qmx_status_str(st));
    x.scales = (float *)malloc(x.n_scales * sizeof(float));
    /* torch / ONNX apply zero points even when symmetric (the middle of an unsigned range) */
    want_zp = spec->asymmetric ||
              (!qmx_dtype_is_fp8(spec->dtype) &&
               (spec->recipe == QMX_RECIPE_TORCH || spec->recipe == QMX_RECIPE_ONNX));
    x.zp = want_zp ? (int32_t *)malloc(x.n_scales * sizeof(int32_t)) : NULL;
    x.q = malloc(x.q_bytes ? x.q_bytes : 1);
    if (!x.scales || !x.q || (want_zp && !x.zp)) {
        qmxc_result_free(&x);
        return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory");
    }
    st = qmx_compute_qparams(&x.cfg, t->data, t->count, x.scales, x.n_scales, x.zp);
    if (!st) st = qmx_quantize(&x.cfg, t->data, t->count, x.scales, x.n_scales, x.zp, x.q, x.q_bytes);
    if (st) {
        qmxc_result_free(&x);
        return qmxf__fail(err, err_size, st, "tensor '%s': %s%s", t->name, qmx_status_str(st),
                          st == QMX_ERR_NONFINITE ? " (the tensor holds NaN or Inf)" : "");
    }
    *r = x;
    return QMX_OK;
}

/* ---- emitting the header ---- */
QMXF_FN const char *qmxc__enum_dtype(qmx_dtype d) {
    switch (d) {
    case QMX_INT8: return "QMX_INT8";
    case QMX_UINT8: return "QMX_UINT8";
    case QMX_INT4: return "QMX_INT4";
    case QMX_UINT4: return "QMX_UINT4";
    case QMX_INT16: return "QMX_INT16";
    case QMX_UINT16: return "QMX_UINT16";
    case QMX_INT2: return "QMX_INT2";
    case QMX_UINT2: return "QMX_UINT2";
    case QMX_INT3: return "QMX_INT3";
    case QMX_INT5: return "QMX_INT5";
    case QMX_INT6: return "QMX_INT6";
    case QMX_INT7: return "QMX_INT7";
    case QMX_NF4: return "QMX_NF4";
    case QMX_FP4_E2M1: return "QMX_FP4_E2M1";
    case QMX_FP6_E2M3: return "QMX_FP6_E2M3";
    case QMX_FP6_E3M2: return "QMX_FP6_E3M2";
    case QMX_FP8_E4M3FN: return "QMX_FP8_E4M3FN";
    case QMX_FP8_E5M2: return "QMX_FP8_E5M2";
    case QMX_FP8_E4M3FNUZ: return "QMX_FP8_E4M3FNUZ";
    case QMX_FP8_E5M2FNUZ: return "QMX_FP8_E5M2FNUZ";
    default: return "QMX_FLOAT32";
    }
}
QMXF_FN const char *qmxc__mx_enum_format(qmx_mx_format f) {
    static const char *const n[] = {"QMX_MXFP8_E4M3", "QMX_MXFP8_E5M2", "QMX_MXFP6_E2M3", "QMX_MXFP6_E3M2",
                                    "QMX_MXFP4",      "QMX_NVFP4",      "QMX_MXINT8"};
    return (unsigned)f < 7u ? n[f] : "QMX_MXFP8_E4M3";
}
QMXF_FN const char *qmxc__mx_enum_rule(qmx_mx_rule r) {
    static const char *const n[] = {"QMX_MX_FLOOR", "QMX_MX_CEIL", "QMX_MX_EVEN", "QMX_MX_RCEIL",
                                    "QMX_MX_QWIX",  "QMX_MX_MICROXCALING", "QMX_MX_GGML"};
    return (unsigned)r < 7u ? n[r] : "QMX_MX_FLOOR";
}
QMXF_FN const char *qmxc__enum_gran(qmx_granularity g) {
    return g == QMX_PER_CHANNEL ? "QMX_PER_CHANNEL" : g == QMX_PER_BLOCK ? "QMX_PER_BLOCK" : "QMX_PER_TENSOR";
}
QMXF_FN const char *qmxc__enum_recipe(qmx_recipe r) {
    return r == QMX_RECIPE_QWIX     ? "QMX_RECIPE_QWIX"
           : r == QMX_RECIPE_TFLITE ? "QMX_RECIPE_TFLITE"
           : r == QMX_RECIPE_TORCH  ? "QMX_RECIPE_TORCH"
           : r == QMX_RECIPE_ONNX   ? "QMX_RECIPE_ONNX"
                                    : "QMX_RECIPE_AQT";
}

/* Text for a comment: no "*" "/" pair, printable ASCII only. */
QMXF_FN void qmxc__comment_text(qmxc_buf *b, const char *s) {
    for (; *s; s++) {
        char ch = (*s >= 32 && *s < 127) ? *s : '?';
        qmxc_put(b, &ch, 1);
        if (ch == '*' && s[1] == '/') qmxc_put(b, " ", 1);
    }
}
/* A C string literal: printable ASCII as is (escaping \ " ?), everything else as \ooo. */
QMXF_FN void qmxc__string_literal(qmxc_buf *b, const char *s) {
    qmxc_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || ch == '"' || ch == '?') {
            char e[2];
            e[0] = '\\';
            e[1] = (char)ch;
            qmxc_put(b, e, 2);
        } else if (ch >= 32 && ch < 127)
            qmxc_put(b, (const char *)&ch, 1);
        else
            qmxc_printf(b, "\\%03o", ch);
    }
    qmxc_put(b, "\"", 1);
}

QMXF_FN void qmxc__shape_text(qmxc_buf *b, const qmxf_tensor *t) {
    int i;
    qmxc_puts(b, "[");
    for (i = 0; i < t->rank; i++) qmxc_printf(b, "%s%lu", i ? ", " : "", (unsigned long)t->dims[i]);
    qmxc_puts(b, "]");
}

/* A parsed --intmp file: the rules and pattern names live in malloc'd arrays. */
typedef struct qmxc_intmp {
    qmx_intmp_rule *rules;
    char *names;
    qmx_intmp_config cfg;
} qmxc_intmp;

QMXF_FN void qmxc_intmp_free(qmxc_intmp *im) {
    free(im->rules);
    free(im->names);
    memset(im, 0, sizeof *im);
}

/* Parses an intmp JSON text (len bytes) into im (untouched on error). */
QMXF_FN qmx_status qmxc_intmp_load(const char *json, size_t len, qmxc_intmp *im, char *err, size_t err_size) {
    qmxc_intmp x;
    size_t max_rules = len / 5 + 1; /* every entry takes at least 5 bytes: "":{} plus a comma */
    qmx_status st;
    memset(&x, 0, sizeof x);
    if (!json || !im) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    x.rules = (qmx_intmp_rule *)malloc(max_rules * sizeof(qmx_intmp_rule));
    x.names = (char *)malloc(len + max_rules + 1); /* unescaped keys are never longer */
    if (!x.rules || !x.names) {
        qmxc_intmp_free(&x);
        return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory");
    }
    st = qmx_intmp_parse(json, len, x.rules, max_rules, x.names, len + max_rules + 1, &x.cfg);
    if (st) {
        qmxc_intmp_free(&x);
        return qmxf__fail(err, err_size, st, "intmp: %s (qmx_intmp_parse)", qmx_status_str(st));
    }
    *im = x;
    return QMX_OK;
}

/* The spec the intmp rules give tensor name: *found = 0 when no key matches and there is no
 * __default__ (then the caller uses --default). */
QMXF_FN qmx_status qmxc_intmp_spec(const qmxc_intmp *im, const char *name, qmxc_spec *spec, int *found,
                                   char *err, size_t err_size) {
    const qmx_intmp_rule *r = NULL;
    qmx_status st = qmx_intmp_lookup(&im->cfg, name, strlen(name), &r);
    qmxc_spec s;
    *found = 0;
    if (st == QMX_ERR_ARG) return QMX_OK; /* no match, no __default__ */
    if (st || !r)
        return qmxf__fail(err, err_size, st ? st : QMX_ERR_ARG, "intmp: tensor '%s': %s", name,
                          qmx_status_str(st));
    memset(&s, 0, sizeof s);
    if (r->w_bits == 0) {
        s.kind = QMXC_FLOAT;
    } else {
        static const qmx_dtype by_bits[9] = {QMX_DTYPE_INVALID, QMX_DTYPE_INVALID, QMX_INT2,
                                             QMX_INT3, QMX_INT4, QMX_INT5, QMX_INT6, QMX_INT7,
                                             QMX_INT8};
        if (r->w_bits != 16 && (r->w_bits < 2 || r->w_bits > 8))
            return qmxf__fail(err, err_size, QMX_ERR_UNSUPPORTED,
                              "intmp: tensor '%s': w_bits %d is not supported (2..8, 16 or null)", name,
                              r->w_bits);
        if (r->w_scale < 1.0f)
            return qmxf__fail(err, err_size, QMX_ERR_UNSUPPORTED,
                              "intmp: tensor '%s': w_scale %g < 1 (clipping) is not supported", name,
                              (double)r->w_scale);
        s.dtype = r->w_bits == 16 ? QMX_INT16 : by_bits[r->w_bits];
        s.recipe = QMX_RECIPE_AQT;
        if (r->tile_size > 0) {
            s.granularity = QMX_PER_BLOCK;
            s.block_size = (size_t)r->tile_size;
        } else
            s.granularity = QMX_PER_CHANNEL;
    }
    *spec = s;
    *found = 1;
    return QMX_OK;
}

typedef struct qmxc_options {
    const char *prefix;      /* C identifier prefix, default "model" */
    const char *out_path;    /* NULL: stdout */
    const char *qmx_include; /* default "qmx.h" */
    qmxc_rule *rules;
    size_t n_rules;
    qmxc_spec def;
    const char **inputs;
    size_t n_inputs;
    const char *intmp_path;  /* --intmp FILE (the caller loads it into intmp) */
    const qmxc_intmp *intmp; /* NULL: no intmp rules */
    int argc;                /* the command line, recorded in the header */
    char **argv;
    int help;
} qmxc_options;

QMXF_FN int qmxc_is_ident(const char *s) {
    if (!s || !*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* Parses the command line (see examples/qmx_convert.c's usage). o owns o->rules and o->inputs
 * (free with qmxc_options_free). */
QMXF_FN void qmxc_options_free(qmxc_options *o) {
    free(o->rules);
    free((void *)o->inputs);
    o->rules = NULL;
    o->inputs = NULL;
}

QMXF_FN qmx_status qmxc_parse_args(int argc, char **argv, qmxc_options *o, char *err, size_t err_size) {
    int i;
    qmx_status st;
    memset(o, 0, sizeof *o);
    o->prefix = "model";
    o->qmx_include = "qmx.h";
    o->def.kind = QMXC_QUANT;
    o->def.dtype = QMX_INT8;
    o->def.granularity = QMX_PER_CHANNEL;
    o->argc = argc;
    o->argv = argv;
    if (argc > 0) {
        o->rules = (qmxc_rule *)malloc((size_t)argc * sizeof(qmxc_rule));
        o->inputs = (const char **)malloc((size_t)argc * sizeof(char *));
        if (!o->rules || !o->inputs) {
            qmxc_options_free(o);
            return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory");
        }
    }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            if (!v) {
                qmxc_options_free(o);
                return qmxf__fail(err, err_size, QMX_ERR_ARG, "%s needs a value", a);
            }
            i++;
            if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
                o->out_path = v;
            else if (strcmp(a, "--prefix") == 0) {
                if (!qmxc_is_ident(v)) {
                    qmxc_options_free(o);
                    return qmxf__fail(err, err_size, QMX_ERR_ARG, "--prefix '%s' is not a C identifier", v);
                }
                o->prefix = v;
            } else if (strcmp(a, "--qmx-include") == 0)
                o->qmx_include = v;
            else if (strcmp(a, "--intmp") == 0)
                o->intmp_path = v;
            else if (strcmp(a, "--rule") == 0) {
                st = qmxc_parse_rule(v, &o->rules[o->n_rules], err, err_size);
                if (st) {
                    qmxc_options_free(o);
                    return st;
                }
                o->n_rules++;
            } else if (strcmp(a, "--default") == 0) {
                st = qmxc_parse_spec(v, &o->def, err, err_size);
                if (st) {
                    qmxc_options_free(o);
                    return st;
                }
            } else {
                qmxc_options_free(o);
                return qmxf__fail(err, err_size, QMX_ERR_ARG, "unknown option %s (see --help)", a);
            }
            continue;
        }
        o->inputs[o->n_inputs++] = a;
    }
    if (!o->help && o->n_inputs == 0) {
        qmxc_options_free(o);
        return qmxf__fail(err, err_size, QMX_ERR_ARG, "no input files (see --help)");
    }
    return QMX_OK;
}

QMXF_FN void qmxc__emit_data(qmxc_buf *b, const qmxc_result *r, const char *pfx) {
    size_t i, n;
    qmx_dtype d = r->cfg.dtype;
    int sbyte = d == QMX_INT8 || d == QMX_INT3 || d == QMX_INT5 || d == QMX_INT6 || d == QMX_INT7;
    const char *type = sbyte              ? "int8_t"
                       : d == QMX_INT16   ? "int16_t"
                       : d == QMX_UINT16  ? "uint16_t"
                       : d == QMX_FLOAT32 ? "float"
                                          : "uint8_t";
    n = d == QMX_INT16 || d == QMX_UINT16 ? r->q_bytes / 2 : d == QMX_FLOAT32 ? r->q_bytes / 4 : r->q_bytes;
    qmxc_printf(b, "static const %s %s_%s_q[%lu] QMX_WEIGHTS_ATTR = {", type, pfx, r->ident,
                (unsigned long)n);
    for (i = 0; i < n; i++) {
        size_t per_line = d == QMX_FLOAT32 ? 4 : sbyte || d == QMX_INT16 || d == QMX_UINT16 ? 16 : 12;
        qmxc_puts(b, i % per_line ? " " : "\n    ");
        if (sbyte)
            qmxc_printf(b, "%d,", ((const int8_t *)r->q)[i]);
        else if (d == QMX_INT16)
            qmxc_printf(b, "%d,", ((const int16_t *)r->q)[i]);
        else if (d == QMX_UINT16)
            qmxc_printf(b, "%u,", (unsigned)((const uint16_t *)r->q)[i]);
        else if (d == QMX_UINT8)
            qmxc_printf(b, "%u,", ((const uint8_t *)r->q)[i]);
        else if (d == QMX_FLOAT32) {
            char f[220];
            uint32_t bits;
            memcpy(&bits, (const char *)r->q + 4 * i, 4);
            qmxc_fmt_float_bits(bits, f);
            qmxc_printf(b, "%s,", f);
        } else
            qmxc_printf(b, "0x%02x,", ((const uint8_t *)r->q)[i]);
    }
    qmxc_puts(b, "\n};\n");
    if (r->scale_codes) {
        qmxc_printf(b, "static const uint8_t %s_%s_scale_codes[%lu] QMX_WEIGHTS_ATTR = {", pfx, r->ident,
                    (unsigned long)r->n_scales);
        for (i = 0; i < r->n_scales; i++)
            qmxc_printf(b, "%s0x%02x,", i % 12 ? " " : "\n    ", r->scale_codes[i]);
        qmxc_puts(b, "\n};\n");
    } else if (r->n_scales) {
        qmxc_printf(b, "static const float %s_%s_scales[%lu] QMX_WEIGHTS_ATTR = {", pfx, r->ident,
                    (unsigned long)r->n_scales);
        for (i = 0; i < r->n_scales; i++) {
            char f[220];
            uint32_t bits;
            memcpy(&bits, &r->scales[i], 4);
            qmxc_fmt_float_bits(bits, f);
            qmxc_printf(b, "%s%s,", i % 4 ? " " : "\n    ", f);
        }
        qmxc_puts(b, "\n};\n");
    }
    if (r->zp) {
        qmxc_printf(b, "static const int32_t %s_%s_zp[%lu] QMX_WEIGHTS_ATTR = {", pfx, r->ident,
                    (unsigned long)r->n_scales);
        for (i = 0; i < r->n_scales; i++) qmxc_printf(b, "%s%ld,", i % 16 ? " " : "\n    ", (long)r->zp[i]);
        qmxc_puts(b, "\n};\n");
    }
}

/* Whether two tensors' symbols could collide: each tensor X emits X, X_q, X_scales, X_zp. */
QMXF_FN int qmxc__ident_clash(const char *x, const char *y) {
    static const char *suffix[] = {"", "_q", "_scales", "_zp"};
    size_t a, b, lx = strlen(x), ly = strlen(y);
    for (a = 0; a < 4; a++)
        for (b = 0; b < 4; b++) {
            size_t sa = strlen(suffix[a]), sb = strlen(suffix[b]);
            if (lx + sa != ly + sb) continue;
            { /* compare x + suffix[a] with y + suffix[b] without building them */
                size_t n = lx + sa, i;
                int same = 1;
                for (i = 0; i < n && same; i++) {
                    char cx = i < lx ? x[i] : suffix[a][i - lx];
                    char cy = i < ly ? y[i] : suffix[b][i - ly];
                    same = cx == cy;
                }
                if (same) return 1;
            }
        }
    return 0;
}

/* Quantizes every tensor of in per the options' rules and writes the header into out.
 * log (may be NULL) gets one summary line per tensor. */
QMXF_FN qmx_status qmxc_convert(const qmxc_options *o, const qmxf_list *in, qmxc_buf *out, FILE *log,
                                char *err, size_t err_size) {
    qmxc_result *res;
    size_t i, j, n_emit = 0, total_q = 0, total_s = 0, total_f = 0;
    qmx_status st = QMX_OK;
    char upper[QMXF_MAX_NAME];
    const char *pfx = o->prefix;
    qmxc_buf b;

    memset(&b, 0, sizeof b);
    if (strlen(pfx) >= sizeof upper) return qmxf__fail(err, err_size, QMX_ERR_ARG, "prefix too long");
    for (i = 0; pfx[i]; i++) upper[i] = (char)(pfx[i] >= 'a' && pfx[i] <= 'z' ? pfx[i] - 32 : pfx[i]);
    upper[i] = 0;
    res = (qmxc_result *)calloc(in->n ? in->n : 1, sizeof *res);
    if (!res) return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory");
    for (i = 0; i < in->n; i++) {
        const qmxc_spec *sp = qmxc_match(o->rules, o->n_rules, NULL, in->t[i].name);
        qmxc_spec from_intmp;
        if (!sp && o->intmp) {
            int found;
            st = qmxc_intmp_spec(o->intmp, in->t[i].name, &from_intmp, &found, err, err_size);
            if (st) goto done;
            if (found) sp = &from_intmp;
        }
        if (!sp) sp = &o->def;
        for (j = 0; j < i; j++)
            if (strcmp(in->t[j].name, in->t[i].name) == 0) {
                st =
                    qmxf__fail(err, err_size, QMX_ERR_ARG, "two input tensors are named '%s'", in->t[i].name);
                goto done;
            }
        st = qmxc_quantize_tensor(&in->t[i], sp, &res[i], err, err_size);
        if (st) goto done;
        if (res[i].spec.kind == QMXC_SKIP) continue;
        n_emit++;
        { /* identifier: sanitised name, unique */
            char *id = res[i].ident;
            const char *s = in->t[i].name;
            size_t k = 0;
            int suffix = 1, clash;
            if (!*s || (*s >= '0' && *s <= '9')) id[k++] = 't', id[k++] = '_';
            for (; *s; s++)
                id[k++] =
                    (char)(((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))
                               ? *s
                               : '_');
            id[k] = 0;
            do {
                clash = strcmp(res[i].ident, "tensors") == 0;
                for (j = 0; j < i && !clash; j++)
                    if (res[j].spec.kind != QMXC_SKIP) clash = qmxc__ident_clash(res[j].ident, res[i].ident);
                if (clash) sprintf(id + k, "_%d", ++suffix);
            } while (clash);
        }
        total_q += res[i].cfg.dtype == QMX_FLOAT32 ? 0 : res[i].q_bytes;
        total_f += res[i].cfg.dtype == QMX_FLOAT32 ? res[i].q_bytes : 0;
        total_s += res[i].n_scales * (res[i].scale_codes ? 1 : sizeof(float) + (res[i].zp ? 4 : 0));
        if (log) {
            fprintf(log, "  %-40s %-9s [", in->t[i].name, qmxf_source_dtype_name(in->t[i].source_dtype));
            for (j = 0; j < (size_t)in->t[i].rank; j++)
                fprintf(log, "%s%lu", j ? "," : "", (unsigned long)in->t[i].dims[j]);
            fprintf(log, "] -> %s %s", qmx_dtype_name(res[i].cfg.dtype),
                    res[i].cfg.dtype == QMX_FLOAT32 ? "" : qmxc__enum_gran(res[i].cfg.granularity) + 4);
            fprintf(log, " %lu bytes + %lu scales\n", (unsigned long)res[i].q_bytes,
                    (unsigned long)res[i].n_scales);
        }
    }
    if (n_emit == 0) {
        st = qmxf__fail(err, err_size, QMX_ERR_ARG, "no tensor left to emit (every tensor was skipped)");
        goto done;
    }

    /* The header. */
    qmxc_printf(&b,
                "/* %s.h - generated by qmx_convert (format %s, qmx %d.%d.%d). Do not edit.\n *\n * Command:",
                pfx, QMXC_VERSION, QMX_VERSION_MAJOR, QMX_VERSION_MINOR, QMX_VERSION_PATCH);
    for (i = 1; i < (size_t)o->argc; i++) {
        qmxc_puts(&b, " ");
        qmxc__comment_text(&b, o->argv[i]);
    }
    qmxc_printf(
        &b,
        "\n *\n * %lu tensors: %lu quantized bytes, %lu bytes of scales and zero points, %lu float bytes.\n",
        (unsigned long)n_emit, (unsigned long)total_q, (unsigned long)total_s, (unsigned long)total_f);
    qmxc_puts(
        &b,
        " * Dequantize element i of a quantized tensor d: build a qmx_qconfig from d's dtype, granularity,\n"
        " * outer, axis_len, inner, block_size, recipe, asymmetric, narrow_range, preserve_max_val and\n"
        " * call qmx_dequantize(&cfg, d->data, d->data_bytes, d->count, d->scales, d->n_scales,\n"
        " * d->zero_points, out). dtype QMX_FLOAT32 means the tensor was kept as float (no scales).\n"
        " * A block-scaled tensor (d->mx == 1): build a qmx_mx_config {d->mx_format, d->mx_rule,\n"
        " * d->block_size, d->outer, d->axis_len, d->inner, d->mx_tensor_scale} and call\n"
        " * qmx_mx_dequantize(&mc, d->data, d->data_bytes, d->scale_codes, d->n_scales, d->count, out).\n */\n");
    qmxc_printf(&b,
                "#ifndef QMX_MODEL_%s_H\n#define QMX_MODEL_%s_H\n\n#include <stddef.h>\n#include "
                "<stdint.h>\n#include ",
                upper, upper);
    qmxc__string_literal(&b, o->qmx_include);
    qmxc_puts(&b, "\n\n#ifndef QMX_WEIGHTS_ATTR\n#  if defined(__GNUC__) || defined(__clang__)\n"
                  "#    define QMX_WEIGHTS_ATTR __attribute__((aligned(16)))\n#  else\n#    define "
                  "QMX_WEIGHTS_ATTR\n#  endif\n#endif\n\n"
                  "#ifndef QMX_MODEL_TENSOR_DEFINED\n#define QMX_MODEL_TENSOR_DEFINED\n"
                  "/* One tensor of a model header written by qmx_convert. */\n"
                  "typedef struct qmx_model_tensor {\n"
                  "    const char *name;              /* the name in the source file */\n"
                  "    qmx_dtype dtype;               /* storage; QMX_FLOAT32 = kept as float */\n"
                  "    int rank;\n"
                  "    size_t shape[8];               /* shape[0..rank-1], row-major (C order) */\n"
                  "    size_t count;                  /* elements */\n"
                  "    qmx_granularity granularity;\n"
                  "    int axis;                      /* the scaled axis; -1 per tensor or float */\n"
                  "    size_t outer, axis_len, inner; /* the qmx_qconfig view of the shape */\n"
                  "    size_t block_size;             /* QMX_PER_BLOCK */\n"
                  "    qmx_recipe recipe;\n"
                  "    int asymmetric, narrow_range, preserve_max_val;\n"
                  "    const void *data;              /* qmx storage of dtype (int4: packed) */\n"
                  "    size_t data_bytes;\n"
                  "    const float *scales;           /* n_scales, qmx_qparams_count order */\n"
                  "    size_t n_scales;\n"
                  "    const int32_t *zero_points;    /* n_scales, or NULL when symmetric */\n"
                  "    int mx;                        /* 1: block-scaled (qmx_mx_quantize): dtype is the\n"
                  "                                      element type, scales NULL, scale_codes set */\n"
                  "    qmx_mx_format mx_format;\n"
                  "    qmx_mx_rule mx_rule;\n"
                  "    float mx_tensor_scale;         /* NVFP4 two-level, else 0 */\n"
                  "    const uint8_t *scale_codes;    /* n_scales E8M0 (NVFP4: E4M3) codes */\n"
                  "} qmx_model_tensor;\n#endif\n");
    for (i = 0; i < in->n; i++) {
        const qmxc_result *r = &res[i];
        const qmxf_tensor *t = &in->t[i];
        int d;
        if (r->spec.kind == QMXC_SKIP) continue;
        qmxc_puts(&b, "\n/* ");
        qmxc__comment_text(&b, t->name);
        qmxc_puts(&b, ": ");
        qmxc__shape_text(&b, t);
        qmxc_printf(&b, " %s -> %s", qmxf_source_dtype_name(t->source_dtype), qmx_dtype_name(r->cfg.dtype));
        if (r->cfg.dtype != QMX_FLOAT32) {
            qmxc_printf(&b, ", %s",
                        r->cfg.granularity == QMX_PER_TENSOR    ? "per tensor"
                        : r->cfg.granularity == QMX_PER_CHANNEL ? "per channel"
                                                                : "per block");
            if (r->axis >= 0) qmxc_printf(&b, " (axis %d", r->axis);
            if (r->cfg.granularity == QMX_PER_BLOCK)
                qmxc_printf(&b, ", block %lu", (unsigned long)r->cfg.block_size);
            if (r->axis >= 0) qmxc_puts(&b, ")");
            if (r->scale_codes)
                qmxc_printf(&b, ", %s rule %s, %lu scale codes", qmxc__mx_enum_format(r->mx.format) + 4,
                            qmxc__mx_enum_rule(r->mx.rule) + 7, (unsigned long)r->n_scales);
            else
                qmxc_printf(&b, ", %s%s, %lu scales", qmxc__enum_recipe(r->cfg.recipe) + 11,
                            r->cfg.asymmetric ? " asymmetric" : "", (unsigned long)r->n_scales);
        }
        qmxc_puts(&b, " */\n");
        if (t->count) qmxc__emit_data(&b, r, pfx);
        qmxc_printf(&b, "static const qmx_model_tensor %s_%s = {\n    ", pfx, r->ident);
        qmxc__string_literal(&b, t->name);
        qmxc_printf(&b, ", %s, %d, {", qmxc__enum_dtype(r->cfg.dtype), t->rank);
        for (d = 0; d < QMXF_MAX_RANK; d++)
            qmxc_printf(&b, "%s%lu", d ? ", " : "", (unsigned long)(d < t->rank ? t->dims[d] : 0));
        qmxc_printf(&b, "}, %lu,\n    %s, %d, %lu, %lu, %lu, %lu, %s, %d, %d, %d,\n    ",
                    (unsigned long)t->count, qmxc__enum_gran(r->cfg.granularity), r->axis,
                    (unsigned long)r->cfg.outer, (unsigned long)r->cfg.axis_len, (unsigned long)r->cfg.inner,
                    (unsigned long)r->cfg.block_size, qmxc__enum_recipe(r->cfg.recipe), r->cfg.asymmetric,
                    r->cfg.narrow_range, r->cfg.preserve_max_val);
        if (t->count)
            qmxc_printf(&b, "%s_%s_q, %lu, ", pfx, r->ident, (unsigned long)r->q_bytes);
        else
            qmxc_puts(&b, "NULL, 0, ");
        if (r->scale_codes)
            qmxc_printf(&b, "NULL, %lu, ", (unsigned long)r->n_scales); /* the codes come last */
        else if (r->n_scales)
            qmxc_printf(&b, "%s_%s_scales, %lu, ", pfx, r->ident, (unsigned long)r->n_scales);
        else
            qmxc_puts(&b, "NULL, 0, ");
        if (r->zp)
            qmxc_printf(&b, "%s_%s_zp,\n    ", pfx, r->ident);
        else
            qmxc_puts(&b, "NULL,\n    ");
        if (r->scale_codes) {
            char f[220];
            uint32_t bits;
            memcpy(&bits, &r->mx.tensor_scale, 4);
            qmxc_fmt_float_bits(bits, f);
            qmxc_printf(&b, "1, %s, %s, %s, %s_%s_scale_codes\n};\n", qmxc__mx_enum_format(r->mx.format),
                        qmxc__mx_enum_rule(r->mx.rule), f, pfx, r->ident);
        } else
            qmxc_puts(&b, "0, QMX_MXFP8_E4M3, QMX_MX_FLOOR, 0.0f, NULL\n};\n");
    }
    qmxc_printf(&b, "\n#define %s_TENSOR_COUNT %lu\n", upper, (unsigned long)n_emit);
    qmxc_printf(&b, "static const qmx_model_tensor *const %s_tensors[%s_TENSOR_COUNT] = {", pfx, upper);
    for (i = 0, j = 0; i < in->n; i++)
        if (res[i].spec.kind != QMXC_SKIP)
            qmxc_printf(&b, "%s&%s_%s,", j++ % 4 ? " " : "\n    ", pfx, res[i].ident);
    qmxc_printf(&b, "\n};\n\n#endif /* QMX_MODEL_%s_H */\n", upper);
    if (b.oom) {
        st = qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory writing the header");
        goto done;
    }
    qmxc_buf_free(out);
    *out = b;
    b.p = NULL;
done:
    qmxc_buf_free(&b);
    for (i = 0; i < in->n; i++) qmxc_result_free(&res[i]);
    free(res);
    return st;
}

#endif /* QMX_CONVERT_CORE_H */
