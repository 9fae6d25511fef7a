/**
 * Vitest global setup: a fresh PostgreSQL database for the workflow and CLI tests, shared by every
 * test file (sessions have unique ids, so files do not collide). Tests read it with
 * `inject('databaseUrl')` or `process.env.GOALRUN_TEST_DATABASE_URL`.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
// One database per test run, so concurrent runs (two checkouts, a developer and CI) never collide.
const DATABASE = `goalrun_e2e_${process.pid}`;

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${DATABASE}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DATABASE}`;
  project.provide('databaseUrl', url.toString());
  process.env.GOALRUN_TEST_DATABASE_URL = url.toString();
  return () => admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
}
