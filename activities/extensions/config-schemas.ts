/**
 * The zod schemas of what users bring: MCP servers (config `mcp_servers`, `--mcp-config FILE` and a
 * trusted project's `.mcp.json`, all in the format Claude Code and Cursor use) and hooks (config
 * `hooks`, a trusted project's `.goalrun/hooks.json`). Built on a zod passed in, so the config
 * file's schema (worker/config-schema.ts) can load zod lazily as it does.
 */
import type * as Zod from 'zod';
import { SERVER_NAME_PATTERN } from '../../core/extensions/mcp-names';
import { MCP_APPROVAL_POLICIES } from '../../core/extensions/workspace-context';

/** Default time a hook may run, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;
/** Default time a notify hook may run: it is told, it decides nothing. */
export const DEFAULT_NOTIFY_TIMEOUT_S = 30;
/** Upper bound of a hook's timeout. */
export const MAX_HOOK_TIMEOUT_S = 600;

/** The hook events. */
export const HOOK_EVENTS = ['pre_tool', 'post_tool', 'stop', 'notify'] as const;

/** One hook event's name. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** An MCP server started by command (stdio), inside the goal's sandbox. */
export interface StdioServerConfig {
  type?: 'stdio';
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  approval?: (typeof MCP_APPROVAL_POLICIES)[number];
}

/** An MCP server reached over Streamable HTTP from the tool host. */
export interface HttpServerConfig {
  type?: 'http' | 'streamable-http' | 'streamableHttp';
  url: string;
  headers?: Record<string, string>;
  approval?: (typeof MCP_APPROVAL_POLICIES)[number];
}

/** One configured MCP server. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** Whether a server is reached over HTTP. */
export function isHttpServer(server: McpServerConfig): server is HttpServerConfig {
  return 'url' in server;
}

/** One hook. */
export interface HookConfig {
  command: string;
  /** A regular expression over tool names (pre_tool, post_tool); every tool when absent. */
  matcher?: string;
  timeout_s?: number;
  /** pre_tool: a hook that fails (exit other than 0 or 2, timeout) allows or denies the call. */
  on_error?: 'allow' | 'deny';
  /** Let this hook use the network even when the goal's tools may not (a notify hook that posts to chat). */
  network?: boolean;
}

/** The hooks, by event. */
export type HooksConfig = Partial<Record<HookEvent, HookConfig[]>>;

function isRegExp(text: string): boolean {
  try {
    new RegExp(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The schema of the `mcp_servers` map. `strict` (goalrun's own config) makes unknown keys errors;
 * a Claude Code or Cursor file is read with its other keys ignored, so it works unchanged.
 */
export function mcpServersSchema(z: typeof Zod, strict: boolean) {
  const object = <T extends Zod.ZodRawShape>(shape: T) =>
    strict ? z.strictObject(shape) : z.looseObject(shape);
  const approval = z.enum(MCP_APPROVAL_POLICIES).optional();
  const stdio = object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1, 'must not be empty'),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    approval,
  });
  const http = object({
    type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
    url: z
      .string()
      .refine((value) => /^https?:\/\//.test(value) || value.includes('${'), 'must be an http(s) URL'),
    headers: z.record(z.string(), z.string()).optional(),
    approval,
  });
  const server = z.unknown().transform((value, context): McpServerConfig => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      context.addIssue({
        code: 'custom',
        message: 'must be an object with "command" (stdio) or "url" (http)',
      });
      return z.NEVER;
    }
    const entry = value as Record<string, unknown>;
    if (entry.type === 'sse') {
      context.addIssue({
        code: 'custom',
        path: ['type'],
        message:
          'the SSE transport is not supported; use the server\'s Streamable HTTP endpoint ("type": "http")',
      });
      return z.NEVER;
    }
    const schema = 'url' in entry || entry.type === 'http' ? http : stdio;
    const parsed = schema.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        context.addIssue({ code: 'custom', path: issue.path as PropertyKey[], message: issue.message });
      }
      return z.NEVER;
    }
    return parsed.data as McpServerConfig;
  });
  return z.record(
    z.string().regex(SERVER_NAME_PATTERN, 'a server name is letters, digits, "-" and single "_"'),
    server,
  );
}

/** The schema of the `hooks` section. */
export function hooksSchema(z: typeof Zod) {
  const timeout = z.number().int().positive().max(MAX_HOOK_TIMEOUT_S).optional();
  const hook = z.strictObject({
    command: z.string().min(1, 'must not be empty'),
    matcher: z.string().refine(isRegExp, 'must be a regular expression over tool names').optional(),
    timeout_s: timeout,
    on_error: z.enum(['allow', 'deny']).optional(),
    network: z.boolean().optional(),
  });
  const list = z.array(hook).optional();
  return z.strictObject({ pre_tool: list, post_tool: list, stop: list, notify: list });
}

/** The schema of a `--mcp-config` file or a project's `.mcp.json`: `{"mcpServers": {...}}`, other keys ignored. */
export function mcpConfigFileSchema(z: typeof Zod) {
  return z.looseObject({ mcpServers: mcpServersSchema(z, false) });
}

/** A project's `.goalrun/hooks.json`: `{"hooks": {...}}`. */
export function projectHooksFileSchema(z: typeof Zod) {
  return z.strictObject({ hooks: hooksSchema(z) });
}

/** `path.to.key: message; …` for a zod error, so the bad key is named. */
export function describeIssues(error: Zod.ZodError, prefix = ''): string {
  return error.issues
    .map((issue) => {
      const key = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.');
      return `${key || '(top level)'}: ${issue.message}`;
    })
    .join('; ');
}
