package driver

import (
	"flag"
	"strings"
)

// NewFlagSet returns a FlagSet that parses args (os.Args[1:] for a
// command) with the standard flag package, the way upstream pprof parses
// its command line, except that it holds no global state and that a flag
// defined with StringList may be given several times (-base a -base b).
// handling says what Parse does on a bad flag, as for flag.NewFlagSet;
// upstream pprof exits (flag.ExitOnError).
func NewFlagSet(name string, args []string, handling flag.ErrorHandling) FlagSet {
	return &goFlags{fs: flag.NewFlagSet(name, handling), args: args}
}

// goFlags implements FlagSet over a flag.FlagSet.
type goFlags struct {
	fs    *flag.FlagSet
	args  []string
	extra []string
}

func (f *goFlags) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, def, usage)
}

func (f *goFlags) Int(name string, def int, usage string) *int {
	return f.fs.Int(name, def, usage)
}

func (f *goFlags) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}

func (f *goFlags) String(name, def, usage string) *string {
	return f.fs.String(name, def, usage)
}

// StringList defines a flag that may be repeated. Until it is given, the
// list holds the default value; each occurrence then adds one element.
func (f *goFlags) StringList(name, def, usage string) *[]*string {
	l := &stringList{list: []*string{&def}}
	f.fs.Var(l, name, usage)
	return &l.list
}

func (f *goFlags) ExtraUsage() string { return strings.Join(f.extra, "\n") }

func (f *goFlags) AddExtraUsage(eu string) { f.extra = append(f.extra, eu) }

// Parse parses the arguments and returns those that are not flags. With
// none, it calls usage, as upstream pprof does.
func (f *goFlags) Parse(usage func()) []string {
	f.fs.Usage = usage
	if err := f.fs.Parse(f.args); err != nil {
		return nil // ContinueOnError: flag already reported it.
	}
	args := f.fs.Args()
	if len(args) == 0 {
		usage()
	}
	return args
}

// stringList is a flag.Value holding every value a repeated flag is given.
type stringList struct {
	list []*string
	set  bool
}

func (l *stringList) String() string {
	if l == nil || len(l.list) == 0 {
		return ""
	}
	return *l.list[len(l.list)-1]
}

func (l *stringList) Set(v string) error {
	if !l.set {
		l.list, l.set = nil, true
	}
	l.list = append(l.list, &v)
	return nil
}
