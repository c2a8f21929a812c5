package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"gorm.io/gorm"

	"github.com/gatehousehq/gatehouse/internal/phase"
)

// maxBatch caps how many writers share one SQLite transaction, so a batch's
// COMMIT (and the callers it answers) never waits on an unbounded queue.
const maxBatch = 128

// groupCommit makes concurrent writers' transactions share one transaction
// and so one fsync: with synchronous=FULL the fsync of COMMIT is most of a
// write's cost, and SQLite has one writer anyway. On PostgreSQL every writer
// holds an audit chain's head row to its commit's WAL flush, so a batch pays
// that flush once for all its writers; other replicas' batches take other
// chains' heads (lockHead) and run beside it.
//
// Each queued function runs in its own SAVEPOINT: one that fails is rolled back
// to it and gets its own error, the others commit. Every caller is answered
// only after the one COMMIT, and the committed functions' announcements are
// made after it too. There is no goroutine of its own: the first writer to
// find no batch running leads one (its own function and whatever queued while
// the previous COMMIT ran); a leader whose batch left a queue hands the lead
// to a fresh goroutine, so no caller waits on more than the batch after its own.
type groupCommit struct {
	db    *gorm.DB   // SQLite: the single writer connection; PostgreSQL: the pool
	stmts *stmtCache // SQLite only: the writer's statements kept prepared
	// headFirst (PostgreSQL) locks a free audit chain's head at BEGIN, before
	// any job's row: a batch holds the head while its later jobs lock their
	// rows, so every appender must take its head first, or a batch and a
	// transaction elsewhere holding one of those rows while it waits for a
	// head deadlock. Two batches on different chains may still wait for each
	// other's request rows; PostgreSQL then fails one writer's statement,
	// which is rolled back to its savepoint and answered with the error alone.
	headFirst bool
	// checkpointEvery (SQLite): after this many writers, in ten batches or
	// more, the leader checkpoints the WAL once it has answered them. Only a
	// leader touches the counts.
	checkpointEvery, sinceCheckpoint, commitsSince int

	mu      sync.Mutex
	queue   []*writeJob
	running bool

	// Tests' hooks: queued is told the queue's length after each arrival,
	// committed the size of each batch after its COMMIT.
	queued    func(n int)
	committed func(n int)
	// checkpointing, for tests, runs at the start of each checkpoint.
	checkpointing func()
}

// writeJob is one caller's transaction function and its answer.
type writeJob struct {
	ctx      context.Context
	fn       func(tx *gorm.DB) error
	inTx     func(tx *gorm.DB) error // announces inside the transaction; nil: none
	err      error
	answered chan struct{}
}

// do runs fn in the next batch and returns its error once the batch's COMMIT
// has returned (or the COMMIT's error, which then fails every function in it).
func (g *groupCommit) do(ctx context.Context, fn, inTx func(tx *gorm.DB) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	j := &writeJob{ctx: ctx, fn: fn, inTx: inTx, answered: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, j)
	lead := !g.running
	g.running = true
	n := len(g.queue)
	g.mu.Unlock()
	if g.queued != nil {
		g.queued(n)
	}
	if lead {
		g.lead()
	}
	<-j.answered
	return j.err
}

// lead commits one batch, then checkpoints when one is due, and passes the
// lead on if more writers queued.
func (g *groupCommit) lead() {
	g.mu.Lock()
	batch := g.queue
	if len(batch) > maxBatch {
		batch = batch[:maxBatch:maxBatch]
	}
	g.queue = g.queue[len(batch):]
	g.mu.Unlock()

	g.commit(batch)
	if g.checkpointEvery > 0 {
		g.sinceCheckpoint += len(batch)
		g.commitsSince++
		if g.sinceCheckpoint >= g.checkpointEvery && g.commitsSince >= checkpointBatches {
			g.sinceCheckpoint, g.commitsSince = 0, 0
			go g.checkpoint() // the lead stays taken: no batch runs during it
			return
		}
	}

	g.mu.Lock()
	more := len(g.queue) > 0
	g.running = more
	g.mu.Unlock()
	if more {
		go g.lead()
	}
}

// checkpointBatches is the fewest batches between two checkpoints, so that
// large batches (a hundred writers each) do not checkpoint after every one.
const checkpointBatches = 10

// checkpoint copies the WAL's frames back into the database, then leads the
// writers that queued meanwhile. SQLite would do it inside the COMMIT that
// takes the WAL past its threshold, holding that batch's callers for one more
// write and fsync of the database file; here it runs after they are answered,
// still holding the lead, so no frame is added during it and the next write
// starts the WAL over from its beginning (overwriting a file of the same size
// costs one fsync of data; growing it costs the file system's journal too).
func (g *groupCommit) checkpoint() {
	if g.checkpointing != nil {
		g.checkpointing()
	}
	if sqlDB, err := g.db.DB(); err == nil {
		// An error leaves the frames for the next checkpoint, or for SQLite's
		// own at the writer's threshold (openSQLite).
		_, _ = sqlDB.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
	}
	g.mu.Lock()
	more := len(g.queue) > 0
	g.running = more
	g.mu.Unlock()
	if more {
		g.lead()
	}
}

// commit runs batch in one BEGIN (IMMEDIATE on SQLite) … COMMIT and answers
// every job.
// The statements run on a context of their own, not a caller's: SQLite
// answers an interrupted write inside a transaction by rolling back all of
// it, which would undo the other callers' work. A caller that gave up before
// its turn is skipped.
func (g *groupCommit) commit(batch []*writeJob) {
	live := batch[:0:0]
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.err = err
			close(j.answered)
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	err := g.transaction(func(tx *gorm.DB, bt *batchTx) error {
		if len(live) == 1 { // alone: its failure is the transaction's
			live[0].err = live[0].run(tx)
			return live[0].err
		}
		for i, j := range live {
			sp := "gc" + strconv.Itoa(i)
			if _, err := hotExec(tx, "SAVEPOINT "+sp); err != nil {
				return err
			}
			// A writer rolled back takes its audit entries back off the head
			// and its NOTIFYs out of the batch's.
			head, notes := bt.head, len(bt.notes)
			if j.err = j.run(tx); j.err != nil {
				if _, err := hotExec(tx, "ROLLBACK TO SAVEPOINT "+sp); err != nil {
					return fmt.Errorf("roll back a failed writer in a batch: %w", err)
				}
				bt.head, bt.notes = head, bt.notes[:notes]
			}
		}
		return nil
	})
	if g.committed != nil {
		g.committed(len(live))
	}
	for _, j := range live {
		if err != nil && j.err == nil {
			j.err = err
		}
		close(j.answered)
	}
}

// transaction runs fn in one BEGIN … COMMIT: on SQLite IMMEDIATE (the DSN's
// _txlock), its statements through the writer's statement cache and the new
// ones prepared after the COMMIT; on PostgreSQL with the head locked first.
// The audit head the batch moved is written before the COMMIT.
func (g *groupCommit) transaction(fn func(tx *gorm.DB, bt *batchTx) error) (err error) {
	sqlDB, err := g.db.DB()
	if err != nil {
		return err
	}
	ctx := g.db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	sqlTx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	phase.Mark(phase.Began)
	tx := g.db.Session(&gorm.Session{NewDB: true, Context: ctx})
	if g.stmts != nil {
		defer g.stmts.prepareSeen(sqlDB)
	}
	bt := &batchTx{tx: sqlTx, cache: g.stmts}
	tx.Statement.ConnPool = bt
	committed := false
	defer func() {
		if !committed {
			sqlTx.Rollback()
		}
	}()
	if g.headFirst {
		if err := bt.lockHead(tx); err != nil {
			return err
		}
	}
	if err := fn(tx, bt); err != nil {
		return err
	}
	if err := bt.saveBatchHead(tx); err != nil {
		return err
	}
	if err := bt.sendNotes(tx); err != nil {
		return err
	}
	phase.Mark(phase.Written)
	if err := sqlTx.Commit(); err != nil {
		return err
	}
	phase.Mark(phase.Committed)
	committed = true
	return nil
}

// run calls the job's function (and its in-transaction announcement), turning
// a panic into the job's error so one bad writer cannot strand the batch.
func (j *writeJob) run(tx *gorm.DB) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("transaction function panicked: %v", p)
		}
	}()
	if err := j.fn(tx); err != nil {
		return err
	}
	if j.inTx != nil {
		return j.inTx(tx)
	}
	return nil
}
