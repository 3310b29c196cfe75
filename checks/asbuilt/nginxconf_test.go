package asbuilt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNginxHostileIncludes: includes that loop, leave the checked tree
// (by a glob, a path or a symbolic link), name a huge file, a file nested
// too deep, or fan out into more directives than a configuration holds,
// are each an IDL001 problem at the include (or at the included file's
// place); the rest is read, and nothing outside the tree is opened.
func TestNginxHostileIncludes(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "in")
	write := func(name, content string) string {
		p := filepath.Join(top, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := write("in/nginx.conf", `http {
    include loop.conf;
    include ../out/*.conf;
    include /etc/nginx/*.conf;
    include link.conf;
    include huge.conf;
    include deep.conf;
    upstream orders { server a; server b; }
    server { location / { proxy_pass http://orders; } }
    include fan/*.conf;
}
`)
	write("in/loop.conf", "include nginx.conf;\n")
	write("out/secret.conf", "server { location / { proxy_pass http://secret; } }\n")
	if err := os.Symlink(filepath.Join(top, "out", "secret.conf"), filepath.Join(dir, "link.conf")); err != nil {
		t.Fatal(err)
	}
	huge, err := os.Create(filepath.Join(dir, "huge.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(50 << 20); err != nil { // sparse: refused unread
		t.Fatal(err)
	}
	huge.Close()
	write("in/deep.conf", strings.Repeat("a {\n", ngxMaxDepth+1)+strings.Repeat("}\n", ngxMaxDepth+1))
	// Nine files that each include all nine: without a bound, 9! paths.
	for i := range 9 {
		write(fmt.Sprintf("in/fan/%d.conf", i), strings.Repeat("proxy_set_header A b;\n", 40)+"include *.conf;\n")
	}
	s := Read([]string{root})
	var got []string
	for _, e := range s.Errors {
		got = append(got, "error "+e.Error())
	}
	for _, p := range s.Problems {
		got = append(got, fmt.Sprintf("%s: %s", p.At, p.Message))
	}
	real, _ := filepath.EvalSymlinks(top)
	text := strings.ReplaceAll(strings.Join(got, "\n"), real+string(filepath.Separator), "")
	text = strings.ReplaceAll(text, top+string(filepath.Separator), "")
	want := []string{
		"in/loop.conf:1:1: include nginx.conf: includes in/nginx.conf, which includes this file: an include loop; not read again",
		"in/nginx.conf:3:5: include ../out/*.conf: out is outside the paths checked, not read (like a symbolic link leaving the checked tree); --follow-symlinks follows it",
		"in/nginx.conf:4:5: include /etc/nginx/*.conf: /etc/nginx is outside the paths checked, not read (like a symbolic link leaving the checked tree); --follow-symlinks follows it",
		"in/nginx.conf:5:5: include link.conf: in/link.conf is outside the paths checked, not read (like a symbolic link leaving the checked tree); --follow-symlinks follows it",
		"in/nginx.conf:6:5: include huge.conf: file is larger than the 8 MiB limit for an infrastructure file",
		fmt.Sprintf("in/deep.conf:%d:3: blocks nest more than %d levels; idemlint does not read deeper", ngxMaxDepth+1, ngxMaxDepth),
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("no problem %q in:\n%s", w, text)
		}
	}
	if !strings.Contains(text, "in/fan/") || !strings.Contains(text, fmt.Sprintf("hold more than %d directives; the rest is not read", ngxMaxDirectives)) {
		t.Errorf("the fan of includes is not bounded:\n%s", text)
	}
	if len(s.Resources) != 1 || s.Resources[0].Name.Value != "orders" {
		t.Errorf("resources %v; want the orders upstream read despite the rest", s.Resources)
	}
}

// TestNginxIncludedAndWalked: a file an include reaches and a walk names
// is read once, where it is included, whichever comes first; two files
// that include each other are read once, from the first given.
func TestNginxIncludedAndWalked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	site := write("conf.d/site.conf", "server { location / { proxy_pass http://orders; } }\n")
	main := write("nginx.conf", "http { include conf.d/*.conf; }\n")
	a := write("a.conf", "include b.conf;\nserver { location / { proxy_pass http://a; } }\n")
	b := write("b.conf", "include a.conf;\nserver { location / { proxy_pass http://b; } }\n")
	s := Read([]string{a, b, site, main})
	var names []string
	for _, r := range s.Resources {
		rel, _ := filepath.Rel(dir, r.At.File)
		names = append(names, r.Name.Value+"@"+rel)
	}
	if got, want := strings.Join(names, " "), "b@b.conf a@a.conf orders@conf.d/site.conf"; got != want {
		t.Errorf("resources %s, want %s", got, want)
	}
}

// TestNginxServersAreAlternatives: two servers passing to one upstream
// are two resources of that name, both kept (not copies of one).
func TestNginxServersAreAlternatives(t *testing.T) {
	s := Parse("nginx.conf", []byte(`http {
    upstream orders { server a; server b; }
    server { server_name a.example.com; location / { proxy_pass http://orders; } }
    server { server_name b.example.com; location / { proxy_pass http://orders; proxy_next_upstream off; } }
}
`))
	b := s.Bind("orders", nil, AnyTraffic)
	if len(b.Resources) != 2 || len(b.Ambiguous) != 0 {
		t.Fatalf("bound %d resources, %d ambiguous; want both servers", len(b.Resources), len(b.Ambiguous))
	}
	var attempts []int
	for _, h := range b.Hops("PUT", "/orders") {
		attempts = append(attempts, h.Retry.Attempts)
	}
	if fmt.Sprint(attempts) != "[2 1]" {
		t.Errorf("attempts of the two hops %v, want [2 1]", attempts)
	}
}

// TestIsNginx tells NGINX files from other programs' *.conf files.
func TestIsNginx(t *testing.T) {
	for src, want := range map[string]bool{
		"# site\nserver {\n    listen 80;\n}\n":         true,
		"include snippets/ssl.conf;\nserver {}\n":       true,
		"user nginx;\nworker_processes auto;\n":         true,
		"include /etc/logrotate.d\nweekly\n":            false, // logrotate
		"bind 127.0.0.1\ninclude /etc/redis/extra.conf": false, // redis
		"[program:web]\ncommand=/bin/web\n":             false, // supervisord
		"Host bastion\n  User deploy\n":                 false,
		"":                                              false,
	} {
		if got := isNginx([]byte(src)); got != want {
			t.Errorf("isNginx(%q) = %v, want %v", src, got, want)
		}
	}
}
