package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// OpenDB opens the database a URL names: "sqlite:PATH" for the embedded
// default, "postgres://…" for scale-out. It does not migrate.
func OpenDB(url string) (*gorm.DB, error) {
	if err := CheckURL(url); err != nil {
		return nil, err
	}
	if IsPostgres(url) {
		db, err := gorm.Open(postgres.Open(url), gormConfig())
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, err
		}
		sqlDB.SetMaxOpenConns(20)
		sqlDB.SetMaxIdleConns(10)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		return db, nil
	}
	path, _ := SQLitePath(url)
	// SQLite reports a missing directory as "out of memory (14)".
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("database %q: directory %s does not exist", url, dir)
		} else if err == nil && !st.IsDir() {
			return nil, fmt.Errorf("database %q: %s is not a directory", url, dir)
		}
	}
	db, err := openSQLite(path, false)
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	// SQLite has one writer; one connection makes every transaction take its turn
	// instead of failing with SQLITE_BUSY on upgrade (and the store's group
	// commit shares that turn among the writers queued for it).
	sqlDB.SetMaxOpenConns(1)
	return db, nil
}

// checkpointEvery is how many writers the group commit lets commit (in ten
// batches or more) between its checkpoints of the WAL: alone, a decision or a
// filing adds seven to ten frames, so about SQLite's own threshold of 1,000.
const checkpointEvery = 100

// readers is the size of the SQLite reader pool: enough that reads run on
// both cores while the writer holds its connection.
const readers = 4

// OpenReadDB opens the reader pool of a SQLite database URL: query_only
// connections that WAL lets read the last commit while the writer writes. It
// returns nil for PostgreSQL, whose one pool serves reads and writes.
func OpenReadDB(url string) (*gorm.DB, error) {
	path, ok := SQLitePath(url)
	if !ok || path == "" {
		return nil, nil
	}
	db, err := openSQLite(path, true)
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(readers)
	sqlDB.SetMaxIdleConns(readers)
	return db, nil
}

// openSQLite opens path in WAL mode with synchronous=FULL: in WAL mode FULL
// fsyncs the log at every COMMIT, so a committed write survives a power loss
// (NORMAL may lose the last commits). WAL lets readers (the reader pool, the
// token CLI) work beside the writer; busy_timeout makes other processes'
// writes wait rather than fail. temp_store=MEMORY keeps the savepoint journal
// of a group commit in memory: on disk it was a file write per page changed.
// The writer's automatic checkpoint waits for 4,000 frames: the group commit
// checkpoints after about 1,000, once their callers are answered (checkpoint),
// and SQLite's own, inside a COMMIT, is left as the backstop.
func openSQLite(path string, readOnly bool) (*gorm.DB, error) {
	dsn := path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(4000)&_txlock=immediate"
	if readOnly {
		dsn = path + "?_pragma=busy_timeout(10000)&_pragma=query_only(1)"
	}
	// Prepared statements: parsing and planning SQL was a quarter of a write's
	// CPU, and the driver keeps a prepared statement compiled between runs.
	// The TTL is GORM's "never expire", the one value that starts no sweeper
	// goroutine per pool; the size bounds the statements built for IN lists.
	//
	// Readers only. The writer's group commits keep their own (stmtCache), and
	// GORM's cache deadlocks a one-connection pool: a statement being prepared
	// outside a transaction waits for the connection, while the transaction
	// holding it waits for that same cache entry to finish preparing (a login
	// link's transaction against the start's HasOperator hung for 30 s in CI).
	conf := gormConfig()
	conf.PrepareStmt = readOnly
	conf.PrepareStmtMaxSize = 512
	conf.PrepareStmtTTL = 10 * 365 * 24 * time.Hour
	db, err := gorm.Open(newSQLiteDialector(dsn), conf)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return db, nil
}

func gormConfig() *gorm.Config {
	return &gorm.Config{
		TranslateError: true,
		NowFunc:        func() time.Time { return time.Now().UTC() },
		Logger:         logger.Discard,
	}
}

// CheckURL refuses a database URL OpenDB cannot open, naming the forms it
// takes. A bare path is refused too: "/srv/g.db" and "sqlite:/srv/g.db" would
// look alike in a unit file while one of them was a typo of a PostgreSQL URL.
func CheckURL(url string) error {
	const forms = "sqlite:PATH (e.g. sqlite:/var/lib/gatehouse/gatehouse.db) or postgres://USER:PASSWORD@HOST/DATABASE"
	path, ok := SQLitePath(url)
	switch {
	case IsPostgres(url):
		return nil
	case ok && path == "":
		return fmt.Errorf("database %q names no file; use %s", url, forms)
	case ok:
		return nil
	case !strings.Contains(url, ":"):
		return fmt.Errorf("database %q has no scheme; for a SQLite file write sqlite:%s; the forms are %s", url, url, forms)
	}
	return fmt.Errorf("database %q: unknown scheme; use %s", url, forms)
}

// SQLitePath is the file a SQLite database URL names ("sqlite:PATH" or
// "sqlite://PATH"); ok is false for any other URL.
func SQLitePath(url string) (path string, ok bool) {
	if IsPostgres(url) {
		return "", false
	}
	if p, found := strings.CutPrefix(url, "sqlite://"); found {
		return p, true
	}
	if p, found := strings.CutPrefix(url, "sqlite:"); found {
		return p, true
	}
	return "", false
}

// IsPostgres reports whether a database URL names PostgreSQL.
func IsPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Migrate creates or updates the schema.
func Migrate(db *gorm.DB) error {
	// One table a line, so features add theirs without touching the others'.
	err := db.AutoMigrate(
		&models.Token{}, &models.Session{}, &models.LoginTicket{}, &models.Request{}, &Audit{},
		&models.Device{}, &Setting{}, &PushClaim{},
		&models.Runtime{}, &Forward{}, &ServerKey{},
		&models.Grant{},
		&ChatMessage{}, &ChatLink{}, &ChatLinkCode{}, &ChatCallback{},
		&models.Remembered{},
		&AuditHead{},
		&models.Availability{},
		&models.AgentSession{},
		&models.Suggestion{}, &models.SuggestionDecision{},
		&ReviewDay{},
	)
	if err != nil {
		return err
	}
	if err := scopePendingIDs(db); err != nil {
		return err
	}
	if err := nameSessions(db); err != nil {
		return err
	}
	if err := dropFullIndexes(db); err != nil {
		return err
	}
	return migrateAuditChain(db)
}

// fullIndexes are the indexes on requests' nullable columns from before they
// were partial (the *_set indexes AutoMigrate makes beside them): NULL in most
// rows, they cost most filings a page write each for entries no query reads.
var fullIndexes = []string{"idx_requests_runtime_id", "idx_requests_owner_pending", "idx_requests_idem", "idx_requests_hold_until"}

// dropFullIndexes drops fullIndexes where a database still has them.
func dropFullIndexes(db *gorm.DB) error {
	m := db.Migrator()
	for _, name := range fullIndexes {
		if !m.HasIndex(&models.Request{}, name) {
			continue
		}
		if err := m.DropIndex(&models.Request{}, name); err != nil {
			return fmt.Errorf("drop index %s: %w", name, err)
		}
	}
	return nil
}

// scopePendingIDs moves a database made when pending ids were unique across
// owners (which let one runtime learn another's ids) to ids unique per owner:
// it drops the old unique index on requests and re-keys grants on (owner_id,
// pending_id). AutoMigrate changes neither.
func scopePendingIDs(db *gorm.DB) error {
	m := db.Migrator()
	if m.HasIndex(&models.Request{}, "idx_requests_pending_id") {
		if err := m.DropIndex(&models.Request{}, "idx_requests_pending_id"); err != nil {
			return err
		}
	}
	cols, err := m.ColumnTypes(&models.Grant{})
	if err != nil {
		return err
	}
	for _, c := range cols {
		if pk, ok := c.PrimaryKey(); c.Name() != "owner_id" || !ok || pk {
			continue
		}
		if db.Dialector.Name() == "postgres" {
			return db.Exec("ALTER TABLE grants DROP CONSTRAINT grants_pkey, ADD PRIMARY KEY (owner_id, pending_id)").Error
		}
		// SQLite cannot change a primary key: copy into a new table.
		return db.Transaction(func(tx *gorm.DB) error {
			const cols = "owner_id, pending_id, digest, request_id, sandbox, policy, middleware, method, host, port, path, query, body_sha256, state, created_at, expires_at, claimed_at"
			for _, q := range []string{
				"ALTER TABLE grants RENAME TO grants_global_ids",
				"DROP INDEX IF EXISTS idx_grants_digest",
				"DROP INDEX IF EXISTS idx_grants_request_id",
			} {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
			if err := tx.Migrator().CreateTable(&models.Grant{}); err != nil {
				return err
			}
			if err := tx.Exec("INSERT INTO grants (" + cols + ") SELECT " + cols + " FROM grants_global_ids").Error; err != nil {
				return err
			}
			return tx.Exec("DROP TABLE grants_global_ids").Error
		})
	}
	return nil
}

// nameSessions gives sessions opened before sessions had ids one (derived
// from the hash, which no one can turn back into the cookie) and a last-seen
// time, so they can be listed, revoked and expire by disuse.
func nameSessions(db *gorm.DB) error {
	if err := db.Exec("UPDATE sessions SET id = 'ses_' || substr(hash, 1, 24) WHERE id IS NULL OR id = ''").Error; err != nil {
		return err
	}
	return db.Exec("UPDATE sessions SET last_seen_at = created_at WHERE last_seen_at IS NULL").Error
}
