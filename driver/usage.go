package driver

// jitEnvUsage are the lines jitpprof adds to the environment variable
// list of upstream's usage message (see withJITEnvUsage), in its format.
// Every variable jitpprof reads is listed, with one line on what for.
const jitEnvUsage = "   PPROF_JIT_DIR      Directories of JIT objects (see -jit_dir), separated\n" +
	"                      by commas or ':'; default: the profile's directory,\n" +
	"                      the current one, /pprof_meta\n" +
	"   PPROF_OBJTOOL      inprocess (default) or binutils (see -objtool)\n" +
	"   PERF_BUILDID_DIR   perf's build-ID cache, where perf record copied the\n" +
	"                      files it sampled (default: buildid.dir of perf's\n" +
	"                      configuration, else $HOME/.debug)\n" +
	"   PERF_CONFIG        The perf configuration file to read buildid.dir from\n" +
	"                      (default: /etc/perfconfig and $HOME/.perfconfig)\n" +
	"   JITDUMPDIR         Where LLVM's perf listener writes its jitdumps\n" +
	"                      ($JITDUMPDIR/.debug/jit/; default: under $HOME)\n" +
	"   DEBUGINFOD_URLS    debuginfod servers to fetch missing debug files from\n" +
	"   DEBUGINFOD_CACHE_PATH  where fetched debug files are kept (default:\n" +
	"                      $XDG_CACHE_HOME/debuginfod_client, else under $HOME)\n" +
	"   DEBUGINFOD_TIMEOUT Seconds a server may take to send its first byte, and\n" +
	"                      each further 100 KiB (default 90, as elfutils' client)\n" +
	"   DEBUGINFOD_MAXTIME Seconds one download may take in all (default 300)\n" +
	"   DEBUGINFOD_MAXSIZE Bytes one debug file may have (default 4294967296)\n"

// perfdataUsage is the help text on perf.data sources.
const perfdataUsage = `  perf.data (jitpprof):
    perf.data             A recording of Linux perf record, read in process (no
                          perf_to_profile): also a perf record --threads
                          directory, perf record -o - output, and -z. Record
                          with -g (frame pointers) or --call-graph dwarf (code
                          built without them), and with -k 1 for JIT code that
                          moves (Node.js --perf-prof, jitdumps). The JIT files
                          the recording names are read with it.`
