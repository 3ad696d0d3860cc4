// The share-group (KIP-932) driver: Java's KafkaShareConsumer against a broker, one role per process, so a test can
// run two members side by side and kill one with SIGKILL. Compiled against kafka-clients 4.x.
//     java -cp <classes>:<jars>/* ShareDriver produce  BOOTSTRAP TOPIC COUNT [FIRST]
//     java -cp <classes>:<jars>/* ShareDriver config   BOOTSTRAP GROUP KEY=VALUE...
//     java -cp <classes>:<jars>/* ShareDriver consume  BOOTSTRAP GROUP TOPIC IDLE_SECONDS [ACTION=VALUES]...
// produce writes values "FIRST".."FIRST+COUNT-1" (FIRST 0 unless given; key = value) and prints "produced COUNT".
// config sets group configs (IncrementalAlterConfigs on the GROUP resource), e.g. share.auto.offset.reset=earliest.
// consume polls until nothing arrived for IDLE_SECONDS (0: forever; before the first record, 30 s) and acknowledges each record explicitly, printing
// one line per record as it acknowledges it: "<ACK> <value> <offset> <delivery count> <wall clock ms>"; actions
// choose the type:
//     release=V1,V2  RELEASE those values (every delivery), reject=V1,V2  REJECT them,
//     release-first=K  RELEASE each record's first delivery if its value % K == 0,
//     hold=N  take the first N records and never acknowledge them (then wait to be killed), max=N stop after N,
//     poll=N  max.poll.records.
// It prints "ready" after its first poll, so a test knows it joined.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ShareDriver {
    static final long FIRST_RECORD_MS = 30_000;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce": produce(args[1], args[2], Integer.parseInt(args[3]),
                                    args.length > 4 ? Integer.parseInt(args[4]) : 0); break;
            case "config": config(args[1], args[2], List.of(args).subList(3, args.length)); break;
            case "consume": consume(args); break;
            default: throw new IllegalArgumentException("unknown role " + args[0]);
        }
    }

    static void produce(String bootstrap, String topic, int count, int first) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("linger.ms", "5");
        // Under the tests' 120 s wait, so a record that cannot be written is reported (partition and error) rather
        // than the process killed silently while its producer still retries.
        props.put("delivery.timeout.ms", "90000");
        AtomicInteger failed = new AtomicInteger();
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = first; i < first + count; i++) {
                String name = Integer.toString(i);
                byte[] value = name.getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, value, value), (metadata, error) -> {
                    if (error != null && failed.getAndIncrement() < 10) {
                        System.err.println("failed " + name + " to " + topic + "-" + metadata.partition() + ": " + error);
                    }
                });
            }
            producer.flush();
        }
        if (failed.get() > 0) {
            System.err.println(failed.get() + " of " + count + " records not written");
            System.exit(1);
        }
        System.out.println("produced " + count);
    }

    static void config(String bootstrap, String group, List<String> settings) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(props)) {
            List<AlterConfigOp> ops = new ArrayList<>();
            for (String setting : settings) {
                String[] kv = setting.split("=", 2);
                ops.add(new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
            }
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
        }
        System.out.println("configured " + group);
    }

    static Set<String> values(Map<String, String> actions, String key) {
        String list = actions.get(key);
        return list == null ? Collections.emptySet() : new HashSet<>(List.of(list.split(",")));
    }

    static void consume(String[] args) throws Exception {
        String bootstrap = args[1], group = args[2], topic = args[3];
        long idleMs = Long.parseLong(args[4]) * 1000;
        Map<String, String> actions = new HashMap<>();
        for (int i = 5; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            actions.put(kv[0], kv[1]);
        }
        Set<String> release = values(actions, "release"), reject = values(actions, "reject");
        int releaseFirst = Integer.parseInt(actions.getOrDefault("release-first", "0"));
        int hold = Integer.parseInt(actions.getOrDefault("hold", "0"));
        long max = Long.parseLong(actions.getOrDefault("max", "-1"));
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("share.acknowledgement.mode", "explicit");
        props.put("client.id", "share-driver-" + ProcessHandle.current().pid());
        if (actions.containsKey("poll")) {
            props.put("max.poll.records", actions.get("poll"));
        }
        long seen = 0;
        try (KafkaShareConsumer<byte[], byte[]> consumer =
                 new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long lastRecord = System.currentTimeMillis();
            boolean ready = false;
            boolean any = false;  // until the first record, wait FIRST_RECORD_MS: a share-partition starts lazily
            while (idleMs == 0 || System.currentTimeMillis() - lastRecord < (any ? idleMs : FIRST_RECORD_MS)) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (!ready) {
                    System.out.println("ready");
                    System.out.flush();
                    ready = true;
                }
                if (records.isEmpty()) {
                    continue;
                }
                lastRecord = System.currentTimeMillis();
                any = true;
                StringBuilder out = new StringBuilder();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    String value = new String(record.value(), StandardCharsets.UTF_8);
                    short deliveries = record.deliveryCount().orElse((short) -1);
                    if (hold > 0) {
                        hold--;
                        out.append("HOLD ").append(value).append(' ').append(record.offset()).append(' ')
                           .append(deliveries).append(' ').append(System.currentTimeMillis()).append('\n');
                        if (hold == 0) {
                            System.out.print(out);
                            System.out.println("holding " + System.currentTimeMillis());
                            System.out.flush();
                            Thread.sleep(Long.MAX_VALUE);
                        }
                        continue;
                    }
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    if (release.contains(value)) {
                        type = AcknowledgeType.RELEASE;
                    } else if (reject.contains(value)) {
                        type = AcknowledgeType.REJECT;
                    } else if (releaseFirst > 0 && deliveries == 1 && Integer.parseInt(value) % releaseFirst == 0) {
                        type = AcknowledgeType.RELEASE;
                    }
                    consumer.acknowledge(record, type);
                    out.append(type).append(' ').append(value).append(' ').append(record.offset()).append(' ')
                       .append(deliveries).append(' ').append(System.currentTimeMillis()).append('\n');
                }
                consumer.commitSync();
                System.out.print(out);
                System.out.flush();
                seen += records.count();
                if (max >= 0 && seen >= max) {
                    break;
                }
            }
        }
        System.out.println("closed");
    }
}
