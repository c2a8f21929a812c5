package web_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/web"
)

// inspectorFinding is one schema portability problem the Inspector reports.
type inspectorFinding struct {
	Rule       string `json:"rule"`
	Severity   string `json:"severity"`
	Schema     string `json:"schema"`
	Path       string `json:"path"`
	Issue      string `json:"issue"`
	Suggestion string `json:"suggestion"`
}

// inspectorList is what `--format json` prints for tools/list.
type inspectorList struct {
	Result struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"result"`
	SchemaFindings []struct {
		ToolName string             `json:"toolName"`
		Findings []inspectorFinding `json:"findings"`
	} `json:"schemaFindings"`
}

// inspectorCLI returns node and the official MCP Inspector's launcher from
// GATEHOUSE_TEST_MCP_NODE_MODULES (.ci/claude/package.json pins it), or skips.
func inspectorCLI(t *testing.T) (node, launcher string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Skipf(t, "node is not on PATH: the MCP Inspector test needs Node.js")
	}
	modules := os.Getenv(nodeModulesEnvVar)
	if modules == "" {
		testkit.Skipf(t, "%s is not set: no @modelcontextprotocol/inspector to run (npm ci --prefix .ci/claude, then %s=.ci/claude/node_modules)", nodeModulesEnvVar, nodeModulesEnvVar)
	}
	dir := filepath.Join(modules, "@modelcontextprotocol", "inspector")
	pkg, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		testkit.Skipf(t, "%s=%s has no @modelcontextprotocol/inspector: %v", nodeModulesEnvVar, modules, err)
	}
	var meta struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(pkg, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Bin["mcp-inspector"] == "" {
		t.Fatalf("@modelcontextprotocol/inspector %s names no mcp-inspector command", meta.Version)
	}
	nodeVersion, _ := exec.Command(node, "--version").Output()
	t.Logf("MCP Inspector @modelcontextprotocol/inspector %s on node %s", meta.Version, strings.TrimSpace(string(nodeVersion)))
	return node, filepath.Join(dir, meta.Bin["mcp-inspector"])
}

// TestMCPInspectorStrict lists the tools with the official MCP Inspector's
// CLI in strict mode, which reports every schema spelling a client may not
// carry over to its model (a type array such as ["null", "string"] is
// rejected by single-type dialects like Gemini's function declarations).
func TestMCPInspectorStrict(t *testing.T) {
	node, launcher := inspectorCLI(t)
	env := newMCPEnv(t, web.Config{})

	// What the server offers, as the Go SDK's client lists it: the Inspector
	// must see every one of these.
	cs := env.connect("a1", "")
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tool := range listed.Tools {
		want = append(want, tool.Name)
	}
	for _, name := range []string{"request_approval", "wait_for_decision", "get_request", "notify_operator", "consult_operator"} {
		if !slices.Contains(want, name) {
			t.Fatalf("the server does not list %s: %v", name, want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, launcher, "--cli", env.URL+"/mcp",
		"--transport", "http", "--header", "Authorization: Bearer "+env.tokens["a1"],
		"--method", "tools/list", "--strict", "--format", "json")
	home := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1",
		"MCP_CATALOG_PATH=" + filepath.Join(home, "mcp.json")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-inspector --cli --method tools/list --strict: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	var got inspectorList
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("the Inspector printed %q: %v", stdout, err)
	}

	t.Run("it lists every tool the server offers", func(t *testing.T) {
		var names []string
		for _, tool := range got.Result.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("the Inspector lists %v, the server offers %v", names, want)
		}
	})
	t.Run("no portability finding, warning or error", func(t *testing.T) {
		n := 0
		for _, tf := range got.SchemaFindings {
			for _, f := range tf.Findings {
				n++
				t.Errorf("%s: tool %s %s.%s (%s): %s", f.Severity, tf.ToolName, f.Schema, f.Path, f.Rule, f.Issue)
			}
		}
		if n > 0 || strings.Contains(stderr.String(), "Warning:") || strings.Contains(stderr.String(), "Error:") {
			t.Fatalf("%d findings; the Inspector's report:\n%s", n, stderr.String())
		}
	})
}
