/**
 * The SDK's request and response types are derived from the server's zod schemas
 * (`lib/client/types.ts`: `z.input<typeof S.SendBody>`, …). Published as they are, the
 * declarations would import `zod` and the server's schema module. This rewrites such a
 * module for declaration emit: every type alias that mentions a name imported from
 * outside the package (`z`, `S`) becomes the plain object type the checker computes for
 * it, those imports go, and everything else stays as written (comments included).
 */
import { dirname, resolve } from 'node:path';
import ts from 'typescript';

const PRINT_FLAGS =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.InTypeAlias |
  ts.NodeBuilderFlags.UseSingleQuotesForStringLiteralType |
  ts.NodeBuilderFlags.IgnoreErrors;

/** True for `./x.js`, `../y.js`: modules of the same package. */
const isInside = (specifier: string, insideDir: string, fromFile: string) =>
  specifier.startsWith('.') && resolve(dirname(fromFile), specifier).startsWith(`${resolve(insideDir)}/`);

/**
 * The text of `fileName` with its zod-derived aliases flattened. `insideDir` is the
 * package's source directory: imports from elsewhere must be type-only and are removed.
 */
export function flattenForeignTypes(program: ts.Program, fileName: string, insideDir: string): string {
  const source = program.getSourceFile(fileName);
  if (!source) throw new Error(`${fileName} is not part of the program`);
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed });

  const foreignNames = new Set<string>();
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (isInside(statement.moduleSpecifier.text, insideDir, fileName)) continue;
    const clause = statement.importClause;
    if (!clause?.isTypeOnly) {
      throw new Error(`${fileName}: '${statement.moduleSpecifier.text}' must be imported type-only to be flattened`);
    }
    const bindings = clause.namedBindings;
    if (clause.name) foreignNames.add(clause.name.text);
    if (bindings && ts.isNamespaceImport(bindings)) foreignNames.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) foreignNames.add(element.name.text);
    edits.push({ start: statement.getStart(source), end: statement.getEnd(), text: '' });
  }

  const mentionsForeign = (node: ts.Node): boolean =>
    (ts.isIdentifier(node) && foreignNames.has(node.text)) || ts.forEachChild(node, mentionsForeign) === true;

  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || !mentionsForeign(statement.type)) continue;
    const type = checker.getTypeAtLocation(statement.name);
    const node = checker.typeToTypeNode(type, statement, PRINT_FLAGS);
    if (!node) throw new Error(`${fileName}: cannot print the type of ${statement.name.text}`);
    const text = printer.printNode(ts.EmitHint.Unspecified, node, source);
    if ([...foreignNames].some((name) => new RegExp(`\\b${name}\\.`).test(text)) || /\bimport\(/.test(text)) {
      throw new Error(`${fileName}: ${statement.name.text} still refers to a foreign module once flattened: ${text.slice(0, 200)}`);
    }
    edits.push({ start: statement.type.getStart(source), end: statement.type.getEnd(), text });
  }

  let text = source.text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  return text;
}
