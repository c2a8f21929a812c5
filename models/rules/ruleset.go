package rules

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// RuleSet holds the rules in force. Readers take the current *Rules without a
// lock; a reload swaps in a whole new one, so a request is judged by one version
// of the file, never half of two.
type RuleSet struct {
	cur atomic.Pointer[Rules]
}

// NewRuleSet returns a set holding rs (nil: no rules).
func NewRuleSet(rs *Rules) *RuleSet {
	s := &RuleSet{}
	s.cur.Store(rs)
	return s
}

// Current returns the rules in force; nil (which matches nothing) when none.
func (s *RuleSet) Current() *Rules {
	if s == nil {
		return nil
	}
	return s.cur.Load()
}

// Swap puts rs in force and returns what it replaced.
func (s *RuleSet) Swap(rs *Rules) *Rules { return s.cur.Swap(rs) }

// Reload reads path and, if it compiles, puts it in force. A broken file keeps
// the rules in force and returns the error (with line and column).
func (s *RuleSet) Reload(path string) (*Rules, error) {
	rs, err := LoadRules(path)
	if err != nil {
		return nil, err
	}
	s.Swap(rs)
	return rs, nil
}

// debounce lets an editor finish writing (truncate, write, rename) before the
// file is read.
const debounce = 100 * time.Millisecond

// WatchRules reloads path into set on each value from hup (SIGHUP) and whenever
// the file changes on disk, until ctx ends. Each attempt is logged; report, when
// set, is told of it too (tests wait on it). A file that did not change (same
// digest) is not reported.
func WatchRules(ctx context.Context, path string, set *RuleSet, hup <-chan os.Signal, report func(*Rules, error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch rules: %w", err)
	}
	defer w.Close()
	// Watch the directory: editors and config maps replace the file by rename,
	// which a watch on the file itself would lose.
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		return fmt.Errorf("watch rules: %w", err)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	reload := func(why string) {
		old := set.Current()
		rs, err := set.Reload(path)
		switch {
		case err != nil:
			slog.Error("rules reload failed; the rules in force stay", "file", path, "why", why, "err", err)
		case old != nil && old.Digest == rs.Digest && why != "sighup":
			return
		default:
			slog.Info("rules reloaded", "file", path, "why", why, "rules", rs.Len(), "digest", rs.Digest[:12])
		}
		if report != nil {
			report(rs, err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-hup:
			if !ok {
				hup = nil
				continue
			}
			reload("sighup")
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) == abs && !ev.Has(fsnotify.Chmod) {
				timer.Reset(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			slog.Error("rules watch", "file", path, "err", err)
		case <-timer.C:
			reload("changed on disk")
		}
	}
}
