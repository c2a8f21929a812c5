package chat

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	tgm "github.com/go-telegram/bot/models"
)

// telegramMessage draws v as plain text (no parse mode, so nothing a filer
// wrote is read as markup) and, while open in full mode, an inline keyboard
// with one button per option. The command and the detail, the filer's
// multi-line text, are set off as entities (pre, blockquote), so a line in
// them that reads like an outcome cannot pass for Gatehouse's own.
// callback_data is "id|version|index": the Bot API allows 64 bytes, too few
// for an option id, and an option's index is fixed for a version (an edit
// raises the version). Each button is numbered, so a reply can name the
// option by the number the operator sees.
func telegramMessage(v view) (string, []tgm.MessageEntity, *inlineKeyboard) {
	var b tgText
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
			b.WriteString("\n\n")
			b.entity(tgm.MessageEntityTypePre, "$ "+v.Command)
		}
		if v.Detail != "" {
			b.WriteString("\n\n")
			b.entity(tgm.MessageEntityTypeBlockquote, v.Detail)
		}
	}
	if !v.Open {
		b.WriteString("\n\n" + v.Outcome + "\n" + v.Link)
		return b.String(), b.ents, nil
	}
	b.WriteString("\n\nExpires " + v.Expires.UTC().Format("2006-01-02 15:04 UTC") + "\n" + v.Link)
	if v.Votes != "" {
		b.WriteString("\n" + v.Votes)
	}
	if v.Generic || len(v.Options) == 0 && !v.Answer {
		return b.String(), b.ents, nil
	}
	// The hint names options by their numbers on the buttons and by effect
	// words, never by the filer's ids.
	choose := "an option's number" + effectWordsOf(v.Options)
	switch {
	case v.Answer && len(v.Options) > 0:
		b.WriteString("\nReply to this message with your answer, or with " + choose + " and a note.")
	case v.Answer:
		b.WriteString("\nReply to this message with your answer.")
	default:
		b.WriteString("\nTo add a note for the agent, reply with " + choose + " and the note (\"1 looks fine\").")
	}
	kb := &inlineKeyboard{InlineKeyboard: [][]inlineButton{}}
	for i, o := range v.Options {
		n := strconv.Itoa(i+1) + ". "
		kb.InlineKeyboard = append(kb.InlineKeyboard, []inlineButton{{
			Text: n + buttonText(o, 75-len(n)), CallbackData: buttonValue(v.ID, v.Version, strconv.Itoa(i))}})
	}
	return b.String(), b.ents, kb
}

// effectWordsOf is " (or allow, deny)" naming the effect words a reply may
// choose with among opts, "" when none has an effect.
func effectWordsOf(opts []button) string {
	var words []string
	for _, e := range []string{"allow", "deny"} {
		for _, o := range opts {
			if o.Is == e {
				words = append(words, e)
				break
			}
		}
	}
	if len(words) == 0 {
		return ""
	}
	return " (or " + strings.Join(words, ", ") + ")"
}

// tgText is a message's text and its entities, whose offsets and lengths
// count UTF-16 code units as the Bot API does.
type tgText struct {
	strings.Builder
	units int
	ents  []tgm.MessageEntity
}

func (t *tgText) WriteString(s string) {
	t.Builder.WriteString(s)
	t.units += len(utf16.Encode([]rune(s)))
}

// entity writes s marked as one entity of kind.
func (t *tgText) entity(kind tgm.MessageEntityType, s string) {
	at := t.units
	t.WriteString(s)
	t.ents = append(t.ents, tgm.MessageEntity{Type: kind, Offset: at, Length: t.units - at})
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
