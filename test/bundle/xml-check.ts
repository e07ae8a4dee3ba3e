/** An element of a parsed XML document: enough to read a JUnit report back in tests. */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const decode = (raw: string): string => {
  if (/<|&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(raw)) throw new Error(`unescaped markup in ${raw}`);
  return raw.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (_, e: string) =>
    e.startsWith('#x')
      ? String.fromCodePoint(Number.parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : (entities[e] as string),
  );
};

const attrsOf = (raw: string): Record<string, string> => {
  const attrs: Record<string, string> = {};
  const rest = raw.replace(/\s*([\w:-]+)="([^"]*)"/g, (_, name: string, value: string) => {
    if (name in attrs) throw new Error(`duplicate attribute ${name}`);
    attrs[name] = decode(value);
    return '';
  });
  if (rest.trim()) throw new Error(`malformed attributes: ${raw}`);
  return attrs;
};

/**
 * A strict little XML reader for tests: throws on unbalanced tags, bad attributes, unescaped `<` or `&`, or
 * characters XML 1.0 forbids. Not a general parser (no DTD, CDATA or comments): our exports write none.
 */
export const parseXml = (xml: string): XmlElement => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for forbidden control characters.
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(xml)) throw new Error('control character in XML');
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  const tag = /<(\/?)([\w:-]+)([^<>]*?)(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    const top = stack[stack.length - 1] as XmlElement;
    top.text += decode(body.slice(last, m.index));
    last = tag.lastIndex;
    const [, close, name, attrs, selfClose] = m as unknown as [string, string, string, string, string];
    if (close) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const element: XmlElement = { name, attrs: attrsOf(attrs), children: [], text: '' };
    top.children.push(element);
    if (!selfClose) stack.push(element);
  }
  if (body.slice(last).trim() || stack.length !== 1) throw new Error('unclosed elements or trailing text');
  if (root.children.length !== 1) throw new Error('expected one root element');
  return root.children[0] as XmlElement;
};

export const childrenNamed = (e: XmlElement, name: string): XmlElement[] => e.children.filter((c) => c.name === name);
