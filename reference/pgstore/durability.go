package pgstore

import (
	"context"
	"fmt"
)

// Durability reads the server's fsync and synchronous_commit and returns
// a warning for each way they let a committed record vanish in a crash,
// so that its key would execute again on its next retry. read is always
// true: any role may read these settings. err is for a server that did
// not answer.
func (s *Store) Durability(ctx context.Context) (warnings []string, read bool, err error) {
	var fsync, syncCommit string
	if err := s.pool.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('synchronous_commit')`).Scan(&fsync, &syncCommit); err != nil {
		return nil, false, fmt.Errorf("postgres store: reading fsync and synchronous_commit: %w", err)
	}
	if fsync == "off" {
		warnings = append(warnings, "PostgreSQL runs with fsync off: a crash of its machine can lose or corrupt records, and the retry of a lost key executes it again; set fsync on")
	}
	if syncCommit == "off" {
		warnings = append(warnings, "PostgreSQL commits asynchronously (synchronous_commit off): a crash loses the records of the last moments, and the retry of a lost key executes it again; set synchronous_commit on")
	}
	return warnings, true, nil
}
