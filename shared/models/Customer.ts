import { TenantModel } from './BaseModel';

export class Customer extends TenantModel {
  static tableName = 'customers';

  declare name: string;
  declare company: string | null;
  declare email: string | null;
  declare phone: string | null;
  declare address: string | null;
  declare vatId: string | null;
  declare country: string | null;
  declare currency: string | null;
  declare paymentTermDays: number | null;
  declare color: string | null;
  declare createdAt: Date;
  declare updatedAt: Date;
  declare deletedAt: Date | null;
}
