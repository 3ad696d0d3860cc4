// Package common holds what the Go drivers of the compatibility matrix share: the command line, the JSON result
// lines, and the scenarios' data. A driver runs as `DRIVER SCENARIOS BOOTSTRAP TOPIC_PREFIX` (SCENARIOS
// comma-separated) and prints one line per scenario:
//
//	{"scenario": "roundtrip", "ok": true, "detail": "...", "seconds": 0.42}
//
// The scenarios, data and checks mirror compat_tests/drivers/python/driver_common.py.
package common

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	RecordCount              = 10
	CompressedCount          = 200
	LargeRecordBytes         = 1_000_000
	LargeRecordCount         = 3
	IdempotentCount          = 500
	GroupPartitions          = 4
	GroupRecordsPerPartition = 10
	SeekStepMs               = 1000
	SeekTargetIndex          = 5
	RetentionMs              = "3600000"
	FailoverCount            = 300
	FailoverPartitions       = 3
	FailoverReplicas         = 3
	FailoverMinISR           = "2"
	// Long enough for a group rebalance with default session timeouts on a loaded 2-core machine.
	Deadline = 60 * time.Second
	// A 1,000,000-byte record needs a little more than the 1,000,000 most clients allow per batch by default, and
	// must stay under the broker's message.max.bytes (1,048,588) so that no batch holds two of them.
	LargeBatchMaxBytes = 1_048_576
)

// The compacted scenario (driver_common.py's COMPACTED_* explain them).
var CompactedConfig = map[string]string{"cleanup.policy": "compact", "segment.ms": "100",
	"min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1000"}

const (
	CompactedKeys           = 20
	CompactedRounds         = 5
	CompactedDeleted        = 5
	CompactedFillerKey      = "filler"
	CompactedFillerInterval = 500 * time.Millisecond
	CompactedDeadline       = 120 * time.Second
)

// KV is a record's key and value (a nil value is a tombstone).
type KV struct{ Key, Value []byte }

// CompactedRecords are the compacted scenario's records in send order: every key ROUNDS times, then tombstones.
func CompactedRecords() []KV {
	var out []KV
	for r := 0; r < CompactedRounds; r++ {
		for k := 0; k < CompactedKeys; k++ {
			out = append(out, KV{[]byte(fmt.Sprintf("key-%d", k)), []byte(fmt.Sprintf("value-%d-%d", k, r))})
		}
	}
	for k := CompactedKeys - CompactedDeleted; k < CompactedKeys; k++ {
		out = append(out, KV{[]byte(fmt.Sprintf("key-%d", k)), nil})
	}
	return out
}

// CompactedLeftovers says what in the records read from offset 0 (fillers aside) is not yet the compacted table,
// or "" when it is; a live key not at its latest value fails the scenario (never true of a table).
func CompactedLeftovers(log []KV) (string, error) {
	latest := map[string][]byte{}
	count := 0
	for _, kv := range log {
		if string(kv.Key) == CompactedFillerKey {
			continue
		}
		latest[string(kv.Key)] = kv.Value
		count++
	}
	live := CompactedKeys - CompactedDeleted
	for k := 0; k < live; k++ {
		want := fmt.Sprintf("value-%d-%d", k, CompactedRounds-1)
		if got, ok := latest[fmt.Sprintf("key-%d", k)]; !ok || string(got) != want {
			return "", Failf("key-%d is not at its latest value", k)
		}
	}
	if count > len(latest) {
		return fmt.Sprintf("%d superseded records", count-len(latest)), nil
	}
	if deleted := len(latest) - live; deleted > 0 {
		return fmt.Sprintf("%d deleted keys still there", deleted), nil
	}
	return "", nil
}

// CompactedScenario writes the table, then a filler record at a time until the log read from offset 0 is the
// table; send produces records and waits for them, readAll reads the partition from offset 0 to its end.
func CompactedScenario(send func([]KV) error, readAll func() ([]KV, error)) (string, error) {
	started := time.Now()
	if err := send(CompactedRecords()); err != nil {
		return "", err
	}
	for fillers := 0; ; fillers++ {
		log, err := readAll()
		if err != nil {
			return "", err
		}
		leftover, err := CompactedLeftovers(log)
		if err != nil {
			return "", err
		}
		if leftover == "" {
			return fmt.Sprintf("%d keys at their latest value only, %d deleted keys gone, after %.0f s (%d filler "+
				"segments)", CompactedKeys-CompactedDeleted, CompactedDeleted, time.Since(started).Seconds(), fillers), nil
		}
		if time.Since(started) > CompactedDeadline {
			return "", Failf("not compacted after %d filler segments: %s", fillers, leftover)
		}
		time.Sleep(CompactedFillerInterval)
		if err := send([]KV{{[]byte(CompactedFillerKey), []byte(fmt.Sprint(fillers))}}); err != nil {
			return "", err
		}
	}
}

// Scenario runs against a bootstrap address with a topic prefix and says what it saw, or fails.
type Scenario func(bootstrap, prefix string) (string, error)

// Failf is a scenario's failed check; its text is what the report shows on hover.
func Failf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TopicName is <prefix>.<scenario>.
func TopicName(prefix, scenario string) string { return prefix + "." + scenario }

// MetadataClientID is the client id of the metadata scenario's clients: the matrix finds their requests by it in
// both brokers' request logs and compares the versions they used (compat_tests/negotiated.py).
func MetadataClientID(prefix string) string { return prefix + ".metadata" }

// RoundtripRecord is one record of the roundtrip scenario: every third value null, one header empty.
type RoundtripRecord struct {
	Key, Value []byte
	Headers    [][2]string
}

func RoundtripRecords() []RoundtripRecord {
	out := make([]RoundtripRecord, RecordCount)
	for i := range out {
		var value []byte
		if i%3 != 2 {
			value = []byte(fmt.Sprintf("value-%d", i))
		}
		out[i] = RoundtripRecord{Key: []byte(fmt.Sprintf("key-%d", i)), Value: value,
			Headers: [][2]string{{"trace", fmt.Sprintf("t-%d", i)}, {"empty", ""}}}
	}
	return out
}

// Consumed is a record as a consumer saw it, for CheckRoundtrip.
type Consumed struct {
	Offset     int64
	Key, Value []byte
	Headers    [][2]string
}

func CheckRoundtrip(got []Consumed) (string, error) {
	want := RoundtripRecords()
	if len(got) != len(want) {
		return "", Failf("consumed %d records, expected %d", len(got), len(want))
	}
	nulls := 0
	for i, r := range got {
		w := want[i]
		if r.Offset != int64(i) {
			return "", Failf("record %d has offset %d", i, r.Offset)
		}
		if !bytes.Equal(r.Key, w.Key) {
			return "", Failf("record %d: key %q != %q", i, r.Key, w.Key)
		}
		if (r.Value == nil) != (w.Value == nil) || !bytes.Equal(r.Value, w.Value) {
			return "", Failf("record %d: value %q (nil %v) != %q", i, r.Value, r.Value == nil, w.Value)
		}
		if fmt.Sprint(r.Headers) != fmt.Sprint(w.Headers) {
			return "", Failf("record %d: headers %v != %v", i, r.Headers, w.Headers)
		}
		if r.Value == nil {
			nulls++
		}
	}
	return fmt.Sprintf("%d records: keys, %d null values, headers intact", len(got), nulls), nil
}

func CompressibleValue(i int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("compressible-%05d-", i), 20))
}

func CheckValues(got, want [][]byte, what string) (string, error) {
	if len(got) != len(want) {
		return "", Failf("%s: consumed %d records, expected %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			return "", Failf("%s: record %d differs", what, i)
		}
	}
	return fmt.Sprintf("%s: %d records intact and in order", what, len(got)), nil
}

// FailoverRecords are the failover scenario's values in send order: record i goes to partition i mod 3.
func FailoverRecords() (partitions []int32, values [][]byte) {
	for i := 0; i < FailoverCount; i++ {
		partitions = append(partitions, int32(i%FailoverPartitions))
		values = append(values, []byte(fmt.Sprintf("failover-%d", i)))
	}
	return partitions, values
}

// KillLeaderAndWait is the driver's half of the failover handshake (driver_common.kill_leader_and_wait): write
// `ready` (the topic) in $COMPAT_FAILOVER_DIR, wait for the runner's `killed` (the node id it killed).
func KillLeaderAndWait(topic string) (string, error) {
	dir := os.Getenv("COMPAT_FAILOVER_DIR")
	if dir == "" {
		return "", Failf("COMPAT_FAILOVER_DIR is not set: failover runs on a three-broker cluster only")
	}
	tmp := filepath.Join(dir, "ready.tmp")
	if err := os.WriteFile(tmp, []byte(topic), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "ready")); err != nil {
		return "", err
	}
	killed := filepath.Join(dir, "killed")
	exists := func() bool { _, err := os.Stat(killed); return err == nil }
	if err := WaitUntil(exists, "the runner to kill the leader"); err != nil {
		return "", err
	}
	node, err := os.ReadFile(killed)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(node)) == "-1" {
		return "", Failf("the runner found no leader to kill")
	}
	return strings.TrimSpace(string(node)), nil
}

// CheckFailover: every value exactly once and in order on each partition, and no log longer (no duplicates).
func CheckFailover(got map[int32][][]byte, ends map[int32]int64, killed string) (string, error) {
	partitions, values := FailoverRecords()
	want := map[int32][][]byte{}
	for i, p := range partitions {
		want[p] = append(want[p], values[i])
	}
	for p := int32(0); p < FailoverPartitions; p++ {
		if _, err := CheckValues(got[p], want[p], fmt.Sprintf("partition %d", p)); err != nil {
			return "", err
		}
		if ends[p] != int64(len(want[p])) {
			return "", Failf("log end offset of partition %d is %d, expected %d (duplicates?)", p, ends[p], len(want[p]))
		}
	}
	return fmt.Sprintf("broker %s (leader of partition 0) killed after %d records; all %d read back once, in order "+
		"on each of %d partitions", killed, FailoverCount/2, FailoverCount, FailoverPartitions), nil
}

// WaitUntil polls cond every 100 ms until it holds or Deadline passes.
func WaitUntil(cond func() bool, what string) error {
	until := time.Now().Add(Deadline)
	for !cond() {
		if time.Now().After(until) {
			return Failf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// GroupDetail is the consumer_group scenario's success text.
func GroupDetail(a, b []int32) string {
	return fmt.Sprintf("A: 4 partitions, then A %v + B %v; %d records; committed 10 on each partition", a, b,
		GroupPartitions*GroupRecordsPerPartition)
}

// Run parses os.Args, runs each requested scenario and prints its result line; unknown ones fail.
func Run(scenarios map[string]Scenario) {
	names, bootstrap, prefix := strings.Split(os.Args[1], ","), os.Args[2], os.Args[3]
	out := json.NewEncoder(os.Stdout)
	for _, name := range names {
		started := time.Now()
		ok, detail := false, "not implemented"
		if scenario, found := scenarios[name]; found {
			text, err := runGuarded(scenario, bootstrap, prefix)
			ok, detail = err == nil, text
			if err != nil {
				detail = err.Error()
			}
		}
		_ = out.Encode(map[string]any{"scenario": name, "ok": ok, "detail": detail,
			"seconds": float64(time.Since(started).Milliseconds()) / 1000})
	}
	os.Exit(0)
}

func runGuarded(scenario Scenario, bootstrap, prefix string) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Failf("panic: %v", r)
		}
	}()
	return scenario(bootstrap, prefix)
}
