/* qmx_files.h - the tensor-file readers of qmx_convert: .npy and .safetensors to float32.
 *
 * This is HOST code (the converter runs on a desktop), so unlike the library headers it uses
 * libc: malloc, qsort, snprintf, stdio for the file helper. It parses from a memory buffer, so
 * the same code runs in the converter, in tests/test_convert.c and in the libFuzzer harnesses
 * tests/fuzz/fuzz_convert_*.c. Include it after "qmx.h" in ONE translation unit (every function
 * is static); it needs qmx.h only for qmx_status.
 *
 * FORMATS READ
 *   .npy (numpy.lib.format, versions 1.0, 2.0, 3.0): magic "\x93NUMPY", major, minor 0, header
 *     length (uint16 LE for v1, uint32 LE for v2/v3), then a Python dict literal with exactly
 *     the keys 'descr', 'fortran_order', 'shape', then the raw data in C order.
 *     descr: '<f4' '>f4' (float32), '<f2' '>f2' (float16). Rejected with a clear message:
 *     fortran_order True, object dtype ('|O'), structured dtypes (a list), float64, void (which
 *     is how ml_dtypes' bfloat16 is saved; use safetensors for bf16) and every other dtype.
 *     The data must be exactly prod(shape) * itemsize bytes: a shape that lies either way is an
 *     error (numpy itself ignores trailing bytes; qmx refuses them).
 *   .safetensors: uint64 LE header length N, N bytes of UTF-8 JSON (possibly padded with
 *     spaces), then the byte buffer. The JSON object maps each tensor name to
 *     {"dtype": "F32"|"F16"|"BF16", "shape": [d0, ...], "data_offsets": [begin, end]} (offsets
 *     relative to the byte buffer, little-endian data, C order); "__metadata__" maps strings to
 *     strings and is ignored. Validated as the reference implementation (huggingface/
 *     safetensors) does: sorted by offset the tensors must tile the buffer exactly (no gap, no
 *     overlap, nothing after the last), end - begin == prod(shape) * itemsize; plus: duplicate
 *     keys, unknown keys in "__metadata__" values, non-UTF-8 strings and NUL in names refused.
 *     Unknown keys inside a tensor entry are skipped (forward compatibility).
 *   Both: rank <= QMXF_MAX_RANK (8), every product checked for size_t overflow BEFORE anything
 *   is allocated, so the memory a file can make the reader allocate is bounded by its size
 *   (at most 2x the data, for float16 -> float32). A scalar (shape ()) has rank 0, count 1.
 *
 * CONVERSIONS (exact; bit patterns, no FPU, so x87 cannot quieten a signalling NaN)
 *   float16 -> float32: every finite value exactly (subnormals normalised), +-Inf, NaN with its
 *     payload shifted up 13 bits (a signalling NaN stays signalling), as numpy's astype.
 *   bfloat16 -> float32: the 16 bits become the high half (bits << 16): exact, as torch.
 *   Big-endian data ('>f4', '>f2') is byte-swapped; nothing depends on the host's byte order.
 *
 * ERRORS
 *   Every reader returns a qmx_status and, on error, writes a one-line English message into
 *   err (never a crash, never a partial result: the list is only appended to on success).
 *     QMX_ERR_PARSE        bad magic, bad version, malformed header / JSON, missing or
 *                          duplicate keys, bad UTF-8
 *     QMX_ERR_SIZE         file shorter than its headers say; offsets outside the buffer,
 *                          gaps, overlaps, trailing bytes; out of memory
 *     QMX_ERR_SHAPE        the data size disagrees with the shape ("lying shape")
 *     QMX_ERR_OVERFLOW     a dimension, the element count or the byte count overflows size_t
 *     QMX_ERR_DTYPE        a dtype other than float32 / float16 / bfloat16
 *     QMX_ERR_UNSUPPORTED  fortran_order True, rank > 8
 *     QMX_ERR_NULL         a NULL argument
 */
#ifndef QMX_FILES_H
#define QMX_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include "qmx.h"

#define QMXF_MAX_RANK 8
#define QMXF_MAX_NAME 256 /* bytes of a tensor name, NUL included */
#define QMXF_MAX_JSON_DEPTH 64

/* Every function is static; unused ones must not warn in a program that uses only some. */
#if defined(__GNUC__) || defined(__clang__)
#  define QMXF_FN static __attribute__((unused))
#  define QMXF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define QMXF_FN static
#  define QMXF_PRINTF(f, a)
#endif

typedef enum qmxf_source_dtype { QMXF_F32 = 1, QMXF_F16 = 2, QMXF_BF16 = 3 } qmxf_source_dtype;

typedef struct qmxf_tensor {
    char name[QMXF_MAX_NAME];       /* UTF-8, NUL-terminated */
    qmxf_source_dtype source_dtype; /* what the file stored */
    int rank;
    size_t dims[QMXF_MAX_RANK];
    size_t count; /* product of dims (1 for rank 0) */
    float *data;  /* count floats (malloc), NULL when count == 0 */
} qmxf_tensor;

/* A growing list of tensors; zero-initialise it, free it with qmxf_list_free. */
typedef struct qmxf_list {
    qmxf_tensor *t;
    size_t n, cap;
} qmxf_list;

/* ---- conversions ---- */
QMXF_FN uint32_t qmxf_f16_to_f32_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0) {
        if (m == 0) return sign;
        e = 1; /* subnormal: m * 2^-24, normalise the mantissa */
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        m &= 0x3FFu;
        return sign | ((e + 112u) << 23) | (m << 13); /* e is 1 - shifts, wraps as uint */
    }
    if (e == 31) return sign | 0x7F800000u | (m << 13); /* Inf, NaN with its payload */
    return sign | ((e + 112u) << 23) | (m << 13);
}
QMXF_FN uint32_t qmxf_bf16_to_f32_bits(uint16_t b) { return (uint32_t)b << 16; }
QMXF_FN float qmxf__bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
QMXF_FN float qmxf_f16_to_f32(uint16_t h) { return qmxf__bits_to_float(qmxf_f16_to_f32_bits(h)); }
QMXF_FN float qmxf_bf16_to_f32(uint16_t b) { return qmxf__bits_to_float(qmxf_bf16_to_f32_bits(b)); }

QMXF_FN const char *qmxf_source_dtype_name(qmxf_source_dtype d) {
    return d == QMXF_F32 ? "float32" : d == QMXF_F16 ? "float16" : d == QMXF_BF16 ? "bfloat16" : "?";
}

QMXF_FN void qmxf_list_free(qmxf_list *l) {
    size_t i;
    if (!l) return;
    for (i = 0; i < l->n; i++) free(l->t[i].data);
    free(l->t);
    l->t = NULL;
    l->n = l->cap = 0;
}

/* ---- internals ---- */
QMXF_FN QMXF_PRINTF(4, 5) qmx_status
    qmxf__fail(char *err, size_t err_size, qmx_status st, const char *fmt, ...) {
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return st;
}

QMXF_FN uint32_t qmxf__le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Element count and byte count of a shape, both overflow-checked. */
QMXF_FN qmx_status qmxf__shape_bytes(const size_t *dims, int rank, size_t item, size_t *count, size_t *bytes,
                                     char *err, size_t err_size) {
    size_t c = 1;
    int i;
    for (i = 0; i < rank; i++) {
        if (dims[i] != 0 && c > SIZE_MAX / dims[i])
            return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW,
                              "shape product overflows size_t at dimension %d", i);
        c *= dims[i];
    }
    if (c > SIZE_MAX / item)
        return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "byte count of the shape overflows size_t");
    *count = c;
    *bytes = c * item;
    return QMX_OK;
}

/* Converts count elements of raw little/big-endian data into a new float array. */
QMXF_FN qmx_status qmxf__convert(const uint8_t *src, size_t count, qmxf_source_dtype dt, int big_endian,
                                 float **out, char *err, size_t err_size) {
    size_t i;
    float *f;
    *out = NULL;
    if (count == 0) return QMX_OK;
    if (count > SIZE_MAX / sizeof(float))
        return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "float32 buffer size overflows size_t");
    f = (float *)malloc(count * sizeof(float));
    if (!f)
        return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory (%lu floats)", (unsigned long)count);
    for (i = 0; i < count; i++) {
        uint32_t bits;
        if (dt == QMXF_F32) {
            const uint8_t *p = src + 4 * i;
            bits = big_endian ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]
                              : qmxf__le32(p);
        } else {
            const uint8_t *p = src + 2 * i;
            uint16_t h = (uint16_t)(big_endian ? ((unsigned)p[0] << 8) | p[1] : ((unsigned)p[1] << 8) | p[0]);
            bits = dt == QMXF_F16 ? qmxf_f16_to_f32_bits(h) : qmxf_bf16_to_f32_bits(h);
        }
        memcpy(&f[i], &bits, 4); /* bit copy: no FPU load that could alter a NaN */
    }
    *out = f;
    return QMX_OK;
}

QMXF_FN qmx_status qmxf__list_reserve(qmxf_list *l, size_t extra, char *err, size_t err_size) {
    size_t want, cap;
    qmxf_tensor *t;
    if (extra > SIZE_MAX - l->n) return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "too many tensors");
    want = l->n + extra;
    if (want <= l->cap) return QMX_OK;
    cap = l->cap ? l->cap : 8;
    while (cap < want) {
        if (cap > (SIZE_MAX / sizeof(qmxf_tensor)) / 2)
            return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "too many tensors");
        cap *= 2;
    }
    t = (qmxf_tensor *)realloc(l->t, cap * sizeof(qmxf_tensor));
    if (!t) return qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory (tensor list)");
    l->t = t;
    l->cap = cap;
    return QMX_OK;
}

/* ============================== .npy ============================== */
/* A cursor over the header text: a Python dict literal written by numpy's repr. */
typedef struct qmxf__cur {
    const char *p, *end;
} qmxf__cur;

QMXF_FN void qmxf__ws(qmxf__cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}
QMXF_FN int qmxf__eat(qmxf__cur *c, char ch) {
    qmxf__ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}
QMXF_FN int qmxf__eat_word(qmxf__cur *c, const char *w) {
    size_t n = strlen(w);
    qmxf__ws(c);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* A Python string literal ('...' or "...", no escapes needed by numpy's keys/descr): copies
 * up to cap-1 bytes into out. */
QMXF_FN int qmxf__py_string(qmxf__cur *c, char *out, size_t cap) {
    char q;
    size_t n = 0;
    qmxf__ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    q = *c->p++;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n') return 0;
        if (n + 1 >= cap) return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return 0;
    c->p++;
    out[n] = 0;
    return 1;
}

/* A non-negative decimal integer into size_t; 0 = not a number, -1 = overflow. */
QMXF_FN int qmxf__dec_size(qmxf__cur *c, size_t *v) {
    size_t x = 0;
    int digits = 0;
    qmxf__ws(c);
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (x > (SIZE_MAX - d) / 10) return -1;
        x = x * 10 + d;
        c->p++;
        digits++;
    }
    if (!digits) return 0;
    if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 long suffix */
    *v = x;
    return 1;
}

QMXF_FN qmx_status qmxf__npy_descr(const char *d, qmxf_source_dtype *dt, int *big_endian, char *err,
                                   size_t err_size) {
    char order = d[0];
    const char *t = d + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        order = '=';
        t = d; /* numpy always writes a byte-order character; be explicit */
    }
    if (strcmp(t, "f4") == 0 || strcmp(t, "f2") == 0) {
        if (order != '<' && order != '>')
            return qmxf__fail(err, err_size, QMX_ERR_DTYPE, "npy descr '%s': byte order must be '<' or '>'",
                              d);
        *dt = t[1] == '4' ? QMXF_F32 : QMXF_F16;
        *big_endian = order == '>';
        return QMX_OK;
    }
    if (t[0] == 'O')
        return qmxf__fail(err, err_size, QMX_ERR_DTYPE,
                          "npy descr '%s': object arrays (pickled Python objects) are not supported", d);
    if (strcmp(t, "f8") == 0)
        return qmxf__fail(err, err_size, QMX_ERR_DTYPE,
                          "npy descr '%s': float64 is not supported; save with .astype(numpy.float32)", d);
    if (t[0] == 'V')
        return qmxf__fail(err, err_size, QMX_ERR_DTYPE,
                          "npy descr '%s': void dtype (ml_dtypes bfloat16 is saved so); use "
                          ".safetensors for bfloat16",
                          d);
    return qmxf__fail(err, err_size, QMX_ERR_DTYPE,
                      "npy descr '%s' is not supported (float32 '<f4'/'>f4', float16 '<f2'/'>f2')", d);
}

/* Reads one .npy image (buf, len) as a tensor called name, appended to out. */
QMXF_FN qmx_status qmxf_read_npy(const uint8_t *buf, size_t len, const char *name, qmxf_list *out, char *err,
                                 size_t err_size) {
    static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    size_t hstart, hlen, count = 0, bytes = 0, dims[QMXF_MAX_RANK];
    int major, rank = 0, have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0, big = 0;
    qmxf_source_dtype dt = QMXF_F32;
    char descr[32];
    qmxf__cur c;
    qmx_status st;
    float *data;
    qmxf_tensor *t;

    if (err && err_size) err[0] = 0;
    if (!buf || !out || !name) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    if (len < 10)
        return qmxf__fail(err, err_size, QMX_ERR_SIZE, "npy: truncated (%lu bytes, the preamble is 10)",
                          (unsigned long)len);
    if (memcmp(buf, magic, 6) != 0)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: bad magic (not a .npy file)");
    major = buf[6];
    if (major < 1 || major > 3 || buf[7] != 0)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                          "npy: unsupported format version %d.%d (1.0, 2.0, 3.0 are)", buf[6], buf[7]);
    if (major == 1) {
        hstart = 10;
        hlen = (size_t)buf[8] | ((size_t)buf[9] << 8);
    } else {
        uint32_t h32;
        if (len < 12)
            return qmxf__fail(err, err_size, QMX_ERR_SIZE,
                              "npy: truncated (%lu bytes, the v%d preamble is 12)", (unsigned long)len,
                              major);
        hstart = 12;
        h32 = qmxf__le32(buf + 8);
        hlen = (size_t)h32;
    }
    if (hlen > len - hstart)
        return qmxf__fail(err, err_size, QMX_ERR_SIZE,
                          "npy: header length %lu exceeds the file (%lu bytes after the preamble)",
                          (unsigned long)hlen, (unsigned long)(len - hstart));

    c.p = (const char *)buf + hstart;
    c.end = c.p + hlen;
    if (!qmxf__eat(&c, '{'))
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: header is not a dict literal");
    for (;;) {
        char key[32];
        if (qmxf__eat(&c, '}')) break;
        if (!qmxf__py_string(&c, key, sizeof key) || !qmxf__eat(&c, ':'))
            return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                              "npy: malformed header dict (expected 'key': value)");
        if (strcmp(key, "descr") == 0) {
            if (have_descr++) return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: duplicate key 'descr'");
            qmxf__ws(&c);
            if (c.p < c.end && *c.p == '[')
                return qmxf__fail(err, err_size, QMX_ERR_DTYPE,
                                  "npy: structured dtypes (record arrays) are not supported");
            if (!qmxf__py_string(&c, descr, sizeof descr) || !descr[0])
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: 'descr' is not a short string");
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_fortran++)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: duplicate key 'fortran_order'");
            if (qmxf__eat_word(&c, "True"))
                fortran = 1;
            else if (qmxf__eat_word(&c, "False"))
                fortran = 0;
            else
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: 'fortran_order' is not True or False");
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape++) return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: duplicate key 'shape'");
            if (!qmxf__eat(&c, '('))
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: 'shape' is not a tuple");
            for (;;) {
                size_t d;
                int r;
                if (qmxf__eat(&c, ')')) break;
                r = qmxf__dec_size(&c, &d);
                if (r < 0)
                    return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW,
                                      "npy: dimension %d does not fit size_t", rank);
                if (r == 0)
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "npy: 'shape' holds something other than non-negative integers");
                if (rank == QMXF_MAX_RANK)
                    return qmxf__fail(err, err_size, QMX_ERR_UNSUPPORTED,
                                      "npy: rank above %d is not supported", QMXF_MAX_RANK);
                dims[rank++] = d;
                if (qmxf__eat(&c, ')')) break;
                if (!qmxf__eat(&c, ','))
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: malformed 'shape' tuple");
            }
        } else {
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: unexpected header key '%s'", key);
        }
        if (qmxf__eat(&c, '}')) break;
        if (!qmxf__eat(&c, ','))
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: malformed header dict (expected , or })");
    }
    qmxf__ws(&c);
    while (c.p < c.end && *c.p == '\0') c.p++; /* tolerate NUL padding, as numpy's parser does */
    if (c.p != c.end)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: trailing characters after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "npy: header lacks %s",
                          !have_descr     ? "'descr'"
                          : !have_fortran ? "'fortran_order'"
                                          : "'shape'");
    st = qmxf__npy_descr(descr, &dt, &big, err, err_size);
    if (st) return st;
    if (fortran)
        return qmxf__fail(
            err, err_size, QMX_ERR_UNSUPPORTED,
            "npy: fortran_order True is not supported (save a C-ordered array: numpy.ascontiguousarray)");
    st = qmxf__shape_bytes(dims, rank, dt == QMXF_F32 ? 4 : 2, &count, &bytes, err, err_size);
    if (st) return st;
    if (bytes != len - hstart - hlen)
        return qmxf__fail(err, err_size, QMX_ERR_SHAPE,
                          "npy: the shape needs %lu data bytes but the file holds %lu", (unsigned long)bytes,
                          (unsigned long)(len - hstart - hlen));
    if (strlen(name) >= QMXF_MAX_NAME)
        return qmxf__fail(err, err_size, QMX_ERR_SIZE, "npy: tensor name longer than %d bytes",
                          QMXF_MAX_NAME - 1);
    st = qmxf__list_reserve(out, 1, err, err_size);
    if (st) return st;
    st = qmxf__convert(buf + hstart + hlen, count, dt, big, &data, err, err_size);
    if (st) return st;
    t = &out->t[out->n++];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    t->source_dtype = dt;
    t->rank = rank;
    memcpy(t->dims, dims, (size_t)rank * sizeof(size_t));
    t->count = count;
    t->data = data;
    return QMX_OK;
}

/* ============================== .safetensors ============================== */
typedef struct qmxf__st_entry {
    char name[QMXF_MAX_NAME];
    qmxf_source_dtype dt;
    int rank;
    size_t dims[QMXF_MAX_RANK];
    uint64_t begin, end;
    size_t count, bytes;
} qmxf__st_entry;

/* Validates one UTF-8 sequence at s (n bytes left); returns its length or 0. */
QMXF_FN size_t qmxf__utf8_len(const uint8_t *s, size_t n) {
    uint32_t cp;
    size_t k, i;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        k = 2;
        cp = s[0] & 0x1Fu;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        k = 3;
        cp = s[0] & 0x0Fu;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        k = 4;
        cp = s[0] & 0x07u;
    } else
        return 0;
    if (n < k) return 0;
    for (i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return k;
}

QMXF_FN int qmxf__hex4(const char *p, uint32_t *v) {
    int i;
    *v = 0;
    for (i = 0; i < 4; i++) {
        char ch = p[i];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            d = (unsigned)(ch - 'A' + 10);
        else
            return 0;
        *v = (*v << 4) | d;
    }
    return 1;
}

/* A JSON string; decoded UTF-8 into out (cap bytes incl. NUL) when out != NULL.
 * Returns QMX_OK, or an error with a message. *too_long is set when out was too small. */
QMXF_FN qmx_status qmxf__json_string(qmxf__cur *c, char *out, size_t cap, int *too_long, int *has_nul,
                                     char *err, size_t err_size) {
    size_t n = 0;
    if (too_long) *too_long = 0;
    if (has_nul) *has_nul = 0;
    qmxf__ws(c);
    if (c->p >= c->end || *c->p != '"')
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: JSON string expected");
    c->p++;
    for (;;) {
        uint8_t tmp[4];
        size_t k, i;
        uint8_t ch;
        if (c->p >= c->end)
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: unterminated JSON string");
        ch = (uint8_t)*c->p;
        if (ch == '"') {
            c->p++;
            break;
        }
        if (ch < 0x20)
            return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                              "safetensors: control character in a JSON string");
        if (ch == '\\') {
            uint32_t cp;
            if (c->end - c->p < 2)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: unterminated JSON string");
            ch = (uint8_t)c->p[1];
            c->p += 2;
            switch (ch) {
            case '"':
            case '\\':
            case '/': cp = ch; break;
            case 'b': cp = 8; break;
            case 'f': cp = 12; break;
            case 'n': cp = 10; break;
            case 'r': cp = 13; break;
            case 't': cp = 9; break;
            case 'u':
                if (c->end - c->p < 4 || !qmxf__hex4(c->p, &cp))
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "safetensors: bad \\u escape in a JSON string");
                c->p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u' ||
                        !qmxf__hex4(c->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                          "safetensors: unpaired surrogate in a JSON string");
                    c->p += 6;
                    cp = 0x10000u + ((cp - 0xD800u) << 10) + (lo - 0xDC00u);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "safetensors: unpaired surrogate in a JSON string");
                }
                break;
            default:
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: bad escape in a JSON string");
            }
            if (cp == 0 && has_nul) *has_nul = 1;
            if (cp < 0x80) {
                tmp[0] = (uint8_t)cp;
                k = 1;
            } else if (cp < 0x800) {
                tmp[0] = (uint8_t)(0xC0 | (cp >> 6));
                tmp[1] = (uint8_t)(0x80 | (cp & 0x3F));
                k = 2;
            } else if (cp < 0x10000) {
                tmp[0] = (uint8_t)(0xE0 | (cp >> 12));
                tmp[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                tmp[2] = (uint8_t)(0x80 | (cp & 0x3F));
                k = 3;
            } else {
                tmp[0] = (uint8_t)(0xF0 | (cp >> 18));
                tmp[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
                tmp[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                tmp[3] = (uint8_t)(0x80 | (cp & 0x3F));
                k = 4;
            }
        } else {
            k = qmxf__utf8_len((const uint8_t *)c->p, (size_t)(c->end - c->p));
            if (!k)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: invalid UTF-8 in a JSON string");
            memcpy(tmp, c->p, k);
            c->p += k;
        }
        if (out) {
            if (n + k >= cap) {
                if (too_long) *too_long = 1;
            } else
                for (i = 0; i < k; i++) out[n++] = (char)tmp[i];
        }
    }
    if (out) out[n] = 0;
    return QMX_OK;
}

/* A JSON non-negative integer (no sign, fraction or exponent) into uint64. */
QMXF_FN qmx_status qmxf__json_u64(qmxf__cur *c, uint64_t *v, const char *what, char *err, size_t err_size) {
    uint64_t x = 0;
    int digits = 0;
    qmxf__ws(c);
    if (c->p < c->end && *c->p == '0' && c->end - c->p > 1 && c->p[1] >= '0' && c->p[1] <= '9')
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: %s: leading zero in a JSON number",
                          what);
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "safetensors: %s: integer overflows 64 bits",
                              what);
        x = x * 10 + d;
        c->p++;
        digits++;
    }
    if (!digits || (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')))
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: %s: expected a non-negative integer",
                          what);
    *v = x;
    return QMX_OK;
}

/* Skips any JSON value (depth-limited, so hostile nesting cannot exhaust the stack). */
QMXF_FN qmx_status qmxf__json_skip(qmxf__cur *c, int depth, char *err, size_t err_size) {
    qmx_status st;
    if (depth > QMXF_MAX_JSON_DEPTH)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: JSON nested too deeply");
    qmxf__ws(c);
    if (c->p >= c->end) return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: JSON value expected");
    if (*c->p == '"') return qmxf__json_string(c, NULL, 0, NULL, NULL, err, err_size);
    if (*c->p == '{' || *c->p == '[') {
        char close = *c->p == '{' ? '}' : ']';
        int obj = *c->p == '{';
        c->p++;
        if (qmxf__eat(c, close)) return QMX_OK;
        for (;;) {
            if (obj) {
                st = qmxf__json_string(c, NULL, 0, NULL, NULL, err, err_size);
                if (st) return st;
                if (!qmxf__eat(c, ':'))
                    return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                      "safetensors: ':' expected in a JSON object");
            }
            st = qmxf__json_skip(c, depth + 1, err, err_size);
            if (st) return st;
            if (qmxf__eat(c, close)) return QMX_OK;
            if (!qmxf__eat(c, ','))
                return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ',' or '%c' expected in JSON",
                                  close);
        }
    }
    if (qmxf__eat_word(c, "true") || qmxf__eat_word(c, "false") || qmxf__eat_word(c, "null")) return QMX_OK;
    if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9')) { /* any JSON number */
        int digits = 0;
        if (*c->p == '-') c->p++;
        while (c->p < c->end && ((*c->p >= '0' && *c->p <= '9') || *c->p == '.' || *c->p == 'e' ||
                                 *c->p == 'E' || *c->p == '+' || *c->p == '-')) {
            c->p++;
            digits++;
        }
        if (digits) return QMX_OK;
    }
    return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: malformed JSON value");
}

QMXF_FN qmx_status qmxf__st_entry_parse(qmxf__cur *c, qmxf__st_entry *e, char *err, size_t err_size) {
    int have_dtype = 0, have_shape = 0, have_offsets = 0;
    qmx_status st;
    if (!qmxf__eat(c, '{'))
        return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                          "safetensors: tensor '%s': entry is not a JSON object", e->name);
    if (qmxf__eat(c, '}')) goto done;
    for (;;) {
        char key[32];
        int too_long;
        st = qmxf__json_string(c, key, sizeof key, &too_long, NULL, err, err_size);
        if (st) return st;
        if (!qmxf__eat(c, ':'))
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ':' expected in a JSON object");
        if (!too_long && strcmp(key, "dtype") == 0) {
            char d[16];
            if (have_dtype++)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': duplicate key 'dtype'", e->name);
            st = qmxf__json_string(c, d, sizeof d, &too_long, NULL, err, err_size);
            if (st) return st;
            if (too_long)
                return qmxf__fail(err, err_size, QMX_ERR_DTYPE, "safetensors: tensor '%s': unknown dtype",
                                  e->name);
            if (strcmp(d, "F32") == 0)
                e->dt = QMXF_F32;
            else if (strcmp(d, "F16") == 0)
                e->dt = QMXF_F16;
            else if (strcmp(d, "BF16") == 0)
                e->dt = QMXF_BF16;
            else
                return qmxf__fail(err, err_size, QMX_ERR_DTYPE,
                                  "safetensors: tensor '%s': dtype %s is not supported (F32, F16, BF16)",
                                  e->name, d);
        } else if (!too_long && strcmp(key, "shape") == 0) {
            if (have_shape++)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': duplicate key 'shape'", e->name);
            if (!qmxf__eat(c, '['))
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': 'shape' is not an array", e->name);
            if (!qmxf__eat(c, ']')) {
                for (;;) {
                    uint64_t d;
                    st = qmxf__json_u64(c, &d, "shape", err, err_size);
                    if (st) return st;
                    if (d > (uint64_t)SIZE_MAX)
                        return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW,
                                          "safetensors: tensor '%s': dimension %d does not fit size_t",
                                          e->name, e->rank);
                    if (e->rank == QMXF_MAX_RANK)
                        return qmxf__fail(err, err_size, QMX_ERR_UNSUPPORTED,
                                          "safetensors: tensor '%s': rank above %d is not supported", e->name,
                                          QMXF_MAX_RANK);
                    e->dims[e->rank++] = (size_t)d;
                    if (qmxf__eat(c, ']')) break;
                    if (!qmxf__eat(c, ','))
                        return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                          "safetensors: tensor '%s': malformed 'shape' array", e->name);
                }
            }
        } else if (!too_long && strcmp(key, "data_offsets") == 0) {
            if (have_offsets++)
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': duplicate key 'data_offsets'", e->name);
            if (!qmxf__eat(c, '['))
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': 'data_offsets' is not an array", e->name);
            st = qmxf__json_u64(c, &e->begin, "data_offsets", err, err_size);
            if (st) return st;
            if (!qmxf__eat(c, ','))
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': 'data_offsets' must be [begin, end]", e->name);
            st = qmxf__json_u64(c, &e->end, "data_offsets", err, err_size);
            if (st) return st;
            if (!qmxf__eat(c, ']'))
                return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                                  "safetensors: tensor '%s': 'data_offsets' must be [begin, end]", e->name);
        } else {
            st = qmxf__json_skip(c, 2, err, err_size); /* unknown key: forward compatible */
            if (st) return st;
        }
        if (qmxf__eat(c, '}')) break;
        if (!qmxf__eat(c, ','))
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ',' or '}' expected in JSON");
    }
done:
    if (!have_dtype || !have_shape || !have_offsets)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: tensor '%s' lacks %s", e->name,
                          !have_dtype   ? "'dtype'"
                          : !have_shape ? "'shape'"
                                        : "'data_offsets'");
    return QMX_OK;
}

QMXF_FN int qmxf__st_cmp(const void *a, const void *b) {
    const qmxf__st_entry *x = *(const qmxf__st_entry *const *)a, *y = *(const qmxf__st_entry *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

QMXF_FN int qmxf__st_name_cmp(const void *a, const void *b) {
    return strcmp((*(const qmxf__st_entry *const *)a)->name, (*(const qmxf__st_entry *const *)b)->name);
}

QMXF_FN qmx_status qmxf__st_metadata(qmxf__cur *c, char *err, size_t err_size) {
    qmx_status st;
    if (!qmxf__eat(c, '{'))
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: \"__metadata__\" is not a JSON object");
    if (qmxf__eat(c, '}')) return QMX_OK;
    for (;;) {
        st = qmxf__json_string(c, NULL, 0, NULL, NULL, err, err_size);
        if (st) return st;
        if (!qmxf__eat(c, ':'))
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ':' expected in a JSON object");
        qmxf__ws(c);
        if (c->p >= c->end || *c->p != '"')
            return qmxf__fail(err, err_size, QMX_ERR_PARSE,
                              "safetensors: \"__metadata__\" values must be strings");
        st = qmxf__json_string(c, NULL, 0, NULL, NULL, err, err_size);
        if (st) return st;
        if (qmxf__eat(c, '}')) return QMX_OK;
        if (!qmxf__eat(c, ','))
            return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ',' or '}' expected in JSON");
    }
}

/* Reads every tensor of one .safetensors image, in file (header) order, appended to out. */
QMXF_FN qmx_status qmxf_read_safetensors(const uint8_t *buf, size_t len, qmxf_list *out, char *err,
                                         size_t err_size) {
    uint64_t hlen64, data_len, pos;
    size_t hlen, n = 0, cap = 0, i, j, added = 0;
    qmxf__st_entry *e = NULL, **sorted = NULL;
    const uint8_t *data;
    qmxf__cur c;
    qmx_status st = QMX_OK;
    int have_meta = 0;

    if (err && err_size) err[0] = 0;
    if (!buf || !out) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    if (len < 8)
        return qmxf__fail(err, err_size, QMX_ERR_SIZE,
                          "safetensors: truncated (%lu bytes, the header length alone is 8)",
                          (unsigned long)len);
    hlen64 = (uint64_t)qmxf__le32(buf) | ((uint64_t)qmxf__le32(buf + 4) << 32);
    if (hlen64 > (uint64_t)(len - 8))
        return qmxf__fail(err, err_size, QMX_ERR_SIZE,
                          "safetensors: header length %llu exceeds the file (%lu bytes after the length)",
                          (unsigned long long)hlen64, (unsigned long)(len - 8));
    hlen = (size_t)hlen64;
    if (hlen < 2)
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: header too short to be a JSON object");
    data = buf + 8 + hlen;
    data_len = (uint64_t)(len - 8 - hlen);
    c.p = (const char *)buf + 8;
    c.end = c.p + hlen;
    if (!qmxf__eat(&c, '{')) {
        return qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: header is not a JSON object");
    }
    if (!qmxf__eat(&c, '}')) {
        for (;;) {
            char name[QMXF_MAX_NAME];
            int too_long, has_nul;
            st = qmxf__json_string(&c, name, sizeof name, &too_long, &has_nul, err, err_size);
            if (st) goto out;
            if (!qmxf__eat(&c, ':')) {
                st = qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ':' expected in a JSON object");
                goto out;
            }
            if (!too_long && strcmp(name, "__metadata__") == 0) {
                if (have_meta++) {
                    st = qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: duplicate \"__metadata__\"");
                    goto out;
                }
                st = qmxf__st_metadata(&c, err, err_size);
                if (st) goto out;
            } else {
                if (too_long) {
                    st = qmxf__fail(err, err_size, QMX_ERR_SIZE,
                                    "safetensors: a tensor name is longer than %d bytes", QMXF_MAX_NAME - 1);
                    goto out;
                }
                if (has_nul) {
                    st = qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: a tensor name contains NUL");
                    goto out;
                }
                if (n == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    qmxf__st_entry *ne;
                    if (nc > SIZE_MAX / sizeof(qmxf__st_entry)) {
                        st = qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "safetensors: too many tensors");
                        goto out;
                    }
                    ne = (qmxf__st_entry *)realloc(e, nc * sizeof(qmxf__st_entry));
                    if (!ne) {
                        st = qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory (safetensors header)");
                        goto out;
                    }
                    e = ne;
                    cap = nc;
                }
                memset(&e[n], 0, sizeof e[n]);
                strcpy(e[n].name, name);
                st = qmxf__st_entry_parse(&c, &e[n], err, err_size);
                if (st) goto out;
                n++;
            }
            if (qmxf__eat(&c, '}')) break;
            if (!qmxf__eat(&c, ',')) {
                st = qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: ',' or '}' expected in JSON");
                goto out;
            }
        }
    }
    qmxf__ws(&c); /* the writer pads the header with spaces to 8-byte alignment */
    if (c.p != c.end) {
        st = qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: trailing bytes after the JSON header");
        goto out;
    }

    /* Sizes, then the tiling of the byte buffer (sorted by offset). */
    for (i = 0; i < n; i++) {
        st = qmxf__shape_bytes(e[i].dims, e[i].rank, e[i].dt == QMXF_F32 ? 4 : 2, &e[i].count, &e[i].bytes,
                               err, err_size);
        if (st) goto out;
        if (e[i].end < e[i].begin) {
            st = qmxf__fail(err, err_size, QMX_ERR_SIZE,
                            "safetensors: tensor '%s': data_offsets end %llu before begin %llu", e[i].name,
                            (unsigned long long)e[i].end, (unsigned long long)e[i].begin);
            goto out;
        }
        if (e[i].end > data_len) {
            st = qmxf__fail(
                err, err_size, QMX_ERR_SIZE,
                "safetensors: tensor '%s': data_offsets [%llu, %llu] outside the %llu-byte buffer", e[i].name,
                (unsigned long long)e[i].begin, (unsigned long long)e[i].end, (unsigned long long)data_len);
            goto out;
        }
        if (e[i].end - e[i].begin != (uint64_t)e[i].bytes) {
            st =
                qmxf__fail(err, err_size, QMX_ERR_SHAPE,
                           "safetensors: tensor '%s': shape needs %lu bytes but data_offsets span %llu",
                           e[i].name, (unsigned long)e[i].bytes, (unsigned long long)(e[i].end - e[i].begin));
            goto out;
        }
    }
    if (n) {
        sorted = (qmxf__st_entry **)malloc(n * sizeof *sorted);
        if (!sorted) {
            st = qmxf__fail(err, err_size, QMX_ERR_SIZE, "out of memory (safetensors header)");
            goto out;
        }
        for (i = 0; i < n; i++) sorted[i] = &e[i];
        qsort(sorted, n, sizeof *sorted, qmxf__st_name_cmp); /* duplicates in O(n log n) */
        for (i = 1; i < n; i++)
            if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
                st = qmxf__fail(err, err_size, QMX_ERR_PARSE, "safetensors: duplicate tensor '%s'",
                                sorted[i]->name);
                goto out;
            }
        qsort(sorted, n, sizeof *sorted, qmxf__st_cmp);
    }
    pos = 0;
    for (i = 0; i < n; i++) {
        if (sorted[i]->begin != pos) {
            st = qmxf__fail(
                err, err_size, QMX_ERR_SIZE,
                sorted[i]->begin < pos
                    ? "safetensors: tensor '%s' overlaps the previous tensor (begin %llu, previous end %llu)"
                    : "safetensors: gap before tensor '%s' (begin %llu, previous end %llu)",
                sorted[i]->name, (unsigned long long)sorted[i]->begin, (unsigned long long)pos);
            goto out;
        }
        pos = sorted[i]->end;
    }
    if (pos != data_len) {
        st = qmxf__fail(err, err_size, QMX_ERR_SIZE,
                        "safetensors: %llu bytes after the last tensor (buffer %llu, tensors end at %llu)",
                        (unsigned long long)(data_len - pos), (unsigned long long)data_len,
                        (unsigned long long)pos);
        goto out;
    }

    st = qmxf__list_reserve(out, n, err, err_size);
    if (st) goto out;
    for (i = 0; i < n; i++) {
        qmxf_tensor *t = &out->t[out->n + i];
        memset(t, 0, sizeof *t);
        st = qmxf__convert(data + (size_t)e[i].begin, e[i].count, e[i].dt, 0, &t->data, err, err_size);
        if (st) {
            for (j = 0; j < added; j++) free(out->t[out->n + j].data);
            goto out;
        }
        added++;
        memcpy(t->name, e[i].name, sizeof t->name);
        t->source_dtype = e[i].dt;
        t->rank = e[i].rank;
        memcpy(t->dims, e[i].dims, sizeof t->dims);
        t->count = e[i].count;
    }
    out->n += n;
out:
    free(sorted);
    free(e);
    return st;
}

/* ============================== files ============================== */
/* Reads a whole file into a malloc'd buffer (binary). */
QMXF_FN qmx_status qmxf_slurp(const char *path, uint8_t **buf, size_t *len, char *err, size_t err_size) {
    FILE *f;
    uint8_t *b = NULL, *nb;
    size_t n = 0, cap = 0, got;
    if (!path || !buf || !len) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    f = fopen(path, "rb");
    if (!f) return qmxf__fail(err, err_size, QMX_ERR_ARG, "%s: cannot open", path);
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            if (nc < cap) {
                free(b);
                fclose(f);
                return qmxf__fail(err, err_size, QMX_ERR_OVERFLOW, "%s: too large", path);
            }
            nb = (uint8_t *)realloc(b, nc);
            if (!nb) {
                free(b);
                fclose(f);
                return qmxf__fail(err, err_size, QMX_ERR_SIZE, "%s: out of memory", path);
            }
            b = nb;
            cap = nc;
        }
        got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(b);
        fclose(f);
        return qmxf__fail(err, err_size, QMX_ERR_ARG, "%s: read error", path);
    }
    fclose(f);
    *buf = b;
    *len = n;
    return QMX_OK;
}

/* Reads path as .npy when it starts with "\x93NUMPY" or its name ends in ".npy" (the tensor
 * is named after the file, without directory and ".npy"), else as .safetensors. Errors are prefixed "path: ". */
QMXF_FN qmx_status qmxf_read_file(const char *path, qmxf_list *out, char *err, size_t err_size) {
    uint8_t *buf = NULL;
    size_t len = 0;
    char msg[512];
    size_t plen;
    qmx_status st;
    if (!path || !out) return qmxf__fail(err, err_size, QMX_ERR_NULL, "NULL argument");
    st = qmxf_slurp(path, &buf, &len, err, err_size);
    if (st) return st;
    plen = strlen(path);
    if ((len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0) ||
        (plen >= 4 && strcmp(path + plen - 4, ".npy") == 0)) {
        char name[QMXF_MAX_NAME];
        const char *base = strrchr(path, '/');
        size_t bl;
        base = base ? base + 1 : path;
        bl = strlen(base);
        if (bl >= 4 && strcmp(base + bl - 4, ".npy") == 0) bl -= 4;
        if (bl >= sizeof name) bl = sizeof name - 1;
        memcpy(name, base, bl);
        name[bl] = 0;
        st = qmxf_read_npy(buf, len, name, out, msg, sizeof msg);
    } else {
        st = qmxf_read_safetensors(buf, len, out, msg, sizeof msg);
    }
    free(buf);
    if (st) qmxf__fail(err, err_size, st, "%s: %s", path, msg);
    return st;
}

#endif /* QMX_FILES_H */
