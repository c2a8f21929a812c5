package push_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

func TestSendTest(t *testing.T) {
	st, _ := storetest.Store(t, "sqlite")
	srv, err := apnstest.New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, err := push.NewAPNs(srv.APNsConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	op := models.Principal{ID: "tok_op", Role: models.RoleOperator, Name: "ann"}
	good, gone := apnstest.NewToken(), apnstest.NewToken()
	for _, tok := range []string{good, gone} {
		if _, _, err := st.RegisterDevice(ctx, op, models.Device{Kind: models.DeviceAPNs, Token: tok}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.RegisterDevice(ctx, op, newBrowser(t).device("https://push.example.com/x")); err != nil {
		t.Fatal(err)
	}
	srv.Answer(gone, 410, "Unregistered")
	pushes := make(chan apnstest.Push, 10)
	srv.OnPush = func(p apnstest.Push) { pushes <- p }

	res, err := push.SendTest(ctx, st, push.Senders{APNs: a}, base)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("one result per device, each as the service answered", func(t *testing.T) {
		if len(res) != 3 {
			t.Fatalf("%d results", len(res))
		}
		for _, r := range res {
			switch {
			case r.Device.Token == good && !r.Result.Sent():
				t.Errorf("good: %v", r.Result)
			case r.Device.Token == gone && (!r.Result.Retire || r.Result.String() != "410 Unregistered"):
				t.Errorf("gone: %v", r.Result)
			case r.Device.Kind == models.DeviceWebPush && !strings.Contains(r.Result.String(), "not configured"):
				t.Errorf("webpush without keys: %v", r.Result)
			}
		}
	})

	t.Run("the test push is a generic alert", func(t *testing.T) {
		p := testkit.Recv(t, pushes, "the test push")
		alert, _ := aps(t, p)["alert"].(map[string]any)
		if p.PushType != "alert" || alert["body"] != push.BodyTest || p.Payload["url"] != base+"/" {
			t.Fatalf("%+v %s", p, p.Body)
		}
	})

	t.Run("the refused device is retired", func(t *testing.T) {
		live, _ := st.ListDevices(ctx, false)
		if len(live) != 2 {
			t.Fatalf("%d live", len(live))
		}
	})
}

func TestEnvConfig(t *testing.T) {
	env := map[string]string{
		push.EnvAPNsKeyFile: "/k.p8", push.EnvAPNsKeyID: "K", push.EnvAPNsTeamID: "T", push.EnvAPNsTopic: "app",
		push.EnvAPNsEnv: "development", push.EnvAPNsHost: "https://127.0.0.1:9", push.EnvPushGrace: "5s",
	}
	a, c, err := push.EnvConfig(func(k string) string { return env[k] })
	if err != nil || !a.Enabled() || a.KeyID != "K" || a.Host != "https://127.0.0.1:9" || c.Grace.String() != "5s" {
		t.Fatalf("%+v %+v %v", a, c, err)
	}
	env[push.EnvPushGrace] = "soon"
	if _, _, err := push.EnvConfig(func(k string) string { return env[k] }); err == nil {
		t.Fatal("a bad grace was accepted")
	}
	if _, err := push.NewAPNs(push.APNsConfig{KeyFile: "/nonexistent.p8"}); err == nil || !strings.Contains(err.Error(), "GATEHOUSE_APNS_KEY_ID") {
		t.Fatalf("missing settings: %v", err)
	}
}
