package objtool

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenFIFO: a profile may name a FIFO as a binary (anyone who can
// write where it points may put one there); Open fails at once, saying
// what it is, where an open(2) would wait for a writer for ever.
func TestOpenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "server")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tool := New(Options{})
	defer tool.Close()
	done := make(chan error, 1)
	go func() {
		_, err := tool.Open(fifo, 0x400000, 0x500000, 0, "")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Open(FIFO): %v; want an error naming it and saying it is not a regular file", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Open(FIFO) blocked")
	}
}
