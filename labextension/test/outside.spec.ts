/**
 * An outside agent's calls (DESIGN §14): a tool card marked with the client's name, live and
 * from history — "Claude Code runs" while it runs, "Claude Code ran" once it is done.
 */
import { ChatStore, ToolEntry, historyEntries } from '../src/store';
import { KernelBody, KernelMessage } from '../src/protocol';
import { ToolCard } from '../src/views/toolcard';
import { FakeElement, installFakeDocument } from './fakedom';

beforeAll(installFakeDocument);

function msg(seq: number, body: KernelBody): KernelMessage {
  return { seq, kernel_session: 'k1', turn: null, ...body };
}

const started: KernelBody = {
  type: 'tool_started',
  turn: 7,
  call_id: 'outside_1',
  name: 'run_python',
  summary: 'code: answer = 42',
  input: { code: 'answer = 42' },
  outside: 'Claude Code'
};
const finished: KernelBody = {
  type: 'tool_finished',
  turn: 7,
  call_id: 'outside_1',
  name: 'run_python',
  summary: 'ran 1 line',
  is_error: false,
  duration_ms: 9,
  result: '',
  input: { code: 'answer = 42' },
  outside: 'Claude Code'
};

function onlyTool(store: ChatStore): ToolEntry {
  const tools = store.entries.filter((e): e is ToolEntry => e.kind === 'tool');
  expect(tools).toHaveLength(1);
  return tools[0];
}

function marker(entry: ToolEntry): FakeElement {
  const node = new ToolCard(entry).node as unknown as FakeElement;
  expect(node.dataset.outside).toBe('Claude Code');
  return node.one('outside-agent');
}

describe("an outside agent's call", () => {
  it('is a tool card that says who runs it, then who ran it', () => {
    const store = new ChatStore();
    store.apply(msg(1, started));
    expect(onlyTool(store).outside).toBe('Claude Code');
    expect(marker(onlyTool(store)).textContent).toBe('Claude Code runs');
    store.apply(msg(2, finished));
    expect(marker(onlyTool(store)).textContent).toBe('Claude Code ran');
  });

  it('is marked when its card was made by its streamed input first', () => {
    const store = new ChatStore();
    const input: KernelBody = {
      type: 'tool_input',
      turn: 7,
      call_id: 'outside_1',
      name: 'run_python',
      partial: '{"code": "answer = 42"}'
    };
    store.apply(msg(1, input));
    store.apply(msg(2, started));
    expect(marker(onlyTool(store)).textContent).toBe('Claude Code runs');
  });

  it('is marked from its first input piece, while the person is asked', () => {
    const store = new ChatStore();
    const input: KernelBody = {
      type: 'tool_input',
      turn: 7,
      call_id: 'outside_1',
      name: 'edit_cell',
      partial: '{"cell_id": "a1"}',
      outside: 'Claude Code'
    };
    store.apply(msg(1, input)); // its approval comes next; tool_started only once allowed
    expect(marker(onlyTool(store)).textContent).toBe('Claude Code runs');
  });

  it('keeps its mark in the history a page reads', () => {
    const [entry] = historyEntries([
      {
        kind: 'tool',
        turn: 7,
        call_id: 'outside_1',
        name: 'read_notebook',
        input: {},
        summary: '2 cells',
        is_error: false,
        result: '[cell 1]',
        outside: 'Claude Code'
      }
    ]);
    expect(entry.kind === 'tool' && entry.outside).toBe('Claude Code');
  });

  it("marks nothing on Loom's own calls", () => {
    const store = new ChatStore();
    const own = { ...started, outside: undefined } as unknown as KernelBody;
    store.apply(msg(1, own));
    const node = new ToolCard(onlyTool(store)).node as unknown as FakeElement;
    expect(node.dataset.outside).toBeUndefined();
    expect(node.querySelectorAll('[data-loom="outside-agent"]')).toHaveLength(0);
  });
});
