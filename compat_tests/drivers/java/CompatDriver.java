// The Java kafka-clients driver of the compatibility matrix. One source, compiled against kafka-clients 3.9.x and
// 4.x (so it uses only API present in both). Run as
//     java -cp <classes>:<jars>/* CompatDriver SCENARIOS BOOTSTRAP TOPIC_PREFIX
// where SCENARIOS is comma-separated; for each scenario it prints one JSON line
//     {"scenario": "...", "ok": true|false, "detail": "...", "seconds": 1.23}
// The scenarios, their data and checks are those of compat_tests/scenarios.py and drivers/python/driver_common.py.
// One JVM runs every scenario: a JVM start costs more than most scenarios on 2 cores.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class CompatDriver {
    static final int RECORD_COUNT = 10;
    static final int COMPRESSED_COUNT = 200;
    static final int LARGE_RECORD_BYTES = 1_000_000;
    static final int LARGE_RECORD_COUNT = 3;
    static final int IDEMPOTENT_COUNT = 500;
    static final int GROUP_PARTITIONS = 4;
    static final int GROUP_RECORDS_PER_PARTITION = 10;
    static final long SEEK_STEP_MS = 1000;
    static final int SEEK_TARGET_INDEX = 5;
    static final String RETENTION_MS = "3600000";
    static final long DEADLINE_MS = 60_000;
    static final int FAILOVER_COUNT = 300;
    static final int FAILOVER_PARTITIONS = 3;
    static final short FAILOVER_REPLICAS = 3;
    static final String FAILOVER_MIN_ISR = "2";
    // The compacted scenario (driver_common.py's COMPACTED_* explain them).
    static final Map<String, String> COMPACTED_CONFIG = Map.of("cleanup.policy", "compact", "segment.ms", "100",
            "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", "1000");
    static final int COMPACTED_KEYS = 20;
    static final int COMPACTED_ROUNDS = 5;
    static final int COMPACTED_DELETED = 5;
    static final String COMPACTED_FILLER_KEY = "filler";
    static final long COMPACTED_FILLER_INTERVAL_MS = 500;
    static final long COMPACTED_DEADLINE_MS = 120_000;

    final String bootstrap;
    final String prefix;

    CompatDriver(String bootstrap, String prefix) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
    }

    public static void main(String[] args) {
        CompatDriver driver = new CompatDriver(args[1], args[2]);
        for (String scenario : args[0].split(",")) {
            long started = System.nanoTime();
            boolean ok;
            String detail;
            try {
                detail = driver.run(scenario);
                ok = true;
            } catch (Throwable e) {
                ok = false;
                Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                detail = cause.getClass().getSimpleName() + ": " + cause.getMessage() + where(e);
                e.printStackTrace();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("{\"scenario\": %s, \"ok\": %s, \"detail\": %s, \"seconds\": %.2f}%n",
                    json(scenario), ok, json(detail), seconds);
            System.out.flush();
        }
        System.exit(0);  // client threads may linger; the results are out
    }

    /** " (CompatDriver.java:123)": the last line of this driver that the failure passed through. */
    static String where(Throwable e) {
        for (StackTraceElement frame : e.getStackTrace()) {
            if (frame.getClassName().startsWith("CompatDriver") && !frame.getMethodName().equals("expect")) {
                return " (" + frame.getFileName() + ":" + frame.getLineNumber() + ")";
            }
        }
        return "";
    }

    String run(String scenario) throws Exception {
        switch (scenario) {
            case "metadata": return metadata();
            case "roundtrip": return roundtrip();
            case "compression_gzip": return compression("gzip");
            case "compression_snappy": return compression("snappy");
            case "compression_lz4": return compression("lz4");
            case "compression_zstd": return compression("zstd");
            case "large_records": return largeRecords();
            case "seek": return seek();
            case "idempotent": return idempotent();
            case "consumer_group": return consumerGroup();
            case "admin": return admin();
            case "failover": return failover();
            case "transactions": return transactions();
            case "compacted": return compacted();
            case "share_group": return shareGroup();
            case "sasl_scram": return secured("sasl_scram", Map.of(
                    "bootstrap.servers", System.getenv("COMPAT_SASL_BOOTSTRAP"), "security.protocol", "SASL_PLAINTEXT",
                    "sasl.mechanism", "SCRAM-SHA-512",
                    "sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                            + System.getenv("COMPAT_SCRAM_USER") + "\" password=\""
                            + System.getenv("COMPAT_SCRAM_PASSWORD") + "\";"));
            case "tls": return secured("tls", Map.of(
                    "bootstrap.servers", System.getenv("COMPAT_TLS_BOOTSTRAP"), "security.protocol", "SSL",
                    "ssl.truststore.type", "PEM", "ssl.truststore.location", System.getenv("COMPAT_TLS_CA")));
            default: throw new UnsupportedOperationException("not implemented");
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : String.valueOf(s).toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    static void expect(boolean condition, String message) {
        if (!condition) throw new AssertionError(message);
    }

    static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long until = System.currentTimeMillis() + DEADLINE_MS;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > until) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(100);
        }
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    String topic(String scenario) {
        return prefix + "." + scenario;
    }

    Admin adminClient() {
        return adminClient(new Properties());
    }

    Admin adminClient(Properties props) {
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = adminClient()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    KafkaProducer<byte[], byte[]> producer(Map<String, Object> extra) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.putAll(extra);
        return new KafkaProducer<>(config);
    }

    KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> extra) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.putAll(extra);
        return new KafkaConsumer<>(config);
    }

    /** Send every record and wait for each acknowledgement. */
    void produce(List<ProducerRecord<byte[], byte[]>> records, Map<String, Object> extra) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer(extra)) {
            sendAll(producer, records);
        }
    }

    /** Records of partition 0 from offset 0 until count have come (or the deadline passes). */
    List<ConsumerRecord<byte[], byte[]>> consumeAssigned(String topic, int count) {
        return consumeAssigned(topic, count, Map.of());
    }

    List<ConsumerRecord<byte[], byte[]>> consumeAssigned(String topic, int count, Map<String, Object> extra) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(extra)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long until = System.currentTimeMillis() + DEADLINE_MS;
            while (out.size() < count && System.currentTimeMillis() < until) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) out.add(r);
            }
        }
        return out;
    }

    static String checkValues(List<ConsumerRecord<byte[], byte[]>> records, List<byte[]> expected, String what) {
        expect(records.size() == expected.size(),
                what + ": consumed " + records.size() + " records, expected " + expected.size());
        for (int i = 0; i < expected.size(); i++) {
            expect(Arrays.equals(records.get(i).value(), expected.get(i)), what + ": record " + i + " differs");
        }
        return what + ": " + records.size() + " records intact and in order";
    }

    static byte[] compressibleValue(int i) {
        return bytes(String.format("compressible-%05d-", i).repeat(20));
    }

    // ---- scenarios -----------------------------------------------------------------------------------------

    String metadata() throws Exception {
        String topic = topic("metadata");
        createTopic(topic, 3);
        // The matrix finds this client's requests by its id in both brokers' request logs (compat_tests/negotiated.py).
        Properties named = new Properties();
        named.put(AdminClientConfig.CLIENT_ID_CONFIG, prefix + ".metadata");
        try (Admin admin = adminClient(named)) {
            DescribeClusterResult cluster = admin.describeCluster();
            List<Node> nodes = new ArrayList<>(cluster.nodes().get());
            expect(nodes.size() == 1, "expected 1 broker, metadata lists " + nodes.size());
            Node broker = nodes.get(0);
            expect((broker.host() + ":" + broker.port()).equals(bootstrap),
                    "broker at " + broker.host() + ":" + broker.port() + ", not " + bootstrap);
            // Kafka applies a created topic to its brokers' metadata asynchronously: wait until it is described.
            waitUntil(() -> {
                try {
                    admin.describeTopics(List.of(topic)).allTopicNames().get();
                    return true;
                } catch (Exception e) {
                    return false;
                }
            }, "topic " + topic + " described after creation");
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            expect(description.partitions().size() == 3, "topic has " + description.partitions().size() + " partitions");
            description.partitions().forEach(p -> expect(p.leader() != null && p.leader().id() == broker.id(),
                    "partition " + p.partition() + " leader " + p.leader()));
            return "1 broker (node " + broker.id() + " at " + broker.host() + ":" + broker.port() + "); " + topic
                    + ": 3 partitions led by it";
        }
    }

    String roundtrip() throws Exception {
        String topic = topic("roundtrip");
        createTopic(topic, 1);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < RECORD_COUNT; i++) {
            List<Header> headers = List.of(new RecordHeader("trace", bytes("t-" + i)), new RecordHeader("empty", new byte[0]));
            records.add(new ProducerRecord<>(topic, 0, bytes("key-" + i), i % 3 == 2 ? null : bytes("value-" + i), headers));
        }
        produce(records, Map.of());
        List<ConsumerRecord<byte[], byte[]>> got = consumeAssigned(topic, RECORD_COUNT);
        expect(got.size() == RECORD_COUNT, "consumed " + got.size() + " records, expected " + RECORD_COUNT);
        int nulls = 0;
        for (int i = 0; i < RECORD_COUNT; i++) {
            ConsumerRecord<byte[], byte[]> r = got.get(i);
            expect(r.offset() == i, "record " + i + " has offset " + r.offset());
            expect(("key-" + i).equals(text(r.key())), "record " + i + ": key " + text(r.key()));
            String want = i % 3 == 2 ? null : "value-" + i;
            expect(Objects.equals(want, text(r.value())), "record " + i + ": value " + text(r.value()));
            if (r.value() == null) nulls++;
            Header[] headers = r.headers().toArray();
            expect(headers.length == 2 && headers[0].key().equals("trace") && ("t-" + i).equals(text(headers[0].value()))
                    && headers[1].key().equals("empty") && (headers[1].value() == null || headers[1].value().length == 0),
                    "record " + i + ": headers " + Arrays.toString(headers));
        }
        return RECORD_COUNT + " records: keys, " + nulls + " null values, headers intact";
    }

    /** The sasl_scram and tls cells: 10 records through a secured listener (compat_tests/security_listeners.py). */
    String secured(String scenario, Map<String, Object> security) throws Exception {
        String topic = topic(scenario);
        createTopic(topic, 1);
        List<byte[]> expected = new ArrayList<>();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < RECORD_COUNT; i++) {
            expected.add(bytes("secret-" + i));
            records.add(new ProducerRecord<>(topic, 0, null, bytes("secret-" + i)));
        }
        produce(records, security);
        return checkValues(consumeAssigned(topic, expected.size(), security), expected,
                scenario + " (" + security.get("security.protocol") + ")");
    }

    String compression(String codec) throws Exception {
        String topic = topic("compression_" + codec);
        createTopic(topic, 1);
        List<byte[]> expected = new ArrayList<>();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < COMPRESSED_COUNT; i++) {
            expected.add(compressibleValue(i));
            records.add(new ProducerRecord<>(topic, 0, null, compressibleValue(i)));
        }
        produce(records, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.LINGER_MS_CONFIG, 20));
        return checkValues(consumeAssigned(topic, expected.size()), expected, codec);
    }

    String largeRecords() throws Exception {
        String topic = topic("large_records");
        createTopic(topic, 1);
        Random random = new Random();
        List<byte[]> expected = new ArrayList<>();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < LARGE_RECORD_COUNT; i++) {
            byte[] value = new byte[LARGE_RECORD_BYTES];
            random.nextBytes(value);
            expected.add(value);
            records.add(new ProducerRecord<>(topic, 0, null, value));
        }
        produce(records, Map.of());
        return checkValues(consumeAssigned(topic, expected.size()), expected, "1 MB records");
    }

    static long nextOffset(KafkaConsumer<byte[], byte[]> consumer) {
        long until = System.currentTimeMillis() + DEADLINE_MS;
        while (System.currentTimeMillis() < until) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
            if (!records.isEmpty()) return records.iterator().next().offset();
        }
        throw new AssertionError("no record came after the seek");
    }

    String seek() throws Exception {
        String topic = topic("seek");
        createTopic(topic, 1);
        long base = System.currentTimeMillis() - 60_000;
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < RECORD_COUNT; i++) {
            records.add(new ProducerRecord<>(topic, 0, base + i * SEEK_STEP_MS, bytes("key-" + i), bytes("v")));
        }
        produce(records, Map.of());
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long first = nextOffset(consumer);
            expect(first == 0, "after seek to beginning read offset " + first);
            long target = base + SEEK_TARGET_INDEX * SEEK_STEP_MS - SEEK_STEP_MS / 2;
            OffsetAndTimestamp found = consumer.offsetsForTimes(Map.of(tp, target)).get(tp);
            expect(found != null && found.offset() == SEEK_TARGET_INDEX, "offsetsForTimes gave " + found);
            consumer.seek(tp, found.offset());
            long atTime = nextOffset(consumer);
            expect(atTime == SEEK_TARGET_INDEX, "after seek to timestamp read offset " + atTime);
            consumer.seekToEnd(List.of(tp));
            long end = consumer.position(tp);
            produce(List.of(new ProducerRecord<>(topic, 0, null, bytes("after-end"))), Map.of());
            long afterEnd = nextOffset(consumer);
            expect(afterEnd == RECORD_COUNT, "after seek to end (position " + end + ") read offset " + afterEnd);
            return "beginning -> 0, timestamp -> " + atTime + ", end -> " + afterEnd;
        }
    }

    String idempotent() throws Exception {
        String topic = topic("idempotent");
        createTopic(topic, 1);
        List<byte[]> expected = new ArrayList<>();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < IDEMPOTENT_COUNT; i++) {
            expected.add(bytes("idempotent-" + i));
            records.add(new ProducerRecord<>(topic, 0, null, bytes("idempotent-" + i)));
        }
        produce(records, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"));
        List<ConsumerRecord<byte[], byte[]>> got = consumeAssigned(topic, expected.size());
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            expect(end == IDEMPOTENT_COUNT, "log end offset " + end + ", expected " + IDEMPOTENT_COUNT + " (duplicates?)");
        }
        return checkValues(got, expected, "idempotent");
    }

    /**
     * One committed and one aborted transaction; a second producer with the same transactional.id fences the first
     * in the middle of a transaction (its commit fails) and commits its own; read_committed reads the two committed
     * records only.
     */
    String transactions() throws Exception {
        String topic = topic("transactions");
        createTopic(topic, 1);
        Map<String, Object> transactional = Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic);
        String fenced;
        try (KafkaProducer<byte[], byte[]> zombie = producer(transactional)) {
            zombie.initTransactions();
            sendInTransaction(zombie, topic, "committed");
            zombie.commitTransaction();
            sendInTransaction(zombie, topic, "aborted");
            zombie.abortTransaction();
            sendInTransaction(zombie, topic, "zombie");
            try (KafkaProducer<byte[], byte[]> successor = producer(transactional)) {
                successor.initTransactions();  // fences the first producer and aborts its open transaction
                try {
                    zombie.commitTransaction();
                    throw new AssertionError("the fenced producer committed");
                } catch (KafkaException e) {
                    fenced = e.getClass().getSimpleName();
                }
                sendInTransaction(successor, topic, "successor");
                successor.commitTransaction();
            }
        }
        List<ConsumerRecord<byte[], byte[]>> got = consumeAssigned(topic, 2,
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
        checkValues(got, List.of(bytes("committed"), bytes("successor")), "read_committed");
        return "commit visible, abort invisible under read_committed, the zombie fenced (" + fenced + ")";
    }

    static void sendInTransaction(KafkaProducer<byte[], byte[]> producer, String topic, String value)
            throws Exception {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(topic, 0, null, bytes(value))).get();
    }

    /**
     * A compacted topic: every key written ROUNDS times, the last DELETED keys then deleted; one filler record at a
     * time (each rolls a segment, so the cleaner finds dirt again) until the log read from offset 0 holds only the
     * latest value of each live key and nothing of the deleted ones (fillers aside).
     */
    String compacted() throws Exception {
        String topic = topic("compacted");
        try (Admin admin = adminClient()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(COMPACTED_CONFIG))).all().get();
        }
        long started = System.nanoTime();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of());
             KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
            for (int r = 0; r < COMPACTED_ROUNDS; r++) {
                for (int k = 0; k < COMPACTED_KEYS; k++) {
                    records.add(new ProducerRecord<>(topic, 0, bytes("key-" + k), bytes("value-" + k + "-" + r)));
                }
            }
            for (int k = COMPACTED_KEYS - COMPACTED_DELETED; k < COMPACTED_KEYS; k++) {
                records.add(new ProducerRecord<>(topic, 0, bytes("key-" + k), null));
            }
            sendAll(producer, records);
            consumer.assign(List.of(tp));
            long until = System.currentTimeMillis() + COMPACTED_DEADLINE_MS;
            int fillers = 0;
            String leftover;
            while ((leftover = compactedLeftovers(readAll(consumer, tp))) != null) {
                expect(System.currentTimeMillis() < until, "not compacted after " + fillers + " filler segments: "
                        + leftover);
                Thread.sleep(COMPACTED_FILLER_INTERVAL_MS);
                sendAll(producer, List.of(new ProducerRecord<>(topic, 0, bytes(COMPACTED_FILLER_KEY),
                        bytes(String.valueOf(fillers)))));
                fillers++;
            }
            return (COMPACTED_KEYS - COMPACTED_DELETED) + " keys at their latest value only, " + COMPACTED_DELETED
                    + " deleted keys gone, after " + Math.round((System.nanoTime() - started) / 1e9) + " s ("
                    + fillers + " filler segments)";
        }
    }

    /** Every record of the partition from offset 0 to its end. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(KafkaConsumer<byte[], byte[]> consumer, TopicPartition tp) {
        consumer.seekToBeginning(List.of(tp));
        long end = consumer.endOffsets(List.of(tp)).get(tp);
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long until = System.currentTimeMillis() + DEADLINE_MS;
        while (consumer.position(tp) < end) {
            expect(System.currentTimeMillis() < until, "offset " + end + " not reached");
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) out.add(r);
        }
        return out;
    }

    /** What in the log (fillers aside) is not yet the compacted table, or null (driver_common.compacted_leftovers). */
    static String compactedLeftovers(List<ConsumerRecord<byte[], byte[]>> log) {
        Map<String, String> latest = new HashMap<>();
        int count = 0;
        for (ConsumerRecord<byte[], byte[]> r : log) {
            String key = text(r.key());
            if (COMPACTED_FILLER_KEY.equals(key)) continue;
            latest.put(key, text(r.value()));
            count++;
        }
        int live = COMPACTED_KEYS - COMPACTED_DELETED;
        for (int k = 0; k < live; k++) {
            String want = "value-" + k + "-" + (COMPACTED_ROUNDS - 1);
            expect(want.equals(latest.get("key-" + k)), "key-" + k + " is not at its latest value");
        }
        if (count > latest.size()) return (count - latest.size()) + " superseded records";
        long deleted = latest.keySet().stream().filter(k -> Integer.parseInt(k.substring(4)) >= live).count();
        return deleted > 0 ? deleted + " deleted keys still there" : null;
    }

    /**
     * Three brokers: 150 of 300 records from an idempotent acks=all producer, the runner kills -9 partition 0's
     * leader (handshake files in $COMPAT_FAILOVER_DIR, as driver_common.kill_leader_and_wait), the other 150 from
     * the same producer; all read back with assign(), exactly once and in order on each partition.
     */
    String failover() throws Exception {
        String topic = topic("failover");
        try (Admin admin = adminClient()) {
            admin.createTopics(List.of(new NewTopic(topic, FAILOVER_PARTITIONS, FAILOVER_REPLICAS)
                    .configs(Map.of("min.insync.replicas", FAILOVER_MIN_ISR)))).all().get();
        }
        Map<Integer, List<byte[]>> expected = new TreeMap<>();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < FAILOVER_COUNT; i++) {
            int partition = i % FAILOVER_PARTITIONS;
            expected.computeIfAbsent(partition, p -> new ArrayList<>()).add(bytes("failover-" + i));
            records.add(new ProducerRecord<>(topic, partition, null, bytes("failover-" + i)));
        }
        int half = FAILOVER_COUNT / 2;
        String killed;
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"))) {
            sendAll(producer, records.subList(0, half));
            killed = killLeaderAndWait(topic);
            sendAll(producer, records.subList(half, FAILOVER_COUNT));
        }
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < FAILOVER_PARTITIONS; p++) partitions.add(new TopicPartition(topic, p));
        Map<Integer, List<ConsumerRecord<byte[], byte[]>>> got = new TreeMap<>();
        int total = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long until = System.currentTimeMillis() + DEADLINE_MS;
            while (total < FAILOVER_COUNT && System.currentTimeMillis() < until) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    got.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r);
                    total++;
                }
            }
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            for (TopicPartition tp : partitions) {
                long want = expected.get(tp.partition()).size();
                expect(ends.get(tp) == want, "log end offset of partition " + tp.partition() + " is " + ends.get(tp)
                        + ", expected " + want + " (duplicates?)");
            }
        }
        for (int p = 0; p < FAILOVER_PARTITIONS; p++) {
            checkValues(got.getOrDefault(p, List.of()), expected.get(p), "partition " + p);
        }
        return "broker " + killed + " (leader of partition 0) killed after " + half + " records; all "
                + FAILOVER_COUNT + " read back once, in order on each of " + FAILOVER_PARTITIONS + " partitions";
    }

    static void sendAll(KafkaProducer<byte[], byte[]> producer, List<ProducerRecord<byte[], byte[]>> records)
            throws Exception {
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> record : records) acks.add(producer.send(record));
        for (Future<RecordMetadata> ack : acks) ack.get();
    }

    /** Write `ready` (the topic) in $COMPAT_FAILOVER_DIR, wait for the runner's `killed` (the node id). */
    static String killLeaderAndWait(String topic) throws Exception {
        String dir = System.getenv("COMPAT_FAILOVER_DIR");
        expect(dir != null, "COMPAT_FAILOVER_DIR is not set: failover runs on a three-broker cluster only");
        java.nio.file.Path tmp = java.nio.file.Path.of(dir, "ready.tmp");
        java.nio.file.Files.writeString(tmp, topic);
        java.nio.file.Files.move(tmp, java.nio.file.Path.of(dir, "ready"),
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        java.nio.file.Path killed = java.nio.file.Path.of(dir, "killed");
        waitUntil(() -> java.nio.file.Files.exists(killed), "the runner to kill the leader");
        String node = java.nio.file.Files.readString(killed).trim();
        expect(!node.equals("-1"), "the runner found no leader to kill");
        return node;
    }

    /** One member of the group: polled from the scenario's thread, committing synchronously after each poll. */
    final class Member {
        final KafkaConsumer<byte[], byte[]> consumer;
        final Set<String> seen = new HashSet<>();

        Member(String topic, String group) {
            consumer = consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
            consumer.subscribe(List.of(topic));
        }

        void pollOnce() {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                seen.add(r.partition() + "@" + r.offset());
            }
            try {
                consumer.commitSync();
            } catch (RebalanceInProgressException | CommitFailedException e) {
                // the group is rebalancing: the next poll rejoins and the next commit carries these offsets
            }
        }

        Set<Integer> assignment() {
            Set<Integer> out = new HashSet<>();
            for (TopicPartition tp : consumer.assignment()) out.add(tp.partition());
            return out;
        }
    }

    /** Poll every member in turn until the condition holds: a rebalance needs each member to come back to poll. */
    static void pollUntil(List<Member> members, BooleanSupplier condition, String what) {
        long until = System.currentTimeMillis() + DEADLINE_MS;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > until) throw new AssertionError("timed out waiting for " + what);
            for (Member m : members) m.pollOnce();
        }
    }

    String consumerGroup() throws Exception {
        String topic = topic("consumer_group");
        String group = topic + ".group";
        createTopic(topic, GROUP_PARTITIONS);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int p = 0; p < GROUP_PARTITIONS; p++) {
            for (int i = 0; i < GROUP_RECORDS_PER_PARTITION; i++) {
                records.add(new ProducerRecord<>(topic, p, null, bytes(p + "-" + i)));
            }
        }
        produce(records, Map.of());
        int total = GROUP_PARTITIONS * GROUP_RECORDS_PER_PARTITION;
        Member a = new Member(topic, group);
        try {
            pollUntil(List.of(a), () -> a.assignment().size() == GROUP_PARTITIONS, "A to get all 4 partitions");
            Member b = new Member(topic, group);
            try {
                List<Member> both = List.of(a, b);
                pollUntil(both, () -> a.assignment().size() == 2 && b.assignment().size() == 2
                        && Collections.disjoint(a.assignment(), b.assignment()), "the rebalance to 2+2");
                String split = "A " + new TreeSet<>(a.assignment()) + " + B " + new TreeSet<>(b.assignment());
                Set<String> union = new HashSet<>();
                pollUntil(both, () -> {
                    union.clear();
                    union.addAll(a.seen);
                    union.addAll(b.seen);
                    return union.size() == total;
                }, "all " + total + " records");
                a.pollOnce();
                b.pollOnce();
                try (Admin admin = adminClient()) {
                    Map<TopicPartition, OffsetAndMetadata> committed =
                            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                    Map<Integer, Long> offsets = new TreeMap<>();
                    committed.forEach((tp, om) -> offsets.put(tp.partition(), om.offset()));
                    Map<Integer, Long> want = new TreeMap<>();
                    for (int p = 0; p < GROUP_PARTITIONS; p++) want.put(p, (long) GROUP_RECORDS_PER_PARTITION);
                    expect(offsets.equals(want), "committed offsets " + offsets);
                }
                return "A: 4 partitions, then " + split + "; " + total + " records; committed 10 on each partition";
            } finally {
                b.consumer.close();
            }
        } finally {
            a.consumer.close();
        }
    }

    String admin() throws Exception {
        String topic = topic("admin");
        try (Admin admin = adminClient()) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1).configs(Map.of("retention.ms", RETENTION_MS))))
                    .all().get();
            try {
                admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
                throw new AssertionError("creating the topic again did not fail");
            } catch (ExecutionException e) {
                expect(e.getCause() instanceof TopicExistsException, "second create failed with " + e.getCause());
            }
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            expect(description.partitions().size() == 3, "topic has " + description.partitions().size() + " partitions");
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            String retention = config.get("retention.ms").value();
            String cleanup = config.get("cleanup.policy").value();
            expect(RETENTION_MS.equals(retention), "retention.ms = " + retention);
            expect("delete".equals(cleanup), "cleanup.policy = " + cleanup);
            admin.deleteTopics(List.of(topic)).all().get();
            waitUntil(() -> {
                try {
                    return !admin.listTopics().names().get().contains(topic);
                } catch (Exception e) {
                    return false;
                }
            }, "the deleted topic to leave the topic list");
        }
        return "created, duplicate refused, 3 partitions, retention.ms=" + RETENTION_MS + ", deleted";
    }

    // ---- share_group (KIP-932): KafkaShareConsumer is kafka-clients 4.x only, so it is reached by reflection and
    // this one source still compiles against 3.9 (whose row does not list the scenario).
    static final int SHARE_RECORDS = 200;
    static final int SHARE_PARTITIONS = 2;
    static final String SHARE_REJECTED = "7";
    static final int SHARE_RELEASE_EVERY = 10;
    static final byte GROUP_RESOURCE = 32;  // ConfigResource.Type.GROUP

    String shareGroup() throws Exception {
        String topic = topic("share_group");
        String group = topic + ".group";
        createTopic(topic, SHARE_PARTITIONS);
        try (Admin admin = adminClient()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.forId(GROUP_RESOURCE), group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get();
        }
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < SHARE_RECORDS; i++) {
            records.add(new ProducerRecord<>(topic, i % SHARE_PARTITIONS, null,
                    Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
        }
        produce(records, Map.of());
        Map<String, Integer> accepted = new java.util.concurrent.ConcurrentHashMap<>();
        Map<String, Integer> rejected = new java.util.concurrent.ConcurrentHashMap<>();
        Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        int[] byMember = new int[2];
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> members = new ArrayList<>();
        for (int index = 0; index < 2; index++) {
            int member = index;
            Thread thread = new Thread(() -> {
                try {
                    shareMember(topic, group, member, accepted, rejected, released, byMember, done);
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            thread.start();
            members.add(thread);
        }
        long until = System.currentTimeMillis() + DEADLINE_MS;
        while (accepted.size() < SHARE_RECORDS - 1 && failures.isEmpty() && System.currentTimeMillis() < until) {
            Thread.sleep(100);
        }
        done.set(true);
        for (Thread thread : members) {
            thread.join(DEADLINE_MS);
        }
        if (!failures.isEmpty()) {
            throw new Exception(failures.get(0));
        }
        expect(accepted.size() == SHARE_RECORDS - 1, accepted.size() + " of " + (SHARE_RECORDS - 1) + " accepted");
        for (Map.Entry<String, Integer> entry : accepted.entrySet()) {
            expect(entry.getValue() == 1 && !entry.getKey().equals(SHARE_REJECTED),
                    "value " + entry.getKey() + " accepted " + entry.getValue() + " times");
        }
        expect(rejected.getOrDefault(SHARE_REJECTED, 0) == 1, "value " + SHARE_REJECTED + " delivered and rejected "
                + rejected.getOrDefault(SHARE_REJECTED, 0) + " times, not once");
        expect(released.size() == SHARE_RECORDS / SHARE_RELEASE_EVERY, released.size() + " values released, not "
                + SHARE_RECORDS / SHARE_RELEASE_EVERY);
        for (String value : released) {
            expect(accepted.containsKey(value), "released value " + value + " was not redelivered and accepted");
        }
        return accepted.size() + " records accepted once each (A " + byMember[0] + ", B " + byMember[1] + "); "
                + released.size() + " released then redelivered; " + SHARE_REJECTED + " rejected, never again";
    }

    /** One member: ACCEPT, except the first delivery of every tenth value (RELEASE) and value 7 (REJECT). */
    void shareMember(String topic, String group, int member, Map<String, Integer> accepted,
                     Map<String, Integer> rejected, Set<String> released, int[] byMember,
                     java.util.concurrent.atomic.AtomicBoolean done) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put("share.acknowledgement.mode", "explicit");
        Class<?> shareConsumer = Class.forName("org.apache.kafka.clients.consumer.KafkaShareConsumer");
        Class<?> ackType = Class.forName("org.apache.kafka.clients.consumer.AcknowledgeType");
        Object accept = ackType.getField("ACCEPT").get(null);
        Object release = ackType.getField("RELEASE").get(null);
        Object reject = ackType.getField("REJECT").get(null);
        Object consumer = shareConsumer.getConstructor(Map.class).newInstance(config);
        java.lang.reflect.Method acknowledge = shareConsumer.getMethod("acknowledge", ConsumerRecord.class, ackType);
        java.lang.reflect.Method deliveryCount = ConsumerRecord.class.getMethod("deliveryCount");
        try {
            shareConsumer.getMethod("subscribe", java.util.Collection.class).invoke(consumer, List.of(topic));
            java.lang.reflect.Method poll = shareConsumer.getMethod("poll", Duration.class);
            java.lang.reflect.Method commitSync = shareConsumer.getMethod("commitSync");
            while (!done.get()) {
                @SuppressWarnings("unchecked")
                ConsumerRecords<byte[], byte[]> polled =
                        (ConsumerRecords<byte[], byte[]>) poll.invoke(consumer, Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> record : polled) {
                    String value = text(record.value());
                    short deliveries = ((java.util.Optional<?>) deliveryCount.invoke(record))
                            .map(count -> (Short) count).orElse((short) 1);
                    Object type = accept;
                    if (value.equals(SHARE_REJECTED)) {
                        type = reject;
                        rejected.merge(value, 1, Integer::sum);
                    } else if (deliveries == 1 && Integer.parseInt(value) % SHARE_RELEASE_EVERY == 0) {
                        type = release;
                        released.add(value);
                    } else {
                        accepted.merge(value, 1, Integer::sum);
                        synchronized (byMember) {
                            byMember[member]++;
                        }
                    }
                    acknowledge.invoke(consumer, record, type);
                }
                if (!polled.isEmpty()) {
                    commitSync.invoke(consumer);
                }
            }
        } finally {
            ((AutoCloseable) consumer).close();
        }
    }
}
