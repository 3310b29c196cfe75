package checks

import (
	"fmt"
	"github.com/idemlint/idemlint/checks/chain"
	"slices"
	"strings"
)

// An Input is a value cross-document rules read that the run builds once,
// before the first rule that requires it, and hands to every rule that
// does: the chain graph of a set (ChainGraph), the OpenAPI description
// (checks/openapi), the as-built hops. As with the Requires and ResultOf of
// golang.org/x/tools/go/analysis, a rule names its inputs in Rule.Requires
// and reads them with InputOf.Of; it cannot read one it does not name.
//
// A sub-package defines its own inputs the same way (a package-level
// *InputOf value) and its rules require them beside the core's. What the
// caller hands over (a description loaded from --spec, the as_built paths
// of the configuration) is a supplied input (no Build; Options.Inputs);
// an input built from it reads it with From, and one built from every
// set's chain graph reads ChainGraph with EachSet. An input that cannot be
// built (Build returns an error, or a supplied input was not given) does
// not stop the run: the rules that require it do not run, and
// Result.NotRun says why.
type Input interface {
	// info is the input's description, whatever its type.
	info() inputInfo
}

// InputOf is an Input whose value has type T.
type InputOf[T any] struct {
	// Name says what the input is, in messages: "chain graph".
	Name string
	// PerSet inputs are built once per boundary set from its documents;
	// the others once per run, from the documents of every set.
	PerSet bool
	// Scope, when set, names the rules that require the input in "rules"
	// and "explain" ("openapi"): such rules run only when it is there.
	Scope string
	// Missing says how to supply an input the caller supplies, when it
	// was not: why its rules did not run.
	Missing string
	// Build makes the value from the documents of the pass: one set's for
	// a per-set input, every set's otherwise. Nil for an input the caller
	// supplies (Supply), such as a description loaded from a flag.
	Build func(*InputPass) (T, error)
}

// inputInfo is what the runner needs of an input, whatever its type.
type inputInfo struct {
	name, scope, missing string
	perSet               bool
	build                func(*InputPass) (any, error) // nil: supplied
}

func (in *InputOf[T]) info() inputInfo {
	info := inputInfo{name: in.Name, scope: in.Scope, missing: in.Missing, perSet: in.PerSet}
	if in.Build != nil {
		info.build = func(p *InputPass) (any, error) { return in.Build(p) }
	}
	return info
}

// Of returns the input's value in the pass of a rule that requires it.
// Reading an input the rule does not require is a programming error.
func (in *InputOf[T]) Of(p *SetPass) T {
	v, ok := p.inputs[in]
	if !ok {
		panic(fmt.Sprintf("checks: rule %s reads the %s it does not require", p.Rule.ID, in.Name))
	}
	return v.(T)
}

// From returns the input's value in the build of another input that reads
// it: for a per-set input, that of the set being built for.
func (in *InputOf[T]) From(p *InputPass) (T, error) {
	v, err := p.run.value(in, p.set)
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// EachSet returns the per-set input's value for every set of the run, in
// the order of Result.Sets, building those not built yet: what a run-wide
// input made from per-set ones (the OpenAPI rules' view of every chain)
// reads.
func (in *InputOf[T]) EachSet(p *InputPass) ([]T, error) {
	if !in.PerSet {
		panic("checks: EachSet of the run-wide input " + in.Name)
	}
	out := make([]T, len(p.run.sets))
	for i := range p.run.sets {
		v, err := p.run.value(in, i)
		if err != nil {
			return nil, err
		}
		out[i] = v.(T)
	}
	return out, nil
}

// Supply returns v as the value of an input the caller supplies (one
// without Build), for Options.Inputs.
func (in *InputOf[T]) Supply(v T) Supplied { return Supplied{input: in, value: v} }

// Supplied is the value of an input the caller supplies to a run
// (InputOf.Supply). Besides what the rules read, the value may say what
// the run does with it: a FileInput's file is no boundary document, and a
// PendingInput has findings of its own.
type Supplied struct {
	input Input
	value any
}

// A FileInput is a supplied value read from a file that may lie among the
// boundary documents, such as an OpenAPI description: the run leaves the
// file out of the set.
type FileInput interface {
	// Is reports whether path is the input's file.
	Is(path string) bool
}

// A PendingInput is a supplied value still being read while the run reads
// the files (an as-built configuration, read on other cores meanwhile).
// Once its workers have read the files, before any rule, the run calls
// Findings, which waits for the value and returns its own findings (its
// files that could not be read): they join the run's after the stages that
// narrow them, which never hide that an input could not be read. Its
// unreadable files count in Result.Unreadable.
type PendingInput interface {
	Findings() (found []Finding, unreadable int)
}

// InputPass is what an input's Build receives.
type InputPass struct {
	// Docs are the facts of the documents the input is built from (see
	// chain.Facts): one set's for a per-set input, every set's (sorted by
	// path) otherwise.
	Docs []*chain.Facts
	// Unreadable counts the files of the set that could not be read or
	// decoded (per-set inputs only): a chain may miss a hop.
	Unreadable int
	Options    *Options

	run *inputRun
	set int // the set of a per-set build
}

// inputRun holds the inputs built in one run, each once.
type inputRun struct {
	opts       *Options
	sets       [][]*chain.Facts
	unreadable []int // per set
	all        []*chain.Facts
	perSet     []map[Input]built // by set
	perRun     map[Input]built
}

// built is an input's value, or why it could not be built.
type built struct {
	value any
	err   error
}

func newInputRun(sets [][]*chain.Facts, unreadable []int, opts *Options) *inputRun {
	r := &inputRun{opts: opts, sets: sets, unreadable: unreadable, perSet: make([]map[Input]built, len(sets)), perRun: map[Input]built{}}
	for i := range sets {
		r.perSet[i] = map[Input]built{}
		r.all = append(r.all, sets[i]...)
	}
	slices.SortFunc(r.all, func(a, b *chain.Facts) int { return strings.Compare(a.Path, b.Path) })
	return r
}

// value returns the value of in for set (ignored for a run-wide input),
// building it on first use.
func (r *inputRun) value(in Input, set int) (any, error) {
	info := in.info()
	cache := r.perRun
	// A run-wide input is built for no set, whichever rule asks first.
	pass := &InputPass{Docs: r.all, Options: r.opts, run: r, set: -1}
	if info.perSet {
		if set < 0 {
			panic("checks: the per-set " + info.name + " read for no set: a run-wide input reads it with EachSet")
		}
		cache = r.perSet[set]
		pass.Docs, pass.Unreadable, pass.set = r.sets[set], r.unreadable[set], set
	}
	if b, ok := cache[in]; ok {
		return b.value, b.err
	}
	var b built
	switch i := slices.IndexFunc(r.opts.Inputs, func(s Supplied) bool { return s.input == in }); {
	case i >= 0:
		b.value = r.opts.Inputs[i].value
	case info.build != nil:
		b.value, b.err = info.build(pass)
	default:
		b.err = fmt.Errorf("no %s: %s", info.name, info.missing)
	}
	cache[in] = b
	return b.value, b.err
}

// NotRun is a rule that did not run because an input it requires could
// not be built.
type NotRun struct {
	Rule   string
	Reason string
}
