// Package profile is jitpprof's extended-mapping stage: it makes the
// addresses of JIT-compiled code in a pprof profile point at the JIT
// objects they came from, so that they can be symbolized.
//
// A JIT host (LLVM MCJIT or ORC, for example) dumps every object it loads
// as NAME.elf, the relocatable (ET_REL) object whose section headers carry
// the run-time load address of each section, and optionally NAME.meta, a
// JSON list of the same sections:
//
//	{"sections":[{"name":".text._Z3foov","start":140675611394048,"size":1047},...]}
//
// The stage works in three steps, each usable on its own:
//
//  1. [Load] reads the objects of one or more directories into an
//     [ObjectSet]: the executable sections of every object, sorted once
//     into an index that answers [ObjectSet.Lookup] by binary search.
//  2. [RebuildMappings] replaces the mappings of a legacy profile
//     (gperftools heap, CPU, contention, ...) by mappings built from the
//     profile's own copy of /proc/PID/maps, without upstream pprof's merge
//     of an anonymous region into the neighbouring file mapping, which
//     names JIT code after the next shared library and moves that
//     library's base.
//  3. [Attach] points every unsymbolized location whose address lies in a
//     JIT section at one mapping per object file: Start 0, Limit
//     ^uint64(0), Offset 0 and File the object's absolute path, so that a
//     symbolizer reads each object once and sees absolute addresses.
//
// [Extend] runs steps 2 and 3 on a freshly parsed profile.
//
// Nothing here symbolizes: the mappings produced are what pprof's own
// symbolizer (llvm-symbolizer, addr2line) and jitpprof's in-process one
// expect.
package profile
