package web

import (
	"encoding/base64"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/labstack/echo/v4"
)

// getKeys answers the public keys forwards are signed with (public: a runtime
// needs them before it holds any token's trust).
func (s *Server) getKeys(c echo.Context) error {
	k, err := s.runtimes.SigningKey(c.Request().Context())
	if err != nil {
		return err
	}
	key := api.Key{KeyID: k.ID, Algorithm: "ed25519", PublicKey: base64.StdEncoding.EncodeToString(k.Public)}
	return c.JSON(http.StatusOK, api.Keys{Keys: []api.Key{key}})
}
