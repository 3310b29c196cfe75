package redisstore

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/reference"
)

// header is a well-formed start of a record's string.
func header(state byte) string {
	return string(state) + strings.Repeat("T", tokenLen) + "1700000000000" + "1700000000001" + "1700000030000"
}

func fields(fs ...string) string {
	var b []byte
	for _, f := range fs {
		b = appendField(b, f)
	}
	return string(b)
}

var raw = strings.Repeat("r", len(reference.Record{}.RawDigest))

func TestDecode(t *testing.T) {
	rec, err := decode(header('2') + fields("sha256:f", raw, "key", "op", "201", `{"Content-Type":["application/json"]}`, "body", ""))
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != reference.Completed || rec.Token != strings.Repeat("T", tokenLen) || rec.Key != "key" || rec.Operation != "op" ||
		rec.Fingerprint != "sha256:f" || string(rec.RawDigest[:]) != raw || rec.Response.Status != 201 ||
		rec.Response.Header.Get("Content-Type") != "application/json" || string(rec.Response.Body) != "body" ||
		rec.CreatedAt.UnixMilli() != 1700000000000 || rec.UpdatedAt.UnixMilli() != 1700000000001 ||
		rec.ExpiresAt.UnixMilli() != 1700000030000 || !rec.LeaseUntil.IsZero() {
		t.Errorf("decoded %+v", rec)
	}
}

// TestDecodeHeaders: records with different headers, decoded in turn,
// each get their own (the last one decoded is kept for the next).
func TestDecodeHeaders(t *testing.T) {
	for _, ct := range []string{"application/json", "text/plain", "text/plain", "application/json"} {
		rec, err := decode(header('2') + fields("sha256:f", raw, "key", "op", "200", `{"Content-Type":["`+ct+`"]}`, "", ""))
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Response.Header; len(got) != 1 || got.Get("Content-Type") != ct {
			t.Errorf("header %v, want Content-Type %s alone", got, ct)
		}
	}
}

// TestDecodeRefusesMalformed: a malformed record is an error, never a
// panic or a record.
func TestDecodeRefusesMalformed(t *testing.T) {
	good := fields("sha256:f", raw, "key", "op")
	huge := string(binary.AppendUvarint(nil, 1<<62))
	for name, v := range map[string]string{
		"empty":             "",
		"short header":      header('1')[:fieldsAt-1],
		"no fields":         header('1'),
		"state 0":           header('0') + good,
		"state 4":           header('4') + good,
		"stamp not digits":  strings.Replace(header('1'), "1700000000001", "17000000x0001", 1) + good,
		"raw digest short":  header('1') + fields("sha256:f", "r", "key", "op"),
		"field past end":    header('1') + good[:len(good)-1],
		"huge length":       header('1') + huge,
		"bad varint":        header('1') + "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
		"trailing bytes":    header('1') + good + "x",
		"finished no reply": header('2') + good,
		"status not number": header('2') + good + fields("ok", "", "", ""),
		"header not JSON":   header('2') + good + fields("200", "{", "", ""),
	} {
		if rec, err := decode(v); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, rec)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(header('1') + fields("sha256:f", raw, "key", "op"))
	f.Add(header('3') + fields("sha256:f", raw, "key", "op", "500", "", "", "boom"))
	f.Fuzz(func(t *testing.T, v string) {
		if rec, err := decode(v); err == nil && (rec.State < reference.Processing || rec.State > reference.Failed) {
			t.Errorf("decoded state %v", rec.State)
		}
	})
}
