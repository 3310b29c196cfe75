package checks

import (
	"fmt"
	"regexp"
	"sync"
	"testing"
)

// The pattern cache gives regexp.Compile's verdict, from any goroutine,
// and stops growing at its bound instead of keeping every pattern a
// hostile set invents.
func TestPatternCache(t *testing.T) {
	c := patternCache{verdicts: map[string]error{}}
	patterns := []string{`^[A-Za-z0-9_-]+$`, `^(?=x)`, `[`, `^[0-9a-f]{32}$`}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 3 {
				for _, p := range patterns {
					_, want := regexp.Compile(p)
					if got := c.compile(p); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("compile(%q) = %v, want %v", p, got, want)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(c.verdicts) != len(patterns) {
		t.Errorf("cache holds %d patterns, want %d", len(c.verdicts), len(patterns))
	}

	for i := range maxCachedPatterns + 10 {
		c.compile(fmt.Sprintf("^k%d$", i))
	}
	if len(c.verdicts) != maxCachedPatterns {
		t.Errorf("cache grew to %d patterns, want its bound %d", len(c.verdicts), maxCachedPatterns)
	}
	long := "^" + string(make([]byte, maxCachedPattern)) + "$"
	c = patternCache{verdicts: map[string]error{}}
	c.compile(long)
	if len(c.verdicts) != 0 {
		t.Errorf("a pattern longer than %d bytes was cached", maxCachedPattern)
	}
}
