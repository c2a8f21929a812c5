package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxGrantBody is the most of a request body a filing carries for the
// operator to read (api.MaxPendingBody); a longer body comes as its first
// MaxGrantBody bytes and its size.
const MaxGrantBody = 8 << 10

// maxBodyShown bounds the body as the detail shows it (pretty-printing and
// escapes make it longer than the bytes), so the detail stays within MaxDetail
// beside the longest path and query.
const maxBodyShown = 16 << 10

// GrantBody is the request body a middleware sent with its filing, for the
// operator to read: all of it, or its first MaxGrantBody bytes.
type GrantBody struct {
	Head []byte // the bytes sent
	Size int64  // the whole body's length
}

// complete reports whether Head is the whole body.
func (b *GrantBody) complete() bool { return int64(len(b.Head)) == b.Size }

// check validates the body against the digest it must match: a complete body
// must hash to sha (lower-case hex), and a partial one must be exactly the
// first MaxGrantBody bytes, so what the operator reads is what is bound.
func (b *GrantBody) check(sha string) error {
	switch {
	case len(b.Head) > MaxGrantBody:
		return Errorf(ECodeInvalid, "body carries %d bytes; send at most the first %d and the whole length as body_size", len(b.Head), MaxGrantBody)
	case b.Size < int64(len(b.Head)):
		return Errorf(ECodeInvalid, "body_size %d is less than the %d bytes of body sent", b.Size, len(b.Head))
	case !b.complete() && len(b.Head) != MaxGrantBody:
		return Errorf(ECodeInvalid, "a body of %d bytes is sent as its first %d bytes exactly", b.Size, MaxGrantBody)
	case b.complete():
		sum := sha256.Sum256(b.Head)
		if hex.EncodeToString(sum[:]) != sha {
			return Errorf(ECodeInvalid, "body does not match body_sha256: the operator must read the body that is bound")
		}
	}
	return nil
}

// text is the body as the operator reads it: a heading with its size, then
// the body, pretty-printed when it is JSON. Characters that could hide or
// reorder what is read (controls, bidirectional and other format characters,
// line separators) are shown as \uXXXX escapes and bytes that are not UTF-8
// as \xNN, so the text passes the detail's checks whatever the agent sent.
func (b *GrantBody) text() string {
	if b == nil {
		return "body: not sent by the middleware (only its sha256 above binds it)"
	}
	if b.Size == 0 {
		return "body: none (0 bytes)"
	}
	head := b.Head
	if !b.complete() {
		head = trimPartialRune(head)
	}
	kind, shown := "text", head
	var pretty bytes.Buffer
	switch {
	case !utf8.Valid(head):
		kind = "not UTF-8"
	case b.complete() && indentedSize(head) <= maxBodyShown && json.Valid(head) && json.Indent(&pretty, head, "", "  ") == nil:
		kind, shown = "JSON", pretty.Bytes()
	}
	body, cut := escapeBody(shown, maxBodyShown)
	more := b.Size - int64(len(head))
	var h strings.Builder
	fmt.Fprintf(&h, "body: %d bytes, %s", b.Size, kind)
	if more > 0 {
		fmt.Fprintf(&h, "; the first %d shown, %d more bytes not shown", len(head), more)
	}
	h.WriteString(":\n")
	h.WriteString(body)
	if cut > 0 {
		fmt.Fprintf(&h, "\n… (the display stops here: %d more bytes not shown)", cut)
	}
	return h.String()
}

// indentedSize bounds the length of p pretty-printed, without building it:
// deep nesting makes the indented form grow with the square of the depth, so
// it is measured first and the indenting skipped when it would not be shown.
func indentedSize(p []byte) int {
	n, depth, inString, escaped := len(p), 0, false, false
	for _, c := range p {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			n += 1 + 2*depth
		case c == '}' || c == ']':
			depth = max(depth-1, 0)
			n += 1 + 2*depth
		case c == ',':
			n += 1 + 2*depth
		case c == ':':
			n++
		}
		if n > maxBodyShown {
			return n
		}
	}
	return n
}

// trimPartialRune drops a rune cut in two at the end of a partial body.
func trimPartialRune(p []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(p); i++ {
		if utf8.RuneStart(p[len(p)-i]) {
			if !utf8.FullRune(p[len(p)-i:]) {
				return p[:len(p)-i]
			}
			break
		}
	}
	return p
}

// escapeBody writes p with hiding characters escaped, up to limit bytes, and
// says how many bytes of p were left out.
func escapeBody(p []byte, limit int) (string, int) {
	var out strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		piece := string(p[i : i+n])
		switch {
		case r == utf8.RuneError && n == 1:
			piece = fmt.Sprintf(`\x%02x`, p[i])
		case hides(r):
			piece = escapeRune(r)
		}
		if out.Len()+len(piece) > limit {
			return out.String(), len(p) - i
		}
		out.WriteString(piece)
		i += n
	}
	return out.String(), 0
}

// hides reports a character the operator could not see for what it is.
func hides(r rune) bool {
	return badRune(r, true) != "" || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// escapeRune is r as a JSON escape (a surrogate pair beyond the BMP), which
// inside a JSON string means the same character.
func escapeRune(r rune) string {
	if r > 0xffff {
		r -= 0x10000
		return fmt.Sprintf(`\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
	}
	return fmt.Sprintf(`\u%04x`, r)
}
