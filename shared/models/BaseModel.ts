import { Model } from 'objection';

/**
 * Base of the aggregate models (docs/data-layer.md). Columns are declared, not initialised, so
 * class fields never overwrite what objection sets; knex's snake_case mappers name the columns.
 * Timestamps are Date objects as pg returns them; numeric money columns stay decimal strings.
 */
export abstract class BaseModel extends Model {}

/** A row that belongs to one tenant: every query on it must name tenantId. */
export abstract class TenantModel extends BaseModel {
  declare id: string;
  declare tenantId: string;
}
