package redisstore

import (
	"testing"

	"github.com/redis/rueidis"
)

// NewTestClient returns a client of the Redis at url (credentials, when
// needed, in the URL), without client-side caching like the store's own,
// so that the test reads what the store wrote. It is closed when the test
// ends. Exported for the tests of package redisstore_test.
func NewTestClient(t testing.TB, url string) rueidis.Client {
	t.Helper()
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	client, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}
