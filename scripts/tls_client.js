// A KafkaJS client over TLS that writes an NSS key log: what scripts/record_tls.py runs for the
// Node scenarios. Every TLS socket's 'keylog' lines go to KEYLOG; with RESUME=1 the TLS session of
// each broker address is kept and offered again on the next connection (TLS 1.2 session ticket or
// id, TLS 1.3 PSK). KafkaJS logs at DEBUG level to stderr (its JSON lines name every request:
// api, version, correlation id): part of the ground truth.
//
// Environment: BOOTSTRAP host:port, KEYLOG path, TOPIC, MESSAGES, VALUE_SIZE, MIN_VERSION / MAX_VERSION
// ("TLSv1.2", "TLSv1.3"), CIPHERS (OpenSSL cipher list, TLS 1.3 names included), NO_ETM=1 (refuse
// encrypt_then_mac: MAC-then-encrypt CBC records), RESUME=1. NODE_PATH must find kafkajs.
'use strict';
const fs = require('fs');
const tls = require('tls');
const crypto = require('crypto');
const { Kafka, logLevel } = require('kafkajs');

const env = process.env;
const keylog = fs.openSync(env.KEYLOG, 'a');
const sessions = new Map();
let resumed = 0;
let handshakes = 0;

function socketFactory({ host, port, ssl, onConnect }) {
  const where = `${host}:${port}`;
  const options = {
    host, port, servername: 'kafka.test', rejectUnauthorized: false,
    minVersion: env.MIN_VERSION || 'TLSv1.2', maxVersion: env.MAX_VERSION || 'TLSv1.3',
  };
  if (env.CIPHERS) options.ciphers = env.CIPHERS;
  if (env.NO_ETM === '1') options.secureOptions = crypto.constants.SSL_OP_NO_ENCRYPT_THEN_MAC;
  if (env.RESUME === '1' && sessions.has(where)) options.session = sessions.get(where);
  const socket = tls.connect(options, () => {
    handshakes += 1;
    if (socket.isSessionReused()) resumed += 1;
    onConnect();
  });
  socket.on('keylog', (line) => fs.writeSync(keylog, line));
  socket.on('session', (session) => sessions.set(where, session));
  socket.setKeepAlive(true, 60000);
  return socket;
}

async function main() {
  const kafka = new Kafka({
    clientId: 'kwire-kafkajs', brokers: [env.BOOTSTRAP], ssl: true, socketFactory,
    logLevel: logLevel.DEBUG, retry: { retries: 8 },
    logCreator: () => ({ namespace, level, label, log }) => {
      process.stderr.write(JSON.stringify({ level: label, namespace, ...log }) + '\n');
    },
  });
  const topic = env.TOPIC;
  const count = parseInt(env.MESSAGES || '10', 10);
  const size = parseInt(env.VALUE_SIZE || '0', 10);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const sent = [];
  for (let i = 0; i < count; i += 1) {
    const value = size ? crypto.createHash('sha256').update(`v${i}`).digest('hex').repeat(Math.ceil(size / 64)).slice(0, size)
      : `value-kafkajs-${i} over tls`;
    sent.push(value);
  }
  await producer.send({ topic, messages: sent.map((value, i) => ({ key: `key-${i}`, value })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: 'kwire-kafkajs-group' });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${got.length} of ${count}`)), 60000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message.value.toString());
        if (got.length >= count) { clearTimeout(timer); resolve(); }
      },
    });
  });
  await consumer.disconnect();
  const same = got.length === sent.length && got.every((v, i) => v === sent[i]);
  fs.closeSync(keylog);
  process.stdout.write(JSON.stringify({ produced: sent.length, consumed: got.length, same, handshakes, resumed }) + '\n');
  if (!same) process.exit(1);
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack || err) }) + '\n');
  process.exit(1);
});
