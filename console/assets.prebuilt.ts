/**
 * The console's files in the CLI package: written beside the bundle by `npm run build:packages`
 * (dist/console/), so an installed CLI needs no esbuild. Replaces assets.ts in that bundle.
 */
import { readFile } from 'node:fs/promises';
import { assetsFrom, type ConsoleAssets } from './asset-set.js';

export async function loadConsoleAssets(): Promise<ConsoleAssets> {
  const read = (name: string) => readFile(new URL(`./console/${name}`, import.meta.url), 'utf8');
  const [html, js, css] = await Promise.all([read('index.html'), read('app.js'), read('app.css')]);
  return assetsFrom({ html, js, css });
}
