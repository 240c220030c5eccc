/*
 * leaf.c - libleaf.so, see leaf.h. Built with frame pointers like everything
 * else in this fixture, so frame-pointer unwinding sees every call.
 */
#include "leaf.h"

#include <stdlib.h>
#include <string.h>

uint32_t leaf_crc32(const uint8_t *buf, size_t len) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < len; i++) {
    crc ^= buf[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint64_t leaf_mix64(uint64_t seed, unsigned rounds) {
  uint64_t x = seed;
  for (unsigned r = 0; r < rounds; r++) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    x += r;
  }
  return x;
}

int64_t leaf_map_reduce(const int64_t *v, size_t n, leaf_fn fn) {
  int64_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t y = fn(v[i]);
    acc = (int64_t)leaf_mix64((uint64_t)(acc ^ y), 8);
  }
  return acc;
}

struct leaf_block *leaf_alloc_chain(size_t count, size_t size, uint64_t seed) {
  struct leaf_block *head = NULL;
  for (size_t i = 0; i < count; i++) {
    struct leaf_block *b = malloc(sizeof *b + size);
    if (b == NULL)
      abort();
    b->size = size;
    uint64_t x = seed + i;
    for (size_t j = 0; j < size; j++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      b->data[j] = (unsigned char)(x >> 56);
    }
    b->next = head;
    head = b;
  }
  return head;
}

uint64_t leaf_chain_checksum(const struct leaf_block *b) {
  uint64_t sum = 0;
  for (; b != NULL; b = b->next)
    sum = sum * 31 + leaf_crc32(b->data, b->size);
  return sum;
}

void leaf_free_chain(struct leaf_block *b) {
  while (b != NULL) {
    struct leaf_block *next = b->next;
    free(b);
    b = next;
  }
}
