/* fuzz_util.h - what the libFuzzer harnesses over the public APIs share (tests/fuzz/
 * fuzz_array_api.c, fuzz_kernels_api.c): a reader over the fuzz input, buffers allocated at
 * exactly the size a call is told (at any alignment, with guard bytes checked on free where
 * ASan is absent), snapshots of outputs to prove them untouched on error, and the status check.
 * Every harness frees its buffers at the end of each input (fz_free_all). */
#ifndef QMX_FUZZ_UTIL_H
#define QMX_FUZZ_UTIL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef struct fz_rd { const uint8_t *p; size_t n; } fz_rd;
static unsigned fz_u8(fz_rd *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}
static uint32_t fz_u32(fz_rd *r) {
    uint32_t v = fz_u8(r);
    v |= (uint32_t)fz_u8(r) << 8;
    v |= (uint32_t)fz_u8(r) << 16;
    return v | (uint32_t)fz_u8(r) << 24;
}
static float fz_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t fz_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static int fz_isnan(float f) { return (fz_fbits(f) & 0x7FFFFFFFu) > 0x7F800000u; }
static int fz_finite(float f) { return (fz_fbits(f) & 0x7F800000u) != 0x7F800000u; }
static int fz_same_f(float a, float b) {
    return fz_fbits(a) == fz_fbits(b) || (fz_isnan(a) && fz_isnan(b));
}

#define FZ_MAXA 128
/* Without ASan (the replay on other targets and builds), FZ_GUARD pattern bytes follow each
 * buffer and must be intact when it is freed; with ASan the end is exact. */
#if defined(__SANITIZE_ADDRESS__)
#  define FZ_GUARD 0
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define FZ_GUARD 0
#  endif
#endif
#ifndef FZ_GUARD
#  define FZ_GUARD 64
#endif
static void *fz_allocs[FZ_MAXA];
static size_t fz_pre[FZ_MAXA], fz_len[FZ_MAXA];
static int fz_nalloc;
/* n bytes whose address is `al` mod 64 (al < 64; -1: as malloc returns), at offset k of an
 * allocation of k + n bytes: the end is exact (ASan sees any overrun) and the start has any
 * alignment (the docs allow it for workspaces, blobs and KV storage: a library that rounds
 * the pointer up to 64 must have counted that in its size). malloc decides the base, so k is
 * found by retrying (allocators return blocks of one size class alike). The k bytes before
 * the buffer must stay untouched (checked when freed). */
static void *fz_alloc_at(size_t n, int al) {
    unsigned char *p = NULL;
    size_t k = 0;
    int tries;
    if (fz_nalloc >= FZ_MAXA) __builtin_trap();
    for (tries = 0; tries < 4; tries++) {
        size_t got;
        p = (unsigned char *)malloc(n + k + FZ_GUARD ? n + k + FZ_GUARD : 1);
        if (!p) __builtin_trap();
        got = (size_t)(((uintptr_t)p + k) & 63u);
        if (al < 0 || got == (size_t)al || tries == 3) break;
        free(p);
        k = (k + 64u + (size_t)al - got) & 63u;
    }
    memset(p, 0xA5, n + k + FZ_GUARD ? n + k + FZ_GUARD : 1);
    fz_pre[fz_nalloc] = k;
    fz_len[fz_nalloc] = n;
    fz_allocs[fz_nalloc++] = p;
    return p + k;
}
static void *fz_alloc(size_t n) { return fz_alloc_at(n, -1); }
static void fz_free_all(void) {
    while (fz_nalloc > 0) {
        const unsigned char *p = (const unsigned char *)fz_allocs[--fz_nalloc];
        size_t i;
        for (i = 0; i < fz_pre[fz_nalloc]; i++)
            if (p[i] != 0xA5) __builtin_trap();   /* written before the buffer */
#if FZ_GUARD > 0
        for (i = 0; i < FZ_GUARD; i++)
            if (p[fz_pre[fz_nalloc] + fz_len[fz_nalloc] + i] != 0xA5) __builtin_trap(); /* after */
#endif
        free(fz_allocs[fz_nalloc]);
    }
}
static void *fz_snap(const void *p, size_t n) {
    void *c = fz_alloc(n);
    if (p && n) memcpy(c, p, n);
    return c;
}
static void fz_same(const void *p, const void *snap, size_t n) {
    if (p && n && memcmp(p, snap, n) != 0) __builtin_trap();
}
static void fz_check(qmx_status st) {
    if ((int)st > 0 || (int)st < -10) __builtin_trap();
}
static int fz_enum(fz_rd *r, int nvalid) {
    unsigned b = fz_u8(r);
#ifndef __cplusplus
    if (b >= 0xF8) {
        static const int g[4] = {-1, 0x7FFFFFFF, 0x40000000, -0x7FFFFFFF};
        return b & 4 ? nvalid + (int)(b & 3) : g[b & 3];
    }
#endif
    return (int)(b % (unsigned)nvalid);
}

static float fz_special(unsigned b) {
    static const uint32_t s[8] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x00000001u,
                                  0x7F7FFFFFu, 0x80000000u, 0x007FFFFFu, 0xFFC01234u};
    return fz_bits(s[b & 7]);
}
/* float data: mode 0 raw bits, 1 small exact, 2 mostly small with some specials */
static float fz_val(fz_rd *r, unsigned mode) {
    unsigned b;
    switch (mode % 3) {
    case 0: return fz_bits(fz_u32(r));
    case 1: return (float)(int8_t)fz_u8(r) * 0.125f;
    default:
        b = fz_u8(r);
        if (b >= 0xF8) return fz_special(b);
        return (float)((int)b - 124) * 0.0625f;
    }
}

#endif
