// Package apnstest is an in-process APNs: an HTTP/2 TLS server that speaks the
// provider API (POST /3/device/{token}) and checks what Apple checks — topic,
// push type, priority, collapse id, payload size, and an ES256 provider token
// signed by the key it made. Tests, benchmarks and `gatehouse push test` drive
// the real apns2 client against it.
package apnstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehousehq/gatehouse/push"
	"github.com/golang-jwt/jwt/v4"
	"github.com/google/uuid"
)

// Push is one notification the server accepted for checking.
type Push struct {
	Token      string
	Topic      string
	PushType   string
	Priority   string
	CollapseID string
	Body       []byte
	Payload    map[string]any
	Status     int    // what the server answered
	Reason     string // the reason it gave, if not 200
}

// Server is a running fake APNs.
type Server struct {
	URL     string
	KeyPEM  []byte // the .p8 provider key
	KeyID   string
	TeamID  string
	Topic   string
	CertPEM []byte // the server's certificate: trust it (RootCAs, or SSL_CERT_FILE)
	RootCAs *x509.CertPool
	// OnPush, when set before pushes arrive, is called with each one before it
	// is answered (also while the server hangs).
	OnPush func(Push)

	srv     *httptest.Server
	key     *ecdsa.PrivateKey
	count   atomic.Int64
	mu      sync.Mutex
	answers map[string][2]any // token -> status, reason
	hang    chan struct{}     // non-nil while hung; closed to release
}

// New starts a server with a fresh provider key.
func New() (*Server, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	s := &Server{
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		KeyID:  "TESTKEY123", TeamID: "TESTTEAM99", Topic: "dev.gatehouse.test",
		key: key, answers: map[string][2]any{},
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.EnableHTTP2 = true
	s.srv.StartTLS()
	s.URL = s.srv.URL
	cert := s.srv.Certificate()
	s.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	s.RootCAs = x509.NewCertPool()
	s.RootCAs.AddCert(cert)
	return s, nil
}

// APNsConfig is the client configuration that reaches this server.
func (s *Server) APNsConfig() push.APNsConfig {
	return push.APNsConfig{Key: s.KeyPEM, KeyID: s.KeyID, TeamID: s.TeamID, Topic: s.Topic, Host: s.URL, RootCAs: s.RootCAs}
}

// Answer makes every later push to token answer status with reason (e.g. 410
// "Unregistered", 400 "BadDeviceToken", 429 "TooManyRequests").
func (s *Server) Answer(token string, status int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[strings.ToLower(token)] = [2]any{status, reason}
}

// Hang makes every push wait, unanswered, until Release or Close.
func (s *Server) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang == nil {
		s.hang = make(chan struct{})
	}
}

// Release answers the pushes held by Hang and stops hanging.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang != nil {
		close(s.hang)
		s.hang = nil
	}
}

// Count is how many pushes arrived.
func (s *Server) Count() int64 { return s.count.Load() }

// Close releases hung pushes and stops the server.
func (s *Server) Close() {
	s.Release()
	s.srv.Close()
}

// NewToken returns a random device token, as APNs issues them.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var devicePath = regexp.MustCompile(`^/3/device/([0-9a-fA-F]{32,200})$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.count.Add(1)
	p, status, reason := s.check(r)
	if status == http.StatusOK {
		s.mu.Lock()
		if a, ok := s.answers[strings.ToLower(p.Token)]; ok {
			status, reason = a[0].(int), a[1].(string)
		}
		s.mu.Unlock()
	}
	p.Status, p.Reason = status, reason
	if s.OnPush != nil {
		s.OnPush(p)
	}
	s.mu.Lock()
	hang := s.hang
	s.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("apns-id", uuid.NewString())
	if status == http.StatusOK {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"reason": reason}
	if status == http.StatusGone {
		body["timestamp"] = time.Now().UnixMilli()
	}
	_ = json.NewEncoder(w).Encode(body)
}

// check validates a request as APNs does and returns what it carried.
func (s *Server) check(r *http.Request) (Push, int, string) {
	p := Push{
		Topic: r.Header.Get("apns-topic"), PushType: r.Header.Get("apns-push-type"),
		Priority: r.Header.Get("apns-priority"), CollapseID: r.Header.Get("apns-collapse-id"),
	}
	if r.Method != http.MethodPost {
		return p, http.StatusMethodNotAllowed, "MethodNotAllowed"
	}
	if r.ProtoMajor != 2 {
		return p, http.StatusBadRequest, "BadPath" // APNs speaks HTTP/2 only
	}
	m := devicePath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return p, http.StatusNotFound, "BadPath"
	}
	p.Token = m[1]
	if reason := s.checkToken(r.Header.Get("authorization")); reason != "" {
		return p, http.StatusForbidden, reason
	}
	switch {
	case p.Topic == "":
		return p, http.StatusBadRequest, "MissingTopic"
	case p.Topic != s.Topic:
		return p, http.StatusBadRequest, "DeviceTokenNotForTopic"
	case p.PushType != "alert" && p.PushType != "background":
		return p, http.StatusBadRequest, "InvalidPushType"
	case p.Priority != "" && p.Priority != "5" && p.Priority != "10" && p.Priority != "1":
		return p, http.StatusBadRequest, "BadPriority"
	case p.PushType == "background" && p.Priority != "5":
		return p, http.StatusBadRequest, "BadPriority" // Apple: background pushes must use 5
	case len(p.CollapseID) > 64:
		return p, http.StatusBadRequest, "BadCollapseId"
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 5000))
	if err != nil {
		return p, http.StatusBadRequest, "PayloadEmpty"
	}
	p.Body = body
	switch {
	case len(body) == 0:
		return p, http.StatusBadRequest, "PayloadEmpty"
	case len(body) > 4096:
		return p, http.StatusRequestEntityTooLarge, "PayloadTooLarge"
	}
	if err := json.Unmarshal(body, &p.Payload); err != nil {
		return p, http.StatusBadRequest, "BadPayload"
	}
	if _, ok := p.Payload["aps"].(map[string]any); !ok {
		return p, http.StatusBadRequest, "BadPayload"
	}
	return p, http.StatusOK, ""
}

// checkToken verifies the provider JWT: ES256, our key id, our team, issued
// within the hour.
func (s *Server) checkToken(h string) string {
	raw, ok := strings.CutPrefix(h, "bearer ")
	if !ok {
		return "MissingProviderToken"
	}
	tok, err := jwt.Parse(raw, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodES256 {
			return nil, fmt.Errorf("alg %v", t.Header["alg"])
		}
		if t.Header["kid"] != s.KeyID {
			return nil, fmt.Errorf("kid %v", t.Header["kid"])
		}
		return &s.key.PublicKey, nil
	})
	if err != nil || !tok.Valid {
		return "InvalidProviderToken"
	}
	c, _ := tok.Claims.(jwt.MapClaims)
	iat, _ := c["iat"].(float64)
	if c["iss"] != s.TeamID || time.Since(time.Unix(int64(iat), 0)) > time.Hour {
		return "InvalidProviderToken"
	}
	return ""
}
