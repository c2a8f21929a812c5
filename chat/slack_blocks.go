package chat

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// Button values carry the request and the version the message showed, so a
// click decides on what the operator saw: "req_…|3|once".
const (
	actionDecide = "gatehouse_decide"
	actionModal  = "gatehouse_note"
	callbackNote = "gatehouse_note"
)

// slackMessage draws v as Block Kit. Text a filer wrote goes in plain_text
// or rich text only, never mrkdwn, so it cannot mention or link.
func slackMessage(v view) []slack.MsgOption {
	return []slack.MsgOption{slack.MsgOptionText(slackFallback(v), false), slack.MsgOptionBlocks(slackBlocks(v)...)}
}

func slackFallback(v view) string {
	if v.Generic {
		return "Gatehouse: " + v.Headline
	}
	return "Gatehouse: " + slackLiteral(v.Headline)
}

func slackBlocks(v view) []slack.Block {
	plain := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	md := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
	}
	var blocks []slack.Block
	if v.Generic {
		blocks = append(blocks, slack.NewSectionBlock(md(fmt.Sprintf("*%s* (%s)", v.Headline, v.Kind)), nil, nil))
	} else {
		head := v.Headline
		if v.Risk != "" {
			head += " [" + v.Risk + " risk]"
		}
		blocks = append(blocks, slack.NewSectionBlock(plain(head), nil, nil))
		if len(v.Who) > 0 {
			blocks = append(blocks, slack.NewContextBlock("who", plain(strings.Join(v.Who, " · "))))
		}
		if v.Command != "" {
			blocks = append(blocks, slack.NewRichTextBlock("command", &slack.RichTextPreformatted{
				Type: slack.RTEPreformatted, Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement(v.Command, nil)}}))
		}
		if v.Detail != "" {
			// Quoted: the filer's lines, one of which may read like an outcome,
			// are set off from Gatehouse's own.
			blocks = append(blocks, slack.NewRichTextBlock("detail", &slack.RichTextQuote{
				Type: slack.RTEQuote, Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement(v.Detail, nil)}}))
		}
	}
	link := fmt.Sprintf("<%s|Open in Gatehouse>", v.Link)
	if !v.Open {
		// plain_text: the outcome holds the option's label, the filer's text.
		blocks = append(blocks, slack.NewSectionBlock(plain(v.Outcome), nil, nil),
			slack.NewContextBlock("link", md(link)))
		return blocks
	}
	expires := fmt.Sprintf("Expires <!date^%d^{date_short_pretty} {time}|%s>", v.Expires.Unix(), v.Expires.UTC().Format("2006-01-02 15:04 UTC"))
	blocks = append(blocks, slack.NewContextBlock("link", md(expires+" · "+link)))
	if v.Votes != "" {
		blocks = append(blocks, slack.NewContextBlock("votes", plain(v.Votes)))
	}
	if v.Generic || len(v.Options) == 0 && !v.Answer {
		return blocks
	}
	var els []slack.BlockElement
	for _, o := range v.Options {
		b := slack.NewButtonBlockElement(actionDecide+":"+o.ID, buttonValue(v.ID, v.Version, o.ID), plain(buttonText(o, 75)))
		switch {
		case strings.HasPrefix(o.Effect, "blocks"):
			b.Style = slack.StyleDanger
		case strings.HasPrefix(o.Effect, "lets"):
			b.Style = slack.StylePrimary
		}
		els = append(els, b)
	}
	note := "Decide with a note…"
	if v.Answer {
		note = "Answer…"
	}
	els = append(els, slack.NewButtonBlockElement(actionModal, buttonValue(v.ID, v.Version, ""), plain(note)))
	blocks = append(blocks, slack.NewActionBlock("options", els...))
	return blocks
}

// slackNoteModal is the modal for a decision with a note or a free-text
// answer, on the version the message showed.
func slackNoteModal(v view) slack.ModalViewRequest {
	plain := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	var opts []*slack.OptionBlockObject
	for _, o := range v.Options {
		opts = append(opts, slack.NewOptionBlockObject(o.ID, plain(clip(o.Label, 75)), plain(clip(o.Effect, 75))))
	}
	var blocks []slack.Block
	if len(opts) > 0 {
		choice := slack.NewInputBlock("choice", plain("Decision"), nil, slack.NewRadioButtonsBlockElement("choice", opts...))
		choice.Optional = v.Answer
		blocks = append(blocks, choice)
	}
	if v.Answer {
		answer := slack.NewPlainTextInputBlockElement(nil, "answer")
		answer.Multiline = true
		in := slack.NewInputBlock("answer", plain("Answer"), nil, answer)
		in.Optional = len(opts) > 0
		blocks = append(blocks, in)
	}
	note := slack.NewPlainTextInputBlockElement(nil, "note")
	note.Multiline = true
	in := slack.NewInputBlock("note", plain("Note for the agent"), nil, note)
	in.Optional = true
	blocks = append(blocks, in)
	return slack.ModalViewRequest{Type: slack.VTModal, Title: plain("Gatehouse"), Submit: plain("Decide"), Close: plain("Cancel"),
		CallbackID: callbackNote, PrivateMetadata: buttonValue(v.ID, v.Version, ""), Blocks: slack.Blocks{BlockSet: blocks}}
}

func buttonValue(id string, version int, option string) string {
	return id + "|" + strconv.Itoa(version) + "|" + option
}

// parseButton reads a button value; ok is false for anything malformed.
func parseButton(value string) (id string, version int, option string, ok bool) {
	parts := strings.Split(value, "|")
	if len(parts) != 3 {
		return "", 0, "", false
	}
	v, err := strconv.Atoi(parts[1])
	if err != nil || v < 1 || parts[0] == "" {
		return "", 0, "", false
	}
	return parts[0], v, parts[2], true
}

// buttonText is "label — effect" in at most n runes. The label is cut, never
// the effect's start: a label padded to the limit cannot push "lets this
// command run" off the button and leave its own "Deny" showing.
func buttonText(o button, n int) string {
	tail := " — " + o.Effect
	room := max(n-len([]rune(tail)), 12) // a long effect (what it saves) keeps its start
	return clip(clip(o.Label, room)+tail, n)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
