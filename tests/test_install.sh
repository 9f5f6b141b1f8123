#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# cmake --install gives a working package: an outside program builds against it
# with pkg-config (shared and static) and with CMake's find_package(collie),
# and runs under the installed collie run; the shared library exports
# collie_* symbols only.
build=$1 src=$2 cflags=${3:-} # cflags: what a sanitized build needs outside programs to use too
. "$(dirname "$0")/lib.sh"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install failed"
for f in include/collie.h bin/collie share/collie/backend_torch.py; do [ -e "$prefix/$f" ] || fail "$f not installed"; done
pc=$(find "$prefix" -name collie.pc | head -1)
[ -n "$pc" ] || fail "collie.pc not installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir collie)
cc -std=c11 $cflags $(pkg-config --cflags collie) "$src/examples/allreduce_demo.c" -o "$prefix/demo" \
    $(pkg-config --libs collie) || fail "cannot build against the installed shared library"
expect_status 0 env LD_LIBRARY_PATH="$libdir" "$prefix/bin/collie" run -n 2 "$prefix/demo"
expect_output "rank 1 of 2 .* 0 wrong"
cc -std=c11 $cflags $(pkg-config --cflags collie) "$src/examples/allreduce_demo.c" -o "$prefix/demo_static" \
    "$libdir/libcollie.a" $(pkg-config --static --libs collie | sed 's/-lcollie\b//') $cflags ||
    fail "cannot build against the installed static library (with pkg-config --static's libraries)"
expect_status 0 "$prefix/bin/collie" run -n 2 "$prefix/demo_static"
# An outside CMake project: find_package(collie) and collie::collie / collie::collie_static.
outside=$prefix/outside
mkdir -p "$outside"
cp "$src/examples/allreduce_demo.c" "$outside/"
cat > "$outside/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(outside C)
find_package(collie 0.1 REQUIRED)
add_executable(demo allreduce_demo.c)
target_link_libraries(demo PRIVATE collie::collie)
add_executable(demo_static allreduce_demo.c)
target_link_libraries(demo_static PRIVATE collie::collie_static)
target_compile_options(demo PRIVATE $cflags)
target_link_options(demo PRIVATE $cflags)
target_compile_options(demo_static PRIVATE $cflags)
target_link_options(demo_static PRIVATE $cflags)
CMAKE
cmake -S "$outside" -B "$outside/build" -DCMAKE_PREFIX_PATH="$prefix" >"$outside/log" 2>&1 &&
    cmake --build "$outside/build" >>"$outside/log" 2>&1 ||
    fail "an outside CMake project cannot use find_package(collie): $(tail -20 "$outside/log")"
expect_status 0 "$prefix/bin/collie" run -n 2 "$outside/build/demo"
expect_output "rank 1 of 2 .* 0 wrong"
expect_status 0 "$prefix/bin/collie" run -n 2 "$outside/build/demo_static"
expect_output "rank 1 of 2 .* 0 wrong"
private=$(nm -D --defined-only "$libdir/libcollie.so" | awk '{print $3}' | grep -v '^collie_')
[ -z "$private" ] || fail "libcollie.so exports non-public symbols: $private"
echo "install: ok"
