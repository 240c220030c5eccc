package testenv

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Debuginfod starts elfutils' debuginfod server on the ELF and DWARF
// files under dir and returns its URL once it serves the debug files of
// build IDs ids, which dir must hold. The server stops when t ends.
func Debuginfod(t testing.TB, dir string, ids ...[]byte) string {
	t.Helper()
	server := Tool(t, "debuginfod", "debuginfod")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(server, "-F", "-p", fmt.Sprint(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"), "-t", "0", "-g", "0", dir)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		want := url + "/buildid/" + hex.EncodeToString(id) + "/debuginfo"
		for {
			resp, err := http.Get(want)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("debuginfod did not serve %s within 60 s:\n%s", want, out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return url
}

// lockedBuffer is a bytes.Buffer that a process may write to while it
// is read.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
