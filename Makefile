# qmx - GNU Makefile. `make help` lists the targets.
#
# Every build output goes under build/. The test programs are tests/test_*.c: each is its own
# program, defines QMX_IMPLEMENTATION itself, runs from the repository root and ends with the
# line "N passed, N failed". The scripts that do the work live in tools/ (see tools/README.md).

# ---- configuration --------------------------------------------------------------------------
# make's built-in default for CC is "cc"; qmx's default is gcc (CC=clang works as well).
ifeq ($(origin CC),default)
CC = gcc
endif
ifeq ($(origin CXX),default)
CXX = g++
endif
export HOST_CC := $(CC)
export HOST_CXX := $(CXX)

BUILD   := build
HEADERS := qmx.h qmx_kernels.h qmx_calib.h

# Every cross target of tools/targets/run-on (avr is not one of them).
CROSS_TARGETS := i386 aarch64 aarch64-v8a armhf s390x ppc riscv64 cortex-m3 cortex-m4 cortex-m55

.DEFAULT_GOAL := help
.PHONY: help demo test test-targets test-sanitize test-exhaustive check-headers clean bench fuzz

# ---- help -----------------------------------------------------------------------------------
help:
	@echo "qmx make targets:"
	@echo "  demo             the end-to-end demo: an MLP on the UCI digits quantized in every format"
	@echo "  test             check-headers, then every test on the host in 4 builds: -O2 -march=native,"
	@echo "                   -O2 -DQMX_NO_SIMD, C++11, -std=gnu99 -O3 -ffp-contract=fast"
	@echo "  test-targets     every test on host (SIMD and scalar), i386, aarch64 (v8.2 dotprod and"
	@echo "                   v8.0), armhf, s390x, ppc, riscv64, Cortex-M3/M4/M55 (QEMU; installs the"
	@echo "                   toolchains with apt-get on first use)"
	@echo "  test-sanitize    every test on the host with ASan + UBSan"
	@echo "  test-exhaustive  tests/exhaustive/run.sh (long-running exhaustive checks)"
	@echo "  check-headers    each header alone as C99 (SIMD and scalar), C++11 and freestanding Cortex-M"
	@echo "  bench            quantize/dequantize throughput vs read stream and memcpy, 64 MiB and"
	@echo "                   256 KiB, -O3 -march=native (~1 min; BENCH_EXTRA=-DQMX_NO_SIMD for scalar)"
	@echo "  fuzz             every libFuzzer harness in tests/fuzz, FUZZ_SECONDS (60) each, ASan+UBSan"
	@echo "  clean            remove $(BUILD)/"
	@echo "One target, one test: tools/targets/run-on cortex-m4 tests/test_core.c -I. -std=c99"
	@echo "One target, all tests: tools/run_tests.sh aarch64 [CFLAGS...]    (JOBS=2 programs at once)"

# ---- demo -----------------------------------------------------------------------------------
DEMO_CFLAGS := -std=c99 -D_POSIX_C_SOURCE=199309L -O2 -march=native -Wall -Wextra -Werror -I.

$(BUILD)/demo: examples/demo.c $(HEADERS) | $(BUILD)
	$(CC) $(DEMO_CFLAGS) examples/demo.c -o $@ -lm

demo: $(BUILD)/demo
	@$(BUILD)/demo examples/data/digits.csv

$(BUILD):
	@mkdir -p $(BUILD)

# ---- tests ----------------------------------------------------------------------------------
# Each test_matrix.sh configuration is "NAME [VAR=VALUE...] TARGET [CFLAGS...]" (see the
# script); its last line, the grand total "N passed, N failed", is the line CI reads.

check-headers:
	@tools/check_headers.sh

test: check-headers
	@tools/test_matrix.sh --title "make test" \
	    "native host" \
	    "scalar HOST_MARCH= host -DQMX_NO_SIMD" \
	    "cxx host-c++" \
	    "fpcontract host -std=gnu99 -O3 -ffp-contract=fast"

test-targets:
	@tools/test_matrix.sh --parallel 2 --title "make test-targets" \
	    "host host" \
	    "host-nosimd host -DQMX_NO_SIMD" \
	    $(foreach t,$(CROSS_TARGETS),"$(t) $(t)")

test-sanitize:
	@UBSAN_OPTIONS=print_stacktrace=1 tools/test_matrix.sh --title "make test-sanitize" \
	    "sanitize host -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1"

test-exhaustive:
	@if [ -f tests/exhaustive/run.sh ]; then \
	    bash tests/exhaustive/run.sh; \
	else \
	    echo "test-exhaustive: tests/exhaustive/run.sh is missing"; exit 1; \
	fi

# ---- bench ----------------------------------------------------------------------------------
# Every bench/bench_*.c is one program; `make bench` builds and runs each in turn (a program
# prints its own flags; BENCH_EXTRA adds to them, e.g. BENCH_EXTRA=-DQMX_NO_SIMD).
# QMX_BENCH_REPS / QMX_BENCH_REP_MS set the repetitions. BENCH=quant runs only bench_quant.
BENCH_CFLAGS := -std=c99 -D_POSIX_C_SOURCE=200112L -O3 -march=native -Wall -Wextra -I. $(BENCH_EXTRA)
BENCH_PROGS  := $(if $(BENCH),$(foreach b,$(BENCH),bench/bench_$(b).c),$(sort $(wildcard bench/bench_*.c)))

# Always recompiled (about a second each), so no binary runs with stale flags.
bench: | $(BUILD)
	@set -e; for src in $(BENCH_PROGS); do \
	    name=$$(basename $$src .c); \
	    echo "== $$name"; \
	    $(CC) $(BENCH_CFLAGS) -DQMX_BENCH_CFLAGS='"$(CC) $(BENCH_CFLAGS)"' $$src -o $(BUILD)/$$name -lm; \
	    $(BUILD)/$$name; \
	done

# ---- fuzz -----------------------------------------------------------------------------------
# Every tests/fuzz/fuzz_*.c is a libFuzzer harness, run FUZZ_SECONDS each under ASan + UBSan
# (clang). FUZZ="fuzz_a fuzz_b" runs only those.
FUZZ_SECONDS ?= 60
fuzz: | $(BUILD)
	@tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ)

# ---- housekeeping ---------------------------------------------------------------------------
clean:
	rm -rf $(BUILD)
