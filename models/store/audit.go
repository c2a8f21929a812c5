package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// Audit is one append-only entry of the trail, a link of one of its hash
// chains (audit_chain.go). Seq counts within the chain; it is null only on
// rows an older build wrote before the chain existed, which migration chains
// once.
type Audit struct {
	ID        uint64    `gorm:"primaryKey;autoIncrement"`
	Chain     uint32    `gorm:"not null;default:0;uniqueIndex:idx_audits_chain_seq,priority:1"`
	Seq       uint64    `gorm:"uniqueIndex:idx_audits_chain_seq,priority:2"`
	RequestID string    `gorm:"size:40;index"`
	Version   int       `gorm:"not null"`
	Action    string    `gorm:"size:32;not null"`
	Actor     string    `gorm:"size:200;not null"`
	Via       string    `gorm:"size:200"`
	Detail    string    // JSON object with what the action carried; "" is {}
	CreatedAt time.Time `gorm:"not null"`
	PrevHash  string    `gorm:"size:64"`
	Hash      string    `gorm:"size:64"`
}

// audit appends one entry to the chain inside tx, the transaction making the
// change it records.
func (s *Store) audit(tx *gorm.DB, r *models.Request, action, actor, via string, detail map[string]any) error {
	d := ""
	if len(detail) > 0 {
		b, err := json.Marshal(detail)
		if err != nil {
			return err
		}
		d = string(b)
	}
	return appendAudit(tx, &Audit{RequestID: r.ID, Version: r.Version, Action: action, Actor: actor, Via: via, Detail: d, CreatedAt: s.now()})
}

// AuditTrail returns the trail of one request, oldest first. Its entries may
// lie on several chains; their "at" orders them (a request's changes are
// serialised on its row, so each is stamped after the one before committed),
// and within one chain its seq.
func (s *Store) AuditTrail(ctx context.Context, requestID string) ([]Audit, error) {
	var rows []Audit
	err := s.reader(ctx).Where("request_id = ?", requestID).Order("created_at, chain, seq").Find(&rows).Error
	return rows, err
}

// AuditEntries returns up to limit entries of one chain after seq, in order.
func (s *Store) AuditEntries(ctx context.Context, chain uint32, after uint64, limit int) ([]Audit, error) {
	var rows []Audit
	err := s.reader(ctx).Where("chain = ? AND seq > ?", chain, after).Order("seq").Limit(limit).Find(&rows).Error
	return rows, err
}

// AuditChainCount is how many chains the trail has (head rows).
func (s *Store) AuditChainCount(ctx context.Context) (int, error) {
	var n int64
	err := s.reader(ctx).Model(&AuditHead{}).Count(&n).Error
	return int(n), err
}
