// What a Java kafka-clients 4.x application sees of a broker: run as
//     java -cp <classes>:<kafka-clients jars>/* EmulationProbe BOOTSTRAP TOPIC
// It produces one record, then reads it with a consumer of the classic group protocol and with one of the KIP-848
// consumer protocol (group.protocol=consumer), and prints one line per step: "<step> ok" or
// "<step> refused <exception class>: <message>". tests/integration/test_emulation.py compares the lines it prints
// against `wirebroker --emulate` with what Apache Kafka's own releases make it print.

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class EmulationProbe {
    static final Duration POLL_FOR = Duration.ofSeconds(20);

    public static void main(String[] args) {
        String bootstrap = args[0];
        String topic = args[1];
        step("produce", () -> produce(bootstrap, topic));
        step("consume-classic", () -> consume(bootstrap, topic, "classic"));
        step("consume-consumer-protocol", () -> consume(bootstrap, topic, "consumer"));
    }

    interface Step {
        void run() throws Exception;
    }

    static void step(String name, Step step) {
        try {
            step.run();
            System.out.println(name + " ok");
        } catch (Exception e) {
            Throwable cause = e.getCause() != null && e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
            System.out.println(name + " refused " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
        }
        System.out.flush();
    }

    static void produce(String bootstrap, String topic) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("delivery.timeout.ms", "20000");
        props.put("request.timeout.ms", "10000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(topic, "k", "v")).get();
        }
    }

    static void consume(String bootstrap, String topic, String protocol) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", "probe-" + protocol);
        props.put("group.protocol", protocol);
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + POLL_FOR.toNanos();
            while (System.nanoTime() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                if (!records.isEmpty()) {
                    return;
                }
            }
            throw new IllegalStateException("no record within " + POLL_FOR.toSeconds() + " s");
        }
    }
}
