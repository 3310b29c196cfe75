package conform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Defaults of the bounds.
const (
	DefaultConcurrency = 16
	DefaultTimeout     = 5 * time.Second
	DefaultMaxDuration = 60 * time.Second
	// MaxConcurrency bounds CF07's burst: enough to find a race, too few
	// to flood a service.
	MaxConcurrency = 256
	// waitSlack is how much longer than the policy's wait_timeout_ms a
	// request that may wait is given, for the answer to travel.
	waitSlack = 2 * time.Second
)

// Scope values conform sends in the policy's scope_sources headers.
const (
	TenantA = "idemlint-probe-tenant-a" // every request but CF13's second
	TenantB = "idemlint-probe-tenant-b" // CF13's second request
	ActorA  = "idemlint-probe-actor-a"  // every request but CF17's second
	ActorB  = "idemlint-probe-actor-b"  // CF17's second request
)

// Config says what to probe and within which bounds.
type Config struct {
	// Policy is the adapter policy the target claims to honour, as
	// written: conform probes a policy with lint errors too, skipping the
	// probes whose sections are missing (reference.CheckPolicy reads it).
	Policy *boundary.Policy
	// PolicyFindings are the policy's lint findings, shown as notes.
	PolicyFindings []checks.Finding
	// Checks, when set, are the checks UsePolicy reads the policy through
	// (reference.WithChecks): idemlint's rules and schema stage; nil, the
	// core rules with the default limits.
	Checks *checks.Options
	// Operation is the operation_key of the state-changing operation to
	// probe; "" picks the first key-required state-changing one.
	Operation string
	// Body, a JSON object, replaces the operation's example body.
	Body *jsontree.Node

	// Targets are the base URLs of the service (http or https, no query):
	// one, or several replicas behind no balancer, over which duplicates
	// are spread (CF18).
	Targets []string
	// Handler, when set instead of Targets, serves every request in
	// process, with no socket (see InProcess).
	Handler http.Handler
	// EffectsURL, optional, answers GET with {"count": N}: how many times
	// the target really executed an operation.
	EffectsURL string
	// Effects counts executions in process; with Handler, instead of
	// EffectsURL.
	Effects func() int64
	// Origin, optional, is the serialized origin (scheme://host[:port])
	// the browser front end is served from: CF19 preflights the first
	// target from it. Without it, or with Handler, CF19 is skipped.
	Origin string

	// Headers go with every request (authentication). Their values are
	// secrets: redacted in all output, and at least MinSecretLength long.
	Headers []Header
	// Concurrency is the number of simultaneous requests of CF07 and the
	// most connections to one host (default DefaultConcurrency).
	Concurrency int
	// Timeout bounds each request (default DefaultTimeout); one that may
	// wait on an attempt in flight gets at least the policy's
	// wait_timeout_ms plus 2s.
	Timeout time.Duration
	// MaxDuration bounds the whole run (default DefaultMaxDuration).
	MaxDuration time.Duration
	// Insecure skips TLS certificate verification.
	Insecure bool
	// Verbose, when set, receives each request and its answer.
	Verbose io.Writer
}

// Runner runs the probes of one Config. It is safe to Run more than once;
// each run starts from scratch.
type Runner struct {
	cfg      Config
	policy   *contract
	target   *operation
	second   *operation // another state-changing operation, for CF08
	readOnly *operation // a read-only operation outside require_key, for CF09
	bases    []string   // target base URLs, no trailing slash
	redact   *redactor
	plan     Plan
}

// Plan is what a run will do, known before it starts and printed first.
type Plan struct {
	Bounds Bounds
	// Notes say what conform assumed or changed, such as an example body
	// it could not extend.
	Notes []string
	// PolicyFindings are the policy's lint findings (Config.PolicyFindings).
	PolicyFindings []checks.Finding
}

// Bounds are the limits of a run.
type Bounds struct {
	Targets     []string // where the probes go, credentials removed
	Operation   string
	Effects     string // the effects counter, "" when none
	Origin      string // CF19's origin, "" when none
	Probes      int    // all probes, including those the policy makes inapplicable
	MaxRequests int    // requests the applicable probes send at most
	Concurrency int
	Timeout     time.Duration
	// WaitTimeout is the timeout of a request that may wait on an attempt
	// in flight; it is Timeout unless the policy waits longer.
	WaitTimeout time.Duration
	Deadline    time.Duration
	// MaxBodyBytes bounds each response body read (see bodyLimit).
	MaxBodyBytes int
	Headers      []string // the extra headers, values redacted
}

func (b Bounds) String() string {
	wait := ""
	if b.WaitTimeout > b.Timeout {
		wait = fmt.Sprintf(" (%s when it may wait on an attempt in flight)", b.WaitTimeout)
	}
	extra := ""
	if b.Effects != "" {
		extra = ", effects counter " + b.Effects
	}
	if b.Origin != "" {
		extra += ", origin " + b.Origin
	}
	if len(b.Headers) > 0 {
		extra += ", extra headers " + strings.Join(b.Headers, ", ")
	}
	return fmt.Sprintf("conform: %d probes, at most %d requests, concurrency %d, per-request timeout %s%s, deadline %s, bodies up to %d bytes -> %s, operation %s%s",
		b.Probes, b.MaxRequests, b.Concurrency, b.Timeout, wait, b.Deadline, b.MaxBodyBytes, strings.Join(b.Targets, " "), b.Operation, extra)
}

// New checks cfg and prepares its run. Its errors are usage errors.
func New(cfg Config) (*Runner, error) {
	if cfg.Policy == nil {
		return nil, errors.New("no policy to probe")
	}
	cfg.Concurrency = defaulted(cfg.Concurrency, DefaultConcurrency)
	cfg.Timeout = defaulted(cfg.Timeout, DefaultTimeout)
	cfg.MaxDuration = defaulted(cfg.MaxDuration, DefaultMaxDuration)
	switch {
	case cfg.Concurrency < 2 || cfg.Concurrency > MaxConcurrency:
		return nil, fmt.Errorf("concurrency must be between 2 and %d, got %d", MaxConcurrency, cfg.Concurrency)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("the request timeout must be positive, got %s", cfg.Timeout)
	case cfg.MaxDuration < 0:
		return nil, fmt.Errorf("the run deadline must be positive, got %s", cfg.MaxDuration)
	case cfg.Body != nil && cfg.Body.Kind != jsontree.Object:
		return nil, errors.New("the probe body must be a JSON object: conform adds its probe fields to it")
	}
	if cfg.Origin != "" {
		if err := checkOrigin(cfg.Origin); err != nil {
			return nil, err
		}
	}
	r := &Runner{cfg: cfg, policy: readContract(cfg.Policy)}
	r.plan.PolicyFindings = cfg.PolicyFindings
	if err := r.setTargets(); err != nil {
		return nil, err
	}
	if err := r.checkHeaders(); err != nil {
		return nil, err
	}
	if err := r.pickOperations(); err != nil {
		return nil, err
	}
	r.plan.Bounds = r.computeBounds()
	return r, nil
}

func defaulted[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// inProcessBase is the base URL of an in-process run; nothing resolves it.
const inProcessBase = "http://reference.invalid"

func (r *Runner) setTargets() error {
	cfg := &r.cfg
	b := &r.plan.Bounds
	switch {
	case cfg.Handler != nil && len(cfg.Targets) > 0:
		return errors.New("probe either a target URL or an in-process handler, not both")
	case cfg.Handler != nil && cfg.EffectsURL != "":
		return errors.New("an in-process run counts executions with Effects, not an effects URL")
	case cfg.Handler != nil:
		r.bases = []string{inProcessBase}
		b.Targets = []string{"the in-process reference engine"}
		return nil
	case len(cfg.Targets) == 0:
		return errors.New("no target: give the base URL of the service")
	case cfg.Effects != nil:
		return errors.New("an in-process effects counter needs an in-process handler")
	}
	for _, t := range cfg.Targets {
		u, err := checkURL("target", t)
		if err != nil {
			return err
		}
		if u.RawQuery != "" {
			return fmt.Errorf("the target %s has a query; give the base URL the operation paths are appended to", u.Redacted())
		}
		base := strings.TrimSuffix(u.String(), "/")
		if slices.Contains(r.bases, base) {
			return fmt.Errorf("the target %s is given twice; replicas need distinct URLs", u.Redacted())
		}
		r.bases = append(r.bases, base)
		b.Targets = append(b.Targets, u.Redacted())
	}
	if cfg.EffectsURL != "" {
		e, err := checkURL("effects URL", cfg.EffectsURL)
		if err != nil {
			return err
		}
		b.Effects = e.Redacted()
	}
	return nil
}

// checkURL parses an absolute http or https URL.
func checkURL(what, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the %s is not a URL: %v", what, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("the %s %s must be an http or https URL", what, u.Redacted())
	case u.Host == "":
		return nil, fmt.Errorf("the %s %s has no host", what, u.Redacted())
	case u.Fragment != "":
		return nil, fmt.Errorf("the %s %s has a fragment", what, u.Redacted())
	}
	return u, nil
}

// checkHeaders refuses extra headers that would overwrite what the probes
// vary, or whose value is too short to redact, and prepares the redaction.
func (r *Runner) checkHeaders() error {
	var secrets []string
	for _, h := range r.cfg.Headers {
		for _, o := range r.ownHeaders() {
			if strings.EqualFold(h.Name, o) {
				return fmt.Errorf("conform sets the %s header itself; it cannot come from an extra header", o)
			}
		}
		if n := utf8.RuneCountInString(h.Value); n < MinSecretLength {
			return fmt.Errorf("the value of the extra header %s has %d characters; conform treats it as a secret and needs at least %d to redact it without garbling the output", h.Name, n, MinSecretLength)
		}
		secrets = append(secrets, h.Value)
		r.plan.Bounds.Headers = append(r.plan.Bounds.Headers, h.String())
	}
	r.redact = newRedactor(secrets)
	return nil
}

func (r *Runner) keyHeader() string { return r.policy.keyHeader }

// ownHeaders are the headers the probes set and vary themselves.
func (r *Runner) ownHeaders() []string {
	return []string{r.keyHeader(), r.policy.tenantHeader, r.policy.actorHeader}
}

// pickOperations chooses the operation to probe, and those CF08 and CF09
// need.
func (r *Runner) pickOperations() error {
	ops := r.policy.operations
	var target *operation
	if r.cfg.Operation != "" {
		i := slices.IndexFunc(ops, func(op operation) bool { return op.Key == r.cfg.Operation })
		if i < 0 {
			keys := make([]string, len(ops))
			for j, op := range ops {
				keys[j] = op.Key
			}
			return fmt.Errorf("the policy declares no operation %q; it declares %s", r.cfg.Operation, strings.Join(keys, ", "))
		}
		if !ops[i].StateChanging {
			return fmt.Errorf("operation %s is read-only; conform probes a state-changing operation", r.cfg.Operation)
		}
		target = &ops[i]
	} else {
		// The first key-required state-changing operation, else the first
		// state-changing one (its key is then optional, but honoured).
		for i := range ops {
			if ops[i].StateChanging && (target == nil || ops[i].RequiresKey && !target.RequiresKey) {
				target = &ops[i]
			}
		}
		if target == nil {
			return errors.New("the policy declares no state-changing operation to probe")
		}
	}
	r.target = r.newOperation(*target, r.cfg.Body)
	r.plan.Bounds.Operation = target.Key
	for _, op := range ops {
		switch {
		case op.Key == target.Key:
		case op.StateChanging && r.second == nil:
			r.second = r.newOperation(op, nil)
		case !op.StateChanging && !op.RequiresKey && r.readOnly == nil:
			r.readOnly = r.newOperation(op, nil)
		}
	}
	return nil
}

// newOperation prepares op's requests: body (nil: the example's) is the
// object its probes extend. An example body that is not an object is
// replaced by {}, with a note saying so.
func (r *Runner) newOperation(op operation, body *jsontree.Node) *operation {
	o := op
	o.header = http.Header{}
	if body == nil {
		body = op.body
	}
	switch {
	case body == nil:
		o.base = &jsontree.Node{Kind: jsontree.Object}
	case body.Kind == jsontree.Object:
		o.base = body
	default:
		o.base = &jsontree.Node{Kind: jsontree.Object}
		r.plan.Notes = append(r.plan.Notes, fmt.Sprintf("the example body of %s is not a JSON object; conform sends {} plus its probe fields instead", op.Key))
	}
	for _, h := range op.exampleHeaders {
		o.header.Set(h.Name, h.Value)
	}
	if op.StateChanging && o.header.Get("Content-Type") == "" {
		o.header.Set("Content-Type", "application/json")
	}
	o.form = mediaType(o.header.Get("Content-Type")) == formMediaType
	for _, own := range r.ownHeaders() {
		o.header.Del(own)
	}
	return &o
}

func (r *Runner) computeBounds() Bounds {
	b := r.plan.Bounds
	b.Probes = len(probes)
	b.Origin = r.cfg.Origin
	b.Concurrency = r.cfg.Concurrency
	b.Timeout = r.cfg.Timeout
	b.WaitTimeout = r.cfg.Timeout
	if in := r.policy.inflight; in != nil && in.policy == "wait" {
		b.WaitTimeout = max(r.cfg.Timeout, time.Duration(in.waitTimeoutMS)*time.Millisecond+waitSlack)
	}
	b.Deadline = r.cfg.MaxDuration
	b.MaxBodyBytes = bodyLimit(r.cfg.Concurrency)
	if r.cfg.Handler == nil {
		b.MaxRequests = len(r.bases) // the pre-flight check
		if r.cfg.EffectsURL != "" {
			b.MaxRequests++
		}
	}
	for _, p := range probes {
		if p.skip(r) != "" {
			continue
		}
		b.MaxRequests += p.requests
		if p.burst {
			b.MaxRequests += r.cfg.Concurrency
		}
		if r.cfg.EffectsURL != "" && p.effects >= 0 {
			b.MaxRequests += 2 // the counter, before and after
		}
	}
	return b
}

// Bounds returns the limits of a run.
func (r *Runner) Bounds() Bounds { return r.plan.Bounds }

// Status is the outcome of a probe.
type Status string

// Probe outcomes.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Skip: the policy makes the probe inapplicable, or what the target
	// did leaves it unjudgeable; Reason says which.
	Skip Status = "skip"
)

// Result is the outcome of one probe. Every text in it is redacted.
type Result struct {
	ID       string // CF01...CF19
	Name     string // what the probe sends
	Checks   string // the policy rule it checks
	Status   Status
	Reason   string // why it was skipped
	Expected string // what the policy demands, for a probe that ran
	Got      string // what came back, on failure
	Hint     string // where the answer may have gone wrong, on failure
	Diff     string // how a body differs from the one expected, on failure
	Note     string // what the probe cannot tell, whatever its status
	Requests int    // requests sent, the effects counter's included
	Duration time.Duration
}

// Report is the outcome of a run.
type Report struct {
	Plan
	Results  []Result
	Requests int
	Duration time.Duration
}

// Count returns how many probes ended with s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == s {
			n++
		}
	}
	return n
}

// Run checks that the targets answer at all, then sends the probes one
// after another (only CF07 and CF18 send at once) and reports each to out
// as it ends (out may be nil). Its errors are out's, or a target or
// effects URL that does not answer: nothing was probed.
func (r *Runner) Run(ctx context.Context, out Writer) (*Report, error) {
	if out == nil {
		out = nopWriter{}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, r.cfg.MaxDuration, fmt.Errorf("the run deadline of %s passed", r.cfg.MaxDuration))
	defer cancel()
	st := r.newRun()
	defer st.close()
	start := time.Now()
	if err := st.preflight(ctx); err != nil {
		return nil, err
	}
	if err := out.Begin(&r.plan); err != nil {
		return nil, err
	}
	rep := &Report{Plan: r.plan, Results: make([]Result, 0, len(probes))}
	for i := range probes {
		rep.Results = append(rep.Results, st.probe(ctx, probes[i]))
		if err := out.Probe(&rep.Results[i]); err != nil {
			return nil, err
		}
	}
	rep.Requests = int(st.client.sent.Load())
	rep.Duration = time.Since(start)
	return rep, out.End(rep)
}

// run is the state of one Run: the client, and what earlier probes leave
// for later ones.
type run struct {
	*Runner
	client *client
	close  func()

	first      *request  // CF02's request
	firstResp  *response // and its answer; nil when CF02 did not run
	replayResp *response // CF03's answer
	resourceID string    // the "id" of CF02's answer, to fill path parameters
	// refusals are the answers CF14 checks: CF01's and CF05's refusals.
	refusals []refusalSeen
	// replaySeen records that the target replayed an answer at least once:
	// until it has, a fresh answer where a replay would be wrong (CF11,
	// CF13, CF17) proves nothing.
	replaySeen bool
	fresh      int // fresh requests sent, to spread them over the targets
}

// refusalSeen is a refusal one probe received, for CF14.
type refusalSeen struct {
	probe string
	resp  *response
}

func (r *Runner) newRun() *run {
	c := &client{
		bases:        r.bases,
		extra:        http.Header{},
		keyHeader:    r.keyHeader(),
		tenantHeader: r.policy.tenantHeader,
		actorHeader:  r.policy.actorHeader,
		timeout:      r.plan.Bounds.Timeout,
		waitTimeout:  r.plan.Bounds.WaitTimeout,
		bodyLimit:    r.plan.Bounds.MaxBodyBytes,
		redact:       r.redact,
	}
	for _, h := range r.cfg.Headers {
		c.extra.Add(h.Name, h.Value)
	}
	if r.cfg.Verbose != nil {
		c.log = &requestLog{w: r.cfg.Verbose, redact: r.redact, targets: len(r.bases)}
	}
	st := &run{Runner: r, client: c}
	if r.cfg.Handler != nil {
		c.http = newHTTPClient(handlerTransport{r.cfg.Handler})
		st.close = func() {}
		if count := r.cfg.Effects; count != nil {
			c.effects = func(context.Context) (int64, error) { return count(), nil }
		}
		return st
	}
	t := newTransport(r.cfg.Timeout, r.cfg.Concurrency, r.cfg.Insecure)
	c.http = newHTTPClient(t)
	st.close = t.CloseIdleConnections
	if r.cfg.EffectsURL != "" {
		c.effects = c.countEffects(r.cfg.EffectsURL)
	}
	return st
}

// preflight checks that every target and the effects URL answer at all,
// whatever they answer: an address that does not would otherwise fail
// every probe, each after a timeout.
func (st *run) preflight(ctx context.Context) error {
	if st.cfg.Handler != nil {
		return nil
	}
	check := func(what, u, shown string) error {
		ctx, cancel := context.WithTimeoutCause(ctx, st.cfg.Timeout, fmt.Errorf("no answer within %s", st.cfg.Timeout))
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header = st.client.extra.Clone()
		if _, _, _, err := st.client.exchange(ctx, req); err != nil && errors.Is(err, errNoAnswer) {
			return fmt.Errorf("the %s %s does not answer: %s", what, shown, st.redact.text(err.Error()))
		}
		return nil
	}
	for i, base := range st.bases {
		if err := check("target", base+"/", st.plan.Bounds.Targets[i]); err != nil {
			return err
		}
	}
	if st.cfg.EffectsURL != "" {
		return check("effects URL", st.cfg.EffectsURL, st.plan.Bounds.Effects)
	}
	return nil
}

// probe runs one probe, with the effects counter around it when there is
// one and the probe says how much it must grow.
func (st *run) probe(ctx context.Context, p *Probe) (res Result) {
	res = Result{ID: p.ID, Name: p.Name, Checks: p.Checks}
	if reason := p.skip(st.Runner); reason != "" {
		res.Status, res.Reason = Skip, reason
		return res
	}
	start, sent := time.Now(), st.client.sent.Load()
	defer func() {
		res.Duration = time.Since(start)
		res.Requests = int(st.client.sent.Load() - sent)
		for _, s := range []*string{&res.Reason, &res.Expected, &res.Got, &res.Hint, &res.Diff, &res.Note} {
			*s = st.redact.text(*s)
		}
	}()
	t := &trial{ctx: ctx, run: st, res: &res}
	res.Status = Pass
	if ctx.Err() != nil {
		t.failWith("the probe to run", "not run: %v", notRun(ctx))
		return res
	}
	counted := st.client.effects != nil && p.effects >= 0
	var before int64
	if counted {
		var err error
		if before, err = st.client.effects(ctx); err != nil {
			t.failWith("a readable effects counter", "effects counter: %v", err)
			return res
		}
	}
	p.run(t)
	if !counted || res.Status == Skip {
		return res
	}
	after, err := st.client.effects(ctx)
	if res.Status == Fail {
		// What really ran tells a replay from a re-execution.
		if err == nil {
			res.Got += fmt.Sprintf("; the effects counter grew by %d, %d expected (%s)", after-before, p.effects, p.effectsWhy)
		}
		return res
	}
	switch {
	case err != nil:
		t.failWith("a readable effects counter", "effects counter: %v", err)
	case after-before != int64(p.effects):
		t.failWith(fmt.Sprintf("the effects counter to grow by %d (%s)", p.effects, p.effectsWhy),
			"it grew by %d, from %d to %d", after-before, before, after)
	}
	return res
}

// notRun explains why a run's context ended.
func notRun(ctx context.Context) error {
	if c := context.Cause(ctx); !errors.Is(c, context.Canceled) {
		return c
	}
	return errors.New("interrupted")
}

// trial is one probe being run.
type trial struct {
	ctx context.Context
	*run
	res *Result
}

// expect states what the policy demands.
func (t *trial) expect(format string, args ...any) { t.res.Expected = fmt.Sprintf(format, args...) }

// fail records what came back instead.
func (t *trial) fail(format string, args ...any) {
	t.res.Status = Fail
	t.res.Got = fmt.Sprintf(format, args...)
}

// failWith fails on another expectation than the probe's main one.
func (t *trial) failWith(expected, format string, args ...any) {
	t.expect("%s", expected)
	t.fail(format, args...)
}

// skip ends a probe that what the target did leaves unjudgeable.
func (t *trial) skip(reason string) {
	t.res.Status, t.res.Reason = Skip, reason
	t.res.Expected = ""
}

func (t *trial) send(r *request) *response {
	r.probe = t.res.ID
	return t.client.do(t.ctx, r)
}

// newRequest is a fresh request for op with key (bare), from tenant A and
// the first actor, with body (nil sends none), to the next target in turn.
// Path parameters are filled with CF02's resource id.
func (t *trial) newRequest(op *operation, key string, body *jsontree.Node) *request {
	r := &request{op: op, path: t.fillPath(op.Path), key: key, tenant: TenantA, actor: ActorA, target: t.fresh % len(t.bases)}
	t.fresh++
	if body != nil {
		r.body = op.encode(body)
	}
	return r
}

// again returns a copy of r for another target than r's, when there are
// several: a duplicate must reach another replica (docs/probes.md,
// Replicas).
func (t *trial) again(r *request) *request {
	dup := *r
	dup.target = (r.target + 1) % len(t.bases)
	return &dup
}

// fillPath fills the {parameters} of a path template: with the id CF02's
// answer carried, so a probe of /orders/{id} finds a resource, else with
// "probe".
func (t *trial) fillPath(template string) string {
	id := t.resourceID
	if id == "" {
		id = "probe"
	}
	segs := strings.Split(template, "/")
	for i, s := range segs {
		if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
			s = id
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
