//go:build !agent

package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models/store"
)

// runAudit exports and verifies the hash-chained audit trail.
func runAudit(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: gatehouse audit export|verify …")
		return 2
	}
	switch args[0] {
	case "export":
		return runAuditExport(ctx, args[1:], stdout, stderr)
	case "verify":
		return runAuditVerify(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "gatehouse: unknown audit command %q\n", args[0])
	return 2
}

// runAuditExport writes the chain after --after as JSON Lines.
func runAuditExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := adminFlags(fs)
	after := fs.Uint64("after", 0, "export the entries after this seq")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return 2
	}
	c, err := target.remote()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	page := func(after uint64) ([]store.AuditEntry, error) {
		p, err := c.Audit(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		return p.Entries, nil
	}
	if c == nil {
		st, closeDB, err := openExistingStore(*target.database)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		defer closeDB()
		page = func(after uint64) ([]store.AuditEntry, error) {
			rows, err := st.AuditEntries(ctx, after, 1000)
			es := make([]store.AuditEntry, len(rows))
			for i := range rows {
				es[i] = rows[i].Entry()
			}
			return es, err
		}
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	err = eachAuditEntry(*after, page, func(e store.AuditEntry) error { return enc.Encode(e) })
	if err == nil {
		err = w.Flush()
	}
	if err != nil && c != nil {
		reportAPIError(stderr, err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	return 0
}

// runAuditVerify checks every link of the chain in the database or an export,
// and with --head that a head saved earlier is still in it.
func runAuditVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := adminFlags(fs)
	file := fs.String("file", "", "an export (JSON Lines) to verify instead of the database or the server")
	key := fs.String("key", "", "the server's public key for --head, the base64 public_key of /v1/keys (needed with --file; with --database or --url it pins the key instead of reading it there)")
	headFile := fs.String("head", "", "a saved GET /v1/audit/head answer the chain must still hold")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return 2
	}
	if *file != "" && (target.given("database") || target.given("url") || target.given("token")) {
		fmt.Fprintln(stderr, "gatehouse: give --database, --url/--token or --file, only one")
		return 2
	}
	var head *store.SignedHead
	if *headFile != "" {
		h, err := readHead(*headFile)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 2
		}
		head = h
	}
	var v *store.ChainVerifier
	var err error
	var c *client.Client
	if *file == "" {
		if c, err = target.remote(); err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 2
		}
	}
	switch {
	case *file != "":
		v, err = verifyFile(*file, *key, head)
	case c != nil:
		v, err = verifyServer(ctx, c, *key, head)
	default:
		v, err = verifyDatabase(ctx, *target.database, *key, head)
	}
	var ce *store.ChainError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "gatehouse: audit chain broken at seq %d: %s\n", ce.Seq, ce.Why)
		return 1
	case err != nil && c != nil:
		reportAPIError(stderr, err)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	fmt.Fprintf(stdout, "ok: %d entries, head %d %s\n", v.N, v.Seq, v.Hash)
	return 0
}

func verifyDatabase(ctx context.Context, database, key string, head *store.SignedHead) (*store.ChainVerifier, error) {
	store, closeDB, err := openExistingStore(database)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	if head != nil {
		var pub ed25519.PublicKey
		if key != "" {
			pub, err = parseKey(key)
		} else {
			pub, err = store.PublicKey(ctx, head.KeyID)
		}
		if err != nil {
			return nil, err
		}
		if err := head.Verify(pub); err != nil {
			return nil, err
		}
	}
	return store.VerifyAudit(ctx, head)
}

// eachAuditEntry hands every entry after seq to emit, a page at a time.
func eachAuditEntry(after uint64, page func(after uint64) ([]store.AuditEntry, error), emit func(store.AuditEntry) error) error {
	for {
		es, err := page(after)
		if err != nil || len(es) == 0 {
			return err
		}
		for _, e := range es {
			if e.Seq <= after {
				return fmt.Errorf("audit entry %d came after %d: the pages go backwards", e.Seq, after)
			}
			if err := emit(e); err != nil {
				return err
			}
			after = e.Seq
		}
	}
}

// verifyServer checks the chain as the server's API answers it. The head's
// signature is checked with --key when given, else with the key the same
// server serves, which shows the server is consistent, not honest: pin --key
// for that.
func verifyServer(ctx context.Context, c *client.Client, key string, head *store.SignedHead) (*store.ChainVerifier, error) {
	if head != nil {
		var pub ed25519.PublicKey
		if key != "" {
			var err error
			if pub, err = parseKey(key); err != nil {
				return nil, err
			}
		} else {
			keys, err := c.Keys(ctx)
			if err != nil {
				return nil, err
			}
			if pub = keys[head.KeyID]; pub == nil {
				return nil, fmt.Errorf("the server serves no key %q, the one the saved head names", head.KeyID)
			}
		}
		if err := head.Verify(pub); err != nil {
			return nil, err
		}
	}
	v := store.NewChainVerifier()
	v.Head = head
	page := func(after uint64) ([]store.AuditEntry, error) {
		p, err := c.Audit(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		return p.Entries, nil
	}
	if err := eachAuditEntry(0, page, v.Next); err != nil {
		return v, err
	}
	return v, v.Finish()
}

func parseKey(key string) (ed25519.PublicKey, error) {
	pub, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("--key is not a base64 Ed25519 public key")
	}
	return ed25519.PublicKey(pub), nil
}

func verifyFile(path, key string, head *store.SignedHead) (*store.ChainVerifier, error) {
	if head != nil {
		if key == "" {
			return nil, errors.New("--head with --file needs --key, the server's public key")
		}
		pub, err := parseKey(key)
		if err != nil {
			return nil, err
		}
		if err := head.Verify(pub); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := store.NewChainVerifier()
	v.Head = head
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e store.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return v, &store.ChainError{Seq: v.Seq + 1, Why: fmt.Sprintf("line %d is not an entry: %v", line, err)}
		}
		if err := v.Next(e); err != nil {
			return v, err
		}
	}
	if err := sc.Err(); err != nil {
		return v, err
	}
	return v, v.Finish()
}

func readHead(path string) (*store.SignedHead, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var h store.SignedHead
	if err := json.Unmarshal(b, &h); err != nil || h.Hash == "" || h.Signature == "" {
		return nil, fmt.Errorf("--head %s is not a saved /v1/audit/head answer", path)
	}
	return &h, nil
}

// openExistingStore opens a database without creating or migrating it: the
// audit commands read evidence and must not make some.
func openExistingStore(url string) (*store.Store, func(), error) {
	if !store.IsPostgres(url) {
		path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite://"), "sqlite:")
		if _, err := os.Stat(path); err != nil {
			return nil, nil, fmt.Errorf("database %s: %w", url, err)
		}
	}
	db, err := store.OpenDB(url)
	if err != nil {
		return nil, nil, err
	}
	closeDB := func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	}
	if !db.Migrator().HasTable(&store.AuditHead{}) {
		closeDB()
		return nil, nil, fmt.Errorf("database %s has no audit chain yet: start gatehouse serve on it once to migrate", url)
	}
	return store.NewStore(db, nil), closeDB, nil
}
