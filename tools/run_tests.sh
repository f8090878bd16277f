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
# Environment: JOBS=2 programs at once; TESTS="tests/test_a.c ..." instead of all of them;
# TARGET_TIMEOUT, HOST_CC, HOST_CXX, HOST_MARCH, TARGET_BUILD_CACHE: see tools/targets/run-on.
# (tools/test_matrix.sh --parallel also sets QMX_JOB_SLOTS_FD, a pipe of job-slot tokens shared
# by several runs: one is taken before each program starts and given back when it is done, and
# QMX_DISPATCHED, a file created once the last program has started.)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
RUN_ON=tools/targets/run-on

usage() { sed -n '2,17s/^# \{0,1\}//p' "$0" >&2; exit 2; }
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

# Builds and runs tests[$1]; leaves NAME.log (build + program output) and NAME.status ("rc secs").
run_one() {
    local src=${tests[$1]} name t0 rc
    name=$(basename "$src" .c)
    t0=$(now)
    TARGET_BIN=$out/$name$ext TARGET_QUIET=1 \
        "$RUN_ON" "$runner" "${flags[@]}" "${extra[@]}" "$src" >"$out/$name.log" 2>&1 </dev/null
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
for i in "${!tests[@]}"; do
    while [ $running -ge "$jobs_max" ]; do
        wait -n; running=$((running - 1))
        flush_done
    done
    if [ -n "$slots" ] && read -r -n 1 -u "$slots" _; then   # waits for a free job slot
        flush_done
        { run_one "$i"; printf x >&"$slots"; } &
    else
        slots=''
        run_one "$i" &
    fi
    running=$((running + 1))
done
[ -z "${QMX_DISPATCHED:-}" ] || : >"$QMX_DISPATCHED"
wait
flush_done

echo "$total_pass $total_fail" >"$out/result"
echo "== $label: $((${#tests[@]} - bad_programs))/${#tests[@]} programs ok in $(since "$t_all") s"
echo "$label: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
