package reference

import (
	"encoding/json"
	"net/http"
	"time"
)

// Error codes of the answers the engine makes up itself. The codes of a
// missing key and of a payload mismatch are the policy's.
const (
	CodeInProgress          = "idempotency_request_in_progress"
	CodeNotCanonicalizable  = "payload_not_canonicalizable"
	CodeUnsupportedMedia    = "unsupported_media_type"
	CodePayloadTooLarge     = "payload_too_large"
	CodeBodyUnreadable      = "request_body_unreadable"
	CodeBodyMemoryExhausted = "request_body_memory_exhausted"
	CodeHandlerPanic        = "handler_panic"
	CodeHandlerError        = "handler_error"
	CodeStoreUnavailable    = "idempotency_store_unavailable"
	CodeStoreFull           = "idempotency_store_full"
	CodeNotCommitted        = "idempotency_record_not_committed"
	defaultMissingKeyStatus = http.StatusBadRequest
	defaultMissingKeyCode   = "idempotency_key_required"
	// defaultInflightStatus answers a wait timeout when the policy names
	// no status.
	defaultInflightStatus = http.StatusConflict
	// defaultMismatchCode and defaultTTL stand in for what a valid policy
	// declares (IDL110, IDL111), should a rule be relaxed.
	defaultMismatchCode = "idempotency_key_reused"
	defaultTTL          = 24 * time.Hour
)

// Problem is an RFC 9457 problem details object with the error_code
// extension member every engine answer carries, so clients can branch on
// a stable code rather than on prose.
type Problem struct {
	Type      string `json:"type"` // always "about:blank": the status says it all
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail,omitempty"`
	ErrorCode string `json:"error_code"`
}

// problemHeader is shared by every problem response; nobody modifies it.
var problemHeader = http.Header{"Content-Type": {"application/problem+json"}}

// refusal is a problem response the engine answers instead of running the
// handler, with its error code for the Reply.
type refusal struct {
	Response
	code string
}

func newRefusal(status int, code, detail string) refusal {
	return refusal{problem(status, code, detail), code}
}

// problem builds a problem response. With type about:blank, RFC 9457 asks
// for the status's reason phrase as the title.
func problem(status int, code, detail string) Response {
	body, err := json.Marshal(Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, ErrorCode: code})
	if err != nil {
		panic("reference: cannot encode a problem: " + err.Error()) // only strings and an int
	}
	return Response{Status: status, Header: problemHeader, Body: body}
}
