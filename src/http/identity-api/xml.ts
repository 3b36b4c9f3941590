/**
 * XML in and out of the identity API, through fast-xml-parser and never by string concatenation.
 *
 * Out: CustomerID's shapes (REST API response messages): an entity `<User>` holding
 * `<Attribute name="…"><Value>…</Value></Attribute>`, a collection `<Users>` of `<Id>`, an
 * `<error><code/><message/></error>`. The builder escapes markup; characters XML 1.0 cannot
 * carry at all (§2.2) are replaced, so no stored value can break a document.
 *
 * In: an entity document of the same shape. A document type declaration is refused outright and
 * entity processing is off, so neither external entities (XXE) nor entity expansion ("billion
 * laughs") can happen; only the five predefined entities and character references are decoded,
 * by a bounded function here.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { invalidArguments } from './errors.ts';

export const CUSTOMERID_NAMESPACE = 'http://schema.ubisecure.com/customerid/api';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: false, suppressEmptyNode: false, processEntities: true });

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  removeNSPrefix: true,
  maxNestedTags: 8,
  isArray: (name) => name === 'Attribute' || name === 'Value',
});

/** Characters outside XML 1.0's Char production, including lone surrogates. */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function xmlText(value: string): string {
  return value.replace(NOT_XML_CHAR, '\uFFFD');
}

export type XmlAttributes = Record<string, string | undefined>;

function attributeNodes(attributes: XmlAttributes): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) out[`@_${name}`] = xmlText(value);
  return out;
}

function document(root: string, content: Record<string, unknown>): string {
  return builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' }, [root]: content }) as string;
}

/** `<User xmlns=… inResponseTo=… method=…><Id?/><Attribute name><Value/></Attribute>…</User>` */
export function entityXml(element: string, xmlAttributes: XmlAttributes, attributes: [string, string[]][], leadingId?: string): string {
  return document(element, {
    ...attributeNodes(xmlAttributes),
    ...(leadingId === undefined ? {} : { Id: xmlText(leadingId) }),
    Attribute: attributes.map(([name, values]) => ({ '@_name': xmlText(name), Value: values.map(xmlText) })),
  });
}

/** `<Users xmlns=… inResponseTo=… method=…><Id>…</Id>…</Users>` */
export function collectionXml(element: string, xmlAttributes: XmlAttributes, ids: string[]): string {
  return document(element, { ...attributeNodes(xmlAttributes), Id: ids.map(xmlText) });
}

/** `<error><code>…</code><message>…</message></error>`, without a namespace, as the product sends it. */
export function errorXml(code: string, message: string): string {
  return document('error', { code: xmlText(code), message: xmlText(message) });
}

export interface ParsedEntity {
  /** The root element's local name, e.g. `User`. */
  element: string;
  attributes: Record<string, string[]>;
}

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Decodes the predefined entities and character references (XML 1.0 §4.1, §4.6); any other entity is an error. */
function decodeReferences(text: string): string {
  return text.replace(/&([^;&]{0,10});?/g, (match, name: string) => {
    if (!match.endsWith(';')) throw invalidArguments('The XML body has a bare "&"; write &amp;.');
    if (Object.hasOwn(PREDEFINED, name)) return PREDEFINED[name]!;
    const number = /^#x([0-9a-fA-F]{1,6})$/.exec(name)?.[1] ?? /^#([0-9]{1,7})$/.exec(name)?.[1];
    if (number !== undefined) {
      const code = name.startsWith('#x') ? parseInt(number, 16) : parseInt(number, 10);
      const char = code <= 0x10ffff ? String.fromCodePoint(code) : '';
      if (char === '' || new RegExp(NOT_XML_CHAR.source, 'u').test(char)) throw invalidArguments('The XML body refers to a character XML does not allow.');
      return char;
    }
    throw invalidArguments('The XML body uses an entity; only &amp; &lt; &gt; &quot; &apos; and character references are accepted.');
  });
}

function text(value: unknown): string {
  if (typeof value !== 'string') throw invalidArguments('Each <Value> must hold text only.');
  return decodeReferences(value);
}

/**
 * Parses `<Entity><Attribute name="…"><Value>…</Value>…</Attribute>…</Entity>` into attribute
 * lists. Root attributes (`xmlns`, `inResponseTo`, `method`, `type`) are ignored, so a document
 * read from the API can be sent back.
 */
export function parseEntityXml(xml: string): ParsedEntity {
  // No DTD at all: it is the only door to entity expansion and external entities.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw invalidArguments('XML with a document type declaration is not accepted.');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw invalidArguments(`The XML body is not well-formed (line ${valid.err.line}).`);
  let parsed: Record<string, unknown>;
  try {
    parsed = parser.parse(xml) as Record<string, unknown>;
  } catch {
    // The parser's own limits (e.g. nesting deeper than maxNestedTags) throw plain Errors: the
    // document is what is wrong, not the server.
    throw invalidArguments('The XML body is nested too deeply or too large.');
  }
  const roots = Object.keys(parsed);
  if (roots.length !== 1) throw invalidArguments('The XML body must have exactly one root element.');
  const element = roots[0]!;
  const root = parsed[element];
  const attributes: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  if (root === '' || root === undefined) return { element, attributes };
  if (typeof root !== 'object' || root === null) throw invalidArguments(`<${element}> must hold <Attribute> elements only.`);
  for (const [key, value] of Object.entries(root)) {
    if (key.startsWith('@_')) continue;
    if (key !== 'Attribute') throw invalidArguments(`<${element}> must hold <Attribute> elements only.`);
    for (const attribute of value as unknown[]) {
      if (typeof attribute !== 'object' || attribute === null) throw invalidArguments('Each <Attribute> needs a name and <Value> elements.');
      const { '@_name': rawName, Value: values, ...rest } = attribute as Record<string, unknown>;
      if (typeof rawName !== 'string' || Object.keys(rest).some((k) => !k.startsWith('@_'))) throw invalidArguments('Each <Attribute> needs a name and <Value> elements.');
      const name = decodeReferences(rawName);
      if (name in attributes) throw invalidArguments(`The attribute ${JSON.stringify(name.slice(0, 80))} is given twice.`);
      attributes[name] = ((values as unknown[] | undefined) ?? []).map(text);
    }
  }
  return { element, attributes };
}
