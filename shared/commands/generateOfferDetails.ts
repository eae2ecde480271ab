import { config, type Config } from '../config';
import { providerError, serviceUnavailable } from '../errors';
import { chatCompletion, AiProviderError, type ChatMessage } from '../providers/ai/chatCompletions';

export interface OfferDetailsInput {
  customerName?: string;
  items?: { description: string; quantity?: number; unit?: string }[];
  headerText?: string;
  instruction?: string;
}

/**
 * The prompt: the model writes the quote's detail pages (scope, deliverables, assumptions) as
 * Markdown in the language of the input. User-supplied text is passed as data in the user
 * message, never as instructions in the system message.
 */
export function buildOfferDetailsPrompt(input: OfferDetailsInput): ChatMessage[] {
  const items = (input.items ?? [])
    .map((i, n) => `${n + 1}. ${i.description}${i.quantity !== undefined ? ` — ${i.quantity}${i.unit ? ` ${i.unit}` : ''}` : ''}`)
    .join('\n');
  return [
    {
      role: 'system',
      content:
        'Du schreibst die Detailseiten eines Angebots für ein Unternehmen in Österreich oder Deutschland. ' +
        'Antworte ausschließlich mit Markdown (Überschriften, Absätze, Aufzählungen, bei Bedarf Tabellen), ' +
        'sachlich und professionell, in der Sprache der Eingaben. Erfinde keine Preise, Rabatte, Fristen ' +
        'oder rechtlichen Zusagen, die nicht in den Eingaben stehen.',
    },
    {
      role: 'user',
      content: [
        `Kunde: ${input.customerName ?? '(nicht angegeben)'}`,
        input.headerText ? `Einleitung des Angebots: ${input.headerText}` : null,
        items ? `Positionen:\n${items}` : 'Positionen: (keine)',
        input.instruction ? `Wunsch des Verfassers: ${input.instruction}` : null,
      ]
        .filter(Boolean)
        .join('\n\n'),
    },
  ];
}

/** Strip a surrounding ```markdown fence that some models add. */
export function cleanMarkdown(text: string): string {
  const m = /^\s*```(?:markdown|md)?\s*\n([\s\S]*?)\n```\s*$/i.exec(text);
  return (m ? m[1] : text).trim();
}

/** Generates Markdown for review; nothing is stored (the client saves it via PUT detailsMarkdown). */
export async function generateOfferDetails(
  input: OfferDetailsInput,
  ai: Config['ai'] = config().ai,
): Promise<{ ok: true; markdown: string }> {
  if (!ai.baseUrl) throw serviceUnavailable('AI offer details are not configured on this server (AI_BASE_URL is not set)', 3600);
  try {
    const text = await chatCompletion(buildOfferDetailsPrompt(input), { ...ai, baseUrl: ai.baseUrl });
    return { ok: true, markdown: cleanMarkdown(text) };
  } catch (err) {
    if (err instanceof AiProviderError) throw providerError(`The AI provider failed: ${err.message}`);
    throw err;
  }
}
