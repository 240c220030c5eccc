package driver

// flagRecorder wraps a FlagSet and remembers the bool and string flags
// defined on it by name, so that jitpprof can read upstream pprof's own
// flags (-symbolize, -output, -sample_index, -lines, ...) once they are
// parsed, and adjust them before upstream does.
type flagRecorder struct {
	FlagSet
	bools   map[string]*bool
	strings map[string]*string
	ints    map[string]*int

	// afterParse, if not nil, runs right after the flags are parsed.
	afterParse func()
	// check, if not nil, validates the parsed flags; its error is kept in
	// err and ends the run before any profile is fetched.
	check func() error
	err   error
	// sources, if not nil, turns the sources parsed into those upstream
	// reads (-record: the recording's file for the command's words);
	// its error is kept in err, as check's. sourceless, if not nil,
	// reports whether the flags need no source (-record -pid): then
	// no usage message is printed for its lack.
	sources    func(args []string) ([]string, error)
	sourceless func() bool
}

func newFlagRecorder(fs FlagSet) *flagRecorder {
	return &flagRecorder{
		FlagSet: fs,
		bools:   map[string]*bool{},
		strings: map[string]*string{},
		ints:    map[string]*int{},
	}
}

func (r *flagRecorder) Int(name string, def int, usage string) *int {
	v := r.FlagSet.Int(name, def, usage)
	r.ints[name] = v
	return v
}

// intFlag returns the value of the int flag name, or 0 if no such flag
// was defined.
func (r *flagRecorder) intFlag(name string) int {
	if v := r.ints[name]; v != nil {
		return *v
	}
	return 0
}

func (r *flagRecorder) Bool(name string, def bool, usage string) *bool {
	v := r.FlagSet.Bool(name, def, usage)
	r.bools[name] = v
	return v
}

func (r *flagRecorder) String(name, def, usage string) *string {
	v := r.FlagSet.String(name, def, usage)
	r.strings[name] = v
	return v
}

// stringFlag returns the value of the string flag name, or "" if no such
// flag was defined.
func (r *flagRecorder) stringFlag(name string) string {
	if v := r.strings[name]; v != nil {
		return *v
	}
	return ""
}

// boolFlag returns the value of the bool flag name, or false if no such
// flag was defined.
func (r *flagRecorder) boolFlag(name string) bool {
	if v := r.bools[name]; v != nil {
		return *v
	}
	return false
}

// Parse parses the flags, then runs the sources and afterParse hooks,
// which may replace the sources and adjust flag values before upstream
// reads them.
//
// When check refuses the flags, Parse returns no source, which makes
// upstream's driver stop before fetching anything; PProf then returns the
// error kept in err instead of upstream's.
func (r *flagRecorder) Parse(usage func()) []string {
	args := r.FlagSet.Parse(func() {
		if r.sourceless == nil || !r.sourceless() {
			usage()
		}
	})
	sourceless := r.sourceless != nil && r.sourceless()
	if (len(args) > 0 || sourceless) && r.check != nil {
		if r.err = r.check(); r.err != nil {
			return nil
		}
	}
	if r.sources != nil && (len(args) > 0 || sourceless) {
		if args, r.err = r.sources(args); r.err != nil {
			return nil
		}
	}
	if r.afterParse != nil {
		r.afterParse()
	}
	return args
}
