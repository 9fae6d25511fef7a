/** Keys of the store rows the activities write, in one place so that retries find them. */
export const keys = {
  assistant: (step: number) => `step:${step}`,
  toolResult: (toolCallId: string) => `result:${toolCallId}`,
  usageEvent: (step: number) => `usage:${step}`,
  toolEvent: (toolCallId: string) => `tool:${toolCallId}`,
};
