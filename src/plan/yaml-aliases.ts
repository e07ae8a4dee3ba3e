import { isAlias, isCollection, isPair, type Node } from 'yaml';

/**
 * Most values a document's aliases may add when expanded. Every later pass (validation, template vars,
 * fingerprints) walks values as if each alias were a copy, so a "billion laughs" file, a few lines of anchors
 * that alias each other, would hold the command for hours; a real suite sharing assertions through anchors
 * adds a few thousand.
 */
const maxAliasedValues = 1_000_000;

/** An alias the document cannot be read with, and the node to point at. */
export interface AliasProblem {
  node: Node;
  message: string;
  hint: string;
}

/**
 * Checks every alias of a parsed document before it becomes plain values: that its anchor is defined before it,
 * that it is not inside the node it names (a value containing itself), and that all aliases together expand to
 * at most `maxAliasedValues` values. One pass in document order, each anchor's expanded size worked out once.
 */
export const aliasProblem = (root: Node | null): AliasProblem | undefined => {
  // As the YAML spec says, an alias names the closest anchor of that name before it.
  const anchors = new Map<string, Node>();
  const sizes = new Map<Node, number>();
  const open = new Set<Node>();
  let added = 0;
  let problem: AliasProblem | undefined;

  const sizeOf = (node: unknown): number => {
    if (problem || node === null || typeof node !== 'object') return 1;
    if (isPair(node)) return sizeOf(node.key) + sizeOf(node.value);
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (!target) {
        problem = {
          node,
          message: `alias *${node.source} names no anchor before it`,
          hint: `define &${node.source} on a value above this line, or write the value here`,
        };
        return 1;
      }
      if (open.has(target)) {
        problem = {
          node,
          message: `alias *${node.source} is inside the value it names, which would contain itself`,
          hint: 'alias a value outside the anchored one, or write the nested value out',
        };
        return 1;
      }
      const size = sizes.get(target) ?? 1;
      added += size;
      if (added > maxAliasedValues) {
        problem = {
          node,
          message: `alias *${node.source} expands the document past ${maxAliasedValues.toLocaleString('en-US')} aliased values`,
          hint: 'share assertions and vars through default_test instead of nested anchors, or write the values out',
        };
      }
      return size;
    }
    const n = node as Node;
    const anchor = 'anchor' in n && typeof n.anchor === 'string' ? n.anchor : undefined;
    if (anchor !== undefined) {
      anchors.set(anchor, n);
      open.add(n);
    }
    let size = 1;
    if (isCollection(n)) for (const item of n.items) size += sizeOf(item);
    if (anchor !== undefined) {
      open.delete(n);
      sizes.set(n, size);
    }
    return size;
  };

  sizeOf(root);
  return problem;
};
