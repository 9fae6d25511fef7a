/**
 * Issue 26 item 11: `--image FILE` attaches images to the first message of a model whose card says
 * it takes them. The bytes reach the provider's request as an image part (the OpenAI test server,
 * over real HTTP), while the transcript and the workflow's history carry only a reference. A file
 * that is missing, empty, too big or not an image, and a model not known to take images, are refused
 * with exit 2 before anything starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MAX_BYTES } from '../../cli/image-input';
import { workflowIdOf } from '../../core/workflow-names';
import { runCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs, TEST_MODEL } from '../support/goal-steps';
import { allText, fetchHistory } from '../support/history';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
/** The start of a GIF: enough for its signature. */
const GIF = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(20, 1)]);

const VISION_MODEL = 'openai-compatible:vision-model';

/** A user's card saying the test server's vision-model takes images. */
function writeVisionCard(home: string): void {
  const dir = path.join(home, 'cards', 'openai-compatible');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'vision-model.json'),
    JSON.stringify({
      provider: 'openai-compatible',
      model: 'vision-model',
      advertisedContextTokens: 128_000,
      maxOutputTokens: 4_000,
      input: ['text', 'image'],
      prices: { inputPerMTok: 0, outputPerMTok: 0 },
      source: 'test',
    }),
  );
}

describe('--image', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('sends the images in the first user message, and stores only references', async () => {
    const t = goalTestEnv('image', { OPENAI_COMPATIBLE_API_KEY: 'sk-image' });
    writeVisionCard(t.home);
    const png = path.join(t.home, 'shot.png');
    const gif = path.join(t.home, 'anim.gif');
    fs.writeFileSync(png, PNG);
    fs.writeFileSync(gif, GIF);
    const before = server.requests.length;
    server.enqueue({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'saw it' } }] });
    const run = await runCli(
      goalArgs(
        'run',
        'describe the pictures',
        t,
        server,
        ['--image', png, '--image', gif, '--json'],
        VISION_MODEL,
      ),
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { sessionId } = JSON.parse(run.stdout);
    const [request] = server.requests.slice(before);
    const first = request.body.messages?.find((message) => message.role === 'user');
    const content = first?.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    expect(content[0]).toMatchObject({ type: 'text' });
    expect(content[0].text).toContain('describe the pictures');
    expect(content.slice(1)).toEqual([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      { type: 'image_url', image_url: { url: `data:image/gif;base64,${GIF.toString('base64')}` } },
    ]);

    // The transcript names the images; their bytes are only in the images table.
    const store = await testStore(t.databaseUrl);
    const messages = await store.listMessages(sessionId);
    const images = messages[0].message.content.filter((part) => part.type === 'image');
    expect(images).toMatchObject([
      { type: 'image', mediaType: 'image/png', bytes: PNG.length, name: 'shot.png' },
      { type: 'image', mediaType: 'image/gif', bytes: GIF.length, name: 'anim.gif' },
    ]);
    const read = await store.readImages(images.map((part) => (part as { imageId: number }).imageId));
    await store.close();
    expect(
      read.map((image) => Buffer.from(image.data).equals(PNG) || Buffer.from(image.data).equals(GIF)),
    ).toEqual([true, true]);
    expect(JSON.stringify(messages)).not.toContain(PNG.toString('base64'));
    // No Temporal payload carries the bytes.
    const history = await fetchHistory(t.temporalAddress, workflowIdOf(sessionId));
    const text = allText(history.map((entry) => entry.event)).join('\n');
    expect(text).toContain('shot.png');
    expect(text).not.toContain(PNG.toString('base64'));
    expect(text).not.toContain('137,80,78,71');
  });

  it('refuses a bad file or a model not known to take images, with exit 2, before anything starts', async () => {
    const t = goalTestEnv('image-bad', { OPENAI_COMPATIBLE_API_KEY: 'sk-image' });
    writeVisionCard(t.home);
    const notImage = path.join(t.home, 'notes.png');
    fs.writeFileSync(notImage, 'just some text, not a picture\n');
    const empty = path.join(t.home, 'empty.jpg');
    fs.writeFileSync(empty, '');
    const huge = path.join(t.home, 'huge.png');
    fs.writeFileSync(huge, Buffer.concat([PNG, Buffer.alloc(IMAGE_MAX_BYTES)]));
    const png = path.join(t.home, 'ok.png');
    fs.writeFileSync(png, PNG);
    const before = server.requests.length;
    const cases: Array<{ args: string[]; model: string; says: string }> = [
      { args: ['--image', notImage], model: VISION_MODEL, says: 'is not a PNG, JPEG, GIF or WebP image' },
      { args: ['--image', path.join(t.home, 'missing.png')], model: VISION_MODEL, says: 'no such file' },
      { args: ['--image', empty], model: VISION_MODEL, says: 'is empty' },
      { args: ['--image', huge], model: VISION_MODEL, says: `at most ${IMAGE_MAX_BYTES}` },
      {
        args: ['--image', png],
        model: TEST_MODEL,
        says: 'is not known to take images (it has no model card)',
      },
    ];
    for (const { args, model, says } of cases) {
      const run = await runCli(goalArgs('start', 'describe it', t, server, args, model), t.env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(says);
    }
    expect(server.requests.length).toBe(before);
  });
});
