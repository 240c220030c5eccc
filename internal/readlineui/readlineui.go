// Package readlineui is pprof's terminal UI: line editing and history
// for interactive mode through github.com/chzyer/readline, messages on
// standard error, errors in red on a terminal.
package readlineui

import (
	"fmt"
	"os"
	"strings"

	"github.com/chzyer/readline"
)

// UI implements pprof's driver.UI over a readline instance.
type UI struct {
	rl *readline.Instance
}

// New returns a UI, or an error if the terminal cannot be set up (the
// caller then falls back to plain standard input).
func New() (*UI, error) {
	rl, err := readline.New("")
	if err != nil {
		return nil, err
	}
	return &UI{rl: rl}, nil
}

// ReadLine prints prompt and returns the line the user enters.
func (u *UI) ReadLine(prompt string) (string, error) {
	u.rl.SetPrompt(prompt)
	return u.rl.Readline()
}

// Print writes a message to standard error, as fmt.Print formats it,
// ending with a newline.
func (u *UI) Print(args ...any) {
	fmt.Fprint(u.rl.Stderr(), line(args))
}

// PrintErr writes an error message to standard error, in red when
// standard error is a terminal.
func (u *UI) PrintErr(args ...any) {
	text := line(args)
	if readline.IsTerminal(int(os.Stderr.Fd())) {
		text = "\033[0;31m" + text + "\033[0m"
	}
	fmt.Fprint(u.rl.Stderr(), text)
}

func line(args []any) string {
	text := fmt.Sprint(args...)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text
}

// IsTerminal reports whether standard output is a terminal.
func (u *UI) IsTerminal() bool { return readline.IsTerminal(int(os.Stdout.Fd())) }

// WantBrowser reports whether -http should open a browser: only when
// pprof runs in a terminal.
func (u *UI) WantBrowser() bool { return u.IsTerminal() }

// SetAutoComplete is not supported; completion is left to readline's
// defaults.
func (u *UI) SetAutoComplete(func(string) string) {}
