package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// DeviceStore is what the push device routes need (store.Store).
type DeviceStore interface {
	RegisterDevice(ctx context.Context, by models.Principal, d models.Device) (*models.Device, bool, error)
	ListDevices(ctx context.Context, retired bool) ([]models.Device, error)
	DropDevice(ctx context.Context, idOrToken string) error
	VAPIDKeys(ctx context.Context) (store.VAPIDKeys, error)
}

// toAPIDevice is a device as the API shows it: never its token or keys.
func toAPIDevice(d *models.Device) api.Device {
	out := api.Device{ID: d.ID, Kind: d.Kind, Suffix: maskToken(d.Token), Name: d.Name, Operator: d.Operator, CreatedAt: d.CreatedAt.UTC(), LastResult: d.LastResult}
	if d.LastAt != nil {
		out.LastAt = utcPtr(*d.LastAt)
	}
	if d.RetiredAt != nil {
		out.RetiredAt = utcPtr(*d.RetiredAt)
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

// registerDevice records an APNs device token for the calling operator: 201 when
// new, 200 when it was known (and is live again).
func (s *Server) registerDevice(c echo.Context) error {
	var in api.NewDevice
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
	var in api.PushSubscription
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
	out := api.Devices{Devices: make([]api.Device, len(ds))}
	for i := range ds {
		out.Devices[i] = toAPIDevice(&ds[i])
	}
	return c.JSON(http.StatusOK, out)
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
	var in api.Unsubscribe
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
	return c.JSON(http.StatusOK, api.VAPIDKey{PublicKey: k.Public})
}
