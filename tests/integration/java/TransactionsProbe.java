// A Java transactional producer's three transactions, as an exactly-once application makes them: run as
//     java -cp <classes>:<kafka-clients jars>/* TransactionsProbe BOOTSTRAP TOPIC GROUP TRANSACTIONAL_ID
// 1. records "committed-<p>" to each partition of TOPIC and the group's offset 5 of TOPIC-0 (sendOffsetsToTransaction),
//    committed; 2. "aborted-<p>" and offset 9, aborted; 3. "last-<p>", committed without offsets.
// It prints "step <name> ok" after each step, "probe done" at the end, or "probe failed <exception>: <message>".
// With a broker that finalizes transaction.version 2 (Apache Kafka 4.3.1 on a fresh cluster) kafka-clients 4.x uses
// transaction protocol 2 (KIP-890 part 2): no AddPartitionsToTxn or AddOffsetsToTxn, EndTxn v5, TxnOffsetCommit v5.
// tests/integration/test_transactions_tv2_java.py checks what the broker saw and what read_committed reads.

import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

public final class TransactionsProbe {
    public static void main(String[] args) {
        String bootstrap = args[0];
        String topic = args[1];
        ConsumerGroupMetadata group = new ConsumerGroupMetadata(args[2]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("transactional.id", args[3]);
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("delivery.timeout.ms", "60000");
        props.put("request.timeout.ms", "20000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            transaction(producer, topic, "committed", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(5)),
                        group);
            producer.commitTransaction();
            System.out.println("step committed ok");
            transaction(producer, topic, "aborted", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(9)),
                        group);
            producer.abortTransaction();
            System.out.println("step aborted ok");
            transaction(producer, topic, "last", Map.of(), group);
            producer.commitTransaction();
            System.out.println("step last ok");
            System.out.println("probe done");
        } catch (Exception e) {
            System.out.println("probe failed " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        System.out.flush();
    }

    static void transaction(KafkaProducer<String, String> producer, String topic, String value,
                            Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata group)
            throws Exception {
        producer.beginTransaction();
        for (PartitionInfo partition : producer.partitionsFor(topic)) {
            producer.send(new ProducerRecord<>(topic, partition.partition(), null, value + "-" + partition.partition()))
                    .get();
        }
        if (!offsets.isEmpty()) {
            producer.sendOffsetsToTransaction(offsets, group);
        }
    }
}
