/* test_einsum.c - qmx_einsum (qmx_kernels.h): two-operand einsum on float, fp8, int8 and
 * int4 operands, and the newer ones: int2 / uint2, int3..int7, fp4, fp6, nf4, per-block scales
 * on float-decoded operands, MX / NVFP4 block-scaled operands.
 * References, independent of qmx:
 *   - tests/data/einsum_cases.txt: numpy.einsum in float64 / int64 of the (dequantized)
 *     operands (tests/gen/gen_einsum.py), 228 cases over 57 specs. Float results must lie
 *     within the case's TOL: 0 where every float operation is exact (integer-valued data,
 *     power-of-two scales, sums below 2^24), else (2K + 4) * 2^-24 * einsum(|A|, |B|), the
 *     bound of the documented summation order. int32 results are bit-exact.
 *   - tests/data/einsum_malformed.txt: 38 malformed specs with the status and character
 *     position the spec grammar prescribes (each one rejected by numpy too).
 *   - a naive einsum written here (an odometer over every label, int64 / double sums) on
 *     random shapes past the matmul's tiles (64 rows, 256 columns) and blocks.
 *   - identical bits in every build: a hash of all golden-case outputs must equal the value
 *     recorded on x86-64 (the same with -DQMX_NO_SIMD, sanitizers, C++ and every target).
 *   - the newer operand types (test_new_*): models written here (the ml_dtypes fp4 / fp6
 *     decode tables in tests/data, QLoRA's nf4 values, int2 / int4 unpacking and the MX scale
 *     layout by hand; MX / fp8 / nf4 blocks also via qmx_mx_dequantize / qmx_dequantize) and
 *     the documented float order run in volatile floats: bit for bit, plus a hash of those
 *     outputs recorded on x86-64.
 * Plus the API contract: plans that need no copy use no workspace, the workspace query is a
 * pure function of spec and shapes, every error status with an untouched output. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"

#define SMALL QMX_TEST_SMALL_TARGET

/* The FNV-1a hash of every golden case's output bits, recorded from the x86-64 build. */
#define GOLDEN_BITS_HASH 0x073cc436u
/* The same of the new operand types' float outputs (test_new_int_operands, _float_operands). */
#define NEW_TYPES_BITS_HASH 0x14ea752fu

#define MAXE 4096
static float fa[MAXE], fb[MAXE], fout[MAXE], fout2[MAXE];
static int8_t ia[MAXE], ib[MAXE];
static uint8_t pa[MAXE], pb[MAXE];
static float sa_buf[MAXE], sb_buf[MAXE];
static double want[MAXE];
static unsigned char wsbuf[1 << 21];   /* K at QMX_MATMUL_I8_MAX_K needs ~1.1 MB */

static uint32_t fnv = 2166136261u;
/* Hashes n 32-bit words by value (little-endian byte order on every host). */
static void hash_words(const void *p, size_t n) {
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        uint32_t w;
        memcpy(&w, (const unsigned char *)p + 4 * i, 4);
        for (b = 0; b < 4; b++) { fnv ^= (w >> (8 * b)) & 0xFFu; fnv *= 16777619u; }
    }
}

/* Output element i as a double: an int32 or a float. Not inlined: GCC 12 if-converts the
 * two conversions into a conditional vcvt that the Cortex-M55 assembler rejects. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static double elem(const float *o, size_t i, int as_i32) {
    int32_t v;
    if (!as_i32) return (double)o[i];
    memcpy(&v, &o[i], 4);
    return (double)v;
}

static qmx_dtype dtype_of(const char *s) {
    if (!strcmp(s, "f32")) return QMX_FLOAT32;
    if (!strcmp(s, "int8")) return QMX_INT8;
    if (!strcmp(s, "int4")) return QMX_INT4;
    if (!strcmp(s, "uint4")) return QMX_UINT4;
    if (!strcmp(s, "e4m3fn")) return QMX_FP8_E4M3FN;
    if (!strcmp(s, "e5m2")) return QMX_FP8_E5M2;
    return QMX_DTYPE_INVALID;
}

static int tok(FILE *f, char *buf) { return fscanf(f, "%63s", buf) == 1; }
static int expect(FILE *f, const char *w) {
    char b[64];
    return tok(f, b) && !strcmp(b, w);
}

/* Reads one OP line into op (data in the given buffers; int4 packed as qmx.h documents). */
static int read_op(FILE *f, qmx_einsum_operand *op, float *fbuf, int8_t *ibuf, uint8_t *pbuf,
                   float *sbuf) {
    char b[64];
    int i, r;
    long n, ns;
    memset(op, 0, sizeof *op);
    if (!expect(f, "OP") || !tok(f, b)) return 0;
    op->dtype = dtype_of(b);
    if (fscanf(f, "%d", &r) != 1 || r < 0 || r > QMX_EINSUM_MAX_RANK) return 0;
    op->rank = r;
    for (i = 0; i < r; i++) {
        unsigned long d;
        if (fscanf(f, "%lu", &d) != 1) return 0;
        op->shape[i] = (size_t)d;
    }
    if (!expect(f, "ZP") || fscanf(f, "%d", &i) != 1) return 0;
    op->zero_point = i;
    if (!expect(f, "SCALING") || fscanf(f, "%d", &i) != 1) return 0;
    op->scaling = (qmx_einsum_scaling)i;
    if (!expect(f, "CHAN") || fscanf(f, "%d", &op->channel_axis) != 1) return 0;
    if (!expect(f, "BLOCK") || fscanf(f, "%d", &op->block_axis) != 1) return 0;
    if (!expect(f, "BS") || fscanf(f, "%d", &i) != 1) return 0;
    op->block_size = (size_t)i;
    if (!expect(f, "NS") || fscanf(f, "%ld", &ns) != 1 || ns < 0 || ns > MAXE) return 0;
    for (i = 0; i < ns; i++) {
        double v;
        if (fscanf(f, "%lf", &v) != 1) return 0;
        sbuf[i] = (float)v;
    }
    op->scales = ns ? sbuf : NULL;
    op->scales_len = (size_t)ns;
    if (!expect(f, "DATA") || fscanf(f, "%ld", &n) != 1 || n < 1 || n > MAXE) return 0;
    for (i = 0; i < n; i++) {
        double v;
        if (fscanf(f, "%lf", &v) != 1) return 0;
        fbuf[i] = (float)v;
        ibuf[i] = (int8_t)(int)v;
        pbuf[i] = (uint8_t)(int)v;
    }
    if (op->dtype == QMX_FLOAT32) {
        op->data = fbuf; op->data_bytes = (size_t)n * 4;
    } else if (op->dtype == QMX_INT8) {
        op->data = ibuf; op->data_bytes = (size_t)n;
    } else if (op->dtype == QMX_INT4 || op->dtype == QMX_UINT4) {
        size_t pbytes = (size_t)(n + 1) / 2;
        if (qmx_pack_int4(op->dtype, ibuf, (size_t)n, pbuf + MAXE / 2, pbytes) != QMX_OK) return 0;
        memmove(pbuf, pbuf + MAXE / 2, pbytes);
        op->data = pbuf; op->data_bytes = pbytes;
    } else {
        op->data = pbuf; op->data_bytes = (size_t)n;
    }
    return 1;
}

static int read_spec(FILE *f, char *spec, int size) {
    char line[512];
    char *q0, *q1;
    if (!qmx_test_next_line(f, line, sizeof line)) return 0;
    if (strncmp(line, "SPEC", 4) != 0) return -1;
    q0 = strchr(line, '"');
    q1 = strrchr(line, '"');
    if (!q0 || q1 == q0 || q1 - q0 - 1 >= size) return -1;
    memcpy(spec, q0 + 1, (size_t)(q1 - q0 - 1));
    spec[q1 - q0 - 1] = 0;
    return 1;
}

static void test_golden(void) {
    FILE *f;
    char spec[300], kind[64];
    int ncase = 0, r;
    QMX_TEST_CASE("einsum matches numpy.einsum on the golden corpus (float, fp8, int8, int4)");
    f = qmx_test_open("einsum_cases.txt");
    if (!f) return;
    while ((r = read_spec(f, spec, sizeof spec)) == 1) {
        qmx_einsum_operand A, B;
        qmx_einsum_opts opts;
        size_t ws = 0, shape[QMX_EINSUM_MAX_RANK], i;
        int orank = -1, rank, pos = 7, ok = 1;
        long n;
        double tol;
        qmx_status st;
        memset(&opts, 0, sizeof opts);
        ok = expect(f, "KIND") && tok(f, kind);
        ok = ok && read_op(f, &A, fa, ia, pa, sa_buf) && read_op(f, &B, fb, ib, pb, sb_buf);
        ok = ok && expect(f, "OUT") && fscanf(f, "%d", &rank) == 1;
        for (i = 0; ok && i < (size_t)rank; i++) {
            unsigned long d;
            ok = fscanf(f, "%lu", &d) == 1;
            shape[i] = (size_t)d;
        }
        ok = ok && expect(f, "TOL") && fscanf(f, "%lf", &tol) == 1;
        ok = ok && expect(f, "N") && fscanf(f, "%ld", &n) == 1 && n >= 1 && n <= MAXE;
        for (i = 0; ok && i < (size_t)n; i++) ok = fscanf(f, "%lf", &want[i]) == 1;
        ok = ok && expect(f, "END");
        CHECK(ok, "malformed golden case %d (%s)", ncase, spec);
        if (!ok) break;
        ncase++;
        opts.int32_out = !strcmp(kind, "i32");
        {   /* the shape query agrees with numpy's output shape */
            size_t got[QMX_EINSUM_MAX_RANK];
            st = qmx_einsum_output_shape(spec, &A, &B, got, &orank, &pos);
            CHECK(st == QMX_OK && orank == rank && pos == -1, "%s: output_shape st %d rank %d/%d",
                  spec, (int)st, orank, rank);
            for (i = 0; st == QMX_OK && i < (size_t)rank && (int)i < orank; i++)
                CHECK(got[i] == shape[i], "%s: dim %u %u vs %u", spec, (unsigned)i,
                      (unsigned)got[i], (unsigned)shape[i]);
        }
        st = qmx_einsum_workspace_size(spec, &A, &B, &opts, &ws, &pos);
        CHECK(st == QMX_OK && ws <= sizeof wsbuf, "%s (%s): workspace st %d bytes %u", spec, kind,
              (int)st, (unsigned)ws);
        if (st != QMX_OK || ws > sizeof wsbuf) continue;
        for (i = 0; i < (size_t)n + 1; i++) fout[i] = qmx_test_bits_f32(0x7FC00001u);
        /* the exact workspace suffices; one byte less does not */
        if (ws > 0) {
            st = qmx_einsum(spec, &A, &B, &opts, fout, (size_t)n, wsbuf + 1, ws - 1, &pos);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "%s: short workspace st %d", spec, (int)st);
        }
        st = qmx_einsum(spec, &A, &B, &opts, fout, (size_t)n, wsbuf + 1, ws, &pos);
        CHECK(st == QMX_OK && pos == -1, "%s (%s): st %d pos %d", spec, kind, (int)st, pos);
        if (st != QMX_OK) continue;
        CHECK(qmx_test_f32_bits(fout[n]) == 0x7FC00001u, "%s: wrote past out_len", spec);
        {
            int bad = 0;
            for (i = 0; i < (size_t)n; i++) {
                double g;
                g = elem(fout, i, opts.int32_out);
                if (!(g - want[i] <= tol && want[i] - g <= tol)) bad++;
                if (bad == 1 && !(g - want[i] <= tol && want[i] - g <= tol)) {
                    CHECK(0, "%s (%s, %s x %s): element %u got %.9g want %.17g tol %g", spec,
                          kind, qmx_dtype_name(A.dtype), qmx_dtype_name(B.dtype), (unsigned)i,
                          g, want[i], tol);
                    bad++;
                }
            }
            CHECK(bad == 0, "%s (%s): %d elements outside the bound", spec, kind, bad);
        }
        hash_words(fout, (size_t)n);
        {   /* deterministic: a second run on a differently aligned workspace, same bits */
            st = qmx_einsum(spec, &A, &B, &opts, fout2, (size_t)n, wsbuf + 13, ws, &pos);
            CHECK(st == QMX_OK && !memcmp(fout, fout2, (size_t)n * 4), "%s: rerun differs", spec);
        }
    }
    CHECK(r == 0, "golden file ends with a malformed SPEC line");
    fclose(f);
    CHECK(ncase >= 200, "only %d golden cases", ncase);
    printf("golden cases: %d, output bits hash 0x%08lx\n", ncase, (unsigned long)fnv);
    CHECK(GOLDEN_BITS_HASH == 0 || fnv == GOLDEN_BITS_HASH,
          "output bits differ from the x86-64 recording: 0x%08lx", (unsigned long)fnv);
}

static void test_malformed(void) {
    FILE *f;
    char line[512];
    int n = 0;
    QMX_TEST_CASE("malformed specs and mismatched shapes: status and character position");
    f = qmx_test_open("einsum_malformed.txt");
    if (!f) return;
    while (qmx_test_next_line(f, line, sizeof line)) {
        qmx_einsum_operand A, B;
        int want_st, want_pos, rk, i, pos = 1234, used, off = 0;
        char spec[300], *q0, *q1;
        size_t ws = 77;
        float out[64];
        qmx_status st;
        memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
        if (sscanf(line, "%d %d %d%n", &want_st, &want_pos, &rk, &used) != 3) { CHECK(0, "bad line %s", line); continue; }
        off += used;
        A.rank = rk;
        for (i = 0; i < rk; i++) { unsigned long d; sscanf(line + off, "%lu%n", &d, &used); off += used; A.shape[i] = d; }
        sscanf(line + off, "%d%n", &rk, &used); off += used;
        B.rank = rk;
        for (i = 0; i < rk; i++) { unsigned long d; sscanf(line + off, "%lu%n", &d, &used); off += used; B.shape[i] = d; }
        q0 = strchr(line, '"'); q1 = strrchr(line, '"');
        if (!q0 || q1 <= q0) { CHECK(0, "bad line %s", line); continue; }
        memcpy(spec, q0 + 1, (size_t)(q1 - q0 - 1)); spec[q1 - q0 - 1] = 0;
        A.data = fa; A.data_bytes = sizeof fa; B.data = fb; B.data_bytes = sizeof fb;
        for (i = 0; i < 64; i++) out[i] = 42.0f;
        st = qmx_einsum(spec, &A, &B, NULL, out, 64, wsbuf, sizeof wsbuf, &pos);
        CHECK(st == (qmx_status)want_st && pos == want_pos,
              "\"%s\": got status %d pos %d, want %d pos %d", spec, (int)st, pos, want_st, want_pos);
        for (i = 0; i < 64; i++) CHECK(out[i] == 42.0f, "\"%s\": output written on error", spec);
        pos = 1234;
        st = qmx_einsum_workspace_size(spec, &A, &B, NULL, &ws, &pos);
        CHECK(st == (qmx_status)want_st && pos == want_pos && ws == 77,
              "\"%s\": workspace query status %d pos %d", spec, (int)st, pos);
        n++;
    }
    fclose(f);
    CHECK(n >= 30, "only %d malformed specs", n);
}

/* ---- a naive einsum written independently: odometer over all labels ---------------------- */

/* spec without ellipsis/spaces; explicit output. Labels a-z only. Values read as double. */
static void naive(const char *spec, const size_t *dim /* by letter */, double (*get)(int o, size_t i),
                  double *res, size_t nout) {
    const char *t[3];
    size_t len[3], idx[26], i;
    char labs[26];
    int nl = 0, c, o;
    t[0] = spec;
    t[1] = strchr(spec, ',') + 1;
    t[2] = strstr(spec, "->") + 2;
    len[0] = (size_t)(t[1] - 1 - t[0]);
    len[1] = (size_t)(t[2] - 2 - t[1]);
    len[2] = strlen(t[2]);
    for (c = 0; c < 26; c++) {
        int used = 0;
        for (o = 0; o < 3; o++)
            for (i = 0; i < len[o]; i++) used |= t[o][i] == 'a' + c;
        if (used) labs[nl++] = (char)('a' + c);
        idx[c] = 0;
    }
    for (i = 0; i < nout; i++) res[i] = 0.0;
    for (;;) {
        size_t off[3];
        int l;
        for (o = 0; o < 3; o++) {
            off[o] = 0;
            for (i = 0; i < len[o]; i++) off[o] = off[o] * dim[t[o][i] - 'a'] + idx[t[o][i] - 'a'];
        }
        res[off[2]] += get(0, off[0]) * get(1, off[1]);
        for (l = nl - 1; l >= 0; l--) {
            int L = labs[l] - 'a';
            if (++idx[L] < dim[L]) break;
            idx[L] = 0;
        }
        if (l < 0) break;
    }
}

static const qmx_einsum_operand *g_ops;
static double g_scale_a, g_scale_b;
static double get_q(int o, size_t i) {
    const qmx_einsum_operand *op = &g_ops[o];
    double v = op->dtype == QMX_FLOAT32 ? (double)((const float *)op->data)[i]
                                        : (double)((const int8_t *)op->data)[i];
    return (v - op->zero_point) * (o == 0 ? g_scale_a : g_scale_b);
}

static void test_naive_sweep(void) {
    static const char *specs[] = {"mk,kn->mn", "mk,nk->mn", "km,kn->nm", "bmk,bkn->bmn",
                                  "bmk,kn->bnm", "mkj,njk->mn", "km,k->m", "bij,bjk->kbi"};
    static double ref[MAXE];
    int it, iters = SMALL ? 12 : 60;
    QMX_TEST_CASE("einsum against a naive label-odometer einsum on random shapes past the tiles");
    for (it = 0; it < iters; it++) {
        const char *spec = specs[it % 8];
        size_t dim[26], ca = 1, cb = 1, co = 1, i, ws = 0;
        qmx_einsum_operand ops[2];
        qmx_einsum_opts opts;
        int kind = (int)(qmx_test_rand() % 3), o, pos;
        const char *t;
        qmx_status st;
        for (i = 0; i < 26; i++) dim[i] = 1 + qmx_test_rand() % 5;
        dim['m' - 'a'] = 1 + qmx_test_rand() % (SMALL ? 20 : 80);  /* past the 64-row panel */
        dim['n' - 'a'] = 1 + qmx_test_rand() % (SMALL ? 20 : 300); /* past the 256-column tile */
        dim['k' - 'a'] = 1 + qmx_test_rand() % 40;
        memset(ops, 0, sizeof ops);
        memset(&opts, 0, sizeof opts);
        for (t = spec; *t != ','; t++) ca *= dim[*t - 'a'];
        for (t++; *t != '-'; t++) cb *= dim[*t - 'a'];
        for (t += 2; *t; t++) co *= dim[*t - 'a'];
        if (ca > MAXE || cb > MAXE || co > MAXE) { it--; continue; }
        for (o = 0; o < 2; o++) {
            const char *s = o == 0 ? spec : strchr(spec, ',') + 1;
            size_t c = o == 0 ? ca : cb;
            ops[o].rank = 0;
            for (; *s != ',' && *s != '-'; s++) ops[o].shape[ops[o].rank++] = dim[*s - 'a'];
            for (i = 0; i < c; i++) {
                int8_t v = (int8_t)((int)(qmx_test_rand() & 0xFF) - 128);
                if (o == 0) { ia[i] = v; fa[i] = (float)(v % 9); } else { ib[i] = v; fb[i] = (float)(v % 9); }
            }
            if (kind == 0) {
                ops[o].dtype = QMX_FLOAT32;
                ops[o].data = o == 0 ? (const void *)fa : (const void *)fb;
                ops[o].data_bytes = c * 4;
            } else {
                ops[o].dtype = QMX_INT8;
                ops[o].data = o == 0 ? (const void *)ia : (const void *)ib;
                ops[o].data_bytes = c;
            }
        }
        g_scale_a = g_scale_b = 1.0;
        if (kind == 1) { ops[0].zero_point = (int32_t)(qmx_test_rand() % 21) - 10; ops[1].zero_point = -3; opts.int32_out = 1; }
        if (kind == 2) {
            sa_buf[0] = 0.25f; sb_buf[0] = 0.5f; g_scale_a = 0.25; g_scale_b = 0.5;
            ops[0].scales = sa_buf; ops[0].scales_len = 1;
            ops[1].scales = sb_buf; ops[1].scales_len = 1;
            ops[1].zero_point = (int32_t)(qmx_test_rand() % 11) - 5; /* moves B into the matmul's A role */
        }
        g_ops = ops;
        naive(spec, dim, get_q, ref, co);
        st = qmx_einsum_workspace_size(spec, &ops[0], &ops[1], &opts, &ws, &pos);
        CHECK(st == QMX_OK && ws <= sizeof wsbuf, "%s: ws st %d %u", spec, (int)st, (unsigned)ws);
        if (st != QMX_OK || ws > sizeof wsbuf) continue;
        st = qmx_einsum(spec, &ops[0], &ops[1], &opts, fout, co, wsbuf, ws, &pos);
        CHECK(st == QMX_OK, "%s kind %d: st %d", spec, kind, (int)st);
        {
            int bad = 0;
            for (i = 0; i < co; i++) {
                double g;
                g = elem(fout, i, kind == 1);
                /* exact: integer data, power-of-two scales, |sums| < 2^24 */
                if (g != ref[i] && bad++ < 3)
                    CHECK(0, "%s kind %d elem %u: got %.9g want %.9g", spec, kind, (unsigned)i, g, ref[i]);
            }
            CHECK(bad == 0, "%s kind %d: %d mismatches", spec, kind, bad);
        }
    }
}

/* ---- API contract and errors ---------------------------------------------------------------- */
static size_t r64(size_t x) { return (x + 63u) & ~(size_t)63u; }
static void set_f32(qmx_einsum_operand *op, int rank, const size_t *shape, float *data, size_t n) {
    int i;
    memset(op, 0, sizeof *op);
    op->rank = rank;
    for (i = 0; i < rank; i++) op->shape[i] = shape[i];
    op->data = data;
    op->data_bytes = n * 4;
}

static void test_plans(void) {
    qmx_einsum_operand A, B;
    size_t sa3[3] = {2, 3, 4}, sb2[2] = {4, 5}, s4a[4] = {2, 3, 4, 5}, s4b[4] = {2, 3, 6, 5};
    size_t ws = 0, ws2 = 0;
    int pos;
    QMX_TEST_CASE("plans: layouts that already fit take no workspace; the query is pure");
    set_f32(&A, 3, sa3, fa, 24);
    set_f32(&B, 2, sb2, fb, 20);
    CHECK(qmx_einsum_workspace_size("bsd,df->bsf", &A, &B, NULL, &ws, &pos) == QMX_OK && ws == 0,
          "bsd,df->bsf (float): A is [b*s, d], B is [K,N]: no copy, got %u", (unsigned)ws);
    set_f32(&A, 4, s4a, fa, 120);
    set_f32(&B, 4, s4b, fb, 180);
    CHECK(qmx_einsum_workspace_size("bnth,bnsh->bnts", &A, &B, NULL, &ws, &pos) == QMX_OK &&
          ws == 64 + r64(6 * 5 * 4), "bnth,bnsh->bnts (float, t = 4 rows): B' transposed to [K,N] "
          "for the row form (64 + r64(N*K*4)), got %u", (unsigned)ws);
    /* pure: data pointers and values do not matter */
    A.data = NULL; B.data = fa;
    CHECK(qmx_einsum_workspace_size("bnth,bnsh->bnts", &A, &B, NULL, &ws2, &pos) == QMX_OK && ws2 == ws,
          "the query must not depend on data");
    {   /* int8 -> int32: B is an [N,K] view per batch: only the kernel's own workspace */
        qmx_einsum_opts o32;
        size_t mm = 0;
        memset(&o32, 0, sizeof o32);
        o32.int32_out = 1;
        A.dtype = B.dtype = QMX_INT8;
        qmx_matmul_i8_workspace_size(4, 6, 5, NULL, &mm);
        CHECK(qmx_einsum_workspace_size("bnth,bnsh->bnts", &A, &B, &o32, &ws, &pos) == QMX_OK &&
              ws == 64 + r64(mm), "bnth,bnsh->bnts (int8 -> int32): no copy, got %u want %u",
              (unsigned)ws, (unsigned)(64 + r64(mm)));
        /* "ij,kj->ki": the output is (k, i): B becomes the matmul's A, nothing is copied */
        {
            size_t s2a[2] = {3, 4}, s2b[2] = {5, 4};
            set_f32(&A, 2, s2a, fa, 12); set_f32(&B, 2, s2b, fb, 20);
            A.dtype = B.dtype = QMX_INT8;
            qmx_matmul_i8_workspace_size(5, 3, 4, NULL, &mm);
            CHECK(qmx_einsum_workspace_size("ij,kj->ki", &A, &B, &o32, &ws, &pos) == QMX_OK &&
                  ws == 64 + r64(mm), "ij,kj->ki: roles swapped, no tile, got %u", (unsigned)ws);
            qmx_matmul_i8_workspace_size(3, 5, 4, NULL, &mm);
            CHECK(qmx_einsum_workspace_size("ij,kj->ik", &A, &B, &o32, &ws, &pos) == QMX_OK &&
                  ws == 64 + r64(mm), "ij,kj->ik: as is, got %u", (unsigned)ws);
        }
    }
    {   /* "ij,jk->ki" (float): swapping would pack both operands (32 elements); the [i,k]
         * result tile (15 elements) is cheaper: 64 + r64(15 * 4) */
        size_t s2a[2] = {3, 4}, s2b[2] = {4, 5};
        set_f32(&A, 2, s2a, fa, 12);
        set_f32(&B, 2, s2b, fb, 20);
        CHECK(qmx_einsum_workspace_size("ij,jk->ki", &A, &B, NULL, &ws, &pos) == QMX_OK && ws == 128,
              "ij,jk->ki: the cheaper plan (a result tile), got %u", (unsigned)ws);
        CHECK(qmx_einsum_workspace_size("ij,jk->ki", &A, &B, NULL, &ws2, &pos) == QMX_OK && ws2 == ws,
              "the query is repeatable");
    }
    {   /* "any alignment": at each of the 64 offsets of the workspace, nothing is written past
         * its end (regression: the alignment pad was once counted twice, and up to 63 bytes
         * past an unaligned workspace were written; found by tests/fuzz/fuzz_kernels_api) */
        static unsigned char buf[64 + 4096 + 64];
        size_t s4a2[4] = {2, 3, 4, 5}, s4b2[4] = {2, 3, 6, 5}, off, i, bad = 0, need = 0;
        set_f32(&A, 4, s4a2, fa, 120);
        set_f32(&B, 4, s4b2, fb, 180);
        CHECK(qmx_einsum_workspace_size("bnth,bnsh->bnts", &A, &B, NULL, &need, &pos) == QMX_OK &&
              need > 0 && need <= 4096, "workspace query");
        for (off = 0; off < 64 && need <= 4096; off++) {
            memset(buf, 0xA5, sizeof buf);
            if (qmx_einsum("bnth,bnsh->bnts", &A, &B, NULL, fout, 2 * 3 * 4 * 6, buf + off, need,
                           &pos) != QMX_OK)
                bad++;
            for (i = off + need; i < sizeof buf; i++)
                if (buf[i] != 0xA5) { bad++; break; }
        }
        CHECK(bad == 0, "einsum wrote past an unaligned workspace (%u offsets)", (unsigned)bad);
    }
    {   /* int4 operands unpack into the workspace: count bytes more than int8 */
        qmx_einsum_operand X, Y;
        size_t w8 = 0, w4 = 0;
        memset(&X, 0, sizeof X); memset(&Y, 0, sizeof Y);
        X.dtype = QMX_INT8; X.rank = 2; X.shape[0] = 8; X.shape[1] = 16;
        Y = X; Y.shape[0] = 4;
        CHECK(qmx_einsum_workspace_size("mk,nk->mn", &X, &Y, NULL, &w8, &pos) == QMX_OK, "int8 query");
        Y.dtype = QMX_INT4;
        CHECK(qmx_einsum_workspace_size("mk,nk->mn", &X, &Y, NULL, &w4, &pos) == QMX_OK &&
              w4 == w8 + 64, "int4 B adds its 64 unpacked bytes: %u vs %u", (unsigned)w4, (unsigned)w8);
    }
}

static void test_errors(void) {
    qmx_einsum_operand A, B;
    qmx_einsum_opts o32;
    size_t s2a[2] = {2, 3}, s2b[2] = {3, 4}, ws;
    float out[8];
    int i, pos;
    qmx_status st;
    QMX_TEST_CASE("errors: every bad argument returns its status and leaves the output untouched");
    memset(&o32, 0, sizeof o32);
    o32.int32_out = 1;
    for (i = 0; i < 12; i++) { fa[i] = (float)i; fb[i] = (float)(i % 3); ia[i] = (int8_t)i; ib[i] = (int8_t)-i; }
#define RESET() (set_f32(&A, 2, s2a, fa, 6), set_f32(&B, 2, s2b, fb, 12))
#define EXPECT(call, want, what)                                                            \
    do {                                                                                    \
        for (i = 0; i < 8; i++) out[i] = 42.0f;                                             \
        st = (call);                                                                        \
        CHECK(st == (want), "%s: got %d (%s) want %d", what, (int)st, qmx_status_str(st), (int)(want)); \
        for (i = 0; i < 8; i++) CHECK(out[i] == 42.0f, "%s: output written", what);         \
    } while (0)
#define RUN(opts) qmx_einsum("ij,jk->ik", &A, &B, opts, out, 8, wsbuf, sizeof wsbuf, &pos)
    RESET();
    CHECK(RUN(NULL) == QMX_OK && out[0] == 5.0f, "baseline 2x3 . 3x4 works");
    EXPECT(qmx_einsum(NULL, &A, &B, NULL, out, 8, wsbuf, sizeof wsbuf, &pos), QMX_ERR_NULL, "NULL spec");
    EXPECT(qmx_einsum("ij,jk->ik", NULL, &B, NULL, out, 8, wsbuf, sizeof wsbuf, &pos), QMX_ERR_NULL, "NULL a");
    EXPECT(qmx_einsum("ij,jk->ik", &A, &B, NULL, NULL, 8, wsbuf, sizeof wsbuf, &pos), QMX_ERR_NULL, "NULL out");
    CHECK(qmx_einsum("ij,jk->ik", &A, &B, NULL, out, 8, NULL, 0, &pos) == QMX_OK && out[0] == 5.0f,
          "float plan whose layouts fit: no workspace at all (NULL, 0 bytes)");
    A.data = NULL; EXPECT(RUN(NULL), QMX_ERR_NULL, "NULL data"); RESET();
    CHECK(qmx_einsum_workspace_size("ij,jk->ik", &A, &B, NULL, NULL, &pos) == QMX_ERR_NULL, "NULL bytes");
    EXPECT(qmx_einsum("ij,jk->ik", &A, &B, NULL, out, 7, wsbuf, sizeof wsbuf, &pos), QMX_ERR_BUFFER_TOO_SMALL, "out_len 7 < 8");
    A.data_bytes = 23; EXPECT(RUN(NULL), QMX_ERR_BUFFER_TOO_SMALL, "data_bytes short"); RESET();
    A.shape[1] = 0; B.shape[0] = 0; EXPECT(RUN(NULL), QMX_ERR_SIZE, "zero dimension"); RESET();
    A.rank = 9; EXPECT(RUN(NULL), QMX_ERR_SIZE, "rank 9"); RESET();
    A.rank = -1; EXPECT(RUN(NULL), QMX_ERR_SIZE, "rank -1"); RESET();
    A.shape[0] = (size_t)1 << (sizeof(size_t) * 4); A.shape[1] = 3; B.shape[0] = 3;
    A.rank = 2;
    {   /* count overflow: 2^(w/2) * 2^(w/2) * ... */
        qmx_einsum_operand C = A;
        C.rank = 3; C.shape[0] = C.shape[1] = (size_t)1 << (sizeof(size_t) * 4); C.shape[2] = 3;
        EXPECT(qmx_einsum("bij,jk->bik", &C, &B, NULL, out, 8, wsbuf, sizeof wsbuf, &pos), QMX_ERR_OVERFLOW, "size_t overflow of a count");
        EXPECT(qmx_einsum("ij,jk->ik", &A, &B, NULL, out, 8, wsbuf, sizeof wsbuf, &pos), QMX_ERR_BUFFER_TOO_SMALL, "huge shape, short data");
    }
    RESET();
    fa[4] = qmx_test_bits_f32(0x7FC00000u); EXPECT(RUN(NULL), QMX_ERR_NONFINITE, "NaN in float data");
    fa[4] = qmx_test_bits_f32(0xFF800000u); EXPECT(RUN(NULL), QMX_ERR_NONFINITE, "-Inf in float data");
    fa[4] = 4.0f;
    {   /* fp8 NaN code */
        uint8_t codes[6] = {0x38, 0x38, 0x7F, 0x38, 0x38, 0x38};
        A.dtype = QMX_FP8_E4M3FN; A.data = codes; A.data_bytes = 6;
        EXPECT(RUN(NULL), QMX_ERR_NONFINITE, "fp8 e4m3fn NaN code 0x7F");
        codes[2] = 0x38;
        CHECK(RUN(NULL) == QMX_OK && out[0] == 3.0f, "fp8 x float works (1.0 codes): %g", out[0]);
    }
    RESET();
    A.scales = sa_buf; A.scales_len = 1; sa_buf[0] = 1.0f;
    EXPECT(RUN(NULL), QMX_ERR_ARG, "scales on a float32 operand"); RESET();
    A.zero_point = 1; EXPECT(RUN(NULL), QMX_ERR_ARG, "zero point on a float32 operand"); RESET();
    EXPECT(RUN(&o32), QMX_ERR_ARG, "int32 output of float operands");
    A.dtype = QMX_UINT8; EXPECT(RUN(NULL), QMX_ERR_DTYPE, "uint8 operand"); RESET();
    A.dtype = QMX_INT16; EXPECT(RUN(NULL), QMX_ERR_DTYPE, "int16 operand"); RESET();
    A.dtype = (qmx_dtype)99; EXPECT(RUN(NULL), QMX_ERR_DTYPE, "unknown dtype"); RESET();
    A.dtype = QMX_INT8; A.data = ia; A.data_bytes = 6;
    EXPECT(RUN(NULL), QMX_ERR_UNSUPPORTED, "int8 x float32 (dequantize first)");
    /* int x int */
    B.dtype = QMX_INT8; B.data = ib; B.data_bytes = 12;
    CHECK(RUN(NULL) == QMX_OK, "int8 x int8 -> float, NULL scales = 1.0");
    CHECK(RUN(&o32) == QMX_OK, "int8 x int8 -> int32");
    EXPECT(qmx_einsum("ij,jk->ik", &A, &B, NULL, out, 8, NULL, sizeof wsbuf, &pos), QMX_ERR_NULL,
           "NULL workspace for a plan that needs one");
    CHECK(qmx_einsum_workspace_size("ij,jk->ik", &A, &B, NULL, &ws, &pos) == QMX_OK && ws > 0, "int query");
    EXPECT(qmx_einsum("ij,jk->ik", &A, &B, NULL, out, 8, wsbuf, ws - 1, &pos), QMX_ERR_BUFFER_TOO_SMALL,
           "workspace 1 byte short");
    A.zero_point = 128; EXPECT(RUN(NULL), QMX_ERR_ARG, "zero point 128"); A.zero_point = 0;
    A.zero_point = 3; B.zero_point = -2;
    EXPECT(RUN(NULL), QMX_ERR_UNSUPPORTED, "float output with zero points on both operands");
    CHECK(RUN(&o32) == QMX_OK, "int32 output takes both zero points");
    A.zero_point = B.zero_point = 0;
    A.scales = sa_buf; A.scales_len = 2; sa_buf[0] = sa_buf[1] = 0.5f;
    EXPECT(RUN(&o32), QMX_ERR_ARG, "scales with raw int32 output");
    sa_buf[0] = qmx_test_bits_f32(0x7FC00000u); EXPECT(RUN(NULL), QMX_ERR_ARG, "NaN scale");
    sa_buf[0] = -1.0f; EXPECT(RUN(NULL), QMX_ERR_ARG, "negative scale");
    sa_buf[0] = 0.0f; EXPECT(RUN(NULL), QMX_ERR_ARG, "zero scale");
    sa_buf[0] = 0.5f;
    A.scaling = QMX_EINSUM_SCALE_CHANNEL; A.channel_axis = 0;
    CHECK(RUN(NULL) == QMX_OK, "per-channel along i (2 scales)");
    A.scales_len = 1; EXPECT(RUN(NULL), QMX_ERR_BUFFER_TOO_SMALL, "1 scale for 2 channels"); A.scales_len = 2;
    A.channel_axis = 1; EXPECT(RUN(NULL), QMX_ERR_ARG, "per-channel along the contracted j");
    A.channel_axis = 2; EXPECT(RUN(NULL), QMX_ERR_ARG, "channel axis out of range");
    A.scaling = QMX_EINSUM_SCALE_BLOCK; A.block_axis = 0; A.block_size = 2;
    EXPECT(RUN(NULL), QMX_ERR_ARG, "block axis on a free axis");
    A.block_axis = 1; A.block_size = 0; EXPECT(RUN(NULL), QMX_ERR_SIZE, "block size 0");
    A.block_size = 2;
    CHECK(RUN(NULL) == QMX_OK, "per-block along j, ragged last block (3 = 2 + 1)");
    B.scales = sb_buf; B.scales_len = 4; B.scaling = QMX_EINSUM_SCALE_BLOCK; B.block_axis = 0;
    B.block_size = 1; sb_buf[0] = sb_buf[1] = sb_buf[2] = sb_buf[3] = 1.0f;
    EXPECT(RUN(NULL), QMX_ERR_UNSUPPORTED, "two different block sizes");
    B.scales = NULL;
    A.scaling = (qmx_einsum_scaling)7; EXPECT(RUN(NULL), QMX_ERR_ARG, "unknown scaling");
    A.scaling = QMX_EINSUM_SCALE_TENSOR;
    {   /* fp8 per-block scales are multiplied in when the operand is decoded (E5M2 0x38 = 0.5;
         * blocks of 1 along j: 0.5 * {0.5, 2, 0.25}); an element * scale that overflows is
         * NONFINITE, with the output and the workspace untouched */
        uint8_t codes[6] = {0x38, 0x38, 0x38, 0x38, 0x38, 0x38};
        static unsigned char wsave[4096];
        float bsc[3] = {0.5f, 2.0f, 0.25f};
        qmx_einsum_operand F = A;
        F.dtype = QMX_FP8_E5M2; F.data = codes; F.data_bytes = 6; F.scaling = QMX_EINSUM_SCALE_BLOCK;
        F.block_axis = 1; F.block_size = 1; F.scales = bsc; F.scales_len = 3;
        set_f32(&B, 2, s2b, fb, 12);
        CHECK(qmx_einsum("ij,jk->ik", &F, &B, NULL, out, 8, wsbuf, sizeof wsbuf, &pos) == QMX_OK &&
              out[0] == 1.25f && out[5] == 2.25f, /* 0.25 * 1 + 1 * 2 + 0.125 * 0 */
              "fp8 per-block scales baked in: %g %g", out[0], out[5]);
        codes[3] = 0x7B; bsc[0] = 1e38f; /* 57344 * 1e38 */
        memcpy(wsave, wsbuf, sizeof wsave);
        EXPECT(qmx_einsum("ij,jk->ik", &F, &B, NULL, out, 8, wsbuf, sizeof wsave, &pos), QMX_ERR_NONFINITE,
               "fp8 element * block scale overflows");
        CHECK(!memcmp(wsave, wsbuf, sizeof wsave), "workspace written on error");
        F.zero_point = 1; F.scaling = QMX_EINSUM_SCALE_TENSOR;
        EXPECT(qmx_einsum("ij,jk->ik", &F, &B, NULL, out, 8, wsbuf, sizeof wsbuf, &pos), QMX_ERR_ARG, "fp8 zero point");
    }
    RESET();
    {   /* int K above QMX_MATMUL_I8_MAX_K */
        qmx_einsum_operand X, Y;
        static int8_t big[QMX_MATMUL_I8_MAX_K + 1];
        int32_t r = 0;
        memset(&X, 0, sizeof X);
        X.dtype = QMX_INT8; X.rank = 1; X.shape[0] = QMX_MATMUL_I8_MAX_K + 1; X.data = big;
        X.data_bytes = sizeof big; Y = X;
        CHECK(qmx_einsum("k,k->", &X, &Y, &o32, &r, 1, wsbuf, sizeof wsbuf, &pos) == QMX_ERR_OVERFLOW,
              "int K = QMX_MATMUL_I8_MAX_K + 1");
        X.shape[0] = Y.shape[0] = QMX_MATMUL_I8_MAX_K;
        for (i = 0; i < QMX_MATMUL_I8_MAX_K; i++) big[i] = -128;
        X.zero_point = 127; Y.zero_point = 127;
        st = qmx_einsum_workspace_size("k,k->", &X, &Y, &o32, &ws, &pos);
        CHECK(st == QMX_OK && ws <= sizeof wsbuf, "K at the bound: workspace %u", (unsigned)ws);
        if (st == QMX_OK && ws <= sizeof wsbuf) {
            st = qmx_einsum("k,k->", &X, &Y, &o32, &r, 1, wsbuf, sizeof wsbuf, &pos);
            CHECK(st == QMX_OK && r == QMX_MATMUL_I8_MAX_K * 65025, "K at the bound, |q - zp| = 255: %ld",
                  (long)r);
        }
    }
#undef RUN
#undef EXPECT
#undef RESET
}

static void test_features(void) {
    qmx_einsum_operand A, B;
    size_t s23[2] = {2, 3}, s2[2] = {3, 2};
    float out[16];
    int pos = 5;
    QMX_TEST_CASE("spec features: spaces, implicit output order, diagonal, in-operand sums");
    set_f32(&A, 2, s23, fa, 6);
    set_f32(&B, 2, s2, fb, 6);
    {   /* implicit output: once-only labels in ASCII order ('C' < 'a'): "aB,BC" -> "Ca" */
        size_t shp[8];
        int r;
        CHECK(qmx_einsum_output_shape("aB,BC", &A, &B, shp, &r, &pos) == QMX_OK && r == 2 &&
              shp[0] == 2 && shp[1] == 2, "aB,BC -> CA order, rank %d", r);
        CHECK(qmx_einsum_output_shape(" a B , B C ", &A, &B, shp, &r, &pos) == QMX_OK && r == 2,
              "spaces are ignored");
    }
    {   /* "ii->" style trace through a diagonal: "ii,i->i" with A = [[0,1],[2,3]], B = [1, 2] */
        size_t sq[2] = {2, 2}, v[1] = {2};
        fa[0] = 0; fa[1] = 1; fa[2] = 2; fa[3] = 3; fb[0] = 1; fb[1] = 2;
        set_f32(&A, 2, sq, fa, 4);
        set_f32(&B, 1, v, fb, 2);
        CHECK(qmx_einsum("ii,i->i", &A, &B, NULL, out, 2, wsbuf, sizeof wsbuf, &pos) == QMX_OK &&
              out[0] == 0.0f && out[1] == 6.0f, "diagonal: %g %g", out[0], out[1]);
        /* "ij,k->i": k is summed within B (stride 0 in A): rows of A times sum(B) */
        CHECK(qmx_einsum("ij,k->i", &A, &B, NULL, out, 2, wsbuf, sizeof wsbuf, &pos) == QMX_OK &&
              out[0] == 3.0f && out[1] == 15.0f, "in-operand sum: %g %g", out[0], out[1]);
    }
    {   /* spec limits: 256 characters; an implicit output of more than 8 labels */
        static char longspec[300];
        size_t one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        int r;
        size_t shp[8];
        memset(longspec, ' ', 290);
        memcpy(longspec + 290, "i,i", 4);
        set_f32(&A, 1, one, fa, 1);
        set_f32(&B, 1, one, fb, 1);
        CHECK(qmx_einsum_output_shape(longspec, &A, &B, shp, &r, &pos) == QMX_ERR_PARSE && pos == 256,
              "a spec longer than QMX_EINSUM_MAX_SPEC: PARSE at 256, got pos %d", pos);
        CHECK(qmx_einsum_output_shape(longspec + 40, &A, &B, shp, &r, &pos) == QMX_OK && r == 0,
              "254 characters are fine");
        set_f32(&A, 8, one, fa, 1);
        set_f32(&B, 8, one, fb, 1);
        CHECK(qmx_einsum_output_shape("abcdefgh,ijklmnop", &A, &B, shp, &r, &pos) ==
              QMX_ERR_UNSUPPORTED && pos == -1, "an implicit output of 16 labels (rank > 8)");
        CHECK(qmx_einsum_output_shape("abcdefgh,abcdefgp->p", &A, &B, shp, &r, &pos) == QMX_OK &&
              r == 1, "rank 8 operands are fine");
    }
}

/* The int8 x int8 -> float plan is the documented kernel call: "bsd,fd->bsf" (weights [N,K])
 * gives the same bits as qmx_matmul_i8_f32 on the flattened [b*s, d] x [f, d]^T with the
 * per-token (per-row) and per-channel scales expanded, with a zero point on the activations. */
static void test_plan_is_kernel(void) {
    qmx_einsum_operand A, B;
    size_t M = 6, N = 5, K = 70, i, ws = 0, mws = 0;
    static float want_q[64], sa[6], sb[5], got_q[64];
    qmx_matmul_i8_f32_scales sc;
    qmx_status st;
    int pos;
    QMX_TEST_CASE("bsd,fd->bsf with per-token / per-channel / per-block scales is qmx_matmul_i8_f32");
    for (i = 0; i < M * K; i++) ia[i] = (int8_t)((int)(qmx_test_rand() & 0xFF) - 128);
    for (i = 0; i < N * K; i++) ib[i] = (int8_t)((int)(qmx_test_rand() & 0xFF) - 128);
    for (i = 0; i < 6; i++) sa[i] = 0.01f + 0.003f * (float)i;
    for (i = 0; i < 5; i++) sb[i] = 0.02f + 0.007f * (float)i;
    memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
    A.dtype = QMX_INT8; A.rank = 3; A.shape[0] = 2; A.shape[1] = 3; A.shape[2] = K; A.data = ia;
    A.data_bytes = M * K; A.zero_point = 7;
    A.scales = sa; A.scales_len = 3; A.scaling = QMX_EINSUM_SCALE_CHANNEL; A.channel_axis = 1;
    B.dtype = QMX_INT8; B.rank = 2; B.shape[0] = N; B.shape[1] = K; B.data = ib; B.data_bytes = N * K;
    B.scales = sb; B.scales_len = 5; B.scaling = QMX_EINSUM_SCALE_CHANNEL; B.channel_axis = 0;
    st = qmx_einsum_workspace_size("bsd,fd->bsf", &A, &B, NULL, &ws, &pos);
    CHECK(st == QMX_OK, "query %d", (int)st);
    CHECK(qmx_matmul_i8_f32_workspace_size(M, N, K, &mws) == QMX_OK && ws <= 64 + 64 + 64 + mws + 64,
          "no packing: only scales and the kernel's workspace (%u vs %u)", (unsigned)ws, (unsigned)mws);
    st = qmx_einsum("bsd,fd->bsf", &A, &B, NULL, got_q, M * N, wsbuf, sizeof wsbuf, &pos);
    CHECK(st == QMX_OK, "einsum %d", (int)st);
    {   /* the same call by hand: a per-row scale = the token's s index */
        static float ra[6];
        for (i = 0; i < M; i++) ra[i] = sa[i % 3];
        sc.a_scales = ra; sc.a_scales_len = M; sc.a_per_row = 1; sc.a_zp = 7;
        sc.b_scales = sb; sc.b_scales_len = N; sc.b_per_col = 1; sc.block_size = K;
        st = qmx_matmul_i8_f32(M, N, K, ia, K, ib, K, want_q, N, &sc, wsbuf + 100000, 100000);
        CHECK(st == QMX_OK, "matmul %d", (int)st);
        CHECK(!memcmp(got_q, want_q, M * N * 4), "einsum bits differ from the kernel's");
    }
    /* per-block along d (32): two ragged blocks 32 + 32 + 6 */
    {
        static float ba[3 * 3], bb[5 * 3], ra[6 * 3];
        for (i = 0; i < 9; i++) ba[i] = 0.01f * (float)(i + 1);
        for (i = 0; i < 15; i++) bb[i] = 0.003f * (float)(i + 2);
        A.scales = ba; A.scales_len = 9; A.scaling = QMX_EINSUM_SCALE_CHANNEL_BLOCK;
        A.block_axis = 2; A.block_size = 32;
        B.scales = bb; B.scales_len = 15; B.scaling = QMX_EINSUM_SCALE_CHANNEL_BLOCK;
        B.block_axis = 1; B.block_size = 32;
        st = qmx_einsum("bsd,fd->bsf", &A, &B, NULL, got_q, M * N, wsbuf, sizeof wsbuf, &pos);
        CHECK(st == QMX_OK, "einsum blocks %d", (int)st);
        for (i = 0; i < M * 3; i++) ra[i] = ba[(i / 3) % 3 * 3 + i % 3];
        sc.a_scales = ra; sc.a_scales_len = M * 3; sc.b_scales = bb; sc.b_scales_len = N * 3;
        sc.block_size = 32;
        st = qmx_matmul_i8_f32(M, N, K, ia, K, ib, K, want_q, N, &sc, wsbuf + 100000, 100000);
        CHECK(st == QMX_OK && !memcmp(got_q, want_q, M * N * 4), "per-block bits differ (%d)", (int)st);
    }
}

/* [K,N] int8 weights ("bsd,df->bsf") are read in place, not transposed into the workspace: the
 * result must be the bits of qmx_matmul_i8_f32 on the transposed [N,K] copy, for per-channel
 * and per-block scales (blocks of 32, a ragged tail; blocks of 6, not a multiple of 4), with
 * many rows (the AVX-512 VNNI register tiles, K past their 1024-byte chunks) and few (B then
 * streamed in memory order), N past one 256-column tile. */
static void test_kn_weights(void) {
    enum { KMAX = 1030, NMAX = 70, MMAX = 40 };
    static int8_t a[MMAX * KMAX], bkn[KMAX * NMAX], bnk[NMAX * KMAX];
    static float got[MMAX * NMAX], ref[MMAX * NMAX], sa[MMAX * 200], sb[NMAX * 200], ra[MMAX * 200];
    static const size_t cases[][4] = {{20, 1030, 70, 0}, {20, 1030, 70, 32}, {3, 1030, 70, 32},
                                      {20, 70, 37, 6}, {3, 70, 37, 0}, {17, 9, 40, 4},
                                      {2, 200, 300, 0}, {5, 64, 260, 16}};
    size_t c, i, j, n_cases = SMALL ? 3 : 8;
    QMX_TEST_CASE("bsd,df->bsf: [K,N] int8 weights read in place give qmx_matmul_i8_f32's bits");
    for (c = 0; c < n_cases; c++) {
        size_t S = SMALL ? cases[c + 3][0] : cases[c][0], K = SMALL ? cases[c + 3][1] : cases[c][1];
        size_t N = SMALL ? cases[c + 3][2] : cases[c][2], bs = SMALL ? cases[c + 3][3] : cases[c][3];
        size_t M = 2 * S, nblk = bs ? (K + bs - 1) / bs : 1, ws = 0;
        qmx_einsum_operand A, B;
        qmx_matmul_i8_f32_scales sc;
        qmx_status st;
        int pos;
        for (i = 0; i < M * K; i++) a[i] = (int8_t)((int)(qmx_test_rand() & 0xFF) - 128);
        for (i = 0; i < K * N; i++) bkn[i] = (int8_t)((int)(qmx_test_rand() & 0xFF) - 128);
        for (i = 0; i < K; i++)
            for (j = 0; j < N; j++) bnk[j * K + i] = bkn[i * N + j];
        for (i = 0; i < S * nblk; i++) sa[i] = 0.001f * (float)(1 + qmx_test_rand() % 50);
        for (i = 0; i < N * nblk; i++) sb[i] = 0.002f * (float)(1 + qmx_test_rand() % 50);
        memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
        A.dtype = QMX_INT8; A.rank = 3; A.shape[0] = 2; A.shape[1] = S; A.shape[2] = K;
        A.data = a; A.data_bytes = M * K; A.zero_point = -9;
        A.scales = sa; A.scales_len = S * nblk; A.channel_axis = 1;
        B.dtype = QMX_INT8; B.rank = 2; B.shape[0] = K; B.shape[1] = N; B.data = bkn;
        B.data_bytes = K * N; B.scales = sb; B.scales_len = N * nblk; B.channel_axis = 1;
        if (bs) {
            A.scaling = B.scaling = QMX_EINSUM_SCALE_CHANNEL_BLOCK;
            A.block_axis = 2; B.block_axis = 0; A.block_size = B.block_size = bs;
        } else {
            A.scaling = B.scaling = QMX_EINSUM_SCALE_CHANNEL;
        }
        st = qmx_einsum_workspace_size("bsd,df->bsf", &A, &B, NULL, &ws, &pos);
        {   /* the kernel's workspace, 4 x K bytes, below 16 rows (M + 1) x N int32 accumulators,
             * the expanded scales: no [N,K] copy of B */
            size_t mws = 0, most;
            qmx_matmul_i8_f32_workspace_size(M, N, K, &mws);
            most = mws + 4 * r64(K) + (M < 16 ? 4 * r64(N) * (M + 1) : 0) + r64(4 * M * nblk) +
                   r64(4 * N * nblk) + 256;
            CHECK(st == QMX_OK && ws <= most, "case %u: query %d, %u bytes (at most %u)",
                  (unsigned)c, (int)st, (unsigned)ws, (unsigned)most);
        }
        if (st != QMX_OK || ws > sizeof wsbuf) continue;
        st = qmx_einsum("bsd,df->bsf", &A, &B, NULL, got, M * N, wsbuf, ws, &pos);
        CHECK(st == QMX_OK, "case %u: einsum %d", (unsigned)c, (int)st);
        for (i = 0; i < M * nblk; i++) ra[i] = sa[(i / nblk) % S * nblk + i % nblk]; /* row m: token m % S */
        sc.a_scales = ra; sc.a_scales_len = M * nblk; sc.a_per_row = 1; sc.a_zp = -9;
        sc.b_scales = sb; sc.b_scales_len = N * nblk; sc.b_per_col = 1; sc.block_size = bs ? bs : K;
        st = qmx_matmul_i8_f32(M, N, K, a, K, bnk, K, ref, N, &sc, wsbuf, sizeof wsbuf);
        CHECK(st == QMX_OK && !memcmp(got, ref, M * N * 4), "case %u (M %u K %u N %u bs %u): bits differ (%d)",
              (unsigned)c, (unsigned)M, (unsigned)K, (unsigned)N, (unsigned)bs, (int)st);
    }
}

/* ---- the newer operand types: int2 / uint2, int3..int7, fp4, fp6, nf4, blocks baked into a
 * float-decoded operand, MX / NVFP4 ------------------------------------------------------------
 * Models written here: fp4 / fp6 values from the ml_dtypes decode tables in tests/data, nf4 from
 * the 16 float32 values of QLoRA Appendix E, int2 / int4 unpacking by hand, MX scale layout and
 * E8M0 powers of two by hand; fp8 through qmx_fp8_to_f32 and MX / nf4 / fp8 blocks also through
 * qmx_mx_dequantize / qmx_dequantize (tested against golden data in their own programs). The
 * float results are compared BIT FOR BIT with the documented order, run here in a loop of
 * volatile floats (one rounding per step, no contraction). */

static float t_fp4[16], t_e2m3[64], t_e3m2[64];
static int t_tables_ok;
static const float t_nf4[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};

static int load_decode(const char *name, float *tab, int n) {
    qmx_test_table t;
    char line[256];
    int rows = 0;
    if (!qmx_test_table_open(&t, name, "# columns: code(hex) float32_bits(hex) value")) return 0;
    while (qmx_test_table_next(&t, line, sizeof line)) {
        unsigned c;
        unsigned long bits;
        if (sscanf(line, "%x %lx", &c, &bits) != 2 || c >= (unsigned)n) {
            CHECK(0, "%s: bad row %s", name, line);
            continue;
        }
        tab[c] = qmx_test_bits_f32((uint32_t)bits);
        rows++;
    }
    qmx_test_table_close(&t, n);
    return rows == n;
}

/* Element e of a stored float-decoded tensor, by the tables above. */
static float t_value(qmx_dtype d, const uint8_t *p, size_t e) {
    unsigned nib = (p[e / 2] >> (4u * (unsigned)(e % 2))) & 15u;
    switch (d) {
    case QMX_FP4_E2M1: return t_fp4[nib];
    case QMX_NF4: return t_nf4[nib];
    case QMX_FP6_E2M3: return t_e2m3[p[e] & 63u];
    case QMX_FP6_E3M2: return t_e3m2[p[e] & 63u];
    default: return qmx_fp8_to_f32(p[e], d);
    }
}
/* Element e of a stored int tensor, unpacked by hand. */
static int t_int(qmx_dtype d, const uint8_t *p, size_t e) {
    int c;
    switch (d) {
    case QMX_INT2: c = (p[e / 4] >> (2u * (unsigned)(e % 4))) & 3; return c >= 2 ? c - 4 : c;
    case QMX_UINT2: return (p[e / 4] >> (2u * (unsigned)(e % 4))) & 3;
    case QMX_INT4: c = (p[e / 2] >> (4u * (unsigned)(e % 2))) & 15; return c >= 8 ? c - 16 : c;
    case QMX_UINT4: return (p[e / 2] >> (4u * (unsigned)(e % 2))) & 15;
    default: return (int8_t)p[e];
    }
}
static size_t t_bytes(qmx_dtype d, size_t count) {
    if (d == QMX_INT2 || d == QMX_UINT2) return (count + 3) / 4;
    if (d == QMX_INT4 || d == QMX_UINT4 || d == QMX_FP4_E2M1 || d == QMX_NF4) return (count + 1) / 2;
    return d == QMX_FLOAT32 ? 4 * count : count;
}
static float t_pow2(int e) {
    double v = 1.0;
    for (; e > 0; e--) v *= 2.0;
    for (; e < 0; e++) v *= 0.5;
    return (float)v;
}
static float t_frand(float lo, float hi) {
    float t = (float)(qmx_test_rand() >> 8) * (1.0f / 16777216.0f), w = hi - lo;
    volatile float p = t * w;
    t = lo + p;
    return t;
}

/* The documented float order, per output: sum = +0; for k = 0, 1, ...: p = a*b; sum = sum + p;
 * then sum * sa[m] (when given), then * sb[n] (when given); each step a volatile float. B is
 * [N][K], or [K][N] when kn. */
static void ref_float(size_t M, size_t N, size_t K, const float *A, const float *B, int kn,
                      const float *sa, const float *sb, float *C) {
    size_t m, n, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            volatile float sum = 0.0f, p;
            for (k = 0; k < K; k++) {
                p = A[m * K + k] * (kn ? B[k * N + n] : B[n * K + k]);
                sum = sum + p;
            }
            if (sa) sum = sum * sa[m];
            if (sb) sum = sum * sb[n];
            C[m * N + n] = sum;
        }
}

/* int einsum "mk,nk->mn" / "mk,kn->mn" in int64 over hand-unpacked values */
static void ref_int(size_t M, size_t N, size_t K, qmx_dtype da, const uint8_t *a, int zpa,
                    qmx_dtype db, const uint8_t *b, int zpb, int kn, int64_t *C) {
    size_t m, n, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            int64_t s = 0;
            for (k = 0; k < K; k++)
                s += (int64_t)(t_int(da, a, m * K + k) - zpa) *
                     (t_int(db, b, kn ? k * N + n : n * K + k) - zpb);
            C[m * N + n] = s;
        }
}

static uint8_t na_el[4096], nb_el[4096], na_sc[1024], nb_sc[1024];
static float na_f[4096], nb_f[4096], na_dq[4096], nb_dq[4096], n_ref[4096], n_got[4096];
static float na_s[1024], nb_s[1024], n_sa[256], n_sb[256];

/* A einsum case of the new-type tests: spec, shapes (A [..., K], B [N][K] or [K][N]). */
typedef struct nt_case {
    const char *spec;
    int ra;
    size_t a[3];
    size_t n, k;
    int kn;
} nt_case;
static const nt_case nt_cases[] = {
    {"mk,nk->mn", 2, {5, 37, 0}, 7, 37, 0},    /* float row form (M >= 4), B packed to [K,N] */
    {"bsd,fd->bsf", 3, {2, 3, 37}, 11, 37, 0}, /* M = 6 */
    {"bsd,df->bsf", 3, {1, 3, 37}, 11, 37, 1}, /* [K,N] weights in place, M = 3 */
    {"mk,nk->mn", 2, {2, 21, 0}, 9, 21, 0},    /* [N,K] in place, 4 x 4 tiles' leftovers */
    {"bsd,df->bsf", 3, {2, 3, 20}, 13, 20, 1}  /* [K,N], M = 6 */
};

/* B's type: a dtype with a scale mode (-1 none; blocks of bs), or an MX config. */
typedef struct nt_type {
    int dtype, scaling;
    size_t bs;
    int mx, format, rule;
    size_t mbs;
    float ts;
    const char *name;
} nt_type;
static const nt_type nt_types[] = {
    {QMX_NF4, 3, 8, 0, 0, 0, 0, 0.0f, "nf4, channel-blocks of 8 (ragged)"},
    {QMX_NF4, 2, 16, 0, 0, 0, 0, 0.0f, "nf4, blocks of 16"},
    {QMX_NF4, 1, 0, 0, 0, 0, 0, 0.0f, "nf4, per channel"},
    {QMX_FP4_E2M1, -1, 0, 0, 0, 0, 0, 0.0f, "fp4 e2m1, no scales"},
    {QMX_FP4_E2M1, 3, 5, 0, 0, 0, 0, 0.0f, "fp4 e2m1, channel-blocks of 5"},
    {QMX_FP6_E2M3, 0, 0, 0, 0, 0, 0, 0.0f, "fp6 e2m3, per tensor"},
    {QMX_FP6_E3M2, 2, 16, 0, 0, 0, 0, 0.0f, "fp6 e3m2, blocks of 16"},
    {QMX_FP6_E3M2, 1, 0, 0, 0, 0, 0, 0.0f, "fp6 e3m2, per channel"},
    {QMX_FP8_E4M3FN, 3, 10, 0, 0, 0, 0, 0.0f, "fp8 e4m3fn, channel-blocks of 10"},
    {QMX_FP8_E5M2, 1, 0, 0, 0, 0, 0, 0.0f, "fp8 e5m2, per channel"},
    {QMX_FP8_E4M3FN, -1, 0, 1, QMX_MXFP8_E4M3, QMX_MX_FLOOR, 0, 0.0f, "MXFP8 E4M3 (FLOOR)"},
    {QMX_FP8_E5M2, -1, 0, 1, QMX_MXFP8_E5M2, QMX_MX_RCEIL, 16, 0.0f, "MXFP8 E5M2 (RCEIL, 16)"},
    {QMX_FP6_E2M3, -1, 0, 1, QMX_MXFP6_E2M3, QMX_MX_CEIL, 0, 0.0f, "MXFP6 E2M3 (CEIL)"},
    {QMX_FP6_E3M2, -1, 0, 1, QMX_MXFP6_E3M2, QMX_MX_EVEN, 8, 0.0f, "MXFP6 E3M2 (EVEN, 8)"},
    {QMX_FP4_E2M1, -1, 0, 1, QMX_MXFP4, QMX_MX_FLOOR, 0, 0.0f, "MXFP4 (FLOOR)"},
    {QMX_FP4_E2M1, -1, 0, 1, QMX_MXFP4, QMX_MX_GGML, 0, 0.0f, "MXFP4 (ggml)"},
    {QMX_FP4_E2M1, -1, 0, 1, QMX_NVFP4, QMX_MX_FLOOR, 0, 0.0f, "NVFP4"},
    {QMX_FP4_E2M1, -1, 0, 1, QMX_NVFP4, QMX_MX_FLOOR, 0, 0.0234375f, "NVFP4 two-level"},
    {QMX_FP4_E2M1, -1, 0, 1, QMX_NVFP4, QMX_MX_QWIX, 0, 0.0f, "NVFP4 (Qwix)"},
    {QMX_FP8_E4M3FN, -1, 0, 1, QMX_MXFP8_E4M3, QMX_MX_QWIX, 0, 0.0f, "MXFP8 (Qwix)"},
    {QMX_INT8, -1, 0, 1, QMX_MXINT8, QMX_MX_MICROXCALING, 0, 0.0f, "MXINT8 (microxcaling)"}};

/* Random codes of a float-decoded dtype, NaN / Inf codes replaced by 0x30 (fp8). */
static void t_codes(qmx_dtype d, uint8_t *p, size_t count) {
    size_t i, nb = t_bytes(d, count);
    for (i = 0; i < nb; i++) {
        p[i] = (uint8_t)qmx_test_rand();
        if (qmx_dtype_is_fp8(d) && !(qmx_fp8_to_f32(p[i], d) == qmx_fp8_to_f32(p[i], d) &&
                                     qmx_fp8_to_f32(p[i], d) - qmx_fp8_to_f32(p[i], d) == 0.0f))
            p[i] = 0x30;
    }
}

/* MX operand (elements el, codes sc) of the float tensor x with the view [outer][len][inner];
 * the dequantized tensor into dq. 0 on failure. */
static int t_mx(qmx_mx_config *c, const float *x, size_t outer, size_t len, size_t inner,
                uint8_t *el, uint8_t *sc, float *dq, size_t *eb, size_t *ns) {
    qmx_mx_config v = *c;
    v.outer = outer; v.axis_len = len; v.inner = inner;
    if (qmx_mx_storage(&v, outer * len * inner, eb, ns) != QMX_OK) return 0;
    if (qmx_mx_quantize(&v, x, outer * len * inner, el, *eb, sc, *ns) != QMX_OK) return 0;
    return qmx_mx_dequantize(&v, el, *eb, sc, *ns, outer * len * inner, dq) == QMX_OK;
}

static void test_new_float_operands(void) {
    size_t ci, ti, i, n_cases = sizeof nt_cases / sizeof nt_cases[0];
    size_t n_types = sizeof nt_types / sizeof nt_types[0];
    int runs = 0;
    QMX_TEST_CASE("fp4 / fp6 / nf4 / fp8-with-blocks / MX operands: the documented float order, bit for bit");
    t_tables_ok = load_decode("fp4_e2m1fn_decode.txt", t_fp4, 16) &&
                  load_decode("fp6_e2m3fn_decode.txt", t_e2m3, 64) &&
                  load_decode("fp6_e3m2fn_decode.txt", t_e3m2, 64);
    if (!t_tables_ok) return;
    for (ci = 0; ci < n_cases; ci++)
        for (ti = 0; ti < n_types; ti++) {
            const nt_case *cs = &nt_cases[ci];
            const nt_type *ty = &nt_types[ti];
            qmx_dtype db = (qmx_dtype)ty->dtype;
            size_t M = cs->ra == 2 ? cs->a[0] : cs->a[0] * cs->a[1], N = cs->n, K = cs->k;
            size_t cA = M * K, cB = N * K, nblk = ty->bs ? (K + ty->bs - 1) / ty->bs : 1;
            size_t ws = 0, eb = 0, ns = 0, n;
            int atype = (int)((ci + ti) % 4), pos, bad = 0;
            qmx_einsum_operand A, B;
            qmx_mx_config acfg, bcfg;
            const float *sa = NULL, *sb = NULL;
            qmx_status st;
            memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
            memset(&acfg, 0, sizeof acfg); memset(&bcfg, 0, sizeof bcfg);
            /* A: float32, fp6 e3m2 per tensor 0.5, MXFP8 E4M3 blocks of 16 along k, or nf4
             * with a per-row (free axis) power-of-two scale */
            A.rank = cs->ra;
            for (i = 0; i < (size_t)cs->ra; i++) A.shape[i] = cs->a[i];
            for (i = 0; i < cA; i++) na_f[i] = t_frand(-1.5f, 1.5f);
            if (atype == 0) {
                A.dtype = QMX_FLOAT32; A.data = na_f; A.data_bytes = 4 * cA;
                memcpy(na_dq, na_f, 4 * cA);
            } else if (atype == 1) {
                A.dtype = QMX_FP6_E3M2; t_codes(A.dtype, na_el, cA);
                A.data = na_el; A.data_bytes = cA;
                na_s[0] = 0.5f; A.scales = na_s; A.scales_len = 1;
                for (i = 0; i < cA; i++) na_dq[i] = t_value(A.dtype, na_el, i);
                for (i = 0; i < M; i++) n_sa[i] = 0.5f;
                sa = n_sa;
            } else if (atype == 2) {
                acfg.format = QMX_MXFP8_E4M3; acfg.block_size = 16;
                A.dtype = QMX_FP8_E4M3FN; A.mx = &acfg; A.block_axis = cs->ra - 1;
                CHECK(t_mx(&acfg, na_f, M, K, 1, na_el, na_sc, na_dq, &eb, &ns), "A mx");
                A.data = na_el; A.data_bytes = eb; A.scale_codes = na_sc; A.scale_codes_len = ns;
            } else {
                size_t rows = cs->a[cs->ra - 2];
                A.dtype = QMX_NF4; t_codes(A.dtype, na_el, cA);
                A.data = na_el; A.data_bytes = t_bytes(A.dtype, cA);
                for (i = 0; i < rows; i++) na_s[i] = (float)(1u << (i % 3)) * 0.125f;
                A.scales = na_s; A.scales_len = rows; A.scaling = QMX_EINSUM_SCALE_CHANNEL;
                A.channel_axis = cs->ra - 2;
                for (i = 0; i < cA; i++) na_dq[i] = t_value(A.dtype, na_el, i);
                for (i = 0; i < M; i++) n_sa[i] = na_s[i % rows];
                sa = n_sa;
            }
            /* B */
            B.rank = 2;
            B.shape[0] = cs->kn ? K : N; B.shape[1] = cs->kn ? N : K;
            B.dtype = db;
            if (ty->mx) {
                bcfg.format = (qmx_mx_format)ty->format; bcfg.rule = (qmx_mx_rule)ty->rule;
                bcfg.block_size = ty->mbs; bcfg.tensor_scale = ty->ts;
                for (i = 0; i < cB; i++) nb_f[i] = t_frand(-3.0f, 3.0f) * (float)(1u << (i % 4));
                B.mx = &bcfg; B.block_axis = cs->kn ? 0 : 1;
                if (!t_mx(&bcfg, nb_f, cs->kn ? 1 : N, K, cs->kn ? N : 1, nb_el, nb_sc, nb_dq, &eb, &ns)) {
                    CHECK(0, "%s: quantize", ty->name);
                    continue;
                }
                B.data = nb_el; B.data_bytes = eb; B.scale_codes = nb_sc; B.scale_codes_len = ns;
                if (ty->rule == QMX_MX_FLOOR && ty->format != QMX_NVFP4) {
                    /* the scale layout by hand: element (o, k, i) of the view has code
                     * sc[(o * nblk + k / bs) * inner + i], value elem * 2^(code - 127) */
                    size_t bs = ty->mbs ? ty->mbs : 32, nbk = (K + bs - 1) / bs, o, k, in;
                    size_t outer = cs->kn ? 1 : N, inner = cs->kn ? N : 1;
                    if (bs > K) bs = K;
                    nbk = (K + bs - 1) / bs;
                    for (o = 0; o < outer; o++)
                        for (k = 0; k < K; k++)
                            for (in = 0; in < inner; in++) {
                                size_t e = (o * K + k) * inner + in;
                                float v = t_value(db, nb_el, e) *
                                          t_pow2((int)nb_sc[(o * nbk + k / bs) * inner + in] - 127);
                                if (qmx_test_f32_bits(v) != qmx_test_f32_bits(nb_dq[e]) && bad++ < 3)
                                    CHECK(0, "%s: element %u: %g by hand, %g by qmx_mx_dequantize",
                                          ty->name, (unsigned)e, v, nb_dq[e]);
                            }
                }
            } else {
                t_codes(db, nb_el, cB);
                B.data = nb_el; B.data_bytes = t_bytes(db, cB);
                for (i = 0; i < cB; i++) nb_dq[i] = t_value(db, nb_el, i);
                if (ty->scaling >= 0) {
                    size_t chans = ty->scaling & 1 ? N : 1, nsc = chans * nblk;
                    for (i = 0; i < nsc; i++) nb_s[i] = t_frand(0.01f, 2.0f);
                    B.scales = nb_s; B.scales_len = nsc; B.scaling = (qmx_einsum_scaling)ty->scaling;
                    B.channel_axis = cs->kn ? 1 : 0; B.block_axis = cs->kn ? 0 : 1;
                    B.block_size = ty->bs;
                    if (ty->bs) { /* baked: element * scales[c * nblk + k / bs], one rounding */
                        for (i = 0; i < cB; i++) {
                            size_t k = cs->kn ? i / N : i % K;
                            size_t c = ty->scaling & 1 ? (cs->kn ? i % N : i / K) : 0;
                            volatile float v = nb_dq[i] * nb_s[c * nblk + k / ty->bs];
                            nb_dq[i] = v;
                        }
                        if (!cs->kn && (db == QMX_NF4 || qmx_dtype_is_fp8(db))) {
                            /* the same bits as qmx_dequantize's per-block view [N][K][1]
                             * (per tensor broadcast: the scales repeated per row) */
                            qmx_qconfig qc;
                            static float qs[1024];
                            memset(&qc, 0, sizeof qc);
                            qc.dtype = db; qc.granularity = QMX_PER_BLOCK; qc.block_size = ty->bs;
                            qc.outer = N; qc.axis_len = K; qc.inner = 1;
                            for (i = 0; i < N * nblk; i++) qs[i] = nb_s[ty->scaling & 1 ? i : i % nblk];
                            st = qmx_dequantize(&qc, nb_el, B.data_bytes, cB, qs, N * nblk, NULL, n_ref);
                            CHECK(st == QMX_OK && !memcmp(n_ref, nb_dq, 4 * cB),
                                  "%s: the model differs from qmx_dequantize (%d)", ty->name, (int)st);
                        }
                    } else {
                        for (i = 0; i < N; i++) n_sb[i] = nb_s[ty->scaling == 1 ? i : 0];
                        sb = n_sb;
                    }
                }
            }
            ref_float(M, N, K, na_dq, nb_dq, cs->kn, sa, sb, n_ref);
            st = qmx_einsum_workspace_size(cs->spec, &A, &B, NULL, &ws, &pos);
            CHECK(st == QMX_OK && ws <= sizeof wsbuf, "%s x %s (%s): query %d", qmx_dtype_name(A.dtype),
                  ty->name, cs->spec, (int)st);
            if (st != QMX_OK || ws > sizeof wsbuf) continue;
            for (n = 0; n < M * N + 1; n++) n_got[n] = -7.0f;
            if (ws > 0)
                CHECK(qmx_einsum(cs->spec, &A, &B, NULL, n_got, M * N, wsbuf + 3, ws - 1, &pos) ==
                          QMX_ERR_BUFFER_TOO_SMALL && n_got[0] == -7.0f, "%s: a short workspace", ty->name);
            st = qmx_einsum(cs->spec, &A, &B, NULL, n_got, M * N, wsbuf + 3, ws, &pos);
            CHECK(st == QMX_OK && n_got[M * N] == -7.0f, "%s x %s (%s): st %d", qmx_dtype_name(A.dtype),
                  ty->name, cs->spec, (int)st);
            for (n = 0; n < M * N; n++)
                if (qmx_test_f32_bits(n_got[n]) != qmx_test_f32_bits(n_ref[n]) && bad++ < 3)
                    CHECK(0, "%s x %s (%s): out[%u] = %.9g (0x%08lx), model %.9g (0x%08lx)",
                          qmx_dtype_name(A.dtype), ty->name, cs->spec, (unsigned)n, n_got[n],
                          (unsigned long)qmx_test_f32_bits(n_got[n]), n_ref[n],
                          (unsigned long)qmx_test_f32_bits(n_ref[n]));
            CHECK(bad == 0, "%s x %s (%s): %d mismatches", qmx_dtype_name(A.dtype), ty->name, cs->spec, bad);
            hash_words(n_got, M * N);
            runs++;
        }
    CHECK(runs == (int)(n_cases * n_types), "ran %d of %u", runs, (unsigned)(n_cases * n_types));
    printf("new operand types: %d float runs, output bits hash 0x%08lx\n", runs, (unsigned long)fnv);
    CHECK(NEW_TYPES_BITS_HASH == 0 || fnv == NEW_TYPES_BITS_HASH,
          "new-type output bits differ from the x86-64 recording: 0x%08lx", (unsigned long)fnv);
}

/* int2 / uint2 (packed four per byte), int3..int7 (one per byte): unpacked exactly to int8,
 * then the int paths; the int32 outputs exact, the float outputs exact (power-of-two scales,
 * small sums) against int64 / double models. */
static void test_new_int_operands(void) {
    static int64_t iref[4096];
    static int32_t got32[4096];
    size_t i, n, ws = 0, ws8 = 0;
    int pos, bad;
    qmx_einsum_operand A, B;
    qmx_einsum_opts o32;
    qmx_status st;
    QMX_TEST_CASE("int2 / uint2 / int3..int7 operands: unpacked exactly, the int paths");
    fnv = 2166136261u; /* a hash of its own (the golden one is checked) */
    qmx_test_seed(0x51ED270Bu); /* data of its own: the sweeps before shrink on small targets */
    memset(&o32, 0, sizeof o32);
    o32.int32_out = 1;
    {   /* "mk,nk->mn" int2 [5][13] (zp -1) x int8 [7][13] (zp 3) -> int32; rows not on a byte */
        size_t M = 5, N = 7, K = 13;
        memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
        for (i = 0; i < 64; i++) { na_el[i] = (uint8_t)qmx_test_rand(); nb_el[i] = (uint8_t)qmx_test_rand(); }
        for (i = 0; i < N * K; i++) nb_el[i] = (uint8_t)qmx_test_rand();
        A.dtype = QMX_INT2; A.rank = 2; A.shape[0] = M; A.shape[1] = K; A.data = na_el;
        A.data_bytes = (M * K + 3) / 4; A.zero_point = -1;
        B.dtype = QMX_INT8; B.rank = 2; B.shape[0] = N; B.shape[1] = K; B.data = nb_el;
        B.data_bytes = N * K; B.zero_point = 3;
        ref_int(M, N, K, QMX_INT2, na_el, -1, QMX_INT8, nb_el, 3, 0, iref);
        st = qmx_einsum("mk,nk->mn", &A, &B, &o32, got32, M * N, wsbuf, sizeof wsbuf, &pos);
        for (bad = 0, n = 0; n < M * N; n++) bad += got32[n] != iref[n];
        CHECK(st == QMX_OK && bad == 0, "int2 x int8 -> int32: st %d, %d mismatches", (int)st, bad);
        /* the unused high bits of the last byte are ignored (65 = 16 * 4 + 1: six bits) */
        na_el[A.data_bytes - 1] |= 0xFC;
        st = qmx_einsum("mk,nk->mn", &A, &B, &o32, n_got, M * N, wsbuf, sizeof wsbuf, &pos);
        CHECK(st == QMX_OK && !memcmp(n_got, got32, 4 * M * N), "int2: padding bits read");
        /* int2 unpacks into the workspace: count bytes more than int8 */
        A.dtype = QMX_INT8; A.zero_point = 0;
        CHECK(qmx_einsum_workspace_size("mk,nk->mn", &A, &B, &o32, &ws8, &pos) == QMX_OK, "int8 query");
        A.dtype = QMX_INT2;
        CHECK(qmx_einsum_workspace_size("mk,nk->mn", &A, &B, &o32, &ws, &pos) == QMX_OK &&
              ws == ws8 + r64(M * K), "int2 A: + r64(65) bytes: %u vs %u", (unsigned)ws, (unsigned)ws8);
        A.dtype = QMX_INT3; A.data_bytes = M * K;
        CHECK(qmx_einsum_workspace_size("mk,nk->mn", &A, &B, &o32, &ws, &pos) == QMX_OK && ws == ws8,
              "int3 A is read in place: %u vs %u", (unsigned)ws, (unsigned)ws8);
        A.dtype = QMX_UINT2; A.data_bytes = (M * K + 3) / 4;
        ref_int(M, N, K, QMX_UINT2, na_el, 0, QMX_INT8, nb_el, 3, 0, iref);
        st = qmx_einsum("mk,nk->mn", &A, &B, &o32, got32, M * N, wsbuf, sizeof wsbuf, &pos);
        for (bad = 0, n = 0; n < M * N; n++) bad += got32[n] != iref[n];
        CHECK(st == QMX_OK && bad == 0, "uint2 x int8 -> int32: st %d, %d mismatches", (int)st, bad);
    }
    {   /* "bsd,fd->bsf": int5 [2][3][19] (zp 7, per-token scales) x uint2 [11][19] (channel-blocks
         * of 5, ragged 19 = 3 * 5 + 4) -> float; power-of-two scales: every float step exact */
        size_t S = 3, M = 6, N = 11, K = 19, nblk = 4, m, k, b;
        memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
        for (i = 0; i < M * K; i++) na_el[i] = (uint8_t)(int8_t)((int)(qmx_test_rand() % 32) - 16);
        for (i = 0; i < (N * K + 3) / 4; i++) nb_el[i] = (uint8_t)qmx_test_rand();
        for (i = 0; i < S; i++) na_s[i] = t_pow2((int)(qmx_test_rand() % 5) - 2);
        for (i = 0; i < N * nblk; i++) nb_s[i] = t_pow2((int)(qmx_test_rand() % 5) - 3);
        A.dtype = QMX_INT5; A.rank = 3; A.shape[0] = 2; A.shape[1] = S; A.shape[2] = K;
        A.data = na_el; A.data_bytes = M * K; A.zero_point = 7;
        A.scales = na_s; A.scales_len = S; A.scaling = QMX_EINSUM_SCALE_CHANNEL; A.channel_axis = 1;
        B.dtype = QMX_UINT2; B.rank = 2; B.shape[0] = N; B.shape[1] = K; B.data = nb_el;
        B.data_bytes = (N * K + 3) / 4; B.scales = nb_s; B.scales_len = N * nblk;
        B.scaling = QMX_EINSUM_SCALE_CHANNEL_BLOCK; B.channel_axis = 0; B.block_axis = 1; B.block_size = 5;
        for (m = 0; m < M; m++)
            for (n = 0; n < N; n++) {
                double s = 0.0;
                for (b = 0; b < nblk; b++) {
                    int64_t p = 0;
                    for (k = 5 * b; k < K && k < 5 * b + 5; k++)
                        p += (int64_t)(t_int(QMX_INT5, na_el, m * K + k) - 7) *
                             t_int(QMX_UINT2, nb_el, n * K + k);
                    s += (double)p * na_s[m % S] * nb_s[n * nblk + b];
                }
                n_ref[m * N + n] = (float)s;
            }
        st = qmx_einsum("bsd,fd->bsf", &A, &B, NULL, n_got, M * N, wsbuf, sizeof wsbuf, &pos);
        for (bad = 0, n = 0; n < M * N; n++) bad += (double)n_got[n] != (double)n_ref[n];
        CHECK(st == QMX_OK && bad == 0, "int5 x uint2 channel-blocks -> float: st %d, %d mismatches",
              (int)st, bad);
        hash_words(n_got, M * N);
    }
    {   /* "bsd,df->bsf": int7 [2][2][23] (zp -60) x int6 [23][9] (zp 31, [K,N] in place) -> int32 */
        size_t M = 4, N = 9, K = 23;
        memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
        for (i = 0; i < M * K; i++) na_el[i] = (uint8_t)(int8_t)((int)(qmx_test_rand() % 128) - 64);
        for (i = 0; i < K * N; i++) nb_el[i] = (uint8_t)(int8_t)((int)(qmx_test_rand() % 64) - 32);
        A.dtype = QMX_INT7; A.rank = 3; A.shape[0] = 2; A.shape[1] = 2; A.shape[2] = K;
        A.data = na_el; A.data_bytes = M * K; A.zero_point = -60;
        B.dtype = QMX_INT6; B.rank = 2; B.shape[0] = K; B.shape[1] = N; B.data = nb_el;
        B.data_bytes = K * N; B.zero_point = 31;
        ref_int(M, N, K, QMX_INT7, na_el, -60, QMX_INT6, nb_el, 31, 1, iref);
        st = qmx_einsum("bsd,df->bsf", &A, &B, &o32, got32, M * N, wsbuf, sizeof wsbuf, &pos);
        for (bad = 0, n = 0; n < M * N; n++) bad += got32[n] != iref[n];
        CHECK(st == QMX_OK && bad == 0, "int7 x int6 [K,N] -> int32: st %d, %d mismatches", (int)st, bad);
        /* int3 bytes are int8 bytes: the same bits as an int8 operand (values in range) */
        for (i = 0; i < M * K; i++) na_el[i] = (uint8_t)(int8_t)((int)(qmx_test_rand() % 8) - 4);
        A.dtype = QMX_INT3; A.zero_point = 3;
        B.scales = nb_s; B.scales_len = N; B.scaling = QMX_EINSUM_SCALE_CHANNEL; B.channel_axis = 1;
        B.zero_point = 0;
        for (i = 0; i < N; i++) nb_s[i] = t_frand(0.01f, 1.0f);
        st = qmx_einsum("bsd,df->bsf", &A, &B, NULL, n_got, M * N, wsbuf, sizeof wsbuf, &pos);
        A.dtype = QMX_INT8; B.dtype = QMX_INT8;
        CHECK(st == QMX_OK && qmx_einsum("bsd,df->bsf", &A, &B, NULL, n_ref, M * N, wsbuf,
                                         sizeof wsbuf, &pos) == QMX_OK &&
              !memcmp(n_got, n_ref, 4 * M * N), "int3 x int6 -> float: the bits of int8 x int8");
    }
}

/* Errors of the new operand types: status, the output and the workspace untouched. */
static void test_new_errors(void) {
    static unsigned char wsave[16384];
    qmx_einsum_operand A, B, C;
    qmx_mx_config cfg, bad_cfg;
    qmx_einsum_opts o32;
    size_t M = 3, N = 4, K = 40, eb = 0, ns = 0, ws = 0, i;
    float out[16];
    int pos, j;
    qmx_status st;
    QMX_TEST_CASE("errors of the new operand types: status, output and workspace untouched");
    memset(&o32, 0, sizeof o32);
    o32.int32_out = 1;
#define NEXPECT(a, b, opts, want, what)                                                       \
    do {                                                                                      \
        size_t qws = 99;                                                                      \
        for (j = 0; j < 16; j++) out[j] = 42.0f;                                              \
        memset(wsbuf, 0x5A, sizeof wsave);                                                    \
        memcpy(wsave, wsbuf, sizeof wsave);                                                   \
        st = qmx_einsum("mk,nk->mn", (a), (b), (opts), out, 16, wsbuf, sizeof wsave, &pos);   \
        CHECK(st == (want), "%s: got %d (%s) want %d", what, (int)st, qmx_status_str(st), (int)(want)); \
        for (j = 0; j < 16; j++) CHECK(out[j] == 42.0f, "%s: output written", what);         \
        CHECK(!memcmp(wsave, wsbuf, sizeof wsave), "%s: workspace written", what);           \
        (void)qws;                                                                            \
    } while (0)
    /* A float32 [3][40], B MXFP4 [4][40] blocks of 32 along k (ragged 40 = 32 + 8) */
    for (i = 0; i < M * K; i++) na_f[i] = t_frand(-1.0f, 1.0f);
    for (i = 0; i < N * K; i++) nb_f[i] = t_frand(-4.0f, 4.0f);
    memset(&cfg, 0, sizeof cfg);
    cfg.format = QMX_MXFP4;
    CHECK(t_mx(&cfg, nb_f, N, K, 1, nb_el, nb_sc, nb_dq, &eb, &ns) && ns == 8 && eb == 80, "mxfp4 B");
    memset(&A, 0, sizeof A); memset(&B, 0, sizeof B);
    A.rank = 2; A.shape[0] = M; A.shape[1] = K; A.data = na_f; A.data_bytes = 4 * M * K;
    B.dtype = QMX_FP4_E2M1; B.rank = 2; B.shape[0] = N; B.shape[1] = K; B.mx = &cfg;
    B.block_axis = 1; B.data = nb_el; B.data_bytes = eb; B.scale_codes = nb_sc; B.scale_codes_len = ns;
    CHECK(qmx_einsum("mk,nk->mn", &A, &B, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
          "mx baseline");
    CHECK(qmx_einsum_workspace_size("mk,nk->mn", &A, &B, NULL, &ws, &pos) == QMX_OK &&
              ws == 64 + r64(4 * N * K), "M < 4, [N,K] B: only the dequantized copy, got %u", (unsigned)ws);
    {   /* pure: no data, no codes needed to plan */
        size_t ws2 = 0;
        C = B; C.data = NULL; C.scale_codes = NULL; C.scale_codes_len = 0; C.data_bytes = 0;
        CHECK(qmx_einsum_workspace_size("mk,nk->mn", &A, &C, NULL, &ws2, &pos) == QMX_OK && ws2 == ws,
              "the mx plan does not read data or scale codes");
    }
    C = B; C.block_axis = 0; NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "mx block axis on the free n");
    CHECK(qmx_einsum_workspace_size("mk,nk->mn", &A, &C, NULL, &ws, &pos) == QMX_ERR_ARG,
          "the query too: mx block axis not contracted");
    C = B; C.block_axis = 2; NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "mx block axis out of range");
    C = B; C.scale_codes_len = ns - 1; NEXPECT(&A, &C, NULL, QMX_ERR_BUFFER_TOO_SMALL, "scale_codes short");
    C = B; C.data_bytes = eb - 1; NEXPECT(&A, &C, NULL, QMX_ERR_BUFFER_TOO_SMALL, "mx data_bytes short");
    C = B; C.scale_codes = NULL; NEXPECT(&A, &C, NULL, QMX_ERR_NULL, "mx scale_codes NULL");
    C = B; C.dtype = QMX_FP8_E4M3FN; NEXPECT(&A, &C, NULL, QMX_ERR_DTYPE, "MXFP4 declared as e4m3");
    C = B; C.dtype = QMX_FLOAT32; NEXPECT(&A, &C, NULL, QMX_ERR_DTYPE, "MXFP4 declared as float32");
    C = B; C.scales = nb_s; C.scales_len = 1; nb_s[0] = 1.0f;
    NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "float scales on an mx operand");
    C = B; C.block_size = 16; NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "block_size 16 against the config's 32");
    C = B; C.block_size = 32;
    CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
          "block_size 32 is the config's");
    C = B; NEXPECT(&A, &C, &o32, QMX_ERR_ARG, "int32 output of an mx operand");
    C = A; C.scale_codes = nb_sc; NEXPECT(&C, &B, NULL, QMX_ERR_ARG, "scale_codes without mx");
    bad_cfg = cfg; C = B; C.mx = &bad_cfg;
    bad_cfg.outer = N; bad_cfg.axis_len = K; bad_cfg.inner = 1;
    CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
          "an mx view equal to the operand's");
    bad_cfg.outer = 1; bad_cfg.axis_len = N * K;
    NEXPECT(&A, &C, NULL, QMX_ERR_SHAPE, "an mx view of another shape");
    bad_cfg = cfg; bad_cfg.format = QMX_MXINT8; C.dtype = QMX_INT8;
    NEXPECT(&A, &C, NULL, QMX_ERR_UNSUPPORTED, "MXINT8 with FLOOR (qmx_mx_storage's error)");
    bad_cfg.format = (qmx_mx_format)99; NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "unknown mx format");
    bad_cfg = cfg; bad_cfg.tensor_scale = 2.0f; C.dtype = QMX_FP4_E2M1;
    NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "tensor_scale on MXFP4");
    {   /* MX x int8: the classes differ */
        memset(&C, 0, sizeof C);
        C.dtype = QMX_INT8; C.rank = 2; C.shape[0] = M; C.shape[1] = K; C.data = ia; C.data_bytes = M * K;
        NEXPECT(&C, &B, NULL, QMX_ERR_UNSUPPORTED, "int8 x MXFP4");
        C = B; C.zero_point = 1;
        NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "zero point on an mx operand");
    }
    /* non-finite dequantized elements, found without writing anything */
    C = B; memcpy(nb_sc + 64, nb_sc, ns); C.scale_codes = nb_sc + 64;
    nb_sc[64 + 5] = 0xFF; NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "E8M0 NaN scale code");
    {   /* ggml's MXFP4: code 0xFF is 2^127, finite times 1 (K = 1, fp4 code 1), Inf times 2 */
        bad_cfg = cfg; bad_cfg.rule = QMX_MX_GGML; C.mx = &bad_cfg;
        memset(nb_el + 256, 0x11, eb); C.data = nb_el + 256;
        for (i = 0; i < ns; i++) nb_sc[64 + i] = 0x7F;
        nb_sc[64 + 2] = 0xFF;
        CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
              "ggml 2^127 * 1 is finite");
        nb_el[256 + 27] = 0x21; /* element 55 (high nibble): row 1, block 0 (code 0xFF): fp4 2 */
        NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "ggml 2^127 * 2 overflows");
    }
    {   /* MXFP8 E5M2: 57344 * 2^127 overflows; E4M3 NaN elements */
        memset(&bad_cfg, 0, sizeof bad_cfg); bad_cfg.format = QMX_MXFP8_E5M2;
        C = B; C.dtype = QMX_FP8_E5M2; C.mx = &bad_cfg; C.data = nb_el + 256; C.data_bytes = N * K;
        C.scale_codes = nb_sc + 64;
        memset(nb_el + 256, 0x3C, N * K);      /* 1.0 */
        for (i = 0; i < ns; i++) nb_sc[64 + i] = 0xFE;
        CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
              "e5m2 1.0 * 2^127 is finite");
        nb_el[256 + 3 * K + 39] = 0x7B;          /* 57344, in the ragged last block */
        NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "e5m2 57344 * 2^127 overflows");
        nb_el[256 + 3 * K + 39] = 0x7C;          /* Inf */
        for (i = 0; i < ns; i++) nb_sc[64 + i] = 0x7F;
        NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "e5m2 Inf element");
        bad_cfg.format = QMX_MXFP8_E4M3; C.dtype = QMX_FP8_E4M3FN; nb_el[256 + 3 * K + 39] = 0x38;
        CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
              "e4m3 finite");
        nb_el[256 + 17] = 0xFF;
        NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "e4m3 NaN element");
        bad_cfg.rule = QMX_MX_QWIX; nb_el[256 + 17] = 0x00; nb_sc[64 + 7] = 0xFF;
        NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "Qwix 0xFF scale (Inf, 0 * Inf in its block)");
    }
    /* float-decoded operands */
    memset(&C, 0, sizeof C);
    C.dtype = QMX_NF4; C.rank = 2; C.shape[0] = N; C.shape[1] = K; C.data = nb_el; C.data_bytes = N * K / 2;
    CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK, "nf4 baseline");
    C.data_bytes = N * K / 2 - 1; NEXPECT(&A, &C, NULL, QMX_ERR_BUFFER_TOO_SMALL, "nf4 data_bytes short");
    C.data_bytes = N * K / 2;
    C.zero_point = 7; NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "nf4 zero point"); C.zero_point = 0;
    NEXPECT(&A, &C, &o32, QMX_ERR_ARG, "nf4 int32 output");
    C.scales = nb_s; C.scales_len = 2; C.scaling = QMX_EINSUM_SCALE_BLOCK; C.block_axis = 0;
    C.block_size = 2; nb_s[0] = nb_s[1] = 1.0f;
    NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "nf4 blocks along the free n");
    C.block_axis = 1; C.block_size = 0; NEXPECT(&A, &C, NULL, QMX_ERR_SIZE, "nf4 block size 0");
    C.block_size = 32;
    CHECK(qmx_einsum("mk,nk->mn", &A, &C, NULL, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK, "nf4 blocks");
    C.scales_len = 1; NEXPECT(&A, &C, NULL, QMX_ERR_BUFFER_TOO_SMALL, "nf4 one scale for two blocks");
    C.scales_len = 2; nb_s[1] = 0.0f; NEXPECT(&A, &C, NULL, QMX_ERR_ARG, "nf4 block scale 0");
    C.dtype = QMX_FP6_E3M2; C.data_bytes = N * K; memset(nb_el, 0x1F, N * K); /* 28 */
    nb_s[1] = 1e38f; NEXPECT(&A, &C, NULL, QMX_ERR_NONFINITE, "fp6 e3m2 28 * 1e38 overflows");
    C.dtype = QMX_E8M0; NEXPECT(&A, &C, NULL, QMX_ERR_DTYPE, "an e8m0 operand");
    C.dtype = QMX_UINT16; NEXPECT(&A, &C, NULL, QMX_ERR_DTYPE, "a uint16 operand");
    /* int zero points: the dtype's own range */
    memset(&C, 0, sizeof C); memset(&B, 0, sizeof B);
    C.rank = 2; C.shape[0] = M; C.shape[1] = K; C.data = na_el; C.data_bytes = M * K;
    B.dtype = QMX_INT8; B.rank = 2; B.shape[0] = N; B.shape[1] = K; B.data = nb_el; B.data_bytes = N * K;
    memset(na_el, 0, M * K);
    {
        static const struct { int d, lo, hi; } zr[] = {
            {QMX_INT3, -4, 3}, {QMX_INT5, -16, 15}, {QMX_INT6, -32, 31}, {QMX_INT7, -64, 63},
            {QMX_INT2, -2, 1}, {QMX_UINT2, 0, 3}, {QMX_INT4, -8, 7}, {QMX_UINT4, 0, 15},
            {QMX_INT8, -128, 127}};
        size_t z;
        for (z = 0; z < sizeof zr / sizeof zr[0]; z++) {
            char what[64];
            C.dtype = (qmx_dtype)zr[z].d;
            C.zero_point = zr[z].lo;
            CHECK(qmx_einsum("mk,nk->mn", &C, &B, &o32, out, 16, wsbuf, sizeof wsbuf, &pos) == QMX_OK &&
                      (C.zero_point = zr[z].hi,
                       qmx_einsum("mk,nk->mn", &C, &B, NULL, out, 16, wsbuf, sizeof wsbuf, &pos)) == QMX_OK,
                  "%s zero points %d, %d", qmx_dtype_name(C.dtype), zr[z].lo, zr[z].hi);
            sprintf(what, "%s zero point %d", qmx_dtype_name(C.dtype), zr[z].hi + 1);
            C.zero_point = zr[z].hi + 1; NEXPECT(&C, &B, &o32, QMX_ERR_ARG, what);
            sprintf(what, "%s zero point %d", qmx_dtype_name(C.dtype), zr[z].lo - 1);
            C.zero_point = zr[z].lo - 1; NEXPECT(&C, &B, NULL, QMX_ERR_ARG, what);
        }
    }
    C.dtype = QMX_INT2; C.zero_point = 0; C.data_bytes = (M * K + 3) / 4 - 1;
    NEXPECT(&C, &B, &o32, QMX_ERR_BUFFER_TOO_SMALL, "int2 data_bytes short");
    C.data_bytes = (M * K + 3) / 4;
    NEXPECT(&C, &A, NULL, QMX_ERR_UNSUPPORTED, "int2 x float32");
    C.dtype = QMX_INT3; C.data_bytes = M * K - 1;
    NEXPECT(&C, &B, &o32, QMX_ERR_BUFFER_TOO_SMALL, "int3 data_bytes short");
#undef NEXPECT
}

/* ---- block-weight blob operands (qmx_einsum_operand.blockw_blob; issue 16) ----
 * ggml blocks written here (Q8_0, Q4_0, MXFP4: random codes and scales), packed by
 * qmx_blockw_pack_ggml; the weights' values by ggml's own definition (bw_wd, exact floats).
 * Specifications: each spec's output is, bit for bit, the direct kernel call
 * (qmx_matmul_blockw_packed_f32 / _dyn_i8 on X = the activations as [M][K]) permuted to the
 * output's order, for float32, int8 per row and int8 per block of 32 activations; the same
 * bits from 1 and 3 range calls, a partial range (its tasks' tiles only) and a 3-worker
 * executor; within the float bound of a float64 reference on bw_wd, and (float32 kernel)
 * exactly the float path's bits on bw_wd as a float32 operand; every bad input a status
 * with the output and the workspace untouched. M = 130, N = 264: 3 x 2 kernel tasks. */
enum { BW_B = 2, BW_S = 65, BW_M = BW_B * BW_S, BW_K = 64, BW_N = 264 };
static float bw_x[BW_M * BW_K], bw_xt[BW_M * BW_K], bw_wd[BW_N * BW_K];
static float bw_y[BW_M * BW_N], bw_want[BW_M * BW_N], bw_o[BW_M * BW_N];
static uint8_t bw_blocks[BW_N * (BW_K / 32) * 34], bw_blob[32768], bw_bad[32768];
static unsigned char bw_kws[16384];

static double bw_pow2(int e) {
    double v = 1.0;
    for (; e > 0; e--) v *= 2.0;
    for (; e < 0; e++) v *= 0.5;
    return v;
}
static double bw_abs(double v) { return v < 0.0 ? -v : v; }
/* ggml block type -> blocks in bw_blocks and the weights in bw_wd; the block's bytes */
static size_t bw_make(int type) {
    static const int kv[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    size_t n, b, j, nbk = BW_K / 32,
           bb = type == QMX_BLOCKW_GGML_Q8_0 ? 34u : type == QMX_BLOCKW_GGML_Q4_0 ? 18u : 17u;
    for (n = 0; n < BW_N; n++)
        for (b = 0; b < nbk; b++) {
            uint8_t *p = bw_blocks + (n * nbk + b) * bb;
            float *w = bw_wd + n * BW_K + 32 * b;
            double d;
            if (type == QMX_BLOCKW_GGML_MXFP4) { /* E8M0 e, value kv[code] * 2^(e - 128) */
                p[0] = (uint8_t)(120u + qmx_test_rand() % 12u);
                d = bw_pow2((int)p[0] - 128);
                for (j = 0; j < 16; j++) {
                    p[1 + j] = (uint8_t)qmx_test_rand();
                    w[j] = (float)(kv[p[1 + j] & 15] * d);
                    w[j + 16] = (float)(kv[p[1 + j] >> 4] * d);
                }
                continue;
            }
            {   /* binary16 d, a positive normal in [2^-5, 2^0) */
                unsigned h = (10u + qmx_test_rand() % 5u) << 10 | (qmx_test_rand() & 1023u);
                p[0] = (uint8_t)(h & 0xFFu); p[1] = (uint8_t)(h >> 8);
                d = (double)(1024u + (h & 1023u)) * bw_pow2((int)(h >> 10) - 25);
            }
            for (j = 0; j < 32; j++) {
                if (type == QMX_BLOCKW_GGML_Q8_0) { /* d * qs[j] */
                    p[2 + j] = (uint8_t)qmx_test_rand();
                    w[j] = (float)((p[2 + j] >= 128 ? (int)p[2 + j] - 256 : (int)p[2 + j]) * d);
                } else if (j < 16) { /* d * (nibble - 8): j low, j + 16 high */
                    p[2 + j] = (uint8_t)qmx_test_rand();
                    w[j] = (float)(((int)(p[2 + j] & 15) - 8) * d);
                    w[j + 16] = (float)(((int)(p[2 + j] >> 4) - 8) * d);
                }
            }
        }
    return bb;
}

/* Every Y[m][n] (X [M][K]) within the bound of the kernel's arithmetic around the float64
 * sum of X * bw_wd: (2K + 4) 2^-24 sum |x w| for the float sums, and with int8 activations
 * (ab: the activation block; 0 float32) the quantization, |q sx - x| <= sx / 2 per element
 * (sx = the block's absmax / 127), plus its own float rounding. */
static int bw_ref_ok(const float *X, const float *Y, size_t ab, double *worst) {
    size_t m, n, k, k0;
    int ok = 1;
    for (m = 0; m < BW_M; m++) {
        double sx[BW_K];
        for (k0 = 0; ab && k0 < BW_K; k0 += ab) {
            double am = 0.0;
            for (k = k0; k < k0 + ab && k < BW_K; k++)
                if (bw_abs(X[m * BW_K + k]) > am) am = bw_abs(X[m * BW_K + k]);
            for (k = k0; k < k0 + ab && k < BW_K; k++) sx[k] = am / 127.0;
        }
        for (n = 0; n < BW_N; n++) {
            double ref = 0.0, ab_s = 0.0, qe = 0.0, tol, err;
            for (k = 0; k < BW_K; k++) {
                double x = X[m * BW_K + k], w = bw_wd[n * BW_K + k];
                ref += x * w;
                ab_s += bw_abs(x * w);
                if (ab) qe += bw_abs(w) * sx[k] * 0.5;
            }
            tol = (2.0 * BW_K + 4.0) * bw_pow2(-24) * (ab_s + qe) + 1.01 * qe;
            err = bw_abs((double)Y[m * BW_N + n] - ref);
            if (err > tol) ok = 0;
            if (tol > 0.0 && err / tol > *worst) *worst = err / tol;
        }
    }
    return ok;
}

static int bw_workers = 3, bw_calls;
static void bw_for(void *pool, int n, void (*fn)(void *, int, int), void *arg) {
    int t;
    (void)pool;
    bw_calls++;
    for (t = n - 1; t >= 0; t--) fn(arg, t, t % bw_workers); /* reverse order */
}

typedef struct bw_spec {
    const char *spec;
    int blob_first;   /* the blob is operand a */
    int xt;           /* the activations as [b][d][s] (bw_xt), else [b][s][d] (bw_x) */
    int out;          /* output order: 0 (m, n), 1 (n, b, s), 2 (n, s, b) */
} bw_spec;
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(QMX_TEST_VALGRIND)
#  define BW_ALL 1
#else
#  define BW_ALL 0
#endif
static const bw_spec bw_specs[] = {
    {"bsd,fd->bsf", 0, 0, 0}, /* the linear layer: in place, no copy */
    {"bsd,fd->fbs", 0, 0, 1}, /* transposed output: the [M,N] tile, scattered */
    {"bds,fd->bsf", 0, 1, 0}, /* transposed activations: A packed */
    {"fd,bsd->bsf", 1, 0, 0}, /* the blob as operand a */
    {"fd,bds->fsb", 1, 1, 2}, /* both copies, blob first */
};
/* out position of Y[m][n] */
static size_t bw_pos(int order, size_t m, size_t n) {
    size_t b = m / BW_S, s = m % BW_S;
    if (order == 0) return m * BW_N + n;
    if (order == 1) return n * BW_M + m;
    return (n * BW_S + s) * BW_B + b;
}
static void bw_ops(const bw_spec *sp, qmx_einsum_operand *X, qmx_einsum_operand *W,
                   const void *blob, size_t bytes) {
    memset(X, 0, sizeof *X); memset(W, 0, sizeof *W);
    X->rank = 3; X->shape[0] = BW_B;
    X->shape[1] = sp->xt ? BW_K : BW_S; X->shape[2] = sp->xt ? BW_S : BW_K;
    X->data = sp->xt ? bw_xt : bw_x; X->data_bytes = sizeof bw_x;
    W->rank = 2; W->shape[0] = BW_N; W->shape[1] = BW_K;
    W->blockw_blob = blob; W->blockw_blob_bytes = bytes;
}
static qmx_status bw_einsum(const bw_spec *sp, const qmx_einsum_operand *X,
                            const qmx_einsum_operand *W, const qmx_einsum_opts *o, float *out,
                            size_t ws, int ranged, size_t tb, size_t te) {
    int pos;
    const qmx_einsum_operand *a = sp->blob_first ? W : X, *b = sp->blob_first ? X : W;
    if (ranged)
        return qmx_einsum_run(sp->spec, a, b, o, out, BW_M * BW_N, wsbuf, ws, tb, te, &pos);
    return qmx_einsum(sp->spec, a, b, o, out, BW_M * BW_N, wsbuf, ws, &pos);
}

static void test_blockw_blob(void) {
    static const int types[3] = {QMX_BLOCKW_GGML_Q8_0, QMX_BLOCKW_GGML_Q4_0,
                                 QMX_BLOCKW_GGML_MXFP4};
    static const char *tn[3] = {"Q8_0", "Q4_0", "MXFP4"};
    static const char *kn[3] = {"f32", "dyn_i8 per row", "dyn_i8 per 32"};
    qmx_einsum_operand X, W;
    qmx_executor ex;
    size_t i, m, n, bytes = 0, nt = 0, kws = 0, ws0 = 0, wsx = 0, tw = 0, b, s, d;
    int t, km, si, pos;
    qmx_status st;
    QMX_TEST_CASE("block-weight blob operands: the kernel's bits, ranges, executor, reference");
    for (i = 0; i < BW_M * BW_K; i++)
        bw_x[i] = (float)((int)(qmx_test_rand() % 2001u) - 1000) * 0.00137f;
    for (b = 0; b < BW_B; b++)
        for (s = 0; s < BW_S; s++)
            for (d = 0; d < BW_K; d++)
                bw_xt[(b * BW_K + d) * BW_S + s] = bw_x[(b * BW_S + s) * BW_K + d];
    ex.parallel_for = bw_for; ex.pool = NULL; ex.workers = bw_workers;
    for (t = 0; t < 3; t++) {
        size_t bb = bw_make(types[t]);
        CHECK(qmx_blockw_pack_ggml_size(types[t], BW_N, BW_K, &bytes) == QMX_OK &&
                  bytes <= sizeof bw_blob &&
                  qmx_blockw_pack_ggml(types[t], bw_blocks, BW_N * (BW_K / 32) * bb, BW_N, BW_K,
                                       bw_blob, bytes) == QMX_OK,
              "%s: pack", tn[t]);
        for (km = 0; km < 3; km++) {
            qmx_einsum_opts o = QMX_ZERO_INIT, ox;
            qmx_blockw_dyn_opts dyo = QMX_ZERO_INIT;
            double worst = 0.0;
            o.blockw_act = km ? QMX_EINSUM_BLOCKW_DYN_I8 : QMX_EINSUM_BLOCKW_F32;
            o.blockw_act_block = dyo.act_block = km == 2 ? 32 : 0;
            ox = o; ox.executor = &ex;
            st = km ? qmx_matmul_blockw_packed_dyn_i8(BW_M, BW_N, BW_K, bw_x, BW_K, bw_blob, bytes,
                                                      &dyo, bw_y, BW_N, bw_kws, sizeof bw_kws)
                    : qmx_matmul_blockw_packed_f32(BW_M, BW_N, BW_K, bw_x, BW_K, bw_blob, bytes,
                                                   bw_y, BW_N, bw_kws, sizeof bw_kws);
            CHECK(st == QMX_OK, "%s %s: the direct kernel %d", tn[t], kn[km], (int)st);
            CHECK(bw_ref_ok(bw_x, bw_y, km == 0 ? 0 : km == 1 ? BW_K : 32, &worst),
                  "%s %s: outside the float64 reference's bound (worst %.3g of it)", tn[t],
                  kn[km], worst);
            st = km ? qmx_matmul_blockw_packed_dyn_i8_workspace_size(BW_M, BW_N, BW_K, &dyo, &kws)
                    : qmx_matmul_blockw_packed_f32_workspace_size(BW_M, BW_N, BW_K, &kws);
            if (st == QMX_OK) /* and of one 64 x 256 task tile (an executor's worker) */
                st = km ? qmx_matmul_blockw_packed_dyn_i8_workspace_size(64, 256, BW_K, &dyo, &tw)
                        : qmx_matmul_blockw_packed_f32_workspace_size(64, 256, BW_K, &tw);
            CHECK(st == QMX_OK, "kernel workspace sizes");
            for (si = 0; si < (int)(sizeof bw_specs / sizeof bw_specs[0]); si++) {
                const bw_spec *sp = &bw_specs[si];
                size_t want_ws = 64 + r64(kws), cut;
                /* every spec x kernel x blob natively on x86-64; elsewhere (QEMU, slow) each
                 * (blob type, kernel) pair with one spec in turn, every spec covered */
                if (!BW_ALL && (si + km + t) % 5 != 0) continue;
                const qmx_einsum_operand *a, *bo;
                bw_ops(sp, &X, &W, bw_blob, bytes);
                a = sp->blob_first ? &W : &X; bo = sp->blob_first ? &X : &W;
                for (m = 0; m < BW_M; m++)
                    for (n = 0; n < BW_N; n++) bw_want[bw_pos(sp->out, m, n)] = bw_y[m * BW_N + n];
                if (sp->xt) want_ws += r64(4 * BW_M * BW_K);
                if (sp->out) want_ws += r64(4 * BW_M * BW_N);
                st = qmx_einsum_workspace_size(sp->spec, a, bo, &o, &ws0, &pos);
                CHECK(st == QMX_OK && ws0 == want_ws,
                      "%s %s %s: workspace %u, want the kernel's + the copies %u (%d)", tn[t],
                      kn[km], sp->spec, (unsigned)ws0, (unsigned)want_ws, (int)st);
                memset(bw_o, 0x7F, sizeof bw_o);
                st = bw_einsum(sp, &X, &W, &o, bw_o, ws0, 0, 0, 0);
                CHECK(st == QMX_OK && !memcmp(bw_o, bw_want, sizeof bw_o),
                      "%s %s %s: einsum %d, not the direct kernel's bits", tn[t], kn[km], sp->spec,
                      (int)st);
                if (km == 0) { /* float32: the float path's order (k increasing, no FMA) on
                                  ggml's own values as float32 weights, the same bits */
                    qmx_einsum_operand F = W;
                    F.blockw_blob = NULL; F.blockw_blob_bytes = 0;
                    F.data = bw_wd; F.data_bytes = sizeof bw_wd;
                    st = qmx_einsum(sp->spec, sp->blob_first ? &F : &X, sp->blob_first ? &X : &F,
                                    NULL, bw_o, BW_M * BW_N, wsbuf, sizeof wsbuf, &pos);
                    CHECK(st == QMX_OK && !memcmp(bw_o, bw_want, sizeof bw_o),
                          "%s %s: not the float path's bits on the dequantized weights (%d)",
                          tn[t], sp->spec, (int)st);
                }
                if (km == 1 && t == 1) continue; /* ranges and executor: the other 8 kinds */
                st = qmx_einsum_tasks(sp->spec, a, bo, &o, &nt, &pos);
                CHECK(st == QMX_OK && nt == 6, "%s: tasks %u, want qmx_matmul_tasks' 6 (%d)",
                      sp->spec, (unsigned)nt, (int)st);
                memset(bw_o, 0x7F, sizeof bw_o);
                st = bw_einsum(sp, &X, &W, &o, bw_o, ws0, 1, 0, nt);
                CHECK(st == QMX_OK && !memcmp(bw_o, bw_want, sizeof bw_o),
                      "%s %s %s: one range call %d, other bits", tn[t], kn[km], sp->spec, (int)st);
                memset(bw_o, 0x7F, sizeof bw_o);
                st = bw_einsum(sp, &X, &W, &o, bw_o, ws0, 1, 3, nt);
                if (st == QMX_OK) st = bw_einsum(sp, &X, &W, &o, bw_o, ws0, 1, 0, 1);
                if (st == QMX_OK) st = bw_einsum(sp, &X, &W, &o, bw_o, ws0, 1, 1, 3);
                CHECK(st == QMX_OK && !memcmp(bw_o, bw_want, sizeof bw_o),
                      "%s %s %s: three range calls %d, other bits", tn[t], kn[km], sp->spec,
                      (int)st);
                /* tasks partition the output: without task 0 its tile (rows < 64, columns <
                 * 256) keeps the sentinel, everything else is written */
                memset(bw_o, 0x7F, sizeof bw_o);
                st = bw_einsum(sp, &X, &W, &o, bw_o, ws0, 1, 1, nt);
                cut = 0;
                for (m = 0; m < BW_M; m++)
                    for (n = 0; n < BW_N; n++) {
                        size_t p = bw_pos(sp->out, m, n);
                        size_t mp = sp->out == 2 ? m % BW_S * BW_B + m / BW_S : m; /* the plan's
                                                         row: M in output order ("fsb": s, b) */
                        int in0 = mp < 64 && n < 256;
                        uint32_t g = qmx_test_f32_bits(bw_o[p]);
                        if (in0 ? g != 0x7F7F7F7Fu : g != qmx_test_f32_bits(bw_want[p])) cut++;
                    }
                CHECK(st == QMX_OK && cut == 0, "%s %s %s: tasks 1..5 wrote %u wrong outputs (%d)",
                      tn[t], kn[km], sp->spec, (unsigned)cut, (int)st);
                /* a 3-worker executor: the kernel's tasks, the kernel's _exec workspace */
                st = qmx_einsum_workspace_size(sp->spec, a, bo, &ox, &wsx, &pos);
                CHECK(st == QMX_OK && wsx == want_ws - r64(kws) + 3 * r64(tw),
                      "%s: executor workspace %u (%d)", sp->spec, (unsigned)wsx, (int)st);
                memset(bw_o, 0x7F, sizeof bw_o);
                bw_calls = 0;
                st = bw_einsum(sp, &X, &W, &ox, bw_o, wsx, 0, 0, 0);
                CHECK(st == QMX_OK && bw_calls == 1 && !memcmp(bw_o, bw_want, sizeof bw_o),
                      "%s %s %s: executor %d (%d parallel_for calls), other bits", tn[t], kn[km],
                      sp->spec, (int)st, bw_calls);
                memset(bw_o, 0x7F, sizeof bw_o);
                st = bw_einsum(sp, &X, &W, &ox, bw_o, wsx - 1, 0, 0, 0);
                CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && qmx_test_f32_bits(bw_o[0]) == 0x7F7F7F7Fu &&
                          !memcmp(bw_o, bw_o + BW_M * BW_N / 2, sizeof bw_o / 2),
                      "%s: executor workspace short by 1: %d", sp->spec, (int)st);
            }
        }
    }
}

/* Bad blob operands: a status, the output and the workspace untouched (Q8_0 blob above). */
static void test_blockw_blob_errors(void) {
    qmx_einsum_operand X, W, I8;
    qmx_einsum_opts o = QMX_ZERO_INIT, od = QMX_ZERO_INIT;
    qmx_blockw_dyn_opts dyo = QMX_ZERO_INIT;
    size_t bytes = 0, ws0 = 0, i, bb;
    int pos;
    qmx_status st;
    QMX_TEST_CASE("block-weight blob operands: bad input");
    bb = bw_make(QMX_BLOCKW_GGML_Q8_0);
    CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q8_0, BW_N, BW_K, &bytes) == QMX_OK &&
              qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q8_0, bw_blocks, BW_N * (BW_K / 32) * bb, BW_N,
                                   BW_K, bw_blob, bytes) == QMX_OK,
          "pack");
    od.blockw_act = QMX_EINSUM_BLOCKW_DYN_I8;
    bw_ops(&bw_specs[2], &X, &W, bw_blob, bytes); /* the largest: A packed, the [M,N] tile */
    CHECK(qmx_einsum_workspace_size("bds,fd->fbs", &X, &W, &od, &ws0, &pos) == QMX_OK, "ws");
    bw_ops(&bw_specs[0], &X, &W, bw_blob, bytes);
#define BEXPECT(spec, A, B, opts, ws, want, what)                                               \
    do {                                                                                         \
        memset(bw_o, 0x7F, sizeof bw_o);                                                         \
        memset(wsbuf, 0xA5, ws0 + 64);                                                           \
        st = qmx_einsum(spec, A, B, opts, bw_o, BW_M * BW_N, wsbuf, ws, &pos);                   \
        for (i = 0; i < BW_M * BW_N && qmx_test_f32_bits(bw_o[i]) == 0x7F7F7F7Fu; i++) {}        \
        CHECK(st == (want) && i == BW_M * BW_N && wsbuf[0] == 0xA5 &&                            \
                  !memcmp(wsbuf, wsbuf + 1, ws0 + 63),                                           \
              "%s: %d, want %d; output / workspace untouched: %d", what, (int)st, (int)(want),     \
              i == BW_M * BW_N);                                                                 \
    } while (0)
    memcpy(bw_bad, bw_blob, bytes);
    bw_bad[0] ^= 1;
    W.blockw_blob = bw_bad;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_PARSE, "bad magic");
    CHECK(qmx_einsum_workspace_size("bsd,fd->bsf", &X, &W, &o, &ws0, &pos) == QMX_ERR_PARSE,
          "workspace_size reads the blob's header too");
    W.blockw_blob = bw_blob;
    W.blockw_blob_bytes = bytes - 1;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_BUFFER_TOO_SMALL, "blob bytes short by 1");
    W.blockw_blob_bytes = 63;
    BEXPECT("bsd,fd->bsf", &X, &W, &od, ws0, QMX_ERR_BUFFER_TOO_SMALL, "63 bytes (no header)");
    W.blockw_blob_bytes = bytes;
    W.shape[0] = BW_N - 1;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_SHAPE, "shape N - 1, not the blob's N");
    W.shape[0] = BW_N; W.rank = 3; W.shape[0] = 1; W.shape[1] = BW_N; W.shape[2] = BW_K;
    BEXPECT("bsd,gfd->bsgf", &X, &W, &o, ws0, QMX_ERR_SHAPE, "a rank-3 blob operand");
    W.rank = 2; W.shape[0] = BW_K; W.shape[1] = BW_N;
    BEXPECT("bsd,df->bsf", &X, &W, &o, ws0, QMX_ERR_ARG, "blob blocks along the free f");
    W.shape[0] = BW_N; W.shape[1] = BW_K;
    BEXPECT("bsd,fd->bf", &X, &W, &o, ws0, QMX_ERR_UNSUPPORTED, "s summed too: K is not d");
    BEXPECT("bsd,fd->bs", &X, &W, &o, ws0, QMX_ERR_UNSUPPORTED, "f summed within the blob");
    W.shape[0] = BW_B;
    BEXPECT("bsd,bd->bs", &X, &W, &o, ws0, QMX_ERR_UNSUPPORTED, "the blob's n a batch label");
    W.shape[0] = BW_N;
    memset(&I8, 0, sizeof I8);
    I8.dtype = QMX_INT8; I8.rank = 3; I8.shape[0] = BW_B; I8.shape[1] = BW_S; I8.shape[2] = BW_K;
    I8.data = bw_x; I8.data_bytes = sizeof bw_x;
    BEXPECT("bsd,fd->bsf", &I8, &W, &o, ws0, QMX_ERR_UNSUPPORTED, "int8 activations");
    BEXPECT("fd,bsd->bsf", &W, &I8, &o, ws0, QMX_ERR_UNSUPPORTED, "int8 activations, blob first");
    I8.dtype = QMX_FP8_E4M3FN;
    BEXPECT("bsd,fd->bsf", &I8, &W, &o, ws0, QMX_ERR_UNSUPPORTED, "fp8 activations");
    BEXPECT("fd,gd->fg", &W, &W, &o, ws0, QMX_ERR_UNSUPPORTED, "two blobs");
    o.int32_out = 1;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_ARG, "int32_out");
    o.int32_out = 0; o.blockw_act = (qmx_einsum_blockw_act)2;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_ARG, "blockw_act 2");
    o.blockw_act = QMX_EINSUM_BLOCKW_F32;
    od.blockw_act_block = 48;
    BEXPECT("bsd,fd->bsf", &X, &W, &od, ws0, QMX_ERR_UNSUPPORTED, "act_block 48 (the kernel's rule)");
    od.blockw_act_block = 0;
    W.data = bw_x;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_ARG, "blob with data too");
    W.data = NULL; W.dtype = QMX_INT8;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_DTYPE, "blob with a dtype");
    W.dtype = QMX_DTYPE_INVALID; W.scales = bw_wd; W.scales_len = 1;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_ARG, "blob with scales");
    W.scales = NULL; W.scales_len = 0;
    X.blockw_blob_bytes = 1;
    BEXPECT("bsd,fd->bsf", &X, &W, &o, ws0, QMX_ERR_ARG, "blockw_blob_bytes without a blob");
    X.blockw_blob_bytes = 0;
    {   /* the workspace, exactly; the output length */
        size_t w1 = 0, w2 = 0, w3 = 0;
        CHECK(qmx_einsum_workspace_size("bsd,fd->bsf", &X, &W, &o, &w1, &pos) == QMX_OK &&
                  qmx_einsum_workspace_size("bsd,fd->fbs", &X, &W, &od, &w2, &pos) == QMX_OK,
              "ws queries");
        BEXPECT("bsd,fd->bsf", &X, &W, &o, w1 - 1, QMX_ERR_BUFFER_TOO_SMALL, "f32 workspace - 1");
        BEXPECT("bsd,fd->fbs", &X, &W, &od, w2 - 1, QMX_ERR_BUFFER_TOO_SMALL, "dyn workspace - 1");
        bw_ops(&bw_specs[4], &X, &W, bw_blob, bytes);
        CHECK(qmx_einsum_workspace_size("fd,bds->fsb", &W, &X, &od, &w3, &pos) == QMX_OK, "ws");
        BEXPECT("fd,bds->fsb", &W, &X, &od, w3 - 1, QMX_ERR_BUFFER_TOO_SMALL, "packed workspace - 1");
        BEXPECT("fd,bds->fsb", &W, &X, &od, 0, QMX_ERR_BUFFER_TOO_SMALL, "workspace 0");
        CHECK(w3 == ws0, "fd,bds->fsb: the workspace of bds,fd->fbs");
        memset(bw_o, 0x7F, sizeof bw_o);
        st = qmx_einsum("bds,fd->bsf", &X, &W, &o, bw_o, BW_M * BW_N - 1, wsbuf, ws0, &pos);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL && qmx_test_f32_bits(bw_o[0]) == 0x7F7F7F7Fu,
              "out_len short by 1: %d", (int)st);
        st = qmx_einsum("bds,fd->bsf", &X, &W, &o, bw_o, BW_M * BW_N, NULL, ws0, &pos);
        CHECK(st == QMX_ERR_NULL, "workspace NULL: %d", (int)st);
        st = qmx_einsum_run("bds,fd->bsf", &X, &W, &o, bw_o, BW_M * BW_N, wsbuf, ws0, 0, 7, &pos);
        CHECK(st == QMX_ERR_ARG, "range past the 6 tasks: %d", (int)st);
        st = qmx_einsum_run("bds,fd->bsf", &X, &W, &o, bw_o, BW_M * BW_N, wsbuf, ws0, 3, 2, &pos);
        CHECK(st == QMX_ERR_ARG && qmx_test_f32_bits(bw_o[0]) == 0x7F7F7F7Fu, "range reversed: %d", (int)st);
    }
    /* int8 activations: a block whose scale underflows (absmax 1e-44) is the kernel's
     * QMX_ERR_ARG, also when the activations are packed first (checked before the copy);
     * float32 activations take it. NaN: QMX_ERR_NONFINITE. */
    for (i = 0; i < BW_K; i++) {
        bw_x[5 * BW_K + i] = i == 7 ? -1e-44f : 0.0f;
        bw_xt[(0 * BW_K + i) * BW_S + 5] = bw_x[5 * BW_K + i];
    }
    dyo.act_block = 32;
    st = qmx_matmul_blockw_packed_dyn_i8(BW_M, BW_N, BW_K, bw_x, BW_K, bw_blob, bytes, &dyo, bw_y,
                                         BW_N, bw_kws, sizeof bw_kws);
    od.blockw_act_block = 32;
    bw_ops(&bw_specs[0], &X, &W, bw_blob, bytes);
    CHECK(st == QMX_ERR_ARG, "the kernel on the tiny block: %d", (int)st);
    BEXPECT("bsd,fd->bsf", &X, &W, &od, ws0, QMX_ERR_ARG, "dyn_i8: a tiny block");
    bw_ops(&bw_specs[2], &X, &W, bw_blob, bytes);
    BEXPECT("bds,fd->fbs", &X, &W, &od, ws0, QMX_ERR_ARG, "dyn_i8: a tiny block, packed");
    CHECK(qmx_einsum("bds,fd->fbs", &X, &W, &o, bw_o, BW_M * BW_N, wsbuf, sizeof wsbuf, &pos) == QMX_OK,
          "float32 activations take the tiny block");
    bw_xt[3] = qmx_test_bits_f32(0x7FC00000u);
    BEXPECT("bds,fd->fbs", &X, &W, &od, ws0, QMX_ERR_NONFINITE, "a NaN activation");
    /* the test data back */
    bw_xt[3] = bw_x[(0 * BW_S + 3) * BW_K + 0];
#undef BEXPECT
}

int main(void) {
    qmx_test_seed(0x9E3779B9u); /* this program's data */
    test_kn_weights();
    test_golden();
    test_malformed();
    test_naive_sweep();
    test_plans();
    test_errors();
    test_features();
    test_plan_is_kernel();
    test_new_int_operands();
    test_new_float_operands();
    test_new_errors();
    test_blockw_blob();
    test_blockw_blob_errors();
    return QMX_TEST_END();
}
