package review

import (
	"context"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// maxAnswerTokens bounds the answer: three short fields.
const maxAnswerTokens = 400

type anthropicProvider struct {
	client anthropic.Client
	model  string
}

// newAnthropic builds the client without the SDK's environment defaults, so
// the key and the address are exactly the ones configured, and with no
// retries: a review that fails is no_opinion, and the person decides anyway.
func newAnthropic(model, baseURL, key string, hc *http.Client) *anthropicProvider {
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0)}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...), model: model}
}

func (p *anthropicProvider) Model() string { return ProviderAnthropic + ":" + p.model }

// Ask forces the one tool, so the answer arrives as the tool's input.
func (p *anthropicProvider) Ask(ctx context.Context, pr Prompt) (Answer, Usage, error) {
	schema := answerSchema()
	tool := anthropic.ToolParam{
		Name:        ToolName,
		Description: anthropic.String("Record the advisory review of the request."),
		InputSchema: anthropic.ToolInputSchemaParam{
			Properties:  schema["properties"],
			Required:    schema["required"].([]string),
			ExtraFields: map[string]any{"additionalProperties": false},
		},
	}
	msg, err := p.client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:      p.model,
		MaxTokens:  maxAnswerTokens,
		System:     []anthropic.TextBlockParam{{Text: pr.System}},
		Messages:   []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(pr.User))},
		Tools:      []anthropic.ToolUnionParam{{OfTool: &tool}},
		ToolChoice: anthropic.ToolChoiceParamOfTool(ToolName),
	})
	if err != nil {
		return Answer{}, Usage{}, err
	}
	u := Usage{In: msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens, Out: msg.Usage.OutputTokens}
	if msg.StopReason == anthropic.StopReasonRefusal {
		return Answer{}, u, ErrRefused
	}
	for _, b := range msg.Content {
		if b.Type == "tool_use" && b.Name == ToolName {
			a, err := parseAnswer(b.Input)
			return a, u, err
		}
	}
	return Answer{}, u, ErrMalformed // text instead of the tool: whatever it says is not an answer
}
