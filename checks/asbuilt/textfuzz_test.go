package asbuilt

import (
	"strings"
	"testing"
)

// addTextConfigs seeds f with the files of the readers' test archives
// whose names end in ext.
func addTextConfigs(f *testing.F, ext string) {
	addArchiveFiles(f, func(name string) bool { return strings.HasSuffix(name, ext) })
}

// fuzzText holds a text reader to a model or an error, never a panic or
// unbounded work, and every place it reports to a place in the file.
func fuzzText(t *testing.T, file string, data []byte) {
	s := Parse(file, data)
	check := func(what string, p Pos) {
		if p.File != file || p.Line < 1 || p.Column < 1 {
			t.Fatalf("%s at %+v", what, p)
		}
	}
	for _, e := range s.Errors {
		check("error "+e.Err.Error(), e.At)
	}
	for _, p := range s.Problems {
		check("problem "+p.Message, p.At)
	}
	for _, res := range s.Resources {
		check("resource", res.At)
		for _, rt := range res.Routes {
			check("route", rt.At)
			for _, h := range rt.Removed {
				check("removed header", h.At)
			}
		}
		for _, m := range []string{"POST", "PUT"} {
			if rt, _, ok := res.Select(m, "/orders/{id}", AnyTraffic); ok {
				rt.RetryFor(m)
			}
		}
	}
}

func FuzzNginxConf(f *testing.F) {
	addTextConfigs(f, ".conf")
	f.Add([]byte("http { server { location ~ ( { proxy_pass http://a; } } }"))
	f.Add([]byte("server { location = /x { proxy_pass http://${u}x:1/; proxy_read_timeout 9999999999999w; } }"))
	f.Add([]byte("include /etc/*; include ../*;"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzText(t, "f.conf", data) })
}

func FuzzHAProxy(f *testing.F) {
	addTextConfigs(f, ".cfg")
	f.Add([]byte("backend b\n retries x\n retry-on 503 \"a\\\"b\n timeout server 99999999999d\n"))
	f.Add([]byte("listen l\n http-request disable-l7-retry if { method }\n server s [::1]:80\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzText(t, "f.cfg", data) })
}
