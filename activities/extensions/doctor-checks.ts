/**
 * `goalrun doctor` about what users bring, for one workspace: each configured MCP server is started
 * (stdio in the sandbox, as a goal would) and its tools listed, the project instruction files in
 * effect are named, and the hooks counted. One check line each; nothing here is required.
 */
import { checkToolSchema } from '../../core/extensions/mcp-schema-check';
import { capInstructions } from '../../core/extensions/project-instructions';
import type { ExtensionSources } from '../../core/extensions/workspace-context';
import type { SandboxSettings } from '../../core/sandbox-settings';
import type { DoctorCheck } from '../sandbox/doctor';
import type { SandboxHost } from '../sandbox/host';
import { createRedactor } from '../sandbox/redact';
import { isHttpServer } from './config-schemas';
import { loadGoalExtensions } from './extension-config';
import { McpHub } from './mcp-hub';
import { findProjectInstructions } from './project-instructions';

/** What the checks need. */
export interface ExtensionDoctorInput {
  workspace: string;
  sources: ExtensionSources;
  sandbox: SandboxSettings;
  host: SandboxHost;
  env: NodeJS.ProcessEnv;
  /** Values to keep out of the lines (provider keys, database password). */
  secrets: string[];
}

/** The checks: instructions, hooks, then one line per MCP server. */
export async function extensionDoctorChecks(input: ExtensionDoctorInput): Promise<DoctorCheck[]> {
  const extensions = loadGoalExtensions(input.sources, input.workspace, input.host.goalrunHome);
  const checks: DoctorCheck[] = [];
  const capped = capInstructions(
    await findProjectInstructions(input.workspace, input.host.goalrunHome),
    extensions.instructionsMaxBytes,
  );
  checks.push({
    name: 'project instructions',
    ok: capped.notice === null,
    required: false,
    detail:
      capped.files.length === 0
        ? `none for ${input.workspace} (AGENTS.md, or CLAUDE.md, from the git root down; $GOALRUN_HOME/AGENTS.md)`
        : capped.files.map((file) => `${file.label} (${file.bytes} bytes)`).join(', '),
    ...(capped.notice ? { fix: `${capped.notice}; shorten them or raise instructions_max_kib` } : {}),
  });
  const hookCounts = Object.entries(extensions.hooks)
    .filter(([, hooks]) => hooks.length > 0)
    .map(([event, hooks]) => `${event} ${hooks.length}`);
  checks.push({
    name: 'hooks',
    ok: extensions.problems.length === 0,
    required: false,
    detail: hookCounts.length > 0 ? hookCounts.join(', ') : 'none configured',
    ...(extensions.problems.length > 0 ? { fix: extensions.problems.join('; ') } : {}),
  });
  const hub = new McpHub();
  const sessionId = `doctor-${process.pid}`;
  try {
    const results = await Promise.all(
      extensions.servers.map(async (server): Promise<DoctorCheck> => {
        const transport = isHttpServer(server.config) ? 'http' : 'stdio, in the sandbox';
        const name = `mcp server ${server.name}`;
        try {
          const { connection } = await hub.connect(server, {
            workspace: input.workspace,
            sessionId,
            sandbox: input.sandbox,
            host: input.host,
            env: input.env,
          });
          const tools = await connection.listTools();
          const bad = tools.filter((tool) => !checkToolSchema(tool.inputSchema).ok).map((tool) => tool.name);
          const redact = createRedactor([...input.secrets, ...connection.secrets]);
          return {
            name,
            ok: bad.length === 0,
            required: false,
            detail: redact(`${tools.length} tools (${transport}; from ${server.source})`),
            ...(bad.length > 0
              ? { fix: `its schemas of ${bad.join(', ')} would be rejected; goals leave those tools out` }
              : {}),
          };
        } catch (err) {
          const redact = createRedactor(input.secrets);
          return {
            name,
            ok: false,
            required: false,
            detail: redact(`${transport}: ${(err as Error).message}`),
            fix: 'check its command (or url) and env in the MCP config; stdio servers run in the sandbox (network per --network)',
          };
        }
      }),
    );
    checks.push(...results);
  } finally {
    await hub.closeAll();
  }
  return checks;
}
