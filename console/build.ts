/**
 * Bundles the web console (console/app: TypeScript and CSS) with esbuild, minified, in
 * memory: the local runtime and `sluice console` (from this repository) serve the result,
 * `npm run build:packages` writes it into the CLI package (packages/cli/dist/console/).
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

export interface ConsoleSources {
  html: string;
  js: string;
  css: string;
}

const appDir = fileURLToPath(new URL('./app/', import.meta.url));

/** The page: it only loads the script and the style (no inline code, so the CSP can forbid it). */
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice console</title>
<link rel="stylesheet" href="/console/app.css">
<script type="module" src="/console/app.js"></script>
</head>
<body></body>
</html>
`;

export async function buildConsoleSources(): Promise<ConsoleSources> {
  const result = await build({
    absWorkingDir: appDir,
    entryPoints: ['main.ts', 'style.css'],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    outdir: 'out',
    write: false,
    logLevel: 'silent',
  });
  const text = (suffix: string) => {
    const file = result.outputFiles.find((f) => f.path.endsWith(suffix));
    if (!file) throw new Error(`The console build wrote no ${suffix}.`);
    return file.text;
  };
  return { html: PAGE, js: text('main.js'), css: text('style.css') };
}
