package rules_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models/rules"
	"go.uber.org/goleak"
)

const denyAll = "rules:\n  - name: deny-all\n    action: deny\n"
const approveAll = "rules:\n  - name: approve-all\n    action: approve\n"

func write(t *testing.T, path, src string) {
	t.Helper()
	// Write beside and rename, as editors and config tools do.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestRuleSetReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	write(t, path, denyAll)
	first, err := rules.LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	set := rules.NewRuleSet(first)

	t.Run("a broken file keeps the rules in force", func(t *testing.T) {
		write(t, path, "rules:\n  - name: x\n    action: maybe\n")
		_, err := set.Reload(path)
		var re *rules.RuleError
		if !errors.As(err, &re) || re.Line != 3 || re.Column != 13 {
			t.Fatalf("err %v", err)
		}
		if set.Current() != first || set.Current().Evaluate(req(nil)).Rule != "deny-all" {
			t.Fatal("the old rules were not kept")
		}
	})

	t.Run("a missing file keeps the rules in force", func(t *testing.T) {
		if _, err := set.Reload(filepath.Join(dir, "nope.yaml")); err == nil || set.Current() != first {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("a good file is swapped in whole", func(t *testing.T) {
		write(t, path, approveAll)
		if _, err := set.Reload(path); err != nil {
			t.Fatal(err)
		}
		if v := set.Current().Evaluate(req(nil)); v.Rule != "approve-all" || v.Option != "once" {
			t.Fatalf("%+v", v)
		}
	})

	t.Run("readers see one file or the other, never a mix", func(t *testing.T) {
		a, b := mustRules(t, denyAll), mustRules(t, approveAll)
		r := req(nil)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					set.Swap(a)
				} else {
					set.Swap(b)
				}
			}
		}()
		for range 10000 {
			v := set.Current().Evaluate(r)
			if !(v.Rule == "deny-all" && v.Option == "deny") && !(v.Rule == "approve-all" && v.Option == "once") {
				t.Errorf("mixed verdict %+v", v)
				break
			}
		}
		close(stop)
		testkit.Wait(t, &wg, "the concurrent calls to finish")
	})
}

type reload struct {
	rules *rules.Rules
	err   error
}

func TestWatchRules(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	write(t, path, denyAll)
	first, err := rules.LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	set := rules.NewRuleSet(first)
	hup := make(chan os.Signal, 1)
	reloads := make(chan reload, 16)
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- rules.WatchRules(wctx, path, set, hup, func(rs *rules.Rules, err error) { reloads <- reload{rs, err} })
	}()
	defer func() {
		cancel()
		if err := testkit.Recv(t, done, "the watcher to stop"); err != nil {
			t.Error(err)
		}
	}()

	t.Run("SIGHUP reloads", func(t *testing.T) {
		hup <- syscall.SIGHUP
		got := testkit.Recv(t, reloads, "a reload")
		if got.err != nil || got.rules.Digest != first.Digest || set.Current() == first {
			t.Fatalf("%+v", got)
		}
	})

	t.Run("a change on disk reloads", func(t *testing.T) {
		write(t, path, approveAll)
		got := testkit.Recv(t, reloads, "a reload")
		if got.err != nil || set.Current().Evaluate(req(nil)).Rule != "approve-all" {
			t.Fatalf("%+v", got)
		}
	})

	t.Run("a broken change keeps the rules and reports line and column", func(t *testing.T) {
		before := set.Current()
		write(t, path, "rules:\n  - name: x\n    match:\n      command: '('\n    action: deny\n")
		got := testkit.Recv(t, reloads, "a reload")
		var re *rules.RuleError
		if !errors.As(got.err, &re) || re.Line != 4 || re.Column != 16 {
			t.Fatalf("err %v", got.err)
		}
		if set.Current() != before {
			t.Fatal("the rules in force changed")
		}
	})
}
