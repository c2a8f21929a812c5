package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// MCPMaxBatch is the most calls one JSON-RPC batch at /mcp may carry: a batch
// of 300 notify_operator calls is one request's worth of cost otherwise.
const MCPMaxBatch = 16

// codeMediaType refuses a body that is not JSON (415).
const codeMediaType = "unsupported_media_type"

// mcpInputs are the tools' argument types, so /mcp decodes a call's arguments
// with the decoder every other route uses before the MCP SDK (whose decoding
// matches names case-insensitively) sees them.
var mcpInputs = map[string]func() any{
	"request_approval":  func() any { return new(mcpRequestApprovalIn) },
	"wait_for_decision": func() any { return new(mcpWaitIn) },
	"get_request":       func() any { return new(mcpIDIn) },
	"notify_operator":   func() any { return new(mcpNotifyIn) },
	"consult_operator":  func() any { return new(mcpConsultIn) },
}

// rpcMessage is as much of a JSON-RPC message as checkMCPBody reads.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// checkMCPBody holds /mcp to the rules of the rest of the API before the MCP
// handler runs: POST only, a JSON body, no name repeated under any case, valid
// UTF-8, at most MCPMaxBatch calls, and each tool call's arguments decoded
// strictly. Refusals are JSON: an HTTP error for the transport, a JSON-RPC
// error for the body. It reports whether the call may go on, with the body put
// back for the MCP handler.
func checkMCPBody(c echo.Context) (bool, error) {
	req := c.Request()
	if req.Method != http.MethodPost {
		c.Response().Header().Set("Allow", http.MethodPost)
		return false, models.Errorf(codeMethod, "/mcp takes POST only: JSON-RPC over streamable HTTP, stateless (there is no stream to GET)")
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false, models.Errorf(codeMediaType, "send the JSON-RPC body with Content-Type: application/json")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return false, err // the body limit's 413, or a body that did not arrive
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if err := uniqueKeys(body); err != nil {
		return false, rpcRefuse(c, -32600, models.ErrorDetail(err))
	}
	var msgs []rpcMessage
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		err = json.Unmarshal(t, &msgs)
	} else {
		var m rpcMessage
		err = json.Unmarshal(t, &m)
		msgs = []rpcMessage{m}
	}
	if err != nil || !json.Valid(t) {
		return false, rpcRefuse(c, -32700, "the body is not valid JSON-RPC: send one JSON object, or an array of them")
	}
	if len(msgs) > MCPMaxBatch {
		return false, rpcRefuse(c, -32600, "a batch holds at most 16 calls; send the rest in another request")
	}
	for _, m := range msgs {
		if m.Method != "tools/call" || m.Params == nil {
			continue
		}
		in, ok := mcpInputs[m.Params.Name]
		if !ok {
			continue // the MCP handler answers an unknown tool
		}
		args := m.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		if err := decodeStrict(args, in()); err != nil {
			var e *models.Error
			errors.As(err, &e)
			return false, rpcRefuseID(c, m.ID, -32602, m.Params.Name+": "+e.Detail)
		}
	}
	return true, nil
}

// rpcRefuse answers a JSON-RPC error for the whole body.
func rpcRefuse(c echo.Context, code int, message string) error {
	return rpcRefuseID(c, nil, code, message)
}

// rpcRefuseID answers a JSON-RPC error for the call with id.
func rpcRefuseID(c echo.Context, id json.RawMessage, code int, message string) error {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return c.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message}})
}
