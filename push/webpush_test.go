package push_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/hkdf"
)

// browser is a push subscription as a browser holds it: the private half stays
// here, the public half and auth secret go to the server.
type browser struct {
	key  *ecdh.PrivateKey
	auth []byte
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	return &browser{key: k, auth: auth}
}

func (b *browser) device(endpoint string) models.Device {
	enc := base64.RawURLEncoding.EncodeToString
	return models.Device{Kind: models.DeviceWebPush, Token: endpoint, P256dh: enc(b.key.PublicKey().Bytes()), Auth: enc(b.auth)}
}

// decrypt undoes RFC 8291 (aes128gcm content coding, RFC 8188) as the browser does.
func (b *browser) decrypt(body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("short body")
	}
	salt, idLen := body[:16], int(body[20])
	rs := binary.BigEndian.Uint32(body[16:20])
	if len(body) < 21+idLen || idLen != 65 {
		return nil, errors.New("bad key id")
	}
	asPub, ct := body[21:21+idLen], body[21+idLen:]
	if uint32(len(ct)) > rs {
		return nil, errors.New("more than one record")
	}
	senderKey, err := ecdh.P256().NewPublicKey(asPub)
	if err != nil {
		return nil, err
	}
	shared, err := b.key.ECDH(senderKey)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...), asPub...)
	ikm := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, shared, b.auth, info), ikm); err != nil {
		return nil, err
	}
	cek, nonce := make([]byte, 16), make([]byte, 12)
	if _, err := io.ReadFull(hkdf.New(sha256.New, ikm, salt, []byte("Content-Encoding: aes128gcm\x00")), cek); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(hkdf.New(sha256.New, ikm, salt, []byte("Content-Encoding: nonce\x00")), nonce); err != nil {
		return nil, err
	}
	blk, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		return nil, err
	}
	// The last record ends with the delimiter 0x02 followed by zero padding.
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 2 {
		return nil, errors.New("no last-record delimiter")
	}
	return plain[:len(plain)-1], nil
}

// received is one POST the fake push service got.
type received struct {
	path  string
	auth  string
	topic string
	body  []byte
}

// checkVAPID verifies the Authorization header: "vapid t=JWT, k=KEY", with k the
// server's public key and the JWT signed by it for this push service.
func checkVAPID(t *testing.T, h, public, aud string) {
	t.Helper()
	rest, ok := strings.CutPrefix(h, "vapid t=")
	tok, k, ok2 := strings.Cut(rest, ", k=")
	if !ok || !ok2 || k != public {
		t.Fatalf("Authorization %q (want k=%s)", h, public)
	}
	raw, err := base64.RawURLEncoding.DecodeString(k)
	if err != nil || len(raw) != 65 {
		t.Fatalf("k: %v", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatalf("k: %v", err)
	}
	parsed, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return pub, nil }, jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(aud))
	if err != nil || !parsed.Valid {
		t.Fatalf("VAPID JWT: %v", err)
	}
}

func TestWebPush(t *testing.T) {
	got := make(chan received, 100)
	gone := map[string]bool{"/sub/gone": true}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{path: r.URL.Path, auth: r.Header.Get("Authorization"), topic: r.Header.Get("Topic"), body: body}
		if gone[r.URL.Path] {
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer svc.Close()

	clock := newClock()
	var keys store.VAPIDKeys
	webOnly := func(s *store.Store, _ *apnstest.Server) push.Senders {
		var err error
		if keys, err = s.VAPIDKeys(ctx); err != nil {
			t.Fatal(err)
		}
		return push.Senders{WebPush: &push.WebPush{Keys: keys, Subject: "mailto:ops@example.com"}}
	}
	rg := newRig(t, "sqlite", push.Config{AfterFunc: clock.AfterFunc}, webOnly, nil)
	br := newBrowser(t)
	if _, _, err := rg.store.RegisterDevice(ctx, rg.op, br.device(svc.URL+"/sub/1")); err != nil {
		t.Fatal(err)
	}
	r := rg.file(t, models.KindQuestion)
	clock.next(t).fire()

	t.Run("the alert decrypts with the subscription's keys to generic text", func(t *testing.T) {
		m := testkit.Recv(t, got, "the alert")
		checkVAPID(t, m.auth, keys.Public, svc.URL)
		plain, err := br.decrypt(m.body)
		if err != nil {
			t.Fatalf("decrypt: %v", err)
		}
		noSecrets(t, plain)
		var p map[string]any
		if err := json.Unmarshal(plain, &p); err != nil {
			t.Fatal(err)
		}
		if p["title"] != push.Title || p["body"] != push.BodyOne || p["url"] != base+"/requests/"+r.ID || p["request_id"] != r.ID || p["resolved"] != nil {
			t.Fatalf("payload %s", plain)
		}
		if m.topic != r.ID {
			t.Errorf("Topic %q, want the request id", m.topic)
		}
	})

	t.Run("a decide sends the resolved update", func(t *testing.T) {
		rg.decide(t, r)
		m := testkit.Recv(t, got, "the resolved update")
		plain, err := br.decrypt(m.body)
		if err != nil {
			t.Fatalf("decrypt: %v", err)
		}
		noSecrets(t, plain)
		var p map[string]any
		_ = json.Unmarshal(plain, &p)
		if p["request_id"] != r.ID || p["resolved"] != true || p["body"] != nil {
			t.Fatalf("payload %s", plain)
		}
	})

	t.Run("410 from the push service retires the subscription", func(t *testing.T) {
		d, _, err := rg.store.RegisterDevice(ctx, rg.op, newBrowser(t).device(svc.URL+"/sub/gone"))
		if err != nil {
			t.Fatal(err)
		}
		rg.file(t, models.KindApproval)
		clock.next(t).fire()
		for {
			e := rg.wait(t, "attempt")
			if e.Device.ID == d.ID {
				if !e.Result.Retire {
					t.Fatalf("result %+v", e.Result)
				}
				break
			}
		}
		live, _ := rg.store.ListDevices(ctx, false)
		if len(live) != 1 || live[0].ID == d.ID {
			t.Fatalf("live: %+v", live)
		}
	})
}
