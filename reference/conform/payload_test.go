package conform

import (
	"regexp"
	"testing"

	"github.com/idemlint/idemlint/reference/jcs"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

func parse(t *testing.T, src string) *jsontree.Node {
	t.Helper()
	n, problems := jsontree.Parse(src)
	if len(problems) > 0 {
		t.Fatalf("%s: %v", src, problems)
	}
	return n
}

func TestEncode(t *testing.T) {
	body := parse(t, `{"b": [1, 2.5, -3, 12345678901234567890], "a": {"s": "\"q\" \\ \n\u00e9", "t": true, "f": false, "n": null}, "e": {}, "z": []}`)
	big := withFields(body, field{BigField, number(bigExact)}, field{"a", str("replaced")})

	for _, tt := range []struct {
		name string
		got  []byte
		want string
	}{
		{"compact, numbers as spelt", encode(big),
			`{"b":[1,2.5,-3,12345678901234567890],"e":{},"z":[],"idemlint_probe_big":9007199254740993,"a":"replaced"}`},
		{"re-serialised", reserialise(body), "{\n" +
			"  \"z\" : [],\n" +
			"  \"e\" : {},\n" +
			"  \"a\" : {\n" +
			"    \"n\" : null,\n" +
			"    \"f\" : false,\n" +
			"    \"t\" : true,\n" +
			"    \"s\" : \"\\\"q\\\" \\\\ \\né\"\n" +
			"  },\n" +
			"  \"b\" : [\n" +
			"    1.0,\n" +
			"    2.5,\n" +
			"    -3.0,\n" +
			"    12345678901234567890\n" +
			"  ]\n" +
			"}"},
	} {
		if string(tt.got) != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, tt.got, tt.want)
		}
	}
}

// Both spellings are one payload to RFC 8785, which is what CF06 relies
// on; the big integers of CF11 stay two payloads.
func TestSpellingsCanonicaliseAlike(t *testing.T) {
	body := withFields(parse(t, `{"customerId": "C123", "items": [{"productId": "P001", "qty": 2}], "x": {"y": [0, -7]}}`), field{NonceField, str(newUUID())})
	plain, err := jcs.CanonicalizeExact(encode(body))
	if err != nil {
		t.Fatal(err)
	}
	respelt, err := jcs.CanonicalizeExact(reserialise(body))
	if err != nil {
		t.Fatal(err)
	}
	if string(plain) != string(respelt) {
		t.Errorf("canonical forms differ:\n%s\n%s", plain, respelt)
	}
	exact, _ := jcs.CanonicalizeExact(encode(withFields(body, field{BigField, number(bigExact)})))
	rounded, _ := jcs.CanonicalizeExact(encode(withFields(body, field{BigField, number(bigRounded)})))
	if string(exact) == string(rounded) {
		t.Errorf("%s and %s canonicalise alike", bigExact, bigRounded)
	}
}

func TestHasSafeInteger(t *testing.T) {
	for src, want := range map[string]bool{
		`{}`:                        false,
		`{"a": "1", "b": 1.5}`:      false,
		`{"a": 12345678901234567}`:  false, // too long to re-spell exactly
		`{"a": [{"b": -4}]}`:        true,
		`{"a": 1e3, "b": {"c": 7}}`: true,
	} {
		if got := hasSafeInteger(parse(t, src)); got != want {
			t.Errorf("hasSafeInteger(%s) = %v", src, got)
		}
	}
}

func TestNewUUID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		u := newUUID()
		if !v4.MatchString(u) || seen[u] {
			t.Fatalf("newUUID() = %q: not a fresh UUIDv4", u)
		}
		seen[u] = true
	}
}
