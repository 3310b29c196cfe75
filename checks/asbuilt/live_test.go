package asbuilt

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The defaults table proven on the real proxies (the rows marked Live):
// each case starts the proxy on 127.0.0.1 with a configuration, in front
// of counting upstreams that receive a request and then stall past the
// proxy's timeout (or reset the connection after reading it), sends each
// method once, and holds the receipts the upstreams count to what
// idemlint's model of the same configuration text predicts: the attempts
// in all when the retry resends after receipt, else one; and whether a
// header named with "_" arrives. Changing a Live row (nginx.non_idempotent
// to "true", haproxy.retry-on to "response-timeout") makes it fail.

// liveMethods are sent once each per case.
var liveMethods = []string{"POST", "PUT", "DELETE", "PATCH"}

// liveProgram returns the proxy's program; missing, the test is skipped,
// or fails under CI=true (.ci/tools installs it).
func liveProgram(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/sbin/" + name; fileExists(p) {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s is not installed (.ci/tools installs it)", name)
	}
	t.Skipf("%s is not installed", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// counter is an upstream on 127.0.0.1 that counts the requests it
// receives by method and the headers they carry, then stalls (holds the
// connection until the test ends) or resets it.
type counter struct {
	ln      net.Listener
	reset   bool
	mu      sync.Mutex
	methods map[string]int
	headers []http.Header
	conns   []net.Conn
}

func newCounter(t *testing.T, reset bool) *counter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{ln: ln, reset: reset, methods: map[string]int{}}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go c.serve(conn)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, conn := range c.conns {
			conn.Close()
		}
	})
	return c
}

func (c *counter) serve(conn net.Conn) {
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil {
		conn.Close()
		return
	}
	c.mu.Lock()
	c.methods[req.Method]++
	c.headers = append(c.headers, req.Header)
	c.conns = append(c.conns, conn)
	c.mu.Unlock()
	if c.reset {
		if tcp, ok := conn.(*net.TCPConn); ok {
			tcp.SetLinger(0) // close sends a reset
		}
		conn.Close()
	}
}

func (c *counter) addr() string { return c.ln.Addr().String() }

func (c *counter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.methods[method]
}

// sawHeader reports whether a request with method carried header name
// (written as the client wrote it: nginx passes header names as
// received).
func (c *counter) sawHeader(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.headers {
		for k := range h {
			if strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}

// freePort returns a port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runProxy starts the proxy that start writes the configuration of and
// returns for a listen address, runs it until the test ends, and returns
// the address once it accepts. A port taken between freePort and the
// proxy's bind is tried again with another.
func runProxy(t *testing.T, start func(addr string) (cmd *exec.Cmd, logFile string)) string {
	t.Helper()
	for try := 0; ; try++ {
		addr := freePort(t)
		cmd, logFile := start(addr)
		err := startProxy(t, cmd, addr, logFile)
		if err == nil {
			return addr
		}
		if try == 4 || !strings.Contains(err.Error(), "in use") {
			t.Fatal(err)
		}
	}
}

// startProxy runs cmd until the test ends and waits until addr accepts;
// an error, with the proxy's output, when it exits first.
func startProxy(t *testing.T, cmd *exec.Cmd, addr, logFile string) error {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	show := func() string {
		o, _ := os.ReadFile(out.Name())
		l, _ := os.ReadFile(logFile)
		return string(o) + string(l)
	}
	// Not a timed assertion: a proxy that never listens fails after a
	// minute, however loaded the machine.
	for deadline := time.Now().Add(time.Minute); ; {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			return fmt.Errorf("%s exited: %v\n%s", cmd.Path, err, show())
		default:
		}
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s\n%s", cmd.Path, addr, show())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// send sends one request with method through the proxy, with the key
// under both spellings, and waits for its answer (a 502 or 504 once the
// proxy gave up): every attempt has then been made.
func send(t *testing.T, addr, method string) {
	req, err := http.NewRequest(method, "http://"+addr+"/api/orders", strings.NewReader(`{"qty":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header["x_idempotency_key"] = []string{"k-1"}
	req.Header.Set("X-Idempotency-Key", "k-1")
	client := &http.Client{Timeout: 2 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s through the proxy: %v", method, err)
		return
	}
	resp.Body.Close()
}

// predicted is what the model says the upstreams receive for one request
// of method carried by route rt.
func predicted(rt *Route, method string) int {
	r := rt.RetryFor(method)
	if r.ResendsAfterReceipt() {
		return r.Attempts
	}
	return 1
}

// nginxLiveCase is a configuration of the location that passes to the
// upstream "app" of servers counting upstreams.
type nginxLiveCase struct {
	name     string
	location string // directives of the location
	server   string // directives of the server
	servers  int
	// ingress, when set, is an Ingress (and controller ConfigMap) whose
	// model must predict what the equivalent nginx directives do.
	ingress string
}

var nginxLiveCases = []nginxLiveCase{
	{name: "defaults", servers: 2},
	{name: "non_idempotent", location: "proxy_next_upstream error timeout non_idempotent;", servers: 2},
	{name: "tries", location: "proxy_next_upstream_tries 2;", servers: 3},
	{name: "one server", servers: 1},
	{name: "underscores on", server: "underscores_in_headers on;", servers: 2},
	// nginx picks the location nested in the "^~" prefix, and does not
	// try the server's expression (which resends POST) after it.
	{name: "nested under ^~", server: `location ^~ /api/ {
            proxy_pass http://app;
            location /api/orders { proxy_pass http://app; }
        }
        location ~ orders$ {
            proxy_pass http://app;
            proxy_next_upstream error timeout non_idempotent;
        }`, servers: 2},
	// ingress-nginx's defaults are nginx directives of its template:
	// proxy_next_upstream error timeout, tries 3, no non_idempotent, no
	// underscores; its upstream is the Service's endpoints (three here).
	{name: "ingress-nginx defaults", location: "proxy_next_upstream error timeout;\n proxy_next_upstream_tries 3;", servers: 3, ingress: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: shop}
spec:
  ingressClassName: nginx
  rules:
  - http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
`},
	{name: "ingress-nginx retry-non-idempotent", location: "proxy_next_upstream error timeout non_idempotent;\n proxy_next_upstream_tries 3;", servers: 3, ingress: `apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-controller, namespace: ingress-nginx}
data: {retry-non-idempotent: "true"}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: shop}
spec:
  ingressClassName: nginx
  rules:
  - http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
`},
}

func TestNginxDefaultsLive(t *testing.T) {
	program := liveProgram(t, "nginx")
	for _, tc := range nginxLiveCases {
		eachUpstream(t, tc.name, func(t *testing.T, reset bool) { runNginxCase(t, program, tc, reset) })
	}
}

// eachUpstream runs the case name in parallel subtests, once in front of
// upstreams that stall and once in front of upstreams that reset.
func eachUpstream(t *testing.T, name string, run func(t *testing.T, reset bool)) {
	for _, reset := range []bool{false, true} {
		sub := name + "/stall"
		if reset {
			sub = name + "/reset"
		}
		t.Run(sub, func(t *testing.T) {
			t.Parallel()
			run(t, reset)
		})
	}
}

func runNginxCase(t *testing.T, program string, tc nginxLiveCase, reset bool) {
	dir := t.TempDir()
	var upstreams []*counter
	var servers strings.Builder
	for range tc.servers {
		c := newCounter(t, reset)
		upstreams = append(upstreams, c)
		fmt.Fprintf(&servers, "        server %s max_fails=0;\n", c.addr())
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n"
	}
	path, errorLog := filepath.Join(dir, "nginx.conf"), filepath.Join(dir, "error.log")
	addr := runProxy(t, func(addr string) (*exec.Cmd, string) {
		conf := fmt.Sprintf(`%sdaemon off;
master_process off;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    proxy_connect_timeout 1s;
    proxy_read_timeout 1s;
    upstream app {
%[3]s    }
    server {
        listen %[4]s;
        %[5]s
        location /api {
            proxy_pass http://app;
            %[6]s
        }
    }
}
`, user, dir, servers.String(), addr, tc.server, tc.location)
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return exec.Command(program, "-p", dir, "-c", path, "-e", errorLog), errorLog
	})
	// The model of the same text, or of the Ingress it stands for.
	model := Read([]string{path})
	if tc.ingress != "" {
		model = Parse("ingress.yaml", []byte(tc.ingress))
	}
	proveLive(t, model, addr, upstreams)
}

// proveLive sends each method once through the proxy at addr and holds
// the receipts of its upstreams to what model, the proxy's configuration
// read as idemlint reads it, predicts of the route that carries
// /api/orders.
func proveLive(t *testing.T, model *Set, addr string, upstreams []*counter) {
	t.Helper()
	if len(model.Errors) > 0 || len(model.Problems) > 0 || len(model.Resources) != 1 {
		t.Fatalf("the model: errors %v, problems %v, %d resources", model.Errors, model.Problems, len(model.Resources))
	}
	rt, _, ok := model.Resources[0].Select("POST", "/api/orders", AnyTraffic)
	if !ok {
		t.Fatal("the model carries no /api/orders")
	}
	var wg sync.WaitGroup
	for _, m := range liveMethods {
		wg.Go(func() { send(t, addr, m) })
	}
	wg.Wait()
	for _, m := range liveMethods {
		got := 0
		for _, c := range upstreams {
			got += c.count(m)
		}
		if want := predicted(rt, m); got != want {
			r := rt.RetryFor(m)
			t.Errorf("%s: the upstreams received it %d times; the model predicts %d (attempts %d, resends after receipt %v)", m, got, want, r.Attempts, r.ResendsAfterReceipt())
		}
	}
	_, drops := rt.Drops("x_idempotency_key")
	saw := false
	for _, c := range upstreams {
		saw = saw || c.sawHeader("x_idempotency_key")
	}
	if saw == drops {
		t.Errorf("x_idempotency_key: the upstreams saw it %v; the model says it is dropped %v", saw, drops)
	}
}

// haproxyLiveCase is a backend in front of one counting server (HAProxy
// retries on the same server without redispatch).
type haproxyLiveCase struct {
	name string
	// defaults are sections after the first, anonymous defaults
	// section; from is the one the backend names, when it names one.
	defaults, from string
	backend        string // the backend's directives
}

var haproxyLiveCases = []haproxyLiveCase{
	{name: "defaults"},
	{name: "retry-on all-retryable-errors", backend: "retry-on all-retryable-errors"},
	{name: "disable-l7-retry if METH_POST", backend: "retry-on all-retryable-errors\n    http-request disable-l7-retry if METH_POST"},
	// The backend takes the named defaults section it names, not the
	// last one before it.
	{name: "backend from named defaults", from: "l7", defaults: `defaults l7
    mode http
    timeout connect 1s
    timeout client 2m
    timeout server 1s
    retry-on all-retryable-errors

defaults
    mode http
    timeout connect 1s
    timeout client 2m
    timeout server 1s
    retry-on conn-failure
`},
}

func TestHAProxyDefaultsLive(t *testing.T) {
	program := liveProgram(t, "haproxy")
	for _, tc := range haproxyLiveCases {
		eachUpstream(t, tc.name, func(t *testing.T, reset bool) { runHAProxyCase(t, program, tc, reset) })
	}
}

func runHAProxyCase(t *testing.T, program string, tc haproxyLiveCase, reset bool) {
	dir := t.TempDir()
	upstream := newCounter(t, reset)
	path := filepath.Join(dir, "haproxy.cfg")
	from := ""
	if tc.from != "" {
		from = " from " + tc.from
	}
	addr := runProxy(t, func(addr string) (*exec.Cmd, string) {
		cfg := fmt.Sprintf(`global
    maxconn 64
    pidfile %s/haproxy.pid

defaults
    mode http
    timeout connect 1s
    timeout client 2m
    timeout server 1s

%s
frontend shop
    bind %s
    default_backend app

backend app%s
    %s
    server s1 %s
`, dir, tc.defaults, addr, from, tc.backend, upstream.addr())
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return exec.Command(program, "-db", "-f", path), filepath.Join(dir, "no log")
	})
	proveLive(t, Read([]string{path}), addr, []*counter{upstream})
}
