package report

import (
	"bufio"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/checks"
)

// SARIF writes SARIF 2.1.0 (OASIS), the format code scanning services
// (GitHub, GitLab, Azure DevOps) ingest: one run whose driver lists every
// rule with its documentation, and one result per finding.
//
// Choices worth knowing: a relative path becomes a URI relative to
// %SRCROOT% (the repository root when idemlint runs there), an absolute
// one a file: URI; columns count code points (columnKind
// "unicodeCodePoints"), as findings do; the JSON Pointer and the chain are
// result properties; and partialFingerprints identify a finding by rule,
// file, pointer and chain rather than by line, so an alert survives edits
// that only move it.
type SARIF struct{}

// SARIF constants.
const (
	sarifVersion   = "2.1.0"
	sarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	srcRoot        = "%SRCROOT%"
	// InformationURI is the project page named in SARIF output.
	InformationURI = "https://github.com/idemlint/idemlint"
	fingerprintKey = "idemlint/v1"
)

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	HelpURI              string         `json:"helpUri"`
	DefaultConfiguration sarifRuleLevel `json:"defaultConfiguration"`
	Properties           sarifRuleProps `json:"properties"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRuleLevel struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Tags []string `json:"tags"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           *int              `json:"ruleIndex,omitempty"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifResultProps  `json:"properties"`
}

type sarifResultProps struct {
	Pointer string `json:"pointer"`
	Chain   string `json:"chain,omitempty"`
}

type sarifLocation struct {
	ID               *int          `json:"id,omitempty"`
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
	Message          *sarifText    `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
}

// Format implements Formatter. The log is written a result at a time,
// indented by two spaces as encoding/json indents a whole document.
func (SARIF) Format(w io.Writer, r *Report) error {
	driver := sarifDriver{Name: "idemlint", InformationURI: InformationURI, Version: r.Version, Rules: []sarifRule{}}
	index := map[string]int{}
	for i, rule := range r.Rules {
		index[rule.ID] = i
		driver.Rules = append(driver.Rules, sarifRuleOf(rule))
	}
	bw := bufio.NewWriter(w)
	top := newJSONAt(bw, 1)
	bw.WriteString("{\n  \"$schema\": ")
	top.value(sarifSchemaURI)
	bw.WriteString(",\n  \"version\": ")
	top.value(sarifVersion)
	bw.WriteString(",\n  \"runs\": [\n    {\n      \"tool\": ")
	if err := newJSONAt(bw, 3).value(sarifTool{Driver: driver}); err != nil {
		return err
	}
	bw.WriteString(",\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": ")
	// Identical identities (rare: two findings of one rule at one value)
	// are told apart by their order, as GitHub's own line hashes are. A
	// fingerprint names its file, and findings come sorted by file, so
	// the count starts again with each file.
	seen := map[string]int{}
	file := ""
	err := newJSONAt(bw, 4).items(len(r.Findings), func(i int) (any, error) {
		f := &r.Findings[i]
		if f.File != file {
			clear(seen)
			file = f.File
		}
		return sarifResultOf(f, index, seen), nil
	})
	if err != nil {
		return err
	}
	bw.WriteString("\n    }\n  ]\n}\n")
	return bw.Flush()
}

// sarifResultOf is f as a SARIF result; seen counts the fingerprints met
// so far in f's file.
func sarifResultOf(f *checks.Finding, index map[string]int, seen map[string]int) *sarifResult {
	res := &sarifResult{
		RuleID:     f.Rule,
		Level:      f.Severity.String(),
		Message:    sarifText{Text: f.Message},
		Properties: sarifResultProps{Pointer: f.Pointer, Chain: f.Chain},
	}
	if i, ok := index[f.Rule]; ok {
		res.RuleIndex = &i
	}
	loc := physical(f.File, f.Line, f.Column)
	res.Locations = []sarifLocation{{PhysicalLocation: loc}}
	for i, rel := range f.Related {
		id := i + 1
		res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: &id, PhysicalLocation: physical(rel.File, rel.Line, rel.Column), Message: &sarifText{Text: rel.Message}})
	}
	fp := checks.Fingerprint(f.Rule, loc.ArtifactLocation.URI, f.Pointer, f.Chain)
	seen[fp]++
	res.PartialFingerprints = map[string]string{fingerprintKey: fp + ":" + strconv.Itoa(seen[fp])}
	return res
}

func sarifRuleOf(r *checks.Rule) sarifRule {
	scope := "per-document"
	if r.CrossDocument() {
		scope = "cross-document"
	}
	return sarifRule{
		ID:                   r.ID,
		Name:                 r.Name,
		ShortDescription:     sarifText{Text: r.Summary},
		FullDescription:      sarifText{Text: r.Doc},
		Help:                 sarifText{Text: r.Doc, Markdown: helpMarkdown(r)},
		HelpURI:              HelpURI(r.ID),
		DefaultConfiguration: sarifRuleLevel{Level: r.Severity.String()},
		Properties:           sarifRuleProps{Tags: []string{"idempotency", scope}},
	}
}

// RuleAnchor is the HTML id of a rule's row in the rule table of
// docs/rules.md.
func RuleAnchor(id string) string { return strings.ToLower(id) }

// HelpURI is where a rule is documented: its row in the rule table of
// docs/rules.md on the project page, which links on to its fixtures and
// is followed by the rule's explanation.
func HelpURI(id string) string { return InformationURI + "/blob/main/docs/rules.md#" + RuleAnchor(id) }

// helpMarkdown renders a rule's Doc as Markdown: the prose stays as it is
// (hard-wrapped lines join into paragraphs), and each run of lines indented
// by two spaces, which Doc uses for examples, becomes a code block.
func helpMarkdown(r *checks.Rule) string {
	var b strings.Builder
	b.WriteString("**" + r.ID + " " + r.Name + "**: " + r.Summary + "\n\n")
	inCode := false
	for _, line := range strings.Split(r.Doc, "\n") {
		indented := strings.HasPrefix(line, "  ")
		if indented != inCode {
			b.WriteString("```\n")
			inCode = indented
		}
		if indented {
			line = line[2:]
		}
		b.WriteString(line + "\n")
	}
	if inCode {
		b.WriteString("```\n")
	}
	b.WriteString("\nExamples: `idemlint explain " + r.ID + "`\n")
	return b.String()
}

// physical is a file and, when known (line > 0), a position in it.
func physical(file string, line, column int) sarifPhysical {
	loc := sarifPhysical{ArtifactLocation: artifactOf(file)}
	if line > 0 {
		loc.Region = &sarifRegion{StartLine: line, StartColumn: column}
	}
	return loc
}

// artifactOf locates a file for SARIF: relative paths against %SRCROOT%,
// absolute ones as file: URIs. Both are escaped as URIs must be.
func artifactOf(file string) sarifArtifact {
	slashed := filepath.ToSlash(file)
	if filepath.IsAbs(file) {
		if !strings.HasPrefix(slashed, "/") {
			slashed = "/" + slashed // a Windows drive: file:///C:/...
		}
		return sarifArtifact{URI: (&url.URL{Scheme: "file", Path: slashed}).String()}
	}
	return sarifArtifact{URI: (&url.URL{Path: slashed}).String(), URIBaseID: srcRoot}
}
