package yamlfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/yamlfile"
)

type doc struct {
	Items []struct {
		Name string `yaml:"name"`
	} `yaml:"items"`
}

func TestDecode(t *testing.T) {
	t.Run("a document decodes and places its values", func(t *testing.T) {
		var d doc
		f, err := yamlfile.Decode([]byte("items:\n  - name: a\n  - name: b\n"), &d)
		if err != nil || len(d.Items) != 2 || d.Items[1].Name != "b" {
			t.Fatalf("%v %+v", err, d)
		}
		if l, c := f.Pos("$.items[1].name"); l != 3 || c != 11 {
			t.Fatalf("pos %d:%d", l, c)
		}
		if l, c := f.Pos("$.items[7].name"); l != 2 || c != 3 {
			t.Fatalf("missing path falls back to its parent: %d:%d", l, c)
		}
	})
	t.Run("an empty file leaves the value alone", func(t *testing.T) {
		var d doc
		f, err := yamlfile.Decode(nil, &d)
		if err != nil || d.Items != nil {
			t.Fatalf("%v %+v", err, d)
		}
		if l, c := f.Pos("$.items"); l != 1 || c != 1 {
			t.Fatalf("pos %d:%d", l, c)
		}
	})
	refused := []struct{ name, src, at, msg string }{
		{"unknown field", "items: []\nbogus: 1\n", "2:1", `unknown field "bogus"`},
		{"two documents", "items: []\n---\nitems: []\n", "1:1", "one YAML document"},
		{"syntax", "items: [\n", "1:", ""},
		// go-yaml v1.19.2 dereferences nil decoding these two (a tag on a value
		// whose shape is not the field's); they are refused before decoding.
		{"tagged scalar where a list goes", "items:\n  ! 0\n", "2:3", "YAML tags such as !"},
		{"tagged map where a list goes", "items: !t {a: 1}\n", "1:8", "YAML tags such as !t"},
		{"a tag deep inside", "items:\n  - name: !!str a\n", "2:11", "!!str"},
	}
	for _, r := range refused {
		t.Run("refused: "+r.name, func(t *testing.T) {
			var d doc
			_, err := yamlfile.Decode([]byte(r.src), &d)
			var ye *yamlfile.Error
			if !errors.As(err, &ye) {
				t.Fatalf("want an *Error, got %T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), r.at) || !strings.Contains(err.Error(), r.msg) {
				t.Fatalf("%q, want it at %s saying %q", err, r.at, r.msg)
			}
		})
	}
}
