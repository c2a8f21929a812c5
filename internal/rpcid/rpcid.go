// Package rpcid keys JSON-RPC ids by their value, as JSON-RPC compares
// them: the number 1 is the number 1.0 and 1e0, a string is its decoded
// text ("\u0031" is "1"), and a string is never a number ("1" is not 1).
package rpcid

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Key is id's value as a map key. A number is read exactly, as decimal
// digits and an exponent, never as a float: two ids that differ in any
// digit stay apart however long they are. What is not a string or a
// number keys by its compact text.
func Key(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return "s:" + s
	}
	t := string(bytes.TrimSpace(id))
	if n, ok := number(t); ok {
		return "n:" + n
	}
	var buf bytes.Buffer
	if json.Compact(&buf, id) != nil {
		return "?:" + string(id)
	}
	return "j:" + buf.String()
}

// number is a JSON number literal in one form per value: its significant
// digits without leading or trailing zeros, and the exponent of the last
// one ("-15e-1" for -1.50); "0" for every zero.
func number(t string) (string, bool) {
	if !json.Valid([]byte(t)) || t == "" || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return "", false
	}
	sign := ""
	if t[0] == '-' {
		sign, t = "-", t[1:]
	}
	mant, exp, _ := strings.Cut(strings.ToLower(t), "e")
	e := int64(0)
	if exp != "" {
		var err error
		if e, err = strconv.ParseInt(exp, 10, 64); err != nil {
			return "", false // an exponent past int64: keyed by its text
		}
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if len(frac) > 0 {
		if e < -(1<<62) || int64(len(frac)) > 1<<30 {
			return "", false
		}
		e -= int64(len(frac))
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", true
	}
	trimmed := strings.TrimRight(digits, "0")
	e += int64(len(digits) - len(trimmed))
	return sign + trimmed + "e" + strconv.FormatInt(e, 10), true
}
