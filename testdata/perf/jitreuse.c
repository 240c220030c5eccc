// jitreuse.c - a tiny x86-64 JIT that publishes its code in a jitdump file
// (perf's jitdump format, tools/perf/Documentation/jitdump-specification.txt)
// and then moves and reuses it, for the perf.data reader's replay test:
//
//   1. jit_first  is loaded at A and runs for MS1 milliseconds;
//   2. jit_second is loaded over it at A (the same address, new code) and
//      runs for MS2 milliseconds;
//   3. jit_moved  is loaded at B, runs for MS3 milliseconds, is moved to C
//      (CODE_MOVE) and runs as long again there.
//
// At the end, A holds jit_second and C jit_moved: only a reader that
// replays the dump by the samples' times names the samples of jit_first,
// and those of jit_moved taken at B. Timestamps are CLOCK_MONOTONIC, as
// perf record -k 1 stamps its samples. The dump, jit-PID.dump, is written
// in the current directory and mapped executable, so that perf records
// where it is.
//
// Usage: jitreuse [MS1 MS2 MS3]   (default 300 600 200)
#define _GNU_SOURCE
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static FILE *dump;

static uint64_t now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put(const void *p, size_t n) {
  if (fwrite(p, 1, n, dump) != n) {
    perror("jitreuse: writing the jitdump");
    exit(1);
  }
}

static void record_header(uint32_t id, uint32_t size) {
  uint64_t ts = now();
  put(&id, 4);
  put(&size, 4);
  put(&ts, 8);
}

static void code_load(const char *name, void *code, uint64_t size, uint64_t index) {
  uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
  uint64_t addr = (uint64_t)(uintptr_t)code;
  record_header(0, 16 + 8 + 8 * 4 + strlen(name) + 1 + size);
  put(ids, 8);
  put(&addr, 8); // vma
  put(&addr, 8); // code_addr
  put(&size, 8);
  put(&index, 8);
  put(name, strlen(name) + 1);
  put(code, size);
  fflush(dump);
}

static void code_move(void *from, void *to, uint64_t size, uint64_t index) {
  uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
  uint64_t old = (uint64_t)(uintptr_t)from, new = (uint64_t)(uintptr_t)to;
  record_header(1, 16 + 8 + 8 * 5);
  put(ids, 8);
  put(&new, 8); // vma
  put(&old, 8);
  put(&new, 8);
  put(&size, 8);
  put(&index, 8);
  fflush(dump);
}

// spin: mov rax, rdi; dec rax; jnz -5; ret, with pad nops in front so
// that the three functions differ.
static size_t emit(uint8_t *p, int pad) {
  static const uint8_t body[] = {0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};
  memset(p, 0x90, pad);
  memcpy(p + pad, body, sizeof body);
  return pad + sizeof body;
}

static void run(void *code, int ms) {
  void (*fn)(uint64_t) = (void (*)(uint64_t))code;
  uint64_t end = now() + (uint64_t)ms * 1000000u;
  while (now() < end) fn(100000);
}

int main(int argc, char **argv) {
  int ms1 = argc > 1 ? atoi(argv[1]) : 300, ms2 = argc > 2 ? atoi(argv[2]) : 600, ms3 = argc > 3 ? atoi(argv[3]) : 200;
  char path[64];
  snprintf(path, sizeof path, "jit-%d.dump", getpid());
  dump = fopen(path, "w+");
  if (!dump) {
    perror(path);
    return 1;
  }
  long page = sysconf(_SC_PAGESIZE);
  // perf finds the dump through this executable mapping of it.
  if (mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(dump), 0) == MAP_FAILED) {
    perror("jitreuse: mapping the jitdump");
    return 1;
  }
  struct {
    uint32_t magic, version, size, mach, pad, pid;
    uint64_t timestamp, flags;
  } hdr = {0x4A695444, 1, 40, EM_X86_64, 0, (uint32_t)getpid(), now(), 0};
  put(&hdr, sizeof hdr);

  uint8_t *mem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("jitreuse: mapping code memory");
    return 1;
  }
  uint8_t *a = mem, *b = mem + page, *c = mem + 2 * page;

  size_t n = emit(a, 0);
  code_load("jit_first", a, n, 1);
  run(a, ms1);

  n = emit(a, 1); // freed and reused: new code at the same address
  code_load("jit_second", a, n, 2);
  run(a, ms2);

  n = emit(b, 2);
  code_load("jit_moved", b, n, 3);
  run(b, ms3);
  memcpy(c, b, n);
  memset(b, 0xcc, n);
  code_move(b, c, n, 3);
  run(c, ms3);

  fclose(dump);
  return 0;
}
