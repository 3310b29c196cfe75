package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestPreviousKeyNames: records a replica of the previous version wrote
// under Prefix and the identity alone, as during a rolling upgrade, are
// read where the new key is absent: Get finds them, Create answers with
// them and leaves no record of its own; where both are live, the new
// one wins.
func TestPreviousKeyNames(t *testing.T) {
	client := NewTestClient(t, testserver.StartOwnRedis(t).URL())
	ctx := context.Background()
	s, err := New(ctx, client, Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := reference.Record{Key: "key", Operation: "orders.create", Fingerprint: "sha256:f", RawDigest: [32]byte{9}}
	previousToken := strings.Repeat("P", tokenLen)
	write := func(key string, v []byte, ttl time.Duration) {
		t.Helper()
		if err := client.Do(ctx, client.B().Set().Key(key).Value(rueidis.BinaryString(v)).PxMilliseconds(ms(ttl)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// In flight on a replica of the previous version.
	write(DefaultPrefix+"inflight", encodeProcessing(previousToken, ms(time.Minute), req), time.Minute)
	// Finished by one.
	finished := encodeFinished(reference.Completed, previousToken, attempt{created: time.Now().UnixMilli(), request: appendRequest(nil, req)},
		ms(time.Hour), reference.Result{Response: reference.Response{Status: 201, Body: []byte("made before")}}, nil)
	write(DefaultPrefix+"finished", finished, time.Hour)

	for id, want := range map[string]reference.State{"inflight": reference.Processing, "finished": reference.Completed} {
		got, found, err := s.Get(ctx, id)
		if err != nil || !found || got.Token != previousToken || got.State != want || got.Key != "key" {
			t.Errorf("Get(%s) = %+v, %v, %v; want the previous version's %s record", id, got, found, err, want)
		}
		live, created, err := s.Create(ctx, id, req, time.Minute)
		if err != nil || created || live.Token != previousToken || live.State != want {
			t.Errorf("Create(%s) = %+v, created %v, %v; want the previous version's record", id, live, created, err)
		}
		if n, err := client.Do(ctx, client.B().Exists().Key(s.key(id)).Build()).AsInt64(); err != nil || n != 0 {
			t.Errorf("Create(%s) left a record under the new key (%d, %v)", id, n, err)
		}
	}
	if got, found, err := s.Get(ctx, "finished"); err != nil || !found || string(got.Response.Body) != "made before" {
		t.Errorf("replay of the previous version's record: %+v, %v, %v", got, found, err)
	}

	// A new record is written under the new key, and is the one read.
	rec, created, err := s.Create(ctx, "new", req, time.Minute)
	if err != nil || !created {
		t.Fatalf("Create(new) = %v, %v", created, err)
	}
	write(DefaultPrefix+"new", encodeProcessing(previousToken, ms(time.Minute), req), time.Minute)
	if got, _, err := s.Get(ctx, "new"); err != nil || got.Token != rec.Token {
		t.Errorf("Get(new) with both keys live = token %q, %v; want the new record's %q", got.Token, err, rec.Token)
	}
}
