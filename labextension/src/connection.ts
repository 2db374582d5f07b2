/**
 * The comm to the "loom" target in one notebook's kernel: opened on a kernel
 * subshell where the kernel has them, reopened after a kernel restart or a
 * dropped comm, and the extension loaded silently when the kernel lacks it.
 * It answers the kernel's `ping` at once (this page is still here) and tells the
 * kernel whether the notebook is on screen (`hello`, `focus`): outside agents
 * are pointed at the notebook the person is looking at (DESIGN §14).
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import { CommsOverSubshells, Kernel, KernelMessage as Wire } from '@jupyterlab/services';
import { JSONObject, UUID } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { LOAD_CODE } from './generated/autoload';
import {
  COMM_TARGET,
  FrontMessage,
  Hello,
  KernelMessage,
  KernelReader,
  KernelType,
  Notification,
  PROTOCOL_MAJOR,
  PROTOCOL_MINOR,
  REQUEST_REPLIES,
  ReplyTo,
  Request,
  kernelReads
} from './protocol';

/**
 * The code that loads Loom in a kernel (what the Load button runs too): generated from
 * loom_jupyter/jupyter/autoload.py. It imports Loom from where it is installed, never
 * from the notebook's folder (a cloned repo's `loom_jupyter/` does not run), and leaves
 * no names in the notebook's namespace.
 */
export { LOAD_CODE };

export type { Request };

/** How long `invoke` waits for a reply before giving up. */
export const INVOKE_TIMEOUT_MS = 15_000;

/**
 * Why a request got no reply: `offline` (the comm is not open), `older-kernel` (the kernel's
 * protocol version does not have this request), `timeout` (nothing came within the time),
 * `unknown-reply` (it came as a message type this page does not know: a newer kernel).
 */
export type RequestFailure = 'offline' | 'older-kernel' | 'timeout' | 'unknown-reply';

/** The rejection of `invoke`: which request failed, and why. */
export class RequestError extends Error {
  constructor(
    readonly request: Request,
    readonly reason: RequestFailure,
    readonly timeoutMs: number,
    readonly kernelVersion: string | null
  ) {
    super(`loom: ${request.type} request failed: ${reason}`);
    this.name = 'RequestError';
  }
}

/**
 * no-kernel: the notebook has no kernel; dead: the kernel died;
 * starting: the kernel is (re)starting; connecting: the comm is opening;
 * open: the kernel answered; not-loaded: Loom is not loaded in the kernel;
 * loading: `%load_ext` is running.
 */
export type LinkState =
  'no-kernel' | 'dead' | 'starting' | 'connecting' | 'open' | 'not-loaded' | 'loading';

export type ConnectionOptions = {
  /** The session of the notebook whose kernel hosts the conversation. */
  sessionContext: ISessionContext;
  client: Hello['client'];
  /** Whether to run `%load_ext loom_jupyter` when the kernel lacks Loom. */
  autoLoad: () => boolean;
  /** What this page already has: the hello's since_seq and kernel_session. */
  resume: () => Pick<Hello, 'since_seq' | 'kernel_session'>;
};

export class LoomConnection implements IDisposable {
  constructor(options: ConnectionOptions) {
    this._options = options;
    const context = options.sessionContext;
    context.statusChanged.connect(this._sync, this);
    context.connectionStatusChanged.connect(this._sync, this);
    context.kernelChanged.connect(this._kernelChanged, this);
    this._sync();
  }

  get state(): LinkState {
    return this._state;
  }

  /** Why the last load failed, for the not-loaded view. */
  get loadError(): string {
    return this._loadError;
  }

  get stateChanged(): ISignal<this, LinkState> {
    return this._stateChanged;
  }

  /** Every valid message from the kernel, in order (but the replies `invoke` awaits). */
  get received(): ISignal<this, KernelMessage> {
    return this._received;
  }

  /**
   * What to tell the person of a kernel message this page cannot read: it names this
   * page's protocol version and the kernel's (from its welcome; "unknown" before one).
   */
  get unreadable(): ISignal<this, string> {
    return this._unreadable;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Whether a message sent now reaches the kernel. */
  get canSend(): boolean {
    return this._comm !== null && this._state === 'open' && !this._comm.isDisposed;
  }

  /** The kernel's protocol version from its welcome (null: none yet). */
  get kernelVersion(): string | null {
    return this._reader.kernelVersion;
  }

  /**
   * Send one message (a request goes through `invoke`); false when the comm is not open (the
   * caller keeps it) or the kernel's protocol version does not have this message type.
   */
  send(message: Notification): boolean {
    return kernelReads(message.type, this._reader.kernelVersion) && this._post(message);
  }

  /**
   * Send a request with a fresh `request_id` and wait for its reply: the message whose
   * envelope's `reply_to` is that id (a 1.0 kernel's envelope has none: then the next message
   * of the request's reply type). The reply is the caller's, not `received`'s; it may be an
   * error `notice`. Rejects with a `RequestError` when the comm is not open, the kernel is too
   * old for this request, the answer is a type this page does not know, or nothing came
   * within `timeoutMs` (a reply after that goes to `received`).
   */
  invoke<M extends Request>(
    message: M,
    timeoutMs = INVOKE_TIMEOUT_MS
  ): Promise<ReplyTo<M['type']>> {
    const id = UUID.uuid4();
    const fail = (reason: RequestFailure): RequestError =>
      new RequestError(message, reason, timeoutMs, this._reader.kernelVersion);
    return new Promise((resolve, reject) => {
      if (!kernelReads(message.type, this._reader.kernelVersion)) {
        reject(fail(this.canSend ? 'older-kernel' : 'offline'));
        return;
      }
      if (!this._post({ ...message, request_id: id })) {
        reject(fail('offline'));
        return;
      }
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(fail('timeout'));
      }, timeoutMs);
      this._pending.set(id, {
        reply: REQUEST_REPLIES[message.type],
        resolve: answer => resolve(answer as ReplyTo<M['type']>),
        reject: reason => reject(fail(reason)),
        timer
      });
    });
  }

  /** Load Loom in the kernel (the Load button, or auto-load), then reopen. */
  async load(): Promise<void> {
    const kernel = this._kernel();
    if (kernel === null) {
      return;
    }
    this._setState('loading');
    const request = { code: LOAD_CODE, silent: true, store_history: false, allow_stdin: false };
    const reply = await kernel.requestExecute(request).done.catch(() => null);
    if (this._kernel() !== kernel) {
      return;
    }
    const status = reply?.content.status;
    this._loadError = status === 'ok' ? '' : Private.errorText(reply);
    if (status === 'ok') {
      void this._open(kernel);
    } else {
      this._setState('not-loaded');
    }
  }

  /** Re-sync: ask for what was missed (the kernel replays or welcomes). */
  resync(): void {
    this.send({ ...this._hello(), type: 'hello' });
  }

  /**
   * The notebook is on screen now, or not (`focus`: the person just turned to it, e.g.
   * its tab became current or the window gained focus). A kernel of protocol 1.3 or later
   * (which reads `focus`) hears of a change, and of every turn to it; the next `hello`
   * carries it anyway.
   */
  showing(onScreen: boolean, focus = false): void {
    const changed = onScreen !== this._onScreen;
    this._onScreen = onScreen;
    if (changed || (focus && onScreen)) {
      this.send({ type: 'focus', on_screen: onScreen });
    }
  }

  /** Put one message on the comm; false when it is not open. */
  private _post(message: FrontMessage): boolean {
    if (this._comm === null || !this.canSend) {
      return false;
    }
    this._comm.send({ ...message } as unknown as JSONObject);
    return true;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._dropComm(true);
    this._watch(null);
    Signal.clearData(this);
  }

  private _kernel(): Kernel.IKernelConnection | null {
    return this._options.sessionContext.session?.kernel ?? null;
  }

  private _kernelChanged(): void {
    this._reader.reset();
    this._dropComm(false);
    this._autoLoaded = false;
    this._sync();
  }

  /** Decide what to do from the kernel's status. */
  private _sync(): void {
    if (this._disposed) {
      return;
    }
    const kernel = this._kernel();
    const status = kernel?.status ?? 'unknown';
    this._watch(kernel);
    if (kernel === null) {
      this._dropComm(false);
      this._setState('no-kernel');
    } else if (status === 'dead') {
      this._dropComm(false);
      this._setState('dead');
    } else if (Private.RESTARTING.has(status) || kernel.connectionStatus !== 'connected') {
      this._restarting(status);
    } else if (this._comm === null && this._shouldOpen(status)) {
      void this._open(kernel);
    }
  }

  /**
   * Open after a (re)start; when Loom was not loaded, look again once a cell
   * that mentions loom_jupyter has run (say, `%load_ext loom_jupyter`) and no
   * cell runs any more.
   */
  private _shouldOpen(status: Kernel.Status): boolean {
    if (this._state === 'not-loaded') {
      const retry = status === 'idle' && this._cellLoaded && !this._cellRunning;
      this._cellLoaded = this._cellLoaded && !retry;
      return retry;
    }
    return Private.CAN_OPEN.has(this._state);
  }

  private _onIopub(_: Kernel.IKernelConnection, msg: Wire.IIOPubMessage): void {
    if (msg.header.msg_type === 'status' && msg.parent_header?.msg_type === 'execute_request') {
      // A cell's own busy and idle: the kernel's status also goes idle after any other
      // request (the refused comm open itself, on a subshell) while the cell still runs.
      const state = (msg as Wire.IStatusMsg).content.execution_state;
      this._cellRunning = state !== 'idle';
      if (!this._cellRunning) {
        this._sync();
      }
    }
    if (msg.header.msg_type === 'execute_input' && this._state === 'not-loaded') {
      const code = (msg as Wire.IExecuteInputMsg).content.code;
      this._cellLoaded = this._cellLoaded || code.includes('loom_jupyter');
    }
  }

  private _watch(kernel: Kernel.IKernelConnection | null): void {
    if (kernel !== this._watched) {
      this._watched?.iopubMessage.disconnect(this._onIopub, this);
      kernel?.iopubMessage.connect(this._onIopub, this);
      this._watched = kernel;
    }
  }

  /** A restart loses the comm and whatever the kernel had loaded. */
  private _restarting(status: Kernel.Status): void {
    if (Private.RESTARTING.has(status)) {
      this._autoLoaded = false;
    }
    this._dropComm(false);
    this._setState('starting');
  }

  private async _open(kernel: Kernel.IKernelConnection): Promise<void> {
    const attempt = ++this._attempt;
    this._setState('connecting');
    await kernel.info.catch(() => undefined);
    const comm = kernel.createComm(COMM_TARGET);
    // Set explicitly: some sites turn subshells off for every comm (matplotlib
    // is not thread-safe); Loom's handler only queues work, so it is safe here.
    comm.commsOverSubshells = CommsOverSubshells.PerCommTarget;
    if (kernel.supportsSubshells) {
      // Never awaited without subshells: it would not resolve.
      await (comm as Private.SubshellComm).subshellStarted?.catch(() => undefined);
    }
    if (attempt !== this._attempt || this._disposed) {
      comm.dispose();
      return;
    }
    this._comm = comm;
    this._answered = false;
    comm.onMsg = msg => this._onMessage(comm, msg);
    comm.onClose = () => this._onClose(comm);
    comm.open({ ...this._hello() } as unknown as JSONObject);
  }

  private _hello(): Hello {
    const context = this._options.sessionContext;
    return {
      type: 'hello',
      protocol: PROTOCOL_MAJOR, // an integer, as a 1.0 kernel reads it
      minor: PROTOCOL_MINOR,
      notebook_path: context.path,
      server_root: serverRoot(),
      client: this._options.client,
      documents: true, // this front applies notebook_request to its notebook
      agent: '', // a page, not an outside agent's link (DESIGN §14)
      on_screen: this._onScreen,
      ...this._options.resume()
    };
  }

  private _onMessage(comm: Kernel.IComm, msg: Wire.ICommMsgMsg): void {
    if (comm !== this._comm) {
      return;
    }
    const read = this._reader.read(msg.content.data);
    this._answered = true;
    this._setState('open');
    if ('skipped' in read) {
      this._skipped(read.reply_to);
      return;
    }
    if ('notice' in read) {
      if (read.notice !== null) {
        this._unreadable.emit(read.notice);
      }
      return;
    }
    if (read.message.type === 'ping') {
      // at once, whatever else runs: a page that does not answer is taken for closed (the
      // ping says the kernel reads pong, whatever its welcome said)
      this._post({ type: 'pong', ping_id: read.message.ping_id, on_screen: this._onScreen });
      return;
    }
    if (!this._settle(read.message)) {
      this._received.emit(read.message);
    }
  }

  /** Hand a reply to the `invoke` waiting for it; false when none waits for this message. */
  private _settle(message: KernelMessage): boolean {
    const replyTo = message.reply_to;
    let id: string | undefined;
    if (typeof replyTo === 'string') {
      id = this._pending.has(replyTo) ? replyTo : undefined;
    } else if (replyTo === undefined) {
      // a 1.0 kernel echoes no id: the oldest request waiting for this type
      id = [...this._pending].find(([, waiting]) => waiting.reply === message.type)?.[0];
    }
    const waiting = id === undefined ? undefined : this._pending.get(id);
    if (id === undefined || waiting === undefined) {
      return false;
    }
    this._pending.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(message);
    return true;
  }

  /** A request answered with a message type this page does not know fails at once. */
  private _skipped(replyTo: string | null): void {
    const waiting = replyTo === null ? undefined : this._pending.get(replyTo);
    if (replyTo !== null && waiting !== undefined) {
      this._pending.delete(replyTo);
      clearTimeout(waiting.timer);
      waiting.reject('unknown-reply');
    }
  }

  /**
   * A close before any answer means the target is not registered: Loom is
   * not loaded. A close after answers (extension reloaded) reopens once; if
   * that reopen is refused, Loom may be between `%unload_ext` and `%load_ext`
   * of one cell, so it looks again once the kernel is idle.
   */
  private _onClose(comm: Kernel.IComm): void {
    if (comm !== this._comm) {
      return;
    }
    const [answered, reopened] = [this._answered, this._reopening];
    this._comm = null;
    this._reopening = answered;
    const kernel = this._kernel();
    if (kernel === null || this._disposed) {
      return;
    }
    if (answered) {
      void this._open(kernel);
    } else if (this._options.autoLoad() && !this._autoLoaded) {
      this._autoLoaded = true;
      void this.load();
    } else {
      this._cellLoaded = this._cellLoaded || reopened;
      this._setState('not-loaded');
      if (reopened) {
        this._sync(); // the cell may have ended already
      }
    }
  }

  private _dropComm(close: boolean): void {
    this._attempt++;
    const comm = this._comm;
    this._comm = null;
    if (comm !== null && !comm.isDisposed) {
      if (close) {
        try {
          comm.close();
        } catch {
          // The kernel is already gone; disposing below is all that is left.
        }
      }
      comm.dispose();
    }
  }

  private _setState(state: LinkState): void {
    if (state !== this._state) {
      this._state = state;
      this._stateChanged.emit(state);
    }
  }

  private readonly _options: ConnectionOptions;
  private _comm: Kernel.IComm | null = null;
  private _state: LinkState = 'starting';
  private _cellLoaded = false;
  /** A cell is running (its busy seen, its idle not yet). */
  private _cellRunning = false;
  private _watched: Kernel.IKernelConnection | null = null;
  private _answered = false;
  /** The comm open now reopens one that Loom closed after answering (a reload). */
  private _reopening = false;
  private _onScreen = false;
  private _autoLoaded = false;
  private _attempt = 0;
  private _loadError = '';
  private _disposed = false;
  private readonly _stateChanged = new Signal<this, LinkState>(this);
  private readonly _received = new Signal<this, KernelMessage>(this);
  private readonly _unreadable = new Signal<this, string>(this);
  private readonly _reader = new KernelReader();
  private readonly _pending = new Map<string, Private.Waiting>();
}

namespace Private {
  /** The comm class has `subshellStarted`; the IComm interface does not declare it. */
  export type SubshellComm = Kernel.IComm & { subshellStarted?: Promise<void> };
  /** An `invoke` waiting for its reply. */
  export type Waiting = {
    reply: KernelType;
    resolve: (message: KernelMessage) => void;
    reject: (reason: RequestFailure) => void;
    timer: ReturnType<typeof setTimeout>;
  };
  export const RESTARTING = new Set<Kernel.Status>(['starting', 'restarting', 'autorestarting']);
  /** States from which a live kernel's comm is (re)opened by `_sync`. */
  export const CAN_OPEN = new Set<LinkState>(['no-kernel', 'dead', 'starting']);

  export function errorText(reply: Wire.IExecuteReplyMsg | null): string {
    const content = reply?.content;
    if (content === undefined) {
      return 'The kernel did not answer.';
    }
    return content.status === 'error' ? `${content.ename}: ${content.evalue}` : content.status;
  }
}

/** The server's folder (notebook paths are relative to it), '' when the page does not say. */
export function serverRoot(): string {
  return PageConfig.getOption('serverRoot');
}
