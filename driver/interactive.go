package driver

import (
	"fmt"
	"io"
	"strings"
)

// exportUI is the UI jitpprof gives upstream. It passes everything to
// the caller's UI, except that it
//   - hides upstream's notice that it writes a report to the reserved
//     export name, and
//   - adds the interactive commands "folded" (also "collapsed") and
//     "flamegraph": for each, it first has upstream print its current
//     options (to learn sample_index and granularity, which the user may
//     have changed at the prompt), then asks it for "proto" under the
//     reserved name with the same filters, and converts that before the
//     next prompt.
type exportUI struct {
	UI
	r *run

	queue    []string         // commands for upstream before the next prompt
	options  *strings.Builder // upstream's "options" output, while captured
	pending  *export          // the interactive export in progress
	eofAfter bool             // the user's input ended with the export command
}

// exportHelp is what "help folded" and "help flamegraph" print.
const exportHelp = `folded [regexps] [> file]      Folded stacks ("root;...;leaf VALUE") of the current sample_index
flamegraph [regexps] [> file]  Standalone interactive SVG flame graph
  Both honour sample_index, granularity and the filters, like "proto".`

func (u *exportUI) ReadLine(prompt string) (string, error) {
	if u.options != nil {
		u.pending.applyOptions(u.options.String())
		u.options = nil
	}
	if len(u.queue) > 0 {
		cmd := u.queue[0]
		u.queue = u.queue[1:]
		return cmd, nil
	}
	if e := u.pending; e != nil {
		u.pending = nil
		u.r.setPendingExport(nil)
		if e.hasData() {
			if err := e.finish(u.r.writer(), u.UI); err != nil {
				u.UI.PrintErr(err)
			}
		}
	}
	if u.eofAfter {
		return "", io.EOF
	}
	line, err := u.UI.ReadLine(prompt)
	if err != nil && (err != io.EOF || line == "") {
		return line, err
	}
	fields := strings.Fields(line)
	if len(fields) == 2 && fields[0] == "help" && exportFormat(fields[1]) != "" {
		u.UI.Print(exportHelp)
		return "", err
	}
	if len(fields) == 0 || exportFormat(fields[0]) == "" {
		return line, err
	}
	e := &export{format: exportFormat(fields[0])}
	var args []string
	for i := 1; i < len(fields); i++ {
		switch t := fields[i]; {
		case t == ">" && i+1 < len(fields):
			i++
			e.dest = fields[i]
		case strings.HasPrefix(t, ">") && len(t) > 1:
			e.dest = t[1:]
		default:
			args = append(args, t)
		}
	}
	u.pending = e
	u.r.setPendingExport(e)
	u.options = &strings.Builder{}
	u.queue = []string{protoCommand(args)}
	u.eofAfter = err == io.EOF
	return optionsCommand, nil
}

// exportFormat returns the export format an interactive command names,
// or "".
func exportFormat(cmd string) string {
	switch cmd {
	case "folded", "collapsed":
		return formatFolded
	case "flamegraph":
		return formatFlameGraph
	}
	return ""
}

func (u *exportUI) Print(args ...any) {
	if u.options != nil {
		fmt.Fprintln(u.options, args...)
		return
	}
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			args = []any{withRecordUsage(withJITEnvUsage(s))}
		}
	}
	u.UI.Print(args...)
}

func (u *exportUI) PrintErr(args ...any) {
	if isExportNotice(args) {
		return
	}
	u.UI.PrintErr(args...)
}

// applyOptions takes sample_index, granularity, noinlines and
// showcolumns from upstream's "options" listing.
func (e *export) applyOptions(listing string) {
	opts := parseOptionsListing(listing)
	e.sampleIndex = opts[flagSampleIndex]
	if g := opts[optGranularity]; g != defaultGranularity {
		e.granularity = g
	}
	e.noInlines = opts[flagNoInlines] == "true"
	e.columns = opts[flagShowColumns] == "true"
}

// hasData reports whether upstream has written the export's proto.
func (e *export) hasData() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.data != nil
}
