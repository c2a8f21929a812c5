//go:build !agent

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

// TestPushTest runs `gatehouse push test` against the fake APNs, configured
// only through the environment: the .p8 file, the host override, and the
// server's certificate trusted through SSL_CERT_FILE as Go does for any host.
func TestPushTest(t *testing.T) {
	srv, err := apnstest.New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	keyFile, certFile := filepath.Join(dir, "AuthKey.p8"), filepath.Join(dir, "apns.pem")
	if err := os.WriteFile(keyFile, srv.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, srv.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"SSL_CERT_FILE": certFile, push.EnvAPNsKeyFile: keyFile, push.EnvAPNsKeyID: srv.KeyID,
		push.EnvAPNsTeamID: srv.TeamID, push.EnvAPNsTopic: srv.Topic, push.EnvAPNsHost: srv.URL,
	} {
		t.Setenv(k, v)
	}
	db := "sqlite:" + filepath.Join(dir, "g.db")
	store, closeDB, err := openStore(db, true)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	op := models.Principal{ID: "tok_op", Role: models.RoleOperator, Name: "ann"}
	good, gone := apnstest.NewToken(), apnstest.NewToken()
	for _, tok := range []string{good, gone} {
		if _, _, err := store.RegisterDevice(context.Background(), op, models.Device{Kind: models.DeviceAPNs, Token: tok, Name: "phone"}); err != nil {
			t.Fatal(err)
		}
	}
	srv.Answer(gone, 410, "Unregistered")

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"push", "test", "--database", db}, nil, &out, &errOut)

	t.Run("prints one line per device with its result, and fails when one was refused", func(t *testing.T) {
		if code != 1 {
			t.Fatalf("exit %d, stderr %s", code, errOut.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 || !strings.Contains(out.String(), "sent (200") || !strings.Contains(out.String(), "410 Unregistered") {
			t.Fatalf("output:\n%s", out.String())
		}
		if srv.Count() != 2 {
			t.Fatalf("APNs got %d pushes", srv.Count())
		}
	})
}
