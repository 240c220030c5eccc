package driver

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ianlancetaylor/demangle"
)

// This file is jitpprof's adapter to upstream pprof. The plugin
// interfaces of upstream's driver package (Fetcher, ObjTool, UI, Writer,
// FlagSet) are a typed contract; everything else jitpprof relies on —
// the names and meaning of upstream's flags, its interactive commands,
// the text of its messages and listings — is an assumption, and every
// such assumption is here, nowhere else. Each has a test in
// upstream_test.go that runs upstream's own driver and fails, naming the
// assumption, when a new upstream version changes it. doc/design.md
// ("The seam to upstream") proposes the API that would replace this
// file.

// Upstream's flags that jitpprof reads (through flagRecorder, once
// parsed) or sets before upstream reads them.
const (
	flagProto       = "proto"        // bool: write the profile as a compressed protobuf
	flagOutput      = "output"       // string: file the report is written to
	flagRaw         = "raw"          // bool: another output format, to make upstream refuse two
	flagSampleIndex = "sample_index" // string: the sample type reported
	flagNoInlines   = "noinlines"    // bool: attribute inlined frames to their caller
	flagShowColumns = "showcolumns"  // bool: show column numbers at line granularity
	flagSymbolize   = "symbolize"    // string: symbolization modes, joined by ':'
	flagSeconds     = "seconds"      // int: the duration of a profile collected; -1 if not given
)

// legacySampleIndexFlags are upstream's shortcuts for -sample_index, in
// the order upstream applies them: -sample_index wins, then the first
// shortcut given (upstream warns about the others).
var legacySampleIndexFlags = []struct{ flag, index string }{
	{"total_delay", "delay"},
	{"mean_delay", "delay"},
	{"contentions", "contentions"},
	{"inuse_space", "inuse_space"},
	{"inuse_objects", "inuse_objects"},
	{"alloc_space", "alloc_space"},
	{"alloc_objects", "alloc_objects"},
}

// granularityFlags are upstream's granularity flags (bool: it has no
// -granularity flag, only an interactive setting of that name).
var granularityFlags = []string{"functions", "filefunctions", "files", "lines", "addresses"}

// commandLineSampleIndex returns the sample type the command line
// selects, applying the legacy shortcuts as upstream does.
func commandLineSampleIndex(flags *flagRecorder) string {
	si := flags.stringFlag(flagSampleIndex)
	for _, s := range legacySampleIndexFlags {
		if flags.boolFlag(s.flag) && si == "" {
			si = s.index
		}
	}
	return si
}

// commandLineGranularity returns the granularity the command line
// selects: one of upstream's granularity flags, or "" for its default,
// functions.
func commandLineGranularity(flags *flagRecorder) string {
	for _, g := range granularityFlags {
		if flags.boolFlag(g) {
			return g
		}
	}
	return ""
}

// A symbolizeMode is what upstream's -symbolize value asks of local
// symbolization.
type symbolizeMode struct {
	local bool // symbolize with local binaries (none and remote turn it off)
	force bool // redo mappings that already have symbols (force, any demangle= mode)
}

// parseSymbolize reads a -symbolize value as upstream's
// Symbolizer.Symbolize does (this follows its logic): modes separated by
// ':', case-insensitive; "none" or "no" anywhere turns everything off;
// the last of local, fastlocal and remote decides local symbolization,
// on by default; force or a demangler mode (full, none or templates,
// with or without "demangle=" before it) forces it.
func parseSymbolize(value string) symbolizeMode {
	m := symbolizeMode{local: true}
	for _, o := range strings.Split(strings.ToLower(value), ":") {
		switch o {
		case "none", "no":
			return symbolizeMode{}
		case "local", "fastlocal":
			m.local = true
		case "remote":
			m.local = false
		case "force":
			m.force = true
		default:
			switch strings.TrimPrefix(o, "demangle=") {
			case "full", "none", "templates":
				m.force = true
			}
		}
	}
	return m
}

// upstreamDemangle returns the Name upstream's symbolizer gives a
// function whose system name is name, when -symbolize asks for local
// symbolization with neither force nor a demangle= mode, once it has
// symbolized the profile, if name demangles: this follows the first
// steps of its Demangle with the default demangler mode
// (demanglerModeToOptions("") and demangleSingleFunction). Upstream then
// leaves alone a function whose Name differs from its system name. A
// name that does not demangle is returned as it is: upstream then does
// its own work on it, heuristics for names already demangled included.
func upstreamDemangle(name string) string {
	opts := []demangle.Option{demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams}
	if d := demangle.Filter(name, opts...); d != name {
		return d
	}
	// macOS names start with an extra '_': upstream tries once more
	// without it.
	if strings.HasPrefix(name, "_") {
		if d := demangle.Filter(name[1:], opts...); d != name[1:] {
			return d
		}
	}
	return name
}

// exportOutput is the reserved -output name under which upstream writes
// the proto an export is made from (see export.go). It never reaches the
// file system.
const exportOutput = "jitpprof-export.internal.pb.gz"

// reportNotice starts the message upstream prints (UI.PrintErr) before
// it writes a report to an -output file; the file name follows.
const reportNotice = "Generating report in "

// isExportNotice reports whether a message is upstream's notice that it
// writes the report to the reserved name, which the user must not see.
func isExportNotice(args []any) bool {
	return strings.TrimSpace(fmt.Sprint(args...)) == reportNotice+exportOutput
}

// Upstream's interactive commands: "options" lists the settings, and
// "proto" with a redirection writes the filtered profile to a file.
const optionsCommand = "options"

// protoCommand returns the interactive command that makes upstream write
// the profile, filtered by args (its regexps and options), to the
// reserved export name.
func protoCommand(args []string) string {
	return strings.Join(append(append([]string{flagProto}, args...), ">", exportOutput), " ")
}

// optionRx matches a line of upstream's "options" listing:
// "  name = value  //: comment".
var optionRx = regexp.MustCompile(`^\s*(\w+)\s*=\s*(\S*)`)

// optGranularity is the granularity setting of the "options" listing;
// the other settings jitpprof reads there have their flag's name.
const optGranularity = "granularity"

// parseOptionsListing returns the settings of upstream's "options"
// listing by name, values unquoted.
func parseOptionsListing(listing string) map[string]string {
	opts := map[string]string{}
	for _, line := range strings.Split(listing, "\n") {
		if m := optionRx.FindStringSubmatch(line); m != nil {
			opts[m[1]] = strings.Trim(m[2], `"`)
		}
	}
	return opts
}

// defaultGranularity is what the "options" listing means to print for
// the granularity when none was chosen; the version in go.mod prints the
// empty value, `""`, instead, which parseOptionsListing reads as "".
// Either means functions.
const defaultGranularity = "(default)"

// usageEnvHeader starts the environment variable list of upstream's
// usage message (printed through UI.Print for -h), and usageWindowsLine
// ends it; jitpprof lists its variables just before that last line.
const (
	usageEnvHeader   = "  Environment Variables:\n"
	usageWindowsLine = "   * On Windows, %USERPROFILE% is used instead of $HOME"
)

// withJITEnvUsage adds jitpprof's environment variables to upstream's
// usage message, or returns msg unchanged if it is not that message.
func withJITEnvUsage(msg string) string {
	i := strings.Index(msg, usageWindowsLine)
	if i < 0 || !strings.Contains(msg, usageEnvHeader) {
		return msg
	}
	return msg[:i] + jitEnvUsage + msg[i:]
}

// usageDetailsLine ends the synopsis of upstream's usage message (the
// lines of "pprof ... <source>" forms); jitpprof adds its -record forms
// just before it.
const usageDetailsLine = "\nDetails:\n"

// recordSynopsis is what withRecordUsage adds to the synopsis.
const recordSynopsis = `
Record a command, or running processes (Linux), and report on the
recording, with any of the forms above (see Recording below).

   pprof <format> [options] -record [-seconds N] -- COMMAND [ARGS...]
   pprof <format> [options] -record -pid PID[,PID...] [-seconds N]
`

// withRecordUsage adds the -record forms to the synopsis of upstream's
// usage message, or returns msg unchanged if it is not that message.
func withRecordUsage(msg string) string {
	i := strings.Index(msg, usageDetailsLine)
	if i < 0 || !strings.HasPrefix(msg, "usage:") {
		return msg
	}
	return msg[:i] + recordSynopsis + msg[i:]
}

// fetchingNotice is the message upstream's fetcher prints (UI.Print)
// before it fetches a profile over HTTP, which jitpprof's fetcher prints
// the same way.
func fetchingNotice(url string) string { return "Fetching profile over HTTP from " + url }

// waitNotice is the message that follows fetchingNotice when a duration
// (-seconds) was asked for.
func waitNotice(d time.Duration) string { return fmt.Sprintf("Please wait... (%v)", d) }
