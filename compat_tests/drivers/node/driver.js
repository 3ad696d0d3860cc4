// The kafkajs driver of the compatibility matrix. Run as `node driver.js SCENARIOS BOOTSTRAP TOPIC_PREFIX` with
// NODE_PATH pointing at the node_modules that compat_tests installs from package-lock.json. For each scenario
// (comma-separated) it prints one JSON line {"scenario", "ok", "detail", "seconds"}; logs go to stderr.
// The scenarios, data and checks mirror compat_tests/drivers/python/driver_common.py.
//
// kafkajs ships gzip only; snappy comes from kafkajs-snappy and lz4/zstd from pure-JS/wasm libraries wrapped here
// (the kafkajs-lz4 and @kafkajs/zstd packages need native builds).
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const { Kafka, CompressionTypes, CompressionCodecs, ConfigResourceTypes, logLevel } = require('kafkajs');
const lz4 = require('lz4js');
const xxh32 = require('lz4js/xxh32.js');
const fzstd = require('fzstd');
const zstdWasm = require('@bokuweb/zstd-wasm');

const RECORD_COUNT = 10;
const COMPRESSED_COUNT = 200;
const LARGE_RECORD_BYTES = 1000000;
const LARGE_RECORD_COUNT = 3;
const IDEMPOTENT_COUNT = 500;
const GROUP_PARTITIONS = 4;
const GROUP_RECORDS_PER_PARTITION = 10;
const SEEK_STEP_MS = 1000;
const SEEK_TARGET_INDEX = 5;
const RETENTION_MS = '3600000';
const DEADLINE_MS = 60000;
// The compacted scenario (driver_common.py's COMPACTED_* explain them).
const COMPACTED_CONFIG = { 'cleanup.policy': 'compact', 'segment.ms': '100', 'min.cleanable.dirty.ratio': '0.01',
  'delete.retention.ms': '1000' };
const COMPACTED_KEYS = 20;
const COMPACTED_ROUNDS = 5;
const COMPACTED_DELETED = 5;
const COMPACTED_FILLER_KEY = 'filler';
const COMPACTED_FILLER_INTERVAL_MS = 500;
const COMPACTED_DEADLINE_MS = 120000;
// A short fetch wait: disconnect() waits for the fetch in flight (kafkajs' default is 5 s).
const FETCH_MAX_WAIT_MS = 200;
const ZSTD_LEVEL = 3;
// lz4js writes frames of 4 MiB blocks and leaves the frame's block-independence flag clear, which Kafka refuses
// ("Dependent block stream is unsupported"). An input of one block is independent by nature, so the codec sets the
// flag (and the header checksum over it) and refuses larger inputs.
const LZ4_MAX_BLOCK = 4 * 1024 * 1024;
const LZ4_FLG_OFFSET = 4;
const LZ4_BLOCK_INDEPENDENCE = 0x20;

function lz4Frame(data) {
  if (data.length > LZ4_MAX_BLOCK) throw new Error(`lz4 codec: ${data.length} bytes exceed one 4 MiB block`);
  const frame = Buffer.from(lz4.compress(data));
  frame[LZ4_FLG_OFFSET] |= LZ4_BLOCK_INDEPENDENCE;
  // Header checksum: second byte of xxh32(seed 0) over the FLG and BD bytes.
  frame[LZ4_FLG_OFFSET + 2] = (xxh32.hash(0, frame, LZ4_FLG_OFFSET, 2) >> 8) & 0xff;
  return frame;
}

CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy');
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  compress: async (encoder) => lz4Frame(encoder.buffer),
  decompress: async (buffer) => Buffer.from(lz4.decompress(buffer)),
});
CompressionCodecs[CompressionTypes.ZSTD] = () => ({
  compress: async (encoder) => Buffer.from(zstdWasm.compress(encoder.buffer, ZSTD_LEVEL)),
  // Java's zstd frames do not record their content size, which zstd-wasm's one-shot decompress needs.
  decompress: async (buffer) => Buffer.from(fzstd.decompress(buffer)),
});

class ScenarioFailed extends Error {}

function expect(condition, message) {
  if (!condition) throw new ScenarioFailed(message);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(condition, what) {
  const until = Date.now() + DEADLINE_MS;
  while (!(await condition())) {
    if (Date.now() > until) throw new ScenarioFailed(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const stderrLog = () => ({ level, log }) => {
  process.stderr.write(`${level} ${log.message} ${log.error || ''}\n`);
};

// security: kafkajs's ssl and sasl settings, for the secured listeners' cells (compat_tests/security_listeners.py).
function kafka(bootstrap, security = {}, clientId = 'compat-kafkajs') {
  return new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.WARN, logCreator: stderrLog, ...security });
}

async function withAdmin(bootstrap, fn, clientId = undefined) {
  const admin = kafka(bootstrap, {}, clientId).admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

async function createTopic(bootstrap, topic, numPartitions = 1, configEntries = []) {
  const created = await withAdmin(bootstrap, (admin) =>
    admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }], waitForLeaders: true }));
  expect(created, `createTopics did not create ${topic}`);
}

async function produce(bootstrap, topic, messages, options = {}) {
  const { idempotent = false, security, ...send } = options;
  const producer = kafka(bootstrap, security).producer({ idempotent, allowAutoTopicCreation: false,
    maxInFlightRequests: idempotent ? 1 : undefined });
  await producer.connect();
  try {
    await producer.send({ topic, messages, ...send });
  } finally {
    await producer.disconnect();
  }
}

// Reads partition 0 of topic from `start` (an offset string, or fromBeginning) until `count` messages came, or
// until `done(messages)`. kafkajs has group consumers only, so each read uses a group of its own that never commits.
async function consume(bootstrap, topic, count, { start, between, security, done = (m) => m.length >= count } = {}) {
  const consumer = kafka(bootstrap, security).consumer({ groupId: `${topic}.reader.${crypto.randomUUID()}`, maxWaitTimeInMs: FETCH_MAX_WAIT_MS });
  const messages = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => { joined = true; });
    await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => { messages.push(message); } });
    if (start !== undefined) consumer.seek({ topic, partition: 0, offset: start });
    await waitUntil(() => joined, 'the reader to join its group');
    if (between) {
      await sleep(1000); // let the seek resolve before the new record lands
      await between();
    }
    const until = Date.now() + DEADLINE_MS;
    while (!done(messages) && Date.now() < until) await sleep(50);
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

function checkValues(messages, expected, what) {
  expect(messages.length === expected.length, `${what}: consumed ${messages.length} records, expected ${expected.length}`);
  expected.forEach((want, i) => expect(Buffer.compare(messages[i].value, want) === 0, `${what}: record ${i} differs`));
  return `${what}: ${messages.length} records intact and in order`;
}

const compressibleValue = (i) => Buffer.from(`compressible-${String(i).padStart(5, '0')}-`.repeat(20));

async function metadata(bootstrap, prefix) {
  const topic = `${prefix}.metadata`;
  await createTopic(bootstrap, topic, 3);
  // The matrix finds this client's requests by its id in both brokers' request logs (compat_tests/negotiated.py).
  return withAdmin(bootstrap, async (admin) => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.length === 1, `expected 1 broker, metadata lists ${cluster.brokers.length}`);
    const broker = cluster.brokers[0];
    expect(`${broker.host}:${broker.port}` === bootstrap, `broker at ${broker.host}:${broker.port}`);
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const partitions = topics[0].partitions;
    expect(partitions.length === 3, `topic has ${partitions.length} partitions`);
    partitions.forEach((p) => expect(p.leader === broker.nodeId, `partition ${p.partitionId} leader ${p.leader}`));
    return `1 broker (node ${broker.nodeId} at ${broker.host}:${broker.port}); ${topic}: 3 partitions led by it`;
  }, `${prefix}.metadata`);
}

async function roundtrip(bootstrap, prefix) {
  const topic = `${prefix}.roundtrip`;
  await createTopic(bootstrap, topic);
  const expected = [];
  for (let i = 0; i < RECORD_COUNT; i++) {
    expected.push({ key: `key-${i}`, value: i % 3 === 2 ? null : `value-${i}`, partition: 0,
      headers: { trace: `t-${i}`, empty: '' } });
  }
  await produce(bootstrap, topic, expected);
  const got = await consume(bootstrap, topic, RECORD_COUNT);
  expect(got.length === RECORD_COUNT, `consumed ${got.length} records, expected ${RECORD_COUNT}`);
  got.forEach((m, i) => {
    expect(m.offset === String(i), `record ${i} has offset ${m.offset}`);
    expect(String(m.key) === expected[i].key, `record ${i}: key ${m.key}`);
    const value = m.value === null ? null : String(m.value);
    expect(value === expected[i].value, `record ${i}: value ${value}`);
    const headers = Object.entries(m.headers).map(([k, v]) => `${k}=${v === null ? '' : String(v)}`).join(',');
    expect(headers === `trace=t-${i},empty=`, `record ${i}: headers ${headers}`);
  });
  return `${got.length} records: keys, ${got.filter((m) => m.value === null).length} null values, headers intact`;
}

function compression(name, type) {
  return async (bootstrap, prefix) => {
    const topic = `${prefix}.compression_${name}`;
    await createTopic(bootstrap, topic);
    const expected = Array.from({ length: COMPRESSED_COUNT }, (_, i) => compressibleValue(i));
    await produce(bootstrap, topic, expected.map((value) => ({ value, partition: 0 })), { compression: type });
    return checkValues(await consume(bootstrap, topic, expected.length), expected, name);
  };
}

async function largeRecords(bootstrap, prefix) {
  const topic = `${prefix}.large_records`;
  await createTopic(bootstrap, topic);
  const expected = Array.from({ length: LARGE_RECORD_COUNT }, () => crypto.randomBytes(LARGE_RECORD_BYTES));
  for (const value of expected) await produce(bootstrap, topic, [{ value, partition: 0 }]);
  return checkValues(await consume(bootstrap, topic, expected.length), expected, '1 MB records');
}

async function seek(bootstrap, prefix) {
  const topic = `${prefix}.seek`;
  await createTopic(bootstrap, topic);
  const base = Date.now() - 60000;
  await produce(bootstrap, topic, Array.from({ length: RECORD_COUNT }, (_, i) =>
    ({ key: `key-${i}`, value: 'v', partition: 0, timestamp: String(base + i * SEEK_STEP_MS) })));
  const first = (await consume(bootstrap, topic, 1))[0];
  expect(first && first.offset === '0', `after seek to beginning read offset ${first && first.offset}`);
  const target = base + SEEK_TARGET_INDEX * SEEK_STEP_MS - SEEK_STEP_MS / 2;
  const [found] = await withAdmin(bootstrap, (admin) => admin.fetchTopicOffsetsByTimestamp(topic, target));
  expect(found.offset === String(SEEK_TARGET_INDEX), `offset for the timestamp is ${found.offset}`);
  const atTime = (await consume(bootstrap, topic, 1, { start: found.offset }))[0];
  expect(atTime && atTime.offset === String(SEEK_TARGET_INDEX), `after seek to timestamp read ${atTime && atTime.offset}`);
  const [end] = await withAdmin(bootstrap, (admin) => admin.fetchTopicOffsets(topic));
  const afterEnd = (await consume(bootstrap, topic, 1, { start: end.high,
    between: () => produce(bootstrap, topic, [{ value: 'after-end', partition: 0 }]) }))[0];
  expect(afterEnd && afterEnd.offset === String(RECORD_COUNT), `after seek to end read ${afterEnd && afterEnd.offset}`);
  return `beginning -> 0, timestamp -> ${atTime.offset}, end -> ${afterEnd.offset}`;
}

async function idempotent(bootstrap, prefix) {
  const topic = `${prefix}.idempotent`;
  await createTopic(bootstrap, topic);
  const expected = Array.from({ length: IDEMPOTENT_COUNT }, (_, i) => Buffer.from(`idempotent-${i}`));
  await produce(bootstrap, topic, expected.map((value) => ({ value, partition: 0 })), { idempotent: true, acks: -1 });
  const got = await consume(bootstrap, topic, expected.length);
  const [end] = await withAdmin(bootstrap, (admin) => admin.fetchTopicOffsets(topic));
  expect(end.high === String(IDEMPOTENT_COUNT), `log end offset ${end.high}, expected ${IDEMPOTENT_COUNT} (duplicates?)`);
  return checkValues(got, expected, 'idempotent');
}

// One member of the group: its assignment from GROUP_JOIN events, every message committed as it is processed.
async function groupMember(bootstrap, topic, group) {
  const consumer = kafka(bootstrap).consumer({ groupId: group, heartbeatInterval: 500, maxWaitTimeInMs: FETCH_MAX_WAIT_MS });
  const member = { consumer, assignment: [], seen: new Set() };
  consumer.on(consumer.events.GROUP_JOIN, (e) => { member.assignment = (e.payload.memberAssignment[topic] || []).slice().sort(); });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      member.seen.add(`${partition}@${message.offset}`);
      await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
    },
  });
  return member;
}

async function consumerGroup(bootstrap, prefix) {
  const topic = `${prefix}.consumer_group`;
  const group = `${topic}.group`;
  await createTopic(bootstrap, topic, GROUP_PARTITIONS);
  const messages = [];
  for (let p = 0; p < GROUP_PARTITIONS; p++) {
    for (let i = 0; i < GROUP_RECORDS_PER_PARTITION; i++) messages.push({ value: `${p}-${i}`, partition: p });
  }
  await produce(bootstrap, topic, messages);
  const a = await groupMember(bootstrap, topic, group);
  let b;
  try {
    await waitUntil(() => a.assignment.length === GROUP_PARTITIONS, 'A to get all 4 partitions');
    b = await groupMember(bootstrap, topic, group);
    await waitUntil(() => a.assignment.length === 2 && b.assignment.length === 2
      && !a.assignment.some((p) => b.assignment.includes(p)), 'the rebalance to 2+2');
    const split = `A [${a.assignment}] + B [${b.assignment}]`;
    const total = GROUP_PARTITIONS * GROUP_RECORDS_PER_PARTITION;
    await waitUntil(() => new Set([...a.seen, ...b.seen]).size === total, `all ${total} records`);
    await a.consumer.disconnect();
    await b.consumer.disconnect();
    const offsets = await withAdmin(bootstrap, (admin) => admin.fetchOffsets({ groupId: group, topics: [topic] }));
    const committed = offsets[0].partitions.map((p) => `${p.partition}:${p.offset}`).sort().join(',');
    expect(committed === '0:10,1:10,2:10,3:10', `committed offsets ${committed}`);
    return `A: 4 partitions, then ${split}; ${total} records; committed 10 on each partition`;
  } finally {
    await a.consumer.disconnect();
    if (b) await b.consumer.disconnect();
  }
}

async function admin(bootstrap, prefix) {
  const topic = `${prefix}.admin`;
  return withAdmin(bootstrap, async (adm) => {
    const created = await adm.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3,
      replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: RETENTION_MS }] }] });
    expect(created === true, 'createTopics did not create the topic');
    // kafkajs answers false (instead of raising) when the broker says TOPIC_ALREADY_EXISTS.
    const again = await adm.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
    expect(again === false, 'creating the topic again did not fail');
    const { topics } = await adm.fetchTopicMetadata({ topics: [topic] });
    expect(topics[0].partitions.length === 3, `topic has ${topics[0].partitions.length} partitions`);
    const described = await adm.describeConfigs({ includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] });
    const values = Object.fromEntries(described.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
    expect(values['retention.ms'] === RETENTION_MS, `retention.ms = ${values['retention.ms']}`);
    expect(values['cleanup.policy'] === 'delete', `cleanup.policy = ${values['cleanup.policy']}`);
    await adm.deleteTopics({ topics: [topic] });
    await waitUntil(async () => !(await adm.listTopics()).includes(topic), 'the deleted topic to leave the topic list');
    return `created, duplicate refused, 3 partitions, retention.ms=${RETENTION_MS}, deleted`;
  });
}

function compactedRecords() {
  const records = [];
  for (let r = 0; r < COMPACTED_ROUNDS; r++) {
    for (let k = 0; k < COMPACTED_KEYS; k++) records.push({ key: `key-${k}`, value: `value-${k}-${r}` });
  }
  for (let k = COMPACTED_KEYS - COMPACTED_DELETED; k < COMPACTED_KEYS; k++) records.push({ key: `key-${k}`, value: null });
  return records;
}

// What in the messages read from offset 0 (fillers aside) is not yet the compacted table, or null
// (driver_common.compacted_leftovers); a live key not at its latest value fails the scenario.
function compactedLeftovers(messages) {
  const table = messages.filter((m) => m.key.toString() !== COMPACTED_FILLER_KEY);
  const latest = new Map(table.map((m) => [m.key.toString(), m.value === null ? null : m.value.toString()]));
  const live = COMPACTED_KEYS - COMPACTED_DELETED;
  for (let k = 0; k < live; k++) {
    expect(latest.get(`key-${k}`) === `value-${k}-${COMPACTED_ROUNDS - 1}`, `key-${k} is not at its latest value`);
  }
  if (table.length > latest.size) return `${table.length - latest.size} superseded records`;
  return latest.size > live ? `${latest.size - live} deleted keys still there` : null;
}

// Partition 0 of topic from its start to its log end offset (offsets have gaps once compacted).
async function readToEnd(bootstrap, topic) {
  const [end] = await withAdmin(bootstrap, (admin) => admin.fetchTopicOffsets(topic));
  const reached = (m) => m.length > 0 && BigInt(m[m.length - 1].offset) + 1n >= BigInt(end.high);
  const messages = await consume(bootstrap, topic, Infinity, { done: reached });
  expect(reached(messages), `offset ${end.high} not reached`);
  return messages;
}

// A compacted topic: the table written, then a filler record at a time until the log read from offset 0 is the
// table (driver_common.compacted_scenario).
async function compacted(bootstrap, prefix) {
  const topic = `${prefix}.compacted`;
  await createTopic(bootstrap, topic, 1, Object.entries(COMPACTED_CONFIG).map(([name, value]) => ({ name, value })));
  const started = Date.now();
  const send = (records) => produce(bootstrap, topic, records.map((r) => ({ ...r, partition: 0 })));
  await send(compactedRecords());
  let fillers = 0;
  for (;;) {
    const leftover = compactedLeftovers(await readToEnd(bootstrap, topic));
    if (leftover === null) break;
    expect(Date.now() - started < COMPACTED_DEADLINE_MS, `not compacted after ${fillers} filler segments: ${leftover}`);
    await sleep(COMPACTED_FILLER_INTERVAL_MS);
    await send([{ key: COMPACTED_FILLER_KEY, value: String(fillers) }]);
    fillers += 1;
  }
  return `${COMPACTED_KEYS - COMPACTED_DELETED} keys at their latest value only, ${COMPACTED_DELETED} deleted keys ` +
    `gone, after ${Math.round((Date.now() - started) / 1000)} s (${fillers} filler segments)`;
}

// The sasl_scram and tls cells: 10 records through a secured listener.
function secured(scenario, bootstrapVariable, security) {
  return async (bootstrap, prefix) => {
    const topic = `${prefix}.${scenario}`;
    await createTopic(bootstrap, topic);
    const expected = Array.from({ length: 10 }, (_, i) => Buffer.from(`secret-${i}`));
    const securedBootstrap = process.env[bootstrapVariable];
    // More retries than kafkajs's 5: a loaded KRaft broker may take seconds to host the partition it just created.
    await produce(securedBootstrap, topic, expected.map((value) => ({ value, partition: 0 })),
      { security: { ...security(), retry: { retries: 10 } } });
    return checkValues(await consume(securedBootstrap, topic, expected.length, { security: security() }), expected,
      scenario);
  };
}

const SCENARIOS = {
  metadata,
  roundtrip,
  compression_gzip: compression('gzip', CompressionTypes.GZIP),
  compression_snappy: compression('snappy', CompressionTypes.Snappy),
  compression_lz4: compression('lz4', CompressionTypes.LZ4),
  compression_zstd: compression('zstd', CompressionTypes.ZSTD),
  large_records: largeRecords,
  seek,
  idempotent,
  consumer_group: consumerGroup,
  admin,
  compacted,
  sasl_scram: secured('sasl_scram', 'COMPAT_SASL_BOOTSTRAP', () => ({ sasl: { mechanism: 'scram-sha-512',
    username: process.env.COMPAT_SCRAM_USER, password: process.env.COMPAT_SCRAM_PASSWORD } })),
  tls: secured('tls', 'COMPAT_TLS_BOOTSTRAP', () => ({ ssl: { ca: [fs.readFileSync(process.env.COMPAT_TLS_CA)] } })),
};

async function main() {
  const [names, bootstrap, prefix] = process.argv.slice(2);
  await zstdWasm.init();
  for (const name of names.split(',')) {
    const started = Date.now();
    let ok = false;
    let detail = 'not implemented';
    if (SCENARIOS[name]) {
      try {
        detail = await SCENARIOS[name](bootstrap, prefix);
        ok = true;
      } catch (e) {
        detail = `${e.name}: ${e.message}`;
        process.stderr.write(`${e.stack}\n`);
      }
    }
    process.stdout.write(`${JSON.stringify({ scenario: name, ok, detail, seconds: (Date.now() - started) / 1000 })}\n`);
  }
  process.exit(0);
}

main();
