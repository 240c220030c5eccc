// Package jitsnap copies the JIT-compiled objects of a live process to
// disk, through the GDB JIT interface, so that pprof can symbolize the
// process's JIT code without any change to the process.
//
// LLVM's MCJIT (and ORC with RuntimeDyld) registers every object it
// loads with GDBRegistrationListener, which keeps a doubly linked list in
// the process:
//
//	struct jit_descriptor {              // __jit_debug_descriptor
//		uint32_t version;                // 1
//		uint32_t action_flag;
//		struct jit_code_entry *relevant_entry;
//		struct jit_code_entry *first_entry;
//	};
//	struct jit_code_entry {
//		struct jit_code_entry *next, *prev;
//		const char *symfile_addr;        // an ELF image
//		uint64_t symfile_size;
//	};
//
// Each symfile is the object as a relocatable (ET_REL) ELF whose section
// headers carry the sections' load addresses: what the mapping stage of
// this module reads as NAME.elf (see profile.Load and the format in
// doc/jit-hosts.md).
//
// Snapshot finds __jit_debug_descriptor in the symbol tables of the
// files the process has mapped (with Debian's LLVM, in the .dynsym of
// libLLVM-14.so.1), places it in the process through the program
// headers, walks the list with process_vm_readv(2) and writes each valid
// object as NAME.elf plus NAME.meta, exactly as the jitlistener dump
// listener would. The target is never stopped: the list is read twice
// per attempt and kept only when both reads agree, and every pointer
// and size read from it is bounds-checked. Each object is checked with
// internal/elfrel, the reader the mapping stage opens NAME.elf with, so
// what jitsnap writes is what pprof can read; a rejected object is
// skipped with elfrel's typed error in its ObjectError.
//
// pprof -record takes the snapshot of a command it launched just before
// it exits, holding it there with ptrace (PTRACE_O_TRACEEXIT; package
// record), for a JIT host whose objects are gone once it has exited; a
// running process is snapshotted with Snapshot.
//
// The pieces are exported for reuse and tests: Collect walks a list in
// any Memory, WriteObject and Meta produce the files; /proc/PID/maps is
// read by package procfs (procfs.ParseMaps).
//
// Only 64-bit Linux processes are supported.
package jitsnap
