/**
 * The layering as dependency rules (docs/layering.md). `npm run deps` checks them; any violation
 * with severity "error" makes it exit non-zero.
 *
 *   api/, workers/            entry points (HTTP, jobs); never import each other
 *   shared/webhooks           the payment pipeline: calls commands, provider-agnostic
 *   shared/commands           writes (one transaction each), report assembly
 *   shared/queries, documents reads, read models, caches of reads
 *   shared/ledger             postings and account seeding (database)
 *   shared/formats            pure renderers: XML, CSV, PDF from plain values
 *   shared/providers          one adapter per external service (payments, FinanzOnline, mail, AI)
 *   shared/db, redis, queues, outbox, locks, …   infrastructure
 *   shared/domain             pure domain code and data: no I/O, imports nothing above it
 *
 * Paths are relative to the repository root. Type-only imports count like any other import: the
 * swc parser reads the TypeScript source as written (TypeScript 7 has no JS API for the tsc parser).
 */

/** Modules of shared/ that do I/O or sit above the domain: everything except domain/ and errors.ts. */
const SHARED_OUTSIDE_DOMAIN = '^shared/(?!domain/|errors\\.ts$)';

/** npm packages that talk to a database, Redis, a queue, SMTP or HTTP. */
const IO_PACKAGES =
  '^node_modules/(knex|pg|pg-[^/]+|objection|ioredis|bullmq|nodemailer|koa|koa-[^/]+|@koa/[^/]+|@bull-board/[^/]+|pino|prom-client|rate-limiter-flexible|argon2|stripe)/';

/** Node built-ins that do I/O or start processes (dependency-cruiser drops the node: prefix). */
const IO_BUILTINS = '^(node:)?(fs|fs/promises|net|http|https|http2|tls|dgram|dns|dns/promises|child_process|cluster|worker_threads|readline|inspector|repl)$';

/** What the formats must not reach: data access and the layers above them. */
const DATA_ACCESS = '^shared/(queries|commands|webhooks|documents|ledger|auth)/|^shared/(db|redis|queues|outbox|locks|audit|idempotency|plans)\\.ts$';
const DATA_PACKAGES = '^node_modules/(knex|pg|pg-[^/]+|objection|ioredis|bullmq)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-no-io',
      severity: 'error',
      comment:
        'shared/domain is pure domain code and data (money, tax rules, charts of accounts, numbering): it must be testable without a ' +
        'database and reusable by every layer. From shared/ it may import only shared/domain and shared/errors.ts; everything else there ' +
        '(db, redis, queues, outbox, queries, commands, providers, webhooks, ledger, documents, …) does I/O or sits above it. No ' +
        'database, Redis, queue, mail or HTTP package, no Node built-in that does I/O. Move the pure part into shared/domain instead.',
      from: { path: '^shared/domain/' },
      to: { path: [SHARED_OUTSIDE_DOMAIN, IO_PACKAGES, IO_BUILTINS, '^(api|workers|migrations|scripts)/'] },
    },
    {
      name: 'api-not-workers',
      severity: 'error',
      comment:
        'api/ (the HTTP process) and workers/ (the job processes) are separate entry points and deploy as separate processes: what both ' +
        'need belongs in shared/. An import across would start the other side (its queues, its server) in the wrong process.',
      from: { path: '^api/' },
      to: { path: '^workers/' },
    },
    {
      name: 'workers-not-api',
      severity: 'error',
      comment: 'See api-not-workers: workers/ must not import api/; move what both need into shared/.',
      from: { path: '^workers/' },
      to: { path: '^api/' },
    },
    {
      name: 'formats-no-data-access',
      severity: 'error',
      comment:
        'shared/formats turns plain values into XML, CSV and PDF (U30, ELSTER, DATEV, ZUGFeRD, report PDFs). It must not query: ' +
        'report assembly (query, then format) lives in shared/queries or shared/commands, and the types a format needs live in ' +
        'shared/domain or in the format itself. Otherwise a renderer can only be tested against a database, and formats and queries ' +
        'import each other.',
      from: { path: '^shared/formats/' },
      to: { path: [DATA_ACCESS, DATA_PACKAGES] },
    },
    {
      name: 'shared-not-apps',
      severity: 'error',
      comment:
        'shared/ is the library both entry points use; it must not import api/ or workers/ (that would make api depend on workers ' +
        'through shared, and tie shared code to one process). Pass what shared code needs in as an argument, or move it into shared/.',
      from: { path: '^shared/' },
      to: { path: '^(api|workers)/' },
    },
    {
      name: 'commands-not-webhooks',
      severity: 'error',
      comment:
        'The webhook pipeline (shared/webhooks) calls commands (createIncomingInvoiceFromEvent, ledger postings); commands must not ' +
        'import the pipeline back. What both need (advisory locks: shared/locks.ts; the installation lookup and its cache: ' +
        'shared/queries/connectorInstallations.ts; the connector settings type: shared/domain/connectorSettings.ts) sits below both.',
      from: { path: '^shared/commands/' },
      to: { path: '^shared/webhooks/' },
    },
    {
      name: 'queries-not-commands',
      severity: 'error',
      comment:
        'Reads sit below writes: shared/queries must not import shared/commands or the webhook pipeline (commands and the pipeline ' +
        'import queries). Move the shared part down into queries or domain.',
      from: { path: '^shared/queries/' },
      to: { path: '^shared/(commands|webhooks)/' },
    },
    {
      name: 'pipeline-provider-agnostic',
      severity: 'error',
      comment:
        'The webhook pipeline and the commands know payment providers only through the adapter contract (shared/providers/payments ' +
        "index.ts and types.ts); one provider's module (stripe.ts, paypal.ts, …) is reached only through getAdapter(). A new provider " +
        'is then one adapter and one registry entry, nothing in the pipeline.',
      from: { path: '^shared/(webhooks|commands|queries|ledger)/' },
      to: { path: '^shared/providers/payments/', pathNot: '^shared/providers/payments/(index|types)\\.ts$' },
    },
    {
      name: 'migrations-not-apps',
      severity: 'error',
      comment:
        'A migration is frozen once it ran: it may use shared/ helpers, but not api/ or workers/ code, which changes with the app ' +
        'and would change what an old migration does (or start a server or queue while migrating).',
      from: { path: '^migrations/' },
      to: { path: '^(api|workers)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle means neither module can be understood, tested or loaded without the other (and an ES module cycle can hand one ' +
        'side an undefined binding at load time). Break it by moving the shared part below both.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // TypeScript 7 has no JS API, so the tsc-based parser is not available; swc parses the sources as written.
    parser: 'swc',
    // Packages are leaves: their own imports are not cruised (the rules above still see an import of one).
    doNotFollow: { path: '^node_modules/' },
    moduleSystems: ['es6', 'cjs'],
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.json'],
      // The packages' "exports" conditions as Node resolves them (some have no "default").
      conditionNames: ['import', 'require', 'node', 'default'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
