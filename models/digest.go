package models

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// DigestVersion is the first line of every digest's input; a change to the
// canonical form gets a new version rather than silently new digests.
const DigestVersion = "v1"

// Target is one exact HTTP request a pending grant is bound to, as the sandbox
// middleware saw it.
type Target struct {
	Sandbox    string // which sandbox (agent environment) sent it
	Method     string // compared upper-cased
	Host       string // compared lower-cased
	Port       int
	Path       string // raw (still percent-escaped) path, as sent
	Query      string // raw query without the leading "?", "" when none
	BodySHA256 string // hex SHA-256 of the body; compared lower-cased
}

// Digest is the request-bound fingerprint of t: the hex SHA-256 of
//
//	"v1\n" + sandbox + "\n" + UPPER(method) + "\n" + lower(host) + "\n" +
//	port + "\n" + path + "\n" + raw query + "\n" + lower(body_sha256)
//
// with port in decimal and no trailing newline. Path and query are taken
// byte for byte: "/a%2Fb" and "/a/b", or "x=1&y=2" and "y=2&x=1", are different
// requests. Test vectors: models/testdata/digest_vectors.json.
func Digest(t Target) string {
	s := strings.Join([]string{
		DigestVersion, t.Sandbox, strings.ToUpper(t.Method), strings.ToLower(t.Host),
		strconv.Itoa(t.Port), t.Path, t.Query, strings.ToLower(t.BodySHA256),
	}, "\n")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
