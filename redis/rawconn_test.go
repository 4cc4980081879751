package redis_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// rawConn is one RESP3 connection to a Redis server, spoken by hand: the
// tests see every byte the server sends on it, push messages (client-side
// caching invalidations, Pub/Sub messages) included, which go-redis would
// consume or drop.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

// dialRaw connects to addr, says HELLO 3 with user and password (none if
// user is empty) and selects db.
func dialRaw(ctx context.Context, addr, user, password string, db int) (*rawConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{c: c, r: bufio.NewReader(c)}
	hello := []any{"HELLO", "3"}
	if user != "" {
		hello = append(hello, "AUTH", user, password)
	}
	if _, err := rc.do(ctx, hello...); err != nil {
		c.Close()
		return nil, fmt.Errorf("HELLO 3 on %s: %w", addr, err)
	}
	if db != 0 {
		if _, err := rc.do(ctx, "SELECT", db); err != nil {
			c.Close()
			return nil, err
		}
	}
	return rc, nil
}

func (rc *rawConn) Close() error { return rc.c.Close() }

// replyError is an error reply of the server.
type replyError string

func (e replyError) Error() string { return string(e) }

// send writes a command.
func (rc *rawConn) send(ctx context.Context, args ...any) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		s := fmt.Sprint(a)
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(s), s)
	}
	rc.deadline(ctx)
	_, err := io.WriteString(rc.c, b.String())
	return err
}

// do sends a command and reads the first value that follows, returned as
// text: its reply (a push, for SUBSCRIBE and the like), on a connection
// that was pushed nothing meanwhile; an error reply is a replyError.
func (rc *rawConn) do(ctx context.Context, args ...any) (string, error) {
	if err := rc.send(ctx, args...); err != nil {
		return "", err
	}
	_, text, err := rc.read(ctx)
	return text, err
}

// drain sends PING and reads until its reply, returning the text of
// everything read before it: what the server pushed meanwhile. The server
// writes a push it owes this connection before the reply to a command the
// connection sends later.
func (rc *rawConn) drain(ctx context.Context) (string, error) {
	if err := rc.send(ctx, "PING"); err != nil {
		return "", err
	}
	var out strings.Builder
	for {
		kind, text, err := rc.read(ctx)
		if err != nil {
			return out.String(), err
		}
		if kind == '+' && text == "PONG" {
			return out.String(), nil
		}
		out.WriteString(text)
		out.WriteByte('\n')
	}
}

func (rc *rawConn) deadline(ctx context.Context) {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Now().Add(30 * time.Second)
	}
	rc.c.SetDeadline(d)
}

// read reads one value, returning its type byte and its text (an
// aggregate's elements joined by spaces); an error reply is a replyError.
func (rc *rawConn) read(ctx context.Context) (byte, string, error) {
	rc.deadline(ctx)
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return 0, "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return 0, "", errors.New("empty RESP line")
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+', ':', ',', '(', '#', '_':
		return kind, rest, nil
	case '-':
		return kind, rest, replyError(rest)
	case '$', '!', '=':
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return kind, "", err // a null bulk string
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return kind, "", err
		}
		text := string(buf[:n])
		if kind == '!' {
			return kind, text, replyError(text)
		}
		return kind, text, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return kind, "", err
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		parts := make([]string, 0, n)
		for range n {
			_, text, err := rc.read(ctx)
			var re replyError
			if err != nil && !errors.As(err, &re) {
				return kind, "", err
			}
			parts = append(parts, text)
		}
		return kind, strings.Join(parts, " "), nil
	}
	return kind, "", fmt.Errorf("unexpected RESP type %q", kind)
}
