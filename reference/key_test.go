package reference

import (
	"regexp"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	rules := keyRules{maxLength: 8, pattern: regexp.MustCompile(`^[^x]*$`)}
	tests := []struct {
		name   string
		values []string
		key    string
		fault  keyFault
	}{
		{"bare", []string{"abc"}, "abc", keyOK},
		{"quoted", []string{`"abc"`}, "abc", keyOK},
		{"quoted escapes", []string{`"a\"b\\c"`}, `a"b\c`, keyOK},
		{"bare with inner quote", []string{`a"b`}, `a"b`, keyOK},
		{"bare at max length", []string{"12345678"}, "12345678", keyOK},
		{"length counts characters", []string{"ééééé"}, "ééééé", keyOK},
		{"absent", nil, "", keyMissing},
		{"empty", []string{""}, "", keyMissing},
		{"empty quoted", []string{`""`}, "", keyMissing},
		{"two lines", []string{"a", "b"}, "", keyRepeated},
		{"two lines merged", []string{"a, b"}, "", keyRepeated},
		{"bare with a comma", []string{"a,b"}, "", keyRepeated},
		{"comma inside quotes", []string{`"a,b"`}, "a,b", keyOK},
		{"unterminated", []string{`"abc`}, "", keyMalformed},
		{"lone quote", []string{`"`}, "", keyMalformed},
		{"text after closing quote", []string{`"abc"def`}, "", keyMalformed},
		{"parameters", []string{`"abc";p=1`}, "", keyMalformed},
		{"unknown escape", []string{`"a\nb"`}, "", keyMalformed},
		{"escape at end", []string{`"ab\`}, "", keyMalformed},
		{"non-ASCII in sf-string", []string{`"é"`}, "", keyMalformed},
		{"control in sf-string", []string{"\"a\tb\""}, "", keyMalformed},
		{"too long", []string{"123456789"}, "", keyTooLong},
		{"too long once unquoted", []string{`"123456789"`}, "", keyTooLong},
		{"pattern", []string{"abxc"}, "", keyMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, fault := rules.parseKey(tt.values)
			if key != tt.key || fault != tt.fault {
				t.Errorf("parseKey(%q) = %q, %d; want %q, %d", tt.values, key, fault, tt.key, tt.fault)
			}
		})
	}
}

func TestUnquoteSFStringAllocatesOnlyForEscapes(t *testing.T) {
	plain := `"` + strings.Repeat("a", 36) + `"`
	if n := testing.AllocsPerRun(100, func() { unquoteSFString(plain) }); n != 0 {
		t.Errorf("unquoting a key without escapes allocates %v times", n)
	}
}

func TestKeyFaultsAreDescribed(t *testing.T) {
	rules := keyRules{maxLength: 64, pattern: regexp.MustCompile(`^[a-z]+$`)}
	want := map[keyFault]string{
		keyMissing:   "this request requires an idempotency key in the Idempotency-Key header",
		keyRepeated:  "send exactly one Idempotency-Key header, holding one key: a comma in a bare key is two header fields merged (RFC 9110, 5.3)",
		keyMalformed: `the Idempotency-Key header starts with a double quote but is not a Structured Field String (RFC 8941): printable ASCII between quotes, with only \" and \\ escaped`,
		keyTooLong:   "the idempotency key is longer than 64 characters",
		keyMismatch:  "the idempotency key does not match the pattern ^[a-z]+$",
	}
	for f := keyMissing; f < numKeyFaults; f++ {
		if got := rules.describe(f, "Idempotency-Key"); got != want[f] {
			t.Errorf("describe(%d) = %q, want %q", f, got, want[f])
		}
	}
}

// TestCharsetAgreesWithPattern: for patterns that are one repeated
// character class, the byte table decides as the pattern would; any other
// pattern has no table.
func TestCharsetAgreesWithPattern(t *testing.T) {
	for _, pat := range []string{`^x`, `^[a-z]+`, `[a-z]+$`, `^[a-z]+[0-9]$`, `^(?m)[a-z]+$`, `^a+$`, `^(?:ab)+$`, `^[a-z]+$|^x$`} {
		if charsetOf(regexp.MustCompile(pat)) != nil {
			t.Errorf("%s: got a charset", pat)
		}
	}
	patterns := []string{`^[A-Za-z0-9-]+$`, `^[a-z]*$`, `^[0-9a-f]{4,8}$`, `^[^/]{2,}$`, `^\w+$`, `^(?i)[a-f]+$`, `^[a-zé]+$`, `^[ -~]{1,3}$`, `^[\x00-\x{10FFFF}]{0,1}$`}
	keys := []string{"", "a", "ab", "abc-12", "ABC", "aé", "é", "0123", "012345678", "a/b", "_x", "fF", " ", "~~~~", "a\x00", "xyz-Q9", "日本"}
	for _, pat := range patterns {
		re := regexp.MustCompile(pat)
		rules := keyRules{pattern: re, charset: charsetOf(re)}
		if rules.charset == nil {
			t.Fatalf("%s: no charset", pat)
		}
		for _, key := range keys {
			if got, want := rules.matches(key), re.MatchString(key); got != want {
				t.Errorf("%s on %q: %v, want %v", pat, key, got, want)
			}
		}
	}
}
