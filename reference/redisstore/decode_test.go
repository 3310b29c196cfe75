package redisstore

import (
	"encoding/binary"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
)

var token = strings.Repeat("T", tokenLen)

// header is a well-formed start of a record's string: state, token,
// created time, lease or ttl.
func header(state byte, created string) string {
	return string(state) + token + created + "0000000030000"
}

// headerV1 is a well-formed start of a string of the previous layout.
func headerV1(state byte) string {
	return string(state) + token + "1700000000000" + "1700000000001" + "1700000030000"
}

func fields(fs ...string) string {
	var b []byte
	for _, f := range fs {
		b = appendField(b, f)
	}
	return string(b)
}

var raw = strings.Repeat("r", len(reference.Record{}.RawDigest))

// expiry is the key's expiry the tests decode with: 30 seconds after
// 1700000000001.
const expiry = 1700000030001

func TestDecode(t *testing.T) {
	rec, err := decode(header(completedByte, "1700000000000")+fields("sha256:f", raw, "key", "op", "201", `{"Content-Type":["application/json"]}`, "body", ""), expiry)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != reference.Completed || rec.Token != token || rec.Key != "key" || rec.Operation != "op" ||
		rec.Fingerprint != "sha256:f" || string(rec.RawDigest[:]) != raw || rec.Response.Status != 201 ||
		rec.Response.Header.Get("Content-Type") != "application/json" || string(rec.Response.Body) != "body" ||
		rec.CreatedAt.UnixMilli() != 1700000000000 || rec.UpdatedAt.UnixMilli() != 1700000000001 ||
		rec.ExpiresAt.UnixMilli() != expiry || !rec.LeaseUntil.IsZero() {
		t.Errorf("decoded %+v", rec)
	}
}

// TestDecodeProcessing: a processing record was created at its expiry
// less its lease until a renewal wrote down when it was created.
func TestDecodeProcessing(t *testing.T) {
	for created, want := range map[string]int64{neverRenewed: 1700000000001, "1699999990000": 1699999990000} {
		rec, err := decode(header(processingByte, created)+fields("sha256:f", raw, "key", "op"), expiry)
		if err != nil {
			t.Fatal(err)
		}
		if rec.State != reference.Processing || rec.CreatedAt.UnixMilli() != want || rec.UpdatedAt.UnixMilli() != want ||
			rec.LeaseUntil.UnixMilli() != expiry || !rec.ExpiresAt.IsZero() {
			t.Errorf("created %s: decoded %+v, want created and updated at %d, the lease ending at %d", created, rec, want, int64(expiry))
		}
	}
}

// TestDecodePreviousLayout: records that replicas of the previous version
// wrote, met during a rolling upgrade, decode with their own times.
func TestDecodePreviousLayout(t *testing.T) {
	rec, err := decode(headerV1('2')+fields("sha256:f", raw, "key", "op", "201", "", "body", ""), expiry)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != reference.Completed || rec.Token != token || rec.Key != "key" || string(rec.Response.Body) != "body" ||
		rec.CreatedAt.UnixMilli() != 1700000000000 || rec.UpdatedAt.UnixMilli() != 1700000000001 || rec.ExpiresAt.UnixMilli() != 1700000030000 {
		t.Errorf("decoded %+v", rec)
	}
	rec, err = decode(headerV1('1')+fields("sha256:f", raw, "key", "op"), expiry)
	if err != nil || rec.State != reference.Processing || rec.LeaseUntil.UnixMilli() != 1700000030000 {
		t.Errorf("decoded %+v, %v; want a processing record whose lease ends at 1700000030000", rec, err)
	}
}

// TestEncodingRoundTrips: what Create and Finish write decodes to the
// record they describe.
func TestEncodingRoundTrips(t *testing.T) {
	req := reference.Record{Key: "key-1", Operation: "orders.create", Fingerprint: "sha256:abc", RawDigest: [32]byte{1, 2, 3}}
	const leaseMS, ttlMS, created = 30000, 86400000, 1700000000000
	got, err := decode(string(encodeProcessing(token, leaseMS, req)), created+leaseMS)
	want := req
	want.State, want.Token = reference.Processing, token
	want.CreatedAt, want.UpdatedAt, want.LeaseUntil = time.UnixMilli(created), time.UnixMilli(created), time.UnixMilli(created+leaseMS)
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("processing: %v (-want +got):\n%s", err, diff)
	}
	res := reference.Result{Response: reference.Response{Status: 500, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("\x00boom")}, Error: "it broke"}
	header, err := reference.FinishEncoding(reference.Failed, res)
	if err != nil {
		t.Fatal(err)
	}
	const finished = created + 5000
	a := attempt{created: created, request: appendRequest(nil, req)}
	got, err = decode(string(encodeFinished(reference.Failed, token, a, ttlMS, res, header)), finished+ttlMS)
	want.State, want.LeaseUntil, want.Response, want.Error = reference.Failed, time.Time{}, res.Response, res.Error
	want.UpdatedAt, want.ExpiresAt = time.UnixMilli(finished), time.UnixMilli(finished+ttlMS)
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("finished: %v (-want +got):\n%s", err, diff)
	}
}

// TestDecodeHeaders: records with different headers, decoded in turn,
// each get their own (the last one decoded is kept for the next).
func TestDecodeHeaders(t *testing.T) {
	for _, ct := range []string{"application/json", "text/plain", "text/plain", "application/json"} {
		rec, err := decode(header(completedByte, "1700000000000")+fields("sha256:f", raw, "key", "op", "200", `{"Content-Type":["`+ct+`"]}`, "", ""), expiry)
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
	processing := header(processingByte, neverRenewed)
	for name, v := range map[string]string{
		"empty":               "",
		"short header":        processing[:fieldsAt-1],
		"no fields":           processing,
		"state 0":             headerV1('0') + good,
		"state 4":             headerV1('4') + good,
		"state X":             header('X', neverRenewed) + good,
		"stamp not digits":    header(processingByte, "17000000x0001") + good,
		"stamp signed":        header(processingByte, "+700000000001") + good,
		"period past expiry":  processing[:periodAt] + "9999999999999" + good,
		"v1 stamp not digits": strings.Replace(headerV1('1'), "1700000000001", "17000000x0001", 1) + good,
		"raw digest short":    processing + fields("sha256:f", "r", "key", "op"),
		"field past end":      processing + good[:len(good)-1],
		"huge length":         processing + huge,
		"bad varint":          processing + "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
		"trailing bytes":      processing + good + "x",
		"finished no reply":   header(completedByte, "1700000000000") + good,
		"status not number":   header(completedByte, "1700000000000") + good + fields("ok", "", "", ""),
		"header not JSON":     header(completedByte, "1700000000000") + good + fields("200", "{", "", ""),
	} {
		if rec, err := decode(v, expiry); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, rec)
		}
	}
	if rec, err := decode(processing+good, -1); err == nil {
		t.Errorf("a record whose key never expires: decoded %+v, want an error", rec)
	}
}

// FuzzDecode: any string and expiry decode to an error or to a record
// in one of the three states whose lease or expiry is the key's (or, in
// the previous layout, its own) and that was not updated before it was
// created unless a renewal wrote the created time down.
func FuzzDecode(f *testing.F) {
	f.Add(header(processingByte, neverRenewed)+fields("sha256:f", raw, "key", "op"), int64(expiry))
	f.Add(header(failedByte, "1700000000000")+fields("sha256:f", raw, "key", "op", "500", "", "", "boom"), int64(expiry))
	f.Add(headerV1('3')+fields("sha256:f", raw, "key", "op", "500", "", "", "boom"), int64(expiry))
	f.Fuzz(func(t *testing.T, v string, expiry int64) {
		rec, err := decode(v, expiry)
		if err != nil {
			return
		}
		if rec.State < reference.Processing || rec.State > reference.Failed {
			t.Fatalf("decoded state %v", rec.State)
		}
		if v[0] >= '1' && v[0] <= '3' {
			return // the previous layout holds its own times
		}
		end := rec.ExpiresAt
		if rec.State == reference.Processing {
			end = rec.LeaseUntil
			if !rec.CreatedAt.Equal(rec.UpdatedAt) {
				t.Errorf("processing record created %v, updated %v", rec.CreatedAt, rec.UpdatedAt)
			}
		}
		if end.UnixMilli() != expiry || rec.UpdatedAt.After(end) {
			t.Errorf("record updated %v, ending %v; the key expires at %d", rec.UpdatedAt, end, expiry)
		}
	})
}
