package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// stampedConn is one waiter's raw TCP connection whose socket timestamps what
// it receives (SO_TIMESTAMPNS). On loopback the stamp is taken while the
// server's write is still in the kernel, so it tells when the server sent the
// answer whatever the client's own goroutines were doing: the server's figure.
type stampedConn struct {
	c  *net.TCPConn
	rc interface {
		Read(func(fd uintptr) bool) error
	}
}

func dialStamped(addr string) (*stampedConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	rc, err := tc.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	var soErr error
	if err := rc.Control(func(fd uintptr) { soErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }); err != nil || soErr != nil {
		c.Close()
		return nil, errors.Join(err, soErr)
	}
	return &stampedConn{c: tc, rc: rc}, nil
}

// answer is one waiter's HTTP response and when it came.
type answer struct {
	rx   time.Time // the kernel received the last segment of it
	held time.Time // the client had all of it
	resp []byte
}

// readAnswer reads one whole HTTP response (head and Content-Length body)
// with recvmsg, without waiting for the connection to close, and notes the
// kernel's stamp of the segment that completed it.
func (s *stampedConn) readAnswer() (answer, error) {
	buf := make([]byte, 0, 4096)
	var oob [64]byte
	var a answer
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n, oobn int
		var rerr error
		err := s.rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf[len(buf):cap(buf)], oob[:], 0)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			return a, err
		}
		if n == 0 {
			return a, io.ErrUnexpectedEOF
		}
		buf = buf[:len(buf)+n]
		if t, ok := stampOf(oob[:oobn]); ok {
			a.rx = t
		}
		if complete(buf) {
			a.held = time.Now()
			a.resp = buf
			return a, nil
		}
	}
}

// complete reports whether b holds a response head and its whole body.
func complete(b []byte) bool {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return false
	}
	const key = "\r\nContent-Length: "
	i := bytes.Index(b[:end+2], []byte(key))
	if i < 0 {
		return false
	}
	v := b[i+len(key):]
	v = v[:bytes.IndexByte(v, '\r')]
	n, err := strconv.Atoi(string(v))
	return err == nil && len(b)-(end+4) >= n
}

// stampOf is the SCM_TIMESTAMPNS stamp among the control messages in oob.
func stampOf(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}

// check parses a.resp as the HTTP response it must be: 200 with a JSON body.
func (a answer) check() error {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(a.resp)), nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || len(body) == 0 || body[0] != '{' {
		return fmt.Errorf("%d %q", resp.StatusCode, body)
	}
	if a.rx.IsZero() {
		return errors.New("no receive timestamp")
	}
	return nil
}
