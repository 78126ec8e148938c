import type { ChatReply, EvalBackend, EvalPassage } from './backend.ts';

interface SearchResponse {
  results: Array<{ source: string; heading_path: string; chunk_index: number; text: string; score: number }>;
}

interface ChatResponse {
  answer: string;
  citations: Array<{ source: string; chunk_index: number }>;
  unknown_citations?: string[];
  mode: string;
}

/** A running retrieval service: POST /search and POST /chat, as docs/api.md describes them. */
export class HttpBackend implements EvalBackend {
  readonly description: string;
  private readonly baseUrl: string;

  constructor(url: string) {
    this.baseUrl = url.replace(/\/+$/, '');
    this.description = `HTTP ${this.baseUrl}`;
  }

  async search(query: string, k: number): Promise<EvalPassage[]> {
    const body = await this.post<SearchResponse>('/search', { query, k });
    return body.results.map((result) => ({
      source: result.source,
      headingPath: result.heading_path,
      chunkIndex: result.chunk_index,
      text: result.text,
      score: result.score,
    }));
  }

  async chat(query: string): Promise<ChatReply> {
    const body = await this.post<ChatResponse>('/chat', { query });
    return {
      answer: body.answer,
      citations: body.citations.map((citation) => ({ source: citation.source, chunkIndex: citation.chunk_index })),
      unknownCitations: body.unknown_citations ?? [],
      mode: body.mode,
    };
  }

  async close(): Promise<void> {}

  private async post<T>(path: string, payload: unknown): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
    } catch (error) {
      throw new Error(`Cannot reach ${url}: ${(error as Error).message}. Is the service running (pnpm start)?`, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }
}
