package jsonl_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gatehousehq/gatehouse/internal/jsonl"
)

func TestEachLine(t *testing.T) {
	collect := func(r io.Reader, stopAt int) ([]string, error) {
		var got []string
		err := jsonl.EachLine(r, func(line []byte) error {
			got = append(got, string(line))
			if len(got) == stopAt {
				return errStop
			}
			return nil
		})
		return got, err
	}
	t.Run("lines keep their newline, a last partial line comes too", func(t *testing.T) {
		got, err := collect(strings.NewReader("{\"a\":1}\n{\"b\":2}\n{\"c\":"), 0)
		if err != nil || !slices.Equal(got, []string{"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":"}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a line longer than the buffer is one message", func(t *testing.T) {
		long := strings.Repeat("x", 200<<10) + "\n"
		got, err := collect(iotest.HalfReader(strings.NewReader(long)), 0)
		if err != nil || len(got) != 1 || got[0] != long {
			t.Fatalf("got %d messages, %v", len(got), err)
		}
	})
	t.Run("an error of fn stops the reading", func(t *testing.T) {
		got, err := collect(strings.NewReader("1\n2\n3\n"), 2)
		if !errors.Is(err, errStop) || len(got) != 2 {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a read error ends it, after the data before it", func(t *testing.T) {
		broken := errors.New("pipe broke")
		got, err := collect(io.MultiReader(strings.NewReader("1\n2"), iotest.ErrReader(broken)), 0)
		if !errors.Is(err, broken) || !slices.Equal(got, []string{"1\n", "2"}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
}

var errStop = errors.New("stop")
