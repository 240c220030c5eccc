#!/bin/sh
# Regenerates the small objects checked in beside this script, which the
# tests of package jitsym (and its fuzz seeds) use without any compiler.
# The sources are in src/; debug paths are rewritten to /jitsym so that
# the objects do not depend on where they were built. Then run
#   go test ./internal/jitsym ./internal/elfrel -run Corpus -update
# to refresh testdata/fuzz. Needs gcc 12, clang-14, clang-19 and GNU ld.
set -eu
cd "$(dirname "$0")"
map="-fdebug-prefix-map=$(pwd)=/jitsym"
gcc -g -O1 -ffunction-sections $map -c src/plain.c -o plain-gcc-dwarf5.o
gcc -g0 -O2 -ffunction-sections -c src/cold.c -o cold-gcc-nodebug.o
gcc -gdwarf-4 -O2 -ffunction-sections $map -c src/cold.c -o cold-gcc-dwarf4.o
clang-14 -g -O2 -ffunction-sections $map -c src/inline.cc -o inline-clang-dwarf5.o
g++ -g -O1 -ffunction-sections $map -c src/inline.cc -o inline-gcc-dwarf5.o
clang-14 --target=aarch64-linux-gnu -gdwarf-4 -O1 -ffunction-sections $map -c src/plain.c -o plain-clang-aarch64-dwarf4.o
# The other machines' relocations: RISC-V's ADD/SUB and ULEB128 pairs and
# assembler labels (clang 19), big-endian PowerPC64 and s390x.
clang-19 --target=riscv64-linux-gnu -g -O2 -ffunction-sections $map -c src/plain.c -o plain-clang19-riscv64-dwarf5.o
clang-14 --target=powerpc64-linux-gnu -gdwarf-4 -O2 -ffunction-sections $map -c src/cold.c -o cold-clang-ppc64-dwarf4.o
clang-14 --target=s390x-linux-gnu -g -O2 -ffunction-sections $map -c src/cold.c -o cold-clang-s390x-dwarf5.o
# 32-bit objects (ELFCLASS32, SHT_REL): 386, and ARM in Thumb-2.
gcc -m32 -g -O2 -ffunction-sections $map -c src/cold.c -o cold-gcc-m32-dwarf5.o
clang-14 --target=armv7-linux-gnueabihf -mthumb -gdwarf-4 -O1 -ffunction-sections $map -c src/plain.c -o plain-clang-thumb2-dwarf4.o
# MIPS64's own r_info layout (little-endian), and 32-bit big-endian
# PowerPC.
clang-14 --target=mips64el-linux-gnuabi64 -g -O2 -ffunction-sections $map -c src/cold.c -o cold-clang-mips64el-dwarf5.o
clang-14 --target=powerpc-linux-gnu -gdwarf-4 -O2 -ffunction-sections $map -c src/cold.c -o cold-clang-ppc32-dwarf4.o
# Three units in one relocatable object (DWARF 5 and 4), as a JIT that
# links several modules into one object would make.
ld -r inline-gcc-dwarf5.o plain-gcc-dwarf5.o cold-gcc-dwarf4.o -o multi-gcc-ld-r.o
