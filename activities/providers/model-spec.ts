/** Model specifiers live in core (the workflow checks /model with them); re-exported for the providers. */
export * from '../../core/model-spec';
