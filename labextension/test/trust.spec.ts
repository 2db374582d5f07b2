/**
 * The trust card and the footer's approval mode (DESIGN §12). The card shows
 * what the folder asks for as text only (its lines come from the folder, which
 * someone else may have written), whole; Allow and Deny send the decision.
 * The tests run in node: `document` is a small fake that holds elements and
 * text and refuses any HTML (innerHTML throws).
 */
import { TrustDecision, TrustView } from '../src/protocol';
import { FakeElement, installFakeDocument } from './fakedom';
import { Footer, approvalModeText } from '../src/views/status';
import { STATUS_WORDS, TrustCard, trustText } from '../src/views/trust';

beforeAll(installFakeDocument);

const LONG = `sh -c "${'x'.repeat(400)} > MCP_RAN"`;
const HOSTILE = '<img src=x onerror="alert(1)"> **bold** [link](javascript:alert(1))';
const FOLDER: TrustView = {
  root: '/srv/cloned-repo',
  status: 'untrusted',
  asks: [`MCP server tools: ${LONG}`, "  its tools' approval: auto", 'approval: auto', HOSTILE]
};

/** A card, what it sent, and how often it asked to close. */
function card(sent = true): {
  node: FakeElement;
  card: TrustCard;
  decisions: TrustDecision[];
  closed: number[];
} {
  const decisions: TrustDecision[] = [];
  const closed: number[] = [];
  const view = new TrustCard(
    decision => {
      decisions.push(decision);
      return sent;
    },
    () => closed.push(1)
  );
  return { node: view.node as unknown as FakeElement, card: view, decisions, closed };
}

/** Every text below `node`, in order. */
function texts(node: FakeElement): string[] {
  return node.children.flatMap(child => (typeof child === 'string' ? [child] : texts(child)));
}

describe('trustText', () => {
  it('keeps every line whole and says the status in words', () => {
    const text = trustText(FOLDER);
    expect(text.asks).toEqual(FOLDER.asks);
    expect(text.asks[0]).toContain(LONG);
    expect(text.root).toBe('/srv/cloned-repo');
    expect(text.status).toBe(STATUS_WORDS.untrusted);
    expect(text.title).toBe('Trust this folder?');
    expect(text.note).toContain('Your own settings always win');
  });
});

describe('TrustCard', () => {
  it('is hidden until opened, and shows the folder, its status and every line as text', () => {
    const { node, card: view } = card();
    expect(node.dataset.loom).toBe('trust');
    expect(node.hidden).toBe(true);
    view.show(FOLDER, true);
    expect(node.hidden).toBe(false);
    expect(node.dataset.status).toBe('untrusted');
    expect(node.one('trust-root').textContent).toBe('/srv/cloned-repo');
    expect(node.one('trust-status').textContent).toBe(STATUS_WORDS.untrusted);
    const lines = node.one('trust-asks').children as FakeElement[];
    expect(lines.map(line => line.textContent)).toEqual(FOLDER.asks);
    expect(lines.every(line => line.children.length === 1)).toBe(true);
    expect(lines.every(line => typeof line.children[0] === 'string')).toBe(true);
    expect(texts(node)).toContain(HOSTILE); // markup and markdown stay text
  });

  it('has labelled buttons: Allow sends trust, Deny sends deny and closes', () => {
    const { node, card: view, decisions, closed } = card();
    view.show(FOLDER, true);
    const buttons = node.querySelectorAll('button');
    expect(buttons.map(b => [b.dataset.loom, b.textContent, b.type])).toEqual([
      ['trust-close', '×', 'button'],
      ['trust-allow', 'Trust folder', 'button'],
      ['trust-deny', "Don't trust", 'button']
    ]);
    expect(buttons.every(b => b.title !== '')).toBe(true);
    expect(node.one('trust-close').attributes['aria-label']).toContain('Decide later');
    node.one('trust-allow').click();
    expect(decisions).toEqual(['trust']);
    expect(buttons.map(b => b.disabled)).toEqual([false, true, true]); // until the answer
    expect(closed).toEqual([]);
    view.show(FOLDER, true);
    node.one('trust-deny').click();
    expect(decisions).toEqual(['trust', 'deny']);
    expect(closed).toEqual([1]);
  });

  it('stays open with its buttons usable when the decision cannot be sent', () => {
    const { node, card: view, decisions, closed } = card(false);
    view.show(FOLDER, true);
    node.one('trust-allow').click();
    node.one('trust-deny').click();
    expect(decisions).toEqual(['trust', 'deny']);
    expect(closed).toEqual([]);
    expect(node.querySelectorAll('button').some(b => b.disabled)).toBe(false);
  });

  it('offers only its close button for a folder that asks for nothing, and hides', () => {
    const { node, card: view } = card();
    view.show({ root: '/srv/plain', status: 'not-needed', asks: [] }, true);
    expect(node.querySelectorAll('button').map(b => b.dataset.loom)).toEqual(['trust-close']);
    expect(node.querySelectorAll('[data-loom="trust-asks"]')).toHaveLength(0);
    view.show({ root: '/srv/plain', status: 'not-needed', asks: [] }, false);
    expect(node.hidden).toBe(true);
    expect(node.children).toEqual([]);
  });
});

describe('the footer approval mode', () => {
  it('says the mode and its source, and names the source in its tooltip', () => {
    expect(approvalModeText({ mode: 'ask', source: 'default' }).text).toBe(
      'approval: ask (default)'
    );
    const project = approvalModeText({ mode: 'auto', source: 'project' });
    expect(project.text).toBe('approval: auto (project)');
    expect(project.title).toContain("this folder's loom.yaml");
  });

  it('shows [data-loom="approval-mode"] with data-source, hidden until known', () => {
    const footer = new Footer(() => true);
    const node = footer.node as unknown as FakeElement;
    const mode = node.one('approval-mode');
    expect(mode.hidden).toBe(true);
    footer.showApproval({ mode: 'ask', source: 'default' });
    expect([mode.hidden, node.hidden]).toEqual([false, false]);
    expect([mode.dataset.source, mode.dataset.mode, mode.textContent]).toEqual([
      'default',
      'ask',
      'approval: ask (default)'
    ]);
    footer.showApproval({ mode: 'auto', source: 'project' });
    expect([mode.dataset.source, mode.textContent]).toEqual([
      'project',
      'approval: auto (project)'
    ]);
  });
});
