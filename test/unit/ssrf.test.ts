import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { addressProblem, checkerUrlProblem } from '../../lib/domain/ssrf.js';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';

const strict = { allowLoopback: false };
const local = { allowLoopback: true };

describe('checker address policy', () => {
  it.each([
    '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '127.0.0.1', '127.1.2.3', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd12:3456::1', 'fc00::1', '::ffff:10.0.0.1',
    '::ffff:127.0.0.1', 'ff02::1', '64:ff9b::a00:1', 'fec0::1', '64:ff9b:1::a00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ])('refuses %s', (ip) => {
    expect(addressProblem(ip, strict)).toBeDefined();
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) => {
    expect(addressProblem(ip, strict)).toBeUndefined();
  });

  it('allows loopback only in the local runtime, never private or link-local', () => {
    expect(addressProblem('127.0.0.1', local)).toBeUndefined();
    expect(addressProblem('::1', local)).toBeUndefined();
    expect(addressProblem('10.0.0.1', local)).toBeDefined();
    expect(addressProblem('169.254.169.254', local)).toBeDefined();
  });

  it('refuses every address of the private ranges', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), (a, b, c) => {
        expect(addressProblem(`10.${a}.${b}.${c}`, strict)).toBeDefined();
        expect(addressProblem(`192.168.${a}.${b}`, strict)).toBeDefined();
        expect(addressProblem(`172.${16 + (a % 16)}.${b}.${c}`, strict)).toBeDefined();
        expect(addressProblem(`169.254.${a}.${b}`, strict)).toBeDefined();
      }),
    );
  });

  it('checks URLs: https only (http on loopback locally), no credentials', () => {
    expect(checkerUrlProblem('https://checks.example.com/tx', strict)).toBeUndefined();
    expect(checkerUrlProblem('http://checks.example.com/tx', strict)).toBe('must be https');
    expect(checkerUrlProblem('http://checks.example.com/tx', local)).toMatch(/https/);
    expect(checkerUrlProblem('http://localhost:8080/tx', local)).toBeUndefined();
    expect(checkerUrlProblem('http://[::1]:8080/tx', local)).toBeUndefined();
    expect(checkerUrlProblem('https://localhost/tx', strict)).toBeDefined();
    expect(checkerUrlProblem('https://a:b@checks.example.com/', strict)).toBeDefined();
    expect(checkerUrlProblem('not a url', strict)).toBeDefined();
  });

  it('refuses a DNS name that resolves to a private or loopback address, at vetting and at call time', async () => {
    const client = new HttpWebhookClient(strict);
    const url = `https://${hostname()}:1/check`;
    await expect(client.vet(url)).rejects.toThrow();
    await expect(client.post(url, {}, '{}', 1000)).rejects.toThrow(/refused|ENOTFOUND|EAI_AGAIN/);
  });
});
