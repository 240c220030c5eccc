package browsertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAcceptKey(t *testing.T) {
	// The example of RFC 6455 section 1.3.
	if got, want := acceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Errorf("got accept key %q, want %q", got, want)
	}
}

// TestEcho sends messages of every length encoding; the server checks
// they are masked and sends each back split into fragments with a ping
// before the last, then checks the client's pong.
func TestEcho(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		fragments int
	}{
		{name: "empty", size: 0, fragments: 1},
		{name: "one byte", size: 1, fragments: 1},
		{name: "7-bit length", size: 125, fragments: 1},
		{name: "16-bit length", size: 126, fragments: 1},
		{name: "16-bit max", size: 0xffff, fragments: 2},
		{name: "64-bit length", size: 0x10000, fragments: 3},
		{name: "large", size: 3 << 20, fragments: 5},
	}
	url := newWSServer(t, func(s *serverConn) error {
		for i := 0; ; i++ {
			f, err := s.read()
			if err != nil {
				return err
			}
			switch {
			case f.op == opClose:
				return s.write(true, opClose, f.payload[:2])
			case f.op != opText || !f.fin:
				return fmt.Errorf("got frame %+v, want one whole text message", f)
			}
			n := tests[i].fragments
			ping := fmt.Appendf(nil, "ping %d", i)
			for j := range n {
				op := byte(opContinuation)
				if j == 0 {
					op = opText
				}
				if j == n-1 { // Inside the message, if it is fragmented.
					if err := s.write(true, opPing, ping); err != nil {
						return err
					}
				}
				part := f.payload[j*len(f.payload)/n : (j+1)*len(f.payload)/n]
				if err := s.write(j == n-1, op, part); err != nil {
					return err
				}
			}
			pong, err := s.expect(opPong)
			if err != nil {
				return err
			}
			if !bytes.Equal(pong.payload, ping) {
				return fmt.Errorf("got pong %q, want %q", pong.payload, ping)
			}
		}
	})
	c := dialTest(t, url, maxMessage)
	for _, tt := range tests {
		msg := bytes.Repeat([]byte("héllo, "), tt.size/8+1)[:tt.size]
		msg = bytes.ToValidUTF8(msg[:len(msg)-len(msg)%8], nil) // Whole runes only.
		msg = append(msg, strings.Repeat("x", tt.size-len(msg))...)
		if err := c.writeText(msg); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		op, got, err := c.readMessage()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if op != opText || !bytes.Equal(got, msg) {
			t.Errorf("%s: got opcode %#x and %d bytes, want text and the %d bytes sent", tt.name, op, len(got), len(msg))
		}
	}
	if err := c.sendClose(); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.readMessage()
	if ce, ok := errors.AsType[*closeError](err); !ok || ce.Code != closeNormal {
		t.Errorf("got %v after closing, want the server's close frame with code %d", err, closeNormal)
	}
	if err := c.writeText([]byte("late")); err == nil {
		t.Error("got no error writing after close, want one")
	}
}

func TestBinaryAndControlOnly(t *testing.T) {
	url := newWSServer(t, func(s *serverConn) error {
		for _, f := range []frame{
			{fin: true, op: opPong, payload: []byte("unsolicited")},
			{fin: true, op: opBinary, payload: []byte{0xff, 0x00}},
			{fin: true, op: opClose},
		} {
			if err := s.write(f.fin, f.op, f.payload); err != nil {
				return err
			}
		}
		f, err := s.expect(opClose)
		if err == nil && len(f.payload) != 0 {
			err = fmt.Errorf("got close payload %q, want none echoed for a close without a code", f.payload)
		}
		return err
	})
	c := dialTest(t, url, maxMessage)
	op, msg, err := c.readMessage()
	if err != nil || op != opBinary || !bytes.Equal(msg, []byte{0xff, 0x00}) {
		t.Errorf("got %#x %q %v, want binary ff 00", op, msg, err)
	}
	_, _, err = c.readMessage()
	if ce, ok := errors.AsType[*closeError](err); !ok || ce.Code != closeNoStatus {
		t.Errorf("got %v, want a close without status (%d)", err, closeNoStatus)
	}
}

func TestPeerClose(t *testing.T) {
	url := newWSServer(t, func(s *serverConn) error {
		if err := s.write(true, opClose, closePayload(1001, "going away")); err != nil {
			return err
		}
		return s.expectClose(1001)
	})
	c := dialTest(t, url, maxMessage)
	_, _, err := c.readMessage()
	ce, ok := errors.AsType[*closeError](err)
	if !ok || ce.Code != 1001 || ce.Reason != "going away" {
		t.Errorf("got %v, want close 1001 going away", err)
	}
}

// TestProtocolErrors has the server break RFC 6455 in every way the
// client checks; the client must report it and send the right close code.
func TestProtocolErrors(t *testing.T) {
	cat := func(frames ...[]byte) []byte { return bytes.Join(frames, nil) }
	tests := []struct {
		name     string
		raw      []byte
		wantErr  string
		wantCode int
	}{
		{name: "masked", raw: []byte{0x81, 0x81, 1, 2, 3, 4, 'x'}, wantErr: "masked frame", wantCode: closeProtocolError},
		{name: "reserved bits", raw: []byte{0xc1, 0x01, 'x'}, wantErr: "reserved bits", wantCode: closeProtocolError},
		{name: "unknown opcode", raw: []byte{0x83, 0x00}, wantErr: "unknown opcode 0x3", wantCode: closeProtocolError},
		{name: "fragmented ping", raw: serverFrame(false, opPing, nil), wantErr: "control frame", wantCode: closeProtocolError},
		{name: "long ping", raw: serverFrame(true, opPing, make([]byte, 126)), wantErr: "control frame", wantCode: closeProtocolError},
		{name: "lone continuation", raw: serverFrame(true, opContinuation, []byte("x")), wantErr: "continuation frame outside", wantCode: closeProtocolError},
		{
			name:     "message inside a message",
			raw:      cat(serverFrame(false, opText, []byte("a")), serverFrame(true, opText, []byte("b"))),
			wantErr:  "new message inside",
			wantCode: closeProtocolError,
		},
		{name: "invalid UTF-8", raw: serverFrame(true, opText, []byte{0xff}), wantErr: "not valid UTF-8", wantCode: closeInvalidData},
		{
			name:     "UTF-8 split across fragments is fine until the end",
			raw:      cat(serverFrame(false, opText, []byte{0xc3}), serverFrame(true, opContinuation, []byte{0xa9, 0xff})),
			wantErr:  "not valid UTF-8",
			wantCode: closeInvalidData,
		},
		{name: "1-byte close", raw: serverFrame(true, opClose, []byte{3}), wantErr: "1-byte payload", wantCode: closeProtocolError},
		{name: "frame too big", raw: serverFrame(true, opText, make([]byte, 1025)), wantErr: "larger than the 1024-byte limit", wantCode: closeTooBig},
		{
			name:     "message too big",
			raw:      cat(serverFrame(false, opText, make([]byte, 1000)), serverFrame(true, opContinuation, make([]byte, 100))),
			wantErr:  "message larger than 1024",
			wantCode: closeTooBig,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := newWSServer(t, func(s *serverConn) error {
				if _, err := s.conn.Write(tt.raw); err != nil {
					return err
				}
				return s.expectClose(tt.wantCode)
			})
			c := dialTest(t, url, 1024)
			_, _, err := c.readMessage()
			if _, ok := errors.AsType[*protocolError](err); !ok || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want a protocol error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestHandshakeErrors(t *testing.T) {
	tests := []struct {
		name     string
		response string
		wantErr  string
	}{
		{name: "not upgraded", response: "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", wantErr: `got status "403 Forbidden", want 101`},
		{
			name:     "wrong accept",
			response: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n",
			wantErr:  `got Sec-WebSocket-Accept "AAAA"`,
		},
		{
			name:     "no upgrade header",
			response: "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n",
			wantErr:  "lacks Upgrade",
		},
		{name: "garbage", response: "SSH-2.0-OpenSSH\r\n\r\n", wantErr: "reading websocket handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijacking: %v", err)
					return
				}
				defer conn.Close()
				conn.Write([]byte(tt.response))
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			c, err := dialWS(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), maxMessage)
			if err == nil {
				c.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestHandshakeTimeout dials a server that never answers.
func TestHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = dialWS(ctx, "ws://"+ln.Addr().String()+"/", maxMessage)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("got %v after %v, want an error soon after 100ms", err, time.Since(start))
	}
}
