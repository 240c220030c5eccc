package driver

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// A tempDirs removes the temporary directories of one run when it ends:
// at the end of PProf, and when the process is interrupted (SIGINT) or
// terminated (SIGTERM) before, which is how the -http server ends, since
// it serves until killed. While it holds a directory, the process
// handles those signals: it removes the directories, then ends with the
// signal as if it had not handled it (the signal's default action,
// raised again), so that its parent sees what it sent.
type tempDirs struct {
	mu   sync.Mutex
	dirs []string
	sigs chan os.Signal
	stop chan struct{}
	done chan struct{}
}

// add has dir removed when the run ends.
func (t *tempDirs) add(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirs = append(t.dirs, dir)
	if t.sigs != nil {
		return
	}
	t.sigs = make(chan os.Signal, 1)
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	signal.Notify(t.sigs, syscall.SIGINT, syscall.SIGTERM)
	go t.wait(t.sigs, t.stop, t.done)
}

// wait removes the directories when a signal comes, and raises it again.
func (t *tempDirs) wait(sigs chan os.Signal, stop, done chan struct{}) {
	defer close(done)
	select {
	case <-stop:
		return
	case sig := <-sigs:
		t.removeAll()
		signal.Reset(syscall.SIGINT, syscall.SIGTERM)
		if s, ok := sig.(syscall.Signal); ok {
			raise(s)
			time.Sleep(time.Second) // the signal ends the process
			os.Exit(128 + int(s))
		}
		os.Exit(1)
	}
}

// removeAll removes the directories.
func (t *tempDirs) removeAll() {
	t.mu.Lock()
	dirs := t.dirs
	t.dirs = nil
	t.mu.Unlock()
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// close removes the directories and stops handling the signals.
func (t *tempDirs) close() {
	t.mu.Lock()
	sigs, stop, done := t.sigs, t.stop, t.done
	t.sigs = nil
	t.mu.Unlock()
	if sigs != nil {
		signal.Stop(sigs)
		close(stop)
		<-done
	}
	t.removeAll()
}
