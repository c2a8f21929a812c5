//go:build !agent

package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models/store"
)

// runAuditExport writes the chains as JSON Lines, one chain after another
// (--chain: that one only; --after: its entries after that seq).
func runAuditExport(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("audit export", stdout, stderr)
	target := adminFlags(fs)
	after := fs.Uint64("after", 0, "export the entries of --chain (chain 0 when not given) after this seq")
	chain := new(int)
	*chain = -1 // every chain; a flag.Func, so the help shows no -1
	fs.Func("chain", "export chain `N` only (default: every chain)", func(v string) error {
		n, err := strconv.ParseUint(v, 10, 32)
		*chain = int(n)
		return err
	})
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if fs.NArg() != 0 {
		return fs.usageError(2, "unexpected argument %q", fs.Arg(0))
	}
	if *chain == -1 && fs.given("after") {
		*chain = 0 // seqs count per chain; before there were several, --after was chain 0's
	}
	c, err := target.remote()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	var src auditSource
	if c != nil {
		src = apiSource{ctx: ctx, c: c}
	} else {
		st, closeDB, err := openExistingStore(*target.database)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		defer closeDB()
		src = storeSource{ctx: ctx, st: st}
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	err = func() error {
		chains := []uint32{uint32(*chain)}
		if *chain == -1 {
			if chains, err = src.chains(); err != nil {
				return err
			}
		}
		for _, ch := range chains {
			if err := eachAuditEntry(*after, func(after uint64) ([]store.AuditEntry, error) { return src.page(ch, after) },
				func(e store.AuditEntry) error { return enc.Encode(e) }); err != nil {
				return err
			}
		}
		return w.Flush()
	}()
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

// auditSource is where export and verify read the chains: the database or
// the API.
type auditSource interface {
	chains() ([]uint32, error)
	page(chain uint32, after uint64) ([]store.AuditEntry, error)
}

type storeSource struct {
	ctx context.Context
	st  *store.Store
}

func (s storeSource) chains() ([]uint32, error) {
	n, err := s.st.AuditChainCount(s.ctx)
	return chainList(n), err
}

func (s storeSource) page(chain uint32, after uint64) ([]store.AuditEntry, error) {
	rows, err := s.st.AuditEntries(s.ctx, chain, after, 1000)
	es := make([]store.AuditEntry, len(rows))
	for i := range rows {
		es[i] = rows[i].Entry()
	}
	return es, err
}

// apiSource reads the chains through GET /v1/audit; the signed head names
// the chains there are.
type apiSource struct {
	ctx context.Context
	c   *client.Client
}

func (s apiSource) chains() ([]uint32, error) {
	h, err := s.c.AuditHead(s.ctx)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(h.ChainHeads()))
	for _, ch := range h.ChainHeads() {
		out = append(out, ch.Chain)
	}
	return out, nil
}

func (s apiSource) page(chain uint32, after uint64) ([]store.AuditEntry, error) {
	p, err := s.c.Audit(s.ctx, chain, after, 1000)
	if err != nil {
		return nil, err
	}
	return p.Entries, nil
}

// chainList is chains 0 … n-1.
func chainList(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}

// runAuditVerify checks every link of the chain in the database or an export,
// and with --head that a head saved earlier is still in it.
func runAuditVerify(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("audit verify", stdout, stderr)
	target := adminFlags(fs)
	file := fs.String("file", "", "an export (JSON Lines) to verify instead of the database or the server")
	key := fs.String("key", "", "the server's public key for --head, the base64 public_key of /v1/keys (needed with --file; with --database or --url it pins the key instead of reading it there)")
	headFile := fs.String("head", "", "a saved GET /v1/audit/head answer the chain must still hold")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if fs.NArg() != 0 {
		return fs.usageError(2, "unexpected argument %q", fs.Arg(0))
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
		fmt.Fprintf(stderr, "gatehouse: audit chain broken at %s: %s\n", ce.Where(), ce.Why)
		return 1
	case err != nil && c != nil:
		reportAPIError(stderr, err)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	printVerified(stdout, v)
	return 0
}

// printVerified says how far every chain verified: as it read when there was
// one chain while only chain 0 has entries.
func printVerified(w io.Writer, v *store.ChainVerifier) {
	chains := v.Chains()
	if len(chains) == 0 || len(chains) == 1 && chains[0].Chain == 0 {
		h := v.Chain(0)
		fmt.Fprintf(w, "ok: %d entries, head %d %s\n", v.N, h.Seq, h.Hash)
		return
	}
	fmt.Fprintf(w, "ok: %d entries on %d chains\n", v.N, len(chains))
	for _, h := range chains {
		fmt.Fprintf(w, "chain %d: head %d %s\n", h.Chain, h.Seq, h.Hash)
	}
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
	// The server's own head, read first: every chain must reach it, so a
	// server that answers a chain cut short is caught without a saved head.
	now, err := c.AuditHead(ctx)
	if err != nil {
		return nil, err
	}
	v := store.NewChainVerifier()
	v.Head = head
	src := apiSource{ctx: ctx, c: c}
	for _, ch := range now.ChainHeads() {
		if err := eachAuditEntry(0, func(after uint64) ([]store.AuditEntry, error) { return src.page(ch.Chain, after) }, v.Next); err != nil {
			return v, err
		}
		if got := v.Chain(ch.Chain); got.Seq < ch.Seq {
			return v, &store.ChainError{Chain: ch.Chain, Seq: got.Seq + 1, Why: fmt.Sprintf("missing: the server's head is seq %d", ch.Seq)}
		}
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
	var last uint32 // the chain of the line before: where a bad line is reported
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e store.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return v, &store.ChainError{Chain: last, Seq: v.Chain(last).Seq + 1, Why: fmt.Sprintf("line %d is not an entry: %v", line, err)}
		}
		last = e.Chain
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
	if err := json.Unmarshal(b, &h); err != nil || (h.Hash == "" && len(h.Chains) == 0) || h.Signature == "" {
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
	if !db.Migrator().HasColumn(&store.Audit{}, "chain") {
		closeDB()
		return nil, nil, fmt.Errorf("database %s has its audit trail as one chain, from an older build: start gatehouse serve on it once to migrate (its entries stay as they are)", url)
	}
	return store.NewStore(db, nil), closeDB, nil
}
