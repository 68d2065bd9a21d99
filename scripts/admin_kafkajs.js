// KafkaJS's admin doing an operator's admin work, each promise's value (or rejection) in the truth file,
// one JSON object a line in the form of scripts/admin_truth.py: ts, started, client, operation,
// arguments, result | error. Run by scripts/record_admin.py inside its namespace:
//     NODE_PATH=/tmp/x/node_modules node scripts/admin_kafkajs.js BOOTSTRAP TRUTH_FILE BROKER
// (KafkaJS from `npm install kafkajs` in a folder of its own; node_modules is never committed.)
'use strict'

const fs = require('fs')
const { Kafka, logLevel, ConfigResourceTypes, AclResourceTypes, AclOperationTypes, AclPermissionTypes,
  ResourcePatternTypes } = require('kafkajs')

const [bootstrap, truthPath] = process.argv.slice(2)
const TOPIC_A = 'kwire-js-orders'
const TOPIC_B = 'kwire-js-audit'
const GROUP = 'kwire-js-group'
const truthFd = fs.openSync(truthPath, 'a')
const counts = { operations: 0, failed: 0 }

function jsonable (value) {
  return JSON.parse(JSON.stringify(value, (key, v) => {
    if (typeof v === 'bigint') return v.toString()
    if (v && v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data).toString('hex')
    return v
  }))
}

function sorted (value) { // keys sorted, as Python's json.dumps(sort_keys=True) writes them
  if (Array.isArray(value)) return value.map(sorted)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map(k => [k, sorted(value[k])]))
  }
  return value
}

async function op (operation, args, call) {
  const started = Date.now() / 1000
  const record = { started, client: 'kafkajs', operation, arguments: jsonable(args) }
  try {
    const result = await call()
    record.result = jsonable(result === undefined ? null : result)
    counts.operations++
  } catch (err) {
    record.error = `${err.name}: ${err.message}`
    counts.failed++
  }
  record.ts = Date.now() / 1000
  fs.writeSync(truthFd, JSON.stringify(sorted(record)) + '\n')
}

async function main () {
  const kafka = new Kafka({
    clientId: 'kwire-admin-kafkajs',
    brokers: bootstrap.split(','),
    logLevel: logLevel.ERROR,
    requestTimeout: 8000,
    retry: { retries: 1, initialRetryTime: 200 },
    logCreator: () => ({ namespace, log }) => process.stderr.write(`${namespace} ${log.message}\n`)
  })
  const admin = kafka.admin()
  await admin.connect()
  const topics = [
    { topic: TOPIC_A, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] },
    { topic: TOPIC_B, numPartitions: 2, replicationFactor: 1 }
  ]
  await op('create_topics', { topics }, () => admin.createTopics({ topics, timeout: 5000 }))
  await op('create_partitions', { topic: TOPIC_B, new_total_count: 4 },
    () => admin.createPartitions({ topicPartitions: [{ topic: TOPIC_B, count: 4 }], timeout: 5000 }))
  await op('list_topics', {}, () => admin.listTopics())
  let brokerId = '0'
  await op('describe_cluster', {}, async () => {
    const cluster = await admin.describeCluster()
    brokerId = String(Math.min(...cluster.brokers.map(b => b.nodeId)))
    return cluster
  })
  await op('fetch_topic_metadata', { topics: [TOPIC_A, TOPIC_B] }, () => admin.fetchTopicMetadata({ topics: [TOPIC_A, TOPIC_B] }))
  await op('describe_configs', { resources: [['TOPIC', TOPIC_A], ['BROKER', brokerId]] }, () => admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC_A }, { type: ConfigResourceTypes.BROKER, name: brokerId }]
  }))
  const jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="js" password="js-s3cret";'
  await op('alter_configs', {
    resources: [{ resource: ['TOPIC', TOPIC_A], set: { 'retention.ms': '7200000' } },
      { resource: ['BROKER', brokerId], set: { 'listener.name.plain.sasl.jaas.config': jaas } }]
  }, () => admin.alterConfigs({
    validateOnly: false,
    resources: [
      { type: ConfigResourceTypes.TOPIC, name: TOPIC_A, configEntries: [{ name: 'retention.ms', value: '7200000' }] },
      { type: ConfigResourceTypes.BROKER, name: brokerId, configEntries: [{ name: 'listener.name.plain.sasl.jaas.config', value: jaas }] }
    ]
  }))
  const acl = [{
    resourceType: AclResourceTypes.TOPIC,
    resourceName: TOPIC_A,
    resourcePatternType: ResourcePatternTypes.LITERAL,
    principal: 'User:erin',
    host: '*',
    operation: AclOperationTypes.ALTER_CONFIGS,
    permissionType: AclPermissionTypes.ALLOW
  }, {
    resourceType: AclResourceTypes.TRANSACTIONAL_ID,
    resourceName: 'kwire-txn-',
    resourcePatternType: ResourcePatternTypes.PREFIXED,
    principal: 'User:frank',
    host: '192.168.0.9',
    operation: AclOperationTypes.WRITE,
    permissionType: AclPermissionTypes.DENY
  }]
  await op('create_acls', {
    acls: [{ restype: 'TOPIC', name: TOPIC_A, resource_pattern_type: 'LITERAL', principal: 'User:erin', host: '*', operation: 'ALTER_CONFIGS', permission_type: 'ALLOW' },
      { restype: 'TRANSACTIONAL_ID', name: 'kwire-txn-', resource_pattern_type: 'PREFIXED', principal: 'User:frank', host: '192.168.0.9', operation: 'WRITE', permission_type: 'DENY' }]
  }, () => admin.createAcls({ acl }))
  await op('describe_acls', { filter: 'ANY' }, () => admin.describeAcls({
    resourceType: AclResourceTypes.ANY,
    resourcePatternType: ResourcePatternTypes.ANY,
    operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY
  }))
  await op('delete_acls', { filters: [{ resource_type: 'TOPIC', name: TOPIC_A, principal: 'User:erin' }] }, () => admin.deleteAcls({
    filters: [{
      resourceType: AclResourceTypes.TOPIC,
      resourceName: TOPIC_A,
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:erin',
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY
    }]
  }))
  await op('produce', { topic: TOPIC_A, partition: 0, records: 5 }, async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: false })
    await producer.connect()
    try {
      return await producer.send({
        topic: TOPIC_A,
        messages: [0, 1, 2, 3, 4].map(i => ({ key: `k${i}`, value: `order-${i}`, partition: 0 }))
      })
    } finally {
      await producer.disconnect()
    }
  })
  await op('delete_records', { partitions: [[TOPIC_A, 0, 2]] },
    () => admin.deleteTopicRecords({ topic: TOPIC_A, partitions: [{ partition: 0, offset: '2' }] }))
  await op('fetch_topic_offsets', { topic: TOPIC_A }, () => admin.fetchTopicOffsets(TOPIC_A))
  await op('set_offsets', { group: GROUP, topic: TOPIC_A, partitions: [[0, 3], [1, 0]] }, () => admin.setOffsets({
    groupId: GROUP, topic: TOPIC_A, partitions: [{ partition: 0, offset: '3' }, { partition: 1, offset: '0' }]
  }))
  await op('fetch_offsets', { group: GROUP, topics: [TOPIC_A] }, () => admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC_A] }))
  await op('list_groups', {}, () => admin.listGroups())
  await op('describe_groups', { groups: [GROUP] }, () => admin.describeGroups([GROUP]))
  await op('delete_groups', { groups: [GROUP] }, () => admin.deleteGroups([GROUP]))
  await op('delete_topics', { topics: [TOPIC_A, TOPIC_B] }, () => admin.deleteTopics({ topics: [TOPIC_A, TOPIC_B], timeout: 5000 }))
  await admin.disconnect()
}

const watchdog = setTimeout(() => { process.stdout.write(JSON.stringify({ error: 'kafkajs scenario timed out', ...counts }) + '\n'); process.exit(2) }, 200000)
main().then(() => {
  clearTimeout(watchdog)
  fs.closeSync(truthFd)
  process.stdout.write(JSON.stringify(counts) + '\n')
}, err => {
  clearTimeout(watchdog)
  process.stdout.write(JSON.stringify({ error: `${err.name}: ${err.message}`, ...counts }) + '\n')
  process.exit(1)
})
