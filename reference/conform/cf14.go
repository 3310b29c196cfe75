package conform

import (
	"fmt"
	"strconv"
	"strings"
)

// cf14 is CF14: the refusals of CF01 and CF05.
var cf14 = &Probe{
	ID: "CF14", Checks: "problem+json", Name: "the refusals of CF01 and CF05",
	Passes: "each refusal is application/problem+json: a JSON object whose status is the HTTP status, with title and error_code",
	Why: `Clients handle refusals in one place when they follow RFC 9457. A body
that is no problem object, or lacks error_code, leaves a client unable
to tell a missing key from a reused one, and so unable to react.`,
	Sends: `Nothing of its own: it reads the refusals (4xx and 5xx) that CF01 and
CF05 received.`,
	Skipped: `When neither CF01 nor CF05 runs, or when they received no refusal.`,

	effects: -1, skip: skipNoRefusal, run: runProblemJSON,
}

func skipNoRefusal(r *Runner) string {
	if skipMissingKey(r) != "" && skipNoMismatch(r) != "" {
		return "neither CF01 nor CF05 runs, so there is no refusal to check"
	}
	return ""
}

// noteRefusal keeps resp for CF14 when it is a refusal (4xx or 5xx):
// whether the target refused at all is the probe's own concern.
func (t *trial) noteRefusal(resp *response) {
	if resp.err == nil && resp.status >= 400 {
		t.refusals = append(t.refusals, refusalSeen{t.res.ID, resp})
	}
}

// runProblemJSON checks the refusals CF01 and CF05 received (RFC 9457).
func runProblemJSON(t *trial) {
	t.expect("Content-Type application/problem+json, a JSON object with status equal to the HTTP status, title and error_code")
	if len(t.refusals) == 0 {
		t.skip("CF01 and CF05 received no refusal to check")
		return
	}
	var wrong []string
	for _, seen := range t.refusals {
		if problem := problemFaults(seen.resp); problem != "" {
			wrong = append(wrong, seen.probe+"'s answer "+problem)
		}
	}
	if len(wrong) > 0 {
		t.fail("%s", strings.Join(wrong, "; "))
	}
}

// problemFaults says how resp is not an RFC 9457 problem as CF14 wants
// it (a JSON object whose status is the HTTP status, with title and
// error_code), "" when it is one.
func problemFaults(resp *response) string {
	if resp.err != nil {
		return resp.summary()
	}
	var faults []string
	if ct := resp.header.Get("Content-Type"); !strings.EqualFold(strings.TrimSpace(strings.Split(ct, ";")[0]), "application/problem+json") {
		faults = append(faults, fmt.Sprintf("Content-Type %q", ct))
	}
	obj, ok := jsonObject(resp.body)
	if !ok {
		return strings.Join(append(faults, "a body that is no JSON object"), ", ")
	}
	if s := string(obj["status"]); s != strconv.Itoa(resp.status) {
		if s == "" {
			s = "none"
		}
		faults = append(faults, fmt.Sprintf("status member %s for HTTP %d", s, resp.status))
	}
	for _, m := range []string{"title", "error_code"} {
		if _, has := obj[m]; !has {
			faults = append(faults, "no "+m)
		}
	}
	return strings.Join(faults, ", ")
}
