/**
 * The layers of docs/architecture.md, kept by `npm run lint`: imports point down the house
 * (cli → worker → workflows | activities → store → core), workflows take only types from
 * activities, nothing imports cli/, and the workflow folder has no import cycle (type imports
 * included: a circle of types is still a circle a reader has to walk).
 */
const LAYERS = ['core', 'store', 'activities', 'workflows', 'worker', 'cli'];

/** The folders a layer must not import. */
const above = {
  core: ['store', 'activities', 'workflows', 'worker', 'cli'],
  store: ['activities', 'workflows', 'worker', 'cli'],
  activities: ['workflows', 'worker', 'cli'],
  workflows: ['store', 'worker', 'cli'],
  worker: ['cli'],
};

module.exports = {
  forbidden: [
    ...Object.entries(above).map(([layer, higher]) => ({
      name: `${layer}-imports-down-only`,
      comment: `${layer}/ imports only the layers below it (docs/architecture.md, Folders)`,
      severity: 'error',
      from: { path: `^${layer}/` },
      to: { path: `^(${higher.join('|')})/` },
    })),
    {
      name: 'workflows-take-activity-types-only',
      comment:
        'workflow code imports activities with `import type` and proxyActivities: their code never enters the bundle',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-cycles-in-workflows',
      comment:
        'the workflow folder depends on the GoalRun port (workflows/goal-run-port.ts), not on a hub that imports it back',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^workflows/', circular: true },
    },
  ],
  options: {
    includeOnly: `^(${LAYERS.join('|')})/`,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
