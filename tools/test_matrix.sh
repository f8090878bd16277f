#!/usr/bin/env bash
# test_matrix.sh - run the test programs in several configurations (tools/run_tests.sh once per
# configuration), then a summary table and, as the very last line, the grand total
# "N passed, N failed". Exit status 0 only if nothing failed.
#
#   tools/test_matrix.sh [--parallel N] [--title TEXT] 'NAME [VAR=VALUE...] TARGET [CFLAGS...]' ...
#
# Each configuration is one word-split string: a NAME (its output goes to build/tests/NAME/),
# optional environment assignments (e.g. HOST_MARCH= for no -march), a TARGET of run_tests.sh
# and extra CFLAGS. Flags cannot contain spaces.
# --parallel N runs N configurations at once, each building one program at a time (JOBS=1),
# and prints each one's output, in order, once it is done. Without it, the configurations run
# one after another, each with JOBS programs at once (default 2), printing as they go.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

usage() { sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }
now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.0f", t1 - t0 }'; }

parallel=1 title=tests
while [ $# -gt 0 ]; do
    case $1 in
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
        env ${envs[@]+"${envs[@]}"} JOBS=1 tools/run_tests.sh --label "$name" "${w[@]:$i}" \
            >"build/tests/$name.out" 2>&1 </dev/null
    else
        env ${envs[@]+"${envs[@]}"} tools/run_tests.sh --label "$name" "${w[@]:$i}" </dev/null
    fi
    since "$t0" >"build/tests/$name.time"
}

t_all=$(now)
if [ "$parallel" -gt 1 ]; then
    echo "== $title: ${#configs[@]} configurations, $parallel at a time"
    next=0 running=0
    flush_done() {
        while [ $next -lt ${#configs[@]} ] && [ -f "build/tests/${names[$next]}.time" ]; do
            cat "build/tests/${names[$next]}.out"
            next=$((next + 1))
        done
    }
    for i in "${!configs[@]}"; do
        while [ $running -ge "$parallel" ]; do
            wait -n; running=$((running - 1))
            flush_done
        done
        run_config "$i" &
        running=$((running + 1))
    done
    wait
    flush_done
else
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
[ ${#bad[@]} -eq 0 ] || echo "== failed: ${bad[*]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
