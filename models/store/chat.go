package store

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ChatMessage is the durable outbox row of one request's message in one chat
// destination. Whether it needs sending is read against the request itself
// (DoneVersion and DoneStatus behind the record's), so a change committed
// while no process was running is still sent when the next one starts, and
// Ref (the message's id in the chat, once posted) makes every later send an
// edit of that message, never a second post.
type ChatMessage struct {
	ID        uint64 `gorm:"primaryKey;autoIncrement"`
	RequestID string `gorm:"size:40;not null;uniqueIndex:idx_chat_messages_request_dest,priority:1"`
	Dest      string `gorm:"size:100;not null;uniqueIndex:idx_chat_messages_request_dest,priority:2"`
	// Ref is the posted message (Slack's ts, Telegram's message_id); Channel
	// is where it was posted.
	Ref     string `gorm:"size:100;not null;default:'';index"`
	Channel string `gorm:"size:100;not null;default:''"`
	// What the message shows: the request's version and status when it was
	// last sent.
	DoneVersion int    `gorm:"not null;default:0"`
	DoneStatus  string `gorm:"size:16;not null;default:''"`
	// Retrying: NextAttemptAt is the earliest next send; after Deadline the
	// row is given up (Failed).
	Attempts      int       `gorm:"not null;default:0"`
	NextAttemptAt time.Time `gorm:"not null;index"`
	Deadline      time.Time `gorm:"not null"`
	Failed        bool      `gorm:"not null;default:false"`
	LastError     string    `gorm:"size:500;not null;default:''"`
	ClaimedBy     string    `gorm:"size:64;not null;default:''"`
	ClaimedUntil  *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// EnsureChatMessage makes the outbox row of request id in dest, if there is
// none yet; it never resets one that exists.
func (s *Store) EnsureChatMessage(ctx context.Context, id, dest string) error {
	r, err := load(s.reader(ctx), id)
	if err != nil {
		return err
	}
	now := s.now()
	deadline := r.ExpiresAt
	if floor := now.Add(MinForwardWindow); deadline.Before(floor) {
		deadline = floor
	}
	row := &ChatMessage{RequestID: id, Dest: dest, NextAttemptAt: now, Deadline: deadline, CreatedAt: now, UpdatedAt: now}
	return s.DB.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(row).Error
}

// dueChat selects the rows whose message is behind their request: never
// posted, or showing an older version or status.
func dueChat(db *gorm.DB) *gorm.DB {
	return db.Model(&ChatMessage{}).Joins("JOIN requests ON requests.id = chat_messages.request_id").
		Where("chat_messages.failed = ? AND (chat_messages.done_version < requests.version OR chat_messages.done_status <> requests.status)", false)
}

// ClaimChatMessages claims up to limit due rows for owner until now+lease.
func (s *Store) ClaimChatMessages(ctx context.Context, owner string, limit int, lease time.Duration) ([]ChatMessage, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	var rows []ChatMessage
	err := dueChat(db).Select("chat_messages.*").
		Where("chat_messages.next_attempt_at <= ? AND (chat_messages.claimed_until IS NULL OR chat_messages.claimed_until < ?)", now, now).
		Order("chat_messages.next_attempt_at").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, err
	}
	until := now.Add(lease)
	out := rows[:0]
	for _, r := range rows {
		res := db.Model(&ChatMessage{}).Where("id = ? AND (claimed_until IS NULL OR claimed_until < ?)", r.ID, now).
			UpdateColumns(map[string]any{"claimed_by": owner, "claimed_until": until})
		if res.Error != nil {
			return out, res.Error
		}
		if res.RowsAffected == 1 {
			r.ClaimedBy, r.ClaimedUntil = owner, &until
			out = append(out, r)
		}
	}
	return out, nil
}

// NextChatDue is when the next due row may be sent (its retry time or the end
// of another process's claim), zero when none is due.
func (s *Store) NextChatDue(ctx context.Context) (time.Time, error) {
	var rows []ChatMessage
	err := dueChat(s.DB.WithContext(ctx)).Select("chat_messages.*").Order("chat_messages.next_attempt_at").Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return time.Time{}, err
	}
	next := rows[0].NextAttemptAt
	if c := rows[0].ClaimedUntil; c != nil && c.After(next) {
		next = *c
	}
	return next, nil
}

// ChatSend is the outcome of one send of a claimed row.
type ChatSend struct {
	// Sent: Ref and Channel name the message, which now shows Version and Status.
	Sent         bool
	Ref, Channel string
	Version      int
	Status       string
	Error        string
	NextAt       time.Time // when not Sent and not Failed
	Failed       bool      // given up
}

// FinishChatMessage records a send of a row owner claimed and gives the claim
// back. A Ref once stored is never replaced. It reports false when the claim
// was lost.
func (s *Store) FinishChatMessage(ctx context.Context, m *ChatMessage, owner string, out ChatSend) (bool, error) {
	now := s.now()
	upd := map[string]any{"claimed_by": "", "claimed_until": nil, "updated_at": now, "last_error": truncate(out.Error, 500)}
	if out.Sent {
		upd["done_version"], upd["done_status"], upd["attempts"] = out.Version, out.Status, 0
		upd["next_attempt_at"] = now
		if m.Ref == "" {
			upd["ref"], upd["channel"] = out.Ref, out.Channel
		}
	} else {
		upd["attempts"] = gorm.Expr("attempts + 1")
		upd["next_attempt_at"] = out.NextAt
		upd["failed"] = out.Failed
	}
	res := s.DB.WithContext(ctx).Model(&ChatMessage{}).Where("id = ? AND claimed_by = ?", m.ID, owner).UpdateColumns(upd)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}

// ChatMessagesOf returns the outbox rows of one request (tests, the callbacks).
func (s *Store) ChatMessagesOf(ctx context.Context, id string) ([]ChatMessage, error) {
	var rows []ChatMessage
	err := s.DB.WithContext(ctx).Where("request_id = ?", id).Order("id").Find(&rows).Error
	return rows, err
}

// OpenRequestIDs returns the ids of every open request, oldest first: what a
// chat worker routes when it starts, so a filing announced while it was down
// still reaches its channels.
func (s *Store) OpenRequestIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.reader(ctx).Model(&models.Request{}).Where("status = ?", models.StatusOpen).Order("created_at").Pluck("id", &ids).Error
	return ids, err
}

// ChatMessageByRef returns the outbox row of the message ref posted in
// channel of dest (a reply names the message it answers).
func (s *Store) ChatMessageByRef(ctx context.Context, dest, channel, ref string) (*ChatMessage, error) {
	var m ChatMessage
	err := s.reader(ctx).Where("dest = ? AND channel = ? AND ref = ?", dest, channel, ref).Take(&m).Error
	if notFound(err) {
		return nil, models.Errorf(models.ECodeNotFound, "that message is not one of Gatehouse's requests")
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}
