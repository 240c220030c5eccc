// code_layout.h - where jit_host puts JIT code: right below and right above
// libleaf.so. See FixtureMemoryManager and jit_host.cpp.
#ifndef CODE_LAYOUT_H
#define CODE_LAYOUT_H

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/ExecutionEngine/RTDyldMemoryManager.h"
#include "llvm/Support/Memory.h"

namespace fixture {

// die prints "jit_host: MSG" and exits with status 1.
[[noreturn]] void die(const std::string &Msg);

// errnoText returns "WHAT: strerror(errno)".
std::string errnoText(const char *What);

// One line of /proc/self/maps.
struct MapsEntry {
  uintptr_t Start = 0, End = 0;
  std::string Perms, Path;
  uint64_t Offset = 0, Inode = 0;
};

std::vector<MapsEntry> readMaps();

inline uintptr_t pageSize() {
  return static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
}

// Where libleaf.so was loaded, from its program headers: the start of its
// executable segment and the end of its last segment, page-aligned.
struct LeafLayout {
  uintptr_t TextStart = 0, End = 0;
};

// findLeaf locates libleaf.so in this process or dies.
LeafLayout findLeaf();

// reserveFixed maps [At, At+Len) anonymous with MAP_FIXED_NOREPLACE, or dies
// if anything is mapped there already.
void reserveFixed(uintptr_t At, size_t Len, int Prot, const char *What);

// ---------------------------------------------------------------------------
// Memory manager.
//
// CodeArena is a fixed PROT_NONE reservation from which code is carved,
// either downwards from its top or upwards from its base. Pages become
// read-write when first handed out and read-execute at finalization, so the
// pages in use always form one anonymous r-xp mapping at the growing end;
// the untouched rest stays "---p", which pprof ignores like every
// non-executable mapping.
class CodeArena {
public:
  CodeArena(uintptr_t Base, size_t Size, bool Down, const char *What)
      : Page(pageSize()), Base(Base), Limit(Base + Size), Down(Down) {
    reserveFixed(Base, Size, PROT_NONE, What);
    Cur = PendLo = PendHi = ExecLo = ExecHi = Down ? Limit : Base;
  }

  uint8_t *allocate(uintptr_t Size, unsigned Alignment) {
    uintptr_t Align = Alignment < 16 ? 16 : Alignment;
    uintptr_t Lo, Hi;
    if (Down) {
      if (Size > Cur - Base)
        return nullptr;
      Lo = (Cur - Size) & ~(Align - 1);
      if (Lo < Base)
        return nullptr;
      Hi = Lo + Size;
      Cur = Lo;
    } else {
      Lo = (Cur + Align - 1) & ~(Align - 1);
      if (Lo > Limit || Size > Limit - Lo)
        return nullptr;
      Hi = Lo + Size;
      Cur = Hi;
    }
    makeWritable(Lo & ~(Page - 1), (Hi + Page - 1) & ~(Page - 1));
    return reinterpret_cast<uint8_t *>(Lo);
  }

  // Turns the pages written since the last call read-execute. Later
  // allocations start on a fresh page, since these are no longer writable.
  bool finalize(std::string *ErrMsg) {
    if (PendLo == PendHi)
      return false;
    llvm::sys::Memory::InvalidateInstructionCache(
        reinterpret_cast<void *>(PendLo), PendHi - PendLo);
    if (mprotect(reinterpret_cast<void *>(PendLo), PendHi - PendLo,
                 PROT_READ | PROT_EXEC) != 0) {
      if (ErrMsg != nullptr)
        *ErrMsg = errnoText("mprotect JIT code read-execute");
      return true;
    }
    ExecLo = std::min(ExecLo, PendLo);
    ExecHi = std::max(ExecHi, PendHi);
    Cur = Down ? ExecLo : ExecHi;
    PendLo = PendHi = Cur;
    return false;
  }

  // The executable part, [Lo, Hi).
  uintptr_t execLo() const { return ExecLo; }
  uintptr_t execHi() const { return ExecHi; }

private:
  void makeWritable(uintptr_t Lo, uintptr_t Hi) {
    // Only pages not yet writable: [Lo, PendLo) going down, [PendHi, Hi)
    // going up.
    uintptr_t From = Down ? Lo : std::max(Lo, PendHi);
    uintptr_t To = Down ? std::min(Hi, PendLo) : Hi;
    if (From < To &&
        mprotect(reinterpret_cast<void *>(From), To - From,
                 PROT_READ | PROT_WRITE) != 0)
      die(errnoText("mprotect JIT code read-write"));
    if (Down)
      PendLo = std::min(PendLo, Lo);
    else
      PendHi = std::max(PendHi, Hi);
  }

  const uintptr_t Page, Base, Limit;
  const bool Down;
  uintptr_t Cur, PendLo, PendHi, ExecLo, ExecHi;
};

// FixtureMemoryManager places JIT code around libleaf.so (addresses grow to
// the right):
//
//   data (rw-p) | ---p ... LOW (r-xp) | libleaf r-xp | r--p | rw-p | HIGH (r-xp) ... ---p
//                                    ^ touch ^
//
// LOW grows down from libleaf's text, so it ends exactly where libleaf's
// first executable mapping starts: upstream pprof's adjacent-mapping merge
// fires on every run. HIGH starts right after libleaf's last mapping and
// takes the code sections named .text.jit_tree* (jit_host emits workload
// part 2 with function sections), so one JIT object has code on both sides
// of a library and its sections are not one contiguous range. Data sections
// go to a read-write arena below LOW. All addresses are fixed, so a re-run
// loads the code at the same addresses.
class FixtureMemoryManager : public llvm::RTDyldMemoryManager {
public:
  static constexpr size_t kArena = 16 << 20;

  explicit FixtureMemoryManager(const LeafLayout &Leaf)
      : Low(Leaf.TextStart - kArena, kArena, /*Down=*/true,
            "JIT code region below libleaf.so"),
        High(Leaf.End, kArena, /*Down=*/false,
             "JIT code region above libleaf.so"),
        DataBase(Leaf.TextStart - 2 * kArena) {
    reserveFixed(DataBase, kArena, PROT_READ | PROT_WRITE, "JIT data region");
    DataCur = DataBase;
  }

  uint8_t *allocateCodeSection(uintptr_t Size, unsigned Alignment, unsigned,
                               llvm::StringRef Name) override {
    // .text.NAME, or .ltext.NAME with the large code model (LLVM 18+).
    // (StringRef::startswith became starts_with in LLVM 16+: compare.)
    auto Prefix = [&](llvm::StringRef P) { return Name.substr(0, P.size()) == P; };
    bool Above = Prefix(".text.jit_tree") || Prefix(".ltext.jit_tree");
    return (Above ? High : Low).allocate(Size, Alignment);
  }

  uint8_t *allocateDataSection(uintptr_t Size, unsigned Alignment, unsigned,
                               llvm::StringRef, bool) override {
    // Read-only data stays writable: nothing here depends on it faulting.
    uintptr_t Align = Alignment < 16 ? 16 : Alignment;
    uintptr_t P = (DataCur + Align - 1) & ~(Align - 1);
    if (P > DataBase + kArena || Size > DataBase + kArena - P)
      return nullptr; // RuntimeDyld reports "Unable to allocate memory".
    DataCur = P + Size;
    return reinterpret_cast<uint8_t *>(P);
  }

  bool finalizeMemory(std::string *ErrMsg) override {
    return Low.finalize(ErrMsg) || High.finalize(ErrMsg);
  }

  // The ExecutionEngine is destroyed only at exit; mappings stay until then.

  const CodeArena &low() const { return Low; }
  const CodeArena &high() const { return High; }

private:
  CodeArena Low, High;
  uintptr_t DataBase, DataCur;
};

// verifyLayout dies unless /proc/self/maps shows M's LOW code as an anonymous
// r-xp mapping ending exactly where libleaf.so's r-xp mapping starts, and
// its HIGH code as its own anonymous r-xp mapping.
void verifyLayout(const FixtureMemoryManager &M);

} // namespace fixture

#endif // CODE_LAYOUT_H
