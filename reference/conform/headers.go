package conform

import (
	"fmt"
	"strings"
)

// Header is an extra request header, such as Authorization.
type Header struct {
	Name, Value string
}

// redacted stands for a header value in every output.
const redacted = "<redacted>"

// String shows the header with its value redacted.
func (h Header) String() string { return h.Name + ": " + redacted }

// ParseHeader reads "Name: value". Its errors never quote the value,
// which may be a secret; from says where the text came from.
func ParseHeader(text, from string) (Header, error) {
	name, value, ok := strings.Cut(text, ":")
	if !ok {
		return Header{}, fmt.Errorf(`%s: want "Name: value"`, from)
	}
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !isToken(name) {
		return Header{}, fmt.Errorf(`%s: %q is not a header name (RFC 9110 token)`, from, name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return Header{}, fmt.Errorf("%s: the value of %s holds a line break or NUL", from, name)
	}
	return Header{Name: name, Value: value}, nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
