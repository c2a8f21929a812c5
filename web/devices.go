package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// DeviceStore is what the push device routes need (models.Store).
type DeviceStore interface {
	RegisterDevice(ctx context.Context, by models.Principal, d models.Device) (*models.Device, bool, error)
	ListDevices(ctx context.Context, retired bool) ([]models.Device, error)
	DropDevice(ctx context.Context, idOrToken string) error
	VAPIDKeys(ctx context.Context) (models.VAPIDKeys, error)
}

// apiDevice is a push device as the API shows it. The token (APNs) or endpoint
// (Web Push) is a bearer capability for pushing to the device, so it never
// leaves, nor do Web Push keys: only its last characters, to tell devices apart.
type apiDevice struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind"`
	Suffix     string  `json:"token_suffix"` // "…" and the token's (endpoint's) last 6 characters
	Name       string  `json:"name"`
	Operator   string  `json:"operator"`
	CreatedAt  string  `json:"created_at"`
	LastResult string  `json:"last_result"`
	LastAt     *string `json:"last_at"`
	RetiredAt  *string `json:"retired_at"`
}

func toAPIDevice(d *models.Device) apiDevice {
	out := apiDevice{ID: d.ID, Kind: d.Kind, Suffix: maskToken(d.Token), Name: d.Name, Operator: d.Operator, CreatedAt: rfc3339(d.CreatedAt), LastResult: d.LastResult}
	if d.LastAt != nil {
		s := rfc3339(*d.LastAt)
		out.LastAt = &s
	}
	if d.RetiredAt != nil {
		s := rfc3339(*d.RetiredAt)
		out.RetiredAt = &s
	}
	return out
}

// maskToken keeps the last 6 characters of a device token, which identify it to
// its owner and grant nothing.
func maskToken(tok string) string {
	const keep = 6
	if len(tok) <= keep {
		return "…"
	}
	return "…" + tok[len(tok)-keep:]
}

// deviceInput is the body of POST /v1/devices: an APNs device token.
type deviceInput struct {
	Kind  string `json:"kind"` // apns (default)
	Token string `json:"token"`
	Name  string `json:"name"`
}

// subscriptionInput is a browser's PushSubscription.toJSON(), plus a name.
type subscriptionInput struct {
	Endpoint       string `json:"endpoint"`
	ExpirationTime *int64 `json:"expirationTime"`
	Keys           struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
	Name string `json:"name"`
}

// registerDevice records an APNs device token for the calling operator: 201 when
// new, 200 when it was known (and is live again).
func (s *Server) registerDevice(c echo.Context) error {
	var in deviceInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if in.Kind == "" {
		in.Kind = models.DeviceAPNs
	}
	if in.Kind != models.DeviceAPNs {
		return invalid("kind must be apns here; browsers subscribe at POST /v1/webpush/subscribe")
	}
	return s.saveDevice(c, models.Device{Kind: in.Kind, Token: in.Token, Name: in.Name})
}

// subscribeWebPush records the page's push subscription.
func (s *Server) subscribeWebPush(c echo.Context) error {
	var in subscriptionInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if in.Name == "" {
		in.Name = "browser"
	}
	return s.saveDevice(c, models.Device{Kind: models.DeviceWebPush, Token: in.Endpoint, P256dh: in.Keys.P256dh, Auth: in.Keys.Auth, Name: in.Name})
}

func (s *Server) saveDevice(c echo.Context, d models.Device) error {
	saved, created, err := s.devices.RegisterDevice(c.Request().Context(), Principal(c), d)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, toAPIDevice(saved))
}

// listDevices answers every device, retired ones included (with why).
func (s *Server) listDevices(c echo.Context) error {
	ds, err := s.devices.ListDevices(c.Request().Context(), true)
	if err != nil {
		return err
	}
	out := make([]apiDevice, len(ds))
	for i := range ds {
		out[i] = toAPIDevice(&ds[i])
	}
	return c.JSON(http.StatusOK, map[string]any{"devices": out})
}

// dropDevice deletes a device by its token or id: 204.
func (s *Server) dropDevice(c echo.Context) error {
	if err := s.devices.DropDevice(c.Request().Context(), c.Param("token")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// unsubscribeWebPush drops the page's subscription by its endpoint: 204.
func (s *Server) unsubscribeWebPush(c echo.Context) error {
	var in struct {
		Endpoint string `json:"endpoint"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if in.Endpoint == "" {
		return invalid("endpoint is required")
	}
	if err := s.devices.DropDevice(c.Request().Context(), in.Endpoint); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// webPushKey answers the VAPID public key the page subscribes with.
func (s *Server) webPushKey(c echo.Context) error {
	k, err := s.devices.VAPIDKeys(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"public_key": k.Public})
}
