package browsertest

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Websocket opcodes (RFC 6455 section 5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
)

// Close status codes used here (RFC 6455 section 7.4.1).
const (
	closeNormal        = 1000
	closeProtocolError = 1002
	closeNoStatus      = 1005 // Never sent: a close frame without a code.
	closeInvalidData   = 1007
	closeTooBig        = 1009
)

// acceptGUID is the key suffix of the opening handshake (section 1.3).
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// writeTimeout bounds every frame write.
const writeTimeout = 10 * time.Second

// wsConn is the client end of a websocket (RFC 6455): it masks what it
// sends, reassembles fragmented messages, answers pings and echoes the
// peer's close frame. No extensions or subprotocols are negotiated.
//
// One goroutine may read (readMessage) while others write; writes are
// serialized.
type wsConn struct {
	conn       net.Conn
	br         *bufio.Reader
	maxMessage int // Largest message readMessage accepts, in bytes.

	wmu       sync.Mutex // Guards writes and closeSent.
	closeSent bool
}

// closeError is the error readMessage returns once the peer has closed
// the websocket.
type closeError struct {
	Code   int // closeNoStatus if the close frame had no code.
	Reason string
}

func (e *closeError) Error() string {
	return fmt.Sprintf("websocket closed by the peer: %d %s", e.Code, e.Reason)
}

// protocolError is a violation of RFC 6455 by the peer; the connection
// cannot be used after it. code is the close status that reports it.
type protocolError struct {
	code int
	msg  string
}

func (e *protocolError) Error() string { return "websocket protocol error: " + e.msg }

// dialWS opens a websocket to a ws:// URL. ctx bounds the opening
// handshake only.
func dialWS(ctx context.Context, rawURL string, maxMessage int) (*wsConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing websocket URL: %w", err)
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("websocket URL %q: only ws:// is supported", rawURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("dialing websocket: %w", err)
	}
	ws, err := handshake(ctx, conn, u, maxMessage)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return ws, nil
}

// handshake performs the client's opening handshake on conn.
func handshake(ctx context.Context, conn net.Conn, u *url.URL, maxMessage int) (*wsConn, error) {
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\n" +
		"Host: " + u.Host + "\r\n" +
		"Upgrade: websocket\r\n" +
		"Connection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\n" +
		"Sec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return nil, fmt.Errorf("sending websocket handshake: %w", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return nil, fmt.Errorf("reading websocket handshake: %w", err)
	}
	resp.Body.Close() // A 101 response has no body; br keeps any frame bytes.
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, fmt.Errorf("websocket handshake: got status %q, want 101", resp.Status)
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") || !headerHasToken(resp.Header, "Connection", "upgrade") {
		return nil, errors.New("websocket handshake: response lacks Upgrade: websocket and Connection: Upgrade")
	}
	if got, want := resp.Header.Get("Sec-WebSocket-Accept"), acceptKey(key); got != want {
		return nil, fmt.Errorf("websocket handshake: got Sec-WebSocket-Accept %q, want %q", got, want)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		return nil, fmt.Errorf("websocket handshake: server chose extensions %q that were not offered", ext)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	return &wsConn{conn: conn, br: br, maxMessage: maxMessage}, nil
}

// acceptKey returns the Sec-WebSocket-Accept value for a client key.
func acceptKey(key string) string {
	sum := sha1.Sum([]byte(key + acceptGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// headerHasToken reports whether the comma-separated header name
// contains token, ignoring case.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// writeText sends p as one text message in one frame.
func (c *wsConn) writeText(p []byte) error { return c.writeFrame(true, opText, p) }

// writeFrame sends one masked frame. After a close frame has been sent
// nothing more can be.
func (c *wsConn) writeFrame(fin bool, op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return errors.New("websocket: write after close")
	}
	if op == opClose {
		c.closeSent = true
	}
	b0 := op
	if fin {
		b0 |= 0x80
	}
	frame := make([]byte, 0, 14+len(payload))
	frame = append(frame, b0)
	switch n := len(payload); {
	case n <= 125:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xffff:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	start := len(frame)
	frame = append(frame, payload...)
	maskBytes(frame[start:], mask)
	if err := c.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return fmt.Errorf("websocket write: %w", err)
	}
	if _, err := c.conn.Write(frame); err != nil {
		return fmt.Errorf("websocket write: %w", err)
	}
	return nil
}

// maskBytes XORs p with the masking key, starting at key byte 0.
func maskBytes(p []byte, key [4]byte) {
	for i := range p {
		p[i] ^= key[i&3]
	}
}

// sendClose starts the closing handshake with a normal-closure frame.
// The peer's answering close frame makes readMessage return a
// *closeError.
func (c *wsConn) sendClose() error {
	return c.writeFrame(true, opClose, binary.BigEndian.AppendUint16(nil, closeNormal))
}

// Close closes the TCP connection at once, unblocking a reader.
func (c *wsConn) Close() error { return c.conn.Close() }

// readMessage returns the next complete text or binary message,
// answering pings and reassembling fragments on the way. Once the peer
// closes, it echoes the close frame (unless one was sent already) and
// returns a *closeError; on a protocol violation it sends a close frame
// saying so and returns a *protocolError. Either way the caller should
// then Close the connection.
func (c *wsConn) readMessage() (op byte, msg []byte, err error) {
	fragmented := false // Inside a message whose first frame had FIN clear.
	for {
		fin, fop, payload, err := c.readFrame()
		if err != nil {
			return 0, nil, c.fail(err)
		}
		switch fop {
		case opPing:
			if err := c.writeFrame(true, opPong, payload); err != nil {
				return 0, nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			return 0, nil, c.peerClosed(payload)
		case opContinuation:
			if !fragmented {
				return 0, nil, c.fail(&protocolError{closeProtocolError, "continuation frame outside a fragmented message"})
			}
			if len(msg)+len(payload) > c.maxMessage {
				return 0, nil, c.fail(&protocolError{closeTooBig, fmt.Sprintf("message larger than %d bytes", c.maxMessage)})
			}
			msg = append(msg, payload...)
		default: // Text or binary, as readFrame allows no other opcode.
			if fragmented {
				return 0, nil, c.fail(&protocolError{closeProtocolError, "new message inside a fragmented message"})
			}
			op, msg = fop, payload
		}
		if !fin {
			fragmented = true
			continue
		}
		if op == opText && !utf8.Valid(msg) {
			return 0, nil, c.fail(&protocolError{closeInvalidData, "text message is not valid UTF-8"})
		}
		return op, msg, nil
	}
}

// readFrame reads one frame and checks its header.
func (c *wsConn) readFrame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return false, 0, nil, err
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	if h[0]&0x70 != 0 {
		return false, 0, nil, &protocolError{closeProtocolError, "reserved bits set without a negotiated extension"}
	}
	switch op {
	case opContinuation, opText, opBinary, opClose, opPing, opPong:
	default:
		return false, 0, nil, &protocolError{closeProtocolError, fmt.Sprintf("unknown opcode %#x", op)}
	}
	if h[1]&0x80 != 0 {
		return false, 0, nil, &protocolError{closeProtocolError, "masked frame from the server"}
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(c.br, ext[:]); err != nil {
			return false, 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(c.br, ext[:]); err != nil {
			return false, 0, nil, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	if op >= opClose && (n > 125 || !fin) {
		return false, 0, nil, &protocolError{closeProtocolError, "control frame fragmented or longer than 125 bytes"}
	}
	if n > uint64(c.maxMessage) {
		return false, 0, nil, &protocolError{closeTooBig, fmt.Sprintf("frame of %d bytes, larger than the %d-byte limit", n, c.maxMessage)}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return false, 0, nil, err
	}
	return fin, op, payload, nil
}

// fail reports a protocol violation to the peer with a close frame,
// best effort (the connection is broken anyway), and returns err.
func (c *wsConn) fail(err error) error {
	if pe, ok := errors.AsType[*protocolError](err); ok {
		c.writeFrame(true, opClose, binary.BigEndian.AppendUint16(nil, uint16(pe.code)))
	}
	return err
}

// peerClosed handles a close frame from the peer: it echoes the code
// if no close frame was sent yet, and returns the *closeError.
func (c *wsConn) peerClosed(payload []byte) error {
	ce := &closeError{Code: closeNoStatus}
	switch {
	case len(payload) == 1:
		return c.fail(&protocolError{closeProtocolError, "close frame with a 1-byte payload"})
	case len(payload) >= 2:
		ce.Code = int(binary.BigEndian.Uint16(payload))
		ce.Reason = string(payload[2:])
		if !utf8.ValidString(ce.Reason) {
			return c.fail(&protocolError{closeInvalidData, "close reason is not valid UTF-8"})
		}
	}
	// Echo the code, unless we sent a close frame first (then this one
	// is the answer and writeFrame refuses a second).
	echo := payload
	if len(payload) >= 2 {
		echo = payload[:2]
	}
	c.writeFrame(true, opClose, echo)
	return ce
}
