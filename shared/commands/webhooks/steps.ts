/**
 * The pipeline's steps as docs/webhooks.md numbers them. Each booking reports supplier, invoice,
 * duplicate and autoPost in that order; test-webhook adds signature and tenant in front and shows
 * them all.
 */
export type StepName = 'signature' | 'tenant' | 'supplier' | 'invoice' | 'duplicate' | 'autoPost';

export interface StepResult {
  step: StepName;
  result: string;
  detail: string;
}

export const step = (name: StepName, result: string, detail: string): StepResult => ({ step: name, result, detail });
