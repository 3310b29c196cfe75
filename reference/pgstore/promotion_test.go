package pgstore_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/storetest"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestStandbyPromotion: a primary with a streaming standby whose commits
// wait for it (synchronous_standby_names '*') is killed (SIGKILL) under
// load and the standby promoted a second later; the stores reconnect by
// a URL naming both (target_session_attrs=read-write), and no key runs
// twice. The store warns of nothing about the standby before.
func TestStandbyPromotion(t *testing.T) {
	res := standbyPromotion(t, "synchronous_standby_names=*", "")
	if len(res.Doubles) > 0 {
		t.Errorf("%d of %d keys executed twice across the promotion of a synchronous standby: %q", len(res.Doubles), res.Keys, res.Doubles)
	}
}

// TestStandbyPromotionAsynchronous measures, for README, the keys that
// run twice when the standby is asynchronous, and checks that the store
// warns of it at start. It runs only with IDEMLINT_MEASURE=1.
func TestStandbyPromotionAsynchronous(t *testing.T) {
	if os.Getenv("IDEMLINT_MEASURE") != "1" {
		t.Skip("a measurement; set IDEMLINT_MEASURE=1 to run it")
	}
	standbyPromotion(t, "synchronous_standby_names=", "asynchronously")
}

// standbyPromotion runs the load on a pair whose primary has setting,
// after checking that the store's start-up report mentions warning about
// the standby ("" for none).
func standbyPromotion(t *testing.T, setting, warning string) storetest.LoadResult {
	pair := testserver.StartPostgresPair(t, setting, "synchronous_commit=on")
	ctx := context.Background()
	s, err := pgstore.Open(ctx, pair.PrimaryURL(), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	warnings, _, err := s.Durability(ctx)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var about string
	for _, w := range warnings {
		if strings.Contains(w, "standby") {
			about = w
		}
	}
	if warning == "" && about != "" || warning != "" && !strings.Contains(about, warning) {
		t.Errorf("%s: the warning about the standby is %q, want one saying %q", setting, about, warning)
	}
	open := func() reference.Store {
		s, err := pgstore.Open(ctx, pair.URL(), pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	res := storetest.Load(t, open, 5*time.Second, 1500*time.Millisecond, func() {
		pair.KillPrimary()
		time.Sleep(time.Second)
		pair.Promote(t)
	})
	t.Logf("%d keys, the primary killed and its standby (%s) promoted a second later: %d executed twice, %d answers of 503 retried, %d leases lapsed", res.Keys, setting, len(res.Doubles), res.Refused, res.Lapses)
	return res
}
