#!/usr/bin/env bash
# test_matrix.sh - run the test programs in several configurations (tools/run_tests.sh once per
# configuration), then a summary table and, as the very last line, the grand total
# "N passed, N failed". Exit status 0 only if nothing failed.
#
#   tools/test_matrix.sh [--parallel N] [--title TEXT] [--with 'COMMAND'] 'NAME [VAR=VALUE...] TARGET [CFLAGS...]' ...
#
# Each configuration is one word-split string: a NAME (its output goes to build/tests/NAME/),
# optional environment assignments (e.g. HOST_MARCH= for no -march), a TARGET of run_tests.sh
# and extra CFLAGS. Flags cannot contain spaces.
# --parallel N runs N programs at once over all the configurations: they share N job slots, and
# each configuration starts once the one before it has started its last program (so the slots
# never idle at a configuration's end); each one's output is printed, in order, once it is done.
# Without it, the configurations run one after another, each with JOBS programs at once
# (default 2), printing as they go.
# --with 'COMMAND' (word-split) runs another check too, first (with --parallel: in one of the job
# slots, beside the first configurations); its output is printed first, and its failure counts 1
# failed in the grand total.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

usage() { sed -n '2,19s/^# \{0,1\}//p' "$0" >&2; exit 2; }
now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.0f", t1 - t0 }'; }

parallel=1 title=tests with=''
while [ $# -gt 0 ]; do
    case $1 in
        --with) [ $# -ge 2 ] || usage; with=$2; shift 2 ;;
        --parallel) [ $# -ge 2 ] || usage; parallel=$2; shift 2 ;;
        --title) [ $# -ge 2 ] || usage; title=$2; shift 2 ;;
        -h|--help) usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
configs=("$@")
names=()
for c in "${configs[@]}"; do
    read -r -a w <<<"$c"
    [ ${#w[@]} -ge 2 ] || { echo "test_matrix: bad configuration '$c'" >&2; exit 2; }
    names+=("${w[0]}")
done
mkdir -p build/tests || exit 2

# Runs configuration $1 (an index); its output goes to stdout, or to build/tests/NAME.out when
# running in parallel. Leaves build/tests/NAME.time.
run_config() {
    local w envs=() i=1 t0 name
    read -r -a w <<<"${configs[$1]}"
    name=${w[0]}
    while [ $i -lt ${#w[@]} ] && [[ ${w[$i]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
        envs+=("${w[$i]}"); i=$((i + 1))
    done
    rm -f "build/tests/$name.time" "build/tests/$name/result"
    t0=$(now)
    if [ "$parallel" -gt 1 ]; then
        env ${envs[@]+"${envs[@]}"} JOBS="$parallel" QMX_JOB_SLOTS_FD=9 \
            QMX_DISPATCHED="build/tests/$name.dispatched" \
            tools/run_tests.sh --label "$name" "${w[@]:$i}" >"build/tests/$name.out" 2>&1 </dev/null
    else
        env ${envs[@]+"${envs[@]}"} tools/run_tests.sh --label "$name" "${w[@]:$i}" </dev/null
    fi
    since "$t0" >"build/tests/$name.time"
}

# --with: its output goes to build/tests/with.out, its exit status to build/tests/with.rc.
with_rc=0 with_printed=0
run_with() {
    rm -f build/tests/with.rc
    # shellcheck disable=SC2086  # COMMAND is word-split on purpose
    $with >build/tests/with.out 2>&1 </dev/null
    echo $? >build/tests/with.rc
}
print_with() {  # once its run is done
    [ -n "$with" ] && [ $with_printed = 0 ] && [ -f build/tests/with.rc ] || return 0
    cat build/tests/with.out
    read -r with_rc <build/tests/with.rc
    with_printed=1
}

t_all=$(now)
if [ "$parallel" -gt 1 ]; then
    echo "== $title: ${#configs[@]} configurations, $parallel programs at a time"
    # the job slots: a pipe holding one token per free slot (fd 9, inherited by run_tests.sh)
    fifo=$(mktemp -u "${TMPDIR:-/tmp}/qmx-slots.XXXXXX") && mkfifo "$fifo" || exit 2
    exec 9<>"$fifo"
    rm -f "$fifo"
    for ((k = 0; k < parallel; k++)); do printf x >&9; done
    if [ -n "$with" ]; then
        rm -f build/tests/with.rc
        read -r -n 1 -u 9 _
        { run_with; printf x >&9; } &
    fi
    next=0
    flush_done() {
        print_with
        [ -z "$with" ] || [ $with_printed = 1 ] || return 0
        while [ $next -lt ${#configs[@]} ] && [ -f "build/tests/${names[$next]}.time" ]; do
            cat "build/tests/${names[$next]}.out"
            next=$((next + 1))
        done
    }
    for i in "${!configs[@]}"; do
        rm -f "build/tests/${names[$i]}.dispatched"
        run_config "$i" &
        pid=$!
        # the next configuration starts when this one has started its last program (or ended)
        while [ ! -f "build/tests/${names[$i]}.dispatched" ] && kill -0 "$pid" 2>/dev/null; do
            sleep 0.2
            flush_done
        done
    done
    while [ -n "$(jobs -r)" ]; do sleep 0.5; flush_done; done
    wait
    exec 9>&-
    [ -z "$with" ] || [ -f build/tests/with.rc ] || echo 1 >build/tests/with.rc
    flush_done
else
    if [ -n "$with" ]; then run_with; print_with; fi
    for i in "${!configs[@]}"; do run_config "$i"; done
fi

total_pass=0 total_fail=0 bad=()
echo "== summary: $title ($(since "$t_all") s)"
for i in "${!configs[@]}"; do
    read -r -a w <<<"${configs[$i]}"
    name=${w[0]} pass=0 fail=1 note="  (did not finish)"
    if [ -f "build/tests/$name/result" ]; then
        read -r pass fail <"build/tests/$name/result"
        note=''
    fi
    secs=$(cat "build/tests/$name.time" 2>/dev/null || echo '?')
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
    [ "$fail" -eq 0 ] || bad+=("$name")
    printf '  %-4s %-14s %-26s %5ss   %s%s\n' "$([ "$fail" -eq 0 ] && echo ok || echo FAIL)" \
        "$name" "$(printf '%6d passed, %d failed' "$pass" "$fail")" "$secs" "${w[*]:1}" "$note"
done
if [ -n "$with" ] && [ "$with_rc" != 0 ]; then
    printf '  FAIL %s (exit %s)\n' "$with" "$with_rc"
    bad+=("$with") total_fail=$((total_fail + 1))
fi
[ ${#bad[@]} -eq 0 ] || echo "== failed: ${bad[*]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
