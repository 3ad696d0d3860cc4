// The franz-go (kgo + kadm) driver of the compatibility matrix; see package common for the command line.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	c "wirebroker/compat/drivers/common"
)

func main() {
	c.Run(map[string]c.Scenario{
		"metadata":           metadata,
		"roundtrip":          roundtrip,
		"compression_gzip":   compression("gzip", kgo.GzipCompression()),
		"compression_snappy": compression("snappy", kgo.SnappyCompression()),
		"compression_lz4":    compression("lz4", kgo.Lz4Compression()),
		"compression_zstd":   compression("zstd", kgo.ZstdCompression()),
		"large_records":      largeRecords,
		"seek":               seek,
		"idempotent":         idempotent,
		"consumer_group":     consumerGroup,
		"admin":              admin,
		"failover":           failover,
		"transactions":       transactions,
		"compacted":          compacted,
		"share_group":        shareGroup,
		"sasl_scram": secured("sasl_scram", "COMPAT_SASL_BOOTSTRAP", kgo.SASL(scram.Auth{
			User: os.Getenv("COMPAT_SCRAM_USER"), Pass: os.Getenv("COMPAT_SCRAM_PASSWORD")}.AsSha512Mechanism())),
		"tls": secured("tls", "COMPAT_TLS_BOOTSTRAP", tlsOpt()),
	})
}

func ctx() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), c.Deadline) }

func client(bootstrap string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(bootstrap, ",")...)}, opts...)...)
}

func withAdmin(bootstrap string, f func(*kadm.Client) error, opts ...kgo.Opt) error {
	cl, err := client(bootstrap, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return f(kadm.NewClient(cl))
}

func createTopic(bootstrap, topic string, partitions int32) error {
	return withAdmin(bootstrap, func(adm *kadm.Client) error {
		cx, cancel := ctx()
		defer cancel()
		resp, err := adm.CreateTopics(cx, partitions, 1, nil, topic)
		if err != nil {
			return err
		}
		return resp[topic].Err
	})
}

// produce sends records (to their own Partition, with a manual partitioner) and waits for every ack.
func produce(bootstrap string, records []*kgo.Record, opts ...kgo.Opt) error {
	cl, err := client(bootstrap, append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableIdempotentWrite()}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	cx, cancel := ctx()
	defer cancel()
	return cl.ProduceSync(cx, records...).FirstErr()
}

// consume reads partition 0 of topic from offset (e.g. kgo.NewOffset().AtStart()) until count records came.
func consume(bootstrap, topic string, offset kgo.Offset, count int, opts ...kgo.Opt) ([]*kgo.Record, error) {
	cl, err := client(bootstrap, append([]kgo.Opt{
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: offset}})}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	cx, cancel := ctx()
	defer cancel()
	var out []*kgo.Record
	for len(out) < count {
		fetches := cl.PollFetches(cx)
		if cx.Err() != nil {
			break
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return out, errs[0].Err
		}
		out = append(out, fetches.Records()...)
	}
	return out, nil
}

func values(records []*kgo.Record) [][]byte {
	out := make([][]byte, len(records))
	for i, r := range records {
		out[i] = r.Value
	}
	return out
}

func metadata(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "metadata")
	if err := createTopic(bootstrap, topic, 3); err != nil {
		return "", err
	}
	var detail string
	err := withAdmin(bootstrap, func(adm *kadm.Client) error {
		cx, cancel := ctx()
		defer cancel()
		md, err := adm.Metadata(cx, topic)
		if err != nil {
			return err
		}
		if len(md.Brokers) != 1 {
			return c.Failf("expected 1 broker, metadata lists %d", len(md.Brokers))
		}
		b := md.Brokers[0]
		if fmt.Sprintf("%s:%d", b.Host, b.Port) != bootstrap {
			return c.Failf("broker at %s:%d, not %s", b.Host, b.Port, bootstrap)
		}
		td := md.Topics[topic]
		if td.Err != nil || len(td.Partitions) != 3 {
			return c.Failf("topic: err %v, %d partitions", td.Err, len(td.Partitions))
		}
		for _, p := range td.Partitions {
			if p.Leader != b.NodeID {
				return c.Failf("partition %d leader %d", p.Partition, p.Leader)
			}
		}
		detail = fmt.Sprintf("1 broker (node %d at %s:%d); %s: 3 partitions led by it", b.NodeID, b.Host, b.Port, topic)
		return nil
	}, kgo.ClientID(c.MetadataClientID(prefix)))
	return detail, err
}

func roundtrip(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "roundtrip")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	var records []*kgo.Record
	for _, r := range c.RoundtripRecords() {
		rec := &kgo.Record{Topic: topic, Partition: 0, Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
		records = append(records, rec)
	}
	if err := produce(bootstrap, records); err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, kgo.NewOffset().AtStart(), c.RecordCount)
	if err != nil {
		return "", err
	}
	consumed := make([]c.Consumed, len(got))
	for i, r := range got {
		consumed[i] = c.Consumed{Offset: r.Offset, Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			consumed[i].Headers = append(consumed[i].Headers, [2]string{h.Key, string(h.Value)})
		}
	}
	return c.CheckRoundtrip(consumed)
}

// secured is the sasl_scram and tls cells: 10 records through a secured listener (compat_tests/security_listeners.py).
func secured(scenario, bootstrapVariable string, security kgo.Opt) c.Scenario {
	return func(bootstrap, prefix string) (string, error) {
		topic := c.TopicName(prefix, scenario)
		if err := createTopic(bootstrap, topic, 1); err != nil {
			return "", err
		}
		securedBootstrap := os.Getenv(bootstrapVariable)
		var records []*kgo.Record
		var want [][]byte
		for i := 0; i < c.RecordCount; i++ {
			want = append(want, []byte(fmt.Sprintf("secret-%d", i)))
			records = append(records, &kgo.Record{Topic: topic, Partition: 0, Value: want[i]})
		}
		if err := produce(securedBootstrap, records, security); err != nil {
			return "", err
		}
		got, err := consume(securedBootstrap, topic, kgo.NewOffset().AtStart(), len(want), security)
		if err != nil {
			return "", err
		}
		return c.CheckValues(values(got), want, scenario)
	}
}

// tlsOpt trusts the run's CA (COMPAT_TLS_CA); the host name is checked against the certificate.
func tlsOpt() kgo.Opt {
	pool := x509.NewCertPool()
	if pem, err := os.ReadFile(os.Getenv("COMPAT_TLS_CA")); err == nil {
		pool.AppendCertsFromPEM(pem)
	}
	return kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
}

func compression(name string, codec kgo.CompressionCodec) c.Scenario {
	return func(bootstrap, prefix string) (string, error) {
		topic := c.TopicName(prefix, "compression_"+name)
		if err := createTopic(bootstrap, topic, 1); err != nil {
			return "", err
		}
		var want [][]byte
		var records []*kgo.Record
		for i := 0; i < c.CompressedCount; i++ {
			want = append(want, c.CompressibleValue(i))
			records = append(records, &kgo.Record{Topic: topic, Partition: 0, Value: c.CompressibleValue(i)})
		}
		if err := produce(bootstrap, records, kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(20*time.Millisecond)); err != nil {
			return "", err
		}
		got, err := consume(bootstrap, topic, kgo.NewOffset().AtStart(), len(want))
		if err != nil {
			return "", err
		}
		return c.CheckValues(values(got), want, name)
	}
}

func largeRecords(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "large_records")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	var want [][]byte
	var records []*kgo.Record
	for i := 0; i < c.LargeRecordCount; i++ {
		value := make([]byte, c.LargeRecordBytes)
		_, _ = rand.Read(value)
		want = append(want, value)
		records = append(records, &kgo.Record{Topic: topic, Partition: 0, Value: value})
	}
	if err := produce(bootstrap, records, kgo.ProducerBatchMaxBytes(c.LargeBatchMaxBytes)); err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, kgo.NewOffset().AtStart(), len(want))
	if err != nil {
		return "", err
	}
	return c.CheckValues(values(got), want, "1 MB records")
}

// firstOffset starts a consumer of partition 0 at offset and returns the offset of the first record it gets;
// before waiting it runs between() (e.g. to produce a record after the consumer resolved a logical offset).
func firstOffset(bootstrap, topic string, offset kgo.Offset, between func() error) (int64, error) {
	cl, err := client(bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: offset}}))
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	if between != nil {
		short, cancel := context.WithTimeout(context.Background(), time.Second)
		fetches := cl.PollFetches(short) // resolves the logical offset; nothing to read yet
		cancel()
		if n := len(fetches.Records()); n > 0 {
			return fetches.Records()[0].Offset, nil
		}
		if err := between(); err != nil {
			return -1, err
		}
	}
	cx, cancel := ctx()
	defer cancel()
	for cx.Err() == nil {
		fetches := cl.PollFetches(cx)
		if errs := fetches.Errors(); len(errs) > 0 && cx.Err() == nil {
			return -1, errs[0].Err
		}
		if records := fetches.Records(); len(records) > 0 {
			return records[0].Offset, nil
		}
	}
	return -1, c.Failf("no record came after the seek")
}

func seek(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "seek")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	var records []*kgo.Record
	for i := 0; i < c.RecordCount; i++ {
		records = append(records, &kgo.Record{Topic: topic, Partition: 0, Key: []byte(fmt.Sprintf("key-%d", i)),
			Value: []byte("v"), Timestamp: time.UnixMilli(base + int64(i)*c.SeekStepMs)})
	}
	if err := produce(bootstrap, records); err != nil {
		return "", err
	}
	first, err := firstOffset(bootstrap, topic, kgo.NewOffset().AtStart(), nil)
	if err != nil || first != 0 {
		return "", errors.Join(err, c.Failf("after seek to beginning read offset %d", first))
	}
	target := base + c.SeekTargetIndex*c.SeekStepMs - c.SeekStepMs/2
	atTime, err := firstOffset(bootstrap, topic, kgo.NewOffset().AfterMilli(target), nil)
	if err != nil || atTime != c.SeekTargetIndex {
		return "", errors.Join(err, c.Failf("after seek to timestamp read offset %d", atTime))
	}
	afterEnd, err := firstOffset(bootstrap, topic, kgo.NewOffset().AtEnd(), func() error {
		return produce(bootstrap, []*kgo.Record{{Topic: topic, Partition: 0, Value: []byte("after-end")}})
	})
	if err != nil || afterEnd != c.RecordCount {
		return "", errors.Join(err, c.Failf("after seek to end read offset %d", afterEnd))
	}
	return fmt.Sprintf("beginning -> 0, timestamp -> %d, end -> %d", atTime, afterEnd), nil
}

func idempotent(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "idempotent")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	var want [][]byte
	var records []*kgo.Record
	for i := 0; i < c.IdempotentCount; i++ {
		want = append(want, []byte(fmt.Sprintf("idempotent-%d", i)))
		records = append(records, &kgo.Record{Topic: topic, Partition: 0, Value: want[i]})
	}
	// franz-go writes idempotently unless told not to; acks=all is its default too.
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return "", err
	}
	cx, cancel := ctx()
	defer cancel()
	err = cl.ProduceSync(cx, records...).FirstErr()
	cl.Close()
	if err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, kgo.NewOffset().AtStart(), len(want))
	if err != nil {
		return "", err
	}
	var end int64
	err = withAdmin(bootstrap, func(adm *kadm.Client) error {
		offsets, err := adm.ListEndOffsets(cx, topic)
		if err != nil {
			return err
		}
		o, _ := offsets.Lookup(topic, 0)
		end = o.Offset
		return o.Err
	})
	if err != nil {
		return "", err
	}
	if end != c.IdempotentCount {
		return "", c.Failf("log end offset %d, expected %d (duplicates?)", end, c.IdempotentCount)
	}
	return c.CheckValues(values(got), want, "idempotent")
}

// compacted: a compacted topic read back as a table after the cleaner ran (common.CompactedScenario).
func compacted(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "compacted")
	configs := map[string]*string{}
	for key, value := range c.CompactedConfig {
		configs[key] = &value
	}
	err := withAdmin(bootstrap, func(adm *kadm.Client) error {
		cx, cancel := ctx()
		defer cancel()
		resp, err := adm.CreateTopics(cx, 1, 1, configs, topic)
		if err != nil {
			return err
		}
		return resp[topic].Err
	})
	if err != nil {
		return "", err
	}
	send := func(kvs []c.KV) error {
		records := make([]*kgo.Record, len(kvs))
		for i, kv := range kvs {
			records[i] = &kgo.Record{Topic: topic, Partition: 0, Key: kv.Key, Value: kv.Value}
		}
		return produce(bootstrap, records)
	}
	readAll := func() ([]c.KV, error) {
		var end int64
		err := withAdmin(bootstrap, func(adm *kadm.Client) error {
			cx, cancel := ctx()
			defer cancel()
			offsets, err := adm.ListEndOffsets(cx, topic)
			if err != nil {
				return err
			}
			o, _ := offsets.Lookup(topic, 0)
			end = o.Offset
			return o.Err
		})
		if err != nil {
			return nil, err
		}
		cl, err := client(bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			topic: {0: kgo.NewOffset().AtStart()}}))
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		cx, cancel := ctx()
		defer cancel()
		var out []c.KV
		// Offsets have gaps once compacted; the last one is in the active segment, which is never cleaned.
		for next := int64(0); next < end; {
			fetches := cl.PollFetches(cx)
			if cx.Err() != nil {
				return out, c.Failf("offset %d not reached", end)
			}
			if errs := fetches.Errors(); len(errs) > 0 {
				return out, errs[0].Err
			}
			for _, r := range fetches.Records() {
				out = append(out, c.KV{Key: r.Key, Value: r.Value})
				next = r.Offset + 1
			}
		}
		return out, nil
	}
	return c.CompactedScenario(send, readAll)
}

// failover: three brokers; 150 of 300 records from the idempotent acks=all client, the runner kills -9
// partition 0's leader, the other 150 from the same client; all read back with assigned partitions.
func failover(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "failover")
	minISR := c.FailoverMinISR
	err := withAdmin(bootstrap, func(adm *kadm.Client) error {
		cx, cancel := ctx()
		defer cancel()
		resp, err := adm.CreateTopics(cx, c.FailoverPartitions, c.FailoverReplicas,
			map[string]*string{"min.insync.replicas": &minISR}, topic)
		if err != nil {
			return err
		}
		return resp[topic].Err
	})
	if err != nil {
		return "", err
	}
	partitions, vals := c.FailoverRecords()
	var records []*kgo.Record
	for i := range vals {
		records = append(records, &kgo.Record{Topic: topic, Partition: partitions[i], Value: vals[i]})
	}
	half := len(records) / 2
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	send := func(part []*kgo.Record) error {
		cx, cancel := context.WithTimeout(context.Background(), 2*c.Deadline)
		defer cancel()
		return cl.ProduceSync(cx, part...).FirstErr()
	}
	if err := send(records[:half]); err != nil {
		return "", err
	}
	killed, err := c.KillLeaderAndWait(topic)
	if err != nil {
		return "", err
	}
	if err := send(records[half:]); err != nil {
		return "", fmt.Errorf("after the kill: %w", err)
	}
	offsets := map[int32]kgo.Offset{}
	for p := int32(0); p < c.FailoverPartitions; p++ {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	reader, err := client(bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return "", err
	}
	defer reader.Close()
	cx, cancel := ctx()
	defer cancel()
	got := map[int32][][]byte{}
	for total := 0; total < len(records) && cx.Err() == nil; {
		fetches := reader.PollFetches(cx)
		if errs := fetches.Errors(); len(errs) > 0 && cx.Err() == nil {
			return "", errs[0].Err
		}
		fetches.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r.Value)
			total++
		})
	}
	ends := map[int32]int64{}
	err = withAdmin(bootstrap, func(adm *kadm.Client) error {
		listed, err := adm.ListEndOffsets(cx, topic)
		if err != nil {
			return err
		}
		listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
		return listed.Error()
	})
	if err != nil {
		return "", err
	}
	return c.CheckFailover(got, ends, killed)
}

// member is one consumer of the group, polling and committing in its own goroutine.
type member struct {
	cl       *kgo.Client
	mu       sync.Mutex
	assigned map[int32]bool
	seen     map[[2]int64]bool
	err      error
	stop     chan struct{}
	done     chan struct{}
}

func newMember(bootstrap, topic, group string) (*member, error) {
	m := &member{assigned: map[int32]bool{}, seen: map[[2]int64]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	cl, err := client(bootstrap, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range parts[topic] {
				m.assigned[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(cx context.Context, cl *kgo.Client, parts map[string][]int32) {
			_ = cl.CommitUncommittedOffsets(cx)
			m.forget(parts[topic])
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, parts map[string][]int32) { m.forget(parts[topic]) }))
	if err != nil {
		return nil, err
	}
	m.cl = cl
	go m.run()
	return m, nil
}

func (m *member) forget(parts []int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range parts {
		delete(m.assigned, p)
	}
}

func (m *member) run() {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			cx, cancel := ctx()
			if err := m.cl.CommitUncommittedOffsets(cx); err != nil && m.err == nil {
				m.err = err
			}
			cancel()
			m.cl.Close()
			return
		default:
		}
		cx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fetches := m.cl.PollFetches(cx)
		cancel()
		m.mu.Lock()
		fetches.EachRecord(func(r *kgo.Record) { m.seen[[2]int64{int64(r.Partition), r.Offset}] = true })
		m.mu.Unlock()
		cx, cancel = ctx()
		if err := m.cl.CommitUncommittedOffsets(cx); err != nil && !errors.Is(err, context.Canceled) {
			m.mu.Lock()
			m.err = err
			m.mu.Unlock()
		}
		cancel()
	}
}

func (m *member) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int32
	for p := range m.assigned {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func consumerGroup(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "consumer_group")
	group := topic + ".group"
	if err := createTopic(bootstrap, topic, c.GroupPartitions); err != nil {
		return "", err
	}
	var records []*kgo.Record
	for p := int32(0); p < c.GroupPartitions; p++ {
		for i := 0; i < c.GroupRecordsPerPartition; i++ {
			records = append(records, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i))})
		}
	}
	if err := produce(bootstrap, records); err != nil {
		return "", err
	}
	a, err := newMember(bootstrap, topic, group)
	if err != nil {
		return "", err
	}
	if err := c.WaitUntil(func() bool { return len(a.partitions()) == c.GroupPartitions }, "A to get all 4 partitions"); err != nil {
		return "", err
	}
	b, err := newMember(bootstrap, topic, group)
	if err != nil {
		return "", err
	}
	split := func() bool {
		pa, pb := a.partitions(), b.partitions()
		return len(pa) == 2 && len(pb) == 2 && fmt.Sprint(append(pa, pb...)) != "" && disjoint(pa, pb)
	}
	if err := c.WaitUntil(split, "the rebalance to 2+2"); err != nil {
		return "", err
	}
	pa, pb := a.partitions(), b.partitions()
	total := c.GroupPartitions * c.GroupRecordsPerPartition
	all := func() bool {
		union := map[[2]int64]bool{}
		for _, m := range []*member{a, b} {
			m.mu.Lock()
			for k := range m.seen {
				union[k] = true
			}
			m.mu.Unlock()
		}
		return len(union) == total
	}
	if err := c.WaitUntil(all, fmt.Sprintf("all %d records", total)); err != nil {
		return "", err
	}
	for _, m := range []*member{a, b} {
		close(m.stop)
		<-m.done
		if m.err != nil {
			return "", c.Failf("member failed: %v", m.err)
		}
	}
	offsets := map[int32]int64{}
	err = withAdmin(bootstrap, func(adm *kadm.Client) error {
		cx, cancel := ctx()
		defer cancel()
		resp, err := adm.FetchOffsets(cx, group)
		if err != nil {
			return err
		}
		resp.Each(func(o kadm.OffsetResponse) { offsets[o.Partition] = o.At })
		return nil
	})
	if err != nil {
		return "", err
	}
	for p := int32(0); p < c.GroupPartitions; p++ {
		if offsets[p] != c.GroupRecordsPerPartition || len(offsets) != c.GroupPartitions {
			return "", c.Failf("committed offsets %v", offsets)
		}
	}
	return c.GroupDetail(pa, pb), nil
}

func disjoint(a, b []int32) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return false
			}
		}
	}
	return true
}

func admin(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "admin")
	err := withAdmin(bootstrap, func(adm *kadm.Client) error {
		cx, cancel := ctx()
		defer cancel()
		retention := c.RetentionMs
		resp, err := adm.CreateTopics(cx, 3, 1, map[string]*string{"retention.ms": &retention}, topic)
		if err != nil || resp[topic].Err != nil {
			return errors.Join(err, resp[topic].Err)
		}
		again, err := adm.CreateTopics(cx, 3, 1, nil, topic)
		if err != nil || !errors.Is(again[topic].Err, kerr.TopicAlreadyExists) {
			return errors.Join(err, c.Failf("creating the topic again answered %v", again[topic].Err))
		}
		// A KRaft broker learns of a new topic from its metadata log a moment after CreateTopics is answered (seen
		// on Apache Kafka 4.3.1 under load): list until the topic is known, then check its partitions.
		var topics kadm.TopicDetails
		if err := c.WaitUntil(func() bool {
			topics, err = adm.ListTopics(cx, topic)
			return err == nil && topics[topic].Err == nil && len(topics[topic].Partitions) > 0
		}, "the new topic to be listed"); err != nil {
			return err
		}
		if len(topics[topic].Partitions) != 3 {
			return c.Failf("topic has %d partitions", len(topics[topic].Partitions))
		}
		configs, err := adm.DescribeTopicConfigs(cx, topic)
		if err != nil {
			return err
		}
		rc, err := configs.On(topic, nil)
		if err != nil || rc.Err != nil {
			return errors.Join(err, rc.Err)
		}
		values := map[string]string{}
		for _, cfg := range rc.Configs {
			values[cfg.Key] = cfg.MaybeValue()
		}
		if values["retention.ms"] != c.RetentionMs || values["cleanup.policy"] != "delete" {
			return c.Failf("retention.ms = %q, cleanup.policy = %q", values["retention.ms"], values["cleanup.policy"])
		}
		deleted, err := adm.DeleteTopics(cx, topic)
		if err != nil || deleted[topic].Err != nil {
			return errors.Join(err, deleted[topic].Err)
		}
		return c.WaitUntil(func() bool {
			all, err := adm.ListTopics(cx)
			return err == nil && !all.Has(topic)
		}, "the deleted topic to leave the topic list")
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("created, duplicate refused, 3 partitions, retention.ms=%s, deleted", c.RetentionMs), nil
}

// transactions: one committed and one aborted transaction; a second client with the same transactional ID fences
// the first in the middle of a transaction (its commit fails) and commits its own; read_committed reads the two
// committed records only.
func transactions(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "transactions")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	transactional := func() (*kgo.Client, error) {
		return client(bootstrap, kgo.TransactionalID(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cx, cancel := ctx()
	defer cancel()
	send := func(cl *kgo.Client, value string) error {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		return cl.ProduceSync(cx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(value)}).FirstErr()
	}
	zombie, err := transactional()
	if err != nil {
		return "", err
	}
	defer zombie.Close()
	if err := send(zombie, "committed"); err != nil {
		return "", err
	}
	if err := zombie.EndTransaction(cx, kgo.TryCommit); err != nil {
		return "", err
	}
	if err := send(zombie, "aborted"); err != nil {
		return "", err
	}
	if err := zombie.EndTransaction(cx, kgo.TryAbort); err != nil {
		return "", err
	}
	if err := send(zombie, "zombie"); err != nil {
		return "", err
	}
	successor, err := transactional()
	if err != nil {
		return "", err
	}
	defer successor.Close()
	// franz-go initialises the producer ID on the first transaction: that fences the zombie and aborts its open one
	if err := send(successor, "successor"); err != nil {
		return "", err
	}
	fenced := zombie.EndTransaction(cx, kgo.TryCommit)
	if fenced == nil {
		return "", c.Failf("the fenced client committed")
	}
	if err := successor.EndTransaction(cx, kgo.TryCommit); err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, kgo.NewOffset().AtStart(), 2, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return "", err
	}
	if _, err := c.CheckValues(values(got), [][]byte{[]byte("committed"), []byte("successor")},
		"read_committed"); err != nil {
		return "", err
	}
	name := fenced.Error()
	var kafkaErr *kerr.Error
	if errors.As(fenced, &kafkaErr) {
		name = kafkaErr.Message
	}
	return fmt.Sprintf("commit visible, abort invisible under read_committed, the zombie fenced (%s)", name), nil
}
