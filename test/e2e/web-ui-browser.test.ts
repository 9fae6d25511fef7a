/// <reference lib="dom" />
/**
 * Issue 11, "Web UI, tested in a real browser": a goal run through the built CLI, looked at in the
 * Temporal Web UI with headless Chromium the way a person would: the objective as the summary, the
 * current details (status, tasks, context gauge), the activity summaries in the timeline, and the
 * GoalStatus search attribute as a list filter. Once while the goal runs, once after it finished.
 * Screenshots go to test-output/web-ui/ (CI artifacts).
 *
 * The UI reads current details through the built-in __temporal_workflow_metadata query, which a
 * worker answers: a `goalrun worker` runs throughout, and the goal holds in a bash step until the
 * test releases it.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Page } from 'puppeteer-core' with { 'resolution-mode': 'import' };
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { goalResult } from '../../cli/goal-result';
import { webUiUrl } from '../../cli/web-ui';
import {
  chromiumAvailable,
  clickByRole,
  launchChromium,
  pageText,
  saveScreenshot,
  sectionText,
  svgTexts,
  type TestBrowser,
  waitForPage,
  waitForText,
} from '../support/browser';
import { cliEnv, killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const SHOTS = 'web-ui';
const OBJECTIVE = 'Write a greeting script, run it and keep its output';
const BASH_SUMMARY = 'bash: sh greet.sh > greeting.txt && cat greeting.txt';
const FILE_WRITE_SUMMARY = 'file-write: greet.sh';
const HOLD_STARTED = 'hold-started';
const RELEASE = 'release';
const GOAL_START_TIMEOUT_MS = 90_000;
// The gauge line of the current details: "3395 of 23800 tokens before auto-compact (12%, green)".
const GAUGE = /Context:\s*\d+ of \d+ tokens before auto-compact \(\d+%, (green|yellow|red)\)/;

const turns = [
  {
    text: 'Planning.',
    toolCalls: [
      {
        name: 'todo-write',
        args: {
          todos: [
            { content: 'Write the greeting script' },
            { content: 'Run it and keep its output', dependencies: ['task-1'] },
          ],
        },
      },
    ],
  },
  {
    toolCalls: [
      { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-1', status: 'in_progress' }] } },
      { name: 'file-write', args: { path: 'greet.sh', content: 'echo hello from the browser test\n' } },
    ],
  },
  {
    toolCalls: [
      {
        name: 'todo-write',
        args: {
          merge: true,
          todos: [
            { id: 'task-1', status: 'completed' },
            { id: 'task-2', status: 'in_progress' },
          ],
        },
      },
      { name: 'bash', args: { command: 'sh greet.sh > greeting.txt && cat greeting.txt' } },
    ],
  },
  // Holds the goal (running, with a worker) until the test has looked at it.
  {
    toolCalls: [
      {
        name: 'bash',
        args: {
          command: `touch ${HOLD_STARTED}; while [ ! -e ${RELEASE} ]; do sleep 0.2; done; echo released`,
          timeout_ms: 600_000,
        },
      },
    ],
  },
  {
    toolCalls: [
      { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-2', status: 'completed' }] } },
      { name: 'file-read', args: { path: 'greeting.txt' } },
    ],
  },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'greeting written and checked' } }] },
];

// Without Chromium a developer's `npm test` skips this file; CI installs it and must run it.
describe.skipIf(!chromiumAvailable() && !process.env.CI)('the Temporal Web UI shows a goal', () => {
  let server: TestTemporalServer;
  let browser: TestBrowser;
  let page: Page;
  let worker: ReturnType<typeof spawnCli>;
  let connection: Connection;
  let home: string;
  let workspace: string;
  let model: string;
  let workflowId: string;
  let env: NodeJS.ProcessEnv;
  /** Workspaces of the goals the later tests start, removed at the end. */
  const moreDirs: string[] = [];

  beforeAll(async () => {
    server = await startTestTemporalServer({ ui: true });
    home = tempDir('web-ui-home');
    workspace = tempDir('web-ui-ws');
    env = cliEnv({
      GOALRUN_HOME: home,
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: server.address,
      GOALRUN_TASK_QUEUE: `test-web-ui-${randomUUID().slice(0, 8)}`,
    });
    worker = spawnCli(['worker'], env);
    browser = await launchChromium();
    page = await browser.newPage();
    model = scriptedModel(home, turns);
    const started = await runCli(
      ['start', OBJECTIVE, '--workspace', workspace, '--model', model, '--json'],
      env,
    );
    expect(started.code, started.stderr).toBe(0);
    workflowId = JSON.parse(started.stdout).workflowId;
    await waitFor(
      'the goal to reach its held bash step',
      () => existsSync(join(workspace, HOLD_STARTED)),
      GOAL_START_TIMEOUT_MS,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\nworker output:\n${worker.output().slice(-2_000)}`);
    });
    connection = await Connection.connect({ address: server.address });
  });

  afterAll(async () => {
    // A worker killed mid-step would leave the held bash loop polling forever.
    if (workspace) writeFileSync(join(workspace, RELEASE), '');
    await browser?.close();
    if (worker) await killAndWait(worker);
    await connection?.close();
    await server?.stop();
    for (const dir of [home, workspace, ...moreDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The workflow page's link, as `goalrun run` prints it. */
  const workflowUrl = () =>
    webUiUrl({ temporalAddress: server.address, namespace: 'default', home }, workflowId);

  /** The header text of the workflow page: status badge, workflow id, actions. */
  const headerText = () =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('header'))
        // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person reads
        .map((header) => header.innerText)
        .join('\n'),
    );

  /** Whether the workflow list shows the goal's row (a link named by its id) or says "No Results". */
  async function listing(query: string): Promise<'listed' | 'empty'> {
    return waitForPage(
      `the workflow list for ${query}`,
      async () => {
        await page.goto(`${server.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
        // The list renders after its visibility query; wait for one of its two outcomes.
        const outcome = await page.waitForFunction(
          (id) => {
            const links = Array.from(document.querySelectorAll('a'));
            if (links.some((link) => link.textContent?.trim() === id)) return 'listed';
            const headings = Array.from(document.querySelectorAll('h1, h2, h3'));
            if (headings.some((h) => h.textContent?.trim() === 'No Results')) return 'empty';
            return false;
          },
          {},
          workflowId,
        );
        return (await outcome.jsonValue()) as 'listed' | 'empty';
      },
      () => true,
    );
  }

  it('links to the UI port the server really uses (the link `goalrun run` prints)', () => {
    // The test server's UI is deliberately not at frontend port + 1000.
    expect(server.uiPort).not.toBe(server.port + 1000);
    expect(workflowUrl()).toBe(`${server.uiUrl}/namespaces/default/workflows/${workflowId}`);
  });

  it('shows the running goal: status, summary, current details and activity summaries', async () => {
    await page.goto(workflowUrl()!);
    // Header: the status badge next to the workflow id.
    await waitForText('the running status in the header', headerText, [workflowId, 'Running']);
    // History tab (the default): the timeline draws one SVG label per activity, "<type> • <summary>".
    const labels = await waitForPage(
      'activity summaries in the timeline',
      () => svgTexts(page),
      (texts) =>
        [`model step 1 · ${model}`, FILE_WRITE_SUMMARY, BASH_SUMMARY].every((summary) =>
          texts.some((text) => text.includes(summary)),
        ),
    );
    // The held step is still pending; its label reads "Attempt 1 / N • runTool • bash: touch …".
    expect(labels.some((text) => text.includes(`runTool • bash: touch ${HOLD_STARTED}`))).toBe(true);
    await saveScreenshot(page, SHOTS, '01-running-history');

    // User Metadata tab: the start options' summary and details, and the workflow's current details,
    // each rendered from Markdown inside an iframe under its heading.
    await clickByRole(page, 'tab', 'User Metadata');
    const summary = await waitForText('the summary', () => sectionText(page, 'Summary', { framed: true }), [
      OBJECTIVE,
    ]);
    expect(summary.trim()).toBe(OBJECTIVE);
    const details = await waitForText(
      'the current details',
      () => sectionText(page, 'Current Details', { framed: true }),
      [
        // The headline: status — reason — next command (issue 26 item 1).
        /running — step \d+, iteration \d+ — goalrun watch /,
        /task-1\s+Write the greeting script/,
        /task-2\s+Run it and keep its output\s*—\s*in progress/,
        GAUGE,
      ],
    );
    expect(details).not.toMatch(/completed — /);
    // "Events with Metadata": every event that carries a summary, one row each.
    await waitForText('the events with metadata', () => sectionText(page, 'Events with Metadata'), [
      `model step 1 · ${model}`,
      FILE_WRITE_SUMMARY,
      BASH_SUMMARY,
      'goal time limit',
    ]);
    await saveScreenshot(page, SHOTS, '02-running-user-metadata');
  });

  it('lists the running goal under the GoalStatus filter built in the list view', async () => {
    await page.goto(`${server.uiUrl}/namespaces/default/workflows`);
    // The filter menu offers goalrun's registered search attribute by name and type.
    await clickByRole(page, 'button', 'Add Filter');
    await (await page.waitForSelector('::-p-aria([name="Search"][role="textbox"])'))?.type('GoalStatus');
    await clickByRole(page, 'menuitem', 'GoalStatus Keyword');
    await (await page.waitForSelector('::-p-aria([name="Value"][role="textbox"])'))?.type('running');
    await clickByRole(page, 'button', 'Apply');
    // The applied filter is a chip button reading `GoalStatus = "running"`, and the query is in the URL.
    await waitForText('the GoalStatus filter chip', () => pageText(page), [/GoalStatus\s*=\s*"running"/]);
    await waitForPage(
      'the filter query in the address',
      async () => new URL(page.url()).searchParams.get('query') ?? '',
      (query) => /GoalStatus`?="running"/.test(query),
    );
    await page.waitForSelector(`::-p-aria([name="${workflowId}"][role="link"])`);
    await saveScreenshot(page, SHOTS, '03-list-filter-goalstatus-running');
    // The filter really filters: no goal of another status is listed under it.
    expect(await listing('GoalStatus="completed"')).toBe('empty');
  });

  it('shows the finished goal: completed status, all tasks done, listed as completed', async () => {
    writeFileSync(join(workspace, RELEASE), '');
    await new Client({ connection }).workflow.getHandle(workflowId).result();

    await page.goto(workflowUrl()!);
    await waitForText('the completed status in the header', headerText, [workflowId, 'Completed']);
    await clickByRole(page, 'tab', 'User Metadata');
    await waitForText('the summary', () => sectionText(page, 'Summary', { framed: true }), [OBJECTIVE]);
    // A closed workflow's current details still come from the worker, which replays its history.
    const details = await waitForText(
      'the final current details',
      () => sectionText(page, 'Current Details', { framed: true }),
      [
        /completed — [^\n]* — goalrun resume /,
        /task-1\s+Write the greeting script/,
        /task-2\s+Run it and keep its output/,
        GAUGE,
      ],
    );
    // "Recent" may still mention "in progress" from earlier steps; the task lines must not.
    expect(details).not.toMatch(/task-\d[^\n]*in progress/);
    await saveScreenshot(page, SHOTS, '04-completed-user-metadata');

    // Visibility catches up with the final upsert: retry until the list agrees.
    await waitForPage(
      'the goal listed as completed',
      () => listing('GoalStatus="completed"'),
      (l) => l === 'listed',
    );
    await saveScreenshot(page, SHOTS, '05-list-goalstatus-completed');
    expect(await listing('GoalStatus="running"')).toBe('empty');
  });
  /** Starts a goal with this script on the test's worker; its session and workflow ids. */
  async function startAnother(name: string, script: unknown[], flags: string[] = []) {
    const dir = tempDir(`web-ui-${name}-ws`);
    moreDirs.push(dir);
    const started = await runCli(
      [
        'start',
        `${name} goal`,
        '--workspace',
        dir,
        '--model',
        scriptedModel(home, script),
        ...flags,
        '--json',
      ],
      env,
    );
    expect(started.code, started.stderr).toBe(0);
    return JSON.parse(started.stdout) as { sessionId: string; workflowId: string };
  }

  it('shows a goal paused by the runaway breaker: Running in the header, and why and what to type first in the details', async () => {
    // Three model turns without a tool call trip the breaker (the default idle_turns), which pauses the goal.
    const idle = [
      { toolCalls: [{ name: 'bash', args: { command: 'echo busy' } }] },
      { text: 'did a thing' },
      { text: 'thinking' },
      { text: 'still thinking' },
      { text: 'hmm' },
    ];
    // A token cap puts the budget line, with its dollars, in the details.
    const goal = await startAnother('paused', idle, ['--max-tokens', '1000000']);
    const reason = 'runaway breaker: 3 model turns in a row without a tool call or finish';
    await waitFor(
      'the breaker to pause the goal',
      async () =>
        JSON.parse((await runCli(['status', goal.sessionId, '--json'], env)).stdout).status === 'paused',
      GOAL_START_TIMEOUT_MS,
      300,
    );
    await page.goto(
      webUiUrl({ temporalAddress: server.address, namespace: 'default', home }, goal.workflowId)!,
    );
    // Temporal's own status of a paused goal is Running: the details say what it really is.
    await waitForText('the running status of the paused goal', headerText, [goal.workflowId, 'Running']);
    await clickByRole(page, 'tab', 'User Metadata');
    const details = await waitForText(
      "the paused goal's details",
      () => sectionText(page, 'Current Details', { framed: true }),
      [`paused — ${reason} — goalrun unpause ${goal.sessionId}`, 'Budget:'],
    );
    // The headline comes first, and the budget's dollars are text, not a formula the UI's Markdown ate.
    expect(details.trim().split('\n')[0]).toBe(`paused — ${reason} — goalrun unpause ${goal.sessionId}`);
    expect(details).toMatch(/Budget: \$0\.0000 spent, \$0\.0000 reserved, cap none/);
    await saveScreenshot(page, SHOTS, '06-paused-by-breaker-details');
    const cancelled = await runCli(['cancel', goal.sessionId], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
  });

  it('shows a blocked goal as Failed in the header, with its reason and next command in the details', async () => {
    const reason = 'the API key for the staging server is missing';
    const goal = await startAnother('blocked', [
      { toolCalls: [{ name: 'finish', args: { status: 'blocked', summary: reason } }] },
    ]);
    const result = await goalResult(new Client({ connection }).workflow.getHandle(goal.workflowId));
    expect(result).toMatchObject({ status: 'blocked', reason });

    await page.goto(
      webUiUrl({ temporalAddress: server.address, namespace: 'default', home }, goal.workflowId)!,
    );
    await waitForText('the failed status of the blocked goal', headerText, [goal.workflowId, 'Failed']);
    expect(await headerText()).not.toContain('Completed');
    await saveScreenshot(page, SHOTS, '07-blocked-header-failed');
    await clickByRole(page, 'tab', 'User Metadata');
    const details = await waitForText(
      "the blocked goal's details",
      () => sectionText(page, 'Current Details', { framed: true }),
      [`blocked — ${reason} — goalrun resume ${goal.sessionId}`],
    );
    expect(details.trim().split('\n')[0]).toMatch(/^blocked — /);
    await saveScreenshot(page, SHOTS, '08-blocked-details');
  });
});
