#!/usr/bin/env bash
# test.sh [LLVM_CONFIG] - build and run listener_test.cpp against the given
# LLVM (default llvm-config-14): pprof_jit_listener.h with MCJIT, with ORC's
# LLJIT on RuntimeDyld (registerWithLayer) and on JITLink (makeDumpPlugin),
# and LLJIT on JITLink with debugger support read back by jitsnap, on a
# small C module. JITPPROF_BUILD_CACHE, if set, keeps the built host by a
# hash of its inputs.
set -euo pipefail

llvm_config=${1:-llvm-config-14}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bindir=$("$llvm_config" --bindir)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/square.c" <<'C'
long jit_square(long x) { return x * x; }
C
# Newer LLVM reads older bitcode, so clang-14 will do if the matching clang
# is not installed.
clang=$bindir/clang
if [[ ! -x $clang ]]; then clang="clang-14"; fi
"$clang" -g -O1 -emit-llvm -c "$work/square.c" -o "$work/square.bc"

read -r -a ldflags <<<"$("$llvm_config" --ldflags)"
read -r -a libs <<<"$("$llvm_config" --libs)"
# With JITPPROF_BUILD_CACHE (./test.sh sets it), the host is kept there by
# a hash of everything that goes into it, and a later run with the same
# inputs compiles nothing.
cache=${JITPPROF_BUILD_CACHE:-}
key=$({
  cat "$here/listener_test.cpp" "$here/pprof_jit_listener.h" "${BASH_SOURCE[0]}"
  g++ --version
  "$llvm_config" --version --includedir --ldflags --libs
} | sha256sum | cut -c1-32)
if [[ -n $cache && -x $cache/listener_test-$key ]]; then
  cp "$cache/listener_test-$key" "$work/listener_test"
  echo "listener_test: taken from the cache ($cache/listener_test-$key), nothing compiled"
else
  g++ -std=c++17 -O1 -Wall -Wextra -Werror -isystem "$("$llvm_config" --includedir)" \
    -D_GNU_SOURCE -D__STDC_CONSTANT_MACROS -D__STDC_FORMAT_MACROS \
    -D__STDC_LIMIT_MACROS -I"$here" "$here/listener_test.cpp" \
    -o "$work/listener_test" "${ldflags[@]}" "${libs[@]}"
  if [[ -n $cache ]]; then
    mkdir -p "$cache"
    cp "$work/listener_test" "$cache/.listener_test-$key.tmp"
    mv "$cache/.listener_test-$key.tmp" "$cache/listener_test-$key"
  fi
fi
# jitsnap, for the ORC JITLink + debugger support mode.
(cd "$here/.." && go build -o "$work/jitsnap" ./cmd/jitsnap)
"$work/listener_test" "$work/square.bc" "$work/out" "$work/jitsnap"
