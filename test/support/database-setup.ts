/**
 * Vitest global setup: a fresh PostgreSQL database for the workflow and CLI tests, shared by every
 * test file (sessions have unique ids, so files do not collide). Tests read it with
 * `inject('databaseUrl')` or `process.env.GOALRUN_TEST_DATABASE_URL`.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const DATABASE = 'goalrun_e2e';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DATABASE}`;
  project.provide('databaseUrl', url.toString());
  process.env.GOALRUN_TEST_DATABASE_URL = url.toString();
}
