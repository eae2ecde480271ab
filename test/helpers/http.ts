/** Small fetch wrapper for tests: JSON in, parsed JSON (or text/bytes) out, headers kept. */
export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  raw: Buffer;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export function client(baseUrl: string, defaults: { token?: string } = {}) {
  const call = async <T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse<T>> => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token ?? defaults.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body: body as never, redirect: 'manual' });
    const raw = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    let parsed: unknown = raw;
    if (type.includes('json')) parsed = raw.length ? JSON.parse(raw.toString('utf8')) : null;
    else if (type.startsWith('text/') || type.includes('xml') || type.includes('csv')) parsed = raw.toString('utf8');
    return { status: res.status, headers: res.headers, body: parsed as T, raw };
  };
  return {
    get: <T = any>(path: string, opts?: RequestOptions) => call<T>('GET', path, opts),
    post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('POST', path, { ...opts, body }),
    put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PUT', path, { ...opts, body }),
    delete: <T = any>(path: string, opts?: RequestOptions) => call<T>('DELETE', path, opts),
    request: call,
    as: (token: string) => client(baseUrl, { token }),
  };
}

export type TestClient = ReturnType<typeof client>;
