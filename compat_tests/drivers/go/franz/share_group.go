// The share_group scenario (KIP-932) with franz-go's share consumer (kgo.ShareGroup): see compat_tests/scenarios.py.
package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	c "wirebroker/compat/drivers/common"
)

const (
	shareRecords      = 200
	sharePartitions   = 2
	shareRejected     = "7"
	shareReleaseEvery = 10
)

// setGroupConfig sets one group config (IncrementalAlterConfigs on the GROUP resource).
func setGroupConfig(bootstrap, group, key, value string) error {
	cl, err := client(bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	resource := kmsg.NewIncrementalAlterConfigsRequestResource()
	resource.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	resource.ResourceName = group
	config := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	config.Name, config.Value = key, kmsg.StringPtr(value)
	resource.Configs = append(resource.Configs, config)
	req.Resources = append(req.Resources, resource)
	cx, cancel := ctx()
	defer cancel()
	resp, err := req.RequestWith(cx, cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}

// shareTally is what both members saw, by value.
type shareTally struct {
	mu       sync.Mutex
	accepted map[string]int
	rejected map[string]int
	released map[string]bool
	byMember [2]int
}

func (t *shareTally) acceptedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.accepted)
}

// shareMember polls until done, acknowledging each record: the first delivery of every tenth value is released,
// value 7 rejected, everything else accepted.
func shareMember(bootstrap, topic, group string, index int, tally *shareTally, done <-chan struct{}) error {
	cl, err := client(bootstrap, kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		select {
		case <-done:
			return nil
		default:
		}
		cx, cancel := context.WithTimeout(context.Background(), time.Second)
		fetches := cl.PollFetches(cx)
		cancel()
		for _, e := range fetches.Errors() {
			if e.Err != context.DeadlineExceeded && e.Err != context.Canceled {
				return fmt.Errorf("member %d: fetch error on %s-%d: %w", index, e.Topic, e.Partition, e.Err)
			}
		}
		for _, r := range fetches.Records() {
			value := string(r.Value)
			n, _ := strconv.Atoi(value)
			status := kgo.AckAccept
			if value == shareRejected {
				status = kgo.AckReject
			} else if r.DeliveryCount() == 1 && n%shareReleaseEvery == 0 {
				status = kgo.AckRelease
			}
			r.Ack(status)
			tally.mu.Lock()
			switch status {
			case kgo.AckAccept:
				tally.accepted[value]++
				tally.byMember[index]++
			case kgo.AckReject:
				tally.rejected[value]++
			default:
				tally.released[value] = true
			}
			tally.mu.Unlock()
		}
		cx, cancel = ctx()
		err := cl.FlushAcks(cx)
		cancel()
		if err != nil {
			return fmt.Errorf("member %d: acknowledging: %w", index, err)
		}
	}
}

func shareGroup(bootstrap, prefix string) (string, error) {
	topic := c.TopicName(prefix, "share_group")
	group := topic + ".group"
	if err := createTopic(bootstrap, topic, sharePartitions); err != nil {
		return "", err
	}
	if err := setGroupConfig(bootstrap, group, "share.auto.offset.reset", "earliest"); err != nil {
		return "", err
	}
	var records []*kgo.Record
	for i := 0; i < shareRecords; i++ {
		records = append(records, &kgo.Record{Topic: topic, Partition: int32(i % sharePartitions),
			Value: []byte(strconv.Itoa(i))})
	}
	if err := produce(bootstrap, records); err != nil {
		return "", err
	}
	tally := &shareTally{accepted: map[string]int{}, rejected: map[string]int{}, released: map[string]bool{}}
	done := make(chan struct{})
	errs := make(chan error, 2)
	for index := 0; index < 2; index++ {
		go func(index int) { errs <- shareMember(bootstrap, topic, group, index, tally, done) }(index)
	}
	waited := c.WaitUntil(func() bool { return tally.acceptedCount() >= shareRecords-1 }, "every record accepted")
	close(done)
	for index := 0; index < 2; index++ {
		if err := <-errs; err != nil {
			return "", err
		}
	}
	if waited != nil {
		return "", c.Failf("%v: %d of %d accepted", waited, tally.acceptedCount(), shareRecords-1)
	}
	tally.mu.Lock()
	defer tally.mu.Unlock()
	for value, count := range tally.accepted {
		if count != 1 || value == shareRejected {
			return "", c.Failf("value %s accepted %d times", value, count)
		}
	}
	if tally.rejected[shareRejected] != 1 {
		return "", c.Failf("value %s delivered and rejected %d times, not once", shareRejected, tally.rejected[shareRejected])
	}
	if len(tally.released) != shareRecords/shareReleaseEvery {
		return "", c.Failf("%d values released, not %d", len(tally.released), shareRecords/shareReleaseEvery)
	}
	for value := range tally.released {
		if tally.accepted[value] != 1 {
			return "", c.Failf("released value %s was not redelivered and accepted", value)
		}
	}
	return fmt.Sprintf("%d records accepted once each (A %d, B %d); %d released then redelivered; %s rejected, never again",
		len(tally.accepted), tally.byMember[0], tally.byMember[1], len(tally.released), shareRejected), nil
}
