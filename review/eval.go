package review

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// Case is one labelled command of an evaluation corpus (JSON Lines).
type Case struct {
	Tool    string   `json:"tool"`
	Command string   `json:"command"`
	Title   string   `json:"title,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Prompts []string `json:"prompts,omitempty"`
	Risk    string   `json:"risk"`   // the label: low, medium, high or critical
	Source  string   `json:"source"` // where the command came from
}

// LoadCorpus reads a corpus file, one Case a line; blank lines and lines
// starting with # are skipped. Every case needs a command, a valid label and
// a source.
func LoadCorpus(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var c Case
		dec := json.NewDecoder(bytesReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if c.Command == "" || !models.ReviewRisks[c.Risk] || c.Source == "" {
			return nil, fmt.Errorf("%s:%d: each case needs a command, a risk (low, medium, high, critical) and a source", path, n)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// Levels are the risk levels, in order.
var Levels = []string{"low", "medium", "high", "critical"}

// Score is what an evaluation measured.
type Score struct {
	Cases, Answered     int
	TokensIn, TokensOut int64
	// Per level: labelled, predicted and both.
	Labelled, Predicted, Hit map[string]int
}

// Evaluate asks p about each case, one at a time, each within timeout.
func Evaluate(ctx context.Context, p Provider, cases []Case, timeout time.Duration) Score {
	s := Score{Cases: len(cases), Labelled: map[string]int{}, Predicted: map[string]int{}, Hit: map[string]int{}}
	for _, c := range cases {
		s.Labelled[c.Risk]++
		tool := c.Tool
		if tool == "" {
			tool = "Bash"
		}
		title := c.Title
		if title == "" {
			title = tool
		}
		r := &models.Request{Kind: models.KindPermission, Status: models.StatusOpen, Version: 1, Title: title, Tool: tool, Command: c.Command,
			Source: "session", SourceRef: map[string]string{}, ActuationState: models.ActuationNone,
			Options: []models.Option{{ID: "once", Label: "Allow once", Effect: models.EffectAllow}, {ID: "deny", Label: "Deny", Effect: models.EffectDeny}}}
		if c.Cwd != "" {
			r.SourceRef["cwd"] = c.Cwd
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		a, u, err := p.Ask(cctx, BuildPrompt(r, c.Prompts))
		cancel()
		s.TokensIn, s.TokensOut = s.TokensIn+u.In, s.TokensOut+u.Out
		if err != nil {
			continue
		}
		s.Answered++
		s.Predicted[a.Risk]++
		if a.Risk == c.Risk {
			s.Hit[a.Risk]++
		}
	}
	return s
}

// Print writes the score as a table: precision and recall per level (a
// case with no answer counts against recall).
func (s Score) Print(w io.Writer, model string) {
	fmt.Fprintf(w, "model %s: %d cases, %d answered, %d no opinion; tokens in %d, out %d\n", model, s.Cases, s.Answered, s.Cases-s.Answered, s.TokensIn, s.TokensOut)
	fmt.Fprintf(w, "%-9s %9s %9s %10s %7s\n", "risk", "labelled", "predicted", "precision", "recall")
	for _, l := range Levels {
		fmt.Fprintf(w, "%-9s %9d %9d %10s %7s\n", l, s.Labelled[l], s.Predicted[l], ratio(s.Hit[l], s.Predicted[l]), ratio(s.Hit[l], s.Labelled[l]))
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}
