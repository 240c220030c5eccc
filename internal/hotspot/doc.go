// Package hotspot runs diagnostic commands in a running HotSpot JVM
// (OpenJDK's), as jcmd does, through the JVM's attach mechanism; in
// particular Compiler.perfmap (JDK 17 and later), which has the JVM write
// /tmp/perf-PID.map, the perf map that names its JIT-compiled code.
//
// # The attach mechanism on Linux
//
// A JVM listens for attach requests on a Unix socket, /tmp/.java_pidPID
// (PID as the JVM sees itself: inside a container, its PID there; /tmp
// is the JVM's, outside reached as /proc/PID/root/tmp), which it creates
// on demand: when it receives SIGQUIT and finds a file .attach_pidPID in
// its working directory or in /tmp, owned by its effective user or root,
// it starts its attach listener instead of printing a thread dump. A
// request is the strings "1" (the protocol version), the command and three
// arguments, each ended by a NUL byte: "1\x00jcmd\x00Compiler.perfmap\x00\x00\x00".
// The reply is the command's status as a decimal number and a newline,
// then its output, then the end of the stream. The listener serves a
// client whose effective uid and gid, as SO_PEERCRED gives them, are the
// JVM's own (JDK 11 and later accept root's too; JDK 8 does not), and
// creates the socket with mode 0600, owned by the JVM's effective user.
//
// Attach does what jcmd does (HotSpot's attachListener_linux.cpp and
// jdk.attach's VirtualMachineImpl, read, not copied), with more care
// before the signal, because SIGQUIT's default action ends a process:
//
//   - SIGQUIT is sent only to a process that maps libjvm.so and catches
//     SIGQUIT (its SigCgt in /proc/PID/status): not to another program,
//     nor to a JVM run with -Xrs (-XX:+ReduceSignalUsage), which would die
//     of it (such a JVM opens its socket at startup instead).
//   - Not to a JVM started with -XX:+DisableAttachMechanism on its command
//     line or in JAVA_TOOL_OPTIONS, _JAVA_OPTIONS or JDK_JAVA_OPTIONS: it
//     would print a thread dump on its standard output and never listen.
//   - As root, to another user's JVM (or one in a user namespace, where
//     root is not root), the trigger file is given to the JVM's user and
//     group, and the connection is made from a thread switched to the
//     JVM's effective uid and gid (setresuid/setresgid on that thread
//     only, as Linux keeps credentials per thread; switched back at once),
//     so that the JVM finds its own credentials on both, as jattach does;
//     jcmd of JDK 17 relies on the JVM accepting root.
//
// The socket's owner and mode are checked before connecting, as jcmd
// does, so that a socket some other user put in the JVM's /tmp is not
// trusted. The attach listener stays in the JVM afterwards, as after
// jcmd.
//
// Only Linux is supported.
package hotspot
