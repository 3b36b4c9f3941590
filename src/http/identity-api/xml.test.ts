import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from './errors.ts';
import { preferredFormat } from './negotiate.ts';
import { collectionXml, entityXml, errorXml, parseEntityXml } from './xml.ts';

const refused = (error: unknown) => error instanceof ApiError && error.status === 400 && error.code === 'Invalid arguments';

describe('identity API XML', () => {
  test('builds the product’s shapes, escaping markup and replacing characters XML cannot carry', () => {
    assert.equal(
      entityXml('User', { xmlns: 'ns', method: 'GET', skipped: undefined }, [['note', ['<a href="x">&</a>', 'bell\u0007', 'lone \uD800 surrogate']]]),
      '<?xml version="1.0" encoding="UTF-8"?><User xmlns="ns" method="GET"><Attribute name="note"><Value>&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;</Value><Value>bell\uFFFD</Value><Value>lone \uFFFD surrogate</Value></Attribute></User>',
    );
    assert.equal(collectionXml('Users', {}, []), '<?xml version="1.0" encoding="UTF-8"?><Users></Users>');
    assert.equal(errorXml('Entity not found', 'no "x" < y'), '<?xml version="1.0" encoding="UTF-8"?><error><code>Entity not found</code><message>no &quot;x&quot; &lt; y</message></error>');
    assert.equal(entityXml('user', {}, [], 'id-1'), '<?xml version="1.0" encoding="UTF-8"?><user><Id>id-1</Id></user>');
  });

  test('reads what it writes, with prefixes, predefined entities and character references', () => {
    const written = entityXml('User', { xmlns: 'http://schema.ubisecure.com/customerid/api', inResponseTo: '/x', method: 'GET' }, [
      ['login', ['a & b <c>']],
      ['multi', ['1', '2']],
    ]);
    assert.deepEqual({ ...parseEntityXml(written) }, { element: 'User', attributes: parseEntityXml(written).attributes });
    assert.deepEqual({ ...parseEntityXml(written).attributes }, { login: ['a & b <c>'], multi: ['1', '2'] });
    const prefixed = '<c:Organization xmlns:c="http://schema.ubisecure.com/customerid/api"><c:Attribute name="x&#x41;"><c:Value>&#65;&amp;lt;&apos;</c:Value><c:Value/></c:Attribute></c:Organization>';
    assert.deepEqual({ ...parseEntityXml(prefixed).attributes }, { xA: ['A&lt;\'', ''] });
    assert.equal(parseEntityXml('<User/>').element, 'User');
    assert.deepEqual({ ...parseEntityXml('<User/>').attributes }, {});
  });

  test('refuses DTDs, entities, markup in values, duplicates and malformed documents', () => {
    for (const xml of [
      '<!DOCTYPE User [<!ENTITY a "b">]><User/>',
      '<!doctype User SYSTEM "http://127.0.0.1/x.dtd"><User/>',
      '<User><Attribute name="a"><Value>&a;</Value></Attribute></User>',
      '<User><Attribute name="a"><Value>&nbsp;</Value></Attribute></User>',
      '<User><Attribute name="a"><Value>&#0;</Value></Attribute></User>',
      '<User><Attribute name="a"><Value>&#x110000;</Value></Attribute></User>',
      '<User><Attribute name="a"><Value>&constructor;</Value></Attribute></User>',
      '<User><Attribute name="a"><Value><b/></Value></Attribute></User>',
      '<User><Attribute name="a"/><Attribute name="a"/></User>',
      '<User><Attribute><Value>x</Value></Attribute></User>',
      '<User><Other/></User>',
      '<User>text</User>',
      '<User><Attribute name="a"><Value>x</Value></User>',
      '<a/><b/>',
      '',
    ]) {
      assert.throws(() => parseEntityXml(xml), refused, xml);
    }
  });
});

describe('identity API content negotiation', () => {
  test('prefers what the client prefers, else the route’s default', () => {
    assert.equal(preferredFormat(undefined, 'json'), 'json');
    assert.equal(preferredFormat(undefined, 'xml'), 'xml');
    assert.equal(preferredFormat('application/xml', 'json'), 'xml');
    assert.equal(preferredFormat('text/xml', 'json'), 'xml');
    assert.equal(preferredFormat('application/json', 'xml'), 'json');
    assert.equal(preferredFormat('*/*', 'xml'), 'xml');
    assert.equal(preferredFormat('application/*', 'json'), 'json');
    assert.equal(preferredFormat('application/json;q=0.9, application/xml', 'json'), 'xml');
    assert.equal(preferredFormat('application/xml;q=0, */*', 'xml'), 'json');
    assert.equal(preferredFormat('text/html', 'json'), 'json');
    assert.equal(preferredFormat('garbage;;;q=x,,', 'json'), 'json');
  });
});
