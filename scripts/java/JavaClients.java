// Java clients (kafka-clients from the classpath) against a broker, each call's outcome and the client's own
// counters in the truth file, one JSON object a line ({ts, who, event, ...}, as scripts/problem_kit.py's Truth):
//     java -cp KAFKA_CLIENTS_JARS:CLASSES JavaClients BOOTSTRAP TRUTH_FILE SECONDS LINGER_SECONDS
// Run by scripts/record_problems.py (java-silenced) inside its namespace. A producer `kwire-java-producer` sends
// one record to kwire-orders, an admin `kwire-java-admin` asks for the cluster, each waiting SECONDS at most; both
// stay open LINGER_SECONDS more ("closing" when they close, a second at most each).
//     java -cp KAFKA_CLIENTS_JARS:CLASSES JavaClients consume BOOTSTRAP TRUTH_FILE TOPIC SECONDS
// (java-throttled): a consumer `kwire-java-consumer` reads partition 0 of TOPIC from the start for SECONDS (no
// group), then says how many records it read and its own fetch metrics (the throttle times it was given).
import java.io.FileWriter;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class JavaClients {
    static String truthPath;

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    static synchronized void truth(String who, String event, String fields) throws Exception {
        double ts = System.currentTimeMillis() / 1000.0;
        try (FileWriter w = new FileWriter(truthPath, true)) {
            w.write("{\"ts\": " + String.format("%.3f", ts) + ", \"who\": " + quote(who) + ", \"event\": "
                    + quote(event) + (fields.isEmpty() ? "" : ", " + fields) + "}\n");
        }
    }

    static String counters(Map<MetricName, ? extends Metric> metrics) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (!n.group().endsWith("-metrics") || !n.tags().containsKey("client-id") || n.tags().size() != 1) continue;
            String name = n.name();
            if (name.equals("request-total") || name.equals("response-total") || name.equals("connection-creation-total")
                    || name.equals("connection-count")) {
                out.append(out.length() == 0 ? "" : ", ").append(quote(name)).append(": ")
                   .append(((Number) e.getValue().metricValue()).longValue());
            }
        }
        return "{" + out + "}";
    }

    static void consume(String[] args) throws Exception {
        String bootstrap = args[1], topic = args[3];
        truthPath = args[2];
        int seconds = Integer.parseInt(args[4]);
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "kwire-java-consumer");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        long records = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(java.util.List.of(tp));
            consumer.seekToBeginning(java.util.List.of(tp));
            long end = System.currentTimeMillis() + seconds * 1000L;
            while (System.currentTimeMillis() < end) {
                records += consumer.poll(Duration.ofMillis(200)).count();
            }
            StringBuilder fetch = new StringBuilder();
            for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
                MetricName n = e.getKey();
                if (n.group().equals("consumer-fetch-manager-metrics") && n.tags().size() == 1
                        && n.name().startsWith("fetch-throttle-time")) {
                    fetch.append(fetch.length() == 0 ? "" : ", ").append(quote(n.name())).append(": ")
                         .append(((Number) e.getValue().metricValue()).doubleValue());
                }
            }
            truth("kwire-java-consumer", "consumed", "\"records\": " + records + ", \"fetch\": {" + fetch + "}"
                  + ", \"counters\": " + counters(consumer.metrics()));
        }
        truth("kwire-java-consumer", "closed", "");
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("consume")) {
            consume(args);
            return;
        }
        String bootstrap = args[0];
        truthPath = args[1];
        int seconds = Integer.parseInt(args[2]);
        int linger = Integer.parseInt(args[3]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "kwire-java-producer");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, seconds * 1000);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.CLIENT_ID_CONFIG, "kwire-java-admin");
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        Admin admin = Admin.create(a);
        {
            Thread adminCall = new Thread(() -> {
                long t0 = System.nanoTime();
                try {
                    admin.describeCluster().nodes().get(seconds, TimeUnit.SECONDS);
                    truth("kwire-java-admin", "described", "\"waited_s\": " + (System.nanoTime() - t0) / 1e9);
                } catch (Exception exc) {
                    try {
                        truth("kwire-java-admin", "call_failed", "\"call\": \"describeCluster\", \"error\": "
                              + quote(exc.toString()) + ", \"waited_s\": " + (System.nanoTime() - t0) / 1e9);
                    } catch (Exception ignored) { }
                }
            });
            adminCall.start();
            long t0 = System.nanoTime();
            try {
                producer.send(new ProducerRecord<>("kwire-orders", "k", "v")).get(seconds, TimeUnit.SECONDS);
                truth("kwire-java-producer", "delivered", "\"waited_s\": " + (System.nanoTime() - t0) / 1e9);
            } catch (Exception exc) {
                truth("kwire-java-producer", "send_failed", "\"error\": " + quote(exc.toString())
                      + ", \"waited_s\": " + (System.nanoTime() - t0) / 1e9);
            }
            adminCall.join();
            truth("kwire-java-producer", "counters", "\"counters\": " + counters(producer.metrics()));
            truth("kwire-java-admin", "counters", "\"counters\": " + counters(admin.metrics()));
        }
        Thread.sleep(linger * 1000L);
        truth("kwire-java-producer", "closing", "");
        producer.close(Duration.ofSeconds(1));
        truth("kwire-java-admin", "closing", "");
        admin.close(Duration.ofSeconds(1));
        truth("kwire-java-producer", "closed", "");
    }
}
