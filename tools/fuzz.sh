#!/usr/bin/env bash
# fuzz.sh - build and run every libFuzzer harness tests/fuzz/fuzz_*.c for a bounded time each,
# under ASan + UBSan (clang from Debian). Usage: tools/fuzz.sh SECONDS [NAME...]
#   NAME = fuzz_x (default: all harnesses). Seeds: tests/fuzz/corpus/NAME/ (read-only; the run's
#   new inputs go to build/fuzz/NAME/corpus). A crash is saved as build/fuzz/NAME/crash-*; turn
#   it into a regression test. The last line is "N passed, N failed" (one check per harness).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-60}; shift || true
cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: $cc not found (apt-get install clang)"; echo "0 passed, 1 failed"; exit 1
fi
if [ $# -gt 0 ]; then names=("$@"); else
    shopt -s nullglob; names=(); for f in tests/fuzz/fuzz_*.c; do names+=("$(basename "$f" .c)"); done
fi
pass=0 fail=0
for n in "${names[@]}"; do
    src=tests/fuzz/$n.c out=build/fuzz/$n
    mkdir -p "$out/corpus"
    if ! "$cc" -std=c99 -g -O1 -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
            "$src" -o "$out/$n" 2>"$out/build.log"; then
        echo "  FAIL  $n: build failed (see $out/build.log)"; sed -n 1,20p "$out/build.log"; fail=$((fail+1)); continue
    fi
    seeds=(); [ -d "tests/fuzz/corpus/$n" ] && seeds=("tests/fuzz/corpus/$n")
    (cd "$out" && UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./"$n" -max_total_time="$secs" \
        -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 corpus "${seeds[@]/#/../../../}" \
        >run.log 2>&1)
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/run.log" | grep -o '[0-9]*$' | tail -1)
    if [ $rc -eq 0 ]; then
        echo "  ok    $n: ${execs:-?} executions in ${secs} s, no crash"; pass=$((pass+1))
    else
        echo "  FAIL  $n: exit $rc after ${execs:-?} executions (log: $out/run.log)"
        grep -E 'ERROR|runtime error|SUMMARY' "$out/run.log" | head -5; fail=$((fail+1))
    fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
