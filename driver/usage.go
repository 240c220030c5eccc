package driver

// jitEnvUsage are the lines jitpprof adds to the environment variable
// list of upstream's usage message (see withJITEnvUsage), in its format.
const jitEnvUsage = "   PPROF_JIT_DIR      Directories of JIT objects (see -jit_dir), separated\n" +
	"                      by commas or ':'; default: the profile's directory,\n" +
	"                      the current one, /pprof_meta\n" +
	"   PPROF_OBJTOOL      inprocess (default) or binutils (see -objtool)\n" +
	"   DEBUGINFOD_URLS    debuginfod servers the in-process object tool fetches\n" +
	"                      missing debug files from, separated by spaces\n" +
	"   DEBUGINFOD_TIMEOUT Seconds a server may take to send its first byte, and\n" +
	"                      each further 100 KiB (default 90, as elfutils' client)\n" +
	"   DEBUGINFOD_MAXTIME Seconds one download may take in all (default 300)\n" +
	"   DEBUGINFOD_MAXSIZE Bytes one debug file may have (default 4294967296)\n"
