package reference

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idemlint/idemlint/reference/jcs"
)

// fingerprinter computes a request's payload fingerprint from the declared
// inputs (idempotency_fingerprint). The hashed text is one canonical JSON
// object with a member per input:
//
//	{"body":<body>,"header:x-foo":"v","method":"POST","path":"/orders","query":{"a":["1"]}}
//
// Members are sorted as RFC 8785 sorts them and strings escaped as it
// escapes them, so the object is itself RFC 8785 canonical JSON. <body> is
// the request body canonicalised with jcs.CanonicalizeExact after dropping
// exclude_fields (null when the body is empty), or with raw_bytes the body
// as sent, base64-encoded. A header absent from the request is null, and
// repeated header lines are joined with ", " as RFC 9110 combines them.
// The query maps each parameter name to its values in the order sent
// (order can matter, as in sort=a&sort=b). The path is the decoded URL
// path.
//
// The fingerprint is "<algorithm>:<hex digest>", so a change of algorithm
// reads as a different payload rather than colliding.
type fingerprinter struct {
	algorithm string // "sha256" or "sha512"
	canon     canonicalization
	exclude   []string
	formNames []string  // exclude as form field names (canonical_form)
	inputs    []fpInput // sorted by name
	hasBody   bool      // "body" is an input
	// config encodes all of the above, so that equal raw digests imply
	// equal configurations.
	config []byte
}

// bodyCanon is how a body is canonicalised.
type bodyCanon uint8

const (
	canonicalJSON bodyCanon = iota
	rawBytes
	canonicalForm
	unsupportedMedia // no entry of the policy names the request's media type
)

var bodyCanonNames = [...]string{canonicalJSON: "canonical_json", rawBytes: "raw_bytes", canonicalForm: "canonical_form"}

// canonicalization is the declared canonicalization: one for every body,
// or, when byMediaType is not nil, one per request media type.
type canonicalization struct {
	every       bodyCanon
	byMediaType []mediaCanon // in the policy's order, without "*/*"
	fallback    bodyCanon    // the "*/*" entry, else unsupportedMedia
}

type mediaCanon struct {
	mediaType string // lower case, no parameters
	canon     bodyCanon
}

// oneCanonicalization is a canonicalization for every body.
func oneCanonicalization(c bodyCanon) canonicalization { return canonicalization{every: c} }

// canonicalizationByMediaType reads the declared object form: media type
// to name.
func canonicalizationByMediaType(entries map[string]string) canonicalization {
	c := canonicalization{byMediaType: []mediaCanon{}, fallback: unsupportedMedia}
	for mt, name := range entries {
		bc := bodyCanon(slices.Index(bodyCanonNames[:], name))
		if mt == "*/*" {
			c.fallback = bc
			continue
		}
		c.byMediaType = append(c.byMediaType, mediaCanon{mediaType: mt, canon: bc})
	}
	slices.SortFunc(c.byMediaType, func(a, b mediaCanon) int { return strings.Compare(a.mediaType, b.mediaType) })
	return c
}

// of returns how req's body is canonicalised: by its Content-Type without
// parameters (application/octet-stream when it has none, as RFC 9110
// lets a recipient assume), compared case-insensitively.
func (c *canonicalization) of(h http.Header) bodyCanon {
	if c.byMediaType == nil {
		return c.every
	}
	mt := "application/octet-stream"
	if v := h["Content-Type"]; len(v) > 0 {
		mt, _, _ = strings.Cut(v[0], ";")
		mt = strings.TrimRight(strings.TrimLeft(mt, " \t"), " \t")
	}
	for _, e := range c.byMediaType {
		if strings.EqualFold(e.mediaType, mt) {
			return e.canon
		}
	}
	return c.fallback
}

// appendConfig encodes c for the fingerprinter's configuration.
func (c *canonicalization) appendConfig(b []byte) []byte {
	if c.byMediaType == nil {
		return appendField(b, strconv.FormatBool(c.every == rawBytes))
	}
	b = appendField(b, "by media type")
	b = binary.AppendUvarint(b, uint64(len(c.byMediaType)))
	for _, e := range c.byMediaType {
		b = append(appendField(b, e.mediaType), byte(e.canon))
	}
	return append(b, byte(c.fallback))
}

type inputKind uint8

const (
	inputBody inputKind = iota
	inputHeader
	inputMethod
	inputPath
	inputQuery
)

type fpInput struct {
	name   string // member name: "body", "header:x-foo", ...
	kind   inputKind
	header string // canonical header name, for inputHeader
}

// newFingerprinter builds the fingerprinter for the declared inputs, which
// the caller has validated. Header inputs compare case-insensitively, so
// "header:X-Foo" and "header:x-foo" are one input.
func newFingerprinter(algorithm string, canon canonicalization, inputs, exclude []string) *fingerprinter {
	f := &fingerprinter{algorithm: algorithm, canon: canon, exclude: exclude, formNames: formFieldNames(exclude)}
	for _, in := range inputs {
		fi := fpInput{name: in}
		switch in {
		case "body":
			fi.kind = inputBody
			f.hasBody = true
		case "method":
			fi.kind = inputMethod
		case "path":
			fi.kind = inputPath
		case "query":
			fi.kind = inputQuery
		default:
			name := strings.TrimPrefix(in, "header:")
			fi = fpInput{name: "header:" + strings.ToLower(name), kind: inputHeader, header: textproto.CanonicalMIMEHeaderKey(name)}
		}
		f.inputs = append(f.inputs, fi)
	}
	// Names are ASCII, where byte order is the UTF-16 order RFC 8785 sorts
	// by.
	slices.SortFunc(f.inputs, func(a, b fpInput) int { return strings.Compare(a.name, b.name) })
	f.inputs = slices.CompactFunc(f.inputs, func(a, b fpInput) bool { return a.name == b.name })

	f.config = appendField(f.config, algorithm)
	f.config = canon.appendConfig(f.config)
	f.config = binary.AppendUvarint(f.config, uint64(len(f.inputs)))
	for _, in := range f.inputs {
		f.config = appendField(f.config, in.name)
	}
	f.config = binary.AppendUvarint(f.config, uint64(len(exclude)))
	for _, ptr := range exclude {
		f.config = appendField(f.config, ptr)
	}
	return f
}

// rawDigest hashes the declared inputs exactly as sent, after the
// configuration. It cannot fail and costs one SHA-256 pass: no parsing.
// Equal raw digests imply equal fingerprints, because the fingerprint is a
// function of the configuration and these inputs alone; the converse does
// not hold (a re-serialised body has another raw digest).
func (f *fingerprinter) rawDigest(req *Request) [sha256.Size]byte {
	bp := getBuffer()
	defer putBuffer(bp)
	b := append((*bp)[:0], f.config...)
	if f.canon.byMediaType != nil {
		b = append(b, byte(f.canon.of(req.Header))) // one body, read as JSON or as a form, is two payloads
	}
	for _, in := range f.inputs {
		switch in.kind {
		case inputBody:
			b = appendField(b, req.Body)
		case inputHeader:
			v, ok := headerValue(req.Header, in.header)
			if !ok {
				b = append(b, 0) // absent, unlike a present empty value
				continue
			}
			b = appendField(append(b, 1), v)
		case inputMethod:
			b = appendField(b, req.Method)
		case inputPath:
			b = appendField(b, req.Path)
		case inputQuery:
			b = appendField(b, req.RawQuery)
		}
	}
	*bp = b // keep the grown buffer
	return sha256.Sum256(b)
}

// payloadError says which input could not be canonicalised and why. Every
// such error is the client's: it is answered 400 payload_not_canonicalizable.
type payloadError struct {
	input  string
	reason string
}

func (e *payloadError) Error() string { return e.input + ": " + e.reason }

// accepts reports whether the policy names a canonicalization for req's
// body: always, unless it names them per media type and req has a body of
// a type it does not name.
func (f *fingerprinter) accepts(req *Request) bool {
	return !f.hasBody || len(req.Body) == 0 || f.canon.of(req.Header) != unsupportedMedia
}

// fingerprint returns the fingerprint of req, or a *payloadError.
func (f *fingerprinter) fingerprint(req *Request) (string, error) {
	bp := getBuffer()
	defer putBuffer(bp)
	b, err := f.appendCanonical((*bp)[:0], req)
	*bp = b // keep the grown buffer
	if err != nil {
		return "", err
	}
	return f.sum(b), nil
}

// appendCanonical appends the canonical object of req's inputs to b.
func (f *fingerprinter) appendCanonical(b []byte, req *Request) ([]byte, error) {
	b = append(b, '{')
	for i, in := range f.inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, in.name...) // ASCII without characters to escape
		b = append(b, '"', ':')
		var err error
		switch in.kind {
		case inputBody:
			b, err = f.appendBody(b, req)
		case inputHeader:
			b, err = appendHeader(b, req.Header, in)
		case inputMethod:
			b, err = appendString(b, req.Method, in.name)
		case inputPath:
			b, err = appendString(b, req.Path, in.name)
		case inputQuery:
			b, err = appendQuery(b, req.RawQuery)
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendBody appends the body's member value. With one canonicalization
// per media type it is an object naming the one used,
// {"canonical_form":"a=1&b=2"}, so that bodies read by two
// canonicalizations never share a text.
func (f *fingerprinter) appendBody(b []byte, req *Request) ([]byte, error) {
	body := req.Body
	if len(body) == 0 {
		return append(b, "null"...), nil
	}
	canon := f.canon.of(req.Header)
	if f.canon.byMediaType != nil {
		if canon == unsupportedMedia {
			return b, &payloadError{input: "body", reason: "no canonicalization for its media type"}
		}
		b = append(append(append(b, `{"`...), bodyCanonNames[canon]...), `":`...)
	}
	var err error
	switch canon {
	case rawBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, body)
		b = append(b, '"')
	case canonicalForm:
		b = append(b, '"') // the canonical form needs no JSON escape
		if b, err = appendCanonicalForm(b, body, f.formNames); err != nil {
			return b, &payloadError{input: "body", reason: err.Error()}
		}
		b = append(b, '"')
	default:
		if b, err = jcs.AppendExactWithout(b, body, f.exclude); err != nil {
			return b, &payloadError{input: "body", reason: err.Error()}
		}
	}
	if f.canon.byMediaType != nil {
		b = append(b, '}')
	}
	return b, nil
}

func appendHeader(b []byte, h http.Header, in fpInput) ([]byte, error) {
	v, ok := headerValue(h, in.header)
	if !ok {
		return append(b, "null"...), nil
	}
	return appendString(b, v, in.name)
}

// headerValue returns the value of the header with canonical name, its
// lines joined with ", " when it was sent more than once.
func headerValue(h http.Header, name string) (string, bool) {
	switch vs := h[name]; len(vs) {
	case 0:
		return "", false
	case 1:
		return vs[0], true
	default:
		return strings.Join(vs, ", "), true
	}
}

// appendQuery appends the query as an object of value arrays. The object
// is built in map order and then canonicalised, which sorts its members as
// RFC 8785 requires.
func appendQuery(b []byte, rawQuery string) ([]byte, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return b, &payloadError{input: "query", reason: "not a valid URL query: " + err.Error()}
	}
	obj := []byte{'{'}
	first := true
	for name, values := range q {
		if !first {
			obj = append(obj, ',')
		}
		first = false
		if obj, err = appendString(obj, name, "query"); err != nil {
			return b, err
		}
		obj = append(obj, ':', '[')
		for i, v := range values {
			if i > 0 {
				obj = append(obj, ',')
			}
			if obj, err = appendString(obj, v, "query"); err != nil {
				return b, err
			}
		}
		obj = append(obj, ']')
	}
	b, err = jcs.AppendExactWithout(b, append(obj, '}'), nil)
	if err != nil {
		return b, &payloadError{input: "query", reason: err.Error()}
	}
	return b, nil
}

// appendString appends s as an RFC 8785 string. It must be valid UTF-8:
// replacing bad bytes would let two different values share a fingerprint.
func appendString(b []byte, s, input string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return b, &payloadError{input: input, reason: "not valid UTF-8"}
	}
	return jcs.AppendString(b, s), nil
}

// sum hashes the canonical object and formats the fingerprint.
func (f *fingerprinter) sum(canonical []byte) string {
	var out [len("sha512:") + 2*sha512.Size]byte
	n := copy(out[:], f.algorithm)
	out[n] = ':'
	n++
	if f.algorithm == "sha512" {
		d := sha512.Sum512(canonical)
		n += hex.Encode(out[n:], d[:])
	} else {
		d := sha256.Sum256(canonical)
		n += hex.Encode(out[n:], d[:])
	}
	return string(out[:n])
}
