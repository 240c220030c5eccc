// Package profile is jitpprof's extended-mapping stage and its model of
// JIT sources: it makes the addresses of JIT-compiled code in a pprof
// profile point at the JIT objects they came from, and names them.
//
// A JIT object is read from one of three kinds of JIT source ([Source],
// [Sources]), each in a file of its own here:
//
//   - an LLVM dump (llvmdump.go): NAME.elf, the relocatable (ET_REL)
//     object whose section headers carry the run-time load address of
//     each section, as LLVM builds it for debuggers (see jitlistener/ and
//     jitsnap), and optionally NAME.meta, a JSON list of the same
//     sections:
//
//     {"sections":[{"name":".text._Z3foov","start":140675611394048,"size":1047},...]}
//
//   - a perf map (perfmap.go), perf-PID.map, the text list of code
//     ranges and names that V8, the JVM, .NET, CPython and others write
//     for Linux perf;
//
//   - a jitdump (jitdump.go), jit-PID.dump, perf's binary format with
//     names, line tables, code bytes and when each piece of code was
//     loaded or moved.
//
// A [Cache] holds the JIT objects of one run: each file is opened,
// validated and indexed once, and its [Object] answers for its code from
// then on, to whoever asks: the stage (the code ranges it claims), a
// symbolizer ([Object.FrameSource]), the unwinder of perf.data stacks
// ([Object.CallFrameInfo]), code views ([Object.Code]) and the replay of
// timed samples in code that moved ([ObjectSet.CodeAt]).
//
// The stage works in two steps:
//
//  1. [Cache.Load] (or [Load]) finds the JIT objects of directories and
//     files and indexes the code ranges every object claims in an
//     [ObjectSet], sorted once so that [ObjectSet.Lookup] is a binary
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
// The stage itself names nothing: [Result.JIT] lists the objects and
// locations to symbolize, whose frames each object's FrameSource gives
// (jitpprof's driver writes them into the profile as pprof's own
// symbolizer would; see the Cache example).
package profile
