// Package e2e holds jitpprof's end-to-end tests: the pprof command,
// built once per test run, on real profiles and recordings of real
// programs (LLVM MCJIT and ORC hosts, Node.js, OpenJDK, Mono, Erlang,
// PHP, Go and C programs under gperftools and Linux perf), its output
// compared with independent tools (upstream pprof and go tool pprof,
// llvm-symbolizer, perf report and perf script, objdump, Chromium).
//
// The helpers they share are in helpers_test.go (running pprof, the
// fixtures' runs, measured runs) and perfreport_test.go (recording with
// perf, and comparing pprof's shares with perf report's). With -short the
// package runs nothing, unless CI is "true": `go test -short ./...` runs
// the unit tests of every package, ./test.sh these too.
package e2e
