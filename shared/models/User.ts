import { Model, type RelationMappings } from 'objection';
import { TenantModel } from './BaseModel';
import { Tenant } from './Tenant';
import type { Role } from '../actor';

/** The pending WebAuthn challenge on the user row (single use, 5 minutes: shared/commands/webauthn.ts). */
export interface StoredWebauthnChallenge {
  type: 'registration' | 'authentication';
  challenge: string;
  expiresAt: number;
}

/**
 * A user of one tenant. Secrets are stored only in forms that are useless when read: the
 * password as argon2id, the TOTP secret AES-256-GCM encrypted, recovery codes as SHA-256.
 */
export class User extends TenantModel {
  static tableName = 'users';
  // Stringified on the way in: pg would turn a JS array into a PostgreSQL array literal.
  static jsonAttributes = ['recoveryCodes', 'webauthnChallenge'];

  static get relationMappings(): RelationMappings {
    return {
      tenant: { relation: Model.BelongsToOneRelation, modelClass: Tenant, join: { from: 'users.tenantId', to: 'tenants.id' } },
    };
  }

  declare email: string;
  declare name: string;
  declare role: Role;
  declare passwordHash: string;
  declare active: boolean;
  // Lockout counters (shared/auth/lockout.ts).
  declare failedLoginCount: number;
  declare lockoutCount: number;
  declare lockedUntil: Date | null;
  declare totpSecretEnc: string | null;
  declare totpEnabled: boolean;
  /** The last TOTP time step accepted: an older or the same step is a replay. */
  declare totpLastStep: number | null;
  /** SHA-256 hashes of the unused recovery codes. */
  declare recoveryCodes: string[];
  declare webauthnUserId: string | null;
  declare webauthnChallenge: StoredWebauthnChallenge | null;
  declare lastLoginAt: Date | null;
  declare createdAt: Date;
  declare updatedAt: Date;

  declare tenant?: Tenant;
}
