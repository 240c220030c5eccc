package driver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/flamegraph"
	"github.com/jitpprof/pprof/internal/folded"
)

// jitpprof's own output formats, -folded (also -collapsed) and
// -flamegraph, are made from the profile upstream pprof writes for
// -proto: by then upstream has applied every filter (-focus, -ignore,
// -hide, -show, -tagfocus, ...) exactly as for its own reports. The
// export asks upstream for that proto under a reserved output name,
// catches it in the Writer, and converts it.

// Export formats.
const (
	formatFolded     = "folded"
	formatFlameGraph = "flamegraph"
)

// exportUsage is the help text for the export flags.
const exportUsage = `  Flame graphs (jitpprof):
    -folded, -collapsed   Folded stacks ("root;...;leaf VALUE" lines) of the
                          sample type chosen by -sample_index
    -flamegraph           Standalone interactive SVG flame graph
    -flamegraph_title     Title of the flame graph`

// exportFlags are the flags of the export formats.
type exportFlags struct {
	folded, collapsed, flameGraph *bool
	title                         *string
}

func defineExportFlags(fs FlagSet) exportFlags {
	fs.AddExtraUsage(exportUsage)
	return exportFlags{
		folded:     fs.Bool("folded", false, "Generate folded stacks"),
		collapsed:  fs.Bool("collapsed", false, "Generate folded stacks (same as -folded)"),
		flameGraph: fs.Bool("flamegraph", false, "Generate an SVG flame graph"),
		title:      fs.String("flamegraph_title", "", "Title of the flame graph"),
	}
}

// An export is one pending -folded or -flamegraph report.
type export struct {
	format string // formatFolded or formatFlameGraph
	dest   string // output file, "" for standard output
	// The configuration the report is made with, as upstream's
	// interactive "options" command or the command line gave it.
	sampleIndex string
	granularity string
	noInlines   bool
	columns     bool
	title       string

	mu   sync.Mutex
	data []byte // the proto upstream wrote, once it has
}

// commandLineExport turns a command line asking for -folded or
// -flamegraph into one asking upstream for -proto under the reserved
// output name, and returns the pending export. Conflicting formats are
// left for upstream to reject: it refuses more than one output format.
func (r *run) commandLineExport() *export {
	f := r.exportFlags
	var formats []string
	if *f.folded || *f.collapsed {
		formats = append(formats, formatFolded)
	}
	if *f.flameGraph {
		formats = append(formats, formatFlameGraph)
	}
	if len(formats) == 0 {
		return nil
	}
	proto, output := r.flags.bools[flagProto], r.flags.strings[flagOutput]
	if proto == nil || output == nil {
		return nil // not upstream's flag set; nothing to hook
	}
	if *proto || len(formats) > 1 {
		// Two formats: make upstream say so ("must set at most one
		// output format") by asking for a second one.
		if raw := r.flags.bools[flagRaw]; raw != nil {
			*raw = true
		}
	}
	e := &export{
		format:      formats[0],
		dest:        *output,
		sampleIndex: commandLineSampleIndex(r.flags),
		granularity: commandLineGranularity(r.flags),
		noInlines:   r.flags.boolFlag(flagNoInlines),
		columns:     r.flags.boolFlag(flagShowColumns),
		title:       *f.title,
	}
	*proto, *output = true, exportOutput
	return e
}

// captured stores the proto upstream wrote for e.
func (e *export) captured(data []byte) {
	e.mu.Lock()
	e.data = data
	e.mu.Unlock()
}

// finish converts the captured proto and writes the report to its
// destination through w (standard output when it has none).
func (e *export) finish(w Writer, ui UI) error {
	e.mu.Lock()
	data := e.data
	e.data = nil // parsed below: the profile, not its bytes, is needed
	e.mu.Unlock()
	if data == nil {
		return errors.New("no profile was produced for the " + e.format + " report")
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return fmt.Errorf("reading back the filtered profile: %w", err)
	}
	data = nil
	var out bytes.Buffer
	if err := e.render(&out, p, ui); err != nil {
		return err
	}
	if e.dest == "" {
		_, err := os.Stdout.Write(out.Bytes())
		return err
	}
	ui.PrintErr(reportNotice, e.dest)
	f, err := w.Open(e.dest)
	if err != nil {
		return err
	}
	if _, err := f.Write(out.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// exportWriter is the Writer jitpprof gives upstream: it catches the
// proto written under the reserved name and passes everything else to
// the caller's Writer (or creates the file, as upstream does).
type exportWriter struct {
	r *run
}

func (w exportWriter) Open(name string) (io.WriteCloser, error) {
	if name == exportOutput {
		if e := w.r.pendingExport(); e != nil {
			return &captureFile{e: e}, nil
		}
	}
	return w.r.writer().Open(name)
}

// captureFile is the in-memory file the reserved output name opens.
type captureFile struct {
	bytes.Buffer
	e *export
}

func (c *captureFile) Close() error {
	c.e.captured(bytes.Clone(c.Bytes()))
	return nil
}

// render writes the report of e for p, which it may change, saying on
// ui what it merged.
func (e *export) render(w io.Writer, p *profile.Profile, ui UI) error {
	si, err := p.SampleIndexByName(e.sampleIndex)
	if err != nil {
		return err
	}
	st := p.SampleType[si]
	stacks, err := folded.Stacks(p, folded.Options{
		SampleIndex: si,
		Granularity: e.granularity,
		NoInlines:   e.noInlines,
		Columns:     e.columns,
		Owned:       true, // parsed from the proto for this report
	})
	if err != nil {
		return err
	}
	// A profile of hundreds of thousands of functions would make a flame
	// graph of as many frames, too narrow to see, and folded stacks of
	// tens of MB: the smallest frames are merged, as -nodefraction drops
	// a graph's smallest nodes.
	stacks, merged := folded.Merge(stacks, folded.DefaultMaxFrames)
	if merged.Frames > 0 {
		ui.PrintErr(fmt.Sprintf("-%s: the call tree has %d frames, more than %d: its %d frames of at most %d %s (%s of the total) each are merged into frames named %q",
			e.format, merged.Of, folded.DefaultMaxFrames, merged.Frames, merged.Most, st.Unit, percentOf(merged.Most, merged.Total), merged.Name))
	}
	switch e.format {
	case formatFolded:
		// Like -flamegraph: the tools that read folded stacks
		// (flamegraph.pl, speedscope, inferno) take values as widths.
		for _, s := range stacks {
			if s.Value < 0 {
				return fmt.Errorf("stack with negative value %d: folded stacks cannot carry negative values (a -diff_base profile? use -base, or -top and -traces for a comparison)", s.Value)
			}
		}
		return folded.Write(w, stacks)
	case formatFlameGraph:
		return flamegraph.Write(w, stacks, flamegraph.Options{
			Title:      e.flameGraphTitle(p),
			Subtitle:   strings.Join(p.Comments, "; "),
			SampleType: st.Type,
			Unit:       st.Unit,
		})
	}
	return fmt.Errorf("unknown export format %q", e.format)
}

// percentOf prints part of total as a percentage.
func percentOf(part, total int64) string {
	return strconv.FormatFloat(100*float64(part)/float64(max(total, 1)), 'g', 2, 64) + "%"
}

// flameGraphTitle returns -flamegraph_title, or "FILE: TYPE" after the
// main binary and the sample type, as pprof's report headers say.
func (e *export) flameGraphTitle(p *profile.Profile) string {
	if e.title != "" {
		return e.title
	}
	title := "Flame graph"
	if len(p.Mapping) > 0 && p.Mapping[0].File != "" {
		title = filepath.Base(p.Mapping[0].File)
	}
	si, err := p.SampleIndexByName(e.sampleIndex)
	if err != nil {
		return title
	}
	return title + ": " + p.SampleType[si].Type
}
