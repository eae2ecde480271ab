import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { createRouter } from '../../routing';
import { buildOpenApi } from '../../openapi';
import { notFound } from '../../../shared/errors';

/** GET /api/openapi.json and a rendered reference at /api/docs (Swagger UI from npm, no CDN). */
export const { router: docsRouter, add } = createRouter('/api', 'Documentation');

const require = createRequire(import.meta.url);
const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

let cachedDoc: string | null = null;

add({
  method: 'get',
  path: '/openapi.json',
  auth: 'public',
  summary: 'This API as an OpenAPI 3.1 document',
  responses: { 200: { description: 'OpenAPI 3.1 document', schema: { type: 'object' } } },
  handler: (ctx) => {
    cachedDoc ??= JSON.stringify(buildOpenApi(ctx.config.publicBaseUrl ? [ctx.config.publicBaseUrl] : []));
    ctx.type = 'application/json';
    ctx.body = cachedDoc;
  },
});

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Accounting service API</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css"><link rel="icon" href="/api/docs/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/swagger-ui-standalone-preset.js"></script>
<script src="/api/docs/init.js"></script>
</body></html>`;

const init = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });`;

add({
  method: 'get',
  path: '/docs',
  auth: 'public',
  summary: 'Rendered API reference (Swagger UI)',
  responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  handler: (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  },
});

add({
  method: 'get',
  path: '/docs/:asset',
  auth: 'public',
  undocumented: true,
  summary: 'Static assets of the reference page',
  responses: { 200: { description: 'asset' } },
  handler: async (ctx) => {
    const asset = ctx.input.params.asset as string;
    if (asset === 'init.js') {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = init;
      return;
    }
    const type = ASSETS[asset];
    if (!type) throw notFound('Asset');
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await fs.readFile(path.join(swaggerDir, asset));
  },
});
