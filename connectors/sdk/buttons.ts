/**
 * The ids hermes gives approval buttons: `approve:<approval id>` and `deny:<approval id>`. A plugin passes a
 * pressed id back unchanged through `host.press`; these helpers are for drivers and tests that need to find
 * the button to press.
 */
export function approvalButtonIds(approvalId: string): { approve: string; deny: string } {
  return { approve: `approve:${approvalId}`, deny: `deny:${approvalId}` };
}

/** The decision a button id stands for, or undefined for a button hermes did not make. */
export function parseApprovalButton(button: string): { approve: boolean; approvalId: string } | undefined {
  const match = /^(approve|deny):(.+)$/.exec(button);
  if (!match?.[2]) return undefined;
  return { approve: match[1] === "approve", approvalId: match[2] };
}
