package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ChatLink binds one chat identity (a Slack user in a workspace, a Telegram
// user) to a named operator. It is made only by redeeming a link code the
// operator created, never from a display name.
type ChatLink struct {
	Surface   string `gorm:"primaryKey;size:16"`  // slack, telegram
	Workspace string `gorm:"primaryKey;size:100"` // Slack's team id; "" for Telegram
	UserID    string `gorm:"primaryKey;size:100"`
	Operator  string `gorm:"size:100;not null"`
	CreatedAt time.Time
}

// ChatLinkCode is a one-time code an operator sends from a chat to link the
// identity that sends it. Only its hash is kept.
type ChatLinkCode struct {
	Hash      string `gorm:"primaryKey;size:64"`
	Operator  string `gorm:"size:100;not null"`
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// ChatCallback remembers an inbound callback already acted on, so a retried
// or replayed one acts once.
type ChatCallback struct {
	Key string    `gorm:"primaryKey;size:200"`
	At  time.Time `gorm:"index"`
}

// ActionChatLink is the audit action of a chat identity linked to an
// operator; like a token's, it belongs to no request.
const ActionChatLink = "chat_link"

// ChatLinkTTL is how long a link code may be redeemed.
const ChatLinkTTL = 10 * time.Minute

// CreateChatLinkCode returns a new one-time link code for operator p.
func (s *Store) CreateChatLinkCode(ctx context.Context, p models.Principal) (string, time.Time, error) {
	if p.Role != models.RoleOperator {
		return "", time.Time{}, models.Errorf(models.ECodeForbidden, "only an operator links a chat identity")
	}
	code := linkCode()
	now := s.now()
	row := &ChatLinkCode{Hash: models.HashSecret(code), Operator: p.Name, CreatedAt: now, ExpiresAt: now.Add(ChatLinkTTL)}
	return code, row.ExpiresAt, s.DB.WithContext(ctx).Create(row).Error
}

// linkCode is 20 characters from a 32-letter alphabet (100 bits), grouped
// to be typed by hand.
func linkCode() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	raw := make([]byte, 20)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails on supported platforms
	var b strings.Builder
	for i := 0; i < 20; i++ {
		if i > 0 && i%5 == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(alphabet[raw[i]%32])
	}
	return b.String()
}

// RedeemChatLinkCode links the chat identity to the code's operator and uses
// the code up. A wrong, used or expired code is ECodeNotFound.
func (s *Store) RedeemChatLinkCode(ctx context.Context, code, surface, workspace, user string) (string, error) {
	hash := models.HashSecret(strings.ToUpper(strings.TrimSpace(code)))
	now := s.now()
	var operator string
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		var c ChatLinkCode
		if err := tx.Where("hash = ? AND used_at IS NULL AND expires_at > ?", hash, now).Take(&c).Error; err != nil {
			if notFound(err) {
				return models.Errorf(models.ECodeNotFound, "that link code is unknown, used or expired: create a new one with `gatehouse chat link`")
			}
			return err
		}
		res := tx.Model(&ChatLinkCode{}).Where("hash = ? AND used_at IS NULL", hash).UpdateColumn("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.Errorf(models.ECodeNotFound, "that link code was just used")
		}
		operator = c.Operator
		link := &ChatLink{Surface: surface, Workspace: workspace, UserID: user, Operator: c.Operator, CreatedAt: now}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(link).Error; err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]string{"surface": surface, "workspace": workspace, "user_id": user, "operator": c.Operator})
		return appendAudit(tx, &Audit{Action: ActionChatLink, Actor: "operator:" + c.Operator, Via: surface, CreatedAt: now, Detail: string(detail)})
	})
	return operator, err
}

// ChatOperator is the operator a chat identity speaks for: its link, and the
// live operator token of that name (its groups). Unlinked, or linked to an
// operator with no live token, is ECodeForbidden with the reason.
func (s *Store) ChatOperator(ctx context.Context, surface, workspace, user string) (models.Principal, error) {
	var link ChatLink
	err := s.reader(ctx).Where("surface = ? AND workspace = ? AND user_id = ?", surface, workspace, user).Take(&link).Error
	if notFound(err) {
		return models.Principal{}, models.Errorf(models.ECodeForbidden, "your chat account is not linked to a Gatehouse operator: run `gatehouse chat link` and send the code here")
	}
	if err != nil {
		return models.Principal{}, err
	}
	var t models.Token
	err = s.reader(ctx).Where("role = ? AND name = ? AND revoked_at IS NULL", models.RoleOperator, link.Operator).Take(&t).Error
	if notFound(err) {
		return models.Principal{}, models.Errorf(models.ECodeForbidden, "operator %s, linked to your chat account, has no live token", link.Operator)
	}
	if err != nil {
		return models.Principal{}, err
	}
	return t.Principal(), nil
}

// FirstChatCallback records key and reports whether this is its first
// arrival; callbacks older than a day are forgotten (Slack's and Telegram's
// retries and signed timestamps are all much younger).
func (s *Store) FirstChatCallback(ctx context.Context, key string) (bool, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	if err := db.Where("at < ?", now.Add(-24*time.Hour)).Delete(&ChatCallback{}).Error; err != nil {
		return false, err
	}
	res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&ChatCallback{Key: key, At: now})
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}
