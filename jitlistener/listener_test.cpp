// listener_test.cpp - end-to-end test of pprof_jit_listener.h, run by
// test.sh: JIT-compile a small bitcode module with MCJIT and with ORC's
// LLJIT, call into it, and check the dumped NAME.elf/NAME.meta pairs.
//
//   listener_test MODULE.bc OUTDIR
//
// The module must define `long jit_square(long)`.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "llvm/ExecutionEngine/ExecutionEngine.h"
#include "llvm/ExecutionEngine/MCJIT.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/DebugObjectManagerPlugin.h"
#include "llvm/ExecutionEngine/Orc/EPCDebugObjectRegistrar.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include "pprof_jit_listener.h"

namespace {

int Failures = 0;

bool hasSuffix(const std::string &S, const std::string &Suffix) {
  return S.size() >= Suffix.size() &&
         S.compare(S.size() - Suffix.size(), Suffix.size(), Suffix) == 0;
}

void fail(const std::string &Msg) {
  std::fprintf(stderr, "FAIL: %s\n", Msg.c_str());
  ++Failures;
}

std::unique_ptr<llvm::Module> load(const char *Path, llvm::LLVMContext &Ctx) {
  llvm::SMDiagnostic Err;
  std::unique_ptr<llvm::Module> M = llvm::parseIRFile(Path, Err, Ctx);
  if (!M) {
    std::fprintf(stderr, "loading %s: %s\n", Path, Err.getMessage().str().c_str());
    std::exit(2);
  }
  return M;
}

// checkDir verifies that Dir holds exactly Want NAME.elf/NAME.meta pairs, no
// temporary files, and that every section in each .meta has the same address
// and size in the .elf, which must be an ET_REL object with an executable
// section whose load address range contains Fn.
void checkDir(const std::string &Dir, size_t Want, uint64_t Fn) {
  std::vector<std::string> Metas;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator I(Dir, EC), E; I != E && !EC;
       I.increment(EC)) {
    const std::string &P = I->path();
    if (hasSuffix(P, ".tmp"))
      fail("temporary file left behind: " + P);
    if (hasSuffix(P, ".meta"))
      Metas.push_back(P);
  }
  if (EC)
    fail("listing " + Dir + ": " + EC.message());
  if (Metas.size() != Want) {
    fail(Dir + ": " + std::to_string(Metas.size()) + " .meta files, want " +
         std::to_string(Want));
    return;
  }
  bool FoundFn = false;
  for (const std::string &Meta : Metas) {
    std::string Elf = Meta.substr(0, Meta.size() - 5) + ".elf";
    auto MetaBuf = llvm::MemoryBuffer::getFile(Meta);
    auto ElfBuf = llvm::MemoryBuffer::getFile(Elf);
    if (!MetaBuf || !ElfBuf) {
      fail("reading " + Meta + " or its .elf");
      continue;
    }
    llvm::Expected<llvm::json::Value> J = llvm::json::parse((*MetaBuf)->getBuffer());
    if (!J) {
      fail(Meta + ": " + llvm::toString(J.takeError()));
      continue;
    }
    auto Obj = llvm::object::ObjectFile::createObjectFile((*ElfBuf)->getMemBufferRef());
    if (!Obj) {
      fail(Elf + ": " + llvm::toString(Obj.takeError()));
      continue;
    }
    auto *ELF = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(Obj->get());
    if (ELF == nullptr || ELF->getELFFile().getHeader().e_type != llvm::ELF::ET_REL) {
      fail(Elf + ": not an ELF64 ET_REL object");
      continue;
    }
    const llvm::json::Array *Sections =
        J->getAsObject() ? J->getAsObject()->getArray("sections") : nullptr;
    if (Sections == nullptr || Sections->empty()) {
      fail(Meta + ": no \"sections\" array");
      continue;
    }
    for (const llvm::json::Value &V : *Sections) {
      const llvm::json::Object *S = V.getAsObject();
      if (S == nullptr) {
        fail(Meta + ": section entry is not an object");
        continue;
      }
      auto Name = S->getString("name");
      auto Start = S->getInteger("start");
      auto Size = S->getInteger("size");
      if (!Name || !Start || !Size || *Start == 0) {
        fail(Meta + ": malformed section entry");
        continue;
      }
      bool Matched = false;
      for (const llvm::object::SectionRef &Sec : ELF->sections()) {
        llvm::Expected<llvm::StringRef> SecName = Sec.getName();
        if (!SecName) {
          llvm::consumeError(SecName.takeError());
          continue;
        }
        if (*SecName != *Name || Sec.getAddress() != uint64_t(*Start) ||
            Sec.getSize() != uint64_t(*Size))
          continue;
        Matched = true;
        // Code is in .text, .text.NAME, or .ltext (LLVM 19's JIT default,
        // the large code model): go by the flag, not the name.
        if (Sec.isText() && uint64_t(*Start) <= Fn &&
            Fn < uint64_t(*Start) + uint64_t(*Size))
          FoundFn = true;
      }
      if (!Matched)
        fail(Meta + ": section " + Name->str() + " not found in the .elf with "
             "the same address and size");
    }
  }
  if (!FoundFn)
    fail(Dir + ": no executable section contains jit_square");
}

void testMCJIT(const char *Bitcode, const std::string &Dir) {
  llvm::LLVMContext Ctx;
  std::string Err;
  std::unique_ptr<llvm::ExecutionEngine> EE(
      llvm::EngineBuilder(load(Bitcode, Ctx))
          .setEngineKind(llvm::EngineKind::JIT)
          .setErrorStr(&Err)
          .setMCJITMemoryManager(std::make_unique<llvm::SectionMemoryManager>())
          .create());
  if (!EE) {
    fail("MCJIT: " + Err);
    return;
  }
  pprof_jit::DumpListener Listener(Dir);
  EE->RegisterJITEventListener(&Listener);
  EE->finalizeObject();
  uint64_t Addr = EE->getFunctionAddress("jit_square");
  auto Square = reinterpret_cast<long (*)(long)>(Addr);
  if (Square == nullptr || Square(7) != 49)
    fail("MCJIT: jit_square(7) != 49");
  if (Listener.written() != 1)
    fail("MCJIT: written() = " + std::to_string(Listener.written()) + ", want 1");
  EE->UnregisterJITEventListener(&Listener);
  checkDir(Dir, 1, Addr);
}

// LLJIT::lookup returns a JITEvaluatedSymbol up to LLVM 16 and an
// ExecutorAddr later; a template keeps the branch for the other one
// uninstantiated.
template <typename Sym> uint64_t addressOf(const Sym &S) {
  if constexpr (std::is_same_v<Sym, llvm::JITEvaluatedSymbol>)
    return S.getAddress();
  else
    return S.getValue();
}

void testORC(const char *Bitcode, const std::string &Dir) {
  pprof_jit::DumpListener Listener(Dir);
  auto J = llvm::orc::LLJITBuilder()
               .setObjectLinkingLayerCreator(
                   [&](llvm::orc::ExecutionSession &ES, const llvm::Triple &) {
                     return pprof_jit::makeDumpingObjectLayer(ES, Listener);
                   })
               .create();
  if (!J) {
    fail("LLJIT: " + llvm::toString(J.takeError()));
    return;
  }
  auto Ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> M = load(Bitcode, *Ctx);
  if (llvm::Error E = (*J)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(M), std::move(Ctx)))) {
    fail("LLJIT addIRModule: " + llvm::toString(std::move(E)));
    return;
  }
  auto Sym = (*J)->lookup("jit_square");
  if (!Sym) {
    fail("LLJIT lookup: " + llvm::toString(Sym.takeError()));
    return;
  }
  uint64_t Addr = addressOf(*Sym);
  auto Square = reinterpret_cast<long (*)(long)>(Addr);
  if (Square(9) != 81)
    fail("LLJIT: jit_square(9) != 81");
  if (Listener.written() != 1)
    fail("LLJIT: written() = " + std::to_string(Listener.written()) + ", want 1");
  checkDir(Dir, 1, Addr);
}

// testJITLink runs LLJIT on JITLink's ObjectLinkingLayer with the dump
// plugin: the object JITLink linked is dumped from its debug object.
void testJITLink(const char *Bitcode, const std::string &Dir) {
  pprof_jit::DumpListener Listener(Dir);
  auto J = llvm::orc::LLJITBuilder()
               .setObjectLinkingLayerCreator(
                   [&](llvm::orc::ExecutionSession &ES, const llvm::Triple &)
                       -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                     auto L = std::make_unique<llvm::orc::ObjectLinkingLayer>(ES);
                     L->addPlugin(pprof_jit::makeDumpPlugin(ES, Listener));
                     return L;
                   })
               .create();
  if (!J) {
    fail("LLJIT+JITLink: " + llvm::toString(J.takeError()));
    return;
  }
  auto Ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> M = load(Bitcode, *Ctx);
  if (llvm::Error E = (*J)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(M), std::move(Ctx)))) {
    fail("LLJIT+JITLink addIRModule: " + llvm::toString(std::move(E)));
    return;
  }
  auto Sym = (*J)->lookup("jit_square");
  if (!Sym) {
    fail("LLJIT+JITLink lookup: " + llvm::toString(Sym.takeError()));
    return;
  }
  uint64_t Addr = addressOf(*Sym);
  auto Square = reinterpret_cast<long (*)(long)>(Addr);
  if (Square(11) != 121)
    fail("LLJIT+JITLink: jit_square(11) != 121");
  if (Listener.written() != 1)
    fail("LLJIT+JITLink: written() = " + std::to_string(Listener.written()) + ", want 1");
  checkDir(Dir, 1, Addr);
}

// testJITLinkGDB runs LLJIT on JITLink with debugger support (LLVM's
// DebugObjectManagerPlugin registering with the GDB JIT interface, as
// LLJIT's enableDebuggerSupport sets up from LLVM 17 and as one does by
// hand on 14 to 16), then has jitsnap copy the objects out of this very
// process: the path for ORC hosts nobody can modify.
void testJITLinkGDB(const char *Bitcode, const std::string &Dir, const char *Jitsnap) {
  auto J = llvm::orc::LLJITBuilder()
               .setObjectLinkingLayerCreator(
                   [&](llvm::orc::ExecutionSession &ES, const llvm::Triple &)
                       -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                     auto L = std::make_unique<llvm::orc::ObjectLinkingLayer>(ES);
                     auto Registrar = llvm::orc::createJITLoaderGDBRegistrar(ES);
                     if (!Registrar)
                       return Registrar.takeError();
                     L->addPlugin(std::make_unique<llvm::orc::DebugObjectManagerPlugin>(
                         ES, std::move(*Registrar)));
                     return L;
                   })
               .create();
  if (!J) {
    fail("LLJIT+JITLink+GDB: " + llvm::toString(J.takeError()));
    return;
  }
  auto Ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> M = load(Bitcode, *Ctx);
  if (llvm::Error E = (*J)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(M), std::move(Ctx)))) {
    fail("LLJIT+JITLink+GDB addIRModule: " + llvm::toString(std::move(E)));
    return;
  }
  auto Sym = (*J)->lookup("jit_square");
  if (!Sym) {
    fail("LLJIT+JITLink+GDB lookup: " + llvm::toString(Sym.takeError()));
    return;
  }
  uint64_t Addr = addressOf(*Sym);
  auto Square = reinterpret_cast<long (*)(long)>(Addr);
  if (Square(12) != 144)
    fail("LLJIT+JITLink+GDB: jit_square(12) != 144");
  std::string Cmd = std::string(Jitsnap) + " -pid " + std::to_string(getpid()) +
                    " -o " + Dir + " >/dev/null";
  if (int RC = std::system(Cmd.c_str()); RC != 0) {
    fail("jitsnap on this process: exit status " + std::to_string(RC));
    return;
  }
  checkDir(Dir, 1, Addr);
}

void testDefaultDir(const std::string &Dir) {
  setenv("PPROF_JIT_DUMP_DIR", Dir.c_str(), 1);
  if (pprof_jit::DumpListener().dir() != Dir)
    fail("DumpListener() ignores $PPROF_JIT_DUMP_DIR");
  if (pprof_jit::DumpListener("explicit").dir() != "explicit")
    fail("DumpListener(dir) does not take precedence over the environment");
  unsetenv("PPROF_JIT_DUMP_DIR");
  if (pprof_jit::DumpListener().dir() != ".")
    fail("DumpListener() without $PPROF_JIT_DUMP_DIR is not \".\"");
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 3 && Argc != 4) {
    std::fprintf(stderr, "usage: listener_test MODULE.bc OUTDIR [JITSNAP]\n");
    return 2;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string Out = Argv[2];
  testMCJIT(Argv[1], Out + "/mcjit");
  testORC(Argv[1], Out + "/orc");
  testJITLink(Argv[1], Out + "/jitlink");
  if (Argc == 4)
    testJITLinkGDB(Argv[1], Out + "/jitlink-gdb", Argv[3]);
  testDefaultDir(Out + "/env");
  if (Failures != 0)
    return 1;
  std::printf("listener_test: ok\n");
  return 0;
}
