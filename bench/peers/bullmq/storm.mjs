// The peer of emq-lab's boot storm: BullMQ's upsertJobScheduler for the same names, boot #1
// then boot #2, `batch` upserts in flight at a time, on the server at --port (loopback only).
// Prints one JSON object: per boot, the seconds it took and the server's writes during it
// (the delta of INFO's rdb_changes_since_last_save; the bench's server has no saving configured).
//
//   node storm.mjs --port 6379 --names 10000 --batch 500 --every 900000
import { Queue } from 'bullmq';
import IORedis from 'ioredis';

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

const port = Number(option('port', '6379'));
const names = Number(option('names', '10000'));
const batch = Number(option('batch', '500'));
const every = Number(option('every', '900000'));
const queueName = option('queue', 'storm');
const template = { kind: 'report' };

const connection = new IORedis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
const probe = new IORedis({ host: '127.0.0.1', port });
const queue = new Queue(queueName, { connection });

async function changes() {
  const text = await probe.info('persistence');
  const line = text.split('\r\n').find((l) => l.startsWith('rdb_changes_since_last_save:'));
  return Number(line.split(':')[1]);
}

const ids = Array.from({ length: names }, (_, i) => `name-${String(i).padStart(5, '0')}`);

async function boot() {
  const before = await changes();
  const start = process.hrtime.bigint();
  for (let i = 0; i < ids.length; i += batch) {
    await Promise.all(
      ids.slice(i, i + batch).map((id) => queue.upsertJobScheduler(id, { every }, { name: id, data: template })),
    );
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { seconds, writes: (await changes()) - before };
}

try {
  await queue.waitUntilReady();
  const first = await boot();
  const second = await boot();
  const schedulers = await queue.getJobSchedulersCount();
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const version = (pkg) => require(`${pkg}/package.json`).version;
  console.log(
    JSON.stringify({
      bullmq: version('bullmq'),
      ioredis: version('ioredis'),
      node: process.version,
      names,
      batch,
      schedulers,
      boots: [first, second],
    }),
  );
} finally {
  await queue.close();
  await connection.quit();
  await probe.quit();
}
