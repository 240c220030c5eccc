// Package profile is jitpprof's extended-mapping stage: it makes the
// addresses of JIT-compiled code in a pprof profile point at the JIT
// objects they came from, so that they can be symbolized.
//
// A JIT object is read from one of three kinds of JIT source ([Source],
// [Sources]):
//
//   - an LLVM dump: NAME.elf, the relocatable (ET_REL) object whose
//     section headers carry the run-time load address of each section, as
//     LLVM builds it for debuggers (see jitlistener/ and jitsnap), and
//     optionally NAME.meta, a JSON list of the same sections:
//
//     {"sections":[{"name":".text._Z3foov","start":140675611394048,"size":1047},...]}
//
//   - a perf map, perf-PID.map, the text list of code ranges and names
//     that V8, the JVM, .NET, CPython and others write for Linux perf;
//
//   - a jitdump, jit-PID.dump, perf's binary format with names, line
//     tables and code bytes.
//
// The stage works in two steps:
//
//  1. [Load] finds the JIT objects of one or more directories and reads
//     each into an [ObjectSet]: the code ranges every object claims,
//     sorted once into an index that answers [ObjectSet.Lookup] by binary
//     search. Overlaps are resolved and reported once.
//  2. [Extend] runs on a freshly parsed profile ([Parse] returns a legacy
//     profile's memory map): the mappings of a legacy profile (gperftools
//     heap, CPU, contention, ...) are rebuilt from the profile's own copy
//     of /proc/PID/maps, without upstream pprof's merge of an anonymous
//     region into the neighbouring file mapping (which names JIT code
//     after the next shared library and moves that library's base); then
//     every unsymbolized location whose address lies in a JIT object's
//     code, and in no file mapping of the profile, is attached to one
//     mapping per object file: Start 0, Limit ^uint64(0), Offset 0 and
//     File the object's absolute path ([IsJITMapping]), so that a
//     symbolizer reads each object once and sees absolute addresses.
//
// Nothing here symbolizes but [Source.Open]: the mappings produced are
// what jitpprof's in-process symbolizer and pprof's object tool expect.
package profile
