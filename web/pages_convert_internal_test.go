package web

import (
	"reflect"
	"testing"

	"github.com/gatehousehq/gatehouse/views"
)

func TestDetailLines(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want []views.KV
	}{
		"none":      {"", nil},
		"flat":      {`{"note":"ship it","decision":"once"}`, []views.KV{{Key: "decision", Value: "once"}, {Key: "note", Value: "ship it"}}},
		"an edit":   {`{"title":{"before":"a","after":"b"}}`, []views.KV{{Key: "title after", Value: "b"}, {Key: "title before", Value: "a"}}},
		"non-text":  {`{"attempt":2,"ok":false,"answer":null,"ids":["x"]}`, []views.KV{{Key: "answer", Value: "none"}, {Key: "attempt", Value: "2"}, {Key: "ids", Value: `["x"]`}, {Key: "ok", Value: "false"}}},
		"not JSON":  {`plain words`, []views.KV{{Key: "detail", Value: "plain words"}}},
		"empty map": {`{"rule":{}}`, []views.KV{{Key: "rule", Value: "{}"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := detailLines(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("detailLines(%s) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
