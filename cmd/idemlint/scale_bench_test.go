package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/fixtures/corpus"
)

// BenchmarkCLIScale runs the built CLI, "check --no-config -f FORMAT", on
// a corpus with a finding in every file at about 11,000 and 55,000 files
// (2,500 and 12,500 flows; about 11,400 and 57,800 findings), in every format,
// and reports its peak RSS and its wall and CPU time per file, so that
// the 50k figures can be read against the 10k ones: a cost that grows
// with the set or the findings, not with what a check must hold, shows
// there. It writes about 140 MB of corpus (320 MB on disk), so it runs
// only when IDEMLINT_BENCH_50K names a directory to keep the corpora in
// (written once, reused after):
//
//	IDEMLINT_BENCH_50K=DIR go test -run '^$' -bench CLIScale -benchtime 3x ./cmd/idemlint
func BenchmarkCLIScale(b *testing.B) {
	dir := os.Getenv("IDEMLINT_BENCH_50K")
	if dir == "" {
		b.Skip("set IDEMLINT_BENCH_50K to a directory for the 10k and 50k corpora")
	}
	bin := filepath.Join(b.TempDir(), "idemlint")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, size := range []struct {
		name  string
		flows int
	}{{"10k", 2500}, {"50k", 12500}} {
		set := filepath.Join(dir, size.name)
		files := scaleCorpus(b, set, size.flows)
		for _, format := range report.Names() {
			b.Run(size.name+"/"+format, func(b *testing.B) {
				var wall, cpu time.Duration
				var peak int64
				for b.Loop() {
					cmd := exec.Command(bin, "check", "--no-config", "-f", format, set)
					start := time.Now()
					err := cmd.Run() // stdout is discarded
					wall += time.Since(start)
					if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
						b.Fatalf("check -f %s: %v (want exit 1: every file has a finding)", format, err)
					}
					cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
					if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
						peak = max(peak, maxRSSBytes(ru))
					}
				}
				perFile := float64(b.N * files)
				b.ReportMetric(float64(wall.Microseconds())/perFile, "wall-us/file")
				b.ReportMetric(float64(cpu.Microseconds())/perFile, "cpu-us/file")
				if peak > 0 {
					b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
				}
			})
		}
	}
}

// scaleCorpus returns the number of files of the finding-per-file corpus
// of flows flows in dir, writing it unless a previous run did.
func scaleCorpus(b *testing.B, dir string, flows int) int {
	b.Helper()
	done := filepath.Join(dir, ".complete")
	o := corpus.Options{Flows: flows, Seed: 1, DefectRate: 0.1, FindingPerFile: true}
	if _, err := os.Stat(done); err != nil {
		// A corpus left half-written by an interrupted run is replaced.
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if _, err := corpus.Generate(dir, o); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".json" {
			n++
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// maxRSSBytes is a child's peak resident set: Linux counts it in
// kilobytes, macOS in bytes.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
