package conform

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// cf19 is CF19: the browser's CORS preflight (docs/probes.md, The
// browser's preflight: CF19).
var cf19 = &Probe{
	ID: "CF19", Checks: "CORS allows the key header", Name: "a browser's preflight from --origin",
	Passes: "a 2xx whose Access-Control-Allow-Origin is the origin and whose Access-Control-Allow-Headers lists the key header (either may be * without credentials)",
	Why: `A browser sends a custom header to another origin only when the preflight
allows it. When Access-Control-Allow-Headers leaves the key header out (as
ingress-nginx's default cors-allow-headers does), every write from the
front end fails before it is sent, or the front end learns to drop the
key and loses at-most-once. "*" does not cover requests with credentials:
a browser then reads it as a header named "*".`,
	Sends: `One OPTIONS request to the operation's path on the first --target (the
browser-facing URL; replicas behind it are not preflighted one by one),
as a browser sends it: Origin: the --origin value,
Access-Control-Request-Method: the operation's method, and
Access-Control-Request-Headers: the key header (in lower case) and
content-type; no extra, tenant or actor header, since a preflight carries
no credentials. A note says when content-type, or a method other than GET,
HEAD and POST, is not allowed either: a browser needs them too.`,
	Skipped: `Without --origin, and with --reference: the in-process engine answers no
preflight (CORS belongs to the browser-facing proxy).`,

	requests: 1, effects: 0, effectsWhy: "a preflight executes nothing",
	skip: skipNoOrigin, run: runPreflight,
}

func skipNoOrigin(r *Runner) string {
	switch {
	case r.cfg.Handler != nil:
		return "the in-process reference engine answers no CORS preflight: probe the browser-facing --target with --origin"
	case r.cfg.Origin == "":
		return "no --origin: give the origin the browser front end is served from to probe its CORS preflight"
	}
	return ""
}

// checkOrigin accepts a serialized origin, as a browser writes it in its
// Origin header: scheme://host[:port], lower case, no default port, no
// path, query, fragment or credentials.
func checkOrigin(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("the origin %q is not an http or https origin: give scheme://host[:port], e.g. https://app.example", s)
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); u.Scheme == "http" && port == "80" || u.Scheme == "https" && port == "443" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	if serialized := u.Scheme + "://" + host; s != serialized {
		return fmt.Errorf("the origin %q is not a serialized origin: give %s, as a browser sends it in Origin", s, serialized)
	}
	return nil
}

// runPreflight sends the preflight a browser sends before the operation,
// and judges the answer as the Fetch standard's CORS check does.
func runPreflight(t *trial) {
	origin, key := t.cfg.Origin, t.keyHeader()
	t.expect("a 2xx with Access-Control-Allow-Origin %s (or * without credentials) and Access-Control-Allow-Headers listing %s (or * without credentials)", origin, key)
	op := *t.target
	op.Method = http.MethodOptions
	op.header = http.Header{}
	op.header.Set("Origin", origin)
	op.header.Set("Access-Control-Request-Method", t.target.Method)
	op.header.Set("Access-Control-Request-Headers", strings.ToLower(key)+", content-type")
	resp := t.send(&request{op: &op, path: t.fillPath(op.Path), bare: true})
	if !resp.ok() {
		t.fail("%s", resp.summary())
		return
	}
	h := resp.header
	credentials := h.Get("Access-Control-Allow-Credentials") == "true"
	withCredentials := ""
	if credentials {
		withCredentials = ", with Access-Control-Allow-Credentials: true"
	}
	allowOrigin := h.Values("Access-Control-Allow-Origin")
	allowedHeaders := listed(h, "Access-Control-Allow-Headers")
	// allows reports whether list names name, or is * without credentials
	// (with them, a browser reads * as a name).
	allows := func(list []string, name string, fold bool) bool {
		return slices.ContainsFunc(list, func(n string) bool {
			return fold && strings.EqualFold(n, name) || n == name || n == "*" && !credentials
		})
	}
	switch {
	case !(len(allowOrigin) == 1 && (allowOrigin[0] == origin || allowOrigin[0] == "*" && !credentials)):
		t.fail("%s%s", showHeader("Access-Control-Allow-Origin", allowOrigin), withCredentials)
		return
	case !allows(allowedHeaders, key, true):
		t.fail("%s%s", showHeader("Access-Control-Allow-Headers", allowedHeaders), withCredentials)
		t.res.Hint = "a browser then refuses to send the key; behind ingress-nginx, check --as-built on the Ingress (IDL405)"
		return
	}
	// What else a browser needs, which CF19 leaves out of its verdict.
	var also []string
	if !allows(allowedHeaders, "content-type", true) {
		also = append(also, "Access-Control-Allow-Headers does not list content-type")
	}
	// GET, HEAD and POST are CORS-safelisted methods: they need no listing.
	if m := t.target.Method; m != http.MethodPost && m != http.MethodGet && m != http.MethodHead && !allows(listed(h, "Access-Control-Allow-Methods"), m, false) {
		also = append(also, "Access-Control-Allow-Methods does not list "+m)
	}
	if len(also) > 0 {
		t.res.Note = strings.Join(also, "; ") + ": a browser refuses the request all the same"
	}
}

// listed returns the names of a comma-separated list header, over all its
// fields.
func listed(h http.Header, name string) []string {
	var names []string
	for _, v := range h.Values(name) {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}
