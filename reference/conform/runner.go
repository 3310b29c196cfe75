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

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/jsontree"
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
	Actor   = "idemlint-probe-actor"
)

// Config says what to probe and within which bounds.
type Config struct {
	// Policy is the adapter policy the target claims to honour, as the
	// reference engine that accepted it returns it (Engine.Policy): conform
	// probes only a policy without error findings.
	Policy *boundary.Policy
	// Operation is the operation_key of the state-changing operation to
	// probe; "" picks the first key-required state-changing one.
	Operation string
	// Body, a JSON object, replaces the operation's example body.
	Body *jsontree.Node

	// Target is the base URL of the service (http or https, no query).
	Target string
	// Handler, when set instead of Target, serves every request in
	// process, with no socket (see InProcess).
	Handler http.Handler
	// EffectsURL, optional, answers GET with {"count": N}: how many times
	// the target really executed an operation.
	EffectsURL string
	// Effects counts executions in process; with Handler, instead of
	// EffectsURL.
	Effects func() int64

	// Headers go with every request (authentication). Their values are
	// redacted in all output.
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
	// Verbose, when set, receives one line per request.
	Verbose io.Writer
}

// operation is a declared operation as conform probes it.
type operation struct {
	boundary.Operation
	// header holds the example's headers and a JSON Content-Type, without
	// those conform sets itself.
	header http.Header
	// base is the body probes extend: the example body (or Config.Body),
	// {} when there is none, nil when it is not an object.
	base *jsontree.Node
}

// Runner runs the probes of one Config. It is safe to Run more than once;
// each run starts from scratch.
type Runner struct {
	cfg      Config
	policy   *boundary.Policy
	target   *operation
	second   *operation // another state-changing operation, for CF08
	readOnly *operation // a read-only operation outside require_key, for CF09
	base     string     // target base URL, no trailing slash
	redact   *strings.Replacer
	bounds   Bounds
}

// Bounds are the limits of a run, printed before it starts.
type Bounds struct {
	Target      string // where the probes go, credentials removed
	Operation   string
	Effects     string // the effects counter, "" when none
	Probes      int    // all probes, including those the policy makes inapplicable
	MaxRequests int    // requests the applicable probes send at most
	Concurrency int
	Timeout     time.Duration
	// WaitTimeout is the timeout of a request that may wait on an attempt
	// in flight; it is Timeout unless the policy waits longer.
	WaitTimeout time.Duration
	Deadline    time.Duration
	Headers     []string // the extra headers, values redacted
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
	if len(b.Headers) > 0 {
		extra += ", extra headers " + strings.Join(b.Headers, ", ")
	}
	return fmt.Sprintf("conform: %d probes, at most %d requests, concurrency %d, per-request timeout %s%s, deadline %s -> %s, operation %s%s",
		b.Probes, b.MaxRequests, b.Concurrency, b.Timeout, wait, b.Deadline, b.Target, b.Operation, extra)
}

// New checks cfg and prepares its run. Its errors are usage errors.
func New(cfg Config) (*Runner, error) {
	p := cfg.Policy
	if p == nil || !p.Idempotency.OK() || !p.Fingerprint.OK() || !p.Replay.OK() || !p.Inflight.OK() || !p.Conflict.OnPayloadMismatch.Status.OK() {
		return nil, errors.New("the policy is incomplete: take it from the reference engine (reference.Load), which refuses a policy it cannot run")
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
	r := &Runner{cfg: cfg, policy: p}
	if err := r.setTarget(); err != nil {
		return nil, err
	}
	if err := r.checkHeaders(); err != nil {
		return nil, err
	}
	if err := r.pickOperations(); err != nil {
		return nil, err
	}
	r.bounds = r.computeBounds()
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

func (r *Runner) setTarget() error {
	cfg := &r.cfg
	switch {
	case cfg.Handler != nil && cfg.Target != "":
		return errors.New("probe either a target URL or an in-process handler, not both")
	case cfg.Handler != nil && cfg.EffectsURL != "":
		return errors.New("an in-process run counts executions with Effects, not an effects URL")
	case cfg.Handler != nil:
		r.base = inProcessBase
		r.bounds.Target = "the in-process reference engine"
		return nil
	case cfg.Target == "":
		return errors.New("no target: give the base URL of the service")
	case cfg.Effects != nil:
		return errors.New("an in-process effects counter needs an in-process handler")
	}
	u, err := checkURL("target", cfg.Target)
	if err != nil {
		return err
	}
	if u.RawQuery != "" {
		return fmt.Errorf("the target %s has a query; give the base URL the operation paths are appended to", u.Redacted())
	}
	r.base = strings.TrimSuffix(u.String(), "/")
	r.bounds.Target = u.Redacted()
	if cfg.EffectsURL != "" {
		e, err := checkURL("effects URL", cfg.EffectsURL)
		if err != nil {
			return err
		}
		r.bounds.Effects = e.Redacted()
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
// vary, and prepares their redaction.
func (r *Runner) checkHeaders() error {
	var secrets []string
	for _, h := range r.cfg.Headers {
		for _, o := range r.ownHeaders() {
			if strings.EqualFold(h.Name, o) {
				return fmt.Errorf("conform sets the %s header itself; it cannot come from an extra header", o)
			}
		}
		if h.Value != "" {
			secrets = append(secrets, h.Value, redacted)
		}
		r.bounds.Headers = append(r.bounds.Headers, h.String())
	}
	r.redact = strings.NewReplacer(secrets...)
	return nil
}

func (r *Runner) keyHeader() string { return r.policy.Idempotency.KeyHeader() }

// ownHeaders are the headers the probes set and vary themselves.
func (r *Runner) ownHeaders() []string {
	return []string{r.keyHeader(), r.policy.ScopeSources.TenantHeader(), r.policy.ScopeSources.ActorHeader()}
}

func (r *Runner) requiresKey(op boundary.Operation) bool { return r.policy.Idempotency.Requires(&op) }

// pickOperations chooses the operation to probe, and those CF08 and CF09
// need.
func (r *Runner) pickOperations() error {
	ops := r.policy.Operations.Items
	var target *boundary.Operation
	if r.cfg.Operation != "" {
		i := slices.IndexFunc(ops, func(op boundary.Operation) bool { return op.Key.Value == r.cfg.Operation })
		if i < 0 {
			keys := make([]string, len(ops))
			for j, op := range ops {
				keys[j] = op.Key.Value
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
			if ops[i].StateChanging && (target == nil || r.requiresKey(ops[i]) && !r.requiresKey(*target)) {
				target = &ops[i]
			}
		}
		if target == nil {
			return errors.New("the policy declares no state-changing operation to probe")
		}
	}
	r.target = r.newOperation(*target, r.cfg.Body)
	r.bounds.Operation = target.Key.Value
	for _, op := range ops {
		switch {
		case op.Key.Value == target.Key.Value:
		case op.StateChanging && r.second == nil:
			r.second = r.newOperation(op, nil)
		case !op.StateChanging && !r.requiresKey(op) && r.readOnly == nil:
			r.readOnly = r.newOperation(op, nil)
		}
	}
	return nil
}

func (r *Runner) newOperation(op boundary.Operation, body *jsontree.Node) *operation {
	o := &operation{Operation: op, header: http.Header{}}
	if body == nil && op.Example != nil {
		body = op.Example.Body()
	}
	switch {
	case body == nil:
		o.base = &jsontree.Node{Kind: jsontree.Object}
	case body.Kind == jsontree.Object:
		o.base = body
	}
	if op.Example != nil {
		for name, v := range op.Example.Headers {
			o.header.Set(name, v)
		}
	}
	if op.StateChanging && o.header.Get("Content-Type") == "" {
		o.header.Set("Content-Type", "application/json")
	}
	for _, own := range r.ownHeaders() {
		o.header.Del(own)
	}
	return o
}

func (r *Runner) computeBounds() Bounds {
	b := r.bounds
	b.Probes = len(probes)
	b.Concurrency = r.cfg.Concurrency
	b.Timeout = r.cfg.Timeout
	b.WaitTimeout = r.cfg.Timeout
	if in := r.policy.Inflight; in.Policy.Value == "wait" {
		b.WaitTimeout = max(r.cfg.Timeout, time.Duration(in.WaitTimeoutMS.Value)*time.Millisecond+waitSlack)
	}
	b.Deadline = r.cfg.MaxDuration
	for i := range probes {
		p := &probes[i]
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
func (r *Runner) Bounds() Bounds { return r.bounds }

// Status is the outcome of a probe.
type Status string

// Probe outcomes.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip" // the policy makes the probe inapplicable
)

// Result is the outcome of one probe. Every text in it is redacted.
type Result struct {
	ID       string // CF01...CF13
	Name     string // what the probe sends
	Checks   string // the policy rule it checks
	Status   Status
	Reason   string // why it was skipped
	Expected string // what the policy demands, for a probe that ran
	Got      string // what came back, on failure
	Diff     string // how a body differs from the one expected, on failure
	Requests int    // requests sent, the effects counter's included
	Duration time.Duration
}

// Report is the outcome of a run.
type Report struct {
	Bounds   Bounds
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

// Run sends the probes one after another (only CF07 sends at once) and
// reports each to out as it ends (out may be nil). The error is out's.
func (r *Runner) Run(ctx context.Context, out Writer) (*Report, error) {
	if out == nil {
		out = nopWriter{}
	}
	if err := out.Begin(r.bounds); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, r.cfg.MaxDuration, fmt.Errorf("the run deadline of %s passed", r.cfg.MaxDuration))
	defer cancel()
	st := r.newRun()
	defer st.close()
	start := time.Now()
	rep := &Report{Bounds: r.bounds, Results: make([]Result, 0, len(probes))}
	for i := range probes {
		rep.Results = append(rep.Results, st.probe(ctx, &probes[i]))
		if err := out.Probe(&rep.Results[i]); err != nil {
			return nil, err
		}
	}
	rep.Requests = int(st.client.sent.Load())
	rep.Duration = time.Since(start)
	return rep, out.End(rep)
}

// run is the state of one Run: the client, and what CF02 and CF03 leave
// for the probes after them.
type run struct {
	*Runner
	client *client
	close  func()

	first      *request  // CF02's request
	firstResp  *response // and its answer; nil when CF02 did not run
	replayResp *response // CF03's answer
	resourceID string    // the "id" of CF02's answer, to fill path parameters
}

func (r *Runner) newRun() *run {
	c := &client{
		base:         r.base,
		extra:        http.Header{},
		keyHeader:    r.keyHeader(),
		tenantHeader: r.policy.ScopeSources.TenantHeader(),
		actorHeader:  r.policy.ScopeSources.ActorHeader(),
		actor:        Actor,
		timeout:      r.bounds.Timeout,
		waitTimeout:  r.bounds.WaitTimeout,
	}
	for _, h := range r.cfg.Headers {
		c.extra.Add(h.Name, h.Value)
	}
	if r.cfg.Verbose != nil {
		c.log = &lineLog{w: r.cfg.Verbose, redact: r.redact}
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

// probe runs one probe, with the effects counter around it when there is
// one and the probe says how much it must grow.
func (st *run) probe(ctx context.Context, p *probe) (res Result) {
	res = Result{ID: p.id, Name: p.name, Checks: p.checks}
	if reason := p.skip(st.Runner); reason != "" {
		res.Status, res.Reason = Skip, reason
		return res
	}
	start, sent := time.Now(), st.client.sent.Load()
	defer func() {
		res.Duration = time.Since(start)
		res.Requests = int(st.client.sent.Load() - sent)
		for _, s := range []*string{&res.Expected, &res.Got, &res.Diff} {
			*s = st.redact.Replace(*s)
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
	if !counted || res.Status != Pass {
		return res
	}
	after, err := st.client.effects(ctx)
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

func (t *trial) send(r *request) *response {
	r.probe = t.res.ID
	return t.client.do(t.ctx, r)
}

// newRequest is a request for op with key (bare), from tenant A, with
// body (nil sends none). Path parameters are filled with CF02's resource
// id.
func (t *trial) newRequest(op *operation, key string, body *jsontree.Node) *request {
	r := &request{op: op, path: t.fillPath(op.Path.Value), key: key, tenant: TenantA}
	if body != nil {
		r.body = encode(body)
	}
	return r
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
