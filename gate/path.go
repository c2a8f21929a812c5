package gate

import (
	"net/url"
	"strings"
)

// pathProblem says why an escaped request path is refused, or "" when the
// gate can judge it. The rules and the grant see the path exactly as it is
// sent upstream, so any spelling the upstream might route differently from
// how it reads is refused rather than judged: an escaped separator or
// delimiter (%2F, %5C, %3F, %23), an escaped % (a second decoding), an
// escaped control character, an escaped character that needs no escaping
// (%2E, %61: the upstream reads them as . and a, the rules would not), a
// literal backslash, a "." or ".." segment and an empty segment (//).
func pathProblem(escaped string) string {
	if strings.Contains(escaped, "//") {
		return "The request's path must not contain an empty segment (//)."
	}
	if strings.Contains(escaped, `\`) {
		return `The request's path must not contain a backslash.`
	}
	if strings.Contains(escaped, ";") {
		// Servlet containers and Spring cut a segment at ';' (matrix
		// parameters): "/merge;x" routes as "/merge" but does not read so.
		return "The request's path must not contain ; (matrix parameters)."
	}
	for seg := range strings.SplitSeq(escaped, "/") {
		if seg == "." || seg == ".." {
			return "The request's path must not contain . or .. segments."
		}
	}
	for i := 0; i < len(escaped); i++ {
		if escaped[i] != '%' {
			continue
		}
		if i+2 >= len(escaped) || !isHex(escaped[i+1]) || !isHex(escaped[i+2]) {
			return "The request's path has a % that is not followed by two hex digits."
		}
		c := unhex(escaped[i+1])<<4 | unhex(escaped[i+2])
		switch {
		case c == '/' || c == '\\' || c == '?' || c == '#' || c == ';':
			return "The request's path must not contain an escaped /, \\, ?, # or ; (%2F, %5C, %3F, %23, %3B): send the path the upstream routes."
		case c == '%':
			return "The request's path must not contain an escaped % (%25)."
		case c < 0x20 || c == 0x7f:
			return "The request's path must not contain an escaped control character."
		case unreserved(c):
			return "The request's path must not escape a letter, digit, ., -, _ or ~ (such as %2E): send the character itself."
		}
	}
	return ""
}

// unreserved is RFC 3986's unreserved set: escaping one of these changes
// nothing for the upstream, but would hide it from a rule.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// overrideParams are query parameters that frameworks (Rails, Laravel,
// Symfony, Express's method-override) read as the request's real method.
var overrideParams = map[string]bool{"_method": true, "x-http-method-override": true, "x-http-method": true, "x-method-override": true, "_httpmethod": true}

// queryProblem says why a raw query is refused, or "": a parameter that
// overrides the method would have the upstream run a method the rules did not
// judge (a GET the rules allow, run as DELETE).
func queryProblem(raw string) string {
	for pair := range strings.SplitSeq(raw, "&") {
		for part := range strings.SplitSeq(pair, ";") {
			name, _, _ := strings.Cut(part, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if overrideParams[strings.ToLower(name)] {
				return "The request's query must not carry " + name + ": it overrides the method upstream."
			}
		}
	}
	return ""
}
