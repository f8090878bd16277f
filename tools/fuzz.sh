#!/usr/bin/env bash
# fuzz.sh - build and run every libFuzzer harness tests/fuzz/fuzz_*.c for a bounded time each,
# under ASan + UBSan (clang from Debian), FUZZ_JOBS (default 2) harnesses at a time.
# FUZZ_CFLAGS (default -march=native) selects the build: the SIMD paths (AVX2, AVX-512 VNNI)
# are where tails and masked loads live; FUZZ_CFLAGS=-DQMX_NO_SIMD fuzzes the scalar code.
#   tools/fuzz.sh SECONDS [NAME...]    NAME = fuzz_x (default: all harnesses)
#   tools/fuzz.sh --list               rewrite tests/fuzz/corpus.lst (the inputs that
#                                      tests/test_fuzz_replay.c replays) from the directories
# Seeds: tests/fuzz/corpus/NAME/ and tests/fuzz/regressions/NAME/ (read-only; the run's new
# inputs go to build/fuzz/NAME/corpus). A crash is saved as build/fuzz/NAME/crash-*: minimise it
# (./NAME -minimize_crash=1 -runs=10000 crash-...), fix the bug, and add the input under
# tests/fuzz/regressions/NAME/ (then --list), so that test_fuzz_replay replays it everywhere.
# The library's implementation is compiled once (build/fuzz/qmx_impl.o, the three headers with
# the same flags and -fsanitize=fuzzer-no-link) and linked into every harness that includes
# qmx_kernels.h or qmx_calib.h (compiled with -DQMX_TEST_SEPARATE_IMPL, as test_fuzz_replay
# does): one ~1.5 min compile instead of five. The converter harnesses (qmx.h only) build whole.
# One "ok"/"FAIL" line per harness (in the order given); the last line is "N passed, N failed".
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
list=tests/fuzz/corpus.lst

write_list() {
    { echo "# inputs replayed by tests/test_fuzz_replay.c; regenerate with tools/fuzz.sh --list"
      find tests/fuzz/corpus tests/fuzz/regressions -mindepth 2 -maxdepth 2 -type f \
          ! -name '.*' 2>/dev/null | LC_ALL=C sort; } >"$1"
}
if [ "${1:-}" = "--list" ]; then
    write_list "$list"; echo "fuzz: wrote $list ($(grep -vc '^#' "$list") inputs)"; exit 0
fi
secs=${1:-60}; shift || true
jobs=${FUZZ_JOBS:-2}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: $cc not found (apt-get install clang)"; echo "0 passed, 1 failed"; exit 1
fi
if [ $# -gt 0 ]; then names=("$@"); else
    shopt -s nullglob; names=(); for f in tests/fuzz/fuzz_*.c; do names+=("$(basename "$f" .c)"); done
fi
# The replay list must name every input (test_fuzz_replay checks it too, where it can list
# directories): say so early rather than after minutes of fuzzing.
tmp=$(mktemp) && write_list "$tmp"
if ! cmp -s <(grep -v '^#' "$tmp") <(grep -v '^#' "$list" 2>/dev/null); then
    echo "fuzz: warning: $list is stale (run tools/fuzz.sh --list)"
fi
rm -f "$tmp"

san=(-fno-sanitize-recover=all)
impl_src=build/fuzz/qmx_impl.c impl_obj=build/fuzz/qmx_impl.o
shares_impl() { grep -qE '^#include "qmx_(kernels|calib)\.h"' "tests/fuzz/$1.c"; }
# The shared implementation; leaves build/fuzz/impl.ok or build/fuzz/impl.failed.
build_impl() {
    # shellcheck disable=SC2086  # FUZZ_CFLAGS is a list of flags
    if "$cc" -std=c99 -g -O1 -I. -fsanitize=fuzzer-no-link,address,undefined "${san[@]}" \
            ${FUZZ_CFLAGS--march=native} -c "$impl_src" -o "$impl_obj" 2>build/fuzz/impl.log; then
        : >build/fuzz/impl.ok
    else
        : >build/fuzz/impl.failed
    fi
}
# Builds one harness; leaves build/fuzz/NAME/built (a harness sharing the implementation: its
# object, linked once the implementation is there), or its FAIL line in build/fuzz/NAME/result.
build_one() {
    local n=$1 src=tests/fuzz/$1.c out=build/fuzz/$1 what=()
    what=(-o "$out/$n")
    if [ "$n" = qmx_impl ]; then build_impl; return; fi
    shares_impl "$n" && what=(-DQMX_TEST_SEPARATE_IMPL -c -o "$out/$n.o")
    # shellcheck disable=SC2086  # FUZZ_CFLAGS is a list of flags
    if "$cc" -std=c99 -g -O1 -I. -fsanitize=fuzzer,address,undefined "${san[@]}" \
            ${FUZZ_CFLAGS--march=native} "$src" "${what[@]}" 2>"$out/build.log"; then
        : >"$out/built"
    else
        { echo "  FAIL  $n: build failed (see $out/build.log)"; sed -n 1,20p "$out/build.log"; } >"$out/result"
    fi
}
# Ready to run: built, and (sharing) the implementation built; links it then. A harness whose
# shared implementation failed gets its FAIL line here.
ready() {
    local n=$1 out=build/fuzz/$1
    [ -f "$out/built" ] || return 1
    shares_impl "$n" || return 0
    if [ -f build/fuzz/impl.failed ]; then
        { echo "  FAIL  $n: the shared implementation did not build (see build/fuzz/impl.log)"
          sed -n 1,20p build/fuzz/impl.log; } >"$out/result"
        return 1
    fi
    [ -f build/fuzz/impl.ok ] || return 1
    if [ ! -x "$out/$n" ]; then
        "$cc" -fsanitize=fuzzer,address,undefined "$out/$n.o" "$impl_obj" -o "$out/$n" \
            2>>"$out/build.log" || {
            { echo "  FAIL  $n: link failed (see $out/build.log)"; sed -n 1,20p "$out/build.log"; } >"$out/result"
            return 1; }
    fi
}

# Runs one built harness for $secs; leaves build/fuzz/NAME/result: its ok/FAIL line(s).
fuzz_one() {
    local n=$1 out=build/fuzz/$1 seeds=() d rc execs
    for d in "tests/fuzz/corpus/$n" "tests/fuzz/regressions/$n"; do
        [ -d "$d" ] && seeds+=("../../../$d")
    done
    (cd "$out" && UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./"$n" -max_total_time="$secs" \
        -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 corpus "${seeds[@]}" \
        >run.log 2>&1)
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/run.log" | grep -o '[0-9]*$' | tail -1)
    if [ $rc -eq 0 ]; then
        echo "  ok    $n: ${execs:-?} executions in ${secs} s, no crash" >"$out/result"
    else
        { echo "  FAIL  $n: exit $rc after ${execs:-?} executions (log: $out/run.log)"
          grep -E 'ERROR|runtime error|SUMMARY' "$out/run.log" | head -5; } >"$out/result"
    fi
}

# The schedule, $jobs tasks at a time: every build first (a free slot takes the next build while
# there is one), then the runs, each as soon as its harness is built. Each run has a whole CPU to
# itself for its $secs (with 2 CPUs and 2 jobs), and the runs start staggered by the builds'
# lengths, so the last ones end close together instead of one running alone at the end.
t0=$(date +%s)
# Builds in this order: the shared implementation (the longest) if a harness needs it, the
# harnesses that build whole (so that their runs start while it compiles), then the objects.
rm -f build/fuzz/impl.ok build/fuzz/impl.failed "$impl_obj"
own=() obj=()
for n in "${names[@]}"; do
    mkdir -p "build/fuzz/$n/corpus" && rm -f "build/fuzz/$n/result" "build/fuzz/$n/built" \
        "build/fuzz/$n/$n" "build/fuzz/$n/$n.o"
    if shares_impl "$n"; then obj+=("$n"); else own+=("$n"); fi
done
if [ ${#obj[@]} -gt 0 ]; then
    printf '#define QMX_IMPLEMENTATION\n#include "qmx.h"\n#include "qmx_kernels.h"\n#include "qmx_calib.h"\n' >"$impl_src"
    todo_build=(qmx_impl ${own[@]+"${own[@]}"} "${obj[@]}")
else
    todo_build=("${own[@]}")
fi
todo_run=("${names[@]}") running=0
while [ ${#todo_build[@]} -gt 0 ] || [ ${#todo_run[@]} -gt 0 ]; do
    while [ $running -lt "$jobs" ]; do
        if [ ${#todo_build[@]} -gt 0 ]; then
            build_one "${todo_build[0]}" &
            todo_build=("${todo_build[@]:1}")
        else
            started='' left=()
            for n in "${todo_run[@]}"; do
                if [ -z "$started" ] && ready "$n"; then
                    fuzz_one "$n" & started=$n
                elif [ -f "build/fuzz/$n/result" ]; then
                    :   # its build failed: nothing to run
                else
                    left+=("$n")
                fi
            done
            todo_run=(${left[@]+"${left[@]}"})
            [ -n "$started" ] || break   # nothing built yet: wait for a build
        fi
        running=$((running + 1))
    done
    [ $running -gt 0 ] || break
    wait -n; running=$((running - 1))
done
wait
pass=0 fail=0
for n in "${names[@]}"; do
    r=build/fuzz/$n/result
    if [ -f "$r" ] && head -1 "$r" | grep -q '^  ok '; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    if [ -f "$r" ]; then cat "$r"; else echo "  FAIL  $n: no result"; fi
done
echo "fuzz: ${#names[@]} harness(es), $jobs at a time, $(( $(date +%s) - t0 )) s"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
