package conform

import (
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/idemlint/idemlint/reference"
)

// InProcess returns what Config needs to probe the engine in process (the
// --reference mode): the engine in front of a reference.Demo, and the
// Demo's execution counter.
func InProcess(e *reference.Engine) (http.Handler, func() int64) {
	demo := reference.NewDemo(e.Policy())
	return e.Middleware(demo), demo.Effects
}

// handlerTransport serves requests with a handler in process: no socket,
// no network, one recorder per request.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	// The handler sees the request as a server would.
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.Host = req.URL.Host
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.Body = io.NopCloser(in.Body) // closed above, once
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
