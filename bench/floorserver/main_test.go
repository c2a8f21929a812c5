package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFloorServer(t *testing.T) {
	for _, noCommit := range []bool{false, true} {
		t.Run(map[bool]string{false: "a decide commits, then releases", true: "--no-commit releases at once"}[noCommit], func(t *testing.T) {
			testFloorServer(t, noCommit)
		})
	}
}

func testFloorServer(t *testing.T, noCommit bool) {
	s, err := open(filepath.Join(t.TempDir(), "floor.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.noCommit = noCommit
	defer s.close()
	ts := httptest.NewServer(s.routes())
	defer ts.Close()
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	code, filed := post("/v1/requests", `{"kind":"approval","title":"t"}`)
	if code != http.StatusCreated {
		t.Fatalf("file: %d", code)
	}
	id := filed["id"].(string)
	woke := make(chan map[string]any, 1)
	go func() {
		resp, err := http.Get(ts.URL + "/v1/requests/" + id + "/wait?timeout=30")
		if err != nil {
			woke <- nil
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		woke <- m
	}()
	if !noCommit { // without a commit no version is checked
		t.Run("a decision on a version not current changes nothing", func(t *testing.T) {
			if code, _ := post("/v1/requests/"+id+"/decide", `{"version":2,"decision":"once"}`); code != http.StatusConflict {
				t.Fatalf("decide at version 2: %d, want 409", code)
			}
		})
	}
	t.Run("the decision releases the wait", func(t *testing.T) {
		if code, _ := post("/v1/requests/"+id+"/decide", `{"version":1,"decision":"once"}`); code != http.StatusOK {
			t.Fatalf("decide: %d", code)
		}
		select {
		case m := <-woke:
			if m == nil || m["timed_out"] != false {
				t.Fatalf("wait answered %v", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the wait was not released")
		}
		want := map[bool]string{false: "resolved", true: "open"}[noCommit]
		var status string
		if err := s.db.QueryRow("SELECT status FROM requests WHERE id = ?", id).Scan(&status); err != nil || status != want {
			t.Fatalf("stored status %q, %v; want %q", status, err, want)
		}
		if code, _ := post("/v1/requests/"+id+"/decide", `{"version":1,"decision":"once"}`); code != http.StatusConflict {
			t.Fatalf("a second decide: %d, want 409", code)
		}
	})
}
