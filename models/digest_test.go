package models_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
)

// The vectors were computed outside Go (printf … | sha256sum); see the file.
func TestDigestVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/digest_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct {
			Name       string `json:"name"`
			Sandbox    string `json:"sandbox"`
			Method     string `json:"method"`
			Host       string `json:"host"`
			Port       int    `json:"port"`
			Path       string `json:"path"`
			Query      string `json:"query"`
			BodySHA256 string `json:"body_sha256"`
			Digest     string `json:"digest"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) < 5 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			got := models.Digest(models.Target{Sandbox: v.Sandbox, Method: v.Method, Host: v.Host, Port: v.Port, Path: v.Path, Query: v.Query, BodySHA256: v.BodySHA256})
			if got != v.Digest {
				t.Fatalf("Digest = %s, want %s", got, v.Digest)
			}
		})
	}
}
