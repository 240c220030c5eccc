# bench/lib.sh - what the benchmark scripts share: sourced, not run.
#
# The caller sets work (the directory for outputs) and home (an empty
# HOME for the commands timed), and runs from the repository's root.

# timeit measures each command (bench/timeit: wall time to the
# millisecond and peak RSS, where GNU time gives the hundredth).
go build -o "$work/timeit" ./bench/timeit

# once NAME [ENV=VALUE...] -- COMMAND...: runs COMMAND once, in a clean
# environment (PATH, HOME and the ENV given) with $STDIN, if set, as its
# input; appends "SECONDS MAX_RSS_KB" (bench/timeit) to $work/NAME.runs,
# and keeps the output of its first run in $work/NAME.top.
once() {
  local name=$1
  shift
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  env -i PATH="$PATH" HOME="$home" "${env[@]}" "$work/timeit" -o "$work/$name.time" \
    "$@" <"${STDIN:-/dev/null}" >"$work/$name.out" 2>"$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
  [[ -s $work/$name.runs ]] || cp "$work/$name.out" "$work/$name.top"
  cat "$work/$name.time" >>"$work/$name.runs"
  echo "  $name: $(cat "$work/$name.time") (seconds, KiB)" >&2
}

# summary NAME: prints "NAME MEDIAN_SECONDS MAX_RSS_KB" of the runs once
# recorded for NAME.
summary() {
  sort -g "$work/$1.runs" | awk -v n="$1" '{t[NR] = $1; if ($2 > m) m = $2}
    END {print n, (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2), m}'
}
