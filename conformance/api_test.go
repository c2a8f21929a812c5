package conformance_test

import (
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/web/webtest"
)

// rest is the JSON API as an operator's program decides through it: it
// reads the record it was shown and picks the option by its effect.
type rest struct {
	g     *gatehouse
	route string // decide, attention or batch
	last  struct {
		path, token string
		body        any
	}
}

func startAPI(route string) func(t *testing.T, dialect string) surface {
	return func(t *testing.T, dialect string) surface {
		return &rest{g: newGatehouse(t, dialect, "", nil), route: route}
	}
}

func (r *rest) gatehouse() *gatehouse { return r.g }

func (r *rest) file(t *testing.T, f filing) (*shown, string) {
	t.Helper()
	rec, code := r.g.fileREST(t, f)
	if code != "" {
		return nil, code
	}
	return &shown{id: rec["id"].(string), data: rec}, ""
}

func (r *rest) edit(t *testing.T, s *shown) { r.g.editREST(t, s.id) }

func (r *rest) decide(t *testing.T, s *shown, a act) answer {
	t.Helper()
	rec := s.data.(map[string]any)
	id, v, option := s.id, rec["version"], optionWith(t, rec, a.pick)
	switch r.route {
	case "decide":
		r.last.path, r.last.body = "/v1/requests/"+id+"/decide", map[string]any{"version": v, "decision": option}
	case "attention":
		r.last.path, r.last.body = "/api/operator-attention/permissions/decide", map[string]any{"requestId": id, "version": v, "decision": option}
	case "batch":
		r.last.path, r.last.body = "/v1/decisions", map[string]any{"decisions": []map[string]any{{"id": id, "version": v, "decision": option}}}
	}
	r.last.token = r.g.token(a.who)
	return r.send(t)
}

func (r *rest) replay(t *testing.T, s *shown) answer { return r.send(t) }

// send makes the last call and reads its answer: a status and an error
// code, or, for a batch, its one result's.
func (r *rest) send(t *testing.T) answer {
	t.Helper()
	status, body := r.g.Do(http.MethodPost, r.last.path, r.last.token, r.last.body)
	m := webtest.JSON(t, body)
	if r.route == "batch" && status == http.StatusOK {
		res := m["results"].([]any)[0].(map[string]any)
		status = int(res["status"].(float64))
		m = res
	}
	if status == http.StatusOK {
		return answer{said: "taken"}
	}
	code, _ := m["error"].(string)
	detail, _ := m["detail"].(string)
	return answer{refused: true, code: code, said: code + ": " + detail}
}

// editREST has the filer change the request's title (an unsealed filing).
func (g *gatehouse) editREST(t *testing.T, id string) {
	t.Helper()
	status, body := g.Do(http.MethodPatch, "/v1/requests/"+id, g.agent, map[string]any{"title": "Deploy the site, edited"})
	if status != http.StatusOK {
		t.Fatalf("edit: %d %s", status, body)
	}
}
