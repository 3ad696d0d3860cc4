/*
 * Many clients in one JVM, the same for every broker: what Kafka's ProducerPerformance and ConsumerPerformance, one
 * client each, do not show (a broker's cost per connection, a group's assignment and its members' fetches).
 *
 *   java -cp '<kafka jars>/*:<classes>' ManyClients produce BOOTSTRAP TOPIC PRODUCERS RECORDS SIZE ACKS
 *   java -cp '<kafka jars>/*:<classes>' ManyClients consume BOOTSTRAP TOPIC GROUP CONSUMERS RECORDS
 *
 * produce: PRODUCERS KafkaProducers (each its own connection) with the client's defaults but acks, each on its own
 * thread sending RECORDS / PRODUCERS records of SIZE bytes as fast as it may; send-to-ack latency of every record.
 * consume: CONSUMERS KafkaConsumers of one group (the client's defaults, auto.offset.reset=earliest), each on its own
 * thread, subscribed to TOPIC, until RECORDS records are read between them. Rebalance time is start to the first
 * record; the fetch figures count from the first record on, as ConsumerPerformance's do.
 * A JVM holds a hundred clients in far less memory and CPU than a hundred JVMs would on a 2-core machine.
 *
 * Prints one JSON line. produce: {"records", "records_per_s", "mb_per_s", "avg_latency_ms", "p50_ms", "p99_ms",
 * "p999_ms", "max_latency_ms", "producers"}; consume: {"records", "mb", "mb_per_s", "records_per_s", "rebalance_ms",
 * "fetch_ms", "fetch_mb_per_s", "fetch_records_per_s", "consumers", "consumers_with_records"}. MB = 2^20 bytes, as
 * Kafka's perf tools count.
 */

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ManyClients {
    private static final double MB = 1 << 20;
    // A group that has not read everything by then is stuck (a member without partitions, a lost assignment).
    private static final long CONSUME_TIMEOUT_NS = 600_000_000_000L;

    public static void main(String[] args) throws Exception {
        if (args.length == 7 && args[0].equals("produce")) {
            produce(args[1], args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]), Integer.parseInt(args[5]),
                    args[6]);
        } else if (args.length == 6 && args[0].equals("consume")) {
            consume(args[1], args[2], args[3], Integer.parseInt(args[4]), Long.parseLong(args[5]));
        } else {
            System.err.println("usage: ManyClients produce BOOTSTRAP TOPIC PRODUCERS RECORDS SIZE ACKS\n"
                               + "       ManyClients consume BOOTSTRAP TOPIC GROUP CONSUMERS RECORDS");
            System.exit(2);
        }
    }

    static void produce(String bootstrap, String topic, int producers, long records, int size, String acks)
            throws Exception {
        long perProducer = records / producers;
        long total = perProducer * producers;
        long[] latenciesNs = new long[(int) total];
        AtomicInteger next = new AtomicInteger();
        AtomicLong failed = new AtomicLong();
        byte[] value = new byte[size];
        List<KafkaProducer<byte[], byte[]>> clients = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            Properties props = new Properties();
            props.put("bootstrap.servers", bootstrap);
            props.put("acks", acks);
            props.put("client.id", "many-clients-producer-" + i);
            clients.add(new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer()));
        }
        for (KafkaProducer<byte[], byte[]> client : clients) {
            client.partitionsFor(topic); // connected and holding metadata before the clock starts
        }
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (KafkaProducer<byte[], byte[]> client : clients) {
            Thread thread = new Thread(() -> {
                for (long n = 0; n < perProducer; n++) {
                    long sentAt = System.nanoTime();
                    client.send(new ProducerRecord<>(topic, value), (metadata, error) -> {
                        if (error != null) {
                            failed.incrementAndGet();
                        }
                        latenciesNs[next.getAndIncrement()] = System.nanoTime() - sentAt;
                    });
                }
                client.flush();
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        clients.forEach(KafkaProducer::close);
        if (failed.get() > 0) {
            System.err.println(failed.get() + " of " + total + " records failed");
            System.exit(1);
        }
        Arrays.sort(latenciesNs);
        double sumMs = 0;
        for (long ns : latenciesNs) {
            sumMs += ns / 1e6;
        }
        System.out.println(String.format(Locale.ROOT,
            "{\"records\": %d, \"records_per_s\": %.1f, \"mb_per_s\": %.3f, \"avg_latency_ms\": %.2f, "
            + "\"p50_ms\": %.2f, \"p99_ms\": %.2f, \"p999_ms\": %.2f, \"max_latency_ms\": %.2f, \"producers\": %d}",
            total, total / seconds, total * (double) size / MB / seconds, sumMs / total,
            quantileMs(latenciesNs, 0.5), quantileMs(latenciesNs, 0.99), quantileMs(latenciesNs, 0.999),
            latenciesNs[latenciesNs.length - 1] / 1e6, producers));
    }

    static void consume(String bootstrap, String topic, String group, int consumers, long records) throws Exception {
        AtomicLong count = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicLong firstRecordNs = new AtomicLong();
        AtomicInteger withRecords = new AtomicInteger();
        long start = System.nanoTime();
        long deadline = start + CONSUME_TIMEOUT_NS;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            Properties props = new Properties();
            props.put("bootstrap.servers", bootstrap);
            props.put("group.id", group);
            props.put("client.id", "many-clients-consumer-" + i);
            props.put("auto.offset.reset", "earliest");
            Thread thread = new Thread(() -> {
                boolean gotAny = false;
                try (KafkaConsumer<byte[], byte[]> consumer =
                         new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(List.of(topic));
                    while (count.get() < records && System.nanoTime() < deadline) {
                        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(100));
                        if (batch.isEmpty()) {
                            continue;
                        }
                        firstRecordNs.compareAndSet(0, System.nanoTime());
                        if (!gotAny) {
                            gotAny = true;
                            withRecords.incrementAndGet();
                        }
                        long size = 0;
                        for (ConsumerRecord<byte[], byte[]> record : batch) {
                            size += record.serializedValueSize() + Math.max(0, record.serializedKeySize());
                        }
                        bytes.addAndGet(size);
                        count.addAndGet(batch.count());
                    }
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        long end = System.nanoTime();
        if (count.get() < records) {
            System.err.println("read " + count.get() + " of " + records + " records before the timeout");
            System.exit(1);
        }
        double seconds = (end - start) / 1e9;
        double fetchSeconds = (end - firstRecordNs.get()) / 1e9;
        double mb = bytes.get() / MB;
        System.out.println(String.format(Locale.ROOT,
            "{\"records\": %d, \"mb\": %.3f, \"mb_per_s\": %.3f, \"records_per_s\": %.1f, \"rebalance_ms\": %.1f, "
            + "\"fetch_ms\": %.1f, \"fetch_mb_per_s\": %.3f, \"fetch_records_per_s\": %.1f, \"consumers\": %d, "
            + "\"consumers_with_records\": %d}",
            count.get(), mb, mb / seconds, count.get() / seconds, (firstRecordNs.get() - start) / 1e6,
            fetchSeconds * 1e3, mb / fetchSeconds, count.get() / fetchSeconds, consumers, withRecords.get()));
    }

    private static double quantileMs(long[] sortedNs, double q) {
        return sortedNs[Math.min(sortedNs.length - 1, (int) (sortedNs.length * q))] / 1e6;
    }
}
