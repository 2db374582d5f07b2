/**
 * Variable mentions and their provenance tips (issue 21): which inline code is
 * a variable mention, what a tip says of an `origin`, and that the tip is text
 * only. The tests run in node without a DOM, so `document` is a small fake that
 * holds elements and text and refuses any HTML (innerHTML throws).
 */
import { Origin } from '../src/generated/protocol';
import {
  isVariableName,
  markMentions,
  seconds,
  tipLines,
  tipNodes,
  withMentions
} from '../src/views/provenance';

/** An element of the fake DOM: tag, class, data, children and text; never HTML. */
class FakeElement {
  constructor(readonly tagName: string) {}
  className = '';
  tabIndex = -1;
  parent: FakeElement | null = null;
  children: (FakeElement | string)[] = [];
  readonly dataset: Record<string, string> = {};
  readonly classList = {
    add: (name: string): void => {
      this.className = `${this.className} ${name}`.trim();
    }
  };

  set innerHTML(_: string) {
    throw new Error('the tip must never set HTML');
  }

  get textContent(): string {
    return this.children.map(c => (typeof c === 'string' ? c : c.textContent)).join('');
  }

  set textContent(text: string) {
    this.children = [text];
  }

  append(...nodes: (FakeElement | string)[]): void {
    for (const node of nodes) {
      if (typeof node !== 'string') {
        node.parent = this;
      }
      this.children.push(node);
    }
  }

  closest(tag: string): FakeElement | null {
    return this.tagName === tag.toUpperCase() ? this : (this.parent?.closest(tag) ?? null);
  }

  querySelectorAll(tag: string): FakeElement[] {
    const found: FakeElement[] = [];
    const walk = (node: FakeElement): void => {
      for (const child of node.children) {
        if (typeof child !== 'string') {
          if (child.tagName === tag.toUpperCase()) {
            found.push(child);
          }
          walk(child);
        }
      }
    };
    walk(this);
    return found;
  }
}

const make = (tag: string, ...children: (FakeElement | string)[]): FakeElement => {
  const node = new FakeElement(tag.toUpperCase());
  node.append(...children);
  return node;
};

beforeAll(() => {
  (globalThis as unknown as { document: unknown }).document = {
    createElement: (tag: string) => make(tag)
  };
});

const FOUND: Origin = {
  name: 'total',
  variable: 'total',
  found: true,
  setter: 'cell [3]',
  when: '2026-11-24 08:30:11 UTC',
  code: 'total = sum(scores)',
  more_lines: 0,
  steps: [
    { label: 'cell [1]', first_line: 'import pandas as pd' },
    { label: 'cell [2]', first_line: 'scores = [1, 2, 3]' }
  ],
  more_steps: 0,
  estimated_s: 0.0312,
  why: '',
  type: 'origin'
};

describe('isVariableName', () => {
  it('takes one identifier, unicode too, and nothing else', () => {
    for (const name of ['df', 'total', '_x', 'sales_by_region', 'df2', 'größe']) {
      expect(isVariableName(name)).toBe(true);
    }
    for (const text of ['df.head()', 'x + 1', 'df.columns', '2x', '', ' df', 'a b', 'None']) {
      expect(isVariableName(text)).toBe(false);
    }
    expect(isVariableName('for')).toBe(false);
    expect(isVariableName('x'.repeat(101))).toBe(false);
  });
});

describe('markMentions', () => {
  it('marks inline code that names a variable, never code blocks or expressions', () => {
    const names = ['total', 'df.head()', 'x + 1', 'scores'].map(text => make('code', text));
    const block = make('code', 'total');
    const root = make('div', make('p', 'Now ', ...names, '.'), make('pre', block));
    expect(markMentions(root as unknown as ParentNode)).toBe(2);
    const marked = names.filter(node => node.dataset.loom === 'variable-mention');
    expect(marked.map(node => node.dataset.name)).toEqual(['total', 'scores']);
    expect(marked.every(node => node.tabIndex === 0)).toBe(true);
    expect(names[1].dataset.loom).toBeUndefined();
    expect(block.dataset.loom).toBeUndefined();
    expect(markMentions(root as unknown as ParentNode)).toBe(2); // idempotent
  });
});

describe('withMentions', () => {
  it('makes each @name in the person’s text a mention, and nothing else', () => {
    const parts = withMentions('Compare @df and @cell:a1 with @totals, mail a@b.org or @@x.');
    const mentions = parts.filter(p => typeof p !== 'string') as unknown as FakeElement[];
    expect(mentions.map(m => [m.dataset.loom, m.dataset.name, m.textContent])).toEqual([
      ['variable-mention', 'df', '@df'],
      ['variable-mention', 'totals', '@totals']
    ]);
    expect(mentions.every(m => m.tabIndex === 0)).toBe(true);
    const text = parts.map(p =>
      typeof p === 'string' ? p : (p as unknown as FakeElement).textContent
    );
    expect(text.join('')).toBe('Compare @df and @cell:a1 with @totals, mail a@b.org or @@x.');
  });

  it('leaves text without mentions as it is', () => {
    expect(withMentions('no mentions <b>here</b>')).toEqual(['no mentions <b>here</b>']);
    expect(withMentions('@class is a keyword')).toEqual(['@class is a keyword']);
  });
});

describe('tipLines', () => {
  it('says who set it, when, its code, the chain and the estimate', () => {
    const lines = tipLines(FOUND);
    expect(lines.map(line => line.part)).toEqual(['head', 'code', 'chain', 'estimate']);
    expect(lines[0].text).toBe('total — last set by cell [3] at 2026-11-24 08:30:11 UTC');
    expect(lines[1].text).toBe('total = sum(scores)');
    expect(lines[2].text).toBe(
      'depends on: cell [1] import pandas as pd, cell [2] scores = [1, 2, 3]'
    );
    expect(lines[3].text).toBe('rebuild estimate: 0.03 s');
  });

  it('counts what it leaves out and says why when nothing set it', () => {
    const long = tipLines({ ...FOUND, more_lines: 4, more_steps: 9, steps: [], estimated_s: 75 });
    expect(long[1].text).toBe('total = sum(scores)\n… (4 more lines)');
    expect(long[2].text).toBe('depends on: and 9 more');
    expect(tipLines({ ...FOUND, more_steps: 0, steps: [] })[2].text).toBe(
      'depends on no earlier execution'
    );
    const missing = { ...FOUND, found: false, setter: '', code: '', steps: [] };
    expect(tipLines({ ...missing, why: 'no archived execution sets it' })).toEqual([
      { part: 'why', text: 'total — no archived execution sets it' }
    ]);
  });

  it('formats seconds as the kernel does', () => {
    expect([seconds(0.123), seconds(12.34), seconds(125)]).toEqual([
      '0.12 s',
      '12.3 s',
      '2 min 5 s'
    ]);
  });
});

describe('tipNodes', () => {
  it('puts code in a monospace block as text: markup in it stays text', () => {
    const hostile = '<img src=x onerror="alert(1)"> = 1';
    const nodes = tipNodes(tipLines({ ...FOUND, code: hostile })) as unknown as FakeElement[];
    expect(nodes.map(node => node.tagName)).toEqual(['DIV', 'PRE', 'DIV', 'DIV']);
    expect(nodes[1].className).toBe('loom-ProvenanceTip-code');
    expect(nodes[1].children).toEqual([hostile]); // one text child, no element
    expect(nodes.every(node => node.children.every(child => typeof child === 'string'))).toBe(true);
  });
});
