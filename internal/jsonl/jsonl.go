// Package jsonl reads newline-delimited message streams, the framing of the
// JSON-RPC the agent bridges relay over stdio (ACP, Codex's app-server).
package jsonl

import (
	"bufio"
	"io"
)

// EachLine calls fn with each newline-terminated message (the newline kept),
// and a last one without a newline. It stops at the first error of fn or of
// r, and returns it; the end of r is no error.
func EachLine(r io.Reader, fn func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
