package store

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/gatehousehq/gatehouse/models"
)

// seenEvery is how often a session's last use is written: a busy page does
// not write on every call, and the idle limit is off by at most this.
const seenEvery = time.Minute

// sessionExpiry is when a session opened at created and last used at seen ends.
func sessionExpiry(created, seen time.Time) time.Time {
	idle, hard := seen.Add(SessionIdle), created.Add(SessionTTL)
	if idle.Before(hard) {
		return idle
	}
	return hard
}

// seen records a use of a live session (at most once a minute), pushing its
// idle expiry on, and caches what it returns.
func (s *Store) seen(ctx context.Context, hash string, sess models.Session, l look) (*models.Session, error) {
	if now := s.now(); now.Sub(sess.LastSeenAt) >= seenEvery {
		exp := sessionExpiry(sess.CreatedAt, now)
		res := s.DB.WithContext(ctx).Model(&models.Session{}).Where("hash = ?", hash).
			Updates(map[string]any{"last_seen_at": now, "expires_at": exp})
		if res.Error != nil {
			return nil, res.Error
		}
		if res.RowsAffected == 0 { // ended meanwhile
			return nil, models.Errorf(models.ECodeUnauthenticated, "no such session")
		}
		sess.LastSeenAt, sess.ExpiresAt = now, exp
	}
	if s.auth != nil {
		s.auth.putSession(hash, sess, l)
	}
	return &sess, nil
}

// DescribeSession records the browser a session was opened from.
func (s *Store) DescribeSession(ctx context.Context, id, userAgent string) error {
	if len(userAgent) > 200 {
		userAgent = userAgent[:200]
	}
	return s.DB.WithContext(ctx).Model(&models.Session{}).Where("id = ?", id).Update("user_agent", printable(userAgent)).Error
}

// ListSessions returns the live sessions, oldest first.
func (s *Store) ListSessions(ctx context.Context) ([]models.Session, error) {
	var ss []models.Session
	err := s.reader(ctx).Where("expires_at > ?", s.now()).Order("created_at, id").Find(&ss).Error
	return ss, err
}

// PurgeSessions deletes expired sessions and login tickets. An expired
// session is refused already, so no cache needs telling.
func (s *Store) PurgeSessions(ctx context.Context) (int64, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	res := db.Where("expires_at <= ?", now).Delete(&models.Session{})
	if res.Error != nil {
		return 0, res.Error
	}
	if err := db.Where("expires_at <= ?", now).Delete(&models.LoginTicket{}).Error; err != nil {
		return res.RowsAffected, err
	}
	return res.RowsAffected, nil
}

// printable drops control and format characters (bidirectional overrides
// among them) from a header shown to the operator.
func printable(v string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, v)
}
