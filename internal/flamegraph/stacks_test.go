package flamegraph

import (
	"strconv"
	"strings"

	"github.com/jitpprof/pprof/internal/folded"
)

// stacksFrom builds stacks from folded lines "a;b;c value"; a frame
// name may end in "@jit" for JIT code or "@inl" for an inlined frame.
// Frames with the same text are the same *Frame.
func stacksFrom(lines ...string) []folded.Stack {
	frames := map[string]*folded.Frame{}
	var out []folded.Stack
	for _, l := range lines {
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseInt(l[i+1:], 10, 64)
		if err != nil {
			panic(err)
		}
		var s folded.Stack
		for name := range strings.SplitSeq(l[:i], ";") {
			f := frames[name]
			if f == nil {
				f = &folded.Frame{Name: name, Object: "app"}
				if n, ok := strings.CutSuffix(name, "@jit"); ok {
					f.Name, f.JIT, f.Object = n, true, "module.elf"
				}
				if n, ok := strings.CutSuffix(name, "@inl"); ok {
					f.Name, f.Inlined = n, true
				}
				if i := strings.LastIndex(f.Name, "::"); i > 0 {
					f.Package = f.Name[:i]
				} else {
					f.Package = f.Object
				}
				frames[name] = f
			}
			s.Frames = append(s.Frames, f)
		}
		s.Value = v
		out = append(out, s)
	}
	return out
}

// sampleStacks is a small heap-like profile with native, inlined and
// JIT frames and names that need escaping.
func sampleStacks() []folded.Stack {
	return stacksFrom(
		"main;app::Server::run();app::Server::handle(Request&);std::vector<int, std::allocator<int> >::push_back(int const&);malloc 3145728",
		"main;app::Server::run();app::Server::handle(Request&);app::parse(std::string_view)@inl 1048576",
		"main;app::Server::run();app::Server::handle(Request&) 524288",
		"main;app::Server::run();jit::query_42(Row*)@jit;jit::filter<int>(Row*)@jit 2097152",
		"main;app::Server::run();jit::query_42(Row*)@jit;malloc 786432",
		"main;app::Server::run();jit::query_42(Row*)@jit 262144",
		"main;app::Cache::refresh();std::map<K, V>::operator[](K const&) 1572864",
		"main;app::Cache::refresh();tiny 1",
		"main;a&b<c>\"d\" 409600",
		"main 131072",
	)
}
