/**
 * `%unload_ext loom_jupyter` and `%load_ext loom_jupyter` in one cell (the quickstart's):
 * Loom closes the page's comm, and the page's reopen can reach the kernel between the two
 * magics, when no Loom listens. The page then looks again once the cell ends, instead of
 * saying "Loom is not loaded" until some later cell names loom_jupyter.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Signal } from '@lumino/signaling';

import { LoomConnection } from '../src/connection';

type Data = Record<string, unknown>;

class FakeComm {
  opened: Data | null = null;
  isDisposed = false;
  commsOverSubshells: unknown = null;
  onMsg: (msg: { content: { data: unknown } }) => void = () => undefined;
  onClose: () => void = () => undefined;
  open(data: Data): void {
    this.opened = data;
  }
  send(): void {}
  close(): void {
    this.isDisposed = true;
  }
  dispose(): void {
    this.isDisposed = true;
  }
  receive(data: Data): void {
    this.onMsg({ content: { data } });
  }
}

class FakeKernel {
  readonly comms: FakeComm[] = [];
  status = 'idle';
  connectionStatus = 'connected';
  supportsSubshells = false;
  info = Promise.resolve({});
  readonly iopubMessage = new Signal<this, unknown>(this);
  createComm(): FakeComm {
    const comm = new FakeComm();
    this.comms.push(comm);
    return comm;
  }
  get last(): FakeComm {
    return this.comms[this.comms.length - 1];
  }
}

const WELCOME = {
  seq: 1,
  kernel_session: 'k1',
  turn: null,
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
  protocol: '1.3',
  commands: []
};

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
}

async function linked(): Promise<{
  connection: LoomConnection;
  kernel: FakeKernel;
  status: Signal<object, unknown>;
}> {
  const kernel = new FakeKernel();
  const owner = {};
  const status = new Signal<object, unknown>(owner);
  const sessionContext = {
    statusChanged: status,
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
  kernel.last.receive(WELCOME);
  expect(connection.state).toBe('open');
  return { connection, kernel, status };
}

describe('an extension reload in one cell', () => {
  beforeEach(() => jest.spyOn(console, 'debug').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('looks again once the cell ends when the reopen came between the magics', async () => {
    const { connection, kernel, status } = await linked();
    kernel.status = 'busy'; // the cell runs %unload_ext, then %load_ext
    kernel.last.onClose(); // the old Loom closes the page's comm
    await settle();
    expect(kernel.comms).toHaveLength(2); // the page reopens at once...
    kernel.last.onClose(); // ...and no Loom listens yet: refused
    await settle();
    expect(connection.state).toBe('not-loaded');
    kernel.status = 'idle'; // the cell ends: the new Loom listens
    status.emit(undefined);
    await settle();
    expect(kernel.comms).toHaveLength(3);
    kernel.last.receive(WELCOME);
    expect(connection.state).toBe('open');
  });

  it('waits for the cell itself to end, not for the refused open to be answered', async () => {
    const { connection, kernel, status } = await linked();
    const cell = { msg_type: 'execute_request', msg_id: 'cell' };
    const refusedOpen = { msg_type: 'comm_open', msg_id: 'open' };
    const said = (parent: Data, state: string): void => {
      kernel.status = state;
      kernel.iopubMessage.emit({
        header: { msg_type: 'status' },
        parent_header: parent,
        content: { execution_state: state }
      });
      status.emit(undefined);
    };
    said(cell, 'busy'); // the cell runs %unload_ext, then %load_ext
    kernel.last.onClose();
    await settle();
    kernel.last.onClose(); // the reopen came between the magics: refused
    await settle();
    said(refusedOpen, 'idle'); // on a subshell, the refused open is done; the cell is not
    await settle();
    expect(kernel.comms).toHaveLength(2);
    expect(connection.state).toBe('not-loaded');
    said(cell, 'idle'); // the cell ends: the new Loom listens
    await settle();
    expect(kernel.comms).toHaveLength(3);
    kernel.last.receive(WELCOME);
    expect(connection.state).toBe('open');
  });

  it('stays "not loaded" after %unload_ext alone', async () => {
    const { connection, kernel, status } = await linked();
    kernel.status = 'busy';
    kernel.last.onClose();
    await settle();
    kernel.last.onClose();
    await settle();
    kernel.status = 'idle';
    status.emit(undefined);
    await settle();
    expect(kernel.comms).toHaveLength(3); // looked once more...
    kernel.last.onClose(); // ...and nothing listens
    await settle();
    expect(connection.state).toBe('not-loaded');
    status.emit(undefined);
    await settle();
    expect(kernel.comms).toHaveLength(3); // no more tries until a cell names loom_jupyter
  });
});
