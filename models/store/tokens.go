package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/gatehousehq/gatehouse/models"
)

// CreateToken makes a token and returns its record and the secret, which is
// never stored and cannot be shown again.
func (s *Store) CreateToken(ctx context.Context, role, name string) (*models.Token, string, error) {
	return s.CreateNamedToken(ctx, NewToken{Role: role, Name: name})
}

// NewToken is what `token create` asks for.
type NewToken struct {
	Role   string
	Name   string
	Groups []string // operators only
	For    string   // agents and runtimes only: the operator they act for
}

func (n *NewToken) validate() error {
	if !models.ValidRole(n.Role) {
		return models.Errorf(models.ECodeInvalid, "role %q is not one of operator, runtime, agent", n.Role)
	}
	if n.Name == "" || len(n.Name) > 100 {
		return models.Errorf(models.ECodeInvalid, "name must be 1 to 100 bytes")
	}
	if len(n.Groups) > 0 && n.Role != models.RoleOperator {
		return models.Errorf(models.ECodeInvalid, "only operator tokens have groups")
	}
	for _, g := range n.Groups {
		if !models.NamePattern.MatchString(g) {
			return models.Errorf(models.ECodeInvalid, "group %q must match %s", g, models.NamePattern)
		}
	}
	if n.For != "" {
		if n.Role == models.RoleOperator {
			return models.Errorf(models.ECodeInvalid, "--for names the person an agent or runtime token acts for; an operator acts for itself")
		}
		if !models.NamePattern.MatchString(n.For) {
			return models.Errorf(models.ECodeInvalid, "for %q must match %s", n.For, models.NamePattern)
		}
	}
	return nil
}

// CreateNamedToken makes a token with groups or the person it acts for. A
// second live token with the same role and name is refused: names are who
// votes, so two live alices would be one voter with two keys.
func (s *Store) CreateNamedToken(ctx context.Context, n NewToken) (*models.Token, string, error) {
	return s.createToken(ctx, n, nil)
}

// createToken is CreateNamedToken; record, when set, audits the token in the
// transaction that creates it (tokens_audit.go).
func (s *Store) createToken(ctx context.Context, n NewToken, record func(tx *gorm.DB, t *models.Token) error) (*models.Token, string, error) {
	if err := n.validate(); err != nil {
		return nil, "", err
	}
	secret := models.NewSecret("gh_")
	t := &models.Token{ID: models.NewID("tok_"), Name: n.Name, Role: n.Role, Groups: n.Groups, For: n.For, Hash: models.HashSecret(secret), CreatedAt: s.now()}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, record != nil); err != nil {
			return err
		}
		var live int64
		if err := tx.Model(&models.Token{}).Where("role = ? AND name = ? AND revoked_at IS NULL", n.Role, n.Name).Count(&live).Error; err != nil {
			return err
		}
		if live > 0 {
			return models.Errorf(models.ECodeConflict, "a live %s token named %q already exists: revoke it first (`gatehouse token revoke %s`) or pick another name", n.Role, n.Name, n.Name)
		}
		// "for" switches self-approval off for that operator only: a name no
		// operator has (a typo) would quietly protect no one.
		if n.For != "" {
			var ops int64
			if err := tx.Model(&models.Token{}).Where("role = ? AND name = ? AND revoked_at IS NULL", models.RoleOperator, n.For).Count(&ops).Error; err != nil {
				return err
			}
			if ops == 0 {
				return models.Errorf(models.ECodeInvalid, "for (--for) %q names no operator: it names the operator this token acts for, who may then never approve its requests; "+
					"create that operator's token first (`gatehouse token create --role operator --name %s`) or check the spelling", n.For, n.For)
			}
		}
		if err := tx.Create(t).Error; err != nil || record == nil {
			return err
		}
		return record(tx, t)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, "", models.Errorf(models.ECodeConflict, "a live %s token named %q already exists", n.Role, n.Name)
	}
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// ListTokens returns every token, revoked ones included.
func (s *Store) ListTokens(ctx context.Context) ([]models.Token, error) {
	var ts []models.Token
	err := s.DB.WithContext(ctx).Order("created_at").Find(&ts).Error
	return ts, err
}

// RevokeToken revokes a token by id or name; sessions it opened end too, and
// the remembered allows it made are revoked (audited as by "system").
func (s *Store) RevokeToken(ctx context.Context, idOrName string) (int64, error) {
	return s.revokeToken(ctx, idOrName, "system", "", nil)
}

// revokeToken is RevokeToken by actor through via; record, when set, audits
// each token revoked in the transaction that revokes it (tokens_audit.go).
func (s *Store) revokeToken(ctx context.Context, idOrName, actor, via string, record func(tx *gorm.DB, ts []models.Token) error) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Audited always: the grants the token made are revoked with it.
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		var ids []string
		if err := tx.Model(&models.Token{}).Where("(id = ? OR name = ?) AND revoked_at IS NULL", idOrName, idOrName).Pluck("id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return models.Errorf(models.ECodeNotFound, "no live token %q", idOrName)
		}
		res := tx.Model(&models.Token{}).Where("id IN ?", ids).Update("revoked_at", s.now())
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		if err := tx.Where("token_id IN ?", ids).Delete(&models.Session{}).Error; err != nil {
			return err
		}
		var ts []models.Token
		if err := tx.Where("id IN ?", ids).Order("id").Find(&ts).Error; err != nil {
			return err
		}
		if record != nil {
			if err := record(tx, ts); err != nil {
				return err
			}
		}
		if err := s.revokeMadeBy(tx, ts, actor, via); err != nil {
			return err
		}
		return s.revoked(tx)
	})
	return n, s.dropCachedOn(err)
}

// Authenticate returns the live token a secret belongs to.
func (s *Store) Authenticate(ctx context.Context, secret string) (*models.Token, error) {
	hash := models.HashSecret(secret)
	var l look
	if s.auth != nil {
		var err error
		if l, err = s.auth.begin(ctx); err != nil {
			return nil, err
		}
		if t, ok := s.auth.token(hash, l); ok {
			return &t, nil
		}
	}
	var t models.Token
	err := s.reader(ctx).Where("hash = ? AND revoked_at IS NULL", hash).Take(&t).Error
	if notFound(err) {
		return nil, models.Errorf(models.ECodeUnauthenticated, "unknown or revoked token")
	}
	if err != nil {
		return nil, err
	}
	if s.auth != nil {
		s.auth.putToken(hash, t, l)
	}
	return &t, nil
}

// HasOperator reports whether any live operator token exists.
func (s *Store) HasOperator(ctx context.Context) (bool, error) {
	var n int64
	err := s.reader(ctx).Model(&models.Token{}).Where("role = ? AND revoked_at IS NULL", models.RoleOperator).Count(&n).Error
	return n > 0, err
}

// FirstOperator is the name the session of serve's first login link speaks
// as: votes need a name, and a token created later with this name is the same
// person.
const FirstOperator = "admin"

// CreateLoginTicket returns a one-time login secret valid for ttl, for a
// session named FirstOperator.
func (s *Store) CreateLoginTicket(ctx context.Context, ttl time.Duration) (string, error) {
	secret := models.NewSecret("lt_")
	now := s.now()
	err := s.DB.WithContext(ctx).Create(&models.LoginTicket{Hash: models.HashSecret(secret), Name: FirstOperator, CreatedAt: now, ExpiresAt: now.Add(ttl)}).Error
	return secret, err
}

// A browser session ends SessionIdle after its last use and SessionTTL after
// it opened, whichever comes first.
const (
	SessionTTL  = 30 * 24 * time.Hour
	SessionIdle = 7 * 24 * time.Hour
)

// UseLoginTicket spends a one-time ticket and opens an operator session.
func (s *Store) UseLoginTicket(ctx context.Context, secret string) (*models.Session, string, error) {
	var sess *models.Session
	var cookie string
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil { // the login is audited
			return err
		}
		now := s.now()
		// A link is for the first person at the console, before any operator
		// token: once one exists, every outstanding link is dead.
		var ops int64
		if err := tx.Model(&models.Token{}).Where("role = ? AND revoked_at IS NULL", models.RoleOperator).Count(&ops).Error; err != nil {
			return err
		}
		if ops > 0 {
			return models.Errorf(models.ECodeUnauthenticated, "login links stop working once an operator token exists: log in with that token")
		}
		res := tx.Model(&models.LoginTicket{}).Where("hash = ? AND used_at IS NULL AND expires_at > ?", models.HashSecret(secret), now).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.Errorf(models.ECodeUnauthenticated, "this login link is unknown, used or expired")
		}
		var lt models.LoginTicket
		if err := tx.Where("hash = ?", models.HashSecret(secret)).Take(&lt).Error; err != nil {
			return err
		}
		name := lt.Name
		if name == "" {
			name = "login-link" // a ticket made before tickets were named
		}
		var err error
		sess, cookie, err = s.openSession(tx, "", name, nil)
		return err
	})
	return sess, cookie, err
}

// LoginWithToken opens an operator session for an operator token's secret.
func (s *Store) LoginWithToken(ctx context.Context, secret string) (*models.Session, string, error) {
	t, err := s.Authenticate(ctx, secret)
	if err != nil {
		return nil, "", err
	}
	if t.Role != models.RoleOperator {
		return nil, "", models.Errorf(models.ECodeUnauthenticated, "only an operator token can log in to the page")
	}
	if s.loginRead != nil {
		s.loginRead()
	}
	var sess *models.Session
	var cookie string
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil { // the login is audited
			return err
		}
		// Authenticate read a cache: a revocation committed since then must
		// not be outlived by a session the revoked token opens.
		var live int64
		if err := tx.Model(&models.Token{}).Where("id = ? AND revoked_at IS NULL", t.ID).Count(&live).Error; err != nil {
			return err
		}
		if live == 0 {
			return models.Errorf(models.ECodeUnauthenticated, "this token is revoked")
		}
		var err error
		sess, cookie, err = s.openSession(tx, t.ID, t.Name, t.Groups)
		return err
	})
	return sess, cookie, err
}

// openSession opens an operator's page session in tx, which holds the audit
// head, and records the login in the audit chain: who logged in, with which
// token or by a login link, never the cookie.
func (s *Store) openSession(tx *gorm.DB, tokenID, name string, groups []string) (*models.Session, string, error) {
	cookie := models.NewSecret("gs_")
	now := s.now()
	sess := &models.Session{Hash: models.HashSecret(cookie), ID: models.NewID("ses_"), TokenID: tokenID, Name: name, Groups: groups, CSRF: models.NewID("csrf_"),
		CreatedAt: now, LastSeenAt: now, ExpiresAt: sessionExpiry(now, now)}
	if err := tx.Create(sess).Error; err != nil {
		return nil, "", err
	}
	if err := appendAudit(tx, &Audit{Action: ActionSessionOpen, Actor: sess.Principal().Label(), Via: models.ViaPage, CreatedAt: now,
		Detail: sessionDetail(sess)}); err != nil {
		return nil, "", err
	}
	return sess, cookie, nil
}

// SessionFor returns the live session a cookie secret belongs to.
func (s *Store) SessionFor(ctx context.Context, cookie string) (*models.Session, error) {
	hash := models.HashSecret(cookie)
	now := s.now()
	var l look
	if s.auth != nil {
		var err error
		if l, err = s.auth.begin(ctx); err != nil {
			return nil, err
		}
		if sess, ok := s.auth.session(hash, l); ok && now.Before(sess.ExpiresAt) {
			return s.seen(ctx, hash, sess, l)
		}
	}
	var sess models.Session
	err := s.reader(ctx).Where("hash = ? AND expires_at > ?", hash, now).Take(&sess).Error
	if notFound(err) {
		return nil, models.Errorf(models.ECodeUnauthenticated, "no such session")
	}
	if err != nil {
		return nil, err
	}
	return s.seen(ctx, hash, sess, l)
}

// EndSession logs a session out, on every replica's cache too, and records
// the logout in the audit chain. A cookie of no session (gone already, or
// never one) writes no entry and takes no audit head.
func (s *Store) EndSession(ctx context.Context, cookie string) error {
	return s.dropCachedOn(s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var sess models.Session
		err := tx.Where("hash = ?", models.HashSecret(cookie)).Take(&sess).Error
		if notFound(err) {
			return s.revoked(tx)
		}
		if err != nil {
			return err
		}
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		res := tx.Where("hash = ?", sess.Hash).Delete(&models.Session{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 { // ended meanwhile, and audited by whoever ended it
			return s.revoked(tx)
		}
		if err := appendAudit(tx, &Audit{Action: ActionSessionEnd, Actor: sess.Principal().Label(), Via: models.ViaPage, CreatedAt: s.now(),
			Detail: sessionDetail(&sess)}); err != nil {
			return err
		}
		return s.revoked(tx)
	}))
}
