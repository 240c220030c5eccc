#!/bin/bash
# Generates the small binaries in other containers than 64-bit ELF that
# seed FuzzObjFile and drive TestForeignFixtures (internal/objtool), from
# ../inline.c, with Debian 12's tools: gcc-multilib, gcc-mingw-w64-x86-64,
# clang-19, lld-19 and llvm-19 (llvm-lipo). Run it from this directory.
set -euo pipefail
src=../inline.c
# The DWARF names this directory so, wherever the checkout is.
map=-fdebug-prefix-map=$PWD=/jitpprof/internal/objtool/testdata/foreign
# 32-bit ELF, static and without libc: only inline.c's code.
gcc -m32 -O2 -g "$map" -static -nostdlib -fno-pie -no-pie -fno-asynchronous-unwind-tables -Wl,--build-id -e main -o elf32 "$src"
# PE with DWARF, without the C runtime (whose __main GCC calls from main).
x86_64-w64-mingw32-gcc -O2 -g "$map" -Wl,--no-insert-timestamp -nostdlib -fno-asynchronous-unwind-tables -Dmain=entry -e entry -o pe.exe "$src"
# Mach-O object files for macOS, and a fat file of both.
clang-19 --target=x86_64-apple-macos11 -O2 -g "$map" -fno-asynchronous-unwind-tables -c -o macho-x86.o "$src"
clang-19 --target=arm64-apple-macos11 -O2 -g "$map" -fno-asynchronous-unwind-tables -c -o macho-arm64.o "$src"
llvm-lipo-19 -create macho-x86.o macho-arm64.o -output macho-fat.o
# A Mach-O executable linked by lld, without DWARF (clang would move it to
# a .dSYM bundle): its symbols and its __TEXT segment's base.
clang-19 --target=x86_64-apple-macos11 -O2 -fuse-ld=lld -nostdlib -Wl,-undefined,dynamic_lookup -o macho-exe "$src"
# 32-bit ELF of other machines, linked by lld: ARMv7 Thumb-2 code (mapping
# symbols, the Thumb bit) and big-endian o32 MIPS code.
clang-19 --target=armv7-linux-gnueabihf -mthumb -O2 -g "$map" -c -o arm.o "$src"
ld.lld-19 -e main -o elf32-arm arm.o
clang-19 --target=mips-linux-gnu -O2 -g "$map" -c -o mips.o "$src"
ld.lld-19 -e main -o elf32-mips mips.o
rm arm.o mips.o
# 32-bit ELF with procedure linkage tables, without DWARF: a 386 PIE
# calling the C library, and an ARMv7 program of Thumb-2 code calling a
# shared library of its own (linked by lld).
cat >plt.c <<'EOF'
int puts(const char *);
long strtol(const char *, char **, int);
int main(int argc, char **argv) { puts(argv[0]); return (int)strtol(argv[argc - 1], 0, 10); }
EOF
cat >lib.c <<'EOF'
int puts(const char *s) { return s[0]; }
long strtol(const char *s, char **e, int b) { return s[1] + b; }
EOF
gcc -m32 -O2 -fPIE -pie -Wl,--build-id -o elf32-plt plt.c
clang-19 --target=armv7-linux-gnueabihf -mthumb -O2 -fPIC -c -o lib.o lib.c
ld.lld-19 -shared -soname libx.so -o libx.so lib.o
clang-19 --target=armv7-linux-gnueabihf -mthumb -O2 -c -o plt.o plt.c
ld.lld-19 -e main -o elf32-arm-plt plt.o libx.so
rm plt.c lib.c lib.o plt.o libx.so
