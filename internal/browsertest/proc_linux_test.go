package browsertest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// processGroupAlive reports whether any process of group pgid is alive.
// Zombies do not count: where PID 1 does not reap orphans (some
// containers), the browser's helpers stay zombies after being killed.
func processGroupAlive(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // The process has gone.
		}
		// pid (comm) state ppid pgrp ...; comm may contain spaces.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 3 {
			continue
		}
		if pg, _ := strconv.Atoi(fields[2]); pg == pgid && fields[0] != "Z" {
			return true
		}
	}
	return false
}
