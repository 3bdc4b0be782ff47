// Types of index.js: the shapes are openapi/mock-control.json's schemas.

/** Environment variables a running mock is shared through (global setups to test files). */
export declare const ENV: {
  readonly url: "MEDIAGEN_MOCK_URL";
  readonly apiKey: "MEDIAGEN_MOCK_API_KEY";
  readonly log: "MEDIAGEN_MOCK_LOG";
  readonly adminToken: "MEDIAGEN_MOCK_CONTROL_TOKEN";
  readonly binary: "MEDIAGEN_MOCK_BIN";
  /**
   * A `VerdictMode`: `strict` makes `worldPerTest` fail a test whose world ends with a
   * violation, `strict:poll-rate,read-after-final` also with a finding of those rules.
   */
  readonly verdict: "MEDIAGEN_MOCK_VERDICT";
};

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** Each control operation's method and path, by face method name. */
export declare const OPERATIONS: Readonly<Record<OperationName, readonly [HttpMethod, string]>>;

/** The names of the control operations: the camelCase of the contract's operationIds. */
export type OperationName = Exclude<keyof MockControl, "baseUrl" | "adminToken">;

export type ClockMode = "manual" | "real";
export type Responses = "full" | "minimal" | "extra";
export type Scope = "full" | "read_only";
export type ModelState =
  | "available"
  | "disabled"
  | "withdrawn"
  | "circuit_open"
  | "margin_guard"
  | "pricing_missing";
export type FaultEffect = "error" | "delay" | "drop" | "drop_after";

export interface Clock {
  /** RFC 3339. */
  now: string;
  mode: ClockMode;
  timeScale: number;
}

export interface ModelStateSet {
  slug: string;
  state: ModelState;
}

/** The next `count` (default 1) matching tasks end this way. */
export interface ForcedOutcome {
  outcome: "succeed" | "fail";
  userId?: string;
  modelSlug?: string;
  /** A failure code of the service document, such as `content_policy` or `timeout`. */
  errorCode?: string;
  count?: number;
}

export interface ForcedOutcomeSet {
  outcome: string;
  count: number;
  userId?: string | null;
  modelSlug?: string | null;
  errorCode?: string | null;
  [member: string]: unknown;
}

export interface Settings {
  createLatencySeconds: number;
  autoPaySeconds: number | null;
  responses: Responses;
}

export type UpdateSettings = Partial<Settings>;

export interface LoggedRequest {
  requestId: string;
  at: string;
  method: string;
  path: string;
  /** The `operationId` of the service's operation; `null` for a path the contract lacks. */
  operationId?: string | null;
  /** `null` when the connection was dropped by a fault. */
  status: number | null;
  ip?: string;
  userId?: string | null;
  idempotencyKey?: string | null;
  /** The id of the fault rule that applied. */
  fault?: string | null;
  [member: string]: unknown;
}

/** A webhook message with its state, payload and attempts. */
export interface Delivery {
  /** The `webhook-id` header of every attempt. */
  messageId: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  userId: string;
  /** `pending`, `delivered`, `exhausted` or `dropped`. */
  state: string;
  createdAt: string;
  /** The body every attempt sends. */
  payload: Record<string, unknown>;
  attempts: DeliveryAttempt[];
  [member: string]: unknown;
}

export interface DeliveryAttempt {
  id: string;
  attempt: number;
  /** `scheduled`, or `manual` for a redelivery. */
  trigger: string;
  attemptedAt: string;
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
  nextAttemptAt: string | null;
  [member: string]: unknown;
}

export interface DnsSet {
  host: string;
  addresses: string[];
}

export interface OutboxMessage {
  to: string;
  link: string;
  subject: string;
  sentAt: string;
  [member: string]: unknown;
}

export interface CreateUser {
  /** At least 0; the server's default when absent. */
  balanceRub?: number;
  email?: string;
}

export interface NewUser {
  userId: string;
  /** A full-scope key: `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  email: string;
  balanceRub: number;
  [member: string]: unknown;
}

/** A key by its public part: never its secret. */
export interface Key {
  publicPart: string;
  scope: Scope;
  revoked: boolean;
}

export interface User {
  userId: string;
  email: string;
  balanceRub: number;
  reservedRub: number;
  activeGenerations: number;
  /** How many generations the user made. */
  generations: number;
  keys: Key[];
  createdAt: string;
  [member: string]: unknown;
}

export interface NewKey {
  apiKey: string;
  /** What `revokeKey` takes. */
  publicPart: string;
  scope: Scope;
  [member: string]: unknown;
}

/** A fault rule: the next `count` (default 1) matching requests misbehave. */
export interface Fault {
  effect: FaultEffect;
  method?: string;
  /** `*` matches one segment: `/v1/generations/*`. */
  path?: string;
  userId?: string;
  count?: number;
  /** `error`: 400 to 599. */
  status?: number;
  code?: string;
  message?: string;
  /** `delay`: real seconds, above 0. */
  delaySeconds?: number;
}

export interface FaultView {
  id: string;
  method: string | null;
  path: string | null;
  userId: string | null;
  effect: string;
  status?: number;
  code?: string;
  message?: string;
  delaySeconds?: number;
  /** Uses it was given. */
  count: number;
  /** Uses left. */
  remaining: number;
  [member: string]: unknown;
}

export interface Paid {
  id: string;
  number: string;
  status: "PAID";
  paidAt: string;
  [member: string]: unknown;
}

export interface Topup {
  id: string;
  userId: string;
  amountRub: number;
  status: "PENDING" | "SUCCEEDED" | "FAILED";
  createdAt: string;
  finishedAt: string | null;
  [member: string]: unknown;
}

/** A world's whole state, for `putSnapshot` here or in another mock. */
export interface Snapshot {
  format: "mediagen-mock-snapshot";
  version: 1;
  takenAt?: string;
  clock: Clock;
  demoApiKey?: string | null;
  store: Record<string, unknown>;
  [member: string]: unknown;
}

/** The settings a world starts with; what is absent is the server's. */
export interface WorldSettings {
  clock?: ClockMode;
  timeScale?: number;
  responses?: Responses;
  rateLimits?: boolean;
  /** Whether the world has a demo user (default yes): `World.apiKey` is its key. */
  demoUser?: boolean;
  demoBalanceRub?: number;
}

export interface WorldEntry {
  id: string;
  baseUrl: string;
  createdAt: string;
  [member: string]: unknown;
}

/** An error answer of the control API, with the service's envelope. */
export declare class MockError extends Error {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly code: string | undefined;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly envelope: { error: Record<string, unknown> } | undefined;
}

/** The mock did not come up, or there is no binary to start (`findBinary()`); `log` is what it wrote. */
export declare class MockStartError extends Error {
  readonly log: string;
}

/**
 * The control API of one world (the server's root, or a world made by
 * `createWorld`): one method per operation of openapi/mock-control.json.
 * An error answer rejects with `MockError`.
 */
export declare class MockControl {
  constructor(baseUrl: string, options?: { adminToken?: string });
  /** The world's base URL, such as `http://127.0.0.1:40193` (no slash at the end). */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` on every control call. */
  readonly adminToken: string | undefined;

  /** `GET /_mock/clock`. */
  getClock(): Promise<Clock>;
  /** `POST /_mock/clock/advance`: what became due is applied before it answers. */
  advanceClock(seconds: number): Promise<Clock>;
  /** `POST /_mock/models/{slug}/state`. */
  setModelState(slug: string, state: ModelState): Promise<ModelStateSet>;
  /** `POST /_mock/outcomes`. */
  forceOutcome(outcome: ForcedOutcome): Promise<ForcedOutcomeSet>;
  /** `GET /_mock/settings`. */
  getSettings(): Promise<Settings>;
  /** `PUT /_mock/settings`: `responses` applies from the next answer on. */
  updateSettings(settings: UpdateSettings): Promise<Settings>;
  /** `GET /_mock/requests`: the request log. */
  listRequests(): Promise<LoggedRequest[]>;
  /** `GET /_mock/deliveries`: every webhook message, oldest first. */
  listDeliveries(): Promise<Delivery[]>;
  /**
   * `POST /_mock/deliveries`: queues an event body of yours (its `type` one the
   * contract defines) to an endpoint, sent through the mock's own delivery path.
   */
  createDelivery(endpointId: string, payload: Record<string, unknown>): Promise<Delivery>;
  /** `PUT /_mock/dns`: a host name resolves to these addresses for webhook URLs. */
  setDns(host: string, addresses: string[]): Promise<DnsSet>;
  /** `GET /_mock/outbox`: the magic-link e-mails the service would have sent. */
  listOutbox(): Promise<OutboxMessage[]>;
  /** `POST /_mock/reset`: empties the world; the demo user comes back with the same key. */
  reset(): Promise<void>;
  /** `POST /_mock/users`. */
  createUser(user?: CreateUser): Promise<NewUser>;
  /** `GET /_mock/users/{userId}`. */
  getUser(userId: string): Promise<User>;
  /** `POST /_mock/users/{userId}/keys`: a `read_only` key gets 403 on writes. */
  createKey(userId: string, scope?: Scope): Promise<NewKey>;
  /** `PUT /_mock/users/{userId}/balance`: the available balance. */
  setBalance(userId: string, balanceRub: number): Promise<void>;
  /** `DELETE /_mock/keys/{publicPart}`: the key answers 401 afterwards. */
  revokeKey(publicPart: string): Promise<void>;
  /** `POST /_mock/faults`. */
  injectFault(rule: Fault): Promise<FaultView>;
  /** `GET /_mock/faults`: the rules with uses left. */
  listFaults(): Promise<FaultView[]>;
  /** `DELETE /_mock/faults`. */
  clearFaults(): Promise<void>;
  /** `DELETE /_mock/faults/{id}`. */
  removeFault(id: string): Promise<void>;
  /** `POST /_mock/invoices/{id}/pay`: the bank transfer arrives. */
  payInvoice(id: string): Promise<Paid>;
  /** `POST /_mock/topups/{id}/pay`: the card payment goes through. */
  payTopup(id: string): Promise<Topup>;
  /** `POST /_mock/topups/{id}/fail`: the card payment is declined. */
  failTopup(id: string): Promise<Topup>;
  /** `GET /_mock/snapshot`: the world's whole state. */
  getSnapshot(): Promise<Snapshot>;
  /** `PUT /_mock/snapshot`: the world becomes the snapshot's. */
  putSnapshot(snapshot: Snapshot): Promise<void>;
  /** `POST /_mock/worlds` (on the server's root): a fresh, isolated world. */
  createWorld(settings?: WorldSettings): Promise<World>;
  /** `GET /_mock/worlds`. */
  listWorlds(): Promise<WorldEntry[]>;
  /** `DELETE /_mock/worlds/{id}`. */
  deleteWorld(id: string): Promise<void>;
  /** `GET /_mock/events`: the world's live journal from now on. */
  streamEvents(): Promise<EventStream>;
  /**
   * `GET /_mock/verdict`: where the world's client breaks the service's rules;
   * `{ strict: ["poll-rate"] }` sends `?strict=poll-rate`. An unknown rule id
   * rejects with `MockError` (400 `VALIDATION_ERROR`, the known ids in its message).
   */
  getVerdict(options?: VerdictOptions): Promise<Verdict>;
  /** `DELETE /_mock/verdict`: the verdict starts over. */
  resetVerdict(): Promise<void>;
  /** `POST /_mock/probes/webhooks`: three probes of an endpoint's receiver, and how it answered each. */
  probeWebhooks(endpointId: string): Promise<ProbeReport>;
}

/** How `getVerdict` reads the verdict. */
export interface VerdictOptions {
  /**
   * Rules of advice that spoil `clean` as well, such as `["poll-rate",
   * "read-after-final"]` (or `"poll-rate,read-after-final"`): the `strict`
   * query parameter. Violations always spoil it.
   */
  strict?: string | readonly string[];
}

/**
 * How `worldPerTest` (and `setupMock`, `MEDIAGEN_MOCK_VERDICT`) judges each
 * test's world: `off` (the default), `strict` (a violation fails the test),
 * or `strict:` and rule ids of advice that fail it too (`strict:poll-rate,read-after-final`).
 */
export type VerdictMode = "off" | "strict" | `strict:${string}`;

/** One way the client breaks, or strays from, a rule of the service document. */
export interface Finding {
  /** The rule's id, such as `create-retry-new-key` (a later mock may add ids). */
  rule: string;
  severity: "violation" | "advice";
  message: string;
  documentRule: string;
  advice: string;
  /**
   * The first requests that show it. On a receiver's finding (a rule starting
   * `receiver-`), a deprecated copy of `messageIds`, for one release.
   */
  requestIds: string[];
  firstAt: string;
  count: number;
  /** Whether it spoils `clean`: a violation, or a rule the `strict` option named. */
  fails: boolean;
  /** A receiver's finding: the webhook endpoint it judged. */
  endpoint?: { id: string; url: string; [member: string]: unknown };
  /** A receiver's finding: the `webhook-id`s of the deliveries that show it. */
  messageIds?: string[];
  [member: string]: unknown;
}

/** The verdict on a world's client: `clean` when no finding `fails`. */
export interface Verdict {
  clean: boolean;
  findings: Finding[];
  checked: { requests: number; deliveries: number };
}

/** How a receiver answered the probes of `probeWebhooks`. */
export interface ProbeReport {
  endpointId: string;
  repeatedMessageId: string | null;
  probes: {
    probe: "bad_signature" | "stale_timestamp" | "duplicate";
    webhookId: string;
    status: number | null;
    error: string | null;
    durationMs: number;
    passed: boolean;
  }[];
}

/**
 * A verdict in words: a first line that names the rules that fail
 * (`create-retry-new-key, poll-rate — mediagen-mock verdict: …`), then each
 * finding, those that fail first. `strict`: the rules it was read with.
 */
export declare function verdictText(verdict: Verdict, options?: { strict?: readonly string[] }): string;

/**
 * Reads a `VerdictMode` (`name` is what the message calls it); throws for a
 * value that is none.
 */
export declare function verdictMode(
  value: string | undefined,
  name?: string,
): { strict: boolean; rules: string[] };

/**
 * One event of the live journal: `type` is `request`, `fault`, `generation`,
 * `ledger`, `message`, `attempt`, `topup`, `invoice`, `mail`, `clock`,
 * `reset`, `verdict.finding`, `verdict.reset` (or one a later mock adds), with the ids that tie events together
 * (`requestId`, `userId`, `generationId`, `messageId`, …); `lagged` tells how
 * many events a slow reader missed.
 */
export interface MockEvent {
  seq?: number;
  at?: string;
  type: string;
  [member: string]: unknown;
}

/** A world's live journal, open from the moment it exists. */
export declare class EventStream implements AsyncIterable<MockEvent> {
  [Symbol.asyncIterator](): AsyncIterator<MockEvent>;
  /** Ends the stream. */
  close(): Promise<void>;
}

/** A world of a running mock: the whole service and its own control API under `baseUrl`. */
export declare class World extends MockControl {
  readonly id: string;
  /** The world's demo user's key; undefined when made with `demoUser: false`. */
  readonly apiKey: string | undefined;
  /**
   * The world's own control token (`controlToken` of `POST /_mock/worlds`), given
   * when the mock runs with an admin token: its control routes and its
   * `DELETE /_mock/worlds/{id}` accept it, no other world's do. This object sends
   * it (as `adminToken`) on its control calls; undefined without an admin token.
   */
  readonly controlToken: string | undefined;
  /** Ends the world, with its own token. */
  delete(): Promise<void>;
  /** The verdict on the world's client: the same as `getVerdict(options)`. */
  verdict(options?: VerdictOptions): Promise<Verdict>;
}

/** A mock that is already running, shared through the environment by a global setup. */
export declare class MockClient extends MockControl {
  constructor(options: { baseUrl: string; apiKey?: string; adminToken?: string; logPath?: string });
  /** The root world's demo user's key. */
  readonly apiKey: string | undefined;
  /** The file the process writes its log to. */
  readonly logPath: string | undefined;
  /** What the process has written to its log so far. */
  log(): string;
  /** The variables that let another process `connectMock()` to this mock. */
  env(): Record<string, string>;
}

/** A `mediagen-mock` process on 127.0.0.1, made by `startMock()`. */
export declare class MockServer extends MockClient {
  readonly apiKey: string;
  readonly logPath: string;
  readonly pid: number;
  readonly running: boolean;
  /** Kills the process at once. */
  kill(): void;
  /** SIGTERM, then SIGKILL after `timeoutMs` (default 10 s); removes the log unless `keepLog`. */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface StartOptions {
  /** `manual` (default: time moves only through `advanceClock`) or `real`. */
  clock?: ClockMode;
  /** With the real clock, how many times faster than wall time. */
  timeScale?: number;
  /** Enforce the service's limits (default), or only report them. */
  rateLimits?: boolean;
  /** Let webhook endpoints point at 127.0.0.1 (receivers in the test process). */
  allowPrivateWebhooks?: boolean;
  responses?: Responses;
  /** A token the control API requires; sent on every control call. */
  adminToken?: string;
  /** Further flags of the binary (`mediagen-mock --help`); one given here replaces the one these options make. */
  args?: string[];
  /** The binary (default: `findBinary()`). */
  binary?: string;
  /** The process's environment (default: this one's). */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the first answer (default 30 s). */
  startTimeoutMs?: number;
  /** Keep the log file after `stop()`. */
  keepLog?: boolean;
}

/**
 * Starts `mediagen-mock` on a free port of 127.0.0.1 and resolves once it
 * answers a request. The process ends with this one, also on an uncaught
 * error, SIGINT or SIGTERM; `stop()` ends it sooner.
 */
export declare function startMock(options?: StartOptions): Promise<MockServer>;

/** The mock a global setup started, from `MEDIAGEN_MOCK_URL` and its companions. */
export declare function connectMock(env?: NodeJS.ProcessEnv): MockClient;

/**
 * The `mediagen-mock` binary, first that applies: MEDIAGEN_MOCK_BIN; the platform
 * package npm installed for this machine (`platformPackage()`); this package's
 * bin/mediagen-mock, built by an install from a checkout; PATH (not the launcher npm
 * links there). With none, throws a `MockStartError` that names the platform package
 * missing and how to get a binary.
 */
export declare function findBinary(env?: NodeJS.ProcessEnv): string;

/**
 * The platform package that carries the binary for a machine, this one by default:
 * `mediagen-mock-linux-x64-gnu`, `mediagen-mock-darwin-arm64`, `mediagen-mock-win32-x64-msvc`, …
 * (`libc`: `gnu` or `musl`, Linux only; detected as detect-libc does when not given).
 */
export declare function platformPackage(machine?: {
  platform?: NodeJS.Platform;
  arch?: NodeJS.Architecture;
  libc?: "gnu" | "musl";
}): string;

/** The command line `startMock(options)` runs. */
export declare function mockCommand(options?: StartOptions): string[];

/**
 * A world's verdict (when it has findings, read with the rules `strict` names),
 * its request log and the end of its server's process log, for a failing test.
 */
export declare function failureReport(
  world: MockControl,
  server?: MockControl & { log?(): string; logPath?: string },
  options?: { logLines?: number; strict?: readonly string[] },
): Promise<string>;

type Hook = (fn: (context?: any) => unknown) => unknown;

export interface TestHooks {
  before?: Hook;
  beforeAll?: Hook;
  after?: Hook;
  afterAll?: Hook;
  beforeEach: Hook;
  afterEach: Hook;
}

export interface WorldPerTestOptions {
  /** The settings of each test's world. */
  world?: WorldSettings;
  /** Options of the mock started when no global setup shares one. */
  mock?: StartOptions;
  /**
   * `"strict"`: a test whose world ends with a violation in the mock's verdict
   * fails, its error naming the rules first, then listing the findings.
   * `"strict:poll-rate,read-after-final"`: also one whose world ends with a
   * finding of those rules of advice. Without it, `MEDIAGEN_MOCK_VERDICT` (as
   * `setupMock({ verdict })` sets it); `"off"` by default.
   */
  verdict?: VerdictMode;
}

export interface MockWorlds {
  /** The current test's world. */
  readonly world: World;
  /** The mock itself (its root world). */
  readonly server: MockClient;
}

/**
 * One mock per run and a fresh world per test, on any runner's hooks. Uses
 * the mock a global setup shares (`MEDIAGEN_MOCK_URL`), or starts one for
 * this file. A failing test gets the world's verdict (when it has findings),
 * request log and the mock's log. Throws for a `verdict` that is no `VerdictMode`.
 */
export declare function worldPerTest(hooks: TestHooks, options?: WorldPerTestOptions): MockWorlds;
