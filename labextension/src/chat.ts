/**
 * One notebook's chat: its connection to the kernel, its conversation state
 * and the views, wired together. The sidebar keeps one per open notebook.
 */
import { Clipboard } from '@jupyterlab/apputils';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { UUID } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

import { LinkState, LoomConnection, serverRoot } from './connection';
import { NotebookDocument, editProposal } from './document';
import { RenderContext } from './markdown';
import {
  Decision,
  Hello,
  KernelMessage,
  Notification,
  Queued,
  REQUEST_REPLIES,
  ReplyTo,
  Request,
  SearchHitItem
} from './protocol';
import { Requests } from './requests';
import { Change, ChatStore } from './store';
import { KeyCard } from './views/apikey';
import { parseSlash } from './views/completion';
import { Composer } from './views/composer';
import { Guide } from './views/guide';
import { MessageList } from './views/messages';
import { OptionChange } from './views/options';
import { ProvenanceTips } from './views/provenance';
import { SessionBar } from './views/sessions';
import { Footer, ShownState, StatusLine } from './views/status';
import { TaskList } from './views/tasks';
import { TrustAnswer, TrustCard } from './views/trust';

export type ChatOptions = {
  notebook: NotebookPanel;
  client: Hello['client'];
  autoLoad: () => boolean;
  /** Bring the Loom sidebar into view (a cell's marker or Fix button was clicked). */
  reveal?: () => void;
};

export const RESTART_NOTICE = 'kernel restarted — history intact';
const WAITING_CELL = 'waiting for your cell to finish';
/** After these, where a variable came from may have changed. */
const STALE_ORIGINS = new Set<KernelMessage['type']>([
  'welcome',
  'turn_started',
  'turn_done',
  'turn_error'
]);
/** How many "load more" pages a jump to an old turn may fetch. */
const MAX_JUMP_PAGES = 50;

const OFFLINE_TEXT: Record<Exclude<LinkState, 'open' | 'not-loaded'>, string> = {
  'no-kernel': 'No kernel: start one to chat',
  dead: 'The kernel is dead: restart it to chat (your history is kept)',
  starting: 'Kernel starting…',
  connecting: 'Connecting…',
  loading: 'Loading Loom in this kernel…'
};

export class ChatView extends Widget {
  constructor(options: ChatOptions) {
    super();
    this.addClass('loom-Chat');
    this._notebook = options.notebook;
    this._reveal = options.reveal ?? (() => undefined);
    this._connection = new LoomConnection({
      sessionContext: options.notebook.sessionContext,
      client: options.client,
      autoLoad: options.autoLoad,
      resume: () => ({ since_seq: this._store.lastSeq, kernel_session: this._store.kernelSession })
    });
    const context: RenderContext = {
      rendermime: () => this._notebook.content.rendermime,
      actions: {
        copy: code => Clipboard.copyToSystem(code),
        insertBelow: code => this._insert(code)
      }
    };
    this._requests = new Requests(this._connection, text => this._store.notice('warning', text));
    this._sessions = new SessionBar({
      list: () => this._request({ type: 'sessions' }),
      resume: session => this._send({ type: 'resume', session }),
      create: () => this._send({ type: 'new' }),
      fork: () => this._send({ type: 'fork', at_turn: null }),
      search: query => this._request({ type: 'search', query }),
      jump: hit => this._jump(hit)
    });
    this._status = new StatusLine(() => void this._connection.load());
    this._trust = new TrustCard(
      answer => this._decideTrust(answer),
      () => this._store.closeTrust()
    );
    this._key = new KeyCard(key => this._send({ type: 'set_key', key }));
    this._guide = new Guide(text => this._composer.fill(text));
    this._messages = new MessageList(this._store, context, {
      decide: (id, decision) => this._decide(id, decision),
      loadMore: () => this._loadMore(),
      revert: turn => this._send({ type: 'revert_turn', turn })
    });
    this._tips = new ProvenanceTips(this._messages.node, name =>
      this._ask({ type: 'where_from', name }, origin => this._tips.answer(origin))
    );
    this._document = new NotebookDocument(options.notebook, {
      reply: reply => void this._send(reply),
      decide: (id, decision) => this._decide(id, decision),
      jump: ({ session, turn }) => {
        this._reveal();
        this._jump({ session_id: session || (this._store.session?.id ?? ''), turn });
      },
      fix: text => {
        this._reveal();
        this._submit(text);
      }
    });
    this._composer = new Composer({
      send: text => this._submitOrCommand(text),
      stop: () => this._send({ type: 'stop' }),
      cancel: id => this._cancel(id),
      complete: query =>
        void this._ask({ type: 'complete', query, kind: 'all' }, reply =>
          this._composer.showMentions(reply.query, reply.items)
        ),
      commands: () => this._store.commands
    });
    this.node.append(
      this._sessions.node,
      this._status.node,
      this._trust.node,
      this._key.node,
      this._tasks.node,
      this._guide.node,
      this._messages.node,
      this._composer.node,
      this._footer.node
    );
    this._store.changed.connect((_, change) => this._onChange(change));
    this._connection.received.connect((_, message) => this._onMessage(message));
    this._connection.unreadable.connect((_, notice) => this._store.notice('warning', notice));
    this._connection.stateChanged.connect(() => this._onLinkState());
    this._notebook.context.pathChanged.connect(this._onRenamed, this);
    // "queued: sends when the kernel is free" only while the kernel is busy
    this._notebook.sessionContext.statusChanged.connect(this._showStatus, this);
    NotebookActions.executed.connect(this._onExecuted, this);
    this._onLinkState();
    this._tasks.show([]);
  }

  /** The notebook this chat belongs to. */
  get notebook(): NotebookPanel {
    return this._notebook;
  }

  /**
   * Whether the notebook is on screen now (`focus`: the person just turned to it); the
   * kernel tells outside agents which notebook the person is looking at.
   */
  showing(onScreen: boolean, focus = false): void {
    this._connection.showing(onScreen, focus);
  }

  /** Put the cursor in the message box. */
  focusInput(): void {
    this._composer.focus();
  }

  protected onAfterAttach(): void {
    this._messages.restored();
  }

  protected onBeforeDetach(): void {
    this._tips.hide();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    NotebookActions.executed.disconnect(this._onExecuted, this);
    this._tips.dispose();
    this._connection.dispose();
    this._document.dispose();
    super.dispose();
  }

  private _send(message: Notification): boolean {
    return this._connection.send(message);
  }

  /**
   * A request whose reply the conversation shows (a session list, search hits, older
   * messages, a command's card); false when no kernel listens. A reply that comes after the
   * request timed out still shows (it arrives as any message does).
   */
  private _request(message: Request): boolean {
    return this._requests.ask(message, reply => this._onMessage(reply));
  }

  /** A slash command of the kernel's table runs without the model; anything else is a
   * message. The table says which the front answers (`front`); the rest, and one the front
   * cannot answer as typed, go to the kernel. */
  private _submitOrCommand(text: string): void {
    const slash = parseSlash(this._store.commands, text);
    if (slash === null) {
      this._submit(text);
      return;
    }
    const { command, name, args } = slash;
    if (command.front && this._answer(name, args)) {
      return;
    }
    if (!this._request({ type: 'command', name, args })) {
      this._store.notice('warning', `/${name} needs Loom running in this kernel.`);
    }
  }

  /** A command the front answers itself; false when it cannot (unknown here, or `/search`
   * without words: the kernel then says its usage). */
  private _answer(name: string, args: string): boolean {
    switch (name) {
      case 'new':
        return this._send({ type: 'new' }) || true;
      case 'fork':
        return this._send({ type: 'fork', at_turn: null }) || true;
      case 'sessions':
        this._sessions.open();
        return true;
      case 'search':
        if (args === '') {
          return false;
        }
        this._sessions.search(args);
        return true;
      default:
        return false;
    }
  }

  /** A message goes to the outbox first: shown as queued until the kernel has it. */
  private _submit(text: string): void {
    const clientId = UUID.uuid4();
    this._outbox.set(clientId, text);
    this._send({ type: 'send', client_id: clientId, text });
    this._showQueue();
    this._showStatus();
  }

  private _cancel(clientId: string): void {
    this._outbox.delete(clientId);
    this._send({ type: 'cancel_queued', client_id: clientId });
    this._showQueue();
    this._showStatus();
  }

  private _decide(requestId: string, decision: Decision): void {
    this._send({ type: 'approve', request_id: requestId, decision });
  }

  /** The trust card's answer (with the digest of the view it answers); the kernel tells
   * every front the folder's trust after it. */
  private _decideTrust(answer: TrustAnswer): boolean {
    const sent = this._send({ type: 'trust_decision', ...answer });
    if (!sent) {
      this._store.notice('warning', 'Trusting a folder needs Loom running in this kernel.');
    }
    return sent;
  }

  /** Thinking / effort from the footer; the kernel answers every front with `options`. */
  private _setOptions(change: OptionChange): boolean {
    const sent = this._send({
      type: 'set_options',
      thinking: change.thinking ?? null,
      effort: change.effort ?? null
    });
    if (!sent) {
      this._store.notice('warning', 'Thinking and effort need Loom running in this kernel.');
    }
    return sent;
  }

  private _loadMore(): void {
    const before = this._store.moreBefore;
    if (before !== null) {
      this._request({ type: 'load_more', before_turn: before });
    }
  }

  private _insert(code: string): void {
    const notebook = this._notebook.content;
    NotebookActions.insertBelow(notebook);
    notebook.activeCell?.model.sharedModel.setSource(code.replace(/\n$/, ''));
  }

  /** Jump to a search hit: resume its session or page back until the turn is loaded. */
  private _jump(hit: Pick<SearchHitItem, 'session_id' | 'turn'>): void {
    this._jumpTo = { turn: hit.turn, pages: 0 };
    if (hit.session_id !== this._store.session?.id) {
      this._send({ type: 'resume', session: hit.session_id });
    } else {
      this._continueJump();
    }
  }

  private _continueJump(): void {
    const jump = this._jumpTo;
    if (jump === null) {
      return;
    }
    const done = this._messages.reveal(jump.turn);
    const more = this._store.moreBefore !== null && jump.pages < MAX_JUMP_PAGES;
    this._jumpTo = done || !more ? null : { ...jump, pages: jump.pages + 1 };
    if (this._jumpTo !== null) {
      this._loadMore();
    }
  }

  /**
   * Ask the kernel something only one view wants (completions, a variable's origin,
   * examples): its reply goes to `use`, not into the conversation; an error notice in its
   * place does. False when no kernel listens.
   */
  private _ask<M extends Request>(
    request: M,
    use: (answer: Exclude<ReplyTo<M['type']>, { type: 'notice' }>) => void
  ): boolean {
    return this._requests.ask(request, answer => {
      const message: KernelMessage = answer;
      if (message.type === REQUEST_REPLIES[request.type]) {
        use(answer as Exclude<ReplyTo<M['type']>, { type: 'notice' }>);
      } else {
        this._onMessage(message);
      }
    });
  }

  private _onMessage(message: KernelMessage): void {
    if (STALE_ORIGINS.has(message.type)) {
      this._tips.invalidate();
    }
    const previous = this._store.kernelSession;
    // A new kernel session (restart) may show in a broadcast before its welcome.
    this._restarted ||=
      previous !== null && previous !== message.kernel_session && this._store.entries.length > 0;
    if (!this._store.apply(message)) {
      return;
    }
    this._notebookMessage(message);
    if (message.type === 'welcome') {
      this._resendOutbox();
      if (this._restartedBy(message)) {
        this._store.notice('info', RESTART_NOTICE);
      }
    }
    if (message.type === 'turn_done') {
      this._request({ type: 'sessions' }); // the title and counts the turn changed
    }
    if (message.type === 'turn_started' && message.client_id !== null) {
      this._outbox.delete(message.client_id);
      this._showQueue();
    }
    if (message.type === 'turn_error' && message.client_id) {
      this._takeBack(message.client_id);
    }
  }

  /**
   * Whether a welcome follows a kernel restart: a new kernel session after a conversation was
   * shown, from another kernel process than the last welcome named (`%unload_ext` and
   * `%load_ext` start a new session in the same process: no restart). A kernel that names no
   * process is judged by its session alone.
   */
  private _restartedBy(welcome: Extract<KernelMessage, { type: 'welcome' }>): boolean {
    const [restarted, before] = [this._restarted, this._kernelProcess];
    this._restarted = false;
    this._kernelProcess = welcome.kernel_process ?? '';
    return (
      restarted && (before === '' || this._kernelProcess === '' || before !== this._kernelProcess)
    );
  }

  /** A message the kernel could not send (no API key...) goes back into the box. */
  private _takeBack(clientId: string): void {
    const text = this._outbox.get(clientId);
    if (text === undefined) {
      return; // sent from another page: that page takes it back
    }
    this._outbox.delete(clientId);
    this._composer.restore(text);
    this._showQueue();
    this._showStatus();
  }

  /** Notebook requests, and `edit_cell` approvals shown as a diff in their cell. */
  private _notebookMessage(message: KernelMessage): void {
    if (message.type === 'notebook_request') {
      this._document.handle(message);
    } else if (message.type === 'approval') {
      const proposal = editProposal(message.tool, message.input);
      if (proposal !== null) {
        this._document.propose(message.request_id, proposal.cellId, proposal.source);
      }
    } else if (message.type === 'approval_closed') {
      this._document.closeProposal(message.request_id);
    }
  }

  /** Resend what the kernel has not acknowledged (it ignores client ids it knows). */
  private _resendOutbox(): void {
    const queued = new Set(this._store.queue.map(item => item.client_id));
    for (const [clientId, text] of this._outbox) {
      if (queued.has(clientId)) {
        this._outbox.delete(clientId);
      } else {
        this._send({ type: 'send', client_id: clientId, text });
      }
    }
  }

  private _onChange(change: Change): void {
    switch (change.kind) {
      case 'status':
        this._showStatus();
        return;
      case 'queue':
        this._store.queue.forEach(item => this._outbox.delete(item.client_id));
        this._showQueue();
        this._showStatus();
        return;
      case 'usage':
        this._footer.show(this._store.usage);
        return;
      case 'options':
        this._footer.showOptions(this._store.options);
        return;
      case 'approval-mode':
        this._footer.showApproval(this._store.approval);
        return;
      case 'trust':
        this._trust.show(this._store.trust, this._store.trustOpen);
        return;
      case 'key':
        this._key.show(this._store.keyOpen, this._store.keyProblem);
        return;
      case 'session':
        this._sessions.showSession(this._store.session);
        this._continueJump();
        return;
      case 'sessions':
        this._sessions.showSessions(this._store.sessions);
        return;
      case 'search':
        this._sessions.showHits(this._store.search);
        return;
      case 'task':
        this._tasks.show(this._store.tasks.values());
        return;
      case 'prepended':
        this._continueJump();
        this._showGuide();
        return;
      case 'reset':
        this._tasks.show(this._store.tasks.values());
        this._showGuide();
        return;
      case 'added':
        this._showGuide();
        return;
      case 'cell':
        this._insert(change.source);
        return;
      default:
        return;
    }
  }

  private _onLinkState(): void {
    this._showStatus();
    this._showGuide();
  }

  /** An empty conversation shows what Loom can do here, with examples from the kernel. */
  private _showGuide(): void {
    const empty = this._store.entries.every(entry => entry.kind === 'notice');
    const show = empty && this._connection.state === 'open' && this._store.kernelSession !== null;
    if (show && !this._guide.visible) {
      this._askExamples();
    }
    this._guide.show(show);
  }

  private _askExamples(): void {
    this._ask({ type: 'examples' }, reply => this._guide.setExamples(reply.prompts));
  }

  /** A cell of this notebook ran: it may have set a variable a tip told of. */
  private _onExecuted(_: unknown, args: { notebook: unknown }): void {
    if (args.notebook === this._notebook.content) {
      this._tips.invalidate();
      if (this._guide.visible) {
        this._askExamples(); // the cell may have made a variable to suggest
      }
    }
  }

  private _onRenamed(): void {
    this._send({
      type: 'set_notebook',
      path: this._notebook.context.localPath,
      server_root: serverRoot()
    });
  }

  private _showQueue(): void {
    const known = new Set(this._store.queue.map(item => item.client_id));
    const local: Queued[] = [...this._outbox]
      .filter(([clientId]) => !known.has(clientId))
      .map(([client_id, text]) => ({ client_id, text }));
    this._composer.setQueue([...this._store.queue, ...local]);
  }

  private _showStatus(): void {
    const [state, text] = this._shownState();
    const link = this._connection.state;
    this._status.show(state, text, link === 'not-loaded');
    if (link === 'not-loaded' && this._connection.loadError !== '') {
      this._status.show(state, `${text} (${this._connection.loadError})`, true);
    }
    this._composer.setBusy(link === 'open' && (state !== 'idle' || this._streaming()));
  }

  private _shownState(): [ShownState, string] {
    const link = this._connection.state;
    if (link === 'not-loaded') {
      return ['offline', 'Loom is not loaded in this kernel'];
    }
    if (link !== 'open') {
      return ['offline', OFFLINE_TEXT[link]];
    }
    const { state, detail } = this._store;
    switch (state) {
      case 'waiting-cell':
        return ['thinking', WAITING_CELL];
      case 'idle':
        return this._outbox.size > 0 ? ['queued', this._outboxText()] : ['idle', 'ready'];
      case 'thinking':
        return ['thinking', detail || 'thinking…'];
      case 'waiting-approval':
        return ['waiting-approval', detail || 'waiting for your approval'];
      case 'queued':
        return ['queued', detail || 'queued: runs after the current turn'];
    }
  }

  /**
   * A message on its way to an idle kernel: without subshells the kernel reads it only
   * once the running cell ends; otherwise it is being sent.
   */
  private _outboxText(): string {
    const kernel = this._notebook.sessionContext.session?.kernel;
    const cellRuns = kernel?.status === 'busy' && !this._store.subshells;
    return cellRuns ? 'queued: sends when the kernel is free' : 'sending…';
  }

  private _streaming(): boolean {
    const last = this._store.entries[this._store.entries.length - 1];
    return (last?.kind === 'assistant' || last?.kind === 'thinking') && last.streaming;
  }

  private readonly _notebook: NotebookPanel;
  private readonly _reveal: () => void;
  private readonly _document: NotebookDocument;
  private readonly _store = new ChatStore();
  private readonly _connection: LoomConnection;
  private readonly _requests: Requests;
  private readonly _outbox = new Map<string, string>();
  private readonly _sessions: SessionBar;
  private readonly _status: StatusLine;
  private readonly _trust: TrustCard;
  private readonly _key: KeyCard;
  private readonly _guide: Guide;
  private readonly _tasks = new TaskList();
  private readonly _messages: MessageList;
  private readonly _tips: ProvenanceTips;
  private readonly _composer: Composer;
  private readonly _footer = new Footer(change => this._setOptions(change));
  private _jumpTo: { turn: number; pages: number } | null = null;
  private _restarted = false;
  /** The kernel process the last welcome named ('' when none did). */
  private _kernelProcess = '';
}
