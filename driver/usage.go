package driver

// jitEnvUsage are the lines jitpprof adds to the environment variable
// list of upstream's usage message (see withJITEnvUsage), in its format.
const jitEnvUsage = "   PPROF_JIT_DIR      Directories of JIT objects (see -jit_dir), separated\n" +
	"                      by commas or ':'; default: the profile's directory,\n" +
	"                      the current one, /pprof_meta\n" +
	"   PPROF_OBJTOOL      inprocess (default) or binutils (see -objtool)\n"
