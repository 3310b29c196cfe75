package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestDurability: the store warns of a server without an append-only
// file and of one that evicts, and of nothing once both are set as
// at-most-once needs; a server that refuses CONFIG is no error.
func TestDurability(t *testing.T) {
	url := testserver.StartRedis(t).URL()
	ctx := context.Background()
	admin := newClient(t, url, "", "")
	config := func(name, value string) {
		t.Helper()
		if err := admin.Do(ctx, admin.B().ConfigSet().ParameterValue().ParameterValue(name, value).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// The shared test server runs without persistence; put it back.
	t.Cleanup(func() { config("appendonly", "no"); config("save", ""); config("maxmemory-policy", "noeviction") })
	s := redisstore.New(admin, redisstore.Options{})

	for _, tt := range []struct {
		appendonly, save, policy string
		want                     []string // a telling part of each warning
	}{
		{"no", "", "noeviction", []string{"persists nothing"}},
		{"no", "3600 1", "noeviction", []string{`persists only snapshots (appendonly no, save "3600 1")`}},
		{"yes", "", "volatile-lru", []string{"maxmemory-policy volatile-lru"}},
		{"no", "", "allkeys-lru", []string{"persists nothing", "maxmemory-policy allkeys-lru"}},
		{"yes", "", "noeviction", nil},
	} {
		config("appendonly", tt.appendonly)
		config("save", tt.save)
		config("maxmemory-policy", tt.policy)
		warnings, read, err := s.Durability(ctx)
		if err != nil || !read {
			t.Fatalf("appendonly %s, save %q, %s: read %v, %v", tt.appendonly, tt.save, tt.policy, read, err)
		}
		ok := len(warnings) == len(tt.want)
		for i := 0; ok && i < len(warnings); i++ {
			ok = strings.Contains(warnings[i], tt.want[i])
		}
		if !ok {
			t.Errorf("appendonly %s, save %q, %s: warnings %q, want ones saying %q", tt.appendonly, tt.save, tt.policy, warnings, tt.want)
		}
	}

	// A user without CONFIG, as on managed services.
	if err := admin.Do(ctx, admin.B().Arbitrary("ACL", "SETUSER", "noconfig", "on", ">noconfig-password", "~*", "+@all", "-config").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(ctx, admin.B().Arbitrary("ACL", "DELUSER", "noconfig").Build()) })
	limited := redisstore.New(newClient(t, url, "noconfig", "noconfig-password"), redisstore.Options{})
	if warnings, read, err := limited.Durability(ctx); err != nil || read || warnings != nil {
		t.Errorf("CONFIG refused: %q, read %v, %v; want nothing read and no error", warnings, read, err)
	}
}

func newClient(t *testing.T, url, user, password string) rueidis.Client {
	t.Helper()
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	opt.Username, opt.Password = user, password
	client, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}
