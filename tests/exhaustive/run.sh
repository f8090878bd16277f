#!/usr/bin/env bash
# tests/exhaustive/run.sh - the long-running exhaustive checks (make test-exhaustive).
# (fp8 first; fp4 / fp6 / e8m0 last, see below.)
#
# Checks qmx_fp8_from_f32 against NVIDIA's cuda_fp8.h (__nv_cvt_float_to_fp8, host code path)
# for all 2^32 float32 bit patterns, E4M3FN and E5M2, saturating and not, and qmx_fp8_to_f32
# against __nv_cvt_fp8_to_halfraw for the 256 codes of each format (details in
# fp8_vs_cuda.cpp and README.md). Runs from anywhere; builds into build/exhaustive/.
#
# NEEDS the CUDA toolkit headers (cuda_fp8.h, cuda_fp16.h, cuda.h, ...); no GPU and no driver:
# only the __host__ code of the conversion functions runs. The toolkit is found at $CUDA_HOME,
# else $CUDA_PATH, else the directory above the nvcc in PATH, else /usr/local/cuda. With nvcc
# present the oracle is compiled by nvcc (-x cu, host code as any CUDA program gets it);
# without nvcc but with the headers it is compiled by $HOST_CXX / $CXX / g++ with -I<cuda>/include
# (the header supports that; the conversions take the same host path). Without the headers
# this script fails (exit 1): the target was asked for explicitly, so a silent skip would hide
# that nothing was checked.
#
# qmx itself is compiled as C99 by $HOST_CC / $CC / gcc (-O2 -march=native, as `make test`'s
# native build) and linked in, as a C user would. The two oracles are compiled in the background
# while the array check below builds and runs (their logs: build/exhaustive/build-*.log).
#
# Before that (no CUDA needed), fp8_array_vs_scalar.c checks the vectorised array paths
# (qmx_fp8_quantize_array x/s, qmx_quantize fp8 AQT x*(1/s)) against the scalar
# qmx_fp8_from_f32 for all four fp8 formats, saturating and not: by default every 16th block
# of 2^16 inputs (all signs, exponents and low mantissa bits; ~10 s), all 2^32 inputs with
# EXH_ARRAY_STRIDE=1 (~4 min of CPU time, 2-3 min on 2 cores).
#
# After it, lowfloat_vs_cuda.cpp checks qmx_fp4_from_f32 / qmx_fp6_from_f32 (E2M3, E3M2) against
# __nv_cvt_float_to_fp4 / _fp6 (cudaRoundNearest and cudaRoundZero) and qmx_e8m0_from_f32 (DOWN,
# UP) against __nv_cvt_float_to_e8m0 (cudaRoundZero / cudaRoundPosInf, __NV_SATFINITE /
# __NV_NOSAT) for all 2^32 inputs (10 sweeps, ~85 s on 2 cores), and the decoders for every code.
# EXH_LOWFLOAT_STRIDE=S (a power of two) checks 2^32/S inputs instead (see README.md).
#
# Environment: EXH_THREADS (default: the number of CPUs), EXH_ARGS (extra arguments for all
# programs, e.g. --quick for a seconds-long smoke test of the harness), EXH_ARRAY_STRIDE,
# EXH_LOWFLOAT_STRIDE (default 1: every input).
# Output: progress, at most 20 mismatches per (format, mode) sweep with their input bits, one
# line per sweep, then "N passed, N failed" (one check per input and sweep). Exit status 0
# only when nothing failed; 1 on a mismatch or a build problem.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUT=build/exhaustive
SRC=tests/exhaustive

die() { wait; echo "test-exhaustive: $*" >&2; echo "0 passed, 1 failed"; exit 1; }  # (no orphaned builds)

cc=${HOST_CC:-${CC:-gcc}}
threads=${EXH_THREADS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$OUT" || die "cannot create $OUT"

"$cc" -std=c99 -O2 -march=native -Wall -Wextra -Werror -I. \
    -c "$SRC/qmx_impl.c" -o "$OUT/qmx_impl.o" || die "building qmx ($cc) failed"

# ---- find the CUDA toolkit --------------------------------------------------------------------
cuda=
for c in "${CUDA_HOME:-}" "${CUDA_PATH:-}"; do
    if [ -n "$c" ] && [ -f "$c/include/cuda_fp8.h" ]; then cuda=$c; break; fi
done
if [ -z "$cuda" ] && command -v nvcc >/dev/null 2>&1; then
    c=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
    [ -f "$c/include/cuda_fp8.h" ] && cuda=$c
fi
if [ -z "$cuda" ] && [ -f /usr/local/cuda/include/cuda_fp8.h ]; then cuda=/usr/local/cuda; fi
nvcc=
[ -n "$cuda" ] && [ -x "$cuda/bin/nvcc" ] && nvcc=$cuda/bin/nvcc

cxx=${HOST_CXX:-${CXX:-g++}}

# ---- build the two oracles in the background (each a single-threaded compile of a few tens of
# seconds) while the array check below builds and runs; their logs: $OUT/build-*.log ------------
build_oracle() {  # NAME EXTRA_WARNING_FLAGS: builds $OUT/NAME from $SRC/NAME.cpp + qmx_impl.o
    local n=$1 w=$2
    if [ -n "$nvcc" ]; then
        "$nvcc" -ccbin "$cxx" -O3 -std=c++11 -x cu -Xcompiler "-Wall,-Wextra$w,-march=native" -I. \
            -c "$SRC/$n.cpp" -o "$OUT/$n.o" || { echo "building $n (nvcc) failed"; return 1; }
        "$nvcc" -ccbin "$cxx" "$OUT/$n.o" "$OUT/qmx_impl.o" -o "$OUT/$n" \
            || { echo "linking $n (nvcc) failed"; return 1; }
    else
        "$cxx" -O3 -std=c++11 -march=native -Wall -Wextra ${w//,/ } -I. -I"$cuda/include" \
            "$SRC/$n.cpp" "$OUT/qmx_impl.o" -o "$OUT/$n" -pthread \
            || { echo "building $n ($cxx) failed"; return 1; }
    fi
}
oracle_pids=()
if [ -n "$cuda" ]; then
    build_oracle fp8_vs_cuda '' >"$OUT/build-fp8_vs_cuda.log" 2>&1 </dev/null &
    oracle_pids+=($!)
    # cuda_fp4.hpp has unused parameters: -Wno-unused-parameter keeps the log readable
    build_oracle lowfloat_vs_cuda ',-Wno-unused-parameter' >"$OUT/build-lowfloat_vs_cuda.log" 2>&1 </dev/null &
    oracle_pids+=($!)
fi

# ---- the SIMD array paths against the scalar encoder (no CUDA needed) --------------------------
"$cc" -std=c99 -O2 -march=native -Wall -Wextra -Werror -I. "$SRC/fp8_array_vs_scalar.c" \
    "$OUT/qmx_impl.o" -o "$OUT/fp8_array_vs_scalar" -pthread \
    || die "building fp8_array_vs_scalar failed"
# shellcheck disable=SC2086  # EXH_ARGS is word-split on purpose
"$OUT/fp8_array_vs_scalar" --threads "$threads" --stride "${EXH_ARRAY_STRIDE:-16}" ${EXH_ARGS:-} \
    | tee "$OUT/array.log"
arr_rc=${PIPESTATUS[0]}
arr_last=$(tail -n 1 "$OUT/array.log")
case $arr_rc in 0|1) ;; *) die "$OUT/fp8_array_vs_scalar ended with exit status $arr_rc" ;; esac

if [ -z "$cuda" ]; then
    die "the CUDA toolkit headers (cuda_fp8.h) were not found in \$CUDA_HOME, \$CUDA_PATH, next
    to nvcc or in /usr/local/cuda. This test compares qmx's fp8 conversions with NVIDIA's
    cuda_fp8.h and needs the toolkit installed (no GPU needed); set CUDA_HOME to its root."
fi

# ---- the oracles' builds ----------------------------------------------------------------------
echo "== test-exhaustive: fp8 vs NVIDIA cuda_fp8.h ($cuda)"
if [ -n "$nvcc" ]; then
    echo "   oracle: $("$nvcc" --version | tail -n 1), host compiler $("$cxx" -dumpversion 2>/dev/null)"
else
    echo "   oracle: no nvcc in $cuda/bin; $cxx with -I$cuda/include"
fi
for i in 0 1; do
    n=$([ $i = 0 ] && echo fp8_vs_cuda || echo lowfloat_vs_cuda)
    wait "${oracle_pids[$i]}"; brc=$?
    sed 's/^/   /' "$OUT/build-$n.log"
    [ $brc -eq 0 ] || die "$(tail -n 1 "$OUT/build-$n.log")"
done

# ---- run --------------------------------------------------------------------------------------
# shellcheck disable=SC2086  # EXH_ARGS is word-split on purpose
"$OUT/fp8_vs_cuda" --threads "$threads" ${EXH_ARGS:-} | tee "$OUT/cuda.log"
rc=${PIPESTATUS[0]}
cuda_last=$(tail -n 1 "$OUT/cuda.log")
case $rc in 0|1) ;; *) die "$OUT/fp8_vs_cuda ended with exit status $rc" ;; esac

# ---- fp4 / fp6 / e8m0 vs cuda_fp4.h, cuda_fp6.h, cuda_fp8.h (all 2^32 inputs by default) ------
echo "== test-exhaustive: fp4/fp6/e8m0 vs NVIDIA cuda_fp4.h, cuda_fp6.h, cuda_fp8.h"
# shellcheck disable=SC2086  # EXH_ARGS is word-split on purpose
"$OUT/lowfloat_vs_cuda" --threads "$threads" --stride "${EXH_LOWFLOAT_STRIDE:-1}" ${EXH_ARGS:-} \
    | tee "$OUT/lowfloat.log"
lf_rc=${PIPESTATUS[0]}
lf_last=$(tail -n 1 "$OUT/lowfloat.log")
case $lf_rc in 0|1) ;; *) die "$OUT/lowfloat_vs_cuda ended with exit status $lf_rc" ;; esac
# one total over the three programs, in the "N passed, N failed" form of the other tests
# shellcheck disable=SC2086  # split "N passed, N failed" into words
set -- $arr_last $cuda_last $lf_last
echo "$(( $1 + $5 + $9 )) passed, $(( $3 + $7 + ${11} )) failed"
if [ "$rc" -ne 0 ] || [ "$arr_rc" -ne 0 ] || [ "$lf_rc" -ne 0 ]; then
    echo "test-exhaustive: FAILED (mismatches above)" >&2; exit 1
fi
exit 0
