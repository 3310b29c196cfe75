package testserver

import (
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestRedisAnswers(t *testing.T) {
	r := StartRedis(t)
	if err := redisPing(r.Socket); err != nil {
		t.Fatal(err)
	}
	if a, b := r.DatabaseURL(t), r.DatabaseURL(t); a == b || !strings.HasPrefix(a, "unix://"+r.Socket+"?db=") {
		t.Errorf("database URLs %q and %q", a, b)
	}
}

func TestPostgresAnswers(t *testing.T) {
	p := StartPostgres(t)
	url := p.DatabaseURL(t)
	out, err := exec.Command(postgresBin("psql"), "-X", "-At", url, "-c", "SELECT current_database(), current_user").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "test") || !strings.Contains(string(out), "|"+postgresUser) {
		t.Fatalf("psql %s: %v\n%s", url, err, out)
	}
}

// TestRedisCPU: the CPU time grows as the server works.
func TestRedisCPU(t *testing.T) {
	r := StartRedis(t)
	before, err := r.CPU()
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		if err := redisPing(r.Socket); err != nil {
			t.Fatal(err)
		}
	}
	after, err := r.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %v after 500 connections and PINGs, %v before; want it to grow", after, before)
	}
}
