package web

import (
	"bytes"
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/views"
)

// Hub tuning.
const (
	hubFeedBuffer = 1024             // changes queued for the hub before it counts as lagging
	pageQueue     = 32               // fragments queued per page before it counts as slow
	hubReadTime   = 5 * time.Second  // bound on the hub's store reads per change
	wsPingEvery   = 25 * time.Second // keeps proxies from closing an idle socket, finds dead ones
	wsWriteTime   = 10 * time.Second
)

// hub sends every connected page the templ fragments that keep it true. One
// goroutine owns the set of pages and what each shows; it reads each changed
// request once, renders each kind of fragment once, and queues it to every page
// without blocking: a page whose queue is full is dropped (it reconnects and
// resyncs), so a slow or dead browser never slows the hub or a decision.
type hub struct {
	s     *Server
	feed  store.Subscriber
	join  chan *pageConn
	leave chan *pageConn
	done  chan struct{} // closed when run returns
	// started is guarded by the server's bgMu.
	started bool
	conns   map[*pageConn]struct{}
	// lastCount is the open count the pages were last sent (hub goroutine only).
	lastCount int64

	mu       sync.Mutex
	pages    int            // connected pages
	presence map[string]int // operator label → connected, visible pages
}

// pageConn is one connected page: its filter, its bounded queue, and which
// cards it shows (touched only by the hub goroutine).
type pageConn struct {
	filter   views.Filter
	agents   bool // the Sessions view: it shows sessions, not cards
	operator string
	voter    models.Principal // who is looking: cards say whether they may vote
	send     chan []byte
	shown    map[string]bool
	dropped  chan struct{}      // closed when the hub gives up on the page
	abort    context.CancelFunc // cancels a write in progress to a dropped page
	visible  bool               // guarded by hub.mu
}

func newHub(s *Server, feed store.Subscriber) *hub {
	return &hub{
		s: s, feed: feed, join: make(chan *pageConn), leave: make(chan *pageConn), done: make(chan struct{}),
		conns: map[*pageConn]struct{}{}, presence: map[string]int{},
	}
}

// start runs the hub if it is not running yet; false once the server stopped.
// A server that never serves a page never has a hub goroutine.
func (h *hub) start() bool {
	h.s.bgMu.Lock()
	defer h.s.bgMu.Unlock()
	if h.s.stopped {
		return false
	}
	if !h.started {
		h.started = true
		h.s.bg.Go(h.run)
	}
	return true
}

// run serves the hub until the server closes.
func (h *hub) run() {
	defer close(h.done)
	sub := h.feed.Subscribe(hubFeedBuffer)
	defer func() { sub.Close() }()
	for {
		select {
		case <-h.s.closing:
			return
		case pc := <-h.join:
			h.conns[pc] = struct{}{}
			h.sync([]*pageConn{pc})
		case pc := <-h.leave:
			delete(h.conns, pc)
		case ch, ok := <-sub.C:
			if !ok {
				// The hub fell behind and was dropped: subscribe again and send
				// every page its list afresh, so no change is lost.
				sub = h.feed.Subscribe(hubFeedBuffer)
				h.sync(h.all())
				continue
			}
			if ch.Action == models.ActionResync {
				// The cross-replica feed reconnected: what changed in the gap
				// is unknown, so every page gets its list afresh.
				h.sync(h.all())
				continue
			}
			if len(h.conns) > 0 {
				h.apply(ch)
			}
		}
	}
}

// add registers a page; false when the server is stopping.
func (h *hub) add(pc *pageConn) bool {
	select {
	case h.join <- pc:
		return true
	case <-h.done:
		return false
	}
}

func (h *hub) remove(pc *pageConn) {
	select {
	case h.leave <- pc:
	case <-h.done:
	}
}

func (h *hub) all() []*pageConn {
	out := make([]*pageConn, 0, len(h.conns))
	for pc := range h.conns {
		out = append(out, pc)
	}
	return out
}

// deliver queues msg for pc, or drops pc when its queue is full.
func (h *hub) deliver(pc *pageConn, msg []byte) {
	select {
	case pc.send <- msg:
	default:
		delete(h.conns, pc)
		close(pc.dropped)
		pc.abort()
	}
}

// sync sends each page the whole list its filter selects and the open count:
// on connect, on reconnect and after the hub lagged.
func (h *hub) sync(pcs []*pageConn) {
	ctx, cancel := context.WithTimeout(context.Background(), hubReadTime)
	defer cancel()
	count, err := h.s.store.CountOpen(ctx)
	if err != nil {
		slog.Error("hub: count open", "err", err)
		return
	}
	h.lastCount = count
	countFrag := renderBytes(views.OOBCount(count))
	type list struct {
		ids []string
		msg []byte
	}
	type key struct {
		filter views.Filter
		voter  string
	}
	lists := map[key]list{}
	now := time.Now()
	var sessions []byte // rendered once, for every Sessions view among pcs
	for _, pc := range pcs {
		if pc.agents {
			if sessions == nil {
				if sessions = h.sessionsFragment(ctx, now); sessions == nil {
					continue
				}
				sessions = append(append([]byte{}, countFrag...), sessions...)
			}
			h.deliver(pc, sessions)
			continue
		}
		k := key{pc.filter, pc.operator}
		l, ok := lists[k]
		if !ok {
			cards, err := h.cardsFor(ctx, pc.filter, pc.voter)
			if err != nil {
				slog.Error("hub: list", "err", err)
				continue
			}
			for _, c := range cards {
				l.ids = append(l.ids, c.ID)
			}
			x := views.Ctx{Now: now, Back: "/", Page: pc.filter.ID != ""}
			l.msg = append(append([]byte{}, countFrag...), renderBytes(views.OOBList(cards, x))...)
			if pc.filter.ID != "" && len(cards) > 0 {
				l.msg = append(l.msg, h.auditFragment(ctx, pc.filter.ID)...)
			}
			lists[k] = l
		}
		pc.shown = make(map[string]bool, len(l.ids))
		for _, id := range l.ids {
			pc.shown[id] = true
		}
		h.deliver(pc, l.msg)
	}
}

func (h *hub) cardsFor(ctx context.Context, f views.Filter, viewer models.Principal) ([]views.Card, error) {
	if f.ID != "" {
		r, err := h.s.store.GetRequest(ctx, f.ID)
		if models.ErrorCode(err) == models.ECodeNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []views.Card{cardOf(ctx, h.s.runtimeNames(), viewer, r)}, nil
	}
	rows, _, err := h.s.store.ListRequests(ctx, store.ListFilter{Status: f.Status, Kind: f.Kind, Risk: f.Risk})
	if err != nil {
		return nil, err
	}
	return cardsOfRows(ctx, h.s.runtimeNames(), viewer, rows), nil
}

// apply sends every page what one change means for it: the card inserted,
// redrawn or removed, and the open count.
func (h *hub) apply(ch models.Change) {
	ctx, cancel := context.WithTimeout(context.Background(), hubReadTime)
	defer cancel()
	if ch.Action == models.ActionSession {
		h.applySessions(ctx, nil, true)
		return
	}
	r, err := h.s.store.GetRequest(ctx, ch.RequestID)
	if err != nil && models.ErrorCode(err) != models.ECodeNotFound {
		slog.Error("hub: read change", "id", ch.RequestID, "err", err)
		return
	}
	count, err := h.s.store.CountOpen(ctx)
	if err != nil {
		slog.Error("hub: count open", "err", err)
		return
	}
	// The count goes out only when it moved, so changes that matter to no page
	// (an actuation update on a card nobody shows) cost the pages nothing.
	var countFrag []byte
	if count != h.lastCount {
		h.lastCount = count
		countFrag = renderBytes(views.OOBCount(count))
	}
	now := time.Now()
	// The runtime's name is read once; the rest of the card depends on who views it.
	var named views.Card
	if r != nil {
		named = cardOf(ctx, h.s.runtimeNames(), models.Principal{}, r)
	}
	// Each kind of fragment is rendered at most once per reason a viewer may
	// not vote (most pages share one), whatever the number of pages.
	frags := map[string][]byte{}
	// A Sessions view redraws when a request of a session changed (a waiting
	// item, a permission that blocks it) or the request is unknown.
	h.applySessions(ctx, countFrag, r == nil || r.SourceRef["session"] != "")
	for pc := range h.conns {
		if pc.agents {
			continue
		}
		var card views.Card
		if r != nil {
			card = toCard(r, pc.voter)
			card.Runtime, card.Machine = named.Runtime, named.Machine
		}
		h.applyTo(pc, r, ch, countFrag, func(kind string) []byte {
			return h.fragment(ctx, frags, kind, card, ch, now, countFrag)
		})
	}
}

// fragment renders (once per kind and card state) what apply sends a page.
func (h *hub) fragment(ctx context.Context, frags map[string][]byte, kind string, card views.Card, ch models.Change, now time.Time, countFrag []byte) []byte {
	cacheKey := kind + "\x00" + card.NoVote
	if b, ok := frags[cacheKey]; ok {
		return b
	}
	x := views.Ctx{Now: now, Back: "/", Page: kind == "replace-page"}
	var b []byte
	switch kind {
	case "insert":
		b = renderBytes(views.OOBInsert(card, x))
	case "replace":
		b = renderBytes(views.OOBReplace(card, x))
	case "replace-page":
		// The request's own page also shows its trail: the row of what
		// just happened appears without a reload.
		b = append(renderBytes(views.OOBReplace(card, x)), h.auditFragment(ctx, ch.RequestID)...)
	case "remove":
		b = renderBytes(views.OOBRemove(ch.RequestID))
	}
	b = append(append([]byte{}, countFrag...), b...)
	frags[cacheKey] = b
	return b
}

// applyTo sends one page what a change means for it.
func (h *hub) applyTo(pc *pageConn, r *models.Request, ch models.Change, countFrag []byte, frag func(kind string) []byte) {
	match := r != nil && matches(pc.filter, r)
	shown := pc.shown[ch.RequestID]
	switch {
	case match && shown && pc.filter.ID != "":
		h.deliver(pc, frag("replace-page"))
	case match && shown:
		h.deliver(pc, frag("replace"))
	case match:
		pc.shown[ch.RequestID] = true
		h.deliver(pc, frag("insert"))
	case shown:
		delete(pc.shown, ch.RequestID)
		h.deliver(pc, frag("remove"))
	default:
		if countFrag != nil {
			h.deliver(pc, countFrag)
		}
	}
}

// applySessions sends every Sessions view the session list when redraw is
// set (rendered once for all), else the count when it moved.
func (h *hub) applySessions(ctx context.Context, countFrag []byte, redraw bool) {
	var msg []byte
	for pc := range h.conns {
		if !pc.agents {
			continue
		}
		if !redraw {
			if countFrag != nil {
				h.deliver(pc, countFrag)
			}
			continue
		}
		if msg == nil {
			frag := h.sessionsFragment(ctx, time.Now())
			if frag == nil {
				return
			}
			msg = append(append([]byte{}, countFrag...), frag...)
		}
		h.deliver(pc, msg)
	}
}

// sessionsFragment is the Sessions view's list as an out-of-band swap; nil
// when it cannot be read (the page keeps what it shows).
func (h *hub) sessionsFragment(ctx context.Context, now time.Time) []byte {
	if h.s.agentSessions() == nil {
		return nil
	}
	rows, err := h.s.sessionRows(ctx)
	if err != nil {
		slog.Error("hub: sessions", "err", err)
		return nil
	}
	return renderBytes(views.OOBSessions(rows, now))
}

// auditFragment is the redrawn trail of one request for its own page; nothing
// when the trail cannot be read (the page keeps the trail it has).
func (h *hub) auditFragment(ctx context.Context, id string) []byte {
	rows, err := h.s.store.AuditTrail(ctx, id)
	if err != nil {
		slog.Error("hub: audit trail", "id", id, "err", err)
		return nil
	}
	return renderBytes(views.OOBAudit(toAudit(id, rows)))
}

// matches reports whether a page with filter f shows r.
func matches(f views.Filter, r *models.Request) bool {
	if f.ID != "" {
		return r.ID == f.ID
	}
	if f.Status != "all" && r.Status != f.Status {
		return false
	}
	return (f.Kind == "" || r.Kind == f.Kind) && (f.Risk == "" || r.Risk == f.Risk)
}

func renderBytes(c templ.Component) []byte {
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		slog.Error("hub: render", "err", err)
	}
	return buf.Bytes()
}

// Presence: which operators are looking at a page right now. A page counts
// while it is connected and visible (the page reports visibility changes over
// its socket), so a tab left in the background does not silence the phone.

// arrive counts a newly connected page, visible until it says otherwise.
func (h *hub) arrive(pc *pageConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pages++
	pc.visible = true
	h.presence[pc.operator]++
}

// depart forgets a page that went away.
func (h *hub) depart(pc *pageConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pages--
	if pc.visible {
		h.unsee(pc.operator)
	}
}

// setVisible records a page's visibility change.
func (h *hub) setVisible(pc *pageConn, visible bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if pc.visible == visible {
		return
	}
	pc.visible = visible
	if visible {
		h.presence[pc.operator]++
	} else {
		h.unsee(pc.operator)
	}
}

func (h *hub) unsee(op string) {
	if h.presence[op]--; h.presence[op] <= 0 {
		delete(h.presence, op)
	}
}

// ActiveOperators reports whether any operator is looking at a page right now
// (connected and visible). It is the push router's Presence: an alert may wait
// while someone is watching the inbox.
func (s *Server) ActiveOperators() bool {
	return len(s.OperatorsOnline()) > 0
}

// OperatorsOnline lists the operators ("operator:name") with a visible page
// connected, sorted.
func (s *Server) OperatorsOnline() []string {
	if s.pages == nil || s.pages.hub == nil {
		return nil
	}
	h := s.pages.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.presence))
	for op := range h.presence {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// ConnectedPages is how many pages are connected, visible or not (tests,
// benchmarks).
func (s *Server) ConnectedPages() int {
	if s.pages == nil || s.pages.hub == nil {
		return 0
	}
	h := s.pages.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pages
}
