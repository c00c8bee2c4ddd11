/**
 * Reading a DynamoDB call's input in client middleware: marshalled (`{ S: … }`) or not, as the
 * document client hands it on.
 */

/** An attribute value as text. */
export const attributeText = (value: unknown): string => String((value as { S?: string } | undefined)?.S ?? value ?? '');

/** Whether a call's `Key` is the cursor item of `stream` (any group). */
export const keysCursorOf = (input: unknown, stream: string): boolean => {
  const key = (input as { Key?: { pk?: unknown; sk?: unknown } }).Key;
  return attributeText(key?.pk).startsWith('C#') && attributeText(key?.sk) === stream;
};
