package testserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// PostgresPair is a private PostgreSQL primary of one test alone, with a
// streaming standby made by pg_basebackup, each listening on a Unix
// socket in a directory of its own.
type PostgresPair struct {
	PrimaryDir, StandbyDir string // socket directories
	standbyData            string
	primary                *server
	cred                   *syscall.Credential
}

// StartPostgresPair starts a primary with settings (-c NAME=VALUE
// pairs, after the tests' own: fsync off) and its standby, and waits
// until the primary streams to it. Both are stopped when t ends.
func StartPostgresPair(t testing.TB, settings ...string) *PostgresPair {
	t.Helper()
	if _, err := exec.LookPath(postgresBin("initdb")); err != nil {
		unavailable(t, "PostgreSQL is not installed (Debian: apt-get install postgresql)")
	}
	cred, err := ServerUser()
	if err != nil {
		t.Fatal(err)
	}
	mkdir := func() string {
		dir, err := os.MkdirTemp("", "idemlint-postgres-")
		if err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	p := &PostgresPair{PrimaryDir: mkdir(), StandbyDir: mkdir(), cred: cred}
	p.standbyData = filepath.Join(p.StandbyDir, "data")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(postgresBin(name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	primaryData := filepath.Join(p.PrimaryDir, "data")
	run("initdb", "-D", primaryData, "-U", postgresUser, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	start := func(data, dir string, settings ...string) *server {
		t.Helper()
		args := []string{"-D", data, "-k", dir, "-c", "listen_addresses=", "-c", "fsync=off", "-c", "max_connections=100"}
		for _, s := range settings {
			args = append(args, "-c", s)
		}
		srv, err := launch(exec.Command(postgresBin("postgres"), args...), dir, cred)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.stop)
		ready := func() error {
			out, err := exec.Command(postgresBin("pg_isready"), "-q", "-h", dir, "-U", postgresUser).CombinedOutput()
			if err != nil {
				return fmt.Errorf("pg_isready: %v %s", err, out)
			}
			return nil
		}
		if err := srv.waitReady(ready); err != nil {
			t.Fatalf("postgres did not start: %v; its log:\n%s", err, tail(dir))
		}
		return srv
	}
	p.primary = start(primaryData, p.PrimaryDir, settings...)
	run("pg_basebackup", "-h", p.PrimaryDir, "-U", postgresUser, "-D", p.standbyData, "-R", "-X", "stream", "--no-sync")
	start(p.standbyData, p.StandbyDir)
	p.waitStreaming(t)
	return p
}

// waitStreaming waits until the primary streams to its standby.
func (p *PostgresPair) waitStreaming(t testing.TB) {
	t.Helper()
	srv := p.primary
	if err := srv.waitReady(func() error {
		out, err := exec.Command(postgresBin("psql"), "-X", "-At", "-h", p.PrimaryDir, "-U", postgresUser, "-d", "postgres",
			"-c", "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").CombinedOutput()
		if err != nil || string(out) != "1\n" {
			return fmt.Errorf("streaming standbys: %q (%v)", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// URL returns a URL naming both, which connects to whichever accepts
// writes (target_session_attrs=read-write).
func (p *PostgresPair) URL() string {
	return "postgres://" + postgresUser + "@/postgres?host=" + p.PrimaryDir + "," + p.StandbyDir + "&target_session_attrs=read-write&sslmode=disable"
}

// PrimaryURL returns the URL of the primary alone.
func (p *PostgresPair) PrimaryURL() string {
	return "postgres://" + postgresUser + "@/postgres?host=" + p.PrimaryDir + "&sslmode=disable"
}

// KillPrimary kills the primary's postmaster (SIGKILL; its backends
// exit on noticing).
func (p *PostgresPair) KillPrimary() {
	_ = syscall.Kill(-p.primary.cmd.Process.Pid, syscall.SIGKILL) // the process group: backends too
	<-p.primary.exited
}

// Promote promotes the standby (pg_ctl promote) and waits until it
// accepts writes.
func (p *PostgresPair) Promote(t testing.TB) {
	t.Helper()
	cmd := exec.Command(postgresBin("pg_ctl"), "promote", "-w", "-D", p.standbyData)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl promote: %v\n%s", err, out)
	}
}
