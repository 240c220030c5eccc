package browsertest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// serverConn is the server end of a websocket, for tests: it reads the
// client's frames, checking that they are masked, and writes raw bytes
// or unmasked frames.
type serverConn struct {
	conn net.Conn
	br   *bufio.Reader
}

// frame is one frame as the server read it.
type frame struct {
	fin     bool
	op      byte
	payload []byte
}

// newWSServer starts an HTTP server that accepts websockets and hands
// each to handler, in the handler's goroutine; the handler's error, if
// any, fails the test. t.Cleanup waits for the handlers, then closes
// the server. The returned
// URL is ws://.
func newWSServer(t *testing.T, handler func(s *serverConn) error) string {
	t.Helper()
	var handlers sync.WaitGroup // Hijacked connections are not waited for by srv.Close.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		if r.Header.Get("Sec-WebSocket-Version") != "13" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") ||
			!headerHasToken(r.Header, "Connection", "upgrade") {
			http.Error(w, "not a websocket handshake", http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Sec-WebSocket-Key")
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijacking: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", acceptKey(key))
		if err := brw.Flush(); err != nil {
			t.Errorf("writing the handshake: %v", err)
			return
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if err := handler(&serverConn{conn: conn, br: brw.Reader}); err != nil {
			t.Errorf("server: %v", err)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(handlers.Wait)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// read reads one frame from the client, which must be masked.
func (s *serverConn) read() (frame, error) {
	var h [2]byte
	if _, err := io.ReadFull(s.br, h[:]); err != nil {
		return frame{}, err
	}
	f := frame{fin: h[0]&0x80 != 0, op: h[0] & 0x0f}
	if h[1]&0x80 == 0 {
		return f, errors.New("unmasked frame from the client")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(s.br, b[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
		if n < 126 {
			return f, fmt.Errorf("length %d not in its shortest encoding", n)
		}
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(s.br, b[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(b[:])
		if n <= 0xffff {
			return f, fmt.Errorf("length %d not in its shortest encoding", n)
		}
	}
	var mask [4]byte
	if _, err := io.ReadFull(s.br, mask[:]); err != nil {
		return f, err
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(s.br, f.payload); err != nil {
		return f, err
	}
	maskBytes(f.payload, mask)
	return f, nil
}

// expect reads one frame and checks its opcode.
func (s *serverConn) expect(op byte) (frame, error) {
	f, err := s.read()
	if err == nil && f.op != op {
		err = fmt.Errorf("got opcode %#x (payload %q), want %#x", f.op, f.payload, op)
	}
	return f, err
}

// expectClose reads a close frame and checks its status code.
func (s *serverConn) expectClose(code int) error {
	f, err := s.expect(opClose)
	if err != nil {
		return err
	}
	if len(f.payload) < 2 {
		return fmt.Errorf("got close frame %q without a code, want code %d", f.payload, code)
	}
	if got := int(binary.BigEndian.Uint16(f.payload)); got != code {
		return fmt.Errorf("got close code %d, want %d", got, code)
	}
	return nil
}

// write writes one unmasked frame.
func (s *serverConn) write(fin bool, op byte, payload []byte) error {
	_, err := s.conn.Write(serverFrame(fin, op, payload))
	return err
}

// serverFrame encodes an unmasked frame.
func serverFrame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n <= 125:
		out = append(out, byte(n))
	case n <= 0xffff:
		out = append(out, 126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	return append(out, payload...)
}

// closePayload encodes a close frame's payload.
func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

// dialTest dials url with a short timeout and closes the connection at
// the end of the test.
func dialTest(t *testing.T, url string, maxMessage int) *wsConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := dialWS(ctx, url, maxMessage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
