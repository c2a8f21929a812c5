package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// MCPMaxBatch is the most calls one JSON-RPC batch at /mcp may carry: a batch
// of 300 notify_operator calls is one request's worth of cost otherwise.
const MCPMaxBatch = 16

// checkMCPBody reads an /mcp POST body and refuses, with a JSON-RPC error, a
// batch over MCPMaxBatch and an object with a repeated key; otherwise it puts
// the body back for the MCP handler. It reports whether the call may go on.
func checkMCPBody(c echo.Context) (bool, error) {
	req := c.Request()
	if req.Method != http.MethodPost || req.Body == nil {
		return true, nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return false, err // the body limit's 413, or a body that did not arrive
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		var calls []json.RawMessage
		if json.Unmarshal(t, &calls) == nil && len(calls) > MCPMaxBatch {
			return false, rpcRefuse(c, "a batch holds at most 16 calls; send the rest in another request")
		}
	}
	if err := uniqueKeys(body); err != nil {
		var de *models.Error
		if errors.As(err, &de) {
			return false, rpcRefuse(c, de.Detail)
		}
	}
	return true, nil
}

// rpcRefuse answers a JSON-RPC "invalid request" error for the whole body.
func rpcRefuse(c echo.Context, message string) error {
	return c.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32600, "message": message}})
}
