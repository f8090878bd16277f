#!/usr/bin/env bash
# run.sh - `make test-consumers`: builds tests/consumer/consumer.c OUTSIDE the tree against qmx
# installed or vendored every supported way, runs each build (it prints "ok ..."), and checks
# that uninstall removes what install wrote. Everything goes under build/consumers/ (a fresh
# temporary PREFIX each run). Last line "N passed, N failed"; exit status non-zero on failure.
# Needs: make, cc, cmake >= 3.14, pkg-config (Debian: apt-get install cmake pkg-config).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
MAKE_CMD=${tools_make:-make}
CC=${CC:-cc}
CXX=${CXX:-c++}
WORK=$ROOT/build/consumers
rm -rf "$WORK" && mkdir -p "$WORK" || exit 2
pass=0 fail=0

# check NAME COMMAND...: runs the command (output in $WORK/NAME.log), counts it.
check() {
    local name=$1; shift
    if "$@" >"$WORK/$name.log" 2>&1; then
        echo "  ok    $name"; pass=$((pass + 1))
    else
        echo "  FAIL  $name (log: $WORK/$name.log)"; tail -n 15 "$WORK/$name.log" | sed 's/^/        | /'
        fail=$((fail + 1))
    fi
}
# runs a consumer binary and requires its "ok" line
run_ok() { local out; out=$("$1") && echo "$out" && [ "${out#ok}" != "$out" ]; }

missing=''
for tool in cmake pkg-config; do command -v $tool >/dev/null 2>&1 || missing="$missing $tool"; done
if [ -n "$missing" ]; then
    echo "test-consumers: missing$missing (apt-get install -y cmake pkg-config)"
    echo "0 passed, 1 failed"; exit 1
fi
VERSION=$(awk '/^#define QMX_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END {print v}' qmx.h)
echo "== test-consumers: qmx $VERSION, work dir $WORK"

# 1. make install into a temporary prefix
P1=$WORK/prefix-make
check "make-install" $MAKE_CMD -s install PREFIX="$P1"
check "make-install-files" bash -c "test -f '$P1/include/qmx/qmx.h' && test -f '$P1/include/qmx/qmx_kernels.h' &&
    test -f '$P1/include/qmx/qmx_calib.h' && test -f '$P1/share/pkgconfig/qmx.pc' &&
    test -f '$P1/share/cmake/qmx/qmxConfig.cmake' && test -f '$P1/share/cmake/qmx/qmxConfigVersion.cmake'"

# consumers against one prefix: pkg-config (C99 and C++11) and find_package
consumers_for() {
    local tag=$1 prefix=$2
    export PKG_CONFIG_PATH=$prefix/share/pkgconfig
    check "$tag-pkgconfig-version" bash -c "test \"\$(pkg-config --modversion qmx)\" = '$VERSION'"
    check "$tag-pkgconfig-c99" bash -c "$CC -std=c99 -Wall -Wextra -Wpedantic -Werror \$(pkg-config --cflags qmx) \
        tests/consumer/consumer.c -o '$WORK/$tag-pc-c' && cd '$WORK' && $(declare -f run_ok); run_ok './$tag-pc-c'"
    check "$tag-pkgconfig-c++11" bash -c "$CXX -x c++ -std=c++11 -Wall -Wextra -Werror \$(pkg-config --cflags qmx) \
        tests/consumer/consumer.c -o '$WORK/$tag-pc-cxx' && $(declare -f run_ok); run_ok '$WORK/$tag-pc-cxx'"
    unset PKG_CONFIG_PATH
    check "$tag-find_package" bash -c "cmake -S tests/consumer/cmake_find -B '$WORK/$tag-find' -DCMAKE_PREFIX_PATH='$prefix' \
        -DCMAKE_C_COMPILER='$CC' && cmake --build '$WORK/$tag-find' && $(declare -f run_ok); run_ok '$WORK/$tag-find/consumer'"
    # a version the package must refuse (0.1 is compatible, 99.0 is not)
    check "$tag-find_package-rejects-99" bash -c "sed 's/find_package(qmx 0.1 REQUIRED)/find_package(qmx 99.0 REQUIRED)/' \
        tests/consumer/cmake_find/CMakeLists.txt >'$WORK/$tag-find99.txt' && mkdir -p '$WORK/$tag-find99-src' &&
        cp '$WORK/$tag-find99.txt' '$WORK/$tag-find99-src/CMakeLists.txt' && cp tests/consumer/consumer.c '$WORK/' &&
        ! cmake -S '$WORK/$tag-find99-src' -B '$WORK/$tag-find99' -DCMAKE_PREFIX_PATH='$prefix'"
}
consumers_for make "$P1"

# 2. make uninstall removes every installed file
check "make-uninstall" $MAKE_CMD -s uninstall PREFIX="$P1"
check "make-uninstall-empty" bash -c "test -z \"\$(find '$P1' -type f)\""

# 3. add_subdirectory of the source tree
check "add_subdirectory" bash -c "cmake -S tests/consumer/cmake_subdir -B '$WORK/subdir' -DQMX_SOURCE_DIR='$ROOT' \
    -DCMAKE_C_COMPILER='$CC' && cmake --build '$WORK/subdir' && $(declare -f run_ok); run_ok '$WORK/subdir/consumer'"

# 4. cmake --install of the top-level CMakeLists.txt, then the same consumers against it
P2=$WORK/prefix-cmake
check "cmake-install" bash -c "cmake -S . -B '$WORK/qmx-cmake' && cmake --install '$WORK/qmx-cmake' --prefix '$P2'"
check "cmake-install-same-files" bash -c "diff <(cd '$P2' && find . -type f | sort) <(cd '$WORK' && rm -rf p3 &&
    $MAKE_CMD -s -C '$ROOT' install PREFIX='$WORK/p3' >/dev/null && cd p3 && find . -type f | sort)"
consumers_for cmake "$P2"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
