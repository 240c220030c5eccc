package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// maxMessage bounds one CDP message; screenshots of big pages come as
// base64 in one message.
const maxMessage = 256 << 20

// cdpConn is a Chrome DevTools Protocol client over one websocket to the
// browser endpoint. Page sessions are multiplexed on it with flattened
// session IDs (Target.attachToTarget with flatten: true). A goroutine
// reads messages and hands responses to their callers and events to
// subscriptions; it ends when the websocket does.
type cdpConn struct {
	ws   *wsConn
	done chan struct{} // Closed when the reader goroutine has ended.
	err  error         // Why it ended; read only after done is closed.

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	subs    map[*subscription]struct{}
}

// cdpMessage is a command, response or event.
type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *CDPError       `json:"error,omitempty"`
}

// CDPError is an error response from the browser to a command.
type CDPError struct {
	Method  string `json:"-"` // The command that failed.
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *CDPError) Error() string {
	s := fmt.Sprintf("%s: %s (%d)", e.Method, e.Message, e.Code)
	if e.Data != "" {
		s += ": " + e.Data
	}
	return s
}

// dialCDP connects to a browser's DevTools websocket URL.
func dialCDP(ctx context.Context, url string) (*cdpConn, error) {
	ws, err := dialWS(ctx, url, maxMessage)
	if err != nil {
		return nil, err
	}
	c := &cdpConn{
		ws:      ws,
		done:    make(chan struct{}),
		pending: map[int64]chan cdpMessage{},
		subs:    map[*subscription]struct{}{},
	}
	go c.read()
	return c, nil
}

// read dispatches incoming messages until the websocket fails or closes.
func (c *cdpConn) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.readMessage()
		if err != nil {
			c.err = err
			c.ws.Close()
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(data, &m); err != nil {
			c.err = fmt.Errorf("decoding a CDP message: %w", err)
			c.ws.Close()
			return
		}
		c.mu.Lock()
		if m.ID != 0 {
			if ch := c.pending[m.ID]; ch != nil {
				ch <- m // Buffered: never blocks.
				delete(c.pending, m.ID)
			}
		} else {
			for s := range c.subs {
				if s.session == m.SessionID && s.method == m.Method {
					s.push(m.Params)
				}
			}
		}
		c.mu.Unlock()
	}
}

// call sends a command in a session ("" for the browser) and decodes
// its result into result, if not nil.
func (c *cdpConn) call(ctx context.Context, session, method string, params, result any) error {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return fmt.Errorf("%s: encoding parameters: %w", method, err)
		}
	}
	ch := make(chan cdpMessage, 1)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	data, err := json.Marshal(cdpMessage{ID: id, SessionID: session, Method: method, Params: raw})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.ws.writeText(data); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			m.Error.Method = method
			return m.Error
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: decoding the result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, context.Cause(ctx))
	case <-c.done:
		return fmt.Errorf("%s: connection to the browser lost: %w", method, c.err)
	}
}

// close ends the connection with a closing handshake, waiting at most
// timeout for the browser's answer, then waits for the reader to end.
// There is nothing to report: the browser may have gone already.
func (c *cdpConn) close(timeout time.Duration) {
	if c.ws.sendClose() == nil {
		select {
		case <-c.done:
		case <-time.After(timeout):
		}
	}
	c.ws.Close()
	<-c.done
}

// subscription queues the events of one method in one session, without
// bound, from the moment it is made until cancel.
type subscription struct {
	c               *cdpConn
	session, method string

	mu     sync.Mutex
	queue  []json.RawMessage
	notify chan struct{} // Capacity 1: "the queue may be non-empty".
}

// subscribe starts queueing events. Subscribe before sending the
// command that causes the event, so that it cannot be missed.
func (c *cdpConn) subscribe(session, method string) *subscription {
	s := &subscription{c: c, session: session, method: method, notify: make(chan struct{}, 1)}
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	return s
}

// cancel stops the subscription.
func (s *subscription) cancel() {
	s.c.mu.Lock()
	delete(s.c.subs, s)
	s.c.mu.Unlock()
}

func (s *subscription) push(params json.RawMessage) {
	s.mu.Lock()
	s.queue = append(s.queue, params)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// next returns the parameters of the next event, waiting until one
// comes, ctx ends or the connection is lost.
func (s *subscription) next(ctx context.Context) (json.RawMessage, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			p := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return p, nil
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", s.method, context.Cause(ctx))
		case <-s.c.done:
			return nil, fmt.Errorf("waiting for %s: connection to the browser lost: %w", s.method, s.c.err)
		}
	}
}
