//go:build !linux

package record

import (
	"errors"
	"runtime"
)

// Record records with Linux's perf events: elsewhere it returns an
// error.
func Record(o Options) (*Result, error) {
	return nil, errors.New("recording needs Linux's perf events, not " + runtime.GOOS)
}
