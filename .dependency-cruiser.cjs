/**
 * The layers of server/, bottom to top (docs/architecture.md, "Layers"). A folder (or a file directly
 * in server/) may import only itself and what is listed before it: lower layers, and within its layer
 * the folders before it. So an upward import fails `npm run lint:deps`, and no two folders can import
 * each other (type-only imports count). A folder that is in no layer fails too, until it is placed.
 */
const LAYERS = [
  ['kernel', ['errors.ts', 'clock.ts', 'config.ts', 'validation.ts', 'xml-text.ts', 'money/', 'pdf/', 'pages/']],
  ['auth', ['auth/']],
  ['shapes', ['shapes/']],
  ['db', ['db/']],
  ['http', ['http/']],
  ['shared cores', ['metadata/', 'jobs/', 'events/', 'email/']],
  [
    'features',
    ['businesses/', 'clients/', 'keys/', 'owners/', 'oauth/', 'webhooks/', 'expenses/', 'tax-rates/', 'contracts/', 'payments/', 'invoices/', 'gateways/', 'refunds/', 'credit-notes/', 'einvoice/', 'quick-charge/', 'recurring-invoices/', 'test-clock/'],
  ],
  ['hosted pages', ['pay/', 'sign/', 'authorize/', 'woocommerce/']],
  ['composition root', ['services.ts', 'partner-api.ts', 'openapi/', 'scheduler.ts', 'app.ts', 'server.ts']],
];

const ORDER = LAYERS.flatMap(([layer, nodes]) => nodes.map((node) => ({ layer, node })));
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `invoices/` → everything under server/invoices/; `app.ts` → that file only. */
const pathOf = (node) => `^server/${escape(node)}${node.endsWith('/') ? '' : '$'}`;
const anyOf = (nodes) => `(${nodes.map(pathOf).join('|')})`;

const upward = ORDER.slice(0, -1).map(({ layer, node }, i) => ({
  name: `layers: ${node}`,
  comment: `${node} (${layer}) may import only what docs/architecture.md lists below it`,
  severity: 'error',
  from: { path: pathOf(node) },
  to: { path: anyOf(ORDER.slice(i + 1).map((later) => later.node)) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'layers: unplaced',
      comment: 'every folder and file of server/ that imports has a layer here (and in docs/architecture.md)',
      severity: 'error',
      from: { path: '^server/', pathNot: anyOf(ORDER.map(({ node }) => node)) },
      to: {},
    },
    {
      name: 'layers: unplaced import',
      comment: 'every folder and file of server/ that is imported has a layer here (and in docs/architecture.md)',
      severity: 'error',
      from: {},
      to: { path: '^server/', pathNot: anyOf(ORDER.map(({ node }) => node)) },
    },
    {
      name: 'no-circular',
      comment: 'modules that import each other, directly or through others',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^server/',
    // Type-only imports are dependencies too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
