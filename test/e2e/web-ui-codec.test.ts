/// <reference lib="dom" />
/**
 * Issue 20, §5: with encrypted payloads, the Temporal Web UI of a dev server started with
 * `--ui-codec-endpoint` pointing at `goalrun codec-server` shows a goal decrypted, in headless Chromium:
 * its summary (the objective), its activity summaries and its current details (a query's answer). The browser calls the codec server itself,
 * from the UI's origin, so this also checks the server's CORS answer. Without the codec server the
 * history holds neither (test/e2e/payload-encryption.test.ts). Screenshots: test-output/web-ui-codec/.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Page } from 'puppeteer-core' with { 'resolution-mode': 'import' };
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { webUiUrl } from '../../cli/web-ui';
import {
  chromiumAvailable,
  clickByRole,
  launchChromium,
  saveScreenshot,
  sectionText,
  svgTexts,
  type TestBrowser,
  waitForPage,
  waitForText,
} from '../support/browser';
import { cliEnv, killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { findFreePort, startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const SHOTS = 'web-ui-codec';
const marker = randomUUID().slice(0, 8);
const OBJECTIVE = `Count the encrypted ledgers of ${marker}`;
const BASH_SUMMARY = `bash: echo ledger-${marker} > ledger.txt`;
/** A closed goal's current details come from a worker replaying its history: slower than the rest. */
const CURRENT_DETAILS_TIMEOUT_MS = 90_000;
const turns = [
  { toolCalls: [{ name: 'bash', args: { command: `echo ledger-${marker} > ledger.txt` } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'ledger written' } }] },
];

// Without Chromium a developer's `npm test` skips this file; CI installs it and must run it.
describe.skipIf(!chromiumAvailable() && !process.env.CI)('the Web UI with goalrun codec-server', () => {
  let server: TestTemporalServer;
  let browser: TestBrowser;
  let page: Page;
  const children: Array<ReturnType<typeof spawnCli>> = [];
  let home: string;
  let workspace: string;
  let workflowId: string;

  beforeAll(async () => {
    const codecPort = await findFreePort();
    const uiPort = await findFreePort();
    const codecEndpoint = `http://127.0.0.1:${codecPort}`;
    home = tempDir('web-ui-codec-home');
    workspace = tempDir('web-ui-codec-ws');
    const env = cliEnv({
      GOALRUN_HOME: home,
      DATABASE_URL: inject('databaseUrl'),
      GOALRUN_TASK_QUEUE: `test-web-ui-codec-${randomUUID().slice(0, 8)}`,
      GOALRUN_PAYLOAD_KEYS: `ui-key:${randomBytes(32).toString('base64')}`,
    });
    const codec = spawnCli(
      ['codec-server', '--port', String(codecPort), '--cors-origin', `http://127.0.0.1:${uiPort}`],
      env,
    );
    children.push(codec);
    await waitFor('the codec server', () => codec.output().includes('codec server on'));
    server = await startTestTemporalServer({
      ui: true,
      uiPort,
      extraArgs: ['--ui-codec-endpoint', codecEndpoint],
    });
    env.TEMPORAL_ADDRESS = server.address;
    const worker = spawnCli(['worker'], env);
    children.push(worker);
    await waitFor('the worker to poll', () => worker.output().includes('polling task queue'), 60_000);
    const started = await runCli(
      ['start', OBJECTIVE, '--workspace', workspace, '--model', scriptedModel(home, turns), '--json'],
      env,
    );
    expect(started.code, started.stderr).toBe(0);
    const ids = JSON.parse(started.stdout) as { sessionId: string; workflowId: string };
    workflowId = ids.workflowId;
    const watched = await runCli(['watch', ids.sessionId], env);
    expect(watched.code, `${watched.stderr}\nworker:\n${worker.output().slice(-2_000)}`).toBe(0);
    browser = await launchChromium();
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    for (const child of children) await killAndWait(child);
    await server?.stop();
    for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the objective, the activity summaries and the current details decrypted', async () => {
    const url = webUiUrl({ temporalAddress: server.address, namespace: 'default', home }, workflowId);
    expect(url).toBe(`${server.uiUrl}/namespaces/default/workflows/${workflowId}`);
    await page.goto(url!);
    // The timeline labels each activity "<type> • <summary>": decrypted, the bash call's own words.
    await waitForPage(
      'the decrypted activity summary in the timeline',
      () => svgTexts(page),
      (texts) => texts.some((text) => text.includes(BASH_SUMMARY)),
    );
    await saveScreenshot(page, SHOTS, '01-history-decrypted');
    await clickByRole(page, 'tab', 'User Metadata');
    const summary = await waitForText(
      'the decrypted summary',
      () => sectionText(page, 'Summary', { framed: true }),
      [OBJECTIVE],
    );
    expect(summary.trim()).toBe(OBJECTIVE);
    // The current details are a query's answer, sealed by the worker: decrypted too.
    await waitForText(
      'the decrypted current details',
      () => sectionText(page, 'Current Details', { framed: true }),
      [/completed — [^\n]* — goalrun resume /, `step 1 · ${BASH_SUMMARY}`],
      CURRENT_DETAILS_TIMEOUT_MS,
    );
    await saveScreenshot(page, SHOTS, '02-user-metadata-decrypted');
  });
});
