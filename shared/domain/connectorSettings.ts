/**
 * A payment connector installation's settings (PUT /api/connectors/<slug>/settings, docs/webhooks.md):
 * validated and stored by the connector commands (shared/commands/connectors.ts), read by the
 * webhook booking (shared/commands/webhooks/bookPaymentEvent.ts) and the ledger posting. A plain type, here so
 * both sides import it from below.
 */
export interface ConnectorSettings {
  autoPost?: boolean;
  defaultSupplierId?: string | null;
  expenseAccount?: string | null;
  clearingAccount?: string | null;
}
