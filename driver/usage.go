package driver

import "strings"

// This file holds what jitpprof assumes about the text of upstream
// pprof's usage message (printed through UI.Print for -h): its
// environment variable list ends with a line about Windows, and the
// variables jitpprof reads are listed just before it.
// TestUsageListsPPROF_JIT_DIR fails if upstream's text changes.

// usageWindowsLine ends upstream's "Environment Variables:" list.
const usageWindowsLine = "   * On Windows, %USERPROFILE% is used instead of $HOME"

// jitEnvUsage are the lines jitpprof adds to that list, in its format.
const jitEnvUsage = "   PPROF_JIT_DIR      Directories of JIT objects (see -jit_dir), separated\n" +
	"                      by commas or ':'; default: the profile's directory,\n" +
	"                      the current one, /pprof_meta\n" +
	"   PPROF_OBJTOOL      inprocess (default) or binutils (see -objtool)\n"

// withJITEnvUsage adds jitpprof's environment variables to upstream's
// usage message, or returns msg unchanged if it is not that message.
func withJITEnvUsage(msg string) string {
	i := strings.Index(msg, usageWindowsLine)
	if i < 0 || !strings.Contains(msg, "  Environment Variables:\n") {
		return msg
	}
	return msg[:i] + jitEnvUsage + msg[i:]
}
