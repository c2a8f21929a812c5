package hookanswer_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

type rec struct {
	id      string
	settled bool
}

func settled(r rec) (bool, string) { return r.settled, r.id }

func TestFileFresh(t *testing.T) {
	// named maps a key to the record it already names; any other key files anew.
	run := func(named map[string]rec, keyedByCall bool) (rec, []string, error) {
		var keys []string
		r, err := hookanswer.FileFresh("k", keyedByCall, func(key string) (rec, bool, error) {
			keys = append(keys, key)
			if r, ok := named[key]; ok {
				return r, false, nil
			}
			return rec{id: "new"}, true, nil
		}, settled)
		return r, keys, err
	}
	t.Run("a settled record an earlier call filed is filed again under a chained key", func(t *testing.T) {
		r, keys, err := run(map[string]rec{"k": {"r1", true}}, false)
		if err != nil || r.id != "new" || !slices.Equal(keys, []string{"k", "k:r1"}) {
			t.Fatalf("got %v %v %v", r, keys, err)
		}
	})
	t.Run("an open record the key names is this call's", func(t *testing.T) {
		r, keys, err := run(map[string]rec{"k": {"r1", false}}, false)
		if err != nil || r.id != "r1" || len(keys) != 1 {
			t.Fatalf("got %v %v %v", r, keys, err)
		}
	})
	t.Run("a key naming one tool call is never chained", func(t *testing.T) {
		r, keys, err := run(map[string]rec{"k": {"r1", true}}, true)
		if err != nil || r.id != "r1" || len(keys) != 1 {
			t.Fatalf("got %v %v %v", r, keys, err)
		}
	})
	t.Run("every key settled gives up after three filings", func(t *testing.T) {
		named := map[string]rec{"k": {"a", true}, "k:a": {"b", true}, "k:a:b": {"c", true}}
		_, keys, err := run(named, false)
		if !errors.Is(err, hookanswer.ErrAllSettled) || len(keys) != 3 {
			t.Fatalf("got %v %v", keys, err)
		}
	})
	t.Run("a filing error is returned as it is", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := hookanswer.FileFresh("k", false, func(string) (rec, bool, error) { return rec{}, false, boom }, settled)
		if !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
	})
}
