package flamegraph

import (
	"fmt"
	"strconv"
	"strings"
)

// formatValue renders v, a value in unit, for people: bytes in IEC
// multiples with the exact count ("1.50 MiB (1,572,864 B)"), times in
// the largest fitting unit ("1.23 s"), anything else as a grouped
// integer followed by the unit unless it is "count" or empty.
func formatValue(v int64, unit string) string {
	switch strings.ToLower(unit) {
	case "b", "byte", "bytes":
		return formatBytes(v, 0)
	case "kb", "kilobyte", "kilobytes":
		return formatBytes(v, 1)
	case "mb", "megabyte", "megabytes":
		return formatBytes(v, 2)
	case "gb", "gigabyte", "gigabytes":
		return formatBytes(v, 3)
	case "ns", "nanosecond", "nanoseconds":
		return formatSeconds(float64(v) / 1e9)
	case "us", "µs", "microsecond", "microseconds":
		return formatSeconds(float64(v) / 1e6)
	case "ms", "millisecond", "milliseconds":
		return formatSeconds(float64(v) / 1e3)
	case "s", "sec", "second", "seconds":
		return formatSeconds(float64(v))
	case "", "count":
		return group(v)
	}
	return group(v) + " " + unit
}

// formatBytes renders v units of 1024^scale bytes: "1.50 MiB
// (1,572,864 B)", "1.50 GiB (1,536 MiB)" for scale 2.
func formatBytes(v int64, scale int) string {
	const units = "KMGTPE"
	exact := group(v) + " B"
	if scale > 0 {
		exact = group(v) + " " + units[scale-1:scale] + "iB"
	}
	x := float64(v)
	i := scale - 1 // Index in units of the unit of x; -1 for bytes.
	for i < len(units)-1 && (x >= 1024 || x <= -1024) {
		x /= 1024
		i++
	}
	if i < scale {
		return exact
	}
	return fmt.Sprintf("%.2f %ciB (%s)", x, units[i], exact)
}

// formatSeconds renders a duration in seconds.
func formatSeconds(s float64) string {
	a := s
	if a < 0 {
		a = -a
	}
	switch {
	case a == 0:
		return "0 s"
	case a < 1e-6:
		return trim(s*1e9) + " ns"
	case a < 1e-3:
		return trim(s*1e6) + " µs"
	case a < 1:
		return trim(s*1e3) + " ms"
	case a < 60:
		return trim(s) + " s"
	case a < 3600:
		return trim(s/60) + " min"
	}
	return trim(s/3600) + " h"
}

// trim prints x with three significant digits, at most two decimals
// and no trailing zeros.
func trim(x float64) string {
	prec := 2
	switch a := max(x, -x); {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// group prints v with commas between groups of three digits.
func group(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent renders part of total as a percentage with two decimals.
func percent(part, total int64) string {
	if total == 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*float64(part)/float64(total), 'f', 2, 64) + "%"
}
