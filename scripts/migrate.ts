/** Release step (Procfile: release): apply pending migrations to DATABASE_URL. */
import { config, ConfigError } from '../shared/config';
import { migrateLatest } from '../shared/db';

try {
  const applied = await migrateLatest(config().databaseUrl);
  console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date');
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `Migration failed: ${(err as Error).message}`);
  process.exit(1);
}
