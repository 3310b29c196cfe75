package reference

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/fixtures"
)

// verdict holds the one verdict on one document (docs/format.md, Bounds:
// one verdict for a policy): New accepts
// exactly the policies with no error finding of checks.CheckDocument, and
// when it refuses, it says what the check says, with the same rule ids and
// messages. An accepted policy's engine serves a request of each of its
// operations without failing.
func verdict(t *testing.T, src []byte) {
	doc, findings := checks.CheckDocument("policy.json", src)
	var errs []string
	for _, f := range findings {
		if f.Severity == checks.Error {
			errs = append(errs, f.Rule+" "+f.Message)
		}
	}
	e, err := New("policy.json", src, WithLogger(slog.New(slog.DiscardHandler)))
	if invalid := (*InvalidPolicyError)(nil); errors.As(err, &invalid) {
		var got []string
		for _, f := range invalid.Findings {
			if f.Severity == checks.Error {
				got = append(got, f.Rule+" "+f.Message)
			}
		}
		slices.Sort(errs)
		slices.Sort(got)
		if len(errs) == 0 || !slices.Equal(errs, got) {
			t.Fatalf("New refused with %q; the check's errors are %q", got, errs)
		}
		return
	}
	if len(errs) > 0 {
		t.Fatalf("New accepted a policy with error findings %q (err %v)", errs, err)
	}
	if doc == nil || doc.Policy == nil {
		if err == nil {
			t.Fatal("New accepted a document without a policy")
		}
		return
	}
	if err != nil {
		t.Fatalf("New refused a policy without error findings: %v", err)
	}
	for _, op := range doc.Policy.Operations.Items {
		req := &Request{Method: op.Method.Value, Path: op.Path.Value, Header: http.Header{"X-Idempotency-Key": {"k-1"}}, Body: []byte(`{"a":1}`)}
		e.Handle(context.Background(), req, func(context.Context) (Response, error) {
			return Response{Status: http.StatusCreated, Body: []byte(`{"id":1}`)}, nil
		})
	}
}

// TestOneVerdictOnEveryFixture holds the verdict on every document of the
// fixture sets that the check decodes: valid policies, broken ones and
// documents that are no policy at all.
func TestOneVerdictOnEveryFixture(t *testing.T) {
	docs, err := fixtures.Documents()
	if err != nil {
		t.Fatal(err)
	}
	policies := 0
	for _, src := range docs {
		if doc, _ := checks.CheckDocument("policy.json", src); doc != nil && doc.Policy != nil {
			policies++
		}
		verdict(t, src)
	}
	if policies < 50 {
		t.Fatalf("only %d fixture documents hold a policy", policies)
	}
}

// FuzzPolicyVerdict mutates policies to find one the check and the engine
// judge differently, or one an accepted engine trips on.
func FuzzPolicyVerdict(f *testing.F) {
	docs, err := fixtures.Documents()
	if err != nil {
		f.Fatal(err)
	}
	for _, src := range docs {
		if doc, _ := checks.CheckDocument("policy.json", src); doc != nil && doc.Policy != nil {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) { verdict(t, src) })
}
