/**
 * TypeScript client of the graphmem HTTP API, over `fetch` (Node 18+, browsers, Deno, Bun).
 *
 * The body types come from the server's OpenAPI document (`npm run generate` writes
 * `src/schema.d.ts` with openapi-typescript), so they are the server's own models. Every error
 * answer (`application/problem+json`) is thrown as a typed `APIError` subclass; a request
 * that gets no answer throws `TransportError`. Reads, message and trace batches (idempotent by
 * id) and searches are retried on 503 and on network errors, with exponential backoff; any
 * request is retried on 429 (the key's rate spent: nothing was done), after its Retry-After.
 *
 *     const gm = new GraphMem({ baseUrl: "http://127.0.0.1:8000", apiKey: "..." });
 *     await gm.addMessages([{ owner: "alice", session_id: "s1", speaker: "alice",
 *                             text: "I moved to Lisbon.", timestamp: "2026-03-12T14:05:00Z" }]);
 *     const { hits, context } = await gm.search({ query: "where does alice live?", owner: "alice" });
 */
import type { components } from "./schema.js";

export type Schemas = components["schemas"];
export type MessageIn = Schemas["MessageIn"];
export type Message = Schemas["Message"];
export type SessionInfo = Schemas["SessionInfo"];
export type OwnerInfo = Schemas["OwnerInfo"];
export type IngestReport = Schemas["IngestReport"];
export type DeleteReport = Schemas["DeleteReport"];
export type OwnerExport = Schemas["OwnerExport"];
export type ExportRecord = Schemas["ExportRecord"];
export type SearchRequest = Schemas["SearchRequest"];
export type SearchResult = Schemas["SearchResult"];
export type ContextRequest = Schemas["ContextRequest"];
export type ContextResult = Schemas["ContextResult"];
export type AnswerRequest = Schemas["AnswerRequest"];
export type AnswerResult = Schemas["AnswerResult"];
export type ForgetReport = Schemas["ForgetReport"];
export type ForgetMessages = Schemas["ForgetMessages"];
export type ObservationIn = Schemas["ObservationIn"];
export type ProfileOp = Schemas["ProfileOp"];
export type Fact = Schemas["Fact"];
export type FactWrite = Schemas["FactWrite"];
export type FactHistory = Schemas["FactHistory"];
export type JobList = Schemas["JobList"];
export type Job = Schemas["Job"];
export type DocumentWrite = Schemas["DocumentWrite"];
/** A stored document version (named so as not to shadow the DOM's `Document`). */
export type StoredDocument = Schemas["Document"];
export type DocumentDetail = Schemas["DocumentDetail"];
export type ChunkSearch = Schemas["ChunkSearch"];
export type ChunkResult = Schemas["ChunkResult"];
/** A passage of a document with its citation, in `ChunkResult.chunks` and `SearchResult.chunks`. */
export type ChunkHit = Schemas["ChunkHit"];
export type Topic = Schemas["Topic"];
export type TopicDetail = Schemas["TopicDetail"];
/** A document to store (`POST /v1/documents` as JSON; a PDF's content is base64). */
export interface DocumentIn {
  owner: string;
  key: string;
  content: string;
  title?: string;
  source_url?: string;
  media_type?: string;
  metadata?: Record<string, string | number | boolean | null>;
  valid_from?: string;
  reason?: string;
}
export type ExtractionRetryIn = Schemas["ExtractionRetryIn"];
export type ExtractionRetry = Schemas["ExtractionRetry"];
export type UsageReport = Schemas["UsageReport"];
export type TraceIn = Schemas["TraceIn"];
export type TraceReport = Schemas["TraceReport"];
export type OutcomeIn = Schemas["OutcomeIn"];
export type OutcomeReport = Schemas["OutcomeReport"];
export type SkillSearch = Schemas["SkillSearch"];
export type SkillSearchResult = Schemas["SkillSearchResult"];
export type SkillDetail = Schemas["SkillDetail"];
export type SkillHistory = Schemas["SkillHistory"];
export type CaseDetail = Schemas["CaseDetail"];
export type Problem = Schemas["Problem"];

/** Any error: `status` (undefined when there was no answer), `title`, `detail`, `body`. */
export class APIError extends Error {
  readonly status: number | undefined;
  readonly title: string;
  readonly detail: string;
  readonly body: Problem | undefined;

  constructor(detail: string, status?: number, title = "error", body?: Problem) {
    super(status ? `${status} ${title}: ${detail}` : detail);
    this.name = new.target.name;
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.body = body;
  }

  /** The input at fault (`messages[3].timestamp`), for 400, 413 and 422; for 403, the owner
   * the key may not use (`owner`, `messages[1].owner`). */
  get field(): string | undefined {
    return this.body?.field ?? undefined;
  }
}
/** 400 / 422: `field` names the input, `body.errors` lists each. */
export class InvalidInputError extends APIError {}
/** 413: more than one request may carry or cost. */
export class TooLargeError extends InvalidInputError {}
export class AuthenticationError extends APIError {}
/** 403: the key may not do this (another owner, a write with a read-only key, a call spanning
 * the tenant with a key for some owners). */
export class PermissionDeniedError extends APIError {}
export class NotFoundError extends APIError {}
export class ConflictError extends APIError {}
/** 429: the key's rate was spent (after the client's retries); nothing was done. */
export class RateLimitError extends APIError {}
/** 503: the server cannot reach Neo4j; retry later. */
export class UnavailableError extends APIError {}
export class ServerError extends APIError {}
/** No answer: the connection failed or timed out. */
export class TransportError extends APIError {}

const BY_STATUS: Record<number, typeof APIError> = {
  400: InvalidInputError, 401: AuthenticationError, 403: PermissionDeniedError,
  404: NotFoundError, 409: ConflictError,
  413: TooLargeError, 422: InvalidInputError, 429: RateLimitError, 503: UnavailableError,
};

export interface GraphMemOptions {
  /** Default: `http://127.0.0.1:8000`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Per attempt; default 60000. */
  timeoutMs?: number;
  /** Attempts after the first, for requests safe to repeat; default 2. */
  retries?: number;
  /** First wait, doubled each retry (at least the server's Retry-After, at most 8 s); default 500. */
  backoffMs?: number;
  /** Another fetch (tests, proxies). */
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | null | undefined>;

interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Query;
  body?: unknown;
  /** Safe to send again after a 503 or a lost answer. */
  retry: boolean;
}

const id = (value: string): string => encodeURIComponent(value); // ids may hold "/"

export class GraphMem {
  readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: GraphMemOptions = {}) {
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
    this.headers = { Accept: "application/json" };
    if (options.apiKey) this.headers.Authorization = `Bearer ${options.apiKey}`;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 2;
    this.backoffMs = options.backoffMs ?? 500;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // --- messages, search, context --------------------------------------------------------------

  addMessages(messages: MessageIn[]): Promise<IngestReport> {
    return this.send({ method: "POST", path: "/v1/messages", body: { messages }, retry: true });
  }
  getMessage(messageId: string): Promise<Message> {
    return this.send({ method: "GET", path: `/v1/messages/${id(messageId)}`, retry: true });
  }
  /** This tenant's owners by name; the next page starts `after` the last one. */
  owners(query: { after?: string; limit?: number } = {}): Promise<OwnerInfo[]> {
    return this.send({ method: "GET", path: "/v1/owners", query, retry: true });
  }
  /** `owner`'s sessions (conversations), the one with the latest message first. */
  sessions(owner: string, query: { skip?: number; limit?: number } = {}): Promise<SessionInfo[]> {
    return this.send({ method: "GET", path: "/v1/sessions", query: { owner, ...query },
                       retry: true });
  }
  sessionMessages(sessionId: string,
                  query: { owner?: string; skip?: number; limit?: number } = {}): Promise<Message[]> {
    return this.send({ method: "GET", path: `/v1/sessions/${id(sessionId)}/messages`, query,
                       retry: true });
  }
  deleteOwner(owner: string): Promise<DeleteReport> {
    return this.send({ method: "DELETE", path: `/v1/owners/${id(owner)}`, retry: true });
  }
  /** A page of everything stored about `owner`; pass its `next` as `after` for the next. */
  exportOwner(owner: string, query: { after?: string; limit?: number } = {}): Promise<OwnerExport> {
    return this.send({ method: "GET", path: `/v1/owners/${id(owner)}/export`, query, retry: true });
  }
  /** Every record of `owner`'s export, page after page. */
  async *exportAll(owner: string, limit = 500): AsyncGenerator<ExportRecord> {
    let after = "";
    for (;;) {
      const page = await this.exportOwner(owner, { after, limit });
      yield* page.records;
      if (page.next == null) return;
      after = page.next;
    }
  }
  search(request: SearchRequest): Promise<SearchResult> {
    return this.send({ method: "POST", path: "/v1/search", body: request, retry: true });
  }
  context(request: ContextRequest): Promise<ContextResult> {
    return this.send({ method: "POST", path: "/v1/context", body: request, retry: true });
  }
  /** Sent once (it costs LLM tokens); 501 (`ServerError`) when the server has no LLM. */
  answer(request: AnswerRequest): Promise<AnswerResult> {
    return this.send({ method: "POST", path: "/v1/answer", body: request, retry: false });
  }

  // --- forgetting -------------------------------------------------------------------------------

  forgetMessage(messageId: string): Promise<ForgetReport> {
    return this.send({ method: "DELETE", path: `/v1/messages/${id(messageId)}`, retry: true });
  }
  /** Forget one session of `owner`: every message, and what rests only on them. */
  forgetSession(sessionId: string, owner: string): Promise<ForgetReport> {
    return this.send({ method: "DELETE", path: `/v1/sessions/${id(sessionId)}`, query: { owner },
                       retry: true });
  }
  /** Forget an owner's messages that a filter chooses (metadata, session, time; at least one),
   * and what rests only on them. */
  forgetMessages(request: ForgetMessages): Promise<ForgetReport> {
    return this.send({ method: "POST", path: "/v1/messages/forget", body: request, retry: true });
  }
  forgetTrace(traceId: string): Promise<ForgetReport> {
    return this.send({ method: "DELETE", path: `/v1/traces/${id(traceId)}`, retry: true });
  }
  forgetDocument(documentId: string): Promise<ForgetReport> {
    return this.send({ method: "DELETE", path: `/v1/documents/${id(documentId)}`,
                       retry: true });
  }
  forgetFact(factId: string): Promise<ForgetReport> {
    return this.send({ method: "DELETE", path: `/v1/facts/${id(factId)}`, retry: true });
  }

  // --- facts ------------------------------------------------------------------------------------

  addObservations(observations: ObservationIn[]): Promise<FactWrite[]> {
    return this.send({ method: "POST", path: "/v1/observations", body: { observations },
                       retry: false });
  }
  observations(query: { owner: string; subject?: string; type?: string; as_of?: string;
                        known_at?: string; include_history?: boolean }): Promise<Fact[]> {
    return this.send({ method: "GET", path: "/v1/observations", query, retry: true });
  }
  observationHistory(factId: string): Promise<FactHistory> {
    return this.send({ method: "GET", path: `/v1/observations/${id(factId)}/history`,
                       retry: true });
  }
  profileOps(ops: ProfileOp[]): Promise<FactWrite[]> {
    return this.send({ method: "POST", path: "/v1/profile/ops", body: { ops }, retry: false });
  }
  profile(owner: string, query: { as_of?: string; known_at?: string;
                                  include_history?: boolean } = {}): Promise<Fact[]> {
    return this.send({ method: "GET", path: `/v1/profile/${id(owner)}`, query, retry: true });
  }

  audits(): Promise<Schemas["AuditInfo"][]> {
    return this.send({ method: "GET", path: "/v1/audit", retry: true });
  }
  /** A named read-only audit query; its parameters as the query. */
  audit(name: string, query: Query = {}): Promise<Schemas["AuditResult"]> {
    return this.send({ method: "GET", path: `/v1/audit/${id(name)}`, query, retry: true });
  }

  // --- jobs, usage, procedural memory, health ---------------------------------------------------

  jobs(query: { state?: Job["state"]; owner?: string; skip?: number; limit?: number } = {}):
      Promise<JobList> {
    return this.send({ method: "GET", path: "/v1/jobs", query, retry: true });
  }
  /** One job: its state, attempts, `last_error` and, once done, its `result`. */
  job(jobId: string): Promise<Job> {
    return this.send({ method: "GET", path: `/v1/jobs/${id(jobId)}`, retry: true });
  }
  /** A failed or done job back to pending; 409 (`ConflictError`) while pending or running. */
  rerunJob(jobId: string): Promise<Job> {
    return this.send({ method: "POST", path: `/v1/jobs/${id(jobId)}/rerun`, retry: false });
  }
  /** Extract facts again from the episodes whose last extraction ended with `status`
   *  (default `all_dropped`): one formation job per session is enqueued. */
  retryExtraction(request: ExtractionRetryIn = {}): Promise<ExtractionRetry> {
    return this.send({ method: "POST", path: "/v1/episodes/retry-extraction", body: request,
                       retry: true });
  }
  usage(query: { since?: string; until?: string } = {}): Promise<UsageReport> {
    return this.send({ method: "GET", path: "/v1/usage", query, retry: true });
  }
  addTraces(traces: TraceIn[]): Promise<TraceReport> {
    return this.send({ method: "POST", path: "/v1/traces", body: { traces }, retry: true });
  }
  setOutcome(traceId: string, outcome: OutcomeIn): Promise<OutcomeReport> {
    return this.send({ method: "POST", path: `/v1/traces/${id(traceId)}/outcome`,
                       body: outcome, retry: false });
  }
  searchSkills(request: SkillSearch): Promise<SkillSearchResult> {
    return this.send({ method: "POST", path: "/v1/skills/search", body: request, retry: true });
  }
  skill(skillId: string, query: { limit?: number } = {}): Promise<SkillDetail> {
    return this.send({ method: "GET", path: `/v1/skills/${id(skillId)}`, query, retry: true });
  }
  skillHistory(skillId: string): Promise<SkillHistory> {
    return this.send({ method: "GET", path: `/v1/skills/${id(skillId)}/history`, retry: true });
  }
  case(caseId: string): Promise<CaseDetail> {
    return this.send({ method: "GET", path: `/v1/cases/${id(caseId)}`, retry: true });
  }
  addDocument(document: DocumentIn): Promise<DocumentWrite> {
    return this.send({ method: "POST", path: "/v1/documents", body: document, retry: true });
  }
  documents(owner: string, query: { after?: string; limit?: number; history?: boolean;
                                    key?: string; as_of?: string } = {}): Promise<StoredDocument[]> {
    return this.send({ method: "GET", path: "/v1/documents", query: { owner, ...query },
                       retry: true });
  }
  document(documentId: string, query: { with_text?: boolean } = {}): Promise<DocumentDetail> {
    return this.send({ method: "GET", path: `/v1/documents/${id(documentId)}`, query,
                       retry: true });
  }
  searchDocuments(request: ChunkSearch): Promise<ChunkResult> {
    return this.send({ method: "POST", path: "/v1/documents/search", body: request,
                       retry: true });
  }
  /** An owner's topic tree: categories (level 1) and their parts (level 2). */
  topics(owner: string): Promise<Topic[]> {
    return this.send({ method: "GET", path: "/v1/topics", query: { owner }, retry: true });
  }
  /** One topic with its member documents and its subtopics. */
  topic(topicId: string): Promise<TopicDetail> {
    return this.send({ method: "GET", path: `/v1/topics/${id(topicId)}`, retry: true });
  }
  health(): Promise<Record<string, unknown>> {
    return this.send({ method: "GET", path: "/healthz", retry: true });
  }
  /** `UnavailableError` naming what is missing until the server is ready. */
  ready(): Promise<Record<string, unknown>> {
    return this.send({ method: "GET", path: "/readyz", retry: true });
  }

  // --- sending ----------------------------------------------------------------------------------

  private async send<T>(call: Call): Promise<T> {
    const url = new URL(this.baseUrl + call.path);
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    const headers = { ...this.headers };
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, {
          method: call.method, headers, signal: AbortSignal.timeout(this.timeoutMs),
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
        });
      } catch (err) {
        if (call.retry && attempt < this.retries) {
          await sleep(this.wait(attempt));
          continue;
        }
        throw new TransportError(`no answer: ${String(err)}`);
      }
      if (response.ok) return (await response.json()) as T;
      // 429: the key's rate was spent and nothing was read, so any request may go again.
      if ((response.status === 429 || (response.status === 503 && call.retry))
          && attempt < this.retries) {
        const after = Number(response.headers.get("Retry-After") ?? "0") * 1000;
        await response.body?.cancel();
        await sleep(Math.min(Math.max(this.wait(attempt), after || 0), 8000));
        continue;
      }
      throw await errorOf(response);
    }
  }

  private wait(attempt: number): number {
    return this.backoffMs * 2 ** attempt * (0.8 + 0.4 * Math.random());
  }
}

async function errorOf(response: Response): Promise<APIError> {
  const Cls = BY_STATUS[response.status] ?? (response.status >= 500 ? ServerError : APIError);
  const text = await response.text();
  let body: Problem | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object") body = parsed as Problem;
  } catch {
    body = undefined;
  }
  const title = body?.title || response.statusText.toLowerCase();
  return new Cls(body?.detail || text.slice(0, 500) || title, response.status, title, body);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
