// pprof_jit_listener.h - dump JIT-compiled objects so jitpprof can symbolize
// them. Header-only, C++17, LLVM 14 or newer.
//
// Why: code linked by MCJIT/ORC lives in anonymous memory, so a CPU or heap
// profile of the host has addresses that no file on disk describes. This
// listener writes, for every object the JIT loads, the same load-address
// patched ELF that LLVM hands to GDB, plus a small JSON index of where each
// section was loaded. jitpprof matches sample addresses against those
// sections (see doc/jit-hosts.md in the jitpprof repository).
//
// Usage, MCJIT:
//
//   #include "pprof_jit_listener.h"
//
//   static pprof_jit::DumpListener Dumper;  // dir: $PPROF_JIT_DUMP_DIR or "."
//   ...
//   std::unique_ptr<llvm::ExecutionEngine> EE(EngineBuilder(...).create());
//   EE->RegisterJITEventListener(&Dumper);   // before code is generated
//   EE->finalizeObject();
//
// Usage, ORC with RuntimeDyld (RTDyldObjectLinkingLayer):
//
//   pprof_jit::registerWithLayer(Layer, Dumper);
//
// Usage, ORC with JITLink (ObjectLinkingLayer, LLJIT's default on x86-64
// since LLVM 17), which calls no JITEventListener: add the plugin, which
// writes the debug object JITLink builds for debuggers:
//
//   ObjLinkingLayer.addPlugin(pprof_jit::makeDumpPlugin(ES, Dumper));
//
// or, for LLJIT, build the object layer yourself:
//
//   auto J = llvm::orc::LLJITBuilder()
//       .setObjectLinkingLayerCreator(
//           [&](llvm::orc::ExecutionSession &ES, const llvm::Triple &) {
//             return pprof_jit::makeDumpingObjectLayer(ES, Dumper);
//           })
//       .create();
//
// The listener must outlive the engine/layer it is registered with.
//
// Output, for each loaded object, in the dump directory:
//
//   NAME.elf   the debug object: an ET_REL ELF whose section headers carry
//              the load address in sh_addr (symbol values stay
//              section-relative, DWARF and .rela.debug_* are kept).
//   NAME.meta  {"sections":[{"name":".text","start":140675611394048,
//              "size":1047634}, ...]} - every section with a non-zero load
//              address, in decimal.
//
// NAME is "<ident>-<hash>": ident is the object's source file name (its
// STT_FILE symbol, else the object buffer name, else "jit") reduced to
// [A-Za-z0-9._-]; hash is the 64-bit xxHash of the debug object in hex.
// The debug object contains the load addresses, so two different loads never
// share a name, and loading the identical object at the identical address
// again (a deterministic re-run) maps to the same files, which are then left
// as they are.
//
// Each file is written to a temporary name and renamed into place, .elf
// before .meta, so a reader that sees NAME.meta can rely on NAME.elf being
// complete. Errors are reported on stderr and never abort the host.
// Notifications are serialized with a mutex, so one listener may serve
// several engines on several threads.

#ifndef PPROF_JIT_LISTENER_H
#define PPROF_JIT_LISTENER_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include <unistd.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/RuntimeDyld.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#ifndef PPROF_JIT_NO_ORC
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/DebugObjectManagerPlugin.h"
#include "llvm/ExecutionEngine/Orc/EPCDebugObjectRegistrar.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#endif

namespace pprof_jit {

// DumpListener writes NAME.elf and NAME.meta for every object a JIT loads.
class DumpListener : public llvm::JITEventListener {
public:
  // Dir is the dump directory. Empty means $PPROF_JIT_DUMP_DIR, or the current
  // directory if that is unset or empty. The directory is created on the first
  // dump if it does not exist.
  explicit DumpListener(std::string Dir = std::string())
      : Dir_(chooseDir(std::move(Dir))) {}

  DumpListener(const DumpListener &) = delete;
  DumpListener &operator=(const DumpListener &) = delete;

  // The directory the files go to.
  const std::string &dir() const { return Dir_; }

  // Number of objects written so far (deduplicated objects not counted).
  unsigned written() const {
    std::lock_guard<std::mutex> Lock(Mu_);
    return Written_;
  }

  void notifyObjectLoaded(ObjectKey, const llvm::object::ObjectFile &Obj,
                          const llvm::RuntimeDyld::LoadedObjectInfo &L) override {
    std::lock_guard<std::mutex> Lock(Mu_);
    dump(Obj, L);
  }

  // dumpDebugObject writes Image, a debug object whose section headers
  // already carry the load addresses (JITLink's, see DumpPlugin), with the
  // .meta built from those headers.
  void dumpDebugObject(llvm::StringRef Image) {
    std::lock_guard<std::mutex> Lock(Mu_);
    auto Obj = llvm::object::ObjectFile::createObjectFile(
        llvm::MemoryBufferRef(Image, "jitlink-debug-object"));
    if (!Obj) {
      warn("reading a JITLink debug object: " + llvm::toString(Obj.takeError()));
      return;
    }
    std::string Meta;
    llvm::raw_string_ostream OS(Meta);
    OS << "{\"sections\":[";
    bool First = true;
    for (const llvm::object::SectionRef &Sec : (*Obj)->sections()) {
      uint64_t Start = Sec.getAddress();
      if (Start == 0)
        continue;
      llvm::Expected<llvm::StringRef> Name = Sec.getName();
      if (!Name) {
        warn("reading a section name: " + llvm::toString(Name.takeError()));
        return;
      }
      OS << (First ? "" : ",") << "\n{\"name\":";
      writeJSONString(OS, *Name);
      OS << ",\"start\":" << Start << ",\"size\":" << Sec.getSize() << "}";
      First = false;
    }
    OS << "\n]}\n";
    OS.flush();
    write(**Obj, Image, Meta);
  }

  // Nothing to do: the files describe where the object was; a profile taken
  // before the object was freed still needs them.
  void notifyFreeingObject(ObjectKey) override {}

private:
  static std::string chooseDir(std::string Dir) {
    if (!Dir.empty())
      return Dir;
    const char *Env = std::getenv("PPROF_JIT_DUMP_DIR");
    if (Env != nullptr && *Env != '\0')
      return Env;
    return ".";
  }

  void warn(const llvm::Twine &Msg) {
    llvm::errs() << "pprof_jit: " << Msg << "\n";
  }

  void dump(const llvm::object::ObjectFile &Obj,
            const llvm::RuntimeDyld::LoadedObjectInfo &L) {
    llvm::object::OwningBinary<llvm::object::ObjectFile> Debug =
        L.getObjectForDebug(Obj);
    const llvm::object::ObjectFile *DebugObj = Debug.getBinary();
    if (DebugObj == nullptr) {
      // RuntimeDyld only builds debug objects for ELF and Mach-O.
      warn("no debug object for " + Obj.getFileName() + "; not dumped");
      return;
    }
    llvm::StringRef Image = DebugObj->getData();

    std::string Meta;
    if (!buildMeta(Obj, L, Meta))
      return;
    write(Obj, Image, Meta);
  }

  // write stores Image and Meta as NAME.elf and NAME.meta, NAME from Obj
  // (see the file comment).
  void write(const llvm::object::ObjectFile &Obj, llvm::StringRef Image,
             const std::string &Meta) {
    char Hash[17];
    std::snprintf(Hash, sizeof Hash, "%016llx",
                  static_cast<unsigned long long>(llvm::xxHash64(Image)));
    std::string Base = sanitize(identify(Obj)) + "-" + Hash;
    if (std::error_code EC = llvm::sys::fs::create_directories(Dir_)) {
      warn("cannot create " + Dir_ + ": " + EC.message());
      return;
    }
    std::string ElfPath = join(Base + ".elf");
    std::string MetaPath = join(Base + ".meta");
    if (llvm::sys::fs::exists(ElfPath) && llvm::sys::fs::exists(MetaPath))
      return; // Same content hash: this exact object was dumped before.

    // .elf first: a reader keys on the .meta.
    if (writeAtomically(ElfPath, Image) &&
        writeAtomically(MetaPath, Meta))
      ++Written_;
  }

  // identify returns a human-readable stem for the object's file names.
  static std::string identify(const llvm::object::ObjectFile &Obj) {
    for (const llvm::object::SymbolRef &Sym : Obj.symbols()) {
      llvm::Expected<llvm::object::SymbolRef::Type> Type = Sym.getType();
      if (!Type) {
        llvm::consumeError(Type.takeError());
        continue;
      }
      if (*Type != llvm::object::SymbolRef::ST_File)
        continue;
      llvm::Expected<llvm::StringRef> Name = Sym.getName();
      if (!Name) {
        llvm::consumeError(Name.takeError());
        continue;
      }
      if (!Name->empty())
        return llvm::sys::path::filename(*Name).str();
    }
    // MCJIT names its buffers "<in-memory object>"; ORC uses the module id.
    llvm::StringRef File = Obj.getFileName();
    if (!File.empty() && File.front() != '<')
      return llvm::sys::path::filename(File).str();
    return "jit";
  }

  // sanitize keeps [A-Za-z0-9._-], maps everything else to '_', and bounds
  // the length so NAME stays well under NAME_MAX.
  static std::string sanitize(llvm::StringRef In) {
    std::string Out;
    for (char C : In.take_front(96)) {
      bool Keep = (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
                  (C >= '0' && C <= '9') || C == '.' || C == '_' || C == '-';
      Out.push_back(Keep ? C : '_');
    }
    if (Out.empty() || Out[0] == '.')
      Out.insert(0, "jit");
    return Out;
  }

  // buildMeta lists the object's sections that were given a load address.
  bool buildMeta(const llvm::object::ObjectFile &Obj,
                 const llvm::RuntimeDyld::LoadedObjectInfo &L,
                 std::string &Out) {
    llvm::raw_string_ostream OS(Out);
    OS << "{\"sections\":[";
    bool First = true;
    for (const llvm::object::SectionRef &Sec : Obj.sections()) {
      uint64_t Start = L.getSectionLoadAddress(Sec);
      if (Start == 0)
        continue;
      llvm::Expected<llvm::StringRef> Name = Sec.getName();
      if (!Name) {
        warn("reading a section name: " + llvm::toString(Name.takeError()));
        return false;
      }
      OS << (First ? "" : ",") << "\n{\"name\":";
      writeJSONString(OS, *Name);
      OS << ",\"start\":" << Start << ",\"size\":" << Sec.getSize() << "}";
      First = false;
    }
    OS << "\n]}\n";
    OS.flush();
    return true;
  }

  static void writeJSONString(llvm::raw_ostream &OS, llvm::StringRef S) {
    static const char Hex[] = "0123456789abcdef";
    OS << '"';
    for (unsigned char C : S) {
      if (C == '"' || C == '\\')
        OS << '\\' << C;
      else if (C < 0x20)
        OS << "\\u00" << Hex[C >> 4] << Hex[C & 15];
      else
        OS << C;
    }
    OS << '"';
  }

  std::string join(const std::string &File) const {
    llvm::SmallString<256> P(Dir_);
    llvm::sys::path::append(P, File);
    return std::string(P.str());
  }

  // writeAtomically writes Data to Path via Path.<pid>.<n>.tmp and rename(2),
  // so concurrent readers and other processes dumping into the same
  // directory never see a partial file.
  bool writeAtomically(const std::string &Path, llvm::StringRef Data) {
    std::string Tmp = Path + "." + std::to_string(::getpid()) + "." +
                      std::to_string(++TmpSeq_) + ".tmp";
    {
      std::error_code EC;
      llvm::raw_fd_ostream OS(Tmp, EC, llvm::sys::fs::OF_None);
      if (EC) {
        warn("cannot create " + Tmp + ": " + EC.message());
        return false;
      }
      OS.write(Data.data(), Data.size());
      OS.close();
      if (OS.has_error()) {
        warn("writing " + Tmp + ": " + OS.error().message());
        OS.clear_error();
        llvm::sys::fs::remove(Tmp);
        return false;
      }
    }
    if (std::error_code EC = llvm::sys::fs::rename(Tmp, Path)) {
      warn("renaming " + Tmp + " to " + Path + ": " + EC.message());
      llvm::sys::fs::remove(Tmp);
      return false;
    }
    return true;
  }

  const std::string Dir_;
  mutable std::mutex Mu_;
  unsigned Written_ = 0; // guarded by Mu_
  unsigned TmpSeq_ = 0;  // guarded by Mu_
};

#ifndef PPROF_JIT_NO_ORC
// registerWithLayer makes Layer report every object it links to Listener.
// Only RuntimeDyld-based layers produce JITEventListener notifications.
inline void registerWithLayer(llvm::orc::RTDyldObjectLinkingLayer &Layer,
                              DumpListener &Listener) {
  Layer.registerJITEventListener(Listener);
}

// makeDumpingObjectLayer returns an RTDyldObjectLinkingLayer backed by
// SectionMemoryManager with Listener registered, in the shape LLJITBuilder's
// setObjectLinkingLayerCreator expects.
inline std::unique_ptr<llvm::orc::ObjectLayer>
makeDumpingObjectLayer(llvm::orc::ExecutionSession &ES,
                       DumpListener &Listener) {
  // The memory-manager factory's parameter list changed across LLVM releases
  // (none in LLVM 14, the object buffer later); a variadic lambda fits both.
  auto Layer = std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
      ES, [](const auto &...) {
        return std::make_unique<llvm::SectionMemoryManager>();
      });
  registerWithLayer(*Layer, Listener);
  return Layer;
}
// DumpRegistrar receives the debug objects JITLink's
// DebugObjectManagerPlugin builds (the object with each section's load
// address in its header, copied into the executor's memory: this process,
// for an in-process JIT) and writes them with Listener, then hands them to
// Next, if any (the GDB registrar, to keep debuggers and jitsnap working).
class DumpRegistrar : public llvm::orc::DebugObjectRegistrar {
public:
  DumpRegistrar(DumpListener &Listener,
                std::unique_ptr<llvm::orc::DebugObjectRegistrar> Next = nullptr)
      : Listener_(Listener), Next_(std::move(Next)) {}

#if LLVM_VERSION_MAJOR >= 17
  llvm::Error registerDebugObject(llvm::orc::ExecutorAddrRange TargetMem,
                                  bool AutoRegisterCode) override {
    dumpRange(TargetMem);
    return Next_ ? Next_->registerDebugObject(TargetMem, AutoRegisterCode)
                 : llvm::Error::success();
  }
#else
  llvm::Error registerDebugObject(llvm::orc::ExecutorAddrRange TargetMem) override {
    dumpRange(TargetMem);
    return Next_ ? Next_->registerDebugObject(TargetMem) : llvm::Error::success();
  }
#endif

private:
  void dumpRange(llvm::orc::ExecutorAddrRange R) {
    Listener_.dumpDebugObject(llvm::StringRef(
        R.Start.toPtr<const char *>(), static_cast<size_t>(R.End - R.Start)));
  }

  DumpListener &Listener_;
  std::unique_ptr<llvm::orc::DebugObjectRegistrar> Next_;
};

// makeDumpPlugin returns the plugin to add to a JITLink ObjectLinkingLayer
// (LLJIT's default object layer on x86-64 since LLVM 17) so that every
// object it links is written by Listener: JITLink calls no
// JITEventListener. Next, if given, also receives each debug object (pass
// the GDB registrar to keep debugger support). The JIT must run in this
// process.
inline std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>
makeDumpPlugin(llvm::orc::ExecutionSession &ES, DumpListener &Listener,
               std::unique_ptr<llvm::orc::DebugObjectRegistrar> Next = nullptr) {
  return std::make_unique<llvm::orc::DebugObjectManagerPlugin>(
      ES, std::make_unique<DumpRegistrar>(Listener, std::move(Next)));
}
#endif // PPROF_JIT_NO_ORC

} // namespace pprof_jit

#endif // PPROF_JIT_LISTENER_H
