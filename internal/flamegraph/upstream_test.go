package flamegraph

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/folded"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestUpstreamProfiles draws upstream pprof's own profiles, every
// sample type, through folded.Stacks, as the driver does.
func TestUpstreamProfiles(t *testing.T) {
	dir := filepath.Join(testenv.UpstreamDir(t), "profile", "testdata")
	for _, name := range []string{"cppbench.heap", "cppbench.cpu", "go.crc32.cpu", "java.heap"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, st := range p.SampleType {
			t.Run(name+"/"+st.Type, func(t *testing.T) {
				stacks, err := folded.Stacks(p, folded.Options{SampleIndex: i})
				if err != nil {
					t.Fatal(err)
				}
				_, doc := render(t, stacks, Options{Title: name, SampleType: st.Type, Unit: st.Unit})
				if len(doc.group("frames").Rects) < 2 {
					t.Errorf("got %d frames, want the root and more", len(doc.group("frames").Rects))
				}
				if sub := doc.text("subtitle"); !strings.HasPrefix(sub, st.Type+": ") {
					t.Errorf("got subtitle %q, want it to start with %q", sub, st.Type+": ")
				}
			})
		}
	}
}

// FuzzWrite checks that any frame names make well-formed XML whose
// frames nest.
func FuzzWrite(f *testing.F) {
	f.Add("main", "std::map<K, V>::find(K const&)", int64(10), int64(5))
	f.Add("a&b", "]]>\x00\xff", int64(1), int64(1<<62))
	f.Add("日本語", "\"'<>", int64(1000), int64(0))
	f.Fuzz(func(t *testing.T, a, b string, va, vb int64) {
		if va < 0 || vb < 0 || va > 1<<61 || vb > 1<<61 {
			return
		}
		fa, fb := &folded.Frame{Name: a}, &folded.Frame{Name: b, JIT: true, Object: b}
		stacks := []folded.Stack{
			{Frames: []*folded.Frame{fa, fb}, Value: va},
			{Frames: []*folded.Frame{fb}, Value: vb},
		}
		render(t, stacks, Options{Title: a, Subtitle: b, SampleType: b, Unit: a})
	})
}
