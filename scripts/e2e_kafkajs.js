// KafkaJS producing and consuming, with its own times as truth: what scripts/record_problems.py's
// end-to-end-kafkajs scenario runs inside its namespace:
//     NODE_PATH=DIR/node_modules node scripts/e2e_kafkajs.js BOOTSTRAP TRUTH_FILE TOPIC PARTITIONS MESSAGES
// (KafkaJS from `npm install --prefix DIR kafkajs@2.2.4`; node_modules is never committed.)
//
// Two consumers, each in a group of its own (`kwire-js-consumer-1` in kwire-js-a, `kwire-js-consumer-2` in
// kwire-js-b; maxWaitTimeInMs 500), read TOPIC from its start; once both have joined, a producer
// (`kwire-js-producer`, acks all) sends MESSAGES records, one send() each, 5 a second, round-robin over the
// partitions. Truth lines (the form of scripts/problem_kit.py's Truth: ts, who, event, keys sorted): the
// producer's `sent` (n, partition) before each send() and `delivered` (n, partition, offset: the answer's
// base offset) when it resolves; each consumer's `joined` and `consumed` (topic, partition, offset) as
// eachMessage is handed the record. KafkaJS's own log (INFO) goes to stderr: the truth log. A summary line
// of JSON on stdout.
'use strict'

const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

const [bootstrap, truthPath, topic, partitionsText, messagesText] = process.argv.slice(2)
const partitions = parseInt(partitionsText, 10)
const messages = parseInt(messagesText, 10)
const truthFd = fs.openSync(truthPath, 'a')

function truth (who, event, fields) {
  const record = { ts: Math.round(Date.now() * 1000) / 1e6, who, event, ...fields }
  const line = JSON.stringify(Object.fromEntries(Object.keys(record).sort().map(k => [k, record[k]])))
  fs.writeSync(truthFd, line + '\n')
}

function client (clientId) {
  return new Kafka({
    clientId,
    brokers: bootstrap.split(','),
    logLevel: logLevel.INFO,
    retry: { retries: 8 },
    logCreator: () => ({ namespace, label, log }) => {
      process.stderr.write(JSON.stringify({ client: clientId, level: label, namespace, ...log }) + '\n')
    }
  })
}

async function consumer (clientId, groupId) {
  const c = client(clientId).consumer({ groupId, maxWaitTimeInMs: 500, sessionTimeout: 10000, heartbeatInterval: 1000 })
  let consumed = 0
  const joined = new Promise(resolve => c.on(c.events.GROUP_JOIN, () => { truth(clientId, 'joined', { group: groupId }); resolve() }))
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  await c.run({
    autoCommit: false,
    eachMessage: async ({ topic, partition, message }) => {
      consumed++
      truth(clientId, 'consumed', { topic, partition, offset: Number(message.offset) })
    }
  })
  return { c, joined, count: () => consumed }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function main () {
  const readers = [await consumer('kwire-js-consumer-1', 'kwire-js-a'), await consumer('kwire-js-consumer-2', 'kwire-js-b')]
  await Promise.all(readers.map(r => r.joined))
  await sleep(1000)
  const producer = client('kwire-js-producer').producer({ allowAutoTopicCreation: false })
  await producer.connect()
  let delivered = 0
  for (let n = 0; n < messages; n++) {
    const partition = n % partitions
    const started = Date.now()
    truth('kwire-js-producer', 'sent', { n, partition })
    const [answer] = await producer.send({ topic, acks: -1, messages: [{ value: `entry ${n}`, partition }] })
    truth('kwire-js-producer', 'delivered', { n, partition: answer.partition, offset: Number(answer.baseOffset) })
    delivered++
    await sleep(Math.max(0, 200 - (Date.now() - started)))
  }
  await sleep(3000)
  await producer.disconnect()
  for (const r of readers) await r.c.disconnect()
  process.stdout.write(JSON.stringify({ sent: messages, delivered, consumed: readers.map(r => r.count()) }) + '\n')
}

main().catch(err => {
  process.stdout.write(JSON.stringify({ error: `${err.name}: ${err.message}` }) + '\n')
  process.exit(1)
})
