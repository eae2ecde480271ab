/**
 * Client for an OpenAI-compatible chat completions API (POST {baseUrl}/chat/completions).
 * Works with OpenAI, Azure-style gateways, Mistral, local servers (vLLM, Ollama's OpenAI mode).
 * The key is sent only as a bearer header and never logged.
 */
import { BodyTooLargeError, readBoundedText } from '../boundedBody';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export class AiProviderError extends Error {
  constructor(
    message: string,
    public readonly status?: number,
  ) {
    super(message);
    this.name = 'AiProviderError';
  }
}

export interface ChatOptions {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
  temperature?: number;
  maxTokens?: number;
}

export async function chatCompletion(messages: ChatMessage[], opts: ChatOptions): Promise<string> {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: opts.model,
        messages,
        temperature: opts.temperature ?? 0.4,
        max_tokens: opts.maxTokens ?? 1500,
      }),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    throw new AiProviderError(timedOut ? `AI provider did not answer within ${opts.timeoutMs} ms` : 'AI provider is unreachable');
  }
  if (!res.ok) {
    throw new AiProviderError(`AI provider answered HTTP ${res.status}`, res.status);
  }
  let body: { choices?: { message?: { content?: unknown } }[] };
  const text = await boundedText(res, MAX_RESPONSE_BYTES);
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new AiProviderError('AI provider answered with invalid JSON');
  }
  const content = body.choices?.[0]?.message?.content;
  if (typeof content !== 'string' || !content.trim()) throw new AiProviderError('AI provider answered without content');
  return content;
}

/**
 * The provider's answer is read up to this many bytes: max_tokens only asks it to stay short, and
 * a misbehaving gateway could otherwise fill the API process's memory (an audit got 24 MB back).
 * 1 MiB holds far more than the 200,000 characters detailsMarkdown may keep.
 */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

async function boundedText(res: Response, limit: number): Promise<string> {
  try {
    return await readBoundedText(res, limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw new AiProviderError(`AI provider answer is larger than ${limit} bytes`);
    throw new AiProviderError(`AI provider answer could not be read: ${(err as Error).name === 'TimeoutError' ? 'timed out' : 'connection lost'}`);
  }
}
