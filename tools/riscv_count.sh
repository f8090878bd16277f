#!/usr/bin/env bash
# riscv_count.sh - exact executed-instruction counts of qmx kernels on RISC-V: the portable path
# (target riscv64: gcc, rv64gc) beside the RVV 1.0 path (riscv64-rvv*: clang-16, rv64gcv) at
# VLEN 128, 256 and 512, counted under qemu-riscv64 (user mode) by the TCG plugin
# tools/targets/support/regioncount.c (make bench-riscv runs this).
#
#   tools/riscv_count.sh [CFLAGS...]      e.g. -O3 (default: run-on's -O2)
#
# bench/count/bench_fc_count.c (the Cortex-M count's program, with -DBENCH_QUANT) calls, between
# the noinline markers of bench/count/markers.c, qmx_fully_connected_i8 (1024 -> 1024, batch 1
# and 4, per-channel double rounding, input zero point -3), qmx_fully_connected_i4 (int4
# weights, otherwise the same as the int8 one) and qmx_quantize (int8, per tensor, AQT, 65536
# floats), checking each result outside the region. One RVV binary runs at the three vector lengths. The counts include the
# few instructions of the marker calls (not subtracted: each region holds 10^4 .. 10^7).
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/riscv
mkdir -p "$OUT"
cd "$ROOT"
PLUGIN=$OUT/libregioncount.so
if [ ! -f "$PLUGIN" ] || [ tools/targets/support/regioncount.c -nt "$PLUGIN" ]; then
    gcc -O2 -shared -fPIC -fvisibility=hidden -o "$PLUGIN" tools/targets/support/regioncount.c
fi
MACS=$((1024 * 1024)) NQ=65536
echo "make bench-riscv: executed instructions (QEMU $(qemu-riscv64 --version | head -n 1 | awk '{print $3}') user mode, TCG plugin count, exact)"
echo "extra CFLAGS: ${*:-(none; run-on default -O2)}"
printf '%-24s %-28s %12s %12s %12s %9s\n' build layer insns per-unit unit vs-portable
fail=0 base_b1='' base_b4='' base_q='' base_c1='' base_c4=''
for cfg in riscv64 riscv64-rvv128 riscv64-rvv256 riscv64-rvv512; do
    case $cfg in
        riscv64) bin=$OUT/bench_count_portable cpu=() label="portable (gcc rv64gc)" ;;
        *) bin=$OUT/bench_count_rvv v=${cfg#riscv64-rvv}
           cpu=(-cpu "rv64,v=true,vlen=$v,elen=64,vext_spec=v1.0"); label="RVV VLEN $v (clang-16)" ;;
    esac
    if [ "$cfg" = riscv64 ] || [ "$cfg" = riscv64-rvv128 ]; then   # one RVV binary for all VLENs
        if ! TARGET_BIN=$bin TARGET_QUIET=1 tools/targets/run-on "$cfg" bench/count/bench_fc_count.c \
                bench/count/markers.c -DBENCH_QUANT -I. -std=c99 "$@" > "$OUT/run_$cfg.txt" 2>&1; then
            echo "$cfg: the bench program failed:"; cat "$OUT/run_$cfg.txt"; fail=1; continue
        fi
    fi
    b=$(riscv64-linux-gnu-nm "$bin" | awk '$3 == "qmx_region_begin" {print "0x" $1}')
    e=$(riscv64-linux-gnu-nm "$bin" | awk '$3 == "qmx_region_end" {print "0x" $1}')
    log=$OUT/plugin_$cfg.log
    rm -f "$log"
    if ! timeout 600 qemu-riscv64 "${cpu[@]}" -plugin "$PLUGIN,begin=$b,end=$e" -d plugin -D "$log" \
            "$bin" > "$OUT/count_$cfg.txt" 2>&1; then
        echo "$cfg: qemu failed"; cat "$OUT/count_$cfg.txt"; fail=1; continue
    fi
    mapfile -t n < <(awk '/^region/ {print $4}' "$log")
    if [ ${#n[@]} -ne 5 ]; then echo "$cfg: expected 5 regions, got ${#n[@]}"; cat "$log"; fail=1; continue; fi
    [ -n "$base_b1" ] || { base_b1=${n[0]} base_b4=${n[1]} base_c1=${n[2]} base_c4=${n[3]} base_q=${n[4]}; }
    awk -v l="$label" -v a="${n[0]}" -v b="${n[1]}" -v c="${n[2]}" -v d="${n[3]}" -v q="${n[4]}" \
        -v m=$MACS -v nq=$NQ -v a0="$base_b1" -v b0="$base_b4" -v q0="$base_q" -v c0="$base_c1" \
        -v d0="$base_c4" 'BEGIN {
        printf "%-24s %-28s %12d %12.3f %12s %8.3fx\n", l, "fully_connected_i8 batch 1", a, a / m, "insns/MAC", a / a0
        printf "%-24s %-28s %12d %12.3f %12s %8.3fx\n", l, "fully_connected_i8 batch 4", b, b / (4 * m), "insns/MAC", b / b0
        printf "%-24s %-28s %12d %12.3f %12s %8.3fx\n", l, "quantize int8 (AQT)", q, q / nq, "insns/elem", q / q0
        printf "%-24s %-28s %12d %12.3f %12s %8.3fx\n", l, "fully_connected_i4 batch 1", c, c / m, "insns/MAC", c / c0
        printf "%-24s %-28s %12d %12.3f %12s %8.3fx\n", l, "fully_connected_i4 batch 4", d, d / (4 * m), "insns/MAC", d / d0 }'
done
exit $fail
