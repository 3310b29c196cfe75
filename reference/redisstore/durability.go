package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"
)

// durabilitySettings are the server settings Durability reads: those
// that decide whether a record can vanish before its lease or ttl ends.
var durabilitySettings = []string{"appendonly", "appendfsync", "save", "maxmemory-policy"}

// Durability reads the server's persistence and eviction settings
// (CONFIG GET appendonly, appendfsync, save and maxmemory-policy) and
// returns a warning for each way they let a record vanish early: a
// restart without an append-only file, a crash before it was written (the
// last second or two under appendfsync everysec), or eviction under
// memory pressure. A key whose record vanished executes again on its next
// retry, so at-most-once holds through a crash of Redis only with
// appendonly yes, appendfsync always and maxmemory-policy noeviction.
// read is false,
// with no warnings of these, when the server refuses CONFIG (managed services
// often do): the settings are then the operator's to check. err is for a
// server that did not answer. It warns too of masters with replicas the
// store does not wait for (Options.Replicas): a failover to a replica
// that had not received a record loses it.
func (s *Store) Durability(ctx context.Context) (warnings []string, read bool, err error) {
	masters, err := s.masters(ctx)
	if err != nil {
		return nil, false, err
	}
	replication := s.replicationWarnings(masters)
	warnings, read, err = s.persistence(ctx)
	return append(warnings, replication...), read, err
}

// replicationWarnings judges the masters' replicas against the store's
// wait for them.
func (s *Store) replicationWarnings(masters []master) []string {
	var warnings []string
	for _, m := range masters {
		if m.replicas > 0 && s.replicas == 0 {
			warnings = append(warnings, fmt.Sprintf("Redis master %s has %d replicas, and the store waits for none to acknowledge a record (wait_replicas -1): a failover to a replica that had not received a record loses it, and the retry of its key executes it again; leave wait_replicas unset or set it to 1", m.addr, m.replicas))
		}
	}
	return warnings
}

// persistence reads and judges the persistence and eviction settings.
func (s *Store) persistence(ctx context.Context) (warnings []string, read bool, err error) {
	cmds := make(rueidis.Commands, len(durabilitySettings))
	for i, name := range durabilitySettings {
		// One setting a call: CONFIG GET takes several only from Redis 7.
		cmds[i] = s.client.B().ConfigGet().Parameter(name).Build()
	}
	settings := make(map[string]string, len(durabilitySettings))
	for i, r := range s.client.DoMulti(ctx, cmds...) {
		name := durabilitySettings[i]
		m, err := r.AsStrMap()
		if _, refused := rueidis.IsRedisErr(err); refused {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("redis store: CONFIG GET %s: %w", name, err)
		}
		v, ok := m[name]
		if !ok { // hidden, by a proxy or a fork
			return nil, false, nil
		}
		settings[name] = v
	}
	return durabilityWarnings(settings), true, nil
}

// durabilityWarnings judges the settings Durability read.
func durabilityWarnings(settings map[string]string) []string {
	var warnings []string
	switch save, fsync := settings["save"], settings["appendfsync"]; {
	case settings["appendonly"] == "yes" && fsync == "always":
	case settings["appendonly"] == "yes":
		// Redis may hold writes back while an fsync is under way, up to
		// two seconds, and answers the clients meanwhile.
		warnings = append(warnings, fmt.Sprintf(`Redis writes its append-only file lazily (appendfsync %s): a crash of Redis or its machine loses the records of the last seconds, and the retry of a lost key executes it again; set appendfsync always`, fsync))
	case save == "":
		warnings = append(warnings, `Redis persists nothing (appendonly no, save ""): a restart loses every record, and the retry of a lost key executes it again; set appendonly yes`)
	default:
		warnings = append(warnings, fmt.Sprintf(`Redis persists only snapshots (appendonly no, save %q): a restart loses the records written since the last one, and the retry of a lost key executes it again; set appendonly yes`, save))
	}
	if policy := settings["maxmemory-policy"]; policy != "noeviction" {
		warnings = append(warnings, fmt.Sprintf("Redis may evict records when it reaches maxmemory (maxmemory-policy %s; records carry a TTL, so volatile-* policies evict them too), and the retry of an evicted key executes it again; set maxmemory-policy noeviction", policy))
	}
	return warnings
}
