package chat_test

import (
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/goccy/go-yaml"
)

// The Slack app manifest in deploy/ names the endpoints Gatehouse serves and
// the scopes of the Web API methods it calls.
func TestSlackManifest(t *testing.T) {
	b, err := os.ReadFile("../deploy/slack/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Features struct {
			SlashCommands []struct {
				Command, URL string
			} `yaml:"slash_commands"`
		}
		OAuthConfig struct {
			Scopes struct{ Bot []string }
		} `yaml:"oauth_config"`
		Settings struct {
			Interactivity struct {
				IsEnabled  bool   `yaml:"is_enabled"`
				RequestURL string `yaml:"request_url"`
			}
			SocketMode bool `yaml:"socket_mode_enabled"`
		}
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	path := func(s string) string {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "https" {
			t.Errorf("%q is not an https URL", s)
			return ""
		}
		return u.Path
	}
	if len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/gatehouse" ||
		path(m.Features.SlashCommands[0].URL) != "/chat/slack/commands" {
		t.Errorf("slash command %+v", m.Features.SlashCommands)
	}
	if !m.Settings.Interactivity.IsEnabled || path(m.Settings.Interactivity.RequestURL) != "/chat/slack/interactions" || m.Settings.SocketMode {
		t.Errorf("interactivity %+v", m.Settings)
	}
	for _, scope := range []string{"chat:write", "commands", "channels:read", "groups:read"} {
		if !slices.Contains(m.OAuthConfig.Scopes.Bot, scope) {
			t.Errorf("scope %s missing", scope)
		}
	}
}
