package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestDurability: the tests' cluster runs with fsync and
// synchronous_commit off, for speed, and the store warns of both; a
// connection that commits synchronously leaves the fsync warning alone.
func TestDurability(t *testing.T) {
	url := testserver.StartPostgres(t).DatabaseURL(t)
	for _, tt := range []struct {
		options string
		want    []string // a telling part of each warning
	}{
		{"", []string{"fsync off", "synchronous_commit off"}},
		{"&options=-c%20synchronous_commit%3Don", []string{"fsync off"}},
	} {
		s, err := pgstore.Open(context.Background(), url+tt.options, pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		warnings, read, err := s.Durability(context.Background())
		s.Close()
		ok := err == nil && read && len(warnings) == len(tt.want)
		for i := 0; ok && i < len(warnings); i++ {
			ok = strings.Contains(warnings[i], tt.want[i])
		}
		if !ok {
			t.Errorf("options %q: warnings %q, read %v, %v; want ones saying %q", tt.options, warnings, read, err, tt.want)
		}
	}
}
