/*
 * leaf.h - the interface of libleaf.so, an ordinary shared library that the
 * JIT-compiled workload (workload.c) calls into. Its code is mapped directly
 * above the JIT code region (see jit_host.cpp), so profiles contain library
 * frames whose callers are JIT frames and JIT frames called back by the
 * library.
 */
#ifndef LEAF_H
#define LEAF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bitwise CRC-32 (slow on purpose: it is a CPU burner). */
uint32_t leaf_crc32(const uint8_t *buf, size_t len);

/* Mixes seed through rounds of a 64-bit finalizer. */
uint64_t leaf_mix64(uint64_t seed, unsigned rounds);

/* Applies fn to every element and folds the results; fn is a JIT function,
 * so this gives JIT -> library -> JIT stacks. */
typedef int64_t (*leaf_fn)(int64_t);
int64_t leaf_map_reduce(const int64_t *v, size_t n, leaf_fn fn);

/* A singly linked chain of malloc'd blocks filled with a pseudo-random
 * pattern: heap allocations made by the library on behalf of JIT code. */
struct leaf_block {
  struct leaf_block *next;
  size_t size;
  unsigned char data[];
};
struct leaf_block *leaf_alloc_chain(size_t count, size_t size, uint64_t seed);
uint64_t leaf_chain_checksum(const struct leaf_block *b);
void leaf_free_chain(struct leaf_block *b);

#ifdef __cplusplus
}
#endif

#endif /* LEAF_H */
