package reference

import "sync"

// buffers recycles the scratch memory of a request: its body, the text
// its fingerprints hash, the response it captures. With them the hot
// paths allocate only what outlives the request.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

// putBuffer recycles *b, which the caller no longer uses.
func putBuffer(b *[]byte) {
	if cap(*b) <= 1<<20 { // let the GC have an outsized buffer
		*b = (*b)[:0]
		buffers.Put(b)
	}
}
