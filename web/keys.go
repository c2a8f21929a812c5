package web

import (
	"encoding/base64"
	"net/http"

	"github.com/labstack/echo/v4"
)

type apiKey struct {
	KeyID     string `json:"key_id"`
	Algorithm string `json:"algorithm"`
	PublicKey string `json:"public_key"`
}

// getKeys answers the public keys forwards are signed with (public: a runtime
// needs them before it holds any token's trust).
func (s *Server) getKeys(c echo.Context) error {
	k, err := s.runtimes.SigningKey(c.Request().Context())
	if err != nil {
		return err
	}
	key := apiKey{KeyID: k.ID, Algorithm: "ed25519", PublicKey: base64.StdEncoding.EncodeToString(k.Public)}
	return c.JSON(http.StatusOK, map[string]any{"keys": []apiKey{key}})
}
