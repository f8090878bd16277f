/* test_blockw_packed.c - the prepacked block-weight blob (qmx_blockw_pack*, qmx_blockw_unpack*)
 * and qmx_matmul_blockw_packed_dyn_i8 (qmx_kernels.h, PREPACKED BLOCK WEIGHTS):
 *   - pack -> unpack gives the codes, scales and zero points back bit for bit (int8, int4,
 *     uint4, with and without zero points, float32 and binary16 scale storage, ragged K);
 *   - the packed kernel gives qmx_matmul_blockw_dyn_i8's bits on the unpacked weights, on
 *     random shapes, extreme codes, zero rows, huge and tiny scales, act_block 0 / 32 / 64,
 *     and against an independent double-free integer reference written here;
 *   - ggml golden blocks (tests/data/interop_ggml.txt): pack_ggml -> unpack_ggml gives the
 *     same bytes (but d = +-0 blocks, as qmx.h documents), and the kernel on them equals
 *     qmx_matmul_blockw_dyn_i8 on qmx_ggml_*_to_qmx's conversion;
 *   - ggml block_nvfp4 (golden blocks of tests/data/mx_golden.txt with ggml's dequantization,
 *     random bytes): lossless both ways, the blob of qmx_mx_from_ggml + qmx_blockw_pack;
 *   - NVFP4 (blocks of 16, E4M3 scales with or without the tensor scale, ggml's UE4M3) and
 *     MXFP8 (E4M3 / E5M2, NaN / Inf codes) blobs: the same round trips and kernel checks;
 *   - rows in the kernel's register tiles give the bits of the same rows one at a time, also
 *     with zero point bytes of the blob altered out of range;
 *   - bad input returns a status with Y and the workspace untouched. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_kernels.h"
#include "qmx_test.h"

enum { T_INT8, T_INT4, T_INT4ZP, T_UINT4ZP, T_UINT4, T_INT8ZP, T_NTYPES };
static const char *tname[T_NTYPES] = {"int8", "int4", "int4+zp", "uint4+zp", "uint4", "int8+zp"};

typedef struct wset {
    qmx_qconfig qc;
    qmx_blockw w;
    uint8_t *data;
    size_t data_bytes;
    float *sc;
    int32_t *zp;
    size_t ns, N, K;
    int type;
} wset;

static uint32_t fb(float f) { return qmx_test_f32_bits(f); }

static float rnd_unit(void) { return (float)(qmx_test_rand() & 0xFFFFFF) / 16777216.0f; }

/* mode: 0 random, 1 extremes only, 2 some zero rows, 3 huge scales, 4 tiny scales;
 * f16: scales rounded to binary16 (so the blob stores binary16) */
static void make_w(wset *s, int type, size_t N, size_t K, int mode, int f16) {
    size_t nb = (K + 31) / 32, n, k, i;
    int four = type != T_INT8 && type != T_INT8ZP, hz = type == T_INT4ZP || type == T_UINT4ZP ||
                                                          type == T_INT8ZP;
    int32_t lo = type == T_INT8 || type == T_INT8ZP ? -128 : type == T_INT4 || type == T_INT4ZP ? -8 : 0;
    int32_t hi = type == T_INT8 || type == T_INT8ZP ? 127 : type == T_INT4 || type == T_INT4ZP ? 7 : 15;
    memset(s, 0, sizeof *s);
    s->N = N; s->K = K; s->type = type; s->ns = N * nb;
    s->data_bytes = four ? (N * K + 1) / 2 : N * K;
    s->data = (uint8_t *)calloc(s->data_bytes + 1, 1);
    s->sc = (float *)malloc(s->ns * sizeof(float));
    s->zp = hz ? (int32_t *)malloc(s->ns * sizeof(int32_t)) : NULL;
    for (n = 0; n < N; n++) {
        int zrow = mode == 2 && (qmx_test_rand() % 3 == 0);
        for (k = 0; k < K; k++) {
            int32_t v;
            size_t e = n * K + k;
            if (mode == 1) {
                uint32_t r = qmx_test_rand() % 3;
                v = r == 0 ? lo : r == 1 ? hi : (lo < 0 ? 0 : lo);
            } else {
                v = lo + (int32_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1));
            }
            if (zrow) v = lo < 0 ? 0 : lo;
            if (four) {
                uint8_t *b = s->data + e / 2;
                uint8_t nib = (uint8_t)((uint32_t)v & 15u);
                *b = (uint8_t)(e & 1 ? (*b & 0x0F) | (nib << 4) : (*b & 0xF0) | nib);
            } else {
                s->data[e] = (uint8_t)(int8_t)v;
            }
        }
    }
    for (i = 0; i < s->ns; i++) {
        float v = 0.001f + rnd_unit() * 0.1f;
        if (mode == 3) v = 1e36f * (1.0f + rnd_unit() * 200.0f);
        if (mode == 4) v = 1e-38f * (0.001f + rnd_unit());
        if (f16 && mode != 3 && mode != 4) v = qmx_f16_to_f32(qmx_f32_to_f16(v));
        s->sc[i] = v;
        if (hz) {
            uint32_t r = qmx_test_rand() % 4;
            s->zp[i] = mode == 1 ? (r & 1 ? lo : hi) : lo + (int32_t)(qmx_test_rand() % (uint32_t)(hi - lo + 1));
        }
    }
    s->qc.dtype = type == T_INT8 || type == T_INT8ZP ? QMX_INT8
                : type == T_INT4 || type == T_INT4ZP ? QMX_INT4 : QMX_UINT4;
    s->qc.granularity = QMX_PER_BLOCK;
    s->qc.outer = N; s->qc.axis_len = K; s->qc.inner = 1;
    s->qc.block_size = 32;
    s->qc.asymmetric = hz;
    s->qc.recipe = hz ? QMX_RECIPE_TFLITE : QMX_RECIPE_AQT;   /* AQT is symmetric */
    s->w.kind = QMX_BLOCKW_QCONFIG;
    s->w.qc = &s->qc;
    s->w.data = s->data;
    s->w.data_bytes = s->data_bytes;
    s->w.scales = s->sc;
    s->w.zero_points = s->zp;
    s->w.n_scales = s->ns;
}

static void free_w(wset *s) { free(s->data); free(s->sc); free(s->zp); }

static uint8_t *pack_w(const wset *s, size_t *bytes) {
    uint8_t *blob;
    if (qmx_blockw_pack_size(&s->w, s->N, s->K, bytes) != QMX_OK) return NULL;
    blob = (uint8_t *)malloc(*bytes);
    if (qmx_blockw_pack(&s->w, s->N, s->K, blob, *bytes) != QMX_OK) { free(blob); return NULL; }
    return blob;
}

/* unpack and compare with the origin */
static void check_roundtrip(const wset *s, const uint8_t *blob, size_t bytes, const char *what) {
    qmx_blockw_packed_desc d;
    uint8_t *q = (uint8_t *)calloc(s->data_bytes + 1, 1);
    float *sc = (float *)malloc(s->ns * sizeof(float));
    int32_t *zp = (int32_t *)malloc(s->ns * sizeof(int32_t));
    size_t i, bad = 0;
    memset(&d, 0, sizeof d);
    CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK, "%s info", what);
    CHECK(d.N == s->N && d.K == s->K && d.nblk * s->N == s->ns && d.bytes == bytes &&
          d.dtype == s->qc.dtype && d.has_zp == (s->zp != NULL), "%s desc", what);
    CHECK(qmx_blockw_unpack(blob, bytes, q, s->data_bytes, sc, zp, s->ns) == QMX_OK,
          "%s unpack", what);
    if ((s->N * s->K) & 1 && s->qc.dtype != QMX_INT8)   /* the unused high nibble: 0 */
        bad += (q[s->data_bytes - 1] >> 4) != 0;
    for (i = 0; i < s->data_bytes; i++) {
        uint8_t a = q[i], b = s->data[i];
        if (((s->N * s->K) & 1) && s->qc.dtype != QMX_INT8 && i == s->data_bytes - 1) {
            a &= 15; b &= 15;
        }
        bad += a != b;
    }
    for (i = 0; i < s->ns; i++) {
        bad += fb(sc[i]) != fb(s->sc[i]);
        if (s->zp) bad += zp[i] != s->zp[i];
    }
    CHECK(bad == 0, "%s: %u round-trip mismatches", what, (unsigned)bad);
    free(q); free(sc); free(zp);
}

/* Y of qmx_matmul_blockw_dyn_i8 and of the packed kernel: the same bits */
static void check_kernel(const wset *s, const uint8_t *blob, size_t bytes, size_t M,
                         size_t act_block, int xmode, const char *what) {
    size_t N = s->N, K = s->K, ldx = K + 3, ldy = N + 2, i, wsa = 0, wsb = 0, bad = 0;
    float *X = (float *)malloc((M * ldx) * sizeof(float));
    float *Ya = (float *)malloc(M * ldy * sizeof(float));
    float *Yb = (float *)malloc(M * ldy * sizeof(float));
    void *wa, *wb;
    qmx_blockw_dyn_opts o;
    qmx_status sa, sb;
    o.act_block = act_block;
    for (i = 0; i < M * ldx; i++) {
        float v = (rnd_unit() - 0.5f) * 8.0f;
        if (xmode == 1 && (i % 7) == 0) v = 0.0f;
        if (xmode == 2) v = (i / ldx) % 2 ? 0.0f : v * 1e30f;   /* zero rows, huge rows */
        X[i] = v;
    }
    for (i = 0; i < M * ldy; i++) { Ya[i] = -7.0f; Yb[i] = -7.0f; }
    CHECK(qmx_matmul_blockw_dyn_i8_workspace_size(M, N, K, &o, &wsa) == QMX_OK, "%s ws a", what);
    CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, &o, &wsb) == QMX_OK,
          "%s ws b", what);
    wa = malloc(wsa); wb = malloc(wsb + 1);
    sa = qmx_matmul_blockw_dyn_i8(M, N, K, X, ldx, &s->w, &o, Ya, ldy, wa, wsa);
    /* an odd workspace address: any alignment */
    sb = qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, ldx, blob, bytes, &o, Yb, ldy,
                                         (char *)wb + 1, wsb);
    CHECK(sa == QMX_OK && sb == QMX_OK, "%s: status %d %d", what, (int)sa, (int)sb);
    for (i = 0; i < M * ldy; i++) bad += fb(Ya[i]) != fb(Yb[i]);
    CHECK(bad == 0, "%s: %u of %u outputs differ (M %u N %u K %u ab %u)", what, (unsigned)bad,
          (unsigned)(M * ldy), (unsigned)M, (unsigned)N, (unsigned)K, (unsigned)act_block);
    free(X); free(Ya); free(Yb); free(wa); free(wb);
}

/* Y of qmx_matmul_blockw_f32 and of the packed f32 kernel: the same bits (xmode 3: NaN and
 * +-Inf among the activations, so NaN / Inf outputs appear; xmode 2: products overflow) */
static void check_kernel_f32(const wset *s, const uint8_t *blob, size_t bytes, size_t M,
                             int xmode, const char *what) {
    size_t N = s->N, K = s->K, ldx = K + 1, ldy = N + 3, i, wsa = 0, wsb = 0, bad = 0;
    float *X = (float *)malloc((M * ldx) * sizeof(float));
    float *Ya = (float *)malloc(M * ldy * sizeof(float));
    float *Yb = (float *)malloc(M * ldy * sizeof(float));
    void *wa, *wb;
    qmx_status sa, sb;
    for (i = 0; i < M * ldx; i++) {
        float v = (rnd_unit() - 0.5f) * 8.0f;
        if (xmode == 1 && (i % 7) == 0) v = 0.0f;
        if (xmode == 2) v = (i / ldx) % 2 ? -0.0f : v * 1e37f;
        if (xmode == 3 && (i % 53) == 5) v = (i % 3) ? qmx_test_bits_f32(0x7F800000u ^ (uint32_t)((i & 8) << 28))
                                                     : qmx_test_bits_f32(0x7FC00001u);
        X[i] = v;
    }
    for (i = 0; i < M * ldy; i++) { Ya[i] = -7.0f; Yb[i] = -7.0f; }
    CHECK(qmx_matmul_blockw_f32_workspace_size(M, N, K, &wsa) == QMX_OK, "%s f32 ws a", what);
    CHECK(qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &wsb) == QMX_OK, "%s f32 ws b",
          what);
    wa = malloc(wsa); wb = malloc(wsb + 3);
    sa = qmx_matmul_blockw_f32(M, N, K, X, ldx, &s->w, Ya, ldy, wa, wsa);
    sb = qmx_matmul_blockw_packed_f32(M, N, K, X, ldx, blob, bytes, Yb, ldy, (char *)wb + 3, wsb);
    CHECK(sa == QMX_OK && sb == QMX_OK, "%s f32: status %d %d", what, (int)sa, (int)sb);
    for (i = 0; i < M * ldy; i++) bad += fb(Ya[i]) != fb(Yb[i]);
    CHECK(bad == 0, "%s f32: %u of %u outputs differ (M %u N %u K %u xmode %d)", what,
          (unsigned)bad, (unsigned)(M * ldy), (unsigned)M, (unsigned)N, (unsigned)K, xmode);
    free(X); free(Ya); free(Yb); free(wa); free(wb);
}

/* Under RVV emulation (QEMU runs each vector instruction element by element) and on Cortex-M:
 * the smaller shapes (ragged M, N and K kept; K = 4096 only for one or two rows). */
#if QMX_TEST_SMALL_TARGET || defined(__riscv_vector)
#  define BW_EMU_SMALL 1
#else
#  define BW_EMU_SMALL 0
#endif

static void random_shapes(void) {
    static const size_t Ms[] = {1, 2, 5, 13, 17, 64, 65}, Ns[] = {1, 15, 16, 17, 33},
                        Ks[] = {32, 64, 96, 4096, 80, 200};
    size_t a, b, c, r = 0;
    QMX_TEST_CASE("packed kernels == qmx_matmul_blockw_dyn_i8 / _f32, random shapes and formats");
    for (a = 0; a < sizeof Ms / sizeof Ms[0]; a++)
        for (b = 0; b < sizeof Ns / sizeof Ns[0]; b++)
            for (c = 0; c < sizeof Ks / sizeof Ks[0]; c++, r++) {
                size_t M = Ms[a], N = Ns[b], K = Ks[c], bytes = 0;
                int type = (int)(r % T_NTYPES), mode = (int)((r / 2) % 5), f16 = (int)(r & 1);
                wset s;
                uint8_t *blob;
                char what[96];
                if (K == 4096 && M > (BW_EMU_SMALL ? 2u : 17u)) continue;
                if (BW_EMU_SMALL && M * N * K > 65u * 33u * 96u) continue;
                make_w(&s, type, N, K, mode, f16);
                snprintf(what, sizeof what, "%s mode %d f16 %d", tname[type], mode, f16);
                blob = pack_w(&s, &bytes);
                CHECK(blob != NULL, "%s: pack", what);
                if (blob) {
                    check_roundtrip(&s, blob, bytes, what);
                    check_kernel(&s, blob, bytes, M, 0, (int)(r % 3), what);
                    check_kernel(&s, blob, bytes, M, 32, (int)((r + 1) % 3), what);
                    if (K % 64 == 0 && M < 20) check_kernel(&s, blob, bytes, M, 64, 0, what);
                    check_kernel_f32(&s, blob, bytes, M, (int)(r % 4), what);
                }
                free(blob);
                free_w(&s);
            }
}

/* The GEMV (M = 1: the f32 kernel's one-row path on whole blocks, the tile on a partial last
 * one) for every integer kind, both scale widths and every activation mode (NaN / Inf, products
 * that overflow, zeros), K whole blocks or not */
static void gemv_kinds(void) {
    static const size_t Ks[] = {96, 200};
    int type, xmode;
    size_t c;
    QMX_TEST_CASE("packed f32 kernel, M = 1: every integer kind and activation mode");
    for (type = 0; type < T_NTYPES; type++)
        for (xmode = 0; xmode < 4; xmode++)
            for (c = 0; c < 2; c++) {
                size_t bytes = 0;
                int mode = (type + xmode + (int)c) % 5, f16 = (xmode + (int)c) & 1;
                wset s;
                uint8_t *blob;
                char what[96];
                make_w(&s, type, 33, Ks[c], mode, f16);
                snprintf(what, sizeof what, "gemv %s mode %d f16 %d", tname[type], mode, f16);
                blob = pack_w(&s, &bytes);
                CHECK(blob != NULL, "%s: pack", what);
                if (blob) check_kernel_f32(&s, blob, bytes, 1, xmode, what);
                free(blob);
                free_w(&s);
            }
}

/* MXFP4 (E2M1 codes, E8M0 scale codes) under the OCP, Qwix and ggml scale rules */

/* eb bytes of packed E2M1 pairs for n elements: random, or (mode 1) +-6 only, the largest |e|;
 * the unused high nibble of an odd count is 0 */
static void fill_fp4_codes(uint8_t *data, size_t eb, size_t n, int mode) {
    size_t i;
    for (i = 0; i < eb; i++) {
        uint32_t v = qmx_test_rand();
        if (mode == 1) v = (v & 0x88u) | 0x77u;
        data[i] = (uint8_t)v;
    }
    if (n & 1) data[eb - 1] &= 0x0F;
}
static void mxfp4_cases(void) {
    static const size_t Ms[] = {1, 5, 17}, Ns[] = {1, 17, 33}, Ks[] = {32, 96, 80, 4096};
    static const qmx_mx_rule rules[] = {QMX_MX_FLOOR, QMX_MX_QWIX, QMX_MX_GGML};
    size_t a, b, c, r, i, run = 0;
    QMX_TEST_CASE("MXFP4 blob: round trip and packed kernels == qmx_matmul_blockw_dyn_i8 / _f32");
    for (r = 0; r < 3; r++)
        for (a = 0; a < 3; a++)
            for (b = 0; b < 3; b++)
                for (c = 0; c < 4; c++, run++) {
                    size_t M = Ms[a], N = Ns[b], K = Ks[c], nb = (K + 31) / 32, eb = (N * K + 1) / 2;
                    size_t bytes = 64, ns = N * nb, bad = 0;
                    qmx_mx_config cfg;
                    wset s;
                    uint8_t *blob, *codes, *back, *sback;
                    int mode = (int)(run % 4);
                    char what[96];
                    qmx_blockw_packed_desc d;
                    if (K == 80 && rules[r] == QMX_MX_GGML) continue;   /* ggml: whole blocks */
                    if (K == 4096 && M > 5) continue;
                    memset(&cfg, 0, sizeof cfg);
                    cfg.format = QMX_MXFP4; cfg.rule = rules[r]; cfg.block_size = 32;
                    cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
                    memset(&s, 0, sizeof s);
                    s.N = N; s.K = K; s.ns = ns;
                    s.data = (uint8_t *)calloc(eb + 1, 1);
                    codes = (uint8_t *)malloc(ns);
                    fill_fp4_codes(s.data, eb, N * K, mode);
                    for (i = 0; i < ns; i++) {
                        uint32_t v = qmx_test_rand();
                        codes[i] = (uint8_t)(110 + v % 30);
                        if (mode == 2) codes[i] = (uint8_t)(v % 5 == 0 ? 0 : v % 5 == 1 ? 1 : v % 5 == 2 ? 255
                                                            : v % 5 == 3 ? 254 : 127);
                        if (mode == 3 && v % 7 == 0) codes[i] = (uint8_t)(v % 2 ? 0 : 255);
                    }
                    s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = s.data;
                    s.w.data_bytes = eb; s.w.scale_codes = codes; s.w.n_scales = ns;
                    snprintf(what, sizeof what, "mxfp4 rule %d mode %d", (int)rules[r], mode);
                    CHECK(qmx_blockw_pack_size(&s.w, N, K, &bytes) == QMX_OK &&
                          bytes == 64 + ((N + 15) / 16) * nb * (256 + 16), "%s size", what);
                    blob = (uint8_t *)malloc(bytes);
                    CHECK(qmx_blockw_pack(&s.w, N, K, blob, bytes) == QMX_OK, "%s pack", what);
                    CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK && d.mxfp4 == 1 &&
                          d.scale_kind == (rules[r] == QMX_MX_GGML ? 4 : rules[r] == QMX_MX_QWIX ? 3 : 2),
                          "%s info", what);
                    back = (uint8_t *)calloc(eb + 1, 1);
                    sback = (uint8_t *)malloc(ns);
                    CHECK(qmx_blockw_unpack_mx(blob, bytes, back, eb, sback, ns) == QMX_OK,
                          "%s unpack", what);
                    bad = (size_t)(memcmp(back, s.data, eb) != 0) + (size_t)(memcmp(sback, codes, ns) != 0);
                    CHECK(bad == 0, "%s: round trip differs", what);
                    check_kernel(&s, blob, bytes, M, 0, (int)(run % 3), what);
                    check_kernel(&s, blob, bytes, M, 32, (int)((run + 1) % 3), what);
                    check_kernel_f32(&s, blob, bytes, M, (int)(run % 4), what);
                    free(blob); free(back); free(sback); free(codes); free(s.data);
                }
}

/* NVFP4 (E2M1 codes, E4M3 scale codes per block of 16): torchao (with and without the tensor
 * scale), Qwix and ggml scale rules; ragged K, K < 16, N not a multiple of 16, M 1 / 2 / 17;
 * special scale codes (0, -0, NaN 0x7F / 0xFF, +-448, subnormal), NaN / Inf activations in the
 * f32 kernel. */
static void nvfp4_cases(void) {
    static const size_t Ms[] = {1, 2, 17}, Ns[] = {1, 17, 33}, Ks[] = {16, 40, 96, 8, 4096};
    static const uint8_t spec[8] = {0x00, 0x80, 0x7F, 0xFF, 0x7E, 0xFE, 0x01, 0x38};
    size_t a, b, c, r, i, run = 0;
    QMX_TEST_CASE("NVFP4 blob: round trip and packed kernels == qmx_matmul_blockw_dyn_i8 / _f32");
    for (r = 0; r < 4; r++)
        for (a = 0; a < 3; a++)
            for (b = 0; b < 3; b++)
                for (c = 0; c < 5; c++, run++) {
                    size_t M = Ms[a], N = Ns[b], K = Ks[c], nb = (K + 15) / 16, eb = (N * K + 1) / 2;
                    size_t bytes = 64, ns = N * nb, bad = 0;
                    qmx_mx_config cfg;
                    wset s;
                    uint8_t *blob, *codes, *back, *sback;
                    int mode = (int)(run % 4), ggml = r == 3;
                    char what[96];
                    qmx_blockw_packed_desc d;
                    if (ggml && K % 16) continue;   /* ggml: whole blocks */
                    if (K == 4096 && (M > 2 || (BW_EMU_SMALL && (M > 1 || N > 17)))) continue;
                    memset(&cfg, 0, sizeof cfg);
                    cfg.format = QMX_NVFP4;
                    cfg.rule = r == 2 ? QMX_MX_QWIX : ggml ? QMX_MX_GGML : QMX_MX_FLOOR;
                    cfg.tensor_scale = r == 1 ? 0.00123f : 0.0f;
                    cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
                    memset(&s, 0, sizeof s);
                    s.N = N; s.K = K; s.ns = ns;
                    s.data = (uint8_t *)calloc(eb + 1, 1);
                    codes = (uint8_t *)malloc(ns);
                    fill_fp4_codes(s.data, eb, N * K, mode);
                    for (i = 0; i < ns; i++) {
                        uint32_t v = qmx_test_rand();
                        codes[i] = (uint8_t)(0x20 + v % 0x40);
                        if (mode == 2) codes[i] = spec[v % 8];
                        if (mode == 3) codes[i] = (uint8_t)(v >> 8);
                    }
                    s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = s.data;
                    s.w.data_bytes = eb; s.w.scale_codes = codes; s.w.n_scales = ns;
                    snprintf(what, sizeof what, "nvfp4 rule %d ts %d mode %d", (int)cfg.rule,
                             r == 1, mode);
                    CHECK(qmx_blockw_pack_size(&s.w, N, K, &bytes) == QMX_OK &&
                          bytes == 64 + ((N + 15) / 16) * nb * (128 + 16), "%s size", what);
                    blob = (uint8_t *)malloc(bytes);
                    CHECK(qmx_blockw_pack(&s.w, N, K, blob, bytes) == QMX_OK, "%s pack", what);
                    memset(&d, 0, sizeof d);
                    CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK && d.nvfp4 == 1 &&
                          d.mxfp4 == 0 && d.block == 16 && d.nblk == nb &&
                          d.scale_kind == (ggml ? 6 : 5) &&
                          fb(d.tensor_scale) == fb(cfg.tensor_scale), "%s info", what);
                    CHECK(blob[17] == 16 && blob[16] == 5, "%s header", what);
                    back = (uint8_t *)calloc(eb + 1, 1);
                    sback = (uint8_t *)malloc(ns);
                    CHECK(qmx_blockw_unpack_mx(blob, bytes, back, eb, sback, ns) == QMX_OK,
                          "%s unpack", what);
                    bad = (size_t)(memcmp(back, s.data, eb) != 0) + (size_t)(memcmp(sback, codes, ns) != 0);
                    CHECK(bad == 0, "%s: round trip differs", what);
                    CHECK(qmx_blockw_unpack(blob, bytes, back, eb, (float *)(void *)sback, NULL, ns) ==
                          QMX_ERR_UNSUPPORTED, "%s: unpack (not _mx)", what);
                    check_kernel(&s, blob, bytes, M, 0, (int)(run % 3), what);
                    check_kernel(&s, blob, bytes, M, 32, (int)((run + 1) % 3), what);
                    if (K % 64 == 0 && M < 20) check_kernel(&s, blob, bytes, M, 64, 0, what);
                    check_kernel_f32(&s, blob, bytes, M, (int)(run % 4), what);
                    if (M == 17) check_kernel_f32(&s, blob, bytes, M, 3, what);
                    free(blob); free(back); free(sback); free(codes); free(s.data);
                }
}

/* MXFP8 E4M3 / E5M2 (fp8 codes, E8M0 scale codes per 32): OCP and Qwix (E4M3) rules, random
 * codes (NaN and Inf elements among them), the largest codes, special scale codes; ragged K,
 * K < 32, N not a multiple of 16, M 1 / 2 / 17. */
static void mxfp8_cases(void) {
    static const size_t Ms[] = {1, 2, 17}, Ns[] = {1, 17, 33}, Ks[] = {32, 40, 96, 8, 4096};
    size_t a, b, c, r, i, run = 0;
    QMX_TEST_CASE("MXFP8 blob: round trip and packed kernels == qmx_matmul_blockw_dyn_i8 / _f32");
    for (r = 0; r < 3; r++)
        for (a = 0; a < 3; a++)
            for (b = 0; b < 3; b++)
                for (c = 0; c < 5; c++, run++) {
                    size_t M = Ms[a], N = Ns[b], K = Ks[c], nb = (K + 31) / 32, eb = N * K;
                    size_t bytes = 64, ns = N * nb, bad = 0;
                    qmx_mx_config cfg;
                    wset s;
                    uint8_t *blob, *codes, *back, *sback;
                    int mode = (int)(run % 4), e5 = r == 1;
                    char what[96];
                    qmx_blockw_packed_desc d;
                    if (K == 4096 && (M > 2 || (BW_EMU_SMALL && (M > 1 || N > 17)))) continue;
                    memset(&cfg, 0, sizeof cfg);
                    cfg.format = e5 ? QMX_MXFP8_E5M2 : QMX_MXFP8_E4M3;
                    cfg.rule = r == 2 ? QMX_MX_QWIX : QMX_MX_FLOOR;
                    cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
                    memset(&s, 0, sizeof s);
                    s.N = N; s.K = K; s.ns = ns;
                    s.data = (uint8_t *)calloc(eb + 1, 1);
                    codes = (uint8_t *)malloc(ns);
                    for (i = 0; i < eb; i++) {
                        uint32_t v = qmx_test_rand();
                        uint8_t cd = (uint8_t)v;
                        if (mode != 3 && ((cd & 0x7F) == 0x7F || (e5 && (cd & 0x7C) == 0x7C)))
                            cd = (uint8_t)(cd & 0xBB);   /* finite: no NaN / Inf elements */
                        if (mode == 1) cd = (uint8_t)((v & 0x80u) | (e5 ? 0x7Bu : 0x7Eu));
                        s.data[i] = cd;
                    }
                    for (i = 0; i < ns; i++) {
                        uint32_t v = qmx_test_rand();
                        codes[i] = (uint8_t)(110 + v % 30);
                        if (mode == 2) codes[i] = (uint8_t)(v % 5 == 0 ? 0 : v % 5 == 1 ? 1 : v % 5 == 2 ? 255
                                                            : v % 5 == 3 ? 254 : 127);
                    }
                    s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = s.data;
                    s.w.data_bytes = eb; s.w.scale_codes = codes; s.w.n_scales = ns;
                    snprintf(what, sizeof what, "mxfp8 %s rule %d mode %d", e5 ? "e5m2" : "e4m3",
                             (int)cfg.rule, mode);
                    CHECK(qmx_blockw_pack_size(&s.w, N, K, &bytes) == QMX_OK &&
                          bytes == 64 + ((N + 15) / 16) * nb * (512 + 16), "%s size", what);
                    blob = (uint8_t *)malloc(bytes);
                    CHECK(qmx_blockw_pack(&s.w, N, K, blob, bytes) == QMX_OK, "%s pack", what);
                    memset(&d, 0, sizeof d);
                    CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK && d.mxfp8 == 1 + e5 &&
                          d.nvfp4 == 0 && d.mxfp4 == 0 && d.block == 32 && d.nblk == nb &&
                          d.scale_kind == (r == 2 ? 3 : 2), "%s info", what);
                    back = (uint8_t *)calloc(eb + 1, 1);
                    sback = (uint8_t *)malloc(ns);
                    CHECK(qmx_blockw_unpack_mx(blob, bytes, back, eb, sback, ns) == QMX_OK,
                          "%s unpack", what);
                    bad = (size_t)(memcmp(back, s.data, eb) != 0) + (size_t)(memcmp(sback, codes, ns) != 0);
                    CHECK(bad == 0, "%s: round trip differs", what);
                    CHECK(qmx_blockw_unpack_mx(blob, bytes, back, eb - 1, sback, ns) ==
                          QMX_ERR_BUFFER_TOO_SMALL, "%s: unpack data short", what);
                    check_kernel(&s, blob, bytes, M, 0, (int)(run % 3), what);
                    check_kernel(&s, blob, bytes, M, 32, (int)((run + 1) % 3), what);
                    if (K % 64 == 0 && M < 20) check_kernel(&s, blob, bytes, M, 64, 0, what);
                    check_kernel_f32(&s, blob, bytes, M, (int)(run % 4), what);
                    free(blob); free(back); free(sback); free(codes); free(s.data);
                }
}

/* MXFP8 E5M2 on the SIMD paths (8 exponent groups, int32 halves joined exactly, Inf / NaN rows
 * patched): codes at the extreme and group-boundary exponents (0, 1, 16, 17, 29, 30; every
 * mantissa and sign), rare Inf / NaN codes (Inf x 0 with zeros in X, +Inf and -Inf products in
 * one block, NaN), blocks of one exponent; ragged K, N 1 / 17 / 33, M 1 / 2 / 17. */
static void mxfp8_e5m2_cases(void) {
    static const size_t Ms[] = {1, 2, 17}, Ns[] = {1, 17, 33}, Ks[] = {40, 96, 8, 200};
    static const uint8_t ex[6] = {0, 1, 16, 17, 29, 30};
    size_t a, b, c, i, run = 0;
    QMX_TEST_CASE("MXFP8 E5M2 blob: extreme exponents, Inf / NaN rows == blockw_dyn_i8 / _f32");
    for (a = 0; a < 3; a++)
        for (b = 0; b < 3; b++)
            for (c = 0; c < 4; c++, run++) {
                size_t M = Ms[a], N = Ns[b], K = Ks[c], nb = (K + 31) / 32, eb = N * K;
                size_t bytes = 64, ns = N * nb;
                qmx_mx_config cfg;
                wset s;
                uint8_t *blob, *codes;
                int mode = (int)(run % 4);
                char what[96];
                memset(&cfg, 0, sizeof cfg);
                cfg.format = QMX_MXFP8_E5M2; cfg.rule = QMX_MX_FLOOR;
                cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
                memset(&s, 0, sizeof s);
                s.N = N; s.K = K; s.ns = ns;
                s.data = (uint8_t *)calloc(eb + 1, 1);
                codes = (uint8_t *)malloc(ns);
                for (i = 0; i < eb; i++) {
                    uint32_t v = qmx_test_rand();
                    uint8_t e = ex[(v >> 8) % 6];
                    if (mode == 1) e = ex[(i / K + (i % K) / 32) % 6];   /* one exponent per block */
                    s.data[i] = (uint8_t)((v & 0x80u) | (uint32_t)e << 2 | (v & 3u));
                    if (mode == 2 && (v >> 16) % 29 == 0)   /* Inf / NaN */
                        s.data[i] = (uint8_t)((v & 0x80u) | 0x7Cu | ((v >> 24) % 3 == 0 ? (v & 3u) : 0u));
                    if (mode == 3 && (v >> 16) % 23 == 0)   /* +-Inf only */
                        s.data[i] = (uint8_t)((v & 0x80u) | 0x7Cu);
                }
                for (i = 0; i < ns; i++) codes[i] = (uint8_t)(100 + qmx_test_rand() % 50);
                s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = s.data;
                s.w.data_bytes = eb; s.w.scale_codes = codes; s.w.n_scales = ns;
                snprintf(what, sizeof what, "mxfp8 e5m2 extremes mode %d", mode);
                CHECK(qmx_blockw_pack_size(&s.w, N, K, &bytes) == QMX_OK, "%s size", what);
                blob = (uint8_t *)malloc(bytes);
                CHECK(qmx_blockw_pack(&s.w, N, K, blob, bytes) == QMX_OK, "%s pack", what);
                check_kernel(&s, blob, bytes, M, 0, (int)(run % 3), what);
                check_kernel(&s, blob, bytes, M, 32, (int)((run + 1) % 3), what);
                check_kernel(&s, blob, bytes, M, 0, 1, what);
                /* finite X (xmode 0 / 1): an Inf code's own Inf / NaN outputs stay visible */
                check_kernel_f32(&s, blob, bytes, M, (int)(run % 2), what);
                free(blob); free(codes); free(s.data);
            }
}

/* MXFP8 on the Cortex-M55 MVE / Cortex-M4 DSP / RVV dots (qmx__bp8_dots, qmx__bp85_dots: E5M2
 * in int32 halves split at s = 16), every mantissa and sign at the exponent fields where the
 * groups or halves change: E4M3 0, 1, 4, 5, 8, 9, 12, 13, 15; E5M2 0, 1, 4, 5, 16, 17, 20, 21,
 * 29, 30. Mode 1: one non-finite code per row (E4M3 NaN, E5M2 Inf or NaN), its k moving with
 * the row; mode 2: every code the largest finite (E4M3 +-448, E5M2 +-57344) but one row with
 * NaN (E4M3) / -Inf (E5M2); ragged K, M 1 / 3. */
static void mxfp8_edges(int e5) {
    static const size_t Ms[] = {1, 3}, Ks[] = {40, 96};
    static const uint8_t ex4[9] = {0, 1, 4, 5, 8, 9, 12, 13, 15};
    static const uint8_t ex5[10] = {0, 1, 4, 5, 16, 17, 20, 21, 29, 30};
    const uint8_t *ex = e5 ? ex5 : ex4;
    const uint32_t nex = e5 ? 10u : 9u, mb = e5 ? 2u : 3u;
    size_t a, c, i, run;
    QMX_TEST_CASE(e5 ? "MXFP8 E5M2 blob: half / group-boundary exponents, Inf / NaN rows"
                     : "MXFP8 E4M3 blob: group-boundary exponents, NaN rows == blockw_dyn_i8");
    for (a = 0; a < 2; a++)
        for (c = 0; c < 2; c++)
            for (run = 0; run < 3; run++) {
                size_t M = Ms[a], N = 17, K = Ks[c], nb = (K + 31) / 32, eb = N * K;
                size_t bytes = 64, ns = N * nb;
                qmx_mx_config cfg;
                wset s;
                uint8_t *blob, *codes;
                int mode = (int)run;
                char what[96];
                memset(&cfg, 0, sizeof cfg);
                cfg.format = e5 ? QMX_MXFP8_E5M2 : QMX_MXFP8_E4M3; cfg.rule = QMX_MX_FLOOR;
                cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
                memset(&s, 0, sizeof s);
                s.N = N; s.K = K; s.ns = ns;
                s.data = (uint8_t *)calloc(eb + 1, 1);
                codes = (uint8_t *)malloc(ns);
                for (i = 0; i < eb; i++) {
                    uint32_t v = qmx_test_rand();
                    uint8_t cd = (uint8_t)((v & 0x80u) | (uint32_t)ex[(v >> 8) % nex] << mb |
                                           (v & ((1u << mb) - 1u)));
                    if (!e5 && (cd & 0x7F) == 0x7F) cd = (uint8_t)(cd ^ 1u);   /* finite */
                    if (mode == 2) cd = (uint8_t)((v & 0x80u) | (e5 ? 0x7Bu : 0x7Eu));
                    if (mode == 1 && i % K == (i / K * 7u) % K)
                        cd = (uint8_t)(e5 ? (v & 0x80u) | 0x7Cu | ((v >> 12) & 3u) : cd | 0x7Fu);
                    if (mode == 2 && i == K + K / 2) cd = e5 ? 0xFC : 0xFF;
                    s.data[i] = cd;
                }
                for (i = 0; i < ns; i++) codes[i] = (uint8_t)(100 + qmx_test_rand() % 50);
                s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = s.data;
                s.w.data_bytes = eb; s.w.scale_codes = codes; s.w.n_scales = ns;
                snprintf(what, sizeof what, "mxfp8 %s edges mode %d", e5 ? "e5m2" : "e4m3", mode);
                CHECK(qmx_blockw_pack_size(&s.w, N, K, &bytes) == QMX_OK, "%s size", what);
                blob = (uint8_t *)malloc(bytes);
                CHECK(qmx_blockw_pack(&s.w, N, K, blob, bytes) == QMX_OK, "%s pack", what);
                check_kernel(&s, blob, bytes, M, 0, (int)(run % 3), what);
                check_kernel(&s, blob, bytes, M, 32, 1, what);
                free(blob); free(codes); free(s.data);
            }
}

/* An independent reference for a hand-made case: int64 dots in double-free exact floats. */
static void hand_made(void) {
    /* N = 2, K = 64, int8 codes all 127 / all -128, scales 2 and 0.5: with X all 1 (sx = 1/127,
     * q = 127) block I = 32 * 127 * 127 = 516128 (row 0), -32 * 128 * 127 (row 1) */
    int8_t q[128];
    float sc[4] = {2.0f, 2.0f, 0.5f, 0.5f}, X[64], Y[2] = {0, 0};
    qmx_qconfig qc;
    qmx_blockw w;
    uint8_t blob[64 + 2 * (512 + 32)], ws[4096];
    size_t bytes = 0, i, need = 0;
    float sx = 1.0f / 127.0f, want0, want1, p;
    QMX_TEST_CASE("packed kernel: hand-made int8 extremes");
    for (i = 0; i < 64; i++) { q[i] = 127; q[64 + i] = -128; X[i] = 1.0f; }
    memset(&qc, 0, sizeof qc);
    qc.dtype = QMX_INT8; qc.granularity = QMX_PER_BLOCK; qc.outer = 2; qc.axis_len = 64;
    qc.inner = 1; qc.block_size = 32;
    memset(&w, 0, sizeof w);
    w.kind = QMX_BLOCKW_QCONFIG; w.qc = &qc; w.data = q; w.data_bytes = 128; w.scales = sc;
    w.n_scales = 4;
    CHECK(qmx_blockw_pack_size(&w, 2, 64, &bytes) == QMX_OK && bytes == 64 + 2 * (512 + 32),
          "size %u", (unsigned)bytes);
    CHECK(qmx_blockw_pack(&w, 2, 64, blob, sizeof blob) == QMX_OK, "pack");
    CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(1, 2, 64, NULL, &need) == QMX_OK &&
          need <= sizeof ws, "ws");
    CHECK(qmx_matmul_blockw_packed_dyn_i8(1, 2, 64, X, 64, blob, bytes, NULL, Y, 2, ws,
                                          sizeof ws) == QMX_OK, "run");
    /* sx = f32(1 / 127) as qmx_compute_qparams gives it: absmax / 127 */
    sx = 1.0f / 127.0f;
    p = 516128.0f * 2.0f; p = p * sx; want0 = 0.0f + p; want0 = want0 + p;
    p = -520192.0f * 0.5f; p = p * sx; want1 = 0.0f + p; want1 = want1 + p;
    CHECK(fb(Y[0]) == fb(want0) && fb(Y[1]) == fb(want1), "got %.9g %.9g want %.9g %.9g",
          (double)Y[0], (double)Y[1], (double)want0, (double)want1);
}

/* ---- ggml golden blocks ---- */
#define MAXG 64
static uint8_t g8[MAXG][QMX_GGML_Q8_0_BLOCK_BYTES], g4[MAXG][QMX_GGML_Q4_0_BLOCK_BYTES];
static unsigned n8, n4;

static int hexbytes(const char *s, uint8_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return 0;
        out[i] = (uint8_t)v;
    }
    return 1;
}

static void load_ggml(void) {
    FILE *f = qmx_test_open("interop_ggml.txt");
    static char line[2048];
    QMX_TEST_CASE("ggml golden file");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "q8_0 ", 5) == 0 && n8 < MAXG)
            n8 += (unsigned)hexbytes(line + 5, g8[n8], QMX_GGML_Q8_0_BLOCK_BYTES);
        else if (strncmp(line, "q4_0 ", 5) == 0 && n4 < MAXG)
            n4 += (unsigned)hexbytes(line + 5, g4[n4], QMX_GGML_Q4_0_BLOCK_BYTES);
    }
    fclose(f);
    CHECK(n8 >= 40 && n4 >= 40, "golden blocks: %u q8_0, %u q4_0", n8, n4);
}

static int d_zero(const uint8_t *blk) { return (blk[0] | (blk[1] & 0x7F)) == 0; }

static void ggml_case(int q8) {
    /* N = 5 rows of K = 256 (8 blocks): 40 golden blocks */
    enum { N = 5, K = 256, NB = N * K / 32 };
    size_t bb = q8 ? QMX_GGML_Q8_0_BLOCK_BYTES : QMX_GGML_Q4_0_BLOCK_BYTES, i, bytes = 0, bad = 0;
    int type = q8 ? QMX_BLOCKW_GGML_Q8_0 : QMX_BLOCKW_GGML_Q4_0;
    static uint8_t in[NB * 34], back[NB * 34], blob[64 + 8 * (512 + 32)];
    static int8_t q8v[N * K];
    static uint8_t q4v[N * K / 2];
    static float sc[NB];
    static int32_t zp[NB];
    wset s;
    QMX_TEST_CASE(q8 ? "ggml Q8_0 -> blob -> Q8_0 and the kernel" : "ggml Q4_0 -> blob -> Q4_0 and the kernel");
    if ((q8 ? n8 : n4) < NB) return;
    for (i = 0; i < NB; i++) memcpy(in + i * bb, q8 ? g8[i] : g4[i], bb);
    CHECK(qmx_blockw_pack_ggml_size(type, N, K, &bytes) == QMX_OK && bytes <= sizeof blob,
          "size %u", (unsigned)bytes);
    CHECK(bytes == 64 + 8 * (q8 ? 512 + 32 : 256 + 32 + 16), "size %u", (unsigned)bytes);
    CHECK(qmx_blockw_pack_ggml(type, in, NB * bb, N, K, blob, bytes) == QMX_OK, "pack");
    memset(back, 0xEE, sizeof back);
    CHECK(qmx_blockw_unpack_ggml(blob, bytes, type, back, NB * bb) == QMX_OK, "unpack");
    for (i = 0; i < NB; i++)
        if (!d_zero(in + i * bb)) bad += memcmp(in + i * bb, back + i * bb, bb) != 0;
    CHECK(bad == 0, "%u blocks differ", (unsigned)bad);
    CHECK(NB * bb == sizeof back || back[NB * bb] == 0xEE, "wrote past the blocks");
    /* the kernel on the blob == dyn_i8 on qmx.h's conversion of the same blocks */
    memset(&s, 0, sizeof s);
    s.N = N; s.K = K; s.ns = NB;
    s.qc.dtype = q8 ? QMX_INT8 : QMX_UINT4;
    s.qc.granularity = QMX_PER_BLOCK; s.qc.outer = N; s.qc.axis_len = K; s.qc.inner = 1;
    s.qc.block_size = 32; s.qc.asymmetric = !q8;
    s.qc.recipe = q8 ? QMX_RECIPE_AQT : QMX_RECIPE_TFLITE;
    if (q8) {
        CHECK(qmx_ggml_q8_0_to_qmx(in, NB * bb, N * K, q8v, N * K, sc, NB) == QMX_OK, "to_qmx");
    } else {
        CHECK(qmx_ggml_q4_0_to_qmx(in, NB * bb, N * K, q4v, N * K / 2, sc, zp, NB) == QMX_OK,
              "to_qmx");
    }
    s.w.kind = QMX_BLOCKW_QCONFIG; s.w.qc = &s.qc;
    s.w.data = q8 ? (const void *)q8v : (const void *)q4v;
    s.w.data_bytes = q8 ? N * K : N * K / 2;
    s.w.scales = sc; s.w.zero_points = q8 ? NULL : zp; s.w.n_scales = NB;
    check_kernel(&s, blob, bytes, 1, 0, 0, "ggml M 1");
    check_kernel(&s, blob, bytes, 3, 32, 0, "ggml M 3 ab 32");
    check_kernel_f32(&s, blob, bytes, 6, 0, "ggml f32 M 6");
    {   /* and packing qmx's conversion gives the same blob bytes */
        static uint8_t blob2[sizeof blob];
        size_t b2 = 0;
        CHECK(qmx_blockw_pack_size(&s.w, N, K, &b2) == QMX_OK && b2 == bytes, "qmx size");
        CHECK(qmx_blockw_pack(&s.w, N, K, blob2, b2) == QMX_OK &&
              memcmp(blob, blob2, bytes) == 0, "blob from qmx != blob from ggml");
    }
}

/* ggml block_mxfp4 (random bytes: every byte is valid): pack_ggml -> unpack_ggml gives the
 * same bytes, the blob equals qmx_blockw_pack of qmx_mx_from_ggml's storage (rule GGML), and
 * the kernel equals qmx_matmul_blockw_dyn_i8 on that storage */
/* ggml block_q4_1 (ggml-common.h: ggml_half d, ggml_half m, uint8_t qs[16]; element j in the
 * low nibble of qs[j], j + 16 in the high; dequantize_row_q4_1: x = q d + m). Blocks written
 * here from that definition (random finite d and m, random codes); pack_ggml -> unpack_ggml
 * gives the same bytes, and both kernels equal an independent reference of the documented
 * orders: dyn_i8 per block p = ((float)I * d) * sx, Y += p, t = ((float)qsum * sx) * m,
 * Y += t; f32: w = f32(f32(q d) + m), sum += x * w in increasing k. */
static float q41_half(uint32_t r) {   /* a finite binary16 of moderate size, either sign */
    uint16_t h = (uint16_t)((r & 0x83FFu) | ((10u + (r >> 10) % 12u) << 10));
    return qmx_f16_to_f32(h);
}
static void ggml_q41(void) {
    static const size_t Ms[] = {1, 2, 17}, Ns[] = {1, 17, 33}, Ks[] = {32, 96, 4096};
    size_t a, b, c, i;
    QMX_TEST_CASE("ggml block_q4_1 -> blob -> block_q4_1, kernels == the documented order");
    for (a = 0; a < 3; a++)
        for (b = 0; b < 3; b++)
            for (c = 0; c < 3; c++) {
                size_t M = Ms[a], N = Ns[b], K = Ks[c], nb = K / 32, nbt = N * nb, bytes = 0, m, n, k;
                size_t ab = c == 1 ? 32 : 0, nab = ab ? K / ab : 1, alen = ab ? ab : K;
                uint8_t *in = (uint8_t *)malloc(nbt * 20), *back = (uint8_t *)malloc(nbt * 20), *blob;
                float *X = (float *)malloc(M * K * sizeof(float)), *Y = (float *)malloc(M * N * sizeof(float));
                float *R = (float *)malloc(M * N * sizeof(float)), *W = (float *)malloc(N * K * sizeof(float));
                float *sx = (float *)malloc(M * nab * sizeof(float));
                int8_t *q = (int8_t *)malloc(M * K);
                size_t ws = 0, badn = 0;
                void *wsp;
                qmx_blockw_packed_desc d;
                qmx_blockw_dyn_opts o;
                qmx_qconfig cfg;
                char what[64];
                snprintf(what, sizeof what, "q4_1 M %u N %u K %u", (unsigned)M, (unsigned)N, (unsigned)K);
                for (i = 0; i < nbt; i++) {
                    uint16_t dh = qmx_f32_to_f16(q41_half(qmx_test_rand()));
                    uint16_t mh = qmx_f32_to_f16(q41_half(qmx_test_rand()));
                    uint8_t *g = in + 20 * i;
                    g[0] = (uint8_t)dh; g[1] = (uint8_t)(dh >> 8); g[2] = (uint8_t)mh; g[3] = (uint8_t)(mh >> 8);
                    for (k = 0; k < 16; k++) g[4 + k] = (uint8_t)qmx_test_rand();
                }
                for (n = 0; n < N; n++)   /* dequantize_row_q4_1, f32(f32(q d) + m) */
                    for (k = 0; k < K; k++) {
                        const uint8_t *g = in + 20 * (n * nb + k / 32);
                        volatile float v = (float)((k % 32 < 16 ? g[4 + k % 32] : g[4 + k % 32 - 16] >> 4) & 15) *
                                           qmx_f16_to_f32((uint16_t)(g[0] | g[1] << 8));
                        W[n * K + k] = v + qmx_f16_to_f32((uint16_t)(g[2] | g[3] << 8));
                    }
                CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q4_1, N, K, &bytes) == QMX_OK &&
                      bytes == 64 + ((N + 15) / 16) * nb * 320, "%s size", what);
                blob = (uint8_t *)malloc(bytes);
                CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, in, nbt * 20, N, K, blob, bytes) == QMX_OK,
                      "%s pack", what);
                memset(&d, 0, sizeof d);
                CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK && d.q4_1 == 1 &&
                      d.dtype == QMX_UINT4 && d.has_zp == 0 && d.block == 32, "%s info", what);
                CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_Q4_1, back, nbt * 20) == QMX_OK &&
                      memcmp(back, in, nbt * 20) == 0, "%s: ggml round trip", what);
                CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_Q4_0, back, nbt * 20) ==
                      QMX_ERR_UNSUPPORTED && qmx_blockw_unpack_mx(blob, bytes, back, nbt * 20, back, nbt) ==
                      QMX_ERR_UNSUPPORTED, "%s: other unpackers", what);
                for (i = 0; i < M * K; i++) X[i] = (rnd_unit() - 0.5f) * 8.0f;
                /* the activations as qmx_matmul_blockw_dyn_i8 quantizes them */
                memset(&cfg, 0, sizeof cfg);
                cfg.dtype = QMX_INT8; cfg.granularity = QMX_PER_TENSOR;
                cfg.recipe = QMX_RECIPE_TFLITE; cfg.rounding = QMX_ROUND_NEAREST_EVEN;
                for (m = 0; m < M; m++)
                    for (i = 0; i < nab; i++) {
                        CHECK(qmx_compute_qparams(&cfg, X + m * K + i * alen, alen, sx + m * nab + i, 1, NULL) == QMX_OK &&
                              qmx_quantize(&cfg, X + m * K + i * alen, alen, sx + m * nab + i, 1, NULL,
                                           q + m * K + i * alen, alen) == QMX_OK, "%s quantize", what);
                    }
                for (m = 0; m < M; m++)
                    for (n = 0; n < N; n++) {
                        volatile float y = 0.0f;
                        size_t bk;
                        for (bk = 0; bk < nb; bk++) {
                            const uint8_t *g = in + 20 * (n * nb + bk);
                            int32_t I = 0, qsum = 0;
                            float s = sx[m * nab + (bk * 32) / alen];
                            volatile float p, t;
                            for (k = 0; k < 32; k++) {
                                int32_t u = (k < 16 ? g[4 + k] : g[4 + k - 16] >> 4) & 15;
                                I += q[m * K + bk * 32 + k] * u;
                                qsum += q[m * K + bk * 32 + k];
                            }
                            p = (float)I;
                            p = p * qmx_f16_to_f32((uint16_t)(g[0] | g[1] << 8));
                            p = p * s;
                            y = y + p;
                            t = (float)qsum;
                            t = t * s;
                            t = t * qmx_f16_to_f32((uint16_t)(g[2] | g[3] << 8));
                            y = y + t;
                        }
                        R[m * N + n] = y;
                    }
                o.act_block = ab;
                CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, &o, &ws) == QMX_OK, "%s ws", what);
                wsp = malloc(ws);
                CHECK(qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, K, blob, bytes, &o, Y, N, wsp, ws) == QMX_OK,
                      "%s dyn", what);
                for (i = 0; i < M * N; i++) badn += fb(Y[i]) != fb(R[i] != R[i] ? qmx_test_bits_f32(0x7FC00000u) : R[i]);
                CHECK(badn == 0, "%s dyn: %u outputs differ", what, (unsigned)badn);
                free(wsp);
                for (m = 0; m < M; m++)   /* f32: sum += x w, k increasing */
                    for (n = 0; n < N; n++) {
                        volatile float y = 0.0f, p;
                        for (k = 0; k < K; k++) { p = X[m * K + k] * W[n * K + k]; y = y + p; }
                        R[m * N + n] = y;
                    }
                CHECK(qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &ws) == QMX_OK, "%s ws f32", what);
                wsp = malloc(ws);
                CHECK(qmx_matmul_blockw_packed_f32(M, N, K, X, K, blob, bytes, Y, N, wsp, ws) == QMX_OK,
                      "%s f32", what);
                badn = 0;
                for (i = 0; i < M * N; i++) badn += fb(Y[i]) != fb(R[i] != R[i] ? qmx_test_bits_f32(0x7FC00000u) : R[i]);
                CHECK(badn == 0, "%s f32: %u outputs differ", what, (unsigned)badn);
                if (M == 1) {   /* the GEMV with NaN / +-Inf, then overflowing activations */
                    int xm;
                    for (xm = 0; xm < 2; xm++) {
                        for (k = 0; k < K; k++)
                            X[k] = xm ? (k % 2 ? -0.0f : (rnd_unit() - 0.5f) * 8e37f)
                               : k % 53 == 5 ? qmx_test_bits_f32(k % 3 ? 0x7F800000u ^ (uint32_t)((k & 8) << 28)
                                                                       : 0x7FC00001u)
                                             : (rnd_unit() - 0.5f) * 8.0f;
                        for (n = 0; n < N; n++) {
                            volatile float y = 0.0f, p;
                            for (k = 0; k < K; k++) { p = X[k] * W[n * K + k]; y = y + p; }
                            R[n] = y;
                        }
                        CHECK(qmx_matmul_blockw_packed_f32(1, N, K, X, K, blob, bytes, Y, N, wsp, ws) == QMX_OK,
                              "%s f32 xm %d", what, xm);
                        badn = 0;
                        for (n = 0; n < N; n++) badn += fb(Y[n]) != fb(R[n] != R[n] ? qmx_test_bits_f32(0x7FC00000u) : R[n]);
                        CHECK(badn == 0, "%s f32 xm %d: %u outputs differ", what, xm, (unsigned)badn);
                    }
                }
                free(wsp); free(in); free(back); free(blob); free(X); free(Y); free(R); free(W); free(sx); free(q);
            }
}

static void ggml_mxfp4(void) {
    enum { N = 19, K = 128, NB = N * K / 32 };
    static uint8_t in[NB * 17], back[NB * 17 + 1], el[N * K / 2], codes[NB];
    static uint8_t blob[64 + 2 * 4 * (256 + 16)], blob2[sizeof blob];
    size_t i, bytes = 0, b2 = 0;
    qmx_mx_config cfg;
    wset s;
    QMX_TEST_CASE("ggml block_mxfp4 -> blob -> block_mxfp4 and the kernel");
    for (i = 0; i < sizeof in; i++) in[i] = (uint8_t)qmx_test_rand();
    for (i = 0; i < NB; i++) in[i * 17] = (uint8_t)(115 + i % 20);   /* moderate scales ... */
    in[0] = 0; in[17] = 255; in[34] = 1;                                /* ... and the ends */
    CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_MXFP4, N, K, &bytes) == QMX_OK &&
          bytes == sizeof blob, "size %u", (unsigned)bytes);
    CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_MXFP4, in, sizeof in, N, K, blob, bytes) == QMX_OK,
          "pack");
    memset(back, 0xEE, sizeof back);
    CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_MXFP4, back, NB * 17) == QMX_OK,
          "unpack");
    CHECK(memcmp(in, back, sizeof in) == 0 && back[NB * 17] == 0xEE, "bytes differ");
    CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_Q4_0, back, sizeof back) ==
          QMX_ERR_UNSUPPORTED, "MXFP4 blob as Q4_0");
    memset(&cfg, 0, sizeof cfg);
    cfg.format = QMX_MXFP4; cfg.rule = QMX_MX_GGML; cfg.block_size = 32;
    cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
    CHECK(qmx_mx_from_ggml(&cfg, in, sizeof in, N * K, el, sizeof el, codes, NB) == QMX_OK,
          "qmx_mx_from_ggml");
    memset(&s, 0, sizeof s);
    s.N = N; s.K = K; s.ns = NB;
    s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = el; s.w.data_bytes = sizeof el;
    s.w.scale_codes = codes; s.w.n_scales = NB;
    CHECK(qmx_blockw_pack_size(&s.w, N, K, &b2) == QMX_OK && b2 == bytes &&
          qmx_blockw_pack(&s.w, N, K, blob2, b2) == QMX_OK && memcmp(blob, blob2, bytes) == 0,
          "blob from qmx != blob from ggml");
    check_kernel(&s, blob, bytes, 1, 0, 0, "ggml mxfp4 M 1");
    check_kernel(&s, blob, bytes, 6, 32, 1, "ggml mxfp4 M 6 ab 32");
    check_kernel_f32(&s, blob, bytes, 6, 3, "ggml mxfp4 f32 M 6");
}

/* ggml block_nvfp4 (type 40; ggml-common.h: uint8_t d[4], UE4M3 scales one per 16, then
 * qs[32] with qs[8 s + t] = element 16 s + t (low nibble) | 16 s + t + 8 (high); 36 bytes per
 * 64 weights). Golden blocks: the gnv lines of tests/data/mx_golden.txt (ggml's own
 * quantize_row_nvfp4_ref) with the y of the case before each (ggml's dequantization); random
 * bytes (every byte is valid: any scale byte, any code). pack_ggml -> unpack_ggml gives the
 * same bytes; the blob equals qmx_blockw_pack of qmx_mx_from_ggml's storage (rule GGML) byte
 * for byte; the packed kernels equal qmx_matmul_blockw_dyn_i8 / _f32 on that storage, and the
 * f32 kernel with X = I (one row per k) gives ggml's golden dequantized weights. */
#define NVG 8
static uint8_t gnv[NVG][36];
static uint32_t gnv_y[NVG][64];
static unsigned n_gnv;

static void load_gnv(void) {
    FILE *f = qmx_test_open("mx_golden.txt");
    static char line[4096];
    char last[96] = "";
    uint32_t y[64];
    int have_y = 0;
    QMX_TEST_CASE("mx_golden.txt: ggml block_nvfp4 blocks and their dequantization");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "mx ", 3) == 0) {
            if (sscanf(line + 3, "%95s", last) != 1) last[0] = 0;
            have_y = 0;
        } else if (strncmp(line, "y ", 2) == 0 && strncmp(last, "ggml_nvfp4", 10) == 0) {
            const char *p = line + 2;
            int k, nch = 0;
            have_y = 1;
            for (k = 0; k < 64 && have_y; k++) {
                unsigned v;
                if (sscanf(p, "%x%n", &v, &nch) != 1) have_y = 0;
                y[k] = (uint32_t)v;
                p += nch;
            }
        } else if (strncmp(line, "gnv ", 4) == 0 && n_gnv < NVG) {
            char name[96];
            unsigned cnt = 0;
            int off = 0;
            if (sscanf(line + 4, "%95s %u %n", name, &cnt, &off) == 2 && cnt == 64 && have_y &&
                off > 0 && strcmp(name, last) == 0 && hexbytes(line + 4 + off, gnv[n_gnv], 36)) {
                memcpy(gnv_y[n_gnv], y, sizeof y);
                n_gnv++;
            }
        }
    }
    fclose(f);
    CHECK(n_gnv >= 5, "golden block_nvfp4 blocks with y: %u", n_gnv);
}

/* N x K / 64 blocks in: the checks above; ygold ([N][K] float bits) or NULL; kern: kernels */
static void nv_check(const uint8_t *in, size_t N, size_t K, const uint32_t *ygold, int kern,
                     const char *what) {
    size_t nbt = N * (K / 64), nb = K / 16, bytes = 0, b2 = 0, i, k, n, bad = 0;
    uint8_t *blob, *blob2, *back, *el, *codes, *el2, *codes2;
    qmx_mx_config cfg;
    qmx_blockw_packed_desc d;
    wset s;
    CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_NVFP4, N, K, &bytes) == QMX_OK &&
          bytes == 64 + ((N + 15) / 16) * nb * 144, "%s size %u", what, (unsigned)bytes);
    blob = (uint8_t *)malloc(bytes + 1);
    blob2 = (uint8_t *)malloc(bytes + 1);
    back = (uint8_t *)malloc(nbt * 36 + 1);
    el = (uint8_t *)calloc(N * K / 2 + 1, 1); el2 = (uint8_t *)calloc(N * K / 2 + 1, 1);
    codes = (uint8_t *)malloc(N * nb); codes2 = (uint8_t *)malloc(N * nb);
    memset(blob, 0xA5, bytes + 1);
    CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, in, nbt * 36, N, K, blob, bytes) == QMX_OK &&
          blob[bytes] == 0xA5, "%s pack", what);
    memset(&d, 0, sizeof d);
    CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK && d.nvfp4 == 1 && d.block == 16 &&
          d.nblk == nb && d.scale_kind == 6 && d.tensor_scale == 0.0f && d.N == N && d.K == K &&
          d.has_zp == 0 && blob[16] == 5 && blob[17] == 16 && blob[18] == 6, "%s info", what);
    memset(back, 0xEE, nbt * 36 + 1);
    CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_NVFP4, back, nbt * 36) == QMX_OK &&
          memcmp(back, in, nbt * 36) == 0 && back[nbt * 36] == 0xEE,
          "%s: pack_ggml -> unpack_ggml differs", what);
    /* the documented other path: qmx_mx_from_ggml (rule GGML), then qmx_blockw_pack */
    memset(&cfg, 0, sizeof cfg);
    cfg.format = QMX_NVFP4; cfg.rule = QMX_MX_GGML;
    cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
    CHECK(qmx_mx_from_ggml(&cfg, in, nbt * 36, N * K, el, N * K / 2, codes, N * nb) == QMX_OK,
          "%s qmx_mx_from_ggml", what);
    memset(&s, 0, sizeof s);
    s.N = N; s.K = K; s.ns = N * nb;
    s.w.kind = QMX_BLOCKW_MX; s.w.mx = &cfg; s.w.data = el; s.w.data_bytes = N * K / 2;
    s.w.scale_codes = codes; s.w.n_scales = N * nb;
    memset(blob2, 0x5A, bytes + 1);
    CHECK(qmx_blockw_pack_size(&s.w, N, K, &b2) == QMX_OK && b2 == bytes &&
          qmx_blockw_pack(&s.w, N, K, blob2, b2) == QMX_OK && memcmp(blob, blob2, bytes) == 0,
          "%s: blob from ggml != qmx_mx_from_ggml + qmx_blockw_pack", what);
    CHECK(qmx_blockw_unpack_mx(blob, bytes, el2, N * K / 2, codes2, N * nb) == QMX_OK &&
          memcmp(el, el2, N * K / 2) == 0 && memcmp(codes, codes2, N * nb) == 0,
          "%s: unpack_mx != qmx_mx_from_ggml", what);
    if (kern) {
        size_t M = 3, ws = 0, wf = 0;
        float *X = (float *)malloc(M * K * sizeof(float)), *Ya = (float *)malloc(M * N * 4);
        float *Yb = (float *)malloc(M * N * 4);
        void *wsp;
        /* the kernels on the direct blob and on the other path's: the same bits */
        for (i = 0; i < M * K; i++) X[i] = (rnd_unit() - 0.5f) * 8.0f;
        CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, NULL, &ws) == QMX_OK &&
              qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &wf) == QMX_OK, "%s ws", what);
        wsp = malloc(ws > wf ? ws : wf);
        CHECK(qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, K, blob, bytes, NULL, Ya, N, wsp, ws) ==
                  QMX_OK &&
              qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, K, blob2, bytes, NULL, Yb, N, wsp, ws) ==
                  QMX_OK && memcmp(Ya, Yb, M * N * 4) == 0, "%s: dyn_i8 on the two blobs", what);
        CHECK(qmx_matmul_blockw_packed_f32(M, N, K, X, K, blob, bytes, Ya, N, wsp, wf) == QMX_OK &&
              qmx_matmul_blockw_packed_f32(M, N, K, X, K, blob2, bytes, Yb, N, wsp, wf) == QMX_OK &&
              memcmp(Ya, Yb, M * N * 4) == 0, "%s: f32 on the two blobs", what);
        free(X); free(Ya); free(Yb); free(wsp);
        /* and qmx_matmul_blockw_dyn_i8 / _f32 on the qmx storage */
        check_kernel(&s, blob, bytes, 1, 0, 0, what);
        check_kernel(&s, blob, bytes, 5, 32, 1, what);
        check_kernel_f32(&s, blob, bytes, 2, 0, what);
    }
    if (ygold) {   /* X = I: Y[k][n] = +0 + ... + 1 W[n][k] + ... = W[n][k] (up to a zero's sign) */
        size_t wf = 0;
        float *X = (float *)calloc(K * K, sizeof(float)), *Y = (float *)malloc(K * N * 4);
        void *wsp;
        for (k = 0; k < K; k++) X[k * K + k] = 1.0f;
        CHECK(qmx_matmul_blockw_packed_f32_workspace_size(K, N, K, &wf) == QMX_OK, "%s ws", what);
        wsp = malloc(wf);
        CHECK(qmx_matmul_blockw_packed_f32(K, N, K, X, K, blob, bytes, Y, N, wsp, wf) == QMX_OK,
              "%s f32 X = I", what);
        for (n = 0; n < N; n++)
            for (k = 0; k < K; k++) {
                float g = qmx_test_bits_f32(ygold[n * K + k]), v = Y[k * N + n];
                bad += !(fb(v) == fb(g) || (v == 0.0f && g == 0.0f));
            }
        CHECK(bad == 0, "%s: %u weights differ from ggml's dequantization", what, (unsigned)bad);
        free(X); free(Y); free(wsp);
    }
    free(blob); free(blob2); free(back); free(el); free(el2); free(codes); free(codes2);
}

static void ggml_nvfp4(void) {
    static const size_t Ns[] = {1, 17, 33, 2}, Ks[] = {64, 128, 192, 4096};
    static const uint8_t spec[8] = {0x00, 0x80, 0x7F, 0xFF, 0x7E, 0xFE, 0x01, 0x81};
    size_t i, c, r;
    load_gnv();
    QMX_TEST_CASE("ggml block_nvfp4 -> blob -> block_nvfp4, == qmx_mx_from_ggml + pack, kernels");
    if (n_gnv >= 5) {   /* the golden blocks: 5 rows of one block, one row of 5 blocks */
        uint8_t in[5 * 36];
        uint32_t y[5 * 64];
        for (i = 0; i < 5; i++) {
            memcpy(in + 36 * i, gnv[i], 36);
            memcpy(y + 64 * i, gnv_y[i], sizeof gnv_y[i]);
        }
        nv_check(in, 5, 64, y, 1, "golden nvfp4 N 5 K 64");
        nv_check(in, 1, 320, y, 1, "golden nvfp4 N 1 K 320");
    }
    for (r = 0; r < 3; r++)
        for (c = 0; c < 4; c++) {   /* random bytes: r 0 moderate scales, 1 special, 2 any */
            size_t N = Ns[c], K = Ks[c], nbt = N * K / 64;
            uint8_t *in = (uint8_t *)malloc(nbt * 36);
            char what[64];
            if (BW_EMU_SMALL && K == 4096 && r) { free(in); continue; }
            for (i = 0; i < nbt * 36; i++) in[i] = (uint8_t)qmx_test_rand();
            for (i = 0; i < nbt * 4; i++) {
                uint8_t *sc = in + 36 * (i / 4) + i % 4;
                if (r == 0) *sc = (uint8_t)(0x20 + *sc % 0x40);
                if (r == 1) *sc = spec[*sc % 8];
            }
            snprintf(what, sizeof what, "random nvfp4 r %u N %u K %u", (unsigned)r, (unsigned)N,
                     (unsigned)K);
            nv_check(in, N, K, NULL, K != 4096 || r == 0, what);
            free(in);
        }
    {   /* a FLOOR (E4M3) blob: unpack_ggml gives qmx_mx_to_ggml's bytes without a tensor scale,
         * QMX_ERR_UNSUPPORTED with one (the blocks untouched) */
        enum { N = 3, K = 128 };
        static uint8_t el[N * K / 2], sc[N * K / 16], blob[64 + 8 * 144], g1[N * 2 * 36 + 1],
            g2[sizeof g1];
        qmx_mx_config cfg;
        qmx_blockw w;
        size_t bytes = 0;
        for (i = 0; i < sizeof el; i++) el[i] = (uint8_t)qmx_test_rand();
        for (i = 0; i < sizeof sc; i++) sc[i] = (uint8_t)qmx_test_rand();
        memset(&cfg, 0, sizeof cfg);
        cfg.format = QMX_NVFP4; cfg.rule = QMX_MX_FLOOR;
        cfg.outer = N; cfg.axis_len = K; cfg.inner = 1;
        memset(&w, 0, sizeof w);
        w.kind = QMX_BLOCKW_MX; w.mx = &cfg; w.data = el; w.data_bytes = sizeof el;
        w.scale_codes = sc; w.n_scales = sizeof sc;
        CHECK(qmx_blockw_pack_size(&w, N, K, &bytes) == QMX_OK && bytes == sizeof blob &&
              qmx_blockw_pack(&w, N, K, blob, bytes) == QMX_OK, "floor pack");
        memset(g1, 0xEE, sizeof g1);
        CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_NVFP4, g1, sizeof g1 - 1) ==
                  QMX_OK && qmx_mx_to_ggml(&cfg, el, sizeof el, sc, sizeof sc, N * K, g2,
                                           sizeof g2 - 1) == QMX_OK &&
              memcmp(g1, g2, sizeof g1 - 1) == 0 && g1[sizeof g1 - 1] == 0xEE,
              "floor blob -> block_nvfp4 != qmx_mx_to_ggml");
        cfg.tensor_scale = 0.25f;
        CHECK(qmx_blockw_pack(&w, N, K, blob, bytes) == QMX_OK, "floor pack ts");
        memset(g1, 0xEE, sizeof g1);
        CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_NVFP4, g1, sizeof g1) ==
              QMX_ERR_UNSUPPORTED, "a blob with a tensor scale");
        for (i = 0; i < sizeof g1; i++) if (g1[i] != 0xEE) break;
        CHECK(i == sizeof g1, "blocks written on error");
    }
}

/* ---- bad input ---- */
static void bad_input(void) {
    wset s;
    uint8_t *blob, *bad;
    size_t bytes = 0, need = 0, i, M = 3;
    float X[3 * 96], Y[3 * 17];
    static unsigned char ws[1 << 14];
    qmx_blockw_dyn_opts o;
    qmx_status st;
    QMX_TEST_CASE("bad input: a status, Y and workspace untouched");
    make_w(&s, T_UINT4ZP, 17, 96, 0, 1);
    blob = pack_w(&s, &bytes);
    CHECK(blob != NULL, "pack");
    if (!blob) { free_w(&s); return; }
    bad = (uint8_t *)malloc(bytes);
    for (i = 0; i < 3 * 96; i++) X[i] = (float)((int)(i % 13) - 6);
    CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, 17, 96, NULL, &need) == QMX_OK &&
          need < sizeof ws, "ws");
#define RUN(expect, MM, NN, KK, XX, LDX, B, BB, O, YY, LDY, W, WB, what)                        \
    do {                                                                                       \
        for (i = 0; i < 3 * 17; i++) Y[i] = -3.0f;                                             \
        memset(ws, 0xA5, sizeof ws);                                                           \
        st = qmx_matmul_blockw_packed_dyn_i8(MM, NN, KK, XX, LDX, B, BB, O, YY, LDY, W, WB);   \
        CHECK(st == (expect), "%s: got %d want %d", what, (int)st, (int)(expect));              \
        for (i = 0; i < 3 * 17; i++) if (fb(Y[i]) != fb(-3.0f)) break;                         \
        CHECK(i == 3 * 17, "%s: Y written", what);                                             \
        for (i = 0; i < sizeof ws; i++) if (ws[i] != 0xA5) break;                              \
        CHECK(i == sizeof ws, "%s: workspace written", what);                                  \
    } while (0)
    CHECK(qmx_matmul_blockw_packed_dyn_i8(M, 17, 96, X, 96, blob, bytes, NULL, Y, 17, ws,
                                          need) == QMX_OK, "the control call");
    RUN(QMX_ERR_NULL, M, 17, 96, NULL, 96, blob, bytes, NULL, Y, 17, ws, need, "X NULL");
    RUN(QMX_ERR_NULL, M, 17, 96, X, 96, NULL, bytes, NULL, Y, 17, ws, need, "blob NULL");
    RUN(QMX_ERR_NULL, M, 17, 96, X, 96, blob, bytes, NULL, Y, 17, NULL, need, "ws NULL");
    RUN(QMX_ERR_SIZE, 0, 17, 96, X, 96, blob, bytes, NULL, Y, 17, ws, need, "M 0");
    RUN(QMX_ERR_SHAPE, M, 17, 96, X, 95, blob, bytes, NULL, Y, 17, ws, need, "ldx");
    RUN(QMX_ERR_SHAPE, M, 16, 96, X, 96, blob, bytes, NULL, Y, 17, ws, need, "N mismatch");
    RUN(QMX_ERR_SHAPE, 1, 17, 64, X, 96, blob, bytes, NULL, Y, 17, ws, need, "K mismatch");
    RUN(QMX_ERR_BUFFER_TOO_SMALL, M, 17, 96, X, 96, blob, bytes - 1, NULL, Y, 17, ws, need,
        "truncated blob");
    RUN(QMX_ERR_BUFFER_TOO_SMALL, M, 17, 96, X, 96, blob, 63, NULL, Y, 17, ws, need,
        "blob shorter than its header");
    RUN(QMX_ERR_BUFFER_TOO_SMALL, M, 17, 96, X, 96, blob, bytes, NULL, Y, 17, ws, need - 1,
        "workspace one byte short");
    o.act_block = 48;
    RUN(QMX_ERR_UNSUPPORTED, M, 17, 96, X, 96, blob, bytes, &o, Y, 17, ws, need,
        "act_block 48");
    memcpy(bad, blob, bytes); bad[0] = 'X';
    RUN(QMX_ERR_PARSE, M, 17, 96, X, 96, bad, bytes, NULL, Y, 17, ws, need, "magic");
    memcpy(bad, blob, bytes); bad[16] = 9;
    RUN(QMX_ERR_PARSE, M, 17, 96, X, 96, bad, bytes, NULL, Y, 17, ws, need, "element");
    memcpy(bad, blob, bytes); bad[17] = 64;
    RUN(QMX_ERR_PARSE, M, 17, 96, X, 96, bad, bytes, NULL, Y, 17, ws, need, "block");
    memcpy(bad, blob, bytes); bad[40] = 1;
    RUN(QMX_ERR_PARSE, M, 17, 96, X, 96, bad, bytes, NULL, Y, 17, ws, need, "reserved");
    memcpy(bad, blob, bytes); bad[18] = 0;   /* f32 scales: a bigger blob than given */
    RUN(QMX_ERR_BUFFER_TOO_SMALL, M, 17, 96, X, 96, bad, bytes, NULL, Y, 17, ws, need,
        "header says float32 scales");
    X[5] = qmx_test_bits_f32(0x7FC00000u);
    RUN(QMX_ERR_NONFINITE, M, 17, 96, X, 96, blob, bytes, NULL, Y, 17, ws, need, "NaN in X");
    X[5] = 0.0f;
    /* the f32 x blob kernel: the same checks (no act_block, no activation pass) */
    {
        size_t nf = 0;
        CHECK(qmx_matmul_blockw_packed_f32_workspace_size(M, 17, 96, &nf) == QMX_OK &&
              nf < sizeof ws, "f32 ws");
        CHECK(qmx_matmul_blockw_packed_f32_workspace_size(M, 17, 96, NULL) == QMX_ERR_NULL &&
              qmx_matmul_blockw_packed_f32_workspace_size(M, 0, 96, &nf) == QMX_ERR_SIZE,
              "f32 ws: NULL, N 0");
#define RUNF(expect, MM, NN, KK, XX, LDX, B, BB, YY, LDY, W, WB, what)                          \
    do {                                                                                       \
        for (i = 0; i < 3 * 17; i++) Y[i] = -3.0f;                                             \
        memset(ws, 0xA5, sizeof ws);                                                           \
        st = qmx_matmul_blockw_packed_f32(MM, NN, KK, XX, LDX, B, BB, YY, LDY, W, WB);          \
        CHECK(st == (expect), "f32 %s: got %d want %d", what, (int)st, (int)(expect));          \
        for (i = 0; i < 3 * 17; i++) if (fb(Y[i]) != fb(-3.0f)) break;                         \
        CHECK(i == 3 * 17, "f32 %s: Y written", what);                                         \
        for (i = 0; i < sizeof ws; i++) if (ws[i] != 0xA5) break;                              \
        CHECK(i == sizeof ws, "f32 %s: workspace written", what);                              \
    } while (0)
        RUNF(QMX_ERR_NULL, M, 17, 96, NULL, 96, blob, bytes, Y, 17, ws, nf, "X NULL");
        RUNF(QMX_ERR_NULL, M, 17, 96, X, 96, blob, bytes, NULL, 17, ws, nf, "Y NULL");
        RUNF(QMX_ERR_SIZE, M, 17, 0, X, 96, blob, bytes, Y, 17, ws, nf, "K 0");
        RUNF(QMX_ERR_SHAPE, M, 17, 96, X, 96, blob, bytes, Y, 16, ws, nf, "ldy");
        RUNF(QMX_ERR_SHAPE, M, 16, 96, X, 96, blob, bytes, Y, 17, ws, nf, "N mismatch");
        RUNF(QMX_ERR_OVERFLOW, (size_t)-1 / 8, 17, 96, X, 96, blob, bytes, Y, 17, ws, nf,
             "M x ldx overflows");
        RUNF(QMX_ERR_BUFFER_TOO_SMALL, M, 17, 96, X, 96, blob, bytes - 1, Y, 17, ws, nf,
             "truncated blob");
        RUNF(QMX_ERR_BUFFER_TOO_SMALL, M, 17, 96, X, 96, blob, bytes, Y, 17, ws, nf - 1,
             "workspace one byte short");
        memcpy(bad, blob, bytes); bad[1] = 'X';
        RUNF(QMX_ERR_PARSE, M, 17, 96, X, 96, bad, bytes, Y, 17, ws, nf, "magic");
#undef RUNF
    }
    /* the packers */
    {
        size_t b2 = 0;
        wset t;
        static const uint8_t zeros[64 * 34] = {0};
        qmx_blockw_packed_desc d;
        CHECK(qmx_blockw_pack(&s.w, 17, 96, bad, bytes - 1) == QMX_ERR_BUFFER_TOO_SMALL,
              "pack: short");
        CHECK(qmx_blockw_pack(&s.w, 16, 96, bad, bytes) == QMX_ERR_SHAPE, "pack: N mismatch");
        CHECK(qmx_blockw_pack_size(&s.w, 17, 96, NULL) == QMX_ERR_NULL, "pack_size NULL");
        make_w(&t, T_INT8, 4, 64, 0, 0);
        t.qc.block_size = 64;   /* not 32 */
        t.w.n_scales = 4;
        CHECK(qmx_blockw_pack_size(&t.w, 4, 64, &b2) == QMX_ERR_UNSUPPORTED, "block 64");
        t.qc.block_size = 32;
        t.w.n_scales = t.ns;
        t.qc.dtype = QMX_INT2;
        st = qmx_blockw_pack_size(&t.w, 4, 64, &b2);
        CHECK(st == QMX_ERR_UNSUPPORTED, "int2: %d", (int)st);
        free_w(&t);
        CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q8_0, 2, 48, &b2) == QMX_ERR_SHAPE,
              "ggml K 48");
        CHECK(qmx_blockw_pack_ggml_size(6, 2, 64, &b2) == QMX_ERR_ARG, "ggml type 6 (Q5_0)");
        CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q8_0, zeros, 4 * 34 - 1, 2, 64, bad, bytes) ==
              QMX_ERR_BUFFER_TOO_SMALL, "ggml blocks short");
        CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_Q8_0, bad, bytes) ==
              QMX_ERR_UNSUPPORTED, "unpack uint4 as Q8_0");
        CHECK(qmx_blockw_unpack(blob, bytes, bad, bytes, (float *)(void *)ws, NULL, 1000) ==
              QMX_ERR_NULL, "unpack zero points NULL");
        CHECK(qmx_blockw_packed_info(blob, 10, &d) == QMX_ERR_BUFFER_TOO_SMALL, "info short");
        CHECK(qmx_blockw_unpack_mx(blob, bytes, bad, bytes, (uint8_t *)ws, 1000) ==
              QMX_ERR_UNSUPPORTED, "unpack_mx on a uint4 blob");
        {   /* MX weights other than MXFP4 in blocks of 32; a ggml Q8_0 block with d < 0 and a
             * -128 (qmx.h: unsupported): a status, the blob untouched */
            qmx_mx_config mc;
            qmx_blockw mw;
            static uint8_t el[64], sc8[4], g8b[2 * 34];
            memset(&mc, 0, sizeof mc);
            mc.format = QMX_NVFP4; mc.outer = 2; mc.axis_len = 32; mc.inner = 1;
            memset(&mw, 0, sizeof mw);
            mw.kind = QMX_BLOCKW_MX; mw.mx = &mc; mw.data = el; mw.data_bytes = sizeof el;
            mw.scale_codes = sc8; mw.n_scales = 4;
            for (i = 0; i < 4; i++) sc8[i] = 0x38;
            st = qmx_blockw_pack_size(&mw, 2, 32, &b2);
            CHECK(st == QMX_OK && b2 == 64 + 2 * 144, "NVFP4 blocks of 16: %d", (int)st);
            mc.block_size = 32;   /* NVFP4 in blocks of 32: not a blob kind */
            st = qmx_blockw_pack_size(&mw, 2, 32, &b2);
            CHECK(st == QMX_ERR_UNSUPPORTED, "NVFP4 block 32: %d", (int)st);
            mc.block_size = 8; mw.n_scales = 8;
            st = qmx_blockw_pack_size(&mw, 2, 32, &b2);
            CHECK(st == QMX_ERR_UNSUPPORTED, "NVFP4 block 8: %d", (int)st);
            mc.block_size = 0; mw.n_scales = 3;   /* 4 scale codes needed */
            st = qmx_blockw_pack_size(&mw, 2, 32, &b2);
            CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "NVFP4 scale codes short: %d", (int)st);
            mw.n_scales = 4;
            mc.format = QMX_MXFP4; mc.block_size = 16;
            st = qmx_blockw_pack_size(&mw, 2, 32, &b2);
            CHECK(st == QMX_ERR_UNSUPPORTED, "MXFP4 block 16: %d", (int)st);
            memset(g8b, 0, sizeof g8b);
            g8b[34] = 0x00; g8b[35] = 0xBC;   /* d = -1.0 (binary16 0xBC00) */
            g8b[36] = 0x80;                   /* q = -128 */
            memset(bad, 0x5A, bytes);
            CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q8_0, g8b, sizeof g8b, 1, 64, bad, bytes) ==
                  QMX_ERR_UNSUPPORTED, "ggml Q8_0 d < 0 with -128");
            for (i = 0; i < bytes; i++) if (bad[i] != 0x5A) break;
            CHECK(i == bytes, "blob written on error");
        }
    }
    free(bad); free(blob); free_w(&s);
}

/* NVFP4 / MXFP8 blobs with bad headers, truncated, short outputs: a status, outputs untouched */
static void bad_input_fp(void) {
    static uint8_t el[40 * 17], sc[3 * 17], blob[64 + 2 * 3 * 528], bad[sizeof blob], back[40 * 17];
    static unsigned char ws[1 << 14];
    qmx_mx_config mc;
    qmx_blockw w;
    size_t bytes = 0, need = 0, nf = 0, i, k, fmt;
    float X[2 * 40], Y[2 * 17];
    qmx_status st;
    QMX_TEST_CASE("NVFP4 / MXFP8 bad input: a status, Y, workspace and outputs untouched");
    for (i = 0; i < sizeof el; i++) el[i] = (uint8_t)(qmx_test_rand() & 0x77u);
    for (i = 0; i < sizeof sc; i++) sc[i] = (uint8_t)(0x30 + i % 16);
    for (i = 0; i < 2 * 40; i++) X[i] = (float)((int)(i % 11) - 5);
    for (fmt = 0; fmt < 2; fmt++) {
        const char *f = fmt ? "mxfp8" : "nvfp4";
        memset(&mc, 0, sizeof mc);
        mc.format = fmt ? QMX_MXFP8_E4M3 : QMX_NVFP4; mc.outer = 17; mc.axis_len = 40; mc.inner = 1;
        mc.tensor_scale = fmt ? 0.0f : 0.5f;
        memset(&w, 0, sizeof w);
        w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.data = el; w.data_bytes = fmt ? 17 * 40 : 17 * 20;
        w.scale_codes = sc; w.n_scales = fmt ? 2 * 17 : 3 * 17;
        CHECK(qmx_blockw_pack_size(&w, 17, 40, &bytes) == QMX_OK && bytes <= sizeof blob, "%s size", f);
        w.n_scales--;   /* scale codes one short */
        memset(bad, 0x5A, sizeof bad);
        st = qmx_blockw_pack(&w, 17, 40, bad, bytes);
        CHECK(st == QMX_ERR_BUFFER_TOO_SMALL, "%s: scale codes short: %d", f, (int)st);
        for (i = 0; i < sizeof bad; i++) if (bad[i] != 0x5A) break;
        CHECK(i == sizeof bad, "%s: blob written on error", f);
        w.n_scales++;
        CHECK(qmx_blockw_pack(&w, 17, 40, blob, bytes) == QMX_OK, "%s pack", f);
        CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(2, 17, 40, NULL, &need) == QMX_OK &&
              qmx_matmul_blockw_packed_f32_workspace_size(2, 17, 40, &nf) == QMX_OK &&
              need < sizeof ws && nf < sizeof ws, "%s ws", f);
        for (k = 0; k < 9; k++) {
            size_t bb = bytes;
            qmx_status want = QMX_ERR_PARSE, sf;
            qmx_blockw_dyn_opts o;
            memcpy(bad, blob, bytes);
            o.act_block = 0;
            switch (k) {
            case 0: bb = bytes - 1; want = QMX_ERR_BUFFER_TOO_SMALL; break;   /* truncated */
            case 1: bad[17] = fmt ? 16 : 32; break;                          /* block length */
            case 2: bad[20] = 1; if (fmt) break; bad[23] = 0x80; break;      /* ts < 0 / reserved */
            case 3: bad[22] = 0x80; bad[23] = 0x7F; break;                   /* ts Inf / reserved */
            case 4: bad[18] = fmt ? 4 : 2; break;                            /* scale kind */
            case 5: bad[19] = 1; break;                                      /* zero points */
            case 6: bad[16] = 8; break;                                      /* element */
            case 7: bad[0] = 'q'; break;                                     /* magic */
            default: o.act_block = 16; want = QMX_ERR_UNSUPPORTED; break;    /* act_block 16 */
            }
            for (i = 0; i < 2 * 17; i++) Y[i] = -3.0f;
            memset(ws, 0xA5, sizeof ws);
            st = qmx_matmul_blockw_packed_dyn_i8(2, 17, 40, X, 40, bad, bb, &o, Y, 17, ws, need);
            sf = k == 8 ? want : qmx_matmul_blockw_packed_f32(2, 17, 40, X, 40, bad, bb, Y, 17, ws, nf);
            CHECK(st == want && sf == want, "%s case %u: %d %d want %d", f, (unsigned)k, (int)st,
                  (int)sf, (int)want);
            for (i = 0; i < 2 * 17; i++) if (fb(Y[i]) != fb(-3.0f)) break;
            CHECK(i == 2 * 17, "%s case %u: Y written", f, (unsigned)k);
            for (i = 0; i < sizeof ws; i++) if (ws[i] != 0xA5) break;
            CHECK(i == sizeof ws, "%s case %u: workspace written", f, (unsigned)k);
        }
        /* unpack_mx: data or scale codes short, other unpackers: a status, outputs untouched */
        memset(back, 0x33, sizeof back);
        memset(bad, 0x33, sizeof bad);
        CHECK(qmx_blockw_unpack_mx(blob, bytes, back, w.data_bytes - 1, bad, w.n_scales) ==
              QMX_ERR_BUFFER_TOO_SMALL, "%s unpack_mx data short", f);
        CHECK(qmx_blockw_unpack_mx(blob, bytes, back, w.data_bytes, bad, w.n_scales - 1) ==
              QMX_ERR_BUFFER_TOO_SMALL, "%s unpack_mx scale codes short", f);
        CHECK(qmx_blockw_unpack_mx(blob, bytes - 1, back, w.data_bytes, bad, w.n_scales) ==
              QMX_ERR_BUFFER_TOO_SMALL, "%s unpack_mx blob truncated", f);
        CHECK(qmx_blockw_unpack_ggml(blob, bytes, QMX_BLOCKW_GGML_MXFP4, back, sizeof back) ==
              QMX_ERR_UNSUPPORTED, "%s unpack_ggml", f);
        for (i = 0; i < sizeof back; i++) if (back[i] != 0x33 || bad[i % sizeof bad] != 0x33) break;
        CHECK(i == sizeof back, "%s: unpack outputs written on error", f);
    }
    {   /* ggml Q4_1: K not a multiple of 32, blocks or output short, a bad header */
        static uint8_t g41[4 * 20];
        size_t b41 = 0;
        memset(g41, 0x3C, sizeof g41);
        CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q4_1, 2, 48, &b41) == QMX_ERR_SHAPE, "q4_1 K 48");
        CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q4_1, 2, 64, &b41) == QMX_OK &&
              b41 == 64 + 2 * 320 && b41 <= sizeof blob, "q4_1 size");
        memset(bad, 0x5A, sizeof bad);
        CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, g41, sizeof g41 - 1, 2, 64, bad, b41) ==
              QMX_ERR_BUFFER_TOO_SMALL, "q4_1 blocks short");
        CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, g41, sizeof g41, 2, 64, bad, b41 - 1) ==
              QMX_ERR_BUFFER_TOO_SMALL, "q4_1 blob short");
        for (i = 0; i < sizeof bad; i++) if (bad[i] != 0x5A) break;
        CHECK(i == sizeof bad, "q4_1: blob written on error");
        CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q4_1, g41, sizeof g41, 2, 64, blob, b41) == QMX_OK,
              "q4_1 pack");
        memset(back, 0x33, sizeof back);
        CHECK(qmx_blockw_unpack_ggml(blob, b41, QMX_BLOCKW_GGML_Q4_1, back, sizeof g41 - 1) ==
                  QMX_ERR_BUFFER_TOO_SMALL &&
              qmx_blockw_unpack(blob, b41, back, sizeof back, (float *)(void *)ws, NULL, 100) ==
                  QMX_ERR_UNSUPPORTED, "q4_1 unpack short / as qmx storage");
        for (i = 0; i < sizeof back; i++) if (back[i] != 0x33) break;
        CHECK(i == sizeof back, "q4_1: unpack output written on error");
        memcpy(bad, blob, b41); bad[18] = 0;   /* float32 scales: not a Q4_1 blob */
        CHECK(qmx_blockw_unpack_ggml(bad, b41, QMX_BLOCKW_GGML_Q4_1, back, sizeof g41) == QMX_ERR_PARSE,
              "q4_1 header scale kind");
    }
    {   /* ggml NVFP4 (40): K not a multiple of 64, N or K 0, NULL, sizes past 2^32, blocks or
         * blob one short; blobs of other kinds, a tensor scale, K 48, short blocks to
         * unpack_ggml(40): a status, the blob / blocks untouched */
        static uint8_t gnvb[2 * 2 * 36], g39[2 * 4 * 17], g8[2 * 4 * 34], el48[2 * 24], sc48[6];
        static uint8_t b40[64 + 8 * 144], bo[sizeof b40];
        size_t b = 0, bn = 0;
        qmx_blockw w;
        struct { size_t N, K; qmx_status want; } sz[] = {
            {2, 32, QMX_ERR_SHAPE}, {2, 48, QMX_ERR_SHAPE}, {2, 96, QMX_ERR_SHAPE},
            {2, 16, QMX_ERR_SHAPE}, {0, 64, QMX_ERR_SIZE}, {2, 0, QMX_ERR_SIZE},
            {(size_t)-1, 64, QMX_ERR_OVERFLOW}, {1, (size_t)-64, QMX_ERR_OVERFLOW}};
        for (i = 0; i < sizeof gnvb; i++) gnvb[i] = (uint8_t)qmx_test_rand();
        for (i = 0; i < sizeof sz / sizeof sz[0]; i++) {
            st = qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_NVFP4, sz[i].N, sz[i].K, &b);
            CHECK(st == sz[i].want, "nvfp4 size case %u: %d", (unsigned)i, (int)st);
            memset(bo, 0x5A, sizeof bo);
            st = qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, gnvb, sizeof gnvb, sz[i].N, sz[i].K,
                                      bo, sizeof bo);
            CHECK(st == sz[i].want, "nvfp4 pack case %u: %d", (unsigned)i, (int)st);
            for (k = 0; k < sizeof bo; k++) if (bo[k] != 0x5A) break;
            CHECK(k == sizeof bo, "nvfp4 pack case %u: blob written", (unsigned)i);
        }
        CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_NVFP4, 2, 128, NULL) == QMX_ERR_NULL &&
              qmx_blockw_pack_ggml_size(41, 2, 128, &b) == QMX_ERR_ARG &&
              qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_NVFP4, 2, 128, &b) == QMX_OK &&
              b == 64 + 8 * 144 && b == sizeof b40, "nvfp4 size");
        memset(bo, 0x5A, sizeof bo);
        CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, gnvb, sizeof gnvb - 1, 2, 128, bo, b) ==
                  QMX_ERR_BUFFER_TOO_SMALL &&
              qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, gnvb, sizeof gnvb, 2, 128, bo, b - 1) ==
                  QMX_ERR_BUFFER_TOO_SMALL &&
              qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, NULL, sizeof gnvb, 2, 128, bo, b) ==
                  QMX_ERR_NULL &&
              qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, gnvb, sizeof gnvb, 2, 128, NULL, b) ==
                  QMX_ERR_NULL &&
              qmx_blockw_pack_ggml(41, gnvb, sizeof gnvb, 2, 128, bo, b) == QMX_ERR_ARG,
              "nvfp4 pack: short, NULL, type 41");
        for (k = 0; k < sizeof bo; k++) if (bo[k] != 0x5A) break;
        CHECK(k == sizeof bo, "nvfp4 pack: blob written on error");
        CHECK(qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_NVFP4, gnvb, sizeof gnvb, 2, 128, b40, b) ==
              QMX_OK, "nvfp4 pack");
        /* unpack_ggml(40) */
        memset(back, 0x33, sizeof back);
        CHECK(qmx_blockw_unpack_ggml(b40, b, QMX_BLOCKW_GGML_NVFP4, back, sizeof gnvb - 1) ==
                  QMX_ERR_BUFFER_TOO_SMALL &&
              qmx_blockw_unpack_ggml(b40, b - 1, QMX_BLOCKW_GGML_NVFP4, back, sizeof gnvb) ==
                  QMX_ERR_BUFFER_TOO_SMALL &&
              qmx_blockw_unpack_ggml(NULL, b, QMX_BLOCKW_GGML_NVFP4, back, sizeof gnvb) ==
                  QMX_ERR_NULL &&
              qmx_blockw_unpack_ggml(b40, b, QMX_BLOCKW_GGML_NVFP4, NULL, sizeof gnvb) ==
                  QMX_ERR_NULL &&
              qmx_blockw_unpack_ggml(b40, b, 41, back, sizeof gnvb) == QMX_ERR_ARG &&
              qmx_blockw_unpack_ggml(b40, b, QMX_BLOCKW_GGML_MXFP4, back, sizeof back) ==
                  QMX_ERR_UNSUPPORTED &&
              qmx_blockw_unpack_ggml(b40, b, QMX_BLOCKW_GGML_Q4_1, back, sizeof back) ==
                  QMX_ERR_UNSUPPORTED &&
              qmx_blockw_unpack(b40, b, back, sizeof back, (float *)(void *)ws, NULL, 100) ==
                  QMX_ERR_UNSUPPORTED, "nvfp4 unpack_ggml: short, NULL, type 41, other types");
        for (k = 0; k < sizeof back; k++) if (back[k] != 0x33) break;
        CHECK(k == sizeof back, "nvfp4: unpack output written on error");
        /* blobs of other kinds to unpack_ggml(40) */
        for (i = 0; i < sizeof g39; i++) g39[i] = (uint8_t)qmx_test_rand();
        memset(g8, 0, sizeof g8);
        for (i = 0; i < 8; i++) g8[34 * i + 1] = 0x3C;   /* d = 1.0 */
        CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_MXFP4, 2, 128, &bn) == QMX_OK &&
              bn <= sizeof bo && qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_MXFP4, g39, sizeof g39, 2,
                                                     128, bo, bn) == QMX_OK, "mxfp4 blob");
        CHECK(qmx_blockw_unpack_ggml(bo, bn, QMX_BLOCKW_GGML_NVFP4, back, sizeof back) ==
              QMX_ERR_UNSUPPORTED, "an MXFP4 blob to unpack_ggml(40)");
        CHECK(qmx_blockw_pack_ggml_size(QMX_BLOCKW_GGML_Q8_0, 2, 128, &bn) == QMX_OK &&
              bn <= sizeof blob && qmx_blockw_pack_ggml(QMX_BLOCKW_GGML_Q8_0, g8, sizeof g8, 2,
                                                       128, blob, bn) == QMX_OK, "q8_0 blob");
        CHECK(qmx_blockw_unpack_ggml(blob, bn, QMX_BLOCKW_GGML_NVFP4, back, sizeof back) ==
              QMX_ERR_UNSUPPORTED, "a Q8_0 blob to unpack_ggml(40)");
        /* an NVFP4 blob of K 48 (three blocks of 16: no whole ggml block), and with ts */
        for (i = 0; i < sizeof el48; i++) el48[i] = (uint8_t)qmx_test_rand();
        for (i = 0; i < sizeof sc48; i++) sc48[i] = (uint8_t)(0x30 + i);
        memset(&mc, 0, sizeof mc);
        mc.format = QMX_NVFP4; mc.rule = QMX_MX_GGML; mc.outer = 2; mc.axis_len = 48; mc.inner = 1;
        memset(&w, 0, sizeof w);
        w.kind = QMX_BLOCKW_MX; w.mx = &mc; w.data = el48; w.data_bytes = sizeof el48;
        w.scale_codes = sc48; w.n_scales = sizeof sc48;
        CHECK(qmx_blockw_pack_size(&w, 2, 48, &bn) == QMX_OK && bn <= sizeof bo &&
              qmx_blockw_pack(&w, 2, 48, bo, bn) == QMX_OK, "nvfp4 K 48 blob");
        CHECK(qmx_blockw_unpack_ggml(bo, bn, QMX_BLOCKW_GGML_NVFP4, back, sizeof back) ==
              QMX_ERR_SHAPE, "an NVFP4 blob of K 48 to unpack_ggml(40)");
        mc.rule = QMX_MX_FLOOR; mc.tensor_scale = 2.0f;
        CHECK(qmx_blockw_pack(&w, 2, 48, bo, bn) == QMX_OK &&
              qmx_blockw_unpack_ggml(bo, bn, QMX_BLOCKW_GGML_NVFP4, back, sizeof back) ==
              QMX_ERR_UNSUPPORTED, "an NVFP4 blob with a tensor scale to unpack_ggml(40)");
        for (k = 0; k < sizeof back; k++) if (back[k] != 0x33) break;
        CHECK(k == sizeof back, "nvfp4: unpack output written on error (other blobs)");
    }
}

/* Rows in register tiles (AVX-512: tiles of 8 and 4 rows, int4 / uint4 codes; aarch64 i8mm:
 * row pairs, M 13 leaving an odd last row) give the bits of the same rows one at a time, also
 * when zero point bytes of the blob were altered (no valid blob has z > 15: z up to 127 stays on
 * the tiles' fast path, z >= 128 takes their fallback) */
static void tiles_vs_rows(void) {
    static const int types[] = {T_UINT4ZP, T_INT4ZP, T_INT4, T_UINT4};
    static const uint8_t zalt[] = {16, 100, 127, 128, 143, 200, 255};
    size_t t;
    QMX_TEST_CASE("packed kernel: rows in tiles == rows one at a time (zero points altered)");
    for (t = 0; t < 2 * sizeof types / sizeof types[0]; t++) {
        const size_t M = 13, N = 33, K = 96;
        wset s;
        qmx_blockw_packed_desc d;
        uint8_t *blob;
        size_t bytes = 0, ws = 0, ws1 = 0, i, m, bad = 0;
        float *X, *Y, *Y1;
        void *w;
        int type = types[t % 4], alter = t >= 4;
        make_w(&s, type, N, K, 0, (int)(t & 1));
        blob = pack_w(&s, &bytes);
        CHECK(blob != NULL, "tiles_vs_rows %s: pack", tname[type]);
        if (!blob) { free_w(&s); continue; }
        memset(&d, 0, sizeof d);
        CHECK(qmx_blockw_packed_info(blob, bytes, &d) == QMX_OK, "tiles_vs_rows: info");
        if (alter && d.has_zp) {   /* some blocks' zero point bytes */
            size_t sb = d.f16_scales ? 2u : 4u, S = 256u + 16u * sb + 16u, nblk = d.nblk;
            for (i = 0; i < 12; i++) {
                size_t p = qmx_test_rand() % ((N + 15) / 16), b = qmx_test_rand() % nblk,
                       j = qmx_test_rand() % 16;
                blob[64u + (p * nblk + b) * S + 256u + 16u * sb + j] =
                    zalt[qmx_test_rand() % sizeof zalt];
            }
        }
        X = (float *)malloc(M * K * sizeof(float));
        Y = (float *)malloc(M * N * sizeof(float));
        Y1 = (float *)malloc(N * sizeof(float));
        for (i = 0; i < M * K; i++) X[i] = (rnd_unit() - 0.5f) * 8.0f;
        CHECK(qmx_matmul_blockw_packed_dyn_i8_workspace_size(M, N, K, NULL, &ws) == QMX_OK &&
              qmx_matmul_blockw_packed_dyn_i8_workspace_size(1, N, K, NULL, &ws1) == QMX_OK,
              "tiles_vs_rows: workspace size");
        w = malloc(ws > ws1 ? ws : ws1);
        CHECK(qmx_matmul_blockw_packed_dyn_i8(M, N, K, X, K, blob, bytes, NULL, Y, N, w, ws) ==
                  QMX_OK, "tiles_vs_rows %s: M %u", tname[type], (unsigned)M);
        for (m = 0; m < M; m++) {
            CHECK(qmx_matmul_blockw_packed_dyn_i8(1, N, K, X + m * K, K, blob, bytes, NULL, Y1, N,
                                                  w, ws1) == QMX_OK, "tiles_vs_rows: M 1");
            for (i = 0; i < N; i++) bad += fb(Y[m * N + i]) != fb(Y1[i]);
        }
        CHECK(bad == 0, "tiles_vs_rows %s altered %d: %u outputs differ", tname[type], alter,
              (unsigned)bad);
        /* the f32 kernel: M 13 (tile + rows) == the rows one at a time (the GEMV path) */
        free(w);
        CHECK(qmx_matmul_blockw_packed_f32_workspace_size(M, N, K, &ws) == QMX_OK &&
              qmx_matmul_blockw_packed_f32_workspace_size(1, N, K, &ws1) == QMX_OK,
              "tiles_vs_rows: f32 workspace size");
        w = malloc(ws > ws1 ? ws : ws1);
        CHECK(qmx_matmul_blockw_packed_f32(M, N, K, X, K, blob, bytes, Y, N, w, ws) == QMX_OK,
              "tiles_vs_rows %s: f32 M %u", tname[type], (unsigned)M);
        for (bad = 0, m = 0; m < M; m++) {
            CHECK(qmx_matmul_blockw_packed_f32(1, N, K, X + m * K, K, blob, bytes, Y1, N, w,
                                               ws1) == QMX_OK, "tiles_vs_rows: f32 M 1");
            for (i = 0; i < N; i++) bad += fb(Y[m * N + i]) != fb(Y1[i]);
        }
        CHECK(bad == 0, "tiles_vs_rows %s altered %d: f32 %u outputs differ", tname[type],
              alter, (unsigned)bad);
        free(X); free(Y); free(Y1); free(w); free(blob);
        free_w(&s);
    }
}

int main(void) {
    qmx_test_seed(16161);
    hand_made();
    random_shapes();
    gemv_kinds();
    tiles_vs_rows();
    mxfp4_cases();
    nvfp4_cases();
    mxfp8_cases();
    mxfp8_e5m2_cases();
    load_ggml();
    ggml_case(1);
    ggml_case(0);
    ggml_mxfp4();
    ggml_q41();
    ggml_nvfp4();
    bad_input();
    bad_input_fp();
    mxfp8_edges(0);
    mxfp8_edges(1);
    return QMX_TEST_END();
}
