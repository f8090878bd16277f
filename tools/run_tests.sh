#!/usr/bin/env bash
# run_tests.sh - build and run every test program (tests/test_*.c) on one target. The last line
# is "LABEL: N passed, N failed", the sums over all programs; exit status 0 only if none failed.
#
#   tools/run_tests.sh [--label NAME] TARGET [CFLAGS...]
#
# TARGET: a name from `tools/targets/run-on --list`, or host-c++ (the host target, every test
# compiled as C++11 by HOST_CXX, default g++).
# Every program is built with -I. -std=c99 -Wall -Wextra -Wpedantic -Werror (C++: -I. -x c++
# -std=c++11 -Wall -Wextra -Werror), plus -ffreestanding on Cortex-M, then CFLAGS (which win:
# -std=gnu99 or -O3 override the defaults), and runs from the repository root with no arguments.
# A program counts by its closing line "N passed, N failed". A failed build, a crash, a timeout,
# a missing closing line or a non-zero exit with no failed check counts as 1 failed.
# Binaries and full logs: build/tests/NAME/ (NAME defaults to TARGET).
# The library's implementation is compiled once per run, with the same compiler and flags, into
# build/tests/NAME/qmx_impl.o (from build/tests/qmx_impl.c: QMX_IMPLEMENTATION + the three
# headers), and linked into every program that opts in: one whose QMX_IMPLEMENTATION is guarded
#     #ifndef QMX_TEST_SEPARATE_IMPL
#     #define QMX_IMPLEMENTATION
#     #endif
# is compiled with -DQMX_TEST_SEPARATE_IMPL. A program without that guard, or one that #defines
# a macro the headers test (a configuration knob, e.g. QMX_NT_STORE_MIN), builds its own
# implementation, as does any program built alone (cc -I. tests/test_x.c -lm).
# If the shared implementation does not build, each program that needed it counts 1 failed.
# A program that links the shared implementation is compiled with TEST_PROGRAM_CFLAGS (default
# -O1) after the other flags: the library keeps the configuration's flags (-O2, -O3 ...), the
# test code builds in half the time of -O2 (all programs, x86-64 gcc 12: 42 s vs 85 s of CPU)
# and runs little slower (the library does the heavy work; natively test_kvcache 1.40 -> 1.65 s,
# the others within noise). TEST_PROGRAM_CFLAGS= keeps the configuration's flags alone.
# Environment: JOBS=2 programs at once; TESTS="tests/test_a.c ..." instead of all of them;
# TARGET_TIMEOUT, HOST_CC, HOST_CXX, HOST_MARCH, TARGET_BUILD_CACHE: see tools/targets/run-on.
# (tools/test_matrix.sh --parallel also sets QMX_JOB_SLOTS_FD, a pipe of job-slot tokens shared
# by several runs: one is taken before each program starts and given back when it is done, and
# QMX_DISPATCHED, a file created once the last program has started.)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
RUN_ON=tools/targets/run-on

usage() { sed -n '2,31s/^# \{0,1\}//p' "$0" >&2; exit 2; }
now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.1f", t1 - t0 }'; }

label=''
while [ $# -gt 0 ]; do
    case $1 in
        --label) [ $# -ge 2 ] || usage; label=$2; shift 2 ;;
        --label=*) label=${1#*=}; shift ;;
        -h|--help) usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
target=$1; shift
extra=("$@")
label=${label:-$target}

runner=$target ext=''
flags=(-I. -std=c99 -Wall -Wextra -Wpedantic -Werror)
case $target in
    host-c++)
        runner=host
        export HOST_CC=${HOST_CXX:-g++}
        flags=(-I. -x c++ -std=c++11 -Wall -Wextra -Werror) ;;
    cortex-m*)
        flags+=(-ffreestanding)   # the library must build freestanding; tests may use libc
        ext=.elf ;;
esac

if [ -n "${TESTS:-}" ]; then
    read -r -a tests <<<"$TESTS"
else
    shopt -s nullglob; tests=(tests/test_*.c); shopt -u nullglob
fi
out=build/tests/$label
rm -rf "$out" && mkdir -p "$out" || exit 2
if [ ${#tests[@]} -eq 0 ]; then
    echo "run_tests: no test programs (tests/test_*.c) in $ROOT"
    echo "0 1" >"$out/result"
    echo "$label: 0 passed, 1 failed"
    exit 1
fi
jobs_max=${JOBS:-2}
[ "$jobs_max" -ge 1 ] 2>/dev/null || jobs_max=1
echo "== $label: ${#tests[@]} program(s) on $target, $jobs_max at a time:" \
     "$("$RUN_ON" --cflags "$runner" | sed "s| \.\.\. | ${flags[*]}${extra[*]:+ ${extra[*]}} TEST.c |")"

# ---- the shared implementation (see the top) ----
impl_src=build/tests/qmx_impl.c impl_obj=$out/qmx_impl.o
# The macros the headers test (#if / #ifdef / #ifndef / defined()): a program that #defines one
# of them (QMX_IMPLEMENTATION aside) configures its own implementation.
knobs=$(cat qmx.h qmx_kernels.h qmx_calib.h 2>/dev/null |
        grep -E '^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif)[[:space:]]' |
        grep -oE '\bQMX_[A-Za-z0-9_]+' | grep -vx 'QMX_IMPLEMENTATION' | sort -u | paste -sd'|' -)
shares_impl() {  # 0 when the program tests[$1] links the shared implementation
    local src=${tests[$1]}
    grep -q '^#ifndef QMX_TEST_SEPARATE_IMPL\b' "$src" || return 1
    [ -z "$knobs" ] || ! grep -qE "^[[:space:]]*#[[:space:]]*define[[:space:]]+($knobs)\b" "$src"
}
shared=() own=() order=()
for i in "${!tests[@]}"; do
    if shares_impl "$i"; then shared+=("$i"); else own+=("$i"); fi
done
# Programs with their own implementation (the longer builds) start first, beside the shared one.
order=(${own[@]+"${own[@]}"} ${shared[@]+"${shared[@]}"})
if [ ${#shared[@]} -gt 0 ]; then
    printf '#define QMX_IMPLEMENTATION\n#include "qmx.h"\n#include "qmx_kernels.h"\n#include "qmx_calib.h"\n' \
        >"$impl_src.$$" && { cmp -s "$impl_src.$$" "$impl_src" || mv -f "$impl_src.$$" "$impl_src"; }
    rm -f "$impl_src.$$"
fi
# Compiles the shared implementation; leaves qmx_impl.log and qmx_impl.status ("rc secs").
build_impl() {
    local t0 rc
    t0=$(now)
    TARGET_COMPILE_ONLY=1 TARGET_BIN=$impl_obj TARGET_QUIET=1 \
        "$RUN_ON" "$runner" "${flags[@]}" "${extra[@]}" "$impl_src" >"$out/qmx_impl.log" 2>&1 </dev/null
    rc=$?
    echo "$rc $(since "$t0")" >"$out/qmx_impl.status.tmp" && mv "$out/qmx_impl.status.tmp" "$out/qmx_impl.status"
}

# Builds and runs tests[$1]; leaves NAME.log (build + program output) and NAME.status ("rc secs").
run_one() {
    local src=${tests[$1]} name t0 rc impl=() irc popt=()
    name=$(basename "$src" .c)
    t0=$(now)
    if shares_impl "$1"; then
        read -r irc _ <"$out/qmx_impl.status"
        if [ "$irc" -ne 0 ]; then
            { echo "run_tests: the shared implementation ($impl_obj) did not build:"
              cat "$out/qmx_impl.log"; } >"$out/$name.log"
            echo "125 $(since "$t0")" >"$out/$name.status.tmp" && mv "$out/$name.status.tmp" "$out/$name.status"
            return
        fi
        read -r -a popt <<<"${TEST_PROGRAM_CFLAGS--O1}"
        impl=(-DQMX_TEST_SEPARATE_IMPL ${popt[@]+"${popt[@]}"} "$src" -x none "$impl_obj")
    else
        impl=("$src")
    fi
    TARGET_BIN=$out/$name$ext TARGET_QUIET=1 \
        "$RUN_ON" "$runner" "${flags[@]}" "${extra[@]}" "${impl[@]}" >"$out/$name.log" 2>&1 </dev/null
    rc=$?
    echo "$rc $(since "$t0")" >"$out/$name.status.tmp" && mv "$out/$name.status.tmp" "$out/$name.status"
}

total_pass=0 total_fail=0 bad_programs=0
# Reports tests[$1]: one line, plus the end of its log when it failed; adds to the totals.
report() {
    local src=${tests[$1]} name rc secs line pass=0 fail=0 why='' sig
    name=$(basename "$src" .c)
    read -r rc secs <"$out/$name.status"
    line=$(tr -d '\r' <"$out/$name.log" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -n "$line" ]; then
        pass=${line%% *}
        fail=${line#*, }; fail=${fail%% *}
    fi
    case $rc in
        0) ;;
        124) why="timed out (TARGET_TIMEOUT=${TARGET_TIMEOUT:-600} s)" ;;
        125) why="build failed" ;;
        127) why="toolchain missing and not installable" ;;
        *)  if [ "$rc" -gt 128 ] && sig=$(kill -l $((rc - 128)) 2>/dev/null); then
                why="crashed: SIG$sig (exit $rc)"
            else
                why="exit status $rc"
            fi ;;
    esac
    [ -n "$line" ] || why="${why:+$why, }no closing 'N passed, N failed' line"
    if [ "$fail" -eq 0 ] && { [ "$rc" -ne 0 ] || [ -z "$line" ]; }; then fail=1; fi
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
    # a build identical to an earlier one (TARGET_BUILD_CACHE) is said so
    local reused=''
    ! grep -q '^\[[^]]*\] build reused: ' "$out/$name.log" || reused='  (build reused)'
    if [ "$fail" -eq 0 ]; then
        printf '  ok    %-28s %6d passed, %d failed  %6ss%s\n' "$name" "$pass" "$fail" "$secs" "$reused"
    else
        bad_programs=$((bad_programs + 1))
        printf '  FAIL  %-28s %6d passed, %d failed  %6ss%s\n' "$name" "$pass" "$fail" "$secs" "$reused${why:+  ($why)}"
        # The failure lines (or the compiler's errors), indented so that no line of them can be
        # taken for a closing line; the whole log stays in $out.
        tr -d '\r' <"$out/$name.log" | tail -n 40 | sed 's/^/        | /'
        echo "        (full log: $out/$name.log)"
    fi
}

t_all=$(now)
next=0 running=0
flush_done() {  # report, in order, every program whose run has finished
    while [ $next -lt ${#tests[@]} ] && [ -f "$out/$(basename "${tests[$next]}" .c).status" ]; do
        report $next
        next=$((next + 1))
    done
}
slots=${QMX_JOB_SLOTS_FD:-}
[[ $slots =~ ^[0-9]+$ ]] && { true >&"$slots"; } 2>/dev/null || slots=''
dispatch() {  # runs the command "$@" in the background once a job slot is free
    while [ $running -ge "$jobs_max" ]; do
        wait -n; running=$((running - 1))
        flush_done
    done
    if [ -n "$slots" ] && read -r -n 1 -u "$slots" _; then   # waits for a free job slot
        flush_done
        { "$@"; printf x >&"$slots"; } &
    else
        slots=''
        "$@" &
    fi
    running=$((running + 1))
}
[ ${#shared[@]} -eq 0 ] || dispatch build_impl
for i in "${order[@]}"; do
    if shares_impl "$i"; then   # it links the shared implementation: wait until that is built
        while [ ! -f "$out/qmx_impl.status" ] && [ $running -gt 0 ]; do
            wait -n; running=$((running - 1))
            flush_done
        done
    fi
    dispatch run_one "$i"
done
[ -z "${QMX_DISPATCHED:-}" ] || : >"$QMX_DISPATCHED"
wait
flush_done

echo "$total_pass $total_fail" >"$out/result"
impl_note=''
if [ ${#shared[@]} -gt 0 ] && read -r irc isecs <"$out/qmx_impl.status"; then
    impl_note="; ${#shared[@]} of them link the shared implementation"
    if [ "$irc" -eq 0 ]; then
        impl_note+=" (built in ${isecs} s)"
        ! grep -q '^\[[^]]*\] build reused: ' "$out/qmx_impl.log" || impl_note+=" (build reused)"
    else
        impl_note+=", which FAILED to build (log: $out/qmx_impl.log)"
    fi
fi
echo "== $label: $((${#tests[@]} - bad_programs))/${#tests[@]} programs ok in $(since "$t_all") s$impl_note"
echo "$label: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
