/**
 * Builds the Sluice app the way `cdk synth` does (same feature flags from cdk.json),
 * by default without bundling: template assertions need no Lambda code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { projectRoot } from '../../cdk/function-code.js';
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

export interface Grant {
  action: string;
  resource: unknown;
  condition?: unknown;
}

type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };

/** Every IAM action granted to a role of the template (its attached policies and inline ones). */
export function roleGrants(template: Template, roleLogicalId: string): Grant[] {
  const role = template.toJSON().Resources[roleLogicalId] as Resource | undefined;
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleLogicalId} is no role of this stack`);
  const inline = ((role.Properties?.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }> | undefined) ?? []).flatMap(
    (p) => p.PolicyDocument.Statement,
  );
  const attached = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties?.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleLogicalId })))
    .flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
  return [...inline, ...attached]
    .filter((s) => s.Effect === 'Allow')
    .flatMap((s) =>
      [s.Action].flat().map((action) => ({ action, resource: s.Resource, ...(s.Condition ? { condition: s.Condition } : {}) })),
    );
}

/** The logical id of a function's role. */
export function roleOf(template: Template, functionLogicalId: string): string {
  const fn = template.toJSON().Resources[functionLogicalId] as Resource | undefined;
  const role = (fn?.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
  if (!role) throw new Error(`${functionLogicalId} has no role of this stack`);
  return role;
}

/** Every IAM action granted to a function's role, with the resources of each statement. */
export function grantsOf(template: Template, functionLogicalId: string): Grant[] {
  return roleGrants(template, roleOf(template, functionLogicalId));
}
