#!/usr/bin/env bash
# selftest.sh - checks run-on's contract on each target: exit status, program arguments, stdout,
# crashes, timeouts (124) and failed builds (125). About 5 s per target once it is installed.
#   tools/targets/selftest.sh [TARGET...]      (default: every target)
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -gt 0 ]; then targets=("$@"); else read -r -a targets <<<"$("$HERE/run-on" --list | awk '{ print $1 }' | tr '\n' ' ')"; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/qmx-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/probe.c" <<'EOF'
/* The behaviour is argv[1], or MODE when there is no argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef MODE
#define MODE "ok"
#endif
int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : MODE;
    volatile int forever = 1;
    int i;
    printf("argc=%d", argc);
    for (i = 1; i < argc; i++) printf(" <%s>", argv[i]);
    printf(" mode=%s\n", mode);
    fflush(stdout);
    if (strcmp(mode, "ret5") == 0) return 5;
    if (strcmp(mode, "exit9") == 0) exit(9);
    if (strcmp(mode, "abort") == 0) abort();
    if (strcmp(mode, "trap") == 0) __builtin_trap();
    if (strcmp(mode, "hang") == 0) while (forever) { }
    return 0;
}
EOF
flags=(-std=c99 -Wall -Wextra -Wpedantic -Werror)
export TARGET_QUIET=1
failed_targets=0
for t in "${targets[@]}"; do
    problems=()
    expect() {  # name, status wanted ("crash" = non-zero but not 124/125/127), stdout text, args...
        local name=$1 want=$2 text=$3 out rc; shift 3
        out=$("$HERE/run-on" "$t" "$work/probe.c" "${flags[@]}" "$@" 2>/dev/null </dev/null); rc=$?
        if [ "$want" = crash ]; then
            case $rc in 0|124|125|127) problems+=("$name:exit$rc"); return;; esac
        elif [ "$rc" != "$want" ]; then
            problems+=("$name:exit$rc"); return
        fi
        [ -z "$text" ] || grep -qF -- "$text" <<<"$out" || problems+=("$name:stdout")
    }
    expect ok     0     "argc=1 mode=ok"
    expect ret5   5     "mode=ret5"            -DMODE='"ret5"'
    expect exit9  9     "mode=exit9"           -DMODE='"exit9"'
    expect args   5     "argc=3 <ret5> <a,b> mode=ret5" -- ret5 a,b
    expect abort  crash "mode=abort"           -DMODE='"abort"'
    expect trap   crash ""                     -DMODE='"trap"'
    TARGET_TIMEOUT=2 expect hang 124 ""        -DMODE='"hang"'
    expect badcc  125   ""                     -DMODE=
    if [ ${#problems[@]} -eq 0 ]; then
        echo "selftest $t: ok"
    else
        echo "selftest $t: FAILED ${problems[*]}"
        failed_targets=$((failed_targets + 1))
    fi
done
[ $failed_targets -eq 0 ]
