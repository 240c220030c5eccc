// jit_host.cpp - JIT-compiles workload.c with MCJIT, profiles it with
// gperftools and dumps the JIT objects with pprof_jit::DumpListener. It
// produces the fixtures in testdata/mcjit (see generate.sh, PROVENANCE.md).
//
//   jit_host [--out DIR] [--seconds N] [--threads N] [--no-dump] [--hold]
//            [--jit MODE] PART1.bc PART2.bc
//
// Writes DIR/cpu.prof, DIR/heap.prof, DIR/heap_sample.prof, DIR/maps.txt and,
// unless --no-dump, DIR/jit/NAME.{elf,meta}.
//
// MODE is the JIT the same workload runs under, for the LLVM matrix of
// ./test.sh (profiles symbolized like llvm-symbolizer, in every mode):
//   mcjit        MCJIT with pprof_jit::DumpListener and the fixture's code
//                layout below (the default; the checked-in fixture)
//   orc-rtdyld   ORC's LLJIT on RuntimeDyld, the listener registered with
//                pprof_jit::makeDumpingObjectLayer
//   orc-jitlink  LLJIT on JITLink's ObjectLinkingLayer with
//                pprof_jit::makeDumpPlugin
//   orc-gdb      LLJIT on JITLink with debugger support (LLVM's
//                DebugObjectManagerPlugin and GDB registrar), the objects
//                copied out of this process by jitsnap ($JIT_HOST_JITSNAP)
//   orc-perf     LLJIT on JITLink with LLVM's own perf support (ORC's
//                PerfSupportPlugin, LLVM 18 and later): a jitdump with
//                line and unwinding records under $JITDUMPDIR/.debug/jit/,
//                no dumped objects
// The ORC modes leave code where LLVM's memory managers put it.
//
// The point of the fixture is to reproduce two things upstream pprof gets
// wrong (doc: JIT-PROFILING.md section 2):
//
//  1. JIT code in an anonymous r-xp mapping that ENDS exactly where the r-xp
//     mapping of a shared library (libleaf.so) STARTS. Upstream pprof merges
//     such touching mappings into one named after the library. We force the
//     layout on every run: libleaf.so is linked with a fixed preferred base
//     (generate.sh: -Ttext-segment) and -z noseparate-code (so its first
//     mapping is its r-xp text at file offset 0), which leaves the address
//     space below it free; FixtureMemoryManager (code_layout.h) reserves it
//     and hands out code from its top end downwards. Some code also goes
//     right above the library, so one JIT object's sections straddle it.
//     The host checks /proc/self/maps and fails if the layout was not
//     achieved.
//
//  2. Stacks that run through JIT frames, in the CPU profile, the heap
//     profile and the heap sample. gperftools' unwinder (libunwind, see
//     kDefaults) knows no unwind info for JIT code and falls back to the
//     frame-pointer chain there, so all JIT code keeps frame pointers: clang
//     -fno-omit-frame-pointer puts "frame-pointer"="all" on every function
//     in the bitcode, and LLVM's -enable-shrink-wrap=false keeps the frame
//     set-up at function entry rather than on some paths only. Without
//     frame pointers every stack ends at its first JIT frame.

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <gperftools/heap-profiler.h>
#include <gperftools/malloc_extension.h>
#include <gperftools/profiler.h>

#include "llvm/ExecutionEngine/ExecutionEngine.h"
#include "llvm/ExecutionEngine/MCJIT.h"
#include "llvm/ExecutionEngine/Orc/DebugObjectManagerPlugin.h"
#include "llvm/ExecutionEngine/Orc/EPCDebugObjectRegistrar.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#if LLVM_VERSION_MAJOR >= 18
#include "llvm/ExecutionEngine/Orc/Debugging/DebugInfoSupport.h"
#include "llvm/ExecutionEngine/Orc/Debugging/PerfSupportPlugin.h"
#include "llvm/ExecutionEngine/Orc/TargetProcess/JITLoaderPerf.h"
#endif
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include "../../jitlistener/pprof_jit_listener.h"
#include "code_layout.h"
#include "leaf.h"

namespace {

using fixture::die;
using fixture::errnoText;

// ---------------------------------------------------------------------------
// Environment. gperftools reads its settings from the environment in static
// initializers, before main runs, so the host sets its defaults and re-executes
// itself once. Values already in the environment win.

const char *const kDefaults[][2] = {
    // The unwinder for all three profiles. Of the methods Debian's
    // gperftools 2.10 offers, only libunwind works here:
    //  - generic_fp walks %rbp. The CPU profile is fine, but the heap
    //    profiler starts inside tcmalloc, which is built without frame
    //    pointers, so it never finds the allocator frame it has to skip
    //    ("Hooked allocator frame not found") and heap stacks are empty.
    //  - libgcc (_Unwind_Backtrace) does see JIT frames, through the
    //    .eh_frame MCJIT registers with __register_frame, but deadlocks: a
    //    thread inside tcmalloc's sampler holds libgcc's unwinder mutex when
    //    SIGPROF arrives; its handler spins on the profiler's lock, held by
    //    another thread whose handler waits for that unwinder mutex.
    //  - libunwind (Debian's default, named here to be explicit) uses DWARF
    //    for tcmalloc, libc and the host, masks signals around its own
    //    locks, and where it has no unwind info - JIT code, whose .eh_frame
    //    went to libgcc's registry, not libunwind's - falls back to the
    //    %rbp chain. Hence frame pointers in all JIT code.
    {"TCMALLOC_STACKTRACE_METHOD", "libunwind"},
    // SIGPROF rate. The kernel delivers CPU-time itimer signals at most once
    // per tick per running thread (CONFIG_HZ, often 250), so asking for more
    // only inflates the period the profile claims; 250 matches common HZ.
    {"CPUPROFILE_FREQUENCY", "250"},
    // Mean bytes between heap samples for GetHeapSample (default 512 KiB).
    {"TCMALLOC_SAMPLE_PARAMETER", "131072"},
    // Keep HeapProfilerStart from writing interval dumps on its own.
    {"HEAP_PROFILE_ALLOCATION_INTERVAL", "0"},
    {"HEAP_PROFILE_INUSE_INTERVAL", "0"},
};

void configureEnvironment(char **Argv) {
  if (std::getenv("JIT_HOST_ENV_SET") != nullptr)
    return;
  for (const auto &KV : kDefaults)
    setenv(KV[0], KV[1], /*overwrite=*/0);
  setenv("JIT_HOST_ENV_SET", "1", 1);
  execv("/proc/self/exe", Argv);
  die(errnoText("re-executing /proc/self/exe"));
}

// ---------------------------------------------------------------------------
// Workload.

using RoundFn = uint64_t (*)(unsigned);

double threadCPUSeconds() {
  timespec TS;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &TS);
  return TS.tv_sec + TS.tv_nsec / 1e9;
}

// runCPUPhase runs CPURound on Threads threads, the calling thread being one
// of them, until each has used Seconds of CPU time. Thread T runs rounds T,
// T+Threads, ... so the work per round is fixed; only the number of rounds
// depends on the machine. The main thread works too because the CPU-time
// itimer behind ProfilerStart signals the process, and the kernel may pick a
// thread that is merely waiting in join(), recording a useless sample.
unsigned runCPUPhase(RoundFn CPURound, double Seconds, unsigned Threads) {
  std::atomic<unsigned> Rounds{0};
  auto Work = [=, &Rounds](unsigned T) {
    double Deadline = threadCPUSeconds() + Seconds;
    for (unsigned R = T; threadCPUSeconds() < Deadline; R += Threads) {
      CPURound(R);
      Rounds++;
    }
  };
  std::vector<std::thread> Workers;
  for (unsigned T = 1; T < Threads; T++)
    Workers.emplace_back(Work, T);
  Work(0);
  for (std::thread &W : Workers)
    W.join();
  return Rounds;
}

void writeFile(const std::string &Path, const char *Data, size_t Len) {
  std::string Tmp = Path + ".tmp";
  FILE *F = std::fopen(Tmp.c_str(), "wb");
  if (F == nullptr)
    die(errnoText(("creating " + Tmp).c_str()));
  bool OK = std::fwrite(Data, 1, Len, F) == Len;
  OK = std::fclose(F) == 0 && OK;
  if (!OK || std::rename(Tmp.c_str(), Path.c_str()) != 0)
    die(errnoText(("writing " + Path).c_str()));
}

void copyMaps(const std::string &Path) {
  std::ifstream In("/proc/self/maps", std::ios::binary);
  std::string All((std::istreambuf_iterator<char>(In)),
                  std::istreambuf_iterator<char>());
  writeFile(Path, All.data(), All.size());
}

// holdUntilEOFOrSIGTERM prints "READY <pid>" and blocks until stdin reaches
// end of file or SIGTERM arrives. SIGTERM is blocked before READY is printed
// and only unblocked inside ppoll, so a SIGTERM sent right after READY
// cannot kill the process before it is ready to exit cleanly.
volatile sig_atomic_t GotSIGTERM = 0;

void holdUntilEOFOrSIGTERM() {
  struct sigaction SA;
  std::memset(&SA, 0, sizeof SA);
  SA.sa_handler = [](int) { GotSIGTERM = 1; };
  sigemptyset(&SA.sa_mask);
  sigaction(SIGTERM, &SA, nullptr);
  sigset_t Term, Unblocked;
  sigemptyset(&Term);
  sigaddset(&Term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &Term, &Unblocked);
  sigdelset(&Unblocked, SIGTERM);

  std::printf("READY %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  for (;;) {
    pollfd P = {STDIN_FILENO, POLLIN, 0};
    int N = ppoll(&P, 1, nullptr, &Unblocked);
    if (GotSIGTERM)
      return;
    if (N < 0) {
      if (errno == EINTR)
        continue;
      die(errnoText("waiting on stdin"));
    }
    if (P.revents & POLLNVAL)
      return; // stdin closed: same as end of file
    char Buf[4096];
    ssize_t R = read(STDIN_FILENO, Buf, sizeof Buf);
    if (R == 0 || (R < 0 && errno != EINTR && errno != EAGAIN))
      return;
  }
}

struct Options {
  std::string Out = ".";
  double Seconds = 4;
  unsigned Threads = 2;
  unsigned HeapRounds = 512;
  bool Dump = true;
  bool Hold = false;
  std::string JIT = "mcjit";
  std::vector<std::string> Bitcode;
};

Options parseArgs(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; I++) {
    std::string A = Argv[I];
    auto Value = [&]() -> std::string {
      if (I + 1 >= Argc)
        die(A + " needs a value");
      return Argv[++I];
    };
    if (A == "--out")
      O.Out = Value();
    else if (A == "--seconds")
      O.Seconds = std::atof(Value().c_str());
    else if (A == "--threads")
      O.Threads = static_cast<unsigned>(std::atoi(Value().c_str()));
    else if (A == "--no-dump")
      O.Dump = false;
    else if (A == "--hold")
      O.Hold = true;
    else if (A == "--jit")
      O.JIT = Value();
    else if (A.size() > 3 && A.compare(A.size() - 3, 3, ".bc") == 0)
      O.Bitcode.push_back(A);
    else
      die("usage: jit_host [--out DIR] [--seconds N] [--threads N] "
          "[--no-dump] [--hold] [--jit MODE] PART1.bc PART2.bc (bad argument " + A + ")");
  }
  if (O.JIT != "mcjit" && O.JIT != "orc-rtdyld" && O.JIT != "orc-jitlink" && O.JIT != "orc-gdb" &&
      O.JIT != "orc-perf")
    die("--jit " + O.JIT + ": want mcjit, orc-rtdyld, orc-jitlink, orc-gdb or orc-perf");
  if (O.Bitcode.empty())
    die("no bitcode files given");
  if (O.Seconds <= 0 || O.Threads == 0)
    die("--seconds and --threads must be positive");
  return O;
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

// compileORC JIT-compiles the modules with LLJIT in the given ORC mode and
// returns the workload's entry points. The LLJIT stays alive for the run.
std::pair<RoundFn, RoundFn> compileORC(const Options &Opt,
                                       std::vector<std::unique_ptr<llvm::Module>> Modules,
                                       std::unique_ptr<llvm::LLVMContext> Ctx,
                                       pprof_jit::DumpListener *Dumper) {
  const std::string Mode = Opt.JIT;
  auto J = llvm::orc::LLJITBuilder()
               .setObjectLinkingLayerCreator(
                   [&](llvm::orc::ExecutionSession &ES, const llvm::Triple &)
                       -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                     if (Mode == "orc-rtdyld") {
                       if (Dumper == nullptr)
                         die("--jit orc-rtdyld needs the dump listener (no --no-dump)");
                       return pprof_jit::makeDumpingObjectLayer(ES, *Dumper);
                     }
                     auto L = std::make_unique<llvm::orc::ObjectLinkingLayer>(ES);
                     if (Mode == "orc-jitlink") {
                       if (Dumper == nullptr)
                         die("--jit orc-jitlink needs the dump listener (no --no-dump)");
                       L->addPlugin(pprof_jit::makeDumpPlugin(ES, *Dumper));
                     } else if (Mode == "orc-perf") {
#if LLVM_VERSION_MAJOR >= 18
                       // As llvm-jitlink -perf-support: the debug sections
                       // kept for the plugin's line records (JITLink drops
                       // them otherwise), then the plugin, its registration
                       // functions this process's own (LLVM's
                       // OrcTargetProcess): no symbol lookup needed.
                       L->addPlugin(std::make_unique<llvm::orc::DebugInfoPreservationPlugin>());
                       L->addPlugin(std::make_unique<llvm::orc::PerfSupportPlugin>(
                           ES.getExecutorProcessControl(),
                           llvm::orc::ExecutorAddr::fromPtr(&llvm_orc_registerJITLoaderPerfStart),
                           llvm::orc::ExecutorAddr::fromPtr(&llvm_orc_registerJITLoaderPerfEnd),
                           llvm::orc::ExecutorAddr::fromPtr(&llvm_orc_registerJITLoaderPerfImpl),
                           /*EmitDebugInfo=*/true, /*EmitUnwindInfo=*/true));
#else
                       die("--jit orc-perf needs LLVM 18 or later (ORC's PerfSupportPlugin)");
#endif
                     } else {
                       auto Registrar = llvm::orc::createJITLoaderGDBRegistrar(ES);
                       if (!Registrar)
                         return Registrar.takeError();
                       L->addPlugin(std::make_unique<llvm::orc::DebugObjectManagerPlugin>(
                           ES, std::move(*Registrar)));
                     }
                     return std::unique_ptr<llvm::orc::ObjectLayer>(std::move(L));
                   })
               .create();
  if (!J)
    die("creating the LLJIT: " + llvm::toString(J.takeError()));
  // The JIT code calls malloc, libleaf and the like in this process.
  auto Gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*J)->getDataLayout().getGlobalPrefix());
  if (!Gen)
    die("process symbols: " + llvm::toString(Gen.takeError()));
  (*J)->getMainJITDylib().addGenerator(std::move(*Gen));
  llvm::orc::ThreadSafeContext TSCtx(std::move(Ctx));
  for (auto &M : Modules)
    if (llvm::Error E = (*J)->addIRModule(llvm::orc::ThreadSafeModule(std::move(M), TSCtx)))
      die("adding a module: " + llvm::toString(std::move(E)));
  auto Lookup = [&](const char *Name) {
    auto Sym = (*J)->lookup(Name);
    if (!Sym)
      die(std::string("looking up ") + Name + ": " + llvm::toString(Sym.takeError()));
    return reinterpret_cast<RoundFn>(addressOf(*Sym));
  };
  RoundFn CPURound = Lookup("jit_cpu_round"), HeapRound = Lookup("jit_heap_round");
  if (Mode == "orc-gdb") {
    const char *Jitsnap = std::getenv("JIT_HOST_JITSNAP");
    if (Jitsnap == nullptr)
      die("--jit orc-gdb needs $JIT_HOST_JITSNAP, the jitsnap to copy the objects with");
    std::string Cmd = std::string(Jitsnap) + " -pid " + std::to_string(getpid()) +
                      " -o " + Opt.Out + "/jit >&2";
    if (int RC = std::system(Cmd.c_str()); RC != 0)
      die("jitsnap on this process: exit status " + std::to_string(RC));
  }
  J->release(); // kept for the whole run; the process ends with _Exit
  return {CPURound, HeapRound};
}

} // namespace

int main(int Argc, char **Argv) {
  configureEnvironment(Argv);
  Options Opt = parseArgs(Argc, Argv);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Keep the frame set-up in the entry block of every function, so %rbp is
  // a valid frame pointer wherever a sample lands after the prologue.
  const char *LLVMArgs[] = {"jit_host", "-enable-shrink-wrap=false"};
  llvm::cl::ParseCommandLineOptions(2, LLVMArgs, "jit_host\n");
  // Let the JIT resolve malloc, libleaf's functions and so on in-process.
  llvm::sys::DynamicLibrary::LoadLibraryPermanently(nullptr);

  auto CtxOwner = std::make_unique<llvm::LLVMContext>();
  llvm::LLVMContext &Ctx = *CtxOwner;
  std::vector<std::unique_ptr<llvm::Module>> Modules;
  for (const std::string &Path : Opt.Bitcode) {
    llvm::SMDiagnostic Err;
    std::unique_ptr<llvm::Module> M = llvm::parseIRFile(Path, Err, Ctx);
    if (!M)
      die("loading " + Path + ": " + Err.getMessage().str());
    Modules.push_back(std::move(M));
  }
  RoundFn CPURound = nullptr, HeapRound = nullptr;
  std::unique_ptr<pprof_jit::DumpListener> Dumper;
  if (Opt.JIT != "mcjit") {
    if (Opt.Dump && Opt.JIT != "orc-gdb" && Opt.JIT != "orc-perf")
      Dumper = std::make_unique<pprof_jit::DumpListener>(Opt.Out + "/jit");
    std::tie(CPURound, HeapRound) =
        compileORC(Opt, std::move(Modules), std::move(CtxOwner), Dumper.get());
  } else {
  std::vector<llvm::Module *> Order;
  for (const auto &M : Modules)
    Order.push_back(M.get());

  auto MemMgr =
      std::make_unique<fixture::FixtureMemoryManager>(fixture::findLeaf());
  fixture::FixtureMemoryManager *Mem = MemMgr.get();

  std::string Err;
  std::unique_ptr<llvm::ExecutionEngine> EE(
      llvm::EngineBuilder(std::move(Modules[0]))
          .setEngineKind(llvm::EngineKind::JIT)
          .setErrorStr(&Err)
#if LLVM_VERSION_MAJOR >= 18
          .setOptLevel(llvm::CodeGenOptLevel::Default)
#else
          .setOptLevel(llvm::CodeGenOpt::Default)
#endif
          .setMCJITMemoryManager(std::move(MemMgr))
          .create());
  if (!EE)
    die("creating the MCJIT engine: " + Err);
  for (size_t I = 1; I < Modules.size(); I++)
    EE->addModule(std::move(Modules[I]));

  // MCJIT registers LLVM's GDB registration listener on its own; ours is
  // the optional second one.
  if (Opt.Dump) {
    Dumper = std::make_unique<pprof_jit::DumpListener>(Opt.Out + "/jit");
    EE->RegisterJITEventListener(Dumper.get());
  }
  // LLVM's own perf listener, when asked (generate.sh does): it writes
  // jit-PID.dump under $JITDUMPDIR/.debug/jit/, the same code as the
  // dumped objects, for the tests of jitpprof's jitdump reader.
  if (std::getenv("JIT_HOST_PERF") != nullptr) {
    llvm::JITEventListener *Perf =
        llvm::JITEventListener::createPerfJITEventListener();
    if (Perf == nullptr)
      die("JIT_HOST_PERF: this LLVM was built without perf support");
    EE->RegisterJITEventListener(Perf);
  }
  // Code generation, one object per module, in command-line order. The
  // first object keeps all code in one .text; the others get a section per
  // function (.text.jit_sort_records, ...), as C++ JIT code usually has.
  // Function sections are a code-generation option, not part of the bitcode,
  // so it is switched on the engine's TargetMachine between modules.
  llvm::TargetMachine *TM = EE->getTargetMachine();
  for (size_t I = 0; I < Order.size(); I++) {
    TM->Options.FunctionSections = I > 0;
    EE->generateCodeForModule(Order[I]);
  }
  EE->finalizeObject();

  CPURound = reinterpret_cast<RoundFn>(EE->getFunctionAddress("jit_cpu_round"));
  HeapRound = reinterpret_cast<RoundFn>(EE->getFunctionAddress("jit_heap_round"));
  if (CPURound == nullptr || HeapRound == nullptr)
    die("jit_cpu_round or jit_heap_round not found in the bitcode");
  fixture::verifyLayout(*Mem);
  EE.release(); // kept for the whole run; the process ends with _Exit
  }
  if (Dumper)
    std::fprintf(stderr, "jit_host: dumped %u JIT objects to %s\n",
                 Dumper->written(), Dumper->dir().c_str());

  // CPU profile.
  std::string CPUPath = Opt.Out + "/cpu.prof";
  if (!ProfilerStart(CPUPath.c_str()))
    die("ProfilerStart(" + CPUPath + ") failed");
  unsigned Rounds = runCPUPhase(CPURound, Opt.Seconds, Opt.Threads);
  ProfilerStop();
  std::fprintf(stderr, "jit_host: cpu phase: %u rounds on %u threads\n",
               Rounds, Opt.Threads);

  // Heap profile (HeapProfilerStart: every allocation, four values per
  // sample). HeapRound frees and reallocates in a ring of slots, so a fixed
  // number of rounds leaves a fixed in-use set.
  std::string HeapPrefix = Opt.Out + "/.heapprofile";
  HeapProfilerStart(HeapPrefix.c_str());
  uint64_t Sink = 0;
  for (unsigned R = 0; R < Opt.HeapRounds; R++)
    Sink += HeapRound(R);
  char *Heap = GetHeapProfile();
  HeapProfilerStop();
  if (Heap == nullptr)
    die("GetHeapProfile returned nothing");
  writeFile(Opt.Out + "/heap.prof", Heap, std::strlen(Heap));
  std::free(Heap);

  // Heap sample (tcmalloc's sampled live allocations, two values per
  // sample).
  std::string Sample;
  MallocExtension::instance()->GetHeapSample(&Sample);
  writeFile(Opt.Out + "/heap_sample.prof", Sample.data(), Sample.size());

  copyMaps(Opt.Out + "/maps.txt");
  std::fprintf(stderr, "jit_host: done (checksum %016" PRIx64 ")\n", Sink);

  if (Opt.Hold)
    holdUntilEOFOrSIGTERM();
  // Skip static destructors and the engine's teardown: nothing left to save.
  std::fflush(stdout);
  std::_Exit(0);
}
