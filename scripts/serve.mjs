/**
 * `node scripts/serve.mjs web|worker`: how the Procfile starts the deployed processes.
 *
 * The TypeScript sources are bundled by esbuild (the compiler tsx runs per module) once at start,
 * into `.build/<role>-<content hash>/`, and node runs the JavaScript. tsx at runtime keeps a
 * loader thread, every module's source map and its transform machinery in the process: about
 * 100 MB of RSS per process under load (docs/production.md, "Processes"), for each web, worker
 * and sandboxed renderer. Plain JavaScript file, so nothing has to be compiled to start this.
 *
 * Packages stay external (resolved from node_modules as before); dynamic imports become chunks
 * loaded when first used, as they were. Where `.build` cannot be written the process runs the
 * sources through tsx instead, with a warning.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');

/** Entry points per process type; the worker's sandboxed processors are entries of their own. */
const ROLES = {
  web: { main: 'api/server.ts', entries: { server: 'api/server.ts' } },
  worker: {
    main: 'workers/index.ts',
    entries: {
      index: 'workers/index.ts',
      'sandbox/documents': 'workers/sandbox/documents.ts',
      'sandbox/email': 'workers/sandbox/email.ts',
      'sandbox/reports': 'workers/sandbox/reports.ts',
    },
  },
};

const KEEP_OLD_BUILDS_MS = 7 * 24 * 3600_000;

/** Bundles the role's entries; returns the directory holding them (reused when unchanged). */
export async function buildRole(role, buildRoot = path.join(root, '.build')) {
  const spec = ROLES[role];
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(spec.entries).map(([name, file]) => [name, path.join(root, file)])),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outdir: '/out',
    outExtension: { '.js': '.mjs' },
    // Chunks beside the entries: code that finds files next to itself (workers/worker.ts's
    // sandboxed processors) finds them wherever esbuild put it.
    chunkNames: '[name]-[hash]',
    sourcemap: 'linked',
    sourcesContent: false,
    write: false,
    logLevel: 'warning',
  });
  await esbuild.stop();
  const hash = crypto.createHash('sha256');
  for (const f of result.outputFiles) hash.update(f.path).update(f.contents);
  const dir = path.join(buildRoot, `${role}-${hash.digest('hex').slice(0, 16)}`);
  if (!fs.existsSync(dir)) {
    // Written aside and renamed: web and worker starting together never see half a build.
    const tmp = path.join(buildRoot, `.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    for (const f of result.outputFiles) {
      const target = path.join(tmp, path.relative('/out', f.path));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // Source maps name the sources relative to the bundle; from its real place they resolve.
      fs.writeFileSync(target, f.path.endsWith('.map') ? fixMapSources(f.text, path.dirname(f.path), path.dirname(path.join(dir, path.relative('/out', f.path)))) : f.contents);
    }
    try {
      fs.renameSync(tmp, dir);
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!fs.existsSync(dir)) throw err;
    }
  }
  pruneOldBuilds(buildRoot, role, dir);
  return { dir, main: path.join(dir, `${Object.keys(spec.entries)[0]}.mjs`) };
}

function fixMapSources(text, fromDir, toDir) {
  const map = JSON.parse(text);
  map.sources = map.sources.map((s) => path.relative(toDir, path.resolve(fromDir, s)));
  return JSON.stringify(map);
}

/** Builds of other versions, a week after they were made (a running process may still load their chunks). */
function pruneOldBuilds(buildRoot, role, keep) {
  for (const name of fs.readdirSync(buildRoot)) {
    const dir = path.join(buildRoot, name);
    if (dir === keep || !(name.startsWith(`${role}-`) || name.startsWith('.tmp-'))) continue;
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs > KEEP_OLD_BUILDS_MS) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another process pruned it first.
    }
  }
}

async function serve(role) {
  if (!ROLES[role]) {
    console.error(`usage: node scripts/serve.mjs ${Object.keys(ROLES).join('|')}`);
    process.exit(2);
  }
  const source = path.join(root, ROLES[role].main);
  let bundle;
  try {
    bundle = (await buildRole(role)).main;
  } catch (err) {
    console.error(JSON.stringify({ level: 40, msg: `could not bundle the ${role} process (${err.message}); running the sources through tsx` }));
  }
  // The process is known by its source file (PostgreSQL's application_name, shared/db.ts).
  process.argv[1] = source;
  if (bundle) {
    // Stack traces point at the TypeScript sources, as under tsx: here, and in the sandboxed
    // renderers BullMQ forks (they inherit the environment, not this call).
    process.setSourceMapsEnabled(true);
    process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, '--enable-source-maps'].filter(Boolean).join(' ');
    const { main } = await import(pathToFileURL(bundle).href);
    await main();
  } else {
    // The source starts itself when it is process.argv[1], as under `tsx api/server.ts`.
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(source).href);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await serve(process.argv[2]);
