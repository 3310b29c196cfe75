package asbuilt

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the one place retries are counted and classified (spec
// 8.3): what each platform's setting means in attempts in all and in the
// retry_on vocabulary of boundary documents. The readers only find the
// settings (written, or the default of defaults.go that applies).

// setting is the effective value of one platform setting, as the
// platform would read it, and where it comes from.
type setting struct {
	Value string
	From  Origin
}

// written is a setting read at t.
func written(t Text) *setting { return &setting{Value: t.Value, From: Origin{At: t.At}} }

// defaulted is the setting d gives, applying because of what is at at.
func defaulted(d *Default, at Pos) *setting {
	return &setting{Value: d.Value, From: Origin{At: at, Default: d}}
}

// envoyRetry is the retry of an Istio HTTPRetry (a route's retries, or
// the mesh's defaultHttpRetryPolicy), as istio/istio's ConvertPolicy
// turns it into Envoy's: attempts are retries (0 or fewer turn retries
// off), retryOn replaces the default conditions and its bare status codes
// the default retriable codes, and an unwritten part keeps the default.
// attempts nil means no HTTPRetry at all: the default policy, applied
// because of what is at at.
func envoyRetry(attempts, retryOn, perTry *setting, at Pos) (Retry, []Problem) {
	if attempts == nil {
		attempts, retryOn = defaulted(istioRetries, at), nil
	}
	codes := []*setting{defaulted(istioRetriableStatusCodes, at)}
	if retryOn == nil {
		retryOn = defaulted(istioRetryOn, at)
	} else {
		codes = nil
		for part := range strings.SplitSeq(retryOn.Value, ",") {
			if code, err := strconv.Atoi(strings.TrimSpace(part)); err == nil && http.StatusText(code) != "" {
				codes = append(codes, &setting{Value: strconv.Itoa(code), From: retryOn.From})
			}
		}
	}
	return envoyRetryWith(attempts, retryOn, codes, perTry)
}

// envoyRetryWith is an Envoy retry policy: attempts are retries (0 or
// fewer turn retries off), retryOn its conditions, codes its retriable
// status codes (which retriable-status-codes then retries, added to
// retryOn when missing).
func envoyRetryWith(attempts, retryOn *setting, codes []*setting, perTry *setting) (Retry, []Problem) {
	var problems []Problem
	retries, err := strconv.Atoi(attempts.Value)
	if err != nil {
		problems = append(problems, Problem{At: attempts.From.At, Message: "retries.attempts is " + strconv.Quote(attempts.Value) + ", not a whole number"})
	}
	if retries <= 0 {
		return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: attempts.From}, problems
	}
	out := Retry{Attempts: 1 + retries, AttemptsKnown: true, AttemptsFrom: attempts.From}
	if len(codes) > 0 && !strings.Contains(retryOn.Value, "retriable-status-codes") {
		retryOn = &setting{Value: retryOn.Value + ",retriable-status-codes", From: retryOn.From}
	}
	onReset := out.envoyConditions(retryOn, codes, true)
	problems = append(problems, out.envoyPerTry(perTry, onReset, "retries.perTryTimeout")...)
	return out, problems
}

// envoyRouteRetry is the retry of an Envoy RetryPolicy as written (a
// route's, or its virtual host's); p nil is none: no retry, the default
// applying because of the route at at.
func envoyRouteRetry(p *envoyPolicy, at Pos) (Retry, []Problem) {
	if p == nil {
		return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: defaulted(envoyNoRetry, at).From}, nil
	}
	var problems []Problem
	n := p.numRetries
	if n == nil {
		n = defaulted(envoyNumRetries, p.at)
	}
	retries, err := strconv.Atoi(strings.TrimSpace(n.Value))
	if err != nil || retries < 0 {
		problems = append(problems, Problem{At: n.From.At, Message: "retry_policy.num_retries is " + strconv.Quote(n.Value) + ", not a whole number"})
		n = defaulted(envoyNumRetries, p.at)
		retries, _ = strconv.Atoi(n.Value)
	}
	out := Retry{Attempts: 1 + retries, AttemptsKnown: true, AttemptsFrom: n.From, OnlyIf: p.gates}
	onReset := false
	if p.retryOn != nil {
		onReset = out.envoyConditions(p.retryOn, p.codes, false)
	}
	return out, append(problems, out.envoyPerTry(p.perTry, onReset, "retry_policy.per_try_timeout")...)
}

// envoyConditions adds the conditions of an Envoy retry_on value, its
// retriable-status-codes being codes; a bare status code is skipped when
// bareCodes says the caller counted it among codes (Istio), and is a
// condition idemlint does not know otherwise. onReset says whether Envoy
// also retries an attempt its per-try timeout cut.
func (out *Retry) envoyConditions(retryOn *setting, codes []*setting, bareCodes bool) (onReset bool) {
	for part := range strings.SplitSeq(retryOn.Value, ",") {
		part = strings.TrimSpace(part)
		from := retryOn.From
		switch part {
		case "":
		case "connect-failure", "refused-stream", "reset-before-request":
			out.add(Condition{Kind: ConnectError, Platform: part, From: from})
		case "reset", "http3-post-connect-failure":
			// No answer after the request was sent (an HTTP/3 failure
			// after the connection was made included).
			onReset = onReset || part == "reset"
			out.add(Condition{Kind: Timeout, Platform: part, From: from})
		case "5xx", "gateway-error":
			// Envoy: "5xx" retries any 5xx answer or no answer at all
			// (disconnect, reset, read timeout), connect-failure and
			// refused-stream included; "gateway-error" is "similar to 5xx"
			// for 502, 503 and 504 only (Envoy router filter,
			// x-envoy-retry-on).
			onReset = true
			low, high := 500, 599
			if part == "gateway-error" {
				low, high = 502, 504
			}
			out.add(Condition{Kind: Status, Low: low, High: high, Platform: part, From: from})
			out.add(Condition{Kind: Timeout, Platform: part, From: from})
			out.add(Condition{Kind: ConnectError, Platform: part, From: from})
		case "retriable-4xx":
			out.add(Condition{Kind: Status, Low: 409, High: 409, Platform: part, From: from})
		case "retriable-status-codes":
			for _, c := range codes {
				code, _ := strconv.Atoi(c.Value)
				out.add(Condition{Kind: Status, Low: code, High: code, Platform: part, From: c.From})
			}
		case "cancelled", "deadline-exceeded", "internal", "resource-exhausted", "unavailable":
			// gRPC status conditions: they do not apply to HTTP operations.
		default:
			if code, err := strconv.Atoi(part); bareCodes && err == nil && http.StatusText(code) != "" {
				continue // a bare status code, counted with retriable-status-codes
			}
			// envoy-ratelimited, retriable-headers and names idemlint does
			// not know: retried on an answer, so after receipt.
			out.add(Condition{Kind: Other, Platform: part, From: from})
		}
	}
	return onReset
}

// envoyPerTry sets an Envoy per-try timeout ("1.5s", what names it in
// problems); Envoy retries an attempt cut by it only under 5xx,
// gateway-error or reset (onReset).
func (out *Retry) envoyPerTry(perTry *setting, onReset bool, what string) []Problem {
	if perTry == nil {
		return nil
	}
	d, err := time.ParseDuration(perTry.Value)
	if err != nil {
		return []Problem{{At: perTry.From.At, Message: what + " is " + strconv.Quote(perTry.Value) + ", not a duration"}}
	}
	out.PerTryTimeout, out.PerTryTimeoutFrom = d, perTry.From
	if onReset {
		out.add(Condition{Kind: Timeout, Platform: "perTryTimeout", From: perTry.From})
	}
	return nil
}

// nginxRetry is the retry of ingress-nginx for one class of methods:
// nonIdempotent for POST, LOCK and PATCH. tries are attempts in all (0 is
// unlimited).
func nginxRetry(next, tries, retryNonIdempotent *setting, nonIdempotent bool) (Retry, []Problem) {
	var problems []Problem
	n, err := strconv.Atoi(strings.TrimSpace(tries.Value))
	if err != nil || n < 0 {
		// ingress-nginx ignores a value it cannot parse: the default.
		problems = append(problems, Problem{At: tries.From.At, Message: "proxy-next-upstream-tries is " + strconv.Quote(tries.Value) + ", not a whole number"})
		tries = defaulted(nginxProxyNextUpstreamTries, tries.From.At)
		n, _ = strconv.Atoi(tries.Value)
	}
	return nginxConditions(Retry{Attempts: n, AttemptsKnown: true, AttemptsFrom: tries.From}, next, retryNonIdempotent, nonIdempotent), problems
}

// nginxConfRetry is the retry of an NGINX location for one class of
// methods: nginx passes a request to the next server of the upstream, so
// attempts in all are its servers, bounded by proxy_next_upstream_tries
// when that is not 0.
func nginxConfRetry(next, tries, servers, retryNonIdempotent *setting, nonIdempotent bool) (Retry, []Problem) {
	var problems []Problem
	n, err := strconv.Atoi(tries.Value)
	if err != nil || n < 0 {
		problems = append(problems, Problem{At: tries.From.At, Message: "proxy_next_upstream_tries is " + strconv.Quote(tries.Value) + ", not a whole number"})
		n = 0
	}
	count, _ := strconv.Atoi(servers.Value)
	out := Retry{Attempts: max(count, 1), AttemptsKnown: true, AttemptsFrom: servers.From}
	if n > 0 && n < out.Attempts {
		out.Attempts, out.AttemptsFrom = n, tries.From
	}
	return nginxConditions(out, next, retryNonIdempotent, nonIdempotent), problems
}

// nginxConditions adds to out the conditions of proxy_next_upstream
// next. nginx never passes a non-idempotent request to the next server
// once it was sent unless next holds non_idempotent (ingress-nginx:
// retry-non-idempotent), so without it every condition is connect_error
// for those methods.
func nginxConditions(out Retry, next, retryNonIdempotent *setting, nonIdempotent bool) Retry {
	words := strings.Fields(next.Value)
	sentOnly := nonIdempotent && !slices.Contains(words, "non_idempotent")
	if sentOnly && retryNonIdempotent != nil && isTrue(retryNonIdempotent.Value) {
		sentOnly = false
	}
	if slices.Contains(words, "off") {
		return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: next.From}
	}
	for _, w := range words {
		c := Condition{Platform: w, From: next.From}
		switch {
		case w == "non_idempotent":
			continue
		case sentOnly:
			c.Kind = ConnectError
		case w == "error", w == "timeout", w == "invalid_header":
			// error and timeout also cover failures before sending, but
			// once sent they resend (timeout); invalid_header is
			// an answer that could not be read, after receipt too.
			c.Kind = Timeout
		case strings.HasPrefix(w, "http_"):
			code, err := strconv.Atoi(w[len("http_"):])
			if err != nil {
				c.Kind = Other
				break
			}
			c.Kind, c.Low, c.High = Status, code, code
		default:
			c.Kind = Other
		}
		out.add(c)
	}
	return out
}

// gatewayRetry is the retry of a Gateway API HTTPRouteRule: none without
// a retry stanza; with one, connection errors and the codes, and attempts
// that are retries, implementation-specific when not written.
func gatewayRetry(stanza Pos, present bool, attempts *setting, codes []Text, rule Pos) (Retry, []Problem) {
	if !present {
		return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: defaulted(gatewayNoRetry, rule).From}, nil
	}
	var problems []Problem
	out := Retry{}
	if attempts == nil {
		out.AttemptsFrom = defaulted(gatewayRetryAttempts, stanza).From
	} else if n, err := strconv.Atoi(attempts.Value); err != nil || n < 0 {
		problems = append(problems, Problem{At: attempts.From.At, Message: "retry.attempts is " + strconv.Quote(attempts.Value) + ", not a whole number"})
		out.AttemptsFrom = defaulted(gatewayRetryAttempts, stanza).From
	} else {
		out.Attempts, out.AttemptsKnown, out.AttemptsFrom = 1+n, true, attempts.From
	}
	// GEP-1731 makes every implementation retry connection errors; spec
	// 8.3 counts them as connect_error (what a reset after sending does is
	// left to the implementation, and codes are what the API says).
	out.add(Condition{Kind: ConnectError, Platform: "connection error", From: defaulted(gatewayRetryConnectionErrors, stanza).From})
	for _, c := range codes {
		code, err := strconv.Atoi(c.Value)
		if err != nil || code < 400 || code > 599 {
			problems = append(problems, Problem{At: c.At, Message: "retry.codes entry " + strconv.Quote(c.Value) + " is not a status code from 400 to 599"})
			continue
		}
		out.add(Condition{Kind: Status, Low: code, High: code, Platform: "codes", From: Origin{At: c.At}})
	}
	return out, problems
}

// add adds c unless a condition of the same kind and codes is there
// already (conditions without a retry_on equivalent: of the same name).
func (r *Retry) add(c Condition) {
	same := func(o Condition) bool {
		return o.Kind == c.Kind && o.Low == c.Low && o.High == c.High && (c.Kind != Other || o.Platform == c.Platform)
	}
	if !slices.ContainsFunc(r.Conditions, same) {
		r.Conditions = append(r.Conditions, c)
	}
}
