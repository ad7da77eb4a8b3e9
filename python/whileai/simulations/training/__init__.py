"""Training-side tools: runs and their upload, the trainer callback, the hack monitor, logprobs."""
