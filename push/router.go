package push

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// Store is what the router reads and writes (store.Store).
type Store interface {
	Recorder
	GetRequest(ctx context.Context, id string) (*models.Request, error)
	GetRequests(ctx context.Context, ids []string) ([]models.Request, error)
	CountOpen(ctx context.Context) (int64, error)
	ListDevices(ctx context.Context, retired bool) ([]models.Device, error)
	HasDevices(ctx context.Context) (bool, error)
	ClaimPushes(ctx context.Context, ids []string, typ string) ([]string, error)
	ListAvailability(ctx context.Context) ([]models.Availability, error)
	OpenBadgeItems(ctx context.Context, limit int) ([]models.Request, error)
}

// Router turns change announcements into notifications. One goroutine plans
// (holds, coalesces, clears); bounded queues and workers per kind of device
// deliver. Nothing it does can delay a decision: announcements never wait for
// it, and when a queue is full the push is dropped, not waited for.
type Router struct {
	cfg      Config
	store    Store
	changes  store.Subscriber // where the router hears of commits (the change bus)
	presence Presence
	lanes    map[string]*lane
	deliver  *deliverer

	sub     *store.Subscription
	fire    chan func(context.Context) // timer callbacks, run on the planning goroutine
	done    chan struct{}
	started time.Time

	// Planning state, owned by the Run goroutine.
	held   map[string]*hold     // alerts waiting out the presence grace
	batch  batch                // alerts gathering for one push
	sent   map[string]time.Time // requests an alert went out for (when): they get a clearing push
	timers map[*hold]func() bool
	// Badge-level items waiting out the attention grace, and when each
	// session's last attention push went (attention.go).
	attn     map[string]*attnHold
	lastAttn map[string]time.Time
}

type hold struct {
	id      string
	version int
}

type batch struct {
	ids      []string
	versions map[string]int
	timing   bool // a flush is scheduled
	stop     func() bool
}

// NewRouter builds a router and subscribes to changes; Run must follow.
// presence may be nil (nobody is ever looking). Kinds whose sender in s is nil
// are skipped.
func NewRouter(cfg Config, store Store, changes store.Subscriber, s Senders, presence Presence) *Router {
	cfg.defaults()
	if presence == nil {
		presence = Absent{}
	}
	r := &Router{
		cfg: cfg, store: store, changes: changes, presence: presence,
		lanes:   map[string]*lane{},
		deliver: &deliverer{store: store, attempts: cfg.Attempts, backoff: cfg.Backoff, observe: cfg.Observe},
		fire:    make(chan func(context.Context)),
		done:    make(chan struct{}),
		held:    map[string]*hold{},
		sent:    map[string]time.Time{},
		timers:  map[*hold]func() bool{},
		attn:    map[string]*attnHold{}, lastAttn: map[string]time.Time{},
	}
	// Subscribe now, not in Run, so nothing committed after NewRouter is missed.
	r.sub, r.started = changes.Subscribe(1024), time.Now()
	for _, kind := range []string{models.DeviceAPNs, models.DeviceWebPush} {
		if snd := s.For(kind); snd != nil {
			r.lanes[kind] = &lane{jobs: make(chan job, cfg.Queue), sender: snd}
		}
	}
	return r
}

// Run plans and delivers until ctx ends; it returns once every worker and
// timer of the router has stopped. Call it once.
func (r *Router) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, l := range r.lanes {
		for range r.cfg.Workers {
			wg.Add(1)
			go r.deliver.run(ctx, l, &wg)
		}
	}
	defer wg.Wait()
	defer close(r.done)
	defer r.stopTimers()

	sub := r.sub
	defer func() { sub.Close() }()
	r.rearmAttention(ctx) // what waited before a restart waits on
	for {
		select {
		case <-ctx.Done():
			return nil
		case f := <-r.fire:
			f(ctx)
		case ch, ok := <-sub.C:
			if !ok {
				if !sub.Lagged() {
					return nil
				}
				// We fell behind: take a new subscription. Holds and batches are
				// checked against the store before anything is sent, so a missed
				// decision cannot produce a stale alert.
				// Closes may have been missed too: recheck what was alerted.
				slog.Warn("push: change subscription lagged; resubscribing")
				sub = r.changes.Subscribe(1024)
				r.recheck(ctx)
				r.rearmAttention(ctx)
				continue
			}
			r.handle(ctx, ch)
		}
	}
}

// after schedules f on the planning goroutine.
func (r *Router) after(d time.Duration, f func(context.Context)) func() bool {
	return r.cfg.AfterFunc(d, func() {
		select {
		case r.fire <- f:
		case <-r.done:
		}
	})
}

func (r *Router) stopTimers() {
	for _, stop := range r.timers {
		stop()
	}
	r.stopAttention()
	if r.batch.stop != nil {
		r.batch.stop()
	}
}

func (r *Router) handle(ctx context.Context, ch models.Change) {
	switch {
	case ch.Action == models.ActionResync:
		r.recheck(ctx)
		r.rearmAttention(ctx)
	case ch.Action == "create" && ch.Status == models.StatusOpen:
		r.opened(ctx, ch)
	case ch.Action == store.ActionEscalate && ch.Status == models.StatusOpen:
		r.escalated(ctx, ch)
	case ch.Status != models.StatusOpen && ch.Status != "" && ch.Action != "actuation":
		// (An actuation is news about the forward of a decision already seen.)
		r.closed(ctx, ch)
	}
}

// planFor is what a new request earns by its attention level: an alert, a
// push after the attention grace (TypeAttention), or nothing.
func planFor(rec *models.Request) string {
	switch models.AttentionLevel(rec.Kind, rec.SourceRef) {
	case models.LevelInterrupt:
		return TypeAlert
	case models.LevelBadge:
		return TypeAttention
	}
	return ""
}

func (r *Router) opened(ctx context.Context, ch models.Change) {
	// The announcement carries the committed record (unless it was too big for
	// a NOTIFY): every replica hears every filing, and reading it again was a
	// third of a bystander replica's CPU per filing on PostgreSQL.
	rec := ch.Record
	if rec == nil {
		var err error
		if rec, err = r.read(ctx, ch.RequestID); err != nil {
			return
		}
	}
	switch planFor(rec) {
	case TypeAlert:
		if r.cfg.Grace > 0 && r.presence.ActiveOperators() {
			h := &hold{id: rec.ID, version: ch.Version}
			r.held[rec.ID] = h
			r.timers[h] = r.after(r.cfg.Grace, func(ctx context.Context) { r.graceOver(ctx, h) })
			r.cfg.Observe(Event{Name: "held", RequestID: rec.ID})
			return
		}
		r.add(ctx, rec.ID, ch.Version)
	case TypeAttention:
		r.holdAttention(rec)
	}
}

func (r *Router) graceOver(ctx context.Context, h *hold) {
	delete(r.timers, h)
	if r.held[h.id] != h {
		return // decided meanwhile
	}
	delete(r.held, h.id)
	r.add(ctx, h.id, h.version)
}

// add puts an alert into the batch.
func (r *Router) add(ctx context.Context, id string, version int) {
	if r.batch.versions == nil {
		r.batch.versions = map[string]int{}
	}
	r.batch.ids = append(r.batch.ids, id)
	r.batch.versions[id] = version
	r.cfg.Observe(Event{Name: "batched", RequestID: id})
	r.schedule(ctx)
}

func (r *Router) schedule(ctx context.Context) {
	if r.cfg.Coalesce < 0 {
		r.flush(ctx)
		return
	}
	if !r.batch.timing {
		r.batch.timing = true
		r.batch.stop = r.after(r.cfg.Coalesce, r.flush)
	}
}

// closed handles a request leaving open: what was never pushed is forgotten,
// what was pushed gets a clearing update.
func (r *Router) closed(ctx context.Context, ch models.Change) {
	id := ch.RequestID
	if r.dropAttention(id) {
		return
	}
	if h := r.held[id]; h != nil {
		if stop := r.timers[h]; stop != nil {
			stop()
		}
		delete(r.timers, h)
		delete(r.held, id)
		r.cfg.Observe(Event{Name: "suppressed", RequestID: id})
		return
	}
	if i := slices.Index(r.batch.ids, id); i >= 0 {
		r.batch.ids = slices.Delete(r.batch.ids, i, i+1)
		delete(r.batch.versions, id)
		r.cfg.Observe(Event{Name: "suppressed", RequestID: id})
		return
	}
	if _, ok := r.sent[id]; ok {
		delete(r.sent, id)
		r.clear(ctx, id, ch.Version)
		return
	}
	// Not seen by this router: it may have been alerted before a restart.
	rec, err := r.read(ctx, id)
	if err != nil {
		return
	}
	// Anything pushed before a restart gets its clear (claimed: once); a
	// badge-level item only if its grace could have ended by then.
	switch planFor(rec) {
	case TypeAttention:
		if rec.CreatedAt.Add(r.cfg.AttentionGrace).Before(r.started) {
			r.clear(ctx, id, ch.Version)
		}
	case TypeAlert:
		if rec.CreatedAt.Before(r.started) {
			r.clear(ctx, id, ch.Version)
		}
	}
}

func (r *Router) clear(ctx context.Context, id string, version int) {
	if len(r.claim(ctx, []string{id}, TypeClear)) == 1 {
		r.enqueue(ctx, Message{Type: TypeClear, RequestID: id, Version: version, Badge: -1})
	}
}

// recheck clears every alerted request that is no longer open, in one read:
// after a resync or a lagged subscription its close may never have been heard
// here (another replica's lost NOTIFY, a dropped subscription).
func (r *Router) recheck(ctx context.Context) {
	r.forget()
	if len(r.sent) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(r.sent))
	recs, err := r.readAll(ctx, ids)
	if err != nil {
		return // kept: the next resync, or the request's own close, tries again
	}
	version, open := map[string]int{}, map[string]bool{}
	for _, rec := range recs {
		version[rec.ID], open[rec.ID] = rec.Version, rec.Open()
	}
	var closed []string
	for _, id := range ids {
		if !open[id] { // closed, or gone
			delete(r.sent, id)
			closed = append(closed, id)
		}
	}
	var msgs []Message
	for _, id := range r.claim(ctx, closed, TypeClear) {
		msgs = append(msgs, Message{Type: TypeClear, RequestID: id, Version: version[id], Badge: -1})
	}
	r.enqueue(ctx, msgs...)
}

// forget drops alerted requests older than any request can stay open, so sent
// stays bounded even when a close is never heard.
func (r *Router) forget() {
	cutoff := r.cfg.Now().Add(-r.cfg.Forget)
	for id, at := range r.sent {
		if at.Before(cutoff) {
			delete(r.sent, id)
			r.cfg.Observe(Event{Name: "forgotten", RequestID: id})
		}
	}
}

// claim returns those of ids whose push of a type this router is the one to
// send (the first replica to claim it), in one statement. When the claim
// cannot be made it pushes them all: a duplicate is better than silence.
func (r *Router) claim(ctx context.Context, ids []string, typ string) []string {
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	won, err := r.store.ClaimPushes(ctx, ids, typ)
	if err != nil {
		slog.Error("push: claim", "ids", len(ids), "err", err)
		return ids
	}
	mine := make(map[string]bool, len(won))
	for _, id := range won {
		mine[id] = true
	}
	out := make([]string, 0, len(won))
	for _, id := range ids {
		if mine[id] {
			out = append(out, id)
		} else {
			r.cfg.Observe(Event{Name: "claimed-elsewhere", RequestID: id})
		}
	}
	return out
}

// flush sends what the batch gathered: one alert for every request of the
// burst still open. One read and one claim cover the
// whole burst, so the planning goroutine spends two queries per flush, not
// two per request.
func (r *Router) flush(ctx context.Context) {
	b := r.batch
	r.batch = batch{}
	// No device, nothing to send: skip the reads and the claim (a write) a
	// batch costs, on every filing of a server that pushes to no phone.
	if live, err := r.store.HasDevices(ctx); err == nil && !live {
		r.cfg.Observe(Event{Name: "no-devices"})
		return
	}
	ids, seen := make([]string, 0, len(b.ids)), map[string]bool{}
	for _, id := range b.ids {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	var open []string
	var openRecs []models.Request
	if len(ids) > 0 {
		// Checked against the store too, in case a decision's announcement was
		// missed (a lagged subscription, another replica).
		if recs, err := r.readAll(ctx, ids); err == nil {
			isOpen := map[string]bool{}
			for _, rec := range recs {
				isOpen[rec.ID] = rec.Open()
			}
			for _, id := range ids {
				if isOpen[id] {
					open = append(open, id)
				}
			}
			open = r.claim(ctx, open, TypeAlert)
			claimed := map[string]bool{}
			for _, id := range open {
				claimed[id] = true
			}
			for _, rec := range recs {
				if claimed[rec.ID] {
					openRecs = append(openRecs, rec)
				}
			}
		}
	}
	if len(open) == 0 {
		return
	}
	m := Message{Type: TypeAlert, Badge: r.openCount(ctx), RequestID: open[0], RequestIDs: open, Count: len(open), Version: b.versions[open[0]]}
	m.URL = RequestURL(r.cfg.BaseURL, open[0])
	if len(open) > 1 {
		m.URL = InboxURL(r.cfg.BaseURL)
	}
	now := r.cfg.Now()
	for _, id := range open {
		r.sent[id] = now
	}
	r.forget()
	reach := r.reachable(ctx)
	r.enqueueTo(ctx, m, func(d models.Device) bool { return anyVotable(d, openRecs) && reach(d) })
}

// anyVotable reports whether the device's owner may vote on any of recs: an
// alert goes only to the people who can act on it.
func anyVotable(d models.Device, recs []models.Request) bool {
	for i := range recs {
		if d.MayVoteOn(&recs[i]) {
			return true
		}
	}
	return false
}

// enqueue hands each message to every live device's queue without waiting.
func (r *Router) enqueue(ctx context.Context, msgs ...Message) {
	if len(msgs) == 0 {
		return
	}
	devs := r.liveDevices(ctx)
	for _, m := range msgs {
		r.offer(devs, m)
	}
}

// enqueueTo hands m to the queue of every live device keep admits, without
// waiting.
func (r *Router) enqueueTo(ctx context.Context, m Message, keep func(models.Device) bool) {
	var kept []models.Device
	for _, d := range r.liveDevices(ctx) {
		if keep(d) {
			kept = append(kept, d)
		}
	}
	r.offer(kept, m)
}

func (r *Router) liveDevices(ctx context.Context) []models.Device {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	devs, err := r.store.ListDevices(ctx, false)
	if err != nil && ctx.Err() == nil {
		slog.Error("push: list devices", "err", err)
	}
	return devs
}

func (r *Router) offer(devs []models.Device, m Message) {
	// Every job is observed before any is handed over: once handed over, a
	// worker may deliver it before this loop goes on. The planning goroutine
	// is each lane's only sender, so room counted here is room at the send.
	var jobs []job
	room := map[*lane]int{}
	for _, d := range devs {
		l := r.lanes[d.Kind]
		if l == nil || (m.Type == TypeBadge && d.Kind == models.DeviceWebPush) {
			// A browser must show something for every push it gets, so it gets
			// no badge-only updates.
			continue
		}
		if _, ok := room[l]; !ok {
			room[l] = cap(l.jobs) - len(l.jobs)
		}
		if room[l] == 0 {
			slog.Warn("push: queue full; dropping", "kind", d.Kind, "device", d.ID, "push", m.Type)
			r.cfg.Observe(Event{Name: "dropped", RequestID: m.RequestID, Message: m, Device: d})
			continue
		}
		room[l]--
		jobs = append(jobs, job{dev: d, msg: m})
		r.cfg.Observe(Event{Name: "queued", RequestID: m.RequestID, Message: m, Device: d})
	}
	for _, j := range jobs {
		r.lanes[j.dev.Kind].jobs <- j
	}
}

func (r *Router) read(ctx context.Context, id string) (*models.Request, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rec, err := r.store.GetRequest(ctx, id)
	if err != nil {
		slog.Error("push: read request", "id", id, "err", err)
	}
	return rec, err
}

// readAll reads the requests with ids in one query.
func (r *Router) readAll(ctx context.Context, ids []string) ([]models.Request, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	recs, err := r.store.GetRequests(ctx, ids)
	if err != nil {
		slog.Error("push: read requests", "ids", len(ids), "err", err)
	}
	return recs, err
}

func (r *Router) openCount(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := r.store.CountOpen(ctx)
	if err != nil {
		return -1
	}
	return int(n)
}
