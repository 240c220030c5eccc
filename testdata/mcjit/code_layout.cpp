// code_layout.cpp - see code_layout.h.
#include "code_layout.h"

#include <link.h>
#include <sys/mman.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace fixture {

void die(const std::string &Msg) {
  std::fprintf(stderr, "jit_host: %s\n", Msg.c_str());
  std::exit(1);
}

std::string errnoText(const char *What) {
  return std::string(What) + ": " + std::strerror(errno);
}

std::vector<MapsEntry> readMaps() {
  std::vector<MapsEntry> Out;
  std::ifstream In("/proc/self/maps");
  std::string Line;
  while (std::getline(In, Line)) {
    MapsEntry E;
    char Perms[8] = {}, Dev[16] = {};
    unsigned long long Start, End, Off, Inode;
    int PathAt = 0;
    if (std::sscanf(Line.c_str(), "%llx-%llx %7s %llx %15s %llu %n", &Start,
                    &End, Perms, &Off, Dev, &Inode, &PathAt) < 6)
      continue;
    E.Start = Start;
    E.End = End;
    E.Perms = Perms;
    E.Offset = Off;
    E.Inode = Inode;
    if (PathAt > 0)
      E.Path = Line.substr(PathAt);
    Out.push_back(E);
  }
  return Out;
}

LeafLayout findLeaf() {
  LeafLayout L;
  dl_iterate_phdr(
      [](dl_phdr_info *Info, size_t, void *Data) -> int {
        const char *Name = Info->dlpi_name;
        size_t Len = std::strlen(Name);
        if (Len < 10 || std::strcmp(Name + Len - 10, "libleaf.so") != 0)
          return 0;
        auto *Out = static_cast<LeafLayout *>(Data);
        uintptr_t Page = pageSize();
        for (int I = 0; I < Info->dlpi_phnum; I++) {
          const ElfW(Phdr) &P = Info->dlpi_phdr[I];
          if (P.p_type != PT_LOAD)
            continue;
          uintptr_t Start = Info->dlpi_addr + P.p_vaddr;
          uintptr_t End = (Start + P.p_memsz + Page - 1) & ~(Page - 1);
          if ((P.p_flags & PF_X) && Out->TextStart == 0)
            Out->TextStart = Start & ~(Page - 1);
          if (End > Out->End)
            Out->End = End;
        }
        return 1;
      },
      &L);
  if (L.TextStart == 0)
    die("libleaf.so is not loaded or has no executable segment");
  return L;
}

void reserveFixed(uintptr_t At, size_t Len, int Prot, const char *What) {
  void *P = mmap(reinterpret_cast<void *>(At), Len, Prot,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                     MAP_FIXED_NOREPLACE,
                 -1, 0);
  if (P == MAP_FAILED)
    die(errnoText((std::string("reserving the ") + What +
                   " (is something already mapped there?)")
                      .c_str()));
  if (reinterpret_cast<uintptr_t>(P) != At) // pre-4.17 kernels ignore the flag
    die(std::string("the kernel placed the ") + What +
        " elsewhere; MAP_FIXED_NOREPLACE unsupported?");
}

namespace {

std::string describe(const MapsEntry *E) {
  if (E == nullptr)
    return "nothing";
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%" PRIxPTR "-%" PRIxPTR " %s ", E->Start,
                E->End, E->Perms.c_str());
  return Buf + (E->Path.empty() ? std::string("(anonymous)") : E->Path);
}

bool isLeaf(const MapsEntry *E) {
  return E != nullptr && E->Path.size() >= 10 &&
         E->Path.compare(E->Path.size() - 10, 10, "libleaf.so") == 0;
}

bool isAnonExec(const MapsEntry *E, uintptr_t Lo, uintptr_t Hi) {
  return E != nullptr && E->Perms == "r-xp" && E->Inode == 0 &&
         E->Path.empty() && E->Start == Lo && E->End == Hi;
}

} // namespace

void verifyLayout(const FixtureMemoryManager &M) {
  const CodeArena &Low = M.low(), &High = M.high();
  if (Low.execLo() == Low.execHi() || High.execLo() == High.execHi())
    die("no JIT code was placed below and above libleaf.so; did the bitcode "
        "change?");
  std::vector<MapsEntry> Maps = readMaps();
  const MapsEntry *Jit = nullptr, *Leaf = nullptr, *Above = nullptr;
  for (const MapsEntry &E : Maps) {
    if (E.End == Low.execHi())
      Jit = &E;
    if (E.Start == Low.execHi())
      Leaf = &E;
    if (E.Start == High.execLo())
      Above = &E;
  }
  if (!isLeaf(Leaf) || Leaf->Perms != "r-xp" ||
      !isAnonExec(Jit, Low.execLo(), Low.execHi()))
    die("JIT code is not adjacent below libleaf.so's r-xp mapping: found " +
        describe(Jit) + " followed by " + describe(Leaf));
  if (!isAnonExec(Above, High.execLo(), High.execHi()))
    die("JIT code above libleaf.so is not one anonymous r-xp mapping: found " +
        describe(Above));
  std::fprintf(stderr, "jit_host: layout: %s | %s ... %s\n",
               describe(Jit).c_str(), describe(Leaf).c_str(),
               describe(Above).c_str());
}

} // namespace fixture
