import path from 'node:path';

/**
 * ../shared beside the repository (CI clones main with shared/ next to it): the official
 * schemas, samples and provider fixtures. Never an absolute path.
 */
export const SHARED_DIR = path.resolve(import.meta.dirname, '../../../shared');
export const SCHEMAS_DIR = path.join(SHARED_DIR, 'schemas');
export const schemaPath = (...parts: string[]) => path.join(SCHEMAS_DIR, ...parts);
