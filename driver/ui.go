package driver

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// stdUI is the UI used when the caller gives none: commands from
// standard input, messages to standard error, as upstream pprof does
// without readline.
type stdUI struct {
	in *bufio.Reader
}

func newStdUI() *stdUI { return &stdUI{in: bufio.NewReader(os.Stdin)} }

func (u *stdUI) ReadLine(prompt string) (string, error) {
	os.Stdout.WriteString(prompt)
	return u.in.ReadString('\n')
}

func (u *stdUI) Print(args ...any) { printLine(args) }

func (u *stdUI) PrintErr(args ...any) { printLine(args) }

func (u *stdUI) IsTerminal() bool { return false }

func (u *stdUI) WantBrowser() bool { return true }

func (u *stdUI) SetAutoComplete(func(string) string) {}

// printLine writes args to standard error as fmt.Print does, ending the
// text with a newline if it has none.
func printLine(args []any) {
	text := fmt.Sprint(args...)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	os.Stderr.WriteString(text)
}
