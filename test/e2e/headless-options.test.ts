/**
 * Issue 16 §6: the headless options people reach for (`claude -p`, `codex exec`), through `run` as a
 * script uses it. Before, each was an unknown option (exit 2) and "-" was taken as the objective:
 * - `run -` reads the objective from stdin;
 * - `--append-system-prompt` reaches the model's system prompt;
 * - `--allowed-tools` / `--disallowed-tools` refuse calls before they run, and the model is told why;
 * - `--output-last-message FILE` gets the final summary;
 * - `--output-schema FILE`: finish requires a result matching the schema, a mismatch goes back to the
 *   model as the call's error, and the result is what status and the last message show.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

describe('headless options', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('run - with an appended system prompt, tool rules and the last message in a file', async () => {
    const t = goalTestEnv('headless');
    const objective = `headless-${randomUUID().slice(0, 8)}`;
    const appended = `APPENDED-${randomUUID().slice(0, 8)}: answer in haiku`;
    const bodies: ChatRequestBody[] = [];
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      bodies.push(body);
      const step = requestStep(body);
      const bash = (command: string) => ({ toolCalls: [{ name: 'bash', args: { command } }] });
      if (step === 1) return bash('echo forbidden > denied.txt');
      if (step === 2) return bash('touch not-allowed.txt');
      if (step === 3) return bash('echo fine > allowed.txt');
      return {
        toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'LAST-SUMMARY of it all' } }],
      };
    });
    const out = path.join(tempDir('headless-out'), 'last.txt');
    const result = await runCli(
      goalArgs('run', '-', t, server, [
        '--append-system-prompt',
        appended,
        '--allowed-tools',
        'bash(echo *),file-read',
        '--disallowed-tools',
        'bash(echo forbidden*)',
        '--output-last-message',
        out,
      ]),
      t.env,
      300_000,
      { stdin: objective },
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe('LAST-SUMMARY of it all\n');

    const system = (body: ChatRequestBody) => JSON.stringify(body.messages?.[0] ?? {});
    expect(bodies.length).toBeGreaterThanOrEqual(4);
    for (const body of bodies) expect(system(body)).toContain(appended);

    // Refused before they ran, and the model was told which rule refused them.
    expect(fs.existsSync(path.join(t.workspace, 'denied.txt'))).toBe(false);
    expect(fs.existsSync(path.join(t.workspace, 'not-allowed.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(t.workspace, 'allowed.txt'), 'utf8')).toBe('fine\n');
    const seen = promptText(bodies[bodies.length - 1]);
    expect(seen).toContain('the goal disallows bash(echo forbidden*) (--disallowed-tools)');
    expect(seen).toContain('the goal allows only bash(echo *), file-read (--allowed-tools)');

    const bad = await runCli(['start', 'x', '--workspace', t.workspace, '--allowed-tools', 'bash(('], t.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--allowed-tools');
  }, 400_000);

  it("--allowed-tools takes Claude Code's names, and an unknown name exits 2 before any model call (issue 26)", async () => {
    const t = goalTestEnv('headless-claude-names');
    const objective = `claude-names-${randomUUID().slice(0, 8)}`;
    const before = server.requests.length;
    const unknown = await runCli(
      goalArgs('run', objective, t, server, ['--allowed-tools', 'Write,Read,WebFetch']),
      t.env,
    );
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain('--allowed-tools: no tool is named "WebFetch"');
    expect(unknown.stderr).toContain("goalrun's tools: bash, file-read, file-write, file-edit, glob, grep");
    const badDeny = await runCli(
      goalArgs('run', objective, t, server, ['--disallowed-tools', 'file-delete']),
      t.env,
    );
    expect(badDeny.code, badDeny.stderr).toBe(2);
    expect(badDeny.stderr).toContain('--disallowed-tools: no tool is named "file-delete"');
    expect(server.requests.length).toBe(before);

    const bodies: ChatRequestBody[] = [];
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      bodies.push(body);
      const step = requestStep(body);
      if (step === 1)
        return { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'alpha\n' } }] };
      if (step === 2) return { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] };
      if (step === 3) return { toolCalls: [{ name: 'bash', args: { command: 'cat a.txt > b.txt' } }] };
      if (step === 4) return { toolCalls: [{ name: 'bash', args: { command: 'touch refused.txt' } }] };
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
    });
    const result = await runCli(
      goalArgs('run', objective, t, server, ['--allowed-tools', 'Write,Read,Bash(cat:*)']),
      t.env,
      300_000,
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(fs.readFileSync(path.join(t.workspace, 'b.txt'), 'utf8')).toBe('alpha\n');
    expect(fs.existsSync(path.join(t.workspace, 'refused.txt'))).toBe(false);
    const seen = promptText(bodies[bodies.length - 1]);
    expect(seen).toContain('alpha');
    expect(seen).toContain(
      'the goal allows only file-write, file-read, bash(cat), bash(cat *) (--allowed-tools)',
    );
  }, 400_000);

  it('--output-schema: finish needs a matching result, a mismatch is told to the model', async () => {
    const t = goalTestEnv('headless-schema');
    const objective = `headless-schema-${randomUUID().slice(0, 8)}`;
    const bodies: ChatRequestBody[] = [];
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      bodies.push(body);
      const step = requestStep(body);
      const finish = (extra: Record<string, unknown>) => ({
        toolCalls: [{ name: 'finish', args: { status: 'complete', summary: `try ${step}`, ...extra } }],
      });
      if (step === 1) return finish({ result: { answer: 'forty-two' } });
      if (step === 2) return finish({});
      return finish({ result: { answer: 42 } });
    });
    const dir = tempDir('headless-schema');
    const schemaFile = path.join(dir, 'schema.json');
    fs.writeFileSync(
      schemaFile,
      JSON.stringify({ type: 'object', required: ['answer'], properties: { answer: { type: 'integer' } } }),
    );
    const out = path.join(dir, 'last.json');
    const result = await runCli(
      goalArgs('run', objective, t, server, [
        '--output-schema',
        schemaFile,
        '--output-last-message',
        out,
        '--json',
      ]),
      t.env,
      300_000,
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(JSON.parse(result.stdout).result).toEqual({ answer: 42 });
    expect(fs.readFileSync(out, 'utf8')).toBe('{"answer":42}\n');
    expect(bodies).toHaveLength(3);
    const finishTool = JSON.stringify(
      bodies[0].tools?.find((tool) => JSON.stringify(tool).includes('"finish"')),
    );
    expect(finishTool).toContain('"result"');
    expect(promptText(bodies[1])).toContain(
      'result does not match the output schema: result.answer must be integer',
    );
    expect(promptText(bodies[2])).toContain('result is required');

    fs.writeFileSync(schemaFile, '{"type": "no-such-type"}');
    const bad = await runCli(
      ['start', 'x', '--workspace', t.workspace, '--output-schema', schemaFile],
      t.env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a usable JSON Schema');
  }, 400_000);
});
