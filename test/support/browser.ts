/// <reference lib="dom" />
/**
 * Headless Debian Chromium driven by puppeteer-core, for tests that look at a page as a person
 * would: by visible text and aria roles, with screenshots kept under test-output/ (CI artifacts).
 * Nothing here downloads a browser; the closed network here could not serve one anyway.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
// puppeteer-core is an ES module; this project compiles to CommonJS, so it is loaded with import().
import type { Browser, Page } from 'puppeteer-core' with { 'resolution-mode': 'import' };
import { tempDir } from './cli';

/** Debian's `chromium` package (override with CHROMIUM_PATH). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Where screenshots go; .gitignore'd, kept by CI as artifacts. */
export const TEST_OUTPUT_DIR = path.resolve(__dirname, '../../test-output');

// Without the networking flags Chromium keeps calling Google's services, which this machine's closed
// network refuses many at a time; a fresh profile keeps runs independent of each other.
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const VIEWPORT = { width: 1400, height: 1000 };
const DEFAULT_WAIT_MS = 30_000;
const POLL_MS = 250;
const SHOWN_TEXT_CHARS = 1_500;

/** True when the Chromium binary is installed. */
export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/** A launched browser with its throwaway profile. */
export interface TestBrowser {
  browser: Browser;
  /** A page with the test viewport and default timeouts; its console errors are kept for messages. */
  newPage(): Promise<Page>;
  /** Closes the browser and removes its profile. Safe to call twice. */
  close(): Promise<void>;
}

/** Launches headless Chromium with the flags this machine needs and a new empty user-data-dir. */
export async function launchChromium(): Promise<TestBrowser> {
  if (!chromiumAvailable()) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  const profile = tempDir('chromium-profile');
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`],
  });
  let closed = false;
  return {
    browser,
    async newPage() {
      const page = await browser.newPage();
      await page.setViewport(VIEWPORT);
      page.setDefaultTimeout(DEFAULT_WAIT_MS);
      page.setDefaultNavigationTimeout(DEFAULT_WAIT_MS);
      return page;
    },
    async close() {
      if (closed) return;
      closed = true;
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot of the viewport (or the whole page) as test-output/<dir>/<name>.png. */
export async function saveScreenshot(
  page: Page,
  dir: string,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<string> {
  const folder = path.join(TEST_OUTPUT_DIR, dir);
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, `${name}.png`) as `${string}.png`;
  await page.screenshot({ path: file, fullPage: options.fullPage ?? false });
  return file;
}

/**
 * Polls `read` on the page until `accept` says yes; fails naming `what` and showing the last value
 * read, so a changed UI is diagnosed from the test output alone.
 */
export async function waitForPage<T>(
  what: string,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = DEFAULT_WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (accept(last)) return last;
    } catch (error) {
      // A navigation in progress destroys the execution context; the next poll reads the new page.
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const shown = typeof last === 'string' ? last : JSON.stringify(last);
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${String(shown).slice(0, SHOWN_TEXT_CHARS)}` +
      (lastError ? ` (last error: ${(lastError as Error).message})` : ''),
  );
}

/** Waits until every pattern matches `read()`'s text; returns that text. */
export function waitForText(
  what: string,
  read: () => Promise<string | null>,
  patterns: readonly (string | RegExp)[],
  timeoutMs = DEFAULT_WAIT_MS,
): Promise<string> {
  return waitForPage(
    what,
    async () => (await read()) ?? '',
    (text) => patterns.every((p) => (typeof p === 'string' ? text.includes(p) : p.test(text))),
    timeoutMs,
  );
}

/** The visible text of the whole page. */
export function pageText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person reads
  return page.evaluate(() => document.body.innerText);
}

/**
 * The text of the section a heading (h1–h6, exact text) opens: the heading's nearest ancestor that
 * holds more than the heading. With `framed`, the text of the same-origin iframe(s) in that section
 * instead (the Temporal UI renders Markdown in iframes); null when the heading or frame is missing.
 */
export function sectionText(page: Page, heading: string, options: { framed?: boolean } = {}) {
  return page.evaluate(
    (heading, framed) => {
      const headings = Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'));
      const title = headings.find((h) => h.textContent?.trim() === heading);
      if (!title) return null;
      let box = title.parentElement;
      while (box) {
        // Climbing into a box with another heading would read a neighbouring section.
        if (box.querySelectorAll('h1, h2, h3, h4, h5, h6').length > 1) return null;
        if (framed) {
          const frames = Array.from(box.querySelectorAll('iframe'));
          if (frames.length > 0) {
            // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person reads
            return frames.map((frame) => frame.contentDocument?.body?.innerText ?? '').join('\n');
          }
        } else {
          // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person reads
          const text = (box as HTMLElement).innerText;
          if (text.trim() !== heading) return text;
        }
        box = box.parentElement;
      }
      return null;
    },
    heading,
    options.framed ?? false,
  );
}

/** Texts of all SVG `<text>` elements (charts and timelines draw their labels this way). */
export function svgTexts(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('svg text')).map((node) => node.textContent?.trim() ?? ''),
  );
}

/** Clicks the element with this aria role and exact accessible name, once it is there. */
export async function clickByRole(page: Page, role: string, name: string): Promise<void> {
  const element = await page.waitForSelector(`::-p-aria([name=${JSON.stringify(name)}][role="${role}"])`);
  if (!element) throw new Error(`no ${role} named ${JSON.stringify(name)}`);
  await element.click();
}
