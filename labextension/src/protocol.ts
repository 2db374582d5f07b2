/**
 * The sidebar <-> kernel protocol (comm target "loom"). The types and the
 * validators are generated (src/generated/, from the kernel's
 * loom_jupyter/host/wire/protocol.py through its JSON Schema); this
 * module names what the views use and reads what the kernel sends.
 */
import type {
  ApprovalClosed,
  HistoryItem as TextItem,
  Inbound,
  KernelMessage,
  NoticeMsg,
  Outbound,
  Status,
  ToolItem,
  TrustDecisionMsg
} from './generated/protocol';
import { PROTOCOL_VERSION } from './generated/protocol';
import { FRONT_SINCE, KERNEL_SINCE, REQUEST_REPLIES } from './generated/lists';
import { validateKernelMessage } from './generated/validators';

export type {
  ApprovalModeView,
  CellChange,
  ChangeResult,
  DocCell,
  Hello,
  KernelMessage,
  ModelOptions,
  NotebookReply,
  NotebookRequest,
  Provenance,
  Queued,
  RevertStep,
  SearchHitItem,
  SessionRow,
  SessionSummary,
  SlashCommand,
  SubtaskItem,
  TaskView,
  ToolItem,
  TrustView
} from './generated/protocol';
export type { TextItem };
export { PROTOCOL_VERSION };

export const COMM_TARGET = 'loom';

/** This page's protocol version as the hello sends it: the major, and the minor beside it. */
export const [PROTOCOL_MAJOR, PROTOCOL_MINOR] = PROTOCOL_VERSION.split('.').map(Number);

export type Decision = ApprovalClosed['decision'];
/** The person's answer on the trust card. */
export type TrustDecision = TrustDecisionMsg['decision'];
export type KernelState = Status['state'];
export type NoticeLevel = NoticeMsg['level'];
export type HistoryEntry = TextItem | ToolItem;
/** A kernel message's own fields (without the envelope). */
export type KernelBody = Outbound;
export type KernelType = Outbound['type'];
/** What the front sends. */
export type FrontMessage = Inbound;
export type FrontType = Inbound['type'];

export { REQUEST_REPLIES };
/** The type of a front message answered by one reply to that front (generated). */
export type RequestType = keyof typeof REQUEST_REPLIES;
/** A front message answered by one reply to this front, which echoes its `request_id`. */
export type Request = Extract<FrontMessage, { type: RequestType }>;
/** What answers request type `T`: its reply, or an error notice in its place. */
export type ReplyTo<T extends RequestType> =
  | Extract<KernelMessage, { type: (typeof REQUEST_REPLIES)[T] }>
  | Extract<KernelMessage, { type: 'notice' }>;
/** Any front message but a request: requests go through `LoomConnection.invoke`. */
export type Notification = Exclude<FrontMessage, { type: RequestType }>;

/** A version `major.minor` as numbers ('1' is 1.0; null when it is none). */
export function versionOf(version: string): [number, number] | null {
  const found = /^(\d+)(?:\.(\d+))?$/.exec(version.trim());
  return found === null ? null : [Number(found[1]), Number(found[2] ?? 0)];
}

/**
 * Whether a kernel of protocol `kernelVersion` (from its welcome; null: not known yet, taken
 * as 1.0) reads front message type `type`: one added in a later minor version (FRONT_SINCE)
 * is not sent to it (an older kernel would answer it with an error).
 */
export function kernelReads(
  type: FrontType,
  kernelVersion: string | null,
  since: Readonly<Record<string, string>> = FRONT_SINCE
): boolean {
  const kernel = versionOf(kernelVersion ?? '1.0');
  const added = versionOf(since[type] ?? PROTOCOL_VERSION);
  if (kernel === null || added === null) {
    return false;
  }
  return kernel[0] === added[0] && kernel[1] >= added[1];
}

type Validator = ((data: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};

/**
 * Validate one message from the kernel against the generated schema; return
 * it typed, or an error string naming the first thing wrong.
 */
export function parseKernelMessage(data: unknown): KernelMessage | string {
  const validate = validateKernelMessage as Validator;
  if (validate(data)) {
    return data as KernelMessage;
  }
  const [error] = validate.errors ?? [];
  const type = (data as { type?: unknown } | null)?.type;
  const where = error?.instancePath || '/';
  return `${JSON.stringify(type)}: ${where} ${error?.message ?? 'is not a kernel message'}`;
}

/**
 * The messages a 1.0 kernel sends to one front as replies (the current seq, not advanced):
 * its envelope has no `reply_to` to say so. A 1.1 kernel's envelope says it of each message.
 */
const REPLIES_OF_1_0 = new Set<KernelType>([
  'welcome',
  'history',
  'sessions',
  'search_results',
  'notice',
  'command_result',
  'key',
  'notebook_request',
  'completions',
  'origin',
  'examples'
]);

/**
 * Whether a kernel message is a reply to this front (it carries the current seq without
 * advancing it, and is never replayed) rather than a numbered broadcast event.
 */
export function isReply(message: KernelMessage): boolean {
  if (message.reply_to !== undefined) {
    return message.reply_to !== null;
  }
  return REPLIES_OF_1_0.has(message.type); // a 1.0 kernel: its envelope does not say
}

/** What one page knows of the protocol: by default this page's (the generated files). */
export type PageProtocol = {
  /** The page's version, `major.minor`. */
  version: string;
  /** The kernel message types it knows. */
  known: ReadonlySet<string>;
  /** Its validator of kernel messages (an error string, or the message typed). */
  parse: (data: unknown) => KernelMessage | string;
};

/** This page's protocol. */
export const THIS_PAGE: PageProtocol = {
  version: PROTOCOL_VERSION,
  known: new Set(Object.keys(KERNEL_SINCE)),
  parse: parseKernelMessage
};

/** What `KernelReader.read` makes of one message. */
export type Reading =
  /** A message this page reads, typed. */
  | { message: KernelMessage }
  /** One it cannot read: what to tell the person (null: already told). */
  | { notice: string | null }
  /**
   * One of a type this page does not know, from a newer kernel of its major version: skipped
   * (and logged to the console once per type); `reply_to` is its envelope's, when it says.
   */
  | { skipped: string; reply_to: string | null };

/**
 * Reads the kernel's messages: each one typed, or a notice for the person when this page
 * cannot read it (never dropped without a word), but a message type this page does not know
 * from a newer kernel of the same major version: what a minor version adds, an older page
 * skips (once in the console, never in the chat). It learns the kernel's protocol version
 * from the kernel's welcome.
 */
export class KernelReader {
  constructor(page: PageProtocol = THIS_PAGE) {
    this._page = page;
  }

  /** The kernel's protocol version from its welcome (`1.0` when the welcome does not say). */
  get kernelVersion(): string | null {
    return this._kernelVersion;
  }

  /**
   * The message typed; or, for a message this page cannot read, the notice that says so
   * (null when the same problem was already told: one notice, not one per message); or, for
   * a type added by a newer kernel, that it was skipped.
   */
  read(data: unknown): Reading {
    const welcome = Private.welcomeVersion(data);
    if (welcome !== null) {
      this._kernelVersion = welcome;
    }
    const skipped = this._newerType(data);
    if (skipped !== null) {
      if (!this._skipped.has(skipped)) {
        this._skipped.add(skipped);
        console.info(
          `loom: skipping "${skipped}" messages: the kernel's Loom (protocol ` +
            `${this._kernelVersion ?? 'unknown'}) is newer than this page's (${this._page.version})`
        );
      }
      const replyTo = (data as { reply_to?: unknown }).reply_to;
      return { skipped, reply_to: typeof replyTo === 'string' ? replyTo : null };
    }
    const parsed = this._page.parse(data);
    if (typeof parsed !== 'string') {
      return { message: parsed };
    }
    console.warn(`loom: a kernel message this page cannot read (${parsed})`);
    const told = `${this._kernelVersion}: ${parsed}`;
    if (this._told.has(told)) {
      return { notice: null };
    }
    this._told.add(told);
    return { notice: unreadableNotice(parsed, this._kernelVersion, this._page.version) };
  }

  /** A new kernel: its version is not known until its welcome. */
  reset(): void {
    this._kernelVersion = null;
    this._told.clear();
    this._skipped.clear();
  }

  /**
   * The type of a message this page does not know, when a newer minor version of its major
   * may have added it: the kernel's welcome said such a version (or none came yet: a kernel
   * of another major sends only a notice). From a kernel no newer, it is a fault: null.
   */
  private _newerType(data: unknown): string | null {
    const type = (data as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || this._page.known.has(type)) {
      return null;
    }
    if (this._kernelVersion === null) {
      return type;
    }
    const [kernel, page] = [versionOf(this._kernelVersion), versionOf(this._page.version)];
    const newer = kernel !== null && page !== null && kernel[0] === page[0] && kernel[1] > page[1];
    return newer ? type : null;
  }

  private readonly _page: PageProtocol;
  private _kernelVersion: string | null = null;
  private readonly _told = new Set<string>();
  private readonly _skipped = new Set<string>();
}

/** What the person is told of a kernel message this page cannot read. */
export function unreadableNotice(
  problem: string,
  kernelVersion: string | null,
  pageVersion: string = PROTOCOL_VERSION
): string {
  return (
    `This page (Loom protocol ${pageVersion}) could not read a message from the ` +
    `kernel (Loom protocol ${kernelVersion ?? 'unknown'}): ${problem}. If it keeps ` +
    'happening, install the same loom_jupyter for JupyterLab and for the kernel, then ' +
    'restart the kernel and reload the page.'
  );
}

namespace Private {
  /** The kernel's version a welcome carries, read before validation ('1.0': none said). */
  export function welcomeVersion(data: unknown): string | null {
    if (typeof data !== 'object' || data === null) {
      return null;
    }
    const { type, protocol } = data as { type?: unknown; protocol?: unknown };
    if (type !== 'welcome') {
      return null;
    }
    return typeof protocol === 'string' ? protocol : '1.0';
  }
}

/** The code a tool input carries (run_python's `code`), if any. */
export function inputCode(input: unknown): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return null;
  }
  const fields = input as Record<string, unknown>;
  const key = CODE_KEYS.find(name => typeof fields[name] === 'string');
  return key === undefined ? null : (fields[key] as string);
}

/** The input fields shown as code: run_python's `code`, the cell tools' `source`. */
const CODE_KEYS = ['code', 'source'] as const;

/**
 * The other short fields of an input whose code is shown (`cell_id: a56db4cd`),
 * on one line; "" when there are none.
 */
export function inputFields(input: unknown): string {
  if (inputCode(input) === null) {
    return '';
  }
  return Object.entries(input as Record<string, unknown>)
    .filter(([name, value]) => !(CODE_KEYS as readonly string[]).includes(name) && value !== null)
    .filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value))
    .map(([name, value]) => `${name}: ${String(value).slice(0, 80)}`)
    .join(' · ');
}

/**
 * The `code` string of a tool input whose JSON is still streaming, decoded as
 * far as it has arrived (so code shows while the model writes it).
 */
export function partialCode(partial: string): string | null {
  const match = /"(?:code|source)"\s*:\s*"((?:[^"\\]|\\.)*)(\\?)/.exec(partial);
  if (match === null) {
    return null;
  }
  try {
    return JSON.parse(`"${match[1].replace(/\\u[0-9a-fA-F]{0,3}$/, '')}"`) as string;
  } catch {
    return match[1];
  }
}
