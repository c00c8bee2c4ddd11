/**
 * Builds the Sluice app the way `cdk synth` does (same feature flags from cdk.json),
 * by default without bundling: template assertions need no Lambda code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { projectRoot } from '../../cdk/sluice-function.js';
import { addSluiceStacks, type SluiceAppOptions } from '../../cdk/sluice-app.js';

const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

export interface TestAppOptions extends SluiceAppOptions {
  /** Run esbuild for every function (slow); otherwise `aws:cdk:bundling-stacks` is empty. */
  bundle?: boolean;
  outdir?: string;
}

export function sluiceApp({ bundle = false, outdir, ...options }: TestAppOptions = {}) {
  const app = new App({
    context: { ...cdkJson.context, ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) },
    ...(outdir ? { outdir } : {}),
  });
  return { app, ...addSluiceStacks(app, options) };
}

type Resource = { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string };

export const resourcesOf = (template: Template, type: string) =>
  template.findResources(type) as Record<string, Resource>;

export const logicalIdOf = (stack: { getLogicalId(element: CfnFunction): string }, fn: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(fn.node.defaultChild as CfnFunction);

/** Every IAM action granted to a function's role, with the resources of each statement. */
export function grantsOf(template: Template, functionLogicalId: string): Array<{ action: string; resource: unknown }> {
  const fn = template.toJSON().Resources[functionLogicalId] as Resource | undefined;
  const role = (fn?.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
  if (!role) throw new Error(`${functionLogicalId} has no role of this stack`);
  const statements = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties?.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: role })))
    .flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown; Effect: string }> }).Statement);
  return statements
    .filter((s) => s.Effect === 'Allow')
    .flatMap((s) => [s.Action].flat().map((action) => ({ action, resource: s.Resource })));
}
