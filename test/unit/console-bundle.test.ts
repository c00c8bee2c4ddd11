/** The console bundle: built by esbuild from console/app, small, and with no code inside the page. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { assetsFrom } from '../../console/asset-set.js';
import { buildConsoleSources } from '../../console/build.js';

describe('the console bundle', () => {
  it('is a page that only loads one script and one style, a minified script and a stylesheet, under 12 KiB gzip in all', async () => {
    const sources = await buildConsoleSources();
    expect(sources.html).not.toMatch(/<script>|<style>|\son\w+=/);
    expect(sources.js.split('\n').length).toBeLessThanOrEqual(3);
    expect(sources.js).not.toContain('innerHTML');
    expect(sources.css).toContain(':focus-visible');
    const assets = assetsFrom(sources);
    expect([...assets.files.keys()]).toEqual(['/console', '/console/app.js', '/console/app.css']);
    for (const file of assets.files.values()) expect(gunzipSync(file.gzip).equals(file.body)).toBe(true);
    expect(assets.gzipBytes).toBe([...assets.files.values()].reduce((sum, f) => sum + f.gzip.length, 0));
    expect(assets.gzipBytes).toBeLessThan(12 * 1024);
    console.log(`console bundle: ${assets.gzipBytes} bytes gzip (js ${sources.js.length}, css ${sources.css.length}, html ${sources.html.length} bytes raw)`);
  });
});
