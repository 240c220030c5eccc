module github.com/jitpprof/pprof

go 1.26.0

require (
	github.com/chzyer/readline v1.5.1
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)
