package pgstore

import (
	"context"
	"fmt"
)

// Durability reads the server's fsync and synchronous_commit and returns
// a warning for each way they let a committed record vanish in a crash,
// so that its key would execute again on its next retry; and, on a
// primary with streaming standbys (rows in pg_stat_replication), a
// warning when commits do not wait for one of them
// (synchronous_standby_names empty, or synchronous_commit below
// remote_write): promoting a standby then loses the records it had not
// received. read is always true: any role may read these settings. err
// is for a server that did not answer.
func (s *Store) Durability(ctx context.Context) (warnings []string, read bool, err error) {
	var fsync, syncCommit, syncStandbys string
	var standbys int
	if err := s.pool.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('synchronous_commit'), current_setting('synchronous_standby_names'), (SELECT count(*) FROM pg_stat_replication)`).Scan(&fsync, &syncCommit, &syncStandbys, &standbys); err != nil {
		return nil, false, fmt.Errorf("postgres store: reading fsync, synchronous_commit and the standbys: %w", err)
	}
	if fsync == "off" {
		warnings = append(warnings, "PostgreSQL runs with fsync off: a crash of its machine can lose or corrupt records, and the retry of a lost key executes it again; set fsync on")
	}
	if syncCommit == "off" {
		warnings = append(warnings, "PostgreSQL commits asynchronously (synchronous_commit off): a crash loses the records of the last moments, and the retry of a lost key executes it again; set synchronous_commit on")
	}
	if w := standbyWarning(standbys, syncStandbys, syncCommit); w != "" {
		warnings = append(warnings, w)
	}
	return warnings, true, nil
}

// standbyWarning judges a primary's standbys: "" when it has none, or
// when commits wait for one to write them at least.
func standbyWarning(standbys int, syncStandbys, syncCommit string) string {
	switch {
	case standbys == 0:
		return ""
	case syncStandbys == "":
		return fmt.Sprintf("PostgreSQL streams to %d standbys asynchronously (synchronous_standby_names is empty): promoting one loses the records it had not received, and the retry of a lost key executes it again; set synchronous_standby_names", standbys)
	case syncCommit == "off" || syncCommit == "local":
		return fmt.Sprintf("PostgreSQL commits without waiting for its standbys (synchronous_commit %s): promoting one loses the records it had not received, and the retry of a lost key executes it again; set synchronous_commit to remote_write or higher", syncCommit)
	}
	return ""
}
