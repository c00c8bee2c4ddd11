/**
 * The console's files for a server running from this repository: bundled from source by
 * esbuild when first asked for. The CLI package replaces this module by assets.prebuilt.ts.
 */
import { assetsFrom, type ConsoleAssets } from './asset-set.js';
import { buildConsoleSources } from './build.js';

export async function loadConsoleAssets(): Promise<ConsoleAssets> {
  return assetsFrom(await buildConsoleSources());
}
