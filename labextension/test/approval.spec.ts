/**
 * The approval card (DESIGN §6, §12): Always names what it allows from then on, and a
 * write to one of Loom's guard rails offers no Always at all, saying why.
 */
import { Decision } from '../src/protocol';
import { ApprovalEntry } from '../src/store';
import { ApprovalCard } from '../src/views/approval';
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
});
