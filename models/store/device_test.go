package store_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func webSubscription(t *testing.T, endpoint string) models.Device {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	enc := base64.RawURLEncoding.EncodeToString
	return models.Device{Kind: models.DeviceWebPush, Token: endpoint, P256dh: enc(k.PublicKey().Bytes()), Auth: enc(auth)}
}

func TestDevices(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		op := models.Principal{ID: "tok_op", Role: models.RoleOperator, Name: "ann"}
		token := strings.Repeat("AB12", 16)

		t.Run("register is idempotent and lower-cases the token", func(t *testing.T) {
			d1, created, err := s.RegisterDevice(ctx, op, models.Device{Kind: models.DeviceAPNs, Token: token, Name: "phone"})
			if err != nil || !created {
				t.Fatalf("first: %v %v", created, err)
			}
			d2, created, err := s.RegisterDevice(ctx, op, models.Device{Kind: models.DeviceAPNs, Token: strings.ToLower(token)})
			if err != nil || created || d2.ID != d1.ID {
				t.Fatalf("second: %+v %v %v", d2, created, err)
			}
			ds, err := s.ListDevices(ctx, false)
			if err != nil || len(ds) != 1 || ds[0].Token != strings.ToLower(token) || ds[0].Operator != "operator:ann" {
				t.Fatalf("list: %+v %v", ds, err)
			}
		})

		t.Run("concurrent first registrations make one device", func(t *testing.T) {
			tok := strings.Repeat("cd", 32)
			var wg sync.WaitGroup
			ids := make([]string, 6)
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, _, err := s.RegisterDevice(ctx, op, models.Device{Kind: models.DeviceAPNs, Token: tok})
					if err != nil {
						t.Error(err)
						return
					}
					ids[i] = d.ID
				}()
			}
			testkit.Wait(t, &wg, "the concurrent calls to finish")
			for _, id := range ids {
				if id != ids[0] {
					t.Fatalf("ids differ: %v", ids)
				}
			}
			if err := s.DropDevice(ctx, tok); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("bad input is refused and stores nothing", func(t *testing.T) {
			bad := []models.Device{
				{Kind: models.DeviceAPNs, Token: "not-hex"},
				{Kind: "fcm", Token: token},
				{Kind: models.DeviceWebPush, Token: "http://push.example.com/x", P256dh: webSubscription(t, "").P256dh, Auth: webSubscription(t, "").Auth},
				{Kind: models.DeviceWebPush, Token: "https://push.example.com/x", P256dh: "AAAA", Auth: webSubscription(t, "").Auth},
			}
			for _, d := range bad {
				if _, _, err := s.RegisterDevice(ctx, op, d); models.ErrorCode(err) != models.ECodeInvalid {
					t.Errorf("%+v: got %v", d, err)
				}
			}
			ds, _ := s.ListDevices(ctx, true)
			if len(ds) != 1 {
				t.Fatalf("stored %d devices", len(ds))
			}
		})

		t.Run("a retired device leaves the live list and comes back on registering", func(t *testing.T) {
			w, _, err := s.RegisterDevice(ctx, op, webSubscription(t, "https://push.example.com/sub/1"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.RecordPush(ctx, store.PushAttempt{DeviceID: w.ID, Kind: "webpush", Push: "alert", RequestID: "req_x", Version: 1, Attempt: 1, Status: 410, Result: "gone", Retire: true}); err != nil {
				t.Fatal(err)
			}
			live, _ := s.ListDevices(ctx, false)
			all, _ := s.ListDevices(ctx, true)
			if len(live) != 1 || len(all) != 2 {
				t.Fatalf("live %d all %d", len(live), len(all))
			}
			trail, _ := s.AuditTrail(ctx, "req_x")
			if len(trail) != 1 || trail[0].Action != "push" || !strings.Contains(trail[0].Detail, `"retired":true`) {
				t.Fatalf("trail: %+v", trail)
			}
			if _, _, err := s.RegisterDevice(ctx, op, webSubscription(t, "https://push.example.com/sub/1")); err != nil {
				t.Fatal(err)
			}
			if live, _ := s.ListDevices(ctx, false); len(live) != 2 {
				t.Fatalf("re-registered device is not live: %d", len(live))
			}
		})

		t.Run("drop by token or id; unknown is not_found", func(t *testing.T) {
			if err := s.DropDevice(ctx, strings.ToUpper(token)); err != nil {
				t.Fatal(err)
			}
			if err := s.DropDevice(ctx, token); models.ErrorCode(err) != models.ECodeNotFound {
				t.Fatalf("second drop: %v", err)
			}
		})

		t.Run("VAPID keys are made once and kept", func(t *testing.T) {
			k1, err := s.VAPIDKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			k2, err := s.VAPIDKeys(ctx)
			if err != nil || k1 != k2 {
				t.Fatalf("keys changed: %v %v", k1, k2)
			}
			pub, err := base64.RawURLEncoding.DecodeString(k1.Public)
			if err != nil || len(pub) != 65 {
				t.Fatalf("public key: %d %v", len(pub), err)
			}
		})
	})
}
