/**
 * The page's requests (issue 41.4) and what it reads from a newer kernel (41.5), through a
 * real LoomConnection on a fake kernel and comm: every request goes with its own
 * `request_id`; one the kernel does not answer in time says so in the chat (once per kind,
 * until one is answered), and its late reply still arrives; a kernel's message of a type this
 * page does not know, from a newer kernel of its major version, is skipped (logged once),
 * and a request answered with such a message fails at once with a word.
 * Timers are jest's fake ones: the timeout is reached by advancing them, not by waiting.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Signal } from '@lumino/signaling';

import { INVOKE_TIMEOUT_MS, LoomConnection, RequestError } from '../src/connection';
import { KernelMessage, Request, RequestType } from '../src/protocol';
import { Requests, failureText } from '../src/requests';

type Data = Record<string, unknown>;

class FakeComm {
  readonly sent: Data[] = [];
  opened: Data | null = null;
  isDisposed = false;
  commsOverSubshells: unknown = null;
  onMsg: (msg: { content: { data: unknown } }) => void = () => undefined;
  onClose: () => void = () => undefined;
  open(data: Data): void {
    this.opened = data;
  }
  send(data: Data): void {
    this.sent.push(data);
  }
  close(): void {
    this.isDisposed = true;
  }
  dispose(): void {
    this.isDisposed = true;
  }
  /** The kernel sends `data` on this comm. */
  receive(data: Data): void {
    this.onMsg({ content: { data } });
  }
  get last(): Data {
    return this.sent[this.sent.length - 1];
  }
}

class FakeKernel {
  readonly comm = new FakeComm();
  status = 'idle';
  connectionStatus = 'connected';
  supportsSubshells = false;
  info = Promise.resolve({});
  readonly iopubMessage = new Signal<this, unknown>(this);
  createComm(): FakeComm {
    return this.comm;
  }
}

const envelope = { seq: 1, kernel_session: 'k1', turn: null };

/** A welcome from a kernel of protocol `version`, a reply to the hello. */
function welcome(version: string): Data {
  return {
    ...envelope,
    reply_to: '',
    type: 'welcome',
    session: null,
    history: [],
    more_before: null,
    busy: false,
    state: { type: 'status', state: 'idle', detail: '' },
    queue: [],
    subshells: false,
    tasks: [],
    options: null,
    approval: null,
    trust: null,
    has_key: true,
    protocol: version,
    commands: []
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
}

/** A connection to a kernel of protocol `version`, welcomed; its chat's notices. */
async function connected(version: string): Promise<{
  connection: LoomConnection;
  comm: FakeComm;
  notices: string[];
  requests: Requests;
  received: KernelMessage[];
  unreadable: string[];
}> {
  const kernel = new FakeKernel();
  const owner = {};
  const sessionContext = {
    statusChanged: new Signal(owner),
    connectionStatusChanged: new Signal(owner),
    kernelChanged: new Signal(owner),
    session: { kernel },
    path: 'nb.ipynb'
  } as unknown as ISessionContext;
  const connection = new LoomConnection({
    sessionContext,
    client: 'lab',
    autoLoad: () => false,
    resume: () => ({ since_seq: null, kernel_session: null })
  });
  await settle();
  const { comm } = kernel;
  expect(comm.opened).toMatchObject({ type: 'hello' });
  comm.receive(welcome(version));
  expect(connection.state).toBe('open');
  const notices: string[] = [];
  const received: KernelMessage[] = [];
  const unreadable: string[] = [];
  connection.received.connect((_, message) => received.push(message));
  connection.unreadable.connect((_, text) => unreadable.push(text));
  const requests = new Requests(connection, text => notices.push(text));
  return { connection, comm, notices, requests, received, unreadable };
}

/** One request of every type (the compiler wants every type of the generated table). */
const EVERY_REQUEST: { [T in RequestType]: Extract<Request, { type: T }> } = {
  load_more: { type: 'load_more', before_turn: 3 },
  sessions: { type: 'sessions' },
  search: { type: 'search', query: 'churn' },
  complete: { type: 'complete', query: 'df', kind: 'all' },
  command: { type: 'command', name: 'rebuild', args: 'df' },
  where_from: { type: 'where_from', name: 'df' },
  examples: { type: 'examples' }
};

beforeEach(() => {
  jest.useFakeTimers();
  jest.spyOn(console, 'debug').mockImplementation(() => undefined);
});

afterEach(() => {
  jest.useRealTimers();
  jest.restoreAllMocks();
});

describe('requests', () => {
  it('go each with its own request_id, and their replies to whoever asked', async () => {
    const { comm, requests, received } = await connected('1.3');
    const answers: string[] = [];
    for (const request of Object.values(EVERY_REQUEST)) {
      expect(requests.ask(request, reply => answers.push(reply.type))).toBe(true);
      expect(comm.last).toMatchObject({ type: request.type, request_id: expect.any(String) });
    }
    const ids = comm.sent.map(data => data.request_id);
    expect(new Set(ids).size).toBe(Object.keys(EVERY_REQUEST).length);
    const sessions = comm.sent.find(data => data.type === 'sessions')!;
    comm.receive({ ...envelope, reply_to: sessions.request_id, type: 'sessions', items: [] });
    await settle();
    expect(answers).toEqual(['sessions']);
    expect(received).toEqual([]); // the reply was the asker's
  });

  it('say in the chat when the kernel does not answer in time, once per kind', async () => {
    const { comm, notices, requests, received } = await connected('1.3');
    requests.ask(EVERY_REQUEST.command, () => undefined);
    const first = comm.last.request_id;
    jest.advanceTimersByTime(INVOKE_TIMEOUT_MS);
    await settle();
    expect(notices).toEqual([
      `The kernel has not answered /rebuild df within ${INVOKE_TIMEOUT_MS / 1000} s: it may be ` +
        'busy (a long cell, or the work itself takes long). Its answer shows here when it comes.'
    ]);
    requests.ask(EVERY_REQUEST.command, () => undefined); // still no answer: told already
    jest.advanceTimersByTime(INVOKE_TIMEOUT_MS);
    requests.ask(EVERY_REQUEST.where_from, () => undefined); // another kind: its own word
    jest.advanceTimersByTime(INVOKE_TIMEOUT_MS);
    await settle();
    expect(notices).toHaveLength(2);
    expect(notices[1]).toMatch(/^The kernel has not answered where df came from .* again/);
    // the late reply arrives as any message does (the chat shows a command's card)
    const late = { ...envelope, reply_to: first, type: 'command_result', name: 'rebuild' };
    comm.receive({ ...late, text: 'rebuilt df', ok: true });
    expect(received.map(message => message.type)).toEqual(['command_result']);
    // once one is answered, the next timeout of that kind is told again
    requests.ask(EVERY_REQUEST.command, () => undefined);
    comm.receive({ ...late, reply_to: comm.last.request_id, text: 'rebuilt', ok: true });
    await settle();
    requests.ask(EVERY_REQUEST.command, () => undefined);
    jest.advanceTimersByTime(INVOKE_TIMEOUT_MS);
    await settle();
    expect(notices).toHaveLength(3);
  });

  it('are not sent without a kernel, and say nothing then', async () => {
    const { connection, comm, notices, requests } = await connected('1.3');
    comm.onClose(); // the comm closed: the connection reopens, not open meanwhile
    const sent = comm.sent.length;
    expect(connection.canSend).toBe(false);
    expect(requests.ask(EVERY_REQUEST.sessions, () => undefined)).toBe(false);
    expect(comm.sent).toHaveLength(sent);
    expect(notices).toEqual([]);
  });

  it('word a kernel too old for a request (one a later minor version added)', () => {
    const error = new RequestError(
      EVERY_REQUEST.examples,
      'older-kernel',
      INVOKE_TIMEOUT_MS,
      '1.0'
    );
    expect(failureText(error)).toBe(
      "This kernel's Loom (protocol 1.0) is too old to answer example prompts: install the " +
        'same loom_jupyter for the kernel as for JupyterLab, then restart the kernel.'
    );
    expect(failureText(new RequestError(EVERY_REQUEST.sessions, 'offline', 1, null))).toBeNull();
  });
});

describe('a newer kernel of the same major version', () => {
  it('sends a message type this page does not know: skipped, logged once, no notice', async () => {
    const { comm, received, unreadable } = await connected('1.9');
    const info = jest.spyOn(console, 'info').mockImplementation(() => undefined);
    comm.receive({ ...envelope, seq: 2, reply_to: null, type: 'weather', sky: 'blue' });
    comm.receive({ ...envelope, seq: 3, reply_to: null, type: 'weather', sky: 'grey' });
    comm.receive({ ...envelope, seq: 4, reply_to: null, type: 'text', turn: 1, delta: 'Hi' });
    expect(received.map(message => message.type)).toEqual(['text']);
    expect(unreadable).toEqual([]);
    expect(info).toHaveBeenCalledTimes(1);
    expect(info.mock.calls[0][0]).toMatch(/skipping "weather" messages.*protocol 1\.9.*1\.4/);
  });

  it('answers a request with such a type: the request fails at once, with a word', async () => {
    const { comm, notices, requests } = await connected('1.9');
    jest.spyOn(console, 'info').mockImplementation(() => undefined);
    const used: unknown[] = [];
    requests.ask(EVERY_REQUEST.search, reply => used.push(reply));
    comm.receive({ ...envelope, reply_to: comm.last.request_id, type: 'search_pages' });
    await settle();
    expect(used).toEqual([]);
    expect(notices).toEqual([
      'The kernel\'s Loom (protocol 1.9) answered the search for "churn" with a message this ' +
        'page does not know: install the same loom_jupyter for JupyterLab as for the kernel, ' +
        'then reload the page.'
    ]);
  });

  it('is the only kind whose unknown type is skipped: the same version gets a notice', async () => {
    const { comm, received, unreadable } = await connected('1.3');
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    comm.receive({ ...envelope, seq: 2, reply_to: null, type: 'weather', sky: 'blue' });
    expect(received).toEqual([]);
    expect(unreadable).toEqual([expect.stringMatching(/could not read .* "weather"/)]);
  });
});

describe('a message type a later minor version added', () => {
  it('goes only to a kernel that reads it (focus: 1.3)', async () => {
    const older = await connected('1.2');
    older.connection.showing(true, true);
    expect(older.comm.sent.map(data => data.type)).not.toContain('focus');
    const newer = await connected('1.3');
    newer.connection.showing(true, true);
    expect(newer.comm.last).toEqual({ type: 'focus', on_screen: true });
  });
});
