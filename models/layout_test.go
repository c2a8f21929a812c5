package models_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gatehousehq/gatehouse/"

// database is every package that talks to a database: GORM and its drivers,
// database/sql, pgx.
var database = []string{"gorm.io/", "database/sql", "modernc.org/sqlite", "github.com/libtnb/sqlite", "github.com/jackc/"}

// goList runs go list with args and returns the packages it prints.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// refuse fails for every package in got that starts with one of banned.
func refuse(t *testing.T, what string, got []string, banned ...string) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("go list printed nothing for %s", what)
	}
	for _, p := range got {
		for _, b := range banned {
			if p == b || strings.HasPrefix(p, b) {
				t.Errorf("%s depends on %s", what, p)
			}
		}
	}
}

// TestLayout holds the packages to their jobs: the domain (models) and the
// policy engine (models/rules) never touch a database, so they can be read,
// tested and linked without one; only the store does. The web layer uses the
// store but opens no database of its own, and the agent-side packages link
// neither.
func TestLayout(t *testing.T) {
	t.Run("models is the domain alone", func(t *testing.T) {
		deps := goList(t, "-deps", module+"models")
		refuse(t, "models", deps, append(database, module+"models/store", module+"models/rules")...)
	})
	t.Run("models/rules has no database", func(t *testing.T) {
		deps := goList(t, "-deps", module+"models/rules")
		refuse(t, "models/rules", deps, append(database, module+"models/store")...)
	})
	t.Run("web opens no database itself", func(t *testing.T) {
		imports := goList(t, "-f", `{{join .Imports "\n"}}`, module+"web")
		refuse(t, "web", imports, "gorm.io/driver/", "database/sql", "modernc.org/sqlite", "github.com/libtnb/sqlite", "github.com/jackc/",
			module+"models/store/storetest")
	})
	for _, p := range []string{"api", "client", "gate", "codexbridge", "views"} {
		t.Run(p+" links no store", func(t *testing.T) {
			deps := goList(t, "-deps", module+p)
			refuse(t, p, deps, append(database, module+"models/store")...)
		})
	}
}
