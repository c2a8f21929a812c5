package client

// Remembered reports how many delivery ids and requests h holds (tests).
func (h *Handler) Remembered() (seen, accepted int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen.m), len(h.accepted.m)
}
