package web_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

type deviceRig struct {
	url   string
	store *store.Store
	op    string
	agent string
}

func newDeviceRig(t *testing.T) *deviceRig {
	t.Helper()
	st, changes := storetest.Store(t, "sqlite")
	srv, err := web.New(web.Config{BaseURL: "http://127.0.0.1"}, web.Deps{Store: st, Watcher: changes, Devices: st})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	_, op, err := st.CreateToken(context.Background(), models.RoleOperator, "ann")
	if err != nil {
		t.Fatal(err)
	}
	_, ag, err := st.CreateToken(context.Background(), models.RoleAgent, "bot")
	if err != nil {
		t.Fatal(err)
	}
	return &deviceRig{url: hs.URL, store: st, op: op, agent: ag}
}

func (rg *deviceRig) call(t *testing.T, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, rg.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func TestDeviceRoutes(t *testing.T) {
	rg := newDeviceRig(t)
	token := strings.Repeat("0a1b", 16)

	t.Run("an operator registers an APNs token: 201, then 200 for the same token", func(t *testing.T) {
		code, d := rg.call(t, rg.op, "POST", "/v1/devices", `{"token":"`+strings.ToUpper(token)+`","name":"phone"}`)
		if code != 201 || d["token_suffix"] != "…"+token[len(token)-6:] || d["kind"] != "apns" || d["operator"] != "operator:ann" {
			t.Fatalf("%d %v", code, d)
		}
		if b, _ := json.Marshal(d); strings.Contains(string(b), token) {
			t.Fatalf("the registration answer shows the token: %s", b)
		}
		code, again := rg.call(t, rg.op, "POST", "/v1/devices", `{"token":"`+token+`"}`)
		if code != 200 || again["id"] != d["id"] {
			t.Fatalf("%d %v", code, again)
		}
	})

	t.Run("bad input is 400 and stores nothing; agents are 403; anonymous 401", func(t *testing.T) {
		for _, body := range []string{`{"token":"xyz"}`, `{"token":"` + token + `","kind":"fcm"}`, `{"token":"` + token + `","extra":1}`, ``} {
			if code, e := rg.call(t, rg.op, "POST", "/v1/devices", body); code != 400 || e["error"] == nil {
				t.Errorf("%s: %d %v", body, code, e)
			}
		}
		if code, e := rg.call(t, rg.agent, "POST", "/v1/devices", `{"token":"`+strings.Repeat("ff", 32)+`"}`); code != 403 || e["error"] != "forbidden" {
			t.Errorf("agent: %d %v", code, e)
		}
		if code, _ := rg.call(t, "", "GET", "/v1/devices", ""); code != 401 {
			t.Errorf("anonymous: %d", code)
		}
		ds, _ := rg.store.ListDevices(context.Background(), true)
		if len(ds) != 1 {
			t.Fatalf("%d devices stored", len(ds))
		}
	})

	t.Run("the page subscribes with its PushSubscription; keys are never shown", func(t *testing.T) {
		code, k := rg.call(t, rg.op, "GET", "/v1/webpush/key", "")
		keys, _ := rg.store.VAPIDKeys(context.Background())
		if code != 200 || k["public_key"] != keys.Public {
			t.Fatalf("key: %d %v", code, k)
		}
		priv, _ := ecdh.P256().GenerateKey(rand.Reader)
		auth := make([]byte, 16)
		_, _ = rand.Read(auth)
		enc := base64.RawURLEncoding.EncodeToString
		sub := `{"endpoint":"https://push.example.com/s/1","expirationTime":null,"keys":{"p256dh":"` + enc(priv.PublicKey().Bytes()) + `","auth":"` + enc(auth) + `"}}`
		code, d := rg.call(t, rg.op, "POST", "/v1/webpush/subscribe", sub)
		if code != 201 || d["token_suffix"] != "…om/s/1" || d["kind"] != "webpush" {
			t.Fatalf("subscribe: %d %v", code, d)
		}
		code, list := rg.call(t, rg.op, "GET", "/v1/devices", "")
		b, _ := json.Marshal(list)
		if code != 200 || len(list["devices"].([]any)) != 2 {
			t.Fatalf("list: %d %s", code, b)
		}
		for _, secret := range []string{enc(auth), enc(priv.PublicKey().Bytes()), "push.example.com", token} {
			if strings.Contains(string(b), secret) {
				t.Fatalf("the list shows %q: %s", secret, b)
			}
		}
		if code, _ := rg.call(t, rg.op, "POST", "/v1/webpush/unsubscribe", `{"endpoint":"https://push.example.com/s/1"}`); code != 204 {
			t.Fatalf("unsubscribe: %d", code)
		}
	})

	t.Run("DELETE drops by id: 204", func(t *testing.T) {
		other := strings.Repeat("9c8d", 16)
		_, d := rg.call(t, rg.op, "POST", "/v1/devices", `{"token":"`+other+`"}`)
		id, _ := d["id"].(string)
		if code, _ := rg.call(t, rg.op, "DELETE", "/v1/devices/"+id, ""); id == "" || code != 204 {
			t.Fatalf("drop %q: %d", id, code)
		}
	})

	t.Run("DELETE drops by token: 204, then 404", func(t *testing.T) {
		if code, _ := rg.call(t, rg.op, "DELETE", "/v1/devices/"+token, ""); code != 204 {
			t.Fatalf("drop: %d", code)
		}
		if code, e := rg.call(t, rg.op, "DELETE", "/v1/devices/"+token, ""); code != 404 || e["error"] != "not_found" {
			t.Fatalf("drop again: %d %v", code, e)
		}
	})
}

// failingDevices is the real store whose DropDevice fails, to reach the 500 path.
type failingDevices struct{ *store.Store }

func (failingDevices) DropDevice(context.Context, string) error { return errors.New("disk on fire") }

func TestDeviceTokensStayOutOfLogs(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	srv, err := web.New(web.Config{BaseURL: "http://127.0.0.1"}, web.Deps{Store: st, Watcher: changes, Devices: failingDevices{st}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	_, op, err := st.CreateToken(context.Background(), models.RoleOperator, "ann")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	token := strings.Repeat("7e6f", 16)
	rg := &deviceRig{url: hs.URL, store: st, op: op}
	if code, e := rg.call(t, op, "DELETE", "/v1/devices/"+token, ""); code != 500 || e["error"] != "internal" {
		t.Fatalf("%d %v", code, e)
	}
	if strings.Contains(logs.String(), token) || !strings.Contains(logs.String(), "/v1/devices/:token") {
		t.Fatalf("the 500's log line: %s", logs.String())
	}
}
