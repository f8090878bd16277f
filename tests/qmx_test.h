/* qmx_test.h - the tiny test harness every tests/test_*.c program uses.
 *
 * A test program is a list of checks grouped in named cases. Each CHECK counts once; a failing
 * check prints its file, line and message. main() ends with QMX_TEST_END(), which prints the
 * closing line "N passed, N failed" and returns non-zero when anything failed.
 * Data files are opened relative to the current directory (the repository root): the Makefile
 * and the target runners run every test from there, also under QEMU (semihosting reads host files).
 */
#ifndef QMX_TEST_H
#define QMX_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

/* Helpers are static so that each test program is one translation unit; not every program
 * uses every helper. */
#if defined(__GNUC__) || defined(__clang__)
#  define QMX_TEST_HELPER static __attribute__((unused))
#else
#  define QMX_TEST_HELPER static
#endif

/* The Cortex-M targets (QEMU, one slow core, 16 MiB): long sweeps shrink there. */
#if defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8_1M_MAIN__) || defined(__ARM_ARCH_7M__) || \
    defined(__ARM_ARCH_8M_MAIN__) /* GCC 12 gives Cortex-M55 (v8.1-M) this macro */
#  define QMX_TEST_SMALL_TARGET 1
#else
#  define QMX_TEST_SMALL_TARGET 0
#endif

static long qmx_test_passed, qmx_test_failed, qmx_test_case_failed;
static const char *qmx_test_case_name = "";

#define QMX_TEST_CASE(name) (qmx_test_case_name = (name), qmx_test_case_failed = 0)

/* CHECK(cond, fmt, ...): one counted check; fmt/args describe the failure. At most 20 failure
 * lines are printed per case so that a broken sweep does not flood the log. */
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            qmx_test_passed++;                                                             \
        } else {                                                                           \
            qmx_test_failed++;                                                             \
            if (qmx_test_case_failed++ < 20) {                                             \
                printf("FAIL %s:%d [%s] ", __FILE__, __LINE__, qmx_test_case_name);        \
                printf(__VA_ARGS__);                                                       \
                printf("\n");                                                              \
                fflush(stdout); /* keep the line if the program crashes later */           \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* Exactly-equal integers, printed on failure. */
#define CHECK_EQ_INT(got, want, ...)                                                       \
    do {                                                                                   \
        long long qmx_t_g_ = (long long)(got), qmx_t_w_ = (long long)(want);                \
        CHECK(qmx_t_g_ == qmx_t_w_, "got %lld want %lld: ", qmx_t_g_, qmx_t_w_);             \
        if (qmx_t_g_ != qmx_t_w_ && qmx_test_case_failed <= 20) { printf(__VA_ARGS__); printf("\n"); } \
    } while (0)

/* Bit pattern of a float, for exact comparisons that treat -0 and NaN payloads precisely. */
QMX_TEST_HELPER uint32_t qmx_test_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
QMX_TEST_HELPER float qmx_test_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Test data: xorshift32 (Marsaglia), the same stream on every target. Each program seeds it
 * once (qmx_test_seed) so its data, and any golden hash computed from it, never change. */
QMX_TEST_HELPER uint32_t qmx_test_rng_state = 2463534242u;
QMX_TEST_HELPER void qmx_test_seed(uint32_t seed) { qmx_test_rng_state = seed ? seed : 1u; }
QMX_TEST_HELPER uint32_t qmx_test_rand(void) {
    uint32_t x = qmx_test_rng_state;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return qmx_test_rng_state = x;
}
/* uniform-ish in [lo, hi] (modulo bias is irrelevant for test data) */
QMX_TEST_HELPER size_t qmx_test_rand_range(size_t lo, size_t hi) {
    return lo + (size_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1));
}
/* int8 data by mode: 0 random, 1 only -128/127, 2 all -128, 3 all 127 (the extremes that
 * reach the accumulator bounds) */
QMX_TEST_HELPER void qmx_test_fill_i8(int8_t *p, size_t n, int mode) {
    size_t i;
    for (i = 0; i < n; i++) {
        switch (mode) {
        case 0: p[i] = (int8_t)((int)(qmx_test_rand() & 0xFF) - 128); break;
        case 1: p[i] = (qmx_test_rand() & 1) ? (int8_t)127 : (int8_t)-128; break;
        case 2: p[i] = (int8_t)-128; break;
        default: p[i] = (int8_t)127; break;
        }
    }
}

/* Open a data file under tests/data; a missing file is a failed check, not a crash. */
QMX_TEST_HELPER FILE *qmx_test_open(const char *name) {
    char path[256];
    FILE *f;
    snprintf(path, sizeof path, "tests/data/%s", name);
    f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s (run from the repository root)", path);
    return f;
}

/* Reads the next non-comment line ('#' starts a comment line) into buf; 0 at end of file. */
QMX_TEST_HELPER int qmx_test_next_line(FILE *f, char *buf, int size) {
    while (fgets(buf, size, f)) {
        if (buf[0] == '#' || buf[0] == '\n' || buf[0] == '\r') continue;
        return 1;
    }
    return 0;
}

/* Streaming reader of the golden tables in tests/data: validates the "# columns:" header,
 * skips comments and blank lines, counts data rows (files are read line by line: the tests also
 * run on Cortex-M targets with little RAM). */
typedef struct qmx_test_table {
    FILE *f;
    const char *name;
    const char *columns;   /* the expected "# columns: ..." line, without the newline */
    int columns_seen;
    long line_no, rows;
} qmx_test_table;

QMX_TEST_HELPER int qmx_test_table_open(qmx_test_table *t, const char *name, const char *columns) {
    t->name = name;
    t->columns = columns;
    t->columns_seen = 0;
    t->line_no = 0;
    t->rows = 0;
    t->f = qmx_test_open(name);
    return t->f != NULL;
}

QMX_TEST_HELPER void qmx_test_chomp(char *s) {
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = 0;
}

/* Next data row into buf (newline removed); 0 at end of file. */
QMX_TEST_HELPER int qmx_test_table_next(qmx_test_table *t, char *buf, int size) {
    while (fgets(buf, size, t->f)) {
        int whole = strchr(buf, '\n') != NULL || feof(t->f);
        t->line_no++;
        if (!whole) {   /* longer than buf: drop the rest (fine for a long '#' comment only) */
            int ch;
            while ((ch = fgetc(t->f)) != EOF && ch != '\n') {}
            CHECK(buf[0] == '#', "%s line %ld: data line longer than %d characters", t->name,
                  t->line_no, size - 1);
        }
        qmx_test_chomp(buf);
        if (buf[0] == '#') {
            if (strncmp(buf, "# columns:", 10) == 0) {
                t->columns_seen = 1;
                CHECK(strcmp(buf, t->columns) == 0, "%s: column header is '%s', expected '%s'",
                      t->name, buf, t->columns);
            }
            continue;
        }
        if (buf[0] == 0) continue;
        t->rows++;
        return 1;
    }
    return 0;
}

QMX_TEST_HELPER void qmx_test_table_close(qmx_test_table *t, long expected_rows) {
    CHECK(t->columns_seen, "%s: no '# columns:' header line", t->name);
    CHECK(t->rows == expected_rows, "%s: %ld data rows, expected %ld (truncated file?)", t->name,
          t->rows, expected_rows);
    fclose(t->f);
}

/* Splits s at blanks into at most max fields; returns the number of fields. */
QMX_TEST_HELPER int qmx_test_split_fields(char *s, char **fields, int max) {
    int n = 0;
    while (*s && n < max) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        fields[n++] = s;
        while (*s && *s != ' ' && *s != '\t') s++;
        if (*s) *s++ = 0;
    }
    return n;
}

#define QMX_TEST_END()                                                                     \
    (printf("%ld passed, %ld failed\n", qmx_test_passed, qmx_test_failed),                 \
     qmx_test_failed ? 1 : 0)

#endif
