// Package review is the advisory reviewer: a model, reached through its
// provider's official SDK, that reads each request left to a person and
// answers how risky the action looks, whether the session's user prompts asked
// for it, and why in one sentence. It never decides, votes or counts toward an
// approval policy; whatever it answers is stored on the record as `review`,
// and anything but a well-formed answer is no_opinion.
//
// Files by job:
//
//   - config.go: the configuration (provider:model, base URL, key, timeout,
//     daily cap) and the provider it builds.
//   - prompt.go: what the model is sent: the instructions, the action as the
//     digest covers it and the session's user prompts, the filer's text
//     fenced as data.
//   - anthropic.go, openai.go: one structured call per review (tool use; a
//     JSON schema), through anthropic-sdk-go and openai-go.
//   - reviewer.go: the change-bus subscriber that claims, asks and stores
//     reviews with capped concurrency, and stops with the server.
//   - eval.go: precision and recall per risk level over a labelled corpus.
package review
