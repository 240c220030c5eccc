package driver

// flagRecorder wraps a FlagSet and remembers the bool and string flags
// defined on it by name, so that jitpprof can read upstream pprof's own
// flags (-symbolize, -output, -sample_index, -lines, ...) once they are
// parsed, and adjust them before upstream does.
type flagRecorder struct {
	FlagSet
	bools   map[string]*bool
	strings map[string]*string

	// afterParse, if not nil, runs right after the flags are parsed.
	afterParse func()
	// check, if not nil, validates the parsed flags; its error is kept in
	// err and ends the run before any profile is fetched.
	check func() error
	err   error
}

func newFlagRecorder(fs FlagSet) *flagRecorder {
	return &flagRecorder{
		FlagSet: fs,
		bools:   map[string]*bool{},
		strings: map[string]*string{},
	}
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

// Parse parses the flags, then runs the afterParse hook, which may adjust
// flag values before upstream reads them.
//
// When check refuses the flags, Parse returns no source, which makes
// upstream's driver stop before fetching anything; PProf then returns the
// error kept in err instead of upstream's.
func (r *flagRecorder) Parse(usage func()) []string {
	args := r.FlagSet.Parse(usage)
	if len(args) > 0 && r.check != nil {
		if r.err = r.check(); r.err != nil {
			return nil
		}
	}
	if r.afterParse != nil {
		r.afterParse()
	}
	return args
}
