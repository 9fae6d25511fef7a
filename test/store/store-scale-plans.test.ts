/**
 * Issue 20, §4: every statement a goal's steps run finds its rows through an index on a filled store.
 *
 * The statements are not listed by hand: a real goal (scripts/bench/scale-goal.js: todo-write, file
 * tools, bash with a spooled output read back with tool-output, glob, grep, one auto-compaction, then
 * finish) runs on a real worker and Temporal server, through a store client that records every
 * statement with its parameters (scripts/bench/timed-sql.js). A statement added to the step path
 * tomorrow is checked without anyone adding it here.
 *
 * Each recorded statement is then run again under EXPLAIN ANALYZE, in a transaction rolled back, on
 * the filled tables with the planner's default settings: the honest question is which plan PostgreSQL
 * really picks on a store of this size and shape, not whether some index could serve the statement
 * (enable_seqscan=off would only answer the latter, and would pass an index scan that reads a whole
 * session and filters it). The fill (80 other sessions of 1,000 events and 100 messages, VACUUM
 * ANALYZEd before the goal starts) is large enough that a statement without a usable index gets a
 * sequential scan, and small enough that the statistics list every session as a most-common value:
 * the case where the planner knows least about the session being written (see migration 4).
 * A scan of a session table passes when it is an index scan that throws away no more rows than it
 * returns. Reads are explained the moment they have run, while the session holds what it held then.
 */
import { createRequire } from 'node:module';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient, type SqlExecutor } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createGoalWorker } from '../../worker/worker';
import { GoalIterationKey, GoalSessionKey, GoalStatusKey, workflowIdOf } from '../../workflows/definitions';
import { createTempDir, createTestDatabase, type TestDatabase } from './test-databases';

const scripts = createRequire(import.meta.url);
const { fillStore } = scripts('../../scripts/bench/store-fill.js') as {
  fillStore(db: SqlClient, options: { sessions: number; events: number; messages: number }): Promise<unknown>;
};
const { timedSqlClient } = scripts('../../scripts/bench/timed-sql.js') as {
  timedSqlClient(
    inner: SqlClient,
    options: { capture: boolean },
  ): SqlClient & { record: { statements: Array<{ text: string; params: unknown[] }> } };
};
const { CONTEXT_WINDOW_TOKENS, nextSpoolId, writeScaleScript } = scripts(
  '../../scripts/bench/scale-goal.js',
) as {
  CONTEXT_WINDOW_TOKENS: number;
  nextSpoolId(db: SqlClient): Promise<number>;
  writeScaleScript(dir: string, steps: number, spoolId?: number): string;
};
const { EXPLAINABLE } = scripts('../../scripts/bench/replay-statements.js') as { EXPLAINABLE: RegExp };

/** Other sessions in the store, and their rows. */
const FILL = { sessions: 80, events: 80_000, messages: 8_000 };
const STEPS = 16;
/** The tables that grow with the store; the one-row tables goalrun_store and goalrun_migrations do not. */
const SESSION_TABLES = ['sessions', 'messages', 'events', 'spool', 'checkpoints'];
const SCANS = ['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Tid Scan'];

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/**
 * Every scan of a session table in a plan, with what is wrong with it ('' when nothing): a sequential
 * scan, or an index scan that reads more rows only to throw them away than it returns (an index on a
 * prefix of what the statement looks for, e.g. the whole session read to find one key).
 */
function scansOf(node: PlanNode): Array<{ table: string; scan: string; problem: string }> {
  const removed = node['Rows Removed by Filter'] ?? 0;
  const returned = (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
  const own =
    SCANS.includes(node['Node Type']) && SESSION_TABLES.includes(node['Relation Name'] ?? '')
      ? [
          {
            table: node['Relation Name'] as string,
            scan: `${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}`,
            problem:
              node['Node Type'] === 'Seq Scan'
                ? 'sequential scan'
                : removed > returned
                  ? `read ${removed} rows only to filter them out, for ${returned}`
                  : '',
          },
        ]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}

/** A scan problem found in a statement's plan, as one readable paragraph. */
function problemsOf(plan: PlanNode, text: string, params: unknown[]): { scans: number; problems: string[] } {
  const scans = scansOf(plan);
  return {
    scans: scans.length,
    problems: scans
      .filter((scan) => scan.problem)
      .map(
        (scan) =>
          `${scan.table}: ${scan.scan}: ${scan.problem}\n    in: ${text.replace(/\s+/g, ' ').slice(0, 160)}\n    with: ${JSON.stringify(params).slice(0, 160)}`,
      ),
  };
}

/**
 * A store client that EXPLAIN ANALYZEs every read the moment it has run, before its caller goes on
 * (on another connection: the session then holds the rows it held when the step read it, not the rows
 * of later steps, which a filter would drop). Writes are left to the caller, recorded by `inner`.
 */
function explainingReads(
  inner: SqlClient,
  explainer: pg.Client,
  found: { scans: number; problems: string[] },
) {
  const explainRead = async (text: string, params: unknown[] | undefined) => {
    if (!/^\s*SELECT\b/i.test(text) || /\bFOR UPDATE\b/i.test(text)) return;
    const { rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params ?? []);
    const { scans, problems } = problemsOf(rows[0]['QUERY PLAN'][0].Plan, text, params ?? []);
    found.scans += scans;
    found.problems.push(...problems);
  };
  const reading = (executor: SqlExecutor): SqlExecutor => ({
    async query<T>(text: string, params?: unknown[]) {
      const result = await executor.query<T>(text, params);
      await explainRead(text, params);
      return result;
    },
    exec: (script: string) => executor.exec(script),
  });
  return {
    ...reading(inner),
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) => inner.transaction((tx) => fn(reading(tx))),
    close: () => inner.close(),
  };
}

describe('the statements of a goal step on a filled store', () => {
  let db: TestDatabase;
  let temp: { dir: string; remove(): void };
  beforeAll(async () => {
    db = await createTestDatabase();
    temp = createTempDir('store-scale');
  });
  afterAll(async () => {
    temp?.remove();
    await db?.drop();
  });

  it('each find their rows through an index', async () => {
    const filler = createPgClient(db.url);
    await migrate(filler);
    await fillStore(filler, FILL);
    const explainer = new pg.Client({ connectionString: db.url });
    await explainer.connect();
    const found = { scans: 0, problems: [] as string[] };
    const recorder = timedSqlClient(createPgClient(db.url), { capture: true });
    const store = new SqlSessionStore(explainingReads(recorder, explainer, found));

    const address = inject('temporalAddress');
    const connection = await NativeConnection.connect({ address });
    const clientConnection = await Connection.connect({ address });
    const client = new Client({ connection: clientConnection });
    const taskQueue = `store-scale-${Date.now().toString(36)}`;
    const worker = await createGoalWorker({
      connection,
      namespace: 'default',
      taskQueue,
      store,
      providerEnv: {},
    });
    const sessionId = `scale-plans-${Date.now().toString(36)}`;
    const model = writeScaleScript(temp.dir, STEPS, await nextSpoolId(filler));
    const workspace = createTempDir('store-scale-ws');
    const running = worker.run();
    const snapshot = await (async () => {
      const handle = await client.workflow.start('goalWorkflow', {
        workflowId: workflowIdOf(sessionId),
        taskQueue,
        args: [
          {
            goal: {
              sessionId,
              objective: 'store scale plans',
              workspace: workspace.dir,
              model,
              limits: { maxIterations: 10, maxSteps: 100, maxMinutes: 10, noProgressLimit: 3 },
              contextWindowTokens: CONTEXT_WINDOW_TOKENS,
            },
          },
        ],
        typedSearchAttributes: [
          { key: GoalStatusKey, value: 'running' },
          { key: GoalSessionKey, value: sessionId },
          { key: GoalIterationKey, value: 0 },
        ],
      });
      return handle.result();
    })().finally(async () => {
      worker.shutdown();
      await running;
    });
    workspace.remove();
    await clientConnection.close();
    await connection.close();
    expect(snapshot).toMatchObject({ status: 'completed', steps: STEPS });

    // What the goal did reached every path the test means to cover.
    const keys = (await store.listMessages(sessionId)).map((entry) => entry.key);
    expect(keys).toContain('summary:1');
    const toolOutput = await store.getMessageByKey(sessionId, 'result:call_7_0');
    expect(JSON.stringify(toolOutput?.message)).toMatch(/output=spool:\d+ size=\d+ offset=100/);
    const statements = recorder.record.statements.filter((statement) => EXPLAINABLE.test(statement.text));
    const tables = new Set(
      statements.flatMap((statement) => SESSION_TABLES.filter((table) => statement.text.includes(table))),
    );
    expect([...tables].sort()).toEqual([...SESSION_TABLES].sort());

    // The writes, planned on the filled tables (run, and rolled back, to see the rows they touch).
    try {
      const seen = new Set<string>();
      for (const { text, params } of statements) {
        const id = `${text}\u0000${JSON.stringify(params)}`;
        if (/^\s*SELECT\b/i.test(text) || seen.has(id)) continue;
        seen.add(id);
        await explainer.query('BEGIN');
        try {
          const { rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
          const { scans, problems } = problemsOf(rows[0]['QUERY PLAN'][0].Plan, text, params);
          found.scans += scans;
          found.problems.push(...problems);
        } finally {
          await explainer.query('ROLLBACK');
        }
      }
    } finally {
      await explainer.end();
    }
    expect(found.scans).toBeGreaterThan(STEPS * 3);
    expect([...new Set(found.problems)].join('\n')).toBe('');
    await store.close();
    await filler.close();
  });
});
