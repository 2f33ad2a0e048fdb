/**
 * Module boundaries (docs/architecture.md): a module's public surface is its index.ts; the
 * platform knows no module and no configuration. `npm run lint:deps` checks them; `npm test` runs it.
 */
module.exports = {
  forbidden: [
    {
      name: 'module-internals',
      comment: 'A module imports another module only through its index.ts (commands, queries, events, routes).',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'composition-uses-surfaces',
      comment: 'The composition root, the entry points and the read models see modules only through their index.ts.',
      severity: 'error',
      from: { path: '^(src/[^/]+\\.ts$|projections/)' },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: ['^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'platform-is-domain-free',
      comment: 'src/platform holds infrastructure only: it is handed its settings and its domain tables.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^(src/(?!platform/)|projections/)' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycle at run time (type-only imports vanish when compiled and may go both ways).',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
