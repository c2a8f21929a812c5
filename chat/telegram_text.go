package chat

import (
	"strconv"
	"strings"
	"time"
)

// telegramMessage draws v as plain text (no parse mode, so nothing a filer
// wrote is read as markup) and, while open in full mode, an inline keyboard
// with one button per option. callback_data is "id|version|index": the
// Bot API allows 64 bytes, too few for an option id, and an option's index
// is fixed for a version (an edit raises the version).
func telegramMessage(v view) (string, *inlineKeyboard) {
	var b strings.Builder
	if v.Generic {
		b.WriteString("Gatehouse: " + v.Headline + " (" + v.Kind + ")")
	} else {
		b.WriteString(v.Headline)
		if v.Risk != "" {
			b.WriteString(" [" + v.Risk + " risk]")
		}
		if len(v.Who) > 0 {
			b.WriteString("\n" + strings.Join(v.Who, " · "))
		}
		if v.Command != "" {
			b.WriteString("\n\n$ " + v.Command)
		}
		if v.Detail != "" {
			b.WriteString("\n\n" + v.Detail)
		}
	}
	if !v.Open {
		b.WriteString("\n\n" + v.Outcome + "\n" + v.Link)
		return b.String(), nil
	}
	b.WriteString("\n\nExpires " + v.Expires.UTC().Format("2006-01-02 15:04 UTC") + "\n" + v.Link)
	if v.Votes != "" {
		b.WriteString("\n" + v.Votes)
	}
	if v.Generic || len(v.Options) == 0 && !v.Answer {
		return b.String(), nil
	}
	switch {
	case v.Answer:
		b.WriteString("\nReply to this message with your answer, or with an option id and a note.")
	default:
		b.WriteString("\nTo add a note for the agent, reply with an option id and the note (\"" + v.Options[0].ID + " looks fine\").")
	}
	kb := &inlineKeyboard{InlineKeyboard: [][]inlineButton{}}
	for i, o := range v.Options {
		kb.InlineKeyboard = append(kb.InlineKeyboard, []inlineButton{{
			Text: buttonText(o, 75), CallbackData: buttonValue(v.ID, v.Version, strconv.Itoa(i))}})
	}
	return b.String(), kb
}

// inlineKeyboard is the Bot API's InlineKeyboardMarkup with callback
// buttons only: go-telegram/bot's button type always sends an empty
// copy_text, which is a second kind of button on the same key.
type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

func secondsOf(n int) time.Duration {
	if n <= 0 {
		n = 1
	}
	return time.Duration(n) * time.Second
}
