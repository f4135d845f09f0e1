// client.js -- node-postgres (pg) against sluiced, run by
// tests/clients/test_node.py.
//
// Reads the cases from SLUICE_CASES (JSON: name, user, password, tls, host,
// port, ca) and prints one JSON line per case:
//   {"case": NAME, "ok": true|false, "checks": [...], "error": "..."}
// Each case connects (TLS: verify-full against the test CA), runs simple
// queries, parameterized queries (pg sends parameters and reads results as
// text only: its protocol parser has no binary mode), a named prepared
// statement, and checks the SQLSTATE of typed errors.
'use strict';

const fs = require('fs');
const { pipeline } = require('stream/promises');
const { Readable, Writable } = require('stream');
const { Client } = require('pg');
const copyStreams = require('pg-copy-streams');

const TYPED = [
  ['int2', 7, 7], ['int4', -42, -42], ['int8', '9000000000', '9000000000'],
  ['float4', 1.5, 1.5], ['float8', 2.25, 2.25], ['bool', true, true],
  ['text', 'héllo', 'héllo'], ['numeric', '12.345', '12.345'],
];

function assertEq(got, want, what) {
  if (String(got) !== String(want)) {
    throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

async function expectError(client, sql, values, sqlstate) {
  try {
    await client.query(sql, values);
  } catch (e) {
    assertEq(e.code, sqlstate, `SQLSTATE of ${sql}`);
    return;
  }
  throw new Error(`${sql} did not fail`);
}

async function runCase(c) {
  const checks = [];
  const config = {
    host: c.host, port: c.port, user: c.user, database: 'sluice',
    password: c.password || undefined,
    ssl: c.tls ? { ca: fs.readFileSync(c.ca), rejectUnauthorized: true } : false,
    connectionTimeoutMillis: 10000,
  };
  const client = new Client(config);
  await client.connect();
  checks.push('connect');
  try {
    let r = await client.query('SELECT 1 AS one');
    assertEq(r.rows[0].one, 1, 'SELECT 1');
    checks.push('simple');
    for (const [typ, value, want] of TYPED) {
      r = await client.query(`SELECT $1::${typ} AS v`, [value]);
      assertEq(r.rows[0].v, want, `text ${typ}`);
    }
    // No binary results: pg-protocol decodes every DataRow field as UTF-8
    // text ("Binary mode not supported yet"), so `binary: true` garbles
    // them; pg sends parameters as text too.
    checks.push('params');
    for (let i = 0; i < 3; i++) {
      r = await client.query({ name: 'plus_one', text: 'SELECT $1::int4 + 1 AS n', values: [i] });
      assertEq(r.rows[0].n, i + 1, 'prepared');
    }
    checks.push('prepared');
    await expectError(client, 'SELECT 1/0', undefined, '22012');
    await expectError(client, 'SELECT $1::int4 / 0', [1], '22012');
    await expectError(client, 'SELEC 1', undefined, '42601');
    r = await client.query('SELECT $1::text AS v', ['still here']);
    assertEq(r.rows[0].v, 'still here', 'after errors');
    checks.push('errors');
  } finally {
    await client.end();
  }
  return checks;
}

async function wrongPassword(c) {
  const client = new Client({
    host: c.host, port: c.port, user: c.user, database: 'sluice', password: 'wrong',
    ssl: false, connectionTimeoutMillis: 10000,
  });
  try {
    await client.connect();
  } catch (e) {
    assertEq(e.code, '28P01', 'wrong password');
    return ['refused'];
  }
  await client.end();
  throw new Error('connected with a wrong password');
}

// COPY FROM STDIN and TO STDOUT through pg-copy-streams, and a
// CancelRequest (pg's client.cancel) that ends a pg_sleep with 57014.
async function copyAndCancel(c) {
  const config = { host: c.host, port: c.port, user: c.user, database: 'sluice',
                   ssl: false, connectionTimeoutMillis: 10000 };
  const client = new Client(config);
  await client.connect();
  try {
    await client.query('CREATE TABLE node_copy (id INT PRIMARY KEY, name TEXT)');
    const lines = [];
    for (let i = 0; i < 1000; i++) lines.push(`${i},name ${i}\n`);
    const into = client.query(copyStreams.from('COPY node_copy FROM STDIN WITH (FORMAT csv)'));
    await pipeline(Readable.from(lines), into);
    assertEq(into.rowCount, 1000, 'COPY FROM rowCount');
    const chunks = [];
    const out = client.query(copyStreams.to(
      'COPY (SELECT id, name FROM node_copy WHERE id < 2 ORDER BY id) TO STDOUT'));
    await pipeline(out, new Writable({ write(chunk, enc, cb) { chunks.push(chunk); cb(); } }));
    assertEq(Buffer.concat(chunks).toString(), '0\tname 0\n1\tname 1\n', 'COPY TO');
    await client.query('DROP TABLE node_copy');

    // cancel: sent again until the statement ends (one that comes before
    // it started does nothing, as in PostgreSQL)
    const sleeping = client.query('SELECT pg_sleep(60)');
    let done = false;
    const timer = setInterval(() => {
      if (!done) {
        const other = new Client(config);
        other.cancel(client, client.activeQuery || sleeping);
      }
    }, 300);
    let code = null;
    try {
      await sleeping;
    } catch (e) {
      code = e.code;
    } finally {
      done = true;
      clearInterval(timer);
    }
    assertEq(code, '57014', 'SQLSTATE of a cancelled pg_sleep');
    const r = await client.query('SELECT 1 AS one');
    assertEq(r.rows[0].one, 1, 'after cancel');
  } finally {
    await client.end();
  }
  return ['copy', 'cancel'];
}

async function main() {
  const cases = JSON.parse(process.env.SLUICE_CASES);
  for (const c of cases) {
    for (const [name, fn] of [[c.name, runCase], [`${c.name}-wrong-password`, wrongPassword],
                              [`${c.name}-copy-cancel`, copyAndCancel]]) {
      if (fn === wrongPassword && (!c.password || c.tls)) continue;
      if (fn === copyAndCancel && (c.password || c.tls)) continue;
      try {
        const checks = await fn(c);
        console.log(JSON.stringify({ case: name, ok: true, checks }));
      } catch (e) {
        console.log(JSON.stringify({ case: name, ok: false, error: String(e && e.stack || e) }));
      }
    }
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
