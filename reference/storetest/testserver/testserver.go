// Package testserver starts private Redis and PostgreSQL servers for
// tests: real servers, not mocks, listening only on Unix sockets in a
// temporary directory, one of each per test binary, stopped and removed
// by Main.
//
// Without the server binaries (Debian's redis-server and postgresql
// packages) a test that asks for one is skipped with a message saying
// what to install, unless the environment sets RequireEnv=1 or CI=true
// (as .ci/run does): then it fails, so that CI cannot pass by skipping.
package testserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// RequireEnv names the environment variable that, set to 1, makes tests
// fail instead of skip when a server cannot start; CI=true does too.
const RequireEnv = "IDEMLINT_REQUIRE_STORES"

// startTimeout bounds how long a server may take to accept connections.
const startTimeout = 60 * time.Second

// Main runs the tests of a package and then stops the servers they
// started. Use it from TestMain: func TestMain(m *testing.M) { testserver.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	StopAll()
	os.Exit(code)
}

// server is one started server process and its directory.
type server struct {
	cmd    *exec.Cmd
	dir    string
	exited chan struct{} // closed once the process was waited for
}

var (
	mu      sync.Mutex
	started []*server
)

// StopAll stops the servers started so far, for a TestMain that cannot
// use Main.
func StopAll() {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range started {
		s.stop()
	}
	started = nil
}

func (s *server) stop() {
	if s.cmd.Process != nil {
		// Both servers shut down cleanly on SIGTERM; nothing they hold
		// is worth waiting for after a grace period.
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

// unavailable skips or fails t, as RequireEnv says.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(RequireEnv) == "1" || os.Getenv("CI") == "true" {
		t.Fatalf("%s (%s=1 or CI=true requires it)", msg, RequireEnv)
	}
	t.Skipf("%s; skipping (set %s=1 to fail instead)", msg, RequireEnv)
}

// once starts a server at most once per test binary, remembering a
// failure so that every test reports it.
type once struct {
	sync.Mutex
	done bool
	err  error
	skip string // a missing binary: what to install
}

func (o *once) get(t testing.TB, start func() (skip string, err error)) {
	t.Helper()
	switch skip, err := o.try(start); {
	case skip != "":
		unavailable(t, "%s", skip)
	case err != nil:
		unavailable(t, "%v", err)
	}
}

// try starts the server unless it was started, and returns why it is
// missing, if it is.
func (o *once) try(start func() (skip string, err error)) (string, error) {
	o.Lock()
	defer o.Unlock()
	if !o.done {
		o.skip, o.err = start()
		o.done = true
	}
	return o.skip, o.err
}

// Redis is a private redis-server.
type Redis struct {
	Socket string // its Unix socket
	nextDB atomic.Int32
}

var (
	redisOnce   once
	redisServer *Redis // set under redisOnce's lock
)

// StartRedis returns the test binary's Redis server, starting it on
// first use.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	redisOnce.get(t, func() (string, error) {
		sock, skip, err := startRedis()
		redisServer = &Redis{Socket: sock}
		return skip, err
	})
	return redisServer
}

// redisDatabases is how many databases a default redis-server has.
const redisDatabases = 16

// DatabaseURL returns the URL of a database of the server no other call
// returned, for a test that needs an empty keyspace it cannot prefix
// (such as the one of a subprocess).
func (r *Redis) DatabaseURL(t testing.TB) string {
	t.Helper()
	n := r.nextDB.Add(1) // database 0 stays for tests that prefix their keys
	if n >= redisDatabases {
		t.Fatalf("testserver: all %d Redis databases are taken", redisDatabases)
	}
	return "unix://" + r.Socket + "?db=" + strconv.Itoa(int(n))
}

// URL returns the URL of database 0.
func (r *Redis) URL() string { return "unix://" + r.Socket }

func startRedis() (string, string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", "redis-server is not installed (Debian: apt-get install redis-server)", nil
	}
	dir, err := os.MkdirTemp("", "idemlint-redis-")
	if err != nil {
		return "", "", err
	}
	sock := filepath.Join(dir, "redis.sock")
	_, err = launchRedis(bin, dir, sock, "--save", "", "--appendonly", "no")
	return sock, "", err
}

// launchRedis starts redis-server with its files in dir, listening on the
// socket sock only, with settings, and waits until it answers.
func launchRedis(bin, dir, sock string, settings ...string) (*server, error) {
	args := append([]string{"--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--dir", dir, "--daemonize", "no", "--loglevel", "warning"}, settings...)
	srv, err := launch(exec.Command(bin, args...), dir, nil)
	if err != nil {
		return nil, fmt.Errorf("redis-server: %w", err)
	}
	if err := srv.waitReady(func() error { return redisPing(sock) }); err != nil {
		return nil, fmt.Errorf("redis-server did not start: %w; its log:\n%s", err, tail(dir))
	}
	return srv, nil
}

// OwnRedis is a redis-server of one test alone, with settings of its
// own, which the test may crash and start again on the same files.
type OwnRedis struct {
	Socket   string // its Unix socket
	bin, dir string
	settings []string
	srv      *server
}

// redisServerDir returns the redis-server program and a fresh directory
// for one server's files; without the program, t is skipped (or fails
// under CI).
func redisServerDir(t testing.TB) (bin, dir string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		unavailable(t, "redis-server is not installed (Debian: apt-get install redis-server)")
	}
	if dir, err = os.MkdirTemp("", "idemlint-redis-"); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

// StartOwnRedis starts a redis-server for t alone, with settings (such
// as "--appendonly", "yes") after the tests' own, and stops it when t
// ends.
func StartOwnRedis(t testing.TB, settings ...string) *OwnRedis {
	t.Helper()
	bin, dir := redisServerDir(t)
	r := &OwnRedis{Socket: filepath.Join(dir, "redis.sock"), bin: bin, dir: dir, settings: settings}
	var err error
	if r.srv, err = launchRedis(bin, dir, r.Socket, settings...); err != nil {
		unavailable(t, "%v", err)
	}
	t.Cleanup(func() { r.srv.stop() })
	return r
}

// URL returns the URL of its database 0.
func (r *OwnRedis) URL() string { return "unix://" + r.Socket }

// Crash kills the server (SIGKILL: nothing is flushed on the way out) and
// starts it again on the same files and settings.
func (r *OwnRedis) Crash(t testing.TB) {
	t.Helper()
	_ = r.srv.cmd.Process.Kill()
	<-r.srv.exited
	var err error
	if r.srv, err = launchRedis(r.bin, r.dir, r.Socket, r.settings...); err != nil {
		t.Fatal(err)
	}
}

// redisPing sends PING in the inline protocol, which needs no client.
func redisPing(sock string) error {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 7)
	n, err := c.Read(buf)
	if string(buf[:n]) != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q (%v)", buf[:n], err)
	}
	return nil
}

// CPU returns the user and system CPU time the server has used, from
// INFO cpu, for benchmarks that count what a request costs Redis.
func (r *Redis) CPU() (time.Duration, error) {
	lines, err := r.info("cpu")
	if err != nil {
		return 0, err
	}
	var total time.Duration
	found := 0
	for _, line := range lines {
		name, value, _ := strings.Cut(line, ":")
		if name != "used_cpu_user" && name != "used_cpu_sys" {
			continue
		}
		seconds, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s: %w", name, err)
		}
		total += time.Duration(seconds * float64(time.Second))
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("INFO cpu: %d of used_cpu_user and used_cpu_sys", found)
	}
	return total, nil
}

// Commands returns how many commands the server has run, each command
// in a transaction or called by a script counted too (INFO
// commandstats), but for INFO, which CPU and Commands send: for
// benchmarks that count the commands of a request.
func (r *Redis) Commands() (int64, error) {
	lines, err := r.info("commandstats")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, line := range lines {
		// cmdstat_NAME:calls=N,usec=...
		name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok || name == "info" {
			continue
		}
		calls, _, _ := strings.Cut(stats, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO commandstats: %q: %w", line, err)
		}
		total += n
	}
	return total, nil
}

// info returns the lines of the server's INFO section, sent in the
// inline protocol, which needs no client.
func (r *Redis) info(section string) ([]string, error) {
	c, err := net.DialTimeout("unix", r.Socket, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("INFO " + section + "\r\n")); err != nil {
		return nil, err
	}
	// A bulk string: "$LEN" on its own line, then LEN bytes of
	// "field:value" lines.
	rd := bufio.NewReader(c)
	head, err := rd.ReadString('\n')
	n, nerr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || !strings.HasPrefix(head, "$") || nerr != nil || n < 0 {
		return nil, fmt.Errorf("INFO %s answered %q (%v)", section, head, err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(rd, body); err != nil {
		return nil, fmt.Errorf("INFO %s: %w", section, err)
	}
	return strings.Split(strings.TrimSpace(string(body)), "\r\n"), nil
}

// Postgres is a private PostgreSQL cluster.
type Postgres struct {
	SocketDir string
	nextDB    atomic.Int32
	pid       int // the postmaster's
}

// postgresUser is the cluster's superuser; authentication is trust, over
// a socket only its owner can reach.
const postgresUser = "idemlint"

var (
	postgresOnce   once
	postgresServer *Postgres // set under postgresOnce's lock
)

// StartPostgres returns the test binary's PostgreSQL cluster, starting it
// on first use.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	postgresOnce.get(t, startPostgresServer)
	return postgresServer
}

// StartPostgresIfInstalled is StartPostgres for a benchmark that can do
// without: where StartPostgres would skip or fail, it returns nil and
// why.
func StartPostgresIfInstalled() (*Postgres, string) {
	switch skip, err := postgresOnce.try(startPostgresServer); {
	case skip != "":
		return nil, skip
	case err != nil:
		return nil, err.Error()
	}
	return postgresServer, ""
}

func startPostgresServer() (string, error) {
	dir, pid, skip, err := startPostgres()
	postgresServer = &Postgres{SocketDir: dir, pid: pid}
	return skip, err
}

// CPU returns the user and system CPU time the cluster has used, from
// /proc (Linux only): the postmaster's, its children's that exited (a
// backend exits with its connection), and its live children's, the
// backends and the background workers.
func (p *Postgres) CPU() (time.Duration, error) {
	own, err := procTimes(p.pid)
	if err != nil {
		return 0, err
	}
	total := own.self + own.children
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		if t, err := procTimes(pid); err == nil && t.parent == p.pid {
			total += t.self
		}
	}
	return total, nil
}

// ProcessCPU returns the user and system CPU time the process pid has
// used, from /proc (Linux only), to the tick (10ms).
func ProcessCPU(pid int) (time.Duration, error) {
	t, err := procTimes(pid)
	return t.self, err
}

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times: 100
// on every architecture Go supports.
const clockTicks = 100

// times is what procTimes reads of a process.
type times struct {
	parent         int
	self, children time.Duration // user and system time; of the children it waited for
}

// procTimes reads /proc/PID/stat.
func procTimes(pid int) (times, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return times{}, err
	}
	// The command name, in parentheses, may hold spaces; after it come
	// the state, the parent, and utime, stime, cutime and cstime as the
	// 12th to 15th fields.
	_, rest, _ := strings.Cut(string(stat), ") ")
	fields := strings.Fields(rest)
	if len(fields) < 15 {
		return times{}, fmt.Errorf("/proc/%d/stat has %d fields after the name, want at least 15", pid, len(fields))
	}
	var n [5]int64
	for i, f := range []string{fields[1], fields[11], fields[12], fields[13], fields[14]} {
		if n[i], err = strconv.ParseInt(f, 10, 64); err != nil {
			return times{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	tick := func(ticks int64) time.Duration { return time.Duration(ticks) * time.Second / clockTicks }
	return times{parent: int(n[0]), self: tick(n[1] + n[2]), children: tick(n[3] + n[4])}, nil
}

// URL returns the URL of the database "postgres".
func (p *Postgres) URL() string { return p.urlOf("postgres") }

func (p *Postgres) urlOf(db string) string {
	return "postgres://" + postgresUser + "@/" + db + "?host=" + p.SocketDir + "&sslmode=disable"
}

// DatabaseURL creates an empty database that no other call returned and
// returns its URL.
func (p *Postgres) DatabaseURL(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test%d", p.nextDB.Add(1))
	if out, err := exec.Command(postgresBin("psql"), "-X", "-q", "-h", p.SocketDir, "-U", postgresUser, "-d", "postgres", "-c", "CREATE DATABASE "+name).CombinedOutput(); err != nil {
		t.Fatalf("testserver: creating database %s: %v\n%s", name, err, out)
	}
	return p.urlOf(name)
}

// postgresBinDir is where Debian keeps the server's programs, which are
// not on the PATH; the newest version wins. Elsewhere they are expected on
// the PATH.
func postgresBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(a) - versionOf(b) })
	if len(dirs) > 0 {
		return dirs[len(dirs)-1]
	}
	return ""
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func postgresBin(name string) string {
	if dir := postgresBinDir(); dir != "" {
		return filepath.Join(dir, name)
	}
	return name
}

func startPostgres() (dir string, pid int, skip string, err error) {
	initdb := postgresBin("initdb")
	if _, err := exec.LookPath(initdb); err != nil {
		return "", 0, "PostgreSQL is not installed (Debian: apt-get install postgresql)", nil
	}
	// PostgreSQL refuses to run as root: run it as an unprivileged user
	// that owns the directory.
	cred, err := ServerUser()
	if err != nil {
		return "", 0, "", err
	}
	dir, err = os.MkdirTemp("", "idemlint-postgres-")
	if err != nil {
		return "", 0, "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return "", 0, "", err
		}
	}
	data := filepath.Join(dir, "data")
	init := exec.Command(initdb, "-D", data, "-U", postgresUser, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := init.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", 0, "", fmt.Errorf("initdb: %w\n%s", err, out)
	}
	cmd := exec.Command(postgresBin("postgres"), "-D", data, "-k", dir, "-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	srv, err := launch(cmd, dir, cred)
	if err != nil {
		return "", 0, "", fmt.Errorf("postgres: %w", err)
	}
	ready := func() error {
		out, err := exec.Command(postgresBin("pg_isready"), "-q", "-h", dir, "-U", postgresUser).CombinedOutput()
		if err != nil {
			return fmt.Errorf("pg_isready: %v %s", err, out)
		}
		return nil
	}
	if err := srv.waitReady(ready); err != nil {
		return "", 0, "", fmt.Errorf("postgres did not start: %w; its log:\n%s", err, tail(dir))
	}
	return dir, srv.cmd.Process.Pid, "", nil
}

// ServerUser returns the credentials to run PostgreSQL with: nil when we
// are not root, else those of the user "postgres" (the Debian package
// creates it) or "nobody".
func ServerUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, and neither user postgres nor nobody exists to run PostgreSQL as")
}

// launch starts cmd with its output in dir/server.log, to be killed with
// the test binary should Main never run, and registers it for stopAll.
func launch(cmd *exec.Cmd, dir string, cred *syscall.Credential) (*server, error) {
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer log.Close()
	if cred != nil {
		_ = log.Chown(int(cred.Uid), int(cred.Gid))
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	srv := &server{cmd: cmd, dir: dir, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(srv.exited) }()
	mu.Lock()
	started = append(started, srv)
	mu.Unlock()
	return srv, nil
}

// waitReady polls ready until it succeeds, the process exits or
// startTimeout passes.
func (s *server) waitReady(ready func() error) error {
	deadline := time.After(startTimeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited: %w", err)
		case <-deadline:
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tail returns the end of a server's log, for an error message.
func tail(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
	s := string(b)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return strings.TrimSpace(s)
}
