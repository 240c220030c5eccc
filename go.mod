module github.com/jitpprof/pprof

go 1.26.0

require (
	github.com/chzyer/readline v1.5.1
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	golang.org/x/sys v0.49.0
)

require (
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	golang.org/x/arch v0.32.0
)
