package web_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// sdkOpenAPI is the copy of the document the TypeScript SDK generates its
// types from (npm run check-types): generating needs no running server.
var sdkOpenAPI = filepath.Join("..", "sdk", "typescript", "openapi.json")

// TestOpenAPISDKCopy keeps sdk/typescript/openapi.json equal to what GET
// /openapi.json serves (its server URL fixed), so the SDK's types follow the
// API. GATEHOUSE_UPDATE_SDK_OPENAPI=1 rewrites the copy.
func TestOpenAPISDKCopy(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{})
	status, body := e.Do(http.MethodGet, "/openapi.json", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", status, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	// The one member that depends on where the server runs.
	doc["servers"] = []any{map[string]any{"url": "http://127.0.0.1:8080", "description": "This server"}}
	want, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if os.Getenv("GATEHOUSE_UPDATE_SDK_OPENAPI") == "1" {
		if err := os.WriteFile(sdkOpenAPI, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(sdkOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from GET /openapi.json: run GATEHOUSE_UPDATE_SDK_OPENAPI=1 go test ./web -run TestOpenAPISDKCopy, then npm run generate-types in sdk/typescript, and commit both", sdkOpenAPI)
	}
}
