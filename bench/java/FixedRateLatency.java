/*
 * Produce-to-consume latency at a fixed rate, the same for every broker (Kafka's own EndToEndLatency sends one
 * record at a time and waits for it, so its rate is whatever the latency allows; this probe holds the rate fixed).
 *
 *   java -cp '<kafka jars>/*:<classes>' FixedRateLatency BOOTSTRAP TOPIC RATE_PER_S SECONDS WARMUP_S SIZE ACKS
 *
 * One JVM runs both ends, so the due time written into each record (System.nanoTime(), the first 8 bytes of the
 * value) and the receive time come from the same clock. The producer sends asynchronously on a fixed schedule
 * (record i is due at start + i / rate; a late sender catches up instead of skipping, so stalls show as latency)
 * with linger.ms=0, as EndToEndLatency does, so that client-side batching does not hide the broker. The consumer
 * is assigned every partition, positioned at the end before the first send, and keeps the client's fetch defaults
 * (fetch.min.bytes=1, fetch.max.wait.ms=500): a record waits in the broker's fetch purgatory until it arrives.
 * Records sent during the first WARMUP_S seconds are not counted.
 *
 * Prints one JSON line: {"sent": n, "received": n, "counted": n, "mean_ms": x, "p50_ms": x, "p99_ms": x,
 * "p999_ms": x, "max_ms": x}.
 */

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class FixedRateLatency {
    // After the last send, how long the consumer may take to see the stragglers before the run fails.
    private static final long DRAIN_TIMEOUT_NS = 30_000_000_000L;
    // Each value starts with the time the record was due (nanoTime) and its sequence number.
    private static final int HEADER_BYTES = 2 * Long.BYTES;

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: FixedRateLatency BOOTSTRAP TOPIC RATE_PER_S SECONDS WARMUP_S SIZE ACKS");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        int rate = Integer.parseInt(args[2]);
        double seconds = Double.parseDouble(args[3]);
        double warmupSeconds = Double.parseDouble(args[4]);
        int size = Math.max(HEADER_BYTES, Integer.parseInt(args[5]));
        String acks = args[6];

        long total = (long) (rate * seconds);
        long warmupCount = (long) (rate * warmupSeconds);
        long[] latencies = new long[(int) total];
        long counted = 0;
        long received = 0;

        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(bootstrap));
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(bootstrap, acks))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);

            Thread sender = new Thread(() -> sendAtRate(producer, topic, rate, total, size), "fixed-rate-sender");
            sender.start();
            long drainDeadline = Long.MAX_VALUE;
            while (received < total && System.nanoTime() < drainDeadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    long now = System.nanoTime();
                    long sentAt = ByteBuffer.wrap(record.value()).getLong();
                    long index = ByteBuffer.wrap(record.value()).getLong(Long.BYTES);
                    received++;
                    if (index >= warmupCount) {
                        latencies[(int) counted++] = now - sentAt;
                    }
                }
                if (!sender.isAlive() && drainDeadline == Long.MAX_VALUE) {
                    drainDeadline = System.nanoTime() + DRAIN_TIMEOUT_NS;
                }
            }
            sender.join();
        }
        long[] sorted = Arrays.copyOf(latencies, (int) counted);
        Arrays.sort(sorted);
        double mean = counted == 0 ? 0 : Arrays.stream(sorted).average().orElse(0);
        System.out.printf("{\"sent\": %d, \"received\": %d, \"counted\": %d, \"mean_ms\": %.3f, \"p50_ms\": %.3f, "
                + "\"p99_ms\": %.3f, \"p999_ms\": %.3f, \"max_ms\": %.3f}%n", total, received, counted,
                mean / 1e6, quantileMs(sorted, 0.5), quantileMs(sorted, 0.99), quantileMs(sorted, 0.999),
                counted == 0 ? 0 : sorted[sorted.length - 1] / 1e6);
        if (received < total) {
            System.exit(1);
        }
    }

    private static void sendAtRate(KafkaProducer<byte[], byte[]> producer, String topic, int rate, long total,
                                   int size) {
        long periodNs = 1_000_000_000L / rate;
        long start = System.nanoTime();
        for (long i = 0; i < total; i++) {
            long due = start + i * periodNs;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            // The due time, not the send time: a stalled sender or a blocking send() counts against the broker
            // path rather than silently lowering the rate (coordinated omission).
            ByteBuffer value = ByteBuffer.allocate(size);
            value.putLong(due).putLong(i);
            producer.send(new ProducerRecord<>(topic, value.array()));
        }
        producer.flush();
    }

    private static double quantileMs(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))] / 1e6;
    }

    private static Properties producerProps(String bootstrap, String acks) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", acks);
        props.put("linger.ms", "0");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return props;
    }

    private static Properties consumerProps(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return props;
    }
}
