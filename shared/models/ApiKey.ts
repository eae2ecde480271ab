import { TenantModel } from './BaseModel';
import type { Role } from '../actor';

/**
 * An API key of one tenant (docs/auth.md, "API keys"). The secret is never stored: only the
 * SHA-256 of the whole key. `publicId` is the non-secret part that finds the row.
 */
export class ApiKey extends TenantModel {
  static tableName = 'api_keys';

  declare name: string;
  declare role: Role;
  declare publicId: string;
  declare secretHash: string;
  declare createdBy: string | null;
  declare createdAt: Date;
  declare expiresAt: Date | null;
  declare revokedAt: Date | null;
  declare revokedBy: string | null;
  declare lastUsedAt: Date | null;
}
