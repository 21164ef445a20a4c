import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { defaultIssuerUrl, IssuerUrl } from './issuer-url.js';

const PREFIX = '/kubernetes/management';

describe('defaultIssuerUrl', () => {
  it('names the bind address when the server listens on one address', () => {
    assert.equal(
      defaultIssuerUrl({ bindAddress: '127.0.0.1', hostName: 'box', port: 8443, pathPrefix: PREFIX }),
      'https://127.0.0.1:8443/kubernetes/management',
    );
    assert.equal(
      defaultIssuerUrl({ bindAddress: '::1', hostName: 'box', port: 9443, pathPrefix: PREFIX }),
      'https://[::1]:9443/kubernetes/management',
    );
  });

  it('names the host (as the serving certificate does) when the server listens on every interface', () => {
    for (const bindAddress of ['0.0.0.0', '::', '']) {
      assert.equal(
        defaultIssuerUrl({ bindAddress, hostName: 'Platform-0.Example.com', port: 8443, pathPrefix: PREFIX }),
        'https://platform-0.example.com:8443/kubernetes/management',
      );
    }
    // A host name that is no DNS name is in no certificate: fall back to localhost.
    assert.equal(
      defaultIssuerUrl({ bindAddress: '0.0.0.0', hostName: 'my_box', port: 1, pathPrefix: `${PREFIX}/` }),
      'https://localhost:1/kubernetes/management',
    );
  });
});

describe('IssuerUrl', () => {
  const address = { bindAddress: '127.0.0.1', hostName: 'box', pathPrefix: PREFIX };

  it('is unknown until the server listens, then names its address', () => {
    const url = new IssuerUrl('');
    assert.equal(url.isFixed, false);
    assert.throws(() => url.get(), /not known until the server listens/);
    url.resolve({ ...address, port: 40123 });
    assert.equal(url.get(), 'https://127.0.0.1:40123/kubernetes/management');
  });

  it('keeps the issuer an operator named, wherever the server listens', () => {
    const url = new IssuerUrl('https://platform.example.com/kubernetes/management/');
    assert.equal(url.isFixed, true);
    url.resolve({ ...address, port: 40123 });
    assert.equal(url.get(), 'https://platform.example.com/kubernetes/management');
  });
});
