/**
 * Issue 28 §1, `goalrun serve`, in Chromium: a goal waiting for approval shows under "Needs you";
 * the person clicks Approve and sees it go on, and the action is recorded as sent from the web. The
 * API refuses a request without the token (401) and an action without the Authorization header
 * (403, the CSRF check); a tool output that is a script shows as text on the goal's page.
 * Screenshots: test-output/serve/*.png.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../store/test-databases';
import {
  launchChromium,
  saveScreenshot,
  type TestBrowser,
  waitForPage,
  waitForText,
} from '../support/browser';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { gate, startGoal, TEST_MODEL } from '../support/goal-steps';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';

const SCRIPT_OUTPUT = '<script>window.pwned=1</script>';

describe('goalrun serve', () => {
  let model: OpenAITestServer;
  let browser: TestBrowser;
  const finishGate = gate();
  beforeAll(async () => {
    model = await startOpenAITestServer({
      fallback: async (body) => {
        const step = requestStep(body);
        if (step === 1)
          return { toolCalls: [{ name: 'bash', args: { command: `echo '${SCRIPT_OUTPUT}'` } }] };
        if (step === 2)
          return {
            toolCalls: [
              {
                name: 'bash',
                args: {
                  command: 'echo hi',
                  sandbox_permissions: 'require_escalated',
                  justification: 'to test',
                },
              },
            ],
          };
        // Held until the test has looked at the goal running again.
        await finishGate.opened;
        return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'served' } }] };
      },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    finishGate.open();
    await browser?.close();
    await model?.close();
  });

  it('shows a goal that needs approval, approves it from the page, and keeps tool output as text', {
    timeout: 300_000,
  }, async () => {
    // A store of its own: serve lists every goal of its store, and the suite's store holds other tests' goals.
    const db = await createTestDatabase();
    const t = goalTestEnv('serve', { OPENAI_API_KEY: 'sk-test', DATABASE_URL: db.url });
    const worker = spawnCli(['worker'], t.env);
    let serve: (ChildProcess & { output: () => string }) | undefined;
    try {
      const { sessionId } = await startGoal(t, model, 'wait for a person', ['--approval', 'on-request']);
      await waitFor('the goal to wait for approval', async () => {
        const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        return shown.status === 'waiting_approval';
      });
      serve = spawnCli(['serve', '--port', '0'], t.env);
      const url = await waitFor(
        'the URL serve prints',
        () => /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+/.exec(serve?.output() ?? '')?.[0],
        60_000,
        200,
      );
      const base = new URL(url).origin;
      const token = new URL(url).searchParams.get('token') as string;

      // The API: the token or nothing.
      expect((await fetch(`${base}/api/goals`)).status).toBe(401);
      expect((await fetch(`${base}/api/goals`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(
        401,
      );
      const listed = await fetch(`${base}/api/goals`, { headers: { Authorization: `Bearer ${token}` } });
      const { goals } = (await listed.json()) as { goals: Array<Record<string, unknown>> };
      expect(goals).toEqual([
        expect.objectContaining({
          sessionId,
          status: 'waiting_approval',
          needsYou: true,
          objective: 'wait for a person',
        }),
      ]);
      // The store's schedules are on the page too (read once when it loads).
      const added = await runCli(
        [
          'schedule',
          'add',
          'nightly',
          '--every',
          '6h',
          'check the nightly build',
          '--workspace',
          t.workspace,
          '--model',
          TEST_MODEL,
          '--base-url',
          model.url,
        ],
        t.env,
      );
      expect(added.code, added.stderr).toBe(0);
      await waitFor('the schedule in the API', async () => {
        const res = await fetch(`${base}/api/schedules`, { headers: { Authorization: `Bearer ${token}` } });
        const { schedules } = (await res.json()) as { schedules: Array<{ name: string }> };
        return schedules.some((schedule) => schedule.name === 'nightly');
      });

      // An action with the cookie a link sets, but not the header: what a form of another site could send.
      const csrf = await fetch(`${base}/api/goals/${sessionId}/approve`, {
        method: 'POST',
        headers: { Cookie: `goalrun_serve=${token}` },
      });
      expect(csrf.status).toBe(403);
      expect((await fetch(`${base}/api/goals/${sessionId}/approve`, { method: 'POST' })).status).toBe(401);
      expect(JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout).status).toBe(
        'waiting_approval',
      );

      const page = await browser.newPage();
      await page.goto(url);
      const needsYou = () => page.$eval('section.needs_you', (section) => (section as HTMLElement).innerText);
      await waitForText('the goal under Needs you', needsYou, [
        'Needs you (1)',
        'wait for a person',
        'Approve',
      ]);
      await waitForText('the schedule', () => page.$eval('#schedules', (box) => box.textContent ?? ''), [
        'nightly',
        'check the nightly build',
      ]);
      await saveScreenshot(page, 'serve', '01-needs-you');
      await page.click(`section.needs_you .goal[data-id="${sessionId}"] button:first-of-type`);
      await waitForPage(
        'the goal to leave Needs you',
        () => page.$eval('section.needs_you', (section) => (section as HTMLElement).innerText),
        (text) => text.includes('Needs you (0)'),
        60_000,
      );
      await saveScreenshot(page, 'serve', '02-approved');
      const after = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
      expect(after.status).not.toBe('waiting_approval');
      const store = await testStore(db.url);
      const approvals = (await store.listEvents(sessionId)).filter((event) => event.kind === 'approval');
      await store.close();
      expect(approvals.map((event) => event.data)).toEqual([
        expect.objectContaining({ decision: 'approved', by: 'web' }),
      ]);

      // The goal's page: its transcript, with the model's script as text that never ran.
      await page.goto(`${base}/goals/${sessionId}?token=${token}`);
      const transcript = await page.$eval('#transcript', (pre) => pre.textContent ?? '');
      expect(transcript).toContain(SCRIPT_OUTPUT);
      expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
      await saveScreenshot(page, 'serve', '03-goal-page', { fullPage: true });
      expect((await runCli(['schedule', 'delete', 'nightly'], t.env)).code).toBe(0);
      finishGate.open();
      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed' });
    } finally {
      if (serve) await killAndWait(serve, 'SIGTERM');
      await killAndWait(worker, 'SIGTERM');
      await db.drop();
    }
  });
});
