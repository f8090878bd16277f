#!/usr/bin/python3
"""gen_einsum.py - golden data for tests/test_einsum.c (qmx_einsum), from numpy.einsum.

Run from the repository root with Debian's python3 + numpy (apt-get install python3-numpy):
    /usr/bin/python3 tests/gen/gen_einsum.py          # rewrites tests/data/einsum_*.txt
    /usr/bin/python3 tests/gen/gen_einsum.py --check  # regenerates in memory, diffs the files

The reference is numpy.einsum on float64 (float, fp8 and quantized operands, dequantized here
as (q - zero_point) * scale with the scale broadcast by its documented mode) or on int64 (raw
int32 output). Nothing here comes from qmx's C code. fp8 codes are decoded by the formula of
the OCP fp8 formats (below), not by qmx.

tests/data/einsum_cases.txt: one case per block, whitespace-separated tokens, '#' comments:
    SPEC "<spec>"                      (own line; the spec between the first and last quote)
    KIND f32 | i32 | q                 (float path, raw int32, int -> float with scales)
    OP <dtype> <rank> <dims...> ZP <z> SCALING <mode> CHAN <axis> BLOCK <axis> BS <n>
       NS <n> <scales...> DATA <n> <values...>       (twice: A then B)
         dtype: f32 int8 int4 uint4 e4m3fn e5m2; values: floats (f32), ints (int8/int4/uint4,
         unpacked), fp8 codes (e4m3fn/e5m2); NS 0 = no scales (NULL)
    OUT <rank> <dims...> TOL <abs bound> N <n> <values...>    (float64 / int64 reference)
    END
  TOL: 0 where the qmx result must be exact (integer-valued data, power-of-two scales, partial
  sums below 2^24: every float operation is exact); otherwise the bound of qmx's documented
  order, (2K + 4) * 2^-24 * max einsum(|A|, |B|) (each of at most K products, K additions
  (or nblk <= K block sums) and two scale products rounds once, relative error 2^-24 of at most
  the largest magnitude einsum(|A|, |B|) of the outputs).

tests/data/einsum_malformed.txt: one malformed case per line,
    <status> <pos> <rankA> <dimsA...> <rankB> <dimsB...> "<spec>"
  status: the qmx_status number expected; pos: the character position expected (-1: none).
  For every line the generator also checks that numpy.einsum rejects the spec (where numpy
  would accept it, the line says so in a comment: qmx is stricter there).
"""
import sys, io, os
import numpy as np

rng = np.random.default_rng(20261123)
F32, I32, Q = 'f32', 'i32', 'q'


def fp8_decode(code, fmt):
    s = -1.0 if code & 0x80 else 1.0
    if fmt == 'e4m3fn':
        e, m = (code >> 3) & 15, code & 7
        if e == 15 and m == 7:
            return float('nan')
        return s * (m / 8.0 * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7))
    e, m = (code >> 2) & 31, code & 3
    if e == 31:
        return float('nan') if m else s * float('inf')
    return s * (m / 4.0 * 2.0 ** -14 if e == 0 else (1 + m / 4.0) * 2.0 ** (e - 15))


FP8_SMALL = {f: [c for c in range(256) if abs(fp8_decode(c, f)) <= 8 and
                 fp8_decode(c, f) == fp8_decode(c, f)] for f in ('e4m3fn', 'e5m2')}


def frac_unit(x):
    """Largest 2^-t (t >= 0) that divides every entry of x."""
    x = np.abs(np.asarray(x, dtype=np.float64)).reshape(-1)
    for t in range(64):
        if np.all(np.floor(x * 2.0 ** t) == x * 2.0 ** t):
            return 2.0 ** -t
    return 2.0 ** -64


def letters(term):
    return [c for c in term if c.isalpha()]


def parse(spec):
    s = spec.replace(' ', '')
    if '->' in s:
        ins, out = s.split('->')
    else:
        ins, out = s, None
    a, b = ins.split(',')
    return a, b, out


def shapes_for(spec, sizes, ell):
    a, b, out = parse(spec)
    res = []
    for t, e in zip((a, b), ell):
        shp = []
        for part in t.split('...'):
            pass
        if '...' in t:
            pre, post = t.split('...')
            shp = [sizes[c] for c in pre] + list(e) + [sizes[c] for c in post]
        else:
            shp = [sizes[c] for c in t]
        res.append(tuple(shp))
    return res


def out_labels(spec):
    a, b, out = parse(spec)
    if out is not None:
        return out.replace('...', '')
    allc = a.replace('...', '') + b.replace('...', '')
    return ''.join(sorted(c for c in set(allc) if allc.count(c) == 1))


def k_labels(spec):
    a, b, _ = parse(spec)
    o = out_labels(spec)
    return [c for c in dict.fromkeys(a.replace('...', '') + b.replace('...', '')) if c not in o]


def axis_labels(term, rank):
    """Label per axis ('.' for ellipsis dims)."""
    if '...' in term:
        pre, post = term.split('...')
        return list(pre) + ['.'] * (rank - len(pre) - len(post)) + list(post)
    return list(term)


def scale_array(shape, mode, chan, blk, bs, s):
    """Scale broadcast to the operand's shape by its mode (float64)."""
    full = np.ones(shape)
    idx = np.indices(shape)
    if mode == 0:
        return full * s[0]
    if mode == 1:
        return s[idx[chan]]
    nb = -(-shape[blk] // bs)
    j = idx[blk] // bs
    if mode == 2:
        return s[j]
    return s[idx[chan] * nb + j]


def fmt_f(v):
    return repr(float(v))


def gen_case(spec, kind, dtypes, sizes, ell=((), ()), modes=(None, None), zps=(0, 0),
             pow2=True):
    a_t, b_t, _ = parse(spec)
    shp = shapes_for(spec, sizes, ell)
    ol = out_labels(spec)
    kl = k_labels(spec)
    ops = []
    deq = []
    for o, (t, sh, dt) in enumerate(zip((a_t, b_t), shp, dtypes)):
        n = int(np.prod(sh)) if len(sh) else 1
        if dt == 'f32':
            q = rng.integers(-8, 9, n).astype(np.float64)
        elif dt == 'int8':
            q = rng.integers(-128, 128, n)
        elif dt == 'int4':
            q = rng.integers(-8, 8, n)
        elif dt == 'uint4':
            q = rng.integers(0, 16, n)
        else:
            q = rng.choice(FP8_SMALL[dt], n)
        vals = np.array([fp8_decode(int(c), dt) for c in q]) if dt.startswith('e') else \
            q.astype(np.float64)
        zp = zps[o]
        mode = modes[o]
        chan = blk = -1
        bs = 0
        scales = None
        labs = axis_labels(t, len(sh))
        if mode is not None:
            if mode in (1, 3):
                cands = [i for i, l in enumerate(labs) if l == '.' or l in ol]
                chan = int(rng.choice(cands))
            if mode in (2, 3):
                blk, bs = modes_blk[o]
            cnt = 1
            if mode in (1, 3):
                cnt = sh[chan]
            if mode in (2, 3):
                cnt *= -(-sh[blk] // bs)
            if pow2:
                scales = 2.0 ** rng.integers(-3, 3, cnt)
            else:
                scales = rng.uniform(0.001, 0.1, cnt).astype(np.float32).astype(np.float64)
        d = (vals - zp).reshape(sh) if len(sh) else np.float64(vals[0] - zp)
        if scales is not None:
            d = d * scale_array(sh, mode, chan, blk, bs, scales)
        deq.append(d)
        ops.append((dt, sh, zp, mode if mode is not None else 0, chan, blk, bs, scales, q))
    if kind == I32:
        ia = (np.array(ops[0][8]).reshape(shp[0]) - zps[0]).astype(np.int64)
        ib = (np.array(ops[1][8]).reshape(shp[1]) - zps[1]).astype(np.int64)
        want = np.einsum(spec, ia, ib)
        tol = 0.0
    else:
        want = np.einsum(spec, deq[0], deq[1])
        mag = np.einsum(spec, np.abs(deq[0]), np.abs(deq[1]))
        K = 1
        for c in kl:
            K *= sizes[c]
        G = frac_unit(deq[0]) * frac_unit(deq[1])  # every product is a multiple of G
        exact = pow2 and float(np.max(mag)) / G < 2 ** 24
        tol = 0.0 if exact else float(np.max(mag)) * (2 * K + 4) * 2.0 ** -24
    want = np.asarray(want)
    lines = ['SPEC "%s"' % spec, 'KIND %s' % kind]
    for (dt, sh, zp, mode, chan, blk, bs, scales, q) in ops:
        s = 'OP %s %d %s ZP %d SCALING %d CHAN %d BLOCK %d BS %d' % (
            dt, len(sh), ' '.join(map(str, sh)), zp, mode, chan, blk, bs)
        s += ' NS %d %s' % (0 if scales is None else len(scales),
                            '' if scales is None else ' '.join(fmt_f(x) for x in scales))
        s += ' DATA %d %s' % (len(q), ' '.join(fmt_f(x) if dt == 'f32' else str(int(x)) for x in q))
        lines.append(s)
    vals = want.reshape(-1)
    lines.append('OUT %d %s TOL %r N %d %s' % (
        want.ndim, ' '.join(map(str, want.shape)), tol, vals.size,
        ' '.join(str(int(v)) if kind == I32 else repr(float(v)) for v in vals)))
    lines.append('END')
    return '\n'.join(lines) + '\n'


modes_blk = [None, None]

# (spec, ellipsis dims for A and B) -- >= 50 specs
SPECS = [
    ('ij,jk->ik', None), ('ij,jk', None), ('ij,kj->ik', None), ('ji,jk->ik', None),
    ('ij,jk->ki', None), ('bsd,df->bsf', None), ('bnth,bnsh->bnts', None),
    ('btnh,hd->btnd', None), ('bij,bjk->bik', None), ('bij,bkj->bki', None), ('i,i->', None),
    ('i,i', None), ('i,j->ij', None), ('i,j', None), ('ij,ij->ij', None), ('ij,ij->', None),
    ('ij,ji->', None), ('ii,i->i', None), ('ij,j->i', None), ('j,ij->i', None),
    ('abc,cd->abd', None), ('abc,bcd->ad', None), ('abcd,dc->ab', None),
    ('bhqd,bhkd->bhqk', None), ('bhqk,bhkd->bhqd', None), ('...ij,...jk->...ik', ((2,), (2,))),
    ('...ij,...jk->...ik', ((3, 2), (1, 2))), ('...ij,jk', ((2,), ())), ('i...,i...', ((3,), (3,))),
    ('ij,k->ik', None), ('ij,k->i', None), ('ijk,jl->il', None), ('ab,cd->abcd', None),
    ('ab,cd->dcba', None), ('xy,yz->zx', None), (' a b , b c -> a c ', None), ('Ab,bC->AC', None),
    ('ab,bC', None), ('bsd,fd->bsf', None), ('dbs,df->fbs', None), ('ijkl,lkm->ijm', None),
    ('ijk,ikl->ijl', None), ('nij,njk->nik', None), ('ij,jk->', None), ('ii,jj->ij', None),
    ('bik,bjk->bij', None), ('bki,bkj->bij', None), ('ij,jk->kij', None), ('a,b->ba', None),
    ('abcdefgh,h->abcdefg', None), ('sd,ds->', None), ('bsnh,bsnh->bns', None),
    ('kn,km->mn', None), ('btd,dnh->btnh', None), ('btnh,nhd->btd', None),
    ('...d,df->...f', ((2, 3), ())), ('ij...,jk...->ik...', ((2,), (2,))),
]


def sizes_for(spec, big_k=False):
    a, b, _ = parse(spec)
    labs = set(c for c in a + b if c.isalpha())
    kl = set(k_labels(spec))
    sz = {}
    for c in sorted(labs):
        hi = 9 if (big_k and c in kl) else 5
        sz[c] = int(rng.integers(1, hi + 1))
    if len(labs) >= 7:
        for c in sorted(labs):
            sz[c] = int(rng.integers(1, 3))
    return sz


def main():
    check = '--check' in sys.argv
    out = io.StringIO()
    out.write(__doc__.split('tests/data/einsum_cases.txt:')[0].replace('\n', '\n# ')[:0])
    out.write('# einsum golden data (tests/gen/gen_einsum.py; format in its doc string)\n')
    ncase = 0
    for idx, (spec, ell) in enumerate(SPECS):
        ell = ell or ((), ())
        a_t, b_t, _ = parse(spec)
        # float32 x float32, integer-valued data: exact
        out.write(gen_case(spec, F32, ('f32', 'f32'), sizes_for(spec), ell)); ncase += 1
        # int8 x int8 -> int32 with zero points on both sides
        zps = (int(rng.integers(-5, 6)), int(rng.integers(-5, 6)))
        out.write(gen_case(spec, I32, ('int8', 'int8'), sizes_for(spec), ell, zps=zps)); ncase += 1
        # int8 x int8 -> float: scale modes (channel / block where the labels allow)
        sz = sizes_for(spec, big_k=True)
        kl = k_labels(spec)
        ol = out_labels(spec)
        ka = [c for c in kl if c in a_t and c in b_t]
        modes = [0, 0]
        for o, t in enumerate((a_t, b_t)):
            labs = axis_labels(t, len(shapes_for(spec, sz, ell)[o]))
            has_chan = any(l == '.' or l in ol for l in labs)
            modes[o] = int(rng.choice([0, 1] if has_chan else [0]))
        blk = None
        if ka and a_t.count(ka[-1]) == 1 and b_t.count(ka[-1]) == 1:
            L = ka[-1]
            kax = sz[L]
            others = [sz[c] for c in kl if c != L]
            kouter = int(np.prod(others)) if others else 1
            divs = [d for d in range(1, kax + 1) if kax % d == 0] if kouter > 1 else \
                list(range(1, kax + 1))
            bs = int(rng.choice(divs))
            for o, t in enumerate((a_t, b_t)):
                labs = axis_labels(t, len(shapes_for(spec, sz, ell)[o]))
                modes_blk[o] = (labs.index(L), bs)
            blk = True
            modes = [2 + (1 if m == 1 else 0) for m in modes]
            if rng.random() < 0.3:
                modes[int(rng.integers(0, 2))] = int(rng.choice([0, 1]))
                for o in range(2):  # a plain per-channel mode must have a channel axis
                    labs = axis_labels((a_t, b_t)[o], len(shapes_for(spec, sz, ell)[o]))
                    if modes[o] == 1 and not any(l == '.' or l in ol for l in labs):
                        modes[o] = 0
        zsel = int(rng.integers(0, 3))
        zps = [0, 0]
        if zsel < 2:
            zps[zsel] = int(rng.integers(-20, 21))
        out.write(gen_case(spec, Q, ('int8', 'int8'), sz, ell, modes=tuple(modes),
                           zps=tuple(zps), pow2=bool(rng.random() < 0.5))); ncase += 1
        sel = idx % 3
        if sel == 0:  # int4 / uint4 operands (unpacked exactly)
            da = 'int4' if rng.random() < 0.5 else 'uint4'
            out.write(gen_case(spec, I32, (da, 'int4'), sizes_for(spec), ell,
                               zps=(8 if da == 'uint4' else 0, int(rng.integers(-3, 4)))))
            ncase += 1
            modes_blk[0] = modes_blk[1] = None
            out.write(gen_case(spec, Q, ('int4', 'int8'), sizes_for(spec), ell,
                               modes=(0, 0), zps=(int(rng.integers(-3, 4)), 0))); ncase += 1
        elif sel == 1:  # fp8 (x fp8 or x float), per-tensor / per-channel scales
            f1 = 'e4m3fn' if rng.random() < 0.5 else 'e5m2'
            f2 = ['e4m3fn', 'e5m2', 'f32'][int(rng.integers(0, 3))]
            szf = sizes_for(spec)
            fm = []
            for o, t in enumerate((a_t, b_t)):  # per-channel where an output axis exists
                labs = axis_labels(t, len(shapes_for(spec, szf, ell)[o]))
                fm.append(1 if any(l == '.' or l in ol for l in labs) and rng.random() < 0.6 else 0)
            out.write(gen_case(spec, F32, (f1, f2), szf, ell,
                               modes=(fm[0], None if f2 == 'f32' else fm[1]))); ncase += 1
    data = out.getvalue()

    mal = io.StringIO()
    mal.write('# einsum malformed specs (tests/gen/gen_einsum.py): status pos rankA dims rankB dims "spec"\n')
    nbad = 0
    for st, pos, sa, sb, spec, np_accepts in MALFORMED:
        ok = True
        try:
            np.einsum(spec, np.ones(sa), np.ones(sb))
        except Exception:
            ok = False
        if ok and not np_accepts:
            raise SystemExit('numpy accepts %r: mark it as a qmx-only rejection' % spec)
        if np_accepts:
            mal.write('# numpy accepts the next one; qmx does not (documented)\n')
        mal.write('%d %d %d %s %d %s "%s"\n' % (st, pos, len(sa), ' '.join(map(str, sa)), len(sb),
                                               ' '.join(map(str, sb)), spec))
        nbad += 1
    files = {'tests/data/einsum_cases.txt': data, 'tests/data/einsum_malformed.txt': mal.getvalue()}
    bad = 0
    for path, text in files.items():
        if check:
            old = open(path, encoding='utf-8').read() if os.path.exists(path) else ''
            if old != text:
                print('differs:', path); bad = 1
        else:
            open(path, 'w', encoding='utf-8').write(text)
    print('%d cases over %d specs, %d malformed specs' % (ncase, len(SPECS), nbad))
    return bad


PARSE, SHAPE, UNSUP = -9, -3, -10
MALFORMED = [
    # (status, position, shape A, shape B, spec, numpy accepts it)
    (PARSE, 2, (2, 3), (3, 4), 'ij;jk->ik', False),        # bad character
    (PARSE, 1, (2, 3), (3, 4), 'i1,jk->ik', False),        # digit
    (PARSE, 1, (2, 3), (3, 4), 'i_,jk->ik', False),
    (PARSE, 2, (2, 3), (3, 4), 'ij\t,jk->ik', False),      # tab (only ' ' is skipped)
    (PARSE, 5, (2, 3), (3, 4), 'ij,jk-ik', False),         # '-' without '>'
    (PARSE, 5, (2, 3), (3, 4), 'ij,jk>ik', False),         # '>' without '-'
    (PARSE, 5, (2, 3), (3, 4), 'ij,jk-', False),
    (PARSE, 9, (2, 3), (3, 4), 'ij,jk->ik->i', False),     # second arrow
    (PARSE, 5, (2, 3), (3, 4), 'ij,jk,kl->il', False),     # three operands
    (PARSE, 3, (2, 3), (3, 4), 'ij,,jk->ik', False),
    (PARSE, 8, (2, 3), (3, 4), 'ij,jk->i,k', False),       # ',' in the output
    (PARSE, 8, (2, 3), (3, 4), 'ij,jk->iz', False),        # output label not in the inputs
    (PARSE, 7, (2, 3), (3, 4), 'ij,jk->Ik', False),        # case matters
    (PARSE, 8, (2, 3), (3, 4), 'ij,jk->ii', False),        # output label twice
    (PARSE, 10, (2, 3), (3, 4), 'ij,jk->ik i', False),
    (PARSE, 0, (2, 3), (3, 4), '.ij,jk->ik', False),       # lone dots
    (PARSE, 0, (2, 3), (3, 4), '..ij,jk->ik', False),
    (PARSE, 4, (2, 3), (3, 4), '...i...,jk', False),       # two ellipses in one term
    (PARSE, 8, (1,) * 8, (1,), 'abcdefghi,i->a', False),   # ninth label
    (PARSE, 0, (2, 3), (3, 4), '+ij,jk->ik', False),
    (PARSE, 2, (2, 3), (3, 4), 'ij\xe9,jk', False),        # non-ASCII byte
    (PARSE, 7, (2, 3), (3, 4), 'ij,jk->.', False),
    (SHAPE, 3, (2, 3), (4, 5), 'ij,jk->ik', False),        # j: 3 vs 4, B's character
    (SHAPE, 1, (2, 3), (3,), 'ii,i->i', False),          # repeated label, two sizes
    (SHAPE, 2, (2, 3, 4), (3, 4), 'ij,jk->ik', False),     # rank 3 for two labels
    (SHAPE, 5, (2, 3), (3,), 'ij,jk->ik', False),          # rank 1 for two labels
    (SHAPE, 11, (2, 3), (3, 4), '...i,jk->ik', False),     # ellipsis dims, output without '...'
    (SHAPE, 12, (2, 2, 3), (3, 4), '...ij,jk->ik', False), # the same with two labels
    (SHAPE, 6, (5, 2, 3), (4, 3, 4), '...ij,...jk->...ik', False),  # 5 vs 4 do not broadcast
    (SHAPE, 6, (2, 3), (3, 4), 'ij,jkl->ik', False),
    (UNSUP, 2, (2, 3), (3, 4), 'ij->ji', False),           # one operand
    (UNSUP, 2, (2, 3), (3, 4), 'ij', False),
    (UNSUP, 0, (2, 3), (3, 4), '->ik', False),
    (UNSUP, 0, (2, 3), (3, 4), '', False),
    (PARSE, 9, (2, 3), (3, 4), 'ij,jk->ik-', False),
    (PARSE, 9, (2, 3), (3, 4), 'ij,jk->ik>', False),
    (PARSE, 12, (2, 3), (3, 4), 'ij,jk->...ik...', False),
    (SHAPE, 3, (2, 3), (3, 4), 'ji,jk->ik', False),        # j: 2 in A, 3 in B: B's j
]


if __name__ == '__main__':
    sys.exit(main())
