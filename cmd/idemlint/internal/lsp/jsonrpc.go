package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JSON-RPC 2.0 over a stream, framed as the Language Server Protocol frames
// it: "Content-Length: N\r\n", optional other headers, "\r\n", then N bytes
// of JSON. Well-kept Go LSP libraries are scarce, and this is all the
// server needs: one reader, one writer, no concurrency.

// MaxMessage bounds one message. The largest document idemlint checks is
// 8 MiB; escaped as a JSON string it may grow, so allow for twice that and
// the envelope.
const MaxMessage = 2*(8<<20) + 64<<10

// maxHeaderLine bounds one header line, so a stream without newlines
// cannot grow a buffer without limit.
const maxHeaderLine = 4096

// JSON-RPC error codes.
const (
	codeParseError           = -32700
	codeMethodNotFound       = -32601
	codeInvalidParams        = -32602
	codeServerNotInitialized = -32002
)

// ProtocolError is a message the server cannot read: broken framing or a
// body that is not JSON. The stream cannot be trusted after one.
type ProtocolError struct{ Reason string }

func (e *ProtocolError) Error() string { return "broken message: " + e.Reason }

// message is any JSON-RPC message: a request has ID and Method, a
// notification Method only, a response ID and Result or Error.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *responseError  `json:"error,omitempty"`
}

type responseError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *responseError) Error() string { return e.Message }

// A response carries result (null included) or error, never both.
type resultResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *responseError  `json:"error"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// conn reads and writes framed messages.
type conn struct {
	r *bufio.Reader
	w io.Writer
}

func newConn(r io.Reader, w io.Writer) *conn {
	return &conn{r: bufio.NewReaderSize(r, maxHeaderLine), w: w}
}

// read returns the next message; io.EOF when the stream ends between
// messages, a *ProtocolError for anything that does not frame or parse.
func (c *conn) read() (*message, error) {
	length := -1
	for first := true; ; first = false {
		line, err := c.r.ReadSlice('\n')
		switch {
		case err == io.EOF && first && len(line) == 0:
			return nil, io.EOF
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, &ProtocolError{fmt.Sprintf("a header line is longer than %d bytes", maxHeaderLine)}
		case err == io.EOF:
			return nil, &ProtocolError{"the stream ended inside a message header"}
		case err != nil:
			return nil, err
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			break
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, &ProtocolError{fmt.Sprintf("header line %q is not \"Name: value\"", text)}
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, &ProtocolError{fmt.Sprintf("Content-Length %q is not a length", strings.TrimSpace(value))}
			}
			if n > MaxMessage {
				return nil, &ProtocolError{fmt.Sprintf("Content-Length %d is more than the %d bytes a message may have", n, MaxMessage)}
			}
			length = n
		}
	}
	if length < 0 {
		return nil, &ProtocolError{"the header has no Content-Length"}
	}
	body := make([]byte, length)
	if n, err := io.ReadFull(c.r, body); err != nil {
		return nil, &ProtocolError{fmt.Sprintf("the stream ended %d bytes into a %d-byte message", n, length)}
	}
	var m message
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		return nil, &ProtocolError{"the body is not a JSON-RPC message: " + err.Error()}
	}
	if m.JSONRPC != "2.0" {
		return nil, &ProtocolError{fmt.Sprintf(`"jsonrpc" is %q, want "2.0"`, m.JSONRPC)}
	}
	return &m, nil
}

// write sends v, framed.
func (c *conn) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err = c.w.Write(body)
	return err
}

func (c *conn) reply(id json.RawMessage, result any) error {
	return c.write(resultResponse{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *conn) replyError(id json.RawMessage, code int, format string, args ...any) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	return c.write(errorResponse{JSONRPC: "2.0", ID: id, Error: &responseError{Code: code, Message: fmt.Sprintf(format, args...)}})
}

func (c *conn) notify(method string, params any) error {
	return c.write(notification{JSONRPC: "2.0", Method: method, Params: params})
}
