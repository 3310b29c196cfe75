package storetest_test

import (
	"testing"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) reference.Store { return reference.NewMemoryStore(reference.MemoryOptions{}) })
}
