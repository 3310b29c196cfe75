package testserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisNode is a redis-server of one test alone listening on a TCP port
// of 127.0.0.1 (replication and Redis Cluster need one), which the test
// may kill.
type RedisNode struct {
	Addr string // host:port
	srv  *server
}

// freePorts returns n distinct TCP ports of 127.0.0.1 that were free a
// moment ago: held open together, so that none is handed out twice.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// StartRedisNode starts a redis-server for t alone on a free port of
// 127.0.0.1, without persistence unless settings (after the tests' own)
// say otherwise, and stops it when t ends. A replica's first
// synchronisation starts at once (repl-diskless-sync-delay 0).
func StartRedisNode(t testing.TB, settings ...string) *RedisNode {
	t.Helper()
	return startRedisNode(t, freePorts(t, 1)[0], settings...)
}

// startRedisNode is StartRedisNode on port.
func startRedisNode(t testing.TB, port int, settings ...string) *RedisNode {
	t.Helper()
	bin, dir := redisServerDir(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var args []string
	if len(settings) > 0 && !strings.HasPrefix(settings[0], "--") { // a configuration file comes first
		args, settings = settings[:1], settings[1:]
	}
	args = append(args, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	if !slices.Contains(settings, "--sentinel") {
		args = append(args, "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0")
	}
	args = append(args, settings...)
	srv, err := launch(exec.Command(bin, args...), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &RedisNode{Addr: addr, srv: srv}
	t.Cleanup(func() { srv.stop() })
	if err := srv.waitReady(func() error { _, err := n.Command("PING"); return err }); err != nil {
		unavailable(t, "redis-server did not start: %v; its log:\n%s", err, tail(dir))
	}
	return n
}

// Restart starts the node again, after Kill, on its port, files and
// settings.
func (n *RedisNode) Restart(t testing.TB) {
	t.Helper()
	old := n.srv.cmd
	srv, err := launch(exec.Command(old.Path, old.Args[1:]...), n.srv.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.srv = srv
	t.Cleanup(func() { srv.stop() })
	if err := srv.waitReady(func() error { _, err := n.Command("PING"); return err }); err != nil {
		t.Fatalf("redis-server did not start again: %v; its log:\n%s", err, tail(srv.dir))
	}
}

// URL returns the node's URL.
func (n *RedisNode) URL() string { return "redis://" + n.Addr }

// Log returns the end of the node's log, for a failure message: a
// Sentinel's holds its events (+sdown, +odown, +tilt, -failover-abort-...).
func (n *RedisNode) Log() string { return tail(n.srv.dir) }

// Kill kills the node (SIGKILL: nothing is flushed, no replica told).
func (n *RedisNode) Kill() {
	_ = n.srv.cmd.Process.Kill()
	<-n.srv.exited
}

// Signal sends sig to the node's process (SIGSTOP pauses it).
func (n *RedisNode) Signal(sig os.Signal) error { return n.srv.cmd.Process.Signal(sig) }

// Command sends one command in the inline protocol, which needs no
// client, and returns its answer: a status, an error, an integer or a
// bulk string as its text (an array is refused).
func (n *RedisNode) Command(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", n.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(strings.Join(args, " ") + "\r\n")); err != nil {
		return "", err
	}
	rd := bufio.NewReader(c)
	head, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	head = strings.TrimRight(head, "\r\n")
	switch {
	case strings.HasPrefix(head, "+"), strings.HasPrefix(head, ":"):
		return head[1:], nil
	case strings.HasPrefix(head, "-"):
		return "", fmt.Errorf("%s: %s", args[0], head[1:])
	case strings.HasPrefix(head, "$-1"):
		return "", nil
	case strings.HasPrefix(head, "$"):
		size, err := strconv.Atoi(head[1:])
		if err != nil {
			return "", err
		}
		body := make([]byte, size+2)
		_, err = io.ReadFull(rd, body)
		return string(body[:size]), err
	}
	return "", fmt.Errorf("%s answered %q, which this client does not read", args[0], head)
}

// Info returns the fields of an INFO section of the node.
func (n *RedisNode) Info(section string) (map[string]string, error) {
	body, err := n.Command("INFO", section)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for line := range strings.Lines(body) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	return fields, nil
}

// CPU returns the user and system CPU time the node has used, from INFO
// cpu, as Redis.CPU does.
func (n *RedisNode) CPU() (time.Duration, error) {
	info, err := n.Info("cpu")
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, name := range []string{"used_cpu_user", "used_cpu_sys"} {
		seconds, err := strconv.ParseFloat(info[name], 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s: %w", name, err)
		}
		total += time.Duration(seconds * float64(time.Second))
	}
	return total, nil
}

// CPU returns the CPU time the cluster's masters have used.
func (c *RedisCluster) CPU() (time.Duration, error) {
	var total time.Duration
	for _, m := range c.Masters {
		cpu, err := m.CPU()
		if err != nil {
			return 0, err
		}
		total += cpu
	}
	return total, nil
}

// RedisCluster is a private Redis Cluster on 127.0.0.1.
type RedisCluster struct {
	Masters  []*RedisNode
	Replicas []*RedisNode // Replicas[i] replicates Masters[i], when there are replicas
}

// StartRedisCluster starts a Redis Cluster of masters masters, each with
// a replica when withReplicas, with settings (after the tests' own), and
// waits until every node sees it whole, failing t if it is not within
// clusterFormTimeout. With replicas, a master's replica takes over after
// a second of silence (cluster-node-timeout 1000); without, the timeout
// stays Redis's default, clusterFormNodeTimeout: there is no replica to
// take over, and a short one would only let a node stalled by a loaded
// machine be marked failed and take the cluster down.
func StartRedisCluster(t testing.TB, masters int, withReplicas bool, settings ...string) *RedisCluster {
	t.Helper()
	nodes := masters
	if withReplicas {
		nodes *= 2
	}
	members := startClusterMembers(t, nodes, clusterFormNodeTimeout, settings...)
	c := &RedisCluster{}
	for i, m := range members {
		if i < masters {
			c.Masters = append(c.Masters, m.RedisNode)
		} else {
			members[i].master = members[i-masters].id
			c.Replicas = append(c.Replicas, m.RedisNode)
		}
	}
	assignCluster(t, members)
	joinCluster(t, members)
	if withReplicas {
		for _, m := range members {
			if _, err := m.Command("CONFIG", "SET", "cluster-node-timeout", "1000"); err != nil {
				t.Fatalf("cluster node %s: %v", m.Addr, err)
			}
		}
	}
	return c
}

const (
	// clusterFormTimeout bounds how long a cluster may take to form: on
	// an idle machine two or three seconds, most of them the delay
	// before a master serves once its state turned ok.
	clusterFormTimeout = 60 * time.Second
	// clusterFormNodeTimeout is the cluster-node-timeout the nodes
	// start with (Redis's default). It bounds a handshake too: a node
	// whose MEET gets no answer within it (the other node stalled)
	// forgets the node it was to meet, for good.
	clusterFormNodeTimeout = 15 * time.Second
	// clusterSlots is how many hash slots a Redis Cluster has.
	clusterSlots = 16384
)

// clusterMember is a node of a cluster being formed.
type clusterMember struct {
	*RedisNode
	id, bus string // its node ID and cluster bus port
	master  string // the ID of the master it is to replicate; "" for a master
}

// startClusterMembers starts n nodes of a cluster, on free ports, with
// cluster-node-timeout nodeTimeout and settings after the tests' own.
func startClusterMembers(t testing.TB, n int, nodeTimeout time.Duration, settings ...string) []clusterMember {
	t.Helper()
	members := make([]clusterMember, n)
	ports := freePorts(t, 2*n) // each node's, and its cluster bus's
	for i := range members {
		m := &members[i]
		m.bus = strconv.Itoa(ports[n+i])
		m.RedisNode = startRedisNode(t, ports[i], append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10), "--cluster-port", m.bus}, settings...)...)
		var err error
		if m.id, err = m.Command("CLUSTER", "MYID"); err != nil {
			t.Fatalf("cluster node %s: %v", m.Addr, err)
		}
	}
	return members
}

// assignCluster gives the members distinct config epochs, as redis-cli
// --cluster create does (masters of one epoch would first have to settle
// which is newer), and shares the slots among the masters.
func assignCluster(t testing.TB, members []clusterMember) {
	t.Helper()
	var masters []clusterMember
	for i, m := range members {
		if _, err := m.Command("CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			t.Fatalf("cluster node %s: %v", m.Addr, err)
		}
		if m.master == "" {
			masters = append(masters, m)
		}
	}
	for i, m := range masters {
		first, last := i*clusterSlots/len(masters), (i+1)*clusterSlots/len(masters)-1
		if _, err := m.Command("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(first), strconv.Itoa(last)); err != nil {
			t.Fatalf("cluster node %s: %v", m.Addr, err)
		}
	}
}

// joinCluster makes the members one cluster, as redis-cli --cluster
// create does, but moving on what the nodes report rather than on time,
// and with a deadline: redis-cli waits without end for the nodes to
// agree, which a forgotten handshake keeps them from ever doing. It
// returns once every node sees the same cluster, whole, and fails t if
// that is not so within clusterFormTimeout.
func joinCluster(t testing.TB, members []clusterMember) {
	t.Helper()
	for deadline := time.Now().Add(clusterFormTimeout); ; time.Sleep(100 * time.Millisecond) {
		views, whole := advanceCluster(members)
		if whole {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Redis Cluster did not form within %v; each node's view:\n%s", clusterFormTimeout, strings.Join(views, "\n"))
		}
	}
}

// advanceCluster reads each member's view of the cluster and moves on
// what it lacks. A node that does not know another, or does not know it
// as the replica it now is, is sent a MEET by that other: a MEET carries
// its sender's name, address and role at once, where the nodes' own
// pings would carry a role only within half the node timeout, and a
// node whose handshake was forgotten would never be met again; to a
// node that knows its sender, or is being met by it, it changes nothing
// else. A replica that knows its master but does not follow it is told
// to (CLUSTER REPLICATE). It returns each member's view, for a failure
// message, and whether every member sees every node with the same roles
// and slots, every link up, the cluster ok, and, if a replica, itself in
// sync with its master.
func advanceCluster(members []clusterMember) ([]string, bool) {
	tables := make([]map[string]string, len(members))
	views := make([]string, len(members))
	for i, m := range members {
		var err error
		if tables[i], err = m.table(); err != nil {
			views[i] = "CLUSTER NODES: " + err.Error()
		}
	}
	for i, m := range members {
		if tables[i] == nil {
			continue
		}
		if m.master != "" && !strings.HasPrefix(tables[i][m.id], "slave "+m.master) && tables[i][m.master] != "" {
			views[i] = "does not follow its master yet (told to: CLUSTER REPLICATE)"
			if _, err := m.Command("CLUSTER", "REPLICATE", m.master); err != nil {
				views[i] = "CLUSTER REPLICATE: " + err.Error()
			}
		}
		var behind []string
		for j, o := range members {
			known := tables[i][o.id] != ""
			// Whether o follows its master, by its own table.
			follows := o.master != "" && tables[j] != nil && strings.HasPrefix(tables[j][o.id], "slave "+o.master)
			if !known || follows && !strings.HasPrefix(tables[i][o.id], "slave "+o.master) {
				behind = append(behind, o.Addr)
				if tables[j] != nil { // else o did not answer this round: asking again would wait again
					host, port, _ := net.SplitHostPort(m.Addr)
					_, _ = o.Command("CLUSTER", "MEET", host, port, m.bus)
				}
			}
		}
		if len(behind) > 0 && views[i] == "" {
			views[i] = fmt.Sprintf("does not know the nodes at %v, or not in their roles (those that answer were told to MEET it)", behind)
		}
	}
	whole := true
	var agreed string // the table of the first member compared
	for i, m := range members {
		if views[i] == "" {
			views[i] = m.whole(tables[i], &agreed)
		}
		whole = whole && views[i] == clusterWhole
		views[i] = m.Addr + " (" + m.id + "): " + views[i]
	}
	return views, whole
}

// clusterWhole is the view of a member that sees the whole cluster.
const clusterWhole = "sees the whole cluster, its state ok"

// whole returns clusterWhole if the member, whose table is table, sees
// what the first such member sees (agreed, set if empty), every link up,
// its cluster state ok and, if a replica, itself in sync with its
// master; else what it lacks.
func (m clusterMember) whole(table map[string]string, agreed *string) string {
	var rows []string
	for id, row := range table {
		if strings.HasSuffix(row, " disconnected") {
			return fmt.Sprintf("its link to node %s is down", id)
		}
		rows = append(rows, id+" "+row)
	}
	slices.Sort(rows)
	if t := strings.Join(rows, "; "); *agreed == "" {
		*agreed = t
	} else if t != *agreed {
		return fmt.Sprintf("sees %q, another %q", t, *agreed)
	}
	if state, err := m.Command("CLUSTER", "INFO"); err != nil || !strings.Contains(state, "cluster_state:ok") {
		return fmt.Sprintf("its state not ok: %q %v", state, err)
	}
	if m.master != "" {
		if info, err := m.Info("replication"); err != nil || info["master_link_status"] != "up" {
			return fmt.Sprintf("not in sync with its master: %q %v", info["master_link_status"], err)
		}
	}
	return clusterWhole
}

// table returns the member's table of the cluster (CLUSTER NODES): for
// each node it knows, by ID, its role, master ("-" for none) and slots,
// what every node must agree on, and, last, "disconnected" if its link
// to the node is down; a node it is still meeting is left out. A node
// it believes failing is an error.
func (m clusterMember) table() (map[string]string, error) {
	nodes, err := m.Command("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	table := map[string]string{}
	for line := range strings.Lines(nodes) {
		// ID ADDR FLAGS MASTER PING-SENT PONG-RECV EPOCH LINK SLOT...
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		flags := strings.Split(f[2], ",")
		if slices.Contains(flags, "handshake") {
			continue
		}
		if slices.Contains(flags, "fail?") || slices.Contains(flags, "fail") || slices.Contains(flags, "noaddr") {
			return nil, fmt.Errorf("sees node %s %s", f[0], f[2])
		}
		role := "master"
		if slices.Contains(flags, "slave") {
			role = "slave"
		}
		row := append([]string{role, f[3]}, f[8:]...)
		if f[7] != "connected" {
			row = append(row, "disconnected")
		}
		table[f[0]] = strings.Join(row, " ")
	}
	return table, nil
}

// URL returns a URL of the cluster: its first master, the others as
// further addresses.
func (c *RedisCluster) URL() string {
	url, sep := c.Masters[0].URL(), "?"
	for _, m := range c.Masters[1:] {
		url += sep + "addr=" + m.Addr
		sep = "&"
	}
	return url
}

// StartSentinel starts a Redis Sentinel (redis-server --sentinel) on a
// free port of 127.0.0.1 watching master under name, alone (quorum 1),
// which declares it down after a second of silence. Its failover
// timeout is a minute, so that for that long it leaves alone a replica
// that replicates from another address than the master's (a test's
// proxy).
//
// Two of its periods are shortened (SENTINEL DEBUG, Redis 7.0), so
// that a loaded machine cannot hold a failover back for minutes: a
// failover of a killed master takes at most SentinelFailoverBound.
func StartSentinel(t testing.TB, name string, master *RedisNode) *RedisNode {
	t.Helper()
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(master.Addr)
	conf := filepath.Join(dir, "sentinel.conf")
	// Sentinel rewrites its file as it learns the replicas.
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("sentinel monitor %[1]s %[2]s %[3]s 1\nsentinel down-after-milliseconds %[1]s %[4]d\nsentinel failover-timeout %[1]s 60000\n", name, host, port, sentinelDownAfter.Milliseconds())), 0o600); err != nil {
		t.Fatal(err)
	}
	n := StartRedisNode(t, conf, "--sentinel")
	if _, err := n.Command("SENTINEL", "DEBUG", "info-period", strconv.FormatInt(sentinelInfoPeriod.Milliseconds(), 10),
		"tilt-period", strconv.FormatInt(sentinelTiltPeriod.Milliseconds(), 10)); err != nil {
		t.Fatalf("Sentinel refused its periods (SENTINEL DEBUG needs Redis 7.0): %v", err)
	}
	return n
}

// The timings of a Sentinel of StartSentinel. Sentinel acts only in its
// timer, on what it last heard; these bound each step of a failover
// whatever the load, and a test waiting for one derives its deadline
// from SentinelFailoverBound.
const (
	// sentinelDownAfter is its down-after-milliseconds: a master that
	// answers no PING for that long is down.
	sentinelDownAfter = time.Second
	// sentinelInfoPeriod is how often it asks every instance for INFO
	// (Sentinel's default is 10 s). It promotes only a replica whose
	// INFO it received in the last 5 s: with the default, a replica slow
	// to answer the one INFO sent when its master is found down is
	// passed over, the failover is aborted ("no good slave"), and
	// Sentinel tries again only after twice the failover timeout.
	sentinelInfoPeriod = time.Second
	// sentinelTiltPeriod is how long it acts on nothing after its timer
	// was held up for over 2 s (a write of its file on a busy disk, a
	// starved CPU), its TILT mode (default 30 s). The default outlasts a
	// test's wait, and a master found down only then has replicas
	// disconnected from it for over ten times down-after-milliseconds,
	// which Sentinel never promotes.
	sentinelTiltPeriod = 3 * time.Second
	// sentinelReconfTimeout is how long it waits for a replica to follow
	// a promoted master before ending the failover anyway (its default).
	sentinelReconfTimeout = 10 * time.Second
	// SentinelFailoverBound is the longest Sentinel's own timings let a
	// failover of a killed master take: the silence that marks the
	// master down, a TILT period, an INFO period each to select the
	// replica and to see it promoted, and the other replica's
	// reconfiguration. A loaded machine adds its processes' delays, so a
	// test waits for a multiple of it.
	SentinelFailoverBound = sentinelDownAfter + sentinelTiltPeriod + 2*sentinelInfoPeriod + sentinelReconfTimeout
)
