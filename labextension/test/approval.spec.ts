/**
 * The approval card (DESIGN §6, §12): Always names what it allows from then on, and a
 * write to one of Loom's guard rails offers no Always at all, saying why.
 */
import { Decision } from '../src/protocol';
import { ApprovalEntry } from '../src/store';
import { ToolEntry } from '../src/store';
import { ApprovalCard } from '../src/views/approval';
import { ToolCard } from '../src/views/toolcard';
import { FakeElement, installFakeDocument } from './fakedom';

beforeAll(installFakeDocument);

function entry(always: string | null, summary = 'run `git status`'): ApprovalEntry {
  return {
    kind: 'approval',
    key: 'approval:r1',
    requestId: 'r1',
    tool: 'shell',
    input: { command: 'git status' },
    preview: 'git status',
    summary,
    always,
    question: 'run',
    decision: null,
    by: null
  };
}

function tool(): ToolEntry {
  return {
    kind: 'tool',
    key: 'c:r1',
    turn: 1,
    name: 'shell',
    input: { command: 'git status' },
    partial: '',
    summary: '',
    result: '',
    isError: false,
    durationMs: null,
    streaming: true,
    done: false
  };
}

function render(value: ApprovalEntry): { node: FakeElement; decided: Decision[] } {
  const decided: Decision[] = [];
  const card = new ApprovalCard(value, (_id, decision) => decided.push(decision));
  return { node: card.node as unknown as FakeElement, decided };
}

describe('ApprovalCard', () => {
  it('names the scope an Always would allow', () => {
    const { node, decided } = render(entry('shell commands starting with `git`'));
    const buttons = node.querySelectorAll('[data-loom="approve"]');
    expect(buttons.map(b => b.dataset.decision)).toEqual(['allow', 'deny', 'always']);
    expect(node.textContent).toContain('Always: shell commands starting with `git`');
    buttons[2].click();
    expect(decided).toEqual(['always']);
  });

  it('offers no Always for a guard rail and says why', () => {
    const why = 'write loom.yaml — it writes loom.yaml, Loom always asks about this';
    const { node } = render(entry(null, why));
    const buttons = node.querySelectorAll('[data-loom="approve"]');
    expect(buttons.map(b => b.dataset.decision)).toEqual(['allow', 'deny']);
    expect(node.one('guard-rail').textContent).toBe(why);
  });

  it('keeps an unnamed Always for requests that carry no scope', () => {
    const { node } = render(entry(''));
    const buttons = node.querySelectorAll('[data-loom="approve"]');
    expect(buttons.map(b => b.dataset.decision)).toEqual(['allow', 'deny', 'always']);
    expect(node.querySelectorAll('[data-loom="guard-rail"]')).toHaveLength(0);
  });

  it('asks whether to keep a protected change Loom undid, showing the diff', () => {
    const keep: ApprovalEntry = {
      ...entry(
        null,
        'run_python changed loom.yaml (created), which Loom protects; Loom undid it. Keep this change?'
      ),
      question: 'keep',
      preview: '--- loom.yaml\n+++ loom.yaml\n+approval: auto'
    };
    const { node, decided } = render(keep);
    const [diff] = node.querySelectorAll('[data-loom="protected-diff"]');
    expect(diff.textContent).toContain('+approval: auto');
    const buttons = node.querySelectorAll('[data-loom="approve"]');
    expect(buttons.map(b => b.textContent)).toEqual(['Keep this change', 'Leave it undone']);
    buttons[1].click();
    expect(decided).toEqual(['deny']);
  });

  it('shows the code once: here while it waits, in the tool card once answered', async () => {
    const list = document.createElement('div') as unknown as FakeElement;
    const toolCard = new ToolCard(tool());
    const other = new ToolCard({ ...tool(), key: 'c:r0' });
    list.append(other.node as unknown as FakeElement, toolCard.node as unknown as FakeElement);
    const pending = entry('');
    const card = new ApprovalCard(pending, () => undefined);
    list.append(card.node as unknown as FakeElement);
    await Promise.resolve(); // the card looks for its tool card once it is in the list

    expect(toolCard.node.dataset.approval).toBe('pending');
    expect(other.node.dataset.approval).toBeUndefined();
    expect(card.node.dataset.paired).toBe('true');
    expect(card.node.dataset.decision).toBe('pending');

    card.update({ ...pending, decision: 'allow', by: 'sidebar' });
    expect(toolCard.node.dataset.approval).toBe('answered');
    expect(card.node.dataset.decision).toBe('allow');
  });

  it('pairs a tool card that comes after its approval (as after a reload)', async () => {
    const list = document.createElement('div') as unknown as FakeElement;
    const card = new ApprovalCard(entry(''), () => undefined);
    list.append(card.node as unknown as FakeElement);
    await Promise.resolve();
    expect(card.node.dataset.paired).toBeUndefined(); // no tool card yet: the code is here

    const toolCard = new ToolCard(tool());
    list.append(toolCard.node as unknown as FakeElement);
    await Promise.resolve();
    expect(toolCard.node.dataset.approval).toBe('pending');
    expect(card.node.dataset.paired).toBe('true');
  });

  it('leaves a keep question and its tool card apart', async () => {
    const list = document.createElement('div') as unknown as FakeElement;
    const toolCard = new ToolCard(tool());
    const card = new ApprovalCard({ ...entry(null), question: 'keep' }, () => undefined);
    list.append(toolCard.node as unknown as FakeElement, card.node as unknown as FakeElement);
    await Promise.resolve();
    expect(toolCard.node.dataset.approval).toBeUndefined();
    expect(card.node.dataset.paired).toBeUndefined();
  });
});
