// The Java clients (kafka-clients from the classpath) asking what the broker rules check, each call's outcome as
// the client took it in the truth file, one JSON object a line ({ts, who, event, ...}, as scripts/problem_kit.py's
// Truth):
//     java -cp KAFKA_CLIENTS_JARS:CLASSES JavaBrokerRules BOOTSTRAP TRUTH_FILE
// Run by scripts/record_problems.py (broker-rules-java) inside its namespace. An Admin `kwire-java-admin` asks a
// validate-only create of kwire-java-validated, lists the topics and asks it again;
// a KafkaConsumer `kwire-java-checkpointer` (group kwire-java-checkpointer) commits kwire-java-checkpoints[0] at 3
// with the metadata "kwire checkpoint 3" and reads its committed offset back; the Admin lists and describes the
// consumer groups and deletes the partition's records below 1.
import java.io.FileWriter;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DeleteRecordsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class JavaBrokerRules {
    static String truthPath;
    static final String ADMIN = "kwire-java-admin", GROUP = "kwire-java-checkpointer";
    static final String VALIDATED = "kwire-java-validated", OFFSETS = "kwire-java-checkpoints";
    static final String CHECKPOINT = "kwire checkpoint 3";

    static String quote(String s) {
        if (s == null) return "null";
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    static synchronized void truth(String who, String event, String fields) throws Exception {
        double ts = System.currentTimeMillis() / 1000.0;
        try (FileWriter w = new FileWriter(truthPath, true)) {
            w.write("{\"ts\": " + String.format("%.3f", ts) + ", \"who\": " + quote(who) + ", \"client_id\": "
                    + quote(who) + ", \"event\": "
                    + quote(event) + (fields.isEmpty() ? "" : ", " + fields) + "}\n");
        }
    }

    /** One call's outcome: ok with what it returned, or the client's own exception. */
    static void call(String event, String subject, Callable<String> body) throws Exception {
        try {
            String result = body.call();
            truth(ADMIN, event, "\"subject\": " + quote(subject) + ", \"ok\": true, \"result\": " + quote(result));
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            truth(ADMIN, event, "\"subject\": " + quote(subject) + ", \"ok\": false, \"error\": "
                  + quote(cause.getClass().getSimpleName() + ": " + cause.getMessage()));
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        truthPath = args[1];
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.CLIENT_ID_CONFIG, ADMIN);
        a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15000);
        a.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
        try (Admin admin = Admin.create(a)) {
            for (int n = 0; n < 2; n++) {  // the second: the topic the first made exists, or it does not
                call("create_topics_validate_only", VALIDATED, () -> {
                    admin.createTopics(List.of(new NewTopic(VALIDATED, 1, (short) 1)),
                                       new CreateTopicsOptions().validateOnly(true)).all().get(15, TimeUnit.SECONDS);
                    return "";
                });
                Set<String> names = admin.listTopics().names().get(15, TimeUnit.SECONDS);
                truth(ADMIN, "listed_topics", "\"has_validated\": " + names.contains(VALIDATED));
            }
            TopicPartition tp = new TopicPartition(OFFSETS, 0);
            Properties c = new Properties();
            c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            c.put(ConsumerConfig.CLIENT_ID_CONFIG, GROUP);
            c.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
            c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(3, CHECKPOINT)));
                truth(GROUP, "offset_committed", "\"group\": " + quote(GROUP) + ", \"topic\": " + quote(OFFSETS)
                      + ", \"partition\": 0, \"offset\": 3, \"metadata\": " + quote(CHECKPOINT) + ", \"member\": false");
                OffsetAndMetadata got = consumer.committed(Set.of(tp)).get(tp);
                truth(GROUP, "offset_read", "\"group\": " + quote(GROUP) + ", \"topic\": " + quote(OFFSETS)
                      + ", \"partition\": 0, \"offset\": " + (got == null ? "null" : got.offset())
                      + ", \"metadata\": " + (got == null ? "null" : quote(got.metadata())));
            }
            call("list_consumer_groups", GROUP, () -> {
                StringBuilder out = new StringBuilder();
                for (ConsumerGroupListing g : admin.listConsumerGroups().all().get(15, TimeUnit.SECONDS)) {
                    out.append(g.groupId()).append('=').append(g.type().map(Object::toString).orElse("?")).append(' ');
                }
                return out.toString().trim();
            });
            call("describe_consumer_groups", GROUP, () -> {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(GROUP)).all()
                        .get(15, TimeUnit.SECONDS).get(GROUP);
                return "type=" + d.type() + " state=" + d.state() + " members=" + d.members().size();
            });
            call("delete_records", OFFSETS, () -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(1)),
                    new DeleteRecordsOptions().timeoutMs(10000)).all().get(20, TimeUnit.SECONDS) == null ? "" : "");
        }
    }
}
