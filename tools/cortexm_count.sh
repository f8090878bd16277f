#!/usr/bin/env bash
# cortexm_count.sh - executed instructions per MAC of qmx's fully-connected layers on Cortex-M4
# (DSP) and Cortex-M55 (MVE), counted exactly under QEMU with the TCG plugin
# tools/targets/support/regioncount.c (make bench-cortex-m runs this).
#
#   tools/cortexm_count.sh [CFLAGS...]      e.g. -O3 (default: run-on's -O2)
#
# Two tables: input zero point 0 (symmetric int8 input) and -3 (asymmetric, as TFLite gives;
# qmx_fully_connected_i8 then also sums the weight columns on every call). The first also has
# qmx_fully_connected_i16 (int16 x int8 -> int16, TFLite 16x8; batch x K -> 1024, K = 512 and
# 1024, per tensor and per channel) beside CMSIS-NN's arm_fully_connected_s16 (per tensor only;
# 2.48 / 0.88 insns/MAC at K = 512 and 2.99 / 2.44 at K = 1024 on M4 / M55, measured the same
# way: its cost per MAC depends on K, its 64-bit loop past K = 512 is scalar).
#
# How: bench/count/bench_fc_count.c calls the layers between the noinline markers
# qmx_region_begin() / qmx_region_end() (bench/count/markers.c); the ELF is built by
# tools/targets/run-on (TARGET_BIN keeps it), the markers' addresses come from
# arm-none-eabi-nm (Thumb bit cleared), and QEMU runs the ELF with the plugin, which logs
# "region N insns D" per region (an empty region costs 2 instructions, subtracted here).
# CMSIS-NN's figures were measured the same way (../shared/targets/README.md, -Ofast):
# arm_fully_connected_s8 1.92 insns/MAC (M4), 0.48 (M55); arm_fully_connected_s4 4.92 (M4),
# 0.39 (M55); batch 4 costs CMSIS-NN exactly 4x batch 1 (one input row at a time).
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/cortexm
mkdir -p "$OUT"
cd "$ROOT"
PLUGIN=$OUT/libregioncount.so
if [ ! -f "$PLUGIN" ] || [ tools/targets/support/regioncount.c -nt "$PLUGIN" ]; then
    gcc -O2 -shared -fPIC -fvisibility=hidden -o "$PLUGIN" tools/targets/support/regioncount.c
fi
MACS_B1=$((1024 * 1024))
printf '%s\n' "make bench-cortex-m: executed instructions per MAC, batch x 1024 -> 1024 (QEMU TCG plugin count)"
printf '%s\n' "extra CFLAGS: ${*:-(none; run-on default -O2)}"
fail=0
for azp in 0 -3; do
printf '\ninput zero point %s\n' "$azp"
printf '%-10s %-26s %12s %10s %10s %9s   %s\n' target layer insns insns/MAC CMSIS-NN ratio aim
for tgt in cortex-m4 cortex-m55; do
    case $tgt in
        cortex-m4)  machine=mps2-an386 cpu=cortex-m4  s8=1.92 s4=4.92 s16k512=2.48 s16k1024=2.99 ;;
        cortex-m55) machine=mps3-an547 cpu=cortex-m55 s8=0.48 s4=0.39 s16k512=0.88 s16k1024=2.44 ;;
    esac
    s16=(); nreg=4
    if [ "$azp" = 0 ]; then s16=(-DBENCH_S16); nreg=12; fi
    elf=$OUT/bench_fc_$tgt.elf
    if ! TARGET_BIN=$elf TARGET_QUIET=1 tools/targets/run-on "$tgt" bench/count/bench_fc_count.c \
            bench/count/markers.c -DBENCH_AZP="$azp" "${s16[@]}" "$@" -I. -std=c99 > "$OUT/run_$tgt.txt" 2>&1; then
        echo "$tgt: the bench program failed:"; cat "$OUT/run_$tgt.txt"; fail=1; continue
    fi
    b=$(arm-none-eabi-nm "$elf" | awk '$3 == "qmx_region_begin" {print $1}')
    e=$(arm-none-eabi-nm "$elf" | awk '$3 == "qmx_region_end" {print $1}')
    b=$(printf '0x%x' $((0x$b & ~1))); e=$(printf '0x%x' $((0x$e & ~1)))
    log=$OUT/plugin_$tgt.log
    rm -f "$log"
    timeout 600 qemu-system-arm -M $machine -cpu $cpu -display none -monitor none -serial none \
        -chardev stdio,id=semi0,signal=off \
        -semihosting-config enable=on,target=native,chardev=semi0,arg=bench \
        -plugin "$PLUGIN,begin=$b,end=$e" -d plugin -D "$log" -kernel "$elf" </dev/null \
        > "$OUT/count_$tgt.txt" 2>&1 || { echo "$tgt: qemu failed"; cat "$OUT/count_$tgt.txt"; fail=1; continue; }
    mapfile -t n < <(awk '/^region/ {print $4}' "$log")
    if [ ${#n[@]} -ne $nreg ]; then echo "$tgt: expected $nreg regions, got ${#n[@]}"; cat "$log"; fail=1; continue; fi
    i=0
    for layer in "s8 batch 1" "s8 batch 4" "s4 batch 1" "s4 batch 4"; do
        case $layer in *"batch 4") macs=$((4 * MACS_B1));; *) macs=$MACS_B1;; esac
        case $layer in s8*) ref=$s8 name=qmx_fully_connected_i8;; *) ref=$s4 name=qmx_fully_connected_i4;; esac
        ins=$((n[i] - 2))
        aim=""
        if [ "$layer" = "s8 batch 1" ]; then aim="<= 1.00"; fi
        if [ "$layer" = "s8 batch 4" ]; then aim="<= 0.75"; fi
        if [ $tgt = cortex-m4 ] && [ "${layer%% *}" = s4 ]; then aim="<= 0.60"; fi
        awk -v t=$tgt -v l="$name ${layer#* }" -v ins=$ins -v macs=$macs -v ref=$ref -v aim="$aim" 'BEGIN {
            ipm = ins / macs; r = ipm / ref; verdict = "";
            if (aim != "") { split(aim, a, " "); verdict = (r <= a[2] + 1e-9) ? "met" : "NOT met" }
            printf "%-10s %-26s %12d %10.3f %10.2f %8.2fx   %s %s\n", t, l, ins, ipm, ref, r, aim, verdict }'
        i=$((i + 1))
    done
    [ $nreg = 12 ] || continue
    # regions 4 .. 11: s16, K 512 then 1024, per tensor then per channel, batch 1 then 4
    for kin in 512 1024; do
        for q in "per-tensor" "per-channel"; do
            for bt in 1 4; do
                macs=$((bt * kin * 1024))
                if [ $kin = 512 ]; then ref=$s16k512; else ref=$s16k1024; fi
                if [ $bt = 4 ]; then aim="<= 0.60"; elif [ $kin = 512 ]; then aim="<= 0.70"; else aim="<= 0.60"; fi
                ins=$((n[i] - 2))
                awk -v t=$tgt -v l="i16 K$kin $q b$bt" -v ins=$ins -v macs=$macs -v ref=$ref -v aim="$aim" 'BEGIN {
                    ipm = ins / macs; r = ipm / ref; split(aim, a, " ");
                    verdict = (r <= a[2] + 1e-9) ? "met" : "NOT met";
                    printf "%-10s %-26s %12d %10.3f %10.2f %8.2fx   %s %s\n", t, l, ins, ipm, ref, r, aim, verdict }'
                i=$((i + 1))
            done
        done
    done
done
done
echo "(ratio = qmx insns/MAC / CMSIS-NN insns/MAC, per MAC; CMSIS-NN batch 4 = 4x batch 1;"
echo " i16 rows: qmx_fully_connected_i16, W zero point 0, vs arm_fully_connected_s16, per tensor only)"
exit $fail
