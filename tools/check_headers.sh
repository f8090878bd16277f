#!/usr/bin/env bash
# check_headers.sh - compile each public header on its own, implementation included, the way a
# user's single translation unit would:
#   C99   $CC  -std=c99 -Wall -Wextra -Wpedantic -Werror -march=native, with and without
#         -DQMX_NO_SIMD, and declarations only (no QMX_IMPLEMENTATION)
#   C++11 $CXX -std=c++11 -Wall -Wextra -Werror -march=native
#   freestanding Cortex-M4 and M55 (when arm-none-eabi-gcc is installed): -ffreestanding
#         -nostdlib with only the compiler's own headers on the include path, so that any use
#         of a libc/libm header fails the check; and the object may call no outside function
#         but the compiler's runtime (__aeabi_*, __*) and memcpy/memmove/memset/memcmp, which
#         GCC may emit even freestanding.
#   clang C++11 (when clang++ is installed), freestanding, for aarch64 (NEON + dotprod, and
#         with i8mm) and x86-64 (AVX-512 VNNI): clang rejects intrinsics whose immediate
#         operand is not a literal constant (a NEON shift count chosen by ?:) where GCC folds
#         them.
# Environment: CC (default gcc), CXX (default g++), HEADERS (default: the three qmx headers).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
CC=${CC:-gcc} CXX=${CXX:-g++}
read -r -a headers <<<"${HEADERS:-qmx.h qmx_kernels.h qmx_calib.h}"
warn_c=(-std=c99 -Wall -Wextra -Wpedantic -Werror)
warn_cxx=(-std=c++11 -Wall -Wextra -Werror)
ok=0 bad=0

OBJ=/dev/null
check() {  # description, compiler command...: compiles into $OBJ; prints the errors on failure
    local what=$1 log; shift
    if log=$("$@" -o "$OBJ" 2>&1) && [ -z "$log" ]; then
        ok=$((ok + 1))
    else
        bad=$((bad + 1))
        echo "  FAIL  $what"
        echo "        $*"
        printf '%s\n' "$log" | head -n 30 | sed 's/^/        | /'
    fi
}

no_libc_calls() {  # header, object: fails when the object calls into libc/libm
    local calls
    calls=$(arm-none-eabi-nm -u "$2" | awk '{ print $NF }' |
            grep -Ev '^(__.*|memcpy|memmove|memset|memcmp)$' | tr '\n' ' ')
    [ -z "$calls" ] && return 0
    ok=$((ok - 1)) bad=$((bad + 1))
    echo "  FAIL  $1 freestanding: calls outside functions: $calls($2)"
    return 1
}

clangxx=''
command -v clang++ >/dev/null && clangxx=clang++
arm=''
if command -v arm-none-eabi-gcc >/dev/null; then
    arm='arm-none-eabi-gcc'
    # The compiler's own headers (stdint.h, limits.h, float.h, arm_acle.h, arm_mve.h, ...) but
    # not the C library's.
    arm_inc=(-nostdinc -isystem "$($arm -print-file-name=include)"
             -isystem "$($arm -print-file-name=include-fixed)")
fi

for h in "${headers[@]}"; do
    [ -f "$h" ] || { echo "  FAIL  $h: no such file"; bad=$((bad + 1)); continue; }
    check "$h C99"                 "$CC" -x c "${warn_c[@]}" -march=native -DQMX_IMPLEMENTATION -c "$h"
    check "$h C99 QMX_NO_SIMD"     "$CC" -x c "${warn_c[@]}" -march=native -DQMX_IMPLEMENTATION -DQMX_NO_SIMD -c "$h"
    check "$h C99 declarations"    "$CC" -x c "${warn_c[@]}" -march=native -c "$h"
    check "$h C++11"               "$CXX" -x c++ "${warn_cxx[@]}" -march=native -DQMX_IMPLEMENTATION -c "$h"
    check "$h C++11 QMX_NO_SIMD"   "$CXX" -x c++ "${warn_cxx[@]}" -march=native -DQMX_IMPLEMENTATION -DQMX_NO_SIMD -c "$h"
    if [ -n "$arm" ]; then
        mkdir -p build/check-headers
        OBJ=build/check-headers/${h##*/}.m4.o
        check "$h freestanding cortex-m4" "$arm" -mcpu=cortex-m4 -mthumb -ffreestanding -nostdlib \
            "${arm_inc[@]}" -x c "${warn_c[@]}" -DQMX_IMPLEMENTATION -c "$h" && no_libc_calls "$h" "$OBJ"
        OBJ=build/check-headers/${h##*/}.m55.o
        check "$h freestanding cortex-m55 (MVE)" "$arm" -mcpu=cortex-m55 -mthumb -mfloat-abi=hard \
            -ffreestanding -nostdlib "${arm_inc[@]}" -x c "${warn_c[@]}" -DQMX_IMPLEMENTATION -c "$h" &&
            no_libc_calls "$h" "$OBJ"
        OBJ=/dev/null
    fi
    if [ -n "$clangxx" ]; then
        check "$h clang C++11 aarch64 dotprod" "$clangxx" --target=aarch64-linux-gnu \
            -march=armv8.2-a+dotprod -ffreestanding -nostdlibinc -x c++ "${warn_cxx[@]}" -Wpedantic \
            -DQMX_IMPLEMENTATION -c "$h"
        check "$h clang C++11 aarch64 dotprod i8mm" "$clangxx" --target=aarch64-linux-gnu \
            -march=armv8.2-a+dotprod+i8mm -ffreestanding -nostdlibinc -x c++ "${warn_cxx[@]}" \
            -Wpedantic -DQMX_IMPLEMENTATION -c "$h"
        check "$h clang C++11 x86-64-v4" "$clangxx" --target=x86_64-linux-gnu -march=x86-64-v4 \
            -mavx512vnni -mavx512vbmi -ffreestanding -nostdlibinc -x c++ "${warn_cxx[@]}" -Wpedantic \
            -DQMX_IMPLEMENTATION -c "$h"
    fi
done
[ -n "$clangxx" ] || echo "  (clang++ not installed: the clang C++ cross-compile check skipped)"
[ -n "$arm" ] || echo "  (arm-none-eabi-gcc not installed: freestanding Cortex-M check skipped)"
echo "check-headers: $ok compiles ok, $bad failed (${headers[*]})"
[ $bad -eq 0 ]
