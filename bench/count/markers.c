/* markers.c - the two region markers of make bench-cortex-m and make bench-riscv
 * (tools/cortexm_count.sh, tools/riscv_count.sh).
 * Separate translation unit and noinline, so that their first instruction is a stable address
 * the regioncount QEMU plugin can watch; the empty asm keeps the calls from being removed. */
__attribute__((noinline)) void qmx_region_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void qmx_region_end(void) { __asm__ volatile("" ::: "memory"); }
