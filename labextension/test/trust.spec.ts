/**
 * The trust card and the footer's approval mode (DESIGN §12). The card shows
 * what the folder asks for as text only (its lines come from the folder, which
 * someone else may have written), whole; Allow and Deny send the decision with
 * the digest of the view on screen; what would loosen approvals is asked apart
 * (a checkbox, unticked by default). The tests run in node: `document` is a
 * small fake that holds elements and text and refuses any HTML (innerHTML throws).
 */
import { KernelMessage, TrustView } from '../src/protocol';
import { ChatStore } from '../src/store';
import { FakeElement, installFakeDocument } from './fakedom';
import { Footer, approvalModeText } from '../src/views/status';
import {
  LOOSEN_QUESTION,
  STATUS_WORDS,
  TrustAnswer,
  TrustCard,
  trustText
} from '../src/views/trust';

beforeAll(installFakeDocument);

const LONG = `sh -c "${'x'.repeat(400)} > MCP_RAN"`;
const HOSTILE = '<img src=x onerror="alert(1)"> **bold** [link](javascript:alert(1))';
const FOLDER: TrustView = {
  root: '/srv/cloned-repo',
  status: 'untrusted',
  asks: [`MCP server tools: ${LONG}`, "  its tools' approval: auto", 'approval: auto', HOSTILE],
  digest: 'd1-benign',
  loosens: [],
  with_approval: false,
  note: ''
};
/** The same folder asking to loosen approvals (`approval: auto` against the person's ask). */
const LOOSE: TrustView = {
  ...FOLDER,
  digest: 'd2-loose',
  loosens: [
    'approval: auto (yours is ask)',
    `MCP server tools's tools: approval auto (yours is ask) ${HOSTILE}`
  ]
};
const CHANGED_NOTE =
  'The folder changed after it was shown to you, so nothing was recorded: this is what it ' +
  'asks for now.';

/** A card, what it sent, and how often it asked to close. */
function card(sent = true): {
  node: FakeElement;
  card: TrustCard;
  answers: TrustAnswer[];
  decisions: string[];
  closed: number[];
} {
  const answers: TrustAnswer[] = [];
  const closed: number[] = [];
  const view = new TrustCard(
    answer => {
      answers.push(answer);
      return sent;
    },
    () => closed.push(1)
  );
  const node = view.node as unknown as FakeElement;
  return {
    node,
    card: view,
    answers,
    get decisions() {
      return answers.map(answer => answer.decision);
    },
    closed
  };
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
    expect(text.status.toLowerCase()).toBe(`${STATUS_WORDS.untrusted}.`.toLowerCase());
    expect(text.status).toMatch(/^Not trusted: .*\.$/);
    expect(text.title).toBe('Trust this folder?');
    expect(text.hint).toContain('Your own settings always win');
    expect([text.note, text.loosens]).toEqual(['', []]);
  });

  it("says each status in the kernel's words (loom_jupyter.trust, generated)", () => {
    const statuses = ['trusted', 'untrusted', 'changed', 'denied', 'not-needed'] as const;
    expect(Object.keys(STATUS_WORDS).sort()).toEqual([...statuses].sort());
    for (const status of statuses) {
      const said = trustText({ ...FOLDER, status }).status;
      expect(said).toBe(`${said.charAt(0)}${STATUS_WORDS[status].slice(1)}.`);
    }
    expect(STATUS_WORDS['not-needed']).toContain('asks for nothing that needs trust');
    expect(LOOSEN_QUESTION).toBe(
      'Let this folder make Loom run code and commands without asking you'
    );
  });

  it("reads a 1.1 kernel's view (no digest, loosens or note)", () => {
    const old: TrustView = { root: '/srv/old', status: 'untrusted', asks: ['approval: auto'] };
    expect([trustText(old).note, trustText(old).loosens]).toEqual(['', []]);
    const { node, card: view, answers } = card();
    view.show(old, true);
    expect(node.querySelectorAll('[data-loom="trust-approval"]')).toHaveLength(0);
    node.one('trust-allow').click();
    expect(answers).toEqual([{ decision: 'trust', digest: null, with_approval: false }]);
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
    expect(node.one('trust-status').textContent).toBe(trustText(FOLDER).status);
    const lines = node.one('trust-asks').children as FakeElement[];
    expect(lines.map(line => line.textContent)).toEqual(FOLDER.asks);
    expect(lines.every(line => line.children.length === 1)).toBe(true);
    expect(lines.every(line => typeof line.children[0] === 'string')).toBe(true);
    expect(texts(node)).toContain(HOSTILE); // markup and markdown stay text
  });

  it('has labelled buttons: Allow sends trust, Deny sends deny and closes', () => {
    const handle = card();
    const { node, card: view, closed } = handle;
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
    expect(handle.decisions).toEqual(['trust']);
    expect(buttons.map(b => b.disabled)).toEqual([false, true, true]); // until the answer
    expect(closed).toEqual([]);
    view.show(FOLDER, true);
    node.one('trust-deny').click();
    expect(handle.decisions).toEqual(['trust', 'deny']);
    expect(closed).toEqual([1]);
  });

  it('sends the digest of the view on screen with every decision', () => {
    const { node, card: view, answers } = card();
    view.show(FOLDER, true);
    node.one('trust-allow').click();
    view.show(FOLDER, true);
    node.one('trust-deny').click();
    expect(answers).toEqual([
      { decision: 'trust', digest: 'd1-benign', with_approval: false },
      { decision: 'deny', digest: 'd1-benign', with_approval: false }
    ]);
  });

  it('asks apart for what loosens approvals: its own section, a box unticked by default', () => {
    const { node, card: view, answers } = card();
    view.show(FOLDER, true); // loosens nothing: no box, no section
    expect(node.querySelectorAll('[data-loom="trust-approval"]')).toHaveLength(0);
    expect(node.querySelectorAll('[data-loom="trust-loosen"]')).toHaveLength(0);

    view.show(LOOSE, true);
    const section = node.one('trust-loosen');
    const box = section.one('trust-approval');
    expect([box.tagName, box.type, box.checked, box.disabled]).toEqual([
      'INPUT',
      'checkbox',
      false,
      false
    ]);
    const label = section.querySelectorAll('label');
    expect(label).toHaveLength(1);
    expect(label[0].children).toEqual([box, LOOSEN_QUESTION]); // the box's label, as text
    const lines = section.one('trust-loosens').children as FakeElement[];
    expect(lines.map(line => line.textContent)).toEqual(LOOSE.loosens);
    expect(lines.every(line => typeof line.children[0] === 'string')).toBe(true);
    expect(texts(node)).toContain(LOOSE.loosens![1]); // markup in a loosening line stays text
    expect(node.one('trust-asks').textContent).toContain('approval: auto'); // still listed

    node.one('trust-allow').click(); // unticked: trusted, the person's mode stays
    expect(answers[0]).toEqual({ decision: 'trust', digest: 'd2-loose', with_approval: false });
    expect(box.disabled).toBe(true); // with the buttons, until the answer

    view.show(LOOSE, true);
    const ticked = node.one('trust-approval');
    expect(ticked.checked).toBe(false);
    ticked.checked = true;
    node.one('trust-allow').click();
    expect(answers[1]).toEqual({ decision: 'trust', digest: 'd2-loose', with_approval: true });

    view.show(LOOSE, true);
    node.one('trust-approval').checked = true;
    node.one('trust-deny').click(); // a no lets nothing loosen
    expect(answers[2]).toEqual({ decision: 'deny', digest: 'd2-loose', with_approval: false });
  });

  it('shows the box ticked only for a folder trusted with it, and not for a new decision', () => {
    const { node, card: view } = card();
    view.show({ ...LOOSE, status: 'trusted', with_approval: true }, true);
    expect(node.one('trust-approval').checked).toBe(true);
    view.show({ ...LOOSE, status: 'trusted', with_approval: false }, true);
    expect(node.one('trust-approval').checked).toBe(false);
    view.show({ ...LOOSE, status: 'changed', with_approval: true }, true);
    expect(node.one('trust-approval').checked).toBe(false);
    view.show({ ...LOOSE, status: 'not-needed' }, true); // nothing to decide
    expect(node.querySelectorAll('[data-loom="trust-approval"]')).toHaveLength(0);
  });

  it("shows the kernel's note first and plainly, only when there is one", () => {
    const { node, card: view } = card();
    view.show(FOLDER, true);
    expect(node.querySelectorAll('[data-loom="trust-note"]')).toHaveLength(0);
    view.show({ ...FOLDER, note: `${CHANGED_NOTE} ${HOSTILE}` }, true);
    const note = node.one('trust-note');
    expect(note.children).toEqual([`${CHANGED_NOTE} ${HOSTILE}`]);
    expect(note.attributes.role).toBe('alert');
    const parts = node.children as FakeElement[];
    expect(parts.indexOf(note)).toBe(1); // right under the title, above the folder
  });

  it('draws a new view afresh: its content, its digest, the box unticked again', () => {
    const { node, card: view, answers } = card();
    view.show(LOOSE, true);
    node.one('trust-approval').checked = true;
    node.one('trust-allow').click(); // the kernel finds the folder changed since
    const swapped: TrustView = {
      ...LOOSE,
      asks: ["MCP server tools: runs `sh -c 'id > PWNED'`", 'approval: auto'],
      digest: 'd3-swapped',
      note: CHANGED_NOTE
    };
    view.show(swapped, true);
    expect(node.hidden).toBe(false);
    expect(node.one('trust-note').textContent).toBe(CHANGED_NOTE);
    expect(node.one('trust-asks').textContent).toContain('PWNED');
    expect(node.one('trust-asks').textContent).not.toContain(LONG);
    const box = node.one('trust-approval');
    expect([box.checked, box.disabled]).toEqual([false, false]);
    expect(node.querySelectorAll('button').some(b => b.disabled)).toBe(false);
    node.one('trust-allow').click();
    expect(answers.map(a => [a.digest, a.with_approval])).toEqual([
      ['d2-loose', true],
      ['d3-swapped', false]
    ]);
  });

  it('stays open with its buttons usable when the decision cannot be sent', () => {
    const handle = card(false);
    const { node, card: view, closed } = handle;
    view.show(LOOSE, true);
    node.one('trust-allow').click();
    node.one('trust-deny').click();
    expect(handle.decisions).toEqual(['trust', 'deny']);
    expect(closed).toEqual([]);
    expect(node.querySelectorAll('button').some(b => b.disabled)).toBe(false);
    expect(node.one('trust-approval').disabled).toBe(false);
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

describe('a decision the kernel did not record', () => {
  const trustMsg = (seq: number, trust: TrustView, show: boolean): KernelMessage => ({
    seq,
    kernel_session: 'k1',
    turn: null,
    type: 'trust',
    trust,
    show
  });

  it('keeps the card open on the folder as it is now, with the note', () => {
    const store = new ChatStore();
    const { node, card: view } = card();
    store.changed.connect(() => view.show(store.trust, store.trustOpen));
    store.apply(trustMsg(1, LOOSE, false)); // an untrusted folder opens the card
    expect(node.hidden).toBe(false);
    node.one('trust-approval').checked = true;
    node.one('trust-allow').click();
    const now: TrustView = { ...LOOSE, digest: 'd3-now', note: CHANGED_NOTE };
    store.apply(trustMsg(2, now, true));
    expect([store.trustOpen, node.hidden]).toEqual([true, false]);
    expect(node.one('trust-note').textContent).toBe(CHANGED_NOTE);
    expect(node.one('trust-approval').checked).toBe(false);

    store.closeTrust(); // Deny closes at once; the kernel's "not recorded" opens it again
    expect(node.hidden).toBe(true);
    store.apply(trustMsg(3, { ...now, digest: 'd4-again' }, true));
    expect(node.hidden).toBe(false);
    expect(node.one('trust-note').textContent).toBe(CHANGED_NOTE);
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
    expect(mode.dataset.managed).toBeUndefined();
  });
});

describe("the footer under the organisation's managed policy (DESIGN §16)", () => {
  const POLICY =
    'managed by your organisation (/opt/env/etc/loom/managed.yaml): approval: ask at most; ' +
    'models: claude-sonnet-5-5';
  const OVERRIDES = [
    'approval: auto (a LOOM_* variable) is not allowed; ask is used (managed by your ' +
      'organisation, /opt/env/etc/loom/managed.yaml)',
    `model: claude-opus-5-5 (your loom.yaml) is not allowed; claude-sonnet-5-5 is used ${HOSTILE}`
  ];

  it('says (managed) where the policy decides the mode, and every override in its tooltip', () => {
    const footer = new Footer(() => true);
    const node = footer.node as unknown as FakeElement;
    const mode = node.one('approval-mode');
    footer.showApproval({
      mode: 'ask',
      source: 'env',
      managed: POLICY,
      overrides: OVERRIDES,
      by_policy: true
    });
    expect([mode.dataset.managed, mode.dataset.mode, mode.dataset.source]).toEqual([
      'true',
      'ask',
      'env'
    ]);
    expect(mode.textContent).toBe('approval: ask (managed)');
    const lines = mode.title.split('\n');
    expect(lines[0]).toBe("Approval mode ask, from your organisation's managed policy.");
    expect(lines.slice(1, 4)).toEqual([POLICY, ...OVERRIDES]); // as text, markup and all
    expect(lines[4]).toContain('The policy refuses a looser one.');
    expect(mode.children).toEqual(['approval: ask (managed)']); // text only: no elements
  });

  it('marks a mode the policy leaves alone, and drops the mark when the policy goes', () => {
    const footer = new Footer(() => true);
    const mode = (footer.node as unknown as FakeElement).one('approval-mode');
    footer.showApproval({
      mode: 'read-only',
      source: 'magic',
      managed: POLICY,
      overrides: [],
      by_policy: false
    });
    expect(mode.textContent).toBe('approval: read-only (magic) · managed');
    expect(mode.dataset.managed).toBe('true');
    expect(mode.title).toContain('%cowork approval in this kernel');
    expect(mode.title).toContain(POLICY);
    footer.showApproval({
      mode: 'ask',
      source: 'user',
      managed: '',
      overrides: [],
      by_policy: false
    });
    expect(mode.dataset.managed).toBeUndefined();
    expect(mode.textContent).toBe('approval: ask (user)');
    expect(mode.title).not.toContain('managed');
  });

  it('reads a view from a kernel older than 1.4 (no policy fields) as before', () => {
    const words = approvalModeText({ mode: 'ask', source: 'user' });
    expect([words.text, words.managed]).toEqual(['approval: ask (user)', false]);
  });
});
