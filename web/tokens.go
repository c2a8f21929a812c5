package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// TokenStore is what the token routes need (store.Store): each change is
// recorded in the audit chain with the operator who made it.
type TokenStore interface {
	CreateTokenBy(ctx context.Context, n store.NewToken, actor, via string) (*models.Token, string, error)
	ListTokens(ctx context.Context) ([]models.Token, error)
	RevokeTokenBy(ctx context.Context, idOrName, actor, via string) (int64, error)
}

func toAPIToken(t *models.Token) api.Token {
	out := api.Token{ID: t.ID, Role: t.Role, Name: t.Name, Groups: t.Groups, For: t.For, CreatedAt: t.CreatedAt.UTC()}
	if out.Groups == nil {
		out.Groups = []string{}
	}
	if t.RevokedAt != nil {
		at := t.RevokedAt.UTC()
		out.RevokedAt = &at
	}
	return out
}

// createToken makes a token and answers its secret, this once (201).
func createToken(c echo.Context, ts TokenStore) error {
	var in api.NewToken
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	t, secret, err := ts.CreateTokenBy(c.Request().Context(), store.NewToken{Role: in.Role, Name: in.Name, Groups: in.Groups, For: in.For},
		Principal(c).Label(), via(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, api.CreatedToken{Token: toAPIToken(t), Secret: secret})
}

// listTokens answers every token, revoked ones included, without secrets.
func listTokens(c echo.Context, ts TokenStore) error {
	list, err := ts.ListTokens(c.Request().Context())
	if err != nil {
		return err
	}
	out := api.Tokens{Tokens: make([]api.Token, 0, len(list))}
	for i := range list {
		out.Tokens = append(out.Tokens, toAPIToken(&list[i]))
	}
	return c.JSON(http.StatusOK, out)
}

// revokeToken revokes the live tokens with this id or name; their sessions end.
func revokeToken(c echo.Context, ts TokenStore) error {
	n, err := ts.RevokeTokenBy(c.Request().Context(), c.Param("id"), Principal(c).Label(), via(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.RevokedTokens{Revoked: n})
}
