/** Release step (Procfile: release): apply pending migrations to DATABASE_URL. */
import { config, ConfigError } from '../shared/config';
import { migrateLatest } from '../shared/db';

try {
  const applied = await migrateLatest(config().databaseUrl);
  console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date');
} catch (err) {
  // A bad configuration exits 2, as the API and the worker do (operations.md); a failed migration 1.
  console.error(err instanceof ConfigError ? err.message : `Migration failed: ${(err as Error).message}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
