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
CROSS_TARGETS := i386 aarch64 aarch64-v8a armhf s390x ppc riscv64 riscv64-rvv128 riscv64-rvv256 \
                 riscv64-rvv512 cortex-m3 cortex-m4 cortex-m55

.DEFAULT_GOAL := help
.PHONY: help demo demo-cortex-m test test-targets test-sanitize test-exhaustive check-headers clean bench fuzz test-valgrind

# ---- help -----------------------------------------------------------------------------------
help:
	@echo "qmx make targets:"
	@echo "  demo             the end-to-end demo: an MLP on the UCI digits quantized in every format"
	@echo "  examples         examples/parallel_pthreads.c and parallel_openmp.c: several cores, same bits"
	@echo "  demo-cortex-m    the demo's int8 model exported as a C header, run on a Cortex-M4 (QEMU)"
	@echo "  test             check-headers and every test on the host in 4 builds: -O2 -march=native,"
	@echo "                   -O2 -DQMX_NO_SIMD, C++11, -std=gnu99 -O3 -ffp-contract=fast"
	@echo "  test-targets     every test on host (SIMD and scalar), i386, aarch64 (v8.2 dotprod and"
	@echo "                   v8.0), armhf, s390x, ppc, riscv64 (scalar, and RVV at VLEN 128/256/512),"
	@echo "                   Cortex-M3/M4/M55 (QEMU; installs the toolchains with apt-get on first use)"
	@echo "  test-sanitize    every test on the host with ASan + UBSan"
	@echo "  test-tsan        tests/test_parallel.c (tasks on real threads) under ThreadSanitizer"
	@echo "  test-valgrind    every test on the host under valgrind memcheck (AVX2 build)"
	@echo "  test-builds      test-sanitize, test-valgrind, test-targets, test-tsan, clang -O3"
	@echo "                   -ffp-contract=fast and aarch64 + i8mm (test_blockw_packed) in one job pool (CI)"
	@echo "  test-exhaustive  tests/exhaustive/run.sh (long-running exhaustive checks)"
	@echo "  check-headers    each header alone as C99 (SIMD and scalar), C++11 and freestanding Cortex-M"
	@echo "  bench            quantize/dequantize throughput vs read stream and memcpy, 64 MiB and"
	@echo "                   256 KiB, -O3 -march=native (~1 min; BENCH_EXTRA=-DQMX_NO_SIMD for scalar)"
	@echo "  fuzz             every libFuzzer harness in tests/fuzz, FUZZ_SECONDS (60) each, ASan+UBSan,"
	@echo "                   FUZZ_JOBS (2) at a time, FUZZ_CFLAGS (-march=native); FUZZ=\"fuzz_x ...\""
	@echo "  bench-peers      apt-get oneDNN/gemmlowp/OpenBLAS (root) and build the peer harness for make bench"
	@echo "  bench-cortex-m   insns/MAC of the int8/int4/16x8 fully-connected on Cortex-M4/M55 (QEMU) vs CMSIS-NN"
	@echo "  bench-riscv      insns/MAC of the int8 fully-connected, insns/element of quantize: RISC-V"
	@echo "                   portable vs RVV at VLEN 128/256/512 (QEMU)"
	@echo "  install          headers, qmx.pc and CMake config under PREFIX (/usr/local; DESTDIR honoured)"
	@echo "  uninstall        remove what install wrote"
	@echo "  test-consumers   out-of-tree consumers via make install + pkg-config, CMake find_package"
	@echo "                   and add_subdirectory"
	@echo "  build/qmx_convert  the weight converter (.npy/.safetensors -> C header; examples/qmx_convert)"
	@echo "  clean            remove $(BUILD)/"
	@echo "One target, one test: tools/targets/run-on cortex-m4 tests/test_core.c -I. -std=c99"
	@echo "One target, all tests: tools/run_tests.sh aarch64 [CFLAGS...]    (JOBS=2 programs at once)"

# ---- demo -----------------------------------------------------------------------------------
DEMO_CFLAGS := -std=c99 -D_POSIX_C_SOURCE=199309L -O2 -march=native -Wall -Wextra -Werror -I.

$(BUILD)/demo: examples/demo.c examples/demo_int8.h $(HEADERS) | $(BUILD)
	$(CC) $(DEMO_CFLAGS) examples/demo.c -o $@ -lm

$(BUILD)/kv_decode: examples/kv_decode.c examples/kv_synth.h $(HEADERS) | $(BUILD)
	$(CC) $(DEMO_CFLAGS) examples/kv_decode.c -o $@ -lm

demo: $(BUILD)/demo $(BUILD)/kv_decode
	@$(BUILD)/demo examples/data/digits.csv
	@echo
	@$(BUILD)/kv_decode
	@echo
	@$(MAKE) --no-print-directory examples

# The USING SEVERAL CORES examples (qmx_kernels.h): a pthreads pool and OpenMP (skipped when
# $(CC) has no -fopenmp). `make examples` builds and runs both; `make demo` and `make test` too,
# so that they keep compiling.
EXAMPLE_CFLAGS := -std=c99 -O2 -march=native -Wall -Wextra -Wpedantic -Werror -I.
HAVE_OPENMP := $(shell printf 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo 1)
.PHONY: examples

$(BUILD)/parallel_pthreads: examples/parallel_pthreads.c $(HEADERS) | $(BUILD)
	$(CC) $(EXAMPLE_CFLAGS) examples/parallel_pthreads.c -o $@

$(BUILD)/parallel_openmp: examples/parallel_openmp.c $(HEADERS) | $(BUILD)
	$(CC) $(EXAMPLE_CFLAGS) -fopenmp examples/parallel_openmp.c -o $@

examples: $(BUILD)/parallel_pthreads $(if $(HAVE_OPENMP),$(BUILD)/parallel_openmp)
	@$(BUILD)/parallel_pthreads
	@$(if $(HAVE_OPENMP),$(BUILD)/parallel_openmp,echo "examples: $(CC) has no -fopenmp: parallel_openmp skipped")

# The int8 integer-only model of the demo as firmware: the host run exports it as a C header
# (build/demo_model.h), and examples/demo_mcu.c classifies the held-out digits with it on a
# Cortex-M4 under QEMU, checking the predictions against the host's.
demo-cortex-m: $(BUILD)/demo
	@$(BUILD)/demo examples/data/digits.csv --export $(BUILD)/demo_model.h | tail -3
	@tools/targets/run-on cortex-m4 examples/demo_mcu.c -I. -Iexamples -I$(BUILD) -std=c99 -O2 \
	    -Wall -Wextra -Werror

$(BUILD):
	@mkdir -p $(BUILD)

# ---- tests ----------------------------------------------------------------------------------
# Each test_matrix.sh configuration is "NAME [VAR=VALUE...] TARGET [CFLAGS...]" (see the
# script); its last line, the grand total "N passed, N failed", is the line CI reads.

check-headers:
	@tools/check_headers.sh

# check-headers runs in one of the 2 job slots beside the first configurations (--with); the
# examples are built (two compiles at once) and run first.
test:
	@$(MAKE) --no-print-directory -j2 examples
	@tools/test_matrix.sh --parallel 2 --with tools/check_headers.sh --title "make test" \
	    "native host" \
	    "scalar HOST_MARCH= host -DQMX_NO_SIMD" \
	    "cxx host-c++" \
	    "fpcontract host -std=gnu99 -O3 -ffp-contract=fast"

# The configurations of the goals below; `make test-builds` runs them all in one pool.
CFG_SANITIZE := "sanitize UBSAN_OPTIONS=print_stacktrace=1 host -fsanitize=address,undefined \
                 -fno-sanitize-recover=all -g -O1"
# The range-split kernels on real threads (tests/test_parallel.c: pthreads, which glibc >= 2.34
# keeps in libc, so no -pthread flag is needed) under ThreadSanitizer.
CFG_TSAN     := "tsan TSAN_OPTIONS=halt_on_error=1 TESTS=tests/test_parallel.c host -fsanitize=thread -g -O1"
# Valgrind 3.19 (Debian 12) decodes AVX2 but not AVX-512: this build targets x86-64-v3.
# QMX_TEST_VALGRIND: the tests whose sweeps are long take their cross-target sizes.
CFG_VALGRIND := "valgrind HOST_MARCH=-march=x86-64-v3 HOST_RUNNER=tools/valgrind.sh host -g -O1 \
                 -DQMX_TEST_VALGRIND"
# clang with -ffp-contract=fast (clang ignores `#pragma clang fp contract(off)` under fast: the
# kernels' asm barriers, QMX__OPAQUE / QMX__VOPAQUE, keep the documented float order).
CFG_CLANG_FAST := "fpcontract-clang HOST_CC=clang-16 host -std=gnu99 -O3 -ffp-contract=fast"
# aarch64 with i8mm (qemu -cpu max has it): the blob kernel's USMMLA row pairs, the one
# program whose code changes with __ARM_FEATURE_MATMUL_INT8.
CFG_I8MM     := "aarch64-i8mm TESTS=tests/test_blockw_packed.c aarch64 -march=armv8.2-a+dotprod+i8mm"
# The cross targets only: the host builds (native, scalar, C++, contracted) are `make test`'s.
CFG_TARGETS  := $(foreach t,$(CROSS_TARGETS),"$(t) $(t)")

test-targets:
	@tools/test_matrix.sh --parallel 2 --title "make test-targets" $(CFG_TARGETS)

test-sanitize:
	@tools/test_matrix.sh --title "make test-sanitize" $(CFG_SANITIZE)

.PHONY: test-tsan test-builds
test-tsan:
	@tools/test_matrix.sh --title "make test-tsan" $(CFG_TSAN)

test-valgrind:
	@tools/test_matrix.sh --title "make test-valgrind" $(CFG_VALGRIND)

# test-sanitize, test-valgrind, test-targets and test-tsan as one job pool (what .ci/run runs):
# 2 programs at a time over all of them, so that no job slot idles at a goal's end. The longest
# configurations start first (TSan's one program beside them); the RVV VLENs 256 / 512 after 128, whose builds they reuse
# (TARGET_BUILD_CACHE).
test-builds:
	@tools/test_matrix.sh --parallel 2 --title "make test-builds" $(CFG_VALGRIND) $(CFG_SANITIZE) $(CFG_TSAN) \
	    $(foreach t,cortex-m3 riscv64-rvv128 ppc s390x aarch64 cortex-m4 armhf cortex-m55 aarch64-v8a \
	                riscv64 i386 riscv64-rvv256 riscv64-rvv512,"$(t) $(t)") $(CFG_CLANG_FAST) $(CFG_I8MM)

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
bench: bench-peers-build | $(BUILD)
	@awk -F': *' '/^vendor_id/ && !v {v=$$2} /^cpu family/ && !f {f=$$2} /^model\t/ && !m {m=$$2} \
	    /^model name/ && !n {n=$$2} /^flags/ && !fl {fl=($$0 ~ / avx512_vnni/ ? "avx512_vnni" : ($$0 ~ / avx2/ ? "avx2" : "no avx2"))} \
	    END {printf "bench: CPU %s family %s model %s (%s), %s; %d logical CPUs\n", v, f, m, n, fl, NR ? c : 0}' \
	    c=$$(getconf _NPROCESSORS_ONLN) /proc/cpuinfo 2>/dev/null || echo "bench: CPU unknown (no /proc/cpuinfo)"
	@set -e; for src in $(BENCH_PROGS); do \
	    name=$$(basename $$src .c); \
	    echo "== $$name"; \
	    $(CC) $(BENCH_CFLAGS) -DQMX_BENCH_CFLAGS='"$(CC) $(BENCH_CFLAGS)"' $$src -o $(BUILD)/$$name -lm \
	        $$(if [ $$name = bench_matmul ]; then echo '$(BENCH_MATMUL_PEERS)'; fi) \
	        $$(if [ $$name = bench_parallel ]; then echo '$(BENCH_PARALLEL_PEERS)'; fi); \
	    $(BUILD)/$$name; \
	done

# ---- bench-peers ----------------------------------------------------------------------------
# The peers of bench/bench_matmul.c, from Debian: oneDNN and OpenBLAS through their C APIs,
# linked into bench_matmul (timed in alternation with qmx), and gemmlowp (C++ only) in its own
# program build/peers_matmul (bench/peers_matmul.cpp) that bench_matmul runs shape by shape,
# all in the same `make bench` run. `make bench-peers` installs the packages (as root) and
# builds it; `make bench` uses whatever is installed, and bench_matmul runs without peers
# otherwise.
.PHONY: bench-peers bench-peers-build
PEERS_MULTIARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
PEERS_DNNL  := $(shell test -f /usr/include/dnnl.h && echo 1)
PEERS_BLAS  := $(shell test -f /usr/include/$(PEERS_MULTIARCH)/openblas-pthread/cblas.h && echo 1)
PEERS_LOWP  := $(shell test -f /usr/include/gemmlowp/public/gemmlowp.h && echo 1)
BENCH_MATMUL_PEERS := $(if $(PEERS_DNNL),-DQMX_BENCH_HAVE_DNNL -ldnnl) \
    $(if $(PEERS_BLAS),-DQMX_BENCH_HAVE_OPENBLAS -I/usr/include/$(PEERS_MULTIARCH)/openblas-pthread -lopenblas)
BENCH_PARALLEL_PEERS := $(if $(PEERS_DNNL),-DQMX_BENCH_HAVE_DNNL -ldnnl -lgomp)
PEERS_CXXFLAGS := -std=c++17 -O3 -march=native -DNDEBUG -DGEMMLOWP_ENABLE_AVX2 -Ibench

$(BUILD)/peers_matmul: bench/peers_matmul.cpp bench/bench_util.h | $(BUILD)
	$(CXX) $(PEERS_CXXFLAGS) bench/peers_matmul.cpp -o $@ -lpthread

bench-peers:
	apt-get install -y libdnnl-dev libgemmlowp-dev libopenblas-dev
	@$(MAKE) --no-print-directory $(BUILD)/peers_matmul

bench-peers-build:
ifeq ($(PEERS_LOWP),1)
	@$(MAKE) --no-print-directory $(BUILD)/peers_matmul
else
	@echo "bench: gemmlowp headers not found (make bench-peers): bench_matmul runs without it"
endif

# ---- bench-cortex-m -------------------------------------------------------------------------
# Executed instructions per MAC of qmx_fully_connected_i8 and qmx_fully_connected_i4 on
# Cortex-M4 (DSP) and Cortex-M55 (MVE), batch 1 and 4 x 1024 -> 1024 (and qmx_fully_connected_i16,
# K 512 and 1024, per tensor and per channel), counted exactly under QEMU
# by the TCG plugin tools/targets/support/regioncount.c, beside CMSIS-NN's figures
# (tools/cortexm_count.sh; bench/count/). BENCH_CM_FLAGS adds CFLAGS, e.g. -O3.
.PHONY: bench-cortex-m
bench-cortex-m: | $(BUILD)
	@tools/cortexm_count.sh $(BENCH_CM_FLAGS)

# ---- bench-riscv ----------------------------------------------------------------------------
# Executed instructions per MAC of qmx_fully_connected_i8 (1024 -> 1024, batch 1 and 4) and per
# element of int8 qmx_quantize on RISC-V: the portable path (riscv64, gcc) beside RVV 1.0
# (clang-16) at VLEN 128 / 256 / 512, counted exactly under qemu-riscv64 by the TCG plugin
# tools/targets/support/regioncount.c (tools/riscv_count.sh; bench/count/). BENCH_RV_FLAGS adds
# CFLAGS.
.PHONY: bench-riscv
bench-riscv: | $(BUILD)
	@tools/riscv_count.sh $(BENCH_RV_FLAGS)

# ---- fuzz -----------------------------------------------------------------------------------
# Every tests/fuzz/fuzz_*.c is a libFuzzer harness, run FUZZ_SECONDS each under ASan + UBSan
# (clang). FUZZ="fuzz_a fuzz_b" runs only those.
FUZZ_SECONDS ?= 60
fuzz: | $(BUILD)
	@tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ)

# ---- weight converter -----------------------------------------------------------------------
# build/qmx_convert: .npy / .safetensors -> quantized C header (examples/qmx_convert.c; a host
# tool, so it uses libc). `build/qmx_convert --help`.
CONVERT_CFLAGS := -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I.

$(BUILD)/qmx_convert: examples/qmx_convert.c examples/qmx_convert/qmx_files.h \
                      examples/qmx_convert/qmx_convert_core.h $(HEADERS) | $(BUILD)
	$(CC) $(CONVERT_CFLAGS) examples/qmx_convert.c -o $@

# ---- install / uninstall --------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=...]: the headers into $(PREFIX)/include/qmx/
# (use -I$(PREFIX)/include/qmx, or pkg-config, and #include "qmx.h"), qmx.pc into
# $(PREFIX)/share/pkgconfig/, qmxConfig.cmake + qmxConfigVersion.cmake into
# $(PREFIX)/share/cmake/qmx/ (find_package(qmx) -> target qmx::qmx). Header-only, so the
# arch-independent share/ directories. `cmake --install` of CMakeLists.txt installs the same.
PREFIX       ?= /usr/local
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(DATADIR)/pkgconfig
CMAKEDIR     ?= $(DATADIR)/cmake/qmx
QMX_VERSION_PARTS := $(shell awk '/^\#define QMX_VERSION_(MAJOR|MINOR|PATCH) /{print $$3}' qmx.h)
QMX_VERSION  := $(subst $(eval) ,.,$(strip $(QMX_VERSION_PARTS)))
# qmxConfig.cmake finds the headers relative to itself when the layout is the default one.
QMX_INCLUDE_EXPR := $(if $(filter $(PREFIX)/include@$(PREFIX)/share/cmake/qmx,$(INCLUDEDIR)@$(CMAKEDIR)),$${CMAKE_CURRENT_LIST_DIR}/../../../include/qmx,$(INCLUDEDIR)/qmx)
QMX_PC_INCLUDEDIR := $(if $(filter $(PREFIX)/include,$(INCLUDEDIR)),$${prefix}/include,$(INCLUDEDIR))
.PHONY: install uninstall test-consumers

install:
	install -d $(DESTDIR)$(INCLUDEDIR)/qmx $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR)
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/qmx/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@INCLUDEDIR@|$(QMX_PC_INCLUDEDIR)|g' -e 's|@VERSION@|$(QMX_VERSION)|g' \
	    qmx.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/qmx.pc
	sed -e 's|@QMX_INCLUDE_EXPR@|$(QMX_INCLUDE_EXPR)|g' cmake/qmxConfig.cmake.in >$(DESTDIR)$(CMAKEDIR)/qmxConfig.cmake
	sed -e 's|@QMX_VERSION@|$(QMX_VERSION)|g' -e 's|@QMX_VERSION_MAJOR@|$(word 1,$(QMX_VERSION_PARTS))|g' \
	    -e 's|@QMX_VERSION_MINOR@|$(word 2,$(QMX_VERSION_PARTS))|g' \
	    cmake/qmxConfigVersion.cmake.in >$(DESTDIR)$(CMAKEDIR)/qmxConfigVersion.cmake
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/qmx.pc $(DESTDIR)$(CMAKEDIR)/qmxConfig.cmake $(DESTDIR)$(CMAKEDIR)/qmxConfigVersion.cmake
	@echo "installed qmx $(QMX_VERSION) into $(DESTDIR)$(PREFIX)"

# Removes exactly what install wrote (and the qmx directories when left empty).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/qmx/,$(notdir $(HEADERS))) $(DESTDIR)$(PKGCONFIGDIR)/qmx.pc \
	    $(DESTDIR)$(CMAKEDIR)/qmxConfig.cmake $(DESTDIR)$(CMAKEDIR)/qmxConfigVersion.cmake
	-rmdir $(DESTDIR)$(INCLUDEDIR)/qmx $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true

# ---- test-consumers -------------------------------------------------------------------------
# Out-of-tree consumers (tests/consumer/) built against a temporary install: make install +
# pkg-config, make install + CMake find_package, CMake add_subdirectory, cmake --install +
# pkg-config/find_package, then make uninstall. Needs cmake and pkg-config (apt-get install
# cmake pkg-config). Last line "N passed, N failed".
test-consumers:
	@tools_make="$(MAKE)" CC="$(CC)" CXX="$(CXX)" bash tests/consumer/run.sh

# ---- housekeeping ---------------------------------------------------------------------------
clean:
	rm -rf $(BUILD)
