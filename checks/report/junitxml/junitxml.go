// Package junitxml is the JUnit XML document that CI systems (GitLab,
// Jenkins, Azure Pipelines, CircleCI) show as test results. Both "check"
// (a testsuite per file, a testcase per finding) and "conform" (a testcase
// per probe) write it, so the element types live here once.
package junitxml

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Suites is the document root.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr,omitempty"`
	Time     string   `xml:"time,attr,omitempty"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one testsuite.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr,omitempty"`
	Time     string `xml:"time,attr,omitempty"`
	Cases    []Case `xml:"testcase"`
}

// Case is one testcase: passing unless it has a Failure or is Skipped.
type Case struct {
	ClassName string   `xml:"classname,attr"`
	Name      string   `xml:"name,attr"`
	Time      string   `xml:"time,attr,omitempty"`
	Failure   *Failure `xml:"failure,omitempty"`
	Skipped   *Skipped `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Failure marks a failed testcase.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Skipped marks a skipped testcase.
type Skipped struct {
	Message string `xml:"message,attr"`
}

// Seconds formats a duration as JUnit's time attribute.
func Seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// Write writes doc with the XML header, indented, ending in a newline.
func Write(w io.Writer, doc Suites) error {
	return WriteEach(w, doc, len(doc.Suites), func(i int) Suite { return doc.Suites[i] })
}

// WriteEach writes the document whose root is head (its Suites unused)
// and whose n suites suite makes one at a time, so that a large report is
// never held whole: the same bytes Write gives for them.
func WriteEach(w io.Writer, head Suites, n int, suite func(i int) Suite) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: head.Name},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(head.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(head.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(head.Errors)},
	}}
	// As the omitempty tags of Suites say.
	if head.Skipped != 0 {
		root.Attr = append(root.Attr, xml.Attr{Name: xml.Name{Local: "skipped"}, Value: strconv.Itoa(head.Skipped)})
	}
	if head.Time != "" {
		root.Attr = append(root.Attr, xml.Attr{Name: xml.Name{Local: "time"}, Value: head.Time})
	}
	if err := enc.EncodeToken(root); err != nil {
		return err
	}
	element := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
	for i := range n {
		if err := enc.EncodeElement(suite(i), element); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(root.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
