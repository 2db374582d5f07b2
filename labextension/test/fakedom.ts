/**
 * A small fake DOM for view tests in node: elements hold tag, class, data, attributes,
 * children, text and clicks, and refuse any HTML (setting innerHTML throws), so a view
 * that would put text in as markup fails its test.
 */
/** An element of the fake DOM: tag, class, data, attributes, children, text and clicks. */
export class FakeElement {
  constructor(readonly tagName: string) {}
  className = '';
  title = '';
  type = '';
  hidden = false;
  disabled = false;
  checked = false;
  value = '';
  children: (FakeElement | string)[] = [];
  parentElement: FakeElement | null = null;
  readonly dataset: Record<string, string> = {};
  readonly attributes: Record<string, string> = {};
  readonly style: Record<string, string> = {};
  readonly options: FakeElement[] = [];
  readonly classList = {
    add: (name: string): void => {
      this.className = `${this.className} ${name}`.trim();
    }
  };

  set innerHTML(_: string) {
    throw new Error('a view must never set HTML');
  }

  get textContent(): string {
    return this.children.map(c => (typeof c === 'string' ? c : c.textContent)).join('');
  }

  set textContent(text: string) {
    this.children = [text];
  }

  setAttribute(name: string, value: string): void {
    this.attributes[name] = value;
  }

  addEventListener(kind: string, listener: () => void): void {
    this._listeners.push([kind, listener]);
  }

  click(): void {
    this._listeners.filter(([kind]) => kind === 'click').forEach(([, listener]) => listener());
  }

  append(...nodes: (FakeElement | string)[]): void {
    this.children.push(...nodes);
    this._adopt(nodes);
  }

  replaceChildren(...nodes: (FakeElement | string)[]): void {
    this.children = [...nodes];
    this._adopt(nodes);
  }

  private _adopt(nodes: (FakeElement | string)[]): void {
    nodes.forEach(node => typeof node !== 'string' && (node.parentElement = this));
  }

  /** Elements below this one with the tag or `[data-loom="..."]` given. */
  querySelectorAll(selector: string): FakeElement[] {
    const loom = /^\[data-loom="(.+)"\]$/.exec(selector)?.[1];
    const found: FakeElement[] = [];
    const walk = (node: FakeElement): void => {
      for (const child of node.children) {
        if (typeof child !== 'string') {
          const match =
            loom !== undefined
              ? child.dataset.loom === loom
              : child.tagName === selector.toUpperCase();
          if (match) {
            found.push(child);
          }
          walk(child);
        }
      }
    };
    walk(this);
    return found;
  }

  /** The one element below with `data-loom` = `loom`. */
  one(loom: string): FakeElement {
    const found = this.querySelectorAll(`[data-loom="${loom}"]`);
    expect(found).toHaveLength(1);
    return found[0];
  }

  private readonly _listeners: [string, () => void][] = [];
}

/** Make `document.createElement` build fake elements (call in beforeAll). */
export function installFakeDocument(): void {
  (globalThis as unknown as { document: unknown }).document = {
    createElement: (tag: string) => new FakeElement(tag.toUpperCase())
  };
}
