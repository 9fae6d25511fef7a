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
import { goalExtensions, hostTrustsProjects } from './extension-config';
import { McpStartError } from './mcp-connection';
import { McpHub } from './mcp-hub';
import { findProjectInstructions } from './project-instructions';
import { gatherWorkspaceFiles } from './workspace-extensions';

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
  // What a goal started now would use: the workspace's own files read as its first gathering reads them.
  const files = gatherWorkspaceFiles({
    sources: input.sources,
    workspace: input.workspace,
    sandbox: input.sandbox,
    trusted: input.sources.trustProject === true || hostTrustsProjects(input.host.goalrunHome),
    execution: 1,
    sessionId: '<id>',
  });
  const extensions = goalExtensions({
    sources: input.sources,
    workspace: input.workspace,
    home: input.host.goalrunHome,
    sandbox: input.sandbox,
    workspaceFiles: files.state,
  });
  const checks: DoctorCheck[] = [];
  const found = await findProjectInstructions(input.workspace, input.host.goalrunHome);
  const capped = capInstructions(found.sources, extensions.instructionsMaxBytes);
  const instructionProblems = [
    ...found.refused,
    ...(capped.notice ? [`${capped.notice}; shorten them or raise instructions_max_kib`] : []),
  ];
  checks.push({
    name: 'project instructions',
    ok: instructionProblems.length === 0,
    required: false,
    detail:
      capped.files.length === 0
        ? `none for ${input.workspace} (AGENTS.md, or CLAUDE.md, from the git root down; $GOALRUN_HOME/AGENTS.md)`
        : capped.files.map((file) => `${file.label} (${file.bytes} bytes)`).join(', '),
    ...(instructionProblems.length > 0 ? { fix: instructionProblems.join('; ') } : {}),
  });
  const hookCounts = Object.entries(extensions.hooks)
    .filter(([, hooks]) => hooks.length > 0)
    .map(([event, hooks]) => `${event} ${hooks.length}`);
  const ignored = files.notes.filter((note) => note.startsWith('found '));
  const problems = [...files.notes.filter((note) => !note.startsWith('found ')), ...extensions.problems];
  checks.push({
    name: 'hooks',
    ok: problems.length === 0,
    required: false,
    detail: [hookCounts.length > 0 ? hookCounts.join(', ') : 'none configured', ...ignored].join('; '),
    ...(problems.length > 0 ? { fix: problems.join('; ') } : {}),
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
          const said = err instanceof McpStartError ? err.stderr.map(redact) : [];
          return {
            name,
            ok: false,
            required: false,
            detail: redact(`${transport}: ${(err as Error).message}`),
            fix: 'check its command (or url) and env in the MCP config; stdio servers run in the sandbox (network per --network)',
            ...(said.length > 0 ? { more: [`stderr (first ${said.length} lines):`, ...said] } : {}),
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
