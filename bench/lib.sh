# bench/lib.sh - what the benchmark scripts share: sourced, not run.
#
# The caller sets work (the directory for outputs) and home (an empty
# HOME for the commands timed), and runs from the repository's root.

# timeit measures each command (bench/timeit: wall time to the
# millisecond, peak RSS and CPU time, user and system, what GNU time's
# %e %M %U %S give, but %e only to the hundredth).
go build -o "$work/timeit" ./bench/timeit

# once NAME [ENV=VALUE...] -- COMMAND...: runs COMMAND once, in a clean
# environment (PATH, HOME and the ENV given) with $STDIN, if set, as its
# input; appends "SECONDS MAX_RSS_KB CPU_SECONDS" (bench/timeit -cpu) to
# $work/NAME.runs, and keeps the output of its first run in
# $work/NAME.top.
once() {
  local name=$1
  shift
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  env -i PATH="$PATH" HOME="$home" "${env[@]}" "$work/timeit" -cpu -o "$work/$name.time" \
    "$@" <"${STDIN:-/dev/null}" >"$work/$name.out" 2>"$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
  [[ -s $work/$name.runs ]] || cp "$work/$name.out" "$work/$name.top"
  cat "$work/$name.time" >>"$work/$name.runs"
  echo "  $name: $(cat "$work/$name.time") (seconds, KiB, CPU seconds)" >&2
}

# summary NAME: prints "NAME MEDIAN_SECONDS MAX_RSS_KB" of the runs once
# recorded for NAME.
summary() {
  sort -g "$work/$1.runs" | awk -v n="$1" '{t[NR] = $1; if ($2 > m) m = $2}
    END {print n, (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2), m}'
}

# stats NAME: prints "NAME MEDIAN_SECONDS MEDIAN_CPU_SECONDS MEDIAN_RSS_KB
# MAX_RSS_KB" of the runs once recorded for NAME (each median on its own).
stats() {
  awk -v n="$1" '
    function med(a, k,   i, j, x) {
      for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    {t[NR] = $1; r[NR] = $2; c[NR] = $3; if ($2 > m) m = $2}
    END {print n, med(t, NR), med(c, NR), med(r, NR), m}' "$work/$1.runs"
}
