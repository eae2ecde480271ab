import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's directory: the nearest one above this code that holds package.json. Under tsx
 * this module runs from shared/, in the deployed processes from a bundle in .build/<role>-<hash>/
 * (scripts/serve.mjs), so `import.meta.url` + '..' is not the same place in both.
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const projectRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)));
