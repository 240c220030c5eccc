// Package jitenv switches on the perf output of the JIT runtimes a
// recorded command may start, through their environment variables, so
// that their JIT code comes out named with nothing for the user to set.
//
// Enable adds, to the environment the command would run with:
//
//	Node.js  NODE_OPTIONS       --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack
//	JVM      JAVA_TOOL_OPTIONS  -XX:+IgnoreUnrecognizedVMOptions -XX:+UnlockDiagnosticVMOptions
//	                            -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer
//	.NET     DOTNET_PerfMapEnabled=1
//	Mono     MONO_ENV_OPTIONS   --jitmap
//	CPython  PYTHONPERFSUPPORT=1   (3.12 and later; older versions ignore it)
//	Erlang   ERL_AFLAGS         +JPperf true   (OTP 24 and later, with the JIT)
//
// # Always, not only for a recognised command
//
// The switches are added whatever the command is: each variable is read
// only by its own runtime, so they cost nothing to a program that starts
// none, and the runtime that matters is often not the command itself but
// one it starts (a shell script, make, npm, mvn, a test runner). Where a
// switch would make an old runtime refuse to start, Enable guards it: the
// JVM's options start with -XX:+IgnoreUnrecognizedVMOptions (a JDK before
// 17, which has no DumpPerfMapAtExit, would otherwise exit with
// "Unrecognized VM option"); ERL_AFLAGS is set only when the erl on the
// command's PATH is of OTP 24 or later (OTP 23's emulator exits on an
// unknown +J flag) on x86-64 or arm64, where the BEAM has its JIT.
//
// What the runtimes do with them, as seen with the Debian 12 packages:
//
//   - Every JVM prints "Picked up JAVA_TOOL_OPTIONS: ..." on its standard
//     error when it starts, a line the user's program did not print. A
//     misspelled -XX option of the user's own is ignored rather than fatal
//     during the recording (IgnoreUnrecognizedVMOptions). At exit, the
//     JVM writes /tmp/perf-PID.map.
//   - Node.js 20 (V8 11.3) writes jit-PID.dump into its current directory
//     (V8 has no option for another directory; it does not read
//     JITDUMPDIR), and both --perf-prof and --perf-basic-prof turn on V8's
//     --log, which writes an almost empty isolate-0xADDR-PID-v8.log there
//     too. Where that directory is not writable, V8 writes the log to the
//     program's standard output instead, so Enable leaves NODE_OPTIONS
//     alone when the command's directory is not writable. Tidy moves the
//     jitdumps beside the recording and removes the logs afterwards.
//   - OTP 25's +JPperf true writes /tmp/perf-PID.map and /tmp/jit-PID.dump
//     and keeps frame pointers; Mono, .NET and CPython write
//     /tmp/perf-PID.map.
//
// # Node.js: a jitdump, not a perf map
//
// With --perf-prof, V8 writes a jitdump, which jitpprof's perf.data reader
// finds by the file's MMAP record (V8 maps it executable for that
// purpose) and which gives more than a perf map: its time-stamped
// CODE_LOAD and CODE_MOVE records let code whose memory V8 reused be
// named after what was there when each sample was taken (the
// recording's clock must be CLOCK_MONOTONIC, as V8 stamps them; a perf
// map has no times, and the last line covering an address wins);
// --perf-prof-unwinding-info adds the unwinding tables of some of V8's
// code; and DEBUG_INFO records give line tables, though Node 20 writes
// them only for some of its baseline ("^") code (Node's own modules,
// sometimes the script's functions). Both formats name a function with
// the script, line and column where it is defined ("JS:*fib
// /app/work.js:1:13"). --interpreted-frames-native-stack gives
// interpreted functions a frame of their own, so that they are named in
// stacks too. The price is the file in the current directory (about
// 2 MB per process for V8's builtins alone) and V8's slower code logging.
//
// # The user's settings win
//
// Enable adds; it never replaces. A switch the user already gave (in
// the variable, in another variable the runtime reads, or on a runtime's
// own command line when the command is that runtime) is left as the user
// set it, including one that turns the output off (--no-perf-prof,
// -XX:-DumpPerfMapAtExit, PYTHONPERFSUPPORT=0, +JPperf false). Ours are
// put first where the runtime reads the variable in order, so that any
// later setting of the user's overrides them: NODE_OPTIONS,
// JAVA_TOOL_OPTIONS (read before the command line and _JAVA_OPTIONS),
// MONO_ENV_OPTIONS, and ERL_AFLAGS, which erl puts before its command
// line, ERL_FLAGS and ERL_ZFLAGS.
package jitenv
