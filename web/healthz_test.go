package web_test

import (
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

func TestHealthz(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})

		t.Run("well: status ok", func(t *testing.T) {
			status, body := e.Do(http.MethodGet, "/healthz", "", nil)
			if got := webtest.JSON(t, body); status != http.StatusOK || got["status"] != "ok" || len(got) != 1 {
				t.Fatalf("%d %s", status, body)
			}
		})

		t.Run("unwell: 503 in the error shape", func(t *testing.T) {
			sqlDB, err := e.Store.DB.DB()
			if err != nil {
				t.Fatal(err)
			}
			sqlDB.Close()
			status, body := e.Do(http.MethodGet, "/healthz", "", nil)
			got := webtest.JSON(t, body)
			if status != http.StatusServiceUnavailable || got["error"] != "unavailable" || got["detail"] != "database unreachable" {
				t.Fatalf("%d %s", status, body)
			}
		})
	})
}
