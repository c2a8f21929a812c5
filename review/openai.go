package review

import (
	"context"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

type openaiProvider struct {
	client openai.Client
	model  string
}

// newOpenAI builds a Chat Completions client: the API that OpenAI and the
// OpenAI-compatible local servers (Ollama, vLLM, LM Studio) all serve. The
// configured key and address override the SDK's environment; no retries.
func newOpenAI(model, baseURL, key string, hc *http.Client) *openaiProvider {
	opts := []option.RequestOption{option.WithMaxRetries(0)}
	if key == "" {
		key = "none" // a local server takes none; the SDK sends what it has
	}
	opts = append(opts, option.WithAPIKey(key))
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return &openaiProvider{client: openai.NewClient(opts...), model: model}
}

func (p *openaiProvider) Model() string { return ProviderOpenAI + ":" + p.model }

// Ask asks for the answer as strict JSON schema output.
func (p *openaiProvider) Ask(ctx context.Context, pr Prompt) (Answer, Usage, error) {
	c, err := p.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:               p.model,
		MaxCompletionTokens: openai.Int(maxAnswerTokens),
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(pr.System), openai.UserMessage(pr.User)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: ToolName, Strict: openai.Bool(true), Schema: answerSchema()},
		}},
	})
	if err != nil {
		return Answer{}, Usage{}, err
	}
	u := Usage{In: c.Usage.PromptTokens, Out: c.Usage.CompletionTokens}
	if len(c.Choices) == 0 {
		return Answer{}, u, ErrMalformed
	}
	m := c.Choices[0]
	if m.Message.Refusal != "" || m.FinishReason == "content_filter" {
		return Answer{}, u, ErrRefused
	}
	if m.FinishReason != "stop" {
		return Answer{}, u, ErrMalformed // cut off (length) or a tool call: no whole answer
	}
	a, err := parseAnswer([]byte(m.Message.Content))
	return a, u, err
}
