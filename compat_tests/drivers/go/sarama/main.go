// The IBM/sarama driver of the compatibility matrix; see package common for the command line.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"

	c "wirebroker/compat/drivers/common"
)

func main() {
	c.Run(map[string]c.Scenario{
		"metadata":           metadata,
		"roundtrip":          roundtrip,
		"compression_gzip":   compression("gzip", sarama.CompressionGZIP),
		"compression_snappy": compression("snappy", sarama.CompressionSnappy),
		"compression_lz4":    compression("lz4", sarama.CompressionLZ4),
		"compression_zstd":   compression("zstd", sarama.CompressionZSTD),
		"large_records":      largeRecords,
		"seek":               seek,
		"idempotent":         idempotent,
		"consumer_group":     consumerGroup,
		"admin":              admin,
		"transactions":       transactions,
		"compacted":          compacted,
		"sasl_scram":         secured("sasl_scram", "COMPAT_SASL_BOOTSTRAP", withScram),
		"tls":                secured("tls", "COMPAT_TLS_BOOTSTRAP", withTLS),
	})
}

// config speaks the protocol of Kafka 3.9 (sarama picks request versions from Version, not from ApiVersions).
func config() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_9_0_0
	cfg.ClientID = "compat-sarama"
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	return cfg
}

func withAdmin(bootstrap string, f func(sarama.ClusterAdmin) error) error {
	return withAdminConfig(bootstrap, config(), f)
}

func withAdminConfig(bootstrap string, cfg *sarama.Config, f func(sarama.ClusterAdmin) error) error {
	adm, err := sarama.NewClusterAdmin([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	defer adm.Close()
	return f(adm)
}

func createTopic(bootstrap, topic string, partitions int32) error {
	return withAdmin(bootstrap, func(adm sarama.ClusterAdmin) error {
		return adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false)
	})
}

func produce(bootstrap string, cfg *sarama.Config, messages []*sarama.ProducerMessage) error {
	producer, err := sarama.NewSyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	defer producer.Close()
	return producer.SendMessages(messages)
}

// consume reads partition 0 of topic from offset (sarama.OffsetOldest, OffsetNewest or an offset) until count
// messages came; between() runs once the partition consumer has resolved its starting offset.
func consume(bootstrap, topic string, offset int64, count int, between func() error) ([]*sarama.ConsumerMessage, error) {
	return consumeWith(config(), bootstrap, topic, offset, count, between)
}

func consumeWith(cfg *sarama.Config, bootstrap, topic string, offset int64, count int,
	between func() error) ([]*sarama.ConsumerMessage, error) {
	consumer, err := sarama.NewConsumer([]string{bootstrap}, cfg)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, offset)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	if between != nil {
		if err := between(); err != nil {
			return nil, err
		}
	}
	var out []*sarama.ConsumerMessage
	timeout := time.After(c.Deadline)
	for len(out) < count {
		select {
		case msg := <-pc.Messages():
			out = append(out, msg)
		case cerr := <-pc.Errors():
			return out, cerr
		case <-timeout:
			return out, nil
		}
	}
	return out, nil
}

func values(messages []*sarama.ConsumerMessage) [][]byte {
	out := make([][]byte, len(messages))
	for i, m := range messages {
		out[i] = m.Value
	}
	return out
}

func metadata(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "metadata")
	if err := createTopic(bootstrap, topic, 3); err != nil {
		return "", err
	}
	var detail string
	named := config()
	named.ClientID = c.MetadataClientID(prefix)
	err := withAdminConfig(bootstrap, named, func(adm sarama.ClusterAdmin) error {
		brokers, _, err := adm.DescribeCluster()
		if err != nil {
			return err
		}
		if len(brokers) != 1 {
			return c.Failf("expected 1 broker, metadata lists %d", len(brokers))
		}
		b := brokers[0]
		if b.Addr() != bootstrap {
			return c.Failf("broker at %s, not %s", b.Addr(), bootstrap)
		}
		topics, err := adm.DescribeTopics([]string{topic})
		if err != nil {
			return err
		}
		if len(topics) != 1 || !errors.Is(topics[0].Err, sarama.ErrNoError) || len(topics[0].Partitions) != 3 {
			return c.Failf("topic metadata %+v", topics)
		}
		for _, p := range topics[0].Partitions {
			if p.Leader != b.ID() {
				return c.Failf("partition %d leader %d", p.ID, p.Leader)
			}
		}
		detail = fmt.Sprintf("1 broker (node %d at %s); %s: 3 partitions led by it", b.ID(), b.Addr(), topic)
		return nil
	})
	return detail, err
}

func roundtrip(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "roundtrip")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	var messages []*sarama.ProducerMessage
	for _, r := range c.RoundtripRecords() {
		msg := &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.ByteEncoder(r.Key)}
		if r.Value != nil {
			msg.Value = sarama.ByteEncoder(r.Value)
		}
		for _, h := range r.Headers {
			msg.Headers = append(msg.Headers, sarama.RecordHeader{Key: []byte(h[0]), Value: []byte(h[1])})
		}
		messages = append(messages, msg)
	}
	if err := produce(bootstrap, config(), messages); err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, sarama.OffsetOldest, c.RecordCount, nil)
	if err != nil {
		return "", err
	}
	consumed := make([]c.Consumed, len(got))
	for i, m := range got {
		consumed[i] = c.Consumed{Offset: m.Offset, Key: m.Key, Value: m.Value}
		for _, h := range m.Headers {
			consumed[i].Headers = append(consumed[i].Headers, [2]string{string(h.Key), string(h.Value)})
		}
	}
	return c.CheckRoundtrip(consumed)
}

func compression(name string, codec sarama.CompressionCodec) c.Scenario {
	return func(bootstrap, prefix string) (string, error) {
		topic := c.TopicName(prefix, "compression_"+name)
		if err := createTopic(bootstrap, topic, 1); err != nil {
			return "", err
		}
		cfg := config()
		cfg.Producer.Compression = codec
		cfg.Producer.Flush.Frequency = 20 * time.Millisecond
		var want [][]byte
		var messages []*sarama.ProducerMessage
		for i := 0; i < c.CompressedCount; i++ {
			want = append(want, c.CompressibleValue(i))
			messages = append(messages, &sarama.ProducerMessage{Topic: topic, Partition: 0,
				Value: sarama.ByteEncoder(c.CompressibleValue(i))})
		}
		if err := produce(bootstrap, cfg, messages); err != nil {
			return "", err
		}
		got, err := consume(bootstrap, topic, sarama.OffsetOldest, len(want), nil)
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
	cfg := config()
	cfg.Producer.MaxMessageBytes = c.LargeBatchMaxBytes
	var want [][]byte
	var messages []*sarama.ProducerMessage
	for i := 0; i < c.LargeRecordCount; i++ {
		value := make([]byte, c.LargeRecordBytes)
		_, _ = rand.Read(value)
		want = append(want, value)
		messages = append(messages, &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.ByteEncoder(value)})
	}
	if err := produce(bootstrap, cfg, messages); err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, sarama.OffsetOldest, len(want), nil)
	if err != nil {
		return "", err
	}
	return c.CheckValues(values(got), want, "1 MB records")
}

func firstOffset(bootstrap, topic string, offset int64, between func() error) (int64, error) {
	got, err := consume(bootstrap, topic, offset, 1, between)
	if err != nil {
		return -1, err
	}
	if len(got) == 0 {
		return -1, c.Failf("no record came after the seek")
	}
	return got[0].Offset, nil
}

func seek(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "seek")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	var messages []*sarama.ProducerMessage
	for i := 0; i < c.RecordCount; i++ {
		messages = append(messages, &sarama.ProducerMessage{Topic: topic, Partition: 0,
			Key: sarama.StringEncoder(fmt.Sprintf("key-%d", i)), Value: sarama.StringEncoder("v"),
			Timestamp: time.UnixMilli(base + int64(i)*c.SeekStepMs)})
	}
	if err := produce(bootstrap, config(), messages); err != nil {
		return "", err
	}
	first, err := firstOffset(bootstrap, topic, sarama.OffsetOldest, nil)
	if err != nil || first != 0 {
		return "", errors.Join(err, c.Failf("after seek to beginning read offset %d", first))
	}
	client, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return "", err
	}
	found, err := client.GetOffset(topic, 0, base+c.SeekTargetIndex*c.SeekStepMs-c.SeekStepMs/2)
	client.Close()
	if err != nil || found != c.SeekTargetIndex {
		return "", errors.Join(err, c.Failf("offset for the timestamp is %d", found))
	}
	atTime, err := firstOffset(bootstrap, topic, found, nil)
	if err != nil || atTime != c.SeekTargetIndex {
		return "", errors.Join(err, c.Failf("after seek to timestamp read offset %d", atTime))
	}
	afterEnd, err := firstOffset(bootstrap, topic, sarama.OffsetNewest, func() error {
		return produce(bootstrap, config(), []*sarama.ProducerMessage{{Topic: topic, Partition: 0,
			Value: sarama.StringEncoder("after-end")}})
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
	cfg := config()
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.MaxOpenRequests = 1 // sarama's condition for idempotence
	var want [][]byte
	var messages []*sarama.ProducerMessage
	for i := 0; i < c.IdempotentCount; i++ {
		want = append(want, []byte(fmt.Sprintf("idempotent-%d", i)))
		messages = append(messages, &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.ByteEncoder(want[i])})
	}
	if err := produce(bootstrap, cfg, messages); err != nil {
		return "", err
	}
	got, err := consume(bootstrap, topic, sarama.OffsetOldest, len(want), nil)
	if err != nil {
		return "", err
	}
	client, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return "", err
	}
	end, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	client.Close()
	if err != nil || end != c.IdempotentCount {
		return "", errors.Join(err, c.Failf("log end offset %d, expected %d (duplicates?)", end, c.IdempotentCount))
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
	err := withAdmin(bootstrap, func(adm sarama.ClusterAdmin) error {
		return adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1,
			ConfigEntries: configs}, false)
	})
	if err != nil {
		return "", err
	}
	send := func(kvs []c.KV) error {
		messages := make([]*sarama.ProducerMessage, len(kvs))
		for i, kv := range kvs {
			messages[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.ByteEncoder(kv.Key)}
			if kv.Value != nil { // a nil Value is a tombstone
				messages[i].Value = sarama.ByteEncoder(kv.Value)
			}
		}
		return produce(bootstrap, config(), messages)
	}
	return c.CompactedScenario(send, func() ([]c.KV, error) { return readToEnd(bootstrap, topic) })
}

// readToEnd reads partition 0 of topic from its start to its log end offset (offsets have gaps once compacted).
func readToEnd(bootstrap, topic string) ([]c.KV, error) {
	client, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return nil, err
	}
	end, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	client.Close()
	if err != nil {
		return nil, err
	}
	consumer, err := sarama.NewConsumer([]string{bootstrap}, config())
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	var out []c.KV
	timeout := time.After(c.Deadline)
	for next := int64(0); next < end; {
		select {
		case msg := <-pc.Messages():
			out = append(out, c.KV{Key: msg.Key, Value: msg.Value})
			next = msg.Offset + 1
		case cerr := <-pc.Errors():
			return out, cerr
		case <-timeout:
			return out, c.Failf("offset %d not reached", end)
		}
	}
	return out, nil
}

// member is one consumer of the group; its handler records claims and marks+commits every message.
type member struct {
	group    sarama.ConsumerGroup
	mu       sync.Mutex
	assigned []int32
	seen     map[[2]int64]bool
	err      error
	cancel   context.CancelFunc
	done     chan struct{}
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.assigned = nil
	for _, parts := range s.Claims() {
		m.assigned = append(m.assigned, parts...)
	}
	sort.Slice(m.assigned, func(i, j int) bool { return m.assigned[i] < m.assigned[j] })
	return nil
}

func (m *member) Cleanup(s sarama.ConsumerGroupSession) error {
	s.Commit()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.assigned = nil
	return nil
}

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		m.mu.Lock()
		m.seen[[2]int64{int64(msg.Partition), msg.Offset}] = true
		m.mu.Unlock()
		s.MarkMessage(msg, "")
		s.Commit()
	}
	return nil
}

func (m *member) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.assigned...)
}

func newMember(bootstrap, topic, group string) (*member, error) {
	cfg := config()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cg, err := sarama.NewConsumerGroup([]string{bootstrap}, group, cfg)
	if err != nil {
		return nil, err
	}
	cx, cancel := context.WithCancel(context.Background())
	m := &member{group: cg, seen: map[[2]int64]bool{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for cx.Err() == nil {
			if err := cg.Consume(cx, []string{topic}, m); err != nil && cx.Err() == nil {
				m.mu.Lock()
				m.err = err
				m.mu.Unlock()
				return
			}
		}
	}()
	return m, nil
}

func consumerGroup(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "consumer_group")
	group := topic + ".group"
	if err := createTopic(bootstrap, topic, c.GroupPartitions); err != nil {
		return "", err
	}
	var messages []*sarama.ProducerMessage
	for p := int32(0); p < c.GroupPartitions; p++ {
		for i := 0; i < c.GroupRecordsPerPartition; i++ {
			messages = append(messages, &sarama.ProducerMessage{Topic: topic, Partition: p,
				Value: sarama.StringEncoder(fmt.Sprintf("%d-%d", p, i))})
		}
	}
	if err := produce(bootstrap, config(), messages); err != nil {
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
		return len(pa) == 2 && len(pb) == 2 && pa[0] != pb[0] && pa[0] != pb[1] && pa[1] != pb[0] && pa[1] != pb[1]
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
		m.cancel()
		<-m.done
		if err := m.group.Close(); err != nil || m.err != nil {
			return "", errors.Join(err, m.err)
		}
	}
	var detail string
	err = withAdmin(bootstrap, func(adm sarama.ClusterAdmin) error {
		resp, err := adm.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1, 2, 3}})
		if err != nil {
			return err
		}
		offsets := map[int32]int64{}
		for p := int32(0); p < c.GroupPartitions; p++ {
			offsets[p] = resp.GetBlock(topic, p).Offset
		}
		for _, o := range offsets {
			if o != c.GroupRecordsPerPartition {
				return c.Failf("committed offsets %v", offsets)
			}
		}
		detail = c.GroupDetail(pa, pb)
		return nil
	})
	return detail, err
}

func admin(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "admin")
	err := withAdmin(bootstrap, func(adm sarama.ClusterAdmin) error {
		retention := c.RetentionMs
		detail := &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1,
			ConfigEntries: map[string]*string{"retention.ms": &retention}}
		if err := adm.CreateTopic(topic, detail, false); err != nil {
			return err
		}
		again := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1}, false)
		if !errors.Is(again, sarama.ErrTopicAlreadyExists) {
			return c.Failf("creating the topic again answered %v", again)
		}
		topics, err := adm.DescribeTopics([]string{topic})
		if err != nil || len(topics) != 1 || len(topics[0].Partitions) != 3 {
			return errors.Join(err, c.Failf("describe topics %+v", topics))
		}
		entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
		if err != nil {
			return err
		}
		values := map[string]string{}
		for _, e := range entries {
			values[e.Name] = e.Value
		}
		if values["retention.ms"] != c.RetentionMs || values["cleanup.policy"] != "delete" {
			return c.Failf("retention.ms = %q, cleanup.policy = %q", values["retention.ms"], values["cleanup.policy"])
		}
		if err := adm.DeleteTopic(topic); err != nil {
			return err
		}
		return c.WaitUntil(func() bool {
			all, err := adm.ListTopics()
			_, present := all[topic]
			return err == nil && !present
		}, "the deleted topic to leave the topic list")
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("created, duplicate refused, 3 partitions, retention.ms=%s, deleted", c.RetentionMs), nil
}

// transactions: one committed and one aborted transaction; a second producer with the same transactional ID fences
// the first in the middle of a transaction (its commit fails) and commits its own; read_committed reads the two
// committed records only.
func transactions(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "transactions")
	if err := createTopic(bootstrap, topic, 1); err != nil {
		return "", err
	}
	transactional := func() (sarama.SyncProducer, error) {
		cfg := config()
		cfg.Producer.Transaction.ID = topic
		cfg.Producer.Idempotent = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Net.MaxOpenRequests = 1
		return sarama.NewSyncProducer([]string{bootstrap}, cfg) // InitProducerId: fences an earlier producer
	}
	send := func(producer sarama.SyncProducer, value string) error {
		if err := producer.BeginTxn(); err != nil {
			return err
		}
		_, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0,
			Value: sarama.StringEncoder(value)})
		return err
	}
	zombie, err := transactional()
	if err != nil {
		return "", err
	}
	defer zombie.Close()
	if err := send(zombie, "committed"); err != nil {
		return "", err
	}
	if err := zombie.CommitTxn(); err != nil {
		return "", err
	}
	if err := send(zombie, "aborted"); err != nil {
		return "", err
	}
	if err := zombie.AbortTxn(); err != nil {
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
	fenced := zombie.CommitTxn()
	if fenced == nil {
		return "", c.Failf("the fenced producer committed")
	}
	if err := send(successor, "successor"); err != nil {
		return "", err
	}
	if err := successor.CommitTxn(); err != nil {
		return "", err
	}
	cfg := config()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	got, err := consumeWith(cfg, bootstrap, topic, sarama.OffsetOldest, 2, nil)
	if err != nil {
		return "", err
	}
	if _, err := c.CheckValues(values(got), [][]byte{[]byte("committed"), []byte("successor")},
		"read_committed"); err != nil {
		return "", err
	}
	name := fenced.Error()
	if errors.Is(fenced, sarama.ErrProducerFenced) {
		name = "ErrProducerFenced"
	}
	return fmt.Sprintf("commit visible, abort invisible under read_committed, the zombie fenced (%s)", name), nil
}
